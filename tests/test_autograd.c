/* test_autograd.c — the autograd engine of tensor.h against PyTorch's semantics.
 *
 *  1. tn_gradcheck + tn_gradgradcheck (float64, small inputs, non-contiguous inside the
 *     function) for every differentiable op, and for in-place ops under autograd.
 *  2. Engine semantics: leaves, requires_grad propagation, accumulation, retain_graph,
 *     create_graph, tn_autograd_grad, retain_grad, hooks, no_grad, detach, node names,
 *     backward errors.
 *  3. In-place ops on graphs: leaf errors, rebasing, version-counter errors, copy_,
 *     index_put_, masked_fill_.
 *  4. Memory: a 1000-step training loop stays flat; a 100,000-node chain.
 *  5. Edge cases: 0-d, empty, broadcast reduction of gradients, kinks and ties, float32.
 *  Also: tn_custom_op, anomaly mode, names and DOT dumps, grad mode per thread.
 *
 * Each test runs in a forked child (a crash or a LeakSanitizer report is one failed check)
 * and checks that every tensor it made is freed.
 *
 * Expected values come from PyTorch 1.13 (hard-coded; PyTorch is not needed to run). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdarg.h>
#include <stdlib.h>
#ifdef __unix__
#include <unistd.h>
#include <sys/wait.h>
#endif

/* ------------------------------------------------------------------------------------ */
/* helpers                                                                                 */
/* ------------------------------------------------------------------------------------ */

#define SH(...) TN_SHAPE(__VA_ARGS__)
/* a leaf that requires grad (t must be a tensor made without history) */
static tn_tensor *leaf(tn_tensor *t) {
    if (t && tn_requires_grad_(t, true)) return NULL;
    return t;
}
static tn_tensor *away0(tn_tensor *t) { return tn_add(t, tn_mul_scalar(tn_sign(t), 0.25)); } /* |x| >= 0.25 */
#define RN(...) leaf(tn_randn(SH(__VA_ARGS__), TN_F64))                                  /* N(0, 1) */
#define NZ(...) leaf(away0(tn_randn(SH(__VA_ARGS__), TN_F64)))                           /* away from 0 */
#define POS(...) leaf(tn_add_scalar(tn_rand(SH(__VA_ARGS__), TN_F64), 0.5))              /* [0.5, 1.5) */
#define RN0 leaf(tn_randn(NULL, 0, TN_F64))
#define NZ0 leaf(away0(tn_randn(NULL, 0, TN_F64)))
#define POS0 leaf(tn_add_scalar(tn_rand(NULL, 0, TN_F64), 0.5))
#define UNIT(...) leaf(tn_sub_scalar(tn_mul_scalar(tn_rand(SH(__VA_ARGS__), TN_F64), 1.6), 0.8)) /* (-0.8, 0.8) */
static tn_tensor *mk(const double *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_F64); }
static tn_tensor *mk32(const double *v, const int64_t *shape, int nd) { return tn_to_dtype(mk(v, shape, nd), TN_F32); }
#define D(...) ((const double[]){__VA_ARGS__})
#define LD(vals, ...) leaf(mk(vals, SH(__VA_ARGS__)))     /* LD(D(1, 2, 3), 3) */
static tn_tensor *mki(const int64_t *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_I64); }
#define I(...) ((const int64_t[]){__VA_ARGS__})
#define IDX(vals, ...) mki(vals, SH(__VA_ARGS__))           /* IDX(I(0, 2), 2) */
static tn_tensor *mkb(const bool *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_BOOL); }
#define B(...) ((const bool[]){__VA_ARGS__})
#define MASK(vals, ...) mkb(vals, SH(__VA_ARGS__))

/* element i (row-major) of any tensor, as a double */
static double el(tn_tensor *t, int64_t i) {
    double v = NAN;
    if (!t) return v;
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_F64));
    if (c && i >= 0 && i < tn_numel(c)) v = ((const double *)tn_data_ptr(c))[i];
    tn_scope_end();
    tn_no_grad_end();
    return v;
}
static bool close_(double a, double e, double tol) {
    if (a != a || e != e) return a != a && e != e;
    if (isinf(e) || isinf(a)) return a == e;
    return fabs(a - e) <= tol * (1 + fabs(e));
}
static void check_vals_(tn_tensor *t, const double *e, int64_t n, double tol, const char *what, int line) {
    if (!t) { fail_at(line, "%s is NULL (%s)", what, tn_last_error()); return; }
    if (tn_numel(t) != n) { fail_at(line, "%s has %lld elements, expected %lld", what, (long long)tn_numel(t), (long long)n); return; }
    for (int64_t i = 0; i < n; i++) {
        double v = el(t, i);
        if (!close_(v, e[i], tol)) { fail_at(line, "%s[%lld] = %.12g, expected %.12g", what, (long long)i, v, e[i]); return; }
    }
    tn_test_passed++;
}
/* CHECK_VALS(t, tol, v0, v1, ...): t's elements (row-major) within tol*(1+|e|) */
#define CHECK_VALS(t, tol, ...) do { const double e_[] = {__VA_ARGS__}; \
    check_vals_((t), e_, (int64_t)(sizeof e_ / sizeof e_[0]), (tol), #t, __LINE__); } while (0)
/* two tensors with the same elements (within tol) */
static void check_same_(tn_tensor *a, tn_tensor *b, double tol, const char *what, int line) {
    if (!a || !b) { fail_at(line, "%s: NULL (%s)", what, tn_last_error()); return; }
    if (tn_numel(a) != tn_numel(b)) { fail_at(line, "%s: %lld vs %lld elements", what, (long long)tn_numel(a), (long long)tn_numel(b)); return; }
    for (int64_t i = 0; i < tn_numel(a); i++)
        if (!close_(el(a, i), el(b, i), tol)) { fail_at(line, "%s: element %lld: %.12g vs %.12g", what, (long long)i, el(a, i), el(b, i)); return; }
    tn_test_passed++;
}
#define CHECK_SAME(a, b, tol) check_same_((a), (b), (tol), #a " vs " #b, __LINE__)
static void check_shape_(tn_tensor *t, const int64_t *s, int nd, const char *what, int line) {
    if (!t) { fail_at(line, "%s is NULL (%s)", what, tn_last_error()); return; }
    bool ok = tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_shape(t)[i] == s[i];
    if (!ok) { fail_at(line, "%s has the wrong shape (ndim %d)", what, tn_ndim(t)); return; }
    tn_test_passed++;
}
#define CHECK_SHAPE(t, ...) check_shape_((t), SH(__VA_ARGS__), #t, __LINE__)
#define CHECK_SHAPE0(t) check_shape_((t), NULL, 0, #t, __LINE__)
static void check_name_(tn_tensor *t, const char *name, const char *what, int line) {
    const char *n = tn_grad_fn_name(t);
    if (!n || strcmp(n, name)) { fail_at(line, "grad_fn of %s is %s, expected %s", what, n ? n : "NULL", name); return; }
    tn_test_passed++;
}
#define CHECK_NAME(t, name) check_name_((t), (name), #t, __LINE__)

/* every test runs in a scope and must give back every tensor it made */
#define BEGIN tn_memory_stats s0_ = tn_memory_stats_get(); tn_scope_begin(); tn_manual_seed(42)
#define END tn_scope_end(); do { tn_memory_stats s1_ = tn_memory_stats_get(); \
    CHECK_MSG(s1_.live_tensors == s0_.live_tensors && s1_.live_bytes == s0_.live_bytes, \
              "leak: %lld tensors / %lld bytes live, expected %lld / %lld", (long long)s1_.live_tensors, \
              (long long)s1_.live_bytes, (long long)s0_.live_tensors, (long long)s0_.live_bytes); } while (0)


/* one input, one output: d out / d x (new reference in scope), or NULL */
static tn_tensor *grad1(tn_tensor *out, tn_tensor *x, bool create) {
    tn_tensor *r = NULL;
    if (tn_autograd_grad(&out, 1, &x, 1, NULL, &r, .retain_graph = create, .create_graph = create)) return NULL;
    return r;
}

/* ---- gradcheck plumbing ---- */
#define IN0 in_[0]
#define IN1 in_[1]
#define IN2 in_[2]
#define U0 (((tn_tensor *const *)u_)[0])
#define U1 (((tn_tensor *const *)u_)[1])
#define GF(name, ...) static tn_tensor *name(tn_tensor *const *in_, int n_, void *u_) { \
    (void)n_; (void)u_; return (__VA_ARGS__); }

static void gc_run(const char *name, tn_gradcheck_fn fn, tn_tensor **ins, int n, void *user, int order,
                   double eps, double atol, double rtol, int line) {
    for (int k = 0; k < n; k++)
        if (!ins[k]) { fail_at(line, "%s: input %d is NULL (%s)", name, k, tn_last_error()); return; }
    int64_t live0 = tn_memory_stats_get().live_tensors;
    tn_clear_error();
    if (tn_gradcheck(fn, ins, n, user, .eps = eps, .atol = atol, .rtol = rtol)) tn_test_passed++;
    else fail_at(line, "gradcheck %s: %s", name, tn_last_error());
    if (order >= 2) {
        tn_clear_error();
        if (tn_gradgradcheck(fn, ins, n, user, .eps = eps, .atol = atol, .rtol = rtol)) tn_test_passed++;
        else fail_at(line, "gradgradcheck %s: %s", name, tn_last_error());
    }
    bool untouched = true; /* gradcheck goes through tn_autograd_grad: .grad stays NULL */
    for (int k = 0; k < n; k++) untouched = untouched && tn_grad(ins[k]) == NULL;
    if (!untouched) fail_at(line, "%s: gradcheck wrote .grad of an input", name);
    int64_t live1 = tn_memory_stats_get().live_tensors;
    if (live1 != live0) fail_at(line, "%s: %lld tensors leaked by gradcheck/gradgradcheck", name, (long long)(live1 - live0));
}
#define NARGS_(...) ((int)(sizeof((tn_tensor *[]){__VA_ARGS__}) / sizeof(tn_tensor *)))
/* gradcheck and gradgradcheck with PyTorch's default tolerances (eps 1e-6, atol 1e-5, rtol 1e-3) */
#define GC(fn, ...) gc_run(#fn, fn, (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__), NULL, 2, 0, 0, 0, __LINE__)
#define GCU(fn, user, ...) gc_run(#fn, fn, (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__), (void *)(user), 2, 0, 0, 0, __LINE__)
#define GCT(fn, eps, atol, rtol, ...) gc_run(#fn, fn, (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__), NULL, 2, eps, atol, rtol, __LINE__)
#define UARGS(...) ((tn_tensor *[]){__VA_ARGS__})

/* ==================================================================================== */
/* 1. gradcheck / gradgradcheck of every differentiable op                                */
/* ==================================================================================== */

/* ---- unary: inputs [3, 2], transposed inside (non-contiguous) ---- */
GF(u_neg, tn_neg(tn_t(IN0)))
GF(u_abs, tn_abs(tn_t(IN0)))
GF(u_exp, tn_exp(tn_t(IN0)))
GF(u_exp2, tn_exp2(tn_t(IN0)))
GF(u_log, tn_log(tn_t(IN0)))
GF(u_log2, tn_log2(tn_t(IN0)))
GF(u_log10, tn_log10(tn_t(IN0)))
GF(u_log1p, tn_log1p(tn_t(IN0)))
GF(u_expm1, tn_expm1(tn_t(IN0)))
GF(u_sqrt, tn_sqrt(tn_t(IN0)))
GF(u_rsqrt, tn_rsqrt(tn_t(IN0)))
GF(u_square, tn_square(tn_t(IN0)))
GF(u_reciprocal, tn_reciprocal(tn_t(IN0)))
GF(u_sin, tn_sin(tn_t(IN0)))
GF(u_cos, tn_cos(tn_t(IN0)))
GF(u_tan, tn_tan(tn_t(IN0)))
GF(u_asin, tn_asin(tn_t(IN0)))
GF(u_acos, tn_acos(tn_t(IN0)))
GF(u_atan, tn_atan(tn_t(IN0)))
GF(u_sinh, tn_sinh(tn_t(IN0)))
GF(u_cosh, tn_cosh(tn_t(IN0)))
GF(u_tanh, tn_tanh(tn_t(IN0)))
GF(u_sigmoid, tn_sigmoid(tn_t(IN0)))
GF(u_relu, tn_relu(tn_t(IN0)))
GF(u_gelu, tn_gelu(tn_t(IN0)))
GF(u_gelu_tanh, tn_gelu(tn_t(IN0), .approximate = TN_APPROXIMATE_TANH))
GF(u_silu, tn_silu(tn_t(IN0)))
GF(u_softplus, tn_softplus(tn_t(IN0)))
GF(u_softplus_beta, tn_softplus(tn_t(IN0), .beta = 2, .threshold = 1))   /* linear above x = 0.5 */
GF(u_erf, tn_erf(tn_t(IN0)))
GF(u_erfc, tn_erfc(tn_t(IN0)))
GF(u_frac, tn_frac(tn_t(IN0)))
GF(u_clamp, tn_clamp(tn_t(IN0), .min = -0.5, .max = 0.5))
GF(u_clamp_min, tn_clamp(tn_t(IN0), .min = -0.5))
GF(u_clamp_max, tn_clamp(tn_t(IN0), .max = 0.5))
GF(u_nan_to_num, tn_nan_to_num(tn_t(IN0)))
GF(u_chain, tn_tanh(tn_mul(tn_exp(tn_t(IN0)), tn_sin(tn_t(IN0)))))
/* on a 1-d strided input: slice with step 2 */
GF(u_exp_step, tn_exp(tn_slice(IN0, 0, 0, TN_END, 2)))
GF(u_sigmoid_step, tn_sigmoid(tn_slice(IN0, 0, 1, TN_END, 2)))

TEST(gc_unary) {
    BEGIN;
    GC(u_neg, RN(3, 2));
    GC(u_abs, NZ(3, 2));
    GC(u_exp, RN(3, 2));
    GC(u_exp2, RN(3, 2));
    GC(u_log, POS(3, 2));
    GC(u_log2, POS(3, 2));
    GC(u_log10, POS(3, 2));
    GC(u_log1p, UNIT(3, 2));
    GC(u_expm1, RN(3, 2));
    GC(u_sqrt, POS(3, 2));
    GC(u_rsqrt, POS(3, 2));
    GC(u_square, RN(3, 2));
    GC(u_reciprocal, POS(3, 2));
    GC(u_reciprocal, NZ(3, 2));
    GC(u_sin, RN(3, 2));
    GC(u_cos, RN(3, 2));
    GC(u_tan, UNIT(3, 2));
    GC(u_asin, UNIT(3, 2));
    GC(u_acos, UNIT(3, 2));
    GC(u_atan, RN(3, 2));
    GC(u_sinh, RN(3, 2));
    GC(u_cosh, RN(3, 2));
    GC(u_tanh, RN(3, 2));
    GC(u_sigmoid, RN(3, 2));
    GC(u_relu, NZ(3, 2));
    GC(u_gelu, RN(3, 2));
    GC(u_gelu_tanh, RN(3, 2));
    GC(u_silu, RN(3, 2));
    GC(u_softplus, RN(3, 2));
    GC(u_softplus_beta, LD(D(-1.2, 0.2, 0.7, 1.4, -0.3, 2.5), 3, 2));
    GC(u_erf, RN(3, 2));
    GC(u_erfc, RN(3, 2));
    GC(u_frac, LD(D(0.3, 1.7, -2.4, -0.6, 2.2, 0.45), 3, 2));
    GC(u_clamp, LD(D(-1.2, -0.3, 0.1, 0.7, 0.45, -0.8), 3, 2));
    GC(u_clamp_min, LD(D(-1.2, -0.3, 0.1, 0.7, 0.45, -0.8), 3, 2));
    GC(u_clamp_max, LD(D(-1.2, -0.3, 0.1, 0.7, 0.45, -0.8), 3, 2));
    GC(u_nan_to_num, RN(3, 2));
    GC(u_chain, RN(3, 2));
    GC(u_exp_step, RN(6));
    GC(u_sigmoid_step, RN(7));
    END;
}

/* ---- binary with broadcasting ---- */
GF(b_add, tn_add(tn_t(IN0), IN1))                      /* [3,2]^T + [3] */
GF(b_add_alpha, tn_add_alpha(tn_t(IN0), IN1, 2.5))
GF(b_sub, tn_sub(IN0, IN1))                            /* [2,3] - [2,1] */
GF(b_sub_alpha, tn_sub_alpha(IN0, tn_t(IN1), -1.5))    /* [2,3] - [3,2]^T */
GF(b_mul, tn_mul(IN0, IN1))                            /* [2,1,3] * [2,1] */
GF(b_mul_self, tn_mul(IN0, IN0))
GF(b_div, tn_div(tn_t(IN0), IN1))                      /* [3,2]^T / [3] */
GF(b_div_b, tn_div(IN1, IN0))                          /* [2,1] / [2,3] */
GF(b_pow, tn_pow(tn_t(IN0), IN1))                      /* positive [3,2]^T ** [3] */
GF(b_atan2, tn_atan2(IN0, tn_t(IN1)))
GF(b_maximum, tn_maximum(tn_t(IN0), IN1))
GF(b_minimum, tn_minimum(IN0, IN1))
GF(b_remainder, tn_remainder(IN0, IN1))                /* [2,3] % [3] */
GF(b_fmod, tn_fmod(IN0, IN1))
GF(b_mul_0d, tn_mul(IN0, tn_t(IN1)))                   /* 0-d * [3,2]^T */
GF(b_div_0d, tn_div(IN1, IN0))
/* *_scalar forms */
GF(s_add, tn_add_scalar(tn_t(IN0), 2.5))
GF(s_add_int, tn_add_scalar(tn_t(IN0), 3))
GF(s_sub, tn_sub_scalar(tn_t(IN0), 1.5))
GF(s_rsub, tn_rsub_scalar(tn_t(IN0), 3))
GF(s_mul, tn_mul_scalar(tn_t(IN0), -2))
GF(s_mul_f, tn_mul_scalar(tn_t(IN0), 0.3))
GF(s_div, tn_div_scalar(tn_t(IN0), 4))
GF(s_div_f, tn_div_scalar(tn_t(IN0), -0.7))
GF(s_pow, tn_pow_scalar(tn_t(IN0), 2.5))
GF(s_pow_int, tn_pow_scalar(tn_t(IN0), 3))
GF(s_pow_neg, tn_pow_scalar(tn_t(IN0), -1.5))
GF(s_pow_half, tn_pow_scalar(tn_t(IN0), 0.5))
GF(s_rpow, tn_rpow_scalar(2.0, tn_t(IN0)))
GF(s_rpow_f, tn_rpow_scalar(0.7, tn_t(IN0)))
GF(s_remainder, tn_remainder_scalar(tn_t(IN0), 1.5))
GF(s_remainder_neg, tn_remainder_scalar(tn_t(IN0), -1.5))

TEST(gc_binary) {
    BEGIN;
    GC(b_add, RN(3, 2), RN(3));
    GC(b_add_alpha, RN(3, 2), RN(3));
    GC(b_sub, RN(2, 3), RN(2, 1));
    GC(b_sub_alpha, RN(2, 3), RN(3, 2));
    GC(b_mul, RN(2, 1, 3), RN(2, 1));
    GC(b_mul_self, RN(2, 3));
    GC(b_div, RN(3, 2), POS(3));
    GC(b_div_b, NZ(2, 3), RN(2, 1));
    GC(b_pow, POS(3, 2), RN(3));
    GC(b_atan2, RN(2, 3), RN(3, 2));
    GC(b_maximum, RN(3, 2), RN(3));
    GC(b_minimum, RN(2, 3), RN(2, 1));
    tn_tensor *ra = LD(D(2.3, -1.7, 4.1, -3.3, 0.7, 5.9), 2, 3), *rb = LD(D(1.5, 2.2, -1.3), 3);
    GC(b_remainder, ra, rb);
    GC(b_fmod, ra, rb);
    GC(b_mul_0d, RN0, RN(3, 2));
    GC(b_div_0d, POS0, RN(2, 3));
    GC(s_add, RN(3, 2));
    GC(s_add_int, RN(3, 2));
    GC(s_sub, RN(3, 2));
    GC(s_rsub, RN(3, 2));
    GC(s_mul, RN(3, 2));
    GC(s_mul_f, RN(3, 2));
    GC(s_div, RN(3, 2));
    GC(s_div_f, RN(3, 2));
    GC(s_pow, POS(3, 2));
    GC(s_pow_int, RN(3, 2));
    GC(s_pow_neg, POS(3, 2));
    GC(s_pow_half, POS(3, 2));
    GC(s_rpow, RN(3, 2));
    GC(s_rpow_f, RN(3, 2));
    tn_tensor *rs = LD(D(2.3, -1.7, 4.1, -3.3, 0.7, 5.9), 3, 2);
    GC(s_remainder, rs);
    GC(s_remainder_neg, rs);
    END;
}

/* ---- ternary ---- */
GF(t_where, tn_where(U0, tn_t(IN0), IN1))              /* cond [2,3], [3,2]^T, [3] */
GF(t_where_bcast, tn_where(U0, IN0, IN1))              /* cond [3], [2,1], [2,3] */
GF(t_lerp, tn_lerp(tn_t(IN0), IN1, IN2))               /* [3,2]^T, [3], weight [2,1] */
GF(t_lerp_s, tn_lerp_scalar(IN0, tn_t(IN1), 0.3))
GF(t_addcmul, tn_addcmul(IN0, tn_t(IN1), IN2, .value = 0.7))    /* [3], [3,2]^T, [2,1] */
GF(t_addcdiv, tn_addcdiv(IN0, IN1, tn_t(IN2), .value = -1.3))   /* [2,1], [3], positive [3,2]^T */

