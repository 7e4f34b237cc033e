/* test_fidelity.c — issue 20, item 4: where the library differed from PyTorch. Gradients at
 * ties and at NaN (clamp with tensor bounds, maximum/minimum, relu, hardtanh, elu, selu,
 * max/min of a whole tensor), masked_fill's tensor value, all/any of uint8, arange/linspace/
 * logspace values bit for bit, index_select of a 0-d tensor, and the nodes of norm(x, 0) and
 * bernoulli. Expected values are PyTorch 1.13's (computed with torch on the same inputs;
 * elementwise backward values are those of its formulas, the scalar path of its kernels).
 * Inputs reach the ops as non-contiguous views. The Python side compares the same classes
 * against torch directly (bindings/python/tests/test_fidelity.py). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static const double E_CLAMP_X[8] = {1.0, 0.0, 3.0, 0.0, 0.0, 6.0, 7.0, 0.0};
static const double E_CLAMP_LO[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
static const double E_CLAMP_HI[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 8.0};
static const double E_CLAMPMIN_X[8] = {1.0, 0.0, 3.0, 0.0, 0.0, 6.0, 7.0, 0.0};
static const double E_CLAMPMIN_LO[8] = {0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 8.0};
static const double E_MAXIMUM_A[7] = {0.5, 2.0, 0.0, 4.0, 5.0, 6.0, 3.5};
static const double E_MAXIMUM_B[7] = {0.5, 0.0, 3.0, 4.0, 5.0, 6.0, 3.5};
static const double E_MINIMUM_A[7] = {0.5, 0.0, 3.0, 4.0, 5.0, 6.0, 3.5};
static const double E_MINIMUM_B[7] = {0.5, 2.0, 0.0, 4.0, 5.0, 6.0, 3.5};
static const double E_MAX2[4] = {0.0, 0.5, 0.0, 0.5};
static const double E_ARANGE_I64[5] = {0.0, 1.0, 2.0, 3.0, 4.0};
static const double E_ARANGE_I32[8] = {-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0};
static const double E_ARANGE_F32[16] = {0.10000000149011612, 0.30000001192092896, 0.5, 0.699999988079071, 0.8999999761581421, 1.100000023841858, 1.2999999523162842, 1.5, 1.7000000476837158, 1.9000000953674316, 2.1000001430511475, 2.299999952316284, 2.5, 2.700000047683716, 2.9000000953674316, 3.1000001430511475};
static const double E_LINSPACE_I64[33] = {-5.0, -1.0, 1.0, 4.0, 8.0, 11.0, 14.0, 17.0, 21.0, 24.0, 27.0, 30.0, 34.0, 37.0, 40.0, 43.0, 47.0, 50.0, 53.0, 56.0, 60.0, 63.0, 66.0, 69.0, 73.0, 76.0, 79.0, 82.0, 86.0, 89.0, 92.0, 95.0, 100.0};
static const double E_LINSPACE_I64B[7] = {0.0, 1.0, 3.0, 5.0, 6.0, 8.0, 10.0};
static const double E_LINSPACE_F32[7] = {-1.0, -0.6666666269302368, -0.3333333134651184, -2.9802322387695312e-08, 0.3333333134651184, 0.6666666269302368, 1.0};
static const double E_LINSPACE_F64[21] = {-3.7, -2.91, -2.12, -1.33, -0.54, 0.25, 1.04, 1.83, 2.62, 3.41, 4.2, 4.99, 5.779999999999999, 6.569999999999999, 7.359999999999999, 8.149999999999999, 8.94, 9.73, 10.52, 11.309999999999999, 12.1};
static const double E_LOGSPACE_I64[7] = {1.0, 3.0, 10.0, 31.0, 100.0, 316.0, 1000.0};
static const double E_LOGSPACE_F32[9] = {0.08163265138864517, 0.15272070467472076, 0.2857142984867096, 0.5345224738121033, 1.0, 1.8708287477493286, 3.5, 6.547900199890137, 12.25};
static const double E_RELU[7] = {1.0, 2.0, 0.0, 0.0, 0.0, 6.0, 7.0};
static const double E_HARDTANH[7] = {1.0, 2.0, 0.0, 4.0, 0.0, 0.0, 7.0};
static const double E_ELU[7] = {1.0, 2.0, 0.7725468264600288, 2.8, 2.122857308994217, 6.0, 7.0};
static const double E_SELU[7] = {1.0507009873554805, 2.101401974710961, 1.940305809104442, 7.0323973633895065, 5.331705765222527, 6.304205924132883, 7.354906911488364};
static const double E_MAX[7] = {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
static const double E_MIN[7] = {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};

/* ---- helpers ---- */
/* v as a float64 tensor that is a non-contiguous view (column 0 of an [n, 2] buffer) */
static tn_tensor *strided(const double *v, int64_t n, bool requires_grad) {
    tn_tensor *buf = tn_zeros(TN_SHAPE(n, 2), TN_F64);
    double *d = (double *)tn_data_ptr(buf);
    for (int64_t i = 0; i < n; i++) d[2 * i] = v[i];
    tn_tensor *t = tn_select(buf, 1, 0);
    if (requires_grad) { t = tn_detach(t); tn_requires_grad_(t, true); }
    return t;
}
static void check_vals_(tn_tensor *t, const double *want, int64_t n, double tol, const char *what, int line) {
    if (!t) { fail_at(line, "%s: NULL (%s)", what, tn_last_error()); return; }
    if (tn_numel(t) != n) { fail_at(line, "%s: %lld elements, expected %lld", what, (long long)tn_numel(t), (long long)n); return; }
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_F64));
    const double *got = (const double *)tn_data_ptr(c);
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])) || (got[i] != got[i] && want[i] != want[i]))) {
            fail_at(line, "%s[%lld] = %.17g, expected %.17g", what, (long long)i, got[i], want[i]);
            return;
        }
    tn_test_passed++;
}
#define CHECK_VALS(t, want, tol) check_vals_((t), (want), (int64_t)(sizeof(want) / sizeof(double)), (tol), #t, __LINE__)
#define N_OF(a) ((int64_t)(sizeof(a) / sizeof(double)))
static const double W8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
/* backward of sum(r * (1, 2, 3, ...)) */
static void weighted_backward(tn_tensor *r) { tn_backward(tn_sum(tn_mul(r, strided(W8, tn_numel(r), false)))); }

