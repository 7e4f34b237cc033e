/* complex64/complex128, the pieces after the first increment (issue 26 item 1): the inverse
   trigonometric and hyperbolic functions, sinc and silu against C99 <complex.h> (whose
   casin/cacos/catan/... are Kahan's formulas too) on random non-contiguous, broadcast, 0-d
   and empty inputs and at signed zeros on the branch cuts; cumprod; randn/rand/normal_/
   uniform_ (the real view's draw); lerp/addcdiv; complex convolutions against the four real
   ones; tn_gradcheck and tn_gradgradcheck in complex128 (real and imaginary parts perturbed)
   through those ops; the ops PyTorch refuses on complex refuse; the sum dtype keyword's
   complex names. bindings/python/tests/test_complex_more.py compares the same against torch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <complex.h>
#include <stdlib.h>

static double complex at(tn_tensor *t, int64_t i) {
    tn_tensor *c = t ? tn_contiguous(tn_to_dtype(tn_reshape(t, TN_SHAPE(-1)), TN_C128)) : NULL;
    if (!c) return NAN;
    const double *p = (const double *)tn_data_ptr(c);
    return CMPLX(p[2 * i], p[2 * i + 1]);   /* (re + I * im would turn a -0 real part into +0) */
}
static bool cclose(double complex a, double complex b, double tol) {
    double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    bool re = (ar != ar && br != br) || ar == br || fabs(ar - br) <= tol * (1 + fabs(br));
    bool im = (ai != ai && bi != bi) || ai == bi || fabs(ai - bi) <= tol * (1 + fabs(bi));
    return re && im;
}
/* random complex values of scale s (fixed seed) as a tensor of dtype */
static tn_tensor *crand(const int64_t *shape, int nd, tn_dtype dtype, unsigned seed, double s) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    double *v = (double *)malloc((size_t)(2 * n + 2) * sizeof(double));
    srand(seed);
    for (int64_t i = 0; i < 2 * n; i++) v[i] = s * (2.0 * rand() / RAND_MAX - 1.0);
    int64_t sh[TN_MAX_DIMS];
    for (int d = 0; d < nd; d++) sh[d] = shape[d];
    sh[nd] = 2;
    tn_tensor *t = tn_to_dtype(tn_view_as_complex(tn_from_data(v, sh, nd + 1, TN_F64)), dtype);
    free(v);
    return t;
}

typedef tn_tensor *(*unary_fn)(tn_tensor *);
#define PI 3.14159265358979323846
static double complex c_sinc(double complex z) { return z == 0 ? 1 : csin(PI * z) / (PI * z); }
static double complex c_silu(double complex z) { return z / (1 + cexp(-z)); }

