/* ---- the strided iterator ------------------------------------------------
   Every CPU kernel walks its operands with this: operands are aligned to one
   iteration shape (broadcast dims get stride 0), size-1 dims are dropped and
   neighbouring dims that are contiguous for every operand are merged, so the
   inner loop is as long as possible. The loop function sees the inner dimension
   only: n elements with one byte stride per operand, and can take a fast path
   when the strides equal the element sizes. */
#define TN__MAX_OPS 12
typedef void (*tn__loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);
typedef struct tn__iter {
    int ndim, nops;
    int64_t shape[TN_MAX_DIMS];                    /* [0] outermost */
    int64_t strides[TN__MAX_OPS][TN_MAX_DIMS];     /* bytes */
    char *data[TN__MAX_OPS];
} tn__iter;

static void tn__iter_init(tn__iter *it, const int64_t *shape, int ndim) {
    it->nops = 0;   /* no memset: tn__iter_add fills what is read (it is ~1 KB; tiny ops felt it) */
    it->ndim = ndim;
    for (int i = 0; i < ndim; i++) it->shape[i] = shape[i];
}

/* Add an operand whose shape broadcasts to the iteration shape (aligned right). */
static void tn__iter_add(tn__iter *it, tn_tensor *t) {
    int k = it->nops++;
    int64_t es = (int64_t)tn_dtype_size(t->dtype);
    TN_ASSERT(k < TN__MAX_OPS && t->ndim <= it->ndim);
    it->data[k] = (char *)tn_data_ptr(t);
    for (int i = 0; i < it->ndim; i++) {
        int j = i - (it->ndim - t->ndim);
        it->strides[k][i] = (j < 0 || t->shape[j] == 1) ? 0 : tn__mul_or(t->strides[j], es, 0);   /* 0: an empty tensor's, never used */
    }
}

static void tn__iter_coalesce(tn__iter *it) {
    int nd = 0;
    for (int i = 0; i < it->ndim; i++) { /* drop size-1 dims */
        if (it->shape[i] == 1) continue;
        it->shape[nd] = it->shape[i];
        for (int k = 0; k < it->nops; k++) it->strides[k][nd] = it->strides[k][i];
        nd++;
    }
    it->ndim = nd;
    if (nd < 2) return;
    int out = nd - 1; /* merge from the inside out */
    for (int i = nd - 2; i >= 0; i--) {
        bool ok = true;
        int64_t next;
        for (int k = 0; k < it->nops && ok; k++) ok = tn__mul_ok(it->strides[k][out], it->shape[out], &next) && it->strides[k][i] == next;
        if (ok) {
            it->shape[out] = tn__mul_or(it->shape[out], it->shape[i], INT64_MAX);   /* fits: a non-empty iteration's sizes (empty ones return before coalescing) */
        } else {
            out--;
            it->shape[out] = it->shape[i];
            for (int k = 0; k < it->nops; k++) it->strides[k][out] = it->strides[k][i];
        }
    }
    int shift = out;
    it->ndim = nd - shift;
    for (int i = 0; i < it->ndim; i++) {
        it->shape[i] = it->shape[i + shift];
        for (int k = 0; k < it->nops; k++) it->strides[k][i] = it->strides[k][i + shift];
    }
}

static int64_t tn__iter_numel(const tn__iter *it) { return tn__numel(it->shape, it->ndim); }

/* Run fn over the outer rows [begin, end) (rows = elements of all dims but the last). */
static void tn__iter_run_rows(const tn__iter *it, tn__loop_fn fn, void *ctx, int64_t begin, int64_t end) {
    int nd = it->ndim, nops = it->nops;
    int64_t inner = nd ? it->shape[nd - 1] : 1, s[TN__MAX_OPS], idx[TN_MAX_DIMS];
    char *p[TN__MAX_OPS];
    for (int k = 0; k < nops; k++) s[k] = nd ? it->strides[k][nd - 1] : 0;
    int64_t r = begin; /* unravel begin into outer counters */
    for (int i = nd - 2; i >= 0; i--) { idx[i] = r % it->shape[i]; r /= it->shape[i]; }
    for (int64_t row = begin; row < end; row++) {
        for (int k = 0; k < nops; k++) {
            char *q = it->data[k];
            for (int i = 0; i < nd - 1; i++) q += idx[i] * it->strides[k][i];
            p[k] = q;
        }
        fn(p, s, inner, ctx);
        for (int i = nd - 2; i >= 0; i--) { /* odometer */
            if (++idx[i] < it->shape[i]) break;
            idx[i] = 0;
        }
    }
}

static void tn__iter_run(tn__iter *it, tn__loop_fn fn, void *ctx) {
    int64_t numel = tn__iter_numel(it);
    if (numel == 0) return;
    if (numel == 1) { /* one element (scalars, autograd's seeds): no coalescing, no odometer */
        int64_t zero[TN__MAX_OPS] = {0};
        fn(it->data, zero, 1, ctx);
        return;
    }
    tn__iter_coalesce(it);
    int64_t rows = it->ndim > 1 ? tn__numel(it->shape, it->ndim - 1) : 1;
    tn__iter_run_rows(it, fn, ctx, 0, rows);
}

/* Run fn over the elements [e0, e1) of a coalesced iterator in row-major order; a range
   may start and end inside a row. */
