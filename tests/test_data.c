/* Tests of section 14 (data): TensorDataset, Subset, random_split, the DataLoader
   (batching, shuffling, worker processes, errors, collate), and the IDX, CSV and MNIST
   readers. Build with -DTENSOR_ZLIB -lz to test gzip files too. */
#define _POSIX_C_SOURCE 200809L /* popen, mkdtemp: PyTorch as an oracle, a scratch directory */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdint.h>
#ifdef TENSOR_ZLIB
#include <zlib.h>
#endif

static char tmpdir[256];
static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int which;
    char *b = buf[which++ & 3];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

/* element i (row-major) of t, as a double */
static double at(tn_tensor *t, int64_t i) {
    tn_scope_begin();
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_F64));
    double v = c ? ((const double *)tn_data_ptr(c))[i] : NAN;
    tn_scope_end();
    return v;
}

static bool shape_is(tn_tensor *t, const int64_t *shape, int ndim) {
    if (!t || tn_ndim(t) != ndim) return false;
    for (int i = 0; i < ndim; i++) if (tn_shape(t)[i] != shape[i]) return false;
    return true;
}

/* x: [n, 3] float32 with x[i] = (3i, 3i+1, 3i+2); y: int64 [n], y[i] = i */
static tn_dataset *make_ds(int64_t n, tn_tensor **xo, tn_tensor **yo) {
    tn_tensor *x = tn_reshape(tn_arange(0, (double)(3 * n), 1, TN_F32), TN_SHAPE(n, 3));
    tn_tensor *y = tn_arange(0, (double)n, 1, TN_I64);
    tn_tensor *xy[2] = {x, y};
    if (xo) *xo = x;
    if (yo) *yo = y;
    return tn_tensor_dataset(xy, 2);
}

TEST(tensor_dataset) {
    tn_scope_begin();
    tn_tensor *x, *y;
    tn_dataset *ds = make_ds(10, &x, &y);
    CHECK(ds && ds->nitems == 2);
    CHECK(tn_dataset_len(ds) == 10);
    tn_tensor *items[2];
    CHECK(tn_dataset_get(ds, 4, items) == 0);
    CHECK(shape_is(items[0], TN_SHAPE(3)) && shape_is(items[1], NULL, 0));
    CHECK(at(items[0], 0) == 12 && at(items[0], 2) == 14 && at(items[1], 0) == 4);
    CHECK(tn_get_dtype(items[1]) == TN_I64);
    CHECK(tn_same_storage(items[0], x));  /* a view, as tensor[i] */
    CHECK_ERR(tn_dataset_get(ds, 10, items) == 0, "index 10 out of range for a dataset of length 10");
    CHECK(items[0] == NULL || 1);
    CHECK_ERR(tn_dataset_get(ds, -1, items) == 0, "index -1 out of range");
    /* errors */
    tn_tensor *bad[2] = {x, tn_arange(0, 9, 1, TN_I64)};
    CHECK_ERR(tn_tensor_dataset(bad, 2), "size mismatch between tensors: tensor 0 has shape [10, 3], tensor 1 has shape [9]");
    tn_tensor *zd[1] = {tn_scalar_tensor(1, TN_F32)};
    CHECK_ERR(tn_tensor_dataset(zd, 1), "tensor 0 is 0-d");
    CHECK_ERR(tn_tensor_dataset(bad, 0), "need at least one tensor");
    tn_tensor *nul[2] = {x, NULL};
    tn_clear_error();
    CHECK(tn_tensor_dataset(nul, 2) == NULL && tn_last_error()[0] == 0);  /* NULL passes through silently */
    tn_clear_error();
    CHECK(tn_loader_new(NULL) == NULL && tn_last_error()[0] == 0);
    tn_dataset_free(ds);
    tn_dataset_free(NULL);
    tn_scope_end();
}