TEST(inverse_functions_against_c99) {
    const struct { const char *name; unary_fn f; double complex (*ref)(double complex); } ops[] = {
        {"asin", tn_asin, casin}, {"acos", tn_acos, cacos}, {"atan", tn_atan, catan}, {"asinh", tn_asinh, casinh},
        {"acosh", tn_acosh, cacosh}, {"atanh", tn_atanh, catanh}, {"sinc", tn_sinc, c_sinc}, {"silu", tn_silu, c_silu}};
    for (int di = 0; di < 2; di++) {
        const tn_dtype d = di ? TN_C128 : TN_C64;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            tn_scope_begin();
            /* scales from 0.3 to 30 (both sides of the unit circle), every other column: non-contiguous */
            for (int sc = 0; sc < 3; sc++) {
                /* complex64 sinc rounds pi z to float first, as ATen: sin(pi z) grows like e^|Im pi z| */
                const double tol = di ? 1e-12 : ops[k].f == tn_sinc && sc == 2 ? 1e-3 : 2e-5;
                tn_tensor *x = tn_narrow(crand(TN_SHAPE(6, 14), d, 100 + (unsigned)k, sc == 0 ? 0.3 : sc == 1 ? 2.0 : 30.0), 1, 1, 7);
                x = tn_transpose(x, 0, 1);
                tn_tensor *y = ops[k].f(x);
                bool ok = y && tn_get_dtype(y) == d && tn_numel(y) == 42;
                tn_tensor *xc = tn_contiguous(x);
                for (int64_t i = 0; ok && i < 42; i++) ok = cclose(at(y, i), ops[k].ref(at(xc, i)), tol);
                CHECK_MSG(ok, "%s %s scale %d", ops[k].name, tn_dtype_name(d), sc);
            }
            /* 0-d and empty keep their shapes */
            tn_tensor *z0 = ops[k].f(tn_scalar_complex(0.25, -0.5));
            CHECK_MSG(z0 && tn_ndim(z0) == 0 && cclose(at(z0, 0), ops[k].ref(0.25 - 0.5 * I), 1e-12), "%s 0-d", ops[k].name);
            tn_tensor *e = ops[k].f(tn_zeros(TN_SHAPE(0, 3), d));
            CHECK_MSG(e && tn_numel(e) == 0 && tn_ndim(e) == 2 && tn_get_dtype(e) == d, "%s empty", ops[k].name);
            tn_scope_end();
        }
    }
    /* the branch cuts: the sign of a zero part picks the side, as std::asin/... (C99 Annex G) */
    const double complex cut[] = {CMPLX(1.5, 0.0), CMPLX(1.5, -0.0), CMPLX(-1.5, 0.0), CMPLX(-1.5, -0.0),
                                  CMPLX(0.0, 2.0), CMPLX(-0.0, 2.0), CMPLX(0.0, -2.0), CMPLX(-0.0, -2.0), CMPLX(0.5, 0.0), 0};
    tn_scope_begin();
    double buf[20];
    for (int i = 0; i < 10; i++) { buf[2 * i] = creal(cut[i]); buf[2 * i + 1] = cimag(cut[i]); }
    tn_tensor *x = tn_view_as_complex(tn_from_data(buf, TN_SHAPE(10, 2), TN_F64));
    for (size_t k = 0; k < 6; k++) {
        if (ops[k].f == tn_atan) continue;   /* (PyTorch's vectorised atan puts the imaginary-axis cut on the other side) */
        tn_tensor *y = ops[k].f(x);
        bool ok = y != NULL;
        for (int i = 0; ok && i < 10; i++) {
            const double complex r = ops[k].ref(cut[i]), g = at(y, i);
            ok = cclose(g, r, 1e-14) && signbit(creal(g)) == signbit(creal(r)) && signbit(cimag(g)) == signbit(cimag(r));
            if (!ok) fprintf(stderr, "  %s(%g%+gi): %g%+gi, C99 %g%+gi\n", ops[k].name, creal(cut[i]), cimag(cut[i]), creal(g), cimag(g), creal(r), cimag(r));
        }
        CHECK_MSG(ok, "%s on the branch cuts", ops[k].name);
    }
    tn_scope_end();
}

TEST(cumprod_values) {
    for (int di = 0; di < 2; di++) {
        const tn_dtype d = di ? TN_C128 : TN_C64;
        tn_scope_begin();
        tn_tensor *x = tn_transpose(crand(TN_SHAPE(5, 4), d, 7, 1.5), 0, 1);   /* [4, 5], strided */
        for (int dim = -2; dim < 2; dim++) {
            tn_tensor *y = tn_cumprod(x, dim);
            const int dd = dim < 0 ? dim + 2 : dim;
            bool ok = y && tn_get_dtype(y) == d;
            for (int i = 0; ok && i < 4; i++)
                for (int j = 0; ok && j < 5; j++) {
                    double complex p = 1;
                    for (int k = 0; k <= (dd ? j : i); k++) p *= at(tn_select(tn_select(x, 0, dd ? i : k), 0, dd ? k : j), 0);
                    ok = cclose(at(y, i * 5 + j), p, di ? 1e-13 : 1e-5);
                }
            CHECK_MSG(ok, "cumprod %s dim %d", tn_dtype_name(d), dim);
        }
        tn_tensor *z = tn_cumprod(tn_scalar_complex(2, 3), 0);
        CHECK(z && tn_ndim(z) == 0 && cclose(at(z, 0), 2 + 3 * I, 1e-12));
        CHECK(tn_numel(tn_cumprod(tn_zeros(TN_SHAPE(0, 3), d), 0)) == 0);
        CHECK_ERR(tn_cumprod(x, 2), "dim");
        tn_scope_end();
    }
}

