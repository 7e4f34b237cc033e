static int64_t tn__live_tensors, tn__live_storages, tn__live_bytes, tn__peak_bytes, tn__storage_allocs;
static const tn_backend *tn__backends[TN_NUM_DEVICES];
static const tn_backend *tn__cpu_backend_get(void);   /* section 17 */

/* Autograd recording, used by every differentiable op; the engine is section 11. */
#define TN__GRAD_OPS(X) \
    X(G_UNARY, "") X(G_BINARY, "") X(G_TERNARY, "") X(G_SUM, "SumBackward0") X(G_MEAN, "MeanBackward0") \
    X(G_PROD, "ProdBackward0") X(G_CLAMP, "ClampBackward0") X(G_AMAX, "AmaxBackward0") X(G_AMIN, "AminBackward0") X(G_MAX_DIM, "MaxBackward0") \
    X(G_MIN_DIM, "MinBackward0") X(G_MEDIAN, "MedianBackward0") X(G_CUMSUM, "CumsumBackward0") X(G_CUMPROD, "CumprodBackward0") \
    X(G_LOGCUMSUMEXP, "LogcumsumexpBackward0") \
    X(G_SOFTMAX, "SoftmaxBackward0") X(G_LOG_SOFTMAX, "LogSoftmaxBackward0") X(G_SORT, "SortBackward0") \
    X(G_RESHAPE, "ViewBackward0") X(G_PERMUTE, "PermuteBackward0") X(G_EXPAND, "ExpandBackward0") \
    X(G_SLICE, "SliceBackward0") X(G_SELECT, "SelectBackward0") X(G_DIAGONAL, "DiagonalBackward0") X(G_AS_STRIDED, "AsStridedBackward0") X(G_UNFOLD, "UnfoldBackward0") \
    X(G_SLICE_SCATTER, "SliceScatterBackward0") X(G_FLIP, "FlipBackward0") X(G_PAD, "ConstantPadNdBackward0") \
    X(G_COPY, "CloneBackward0") X(G_TO, "ToCopyBackward0") X(G_INDEX_SELECT, "IndexSelectBackward0") \
    X(G_GATHER, "GatherBackward0") X(G_SCATTER, "ScatterBackward0") X(G_SCATTER_ADD, "ScatterAddBackward0") \
    X(G_SCATTER_REDUCE, "ScatterReduceBackward0") \
    X(G_INDEX, "IndexBackward0") X(G_INDEX_PUT, "IndexPutBackward0") X(G_CAT, "CatBackward0") \
    X(G_MM, "MmBackward0") X(G_BMM, "BmmBackward0") X(G_ADDMM, "AddmmBackward0") X(G_BADDBMM, "BaddbmmBackward0") \
    X(G_MV, "MvBackward0") X(G_DOT, "DotBackward0") X(G_CUSTOM, "CustomBackward") \
    X(G_COPY_SLICES, "CopySlices") X(G_BASE_VIEW, "AsStridedBackward0")
#define TN__GOP_ENUM(e, name) e,
#define TN__GOP_NAME(e, name) name,
typedef enum tn__gop { TN__GRAD_OPS(TN__GOP_ENUM) TN__NUM_GOPS } tn__gop;
static const char *const tn__gop_names[] = {TN__GRAD_OPS(TN__GOP_NAME) ""};
typedef struct tn__edge { tn_node *fn; tn_tensor *leaf; } tn__edge; /* where an input's gradient goes */
typedef struct tn__meta { tn_dtype dtype; tn_device device; int ndim; int64_t shape[TN_MAX_DIMS]; } tn__meta;
typedef struct tn__hook { tn_hook_fn fn; tn_node_hook_fn post; void *user; int handle; } tn__hook;   /* fn, or post for a node's post-hook */
typedef struct tn__hooks { tn__hook *items; int n, cap, next_handle; } tn__hooks;

