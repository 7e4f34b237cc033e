/* Issue 20's fidelity fixes, with the values PyTorch 1.13 gives (the Python twins in
   bindings/python/tests/test_nn_int_i20.py compare against torch itself):
   nn ops on integer inputs (conv/bilinear in the dtype, wrapping; transposed/dilated conv
   and local_response_norm int64 only; the float-scalar losses give the default dtype);
   sort/argsort's order of equal values (PyTorch's std::sort order, and the _stable forms);
   torch.fill and isreal; torch.gradient; torch.histogram. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <math.h>
#include <string.h>

/* t's values as int64 equal want[0..n), and t has dtype dt */
static bool ivals(tn_tensor *t, tn_dtype dt, const int64_t *want, int64_t n) {
    if (!t || t->dtype != dt || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_I64));
    if (!c) return false;
    const int64_t *p = (const int64_t *)tn_data_ptr(c);
    for (int64_t i = 0; i < n; i++) if (p[i] != want[i]) return false;
    return true;
}
/* t's values as double are within 1e-6 (relative) of want[0..n), and t has dtype dt */
static bool fvals(tn_tensor *t, tn_dtype dt, const double *want, int64_t n) {
    if (!t || t->dtype != dt || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_F64));
    if (!c) return false;
    const double *p = (const double *)tn_data_ptr(c);
    for (int64_t i = 0; i < n; i++) if (!(fabs(p[i] - want[i]) <= 1e-6 * (1 + fabs(want[i])))) return false;
    return true;
}
static tn_tensor *ints(tn_dtype dt, const int64_t *v, const int64_t *shape, int nd) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i];
    return tn_reshape(tn_to_dtype(tn_from_data(v, &n, 1, TN_I64), dt), shape, nd);
}

TEST(conv_integer_values) {
    tn_scope_begin();
    /* int64: [1 2 3 4] * [1 -1 2] + 5 -> [10, 12] */
    tn_tensor *x = ints(TN_I64, (const int64_t[]){1, 2, 3, 4}, TN_SHAPE(1, 1, 4)), *w = ints(TN_I64, (const int64_t[]){1, -1, 2}, TN_SHAPE(1, 1, 3));
    tn_tensor *b = ints(TN_I64, (const int64_t[]){5}, TN_SHAPE(1));
    CHECK(ivals(tn_conv1d(x, w, b), TN_I64, (const int64_t[]){10, 12}, 2));
    /* every integer dtype keeps its dtype; int8 wraps as PyTorch's kernel: 100 * 3 = 300 -> 44 */
    CHECK(ivals(tn_conv1d(ints(TN_I8, (const int64_t[]){100}, TN_SHAPE(1, 1, 1)), ints(TN_I8, (const int64_t[]){3}, TN_SHAPE(1, 1, 1)), NULL), TN_I8,
                (const int64_t[]){44}, 1));
    CHECK(ivals(tn_conv1d(tn_to_dtype(x, TN_I32), tn_to_dtype(w, TN_I32), NULL), TN_I32, (const int64_t[]){5, 7}, 2));
    CHECK(ivals(tn_conv1d(tn_to_dtype(x, TN_U8), tn_to_dtype(tn_abs(w), TN_U8), NULL), TN_U8, (const int64_t[]){9, 13}, 2));
    /* 2-d and 3-d: a 2x2 kernel of ones sums each window */
    tn_tensor *x2 = tn_reshape(tn_arange(0, 9, 1, TN_I16), TN_SHAPE(1, 1, 3, 3));
    CHECK(ivals(tn_conv2d(x2, tn_ones(TN_SHAPE(1, 1, 2, 2), TN_I16), NULL), TN_I16, (const int64_t[]){8, 12, 20, 24}, 4));
    tn_tensor *x3 = tn_reshape(tn_arange(0, 8, 1, TN_I64), TN_SHAPE(1, 1, 2, 2, 2));
    CHECK(ivals(tn_conv3d(x3, tn_ones(TN_SHAPE(1, 1, 2, 2, 2), TN_I64), NULL), TN_I64, (const int64_t[]){28}, 1));
    /* transposed, int64: [1 2] with [1 1] -> [1 3 2] */
    CHECK(ivals(tn_conv_transpose1d(ints(TN_I64, (const int64_t[]){1, 2}, TN_SHAPE(1, 1, 2)), tn_ones(TN_SHAPE(1, 1, 2), TN_I64), NULL), TN_I64,
                (const int64_t[]){1, 3, 2}, 3));
    CHECK(ivals(tn_conv_transpose3d(tn_ones(TN_SHAPE(1, 1, 1, 1, 2), TN_I64), tn_ones(TN_SHAPE(1, 1, 1, 1, 2), TN_I64), NULL), TN_I64,
                (const int64_t[]){1, 2, 1}, 3));
    /* dilated, int64: taps 0 and 2 */
    CHECK(ivals(tn_conv1d(x, tn_ones(TN_SHAPE(1, 1, 2), TN_I64), NULL, .dilation = 2), TN_I64, (const int64_t[]){4, 6}, 2));
    tn_scope_end();
}

