/* ---- the checking stand-in for the GPU (tn_debug_cuda_stand_in) ---- */
static int tn__stand_in_bad(const char *op, const char *what, const tn_tensor *t) {
    return TN__FAIL_INT("stand-in GPU: %s got %s on %s (%lld elements): a GPU kernel would read a host pointer", op, what,
                        tn_device_name(t->device), (long long)tn_numel(t));
}
#define TN__SI_DEV(op, t) do { if ((t) && (t)->device != TN_CUDA) return tn__stand_in_bad(op, #t, (t)); } while (0)
#define TN__SI_DEV_OR_SCALAR(op, t) do { if ((t) && (t)->device != TN_CUDA && (t)->ndim != 0) return tn__stand_in_bad(op, #t, (t)); } while (0)
/* the complex cases the unit has no kernel for: declined alike (src/api.h) */
#define TN__SI_COMPLEX(kind, op, t) \
    do { if (tn_dtype_is_complex((t)->dtype) && !tn__cuda_complex_has(kind, op)) return tn__cuda_complex_decline(kind, op, (t)->dtype); } while (0)
/* The unit's transfer counters (tn_cuda_stats), counted where the unit counts them: every
   copy between host and device is synchronous there (an upload from pageable memory waits
   for the queue first), so each one is a synchronisation too. */
static int64_t tn__si_h2d, tn__si_d2h, tn__si_syncs;
static int64_t tn__si_attn, tn__si_attn_fallbacks;   /* the attention entry's calls run and declined, as the unit counts them */
static int64_t tn__si_optim_multis;                   /* multi-tensor optimizer steps (tests) */
static int64_t tn__si_gemm_ep, tn__si_gemm_ep_fallbacks;   /* matmul_ep's calls run and declined, as the unit counts them */
#define TN__SI_RUN(call) (tn__si_inside++, tn__si_ran = (call), tn__si_inside--, tn__si_ran)
static TN__TLS int tn__si_ran;
static void tn__si_transfer(bool up) {
    if (tn__si_inside) return;
    TN__ATOMIC_ADD(up ? &tn__si_h2d : &tn__si_d2h, 1);
    TN__ATOMIC_ADD(&tn__si_syncs, 1);
}
/* CUDA graphs on the stand-in (tn_backend.graph_*): while this thread captures, each entry
   records its call (the device operands as views of the same memory that own nothing: the
   addresses a GPU kernel's arguments hold; a host scalar operand by its value) instead of
   running it, as stream capture queues kernels without running them; a launch makes the
   recorded calls again through the table. An allocation of device memory (its memory would
   be another's after the capture), a transfer to or from the host, a synchronisation or an
   entry that is not captured (nonzero, linalg, NCCL, IPC; check_index outside an eager
   capture, whose slots are the graph's; random without the graph's device-resident
   counters, graph_pool's RNG) inside a capture fails the call and the capture, as
   tensor_cuda.cu does. */
enum { TN__SIC_COPY, TN__SIC_FILL, TN__SIC_UNARY, TN__SIC_BINARY, TN__SIC_TERNARY, TN__SIC_REDUCE, TN__SIC_LANE, TN__SIC_INDEX, TN__SIC_MATMUL,
       TN__SIC_IM2COL, TN__SIC_CONV2D, TN__SIC_BATCH_NORM, TN__SIC_POOL2D, TN__SIC_LAYER_NORM, TN__SIC_CROSS_ENTROPY, TN__SIC_ATTENTION,
       TN__SIC_MATMUL_EP, TN__SIC_FFT, TN__SIC_OPTIM, TN__SIC_FUSED, TN__SIC_CHECK_INDEX, TN__SIC_RANDOM, TN__SIC_POOL_ARGMAX };
typedef struct tn__si_call {
    int entry, op;
    bool has_d;                      /* unary: params given */
    tn_tensor *t[1 + TN__FUSED_EXT]; /* NULL where the call had none */
    double d[4];
    int64_t i[16];
    tn__optk k;                      /* optim: its kind and scalars, as the kernel's arguments */
    tn__fused_prog *prog;            /* fused_elementwise's program (a copy) */
    int64_t *err;                    /* check_index: the graph's slot */
} tn__si_call;
typedef struct tn__si_graph {
    tn__si_call *calls;
    int n, cap;
    bool failed, live;   /* live: made by graph_end, counted in tn__si_live_graphs */
    char why[200];
} tn__si_graph;
static int64_t tn__si_live_graphs;   /* graphs made and not freed (the fft plan cache is kept while any lives, as the unit's) */
static TN__TLS tn__si_graph *tn__si_capture;   /* the capture this thread makes, or NULL */
static TN__TLS tn_tensor *tn__si_cap_rng;       /* the capture's {seed, offset} on the device (graph_pool's RNG), or NULL */
static int64_t tn__si_graph_launches;      /* launches replayed (tests) */
static void tn__si_nop_deleter(void *data, void *ctx) { (void)data; (void)ctx; }
static tn_tensor *tn__si_rec_tensor(tn_tensor *t) {
    if (t->device != TN_CUDA) return tn__copy_as(t, t->dtype, TN_CPU);   /* a host scalar: its value now, as a kernel argument */
    tn_storage *st = tn__foreign_storage(t->storage->data, t->storage->nbytes, tn__si_nop_deleter, NULL);
    if (!st) return NULL;
    st->device = TN_CUDA;
    tn_tensor *v = tn__tensor_over(st, t->dtype, t->shape, t->strides, t->ndim, t->offset);
    if (!v) tn__storage_release(st);
    return v;
}
static int tn__si_uncapturable(const char *what) {
    tn__si_capture->failed = true;
    snprintf(tn__si_capture->why, sizeof tn__si_capture->why, "%s", what);
    return TN__FAIL_INT("stand-in GPU: %s while capturing a CUDA graph (operation not permitted when stream is capturing)", what);
}
/* one call recorded: nt tensors (NULL allowed), nd doubles, ni int64s */
static int tn__si_rec(int entry, int op, tn_tensor *const *ts, int nt, const double *d, int nd, const int64_t *iv, int ni) {
    tn__si_graph *G = tn__si_capture;
    if (G->n == G->cap) {
        const int cap = G->cap ? 2 * G->cap : 64;
        tn__si_call *c = (tn__si_call *)TN_REALLOC(G->calls, (size_t)cap * sizeof *c);
        if (!c) return tn__si_uncapturable("out of memory recording a call");
        G->calls = c;
        G->cap = cap;
    }
    tn__si_call *c = &G->calls[G->n];
    memset(c, 0, sizeof *c);
    c->entry = entry;
    c->op = op;
    c->has_d = d != NULL;
    if (d) memcpy(c->d, d, (size_t)nd * sizeof *d);
    if (iv) memcpy(c->i, iv, (size_t)ni * sizeof *iv);
    G->n++;   /* counted first: graph_free releases what was recorded of it */
    for (int k = 0; k < nt; k++)
        if (ts[k] && !(c->t[k] = tn__si_rec_tensor(ts[k]))) return tn__si_uncapturable("out of memory recording a call");
    return 0;
}
#define TN__SI_CAPTURE(entry, op, ts, nt, d, nd, iv, ni) do { if (tn__si_capture) return tn__si_rec(entry, op, ts, nt, d, nd, iv, ni); } while (0)
#define TN__SI_NO_CAPTURE(what) do { if (tn__si_capture) return tn__si_uncapturable(what); } while (0)
static int64_t tn__si_allocs;   /* device allocations (tn_cuda_stats.num_allocs, as the unit counts its allocator's) */
/* Capture-private pools (tn_backend.graph_pool, as tensor_cuda.cu's allocator): while this
   thread captures into a pool, its allocations come from the pool (a free block of it, best
   fit, else new memory kept by it), a block freed (inside the capture or after) goes back to
   the pool and never to the host, so the addresses the recorded calls hold stay this
   graph's. At the pool's last reference its free blocks go; the ones still held by tensors
   are freed as ordinary memory when they are. Bytes: tn_cuda_stats.allocated / reserved. */
typedef void *(*tn__si_raw_alloc)(size_t nbytes);
typedef void (*tn__si_raw_free)(void *p, size_t nbytes);
typedef struct tn__si_pblock { void *p; size_t n; bool used; tn__si_raw_free rf; } tn__si_pblock;
typedef struct tn__si_gpool {
    int refs, nb, cap;
    tn__si_pblock *b;
    struct tn__si_gpool *next;
} tn__si_gpool;
static tn__si_gpool *tn__si_pools;             /* alive, or dead with blocks still held */
static int tn__si_plock;
static TN__TLS tn__si_gpool *tn__si_cpool;     /* the pool of this thread's capture, or NULL */
static int64_t tn__si_bytes, tn__si_pool_bytes;   /* bytes in tensors; bytes pools hold */
static void tn__si_plock_on(void) {
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_exchange_n(&tn__si_plock, 1, __ATOMIC_ACQUIRE)) {}
#endif
}
static void tn__si_plock_off(void) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(&tn__si_plock, 0, __ATOMIC_RELEASE);
#endif
}
static void *tn__si_pool_take(tn__si_gpool *P, size_t n, tn__si_raw_alloc ra, tn__si_raw_free rf) {
    tn__si_plock_on();
    int best = -1;
    for (int i = 0; i < P->nb; i++)
        if (!P->b[i].used && P->b[i].rf == rf && P->b[i].n >= n && (best < 0 || P->b[i].n < P->b[best].n)) best = i;
    if (best >= 0) {
        P->b[best].used = true;
        TN__ATOMIC_ADD(&tn__si_bytes, (int64_t)P->b[best].n);
        tn__si_plock_off();
        return P->b[best].p;
    }
    tn__si_plock_off();
    void *p = ra(n);
    if (!p) return NULL;
    tn__si_plock_on();
    if (P->nb == P->cap) {
        const int cap = P->cap ? 2 * P->cap : 16;
        tn__si_pblock *b = (tn__si_pblock *)TN_REALLOC(P->b, (size_t)cap * sizeof *b);
        if (!b) { tn__si_plock_off(); rf(p, n); return NULL; }
        P->b = b;
        P->cap = cap;
    }
    P->b[P->nb].p = p; P->b[P->nb].n = n; P->b[P->nb].used = true; P->b[P->nb].rf = rf;
    P->nb++;
    TN__ATOMIC_ADD(&tn__si_bytes, (int64_t)n);
    TN__ATOMIC_ADD(&tn__si_pool_bytes, (int64_t)n);
    tn__si_plock_off();
    return p;
}
/* with the lock held: a dead pool with no block left is unlinked and freed */
static void tn__si_pool_reap(tn__si_gpool *P) {
    if (P->refs > 0 || P->nb > 0) return;
    for (tn__si_gpool **q = &tn__si_pools; *q; q = &(*q)->next)
        if (*q == P) { *q = P->next; break; }
    TN_FREE(P->b);
    TN_FREE(P);
}
/* true when p is a pool's block: back to its pool (or to the host, the pool gone) */
static bool tn__si_pool_give(void *p) {
    if (!p || !TN__ATOMIC_LOAD(&tn__si_pools)) return false;
    tn__si_plock_on();
    for (tn__si_gpool *P = tn__si_pools; P; P = P->next)
        for (int i = 0; i < P->nb; i++) {
            if (P->b[i].p != p || !P->b[i].used) continue;
            tn__si_pblock b = P->b[i];
            P->b[i].used = false;
            TN__ATOMIC_ADD(&tn__si_bytes, -(int64_t)b.n);
            if (P->refs == 0) {   /* a dead pool's block: the memory goes */
                P->b[i] = P->b[--P->nb];
                TN__ATOMIC_ADD(&tn__si_pool_bytes, -(int64_t)b.n);
                tn__si_pool_reap(P);
                tn__si_plock_off();
                b.rf(b.p, b.n);
                return true;
            }
            tn__si_plock_off();
            return true;
        }
    tn__si_plock_off();
    return false;
}
static void tn__si_pool_release(tn__si_gpool *P) {
    tn__si_plock_on();
    if (--P->refs == 0)
        for (int i = 0; i < P->nb;) {
            if (P->b[i].used) { i++; continue; }
            tn__si_pblock b = P->b[i];
            P->b[i] = P->b[--P->nb];
            TN__ATOMIC_ADD(&tn__si_pool_bytes, -(int64_t)b.n);
            b.rf(b.p, b.n);
        }
    tn__si_pool_reap(P);
    tn__si_plock_off();
}
/* inside a capture: from its pool, or (a replay's capture, which has none) the call fails and
   the capture with it (as tensor_cuda.cu's cu_alloc) */