struct tn_node {
    int64_t refcount;                 /* atomic: held by result tensors and by consumers' edges */
    const char *name;                 /* PyTorch's name when it differs from the op's (composites) */
    tn__gop op;
    int sub;                          /* the unary/binary/ternary op id */
    int nin;                          /* inputs: edges and metadata */
    tn__edge *next;
    tn__meta *in;
    int nsaved;                       /* saved tensors with their versions at save time */
    tn_tensor **saved;
    int64_t *saved_version;
    tn_node **saved_fn;               /* for a saved non-leaf: its grad_fn (the tensor itself is kept as a plain alias) */
    int saved_cap;                    /* the three arrays point into *_inline until more than 4 are saved */
    tn_tensor *saved_inline[4];
    int64_t version_inline[4];
    tn_node *fn_inline[4];
    bool released;                    /* saved tensors freed by a backward without retain_graph */
    bool save_failed;                 /* a tensor the formula needs could not be saved (out of memory): the op fails */
    double d[4];                      /* op attributes */
    int64_t i[2 * TN_MAX_DIMS + 4];
    int ni;
    tn__meta out;
    tn__hooks hooks;                  /* hooks of the node's result tensor (non-leaf tensors): its pre-hooks */
    tn__hooks *post;                  /* post-hooks (tn_node_register_hook), allocated with the first */
    tn_custom_backward custom_bw;     /* G_CUSTOM: the user's backward and its argument */
    void *custom_user;
    char *custom_name;                /* G_CUSTOM: owned copy of the name */
    uint32_t saved_output_mask;       /* G_CUSTOM: saved slots that are the op's own result */
    tn_tensor *retain_target;         /* weak: the non-leaf result that called tn_retain_grad (its .grad gets the gradient) */
    tn_tensor **unpacked;             /* during a custom op's backward: its saved tensors with history */
    tn__edge *shown;                  /* a composite named as PyTorch's node: its inputs' edges, as tn_node_next */
    int nshown;                       /* shows them (PyTorch's graph), where next holds its last inner op's */
    /* engine scratch, valid during one backward (a backward inside a backward saves and restores it) */
    int64_t deps, epoch, need;
    tn_tensor *gsum;
};

static TN__TLS int tn__grad_mode_stack[64];
static TN__TLS int tn__grad_mode_depth;
static TN__TLS bool tn__grad_disabled;   /* zero-initialised: grad mode starts enabled */
static void tn__node_release(tn_node *n);
static void tn__node_free_saved_arrays(tn_node *nd);
static void tn__hooks_free(struct tn__hooks *h);
static tn_node *tn__node_new(tn__gop op, int sub, tn_tensor *const *ins, int n);
static void tn__node_save(tn_node *nd, tn_tensor *t);
static void tn__node_save_result(tn_node *nd, tn_tensor *out);
static tn_tensor *tn__node_attach(tn_node *nd, tn_tensor *out);
/* Give t's node PyTorch's name for the op the user called (a composite's last node). */
static tn_tensor *tn__grad_name(tn_tensor *t, const char *name);
/* tn__grad_name, and the node shows the composite's n inputs as its next functions (the
   edges PyTorch's node has; NULL or no-grad inputs show as none); backward is unchanged */
static tn_tensor *tn__grad_name_over(tn_tensor *t, const char *name, tn_tensor *const *ins, int n);
/* Record r (fresh, no history) as PyTorch's node `name` over x whose gradient is zeros, or
   none at all (undefined: x.grad stays None), as bernoulli and norm(x, 0) (section 11). */
static tn_tensor *tn__zero_grad_node(tn_tensor *r, tn_tensor *x, const char *name, bool zeros);
/* The opening of every in-place op: tn__inplace_begin gives -1 (refused: an error), 0 (run the
   plain in-place path) or 1 (autograd must see it: a scope is open and *x0 is a clone of x);
   then the op returns tn__inplace_end(fn, x, its out-of-place form computed from *x0), which
   copies the result into x, moves its history to x, closes the scope and returns x:
       int m = tn__inplace_begin(fn, x, others, n, &x0);
       if (m) return m < 0 ? NULL : tn__inplace_end(fn, x, tn_clamp(x0, .min = lo, .max = hi)); */
static int tn__inplace_begin(const char *fn, tn_tensor *x, tn_tensor *const *others, int n, tn_tensor **x0);
static int tn__inplace_mode(const char *fn, tn_tensor *x, tn_tensor *const *others, int n);   /* the begin's check */
static int tn__inplace_finish(const char *fn, tn_tensor *x, tn_tensor *r);                     /* the end's copy and rebase */
static tn_tensor *tn__inplace_end(const char *fn, tn_tensor *x, tn_tensor *r);
static tn_tensor *tn__borrowed(tn_tensor *r);   /* an in-place result: the borrowed first argument */
/* tn_trace (src/jit/trace.c) sees ops where autograd does: while a trace runs on this
   thread, tn__node_new reports each node with all its operands, tn__node_attach its result,
   an in-place op the tensor whose value it replaced, and every storage made. */
typedef struct tn__tracer tn__tracer;
static TN__TLS tn__tracer *tn__tracing;
static void tn__trace_new(tn__tracer *tr, tn_node *nd, tn_tensor *const *ins, int n);
static void tn__trace_attach(tn__tracer *tr, tn_node *nd, tn_tensor *out);
static void tn__trace_alias(tn__tracer *tr, tn_tensor *x, tn_tensor *r);
static void tn__trace_refuse(tn__tracer *tr, const char *what);
static void tn__trace_storage(tn__tracer *tr, const tn_storage *s);   /* made during the trace */
/* A graph replay's static memory plan (src/jit/memplan.c): while its nodes run on this
   thread, the storages they make on the plan's device (the CPU, or the GPU) are recorded
   (the planning run) or served from the plan's arena at their planned offsets (the runs
   after it). */
