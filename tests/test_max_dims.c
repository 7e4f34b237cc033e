/* Tensors of TN_MAX_DIMS dims (16 by default, a compile-time option up to PyTorch's 64):
   view, reshape, permute, sum over some and all dims, broadcast add, backward, printing;
   one dim more is refused with a clear error (creation, unsqueeze, view, broadcast).
   Holds for any TN_MAX_DIMS: build with -DTN_MAX_DIMS=64 to check the largest. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

#define D TN_MAX_DIMS
#define BIG (D < 12 ? D : 12)   /* dims of size 2 (the others 1): at most 4096 elements */

static void shape_of(int64_t *s) { for (int k = 0; k < D; k++) s[k] = k < BIG ? 2 : 1; }

TEST(max_dims_ops) {
    tn_scope_begin();
    int64_t s[D], rev[D];
    shape_of(s);
    const int64_t n = (int64_t)1 << BIG;
    tn_tensor *x = tn_reshape(tn_arange(0, (double)n, 1, TN_F64), s, D);
    CHECK_MSG(x && tn_ndim(x) == D, "%s", tn_last_error());
    /* view and back */
    tn_tensor *flat = tn_view(x, TN_SHAPE(n));
    CHECK(flat && tn_item(tn_sum(flat)) == (double)n * (n - 1) / 2);
    /* permute: reversed dims, strides reversed, element [i0, .., i_{D-1}] moves */
    for (int k = 0; k < D; k++) rev[k] = D - 1 - k;
    tn_tensor *p = tn_permute(x, rev, D);
    CHECK(p && tn_ndim(p) == D && tn_strides(p)[0] == tn_strides(x)[D - 1] && tn_strides(p)[D - 1] == tn_strides(x)[0]);
    tn_tensor *pc = tn_contiguous(p);
    /* x[1, 0, ..., 0] is n/2 (the outermost dim); in p it is at p[0, ..., 0, 1] */
    int64_t at = 0;
    for (int k = 0; k < D; k++) at += (k == D - 1 ? 1 : 0) * tn_strides(pc)[k];
    CHECK(((const double *)tn_data_ptr(pc))[at] == (double)(n / 2));
    /* sums: all, one dim, keepdim, negative dims */
    CHECK(tn_item(tn_sum(p)) == (double)n * (n - 1) / 2);
    tn_tensor *s0 = tn_sum_dims(x, TN_DIMS(0, -1), .keepdim = true);
    CHECK(s0 && tn_ndim(s0) == D && tn_shape(s0)[0] == 1 && tn_item(tn_sum(s0)) == (double)n * (n - 1) / 2);
    tn_tensor *s1 = tn_sum_dims(x, TN_DIMS(BIG - 1));
    CHECK(s1 && tn_ndim(s1) == D - 1);
    /* broadcast add: a [2] row against every dim-0 slice, and a D-dim against a 1-d */
    tn_tensor *row = tn_arange(0, 2, 1, TN_F64);
    int64_t rs[D];
    for (int k = 0; k < D; k++) rs[k] = 1;
    rs[0] = 2;
    tn_tensor *y = tn_add(x, tn_reshape(row, rs, D));
    CHECK(y && tn_ndim(y) == D && tn_item(tn_sum(y)) == (double)n * (n - 1) / 2 + (double)(n / 2));
    CHECK(tn_add(x, tn_ones(TN_SHAPE(1), TN_F64)) && tn_ndim(tn_add(x, tn_ones(TN_SHAPE(1), TN_F64))) == D);
    /* backward through permute, add and a product: d/dx sum((x + 1)^2) = 2 (x + 1) */
    tn_tensor *leaf = tn_clone(x);
    tn_requires_grad_(leaf, true);
    tn_tensor *z = tn_add_scalar(tn_permute(leaf, rev, D), 1);
    CHECK(tn_backward(tn_sum(tn_mul(z, z))) == 0);
    tn_tensor *g = tn_grad(leaf);
    CHECK(g && tn_ndim(g) == D && tn_item(tn_sum(tn_abs(tn_sub(g, tn_mul_scalar(tn_add_scalar(x, 1), 2))))) == 0);
    tn_scope_end();
}

TEST(max_dims_print) {
    tn_scope_begin();
    int64_t s[D];
    for (int k = 0; k < D; k++) s[k] = 1;
    char *str = tn_to_string(tn_full(s, D, 3, TN_F32));
    char want[3 * D + 32];
    int at = snprintf(want, sizeof want, "tensor(");
    for (int k = 0; k < D; k++) want[at++] = '[';
    at += snprintf(want + at, sizeof want - (size_t)at, "3.");
    for (int k = 0; k < D; k++) want[at++] = ']';
    snprintf(want + at, sizeof want - (size_t)at, ")");
    CHECK_MSG(str && !strcmp(str, want), "%s vs %s", str ? str : "NULL", want);
    free(str);
    tn_scope_end();
}

TEST(one_more_dim_refused) {
    tn_scope_begin();
    int64_t s[D + 1];
    for (int k = 0; k <= D; k++) s[k] = 1;
    char want[64];
    snprintf(want, sizeof want, "%d", D);   /* the messages name the limit */
    CHECK_ERR(tn_zeros(s, D + 1, TN_F32), want);
    tn_tensor *x = tn_zeros(s, D, TN_F32);
    CHECK(x != NULL);
    CHECK_ERR(tn_unsqueeze(x, 0), "cannot grow");
    CHECK_ERR(tn_view(x, s, D + 1), want);
    CHECK_ERR(tn_reshape(x, s, D + 1), want);
    int64_t out[D + 1];
    CHECK(tn_broadcast_shapes(s, D, s, D, out) == D);
    CHECK_ERR(tn_broadcast_shapes(s, D + 1, s, 1, out) >= 0, "must be in [0,");
    CHECK(tn_max_dims() == D);
    tn_scope_end();
}

int main(void) {
    RUN(max_dims_ops);
    RUN(max_dims_print);
    RUN(one_more_dim_refused);
    return tn_test_report();
}
