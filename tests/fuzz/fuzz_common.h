/* fuzz_common.h — what the libFuzzer harnesses of tests/fuzz/ share.
 *
 * Each harness fuzz_<name>.c defines LLVMFuzzerTestOneInput(data, size) over one reader of
 * untrusted input. Built by tests/fuzz/fuzz.mk with clang -fsanitize=fuzzer,address,undefined
 * against the implementation compiled once with the same sanitizers (build/fuzz/tensor.o);
 * tests/test_fuzz_harness.c also includes every harness (FUZZ_NO_MAIN) and replays the seed
 * corpora through them in `make test`, built with the project's own compiler.
 *
 * A harness reports a finding by crashing: a sanitizer report, or abort() after printing
 * "FUZZ FINDING: ..." for a broken promise that no sanitizer sees (a failed load that
 * changed the model, a save/load round trip that lost data). Errors the library reports
 * through tn_last_error() are the expected outcome of bad input, never findings.
 */
#ifndef TN_FUZZ_COMMON_H
#define TN_FUZZ_COMMON_H
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* getpid, unlink */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include "tensor.h"

/* ASan settings every harness binary carries (a reproducer run as `./fuzz_x crash-...`
   sees the same), FUZZ_ASAN_EXTRA adds a harness's own. Allocations over the limit come
   back NULL, which the library must turn into an error. */
#ifndef FUZZ_ASAN_EXTRA
#define FUZZ_ASAN_EXTRA ""
#endif
#ifndef FUZZ_NO_MAIN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:detect_odr_violation=0" FUZZ_ASAN_EXTRA; }
#endif

/* Print what broke and abort: the finding's artifact is the input that got here. */
#define FUZZ_FINDING(...) do { fprintf(stderr, "FUZZ FINDING: "); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); \
    fflush(stderr); abort(); } while (0)

/* FUZZ_VERBOSE=1 in the environment: each harness says what the library refused and why
   (seeds that fail to load, while writing seeds or triaging). */
static inline void fuzz_verbose(const char *what, int failed) {
    static int on = -1;
    if (on < 0) on = getenv("FUZZ_VERBOSE") && *getenv("FUZZ_VERBOSE") && strcmp(getenv("FUZZ_VERBOSE"), "0");
    if (on) fprintf(stderr, "[fuzz] %s: %s%s\n", what, failed ? "error: " : "ok", failed ? tn_last_error() : "");
}

/* A scratch file of this process (the fuzzer may run several processes at once). */
static inline const char *fuzz_tmp_path(const char *tag, char *buf, size_t cap) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, cap, "%s/tn_fuzz_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
    return buf;
}

static inline int fuzz_write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    int bad = fclose(f) != 0 || put != size;
    return bad ? -1 : 0;
}

/* The bytes as a NUL-terminated string (embedded NULs cut it short, as a C caller's would). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = (char *)malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* Visit every element's bytes of t (any strides), feeding them to a sink the compiler
   cannot drop: reads past the data are what ASan (or a SIGSEGV on a mapping) then catches.
   Also returns a simple hash for comparisons. */
static inline uint64_t fuzz_touch(const tn_tensor *t) {
    if (!t) return 0;
    int nd = tn_ndim(t);
    const int64_t *sh = tn_shape(t), *st = tn_strides(t);
    size_t es = tn_dtype_size(tn_get_dtype(t));
    int64_t n = tn_numel(t), idx[TN_MAX_DIMS] = {0};
    const unsigned char *base = (const unsigned char *)tn_data_ptr(t);
    uint64_t h = 1469598103934665603ull;
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        const unsigned char *p = base + off * (int64_t)es;
        for (size_t b = 0; b < es; b++) h = (h ^ p[b]) * 1099511628211ull;
        for (int d = nd - 1; d >= 0; d--) { if (++idx[d] < sh[d]) break; idx[d] = 0; }
    }
    volatile uint64_t sink = h;
    (void)sink;
    return h;
}