typedef struct tn__mhook tn__mhook;
static TN__TLS tn__mhook *tn__mhook_on;
static void *tn__mhook_take(tn__mhook *h, tn_device device, size_t nbytes, void (**deleter)(void *, void *), void **ctx);   /* NULL: allocate as usual */
static void tn__mhook_alloc(tn__mhook *h, tn_device device);   /* a storage of the device allocated as usual while the hook is on */
static void tn__mhook_note(tn__mhook *h, tn_storage *s);   /* ignores other devices' */


/* The GPU unit, probed once on first use (section 17). */
static const tn_cuda_unit *tn__cuda_unit(void);
static int tn__deferred_report(const char *at);   /* device-side checks (backend/cuda.c) */
static TN__TLS int tn__si_inside;   /* > 0 in a CPU kernel run by the stand-in (backend/stand_in.c): its own copies are no transfers */
static const tn_backend *tn__half_wrap(const tn_backend *in);   /* backend/cpu_half.c */
/* The table registered for d (the GPU: probed on first use), as registered */
static const tn_backend *tn__backend_registered(tn_device d) {
    if (d == TN_CPU) return tn__cpu_backend_get();
    if (d == TN_CUDA && !tn__backends[d]) tn__cuda_unit();
    return (unsigned)d < TN_NUM_DEVICES ? tn__backends[d] : NULL;
}
/* ... and as the ops call it: a GPU's table behind the half-precision staging entries */
static const tn_backend *tn__backend(tn_device d) {
    const tn_backend *b = tn__backend_registered(d);
    return b && d != TN_CPU ? tn__half_wrap(b) : b;
}

TNDEF tn_memory_stats tn_memory_stats_get(void) {
    tn_memory_stats s;
    s.live_tensors = TN__ATOMIC_LOAD(&tn__live_tensors);
    s.live_storages = TN__ATOMIC_LOAD(&tn__live_storages);
    s.live_bytes = TN__ATOMIC_LOAD(&tn__live_bytes);
    s.peak_bytes = TN__ATOMIC_LOAD(&tn__peak_bytes);
    return s;
}
TNDEF void tn_memory_stats_reset_peak(void) { tn__peak_bytes = TN__ATOMIC_LOAD(&tn__live_bytes); }
TNDEF int64_t tn_memory_allocations(void) { return TN__ATOMIC_LOAD(&tn__storage_allocs); }