TEST(gc_ternary) {
    BEGIN;
    tn_tensor *cond = MASK(B(true, false, true, false, false, true), 2, 3);
    GCU(t_where, UARGS(cond), RN(3, 2), RN(3));
    GCU(t_where_bcast, UARGS(MASK(B(false, true, true), 3)), RN(2, 1), RN(2, 3));
    GC(t_lerp, RN(3, 2), RN(3), RN(2, 1));
    GC(t_lerp_s, RN(2, 3), RN(3, 2));
    GC(t_addcmul, RN(3), RN(3, 2), RN(2, 1));
    GC(t_addcdiv, RN(2, 1), RN(3), POS(3, 2));
    END;
}

/* ---- reductions ---- */
GF(r_sum, tn_sum(tn_t(IN0)))
GF(r_sum_d1, tn_sum_dims(tn_t(IN0), TN_DIMS(1)))
GF(r_sum_d1k, tn_sum_dims(tn_t(IN0), TN_DIMS(1), .keepdim = true))
GF(r_sum_d02, tn_sum_dims(IN0, TN_DIMS(0, 2)))   /* [2,3,2] */
GF(r_sum_d02k, tn_sum_dims(IN0, TN_DIMS(0, -1), .keepdim = true))
GF(r_sum_sq, tn_sum_dims(tn_square(tn_t(IN0)), TN_DIMS(0)))
GF(r_mean, tn_mean(tn_t(IN0)))
GF(r_mean_d1, tn_mean_dims(tn_t(IN0), TN_DIMS(1)))
GF(r_mean_d1k, tn_mean_dims(tn_t(IN0), TN_DIMS(-1), .keepdim = true))
GF(r_mean_d02, tn_mean_dims(tn_square(IN0), TN_DIMS(0, 2)))
GF(r_mean_d02k, tn_mean_dims(IN0, TN_DIMS(2, 0), .keepdim = true))
GF(r_prod, tn_prod(tn_t(IN0)))
GF(r_prod_d1, tn_prod_dims(tn_t(IN0), TN_DIMS(1)))
GF(r_prod_d1k, tn_prod_dims(tn_t(IN0), TN_DIMS(1), .keepdim = true))
GF(r_prod_d0, tn_prod_dims(IN0, TN_DIMS(0)))
GF(r_prod_d02, tn_prod_dims(IN0, TN_DIMS(0, 2)))
GF(r_prod_d02k, tn_prod_dims(IN0, TN_DIMS(0, 2), .keepdim = true))
GF(r_amax, tn_amax(tn_t(IN0), NULL, 0))
GF(r_amax_d1, tn_amax(tn_t(IN0), TN_DIMS(1)))
GF(r_amax_d1k, tn_amax(tn_t(IN0), TN_DIMS(1), .keepdim = true))
GF(r_amax_d02, tn_amax(IN0, TN_DIMS(0, 2)))
GF(r_amin_d0, tn_amin(tn_t(IN0), TN_DIMS(0)))
GF(r_amin_d02k, tn_amin(IN0, TN_DIMS(0, 2), .keepdim = true))
GF(r_max, tn_max(tn_t(IN0)))
GF(r_min, tn_min(tn_t(IN0)))
GF(r_max_dim, tn_max_dim(tn_t(IN0), 1, NULL))
GF(r_max_dim_k, tn_max_dim(tn_t(IN0), 0, NULL, .keepdim = true))
GF(r_min_dim, tn_min_dim(tn_t(IN0), -1, NULL))
GF(r_min_dim_k, tn_min_dim(tn_t(IN0), 0, NULL, .keepdim = true))
GF(r_var, tn_var(tn_t(IN0)))
GF(r_var0, tn_var(tn_t(IN0), .correction = 0))
GF(r_var_d1, tn_var_dims(tn_t(IN0), TN_DIMS(1)))
GF(r_var_d02k, tn_var_dims(IN0, TN_DIMS(0, 2), .correction = 2, .keepdim = true))
GF(r_std, tn_std(tn_t(IN0)))
GF(r_std0, tn_std(tn_t(IN0), .correction = 0))
GF(r_std_d0, tn_std_dims(tn_t(IN0), TN_DIMS(0)))
GF(r_std_d02k, tn_std_dims(IN0, TN_DIMS(0, 2), .correction = 2, .keepdim = true))
GF(r_norm1, tn_norm(tn_t(IN0), .p = 1))
GF(r_norm2, tn_norm(tn_t(IN0)))
GF(r_norm3, tn_norm(tn_t(IN0), .p = 3))
GF(r_norm_inf, tn_norm(tn_t(IN0), .p = INFINITY))
GF(r_norm_ninf, tn_norm(tn_t(IN0), .p = -INFINITY))
GF(r_norm2_d1k, tn_norm_dims(tn_t(IN0), TN_DIMS(1), .keepdim = true))
GF(r_norm3_d0, tn_norm_dims(tn_t(IN0), TN_DIMS(0), .p = 3))
GF(r_lse, tn_logsumexp(tn_t(IN0), TN_DIMS(1)))
GF(r_lse_k, tn_logsumexp(tn_t(IN0), TN_DIMS(0), .keepdim = true))
GF(r_lse_all, tn_logsumexp(tn_t(IN0), TN_DIMS(0, 1)))
GF(r_softmax0, tn_softmax(tn_t(IN0), 0))
GF(r_softmax1, tn_softmax(tn_t(IN0), 1))
GF(r_softmax3, tn_softmax(IN0, -2))                    /* [2,3,2], middle dim */
GF(r_log_softmax0, tn_log_softmax(tn_t(IN0), 0))
GF(r_log_softmax1, tn_log_softmax(tn_t(IN0), -1))
GF(r_log_softmax3, tn_log_softmax(IN0, 1))
GF(r_cumsum0, tn_cumsum(tn_t(IN0), 0))
GF(r_cumsum1, tn_cumsum(tn_t(IN0), 1))
GF(r_cumprod0, tn_cumprod(tn_t(IN0), 0))
GF(r_cumprod1, tn_cumprod(tn_t(IN0), -1))
GF(r_sort, tn_sort(tn_t(IN0), NULL, .dim = 1))
GF(r_sort_desc, tn_sort(tn_t(IN0), NULL, .dim = 0, .descending = true))
GF(r_topk, tn_topk(tn_t(IN0), 2, NULL, .dim = 1))
GF(r_topk_small, tn_topk(tn_t(IN0), 1, NULL, .dim = 0, .largest = false))

TEST(gc_reductions) {
    BEGIN;
    GC(r_sum, RN(3, 2));
    GC(r_sum_d1, RN(3, 2));
    GC(r_sum_d1k, RN(3, 2));
    GC(r_sum_d02, RN(2, 3, 2));
    GC(r_sum_d02k, RN(2, 3, 2));
    GC(r_sum_sq, RN(3, 2));
    GC(r_mean, RN(3, 2));
    GC(r_mean_d1, RN(3, 2));
    GC(r_mean_d1k, RN(3, 2));
    GC(r_mean_d02, RN(2, 3, 2));
    GC(r_mean_d02k, RN(2, 3, 2));
    GC(r_prod, RN(3, 2));
    GC(r_prod_d1, RN(3, 2));
    GC(r_prod_d1k, RN(3, 2));
    GC(r_prod_d02, RN(2, 3, 2));
    GC(r_prod_d02k, RN(2, 3, 2));
    /* exact zeros: one zero and two zeros in the reduced dim */
    tn_tensor *z1 = LD(D(1.5, 0.5, 0.0, 2.0, -1.2, 0.7), 3, 2);    /* transposed: row 0 = 1.5 0 -1.2 (one zero) */
    tn_tensor *z2 = LD(D(0.0, 0.5, 1.3, 2.0, 0.0, 0.7), 3, 2);     /* row 0 = 0 1.3 0 (two zeros), row 1 = .5 2 .7 */
    GC(r_prod, z1);
    GC(r_prod, z2);
    GC(r_prod_d1, z1);
    GC(r_prod_d1, z2);
    GC(r_prod_d1k, z2);
    GC(r_prod_d0, LD(D(0.0, 0.5, 1.3, 2.0, 0.0, -0.7), 3, 2));     /* col 0: 0 1.3 0, col 1: .5 2 -.7 */
    GC(r_prod_d02, LD(D(1.1, 0.0, 0.5, -2.0, 0.7, 1.3, 0.0, 0.9, 1.2, 0.0, -0.4, 0.8), 2, 3, 2));
    GC(r_amax, RN(3, 2));
    GC(r_amax_d1, RN(3, 2));
    GC(r_amax_d1k, RN(3, 2));
    GC(r_amax_d02, RN(2, 3, 2));
    GC(r_amin_d0, RN(3, 2));
    GC(r_amin_d02k, RN(2, 3, 2));
    GC(r_max, RN(3, 2));
    GC(r_min, RN(3, 2));
    GC(r_max_dim, RN(3, 2));
    GC(r_max_dim_k, RN(3, 2));
    GC(r_min_dim, RN(3, 2));
    GC(r_min_dim_k, RN(3, 2));
    GC(r_var, RN(3, 2));
    GC(r_var0, RN(3, 2));
    GC(r_var_d1, RN(3, 2));
    GC(r_var_d02k, RN(2, 3, 2));
    GC(r_std, RN(3, 2));
    GC(r_std0, RN(3, 2));
    GC(r_std_d0, RN(3, 2));
    GC(r_std_d02k, RN(2, 3, 2));
    GC(r_norm1, NZ(3, 2));
    GC(r_norm2, RN(3, 2));
    GC(r_norm3, NZ(3, 2));
    GC(r_norm_inf, RN(3, 2));
    GC(r_norm_ninf, NZ(3, 2));
    GC(r_norm2_d1k, RN(3, 2));
    GC(r_norm3_d0, NZ(3, 2));
    GC(r_lse, RN(3, 2));
    GC(r_lse_k, RN(3, 2));
    GC(r_lse_all, RN(3, 2));
    GC(r_softmax0, RN(3, 2));
    GC(r_softmax1, RN(3, 2));
    GC(r_softmax3, RN(2, 3, 2));
    GC(r_log_softmax0, RN(3, 2));
    GC(r_log_softmax1, RN(3, 2));
    GC(r_log_softmax3, RN(2, 3, 2));
    GC(r_cumsum0, RN(3, 2));
    GC(r_cumsum1, RN(3, 2));
    GC(r_cumprod0, NZ(3, 2));
    GC(r_cumprod1, NZ(3, 2));
    GC(r_sort, RN(3, 2));
    GC(r_sort_desc, RN(3, 2));
    GC(r_topk, RN(3, 2));
    GC(r_topk_small, RN(3, 2));
    END;
}

/* ---- views ---- */
GF(v_view, tn_square(tn_view(IN0, SH(3, -1))))
GF(v_reshape_view, tn_reshape(IN0, SH(3, 2)))
GF(v_reshape_copy, tn_square(tn_reshape(tn_t(IN0), SH(6))))   /* transposed: reshape must copy */
GF(v_flatten, tn_flatten(IN0, .start_dim = 1, .end_dim = 2))
GF(v_flatten_t, tn_square(tn_flatten(tn_t(IN0))))
GF(v_unflatten, tn_unflatten(tn_t(IN0), 1, SH(2, 3)))          /* [6,2]^T -> [2,2,3] */
GF(v_permute, tn_square(tn_permute(IN0, TN_DIMS(2, 0, 1))))
GF(v_transpose, tn_transpose(IN0, 0, 2))
GF(v_t, tn_mul(tn_t(IN0), IN1))
GF(v_t1d, tn_square(tn_t(IN0)))
GF(v_narrow, tn_square(tn_narrow(tn_t(IN0), 1, 1, 2)))
GF(v_slice_step, tn_square(tn_slice(IN0, 1, 1, TN_END, 2)))      /* [2,6] -> [2,3] */
GF(v_slice_neg, tn_slice(tn_t(IN0), 0, -2, TN_END, 1))
GF(v_slice_step3, tn_square(tn_slice(tn_slice(IN0, 0, 0, TN_END, 3), 0, 1, TN_END, 2)))
GF(v_select, tn_square(tn_select(tn_t(IN0), 1, -1)))
GF(v_select0, tn_select(IN0, 0, 1))
GF(v_expand, tn_mul(tn_expand(IN0, SH(2, -1, 3)), IN1))         /* [3,1] -> [2,3,3] */
GF(v_expand_0d, tn_square(tn_expand(IN0, SH(2, 3))))
GF(v_squeeze, tn_square(tn_squeeze(IN0)))                       /* [2,1,3] */
GF(v_squeeze_dim, tn_squeeze_dim(IN0, 1))
GF(v_unsqueeze, tn_square(tn_unsqueeze(tn_t(IN0), 1)))
GF(v_unfold, tn_square(tn_unfold(IN0, 1, 3, 1)))                /* [2,5] -> [2,3,3], overlapping */
GF(v_unfold_t, tn_square(tn_unfold(tn_t(IN0), 1, 2, 1)))        /* [4,2]^T = [2,4] -> [2,3,2] */
GF(v_unfold_step, tn_unfold(IN0, 0, 3, 2))                     /* [7] -> [3,3] */
GF(v_flip, tn_square(tn_flip(IN0, TN_DIMS(0, 1))))
GF(v_flip1, tn_flip(tn_t(IN0), TN_DIMS(-1)))
GF(v_roll, tn_square(tn_roll(IN0, I(1, -2), I(0, 1), 2)))
GF(v_roll_flat, tn_roll(tn_t(IN0), I(2), NULL, 0))
GF(v_repeat, tn_square(tn_repeat(IN0, TN_DIMS(2, 1, 2))))       /* [2,3] -> [2,2,6] */
GF(v_repeat_t, tn_repeat(tn_t(IN0), TN_DIMS(1, 3)))
GF(v_tril, tn_square(tn_tril(IN0)))
GF(v_tril_m1, tn_tril(tn_t(IN0), .diagonal = -1))
GF(v_triu, tn_square(tn_triu(IN0, .diagonal = 1)))
GF(v_triu_0, tn_triu(tn_t(IN0)))
GF(v_pad, tn_square(tn_pad(IN0, TN_DIMS(1, 2, 0, 1), .value = 0.5)))
GF(v_pad_neg, tn_square(tn_pad(tn_t(IN0), TN_DIMS(-1, 1, 1, -1))))

TEST(gc_views) {
    BEGIN;
    GC(v_view, RN(2, 3));
    GC(v_reshape_view, RN(2, 3));
    GC(v_reshape_copy, RN(2, 3));
    GC(v_flatten, RN(2, 3, 2));
    GC(v_flatten_t, RN(2, 3));
    GC(v_unflatten, RN(6, 2));
    GC(v_permute, RN(2, 3, 2));
    GC(v_transpose, RN(2, 3, 2));
    GC(v_t, RN(3, 2), RN(2, 3));
    GC(v_t1d, RN(3));
    GC(v_narrow, RN(3, 2));
    GC(v_slice_step, RN(2, 6));
    GC(v_slice_neg, RN(2, 3));
    GC(v_slice_step3, RN(9));
    GC(v_select, RN(3, 2));
    GC(v_select0, RN(2, 3));
    GC(v_expand, RN(3, 1), RN(3));
    GC(v_expand_0d, RN0);
    GC(v_squeeze, RN(2, 1, 3));
    GC(v_squeeze_dim, RN(2, 1, 3));
    GC(v_unsqueeze, RN(3, 2));
    GC(v_unfold, RN(2, 5));
    GC(v_unfold_t, RN(4, 2));
    GC(v_unfold_step, RN(7));
    GC(v_flip, RN(2, 3));
    GC(v_flip1, RN(3, 2));
    GC(v_roll, RN(2, 3));
    GC(v_roll_flat, RN(3, 2));
    GC(v_repeat, RN(2, 3));
    GC(v_repeat_t, RN(3, 2));
    GC(v_tril, RN(3, 3));
    GC(v_tril_m1, RN(4, 3));
    GC(v_triu, RN(3, 4));
    GC(v_triu_0, RN(3, 3));
    GC(v_pad, RN(2, 3));
    GC(v_pad_neg, RN(3, 2));
    END;
}

/* ---- indexing ---- */
GF(i_index_select, tn_index_select(tn_t(IN0), 1, U0))          /* [3,2]^T, idx [2,0,2] (duplicate) */
GF(i_index_select0, tn_square(tn_index_select(IN0, 0, U0)))
GF(i_gather, tn_gather(tn_t(IN0), 1, U0))                      /* [3,2]^T, idx [2,4] */
GF(i_scatter, tn_scatter(IN0, 1, U0, IN1))                      /* self [2,4], idx [2,2] unique, src [2,2] */
GF(i_scatter_t, tn_mul(tn_scatter(tn_t(IN0), 1, U0, tn_t(IN1)), tn_t(IN0)))
GF(i_scatter_add, tn_scatter_add(IN0, 1, U0, IN1))              /* idx with duplicates */
GF(i_scatter_add_sq, tn_square(tn_scatter_add(tn_t(IN0), 1, U0, IN1)))
GF(i_index_int, tn_index(tn_t(IN0), UARGS(U0), 1))             /* [2,3]^T = [3,2] rows [2,0,2] */
GF(i_index_bool, tn_square(tn_index(IN0, UARGS(U0), 1)))       /* bool mask [2,3] */
GF(i_index_two, tn_index(tn_t(IN0), UARGS(U0, U1), 2))         /* two index tensors */
GF(i_index_skip, tn_square(tn_index(IN0, UARGS(NULL, U0), 2)))  /* x[:, idx] */
GF(i_index_put, tn_index_put(IN0, UARGS(U0), 1, IN1))    /* rows [3,0] unique, values [2,2] */
GF(i_index_put_acc, tn_index_put(tn_t(IN0), UARGS(U0), 1, IN1, .accumulate = true))  /* duplicates add up */
GF(i_index_put_bcast, tn_square(tn_index_put(IN0, UARGS(U0), 1, IN1, .accumulate = true)))  /* values [2] broadcast */
GF(i_index_put_two, tn_index_put(IN0, UARGS(U0, U1), 2, IN1))
GF(i_masked_fill, tn_masked_fill(tn_t(IN0), U0, -1.5))
GF(i_masked_select, tn_square(tn_masked_select(IN0, U0)))      /* mask [3] broadcast over [2,3] */
GF(i_cat0, tn_cat(UARGS(IN0, tn_t(IN1), IN2), 3))            /* [1,3], [3,2]^T, [2,3] */
GF(i_cat1, tn_square(tn_cat(UARGS(IN0, IN1), 2, .dim = -1)))           /* [2,1], [2,3] */
GF(i_stack, tn_stack(UARGS(IN0, tn_t(IN1)), 2, .dim = 1))              /* [2,3], [3,2]^T */
GF(i_stack0, tn_square(tn_stack(UARGS(IN0, IN1, IN0), 3)))
static tn_tensor *i_split(tn_tensor *const *in_, int n_, void *u_) {
    (void)n_; (void)u_;
    tn_tensor *p[4];
    if (tn_split(IN0, 2, p, 4, .dim = 1) != 3) return NULL;           /* [2,5] -> [2,2] [2,2] [2,1] */
    return tn_add(tn_mul(p[0], p[1]), tn_exp(p[2]));
}
static tn_tensor *i_chunk(tn_tensor *const *in_, int n_, void *u_) {
    (void)n_; (void)u_;
    tn_tensor *p[3];
    if (tn_chunk(tn_t(IN0), 3, p, 3) != 3) return NULL;    /* [2,6]^T = [6,2] -> 3 x [2,2] */
    return tn_sub(tn_mul(p[0], p[2]), p[1]);
}
static tn_tensor *i_split_sizes(tn_tensor *const *in_, int n_, void *u_) {
    (void)n_; (void)u_;
    tn_tensor *p[2];
    if (tn_split_sizes(IN0, TN_DIMS(1, 3), p, 2) != 2) return NULL;  /* [4,2] -> [1,2], [3,2]; p[1] unused rows get 0 */
    return tn_mul(p[0], tn_sin(p[1]));
}
static tn_tensor *i_split_unused(tn_tensor *const *in_, int n_, void *u_) {
    (void)n_; (void)u_;
    tn_tensor *p[3];
    if (tn_chunk(IN0, 3, p, 3, .dim = 1) != 3) return NULL;             /* only the middle piece is used */
    return tn_square(p[1]);
}

GF(x_unfold_gaps, tn_square(tn_unfold(IN0, 0, 2, 3)))          /* [7] -> windows [0,1], [3,4]: gaps */
GF(x_gather_part, tn_gather(IN0, 1, U0))                        /* idx [1,2] on [2,3] */
GF(x_index_select_0d, tn_index_select(IN0, 0, U0))              /* 0-d index */
GF(x_clamp_tensor, tn_clamp_tensor(IN0, IN1, IN2))              /* [2,3], min [3], max [2,1] */
GF(x_expand_as, tn_mul(tn_expand_as(IN0, IN1), IN1))
GF(x_broadcast_to, tn_square(tn_broadcast_to(IN0, SH(2, 2, 3))))
GF(x_where_same, tn_where(U0, IN0, tn_mul_scalar(IN0, 3)))
GF(x_cat_legacy, tn_square(tn_cat(UARGS(IN0, IN1), 2)))     /* [0] and [2,3] */

