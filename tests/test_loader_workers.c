/* Tests of the DataLoader's worker processes (tn_loader with num_workers > 0): batches
   equal num_workers=0's in the same order, batch k from worker k % num_workers, batches in
   shared memory, PyTorch's seeding (base_seed + worker id, once for persistent workers),
   worker_init_fn and tn_get_worker_info, a worker's error in the caller with its message,
   a killed worker or a timeout an error and not a hang, freeing mid-epoch reaps every
   worker and leaves no file descriptor, /dev/shm name or tensor behind. */
#define _POSIX_C_SOURCE 200809L /* getpid, kill, nanosleep, opendir */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Sample i of a probe: x = float64 (i, worker id or -1, pid, worker_init_fn calls, the
   first random draw after seeding), y = int64 (i, the worker's seed). fail_at fails
   through a library op, kill_at kills the worker (SIGKILL), exit_at exits it, sleep_at
   sleeps sleep_ms; each only in a worker. */
typedef struct {
    tn_dataset base;
    int64_t n, fail_at, kill_at, exit_at, sleep_at, sleep_ms;
} probe_ds;

static int init_calls;          /* in a worker: worker_init_fn's calls */
static double init_draw = -1;   /* in a worker: tn_rand right after seeding, drawn by worker_init_fn */

static int64_t probe_len(tn_dataset *d) { return ((probe_ds *)d)->n; }
static int probe_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    probe_ds *p = (probe_ds *)d;
    const tn_worker_info *w = tn_get_worker_info();
    if (w && i == p->kill_at) raise(SIGKILL);
    if (w && i == p->exit_at) _exit(7);
    if (w && i == p->sleep_at) {
        struct timespec ts = {p->sleep_ms / 1000, (p->sleep_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (w && i == p->fail_at) return tn_select(tn_zeros(TN_SHAPE(2), TN_F32), 0, 5) ? 0 : -1;
    double x[5] = {(double)i, w ? w->id : -1, (double)getpid(), init_calls, init_draw};
    int64_t y[2] = {i, w ? (int64_t)w->seed : -1};
    items[0] = tn_from_data(x, TN_SHAPE(5), TN_F64);
    items[1] = tn_from_data(y, TN_SHAPE(2), TN_I64);
    return items[0] && items[1] ? 0 : -1;
}
static probe_ds probe(int64_t n) {
    probe_ds p = {{probe_len, probe_get, NULL, 2}, n, -1, -1, -1, -1, 0};
    return p;
}

static int init_fn(int id, void *user) {
    init_calls++;
    init_draw = tn_item(tn_rand(TN_SHAPE(1), TN_F64));
    if (user && id == *(int *)user) {
        tn_select(tn_zeros(TN_SHAPE(3), TN_F32), 0, 9);   /* records "index 9 out of range" */
        return -1;
    }
    return 0;
}

static double at(tn_tensor *t, int64_t r, int64_t c) {
    tn_scope_begin();
    tn_tensor *f = tn_contiguous(tn_to_dtype(t, TN_F64));
    double v = f ? ((const double *)tn_data_ptr(f))[r * tn_size(t, -1) + c] : NAN;
    tn_scope_end();
    return v;
}

static int64_t at_i64(tn_tensor *t, int64_t r, int64_t c) {   /* exact, for seeds near 2^63 */
    tn_scope_begin();
    tn_tensor *f = tn_contiguous(t);
    int64_t v = ((const int64_t *)tn_data_ptr(f))[r * tn_size(t, -1) + c];
    tn_scope_end();
    return v;
}

static int open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* Files in /dev/shm named for a process of pids (src/io/shared.c's tensor_h.<pid>.<n>). */
static int shm_names(const int *pids, int npids) {
    int n = 0;
    DIR *d = opendir("/dev/shm");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        for (int k = 0; k < npids; k++) {
            char pre[64];
            snprintf(pre, sizeof pre, "tensor_h.%d.", pids[k]);
            if (!strncmp(e->d_name, pre, strlen(pre))) n++;
        }
    closedir(d);
    return n;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* All batches of `epochs` epochs: x rows into xs (5 per sample), y rows into ys (2 per
   sample), the batch sizes into sizes; the number of samples, or -1. */
static int64_t run_epochs(tn_dataset *ds, const char *opts, tn_worker_init_fn init, void *user, int epochs,
                          double *xs, int64_t *ys, int64_t *sizes, int64_t cap) {
    tn_loader *l = tn_loader_new_str(ds, opts);
    if (!l || (init && tn_loader_set_worker_init_fn(l, init, user))) { tn_loader_free(l); return -1; }
    int64_t n = 0, nb = 0;
    tn_scope_begin();
    for (int e = 0; e < epochs; e++) {
        tn_tensor *b[2];
        int rc;
        while ((rc = tn_loader_next(l, b)) == 1) {
            int64_t m = tn_ndim(b[0]) == 1 ? 1 : tn_size(b[0], 0);
            if (sizes) sizes[nb++] = m;
            if (!tn_is_shared(b[0]) || !tn_is_shared(b[1])) { n = -1; break; }
            for (int64_t s = 0; s < m && n < cap; s++, n++) {
                for (int c = 0; c < 5; c++) xs[5 * n + c] = tn_ndim(b[0]) == 1 ? at(b[0], 0, c) : at(b[0], s, c);
                for (int c = 0; c < 2; c++) ys[2 * n + c] = tn_ndim(b[1]) == 1 ? at_i64(b[1], 0, c) : at_i64(b[1], s, c);
            }
        }
        if (rc < 0 || n < 0) { n = -1; break; }
    }
    tn_scope_end();
    tn_loader_free(l);
    return n;
}

TEST(same_batches_as_no_workers) {
    int64_t base_tensors = tn_memory_stats_get().live_tensors;
    tn_scope_begin();
    tn_tensor *x = tn_reshape(tn_arange(0, 3 * 37, 1, TN_F32), TN_SHAPE(37, 3));
    tn_tensor *y = tn_arange(0, 37, 1, TN_I64);
    tn_tensor *xy[2] = {x, y};
    tn_dataset *tds = tn_tensor_dataset(xy, 2);
    const char *base[] = {"batch_size=5, shuffle=True, seed=3", "batch_size=4, drop_last=True",
                          "batch_size=None, shuffle=True, seed=1", "batch_size=50"};
    const char *extra[] = {", num_workers=1", ", num_workers=2", ", num_workers=3, prefetch_factor=1",
                           ", num_workers=2, prefetch_factor=5", ", num_workers=2, persistent_workers=True"};
    for (size_t o = 0; o < sizeof base / sizeof *base; o++) {
        /* two epochs of a TensorDataset: every batch equal to num_workers=0's, in order.
           Persistent workers: the first epoch only (as in PyTorch, their iterator draws its
           base seed once, so later shuffles differ from a loader that draws one per epoch) */
        for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
            char opts[160];
            snprintf(opts, sizeof opts, "%s%s", base[o], extra[k]);
            tn_loader *l = tn_loader_new_str(tds, opts), *r = tn_loader_new_str(tds, base[o]);
            int same = 1, batches = 0, shared = 1;
            const int epochs = strstr(opts, "persistent") ? 1 : 2;
            for (int e = 0; e < epochs; e++) {
                tn_tensor *a[2], *b[2];
                int ra, rb;
                while ((ra = tn_loader_next(r, a)) == 1 && (rb = tn_loader_next(l, b)) == 1) {
                    same = same && tn_equal(a[0], b[0]) && tn_equal(a[1], b[1]) && tn_get_dtype(b[1]) == TN_I64;
                    shared = shared && tn_is_shared(b[0]) && tn_is_shared(b[1]);
                    batches++;
                }
                same = same && ra == 0 && tn_loader_next(l, a) == 0;
            }
            CHECK_MSG(same && batches == epochs * tn_loader_len(r) && shared, "\"%s\": %d batches, same %d, shared %d",
                      opts, batches, same, shared);
            tn_loader_free(l);
            tn_loader_free(r);
        }
    }
    /* batch k comes from worker k % num_workers; the workers are other processes */
    probe_ds p = probe(23);
    static double xs[5 * 100];
    static int64_t ys[2 * 100], sizes[100];
    CHECK(run_epochs(&p.base, "batch_size=2, num_workers=3", NULL, NULL, 1, xs, ys, sizes, 100) == 23);
    int ok = 1;
    for (int i = 0; i < 23; i++) ok = ok && xs[5 * i] == i && xs[5 * i + 1] == (i / 2) % 3 && xs[5 * i + 2] != getpid();
    CHECK_MSG(ok, "sample order or worker assignment differs");
    CHECK(sizes[11] == 1);
    CHECK(tn_get_worker_info() == NULL);   /* the main process is no worker */
    tn_dataset_free(tds);
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == base_tensors);
}

TEST(seeding_as_pytorch) {
    probe_ds p = probe(12);
    static double xs[5 * 100];
    static int64_t ys[2 * 100];
    /* the loader's own generator: base_seed is its first int64 draw (mod 2^63); worker i
       runs manual_seed(base_seed + i), then worker_init_fn draws */
    tn_generator *g = tn_generator_new(42);
    uint64_t base = tn_generator_random64(g) & (uint64_t)INT64_MAX;
    tn_generator_free(g);
    CHECK(run_epochs(&p.base, "batch_size=2, shuffle=True, seed=42, num_workers=3", init_fn, NULL, 1, xs, ys, NULL, 100) == 12);
    int ok = 1;
    for (int i = 0; i < 12; i++) {
        int w = (int)xs[5 * i + 1];
        tn_manual_seed(base + (uint64_t)w);
        double draw = tn_item(tn_rand(TN_SHAPE(1), TN_F64));
        ok = ok && (uint64_t)ys[2 * i + 1] == base + (uint64_t)w && xs[5 * i + 3] == 1 && xs[5 * i + 4] == draw;
    }
    CHECK_MSG(ok, "worker seeds or their first draws differ from base_seed + id");
    /* the default generator: manual_seed decides; a new epoch, new workers, a new base seed */
    tn_manual_seed(5);
    uint64_t b1 = tn_generator_random64(NULL) & (uint64_t)INT64_MAX, b2 = tn_generator_random64(NULL) & (uint64_t)INT64_MAX;
    tn_manual_seed(5);
    CHECK(run_epochs(&p.base, "batch_size=3, num_workers=2", init_fn, NULL, 2, xs, ys, NULL, 100) == 24);
    ok = 1;
    for (int i = 0; i < 24; i++) ok = ok && (uint64_t)ys[2 * i + 1] == (i < 12 ? b1 : b2) + (uint64_t)xs[5 * i + 1];
    CHECK_MSG(ok, "per-epoch base seeds differ from the default generator's draws");
    CHECK(xs[2] != xs[5 * 12 + 2]);    /* worker 0 of epoch 2 is another process */
    /* persistent workers: one base seed, the same processes, worker_init_fn once each */
    tn_manual_seed(5);
    CHECK(run_epochs(&p.base, "batch_size=3, num_workers=2, persistent_workers=True", init_fn, NULL, 3, xs, ys, NULL, 100) == 36);
    ok = 1;
    for (int i = 0; i < 36; i++)
        ok = ok && (uint64_t)ys[2 * i + 1] == b1 + (uint64_t)xs[5 * i + 1] && xs[5 * i + 3] == 1 &&
             xs[5 * i + 2] == xs[5 * (i % 12) + 2];
    CHECK_MSG(ok, "persistent workers were restarted or reseeded");
    /* and the default generator moved by one base seed only (the next draw is b2) */
    CHECK((tn_generator_random64(NULL) & (uint64_t)INT64_MAX) == b2);
}

TEST(worker_errors) {
    int64_t base_tensors = tn_memory_stats_get().live_tensors;
    probe_ds p = probe(16);
    p.fail_at = 13;
    tn_loader *l = tn_loader_new(&p.base, .batch_size = 4, .num_workers = 2);
    tn_tensor *b[2];
    int ok = 0, rc;
    for (int k = 0; k < 4; k++) {
        tn_clear_error();
        rc = tn_loader_next(l, b);
        if (rc == 1) { ok++; tn_release(b[0]); tn_release(b[1]); }
        if (k == 3) {  /* batch 3 holds sample 13, loaded by worker 1 */
            CHECK(rc == -1 && b[0] == NULL && b[1] == NULL);
            CHECK_MSG(strstr(tn_last_error(), "tn_loader_next: worker 1, batch 3, sample 13: tn_select: index 5 out of range"),
                      "%s", tn_last_error());
        }
    }
    CHECK(ok == 3 && tn_loader_next(l, b) == 0);   /* the failed batch is skipped */
    CHECK(tn_loader_next(l, b) == 1);              /* the next epoch, with new workers */
    tn_release(b[0]); tn_release(b[1]);
    tn_loader_free(l);
    /* worker_init_fn fails in worker 1: each of its batches reports it */
    p.fail_at = -1;
    int bad = 1;
    l = tn_loader_new(&p.base, .batch_size = 4, .num_workers = 2);
    CHECK(tn_loader_set_worker_init_fn(l, init_fn, &bad) == 0);
    CHECK(tn_loader_next(l, b) == 1);
    tn_release(b[0]); tn_release(b[1]);
    CHECK_ERR(tn_loader_next(l, b) == 1, "worker 1: worker_init_fn returned -1: tn_select: index 9 out of range");
    CHECK_ERR(tn_loader_set_worker_init_fn(l, NULL, NULL) == 0, "cannot change worker_init_fn while workers run");
    CHECK(tn_loader_next(l, b) == 1);
    tn_release(b[0]); tn_release(b[1]);
    CHECK_ERR(tn_loader_next(l, b) == 1, "worker_init_fn returned -1");
    CHECK(tn_loader_next(l, b) == 0);
    tn_loader_free(l);
    /* option errors */
    CHECK_ERR(tn_loader_new(&p.base, .persistent_workers = true), "persistent_workers option needs num_workers > 0");
    CHECK_ERR(tn_loader_new(&p.base, .num_workers = 1, .timeout = -1), "timeout option should be non-negative");
    CHECK_ERR(tn_loader_new_str(&p.base, "num_workers=1, timeout=abc"), "timeout");
    CHECK(tn_memory_stats_get().live_tensors == base_tensors);
}

TEST(dead_worker_is_an_error) {
    int64_t base_tensors = tn_memory_stats_get().live_tensors;
    probe_ds p = probe(20);
    tn_tensor *b[2];
    for (int how = 0; how < 2; how++) {
        if (how == 0) p.kill_at = 9; else p.exit_at = 9;
        tn_loader *l = tn_loader_new(&p.base, .batch_size = 2, .num_workers = 3, .persistent_workers = true);
        int got = 0, rc;
        double t0 = now();
        while ((rc = tn_loader_next(l, b)) == 1) { got++; tn_release(b[0]); tn_release(b[1]); }
        /* batch 4 (samples 8, 9) never comes: worker 1 dies on it, seen at batch 2 at the earliest */
        CHECK(rc == -1 && got >= 2 && got <= 4 && now() - t0 < 10);
        if (how == 0) CHECK_MSG(strstr(tn_last_error(), "DataLoader worker (pid ") && strstr(tn_last_error(), "is killed by signal: Killed") &&
                                strstr(tn_last_error(), "worker 1, waiting for batch "), "%s", tn_last_error());
        else CHECK_MSG(strstr(tn_last_error(), "exited unexpectedly (worker 1, exit code 7, waiting for batch "), "%s", tn_last_error());
        /* the epoch is over; the next starts new workers */
        p.kill_at = p.exit_at = -1;
        got = 0;
        while ((rc = tn_loader_next(l, b)) == 1) { got++; tn_release(b[0]); tn_release(b[1]); }
        CHECK(rc == 0 && got == 10);
        tn_loader_free(l);
    }
    /* timeout: a batch slower than timeout seconds */
    p.sleep_at = 5;
    p.sleep_ms = 3000;
    tn_loader *l = tn_loader_new(&p.base, .batch_size = 2, .num_workers = 2, .timeout = 0.3);
    CHECK(tn_loader_next(l, b) == 1);
    tn_release(b[0]); tn_release(b[1]);
    CHECK(tn_loader_next(l, b) == 1);
    tn_release(b[0]); tn_release(b[1]);
    double t0 = now();
    CHECK_ERR(tn_loader_next(l, b) == 1, "DataLoader timed out after 0.3 seconds (worker 0, batch 2)");
    CHECK(now() - t0 < 2.5);
    tn_loader_free(l);
    CHECK(tn_memory_stats_get().live_tensors == base_tensors);
}

/* Each round reads the workers' pids from the batches (x[., 2]); the test runs in a forked
   child with no other children, so waitpid's ECHILD says that every worker was reaped. */
TEST(free_mid_epoch_reaps_workers) {
    int64_t base_tensors = tn_memory_stats_get().live_tensors;
    int fds = open_fds();
    probe_ds p = probe(40);
    p.sleep_ms = 400;
    for (int round = 0; round < 3; round++) {
        tn_loader *l = tn_loader_new(&p.base, .batch_size = 2, .num_workers = 3, .prefetch_factor = 2,
                                     .persistent_workers = round == 2);
        int pids[3] = {0, 0, 0};
        tn_tensor *b[2];
        for (int k = 0; k < 3; k++) {
            CHECK(tn_loader_next(l, b) == 1);
            pids[k] = (int)at(b[0], 0, 2);
            tn_release(b[0]); tn_release(b[1]);
        }
        if (round == 1) p.sleep_at = 10;   /* a worker busy in get as the loader goes (set in the parent: the next epoch's copy) */
        if (round == 1) {                  /* finish the epoch, start the next with a busy worker */
            while (tn_loader_next(l, b) == 1) { tn_release(b[0]); tn_release(b[1]); }
            CHECK(tn_loader_next(l, b) == 1);
            for (int k = 0; k < 3; k++) pids[k] = 0;
            tn_release(b[0]); tn_release(b[1]);
        }
        double t0 = now();
        tn_loader_free(l);
        CHECK(now() - t0 < 2.0);
        int alive = 0;
        for (int k = 0; k < 3; k++) if (pids[k] && (kill(pids[k], 0) == 0 || errno != ESRCH)) alive++;
        CHECK_MSG(alive == 0, "round %d: %d workers left after tn_loader_free", round, alive);
        CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD);
        CHECK(shm_names(pids, 3) == 0);
        p.sleep_at = -1;
    }
    /* a loader freed before its first batch, and one whose epoch ended */
    tn_loader_free(tn_loader_new(&p.base, .batch_size = 2, .num_workers = 2));
    CHECK(open_fds() == fds);          /* no socket or shared file left open */
    CHECK(tn_memory_stats_get().live_tensors == base_tensors);
}

/* Persistent workers over a dataset that grows between epochs: they are started anew
   with room for the longer order. */
TEST(persistent_dataset_grows) {
    probe_ds p = probe(10);
    tn_loader *l = tn_loader_new(&p.base, .batch_size = 3, .num_workers = 2, .persistent_workers = true);
    tn_tensor *b[2];
    int64_t seen = 0;
    tn_scope_begin();
    while (tn_loader_next(l, b) == 1) seen += tn_size(b[0], 0);
    p.n = 25;
    int ok = 1, rc;
    while ((rc = tn_loader_next(l, b)) == 1) {
        for (int64_t s = 0; s < tn_size(b[0], 0); s++) ok = ok && at(b[0], s, 0) == (double)(seen - 10 + s);
        seen += tn_size(b[0], 0);
    }
    tn_scope_end();
    CHECK(rc == 0 && seen == 35 && ok);
    tn_loader_free(l);
}

int main(void) {
    RUN_ISOLATED(same_batches_as_no_workers, 120);
    RUN_ISOLATED(seeding_as_pytorch, 60);
    RUN_ISOLATED(worker_errors, 60);
    RUN_ISOLATED(dead_worker_is_an_error, 60);
    RUN_ISOLATED(free_mid_epoch_reaps_workers, 60);
    RUN_ISOLATED(persistent_dataset_grows, 60);
    return tn_test_report();
}