static void tn__track_bytes(int64_t delta) {
    int64_t now = TN__ATOMIC_ADD(&tn__live_bytes, delta);
    if (delta > 0) {
        int64_t peak = TN__ATOMIC_LOAD(&tn__peak_bytes);
        while (now > peak) { /* lock-free max */
#if defined(__GNUC__) || defined(__clang__)
            if (__atomic_compare_exchange_n(&tn__peak_bytes, &peak, now, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
#else
            tn__peak_bytes = now; break;
#endif
        }
    }
}

/* A cache of small blocks: tensors, small storages and autograd nodes are allocated and
   freed once per op, and a graph of a hundred ops frees a hundred of each at once (glibc's
   per-thread cache keeps 7 per size), so up to 256 of each class are kept for reuse: a
   fifth off the C per-op overhead. A thread that finds a class busy uses malloc/free
   instead of waiting (no deadlock, also in a child forked while another thread held it).
   Off under AddressSanitizer, which must see every free. */
#if defined(__SANITIZE_ADDRESS__)
#define TN__BLK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TN__BLK_CACHE 0
#endif
#endif
#ifndef TN__BLK_CACHE
#if defined(__GNUC__) || defined(__clang__)
#define TN__BLK_CACHE 1
#else
#define TN__BLK_CACHE 0
#endif
#endif
enum { TN__BLK_TENSOR, TN__BLK_STORAGE, TN__BLK_NODE, TN__BLK_CLASSES, TN__BLK_KEEP = 256 };
#if TN__BLK_CACHE
static void *tn__blk_free[TN__BLK_CLASSES][TN__BLK_KEEP];
static int tn__blk_count[TN__BLK_CLASSES], tn__blk_lock[TN__BLK_CLASSES];
#endif
/* A block of class c (always size bytes), from the cache or TN_MALLOC. */
static void *tn__blk_get(int c, size_t size) {
#if TN__BLK_CACHE
    void *p = NULL;
    if (!__atomic_exchange_n(&tn__blk_lock[c], 1, __ATOMIC_ACQUIRE)) {   /* never waits: busy means malloc */
        if (tn__blk_count[c] > 0) p = tn__blk_free[c][--tn__blk_count[c]];
        __atomic_store_n(&tn__blk_lock[c], 0, __ATOMIC_RELEASE);
    }
    if (p) return p;
#else
    (void)c;
#endif
    return TN_MALLOC(size);
}
static void tn__blk_put(int c, void *p) {
#if TN__BLK_CACHE
    if (!p) return;
    if (!__atomic_exchange_n(&tn__blk_lock[c], 1, __ATOMIC_ACQUIRE)) {
        if (tn__blk_count[c] < TN__BLK_KEEP) { tn__blk_free[c][tn__blk_count[c]++] = p; p = NULL; }
        __atomic_store_n(&tn__blk_lock[c], 0, __ATOMIC_RELEASE);
    }
#else
    (void)c;
#endif
    TN_FREE(p);
}

#define TN__INLINE_BYTES 64
#define TN__INLINE_OFFSET ((sizeof(tn_storage) + 63) / 64 * 64) /* data stays 64-byte aligned within the block */
static tn_storage *tn__storage_new(size_t nbytes, tn_device device) {
    const tn_backend *be = tn__backend(device);
    if (!be) return (tn_storage *)tn__error("tensor.h: no backend for device '%s' (%s)", tn_device_name(device),
                                            device == TN_CUDA ? tn_cuda_unavailable_reason() : "invalid device");
    /* small CPU storages carry their data in the same block: one allocation, not two */
    bool inline_data = device == TN_CPU && nbytes <= TN__INLINE_BYTES;
    tn_storage *s = (tn_storage *)(inline_data ? tn__blk_get(TN__BLK_STORAGE, TN__INLINE_OFFSET + TN__INLINE_BYTES) : TN_MALLOC(sizeof *s));
    void (*deleter)(void *, void *) = NULL;
    void *ctx = NULL;
    void *data = !s ? NULL : inline_data ? (void *)((char *)s + TN__INLINE_OFFSET) : NULL;
    if (s && !inline_data && tn__mhook_on) data = tn__mhook_take(tn__mhook_on, device, nbytes, &deleter, &ctx);
    if (s && !data && !inline_data) {
        if (tn__mhook_on) tn__mhook_alloc(tn__mhook_on, device);
        data = be->alloc(nbytes ? nbytes : 1);
        TN__ATOMIC_ADD(&tn__storage_allocs, 1);
    }
    if (!data) {
        if (inline_data) tn__blk_put(TN__BLK_STORAGE, s);
        else TN_FREE(s);
        return (tn_storage *)tn__error("tensor.h: out of memory allocating %zu bytes on %s", nbytes, tn_device_name(device));
    }
    { static tn_storage zero_; *s = zero_; }   /* a zero struct copied: vector stores, not a memset call (never written) */
    s->refcount = 1;
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->inline_data = inline_data;
    TN__ATOMIC_ADD(&tn__live_storages, 1);
    if (deleter) { s->deleter = deleter; s->deleter_ctx = ctx; }   /* the arena's bytes are counted once, as the arena */
    else tn__track_bytes((int64_t)nbytes);
    if (tn__tracing) tn__trace_storage(tn__tracing, s);
    if (tn__mhook_on && !inline_data) tn__mhook_note(tn__mhook_on, s);
    return s;
}

static void tn__storage_release(tn_storage *s) {
    if (!s || TN__ATOMIC_ADD(&s->refcount, -1) != 0) return;
    if (s->deleter) s->deleter(s->data, s->deleter_ctx);
    else if (s->data) {
        if (!s->inline_data) tn__backend(s->device)->free(s->data, s->nbytes);
        tn__track_bytes(-(int64_t)s->nbytes);
    }
    TN__ATOMIC_ADD(&tn__live_storages, -1);
    if (s->inline_data) tn__blk_put(TN__BLK_STORAGE, s);   /* a flag, not a pointer test: a separate data block may follow the struct */
    else TN_FREE(s);
}

static void tn__contiguous_strides(const int64_t *shape, int ndim, int64_t *strides) {
    int64_t st = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = st;
        if (i > 0 && shape[i] > 1) st = tn__mul_or(st, shape[i], st);   /* an empty tensor's may not fit (and are never used) */
    }
}

/* A tensor's element count; shapes are checked when tensors are made (tn__check_shape),
   so it fits, and a shape with a 0 in it counts 0 without multiplying the others. */
static int64_t tn__numel(const int64_t *shape, int ndim) {
    int64_t n;
    tn__numel_ok(shape, ndim, &n);
    return n;
}

static const int64_t tn__one[1] = {1};

/* Last element offset reached by (shape, strides) from offset, or false on overflow. */
static bool tn__span_ok(const int64_t *shape, const int64_t *strides, int ndim, int64_t offset, int64_t *last) {
    int64_t l = offset, step;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { *last = -1; return true; }
        if (!tn__mul_ok(shape[i] - 1, strides[i], &step) || !tn__add_ok(l, step, &l)) return false;
    }
    *last = l;
    return true;
}

/* Check a user-given shape: ndim in range, sizes >= 0, element count (0 when a size is)
   and byte count at the largest element size fit in int64. */
