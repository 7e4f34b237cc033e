/* test_tensor.c — the tensor core of tensor.h against PyTorch's behaviour.
 *
 * Data model (dtypes, promotion, result_type), ownership (refcounts, scopes,
 * memory statistics), creation, the Philox RNG, views, and printing. Expected
 * values were produced with PyTorch 1.13 and are hard-coded here; the test does
 * not need PyTorch to run.
 *
 * Values are read back element by element through shape/strides/data pointer
 * (elem() below), not through the library's own copy kernels, so a bug in a
 * conversion kernel cannot hide itself. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid: checks that could crash run in a child process */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#include <stdlib.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* Storage offset (in elements) of the i-th element in row-major order. */
static int64_t flat_offset(const tn_tensor *t, int64_t i) {
    int64_t off = 0;
    for (int d = tn_ndim(t) - 1; d >= 0; d--) {
        int64_t s = tn_shape(t)[d];
        if (s == 0) return 0;
        off += (i % s) * tn_strides(t)[d];
        i /= s;
    }
    return off;
}

static double elem(const tn_tensor *t, int64_t i) {
    const char *p = (const char *)tn_data_ptr(t);
    int64_t o = flat_offset(t, i);
    switch (tn_get_dtype(t)) {
    case TN_F32: return ((const float *)p)[o];
    case TN_F64: return ((const double *)p)[o];
    case TN_I32: return ((const int32_t *)p)[o];
    case TN_I64: return (double)((const int64_t *)p)[o];
    case TN_U8: return ((const uint8_t *)p)[o];
    case TN_BOOL: return ((const bool *)p)[o] ? 1.0 : 0.0;
    default: return NAN;
    }
}

static int64_t elem_i64(const tn_tensor *t, int64_t i) {
    return ((const int64_t *)tn_data_ptr(t))[flat_offset(t, i)];
}

static char vals_msg[2048];

/* t has exactly the n values e (row-major), within tol (NaN matches NaN). */
static bool vals_match(tn_tensor *t, const double *e, int64_t n, double tol) {
    if (!t) { snprintf(vals_msg, sizeof vals_msg, "NULL tensor (last error: %s)", tn_last_error()); return false; }
    if (tn_numel(t) != n) { snprintf(vals_msg, sizeof vals_msg, "numel %lld, expected %lld", (long long)tn_numel(t), (long long)n); return false; }
    for (int64_t i = 0; i < n; i++) {
        double v = elem(t, i);
        if (v != v && e[i] != e[i]) continue;
        if (v == e[i] || fabs(v - e[i]) <= tol) continue;
        snprintf(vals_msg, sizeof vals_msg, "element %lld = %.17g, expected %.17g", (long long)i, v, e[i]);
        return false;
    }
    return true;
}

static bool shape_match(tn_tensor *t, const int64_t *s, int nd) {
    if (!t) { snprintf(vals_msg, sizeof vals_msg, "NULL tensor (last error: %s)", tn_last_error()); return false; }
    bool ok = tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_shape(t)[i] == s[i];
    if (!ok) {
        int n = snprintf(vals_msg, sizeof vals_msg, "shape [");
        for (int i = 0; i < tn_ndim(t); i++) n += snprintf(vals_msg + n, sizeof vals_msg - (size_t)n, i ? ", %lld" : "%lld", (long long)tn_shape(t)[i]);
        snprintf(vals_msg + n, sizeof vals_msg - (size_t)n, "]");
    }
    return ok;
}

static bool strides_match(tn_tensor *t, const int64_t *s, int nd) {
    if (!t) { snprintf(vals_msg, sizeof vals_msg, "NULL tensor (last error: %s)", tn_last_error()); return false; }
    bool ok = tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_strides(t)[i] == s[i];
    if (!ok) {
        int n = snprintf(vals_msg, sizeof vals_msg, "strides (");
        for (int i = 0; i < tn_ndim(t); i++) n += snprintf(vals_msg + n, sizeof vals_msg - (size_t)n, i ? ", %lld" : "%lld", (long long)tn_strides(t)[i]);
        snprintf(vals_msg + n, sizeof vals_msg - (size_t)n, ")");
    }
    return ok;
}

/* Run fn in a child process, so that a crash (signal, division by zero, sanitizer abort
   on undefined behaviour) fails one check instead of ending the whole test program.
   fn returns true when everything it checked was right. */
static bool in_child(bool (*fn)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { snprintf(vals_msg, sizeof vals_msg, "fork failed"); return false; }
    if (pid == 0) {
        bool ok = fn();
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) { snprintf(vals_msg, sizeof vals_msg, "waitpid failed"); return false; }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return true;
    if (WIFSIGNALED(st)) snprintf(vals_msg, sizeof vals_msg, "crashed: killed by signal %d", WTERMSIG(st));
    else snprintf(vals_msg, sizeof vals_msg, "wrong result or sanitizer report (exit status %d)", WEXITSTATUS(st));
    return false;
}
#define CHECK_IN_CHILD(fn) CHECK_MSG(in_child(fn), "%s: %s", #fn, vals_msg)

#define CHECK_VALS(t, ...) do { const double e_[] = {__VA_ARGS__}; \
    CHECK_MSG(vals_match((t), e_, (int64_t)(sizeof e_ / sizeof e_[0]), 0), "%s: %s", #t, vals_msg); } while (0)
#define CHECK_VALS_TOL(t, tol, ...) do { const double e_[] = {__VA_ARGS__}; \
    CHECK_MSG(vals_match((t), e_, (int64_t)(sizeof e_ / sizeof e_[0]), (tol)), "%s: %s", #t, vals_msg); } while (0)
#define CHECK_SHAPE(t, ...) CHECK_MSG(shape_match((t), TN_SHAPE(__VA_ARGS__)), "%s: %s, expected [%s]", #t, vals_msg, #__VA_ARGS__)
#define CHECK_SHAPE0(t) CHECK_MSG((t) && tn_ndim(t) == 0, "%s should be 0-d", #t)
#define CHECK_STRIDES(t, ...) CHECK_MSG(strides_match((t), TN_SHAPE(__VA_ARGS__)), "%s: %s, expected (%s)", #t, vals_msg, #__VA_ARGS__)
#define CHECK_DTYPE(t, d) CHECK_MSG((t) && tn_get_dtype(t) == (d), "%s: dtype %s, expected %s", #t, (t) ? tn_dtype_name(tn_get_dtype(t)) : "NULL", tn_dtype_name(d))

#define STRIDES(...) (const int64_t[]){__VA_ARGS__}

/* 1-d tensors from literals */
#define F32V(...) tn_from_data((const float[]){__VA_ARGS__}, (const int64_t[]){(int64_t)(sizeof((const float[]){__VA_ARGS__}) / sizeof(float))}, 1, TN_F32)
#define F64V(...) tn_from_data((const double[]){__VA_ARGS__}, (const int64_t[]){(int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))}, 1, TN_F64)
#define I32V(...) tn_from_data((const int32_t[]){__VA_ARGS__}, (const int64_t[]){(int64_t)(sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t))}, 1, TN_I32)
#define I64V(...) tn_from_data((const int64_t[]){__VA_ARGS__}, (const int64_t[]){(int64_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))}, 1, TN_I64)
#define U8V(...) tn_from_data((const uint8_t[]){__VA_ARGS__}, (const int64_t[]){(int64_t)(sizeof((const uint8_t[]){__VA_ARGS__}) / sizeof(uint8_t))}, 1, TN_U8)
#define BOOLV(...) tn_from_data((const bool[]){__VA_ARGS__}, (const int64_t[]){(int64_t)(sizeof((const bool[]){__VA_ARGS__}) / sizeof(bool))}, 1, TN_BOOL)

/* repr check: tn_to_string(t) must equal PyTorch's repr exactly */
#define CHECK_REPR(t, expected) do { char *s_ = tn_to_string(t); \
    CHECK_MSG(s_ && strcmp(s_, expected) == 0, "repr of %s:\n--- got:\n%s\n--- expected:\n%s", #t, s_ ? s_ : "(NULL)", expected); \
    tn_string_free(s_); } while (0)

/* Every test must leave the library's memory exactly as it found it. */
#define RUN_CLEAN(name) do { tn_memory_stats b_ = tn_memory_stats_get(); int d_ = tn_scope_depth(); RUN(name); \
    tn_memory_stats a_ = tn_memory_stats_get(); \
    CHECK_MSG(a_.live_tensors == b_.live_tensors && a_.live_storages == b_.live_storages && a_.live_bytes == b_.live_bytes, \
        "%s leaked: tensors %lld -> %lld, storages %lld -> %lld, bytes %lld -> %lld", #name, \
        (long long)b_.live_tensors, (long long)a_.live_tensors, (long long)b_.live_storages, (long long)a_.live_storages, \
        (long long)b_.live_bytes, (long long)a_.live_bytes); \
    CHECK_MSG(tn_scope_depth() == d_, "%s left scope depth %d", #name, tn_scope_depth()); } while (0)

static const tn_dtype all6[6] = {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL};

/* ======================================================================== */
/* 1. data model                                                             */
/* ======================================================================== */
TEST(dtype_names_sizes) {
    const char *names[TN_NUM_DTYPES] = {"float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16", "int8", "int16", "complex64", "complex128"};
    const size_t sizes[TN_NUM_DTYPES] = {4, 8, 4, 8, 1, 1, 2, 2, 1, 2, 8, 16};
    const bool fl[TN_NUM_DTYPES] = {true, true, false, false, false, false, true, true, false, false, false, false};   /* complex is not floating, as torch's is_floating_point */
    for (int d = 0; d < TN_NUM_DTYPES; d++) {
        CHECK_MSG(strcmp(tn_dtype_name((tn_dtype)d), names[d]) == 0, "dtype %d name %s", d, tn_dtype_name((tn_dtype)d));
        CHECK_MSG(tn_dtype_size((tn_dtype)d) == sizes[d], "dtype %d size %zu", d, tn_dtype_size((tn_dtype)d));
        CHECK_MSG(tn_dtype_is_floating((tn_dtype)d) == fl[d], "dtype %d is_floating", d);
    }
    CHECK(strcmp(tn_dtype_name(TN_NUM_DTYPES), "invalid") == 0);
    CHECK(tn_dtype_size(TN_NUM_DTYPES) == 0);
    CHECK(TN_F32 == 0); /* zero-initialised options mean float32 */
    CHECK(strcmp(tn_device_name(TN_CPU), "cpu") == 0);
    CHECK(strcmp(tn_device_name(TN_CUDA), "cuda") == 0);
    CHECK(sizeof(bool) == 1); /* TN_BOOL data is C bool */
}

TEST(promote_types_table) {
    /* torch.promote_types over (float32, float64, int32, int64, uint8, bool) */
    static const tn_dtype expect[6][6] = {
        {TN_F32, TN_F64, TN_F32, TN_F32, TN_F32, TN_F32},
        {TN_F64, TN_F64, TN_F64, TN_F64, TN_F64, TN_F64},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_I32, TN_I32},
        {TN_F32, TN_F64, TN_I64, TN_I64, TN_I64, TN_I64},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_U8},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL},
    };
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            CHECK_MSG(tn_promote_types(all6[i], all6[j]) == expect[i][j], "promote(%s, %s) = %s, expected %s",
                      tn_dtype_name(all6[i]), tn_dtype_name(all6[j]), tn_dtype_name(tn_promote_types(all6[i], all6[j])),
                      tn_dtype_name(expect[i][j]));
}

static tn_dtype rt2(tn_tensor *a, tn_tensor *b) {
    tn_tensor *ts[2] = {a, b};
    return tn_result_type(ts, 2);
}
#define CHECK_RT(a, b, want) do { tn_dtype r_ = rt2((a), (b)); \
    CHECK_MSG(r_ == (want), "result_type(%s, %s) = %s, expected %s", #a, #b, tn_dtype_name(r_), tn_dtype_name(want)); } while (0)

TEST(result_type_rules) {
    tn_scope_begin();
    tn_tensor *i32 = tn_zeros(TN_SHAPE(2), TN_I32), *u8 = tn_zeros(TN_SHAPE(2), TN_U8), *f32 = tn_zeros(TN_SHAPE(2), TN_F32);
    tn_tensor *i64 = tn_zeros(TN_SHAPE(2), TN_I64), *f64 = tn_zeros(TN_SHAPE(2), TN_F64), *b = tn_zeros(TN_SHAPE(2), TN_BOOL);
    tn_tensor *z_f64 = tn_scalar_tensor(1, TN_F64), *z_i64 = tn_scalar_tensor(1, TN_I64), *z_i32 = tn_scalar_tensor(1, TN_I32);
    tn_tensor *z_u8 = tn_scalar_tensor(1, TN_U8), *z_b = tn_scalar_tensor(1, TN_BOOL);
    tn_tensor *s_f = tn_scalar(2.5), *s_i = tn_scalar_int(2), *s_b = tn_scalar_bool(true);

    /* the wrapped numbers themselves */
    CHECK_SHAPE0(s_f); CHECK_DTYPE(s_f, TN_F64); CHECK(s_f->is_wrapped_number); CHECK_VALS(s_f, 2.5);
    CHECK_SHAPE0(s_i); CHECK_DTYPE(s_i, TN_I64); CHECK(s_i->is_wrapped_number); CHECK_VALS(s_i, 2);
    CHECK_SHAPE0(s_b); CHECK_DTYPE(s_b, TN_BOOL); CHECK(s_b->is_wrapped_number); CHECK_VALS(s_b, 1);
    CHECK(!z_f64->is_wrapped_number);

    /* torch.result_type, checked with PyTorch 1.13 */
    CHECK_RT(i32, s_f, TN_F32);      /* int32 tensor + 2.5 */
    CHECK_RT(u8, s_i, TN_U8);        /* uint8 tensor + 2 */
    CHECK_RT(i32, z_f64, TN_F64);    /* int tensor + 0-d float64: a higher category keeps its dtype */
    CHECK_RT(f32, z_f64, TN_F32);    /* same category: the dimensioned tensor wins */
    CHECK_RT(z_i64, u8, TN_U8);
    CHECK_RT(u8, z_i64, TN_U8);
    CHECK_RT(b, s_i, TN_I64);
    CHECK_RT(b, s_f, TN_F32);
    CHECK_RT(b, s_b, TN_BOOL);
    CHECK_RT(z_i32, s_f, TN_F32);    /* 0-d int32 + 2.5 */
    CHECK_RT(z_f64, s_i, TN_F64);
    CHECK_RT(z_i32, z_i64, TN_I64);
    CHECK_RT(z_b, s_i, TN_I64);
    CHECK_RT(u8, z_f64, TN_F64);
    CHECK_RT(i64, z_f64, TN_F64);
    CHECK_RT(f64, s_f, TN_F64);
    CHECK_RT(z_f64, z_i64, TN_F64);
    CHECK_RT(b, z_u8, TN_U8);
    CHECK_RT(b, z_i32, TN_I32);
    CHECK_RT(i32, i64, TN_I64);
    CHECK_RT(u8, b, TN_U8);
    CHECK_RT(s_f, i32, TN_F32);      /* order does not matter */
    CHECK_RT(i64, s_f, TN_F32);
    CHECK_RT(f32, s_i, TN_F32);
    {   /* three operands: uint8 tensor, 0-d int64, 2.5 -> float32 (as (u8 + 0-d) + 2.5) */
        tn_tensor *ts[3] = {u8, z_i64, s_f};
        CHECK(tn_result_type(ts, 3) == TN_F32);
        tn_tensor *ts2[3] = {u8, z_i64, s_i};
        CHECK(tn_result_type(ts2, 3) == TN_U8);
    }

    /* the ops follow the same rules */
    tn_tensor *r = tn_add(I32V(1, 2), s_f);
    CHECK_DTYPE(r, TN_F32); CHECK_VALS(r, 3.5, 4.5);
    r = tn_mul(U8V(200, 3), s_i);          /* uint8 stays uint8 and wraps, as torch */
    CHECK_DTYPE(r, TN_U8); CHECK_VALS(r, 144, 6);
    r = tn_add_scalar(I32V(1, 2), 2);      /* an integral double acts as a Python int */
    CHECK_DTYPE(r, TN_I32); CHECK_VALS(r, 3, 4);
    r = tn_add_scalar(I32V(1, 2), 2.5);
    CHECK_DTYPE(r, TN_F32); CHECK_VALS(r, 3.5, 4.5);
    r = tn_add(F32V(1, 2), z_f64);
    CHECK_DTYPE(r, TN_F32); CHECK_VALS(r, 2, 3);
    r = tn_add(I32V(1, 2), z_f64);
    CHECK_DTYPE(r, TN_F64); CHECK_VALS(r, 2, 3);
    r = tn_add(z_i64, U8V(250, 1));
    CHECK_DTYPE(r, TN_U8); CHECK_VALS(r, 251, 2);
    r = tn_add(BOOLV(true, false), s_b);   /* bool + True: logical or in torch (True + True = True) */
    CHECK_DTYPE(r, TN_BOOL); CHECK_VALS(r, 1, 1);
    tn_scope_end();
}

TEST(broadcast_shapes) {
    int64_t out[TN_MAX_DIMS];
    CHECK(tn_broadcast_shapes(TN_SHAPE(2, 1, 3), TN_SHAPE(4, 1), out) == 3);
    CHECK(out[0] == 2 && out[1] == 4 && out[2] == 3);
    CHECK(tn_broadcast_shapes(NULL, 0, TN_SHAPE(5), out) == 1 && out[0] == 5);
    CHECK(tn_broadcast_shapes(TN_SHAPE(0, 1), TN_SHAPE(3), out) == 2 && out[0] == 0 && out[1] == 3);
    CHECK(tn_broadcast_shapes(TN_SHAPE(1), TN_SHAPE(0), out) == 1 && out[0] == 0);
    CHECK_ERR(tn_broadcast_shapes(TN_SHAPE(2, 3), TN_SHAPE(4), out) >= 0, "");
    CHECK_ERR(tn_broadcast_shapes(TN_SHAPE(2), TN_SHAPE(0), out) >= 0, "");
}

/* ======================================================================== */
/* 2. ownership                                                              */
/* ======================================================================== */
TEST(refcounts_and_stats) {
    tn_memory_stats s0 = tn_memory_stats_get();
    tn_tensor *t = tn_zeros(TN_SHAPE(4), TN_F32);    /* no scope: caller owns it */
    tn_memory_stats s1 = tn_memory_stats_get();
    CHECK(s1.live_tensors == s0.live_tensors + 1);
    CHECK(s1.live_storages == s0.live_storages + 1);
    CHECK(s1.live_bytes == s0.live_bytes + 16);
    CHECK(t->refcount == 1);
    CHECK(tn_retain(t) == t);
    CHECK(t->refcount == 2);
    tn_release(t);
    CHECK(t->refcount == 1);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 1);
    tn_release(t);
    tn_memory_stats s2 = tn_memory_stats_get();
    CHECK(s2.live_tensors == s0.live_tensors);
    CHECK(s2.live_storages == s0.live_storages);
    CHECK(s2.live_bytes == s0.live_bytes);
    tn_release(NULL); /* no-op */

    /* bytes per dtype */
    for (int i = 0; i < 6; i++) {
        tn_tensor *u = tn_empty(TN_SHAPE(3, 5), all6[i]);
        CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes + 15 * (int64_t)tn_dtype_size(all6[i]));
        tn_release(u);
    }
    /* a 0-sized tensor holds no bytes but is a live tensor and storage */
    tn_tensor *e = tn_empty(TN_SHAPE(0, 7), TN_F64);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 1);
    tn_release(e);

    /* peak */
    tn_memory_stats_reset_peak();
    CHECK(tn_memory_stats_get().peak_bytes == s0.live_bytes);
    tn_tensor *a = tn_empty(TN_SHAPE(1000), TN_F32);
    tn_tensor *b = tn_empty(TN_SHAPE(500), TN_F64);
    CHECK(tn_memory_stats_get().peak_bytes == s0.live_bytes + 8000);
    tn_release(a);
    tn_tensor *c = tn_empty(TN_SHAPE(100), TN_U8);
    CHECK(tn_memory_stats_get().peak_bytes == s0.live_bytes + 8000); /* not exceeded */
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes + 4100);
    tn_release(b);
    tn_release(c);
    CHECK(tn_memory_stats_get().peak_bytes == s0.live_bytes + 8000);
    tn_memory_stats_reset_peak();
    CHECK(tn_memory_stats_get().peak_bytes == tn_memory_stats_get().live_bytes);
}