static void *tn__si_alloc_with(size_t nbytes, tn__si_raw_alloc ra, tn__si_raw_free rf) {
    if (tn__si_capture && !tn__si_cpool) {
        tn__si_uncapturable("an allocation of device memory");
        return NULL;
    }
    TN__ATOMIC_ADD(&tn__si_allocs, 1);
    if (tn__si_capture) return tn__si_pool_take(tn__si_cpool, nbytes, ra, rf);
    void *p = ra(nbytes);
    if (p) TN__ATOMIC_ADD(&tn__si_bytes, (int64_t)nbytes);
    return p;
}
static void tn__si_free_with(void *p, size_t nbytes, tn__si_raw_free rf) {
    if (!p || tn__si_pool_give(p)) return;
    TN__ATOMIC_ADD(&tn__si_bytes, -(int64_t)nbytes);
    rf(p, nbytes);
}
static void *tn__si_alloc(size_t nbytes) { return tn__si_alloc_with(nbytes, tn__cpu_alloc, tn__cpu_free); }
static void tn__si_free(void *p, size_t nbytes) { tn__si_free_with(p, nbytes, tn__cpu_free); }
static void tn__si_graph_free(void *graph) {
    tn__si_graph *G = (tn__si_graph *)graph;
    if (!G) return;
    if (G->live) TN__ATOMIC_ADD(&tn__si_live_graphs, -1);
    for (int k = 0; k < G->n; k++) {
        for (int j = 0; j < 1 + TN__FUSED_EXT; j++) tn_release(G->calls[k].t[j]);
        TN_FREE(G->calls[k].prog);
    }
    TN_FREE(G->calls);
    TN_FREE(G);
}
static int tn__si_graph_begin(void) {
    if (tn__si_capture) return TN__FAIL_INT("stand-in GPU: graph_begin: this thread is capturing already");
    tn__si_graph *G = (tn__si_graph *)TN_MALLOC(sizeof *G);
    if (!G) return TN__FAIL_INT("stand-in GPU: graph_begin: out of memory");
    memset(G, 0, sizeof *G);
    tn__si_capture = G;
    tn__si_cap_rng = NULL;
    return 0;
}
static int tn__si_graph_end(void **graph) {
    tn__si_graph *G = tn__si_capture;
    *graph = NULL;
    if (!G) return TN__FAIL_INT("stand-in GPU: graph_end without graph_begin");
    tn__si_capture = NULL;
    tn__si_cap_rng = NULL;
    if (tn__si_cpool) {   /* the capture's reference to its pool */
        tn__si_pool_release(tn__si_cpool);
        tn__si_cpool = NULL;
    }
    if (G->failed) {
        int r = TN__FAIL_INT("stand-in GPU: the CUDA graph capture failed: %s inside it", G->why);
        tn__si_graph_free(G);
        return r;
    }
    G->live = true;
    TN__ATOMIC_ADD(&tn__si_live_graphs, 1);
    *graph = G;
    return 0;
}
static int tn__si_graph_launch(void *graph) {
    const tn__si_graph *G = (const tn__si_graph *)graph;
    const tn_backend *be = tn__backends[TN_CUDA];   /* the table registered: the unreadable one opens the memory per call */
    if (!G || tn__si_capture) return TN__FAIL_INT("stand-in GPU: graph_launch %s", G ? "while capturing" : "of no graph");
    for (int k = 0; k < G->n; k++) {
        const tn__si_call *c = &G->calls[k];
        tn_tensor *const *t = c->t;
        const int64_t *iv = c->i;
        int r;
        switch (c->entry) {
        case TN__SIC_COPY: r = be->copy(t[0], t[1]); break;
        case TN__SIC_FILL: r = be->fill(t[0], c->d[0]); break;
        case TN__SIC_UNARY: r = be->unary((tn_unary_op)c->op, t[0], t[1], c->has_d ? c->d : NULL); break;
        case TN__SIC_BINARY: r = be->binary((tn_binary_op)c->op, t[0], t[1], t[2], c->d[0]); break;
        case TN__SIC_TERNARY: r = be->ternary((tn_ternary_op)c->op, t[0], t[1], t[2], t[3], c->d[0]); break;
        case TN__SIC_REDUCE: r = be->reduce((tn_reduce_op)c->op, t[0], t[1]); break;
        case TN__SIC_LANE: r = be->lane((tn_lane_op)c->op, t[0], t[1], t[2], iv[0], (int)iv[1]); break;
        case TN__SIC_INDEX: r = be->index((tn_index_mode)c->op, t[0], t[1], t + 2, iv + 1, (int)iv[0]); break;
        case TN__SIC_MATMUL: r = be->matmul(t[0], t[1], t[2], c->d[0], c->d[1]); break;
        case TN__SIC_IM2COL: r = be->im2col(c->op, t[0], t[1], iv); break;
        case TN__SIC_CONV2D: r = be->conv2d(c->op, t[0], t[1], t[2], iv); break;
        case TN__SIC_BATCH_NORM: r = be->batch_norm(c->op, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], c->d[0]); break;
        case TN__SIC_POOL2D: r = be->pool2d(t[0], t[1], t[2], t[3], iv); break;
        case TN__SIC_LAYER_NORM: r = be->layer_norm(c->op, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], c->d[0]); break;
        case TN__SIC_CROSS_ENTROPY: r = be->cross_entropy(c->op, t[0], t[1], t[2], t[3], t[4], t[5]); break;
        case TN__SIC_ATTENTION: r = be->attention(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], c->d[0], c->op != 0); break;
        case TN__SIC_MATMUL_EP: r = be->matmul_ep(t[0], t[1], t[2], t[3], c->d[0], c->op); break;
        case TN__SIC_FFT: r = be->fft(c->op, t[0], t[1], (int)iv[0], iv + 1, c->d[0]); break;
        case TN__SIC_OPTIM: r = be->optim(&c->k, t[0], t[1], t + 2); break;
        case TN__SIC_FUSED: r = be->fused_elementwise(t[0], t + 1, c->op, c->prog); break;
        case TN__SIC_CHECK_INDEX: r = be->check_index(t[0], t[1], iv[0], c->op, iv[1], c->err); break;
        case TN__SIC_RANDOM: {   /* the graph's seed and offset as the replay set them (a device read, as the kernel's) */
            tn__si_inside++;
            tn_tensor *h = tn__copy_as(t[1], TN_I64, TN_CPU);
            tn__si_inside--;
            const uint64_t *v = h ? (const uint64_t *)tn_data_ptr(h) : NULL;
            r = v ? be->random((tn_random_op)c->op, t[0], v[0] | v[1] << 32, (v[2] | v[3] << 32) + (uint64_t)iv[0], c->d[0], c->d[1], iv[1], (uint64_t)iv[2]) : -1;
            tn_release(h);
            break;
        }
        case TN__SIC_POOL_ARGMAX: {
            const int64_t OH = t[0]->shape[2], OW = t[0]->shape[3], *tb = (const int64_t *)tn_data_ptr(t[2]);
            r = be->pool_argmax(t[0], t[1], tb, tb + OH, tb + 2 * OH, tb + 2 * OH + OW, iv[0], iv[1]);
            break;
        }
        default: r = TN__FAIL_INT("stand-in GPU: graph_launch: unknown call %d", c->entry);
        }
        if (r) return r < 0 ? -1 : TN__FAIL_INT("stand-in GPU: graph_launch: call %d declined at launch, not at capture", k);
    }
    TN__ATOMIC_ADD(&tn__si_graph_launches, 1);
    return 0;
}
static int tn__si_graph_pool(int op, void **pool) {
    tn__si_gpool *P = (tn__si_gpool *)*pool;
    switch (op) {
    case TN__GPOOL_NEW:
        P = (tn__si_gpool *)TN_MALLOC(sizeof *P);
        if (!P) return TN__FAIL_INT("stand-in GPU: graph_pool: out of memory");
        memset(P, 0, sizeof *P);
        P->refs = 1;
        tn__si_plock_on();
        P->next = tn__si_pools;
        tn__si_pools = P;
        tn__si_plock_off();
        *pool = P;
        return 0;
    case TN__GPOOL_RETAIN: tn__si_plock_on(); P->refs++; tn__si_plock_off(); return 0;
    case TN__GPOOL_RELEASE: tn__si_pool_release(P); return 0;
    case TN__GPOOL_BEGIN:
        if (tn__si_graph_begin()) return -1;
        tn__si_plock_on(); P->refs++; tn__si_plock_off();
        tn__si_cpool = P;
        return 0;
    case TN__GPOOL_RNG:
        if (!tn__si_capture || !tn__si_cpool) return TN__FAIL_INT("stand-in GPU: graph_pool: RNG outside an eager capture");
        tn__si_cap_rng = (tn_tensor *)*pool;
        return 0;
    default: return TN__FAIL_INT("stand-in GPU: graph_pool: unknown op %d", op);
    }
}
static int tn__si_copy(tn_tensor *dst, tn_tensor *src) {
    if (dst->device != TN_CUDA && src->device != TN_CUDA) return tn__stand_in_bad("copy", "two CPU tensors", dst);
    if (tn__si_capture && dst->device != src->device) return tn__si_uncapturable("a copy between host and device");
    tn_tensor *const ts_[2] = {dst, src};
    TN__SI_CAPTURE(TN__SIC_COPY, 0, ts_, 2, NULL, 0, NULL, 0);
    if (dst->device != src->device && tn_numel(dst) > 0) tn__si_transfer(dst->device == TN_CUDA);
    return tn__cpu_copy(dst, src);
}
static int tn__si_fill(tn_tensor *t, double v) { TN__SI_DEV("fill", t); TN__SI_CAPTURE(TN__SIC_FILL, 0, &t, 1, &v, 1, NULL, 0); return TN__SI_RUN(tn__cpu_fill(t, v)); }
static int tn__si_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *p) {
    TN__SI_DEV("unary", out); TN__SI_DEV_OR_SCALAR("unary", x); TN__SI_COMPLEX(TN__CX_UNARY, op, x);
    tn_tensor *const ts_[2] = {out, x};
    TN__SI_CAPTURE(TN__SIC_UNARY, (int)op, ts_, 2, p, 3, NULL, 0);   /* params: 3 read when given, as the CPU kernel reads */
    return TN__SI_RUN(tn__cpu_unary(op, out, x, p));
}
static int tn__si_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double al) {
    TN__SI_DEV("binary", out); TN__SI_DEV_OR_SCALAR("binary", a); TN__SI_DEV_OR_SCALAR("binary", b);
    TN__SI_COMPLEX(TN__CX_BINARY, op, a);
    tn_tensor *const ts_[3] = {out, a, b};
    TN__SI_CAPTURE(TN__SIC_BINARY, (int)op, ts_, 3, &al, 1, NULL, 0);
    if ((op == FLOOR_DIVIDE || op == REMAINDER || op == FMOD) && !tn_dtype_is_floating(a->dtype) && b->device == TN_CUDA) {
        /* as the unit: a zero divisor on the device is reported at the next synchronisation */
        tn_tensor bv = tn__shallow(b);
        bv.device = TN_CPU;
        tn_tensor *h = (tn__si_inside++, tn__copy_as(&bv, TN_I64, TN_CPU));
        tn__si_inside--;
        if (!h) return -1;
        bool zero = false;
        for (int64_t i = 0, n = tn_numel(h); i < n && !zero; i++) zero = ((const int64_t *)tn_data_ptr(h))[i] == 0;
        tn_release(h);
        if (zero) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s: integer division by zero (ZeroDivisionError)", tn_binary_op_name(op));
            int64_t *err = tn_deferred_check(TN_CUDA, msg);
            if (!err) return -1;
            err[1] = 0;
            err[0] = 1;
            return 0;
        }
    }
    return TN__SI_RUN(tn__cpu_binary(op, out, a, b, al));
}
static int tn__si_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, tn_tensor *c, double v) {
    TN__SI_DEV("ternary", out); TN__SI_DEV_OR_SCALAR("ternary", a); TN__SI_DEV_OR_SCALAR("ternary", b); TN__SI_DEV_OR_SCALAR("ternary", c);
    TN__SI_COMPLEX(TN__CX_TERNARY, op, out);
    tn_tensor *const ts_[4] = {out, a, b, c};
    TN__SI_CAPTURE(TN__SIC_TERNARY, (int)op, ts_, 4, &v, 1, NULL, 0);
    return TN__SI_RUN(tn__cpu_ternary(op, out, a, b, c, v));
}
static int tn__si_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) {
    TN__SI_DEV("reduce", out); TN__SI_DEV("reduce", x); TN__SI_COMPLEX(TN__CX_REDUCE, op, x);
    tn_tensor *const ts_[2] = {out, x};
    TN__SI_CAPTURE(TN__SIC_REDUCE, (int)op, ts_, 2, NULL, 0, NULL, 0);
    return TN__SI_RUN(tn__cpu_reduce(op, out, x));
}
static int tn__si_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t d, int f) {
    TN__SI_DEV("lane", out); TN__SI_DEV("lane", out1); TN__SI_DEV("lane", x); TN__SI_COMPLEX(TN__CX_LANE, op, x);
    tn_tensor *const ts_[3] = {out, out1, x};
    const int64_t iv_[2] = {d, f};
    TN__SI_CAPTURE(TN__SIC_LANE, (int)op, ts_, 3, NULL, 0, iv_, 2);
    return TN__SI_RUN(tn__cpu_lane(op, out, out1, x, d, f));
}
static int tn__si_index(tn_index_mode m, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *is, int k) {
    TN__SI_DEV("index", dst); TN__SI_DEV("index", src); TN__SI_COMPLEX(TN__CX_INDEX, m, dst);
    for (int j = 0; j < k; j++) TN__SI_DEV("index", idx[j]);
    if (tn__si_capture) {   /* dst, src, then up to 8 index tensors; iv: k, then their strides */
        if (k > 8) return tn__si_uncapturable("an indexed copy over more than 8 index tensors");
        tn_tensor *ts_[10] = {dst, src};
        int64_t iv_[9] = {k};
        for (int j = 0; j < k; j++) { ts_[2 + j] = idx[j]; iv_[1 + j] = is[j]; }
        return tn__si_rec(TN__SIC_INDEX, (int)m, ts_, 2 + k, NULL, 0, iv_, 1 + k);
    }
    return TN__SI_RUN(tn__cpu_index(m, dst, src, idx, is, k));
}
static tn_tensor *tn__si_nonzero(tn_tensor *x) {
    if (x->device != TN_CUDA) return (tn__stand_in_bad("nonzero", "x", x), (tn_tensor *)NULL);
    if (tn__si_capture) return (tn__si_uncapturable("nonzero (it reads the count back)"), (tn_tensor *)NULL);
    if (tn_numel(x) > 0) tn__si_transfer(false);   /* the unit reads the flags back; the result's upload counts in copy */
    tn__si_inside++;
    tn_tensor *r = tn__cpu_nonzero(x);
    tn__si_inside--;
    tn_tensor *d = r ? tn__copy_as(r, r->dtype, TN_CUDA) : NULL; /* the result lives on the device */
    tn_release(r);
    return d;
}
static int tn__si_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double al, double be) {
    TN__SI_DEV("matmul", c); TN__SI_DEV("matmul", a); TN__SI_DEV("matmul", b);
    tn_tensor *const ts_[3] = {c, a, b};
    const double d_[2] = {al, be};
    TN__SI_CAPTURE(TN__SIC_MATMUL, 0, ts_, 3, d_, 2, NULL, 0);
    return TN__SI_RUN(tn__cpu_half_matmul(c, a, b, al, be));   /* half operands: the CPU's half matmul serves for cuBLAS's GemmEx */
}
/* The unit's cuBLASLt epilogue, as the passes it fuses: the bias broadcast into c, the
   product added to it (the CPU's half matmul for float16/bfloat16: float32 accumulation, one
   rounding), the activation; or the product and the bias gradient's sums. Declined exactly
   where the unit declines (the shared predicate). */
