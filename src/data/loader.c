/* ---- DataLoader ----
   The caller's thread owns the epoch (the sample order, drawn from the generator at
   its start); batch k is samples order[k*bs, (k+1)*bs). With workers, slot k % cap holds
   batch k: a worker claims the lowest unclaimed batch within cap of the one the caller
   waits for, loads it with no lock held and marks the slot ready. A worker loads inside
   its own scope and retains the finished batch, so no scope owns it when it crosses
   threads; the caller registers it with its own scope. A failed load keeps the
   worker's message in the slot, to be raised by tn_loader_next on the caller's thread. */
typedef struct tn__loader_slot {
    int state;                 /* 0 free, 1 loading, 2 ready */
    int64_t batch;
    int rc;
    tn_tensor **items;         /* nitems */
    char err[1024];
} tn__loader_slot;

typedef struct tn__worker { tn_loader *l; int id; } tn__worker;

struct tn_loader {
    tn_dataset *ds;
    int nitems;
    int64_t batch_size;        /* 0: batch_size=None */
    bool shuffle, drop_last;
    int num_workers, prefetch_factor;
    tn_generator *gen;         /* owned; NULL: the default generator */
    tn_collate_fn collate;     /* NULL: the default */
    void *collate_user;
    bool in_epoch;
    int64_t n, nbatches, *order, next, dispatched;
    int cap;
    tn__loader_slot *slots;           /* cap of them, or 1 for num_workers=0 */
    tn__worker *workers;
    int nthreads;
    bool stop;
#ifdef TN__HAVE_PTHREADS
    pthread_mutex_t mu;
    pthread_cond_t work, ready;
    pthread_t *threads;
#endif
};

TNDEF int tn_default_collate(tn_tensor *const *samples, int64_t nsamples, int nitems, tn_tensor **batch, void *user) {
    (void)user;
    if (!samples || !batch || nsamples < 1 || nsamples > INT_MAX || nitems < 1)
        return TN__FAIL_INT("tn_default_collate: need 1 to %d samples of nitems >= 1 (got %lld, %d)", INT_MAX, (long long)nsamples, nitems);
    tn_tensor **col = (tn_tensor **)TN_MALLOC((size_t)nsamples * sizeof *col);
    if (!col) return TN__FAIL_INT("tn_default_collate: out of memory");
    int k = 0;
    tn_scope_begin();
    for (; k < nitems; k++) {
        for (int64_t s = 0; s < nsamples; s++) col[s] = samples[s * nitems + k];
        if (!(batch[k] = TN__AS("tn_default_collate", tn_stack(col, (int)nsamples, 0)))) break;
    }
    if (k == nitems) for (int j = 0; j < nitems; j++) tn_keep(batch[j]);
    else for (int j = 0; j < nitems; j++) batch[j] = NULL;
    tn_scope_end();
    TN_FREE(col);
    return k == nitems ? 0 : -1;
}

/* Load batch k into out (retained, owned by no scope); on failure write the message to
   err. Quiet: only tn_loader_next reports, on the caller's thread. */
static int tn__loader_load(tn_loader *l, int64_t k, tn_tensor **out, char *err, size_t errcap, int worker) {
    int ni = l->nitems;
    int64_t bs = l->batch_size ? l->batch_size : 1, start = k * bs, m = TN__MIN(bs, l->n - start);
    char where[64];
    if (worker >= 0) snprintf(where, sizeof where, "worker %d, batch %lld", worker, (long long)k);
    else snprintf(where, sizeof where, "batch %lld", (long long)k);
    tn_tensor **samples = (tn_tensor **)TN_MALLOC((size_t)(m * ni) * sizeof *samples);
    if (!samples) { snprintf(err, errcap, "%s: out of memory", where); return -1; }
    memset(samples, 0, (size_t)(m * ni) * sizeof *samples);
    tn__quiet++;
    tn_scope_begin();
    int rc = 0;
    int64_t s = 0;
    for (; s < m && rc == 0; s++) rc = tn__dataset_get(l->ds, l->order[start + s], samples + s * ni);
    if (rc) {
        snprintf(err, errcap, "%s, sample %lld: %.900s", where, (long long)l->order[start + s - 1], tn__errbuf);
    } else if (!l->batch_size && !l->collate) {
        for (int j = 0; j < ni; j++) out[j] = samples[j];
    } else {
        unsigned before = tn__nerrors;
        for (int j = 0; j < ni; j++) out[j] = NULL;
        tn_collate_fn fn = l->collate ? l->collate : tn_default_collate;
        rc = fn(samples, m, ni, out, l->collate_user);
        for (int j = 0; j < ni && rc == 0; j++)
            if (!out[j]) { rc = -1; tn__error("the collate function returned 0 but left batch item %d NULL", j); }
        if (rc && tn__nerrors == before) tn__error("the collate function returned %d without an error message", rc);
        if (rc) snprintf(err, errcap, "%s: %.900s", where, tn__errbuf);
    }
    if (rc == 0) for (int j = 0; j < ni; j++) tn_retain(out[j]);
    tn_scope_end();
    tn__quiet--;
    TN_FREE(samples);
    return rc ? -1 : 0;
}