TEST(views_keep_storage_alive) {
    tn_memory_stats s0 = tn_memory_stats_get();
    tn_tensor *base = tn_arange(0, 12, 1, TN_F32);
    tn_tensor *v = tn_view(base, TN_SHAPE(3, 4));
    tn_tensor *w = tn_select(v, 0, 2);   /* row 2: 8, 9, 10, 11 */
    CHECK(tn_same_storage(base, v) && tn_same_storage(v, w));
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 3);
    CHECK(tn_memory_stats_get().live_storages == s0.live_storages + 1);
    CHECK(base->storage->refcount == 3);
    tn_release(base);
    tn_release(v);
    /* w and its base (a view keeps its base tensor, as PyTorch's ._base) */
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 2);
    CHECK(tn_memory_stats_get().live_storages == s0.live_storages + 1);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes + 48);
    CHECK_VALS(w, 8, 9, 10, 11);
    CHECK(tn_storage_offset(w) == 8);
    tn_release(w);
    CHECK(tn_memory_stats_get().live_storages == s0.live_storages);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes);
}

TEST(scopes) {
    tn_memory_stats s0 = tn_memory_stats_get();
    CHECK(tn_scope_depth() == 0);
    tn_scope_begin();
    CHECK(tn_scope_depth() == 1);
    tn_tensor *outer = tn_ones(TN_SHAPE(2), TN_F32);
    tn_tensor *kept_to_outer = NULL, *plain;
    tn_scope_begin();
    CHECK(tn_scope_depth() == 2);
    plain = tn_ones(TN_SHAPE(3), TN_F32);
    (void)plain;
    kept_to_outer = tn_keep(tn_add(outer, outer));
    CHECK(kept_to_outer && kept_to_outer->refcount == 2);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 3);
    tn_scope_begin();
    CHECK(tn_scope_depth() == 3);
    for (int i = 0; i < 200; i++) tn_mul_scalar(outer, i); /* grows the scope list past its first block */
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 203);
    tn_scope_end();
    CHECK(tn_scope_depth() == 2);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 3);
    tn_scope_end();
    CHECK(tn_scope_depth() == 1);
    /* plain is gone, kept_to_outer survives into the outer scope */
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 2);
    CHECK(kept_to_outer->refcount == 1);
    CHECK_VALS(kept_to_outer, 2, 2);

    /* tn_keep at the outermost scope hands the tensor to the caller */
    tn_tensor *mine = tn_keep(tn_full(TN_SHAPE(2), 7, TN_I32));
    CHECK(mine->refcount == 2);
    tn_scope_end();
    CHECK(tn_scope_depth() == 0);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors + 1);
    CHECK(mine->refcount == 1);
    CHECK_VALS(mine, 7, 7);
    /* with no scope open tn_keep changes nothing */
    CHECK(tn_keep(mine) == mine);
    CHECK(mine->refcount == 1);
    CHECK(tn_keep(NULL) == NULL);
    tn_release(mine);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors);

    /* tn_scope_end with nothing open is an error, not a crash */
    tn_clear_error();
    tn_scope_end();
    CHECK(strstr(tn_last_error(), "no scope") != NULL);
    CHECK(tn_scope_depth() == 0);

    /* a retained tensor outlives its scope; releasing it frees it */
    tn_scope_begin();
    tn_tensor *r = tn_retain(tn_zeros(TN_SHAPE(5), TN_F64));
    tn_scope_end();
    CHECK(r->refcount == 1);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes + 40);
    tn_release(r);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes);

    /* keep through two levels */
    tn_scope_begin();
    tn_scope_begin();
    tn_scope_begin();
    tn_tensor *deep = tn_keep(tn_arange(0, 3, 1, TN_I64));
    tn_scope_end();
    deep = tn_keep(deep);
    tn_scope_end();
    CHECK(tn_scope_depth() == 1);
    CHECK(deep->refcount == 1);
    CHECK_VALS(deep, 0, 1, 2);
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors);
}

/* A dozen ops per iteration, 10,000 iterations: memory must stay exactly flat. */
TEST(scoped_loop_is_flat) {
    tn_memory_stats base = tn_memory_stats_get();
    tn_scope_begin();
    tn_tensor *w = tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(4, 3));
    tn_tensor *idx = I64V(2, 0);
    tn_scope_begin(); /* so that w and idx are not part of the per-iteration scope */
    tn_memory_stats after1 = {0, 0, 0, 0}, afterN = {0, 0, 0, 0};
    double checksum1 = 0, checksumN = 0;
    for (int it = 1; it <= 10000; it++) {
        tn_scope_begin();
        tn_tensor *x = tn_full(TN_SHAPE(2, 4), (double)(it % 3), TN_F32);
        tn_tensor *y = tn_add(x, tn_ones(TN_SHAPE(4), TN_F32));   /* [2,4] */
        tn_tensor *z = tn_mul(y, y);
        tn_tensor *m = tn_matmul(z, w);                           /* [2,3] */
        tn_tensor *r = tn_reshape(m, TN_SHAPE(3, 2));
        tn_tensor *tr = tn_transpose(r, 0, 1);                    /* [2,3] view */
        tn_tensor *e = tn_exp(tn_mul_scalar(tr, 1e-3));
        tn_tensor *wh = tn_where(tn_gt_scalar(e, 1.5), e, tn_neg(e));
        tn_tensor *ct = tn_cat(((tn_tensor *const[]){wh, m}), 2); /* [4,3] */
        tn_tensor *is = tn_index_select(ct, 0, idx);              /* [2,3] */
        tn_tensor *sm = tn_softmax(is, -1);
        tn_tensor *cl = tn_clone(sm);
        tn_tensor *s = tn_sum(cl);
        double v = tn_item(s);
        if (it == 1) checksum1 = v;
        if (it == 10000) checksumN = v;
        tn_scope_end();
        if (it == 1) after1 = tn_memory_stats_get();
        if (it == 10000) afterN = tn_memory_stats_get();
    }
    CHECK_CLOSE(checksum1, 2.0, 1e-5);  /* sum of two softmax rows */
    CHECK_CLOSE(checksumN, 2.0, 1e-5);
    CHECK(after1.live_tensors == afterN.live_tensors);
    CHECK(after1.live_storages == afterN.live_storages);
    CHECK(after1.live_bytes == afterN.live_bytes);
    CHECK(after1.live_tensors == base.live_tensors + 3);   /* arange, its reshape view, idx */
    CHECK(after1.live_storages == base.live_storages + 2);
    CHECK(after1.live_bytes == base.live_bytes + 48 + 16);
    CHECK(tn_scope_depth() == 2);
    tn_scope_end();
    tn_scope_end();
    tn_memory_stats end = tn_memory_stats_get();
    CHECK(end.live_tensors == base.live_tensors);
    CHECK(end.live_storages == base.live_storages);
    CHECK(end.live_bytes == base.live_bytes);
}

/* ======================================================================== */
/* 3. creation                                                               */
/* ======================================================================== */
TEST(from_data_all_dtypes) {
    tn_scope_begin();
    const float f[] = {1.5f, -2.25f, 3, 4, 5, 6};
    tn_tensor *t = tn_from_data(f, TN_SHAPE(2, 3), TN_F32);
    CHECK_SHAPE(t, 2, 3); CHECK_STRIDES(t, 3, 1); CHECK_DTYPE(t, TN_F32);
    CHECK_VALS(t, 1.5, -2.25, 3, 4, 5, 6);
    CHECK(tn_data_ptr(t) != (void *)f); /* copied */
    CHECK(tn_is_contiguous(t) && tn_storage_offset(t) == 0 && tn_numel(t) == 6);
    CHECK(tn_size(t, 0) == 2 && tn_size(t, 1) == 3 && tn_size(t, -1) == 3 && tn_size(t, -2) == 2);
    CHECK(tn_size(t, 2) == -1 && tn_size(t, -3) == -1);
    CHECK(tn_get_device(t) == TN_CPU);
    const double d[] = {0.1, 1e300, -0.0};
    t = tn_from_data(d, TN_SHAPE(3), TN_F64);
    CHECK_DTYPE(t, TN_F64); CHECK_VALS(t, 0.1, 1e300, -0.0);
    CHECK(signbit(elem(t, 2)));
    const int32_t i32[] = {INT32_MIN, -1, INT32_MAX, 7};
    t = tn_from_data(i32, TN_SHAPE(2, 2), TN_I32);
    CHECK_DTYPE(t, TN_I32); CHECK_VALS(t, INT32_MIN, -1, INT32_MAX, 7);
    const int64_t i64[] = {INT64_MIN, (1LL << 53) + 1, INT64_MAX};
    t = tn_from_data(i64, TN_SHAPE(3), TN_I64);
    CHECK_DTYPE(t, TN_I64);
    CHECK(elem_i64(t, 0) == INT64_MIN && elem_i64(t, 1) == (1LL << 53) + 1 && elem_i64(t, 2) == INT64_MAX);
    const uint8_t u8[] = {0, 128, 255};
    t = tn_from_data(u8, TN_SHAPE(3, 1), TN_U8);
    CHECK_DTYPE(t, TN_U8); CHECK_SHAPE(t, 3, 1); CHECK_VALS(t, 0, 128, 255);
    const bool bb[] = {true, false, true, true};
    t = tn_from_data(bb, TN_SHAPE(1, 4), TN_BOOL);
    CHECK_DTYPE(t, TN_BOOL); CHECK_VALS(t, 1, 0, 1, 1);
    /* 0-d and empty */
    const float one = 42;
    t = tn_from_data(&one, NULL, 0, TN_F32);
    CHECK_SHAPE0(t); CHECK(tn_numel(t) == 1); CHECK_VALS(t, 42);
    t = tn_from_data(NULL, TN_SHAPE(0, 3), TN_F32);
    CHECK_SHAPE(t, 0, 3); CHECK(tn_numel(t) == 0);
    /* errors */
    CHECK_ERR(tn_from_data(NULL, TN_SHAPE(2), TN_F32), "NULL");
    CHECK_ERR(tn_from_data(f, TN_SHAPE(-1), TN_F32), "negative");
    int64_t ones[TN_MAX_DIMS + 1];
    for (int k = 0; k <= TN_MAX_DIMS; k++) ones[k] = 1;
    CHECK_ERR(tn_from_data(f, ones, TN_MAX_DIMS + 1, TN_F32), "ndim");   /* one past the limit, whatever it is */
    CHECK_ERR(tn_from_data(f, TN_SHAPE(2), TN_NUM_DTYPES), "dtype");
    tn_scope_end();
}

static int blob_deleted;
static void *blob_deleted_ptr, *blob_deleted_ctx;
static void blob_deleter(void *data, void *ctx) { blob_deleted++; blob_deleted_ptr = data; blob_deleted_ctx = ctx; }

TEST(from_blob) {
    tn_memory_stats s0 = tn_memory_stats_get();
    float buf[6] = {0, 1, 2, 3, 4, 5};
    tn_scope_begin();
    tn_tensor *t = tn_from_blob(buf, TN_SHAPE(2, 3), NULL, TN_F32, NULL, NULL);
    CHECK(tn_data_ptr(t) == (void *)buf);
    CHECK_SHAPE(t, 2, 3); CHECK_STRIDES(t, 3, 1);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes); /* caller memory is not counted */
    tn_mul_scalar_(t, 2);                                     /* writes reach the caller */
    CHECK(buf[0] == 0 && buf[1] == 2 && buf[5] == 10);
    buf[4] = -1;                                              /* and caller writes reach the tensor */
    CHECK_VALS(t, 0, 2, 4, 6, -1, 10);
    tn_fill_(tn_select(t, 0, 1), 9);
    CHECK(buf[3] == 9 && buf[4] == 9 && buf[5] == 9 && buf[2] == 4);
    /* custom strides: a column-major 3x2 view of buf */
    tn_tensor *cm = tn_from_blob(buf, TN_SHAPE(3, 2), STRIDES(1, 3), TN_F32, NULL, NULL);
    CHECK_STRIDES(cm, 1, 3);
    CHECK(!tn_is_contiguous(cm));
    CHECK_VALS(cm, 0, 9, 2, 9, 4, 9);
    /* a broadcast (stride 0) blob */
    double scal = 3.5;
    tn_tensor *bc = tn_from_blob(&scal, TN_SHAPE(2, 2), STRIDES(0, 0), TN_F64, NULL, NULL);
    CHECK_VALS(bc, 3.5, 3.5, 3.5, 3.5);
    CHECK_ERR(tn_from_blob(buf, TN_SHAPE(2), STRIDES(-1), TN_F32, NULL, NULL), "negative stride");
    CHECK_ERR(tn_from_blob(NULL, TN_SHAPE(2), NULL, TN_F32, NULL, NULL), "NULL");
    tn_scope_end();
    CHECK(buf[0] == 0 && buf[5] == 9); /* no deleter: memory untouched */

    /* the deleter runs exactly once, when the last view dies */
    blob_deleted = 0;
    double *heap = (double *)malloc(4 * sizeof(double));
    for (int i = 0; i < 4; i++) heap[i] = i;
    int ctx_token = 0;
    tn_tensor *h = tn_from_blob(heap, TN_SHAPE(4), NULL, TN_F64, blob_deleter, &ctx_token);
    tn_tensor *hv = tn_view(h, TN_SHAPE(2, 2));
    tn_tensor *ht = tn_t(hv);
    tn_release(h);
    tn_release(hv);
    CHECK(blob_deleted == 0);
    CHECK_VALS(ht, 0, 2, 1, 3);
    tn_release(ht);
    CHECK(blob_deleted == 1);
    CHECK(blob_deleted_ptr == (void *)heap && blob_deleted_ctx == (void *)&ctx_token);
    free(heap);
    /* ... also through scopes */
    blob_deleted = 0;
    float sbuf[4] = {1, 2, 3, 4};
    tn_scope_begin();
    tn_tensor *sb = tn_from_blob(sbuf, TN_SHAPE(4), NULL, TN_F32, blob_deleter, NULL);
    tn_tensor *kept;
    tn_scope_begin();
    kept = tn_keep(tn_slice(sb, 0, 1, 3, 1));
    tn_scope_end();
    tn_reshape(sb, TN_SHAPE(2, 2));
    CHECK(blob_deleted == 0);
    tn_scope_end();
    CHECK(blob_deleted == 1);
    (void)kept;
    CHECK(tn_memory_stats_get().live_storages == s0.live_storages);
    CHECK(tn_memory_stats_get().live_tensors == s0.live_tensors);
}

