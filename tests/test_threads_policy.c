/* test_threads_policy.c — how many threads an op gets and how the pool runs them
 * (src/core/threads.c): the work-size model (small work stays on one thread, GEMMs by
 * their multiply-adds), the default count from the CPUs online, the affinity mask and the
 * cgroup quota (cpu.max, cfs_quota_us), TN_NUM_THREADS / OMP_NUM_THREADS; the pool: every
 * chunk once, nested jobs inline, a second submitter never waits for a busy pool, a job
 * whose helpers are slow finishes on the submitting thread, a forked child on one thread.
 * The test compiles the implementation itself (Makefile's SELF list) with TN_THREADS: the
 * pool is on, and the policy's static functions are in reach. */
#define _POSIX_C_SOURCE 200809L
#define TN_THREADS 1
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/wait.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

TEST(work_model) {
    const double U = TN_PARALLEL_MIN;
    CHECK(tn__threads_for(0, 100, 8) == 1);
    CHECK(tn__threads_for(U, 1 << 20, 8) == 1);          /* one unit's worth: not worth a helper */
    CHECK(tn__threads_for(2 * U - 1, 1 << 20, 8) == 1);
    CHECK(tn__threads_for(2 * U, 1 << 20, 8) == 2);
    CHECK(tn__threads_for(3.5 * U, 1 << 20, 8) == 3);    /* threads grow with the work */
    CHECK(tn__threads_for(1e12, 1 << 20, 8) == 8);       /* up to the count */
    CHECK(tn__threads_for(1e12, 5, 8) == 5);             /* and the independent pieces */
    CHECK(tn__threads_for(1e12, 1, 8) == 1);
    CHECK(tn__threads_for(1e12, 1 << 20, 1) == 1);
    CHECK(tn__threads_for(0.0 / 0.0, 1 << 20, 8) == 1);  /* NaN work: one thread */
    CHECK(tn__threads_for(-5, 1 << 20, 8) == 1);
}

TEST(gemm_model) {
    tn_set_num_threads(2);
    CHECK(tn__gemm_threads(64, 64, 64, 8) == 1);          /* 262144 multiply-adds: one thread */
    CHECK(tn__gemm_threads(64, 128, 256, 8) == 1);        /* 2.1e6 */
    CHECK(tn__gemm_threads(256, 256, 256, 8) == 2);       /* 1.7e7 */
    CHECK(tn__gemm_threads(8, 4096, 4096, 8) == 1);       /* one MR panel: nothing to split */
    tn_set_num_threads(1);
    CHECK(tn__gemm_threads(1024, 1024, 1024, 8) == 1);
}

TEST(elementwise_ops_decide) {
    tn_set_num_threads(2);
    CHECK(tn__par_threads(1000, 1000) == 1);              /* a small add */
    CHECK(tn__par_threads(1 << 20, (1 << 20) / 64) == 2);
    tn_set_num_threads(1);
    CHECK(tn__par_threads(1 << 20, (1 << 20) / 64) == 1);
}

TEST(cpu_lists) {
    CHECK(tn__cpu_list_count("0-3,8,10-11\n") == 7);
    CHECK(tn__cpu_list_count("0") == 1);
    CHECK(tn__cpu_list_count("5\n") == 1);
    CHECK(tn__cpu_list_count("0-1") == 2);
    CHECK(tn__cpu_list_count("") == 0);
    CHECK(tn__cpu_list_count("x") == 0);
    CHECK(tn__cpu_list_count("3-1") == 0);
    CHECK(tn__cpu_list_count("1,a") == 0);
}

TEST(cgroup_quota) {
    CHECK(tn__cpu_max_cpus("max 100000\n") == 0);         /* no limit */
    CHECK(tn__cpu_max_cpus("200000 100000\n") == 2);
    CHECK(tn__cpu_max_cpus("150000 100000") == 1);        /* 1.5 CPUs: one thread runs unthrottled */
    CHECK(tn__cpu_max_cpus("50000 100000") == 1);         /* at least one */
    CHECK(tn__cpu_max_cpus("400000 50000") == 8);
    CHECK(tn__cpu_max_cpus("") == 0);
    CHECK(tn__cpu_max_cpus(NULL) == 0);
    CHECK(tn__quota_cpus(-1, 100000) == 0);               /* cgroup v1: -1 is no limit */
    CHECK(tn__quota_cpus(300000, 100000) == 3);
    CHECK(tn__quota_cpus(300000, 0) == 0);
}