static int tn__si_matmul_ep(tn_tensor *c, tn_tensor *a, tn_tensor *b, tn_tensor *bias, double alpha, int act) {
    TN__SI_DEV("matmul_ep", c); TN__SI_DEV("matmul_ep", a); TN__SI_DEV("matmul_ep", b); TN__SI_DEV("matmul_ep", bias);
    const char *off = getenv("TN_CUDA_GEMM_EPILOGUE");
    if (tn__matmul_ep_declines(off && !strcmp(off, "0"), c, a, b, bias, act)) { TN__ATOMIC_ADD(&tn__si_gemm_ep_fallbacks, 1); return 1; }
    tn_tensor *const ts_[4] = {c, a, b, bias};
    TN__SI_CAPTURE(TN__SIC_MATMUL_EP, act, ts_, 4, &alpha, 1, NULL, 0);
    TN__ATOMIC_ADD(&tn__si_gemm_ep, 1);
    const int64_t M = c->shape[0], N = c->shape[1], K = a->shape[1];
    tn_tensor c3 = *c, a3 = *a, b3 = *b;   /* the 3-d views matmul takes: a batch of one */
    const int64_t cs[3] = {1, M, N}, as[3] = {1, M, K}, bs[3] = {1, K, N};
    const int64_t cst[3] = {0, c->strides[0], c->strides[1]}, ast[3] = {0, a->strides[0], a->strides[1]}, bst[3] = {0, b->strides[0], b->strides[1]};
    c3.ndim = a3.ndim = b3.ndim = 3;
    memcpy(c3.shape, cs, sizeof cs); memcpy(a3.shape, as, sizeof as); memcpy(b3.shape, bs, sizeof bs);
    memcpy(c3.strides, cst, sizeof cst); memcpy(a3.strides, ast, sizeof ast); memcpy(b3.strides, bst, sizeof bst);
    if (act == TN__EPI_BGRAD_A || act == TN__EPI_BGRAD_B) {   /* the product, then the bias gradient: sums over k */
        if (TN__SI_RUN(tn__cpu_half_matmul(&c3, &a3, &b3, alpha, 0.0))) return -1;
        const bool rows = act == TN__EPI_BGRAD_A;   /* [M] = a's row sums, else [N] = b's column sums */
        tn_tensor ov = *bias;
        const int64_t L = rows ? M : N, sh[2] = {rows ? L : 1, rows ? 1 : L}, st[2] = {rows ? 1 : L, 1};
        ov.ndim = 2;
        memcpy(ov.shape, sh, sizeof sh); memcpy(ov.strides, st, sizeof st);
        if (TN__SI_RUN(tn__cpu_fill(&ov, 0))) return -1;   /* reduce adds into its output */
        return TN__SI_RUN(tn__cpu_half_reduce(SUM, &ov, rows ? a : b));
    }
    if (bias) {   /* [N] or [1, N] as [M, N] with stride 0 down the rows */
        tn_tensor bv = *bias;
        const int64_t sh[2] = {M, N}, st[2] = {0, bias->strides[bias->ndim - 1]};
        bv.ndim = 2;
        memcpy(bv.shape, sh, sizeof sh); memcpy(bv.strides, st, sizeof st);
        if (TN__SI_RUN(tn__cpu_copy(c, &bv))) return -1;
    }
    if (TN__SI_RUN(tn__cpu_half_matmul(&c3, &a3, &b3, alpha, bias ? 1.0 : 0.0))) return -1;
    if (act == TN__EPI_NONE) return 0;
    return TN__SI_RUN(tn__cpu_half_unary(act == TN__EPI_RELU ? RELU : GELU_TANH, c, c, NULL));
}
static int tn__si_random(tn_random_op op, tn_tensor *o, uint64_t s, uint64_t off, double a, double b, int64_t l, uint64_t r) {
    TN__SI_DEV("random", o);
    if (tn__si_capture && !tn__si_cap_rng) return tn__si_uncapturable("a random draw");
    if (tn__si_capture) {   /* off counts from the graph's offset; seed and offset read at each launch */
        tn_tensor *const ts_[2] = {o, tn__si_cap_rng};
        const double d_[2] = {a, b};
        const int64_t iv_[3] = {(int64_t)off, l, (int64_t)r};
        (void)s;
        return tn__si_rec(TN__SIC_RANDOM, (int)op, ts_, 2, d_, 2, iv_, 3);
    }
    return TN__SI_RUN(tn__cpu_random(op, o, s, off, a, b, l, r));
}
static int tn__si_im2col(int f, tn_tensor *c, tn_tensor *i, const int64_t *g) {
    TN__SI_DEV("im2col", c); TN__SI_DEV("im2col", i);
    tn_tensor *const ts_[2] = {c, i};
    TN__SI_CAPTURE(TN__SIC_IM2COL, f, ts_, 2, NULL, 0, g, 10);
    return TN__SI_RUN(tn__cpu_im2col(f, c, i, g));
}
static int tn__si_pool(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    TN__SI_DEV("pool_argmax", idx); TN__SI_DEV("pool_argmax", x);
    if (tn__si_capture) {   /* the window tables by value, as the unit passes them in its kernel's parameters */
        const int64_t OH = idx->shape[2], OW = idx->shape[3];
        tn_tensor *tab = tn__new(TN_I64, TN_CPU, TN_SHAPE(2 * (OH + OW)));
        if (!tab) return tn__si_uncapturable("out of memory recording a call");
        int64_t *tb = (int64_t *)tn_data_ptr(tab);
        memcpy(tb, hs, (size_t)OH * sizeof *tb);
        memcpy(tb + OH, he, (size_t)OH * sizeof *tb);
        memcpy(tb + 2 * OH, ws, (size_t)OW * sizeof *tb);
        memcpy(tb + 2 * OH + OW, we, (size_t)OW * sizeof *tb);
        tn_tensor *const ts_[3] = {idx, x, tab};
        const int64_t iv_[2] = {dh, dw};
        const int r = tn__si_rec(TN__SIC_POOL_ARGMAX, 0, ts_, 3, NULL, 0, iv_, 2);
        tn_release(tab);
        return r;
    }
    return TN__SI_RUN(tn__cpu_pool_argmax(idx, x, hs, he, ws, we, dh, dw));
}
static int tn__si_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *st) {
    TN__SI_DEV("optim", p); TN__SI_DEV("optim", g);
    for (int j = 0; j < 3; j++) TN__SI_DEV("optim", st[j]);
    if (tn__si_capture) {   /* p, g, the three state slots; the scalars by value (the header refuses the kinds whose scalars change per step) */
        tn_tensor *const ts_[5] = {p, g, st[0], st[1], st[2]};
        if (tn__si_rec(TN__SIC_OPTIM, 0, ts_, 5, NULL, 0, NULL, 0)) return -1;
        tn__si_capture->calls[tn__si_capture->n - 1].k = *k;
        return 0;
    }
    return TN__SI_RUN(tn__cpu_optim(k, p, g, st));
}
/* the unit's multi-tensor step: each parameter as optim (the same element updates) */
static int tn__si_optim_multi(const tn__optk *k, int n, tn_tensor *const *p, tn_tensor *const *g, tn_tensor *const *s) {
    for (int i = 0; i < n; i++) {
        if (p[i]->dtype != p[0]->dtype) return TN__FAIL_INT("stand-in GPU: optim_multi got %s and %s parameters", tn_dtype_name(p[0]->dtype), tn_dtype_name(p[i]->dtype));
        if (tn__si_optim(&k[i], p[i], g[i], s + 3 * i)) return -1;
    }
    TN__ATOMIC_ADD(&tn__si_optim_multis, 1);
    return 0;
}
/* The operands of a library entry (NULL where unused): on the device and contiguous. */
static int tn__si_dense(const char *op, tn_tensor *const *ts, int n) {
    for (int k = 0; k < n; k++) {
        if (ts[k] && ts[k]->device != TN_CUDA) return tn__stand_in_bad(op, "an operand", ts[k]);
        if (ts[k] && !tn_is_contiguous(ts[k])) return TN__FAIL_INT("stand-in GPU: %s operands must be contiguous", op);
    }
    return 0;
}
/* The cases tensor_cuda.cu's library entries decline (return 1: the header's fallback
   runs), declined here too, so the stand-in takes the GPU's paths (max-pool backward
   through the argmax, evaluation-mode batch norm backward through the closed form ...).
   Keep in step with the `return 1`s of cu_conv2d, cu_batch_norm, cu_pool2d, cu_layer_norm,
   cu_cross_entropy; cu_attention's cases are one function both call (tn__attention_declines). */
static bool tn__si_float(const tn_tensor *x) { return x->dtype == TN_F32 || x->dtype == TN_F64; }
static bool tn__si_same_dtype(tn_tensor *const *ts, int n, const tn_tensor *like) {
    for (int k = 0; k < n; k++)
        if (ts[k] && ts[k]->dtype != like->dtype) return false;
    return true;
}
/* the unit's int32 limits of cuDNN's descriptors, and its empty-tensor early exits */
static bool tn__si_int32(tn_tensor *const *ts, int n) {
    for (int k = 0; k < n; k++)
        if (ts[k] && (tn_numel(ts[k]) > INT32_MAX || tn_numel(ts[k]) == 0)) return false;
    return true;
}
static bool tn__si_cudnn_off(void) { const char *e = getenv("TN_CUDNN"); return e && !strcmp(e, "0"); }   /* the unit's switch */
/* the library convolution's contract, served by the CPU's convolution (so the one-node
   path the GPU takes with cuDNN is exercised too) */