TEST(clamp_tensor_bounds_gradients) {
    tn_scope_begin();
    const double xv[8] = {1, 2, 3, NAN, 0.5, 4, 2, 2}, lov[8] = {1, 3, 2, 0, NAN, 1, 2, 3}, hiv[8] = {3, 3, 3, 1, 1, 4, 2, 1};
    tn_tensor *x = strided(xv, 8, true), *lo = strided(lov, 8, true), *hi = strided(hiv, 8, true);
    tn_tensor *r = tn_clamp_tensor(x, lo, hi);
    CHECK(r && strcmp(tn_grad_fn_name(r), "ClampBackward0") == 0);
    weighted_backward(r);
    CHECK_VALS(tn_grad(x), E_CLAMP_X, 0);   /* ties go to x; NaN x gets 0; min > max: all to max */
    CHECK_VALS(tn_grad(lo), E_CLAMP_LO, 0);
    CHECK_VALS(tn_grad(hi), E_CLAMP_HI, 0);
    tn_tensor *x2 = strided(xv, 8, true), *lo2 = strided(lov, 8, true);
    weighted_backward(tn_clamp_tensor(x2, lo2, NULL));
    CHECK_VALS(tn_grad(x2), E_CLAMPMIN_X, 0);
    CHECK_VALS(tn_grad(lo2), E_CLAMPMIN_LO, 0);
    CHECK_ERR(tn_clamp_tensor(x2, NULL, NULL), "at least one");
    tn_scope_end();
}

/* away from ties, gradcheck and gradgradcheck (broadcast bounds) */
static tn_tensor *clamp3(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_clamp_tensor(in[0], in[1], in[2]); }
TEST(clamp_tensor_gradcheck) {
    tn_scope_begin();
    tn_tensor *x = tn_detach(tn_contiguous(tn_transpose(tn_randn(TN_SHAPE(4, 3), TN_F64), 0, 1)));
    tn_requires_grad_(x, true);
    tn_tensor *lo = tn_sub_scalar(tn_rand(TN_SHAPE(1, 4), TN_F64), 1), *hi = tn_add_scalar(tn_rand(TN_SHAPE(3, 1), TN_F64), 0.2);
    tn_requires_grad_(lo, true);
    tn_requires_grad_(hi, true);
    tn_tensor *in[3] = {x, lo, hi};
    CHECK(tn_gradcheck(clamp3, in, 3, NULL, .atol = 1e-6, .rtol = 1e-4));
    CHECK(tn_gradgradcheck(clamp3, in, 3, NULL, .atol = 1e-6, .rtol = 1e-4));
    tn_scope_end();
}