TEST(default_count) {
    CHECK(tn__default_threads_of(8, 4, 2) == 2);          /* the quota is tightest */
    CHECK(tn__default_threads_of(8, 3, 0) == 3);          /* the affinity mask */
    CHECK(tn__default_threads_of(8, 0, 0) == 8);          /* unknown: the CPUs online */
    CHECK(tn__default_threads_of(4, 6, 0) == 4);
    CHECK(tn__default_threads_of(0, 0, 0) == 1);
    CHECK(tn__default_threads_of(4, 0, 16) == 4);
    /* the environment overrides: TN_NUM_THREADS first, then OMP_NUM_THREADS */
    setenv("TN_NUM_THREADS", "3", 1);
    setenv("OMP_NUM_THREADS", "5", 1);
    CHECK(tn__default_threads() == 3);
    unsetenv("TN_NUM_THREADS");
    CHECK(tn__default_threads() == 5);
    setenv("OMP_NUM_THREADS", "4,2", 1);                  /* nested levels: the first */
    CHECK(tn__default_threads() == 4);
    unsetenv("OMP_NUM_THREADS");
    /* this machine: no more than its CPUs online nor its affinity mask */
    const int d = tn__default_threads(), online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    char list[4096];
    const int aff = tn__read_line("/proc/self/status", "Cpus_allowed_list:", list, sizeof list) ? tn__cpu_list_count(list + strspn(list, " \t")) : 0;
    CHECK(d >= 1 && d <= online);
    CHECK(aff == 0 || d <= aff);
    const int q = tn__cgroup_quota_cpus();
    CHECK(q == 0 || d <= q);
    printf("  this machine: %d online, affinity %d, quota %d -> %d threads\n", online, aff, q, d);
}

TEST(job_verdicts) {
    CHECK(tn__job_was_worse(3e-3, 1e-3, 1, 2));            /* waited 2 ms for a helper after 1 ms of its own */
    CHECK(!tn__job_was_worse(1.5e-3, 1e-3, 1, 2));         /* the helper took a bit longer: still a gain */
    CHECK(!tn__job_was_worse(5e-3, 1e-3, 2, 2));           /* ran every chunk itself: the serial cost */
    CHECK(!tn__job_was_worse(5e-3, 0, 0, 2));              /* the helpers ran all */
    CHECK(tn__job_was_worse(5e-3, 1e-3, 1, 3));            /* 3 chunks: alone it would take 3 ms */
    CHECK(!tn__job_was_worse(2.9e-3, 1e-3, 1, 3));
    int st[3] = {0, 0, 0};
    tn__pool_backoff(st, false);
    CHECK(st[0] == 0 && st[1] == 0 && st[2] == 32);
    tn__pool_backoff(st, true);                              /* one strike: nothing yet */
    CHECK(st[0] == 1 && st[1] == 0);
    tn__pool_backoff(st, false);                             /* a good job clears it */
    CHECK(st[0] == 0 && st[1] == 0);
    tn__pool_backoff(st, true);
    tn__pool_backoff(st, true);                              /* two in a row: 32 jobs inline */
    CHECK(st[0] == 0 && st[1] == 32 && st[2] == 64);
    st[1] = 0;
    tn__pool_backoff(st, true);
    tn__pool_backoff(st, true);                              /* again: longer */
    CHECK(st[1] == 64 && st[2] == 128);
    for (int i = 0; i < 20; i++) { st[1] = 0; tn__pool_backoff(st, true); tn__pool_backoff(st, true); }
    CHECK(st[1] == 4096 && st[2] == 4096);                   /* capped */
    tn__pool_backoff(st, false);
    CHECK(st[2] == 2048);                                    /* good jobs shorten it */
}

/* ---- the pool ---- */
static void pool_reset(void) { memset(tn__pool.backoff, 0, sizeof tn__pool.backoff); }
typedef struct { int hits[64]; pthread_t who[64]; int nested[64]; int sleep_ms; } job_t;
static void count_chunk(void *p, int t, int nt) {
    job_t *j = (job_t *)p;
    (void)nt;
    __atomic_add_fetch(&j->hits[t], 1, __ATOMIC_RELAXED);
    j->who[t] = pthread_self();
    j->nested[t] = tn_get_num_threads();   /* inside a job: 1 (nested jobs run inline) */
    if (j->sleep_ms) sleep_ms(j->sleep_ms);
}

