/* ---- the GPU unit's entry points: forwarded to tensor_cuda.cu, or why not ---- */
static const tn_cuda_unit *tn__cuda_unit(void) {
#ifdef TENSOR_CUDA
    const tn_cuda_unit *unit = tn_cuda_unit_get(); /* probes once, thread-safely; cheap after */
    if (unit && unit->backend && !tn__backends[TN_CUDA]) tn__backends[TN_CUDA] = unit->backend; /* the same value from any thread */
    return unit;
#else
    return NULL;
#endif
}
/* The unit when a GPU is usable, else NULL after recording why (fn names the caller). */
static const tn_cuda_unit *tn__cuda_ready(const char *fn) {
    const tn_cuda_unit *u = tn__cuda_unit();
    if (u && u->backend) return u;
    tn__error("%s: CUDA is not available: %s", fn, tn_cuda_unavailable_reason());
    return NULL;
}

/* ---- device-side checks: slots the device writes, read after the next synchronisation ---- */
#define TN__DC_SLOTS 64
#define TN__DC_PENDING 32
/* The slots of one CUDA graph's checks (tn_cuda_graph_begin reserves them, tn_cuda_graph_free
   gives them back): its check kernels write here at every replay, and a replay puts the set
   on the list the next synchronisation scans with the eager slots (as PyTorch's
   device-side asserts surface at the next synchronisation). */
typedef struct tn__dc_set {
    int64_t *slots;                  /* TN__DC_SLOTS x {flag, value}, as the eager ones */
    char msg[TN__DC_SLOTS][256];
    int n;
    bool pinned;
    bool pending, orphan;            /* replayed since the last scan; its graph freed meanwhile (the scan frees it) */
} tn__dc_set;
static struct {
    int64_t *slots;                  /* TN__DC_SLOTS x {flag, value}: pinned memory with the unit, else host memory */
    char msg[TN__DC_SLOTS][256];
    int n;                           /* slots handed out since the last synchronisation */
    tn__dc_set *pending[TN__DC_PENDING];   /* graphs' slots replayed since the last synchronisation */
    int npending;
    int lock;
} tn__dc;
static TN__TLS tn__dc_set *tn__dc_capture;   /* the slots of this thread's capture (cuda_graph.c), or NULL */
static void tn__dc_lock(void) {
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_exchange_n(&tn__dc.lock, 1, __ATOMIC_ACQUIRE)) {}
#endif
}
static void tn__dc_unlock(void) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(&tn__dc.lock, 0, __ATOMIC_RELEASE);
#endif
}
/* TN__DC_SLOTS zeroed slots the device can write: pinned (the GPU writes it through unified
   addressing) or plain host memory (the stand-in) */
static int64_t *tn__dc_alloc(tn_device device, bool *pinned) {
    const tn_cuda_unit *u = tn__cuda_unit();
    const size_t nb = TN__DC_SLOTS * 2 * sizeof(int64_t);
    *pinned = u && u->backend && tn__backend_registered(device) == u->backend;
    int64_t *p = *pinned ? (int64_t *)u->host_alloc(nb) : (int64_t *)TN_MALLOC(nb);
    if (p) memset(p, 0, nb);
    return p;
}
static void tn__dc_free(int64_t *p, bool pinned) {
    if (pinned) tn__cuda_unit()->host_free(p);
    else TN_FREE(p);
}
/* the first failed slot of n into text (when it is still empty), every slot cleared */
static void tn__dc_scan(int64_t *slots, char (*msg)[256], int n, char *text, size_t cap) {
    for (int k = 0; k < n; k++) {
        volatile int64_t *sl = slots + 2 * k;
        if (sl[0] && !text[0]) {   /* msg with its "%lld" replaced by the value */
            const char *m = msg[k], *at_v = strstr(m, "%lld");
            int pre = at_v ? (int)(at_v - m) : (int)strlen(m);
            if (at_v) snprintf(text, cap, "%.*s%lld%s", pre, m, (long long)sl[1], at_v + 4);
            else snprintf(text, cap, "%s", m);
        }
        sl[0] = sl[1] = 0;
    }
}
static void tn__dc_set_free(tn__dc_set *s) {
    if (!s) return;
    if (s->slots) tn__dc_free(s->slots, s->pinned);
    TN_FREE(s);
}
/* The first failed check since the last synchronisation (eager, or of a graph replayed since)
   as an error (at: the synchronising call), all slots cleared; 0 when none failed. Called
   after every synchronisation. */
