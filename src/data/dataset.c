#include <errno.h>
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_PTHREADS 1
#include <pthread.h>
#endif
#ifdef TENSOR_ZLIB
#include <zlib.h>
#endif

TNDEF int64_t tn_dataset_len(tn_dataset *ds) {
    if (!ds) return -1;
    if (!ds->len) return TN__FAIL_INT("tn_dataset_len: the dataset has no len function");
    unsigned before = tn__nerrors;
    int64_t n = ds->len(ds);
    if (n < 0 && tn__nerrors == before) return TN__FAIL_INT("tn_dataset_len: the dataset's len returned %lld", (long long)n);
    return n < 0 ? -1 : n;
}

/* The body of tn_dataset_get, quiet: the caller words the message. */
static int tn__dataset_get(tn_dataset *ds, int64_t index, tn_tensor **items) {
    for (int k = 0; k < ds->nitems; k++) items[k] = NULL;
    unsigned before = tn__nerrors;
    int rc = ds->get(ds, index, items);
    if (rc != 0) {
        for (int k = 0; k < ds->nitems; k++) items[k] = NULL; /* what get made belongs to a scope, or get freed it */
        if (tn__nerrors == before) tn__error("the dataset's get returned %d for index %lld without an error message", rc, (long long)index);
        return -1;
    }
    for (int k = 0; k < ds->nitems; k++)
        if (!items[k]) {
            tn__error("the dataset's get returned 0 for index %lld but left item %d NULL", (long long)index, k);
            return -1;
        }
    return 0;
}

TNDEF int tn_dataset_get(tn_dataset *ds, int64_t index, tn_tensor **items) {
    if (!ds) return -1;
    if (!items || !ds->get || ds->nitems < 1) return TN__FAIL_INT("tn_dataset_get: need a dataset with a get function, nitems >= 1 and an items array");
    int64_t n = tn_dataset_len(ds);
    if (n < 0) return -1;
    if (index < 0 || index >= n)
        return TN__FAIL_INT("tn_dataset_get: index %lld out of range for a dataset of length %lld", (long long)index, (long long)n);
    tn__quiet++;
    int rc = tn__dataset_get(ds, index, items);
    tn__quiet--;
    if (rc == 0) return 0;
    char why[1024];
    snprintf(why, sizeof why, "%s", tn__errbuf);
    return TN__FAIL_INT("tn_dataset_get: %s", why);
}

TNDEF void tn_dataset_free(tn_dataset *ds) {
    if (ds && ds->destroy) ds->destroy(ds);
}

/* ---- TensorDataset ---- */
typedef struct tn__tensor_ds { tn_dataset base; int64_t len; tn_tensor **t; } tn__tensor_ds;
static int64_t tn__tds_len(tn_dataset *d) { return ((tn__tensor_ds *)d)->len; }
static int tn__tds_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    tn__tensor_ds *s = (tn__tensor_ds *)d;
    tn_scope_begin();  /* all or nothing: on failure the scope takes back what was made */
    int k = 0;
    for (; k < d->nitems; k++) if (!(items[k] = tn_select(s->t[k], 0, i))) break;
    if (k == d->nitems) for (k = 0; k < d->nitems; k++) tn_keep(items[k]);
    tn_scope_end();
    return k == d->nitems ? 0 : -1;
}
static void tn__tds_destroy(tn_dataset *d) {
    tn__tensor_ds *s = (tn__tensor_ds *)d;
    for (int k = 0; k < d->nitems; k++) tn_release(s->t[k]);
    TN_FREE(s->t);
    TN_FREE(s);
}
TNDEF tn_dataset *tn_tensor_dataset(tn_tensor *const *tensors, int n) {
    if (n < 1 || !tensors) return (tn_dataset *)tn__error("tn_tensor_dataset: need at least one tensor (got n = %d)", n);
    for (int k = 0; k < n; k++) if (!tensors[k]) return NULL;
    for (int k = 0; k < n; k++) {
        if (tensors[k]->ndim == 0) return (tn_dataset *)tn__error("tn_tensor_dataset: tensor %d is 0-d; every tensor needs a dim 0 to index samples", k);
        if (tensors[k]->shape[0] != tensors[0]->shape[0])
            return (tn_dataset *)tn__error("tn_tensor_dataset: size mismatch between tensors: tensor 0 has shape %s, tensor %d has shape %s (dim 0 must agree)",
                                           TN__SHAPE(tensors[0]), k, TN__SHAPE(tensors[k]));
    }
    tn__tensor_ds *s = (tn__tensor_ds *)TN_MALLOC(sizeof *s);
    tn_tensor **t = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *t);
    if (!s || !t) { TN_FREE(s); TN_FREE(t); return (tn_dataset *)tn__error("tn_tensor_dataset: out of memory"); }
    memset(s, 0, sizeof *s);
    for (int k = 0; k < n; k++) t[k] = tn_retain(tensors[k]);
    s->base.len = tn__tds_len;
    s->base.get = tn__tds_get;
    s->base.destroy = tn__tds_destroy;
    s->base.nitems = n;
    s->len = tensors[0]->shape[0];
    s->t = t;
    return &s->base;
}