TEST(every_chunk_once) {
    tn_set_num_threads(3);
    pool_reset();
    for (int round = 0; round < 200; round++) {
        job_t j;
        memset(&j, 0, sizeof j);
        const int nt = 1 + round % 7;
        tn__parallel(nt, count_chunk, &j);
        int ok = 1;
        for (int t = 0; t < 64; t++) ok &= j.hits[t] == (t < nt);
        for (int t = 0; t < nt; t++) ok &= j.nested[t] == (nt > 1 ? 1 : 3);
        if (!ok) { CHECK_MSG(0, "round %d: a chunk ran %s", round, "not exactly once"); return; }
    }
    tn_test_passed++;
    tn_set_num_threads(1);
}

/* the pool's helpers take chunks: with 2 threads and slow chunks, two threads ran them */
TEST(helpers_help) {
    tn_set_num_threads(2);
    pool_reset();
    job_t j;
    memset(&j, 0, sizeof j);
    j.sleep_ms = 50;
    const double t0 = now_s();
    tn__parallel(2, count_chunk, &j);
    const double s = now_s() - t0;
    CHECK(j.hits[0] == 1 && j.hits[1] == 1);
    CHECK(!pthread_equal(j.who[0], j.who[1]));   /* a helper ran one */
    CHECK(s < 0.095);                            /* side by side, not 2 x 50 ms */
    tn_set_num_threads(1);
}

/* A second submitter while a job holds the pool runs inline at once: it never waits for
   the other job (nor for helpers busy with it). */
static void *long_job(void *arg) {
    job_t *j = (job_t *)arg;
    tn__parallel(2, count_chunk, j);
    return NULL;
}
TEST(busy_pool_runs_inline) {
    tn_set_num_threads(2);
    pool_reset();
    job_t slow, quick;
    memset(&slow, 0, sizeof slow);
    memset(&quick, 0, sizeof quick);
    slow.sleep_ms = 300;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, long_job, &slow) == 0);
    sleep_ms(50);   /* the slow job holds the pool and both its threads */
    const double t0 = now_s();
    tn__parallel(4, count_chunk, &quick);
    const double s = now_s() - t0;
    CHECK(s < 0.15);
    for (int t = 0; t < 4; t++) CHECK(quick.hits[t] == 1 && pthread_equal(quick.who[t], pthread_self()));
    pthread_join(th, NULL);
    CHECK(slow.hits[0] == 1 && slow.hits[1] == 1);
    tn_set_num_threads(1);
}

/* A count lowered after more helpers started: a job runs on that many threads at most (the
   extra helpers, polling or asleep, take none of its chunks). */
static void slow_chunk(void *p, int t, int nt) {
    job_t *j = (job_t *)p;
    (void)nt;
    j->who[t] = pthread_self();
    sleep_ms(3);
}
TEST(lowered_count_uses_fewer_threads) {
    tn_set_num_threads(4);
    pool_reset();
    job_t j;
    memset(&j, 0, sizeof j);
    tn__parallel(8, slow_chunk, &j);   /* starts 3 helpers */
    for (int n = 2; n >= 1; n--) {
        tn_set_num_threads(n);
        for (int round = 0; round < 20; round++) {
            memset(&j, 0, sizeof j);
            tn__parallel(8, slow_chunk, &j);
            int distinct = 0;
            for (int t = 0; t < 8; t++) {
                int seen = 0;
                for (int u = 0; u < t; u++) seen |= pthread_equal(j.who[u], j.who[t]);
                distinct += !seen;
            }
            CHECK(distinct <= n);
        }
    }
    pool_reset();
    tn_set_num_threads(1);
}

/* A helper that stalls inside its chunk (as one preempted on a loaded machine does): two
   such jobs and the pool runs the next ones inline, on the submitting thread. */
static void stall_chunk(void *p, int t, int nt) {
    job_t *j = (job_t *)p;
    (void)t; (void)nt;
    if (!pthread_equal(pthread_self(), j->who[63])) sleep_ms(40);   /* who[63]: the submitter */
    else sleep_ms(2);
}
TEST(stalled_helpers_back_off) {
    tn_set_num_threads(2);
    pool_reset();
    job_t j;
    memset(&j, 0, sizeof j);
    j.who[63] = pthread_self();
    int strikes = 0;
    for (int i = 0; i < 2; i++) {
        const double t0 = now_s();
        tn__parallel(2, stall_chunk, &j);
        strikes += now_s() - t0 > 0.030;   /* a helper took a chunk and stalled */
    }
    if (strikes == 2) {   /* (a helper may not have woken in time: then the submitter ran both) */
        CHECK(tn__pool.backoff[1] == 32);
        job_t k;
        memset(&k, 0, sizeof k);
        tn__parallel(2, count_chunk, &k);
        CHECK(pthread_equal(k.who[0], pthread_self()) && pthread_equal(k.who[1], pthread_self()));
        CHECK(tn__pool.backoff[1] == 31);
    } else {
        CHECK(tn__pool.backoff[1] == 0);
        printf("  stalled_helpers_back_off: %d of 2 jobs reached a helper; the back-off was not exercised\n", strikes);
    }
    pool_reset();
    tn_set_num_threads(1);
}