TEST(subset_and_split) {
    tn_scope_begin();
    tn_dataset *ds = make_ds(10, NULL, NULL);
    int64_t idx[3] = {7, 2, 9};
    tn_dataset *sub = tn_subset(ds, idx, 3);
    tn_tensor *items[2];
    CHECK(tn_dataset_len(sub) == 3);
    CHECK(tn_dataset_get(sub, 1, items) == 0 && at(items[1], 0) == 2 && at(items[0], 1) == 7);
    CHECK(tn_dataset_get(sub, 2, items) == 0 && at(items[1], 0) == 9);
    CHECK_ERR(tn_dataset_get(sub, 3, items) == 0, "index 3 out of range for a dataset of length 3");
    int64_t badidx[2] = {1, 10};
    CHECK_ERR(tn_subset(ds, badidx, 2), "indices[1] = 10 is out of range for a dataset of length 10");
    tn_dataset *empty = tn_subset(ds, NULL, 0);
    CHECK(empty && tn_dataset_len(empty) == 0);
    tn_dataset_free(empty);
    tn_dataset_free(sub);

    /* counts: every sample once across the splits, deterministic for a seed */
    double counts[2] = {3, 7};
    tn_dataset *parts[3], *again[2];
    tn_generator *g = tn_generator_new(42), *g2 = tn_generator_new(42);
    CHECK(tn_random_split(ds, counts, 2, g, parts) == 0);
    CHECK(tn_random_split(ds, counts, 2, g2, again) == 0);
    CHECK(tn_dataset_len(parts[0]) == 3 && tn_dataset_len(parts[1]) == 7);
    int seen[10] = {0};
    bool same = true;
    for (int p = 0; p < 2; p++)
        for (int64_t i = 0; i < tn_dataset_len(parts[p]); i++) {
            tn_tensor *a[2], *b[2];
            CHECK(tn_dataset_get(parts[p], i, a) == 0 && tn_dataset_get(again[p], i, b) == 0);
            int v = (int)at(a[1], 0);
            if (v >= 0 && v < 10) seen[v]++;
            same = same && at(b[1], 0) == v && at(a[0], 0) == 3 * v;
        }
    for (int i = 0; i < 10; i++) CHECK_MSG(seen[i] == 1, "sample %d seen %d times", i, seen[i]);
    CHECK(same);
    for (int p = 0; p < 2; p++) { tn_dataset_free(parts[p]); tn_dataset_free(again[p]); }
    /* fractions: PyTorch's floor + round-robin remainder */
    struct { int64_t n; int k; double f[3]; int64_t want[3]; } cases[] = {
        {5, 2, {0.5, 0.5, 0}, {3, 2, 0}}, {10, 3, {0.34, 0.33, 0.33}, {4, 3, 3}},
        {10, 3, {0.3, 0.3, 0.4}, {3, 3, 4}}, {7, 3, {0.2, 0.2, 0.6}, {2, 1, 4}}, {1, 1, {1, 0, 0}, {1, 0, 0}},
        {11, 3, {0.1, 0.1, 0.8}, {2, 1, 8}}, {3, 2, {0.99, 0.01, 0}, {3, 0, 0}}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tn_dataset *d = make_ds(cases[c].n, NULL, NULL);
        CHECK(tn_random_split(d, cases[c].f, cases[c].k, NULL, parts) == 0);
        for (int p = 0; p < cases[c].k; p++) {
            CHECK_MSG(tn_dataset_len(parts[p]) == cases[c].want[p], "case %zu split %d: %lld, expected %lld", c, p,
                      (long long)tn_dataset_len(parts[p]), (long long)cases[c].want[p]);
            tn_dataset_free(parts[p]);
        }
        tn_dataset_free(d);
    }
    /* PyTorch as the oracle for the lengths rule */
    FILE *py = popen("/usr/bin/python3 -c \"import torch\nfrom torch.utils.data import random_split as rs\n"
                     "for n, f in [(5, [0.5, 0.5]), (10, [0.34, 0.33, 0.33]), (10, [0.3, 0.3, 0.4]), (7, [0.2, 0.2, 0.6]), (1, [1.0]), (11, [0.1, 0.1, 0.8]), (3, [0.99, 0.01])]:\n"
                     "    print(*[len(s) for s in rs(range(n), f)] + [0] * (3 - len(f)))\" 2>/dev/null", "r");
    int l[21] = {0}, got = 0;
    while (py && got < 21 && fscanf(py, "%d", &l[got]) == 1) got++;
    if (got == 21) {
        for (int c = 0; c < 7; c++)
            for (int p = 0; p < 3; p++) CHECK_MSG(l[3 * c + p] == cases[c].want[p], "case %d split %d: PyTorch gives %d", c, p, l[3 * c + p]);
    } else printf("skipped: PyTorch random_split lengths (import torch failed)\n");
    if (py) pclose(py);
    /* errors */
    double bad1[2] = {3, 6}, bad2[2] = {1.5, -0.5}, bad3[2] = {2.5, 7.5};
    CHECK_ERR(tn_random_split(ds, bad1, 2, NULL, parts) == 0, "sum of input lengths (9) does not equal the length of the input dataset (10)");
    CHECK_ERR(tn_random_split(ds, bad2, 2, NULL, parts) == 0, "fraction at index 0 is not between 0 and 1");
    CHECK_ERR(tn_random_split(ds, bad3, 2, NULL, parts) == 0, "lengths[0] = 2.5 is neither a count");
    tn_generator_free(g);
    tn_generator_free(g2);
    tn_dataset_free(ds);
    tn_scope_end();
}