TEST(gc_indexing_more) {
    BEGIN;
    GC(x_unfold_gaps, RN(7));
    GCU(x_gather_part, UARGS(IDX(I(2, 0), 1, 2)), RN(2, 3));
    GCU(x_index_select_0d, UARGS(tn_scalar_tensor(1, TN_I64)), RN(3));
    GC(x_clamp_tensor, LD(D(-1.5, 0.2, 2.5, 0.9, -0.1, 1.7), 2, 3), LD(D(-1, 0.5, -0.3), 3), LD(D(0.8, 1.2), 2, 1));
    GC(x_expand_as, RN(3), RN(2, 3));
    GC(x_broadcast_to, RN(2, 1, 3));
    GCU(x_where_same, UARGS(MASK(B(true, false, true), 3)), RN(2, 3));
    GC(x_cat_legacy, leaf(tn_zeros(SH(0), TN_F64)), RN(2, 3));
    /* index_select with a 0-d index: backward gives [0, 1, 0] (and must never report success
       with no gradient) */
    tn_tensor *x3 = LD(D(1, 2, 3), 3);
    tn_tensor *y3 = tn_index_select(x3, 0, tn_scalar_tensor(1, TN_I64));
    CHECK_SHAPE(y3, 1);
    tn_clear_error();
    int rc3 = tn_backward(tn_sum(tn_mul_scalar(y3, 2)));
    CHECK_MSG(rc3 == 0, "backward failed: %s", tn_last_error());
    CHECK_MSG(rc3 != 0 || tn_grad(x3) != NULL, "backward returned 0 but x.grad is NULL (error: %s)", tn_last_error());
    CHECK_VALS(tn_grad(x3), 0, 0, 2, 0);
    /* as_strided: differentiable, or a clear error; never a silently detached result */
    tn_tensor *x = RN(2, 3);
    tn_clear_error();
    tn_tensor *as = tn_as_strided(x, SH(2, 2), I(3, 1), 1);
    CHECK(as ? tn_requires_grad(as) : strstr(tn_last_error(), "as_strided") != NULL);
    END;
}

TEST(gc_indexing) {
    BEGIN;
    tn_tensor *i3 = IDX(I(2, 0, 2), 3);
    GCU(i_index_select, UARGS(i3), RN(3, 2));
    GCU(i_index_select0, UARGS(IDX(I(1, 1, 0), 3)), RN(2, 3));
    GCU(i_gather, UARGS(IDX(I(0, 2, 0, 1, 1, 1, 2, 0), 2, 4)), RN(3, 2));
    GCU(i_scatter, UARGS(IDX(I(3, 0, 1, 2), 2, 2)), RN(2, 4), RN(2, 2));
    GCU(i_scatter_t, UARGS(IDX(I(3, 0, 1, 2), 2, 2)), RN(4, 2), RN(2, 2));
    GCU(i_scatter_add, UARGS(IDX(I(0, 0, 3, 2, 2, 2), 2, 3)), RN(2, 4), RN(2, 3));
    GCU(i_scatter_add_sq, UARGS(IDX(I(0, 0, 3, 2, 2, 2), 2, 3)), RN(4, 2), RN(2, 3));
    GCU(i_index_int, UARGS(i3), RN(2, 3));
    GCU(i_index_int, UARGS(IDX(I(-1, 0), 2)), RN(2, 3));
    GCU(i_index_bool, UARGS(MASK(B(true, false, true, true, false, false), 2, 3)), RN(2, 3));
    GCU(i_index_two, UARGS(IDX(I(0, 2, 2), 3), IDX(I(1, 0, 1), 3)), RN(2, 3));
    GCU(i_index_skip, UARGS(IDX(I(2, 2, 0), 3)), RN(2, 3));
    GCU(i_index_put, UARGS(IDX(I(3, 0), 2)), RN(4, 2), RN(2, 2));
    GCU(i_index_put_acc, UARGS(IDX(I(1, 1, 3), 3)), RN(2, 4), RN(3, 2));
    GCU(i_index_put_bcast, UARGS(IDX(I(2, 0, 2), 3)), RN(3, 2), RN(2));
    GCU(i_index_put_two, UARGS(IDX(I(0, 1), 2), IDX(I(2, 0), 2)), RN(2, 3), RN(2));
    GCU(i_masked_fill, UARGS(MASK(B(true, false, false, true, true, false), 2, 3)), RN(3, 2));
    GCU(i_masked_select, UARGS(MASK(B(true, false, true), 3)), RN(2, 3));
    GC(i_cat0, RN(1, 3), RN(3, 2), RN(2, 3));
    GC(i_cat1, RN(2, 1), RN(2, 3));
    GC(i_stack, RN(2, 3), RN(3, 2));
    GC(i_stack0, RN(2), RN(2));
    GC(i_split, RN(2, 5));
    GC(i_chunk, RN(2, 6));
    GC(i_split_sizes, RN(4, 2));
    GC(i_split_unused, RN(2, 3));
    END;
}

/* ---- indexing edge forms: 0-d bool and int indices, non-adjacent and 2-d index tensors ---- */
GF(e_index_true, tn_index(IN0, UARGS(tn_scalar_bool(true)), 1))
GF(e_index_false, tn_add(tn_sum(tn_index(IN0, UARGS(tn_scalar_bool(false)), 1)), tn_sum(IN0)))
GF(e_masked_select_0d, tn_masked_select(IN0, tn_scalar_bool(true)))
GF(e_index_put_true, tn_index_put(IN0, UARGS(tn_scalar_bool(true)), 1, IN1))
GF(e_index_0d, tn_index(IN0, UARGS(tn_scalar_tensor(1, TN_I64)), 1))
GF(e_gather_0d, tn_gather(IN0, 0, tn_scalar_tensor(1, TN_I64)))
GF(e_index_put_0d, tn_index_put(IN0, UARGS(tn_scalar_tensor(1, TN_I64)), 1, IN1, .accumulate = true))
GF(e_index_2d, tn_index(IN0, UARGS(U0), 1))                      /* [2,2] index into [3,2] -> [2,2,2] */
GF(e_index_nonadj, tn_index(IN0, UARGS(U0, NULL, U0), 3))        /* x[i, :, i]: advanced dims go first */
GF(e_masked_fill_bcast, tn_masked_fill(IN0, U0, 2))               /* mask [2,1,3] over [2,3] -> [2,2,3] */
GF(e_roll_wrap, tn_roll(IN0, I(5), I(0), 1))
GF(e_pad_crop_all, tn_add(tn_sum(tn_pad(IN0, TN_DIMS(-3, 0))), tn_sum(tn_square(IN0))))
GF(e_unfold_0d, tn_unfold(IN0, 0, 1, 1))
GF(e_squeeze_0d, tn_squeeze(IN0))

TEST(gc_index_edge) {
    BEGIN;
    GC(e_index_true, RN(3));
    GC(e_index_false, RN(3));
    GC(e_masked_select_0d, RN(3));
    GC(e_index_put_true, RN(3), RN(3));
    GC(e_index_0d, RN(3, 2));
    GC(e_gather_0d, RN(3));
    GC(e_index_put_0d, RN(3, 2), RN(2));
    GCU(e_index_2d, UARGS(IDX(I(0, 2, 1, 0), 2, 2)), RN(3, 2));
    GCU(e_index_nonadj, UARGS(IDX(I(0, 1), 2)), RN(2, 3, 2));
    GCU(e_masked_fill_bcast, UARGS(MASK(B(true, false, true, false, false, true), 2, 1, 3)), RN(2, 3));
    GC(e_roll_wrap, RN(3));
    GC(e_pad_crop_all, RN(2, 3));
    GC(e_unfold_0d, RN0);
    GC(e_squeeze_0d, RN0);
    END;
}

/* ---- linear algebra ---- */
GF(l_mm, tn_mm(tn_t(IN0), IN1))                    /* [3,2]^T @ [3,4] */
GF(l_mm_t2, tn_mm(IN0, tn_t(IN1)))                 /* [2,3] @ [4,3]^T */
GF(l_mm_self, tn_mm(IN0, tn_t(IN0)))
GF(l_bmm, tn_bmm(IN0, tn_transpose(IN1, 1, 2)))    /* [2,2,3] @ [2,2,3]^T */
GF(l_mv, tn_mv(tn_t(IN0), IN1))                    /* [3,2]^T @ [3] */
GF(l_mv_step, tn_mv(IN0, tn_slice(IN1, 0, 0, TN_END, 2)))
GF(l_dot, tn_dot(IN0, tn_slice(IN1, 0, 0, TN_END, 2)))
GF(l_dot_self, tn_dot(IN0, IN0))
GF(l_outer, tn_outer(IN0, tn_slice(IN1, 0, 1, TN_END, 2)))
GF(l_addmm, tn_addmm(IN0, IN1, IN2, .beta = 0.5, .alpha = 2.0))     /* [3] + [2,4] @ [4,3] */
GF(l_addmm_t, tn_addmm(IN0, tn_t(IN1), IN2)) /* [2,3] + [4,2]^T @ [4,3] */
GF(l_addmm_b0, tn_addmm(IN0, IN1, IN2, .beta = 0, .alpha = -1))     /* beta 0: input gets a zero gradient */
GF(l_baddbmm, tn_baddbmm(IN0, IN1, IN2, .beta = -0.5, .alpha = 1.5))  /* [3] + [2,2,4] @ [2,4,3] */
GF(l_baddbmm_full, tn_baddbmm(IN0, IN1, tn_transpose(IN2, 1, 2), .beta = 2))
GF(l_matmul, tn_matmul(IN0, IN1))
GF(l_matmul_t, tn_matmul(tn_t(IN0), IN1))

TEST(gc_linalg) {
    BEGIN;
    GC(l_mm, RN(3, 2), RN(3, 4));
    GC(l_mm_t2, RN(2, 3), RN(4, 3));
    GC(l_mm_self, RN(2, 3));
    GC(l_bmm, RN(2, 2, 3), RN(2, 2, 3));
    GC(l_mv, RN(3, 2), RN(3));
    GC(l_mv_step, RN(2, 3), RN(6));
    GC(l_dot, RN(3), RN(6));
    GC(l_dot_self, RN(4));
    GC(l_outer, RN(3), RN(4));
    GC(l_addmm, RN(3), RN(2, 4), RN(4, 3));
    GC(l_addmm_t, RN(2, 3), RN(4, 2), RN(4, 3));
    GC(l_addmm_b0, RN(2, 3), RN(2, 2), RN(2, 3));
    GC(l_baddbmm, RN(3), RN(2, 2, 4), RN(2, 4, 3));
    GC(l_baddbmm_full, RN(2, 2, 3), RN(2, 2, 2), RN(2, 3, 2));
    /* matmul in all its forms */
    GC(l_matmul, RN(3), RN(3));               /* dot */
    GC(l_matmul, RN(2, 3), RN(3));            /* mv */
    GC(l_matmul, RN(3), RN(3, 2));            /* vector @ matrix */
    GC(l_matmul, RN(2, 3), RN(3, 2));         /* mm */
    GC(l_matmul_t, RN(3, 2), RN(3, 2));       /* transposed operand */
    GC(l_matmul, RN(2, 2, 3), RN(2, 3, 2));   /* bmm */
    GC(l_matmul, RN(2, 2, 3), RN(3, 2));      /* batch @ matrix */
    GC(l_matmul, RN(2, 3), RN(2, 3, 2));      /* matrix @ batch */
    GC(l_matmul, RN(3), RN(2, 3, 2));         /* vector @ batch */
    GC(l_matmul, RN(2, 2, 3), RN(3));         /* batch @ vector */
    GC(l_matmul, RN(2, 1, 1, 2), RN(3, 2, 1)); /* broadcast batch dims [2,1] x [3] */
    GC(l_matmul, RN(1, 2, 3), RN(2, 3, 1));   /* broadcast batch 1 x 2 */
    END;
}

/* ---- dtype conversion, clone, contiguous ---- */
GF(c_to32, tn_to_dtype(tn_mul_scalar(tn_to_dtype(IN0, TN_F32), 3), TN_F64))
GF(c_to32_sq, tn_to_dtype(tn_square(tn_to_dtype(tn_t(IN0), TN_F32)), TN_F64))
GF(c_to64, tn_square(tn_to_dtype(tn_t(IN0), TN_F64)))               /* float32 input */
GF(c_clone, tn_mul(tn_clone(tn_t(IN0)), IN1))
GF(c_contig, tn_square(tn_contiguous(tn_t(IN0))))
GF(c_contig_noop, tn_square(tn_contiguous(IN0)))
GF(c_mixed, tn_mul(IN0, IN1))                                       /* float32 * float64 -> float64 */

TEST(gc_convert) {
    BEGIN;
    /* float32 steps round: larger eps and tolerances */
    GCT(c_to32, 1e-3, 1e-3, 1e-2, RN(2, 3));
    GCT(c_to32_sq, 1e-3, 1e-3, 1e-2, RN(3, 2));
    GCT(c_to64, 1e-2, 1e-3, 1e-2, leaf(tn_randn(SH(3, 2), TN_F32)));
    GC(c_clone, RN(3, 2), RN(2, 3));
    GC(c_contig, RN(3, 2));
    GC(c_contig_noop, RN(3, 2));
    GCT(c_mixed, 1e-2, 1e-3, 1e-2, leaf(tn_randn(SH(2, 3), TN_F32)), RN(3));
    END;
}

/* ---- in-place ops under autograd (on a non-leaf copy of the input) ---- */
#define IPF(name, ...) static tn_tensor *name(tn_tensor *const *in_, int n_, void *u_) { \
    (void)n_; (void)u_; tn_tensor *y = tn_mul_scalar(IN0, 1.5); __VA_ARGS__; return y; }
IPF(ip_add, tn_add_(y, IN1))
IPF(ip_add_alpha, tn_add_alpha_(y, IN1, 0.5))
IPF(ip_sub, tn_sub_(y, IN1))
IPF(ip_mul, tn_mul_(y, IN1))
IPF(ip_div, tn_div_(y, IN1))
IPF(ip_pow, tn_pow_(y, IN1))
IPF(ip_add_scalar, tn_add_scalar_(y, 2))
IPF(ip_mul_scalar, tn_mul_scalar_(y, -3))
IPF(ip_neg, tn_neg_(y))
IPF(ip_exp, tn_exp_(y))
IPF(ip_relu, tn_relu_(y))
IPF(ip_sigmoid, tn_sigmoid_(y))
IPF(ip_tanh, tn_tanh_(y))
IPF(ip_sqrt, tn_sqrt_(y))
IPF(ip_clamp, tn_clamp_(y, .min = -0.6, .max = 0.6))
IPF(ip_addcmul, tn_addcmul_(y, IN1, IN2, .value = 0.5))
IPF(ip_addcdiv, tn_addcdiv_(y, IN1, IN2, .value = -0.5))
IPF(ip_lerp, tn_lerp_(y, IN1, 0.25))
IPF(ip_fill, tn_fill_(y, 2); y = tn_mul(y, IN1))
IPF(ip_zero, tn_zero_(y); y = tn_add(y, IN1))
IPF(ip_copy, (void)tn_copy_(y, IN1))
IPF(ip_copy_then, (void)tn_copy_(y, IN1); y = tn_mul(y, IN0))
IPF(ip_index_put, tn_index_put_(y, UARGS(U0), 1, IN1))
IPF(ip_index_put_acc, tn_index_put_(y, UARGS(U0), 1, IN1, .accumulate = true))
IPF(ip_masked_fill, tn_masked_fill_(y, U0, 0.5))
IPF(ip_scatter, tn_scatter_(y, 1, U0, IN1))
IPF(ip_scatter_add, tn_scatter_add_(y, 1, U0, IN1))
IPF(ip_chain, tn_mul_(y, IN1); tn_add_scalar_(y, 1); tn_exp_(y); tn_mul_(y, IN0))
IPF(ip_into_plain, tn_tensor *z = tn_zeros(SH(2, 3), TN_F64); tn_add_(z, y); tn_mul_(z, IN1); y = z)

TEST(gc_inplace) {
    BEGIN;
    GC(ip_add, RN(2, 3), RN(3));
    GC(ip_add_alpha, RN(2, 3), RN(2, 1));
    GC(ip_sub, RN(2, 3), RN(3));
    GC(ip_mul, RN(2, 3), RN(3));
    GC(ip_div, RN(2, 3), POS(3));
    GC(ip_pow, POS(2, 3), RN(3));
    GC(ip_add_scalar, RN(2, 3));
    GC(ip_mul_scalar, RN(2, 3));
    GC(ip_neg, RN(2, 3));
    GC(ip_exp, RN(2, 3));
    GC(ip_relu, NZ(2, 3));
    GC(ip_sigmoid, RN(2, 3));
    GC(ip_tanh, RN(2, 3));
    GC(ip_sqrt, POS(2, 3));
    GC(ip_clamp, LD(D(-1.2, -0.3, 0.1, 0.7, 0.35, -0.8), 2, 3));
    GC(ip_addcmul, RN(2, 3), RN(3), RN(2, 1));
    GC(ip_addcdiv, RN(2, 3), RN(3), POS(2, 1));
    GC(ip_lerp, RN(2, 3), RN(3));
    GC(ip_fill, RN(2, 3), RN(3));
    GC(ip_zero, RN(2, 3), RN(3));
    GC(ip_copy, RN(2, 3), RN(3));
    GC(ip_copy_then, RN(2, 3), RN(3));
    GCU(ip_index_put, UARGS(IDX(I(1, 0), 2)), RN(3, 2), RN(2, 2));
    GCU(ip_index_put_acc, UARGS(IDX(I(1, 1, 2), 3)), RN(3, 2), RN(2));
    GCU(ip_masked_fill, UARGS(MASK(B(true, false, false, true, true, false), 2, 3)), RN(2, 3));
    GCU(ip_scatter, UARGS(IDX(I(2, 0, 1, 2), 2, 2)), RN(2, 3), RN(2, 2));
    GCU(ip_scatter_add, UARGS(IDX(I(2, 2, 1, 0), 2, 2)), RN(2, 3), RN(2, 2));
    GC(ip_chain, UNIT(2, 3), UNIT(3));
    GC(ip_into_plain, RN(2, 3), RN(3));
    END;
}

/* ---- 0-d inputs ---- */
GF(z_exp, tn_exp(IN0))
GF(z_sum, tn_sum(tn_square(IN0)))
GF(z_mean_dim, tn_mean_dims(IN0, TN_DIMS(0)))
GF(z_mul, tn_mul(IN0, IN1))                       /* 0-d * [2,3] */
GF(z_add_0d, tn_add(IN0, IN1))                    /* 0-d + 0-d */
GF(z_unsqueeze, tn_square(tn_reshape(IN0, SH(1, 1))))
GF(z_max_dim, tn_max_dim(IN0, 0, NULL))
GF(z_softmax, tn_log_softmax(IN0, 0))
GF(z_cumsum, tn_cumsum(IN0, 0))
GF(z_cumprod, tn_cumprod(IN0, 0))
GF(z_sort, tn_sort(IN0, NULL, .dim = 0))
GF(z_prod, tn_prod(IN0))
GF(z_stack, tn_stack(UARGS(IN0, IN1, IN0), 3))
GF(z_where, tn_where(U0, IN0, IN1))               /* 0-d and [2,3] */
GF(z_index_select, tn_index_select(IN0, 0, U0))

TEST(gc_zero_dim) {
    BEGIN;
    GC(z_exp, RN0);
    GC(z_sum, RN0);
    GC(z_mean_dim, RN0);
    GC(z_mul, RN0, RN(2, 3));
    GC(z_add_0d, RN0, RN0);
    GC(z_unsqueeze, RN0);
    GC(z_max_dim, RN0);
    GC(z_softmax, RN0);
    GC(z_cumsum, RN0);
    GC(z_cumprod, NZ0);
    GC(z_sort, RN0);
    GC(z_prod, RN0);
    GC(z_stack, RN0, RN0);
    GCU(z_where, UARGS(MASK(B(true, false, true, false, false, true), 2, 3)), RN0, RN(2, 3));
    GCU(z_index_select, UARGS(IDX(I(0, 0), 2)), RN0);
    END;
}

/* ---- higher order: gradgradcheck of a function that is itself a gradient (third derivatives) ---- */
typedef tn_tensor *(*unary_fn)(tn_tensor *);
static tn_tensor *ho_grad(tn_tensor *const *in_, int n_, void *u_) {
    (void)n_;
    unary_fn f = *(unary_fn *)u_;
    tn_tensor *x = IN0, *out = tn_sum(f(tn_t(x))), *r = NULL;
    bool recording = tn_is_grad_enabled();
    if (!recording) tn_enable_grad_begin();   /* finite differences run under no_grad */
    if (!out || !out->requires_grad) out = tn_sum(f(tn_t(x)));
    int rc = tn_autograd_grad(&out, 1, &x, 1, NULL, &r, .create_graph = true);
    if (!recording) tn_enable_grad_end();
    return rc ? NULL : r;
}
static tn_tensor *hf_exp(tn_tensor *x) { return tn_exp(x); }
static tn_tensor *hf_tanh(tn_tensor *x) { return tn_tanh(x); }
static tn_tensor *hf_sigmoid(tn_tensor *x) { return tn_sigmoid(x); }
static tn_tensor *hf_sqrt(tn_tensor *x) { return tn_sqrt(x); }
static tn_tensor *hf_rsqrt(tn_tensor *x) { return tn_rsqrt(x); }
static tn_tensor *hf_expm1(tn_tensor *x) { return tn_expm1(x); }
static tn_tensor *hf_exp2(tn_tensor *x) { return tn_exp2(x); }
static tn_tensor *hf_log(tn_tensor *x) { return tn_log(x); }
static tn_tensor *hf_gelu(tn_tensor *x) { return tn_gelu(x); }
static tn_tensor *hf_gelu_tanh(tn_tensor *x) { return tn_gelu(x, .approximate = TN_APPROXIMATE_TANH); }
static tn_tensor *hf_silu(tn_tensor *x) { return tn_silu(x); }
static tn_tensor *hf_softplus(tn_tensor *x) { return tn_softplus(x); }
static tn_tensor *hf_softmax(tn_tensor *x) { return tn_mul(tn_softmax(x, 1), tn_cos(x)); }
static tn_tensor *hf_log_softmax(tn_tensor *x) { return tn_mul(tn_log_softmax(x, 0), tn_sin(x)); }
static tn_tensor *hf_prod(tn_tensor *x) { return tn_prod_dims(x, TN_DIMS(1)); }
static tn_tensor *hf_cumprod(tn_tensor *x) { return tn_cumprod(x, 1); }
static tn_tensor *hf_var(tn_tensor *x) { return tn_mul(tn_var_dims(x, TN_DIMS(1), .keepdim = true), x); }
static tn_tensor *hf_norm(tn_tensor *x) { return tn_norm_dims(x, TN_DIMS(0), .p = 3); }
static tn_tensor *hf_lse(tn_tensor *x) { return tn_square(tn_logsumexp(x, TN_DIMS(1))); }
static tn_tensor *hf_pow(tn_tensor *x) { return tn_pow_scalar(x, 3.5); }
static tn_tensor *hf_mm(tn_tensor *x) { return tn_tanh(tn_mm(x, tn_t(x))); }
static tn_tensor *hf_atan2(tn_tensor *x) { return tn_atan2(x, tn_flip(x, TN_DIMS(1))); }
static tn_tensor *hf_div(tn_tensor *x) { return tn_div(tn_sin(x), tn_add_scalar(tn_square(x), 1)); }