TEST(empty_zeros_ones_full) {
    tn_scope_begin();
    for (int i = 0; i < 6; i++) {
        tn_dtype d = all6[i];
        tn_tensor *e = tn_empty(TN_SHAPE(2, 3), d);
        CHECK_SHAPE(e, 2, 3); CHECK_DTYPE(e, d); CHECK(tn_is_contiguous(e));
        tn_tensor *z = tn_zeros(TN_SHAPE(2, 2), d);
        CHECK_DTYPE(z, d); CHECK_VALS(z, 0, 0, 0, 0);
        tn_tensor *o = tn_ones(TN_SHAPE(3), d);
        CHECK_DTYPE(o, d); CHECK_VALS(o, 1, 1, 1);
        tn_tensor *f = tn_full(TN_SHAPE(1, 2), 5, d);
        CHECK_DTYPE(f, d);
        CHECK_VALS(f, d == TN_BOOL ? 1 : 5, d == TN_BOOL ? 1 : 5);
    }
    tn_tensor *f = tn_full(TN_SHAPE(2), -2.5, TN_F32);
    CHECK_VALS(f, -2.5, -2.5);
    f = tn_full(TN_SHAPE(2), NAN, TN_F64);
    CHECK(isnan(elem(f, 0)) && isnan(elem(f, 1)));
    f = tn_full(TN_SHAPE(1), INFINITY, TN_F32);
    CHECK(isinf(elem(f, 0)));
    f = tn_full(TN_SHAPE(2), 9007199254740993.0, TN_I64);     /* the double is 2^53 */
    CHECK(elem_i64(f, 0) == 9007199254740992LL);
    /* 0-d */
    tn_tensor *z0 = tn_zeros(NULL, 0, TN_F32);
    CHECK_SHAPE0(z0); CHECK(tn_numel(z0) == 1); CHECK_VALS(z0, 0);
    tn_tensor *f0 = tn_full(NULL, 0, 3.25, TN_F64);
    CHECK_SHAPE0(f0); CHECK_VALS(f0, 3.25); CHECK(tn_item(f0) == 3.25);
    tn_tensor *o0 = tn_ones(NULL, 0, TN_BOOL);
    CHECK_SHAPE0(o0); CHECK_VALS(o0, 1);
    CHECK(tn_is_contiguous(o0));
    tn_tensor *st = tn_scalar_tensor(-4, TN_I32);
    CHECK_SHAPE0(st); CHECK_DTYPE(st, TN_I32); CHECK_VALS(st, -4);
    tn_tensor *si = tn_scalar_int(INT64_MAX);
    CHECK(elem_i64(si, 0) == INT64_MAX);
    /* 0-sized: shapes and strides as torch */
    tn_tensor *e1 = tn_ones(TN_SHAPE(0, 3), TN_F32);
    CHECK_SHAPE(e1, 0, 3); CHECK_STRIDES(e1, 3, 1); CHECK(tn_numel(e1) == 0); CHECK(tn_is_contiguous(e1));
    tn_tensor *e2 = tn_zeros(TN_SHAPE(3, 0), TN_I64);
    CHECK_SHAPE(e2, 3, 0); CHECK_STRIDES(e2, 1, 1);
    tn_tensor *e3 = tn_full(TN_SHAPE(2, 0, 4), 1, TN_U8);
    CHECK_SHAPE(e3, 2, 0, 4); CHECK_STRIDES(e3, 4, 4, 1);
    tn_tensor *e4 = tn_empty(TN_SHAPE(0), TN_BOOL);
    CHECK_SHAPE(e4, 0); CHECK(tn_numel(e4) == 0);
    /* contiguous strides */
    tn_tensor *c = tn_empty(TN_SHAPE(2, 3, 4, 5), TN_F32);
    CHECK_STRIDES(c, 60, 20, 5, 1);
    tn_tensor *c1 = tn_empty(TN_SHAPE(3, 1, 2), TN_F32);
    CHECK_STRIDES(c1, 2, 2, 1);
    /* errors */
    CHECK_ERR(tn_zeros(TN_SHAPE(2, -3), TN_F32), "negative size");
    CHECK_ERR(tn_ones(TN_SHAPE(2), (tn_dtype)99), "invalid dtype");
    CHECK_ERR(tn_empty(NULL, 2, TN_F32), "NULL");
    CHECK_ERR(tn_zeros(TN_SHAPE(1LL << 40, 1LL << 40), TN_F32), "too many");
    tn_scope_end();
}

TEST(arange) {
    tn_scope_begin();
    tn_tensor *a = tn_arange(0, 1, 0.1, TN_F32);
    CHECK_SHAPE(a, 10);
    CHECK_VALS(a, 0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
               0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421);
    a = tn_arange(0, 1, 0.1, TN_F64);
    CHECK_VALS(a, 0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8, 0.9);
    a = tn_arange(5, 0, -1.5, TN_F32);
    CHECK_VALS(a, 5, 3.5, 2, 0.5);
    a = tn_arange(1, 2.5, 0.5, TN_F32);
    CHECK_VALS(a, 1, 1.5, 2);
    a = tn_arange(-3, 3, 2, TN_I64);
    CHECK_DTYPE(a, TN_I64); CHECK_VALS(a, -3, -1, 1);
    a = tn_arange(0, 0.3, 0.1, TN_F64);      /* torch: 3 elements */
    CHECK_VALS(a, 0, 0.1, 0.2);
    a = tn_arange(1, 1, 1, TN_F32);
    CHECK_SHAPE(a, 0);
    a = tn_arange(0, 10, 1, TN_U8);
    CHECK_DTYPE(a, TN_U8); CHECK_SHAPE(a, 10); CHECK(elem(a, 9) == 9);
    a = tn_arange(0, 6, 1, TN_I32);
    CHECK_DTYPE(a, TN_I32); CHECK_VALS(a, 0, 1, 2, 3, 4, 5);
    a = tn_arange(10, 0, -3, TN_I64);
    CHECK_VALS(a, 10, 7, 4, 1);
    CHECK_ERR(tn_arange(0, 1, 0, TN_F32), "step");
    CHECK_ERR(tn_arange(0, 1, -1, TN_F32), "inconsistent");
    CHECK_ERR(tn_arange(1, 0, 1, TN_F32), "inconsistent");
    CHECK_ERR(tn_arange(0, INFINITY, 1, TN_F32), "unsupported");
    tn_scope_end();
}

TEST(linspace) {
    tn_scope_begin();
    tn_tensor *l = tn_linspace(0, 1, 5, TN_F32);
    CHECK_VALS(l, 0, 0.25, 0.5, 0.75, 1);
    l = tn_linspace(-1, 1, 2, TN_F32);
    CHECK_VALS(l, -1, 1);
    l = tn_linspace(3, 7, 1, TN_F32);     /* one step: start, as torch */
    CHECK_VALS(l, 3);
    l = tn_linspace(-2, 5, 1, TN_F64);
    CHECK_VALS(l, -2);
    l = tn_linspace(3, 7, 0, TN_F32);
    CHECK_SHAPE(l, 0);
    l = tn_linspace(0, 1, 7, TN_F64);
    CHECK_VALS(l, 0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666667, 0.8333333333333334, 1.0);
    l = tn_linspace(0, 1, 11, TN_F32);
    CHECK_VALS(l, 0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
               0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421, 1.0);
    l = tn_linspace(0, 10, 5, TN_I64);
    CHECK_DTYPE(l, TN_I64); CHECK_VALS(l, 0, 2, 5, 7, 10);
    l = tn_linspace(-5, 5, 6, TN_I32);
    CHECK_VALS(l, -5, -3, -1, 1, 3, 5);
    /* symmetric: both ends exact even when (end - start)/(steps - 1) is inexact */
    l = tn_linspace(0.1, 0.7, 4, TN_F64);
    CHECK(elem(l, 0) == 0.1 && elem(l, 3) == 0.7);
    l = tn_linspace(5, -5, 3, TN_F32);
    CHECK_VALS(l, 5, 0, -5);
    CHECK_ERR(tn_linspace(0, 1, -1, TN_F32), "non-negative");
    tn_scope_end();
}

TEST(eye) {
    tn_scope_begin();
    tn_tensor *e = tn_eye(3, -1, TN_F32);
    CHECK_SHAPE(e, 3, 3); CHECK_VALS(e, 1, 0, 0, 0, 1, 0, 0, 0, 1);
    e = tn_eye(2, 3, TN_I64);
    CHECK_SHAPE(e, 2, 3); CHECK_DTYPE(e, TN_I64); CHECK_VALS(e, 1, 0, 0, 0, 1, 0);
    e = tn_eye(3, 2, TN_F64);
    CHECK_SHAPE(e, 3, 2); CHECK_VALS(e, 1, 0, 0, 1, 0, 0);
    e = tn_eye(1, -1, TN_BOOL);
    CHECK_SHAPE(e, 1, 1); CHECK_VALS(e, 1);
    e = tn_eye(0, -1, TN_F32);
    CHECK_SHAPE(e, 0, 0);
    e = tn_eye(2, 0, TN_F32);
    CHECK_SHAPE(e, 2, 0);
    CHECK_ERR(tn_eye(-2, -1, TN_F32), "n must be greater or equal to 0, got -2");
    CHECK_ERR(tn_eye(0, -3, TN_F32), "m must be greater or equal to 0, got -3");
    tn_scope_end();
}

TEST(like_clone_contiguous) {
    tn_scope_begin();
    tn_tensor *base = tn_reshape(tn_arange(0, 6, 1, TN_I32), TN_SHAPE(2, 3));
    tn_tensor *tr = tn_t(base);                           /* [3,2], non-contiguous */
    tn_tensor *z = tn_zeros_like(tr);
    CHECK_SHAPE(z, 3, 2); CHECK_DTYPE(z, TN_I32); CHECK_VALS(z, 0, 0, 0, 0, 0, 0);
    CHECK(!tn_same_storage(z, tr));
    tn_tensor *o = tn_ones_like(base);
    CHECK_SHAPE(o, 2, 3); CHECK_DTYPE(o, TN_I32); CHECK_VALS(o, 1, 1, 1, 1, 1, 1);
    tn_tensor *f = tn_full_like(base, -7);
    CHECK_DTYPE(f, TN_I32); CHECK_VALS(f, -7, -7, -7, -7, -7, -7);
    tn_tensor *e = tn_empty_like(tr);
    CHECK_SHAPE(e, 3, 2); CHECK_DTYPE(e, TN_I32);
    tn_tensor *fl = tn_arange(0, 4, 1, TN_F64);
    tn_tensor *r = tn_rand_like(fl);
    CHECK_SHAPE(r, 4); CHECK_DTYPE(r, TN_F64);
    r = tn_randn_like(tn_zeros(TN_SHAPE(2, 2), TN_F32));
    CHECK_SHAPE(r, 2, 2); CHECK_DTYPE(r, TN_F32);
    tn_tensor *z0 = tn_zeros_like(tn_scalar_tensor(5, TN_U8));
    CHECK_SHAPE0(z0); CHECK_DTYPE(z0, TN_U8); CHECK_VALS(z0, 0);
    tn_tensor *ze = tn_ones_like(tn_empty(TN_SHAPE(0, 2), TN_F32));
    CHECK_SHAPE(ze, 0, 2);
    CHECK(tn_zeros_like(NULL) == NULL);

    /* clone: a contiguous copy */
    tn_tensor *c = tn_clone(tr);
    CHECK(!tn_same_storage(c, tr));
    CHECK(tn_is_contiguous(c));
    CHECK_SHAPE(c, 3, 2); CHECK_VALS(c, 0, 3, 1, 4, 2, 5);
    tn_fill_(c, 1);
    CHECK_VALS(base, 0, 1, 2, 3, 4, 5);                   /* independent */
    tn_tensor *c0 = tn_clone(tn_scalar_tensor(2.5, TN_F32));
    CHECK_SHAPE0(c0); CHECK_VALS(c0, 2.5);

    /* contiguous: the same tensor when already contiguous */
    int64_t rc = base->refcount;
    tn_tensor *same = tn_contiguous(base);
    CHECK(same == base);
    CHECK(base->refcount == rc + 1);                      /* a new reference, owned by the scope */
    tn_tensor *ct = tn_contiguous(tr);
    CHECK(ct != tr && !tn_same_storage(ct, tr));
    CHECK(tn_is_contiguous(ct)); CHECK_STRIDES(ct, 2, 1); CHECK_VALS(ct, 0, 3, 1, 4, 2, 5);
    CHECK(!tn_is_contiguous(tr));
    /* size-1 dims and empty tensors count as contiguous whatever their strides */
    tn_tensor *col = tn_slice(tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(3, 2)), 1, 0, 1, 1); /* [3,1] strides (2,1) */
    CHECK(!tn_is_contiguous(col));
    tn_tensor *row = tn_slice(base, 0, 1, 2, 1);          /* [1,3] */
    CHECK(tn_is_contiguous(row));
    CHECK(tn_contiguous(row) == row);
    tn_scope_end();
}

TEST(to_dtype_conversions) {
    tn_scope_begin();
    tn_tensor *x = F32V(-1.7f, 1.7f, 2.5f, -0.5f);
    CHECK(tn_to_dtype(x, TN_F32) == x);
    tn_tensor *t = tn_to_dtype(x, TN_I32);
    CHECK_DTYPE(t, TN_I32); CHECK_VALS(t, -1, 1, 2, 0);
    CHECK(!tn_same_storage(t, x));
    t = tn_to_dtype(x, TN_I64);
    CHECK_DTYPE(t, TN_I64); CHECK_VALS(t, -1, 1, 2, 0);
    t = tn_to_dtype(F32V(-1.0f, 300.0f, -129.0f, 255.9f, 256.0f), TN_U8);
    CHECK_DTYPE(t, TN_U8); CHECK_VALS(t, 255, 44, 127, 255, 0);
    t = tn_to_dtype(F32V(NAN, 0.0f, -0.0f, 0.5f, INFINITY), TN_BOOL);
    CHECK_DTYPE(t, TN_BOOL); CHECK_VALS(t, 1, 0, 0, 1, 1);
    t = tn_to_dtype(I64V((1LL << 32) + 5, -1, 256, 1LL << 31), TN_I32);
    CHECK_VALS(t, 5, -1, 256, -2147483648.0);
    t = tn_to_dtype(I64V((1LL << 32) + 5, -1, 256, 1LL << 31), TN_U8);
    CHECK_VALS(t, 5, 255, 0, 0);
    t = tn_to_dtype(BOOLV(true, false), TN_F32);
    CHECK_VALS(t, 1, 0);
    t = tn_to_dtype(I64V((1LL << 53) + 1), TN_F64);
    CHECK_VALS(t, 9007199254740992.0);
    t = tn_to_dtype(I64V(16777217), TN_F32);
    CHECK_VALS(t, 16777216.0);
    t = tn_to_dtype(F64V(0.1), TN_F32);
    CHECK_VALS(t, 0.10000000149011612);
    t = tn_to_dtype(F32V(3.0e9f, NAN), TN_I32);            /* x86's "integer indefinite", as torch */
    CHECK_VALS(t, -2147483648.0, -2147483648.0);
    t = tn_to_dtype(F32V(NAN), TN_I64);
    CHECK(elem_i64(t, 0) == INT64_MIN);
    t = tn_to_dtype(U8V(200, 100), TN_I32);
    CHECK_VALS(t, 200, 100);
    t = tn_to_dtype(I32V(-3), TN_U8);
    CHECK_VALS(t, 253);
    t = tn_to_dtype(I32V(-3, 0), TN_BOOL);
    CHECK_VALS(t, 1, 0);
    /* int64 stays exact through int64 paths */
    tn_tensor *big = I64V((1LL << 53) + 1, INT64_MAX - 1, -(1LL << 60) - 3);
    tn_tensor *cl = tn_clone(big);
    CHECK(elem_i64(cl, 0) == (1LL << 53) + 1 && elem_i64(cl, 1) == INT64_MAX - 1 && elem_i64(cl, 2) == -(1LL << 60) - 3);
    tn_tensor *cp = tn_zeros(TN_SHAPE(3), TN_I64);
    CHECK(tn_copy_(cp, big) == 0);
    CHECK(elem_i64(cp, 0) == (1LL << 53) + 1 && elem_i64(cp, 1) == INT64_MAX - 1);
    tn_tensor *sum = tn_add_scalar(tn_slice(big, 0, 0, 1, 1), 1);
    CHECK(elem_i64(sum, 0) == (1LL << 53) + 2);
    tn_tensor *via_t = tn_contiguous(tn_t(tn_view(big, TN_SHAPE(3, 1))));
    CHECK(elem_i64(via_t, 0) == (1LL << 53) + 1 && elem_i64(via_t, 2) == -(1LL << 60) - 3);
    /* strided source */
    tn_tensor *m = tn_t(tn_reshape(tn_arange(0, 6, 1, TN_F64), TN_SHAPE(2, 3)));
    t = tn_to_dtype(m, TN_I32);
    CHECK_SHAPE(t, 3, 2); CHECK(tn_is_contiguous(t)); CHECK_VALS(t, 0, 3, 1, 4, 2, 5);
    /* empty and 0-d */
    t = tn_to_dtype(tn_empty(TN_SHAPE(0, 4), TN_F32), TN_I64);
    CHECK_SHAPE(t, 0, 4); CHECK_DTYPE(t, TN_I64);
    t = tn_to_dtype(tn_scalar_tensor(-2.9, TN_F64), TN_I32);
    CHECK_SHAPE0(t); CHECK_VALS(t, -2);
    CHECK_ERR(tn_to_dtype(x, (tn_dtype)77), "invalid dtype");
    CHECK(tn_to(x, TN_CPU) == x);
    if (!tn_cuda_is_available()) CHECK_ERR(tn_to(x, TN_CUDA), "not available");
    tn_scope_end();
}