static int tn__si_conv2d(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *geom) {
    tn_tensor *const ts[3] = {x, w, y};
    if (tn__si_dense("conv2d", ts, 3)) return -1;
    if (tn__si_cudnn_off() || !tn__si_float(x) || !tn__si_same_dtype(ts, 3, x) || !tn__si_int32(ts, 3)) return 1;
    for (int i = 0; i < 7; i++)
        if (geom[i] > INT32_MAX || geom[i] < 0) return 1;
    TN__SI_CAPTURE(TN__SIC_CONV2D, mode, ts, 3, NULL, 0, geom, 7);
    const int64_t g[10] = {w->shape[2], w->shape[3], geom[4], geom[5], geom[2], geom[3], geom[0], geom[1], y->shape[2], y->shape[3]};
    tn_tensor xv = tn__shallow(x), wv = tn__shallow(w), yv = tn__shallow(y);   /* the same host memory, seen as CPU tensors */
    xv.device = wv.device = yv.device = TN_CPU;
    if (mode == 0) return TN__SI_RUN(tn__conv_forward_cpu(&yv, &xv, &wv, NULL, g, geom[6]));
    return TN__SI_RUN(tn__conv_backward_cpu(mode == 1 ? &xv : NULL, mode == 2 ? &wv : NULL, &yv, &xv, &wv, g, geom[6]));
}
static int tn__si_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                             tn_tensor *gb, double eps) {
    tn_tensor *const ts[8] = {x, w, b, st, y, gx, gw, gb};
    if (tn__si_dense("batch_norm", ts, 8)) return -1;
    tn_tensor *const same[7] = {x, w, b, y, gx, gw, gb};
    /* mode 3, the evaluation-mode backward: the header's closed form, as on the GPU; eps
       below cuDNN's CUDNN_BN_MIN_EPSILON (0 in cuDNN 9) */
    if (tn__si_cudnn_off() || mode == 3 || !tn__si_float(x) || st->dtype != TN_F64 || eps < 0 || !tn__si_same_dtype(same, 7, x) || !tn__si_int32(&x, 1)) return 1;
    TN__SI_CAPTURE(TN__SIC_BATCH_NORM, mode, ts, 8, &eps, 1, NULL, 0);
    return TN__SI_RUN(tn__cpu_batch_norm(mode, x, w, b, st, y, gx, gw, gb, eps));
}
static int tn__si_layer_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                             tn_tensor *gb, double eps) {
    tn_tensor *const ts[8] = {x, w, b, st, y, gx, gw, gb};
    if (tn__si_dense("layer_norm", ts, 8)) return -1;
    tn_tensor *const same[7] = {x, w, b, y, gx, gw, gb};
    if (!tn__si_float(x) || st->dtype != TN_F64 || tn_numel(x) == 0 || (mode == 0 && !w != !b) || !tn__si_same_dtype(same, 7, x)) return 1;
    TN__SI_CAPTURE(TN__SIC_LAYER_NORM, mode, ts, 8, &eps, 1, NULL, 0);
    return TN__SI_RUN(tn__cpu_layer_norm(mode, x, w, b, st, y, gx, gw, gb, eps));
}
static int tn__si_cross_entropy(int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx) {
    tn_tensor *const ts[6] = {x, t, wr, lse, out, gx};
    if (tn__si_dense("cross_entropy", ts, 6)) return -1;
    if (!tn__si_float(x) || t->dtype != TN_I64 || lse->dtype != TN_F64 || wr->dtype != x->dtype || out->dtype != x->dtype || x->shape[1] == 0) return 1;
    TN__SI_CAPTURE(TN__SIC_CROSS_ENTROPY, mode, ts, 6, NULL, 0, NULL, 0);
    return TN__SI_RUN(tn__cpu_cross_entropy(mode, x, t, wr, lse, out, gx));
}
/* the attention entry's contract, served by the CPU's fused kernels (src/nn/attention.c) */
static int tn__si_attention(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, tn_tensor *out, tn_tensor *lse, tn_tensor *dout, tn_tensor *dq,
                            tn_tensor *dk, tn_tensor *dv, double scale, bool causal) {
    tn_tensor *const ts[10] = {q, k, v, mask, out, lse, dout, dq, dk, dv};
    for (int t = 0; t < 10; t++)
        if (ts[t] && ts[t]->device != TN_CUDA) return tn__stand_in_bad("attention", "an operand", ts[t]);
    if (dout && (!dq || !dk || !dv)) return TN__FAIL_INT("stand-in GPU: attention's backward writes dq, dk and dv");
    const char *off_ = getenv("TN_CUDA_FUSED_ATTENTION");
    if (tn__attention_declines(off_ && !strcmp(off_, "0"), q, k, v, mask, out, lse, dout, dq, dk, dv)) {   /* the unit's cases (src/api.h) */
        TN__ATOMIC_ADD(&tn__si_attn_fallbacks, 1);
        return 1;
    }
    TN__ATOMIC_ADD(&tn__si_attn, 1);
    TN__SI_CAPTURE(TN__SIC_ATTENTION, causal, ts, 10, &scale, 1, NULL, 0);
    tn__si_inside++;
    /* half operands: the unit computes them in float32, so here the float32 kernel runs on
       float32 copies and the results are rounded once */
    const bool half = q->dtype == TN_F16 || q->dtype == TN_BF16;
    tn_tensor *const io[8] = {q, k, v, out, dout, dq, dk, dv};
    tn_tensor *f[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int r = 0;
    for (int t = 0; t < 8; t++) {
        if (!io[t]) continue;
        tn_tensor h = tn__shallow(io[t]);
        h.device = TN_CPU;
        f[t] = half ? tn__copy_as(&h, TN_F32, TN_CPU) : tn_retain(io[t]);
        if (!f[t]) r = -1;
    }
    tn__sdpa_args a;
    memset(&a, 0, sizeof a);
    a.L = q->shape[q->ndim - 2]; a.S = k->shape[k->ndim - 2]; a.E = q->shape[q->ndim - 1]; a.Ev = v->shape[v->ndim - 1];
    a.scale = scale; a.causal = causal;
    int64_t bshape[TN_MAX_DIMS + 2], *offs = NULL;
    int nb = 0;
    if (r) ;
    else if (!tn__sdpa_layout(f[0], f[1], f[2], mask, &a, bshape, &nb, &offs)) r = TN__FAIL_INT("stand-in GPU: attention: out of memory");
    else if (!dout) {
        if (f[0]->dtype == TN_F32) tn__sdpa_fwd_f32(&a, (float *)tn_data_ptr(f[3]), (float *)tn_data_ptr(lse));
        else tn__sdpa_fwd_f64(&a, (double *)tn_data_ptr(f[3]), (double *)tn_data_ptr(lse));
    } else if (tn__cpu_fill(f[5], 0) || tn__cpu_fill(f[6], 0) || tn__cpu_fill(f[7], 0)) r = -1;
    else if (f[0]->dtype == TN_F32)
        tn__sdpa_bwd_f32(&a, (const float *)tn_data_ptr(f[3]), (const float *)tn_data_ptr(lse), (const float *)tn_data_ptr(f[4]), (float *)tn_data_ptr(f[5]),
                         (float *)tn_data_ptr(f[6]), (float *)tn_data_ptr(f[7]));
    else
        tn__sdpa_bwd_f64(&a, (const double *)tn_data_ptr(f[3]), (const double *)tn_data_ptr(lse), (const double *)tn_data_ptr(f[4]), (double *)tn_data_ptr(f[5]),
                         (double *)tn_data_ptr(f[6]), (double *)tn_data_ptr(f[7]));
    for (int t = dout ? 5 : 3; half && r == 0 && t < (dout ? 8 : 4); t++) {   /* the results back, rounded */
        tn_tensor h = tn__shallow(io[t]);
        h.device = TN_CPU;
        r = tn__cpu_copy(&h, f[t]);
    }
    for (int t = 0; t < 8; t++) tn_release(f[t]);
    TN_FREE(offs);
    tn__si_inside--;
    return r;
}
/* the library pooling's contract, served by direct loops over each window (double sums) */
static int tn__si_pool2d(tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *geom) {
    tn_tensor *const ts[4] = {x, y, gy, gx};
    if (tn__si_dense("pool2d", ts, 4)) return -1;
    /* max pooling: the forward without padding only (cuDNN pads with -FLT_MAX, and its
       backward would not pick the first of tied maxima as PyTorch does) */
    if (geom[6] == 0 && (gx || geom[4] || geom[5])) return 1;
    if (tn__si_cudnn_off() || !tn__si_float(x) || !tn__si_same_dtype(ts, 4, x) || !tn__si_int32(ts, 2)) return 1;
    for (int i = 0; i < 6; i++)
        if (geom[i] > INT32_MAX) return 1;
    TN__SI_CAPTURE(TN__SIC_POOL2D, 0, ts, 4, NULL, 0, geom, 7);
    const bool f32 = x->dtype == TN_F32;
    const int64_t P = x->shape[0] * x->shape[1], H = x->shape[2], W = x->shape[3], OH = y->shape[2], OW = y->shape[3];
    const int64_t kh = geom[0], kw = geom[1], sh = geom[2], sw = geom[3], ph = geom[4], pw = geom[5], mode = geom[6];
#define TN__SI_LD(t, i) (f32 ? (double)((const float *)tn_data_ptr(t))[i] : ((const double *)tn_data_ptr(t))[i])
    if (gx && tn__cpu_fill(gx, 0)) return -1;
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < OH; a++)
            for (int64_t b = 0; b < OW; b++) {
                const int64_t h0 = a * sh - ph, w0 = b * sw - pw, o = (pl * OH + a) * OW + b;
                int64_t best = -1, cnt = 0;
                double acc = 0;
                for (int64_t h = TN__MAX(h0, 0); h < TN__MIN(h0 + kh, H); h++)
                    for (int64_t w = TN__MAX(w0, 0); w < TN__MIN(w0 + kw, W); w++) {
                        const int64_t i = (pl * H + h) * W + w;
                        const double v = TN__SI_LD(x, i);
                        if (best < 0 || (v != v && TN__SI_LD(x, best) == TN__SI_LD(x, best)) || v > TN__SI_LD(x, best)) best = i;
                        acc += v;
                        cnt++;
                    }
                const double div = mode == 1 ? (double)(kh * kw) : (double)cnt;
                if (!gx) {
                    const double v = mode == 0 ? TN__SI_LD(x, best) : acc / div;
                    if (f32) ((float *)tn_data_ptr(y))[o] = (float)v; else ((double *)tn_data_ptr(y))[o] = v;
                    continue;
                }
                const double g = TN__SI_LD(gy, o);
                for (int64_t h = TN__MAX(h0, 0); h < TN__MIN(h0 + kh, H); h++)
                    for (int64_t w = TN__MAX(w0, 0); w < TN__MIN(w0 + kw, W); w++) {
                        const int64_t i = (pl * H + h) * W + w;
                        const double add = mode == 0 ? (i == best ? g : 0) : g / div;
                        if (f32) ((float *)tn_data_ptr(gx))[i] += (float)add; else ((double *)tn_data_ptr(gx))[i] += add;
                    }
            }
#undef TN__SI_LD
    return 0;
}
/* the unit's check: values rewritten into out, a bad one recorded in err (read after the
   next synchronisation), nothing reported now */
static int tn__si_check_index(tn_tensor *out, tn_tensor *idx, int64_t size, int flags, int64_t skip, int64_t *err) {
    TN__SI_DEV("check_index", out); TN__SI_DEV("check_index", idx);
    if (tn__si_capture && !tn__si_cpool) return tn__si_uncapturable("an index check");   /* a replay's capture: err is no slot of a graph's */
    if (tn__si_capture) {   /* an eager capture's: err is the graph's slot, scanned after each launch */
        tn_tensor *const ts_[2] = {out, idx};
        const int64_t iv_[2] = {size, skip};
        if (tn__si_rec(TN__SIC_CHECK_INDEX, flags, ts_, 2, NULL, 0, iv_, 2)) return -1;
        tn__si_capture->calls[tn__si_capture->n - 1].err = err;
        return 0;
    }
    if (out && (out->dtype != TN_I64 || !tn_is_contiguous(out))) return TN__FAIL_INT("stand-in GPU: check_index writes a contiguous int64 out");
    tn_tensor iv = tn__shallow(idx);   /* the same host memory, seen as a CPU tensor */
    iv.device = TN_CPU;
    tn_tensor *v = tn__copy_as(&iv, TN_I64, TN_CPU);
    if (!v) return -1;
    const int64_t *p = (const int64_t *)tn_data_ptr(v), n = tn_numel(v);
    int64_t *o = out ? (int64_t *)tn_data_ptr(out) : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = p[i], w = x < 0 && (flags & 1) ? x + size : x;
        if ((flags & 2) && x == skip) w = 0;
        else if (w < 0 || w >= size) {
            err[1] = x;
            err[0] = 1;
            w = 0;
        }
        if (o) o[i] = w;
    }
    tn_release(v);
    return 0;
}
/* the linalg entry's contract (src/api.h), served by the CPU's kernels on float64 (complex:
   complex128, the _c kernels) copies of the column-major batches (each transposed to the
   kernels' row-major and back) */
