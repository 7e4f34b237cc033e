/* test_ops.c — the math of tensor.h (sections 7-10) against naive reference loops.
 *
 * Every op runs on inputs in several memory layouts (contiguous, transposed, sliced with
 * step 2, expanded from a size-1 dim) and on broadcast pairs; the result is read back
 * as a contiguous float64 copy and compared element by element with a loop written
 * here with C's math.h on the same input values. Special values, dtype promotion and
 * integer semantics are checked against hard-coded values produced with PyTorch 1.13
 * (the test itself does not need PyTorch).
 *
 * Tests of bugs this file found assert the PyTorch behaviour. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#include <stdlib.h>
#include <stdint.h>
#include <float.h>
#include <limits.h>

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */
/* ------------------------------------------------------------------------ */

enum { L_CONTIG, L_TRANS, L_SLICED, L_EXPAND, L_NUM };
static const char *const layout_name[L_NUM] = {"contiguous", "transposed", "sliced", "expanded"};

/* value distributions of generated inputs */
enum {
    G_NORMAL, /* 2 * N(0, 1) */
    G_POS,    /* U[0.1, 5) */
    G_UNIT,   /* U[-0.95, 0.95) */
    G_WIDE,   /* U[-6, 6) */
    G_INT,    /* integers in [-9, 9] */
    G_INT_NZ, /* integers in [-9, 9] without 0 */
    G_EXPO,   /* integers in [0, 3] */
    G_BOOL,   /* 0 / 1 */
    G_HALF,   /* multiples of 0.5 in [-4, 4] (rounding ties) */
    G_POSINT, /* integers in [1, 9] */
};

static const char *dname(tn_dtype d) { return tn_dtype_name(d); }
static bool is_float(tn_dtype d) { return d == TN_F32 || d == TN_F64; }
static double rtol_of(tn_dtype d) { return d == TN_F32 ? 1e-5 : d == TN_F64 ? 1e-12 : 0; }
static double atol_of(tn_dtype d) { return d == TN_F32 ? 1e-6 : d == TN_F64 ? 1e-13 : 0; }

static int64_t numel_of(const int64_t *shape, int nd) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i];
    return n;
}

/* A contiguous float64 tensor of the given shape holding values of distribution gen. */
static tn_tensor *gen_base(const int64_t *shape, int nd, int gen) {
    tn_tensor *b = gen == G_NORMAL ? tn_randn(shape, nd, TN_F64) : tn_rand(shape, nd, TN_F64);
    if (!b) return NULL;
    double *p = (double *)tn_data_ptr(b);
    int64_t n = tn_numel(b);
    for (int64_t i = 0; i < n; i++) {
        double u = p[i], v = u;
        switch (gen) {
        case G_NORMAL: v = 2 * u; break;
        case G_POS: v = 0.1 + 4.9 * u; break;
        case G_UNIT: v = -0.95 + 1.9 * u; break;
        case G_WIDE: v = -6 + 12 * u; break;
        case G_INT: v = floor(u * 19) - 9; break;
        case G_INT_NZ: v = floor(u * 18) - 9; if (v >= 0) v += 1; break;
        case G_EXPO: v = floor(u * 4); break;
        case G_BOOL: v = u < 0.5; break;
        case G_HALF: v = floor(u * 17) / 2 - 4; break;
        case G_POSINT: v = 1 + floor(u * 9); break;
        }
        p[i] = v;
    }
    return b;
}

/* An input of logical shape `shape` and dtype dt laid out as `layout` (scope-owned). */
static tn_tensor *make_input(const int64_t *shape, int nd, tn_dtype dt, int layout, int gen) {
    int64_t bs[TN_MAX_DIMS] = {0};
    int bnd = nd;
    for (int i = 0; i < nd; i++) bs[i] = shape[i];
    int exp_dim = -1;
    switch (layout) {
    case L_TRANS:
        if (nd >= 2) for (int i = 0; i < nd; i++) bs[i] = shape[nd - 1 - i];
        else if (nd == 1) { bs[1] = 3; bnd = 2; }
        break;
    case L_SLICED:
        if (nd >= 1) { bs[0] = 2 * shape[0] + 1; bs[nd - 1] = 2 * shape[nd - 1] + 1; }
        break;
    case L_EXPAND:
        for (int i = 0; i < nd && exp_dim < 0; i++) if (shape[i] != 1) exp_dim = i;
        if (exp_dim >= 0) bs[exp_dim] = 1;
        break;
    }
    tn_tensor *b = tn_to_dtype(gen_base(bs, bnd, gen), dt), *t = b;
    if (!b) return NULL;
    switch (layout) {
    case L_TRANS:
        if (nd >= 2) {
            int64_t perm[TN_MAX_DIMS];
            for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
            t = tn_permute(b, perm, nd);
        } else if (nd == 1) t = tn_select(b, 1, 1);
        break;
    case L_SLICED:
        if (nd >= 1) t = tn_slice(b, 0, 1, TN_END, 2);
        if (nd >= 2) t = tn_slice(t, nd - 1, 1, TN_END, 2);
        break;
    case L_EXPAND:
        if (exp_dim >= 0) t = tn_expand(b, shape, nd);
        break;
    }
    return t;
}

/* The values of t in row-major order, as doubles (a scope-owned contiguous copy). */
static const double *dv(tn_tensor *t) {
    if (!t) return NULL;
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_F64));
    return c ? (const double *)tn_data_ptr(c) : NULL;
}

static char msg[1024];

static bool close_enough(double got, double exp, double rtol, double atol) {
    if (exp != exp) return got != got;
    if (isinf(exp)) return got == exp;
    return fabs(got - exp) <= atol + rtol * fabs(exp);
}

/* t holds the n values ref (row-major) within atol + rtol*|ref| (NaN matches NaN). */
static bool vals_ok(tn_tensor *t, const double *ref, int64_t n, double rtol, double atol) {
    if (!t) { snprintf(msg, sizeof msg, "NULL result (error: %.900s)", tn_last_error()); return false; }
    if (tn_numel(t) != n) { snprintf(msg, sizeof msg, "numel %lld, expected %lld", (long long)tn_numel(t), (long long)n); return false; }
    const double *g = dv(t);
    for (int64_t i = 0; i < n; i++)
        if (!close_enough(g[i], ref[i], rtol, atol)) {
            snprintf(msg, sizeof msg, "element %lld = %.17g, expected %.17g", (long long)i, g[i], ref[i]);
            return false;
        }
    msg[0] = 0;
    return true;
}

static bool shape_ok(tn_tensor *t, const int64_t *s, int nd) {
    if (!t) { snprintf(msg, sizeof msg, "NULL result (error: %.900s)", tn_last_error()); return false; }
    bool ok = tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_shape(t)[i] == s[i];
    if (!ok) {
        int k = snprintf(msg, sizeof msg, "shape [");
        for (int i = 0; i < tn_ndim(t) && k < 900; i++) k += snprintf(msg + k, sizeof msg - (size_t)k, i ? ", %lld" : "%lld", (long long)tn_shape(t)[i]);
        k += snprintf(msg + k, sizeof msg - (size_t)k, "], expected [");
        for (int i = 0; i < nd && k < 980; i++) k += snprintf(msg + k, sizeof msg - (size_t)k, i ? ", %lld" : "%lld", (long long)s[i]);
        snprintf(msg + k, sizeof msg - (size_t)k, "]");
    }
    return ok;
}

static char label[512];
#define LABEL(...) snprintf(label, sizeof label, __VA_ARGS__)
/* values (with dtype- or caller-given tolerance) */
#define CHECK_VALS(t, ref, n, rtol, atol) do { bool ok_ = vals_ok((t), (ref), (n), (rtol), (atol)); \
    CHECK_MSG(ok_, "%s: %s", label, msg); } while (0)
#define CHECK_SHAPE(t, ...) do { bool ok_ = shape_ok((t), TN_SHAPE(__VA_ARGS__)); CHECK_MSG(ok_, "%s: %s", label, msg); } while (0)
#define CHECK_SHAPE_N(t, s, nd) do { bool ok_ = shape_ok((t), (s), (nd)); CHECK_MSG(ok_, "%s: %s", label, msg); } while (0)
#define CHECK_DTYPE(t, dt) CHECK_MSG((t) && tn_get_dtype(t) == (dt), "%s: dtype %s, expected %s (error: %s)", label, \
    (t) ? dname(tn_get_dtype(t)) : "NULL", dname(dt), tn_last_error())
/* exact values given inline */
#define CHECK_LIST(t, tol, ...) do { const double e_[] = {__VA_ARGS__}; \
    bool ok_ = vals_ok((t), e_, (int64_t)(sizeof e_ / sizeof e_[0]), 0, (tol)); CHECK_MSG(ok_, "%s: %s", label, msg); } while (0)
/* a 1-d tensor of dtype dt from doubles */
static tn_tensor *vec(tn_dtype dt, const double *v, int64_t n) {
    return tn_to_dtype(tn_from_data(v, &n, 1, TN_F64), dt);
}
#define VEC(dt, ...) vec((dt), (const double[]){__VA_ARGS__}, (int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double)))

static double item(tn_tensor *t) { return t ? tn_item(t) : NAN; }

/* flat index into an operand of shape ishape (right-aligned, broadcast) for flat index
   `flat` of the output shape oshape */
static int64_t bidx(int64_t flat, const int64_t *oshape, int ond, const int64_t *ishape, int ind) {
    int64_t idx = 0, mul = 1;
    for (int d = ond - 1; d >= 0; d--) {
        int64_t c = flat % oshape[d];
        flat /= oshape[d];
        int id = d - (ond - ind);
        if (id >= 0) {
            if (ishape[id] != 1) idx += c * mul;
            mul *= ishape[id];
        }
    }
    return idx;
}

static void check_leaks(void) {
    CHECK_MSG(tn_memory_stats_get().live_tensors == 0, "%s: %lld tensors leaked", tn_test_current, (long long)tn_memory_stats_get().live_tensors);
}
static void end_scope_check_leaks(void) {
    tn_scope_end();
    check_leaks();
}

/* ------------------------------------------------------------------------ */
/* reference scalar functions                                               */
/* ------------------------------------------------------------------------ */
static double r_neg(double x) { return -x; }
static double r_abs(double x) { return fabs(x); }
static double r_sign(double x) { return (x > 0) - (x < 0); } /* torch.sign(nan) = 0 (1.13) */
static double r_exp(double x) { return exp(x); }
static double r_exp2(double x) { return exp2(x); }
static double r_log(double x) { return log(x); }
static double r_log2(double x) { return log2(x); }
static double r_log10(double x) { return log10(x); }
static double r_log1p(double x) { return log1p(x); }
static double r_expm1(double x) { return expm1(x); }
static double r_sqrt(double x) { return sqrt(x); }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_square(double x) { return x * x; }
static double r_recip(double x) { return 1 / x; }
static double r_sin(double x) { return sin(x); }
static double r_cos(double x) { return cos(x); }
static double r_tan(double x) { return tan(x); }
static double r_asin(double x) { return asin(x); }
static double r_acos(double x) { return acos(x); }
static double r_atan(double x) { return atan(x); }
static double r_sinh(double x) { return sinh(x); }
static double r_cosh(double x) { return cosh(x); }
static double r_tanh(double x) { return tanh(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double r_gelu_tanh(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))); }
static double r_silu(double x) { return x / (1 + exp(-x)); }
static double r_softplus(double x) { return x > 20 ? x : log1p(exp(x)); }
static double r_softplus_b2t3(double x) { return 2 * x > 3 ? x : log1p(exp(2 * x)) / 2; }
static double r_erf(double x) { return erf(x); }
static double r_erfc(double x) { return erfc(x); }
static double r_floor(double x) { return floor(x); }
static double r_ceil(double x) { return ceil(x); }
static double r_round(double x) { /* half to even, written out */
    double f = floor(x), d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return fmod(f, 2) == 0 ? f : f + 1;
}
static double r_trunc(double x) { return trunc(x); }
static double r_frac(double x) { return x - trunc(x); }
static double r_lnot(double x) { return x == 0; }
static double r_isnan(double x) { return x != x; }
static double r_isinf(double x) { return isinf(x) != 0; }
static double r_isfinite(double x) { return isfinite(x) != 0; }
static double r_bnot(double x) { return (double)~(int64_t)x; }
static double r_clamp_a(double x) { return x < -0.5 ? -0.5 : x > 0.7 ? 0.7 : x; }
static double r_clamp_i(double x) { return x < -3 ? -3 : x > 4 ? 4 : x; }
static double r_clamp_rev(double x) { (void)x; return -1; } /* min 1 > max -1: all max */
static double r_clamp_lo(double x) { return x < 0.25 ? 0.25 : x; }

static tn_tensor *f_gelu(tn_tensor *x) { return tn_gelu(x); }
static tn_tensor *f_gelu_tanh(tn_tensor *x) { return tn_gelu(x, .approximate = TN_APPROXIMATE_TANH); }
static tn_tensor *f_softplus(tn_tensor *x) { return tn_softplus(x); }
static tn_tensor *f_softplus_b2t3(tn_tensor *x) { return tn_softplus(x, .beta = 2, .threshold = 3); }
static tn_tensor *f_nan_to_num(tn_tensor *x) { return tn_nan_to_num(x); }
static tn_tensor *f_clamp_a(tn_tensor *x) { return tn_clamp(x, .min = -0.5, .max = 0.7); }
static tn_tensor *f_clamp_i(tn_tensor *x) { return tn_clamp(x, .min = -3, .max = 4); }
static tn_tensor *f_clamp_rev(tn_tensor *x) { return tn_clamp(x, .min = 1, .max = -1); }
static tn_tensor *f_clamp_lo(tn_tensor *x) { return tn_clamp(x, .min = 0.25); }
static double r_id(double x) { return x; }

/* kinds of unary ops */
enum {
    U_FLOAT, /* float math: integer input gives float32 */
    U_ALL,   /* defined on integers too, same dtype */
    U_PRED,  /* bool result */
    U_FONLY, /* floating inputs only in this table (frac, gelu...) */
    U_INT,   /* integers and bool only (bitwise_not) */
};

typedef struct unary_spec {
    const char *name;
    tn_tensor *(*fn)(tn_tensor *);
    double (*ref)(double);
    int gen, kind;
} unary_spec;

static const unary_spec unary_ops[] = {
    {"neg", tn_neg, r_neg, G_NORMAL, U_ALL},
    {"abs", tn_abs, r_abs, G_NORMAL, U_ALL},
    {"sign", tn_sign, r_sign, G_NORMAL, U_ALL},
    {"exp", tn_exp, r_exp, G_WIDE, U_FLOAT},
    {"exp2", tn_exp2, r_exp2, G_WIDE, U_FLOAT},
    {"log", tn_log, r_log, G_POS, U_FLOAT},
    {"log2", tn_log2, r_log2, G_POS, U_FLOAT},
    {"log10", tn_log10, r_log10, G_POS, U_FLOAT},
    {"log1p", tn_log1p, r_log1p, G_UNIT, U_FLOAT},
    {"expm1", tn_expm1, r_expm1, G_WIDE, U_FLOAT},
    {"sqrt", tn_sqrt, r_sqrt, G_POS, U_FLOAT},
    {"rsqrt", tn_rsqrt, r_rsqrt, G_POS, U_FLOAT},
    {"square", tn_square, r_square, G_NORMAL, U_ALL},
    {"reciprocal", tn_reciprocal, r_recip, G_NORMAL, U_FLOAT},
    {"sin", tn_sin, r_sin, G_WIDE, U_FLOAT},
    {"cos", tn_cos, r_cos, G_WIDE, U_FLOAT},
    {"tan", tn_tan, r_tan, G_UNIT, U_FLOAT},
    {"asin", tn_asin, r_asin, G_UNIT, U_FLOAT},
    {"acos", tn_acos, r_acos, G_UNIT, U_FLOAT},
    {"atan", tn_atan, r_atan, G_WIDE, U_FLOAT},
    {"sinh", tn_sinh, r_sinh, G_WIDE, U_FLOAT},
    {"cosh", tn_cosh, r_cosh, G_WIDE, U_FLOAT},
    {"tanh", tn_tanh, r_tanh, G_WIDE, U_FLOAT},
    {"sigmoid", tn_sigmoid, r_sigmoid, G_WIDE, U_FLOAT},
    {"relu", tn_relu, r_relu, G_NORMAL, U_ALL},
    {"gelu", f_gelu, r_gelu, G_WIDE, U_FONLY},
    {"gelu_tanh", f_gelu_tanh, r_gelu_tanh, G_WIDE, U_FONLY},
    {"silu", tn_silu, r_silu, G_WIDE, U_FONLY},
    {"softplus", f_softplus, r_softplus, G_WIDE, U_FONLY},
    {"softplus(beta 2, threshold 3)", f_softplus_b2t3, r_softplus_b2t3, G_WIDE, U_FONLY},
    {"erf", tn_erf, r_erf, G_NORMAL, U_FLOAT},
    {"erfc", tn_erfc, r_erfc, G_NORMAL, U_FLOAT},
    {"floor", tn_floor, r_floor, G_HALF, U_ALL},
    {"ceil", tn_ceil, r_ceil, G_HALF, U_ALL},
    {"round", tn_round, r_round, G_HALF, U_ALL},
    {"trunc", tn_trunc, r_trunc, G_HALF, U_ALL},
    {"frac", tn_frac, r_frac, G_NORMAL, U_FONLY},
    {"logical_not", tn_logical_not, r_lnot, G_INT, U_PRED},
    {"bitwise_not", tn_bitwise_not, r_bnot, G_INT, U_INT},
    {"isnan", tn_isnan, r_isnan, G_NORMAL, U_PRED},
    {"isinf", tn_isinf, r_isinf, G_NORMAL, U_PRED},
    {"isfinite", tn_isfinite, r_isfinite, G_NORMAL, U_PRED},
    {"nan_to_num", f_nan_to_num, r_id, G_NORMAL, U_ALL},
    {"clamp(-0.5, 0.7)", f_clamp_a, r_clamp_a, G_NORMAL, U_FONLY},
    {"clamp(-3, 4)", f_clamp_i, r_clamp_i, G_INT, U_ALL},
    {"clamp(1, -1) (min > max)", f_clamp_rev, r_clamp_rev, G_INT, U_ALL},
    {"clamp(0.25, inf)", f_clamp_lo, r_clamp_lo, G_NORMAL, U_FONLY},
};
#define NUM_UNARY (int)(sizeof unary_ops / sizeof unary_ops[0])

/* ------------------------------------------------------------------------ */
/* 1. elementwise: unary ops on every layout                                */
/* ------------------------------------------------------------------------ */
static void run_unary(const unary_spec *u, tn_dtype dt, int layout, const int64_t *shape, int nd) {
    tn_scope_begin();
    int gen = u->gen;
    if (!is_float(dt) && (gen != G_INT && gen != G_BOOL)) gen = G_INT;
    if (dt == TN_U8 && gen == G_INT) gen = G_POSINT;
    tn_tensor *x = make_input(shape, nd, dt, layout, gen);
    tn_tensor *r = u->fn(x);
    tn_dtype want = u->kind == U_PRED ? TN_BOOL : (u->kind == U_FLOAT && !is_float(dt)) ? TN_F32 : dt;
    LABEL("%s on %s %s", u->name, layout_name[layout], dname(dt));
    CHECK_DTYPE(r, want);
    CHECK_SHAPE_N(r, shape, nd);
    const double *xv = dv(x);
    int64_t n = numel_of(shape, nd);
    double *ref = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) ref[i] = u->ref(xv[i]);
    double rt = rtol_of(want) * 2, at = atol_of(want) * 2;
    CHECK_VALS(r, ref, n, rt, at);
    free(ref);
    tn_scope_end();
}

TEST(unary_all_layouts) {
    tn_manual_seed(1);
    const int64_t shape[3] = {3, 4, 5};
    for (int i = 0; i < NUM_UNARY; i++) {
        const unary_spec *u = &unary_ops[i];
        for (int l = 0; l < L_NUM; l++) {
            if (u->kind != U_INT) {
                run_unary(u, TN_F32, l, shape, 3);
                if (l == L_CONTIG || l == L_TRANS) run_unary(u, TN_F64, l, shape, 3);
            }
            if (u->kind == U_ALL || u->kind == U_PRED || u->kind == U_INT || (u->kind == U_FLOAT && l == L_SLICED)) {
                if (l == L_CONTIG || l == L_SLICED) run_unary(u, TN_I32, l, shape, 3);
                if (l == L_TRANS || l == L_EXPAND) run_unary(u, TN_I64, l, shape, 3);
            }
        }
    }
    /* other shapes: 1-d, 0-d, with a 0-sized dim, a single element */
    const int64_t s1[1] = {7}, s0[1] = {0}, s2[2] = {0, 3}, s11[2] = {1, 1};
    for (int i = 0; i < NUM_UNARY; i++) {
        const unary_spec *u = &unary_ops[i];
        tn_dtype dt = u->kind == U_INT ? TN_I64 : TN_F64;
        run_unary(u, dt, L_TRANS, s1, 1);
        run_unary(u, dt, L_CONTIG, s0, 0);
        run_unary(u, dt, L_CONTIG, s0, 1);
        run_unary(u, dt, L_SLICED, s2, 2);
        run_unary(u, dt, L_EXPAND, s11, 2);
    }
    /* uint8 and bool where defined */
    run_unary(&unary_ops[1], TN_U8, L_SLICED, shape, 3);   /* abs */
    run_unary(&unary_ops[12], TN_U8, L_TRANS, shape, 3);   /* square */
    check_leaks();
}

/* special values of the unary ops, from PyTorch 1.13 */
TEST(unary_special_values) {
    tn_scope_begin();
    const double inf = INFINITY, nan = NAN;
    for (int k = 0; k < 2; k++) {
        tn_dtype dt = k ? TN_F64 : TN_F32;
        tn_tensor *x = VEC(dt, nan, inf, -inf, 0.0, -0.0, 1.0, -2.5);
        LABEL("sign special %s", dname(dt));
        CHECK_LIST(tn_sign(x), 0, 0, 1, -1, 0, 0, 1, -1);
        LABEL("abs special %s", dname(dt));
        CHECK_LIST(tn_abs(x), 0, nan, inf, inf, 0, 0, 1, 2.5);
        LABEL("relu special %s", dname(dt));
        CHECK_LIST(tn_relu(x), 0, nan, inf, 0, 0, 0, 1, 0);
        LABEL("isnan %s", dname(dt));
        CHECK_LIST(tn_isnan(x), 0, 1, 0, 0, 0, 0, 0, 0);
        LABEL("isinf %s", dname(dt));
        CHECK_LIST(tn_isinf(x), 0, 0, 1, 1, 0, 0, 0, 0);
        LABEL("isfinite %s", dname(dt));
        CHECK_LIST(tn_isfinite(x), 0, 0, 0, 0, 1, 1, 1, 1);
        LABEL("logical_not special %s", dname(dt));
        CHECK_LIST(tn_logical_not(x), 0, 0, 0, 0, 1, 1, 0, 0);
        LABEL("nan_to_num default %s", dname(dt));
        double big = k ? DBL_MAX : FLT_MAX;
        CHECK_LIST(tn_nan_to_num(x), 0, 0, big, -big, 0, 0, 1, -2.5);
        LABEL("nan_to_num(1, 2, -3) %s", dname(dt));
        CHECK_LIST(tn_nan_to_num(x, .nan = 1, .posinf = 2, .neginf = -3), 0, 1, 2, -3, 0, 0, 1, -2.5);
        LABEL("frac special %s", dname(dt));
        CHECK_LIST(tn_frac(VEC(dt, -1.5, 2.25, inf, nan)), 0, -0.5, 0.25, nan, nan);
        LABEL("round half to even %s", dname(dt));
        CHECK_LIST(tn_round(VEC(dt, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999997, 4194304.5, 4194305.5, inf, nan)), 0,
                   0, 2, 2, -0.0, -2, -2, 4, 0, 4194304, 4194306, inf, nan);
        LABEL("floor/ceil/trunc inf %s", dname(dt));
        CHECK_LIST(tn_floor(VEC(dt, inf, -inf, nan, -0.5)), 0, inf, -inf, nan, -1);
        CHECK_LIST(tn_ceil(VEC(dt, inf, -inf, nan, -0.5)), 0, inf, -inf, nan, -0.0);
        CHECK_LIST(tn_trunc(VEC(dt, inf, -inf, nan, -0.5)), 0, inf, -inf, nan, -0.0);
        LABEL("log special %s", dname(dt));
        CHECK_LIST(tn_log(VEC(dt, 0, -1, inf)), 0, -inf, nan, inf);
        CHECK_LIST(tn_sqrt(VEC(dt, -1, inf, 0)), 0, nan, inf, 0);
        CHECK_LIST(tn_rsqrt(VEC(dt, 0, inf)), 0, inf, 0);
        CHECK_LIST(tn_reciprocal(VEC(dt, 0, -inf)), 0, inf, -0.0);
        CHECK_LIST(tn_exp(VEC(dt, -inf, inf, 1000)), 0, 0, inf, inf);
        LABEL("sigmoid extremes %s", dname(dt));
        CHECK_LIST(tn_sigmoid(VEC(dt, -1000, 1000, -inf, inf, 0)), 0, 0, 1, 0, 1, 0.5);
        LABEL("tanh extremes %s", dname(dt));
        CHECK_LIST(tn_tanh(VEC(dt, -1000, 1000, nan)), 0, -1, 1, nan);
        LABEL("silu/gelu extremes %s", dname(dt));
        CHECK_LIST(tn_silu(VEC(dt, -1000, 1000)), 0, -0.0, 1000);
        CHECK_LIST(tn_gelu(VEC(dt, -1000, 1000)), 0, -0.0, 1000);
        CHECK_LIST(tn_gelu(VEC(dt, -1000, 1000), .approximate = TN_APPROXIMATE_TANH), 0, -0.0, 1000);
        LABEL("softplus extremes %s", dname(dt));
        CHECK_LIST(tn_softplus(VEC(dt, 1000, -1000, 20, 21)), 1e-6, 1000, 0, 20, 21);
        /* torch: F.softplus(tensor([1.,30.,-30.,5.]), beta=2, threshold=8) */
        CHECK_LIST(tn_softplus(VEC(dt, 1, 30, -30, 5), .beta = 2, .threshold = 8), 1e-6, 1.0634640836596405, 30, 4.3782688e-27, 5);
    }
    /* clamp: NaN input stays NaN, NaN bound gives NaN everywhere, min > max gives max */
    tn_tensor *x = VEC(TN_F32, nan, 1, 5, -7);
    LABEL("clamp NaN input");
    CHECK_LIST(tn_clamp(x, .min = 2, .max = 3), 0, nan, 2, 3, 2);
    LABEL("clamp NaN bound");   /* tn_clamp's NAN is None: a NaN bound is clamp_min's or clamp_max's */
    CHECK_LIST(tn_clamp_min(x, nan), 0, nan, nan, nan, nan);
    CHECK_LIST(tn_clamp_max(x, nan), 0, nan, nan, nan, nan);
    LABEL("clamp min > max");
    CHECK_LIST(tn_clamp(x, .min = 3, .max = 1), 0, nan, 1, 1, 1);
    LABEL("clamp one-sided");
    CHECK_LIST(tn_clamp(x, .max = 2), 0, nan, 1, 2, -7);
    CHECK_LIST(tn_clamp(x, .min = 2), 0, nan, 2, 5, 2);
    /* integer clamp: torch.clamp(tensor([0,1,2,3,5]), 3, 1) = [1,1,1,1,1] */
    tn_tensor *xi = VEC(TN_I64, 0, 1, 2, 3, 5);
    LABEL("int clamp min > max");
    CHECK_DTYPE(tn_clamp(xi, .min = 3, .max = 1), TN_I64);
    CHECK_LIST(tn_clamp(xi, .min = 3, .max = 1), 0, 1, 1, 1, 1, 1);
    LABEL("int clamp with fractional bound promotes to float32");
    CHECK_DTYPE(tn_clamp(xi, .min = 1.5, .max = 3), TN_F32);
    CHECK_LIST(tn_clamp(xi, .min = 1.5, .max = 3), 0, 1.5, 1.5, 2, 3, 3);
    /* torch.clamp(tensor([True, False]), 0, 1) = tensor([1, 0]): int64 (bool with an int scalar promotes) */
    LABEL("bool clamp with int bounds gives int64");
    CHECK_DTYPE(tn_clamp(VEC(TN_BOOL, 1, 0), .min = 0, .max = 1), TN_I64);
    CHECK_LIST(tn_clamp(VEC(TN_BOOL, 1, 0), .min = 0, .max = 1), 0, 1, 0);
    CHECK_LIST(tn_clamp(VEC(TN_BOOL, 1, 0), .min = 0, .max = 0.5), 0, 0.5, 0);
    LABEL("int clamp infinite bounds");
    CHECK_DTYPE(tn_clamp(xi, .max = 2), TN_I64);
    CHECK_LIST(tn_clamp(xi, .max = 2), 0, 0, 1, 2, 2, 2);
    /* integer inputs of float functions give float32 */
    LABEL("exp of int64");
    CHECK_DTYPE(tn_exp(xi), TN_F32);
    CHECK_DTYPE(tn_sqrt(VEC(TN_BOOL, 1, 0)), TN_F32);
    CHECK_LIST(tn_sqrt(VEC(TN_BOOL, 1, 0)), 0, 1, 0);
    LABEL("isnan of int");
    CHECK_DTYPE(tn_isnan(xi), TN_BOOL);
    CHECK_LIST(tn_isnan(xi), 0, 0, 0, 0, 0, 0);
    CHECK_LIST(tn_isfinite(xi), 0, 1, 1, 1, 1, 1);
    LABEL("bitwise_not int/bool");
    CHECK_LIST(tn_bitwise_not(VEC(TN_I64, 0, 5, -1)), 0, -1, -6, 0);
    CHECK_DTYPE(tn_bitwise_not(VEC(TN_BOOL, 1, 0)), TN_BOOL);
    CHECK_LIST(tn_bitwise_not(VEC(TN_BOOL, 1, 0)), 0, 0, 1);
    CHECK_LIST(tn_bitwise_not(VEC(TN_U8, 0, 5)), 0, 255, 250);
    CHECK_ERR(tn_bitwise_not(VEC(TN_F32, 1)), "bitwise_not");
    LABEL("sign of bool");
    CHECK_DTYPE(tn_sign(VEC(TN_BOOL, 1, 0)), TN_BOOL);
    CHECK_LIST(tn_sign(VEC(TN_BOOL, 1, 0)), 0, 1, 0);
    CHECK_ERR(tn_neg(VEC(TN_BOOL, 1)), "bool");
    CHECK_ERR(tn_relu(VEC(TN_BOOL, 1)), "bool");
    CHECK_ERR(tn_frac(VEC(TN_I64, 1)), "frac");
    /* int neg / abs wrap at the minimum as torch */
    LABEL("int neg/abs of INT_MIN");
    tn_tensor *mn = tn_from_data((const int32_t[]){INT32_MIN, -3}, TN_SHAPE(2), TN_I32);
    CHECK_LIST(tn_neg(mn), 0, (double)INT32_MIN, 3);
    CHECK_LIST(tn_abs(mn), 0, (double)INT32_MIN, 3);
    CHECK_ERR(tn_softplus(x, .beta = 0), "beta");
    end_scope_check_leaks();
}


