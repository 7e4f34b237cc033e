/* test_special_dist.c — torch.special's functions and torch.distributions' samplers in C.
 *
 * Values against high-precision references (Python's decimal at 80 digits for the Bessel and Airy
 * values, where PyTorch 1.13 is off by up to 1e-6; PyTorch's elsewhere), the poles and infinities PyTorch 1.13 gives, gradcheck and
 * gradgradcheck of the differentiable ones, no gradient where PyTorch has none, the
 * samplers' determinism under the library's seed and their moments, and the errors. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#include <math.h>

static double at(tn_tensor *(*f)(tn_tensor *), double x) {
    tn_scope_begin();
    double r = tn_item(f(tn_scalar_tensor(x, TN_F64)));
    tn_scope_end();
    return r;
}
static double at2(tn_tensor *(*f)(tn_tensor *, tn_tensor *), double a, double b) {
    tn_scope_begin();
    double r = tn_item(f(tn_scalar_tensor(a, TN_F64), tn_scalar_tensor(b, TN_F64)));
    tn_scope_end();
    return r;
}
#define NEAR(got, want, rel) CHECK(fabs((got) - (want)) <= (rel) * fabs(want) + 1e-300)

TEST(values_against_references) {
    NEAR(at(tn_special_ndtr, -10), 7.6198530241605260659733432515993e-24, 1e-13);
    NEAR(at(tn_special_ndtr, 1.5), 0.93319279873114191050, 1e-15);
    NEAR(at(tn_special_log_ndtr, -40), -804.6084420137539, 1e-14);
    NEAR(at(tn_special_ndtri, 0.975), 1.9599639845400542355, 1e-14);
    NEAR(at(tn_special_ndtri, 1e-300), -37.0470962993612, 1e-13);
    NEAR(at(tn_special_erfcx, 30), 0.018795888861416751, 1e-14);
    NEAR(at(tn_special_erfcx, -2), 108.94090438997797, 1e-14);
    NEAR(at(tn_special_entr, 0.5), 0.34657359027997265471, 1e-15);
    NEAR(at(tn_special_bessel_j0, 10), -0.24593576445134835, 1e-14);
    NEAR(at(tn_special_bessel_j1, 2.5), 0.49709410246427405, 1e-14);
    NEAR(at(tn_special_bessel_y0, 1), 0.088256964215676957983, 1e-14);
    NEAR(at(tn_special_bessel_y1, 30), 0.08442557066174723, 1e-13);
    NEAR(at(tn_special_modified_bessel_k0, 1), 0.42102443824070833334, 1e-14);
    NEAR(at(tn_special_modified_bessel_k1, 5), 0.004044613445452163, 1e-13);
    NEAR(at(tn_special_scaled_modified_bessel_k0, 700), 0.04736236945461357, 1e-13);
    NEAR(at(tn_special_airy_ai, 0), 0.35502805388781723926, 1e-15);
    NEAR(at(tn_special_airy_ai, -5), 0.35076100902411433, 1e-13);
    NEAR(at(tn_special_airy_ai, 3), 0.0065911393574607191, 1e-13);
    NEAR(at(tn_special_spherical_bessel_j0, 2), sin(2.0) / 2, 1e-15);
    NEAR(at2(tn_special_zeta, 2, 1), 1.6449340668482264365, 1e-15);
    NEAR(at2(tn_special_gammainc, 3, 2), 0.3233235838169364, 1e-14);
    NEAR(at2(tn_special_gammaincc, 1e-300, 1e-300), 6.907755278982137e-298, 1e-12);
    NEAR(at2(tn_special_chebyshev_polynomial_t, 0.3, 5), 16 * pow(0.3, 5) - 20 * pow(0.3, 3) + 5 * 0.3, 1e-14);
    NEAR(at2(tn_special_hermite_polynomial_h, 0.7, 3), 8 * pow(0.7, 3) - 12 * 0.7, 1e-14);
    NEAR(at2(tn_special_legendre_polynomial_p, 0.4, 2), 0.5 * (3 * 0.16 - 1), 1e-14);
    NEAR(at2(tn_special_laguerre_polynomial_l, 2, 2), 0.5 * (4 - 8 + 2), 1e-14);
    NEAR(at2(tn_special_shifted_chebyshev_polynomial_t, 0.25, 2), 2 * 0.25 - 1, 1e-14);   /* T2(-0.5) = -0.5 */
}