TEST(loader_batches) {
    tn_scope_begin();
    tn_dataset *ds = make_ds(10, NULL, NULL);
    tn_tensor *b[2];
    /* batch_size 3: 3, 3, 3, then the partial 1 */
    tn_loader *l = tn_loader_new(ds, .batch_size = 3);
    CHECK(l && tn_loader_len(l) == 4);
    int64_t sizes[4] = {3, 3, 3, 1};
    for (int epoch = 0; epoch < 2; epoch++) {
        for (int k = 0; k < 4; k++) {
            CHECK(tn_loader_next(l, b) == 1);
            CHECK(shape_is(b[0], TN_SHAPE(sizes[k], 3)) && shape_is(b[1], &sizes[k], 1));
            CHECK(tn_get_dtype(b[0]) == TN_F32 && tn_get_dtype(b[1]) == TN_I64);
            CHECK(at(b[1], 0) == 3 * k && at(b[0], 0) == 9 * k);  /* in order without shuffle */
        }
        CHECK(tn_loader_next(l, b) == 0 && b[0] == NULL);  /* end of the epoch */
    }
    tn_loader_free(l);
    /* drop_last */
    l = tn_loader_new(ds, .batch_size = 3, .drop_last = true);
    CHECK(tn_loader_len(l) == 3);
    int n = 0;
    while (tn_loader_next(l, b) == 1) { CHECK(tn_size(b[0], 0) == 3); n++; }
    CHECK(n == 3);
    tn_loader_free(l);
    /* batch_size larger than the dataset; exact multiple */
    l = tn_loader_new(ds, .batch_size = 32);
    CHECK(tn_loader_len(l) == 1 && tn_loader_next(l, b) == 1 && tn_size(b[0], 0) == 10 && tn_loader_next(l, b) == 0);
    tn_loader_free(l);
    l = tn_loader_new(ds, .batch_size = 5, .drop_last = true, .num_workers = 2);
    CHECK(tn_loader_len(l) == 2);
    n = 0;
    while (tn_loader_next(l, b) == 1) n++;
    CHECK(n == 2);
    tn_loader_free(l);
    /* batch_size=None: samples one by one, not collated */
    l = tn_loader_new(ds, .batch_size = TN_NONE);
    CHECK(tn_loader_len(l) == 10);
    CHECK(tn_loader_next(l, b) == 1 && shape_is(b[0], TN_SHAPE(3)) && tn_ndim(b[1]) == 0);
    tn_loader_free(l);
    /* the default batch size is 1 (PyTorch's) */
    l = tn_loader_new(ds);
    CHECK(tn_loader_len(l) == 10 && tn_loader_next(l, b) == 1 && shape_is(b[0], TN_SHAPE(1, 3)));
    tn_loader_free(l);
    /* an empty dataset: an epoch with no batches */
    tn_dataset *none = tn_subset(ds, NULL, 0);
    l = tn_loader_new(none, .batch_size = 4, .shuffle = true, .num_workers = 1);
    CHECK(tn_loader_len(l) == 0 && tn_loader_next(l, b) == 0 && tn_loader_next(l, b) == 0);
    tn_loader_free(l);
    tn_dataset_free(none);
    /* option errors */
    CHECK_ERR(tn_loader_new(ds, .batch_size = 0), "batch_size should be a positive integer value");
    CHECK_ERR(tn_loader_new(ds, .num_workers = -1), "num_workers option should be non-negative");
    CHECK_ERR(tn_loader_new(ds, .prefetch_factor = 4), "prefetch_factor option could only be specified with num_workers > 0");
    CHECK_ERR(tn_loader_new(ds, .num_workers = 1, .prefetch_factor = 0), "prefetch_factor should be a positive integer");
    CHECK_ERR(tn_loader_new(ds, .batch_size = TN_NONE, .drop_last = true), "mutually exclusive with drop_last");
    CHECK_ERR(tn_loader_new_str(ds, "batch_size=2, shufle=True"), "unknown option 'shufle'");
    CHECK_ERR(tn_loader_new_str(ds, "shuffle=maybe"), "expected True or False");
    CHECK_ERR(tn_loader_new(ds, .seed = -3), "seed should be a non-negative integer");
    CHECK_ERR(tn_loader_new_str(ds, "batch_size=2.5"), "tn_loader_new: option batch_size=2.5: expected an integer");
    tn_dataset_free(ds);
    tn_scope_end();
}

/* The sample order of `epochs` epochs, as y values. */
static int collect(tn_dataset *ds, const char *opts, int epochs, int64_t *out, int64_t cap) {
    tn_loader *l = tn_loader_new_str(ds, opts);
    if (!l) return -1;
    int64_t n = 0;
    for (int e = 0; e < epochs; e++) {
        tn_tensor *b[2];
        int rc;
        while ((rc = tn_loader_next(l, b)) == 1) {
            for (int64_t i = 0; i < tn_size(b[1], 0) && n < cap; i++) out[n++] = (int64_t)at(b[1], i);
            tn_release(b[0]);  /* no scope is open here: the caller owns the batch */
            tn_release(b[1]);
        }
        if (rc < 0) { tn_loader_free(l); return -1; }
    }
    tn_loader_free(l);
    return (int)n;
}

TEST(loader_shuffle_workers) {
    int64_t base_tensors = tn_memory_stats_get().live_tensors;
    tn_scope_begin();
    tn_dataset *ds = make_ds(100, NULL, NULL);  /* it keeps x and y; the scope frees the rest */
    tn_scope_end();
    int64_t ref[200], got[200];
    CHECK(collect(ds, "batch_size=7, shuffle=True, seed=7", 2, ref, 200) == 200);
    for (int e = 0; e < 2; e++) { /* each epoch: every sample exactly once */
        int seen[100] = {0};
        for (int i = 0; i < 100; i++) if (ref[100 * e + i] >= 0 && ref[100 * e + i] < 100) seen[ref[100 * e + i]]++;
        int ok = 1;
        for (int i = 0; i < 100; i++) ok = ok && seen[i] == 1;
        CHECK_MSG(ok, "epoch %d does not hold every sample once", e);
    }
    CHECK(memcmp(ref, ref + 100, 100 * sizeof *ref) != 0);  /* reshuffled each epoch */
    bool sorted = true;
    for (int i = 1; i < 100; i++) sorted = sorted && ref[i] > ref[i - 1];
    CHECK(!sorted);
    const char *opts[] = {"batch_size=7, shuffle=True, seed=7, num_workers=1",
                          "batch_size=7, shuffle=True, seed=7, num_workers=2",
                          "batch_size=7, shuffle=True, seed=7, num_workers=3, prefetch_factor=1",
                          "batch_size=7, shuffle=True, seed=7, num_workers=3, prefetch_factor=5",
                          "batch_size=7, shuffle=True, seed=7"};
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
        memset(got, 0xff, sizeof got);
        CHECK(collect(ds, opts[k], 2, got, 200) == 200);
        CHECK_MSG(memcmp(ref, got, sizeof ref) == 0, "order differs with \"%s\"", opts[k]);
    }
    CHECK(collect(ds, "batch_size=7, shuffle=True, seed=8, num_workers=2", 1, got, 200) == 100);
    CHECK(memcmp(ref, got, 100 * sizeof *ref) != 0);  /* another seed, another order */
    /* without a seed the default generator decides: tn_manual_seed makes it repeat */
    tn_manual_seed(123);
    CHECK(collect(ds, "batch_size=10, shuffle=True", 1, ref, 200) == 100);
    tn_manual_seed(123);
    CHECK(collect(ds, "batch_size=10, shuffle=True, num_workers=2", 1, got, 200) == 100);
    CHECK(memcmp(ref, got, 100 * sizeof *ref) == 0);
    /* no shuffle, many workers: still in order */
    CHECK(collect(ds, "batch_size=3, num_workers=3", 1, got, 200) == 100);
    bool inorder = true;
    for (int i = 0; i < 100; i++) inorder = inorder && got[i] == i;
    CHECK(inorder);
    tn_dataset_free(ds);
    CHECK(tn_memory_stats_get().live_tensors == base_tensors);
}

