/* test_index.c — section 6 (views & indexing) of tensor.h against naive reference loops.
 *
 * Every op is checked on contiguous and non-contiguous inputs (a transposed copy, every
 * other element of a bigger buffer, expanded views), several dtypes, negative dims and
 * indices, 0-sized dims and 0-d tensors. Expected values were checked against PyTorch
 * 1.13; the test itself does not need PyTorch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

/* ---------------------------------------------------------------- helpers */

static int64_t live_tensors(void) { return tn_memory_stats_get().live_tensors; }

/* Each test runs in a scope and must give back every tensor it made. */
#define BEGIN int64_t live0_ = live_tensors(); tn_scope_begin()
#define END do { tn_scope_end(); int64_t live1_ = live_tensors(); \
    CHECK_MSG(live1_ == live0_, "leak: %lld live tensors, expected %lld", (long long)live1_, (long long)live0_); } while (0)

/* Error checks run in a nested scope: afterwards live_tensors() must be back where it was
   (a failed call leaks nothing). */
#define ERRS_BEGIN { int64_t errs_live_ = live_tensors(); tn_scope_begin()
#define ERRS_END tn_scope_end(); int64_t l_ = live_tensors(); \
    CHECK_MSG(l_ == errs_live_, "leak after errors: %lld live tensors, expected %lld", (long long)l_, (long long)errs_live_); }

#define SH(...) ((const int64_t[]){__VA_ARGS__}), (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define SH0 NULL, 0
#define L(...) (const int64_t[]){__VA_ARGS__}
#define VALS(...) (const double[]){__VA_ARGS__}, (int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
#define NOVALS NULL, 0

static const tn_dtype DTS[] = {TN_F32, TN_F64, TN_I64, TN_BOOL};
#define NDTS 4
#define NKINDS 3 /* layouts: 0 contiguous, 1 transposed storage, 2 every other element */

static int64_t numel_of(const int64_t *shape, int nd) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i];
    return n;
}
static void unravel(int64_t lin, const int64_t *shape, int nd, int64_t *ix) {
    for (int d = nd - 1; d >= 0; d--) { ix[d] = lin % shape[d]; lin /= shape[d]; }
}
static int64_t ravel(const int64_t *ix, const int64_t *shape, int nd) {
    int64_t lin = 0;
    for (int d = 0; d < nd; d++) lin = lin * shape[d] + ix[d];
    return lin;
}

/* The value of element `lin` (row-major) of the test inputs: distinct, exact in every dtype. */
static double fv(int64_t lin, tn_dtype dt) {
    switch (dt) {
    case TN_F32: case TN_F64: return (double)lin * 0.5 - 3.5;
    case TN_BOOL: return (double)(lin % 3 != 1);
    default: return (double)(lin - 7);
    }
}

static double read_ptr(const char *p, tn_dtype dt) {
    switch (dt) {
    case TN_F32: return *(const float *)p;
    case TN_F64: return *(const double *)p;
    case TN_I32: return *(const int32_t *)p;
    case TN_I64: return (double)*(const int64_t *)p;
    case TN_U8: return *(const uint8_t *)p;
    case TN_BOOL: return *(const bool *)p;
    default: return NAN;
    }
}
/* Element `lin` in row-major logical order, through the strides. */
static double get_lin(const tn_tensor *t, int64_t lin) {
    const int64_t *sh = tn_shape(t), *st = tn_strides(t);
    int64_t off = 0;
    for (int d = tn_ndim(t) - 1; d >= 0; d--) { off += (lin % sh[d]) * st[d]; lin /= sh[d]; }
    return read_ptr((const char *)tn_data_ptr(t) + off * (int64_t)tn_dtype_size(tn_get_dtype(t)), tn_get_dtype(t));
}

static void shape_str(char *buf, const int64_t *shape, int nd) {
    int k = sprintf(buf, "[");
    for (int i = 0; i < nd; i++) k += sprintf(buf + k, i ? ", %lld" : "%lld", (long long)shape[i]);
    sprintf(buf + k, "]");
}

#define FAILED_(line, ...) do { tn_test_failed++; printf("FAIL %s (%s:%d): ", tn_test_current, __FILE__, line); \
    printf(__VA_ARGS__); printf("\n"); } while (0)

/* Two checks: dtype and shape; then every value (NaN equals NaN). */
static void expect_(int line, const char *what, tn_tensor *t, tn_dtype dt, const int64_t *shape, int nd, const double *v, int64_t nv) {
    if (!t) { FAILED_(line, "%s returned NULL: %s", what, tn_last_error()); tn_test_failed++; return; }
    bool ok = tn_get_dtype(t) == dt && tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_shape(t)[i] == shape[i];
    if (!ok) {
        char a[256], b[256];
        shape_str(a, tn_shape(t), tn_ndim(t));
        shape_str(b, shape, nd);
        FAILED_(line, "%s: got %s %s, expected %s %s", what, tn_dtype_name(tn_get_dtype(t)), a, tn_dtype_name(dt), b);
        tn_test_failed++;
        return;
    }
    tn_test_passed++;
    if (tn_numel(t) != nv) { FAILED_(line, "%s: %lld elements, expected %lld", what, (long long)tn_numel(t), (long long)nv); return; }
    for (int64_t i = 0; i < nv; i++) {
        double a = get_lin(t, i), b = v[i];
        if (!(a == b || (a != a && b != b))) {
            FAILED_(line, "%s: element %lld is %.17g, expected %.17g", what, (long long)i, a, b);
            return;
        }
    }
    tn_test_passed++;
}
#define EXPECT(t, dt, shape, vals) expect_(__LINE__, #t, (t), (dt), shape, vals)
#define EXPECT_ARR(t, dt, shape, nd, arr, n) expect_(__LINE__, #t, (t), (dt), (shape), (nd), (arr), (n))
#define EXPECT_SH(t, dt, sh, arr, n) expect_(__LINE__, #t, (t), (dt), sh, (arr), (n)) /* sh = SH(...) */

/* A tensor of the given values (doubles converted to dtype). */
static tn_tensor *mk_vals(tn_dtype dt, const int64_t *shape, int nd, const double *v) {
    static const double dummy = 0;
    return tn_to_dtype(tn_from_data(v ? (const void *)v : (const void *)&dummy, shape, nd, TN_F64), dt);
}
static tn_tensor *mk_i64(const int64_t *v, const int64_t *shape, int nd) {
    static const int64_t dummy = 0;
    return tn_from_data(v ? (const void *)v : (const void *)&dummy, shape, nd, TN_I64);
}
/* 1-d int64 index tensor of the listed values */
#define IDX(...) mk_i64((const int64_t[]){__VA_ARGS__}, TN_SHAPE((int64_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))))
static tn_tensor *mk_bool(const bool *v, const int64_t *shape, int nd) {
    static const bool dummy = false;
    return tn_from_data(v ? (const void *)v : (const void *)&dummy, shape, nd, TN_BOOL);
}
#define BOOLS(...) mk_bool((const bool[]){__VA_ARGS__}, TN_SHAPE((int64_t)(sizeof((const bool[]){__VA_ARGS__}) / sizeof(bool))))
#define FVALS(dt, ...) mk_vals((dt), TN_SHAPE((int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))), (const double[]){__VA_ARGS__})

/* Same logical values as x, in another memory layout. */
static tn_tensor *layout(tn_tensor *x, int kind) {
    int nd = tn_ndim(x);
    if (!x || kind == 0 || nd == 0) return x;
    if (kind == 1 && nd >= 2) return tn_transpose(tn_contiguous(tn_transpose(x, 0, -1)), 0, -1);
    /* every other element of a bigger buffer, starting at offset 1 */
    int64_t sh[TN_MAX_DIMS];
    memcpy(sh, tn_shape(x), (size_t)nd * sizeof(int64_t));
    sh[nd - 1] = 2 * sh[nd - 1] + 1;
    tn_tensor *v = tn_slice(tn_full(sh, nd, 1, tn_get_dtype(x)), -1, 1, TN_END, 2);
    tn_copy_(v, x);
    return v;
}

/* fv(lin + base) over `shape`, in layout `kind`. */
static tn_tensor *mkx_base(tn_dtype dt, const int64_t *shape, int nd, int kind, int64_t base) {
    int64_t n = numel_of(shape, nd);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = fv(i + base, dt);
    tn_tensor *x = mk_vals(dt, shape, nd, v);
    free(v);
    return layout(x, kind);
}
static tn_tensor *mkx(tn_dtype dt, const int64_t *shape, int nd, int kind) { return mkx_base(dt, shape, nd, kind, 0); }

static int wrapd(int64_t d, int nd) { return (int)(d < 0 ? d + nd : d); }

/* ------------------------------------------------------------ index_select */

TEST(index_select_values) {
    BEGIN;
    const int64_t xs[3] = {3, 4, 5};
    struct { int64_t dim; int64_t idx[6]; int n; } cases[] = {
        {0, {2, 0, 2}, 3}, {1, {3, 3, 0, 1, 2}, 5}, {-1, {4, 0}, 2}, {2, {1}, 1}, {-3, {1, 1, 1, 1}, 4}, {-2, {0}, 1},
    };
    double exp[512];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                tn_tensor *x = mkx(dt, xs, 3, kind);
                tn_tensor *idx = layout(mk_i64(cases[c].idx, TN_SHAPE(cases[c].n)), kind);
                if (kind == 2) idx = tn_to_dtype(idx, TN_I32); /* int32 indices are accepted */
                int d = wrapd(cases[c].dim, 3);
                int64_t os[3] = {3, 4, 5}, o[3];
                os[d] = cases[c].n;
                int64_t n = numel_of(os, 3);
                for (int64_t i = 0; i < n; i++) {
                    unravel(i, os, 3, o);
                    o[d] = cases[c].idx[o[d]];
                    exp[i] = fv(ravel(o, xs, 3), dt);
                }
                EXPECT_ARR(tn_index_select(x, cases[c].dim, idx), dt, os, 3, exp, n);
            }
    END;
}

TEST(index_select_edges) {
    BEGIN;
    /* empty index: the indexed dim becomes 0 */
    tn_tensor *x = mkx(TN_F32, SH(3, 4), 1);
    tn_tensor *e = tn_zeros(SH(0), TN_I64);
    EXPECT(tn_index_select(x, 0, e), TN_F32, SH(0, 4), NOVALS);
    EXPECT(tn_index_select(x, -1, e), TN_F32, SH(3, 0), NOVALS);
    /* 0-sized input dims */
    tn_tensor *z = tn_zeros(SH(0, 3), TN_F64);
    EXPECT(tn_index_select(z, 1, IDX(2, 0)), TN_F64, SH(0, 2), NOVALS);
    EXPECT(tn_index_select(z, 0, e), TN_F64, SH(0, 3), NOVALS);
    /* 0-d index on a 1-d input gives [1]; a 0-d input with a 0-d index gives 0-d */
    tn_tensor *a = mkx(TN_I64, SH(5), 0);
    tn_tensor *i0 = tn_scalar_tensor(2, TN_I64);
    EXPECT(tn_index_select(a, 0, i0), TN_I64, SH(1), VALS(-5));
    tn_tensor *s = tn_scalar_tensor(5, TN_F32);
    EXPECT(tn_index_select(s, 0, tn_scalar_tensor(0, TN_I64)), TN_F32, SH0, VALS(5));
    EXPECT(tn_index_select(s, -1, tn_scalar_tensor(0, TN_I64)), TN_F32, SH0, VALS(5));
    /* expanded input (stride 0) and expanded index */
    tn_tensor *row = FVALS(TN_F32, 1, 2, 3);
    tn_tensor *ex = tn_expand(row, SH(4, 3));
    EXPECT(tn_index_select(ex, 0, IDX(3, 1)), TN_F32, SH(2, 3), VALS(1, 2, 3, 1, 2, 3));
    EXPECT(tn_index_select(ex, 1, tn_expand(IDX(2), SH(3))), TN_F32, SH(4, 3), VALS(3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3));
    /* result is a new tensor, not a view */
    tn_tensor *r = tn_index_select(x, 0, IDX(0));
    CHECK(r && !tn_same_storage(r, x));
    /* bool input */
    tn_tensor *b = BOOLS(true, false, true);
    EXPECT(tn_index_select(b, 0, IDX(1, 1, 0)), TN_BOOL, SH(3), VALS(0, 0, 1));
    END;
}

TEST(index_select_errors) {
    BEGIN;
    tn_tensor *x = mkx(TN_F32, SH(3, 4), 0);
    ERRS_BEGIN;
    CHECK_ERR(tn_index_select(x, 0, IDX(3)), "out of bounds");
    CHECK_ERR(tn_index_select(x, 1, IDX(0, 4)), "out of bounds");
    CHECK_ERR(tn_index_select(x, 0, IDX(-1)), "out of bounds"); /* PyTorch: index out of range in self */
    CHECK_ERR(tn_index_select(x, -1, IDX(-5)), "out of bounds");
    CHECK_ERR(tn_index_select(x, 0, FVALS(TN_F32, 0, 1)), "int64 or int32");
    CHECK_ERR(tn_index_select(x, 0, tn_zeros(SH(1, 1), TN_I64)), "0-d or 1-d");
    CHECK_ERR(tn_index_select(x, 2, IDX(0)), "out of range");
    CHECK_ERR(tn_index_select(x, -3, IDX(0)), "out of range");
    CHECK_ERR(tn_index_select(tn_zeros(SH(0, 3), TN_F32), 0, IDX(0)), "out of bounds");
    ERRS_END;
    END;
}

/* ----------------------------------------------------------------- gather */

/* Index values for the gather/scatter cases, deterministic and in [0, bound). */
static int64_t gidx(int64_t lin, int64_t bound, int salt) { return (lin * (2 * salt + 3) + salt) % bound; }