TEST(random_complex) {
    tn_scope_begin();
    /* PyTorch's: the real view [.., 2] drawn as the part dtype, normal's std over sqrt(2) */
    for (int di = 0; di < 2; di++) {
        const tn_dtype d = di ? TN_C128 : TN_C64, r = di ? TN_F64 : TN_F32;
        tn_manual_seed(11);
        tn_tensor *z = tn_randn(TN_SHAPE(3, 8), d);
        tn_manual_seed(11);
        tn_tensor *w = tn_mul_scalar(tn_randn(TN_SHAPE(3, 8, 2), r), 1 / sqrt(2.0));
        CHECK(z && tn_get_dtype(z) == d && tn_allclose(tn_view_as_real(z), w, .rtol = 1e-6, .atol = 0));
        tn_manual_seed(12);
        tn_tensor *u = tn_rand(TN_SHAPE(20), d);
        tn_manual_seed(12);
        CHECK(u && tn_equal(tn_view_as_real(u), tn_rand(TN_SHAPE(20, 2), r)));
        tn_tensor *e = tn_empty(TN_SHAPE(4, 6), d);
        tn_manual_seed(13);
        CHECK(tn_uniform_(e, .from = -2, .to = 3) == e);
        tn_manual_seed(13);
        CHECK(tn_equal(tn_view_as_real(e), tn_uniform_(tn_empty(TN_SHAPE(4, 6, 2), r), .from = -2, .to = 3)));
        tn_manual_seed(14);
        CHECK(tn_normal_(e, .mean = 1, .std = 2) == e);
        tn_manual_seed(14);
        CHECK(tn_allclose(tn_view_as_real(e), tn_normal_(tn_empty(TN_SHAPE(4, 6, 2), r), .mean = 1, .std = 2 / sqrt(2.0)), .rtol = 1e-6, .atol = 0));
        CHECK(tn_numel(tn_randn(TN_SHAPE(0, 3), d)) == 0 && tn_get_dtype(tn_randn_like(z)) == d);
    }
    /* moments: each part N(0, 1/2), the modulus squared's mean 1 */
    tn_manual_seed(5);
    tn_tensor *big = tn_randn(TN_SHAPE(200000), TN_C128);
    const double vr = tn_item(tn_mean(tn_square(tn_real(big)))), vi = tn_item(tn_mean(tn_square(tn_imag(big))));
    CHECK_MSG(fabs(vr - 0.5) < 0.01 && fabs(vi - 0.5) < 0.01, "part variances %g %g", vr, vi);
    /* the samplers PyTorch has no complex kernel for refuse (their draws once filled complex tensors) */
    CHECK_ERR(tn_geometric_(tn_empty(TN_SHAPE(2), TN_C64), 0.5), "geometric_cpu");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(2), TN_C64), .to = 5), "check_random_bounds");
    CHECK_ERR(tn_randint(0, 5, TN_SHAPE(3), TN_C128, NULL), "check_random_bounds");
    CHECK_ERR(tn_randperm(3, TN_C64, NULL), "\"randperm\" not implemented for 'ComplexFloat'");
    CHECK_ERR(tn_bernoulli_p(TN_SHAPE(3), 0.5, TN_C64, NULL), "bernoulli_scalar_cpu_");
    CHECK_ERR(tn_uniform_(tn_empty(TN_SHAPE(2), TN_C64), .from = 3), "from");
    CHECK_ERR(tn_normal_(tn_empty(TN_SHAPE(2), TN_C64), .std = -1), "std");
    tn_scope_end();
}