static tn_tensor *tn__si_host(tn_tensor *t, tn_dtype dt) {   /* a contiguous CPU copy of t's memory */
    tn_tensor v = tn__shallow(t);
    v.device = TN_CPU;
    return tn__own(tn__copy_as(&v, dt, TN_CPU));
}
static int tn__si_put(tn_tensor *t, tn_tensor *src) {   /* t's memory <- src (t's shape, any dtype) */
    tn_tensor v = tn__shallow(t);
    v.device = TN_CPU;
    return src ? tn__cpu_copy(&v, src) : -1;
}
static tn_tensor *tn__si_rows(tn_tensor *t) { return tn_contiguous(tn_transpose(t, -2, -1)); }   /* [B, n, m] <-> [B, m, n] */
static int tn__si_linalg_run(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag) {
    const int64_t B = a->shape[0], n = a->shape[1], m = a->shape[2], k = m < n ? m : n;
    int32_t *pv = p && op != TN_LA_GESVD ? (int32_t *)tn_data_ptr(p) : NULL, *fv = info ? (int32_t *)tn_data_ptr(info) : NULL;
    const bool cx = tn_dtype_is_complex(a->dtype);
    const tn_dtype wt = cx ? TN_C128 : TN_F64;
    tn_tensor *h = tn__si_host(a, wt), *w = h ? tn__si_rows(h) : NULL;   /* w: row-major m x n */
    if (!w) return -1;
    double *wv = (double *)tn_data_ptr(w);
    tn__cplx *wc = (tn__cplx *)tn_data_ptr(w);
    switch (op) {
    case TN_LA_GEEV: {   /* the CPU's geev (its order and normalisation: the CPU's results), info per matrix */
        tn_tensor *L = NULL, *V = NULL;
        if (tn__la_eig_raw(w, flag != 0, &L, &V, "stand-in GPU: linalg", fv)) return -1;
        return tn__si_put(b, L) || (flag && tn__si_put(c, tn_transpose(V, -2, -1))) ? -1 : 0;
    }
    case TN_LA_GETRF:
        for (int64_t i = 0; i < B; i++) fv[i] = (int32_t)(cx ? tn__la_getrf_c(wc + i * m * n, m, n, pv + i * k) : tn__la_getrf(wv + i * m * n, m, n, pv + i * k));
        return tn__si_put(a, tn_transpose(w, -2, -1));
    case TN_LA_GETRS: {
        tn_tensor *x = tn__si_rows(tn__si_host(b, wt));   /* n x r */
        if (!x) return -1;
        const int64_t r = b->shape[1];
        for (int64_t i = 0; i < B; i++)
            if (cx) tn__la_getrs_c(wc + i * n * n, pv + i * n, n, (tn__cplx *)tn_data_ptr(x) + i * n * r, r);
            else tn__la_getrs(wv + i * n * n, pv + i * n, n, (double *)tn_data_ptr(x) + i * n * r, r);
        return tn__si_put(b, tn_transpose(x, -2, -1));
    }
    case TN_LA_POTRF:   /* (complex: A = L L^H) */
        for (int64_t i = 0; i < B; i++) fv[i] = (int32_t)(cx ? tn__la_potrf_c(wc + i * n * n, n) : tn__la_potrf(wv + i * n * n, n));
        return tn__si_put(a, tn_transpose(w, -2, -1));
    case TN_LA_GEQRF: {   /* geqr2 and org2r work column-major: on h as it is */
        const int64_t qc = c ? c->shape[1] : 0;
        tn_tensor *tau = tn__own(tn__new(wt, TN_CPU, b->shape, 2)), *q = c ? tn__own(tn__new(wt, TN_CPU, c->shape, 3)) : NULL;
        if (!tau || (c && !q)) return -1;
        for (int64_t i = 0; i < B; i++)
            if (cx) {
                tn__cplx *hv = (tn__cplx *)tn_data_ptr(h), *tv = (tn__cplx *)tn_data_ptr(tau);
                tn__la_geqr2_t_c(hv + i * m * n, m, n, tv + i * k);
                if (q) tn__la_org2r_t_c(hv + i * m * n, m, k, tv + i * k, (tn__cplx *)tn_data_ptr(q) + i * qc * m, qc);
            } else {
                double *hv = (double *)tn_data_ptr(h), *tv = (double *)tn_data_ptr(tau);
                tn__la_geqr2_t(hv + i * m * n, m, n, tv + i * k);
                if (q) tn__la_org2r_t(hv + i * m * n, m, k, tv + i * k, (double *)tn_data_ptr(q) + i * qc * m, qc);
            }
        return tn__si_put(a, h) || tn__si_put(b, tau) || (q && tn__si_put(c, q)) ? -1 : 0;
    }
    case TN_LA_SYEVD: {   /* a's lower triangle is h's upper one (h: a's transpose, row-major) */
        tn_tensor *L = NULL, *V = NULL;
        if (cx) {   /* heevd: the CPU's Hermitian eigh (its real form) of w's lower triangle, values real */
            L = flag ? tn_linalg_eigh(w, &V, .UPLO = "L") : tn_linalg_eigvalsh(w, .UPLO = "L");   /* (in the open scope, as every op's result) */
            if (!L || (flag && !V)) return -1;
        } else if (tn__la_eigh_raw(h, true, flag != 0, &L, &V, "stand-in GPU: linalg")) return -1;
        memset(fv, 0, (size_t)B * sizeof *fv);
        return tn__si_put(b, L) || (flag && tn__si_put(a, tn_transpose(V, -2, -1))) ? -1 : 0;
    }
    case TN_LA_GESVD: {
        tn_tensor *U = NULL, *S = NULL, *Vh = NULL;
        const bool full = c && (c->shape[1] != k || p->shape[1] != k);
        if (tn__la_svd_raw(w, c != NULL, full, &U, &S, &Vh, "stand-in GPU: linalg")) return -1;
        memset(fv, 0, (size_t)B * sizeof *fv);
        return tn__si_put(b, S) || (c && (tn__si_put(c, tn_transpose(U, -2, -1)) || tn__si_put(p, Vh))) ? -1 : 0;
    }
    case TN_LA_TRSM: {   /* w: the triangle row-major; x: b's n x r row-major */
        const int64_t r = b->shape[1];
        tn_tensor *x = tn__si_rows(tn__si_host(b, wt));
        if (!x) return -1;
        for (int64_t i = 0; i < B; i++)
            if (cx) tn__la_trsm_small_c(wc + i * n * n, n, (tn__cplx *)tn_data_ptr(x) + i * n * r, r, n, r, (flag & 1) != 0, (flag & 2) != 0);
            else if (tn__la_trsm(wv + i * n * n, n, (double *)tn_data_ptr(x) + i * n * r, r, (flag & 1) != 0, (flag & 2) != 0)) return -1;
        return tn__si_put(b, tn_transpose(x, -2, -1));
    }
    case TN_LA_SYTRF:   /* sytf2 'L' on the row-major lower triangle: a's lower one (complex: symmetric) */
        for (int64_t i = 0; i < B; i++) fv[i] = (int32_t)(cx ? tn__la_sytf2_c(wc + i * n * n, n, pv + i * n) : tn__la_sytf2(wv + i * n * n, n, pv + i * n));
        return tn__si_put(a, tn_transpose(w, -2, -1));
    case TN_LA_SYTRS: {
        tn_tensor *x = tn__si_rows(tn__si_host(b, wt));   /* n x r */
        if (!x) return -1;
        const int64_t r = b->shape[1];
        for (int64_t i = 0; i < B; i++)
            if (cx) tn__la_sytrs_c(wc + i * n * n, pv + i * n, n, (tn__cplx *)tn_data_ptr(x) + i * n * r, r);
            else tn__la_sytrs(wv + i * n * n, pv + i * n, n, (double *)tn_data_ptr(x) + i * n * r, r);
        return tn__si_put(b, tn_transpose(x, -2, -1));
    }
    case TN_LA_ORMQR: {   /* CPU ormqr on the row-major views: the reflectors q x k, c q x r (left) or r x q (complex: Q^H for transpose, as torch.ormqr) */
        tn_tensor *C = tn__si_host(c, wt), *tau = tn__si_host(b, wt);
        tn_tensor *R = C && tau ? tn_ormqr(w, tau, tn_transpose(C, -2, -1), .left = (flag & 1) != 0, .transpose = (flag & 2) != 0) : NULL;
        return tn__si_put(c, R ? tn_transpose(R, -2, -1) : NULL);
    }
    }
    return TN__FAIL_INT("stand-in GPU: linalg: unknown op %d", (int)op);
}
static int tn__si_linalg(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag) {
    tn_tensor *const ts[5] = {a, b, c, p, info};
    if (tn__si_dense("linalg", ts, 5)) return -1;
    TN__SI_NO_CAPTURE("a factorization (linalg)");
    /* GEEV: b, c complex for a real a too; SYEVD's and GESVD's values (b) real for a complex a */
    const bool geev = op == TN_LA_GEEV, cx = tn_dtype_is_complex(a->dtype), real_b = op == TN_LA_SYEVD || op == TN_LA_GESVD;
    if (!(tn__si_float(a) || a->dtype == TN_C64 || a->dtype == TN_C128) || a->ndim != 3)
        return TN__FAIL_INT("stand-in GPU: linalg takes [B, n, m] float32/float64/complex64/complex128 batches, not %s %s", tn_dtype_name(a->dtype), TN__SHAPE(a));
    for (int t = 1; t < 4; t++)
        if (ts[t] && ts[t]->dtype != (t == 3 && op != TN_LA_GESVD ? TN_I32 : geev ? (cx ? a->dtype : tn_dtype_to_complex(a->dtype)) : t == 1 && real_b ? tn_dtype_to_real(a->dtype) : a->dtype))
            return TN__FAIL_INT("stand-in GPU: linalg: operand %d is %s", t, tn_dtype_name(ts[t]->dtype));
    if (info && info->dtype != TN_I32) return TN__FAIL_INT("stand-in GPU: linalg: info is %s, not int32", tn_dtype_name(info->dtype));
    const bool need_info = op == TN_LA_GETRF || op == TN_LA_POTRF || op == TN_LA_SYEVD || op == TN_LA_GESVD || op == TN_LA_SYTRF || geev;
    const bool need_p = op == TN_LA_GETRF || op == TN_LA_GETRS || op == TN_LA_SYTRF || op == TN_LA_SYTRS;
    if ((need_info && !info) || (need_p && !p) || (op != TN_LA_GETRF && op != TN_LA_POTRF && op != TN_LA_SYTRF && !b) || (op == TN_LA_ORMQR && !c))
        return TN__FAIL_INT("stand-in GPU: linalg: an operand the op writes is NULL");
    if (geev && (a->shape[1] != a->shape[2] || b->ndim != 2 || b->shape[0] != a->shape[0] || b->shape[1] != a->shape[1] || (flag && !c) || (!flag && c) ||
                 (c && (c->ndim != 3 || c->shape[0] != a->shape[0] || c->shape[1] != a->shape[1] || c->shape[2] != a->shape[1]))))
        return TN__FAIL_INT("stand-in GPU: linalg: GEEV of %s takes b [B, n], c [B, n, n] (flag 1) or NULL", TN__SHAPE(a));
    if (tn_numel(a) == 0) {   /* nothing to factor: every matrix of none, or empty ones, is fine */
        if (info) memset(tn_data_ptr(info), 0, (size_t)tn_numel(info) * sizeof(int32_t));
        return 0;
    }
    tn__si_inside++;
    tn_scope_begin();
    tn_no_grad_begin();
    int r = tn__si_linalg_run(op, a, b, c, p, info, flag);
    tn_no_grad_end();
    tn_scope_end();
    tn__si_inside--;
    return r;
}
/* tensor_cuda.cu's cuFFT plan cache, by key alone: a transform inside a capture needs a plan
   made before it (making one allocates and uploads, which a capture cannot hold), so the
   stand-in refuses the same transforms. Up to 64 plans; full, it starts over unless a graph
   lives (a captured graph holds its plans). */
typedef struct tn__si_fft_key { int kind, dbl, rank; int64_t n[3], batch; } tn__si_fft_key;
static tn__si_fft_key *tn__si_fft_keys;
static int tn__si_fft_nkeys, tn__si_fft_cap;
static int tn__si_fft_plan(int kind, int dbl, int rank, const int64_t *n, int64_t batch) {
    tn__si_fft_key k;
    memset(&k, 0, sizeof k);   /* compared as bytes */
    k.kind = kind; k.dbl = dbl; k.rank = rank; k.batch = batch;
    for (int d = 0; d < rank; d++) k.n[d] = n[d];
    tn__si_plock_on();
    bool found = false;
    for (int j = 0; j < tn__si_fft_nkeys && !found; j++) found = !memcmp(&tn__si_fft_keys[j], &k, sizeof k);
    int r = 0;
    if (!found && !tn__si_capture) {
        if (tn__si_fft_nkeys >= 64 && TN__ATOMIC_LOAD(&tn__si_live_graphs) == 0) tn__si_fft_nkeys = 0;   /* past 64 while graphs live, as the unit's map */
        if (tn__si_fft_nkeys == tn__si_fft_cap) {
            const int cap = tn__si_fft_cap ? 2 * tn__si_fft_cap : 64;
            tn__si_fft_key *a = (tn__si_fft_key *)TN_REALLOC(tn__si_fft_keys, (size_t)cap * sizeof *a);
            if (a) { tn__si_fft_keys = a; tn__si_fft_cap = cap; }
        }
        if (tn__si_fft_nkeys < tn__si_fft_cap) tn__si_fft_keys[tn__si_fft_nkeys++] = k;
        else r = -1;
    }
    tn__si_plock_off();
    if (r) return TN__FAIL_INT("stand-in GPU: fft: out of memory for the plan cache");
    return found || !tn__si_capture ? 0 : tn__si_uncapturable("a cuFFT plan made (run the transform once before the capture)");
}
/* the fft entry's contract (src/api.h), served by the CPU's engine on the same host memory,
   pass by pass as src/ops/fft.c runs it on the CPU (so the results are the CPU's bits) */