static int tn__check_shape(const char *fn, const int64_t *shape, int ndim) {
    if (ndim < 0 || ndim > TN_MAX_DIMS) return TN__FAIL_INT("%s: ndim %d out of range [0, %d]", fn, ndim, TN_MAX_DIMS);
    if (ndim > 0 && !shape) return TN__FAIL_INT("%s: shape is NULL", fn);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0) return TN__FAIL_INT("%s: negative size %lld in shape %s", fn, (long long)shape[i], tn__shape_str(shape, ndim));
    int64_t n, bytes;
    if (!tn__numel_ok(shape, ndim, &n) || !tn__mul_ok(n, 8, &bytes))
        return TN__FAIL_INT("%s: shape %s has too many elements (storage size calculation overflowed)", fn, tn__shape_str(shape, ndim));
    return 0;
}

/* Broadcast shape of a and b (both of at most TN_MAX_DIMS dims) into out; -1 when they
   do not broadcast. Silent: callers word the error. */
static int tn__broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out) {
    int n = TN__MAX(na, nb);
    int64_t r[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a[i - (n - na)], y = i < n - nb ? 1 : b[i - (n - nb)];
        if (x != y && x != 1 && y != 1) return -1;
        r[i] = x == 1 ? y : x;
    }
    memcpy(out, r, (size_t)n * sizeof(int64_t));
    return n;
}

/* ---- TN_LEAK_CHECK=1: the tensors still alive at exit, with where they were made ----
   While it is set (read once, at the first tensor), each tensor's creation backtrace is kept
   in a side table, and an atexit handler prints every tensor still alive with its frames
   (function+offset and binary; `addr2line -f -e <binary> <offset>` gives the line; link
   with -rdynamic for function names in executables). Off, it costs one load per tensor. */