/* A collate that sums the samples' x into one row and counts its calls. */
static int sum_collate(tn_tensor *const *samples, int64_t ns, int nitems, tn_tensor **batch, void *user) {
    __atomic_add_fetch((int *)user, 1, __ATOMIC_SEQ_CST);
    tn_tensor *acc = tn_zeros(TN_SHAPE(3), TN_F32);
    for (int64_t s = 0; s < ns; s++) acc = tn_add(acc, samples[s * nitems]);
    batch[0] = acc;
    batch[1] = tn_scalar_tensor((double)ns, TN_I64);
    return acc ? 0 : -1;
}

TEST(loader_collate) {
    tn_scope_begin();
    tn_dataset *ds = make_ds(10, NULL, NULL);
    int calls = 0;
    for (int nw = 0; nw <= 2; nw++) {
        char o[64];
        snprintf(o, sizeof o, "batch_size=4, num_workers=%d", nw);
        tn_loader *l = tn_loader_new_str(ds, o);
        CHECK(tn_loader_set_collate(l, sum_collate, &calls) == 0);
        tn_tensor *b[2];
        CHECK(tn_loader_next(l, b) == 1);
        /* x rows 0..3: (0,1,2)+(3,4,5)+(6,7,8)+(9,10,11) = (18, 22, 26) */
        CHECK(shape_is(b[0], TN_SHAPE(3)) && at(b[0], 0) == 18 && at(b[0], 2) == 26 && at(b[1], 0) == 4);
        CHECK_ERR(tn_loader_set_collate(l, NULL, NULL) == 0, "in the middle of an epoch");
        CHECK(tn_loader_next(l, b) == 1 && tn_loader_next(l, b) == 1 && at(b[1], 0) == 2 && at(b[0], 0) == 8 * 3 + 9 * 3);
        CHECK(tn_loader_next(l, b) == 0);
        CHECK(tn_loader_set_collate(l, NULL, NULL) == 0);  /* back to stacking */
        CHECK(tn_loader_next(l, b) == 1 && shape_is(b[0], TN_SHAPE(4, 3)));
        tn_loader_free(l);
    }
    CHECK(calls == 3);  /* the workers' calls count in their own processes */
    /* the default collate on its own, and its error */
    tn_tensor *s[4] = {tn_ones(TN_SHAPE(2), TN_F32), tn_scalar_tensor(1, TN_I64), tn_ones(TN_SHAPE(3), TN_F32), tn_scalar_tensor(2, TN_I64)};
    tn_tensor *b[2];
    CHECK_ERR(tn_default_collate(s, 2, 2, b, NULL) == 0, "tn_default_collate: stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
    s[2] = tn_zeros(TN_SHAPE(2), TN_F32);
    CHECK(tn_default_collate(s, 2, 2, b, NULL) == 0 && shape_is(b[0], TN_SHAPE(2, 2)) && at(b[1], 1) == 2 && at(b[0], 2) == 0);
    tn_dataset_free(ds);
    tn_scope_end();
}

/* A dataset whose sample `bad` fails through a library op (index out of range), whose
   sample `silent` fails without a message, and whose sample `ragged` has another shape;
   get takes a moment so that workers are busy when the loader is freed. */
typedef struct { tn_dataset base; tn_tensor *x; int64_t bad, silent, ragged; } flaky_ds;
static int64_t flaky_len(tn_dataset *d) { return tn_size(((flaky_ds *)d)->x, 0); }
static int flaky_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    flaky_ds *f = (flaky_ds *)d;
    volatile double spin = 0;
    for (int k = 0; k < 20000; k++) spin += k;
    if (i == f->silent || spin < 0) return -1;
    items[0] = tn_select(f->x, 0, i == f->bad ? 1000 : i);
    if (i == f->ragged) items[0] = tn_ones(TN_SHAPE(5), TN_F32);
    return items[0] ? 0 : -1;
}