TEST(gather_values) {
    BEGIN;
    struct { int nd; int64_t xs[3]; int64_t dim; int64_t is[3]; int salt; } cases[] = {
        {2, {3, 4}, 0, {2, 4}, 0},
        {2, {3, 4}, 1, {3, 2}, 1},
        {2, {3, 4}, -1, {2, 3}, 2},     /* index smaller than input on the other dim */
        {2, {3, 4}, -2, {1, 1}, 3},
        {3, {2, 3, 4}, 1, {2, 5, 3}, 4}, /* more entries than the input has on dim */
        {3, {2, 3, 4}, -3, {2, 3, 4}, 5},
        {3, {2, 3, 4}, 2, {1, 1, 6}, 6},
        {3, {2, 3, 4}, 0, {0, 3, 4}, 7}, /* empty index */
        {1, {5}, 0, {7}, 8},
    };
    int64_t iv[256], o[3];
    double exp[256];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                int nd = cases[c].nd, d = wrapd(cases[c].dim, nd);
                const int64_t *xs = cases[c].xs, *is = cases[c].is;
                int64_t n = numel_of(is, nd);
                for (int64_t i = 0; i < n; i++) iv[i] = gidx(i, xs[d], cases[c].salt);
                tn_tensor *x = mkx(dt, xs, nd, kind);
                tn_tensor *idx = layout(mk_i64(iv, is, nd), (kind + 1) % NKINDS); /* index in another layout */
                for (int64_t i = 0; i < n; i++) {
                    unravel(i, is, nd, o);
                    o[d] = iv[i];
                    exp[i] = fv(ravel(o, xs, nd), dt);
                }
                EXPECT_ARR(tn_gather(x, cases[c].dim, idx), dt, is, nd, exp, n);
                if (kind == 0 && n > 0) CHECK_ERR(tn_gather(x, cases[c].dim, tn_to_dtype(idx, TN_I32)), "Expected dtype int64 for index"); /* PyTorch: int64 only (any dtype when empty) */
            }
    END;
}

TEST(gather_edges) {
    BEGIN;
    /* 0-d index on a 1-d input: a 0-d result (torch.gather(arange(5), 0, tensor(2)) = tensor(2)) */
    tn_tensor *a = tn_arange(0, 5, 1, TN_I64);
    EXPECT(tn_gather(a, 0, tn_scalar_tensor(2, TN_I64)), TN_I64, SH0, VALS(2));
    EXPECT(tn_gather(tn_scalar_tensor(7, TN_F64), 0, tn_scalar_tensor(0, TN_I64)), TN_F64, SH0, VALS(7));
    /* expanded input */
    tn_tensor *ex = tn_expand(tn_unsqueeze(FVALS(TN_F32, 1, 2, 3), 0), SH(2, 3));
    EXPECT(tn_gather(ex, 1, mk_i64((const int64_t[]){2, 0, 1, 1}, SH(2, 2))), TN_F32, SH(2, 2), VALS(3, 1, 2, 2));
    /* input with a 0-sized dim that the index does not reach */
    tn_tensor *z = tn_zeros(SH(3, 0), TN_F32);
    EXPECT(tn_gather(z, 1, tn_zeros(SH(2, 0), TN_I64)), TN_F32, SH(2, 0), NOVALS);
    END;
}

TEST(gather_errors) {
    BEGIN;
    tn_tensor *x = mkx(TN_F32, SH(3, 4), 0);
    tn_tensor *i23 = mk_i64((const int64_t[]){0, 1, 2, 3, 0, 1}, SH(2, 3));
    tn_tensor *ineg = mk_i64((const int64_t[]){0, -1}, SH(1, 2));
    tn_tensor *ibig = mk_i64((const int64_t[]){0, 0, 0, 0, 0}, SH(1, 5));
    tn_tensor *ibig0 = tn_zeros(SH(4, 1), TN_I64);
    tn_tensor *f = tn_zeros(SH(1, 1), TN_F32);
    tn_tensor *i1 = IDX(0, 1), *i3 = tn_zeros(SH(1, 1, 1), TN_I64);
    ERRS_BEGIN;
    CHECK_ERR(tn_gather(x, 0, i23), "out of bounds"); /* value 3 on dim 0 of size 3 */
    CHECK_ERR(tn_gather(x, 1, ineg), "out of bounds"); /* PyTorch: index -1 is out of bounds */
    CHECK_ERR(tn_gather(x, 0, ibig), "exceeds");      /* index [1,5] vs input [3,4] on dim 1 */
    CHECK_ERR(tn_gather(x, 1, ibig0), "exceeds");
    CHECK_ERR(tn_gather(x, 0, f), "Expected dtype int64 for index");
    CHECK_ERR(tn_gather(x, 0, i1), "same number of dimensions");
    CHECK_ERR(tn_gather(x, 0, i3), "same number of dimensions");
    CHECK_ERR(tn_gather(x, 2, ibig0), "out of range");
    CHECK_ERR(tn_gather(x, -3, ibig0), "out of range");
    ERRS_END;
    {   /* an empty index is read by no one: PyTorch takes any dtype and shape then */
        tn_tensor *e = tn_gather(x, 0, tn_zeros(SH(0, 9), TN_U8));
        CHECK(e && e->dtype == x->dtype && e->ndim == 2 && e->shape[0] == 0 && e->shape[1] == 9);
        tn_tensor *y = tn_clone(x);
        CHECK(tn_scatter_add_(y, 1, tn_zeros(SH(0, 2), TN_F32), tn_ones(SH(2, 2), x->dtype)) && tn_equal(y, x));
    }
    END;
}

/* ---------------------------------------------------------------- scatter */

/* Reference scatter / scatter_add of fv-valued src (base 100) into fv-valued self. */
static void ref_scatter(double *exp, tn_dtype dt, const int64_t *xs, const int64_t *is, const int64_t *ss, int nd, int d,
                        const int64_t *iv, bool add) {
    int64_t o[TN_MAX_DIMS], n = numel_of(is, nd);
    for (int64_t i = 0; i < numel_of(xs, nd); i++) exp[i] = fv(i, dt);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, is, nd, o);
        double s = fv(ravel(o, ss, nd) + 100, dt);
        o[d] = iv[i];
        int64_t t = ravel(o, xs, nd);
        if (!add) exp[t] = s;
        else if (dt == TN_BOOL) exp[t] = exp[t] || s;
        else exp[t] += s;
    }
}

TEST(scatter_values) {
    BEGIN;
    /* index rows along `dim` never repeat a target (scatter with duplicates is unspecified) */
    struct { int nd; int64_t xs[3]; int64_t dim; int64_t is[3]; int64_t ss[3]; int64_t iv[24]; } cases[] = {
        {2, {3, 5}, 0, {2, 5}, {2, 5}, {0, 1, 2, 0, 1, 2, 0, 1, 1, 0}},
        {2, {3, 5}, 0, {2, 5}, {3, 6}, {0, 1, 2, 0, 1, 2, 0, 1, 1, 0}}, /* src larger than index */
        {2, {3, 5}, 1, {3, 2}, {3, 4}, {4, 0, 1, 3, 2, 4}},
        {2, {3, 5}, -1, {2, 3}, {2, 3}, {0, 1, 2, 4, 3, 1}},            /* index smaller than self on dim 0 */
        {2, {3, 5}, -2, {3, 1}, {4, 4}, {2, 0, 1}},
        {3, {2, 3, 4}, 1, {2, 2, 3}, {2, 2, 3}, {0, 1, 2, 1, 2, 0, 1, 2, 0, 2, 0, 1}},
        {3, {2, 3, 4}, -1, {1, 2, 2}, {2, 3, 3}, {3, 0, 1, 2}},
        {3, {2, 3, 4}, 0, {2, 0, 4}, {2, 1, 4}, {0}},                    /* empty index: no-op */
        {1, {5}, 0, {3}, {4}, {4, 0, 2}},
    };
    double exp[256];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                int nd = cases[c].nd, d = wrapd(cases[c].dim, nd);
                const int64_t *xs = cases[c].xs;
                tn_tensor *x = mkx(dt, xs, nd, kind);
                tn_tensor *idx = layout(mk_i64(cases[c].iv, cases[c].is, nd), (kind + 2) % NKINDS);
                tn_tensor *src = mkx_base(dt, cases[c].ss, nd, (kind + 1) % NKINDS, 100);
                int64_t n = numel_of(xs, nd);
                ref_scatter(exp, dt, xs, cases[c].is, cases[c].ss, nd, d, cases[c].iv, false);
                tn_tensor *r = tn_scatter(x, cases[c].dim, idx, src);
                EXPECT_ARR(r, dt, xs, nd, exp, n);
                CHECK(r && !tn_same_storage(r, x));
                /* x untouched by the out-of-place form */
                CHECK_CLOSE(get_lin(x, n - 1), fv(n - 1, dt), 0);
                int64_t v0 = tn_version(x);
                tn_tensor *r2 = tn_scatter_(x, cases[c].dim, idx, src);
                CHECK(r2 == x && tn_version(x) > v0);
                EXPECT_ARR(x, dt, xs, nd, exp, n);
            }
    END;
}

TEST(scatter_add_values) {
    BEGIN;
    /* duplicates accumulate */
    struct { int nd; int64_t xs[3]; int64_t dim; int64_t is[3]; int64_t ss[3]; int salt; } cases[] = {
        {2, {3, 5}, 0, {4, 5}, {4, 5}, 0},
        {2, {3, 5}, 0, {4, 5}, {5, 6}, 1}, /* src larger than index */
        {2, {3, 5}, 1, {3, 7}, {3, 7}, 2},
        {2, {3, 5}, -1, {2, 9}, {3, 9}, 3}, /* index smaller than self on dim 0 */
        {3, {2, 3, 4}, 1, {2, 6, 3}, {2, 6, 4}, 4},
        {3, {2, 3, 4}, -3, {5, 2, 2}, {5, 3, 2}, 5},
        {1, {4}, 0, {10}, {11}, 6},
    };
    const tn_dtype dts[] = {TN_F32, TN_F64, TN_I64, TN_I32};
    int64_t iv[256];
    double exp[256];
    for (int di = 0; di < 4; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = dts[di];
                int nd = cases[c].nd, d = wrapd(cases[c].dim, nd);
                const int64_t *xs = cases[c].xs, *is = cases[c].is;
                int64_t ni = numel_of(is, nd), n = numel_of(xs, nd);
                for (int64_t i = 0; i < ni; i++) iv[i] = gidx(i, xs[d], cases[c].salt) % 2; /* many duplicates */
                tn_tensor *x = mkx(dt, xs, nd, kind);
                tn_tensor *idx = layout(mk_i64(iv, is, nd), (kind + 1) % NKINDS);
                tn_tensor *src = mkx_base(dt, cases[c].ss, nd, (kind + 2) % NKINDS, 100);
                ref_scatter(exp, dt, xs, is, cases[c].ss, nd, d, iv, true);
                EXPECT_ARR(tn_scatter_add(x, cases[c].dim, idx, src), dt, xs, nd, exp, n);
                CHECK_CLOSE(get_lin(x, 0), fv(0, dt), 0);
                tn_tensor *r2 = tn_scatter_add_(x, cases[c].dim, idx, src);
                CHECK(r2 == x);
                EXPECT_ARR(x, dt, xs, nd, exp, n);
            }
    END;
}

TEST(scatter_edges) {
    BEGIN;
    /* hand-checked against torch: zeros(3).scatter_add(0, [0,0,2,0], [1,2,3,4]) = [7,0,3] */
    tn_tensor *z = tn_zeros(SH(3), TN_F32);
    EXPECT(tn_scatter_add(z, 0, IDX(0, 0, 2, 0), FVALS(TN_F32, 1, 2, 3, 4)), TN_F32, SH(3), VALS(7, 0, 3));
    EXPECT(tn_scatter(z, -1, IDX(2, 0), FVALS(TN_F32, 1, 2, 3, 4)), TN_F32, SH(3), VALS(2, 0, 1));
    /* 0-d self (torch.scatter(tensor(0.), 0, tensor([0]), tensor(5.)) = tensor(5.)) */
    tn_tensor *s = tn_scalar_tensor(0, TN_F32);
    EXPECT(tn_scatter(s, 0, tn_scalar_tensor(0, TN_I64), tn_scalar_tensor(5, TN_F32)), TN_F32, SH0, VALS(5));
    EXPECT(tn_scatter(s, 0, IDX(0), tn_scalar_tensor(5, TN_F32)), TN_F32, SH0, VALS(5));
    EXPECT(tn_scatter_add(s, 0, IDX(0), FVALS(TN_F32, 4)), TN_F32, SH0, VALS(4));
    /* expanded src; an int32 index is PyTorch's error (gather/scatter take int64 only) */
    tn_tensor *x = tn_zeros(SH(2, 3), TN_I64);
    tn_tensor *src = tn_expand(tn_scalar_tensor(9, TN_I64), SH(2, 3));
    tn_tensor *i64 = mk_i64((const int64_t[]){1, 1, 0, 2}, SH(2, 2));
    EXPECT(tn_scatter_add(x, 1, i64, src), TN_I64, SH(2, 3), VALS(0, 18, 0, 9, 0, 9));
    CHECK_ERR(tn_scatter_add(x, 1, tn_to_dtype(i64, TN_I32), src), "Expected dtype int64 for index");
    /* in-place into a transposed view writes the right logical elements */
    tn_tensor *base = tn_zeros(SH(3, 2), TN_F64);
    tn_tensor *tv = tn_t(base); /* [2,3] */
    tn_scatter_(tv, 1, mk_i64((const int64_t[]){2, 0}, SH(2, 1)), mk_vals(TN_F64, SH(2, 1), (const double[]){5, 6}));
    EXPECT(base, TN_F64, SH(3, 2), VALS(0, 6, 0, 0, 5, 0));
    END;
}

/* PyTorch refuses to scatter_ into a tensor whose elements share memory (an expanded
   view): "unsupported operation: more than one element of the written-to tensor refers
   to a single memory location". */