#ifdef TN__HAVE_BACKTRACE
#define TN__LEAK_FRAMES 12
typedef struct tn__leak { const tn_tensor *t; void *frames[TN__LEAK_FRAMES]; int n; } tn__leak;
static tn__leak *tn__leaks;            /* open addressing on the tensor's address; t NULL: empty, 1: deleted */
static size_t tn__leaks_cap, tn__leaks_n;
static volatile char tn__leaks_lock;
static int tn__leak_on = -1;           /* -1: not read yet */
static void tn__leaks_acquire(void) { while (__atomic_test_and_set(&tn__leaks_lock, __ATOMIC_ACQUIRE)) { } }
static void tn__leaks_release(void) { __atomic_clear(&tn__leaks_lock, __ATOMIC_RELEASE); }
static size_t tn__leak_slot(const tn_tensor *t) { return ((size_t)(uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull; }
static void tn__leak_report(void) {
    tn__leaks_acquire();
    size_t live = 0;
    for (size_t i = 0; i < tn__leaks_cap; i++) live += tn__leaks[i].t > (const tn_tensor *)1;
    if (live) fprintf(stderr, "tensor.h TN_LEAK_CHECK: %zu tensor%s still alive at exit\n", live, live == 1 ? "" : "s");
    for (size_t i = 0; i < tn__leaks_cap; i++) {
        const tn__leak *e = &tn__leaks[i];
        if (e->t <= (const tn_tensor *)1) continue;
        fprintf(stderr, "  tensor %p: %s %s, refcount %lld%s%s, made at:\n", (const void *)e->t, tn_dtype_name(e->t->dtype), tn__shape_str(e->t->shape, e->t->ndim),
                (long long)e->t->refcount, e->t->name ? ", name " : "", e->t->name ? e->t->name : "");
        backtrace_symbols_fd((void *const *)e->frames, e->n, 2);
    }
    tn__leaks_release();
}
static void tn__leak_add(const tn_tensor *t) {
    if (tn__leak_on < 0) {
        const char *v = getenv("TN_LEAK_CHECK");
        tn__leak_on = v && v[0] == '1';
        if (tn__leak_on) atexit(tn__leak_report);
    }
    if (!tn__leak_on) return;
    tn__leak e = {t, {0}, 0};
    e.n = backtrace(e.frames, TN__LEAK_FRAMES);
    tn__leaks_acquire();
    if (2 * (tn__leaks_n + 1) > tn__leaks_cap) {   /* grow (and drop deleted slots): at most half full */
        size_t cap = tn__leaks_cap ? 2 * tn__leaks_cap : 1024;
        tn__leak *n = (tn__leak *)TN_MALLOC(cap * sizeof *n);
        if (!n) { tn__leaks_release(); return; }   /* the report misses this one; nothing else changes */
        memset(n, 0, cap * sizeof *n);
        size_t kept = 0;
        for (size_t i = 0; i < tn__leaks_cap; i++) {
            if (tn__leaks[i].t <= (const tn_tensor *)1) continue;
            size_t k = tn__leak_slot(tn__leaks[i].t) & (cap - 1);
            while (n[k].t) k = (k + 1) & (cap - 1);
            n[k] = tn__leaks[i];
            kept++;
        }
        TN_FREE(tn__leaks);
        tn__leaks = n; tn__leaks_cap = cap; tn__leaks_n = kept;
    }
    size_t k = tn__leak_slot(t) & (tn__leaks_cap - 1);
    while (tn__leaks[k].t > (const tn_tensor *)1) k = (k + 1) & (tn__leaks_cap - 1);
    if (!tn__leaks[k].t) tn__leaks_n++;
    tn__leaks[k] = e;
    tn__leaks_release();
}
static void tn__leak_remove(const tn_tensor *t) {
    if (tn__leak_on <= 0) return;
    tn__leaks_acquire();
    for (size_t k = tn__leaks_cap ? tn__leak_slot(t) & (tn__leaks_cap - 1) : 0; tn__leaks_cap && tn__leaks[k].t; k = (k + 1) & (tn__leaks_cap - 1))
        if (tn__leaks[k].t == t) { tn__leaks[k].t = (const tn_tensor *)1; break; }   /* a deleted slot keeps probe chains whole */
    tn__leaks_release();
}
#else
static void tn__leak_add(const tn_tensor *t) { (void)t; }
static void tn__leak_remove(const tn_tensor *t) { (void)t; }
#endif

/* A tensor object over a storage (takes a storage reference), untracked by scopes. */
static tn_tensor *tn__tensor_over(tn_storage *s, tn_dtype dtype, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    tn_tensor *t = (tn_tensor *)tn__blk_get(TN__BLK_TENSOR, sizeof *t);
    if (!t) {
        tn__storage_release(s);
        return (tn_tensor *)tn__error("tensor.h: out of memory allocating a tensor");
    }
    /* zeroed but for the shape and stride slots past ndim, never read: with a large
       TN_MAX_DIMS they are most of the struct, and every small op makes one */
    memset(t, 0, offsetof(tn_tensor, shape));
    memset(&t->offset, 0, sizeof *t - offsetof(tn_tensor, offset));
    t->refcount = 1;
    t->dtype = dtype;
    t->device = s->device;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) { t->shape[i] = shape[i]; t->strides[i] = strides[i]; }
    t->offset = offset;
    t->storage = s;
    TN__ATOMIC_ADD(&tn__live_tensors, 1);
    tn__leak_add(t);
    return t;
}

/* New contiguous tensor (uninitialised), untracked: the caller owns the reference. */
static tn_tensor *tn__new(tn_dtype dtype, tn_device device, const int64_t *shape, int ndim) {
    /* every result passes here: a shape whose element count overflows (broadcasting two
       huge expanded views, a transposed convolution's output size) is refused, never wrapped */
    if (tn__check_shape("tensor.h", shape, ndim)) return NULL;
    if (device == TN_CUDA && (dtype == TN_I8 || dtype == TN_I16))   /* the GPU unit has no int8/int16 kernels (nor the stand-in, to match) */
        return (tn_tensor *)tn__error("tensor.h: dtype %s is not supported on CUDA yet (int8 and int16 are CPU only)", tn_dtype_name(dtype));
    int64_t strides[TN_MAX_DIMS] = {0};   /* a 0-d tensor's are never read (gcc cannot tell when inlining) */

    tn__contiguous_strides(shape, ndim, strides);
    tn_storage *s = tn__storage_new((size_t)tn__numel(shape, ndim) * tn_dtype_size(dtype), device);   /* fits: checked above */
    return s ? tn__tensor_over(s, dtype, shape, strides, ndim, 0) : NULL;
}

/* A view of base's storage, untracked. */
static tn_tensor *tn__view_of(tn_tensor *base, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    TN__ATOMIC_ADD(&base->storage->refcount, 1);
    tn_tensor *t = tn__tensor_over(base->storage, base->dtype, shape, strides, ndim, offset);
    if (t) t->is_view = true;
    return t;
}

/* A transient view of t as a struct on the stack (a kernel walks t another way: restrided,
   flipped, as a matrix): dtype, device, shape, strides, offset and storage, no reference
   taken on the storage. Never `v = *t`: that reads the whole struct, t's refcount included, while another
   thread may be retaining or releasing t (a data race; ThreadSanitizer reports it). */
static tn_tensor tn__shallow(const tn_tensor *t) {
    tn_tensor v;
    memset(&v, 0, offsetof(tn_tensor, shape));   /* the slots past ndim are never read (as tn__tensor_over's) */
    memset(&v.offset, 0, sizeof v - offsetof(tn_tensor, offset));
    v.refcount = 1;   /* the caller's: a retain and release inside a kernel (tn_contiguous of it) never free it */
    v.dtype = t->dtype;
    v.device = t->device;
    v.ndim = t->ndim;
    memcpy(v.shape, t->shape, (size_t)t->ndim * sizeof *v.shape);
    memcpy(v.strides, t->strides, (size_t)t->ndim * sizeof *v.strides);
    v.offset = t->offset;
    v.storage = t->storage;
    v.is_wrapped_number = t->is_wrapped_number;
    return v;
}

TNDEF tn_tensor *tn_retain(tn_tensor *t) {
    if (t) TN__ATOMIC_ADD(&t->refcount, 1);
    return t;
}

TNDEF void tn_release(tn_tensor *t) {
    if (!t || TN__ATOMIC_ADD(&t->refcount, -1) != 0) return;
    tn_release(t->grad);
    if (t->grad_fn && t->grad_fn->retain_target == t) t->grad_fn->retain_target = NULL;
    tn__node_release(t->grad_fn);
    tn__hooks_free(t->hooks);
    TN_FREE((void *)t->name);
    tn_release(t->base);
    tn__storage_release(t->storage);
    TN__ATOMIC_ADD(&tn__live_tensors, -1);
    tn__leak_remove(t);
    tn__blk_put(TN__BLK_TENSOR, t);
}

/* Scopes: a per-thread stack of lists of owned references. */
typedef struct tn__scope { tn_tensor **items; int64_t n, cap; } tn__scope;
static TN__TLS tn__scope *tn__scopes;
static TN__TLS int tn__nscopes, tn__scopes_cap;

static int tn__scope_push(tn__scope *sc, tn_tensor *t) {
    if (sc->n == sc->cap) {
        int64_t cap = sc->cap ? sc->cap * 2 : 64;
        tn_tensor **items = (tn_tensor **)TN_REALLOC(sc->items, (size_t)cap * sizeof *items);
        if (!items) return -1;
        sc->items = items;
        sc->cap = cap;
    }
    sc->items[sc->n++] = t;
    return 0;
}

TNDEF void tn_scope_begin(void) {
    if (tn__nscopes == tn__scopes_cap) {
        int cap = tn__scopes_cap ? tn__scopes_cap * 2 : 16;
        tn__scope *s = (tn__scope *)TN_REALLOC(tn__scopes, (size_t)cap * sizeof *s);
        if (!s) { tn__error("tn_scope_begin: out of memory"); return; }
        memset(s + tn__scopes_cap, 0, (size_t)(cap - tn__scopes_cap) * sizeof *s);
        tn__scopes = s;
        tn__scopes_cap = cap;
    }
    tn__scopes[tn__nscopes++].n = 0;
}

TNDEF void tn_scope_end(void) {
    if (tn__nscopes == 0) { tn__error("tn_scope_end: no scope is open"); return; }
    tn__scope *sc = &tn__scopes[--tn__nscopes];
    /* Release newest first: results die before the inputs they were made from. */
    for (int64_t i = sc->n - 1; i >= 0; i--) tn_release(sc->items[i]);
    sc->n = 0;
    if (tn__nscopes == 0) { /* give the lists back when the outermost scope closes */
        for (int i = 0; i < tn__scopes_cap; i++) TN_FREE(tn__scopes[i].items);
        TN_FREE(tn__scopes);
        tn__scopes = NULL;
        tn__scopes_cap = 0;
    }
}

TNDEF int tn_scope_depth(void) { return tn__nscopes; }

TNDEF tn_tensor *tn_keep(tn_tensor *t) {
    if (!t || tn__nscopes == 0) return t;
    tn_retain(t);
    if (tn__nscopes >= 2 && tn__scope_push(&tn__scopes[tn__nscopes - 2], t) != 0) {
        tn_release(t);
        return (tn_tensor *)tn__error("tn_keep: out of memory");
    }
    return t;
}

/* Composite ops open a scope for their intermediates and hand out only the result:
   tn_scope_begin(); ... return tn__scope_return(r); */
static tn_tensor *tn__scope_return(tn_tensor *r) {
    r = tn_keep(r);
    tn_scope_end();
    return r;
}

/* Every public op returns through here: the open scope (if any) takes the reference. */
static tn_tensor *tn__own(tn_tensor *t) {
    if (t && tn__nscopes > 0 && tn__scope_push(&tn__scopes[tn__nscopes - 1], t) != 0) {
        tn_release(t);
        return (tn_tensor *)tn__error("tensor.h: out of memory registering a tensor in its scope");
    }
    return t;
}

TNDEF int tn_ndim(const tn_tensor *t) { return t ? t->ndim : 0; }
TNDEF const int64_t *tn_shape(const tn_tensor *t) { return t ? t->shape : NULL; }
TNDEF const int64_t *tn_strides(const tn_tensor *t) { return t ? t->strides : NULL; }
TNDEF int64_t tn_size(const tn_tensor *t, int64_t dim) {
    if (!t) return -1;
    if (dim < -t->ndim || dim >= t->ndim) return -1;
    return t->shape[dim < 0 ? dim + t->ndim : dim];
}
TNDEF int64_t tn_numel(const tn_tensor *t) { return t ? tn__numel(t->shape, t->ndim) : 0; }
TNDEF int64_t tn_storage_offset(const tn_tensor *t) { return t ? t->offset : 0; }
TNDEF tn_dtype tn_get_dtype(const tn_tensor *t) { return t ? t->dtype : TN_F32; }
TNDEF tn_device tn_get_device(const tn_tensor *t) { return t ? t->device : TN_CPU; }
TNDEF void *tn_data_ptr(const tn_tensor *t) {
    return t ? (char *)t->storage->data + t->offset * (int64_t)tn_dtype_size(t->dtype) : NULL;
}
TNDEF bool tn_is_contiguous(const tn_tensor *t) {
    if (!t) return false;
    if (tn_numel(t) == 0) return true;   /* before multiplying: [0, 2^62, 2^62] is empty, its sizes' product overflows */
    int64_t st = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != st) return false;
        st = tn__mul_or(st, t->shape[i], INT64_MAX);   /* fits: a non-empty tensor's sizes */
    }
    return true;
}
TNDEF int64_t tn_version(const tn_tensor *t) { return t ? TN__ATOMIC_LOAD(&t->storage->version) : 0; }
TNDEF bool tn_same_storage(const tn_tensor *a, const tn_tensor *b) { return a && b && a->storage == b->storage; }
TNDEF bool tn_requires_grad(const tn_tensor *t) { return t && t->requires_grad; }
TNDEF tn_tensor *tn_grad(const tn_tensor *t) { return t ? t->grad : NULL; }
static void tn__bump_version(tn_tensor *t) { TN__ATOMIC_ADD(&t->storage->version, 1); }

