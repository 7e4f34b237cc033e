/* ---- CUDA graphs of eager code (torch.cuda.CUDAGraph, torch.cuda.graph) ----
   A capture on this thread: the backend's graph_pool BEGIN (graph_begin with the thread's
   allocations served from a capture-private pool) until graph_end. The header refuses,
   while capturing, what a capture cannot hold (a copy between host and device, a
   synchronisation, an optimizer whose scalars change per step): the call fails with a
   message naming it, and so does tn_cuda_graph_end, with the state restored and the
   capture's pool released. The graph holds a reference to its pool until freed.
   Device-side index checks inside a capture write to slots of the graph's own (reserved at
   begin, freed with the graph), scanned at the synchronisation after each replay (cuda.c).
   Random draws inside take the default generator's counters as PyTorch's graph-safe
   Philox: the capture fixes which counters each draw takes relative to a device-resident
   {seed, offset} of the graph's (rng), and each replay first writes the generator's seed
   and current offset there and advances the generator by what the capture's draws took,
   so replays draw fresh numbers and capture + N replays consume the generator as N eager
   steps. */
struct tn_cuda_graph {
    const tn_backend *be;
    void *graph, *pool;
    tn__dc_set *checks;    /* the slots of its index checks */
    tn_tensor *rng;        /* int64 [4]: seed and offset as 32-bit halves (lo, hi), read by its draws (outside its pool) */
    uint64_t rng_used;     /* the counters its draws take per replay */
};
struct tn_cuda_graph_pool { const tn_backend *be; void *pool; };
typedef struct tn__cg_state {
    const tn_backend *be;   /* NULL: not capturing */
    void *pool;             /* the header's reference, passed to the graph */
    bool failed;
    char why[200];
    tn__dc_set *checks;     /* the graph's check slots (tn__dc_capture while capturing) */
    tn_tensor *rng;         /* made before capturing, handed to the backend at the first draw */
    bool rng_given;
    uint64_t rng_used;
} tn__cg_state;
static TN__TLS tn__cg_state tn__cg;
TNDEF bool tn_cuda_graph_capturing(void) { return tn__cg.be != NULL; }
/* what cannot be captured: the call fails and the capture is spoiled (as CUDA invalidates one) */
static int tn__cuda_graph_refuse(const char *fn, const char *what) {
    if (!tn__cg.failed) {
        tn__cg.failed = true;
        snprintf(tn__cg.why, sizeof tn__cg.why, "%s (%s)", what, fn);
    }
    return TN__FAIL_INT("%s: %s inside a CUDA-graph capture: the capture cannot hold it (do it before capture_begin or after capture_end)", fn, what);
}
static const tn_backend *tn__cg_backend(const char *fn) {
    const tn_backend *be = tn__backend(TN_CUDA);
    if (!be) {
        tn__error("%s: CUDA graphs capture GPU work, and there is no GPU: %s", fn, tn_cuda_unavailable_reason());
        return NULL;
    }
    if (!be->graph_pool || !be->graph_begin) {
        tn__error("%s: the CUDA backend (%s) cannot capture graphs", fn, be->name);
        return NULL;
    }
    return be;
}
TNDEF tn_cuda_graph_pool *tn_cuda_graph_pool_handle(void) {
    const tn_backend *be = tn__cg_backend("tn_cuda_graph_pool_handle");
    if (!be) return NULL;
    tn_cuda_graph_pool *h = (tn_cuda_graph_pool *)TN_MALLOC(sizeof *h);
    if (!h) return (tn__error("tn_cuda_graph_pool_handle: out of memory"), (tn_cuda_graph_pool *)NULL);
    h->be = be;
    h->pool = NULL;
    if (be->graph_pool(TN__GPOOL_NEW, &h->pool)) { TN_FREE(h); return NULL; }
    return h;
}
TNDEF void tn_cuda_graph_pool_release(tn_cuda_graph_pool *pool) {
    if (!pool) return;
    pool->be->graph_pool(TN__GPOOL_RELEASE, &pool->pool);
    TN_FREE(pool);
}
TNDEF int tn_cuda_graph_begin(tn_cuda_graph_pool *pool) {
    const char *fn = "tn_cuda_graph_begin";
    if (tn__cg.be) return TN__FAIL_INT("%s: this thread is capturing already (capture_begin twice, or a capture inside torch.cuda.graph)", fn);
    const tn_backend *be = tn__cg_backend(fn);
    if (!be) return -1;
    if (pool && pool->be != be) return TN__FAIL_INT("%s: the pool belongs to another CUDA backend (%s)", fn, pool->be->name);
    /* made before capturing: pinned memory is no stream work, and the {seed, offset} the
       replays write before launching must be no block the capture's pool hands its calls */
    tn__dc_set *checks = tn__dc_set_new();
    tn_tensor *rng = checks ? tn__new(TN_I64, TN_CUDA, TN_SHAPE(4)) : NULL;
    if (!rng) { tn__dc_set_free(checks); return -1; }
    void *p = pool ? pool->pool : NULL;
    if (pool ? be->graph_pool(TN__GPOOL_RETAIN, &p) : be->graph_pool(TN__GPOOL_NEW, &p)) { tn_release(rng); tn__dc_set_free(checks); return -1; }
    if (be->graph_pool(TN__GPOOL_BEGIN, &p)) {
        be->graph_pool(TN__GPOOL_RELEASE, &p);
        tn_release(rng);
        tn__dc_set_free(checks);
        return -1;
    }
    memset(&tn__cg, 0, sizeof tn__cg);
    tn__cg.be = be;
    tn__cg.pool = p;
    tn__cg.checks = tn__dc_capture = checks;
    tn__cg.rng = rng;
    return 0;
}
/* A random draw of n counters from g inside this thread's capture: *off <- its first counter
   relative to the graph's per-replay offset; the backend reads the graph's {seed, offset}
   (handed to it with graph_pool's RNG at the first draw). 0, or -1 with the capture spoiled. */