TEST(scatter_into_expanded) {
    BEGIN;
    tn_tensor *base = tn_zeros(SH(1, 3), TN_F32);
    tn_tensor *e = tn_expand(base, SH(2, 3));
    tn_tensor *idx = mk_i64((const int64_t[]){0, 1, 0}, SH(1, 3)), *src = tn_ones(SH(1, 3), TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_scatter_(e, 0, idx, src), "memory location");
    CHECK_ERR(tn_scatter_add_(e, 0, idx, src), "memory location");
    ERRS_END;
    /* the out-of-place forms are fine: they write into a fresh copy */
    tn_tensor *e2 = tn_expand(tn_zeros(SH(1, 3), TN_F32), SH(2, 3));
    EXPECT(tn_scatter(e2, 0, idx, src), TN_F32, SH(2, 3), VALS(1, 0, 1, 0, 1, 0));
    EXPECT(tn_scatter_add(e2, 0, idx, src), TN_F32, SH(2, 3), VALS(1, 0, 1, 0, 1, 0));
    END;
}

/* values / src sharing memory with the written tensor: PyTorch refuses ("some elements
   of the input tensor and the written-to tensor refer to a single memory location"), as
   the result would depend on the write order. */
TEST(inplace_aliasing) {
    BEGIN;
    tn_tensor *x = tn_arange(0, 3, 1, TN_F32), *y = tn_arange(0, 3, 1, TN_F32);
    tn_tensor *perm = IDX(1, 0, 2);
    tn_tensor *ix[1] = {perm};
    ERRS_BEGIN;
    CHECK_ERR(tn_index_put_(x, ix, 1, x), "memory location");
    CHECK_ERR(tn_scatter_(y, 0, perm, y), "memory location");
    ERRS_END;
    /* the out-of-place forms read the input, not the copy they write */
    tn_tensor *z = tn_arange(0, 3, 1, TN_F32);
    EXPECT(tn_index_put(z, ix, 1, z), TN_F32, SH(3), VALS(1, 0, 2));
    EXPECT(tn_scatter(z, 0, perm, z), TN_F32, SH(3), VALS(1, 0, 2));
    END;
}

TEST(scatter_errors) {
    BEGIN;
    tn_tensor *x = tn_zeros(SH(3, 4), TN_F32);
    tn_tensor *src = tn_ones(SH(3, 4), TN_F32), *srcd = tn_ones(SH(3, 4), TN_F64), *small = tn_ones(SH(1, 1), TN_F32);
    tn_tensor *iok = tn_zeros(SH(2, 2), TN_I64);
    tn_tensor *i3 = mk_i64((const int64_t[]){3}, SH(1, 1)), *im = mk_i64((const int64_t[]){-1}, SH(1, 1));
    tn_tensor *i4 = mk_i64((const int64_t[]){0, 4}, SH(1, 2)), *fi = tn_zeros(SH(1, 1), TN_F32), *i1 = IDX(0);
    tn_tensor *iwide = tn_zeros(SH(1, 5), TN_I64);
    ERRS_BEGIN;
    CHECK_ERR(tn_scatter(x, 0, i3, src), "out of bounds");
    CHECK_ERR(tn_scatter(x, 0, im, src), "out of bounds");
    CHECK_ERR(tn_scatter_add(x, 1, i4, src), "out of bounds");
    CHECK_ERR(tn_scatter_(x, -2, i3, src), "out of bounds");
    CHECK_ERR(tn_scatter_add_(x, 1, im, src), "out of bounds");
    CHECK_ERR(tn_scatter(x, 0, fi, src), "Expected dtype int64 for index");
    CHECK_ERR(tn_scatter(x, 0, i1, src), "same number of dimensions");
    CHECK_ERR(tn_scatter(x, 0, iok, srcd), "dtype");
    CHECK_ERR(tn_scatter_add(x, 0, iok, small), "larger than src");
    CHECK_ERR(tn_scatter(x, 0, iwide, tn_ones(SH(1, 5), TN_F32)), "exceeds");
    CHECK_ERR(tn_scatter(x, 2, iok, src), "out of range");
    ERRS_END;
    /* x was not modified by the failed in-place calls */
    EXPECT(tn_sum(x), TN_F32, SH0, VALS(0));
    END;
}

/* ------------------------------------------------------- advanced indexing */

/* x = fv over [3,4,5]; X(i,j,k) its value */
static double X3(int64_t i, int64_t j, int64_t k, tn_dtype dt) { return fv(i * 20 + j * 5 + k, dt); }
static int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

TEST(index_int_tensors) {
    BEGIN;
    double exp[512];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++) {
            tn_dtype dt = DTS[di];
            tn_tensor *x = mkx(dt, SH(3, 4, 5), kind);
            int64_t n = 0;
            /* A: one index on dim 0, negative wraps */
            {
                const int64_t a[3] = {2, 0, -1};
                tn_tensor *ix[1] = {layout(IDX(2, 0, -1), kind)};
                n = 0;
                for (int p = 0; p < 3; p++) for (int j = 0; j < 4; j++) for (int k = 0; k < 5; k++) exp[n++] = X3(wrap(a[p], 3), j, k, dt);
                EXPECT_SH(tn_index(x, ix, 1), dt, SH(3, 4, 5), exp, n);
            }
            /* B: NULL then an index on dim 1 */
            {
                const int64_t a[3] = {1, -1, 1};
                tn_tensor *ix[2] = {NULL, IDX(1, -1, 1)};
                n = 0;
                for (int i = 0; i < 3; i++) for (int p = 0; p < 3; p++) for (int k = 0; k < 5; k++) exp[n++] = X3(i, wrap(a[p], 4), k, dt);
                EXPECT_SH(tn_index(x, ix, 2), dt, SH(3, 3, 5), exp, n);
            }
            /* C: adjacent indices on dims 1, 2 broadcasting [2,1] x [3] -> result dims stay in place */
            {
                const int64_t a[2] = {0, 3}, b[3] = {4, 0, -2};
                tn_tensor *ix[3] = {NULL, layout(mk_i64(a, SH(2, 1)), kind), IDX(4, 0, -2)};
                n = 0;
                for (int i = 0; i < 3; i++) for (int p = 0; p < 2; p++) for (int q = 0; q < 3; q++) exp[n++] = X3(i, a[p], wrap(b[q], 5), dt);
                EXPECT_SH(tn_index(x, ix, 3), dt, SH(3, 2, 3), exp, n);
            }
            /* D: indices on dims 0 and 2 (not adjacent): broadcast dims go first */
            {
                const int64_t a[2] = {2, -3}, b[2] = {1, 4};
                tn_tensor *ix[3] = {IDX(2, -3), NULL, layout(IDX(1, 4), kind)};
                n = 0;
                for (int p = 0; p < 2; p++) for (int j = 0; j < 4; j++) exp[n++] = X3(wrap(a[p], 3), j, b[p], dt);
                EXPECT_SH(tn_index(x, ix, 3), dt, SH(2, 4), exp, n);
            }
            /* E: not adjacent and broadcasting [2,1] x [3] -> [2,3,4] */
            {
                const int64_t a[2] = {0, 2}, b[3] = {0, 1, 4};
                tn_tensor *ix[3] = {mk_i64(a, SH(2, 1)), NULL, IDX(0, 1, 4)};
                n = 0;
                for (int p = 0; p < 2; p++) for (int q = 0; q < 3; q++) for (int j = 0; j < 4; j++) exp[n++] = X3(a[p], j, b[q], dt);
                EXPECT_SH(tn_index(x, ix, 3), dt, SH(2, 3, 4), exp, n);
            }
            /* F: indices on dims 0, 1 (adjacent at the front) */
            {
                const int64_t a[2] = {1, 2}, b[2] = {3, 0};
                tn_tensor *ix[2] = {IDX(1, 2), IDX(3, 0)};
                n = 0;
                for (int p = 0; p < 2; p++) for (int k = 0; k < 5; k++) exp[n++] = X3(a[p], b[p], k, dt);
                EXPECT_SH(tn_index(x, ix, 2), dt, SH(2, 5), exp, n);
            }
            /* G: all three dims, shapes [2,2], [2], [1] */
            {
                const int64_t a[4] = {0, 1, 2, -1}, b[2] = {3, -4}, c = 2;
                tn_tensor *ix[3] = {layout(mk_i64(a, SH(2, 2)), kind), IDX(3, -4), IDX(2)};
                n = 0;
                for (int p = 0; p < 2; p++) for (int q = 0; q < 2; q++) exp[n++] = X3(wrap(a[p * 2 + q], 3), wrap(b[q], 4), c, dt);
                EXPECT_SH(tn_index(x, ix, 3), dt, SH(2, 2), exp, n);
            }
            /* H: a 0-d index removes the dim; int32 index */
            {
                tn_tensor *ix[2] = {NULL, tn_scalar_tensor(-3, TN_I64)};
                n = 0;
                for (int i = 0; i < 3; i++) for (int k = 0; k < 5; k++) exp[n++] = X3(i, 1, k, dt);
                EXPECT_SH(tn_index(x, ix, 2), dt, SH(3, 5), exp, n);
                tn_tensor *ix2[1] = {tn_to_dtype(IDX(1), TN_I32)};
                n = 0;
                for (int j = 0; j < 4; j++) for (int k = 0; k < 5; k++) exp[n++] = X3(1, j, k, dt);
                EXPECT_SH(tn_index(x, ix2, 1), dt, SH(1, 4, 5), exp, n);
            }
            /* I: empty index, expanded index */
            {
                tn_tensor *ix[3] = {NULL, NULL, tn_zeros(SH(0), TN_I64)};
                EXPECT(tn_index(x, ix, 3), dt, SH(3, 4, 0), NOVALS);
                tn_tensor *ix2[1] = {tn_expand(IDX(2), SH(2))};
                n = 0;
                for (int p = 0; p < 2; p++) for (int j = 0; j < 4; j++) for (int k = 0; k < 5; k++) exp[n++] = X3(2, j, k, dt);
                EXPECT_SH(tn_index(x, ix2, 1), dt, SH(2, 4, 5), exp, n);
            }
        }
    /* no index at all: a copy; a 0-d tensor */
    tn_tensor *x = mkx(TN_F32, SH(2, 3), 1);
    tn_tensor *ix[2] = {NULL, NULL};
    tn_tensor *r = tn_index(x, ix, 2);
    EXPECT(r, TN_F32, SH(2, 3), VALS(-3.5, -3, -2.5, -2, -1.5, -1));
    CHECK(r && !tn_same_storage(r, x));
    EXPECT(tn_index(tn_scalar_tensor(4, TN_I64), NULL, 0), TN_I64, SH0, VALS(4));
    /* 0-sized indexed tensor */
    tn_tensor *z = tn_zeros(SH(0, 3), TN_F32);
    tn_tensor *iz[2] = {NULL, IDX(2, 2)};
    EXPECT(tn_index(z, iz, 2), TN_F32, SH(0, 2), NOVALS);
    END;
}

static bool mbit(int64_t lin) { return (lin * 7) % 5 < 2; }