TEST(gc_higher_order) {
    BEGIN;
    static unary_fn fs[] = {hf_exp, hf_tanh, hf_sigmoid, hf_expm1, hf_exp2, hf_gelu, hf_gelu_tanh, hf_silu, hf_softplus,
                            hf_softmax, hf_log_softmax, hf_var, hf_lse, hf_mm, hf_atan2, hf_div};
    static const char *names[] = {"exp", "tanh", "sigmoid", "expm1", "exp2", "gelu", "gelu_tanh", "silu", "softplus",
                                  "softmax", "log_softmax", "var", "logsumexp", "mm", "atan2", "div"};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++)
        gc_run(names[k], ho_grad, (tn_tensor *[]){RN(3, 2)}, 1, &fs[k], 2, 0, 0, 0, __LINE__);
    static unary_fn fp[] = {hf_sqrt, hf_rsqrt, hf_log, hf_prod, hf_cumprod, hf_norm, hf_pow};
    static const char *pnames[] = {"sqrt", "rsqrt", "log", "prod", "cumprod", "norm3", "pow3.5"};
    for (size_t k = 0; k < sizeof fp / sizeof fp[0]; k++)
        gc_run(pnames[k], ho_grad, (tn_tensor *[]){POS(3, 2)}, 1, &fp[k], 2, 0, 0, 0, __LINE__);
    END;
}

/* ---- gradcheck itself: a wrong gradient is caught ---- */
static tn_tensor *wrong_fn(tn_tensor *const *in_, int n_, void *u_) {
    (void)n_; (void)u_;
    /* x * detach(x) looks like x^2 numerically but its analytical gradient is x, not 2x */
    return tn_mul(IN0, tn_detach(IN0));
}
TEST(gradcheck_detects_errors) {
    BEGIN;
    tn_tensor *x = RN(2, 3);
    CHECK_ERR(tn_gradcheck(wrong_fn, &x, 1, NULL), "Jacobian mismatch");
    tn_tensor *nc = tn_t(RN(3, 2));  /* non-contiguous inputs are refused */
    CHECK_ERR(tn_gradcheck(u_exp, &nc, 1, NULL), "contiguous");
    CHECK(tn_grad(x) == NULL);
    END;
}

/* ==================================================================================== */
/* 2. semantics                                                                           */
/* ==================================================================================== */
TEST(sem_leaf_and_requires_grad) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    CHECK(tn_is_leaf(x));
    CHECK(tn_requires_grad(x));
    CHECK(tn_grad_fn_name(x) == NULL);
    CHECK(tn_grad(x) == NULL);
    tn_tensor *c = tn_ones(SH(3), TN_F64);
    CHECK(tn_is_leaf(c) && !tn_requires_grad(c));
    tn_tensor *y = tn_mul(x, c);
    CHECK(!tn_is_leaf(y));
    CHECK(tn_requires_grad(y));
    tn_tensor *z = tn_add(c, c);
    CHECK(tn_is_leaf(z) && !tn_requires_grad(z));
    CHECK(tn_requires_grad(tn_add(c, y)));
    /* views of a leaf are not leaves */
    tn_tensor *v = tn_unsqueeze(x, 0);
    CHECK(!tn_is_leaf(v) && tn_requires_grad(v));
    /* int and bool results never require grad */
    CHECK(!tn_requires_grad(tn_argmax(y)));
    CHECK(!tn_requires_grad(tn_argmin_dim(y, .dim = 0)));
    CHECK(!tn_requires_grad(tn_gt_scalar(y, 1)));
    CHECK(!tn_requires_grad(tn_eq(y, x)));
    CHECK(!tn_requires_grad(tn_isnan(y)));
    CHECK(!tn_requires_grad(tn_to_dtype(y, TN_I64)));
    CHECK(tn_is_leaf(tn_to_dtype(y, TN_I64)));
    CHECK(!tn_requires_grad(tn_nonzero(y)));
    tn_tensor *idx = NULL, *mx = tn_max_dim(y, 0, &idx);
    CHECK(tn_requires_grad(mx) && idx && !tn_requires_grad(idx));
    tn_tensor *sidx = NULL, *sv = tn_sort(y, &sidx, .dim = 0, .descending = true);
    CHECK(tn_requires_grad(sv) && sidx && !tn_requires_grad(sidx));
    tn_tensor *kidx = NULL, *kv = tn_topk(y, 2, &kidx, .dim = 0);
    CHECK(tn_requires_grad(kv) && kidx && !tn_requires_grad(kidx));
    /* piecewise-constant float ops are differentiable (zero gradient), as in PyTorch */
    CHECK(tn_requires_grad(tn_floor(y)));
    CHECK(tn_requires_grad(tn_sign(y)));
    tn_tensor *fl = tn_sum(tn_add(tn_floor(tn_mul_scalar(x, 1.5)), tn_round(x)));
    CHECK(tn_backward(fl) == 0);
    CHECK_VALS(tn_grad(x), 0, 0, 0, 0);
    tn_set_grad(x, NULL);
    /* requires_grad_ */
    tn_tensor *it = tn_arange(0, 3, 1, TN_I64);
    CHECK_ERR(tn_requires_grad_(it, true) == 0, "floating point");
    CHECK(tn_requires_grad_(it, false) == 0);
    CHECK_ERR(tn_requires_grad_(y, false) == 0, "leaf");
    CHECK(tn_requires_grad_(x, false) == 0 && !tn_requires_grad(x));
    CHECK(!tn_requires_grad(tn_mul(x, c)));
    CHECK(tn_requires_grad_(x, true) == 0 && tn_requires_grad(x));
    CHECK(tn_requires_grad_(NULL, true) != 0);
    /* float32 leaves too */
    tn_tensor *f = leaf(tn_ones(SH(2), TN_F32));
    CHECK(f && tn_requires_grad(tn_exp(f)));
    END;
}

TEST(sem_grad_accumulates) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);
    CHECK_VALS(tn_grad(x), 0, 2, 4, 6);
    CHECK(tn_grad(x) && !tn_requires_grad(tn_grad(x)) && tn_is_leaf(tn_grad(x)));
    CHECK(tn_get_dtype(tn_grad(x)) == TN_F64);
    CHECK_SHAPE(tn_grad(x), 3);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);          /* a second graph: .grad adds up */
    CHECK_VALS(tn_grad(x), 0, 4, 8, 12);
    CHECK(tn_backward(tn_dot(x, x)) == 0);
    CHECK_VALS(tn_grad(x), 0, 6, 12, 18);
    CHECK(tn_set_grad(x, NULL) == 0 && tn_grad(x) == NULL);
    CHECK(tn_backward(tn_sum(tn_exp(x))) == 0);
    CHECK_VALS(tn_grad(x), 1e-12, exp(1), exp(2), exp(3));
    /* a user-set .grad is accumulated into */
    CHECK(tn_set_grad(x, tn_ones(SH(3), TN_F64)) == 0);
    CHECK(tn_backward(tn_sum(tn_mul_scalar(x, 3))) == 0);
    CHECK_VALS(tn_grad(x), 0, 4, 4, 4);
    CHECK_ERR(tn_set_grad(x, tn_ones(SH(2), TN_F64)) == 0, "shape");
    CHECK_ERR(tn_set_grad(x, tn_ones(SH(3), TN_F32)) == 0, "dtype");
    CHECK_VALS(tn_grad(x), 0, 4, 4, 4);
    /* the same leaf used twice in one graph: both paths add */
    tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_sum(tn_add(tn_mul_scalar(x, 2), tn_exp(tn_neg(x))))) == 0);
    CHECK_VALS(tn_grad(x), 1e-12, 2 - exp(-1), 2 - exp(-2), 2 - exp(-3));
    /* diamond: y used by two consumers */
    tn_set_grad(x, NULL);
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(tn_backward(tn_sum(tn_mul(tn_sin(y), tn_cos(y)))) == 0);   /* d/dx sin(2x)cos(2x) = 2 cos(4x) */
    CHECK_VALS(tn_grad(x), 1e-12, 2 * cos(4), 2 * cos(8), 2 * cos(12));
    END;
}

TEST(sem_retain_graph) {
    BEGIN;
    tn_tensor *x = LD(D(0.5, 1, 1.5), 3);
    tn_tensor *y = tn_sum(tn_exp(x));
    CHECK(tn_backward(y) == 0);
    CHECK_VALS(tn_grad(x), 1e-12, exp(0.5), exp(1), exp(1.5));
    CHECK_ERR(tn_backward(y) == 0, "second time");
    CHECK_VALS(tn_grad(x), 1e-12, exp(0.5), exp(1), exp(1.5));   /* unchanged by the failed call */
    tn_set_grad(x, NULL);
    tn_tensor *y2 = tn_sum(tn_mul(tn_exp(x), x));
    CHECK(tn_backward(y2, .retain_graph = true) == 0);
    CHECK(tn_backward(y2, .retain_graph = true) == 0);
    CHECK(tn_backward(y2) == 0);
    CHECK_VALS(tn_grad(x), 1e-12, 3 * 1.5 * exp(0.5), 3 * 2 * exp(1), 3 * 2.5 * exp(1.5));
    CHECK_ERR(tn_backward(y2) == 0, "second time");
    /* autograd_grad releases the graph too */
    tn_tensor *y3 = tn_sum(tn_sin(x)), *g = NULL;
    CHECK(tn_autograd_grad(&y3, 1, &x, 1, NULL, &g) == 0);
    CHECK_VALS(g, 1e-12, cos(0.5), cos(1), cos(1.5));
    CHECK_ERR(tn_autograd_grad(&y3, 1, &x, 1, NULL, &g) == 0, "second time");
    END;
}

/* PyTorch frees only saved tensors: a graph whose nodes save nothing ((x + 1).sum())
   can be walked again without retain_graph. */
TEST(sem_backward_twice_without_saved_tensors) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_sum(tn_add_scalar(x, 1));
    CHECK(tn_backward(y) == 0);
    tn_clear_error();
    CHECK_MSG(tn_backward(y) == 0, "second backward of (x + 1).sum() failed: %s", tn_last_error());
    CHECK_VALS(tn_grad(x), 0, 2, 2, 2);
    END;
}

TEST(sem_create_graph) {
    BEGIN;
    /* d/dx x^3 = 3x^2, d2 = 6x, d3 = 6 at x = 2 */
    tn_tensor *x = leaf(tn_scalar_tensor(2, TN_F64));
    tn_tensor *y = tn_pow_scalar(x, 3);
    tn_tensor *g1 = grad1(y, x, true);
    CHECK_VALS(g1, 1e-12, 12);
    CHECK(g1 && tn_requires_grad(g1) && !tn_is_leaf(g1));
    tn_tensor *g2 = grad1(g1, x, true);
    CHECK_VALS(g2, 1e-12, 12);
    CHECK(g2 && tn_requires_grad(g2));
    tn_tensor *g3 = grad1(g2, x, false);
    CHECK_VALS(g3, 1e-12, 6);
    CHECK(g3 && !tn_requires_grad(g3) && tn_is_leaf(g3));
    CHECK(tn_grad(x) == NULL);
    /* x * x * x through mul (not pow) */
    tn_tensor *m = tn_mul(tn_mul(x, x), x);
    tn_tensor *h1 = grad1(m, x, true);
    CHECK_VALS(h1, 1e-12, 12);
    CHECK_VALS(grad1(h1, x, false), 1e-12, 12);
    /* without create_graph the gradient has no history */
    tn_tensor *p = grad1(tn_pow_scalar(x, 3), x, false);
    CHECK(p && !tn_requires_grad(p));
    /* sin: second derivative -sin */
    tn_tensor *s = LD(D(0.3, 1.2, -0.7), 3);
    tn_tensor *gs = grad1(tn_sum(tn_sin(s)), s, true);
    CHECK_VALS(gs, 1e-12, cos(0.3), cos(1.2), cos(-0.7));
    CHECK_VALS(grad1(tn_sum(gs), s, false), 1e-12, -sin(0.3), -sin(1.2), -sin(-0.7));
    /* mixed partials: f = x^2 y; df/dx = 2xy; d/dy(df/dx) = 2x */
    tn_tensor *a = LD(D(1.5, -2), 2), *b = LD(D(0.5, 3), 2);
    tn_tensor *f = tn_sum(tn_mul(tn_square(a), b));
    tn_tensor *ga = grad1(f, a, true);
    CHECK_VALS(ga, 1e-12, 1.5, -12);
    tn_tensor *gab = grad1(tn_sum(ga), b, false);
    CHECK_VALS(gab, 1e-12, 3, -4);
    /* tn_backward(.create_graph = true): .grad has history; its backward accumulates (PyTorch: 12 + 12) */
    tn_tensor *y4 = tn_pow_scalar(x, 3);
    CHECK(tn_backward(y4, .create_graph = true) == 0);
    CHECK_VALS(tn_grad(x), 1e-12, 12);
    CHECK(tn_grad(x) && tn_requires_grad(tn_grad(x)));
    tn_tensor *gx = tn_grad(x);
    tn_retain(gx);
    CHECK(tn_backward(gx) == 0);
    CHECK_VALS(tn_grad(x), 1e-12, 24);
    tn_release(gx);
    tn_set_grad(x, NULL);  /* break the x -> grad -> graph -> x cycle, as PyTorch advises */
    /* softmax / log_softmax second derivatives through recorded backward formulas */
    tn_tensor *q = LD(D(0.1, -0.4, 0.9), 3);
    tn_tensor *gq = grad1(tn_sum(tn_mul(tn_softmax(q, 0), LD(D(1, 2, 3), 3))), q, true);
    CHECK(gq && tn_requires_grad(gq));
    END;
}

TEST(sem_autograd_grad) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3), *w = LD(D(-1, 0.5, 2), 3), *u = LD(D(7, 8, 9), 3);
    tn_tensor *y = tn_mul(x, w), *v = mk(D(1, 2, 3), SH(3));
    tn_tensor *ins[2] = {x, w}, *res[2] = {NULL, NULL};
    CHECK(tn_autograd_grad(&y, 1, ins, 2, &v, res, .retain_graph = true) == 0);
    CHECK_VALS(res[0], 0, -1, 1, 6);      /* v * w */
    CHECK_VALS(res[1], 0, 1, 4, 9);       /* v * x */
    CHECK(tn_grad(x) == NULL && tn_grad(w) == NULL);   /* .grad untouched */
    CHECK(res[0] && !tn_requires_grad(res[0]));
    /* several outputs (summed contributions), implicit ones for one-element outputs */
    tn_tensor *outs[2] = {tn_sum(tn_mul(x, x)), tn_sum(y)};
    CHECK(tn_autograd_grad(outs, 2, &x, 1, NULL, res, .retain_graph = true) == 0);
    CHECK_VALS(res[0], 0, 2 - 1, 4 + 0.5, 6 + 2);
    /* unused input */
    tn_tensor *ins2[2] = {x, u};
    CHECK_ERR(tn_autograd_grad(&outs[0], 1, ins2, 2, NULL, res, .retain_graph = true) == 0, "not have been used");
    CHECK(tn_autograd_grad(&outs[0], 1, ins2, 2, NULL, res, .retain_graph = true, .allow_unused = true) == 0);
    CHECK_VALS(res[0], 0, 2, 4, 6);
    CHECK(res[1] == NULL);
    /* a non-leaf input: d/dh sum(h*h) = 2h */
    tn_tensor *h = tn_mul_scalar(x, 2);
    tn_tensor *s = tn_sum(tn_mul(h, h));
    CHECK(tn_autograd_grad(&s, 1, &h, 1, NULL, res, .retain_graph = true) == 0);
    CHECK_VALS(res[0], 0, 4, 8, 12);
    /* and the leaf behind it in the same call */
    tn_tensor *hx[2] = {h, x};
    CHECK(tn_autograd_grad(&s, 1, hx, 2, NULL, res, .retain_graph = true) == 0);
    CHECK_VALS(res[0], 0, 4, 8, 12);
    CHECK_VALS(res[1], 0, 8, 16, 24);
    /* errors */
    tn_tensor *c = tn_ones(SH(3), TN_F64);
    CHECK_ERR(tn_autograd_grad(&y, 1, &x, 1, NULL, res, .retain_graph = true) == 0, "scalar outputs");
    tn_tensor *cs = tn_sum(c);
    CHECK_ERR(tn_autograd_grad(&cs, 1, &x, 1, NULL, res, .retain_graph = true) == 0, "does not require grad");
    CHECK_ERR(tn_autograd_grad(&s, 1, &c, 1, NULL, res, .retain_graph = true) == 0, "does not require grad");
    CHECK(tn_grad(x) == NULL && tn_grad(w) == NULL && tn_grad(u) == NULL);
    END;
}

TEST(sem_retain_grad) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2), 2);
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(tn_retain_grad(y) == 0);
    tn_tensor *w = tn_add_scalar(y, 1);     /* not retained */
    tn_tensor *z = tn_sum(tn_mul(y, y));
    CHECK(tn_backward(z, .retain_graph = true) == 0);
    CHECK_VALS(tn_grad(y), 0, 4, 8);
    CHECK_VALS(tn_grad(x), 0, 8, 16);
    CHECK(tn_grad(w) == NULL);
    CHECK(tn_grad(y) && !tn_requires_grad(tn_grad(y)));
    CHECK(tn_backward(z) == 0);                   /* accumulates, as PyTorch's retained grads */
    CHECK_VALS(tn_grad(y), 0, 8, 16);
    CHECK_VALS(tn_grad(x), 0, 16, 32);
    /* retain_grad on a leaf is a no-op */
    CHECK(tn_retain_grad(x) == 0);
    CHECK_ERR(tn_retain_grad(tn_ones(SH(2), TN_F64)) == 0, "requires_grad");
    /* a retained non-leaf that is also the root */
    tn_tensor *r = tn_exp(x);
    CHECK(tn_retain_grad(r) == 0);
    CHECK(tn_backward(r, .gradient = mk(D(3, 4), SH(2))) == 0);
    CHECK_VALS(tn_grad(r), 0, 3, 4);
    END;
}

/* An elementwise backward (relu's, a unary op's g * d) writes into the incoming gradient
   when nothing but the engine holds it: one buffer less at the peak. Where a hook, a
   retained .grad or a view keeps that gradient, it must stay untouched. */
static tn_tensor *g_kept;
static tn_tensor *hook_keep(tn_tensor *g, void *u) { (void)u; tn_release(g_kept); g_kept = tn_retain(g); return NULL; }
TEST(sem_grad_reuse) {
    BEGIN;
    tn_tensor *x = LD(D(-1, 2, -3, 4), 4);
    /* relu(x) * 3, then exp: the relu node receives 3 from mul's backward */
    tn_tensor *y = tn_relu(x), *z = tn_mul_scalar(y, 3);
    CHECK(tn_retain_grad(y) == 0);
    CHECK(tn_backward(tn_sum(z)) == 0);
    CHECK_VALS(tn_grad(y), 0, 3, 3, 3, 3);       /* the retained gradient, not relu's masked result */
    CHECK_VALS(tn_grad(x), 0, 0, 3, 0, 3);
    tn_set_grad(x, NULL);
    y = tn_relu(x);
    z = tn_mul_scalar(y, 2);
    int h = tn_register_hook(y, hook_keep, NULL);
    CHECK(h >= 0);
    CHECK(tn_backward(tn_sum(z)) == 0);
    CHECK_VALS(g_kept, 0, 2, 2, 2, 2);           /* the hook's reference keeps its values */
    CHECK_VALS(tn_grad(x), 0, 0, 2, 0, 2);
    tn_release(g_kept);
    g_kept = NULL;
    /* a unary chain: sigmoid(exp(x)) * w, nothing retained (the reuse happens) */
    tn_set_grad(x, NULL);
    tn_tensor *w = LD(D(1, 2, 3, 4), 4);
    CHECK(tn_backward(tn_sum(tn_mul(tn_sigmoid(tn_exp(x)), w))) == 0);
    const double xv[4] = {-1, 2, -3, 4}, wv[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++) {
        const double e = exp(xv[i]), sg = 1 / (1 + exp(-e));
        CHECK_MSG(fabs(tn_item(tn_select(tn_grad(x), 0, i)) - wv[i] * sg * (1 - sg) * e) < 1e-12, "d/dx sigmoid(exp(x)) * w at %d", i);
    }
    /* float32 [256, 1024] relu chain: the first relu backward makes the gradient, the other
       two write into it and the leaf's .grad takes it; one gradient at a time, not two */
    tn_tensor *a = tn_randn(SH(256, 1024), TN_F32);
    tn_requires_grad_(a, true);
    tn_tensor *l = tn_sum(tn_relu(tn_relu(tn_relu(a))));
    tn_memory_stats_reset_peak();
    const int64_t base = tn_memory_stats_get().live_bytes, mb = 256 * 1024 * 4;
    CHECK(tn_backward(l) == 0);
    const int64_t peak = tn_memory_stats_get().peak_bytes - base;
    CHECK_MSG(peak <= mb + 65536, "backward of a relu chain peaked at %lld bytes above the start (one gradient = %lld)", (long long)peak, (long long)mb);
    CHECK(tn_grad(a) && tn_equal(tn_grad(a), tn_to_dtype(tn_gt_scalar(a, 0), tn_get_dtype(a))));
    END;
}

