/* tests/test_opinfo_fixes.c — what PyTorch's OpInfo run (bindings/python/tests/test_opinfo.py)
 * found, checked in C: scatter_reduce(amin, include_self=False) on int64 (its identity,
 * INT64_MAX, is no double), and avg_pool2d's negative divisor_override (PyTorch refuses 0
 * only, and divides by the negative number). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#define SH(...) TN_SHAPE(__VA_ARGS__)

static const int64_t *I64(tn_tensor *t) {
    tn_tensor *c = t ? tn_contiguous(t) : NULL;
    return c && c->dtype == TN_I64 ? (const int64_t *)tn_data_ptr(c) : NULL;
}

TEST(test_scatter_reduce_amin_int64_without_self) {
    tn_scope_begin();
    const int64_t xv[] = {5, 6, 7, 8, 9, 10}, iv[] = {0, 0, 0, 1}, sv[] = {1, 2, 3, 4};
    tn_tensor *x = tn_from_data(xv, SH(3, 2), TN_I64), *idx = tn_from_data(iv, SH(2, 2), TN_I64);
    tn_tensor *src = tn_from_data(sv, SH(2, 2), TN_I64);
    /* torch: x.scatter_reduce(0, idx, src, 'amin', include_self=False) */
    const int64_t want_min[] = {1, 2, 7, 4, 9, 10}, want_max[] = {3, 2, 7, 4, 9, 10};
    const int64_t *r = I64(tn_scatter_reduce(x, 0, idx, src, "amin", .include_self = false));
    CHECK(r != NULL);
    for (int i = 0; r && i < 6; i++) CHECK_MSG(r[i] == want_min[i], "amin [%d]: %lld, want %lld", i, (long long)r[i], (long long)want_min[i]);
    r = I64(tn_scatter_reduce(x, 0, idx, src, "amax", .include_self = false));
    CHECK(r != NULL);
    for (int i = 0; r && i < 6; i++) CHECK_MSG(r[i] == want_max[i], "amax [%d]: %lld, want %lld", i, (long long)r[i], (long long)want_max[i]);
    /* the extremes themselves survive: INT64_MAX is amin's identity, not a value lost */
    const int64_t big[] = {INT64_MAX, INT64_MAX - 1};
    tn_tensor *bsrc = tn_from_data(big, SH(1, 2), TN_I64), *bidx = tn_zeros(SH(1, 2), TN_I64);
    r = I64(tn_scatter_reduce(tn_zeros(SH(1, 2), TN_I64), 0, bidx, bsrc, "amin", .include_self = false));
    CHECK(r && r[0] == INT64_MAX && r[1] == INT64_MAX - 1);
    tn_scope_end();
}

static tn_tensor *f_pool_neg(tn_tensor *const *in, int n, void *user) {
    (void)n, (void)user;
    return tn_avg_pool2d(in[0], 2, .stride = 1, .divisor_override = -3);
}

TEST(test_avg_pool_negative_divisor) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(SH(1, 1, 4, 4), TN_F64);
    tn_requires_grad_(x, true);
    tn_tensor *y = tn_avg_pool2d(x, 2, .divisor_override = -2);
    tn_tensor *s = tn_avg_pool2d(x, 2, .divisor_override = 1);   /* the window sums */
    CHECK(y && s);
    if (y && s) {
        tn_tensor *d = tn_sub(tn_mul_scalar(y, -2.0), s);
        CHECK_CLOSE(tn_item(tn_max(tn_abs(d))), 0.0, 1e-12);
        CHECK(tn_gradcheck(f_pool_neg, &x, 1, NULL));
    }
    CHECK_ERR(tn_avg_pool2d(x, 2, .divisor_override = 0), "divisor must be not zero");
    tn_scope_end();
}

int main(void) {
    tn_manual_seed(0);
    RUN(test_scatter_reduce_amin_int64_without_self);
    RUN(test_avg_pool_negative_divisor);
    return tn_test_report();
}