TEST(index_bool_masks) {
    BEGIN;
    double exp[512];
    bool mv[64];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++) {
            tn_dtype dt = DTS[di];
            tn_tensor *x = mkx(dt, SH(3, 4, 5), kind);
            int64_t n;
            /* M1: a mask over every dim gives the 1-D list of selected elements, row-major */
            {
                for (int i = 0; i < 60; i++) mv[i] = mbit(i);
                tn_tensor *ix[1] = {layout(mk_bool(mv, SH(3, 4, 5)), kind)};
                n = 0;
                for (int i = 0; i < 60; i++) if (mv[i]) exp[n++] = fv(i, dt);
                EXPECT_SH(tn_index(x, ix, 1), dt, SH(n), exp, n);
            }
            /* M2: a 2-d mask over the leading dims: [nnz, 5] */
            {
                for (int i = 0; i < 12; i++) mv[i] = mbit(i + 1);
                tn_tensor *ix[1] = {layout(mk_bool(mv, SH(3, 4)), kind)};
                n = 0;
                int64_t cnt = 0;
                for (int i = 0; i < 12; i++) if (mv[i]) { cnt++; for (int k = 0; k < 5; k++) exp[n++] = X3(i / 4, i % 4, k, dt); }
                EXPECT_SH(tn_index(x, ix, 1), dt, SH(cnt, 5), exp, n);
            }
            /* M3: NULL then a 1-d mask on dim 1: [3, nnz, 5] */
            {
                tn_tensor *ix[2] = {NULL, BOOLS(true, false, false, true)};
                n = 0;
                for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) if (j == 0 || j == 3) for (int k = 0; k < 5; k++) exp[n++] = X3(i, j, k, dt);
                EXPECT_SH(tn_index(x, ix, 2), dt, SH(3, 2, 5), exp, n);
            }
            /* M4: NULL then a 2-d mask on dims 1, 2: [3, nnz] */
            {
                for (int i = 0; i < 20; i++) mv[i] = mbit(i + 3);
                tn_tensor *ix[2] = {NULL, layout(mk_bool(mv, SH(4, 5)), kind)};
                n = 0;
                int64_t cnt = 0;
                for (int i = 0; i < 20; i++) cnt += mv[i];
                for (int i = 0; i < 3; i++) for (int q = 0; q < 20; q++) if (mv[q]) exp[n++] = X3(i, q / 5, q % 5, dt);
                EXPECT_SH(tn_index(x, ix, 2), dt, SH(3, cnt), exp, n);
            }
            /* M5: mask on dim 0 with an int index on dim 2 (not adjacent): [2, 4]
               torch: arange(60.).reshape(3,4,5)[[True,False,True], :, [1,0]] = [[1,6,11,16],[40,45,50,55]] */
            {
                tn_tensor *ix[3] = {BOOLS(true, false, true), NULL, IDX(1, 0)};
                const int64_t rows[2] = {0, 2}, cols[2] = {1, 0};
                n = 0;
                for (int p = 0; p < 2; p++) for (int j = 0; j < 4; j++) exp[n++] = X3(rows[p], j, cols[p], dt);
                EXPECT_SH(tn_index(x, ix, 3), dt, SH(2, 4), exp, n);
            }
            /* M6: NULL, mask on dim 1, int index on dim 2 (adjacent): [3, 2] */
            {
                tn_tensor *ix[3] = {NULL, BOOLS(false, true, false, true), IDX(3)};
                n = 0;
                for (int i = 0; i < 3; i++) { exp[n++] = X3(i, 1, 3, dt); exp[n++] = X3(i, 3, 3, dt); }
                EXPECT_SH(tn_index(x, ix, 3), dt, SH(3, 2), exp, n);
            }
            /* M7: all-false mask */
            {
                tn_tensor *ix[1] = {tn_zeros(SH(3), TN_BOOL)};
                EXPECT(tn_index(x, ix, 1), dt, SH(0, 4, 5), NOVALS);
            }
        }
    /* a 2-d mask on dims 0, 1 and an int index on dim 3 (not adjacent), hand-checked:
       arange(360).reshape(3,4,5,6)[[[1,0,0,1],[0,0,0,0],[0,1,0,0]], :, [5,0,2]] =
       [[5,11,17,23,29],[90,96,...,114],[272,...,296]] */
    {
        tn_tensor *y = tn_reshape(tn_arange(0, 360, 1, TN_I64), SH(3, 4, 5, 6));
        tn_tensor *ix[3] = {mk_bool((const bool[]){1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, SH(3, 4)), NULL, IDX(5, 0, 2)};
        EXPECT(tn_index(y, ix, 3), TN_I64, SH(3, 5), VALS(5, 11, 17, 23, 29, 90, 96, 102, 108, 114, 272, 278, 284, 290, 296));
        /* int index on dim 0 then a mask on dim 1 (adjacent): arange(6.).reshape(2,3)[[1,0], [T,F,T]] = [3, 2] */
        tn_tensor *x = tn_reshape(tn_arange(0, 6, 1, TN_F32), SH(2, 3));
        tn_tensor *ix2[2] = {IDX(1, 0), BOOLS(true, false, true)};
        EXPECT(tn_index(x, ix2, 2), TN_F32, SH(2), VALS(3, 2));
        /* NULL, 2-d mask on dims 1, 2, int index on dim 3: torch shape [3, 8] */
        bool mv2[20];
        for (int i = 0; i < 20; i++) mv2[i] = i % 5 == 0 || i % 5 == 3;
        tn_tensor *ix3[3] = {NULL, mk_bool(mv2, SH(4, 5)), IDX(1)};
        tn_tensor *r = tn_index(y, ix3, 3);
        double e3[24];
        int64_t n = 0;
        for (int i = 0; i < 3; i++) for (int q = 0; q < 20; q++) if (mv2[q]) e3[n++] = (double)(i * 120 + (q / 5) * 30 + (q % 5) * 6 + 1);
        EXPECT_SH(r, TN_I64, SH(3, 8), e3, n);
    }
    /* a uint8 mask is a mask (deprecated in PyTorch, still supported) */
    tn_tensor *y = tn_arange(0, 6, 1, TN_F32);
    tn_tensor *iu[1] = {tn_to_dtype(BOOLS(true, false, true, true, false, true), TN_U8)};
    EXPECT(tn_index(y, iu, 1), TN_F32, SH(4), VALS(0, 2, 3, 5));
    /* a mask on a 0-sized tensor */
    tn_tensor *z = tn_zeros(SH(0, 3), TN_F32);
    tn_tensor *iz[1] = {tn_zeros(SH(0), TN_BOOL)};
    EXPECT(tn_index(z, iz, 1), TN_F32, SH(0, 3), NOVALS);
    /* a mask on an expanded tensor */
    tn_tensor *ex = tn_expand(tn_unsqueeze(FVALS(TN_I64, 1, 2, 3), 0), SH(2, 3));
    tn_tensor *im[1] = {mk_bool((const bool[]){true, false, true, false, true, true}, SH(2, 3))};
    EXPECT(tn_index(ex, im, 1), TN_I64, SH(4), VALS(1, 3, 2, 3));
    END;
}

/* x[True] / x[False]: a 0-d mask adds a dim of size 1 / 0 and indexes nothing */
TEST(index_zero_dim_bool) {
    BEGIN;
    tn_tensor *x = tn_reshape(tn_arange(0, 6, 1, TN_F32), SH(2, 3));
    tn_tensor *t1[1] = {tn_scalar_tensor(1, TN_BOOL)}, *t0[1] = {tn_scalar_tensor(0, TN_BOOL)};
    EXPECT(tn_index(x, t1, 1), TN_F32, SH(1, 2, 3), VALS(0, 1, 2, 3, 4, 5));
    EXPECT(tn_index(x, t0, 1), TN_F32, SH(0, 2, 3), NOVALS);
    /* torch.tensor(5.)[torch.tensor(True)] = tensor([5.]) */
    EXPECT(tn_index(tn_scalar_tensor(5, TN_F32), t1, 1), TN_F32, SH(1), VALS(5));
    END;
}

TEST(index_errors) {
    BEGIN;
    tn_tensor *x = mkx(TN_F32, SH(3, 4, 5), 0);
    tn_tensor *i3 = IDX(0, 3), *im4 = IDX(-4), *i4 = IDX(4), *im6 = IDX(-6), *f = FVALS(TN_F32, 0);
    tn_tensor *m4 = tn_ones(SH(4), TN_BOOL), *m35 = tn_ones(SH(3, 5), TN_BOOL), *mall = tn_ones(SH(3, 4, 5), TN_BOOL);
    tn_tensor *a2 = IDX(0, 1), *b3 = IDX(0, 1, 2), *i0 = IDX(0);
    ERRS_BEGIN;
    { tn_tensor *ix[1] = {i3}; CHECK_ERR(tn_index(x, ix, 1), "out of bounds"); }
    { tn_tensor *ix[1] = {im4}; CHECK_ERR(tn_index(x, ix, 1), "out of bounds"); }
    { tn_tensor *ix[2] = {NULL, i4}; CHECK_ERR(tn_index(x, ix, 2), "out of bounds"); }
    { tn_tensor *ix[3] = {NULL, NULL, im6}; CHECK_ERR(tn_index(x, ix, 3), "out of bounds"); }
    { tn_tensor *ix[1] = {f}; CHECK_ERR(tn_index(x, ix, 1), "int64 or int32"); }
    { tn_tensor *ix[1] = {m4}; CHECK_ERR(tn_index(x, ix, 1), "does not match"); }
    { tn_tensor *ix[1] = {m35}; CHECK_ERR(tn_index(x, ix, 1), "does not match"); }
    { tn_tensor *ix[4] = {i0, i0, i0, i0}; CHECK_ERR(tn_index(x, ix, 4), "too many indices"); }
    { tn_tensor *ix[2] = {NULL, mall}; CHECK_ERR(tn_index(x, ix, 2), "too many indices"); }
    { tn_tensor *ix[2] = {mall, i0}; CHECK_ERR(tn_index(x, ix, 2), "too many indices"); }
    { tn_tensor *ix[2] = {m35, NULL}; CHECK_ERR(tn_index(tn_zeros(SH(3, 5), TN_F32), ix, 2), "too many indices"); }
    { tn_tensor *ix[2] = {a2, b3}; CHECK_ERR(tn_index(x, ix, 2), "shape mismatch"); }
    { tn_tensor *ix[1] = {i0}; CHECK_ERR(tn_index(tn_scalar_tensor(1, TN_F32), ix, 1), "too many indices"); }
    ERRS_END;
    END;
}

/* -------------------------------------------------------------- index_put */

TEST(index_put_values) {
    BEGIN;
    double exp[64];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++) {
            tn_dtype dt = DTS[di];
            bool isb = dt == TN_BOOL;
            /* rows 0 and -1 <- a broadcast row of values */
            {
                tn_tensor *x = mkx(dt, SH(3, 4), kind);
                tn_tensor *ix[1] = {IDX(0, -1)};
                tn_tensor *v = mkx_base(dt, SH(4), 0, 50);
                for (int i = 0; i < 12; i++) exp[i] = (i / 4 == 1) ? fv(i, dt) : fv(i % 4 + 50, dt);
                EXPECT_SH(tn_index_put(x, ix, 1, v), dt, SH(3, 4), exp, 12);
                double e2[8];
                for (int i = 0; i < 8; i++) e2[i] = fv(i % 4 + 50, dt);
                EXPECT_SH(tn_index(tn_index_put(x, ix, 1, v), ix, 1), dt, SH(2, 4), e2, 8);
                /* out-of-place leaves x alone */
                CHECK_CLOSE(get_lin(x, 0), fv(0, dt), 0);
                tn_tensor *r = tn_index_put_(x, ix, 1, v);
                CHECK(r == x);
                EXPECT_SH(x, dt, SH(3, 4), exp, 12);
            }
            /* accumulate: duplicates add up (bool: or) */
            if (!isb) {
                tn_tensor *x = mkx(dt, SH(3, 4), kind);
                tn_tensor *ix[1] = {layout(IDX(0, 0, 2, 0), kind)};
                tn_tensor *v = mkx_base(dt, SH(4, 4), (kind + 1) % NKINDS, 20);
                for (int i = 0; i < 12; i++) exp[i] = fv(i, dt);
                const int64_t rows[4] = {0, 0, 2, 0};
                for (int p = 0; p < 4; p++) for (int j = 0; j < 4; j++) exp[rows[p] * 4 + j] += fv(p * 4 + j + 20, dt);
                EXPECT_SH(tn_index_put(x, ix, 1, v, .accumulate = true), dt, SH(3, 4), exp, 12);
                tn_index_put_(x, ix, 1, v, .accumulate = true);
                EXPECT_SH(x, dt, SH(3, 4), exp, 12);
            }
            /* two index tensors and a 0-d value */
            {
                tn_tensor *x = mkx(dt, SH(3, 4), kind);
                tn_tensor *ix[2] = {IDX(0, 2, -1), IDX(1, -1, 0)};
                for (int i = 0; i < 12; i++) exp[i] = fv(i, dt);
                exp[0 * 4 + 1] = exp[2 * 4 + 3] = exp[2 * 4 + 0] = 1;
                EXPECT_SH(tn_index_put(x, ix, 2, tn_scalar_tensor(1, dt)), dt, SH(3, 4), exp, 12);
                if (!isb) {
                    for (int i = 0; i < 12; i++) exp[i] = fv(i, dt);
                    exp[1] += 2; exp[11] += 2; exp[8] += 2;
                    EXPECT_SH(tn_index_put(x, ix, 2, tn_scalar_tensor(2, dt), .accumulate = true), dt, SH(3, 4), exp, 12);
                }
            }
            /* NULL then an index with duplicates, accumulate */
            if (!isb) {
                tn_tensor *x = mkx(dt, SH(3, 4), kind);
                tn_tensor *ix[2] = {NULL, IDX(1, 1, 3)};
                for (int i = 0; i < 12; i++) exp[i] = fv(i, dt) + (i % 4 == 1 ? 2 : i % 4 == 3 ? 1 : 0);
                EXPECT_SH(tn_index_put(x, ix, 2, tn_ones(SH(3, 3), dt), .accumulate = true), dt, SH(3, 4), exp, 12);
                EXPECT_SH(tn_index_put(x, ix, 2, tn_ones(SH(3), dt), .accumulate = true), dt, SH(3, 4), exp, 12);
            }
            /* bool mask put: x[mask] = 0 */
            {
                tn_tensor *x = mkx(dt, SH(3, 4), kind);
                bool mv[12];
                for (int i = 0; i < 12; i++) mv[i] = mbit(i);
                tn_tensor *ix[1] = {layout(mk_bool(mv, SH(3, 4)), kind)};
                for (int i = 0; i < 12; i++) exp[i] = mv[i] ? 0 : fv(i, dt);
                tn_index_put_(x, ix, 1, tn_scalar_tensor(0, dt));
                EXPECT_SH(x, dt, SH(3, 4), exp, 12);
                /* row mask with broadcast row values */
                tn_tensor *y = mkx(dt, SH(3, 4), kind);
                tn_tensor *rm[1] = {BOOLS(true, false, true)};
                tn_tensor *v = mkx_base(dt, SH(4), 0, 30);
                for (int i = 0; i < 12; i++) exp[i] = (i / 4 == 1) ? fv(i, dt) : fv(i % 4 + 30, dt);
                EXPECT_SH(tn_index_put(y, rm, 1, v), dt, SH(3, 4), exp, 12);
            }
            /* not-adjacent indices on a 3-d tensor, values [2, 3] broadcasting over the result [2, 3] */
            {
                tn_tensor *x = mkx(dt, SH(2, 3, 4), kind);
                tn_tensor *ix[3] = {IDX(1, 0), NULL, IDX(3, -4)};
                tn_tensor *v = mkx_base(dt, SH(2, 3), 0, 40);
                for (int i = 0; i < 24; i++) exp[i] = fv(i, dt);
                const int64_t a[2] = {1, 0}, c[2] = {3, 0};
                for (int p = 0; p < 2; p++) for (int j = 0; j < 3; j++) exp[a[p] * 12 + j * 4 + c[p]] = fv(p * 3 + j + 40, dt);
                EXPECT_SH(tn_index_put(x, ix, 3, v), dt, SH(2, 3, 4), exp, 24);
            }
        }
    /* hand-checked: torch.zeros(2,3).index_put_((tensor([0,0,1]),), tensor(1.), accumulate=True) = [[2,2,2],[1,1,1]] */
    tn_tensor *z = tn_zeros(SH(2, 3), TN_F32);
    tn_tensor *ix[1] = {IDX(0, 0, 1)};
    EXPECT(tn_index_put(z, ix, 1, tn_scalar_tensor(1, TN_F32), .accumulate = true), TN_F32, SH(2, 3), VALS(2, 2, 2, 1, 1, 1));
    /* a wrapped number (Python scalar: x[i] = 2.75) is cast to the tensor's dtype */
    EXPECT(tn_index_put(z, ix, 1, tn_scalar_int(1), .accumulate = true), TN_F32, SH(2, 3), VALS(2, 2, 2, 1, 1, 1));
    tn_tensor *zi = tn_zeros(SH(3), TN_I64);
    tn_tensor *ix2[1] = {IDX(2, 0)};
    EXPECT(tn_index_put(zi, ix2, 1, tn_scalar(2.75)), TN_I64, SH(3), VALS(2, 0, 2));
    /* into a transposed view in place */
    tn_tensor *base = tn_zeros(SH(3, 2), TN_F64);
    tn_tensor *tv = tn_t(base);
    tn_tensor *ix3[2] = {IDX(1), IDX(2)};
    tn_index_put_(tv, ix3, 2, tn_scalar_tensor(7, TN_F64));
    EXPECT(base, TN_F64, SH(3, 2), VALS(0, 0, 0, 0, 0, 7));
    /* x[mask] = one value per selected element (row-major), hand-checked:
       arange(6.).reshape(2,3).index_put((mask,), [10,20,30]) = [[10,1,20],[3,30,5]] */
    tn_tensor *y = tn_reshape(tn_arange(0, 6, 1, TN_F32), SH(2, 3));
    tn_tensor *mk[1] = {mk_bool((const bool[]){1, 0, 1, 0, 1, 0}, SH(2, 3))};
    EXPECT(tn_index_put(y, mk, 1, FVALS(TN_F32, 10, 20, 30)), TN_F32, SH(2, 3), VALS(10, 1, 20, 3, 30, 5));
    EXPECT(tn_index_put(y, mk, 1, FVALS(TN_F32, 10, 20, 30), .accumulate = true), TN_F32, SH(2, 3), VALS(10, 1, 22, 3, 34, 5));
    /* no index tensor at all (x[:] = v, x[:] += v) */
    tn_tensor *nn[2] = {NULL, NULL};
    EXPECT(tn_index_put(y, nn, 2, FVALS(TN_F32, 1, 2, 3)), TN_F32, SH(2, 3), VALS(1, 2, 3, 1, 2, 3));
    EXPECT(tn_index_put(y, nn, 1, FVALS(TN_F32, 1, 2, 3), .accumulate = true), TN_F32, SH(2, 3), VALS(1, 3, 5, 4, 6, 8));
    /* accumulate through not-adjacent indices with duplicates, on a transposed target */
    tn_tensor *w = layout(tn_zeros(SH(2, 3, 4), TN_F64), 1);
    tn_tensor *ixw[3] = {IDX(1, 1, 0), NULL, IDX(3, 3, 0)};
    tn_index_put_(w, ixw, 3, mk_vals(TN_F64, SH(3, 1), (const double[]){1, 2, 4}), .accumulate = true);
    double ew[24] = {0};
    for (int j = 0; j < 3; j++) { ew[1 * 12 + j * 4 + 3] = 3; ew[0 * 12 + j * 4 + 0] = 4; }
    EXPECT_SH(w, TN_F64, SH(2, 3, 4), ew, 24);
    /* empty index: nothing changes */
    tn_tensor *ix4[1] = {tn_zeros(SH(0), TN_I64)};
    EXPECT(tn_index_put(z, ix4, 1, tn_scalar_tensor(5, TN_F32)), TN_F32, SH(2, 3), VALS(0, 0, 0, 0, 0, 0));
    END;
}