/* ---- byte snapshots of dicts (names, dtypes, shapes, element bytes, metadata) ---- */
typedef struct fuzz_buf { unsigned char *p; size_t n, cap; } fuzz_buf;
static inline void fuzz_put(fuzz_buf *b, const void *x, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = (unsigned char *)realloc(b->p, cap);
        if (!q) abort();
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, x, n);
    b->n += n;
}
static inline void fuzz_put_str(fuzz_buf *b, const char *s) { fuzz_put(b, s ? s : "(null)", strlen(s ? s : "(null)") + 1); }
static inline void fuzz_put_i64(fuzz_buf *b, int64_t v) { fuzz_put(b, &v, sizeof v); }
/* One tensor: dtype, shape, requires_grad, every element's bytes in row-major order. */
static inline void fuzz_put_tensor(fuzz_buf *b, const tn_tensor *t) {
    if (!t) { fuzz_put_i64(b, -1); return; }
    int nd = tn_ndim(t);
    fuzz_put_i64(b, (int64_t)tn_get_dtype(t));
    fuzz_put_i64(b, nd);
    for (int d = 0; d < nd; d++) fuzz_put_i64(b, tn_shape(t)[d]);
    fuzz_put_i64(b, tn_requires_grad(t));
    const int64_t *sh = tn_shape(t), *st = tn_strides(t);
    size_t es = tn_dtype_size(tn_get_dtype(t));
    int64_t n = tn_numel(t), idx[TN_MAX_DIMS] = {0};
    const unsigned char *base = (const unsigned char *)tn_data_ptr(t);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        fuzz_put(b, base + off * (int64_t)es, es);
        for (int d = nd - 1; d >= 0; d--) { if (++idx[d] < sh[d]) break; idx[d] = 0; }
    }
}
/* A dict: each key, its tensor, then the metadata. */
static inline void fuzz_put_dict(fuzz_buf *b, const tn_dict *d) {
    int n = d ? tn_dict_len(d) : -1;
    fuzz_put_i64(b, n);
    for (int i = 0; i < n; i++) {
        fuzz_put_str(b, tn_dict_key(d, i));
        fuzz_put_tensor(b, tn_dict_value(d, i));
    }
    int m = d ? tn_dict_meta_len(d) : 0;
    fuzz_put_i64(b, m);
    for (int i = 0; i < m; i++) {
        fuzz_put_str(b, tn_dict_meta_key(d, i));
        fuzz_put_str(b, tn_dict_get_meta(d, tn_dict_meta_key(d, i)));
    }
}

/* Two dicts hold the same tensors (by name, whatever the order): the same dtypes, shapes
   and element bytes. Returns NULL, or the first difference in msg. */
static inline const char *fuzz_dict_diff(const tn_dict *a, const tn_dict *b, char *msg, size_t cap) {
    if (tn_dict_len(a) != tn_dict_len(b)) {
        snprintf(msg, cap, "%d tensors became %d", tn_dict_len(a), tn_dict_len(b));
        return msg;
    }
    for (int i = 0; i < tn_dict_len(a); i++) {
        const char *k = tn_dict_key(a, i);
        tn_tensor *x = tn_dict_value(a, i), *y = tn_dict_get(b, k);
        if (!y) { snprintf(msg, cap, "tensor '%s' is missing", k); return msg; }
        fuzz_buf bx = {0}, by = {0};
        fuzz_put_tensor(&bx, x);
        fuzz_put_tensor(&by, y);
        int same = bx.n == by.n && !memcmp(bx.p, by.p, bx.n);
        free(bx.p);
        free(by.p);
        if (!same) { snprintf(msg, cap, "tensor '%s' differs (dtype, shape or bytes)", k); return msg; }
    }
    for (int i = 0; i < tn_dict_meta_len(a); i++) {
        const char *k = tn_dict_meta_key(a, i), *va = tn_dict_get_meta(a, k), *vb = tn_dict_get_meta(b, k);
        if (!vb || strcmp(va, vb)) { snprintf(msg, cap, "metadata '%s' differs", k); return msg; }
    }
    if (tn_dict_meta_len(a) != tn_dict_meta_len(b)) {
        snprintf(msg, cap, "%d metadata entries became %d", tn_dict_meta_len(a), tn_dict_meta_len(b));
        return msg;
    }
    return NULL;
}
#endif