typedef struct { int calls; double sum; } hook_rec;
static tn_tensor *hook_read(tn_tensor *g, void *u) {
    hook_rec *r = (hook_rec *)u;
    r->calls++;
    r->sum += tn_item(tn_sum(g));
    return NULL;
}
static tn_tensor *hook_double(tn_tensor *g, void *u) { (void)u; return tn_mul_scalar(g, 2); }
static tn_tensor *hook_zero(tn_tensor *g, void *u) { (void)u; return tn_zeros_like(g); }

TEST(sem_hooks) {
    BEGIN;
    hook_rec rec = {0, 0}, rec2 = {0, 0};
    tn_tensor *x = LD(D(1, 2, 3), 3);
    int h_read = tn_register_hook(x, hook_read, &rec);
    CHECK(h_read >= 0);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);
    CHECK(rec.calls == 1);
    CHECK_CLOSE(rec.sum, 12, 1e-12);
    CHECK_VALS(tn_grad(x), 0, 2, 4, 6);
    /* a replacing hook on the leaf: .grad gets the doubled gradient; hooks run in order */
    int h_dbl = tn_register_hook(x, hook_double, NULL);
    CHECK(h_dbl >= 0 && h_dbl != h_read);
    tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);
    CHECK_VALS(tn_grad(x), 0, 4, 8, 12);
    CHECK(rec.calls == 2);
    CHECK_CLOSE(rec.sum, 24, 1e-12);       /* the read hook saw the original 12 */
    CHECK(tn_remove_hook(x, h_read) == 0);
    CHECK_ERR(tn_remove_hook(x, h_read) == 0, "no hook");
    CHECK_ERR(tn_remove_hook(x, 12345) == 0, "no hook");
    tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_sum(x)) == 0);
    CHECK_VALS(tn_grad(x), 0, 2, 2, 2);
    CHECK(rec.calls == 2);
    CHECK(tn_remove_hook(x, h_dbl) == 0);
    tn_set_grad(x, NULL);
    /* hooks on a non-leaf: y = 3x, z = sum(y^2), dz/dy = 6x */
    tn_tensor *y = tn_mul_scalar(x, 3);
    int hy_read = tn_register_hook(y, hook_read, &rec2);
    int hy_dbl = tn_register_hook(y, hook_double, NULL);
    CHECK(hy_read >= 0 && hy_dbl >= 0);
    tn_tensor *z = tn_sum(tn_mul(y, y));
    CHECK(tn_backward(z, .retain_graph = true) == 0);
    CHECK(rec2.calls == 1);
    CHECK_CLOSE(rec2.sum, 36, 1e-12);      /* 6 * (1 + 2 + 3) */
    CHECK_VALS(tn_grad(x), 0, 36, 72, 108); /* 3 * 2 * 6x */
    CHECK(tn_remove_hook(y, hy_dbl) == 0);
    tn_set_grad(x, NULL);
    CHECK(tn_backward(z, .retain_graph = true) == 0);
    CHECK_VALS(tn_grad(x), 0, 18, 36, 54);
    CHECK(rec2.calls == 2);
    /* a hook that zeroes stops the gradient */
    int hz = tn_register_hook(y, hook_zero, NULL);
    tn_set_grad(x, NULL);
    CHECK(tn_backward(z, .retain_graph = true) == 0);
    CHECK_VALS(tn_grad(x), 0, 0, 0, 0);
    CHECK(tn_remove_hook(y, hz) == 0);
    /* retain_grad sees the hooked gradient (PyTorch: retain_grad is a hook that runs last) */
    tn_tensor *y2 = tn_mul_scalar(x, 3);
    tn_register_hook(y2, hook_double, NULL);
    CHECK(tn_retain_grad(y2) == 0);
    CHECK(tn_backward(tn_sum(y2)) == 0);
    CHECK_VALS(tn_grad(y2), 0, 2, 2, 2);
    /* errors */
    CHECK_ERR(tn_register_hook(tn_ones(SH(2), TN_F64), hook_read, &rec) >= 0, "doesn't require");
    CHECK_ERR(tn_register_hook(x, NULL, NULL) >= 0, "NULL");
    END;
}

/* PyTorch 1.13: retain_grad follows the tensor through in-place ops (the gradient of the
   new value); a hook registered before the in-place op stays with the old value. */
TEST(sem_retain_grad_and_hooks_inplace) {
    BEGIN;
    hook_rec rec = {0, 0};
    tn_tensor *x = LD(D(1, 2), 2);
    tn_tensor *y = tn_mul_scalar(x, 1);
    CHECK(tn_retain_grad(y) == 0);
    CHECK(tn_register_hook(y, hook_read, &rec) >= 0);
    CHECK(tn_mul_scalar_(y, 3) != NULL);
    CHECK(tn_backward(tn_sum(tn_mul(y, y))) == 0);
    CHECK_VALS(tn_grad(x), 0, 18, 36);
    CHECK_VALS(tn_grad(y), 0, 6, 12);
    CHECK(rec.calls == 1);
    CHECK_CLOSE(rec.sum, 54, 1e-12);   /* the hook saw d/d(old y) = [18, 36] */
    END;
}

static tn_tensor *hook_bad_shape(tn_tensor *g, void *u) { (void)g; (void)u; return tn_ones(SH(2), TN_F64); }
static tn_tensor *hook_bad_dtype(tn_tensor *g, void *u) { (void)u; return tn_to_dtype(g, TN_F32); }
/* PyTorch refuses a hook result of another size or type ("hook ... has changed the size of
   value"); a wrong-shaped gradient must never reach .grad. */
TEST(sem_hook_changes_shape) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(tn_register_hook(y, hook_bad_shape, NULL) >= 0);
    tn_clear_error();
    int rc = tn_backward(tn_sum(tn_mul(y, y)));
    CHECK_MSG(rc != 0 && strstr(tn_last_error(), "hook"), "a hook returning shape [2] for [3]: rc %d, '%s'", rc, tn_last_error());
    CHECK_MSG(tn_grad(x) == NULL || tn_ndim(tn_grad(x)) == 1, "x.grad has the wrong shape");
    CHECK_MSG(tn_grad(x) == NULL || tn_shape(tn_grad(x))[0] == 3, "x.grad has the wrong shape [%lld]", (long long)tn_shape(tn_grad(x))[0]);
    tn_tensor *x2 = LD(D(1, 2, 3), 3);
    CHECK(tn_register_hook(x2, hook_bad_shape, NULL) >= 0);
    tn_clear_error();
    rc = tn_backward(tn_sum(tn_mul(x2, x2)));
    CHECK_MSG(rc != 0 && strstr(tn_last_error(), "hook"), "a leaf hook returning shape [2] for [3]: rc %d, '%s'", rc, tn_last_error());
    CHECK_MSG(tn_grad(x2) == NULL, "a wrong-shaped gradient reached .grad");
    tn_tensor *x3 = LD(D(1, 2, 3), 3);
    tn_tensor *y3 = tn_mul_scalar(x3, 2);
    CHECK(tn_register_hook(y3, hook_bad_dtype, NULL) >= 0);
    tn_clear_error();
    rc = tn_backward(tn_sum(tn_mul(y3, y3)));
    CHECK_MSG(rc != 0 && strstr(tn_last_error(), "hook"), "a hook returning float32 for float64: rc %d, '%s'", rc, tn_last_error());
    END;
}

TEST(sem_no_grad) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    CHECK(tn_is_grad_enabled());
    tn_no_grad_begin();
    CHECK(!tn_is_grad_enabled());
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(!tn_requires_grad(y) && tn_is_leaf(y) && tn_grad_fn_name(y) == NULL);
    CHECK(!tn_requires_grad(tn_sum(tn_exp(x))));
    CHECK(!tn_requires_grad(tn_t(tn_unsqueeze(x, 0))));
    CHECK(!tn_requires_grad(tn_mm(tn_unsqueeze(x, 0), tn_unsqueeze(x, 1))));
    tn_enable_grad_begin();
    CHECK(tn_is_grad_enabled());
    tn_tensor *z = tn_mul_scalar(x, 2);
    CHECK(tn_requires_grad(z));
    CHECK_NAME(z, "MulBackward0");
    tn_no_grad_begin();
    CHECK(!tn_requires_grad(tn_add(x, x)));
    tn_no_grad_end();
    CHECK(tn_requires_grad(tn_add(x, x)));
    tn_enable_grad_end();
    CHECK(!tn_is_grad_enabled());
    CHECK(!tn_requires_grad(tn_mul_scalar(x, 2)));
    tn_no_grad_begin();   /* nested no_grad */
    tn_no_grad_end();
    CHECK(!tn_is_grad_enabled());
    /* in-place on a leaf is allowed under no_grad (an optimizer step) */
    CHECK(tn_sub_(x, tn_ones(SH(3), TN_F64)) != NULL);
    tn_no_grad_end();
    CHECK(tn_is_grad_enabled());
    CHECK_VALS(x, 0, 0, 1, 2);
    CHECK(tn_requires_grad(x) && tn_is_leaf(x));
    /* z = x * 2 was recorded inside enable_grad; its backward needs no saved x (PyTorch saves
       only the scalar), so the in-place change of x above does not matter */
    CHECK(tn_backward(tn_sum(z)) == 0);
    CHECK_VALS(tn_grad(x), 0, 2, 2, 2);
    /* backward itself may run under no_grad (PyTorch allows it) */
    tn_set_grad(x, NULL);
    tn_tensor *w = tn_sum(tn_mul(x, x));
    tn_no_grad_begin();
    CHECK(tn_backward(w) == 0);
    tn_no_grad_end();
    CHECK_VALS(tn_grad(x), 0, 0, 2, 4);
    CHECK(tn_grad(x) && !tn_requires_grad(tn_grad(x)));
    /* unbalanced end */
    tn_clear_error();
    tn_no_grad_end();
    CHECK(strstr(tn_last_error(), "no matching begin") != NULL);
    tn_clear_error();
    tn_enable_grad_end();
    CHECK(strstr(tn_last_error(), "no matching begin") != NULL);
    CHECK(tn_is_grad_enabled());
    END;
}

TEST(sem_detach) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_mul_scalar(x, 2);
    tn_tensor *d = tn_detach(y);
    CHECK(d && tn_grad_fn_name(d) == NULL && !tn_requires_grad(d) && tn_is_leaf(d));
    CHECK(tn_same_storage(d, y) && tn_data_ptr(d) == tn_data_ptr(y));
    CHECK_SHAPE(d, 3);
    CHECK(tn_detach(x) && !tn_requires_grad(tn_detach(x)) && tn_same_storage(tn_detach(x), x));
    /* detach stops the gradient: d/dx (x * detach(x)) = detach(x) */
    CHECK(tn_backward(tn_sum(tn_mul(x, tn_detach(x)))) == 0);
    CHECK_VALS(tn_grad(x), 0, 1, 2, 3);
    tn_set_grad(x, NULL);
    /* writes through the detached alias are seen by the original (shared storage) and
       bump the shared version counter: a saved y is then stale */
    tn_tensor *z = tn_sum(tn_mul(y, y));
    int64_t v0 = tn_version(y);
    CHECK(tn_add_scalar_(d, 1) != NULL);
    CHECK(tn_version(y) > v0);
    CHECK_VALS(y, 0, 3, 5, 7);
    CHECK_ERR(tn_backward(z) == 0, "modified by an inplace operation");
    /* detach_ turns a non-leaf into a leaf */
    tn_tensor *e = tn_exp(x);
    CHECK(tn_detach_(e) == 0);
    CHECK(tn_is_leaf(e) && !tn_requires_grad(e) && tn_grad_fn_name(e) == NULL);
    CHECK_VALS(e, 1e-12, exp(1), exp(2), exp(3));
    END;
}

TEST(sem_grad_fn_names) {
    BEGIN;
    tn_tensor *x = RN(2, 3), *v = RN(3), *m = RN(3, 3), *b3 = RN(2, 3, 3);
    tn_tensor *idx = IDX(I(0, 1), 2);
    CHECK_NAME(tn_add(x, v), "AddBackward0");
    CHECK_NAME(tn_add_scalar(x, 1), "AddBackward0");
    CHECK_NAME(tn_sub(x, v), "SubBackward0");
    CHECK_NAME(tn_mul(x, v), "MulBackward0");
    CHECK_NAME(tn_mul_scalar(x, 2), "MulBackward0");
    CHECK_NAME(tn_div(x, v), "DivBackward0");
    CHECK_NAME(tn_div_scalar(x, 2), "DivBackward0");
    CHECK_NAME(tn_pow(tn_abs(x), v), "PowBackward1");
    CHECK_NAME(tn_rpow_scalar(2, x), "PowBackward1");
    CHECK_NAME(tn_neg(x), "NegBackward0");
    CHECK_NAME(tn_abs(x), "AbsBackward0");
    CHECK_NAME(tn_exp(x), "ExpBackward0");
    CHECK_NAME(tn_log(tn_abs(x)), "LogBackward0");
    CHECK_NAME(tn_sqrt(tn_abs(x)), "SqrtBackward0");
    CHECK_NAME(tn_sigmoid(x), "SigmoidBackward0");
    CHECK_NAME(tn_tanh(x), "TanhBackward0");
    CHECK_NAME(tn_relu(x), "ReluBackward0");
    CHECK_NAME(tn_gelu(x), "GeluBackward0");
    CHECK_NAME(tn_silu(x), "SiluBackward0");
    CHECK_NAME(tn_softplus(x), "SoftplusBackward0");
    CHECK_NAME(tn_clamp(x, .min = -1, .max = 1), "ClampBackward1");
    CHECK_NAME(tn_frac(x), "FracBackward0");
    CHECK_NAME(tn_nan_to_num(x), "NanToNumBackward0");
    CHECK_NAME(tn_maximum(x, v), "MaximumBackward0");
    CHECK_NAME(tn_atan2(x, v), "Atan2Backward0");
    CHECK_NAME(tn_where(tn_gt_scalar(x, 0), x, v), "WhereBackward0");
    CHECK_NAME(tn_lerp(x, v, v), "LerpBackward1");
    CHECK_NAME(tn_addcmul(x, x, v), "AddcmulBackward0");
    CHECK_NAME(tn_sum(x), "SumBackward0");
    CHECK_NAME(tn_mean(x), "MeanBackward0");
    CHECK_NAME(tn_prod(x), "ProdBackward0");
    CHECK_NAME(tn_amax(x, TN_DIMS(1)), "AmaxBackward0");
    CHECK_NAME(tn_max_dim(x, 1, NULL), "MaxBackward0");
    CHECK_NAME(tn_min_dim(x, 1, NULL), "MinBackward0");
    CHECK_NAME(tn_cumsum(x, 1), "CumsumBackward0");
    CHECK_NAME(tn_cumprod(x, 1), "CumprodBackward0");
    CHECK_NAME(tn_softmax(x, 1), "SoftmaxBackward0");
    CHECK_NAME(tn_log_softmax(x, 1), "LogSoftmaxBackward0");
    CHECK_NAME(tn_sort(x, NULL, .dim = 1), "SortBackward0");
    CHECK_NAME(tn_view(x, SH(6)), "ViewBackward0");
    CHECK_NAME(tn_permute(x, TN_DIMS(1, 0)), "PermuteBackward0");
    CHECK_NAME(tn_expand(v, SH(2, 3)), "ExpandBackward0");
    CHECK_NAME(tn_select(x, 0, 1), "SelectBackward0");
    CHECK_NAME(tn_slice(x, 1, 0, 2, 1), "SliceBackward0");
    CHECK_NAME(tn_narrow(x, 1, 0, 2), "SliceBackward0");
    CHECK_NAME(tn_unfold(x, 1, 2, 1), "UnfoldBackward0");
    CHECK_NAME(tn_flip(x, TN_DIMS(0)), "FlipBackward0");
    CHECK_NAME(tn_pad(x, TN_DIMS(1, 1)), "ConstantPadNdBackward0");
    CHECK_NAME(tn_clone(x), "CloneBackward0");
    CHECK_NAME(tn_contiguous(tn_t(x)), "CloneBackward0");
    CHECK_NAME(tn_index_select(x, 0, idx), "IndexSelectBackward0");
    CHECK_NAME(tn_gather(x, 1, IDX(I(0, 1), 2, 1)), "GatherBackward0");
    CHECK_NAME(tn_scatter_add(x, 1, IDX(I(0, 1), 2, 1), x), "ScatterAddBackward0");
    CHECK_NAME(tn_index(x, UARGS(idx), 1), "IndexBackward0");
    CHECK_NAME(tn_index_put(x, UARGS(idx), 1, v), "IndexPutBackward0");
    CHECK_NAME(tn_cat(UARGS(x, x), 2), "CatBackward0");
    CHECK_NAME(tn_mm(x, m), "MmBackward0");
    CHECK_NAME(tn_matmul(x, m), "MmBackward0");
    CHECK_NAME(tn_bmm(b3, b3), "BmmBackward0");
    CHECK_NAME(tn_mv(m, v), "MvBackward0");
    CHECK_NAME(tn_matmul(x, v), "MvBackward0");
    CHECK_NAME(tn_dot(v, v), "DotBackward0");
    CHECK_NAME(tn_addmm(v, x, m), "AddmmBackward0");
    CHECK_NAME(tn_baddbmm(v, b3, b3), "BaddbmmBackward0");
    END;
}

/* Names where tensor.h's node differs from PyTorch 1.13's. */
TEST(sem_grad_fn_names_pytorch) {
    BEGIN;
    tn_tensor *x = RN(2, 3), *v = RN(3);
    CHECK_NAME(tn_pow_scalar(x, 2), "PowBackward0");
    CHECK_NAME(tn_sum_dims(x, TN_DIMS(1)), "SumBackward1");
    CHECK_NAME(tn_max(x), "MaxBackward1");
    CHECK_NAME(tn_min(x), "MinBackward1");
    CHECK_NAME(tn_t(x), "TBackward0");
    CHECK_NAME(tn_transpose(x, 0, 1), "TransposeBackward0");
    CHECK_NAME(tn_unsqueeze(x, 0), "UnsqueezeBackward0");
    CHECK_NAME(tn_to_dtype(x, TN_F32), "ToCopyBackward0");
    CHECK_NAME(tn_lerp_scalar(x, v, 0.5), "LerpBackward0");
    CHECK_NAME(tn_rsub_scalar(x, 1), "RsubBackward1");
    END;
}