TEST(index_put_errors) {
    BEGIN;
    tn_tensor *x = tn_zeros(SH(3, 4), TN_F32);
    tn_tensor *i3 = IDX(3), *im = IDX(-4), *i0 = IDX(0, 1), *f = FVALS(TN_F32, 0);
    tn_tensor *v3 = tn_ones(SH(3), TN_F32), *v13 = tn_ones(SH(1, 2, 4), TN_F32), *s = tn_scalar_tensor(1, TN_F32);
    tn_tensor *m = tn_ones(SH(4), TN_BOOL);
    tn_tensor *vd = tn_ones(SH(4), TN_F64), *vi = tn_scalar_tensor(1, TN_I64);
    ERRS_BEGIN;
    { tn_tensor *ix[1] = {i3}; CHECK_ERR(tn_index_put(x, ix, 1, s), "out of bounds"); }
    { tn_tensor *ix[1] = {im}; CHECK_ERR(tn_index_put_(x, ix, 1, s, .accumulate = true), "out of bounds"); }
    { tn_tensor *ix[1] = {f}; CHECK_ERR(tn_index_put(x, ix, 1, s), "int64 or int32"); }
    { tn_tensor *ix[1] = {i0}; CHECK_ERR(tn_index_put(x, ix, 1, v3), "shape mismatch"); }
    { tn_tensor *ix[1] = {i0}; CHECK_ERR(tn_index_put_(x, ix, 1, v13, .accumulate = true), "shape mismatch"); }
    { tn_tensor *ix[1] = {m}; CHECK_ERR(tn_index_put_(x, ix, 1, s), "does not match"); }
    ERRS_END;
    EXPECT(tn_sum(x), TN_F32, SH0, VALS(0));
    /* a values tensor of another dtype (not a wrapped number) is refused by PyTorch:
       "Index put requires the source and destination dtypes match, got Float for the
       destination and Double for the source" */
    tn_tensor *x2 = tn_zeros(SH(3, 4), TN_F32);
    ERRS_BEGIN;
    { tn_tensor *ix[1] = {i0}; CHECK_ERR(tn_index_put(x2, ix, 1, vd), "dtypes match"); }
    { tn_tensor *ix[1] = {i0}; CHECK_ERR(tn_index_put_(x2, ix, 1, vi, .accumulate = true), "dtypes match"); }
    ERRS_END;
    END;
}

/* ----------------------------------------------------- masked_fill / select */

static double cast_to(double v, tn_dtype dt) {
    switch (dt) {
    case TN_F32: return (float)v;
    case TN_BOOL: return v != 0;
    case TN_I32: case TN_I64: return trunc(v);
    default: return v;
    }
}

TEST(masked_fill_values) {
    BEGIN;
    double exp[64];
    const bool m3[3] = {true, false, true}, m21[2] = {false, true};
    bool m23[6];
    for (int i = 0; i < 6; i++) m23[i] = mbit(i);
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++) {
            tn_dtype dt = DTS[di];
            const double val = -2.75; /* int: -2 (toward zero, as torch), bool: true */
            double cv = cast_to(val, dt);
            tn_tensor *x = mkx(dt, SH(2, 3), kind);
            /* [3] mask broadcasts over rows */
            for (int i = 0; i < 6; i++) exp[i] = m3[i % 3] ? cv : fv(i, dt);
            EXPECT_SH(tn_masked_fill(x, mk_bool(m3, SH(3)), val), dt, SH(2, 3), exp, 6);
            /* [2,1] mask */
            for (int i = 0; i < 6; i++) exp[i] = m21[i / 3] ? cv : fv(i, dt);
            EXPECT_SH(tn_masked_fill(x, mk_bool(m21, SH(2, 1)), val), dt, SH(2, 3), exp, 6);
            /* full mask in another layout */
            for (int i = 0; i < 6; i++) exp[i] = m23[i] ? cv : fv(i, dt);
            tn_tensor *mf = layout(mk_bool(m23, SH(2, 3)), (kind + 1) % NKINDS);
            EXPECT_SH(tn_masked_fill(x, mf, val), dt, SH(2, 3), exp, 6);
            /* 0-d masks */
            for (int i = 0; i < 6; i++) exp[i] = cv;
            EXPECT_SH(tn_masked_fill(x, tn_scalar_tensor(1, TN_BOOL), val), dt, SH(2, 3), exp, 6);
            for (int i = 0; i < 6; i++) exp[i] = fv(i, dt);
            EXPECT_SH(tn_masked_fill(x, tn_scalar_tensor(0, TN_BOOL), val), dt, SH(2, 3), exp, 6);
            /* x itself untouched; in place writes x (non-contiguous for kind > 0) */
            EXPECT_SH(x, dt, SH(2, 3), exp, 6);
            for (int i = 0; i < 6; i++) exp[i] = m23[i] ? cv : fv(i, dt);
            int64_t v0 = tn_version(x);
            tn_tensor *r = tn_masked_fill_(x, mf, val);
            CHECK(r == x && tn_version(x) > v0);
            EXPECT_SH(x, dt, SH(2, 3), exp, 6);
        }
    /* value cast: int tensor takes 2.7 -> 2, -2.7 -> -2 (torch) */
    tn_tensor *xi = FVALS(TN_I64, 1, 2);
    tn_tensor *mi = BOOLS(true, false);
    EXPECT(tn_masked_fill(xi, mi, 2.7), TN_I64, SH(2), VALS(2, 2));
    EXPECT(tn_masked_fill(xi, mi, -2.7), TN_I64, SH(2), VALS(-2, 2));
    EXPECT(tn_masked_fill(tn_to_dtype(xi, TN_I32), mi, 7), TN_I32, SH(2), VALS(7, 2));
    /* NaN into a float tensor */
    EXPECT(tn_masked_fill(tn_zeros(SH(3), TN_F64), BOOLS(true, false, true), NAN), TN_F64, SH(3), VALS(NAN, 0, NAN));
    /* 0-d input with 0-d mask; 0-sized input */
    EXPECT(tn_masked_fill(tn_scalar_tensor(3, TN_F32), tn_scalar_tensor(1, TN_BOOL), 9), TN_F32, SH0, VALS(9));
    EXPECT(tn_masked_fill(tn_zeros(SH(0, 3), TN_F32), BOOLS(true, false, true), 9), TN_F32, SH(0, 3), NOVALS);
    /* expanded mask of stride 0 */
    EXPECT(tn_masked_fill(tn_zeros(SH(2, 2), TN_F32), tn_expand(tn_scalar_tensor(1, TN_BOOL), SH(2, 2)), 4), TN_F32, SH(2, 2), VALS(4, 4, 4, 4));
    END;
}

TEST(masked_fill_broadcast_self) {
    BEGIN;
    /* torch.zeros(3).masked_fill(torch.ones(2,3,dtype=bool), 1) -> [[1,1,1],[1,1,1]]: the
       out-of-place form broadcasts self against the mask */
    EXPECT(tn_masked_fill(tn_zeros(SH(3), TN_F32), tn_ones(SH(2, 3), TN_BOOL), 1), TN_F32, SH(2, 3), VALS(1, 1, 1, 1, 1, 1));
    /* torch.tensor(5.).masked_fill(tensor([True, False]), 1) -> [1., 5.] */
    EXPECT(tn_masked_fill(tn_scalar_tensor(5, TN_F32), BOOLS(true, false), 1), TN_F32, SH(2), VALS(1, 5));
    /* ...but the in-place form cannot grow self */
    tn_tensor *x = tn_zeros(SH(3), TN_F32), *m = tn_ones(SH(2, 3), TN_BOOL);
    ERRS_BEGIN;
    CHECK_ERR(tn_masked_fill_(x, m, 1), "");
    ERRS_END;
    END;
}

TEST(masked_fill_errors) {
    BEGIN;
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32);
    tn_tensor *mi = tn_ones(SH(2, 3), TN_I64), *mu = tn_ones(SH(2, 3), TN_U8), *mf = tn_ones(SH(3), TN_F32);
    tn_tensor *m4 = tn_ones(SH(4), TN_BOOL), *m32 = tn_ones(SH(3, 2), TN_BOOL);
    ERRS_BEGIN;
    CHECK_ERR(tn_masked_fill(x, mi, 1), "bool");
    CHECK_ERR(tn_masked_fill_(x, mi, 1), "bool");
    CHECK_ERR(tn_masked_fill(x, mu, 1), "bool");
    CHECK_ERR(tn_masked_fill(x, mf, 1), "bool");
    CHECK_ERR(tn_masked_fill(x, m4, 1), "");
    CHECK_ERR(tn_masked_fill_(x, m32, 1), "");
    CHECK(tn_last_error()[0] != 0);
    ERRS_END;
    EXPECT(tn_sum(x), TN_F32, SH0, VALS(0));
    END;
}

TEST(masked_select_values) {
    BEGIN;
    double exp[64];
    const bool m3[3] = {true, false, true}, m21[2] = {false, true};
    bool m23[6];
    for (int i = 0; i < 6; i++) m23[i] = mbit(i + 2);
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++) {
            tn_dtype dt = DTS[di];
            tn_tensor *x = mkx(dt, SH(2, 3), kind);
            int64_t n = 0;
            for (int i = 0; i < 6; i++) if (m3[i % 3]) exp[n++] = fv(i, dt);
            EXPECT_SH(tn_masked_select(x, mk_bool(m3, SH(3))), dt, SH(n), exp, n);
            n = 0;
            for (int i = 0; i < 6; i++) if (m21[i / 3]) exp[n++] = fv(i, dt);
            EXPECT_SH(tn_masked_select(x, mk_bool(m21, SH(2, 1))), dt, SH(n), exp, n);
            n = 0;
            for (int i = 0; i < 6; i++) if (m23[i]) exp[n++] = fv(i, dt);
            EXPECT_SH(tn_masked_select(x, layout(mk_bool(m23, SH(2, 3)), kind)), dt, SH(n), exp, n);
            /* input [3] broadcast against a [2,3] mask */
            tn_tensor *x3 = mkx(dt, SH(3), kind);
            n = 0;
            for (int i = 0; i < 6; i++) if (m23[i]) exp[n++] = fv(i % 3, dt);
            EXPECT_SH(tn_masked_select(x3, mk_bool(m23, SH(2, 3))), dt, SH(n), exp, n);
            /* 0-d masks select everything or nothing */
            for (int i = 0; i < 6; i++) exp[i] = fv(i, dt);
            EXPECT_SH(tn_masked_select(x, tn_scalar_tensor(1, TN_BOOL)), dt, SH(6), exp, 6);
            EXPECT(tn_masked_select(x, tn_scalar_tensor(0, TN_BOOL)), dt, SH(0), NOVALS);
        }
    /* 0-d input with a 1-d mask; 0-d input with 0-d mask */
    EXPECT(tn_masked_select(tn_scalar_tensor(4, TN_I64), BOOLS(true, false, true)), TN_I64, SH(2), VALS(4, 4));
    EXPECT(tn_masked_select(tn_scalar_tensor(4, TN_I64), tn_scalar_tensor(1, TN_BOOL)), TN_I64, SH(1), VALS(4));
    EXPECT(tn_masked_select(tn_zeros(SH(0, 3), TN_F32), BOOLS(true, true, true)), TN_F32, SH(0), NOVALS);
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32), *mi = tn_ones(SH(3), TN_I64), *m4 = tn_ones(SH(4), TN_BOOL);
    ERRS_BEGIN;
    CHECK_ERR(tn_masked_select(x, mi), "bool");
    CHECK_ERR(tn_masked_select(x, m4), "broadcast");
    ERRS_END;
    END;
}