TEST(conv_integer_errors) {
    tn_scope_begin();
    tn_tensor *x8 = tn_ones(TN_SHAPE(1, 1, 4), TN_I8), *w8 = tn_ones(TN_SHAPE(1, 1, 2), TN_I8);
    /* PyTorch's CPU has no int8 transposed or dilated convolution */
    CHECK_ERR(tn_conv_transpose1d(x8, w8, NULL), "tn_conv_transpose1d: input must be a floating dtype or int64, got int8");
    CHECK_ERR(tn_conv_transpose2d(tn_ones(TN_SHAPE(1, 1, 2, 2), TN_I32), tn_ones(TN_SHAPE(1, 1, 2, 2), TN_I32), NULL), "transposed convolution has no int32 kernel");
    CHECK_ERR(tn_conv_transpose3d(tn_ones(TN_SHAPE(1, 1, 1, 1, 2), TN_I16), tn_ones(TN_SHAPE(1, 1, 1, 1, 2), TN_I16), NULL), "tn_conv_transpose3d");
    CHECK_ERR(tn_conv1d(x8, w8, NULL, .dilation = 2), "dilated convolution has no int8 kernel");
    CHECK_ERR(tn_conv3d(tn_ones(TN_SHAPE(1, 1, 3, 3, 3), TN_U8), tn_ones(TN_SHAPE(1, 1, 2, 2, 2), TN_U8), NULL, .dilation = 2), "dilated convolution");
    /* dtypes must agree, bool is refused */
    CHECK_ERR(tn_conv1d(x8, tn_ones(TN_SHAPE(1, 1, 2), TN_I64), NULL), "tn_conv1d: input (int8) and weight (int64) must have the same dtype");
    CHECK_ERR(tn_conv1d(x8, w8, tn_ones(TN_SHAPE(1), TN_F32)), "tn_conv1d: input (int8) and bias (float32) must have the same dtype");
    CHECK_ERR(tn_conv1d(tn_ones(TN_SHAPE(1, 1, 4), TN_BOOL), tn_ones(TN_SHAPE(1, 1, 2), TN_BOOL), NULL), "got bool");
    /* sums float64 cannot hold exactly are refused, not rounded */
    CHECK_ERR(tn_conv1d(tn_full(TN_SHAPE(1, 1, 4), 1099511627776.0, TN_I64), tn_full(TN_SHAPE(1, 1, 2), 1048576.0, TN_I64), NULL), "2^53");
    tn_scope_end();
}

TEST(bilinear_integer) {
    tn_scope_begin();
    /* y = x1 W x2 + b: [1 2] [[1 0 1], [0 1 1]] = [1 2 3], dot [1 1 1] = 6, + 3 = 9 */
    tn_tensor *x1 = ints(TN_I64, (const int64_t[]){1, 2}, TN_SHAPE(1, 2)), *x2 = tn_ones(TN_SHAPE(1, 3), TN_I64);
    tn_tensor *w = ints(TN_I64, (const int64_t[]){1, 0, 1, 0, 1, 1}, TN_SHAPE(1, 2, 3)), *b = ints(TN_I64, (const int64_t[]){3}, TN_SHAPE(1));
    CHECK(ivals(tn_bilinear(x1, x2, w, b), TN_I64, (const int64_t[]){9}, 1));
    /* int8 wraps: 10 * 2 * 10 = 200 -> -56 */
    CHECK(ivals(tn_bilinear(tn_full(TN_SHAPE(1), 10, TN_I8), tn_full(TN_SHAPE(1), 10, TN_I8), tn_full(TN_SHAPE(1, 1, 1), 2, TN_I8), NULL), TN_I8,
                (const int64_t[]){-56}, 1));
    CHECK_ERR(tn_bilinear(x1, tn_to_dtype(x2, TN_I32), w, b), "tn_bilinear: input (int64) and input2 (int32) must have the same dtype");
    CHECK_ERR(tn_bilinear(x1, x2, tn_to_dtype(w, TN_F32), b), "tn_bilinear: input (int64) and weight (float32) must have the same dtype");
    tn_scope_end();
}