static int tn__deferred_report(const char *at) {
    if (!TN__ATOMIC_LOAD(&tn__dc.n) && !TN__ATOMIC_LOAD(&tn__dc.npending)) return 0;
    char text[400] = "";
    tn__dc_set *gone[TN__DC_PENDING];
    int ngone = 0;
    tn__dc_lock();
    tn__dc_scan(tn__dc.slots, tn__dc.msg, tn__dc.n, text, sizeof text);
    tn__dc.n = 0;
    for (int j = 0; j < tn__dc.npending; j++) {
        tn__dc_set *s = tn__dc.pending[j];
        tn__dc_scan(s->slots, s->msg, s->n, text, sizeof text);
        s->pending = false;
        if (s->orphan) gone[ngone++] = s;
    }
    tn__dc.npending = 0;
    tn__dc_unlock();
    for (int j = 0; j < ngone; j++) tn__dc_set_free(gone[j]);
    if (!text[0]) return 0;
    return TN__FAIL_INT("%s (found on the device, reported at %s)", text, at);
}
static int tn__cuda_sync_now(const char *fn);
static int tn__cuda_graph_refuse(const char *fn, const char *what);   /* src/backend/cuda_graph.c */
TNDEF int64_t *tn_deferred_check(tn_device device, const char *msg) {
    if (device == TN_CPU || !msg) return (int64_t *)tn__error("tn_deferred_check: device checks are for devices other than the CPU");
    if (tn__dc_capture) {   /* inside a capture: a slot of the graph's (this thread's alone until the graph is made) */
        tn__dc_set *s = tn__dc_capture;
        for (int k = 0; k < s->n; k++)
            if (strcmp(s->msg[k], msg) == 0) return s->slots + 2 * k;
        if (s->n == TN__DC_SLOTS) {
            tn__cuda_graph_refuse("tn_deferred_check", "more than 64 different device-side index checks");
            return NULL;
        }
        snprintf(s->msg[s->n], sizeof s->msg[s->n], "%s", msg);
        return s->slots + 2 * s->n++;
    }
    if (!tn__dc.slots) {   /* once */
        bool pinned;
        int64_t *p = tn__dc_alloc(device, &pinned);
        if (!p) return (int64_t *)tn__error("tn_deferred_check: out of memory");
        tn__dc_lock();
        if (!tn__dc.slots) tn__dc.slots = p, p = NULL;
        tn__dc_unlock();
        if (p) tn__dc_free(p, pinned);   /* another thread was first */
    }
    for (int tries = 0; tries < 2; tries++) {
        tn__dc_lock();
        for (int k = 0; k < tn__dc.n; k++)
            if (strcmp(tn__dc.msg[k], msg) == 0) { tn__dc_unlock(); return tn__dc.slots + 2 * k; }
        if (tn__dc.n < TN__DC_SLOTS) {
            int k = tn__dc.n;
            snprintf(tn__dc.msg[k], sizeof tn__dc.msg[k], "%s", msg);
            TN__ATOMIC_ADD(&tn__dc.n, 1);
            tn__dc_unlock();
            return tn__dc.slots + 2 * k;
        }
        tn__dc_unlock();
        /* every slot in use since the last synchronisation: wait for the device, report, reuse */
        if (tn__cuda_sync_now("tn_deferred_check") || tn__deferred_report("tn_deferred_check")) return NULL;
    }
    return NULL;
}
/* A graph's slots for its capture (NULL with the error when out of memory). */
static tn__dc_set *tn__dc_set_new(void) {
    tn__dc_set *s = (tn__dc_set *)TN_MALLOC(sizeof *s);
    if (s) {
        memset(s, 0, sizeof *s);
        s->slots = tn__dc_alloc(TN_CUDA, &s->pinned);
    }
    if (!s || !s->slots) {
        TN_FREE(s);
        return (tn__dc_set *)tn__error("tn_cuda_graph_begin: out of memory (the slots of device-side checks)");
    }
    return s;
}
/* Before a replay of a graph with checks: room on the pending list (full: wait for the
   device and report first, as an eager check does when its slots run out). */