/* ---------------------------------------------------------------- nonzero */

TEST(nonzero_values) {
    BEGIN;
    const tn_dtype dts[] = {TN_F32, TN_F64, TN_I64, TN_I32, TN_BOOL};
    struct { int nd; int64_t s[3]; } shapes[] = {{2, {3, 4}}, {3, {2, 3, 4}}, {1, {9}}, {2, {0, 3}}, {3, {2, 1, 5}}};
    double exp[512];
    int64_t o[3];
    for (int di = 0; di < 5; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
                tn_dtype dt = dts[di];
                int nd = shapes[c].nd;
                tn_tensor *x = mkx(dt, shapes[c].s, nd, kind);
                int64_t n = 0, cnt = 0;
                for (int64_t i = 0; i < numel_of(shapes[c].s, nd); i++) {
                    if (fv(i, dt) == 0) continue;
                    cnt++;
                    unravel(i, shapes[c].s, nd, o);
                    for (int d = 0; d < nd; d++) exp[n++] = (double)o[d];
                }
                EXPECT_SH(tn_nonzero(x), TN_I64, SH(cnt, nd), exp, n);
            }
    /* 0-d: [1, 0] or [0, 0]; NaN counts as nonzero */
    EXPECT(tn_nonzero(tn_scalar_tensor(5, TN_F32)), TN_I64, SH(1, 0), NOVALS);
    EXPECT(tn_nonzero(tn_scalar_tensor(0, TN_F32)), TN_I64, SH(0, 0), NOVALS);
    EXPECT(tn_nonzero(FVALS(TN_F32, 0, NAN, -0.0, 1e-30)), TN_I64, SH(2, 1), VALS(1, 3));
    /* expanded input */
    EXPECT(tn_nonzero(tn_expand(tn_unsqueeze(FVALS(TN_I64, 0, 3), 0), SH(2, 2))), TN_I64, SH(2, 2), VALS(0, 1, 1, 1));
    END;
}

/* ------------------------------------------------------------------ where */

TEST(where_values) {
    BEGIN;
    double exp[64];
    bool cv[6];
    for (int i = 0; i < 6; i++) cv[i] = mbit(i);
    for (int kind = 0; kind < NKINDS; kind++) {
        /* cond [2,1,3], a [4,1] int64, b [3] float32 -> [2,4,3] float32 */
        tn_tensor *c = layout(mk_bool(cv, SH(2, 1, 3)), kind);
        tn_tensor *a = mkx(TN_I64, SH(4, 1), kind), *b = mkx_base(TN_F32, SH(3), kind, 10);
        int64_t n = 0;
        for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) for (int k = 0; k < 3; k++)
            exp[n++] = cv[i * 3 + k] ? fv(j, TN_I64) : fv(k + 10, TN_F32);
        EXPECT_SH(tn_where(c, a, b), TN_F32, SH(2, 4, 3), exp, n);
        /* the other way round, and same-dtype */
        n = 0;
        for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) for (int k = 0; k < 3; k++)
            exp[n++] = cv[i * 3 + k] ? fv(k + 10, TN_F32) : fv(j, TN_I64);
        EXPECT_SH(tn_where(c, b, a), TN_F32, SH(2, 4, 3), exp, n);
        tn_tensor *x = mkx(TN_F64, SH(2, 3), kind), *y = mkx_base(TN_F64, SH(2, 3), (kind + 1) % NKINDS, 20);
        tn_tensor *c23 = layout(mk_bool(cv, SH(2, 3)), (kind + 2) % NKINDS);
        for (int i = 0; i < 6; i++) exp[i] = cv[i] ? fv(i, TN_F64) : fv(i + 20, TN_F64);
        EXPECT_SH(tn_where(c23, x, y), TN_F64, SH(2, 3), exp, 6);
        tn_tensor *bx = mkx(TN_BOOL, SH(2, 3), kind), *by = mkx_base(TN_BOOL, SH(2, 3), kind, 1);
        for (int i = 0; i < 6; i++) exp[i] = cv[i] ? fv(i, TN_BOOL) : fv(i + 1, TN_BOOL);
        EXPECT_SH(tn_where(c23, bx, by), TN_BOOL, SH(2, 3), exp, 6);
    }
    /* dtype promotion table (torch.where) */
    tn_tensor *c = BOOLS(true, false);
    EXPECT(tn_where(c, FVALS(TN_I64, 1, 2), FVALS(TN_F32, 3, 4)), TN_F32, SH(2), VALS(1, 4));
    EXPECT(tn_where(c, FVALS(TN_I32, 1, 2), FVALS(TN_I64, 3, 4)), TN_I64, SH(2), VALS(1, 4));
    EXPECT(tn_where(c, FVALS(TN_F32, 1, 2), FVALS(TN_F64, 3, 4)), TN_F64, SH(2), VALS(1, 4));
    EXPECT(tn_where(c, FVALS(TN_BOOL, 1, 1), FVALS(TN_I64, 3, 4)), TN_I64, SH(2), VALS(1, 4));
    EXPECT(tn_where(c, FVALS(TN_I64, 1, 2), tn_scalar_tensor(1.5, TN_F64)), TN_F64, SH(2), VALS(1, 1.5));
    EXPECT(tn_where(c, FVALS(TN_F32, 1, 2), tn_scalar_tensor(3, TN_F64)), TN_F32, SH(2), VALS(1, 3));
    EXPECT(tn_where(c, FVALS(TN_I64, 1, 2), tn_scalar(1.5)), TN_F32, SH(2), VALS(1, 1.5));
    EXPECT(tn_where(c, FVALS(TN_I32, 1, 2), tn_scalar_int(3)), TN_I32, SH(2), VALS(1, 3));
    /* two Python scalars: torch.where(c, 1.5, 0) is float32, torch.where(c, 1, 2) int64 */
    EXPECT(tn_where(c, tn_scalar(1.5), tn_scalar_int(0)), TN_F32, SH(2), VALS(1.5, 0));
    EXPECT(tn_where(c, tn_scalar_int(1), tn_scalar_int(2)), TN_I64, SH(2), VALS(1, 2));
    EXPECT(tn_where(c, tn_scalar_bool(true), FVALS(TN_BOOL, 0, 0)), TN_BOOL, SH(2), VALS(1, 0));
    /* all three 0-d; a 0-sized broadcast */
    EXPECT(tn_where(tn_scalar_tensor(0, TN_BOOL), tn_scalar_tensor(1, TN_I64), tn_scalar_tensor(2, TN_I64)), TN_I64, SH0, VALS(2));
    EXPECT(tn_where(tn_zeros(SH(0, 1), TN_BOOL), tn_ones(SH(3), TN_F32), tn_scalar(0)), TN_F32, SH(0, 3), NOVALS);
    tn_tensor *ci = FVALS(TN_I64, 1, 0), *a3 = tn_ones(SH(3), TN_F32), *a2 = tn_ones(SH(2), TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_where(ci, a2, a2), "condition");
    CHECK_ERR(tn_where(c, a3, a2), "broadcast");
    ERRS_END;
    END;
}

/* -------------------------------------------------------------------- cat */

/* Reference cat of fv tensors with bases bases[i] along d. */
static int64_t ref_cat(double *exp, tn_dtype dt, const int64_t (*shapes)[3], const int64_t *bases, int n, int nd, int d, int64_t *os) {
    memcpy(os, shapes[0], (size_t)nd * sizeof(int64_t));
    os[d] = 0;
    for (int i = 0; i < n; i++) os[d] += shapes[i][d];
    int64_t o[3], tot = numel_of(os, nd);
    for (int64_t l = 0; l < tot; l++) {
        unravel(l, os, nd, o);
        int i = 0;
        while (o[d] >= shapes[i][d]) o[d] -= shapes[i++][d];
        exp[l] = fv(ravel(o, shapes[i], nd) + bases[i], dt);
    }
    return tot;
}

TEST(cat_values) {
    BEGIN;
    struct { int n, nd; int64_t dim; int64_t s[3][3]; } cases[] = {
        {2, 2, 1, {{2, 3}, {2, 2}}},
        {2, 2, -1, {{2, 3}, {2, 1}}},
        {3, 2, 0, {{2, 3}, {1, 3}, {3, 3}}},
        {2, 2, -2, {{1, 4}, {2, 4}}},
        {3, 3, 1, {{2, 1, 3}, {2, 3, 3}, {2, 2, 3}}},
        {2, 3, -1, {{2, 2, 3}, {2, 2, 1}}},
        {2, 2, 0, {{2, 3}, {0, 3}}},   /* 0-sized piece */
        {1, 1, 0, {{4}}},              /* single tensor */
        {2, 1, -1, {{3}, {2}}},
    };
    const int64_t bases[3] = {0, 30, 60};
    double exp[256];
    int64_t os[3];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                int n = cases[c].n, nd = cases[c].nd;
                tn_tensor *ts[3];
                for (int i = 0; i < n; i++) ts[i] = mkx_base(dt, cases[c].s[i], nd, (kind + i) % NKINDS, bases[i]);
                int64_t tot = ref_cat(exp, dt, (const int64_t (*)[3])cases[c].s, bases, n, nd, wrapd(cases[c].dim, nd), os);
                tn_tensor *r = tn_cat(ts, n, .dim = cases[c].dim);
                EXPECT_ARR(r, dt, os, nd, exp, tot);
                CHECK(r && tn_is_contiguous(r) && !tn_same_storage(r, ts[0]));
            }
    END;
}

TEST(cat_promotion_and_legacy_empty) {
    BEGIN;
    tn_tensor *ts[3];
    ts[0] = FVALS(TN_I64, 1, 2); ts[1] = FVALS(TN_F32, 0.5, 3);
    EXPECT(tn_cat(ts, 2), TN_F32, SH(4), VALS(1, 2, 0.5, 3));
    ts[0] = FVALS(TN_I32, 1, 2); ts[1] = FVALS(TN_I64, -3);
    EXPECT(tn_cat(ts, 2), TN_I64, SH(3), VALS(1, 2, -3));
    ts[0] = FVALS(TN_BOOL, 1, 0); ts[1] = FVALS(TN_I64, 5);
    EXPECT(tn_cat(ts, 2, .dim = -1), TN_I64, SH(3), VALS(1, 0, 5));
    ts[0] = FVALS(TN_F32, 1.5); ts[1] = FVALS(TN_F64, 2.25); ts[2] = FVALS(TN_I64, 4);
    EXPECT(tn_cat(ts, 3), TN_F64, SH(3), VALS(1.5, 2.25, 4));
    ts[0] = FVALS(TN_BOOL, 1); ts[1] = FVALS(TN_BOOL, 0);
    EXPECT(tn_cat(ts, 2), TN_BOOL, SH(2), VALS(1, 0));
    /* 0-d wrapped numbers do not weigh less in cat: they cannot take part at all */
    /* legacy empty [0] tensors are skipped (but take part in the dtype) */
    tn_tensor *a = mkx(TN_F32, SH(2, 3), 1), *e = tn_zeros(SH(0), TN_F32), *b = mkx_base(TN_F32, SH(1, 3), 2, 6);
    ts[0] = a; ts[1] = e; ts[2] = b;
    EXPECT(tn_cat(ts, 3), TN_F32, SH(3, 3), VALS(-3.5, -3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5));
    ts[0] = e; ts[1] = a;
    EXPECT(tn_cat(ts, 2, .dim = 1), TN_F32, SH(2, 3), VALS(-3.5, -3, -2.5, -2, -1.5, -1));
    EXPECT(tn_cat(ts, 2, .dim = -1), TN_F32, SH(2, 3), VALS(-3.5, -3, -2.5, -2, -1.5, -1));
    ts[0] = a; ts[1] = tn_zeros(SH(0), TN_F64); /* torch.cat([ones(2,3), tensor([]).double()]) is float64 */
    EXPECT(tn_cat(ts, 2), TN_F64, SH(2, 3), VALS(-3.5, -3, -2.5, -2, -1.5, -1));
    ts[0] = e; ts[1] = tn_zeros(SH(0), TN_F64);
    EXPECT(tn_cat(ts, 2), TN_F64, SH(0), NOVALS);
    /* an expanded input, a [2,0] piece */
    ts[0] = tn_expand(tn_unsqueeze(FVALS(TN_I64, 7, 8), 0), SH(2, 2)); ts[1] = tn_zeros(SH(2, 0), TN_I64); ts[2] = FVALS(TN_I64, 1, 2);
    ts[2] = tn_unsqueeze(ts[2], 1);
    EXPECT(tn_cat(ts, 3, .dim = 1), TN_I64, SH(2, 3), VALS(7, 8, 1, 7, 8, 2));
    END;
}