TEST(loader_errors_and_free) {
    int64_t base_tensors = tn_memory_stats_get().live_tensors;
    tn_scope_begin();
    flaky_ds f = {{flaky_len, flaky_get, NULL, 1}, tn_reshape(tn_arange(0, 60, 1, TN_F32), TN_SHAPE(20, 3)), 13, -1, -1};
    for (int nw = 0; nw <= 3; nw++) {
        char o[80];
        snprintf(o, sizeof o, "batch_size=4, num_workers=%d", nw);
        tn_loader *l = tn_loader_new_str(&f.base, o);
        tn_tensor *b[1];
        int ok = 0, rc;
        for (int k = 0; k < 5; k++) {
            tn_clear_error();
            rc = tn_loader_next(l, b);
            if (rc == 1) ok++;
            if (k == 3) { /* batch 3 holds sample 13: the worker's message comes back here */
                CHECK(rc == -1 && b[0] == NULL);
                CHECK_MSG(strstr(tn_last_error(), "tn_loader_next: ") == tn_last_error(), "%s", tn_last_error());
                CHECK_MSG(strstr(tn_last_error(), "batch 3, sample 13: tn_select: index 1000 out of range"), "%s", tn_last_error());
                CHECK_MSG(nw == 0 || strstr(tn_last_error(), "worker "), "%s", tn_last_error());
            }
        }
        CHECK(ok == 4 && tn_loader_next(l, b) == 0);  /* the failed batch is skipped; the epoch ends */
        tn_loader_free(l);
    }
    f.bad = -1;
    f.silent = 6;
    tn_loader *l = tn_loader_new(&f.base, .batch_size = 4, .num_workers = 2);
    tn_tensor *b[1];
    CHECK(tn_loader_next(l, b) == 1);
    CHECK_ERR(tn_loader_next(l, b) == 1, "batch 1, sample 6: the dataset's get returned -1 for index 6 without an error message");
    tn_loader_free(l);
    f.silent = -1;
    f.ragged = 9;
    l = tn_loader_new(&f.base, .batch_size = 4);
    CHECK(tn_loader_next(l, b) == 1);
    CHECK(tn_loader_next(l, b) == 1);
    CHECK_ERR(tn_loader_next(l, b) == 1, "batch 2: tn_default_collate: stack expects each tensor to be equal size");
    tn_loader_free(l);
    f.ragged = -1;
    /* free mid-epoch, with workers busy and batches waiting in the slots */
    for (int nw = 1; nw <= 3; nw++) {
        char o[80];
        snprintf(o, sizeof o, "batch_size=2, shuffle=True, seed=1, num_workers=%d, prefetch_factor=3", nw);
        l = tn_loader_new_str(&f.base, o);
        CHECK(tn_loader_next(l, b) == 1 && tn_loader_next(l, b) == 1);
        tn_loader_free(l);
        l = tn_loader_new_str(&f.base, o);  /* and before the first batch */
        tn_loader_free(l);
    }
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == base_tensors);
}

/* ---- IDX ---- */
static void put_be32(unsigned char *p, uint32_t v) { p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16); p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v; }
/* An IDX file with the given type code, dims and raw big-endian data; extra bytes
   appended (or cut, when negative) to damage it. */
static void write_idx(const char *path, int type, const uint32_t *dims, int ndim, const void *data, size_t nbytes, long extra) {
    FILE *f = fopen(path, "wb");
    unsigned char h[4 + 4 * (TN_MAX_DIMS + 1)] = {0, 0, (unsigned char)type, (unsigned char)ndim};   /* up to one dim past the limit */
    for (int i = 0; i < ndim; i++) put_be32(h + 4 + 4 * i, dims[i]);
    fwrite(h, 1, 4 + 4 * (size_t)ndim, f);
    if (extra < 0) nbytes = (size_t)((long)nbytes + extra);
    fwrite(data, 1, nbytes, f);
    for (long i = 0; i < extra; i++) fputc(0x55, f);
    fclose(f);
}

