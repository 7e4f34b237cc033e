/* test_ops.c — the math of tensor.h (sections 7-10) against naive reference loops.
 *
 * Every op runs on inputs in several memory layouts (contiguous, transposed, sliced with
 * step 2, expanded from a size-1 dim) and on broadcast pairs; the result is read back
 * as a contiguous float64 copy and compared element by element with a loop written
 * here with C's math.h on the same input values. Special values, dtype promotion and
 * integer semantics are checked against hard-coded values produced with PyTorch 1.13
 * (the test itself does not need PyTorch).
 *
 * Bugs found by this file are listed in wip/bugs_ops.md; their tests assert the
 * PyTorch behaviour. */
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
static const int64_t *iv(tn_tensor *t) {
    if (!t) return NULL;
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_I64));
    return c ? (const int64_t *)tn_data_ptr(c) : NULL;
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
static tn_tensor *ivec64(const int64_t *v, int64_t n) { return tn_from_data(v, &n, 1, TN_I64); }
#define IVEC(...) ivec64((const int64_t[]){__VA_ARGS__}, (int64_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

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

static tn_tensor *f_gelu(tn_tensor *x) { return tn_gelu(x, false); }
static tn_tensor *f_gelu_tanh(tn_tensor *x) { return tn_gelu(x, true); }
static tn_tensor *f_softplus(tn_tensor *x) { return tn_softplus(x, 1, 20); }
static tn_tensor *f_softplus_b2t3(tn_tensor *x) { return tn_softplus(x, 2, 3); }
static tn_tensor *f_nan_to_num(tn_tensor *x) { return tn_nan_to_num(x, 0, INFINITY, -INFINITY); }
static tn_tensor *f_clamp_a(tn_tensor *x) { return tn_clamp(x, -0.5, 0.7); }
static tn_tensor *f_clamp_i(tn_tensor *x) { return tn_clamp(x, -3, 4); }
static tn_tensor *f_clamp_rev(tn_tensor *x) { return tn_clamp(x, 1, -1); }
static tn_tensor *f_clamp_lo(tn_tensor *x) { return tn_clamp(x, 0.25, INFINITY); }
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
    {"gelu", f_gelu, r_gelu, G_WIDE, U_FLOAT},
    {"gelu_tanh", f_gelu_tanh, r_gelu_tanh, G_WIDE, U_FLOAT},
    {"silu", tn_silu, r_silu, G_WIDE, U_FLOAT},
    {"softplus", f_softplus, r_softplus, G_WIDE, U_FLOAT},
    {"softplus(beta 2, threshold 3)", f_softplus_b2t3, r_softplus_b2t3, G_WIDE, U_FLOAT},
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
        CHECK_LIST(tn_nan_to_num(x, 0, INFINITY, -INFINITY), 0, 0, big, -big, 0, 0, 1, -2.5);
        LABEL("nan_to_num(1, 2, -3) %s", dname(dt));
        CHECK_LIST(tn_nan_to_num(x, 1, 2, -3), 0, 1, 2, -3, 0, 0, 1, -2.5);
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
        CHECK_LIST(tn_gelu(VEC(dt, -1000, 1000), false), 0, -0.0, 1000);
        CHECK_LIST(tn_gelu(VEC(dt, -1000, 1000), true), 0, -0.0, 1000);
        LABEL("softplus extremes %s", dname(dt));
        CHECK_LIST(tn_softplus(VEC(dt, 1000, -1000, 20, 21), 1, 20), 1e-6, 1000, 0, 20, 21);
        /* torch: F.softplus(tensor([1.,30.,-30.,5.]), beta=2, threshold=8) */
        CHECK_LIST(tn_softplus(VEC(dt, 1, 30, -30, 5), 2, 8), 1e-6, 1.0634640836596405, 30, 4.3782688e-27, 5);
    }
    /* clamp: NaN input stays NaN, NaN bound gives NaN everywhere, min > max gives max */
    tn_tensor *x = VEC(TN_F32, nan, 1, 5, -7);
    LABEL("clamp NaN input");
    CHECK_LIST(tn_clamp(x, 2, 3), 0, nan, 2, 3, 2);
    LABEL("clamp NaN bound");
    CHECK_LIST(tn_clamp(x, nan, 3), 0, nan, nan, nan, nan);
    CHECK_LIST(tn_clamp(x, 0, nan), 0, nan, nan, nan, nan);
    LABEL("clamp min > max");
    CHECK_LIST(tn_clamp(x, 3, 1), 0, nan, 1, 1, 1);
    LABEL("clamp one-sided");
    CHECK_LIST(tn_clamp(x, -INFINITY, 2), 0, nan, 1, 2, -7);
    CHECK_LIST(tn_clamp(x, 2, INFINITY), 0, nan, 2, 5, 2);
    /* integer clamp: torch.clamp(tensor([0,1,2,3,5]), 3, 1) = [1,1,1,1,1] */
    tn_tensor *xi = VEC(TN_I64, 0, 1, 2, 3, 5);
    LABEL("int clamp min > max");
    CHECK_DTYPE(tn_clamp(xi, 3, 1), TN_I64);
    CHECK_LIST(tn_clamp(xi, 3, 1), 0, 1, 1, 1, 1, 1);
    LABEL("int clamp with fractional bound promotes to float32");
    CHECK_DTYPE(tn_clamp(xi, 1.5, 3), TN_F32);
    CHECK_LIST(tn_clamp(xi, 1.5, 3), 0, 1.5, 1.5, 2, 3, 3);
    LABEL("int clamp infinite bounds");
    CHECK_DTYPE(tn_clamp(xi, -INFINITY, 2), TN_I64);
    CHECK_LIST(tn_clamp(xi, -INFINITY, 2), 0, 0, 1, 2, 2, 2);
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
    CHECK_ERR(tn_softplus(x, 0, 20), "beta");
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
    case 2: r = tn_addcmul(x, y, z, 0.5); break;
    case 3: r = tn_addcdiv(x, y, z, -2); break;
    case 4: r = tn_clamp_tensor(x, y, z); break;
    case 5: r = tn_lerp_scalar(x, y, 0.3); break;
    case 6: r = tn_clamp_tensor(x, y, NULL); break;
    case 7: r = tn_addcmul(x, y, z, 3); break;
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
    CHECK_LIST(tn_addcmul(VEC(TN_F32, 1), VEC(TN_F32, 2), VEC(TN_F32, 3), 0.5), 0, 4);
    CHECK_DTYPE(tn_addcmul(VEC(TN_I64, 1), VEC(TN_I64, 2), VEC(TN_I64, 3), 2), TN_I64);
    CHECK_LIST(tn_addcmul(VEC(TN_I64, 1), VEC(TN_I64, 2), VEC(TN_I64, 3), 2), 0, 13);
    CHECK_DTYPE(tn_addcmul(VEC(TN_I64, 1), VEC(TN_F32, 2), VEC(TN_I64, 3), 2), TN_F32);
    CHECK_LIST(tn_addcdiv(VEC(TN_F64, 1), VEC(TN_F64, 2), VEC(TN_F64, 0), 1), 0, INFINITY);
    CHECK_ERR(tn_addcdiv(VEC(TN_I64, 1), VEC(TN_I64, 2), VEC(TN_I64, 3), 1), "addcdiv");
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
    CHECK_ERR(tn_addcmul_(tn_zeros(TN_SHAPE(3), TN_F32), VEC(TN_F32, 1, 2, 3), tn_ones(TN_SHAPE(2, 1), TN_F32), 2), "doesn't match");
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
    CHECK_ERR(tn_clamp_(xi, 1.5, 3), "can't be cast");
    CHECK_ERR(tn_add_(VEC(TN_BOOL, 1), VEC(TN_I64, 1)), "can't be cast");
    CHECK_ERR(tn_lerp_(xi, VEC(TN_F32, 1, 2), 0.5), "");
    CHECK_LIST(xi, 0, 1, 2);   /* untouched by the failed calls */
    CHECK(tn_version(xi) == v0);
    LABEL("in-place with a castable result");
    CHECK_LIST(tn_mul_scalar_(xi, 3), 0, 3, 6);
    CHECK_LIST(tn_add_(xi, VEC(TN_BOOL, 1, 0)), 0, 4, 6);
    CHECK_LIST(tn_clamp_(xi, 5, 5.0), 0, 5, 5);
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
    CHECK_ERR(tn_addcmul_(e, e, e, 1), "single memory location");
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
    tn_clamp_(x, 0, 1);
    tn_mul_scalar_(x, 2);
    tn_add_scalar_(x, 2);
    tn_lerp_(x, x, 0.5);
    tn_addcmul_(x, x, x, 1);
    tn_addcdiv_(x, x, tn_ones_like(x), 1);
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
    case 2: return tn_clamp_(v, -0.5, 0.5);
    case 3: return tn_addcmul_(v, a, b, 0.5);
    case 4: return tn_addcdiv_(v, a, b, 0.5);
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
    return tn_test_report();
}