TEST(maximum_minimum_nan_and_ties) {
    tn_scope_begin();
    const double av[7] = {1, 2, 3, NAN, 5, NAN, -1}, bv[7] = {1, 1, 4, 0, NAN, NAN, -1};
    tn_tensor *a = strided(av, 7, true), *b = strided(bv, 7, true);
    weighted_backward(tn_maximum(a, b));
    CHECK_VALS(tn_grad(a), E_MAXIMUM_A, 0);   /* ties split; a NaN on either side gives g to both */
    CHECK_VALS(tn_grad(b), E_MAXIMUM_B, 0);
    tn_tensor *a2 = strided(av, 7, true), *b2 = strided(bv, 7, true);
    weighted_backward(tn_minimum(a2, b2));
    CHECK_VALS(tn_grad(a2), E_MINIMUM_A, 0);
    CHECK_VALS(tn_grad(b2), E_MINIMUM_B, 0);
    tn_scope_end();
}

TEST(activation_gradients_at_nan) {
    tn_scope_begin();
    const double v[7] = {NAN, 1, -1, 0, -0.5, 1.5, 0.5};
    tn_tensor *x;
    x = strided(v, 7, true); weighted_backward(tn_relu(x)); CHECK_VALS(tn_grad(x), E_RELU, 0);
    x = strided(v, 7, true); weighted_backward(tn_hardtanh(x, .min_val = -0.5, .max_val = 1.5)); CHECK_VALS(tn_grad(x), E_HARDTANH, 0);
    x = strided(v, 7, true); weighted_backward(tn_elu(x, .alpha = 0.7)); CHECK_VALS(tn_grad(x), E_ELU, 1e-15);
    x = strided(v, 7, true); weighted_backward(tn_selu(x)); CHECK_VALS(tn_grad(x), E_SELU, 1e-15);
    x = strided(v, 7, true); tn_backward(tn_max(x)); CHECK_VALS(tn_grad(x), E_MAX, 0);   /* all to the NaN */
    x = strided(v, 7, true); tn_backward(tn_min(x)); CHECK_VALS(tn_grad(x), E_MIN, 0);
    const double v2[4] = {3, NAN, 1, NAN};
    x = strided(v2, 4, true); tn_backward(tn_max(x)); CHECK_VALS(tn_grad(x), E_MAX2, 0); /* spread over the NaNs */
    /* recording (create_graph) takes the same rules: relu's and hardtanh's derivative at NaN is 1 */
    x = strided(v, 7, true);
    tn_tensor *g = NULL, *r = tn_sum(tn_relu(x));
    CHECK(tn_autograd_grad(&r, 1, &x, 1, NULL, &g, .create_graph = true) == 0);
    const double relu_d[7] = {1, 1, 0, 0, 0, 1, 1}, ht_d[7] = {1, 1, 0, 1, 0, 0, 1};
    CHECK_VALS(g, relu_d, 0);
    r = tn_sum(tn_hardtanh(x, .min_val = -0.5, .max_val = 1.5));
    CHECK(tn_autograd_grad(&r, 1, &x, 1, NULL, &g, .create_graph = true) == 0);
    CHECK_VALS(g, ht_d, 0);
    tn_scope_end();
}

TEST(masked_fill_tensor_value) {
    tn_scope_begin();
    const double xv[6] = {1, 2, 3, 4, 5, 6};
    tn_tensor *x = strided(xv, 6, true);
    tn_tensor *v = tn_scalar_tensor(2.5, TN_F64);
    tn_requires_grad_(v, true);
    const bool mv[3] = {true, false, true};
    tn_tensor *mask = tn_from_data(mv, TN_SHAPE(3), TN_BOOL);   /* broadcast over the rows */
    tn_tensor *r = tn_masked_fill_tensor(tn_reshape(x, TN_SHAPE(2, 3)), mask, v);
    CHECK(r && strcmp(tn_grad_fn_name(r), "MaskedFillBackward1") == 0);
    weighted_backward(tn_reshape(r, TN_SHAPE(6)));
    const double want_v[1] = {1 + 3 + 4 + 6}, want_x[6] = {0, 2, 0, 0, 5, 0}, want_r[6] = {2.5, 2, 2.5, 2.5, 5, 2.5};
    CHECK_VALS(tn_grad(v), want_v, 0);
    CHECK_VALS(tn_grad(x), want_x, 0);
    CHECK_VALS(r, want_r, 0);
    CHECK_ERR(tn_masked_fill_tensor(x, mask, tn_ones(TN_SHAPE(1), TN_F64)), "0-dimensional value tensor");
    tn_scope_end();
}

