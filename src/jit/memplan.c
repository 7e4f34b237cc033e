/* The static memory plan of a graph replay (tn_graph_run under no_grad, on the CPU or on
   the GPU: the storages of the inputs' device; the arena is that device's memory).

   A replay's nodes make the same storages in the same order on every run with the same
   input shapes: the node's result and the op's own temporaries (a contiguous copy, im2col's
   columns). One run records them (the planning run: each storage's node, size and how long
   it lives: a temporary dies in its node, a result lives to the last node reading it or a
   view of it); the plan then gives each an offset in one arena, first fit by decreasing
   size among those whose lifetimes overlap, and later runs serve every storage from the
   arena at its offset: a steady replay allocates no storage (tn_memory_allocations).

   Safety does not rest on the plan being right. A storage the run makes differently (other
   size, another count: an op took another path) is allocated as usual, and serving stops
   for the rest of that node. A served storage still alive after its planned end (held by
   something the plan did not foresee) is moved out of the arena (its data copied to a
   storage of its own) before anything can reuse its bytes, and the plan is dropped. Outputs
   have slots of their own that no other storage shares: a run serves an output's slot only
   when the caller has released the previous run's output; an output the caller still holds
   is never overwritten (the next run allocates that output as usual). The arena is
   refcounted by every storage it serves, so a tensor outliving its graph stays valid.

   On the GPU a steady plan is then captured as a CUDA graph (tn__gcap, trace.c): the run
   is recorded by the backend's graph entries with the arena's addresses baked in, and later
   runs copy their inputs into the capture's input buffers and launch it. A storage of the
   device allocated as usual while capturing (the plan did not foresee it) fails the
   capture: its memory would be another's after the run. */

typedef struct tn__arena tn__arena;
typedef struct tn__aslot {      /* one planned storage's place in the arena */
    tn__arena *a;
    tn_storage *s;              /* the storage it serves now (NULL: free) */
    int64_t live;               /* atomic: 1 while s holds the slot */
} tn__aslot;
struct tn__arena {
    int64_t refcount;           /* the plan's, and one per storage served (atomic) */
    tn_device device;
    char *mem;
    size_t bytes;
    int nslots;
    tn__aslot *slots;           /* one per record */
};
typedef struct tn__mrec {       /* one storage a node made in the planning run */
    int node;
    int64_t nbytes;
    int end;                    /* the last node during which it lives (the node count: to the run's end) */
    bool output;                /* a graph output's: a slot of its own */
    bool plannable;             /* false: it outlived its node without being the result (a cache): not served */
    int64_t offset;
    tn_storage *s;              /* in the planning run: the storage (retained) */
} tn__mrec;
enum { TN__MH_RECORD, TN__MH_SERVE };
typedef struct tn__gcap tn__gcap;   /* a captured replay (trace.c) */
static void tn__gcap_free(tn__gcap *c);
struct tn__mhook {
    int mode;
    tn_device device;           /* whose storages it plans */
    tn__mrec *recs;
    int nrecs, cap;
    int *first;                 /* nnodes + 1: node k's records are [first[k], first[k + 1]) */
    int nnodes;
    int node, seq;              /* the node running, its storages so far */
    bool off;                   /* this node made a storage the plan does not have: serving stopped for it */
    int64_t diverged;           /* this run's storages made differently from the plan, or moved out of the arena */
    tn__aslot *pending;         /* served by take, its storage given to note */
    int *vrec;                  /* the planning run: per graph value, the record of its storage (-1: none) */
    tn__arena *arena;
    int64_t batch;              /* the dynamic batch it was planned for */
    int64_t nserved;            /* runs served as planned (a capture waits for one) */
    bool capturing, capfail;    /* a capture runs; it allocated a storage of the device (failed) */
    bool capfailed;             /* a capture of this plan failed: its runs stay uncaptured */
    tn__gcap *gcap;             /* the captured replay, or NULL */
};