/* Results through the pool against one thread: a GEMM, layer norm, cross-entropy, an
   optimizer step (the sites test_threads does not cover), bit for bit. */
static bool same_bits(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || tn_numel(a) != tn_numel(b)) return false;
    tn_tensor *ca = tn_contiguous(a), *cb = tn_contiguous(b);
    return !memcmp(tn_data_ptr(ca), tn_data_ptr(cb), (size_t)tn_numel(a) * tn_dtype_size(tn_get_dtype(a)));
}
static tn_tensor *step_results(tn_tensor *x, tn_tensor *w, tn_tensor *tgt) {
    tn_tensor *xl = tn_detach(x), *wl = tn_detach(tn_clone(w));
    tn_requires_grad_(xl, true);
    tn_requires_grad_(wl, true);
    tn_tensor *h = tn_layer_norm(tn_matmul(xl, wl), TN_SHAPE(512));
    tn_tensor *loss = tn_cross_entropy(h, tgt);
    tn_backward(loss);
    tn_tensor *params[1] = {wl};
    tn_optim *opt = tn_optim_adamw(params, 1, .lr = 1e-2);
    tn_optim_step(opt);
    tn_optim_free(opt);
    return tn_cat(((tn_tensor *[]){tn_flatten(h), tn_flatten(tn_grad(xl)), tn_flatten(wl)}), 3);
}
TEST(pool_sites_same_bits) {
    tn_scope_begin();   /* everything below is released at its end */
    tn_manual_seed(1);
    tn_tensor *x = tn_randn(TN_SHAPE(256, 384), TN_F32), *w = tn_randn(TN_SHAPE(384, 512), TN_F32);
    tn_tensor *tgt = tn_randint(0, 512, TN_SHAPE(256), TN_I64, NULL);
    tn_set_num_threads(1);
    tn_tensor *r1 = step_results(x, w, tgt);
    for (int t = 2; t <= 3; t++) {
        tn_set_num_threads(t);
        CHECK_MSG(same_bits(r1, step_results(x, w, tgt)), "%d threads differ from 1", t);
    }
    tn_set_num_threads(1);
    tn_scope_end();
}

/* A child forked after the pool ran: one thread, and jobs still finish (inline). */
TEST(forked_child_one_thread) {
    tn_set_num_threads(2);
    job_t j;
    memset(&j, 0, sizeof j);
    tn__parallel(2, count_chunk, &j);   /* the helpers exist now */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        job_t c;
        memset(&c, 0, sizeof c);
        tn__parallel(2, count_chunk, &c);
        tn_tensor *s = tn_sum(tn_ones(TN_SHAPE(1 << 20), TN_F32));
        _exit((tn_get_num_threads() != 1) | (c.hits[0] != 1) << 1 | (c.hits[1] != 1) << 2 | (!s || tn_item(s) != (double)(1 << 20)) << 3);
    }
    int status = 0;
    const bool waited = pid > 0 && waitpid(pid, &status, 0) == pid;
    CHECK_MSG(waited && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child: %s %d (exit bits: 1 thread count, 2/4 a chunk not once, 8 the sum)",
              !waited ? "not waited for" : WIFEXITED(status) ? "exit" : "signal", !waited ? 0 : WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    tn_set_num_threads(1);
}

int main(void) {
    alarm(120);   /* a hang in the pool fails the run instead of stalling it */
    RUN(work_model);
    RUN(gemm_model);
    RUN(elementwise_ops_decide);
    RUN(cpu_lists);
    RUN(cgroup_quota);
    RUN(default_count);
    RUN(job_verdicts);
    RUN(every_chunk_once);
    RUN(helpers_help);
    RUN(busy_pool_runs_inline);
    RUN(stalled_helpers_back_off);
    RUN(lowered_count_uses_fewer_threads);
    RUN(pool_sites_same_bits);
    RUN(forked_child_one_thread);
    return tn_test_report();
}