/* ------------------------------------------------------------------------ */
/* 1. elementwise: binary ops on every layout and broadcast pairs           */
/* ------------------------------------------------------------------------ */
static double r_add(double a, double b) { return a + b; }
static double r_add3(double a, double b) { return a + 3 * b; }
static double r_sub(double a, double b) { return a - b; }
static double r_subm2(double a, double b) { return a + 2 * b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_fdiv(double a, double b) { return floor(a / b); }
static double r_rem(double a, double b) { return a - b * floor(a / b); }
static double r_fmod(double a, double b) { return fmod(a, b); }
static double r_pow(double a, double b) { return pow(a, b); }
static double r_atan2(double a, double b) { return atan2(a, b); }
static double r_max(double a, double b) { return (a != a || b != b) ? NAN : a > b ? a : b; }
static double r_min(double a, double b) { return (a != a || b != b) ? NAN : a < b ? a : b; }
static double r_eq(double a, double b) { return a == b; }
static double r_ne(double a, double b) { return a != b; }
static double r_lt(double a, double b) { return a < b; }
static double r_le(double a, double b) { return a <= b; }
static double r_gt(double a, double b) { return a > b; }
static double r_ge(double a, double b) { return a >= b; }
static double r_land(double a, double b) { return a != 0 && b != 0; }
static double r_lor(double a, double b) { return a != 0 || b != 0; }
static double r_lxor(double a, double b) { return (a != 0) != (b != 0); }
static double r_band(double a, double b) { return (double)((int64_t)a & (int64_t)b); }
static double r_bor(double a, double b) { return (double)((int64_t)a | (int64_t)b); }
static double r_bxor(double a, double b) { return (double)((int64_t)a ^ (int64_t)b); }
static tn_tensor *f_add3(tn_tensor *a, tn_tensor *b) { return tn_add_alpha(a, b, 3); }
static tn_tensor *f_subm2(tn_tensor *a, tn_tensor *b) { return tn_sub_alpha(a, b, -2); }

enum { B_ARITH, B_TOFLOAT, B_CMP, B_LOGICAL, B_BITWISE };
typedef struct binary_spec {
    const char *name;
    tn_tensor *(*fn)(tn_tensor *, tn_tensor *);
    double (*ref)(double, double);
    int ga, gb, gai, gbi; /* value distributions for float / integer inputs */
    int kind;
    bool bool_ok;         /* defined for two bool tensors */
} binary_spec;

static const binary_spec binary_ops[] = {
    {"add", tn_add, r_add, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, true},
    {"add_alpha(3)", f_add3, r_add3, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, false},
    {"sub", tn_sub, r_sub, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, false},
    {"sub_alpha(-2)", f_subm2, r_subm2, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, false},
    {"mul", tn_mul, r_mul, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, true},
    {"div", tn_div, r_div, G_NORMAL, G_NORMAL, G_INT, G_INT_NZ, B_TOFLOAT, true},
    {"floor_divide", tn_floor_divide, r_fdiv, G_NORMAL, G_NORMAL, G_INT, G_INT_NZ, B_ARITH, false},
    {"remainder", tn_remainder, r_rem, G_NORMAL, G_NORMAL, G_INT, G_INT_NZ, B_ARITH, false},
    {"fmod", tn_fmod, r_fmod, G_NORMAL, G_NORMAL, G_INT, G_INT_NZ, B_ARITH, false},
    {"pow", tn_pow, r_pow, G_POS, G_NORMAL, G_INT, G_EXPO, B_ARITH, false},
    {"atan2", tn_atan2, r_atan2, G_NORMAL, G_NORMAL, G_INT, G_INT, B_TOFLOAT, false},
    {"maximum", tn_maximum, r_max, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, true},
    {"minimum", tn_minimum, r_min, G_NORMAL, G_NORMAL, G_INT, G_INT, B_ARITH, true},
    {"eq", tn_eq, r_eq, G_INT, G_INT, G_INT, G_INT, B_CMP, true},
    {"ne", tn_ne, r_ne, G_INT, G_INT, G_INT, G_INT, B_CMP, true},
    {"lt", tn_lt, r_lt, G_INT, G_INT, G_INT, G_INT, B_CMP, true},
    {"le", tn_le, r_le, G_INT, G_INT, G_INT, G_INT, B_CMP, true},
    {"gt", tn_gt, r_gt, G_INT, G_INT, G_INT, G_INT, B_CMP, true},
    {"ge", tn_ge, r_ge, G_INT, G_INT, G_INT, G_INT, B_CMP, true},
    {"logical_and", tn_logical_and, r_land, G_EXPO, G_EXPO, G_EXPO, G_EXPO, B_LOGICAL, true},
    {"logical_or", tn_logical_or, r_lor, G_EXPO, G_EXPO, G_EXPO, G_EXPO, B_LOGICAL, true},
    {"logical_xor", tn_logical_xor, r_lxor, G_EXPO, G_EXPO, G_EXPO, G_EXPO, B_LOGICAL, true},
    {"bitwise_and", tn_bitwise_and, r_band, G_INT, G_INT, G_INT, G_INT, B_BITWISE, true},
    {"bitwise_or", tn_bitwise_or, r_bor, G_INT, G_INT, G_INT, G_INT, B_BITWISE, true},
    {"bitwise_xor", tn_bitwise_xor, r_bxor, G_INT, G_INT, G_INT, G_INT, B_BITWISE, true},
};
#define NUM_BINARY (int)(sizeof binary_ops / sizeof binary_ops[0])

static void run_binary(const binary_spec *b, tn_dtype dt, int la, int lb, const int64_t *sa, int na, const int64_t *sb, int nb) {
    tn_scope_begin();
    bool fl = is_float(dt);
    int ga = fl ? b->ga : b->gai, gb = fl ? b->gb : b->gbi;
    if (dt == TN_BOOL) ga = gb = G_BOOL;
    if (dt == TN_U8) ga = gb = G_POSINT;
    tn_tensor *x = make_input(sa, na, dt, la, ga), *y = make_input(sb, nb, dt, lb, gb);
    tn_tensor *r = b->fn(x, y);
    int64_t os[TN_MAX_DIMS];
    int on = tn_broadcast_shapes(sa, na, sb, nb, os);
    tn_dtype want = (b->kind == B_CMP || b->kind == B_LOGICAL) ? TN_BOOL : (b->kind == B_TOFLOAT && !fl) ? TN_F32 : dt;
    LABEL("%s on %s %s [%d-d] and %s [%d-d]", b->name, layout_name[la], dname(dt), na, layout_name[lb], nb);
    CHECK_DTYPE(r, want);
    CHECK_SHAPE_N(r, os, on);
    const double *xv = dv(x), *yv = dv(y);
    int64_t n = numel_of(os, on);
    double *ref = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        ref[i] = b->ref(xv[bidx(i, os, on, sa, na)], yv[bidx(i, os, on, sb, nb)]);
        if (want == TN_BOOL) ref[i] = ref[i] != 0;
        if (want == TN_U8) ref[i] = fmod(ref[i], 256); /* uint8 wraps */
    }
    CHECK_VALS(r, ref, n, 2 * rtol_of(want), 2 * atol_of(want));
    free(ref);
    tn_scope_end();
}

TEST(binary_all_layouts) {
    tn_manual_seed(2);
    const int64_t s345[3] = {3, 4, 5}, s314[3] = {3, 1, 4}, s21[2] = {2, 1}, s5[1] = {5}, s31[2] = {3, 1},
                  s23[2] = {2, 3}, s03[2] = {0, 3}, s3[1] = {3}, s1[1] = {1}, s0[1] = {0};
    const int pairs[][2] = {{L_CONTIG, L_CONTIG}, {L_CONTIG, L_TRANS}, {L_TRANS, L_SLICED}, {L_SLICED, L_EXPAND}, {L_EXPAND, L_TRANS}};
    const tn_dtype dts[] = {TN_F32, TN_F64, TN_I32, TN_I64};
    for (int i = 0; i < NUM_BINARY; i++) {
        const binary_spec *b = &binary_ops[i];
        for (int d = 0; d < 4; d++) {
            tn_dtype dt = dts[d];
            if (b->kind == B_BITWISE && is_float(dt)) continue;
            for (int p = 0; p < 5; p++) {
                if (dt == TN_F64 && p != 1) continue;       /* float64: one pair per op */
                if (!is_float(dt) && p % 2 != (dt == TN_I32)) continue; /* int32 odd pairs, int64 even ones */
                run_binary(b, dt, pairs[p][0], pairs[p][1], s345, 3, s345, 3);
            }
            /* broadcast [3,1,4] with [2,1] -> [3,2,4], both ways round */
            run_binary(b, dt, L_CONTIG, L_CONTIG, s314, 3, s21, 2);
            run_binary(b, dt, L_TRANS, L_SLICED, s21, 2, s314, 3);
        }
        tn_dtype f32 = b->kind == B_BITWISE ? TN_I32 : TN_F32, f64 = b->kind == B_BITWISE ? TN_I64 : TN_F64;
        run_binary(b, f32, L_EXPAND, L_TRANS, s5, 1, s31, 2);             /* [5] with [3,1] */
        run_binary(b, f64, L_CONTIG, L_TRANS, s0, 0, s23, 2);             /* 0-d with [2,3] */
        run_binary(b, TN_I64, L_SLICED, L_CONTIG, s23, 2, s0, 0);         /* [2,3] with 0-d */
        run_binary(b, TN_I64, L_CONTIG, L_CONTIG, s0, 0, s0, 0);          /* 0-d with 0-d */
        run_binary(b, TN_I32, L_CONTIG, L_SLICED, s03, 2, s3, 1);         /* [0,3] with [3] */
        run_binary(b, TN_I64, L_CONTIG, L_CONTIG, s1, 1, s0, 1);          /* [1] with [0] -> [0] */
        if (b->bool_ok) {
            run_binary(b, TN_BOOL, L_TRANS, L_SLICED, s345, 3, s345, 3);
            run_binary(b, TN_BOOL, L_CONTIG, L_EXPAND, s314, 3, s21, 2);
        }
    }
    /* uint8 */
    run_binary(&binary_ops[0], TN_U8, L_CONTIG, L_TRANS, s345, 3, s345, 3);
    run_binary(&binary_ops[4], TN_U8, L_SLICED, L_CONTIG, s314, 3, s21, 2);
    run_binary(&binary_ops[22], TN_U8, L_TRANS, L_EXPAND, s345, 3, s345, 3);
    check_leaks();
}

TEST(binary_broadcast_errors) {
    tn_scope_begin();
    CHECK_ERR(tn_add(tn_zeros(TN_SHAPE(3), TN_F32), tn_zeros(TN_SHAPE(4), TN_F32)), "size");
    CHECK_ERR(tn_mul(tn_zeros(TN_SHAPE(2, 3), TN_F32), tn_zeros(TN_SHAPE(3, 2), TN_F32)), "size");
    CHECK_ERR(tn_eq(tn_zeros(TN_SHAPE(0), TN_F32), tn_zeros(TN_SHAPE(2), TN_F32)), "size");
    end_scope_check_leaks();
}

/* *_scalar forms: an integral double acts as a Python int, any other as a Python float */
TEST(binary_scalar_forms) {
    tn_scope_begin();
    tn_tensor *i64 = VEC(TN_I64, 1, 2, -3), *i32 = VEC(TN_I32, 1, 2, -3), *f32 = VEC(TN_F32, 1, 2, -3), *f64 = VEC(TN_F64, 1, 2, -3);
    tn_tensor *u8 = VEC(TN_U8, 3, 200), *b = VEC(TN_BOOL, 1, 0);
    LABEL("int64 + 2 stays int64");
    CHECK_DTYPE(tn_add_scalar(i64, 2), TN_I64);
    CHECK_LIST(tn_add_scalar(i64, 2), 0, 3, 4, -1);
    LABEL("int64 + 2.5 becomes float32");
    CHECK_DTYPE(tn_add_scalar(i64, 2.5), TN_F32);
    CHECK_LIST(tn_add_scalar(i64, 2.5), 0, 3.5, 4.5, -0.5);
    LABEL("int32 + 2 stays int32");
    CHECK_DTYPE(tn_add_scalar(i32, 2), TN_I32);
    CHECK_DTYPE(tn_mul_scalar(i32, -4), TN_I32);
    CHECK_LIST(tn_mul_scalar(i32, -4), 0, -4, -8, 12);
    LABEL("uint8 + -5 stays uint8 and wraps (torch: [254, 195])");
    CHECK_DTYPE(tn_add_scalar(u8, -5), TN_U8);
    CHECK_LIST(tn_add_scalar(u8, -5), 0, 254, 195);
    LABEL("bool + 1 is int64, bool + 1.5 is float32");
    CHECK_DTYPE(tn_add_scalar(b, 1), TN_I64);
    CHECK_LIST(tn_add_scalar(b, 1), 0, 2, 1);
    CHECK_DTYPE(tn_add_scalar(b, 1.5), TN_F32);
    CHECK_LIST(tn_add_scalar(b, 1.5), 0, 2.5, 1.5);
    LABEL("float32 * 2 and * 2.5 stay float32; float64 stays float64");
    CHECK_DTYPE(tn_mul_scalar(f32, 2), TN_F32);
    CHECK_DTYPE(tn_mul_scalar(f32, 2.5), TN_F32);
    CHECK_DTYPE(tn_mul_scalar(f64, 2.5), TN_F64);
    CHECK_LIST(tn_mul_scalar(f32, 2.5), 0, 2.5, 5, -7.5);
    LABEL("sub_scalar / rsub_scalar");
    CHECK_LIST(tn_sub_scalar(i64, 5), 0, -4, -3, -8);
    CHECK_DTYPE(tn_rsub_scalar(i64, 5), TN_I64);
    CHECK_LIST(tn_rsub_scalar(i64, 5), 0, 4, 3, 8);
    CHECK_LIST(tn_rsub_scalar(f32, 0.5), 0, -0.5, -1.5, 3.5);
    LABEL("div_scalar: int / int is float32");
    CHECK_DTYPE(tn_div_scalar(i64, 2), TN_F32);
    CHECK_LIST(tn_div_scalar(i64, 2), 0, 0.5, 1, -1.5);
    CHECK_DTYPE(tn_div_scalar(f64, 4), TN_F64);
    CHECK_LIST(tn_div_scalar(f64, 4), 0, 0.25, 0.5, -0.75);
    LABEL("pow_scalar");
    CHECK_DTYPE(tn_pow_scalar(i64, 2), TN_I64);
    CHECK_LIST(tn_pow_scalar(i64, 2), 0, 1, 4, 9);
    CHECK_LIST(tn_pow_scalar(i64, 3), 0, 1, 8, -27);
    CHECK_LIST(tn_pow_scalar(i64, 0), 0, 1, 1, 1);
    CHECK_DTYPE(tn_pow_scalar(i64, 0.5), TN_F32);
    CHECK_LIST(tn_pow_scalar(VEC(TN_F32, 2, 4), 0.5), 1e-6, 1.4142135623730951, 2);
    CHECK_LIST(tn_pow_scalar(VEC(TN_F64, 2, 0, -8), -1), 0, 0.5, INFINITY, -0.125);
    CHECK_ERR(tn_pow_scalar(i64, -1), "negative");
    CHECK_ERR(tn_pow_scalar(i32, -2), "negative");
    LABEL("rpow_scalar: 2 ** int64 stays int64 (torch: 2 ** tensor([1, 2, 5]))");
    CHECK_DTYPE(tn_rpow_scalar(2, VEC(TN_I64, 1, 2, 5)), TN_I64);
    CHECK_LIST(tn_rpow_scalar(2, VEC(TN_I64, 1, 2, 5)), 0, 2, 4, 32);
    LABEL("rpow_scalar: 2.5 ** int64 is float32");
    CHECK_DTYPE(tn_rpow_scalar(2.5, VEC(TN_I64, 1, 2)), TN_F32);
    CHECK_LIST(tn_rpow_scalar(2.5, VEC(TN_I64, 1, 2)), 0, 2.5, 6.25);
    CHECK_LIST(tn_rpow_scalar(2, VEC(TN_F64, 0.5, -1)), 1e-15, 1.4142135623730951, 0.5);
    LABEL("rpow_scalar: 2 ** int64 with a negative exponent (torch: 2 ** tensor([-1]) = [0])");
    CHECK_LIST(tn_rpow_scalar(2, VEC(TN_I64, -1, 3)), 0, 0, 8);
    LABEL("remainder_scalar / floor_divide_scalar (torch)");
    CHECK_LIST(tn_remainder_scalar(VEC(TN_I64, -7, 7), 2), 0, 1, 1);
    CHECK_LIST(tn_remainder_scalar(VEC(TN_I64, -7, 7), -2), 0, -1, -1);
    CHECK_LIST(tn_floor_divide_scalar(VEC(TN_I64, -7, 7), 2), 0, -4, 3);
    CHECK_LIST(tn_floor_divide_scalar(VEC(TN_I64, -7, 7), -2), 0, 3, -4);
    CHECK_LIST(tn_remainder_scalar(VEC(TN_F32, -7.5, 7.5), 2), 0, 0.5, 1.5);
    CHECK_DTYPE(tn_remainder_scalar(VEC(TN_I64, -7, 7), 1.5), TN_F32);
    CHECK_LIST(tn_remainder_scalar(VEC(TN_I64, -7, 7), 1.5), 0, 0.5, 1);
    CHECK_ERR(tn_floor_divide_scalar(i64, 0), "division by zero");
    CHECK_ERR(tn_remainder_scalar(i64, 0), "division by zero");
    LABEL("comparison scalars give bool");
    CHECK_DTYPE(tn_lt_scalar(i64, 2.5), TN_BOOL);
    CHECK_LIST(tn_lt_scalar(i64, 2.5), 0, 1, 1, 1);
    CHECK_LIST(tn_le_scalar(i64, 2), 0, 1, 1, 1);
    CHECK_LIST(tn_gt_scalar(i64, 1), 0, 0, 1, 0);
    CHECK_LIST(tn_ge_scalar(f32, 1), 0, 1, 1, 0);
    CHECK_LIST(tn_eq_scalar(f32, 2), 0, 0, 1, 0);
    CHECK_LIST(tn_ne_scalar(f32, 2), 0, 1, 0, 1);
    CHECK_LIST(tn_eq_scalar(VEC(TN_F32, NAN, 1), NAN), 0, 0, 0);
    CHECK_LIST(tn_ne_scalar(VEC(TN_F32, NAN, 1), NAN), 0, 1, 1);
    CHECK_LIST(tn_lt_scalar(u8, 100), 0, 1, 0);
    LABEL("scalar forms on a transposed view");
    tn_tensor *m = tn_t(tn_reshape(tn_arange(0, 6, 1, TN_F64), TN_SHAPE(2, 3)));
    CHECK_LIST(tn_add_scalar(m, 10), 0, 10, 13, 11, 14, 12, 15);
    CHECK_LIST(tn_rsub_scalar(m, 1), 0, 1, -2, 0, -3, -1, -4);
    end_scope_check_leaks();
}