TEST(idx_reader) {
    tn_scope_begin();
    /* uint8, 1-d */
    unsigned char u8[5] = {0, 1, 127, 200, 255};
    uint32_t d1[1] = {5};
    write_idx(tmp_path("u8.idx"), 0x08, d1, 1, u8, 5, 0);
    tn_tensor *t = tn_read_idx(tmp_path("u8.idx"));
    CHECK(t && tn_get_dtype(t) == TN_U8 && shape_is(t, TN_SHAPE(5)) && at(t, 2) == 127 && at(t, 4) == 255);
    /* int32, 2-d, negative values */
    int32_t i32v[6] = {-1, 2, -300000, 4, INT32_MIN, INT32_MAX};
    unsigned char be[64];
    for (int i = 0; i < 6; i++) put_be32(be + 4 * i, (uint32_t)i32v[i]);
    uint32_t d2[2] = {2, 3};
    write_idx(tmp_path("i32.idx"), 0x0C, d2, 2, be, 24, 0);
    t = tn_read_idx(tmp_path("i32.idx"));
    CHECK(t && tn_get_dtype(t) == TN_I32 && shape_is(t, TN_SHAPE(2, 3)));
    for (int i = 0; t && i < 6; i++) CHECK(((const int32_t *)tn_data_ptr(t))[i] == i32v[i]);
    /* float32, 3-d */
    float f32v[8] = {0.5f, -1.25f, 3e38f, -0.0f, 1e-40f, 7, 8, 9};
    for (int i = 0; i < 8; i++) { uint32_t u; memcpy(&u, &f32v[i], 4); put_be32(be + 4 * i, u); }
    uint32_t d3[3] = {2, 2, 2};
    write_idx(tmp_path("f32.idx"), 0x0D, d3, 3, be, 32, 0);
    t = tn_read_idx(tmp_path("f32.idx"));
    CHECK(t && tn_get_dtype(t) == TN_F32 && shape_is(t, TN_SHAPE(2, 2, 2)));
    for (int i = 0; t && i < 8; i++) CHECK(memcmp((const float *)tn_data_ptr(t) + i, &f32v[i], 4) == 0);
    /* float64, 4-d */
    double f64v[6] = {1.0 / 3, -2.5, 1e300, 4, 5, -6};
    for (int i = 0; i < 6; i++) { uint64_t u; memcpy(&u, &f64v[i], 8); put_be32(be + 8 * i, (uint32_t)(u >> 32)); put_be32(be + 8 * i + 4, (uint32_t)u); }
    uint32_t d4[4] = {1, 2, 1, 3};
    write_idx(tmp_path("f64.idx"), 0x0E, d4, 4, be, 48, 0);
    t = tn_read_idx(tmp_path("f64.idx"));
    CHECK(t && tn_get_dtype(t) == TN_F64 && shape_is(t, TN_SHAPE(1, 2, 1, 3)) && at(t, 0) == 1.0 / 3 && at(t, 2) == 1e300 && at(t, 5) == -6);
    /* int8 and int16 are widened to int32 */
    unsigned char i8[3] = {0x80, 0x7f, 0xff}, i16[4] = {0x80, 0x00, 0xff, 0xfe};
    uint32_t d5[1] = {3}, d6[1] = {2};
    write_idx(tmp_path("i8.idx"), 0x09, d5, 1, i8, 3, 0);
    write_idx(tmp_path("i16.idx"), 0x0B, d6, 1, i16, 4, 0);
    t = tn_read_idx(tmp_path("i8.idx"));
    CHECK(t && tn_get_dtype(t) == TN_I32 && at(t, 0) == -128 && at(t, 1) == 127 && at(t, 2) == -1);
    t = tn_read_idx(tmp_path("i16.idx"));
    CHECK(t && tn_get_dtype(t) == TN_I32 && at(t, 0) == -32768 && at(t, 1) == -2);
    /* an empty tensor, and a 0-d one */
    uint32_t dz[2] = {0, 7};
    write_idx(tmp_path("empty.idx"), 0x08, dz, 2, u8, 0, 0);
    t = tn_read_idx(tmp_path("empty.idx"));
    CHECK(t && shape_is(t, TN_SHAPE(0, 7)));
    write_idx(tmp_path("scalar.idx"), 0x08, NULL, 0, u8 + 3, 1, 0);
    t = tn_read_idx(tmp_path("scalar.idx"));
    CHECK(t && tn_ndim(t) == 0 && at(t, 0) == 200);

    /* damaged files */
    FILE *f = fopen(tmp_path("magic.idx"), "wb");
    fwrite("\x01\x00\x08\x01\x00\x00\x00\x01\x05", 1, 9, f);
    fclose(f);
    CHECK_ERR(tn_read_idx(tmp_path("magic.idx")), "is not an IDX file: bad magic 01 00 08 01");
    write_idx(tmp_path("type.idx"), 0x0A, d1, 1, u8, 5, 0);
    CHECK_ERR(tn_read_idx(tmp_path("type.idx")), "unknown IDX element type 0x0a");
    write_idx(tmp_path("short.idx"), 0x0C, d2, 2, be, 24, -3);
    CHECK_ERR(tn_read_idx(tmp_path("short.idx")), "is truncated: the header (dims [2, 3]) promises 24 bytes of data, the file has 21");
    write_idx(tmp_path("long.idx"), 0x08, d1, 1, u8, 5, 2);
    CHECK_ERR(tn_read_idx(tmp_path("long.idx")), "has 2 bytes after the 5 bytes of data");
    uint32_t huge[4] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 2};
    write_idx(tmp_path("huge.idx"), 0x0E, huge, 4, u8, 5, 0);
    CHECK_ERR(tn_read_idx(tmp_path("huge.idx")), "dims [4294967295, 4294967295, 4294967295, 2] have too many elements");
    uint32_t big[2] = {65536, 65536};
    write_idx(tmp_path("big.idx"), 0x0D, big, 2, u8, 5, 0);
    CHECK_ERR(tn_read_idx(tmp_path("big.idx")), "is truncated: the header (dims [65536, 65536]) promises 17179869184 bytes of data, the file has 5");
    uint32_t past[TN_MAX_DIMS + 1];   /* one dim past the limit */
    for (int k = 0; k <= TN_MAX_DIMS; k++) past[k] = 1;
    write_idx(tmp_path("past.idx"), 0x08, past, TN_MAX_DIMS + 1, u8, 1, 0);
    char want[64];
    snprintf(want, sizeof want, "has %d dims; tensor.h supports at most %d", TN_MAX_DIMS + 1, TN_MAX_DIMS);
    CHECK_ERR(tn_read_idx(tmp_path("past.idx")), want);
    f = fopen(tmp_path("hdr.idx"), "wb");
    fwrite("\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00", 1, 10, f);
    fclose(f);
    CHECK_ERR(tn_read_idx(tmp_path("hdr.idx")), "is truncated inside its header");
    f = fopen(tmp_path("tiny.idx"), "wb");
    fwrite("\x00\x00", 1, 2, f);
    fclose(f);
    CHECK_ERR(tn_read_idx(tmp_path("tiny.idx")), "is too short (2 bytes) for an IDX header");
    CHECK_ERR(tn_read_idx(tmp_path("missing.idx")), "cannot open");
    CHECK_ERR(tn_read_idx(tmpdir), "tn_read_idx: ");
    CHECK_ERR(tn_read_idx(NULL), "path is NULL");