#ifdef TN__HAVE_PTHREADS
static void *tn__loader_worker(void *arg) {
    tn__worker *w = (tn__worker *)arg;
    tn_loader *l = w->l;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        if (!(l->in_epoch && l->dispatched < l->nbatches && l->dispatched < l->next + l->cap)) {
            pthread_cond_wait(&l->work, &l->mu);
            continue;
        }
        int64_t k = l->dispatched++;
        tn__loader_slot *s = &l->slots[k % l->cap];
        s->state = 1;
        s->batch = k;
        pthread_mutex_unlock(&l->mu);
        int rc = tn__loader_load(l, k, s->items, s->err, sizeof s->err, w->id);
        pthread_mutex_lock(&l->mu);
        s->rc = rc;
        s->state = 2;
        pthread_cond_broadcast(&l->ready);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}
#endif

static int64_t tn__loader_nbatches(const tn_loader *l, int64_t n) {
    if (!l->batch_size) return n;
    return l->drop_last ? n / l->batch_size : n / l->batch_size + (n % l->batch_size != 0);
}

TNDEF tn_loader *tn_loader_new_opts(tn_dataset *ds, tn_loader_opts o) {
    if (!ds) return NULL;
    if (!ds->get || !ds->len || ds->nitems < 1) return (tn_loader *)tn__error("tn_loader_new: the dataset needs len and get functions and nitems >= 1");
    int64_t bs = o.batch_size == TN_NONE ? 0 : o.batch_size, nw = o.num_workers, pf = o.prefetch_factor, seed = o.seed;   /* bs 0: None */
    const bool shuffle = o.shuffle, drop_last = o.drop_last, has_pf = pf != TN_NONE, has_seed = seed != TN_NONE;
    if (!has_pf) pf = 2;
    if (o.batch_size != TN_NONE && (bs < 1 || bs > INT_MAX))
        return (tn_loader *)tn__error("tn_loader_new: batch_size should be a positive integer value (at most %d), but got batch_size=%lld", INT_MAX, (long long)bs);
    if (nw < 0) return (tn_loader *)tn__error("tn_loader_new: num_workers option should be non-negative; use num_workers=0 to disable worker threads (got %lld)", (long long)nw);
    if (nw > 1024) return (tn_loader *)tn__error("tn_loader_new: num_workers=%lld is more than the 1024 threads a loader may start", (long long)nw);
    if (nw == 0 && has_pf) return (tn_loader *)tn__error("tn_loader_new: prefetch_factor option could only be specified with num_workers > 0 (let num_workers > 0 to enable worker threads, otherwise leave prefetch_factor out)");
    if (pf < 1 || pf > 65536) return (tn_loader *)tn__error("tn_loader_new: prefetch_factor should be a positive integer (at most 65536), but got %lld", (long long)pf);
    if (!bs && drop_last) return (tn_loader *)tn__error("tn_loader_new: batch_size=None option disables auto-batching and is mutually exclusive with drop_last");
    if (has_seed && seed < 0) return (tn_loader *)tn__error("tn_loader_new: seed should be a non-negative integer, but got %lld", (long long)seed);
#ifndef TN__HAVE_PTHREADS
    if (nw > 0) return (tn_loader *)tn__error("tn_loader_new: num_workers=%lld needs POSIX threads, which this platform lacks; use num_workers=0", (long long)nw);
#endif
    tn_loader *l = (tn_loader *)TN_MALLOC(sizeof *l);
    if (!l) return (tn_loader *)tn__error("tn_loader_new: out of memory");
    memset(l, 0, sizeof *l);
    l->ds = ds;
    l->nitems = ds->nitems;
    l->batch_size = bs;
    l->shuffle = shuffle;
    l->drop_last = drop_last;
    l->num_workers = (int)nw;
    l->prefetch_factor = (int)pf;
    l->cap = nw ? (int)(nw * pf) : 1;
    bool ok = !has_seed || (l->gen = tn_generator_new((uint64_t)seed)) != NULL;
    l->slots = ok ? (tn__loader_slot *)TN_MALLOC((size_t)l->cap * sizeof *l->slots) : NULL;
    tn_tensor **items = l->slots ? (tn_tensor **)TN_MALLOC((size_t)l->cap * (size_t)l->nitems * sizeof *items) : NULL;
    if (!items) {
        tn_generator_free(l->gen);
        TN_FREE(l->slots);
        TN_FREE(l);
        return (tn_loader *)tn__error("tn_loader_new: out of memory");
    }
    memset(l->slots, 0, (size_t)l->cap * sizeof *l->slots);
    for (int i = 0; i < l->cap; i++) l->slots[i].items = items + (size_t)i * (size_t)l->nitems;
#ifdef TN__HAVE_PTHREADS
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work, NULL);
    pthread_cond_init(&l->ready, NULL);
    if (nw > 0) {
        l->threads = (pthread_t *)TN_MALLOC((size_t)nw * sizeof *l->threads);
        l->workers = (tn__worker *)TN_MALLOC((size_t)nw * sizeof *l->workers);
        if (!l->threads || !l->workers) { tn_loader_free(l); return (tn_loader *)tn__error("tn_loader_new: out of memory"); }
        for (int i = 0; i < nw; i++) {
            l->workers[i].l = l;
            l->workers[i].id = i;
            int rc = pthread_create(&l->threads[i], NULL, tn__loader_worker, &l->workers[i]);
            if (rc) {
                tn_loader_free(l);
                return (tn_loader *)tn__error("tn_loader_new: cannot start worker thread %d of %lld: %s", i, (long long)nw, strerror(rc));
            }
            l->nthreads++;
        }
    }
