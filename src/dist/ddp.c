/* ---- DistributedDataParallel: bucketed gradient all-reduce overlapping backward ----
   Buckets hold parameters in reverse order (roughly the order backward produces their
   gradients), one dtype each, up to bucket_cap_mb. A parameter's hook (it sees the
   gradient flowing into the leaf, once per backward) writes what .grad will hold after
   accumulation into the bucket; buckets start their all-reduce strictly in index order,
   so every rank issues the same sequence of collectives whatever order its hooks ran in.
   The first hook of a backward queues the final callback, which completes the remaining
   buckets (a parameter not reached gives its current .grad or zeros), waits for every
   all-reduce and copies the averages into .grad. */
typedef struct tn__ddp_bucket {
    tn_tensor *flat;                    /* the bucket's gradients, flattened and joined */
    int first, n;                       /* parameters [first, first + n) of the bucket order */
    int ready;                          /* how many of them have their gradient in flat */
    tn_dist_work *work;
} tn__ddp_bucket;

struct tn_ddp {
    tn_tensor **params;                 /* in bucket order (reverse of the caller's), retained */
    int64_t *offset;                    /* each parameter's offset in its bucket's flat */
    int *bucket;                        /* each parameter's bucket */
    bool *marked;                       /* its gradient is in the bucket this iteration */
    int *hooks;
    struct tn__ddp_hook *ctx;           /* each hook's (d, i) */
    int n, nbuckets, next;              /* next: the next bucket to launch */
    tn__ddp_bucket *buckets;
    tn_dist_group *g;
    bool no_sync, queued;
    int failed;                         /* a hook's error, reported by the final callback */
};

/* the bucket's slot of parameter i as a tensor of the parameter's shape (a view of flat) */
static tn_tensor *tn__ddp_slot(tn_ddp *d, int i) {
    tn_tensor *p = d->params[i];
    return tn_reshape(tn_narrow(d->buckets[d->bucket[i]].flat, 0, d->offset[i], tn_numel(p)), p->shape, p->ndim);
}

static int tn__ddp_launch_ready(tn_ddp *d) {
    while (d->next < d->nbuckets && d->buckets[d->next].ready == d->buckets[d->next].n) {
        tn__ddp_bucket *b = &d->buckets[d->next++];
        if (!(b->work = tn_dist_all_reduce_async(b->flat, TN_DIST_AVG, d->g))) return -1;
    }
    return 0;
}

/* Writes parameter i's gradient-to-be (its .grad plus g, or g; zeros without either) into its slot. */
static int tn__ddp_mark(tn_ddp *d, int i, tn_tensor *g) {
    if (d->marked[i]) return 0;
    tn_tensor *p = d->params[i];
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *v = g ? (p->grad ? tn_add(p->grad, g) : g) : p->grad;
    int rc = v ? tn_copy_(tn__ddp_slot(d, i), v) : (tn_fill_(tn__ddp_slot(d, i), 0) ? 0 : -1);
    tn_no_grad_end();
    tn_scope_end();
    if (rc) return -1;
    d->marked[i] = true;
    d->buckets[d->bucket[i]].ready++;
    return 0;
}

static int tn__ddp_finish(void *user) {
    tn_ddp *d = (tn_ddp *)user;
    int rc = d->failed;
    for (int i = 0; i < d->n && !rc; i++)                       /* not reached by this backward */
        if (!d->marked[i] && (tn__ddp_mark(d, i, NULL) || tn__ddp_launch_ready(d))) rc = -1;
    for (int k = 0; k < d->nbuckets; k++) {                     /* every launched one is waited for, also after an error */
        if (d->buckets[k].work && tn_dist_wait(d->buckets[k].work) < 0) rc = -1;
        d->buckets[k].work = NULL;
    }
    tn_no_grad_begin();
    for (int i = 0; i < d->n && !rc; i++) {
        tn_tensor *p = d->params[i];
        tn_scope_begin();
        tn_tensor *avg = tn__ddp_slot(d, i);
        if (p->grad && !p->grad->requires_grad) rc = tn_copy_(p->grad, avg);
        else {
            tn_tensor *c = tn_clone(avg);
            if (!c) rc = -1;
            else { tn_release(p->grad); p->grad = tn_retain(c); }
        }
        tn_scope_end();
    }
    tn_no_grad_end();
    for (int i = 0; i < d->n; i++) d->marked[i] = false;
    for (int k = 0; k < d->nbuckets; k++) d->buckets[k].ready = 0;
    d->next = 0;
    d->queued = false;
    d->failed = 0;
    return rc;
}