TEST(lerp_addcdiv_conv) {
    tn_scope_begin();
    tn_tensor *a = crand(TN_SHAPE(3, 4), TN_C128, 21, 2), *b = crand(TN_SHAPE(4), TN_C128, 22, 2), *w = crand(TN_SHAPE(3, 1), TN_C128, 23, 1);
    tn_tensor *l = tn_lerp(a, b, w), *q = tn_addcdiv(a, b, w, .value = 0.5);
    bool ok = l && q;
    for (int i = 0; ok && i < 3; i++)
        for (int j = 0; ok && j < 4; j++) {
            double complex A = at(a, i * 4 + j), B = at(b, j), W = at(w, i);
            ok = cclose(at(l, i * 4 + j), A + W * (B - A), 1e-13) && cclose(at(q, i * 4 + j), A + 0.5 * B / W, 1e-13);
        }
    CHECK(ok);
    CHECK(cclose(at(tn_lerp_scalar(a, tn_unsqueeze(b, 0), 0.75), 5), at(a, 5) + 0.75 * (at(b, 1) - at(a, 5)), 1e-13));
    /* complex convolution = the four real ones of the parts */
    tn_tensor *x = crand(TN_SHAPE(2, 3, 7), TN_C128, 24, 1), *k = crand(TN_SHAPE(4, 3, 3), TN_C128, 25, 1), *bias = crand(TN_SHAPE(4), TN_C128, 26, 1);
    tn_tensor *y = tn_conv1d(x, k, bias, .padding = 1, .stride = 2);
    tn_tensor *xr = tn_real(x), *xi = tn_imag(x), *kr = tn_real(k), *ki = tn_imag(k);
    tn_tensor *re = tn_add(tn_sub(tn_conv1d(xr, kr, NULL, .padding = 1, .stride = 2), tn_conv1d(xi, ki, NULL, .padding = 1, .stride = 2)), tn_reshape(tn_real(bias), TN_SHAPE(4, 1)));
    tn_tensor *im = tn_add(tn_add(tn_conv1d(xr, ki, NULL, .padding = 1, .stride = 2), tn_conv1d(xi, kr, NULL, .padding = 1, .stride = 2)), tn_reshape(tn_imag(bias), TN_SHAPE(4, 1)));
    CHECK(y && tn_get_dtype(y) == TN_C128 && tn_allclose(y, tn_complex(re, im), .rtol = 1e-12, .atol = 1e-12));
    tn_tensor *y2 = tn_conv2d(tn_reshape(x, TN_SHAPE(2, 3, 7, 1)), tn_reshape(k, TN_SHAPE(4, 3, 3, 1)), bias, .padding_hw = {1, 0}, .stride_hw = {2, 1});
    CHECK(y2 && tn_allclose(tn_squeeze_dim(y2, 3), y, .rtol = 1e-12, .atol = 1e-12));
    CHECK_ERR(tn_conv1d(x, kr, NULL), "should be the same");
    CHECK_ERR(tn_conv1d(xr, k, NULL), "should be the same");
    /* the other layers refuse complex (they once read it as an integer dtype) */
    CHECK_ERR(tn_max_pool1d(x, 2), "floating");
    CHECK_ERR(tn_layer_norm(x, TN_SHAPE(7)), "floating");
    tn_scope_end();
}

/* gradcheck functions: inputs[0..] complex128 */
typedef struct ufn { unary_fn f; } ufn;   /* (a function pointer passed as data) */
static tn_tensor *g_unary(tn_tensor *const *in, int n, void *u) { (void)n; return ((ufn *)u)->f(in[0]); }
static tn_tensor *g_cumprod(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_cumprod(in[0], 1); }
static tn_tensor *g_prod(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_prod_dims(in[0], TN_DIMS(0)); }
static tn_tensor *g_lerp(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_lerp(in[0], in[1], in[2]); }
static tn_tensor *g_addcdiv(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_addcdiv(in[0], in[1], in[2], .value = 0.7); }
static tn_tensor *g_addmm(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_addmm(in[0], in[1], in[2], .beta = 0.5, .alpha = 2); }
static tn_tensor *g_conv(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_conv1d(in[0], in[1], in[2], .padding = 1); }
static tn_tensor *g_abs(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_abs(tn_mul(in[0], in[1])); }   /* complex in, real out */
static tn_tensor *g_complex(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_exp(tn_complex(in[0], in[1])); }   /* real in, complex out */
static tn_tensor *g_conj_mul(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_mul(tn_conj(in[0]), in[0]); }   /* not holomorphic */
static tn_tensor *g_detached(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_mul(in[0], tn_detach(in[0])); }   /* a wrong gradient */

static tn_tensor *leaf(const int64_t *shape, int nd, unsigned seed, double s) {
    tn_tensor *t = tn_contiguous(crand(shape, nd, TN_C128, seed, s));
    if (t) tn_requires_grad_(t, true);
    return t;
}