TEST(cat_errors) {
    BEGIN;
    tn_tensor *a = tn_zeros(SH(2, 3), TN_F32), *b = tn_zeros(SH(2, 4), TN_F32), *c = tn_zeros(SH(3), TN_F32);
    tn_tensor *s = tn_scalar_tensor(1, TN_F32), *c1 = tn_zeros(SH(1, 2, 3), TN_F32);
    ERRS_BEGIN;
    { tn_tensor *ts[2] = {a, b}; CHECK_ERR(tn_cat(ts, 2), "sizes of tensors must match"); }
    { tn_tensor *ts[2] = {a, b}; CHECK_ERR(tn_cat(ts, 2, .dim = -2), "sizes of tensors must match"); }
    { tn_tensor *ts[2] = {a, c}; CHECK_ERR(tn_cat(ts, 2), "same number of dimensions"); }
    { tn_tensor *ts[2] = {a, c1}; CHECK_ERR(tn_cat(ts, 2), "same number of dimensions"); }
    { tn_tensor *ts[2] = {s, s}; CHECK_ERR(tn_cat(ts, 2), "zero-dimensional"); }
    { tn_tensor *ts[2] = {a, s}; CHECK_ERR(tn_cat(ts, 2), "zero-dimensional"); }
    { tn_tensor *ts[2] = {a, a}; CHECK_ERR(tn_cat(ts, 2, .dim = 2), "out of range"); }
    { tn_tensor *ts[2] = {a, a}; CHECK_ERR(tn_cat(ts, 2, .dim = -3), "out of range"); }
    CHECK_ERR(tn_cat(&a, 0), "non-empty");
    ERRS_END;
    END;
}

/* ------------------------------------------------------------------ stack */

TEST(stack_values) {
    BEGIN;
    double exp[256];
    int64_t o[4];
    const int64_t s[2] = {2, 3};
    const int64_t dims[] = {0, 1, 2, -1, -2, -3};
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++) {
                tn_dtype dt = DTS[di];
                tn_tensor *ts[3];
                for (int i = 0; i < 3; i++) ts[i] = mkx_base(dt, s, 2, (kind + i) % NKINDS, 10 * i);
                int d = wrapd(dims[c], 3);
                int64_t os[3], k = 0;
                for (int i = 0, j = 0; i < 3; i++) os[i] = i == d ? 3 : s[j++];
                for (int64_t l = 0; l < 18; l++) {
                    unravel(l, os, 3, o);
                    int64_t r[2], which = o[d];
                    for (int i = 0, j = 0; i < 3; i++) if (i != d) r[j++] = o[i];
                    exp[k++] = fv(ravel(r, s, 2) + 10 * which, dt);
                }
                EXPECT_ARR(tn_stack(ts, 3, .dim = dims[c]), dt, os, 3, exp, 18);
            }
    /* 0-d inputs stack to [n]; 1 tensor; 0-sized */
    tn_tensor *ss[2] = {tn_scalar_tensor(1, TN_F32), tn_scalar_tensor(2, TN_F32)};
    EXPECT(tn_stack(ss, 2), TN_F32, SH(2), VALS(1, 2));
    EXPECT(tn_stack(ss, 2, .dim = -1), TN_F32, SH(2), VALS(1, 2));
    tn_tensor *one = FVALS(TN_I64, 4, 5);
    EXPECT(tn_stack(&one, 1, .dim = 1), TN_I64, SH(2, 1), VALS(4, 5));
    tn_tensor *zz[2] = {tn_zeros(SH(0, 2), TN_F32), tn_zeros(SH(0, 2), TN_F32)};
    EXPECT(tn_stack(zz, 2, .dim = 1), TN_F32, SH(0, 2, 2), NOVALS);
    /* dtype promotion as cat */
    tn_tensor *mix[2] = {FVALS(TN_I64, 1), FVALS(TN_F64, 0.5)};
    EXPECT(tn_stack(mix, 2), TN_F64, SH(2, 1), VALS(1, 0.5));
    tn_tensor *a = tn_zeros(SH(2, 3), TN_F32), *b = tn_zeros(SH(3, 2), TN_F32), *c = tn_zeros(SH(6), TN_F32);
    ERRS_BEGIN;
    { tn_tensor *ts[2] = {a, b}; CHECK_ERR(tn_stack(ts, 2), "equal size"); }
    { tn_tensor *ts[3] = {a, a, c}; CHECK_ERR(tn_stack(ts, 3), "equal size"); }
    { tn_tensor *ts[2] = {a, a}; CHECK_ERR(tn_stack(ts, 2, .dim = 3), "out of range"); }
    { tn_tensor *ts[2] = {a, a}; CHECK_ERR(tn_stack(ts, 2, .dim = -4), "out of range"); }
    { tn_tensor *ts[2] = {ss[0], ss[1]}; CHECK_ERR(tn_stack(ts, 2, .dim = 1), "out of range"); }
    CHECK_ERR(tn_stack(&a, 0), "non-empty");
    ERRS_END;
    END;
}

/* ------------------------------------------------------- split / chunk */

/* pieces of x (fv over [5,7] in layout kind) along d have sizes `sizes`, are views and hold the right values */
static void check_pieces(int line, tn_tensor *x, tn_dtype dt, const int64_t *xs, int d, tn_tensor **out, int got, const int64_t *sizes, int n) {
    if (got != n) { FAILED_(line, "got %d pieces, expected %d (%s)", got, n, tn_last_error()); return; }
    tn_test_passed++;
    int64_t start = 0, o[2];
    double exp[64];
    for (int p = 0; p < n; p++) {
        int64_t ps[2] = {xs[0], xs[1]};
        ps[d] = sizes[p];
        int64_t m = numel_of(ps, 2);
        for (int64_t l = 0; l < m; l++) {
            unravel(l, ps, 2, o);
            o[d] += start;
            exp[l] = fv(ravel(o, xs, 2), dt);
        }
        expect_(line, "piece", out[p], dt, ps, 2, exp, m);
        if (out[p] && tn_same_storage(out[p], x)) tn_test_passed++;
        else FAILED_(line, "piece %d is not a view of the input", p);
        start += sizes[p];
    }
}

TEST(split_chunk_values) {
    BEGIN;
    const int64_t xs[2] = {5, 7};
    tn_tensor *out[16];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++) {
            tn_dtype dt = DTS[di];
            tn_tensor *x = mkx(dt, xs, 2, kind);
            /* split: uneven last piece */
            CHECK(tn_split(x, 3, NULL, 0, .dim = 1) == 3);
            check_pieces(__LINE__, x, dt, xs, 1, out, tn_split(x, 3, out, 16, .dim = 1), (const int64_t[]){3, 3, 1}, 3);
            check_pieces(__LINE__, x, dt, xs, 0, out, tn_split(x, 2, out, 16, .dim = -2), (const int64_t[]){2, 2, 1}, 3);
            check_pieces(__LINE__, x, dt, xs, 1, out, tn_split(x, 7, out, 16, .dim = -1), (const int64_t[]){7}, 1);
            check_pieces(__LINE__, x, dt, xs, 1, out, tn_split(x, 10, out, 16, .dim = -1), (const int64_t[]){7}, 1);
            check_pieces(__LINE__, x, dt, xs, 0, out, tn_split(x, 1, out, 16), (const int64_t[]){1, 1, 1, 1, 1}, 5);
            /* split_sizes, zero-sized pieces allowed */
            CHECK(tn_split_sizes(x, ((const int64_t[]){1, 4, 2}), 3, NULL, 0, .dim = 1) == 3);
            check_pieces(__LINE__, x, dt, xs, 1, out, tn_split_sizes(x, ((const int64_t[]){1, 4, 2}), 3, out, 16, .dim = -1), (const int64_t[]){1, 4, 2}, 3);
            check_pieces(__LINE__, x, dt, xs, 0, out, tn_split_sizes(x, ((const int64_t[]){0, 5, 0}), 3, out, 16), (const int64_t[]){0, 5, 0}, 3);
            /* chunk: torch.chunk semantics */
            CHECK(tn_chunk(x, 3, NULL, 0) == 3);
            check_pieces(__LINE__, x, dt, xs, 0, out, tn_chunk(x, 3, out, 16), (const int64_t[]){2, 2, 1}, 3); /* 5 in 3 */
            check_pieces(__LINE__, x, dt, xs, 1, out, tn_chunk(x, 4, out, 16, .dim = 1), (const int64_t[]){2, 2, 2, 1}, 4); /* 7 in 4 */
            check_pieces(__LINE__, x, dt, xs, 1, out, tn_chunk(x, 3, out, 16, .dim = -1), (const int64_t[]){3, 3, 1}, 3);
            check_pieces(__LINE__, x, dt, xs, 0, out, tn_chunk(x, 9, out, 16, .dim = -2), (const int64_t[]){1, 1, 1, 1, 1}, 5); /* fewer than asked */
            check_pieces(__LINE__, x, dt, xs, 0, out, tn_chunk(x, 1, out, 16), (const int64_t[]){5}, 1);
        }
    /* 6 in 4 chunks -> 2,2,2 (three chunks); 4 in 6 -> four chunks of 1 */
    tn_tensor *a6 = tn_arange(0, 6, 1, TN_I64);
    CHECK(tn_chunk(a6, 4, NULL, 0) == 3);
    CHECK(tn_chunk(a6, 4, out, 16) == 3);
    EXPECT(out[0], TN_I64, SH(2), VALS(0, 1));
    EXPECT(out[1], TN_I64, SH(2), VALS(2, 3));
    EXPECT(out[2], TN_I64, SH(2), VALS(4, 5));
    tn_tensor *a4 = tn_arange(0, 4, 1, TN_I64);
    CHECK(tn_chunk(a4, 6, out, 16) == 4);
    EXPECT(out[3], TN_I64, SH(1), VALS(3));
    /* an empty dim: torch.empty(0).chunk(3) gives 3 empty pieces, split(0) one */
    tn_tensor *e = tn_zeros(SH(0), TN_F32);
    CHECK(tn_chunk(e, 3, out, 16) == 3);
    EXPECT(out[2], TN_F32, SH(0), NOVALS);
    CHECK(tn_split(e, 0, out, 16) == 1);
    EXPECT(out[0], TN_F32, SH(0), NOVALS);
    CHECK(tn_split(e, 2, out, 16) == 1);
    /* many pieces: torch.arange(5000).split(1) has 5000 */
    tn_tensor *big = tn_arange(0, 5000, 1, TN_F32);
    CHECK_MSG(tn_split(big, 1, NULL, 0) == 5000, "tn_split into 5000 pieces: %s", tn_last_error());
    CHECK_MSG(tn_chunk(big, 5000, NULL, 0) == 5000, "tn_chunk into 5000 pieces: %s", tn_last_error());
    /* pieces are views: writing one changes the input */
    tn_tensor *w = tn_zeros(SH(2, 4), TN_F32);
    CHECK(tn_chunk(w, 2, out, 16, .dim = 1) == 2);
    tn_fill_(out[1], 3);
    EXPECT(w, TN_F32, SH(2, 4), VALS(0, 0, 3, 3, 0, 0, 3, 3));
    CHECK(tn_split(tn_t(w), 3, out, 16) == 2); /* transposed input: views with its strides */
    CHECK(tn_same_storage(out[1], w));
    EXPECT(out[1], TN_F32, SH(1, 2), VALS(3, 3));
    END;
}

TEST(split_chunk_errors) {
    BEGIN;
    tn_tensor *x = tn_zeros(SH(5, 7), TN_F32), *s = tn_scalar_tensor(1, TN_F32), *out[4];
    ERRS_BEGIN;
    CHECK_ERR(tn_split_sizes(x, ((const int64_t[]){2, 2}), 2, out, 4) >= 0, "sum");
    CHECK_ERR(tn_split_sizes(x, ((const int64_t[]){3, 3, 3}), 3, NULL, 0, .dim = 1) >= 0, "sum");
    CHECK_ERR(tn_split_sizes(x, ((const int64_t[]){6, -1}), 2, out, 4) >= 0, "non-negative");
    CHECK_ERR(tn_split_sizes(x, ((const int64_t[]){1, 1, 1, 1, 1}), 5, out, 4) >= 0, "max_out");
    CHECK_ERR(tn_split(x, 0, out, 4) >= 0, "split_size");
    CHECK_ERR(tn_split(x, -1, out, 4) >= 0, "split_size");
    CHECK_ERR(tn_split(x, 1, out, 4, .dim = 2) >= 0, "out of range");
    CHECK_ERR(tn_split(x, 1, out, 4, .dim = -3) >= 0, "out of range");
    CHECK_ERR(tn_split(s, 1, out, 4) >= 0, "0-dim");
    CHECK_ERR(tn_chunk(x, 0, out, 4) >= 0, "greater than 0");
    CHECK_ERR(tn_chunk(x, -2, out, 4) >= 0, "greater than 0");
    CHECK_ERR(tn_chunk(s, 2, out, 4) >= 0, "0-dim");
    CHECK_ERR(tn_chunk(x, 2, out, 4, .dim = 5) >= 0, "out of range");
    ERRS_END;
    END;
}

/* ------------------------------------------------------------------- flip */

TEST(flip_values) {
    BEGIN;
    const int64_t xs[3] = {2, 3, 4};
    struct { int n; int64_t dims[3]; } cases[] = {{1, {0}}, {1, {-1}}, {1, {1}}, {2, {0, 2}}, {2, {-1, -3}}, {3, {0, 1, 2}}, {0, {0}}};
    double exp[64];
    int64_t o[3];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                tn_tensor *x = mkx(dt, xs, 3, kind);
                bool fl[3] = {false, false, false};
                for (int i = 0; i < cases[c].n; i++) fl[wrapd(cases[c].dims[i], 3)] = true;
                for (int64_t l = 0; l < 24; l++) {
                    unravel(l, xs, 3, o);
                    for (int d = 0; d < 3; d++) if (fl[d]) o[d] = xs[d] - 1 - o[d];
                    exp[l] = fv(ravel(o, xs, 3), dt);
                }
                tn_tensor *r = tn_flip(x, cases[c].dims, cases[c].n);
                EXPECT_ARR(r, dt, xs, 3, exp, 24);
                CHECK(r && !tn_same_storage(r, x));
            }
    EXPECT(tn_flip(tn_scalar_tensor(5, TN_F32), SH(0)), TN_F32, SH0, VALS(5));
    EXPECT(tn_flip(tn_zeros(SH(0, 2), TN_F32), SH(0, 1)), TN_F32, SH(0, 2), NOVALS);
    EXPECT(tn_flip(tn_expand(tn_unsqueeze(FVALS(TN_I64, 1, 2, 3), 0), SH(2, 3)), SH(-1)), TN_I64, SH(2, 3), VALS(3, 2, 1, 3, 2, 1));
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_flip(x, SH(0, 0)), "multiple times");
    CHECK_ERR(tn_flip(x, SH(1, -1)), "multiple times");
    CHECK_ERR(tn_flip(x, SH(2)), "out of range");
    CHECK_ERR(tn_flip(x, SH(-3)), "out of range");
    ERRS_END;
    END;
}