/* ---- the checkpoint harness's model and optimizer (also built by the seed generator) ----
   Linear(3, H) -> BatchNorm1d(H) -> Tanh -> Linear(H, 2): parameters, persistent buffers
   (running stats, num_batches_tracked) and, after a step, optimizer state for each. */
#ifndef TN_FUZZ_MODEL_H
#define TN_FUZZ_MODEL_H
static inline tn_module *fuzz_ckpt_model(uint64_t seed, int64_t hidden) {
    tn_manual_seed(seed);
    return tn_nn_sequential_n((tn_module *const[]){tn_nn_linear(3, hidden), tn_nn_batch_norm1d(hidden), tn_nn_tanh(),
                                                   tn_nn_linear(hidden, 2)}, 4);
}
static inline tn_optim *fuzz_ckpt_optim(tn_module *m, const char *kind, const char *opts) {
    tn_dict *p = tn_module_named_parameters(m);
    tn_optim *o = p ? tn_optim_create_str(kind, tn_dict_values(p), tn_dict_len(p), opts) : NULL;
    tn_dict_free(p);
    return o;
}
/* steps of MSE on fixed data, through a closure (LBFGS evaluates it several times); 0, or
   -1 on an error */
typedef struct fuzz_ckpt_batch { tn_module *m; tn_optim *o; tn_tensor *x, *y; } fuzz_ckpt_batch;
static inline double fuzz_ckpt_loss(void *user) {
    fuzz_ckpt_batch *b = (fuzz_ckpt_batch *)user;
    tn_optim_zero_grad(b->o);
    tn_scope_begin();
    tn_tensor *loss = tn_mse_loss(tn_module_forward(b->m, b->x), b->y);
    double v = loss && tn_backward(loss) == 0 ? tn_item(loss) : NAN;
    tn_scope_end();
    return v;
}
static inline int fuzz_ckpt_train(tn_module *m, tn_optim *o, int steps) {
    int rc = 0;
    tn_scope_begin();
    tn_manual_seed(7);
    fuzz_ckpt_batch b = {m, o, tn_randn(TN_SHAPE(5, 3), TN_F32), tn_randn(TN_SHAPE(5, 2), TN_F32)};
    for (int s = 0; s < steps && rc == 0; s++) rc = isnan(tn_optim_step_closure(o, fuzz_ckpt_loss, &b)) ? -1 : 0;
    tn_scope_end();
    return rc;
}
/* The optimizers the checkpoint harness builds, and how it tells which one a file is for
   (a key only that kind's param_groups have; the last row matches anything). */
static const struct fuzz_ckpt_kind { const char *kind, *opts, *marker; } fuzz_ckpt_kinds[] = {
    {"LBFGS", "lr=1, max_iter=3, history_size=3", "optim.param_groups.0.history_size"},
    {"RMSprop", "lr=0.01, momentum=0.5, centered=True", "optim.param_groups.0.alpha"},
    {"SGD", "lr=0.1, momentum=0.9", "optim.param_groups.0.nesterov"},
    {"Adam", "lr=0.01", ""},
};
#endif

/* The name under which a harness is called: libFuzzer's LLVMFuzzerTestOneInput, or the
   name a driver that includes several harnesses gives each (tests/test_fuzz_harness.c,
   tests/fuzz/seeds.c define FUZZ_ENTRY before each include). */
#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif
int FUZZ_ENTRY(const uint8_t *data, size_t size);