TEST(lrn_integer) {
    tn_scope_begin();
    /* PyTorch's int64 avg_pool truncates: (0 + 9 + 4) / 3 -> 4, so 3 / 4 = 0.75 */
    tn_tensor *x = ints(TN_I64, (const int64_t[]){3, 2, 5, 1}, TN_SHAPE(1, 4, 1));
    CHECK(fvals(tn_local_response_norm(x, 3, .alpha = 1, .beta = 1, .k = 0), TN_F32, (const double[]){0.75, 2.0 / 12, 0.5, 0.125}, 4));
    CHECK(fvals(tn_local_response_norm(tn_reshape(x, TN_SHAPE(1, 4, 1, 1)), 3, .alpha = 1, .beta = 1, .k = 0), TN_F32, (const double[]){0.75, 2.0 / 12, 0.5, 0.125}, 4));
    CHECK_ERR(tn_local_response_norm(tn_to_dtype(x, TN_I32), 3), "tn_local_response_norm: input must be a floating dtype, got int32");
    CHECK_ERR(tn_local_response_norm(tn_to_dtype(x, TN_I8), 3), "got int8");
    tn_scope_end();
}

TEST(losses_integer_default_dtype) {
    tn_scope_begin();
    tn_tensor *a = ints(TN_I64, (const int64_t[]){3, 1}, TN_SHAPE(2)), *c = ints(TN_I64, (const int64_t[]){1, 1}, TN_SHAPE(2));
    tn_tensor *y = ints(TN_I64, (const int64_t[]){-1, 1}, TN_SHAPE(2));
    /* max(0, -y (a - c) + margin): an integral margin still makes it the default dtype */
    CHECK(fvals(tn_margin_ranking_loss(a, c, y, .reduction = TN_REDUCTION_NONE), TN_F32, (const double[]){2, 0}, 2));
    CHECK(fvals(tn_margin_ranking_loss(a, c, y, .margin = 1), TN_F32, (const double[]){2}, 1));
    tn_set_default_dtype(TN_F64);
    CHECK(fvals(tn_margin_ranking_loss(a, c, y, .margin = 1, .reduction = TN_REDUCTION_SUM), TN_F64, (const double[]){4}, 1));
    tn_set_default_dtype(TN_F32);
    /* ||a - c + eps||: eps = 0 too */
    tn_tensor *p = ints(TN_I8, (const int64_t[]){3, 4}, TN_SHAPE(1, 2)), *z = tn_zeros(TN_SHAPE(1, 2), TN_I8);
    CHECK(fvals(tn_pairwise_distance(p, z, .eps = 0), TN_F32, (const double[]){5}, 1));
    CHECK(fvals(tn_triplet_margin_loss(p, z, p, .eps = 0, .margin = 0.5), TN_F32, (const double[]){5.5}, 1));
    CHECK(fvals(tn_poisson_nll_loss(a, c), TN_F32, (const double[]){(exp(3.0) - 3 + exp(1.0) - 1) / 2}, 1));
    CHECK(fvals(tn_cosine_embedding_loss(tn_reshape(p, TN_SHAPE(1, 2)), tn_reshape(p, TN_SHAPE(1, 2)), tn_ones(TN_SHAPE(1), TN_I64)), TN_F32, (const double[]){0}, 1));
    CHECK_ERR(tn_pairwise_distance(tn_ones(TN_SHAPE(2), TN_BOOL), tn_ones(TN_SHAPE(2), TN_BOOL)), "tn_pairwise_distance");
    tn_scope_end();
}

/* equal values: PyTorch's CPU sort(stable=False) is std::sort's order (here 20 values of
   0, 1, 2: past the 16-element insertion runs), stable=True the input order */