/* result dtypes of mixed pairs (torch.result_type) */
TEST(binary_promotion) {
    tn_scope_begin();
    struct { tn_dtype a; int na; tn_dtype b; int nb; tn_dtype want; } cases[] = {
        {TN_I32, 1, TN_F64, 1, TN_F64}, {TN_U8, 1, TN_I32, 1, TN_I32}, {TN_BOOL, 1, TN_BOOL, 1, TN_BOOL},
        {TN_BOOL, 1, TN_U8, 1, TN_U8}, {TN_F32, 1, TN_I64, 1, TN_F32}, {TN_I32, 1, TN_I64, 1, TN_I64},
        {TN_F32, 1, TN_F64, 1, TN_F64}, {TN_BOOL, 1, TN_F32, 1, TN_F32},
        /* 0-d tensors weigh less within a category */
        {TN_F32, 1, TN_F64, 0, TN_F32}, {TN_I32, 1, TN_F64, 0, TN_F64}, {TN_I32, 0, TN_I64, 1, TN_I64},
        {TN_U8, 1, TN_I64, 0, TN_U8}, {TN_BOOL, 1, TN_I32, 0, TN_I32}, {TN_I64, 1, TN_F32, 0, TN_F32},
        {TN_I32, 1, TN_I64, 0, TN_I32}, {TN_F64, 0, TN_F32, 0, TN_F64}, {TN_I32, 0, TN_F32, 0, TN_F32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tn_tensor *a = cases[i].na ? tn_ones(TN_SHAPE(2), cases[i].a) : tn_scalar_tensor(1, cases[i].a);
        tn_tensor *b = cases[i].nb ? tn_ones(TN_SHAPE(2), cases[i].b) : tn_scalar_tensor(1, cases[i].b);
        LABEL("%s%s + %s%s", dname(cases[i].a), cases[i].na ? "[2]" : " 0-d", dname(cases[i].b), cases[i].nb ? "[2]" : " 0-d");
        CHECK_DTYPE(tn_add(a, b), cases[i].want);
        CHECK_DTYPE(tn_add(b, a), cases[i].want);
        CHECK_DTYPE(tn_mul(a, b), cases[i].want);
        tn_tensor *ab[2] = {a, b};
        CHECK_MSG(tn_result_type(ab, 2) == cases[i].want, "%s: tn_result_type", label);
        CHECK_DTYPE(tn_lt(a, b), TN_BOOL);
        tn_dtype dw = tn_dtype_is_floating(cases[i].want) ? cases[i].want : TN_F32;
        CHECK_DTYPE(tn_div(a, b), dw);
    }
    LABEL("uint8 + int64 0-d stays uint8 (torch: tensor([1], uint8) + tensor(300) = [45])");
    CHECK_LIST(tn_add(VEC(TN_U8, 1), tn_scalar_tensor(300, TN_I64)), 0, 45);
    LABEL("int32 + float64 values");
    CHECK_LIST(tn_add(VEC(TN_I32, 1, 2), VEC(TN_F64, 0.25, 0.5)), 0, 1.25, 2.5);
    LABEL("bool + bool is logical or");
    CHECK_LIST(tn_add(VEC(TN_BOOL, 1, 0, 0), VEC(TN_BOOL, 1, 1, 0)), 0, 1, 1, 0);
    LABEL("int / int");
    CHECK_DTYPE(tn_div(VEC(TN_I64, 3), VEC(TN_I64, 2)), TN_F32);
    CHECK_LIST(tn_div(VEC(TN_I64, 3, -3, 1, -1, 0), VEC(TN_I64, 2, 2, 0, 0, 0)), 0, 1.5, -1.5, INFINITY, -INFINITY, NAN);
    LABEL("bool / bool is float32");
    CHECK_DTYPE(tn_div(VEC(TN_BOOL, 1), VEC(TN_BOOL, 1)), TN_F32);
    LABEL("wrapped numbers");
    CHECK_DTYPE(tn_add(VEC(TN_I32, 1), tn_scalar(2.5)), TN_F32);
    CHECK_DTYPE(tn_add(VEC(TN_F64, 1), tn_scalar(2.5)), TN_F64);
    CHECK_DTYPE(tn_add(VEC(TN_U8, 1), tn_scalar_int(3)), TN_U8);
    CHECK_DTYPE(tn_add(VEC(TN_BOOL, 1), tn_scalar_int(3)), TN_I64);
    CHECK_DTYPE(tn_add(VEC(TN_U8, 1), tn_scalar_bool(true)), TN_U8);
    CHECK_DTYPE(tn_mul(tn_scalar(2.5), tn_scalar_int(2)), TN_F32); /* torch: 0-d float from Python scalars -> default float */
    LABEL("add_alpha: float alpha on integer tensors is an error");
    CHECK_ERR(tn_add_alpha(VEC(TN_I64, 1), VEC(TN_I64, 1), 2.5), "alpha");
    CHECK_ERR(tn_sub_alpha(VEC(TN_I32, 1), VEC(TN_I32, 1), 0.5), "alpha");
    CHECK_LIST(tn_add_alpha(VEC(TN_F32, 1), VEC(TN_F32, 1), 2.5), 0, 3.5);
    CHECK_LIST(tn_add_alpha(VEC(TN_I64, 1), VEC(TN_I64, 4), -2), 0, -7);
    CHECK_LIST(tn_sub_alpha(VEC(TN_F64, 1), VEC(TN_F64, 4), 0.5), 0, -1);
    LABEL("alpha on uint8 (torch: u8 [1,2] + (-1)*[1,1] = [0,1])");
    CHECK_LIST(tn_add_alpha(VEC(TN_U8, 1, 2), VEC(TN_U8, 1, 1), -1), 0, 0, 1);
    LABEL("alpha on bool (torch: add(bool [F,T], bool [T,T], alpha=0) = [F,T])");
    CHECK_LIST(tn_add_alpha(VEC(TN_BOOL, 0, 1), VEC(TN_BOOL, 1, 1), 0), 0, 0, 1);
    CHECK_LIST(tn_add_alpha(VEC(TN_BOOL, 0, 1), VEC(TN_BOOL, 1, 0), 2), 0, 1, 1);
    CHECK_LIST(tn_add_alpha(VEC(TN_F32, 1), VEC(TN_F32, INFINITY), 0), 0, NAN);
    LABEL("bool errors");
    CHECK_ERR(tn_sub(VEC(TN_BOOL, 1), VEC(TN_BOOL, 1)), "bool");
    CHECK_ERR(tn_floor_divide(VEC(TN_BOOL, 1), VEC(TN_BOOL, 1)), "bool");
    CHECK_ERR(tn_bitwise_and(VEC(TN_F32, 1), VEC(TN_F32, 1)), "bitwise_and");
    CHECK_ERR(tn_bitwise_xor(VEC(TN_I64, 1), VEC(TN_F64, 1)), "bitwise_xor");
    LABEL("logical ops on floats and ints (torch)");
    CHECK_LIST(tn_logical_and(VEC(TN_F32, 1, 0, NAN), VEC(TN_F32, 2, 2, 2)), 0, 1, 0, 1);
    CHECK_LIST(tn_logical_xor(VEC(TN_I64, 0, 2, 3), VEC(TN_I64, 0, 0, 5)), 0, 0, 1, 0);
    CHECK_LIST(tn_logical_or(VEC(TN_I64, 0, 2, 0), VEC(TN_F64, 0, 0, -0.5)), 0, 0, 1, 1);
    LABEL("bitwise on bool");
    CHECK_DTYPE(tn_bitwise_and(VEC(TN_BOOL, 1, 0), VEC(TN_BOOL, 1, 1)), TN_BOOL);
    CHECK_LIST(tn_bitwise_xor(VEC(TN_BOOL, 1, 0), VEC(TN_BOOL, 1, 1)), 0, 0, 1);
    CHECK_LIST(tn_bitwise_or(VEC(TN_I64, 12, -1), VEC(TN_I32, 3, 0)), 0, 15, -1);
    end_scope_check_leaks();
}

static int64_t i64_at(tn_tensor *t, int64_t i) { return t ? ((const int64_t *)tn_data_ptr(t))[i] : -12345; }
static int32_t i32_at(tn_tensor *t, int64_t i) { return t ? ((const int32_t *)tn_data_ptr(t))[i] : -12345; }

/* integer semantics: Python floor division / modulo, C fmod, wrapping overflow */
TEST(integer_semantics) {
    tn_scope_begin();
    const tn_dtype its[] = {TN_I32, TN_I64};
    for (int k = 0; k < 2; k++) {
        tn_dtype dt = its[k];
        tn_tensor *a = VEC(dt, -7, 7, -7, 7, 0, 6, -6), *b = VEC(dt, 2, 2, -2, -2, 3, -3, 3);
        LABEL("floor_divide %s (torch: [-4, 3, 3, -4, 0, -2, -2])", dname(dt));
        CHECK_DTYPE(tn_floor_divide(a, b), dt);
        CHECK_LIST(tn_floor_divide(a, b), 0, -4, 3, 3, -4, 0, -2, -2);
        LABEL("remainder %s (torch: [1, 1, -1, -1, 0, 0, 0])", dname(dt));
        CHECK_LIST(tn_remainder(a, b), 0, 1, 1, -1, -1, 0, 0, 0);
        LABEL("fmod %s (sign of the dividend)", dname(dt));
        CHECK_LIST(tn_fmod(a, b), 0, -1, 1, -1, 1, 0, 0, 0);
        LABEL("integer division by zero %s", dname(dt));
        CHECK_ERR(tn_floor_divide(a, tn_zeros(TN_SHAPE(1), dt)), "division by zero");
        CHECK_ERR(tn_remainder(a, tn_zeros(TN_SHAPE(1), dt)), "division by zero");
        CHECK_ERR(tn_fmod(a, tn_zeros(TN_SHAPE(1), dt)), "division by zero");
        CHECK_ERR(tn_floor_divide(VEC(dt, 1, 2, 3), VEC(dt, 1, 0, 1)), "division by zero");
        LABEL("integer pow %s", dname(dt));
        CHECK_LIST(tn_pow(VEC(dt, 2, -3, 0, 1, 5), VEC(dt, 10, 3, 0, 7, 1)), 0, 1024, -27, 1, 1, 5);
        /* torch.pow(tensor([2,1,-1,0,3]), tensor([-1,-1,-1,-1,-2])) = [0, 1, -1, 0, 0]: no error
           with a tensor exponent; only pow(int tensor, negative int scalar) raises */
        LABEL("integer pow %s with negative tensor exponents (torch: [0, 1, -1, 0, 0, 1])", dname(dt));
        CHECK_LIST(tn_pow(VEC(dt, 2, 1, -1, 0, 3, -1), VEC(dt, -1, -1, -1, -1, -2, -2)), 0, 0, 1, -1, 0, 0, 1);
    }
    LABEL("uint8 floor_divide / remainder (torch)");
    CHECK_LIST(tn_floor_divide(VEC(TN_U8, 7, 255, 0), VEC(TN_U8, 2, 7, 3)), 0, 3, 36, 0);
    CHECK_LIST(tn_remainder(VEC(TN_U8, 7, 255, 0), VEC(TN_U8, 2, 7, 3)), 0, 1, 3, 0);
    CHECK_LIST(tn_sub(VEC(TN_U8, 3), VEC(TN_U8, 5)), 0, 254);
    CHECK_ERR(tn_remainder(VEC(TN_U8, 7), VEC(TN_U8, 0)), "division by zero");

    LABEL("int32 overflow wraps");
    tn_tensor *mx = tn_from_data((const int32_t[]){INT32_MAX, INT32_MIN, 65536}, TN_SHAPE(3), TN_I32);
    tn_tensor *p1 = tn_add_scalar(mx, 1);
    CHECK_DTYPE(p1, TN_I32);
    CHECK(i32_at(p1, 0) == INT32_MIN);
    CHECK(i32_at(p1, 1) == INT32_MIN + 1);
    tn_tensor *m1 = tn_sub_scalar(mx, 1);
    CHECK(i32_at(m1, 1) == INT32_MAX);
    tn_tensor *sq = tn_mul(mx, mx);
    CHECK(i32_at(sq, 2) == 0);          /* 65536 * 65536 = 2^32 -> 0 */
    CHECK(i32_at(sq, 0) == 1);          /* (2^31-1)^2 = 1 mod 2^32 */
    tn_tensor *fd = tn_floor_divide(mx, tn_full(TN_SHAPE(1), -1, TN_I32));
    CHECK(i32_at(fd, 1) == INT32_MIN);  /* INT32_MIN // -1 wraps */
    CHECK(i32_at(fd, 0) == -INT32_MAX);
    tn_tensor *sc = tn_mul_scalar(mx, 2);
    CHECK(i32_at(sc, 0) == -2);

    LABEL("int64 overflow wraps");
    tn_tensor *mx64 = tn_from_data((const int64_t[]){INT64_MAX, INT64_MIN, 7}, TN_SHAPE(3), TN_I64);
    tn_tensor *q = tn_add_scalar(mx64, 1);
    CHECK(i64_at(q, 0) == INT64_MIN);
    q = tn_sub_scalar(mx64, 1);
    CHECK(i64_at(q, 1) == INT64_MAX);
    tn_tensor *neg1 = tn_full(TN_SHAPE(1), -1, TN_I64);
    q = tn_floor_divide(mx64, neg1);
    CHECK(i64_at(q, 1) == INT64_MIN);   /* INT64_MIN // -1 wraps */
    CHECK(i64_at(q, 0) == -INT64_MAX);
    CHECK(i64_at(q, 2) == -7);
    q = tn_remainder(mx64, neg1);
    CHECK(i64_at(q, 1) == 0);
    CHECK(i64_at(q, 0) == 0);
    q = tn_fmod(mx64, neg1);
    CHECK(i64_at(q, 1) == 0);
    q = tn_neg(mx64);
    CHECK(i64_at(q, 1) == INT64_MIN);
    q = tn_mul(mx64, tn_full(TN_SHAPE(1), 2, TN_I64));
    CHECK(i64_at(q, 0) == -2);
    q = tn_add(mx64, mx64);
    CHECK(i64_at(q, 0) == -2);
    q = tn_pow(tn_full(TN_SHAPE(1), 2, TN_I64), tn_full(TN_SHAPE(1), 64, TN_I64));
    CHECK(i64_at(q, 0) == 0);           /* 2^64 wraps to 0 */
    q = tn_pow(tn_full(TN_SHAPE(1), 3, TN_I64), tn_full(TN_SHAPE(1), 40, TN_I64));
    CHECK(i64_at(q, 0) == (int64_t)12157665459056928801ULL);  /* 3^40 exact */
    /* large int64 values survive arithmetic exactly (no trip through double) */
    tn_tensor *big = tn_from_data((const int64_t[]){(INT64_C(1) << 53) + 1}, TN_SHAPE(1), TN_I64);
    CHECK(i64_at(tn_add_scalar(big, 2), 0) == (INT64_C(1) << 53) + 3);
    CHECK(i64_at(tn_mul_scalar(big, 1), 0) == (INT64_C(1) << 53) + 1);
    CHECK(i64_at(tn_maximum(big, tn_full(TN_SHAPE(1), 0, TN_I64)), 0) == (INT64_C(1) << 53) + 1);
    end_scope_check_leaks();
}

/* float floor_divide / remainder / fmod / pow / atan2 / maximum on special values (torch 1.13) */
TEST(float_special_values) {
    tn_scope_begin();
    const double inf = INFINITY, nan = NAN, pi = 3.14159265358979323846;
    for (int k = 0; k < 2; k++) {
        tn_dtype dt = k ? TN_F64 : TN_F32;
        tn_tensor *a = VEC(dt, 5, -5, 0, 5, -5, inf, 1, -1, 7.5, -7.5);
        tn_tensor *b = VEC(dt, 0, 0, 0, inf, inf, 2, -0.0, 3, -2, 2);
        LABEL("floor_divide special %s", dname(dt));
        CHECK_LIST(tn_floor_divide(a, b), 0, inf, -inf, nan, 0, -1, nan, -inf, -1, -4, -4);
        LABEL("remainder special %s", dname(dt));
        CHECK_LIST(tn_remainder(a, b), 0, nan, nan, nan, 5, inf, nan, nan, 2, -0.5, 0.5);
        LABEL("fmod special %s", dname(dt));
        CHECK_LIST(tn_fmod(VEC(dt, 5, -5, -1.5, 7.5, -7.5, inf), VEC(dt, 0, 3, 1, -2, 2, 1)), 0, nan, -2, -0.5, 1.5, -1.5, nan);
        LABEL("div special %s", dname(dt));
        CHECK_LIST(tn_div(VEC(dt, 1, -1, 0, inf), VEC(dt, 0, 0, 0, inf)), 0, inf, -inf, nan, nan);
        LABEL("maximum / minimum propagate NaN %s", dname(dt));
        CHECK_LIST(tn_maximum(VEC(dt, nan, 1, 2), VEC(dt, 0, nan, 1)), 0, nan, nan, 2);
        CHECK_LIST(tn_minimum(VEC(dt, nan, 1, 2), VEC(dt, 0, nan, 1)), 0, nan, nan, 1);
        LABEL("comparisons with NaN %s", dname(dt));
        CHECK_LIST(tn_eq(VEC(dt, nan, 1), VEC(dt, nan, 1)), 0, 0, 1);
        CHECK_LIST(tn_ne(VEC(dt, nan, 1), VEC(dt, nan, 1)), 0, 1, 0);
        CHECK_LIST(tn_lt(VEC(dt, nan, 1), VEC(dt, 1, nan)), 0, 0, 0);
        CHECK_LIST(tn_ge(VEC(dt, nan, -inf), VEC(dt, nan, -inf)), 0, 0, 1);
        LABEL("atan2 special %s", dname(dt));
        CHECK_LIST(tn_atan2(VEC(dt, 1, 0, -0.0, 0, -1), VEC(dt, 0, -0.0, -1, 0, -inf)), 1e-6, pi / 2, pi, -pi, 0, -pi);
        LABEL("pow special %s", dname(dt));
        CHECK_LIST(tn_pow(VEC(dt, 0, 0, -8, 1, nan, 2), VEC(dt, 0, -1, 1.0 / 3, nan, 0, -inf)), 0, 1, inf, nan, 1, 1, 0);
    }
    end_scope_check_leaks();
}

/* where / lerp / addcmul / addcdiv / clamp_tensor on layouts and broadcasts */
static void run_ternary(int op, tn_dtype dt, int l0, int l1, int l2, const int64_t *s0, int n0, const int64_t *s1, int n1, const int64_t *s2, int n2) {
    static const char *const names[] = {"where", "lerp", "addcmul(0.5)", "addcdiv(-2)", "clamp_tensor", "lerp_scalar(0.3)", "clamp_tensor(min only)", "addcmul(3) int"};
    tn_scope_begin();
    tn_tensor *x = make_input(s0, n0, op == 0 ? TN_BOOL : dt, l0, op == 0 ? G_BOOL : G_NORMAL);
    tn_tensor *y = make_input(s1, n1, dt, l1, G_NORMAL);
    tn_tensor *z = make_input(s2, n2, dt, l2, op == 1 ? G_UNIT : G_NORMAL);
    if (op == 4 || op == 6) { x = make_input(s0, n0, dt, l0, G_WIDE); y = make_input(s1, n1, dt, l1, G_UNIT); z = tn_add_scalar(make_input(s2, n2, dt, l2, G_POS), -1); }
    if (op == 7) { x = make_input(s0, n0, dt, l0, G_INT); y = make_input(s1, n1, dt, l1, G_INT); z = make_input(s2, n2, dt, l2, G_INT); }
    tn_tensor *r = NULL;
    switch (op) {
    case 0: r = tn_where(x, y, z); break;
    case 1: r = tn_lerp(x, y, z); break;
    case 2: r = tn_addcmul(x, y, z, .value = 0.5); break;
    case 3: r = tn_addcdiv(x, y, z, .value = -2); break;
    case 4: r = tn_clamp_tensor(x, y, z); break;
    case 5: r = tn_lerp_scalar(x, y, 0.3); break;
    case 6: r = tn_clamp_tensor(x, y, NULL); break;
    case 7: r = tn_addcmul(x, y, z, .value = 3); break;
    }
    int64_t os[TN_MAX_DIMS];
    int on = tn_broadcast_shapes(s0, n0, s1, n1, os);
    if (op != 5 && op != 6) on = tn_broadcast_shapes(os, on, s2, n2, os);
    LABEL("%s on %s/%s/%s %s", names[op], layout_name[l0], layout_name[l1], layout_name[l2], dname(dt));
    CHECK_DTYPE(r, dt);
    CHECK_SHAPE_N(r, os, on);
    const double *xv = dv(x), *yv = dv(y), *zv = dv(z);
    int64_t n = numel_of(os, on);
    double *ref = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        double a = xv[bidx(i, os, on, s0, n0)], b = yv[bidx(i, os, on, s1, n1)], c = (op == 5 || op == 6) ? 0 : zv[bidx(i, os, on, s2, n2)];
        switch (op) {
        case 0: ref[i] = a != 0 ? b : c; break;
        case 1: ref[i] = a + c * (b - a); break;
        case 2: ref[i] = a + 0.5 * b * c; break;
        case 3: ref[i] = a - 2 * b / c; break;
        case 4: ref[i] = fmin(fmax(a, b), c); break;
        case 5: ref[i] = a + 0.3 * (b - a); break;
        case 6: ref[i] = fmax(a, b); break;
        case 7: ref[i] = a + 3 * b * c; break;
        }
    }
    double rt = op == 3 ? 1e-4 : 4 * rtol_of(dt), at = 4 * atol_of(dt) * (op == 3 ? 10 : 1); /* addcdiv: b/c can be large */
    CHECK_VALS(r, ref, n, rt, at);
    free(ref);
    tn_scope_end();
}

TEST(ternary_ops) {
    tn_manual_seed(3);
    const int64_t s345[3] = {3, 4, 5}, s314[3] = {3, 1, 4}, s21[2] = {2, 1}, s4[1] = {4}, s0[1] = {0}, s03[2] = {0, 3}, s13[2] = {1, 3};
    for (int op = 0; op < 8; op++) {
        tn_dtype dt = op == 7 ? TN_I64 : TN_F32;
        run_ternary(op, dt, L_CONTIG, L_CONTIG, L_CONTIG, s345, 3, s345, 3, s345, 3);
        run_ternary(op, dt, L_TRANS, L_SLICED, L_EXPAND, s345, 3, s345, 3, s345, 3);
        run_ternary(op, dt, L_EXPAND, L_TRANS, L_SLICED, s345, 3, s345, 3, s345, 3);
        run_ternary(op, dt, L_SLICED, L_EXPAND, L_TRANS, s345, 3, s345, 3, s345, 3);
        if (op != 7) run_ternary(op, TN_F64, L_TRANS, L_CONTIG, L_SLICED, s345, 3, s345, 3, s345, 3);
        run_ternary(op, dt, L_CONTIG, L_TRANS, L_CONTIG, s314, 3, s21, 2, s4, 1);   /* -> [3,2,4] */
        run_ternary(op, dt, L_SLICED, L_CONTIG, L_TRANS, s21, 2, s4, 1, s314, 3);
        run_ternary(op, dt, L_CONTIG, L_CONTIG, L_CONTIG, s0, 0, s21, 2, s0, 0);     /* 0-d operands */
        run_ternary(op, dt, L_CONTIG, L_CONTIG, L_CONTIG, s03, 2, s0, 0, s13, 2);    /* [0,3] */
    }
    LABEL("where promotes the two values (torch)");
    tn_scope_begin();
    tn_tensor *c = VEC(TN_BOOL, 1, 0);
    CHECK_DTYPE(tn_where(c, VEC(TN_I64, 1), VEC(TN_F32, 2.5)), TN_F32);
    CHECK_LIST(tn_where(c, VEC(TN_I64, 1), VEC(TN_F32, 2.5)), 0, 1, 2.5);
    CHECK_DTYPE(tn_where(c, tn_scalar_tensor(1, TN_F64), VEC(TN_I32, 2)), TN_F64);
    CHECK_DTYPE(tn_where(c, tn_scalar(1.5), VEC(TN_I32, 2)), TN_F32);
    CHECK_DTYPE(tn_where(c, tn_scalar_int(1), VEC(TN_U8, 2)), TN_U8);
    CHECK_ERR(tn_where(VEC(TN_I64, 1, 0), VEC(TN_F32, 1), VEC(TN_F32, 2)), "bool");
    CHECK_ERR(tn_where(c, tn_zeros(TN_SHAPE(3), TN_F32), VEC(TN_F32, 2)), "broadcast");
    LABEL("where with NaN values passes them through");
    CHECK_LIST(tn_where(c, VEC(TN_F32, NAN, NAN), VEC(TN_F32, 1, INFINITY)), 0, NAN, INFINITY);
    LABEL("lerp (torch: lerp([1,2],[3,10],[0.25,0.75]) = [1.5, 8])");
    CHECK_LIST(tn_lerp(VEC(TN_F32, 1, 2), VEC(TN_F32, 3, 10), VEC(TN_F32, 0.25, 0.75)), 0, 1.5, 8);
    CHECK_LIST(tn_lerp_scalar(VEC(TN_F32, 1, 2), VEC(TN_F32, 3, 10), 0.25), 0, 1.5, 4);
    CHECK_LIST(tn_lerp_scalar(VEC(TN_F64, 1, 2), VEC(TN_F64, 3, 10), 1), 0, 3, 10);   /* weight 1 gives end exactly */
    CHECK_LIST(tn_lerp_scalar(VEC(TN_F64, 1, 2), VEC(TN_F64, 3, 10), 0), 0, 1, 2);
    CHECK_LIST(tn_lerp_scalar(VEC(TN_F64, 1, 2), VEC(TN_F64, 3, 10), 2), 0, 5, 18);   /* extrapolates */
    CHECK_DTYPE(tn_lerp_scalar(VEC(TN_F32, 1), VEC(TN_F32, 3), 0.5), TN_F32);
    /* torch.lerp(tensor([1]), tensor([3]), 0.5): "lerp_kernel_scalar" not implemented for 'Long' */
    CHECK_ERR(tn_lerp_scalar(VEC(TN_I64, 1), VEC(TN_I64, 3), 0.5), "lerp");
    CHECK_ERR(tn_lerp(VEC(TN_I64, 1), VEC(TN_I64, 3), VEC(TN_I64, 0)), "lerp");
    LABEL("addcmul / addcdiv values and dtypes (torch)");
    CHECK_LIST(tn_addcmul(VEC(TN_F32, 1), VEC(TN_F32, 2), VEC(TN_F32, 3), .value = 0.5), 0, 4);
    CHECK_DTYPE(tn_addcmul(VEC(TN_I64, 1), VEC(TN_I64, 2), VEC(TN_I64, 3), .value = 2), TN_I64);
    CHECK_LIST(tn_addcmul(VEC(TN_I64, 1), VEC(TN_I64, 2), VEC(TN_I64, 3), .value = 2), 0, 13);
    CHECK_DTYPE(tn_addcmul(VEC(TN_I64, 1), VEC(TN_F32, 2), VEC(TN_I64, 3), .value = 2), TN_F32);
    CHECK_LIST(tn_addcdiv(VEC(TN_F64, 1), VEC(TN_F64, 2), VEC(TN_F64, 0)), 0, INFINITY);
    CHECK_ERR(tn_addcdiv(VEC(TN_I64, 1), VEC(TN_I64, 2), VEC(TN_I64, 3)), "addcdiv");
    LABEL("clamp_tensor (torch: clamp([1,5,nan,3], [2,2,2,nan], [4]) = [2,4,nan,nan])");
    CHECK_LIST(tn_clamp_tensor(VEC(TN_F32, 1, 5, NAN, 3), VEC(TN_F32, 2, 2, 2, NAN), VEC(TN_F32, 4)), 0, 2, 4, NAN, NAN);
    CHECK_LIST(tn_clamp_tensor(VEC(TN_F32, 1, 5), VEC(TN_F32, 4), VEC(TN_F32, 2)), 0, 2, 2);  /* min > max: max */
    CHECK_LIST(tn_clamp_tensor(VEC(TN_F32, 1, 5), NULL, VEC(TN_F32, 2)), 0, 1, 2);
    CHECK_DTYPE(tn_clamp_tensor(VEC(TN_I64, 1, 5), VEC(TN_F32, 2.5), NULL), TN_F32);
    CHECK_LIST(tn_clamp_tensor(VEC(TN_I64, 1, 5), VEC(TN_F32, 2.5), NULL), 0, 2.5, 5);
    CHECK_LIST(tn_clamp_tensor(VEC(TN_I64, 1, 5, 9), VEC(TN_I64, 4), VEC(TN_I64, 2)), 0, 2, 2, 2);
    CHECK_ERR(tn_clamp_tensor(VEC(TN_F32, 1), NULL, NULL), "min");
    tn_scope_end();
    check_leaks();
}

/* ------------------------------------------------------------------------ */
/* 2. in-place forms and aliasing                                           */
/* ------------------------------------------------------------------------ */
static double *copy_vals(tn_tensor *t) {
    int64_t n = tn_numel(t);
    double *v = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    const double *s = dv(t);
    for (int64_t i = 0; s && i < n; i++) v[i] = s[i];
    return v;
}

TEST(inplace_aliasing) {
    tn_manual_seed(4);
    tn_scope_begin();
    for (int k = 0; k < 2; k++) {
        tn_dtype dt = k ? TN_F64 : TN_F32;
        int64_t n = k ? 17 : 5;
        /* x += x doubles */
        tn_tensor *x = tn_randn(TN_SHAPE(n, n), dt);
        double *orig = copy_vals(x), *ref = (double *)malloc((size_t)(n * n) * sizeof(double));
        int64_t v0 = tn_version(x);
        tn_tensor *r = tn_add_(x, x);
        LABEL("add_(x, x) %s", dname(dt));
        CHECK(r != NULL && tn_same_storage(r, x) && tn_data_ptr(r) == tn_data_ptr(x));
        CHECK(tn_version(x) > v0);
        for (int64_t i = 0; i < n * n; i++) ref[i] = 2 * orig[i];
        CHECK_VALS(x, ref, n * n, 0, 0);
        /* x += x.T equals x + x.T computed out of place */
        tn_tensor *y = tn_randn(TN_SHAPE(n, n), dt);
        tn_tensor *want = tn_add(y, tn_t(y));
        const double *wv = dv(want);
        for (int64_t i = 0; i < n * n; i++) ref[i] = wv[i];
        tn_add_(y, tn_t(y));
        LABEL("add_(x, x.T) %s n=%lld", dname(dt), (long long)n);
        CHECK_VALS(y, ref, n * n, 0, 0);
        /* x.T += x */
        tn_tensor *z = tn_randn(TN_SHAPE(n, n), dt);
        want = tn_add(tn_t(z), z);
        wv = dv(tn_t(want)); /* z's own layout: want.T */
        for (int64_t i = 0; i < n * n; i++) ref[i] = wv[i];
        tn_add_(tn_t(z), z);
        LABEL("add_(x.T, x) %s", dname(dt));
        CHECK_VALS(z, ref, n * n, 0, 0);
        /* x *= x.T, x -= x.T */
        tn_tensor *w = tn_randn(TN_SHAPE(n, n), dt);
        want = tn_mul(w, tn_t(w));
        wv = dv(want);
        for (int64_t i = 0; i < n * n; i++) ref[i] = wv[i];
        tn_mul_(w, tn_t(w));
        LABEL("mul_(x, x.T) %s", dname(dt));
        CHECK_VALS(w, ref, n * n, 0, 0);
        want = tn_sub(w, tn_t(w));
        wv = dv(want);
        for (int64_t i = 0; i < n * n; i++) ref[i] = wv[i];
        tn_sub_(w, tn_t(w));
        LABEL("sub_(x, x.T) %s (antisymmetric result)", dname(dt));
        CHECK_VALS(w, ref, n * n, 0, 0);
        free(orig);
        free(ref);
    }
    /* x[1:] += x[:-1] (shifted overlap): read before written, like out of place */
    tn_tensor *a = tn_arange(0, 5, 1, TN_F32);
    tn_add_(tn_slice(a, 0, 1, TN_END, 1), tn_slice(a, 0, 0, 4, 1));
    LABEL("x[1:] += x[:-1]");
    CHECK_LIST(a, 0, 0, 1, 3, 5, 7);
    a = tn_arange(0, 5, 1, TN_F32);
    tn_add_(tn_slice(a, 0, 0, 4, 1), tn_slice(a, 0, 1, TN_END, 1));
    LABEL("x[:-1] += x[1:]");
    CHECK_LIST(a, 0, 1, 3, 5, 7, 4);
    /* in-place with a 0-d self and a broadcast 0-d other */
    tn_tensor *s0 = tn_scalar_tensor(3, TN_F32);
    LABEL("0-d add_");
    CHECK_SHAPE_N(tn_add_(s0, tn_scalar(2)), NULL, 0);
    CHECK_CLOSE(item(s0), 5, 0);
    end_scope_check_leaks();
}