#endif
    return l;
}
TNDEF tn_loader *tn_loader_new_str(tn_dataset *ds, const char *options) {
    if (!ds) return NULL;
    TN__KW_STR(tn_loader_opts, loader, "tn_loader_new", options, tn_loader_new_opts(ds, o));
}

TNDEF int tn_loader_set_collate(tn_loader *l, tn_collate_fn fn, void *user) {
    if (!l) return -1;
    if (l->in_epoch) return TN__FAIL_INT("tn_loader_set_collate: cannot change the collate function in the middle of an epoch (batch %lld of %lld)", (long long)l->next, (long long)l->nbatches);
    l->collate = fn;
    l->collate_user = fn ? user : NULL;
    return 0;
}

TNDEF int64_t tn_loader_len(const tn_loader *l) {
    if (!l) return -1;
    if (l->in_epoch) return l->nbatches;
    int64_t n = tn_dataset_len(l->ds);
    return n < 0 ? -1 : tn__loader_nbatches(l, n);
}

static void tn__loader_lock(tn_loader *l) {
#ifdef TN__HAVE_PTHREADS
    if (l->nthreads) pthread_mutex_lock(&l->mu);
#else
    (void)l;
#endif
}
static void tn__loader_unlock(tn_loader *l, bool wake_workers) {
#ifdef TN__HAVE_PTHREADS
    if (!l->nthreads) return;
    if (wake_workers) pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->mu);
#else
    (void)l; (void)wake_workers;
#endif
}

/* A new epoch: its length and sample order, drawn on the caller's thread (so the order
   for a seed does not depend on the workers). No worker reads order between epochs. */