TEST(item) {
    tn_scope_begin();
    CHECK(tn_item(tn_scalar_tensor(2.5, TN_F32)) == 2.5);
    CHECK(tn_item(tn_ones(TN_SHAPE(1, 1, 1), TN_I32)) == 1);
    CHECK(tn_item(tn_full(TN_SHAPE(1), -3, TN_I64)) == -3);
    CHECK(tn_item(tn_scalar_int(1LL << 40)) == (double)(1LL << 40));
    CHECK(tn_item(tn_scalar_bool(true)) == 1);
    CHECK(tn_item(tn_full(TN_SHAPE(1), 200, TN_U8)) == 200);
    CHECK(tn_item(tn_select(tn_arange(0, 5, 1, TN_F64), 0, 3)) == 3);  /* offset view */
    double v;
    tn_clear_error();
    v = tn_item(tn_zeros(TN_SHAPE(2), TN_F32));
    CHECK(isnan(v));
    CHECK(strstr(tn_last_error(), "cannot be converted to a scalar") != NULL);
    tn_clear_error();
    v = tn_item(tn_zeros(TN_SHAPE(0), TN_F32));
    CHECK(isnan(v));
    CHECK(strstr(tn_last_error(), "0 elements") != NULL);
    tn_clear_error();
    CHECK(isnan(tn_item(NULL)));
    CHECK(strcmp(tn_last_error(), "") == 0); /* a NULL input makes no new message */
    CHECK(isnan(tn_item(tn_scalar(NAN))));
    tn_scope_end();
}

TEST(copy_) {
    tn_scope_begin();
    /* broadcasting and dtype conversion */
    tn_tensor *dst = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    int64_t v0 = tn_version(dst);
    CHECK(tn_copy_(dst, I32V(1, 2, 3)) == 0);
    CHECK_VALS(dst, 1, 2, 3, 1, 2, 3);
    CHECK(tn_version(dst) > v0);
    CHECK(tn_copy_(dst, tn_scalar_tensor(4, TN_F64)) == 0);
    CHECK_VALS(dst, 4, 4, 4, 4, 4, 4);
    tn_tensor *col = tn_view(F32V(7, 8), TN_SHAPE(2, 1));
    CHECK(tn_copy_(dst, col) == 0);
    CHECK_VALS(dst, 7, 7, 7, 8, 8, 8);
    tn_tensor *idst = tn_zeros(TN_SHAPE(3), TN_I32);
    CHECK(tn_copy_(idst, F32V(1.7f, -2.7f, 3.2f)) == 0);
    CHECK_VALS(idst, 1, -2, 3);
    /* into a strided view: visible in the base */
    tn_tensor *base = tn_zeros(TN_SHAPE(3, 3), TN_F64);
    CHECK(tn_copy_(tn_t(tn_slice(base, 1, 1, 3, 1)), F64V(5, 6, 7)) == 0); /* base[:,1:].t() = [5,6,7] per row */
    CHECK_VALS(base, 0, 5, 5, 0, 6, 6, 0, 7, 7);
    /* shape errors: dst must not be broadcast */
    CHECK_ERR(tn_copy_(tn_zeros(TN_SHAPE(3), TN_F32), tn_zeros(TN_SHAPE(2, 3), TN_F32)) == 0, "cannot be broadcast");
    CHECK_ERR(tn_copy_(tn_zeros(TN_SHAPE(3), TN_F32), tn_zeros(TN_SHAPE(2), TN_F32)) == 0, "cannot be broadcast");
    CHECK(tn_copy_(NULL, dst) == -1);
    /* empty and 0-d */
    CHECK(tn_copy_(tn_empty(TN_SHAPE(0, 3), TN_F32), tn_ones(TN_SHAPE(3), TN_F32)) == 0);
    tn_tensor *z0 = tn_zeros(NULL, 0, TN_I64);
    CHECK_ERR(tn_copy_(z0, tn_ones(TN_SHAPE(1), TN_F32)) == 0, "cannot be broadcast"); /* torch: [1] doesn't match [] */
    CHECK(tn_copy_(z0, tn_scalar_tensor(3, TN_F32)) == 0);
    CHECK_VALS(z0, 3);

    /* overlapping source and destination: the library reads all of src before writing
       (PyTorch instead refuses partial overlap); x.copy_(x.flip(0)) works in both */
    tn_tensor *x = tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(2, 3));
    CHECK(tn_copy_(x, tn_flip(x, TN_DIMS(0))) == 0);
    CHECK_VALS(x, 3, 4, 5, 0, 1, 2);
    tn_tensor *sq = tn_reshape(tn_arange(0, 4, 1, TN_F32), TN_SHAPE(2, 2));
    CHECK(tn_copy_(sq, tn_t(sq)) == 0);                   /* transpose in place */
    CHECK_VALS(sq, 0, 2, 1, 3);
    tn_tensor *sh = tn_arange(0, 5, 1, TN_F32);
    CHECK(tn_copy_(tn_slice(sh, 0, 1, TN_END, 1), tn_slice(sh, 0, 0, -1, 1)) == 0);
    CHECK_VALS(sh, 0, 0, 1, 2, 3);                        /* a shift, not a smear */
    tn_tensor *self = tn_arange(0, 3, 1, TN_F32);
    CHECK(tn_copy_(self, self) == 0);
    CHECK_VALS(self, 0, 1, 2);
    tn_scope_end();
}

/* ======================================================================== */
/* 4. RNG                                                                    */
/* ======================================================================== */
TEST(philox_known_answers) {
    /* Random123 kat_vectors, philox4x32_10: counter words c0..c3, key words k0, k1 */
    struct { uint32_t c[4], k[2], out[4]; } kat[3] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (int i = 0; i < 3; i++) {
        uint64_t lo = kat[i].c[0] | ((uint64_t)kat[i].c[1] << 32), hi = kat[i].c[2] | ((uint64_t)kat[i].c[3] << 32);
        uint64_t key = kat[i].k[0] | ((uint64_t)kat[i].k[1] << 32);
        uint32_t out[4] = {0, 0, 0, 0};
        tn_philox4x32(key, hi, lo, out);
        for (int j = 0; j < 4; j++)
            CHECK_MSG(out[j] == kat[i].out[j], "philox KAT %d word %d: 0x%08x, expected 0x%08x", i, j, out[j], kat[i].out[j]);
    }
}

/* uniform draws are Philox(seed, offset + i) words: float64 (hi 64 bits >> 11) * 2^-53,
   float32 (word 0 >> 8) * 2^-24 (through the loops specialised for uniform draws; odd size) */
TEST(uniform_draws_from_philox_words) {
    tn_scope_begin();
    tn_generator g;
    memset(&g, 0, sizeof g);   /* zero-initialised: a Philox stream (kind TN_GEN_PHILOX) */
    g.seed = 1234;
    g.offset = 77;
    tn_tensor *d = tn_rand_gen(TN_SHAPE(1001), TN_F64, &g), *f = tn_rand_gen(TN_SHAPE(1001), TN_F32, &g);
    CHECK(d && f && g.offset == 77 + 2 * 1001);
    const double *dp = d ? (const double *)tn_data_ptr(d) : NULL;
    const float *fp = f ? (const float *)tn_data_ptr(f) : NULL;
    int bad = 0;
    for (int i = 0; i < 1001 && dp && fp; i++) {
        uint32_t r[4];
        tn_philox4x32(1234, 0, 77 + (uint64_t)i, r);
        double want = (double)((((uint64_t)r[0] << 32) | r[1]) >> 11) * 0x1.0p-53;
        bad += memcmp(&want, &dp[i], sizeof want) != 0;
        tn_philox4x32(1234, 0, 77 + 1001 + (uint64_t)i, r);
        float wf = (float)(r[0] >> 8) * 0x1.0p-24f;
        bad += memcmp(&wf, &fp[i], sizeof wf) != 0;
    }
    CHECK_MSG(bad == 0, "%d uniform draws differ from their Philox words", bad);
    tn_scope_end();
}

TEST(rng_determinism) {
    tn_scope_begin();
    tn_manual_seed(42);
    CHECK(tn_default_generator()->seed == 42 && tn_default_generator()->offset == 0);
    CHECK(tn_default_generator()->kind == TN_GEN_MT19937 && tn_default_generator()->mt_left == 1);
    tn_tensor *a = tn_rand(TN_SHAPE(100), TN_F32);
    CHECK(tn_default_generator()->mt_next == 100);   /* one random() a float32 draw; Philox counters untouched */
    CHECK(tn_default_generator()->offset == 0);
    tn_tensor *a2 = tn_rand(TN_SHAPE(100), TN_F32);
    tn_manual_seed(42);
    tn_tensor *b = tn_rand(TN_SHAPE(100), TN_F32);
    tn_tensor *b2 = tn_rand(TN_SHAPE(100), TN_F32);
    CHECK(tn_equal(a, b));
    CHECK(tn_equal(a2, b2));
    CHECK(!tn_equal(a, a2));                     /* the generator advances */
    bool same = true;
    for (int i = 0; i < 100; i++) same = same && elem(a, i) == elem(b, i);
    CHECK(same);
    tn_manual_seed(43);
    tn_tensor *c = tn_rand(TN_SHAPE(100), TN_F32);
    CHECK(!tn_equal(a, c));                      /* another seed, other numbers */
    /* randn, normal, randint, randperm are reproducible too */
    tn_manual_seed(7);
    tn_tensor *n1 = tn_randn(TN_SHAPE(3, 4), TN_F64);
    tn_tensor *i1 = tn_randint(0, 1000, TN_SHAPE(50), TN_I64, NULL);
    tn_tensor *p1 = tn_randperm(20, TN_I64, NULL);
    tn_manual_seed(7);
    tn_tensor *n2 = tn_randn(TN_SHAPE(3, 4), TN_F64);
    tn_tensor *i2 = tn_randint(0, 1000, TN_SHAPE(50), TN_I64, NULL);
    tn_tensor *p2 = tn_randperm(20, TN_I64, NULL);
    CHECK(tn_equal(n1, n2));
    CHECK(tn_equal(i1, i2));
    CHECK(tn_equal(p1, p2));

    /* generator objects are independent of the default generator */
    tn_manual_seed(5);
    tn_tensor *d1 = tn_rand(TN_SHAPE(8), TN_F64);
    tn_tensor *d1b = tn_rand(TN_SHAPE(8), TN_F64);
    tn_manual_seed(5);
    tn_generator *g = tn_generator_new(5);
    tn_tensor *gd = tn_rand_gen(TN_SHAPE(8), TN_F64, g);   /* same seed: same numbers as the default's first draw */
    CHECK(tn_equal(gd, d1));
    CHECK(g->mt_next == 16);                                /* 8 random64() */
    tn_tensor *d2 = tn_rand(TN_SHAPE(8), TN_F64);           /* the default did not move */
    CHECK(tn_equal(d2, d1));
    tn_tensor *d3 = tn_rand(TN_SHAPE(8), TN_F64);
    CHECK(tn_equal(d3, d1b));
    tn_generator *g1 = tn_generator_new(1234), *g2 = tn_generator_new(1234), *g3 = tn_generator_new(1235);
    tn_tensor *x1 = tn_randn_gen(TN_SHAPE(16), TN_F32, g1);
    tn_tensor *x2 = tn_randn_gen(TN_SHAPE(16), TN_F32, g2);
    tn_tensor *x3 = tn_randn_gen(TN_SHAPE(16), TN_F32, g3);
    CHECK(tn_equal(x1, x2));
    CHECK(!tn_equal(x1, x3));
    tn_tensor *u1 = tn_uniform(-1, 1, TN_SHAPE(5), TN_F64, g1);
    tn_tensor *u2 = tn_uniform(-1, 1, TN_SHAPE(5), TN_F64, g2);
    CHECK(tn_equal(u1, u2));

    /* splitting a draw gives the same numbers: one draw of 10 == draws of 4 and 6 */
    tn_generator *ga = tn_generator_new(99), *gb = tn_generator_new(99);
    tn_tensor *whole = tn_rand_gen(TN_SHAPE(10), TN_F32, ga);
    tn_tensor *p4 = tn_rand_gen(TN_SHAPE(4), TN_F32, gb);
    tn_tensor *p6 = tn_rand_gen(TN_SHAPE(2, 3), TN_F32, gb);
    CHECK(tn_equal(tn_slice(whole, 0, 0, 4, 1), p4));
    CHECK(tn_equal(tn_slice(whole, 0, 4, 10, 1), tn_reshape(p6, TN_SHAPE(6))));
    CHECK(ga->mt_next == 10 && gb->mt_next == 10);
    tn_tensor *wn = tn_randn_gen(TN_SHAPE(10), TN_F64, ga);
    tn_tensor *n4 = tn_randn_gen(TN_SHAPE(4), TN_F64, gb);
    tn_tensor *n6 = tn_randn_gen(TN_SHAPE(6), TN_F64, gb);
    CHECK(tn_equal(tn_cat(((tn_tensor *const[]){n4, n6}), 2), wn));
    tn_manual_seed(3);
    tn_tensor *dw = tn_rand(TN_SHAPE(10), TN_F64);
    tn_manual_seed(3);
    tn_tensor *d4 = tn_rand(TN_SHAPE(4), TN_F64);
    tn_tensor *d6 = tn_rand(TN_SHAPE(6), TN_F64);
    CHECK(tn_equal(tn_cat(((tn_tensor *const[]){d4, d6}), 2), dw));
    tn_generator_free(g); tn_generator_free(g1); tn_generator_free(g2); tn_generator_free(g3);
    tn_generator_free(ga); tn_generator_free(gb);
    tn_scope_end();
}

static void moments(tn_tensor *t, double *mean, double *var, double *mn, double *mx) {
    int64_t n = tn_numel(t);
    double s = 0, s2 = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = elem(t, i);
        s += v; s2 += v * v;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    *mean = s / (double)n;
    *var = s2 / (double)n - *mean * *mean;
    *mn = lo; *mx = hi;
}