static int tn__cg_random(tn_generator *g, int64_t n, uint64_t *off) {
    if (g && g != tn_default_generator())
        return tn__cuda_graph_refuse("random", "a draw from a generator other than the default one (a capture draws from the default generator's counters, as PyTorch's)");
    if (!tn__cg.rng_given) {
        void *h = tn__cg.rng;
        if (tn__cg.be->graph_pool(TN__GPOOL_RNG, &h)) return tn__cuda_graph_refuse("random", "a random draw (the backend cannot read its counters from the device)");
        tn__cg.rng_given = true;
    }
    *off = tn__cg.rng_used;
    tn__cg.rng_used += (uint64_t)n;
    return 0;
}
TNDEF tn_cuda_graph *tn_cuda_graph_end(void) {
    const char *fn = "tn_cuda_graph_end";
    if (!tn__cg.be) return (tn__error("%s without tn_cuda_graph_begin (capture_end before capture_begin)", fn), (tn_cuda_graph *)NULL);
    tn__cg_state st = tn__cg;
    memset(&tn__cg, 0, sizeof tn__cg);   /* not capturing from here on, whatever happens */
    tn__dc_capture = NULL;
    void *graph = NULL;
    const int rc = st.be->graph_end(&graph);
    if (st.failed || rc || !graph) {
        if (graph) st.be->graph_free(graph);
        tn_release(st.rng);
        tn__dc_set_free(st.checks);   /* never replayed: nothing writes them */
        st.be->graph_pool(TN__GPOOL_RELEASE, &st.pool);
        if (st.failed) return (tn__error("%s: the capture failed: %s inside it", fn, st.why), (tn_cuda_graph *)NULL);
        return rc ? (tn_cuda_graph *)NULL : (tn__error("%s: the capture failed", fn), (tn_cuda_graph *)NULL);
    }
    tn_cuda_graph *g = (tn_cuda_graph *)TN_MALLOC(sizeof *g);
    if (!g) {
        st.be->graph_free(graph);
        tn_release(st.rng);
        tn__dc_set_free(st.checks);
        st.be->graph_pool(TN__GPOOL_RELEASE, &st.pool);
        return (tn__error("%s: out of memory", fn), (tn_cuda_graph *)NULL);
    }
    g->be = st.be;
    g->graph = graph;
    g->pool = st.pool;
    g->checks = st.checks;
    g->rng = st.rng;   /* kept while the graph lives (a replay with no draws writes nothing there) */
    g->rng_used = st.rng_used;
    return g;
}
TNDEF int tn_cuda_graph_replay(tn_cuda_graph *g) {
    if (!g) return TN__FAIL_INT("tn_cuda_graph_replay: no graph (NULL: the capture failed, or the graph was reset)");
    if (tn__cg.be) return TN__FAIL_INT("tn_cuda_graph_replay inside a capture (replay after capture_end)");
    if (tn__dc_before_replay(g->checks)) return -1;
    if (g->rng_used) {   /* the generator's seed and offset for this replay's draws (fills: no copy from the host), the counters taken */
        tn_generator *gen = tn_default_generator();
        const uint64_t seed = gen->seed, off = tn__gen_take(gen, (int64_t)g->rng_used);
        const uint64_t v[4] = {seed & 0xffffffffu, seed >> 32, off & 0xffffffffu, off >> 32};   /* halves: exact as fill's double */
        for (int k = 0; k < 4; k++) {
            tn_tensor e = tn__shallow(g->rng);
            e.offset += k;
            e.shape[0] = 1;
            if (g->be->fill(&e, (double)v[k])) return -1;
        }
    }
    if (g->be->graph_launch(g->graph)) return -1;
    tn__dc_replayed(g->checks);
    return 0;
}
TNDEF tn_cuda_graph_pool *tn_cuda_graph_pool_of(tn_cuda_graph *g) {
    if (!g) return (tn__error("tn_cuda_graph_pool_of: no graph"), (tn_cuda_graph_pool *)NULL);
    tn_cuda_graph_pool *h = (tn_cuda_graph_pool *)TN_MALLOC(sizeof *h);
    if (!h) return (tn__error("tn_cuda_graph_pool_of: out of memory"), (tn_cuda_graph_pool *)NULL);
    h->be = g->be;
    h->pool = g->pool;
    g->be->graph_pool(TN__GPOOL_RETAIN, &h->pool);
    return h;
}
TNDEF void tn_cuda_graph_free(tn_cuda_graph *g) {
    if (!g) return;
    g->be->graph_free(g->graph);   /* the graph first: its memory is the pool's */
    tn_release(g->rng);
    tn__dc_set_release(g->checks);
    g->be->graph_pool(TN__GPOOL_RELEASE, &g->pool);
    TN_FREE(g);
}