TEST(gradcheck_complex128) {
    tn_scope_begin();
    const struct { const char *name; unary_fn f; double s; } un[] = {
        {"asin", tn_asin, 0.6}, {"acos", tn_acos, 0.6}, {"atan", tn_atan, 0.6}, {"asinh", tn_asinh, 0.6}, {"acosh", tn_acosh, 3},
        {"atanh", tn_atanh, 0.6}, {"sinc", tn_sinc, 1}, {"tan", tn_tan, 0.6}, {"rsqrt", tn_rsqrt, 2}};
    for (size_t k = 0; k < sizeof un / sizeof un[0]; k++) {
        tn_tensor *x = leaf(TN_SHAPE(2, 3), 40 + (unsigned)k, un[k].s);
        if (un[k].f == tn_acosh) x = tn_detach(tn_add_scalar(x, 4)), tn_requires_grad_(x, true);   /* away from the cut (-inf, 1] */
        if (un[k].f == tn_rsqrt) x = tn_detach(tn_add_scalar(x, 3)), tn_requires_grad_(x, true);
        ufn f = {un[k].f};
        CHECK_MSG(tn_gradcheck(g_unary, &x, 1, &f, .atol = 1e-6, .rtol = 1e-4), "gradcheck %s: %s", un[k].name, tn_last_error());
        CHECK_MSG(tn_gradgradcheck(g_unary, &x, 1, &f, .rtol = 1e-4), "gradgradcheck %s: %s", un[k].name, tn_last_error());
    }
    tn_tensor *x = leaf(TN_SHAPE(2, 4), 60, 1.5);
    CHECK_ERR(tn_silu(x), "silu does not support automatic differentiation");   /* PyTorch has no complex formula */
    CHECK_MSG(tn_gradcheck(g_cumprod, &x, 1, NULL, .atol = 1e-6, .rtol = 1e-4) && tn_gradgradcheck(g_cumprod, &x, 1, NULL, .rtol = 1e-4), "cumprod: %s", tn_last_error());
    CHECK_MSG(tn_gradcheck(g_prod, &x, 1, NULL, .atol = 1e-6, .rtol = 1e-4), "prod: %s", tn_last_error());
    /* cumprod through a zero: PyTorch's quadratic formula (conjugated) */
    tn_tensor *xz = tn_contiguous(tn_detach(x));
    ((double *)tn_data_ptr(xz))[2] = ((double *)tn_data_ptr(xz))[3] = 0;
    tn_requires_grad_(xz, true);
    CHECK_MSG(tn_gradcheck(g_cumprod, &xz, 1, NULL, .atol = 1e-6, .rtol = 1e-4), "cumprod with a zero: %s", tn_last_error());
    tn_tensor *t3[3] = {leaf(TN_SHAPE(2, 3), 61, 1), leaf(TN_SHAPE(3), 62, 1), leaf(TN_SHAPE(2, 1), 63, 1)};
    CHECK_MSG(tn_gradcheck(g_lerp, t3, 3, NULL, .atol = 1e-6, .rtol = 1e-4) && tn_gradgradcheck(g_lerp, t3, 3, NULL, .rtol = 1e-4), "lerp: %s", tn_last_error());
    tn_tensor *d3[3] = {t3[0], t3[1], tn_detach(tn_add_scalar(t3[2], 2))};
    tn_requires_grad_(d3[2], true);
    CHECK_MSG(tn_gradcheck(g_addcdiv, d3, 3, NULL, .atol = 1e-6, .rtol = 1e-4) && tn_gradgradcheck(g_addcdiv, d3, 3, NULL, .rtol = 1e-4), "addcdiv: %s", tn_last_error());
    tn_tensor *m3[3] = {leaf(TN_SHAPE(2, 4), 64, 1), leaf(TN_SHAPE(2, 3), 65, 1), leaf(TN_SHAPE(3, 4), 66, 1)};
    CHECK_MSG(tn_gradcheck(g_addmm, m3, 3, NULL, .atol = 1e-6, .rtol = 1e-4) && tn_gradgradcheck(g_addmm, m3, 3, NULL, .rtol = 1e-4), "addmm: %s", tn_last_error());
    tn_tensor *c3[3] = {leaf(TN_SHAPE(1, 2, 5), 67, 1), leaf(TN_SHAPE(3, 2, 3), 68, 1), leaf(TN_SHAPE(3), 69, 1)};
    CHECK_MSG(tn_gradcheck(g_conv, c3, 3, NULL, .atol = 1e-6, .rtol = 1e-4), "conv1d: %s", tn_last_error());
    tn_tensor *p2[2] = {leaf(TN_SHAPE(3), 70, 1), leaf(TN_SHAPE(3), 71, 1)};
    CHECK_MSG(tn_gradcheck(g_abs, p2, 2, NULL, .atol = 1e-6, .rtol = 1e-4) && tn_gradgradcheck(g_abs, p2, 2, NULL, .rtol = 1e-4), "abs(a b): %s", tn_last_error());
    CHECK_MSG(tn_gradcheck(g_conj_mul, p2, 1, NULL, .atol = 1e-6, .rtol = 1e-4), "conj(z) z: %s", tn_last_error());
    tn_tensor *r2[2] = {tn_randn(TN_SHAPE(4), TN_F64), tn_randn(TN_SHAPE(4), TN_F64)};
    tn_requires_grad_(r2[0], true);
    tn_requires_grad_(r2[1], true);
    CHECK_MSG(tn_gradcheck(g_complex, r2, 2, NULL, .atol = 1e-6, .rtol = 1e-4) && tn_gradgradcheck(g_complex, r2, 2, NULL, .rtol = 1e-4), "exp(complex(a, b)): %s", tn_last_error());
    /* the check can fail: a detached factor's gradient is missing, in either part */
    CHECK(!tn_gradcheck(g_detached, p2, 1, NULL, .atol = 1e-6, .rtol = 1e-4));
    CHECK(strstr(tn_last_error(), "Jacobian mismatch") != NULL);
    tn_clear_error();
    /* a complex64 input is accepted (float precision: loose tolerances) */
    tn_tensor *x64 = tn_contiguous(tn_to_dtype(tn_detach(x), TN_C64));
    tn_requires_grad_(x64, true);
    ufn sinc = {tn_sinc};
    CHECK_MSG(tn_gradcheck(g_unary, &x64, 1, &sinc, .eps = 1e-3, .atol = 1e-2, .rtol = 1e-2), "complex64: %s", tn_last_error());
    tn_scope_end();
}