TEST(rng_statistics) {
    tn_scope_begin();
    tn_manual_seed(2024);
    const int64_t N = 200000;
    double mean, var, mn, mx;
    tn_tensor *u = tn_rand(&N, 1, TN_F32);
    moments(u, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 0.5, 0.005);
    CHECK_CLOSE(var, 1.0 / 12, 0.002);
    CHECK(mn >= 0 && mx < 1);
    u = tn_rand(&N, 1, TN_F64);
    moments(u, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 0.5, 0.005);
    CHECK_CLOSE(var, 1.0 / 12, 0.002);
    CHECK(mn >= 0 && mx < 1);
    {   /* all ten deciles are hit about equally */
        int64_t bins[10] = {0};
        for (int64_t i = 0; i < N; i++) bins[(int)(elem(u, i) * 10)]++;
        bool ok = true;
        for (int i = 0; i < 10; i++) ok = ok && fabs((double)bins[i] / (double)N - 0.1) < 0.005;
        CHECK(ok);
    }
    tn_tensor *z = tn_randn(&N, 1, TN_F32);
    moments(z, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 0, 0.01);
    CHECK_CLOSE(sqrt(var), 1, 0.01);
    CHECK(mn < -3.5 && mx > 3.5 && isfinite(mn) && isfinite(mx));
    {
        int64_t within1 = 0, pos = 0;
        for (int64_t i = 0; i < N; i++) { double v = elem(z, i); within1 += fabs(v) < 1; pos += v > 0; }
        CHECK_CLOSE((double)within1 / (double)N, 0.6826894921, 0.005);
        CHECK_CLOSE((double)pos / (double)N, 0.5, 0.005);
    }
    z = tn_randn(&N, 1, TN_F64);
    moments(z, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 0, 0.01);
    CHECK_CLOSE(sqrt(var), 1, 0.01);
    tn_tensor *nrm = tn_normal(3, 2, &N, 1, TN_F64, NULL);
    moments(nrm, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 3, 0.03);
    CHECK_CLOSE(sqrt(var), 2, 0.03);
    nrm = tn_normal(-1, 0, TN_SHAPE(4), TN_F32, NULL);    /* std 0: constant */
    CHECK_VALS(nrm, -1, -1, -1, -1);
    tn_tensor *un = tn_uniform(-2, 5, &N, 1, TN_F32, NULL);
    moments(un, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 1.5, 0.05);
    CHECK_CLOSE(var, 49.0 / 12, 0.05);
    CHECK(mn >= -2 && mx < 5);
    un = tn_uniform(1, 1.0000001, &N, 1, TN_F32, NULL);   /* as PyTorch: u (to - from) + from in float32, with */
    moments(un, &mean, &var, &mn, &mx);                   /* to = 1 + 2^-23 there: half of the values round up to it */
    CHECK(mn == 1 && mx == 1 + 0x1.0p-23);
    CHECK_CLOSE(mean, 1 + 0x1.0p-24, 1e-8);

    /* randint: every value of [low, high), nothing else */
    tn_tensor *ri = tn_randint(-3, 4, TN_SHAPE(5000), TN_I64, NULL);
    CHECK_DTYPE(ri, TN_I64);
    {
        int64_t counts[7] = {0};
        bool in = true;
        for (int64_t i = 0; i < 5000; i++) {
            int64_t v = elem_i64(ri, i);
            if (v < -3 || v >= 4) in = false; else counts[v + 3]++;
        }
        CHECK(in);
        bool all = true;
        for (int i = 0; i < 7; i++) all = all && counts[i] > 5000 / 7 - 150 && counts[i] < 5000 / 7 + 150;
        CHECK(all);
    }
    tn_tensor *ri32 = tn_randint(0, 2, TN_SHAPE(1000), TN_I32, NULL);
    moments(ri32, &mean, &var, &mn, &mx);
    CHECK_DTYPE(ri32, TN_I32);
    CHECK(mn == 0 && mx == 1);
    CHECK_CLOSE(mean, 0.5, 0.06);
    tn_tensor *ri_big = tn_randint(1LL << 40, (1LL << 40) + 3, TN_SHAPE(100), TN_I64, NULL);
    {
        bool ok = true;
        for (int i = 0; i < 100; i++) ok = ok && elem_i64(ri_big, i) >= (1LL << 40) && elem_i64(ri_big, i) < (1LL << 40) + 3;
        CHECK(ok);
    }
    tn_tensor *ru8 = tn_randint(250, 256, TN_SHAPE(300), TN_U8, NULL);
    moments(ru8, &mean, &var, &mn, &mx);
    CHECK(mn == 250 && mx == 255);

    /* bernoulli */
    tn_tensor *bp = tn_bernoulli_p(&N, 1, 0.3, TN_F32, NULL);
    CHECK_DTYPE(bp, TN_F32);
    moments(bp, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 0.3, 0.01);
    CHECK(mn == 0 && mx == 1);
    tn_tensor *bb = tn_bernoulli_p(TN_SHAPE(1000), 0.5, TN_BOOL, NULL);
    CHECK_DTYPE(bb, TN_BOOL);
    moments(bb, &mean, &var, &mn, &mx);
    CHECK_CLOSE(mean, 0.5, 0.06);
    tn_tensor *b0 = tn_bernoulli_p(TN_SHAPE(100), 0, TN_F64, NULL);
    moments(b0, &mean, &var, &mn, &mx);
    CHECK(mx == 0);
    tn_tensor *b1 = tn_bernoulli_p(TN_SHAPE(100), 1, TN_F64, NULL);
    moments(b1, &mean, &var, &mn, &mx);
    CHECK(mn == 1);
    tn_tensor *probs = tn_repeat(F64V(0, 1, 0.25, 0.75), TN_SHAPE(20000));
    tn_tensor *draw = tn_bernoulli(probs, NULL);
    CHECK_DTYPE(draw, TN_F64); CHECK_SHAPE(draw, 80000);
    {
        double cnt[4] = {0, 0, 0, 0};
        for (int64_t i = 0; i < 80000; i++) cnt[i % 4] += elem(draw, i);
        CHECK(cnt[0] == 0);
        CHECK(cnt[1] == 20000);
        CHECK_CLOSE(cnt[2] / 20000, 0.25, 0.015);
        CHECK_CLOSE(cnt[3] / 20000, 0.75, 0.015);
    }

    /* randperm: a permutation of 0..n-1 */
    tn_tensor *perm = tn_randperm(1000, TN_I64, NULL);
    CHECK_DTYPE(perm, TN_I64); CHECK_SHAPE(perm, 1000);
    {
        static bool seen[1000];
        memset(seen, 0, sizeof seen);
        bool ok = true, moved = false;
        for (int64_t i = 0; i < 1000; i++) {
            int64_t v = elem_i64(perm, i);
            if (v < 0 || v >= 1000 || seen[v]) ok = false; else seen[v] = true;
            if (v != i) moved = true;
        }
        CHECK(ok);
        CHECK(moved);
    }
    tn_tensor *perm32 = tn_randperm(5, TN_I32, NULL);
    CHECK_DTYPE(perm32, TN_I32);
    CHECK_VALS(tn_sort(perm32, NULL, .dim = 0), 0, 1, 2, 3, 4);
    CHECK_SHAPE(tn_randperm(0, TN_I64, NULL), 0);
    CHECK_VALS(tn_randperm(1, TN_I64, NULL), 0);

    /* 0-d and empty draws */
    tn_tensor *r0 = tn_rand(NULL, 0, TN_F32);
    CHECK_SHAPE0(r0); CHECK(elem(r0, 0) >= 0 && elem(r0, 0) < 1);
    CHECK_SHAPE(tn_randn(TN_SHAPE(0, 5), TN_F32), 0, 5);

    /* errors */
    CHECK_ERR(tn_rand(TN_SHAPE(3), TN_I32), "floating");
    CHECK_ERR(tn_randn(TN_SHAPE(3), TN_I64), "floating");
    CHECK_ERR(tn_normal(0, -1, TN_SHAPE(3), TN_F32, NULL), "std");
    CHECK_ERR(tn_uniform(2, 1, TN_SHAPE(3), TN_F32, NULL), "low");
    CHECK_ERR(tn_randint(5, 5, TN_SHAPE(3), TN_I64, NULL), "low < high");
    CHECK_ERR(tn_randint(0, 2, TN_SHAPE(3), TN_BOOL, NULL), "bool");
    CHECK_ERR(tn_bernoulli_p(TN_SHAPE(3), 1.5, TN_F32, NULL), "p must be in");
    CHECK_ERR(tn_bernoulli(I32V(0, 1), NULL), "floating");
    CHECK_ERR(tn_randperm(-1, TN_I64, NULL), "non-negative");
    tn_scope_end();
}

/* ======================================================================== */
/* 5. views                                                                  */
/* ======================================================================== */
TEST(view_reshape) {
    tn_scope_begin();
    tn_tensor *a = tn_arange(0, 12, 1, TN_F32);
    tn_tensor *v = tn_view(a, TN_SHAPE(3, -1));
    CHECK_SHAPE(v, 3, 4); CHECK_STRIDES(v, 4, 1);
    CHECK(tn_same_storage(a, v));
    v = tn_view(a, TN_SHAPE(-1, 2, 3));
    CHECK_SHAPE(v, 2, 2, 3); CHECK_STRIDES(v, 6, 3, 1);
    v = tn_view(a, TN_SHAPE(12));
    CHECK_SHAPE(v, 12);
    v = tn_view(a, TN_SHAPE(1, 12, 1));
    CHECK_SHAPE(v, 1, 12, 1);
    /* writes through a view reach the base */
    tn_fill_(tn_select(tn_view(a, TN_SHAPE(3, 4)), 1, 2), -1);   /* column 2 */
    CHECK_VALS(a, 0, 1, -1, 3, 4, 5, -1, 7, 8, 9, -1, 11);
    /* 0-d <-> 1 element */
    tn_tensor *s = tn_scalar_tensor(5, TN_F32);
    v = tn_view(s, TN_SHAPE(1, 1));
    CHECK_SHAPE(v, 1, 1); CHECK_VALS(v, 5);
    v = tn_view(tn_ones(TN_SHAPE(1), TN_F32), NULL, 0);
    CHECK_SHAPE0(v);
    v = tn_view(s, TN_SHAPE(-1));
    CHECK_SHAPE(v, 1);
    /* 0 elements */
    tn_tensor *e = tn_zeros(TN_SHAPE(0, 3), TN_F32);
    CHECK_SHAPE(tn_view(e, TN_SHAPE(-1, 3)), 0, 3);
    CHECK_SHAPE(tn_view(e, TN_SHAPE(3, 0, 5)), 3, 0, 5);
    CHECK_ERR(tn_view(e, TN_SHAPE(-1, 0)), "");           /* ambiguous -1 */
    /* errors */
    CHECK_ERR(tn_view(a, TN_SHAPE(5, -1)), "invalid for input of size 12");
    CHECK_ERR(tn_view(a, TN_SHAPE(-1, -1)), "only one dimension can be inferred");
    CHECK_ERR(tn_view(a, TN_SHAPE(3, 5)), "invalid for input of size 12");
    CHECK_ERR(tn_view(a, TN_SHAPE(-2, 6)), "invalid shape dimension");
    tn_tensor *tt = tn_t(tn_view(a, TN_SHAPE(3, 4)));
    CHECK_ERR(tn_view(tt, TN_SHAPE(12)), "tn_reshape");
    /* a view of a non-contiguous tensor where strides allow it */
    tn_tensor *t3 = tn_permute(tn_view(a, TN_SHAPE(2, 3, 2)), TN_DIMS(1, 0, 2)); /* [3,2,2] strides (2,6,1) */
    v = tn_view(t3, TN_SHAPE(3, 4));
    CHECK(v == NULL);                                        /* dims 0,1 are not mergeable */
    v = tn_view(t3, TN_SHAPE(3, 2, 2, 1));
    CHECK_STRIDES(v, 2, 6, 1, 1);
    tn_tensor *nar = tn_narrow(tn_view(a, TN_SHAPE(3, 4)), 1, 0, 2);  /* [3,2] strides (4,1) */
    v = tn_view(nar, TN_SHAPE(3, 2, 1));
    CHECK(v != NULL); CHECK_SHAPE(v, 3, 2, 1); CHECK_STRIDES(v, 4, 1, 1);
    CHECK(tn_view(nar, TN_SHAPE(6)) == NULL);

    /* reshape: a view when possible, a copy when not */
    tn_tensor *r = tn_reshape(a, TN_SHAPE(2, 6));
    CHECK(tn_same_storage(r, a)); CHECK_STRIDES(r, 6, 1);
    tn_tensor *m = tn_reshape(tn_arange(0, 6, 1, TN_I64), TN_SHAPE(2, 3));
    tn_tensor *mt = tn_t(m);
    r = tn_reshape(mt, TN_SHAPE(-1));
    CHECK(!tn_same_storage(r, mt));
    CHECK_SHAPE(r, 6); CHECK_VALS(r, 0, 3, 1, 4, 2, 5);
    r = tn_reshape(mt, TN_SHAPE(3, 2, 1));                   /* a view even though mt is transposed */
    CHECK(tn_same_storage(r, mt)); CHECK_STRIDES(r, 1, 3, 3);   /* torch's computeStride */
    r = tn_reshape(tn_slice(tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4)), 1, 1, 3, 1), TN_SHAPE(-1));
    CHECK_VALS(r, 1, 2, 5, 6, 9, 10);
    r = tn_reshape(tn_scalar_tensor(2, TN_F64), TN_SHAPE(1, 1, 1));
    CHECK_SHAPE(r, 1, 1, 1); CHECK_VALS(r, 2);
    r = tn_reshape(tn_zeros(TN_SHAPE(2, 0), TN_F32), TN_SHAPE(0, 7));
    CHECK_SHAPE(r, 0, 7);
    CHECK_ERR(tn_reshape(a, TN_SHAPE(7, -1)), "invalid for input of size 12");
    /* expanded (stride 0) input: reshape must copy */
    tn_tensor *ex = tn_expand(F32V(1, 2), TN_SHAPE(3, 2));
    r = tn_reshape(ex, TN_SHAPE(6));
    CHECK_VALS(r, 1, 2, 1, 2, 1, 2);
    CHECK(!tn_same_storage(r, ex));
    tn_scope_end();
}

TEST(flatten_unflatten) {
    tn_scope_begin();
    tn_tensor *a = tn_reshape(tn_arange(0, 24, 1, TN_F32), TN_SHAPE(2, 3, 4));
    CHECK_SHAPE(tn_flatten(a), 24);
    CHECK_SHAPE(tn_flatten(a, .start_dim = 1), 2, 12);
    CHECK_SHAPE(tn_flatten(a, .end_dim = 1), 6, 4);
    tn_tensor *f = tn_flatten(a, .start_dim = -2);
    CHECK_SHAPE(f, 2, 12); CHECK_STRIDES(f, 12, 1); CHECK(tn_same_storage(f, a));
    CHECK_SHAPE(tn_flatten(a, .start_dim = 1, .end_dim = 1), 2, 3, 4);
    tn_tensor *f0 = tn_flatten(tn_scalar_tensor(3, TN_F32));
    CHECK_SHAPE(f0, 1); CHECK_VALS(f0, 3);
    tn_tensor *ft = tn_flatten(tn_transpose(a, 0, 2));    /* needs a copy */
    CHECK_SHAPE(ft, 24);
    CHECK_VALS(tn_slice(ft, 0, 0, 4, 1), 0, 12, 4, 16);
    CHECK_ERR(tn_flatten(a, .start_dim = 2, .end_dim = 1), "cannot come after");
    CHECK_ERR(tn_flatten(a, .end_dim = 3), "out of range");
    CHECK_SHAPE(tn_flatten(tn_zeros(TN_SHAPE(2, 0, 3), TN_F32), .start_dim = 1, .end_dim = 2), 2, 0);

    tn_tensor *b = tn_zeros(TN_SHAPE(2, 12), TN_F32);
    tn_tensor *u = tn_unflatten(b, 1, TN_SHAPE(3, -1));
    CHECK_SHAPE(u, 2, 3, 4); CHECK_STRIDES(u, 12, 4, 1);
    u = tn_unflatten(b, -1, TN_SHAPE(2, 2, 3));
    CHECK_SHAPE(u, 2, 2, 2, 3); CHECK_STRIDES(u, 12, 6, 3, 1);
    u = tn_unflatten(b, 0, TN_SHAPE(1, 2));
    CHECK_SHAPE(u, 1, 2, 12);
    u = tn_unflatten(a, 2, TN_SHAPE(2, 2));
    CHECK_SHAPE(u, 2, 3, 2, 2);
    CHECK(elem(u, 23) == 23 && elem(u, 5) == 5);
    CHECK_ERR(tn_unflatten(b, 1, TN_SHAPE(5, -1)), "multiply");
    CHECK_ERR(tn_unflatten(b, 1, TN_SHAPE(3, 3)), "multiply");
    CHECK_ERR(tn_unflatten(b, 2, TN_SHAPE(3, 4)), "out of range");
    tn_scope_end();
}

TEST(permute_transpose_t) {
    tn_scope_begin();
    tn_tensor *a = tn_reshape(tn_arange(0, 24, 1, TN_I64), TN_SHAPE(2, 3, 4));
    tn_tensor *p = tn_permute(a, TN_DIMS(2, 0, 1));
    CHECK_SHAPE(p, 4, 2, 3); CHECK_STRIDES(p, 1, 12, 4);
    CHECK(tn_same_storage(p, a)); CHECK(!tn_is_contiguous(p));
    CHECK(elem(p, 1) == 4 && elem(p, 3) == 12 && elem(p, 6) == 1); /* p[0,0,1] = a[0,1,0]; p[0,1,0] = a[1,0,0]; p[1,0,0] = a[0,0,1] */
    p = tn_permute(a, TN_DIMS(-1, -3, -2));
    CHECK_SHAPE(p, 4, 2, 3);
    CHECK_ERR(tn_permute(a, TN_DIMS(0, 0, 1)), "repeats");
    CHECK_ERR(tn_permute(a, TN_DIMS(0, 1)), "doesn't match");
    CHECK_ERR(tn_permute(a, TN_DIMS(0, 1, 3)), "out of range");
    CHECK_SHAPE0(tn_permute(tn_scalar_tensor(1, TN_F32), NULL, 0));

    tn_tensor *t = tn_transpose(a, 0, 2);
    CHECK_SHAPE(t, 4, 3, 2); CHECK_STRIDES(t, 1, 4, 12);
    t = tn_transpose(a, -1, -3);
    CHECK_SHAPE(t, 4, 3, 2);
    t = tn_transpose(a, 1, 1);
    CHECK_SHAPE(t, 2, 3, 4); CHECK_STRIDES(t, 12, 4, 1);
    CHECK_ERR(tn_transpose(a, 0, 3), "out of range");
    tn_tensor *m = tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(2, 3));
    tn_tensor *mt = tn_t(m);
    CHECK_SHAPE(mt, 3, 2); CHECK_STRIDES(mt, 1, 3); CHECK_VALS(mt, 0, 3, 1, 4, 2, 5);
    tn_fill_(tn_select(mt, 0, 2), 9);                        /* mt[2,:] = m[:,2] */
    CHECK_VALS(m, 0, 1, 9, 3, 4, 9);
    tn_tensor *v1 = tn_t(F32V(1, 2, 3));
    CHECK_SHAPE(v1, 3); CHECK_VALS(v1, 1, 2, 3);
    tn_tensor *s0 = tn_t(tn_scalar_tensor(4, TN_F32));
    CHECK_SHAPE0(s0); CHECK_VALS(s0, 4);
    CHECK_SHAPE0(tn_transpose(tn_scalar_tensor(4, TN_F32), 0, -1));
    CHECK_ERR(tn_t(a), "<= 2 dimensions");
    CHECK_SHAPE(tn_t(tn_zeros(TN_SHAPE(0, 5), TN_F32)), 5, 0);
    tn_scope_end();
}