/* ------------------------------------------------------------------- roll */

static int64_t pmod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

TEST(roll_values) {
    BEGIN;
    const int64_t xs[2] = {3, 4};
    struct { int n; int64_t sh[2], dims[2]; } cases[] = {
        {1, {1}, {0}}, {1, {-1}, {1}}, {1, {6}, {-1}}, {1, {-13}, {-2}}, {2, {1, -1}, {0, 1}},
        {2, {2, 5}, {1, 1}}, /* the same dim twice: shifts add up */
        {0, {5}, {0}},       /* flattened */
        {0, {-14}, {0}},
        {1, {0}, {0}},
    };
    double exp[64];
    int64_t o[2];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                tn_tensor *x = mkx(dt, xs, 2, kind);
                for (int64_t l = 0; l < 12; l++) {
                    if (cases[c].n == 0) { exp[l] = fv(pmod(l - cases[c].sh[0], 12), dt); continue; }
                    unravel(l, xs, 2, o);
                    for (int i = 0; i < cases[c].n; i++) {
                        int d = wrapd(cases[c].dims[i], 2);
                        o[d] = pmod(o[d] - cases[c].sh[i], xs[d]);
                    }
                    exp[l] = fv(ravel(o, xs, 2), dt);
                }
                tn_tensor *r = tn_roll(x, cases[c].sh, cases[c].dims, cases[c].n);
                EXPECT_ARR(r, dt, xs, 2, exp, 12);
                CHECK(r && !tn_same_storage(r, x));
            }
    /* torch.roll(arange(5), 2) = [3,4,0,1,2]; shifts larger than the size wrap */
    tn_tensor *a = tn_arange(0, 5, 1, TN_I64);
    EXPECT(tn_roll(a, L(2), L(-1), 1), TN_I64, SH(5), VALS(3, 4, 0, 1, 2));
    EXPECT(tn_roll(a, L(-1), L(0), 1), TN_I64, SH(5), VALS(1, 2, 3, 4, 0));
    EXPECT(tn_roll(a, L(12), NULL, 0), TN_I64, SH(5), VALS(3, 4, 0, 1, 2));
    EXPECT(tn_roll(a, L(-7), L(0), 1), TN_I64, SH(5), VALS(2, 3, 4, 0, 1));
    /* 0-d and empty inputs */
    EXPECT(tn_roll(tn_scalar_tensor(5, TN_F32), L(1), NULL, 0), TN_F32, SH0, VALS(5));
    EXPECT(tn_roll(tn_zeros(SH(0, 3), TN_F32), L(1), L(0), 1), TN_F32, SH(0, 3), NOVALS);
    EXPECT(tn_roll(tn_zeros(SH(0, 3), TN_F32), L(1), NULL, 0), TN_F32, SH(0, 3), NOVALS);
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_roll(x, L(1), L(2), 1), "out of range");
    CHECK_ERR(tn_roll(x, L(1, 1), L(0, -3), 2), "out of range");
    /* torch.roll(tensor(5.), 1, 0): "Dimension specified as 0 but tensor has no dimensions" */
    CHECK_ERR(tn_roll(tn_scalar_tensor(5, TN_F32), L(1), L(0), 1), "");
    ERRS_END;
    END;
}

/* ----------------------------------------------------------------- repeat */

TEST(repeat_values) {
    BEGIN;
    const int64_t xs[2] = {2, 3};
    struct { int n; int64_t r[4]; } cases[] = {{2, {1, 1}}, {2, {2, 3}}, {3, {2, 1, 2}}, {4, {1, 2, 1, 1}}, {2, {0, 2}}, {3, {3, 0, 1}}};
    double exp[512];
    int64_t o[4];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                int n = cases[c].n, lead = n - 2;
                tn_tensor *x = mkx(dt, xs, 2, kind);
                int64_t os[4];
                for (int i = 0; i < n; i++) os[i] = cases[c].r[i] * (i < lead ? 1 : xs[i - lead]);
                int64_t m = numel_of(os, n);
                for (int64_t l = 0; l < m; l++) {
                    unravel(l, os, n, o);
                    int64_t s[2] = {o[lead] % xs[0], o[lead + 1] % xs[1]};
                    exp[l] = fv(ravel(s, xs, 2), dt);
                }
                tn_tensor *r = tn_repeat(x, cases[c].r, n);
                EXPECT_ARR(r, dt, os, n, exp, m);
                CHECK(r && !tn_same_storage(r, x));
            }
    EXPECT(tn_repeat(tn_scalar_tensor(5, TN_I64), SH(2, 3)), TN_I64, SH(2, 3), VALS(5, 5, 5, 5, 5, 5));
    EXPECT(tn_repeat(tn_scalar_tensor(5, TN_I64), NULL, 0), TN_I64, SH0, VALS(5));
    EXPECT(tn_repeat(FVALS(TN_F32, 1, 2, 3), SH(2)), TN_F32, SH(6), VALS(1, 2, 3, 1, 2, 3));
    EXPECT(tn_repeat(tn_expand(FVALS(TN_F32, 4), SH(3)), SH(2)), TN_F32, SH(6), VALS(4, 4, 4, 4, 4, 4));
    EXPECT(tn_repeat(tn_zeros(SH(0, 2), TN_F32), SH(3, 2)), TN_F32, SH(0, 4), NOVALS);
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_repeat(x, SH(2)), "smaller");
    CHECK_ERR(tn_repeat(x, NULL, 0), "smaller");
    CHECK_ERR(tn_repeat(x, SH(1, -1)), "negative");
    ERRS_END;
    END;
}

/* ------------------------------------------------------------ tril / triu */

TEST(tril_triu_values) {
    BEGIN;
    struct { int nd; int64_t s[3]; } shapes[] = {{2, {4, 4}}, {2, {3, 5}}, {2, {5, 3}}, {3, {2, 3, 4}}, {2, {0, 3}}, {2, {1, 1}}};
    const int64_t diags[] = {-1, 0, 2, -6, 6};
    double exp[64];
    int64_t o[3];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
                for (size_t k = 0; k < sizeof diags / sizeof diags[0]; k++)
                    for (int lower = 0; lower < 2; lower++) {
                        tn_dtype dt = DTS[di];
                        int nd = shapes[c].nd;
                        tn_tensor *x = mkx(dt, shapes[c].s, nd, kind);
                        int64_t m = numel_of(shapes[c].s, nd);
                        for (int64_t l = 0; l < m; l++) {
                            unravel(l, shapes[c].s, nd, o);
                            int64_t diff = o[nd - 1] - o[nd - 2];
                            bool keep = lower ? diff <= diags[k] : diff >= diags[k];
                            exp[l] = keep ? fv(l, dt) : 0;
                        }
                        tn_tensor *r = lower ? tn_tril(x, .diagonal = diags[k]) : tn_triu(x, .diagonal = diags[k]);
                        EXPECT_ARR(r, dt, shapes[c].s, nd, exp, m);
                    }
    tn_tensor *v = tn_zeros(SH(4), TN_F32), *s = tn_scalar_tensor(1, TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_tril(v), "at least 2");
    CHECK_ERR(tn_triu(s), "at least 2");
    ERRS_END;
    END;
}

/* -------------------------------------------------------------------- pad */

TEST(pad_values) {
    BEGIN;
    struct { int nd; int64_t s[4]; int n; int64_t pad[8]; } cases[] = {
        {1, {4}, 2, {1, 2}},
        {1, {4}, 2, {-1, 2}},
        {1, {4}, 2, {2, -3}},         /* torch: [9, 9, x0] */
        {1, {4}, 2, {-3, 2}},
        {1, {4}, 2, {-2, -2}},        /* empty result */
        {2, {2, 3}, 2, {0, 1}},
        {2, {2, 3}, 4, {1, 1, 2, 0}},
        {2, {2, 3}, 4, {-1, 0, 1, -1}},
        {3, {2, 3, 2}, 6, {0, 0, 0, 0, 1, 1}},
        {3, {2, 3, 2}, 4, {1, 0, -1, 2}},
        {4, {2, 1, 2, 3}, 8, {1, 0, 0, 1, 1, 1, 0, 2}},
        {4, {2, 1, 2, 3}, 2, {0, 0}},
        {2, {0, 3}, 4, {1, 1, 1, 0}},  /* 0-sized input dim */
    };
    const double val = -4.5;
    double exp[512];
    int64_t o[4];
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                tn_dtype dt = DTS[di];
                int nd = cases[c].nd;
                const int64_t *xs = cases[c].s;
                tn_tensor *x = mkx(dt, xs, nd, kind);
                int64_t os[4], left[4] = {0, 0, 0, 0};
                memcpy(os, xs, sizeof os);
                for (int i = 0; i < cases[c].n / 2; i++) {
                    int d = nd - 1 - i;
                    left[d] = cases[c].pad[2 * i];
                    os[d] += cases[c].pad[2 * i] + cases[c].pad[2 * i + 1];
                }
                int64_t m = numel_of(os, nd);
                for (int64_t l = 0; l < m; l++) {
                    unravel(l, os, nd, o);
                    bool in = true;
                    for (int d = 0; d < nd; d++) { o[d] -= left[d]; in = in && o[d] >= 0 && o[d] < xs[d]; }
                    exp[l] = in ? fv(ravel(o, xs, nd), dt) : cast_to(val, dt);
                }
                EXPECT_ARR(tn_pad(x, cases[c].pad, cases[c].n, .value = val), dt, os, nd, exp, m);
            }
    /* torch: F.pad(arange(4.), (-3, 2), value=9) = [3, 9, 9]; int value cast */
    EXPECT(tn_pad(tn_arange(0, 4, 1, TN_F32), SH(-3, 2), .value = 9), TN_F32, SH(3), VALS(3, 9, 9));
    EXPECT(tn_pad(tn_arange(0, 2, 1, TN_I64), SH(1, 1), .value = 7.9), TN_I64, SH(4), VALS(7, 0, 1, 7));
    EXPECT(tn_pad(tn_scalar_tensor(2, TN_F32), NULL, 0, .value = 1), TN_F32, SH0, VALS(2));
    EXPECT(tn_pad(tn_expand(FVALS(TN_F32, 1), SH(2, 2)), SH(0, 1)), TN_F32, SH(2, 3), VALS(1, 1, 0, 1, 1, 0));
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32);
    ERRS_BEGIN;
    CHECK_ERR(tn_pad(x, SH(1)), "even");
    CHECK_ERR(tn_pad(x, SH(1, 1, 1)), "even");
    CHECK_ERR(tn_pad(x, SH(1, 1, 1, 1, 1, 1)), "twice the number of dims");
    CHECK_ERR(tn_pad(x, SH(-2, -2)), "negative output size");
    CHECK_ERR(tn_pad(x, SH(0, 0, -3, 0)), "");
    ERRS_END;
    END;
}

/* -------------------------------------------------- NULL inputs propagate */

TEST(null_inputs) {
    BEGIN;
    tn_tensor *x = tn_zeros(SH(2, 3), TN_F32), *i = IDX(0);
    tn_clear_error();
    CHECK(tn_index_select(NULL, 0, i) == NULL);
    CHECK(tn_gather(x, 0, NULL) == NULL);
    CHECK(tn_scatter(x, 0, NULL, x) == NULL);
    CHECK(tn_masked_fill(NULL, NULL, 1) == NULL);
    CHECK(tn_where(NULL, x, x) == NULL);
    CHECK(tn_flip(NULL, SH(0)) == NULL);
    CHECK(tn_pad(NULL, SH(1, 1)) == NULL);
    CHECK(tn_split(NULL, 1, NULL, 0) == -1);
    { tn_tensor *ts[2] = {x, NULL}; CHECK(tn_cat(ts, 2) == NULL); CHECK(tn_stack(ts, 2) == NULL); }
    CHECK(tn_last_error()[0] == 0); /* no new message for a NULL input */
    END;
}

int main(void) {
    RUN(index_select_values);
    RUN(index_select_edges);
    RUN(index_select_errors);
    RUN(gather_values);
    RUN(gather_edges);
    RUN(gather_errors);
    RUN(scatter_values);
    RUN(scatter_add_values);
    RUN(scatter_edges);
    RUN(scatter_into_expanded);
    RUN(inplace_aliasing);
    RUN(scatter_errors);
    RUN(index_int_tensors);
    RUN(index_bool_masks);
    RUN(index_zero_dim_bool);
    RUN(index_errors);
    RUN(index_put_values);
    RUN(index_put_errors);
    RUN(masked_fill_values);
    RUN(masked_fill_broadcast_self);
    RUN(masked_fill_errors);
    RUN(masked_select_values);
    RUN(nonzero_values);
    RUN(where_values);
    RUN(cat_values);
    RUN(cat_promotion_and_legacy_empty);
    RUN(cat_errors);
    RUN(stack_values);
    RUN(split_chunk_values);
    RUN(split_chunk_errors);
    RUN(flip_values);
    RUN(roll_values);
    RUN(repeat_values);
    RUN(tril_triu_values);
    RUN(pad_values);
    RUN(null_inputs);
    CHECK(live_tensors() == 0);
    return tn_test_report();
}