TEST(sort_ties_as_pytorch) {
    tn_scope_begin();
    int64_t v[20];
    for (int i = 0; i < 20; i++) v[i] = i * 7 % 3;
    tn_tensor *x = ints(TN_I64, v, TN_SHAPE(20)), *idx = NULL;
    static const int64_t asc[20] = {18, 3, 15, 6, 12, 9, 0, 10, 19, 16, 13, 7, 4, 1, 11, 8, 14, 5, 17, 2};
    static const int64_t desc[20] = {2, 17, 5, 14, 8, 11, 10, 19, 16, 13, 7, 4, 1, 0, 9, 12, 6, 15, 3, 18};
    static const int64_t stable[20] = {0, 3, 6, 9, 12, 15, 18, 1, 4, 7, 10, 13, 16, 19, 2, 5, 8, 11, 14, 17};
    CHECK(tn_sort(x, &idx, .dim = 0) && ivals(idx, TN_I64, asc, 20));
    CHECK(ivals(tn_argsort(x, .dim = -1, .descending = true), TN_I64, desc, 20));
    CHECK(tn_sort(x, &idx, .dim = 0, .stable = true) && ivals(idx, TN_I64, stable, 20));
    CHECK(ivals(tn_argsort(x, .dim = 0, .stable = true), TN_I64, stable, 20));
    /* the values agree either way; int8 and float too */
    static const int64_t sorted[20] = {0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
    CHECK(ivals(tn_sort(tn_to_dtype(x, TN_I8), &idx, .dim = 0), TN_I8, sorted, 20) && ivals(idx, TN_I64, asc, 20));
    CHECK(ivals(tn_argsort(tn_to_dtype(x, TN_F32), .dim = 0), TN_I64, asc, 20));
    CHECK_ERR(tn_sort(x, NULL, .dim = 1, .stable = true), "tn_sort");
    CHECK_ERR(tn_argsort(x, .dim = -2, .stable = true), "tn_argsort");
    tn_scope_end();
}

/* torch.fill: x's shape and dtype, no gradient to x, the summed gradient to a 0-d value */
static tn_tensor *f_fill(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return tn_mul(tn_fill_tensor(in[0], in[1]), in[0]);   /* x * fill(x, v): d/dx = v, d/dv = sum(x) */
}
TEST(fill_isreal) {
    tn_scope_begin();
    tn_tensor *x = tn_transpose(tn_randn(TN_SHAPE(3, 2), TN_F64), 0, 1);
    tn_tensor *r = tn_fill(x, 2.5);
    CHECK(fvals(r, TN_F64, (const double[]){2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, 6) && r->ndim == 2 && r->shape[0] == 2 && r->shape[1] == 3);
    CHECK(ivals(tn_fill(tn_zeros(TN_SHAPE(2), TN_I64), 2.7), TN_I64, (const int64_t[]){2, 2}, 2));   /* truncated, as PyTorch */
    CHECK(ivals(tn_fill(tn_zeros(TN_SHAPE(2), TN_BOOL), 2), TN_BOOL, (const int64_t[]){1, 1}, 2));
    CHECK(ivals(tn_fill_tensor(tn_zeros(NULL, 0, TN_I8), tn_scalar_tensor(-3.9, TN_F32)), TN_I8, (const int64_t[]){-3}, 1));
    CHECK(tn_numel(tn_fill(tn_zeros(TN_SHAPE(0, 4), TN_F32), 1)) == 0);
    /* gradients: x gets none (FillBackward0), v the sum (FillBackward1) */
    tn_tensor *xl = tn_randn(TN_SHAPE(4), TN_F64), *v = tn_scalar_tensor(1.5, TN_F64);
    tn_requires_grad_(xl, true);
    tn_requires_grad_(v, true);
    tn_tensor *y = tn_fill(xl, 3);
    CHECK(y && tn_grad_fn_name(y) && !strcmp(tn_grad_fn_name(y), "FillBackward0"));
    CHECK(tn_backward(tn_sum(y)) == 0 && tn_grad(xl) && tn_item(tn_sum(tn_abs(tn_grad(xl)))) == 0);
    y = tn_fill_tensor(xl, v);
    CHECK(y && !strcmp(tn_grad_fn_name(y), "FillBackward1"));
    CHECK(tn_backward(tn_sum(y)) == 0 && tn_grad(v) && tn_item(tn_grad(v)) == 4);
    tn_tensor *in[2] = {xl, v};
    CHECK(tn_gradcheck(f_fill, in, 2, NULL));
    CHECK(tn_gradgradcheck(f_fill, in, 2, NULL));
    CHECK_ERR(tn_fill_tensor(x, tn_ones(TN_SHAPE(2), TN_F64)), "tn_fill_tensor: fill only supports 0-dimension value tensor but got tensor with 1 dimensions");
    CHECK_ERR(tn_fill(tn_zeros(TN_SHAPE(2), TN_U8), 300), "tn_fill");
    CHECK(tn_fill(NULL, 1) == NULL && tn_fill_tensor(x, NULL) == NULL);
    /* isreal: real dtypes are all true, NaN too */
    CHECK(ivals(tn_isreal(tn_full(TN_SHAPE(2, 2), NAN, TN_F32)), TN_BOOL, (const int64_t[]){1, 1, 1, 1}, 4));
    CHECK(ivals(tn_isreal(tn_zeros(TN_SHAPE(3), TN_I16)), TN_BOOL, (const int64_t[]){1, 1, 1}, 3));
    CHECK(tn_isreal(tn_zeros(NULL, 0, TN_U8))->ndim == 0 && tn_numel(tn_isreal(tn_zeros(TN_SHAPE(0, 3), TN_F64))) == 0);
    tn_scope_end();
}

/* torch.gradient: numpy's formulas, values of PyTorch 1.13 */
static tn_tensor *f_gradient(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *out[TN_MAX_DIMS];
    return tn_gradient(in[0], out, .spacing = TN_DOUBLES(0.5, 2), .edge_order = 2) == 2 ? tn_add(out[0], tn_mul(out[1], out[1])) : NULL;
}
TEST(gradient_values) {
    tn_scope_begin();
    tn_tensor *out[TN_MAX_DIMS];
    /* x = [1, 4, 9, 16, 25]: central (x[i+1] - x[i-1]) / 2, one-sided ends */
    tn_tensor *x = ints(TN_I64, (const int64_t[]){1, 4, 9, 16, 25}, TN_SHAPE(5));
    CHECK(tn_gradient(x, out) == 1 && fvals(out[0], TN_F32, (const double[]){3, 4, 6, 8, 9}, 5));
    CHECK(tn_gradient(x, out, .edge_order = 2, .spacing = TN_DOUBLES(2)) == 1 && fvals(out[0], TN_F32, (const double[]){1, 2, 3, 4, 5}, 5));
    /* coordinates [0, 1, 3, 4, 6] (uneven), float64: torch.gradient(x, spacing=(c,)) */
    tn_tensor *c = tn_from_data((const double[]){0, 1, 3, 4, 6}, TN_SHAPE(5), TN_F64);
    tn_tensor *cs[1] = {c};
    tn_gradient_fn_opts go = TN_DEFAULTS(tn_gradient_fn_opts);
    CHECK(tn_gradient_coords(tn_to_dtype(x, TN_F64), cs, 1, out, go) == 1 &&
          fvals(out[0], TN_F64, (const double[]){3, 2.8333333333333335, 5.499999999999999, 6.166666666666666, 4.5}, 5));
    /* two dims, one spacing each; .dim picks and orders them */
    tn_tensor *m = tn_reshape(tn_arange(0, 6, 1, TN_F64), TN_SHAPE(2, 3));
    CHECK(tn_gradient(m, out, .spacing = TN_DOUBLES(1, 0.5)) == 2 && fvals(out[0], TN_F64, (const double[]){3, 3, 3, 3, 3, 3}, 6) &&
          fvals(out[1], TN_F64, (const double[]){2, 2, 2, 2, 2, 2}, 6));
    CHECK(tn_gradient(m, out, .dim = TN_INTS(-1)) == 1 && fvals(out[0], TN_F64, (const double[]){1, 1, 1, 1, 1, 1}, 6));
    CHECK(tn_gradient_str(m, out, "spacing=(2.0,), dim=(1, 0)") == 2 && fvals(out[0], TN_F64, (const double[]){0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 6));
    CHECK(tn_gradient(tn_scalar_tensor(1, TN_F32), out) == 0);
    /* differentiable (composites): gradcheck and gradgradcheck in float64 */
    tn_tensor *xl = tn_randn(TN_SHAPE(4, 3), TN_F64);
    tn_requires_grad_(xl, true);
    CHECK(tn_gradcheck(f_gradient, &xl, 1, NULL));
    CHECK(tn_gradgradcheck(f_gradient, &xl, 1, NULL));
    /* PyTorch's errors */
    CHECK_ERR(tn_gradient(m, out, .edge_order = 3) >= 0, "torch.gradient only supports edge_order=1 and edge_order=2.");
    CHECK_ERR(tn_gradient(m, out, .edge_order = 2) >= 0, "torch.gradient expected each dimension size to be at least edge_order+1");
    CHECK_ERR(tn_gradient(m, out, .dim = TN_INTS(0, -2)) >= 0, "dim 0 appears multiple times in the list of dims");
    CHECK_ERR(tn_gradient(m, out, .dim = TN_INTS(2)) >= 0, "tn_gradient");
    CHECK_ERR(tn_gradient(m, out, .spacing = TN_DOUBLES(1, 2, 3)) >= 0, "spacing argument of length 3 and a dim argument of length 2");
    CHECK_ERR(tn_gradient_coords(m, cs, 1, out, go) >= 0, "spacing argument of length 1 and a dim argument of length 2");
    CHECK_ERR(tn_gradient_str(m, out, "order=1") >= 0, "tn_gradient: unknown option 'order'");
    tn_clear_error();
    CHECK(tn_gradient(NULL, out) == -1);
    tn_scope_end();
}

/* torch.histogram: numpy's bins, values of PyTorch 1.13 */
TEST(histogram_values) {
    tn_scope_begin();
    tn_tensor *x = tn_from_data((const double[]){0.5, 1.5, 1.5, 2.5, 3.0, -1.0}, TN_SHAPE(6), TN_F64), *edges = NULL;
    const double r03[2] = {0, 3};
    tn_histogram_fn_opts o = TN_DEFAULTS(tn_histogram_fn_opts);
    memcpy(o.range, r03, sizeof r03);
    CHECK(fvals(tn_histogram_opts(x, 3, &edges, o), TN_F64, (const double[]){1, 2, 2}, 3) && fvals(edges, TN_F64, (const double[]){0, 1, 2, 3}, 4));
    o.weight = tn_from_data((const double[]){1, 2, 3, 4, 5, 6}, TN_SHAPE(6), TN_F64);
    o.density = true;
    CHECK(fvals(tn_histogram_opts(x, 3, NULL, o), TN_F64, (const double[]){1.0 / 15, 5.0 / 15, 9.0 / 15}, 3));
    const tn_histogram_fn_opts o0 = TN_DEFAULTS(tn_histogram_fn_opts);
    CHECK(fvals(tn_histogram_edges_opts(x, tn_from_data((const double[]){-1, 1, 3}, TN_SHAPE(3), TN_F64), &edges, o0), TN_F64,
                (const double[]){2, 4}, 2));
    CHECK(fvals(tn_histogram(x, 2, &edges), TN_F64, (const double[]){2, 4}, 2) && fvals(edges, TN_F64, (const double[]){-1, 1, 3}, 3));
    CHECK(fvals(tn_histogram_str(tn_to_dtype(x, TN_F32), 1, &edges, "range=(0.0, 1.0)"), TN_F32, (const double[]){1}, 1));
    CHECK(fvals(tn_histogram(tn_full(TN_SHAPE(2), NAN, TN_F64), 1, NULL, .range = {0, 1}), TN_F64, (const double[]){0}, 1));   /* NaN not counted (2025) */
    CHECK_ERR(tn_histogram(x, 0, NULL), "bins must be > 0, but got 0");
    CHECK_ERR(tn_histogram(x, 2, NULL, .range = {2, 1}), "min should not exceed max");
    CHECK_ERR(tn_histogram(tn_full(TN_SHAPE(2), NAN, TN_F64), 2, NULL), "is not finite");
    CHECK_ERR(tn_histogram(tn_ones(TN_SHAPE(2), TN_I64), 2, NULL), "should have the same dtype");
    CHECK_ERR(tn_histogram_edges_opts(x, tn_ones(TN_SHAPE(2, 2), TN_F64), NULL, o0), "bins tensor should have one dimension");
    CHECK_ERR(tn_histogram(x, 2, NULL, .weight = tn_ones(TN_SHAPE(2), TN_F64)), "same shape as the input");
    tn_scope_end();
}

int main(void) {
    RUN(conv_integer_values);
    RUN(conv_integer_errors);
    RUN(bilinear_integer);
    RUN(lrn_integer);
    RUN(losses_integer_default_dtype);
    RUN(sort_ties_as_pytorch);
    RUN(fill_isreal);
    RUN(gradient_values);
    RUN(histogram_values);
    return tn_test_report();
}