TEST(sem_engine_details) {
    BEGIN;
    /* .grad is accumulated in place: a reference taken earlier sees the sum (PyTorch: g is x.grad) */
    tn_tensor *x = LD(D(1, 2), 2);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);
    tn_tensor *g0 = tn_grad(x);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);
    CHECK(tn_grad(x) == g0);
    CHECK_VALS(g0, 0, 4, 8);
    tn_set_grad(x, NULL);
    /* a hook on the root and on a leaf root */
    tn_tensor *s = tn_sum(tn_mul_scalar(x, 2));
    CHECK(tn_register_hook(s, hook_double, NULL) >= 0);
    CHECK(tn_backward(s) == 0);
    CHECK_VALS(tn_grad(x), 0, 4, 4);
    tn_set_grad(x, NULL);
    tn_tensor *x2 = LD(D(1, 2), 2);
    CHECK(tn_register_hook(x2, hook_double, NULL) >= 0);
    CHECK(tn_backward(x2, .gradient = mk(D(3, 4), SH(2))) == 0);
    CHECK_VALS(tn_grad(x2), 0, 6, 8);
    /* requires_grad_(false) on a leaf after the graph was built: PyTorch's AccumulateGrad skips it */
    tn_tensor *x3 = LD(D(1, 2), 2);
    tn_tensor *s3 = tn_sum(tn_mul_scalar(x3, 2));
    CHECK(tn_requires_grad_(x3, false) == 0);
    CHECK(tn_backward(s3) == 0);
    CHECK_MSG(tn_grad(x3) == NULL, "a leaf that no longer requires grad got a .grad");
    /* autograd_grad of an output w.r.t. itself, and the same input twice */
    tn_tensor *y = tn_mul_scalar(x, 2), *r[2] = {NULL, NULL}, *ones = tn_ones(SH(2), TN_F64);
    CHECK(tn_autograd_grad(&y, 1, &y, 1, &ones, r, .retain_graph = true) == 0);
    CHECK_VALS(r[0], 0, 1, 1);
    CHECK(tn_autograd_grad(&x, 1, &x, 1, &ones, r, .retain_graph = true) == 0);
    CHECK_VALS(r[0], 0, 1, 1);
    tn_tensor *q = tn_sum(tn_mul(x, x)), *xx[2] = {x, x};
    CHECK(tn_autograd_grad(&q, 1, xx, 2, NULL, r, .retain_graph = true) == 0);
    CHECK_VALS(r[0], 0, 2, 4);
    CHECK_VALS(r[1], 0, 2, 4);
    /* two roots where one depends on the other: d/dx [sum(2x) + sum(4x^2)] = 2 + 8x */
    tn_tensor *y2 = tn_mul_scalar(x, 2);
    tn_tensor *outs[2] = {tn_sum(y2), tn_sum(tn_mul(y2, y2))};
    CHECK(tn_autograd_grad(outs, 2, &x, 1, NULL, r) == 0);
    CHECK_VALS(r[0], 0, 10, 18);
    /* a shared subgraph freed by the first backward: the second one reports it */
    tn_tensor *e = tn_exp(x), *a = tn_sum(e), *b = tn_sum(tn_mul_scalar(e, 2));
    CHECK(tn_backward(a) == 0);
    CHECK_ERR(tn_backward(b) == 0, "second time");
    tn_set_grad(x, NULL);
    /* a leaf saved by mul and modified under no_grad: backward reports it */
    tn_tensor *w = LD(D(3, 4), 2), *x4 = LD(D(1, 2), 2);
    tn_tensor *z = tn_sum(tn_mul(x4, w));
    tn_no_grad_begin();
    tn_add_scalar_(x4, 1);
    tn_no_grad_end();
    CHECK_ERR(tn_backward(z) == 0, "modified by an inplace operation");
    /* non-contiguous explicit gradients */
    tn_tensor *m = LD(D(1, 2, 3, 4, 5, 6), 2, 3);
    tn_tensor *gm = tn_t(mk(D(1, 2, 3, 4, 5, 6), SH(3, 2)));   /* [[1,3,5],[2,4,6]] */
    CHECK(tn_backward(tn_mul_scalar(m, 2), .gradient = gm) == 0);
    CHECK_VALS(tn_grad(m), 0, 2, 6, 10, 4, 8, 12);
    tn_tensor *m2 = tn_exp(m), *rm = NULL;
    CHECK(tn_autograd_grad(&m2, 1, &m, 1, &gm, &rm) == 0);
    CHECK_VALS(rm, 1e-12, exp(1), 3 * exp(2), 5 * exp(3), 2 * exp(4), 4 * exp(5), 6 * exp(6));
    /* differentiating through grad_outputs: g = 2 x v, d(sum g)/dv = 2x */
    tn_tensor *v = LD(D(0.5, -1), 2), *gv = NULL, *dv = NULL;
    tn_tensor *sq = tn_square(x);
    CHECK(tn_autograd_grad(&sq, 1, &x, 1, &v, &gv, .create_graph = true) == 0);
    CHECK_VALS(gv, 0, 1, -4);
    tn_tensor *sgv = tn_sum(gv);
    CHECK(tn_autograd_grad(&sgv, 1, &v, 1, NULL, &dv) == 0);
    CHECK_VALS(dv, 0, 2, 4);
    /* float64 leaf through float32: the gradient comes back as float64 */
    tn_tensor *d64 = LD(D(0.5, 1.5), 2);
    CHECK(tn_backward(tn_sum(tn_square(tn_to_dtype(d64, TN_F32)))) == 0);
    CHECK(tn_grad(d64) && tn_get_dtype(tn_grad(d64)) == TN_F64);
    CHECK_VALS(tn_grad(d64), 1e-7, 1, 3);
    /* tn_retains_grad */
    tn_tensor *h = tn_mul_scalar(x, 3);
    CHECK(!tn_retains_grad(h));
    CHECK(tn_retain_grad(h) == 0 && tn_retains_grad(h));
    CHECK(tn_retain_grad(x) == 0 && !tn_retains_grad(x));
    END;
}

TEST(sem_backward_errors) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_mul(x, x);
    CHECK_ERR(tn_backward(y) == 0, "scalar outputs");
    CHECK_ERR(tn_backward(tn_sum(tn_ones(SH(3), TN_F64))) == 0, "does not require grad");
    CHECK_ERR(tn_backward(tn_ones(SH(1), TN_F64)) == 0, "does not require grad");
    CHECK_ERR(tn_backward(y, .gradient = tn_ones(SH(2), TN_F64)) == 0, "shape");
    CHECK(tn_grad(x) == NULL);
    CHECK(tn_backward(NULL) != 0);
    /* vector-Jacobian product with an explicit gradient */
    CHECK(tn_backward(y, .gradient = mk(D(1, 0.5, -1), SH(3))) == 0);
    CHECK_VALS(tn_grad(x), 0, 2, 2, -6);
    /* a one-element tensor that is not 0-d takes the implicit gradient */
    tn_set_grad(x, NULL);
    tn_tensor *one = tn_sum_dims(tn_unsqueeze(x, 0), TN_DIMS(1), .keepdim = true);
    CHECK_SHAPE(one, 1, 1);
    CHECK(tn_backward(one) == 0);
    CHECK_VALS(tn_grad(x), 0, 1, 1, 1);
    /* backward of a leaf itself: .grad = gradient */
    tn_set_grad(x, NULL);
    CHECK(tn_backward(x, .gradient = mk(D(4, 5, 6), SH(3))) == 0);
    CHECK_VALS(tn_grad(x), 0, 4, 5, 6);
    /* a float32 root with a float64 gradient: the engine converts (PyTorch casts too) */
    tn_tensor *f = leaf(tn_ones(SH(2), TN_F32));
    CHECK(tn_backward(tn_mul_scalar(f, 3), .gradient = mk(D(1, 2), SH(2))) == 0);
    CHECK(tn_grad(f) && tn_get_dtype(tn_grad(f)) == TN_F32);
    CHECK_VALS(tn_grad(f), 0, 3, 6);
    END;
}

/* ==================================================================================== */
/* 3. in-place                                                                            */
/* ==================================================================================== */
TEST(ip_leaf_errors) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3), *o = tn_ones(SH(3), TN_F64);
    CHECK_ERR(tn_add_scalar_(x, 1), "leaf");
    CHECK_ERR(tn_mul_scalar_(x, 2), "leaf");
    CHECK_ERR(tn_add_(x, o), "leaf");
    CHECK_ERR(tn_mul_(x, o), "leaf");
    CHECK_ERR(tn_exp_(x), "leaf");
    CHECK_ERR(tn_relu_(x), "leaf");
    CHECK_ERR(tn_clamp_(x, .min = 0, .max = 1), "leaf");
    CHECK_ERR(tn_fill_(x, 0), "leaf");
    CHECK_ERR(tn_zero_(x), "leaf");
    CHECK_ERR(tn_copy_(x, o) == 0, "leaf");
    CHECK_ERR(tn_index_put_(x, UARGS(IDX(I(0), 1)), 1, tn_scalar_tensor(5, TN_F64)), "leaf");
    CHECK_ERR(tn_masked_fill_(x, MASK(B(true, false, true), 3), 0), "leaf");
    CHECK_ERR(tn_addcmul_(x, o, o), "leaf");
    CHECK_ERR(tn_lerp_(x, o, 0.5), "leaf");
    CHECK_ERR(tn_scatter_(x, 0, IDX(I(0), 1), o), "leaf");
    CHECK_VALS(x, 0, 1, 2, 3);             /* nothing was written */
    CHECK(tn_version(x) == 0);
    /* a view of a leaf that requires grad is refused too (PyTorch: "a view of a leaf Variable ...") */
    tn_tensor *vx = tn_select(x, 0, 1);
    tn_clear_error();
    CHECK(tn_mul_scalar_(vx, 2) == NULL);
    CHECK_VALS(x, 0, 1, 2, 3);
    /* allowed under no_grad */
    tn_no_grad_begin();
    CHECK(tn_mul_scalar_(x, 2) != NULL);
    tn_no_grad_end();
    CHECK_VALS(x, 0, 2, 4, 6);
    CHECK(tn_is_leaf(x) && tn_requires_grad(x));
    END;
}

TEST(ip_rebase_matches_out_of_place) {
    BEGIN;
    const double xv[6] = {0.3, -0.2, 0.5, 0.1, -0.4, 0.25}, wv[3] = {0.7, -1.1, 0.4};
    /* in place: y = x*2; y *= (x+1); y += 1; y = exp(y); loss = sum(y * w) */
    tn_tensor *x = leaf(mk(xv, SH(2, 3))), *w = leaf(mk(wv, SH(3)));
    tn_tensor *y = tn_mul_scalar(x, 2), *y2 = tn_add_scalar(x, 1);
    CHECK(tn_mul_(y, y2) != NULL);
    CHECK(tn_add_scalar_(y, 1) != NULL);
    CHECK(tn_exp_(y) != NULL);
    CHECK(!tn_is_leaf(y) && tn_requires_grad(y));
    CHECK_NAME(y, "ExpBackward0");
    CHECK(tn_backward(tn_sum(tn_mul(y, w))) == 0);
    /* out of place on separate leaves with the same values */
    tn_tensor *x2 = leaf(mk(xv, SH(2, 3))), *w2 = leaf(mk(wv, SH(3)));
    tn_tensor *r = tn_exp(tn_add_scalar(tn_mul(tn_mul_scalar(x2, 2), tn_add_scalar(x2, 1)), 1));
    CHECK(tn_backward(tn_sum(tn_mul(r, w2))) == 0);
    CHECK_SAME(y, r, 1e-14);
    CHECK_SAME(tn_grad(x), tn_grad(x2), 1e-13);
    CHECK_SAME(tn_grad(w), tn_grad(w2), 1e-13);
    /* hand value at x = 0.3 (first element): d/dx exp(2x(x+1)+1) w = exp(...) (4x+2) w */
    double e0 = exp(2 * 0.3 * 1.3 + 1);
    CHECK_CLOSE(el(tn_grad(x), 0), e0 * (4 * 0.3 + 2) * 0.7, 1e-12);
    /* an in-place op on a plain tensor with an operand that requires grad makes it a non-leaf */
    tn_tensor *a = tn_zeros(SH(3), TN_F64);
    CHECK(tn_add_(a, w) != NULL);
    CHECK(tn_requires_grad(a) && !tn_is_leaf(a));
    tn_set_grad(w, NULL);
    CHECK(tn_backward(tn_sum(tn_mul(a, a))) == 0);
    CHECK_VALS(tn_grad(w), 1e-14, 1.4, -2.2, 0.8);
    END;
}

TEST(ip_version_counter) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3), *b = LD(D(4, 5, 6), 3);
    /* z = a * b saves a and b; modifying a afterwards is detected at backward time */
    tn_tensor *a = tn_mul_scalar(x, 1);
    tn_tensor *z = tn_mul(a, b);
    int64_t v = tn_version(a);
    CHECK(tn_add_scalar_(a, 1) != NULL);
    CHECK(tn_version(a) == v + 1);
    CHECK_ERR(tn_backward(tn_sum(z)) == 0, "modified by an inplace operation");
    CHECK(tn_grad(b) == NULL);
    /* an unsaved tensor may be modified: y = a + b saves nothing PyTorch needs */
    tn_tensor *a2 = tn_mul_scalar(x, 1);
    tn_tensor *s = tn_sum(tn_mul_scalar(a2, 3));
    CHECK(tn_mul_scalar_(a2, 5) != NULL);
    CHECK(tn_backward(s) == 0);
    CHECK_VALS(tn_grad(x), 0, 3, 3, 3);
    tn_set_grad(x, NULL);
    /* modifying through a view bumps the shared counter */
    tn_tensor *a3 = tn_mul_scalar(x, 1);
    tn_tensor *z3 = tn_sum(tn_mul(a3, a3));
    tn_no_grad_begin();
    CHECK(tn_add_scalar_(tn_select(a3, 0, 0), 1) != NULL);
    tn_no_grad_end();
    CHECK_ERR(tn_backward(z3) == 0, "modified by an inplace operation");
    /* the saved result of softmax */
    tn_tensor *a4 = tn_mul_scalar(x, 1);
    tn_tensor *sm = tn_softmax(a4, 0);
    tn_tensor *z4 = tn_sum(tn_mul(sm, b));
    CHECK(tn_mul_scalar_(sm, 2) != NULL);
    CHECK_ERR(tn_backward(z4) == 0, "modified by an inplace operation");
    END;
}

/* PyTorch's ExpBackward saves the result, not the input: modifying the input after exp
   is fine there (and modifying the result is the error). */
TEST(ip_exp_saves_result) {
    BEGIN;
    tn_tensor *x = LD(D(0, 1, 2), 3);
    tn_tensor *a = tn_mul_scalar(x, 1);
    tn_tensor *y = tn_exp(a);
    CHECK(tn_add_scalar_(a, 1) != NULL);
    tn_clear_error();
    CHECK_MSG(tn_backward(tn_sum(y)) == 0, "backward after modifying exp's input: %s", tn_last_error());
    CHECK_VALS(tn_grad(x), 1e-12, 1, exp(1), exp(2));
    tn_set_grad(x, NULL);
    tn_tensor *a2 = tn_mul_scalar(x, 1);
    tn_tensor *y2 = tn_exp(a2);
    tn_tensor *s2 = tn_sum(y2);
    CHECK(tn_add_scalar_(y2, 1) != NULL);
    CHECK_ERR(tn_backward(s2) == 0, "modified by an inplace operation");
    END;
}

TEST(ip_copy_index_put_masked_fill) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3), *w = LD(D(4, 5, 6), 3), *k = mk(D(1, 2, 3), SH(3));
    /* copy_ from a tensor that requires grad: dst takes src's history; old value gets 0 */
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(tn_copy_(y, w) == 0);
    CHECK_VALS(y, 0, 4, 5, 6);
    CHECK(tn_requires_grad(y));
    CHECK(tn_backward(tn_sum(tn_mul(y, k))) == 0);
    CHECK_VALS(tn_grad(w), 0, 1, 2, 3);
    CHECK(tn_grad(x) == NULL || (el(tn_grad(x), 0) == 0 && el(tn_grad(x), 2) == 0));
    tn_set_grad(w, NULL);
    tn_set_grad(x, NULL);
    /* copy_ with broadcasting and dtype conversion from a float32 source */
    tn_tensor *f = leaf(tn_full(SH(1), 2, TN_F32));
    tn_tensor *y2 = tn_mul_scalar(x, 1);
    CHECK(tn_copy_(y2, f) == 0);
    CHECK(tn_backward(tn_sum(tn_mul(y2, k))) == 0);
    CHECK(tn_grad(f) && tn_get_dtype(tn_grad(f)) == TN_F32);
    CHECK_VALS(tn_grad(f), 0, 6);
    CHECK_SHAPE(tn_grad(f), 1);
    /* index_put_ on a non-leaf: grad of self is zero where overwritten, values get g[idx] */
    tn_set_grad(x, NULL);
    tn_tensor *vals = LD(D(10, 20), 2);
    tn_tensor *y3 = tn_mul_scalar(x, 1);
    CHECK(tn_index_put_(y3, UARGS(IDX(I(2, 0), 2)), 1, vals) != NULL);
    CHECK_VALS(y3, 0, 20, 2, 10);
    CHECK(tn_backward(tn_sum(tn_mul(y3, k))) == 0);
    CHECK_VALS(tn_grad(x), 0, 0, 2, 0);
    CHECK_VALS(tn_grad(vals), 0, 3, 1);
    /* accumulate: self keeps its full gradient */
    tn_set_grad(x, NULL);
    tn_set_grad(vals, NULL);
    tn_tensor *y4 = tn_mul_scalar(x, 1);
    CHECK(tn_index_put_(y4, UARGS(IDX(I(1, 1), 2)), 1, vals, .accumulate = true) != NULL);
    CHECK_VALS(y4, 0, 1, 32, 3);
    CHECK(tn_backward(tn_sum(tn_mul(y4, k))) == 0);
    CHECK_VALS(tn_grad(x), 0, 1, 2, 3);
    CHECK_VALS(tn_grad(vals), 0, 2, 2);
    /* masked_fill_ */
    tn_set_grad(x, NULL);
    tn_tensor *y5 = tn_mul_scalar(x, 3);
    CHECK(tn_masked_fill_(y5, MASK(B(false, true, false), 3), -1) != NULL);
    CHECK_VALS(y5, 0, 3, -1, 9);
    CHECK(tn_backward(tn_sum(tn_mul(y5, k))) == 0);
    CHECK_VALS(tn_grad(x), 0, 3, 0, 9);
    END;
}

/* copy_ of a tensor without history into a non-leaf: the old history must go (PyTorch:
   CopyBackwards gives the old value a zero gradient). */
TEST(ip_copy_const_into_nonleaf) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(tn_copy_(y, mk(D(7, 8, 9), SH(3))) == 0);
    CHECK_VALS(y, 0, 7, 8, 9);
    CHECK(tn_requires_grad(y));
    CHECK(tn_backward(tn_sum(tn_mul(y, y))) == 0);
    /* PyTorch: x.grad = [0, 0, 0] */
    CHECK_MSG(tn_grad(x) != NULL, "x.grad is NULL; PyTorch gives zeros");
    CHECK_VALS(tn_grad(x), 0, 0, 0, 0);
    /* same with copy_ from a tensor that requires grad: the old value's gradient is zeros, not None */
    tn_tensor *x2 = LD(D(1, 2, 3), 3), *w = LD(D(4, 5, 6), 3);
    tn_tensor *y2 = tn_mul_scalar(x2, 2);
    CHECK(tn_copy_(y2, w) == 0);
    CHECK(tn_backward(tn_sum(y2)) == 0);
    CHECK_MSG(tn_grad(x2) != NULL, "x2.grad is NULL; PyTorch gives zeros");
    CHECK_VALS(tn_grad(x2), 0, 0, 0, 0);
    END;
}

/* In-place on a view of a non-leaf (PyTorch rebases the base through CopySlices). */
TEST(ip_view_of_nonleaf) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3, 4, 5, 6), 2, 3);
    tn_tensor *y = tn_mul_scalar(x, 1);
    tn_tensor *row = tn_select(y, 0, 0);
    tn_clear_error();
    tn_tensor *r = tn_mul_scalar_(row, 2);
    CHECK_MSG(r != NULL, "in-place on a view of a non-leaf refused: %s", tn_last_error());
    if (r) {
        CHECK_VALS(y, 0, 2, 4, 6, 4, 5, 6);
        CHECK(tn_backward(tn_sum(tn_mul(y, mk(D(1, 2, 3), SH(3))))) == 0);
        CHECK_VALS(tn_grad(x), 0, 2, 4, 6, 1, 2, 3);   /* PyTorch 1.13 */
    }
    END;
}

/* ==================================================================================== */
/* custom ops, anomaly mode, names and graph dumps, per-thread grad mode                  */
/* ==================================================================================== */
typedef struct { int fwd_calls, bwd_calls; bool grad_enabled_in_fwd; bool needs[2]; } cop_rec;
/* y = x / (1 + |x|) * s (s optional second input), backward by hand */
static tn_tensor *cop_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    cop_rec *r = (cop_rec *)user;
    if (r) { r->fwd_calls++; r->grad_enabled_in_fwd = tn_is_grad_enabled(); }
    tn_ctx_save(ctx, in[0]);
    tn_tensor *y = tn_div(in[0], tn_add_scalar(tn_abs(in[0]), 1));
    if (n > 1) { tn_ctx_save(ctx, in[1]); y = tn_mul(y, in[1]); }
    return y;
}
static int cop_bwd(tn_ctx *ctx, tn_tensor *g, tn_tensor **gin, int n, void *user) {
    cop_rec *r = (cop_rec *)user;
    tn_tensor *x = tn_ctx_saved(ctx, 0), *sv = n > 1 ? tn_ctx_saved(ctx, 1) : NULL;
    if (r) { r->bwd_calls++; r->needs[0] = tn_ctx_needs_grad(ctx, 0); r->needs[1] = n > 1 && tn_ctx_needs_grad(ctx, 1); }
    tn_tensor *d = tn_reciprocal(tn_square(tn_add_scalar(tn_abs(x), 1)));
    gin[0] = tn_mul(g, sv ? tn_mul(d, sv) : d);
    if (n > 1) gin[1] = tn_mul(g, tn_div(x, tn_add_scalar(tn_abs(x), 1)));   /* written even if not needed: ignored */
    return 0;
}
static tn_tensor *cop(tn_tensor *x, tn_tensor *s, cop_rec *r) {
    tn_tensor *in[2] = {x, s};
    return tn_custom_op("SoftclipBackward", cop_fwd, cop_bwd, in, s ? 2 : 1, r);
}
GF(cop_gc, cop(tn_t(IN0), NULL, NULL))
GF(cop_gc2, tn_sum(tn_square(cop(IN0, IN1, NULL))))
static tn_tensor *id_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) { (void)ctx; (void)n; (void)user; return in[0]; }
static int id_bwd(tn_ctx *ctx, tn_tensor *g, tn_tensor **gin, int n, void *user) { (void)ctx; (void)n; (void)user; gin[0] = tn_mul_scalar(g, 3); return 0; }
static int err_bwd(tn_ctx *ctx, tn_tensor *g, tn_tensor **gin, int n, void *user) {
    (void)ctx; (void)g; (void)gin; (void)n; (void)user;
    tn_tensor *bad = tn_add(tn_ones(SH(2), TN_F64), tn_ones(SH(3), TN_F64));   /* records "tn_add: ..." */
    return bad ? 0 : -1;
}
static int shape_bwd(tn_ctx *ctx, tn_tensor *g, tn_tensor **gin, int n, void *user) {
    (void)ctx; (void)g; (void)n; (void)user;
    gin[0] = tn_ones(SH(2), TN_F64);
    return 0;
}
static tn_tensor *null_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) { (void)ctx; (void)in; (void)n; (void)user; return NULL; }