static void tn__arena_release(tn__arena *a) {
    if (!a || TN__ATOMIC_ADD(&a->refcount, -1) != 0) return;
    if (a->mem) { tn__backend(a->device)->free(a->mem, a->bytes); tn__track_bytes(-(int64_t)a->bytes); }
    TN_FREE(a->slots);
    TN_FREE(a);
}
/* A served storage's deleter: the slot is free again. */
static void tn__aslot_free(void *data, void *ctx) {
    (void)data;
    tn__aslot *sl = (tn__aslot *)ctx;
    tn__arena *a = sl->a;
    sl->s = NULL;
    TN__ATOMIC_ADD(&sl->live, -1);
    tn__arena_release(a);
}
/* A served storage that must outlive its planned end: its data moves to a block of its own
   (every tensor on it reads through the storage, so none notices). -1 when out of memory
   (the storage then stays, and the plan is dropped by the caller). */
static int tn__aslot_evacuate(tn__aslot *sl) {
    tn_storage *s = sl->s;
    if (!s || !TN__ATOMIC_LOAD(&sl->live)) return 0;
    if (s->device != TN_CPU) {   /* the device's copy, bytes as uint8: a storage of its own takes the data over */
        const int64_t nb = (int64_t)s->nbytes;
        tn_tensor *nt = tn__new(TN_U8, s->device, &nb, 1);
        if (!nt) return -1;
        tn_tensor src = tn__shallow(nt);
        src.storage = s;
        if (nb && tn__backend(s->device)->copy(nt, &src)) { tn_release(nt); return -1; }
        s->data = nt->storage->data;   /* its bytes are counted already (tn__new), now as s's */
        nt->storage->data = NULL;
        tn_release(nt);
        s->deleter = NULL;
        s->deleter_ctx = NULL;
        tn__aslot_free(NULL, sl);
        return 0;
    }
    void *d = tn__backend(TN_CPU)->alloc(s->nbytes ? s->nbytes : 1);
    if (!d) return -1;
    TN__ATOMIC_ADD(&tn__storage_allocs, 1);
    if (s->nbytes) memcpy(d, s->data, s->nbytes);
    s->data = d;
    s->deleter = NULL;
    s->deleter_ctx = NULL;
    tn__track_bytes((int64_t)s->nbytes);
    tn__aslot_free(NULL, sl);
    return 0;
}

static void tn__mhook_free(tn__mhook *h) {
    if (!h) return;
    tn__gcap_free(h->gcap);
    for (int i = 0; i < h->nrecs; i++) if (h->recs[i].s) tn__storage_release(h->recs[i].s);
    tn__arena_release(h->arena);
    TN_FREE(h->recs);
    TN_FREE(h->first);
    TN_FREE(h->vrec);
    TN_FREE(h);
}
static tn__mhook *tn__mhook_new(int nnodes, int nvals, int64_t batch, tn_device device) {
    tn__mhook *h = (tn__mhook *)TN_MALLOC(sizeof *h);
    if (!h) return NULL;
    memset(h, 0, sizeof *h);
    h->first = (int *)TN_MALLOC((size_t)(nnodes + 1) * sizeof(int));
    h->vrec = (int *)TN_MALLOC((size_t)(nvals + 1) * sizeof(int));
    if (!h->first || !h->vrec) { TN_FREE(h->first); TN_FREE(h->vrec); TN_FREE(h); return NULL; }
    for (int k = 0; k <= nnodes; k++) h->first[k] = 0;
    for (int v = 0; v <= nvals; v++) h->vrec[v] = -1;
    h->nnodes = nnodes;
    h->mode = TN__MH_RECORD;
    h->batch = batch;
    h->device = device;
    return h;
}
/* Before node k runs. */
static void tn__mhook_node(tn__mhook *h, int k) {
    h->node = k;
    h->seq = 0;
    h->off = false;
    if (h->mode == TN__MH_RECORD) h->first[k] = h->nrecs;
}