TEST(inplace_broadcast_dtype_errors) {
    tn_scope_begin();
    tn_tensor *x = tn_reshape(tn_arange(0, 4, 1, TN_F32), TN_SHAPE(2, 2));
    tn_tensor *r = tn_mul_(x, VEC(TN_F32, 2, 3));
    LABEL("mul_ broadcasting the second operand (torch: [[0,3],[4,9]])");
    CHECK(r && tn_same_storage(r, x));
    CHECK_SHAPE(r, 2, 2);
    CHECK_LIST(x, 0, 0, 3, 4, 9);
    tn_mul_(x, tn_scalar_tensor(0.5, TN_F64));
    CHECK_LIST(x, 0, 0, 1.5, 2, 4.5);
    LABEL("result shape mismatch");
    CHECK_ERR(tn_mul_(VEC(TN_F32, 1, 2), tn_ones(TN_SHAPE(2, 2), TN_F32)), "doesn't match the broadcast shape");
    CHECK_ERR(tn_add_(VEC(TN_F32, 1, 2, 3), tn_ones(TN_SHAPE(1, 3), TN_F32)), "doesn't match");
    CHECK_ERR(tn_addcmul_(tn_zeros(TN_SHAPE(3), TN_F32), VEC(TN_F32, 1, 2, 3), tn_ones(TN_SHAPE(2, 1), TN_F32), .value = 2), "doesn't match");
    CHECK_ERR(tn_add_(VEC(TN_F32, 1, 2, 3), VEC(TN_F32, 1, 2)), "size");
    LABEL("in-place result type can't be cast");
    tn_tensor *xi = VEC(TN_I64, 1, 2);
    int64_t v0 = tn_version(xi);
    CHECK_ERR(tn_add_(xi, VEC(TN_F32, 1.5)), "can't be cast");
    CHECK_ERR(tn_add_scalar_(xi, 1.5), "can't be cast");
    CHECK_ERR(tn_mul_scalar_(xi, 0.5), "can't be cast");
    CHECK_ERR(tn_div_(xi, VEC(TN_I64, 2)), "can't be cast");
    CHECK_ERR(tn_pow_(xi, VEC(TN_F32, 0.5)), "can't be cast");
    CHECK_ERR(tn_sqrt_(xi), "can't be cast");
    CHECK_ERR(tn_exp_(xi), "can't be cast");
    CHECK_ERR(tn_sigmoid_(xi), "can't be cast");
    CHECK_ERR(tn_clamp_(xi, .min = 1.5, .max = 3), "can't be cast");
    CHECK_ERR(tn_add_(VEC(TN_BOOL, 1), VEC(TN_I64, 1)), "can't be cast");
    CHECK_ERR(tn_lerp_(xi, VEC(TN_F32, 1, 2), 0.5), "");
    CHECK_LIST(xi, 0, 1, 2);   /* untouched by the failed calls */
    CHECK(tn_version(xi) == v0);
    LABEL("in-place with a castable result");
    CHECK_LIST(tn_mul_scalar_(xi, 3), 0, 3, 6);
    CHECK_LIST(tn_add_(xi, VEC(TN_BOOL, 1, 0)), 0, 4, 6);
    CHECK_LIST(tn_clamp_(xi, .min = 5, .max = 5.0), 0, 5, 5);
    CHECK_DTYPE(xi, TN_I64);
    tn_tensor *xf = VEC(TN_F32, 1, 2);
    CHECK_LIST(tn_add_(xf, VEC(TN_F64, 1.25)), 0, 2.25, 3.25);
    CHECK_DTYPE(xf, TN_F32);
    CHECK_LIST(tn_add_(xf, VEC(TN_I64, 1, 2)), 0, 3.25, 5.25);
    tn_tensor *x32 = VEC(TN_I32, 1);
    tn_tensor *big = tn_from_data((const int64_t[]){(INT64_C(1) << 33) + 1}, TN_SHAPE(1), TN_I64);
    CHECK_LIST(tn_add_(x32, big), 0, 2);   /* torch: int32 result wraps: [2] */
    CHECK_DTYPE(x32, TN_I32);
    LABEL("in-place into an expanded tensor");
    tn_tensor *e = tn_expand(tn_zeros(TN_SHAPE(3, 1), TN_F32), TN_SHAPE(3, 4));
    CHECK_ERR(tn_add_(e, tn_ones(TN_SHAPE(3, 4), TN_F32)), "single memory location");
    CHECK_ERR(tn_relu_(e), "single memory location");
    CHECK_ERR(tn_mul_scalar_(e, 2), "single memory location");
    CHECK_ERR(tn_addcmul_(e, e, e), "single memory location");
    /* fill_ of an expanded tensor is allowed by torch (every element gets the value) */
    tn_tensor *fe = tn_fill_(e, 2);
    CHECK(fe != NULL);
    CHECK_LIST(e, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2);
    end_scope_check_leaks();
}

TEST(inplace_version_counter) {
    tn_scope_begin();
    tn_tensor *x = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    tn_tensor *v = tn_t(x);
    int64_t v0 = tn_version(x);
    tn_add(x, x);
    tn_relu(x);
    CHECK(tn_version(x) == v0);          /* out of place: unchanged */
    tn_add_(x, tn_ones(TN_SHAPE(3), TN_F32));
    CHECK(tn_version(x) == v0 + 1);
    CHECK(tn_version(v) == v0 + 1);      /* views share the counter */
    tn_relu_(v);
    CHECK(tn_version(x) == v0 + 2);
    tn_fill_(x, 1);
    tn_zero_(v);
    tn_clamp_(x, .min = 0, .max = 1);
    tn_mul_scalar_(x, 2);
    tn_add_scalar_(x, 2);
    tn_lerp_(x, x, 0.5);
    tn_addcmul_(x, x, x);
    tn_addcdiv_(x, x, tn_ones_like(x));
    tn_neg_(x);
    tn_exp_(x);
    tn_sigmoid_(x);
    tn_tanh_(x);
    tn_sqrt_(x);
    tn_sub_(x, x);
    tn_div_(x, tn_ones_like(x));
    tn_pow_(x, tn_ones_like(x));
    tn_add_alpha_(x, x, 2);
    CHECK_MSG(tn_version(x) == v0 + 19, "version %lld, expected %lld", (long long)tn_version(x), (long long)(v0 + 19));
    tn_tensor *other = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    int64_t o0 = tn_version(other);
    tn_add_(x, other);
    CHECK(tn_version(other) == o0);      /* the operand is not bumped */
    end_scope_check_leaks();
}

/* every in-place op on non-contiguous views writes through to the base */
typedef struct inplace_spec {
    const char *name;
    int gen; /* of self */
    double (*ref)(double x, double a, double b);
} inplace_spec;
static double ip_fill(double x, double a, double b) { (void)x; (void)a; (void)b; return 2.5; }
static double ip_zero(double x, double a, double b) { (void)x; (void)a; (void)b; return 0; }
static double ip_clamp(double x, double a, double b) { (void)a; (void)b; return x < -0.5 ? -0.5 : x > 0.5 ? 0.5 : x; }
static double ip_addcmul(double x, double a, double b) { return x + 0.5 * a * b; }
static double ip_addcdiv(double x, double a, double b) { return x + 0.5 * a / b; }
static double ip_lerp(double x, double a, double b) { (void)b; return x + 0.25 * (a - x); }
static double ip_relu(double x, double a, double b) { (void)a; (void)b; return x > 0 ? x : 0; }
static double ip_neg(double x, double a, double b) { (void)a; (void)b; return -x; }
static double ip_exp(double x, double a, double b) { (void)a; (void)b; return exp(x); }
static double ip_sigmoid(double x, double a, double b) { (void)a; (void)b; return 1 / (1 + exp(-x)); }
static double ip_tanh(double x, double a, double b) { (void)a; (void)b; return tanh(x); }
static double ip_sqrt(double x, double a, double b) { (void)a; (void)b; return sqrt(x); }
static double ip_add(double x, double a, double b) { (void)b; return x + a; }
static double ip_add_alpha(double x, double a, double b) { (void)b; return x - 1.5 * a; }
static double ip_sub(double x, double a, double b) { (void)b; return x - a; }
static double ip_mul(double x, double a, double b) { (void)b; return x * a; }
static double ip_div(double x, double a, double b) { (void)a; return x / b; }
static double ip_pow(double x, double a, double b) { (void)b; return pow(x, a); }
static double ip_add_scalar(double x, double a, double b) { (void)a; (void)b; return x + 3; }
static double ip_mul_scalar(double x, double a, double b) { (void)a; (void)b; return x * -2; }
static double ip_add_row(double x, double a, double b) { (void)b; return x + a; }

static const inplace_spec inplace_ops[] = {
    {"fill_", G_NORMAL, ip_fill}, {"zero_", G_NORMAL, ip_zero}, {"clamp_", G_NORMAL, ip_clamp},
    {"addcmul_", G_NORMAL, ip_addcmul}, {"addcdiv_", G_NORMAL, ip_addcdiv}, {"lerp_", G_NORMAL, ip_lerp},
    {"relu_", G_NORMAL, ip_relu}, {"neg_", G_NORMAL, ip_neg}, {"exp_", G_NORMAL, ip_exp},
    {"sigmoid_", G_NORMAL, ip_sigmoid}, {"tanh_", G_NORMAL, ip_tanh}, {"sqrt_", G_POS, ip_sqrt},
    {"add_", G_NORMAL, ip_add}, {"add_alpha_(-1.5)", G_NORMAL, ip_add_alpha}, {"sub_", G_NORMAL, ip_sub},
    {"mul_", G_NORMAL, ip_mul}, {"div_", G_NORMAL, ip_div}, {"pow_", G_POS, ip_pow},
    {"add_scalar_", G_NORMAL, ip_add_scalar}, {"mul_scalar_", G_NORMAL, ip_mul_scalar},
    {"add_ (broadcast row)", G_NORMAL, ip_add_row},
};
#define NUM_INPLACE (int)(sizeof inplace_ops / sizeof inplace_ops[0])

static tn_tensor *apply_inplace(int op, tn_tensor *v, tn_tensor *a, tn_tensor *b) {
    switch (op) {
    case 0: return tn_fill_(v, 2.5);
    case 1: return tn_zero_(v);
    case 2: return tn_clamp_(v, .min = -0.5, .max = 0.5);
    case 3: return tn_addcmul_(v, a, b, .value = 0.5);
    case 4: return tn_addcdiv_(v, a, b, .value = 0.5);
    case 5: return tn_lerp_(v, a, 0.25);
    case 6: return tn_relu_(v);
    case 7: return tn_neg_(v);
    case 8: return tn_exp_(v);
    case 9: return tn_sigmoid_(v);
    case 10: return tn_tanh_(v);
    case 11: return tn_sqrt_(v);
    case 12: return tn_add_(v, a);
    case 13: return tn_add_alpha_(v, a, -1.5);
    case 14: return tn_sub_(v, a);
    case 15: return tn_mul_(v, a);
    case 16: return tn_div_(v, b);
    case 17: return tn_pow_(v, a);
    case 18: return tn_add_scalar_(v, 3);
    case 19: return tn_mul_scalar_(v, -2);
    case 20: return tn_add_(v, tn_select(a, 0, 0)); /* a row broadcast over the view */
    }
    return NULL;
}

TEST(inplace_views_write_through) {
    tn_manual_seed(5);
    for (int op = 0; op < NUM_INPLACE; op++) {
        for (int vk = 0; vk < 3; vk++) {
            for (int k = 0; k < 2; k++) {
                tn_dtype dt = k ? TN_F64 : TN_F32;
                tn_scope_begin();
                const int64_t bs[2] = {5, 6};
                tn_tensor *base = tn_to_dtype(gen_base(bs, 2, inplace_ops[op].gen), dt);
                double *orig = copy_vals(base);
                /* vk 0: t(base)[1::2] -> [3, 5] with strides (2, 6); vk 1: base[:, 2] -> [5] stride 6;
                   vk 2: base[::2, 1::2] -> [3, 3] */
                tn_tensor *v = vk == 0 ? tn_slice(tn_t(base), 0, 1, TN_END, 2)
                             : vk == 1 ? tn_select(base, 1, 2)
                                       : tn_slice(tn_slice(base, 0, 0, TN_END, 2), 1, 1, TN_END, 2);
                int vn = tn_ndim(v);
                int64_t vs[2] = {tn_shape(v)[0], vn > 1 ? tn_shape(v)[1] : 1};
                tn_tensor *a = make_input(tn_shape(v), vn, dt, L_TRANS, op == 17 ? G_UNIT : G_NORMAL);
                tn_tensor *b = make_input(tn_shape(v), vn, dt, L_SLICED, G_POS);
                const double *av = dv(a), *bv = dv(b);
                int64_t v0 = tn_version(base);
                tn_tensor *r = apply_inplace(op, v, a, b);
                LABEL("%s on view %d of a %s base", inplace_ops[op].name, vk, dname(dt));
                CHECK_MSG(r && tn_data_ptr(r) == tn_data_ptr(v) && tn_ndim(r) == vn, "%s: returned tensor is not the view (error: %s)", label, tn_last_error());
                CHECK_MSG(tn_version(base) == v0 + 1, "%s: version %lld, expected %lld", label, (long long)tn_version(base), (long long)v0 + 1);
                double ref[30];
                for (int i = 0; i < 30; i++) ref[i] = orig[i];
                for (int64_t i = 0; i < vs[0]; i++)
                    for (int64_t j = 0; j < vs[1]; j++) {
                        int64_t bi = vk == 0 ? j * 6 + 1 + 2 * i : vk == 1 ? i * 6 + 2 : (2 * i) * 6 + 1 + 2 * j;
                        int64_t vi = i * vs[1] + j;
                        double aa = op == 20 ? av[j] : av[vi];
                        ref[bi] = inplace_ops[op].ref(orig[bi], aa, bv[vi]);
                    }
                CHECK_VALS(base, ref, 30, 4 * rtol_of(dt), 4 * atol_of(dt));
                free(orig);
                tn_scope_end();
            }
        }
    }
    check_leaks();
}

/* ------------------------------------------------------------------------ */
/* 3. reductions                                                            */
/* ------------------------------------------------------------------------ */
enum { R_SUM, R_MEAN, R_PROD, R_AMAX, R_AMIN, R_VAR0, R_VAR1, R_VAR2, R_STD0, R_STD1, R_STD2,
       R_NORM1, R_NORM2, R_NORM3, R_NORMINF, R_NORMNINF, R_NORM0, R_NORMHALF, R_LSE, R_NUM };
static const char *const rname[R_NUM] = {"sum", "mean", "prod", "amax", "amin", "var(c=0)", "var(c=1)", "var(c=2)",
    "std(c=0)", "std(c=1)", "std(c=2)", "norm(1)", "norm(2)", "norm(3)", "norm(inf)", "norm(-inf)", "norm(0)", "norm(0.5)", "logsumexp"};

static tn_tensor *do_reduce(int op, tn_tensor *x, const int64_t *dims, int n, bool keep) {
    bool all = n == 0 && !keep;
    switch (op) {
    case R_SUM: return all ? tn_sum(x) : tn_sum_dims(x, dims, n, .keepdim = keep);
    case R_MEAN: return all ? tn_mean(x) : tn_mean_dims(x, dims, n, .keepdim = keep);
    case R_PROD: return all ? tn_prod(x) : tn_prod_dims(x, dims, n, .keepdim = keep);
    case R_AMAX: return tn_amax(x, dims, n, .keepdim = keep);
    case R_AMIN: return tn_amin(x, dims, n, .keepdim = keep);
    case R_VAR0: case R_VAR1: case R_VAR2: return all ? tn_var(x, .correction = op - R_VAR0) : tn_var_dims(x, dims, n, .correction = op - R_VAR0, .keepdim = keep);
    case R_STD0: case R_STD1: case R_STD2: return all ? tn_std(x, .correction = op - R_STD0) : tn_std_dims(x, dims, n, .correction = op - R_STD0, .keepdim = keep);
    case R_NORM1: return all ? tn_norm(x, .p = 1) : tn_norm_dims(x, dims, n, .p = 1, .keepdim = keep);
    case R_NORM2: return all ? tn_norm(x) : tn_norm_dims(x, dims, n, .keepdim = keep);
    case R_NORM3: return tn_norm_dims(x, dims, n, .p = 3, .keepdim = keep);
    case R_NORMINF: return tn_norm_dims(x, dims, n, .p = INFINITY, .keepdim = keep);
    case R_NORMNINF: return tn_norm_dims(x, dims, n, .p = -INFINITY, .keepdim = keep);
    case R_NORM0: return tn_norm_dims(x, dims, n, .p = 0, .keepdim = keep);
    case R_NORMHALF: return tn_norm_dims(x, dims, n, .p = 0.5, .keepdim = keep);
    case R_LSE: return tn_logsumexp(x, dims, n, .keepdim = keep);
    }
    return NULL;
}

/* flat index of the output element that input element `flat` reduces into */
static int64_t red_out_index(int64_t flat, const int64_t *shape, int nd, const bool *mask) {
    int64_t coord[TN_MAX_DIMS], o = 0;
    for (int d = nd - 1; d >= 0; d--) { coord[d] = flat % shape[d]; flat /= shape[d]; }
    for (int d = 0; d < nd; d++) if (!mask[d]) o = o * shape[d] + coord[d];
    return o;
}

static void reduce_ref(int op, const double *x, const int64_t *shape, int nd, const bool *mask, double *out, int64_t nout) {
    int64_t n = numel_of(shape, nd), count = 1;
    for (int d = 0; d < nd; d++) if (mask[d]) count *= shape[d];
    double *aux = (double *)calloc((size_t)(nout ? nout : 1), sizeof(double));
    for (int64_t o = 0; o < nout; o++)
        out[o] = op == R_PROD ? 1 : (op == R_AMAX || op == R_LSE) ? -INFINITY : (op == R_AMIN || op == R_NORMNINF) ? INFINITY : 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t o = red_out_index(i, shape, nd, mask);
        double v = x[i], a = fabs(v);
        switch (op) {
        case R_SUM: case R_MEAN: case R_VAR0: case R_VAR1: case R_VAR2: case R_STD0: case R_STD1: case R_STD2: out[o] += v; break;
        case R_PROD: out[o] *= v; break;
        case R_AMAX: case R_LSE: out[o] = (v != v || out[o] != out[o]) ? NAN : fmax(out[o], v); break;
        case R_AMIN: out[o] = (v != v || out[o] != out[o]) ? NAN : fmin(out[o], v); break;
        case R_NORM1: out[o] += a; break;
        case R_NORM2: out[o] += a * a; break;
        case R_NORM3: out[o] += a * a * a; break;
        case R_NORMHALF: out[o] += sqrt(a); break;
        case R_NORMINF: out[o] = fmax(out[o], a); break;
        case R_NORMNINF: out[o] = fmin(out[o], a); break;
        case R_NORM0: out[o] += v != 0; break;
        }
    }
    if (op == R_MEAN) for (int64_t o = 0; o < nout; o++) out[o] /= (double)count;
    if (op >= R_VAR0 && op <= R_STD2) {
        for (int64_t o = 0; o < nout; o++) { aux[o] = out[o] / (double)count; out[o] = 0; }
        for (int64_t i = 0; i < n; i++) { int64_t o = red_out_index(i, shape, nd, mask); out[o] += (x[i] - aux[o]) * (x[i] - aux[o]); }
        int corr = op >= R_STD0 ? op - R_STD0 : op - R_VAR0;
        for (int64_t o = 0; o < nout; o++) {
            out[o] /= (double)(count - corr > 0 ? count - corr : 0);
            if (op >= R_STD0) out[o] = sqrt(out[o]);
        }
    }
    if (op == R_LSE) {
        for (int64_t o = 0; o < nout; o++) { aux[o] = isinf(out[o]) ? 0 : out[o]; out[o] = 0; }
        for (int64_t i = 0; i < n; i++) { int64_t o = red_out_index(i, shape, nd, mask); out[o] += exp(x[i] - aux[o]); }
        for (int64_t o = 0; o < nout; o++) out[o] = log(out[o]) + aux[o];
    }
    if (op == R_NORM2) for (int64_t o = 0; o < nout; o++) out[o] = sqrt(out[o]);
    if (op == R_NORM3) for (int64_t o = 0; o < nout; o++) out[o] = cbrt(out[o]);
    if (op == R_NORMHALF) for (int64_t o = 0; o < nout; o++) out[o] = out[o] * out[o];
    free(aux);
}

/* expected output shape of a reduction; returns ndim and fills mask */
static int red_shape(const int64_t *shape, int nd, const int64_t *dims, int n, bool keep, bool *mask, int64_t *os) {
    for (int d = 0; d < TN_MAX_DIMS; d++) mask[d] = n == 0;
    for (int i = 0; i < n; i++) mask[dims[i] < 0 ? dims[i] + nd : dims[i]] = true;
    int on = 0;
    for (int d = 0; d < nd; d++) {
        if (!mask[d]) os[on++] = shape[d];
        else if (keep) os[on++] = 1;
    }
    return on;
}

static void run_reduce(int op, tn_dtype dt, int layout, int gen, const int64_t *shape, int nd, const int64_t *dims, int n, bool keep) {
    tn_scope_begin();
    tn_tensor *x = make_input(shape, nd, dt, layout, gen);
    tn_tensor *r = do_reduce(op, x, dims, n, keep);
    bool mask[TN_MAX_DIMS];
    int64_t os[TN_MAX_DIMS];
    int on = red_shape(shape, nd, dims, n, keep, mask, os);
    int k = snprintf(label, sizeof label, "%s on %s %s dims {", rname[op], layout_name[layout], dname(dt));
    for (int i = 0; i < n; i++) k += snprintf(label + k, sizeof label - (size_t)k, i ? ", %lld" : "%lld", (long long)dims[i]);
    snprintf(label + k, sizeof label - (size_t)k, "} keepdim %d", (int)keep);
    tn_dtype want = ((op == R_SUM || op == R_PROD) && !is_float(dt)) ? TN_I64 : dt;
    CHECK_DTYPE(r, want);
    CHECK_SHAPE_N(r, os, on);
    int64_t no = numel_of(os, on);
    double *ref = (double *)malloc((size_t)(no ? no : 1) * sizeof(double));
    reduce_ref(op, dv(x), shape, nd, mask, ref, no);
    double rt = dt == TN_F32 ? 1e-4 : dt == TN_F64 ? 1e-10 : 0, at = dt == TN_F32 ? 1e-4 : dt == TN_F64 ? 1e-11 : 0;
    CHECK_VALS(r, ref, no, rt, at);
    free(ref);
    tn_scope_end();
}

TEST(reductions_all_layouts) {
    tn_manual_seed(6);
    const int64_t shape[3] = {3, 4, 5};
    const int64_t dimsets[7][3] = {{0}, {0}, {-1}, {1}, {0, 2}, {-1, -2}, {0, 1, 2}};
    const int ndims[7] = {0, 1, 1, 1, 2, 2, 3};
    for (int op = 0; op < R_NUM; op++) {
        int gen = op == R_LSE ? G_WIDE : G_NORMAL;
        for (int ds = 0; ds < 7; ds++)
            for (int l = 0; l < L_NUM; l++) {
                tn_dtype dt = (ds + l) % 2 ? TN_F64 : TN_F32;
                run_reduce(op, dt, l, gen, shape, 3, dimsets[ds], ndims[ds], l % 2 == 1);
                if (l == L_TRANS) run_reduce(op, dt, l, gen, shape, 3, dimsets[ds], ndims[ds], false);
            }
        /* 1-d, a single element, and a [2, 1, 3] with a size-1 dim */
        const int64_t s7[1] = {7}, s1[1] = {1}, s213[3] = {2, 1, 3}, d0[1] = {0}, d1[1] = {1}, dm1[1] = {-1};
        run_reduce(op, TN_F64, L_TRANS, gen, s7, 1, d0, 1, false);
        run_reduce(op, TN_F32, L_SLICED, gen, s7, 1, NULL, 0, true);
        run_reduce(op, TN_F64, L_CONTIG, gen, s1, 1, d0, 1, false);
        run_reduce(op, TN_F32, L_EXPAND, gen, s213, 3, d1, 1, false);
        run_reduce(op, TN_F64, L_TRANS, gen, s213, 3, dm1, 1, true);
    }
    /* integer and bool inputs: sum / prod give int64, amax / amin keep the dtype */
    const int int_ops[4] = {R_SUM, R_PROD, R_AMAX, R_AMIN};
    for (int i = 0; i < 4; i++)
        for (int ds = 0; ds < 6; ds++)
            for (int l = 0; l < L_NUM; l++) {
                if (int_ops[i] == R_PROD && ds == 0) continue; /* 60 factors would overflow */
                tn_dtype dt = l % 2 ? TN_I64 : TN_I32;
                run_reduce(int_ops[i], dt, l, G_INT, shape, 3, dimsets[ds], ndims[ds], ds % 2 == 0);
                if (l == L_CONTIG) run_reduce(int_ops[i], TN_U8, l, G_POSINT, shape, 3, dimsets[ds], ndims[ds], false);
                if (l == L_SLICED) run_reduce(int_ops[i], TN_BOOL, l, G_BOOL, shape, 3, dimsets[ds], ndims[ds], true);
            }
    check_leaks();
}