TEST(custom_op) {
    BEGIN;
    cop_rec r;
    memset(&r, 0, sizeof r);
    tn_tensor *x = LD(D(-2, 0.5, 3), 3);
    tn_tensor *y = cop(x, NULL, &r);
    CHECK(r.fwd_calls == 1 && !r.grad_enabled_in_fwd);     /* forward runs under no_grad */
    CHECK_VALS(y, 1e-15, -2.0 / 3, 0.5 / 1.5, 0.75);
    CHECK(tn_requires_grad(y) && !tn_is_leaf(y));
    CHECK_NAME(y, "SoftclipBackward");
    CHECK(tn_backward(tn_sum(y)) == 0);
    CHECK(r.bwd_calls == 1 && r.needs[0]);
    CHECK_VALS(tn_grad(x), 1e-15, 1.0 / 9, 1.0 / 2.25, 1.0 / 16);
    /* gradcheck and gradgradcheck through it */
    GC(cop_gc, RN(3, 2));
    GC(cop_gc2, RN(2, 3), RN(3));
    /* needs_grad per input; a gradient written for an input that needs none is ignored */
    tn_tensor *s = mk(D(2, 2, 2), SH(3));
    memset(&r, 0, sizeof r);
    tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_sum(cop(x, s, &r))) == 0);
    CHECK(r.needs[0] && !r.needs[1]);
    CHECK_VALS(tn_grad(x), 1e-15, 2.0 / 9, 2.0 / 2.25, 2.0 / 16);
    CHECK(tn_grad(s) == NULL);
    /* no input requires grad: no node, forward still runs */
    memset(&r, 0, sizeof r);
    tn_tensor *yc = cop(s, NULL, &r);
    CHECK(yc && !tn_requires_grad(yc) && r.fwd_calls == 1);
    /* under no_grad: no node */
    tn_no_grad_begin();
    tn_tensor *yn = cop(x, NULL, NULL);
    tn_no_grad_end();
    CHECK(yn && !tn_requires_grad(yn));
    /* a forward that returns its input unchanged: the result gets the history, not the input */
    tn_tensor *x2 = LD(D(1, 2, 3), 3);
    tn_tensor *yi = tn_custom_op("IdBackward", id_fwd, id_bwd, &x2, 1, NULL);
    CHECK(yi && yi != x2 && tn_is_leaf(x2) && !tn_is_leaf(yi));
    CHECK(tn_backward(tn_sum(yi)) == 0);
    CHECK_VALS(tn_grad(x2), 0, 3, 3, 3);
    /* the saved input is version-checked */
    tn_tensor *a = tn_mul_scalar(x, 1);
    tn_tensor *ya = cop(a, NULL, NULL);
    CHECK(tn_add_scalar_(a, 1) != NULL);
    CHECK_ERR(tn_backward(tn_sum(ya)) == 0, "modified by an inplace operation");
    /* saved tensors go with the graph: a second backward without retain_graph fails */
    tn_tensor *y2 = tn_sum(cop(x, NULL, NULL));
    CHECK(tn_backward(y2) == 0);
    CHECK_ERR(tn_backward(y2) == 0, "second time");
    /* errors from backward and forward propagate */
    tn_tensor *ye = tn_custom_op("ErrBackward", cop_fwd, err_bwd, &x, 1, NULL);
    CHECK_ERR(tn_backward(tn_sum(ye)) == 0, "tn_add");
    CHECK_ERR(tn_custom_op("NullBackward", null_fwd, cop_bwd, &x, 1, NULL), "forward returned NULL");
    CHECK_ERR(tn_custom_op("X", NULL, cop_bwd, &x, 1, NULL), "tn_custom_op");
    END;
}

/* PyTorch: "Function XBackward returned an invalid gradient at index 0 - got [2] but expected
   shape compatible with [3]" */
TEST(custom_op_bad_gradient_shape) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_custom_op("BadBackward", cop_fwd, shape_bwd, &x, 1, NULL);
    tn_clear_error();
    int rc = tn_backward(tn_sum(y));
    CHECK_MSG(rc != 0 && strstr(tn_last_error(), "BadBackward"), "a [2] gradient for a [3] input: rc %d, '%s'", rc, tn_last_error());
    CHECK_MSG(tn_grad(x) == NULL, "a wrong-shaped gradient reached .grad");
    /* a gradient of the broadcast shape is summed back to the input's shape, as PyTorch's
       validate_outputs does (x [2,3] * s [3] with backward returning g * x for s) */
    tn_tensor *x2 = LD(D(1, 2, 3, 4, 5, 6), 2, 3), *s = LD(D(1, 1, 1), 3);
    tn_clear_error();
    rc = tn_backward(tn_sum(cop(x2, s, NULL)));
    CHECK_MSG(rc == 0, "broadcast gradient refused: %s", tn_last_error());
    CHECK_SHAPE(tn_grad(s), 3);
    CHECK_VALS(tn_grad(s), 1e-15, 0.5 + 0.8, 2.0 / 3 + 5.0 / 6, 0.75 + 6.0 / 7);
    END;
}

TEST(anomaly_names_graph_dot) {
    BEGIN;
    CHECK(!tn_is_anomaly_enabled());
    tn_tensor *x = LD(D(0, 4), 2);
    /* without anomaly mode: NaN flows into .grad */
    CHECK(tn_backward(tn_sum(tn_mul_scalar(tn_sqrt(x), 0))) == 0);
    CHECK(tn_grad(x) && isnan(el(tn_grad(x), 0)));
    tn_set_grad(x, NULL);
    tn_set_detect_anomaly(true);
    CHECK(tn_is_anomaly_enabled());
    CHECK_ERR(tn_backward(tn_sum(tn_mul_scalar(tn_sqrt(x), 0))) == 0, "SqrtBackward0");
    CHECK(strstr(tn_last_error(), "nan") != NULL);
    CHECK(tn_backward(tn_sum(tn_mul(x, x))) == 0);                 /* finite: fine */
    CHECK_VALS(tn_grad(x), 0, 0, 8);
    tn_set_detect_anomaly(false);
    CHECK(!tn_is_anomaly_enabled());
    /* names are copied */
    char buf[16];
    strcpy(buf, "weight");
    CHECK(tn_set_name(x, buf) == 0);
    strcpy(buf, "changed");
    CHECK(tn_get_name(x) && strcmp(tn_get_name(x), "weight") == 0);
    CHECK(tn_get_name(tn_ones(SH(1), TN_F64)) == NULL);
    /* a DOT dump of the graph: nodes by PyTorch's names, leaves by their names */
    tn_tensor *loss = tn_sum(tn_exp(tn_mul(x, LD(D(1, 2), 2))));
    CHECK(tn_set_name(loss, "loss") == 0);
    char *dot = tn_graph_dot(loss);
    CHECK(dot && strstr(dot, "digraph") && strstr(dot, "SumBackward0") && strstr(dot, "ExpBackward0") && strstr(dot, "MulBackward0"));
    CHECK(dot && strstr(dot, "weight") && strstr(dot, "loss"));
    tn_string_free(dot);
    char *dot2 = tn_graph_dot(x);   /* a leaf: just the tensor */
    CHECK(dot2 && strstr(dot2, "digraph"));
    tn_string_free(dot2);
    CHECK(tn_set_name(x, NULL) == 0 && tn_get_name(x) == NULL);
    END;
}

#ifdef __unix__
#include <pthread.h>
static void *thread_grad_mode(void *arg) {
    bool *out = (bool *)arg;
    out[0] = tn_is_grad_enabled();               /* a new thread starts with grad mode on */
    tn_scope_begin();
    tn_tensor *x = leaf(tn_ones(SH(2), TN_F64));
    out[1] = tn_requires_grad(tn_mul_scalar(x, 2));
    out[2] = tn_backward(tn_sum(tn_mul(x, x))) == 0 && el(tn_grad(x), 0) == 2;
    tn_scope_end();
    return NULL;
}
TEST(grad_mode_per_thread) {
    BEGIN;
    bool out[3] = {false, false, false};
    tn_no_grad_begin();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, thread_grad_mode, out) == 0);
    pthread_join(th, NULL);
    CHECK(!tn_is_grad_enabled());
    tn_no_grad_end();
    CHECK(out[0] && out[1] && out[2]);
    END;
}
#endif

/* ==================================================================================== */
/* 4. memory                                                                              */
/* ==================================================================================== */
TEST(mem_training_loop_flat) {
    BEGIN;
    tn_manual_seed(7);
    tn_tensor *w1 = leaf(tn_mul_scalar(tn_randn(SH(4, 8), TN_F32), 0.5));
    tn_tensor *w2 = leaf(tn_mul_scalar(tn_randn(SH(8, 3), TN_F32), 0.5));
    tn_tensor *xs = tn_randn(SH(16, 4), TN_F32);
    tn_tensor *ys = tn_randint(0, 3, SH(16), TN_I64, NULL);
    tn_tensor *rows = tn_arange(0, 16, 1, TN_I64);
    tn_memory_stats s10 = {0, 0, 0, 0}, s1000 = {0, 0, 0, 0};
    double loss_first = 0, loss_last = 0;
    int failures = 0;
    for (int step = 1; step <= 1000; step++) {
        tn_scope_begin();
        tn_tensor *h = tn_relu(tn_mm(xs, w1));
        tn_tensor *lp = tn_log_softmax(tn_mm(h, w2), 1);
        /* nll through gather on even steps, through advanced indexing on odd ones */
        tn_tensor *picked = step % 2 ? tn_index(lp, UARGS(rows, ys), 2) : tn_squeeze_dim(tn_gather(lp, 1, tn_unsqueeze(ys, 1)), 1);
        tn_tensor *loss = tn_neg(tn_mean(picked));
        if (!loss || tn_backward(loss)) failures++;
        tn_no_grad_begin();
        if (!tn_sub_(w1, tn_mul_scalar(tn_grad(w1), 0.1)) || !tn_sub_(w2, tn_mul_scalar(tn_grad(w2), 0.1))) failures++;
        tn_no_grad_end();
        tn_set_grad(w1, NULL);
        tn_set_grad(w2, NULL);
        if (step == 1) loss_first = tn_item(loss);
        if (step == 1000) loss_last = tn_item(loss);
        tn_scope_end();
        if (step == 10) s10 = tn_memory_stats_get();
        if (step == 1000) s1000 = tn_memory_stats_get();
    }
    CHECK(failures == 0);
    CHECK_MSG(s10.live_tensors == s1000.live_tensors, "live tensors %lld after step 10, %lld after step 1000",
              (long long)s10.live_tensors, (long long)s1000.live_tensors);
    CHECK_MSG(s10.live_bytes == s1000.live_bytes, "live bytes %lld after step 10, %lld after step 1000",
              (long long)s10.live_bytes, (long long)s1000.live_bytes);
    CHECK_MSG(s10.live_storages == s1000.live_storages, "live storages %lld vs %lld", (long long)s10.live_storages, (long long)s1000.live_storages);
    CHECK_MSG(loss_last < loss_first, "loss %g -> %g did not decrease", loss_first, loss_last);
    CHECK(tn_is_leaf(w1) && tn_requires_grad(w1) && tn_grad(w1) == NULL);
    END;
}

/* the same loop keeping .grad and zeroing it in place (optimizer.zero_grad(set_to_none=False)) */
TEST(mem_training_loop_zero_grad) {
    BEGIN;
    tn_manual_seed(8);
    tn_tensor *w = leaf(tn_mul_scalar(tn_randn(SH(5, 3), TN_F64), 0.5));
    tn_tensor *b = leaf(tn_zeros(SH(3), TN_F64));
    tn_tensor *xs = tn_randn(SH(8, 5), TN_F64), *ts = tn_randn(SH(8, 3), TN_F64);
    tn_memory_stats s10 = {0, 0, 0, 0}, s300 = {0, 0, 0, 0};
    double l0 = 0, l1 = 0;
    for (int step = 1; step <= 300; step++) {
        tn_scope_begin();
        tn_tensor *loss = tn_mean(tn_square(tn_sub(tn_tanh(tn_addmm(b, xs, w)), ts)));
        tn_backward(loss);
        tn_no_grad_begin();
        tn_sub_(w, tn_mul_scalar(tn_grad(w), 0.2));
        tn_sub_(b, tn_mul_scalar(tn_grad(b), 0.2));
        tn_zero_(tn_grad(w));
        tn_zero_(tn_grad(b));
        tn_no_grad_end();
        if (step == 1) l0 = tn_item(loss);
        if (step == 300) l1 = tn_item(loss);
        tn_scope_end();
        if (step == 10) s10 = tn_memory_stats_get();
        if (step == 300) s300 = tn_memory_stats_get();
    }
    CHECK(s10.live_tensors == s300.live_tensors && s10.live_bytes == s300.live_bytes);
    CHECK(l1 < l0);
    CHECK_VALS(tn_grad(b), 0, 0, 0, 0);
    END;
}

/* y.mul_(y) on a non-leaf: PyTorch reports the modified operand at backward; dropping the
   graph without a backward must free it (no y -> node -> saved y cycle). */
TEST(mem_inplace_self_operand) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_mul_scalar(x, 1.5);
    CHECK(tn_mul_(y, y) != NULL);
    CHECK_VALS(y, 0, 2.25, 9, 20.25);
    tn_tensor *y2 = tn_mul_scalar(x, 1.5);
    CHECK(tn_mul_(y2, y2) != NULL);
    CHECK_ERR(tn_backward(tn_sum(y2)) == 0, "modified by an inplace operation");
    tn_tensor *y3 = tn_mul_scalar(x, 1.5);
    CHECK(tn_add_(y3, y3) != NULL);     /* add saves nothing: fine, as PyTorch */
    CHECK(tn_backward(tn_sum(y3)) == 0);
    CHECK_VALS(tn_grad(x), 0, 3, 3, 3);
    END;
}

/* retain_grad + create_graph: the retained gradient's graph must not keep its own node alive */
TEST(mem_retain_grad_create_graph) {
    BEGIN;
    tn_tensor *x = LD(D(1, 2, 3), 3);
    tn_tensor *y = tn_mul_scalar(x, 2);
    CHECK(tn_retain_grad(y) == 0);
    CHECK(tn_backward(tn_sum(tn_mul(y, y)), .create_graph = true) == 0);
    CHECK_VALS(tn_grad(y), 0, 4, 8, 12);
    CHECK(tn_grad(y) && tn_requires_grad(tn_grad(y)));
    tn_set_grad(x, NULL);   /* the leaf's own cycle is broken the PyTorch way */
    END;
}

/* create_graph graphs die with their tensors (gradgradcheck-like use in a loop) */
TEST(mem_create_graph_loop) {
    BEGIN;
    tn_tensor *x = RN(4, 3), *w = RN(3, 2);
    tn_memory_stats s5 = {0, 0, 0, 0}, s50 = {0, 0, 0, 0};
    for (int i = 1; i <= 50; i++) {
        tn_scope_begin();
        tn_tensor *out = tn_sum(tn_tanh(tn_mm(x, w))), *gx = NULL;
        tn_autograd_grad(&out, 1, &x, 1, NULL, &gx, .create_graph = true);
        tn_tensor *pen = tn_sum(tn_square(gx));
        tn_backward(pen);
        tn_no_grad_begin();
        tn_sub_(w, tn_mul_scalar(tn_grad(w), 0.01));
        tn_no_grad_end();
        tn_set_grad(w, NULL);
        tn_set_grad(x, NULL);
        tn_scope_end();
        if (i == 5) s5 = tn_memory_stats_get();
        if (i == 50) s50 = tn_memory_stats_get();
    }
    CHECK(s5.live_tensors == s50.live_tensors && s5.live_bytes == s50.live_bytes);
    END;
}

TEST(mem_long_chain) {
    tn_memory_stats s0 = tn_memory_stats_get();
    const int N = 100000;
    /* no scope open: each intermediate is released at once, so only the chain of nodes
       keeps the graph alive; backward and the final release must both be iterative */
    tn_tensor *x = tn_scalar_tensor(0.5, TN_F32);
    CHECK(tn_requires_grad_(x, true) == 0);
    tn_tensor *y = tn_retain(x);
    for (int i = 0; i < N && y; i++) {
        tn_tensor *n = tn_add_scalar(y, 1);
        tn_release(y);
        y = n;
    }
    CHECK(y != NULL);
    CHECK_CLOSE(tn_item(y), 0.5 + N, 1e-3);
    CHECK(tn_backward(y) == 0);
    CHECK_CLOSE(el(tn_grad(x), 0), 1, 0);
    tn_release(y);      /* frees 100,000 nodes */
    /* a scope owning every intermediate, retain_graph and a second backward */
    tn_set_grad(x, NULL);
    tn_scope_begin();
    tn_tensor *z = x;
    for (int i = 0; i < N && z; i++) z = tn_mul_scalar(z, 1);
    CHECK(tn_backward(z, .retain_graph = true) == 0);
    CHECK(tn_backward(z) == 0);
    CHECK_CLOSE(el(tn_grad(x), 0), 2, 0);
    tn_scope_end();
    /* create_graph through a long chain, then free it */
    tn_set_grad(x, NULL);
    tn_scope_begin();
    tn_tensor *c = x;
    for (int i = 0; i < 20000 && c; i++) c = tn_add_scalar(c, 0.5);
    tn_tensor *gc = grad1(c, x, true);
    CHECK_VALS(gc, 0, 1);
    tn_scope_end();
    tn_release(x);
    tn_memory_stats s1 = tn_memory_stats_get();
    CHECK_MSG(s1.live_tensors == s0.live_tensors && s1.live_bytes == s0.live_bytes, "leak: %lld tensors live, expected %lld",
              (long long)s1.live_tensors, (long long)s0.live_tensors);
}

/* ==================================================================================== */
/* 5. edge cases                                                                          */
/* ==================================================================================== */
TEST(edge_zero_dim) {
    BEGIN;
    tn_tensor *x = leaf(tn_scalar_tensor(3, TN_F64));
    tn_tensor *y = tn_mul(tn_mul(x, x), x);
    CHECK_SHAPE0(y);
    CHECK(tn_backward(y) == 0);
    CHECK_SHAPE0(tn_grad(x));
    CHECK_VALS(tn_grad(x), 0, 27);
    /* 0-d broadcast against [2,3]: its gradient is the sum, still 0-d */
    tn_set_grad(x, NULL);
    tn_tensor *m = mk(D(1, 2, 3, 4, 5, 6), SH(2, 3));
    CHECK(tn_backward(tn_sum(tn_mul(x, m))) == 0);
    CHECK_SHAPE0(tn_grad(x));
    CHECK_VALS(tn_grad(x), 0, 21);
    /* sum / mean of a 0-d tensor */
    tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_add(tn_sum(x), tn_mean(x))) == 0);
    CHECK_VALS(tn_grad(x), 0, 2);
    CHECK_SHAPE0(tn_grad(x));
    END;
}

TEST(edge_empty) {
    BEGIN;
    tn_tensor *x = leaf(tn_zeros(SH(0, 3), TN_F64));
    tn_tensor *s = tn_sum(x);
    CHECK_VALS(s, 0, 0);
    CHECK(tn_backward(s) == 0);
    CHECK_SHAPE(tn_grad(x), 0, 3);
    /* reduce a [2,0] over its empty dim: [2] of zeros; gradient [2,0] */
    tn_tensor *e = leaf(tn_zeros(SH(2, 0), TN_F64));
    tn_tensor *se = tn_sum_dims(e, TN_DIMS(1));
    CHECK_SHAPE(se, 2);
    CHECK(tn_backward(se, .gradient = tn_ones(SH(2), TN_F64)) == 0);
    CHECK_SHAPE(tn_grad(e), 2, 0);
    /* prod over an empty dim is 1 with an empty gradient */
    tn_set_grad(e, NULL);
    tn_tensor *pe = tn_prod_dims(e, TN_DIMS(1));
    CHECK_VALS(pe, 0, 1, 1);
    CHECK(tn_backward(pe, .gradient = tn_ones(SH(2), TN_F64)) == 0);
    CHECK_SHAPE(tn_grad(e), 2, 0);
    /* mm with an empty inner dim: zeros; gradients have the operands' (empty) shapes */
    tn_tensor *a = leaf(tn_zeros(SH(2, 0), TN_F64)), *b = leaf(tn_zeros(SH(0, 3), TN_F64));
    tn_tensor *p = tn_mm(a, b);
    CHECK_VALS(p, 0, 0, 0, 0, 0, 0, 0);
    CHECK(tn_backward(tn_sum(p)) == 0);
    CHECK_SHAPE(tn_grad(a), 2, 0);
    CHECK_SHAPE(tn_grad(b), 0, 3);
    /* cat with an empty piece */
    tn_tensor *c1 = LD(D(1, 2), 2), *c0 = leaf(tn_zeros(SH(0), TN_F64));
    tn_tensor *cc = tn_cat(UARGS(c0, c1, c0), 3);
    CHECK(tn_backward(tn_sum(tn_mul(cc, cc))) == 0);
    CHECK_VALS(tn_grad(c1), 0, 2, 4);
    CHECK_SHAPE(tn_grad(c0), 0);
    /* an empty slice of a tensor gets a zero gradient for every element */
    tn_tensor *q = LD(D(1, 2, 3), 3);
    tn_tensor *qs = tn_add(tn_sum(tn_slice(q, 0, 2, 2, 1)), tn_sum(tn_slice(q, 0, 0, 1, 1)));
    CHECK(tn_backward(qs) == 0);
    CHECK_VALS(tn_grad(q), 0, 1, 0, 0);
    END;
}