TEST(narrow_slice_select) {
    tn_scope_begin();
    tn_tensor *x = tn_arange(0, 10, 1, TN_F32);
    tn_tensor *n = tn_narrow(x, 0, 2, 3);
    CHECK_SHAPE(n, 3); CHECK_VALS(n, 2, 3, 4); CHECK(tn_storage_offset(n) == 2); CHECK(tn_same_storage(n, x));
    n = tn_narrow(x, 0, -3, 2);
    CHECK_VALS(n, 7, 8);
    n = tn_narrow(x, -1, 10, 0);
    CHECK_SHAPE(n, 0);
    CHECK_ERR(tn_narrow(x, 0, 8, 3), "exceeds");
    CHECK_ERR(tn_narrow(x, 0, 11, 0), "out of range");
    CHECK_ERR(tn_narrow(x, 0, -11, 1), "out of range");
    CHECK_ERR(tn_narrow(x, 0, 0, -1), "exceeds");
    CHECK_ERR(tn_narrow(tn_scalar_tensor(1, TN_F32), 0, 0, 1), "0-dim");
    tn_tensor *m = tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4));
    n = tn_narrow(m, 1, 1, 2);
    CHECK_SHAPE(n, 3, 2); CHECK_STRIDES(n, 4, 1); CHECK_VALS(n, 1, 2, 5, 6, 9, 10);

    /* slice: python semantics */
    tn_tensor *s = tn_slice(x, 0, -3, TN_END, 1);
    CHECK_VALS(s, 7, 8, 9);
    s = tn_slice(x, 0, -100, 2, 1);
    CHECK_VALS(s, 0, 1);
    s = tn_slice(x, 0, 2, -2, 3);
    CHECK_VALS(s, 2, 5); CHECK_STRIDES(s, 3); CHECK(tn_storage_offset(s) == 2);
    s = tn_slice(x, 0, 8, 2, 1);
    CHECK_SHAPE(s, 0);
    s = tn_slice(x, 0, 0, TN_END, 2);
    CHECK_STRIDES(s, 2); CHECK_VALS(s, 0, 2, 4, 6, 8);
    s = tn_slice(x, 0, 1, TN_END, 3);
    CHECK(tn_storage_offset(s) == 1); CHECK_VALS(s, 1, 4, 7);
    s = tn_slice(x, 0, 5, 100, 1);
    CHECK_VALS(s, 5, 6, 7, 8, 9);
    s = tn_slice(x, 0, -2, -5, 1);
    CHECK_SHAPE(s, 0);
    s = tn_slice(x, 0, 100, 200, 1);
    CHECK_SHAPE(s, 0);
    s = tn_slice(x, 0, 0, 0, 1);
    CHECK_SHAPE(s, 0);
    s = tn_slice(x, 0, 9, TN_END, 5);
    CHECK_VALS(s, 9);
    s = tn_slice(m, -1, 1, TN_END, 2);
    CHECK_SHAPE(s, 3, 2); CHECK_STRIDES(s, 4, 2); CHECK_VALS(s, 1, 3, 5, 7, 9, 11);
    s = tn_slice(m, 0, 1, 2, 1);
    CHECK_SHAPE(s, 1, 4); CHECK_VALS(s, 4, 5, 6, 7);
    tn_fill_(tn_slice(x, 0, 0, TN_END, 3), -1);              /* writes reach the base */
    CHECK_VALS(x, -1, 1, 2, -1, 4, 5, -1, 7, 8, -1);
    CHECK_ERR(tn_slice(x, 0, 0, 5, 0), "step");
    CHECK_ERR(tn_slice(x, 0, 0, 5, -1), "step");
    CHECK_ERR(tn_slice(x, 1, 0, 5, 1), "out of range");
    CHECK_ERR(tn_slice(tn_scalar_tensor(1, TN_F32), 0, 0, 1, 1), "0-dim");
    tn_tensor *e = tn_slice(tn_zeros(TN_SHAPE(0, 3), TN_F32), 0, 1, 5, 1);
    CHECK_SHAPE(e, 0, 3);

    /* select */
    tn_tensor *a3 = tn_reshape(tn_arange(0, 24, 1, TN_F32), TN_SHAPE(2, 3, 4));
    tn_tensor *sel = tn_select(a3, 1, 1);
    CHECK_SHAPE(sel, 2, 4); CHECK_STRIDES(sel, 12, 1); CHECK(tn_storage_offset(sel) == 4);
    CHECK_VALS(sel, 4, 5, 6, 7, 16, 17, 18, 19);
    sel = tn_select(a3, -1, -1);
    CHECK_SHAPE(sel, 2, 3); CHECK(tn_storage_offset(sel) == 3); CHECK_VALS(sel, 3, 7, 11, 15, 19, 23);
    sel = tn_select(tn_select(tn_select(a3, 0, 1), 0, 2), 0, 3);
    CHECK_SHAPE0(sel); CHECK_VALS(sel, 23); CHECK(tn_item(sel) == 23);
    CHECK_ERR(tn_select(a3, 0, 2), "out of range");
    CHECK_ERR(tn_select(a3, 0, -3), "out of range");
    CHECK_ERR(tn_select(a3, 3, 0), "out of range");
    CHECK_ERR(tn_select(tn_scalar_tensor(1, TN_F32), 0, 0), "0-dim");
    CHECK_ERR(tn_select(tn_zeros(TN_SHAPE(0, 2), TN_F32), 0, 0), "out of range");
    CHECK_SHAPE(tn_select(tn_zeros(TN_SHAPE(2, 0), TN_F32), 0, 1), 0);
    tn_scope_end();
}

TEST(expand_broadcast) {
    tn_scope_begin();
    tn_tensor *v = F32V(1, 2, 3);
    tn_tensor *e = tn_expand(v, TN_SHAPE(2, -1));
    CHECK_SHAPE(e, 2, 3); CHECK_STRIDES(e, 0, 1); CHECK_VALS(e, 1, 2, 3, 1, 2, 3);
    CHECK(tn_same_storage(e, v)); CHECK(!tn_is_contiguous(e));
    e = tn_expand(v, TN_SHAPE(2, 2, 3));
    CHECK_STRIDES(e, 0, 0, 1);
    tn_tensor *col = tn_view(F32V(7, 8, 9, 10), TN_SHAPE(4, 1));
    e = tn_expand(col, TN_SHAPE(-1, 3));
    CHECK_SHAPE(e, 4, 3); CHECK_STRIDES(e, 1, 0); CHECK_VALS(e, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10, 10);
    e = tn_expand(v, TN_SHAPE(0, 3));
    CHECK_SHAPE(e, 0, 3);
    e = tn_expand(tn_ones(TN_SHAPE(1), TN_F32), TN_SHAPE(0));
    CHECK_SHAPE(e, 0);
    tn_tensor *s = tn_scalar_tensor(5, TN_I32);
    e = tn_expand(s, TN_SHAPE(2, 2));
    CHECK_SHAPE(e, 2, 2); CHECK_STRIDES(e, 0, 0); CHECK_VALS(e, 5, 5, 5, 5); CHECK_DTYPE(e, TN_I32);
    e = tn_expand(v, TN_SHAPE(3));
    CHECK_STRIDES(e, 1);
    CHECK_ERR(tn_expand(v, TN_SHAPE(4)), "must match the existing size");
    CHECK_ERR(tn_expand(v, TN_SHAPE(-1, 3)), "leading, non-existing dimension");
    CHECK_ERR(tn_expand(tn_zeros(TN_SHAPE(2, 3), TN_F32), TN_SHAPE(3)), "greater or equal");
    CHECK_ERR(tn_expand(v, TN_SHAPE(2, 6)), "must match the existing size");
    /* expand_as, broadcast_to */
    tn_tensor *tgt = tn_zeros(TN_SHAPE(2, 4, 3), TN_F64);
    e = tn_expand_as(v, tgt);
    CHECK_SHAPE(e, 2, 4, 3); CHECK_STRIDES(e, 0, 0, 1); CHECK_DTYPE(e, TN_F32);
    CHECK(elem(e, 23) == 3 && elem(e, 13) == 2);
    e = tn_broadcast_to(col, TN_SHAPE(2, 4, 2));
    CHECK_SHAPE(e, 2, 4, 2); CHECK_STRIDES(e, 0, 1, 0);
    CHECK_VALS(e, 7, 7, 8, 8, 9, 9, 10, 10, 7, 7, 8, 8, 9, 9, 10, 10);
    CHECK_ERR(tn_broadcast_to(col, TN_SHAPE(3, 3)), "must match");
    /* a write through the expanded view lands in the single source element */
    tn_tensor *one = tn_zeros(TN_SHAPE(1), TN_F32);
    tn_tensor *big = tn_expand(one, TN_SHAPE(3));
    tn_tensor *src = tn_ones(TN_SHAPE(1), TN_F32);
    tn_copy_(tn_select(big, 0, 2), tn_squeeze(src));
    CHECK_VALS(one, 1);
    CHECK_VALS(big, 1, 1, 1);
    tn_scope_end();
}

TEST(squeeze_unsqueeze) {
    tn_scope_begin();
    tn_tensor *a = tn_zeros(TN_SHAPE(2, 1, 3, 1), TN_F32);
    tn_tensor *s = tn_squeeze(a);
    CHECK_SHAPE(s, 2, 3); CHECK_STRIDES(s, 3, 1); CHECK(tn_same_storage(s, a));
    s = tn_squeeze_dim(a, 1);
    CHECK_SHAPE(s, 2, 3, 1);
    s = tn_squeeze_dim(a, -1);
    CHECK_SHAPE(s, 2, 1, 3);
    s = tn_squeeze_dim(a, 0);                               /* size 2: unchanged */
    CHECK_SHAPE(s, 2, 1, 3, 1);
    CHECK_ERR(tn_squeeze_dim(a, 4), "out of range");
    CHECK_ERR(tn_squeeze_dim(a, -5), "out of range");
    s = tn_squeeze(tn_zeros(TN_SHAPE(1, 1), TN_F32));
    CHECK_SHAPE0(s);
    tn_tensor *z = tn_scalar_tensor(3, TN_F32);
    CHECK_SHAPE0(tn_squeeze(z));
    CHECK_SHAPE0(tn_squeeze_dim(z, 0));
    CHECK_SHAPE0(tn_squeeze_dim(z, -1));
    CHECK_SHAPE(tn_squeeze(tn_zeros(TN_SHAPE(1, 0, 1), TN_F32)), 0);

    tn_tensor *b = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    tn_tensor *u = tn_unsqueeze(b, 0);
    CHECK_SHAPE(u, 1, 2, 3); CHECK_STRIDES(u, 6, 3, 1);
    u = tn_unsqueeze(b, 1);
    CHECK_SHAPE(u, 2, 1, 3); CHECK_STRIDES(u, 3, 3, 1);
    u = tn_unsqueeze(b, 2);
    CHECK_SHAPE(u, 2, 3, 1); CHECK_STRIDES(u, 3, 1, 1);
    u = tn_unsqueeze(b, -1);
    CHECK_SHAPE(u, 2, 3, 1); CHECK_STRIDES(u, 3, 1, 1);
    u = tn_unsqueeze(b, -3);
    CHECK_SHAPE(u, 1, 2, 3); CHECK_STRIDES(u, 6, 3, 1);
    u = tn_unsqueeze(tn_t(b), 1);
    CHECK_SHAPE(u, 3, 1, 2); CHECK_STRIDES(u, 1, 6, 3);
    u = tn_unsqueeze(tn_t(b), 0);
    CHECK_STRIDES(u, 3, 1, 3);
    CHECK_ERR(tn_unsqueeze(b, 3), "out of range");
    CHECK_ERR(tn_unsqueeze(b, -4), "out of range");
    u = tn_unsqueeze(z, 0);
    CHECK_SHAPE(u, 1); CHECK_STRIDES(u, 1); CHECK_VALS(u, 3);
    u = tn_unsqueeze(z, -1);
    CHECK_SHAPE(u, 1);
    int64_t ones[TN_MAX_DIMS];
    for (int k = 0; k < TN_MAX_DIMS; k++) ones[k] = 1;
    tn_tensor *deep = tn_zeros(ones, TN_MAX_DIMS, TN_F32);
    CHECK_ERR(tn_unsqueeze(deep, 0), "cannot grow");
    /* unsqueeze then squeeze round-trips values */
    tn_tensor *v = F32V(4, 5, 6);
    CHECK_VALS(tn_squeeze(tn_unsqueeze(tn_unsqueeze(v, 0), -1)), 4, 5, 6);
    tn_scope_end();
}

TEST(unfold_as_strided_detach) {
    tn_scope_begin();
    tn_tensor *x = tn_arange(0, 7, 1, TN_F32);
    tn_tensor *u = tn_unfold(x, 0, 3, 2);
    CHECK_SHAPE(u, 3, 3); CHECK_STRIDES(u, 2, 1); CHECK(tn_same_storage(u, x));
    CHECK_VALS(u, 0, 1, 2, 2, 3, 4, 4, 5, 6);
    u = tn_unfold(x, 0, 2, 3);                              /* last element dropped */
    CHECK_SHAPE(u, 2, 2); CHECK_VALS(u, 0, 1, 3, 4);
    u = tn_unfold(x, 0, 7, 1);
    CHECK_SHAPE(u, 1, 7);
    u = tn_unfold(x, 0, 0, 1);
    CHECK_SHAPE(u, 8, 0);
    tn_tensor *m = tn_reshape(tn_arange(0, 12, 1, TN_I64), TN_SHAPE(3, 4));
    u = tn_unfold(m, 1, 2, 1);
    CHECK_SHAPE(u, 3, 3, 2); CHECK_STRIDES(u, 4, 1, 1);
    CHECK_VALS(tn_select(u, 0, 1), 4, 5, 5, 6, 6, 7);
    u = tn_unfold(m, 0, 2, 1);
    CHECK_SHAPE(u, 2, 4, 2); CHECK_STRIDES(u, 4, 1, 4);
    CHECK_VALS(u, 0, 4, 1, 5, 2, 6, 3, 7, 4, 8, 5, 9, 6, 10, 7, 11);
    u = tn_unfold(m, -1, 3, 3);
    CHECK_SHAPE(u, 3, 1, 3); CHECK_VALS(u, 0, 1, 2, 4, 5, 6, 8, 9, 10);
    u = tn_unfold(m, 1, 4, 3);
    CHECK_SHAPE(u, 3, 1, 4);
    u = tn_unfold(m, 1, 0, 1);
    CHECK_SHAPE(u, 3, 5, 0);
    tn_tensor *s0 = tn_scalar_tensor(5, TN_F32);
    u = tn_unfold(s0, 0, 1, 1);                             /* torch: shape (1,) */
    CHECK_SHAPE(u, 1); CHECK_STRIDES(u, 1); CHECK_VALS(u, 5);
    CHECK_ERR(tn_unfold(x, 0, 8, 1), "maximum size");
    CHECK_ERR(tn_unfold(x, 0, 2, 0), "step");
    CHECK_ERR(tn_unfold(x, 1, 2, 1), "out of range");

    /* as_strided */
    tn_tensor *b = tn_arange(0, 9, 1, TN_F32);
    tn_tensor *as = tn_as_strided(b, TN_SHAPE(2, 2), STRIDES(3, 1), 1);
    CHECK_SHAPE(as, 2, 2); CHECK_STRIDES(as, 3, 1); CHECK(tn_storage_offset(as) == 1);
    CHECK_VALS(as, 1, 2, 4, 5);
    as = tn_as_strided(b, TN_SHAPE(3, 3), STRIDES(1, 3), 0);   /* transpose */
    CHECK_VALS(as, 0, 3, 6, 1, 4, 7, 2, 5, 8);
    as = tn_as_strided(b, TN_SHAPE(4, 2), STRIDES(2, 1), 0);   /* overlapping windows */
    CHECK_VALS(as, 0, 1, 2, 3, 4, 5, 6, 7);
    as = tn_as_strided(b, TN_SHAPE(3), STRIDES(0), 8);
    CHECK_VALS(as, 8, 8, 8);
    as = tn_as_strided(b, NULL, 0, NULL, 4);
    CHECK_SHAPE0(as); CHECK_VALS(as, 4);
    /* storage-relative: the offset of a view is ignored, as torch */
    as = tn_as_strided(tn_slice(b, 0, 5, TN_END, 1), TN_SHAPE(2), STRIDES(1), 0);
    CHECK_VALS(as, 0, 1);
    tn_fill_(tn_as_strided(b, TN_SHAPE(2), STRIDES(4), 0), -1);
    CHECK_VALS(b, -1, 1, 2, 3, -1, 5, 6, 7, 8);
    CHECK_ERR(tn_as_strided(b, TN_SHAPE(2, 2), STRIDES(5, 4), 0), "past the storage");
    CHECK_ERR(tn_as_strided(b, TN_SHAPE(1), STRIDES(1), 9), "past the storage");
    CHECK_ERR(tn_as_strided(b, TN_SHAPE(2), STRIDES(-1), 3), "negative stride");
    CHECK_ERR(tn_as_strided(b, TN_SHAPE(2), STRIDES(1), -1), "negative storage offset");
    CHECK_SHAPE(tn_as_strided(b, TN_SHAPE(0, 100), STRIDES(100, 1), 9), 0, 100);

    /* detach: same data and layout */
    tn_tensor *t = tn_t(tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(2, 3)));
    tn_tensor *d = tn_detach(t);
    CHECK(d != t && tn_same_storage(d, t));
    CHECK_SHAPE(d, 3, 2); CHECK_STRIDES(d, 1, 3); CHECK(tn_storage_offset(d) == tn_storage_offset(t));
    CHECK(!tn_requires_grad(d));
    tn_fill_(d, 2);
    CHECK_VALS(t, 2, 2, 2, 2, 2, 2);
    tn_scope_end();
}