/* Argument checks shared by every op. */
#define TN__CHECK_NULL(...) do { tn_tensor *tn__args_[] = {__VA_ARGS__}; \
    for (size_t tn__i_ = 0; tn__i_ < sizeof tn__args_ / sizeof tn__args_[0]; tn__i_++) \
        if (!tn__args_[tn__i_]) return NULL; } while (0)

/* Whether t's device computes in t's dtype: half precision runs on the CPU and the GPU
   (staged in float32 around every backend entry, backend/cpu_half.c), nowhere else. */
static int tn__check_cpu_dtype(const char *fn, tn_tensor *t) {
    if ((t->dtype == TN_F16 || t->dtype == TN_BF16) && t->device != TN_CPU && t->device != TN_CUDA)
        return TN__FAIL_INT("%s: dtype %s is not supported on %s yet (half precision runs on the CPU and CUDA)", fn, tn_dtype_name(t->dtype), tn_device_name(t->device));
    return 0;
}

/* In-place writes into a tensor whose elements share memory (an expanded view) are
   refused, as PyTorch does: the result would depend on the write order. */
static int tn__check_no_internal_overlap(const char *fn, tn_tensor *t) {
    for (int i = 0; i < t->ndim; i++)
        if (t->strides[i] == 0 && t->shape[i] > 1)
            return TN__FAIL_INT("%s: unsupported operation: more than one element of the written-to tensor (shape %s, strides %s) refers to a single memory location; clone() it first",
                                fn, TN__SHAPE(t), tn__shape_str(t->strides, t->ndim));
    return 0;
}