TEST(edges_as_pytorch) {
    CHECK(at(tn_special_ndtri, 0) == -INFINITY && at(tn_special_ndtri, 1) == INFINITY && isnan(at(tn_special_ndtri, 1.5)));
    CHECK(at(tn_special_entr, 0) == 0 && at(tn_special_entr, -1) == -INFINITY);
    CHECK(at(tn_special_bessel_y0, 0) == -INFINITY && isnan(at(tn_special_bessel_y1, -1)));
    CHECK(isnan(at(tn_special_bessel_j0, INFINITY)));   /* PyTorch's, from cos(inf) */
    CHECK(at(tn_special_modified_bessel_k0, 0) == INFINITY && at(tn_special_scaled_modified_bessel_k1, INFINITY) == 0);
    CHECK(at2(tn_special_zeta, 1, 2) == INFINITY && isnan(at2(tn_special_zeta, 0.5, 2)) && at2(tn_special_zeta, 2, -1) == INFINITY);
    CHECK(at2(tn_special_gammainc, 0, 1) == 1 && at2(tn_special_gammainc, NAN, 0) == 0 && isnan(at2(tn_special_gammainc, -1, 1)));
    CHECK(at2(tn_special_chebyshev_polynomial_t, 0.5, -1) == 0 && at2(tn_special_chebyshev_polynomial_u, -1, 3) == -4);
}

static tn_tensor *f_ndtr(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_ndtr(x[0]); }
static tn_tensor *f_ndtri(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_ndtri(x[0]); }
static tn_tensor *f_log_ndtr(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_log_ndtr(tn_mul_scalar(x[0], 5)); }
static tn_tensor *f_erfcx(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_erfcx(tn_mul_scalar(x[0], 4)); }
static tn_tensor *f_entr(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_entr(x[0]); }
static tn_tensor *f_zeta(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_zeta(tn_scalar(3.0), tn_add_scalar(x[0], 1)); }
static tn_tensor *f_gammainc(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_gammainc(tn_scalar(2.5), tn_mul_scalar(x[0], 3)); }
static tn_tensor *f_gammaincc(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_special_gammaincc(tn_scalar(0.7), tn_mul_scalar(x[0], 3)); }

TEST(gradients) {
    tn_scope_begin();
    tn_manual_seed(3);
    const int64_t s[2] = {3, 4};
    tn_tensor *x = tn_add_scalar(tn_mul_scalar(tn_rand(s, 2, TN_F64), 0.8), 0.1);   /* (0.1, 0.9): every domain */
    tn_tensor *xt = tn_transpose(x, 0, 1);                                            /* non-contiguous */
    tn_requires_grad_(x, true);
    tn_gradcheck_fn fs[] = {f_ndtr, f_ndtri, f_log_ndtr, f_erfcx, f_entr, f_zeta, f_gammainc, f_gammaincc};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        CHECK(tn_gradcheck(fs[i], &x, 1, NULL, .atol = 1e-7, .rtol = 1e-5));
        CHECK(tn_gradgradcheck(fs[i], &x, 1, NULL, .atol = 1e-6, .rtol = 1e-4));
        tn_tensor *xc = tn_contiguous(xt);
        tn_requires_grad_(xc, true);
        CHECK(tn_gradcheck(fs[i], &xc, 1, NULL, .atol = 1e-7, .rtol = 1e-5));
    }
    /* no derivative in PyTorch: the result does not require grad */
    CHECK(!tn_requires_grad(tn_special_bessel_j0(x)) && !tn_requires_grad(tn_special_airy_ai(x)));
    CHECK(!tn_requires_grad(tn_special_chebyshev_polynomial_t(x, tn_scalar(3))));
    CHECK(tn_requires_grad(tn_special_ndtr(x)));
    /* zeta's and gammainc's first argument: PyTorch's "not implemented" at backward */
    tn_tensor *a = tn_add_scalar(tn_detach(x), 2);
    tn_requires_grad_(a, true);
    CHECK_ERR(tn_backward(tn_sum(tn_special_zeta(a, tn_ones_like(a)))) == 0, "derivative for 'zeta' is not implemented");
    CHECK_ERR(tn_backward(tn_sum(tn_special_gammainc(a, tn_ones_like(a)))) == 0, "igamma: input");
    tn_scope_end();
}

TEST(dtypes_and_errors) {
    tn_scope_begin();
    const int64_t s[1] = {3};
    tn_tensor *i = tn_arange(0, 3, 1, TN_I64);
    CHECK(tn_get_dtype(tn_special_ndtr(i)) == TN_F32);
    CHECK(tn_get_dtype(tn_special_zeta(i, i)) == TN_F32);
    CHECK(tn_get_dtype(tn_special_bessel_j0(tn_ones(s, 1, TN_F64))) == TN_F64);
    CHECK_ERR(tn_special_gammainc(i, i) != NULL, "igamma_cpu");
    CHECK_ERR(tn_special_zeta(tn_ones(s, 1, TN_F32), tn_ones((int64_t[]){2}, 1, TN_F32)) != NULL, "size");
    CHECK_ERR(tn_standard_gamma(i, NULL) != NULL, "floating");
    CHECK_ERR(tn_sample_dirichlet(tn_scalar_tensor(1, TN_F32), NULL) != NULL, "at least one dim");
    tn_tensor *z = tn_zeros((int64_t[]){0, 2}, 2, TN_F64);
    CHECK(tn_numel(tn_special_airy_ai(z)) == 0 && tn_numel(tn_standard_gamma(z, NULL)) == 0);
    tn_scope_end();
}