static void tn__iter_run_range(const tn__iter *it, tn__loop_fn fn, void *ctx, int64_t e0, int64_t e1) {
    int nd = it->ndim, nops = it->nops;
    int64_t inner = nd ? it->shape[nd - 1] : 1, s[TN__MAX_OPS], idx[TN_MAX_DIMS];
    char *p[TN__MAX_OPS];
    for (int k = 0; k < nops; k++) s[k] = nd ? it->strides[k][nd - 1] : 0;
    int64_t r = e0 / inner, col = e0 % inner;
    for (int i = nd - 2; i >= 0; i--) { idx[i] = r % it->shape[i]; r /= it->shape[i]; }
    for (int64_t e = e0; e < e1;) {
        int64_t n = TN__MIN(inner - col, e1 - e);
        for (int k = 0; k < nops; k++) {
            char *q = it->data[k] + col * s[k];
            for (int i = 0; i < nd - 1; i++) q += idx[i] * it->strides[k][i];
            p[k] = q;
        }
        fn(p, s, n, ctx);
        e += n;
        col = 0;
        for (int i = nd - 2; i >= 0; i--) { /* odometer */
            if (++idx[i] < it->shape[i]) break;
            idx[i] = 0;
        }
    }
}

/* A threaded iteration: chunk t of nt runs fn over its range of elements (d < 0) or of
   dim d's indices. */
typedef struct { const tn__iter *it; tn__loop_fn fn; void *ctx; int64_t numel; int d; } tn__iter_job;
static void tn__iter_range_chunk(void *p, int t, int nt) {   /* boundaries on 64-element multiples: no shared cache lines */
    const tn__iter_job *j = (const tn__iter_job *)p;
    int64_t e0 = tn__split_at(j->numel / 64, t, nt) * 64, e1 = t == nt - 1 ? j->numel : tn__split_at(j->numel / 64, t + 1, nt) * 64;
    if (e1 > e0) tn__iter_run_range(j->it, j->fn, j->ctx, e0, e1);
}
static void tn__iter_dim_chunk(void *p, int t, int nt) {
    const tn__iter_job *j = (const tn__iter_job *)p;
    tn__iter sub = *j->it;
    const int d = j->d;
    int64_t a = tn__split_at(sub.shape[d], t, nt), b = tn__split_at(sub.shape[d], t + 1, nt);
    sub.shape[d] = b - a;
    for (int k = 0; k < sub.nops; k++) sub.data[k] += a * sub.strides[k][d];
    if (b > a) tn__iter_run_rows(&sub, j->fn, j->ctx, 0, sub.ndim > 1 ? tn__numel(sub.shape, sub.ndim - 1) : 1);
}

/* tn__iter_run for elementwise kernels (every element written once through operand 0,
   independent of the others): above TN_PARALLEL_MIN elements of work (work < 0: the
   iteration size) the threads take contiguous ranges. fn must only read ctx (flags by
   TN__STORE_RELAXED). */
static void tn__iter_run_par(tn__iter *it, tn__loop_fn fn, void *ctx, int64_t work) {
    int64_t numel = tn__iter_numel(it);
    int nthr = tn__par_threads(work < 0 ? numel : work, numel / 64);
    if (nthr < 2) { tn__iter_run(it, fn, ctx); return; }
    tn__iter_coalesce(it);
    for (int i = 0; i < it->ndim; i++)   /* an output that repeats elements: keep the order */
        if (it->strides[0][i] == 0) { tn__iter_run_rows(it, fn, ctx, 0, it->ndim > 1 ? tn__numel(it->shape, it->ndim - 1) : 1); return; }
    tn__iter_job job = {it, fn, ctx, numel, -1};
    tn__parallel(nthr, tn__iter_range_chunk, &job);
}

/* tn__iter_run for reductions (operand 0 the output, stride 0 on reduced dims): threads
   split a dim that the output has, so each output element is still accumulated by one
   thread in the serial order and the result does not depend on the thread count. */
static void tn__iter_run_reduce(tn__iter *it, tn__loop_fn fn, void *ctx) {
    int64_t numel = tn__iter_numel(it);
    if (numel < TN_PARALLEL_MIN || numel <= 1) { tn__iter_run(it, fn, ctx); return; }
    tn__iter_coalesce(it);
    int d = -1;   /* the kept dim that splits best: the largest */
    for (int i = 0; i < it->ndim; i++)
        if (it->strides[0][i] != 0 && (d < 0 || it->shape[i] > it->shape[d])) d = i;
    int nthr = d < 0 ? 1 : tn__par_threads(numel, it->shape[d]);
    int64_t rows = it->ndim > 1 ? tn__numel(it->shape, it->ndim - 1) : 1;
    if (nthr < 2) { tn__iter_run_rows(it, fn, ctx, 0, rows); return; }
    tn__iter_job job = {it, fn, ctx, numel, d};
    tn__parallel(nthr, tn__iter_dim_chunk, &job);
}

/* Operand t restrided to the iteration shape `shape` (same rank) without copying:
   used to walk a tensor along another tensor's index space (gather, scatter, reduce). */
static tn_tensor tn__restride(tn_tensor *t, const int64_t *shape, int ndim) {
    tn_tensor v = tn__shallow(t);
    v.ndim = ndim;
    for (int i = 0; i < ndim; i++) v.shape[i] = shape[i];
    return v;
}