TEST(all_any_uint8) {
    tn_scope_begin();
    const uint8_t d[6] = {0, 1, 2, 3, 0, 1};
    tn_tensor *u = tn_from_data(d, TN_SHAPE(2, 3), TN_U8);
    tn_tensor *a = tn_all(u), *b = tn_any_dim(u, 1), *c = tn_all(tn_ne_scalar(u, 0));
    CHECK(a && tn_get_dtype(a) == TN_U8 && tn_item(a) == 0);
    CHECK(b && tn_get_dtype(b) == TN_U8 && tn_item(tn_select(b, 0, 1)) == 1);
    CHECK(c && tn_get_dtype(c) == TN_BOOL);
    tn_scope_end();
}

TEST(range_values_exact) {
    tn_scope_begin();
    CHECK_VALS(tn_arange(0, 5, 1.5, TN_I64), E_ARANGE_I64, 0);      /* the step truncates to 1 first */
    CHECK_VALS(tn_arange(-3.2, 5, 1.1, TN_I32), E_ARANGE_I32, 0);
    CHECK_VALS(tn_arange(0.1, 3.3, 0.2, TN_F32), E_ARANGE_F32, 0);
    CHECK_ERR(tn_arange(0.5, 5, 0.7, TN_I64), "step must be nonzero");
    CHECK_VALS(tn_linspace(-5, 100, 33, TN_I64), E_LINSPACE_I64, 0);
    CHECK_VALS(tn_linspace(0.5, 10.7, 7, TN_I64), E_LINSPACE_I64B, 0);
    CHECK_VALS(tn_linspace(-1, 1, 7, TN_F32), E_LINSPACE_F32, 0);   /* the middle is -2^-25, not 0 */
    CHECK_VALS(tn_linspace(-3.7, 12.1, 21, TN_F64), E_LINSPACE_F64, 0);
    CHECK_VALS(tn_logspace(0, 3, 7, TN_I64), E_LOGSPACE_I64, 0);
    CHECK_VALS(tn_logspace(-2, 2, 9, TN_F32, .base = 3.5), E_LOGSPACE_F32, 0);
    CHECK_ERR(tn_linspace(0, 1000, 5, TN_U8), "without overflow");
    CHECK_ERR(tn_linspace(0, 1, 5, TN_BOOL), "not implemented");
    tn_scope_end();
}

TEST(index_select_zero_dim) {
    tn_scope_begin();
    tn_tensor *s = tn_scalar_tensor(3.5, TN_F64);
    tn_requires_grad_(s, true);
    const int64_t i0[1] = {0}, i1[1] = {1};
    tn_tensor *r = tn_index_select(s, 0, tn_from_data(i0, TN_SHAPE(1), TN_I64));
    CHECK(r && tn_ndim(r) == 0 && tn_item(r) == 3.5);
    tn_backward(tn_mul_scalar(r, 3));
    CHECK(tn_grad(s) && tn_item(tn_grad(s)) == 3);
    CHECK_ERR(tn_index_select(s, 0, tn_from_data(i1, TN_SHAPE(1), TN_I64)), "out of");
    tn_scope_end();
}

TEST(zero_gradient_nodes) {
    tn_scope_begin();
    const double xv[4] = {1, 0, INFINITY, -2};
    tn_tensor *x = strided(xv, 4, true);
    tn_tensor *n0 = tn_norm(x, .p = 0);
    CHECK(n0 && tn_item(n0) == 3 && tn_grad_fn_name(n0) && strcmp(tn_grad_fn_name(n0), "NormBackward1") == 0);
    tn_backward(n0);
    CHECK(tn_grad(x) == NULL);   /* PyTorch's gradient of norm(x, 0) is undefined */
    const double pv[4] = {0, 1, 1, 0};
    tn_tensor *p = strided(pv, 4, true);
    tn_tensor *b = tn_bernoulli(p, NULL);
    CHECK_VALS(b, pv, 0);
    CHECK(b && tn_grad_fn_name(b) && strcmp(tn_grad_fn_name(b), "BernoulliBackward0") == 0);
    tn_backward(tn_sum(b));
    const double zeros[4] = {0, 0, 0, 0};
    CHECK_VALS(tn_grad(p), zeros, 0);
    tn_no_grad_begin();
    CHECK(tn_grad_fn_name(tn_bernoulli(p, NULL)) == NULL);
    tn_no_grad_end();
    tn_scope_end();
}

int main(void) {
    tn_manual_seed(4);
    RUN(clamp_tensor_bounds_gradients);
    RUN(clamp_tensor_gradcheck);
    RUN(maximum_minimum_nan_and_ties);
    RUN(activation_gradients_at_nan);
    RUN(masked_fill_tensor_value);
    RUN(all_any_uint8);
    RUN(range_values_exact);
    RUN(index_select_zero_dim);
    RUN(zero_gradient_nodes);
    return tn_test_report();
}