static int tn__si_fft(int kind, tn_tensor *y, tn_tensor *x, int rank, const int64_t *n, double scale) {
    tn_tensor *const ts[2] = {y, x};
    if (tn__si_dense("fft", ts, 2)) return -1;
    const bool cin = kind != 2, cout = kind != 3;
    const tn_dtype rt = tn_dtype_is_complex(x->dtype) ? tn_dtype_to_real(x->dtype) : x->dtype;
    if (rank < 1 || rank > 3 || x->ndim < rank || y->ndim != x->ndim || tn_dtype_is_complex(x->dtype) != cin || tn_dtype_is_complex(y->dtype) != cout ||
        (rt != TN_F32 && rt != TN_F64) || (tn_dtype_is_complex(y->dtype) ? tn_dtype_to_real(y->dtype) : y->dtype) != rt)
        return TN__FAIL_INT("stand-in GPU: fft: kind %d of %s %s into %s %s over %d dims", kind, tn_dtype_name(x->dtype), TN__SHAPE(x), tn_dtype_name(y->dtype),
                            TN__SHAPE(y), rank);
    const int nd = x->ndim, b = nd - rank, dbl = rt == TN_F64;
    for (int k = 0; k < rank; k++) {
        const int64_t last = kind == 0 || kind == 1 || k < rank - 1 ? n[k] : n[k] / 2 + 1;
        if (x->shape[b + k] != (kind == 3 ? last : n[k]) || y->shape[b + k] != (kind == 2 ? last : n[k]))
            return TN__FAIL_INT("stand-in GPU: fft: sizes %s and %s for the signal sizes given", TN__SHAPE(x), TN__SHAPE(y));
    }
    if (tn_numel(y) == 0) return 0;
    const int64_t iv_[4] = {rank, n[0], rank > 1 ? n[1] : 0, rank > 2 ? n[2] : 0};
    int64_t pts = 1;
    for (int k = 0; k < rank; k++) pts *= n[k];
    if (tn__si_fft_plan(kind, dbl, rank, n, tn_numel(kind == 3 ? y : x) / pts)) return -1;
    TN__SI_CAPTURE(TN__SIC_FFT, kind, ts, 2, &scale, 1, iv_, 4);
    tn__si_inside++;
    int r = 0;
    /* c2c passes in place over dims [from, to) of the complex buffer c of shape sh, the last one scaled */
#define TN__SI_C2C(c, sh, from, to, fwd, sc) \
    for (int d = (from); d < (to) && !r; d++) \
        r = tn__fft_along((fwd) ? TN__FFT_FWD : TN__FFT_BWD, (sh)[d], dbl, (c), (sh)[d], (c), (sh)[d], tn__numel((sh), d), tn__numel((sh) + d + 1, nd - d - 1), \
                          d == (to) - 1 ? (sc) : 1.0)
    const int64_t nx = x->shape[nd - 1], ny = y->shape[nd - 1];
    if (kind == 0 || kind == 1) {
        memcpy(tn_data_ptr(y), tn_data_ptr(x), (size_t)tn_numel(x) * tn_dtype_size(x->dtype));
        TN__SI_C2C(tn_data_ptr(y), y->shape, b, nd, kind == 0, scale);
    } else if (kind == 2) {
        r = tn__fft_along(TN__FFT_R2C, nx, dbl, tn_data_ptr(x), nx, tn_data_ptr(y), ny, tn__numel(x->shape, nd - 1), 1, rank == 1 ? scale : 1.0);
        TN__SI_C2C(tn_data_ptr(y), y->shape, b, nd - 1, true, scale);
    } else {
        void *t = TN_MALLOC((size_t)tn_numel(x) * tn_dtype_size(x->dtype));
        if (!t) r = TN__FAIL_INT("stand-in GPU: fft: out of memory");
        else {
            memcpy(t, tn_data_ptr(x), (size_t)tn_numel(x) * tn_dtype_size(x->dtype));
            TN__SI_C2C(t, x->shape, b, nd - 1, false, 1.0);
            if (!r) r = tn__fft_along(TN__FFT_C2R, ny, dbl, t, nx, tn_data_ptr(y), ny, tn__numel(y->shape, nd - 1), 1, scale);
            TN_FREE(t);
        }
    }
#undef TN__SI_C2C
    tn__si_inside--;
    return r;
}
/* the nccl entry's contract (src/api.h) on host memory: one rank copies (a reduction over
   one rank is its input; AVG divides by 1); more ranks, under TENSOR_MPI, are MPI's
   non-blocking collectives over a duplicate of the group's communicator, completed by
   QUERY as a stream's work completes (float16/bfloat16 reduced by MPI ops of their own,
   AVG divided when complete, as ncclAvg). The id is a marker INIT checks, so a test sees
   that the bootstrap carried GET_ID's bytes. */
static const char tn__si_nccl_magic[] = "stand-in nccl id";
typedef struct tn__si_pending {
    void *buf;                          /* AVG: the result to divide, once complete */
    int64_t n;
    tn_dtype dtype;
} tn__si_pending;
typedef struct tn__si_comm {
    int rank, size;
#ifdef TENSOR_MPI
    MPI_Comm comm;                      /* size > 1 */
    MPI_Request *reqs;                  /* the queued work not complete yet */
    tn__si_pending *post;
    int nreqs, cap;
#endif
} tn__si_comm;
typedef struct tn__si_event { tn__si_comm *c; } tn__si_event;

static int tn__si_nccl_bad(tn_nccl_op op, const char *why) { return TN__FAIL_INT("stand-in GPU: nccl op %d: %s", (int)op, why); }

#ifdef TENSOR_MPI
static int64_t tn__si_nccl_count(const tn_tensor *t) { return tn_numel(t) * (tn_is_complex(t) ? 2 : 1); }   /* complex: pairs of reals */
#define TN__SI_HALF_OP(name, to_f, from_f, expr) \
    static void name(void *in, void *io, int *len, MPI_Datatype *dt) { \
        (void)dt; \
        const uint16_t *a = (const uint16_t *)in; \
        uint16_t *b = (uint16_t *)io; \
        for (int i = 0; i < *len; i++) { const float x = to_f(a[i]), y = to_f(b[i]); b[i] = from_f(expr); } \
    }
TN__SI_HALF_OP(tn__si_h_sum, tn__h2f, tn__f2h, x + y)
TN__SI_HALF_OP(tn__si_h_prod, tn__h2f, tn__f2h, x * y)
TN__SI_HALF_OP(tn__si_h_min, tn__h2f, tn__f2h, x < y || x != x ? x : y)
TN__SI_HALF_OP(tn__si_h_max, tn__h2f, tn__f2h, x > y || x != x ? x : y)
TN__SI_HALF_OP(tn__si_bf_sum, tn__bf2f, tn__f2bf, x + y)
TN__SI_HALF_OP(tn__si_bf_prod, tn__bf2f, tn__f2bf, x * y)
TN__SI_HALF_OP(tn__si_bf_min, tn__bf2f, tn__f2bf, x < y || x != x ? x : y)
TN__SI_HALF_OP(tn__si_bf_max, tn__bf2f, tn__f2bf, x > y || x != x ? x : y)
#undef TN__SI_HALF_OP
static MPI_Datatype tn__si_mpi_type(tn_dtype d) {
    switch (d) {
    case TN_F32: case TN_C64: return MPI_FLOAT;
    case TN_F64: case TN_C128: return MPI_DOUBLE;
    case TN_I32: return MPI_INT32_T;
    case TN_I64: return MPI_INT64_T;
    case TN_U8: case TN_BOOL: return MPI_UINT8_T;
    case TN_I8: return MPI_INT8_T;
    case TN_F16: case TN_BF16: return MPI_UINT16_T;
    default: return MPI_DATATYPE_NULL;
    }
}
static MPI_Op tn__si_mpi_op(tn_dist_op op, tn_dtype d) {
    static MPI_Op half[2][4];
    static bool made;
    const int k = op == TN_DIST_PRODUCT ? 1 : op == TN_DIST_MIN ? 2 : op == TN_DIST_MAX ? 3 : 0;   /* AVG: the sum, divided later */
    if (d == TN_F16 || d == TN_BF16) {
        if (!made) {
            MPI_User_function *fs[2][4] = {{tn__si_h_sum, tn__si_h_prod, tn__si_h_min, tn__si_h_max}, {tn__si_bf_sum, tn__si_bf_prod, tn__si_bf_min, tn__si_bf_max}};
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 4; j++) MPI_Op_create(fs[i][j], 1, &half[i][j]);
            made = true;
        }
        return half[d == TN_BF16][k];
    }
    const MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return ops[k];
}
static int tn__si_mpi_fail(const char *what, int rc) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    return TN__FAIL_INT("stand-in GPU: nccl %s: MPI error: %s", what, len ? msg : "unknown");
}
/* the divisions of ncclAvg, on the completed results */
static void tn__si_avg(const tn__si_pending *p, int size) {
    for (int64_t i = 0; i < p->n; i++) {
        switch (p->dtype) {
        case TN_F32: case TN_C64: ((float *)p->buf)[i] /= (float)size; break;
        case TN_F64: case TN_C128: ((double *)p->buf)[i] /= size; break;
        case TN_F16: ((uint16_t *)p->buf)[i] = tn__f2h(tn__h2f(((uint16_t *)p->buf)[i]) / (float)size); break;
        case TN_BF16: ((uint16_t *)p->buf)[i] = tn__f2bf(tn__bf2f(((uint16_t *)p->buf)[i]) / (float)size); break;
        default: break;
        }
    }
}
/* one more request in c's queue (post: an AVG result to divide when it completes) */
static int tn__si_queue(tn__si_comm *c, MPI_Request req, void *post, int64_t n, tn_dtype d) {
    if (c->nreqs == c->cap) {
        const int cap = c->cap ? 2 * c->cap : 16;
        MPI_Request *r = (MPI_Request *)TN_REALLOC(c->reqs, (size_t)cap * sizeof *r);
        if (r) c->reqs = r;
        tn__si_pending *p = r ? (tn__si_pending *)TN_REALLOC(c->post, (size_t)cap * sizeof *p) : NULL;
        if (!p) return TN__FAIL_INT("stand-in GPU: nccl: out of memory");
        c->post = p;
        c->cap = cap;
    }
    c->reqs[c->nreqs] = req;
    c->post[c->nreqs].buf = post;
    c->post[c->nreqs].n = n;
    c->post[c->nreqs++].dtype = d;
    return 0;
}
/* a collective of ranks > 1 started over MPI */
static int tn__si_nccl_mpi(tn_nccl_op op, tn_nccl_args *a, tn__si_comm *c) {
    tn_tensor *t = a->x ? a->x : a->y;
    const MPI_Datatype type = tn__si_mpi_type(t->dtype);
    const int64_t nx = a->x ? tn__si_nccl_count(a->x) : 0, ny = a->y ? tn__si_nccl_count(a->y) : 0;
    if (nx > INT_MAX || ny > INT_MAX) return tn__si_nccl_bad(op, "more elements than MPI's int count");
    void *x = a->x ? tn_data_ptr(a->x) : NULL, *y = a->y ? tn_data_ptr(a->y) : NULL;
    const MPI_Op mop = tn__si_mpi_op(a->op, t->dtype);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    switch (op) {
    case TN_NCCL_ALL_REDUCE: rc = MPI_Iallreduce(x == y ? MPI_IN_PLACE : x, y, (int)ny, type, mop, c->comm, &req); break;
    case TN_NCCL_BROADCAST:
        if (c->rank == a->peer && x != y) memcpy(y, x, (size_t)tn_numel(a->y) * tn_dtype_size(a->y->dtype));
        rc = MPI_Ibcast(y, (int)ny, type, a->peer, c->comm, &req);
        break;
    case TN_NCCL_REDUCE: rc = MPI_Ireduce(c->rank == a->peer && x == y ? MPI_IN_PLACE : x, y, (int)nx, type, mop, a->peer, c->comm, &req); break;
    case TN_NCCL_ALL_GATHER: rc = MPI_Iallgather(x, (int)nx, type, y, (int)nx, type, c->comm, &req); break;
    case TN_NCCL_REDUCE_SCATTER: rc = MPI_Ireduce_scatter_block(x, y, (int)ny, type, mop, c->comm, &req); break;
    case TN_NCCL_SEND: rc = MPI_Isend(x, (int)nx, type, a->peer, 0, c->comm, &req); break;
    default: rc = MPI_Irecv(y, (int)ny, type, a->peer, 0, c->comm, &req); break;
    }
    if (rc != MPI_SUCCESS) return tn__si_mpi_fail("collective", rc);
    const bool avg = a->op == TN_DIST_AVG && (op == TN_NCCL_ALL_REDUCE || op == TN_NCCL_REDUCE_SCATTER || (op == TN_NCCL_REDUCE && c->rank == a->peer));
    return tn__si_queue(c, req, avg ? y : NULL, ny, t->dtype);
}
#endif