static int tn__loader_start_epoch(tn_loader *l) {
    int64_t n = tn_dataset_len(l->ds);
    if (n < 0) return -1;
    int64_t *order = (int64_t *)TN_REALLOC(l->order, (size_t)(n ? n : 1) * sizeof *order);
    if (!order) return TN__FAIL_INT("tn_loader_next: out of memory for an epoch of %lld samples", (long long)n);
    l->order = order;
    /* PyTorch's draws: the iterator's base seed (torch.empty((), dtype=int64).random_(generator=
       loader.generator)), then RandomSampler's permutation: randperm from the loader's
       generator, or from a new generator seeded by one more int64 draw from the default one */
    (void)tn_generator_random64(l->gen);
    if (l->shuffle) {
        tn_generator *g = l->gen ? l->gen : tn_generator_new(tn_generator_random64(NULL) & (uint64_t)INT64_MAX);
        tn_scope_begin();
        tn_tensor *perm = g ? TN__AS("tn_loader_next", tn_randperm(n, TN_I64, g)) : NULL;
        if (perm) memcpy(order, tn_data_ptr(perm), (size_t)n * sizeof *order);
        tn_scope_end();
        if (g != l->gen) tn_generator_free(g);
        if (!perm) return -1;
    } else {
        for (int64_t i = 0; i < n; i++) order[i] = i;
    }
    tn__loader_lock(l);
    l->n = n;
    l->nbatches = tn__loader_nbatches(l, n);
    l->next = l->dispatched = 0;
    l->in_epoch = true;
    tn__loader_unlock(l, true);
    return 0;
}

TNDEF int tn_loader_next(tn_loader *l, tn_tensor **batch) {
    if (!l) return -1;
    if (!batch) return TN__FAIL_INT("tn_loader_next: batch is NULL (expected room for %d tensors)", l->nitems);
    for (int k = 0; k < l->nitems; k++) batch[k] = NULL;
    if (!l->in_epoch && tn__loader_start_epoch(l)) return -1;
    if (l->next >= l->nbatches) {
        tn__loader_lock(l);
        l->in_epoch = false;
        tn__loader_unlock(l, false);
        /* PyTorch's RandomSampler draws one more randperm as it runs out (its num_samples % n
           tail, empty here); from the loader's own generator that moves the next epoch */
        if (l->shuffle && l->gen) {
            tn_scope_begin();
            tn_tensor *tail = TN__AS("tn_loader_next", tn_randperm(l->n, TN_I64, l->gen));
            tn_scope_end();
            if (!tail) return -1;
        }
        return 0;
    }
    /* take the batch out of its slot (under the lock: once freed, a worker refills it) */
    tn__loader_slot *s = &l->slots[l->next % l->cap];
    char err[sizeof s->err];
    int rc;
    if (!l->nthreads) {
        rc = tn__loader_load(l, l->next, s->items, s->err, sizeof s->err, -1);
        l->next++;
    } else {
#ifdef TN__HAVE_PTHREADS
        pthread_mutex_lock(&l->mu);
        while (!(s->state == 2 && s->batch == l->next)) pthread_cond_wait(&l->ready, &l->mu);
        rc = s->rc;
        s->state = 0;
        l->next++;
#else
        rc = -1;
#endif
    }
    if (rc) memcpy(err, s->err, sizeof err);
    for (int k = 0; k < l->nitems; k++) {
        batch[k] = rc ? NULL : s->items[k];
        s->items[k] = NULL;
    }
    tn__loader_unlock(l, true);  /* a slot is free: wake a worker */
    if (rc) return TN__FAIL_INT("tn_loader_next: %s", err);
    for (int k = 0; k < l->nitems; k++)
        if (!tn__own(batch[k])) { /* out of memory registering it: drop the rest too */
            for (int j = k + 1; j < l->nitems; j++) tn_release(batch[j]);
            for (int j = 0; j <= k; j++) batch[j] = NULL;
            return -1;
        }
    return 1;
}

TNDEF void tn_loader_free(tn_loader *l) {
    if (!l) return;
#ifdef TN__HAVE_PTHREADS
    if (l->nthreads) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_broadcast(&l->work);
        pthread_mutex_unlock(&l->mu);
        for (int i = 0; i < l->nthreads; i++) pthread_join(l->threads[i], NULL);
    }
    pthread_cond_destroy(&l->ready);
    pthread_cond_destroy(&l->work);
    pthread_mutex_destroy(&l->mu);
    TN_FREE(l->threads);
#endif
    for (int i = 0; i < l->cap; i++)  /* batches loaded ahead and never taken */
        if (l->slots[i].state == 2 && l->slots[i].rc == 0)
            for (int k = 0; k < l->nitems; k++) tn_release(l->slots[i].items[k]);
    TN_FREE(l->slots[0].items);
    TN_FREE(l->slots);
    TN_FREE(l->workers);
    TN_FREE(l->order);
    tn_generator_free(l->gen);
    TN_FREE(l);
}