TEST(refusals) {
    tn_scope_begin();
    tn_tensor *x = crand(TN_SHAPE(5), TN_C64, 80, 1), *y = crand(TN_SHAPE(5), TN_C64, 81, 1);
    CHECK_ERR(tn_sort(x, NULL, .dim = 0), "");
    CHECK_ERR(tn_topk(x, 2, NULL), "");
    CHECK_ERR(tn_lt(x, y), "");
    CHECK_ERR(tn_ge(x, y), "");
    CHECK_ERR(tn_maximum(x, y), "");
    CHECK_ERR(tn_floor(x), "");
    CHECK_ERR(tn_ceil(x), "");
    CHECK_ERR(tn_round(x), "");
    CHECK_ERR(tn_clamp(x, .min = 0), "");
    CHECK_ERR(tn_sign(x), "torch.sgn");
    CHECK_ERR(tn_unique(x, NULL, NULL), "\"unique\" not implemented for 'ComplexFloat'");
    CHECK_ERR(tn_isin(x, y), "isin");
    CHECK_ERR(tn_nansum(x), "nansum does not support complex");
    CHECK_ERR(tn_isposinf(x), "isposinf does not support complex");
    CHECK_ERR(tn_isneginf(x), "isneginf does not support complex");
    CHECK_ERR(tn_deg2rad(x), "deg2rad is not supported for complex");
    CHECK_ERR(tn_rad2deg(x), "rad2deg is not supported for complex");
    CHECK_ERR(tn_log1p(x), "not implemented for 'ComplexFloat'");   /* 1.13 has no complex log1p/expm1/exp2 */
    CHECK_ERR(tn_expm1(x), "not implemented for 'ComplexFloat'");
    /* float_power: complex128 where either operand is complex */
    tn_tensor *fp = tn_float_power(x, y);
    CHECK(fp && tn_get_dtype(fp) == TN_C128 && cclose(at(fp, 1), cpow(at(x, 1), at(y, 1)), 1e-5));
    CHECK_ERR(tn_float_power_(x, y), "complex128");
    /* the sum dtype keyword names the complex dtypes */
    tn_tensor *s = tn_sum_dims_str(x, TN_DIMS(0), "dtype=complex128");
    CHECK(s && tn_get_dtype(s) == TN_C128 && cclose(at(s, 0), at(tn_sum(x), 0), 1e-6));
    tn_scope_end();
}

int main(void) {
    RUN(inverse_functions_against_c99);
    RUN(cumprod_values);
    RUN(random_complex);
    RUN(lerp_addcdiv_conv);
    RUN(gradcheck_complex128);
    RUN(refusals);
    return tn_test_report();
}
