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
    int64_t bs[TN_MAX_DIMS];
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

int main(void) {
    RUN(unary_all_layouts);
    RUN(unary_special_values);
    RUN(binary_all_layouts);
    RUN(binary_broadcast_errors);
    return tn_test_report();
}