#ifdef TENSOR_ZLIB
    /* the same int32 file through gzip */
    unsigned char raw[4 + 8 + 24] = {0, 0, 0x0C, 2};
    put_be32(raw + 4, 2);
    put_be32(raw + 8, 3);
    for (int i = 0; i < 6; i++) put_be32(raw + 12 + 4 * i, (uint32_t)i32v[i]);
    gzFile gz = gzopen(tmp_path("i32.idx.gz"), "wb");
    gzwrite(gz, raw, sizeof raw);
    gzclose(gz);
    t = tn_read_idx(tmp_path("i32.idx.gz"));
    CHECK(t && tn_get_dtype(t) == TN_I32 && shape_is(t, TN_SHAPE(2, 3)));
    for (int i = 0; t && i < 6; i++) CHECK(((const int32_t *)tn_data_ptr(t))[i] == i32v[i]);
    /* gzip data cut short, and a stream holding less data than the header says */
    f = fopen(tmp_path("i32.idx.gz"), "rb");
    unsigned char gzbuf[256];
    size_t gzn = fread(gzbuf, 1, sizeof gzbuf, f);
    fclose(f);
    f = fopen(tmp_path("cut.idx.gz"), "wb");
    fwrite(gzbuf, 1, gzn - 12, f);
    fclose(f);
    CHECK_ERR(tn_read_idx(tmp_path("cut.idx.gz")), "tn_read_idx: ");
    gz = gzopen(tmp_path("short.idx.gz"), "wb");
    gzwrite(gz, raw, sizeof raw - 4);
    gzclose(gz);
    CHECK_ERR(tn_read_idx(tmp_path("short.idx.gz")), "is truncated: the header promises 24 bytes of data, the file has 20");
    gz = gzopen(tmp_path("long.idx.gz"), "wb");
    gzwrite(gz, raw, sizeof raw);
    gzwrite(gz, "xyz", 3);
    gzclose(gz);
    CHECK_ERR(tn_read_idx(tmp_path("long.idx.gz")), "has at least 3 bytes after the 24 bytes of data");
#else
    f = fopen(tmp_path("fake.idx.gz"), "wb");
    fwrite("\x1f\x8b\x08\x00", 1, 4, f);
    fclose(f);
    CHECK_ERR(tn_read_idx(tmp_path("fake.idx.gz")), "is gzip-compressed; build with -DTENSOR_ZLIB and link -lz");
    printf("skipped: gzip IDX files (build with -DTENSOR_ZLIB -lz)\n");
#endif
    tn_scope_end();
}

/* ---- CSV ---- */
static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

TEST(csv_reader) {
    tn_scope_begin();
    write_text(tmp_path("a.csv"), "f1,f2,label,f3\n1.5,2,0,-3\n4,5e2,2,6\n\n7, 8 ,1,\"9\"\r\n");
    tn_tensor *y = NULL;
    tn_tensor *x = tn_read_csv(tmp_path("a.csv"), &y, .label_column = 2);
    CHECK(shape_is(x, TN_SHAPE(3, 3)) && tn_get_dtype(x) == TN_F32);
    CHECK(at(x, 0) == 1.5 && at(x, 2) == -3 && at(x, 4) == 500 && at(x, 7) == 8 && at(x, 8) == 9);
    int64_t three = 3;
    CHECK(shape_is(y, &three, 1) && tn_get_dtype(y) == TN_I64 && at(y, 0) == 0 && at(y, 1) == 2 && at(y, 2) == 1);
    /* by name, negative index, no labels pointer, float64 */
    x = tn_read_csv(tmp_path("a.csv"), &y, .label_name = "label", .dtype = TN_F64);
    CHECK(shape_is(x, TN_SHAPE(3, 3)) && tn_get_dtype(x) == TN_F64 && at(y, 1) == 2);
    x = tn_read_csv(tmp_path("a.csv"), &y, .label_column = -1);
    CHECK(shape_is(x, TN_SHAPE(3, 3)) && at(y, 0) == -3 && at(y, 2) == 9 && at(x, 2) == 0);
    x = tn_read_csv(tmp_path("a.csv"), NULL, .label_column = 2);
    CHECK(shape_is(x, TN_SHAPE(3, 3)));
    x = tn_read_csv(tmp_path("a.csv"), &y);
    CHECK(shape_is(x, TN_SHAPE(3, 4)) && y == NULL && at(x, 2) == 0);
    /* no header; other delimiters */
    write_text(tmp_path("b.csv"), "1;2;3\n4;5;6\n");
    x = tn_read_csv(tmp_path("b.csv"), NULL, .header = false, .delimiter = ";");
    CHECK(shape_is(x, TN_SHAPE(2, 3)) && at(x, 0) == 1 && at(x, 5) == 6);
    write_text(tmp_path("t.csv"), "a\tb\n1\t2\n");
    x = tn_read_csv(tmp_path("t.csv"), NULL, .delimiter = "\t");
    CHECK(shape_is(x, TN_SHAPE(1, 2)) && at(x, 1) == 2);
    write_text(tmp_path("s.csv"), "1 2 3\n4 5 6\n");
    x = tn_read_csv(tmp_path("s.csv"), NULL, .header = false, .delimiter = " ");
    CHECK(shape_is(x, TN_SHAPE(2, 3)) && at(x, 4) == 5);
    write_text(tmp_path("c.csv"), "a,b\n1,2\n");
    x = tn_read_csv(tmp_path("c.csv"), NULL, .delimiter = ",");
    CHECK(shape_is(x, TN_SHAPE(1, 2)));
    write_text(tmp_path("h.csv"), "a,b\n");
    x = tn_read_csv(tmp_path("h.csv"), NULL);
    CHECK(shape_is(x, TN_SHAPE(0, 2)));
    /* errors name the line and column */
    write_text(tmp_path("bad.csv"), "a,b,c\n1,2,3\n4,x5,6\n");
    CHECK_ERR(tn_read_csv(tmp_path("bad.csv"), NULL), "line 3, column 2: cannot parse 'x5' as a number");
    write_text(tmp_path("empty.csv"), "a,b,c\n1,,3\n");
    CHECK_ERR(tn_read_csv(tmp_path("empty.csv"), NULL), "line 2, column 2: cannot parse '' as a number");
    write_text(tmp_path("ragged.csv"), "a,b,c\n1,2,3\n4,5\n");
    CHECK_ERR(tn_read_csv(tmp_path("ragged.csv"), NULL), "line 3 has 2 columns, expected 3");
    write_text(tmp_path("lab.csv"), "a,y\n1,0\n2,1.5\n");
    CHECK_ERR(tn_read_csv(tmp_path("lab.csv"), &y, .label_column = 1), "line 3, column 2: label '1.5' is not an integer");
    write_text(tmp_path("quote.csv"), "a,b\n\"1,2\n");
    CHECK_ERR(tn_read_csv(tmp_path("quote.csv"), NULL), "line 2");
    write_text(tmp_path("none.csv"), "");
    CHECK_ERR(tn_read_csv(tmp_path("none.csv"), NULL), "has no lines");
    CHECK_ERR(tn_read_csv(tmp_path("a.csv"), &y, .label_name = "nope"), "no column named 'nope'");
    CHECK_ERR(tn_read_csv(tmp_path("a.csv"), &y, .label_column = 4), "label_column=4 is out of range for 4 columns");
    CHECK_ERR(tn_read_csv_str(tmp_path("a.csv"), &y, "sep=';'"), "unknown option 'sep'");
    CHECK_ERR(tn_read_csv(tmp_path("a.csv"), &y, .delimiter = "ab"), "expected one character");
    CHECK_ERR(tn_read_csv_str(tmp_path("a.csv"), &y, "dtype=int8"), "expected one of float32|float64");
    CHECK_ERR(tn_read_csv(tmp_path("nowhere.csv"), NULL), "cannot open");
    CHECK_ERR(tn_read_csv(tmpdir, NULL), "tn_read_csv: ");
    tn_scope_end();
}