TEST(views_on_views) {
    tn_scope_begin();
    /* chains of views compose offsets and strides */
    tn_tensor *a = tn_reshape(tn_arange(0, 60, 1, TN_F32), TN_SHAPE(3, 4, 5));
    /* transpose(a,0,2): [5,4,3]; select(dim1=2): [5,3] = a[:,2,:].T; slice dim1 1:3 -> [5,2] = a[1:3, 2, :].T */
    tn_tensor *v = tn_slice(tn_select(tn_transpose(a, 0, 2), 1, 2), 1, 1, 3, 1);
    CHECK_SHAPE(v, 5, 2); CHECK_STRIDES(v, 1, 20);
    CHECK(tn_storage_offset(v) == 30);
    CHECK_VALS(v, 30, 50, 31, 51, 32, 52, 33, 53, 34, 54);
    tn_tensor *w = tn_narrow(tn_unsqueeze(v, 0), 2, 1, 1);   /* [1,5,1] */
    CHECK_SHAPE(w, 1, 5, 1); CHECK(tn_storage_offset(w) == 50);
    CHECK_VALS(w, 50, 51, 52, 53, 54);
    tn_mul_scalar_(w, -1);
    CHECK(elem(a, 50) == -50 && elem(a, 54) == -54 && elem(a, 49) == 49 && elem(a, 55) == 55);
    /* tn_data_ptr points at element [0,...,0] */
    CHECK(tn_data_ptr(w) == (void *)((float *)tn_data_ptr(a) + 50));
    /* contiguous() of a complex view */
    tn_tensor *c = tn_contiguous(v);
    CHECK_STRIDES(c, 2, 1); CHECK_VALS(c, 30, -50, 31, -51, 32, -52, 33, -53, 34, -54);
    /* version counter is shared by views */
    int64_t v0 = tn_version(a);
    tn_fill_(tn_select(a, 0, 0), 0);
    CHECK(tn_version(a) > v0 && tn_version(v) == tn_version(a));
    tn_scope_end();
}

/* ======================================================================== */
/* 6. printing (expected strings are PyTorch 1.13's repr)                    */
/* ======================================================================== */
static tn_tensor *fmat(const float *d, const int64_t *shape, int nd) { return tn_from_data(d, shape, nd, TN_F32); }

TEST(repr_float) {
    tn_scope_begin();
    tn_tensor *f2d = fmat((const float[]){1.5f, 2.25f, 3.125f, -4.0f}, TN_SHAPE(2, 2));
    CHECK_REPR(f2d, "tensor([[ 1.5000,  2.2500],\n"
        "        [ 3.1250, -4.0000]])");
    tn_tensor *intf = F32V(1, 2, 3);
    CHECK_REPR(intf, "tensor([1., 2., 3.])");
    tn_tensor *intf_neg = fmat((const float[]){1, -20, 300, 4}, TN_SHAPE(2, 2));
    CHECK_REPR(intf_neg, "tensor([[  1., -20.],\n"
        "        [300.,   4.]])");
    tn_tensor *mixed = F32V(-1.5f, 10.25f, 0.001f, 123.456f);
    CHECK_REPR(mixed, "tensor([-1.5000e+00,  1.0250e+01,  1.0000e-03,  1.2346e+02])");
    tn_tensor *sci1 = F32V(1e-5f, 1.0f);
    CHECK_REPR(sci1, "tensor([1.0000e-05, 1.0000e+00])");
    tn_tensor *sci2 = F32V(1e9f);
    CHECK_REPR(sci2, "tensor([1.0000e+09])");
    tn_tensor *sci3 = F32V(1e9f, 1.0f);
    CHECK_REPR(sci3, "tensor([1.0000e+09, 1.0000e+00])");
    tn_tensor *sci4 = F32V(0.5f, 2000.0f);
    CHECK_REPR(sci4, "tensor([5.0000e-01, 2.0000e+03])");
    tn_tensor *nanf = F32V(NAN, INFINITY, -INFINITY, 1.5f);
    CHECK_REPR(nanf, "tensor([   nan,    inf,   -inf, 1.5000])");
    tn_tensor *nanint = F32V(NAN, 1, 2);
    CHECK_REPR(nanint, "tensor([nan, 1., 2.])");
    tn_tensor *allnan = F32V(NAN, INFINITY);
    CHECK_REPR(allnan, "tensor([nan, inf])");
    tn_tensor *zeros = tn_zeros(TN_SHAPE(3), TN_F32);
    CHECK_REPR(zeros, "tensor([0., 0., 0.])");
    tn_tensor *neg0 = F32V(-0.0f, 1.0f);
    CHECK_REPR(neg0, "tensor([-0., 1.])");
    tn_tensor *small = F32V(0.0001f, 0.001f);
    CHECK_REPR(small, "tensor([1.0000e-04, 1.0000e-03])");
    tn_tensor *small2 = F32V(0.00001234f, 0.5f);
    CHECK_REPR(small2, "tensor([1.2340e-05, 5.0000e-01])");
    tn_tensor *rnd = F32V(0.12345f, 0.99999f);
    CHECK_REPR(rnd, "tensor([0.1235, 1.0000])");
    tn_tensor *big = F32V(123456.7f, 1.5f);
    CHECK_REPR(big, "tensor([1.2346e+05, 1.5000e+00])");
    tn_tensor *bigint = F32V(1e8f, 1.0f);
    CHECK_REPR(bigint, "tensor([1.0000e+08, 1.0000e+00])");
    tn_tensor *bigint2 = F32V(100000000.0f, 123456789.0f);
    CHECK_REPR(bigint2, "tensor([1.0000e+08, 1.2346e+08])");
    tn_tensor *negsci = F32V(-1e-5f, 1e5f);
    CHECK_REPR(negsci, "tensor([-1.0000e-05,  1.0000e+05])");
    tn_tensor *one = F32V(1);
    CHECK_REPR(one, "tensor([1.])");
    tn_tensor *transposed = tn_t(tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(2, 3)));
    CHECK_REPR(transposed, "tensor([[0., 3.],\n"
        "        [1., 4.],\n"
        "        [2., 5.]])");
    tn_tensor *f64 = F64V(1.5, 2.0);
    CHECK_REPR(f64, "tensor([1.5000, 2.0000], dtype=torch.float64)");
    tn_tensor *f64int = tn_reshape(F64V(1, 2, 3, 4), TN_SHAPE(2, 2));
    CHECK_REPR(f64int, "tensor([[1., 2.],\n"
        "        [3., 4.]], dtype=torch.float64)");
    tn_tensor *frac30 = tn_div_scalar(tn_arange(0, 30, 1, TN_F32), 7);
    CHECK_REPR(frac30, "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])");
    tn_tensor *f64wrap = tn_div_scalar(tn_arange(0, 20, 1, TN_F64), 3);
    CHECK_REPR(f64wrap, "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333], dtype=torch.float64)");
    tn_scope_end();
}

TEST(repr_int_bool_0d_empty) {
    tn_scope_begin();
    tn_tensor *i64 = I64V(1, -20, 300);
    CHECK_REPR(i64, "tensor([  1, -20, 300])");
    tn_tensor *i32 = tn_reshape(I32V(1, 2, 3, 4), TN_SHAPE(2, 2));
    CHECK_REPR(i32, "tensor([[1, 2],\n"
        "        [3, 4]], dtype=torch.int32)");
    tn_tensor *u8 = U8V(0, 255, 7);
    CHECK_REPR(u8, "tensor([  0, 255,   7], dtype=torch.uint8)");
    tn_tensor *u8dt_2d = tn_reshape(tn_arange(0, 12, 1, TN_U8), TN_SHAPE(3, 4));
    CHECK_REPR(u8dt_2d, "tensor([[ 0,  1,  2,  3],\n"
        "        [ 4,  5,  6,  7],\n"
        "        [ 8,  9, 10, 11]], dtype=torch.uint8)");
    tn_tensor *b = BOOLV(true, false, true);
    CHECK_REPR(b, "tensor([ True, False,  True])");
    tn_tensor *b2 = tn_reshape(BOOLV(true, false, false, true), TN_SHAPE(2, 2));
    CHECK_REPR(b2, "tensor([[ True, False],\n"
        "        [False,  True]])");
    tn_tensor *imin = I64V(INT64_MIN, 0);
    CHECK_REPR(imin, "tensor([-9223372036854775808,                    0])");

    tn_tensor *zd_f = tn_scalar_tensor(3.5, TN_F32);
    CHECK_REPR(zd_f, "tensor(3.5000)");
    tn_tensor *zd_fi = tn_scalar_tensor(2, TN_F32);
    CHECK_REPR(zd_fi, "tensor(2.)");
    tn_tensor *zd_i = tn_scalar_tensor(7, TN_I64);
    CHECK_REPR(zd_i, "tensor(7)");
    tn_tensor *zd_i32 = tn_scalar_tensor(7, TN_I32);
    CHECK_REPR(zd_i32, "tensor(7, dtype=torch.int32)");
    tn_tensor *zd_b = tn_scalar_tensor(1, TN_BOOL);
    CHECK_REPR(zd_b, "tensor(True)");
    tn_tensor *zd_f64 = tn_scalar_tensor(0.1, TN_F64);
    CHECK_REPR(zd_f64, "tensor(0.1000, dtype=torch.float64)");
    tn_tensor *zd_nan = tn_scalar_tensor(NAN, TN_F32);
    CHECK_REPR(zd_nan, "tensor(nan)");
    tn_tensor *zd_sci = tn_scalar_tensor(1e-5, TN_F32);
    CHECK_REPR(zd_sci, "tensor(1.0000e-05)");

    tn_tensor *e0 = tn_zeros(TN_SHAPE(0), TN_F32);
    CHECK_REPR(e0, "tensor([])");
    tn_tensor *e03 = tn_zeros(TN_SHAPE(0, 3), TN_F32);
    CHECK_REPR(e03, "tensor([], size=(0, 3))");
    tn_tensor *e0i = tn_zeros(TN_SHAPE(0), TN_I32);
    CHECK_REPR(e0i, "tensor([], dtype=torch.int32)");
    tn_tensor *e_f64 = tn_zeros(TN_SHAPE(0), TN_F64);
    CHECK_REPR(e_f64, "tensor([], dtype=torch.float64)");
    /* an empty tensor names every non-default dtype, int64 and bool included */
    tn_tensor *e20i64 = tn_zeros(TN_SHAPE(2, 0), TN_I64);
    CHECK_REPR(e20i64, "tensor([], size=(2, 0), dtype=torch.int64)");
    tn_tensor *e_bool = tn_zeros(TN_SHAPE(0), TN_BOOL);
    CHECK_REPR(e_bool, "tensor([], dtype=torch.bool)");
    /* suffixes wrap at 80 columns exactly as torch's _add_suffixes */
    /* (8-d shapes whose sizes multiply below 2^63, so that no stride overflows) */
    tn_tensor *wrap46 = tn_empty(TN_SHAPE(0, 1000, 1000, 1000, 1000, 100, 100, 10), TN_F64);
    CHECK_REPR(wrap46, "tensor([], size=(0, 1000, 1000, 1000, 1000, 100, 100, 10), dtype=torch.float64)");
    tn_tensor *wrap47 = tn_empty(TN_SHAPE(0, 1000, 1000, 1000, 1000, 100, 100, 100), TN_F64);
    CHECK_REPR(wrap47, "tensor([], size=(0, 1000, 1000, 1000, 1000, 100, 100, 100),\n"
        "       dtype=torch.float64)");
    CHECK(tn_to_string(NULL) == NULL);
    tn_scope_end();
}

TEST(repr_multidim_and_wrapping) {
    tn_scope_begin();
    tn_tensor *d3 = tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(2, 2, 3));
    CHECK_REPR(d3, "tensor([[[ 0.,  1.,  2.],\n"
        "         [ 3.,  4.,  5.]],\n"
        "\n"
        "        [[ 6.,  7.,  8.],\n"
        "         [ 9., 10., 11.]]])");
    tn_tensor *d3i = tn_reshape(tn_arange(0, 24, 1, TN_I64), TN_SHAPE(2, 3, 4));
    CHECK_REPR(d3i, "tensor([[[ 0,  1,  2,  3],\n"
        "         [ 4,  5,  6,  7],\n"
        "         [ 8,  9, 10, 11]],\n"
        "\n"
        "        [[12, 13, 14, 15],\n"
        "         [16, 17, 18, 19],\n"
        "         [20, 21, 22, 23]]])");
    tn_tensor *d4 = tn_reshape(tn_arange(0, 16, 1, TN_I64), TN_SHAPE(2, 2, 2, 2));
    CHECK_REPR(d4, "tensor([[[[ 0,  1],\n"
        "          [ 2,  3]],\n"
        "\n"
        "         [[ 4,  5],\n"
        "          [ 6,  7]]],\n"
        "\n"
        "\n"
        "        [[[ 8,  9],\n"
        "          [10, 11]],\n"
        "\n"
        "         [[12, 13],\n"
        "          [14, 15]]]])");
    tn_tensor *ar30 = tn_arange(0, 30, 1, TN_F32);
    CHECK_REPR(ar30, "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
        "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
        "        28., 29.])");
    tn_tensor *ar30i = tn_arange(0, 30, 1, TN_I64);
    CHECK_REPR(ar30i, "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])");
    tn_tensor *ar100i = tn_arange(0, 100, 1, TN_I64);
    CHECK_REPR(ar100i, "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
        "        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n"
        "        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n"
        "        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n"
        "        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])");
    tn_tensor *ar13i32 = tn_arange(0, 13, 1, TN_I32);
    CHECK_REPR(ar13i32, "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12], dtype=torch.int32)");
    tn_scope_end();
}

TEST(repr_summarized) {
    tn_scope_begin();
    tn_tensor *ar2000 = tn_arange(0, 2000, 1, TN_F32);
    CHECK_REPR(ar2000, "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])");
    tn_tensor *ar2000r = tn_reshape(ar2000, TN_SHAPE(40, 50));
    CHECK_REPR(ar2000r, "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
        "         4.9000e+01],\n"
        "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
        "         9.9000e+01],\n"
        "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
        "         1.4900e+02],\n"
        "        ...,\n"
        "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
        "         1.8990e+03],\n"
        "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
        "         1.9490e+03],\n"
        "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03]])");
    tn_tensor *ar2000i = tn_reshape(tn_arange(0, 2000, 1, TN_I64), TN_SHAPE(2, 1000));
    CHECK_REPR(ar2000i, "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n"
        "        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])");
    tn_tensor *ar1001 = tn_arange(0, 1001, 1, TN_F32);
    CHECK_REPR(ar1001, "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])");
    /* exactly 1000 elements: not summarised */
    tn_tensor *ar1000 = tn_arange(0, 1000, 1, TN_I64);
    char *s = tn_to_string(ar1000);
    CHECK(s && strstr(s, "...") == NULL);
    const char *head1000 = "tensor([  0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,\n"
                           "         14,  15,";
    const char *tail1000 = ", 986, 987, 988, 989, 990, 991, 992, 993,\n"
                           "        994, 995, 996, 997, 998, 999])";
    CHECK(s && strncmp(s, head1000, strlen(head1000)) == 0);
    CHECK(s && strlen(s) > strlen(tail1000) && strcmp(s + strlen(s) - strlen(tail1000), tail1000) == 0);
    CHECK(s && strlen(s) == 5576); /* len(repr(torch.arange(1000))) */
    tn_string_free(s);
    tn_tensor *big3d = tn_reshape(tn_arange(0, 2000, 1, TN_F32), TN_SHAPE(20, 10, 10));
    s = tn_to_string(big3d);
    const char *head3d = "tensor([[[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 7.0000e+00,\n"
        "          8.0000e+00, 9.0000e+00],\n"
        "         [1.0000e+01, 1.1000e+01, 1.2000e+01,  ..., 1.7000e+01,\n"
        "          1.8000e+01, 1.9000e+01],\n"
        "         [2.0000e+01, 2.1000e+01, 2.2000e+01,  ..., 2.7000e+01,\n"
        "          2.8000e+01, 2.9000e+01],\n"
        "         ...,\n"
        "         [7.0000e+01, 7.1000e+01, 7.2000e+01,  ..., 7.7000e+01,\n"
        "          7.8000e+01, 7.9000e+01],\n";
    const char *mid3d = "          2.9800e+02, 2.9900e+02]],\n"
        "\n"
        "        ...,\n"
        "\n"
        "        [[1.7000e+03, 1.7010e+03, 1.7020e+03,  ..., 1.7070e+03,\n";
    const char *tail3d = "         [1.9900e+03, 1.9910e+03, 1.9920e+03,  ..., 1.9970e+03,\n"
        "          1.9980e+03, 1.9990e+03]]])";
    CHECK(s && strncmp(s, head3d, strlen(head3d)) == 0);
    CHECK(s && strstr(s, mid3d) != NULL);
    CHECK(s && strlen(s) > strlen(tail3d) && strcmp(s + strlen(s) - strlen(tail3d), tail3d) == 0);
    CHECK(s && strlen(s) == 3673); /* len(repr(torch.arange(2000.).reshape(20,10,10))) */
    tn_string_free(s);
    tn_scope_end();
}