TEST(reductions_special) {
    tn_scope_begin();
    const double inf = INFINITY, nan = NAN;
    LABEL("integer sums promote to int64 (torch: sum(int32 [2^31-1, 2^31-1]) = 4294967294)");
    tn_tensor *s = tn_sum(tn_from_data((const int32_t[]){INT32_MAX, INT32_MAX}, TN_SHAPE(2), TN_I32));
    CHECK_DTYPE(s, TN_I64);
    CHECK(s && *(const int64_t *)tn_data_ptr(s) == INT64_C(4294967294));
    s = tn_prod(tn_from_data((const int32_t[]){65536, 65536}, TN_SHAPE(2), TN_I32));
    CHECK(s && tn_get_dtype(s) == TN_I64 && *(const int64_t *)tn_data_ptr(s) == INT64_C(4294967296));
    LABEL("uint8 sum and prod do not wrap at 256 (torch: 400, 256)");
    CHECK_LIST(tn_sum(VEC(TN_U8, 200, 200)), 0, 400);
    CHECK_LIST(tn_prod(VEC(TN_U8, 16, 16)), 0, 256);
    LABEL("sum of bool counts");
    CHECK_DTYPE(tn_sum(VEC(TN_BOOL, 1, 1, 0)), TN_I64);
    CHECK_LIST(tn_sum(VEC(TN_BOOL, 1, 1, 0)), 0, 2);
    CHECK_LIST(tn_sum_dims(tn_reshape(VEC(TN_BOOL, 1, 1, 0, 1), TN_SHAPE(2, 2)), TN_DIMS(0)), 0, 1, 2);
    LABEL("int64 sum is exact beyond 2^53");
    s = tn_sum(tn_from_data((const int64_t[]){(INT64_C(1) << 60), 1, 1}, TN_SHAPE(3), TN_I64));
    CHECK(s && *(const int64_t *)tn_data_ptr(s) == (INT64_C(1) << 60) + 2);
    LABEL("amax keeps dtype");
    CHECK_DTYPE(tn_amax(VEC(TN_I32, 1, 2), NULL, 0), TN_I32);
    CHECK_DTYPE(tn_max(VEC(TN_U8, 1, 200)), TN_U8);
    CHECK_LIST(tn_max(VEC(TN_U8, 1, 200)), 0, 200);
    CHECK_LIST(tn_amax(VEC(TN_BOOL, 0, 1), NULL, 0), 0, 1);
    LABEL("prod with zeros");
    CHECK_LIST(tn_prod(VEC(TN_F32, 3, 0, -2)), 0, 0);
    CHECK_LIST(tn_prod_dims(tn_reshape(VEC(TN_F64, 3, 0, -2, 4), TN_SHAPE(2, 2)), TN_DIMS(1)), 0, 0, -8);
    CHECK_LIST(tn_prod(VEC(TN_F32, 3, inf, 0)), 0, nan);
    LABEL("mean / var / std / norm need floating input");
    CHECK_ERR(tn_mean(VEC(TN_I64, 1, 2)), "dtype");
    CHECK_ERR(tn_mean_dims(VEC(TN_I32, 1, 2), TN_DIMS(0)), "dtype");
    CHECK_ERR(tn_var(VEC(TN_I64, 1, 2)), "");
    CHECK_ERR(tn_std(VEC(TN_BOOL, 1, 0)), "");
    CHECK_ERR(tn_norm(VEC(TN_I64, 1, 2)), "");
    LABEL("logsumexp of int gives float (torch: logsumexp(tensor([1, 2]), 0) = 2.3133)");
    tn_tensor *li = tn_logsumexp(VEC(TN_I64, 1, 2), TN_DIMS(0));
    CHECK_MSG(li && tn_dtype_is_floating(tn_get_dtype(li)), "%s", label);
    CHECK_CLOSE(item(li), 2.3132616875182228, 1e-6);
    LABEL("empty reductions (torch: sum 0, prod 1, mean nan)");
    tn_tensor *e = tn_zeros(TN_SHAPE(0), TN_F32), *e03 = tn_zeros(TN_SHAPE(0, 3), TN_F32);
    CHECK_LIST(tn_sum(e), 0, 0);
    CHECK_LIST(tn_prod(e), 0, 1);
    CHECK_LIST(tn_mean(e), 0, nan);
    CHECK_LIST(tn_sum(tn_zeros(TN_SHAPE(0), TN_I64)), 0, 0);
    CHECK_LIST(tn_sum_dims(e03, TN_DIMS(0)), 0, 0, 0, 0);
    CHECK_LIST(tn_prod_dims(e03, TN_DIMS(0)), 0, 1, 1, 1);
    CHECK_LIST(tn_mean_dims(e03, TN_DIMS(0)), 0, nan, nan, nan);
    CHECK_LIST(tn_logsumexp(e03, TN_DIMS(0)), 0, -inf, -inf, -inf);
    CHECK_LIST(tn_norm_dims(tn_zeros(TN_SHAPE(2, 0), TN_F32), TN_DIMS(1)), 0, 0, 0);
    CHECK_LIST(tn_var(e), 0, nan);
    LABEL("sum over the non-empty dim of [0,3] is empty");
    CHECK_SHAPE(tn_sum_dims(e03, TN_DIMS(1)), 0);
    CHECK_SHAPE(tn_sum_dims(e03, TN_DIMS(1), .keepdim = true), 0, 1);
    CHECK_SHAPE(tn_amax(e03, TN_DIMS(1)), 0);
    LABEL("max of an empty tensor is an error");
    CHECK_ERR(tn_max(e), "");
    CHECK_ERR(tn_min(e), "");
    CHECK_ERR(tn_amax(e03, TN_DIMS(0)), "non-zero size");
    CHECK_ERR(tn_amin(e03, NULL, 0), "");
    CHECK_ERR(tn_argmax(e), "");
    CHECK_ERR(tn_max_dim(e03, 0, NULL), "non-zero size");
    tn_tensor *mi = NULL;
    tn_tensor *mv = tn_max_dim(e03, 1, &mi);
    LABEL("max_dim over the non-empty dim of [0,3]");
    CHECK_SHAPE(mv, 0);
    CHECK_SHAPE(mi, 0);
    LABEL("NaN propagates through max / min / amax");
    tn_tensor *xn = VEC(TN_F32, 1, nan, 3);
    CHECK_LIST(tn_max(xn), 0, nan);
    CHECK_LIST(tn_min(xn), 0, nan);
    CHECK_LIST(tn_amax(xn, NULL, 0), 0, nan);
    CHECK_LIST(tn_max(VEC(TN_F64, -inf, -inf)), 0, -inf);
    CHECK_LIST(tn_min(VEC(TN_F64, 3, inf)), 0, 3);
    CHECK_LIST(tn_sum(VEC(TN_F32, 1, nan)), 0, nan);
    CHECK_LIST(tn_sum(VEC(TN_F32, inf, -inf)), 0, nan);
    CHECK_LIST(tn_norm(VEC(TN_F32, 1, nan), .p = inf), 0, nan);
    LABEL("var / std corrections (torch: var([1,2], correction=2 or 3) = inf, std([1,2,4], correction=0) = 1.2472)");
    CHECK_LIST(tn_var(VEC(TN_F32, 1, 2), .correction = 2), 0, inf);
    CHECK_LIST(tn_var(VEC(TN_F32, 1, 2), .correction = 3), 0, inf);
    CHECK_LIST(tn_std(VEC(TN_F32, 1, 2, 4), .correction = 0), 1e-6, 1.247219128924647);
    CHECK_LIST(tn_var(VEC(TN_F64, 1)), 0, nan);
    CHECK_LIST(tn_var(VEC(TN_F64, 7), .correction = 0), 0, 0);
    CHECK_LIST(tn_var_dims(tn_reshape(VEC(TN_F32, 1, 2, 3, 5), TN_SHAPE(2, 2)), TN_DIMS(0, 1), .correction = 2, .keepdim = true), 1e-6, 4.375);
    CHECK_SHAPE(tn_var_dims(tn_reshape(VEC(TN_F32, 1, 2, 3, 5), TN_SHAPE(2, 2)), TN_DIMS(0, 1), .correction = 2, .keepdim = true), 1, 1);
    LABEL("var is shift-invariant (no catastrophic cancellation at 1e8 in float64)");
    CHECK_LIST(tn_var(VEC(TN_F64, 1e8 + 1, 1e8 + 2, 1e8 + 3)), 1e-6, 1);
    LABEL("norm special p (torch: norm([3,-4], -inf) = 3, norm([3, 0], 0) = 1)");
    CHECK_LIST(tn_norm(VEC(TN_F32, 3, -4), .p = -inf), 0, 3);
    CHECK_LIST(tn_norm(VEC(TN_F32, 3, 0), .p = 0), 0, 1);
    CHECK_LIST(tn_norm(VEC(TN_F32, 3, -4)), 1e-6, 5);
    CHECK_LIST(tn_norm(VEC(TN_F32, 1, 0, 2), .p = -1), 0, 0);
    CHECK_LIST(tn_norm(VEC(TN_F32, 1, 4, 2), .p = -2), 1e-5, 0.8728715609439696);
    CHECK_LIST(tn_norm(tn_scalar_tensor(-3, TN_F32)), 0, 3);
    CHECK_LIST(tn_norm(VEC(TN_F64, 1e200, 1e200)), 0, INFINITY); /* torch also overflows: inf */
    LABEL("logsumexp: -inf rows, inf, nan, large values (torch)");
    tn_tensor *lx = tn_reshape(VEC(TN_F32, -inf, -inf, 1000, 1000, inf, 1, nan, 1, -1000, -1000), TN_SHAPE(5, 2));
    CHECK_LIST(tn_logsumexp(lx, TN_DIMS(1)), 1e-3, -inf, 1000.6931471805599, inf, nan, -999.30685281944);
    CHECK_SHAPE(tn_logsumexp(lx, TN_DIMS(1), .keepdim = true), 5, 1);
    CHECK_SHAPE_N(tn_logsumexp(lx, TN_DIMS(-1, 0)), NULL, 0);
    CHECK_LIST(tn_logsumexp(VEC(TN_F64, 1000, 1000, 1000, 1000), TN_DIMS(0)), 1e-9, 1000 + log(4));
    CHECK_LIST(tn_logsumexp(tn_scalar_tensor(2, TN_F32), TN_DIMS(0)), 0, 2);
    LABEL("0-d reductions");
    tn_tensor *z = tn_scalar_tensor(3, TN_F64);
    CHECK_SHAPE_N(tn_sum_dims(z, TN_DIMS(0)), NULL, 0);
    CHECK_SHAPE_N(tn_sum_dims(z, TN_DIMS(-1), .keepdim = true), NULL, 0);
    CHECK_LIST(tn_sum_dims(z, TN_DIMS(-1), .keepdim = true), 0, 3);
    CHECK_LIST(tn_prod_dims(z, TN_DIMS(0)), 0, 3);
    CHECK_LIST(tn_mean(z), 0, 3);
    CHECK_LIST(tn_amax(z, TN_DIMS(0), .keepdim = true), 0, 3);
    CHECK_LIST(tn_max(z), 0, 3);
    CHECK_ERR(tn_sum_dims(z, TN_DIMS(1)), "out of range");
    LABEL("dim errors");
    tn_tensor *m = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    CHECK_ERR(tn_sum_dims(m, TN_DIMS(1, -1)), "multiple times");
    CHECK_ERR(tn_sum_dims(m, TN_DIMS(2)), "out of range");
    CHECK_ERR(tn_mean_dims(m, TN_DIMS(-3)), "out of range");
    CHECK_ERR(tn_amax(m, TN_DIMS(0, 0)), "multiple times");
    CHECK_ERR(tn_var_dims(m, TN_DIMS(5)), "out of range");
    CHECK_ERR(tn_max_dim(m, 2, NULL), "out of range");
    CHECK_ERR(tn_cumsum(m, -3), "out of range");
    CHECK_ERR(tn_sort(m, NULL, .dim = 2), "out of range");
    CHECK_ERR(tn_softmax(m, 2), "out of range");
    end_scope_check_leaks();
}

/* lane ops: for each lane along dim (outer o, inner i), element l sits at flat (o*len + l)*inner + i */
static void lane_geom(const int64_t *shape, int nd, int dim, int64_t *outer, int64_t *len, int64_t *inner) {
    *outer = 1; *inner = 1; *len = nd ? shape[dim] : 1;
    for (int d = 0; d < dim; d++) *outer *= shape[d];
    for (int d = dim + 1; d < nd; d++) *inner *= shape[d];
}

/* max_dim / min_dim / argmax_dim / argmin_dim */
static void run_argext(bool is_max, tn_dtype dt, int layout, int gen, const int64_t *shape, int nd, int64_t dim, bool keep) {
    tn_scope_begin();
    tn_tensor *x = make_input(shape, nd, dt, layout, gen);
    tn_tensor *idx = NULL, *val = is_max ? tn_max_dim(x, dim, &idx, .keepdim = keep) : tn_min_dim(x, dim, &idx, .keepdim = keep);
    tn_tensor *aidx = is_max ? tn_argmax_dim(x, .dim = dim, .keepdim = keep) : tn_argmin_dim(x, .dim = dim, .keepdim = keep);
    int d = (int)(dim < 0 ? dim + (nd ? nd : 1) : dim);
    int64_t outer, len, inner;
    lane_geom(shape, nd, d, &outer, &len, &inner);
    double *rv = (double *)malloc((size_t)(outer * inner + 1) * sizeof(double)), *ri = (double *)malloc((size_t)(outer * inner + 1) * sizeof(double));
    const double *xv = dv(x);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double best = xv[o * len * inner + i];
            int64_t bi = 0;
            for (int64_t l = 1; l < len && best == best; l++) {
                double v = xv[(o * len + l) * inner + i];
                if (v != v || (is_max ? v > best : v < best)) { best = v; bi = l; }
            }
            rv[o * inner + i] = best;
            ri[o * inner + i] = (double)bi;
        }
    int64_t os[TN_MAX_DIMS];
    int on = 0;
    for (int k = 0; k < nd; k++) {
        if (k != d) os[on++] = shape[k];
        else if (keep) os[on++] = 1;
    }
    LABEL("%s on %s %s dim %lld keepdim %d", is_max ? "max_dim" : "min_dim", layout_name[layout], dname(dt), (long long)dim, (int)keep);
    CHECK_DTYPE(val, dt);
    CHECK_SHAPE_N(val, os, on);
    CHECK_VALS(val, rv, outer * inner, 0, 0);
    CHECK_DTYPE(idx, TN_I64);
    CHECK_SHAPE_N(idx, os, on);
    CHECK_VALS(idx, ri, outer * inner, 0, 0);
    LABEL("%s on %s %s dim %lld keepdim %d", is_max ? "argmax_dim" : "argmin_dim", layout_name[layout], dname(dt), (long long)dim, (int)keep);
    CHECK_SHAPE_N(aidx, os, on);
    CHECK_VALS(aidx, ri, outer * inner, 0, 0);
    free(rv);
    free(ri);
    tn_scope_end();
}

TEST(max_dim_argmax) {
    tn_manual_seed(7);
    const int64_t shape[3] = {3, 4, 5};
    for (int l = 0; l < L_NUM; l++)
        for (int64_t dim = -3; dim < 3; dim++) {
            bool keep = (dim + l) % 2 != 0;
            run_argext(true, TN_F32, l, G_NORMAL, shape, 3, dim, keep);
            run_argext(false, TN_F64, l, G_NORMAL, shape, 3, dim, !keep);
            run_argext(true, TN_I32, l, G_INT, shape, 3, dim, keep);   /* many ties: first occurrence */
            run_argext(false, TN_I64, l, G_INT, shape, 3, dim, keep);
            if (dim == 1) run_argext(true, TN_U8, l, G_POSINT, shape, 3, dim, keep);
        }
    const int64_t s0[1] = {0}, s7[1] = {7};
    run_argext(true, TN_F32, L_CONTIG, G_NORMAL, s0, 0, 0, false);  /* 0-d */
    run_argext(false, TN_F32, L_CONTIG, G_NORMAL, s0, 0, -1, true);
    run_argext(true, TN_F64, L_TRANS, G_INT, s7, 1, 0, true);

    tn_scope_begin();
    LABEL("ties give the first index, NaN wins with its first index (torch)");
    tn_tensor *i = NULL;
    tn_tensor *v = tn_max_dim(tn_reshape(VEC(TN_F32, 1, NAN, 3, NAN), TN_SHAPE(1, 4)), 1, &i);
    CHECK_LIST(v, 0, NAN);
    CHECK_LIST(i, 0, 1);
    v = tn_min_dim(tn_reshape(VEC(TN_F32, 1, NAN, 3, NAN), TN_SHAPE(1, 4)), 1, &i);
    CHECK_LIST(v, 0, NAN);
    CHECK_LIST(i, 0, 1);
    CHECK_LIST(tn_argmax(VEC(TN_F32, 1, NAN, 3, NAN)), 0, 1);
    CHECK_LIST(tn_argmax(VEC(TN_F32, 1, 3, 3, 0)), 0, 1);
    CHECK_LIST(tn_argmin(VEC(TN_F32, 1, 0, 3, 0)), 0, 1);
    CHECK_LIST(tn_argmax(VEC(TN_F64, -INFINITY, -INFINITY)), 0, 0);
    CHECK_LIST(tn_argmin(VEC(TN_F64, INFINITY, 5, INFINITY)), 0, 1);
    LABEL("max_dim without indices");
    CHECK_LIST(tn_max_dim(VEC(TN_F32, 1, 5, 2), 0, NULL), 0, 5);
    LABEL("flat argmax / argmin over a transposed view");
    tn_tensor *m = tn_t(tn_reshape(VEC(TN_F32, 0, 9, 2, 3, -4, 5), TN_SHAPE(2, 3)));  /* [[0,3],[9,-4],[2,5]] */
    CHECK_DTYPE(tn_argmax(m), TN_I64);
    CHECK_SHAPE_N(tn_argmax(m), NULL, 0);
    CHECK_LIST(tn_argmax(m), 0, 2);
    CHECK_LIST(tn_argmin(m), 0, 3);
    LABEL("0-d max_dim / argmax (torch: values 3, index 0)");
    CHECK_LIST(tn_max_dim(tn_scalar_tensor(3, TN_F32), 0, &i), 0, 3);
    CHECK_LIST(i, 0, 0);
    CHECK_LIST(tn_argmax(tn_scalar_tensor(3, TN_F32)), 0, 0);
    end_scope_check_leaks();
}

/* cumsum / cumprod / softmax / log_softmax along a dim */
enum { S_CUMSUM, S_CUMPROD, S_SOFTMAX, S_LOGSOFTMAX };
static void run_scan(int op, tn_dtype dt, int layout, int gen, const int64_t *shape, int nd, int64_t dim) {
    static const char *const names[] = {"cumsum", "cumprod", "softmax", "log_softmax"};
    tn_scope_begin();
    tn_tensor *x = make_input(shape, nd, dt, layout, gen);
    tn_tensor *r = op == S_CUMSUM ? tn_cumsum(x, dim) : op == S_CUMPROD ? tn_cumprod(x, dim) : op == S_SOFTMAX ? tn_softmax(x, dim) : tn_log_softmax(x, dim);
    int d = (int)(dim < 0 ? dim + (nd ? nd : 1) : dim);
    int64_t outer, len, inner, n = numel_of(shape, nd);
    lane_geom(shape, nd, d, &outer, &len, &inner);
    double *ref = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    const double *xv = dv(x);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double acc = op == S_CUMPROD ? 1 : 0, m = -INFINITY, sum = 0;
            for (int64_t l = 0; l < len; l++) m = fmax(m, xv[(o * len + l) * inner + i]);
            for (int64_t l = 0; l < len; l++) sum += exp(xv[(o * len + l) * inner + i] - m);
            for (int64_t l = 0; l < len; l++) {
                int64_t f = (o * len + l) * inner + i;
                if (op == S_CUMSUM) ref[f] = acc += xv[f];
                else if (op == S_CUMPROD) ref[f] = acc *= xv[f];
                else if (op == S_SOFTMAX) ref[f] = exp(xv[f] - m) / sum;
                else ref[f] = xv[f] - m - log(sum);
            }
        }
    tn_dtype want = is_float(dt) ? dt : (op <= S_CUMPROD ? TN_I64 : TN_F32);
    LABEL("%s on %s %s dim %lld", names[op], layout_name[layout], dname(dt), (long long)dim);
    CHECK_DTYPE(r, want);
    CHECK_SHAPE_N(r, shape, nd);
    CHECK_VALS(r, ref, n, want == TN_F32 ? 1e-5 : 1e-12, want == TN_F32 ? 1e-5 : 1e-12);
    if (op == S_SOFTMAX && r && n) { /* every lane sums to 1 */
        tn_tensor *sums = tn_sum_dims(r, &dim, 1);
        const double *sv = dv(sums);
        bool ok = sv != NULL;
        for (int64_t k = 0; ok && k < outer * inner; k++) ok = fabs(sv[k] - 1) < (want == TN_F32 ? 1e-5 : 1e-12);
        CHECK_MSG(ok, "%s: lanes do not sum to 1", label);
    }
    free(ref);
    tn_scope_end();
}

TEST(scans_and_softmax) {
    tn_manual_seed(8);
    const int64_t shape[3] = {3, 4, 5};
    for (int op = 0; op < 4; op++)
        for (int l = 0; l < L_NUM; l++)
            for (int64_t dim = -1; dim < 3; dim++) {
                int gen = op == S_CUMPROD ? G_NORMAL : G_WIDE;
                run_scan(op, (dim + l) % 2 ? TN_F64 : TN_F32, l, gen, shape, 3, dim);
                if (op <= S_CUMPROD && dim != 1) run_scan(op, l % 2 ? TN_I32 : TN_I64, l, G_INT, shape, 3, dim);
            }
    const int64_t s0[1] = {0}, s7[1] = {7}, s03[2] = {0, 3}, s11[2] = {1, 1};
    for (int op = 0; op < 4; op++) {
        run_scan(op, TN_F32, L_CONTIG, G_NORMAL, s0, 0, 0);    /* 0-d */
        run_scan(op, TN_F64, L_CONTIG, G_NORMAL, s0, 0, -1);
        run_scan(op, TN_F64, L_TRANS, G_NORMAL, s7, 1, 0);
        run_scan(op, TN_F32, L_CONTIG, G_NORMAL, s03, 2, 1);   /* empty */
        run_scan(op, TN_F32, L_CONTIG, G_NORMAL, s03, 2, 0);
        run_scan(op, TN_F64, L_EXPAND, G_NORMAL, s11, 2, 1);
    }
    run_scan(S_CUMSUM, TN_BOOL, L_TRANS, G_BOOL, shape, 3, 1);
    run_scan(S_CUMPROD, TN_U8, L_SLICED, G_POSINT, s7, 1, 0);  /* torch: uint8 cumprod gives int64 */

    tn_scope_begin();
    const double inf = INFINITY, nan = NAN;
    LABEL("cumsum / cumprod special values (torch)");
    CHECK_LIST(tn_cumsum(VEC(TN_F32, 1, nan, 2), 0), 0, 1, nan, nan);
    CHECK_LIST(tn_cumprod(VEC(TN_F32, 1, 0, 2), 0), 0, 1, 0, 0);
    CHECK_LIST(tn_cumsum(VEC(TN_BOOL, 1, 1), 0), 0, 1, 2);
    CHECK_LIST(tn_cumprod(VEC(TN_U8, 16, 16), 0), 0, 16, 256);
    CHECK_DTYPE(tn_cumsum(VEC(TN_I32, 1, 2), 0), TN_I64);
    CHECK_LIST(tn_cumsum(tn_scalar_tensor(3, TN_F32), 0), 0, 3);
    LABEL("softmax stability (torch: softmax([1000, 1001]) = [0.2689, 0.7311])");
    CHECK_LIST(tn_softmax(VEC(TN_F32, 1000, 1001), 0), 1e-6, 0.2689414213699951, 0.7310585786300049);
    /* torch (float32): log_softmax([1000, 1001]) = [-1.3132616, -0.3132617], same at 10000 */
    CHECK_LIST(tn_log_softmax(VEC(TN_F32, 1000, 1001), 0), 1e-6, -1.3132616875182228, -0.3132616875182228);
    CHECK_LIST(tn_log_softmax(VEC(TN_F32, 10000, 10001), 0), 1e-6, -1.3132616875182228, -0.3132616875182228);
    CHECK_LIST(tn_log_softmax(VEC(TN_F64, 1e6, 1e6 + 1), 0), 1e-12, -1.3132616875182228, -0.3132616875182228);
    CHECK_LIST(tn_softmax(VEC(TN_F64, -1000, -1001), 0), 1e-15, 0.7310585786300049, 0.2689414213699951);
    CHECK_LIST(tn_softmax(VEC(TN_F32, 1e30, 0), 0), 0, 1, 0);
    LABEL("softmax with -inf entries (torch: [[nan, nan], [1, 0]], log: [[nan, nan], [0, -inf]])");
    tn_tensor *mi = tn_reshape(VEC(TN_F32, -inf, -inf, 0, -inf), TN_SHAPE(2, 2));
    CHECK_LIST(tn_softmax(mi, 1), 0, nan, nan, 1, 0);
    CHECK_LIST(tn_log_softmax(mi, 1), 0, nan, nan, 0, -inf);
    CHECK_LIST(tn_softmax(mi, 0), 0, 0, nan, 1, nan);  /* column 0: [-inf, 0] -> [0, 1]; column 1 all -inf */
    LABEL("softmax with +inf / nan (torch: nan)");
    CHECK_LIST(tn_softmax(VEC(TN_F32, inf, 1), 0), 0, nan, nan);
    CHECK_LIST(tn_softmax(VEC(TN_F32, nan, 1), 0), 0, nan, nan);
    LABEL("softmax of a 0-d tensor is 1");
    CHECK_LIST(tn_softmax(tn_scalar_tensor(3, TN_F32), 0), 0, 1);
    CHECK_LIST(tn_log_softmax(tn_scalar_tensor(3, TN_F32), -1), 0, 0);
    end_scope_check_leaks();
}

/* sort / argsort / topk */
static void sort_ref(const double *v, int64_t n, bool desc, int64_t *ix) {
    for (int64_t i = 0; i < n; i++) ix[i] = i;
    for (int64_t i = 1; i < n; i++) { /* stable insertion sort; NaN largest */
        int64_t cur = ix[i], j = i;
        for (; j > 0; j--) {
            double a = v[cur], b = v[ix[j - 1]];
            bool before = desc ? ((a != a && b == b) || a > b) : (a == a && (b != b || a < b));
            if (!before) break;
            ix[j] = ix[j - 1];
        }
        ix[j] = cur;
    }
}

static void run_sort(int mode, tn_dtype dt, int layout, int gen, const int64_t *shape, int nd, int64_t dim, bool desc, int64_t k) {
    tn_scope_begin();
    tn_tensor *x = make_input(shape, nd, dt, layout, gen), *idx = NULL, *val = NULL;
    /* the reference is stable: .stable = true (tn_sort's ties follow PyTorch's std::sort,
       tests/test_ops_i20.c; its values are checked below) */
    if (mode == 0) val = tn_sort(x, &idx, .dim = dim, .descending = desc, .stable = true);
    else if (mode == 1) idx = tn_argsort(x, .dim = dim, .descending = desc, .stable = true);
    else val = tn_topk(x, k, &idx, .dim = dim, .largest = desc);
    tn_tensor *val_unstable = mode == 0 ? tn_sort(x, NULL, .dim = dim, .descending = desc) : NULL;
    int d = (int)(dim < 0 ? dim + (nd ? nd : 1) : dim);
    int64_t outer, len, inner, n = numel_of(shape, nd);
    lane_geom(shape, nd, d, &outer, &len, &inner);
    int64_t kk = mode == 2 ? k : len, on = outer * kk * inner;
    double *rv = (double *)malloc((size_t)(on + 1) * sizeof(double)), *ri = (double *)malloc((size_t)(on + 1) * sizeof(double));
    double *lane = (double *)malloc((size_t)(len + 1) * sizeof(double));
    int64_t *ix = (int64_t *)malloc((size_t)(len + 1) * sizeof(int64_t));
    const double *xv = dv(x);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t l = 0; l < len; l++) lane[l] = xv[(o * len + l) * inner + i];
            sort_ref(lane, len, desc, ix);
            for (int64_t l = 0; l < kk; l++) {
                rv[(o * kk + l) * inner + i] = lane[ix[l]];
                ri[(o * kk + l) * inner + i] = (double)ix[l];
            }
        }
    int64_t os[TN_MAX_DIMS];
    for (int q = 0; q < nd; q++) os[q] = q == d ? kk : shape[q];
    static const char *const names[] = {"sort", "argsort", "topk"};
    LABEL("%s on %s %s dim %lld %s k %lld", names[mode], layout_name[layout], dname(dt), (long long)dim,
          mode == 2 ? (desc ? "largest" : "smallest") : (desc ? "descending" : "ascending"), (long long)k);
    if (mode != 1) {
        CHECK_DTYPE(val, dt);
        CHECK_SHAPE_N(val, os, nd);
        CHECK_VALS(val, rv, on, 0, 0);
    }
    if (mode == 0) CHECK_VALS(val_unstable, rv, on, 0, 0);
    CHECK_DTYPE(idx, TN_I64);
    CHECK_SHAPE_N(idx, os, nd);
    CHECK_VALS(idx, ri, on, 0, 0);
    (void)n;
    free(rv); free(ri); free(lane); free(ix);
    tn_scope_end();
}