static int tn__si_nccl_run(tn_nccl_op op, tn_nccl_args *a) {
    tn__si_comm *c = (tn__si_comm *)a->comm;
    switch (op) {
    case TN_NCCL_GET_ID: {
        static int64_t made;
        memset(a->id, 0, sizeof a->id);
        memcpy(a->id, tn__si_nccl_magic, sizeof tn__si_nccl_magic);
        const int64_t k = TN__ATOMIC_ADD(&made, 1);
        memcpy(a->id + 64, &k, sizeof k);
        return 0;
    }
    case TN_NCCL_INIT: {
        if (memcmp(a->id, tn__si_nccl_magic, sizeof tn__si_nccl_magic)) return tn__si_nccl_bad(op, "the id is not one GET_ID made (the bootstrap did not carry it)");
        if (a->size < 1 || a->rank < 0 || a->rank >= a->size) return tn__si_nccl_bad(op, "rank outside [0, size)");
#ifndef TENSOR_MPI
        if (a->size > 1)
            return TN__FAIL_INT("stand-in GPU: nccl over %d ranks needs the MPI build (make DIST=mpi): the stand-in carries collectives between processes over MPI", a->size);
#endif
        c = (tn__si_comm *)TN_MALLOC(sizeof *c);
        if (!c) return TN__FAIL_INT("stand-in GPU: nccl: out of memory");
        memset(c, 0, sizeof *c);
        c->rank = a->rank;
        c->size = a->size;
#ifdef TENSOR_MPI
        c->comm = MPI_COMM_NULL;
        if (a->size > 1) {
            const int rc = a->mpi_comm ? MPI_Comm_dup(*(const MPI_Comm *)a->mpi_comm, &c->comm) : MPI_ERR_COMM;
            if (rc != MPI_SUCCESS) { TN_FREE(c); return tn__si_mpi_fail("INIT (the group's MPI communicator)", rc); }
            MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
        }
#endif
        a->comm = c;
        return 0;
    }
    case TN_NCCL_DESTROY: case TN_NCCL_ABORT:
        if (!c) return 0;
#ifdef TENSOR_MPI
        if (op == TN_NCCL_DESTROY && c->nreqs) MPI_Waitall(c->nreqs, c->reqs, MPI_STATUSES_IGNORE);
        if (c->comm != MPI_COMM_NULL && (op == TN_NCCL_DESTROY || !c->nreqs)) MPI_Comm_free(&c->comm);   /* aborted with work queued: abandoned */
        TN_FREE(c->reqs);
        TN_FREE(c->post);
#endif
        TN_FREE(c);
        a->comm = NULL;
        return 0;
    case TN_NCCL_CHECK: case TN_NCCL_GROUP_START: case TN_NCCL_GROUP_END: return 0;
    case TN_NCCL_RECORD: {
        if (!c) return tn__si_nccl_bad(op, "no communicator");
        tn__si_event *e = (tn__si_event *)TN_MALLOC(sizeof *e);
        if (!e) return TN__FAIL_INT("stand-in GPU: nccl: out of memory");
        e->c = c;
        a->event = e;
        return 0;
    }
    case TN_NCCL_QUERY: {   /* the queue done up to now (a stream's order: a later event waits for more) */
        if (!a->event) return tn__si_nccl_bad(op, "no event");
#ifdef TENSOR_MPI
        tn__si_comm *q = ((tn__si_event *)a->event)->c;
        if (q->nreqs) {
            int done = 0;
            const int rc = MPI_Testall(q->nreqs, q->reqs, &done, MPI_STATUSES_IGNORE);
            if (rc != MPI_SUCCESS) return tn__si_mpi_fail("QUERY", rc);
            if (!done) return 0;
            for (int i = 0; i < q->nreqs; i++)
                if (q->post[i].buf) tn__si_avg(&q->post[i], q->size);
            q->nreqs = 0;
        }
#endif
        return 1;
    }
    case TN_NCCL_RELEASE: TN_FREE(a->event); a->event = NULL; return 0;
    default: break;
    }
    /* the collectives */
    if (!c) return tn__si_nccl_bad(op, "no communicator");
    tn_tensor *const ts[2] = {a->x, a->y};
    if (tn__si_dense("nccl", ts, 2)) return -1;
    const bool sends = op != TN_NCCL_RECV, recvs = op != TN_NCCL_SEND;
    if ((sends && !a->x) || (recvs && !a->y)) return tn__si_nccl_bad(op, "an operand the op reads or writes is NULL");
    if (a->x && a->y && a->x->dtype != a->y->dtype) return tn__si_nccl_bad(op, "x and y of different dtypes");
    tn_tensor *t = a->x ? a->x : a->y;
    if (t->dtype == TN_I16) return tn__si_nccl_bad(op, "int16 has no NCCL type");
    if (a->op < TN_DIST_SUM || a->op > TN_DIST_MAX || (t->dtype == TN_BOOL && (a->op == TN_DIST_SUM || a->op == TN_DIST_AVG || a->op == TN_DIST_PRODUCT)))
        return tn__si_nccl_bad(op, "a reduction NCCL does not have for the dtype (bools come as MAX or MIN)");
    const int64_t nx = a->x ? tn_numel(a->x) : 0, ny = a->y ? tn_numel(a->y) : 0;
    const bool sizes = op == TN_NCCL_ALL_GATHER ? ny == nx * c->size : op == TN_NCCL_REDUCE_SCATTER ? nx == ny * c->size : op == TN_NCCL_SEND || op == TN_NCCL_RECV || nx == ny;
    if (!sizes) return tn__si_nccl_bad(op, "x and y have element counts the op does not take for the communicator's size");
    if ((op == TN_NCCL_BROADCAST || op == TN_NCCL_REDUCE || op == TN_NCCL_SEND || op == TN_NCCL_RECV) && (a->peer < 0 || a->peer >= c->size))
        return tn__si_nccl_bad(op, "the root or peer is not a rank of the communicator");
    if ((op == TN_NCCL_SEND || op == TN_NCCL_RECV) && c->size == 1) return tn__si_nccl_bad(op, "a send or receive on one rank has no peer");
#ifdef TENSOR_MPI
    if (c->size > 1) return tn__si_nccl_mpi(op, a, c);
#endif
    if (a->x != a->y && tn_data_ptr(a->x) != tn_data_ptr(a->y)) memcpy(tn_data_ptr(a->y), tn_data_ptr(a->x), (size_t)nx * tn_dtype_size(t->dtype));
    return 0;
}
static int tn__si_nccl(tn_nccl_op op, tn_nccl_args *a) {
    if (!a) return TN__FAIL_INT("stand-in GPU: nccl: no arguments");
    TN__SI_NO_CAPTURE("a collective (nccl)");
    tn__si_inside++;
    const int r = tn__si_nccl_run(op, a);
    tn__si_inside--;
    return r;
}
/* CUDA IPC on the stand-in: its device memory is host memory, so a storage exported moves
   (once) into a memfd mapping (io/shared.c's, as tn_share_memory_ moves a CPU storage:
   every view moves with it), and the handle names that descriptor in this process: pid,
   descriptor and the file's inode (a recycled pid or descriptor is refused). An importer
   opens /proc/<pid>/fd/<fd> and maps the same pages, so writes on either side are seen by
   the other, as through cudaIpcOpenMemHandle; once the exporter's storage is freed or the
   exporter exits, the handle opens no more. Export before a graph capture that uses the
   storage: the capture keeps the address it saw. */
typedef struct tn__si_ipc_h { char magic[8]; int64_t pid, fd, ino, size; } tn__si_ipc_h;
static int tn__si_ipc_export_with(tn_storage *s, unsigned char *h, uint64_t *offset, uint64_t *size, void (*free_fn)(void *, size_t)) {
    TN__SI_NO_CAPTURE("an IPC export");
#if TN__HAVE_SHM && defined(__linux__)
    if (s->deleter != tn__shm_deleter) {
        if (s->deleter)
            return TN__FAIL_INT("stand-in GPU: ipc_export: the storage's memory is not the stand-in's allocation (from_blob, DLPack, a graph's): it cannot be exported");
        tn__shm *m = tn__shm_create("stand-in GPU: ipc_export", s->data, s->nbytes);
        if (!m) return -1;
        void *old = s->data;
        s->data = m->map;
        s->deleter = tn__shm_deleter;
        s->deleter_ctx = m;
        if (old) {
            if (!s->inline_data) free_fn(old, s->nbytes);
            tn__track_bytes(-(int64_t)s->nbytes);
        }
    }
    const tn__shm *m = (const tn__shm *)s->deleter_ctx;
    struct stat st;
    if (fstat(m->fd, &st) != 0) return TN__FAIL_INT("stand-in GPU: ipc_export: the storage's shared file is gone (%s)", strerror(errno));
    tn__si_ipc_h k;
    memset(&k, 0, sizeof k);
    memcpy(k.magic, "tnsiipc", 8);
    k.pid = (int64_t)getpid();
    k.fd = m->fd;
    k.ino = (int64_t)st.st_ino;
    k.size = (int64_t)m->size;
    memcpy(h, &k, sizeof k);
    *offset = (uint64_t)((char *)s->data - (char *)m->map);
    *size = (uint64_t)m->size;
    return 0;
#else
    (void)s; (void)h; (void)offset; (void)size; (void)free_fn;
    return TN__FAIL_INT("stand-in GPU: CUDA IPC on the stand-in needs Linux (memfds and /proc/<pid>/fd)");
#endif
}
static int tn__si_ipc_export(tn_storage *s, unsigned char *h, uint64_t *offset, uint64_t *size) {
    return tn__si_ipc_export_with(s, h, offset, size, tn__cpu_free);
}
static int tn__si_ipc_import(const unsigned char *h, uint64_t size, void **base) {
    TN__SI_NO_CAPTURE("an IPC import");
#if TN__HAVE_SHM && defined(__linux__)
    tn__si_ipc_h k;
    memcpy(&k, h, sizeof k);
    if (memcmp(k.magic, "tnsiipc", 8) || k.pid <= 0 || k.fd < 0 || k.size < 1)
        return TN__FAIL_INT("stand-in GPU: ipc_import: not a handle the stand-in's ipc_export made");
    if ((uint64_t)k.size != size) return TN__FAIL_INT("stand-in GPU: ipc_import: the handle's segment has %lld bytes, not %llu", (long long)k.size, (unsigned long long)size);
    if (k.pid == (int64_t)getpid())   /* as CUDA: cudaIpcOpenMemHandle maps another process's memory only */
        return TN__FAIL_INT("stand-in GPU: ipc_import: the handle is this process's own (cudaIpcOpenMemHandle maps another process's memory only): "
                            "use the tensor that was sent");
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%lld", (long long)k.pid);
    if (stat(path, &st) != 0)
        return TN__FAIL_INT("stand-in GPU: ipc_import: the process that exported the handle (pid %lld) has exited, and its device memory with it "
                            "(the producer keeps a shared CUDA tensor alive while consumers use it)", (long long)k.pid);
    snprintf(path, sizeof path, "/proc/%lld/fd/%lld", (long long)k.pid, (long long)k.fd);
    const int fd = open(path, O_RDWR);
    if (fd < 0 || fstat(fd, &st) != 0 || (int64_t)st.st_ino != k.ino || (int64_t)st.st_size < k.size) {
        const int e = errno;
        if (fd >= 0) close(fd);
        return TN__FAIL_INT("stand-in GPU: ipc_import: pid %lld no longer holds the handle's memory (%s: the exporting storage was freed, or the "
                            "process is exiting)", (long long)k.pid, fd < 0 ? strerror(e) : "another file now");
    }
    void *map = mmap(NULL, (size_t)k.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);   /* the mapping keeps the pages */
    if (map == MAP_FAILED) return TN__FAIL_INT("stand-in GPU: ipc_import: cannot map %lld bytes (%s)", (long long)k.size, strerror(errno));
    *base = map;
    return 0;
#else
    (void)h; (void)size; (void)base;
    return TN__FAIL_INT("stand-in GPU: CUDA IPC on the stand-in needs Linux (memfds and /proc/<pid>/fd)");
#endif
}
static int tn__si_ipc_close(void *base, uint64_t size) {
#if TN__HAVE_SHM && defined(__linux__)
    munmap(base, (size_t)size);
#else
    (void)base; (void)size;
#endif
    return 0;
}
/* a graph replay's elementwise chain in one call: the CPU's fused loop (the members' own CPU
   kernels, so the bits of the members run one by one here); declined as the unit declines */