typedef struct tn__ddp_hook { tn_ddp *d; int i; } tn__ddp_hook;

static tn_tensor *tn__ddp_on_grad(tn_tensor *grad, void *user) {
    tn__ddp_hook *h = (tn__ddp_hook *)user;
    tn_ddp *d = h->d;
    if (d->no_sync || d->failed) return NULL;
    if (!d->queued) {
        if (tn_autograd_queue_callback(tn__ddp_finish, d)) { d->failed = -1; return NULL; }
        d->queued = true;
    }
    if (tn__ddp_mark(d, h->i, grad) || tn__ddp_launch_ready(d)) d->failed = -1;
    return NULL;                        /* .grad gets the local gradient; the callback overwrites it */
}

TNDEF void tn_ddp_free(tn_ddp *d) {
    if (!d) return;
    for (int k = 0; k < d->nbuckets; k++) {
        if (d->buckets[k].work) tn_dist_wait(d->buckets[k].work);
        tn_release(d->buckets[k].flat);
    }
    for (int i = 0; i < d->n; i++) {
        if (d->hooks && d->hooks[i] >= 0) tn_remove_hook(d->params[i], d->hooks[i]);
        tn_release(d->params[i]);
    }
    TN_FREE(d->buckets);
    TN_FREE(d->params);
    TN_FREE(d->offset);
    TN_FREE(d->bucket);
    TN_FREE(d->marked);
    TN_FREE(d->hooks);
    TN_FREE(d->ctx);
    TN_FREE(d);
}