static int tn__dc_before_replay(const tn__dc_set *s) {
    if (!s || !s->n || s->pending || TN__ATOMIC_LOAD(&tn__dc.npending) < TN__DC_PENDING) return 0;
    return tn__cuda_sync_now("tn_cuda_graph_replay") || tn__deferred_report("tn_cuda_graph_replay") ? -1 : 0;
}
/* after it: its slots scanned at the next synchronisation */
static void tn__dc_replayed(tn__dc_set *s) {
    if (!s || !s->n) return;
    tn__dc_lock();
    if (!s->pending && tn__dc.npending < TN__DC_PENDING) {
        s->pending = true;
        tn__dc.pending[tn__dc.npending] = s;
        TN__ATOMIC_ADD(&tn__dc.npending, 1);
    }
    tn__dc_unlock();
}
/* the graph gone: its slots too, or at the next scan when replayed and not yet scanned, or
   when this thread captures another graph (freeing pinned memory synchronises, which a
   capture does not permit) */
static void tn__dc_set_release(tn__dc_set *s) {
    if (!s) return;
    tn__dc_lock();
    if (!s->pending && tn__dc_capture && s->pinned && tn__dc.npending < TN__DC_PENDING) {
        s->pending = true;
        tn__dc.pending[tn__dc.npending] = s;
        TN__ATOMIC_ADD(&tn__dc.npending, 1);
    }
    const bool later = s->pending;
    if (later) s->orphan = true;
    tn__dc_unlock();
    if (!later) tn__dc_set_free(s);
}

TNDEF bool tn_cuda_is_available(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend; }
TNDEF const char *tn_cuda_unavailable_reason(void) {
    const tn_cuda_unit *u = tn__cuda_unit();
    if (!u) return "tensor.h was built without the GPU unit (define TENSOR_CUDA and link tensor_cuda.cu: make cuda)";
    return u->backend ? "" : u->reason ? u->reason : "no usable GPU";
}
TNDEF int tn_cuda_device_count(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend ? u->device_count() : 0; }
TNDEF int tn_cuda_set_device(int index) { const tn_cuda_unit *u = tn__cuda_ready("tn_cuda_set_device"); return u ? u->set_device(index) : -1; }
TNDEF int tn_cuda_current_device(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend ? u->current_device() : -1; }
/* Wait for the device: the unit's synchronize, or (the stand-in, whose kernels are done
   when they return) one counted synchronisation. */