static void *tn__mhook_take(tn__mhook *h, tn_device device, size_t nbytes, void (**deleter)(void *, void *), void **ctx) {
    if (device != h->device || h->mode != TN__MH_SERVE || h->node < 0 || h->node >= h->nnodes) return NULL;
    const int i = h->first[h->node] + h->seq++;
    if (h->off) return NULL;
    if (i >= h->first[h->node + 1] || (size_t)h->recs[i].nbytes != nbytes) {   /* not the storage planned: as usual from here */
        h->off = true;
        h->diverged++;
        return NULL;
    }
    const tn__mrec *r = &h->recs[i];
    tn__aslot *sl = &h->arena->slots[i];
    if (!r->plannable || TN__ATOMIC_LOAD(&sl->live)) return NULL;   /* an output the caller still holds: never overwritten */
    TN__ATOMIC_ADD(&sl->live, 1);
    TN__ATOMIC_ADD(&h->arena->refcount, 1);
    *deleter = tn__aslot_free;
    *ctx = sl;
    h->pending = sl;
    return h->arena->mem + r->offset;
}
static void tn__mhook_alloc(tn__mhook *h, tn_device device) {
    if (h->capturing && device == h->device) h->capfail = true;
}
static void tn__mhook_note(tn__mhook *h, tn_storage *s) {
    if (s->device != h->device) return;   /* a host scalar of a GPU run: not planned */
    if (h->mode == TN__MH_SERVE) {
        if (h->pending && s->deleter_ctx == h->pending) h->pending->s = s;
        h->pending = NULL;
        return;
    }
    if (h->node < 0 || h->node >= h->nnodes) return;
    if (h->nrecs == h->cap) {
        int cap = h->cap ? 2 * h->cap : 64;
        tn__mrec *r = (tn__mrec *)TN_REALLOC(h->recs, (size_t)cap * sizeof *r);
        if (!r) { h->diverged++; return; }   /* the plan cannot be made: dropped after the run */
        h->recs = r;
        h->cap = cap;
    }
    tn__mrec *r = &h->recs[h->nrecs++];
    memset(r, 0, sizeof *r);
    r->node = h->node;
    r->nbytes = (int64_t)s->nbytes;
    r->end = h->node;
    r->plannable = true;
    r->s = s;
    TN__ATOMIC_ADD(&s->refcount, 1);   /* kept until the plan is made, to see how long it lives */
}
/* The planning run, node k's result (value out, storage st) just kept: its record, made by
   this node or (a view) by the node of one of its inputs (live storages only are compared,
   so no address of a freed storage can match). -1: none (a view of an input or constant). */
static int tn__mhook_result(tn__mhook *h, int k, int out, const tn_storage *st, const int *ins, int nin, tn_tensor *const *v) {
    int ri = -1;
    for (int i = h->first[k]; i < h->nrecs && ri < 0 && st; i++) if (h->recs[i].s == st) ri = i;
    for (int i = 0; i < nin && ri < 0 && st; i++) if (ins[i] >= 0 && v[ins[i]] && v[ins[i]]->storage == st) ri = h->vrec[ins[i]];
    return h->vrec[out] = ri;
}
/* The planning run, after node k's inputs were released: node k's storages that still
   live are its result's or a cache (never served); the others were temporaries. Our
   references go. */
static void tn__mhook_after_record(tn__mhook *h, int k, const tn_storage *result) {
    h->first[k + 1] = h->nrecs;
    for (int i = h->first[k]; i < h->nrecs; i++) {
        tn__mrec *r = &h->recs[i];
        if (TN__ATOMIC_LOAD(&r->s->refcount) > 1 && r->s != result) r->plannable = false;
        tn__storage_release(r->s);
        r->s = NULL;
    }
}
/* Offsets: by decreasing size, each at the lowest 64-byte-aligned offset clear of the
   placed storages whose lifetimes overlap its own (outputs overlap every other); then the
   arena. 0, or -1 (out of memory: no plan). */