TEST(repr_more) {
    tn_scope_begin();
    /* the format is chosen from the printed (summarised) elements only */
    tn_tensor *midbig = tn_zeros(TN_SHAPE(2000), TN_F32);
    tn_fill_(tn_select(midbig, 0, 1000), 1e10);
    CHECK_REPR(midbig, "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
    tn_tensor *r3x1000 = tn_div_scalar(tn_reshape(tn_arange(0, 3000, 1, TN_F32), TN_SHAPE(3, 1000)), 4);
    CHECK_REPR(r3x1000, "tensor([[0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., 2.4925e+02, 2.4950e+02,\n"
        "         2.4975e+02],\n"
        "        [2.5000e+02, 2.5025e+02, 2.5050e+02,  ..., 4.9925e+02, 4.9950e+02,\n"
        "         4.9975e+02],\n"
        "        [5.0000e+02, 5.0025e+02, 5.0050e+02,  ..., 7.4925e+02, 7.4950e+02,\n"
        "         7.4975e+02]])");
    tn_tensor *b1001 = tn_eq_scalar(tn_remainder_scalar(tn_arange(0, 1001, 1, TN_I64), 3), 0);
    CHECK_REPR(b1001, "tensor([ True, False, False,  ..., False,  True, False])");
    tn_tensor *col31 = fmat((const float[]){1.5f, 2, -3}, TN_SHAPE(3, 1));
    CHECK_REPR(col31, "tensor([[ 1.5000],\n"
        "        [ 2.0000],\n"
        "        [-3.0000]])");
    tn_tensor *one111 = tn_ones(TN_SHAPE(1, 1, 1), TN_F32);
    CHECK_REPR(one111, "tensor([[[1.]]])");
    tn_tensor *e203 = tn_zeros(TN_SHAPE(2, 0, 3), TN_F32);
    CHECK_REPR(e203, "tensor([], size=(2, 0, 3))");
    tn_tensor *zd_inf = tn_scalar_tensor(-INFINITY, TN_F32);
    CHECK_REPR(zd_inf, "tensor(-inf)");
    tn_tensor *zd_neg = tn_scalar_tensor(-3, TN_F32);
    CHECK_REPR(zd_neg, "tensor(-3.)");
    tn_tensor *sci_f64 = F64V(1e100, 1e-100, -2.5);
    CHECK_REPR(sci_f64, "tensor([1.0000e+100, 1.0000e-100, -2.5000e+00], dtype=torch.float64)");
    tn_tensor *r10 = F32V(9.99999f, 1.5f);
    CHECK_REPR(r10, "tensor([10.0000,  1.5000])");
    tn_tensor *u8big = tn_to_dtype(tn_remainder_scalar(tn_arange(0, 1200, 1, TN_I64), 256), TN_U8);
    CHECK_REPR(u8big, "tensor([  0,   1,   2,  ..., 173, 174, 175], dtype=torch.uint8)");
    tn_tensor *negint = tn_reshape(tn_arange(-1500, 1500, 1, TN_I64), TN_SHAPE(3, 1000));
    CHECK_REPR(negint, "tensor([[-1500, -1499, -1498,  ...,  -503,  -502,  -501],\n"
        "        [ -500,  -499,  -498,  ...,   497,   498,   499],\n"
        "        [  500,   501,   502,  ...,  1497,  1498,  1499]])");
    tn_tensor *f64_col = tn_reshape(tn_arange(0, 1100, 1, TN_F64), TN_SHAPE(1100, 1));
    CHECK_REPR(f64_col, "tensor([[0.0000e+00],\n"
        "        [1.0000e+00],\n"
        "        [2.0000e+00],\n"
        "        ...,\n"
        "        [1.0970e+03],\n"
        "        [1.0980e+03],\n"
        "        [1.0990e+03]], dtype=torch.float64)");
    tn_tensor *i32_wide = tn_mul_scalar(tn_reshape(tn_arange(0, 40, 1, TN_I32), TN_SHAPE(2, 20)), 1000);
    CHECK_REPR(i32_wide, "tensor([[    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
        "         10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000],\n"
        "        [20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000, 28000, 29000,\n"
        "         30000, 31000, 32000, 33000, 34000, 35000, 36000, 37000, 38000, 39000]],\n"
        "       dtype=torch.int32)");
    tn_tensor *neg_nan = F32V(-NAN, -1.25f);
    CHECK_REPR(neg_nan, "tensor([    nan, -1.2500])");
    tn_tensor *tiny = F32V(1e-20f, 0);
    CHECK_REPR(tiny, "tensor([1.0000e-20, 0.0000e+00])");
    /* the thresholds of sci mode: ratio > 1000, max > 1e8, min < 1e-4 (on the float32 values) */
    CHECK_REPR(F32V(0.0001f, 1), "tensor([1.0000e-04, 1.0000e+00])");
    CHECK_REPR(F32V(0.00011f, 1), "tensor([1.1000e-04, 1.0000e+00])");
    CHECK_REPR(F32V(1000, 1), "tensor([1000.,    1.])");
    CHECK_REPR(F32V(1001, 1), "tensor([1.0010e+03, 1.0000e+00])");
    CHECK_REPR(F32V(1e8f), "tensor([100000000.])");
    CHECK_REPR(F32V(1.5e8f), "tensor([1.5000e+08])");
    CHECK_REPR(F32V(0.5f, 500), "tensor([  0.5000, 500.0000])");
    CHECK_REPR(F32V(0.5f, 500.5f), "tensor([5.0000e-01, 5.0050e+02])");
    CHECK_REPR(F32V(-0.5f, 0.25f), "tensor([-0.5000,  0.2500])");
    CHECK_REPR(F64V(1e8), "tensor([100000000.], dtype=torch.float64)");
    CHECK_REPR(F64V(1e-5, 2e-5), "tensor([1.0000e-05, 2.0000e-05], dtype=torch.float64)");
    CHECK(tn_print(NULL) == -1);
    tn_scope_end();
}

/* ---- checks that may crash: each runs in a child process ---- */

/* randint with bounds past 2^53: torch.randint(2**60+1, 2**60+3, (64,)) gives values in {2^60+1, 2^60+2} */
static bool child_randint_big_bounds(void) {
    tn_scope_begin();
    int64_t lo = (1LL << 60) + 1, hi = (1LL << 60) + 3;
    tn_tensor *r = tn_randint(lo, hi, TN_SHAPE(64), TN_I64, NULL);
    bool ok = r != NULL;
    bool seen1 = false, seen2 = false;
    for (int i = 0; ok && i < 64; i++) {
        int64_t v = elem_i64(r, i);
        ok = v >= lo && v < hi;
        seen1 |= v == lo; seen2 |= v == lo + 1;
    }
    ok = ok && seen1 && seen2;
    tn_scope_end();
    return ok;
}
/* the full int64 range: torch.randint(-2**63, 2**63 - 1, (8,)) works */
static bool child_randint_full_range(void) {
    tn_scope_begin();
    tn_tensor *r = tn_randint(INT64_MIN, INT64_MAX, TN_SHAPE(64), TN_I64, NULL);
    bool ok = r != NULL, neg = false, pos = false;
    for (int i = 0; ok && i < 64; i++) { neg |= elem_i64(r, i) < 0; pos |= elem_i64(r, i) > 0; ok = elem_i64(r, i) != INT64_MAX; }
    ok = ok && neg && pos;
    tn_scope_end();
    return ok;
}
/* torch: narrow(0, 5, 2**63-1) is an error ("start (5) + length (...) exceeds dimension size (10)") */
static bool child_narrow_huge_length(void) {
    tn_scope_begin();
    tn_tensor *x = tn_arange(0, 10, 1, TN_F32);
    tn_clear_error();
    tn_tensor *n = tn_narrow(x, 0, 5, INT64_MAX);
    bool ok = n == NULL && strstr(tn_last_error(), "exceeds") != NULL;
    tn_scope_end();
    return ok;
}

/* an empty tensor whose first size is huge: the strides never multiply it in, so nothing
   overflows in torch (strides (1e11, 1e11, 1e7, 1000, 1)); under UBSan this must not trip */
static bool child_empty_huge_first_dim(void) {
    tn_scope_begin();
    tn_tensor *t = tn_empty(TN_SHAPE(1000000000000000000LL, 0, 10000, 10000, 1000), TN_I32);
    bool ok = strides_match(t, STRIDES(100000000000LL, 100000000000LL, 10000000, 1000, 1), 5) && tn_numel(t) == 0;
    char *s = ok ? tn_to_string(t) : NULL;
    ok = ok && s && strcmp(s, "tensor([], size=(1000000000000000000, 0, 10000, 10000, 1000),\n"
                              "       dtype=torch.int32)") == 0;
    tn_string_free(s);
    tn_scope_end();
    return ok;
}

TEST(crash_prone_edges) {
    CHECK_IN_CHILD(child_randint_big_bounds);
    CHECK_IN_CHILD(child_randint_full_range);
    CHECK_IN_CHILD(child_narrow_huge_length);
    CHECK_IN_CHILD(child_empty_huge_first_dim);
}

TEST(misc_edges) {
    tn_scope_begin();
    /* deep scope nesting (past the initial capacity of the scope stack) */
    tn_tensor *carried = NULL;
    for (int i = 0; i < 100; i++) tn_scope_begin();
    CHECK(tn_scope_depth() == 101);
    carried = tn_keep(tn_full(TN_SHAPE(2), 1, TN_F32));
    for (int i = 0; i < 99; i++) { tn_scope_end(); carried = tn_keep(carried); }
    tn_scope_end();
    CHECK(tn_scope_depth() == 1);
    CHECK(carried->refcount == 1);
    CHECK_VALS(carried, 1, 1);
    /* float16/bfloat16 on the CPU: two-byte storage, values through float32 (test_half.c has the rest) */
    tn_tensor *h = tn_zeros(TN_SHAPE(2), TN_F16), *bh = tn_to_dtype(F32V(1, 2.5), TN_BF16);
    CHECK(h != NULL && tn_dtype_size(tn_get_dtype(h)) == 2 && bh && tn_get_dtype(bh) == TN_BF16);
    CHECK_VALS(tn_to_dtype(bh, TN_F32), 1, 2.5);
    char *hs = tn_to_string(h);
    CHECK(hs && strstr(hs, "float16"));
    tn_string_free(hs);
    /* random draws of integer dtypes: float-only draws refuse, randint accepts floats */
    CHECK_ERR(tn_normal(0, 1, TN_SHAPE(3), TN_I64, NULL), "floating");
    CHECK_ERR(tn_uniform(0, 1, TN_SHAPE(3), TN_U8, NULL), "floating");
    tn_tensor *rf = tn_randint(0, 10, TN_SHAPE(100), TN_F32, NULL);
    CHECK_DTYPE(rf, TN_F32);
    {
        bool ok = true;
        for (int i = 0; i < 100; i++) ok = ok && elem(rf, i) == floor(elem(rf, i)) && elem(rf, i) >= 0 && elem(rf, i) < 10;
        CHECK(ok);
    }
    /* copy_ into a destination whose elements share memory: torch refuses
       ("more than one element of the written-to tensor refers to a single memory location") */
    tn_tensor *one = tn_zeros(TN_SHAPE(1), TN_F32);
    CHECK_ERR(tn_copy_(tn_expand(one, TN_SHAPE(3)), F32V(1, 2, 3)) == 0, "single memory location");
    /* ... but fill_ and zero_ of an expanded tensor are allowed (every write stores the same value) */
    tn_tensor *col2 = tn_zeros(TN_SHAPE(2, 1), TN_F32);
    CHECK(tn_fill_(tn_expand(col2, TN_SHAPE(2, 3)), 4) != NULL);
    CHECK_VALS(col2, 4, 4);
    CHECK(tn_zero_(tn_expand(col2, TN_SHAPE(2, 3))) != NULL);
    CHECK_VALS(col2, 0, 0);
    CHECK_ERR(tn_mul_scalar_(tn_expand(one, TN_SHAPE(3)), 2), "single memory location");
    CHECK_ERR(tn_exp_(tn_expand(one, TN_SHAPE(3))), "single memory location");
    /* linspace float32 is within an ulp of torch's float32 arithmetic */
    tn_tensor *l = tn_linspace(-1.3, 2.9, 17, TN_F32);
    CHECK_VALS_TOL(l, 2.5e-7, -1.2999999523162842, -1.0374999046325684, -0.7749999761581421, -0.512499988079071, -0.25,
                   0.01250004768371582, 0.2749999761581421, 0.5374999046325684, 0.8000001907348633, 1.062500238418579,
                   1.3250001668930054, 1.5875000953674316, 1.8500001430511475, 2.1125001907348633, 2.375,
                   2.637500047683716, 2.9000000953674316);
    /* tn_result_type of nothing is the default dtype */
    CHECK(tn_result_type(NULL, 0) == TN_F32);
    /* accessors on NULL */
    CHECK(tn_ndim(NULL) == 0 && tn_shape(NULL) == NULL && tn_numel(NULL) == 0 && tn_data_ptr(NULL) == NULL);
    CHECK(!tn_is_contiguous(NULL) && !tn_same_storage(NULL, NULL) && tn_size(NULL, 0) == -1);
    /* NULL inputs propagate without a new message */
    tn_clear_error();
    CHECK(tn_view(NULL, TN_SHAPE(2)) == NULL && tn_clone(NULL) == NULL && tn_t(NULL) == NULL && tn_expand(NULL, TN_SHAPE(1)) == NULL);
    CHECK(strcmp(tn_last_error(), "") == 0);
    tn_scope_end();
}

/* The caching allocator: a freed large block is reused, stats stay exact, the cache empties. */
TEST(caching_allocator) {
    tn_cpu_empty_cache();
    CHECK(tn_cpu_cached_bytes() == 0);
    tn_memory_stats s0 = tn_memory_stats_get();
    tn_tensor *a = tn_zeros(TN_SHAPE(1000, 1000), TN_F32);        /* 4 MB: cached when freed */
    void *pa = tn_data_ptr(a);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes + 4000000);
    tn_release(a);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes);       /* counted as freed */
    CHECK(tn_cpu_cached_bytes() >= 4000000 && tn_cpu_cached_bytes() <= 6000000);
    tn_tensor *b = tn_ones(TN_SHAPE(999, 1001), TN_F32);            /* same size class: same block */
    CHECK(tn_data_ptr(b) == pa);
    CHECK(tn_cpu_cached_bytes() == 0);
    tn_scope_begin();
    CHECK_CLOSE(tn_item(tn_sum(tn_narrow(tn_flatten(b), 0, 0, 10))), 10, 0);   /* really filled */
    tn_scope_end();

    tn_release(b);
    tn_tensor *small = tn_zeros(TN_SHAPE(100), TN_F32);             /* below 64 KiB: plain malloc */
    tn_release(small);
    CHECK(tn_cpu_cached_bytes() >= 3996000 && tn_cpu_cached_bytes() <= 6000000);
    for (int i = 0; i < 50; i++) tn_release(tn_empty(TN_SHAPE(1 << 16), TN_F64));   /* one block reused 50 times */
    CHECK(tn_cpu_cached_bytes() <= 6000000 + (1 << 19) * 2);
    tn_cpu_empty_cache();
    CHECK(tn_cpu_cached_bytes() == 0);
    /* an empty class takes a cached block up to two classes larger, which then goes back to
       its own class: 4 MiB serves 2.5 MB (the 3 MiB class) but not 1.2 MB (1.5 MiB, three
       classes down) */
    tn_tensor *c = tn_empty(TN_SHAPE(1 << 20), TN_F32);             /* 4 MiB: the 4 MiB class */
    void *pc = tn_data_ptr(c);
    tn_release(c);
    CHECK(tn_cpu_cached_bytes() == (size_t)4 << 20);
    tn_tensor *d = tn_full(TN_SHAPE(625000), 2.0, TN_F32);          /* 2.5 MB */
    CHECK(tn_data_ptr(d) == pc && tn_cpu_cached_bytes() == 0);
    CHECK(((float *)tn_data_ptr(d))[624999] == 2.0f);
    tn_release(d);
    CHECK(tn_cpu_cached_bytes() == (size_t)4 << 20);               /* back as the 4 MiB block it is */
    tn_tensor *e = tn_empty(TN_SHAPE(300000), TN_F32);              /* 1.2 MB */
    CHECK(tn_data_ptr(e) != pc && tn_cpu_cached_bytes() == (size_t)4 << 20);
    tn_tensor *f = tn_empty(TN_SHAPE(1 << 20), TN_F32);
    CHECK(tn_data_ptr(f) == pc && tn_cpu_cached_bytes() == 0);
    tn_release(e);
    tn_release(f);
    tn_cpu_empty_cache();
    CHECK(tn_cpu_cached_bytes() == 0);
    CHECK(tn_memory_stats_get().live_bytes == s0.live_bytes);
}

/* ======================================================================== */
int main(void) {
    RUN_CLEAN(dtype_names_sizes);
    RUN_CLEAN(promote_types_table);
    RUN_CLEAN(result_type_rules);
    RUN_CLEAN(broadcast_shapes);
    RUN_CLEAN(refcounts_and_stats);
    RUN_CLEAN(views_keep_storage_alive);
    RUN_CLEAN(scopes);
    RUN_CLEAN(scoped_loop_is_flat);
    RUN_CLEAN(from_data_all_dtypes);
    RUN_CLEAN(from_blob);
    RUN_CLEAN(empty_zeros_ones_full);
    RUN_CLEAN(arange);
    RUN_CLEAN(linspace);
    RUN_CLEAN(eye);
    RUN_CLEAN(like_clone_contiguous);
    RUN_CLEAN(to_dtype_conversions);
    RUN_CLEAN(item);
    RUN_CLEAN(copy_);
    RUN_CLEAN(philox_known_answers);
    RUN_CLEAN(uniform_draws_from_philox_words);
    RUN_CLEAN(rng_determinism);
    RUN_CLEAN(rng_statistics);
    RUN_CLEAN(view_reshape);
    RUN_CLEAN(flatten_unflatten);
    RUN_CLEAN(permute_transpose_t);
    RUN_CLEAN(narrow_slice_select);
    RUN_CLEAN(expand_broadcast);
    RUN_CLEAN(squeeze_unsqueeze);
    RUN_CLEAN(unfold_as_strided_detach);
    RUN_CLEAN(views_on_views);
    RUN_CLEAN(repr_float);
    RUN_CLEAN(repr_int_bool_0d_empty);
    RUN_CLEAN(repr_multidim_and_wrapping);
    RUN_CLEAN(repr_summarized);
    RUN_CLEAN(repr_more);
    RUN_CLEAN(misc_edges);
    RUN_CLEAN(crash_prone_edges);
    RUN_CLEAN(caching_allocator);

    tn_memory_stats end = tn_memory_stats_get();
    CHECK(end.live_tensors == 0 && end.live_storages == 0 && end.live_bytes == 0);
    return tn_test_report();
}