static int tn__cuda_sync_now(const char *fn) {
    if (tn__stand_in_registered()) {
        if (tn__si_capture) return tn__si_uncapturable("a synchronisation");   /* as cudaStreamSynchronize inside a capture */
        TN__ATOMIC_ADD(&tn__si_syncs, 1);
        return 0;
    }
    const tn_cuda_unit *u = tn__cuda_ready(fn);
    return u ? u->synchronize() : -1;
}
TNDEF int tn_cuda_synchronize(void) {
    if (tn_cuda_graph_capturing()) return tn__cuda_graph_refuse("tn_cuda_synchronize", "a synchronisation (torch.cuda.synchronize)");
    return tn__cuda_sync_now("tn_cuda_synchronize") ? -1 : tn__deferred_report("tn_cuda_synchronize");
}
TNDEF tn_cuda_stats tn_cuda_memory_stats(void) {
    const tn_cuda_unit *u = tn__cuda_unit();
    tn_cuda_stats s;
    memset(&s, 0, sizeof s);
    if (tn__stand_in_registered()) {   /* the stand-in's counters, also over a real unit */
        s.num_allocs = TN__ATOMIC_LOAD(&tn__si_allocs);
        s.allocated = (size_t)TN__ATOMIC_LOAD(&tn__si_bytes);         /* device bytes in tensors */
        s.reserved = (size_t)TN__ATOMIC_LOAD(&tn__si_pool_bytes);     /* what CUDA-graph pools hold (the stand-in caches nothing else) */
        s.num_h2d = TN__ATOMIC_LOAD(&tn__si_h2d);
        s.num_d2h = TN__ATOMIC_LOAD(&tn__si_d2h);
        s.num_syncs = TN__ATOMIC_LOAD(&tn__si_syncs);
        s.num_fused_attention = TN__ATOMIC_LOAD(&tn__si_attn);
        s.num_attention_fallbacks = TN__ATOMIC_LOAD(&tn__si_attn_fallbacks);
        s.num_multi_tensor_optim = TN__ATOMIC_LOAD(&tn__si_optim_multis);
        s.num_gemm_epilogue = TN__ATOMIC_LOAD(&tn__si_gemm_ep);
        s.num_gemm_epilogue_fallbacks = TN__ATOMIC_LOAD(&tn__si_gemm_ep_fallbacks);
    } else if (u && u->backend) s = u->memory_stats();
    s.num_graph_captures = TN__ATOMIC_LOAD(&tn__gcap_counts[0]);   /* the header's (src/jit/trace.c) */
    s.num_graph_launches = TN__ATOMIC_LOAD(&tn__gcap_counts[1]);
    s.num_graph_capture_failures = TN__ATOMIC_LOAD(&tn__gcap_counts[2]);
    s.num_fused_elementwise = TN__ATOMIC_LOAD(&tn__fused_counts[0]);   /* likewise */
    s.num_fused_elementwise_fallbacks = TN__ATOMIC_LOAD(&tn__fused_counts[1]);
    return s;
}
TNDEF void tn_cuda_reset_peak_memory_stats(void) { const tn_cuda_unit *u = tn__cuda_unit(); if (u && u->backend) u->reset_peak(); }
TNDEF void tn_cuda_empty_cache(void) { const tn_cuda_unit *u = tn__cuda_unit(); if (u && u->backend) u->empty_cache(); }
/* PyTorch's two TF32 switches and their defaults: matmul off (since 1.12), cuDNN on */
static bool tn__tf32, tn__cudnn_tf32 = true;
TNDEF void tn_set_tf32(bool allow) { tn__tf32 = allow; }
TNDEF bool tn_get_tf32(void) { return tn__tf32; }
TNDEF void tn_set_cudnn_tf32(bool allow) { tn__cudnn_tf32 = allow; }
TNDEF bool tn_get_cudnn_tf32(void) { return tn__cudnn_tf32; }

static void tn__pinned_free(void *data, void *ctx) { ((const tn_cuda_unit *)ctx)->host_free(data); }
TNDEF bool tn_is_pinned(const tn_tensor *t) { return t && t->storage && t->storage->deleter == tn__pinned_free; }
TNDEF tn_tensor *tn_pin_memory(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->device != TN_CPU) return (tn_tensor *)tn__error("tn_pin_memory: the tensor is on %s; only CPU tensors can be pinned", tn_device_name(t->device));
    const tn_cuda_unit *u = tn__cuda_ready("tn_pin_memory");
    if (!u) return NULL;
    size_t nb = (size_t)tn_numel(t) * tn_dtype_size(t->dtype);
    void *data = u->host_alloc(nb ? nb : 1);
    if (!data) return (tn_tensor *)tn__error("tn_pin_memory: cannot allocate %zu bytes of page-locked memory", nb);
    tn_storage *st = tn__foreign_storage(data, nb, tn__pinned_free, (void *)u);
    if (!st) { u->host_free(data); return (tn_tensor *)tn__error("tn_pin_memory: out of memory"); }
    int64_t strides[TN_MAX_DIMS];
    tn__contiguous_strides(t->shape, t->ndim, strides);
    tn_tensor *p = tn__tensor_over(st, t->dtype, t->shape, strides, t->ndim, 0);
    if (p && tn__copy(p, t)) { tn_release(p); return NULL; }
    return tn__own(p);
}
TNDEF tn_tensor *tn_to_non_blocking(tn_tensor *t, tn_device device) {
    TN__CHECK_NULL(t);
    const tn_cuda_unit *u = tn__cuda_unit();
    bool async = u && u->backend && device == TN_CUDA && tn_is_pinned(t);   /* an upload from page-locked memory */
    if (!async) return tn_to(t, device);
    tn_tensor *out = tn__new(t->dtype, device, t->shape, t->ndim);
    if (!out || u->copy_async(out, t) < 0) { tn_release(out); return NULL; }
    return tn__own(tn__copy_record(t, out, G_TO));
}