/* PyTorch's assert_no_overlap: an in-place indexed write whose source shares memory
   with the destination is refused (its result would depend on the write order). */
static int tn__check_no_overlap(const char *fn, tn_tensor *dst, tn_tensor *src) {
    if (dst->storage != src->storage || tn_numel(dst) == 0 || tn_numel(src) == 0) return 0;
    int64_t lo[2], hi[2];
    tn_tensor *ts[2] = {dst, src};
    for (int k = 0; k < 2; k++) {
        int64_t es = (int64_t)tn_dtype_size(ts[k]->dtype), last;
        if (!tn__span_ok(ts[k]->shape, ts[k]->strides, ts[k]->ndim, ts[k]->offset, &last)) return 0;   /* never for a tensor in its storage */
        lo[k] = ts[k]->offset * es;
        hi[k] = (last + 1) * es;
    }
    if (lo[0] < hi[1] && lo[1] < hi[0])
        return TN__FAIL_INT("%s: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location; clone() the input first", fn);
    return 0;
}

static int tn__check_same_device(const char *fn, tn_tensor *a, tn_tensor *b) {

    if (a->device == b->device || (b->ndim == 0 && b->device == TN_CPU) || (a->ndim == 0 && a->device == TN_CPU)) return 0;
    return TN__FAIL_INT("%s: expected all tensors on the same device, got %s and %s", fn, tn_device_name(a->device), tn_device_name(b->device));
}