/* ---- Subset and random_split ---- */
typedef struct tn__subset_ds { tn_dataset base; tn_dataset *ds; int64_t n; int64_t *idx; } tn__subset_ds;
static int64_t tn__subset_len(tn_dataset *d) { return ((tn__subset_ds *)d)->n; }
static int tn__subset_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    tn__subset_ds *s = (tn__subset_ds *)d;
    return tn_dataset_get(s->ds, s->idx[i], items);
}
static void tn__subset_destroy(tn_dataset *d) {
    TN_FREE(((tn__subset_ds *)d)->idx);
    TN_FREE(d);
}
TNDEF tn_dataset *tn_subset(tn_dataset *ds, const int64_t *indices, int64_t n) {
    if (!ds) return NULL;
    if (n < 0 || (n > 0 && !indices)) return (tn_dataset *)tn__error("tn_subset: need n >= 0 indices (got n = %lld%s)", (long long)n, indices ? "" : ", indices NULL");
    if (!ds->get || ds->nitems < 1) return (tn_dataset *)tn__error("tn_subset: the dataset has no get function or nitems < 1");
    int64_t len = tn_dataset_len(ds);
    if (len < 0) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (indices[i] < 0 || indices[i] >= len)
            return (tn_dataset *)tn__error("tn_subset: indices[%lld] = %lld is out of range for a dataset of length %lld", (long long)i, (long long)indices[i], (long long)len);
    tn__subset_ds *s = (tn__subset_ds *)TN_MALLOC(sizeof *s);
    int64_t *idx = (int64_t *)TN_MALLOC((size_t)(n ? n : 1) * sizeof *idx);
    if (!s || !idx) { TN_FREE(s); TN_FREE(idx); return (tn_dataset *)tn__error("tn_subset: out of memory"); }
    memset(s, 0, sizeof *s);
    if (n) memcpy(idx, indices, (size_t)n * sizeof *idx);
    s->base.len = tn__subset_len;
    s->base.get = tn__subset_get;
    s->base.destroy = tn__subset_destroy;
    s->base.nitems = ds->nitems;
    s->ds = ds;
    s->n = n;
    s->idx = idx;
    return &s->base;
}

TNDEF int tn_random_split(tn_dataset *ds, const double *lengths, int n, tn_generator *gen, tn_dataset **out) {
    if (!ds) return -1;
    if (n < 1 || !lengths || !out) return TN__FAIL_INT("tn_random_split: need n >= 1 lengths and an out array (got n = %d)", n);
    int64_t len = tn_dataset_len(ds);
    if (len < 0) return -1;
    int64_t *counts = (int64_t *)TN_MALLOC((size_t)n * sizeof *counts);
    if (!counts) return TN__FAIL_INT("tn_random_split: out of memory");
    double sum = 0;
    for (int i = 0; i < n; i++) sum += lengths[i];
    /* PyTorch: math.isclose(sum, 1) and sum <= 1 means fractions */
    bool fractions = fabs(sum - 1) <= 1e-9 * TN__MAX(1.0, fabs(sum)) && sum <= 1;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        double v = lengths[i];
        if (fractions) {
            if (!(v >= 0 && v <= 1)) { TN_FREE(counts); return TN__FAIL_INT("tn_random_split: fraction at index %d is not between 0 and 1 (got %g)", i, v); }
            counts[i] = (int64_t)floor((double)len * v);
        } else {
            if (!(v >= 0) || v != floor(v) || v > 9e15) { TN_FREE(counts); return TN__FAIL_INT("tn_random_split: lengths[%d] = %g is neither a count (an integer >= 0) nor part of fractions summing to 1", i, v); }
            counts[i] = (int64_t)v;
        }
        total += counts[i];
    }
    if (fractions) /* the remainder, one each from the first split on (round-robin) */
        for (int64_t r = 0; r < len - total; r++) counts[r % n]++;
    else if (total != len) {
        TN_FREE(counts);
        return TN__FAIL_INT("tn_random_split: sum of input lengths (%lld) does not equal the length of the input dataset (%lld)", (long long)total, (long long)len);
    }
    tn_scope_begin();
    tn_tensor *perm = TN__AS("tn_random_split", tn_randperm(len, TN_I64, gen));
    const int64_t *p = perm ? (const int64_t *)tn_data_ptr(perm) : NULL;
    int made = 0;
    tn_dataset **tmp = (tn_dataset **)TN_MALLOC((size_t)n * sizeof *tmp);
    if (!tmp && perm) tn__error("tn_random_split: out of memory");
    for (int64_t off = 0; perm && tmp && made < n; made++) {
        if (!(tmp[made] = tn_subset(ds, p + off, counts[made]))) break;
        off += counts[made];
    }
    tn_scope_end();
    TN_FREE(counts);
    if (!tmp || made < n) {
        for (int i = 0; tmp && i < made; i++) tn_dataset_free(tmp[i]);
        TN_FREE(tmp);
        return -1;
    }
    memcpy(out, tmp, (size_t)n * sizeof *out);
    TN_FREE(tmp);
    return 0;
}