TEST(sort_argsort_topk) {
    tn_manual_seed(9);
    const int64_t shape[3] = {3, 4, 5}, s40[1] = {40}, s0[1] = {0}, s03[2] = {0, 3}, s30[2] = {3, 0};
    for (int l = 0; l < L_NUM; l++)
        for (int64_t dim = -1; dim < 3; dim++)
            for (int desc = 0; desc < 2; desc++) {
                run_sort(0, (dim + l) % 2 ? TN_F64 : TN_F32, l, G_NORMAL, shape, 3, dim, desc, 0);
                run_sort(0, l % 2 ? TN_I32 : TN_I64, l, G_INT, shape, 3, dim, desc, 0);  /* ties: stable */
                run_sort(1, TN_F32, l, G_HALF, shape, 3, dim, desc, 0);
                int64_t len = shape[dim < 0 ? 2 : dim];
                run_sort(2, TN_F32, l, G_NORMAL, shape, 3, dim, desc, (dim + 1 + desc) % (len + 1));
            }
    for (int desc = 0; desc < 2; desc++) {
        run_sort(0, TN_F32, L_TRANS, G_INT, s40, 1, 0, desc, 0);     /* long lane (merge sort path), many ties */
        run_sort(0, TN_F64, L_SLICED, G_NORMAL, s40, 1, -1, desc, 0);
        run_sort(0, TN_U8, L_CONTIG, G_POSINT, s40, 1, 0, desc, 0);
        run_sort(0, TN_BOOL, L_CONTIG, G_BOOL, s40, 1, 0, desc, 0);
        run_sort(0, TN_F32, L_CONTIG, G_NORMAL, s0, 0, 0, desc, 0);   /* 0-d */
        run_sort(0, TN_F32, L_CONTIG, G_NORMAL, s03, 2, 1, desc, 0);  /* empty */
        run_sort(0, TN_F32, L_CONTIG, G_NORMAL, s30, 2, 1, desc, 0);
        for (int64_t k = 0; k <= 5; k++) run_sort(2, TN_F64, L_TRANS, G_NORMAL, shape, 3, -1, desc, k);  /* k = 0 .. size */
        run_sort(2, TN_F32, L_CONTIG, G_NORMAL, s40, 1, 0, desc, 40);
        run_sort(2, TN_F32, L_CONTIG, G_NORMAL, s0, 0, 0, desc, 1);    /* 0-d topk */
        run_sort(2, TN_F32, L_CONTIG, G_NORMAL, s03, 2, 1, desc, 2);
    }

    tn_scope_begin();
    const double nan = NAN;
    tn_tensor *i = NULL, *v;
    LABEL("sort: NaN last ascending (torch: [1,1,2,3,nan,nan], indices [2,5,4,0,1,3])");
    v = tn_sort(VEC(TN_F32, 3, nan, 1, nan, 2, 1), &i, .dim = 0);
    CHECK_LIST(v, 0, 1, 1, 2, 3, nan, nan);
    CHECK_LIST(i, 0, 2, 5, 4, 0, 1, 3);
    LABEL("sort: NaN first descending (torch: [nan,nan,3,2,1,1], indices [1,3,0,4,2,5])");
    v = tn_sort(VEC(TN_F32, 3, nan, 1, nan, 2, 1), &i, .dim = 0, .descending = true);
    CHECK_LIST(v, 0, nan, nan, 3, 2, 1, 1);
    CHECK_LIST(i, 0, 1, 3, 0, 4, 2, 5);
    LABEL("sort: stable descending ties (torch stable=True: indices [1,3,5,0,2,4])");
    v = tn_sort(VEC(TN_I64, 1, 2, 1, 2, 0, 2), &i, .dim = 0, .descending = true);
    CHECK_LIST(v, 0, 2, 2, 2, 1, 1, 0);
    CHECK_LIST(i, 0, 1, 3, 5, 0, 2, 4);
    LABEL("sort: -0.0 and 0.0 are ties");
    v = tn_sort(VEC(TN_F64, 0.0, -0.0, 0.0), &i, .dim = 0);
    CHECK_LIST(i, 0, 0, 1, 2);
    LABEL("topk with NaN (torch: largest [nan, 3] idx [1, 0]; smallest [1, 2] idx [2, 3])");
    v = tn_topk(VEC(TN_F32, 3, nan, 1, 2), 2, &i, .dim = 0);
    CHECK_LIST(v, 0, nan, 3);
    CHECK_LIST(i, 0, 1, 0);
    v = tn_topk(VEC(TN_F32, 3, nan, 1, 2), 2, &i, .dim = 0, .largest = false);
    CHECK_LIST(v, 0, 1, 2);
    CHECK_LIST(i, 0, 2, 3);
    LABEL("topk k = 0 and k > size");
    v = tn_topk(VEC(TN_F32, 3, 1), 0, &i, .dim = 0);
    CHECK_SHAPE(v, 0);
    CHECK_SHAPE(i, 0);
    CHECK_ERR(tn_topk(VEC(TN_F32, 3, 1), 3, NULL, .dim = 0), "out of range");
    CHECK_ERR(tn_topk(VEC(TN_F32, 3, 1), -1, NULL, .dim = 0), "out of range");
    LABEL("topk without indices");
    CHECK_LIST(tn_topk(VEC(TN_F32, 3, 1, 7), 1, NULL, .dim = 0), 0, 7);
    LABEL("argsort of a transposed matrix along dim 0 and 1");
    tn_tensor *m = tn_t(tn_reshape(VEC(TN_F32, 3, 1, 2, 0, 5, 4), TN_SHAPE(2, 3)));  /* [[3,0],[1,5],[2,4]] */
    CHECK_LIST(tn_argsort(m, .dim = 0), 0, 1, 0, 2, 2, 0, 1);
    CHECK_LIST(tn_argsort(m, .dim = 1, .descending = true), 0, 0, 1, 1, 0, 1, 0);
    end_scope_check_leaks();
}

TEST(all_any) {
    tn_manual_seed(10);
    const int64_t shape[3] = {3, 4, 5};
    for (int l = 0; l < L_NUM; l++) {
        const tn_dtype dts[3] = {TN_F32, TN_I64, TN_BOOL};
        for (int k = 0; k < 3; k++) {
            tn_scope_begin();
            tn_dtype dt = dts[k];
            /* G_EXPO: a quarter zeros, so lanes of 3-5 are mixed; G_POSINT: all nonzero */
            for (int g = 0; g < 2; g++) {
                tn_tensor *x = make_input(shape, 3, dt, l, dt == TN_BOOL ? (g ? G_POSINT : G_BOOL) : (g ? G_POSINT : G_EXPO));
                const double *xv = dv(x);
                double all = 1, any = 0;
                for (int i = 0; i < 60; i++) { all = all && xv[i] != 0; any = any || xv[i] != 0; }
                LABEL("all/any on %s %s gen %d", layout_name[l], dname(dt), g);
                CHECK_DTYPE(tn_all(x), TN_BOOL);
                CHECK_SHAPE_N(tn_all(x), NULL, 0);
                CHECK_VALS(tn_all(x), &all, 1, 0, 0);
                CHECK_VALS(tn_any(x), &any, 1, 0, 0);
                for (int64_t dim = -1; dim < 3; dim++) {
                    int d = dim < 0 ? 2 : (int)dim;
                    int64_t outer, len, inner;
                    lane_geom(shape, 3, d, &outer, &len, &inner);
                    double ra[20], ro[20];
                    for (int64_t o = 0; o < outer; o++)
                        for (int64_t i = 0; i < inner; i++) {
                            bool a = true, b = false;
                            for (int64_t q = 0; q < len; q++) { double v = xv[(o * len + q) * inner + i]; a = a && v != 0; b = b || v != 0; }
                            ra[o * inner + i] = a;
                            ro[o * inner + i] = b;
                        }
                    bool keep = (dim + l) % 2 != 0;
                    int64_t os[3];
                    int on = 0;
                    for (int q = 0; q < 3; q++) { if (q != d) os[on++] = shape[q]; else if (keep) os[on++] = 1; }
                    LABEL("all_dim/any_dim on %s %s dim %lld keepdim %d", layout_name[l], dname(dt), (long long)dim, (int)keep);
                    tn_tensor *ta = tn_all_dim(x, dim, .keepdim = keep), *to = tn_any_dim(x, dim, .keepdim = keep);
                    CHECK_DTYPE(ta, TN_BOOL);
                    CHECK_SHAPE_N(ta, os, on);
                    CHECK_VALS(ta, ra, outer * inner, 0, 0);
                    CHECK_SHAPE_N(to, os, on);
                    CHECK_VALS(to, ro, outer * inner, 0, 0);
                }
            }
            tn_scope_end();
        }
    }
    tn_scope_begin();
    LABEL("all/any special (torch: all(empty) True, any(empty) False, NaN is true)");
    CHECK_LIST(tn_all(tn_zeros(TN_SHAPE(0), TN_F32)), 0, 1);
    CHECK_LIST(tn_any(tn_zeros(TN_SHAPE(0), TN_F32)), 0, 0);
    CHECK_LIST(tn_all_dim(tn_reshape(VEC(TN_F32, 1, 0, 2, NAN), TN_SHAPE(2, 2)), 1), 0, 0, 1);
    CHECK_LIST(tn_any_dim(tn_reshape(VEC(TN_F32, 1, 0, 0, 0), TN_SHAPE(2, 2)), 1, .keepdim = true), 0, 1, 0);
    CHECK_SHAPE(tn_any_dim(tn_reshape(VEC(TN_F32, 1, 0, 0, 0), TN_SHAPE(2, 2)), 1, .keepdim = true), 2, 1);
    CHECK_LIST(tn_all_dim(tn_zeros(TN_SHAPE(2, 0), TN_F32), 1), 0, 1, 1);
    CHECK_LIST(tn_any(tn_scalar_tensor(-0.0, TN_F64)), 0, 0);
    end_scope_check_leaks();
}

/* ------------------------------------------------------------------------ */
/* 5. linear algebra                                                        */
/* ------------------------------------------------------------------------ */
/* torch.matmul on the values av (shape as, na dims) and bv: returns the result values in
   *out (malloc'd) and the result shape in os; also sum |a||b| per element in *mag. */
static int matmul_ref(const double *av, const int64_t *as, int na, const double *bv, const int64_t *bs, int nb,
                      double **out, double **mag, int64_t *os) {
    int64_t a2[TN_MAX_DIMS + 1], b2[TN_MAX_DIMS + 1];
    int n2a = na == 1 ? 2 : na, n2b = nb == 1 ? 2 : nb;
    if (na == 1) { a2[0] = 1; a2[1] = as[0]; } else memcpy(a2, as, (size_t)na * sizeof(int64_t));
    if (nb == 1) { b2[0] = bs[0]; b2[1] = 1; } else memcpy(b2, bs, (size_t)nb * sizeof(int64_t));
    int64_t n = a2[n2a - 2], k = a2[n2a - 1], m = b2[n2b - 1];
    int64_t bsh[TN_MAX_DIMS];
    int bnd = tn_broadcast_shapes(a2, n2a - 2, b2, n2b - 2, bsh);
    int64_t nbatch = numel_of(bsh, bnd), total = nbatch * n * m;
    *out = (double *)calloc((size_t)(total ? total : 1), sizeof(double));
    *mag = (double *)calloc((size_t)(total ? total : 1), sizeof(double));
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t ao = bidx(bi, bsh, bnd, a2, n2a - 2) * n * k, bo = bidx(bi, bsh, bnd, b2, n2b - 2) * k * m;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m; j++) {
                double acc = 0, mg = 0;
                for (int64_t q = 0; q < k; q++) {
                    double x = av[ao + i * k + q], y = bv[bo + q * m + j];
                    acc += x * y;
                    mg += fabs(x * y);
                }
                (*out)[(bi * n + i) * m + j] = acc;
                (*mag)[(bi * n + i) * m + j] = mg;
            }
    }
    int on = 0;
    for (int i = 0; i < bnd; i++) os[on++] = bsh[i];
    if (na > 1) os[on++] = n;
    if (nb > 1) os[on++] = m;
    return on;
}

static bool mm_vals_ok(tn_tensor *r, const double *ref, const double *mag, int64_t n, tn_dtype dt) {
    if (!r) { snprintf(msg, sizeof msg, "NULL result (error: %.900s)", tn_last_error()); return false; }
    if (tn_numel(r) != n) { snprintf(msg, sizeof msg, "numel %lld, expected %lld", (long long)tn_numel(r), (long long)n); return false; }
    const double *g = dv(r);
    double rel = dt == TN_F32 ? 1e-5 : dt == TN_F64 ? 1e-13 : 0;
    for (int64_t i = 0; i < n; i++) {
        double tol = rel * mag[i] + (is_float(dt) ? rel * 1e-3 : 0);
        if (!(fabs(g[i] - ref[i]) <= tol) && !(g[i] != g[i] && ref[i] != ref[i])) {
            snprintf(msg, sizeof msg, "element %lld = %.17g, expected %.17g (tol %g)", (long long)i, g[i], ref[i], tol);
            return false;
        }
    }
    return true;
}

enum { MM_MATMUL, MM_MM, MM_BMM, MM_MV, MM_DOT };
static void run_matmul(int fn, tn_dtype dt, int la, int lb, const int64_t *as, int na, const int64_t *bs, int nb) {
    static const char *const names[] = {"matmul", "mm", "bmm", "mv", "dot"};
    tn_scope_begin();
    int gen = is_float(dt) ? G_NORMAL : G_INT;
    tn_tensor *a = make_input(as, na, dt, la, gen), *b = make_input(bs, nb, dt, lb, gen);
    tn_tensor *r = fn == MM_MATMUL ? tn_matmul(a, b) : fn == MM_MM ? tn_mm(a, b) : fn == MM_BMM ? tn_bmm(a, b) : fn == MM_MV ? tn_mv(a, b) : tn_dot(a, b);
    double *ref, *mag;
    int64_t os[TN_MAX_DIMS];
    int on = matmul_ref(dv(a), as, na, dv(b), bs, nb, &ref, &mag, os);
    int k = snprintf(label, sizeof label, "%s %s %s [", names[fn], dname(dt), layout_name[la]);
    for (int i = 0; i < na; i++) k += snprintf(label + k, sizeof label - (size_t)k, i ? ",%lld" : "%lld", (long long)as[i]);
    k += snprintf(label + k, sizeof label - (size_t)k, "] @ %s [", layout_name[lb]);
    for (int i = 0; i < nb; i++) k += snprintf(label + k, sizeof label - (size_t)k, i ? ",%lld" : "%lld", (long long)bs[i]);
    snprintf(label + k, sizeof label - (size_t)k, "]");
    CHECK_DTYPE(r, dt);
    CHECK_SHAPE_N(r, os, on);
    bool ok = mm_vals_ok(r, ref, mag, numel_of(os, on), dt);
    CHECK_MSG(ok, "%s: %s", label, msg);
    free(ref);
    free(mag);
    tn_scope_end();
}

TEST(mm_sizes_layouts) {
    tn_manual_seed(11);
    const int64_t sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {65, 33, 129}, {3, 0, 4}, {0, 5, 3}, {4, 5, 0}, {1, 17, 1},
                                {2, 1, 3}, {16, 16, 16}, {31, 64, 17}, {9, 300, 2}, {1, 40, 70}, {70, 40, 1}};
    const int pairs[][2] = {{L_CONTIG, L_CONTIG}, {L_TRANS, L_CONTIG}, {L_CONTIG, L_TRANS}, {L_TRANS, L_TRANS},
                            {L_SLICED, L_SLICED}, {L_EXPAND, L_SLICED}, {L_SLICED, L_EXPAND}};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t as[2] = {sizes[si][0], sizes[si][1]}, bs[2] = {sizes[si][1], sizes[si][2]};
        bool big = sizes[si][0] * sizes[si][1] * sizes[si][2] > 20000;
        for (int p = 0; p < 7; p++) {
            if (big && p > 4) continue;
            run_matmul(MM_MM, TN_F32, pairs[p][0], pairs[p][1], as, 2, bs, 2);
            run_matmul(MM_MATMUL, TN_F64, pairs[p][0], pairs[p][1], as, 2, bs, 2);
            if (!big && p % 2 == 0) run_matmul(MM_MM, TN_I64, pairs[p][0], pairs[p][1], as, 2, bs, 2);
            if (!big && p % 3 == 0) run_matmul(MM_MM, TN_I32, pairs[p][0], pairs[p][1], as, 2, bs, 2);
        }
    }
    check_leaks();
}

TEST(bmm_mv_dot_outer) {
    tn_manual_seed(12);
    const int pairs[][2] = {{L_CONTIG, L_CONTIG}, {L_TRANS, L_CONTIG}, {L_CONTIG, L_TRANS}, {L_SLICED, L_TRANS}, {L_EXPAND, L_SLICED}, {L_TRANS, L_EXPAND}};
    const int64_t bsz[][4] = {{3, 7, 13, 5}, {1, 1, 1, 1}, {2, 0, 3, 4}, {2, 3, 0, 4}, {0, 2, 3, 4}, {4, 17, 9, 33}};
    for (size_t si = 0; si < sizeof bsz / sizeof bsz[0]; si++) {
        int64_t as[3] = {bsz[si][0], bsz[si][1], bsz[si][2]}, bs[3] = {bsz[si][0], bsz[si][2], bsz[si][3]};
        for (int p = 0; p < 6; p++) {
            run_matmul(MM_BMM, p % 2 ? TN_F64 : TN_F32, pairs[p][0], pairs[p][1], as, 3, bs, 3);
            if (p < 3) run_matmul(MM_BMM, TN_I64, pairs[p][0], pairs[p][1], as, 3, bs, 3);
        }
    }
    const int64_t mv[][2] = {{7, 13}, {1, 1}, {65, 129}, {0, 3}, {4, 0}, {1, 40}};
    for (size_t si = 0; si < sizeof mv / sizeof mv[0]; si++) {
        int64_t as[2] = {mv[si][0], mv[si][1]}, bs[1] = {mv[si][1]};
        for (int p = 0; p < 6; p++) {
            run_matmul(MM_MV, p % 2 ? TN_F64 : TN_F32, pairs[p][0], pairs[p][1], as, 2, bs, 1);
            if (p < 2) run_matmul(MM_MV, TN_I64, pairs[p][0], pairs[p][1], as, 2, bs, 1);
        }
    }
    const int64_t dots[] = {1, 7, 129, 0, 1000};
    for (int si = 0; si < 5; si++)
        for (int p = 0; p < 6; p++) {
            run_matmul(MM_DOT, p % 2 ? TN_F64 : TN_F32, pairs[p][0], pairs[p][1], &dots[si], 1, &dots[si], 1);
            if (p < 3) run_matmul(MM_DOT, p ? TN_I64 : TN_I32, pairs[p][0], pairs[p][1], &dots[si], 1, &dots[si], 1);
        }
    /* outer: [n] x [m] = [n, 1] @ [1, m] */
    const int64_t outs[][2] = {{3, 4}, {1, 1}, {0, 3}, {5, 0}, {17, 9}};
    for (int si = 0; si < 5; si++)
        for (int p = 0; p < 6; p++) {
            tn_scope_begin();
            tn_dtype dt = p % 3 == 0 ? TN_F32 : p % 3 == 1 ? TN_F64 : TN_I64;
            int64_t n = outs[si][0], m = outs[si][1];
            tn_tensor *a = make_input(&n, 1, dt, pairs[p][0], is_float(dt) ? G_NORMAL : G_INT);
            tn_tensor *b = make_input(&m, 1, dt, pairs[p][1], is_float(dt) ? G_NORMAL : G_INT);
            tn_tensor *r = tn_outer(a, b);
            const double *av = dv(a), *bv = dv(b);
            double *ref = (double *)malloc((size_t)(n * m + 1) * sizeof(double));
            for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < m; j++) ref[i * m + j] = av[i] * bv[j];
            LABEL("outer %s [%lld] x [%lld] %s/%s", dname(dt), (long long)n, (long long)m, layout_name[pairs[p][0]], layout_name[pairs[p][1]]);
            CHECK_DTYPE(r, dt);
            CHECK_SHAPE(r, n, m);
            CHECK_VALS(r, ref, n * m, 2 * rtol_of(dt), 2 * atol_of(dt));
            free(ref);
            tn_scope_end();
        }
    tn_scope_begin();
    LABEL("dot of int64 is exact (no trip through double)");
    tn_tensor *big = tn_from_data((const int64_t[]){(INT64_C(1) << 53) + 1, 1}, TN_SHAPE(2), TN_I64);
    tn_tensor *d = tn_dot(big, tn_from_data((const int64_t[]){1, 2}, TN_SHAPE(2), TN_I64));
    CHECK(d && tn_ndim(d) == 0 && *(const int64_t *)tn_data_ptr(d) == (INT64_C(1) << 53) + 3);
    LABEL("int32 matmul wraps (torch)");
    tn_tensor *w = tn_from_data((const int32_t[]){65536, 65536}, TN_SHAPE(1, 2), TN_I32);
    tn_tensor *ww = tn_mm(w, tn_t(w));
    CHECK(ww && *(const int32_t *)tn_data_ptr(ww) == 0);
    LABEL("dot of [0] is 0; mm with K = 0 is zeros");
    CHECK_LIST(tn_dot(tn_zeros(TN_SHAPE(0), TN_F32), tn_zeros(TN_SHAPE(0), TN_F32)), 0, 0);
    CHECK_LIST(tn_mm(tn_empty(TN_SHAPE(2, 0), TN_F32), tn_empty(TN_SHAPE(0, 2), TN_F32)), 0, 0, 0, 0, 0);
    CHECK_LIST(tn_bmm(tn_empty(TN_SHAPE(1, 2, 0), TN_F64), tn_empty(TN_SHAPE(1, 0, 1), TN_F64)), 0, 0, 0);
    LABEL("NaN and inf propagate through mm");
    CHECK_LIST(tn_mm(tn_reshape(VEC(TN_F32, NAN, 1, 0, 1), TN_SHAPE(2, 2)), tn_reshape(VEC(TN_F32, 1, 0, 0, 1), TN_SHAPE(2, 2))), 0, NAN, NAN, 0, 1);
    CHECK_LIST(tn_mm(tn_reshape(VEC(TN_F64, INFINITY, 0), TN_SHAPE(1, 2)), tn_reshape(VEC(TN_F64, 1, 0), TN_SHAPE(2, 1))), 0, INFINITY);
    CHECK_LIST(tn_mm(tn_reshape(VEC(TN_F64, INFINITY, 1), TN_SHAPE(1, 2)), tn_reshape(VEC(TN_F64, 0, 1), TN_SHAPE(2, 1))), 0, NAN);
    end_scope_check_leaks();
}

TEST(matmul_forms) {
    tn_manual_seed(13);
    struct { int64_t a[4]; int na; int64_t b[4]; int nb; } forms[] = {
        {{7}, 1, {7}, 1},                    /* 1-D @ 1-D -> 0-d */
        {{4, 7}, 2, {7}, 1},                 /* 2-D @ 1-D -> [4] */
        {{7}, 1, {7, 5}, 2},                 /* 1-D @ 2-D -> [5] */
        {{4, 7}, 2, {7, 5}, 2},
        {{3, 4, 7}, 3, {7, 5}, 2},           /* batched 3-D @ 2-D */
        {{4, 7}, 2, {3, 7, 5}, 3},           /* 2-D @ 3-D */
        {{7}, 1, {3, 7, 5}, 3},              /* 1-D @ 3-D -> [3, 5] */
        {{3, 4, 7}, 3, {7}, 1},              /* 3-D @ 1-D -> [3, 4] */
        {{2, 1, 3, 4}, 4, {5, 4, 2}, 3},     /* broadcast batch dims -> [2, 5, 3, 2] */
        {{5, 4, 2}, 3, {2, 1, 2, 3}, 4},
        {{2, 3, 4, 5}, 4, {2, 3, 5, 6}, 4},
        {{1, 3, 4}, 3, {6, 4, 2}, 3},        /* batch 1 broadcasts */
        {{0, 3, 4}, 3, {4, 2}, 2},           /* empty batch */
        {{2, 3, 0}, 3, {0, 2}, 2},           /* K = 0 */
        {{1}, 1, {1}, 1},
        {{1, 1}, 2, {1, 1}, 2},
        {{3, 1, 7}, 3, {1, 7, 13}, 3},
    };
    const int pairs[][2] = {{L_CONTIG, L_CONTIG}, {L_TRANS, L_SLICED}, {L_SLICED, L_TRANS}, {L_EXPAND, L_CONTIG}, {L_CONTIG, L_EXPAND}};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
        for (int p = 0; p < 5; p++) {
            run_matmul(MM_MATMUL, p % 2 ? TN_F64 : TN_F32, pairs[p][0], pairs[p][1], forms[f].a, forms[f].na, forms[f].b, forms[f].nb);
            if (p < 2) run_matmul(MM_MATMUL, TN_I64, pairs[p][0], pairs[p][1], forms[f].a, forms[f].na, forms[f].b, forms[f].nb);
        }
    tn_scope_begin();
    LABEL("matmul errors");
    CHECK_ERR(tn_matmul(tn_zeros(TN_SHAPE(2, 3), TN_F32), tn_zeros(TN_SHAPE(4, 2), TN_F32)), "cannot be multiplied");
    CHECK_ERR(tn_matmul(tn_zeros(TN_SHAPE(3), TN_F32), tn_zeros(TN_SHAPE(4), TN_F32)), "");
    CHECK_ERR(tn_matmul(tn_zeros(TN_SHAPE(2, 2, 3), TN_F32), tn_zeros(TN_SHAPE(3, 3, 2), TN_F32)), "broadcast");
    CHECK_ERR(tn_matmul(tn_scalar_tensor(1, TN_F32), tn_zeros(TN_SHAPE(3), TN_F32)), "dimension");
    CHECK_ERR(tn_matmul(tn_zeros(TN_SHAPE(2, 3), TN_F32), tn_zeros(TN_SHAPE(3, 2), TN_F64)), "dtype");
    CHECK_ERR(tn_mm(tn_zeros(TN_SHAPE(2, 3), TN_BOOL), tn_zeros(TN_SHAPE(3, 2), TN_BOOL)), "bool");
    CHECK_ERR(tn_mm(tn_zeros(TN_SHAPE(2, 2, 3), TN_F32), tn_zeros(TN_SHAPE(3, 2), TN_F32)), "2-d");
    CHECK_ERR(tn_bmm(tn_zeros(TN_SHAPE(2, 3), TN_F32), tn_zeros(TN_SHAPE(3, 2), TN_F32)), "3-d");
    CHECK_ERR(tn_bmm(tn_zeros(TN_SHAPE(2, 2, 3), TN_F32), tn_zeros(TN_SHAPE(3, 3, 2), TN_F32)), "");
    CHECK_ERR(tn_mv(tn_zeros(TN_SHAPE(2, 3), TN_F32), tn_zeros(TN_SHAPE(2), TN_F32)), "");
    CHECK_ERR(tn_dot(tn_zeros(TN_SHAPE(3), TN_F32), tn_zeros(TN_SHAPE(2), TN_F32)), "");
    CHECK_ERR(tn_dot(tn_zeros(TN_SHAPE(3, 1), TN_F32), tn_zeros(TN_SHAPE(3), TN_F32)), "1-d");
    CHECK_ERR(tn_outer(tn_zeros(TN_SHAPE(3, 1), TN_F32), tn_zeros(TN_SHAPE(3), TN_F32)), "1-d");
    end_scope_check_leaks();
}