TNDEF tn_ddp *tn_ddp_new_opts(tn_tensor *const *params, int n, tn_dist_group *g, tn_ddp_opts o) {
    const char *fn = "tn_ddp_new";
    if (n < 0 || (n && !params)) return (tn_ddp *)tn__error("%s: %d parameters", fn, n);
    if (!(o.bucket_cap_mb > 0) || o.bucket_cap_mb > 1e6) return (tn_ddp *)tn__error("%s: bucket_cap_mb %g must be in (0, 1e6]", fn, o.bucket_cap_mb);
    if (!tn_dist_is_initialized()) return (tn_ddp *)tn__error("%s: the default process group is not initialized (call tn_dist_init first)", fn);
    for (int i = 0; i < n; i++) {
        if (!params[i]) return (tn_ddp *)tn__error("%s: parameter %d is NULL", fn, i);
        if (!params[i]->requires_grad || params[i]->grad_fn)
            return (tn_ddp *)tn__error("%s: parameter %d is not a leaf that requires grad", fn, i);
        if (!tn_dtype_is_floating(params[i]->dtype)) return (tn_ddp *)tn__error("%s: parameter %d is %s, not floating point", fn, i, tn_dtype_name(params[i]->dtype));
    }
    tn_ddp *d = (tn_ddp *)TN_MALLOC(sizeof *d);
    if (!d) return (tn_ddp *)tn__error("%s: out of memory", fn);
    memset(d, 0, sizeof *d);
    d->g = g;
    const size_t m = (size_t)(n ? n : 1);
    d->params = (tn_tensor **)TN_MALLOC(m * sizeof *d->params);
    d->offset = (int64_t *)TN_MALLOC(m * sizeof *d->offset);
    d->bucket = (int *)TN_MALLOC(m * sizeof *d->bucket);
    d->marked = (bool *)TN_MALLOC(m * sizeof *d->marked);
    d->hooks = (int *)TN_MALLOC(m * sizeof *d->hooks);
    d->ctx = (tn__ddp_hook *)TN_MALLOC(m * sizeof *d->ctx);
    d->buckets = (tn__ddp_bucket *)TN_MALLOC(m * sizeof *d->buckets);
    if (!d->params || !d->offset || !d->bucket || !d->marked || !d->hooks || !d->ctx || !d->buckets) {
        d->n = 0;
        tn_ddp_free(d);
        return (tn_ddp *)tn__error("%s: out of memory", fn);
    }
    for (int i = 0; i < n; i++) {
        d->params[i] = tn_retain(params[n - 1 - i]);    /* reverse: the order gradients arrive in */
        d->hooks[i] = -1;
        d->marked[i] = false;
    }
    d->n = n;
    /* buckets: consecutive parameters of one dtype and device up to the cap */
    const double cap = o.bucket_cap_mb * 1024 * 1024;
    double bytes = 0;
    for (int i = 0; i < n; i++) {
        tn_tensor *p = d->params[i];
        tn__ddp_bucket *b = d->nbuckets ? &d->buckets[d->nbuckets - 1] : NULL;
        tn_tensor *prev = i ? d->params[i - 1] : NULL;
        if (!b || bytes >= cap || prev->dtype != p->dtype || prev->device != p->device) {
            b = &d->buckets[d->nbuckets++];
            memset(b, 0, sizeof *b);
            b->first = i;
            bytes = 0;
        }
        d->offset[i] = b->n ? d->offset[i - 1] + tn_numel(d->params[i - 1]) : 0;
        d->bucket[i] = d->nbuckets - 1;
        b->n++;
        bytes += (double)tn_numel(p) * (double)tn_dtype_size(p->dtype);
    }
    int rc = 0;
    for (int k = 0; k < d->nbuckets && !rc; k++) {
        tn__ddp_bucket *b = &d->buckets[k];
        const int last = b->first + b->n - 1;
        int64_t numel = d->offset[last] + tn_numel(d->params[last]);
        tn_tensor *p = d->params[b->first];
        tn_scope_begin();
        b->flat = tn_zeros(TN_SHAPE(numel), p->dtype);
        if (b->flat && p->device != TN_CPU) b->flat = tn_to(b->flat, p->device);
        if (b->flat) tn_retain(b->flat);
        else rc = -1;
        tn_scope_end();
    }
    /* every rank starts from rank 0's parameters */
    tn_no_grad_begin();
    int root = 0;
    for (int i = 0; i < n && !rc && o.broadcast_parameters; i++) rc = tn_dist_broadcast(d->params[i], root, g);
    tn_no_grad_end();
    for (int i = 0; i < n && !rc; i++) {
        d->ctx[i].d = d;
        d->ctx[i].i = i;
        if ((d->hooks[i] = tn_register_hook(d->params[i], tn__ddp_on_grad, &d->ctx[i])) < 0) rc = -1;
    }
    (void)o.find_unused_parameters;     /* accepted: unused parameters are always handled */
    if (rc) { tn_ddp_free(d); return NULL; }
    return d;
}

TNDEF tn_ddp *tn_ddp_new_str(tn_tensor *const *params, int n, tn_dist_group *g, const char *options) {
    TN__KW_STR(tn_ddp_opts, ddp, "tn_ddp_new", options, tn_ddp_new_opts(params, n, g, o));
}

TNDEF int tn_ddp_no_sync(tn_ddp *d, bool no_sync) {
    if (!d) return TN__FAIL_INT("tn_ddp_no_sync: ddp is NULL");
    d->no_sync = no_sync;
    return 0;
}