static int tn__mhook_place(tn__mhook *h) {
    for (int k = 0; k < h->nnodes; k++) if (h->first[k + 1] < h->first[k]) h->first[k + 1] = h->first[k];
    int n = h->nrecs, *ord = (int *)TN_MALLOC((size_t)(n + 1) * sizeof(int)), *placed = (int *)TN_MALLOC((size_t)(n + 1) * sizeof(int));
    tn__arena *a = (tn__arena *)TN_MALLOC(sizeof *a);
    tn__aslot *slots = (tn__aslot *)TN_MALLOC((size_t)(n + 1) * sizeof *slots);
    if (!ord || !placed || !a || !slots) { TN_FREE(ord); TN_FREE(placed); TN_FREE(a); TN_FREE(slots); return -1; }
    int m = 0;
    for (int i = 0; i < n; i++) if (h->recs[i].plannable) ord[m++] = i;
    for (int i = 1; i < m; i++) {   /* insertion sort by size, largest first (stable) */
        int x = ord[i], j = i - 1;
        while (j >= 0 && h->recs[ord[j]].nbytes < h->recs[x].nbytes) { ord[j + 1] = ord[j]; j--; }
        ord[j + 1] = x;
    }
    int64_t total = 0;
    int np = 0;
    bool ok = true;
    for (int q = 0; q < m && ok; q++) {
        tn__mrec *r = &h->recs[ord[q]];
        const int64_t size = (r->nbytes + 63) / 64 * 64;
        int64_t off = 0;
        for (bool moved = true; moved;) {   /* the lowest offset clear of every overlapping placed block */
            moved = false;
            for (int p = 0; p < np; p++) {
                const tn__mrec *o = &h->recs[placed[p]];
                const bool overlap = r->output || o->output || (r->node <= o->end && o->node <= r->end);
                const int64_t osize = (o->nbytes + 63) / 64 * 64;
                if (overlap && off < o->offset + osize && o->offset < off + size) { off = o->offset + osize; moved = true; }
            }
        }
        r->offset = off;
        placed[np++] = ord[q];
        ok = tn__add_ok(off, size, &off);
        if (ok && off > total) total = off;
    }
    TN_FREE(ord);
    TN_FREE(placed);
    if (!ok) { TN_FREE(a); TN_FREE(slots); return -1; }
    a->mem = NULL;   /* allocated by the first run that serves (tn__mhook_ready) */
    a->refcount = 1;
    a->device = h->device;
    a->bytes = (size_t)total;
    a->nslots = n;
    a->slots = slots;
    for (int i = 0; i < n; i++) { slots[i].a = a; slots[i].s = NULL; slots[i].live = 0; }
    h->arena = a;
    h->mode = TN__MH_SERVE;
    return 0;
}
/* Whether every output slot is free (the caller released the last outputs it served): a
   capture waits for that, or it would allocate the outputs inside it and fail. */
static bool tn__mhook_outputs_free(const tn__mhook *h) {
    for (int i = 0; i < h->nrecs; i++)
        if (h->recs[i].output && TN__ATOMIC_LOAD(&h->arena->slots[i].live)) return false;
    return true;
}
/* Before a serving run: the arena's memory. -1 when out of memory (the run goes unplanned). */
static int tn__mhook_ready(tn__mhook *h) {
    tn__arena *a = h->arena;
    if (a->mem || a->bytes == 0) return 0;
    if (!(a->mem = (char *)tn__backend(a->device)->alloc(a->bytes))) return -1;
    TN__ATOMIC_ADD(&tn__storage_allocs, 1);
    tn__track_bytes((int64_t)a->bytes);
    return 0;
}
/* The serving runs, after node k (its inputs released): every served storage planned to
   end by k must be free; one still held moves out of the arena. */
static void tn__mhook_after_serve(tn__mhook *h, int k) {
    for (int i = 0; i < h->nrecs; i++) {
        const tn__mrec *r = &h->recs[i];
        tn__aslot *sl = &h->arena->slots[i];
        if (!r->output && r->end <= k && TN__ATOMIC_LOAD(&sl->live) && sl->s) {
            h->diverged++;
            if (tn__aslot_evacuate(sl)) h->diverged++;
        }
    }
}