/* addmm / baddbmm: beta * input + alpha * (m1 @ m2) with input broadcast */
static void run_addmm(bool batched, tn_dtype dt, const int64_t *ins, int inn, int64_t B, int64_t M, int64_t K, int64_t N, double beta, double alpha, int la, int lb, bool nan_input) {
    tn_scope_begin();
    int gen = is_float(dt) ? G_NORMAL : G_INT;
    int64_t as[3] = {B, M, K}, bs[3] = {B, K, N};
    tn_tensor *a = make_input(batched ? as : as + 1, batched ? 3 : 2, dt, la, gen);
    tn_tensor *b = make_input(batched ? bs : bs + 1, batched ? 3 : 2, dt, lb, gen);
    tn_tensor *in = make_input(ins, inn, dt, L_TRANS, gen);
    if (nan_input) in = tn_full_like(in, NAN);
    tn_tensor *r = batched ? tn_baddbmm(in, a, b, .beta = beta, .alpha = alpha) : tn_addmm(in, a, b, .beta = beta, .alpha = alpha);
    double *ref, *mag;
    int64_t os[TN_MAX_DIMS];
    int on = matmul_ref(dv(a), tn_shape(a), tn_ndim(a), dv(b), tn_shape(b), tn_ndim(b), &ref, &mag, os);
    const double *iv_ = dv(in);
    int64_t n = numel_of(os, on);
    for (int64_t i = 0; i < n; i++) {
        ref[i] = alpha * ref[i] + (beta == 0 ? 0 : beta * iv_[bidx(i, os, on, ins, inn)]);
        mag[i] = fabs(alpha) * mag[i] + (beta == 0 ? 0 : fabs(beta * iv_[bidx(i, os, on, ins, inn)])) + 1;
    }
    int k = snprintf(label, sizeof label, "%s %s beta %g alpha %g input [", batched ? "baddbmm" : "addmm", dname(dt), beta, alpha);
    for (int i = 0; i < inn; i++) k += snprintf(label + k, sizeof label - (size_t)k, i ? ",%lld" : "%lld", (long long)ins[i]);
    snprintf(label + k, sizeof label - (size_t)k, "]%s, %lldx%lldx%lld %s/%s", nan_input ? " (NaN)" : "", (long long)M, (long long)K, (long long)N, layout_name[la], layout_name[lb]);
    CHECK_DTYPE(r, dt);
    CHECK_SHAPE_N(r, os, on);
    bool ok = mm_vals_ok(r, ref, mag, n, dt);
    CHECK_MSG(ok, "%s: %s", label, msg);
    free(ref);
    free(mag);
    tn_scope_end();
}

TEST(addmm_baddbmm) {
    tn_manual_seed(14);
    const double ba[][2] = {{1, 1}, {0.5, 2}, {0, 1}, {-1, 0.25}, {2, 0}, {0, 0}};
    for (int q = 0; q < 6; q++) {
        double beta = ba[q][0], alpha = ba[q][1];
        const int64_t full[2] = {7, 5}, row[1] = {5}, col[2] = {7, 1}, one[2] = {1, 1};
        run_addmm(false, TN_F32, full, 2, 1, 7, 13, 5, beta, alpha, L_CONTIG, L_CONTIG, false);
        run_addmm(false, TN_F64, row, 1, 1, 7, 13, 5, beta, alpha, L_TRANS, L_SLICED, false);
        run_addmm(false, TN_F32, col, 2, 1, 7, 13, 5, beta, alpha, L_SLICED, L_TRANS, false);
        run_addmm(false, TN_F64, one, 2, 1, 7, 13, 5, beta, alpha, L_EXPAND, L_CONTIG, false);
        run_addmm(false, TN_F32, NULL, 0, 1, 7, 13, 5, beta, alpha, L_CONTIG, L_EXPAND, false);  /* 0-d input */
        run_addmm(false, TN_F64, full, 2, 1, 7, 0, 5, beta, alpha, L_CONTIG, L_CONTIG, false);   /* K = 0 */
        const int64_t f3[3] = {3, 7, 5}, f2[2] = {7, 5}, r1[1] = {5}, b11[3] = {3, 1, 1};
        run_addmm(true, TN_F32, f3, 3, 3, 7, 13, 5, beta, alpha, L_CONTIG, L_CONTIG, false);
        run_addmm(true, TN_F64, f2, 2, 3, 7, 13, 5, beta, alpha, L_TRANS, L_SLICED, false);
        run_addmm(true, TN_F32, r1, 1, 3, 7, 13, 5, beta, alpha, L_SLICED, L_TRANS, false);
        run_addmm(true, TN_F64, b11, 3, 3, 7, 13, 5, beta, alpha, L_EXPAND, L_CONTIG, false);
        if (alpha == floor(alpha) && beta == floor(beta)) {
            run_addmm(false, TN_I64, full, 2, 1, 7, 13, 5, beta, alpha, L_TRANS, L_CONTIG, false);
            const int64_t f45[2] = {4, 5};
            run_addmm(true, TN_I64, f45, 2, 2, 4, 3, 5, beta, alpha, L_CONTIG, L_TRANS, false);
        }
    }
    /* beta = 0: the input is not read, so NaN in it does not propagate (torch) */
    const int64_t full[2] = {7, 5}, f3[3] = {3, 7, 5}, bigin[2] = {65, 129};
    run_addmm(false, TN_F32, full, 2, 1, 7, 13, 5, 0, 1, L_CONTIG, L_CONTIG, true);
    run_addmm(false, TN_F64, full, 2, 1, 7, 13, 5, 0, 0.5, L_TRANS, L_TRANS, true);
    run_addmm(true, TN_F32, f3, 3, 3, 7, 13, 5, 0, 1, L_SLICED, L_CONTIG, true);
    run_addmm(false, TN_F32, full, 2, 1, 7, 13, 5, 1, 1, L_CONTIG, L_CONTIG, true);   /* beta 1: NaN everywhere */
    run_addmm(false, TN_F32, bigin, 2, 1, 65, 33, 129, 0.5, 2, L_TRANS, L_CONTIG, false);
    tn_scope_begin();
    LABEL("addmm values (torch: addmm([[1]], [[2]], [[3]], beta=0.5, alpha=2) = 12.5)");
    CHECK_LIST(tn_addmm(tn_ones(TN_SHAPE(1, 1), TN_F32), tn_full(TN_SHAPE(1, 1), 2, TN_F32), tn_full(TN_SHAPE(1, 1), 3, TN_F32), .beta = 0.5, .alpha = 2), 0, 12.5);
    LABEL("addmm errors");
    CHECK_ERR(tn_addmm(tn_zeros(TN_SHAPE(3, 5), TN_F32), tn_zeros(TN_SHAPE(7, 2), TN_F32), tn_zeros(TN_SHAPE(2, 5), TN_F32)), "");
    CHECK_ERR(tn_addmm(tn_zeros(TN_SHAPE(7, 5), TN_F32), tn_zeros(TN_SHAPE(7, 2), TN_F32), tn_zeros(TN_SHAPE(3, 5), TN_F32)), "");
    CHECK_ERR(tn_baddbmm(tn_zeros(TN_SHAPE(7, 5), TN_F32), tn_zeros(TN_SHAPE(7, 2), TN_F32), tn_zeros(TN_SHAPE(2, 5), TN_F32)), "3-d");
    end_scope_check_leaks();
}

/* ------------------------------------------------------------------------ */
/* accumulation precision of float32 reductions and scans                   */
/* ------------------------------------------------------------------------ */
TEST(float32_accumulation) {
    tn_scope_begin();
    const int64_t n = INT64_C(1) << 20;
    const double want = 0.1f * (double)n;  /* 104857.6015625: the exact sum of float32(0.1) n times */
    tn_tensor *x = tn_full(TN_SHAPE(n), 0.1, TN_F32);
    LABEL("sum of 2^20 float32 0.1 (torch: 104857.6171875)");
    CHECK_CLOSE(item(tn_sum(x)), want, want * 1e-5);
    CHECK_CLOSE(item(tn_mean(x)), 0.1, 1e-6);
    /* reducing an outer dim: torch gives 104857.5390625 per column (error 6e-7 relative) */
    tn_tensor *y = tn_full(TN_SHAPE(n, 2), 0.1, TN_F32);
    tn_tensor *s = tn_sum_dims(y, TN_DIMS(0));
    LABEL("sum over dim 0 of a [2^20, 2] float32 tensor of 0.1 (torch: 104857.539)");
    CHECK_LIST(s, want * 1e-5, want, want);
    LABEL("mean over dim 0 of a [2^20, 2] float32 tensor of 0.1 (torch: 0.09999994)");
    CHECK_LIST(tn_mean_dims(y, TN_DIMS(0)), 1e-6, 0.1, 0.1);
    LABEL("var over dim 0 of a constant [2^20, 2] float32 tensor (torch: [0, 0])");
    CHECK_LIST(tn_var_dims(y, TN_DIMS(0)), 1e-8, 0, 0);
    LABEL("sum over dim 0 of a transposed [2, 2^20] float32 tensor");
    CHECK_LIST(tn_sum_dims(tn_t(tn_full(TN_SHAPE(2, n), 0.1, TN_F32)), TN_DIMS(0)), want * 1e-5, want, want);
    /* cumsum: torch accumulates float32 scans in double (acc_type): last = 104857.6015625 */
    LABEL("cumsum of 2^20 float32 0.1 (torch: last element 104857.6015625)");
    tn_tensor *c = tn_cumsum(x, 0);
    CHECK_CLOSE(item(tn_select(c, 0, n - 1)), want, want * 1e-5);
    CHECK_CLOSE(item(tn_select(c, 0, n / 2 - 1)), want / 2, want * 1e-5);
    LABEL("sum of 2^25 float32 ones is exact (torch: 33554432)");
    tn_tensor *ones = tn_expand(tn_ones(TN_SHAPE(1), TN_F32), TN_SHAPE(INT64_C(1) << 25));  /* no 128 MB */
    CHECK_CLOSE(item(tn_sum(ones)), 33554432.0, 0);
    CHECK_CLOSE(item(tn_mean(ones)), 1.0, 0);
    LABEL("sum over dim 0 of an expanded [2^25, 2] float32 tensor of ones (torch: 33554432)");
    CHECK_LIST(tn_sum_dims(tn_expand(tn_ones(TN_SHAPE(1, 2), TN_F32), TN_SHAPE(INT64_C(1) << 25, 2)), TN_DIMS(0)), 0, 33554432.0, 33554432.0);
    end_scope_check_leaks();
}

/* scalar operands: values outside the tensor's dtype, NaN / inf, exact integers */
TEST(scalar_edge_cases) {
    tn_scope_begin();
    tn_tensor *u8 = VEC(TN_U8, 3, 200);
    LABEL("uint8 with out-of-range int scalars wraps the scalar (torch: u8 < -1 -> [T, T]; == 259 -> [T, F]; + 256 -> [3, 200])");
    CHECK_LIST(tn_lt_scalar(u8, -1), 0, 1, 1);
    CHECK_LIST(tn_eq_scalar(u8, 259), 0, 1, 0);
    CHECK_LIST(tn_add_scalar(u8, 256), 0, 3, 200);
    CHECK_DTYPE(tn_add_scalar(u8, 256), TN_U8);
    LABEL("int tensor with inf / nan scalars gives float32");
    tn_tensor *i64 = VEC(TN_I64, 1, -2);
    CHECK_DTYPE(tn_add_scalar(i64, INFINITY), TN_F32);
    CHECK_LIST(tn_add_scalar(i64, INFINITY), 0, INFINITY, INFINITY);
    CHECK_LIST(tn_mul_scalar(i64, NAN), 0, NAN, NAN);
    LABEL("division by a zero scalar");
    CHECK_LIST(tn_div_scalar(i64, 0), 0, INFINITY, -INFINITY);
    CHECK_LIST(tn_remainder_scalar(VEC(TN_F32, 1), 0), 0, NAN);
    CHECK_LIST(tn_floor_divide_scalar(VEC(TN_F32, 1, -1), 0), 0, INFINITY, -INFINITY);
    LABEL("int64 comparisons with integral scalars are exact (torch: tensor([2**53+1]) == 2**53 is False)");
    tn_tensor *big = tn_from_data((const int64_t[]){(INT64_C(1) << 53) + 1}, TN_SHAPE(1), TN_I64);
    CHECK_LIST(tn_eq_scalar(big, 9007199254740992.0), 0, 0);
    CHECK_LIST(tn_gt_scalar(big, 9007199254740992.0), 0, 1);
    LABEL("float32 tensor compared with a double scalar in float32 (torch: tensor([0.1]) == 0.1 is True)");
    CHECK_LIST(tn_eq_scalar(VEC(TN_F32, 0.1, 1.5), 0.1), 0, 1, 0);
    CHECK_LIST(tn_lt_scalar(VEC(TN_F32, 0.1), 0.1), 0, 0);
    CHECK_LIST(tn_gt_scalar(VEC(TN_F32, 0.1), 0.1), 0, 0);
    LABEL("float64 keeps the scalar exact");
    CHECK_LIST(tn_eq_scalar(VEC(TN_F64, 0.1), 0.1), 0, 1);
    CHECK_LIST(tn_add_scalar(VEC(TN_F64, 0.1), 0.2), 0, 0.1 + 0.2);
    LABEL("wrapped numbers do not change a float32 tensor's precision");
    tn_tensor *f = tn_add_scalar(VEC(TN_F32, 1), 1e-10);
    CHECK_DTYPE(f, TN_F32);
    CHECK_LIST(f, 0, 1);
    end_scope_check_leaks();
}

/* 0-sized dims, 0-d tensors, single elements, negative dims */
TEST(edge_shapes) {
    tn_scope_begin();
    tn_tensor *e = tn_zeros(TN_SHAPE(2, 0, 3), TN_F32), *z = tn_scalar_tensor(2, TN_F32);
    LABEL("elementwise on [2,0,3]");
    CHECK_SHAPE(tn_exp(e), 2, 0, 3);
    CHECK_SHAPE(tn_add(e, z), 2, 0, 3);
    CHECK_SHAPE(tn_add(e, tn_zeros(TN_SHAPE(1, 3), TN_F64)), 2, 0, 3);
    CHECK_DTYPE(tn_add(e, tn_zeros(TN_SHAPE(1, 3), TN_F64)), TN_F64);
    CHECK_SHAPE(tn_lt(e, z), 2, 0, 3);
    CHECK_SHAPE(tn_where(tn_lt(e, z), e, z), 2, 0, 3);
    CHECK_SHAPE(tn_clamp(e, .min = 0, .max = 1), 2, 0, 3);
    CHECK(tn_add_(e, z) != NULL);
    CHECK(tn_fill_(e, 3) != NULL);
    CHECK_SHAPE(tn_add(tn_zeros(TN_SHAPE(0), TN_I64), tn_zeros(TN_SHAPE(1), TN_I64)), 0);
    LABEL("reductions on [2,0,3]");
    CHECK_SHAPE(tn_sum_dims(e, TN_DIMS(1)), 2, 3);
    CHECK_LIST(tn_sum_dims(e, TN_DIMS(1)), 0, 0, 0, 0, 0, 0, 0);
    CHECK_SHAPE(tn_sum_dims(e, TN_DIMS(-1), .keepdim = true), 2, 0, 1);
    CHECK_SHAPE(tn_amax(e, TN_DIMS(0, 2)), 0);
    CHECK_SHAPE(tn_cumsum(e, 1), 2, 0, 3);
    CHECK_SHAPE(tn_softmax(e, -1), 2, 0, 3);
    CHECK_SHAPE(tn_sort(e, NULL, .dim = 1), 2, 0, 3);
    CHECK_SHAPE(tn_all_dim(e, 1), 2, 3);
    CHECK_LIST(tn_all_dim(e, 1), 0, 1, 1, 1, 1, 1, 1);
    CHECK_LIST(tn_any_dim(e, 1), 0, 0, 0, 0, 0, 0, 0);
    CHECK_SHAPE(tn_max_dim(e, 0, NULL), 0, 3);
    CHECK_SHAPE(tn_argmax_dim(e, .dim = 2, .keepdim = true), 2, 0, 1);
    CHECK_SHAPE(tn_matmul(e, tn_zeros(TN_SHAPE(3, 4), TN_F32)), 2, 0, 4);
    CHECK_SHAPE(tn_matmul(tn_zeros(TN_SHAPE(2, 3, 0), TN_F32), tn_zeros(TN_SHAPE(0, 4), TN_F32)), 2, 3, 4);
    LABEL("0-d tensors stay 0-d");
    CHECK_SHAPE_N(tn_exp(z), NULL, 0);
    CHECK_SHAPE_N(tn_add(z, z), NULL, 0);
    CHECK_SHAPE_N(tn_sum(z), NULL, 0);
    CHECK_SHAPE_N(tn_cumsum(z, -1), NULL, 0);
    CHECK_SHAPE_N(tn_softmax(z, 0), NULL, 0);
    CHECK_SHAPE_N(tn_sort(z, NULL, .dim = 0, .descending = true), NULL, 0);
    CHECK_SHAPE_N(tn_topk(z, 1, NULL, .dim = 0), NULL, 0);
    CHECK_SHAPE_N(tn_argmax(z), NULL, 0);
    CHECK_SHAPE_N(tn_where(tn_scalar_tensor(1, TN_BOOL), z, z), NULL, 0);
    CHECK_SHAPE(tn_add(z, tn_zeros(TN_SHAPE(1), TN_F32)), 1);
    CHECK_LIST(tn_lerp_scalar(z, tn_scalar_tensor(4, TN_F32), 0.5), 0, 3);
    CHECK_ERR(tn_cumsum(z, 1), "out of range");
    CHECK_ERR(tn_softmax(z, -2), "out of range");
    LABEL("single-element tensors of any rank");
    tn_tensor *one = tn_full(TN_SHAPE(1, 1, 1), 5, TN_F64);
    CHECK_LIST(tn_softmax(one, 1), 0, 1);
    CHECK_LIST(tn_var(one, .correction = 0), 0, 0);
    CHECK_LIST(tn_var(one), 0, NAN);
    CHECK_LIST(tn_std_dims(one, TN_DIMS(-1), .correction = 0), 0, 0);
    CHECK_LIST(tn_norm(one, .p = 3), 1e-12, 5);
    CHECK_LIST(tn_logsumexp(one, TN_DIMS(0, 1, 2)), 0, 5);
    CHECK_SHAPE(tn_matmul(one, one), 1, 1, 1);
    CHECK_LIST(tn_matmul(one, one), 0, 25);
    LABEL("negative dims everywhere");
    tn_tensor *m = tn_reshape(tn_arange(0, 6, 1, TN_F64), TN_SHAPE(2, 3));
    CHECK_LIST(tn_sum_dims(m, TN_DIMS(-1)), 0, 3, 12);
    CHECK_LIST(tn_sum_dims(m, TN_DIMS(-2)), 0, 3, 5, 7);
    CHECK_LIST(tn_cumsum(m, -1), 0, 0, 1, 3, 3, 7, 12);
    CHECK_LIST(tn_cumprod(m, -2), 0, 0, 1, 2, 0, 4, 10);
    CHECK_LIST(tn_argmax_dim(m, .dim = -2), 0, 1, 1, 1);
    CHECK_LIST(tn_amin(m, TN_DIMS(-1, -2)), 0, 0);
    CHECK_LIST(tn_all_dim(m, -1), 0, 0, 1);
    CHECK_LIST(tn_any_dim(m, -2), 0, 1, 1, 1);
    CHECK_LIST(tn_sort(m, NULL, .dim = -2, .descending = true), 0, 3, 4, 5, 0, 1, 2);
    CHECK_LIST(tn_topk(m, 2, NULL), 0, 2, 1, 5, 4);
    end_scope_check_leaks();
}

/* larger GEMMs: packing edges, misaligned (offset) rows, big K, long thin shapes */
static tn_tensor *offset_matrix(int64_t r, int64_t c, tn_dtype dt, int kind) {
    /* kind 0: rows of a [r, c+3] base starting at column 1 (unit stride, odd offset);
       kind 1: the transpose of such a [c, r] matrix (column-major, odd offset) */
    if (kind == 0) return tn_narrow(tn_to_dtype(gen_base(TN_SHAPE(r, c + 3), G_NORMAL), dt), 1, 1, c);
    return tn_t(tn_narrow(tn_to_dtype(gen_base(TN_SHAPE(c, r + 3), G_NORMAL), dt), 1, 1, r));
}

TEST(gemm_large_and_misaligned) {
    tn_manual_seed(15);
    const int64_t sizes[][3] = {{257, 129, 67}, {128, 128, 128}, {1, 1000, 1}, {3, 1000, 5}, {100, 1, 100}, {33, 17, 250}, {250, 3, 33}};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int k = 0; k < 4; k++) {
            tn_scope_begin();
            tn_dtype dt = k % 2 ? TN_F64 : TN_F32;
            int64_t M = sizes[si][0], K = sizes[si][1], N = sizes[si][2];
            tn_tensor *a = offset_matrix(M, K, dt, k / 2), *b = offset_matrix(K, N, dt, 1 - k / 2);
            tn_tensor *r = tn_mm(a, b);
            double *ref, *mag;
            int64_t os[2];
            int on = matmul_ref(dv(a), tn_shape(a), 2, dv(b), tn_shape(b), 2, &ref, &mag, os);
            LABEL("mm %s %lldx%lldx%lld with offset operands (kind %d)", dname(dt), (long long)M, (long long)K, (long long)N, k / 2);
            CHECK_SHAPE_N(r, os, on);
            bool ok = mm_vals_ok(r, ref, mag, M * N, dt);
            CHECK_MSG(ok, "%s: %s", label, msg);
            /* the same product through addmm with beta 1 into an offset input, and through a batch */
            tn_tensor *in = offset_matrix(M, N, dt, 0);
            const double *inv = dv(in);
            for (int64_t i = 0; i < M * N; i++) { ref[i] = 2 * ref[i] - inv[i]; mag[i] = 2 * mag[i] + fabs(inv[i]); }
            LABEL("addmm %s %lldx%lldx%lld beta -1 alpha 2 offset operands", dname(dt), (long long)M, (long long)K, (long long)N);
            ok = mm_vals_ok(tn_addmm(in, a, b, .beta = -1, .alpha = 2), ref, mag, M * N, dt);
            CHECK_MSG(ok, "%s: %s", label, msg);
            free(ref);
            free(mag);
            tn_scope_end();
        }
    /* bmm with a stride-0 batch operand and a transposed batch */
    for (int k = 0; k < 2; k++) {
        tn_scope_begin();
        tn_dtype dt = k ? TN_F64 : TN_F32;
        tn_tensor *a = tn_expand(tn_to_dtype(gen_base(TN_SHAPE(1, 37, 45), G_NORMAL), dt), TN_SHAPE(6, 37, 45));
        tn_tensor *b = tn_permute(tn_to_dtype(gen_base(TN_SHAPE(29, 45, 6), G_NORMAL), dt), TN_DIMS(2, 1, 0));
        double *ref, *mag;
        int64_t os[3];
        int on = matmul_ref(dv(a), tn_shape(a), 3, dv(b), tn_shape(b), 3, &ref, &mag, os);
        tn_tensor *r = tn_bmm(a, b);
        LABEL("bmm %s expanded batch @ permuted [6,45,29]", dname(dt));
        CHECK_SHAPE_N(r, os, on);
        bool ok = mm_vals_ok(r, ref, mag, 6 * 37 * 29, dt);
        CHECK_MSG(ok, "%s: %s", label, msg);
        free(ref);
        free(mag);
        tn_scope_end();
    }
    check_leaks();
}

/* multi-output functions and in-place returns at top level (no scope): the caller owns
   every returned tensor, *indices included */
TEST(ownership_top_level) {
    int64_t live0 = tn_memory_stats_get().live_tensors;
    CHECK(tn_scope_depth() == 0);
    tn_tensor *x = tn_randn(TN_SHAPE(3, 4), TN_F32);
    tn_tensor *idx = NULL, *v = tn_max_dim(x, 1, &idx);
    CHECK(v && idx && tn_get_dtype(idx) == TN_I64);
    tn_release(v);
    tn_release(idx);
    v = tn_min_dim(x, 0, NULL, .keepdim = true);
    tn_release(v);
    v = tn_sort(x, &idx, .descending = true);
    CHECK(v && idx);
    tn_release(v);
    tn_release(idx);
    v = tn_sort(x, NULL, .dim = 0);
    tn_release(v);
    v = tn_argsort(x, .dim = 1);
    tn_release(v);
    v = tn_topk(x, 2, &idx, .dim = 1);
    CHECK(v && idx && tn_shape(idx)[1] == 2);
    tn_release(v);
    tn_release(idx);
    v = tn_topk(x, 2, NULL, .dim = 1, .largest = false);
    tn_release(v);
    v = tn_argmax(x);
    tn_release(v);
    v = tn_argmin_dim(x, .dim = 0);
    tn_release(v);
    v = tn_var_dims(x, TN_DIMS(0));
    tn_release(v);
    v = tn_std(x);
    tn_release(v);
    v = tn_norm(x, .p = 3);
    tn_release(v);
    v = tn_logsumexp(x, TN_DIMS(1), .keepdim = true);
    tn_release(v);
    tn_tensor *z1 = tn_zeros(TN_SHAPE(1), TN_F32), *xt = tn_t(x), *r0 = tn_select(x, 0, 0), *r1 = tn_select(x, 1, 1);
    v = tn_clamp_tensor(x, z1, NULL);
    CHECK(v != NULL);
    tn_release(v);
    v = tn_matmul(x, xt);
    tn_release(v);
    v = tn_outer(r0, r1);
    tn_release(v);
    /* in-place ops return their first argument, borrowed: nothing to release, nothing leaks */
    const int64_t live = tn_memory_stats_get().live_tensors;
    CHECK(tn_add_(x, x) == x);
    CHECK(tn_relu_(x) == x);
    CHECK(tn_fill_(x, 1) == x);
    CHECK(tn_clamp_(x, .min = 0, .max = 0.5) == x);
    CHECK(tn_lerp_(x, x, 0.5) == x);
    CHECK(tn_add_scalar_(x, 1) == x && tn_mul_(x, x) == x && tn_addcmul_(x, x, x) == x && tn_zero_(x) == x);
    CHECK(tn_memory_stats_get().live_tensors == live);
    /* failed calls leave nothing behind */
    CHECK(tn_topk(x, 9, &idx, .dim = 1) == NULL);
    CHECK(tn_max_dim(x, 5, &idx) == NULL);
    tn_tensor *z22 = tn_zeros(TN_SHAPE(2, 2), TN_F32);
    CHECK(tn_add_(x, z22) == NULL);
    tn_release(z22);
    tn_release(z1);
    tn_release(xt);
    tn_release(r0);
    tn_release(r1);
    tn_release(x);
    int64_t leaked = tn_memory_stats_get().live_tensors - live0;
    CHECK_MSG(leaked == 0, "top level: %lld tensors leaked", (long long)leaked);
}