static int tn__si_fused(tn_tensor *out, tn_tensor *const *ext, int next, const tn__fused_prog *prog) {
    TN__SI_DEV("fused_elementwise", out);
    const char *off_ = getenv("TN_CUDA_FUSED_ELEMENTWISE");
    if (tn__fused_declines(off_ && !strcmp(off_, "0"), out->dtype, next, prog)) return 1;
    for (int e = 0; e < next; e++) {
        TN__SI_DEV_OR_SCALAR("fused_elementwise", ext[e]);
        if (ext[e]->dtype != out->dtype)
            return TN__FAIL_INT("stand-in GPU: fused_elementwise: operand %d is %s, the result %s", e, tn_dtype_name(ext[e]->dtype), tn_dtype_name(out->dtype));
    }
    if (tn__si_capture) {
        tn_tensor *ts[1 + TN__FUSED_EXT] = {out};
        for (int e = 0; e < next; e++) ts[1 + e] = ext[e];
        tn__fused_prog *cp = (tn__fused_prog *)TN_MALLOC(sizeof *cp);
        if (!cp) return tn__si_uncapturable("out of memory recording a call");
        *cp = *prog;
        const int n0 = tn__si_capture->n;
        const int r = tn__si_rec(TN__SIC_FUSED, next, ts, 1 + next, NULL, 0, NULL, 0);
        if (tn__si_capture->n == n0 + 1) tn__si_capture->calls[n0].prog = cp;   /* the graph frees it, also when recording failed */
        else TN_FREE(cp);
        return r;
    }
    return TN__SI_RUN(tn__fused_cpu(out, ext, next, prog));
}
#undef TN__SI_DEV
#undef TN__SI_DEV_OR_SCALAR
#undef TN__SI_COMPLEX
#undef TN__SI_CAPTURE
#undef TN__SI_NO_CAPTURE
static const tn_backend tn__stand_in_backend = {
    "cuda (stand-in)", tn__si_alloc, tn__si_free, tn__si_copy, tn__si_fill, tn__si_unary, tn__si_binary, tn__si_ternary,
    tn__si_reduce, tn__si_lane, tn__si_index, tn__si_nonzero, tn__si_matmul, tn__si_random,
    tn__si_im2col, tn__si_pool, tn__si_optim, tn__si_conv2d, tn__si_batch_norm, tn__si_pool2d, tn__si_layer_norm, tn__si_cross_entropy, tn__si_attention,
    tn__si_check_index, tn__si_optim_multi, tn__si_linalg, tn__si_matmul_ep, tn__si_fft,
    tn__si_graph_begin, tn__si_graph_end, tn__si_graph_launch, tn__si_graph_free, tn__si_nccl, tn__si_graph_pool,
    tn__si_ipc_export, tn__si_ipc_import, tn__si_ipc_close, tn__si_fused,
};

/* ---- the stand-in with unreadable "device" memory (tn_debug_cuda_stand_in_unreadable) ----
   Every allocation is its own pages, PROT_NONE except while a backend call runs (a depth
   count: nested and concurrent calls open them once), so host code that reads or writes a
   CUDA tensor's data outside the backend faults where a GPU would hand it garbage. */
#ifdef TN__HAVE_MMAP
typedef struct tn__si_region { void *p; size_t len; } tn__si_region;
static tn__si_region *tn__si_regions;
static size_t tn__si_nregions, tn__si_cap;
static int tn__si_depth;
static char tn__si_lock;
static void tn__si_acquire(void) {
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_test_and_set(&tn__si_lock, __ATOMIC_ACQUIRE)) { }
#endif
}
static void tn__si_release(void) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_clear(&tn__si_lock, __ATOMIC_RELEASE);
#endif
}
static void tn__si_protect_all(int prot) {
    for (size_t i = 0; i < tn__si_nregions; i++) mprotect(tn__si_regions[i].p, tn__si_regions[i].len, prot);
}
static void tn__si_open(void) { tn__si_acquire(); if (tn__si_depth++ == 0) tn__si_protect_all(PROT_READ | PROT_WRITE); tn__si_release(); }
static void tn__si_close(void) { tn__si_acquire(); if (--tn__si_depth == 0) tn__si_protect_all(PROT_NONE); tn__si_release(); }
static size_t tn__si_pages(size_t nbytes) {
    const long pg = sysconf(_SC_PAGESIZE);
    const size_t p = pg > 0 ? (size_t)pg : 4096;
    return nbytes / p * p + p;   /* at least one page; the spare tail traps nothing, as a GPU's rounding */
}
static void *tn__siu_raw_alloc(size_t nbytes) {
    const size_t len = tn__si_pages(nbytes);
#ifdef MAP_ANONYMOUS
    void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#else   /* strict C11 hides MAP_ANONYMOUS: private pages of /dev/zero are the same */
    int fd = open("/dev/zero", O_RDWR);
    void *p = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_NONE, MAP_PRIVATE, fd, 0);
    if (fd >= 0) close(fd);
#endif
    if (p == MAP_FAILED) return NULL;
    tn__si_acquire();
    if (tn__si_nregions == tn__si_cap) {
        size_t cap = tn__si_cap ? 2 * tn__si_cap : 256;
        tn__si_region *r = (tn__si_region *)TN_REALLOC(tn__si_regions, cap * sizeof *r);
        if (!r) { tn__si_release(); munmap(p, len); return NULL; }
        tn__si_regions = r;
        tn__si_cap = cap;
    }
    tn__si_regions[tn__si_nregions].p = p;
    tn__si_regions[tn__si_nregions++].len = len;
    if (tn__si_depth > 0) mprotect(p, len, PROT_READ | PROT_WRITE);
    tn__si_release();
    return p;
}
static void tn__siu_raw_free(void *p, size_t nbytes) {
    if (!p) return;
    tn__si_acquire();
    for (size_t i = 0; i < tn__si_nregions; i++)
        if (tn__si_regions[i].p == p) { tn__si_regions[i] = tn__si_regions[--tn__si_nregions]; break; }
    tn__si_release();
    munmap(p, tn__si_pages(nbytes));
}
static void *tn__siu_alloc(size_t nbytes) { return tn__si_alloc_with(nbytes, tn__siu_raw_alloc, tn__siu_raw_free); }
static void tn__siu_free(void *p, size_t nbytes) { tn__si_free_with(p, nbytes, tn__siu_raw_free); }
/* each entry of the table, between opening and closing the device memory */
#define TN__SIU(ret, name, params, args) static ret tn__siu_##name params { tn__si_open(); ret r_ = tn__si_##name args; tn__si_close(); return r_; }
TN__SIU(int, copy, (tn_tensor *d, tn_tensor *s), (d, s))
TN__SIU(int, fill, (tn_tensor *t, double v), (t, v))
TN__SIU(int, unary, (tn_unary_op op, tn_tensor *o, tn_tensor *x, const double *p), (op, o, x, p))
TN__SIU(int, binary, (tn_binary_op op, tn_tensor *o, tn_tensor *a, tn_tensor *b, double al), (op, o, a, b, al))
TN__SIU(int, ternary, (tn_ternary_op op, tn_tensor *o, tn_tensor *a, tn_tensor *b, tn_tensor *c, double v), (op, o, a, b, c, v))
TN__SIU(int, reduce, (tn_reduce_op op, tn_tensor *o, tn_tensor *x), (op, o, x))
TN__SIU(int, lane, (tn_lane_op op, tn_tensor *o, tn_tensor *o1, tn_tensor *x, int64_t d, int f), (op, o, o1, x, d, f))
TN__SIU(int, index, (tn_index_mode m, tn_tensor *d, tn_tensor *s, tn_tensor *const *idx, const int64_t *is, int k), (m, d, s, idx, is, k))
TN__SIU(tn_tensor *, nonzero, (tn_tensor *x), (x))
TN__SIU(int, matmul, (tn_tensor *c, tn_tensor *a, tn_tensor *b, double al, double be), (c, a, b, al, be))
TN__SIU(int, random, (tn_random_op op, tn_tensor *o, uint64_t s, uint64_t off, double a, double b, int64_t l, uint64_t r), (op, o, s, off, a, b, l, r))
TN__SIU(int, im2col, (int f, tn_tensor *c, tn_tensor *i, const int64_t *g), (f, c, i, g))
TN__SIU(int, pool, (tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw),
        (idx, x, hs, he, ws, we, dh, dw))
TN__SIU(int, optim, (const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *st), (k, p, g, st))
TN__SIU(int, optim_multi, (const tn__optk *k, int n, tn_tensor *const *p, tn_tensor *const *g, tn_tensor *const *s), (k, n, p, g, s))
TN__SIU(int, conv2d, (int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *g), (mode, x, w, y, g))
TN__SIU(int, batch_norm, (int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb, double eps),
        (mode, x, w, b, st, y, gx, gw, gb, eps))
TN__SIU(int, pool2d, (tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *g), (x, y, gy, gx, g))
TN__SIU(int, layer_norm, (int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb, double eps),
        (mode, x, w, b, st, y, gx, gw, gb, eps))
TN__SIU(int, cross_entropy, (int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx), (mode, x, t, wr, lse, out, gx))
TN__SIU(int, attention, (tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *m, tn_tensor *o, tn_tensor *l, tn_tensor *go, tn_tensor *gq, tn_tensor *gk, tn_tensor *gv, double sc, bool ca),
        (q, k, v, m, o, l, go, gq, gk, gv, sc, ca))
TN__SIU(int, check_index, (tn_tensor *o, tn_tensor *idx, int64_t size, int flags, int64_t skip, int64_t *err), (o, idx, size, flags, skip, err))
TN__SIU(int, linalg, (tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag), (op, a, b, c, p, info, flag))
TN__SIU(int, matmul_ep, (tn_tensor *c, tn_tensor *a, tn_tensor *b, tn_tensor *bias, double al, int act), (c, a, b, bias, al, act))
TN__SIU(int, fft, (int kind, tn_tensor *y, tn_tensor *x, int rank, const int64_t *n, double scale), (kind, y, x, rank, n, scale))
TN__SIU(int, nccl, (tn_nccl_op op, tn_nccl_args *a), (op, a))
TN__SIU(int, fused, (tn_tensor *o, tn_tensor *const *ext, int next, const tn__fused_prog *p), (o, ext, next, p))
#undef TN__SIU
/* the export copies device memory (open) and frees the old pages as this mode frees them;
   what is imported is a plain shared mapping (not guarded) */
static int tn__siu_ipc_export(tn_storage *s, unsigned char *h, uint64_t *offset, uint64_t *size) {
    tn__si_open();
    const int r = tn__si_ipc_export_with(s, h, offset, size, tn__siu_free);
    tn__si_close();
    return r;
}
static const tn_backend tn__stand_in_unreadable_backend = {
    "cuda (stand-in, unreadable memory)", tn__siu_alloc, tn__siu_free, tn__siu_copy, tn__siu_fill, tn__siu_unary, tn__siu_binary, tn__siu_ternary,
    tn__siu_reduce, tn__siu_lane, tn__siu_index, tn__siu_nonzero, tn__siu_matmul, tn__siu_random,
    tn__siu_im2col, tn__siu_pool, tn__siu_optim, tn__siu_conv2d, tn__siu_batch_norm, tn__siu_pool2d, tn__siu_layer_norm, tn__siu_cross_entropy, tn__siu_attention,
    tn__siu_check_index, tn__siu_optim_multi, tn__siu_linalg, tn__siu_matmul_ep, tn__siu_fft,
    tn__si_graph_begin, tn__si_graph_end, tn__si_graph_launch, tn__si_graph_free, tn__siu_nccl, tn__si_graph_pool,
    tn__siu_ipc_export, tn__si_ipc_import, tn__si_ipc_close, tn__siu_fused,
};
TNDEF void tn_debug_cuda_stand_in_unreadable(void) { tn_register_backend(TN_CUDA, &tn__stand_in_unreadable_backend); }
#else
TNDEF void tn_debug_cuda_stand_in_unreadable(void) { tn_register_backend(TN_CUDA, &tn__stand_in_backend); }   /* no mmap: the plain stand-in */
#endif
/* whether a stand-in (either mode) serves TN_CUDA: then it counts transfers and syncs */
static bool tn__stand_in_registered(void) {
    const tn_backend *b = tn__backends[TN_CUDA];
#ifdef TN__HAVE_MMAP
    if (b == &tn__stand_in_unreadable_backend) return true;
#endif
    return b == &tn__stand_in_backend;
}
TNDEF void tn_debug_cuda_stand_in(void) {
    const char *e = getenv("TN_STAND_IN_UNREADABLE");
    if (e && *e && strcmp(e, "0")) tn_debug_cuda_stand_in_unreadable();
    else tn_register_backend(TN_CUDA, &tn__stand_in_backend);
}