static double mean_of(tn_tensor *t) { return tn_item(tn_mean(tn_to_dtype(t, TN_F64))); }
static double var_of(tn_tensor *t) { return tn_item(tn_var(tn_to_dtype(t, TN_F64), .correction = 0)); }

TEST(samplers) {
    tn_scope_begin();
    const int64_t n[1] = {200000};
    const double alphas[] = {0.1, 1.0, 4.5, 300.0};
    for (int k = 0; k < 4; k++) {
        tn_manual_seed(11);
        tn_tensor *g = tn_standard_gamma(tn_full(n, 1, alphas[k], TN_F64), NULL);
        const double a = alphas[k], se = sqrt(a / n[0]);
        CHECK(fabs(mean_of(g) - a) < 5 * se);
        CHECK(fabs(var_of(g) - a) < 0.05 * a);
        CHECK(tn_item(tn_amin(g, NULL, 0)) > 0);
        tn_manual_seed(11);
        CHECK(tn_equal(g, tn_standard_gamma(tn_full(n, 1, alphas[k], TN_F64), NULL)));   /* the library's seed */
    }
    const double rates[] = {0.5, 7.0, 40.0, 1e4};
    for (int k = 0; k < 4; k++) {
        tn_tensor *p = tn_poisson(tn_full(n, 1, rates[k], TN_F64), NULL);
        CHECK(fabs(mean_of(p) - rates[k]) < 5 * sqrt(rates[k] / n[0]));
        CHECK(fabs(var_of(p) - rates[k]) < 0.05 * rates[k]);
        CHECK(tn_equal(p, tn_floor(p)));
    }
    tn_tensor *b = tn_binomial(tn_full(n, 1, 1000, TN_F64), tn_full(n, 1, 0.3, TN_F64), NULL);
    CHECK(fabs(mean_of(b) - 300) < 5 * sqrt(210.0 / n[0]) && fabs(var_of(b) - 210) < 10);
    CHECK(tn_item(tn_amax(b, NULL, 0)) <= 1000 && tn_equal(b, tn_floor(b)));
    tn_tensor *d = tn_sample_dirichlet(tn_full((int64_t[]){50000, 3}, 2, 2.0, TN_F64), NULL);
    int64_t last = -1;
    CHECK(tn_allclose(tn_sum_dims(d, &last, 1), tn_ones((int64_t[]){50000}, 1, TN_F64), .rtol = 1e-12, .atol = 1e-12));
    CHECK(fabs(mean_of(tn_select(d, 1, 0)) - 1.0 / 3) < 0.005);
    /* the implicit gradient: d/dalpha of E[x] is 1 */
    tn_tensor *al = tn_full((int64_t[]){1}, 1, 2.0, TN_F64);
    tn_requires_grad_(al, true);
    tn_manual_seed(12);
    tn_tensor *x = tn_standard_gamma(tn_expand(al, n, 1), NULL);
    CHECK(tn_backward(tn_mean(x)) == 0);
    CHECK(fabs(tn_item(tn_grad(al)) - 1) < 0.02);
    /* _standard_gamma_grad takes PyTorch's approximations, one point in each branch (Taylor
       in x, Rice near and away from alpha, the rational fit): torch's values */
    const double ga[] = {0.5, 20, 20, 20, 3, 3, 0.05}, gx[] = {0.3, 19, 5, 40, 2, 0.1, 1e-20};
    const double gref[] = {1.0098019827369256, 0.9827254818951642, 0.4658532955884762, 1.3979334994829276,
                           0.856564023915415, 0.12186533318881881, 9.110771373716225e-18};
    tn_tensor *gg = tn_standard_gamma_grad(tn_from_data(ga, (int64_t[]){7}, 1, TN_F64), tn_from_data(gx, (int64_t[]){7}, 1, TN_F64));
    for (int i = 0; i < 7; i++) NEAR(tn_item(tn_select(gg, 0, i)), gref[i], 1e-14);
    /* torch's edges: NaN in gives NaN, x = 0 gives 0, alpha = 0 or x = inf NaN */
    const double ea[] = {1, NAN, 2, 0, 2}, ex[] = {NAN, 1, 0, 1, INFINITY};
    tn_tensor *eg = tn_standard_gamma_grad(tn_from_data(ea, (int64_t[]){5}, 1, TN_F64), tn_from_data(ex, (int64_t[]){5}, 1, TN_F64));
    CHECK(isnan(tn_item(tn_select(eg, 0, 0))) && isnan(tn_item(tn_select(eg, 0, 1))) && tn_item(tn_select(eg, 0, 2)) == 0);
    CHECK(isnan(tn_item(tn_select(eg, 0, 3))) && isnan(tn_item(tn_select(eg, 0, 4))));
    tn_scope_end();
}

int main(void) {
    RUN(values_against_references);
    RUN(edges_as_pytorch);
    RUN(gradients);
    RUN(dtypes_and_errors);
    RUN(samplers);
    return tn_test_report();
}