TEST(misc_semantics) {
    tn_scope_begin();
    LABEL("uint8 neg wraps (torch: -tensor([3], uint8) = [253])");
    CHECK_LIST(tn_neg(VEC(TN_U8, 3, 0)), 0, 253, 0);
    LABEL("prod of bool is int64");
    CHECK_DTYPE(tn_prod(VEC(TN_BOOL, 1, 1)), TN_I64);
    CHECK_LIST(tn_prod(VEC(TN_BOOL, 1, 0)), 0, 0);
    LABEL("in-place add_ of a broadcast row of the same tensor (reads the old row)");
    tn_tensor *x = tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(2, 3));
    tn_add_(x, tn_select(x, 0, 1));  /* + [3, 4, 5] */
    CHECK_LIST(x, 0, 3, 5, 7, 6, 8, 10);
    LABEL("0-d in-place target with a [1] operand is a shape error");
    CHECK_ERR(tn_add_(tn_scalar_tensor(1, TN_F32), VEC(TN_F32, 1)), "doesn't match");
    LABEL("sort of int64 extremes");
    tn_tensor *ex = tn_from_data((const int64_t[]){INT64_MAX, 0, INT64_MIN, -1}, TN_SHAPE(4), TN_I64);
    tn_tensor *sv = tn_sort(ex, NULL, .dim = 0);
    CHECK(sv && ((const int64_t *)tn_data_ptr(sv))[0] == INT64_MIN && ((const int64_t *)tn_data_ptr(sv))[3] == INT64_MAX);
    tn_tensor *am = tn_amax(ex, NULL, 0);
    CHECK(am && *(const int64_t *)tn_data_ptr(am) == INT64_MAX);
    tn_tensor *ai = tn_argmin(ex);
    CHECK(ai && *(const int64_t *)tn_data_ptr(ai) == 2);
    LABEL("tn_allclose / tn_equal");
    CHECK(tn_allclose(VEC(TN_F32, 1, 2), VEC(TN_F64, 1 + 1e-9, 2)));
    CHECK(!tn_allclose(VEC(TN_F32, 1, NAN), VEC(TN_F32, 1, NAN)));
    CHECK(tn_allclose(VEC(TN_F32, 1, NAN), VEC(TN_F32, 1, NAN), .equal_nan = true));
    CHECK(tn_allclose(VEC(TN_F32, INFINITY), VEC(TN_F32, INFINITY)));
    /* torch.allclose(tensor([inf]), tensor([-inf])) and allclose(tensor([1.]), tensor([inf])) are False */
    CHECK(!tn_allclose(VEC(TN_F32, INFINITY), VEC(TN_F32, -INFINITY)));
    CHECK(!tn_allclose(VEC(TN_F32, 1), VEC(TN_F32, INFINITY)));
    CHECK(!tn_allclose(VEC(TN_F32, INFINITY), VEC(TN_F32, 1)));
    CHECK(!tn_allclose(VEC(TN_F32, -INFINITY), VEC(TN_F32, INFINITY)));
    CHECK(tn_equal(VEC(TN_I64, 1, 2), VEC(TN_F32, 1, 2)));
    CHECK(!tn_equal(VEC(TN_I64, 1, 2), VEC(TN_I64, 1, 2, 3)));
    CHECK(!tn_equal(VEC(TN_F32, NAN), VEC(TN_F32, NAN)));
    LABEL("broadcast_shapes");
    int64_t out[TN_MAX_DIMS];
    int nd = tn_broadcast_shapes(TN_SHAPE(3, 1, 4), TN_SHAPE(2, 1), out);
    CHECK(nd == 3 && out[0] == 3 && out[1] == 2 && out[2] == 4);
    nd = tn_broadcast_shapes(TN_SHAPE(0, 1), TN_SHAPE(3), out);
    CHECK(nd == 2 && out[0] == 0 && out[1] == 3);
    CHECK(tn_broadcast_shapes(TN_SHAPE(2), TN_SHAPE(3), out) == -1);
    end_scope_check_leaks();
}

/* high-rank shapes (up to TN_MAX_DIMS) stress the iterator's dim coalescing */
TEST(high_rank) {
    tn_manual_seed(16);
    const int64_t s5[5] = {2, 3, 1, 4, 5}, s8[8] = {2, 1, 2, 3, 1, 2, 2, 3}, s6[6] = {3, 1, 2, 1, 4, 1}, b3[3] = {4, 1, 1}, b213[3] = {2, 1, 3};
    for (int l = 0; l < L_NUM; l++) {
        run_unary(&unary_ops[3], TN_F32, l, s5, 5);   /* exp */
        run_unary(&unary_ops[0], TN_F64, l, s8, 8);   /* neg */
        run_unary(&unary_ops[24], TN_I64, l, s6, 6);  /* relu */
        run_binary(&binary_ops[0], TN_F32, l, (l + 1) % L_NUM, s5, 5, s5, 5);
        run_binary(&binary_ops[4], TN_F64, l, (l + 2) % L_NUM, s8, 8, s8, 8);
        run_binary(&binary_ops[6], TN_I64, l, (l + 3) % L_NUM, s6, 6, b3, 3);   /* floor_divide, broadcast */
        run_binary(&binary_ops[15], TN_F32, (l + 1) % L_NUM, l, b213, 3, s8, 8);  /* lt, broadcast */
        const int64_t d12[2] = {1, 2}, d03[2] = {0, 3}, dm1[2] = {-1, 1}, d0257[4] = {0, 2, 5, 7}, d3[1] = {3};
        run_reduce(R_SUM, TN_F32, l, G_NORMAL, s5, 5, d12, 2, l % 2);
        run_reduce(R_AMAX, TN_F64, l, G_NORMAL, s5, 5, d03, 2, l % 2 == 0);
        run_reduce(R_VAR1, TN_F64, l, G_NORMAL, s5, 5, dm1, 2, false);
        run_reduce(R_SUM, TN_I32, l, G_INT, s8, 8, d0257, 4, l % 2);
        run_reduce(R_MEAN, TN_F32, l, G_NORMAL, s8, 8, NULL, 0, l % 2);
        run_reduce(R_PROD, TN_F64, l, G_NORMAL, s6, 6, d3, 1, true);
        run_scan(S_CUMSUM, TN_F64, l, G_NORMAL, s8, 8, 3);
        run_scan(S_SOFTMAX, TN_F32, l, G_NORMAL, s5, 5, -2);
        run_argext(true, TN_F32, l, G_INT, s8, 8, 7, l % 2);
        run_sort(0, TN_F64, l, G_INT, s5, 5, 3, l % 2, 0);
        run_ternary(0, TN_F32, l, (l + 1) % L_NUM, (l + 2) % L_NUM, s5, 5, s5, 5, s5, 5);
    }
    const int64_t m5a[5] = {2, 1, 3, 4, 6}, m5b[4] = {5, 1, 6, 2};
    run_matmul(MM_MATMUL, TN_F32, L_TRANS, L_SLICED, m5a, 5, m5b, 4);
    run_matmul(MM_MATMUL, TN_F64, L_EXPAND, L_CONTIG, m5a, 5, m5b, 4);
    check_leaks();
}

/* transposed / sliced operands are used in place: the only new storage is the result */
TEST(matmul_no_operand_copies) {
    tn_manual_seed(17);
    tn_scope_begin();
    tn_tensor *a = tn_randn(TN_SHAPE(96, 64), TN_F32), *b = tn_randn(TN_SHAPE(80, 96), TN_F32);
    tn_tensor *at = tn_t(a), *bt = tn_t(b);                               /* [64, 96] @ [96, 80] */
    tn_tensor *as = tn_slice(tn_randn(TN_SHAPE(64, 192), TN_F32), 1, 0, TN_END, 2);  /* [64, 96], column stride 2 */
    const struct { const char *name; tn_tensor *x, *y; } cases[] = {{"t(a) @ t(b)", at, bt}, {"sliced @ t(b)", as, bt}};
    for (int i = 0; i < 2; i++) {
        tn_memory_stats before = tn_memory_stats_get();
        tn_memory_stats_reset_peak();
        tn_tensor *r = tn_mm(cases[i].x, cases[i].y);
        tn_memory_stats after = tn_memory_stats_get();
        int64_t extra = after.peak_bytes - before.live_bytes, out = 64 * 80 * 4;
        CHECK_MSG(r && extra <= out, "mm %s: peak grew by %lld bytes, result is %lld", cases[i].name, (long long)extra, (long long)out);
        tn_memory_stats_reset_peak();
        before = tn_memory_stats_get();
        r = tn_matmul(cases[i].x, cases[i].y);
        after = tn_memory_stats_get();
        extra = after.peak_bytes - before.live_bytes;
        CHECK_MSG(r && extra <= out, "matmul %s: peak grew by %lld bytes, result is %lld", cases[i].name, (long long)extra, (long long)out);
    }
    tn_tensor *v = tn_select(tn_randn(TN_SHAPE(96, 3), TN_F32), 1, 1);   /* stride 3 */
    tn_memory_stats_reset_peak();
    tn_memory_stats before = tn_memory_stats_get();
    tn_tensor *r = tn_mv(at, v);
    int64_t extra = tn_memory_stats_get().peak_bytes - before.live_bytes;
    CHECK_MSG(r && extra <= 64 * 4, "mv t(a) @ strided v: peak grew by %lld bytes", (long long)extra);
    tn_memory_stats_reset_peak();
    before = tn_memory_stats_get();
    r = tn_dot(v, tn_select(at, 0, 3));
    extra = tn_memory_stats_get().peak_bytes - before.live_bytes;
    CHECK_MSG(r && extra <= 4, "dot of strided vectors: peak grew by %lld bytes", (long long)extra);
    end_scope_check_leaks();
}

/* larger shapes: long inner and outer reductions on every layout */
TEST(reductions_larger) {
    tn_manual_seed(18);
    const int64_t shapes[][3] = {{37, 29, 3}, {300, 7, 2}, {2, 5, 257}, {1, 1000, 1}};
    const int64_t dimsets[5][2] = {{0}, {1}, {2}, {0, 2}, {0, 1}};
    const int ndims[5] = {1, 1, 1, 2, 2};
    const int ops[] = {R_SUM, R_MEAN, R_PROD, R_AMAX, R_VAR1, R_NORM2, R_LSE, R_NORMINF};
    for (int si = 0; si < 4; si++)
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
            for (int ds = 0; ds < 5; ds++) {
                int l = (int)((si + oi + (size_t)ds) % L_NUM);
                int gen = ops[oi] == R_PROD ? G_UNIT : ops[oi] == R_LSE ? G_WIDE : G_NORMAL;
                run_reduce(ops[oi], (ds % 2) ? TN_F64 : TN_F32, l, gen, shapes[si], 3, dimsets[ds], ndims[ds], ds == 3);
            }
    for (int si = 0; si < 4; si++)
        for (int l = 0; l < L_NUM; l++) {
            run_reduce(R_SUM, TN_I32, l, G_INT, shapes[si], 3, dimsets[l], ndims[l], false);
            run_scan(S_CUMSUM, TN_F32, l, G_NORMAL, shapes[si], 3, l % 3);
            run_scan(S_LOGSOFTMAX, TN_F32, l, G_WIDE, shapes[si], 3, (l + 1) % 3);
            run_argext(l % 2, TN_F32, l, G_NORMAL, shapes[si], 3, (l + 2) % 3, true);
        }
    check_leaks();
}

/* The float32 row sum's AVX-512 loop (where the CPU has it) against the portable one, bit
   for bit: lengths 0 ... 100 and 1000 (the 32-element blocks and the masked tail), values
   of mixed magnitudes, infinities and NaN; and the sum against a float64 reference. */
TEST(sum_rows_agree) {
    tn_manual_seed(21);
    float x[1000];
    for (int i = 0; i < 1000; i++) x[i] = (float)((i % 7 - 3) * pow(10.0, i % 9 - 4) + (i % 5) * 0.1);
    for (int64_t n = 0; n <= 1000; n += n < 100 ? 1 : 900) {
        double ref = 0;
        for (int64_t i = 0; i < n; i++) ref += x[i];
        const double a = tn__sum_row_f32(x, n);
        tn__sum_row_avx512 = 1;
        const double b = tn__sum_row(x, n);
        CHECK_MSG(memcmp(&a, &b, sizeof a) == 0, "row sum of %lld: portable %.17g, AVX-512 %.17g", (long long)n, a, b);
        CHECK_MSG(fabs(a - ref) <= 1e-12 * (1 + fabs(ref)), "row sum of %lld: %.17g, float64 reference %.17g", (long long)n, a, ref);
    }
    float s[40];
    for (int i = 0; i < 40; i++) s[i] = (float)i;
    s[33] = INFINITY;
    CHECK_MSG(tn__sum_row(s, 40) == INFINITY && tn__sum_row_f32(s, 40) == INFINITY, "row sum with an infinity");
    s[5] = -INFINITY;
    CHECK_MSG(isnan(tn__sum_row(s, 40)) && isnan(tn__sum_row_f32(s, 40)), "row sum with both infinities");
    s[5] = NAN; s[33] = 1;
    CHECK_MSG(isnan(tn__sum_row(s, 39)) && isnan(tn__sum_row_f32(s, 39)), "row sum with a NaN");
    check_leaks();
}

/* float32 pow outside the special exponents: SLEEF's powf_u10 (src/ops/sleef.c). The
   plain loop and the AVX2+FMA one give the same bits over 2^16 patterns of base and
   exponent (NaNs, infinities, subnormals included); exact where the power is (small
   integers to integer powers, 1 and 0 exponents); within 1 ulp of the float64 pow; its
   IEEE cases (pow(-8, 1/3) NaN, pow(-2, 3) -8, pow(0, -1) inf, pow(1, NaN) 1). */
TEST(pow_sleef_loops_agree) {
    tn_scope_begin();
    const int64_t n = 1 << 16;
    tn_tensor *x = tn_empty(TN_SHAPE(n), TN_F32), *y = tn_empty(TN_SHAPE(n), TN_F32);
    uint32_t *px = (uint32_t *)tn_data_ptr(x), *py = (uint32_t *)tn_data_ptr(y), st = 12345;
    for (int64_t i = 0; i < n; i++) {
        st = st * 1664525u + 1013904223u; px[i] = st;
        st = st * 1664525u + 1013904223u; py[i] = i % 3 ? (st & 0x807fffffu) | 0x40000000u : st;   /* exponents in (-4, 4) mostly */
    }
    tn__sleef_avx2 = 0;
    tn_tensor *a = tn_pow(x, y), *a4 = tn_pow_scalar(x, 4.0);
    tn__sleef_avx2 = 1;
    tn_tensor *b = tn_pow(x, y), *b4 = tn_pow_scalar(x, 4.0);
    CHECK_MSG(a && b && memcmp(tn_data_ptr(a), tn_data_ptr(b), (size_t)n * 4) == 0, "pow: the plain and FMA loops differ");
    CHECK_MSG(a4 && b4 && memcmp(tn_data_ptr(a4), tn_data_ptr(b4), (size_t)n * 4) == 0, "pow 4: the plain and FMA loops differ");
    int64_t far = 0;
    for (int64_t i = 0; i < n; i++) {
        const float xv = ((const float *)tn_data_ptr(x))[i], yv = ((const float *)tn_data_ptr(y))[i], r = ((const float *)tn_data_ptr(a))[i];
        const double ref = pow((double)xv, (double)yv);
        if (isnan(ref) != isnan(r) || (!isnan(ref) && fabs(ref) < 1e38 && fabs(ref) > 1e-37 && fabs((double)r - ref) > ldexp(fabs(ref), -23))) far++;
    }
    CHECK_MSG(far == 0, "pow: %lld of %lld values more than 1 ulp from the float64 pow", (long long)far, (long long)n);
    for (int k = -20; k <= 20; k++)
        for (int e = 0; e <= 5; e++) CHECK_MSG(tn__sleef_powf_test((float)k, (float)e) == (float)pow(k, e), "pow(%d, %d)", k, e);
    CHECK(isnan(tn__sleef_powf_test(-8.0f, 1.0f / 3)) && tn__sleef_powf_test(-2.0f, 3.0f) == -8.0f);
    CHECK(tn__sleef_powf_test(0.0f, -1.0f) == INFINITY && tn__sleef_powf_test(-0.0f, -1.0f) == -INFINITY);
    CHECK(tn__sleef_powf_test(1.0f, NAN) == 1.0f && tn__sleef_powf_test(NAN, 0.0f) == 1.0f && isnan(tn__sleef_powf_test(NAN, 2.5f)));
    CHECK(tn__sleef_powf_test(0.5f, INFINITY) == 0.0f && tn__sleef_powf_test(2.0f, -INFINITY) == 0.0f && tn__sleef_powf_test(-1.0f, INFINITY) == 1.0f);
    tn_scope_end();
    check_leaks();
}

/* float32 sin and cos: SLEEF's sinf8_u10 / cosf8_u10 (src/ops/sleef.c). The scalar lanes and
   the AVX2 intrinsics give the same bits over 2^16 patterns (NaNs, infinities, subnormals,
   huge and tiny), over groups that mix magnitudes (a lane of 125 or more sends its group of
   8 through Payne-Hanek), tails of 1 to 15, strided and 0-d inputs; both reductions stay
   within 1 ulp of the float64 sin; sin(-0) is -0; NaN and infinities give SLEEF's NaN. */
static float bits_f32(uint32_t w) { float f; memcpy(&f, &w, 4); return f; }
static uint32_t f32_bits(float f) { uint32_t w; memcpy(&w, &f, 4); return w; }
static int64_t sleef_trig_mismatches(tn_tensor *x) {
    int64_t bad = 0;
    for (int c = 0; c < 2; c++) {
        tn__sleef_avx2 = 0;
        tn_tensor *a = tn_contiguous(c ? tn_cos(x) : tn_sin(x));
        tn__sleef_avx2 = 1;
        tn_tensor *b = tn_contiguous(c ? tn_cos(x) : tn_sin(x));
        if (!a || !b) return -1;
        for (int64_t i = 0; i < tn_numel(a); i++) bad += memcmp((const float *)tn_data_ptr(a) + i, (const float *)tn_data_ptr(b) + i, 4) != 0;
    }
    return bad;
}
TEST(sin_cos_sleef_loops_agree) {
    tn_scope_begin();
    const int64_t n = 1 << 16;
    tn_tensor *x = tn_empty(TN_SHAPE(n), TN_F32), *m = tn_empty(TN_SHAPE(n), TN_F32);
    uint32_t *px = (uint32_t *)tn_data_ptr(x), st = 777;
    float *pm = (float *)tn_data_ptr(m);
    for (int64_t i = 0; i < n; i++) {
        st = st * 1664525u + 1013904223u;
        px[i] = st;
        pm[i] = (float)((int32_t)st) * 1e-9f;            /* in (-2.2, 2.2) */
        if (st % 29 == 0) pm[i] = st % 2 ? 1e5f : INFINITY;   /* a big lane in some groups */
    }
    CHECK_MSG(sleef_trig_mismatches(x) == 0, "sin/cos: the scalar and AVX2 loops differ on bit patterns");
    CHECK_MSG(sleef_trig_mismatches(m) == 0, "sin/cos: the scalar and AVX2 loops differ on mixed groups");
    for (int64_t k = 1; k < 16; k++) CHECK_MSG(sleef_trig_mismatches(tn_narrow(m, 0, 3, k)) == 0, "sin/cos: tail of %lld", (long long)k);
    CHECK(sleef_trig_mismatches(tn_slice(tn_reshape(m, TN_SHAPE(256, 256)), 1, 0, 256, 3)) == 0);
    CHECK(sleef_trig_mismatches(tn_t(tn_reshape(x, TN_SHAPE(256, 256)))) == 0);
    CHECK(sleef_trig_mismatches(tn_scalar_tensor(-0.0, TN_F32)) == 0);
    int64_t far = 0;
    for (int64_t i = 0; i < n; i++) {
        const float v = bits_f32(px[i]);
        if (!isfinite(v) || fabsf(v) > 1e30f) continue;
        for (int big = fabsf(v) < 125.0f ? 0 : 1; big < 2; big++) {   /* Cody-Waite only under 125 */
            const double rs = sin((double)v), rc = cos((double)v);
            const float s = tn__sleef_sinf_test(v, big), c = tn__sleef_cosf_test(v, big);
            far += fabs((double)s - rs) > ldexp(fmax(fabs(rs), 1e-38), -23) + 1e-45;
            far += fabs((double)c - rc) > ldexp(fmax(fabs(rc), 1e-38), -23) + 1e-45;
        }
    }
    CHECK_MSG(far == 0, "sin/cos: %lld values more than 1 ulp from float64", (long long)far);
    CHECK(f32_bits(tn__sleef_sinf_test(-0.0f, false)) == 0x80000000u && tn__sleef_cosf_test(0.0f, false) == 1.0f);
    CHECK(f32_bits(tn__sleef_sinf_test(NAN, true)) == 0xffffffffu && f32_bits(tn__sleef_cosf_test(-INFINITY, true)) == 0xffffffffu);
    CHECK(tn__sleef_sinf_test(0.5f, false) == tn__sleef_sinf_test(0.5f, true));   /* under 0.7: Payne-Hanek passes it through */
    tn_scope_end();
    check_leaks();
}

/* float32 sums add in float in PyTorch's cascade (src/ops/reduce.c): exact for integers
   (2^20 ones, 2^24 - 1 in all), and the cascade keeps 1e6 values of 0.1 within 1e-5 of
   1e5 (one float chain drifts by 0.9 %); the sum over dim 0 of a [1000, 37] matrix and of
   its transpose's dim 1 agree bit for bit; an empty sum is 0, an empty mean NaN. */
TEST(sum_cascade_f32) {
    tn_scope_begin();
    CHECK(tn_item(tn_sum(tn_ones(TN_SHAPE(1 << 20), TN_F32))) == (double)(1 << 20));
    CHECK(fabs(tn_item(tn_sum(tn_full(TN_SHAPE(1000000), 0.1, TN_F32))) - 1e5) < 1.0);
    CHECK(fabs(tn_item(tn_mean(tn_full(TN_SHAPE(1000000), 0.1, TN_F32))) - 0.1) < 1e-5);
    tn_manual_seed(23);
    tn_tensor *m = tn_randn(TN_SHAPE(1000, 37), TN_F32);
    tn_tensor *s0 = tn_contiguous(tn_sum_dims(m, TN_DIMS(0))), *s1 = tn_contiguous(tn_sum_dims(tn_t(m), TN_DIMS(1)));
    CHECK(memcmp(tn_data_ptr(s0), tn_data_ptr(s1), 37 * 4) == 0);
    CHECK(tn_item(tn_sum(tn_empty(TN_SHAPE(0, 3), TN_F32))) == 0 && isnan(tn_item(tn_mean(tn_empty(TN_SHAPE(0), TN_F32)))));
    CHECK(tn_sum_dims(m, TN_DIMS(2)) == NULL);   /* a dim out of range: an error, no crash */
    tn_clear_error();
    tn_scope_end();
    check_leaks();
}

/* The sum over the outer dim of a contiguous float32 matrix (bias gradients) adds each row
   into a float64 row: the AVX-512 loop against the portable one bit for bit (widths 0 ...
   40 cover the 16-lane blocks and the tail), and tn_sum_dims over dim 0 against a float64
   reference, also on a transposed (non-contiguous) input. */
TEST(sum_into_rows) {
    float x[40];
    for (int i = 0; i < 40; i++) x[i] = (float)((i % 7 - 3) * pow(10.0, i % 9 - 4));
    for (int64_t n = 0; n <= 40; n++) {
        double a[40], b[40];
        for (int i = 0; i < 40; i++) a[i] = b[i] = 0.25 * i;
        tn__sum_row_avx512 = 0;
        tn__sum_into_f64(a, x, n);
        tn__sum_row_avx512 = 1;
        tn__sum_into_f64(b, x, n);
        CHECK_MSG(memcmp(a, b, sizeof a) == 0, "row into row, width %lld: AVX-512 and portable differ", (long long)n);
        for (int i = 0; i < 40; i++) CHECK_MSG(a[i] == 0.25 * i + (i < n ? (double)x[i] : 0), "row into row, width %lld, element %d", (long long)n, i);
    }
    tn_manual_seed(22);
    tn_scope_begin();
    tn_tensor *m = tn_randn(TN_SHAPE(37, 29), TN_F32), *mt = tn_t(m);
    tn_tensor *s0 = tn_sum_dims(m, TN_DIMS(0)), *s1 = tn_sum_dims(mt, TN_DIMS(1));
    const float *pm = (const float *)tn_data_ptr(m);
    for (int j = 0; j < 29; j++) {
        double ref = 0;
        for (int i = 0; i < 37; i++) ref += pm[i * 29 + j];
        CHECK_MSG(fabs(tn_item(tn_select(s0, 0, j)) - (float)ref) <= 1e-6 * (1 + fabs(ref)), "sum over dim 0, column %d", j);
        CHECK_MSG(tn_item(tn_select(s1, 0, j)) == tn_item(tn_select(s0, 0, j)), "sum over dim 1 of the transpose, column %d", j);
    }
    tn_scope_end();
    check_leaks();
}

int main(void) {
    RUN(unary_all_layouts);
    RUN(unary_special_values);
    RUN(binary_all_layouts);
    RUN(binary_broadcast_errors);
    RUN(binary_scalar_forms);
    RUN(binary_promotion);
    RUN(integer_semantics);
    RUN(float_special_values);
    RUN(ternary_ops);
    RUN(inplace_aliasing);
    RUN(inplace_broadcast_dtype_errors);
    RUN(inplace_version_counter);
    RUN(inplace_views_write_through);
    RUN(reductions_all_layouts);
    RUN(reductions_special);
    RUN(max_dim_argmax);
    RUN(scans_and_softmax);
    RUN(sort_argsort_topk);
    RUN(all_any);
    RUN(mm_sizes_layouts);
    RUN(bmm_mv_dot_outer);
    RUN(matmul_forms);
    RUN(addmm_baddbmm);
    RUN(gemm_large_and_misaligned);
    RUN(float32_accumulation);
    RUN(scalar_edge_cases);
    RUN(edge_shapes);
    RUN(misc_semantics);
    RUN(high_rank);
    RUN(reductions_larger);
    RUN(sum_rows_agree);
    RUN(sum_into_rows);
    RUN(pow_sleef_loops_agree);
    RUN(sin_cos_sleef_loops_agree);
    RUN(sum_cascade_f32);
    RUN(matmul_no_operand_copies);
    RUN(ownership_top_level);
    return tn_test_report();
}