/* ---- MNIST ---- */
TEST(mnist) {
    const char *dir = getenv("TN_FASHION_MNIST");
    if (!dir) dir = "data/fashion-mnist";
    char path[512];
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte.gz", dir);
        f = fopen(path, "rb");
    }
    tn_scope_begin();
    CHECK_ERR(tn_mnist_dataset(tmpdir), "no ");
    if (!f) {
        printf("skipped: MNIST checks (no %s/train-labels-idx1-ubyte; run tools/fetch_fashion_mnist.sh)\n", dir);
        tn_scope_end();
        return;
    }
    fclose(f);
    tn_dataset *ds = tn_mnist_dataset(dir);
    CHECK(ds && tn_dataset_len(ds) == 60000 && ds->nitems == 2);
    tn_tensor *it[2];
    CHECK(tn_dataset_get(ds, 0, it) == 0 && shape_is(it[0], TN_SHAPE(1, 28, 28)) && tn_get_dtype(it[0]) == TN_F32);
    CHECK(tn_ndim(it[1]) == 0 && tn_get_dtype(it[1]) == TN_I64);
    /* against the raw files: pixels / 255, the labels as stored (Fashion-MNIST's first is 9) */
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    f = fopen(path, "rb");
    unsigned char raw[16 + 784];
    if (f && fread(raw, 1, sizeof raw, f) == sizeof raw) {
        bool same = true;
        for (int j = 0; j < 784; j++) same = same && ((const float *)tn_data_ptr(it[0]))[j] == (float)raw[16 + j] / 255.0f;
        CHECK(same);
    }
    if (f) fclose(f);
    CHECK(at(it[1], 0) == 9);
    double lo = 1, hi = 0;
    for (int64_t i = 0; i < 60000; i += 997) {
        tn_scope_begin();
        CHECK(tn_dataset_get(ds, i, it) == 0);
        lo = fmin(lo, tn_item(tn_amin(it[0], NULL, 0)));
        hi = fmax(hi, tn_item(tn_amax(it[0], NULL, 0)));
        tn_scope_end();
    }
    CHECK(lo == 0 && hi == 1);
    /* through a shuffled loader on workers */
    tn_loader *l = tn_loader_new(ds, .batch_size = 256, .shuffle = true, .seed = 0, .num_workers = 2);
    CHECK(tn_loader_len(l) == 235);
    tn_tensor *b[2];
    for (int k = 0; k < 3; k++) {
        tn_scope_begin();
        CHECK(tn_loader_next(l, b) == 1 && shape_is(b[0], TN_SHAPE(256, 1, 28, 28)) && tn_size(b[1], 0) == 256);
        tn_scope_end();
    }
    tn_loader_free(l);
    tn_dataset_free(ds);
    tn_dataset *test = tn_mnist_dataset(dir, .train = false);
    CHECK(test && tn_dataset_len(test) == 10000);
    tn_dataset_free(test);
    tn_scope_end();
}

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tn_test_data_XXXXXX", t ? t : "/tmp");
    char cmd[600];
    if (!mkdtemp(tmpdir)) { printf("cannot make a temporary directory %s\n", tmpdir); return 1; }
    int64_t live = tn_memory_stats_get().live_tensors;
    RUN(tensor_dataset);
    RUN(subset_and_split);
    RUN(loader_batches);
    RUN(loader_shuffle_workers);
    RUN(loader_collate);
    RUN(loader_errors_and_free);
    RUN(idx_reader);
    RUN(csv_reader);
    RUN(mnist);
    tn_test_current = "leaks";
    CHECK_MSG(tn_memory_stats_get().live_tensors == live, "%lld tensors leaked", (long long)(tn_memory_stats_get().live_tensors - live));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return tn_test_report();
}