TEST(edge_broadcast_grads) {
    BEGIN;
    tn_tensor *a = LD(D(1, 2, 3, 4, 5, 6), 2, 1, 3), *b = LD(D(1, 10, 100, 1000), 4, 1);
    tn_tensor *p = tn_mul(a, b);
    CHECK_SHAPE(p, 2, 4, 3);
    CHECK(tn_backward(tn_sum(p)) == 0);
    CHECK_SHAPE(tn_grad(a), 2, 1, 3);
    CHECK_SHAPE(tn_grad(b), 4, 1);
    CHECK_VALS(tn_grad(a), 0, 1111, 1111, 1111, 1111, 1111, 1111);
    CHECK_VALS(tn_grad(b), 0, 21, 21, 21, 21);
    /* [1,3] + [3]: leading dim kept as 1 */
    tn_tensor *c = LD(D(1, 2, 3), 1, 3), *d = LD(D(1, 2, 3), 3);
    CHECK(tn_backward(tn_sum(tn_mul(tn_add(c, d), mk(D(1, 2, 3), SH(3))))) == 0);
    CHECK_SHAPE(tn_grad(c), 1, 3);
    CHECK_SHAPE(tn_grad(d), 3);
    CHECK_VALS(tn_grad(c), 0, 1, 2, 3);
    /* a [1] tensor broadcast to [2,3] and a 0-d: shapes [1] and [] */
    tn_tensor *o = LD(D(2), 1), *s = leaf(tn_scalar_tensor(3, TN_F64));
    tn_tensor *r = tn_sum(tn_mul(tn_add(o, tn_zeros(SH(2, 3), TN_F64)), s));
    CHECK(tn_backward(r) == 0);
    CHECK_SHAPE(tn_grad(o), 1);
    CHECK_SHAPE0(tn_grad(s));
    CHECK_VALS(tn_grad(o), 0, 18);
    CHECK_VALS(tn_grad(s), 0, 12);
    /* where with a broadcast condition and a 0-d branch */
    tn_tensor *t = leaf(tn_scalar_tensor(1, TN_F64)), *u = LD(D(1, 2, 3, 4, 5, 6), 2, 3);
    CHECK(tn_backward(tn_sum(tn_where(MASK(B(true, false, true), 3), t, u))) == 0);
    CHECK_SHAPE0(tn_grad(t));
    CHECK_VALS(tn_grad(t), 0, 4);
    CHECK_VALS(tn_grad(u), 0, 0, 1, 0, 0, 1, 0);
    /* mixed dtypes: float32 * float64 -> float64 result, float32 gradient */
    tn_tensor *f = leaf(mk32(D(1, 2), SH(2))), *g = LD(D(3, 4), 2);
    tn_tensor *fg = tn_mul(f, g);
    CHECK(tn_get_dtype(fg) == TN_F64);
    CHECK(tn_backward(tn_sum(fg)) == 0);
    CHECK(tn_grad(f) && tn_get_dtype(tn_grad(f)) == TN_F32);
    CHECK_VALS(tn_grad(f), 0, 3, 4);
    CHECK_VALS(tn_grad(g), 0, 1, 2);
    END;
}

/* Values at kinks and ties, as PyTorch 1.13 defines them. */
static tn_tensor *grad_of_sum(tn_tensor *(*f)(tn_tensor *), const double *v, int64_t n) {
    tn_tensor *x = leaf(mk(v, &n, 1));
    if (!x || tn_backward(tn_sum(f(x)))) return NULL;
    return tn_grad(x);
}
static tn_tensor *f_abs(tn_tensor *x) { return tn_abs(x); }
static tn_tensor *f_relu(tn_tensor *x) { return tn_relu(x); }
static tn_tensor *f_clamp(tn_tensor *x) { return tn_clamp(x, .min = -1, .max = 1); }
static tn_tensor *f_max(tn_tensor *x) { return tn_max(x); }
static tn_tensor *f_amax(tn_tensor *x) { return tn_amax(x, TN_DIMS(0)); }
static tn_tensor *f_max_dim(tn_tensor *x) { return tn_max_dim(x, 0, NULL); }
static tn_tensor *f_maximum(tn_tensor *x) { return tn_maximum(x, mk(D(3, 0, 5), SH(3))); }
static tn_tensor *f_ntn(tn_tensor *x) { return tn_nan_to_num(x, .posinf = 5, .neginf = -5); }
static tn_tensor *f_sqrt(tn_tensor *x) { return tn_sqrt(x); }
static tn_tensor *f_norm_inf(tn_tensor *x) { return tn_norm(x, .p = INFINITY); }
static tn_tensor *f_norm1(tn_tensor *x) { return tn_norm(x, .p = 1); }
static tn_tensor *f_norm3(tn_tensor *x) { return tn_norm(x, .p = 3); }
static tn_tensor *f_pow0(tn_tensor *x) { return tn_pow_scalar(x, 0.0); }
static tn_tensor *f_pow2(tn_tensor *x) { return tn_pow_scalar(x, 2); }
static tn_tensor *f_sort_w(tn_tensor *x) { return tn_mul(tn_sort(x, NULL, .dim = 0), mk(D(1, 2, 3), SH(3))); }
static tn_tensor *f_softplus(tn_tensor *x) { return tn_softplus(x, .beta = 2, .threshold = 1); }
static tn_tensor *f_prod(tn_tensor *x) { return tn_prod(x); }
static tn_tensor *f_cumprod(tn_tensor *x) { return tn_cumprod(x, 0); }
static tn_tensor *f_norm2(tn_tensor *x) { return tn_norm(x); }
static tn_tensor *f_std(tn_tensor *x) { return tn_std(x); }
static tn_tensor *f_lse_inf(tn_tensor *x) { return tn_logsumexp(x, TN_DIMS(0)); }
static tn_tensor *f_pow_base0(tn_tensor *b) { return tn_pow(mk(D(0, 0), SH(2)), b); }

TEST(edge_kinks_and_ties) {
    BEGIN;
    CHECK_VALS(grad_of_sum(f_abs, D(0, -2, 3), 3), 0, 0, -1, 1);
    CHECK_VALS(grad_of_sum(f_relu, D(0, -2, 3), 3), 0, 0, 0, 1);
    CHECK_VALS(grad_of_sum(f_clamp, D(-1, 1, 0.5, 2), 4), 0, 1, 1, 1, 0);
    CHECK_VALS(grad_of_sum(f_max, D(3, 1, 3), 3), 0, 0.5, 0, 0.5);
    CHECK_VALS(grad_of_sum(f_amax, D(3, 1, 3), 3), 0, 0.5, 0, 0.5);
    CHECK_VALS(grad_of_sum(f_max_dim, D(3, 1, 3), 3), 0, 1, 0, 0);
    CHECK_VALS(grad_of_sum(f_maximum, D(3, 1, 3), 3), 0, 0.5, 1, 0);
    CHECK_VALS(grad_of_sum(f_ntn, D(1, NAN, INFINITY, -INFINITY), 4), 0, 1, 0, 0, 0);
    CHECK_VALS(grad_of_sum(f_sqrt, D(0, 4), 2), 0, INFINITY, 0.25);
    CHECK_VALS(grad_of_sum(f_norm_inf, D(-3, 1, 3), 3), 0, -0.5, 0, 0.5);
    CHECK_VALS(grad_of_sum(f_norm1, D(0, -2, 3), 3), 0, 0, -1, 1);
    CHECK_VALS(grad_of_sum(f_norm3, D(1, -2, 3), 3), 1e-12, 0.0917202013581841, -0.3668808054327364, 0.8254818122236569);
    CHECK_VALS(grad_of_sum(f_pow0, D(0, 2), 2), 0, 0, 0);
    CHECK_VALS(grad_of_sum(f_pow2, D(0, 2), 2), 0, 0, 4);
    CHECK_VALS(grad_of_sum(f_pow_base0, D(2, 0), 2), 0, 0, 0);
    CHECK_VALS(grad_of_sum(f_sort_w, D(3, 1, 3), 3), 0, 2, 1, 3);   /* stable: first 3 sorts first */
    CHECK_VALS(grad_of_sum(f_softplus, D(0.2, 0.7, -1), 3), 1e-12, 0.598687660112452, 1, 0.11920292202211755);
    CHECK_VALS(grad_of_sum(f_lse_inf, D(-INFINITY, 0, 1), 3), 1e-12, 0, 0.2689414213699951, 0.7310585786300049);
    tn_tensor *a2 = LD(D(3, 1, 3, 2), 2, 2);
    CHECK(tn_backward(tn_amax(a2, TN_DIMS(0, 1))) == 0);
    CHECK_VALS(tn_grad(a2), 0, 0.5, 0, 0.5, 0);
    /* products with zeros */
    CHECK_VALS(grad_of_sum(f_prod, D(1, 2, 0, 4), 4), 0, 0, 0, 8, 0);
    CHECK_VALS(grad_of_sum(f_prod, D(1, 0, 0, 4), 4), 0, 0, 0, 0, 0);
    END;
}

/* PyTorch gives finite gradients at these points. */
TEST(edge_zeros_pytorch) {
    BEGIN;
    CHECK_VALS(grad_of_sum(f_cumprod, D(2, 0, 3), 3), 0, 1, 8, 0);
    CHECK_VALS(grad_of_sum(f_cumprod, D(2, 0, 3, 0), 4), 0, 1, 8, 0, 0);
    CHECK_VALS(grad_of_sum(f_norm2, D(0, 0, 0), 3), 0, 0, 0, 0);
    CHECK_VALS(grad_of_sum(f_std, D(1, 1, 1), 3), 0, 0, 0, 0);
    END;
}

/* second derivatives of prod at exact zeros (PyTorch's values) */
TEST(edge_prod_double_backward_zeros) {
    BEGIN;
    tn_tensor *x = LD(D(1, 3, 0, 4), 4);
    tn_tensor *g = grad1(tn_prod(x), x, true);
    CHECK_VALS(g, 0, 0, 0, 12, 0);
    CHECK_VALS(grad1(tn_sum(g), x, false), 0, 12, 4, 19, 3);
    tn_tensor *x2 = LD(D(1, 0, 0, 4), 4);
    tn_tensor *g2 = grad1(tn_prod(x2), x2, true);
    CHECK_VALS(g2, 0, 0, 0, 0, 0);
    CHECK_VALS(grad1(tn_sum(g2), x2, false), 0, 0, 4, 4, 0);
    END;
}

TEST(edge_float32) {
    BEGIN;
    const double xv[6] = {0.3, -1.2, 0.8, 0.05, 1.7, -0.6}, wv[6] = {0.5, -0.25, 1.0, 0.75, -1.5, 0.2};
    tn_tensor *x32 = leaf(mk32(xv, SH(2, 3))), *w32 = leaf(mk32(wv, SH(3, 2)));
    tn_tensor *x64 = LD(xv, 2, 3), *w64 = LD(wv, 3, 2);
    tn_tensor *l32 = tn_sum(tn_tanh(tn_mm(tn_sigmoid(x32), tn_exp(w32))));
    tn_tensor *l64 = tn_sum(tn_tanh(tn_mm(tn_sigmoid(x64), tn_exp(w64))));
    CHECK(tn_get_dtype(l32) == TN_F32);
    CHECK(tn_backward(l32) == 0 && tn_backward(l64) == 0);
    CHECK(tn_get_dtype(tn_grad(x32)) == TN_F32 && tn_get_dtype(tn_grad(w32)) == TN_F32);
    CHECK_SAME(tn_grad(x32), tn_grad(x64), 1e-5);
    CHECK_SAME(tn_grad(w32), tn_grad(w64), 1e-5);
    /* gradcheck on float32 inputs with float32-sized tolerances */
    GCT(u_tanh, 1e-2, 1e-2, 1e-2, leaf(mk32(xv, SH(3, 2))));
    GCT(l_mm, 1e-2, 1e-2, 1e-2, leaf(mk32(xv, SH(3, 2))), leaf(mk32(wv, SH(3, 2))));
    GCT(r_softmax1, 1e-2, 1e-2, 1e-2, leaf(mk32(xv, SH(3, 2))));
    END;
}

/* A backward inside a backward: y = x^2 whose backward recomputes x^2 in library ops on the
   saved x (which has history) and differentiates it with tn_autograd_grad, as the fused
   RNNs do under create_graph. The inner run walks nodes of the outer graph (x's exp) and
   must hand them back untouched: outer gradients, accumulation and double backward hold. */
static tn_tensor *sq_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_ctx_save(ctx, in[0]);
    return tn_mul(in[0], in[0]);
}
static int sq_bwd(tn_ctx *ctx, tn_tensor *g, tn_tensor **gin, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *x = tn_ctx_saved(ctx, 0), *r = NULL;
    if (!tn_is_grad_enabled()) { gin[0] = tn_mul(g, tn_mul_scalar(x, 2)); return 0; }
    tn_tensor *y = tn_mul(x, x);
    if (!y || tn_autograd_grad(&y, 1, &x, 1, &g, &r, .create_graph = true)) return -1;
    gin[0] = r;
    return 0;
}
static tn_tensor *sq(tn_tensor *x) { return tn_custom_op("SqBackward", sq_fwd, sq_bwd, &x, 1, NULL); }
GF(sq_gc, tn_sum(sq(tn_exp(IN0))))
GF(sq_gc2, tn_sum(tn_mul(sq(tn_exp(IN0)), tn_sin(IN0))))
static tn_tensor *count_hook(tn_tensor *g, void *user) { (*(int *)user)++; return g; }

TEST(reentrant_backward) {
    BEGIN;
    tn_tensor *a = LD(D(-1, 0.5, 2), 3);
    /* create_graph: d/da e^{2a} = 2e^{2a}, then d/da sum(2e^{2a}) = 4e^{2a} */
    tn_tensor *g1 = grad1(tn_sum(sq(tn_exp(a))), a, true);
    CHECK_VALS(g1, 1e-12, 2 * exp(-2.0), 2 * exp(1.0), 2 * exp(4.0));
    tn_tensor *g2 = g1 ? grad1(tn_sum(g1), a, false) : NULL;
    CHECK_VALS(g2, 1e-12, 4 * exp(-2.0), 4 * exp(1.0), 4 * exp(4.0));
    /* the same op twice in one graph, with a second consumer of exp(a): gradients sum */
    tn_tensor *e = tn_exp(a);
    tn_enable_grad_begin();
    tn_tensor *out = tn_sum(tn_add(tn_add(sq(e), sq(e)), e));
    tn_tensor *g3 = grad1(out, a, true);
    tn_enable_grad_end();
    CHECK_VALS(g3, 1e-12, 4 * exp(-2.0) + exp(-1.0), 4 * exp(1.0) + exp(0.5), 4 * exp(4.0) + exp(2.0));
    GC(sq_gc, RN(4));
    GC(sq_gc2, RN(2, 3));
    END;
}

/* tn_autograd_grad runs only what leads to its inputs (PyTorch's exec_info): nothing
   upstream of a non-leaf input runs, so its hooks stay silent and, without retain_graph,
   its saved tensors stay for a later backward. */
TEST(autograd_grad_runs_only_what_it_needs) {
    BEGIN;
    tn_tensor *a = LD(D(0.5, 1, 2), 3);
    tn_tensor *b = tn_exp(a);
    int calls = 0;
    CHECK(tn_register_hook(b, count_hook, &calls) >= 0);
    tn_tensor *m = tn_mul_scalar(b, 2), *r = NULL;
    tn_tensor *out = tn_sum(tn_mul(m, m));
    CHECK(tn_autograd_grad(&out, 1, &m, 1, NULL, &r) == 0);
    CHECK_VALS(r, 1e-12, 4 * exp(0.5), 4 * exp(1.0), 4 * exp(2.0));
    CHECK(calls == 0);
    CHECK(tn_backward(tn_sum(b)) == 0);                        /* exp's saved result is still there */
    CHECK(calls == 1);
    CHECK_VALS(tn_grad(a), 1e-12, exp(0.5), exp(1.0), exp(2.0));
    /* a leaf input and a non-leaf input on one path: both captured, in one run */
    tn_tensor *b2 = tn_exp(a), *ins[2] = {a, b2}, *rs[2] = {NULL, NULL};
    tn_tensor *o2 = tn_sum(tn_mul_scalar(b2, 3));
    CHECK(tn_autograd_grad(&o2, 1, ins, 2, NULL, rs) == 0);
    CHECK_VALS(rs[0], 1e-12, 3 * exp(0.5), 3 * exp(1.0), 3 * exp(2.0));
    CHECK_VALS(rs[1], 0, 3, 3, 3);
    END;
}

/* Each test runs in a forked child, so a crash (or a sanitizer report, or a leak found by
   LeakSanitizer) is one failed check and the remaining tests still run. */
#ifdef __unix__
static void run_isolated(const char *name, void (*fn)(void)) {
    int fd[2];
    if (pipe(fd) != 0) { tn_test_current = name; fn(); return; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        tn_test_passed = tn_test_failed = 0;
        tn_test_current = name;
        alarm(120);
        fn();
        fflush(stdout);
        int leaks = 0;

#ifdef TN_TEST_LSAN
        leaks = __lsan_do_recoverable_leak_check();
#endif
        int counts[2] = {tn_test_passed, tn_test_failed + (leaks != 0)};
        if (leaks) printf("FAIL %s: LeakSanitizer found leaks (see stderr)\n", name);
        fflush(stdout);
        if (write(fd[1], counts, sizeof counts) != (ssize_t)sizeof counts) _exit(3);
        _exit(0);
    }
    close(fd[1]);
    int counts[2] = {0, 0}, st = 0;
    ssize_t got = read(fd[0], counts, sizeof counts);
    close(fd[0]);
    waitpid(pid, &st, 0);
    tn_test_current = name;
    if (got == (ssize_t)sizeof counts) { tn_test_passed += counts[0]; tn_test_failed += counts[1]; }
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == (ssize_t)sizeof counts,
              "crashed: child %s %d (see stderr)", WIFSIGNALED(st) ? "killed by signal" : "exit status",
              WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}
#define RUN_T(name) run_isolated(#name, name)
#else
#define RUN_T(name) RUN(name)
#endif

/* gelu's backward in one pass (not recording) equals the formula in library ops (recording,
   create_graph), both forms, float64 and float32, with NaN and infinities */
TEST(gelu_backward_one_pass) {
    for (int approx = 0; approx < 2; approx++)
        for (int f64 = 0; f64 < 2; f64++) {
            tn_scope_begin();
            tn_tensor *x = tn_contiguous(tn_mul_scalar(tn_randn(TN_SHAPE(7, 33), f64 ? TN_F64 : TN_F32), 3));
            const double special[3] = {NAN, INFINITY, -INFINITY};
            for (int i = 0; i < 3; i++) {
                if (f64) ((double *)tn_data_ptr(x))[i] = special[i];
                else ((float *)tn_data_ptr(x))[i] = (float)special[i];
            }
            tn_requires_grad_(x, true);
            tn_tensor *w = tn_randn_like(x), *fused = NULL, *formula = NULL;
            tn_tensor *y = tn_sum(tn_mul(tn_gelu(x, .approximate = approx ? TN_APPROXIMATE_TANH : TN_APPROXIMATE_NONE), w));
            CHECK(tn_autograd_grad(&y, 1, &x, 1, NULL, &fused) == 0);
            y = tn_sum(tn_mul(tn_gelu(x, .approximate = approx ? TN_APPROXIMATE_TANH : TN_APPROXIMATE_NONE), w));
            CHECK(tn_autograd_grad(&y, 1, &x, 1, NULL, &formula, .create_graph = true) == 0);
            const double tol = f64 ? 1e-13 : 2e-6;
            CHECK_MSG(fused && formula && tn_allclose(fused, tn_detach(formula), .rtol = tol, .atol = tol, .equal_nan = true), "approx %d f64 %d: max diff %g", approx, f64,
                      fused && formula ? tn_item(tn_max(tn_abs(tn_sub(fused, tn_detach(formula))))) : -1.0);
            tn_scope_end();
        }
}   /* gradcheck and gradgradcheck of both forms: gc_unary */

int main(void) {
    RUN_T(gc_unary);
    RUN_T(gc_binary);
    RUN_T(gc_ternary);
    RUN_T(gc_reductions);
    RUN_T(gc_views);
    RUN_T(gc_indexing);
    RUN_T(gc_indexing_more);
    RUN_T(gc_index_edge);
    RUN_T(gc_linalg);
    RUN_T(gc_convert);
    RUN_T(gc_inplace);
    RUN_T(gc_zero_dim);
    RUN_T(gc_higher_order);
    RUN_T(gradcheck_detects_errors);
    RUN_T(sem_leaf_and_requires_grad);
    RUN_T(sem_grad_accumulates);
    RUN_T(sem_retain_graph);
    RUN_T(sem_backward_twice_without_saved_tensors);
    RUN_T(sem_create_graph);
    RUN_T(sem_autograd_grad);
    RUN_T(sem_retain_grad);
    RUN_T(sem_hooks);
    RUN_T(sem_retain_grad_and_hooks_inplace);
    RUN_T(sem_hook_changes_shape);
    RUN_T(sem_no_grad);
    RUN_T(sem_detach);
    RUN_T(sem_grad_fn_names);
    RUN_T(sem_grad_fn_names_pytorch);
    RUN_T(sem_engine_details);
    RUN_T(sem_backward_errors);
    RUN_T(ip_leaf_errors);
    RUN_T(ip_rebase_matches_out_of_place);
    RUN_T(ip_version_counter);
    RUN_T(ip_exp_saves_result);
    RUN_T(ip_copy_index_put_masked_fill);
    RUN_T(ip_copy_const_into_nonleaf);
    RUN_T(ip_view_of_nonleaf);
    RUN_T(custom_op);
    RUN_T(custom_op_bad_gradient_shape);
    RUN_T(reentrant_backward);
    RUN_T(autograd_grad_runs_only_what_it_needs);
    RUN_T(anomaly_names_graph_dot);
#ifdef __unix__
    RUN_T(grad_mode_per_thread);
#endif
    RUN_T(mem_training_loop_flat);
    RUN_T(mem_training_loop_zero_grad);
    RUN_T(mem_inplace_self_operand);
    RUN_T(mem_retain_grad_create_graph);
    RUN_T(mem_create_graph_loop);
    RUN_T(mem_long_chain);
    RUN_T(edge_zero_dim);
    RUN_T(edge_empty);
    RUN_T(edge_broadcast_grads);
    RUN_T(edge_kinks_and_ties);
    RUN_T(edge_zeros_pytorch);
    RUN_T(edge_prod_double_backward_zeros);
    RUN_T(edge_float32);
    RUN_T(sem_grad_reuse);
    RUN_T(gelu_backward_one_pass);
    return tn_test_report();
}
