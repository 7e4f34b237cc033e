/* Threads for the CPU kernels: how many an op gets (a work-size model, the machine's CPU
   budget) and the library's own pool that runs them.

   Why not OpenMP's runtime: a parallel region ends at a barrier every team thread must
   reach, and libgomp's waiting threads spin (300000 rounds by default, set from the
   environment before main). On a machine with other load one preempted or spinning thread
   stalls every region: an epoch measured 6.7x slower at 2 threads than at 1 (bench/RESULTS.md,
   "threads on a busy machine"). The pool below runs a job as numbered chunks that whichever
   thread is free claims; the submitting thread claims chunks too and never waits for a
   helper that has not started one, so a job costs at most what one thread would take plus
   the chunks helpers already hold. An idle helper polls briefly (TN_POOL_SPIN pause
   rounds), then keeps polling between sched_yield calls for up to TN_POOL_YIELD_US while
   its core is free, then sleeps on a condition variable: a sleeping helper takes 20-30 us
   to wake on a virtual machine, as long as many of a training step's jobs, while a polling
   one starts at once. A helper preempted inside its chunk still holds the
   submitter up; the pool watches for that: a job that took longer than its submitter alone
   would have (from the submitter's own chunks' time) is a strike, and two in a row send
   the next jobs inline for a while (longer each time it recurs, shorter as jobs go well),
   so on a loaded machine the threads back off instead of making things worse. Built with
   -fopenmp (the Makefile's default) or -DTN_THREADS the pool is on; -DTN_NO_THREADS or
   neither: one thread. */
#ifndef TN_PARALLEL_MIN
#define TN_PARALLEL_MIN 32768   /* work units (about one simple element op each) worth a thread */
#endif
#ifndef TN_POOL_SPIN
#define TN_POOL_SPIN 2000       /* pause rounds a waiting thread polls before it yields (tens of us) */
#endif
#ifndef TN_POOL_YIELD_US
#define TN_POOL_YIELD_US 1000   /* then microseconds it polls between sched_yield calls before it sleeps */
#endif
#define TN__POOL_MAX 256        /* threads at most (the submitting thread included) */
#if (defined(_OPENMP) || defined(TN_THREADS)) && !defined(TN_NO_THREADS) && (defined(__unix__) || defined(__APPLE__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define TN__POOL 1
#include <pthread.h>
#include <sched.h>
#include <time.h>
#endif

/* ---- the policy: pure functions of their inputs (tests/test_threads_policy.c) ---- */

/* Threads worth giving `work` units split into at most `parts` independent pieces with
   `max` threads available: each thread must get TN_PARALLEL_MIN units at least (below that,
   waking a helper costs more than it saves), and no more threads than pieces. */
static int tn__threads_for(double work, int64_t parts, int max) {
    if (max < 2 || parts < 2 || !(work >= 2.0 * TN_PARALLEL_MIN)) return 1;
    double t = work / TN_PARALLEL_MIN;
    int n = t < (double)max ? (int)t : max;
    return (int64_t)n < parts ? n : (int)parts;
}
/* CPUs in a Linux CPU list ("0-3,8,10-11", /proc/self/status's Cpus_allowed_list); 0 when
   the text is not one. */
static int tn__cpu_list_count(const char *s) {
    int n = 0;
    while (s && *s && *s != '\n') {
        char *e;
        long a = strtol(s, &e, 10), b = a;
        if (e == s || a < 0) return 0;
        if (*e == '-') {
            const char *f = e + 1;
            b = strtol(f, &e, 10);
            if (e == f || b < a) return 0;
        }
        n += (int)(b - a + 1 > 100000 ? 100000 : b - a + 1);
        if (*e == ',') e++;
        else if (*e && *e != '\n' && *e != ' ') return 0;
        s = e;
        while (*s == ' ') s++;
    }
    return n;
}
/* CPUs a CFS quota lets run at once: quota / period rounded down, at least 1; 0: no limit
   (quota <= 0, cgroup v1's -1). */
static int tn__quota_cpus(int64_t quota, int64_t period) {
    if (quota <= 0 || period <= 0) return 0;
    int64_t n = quota / period;
    return n < 1 ? 1 : n > TN__POOL_MAX ? TN__POOL_MAX : (int)n;
}
/* The same from cgroup v2's cpu.max text ("max 100000" or "150000 100000"); 0: no limit. */
static int tn__cpu_max_cpus(const char *s) {
    if (!s) return 0;
    while (*s == ' ') s++;
    if (!strncmp(s, "max", 3)) return 0;
    char *e;
    long long q = strtoll(s, &e, 10);
    if (e == s) return 0;
    long long p = strtoll(e, NULL, 10);
    return tn__quota_cpus((int64_t)q, p > 0 ? (int64_t)p : 100000);
}
/* The default thread count: the fewest of the CPUs online, the CPUs this process may run
   on (affinity) and the CPUs its container's quota runs at once (each 0 when unknown). */
static int tn__default_threads_of(int online, int affinity, int quota) {
    int n = online > 0 ? online : 1;
    if (affinity > 0 && affinity < n) n = affinity;
    if (quota > 0 && quota < n) n = quota;
    return n > TN__POOL_MAX ? TN__POOL_MAX : n;
}

/* Whether a job that took `total` seconds, its submitter `own` seconds for `own_chunks` of
   its nt chunks, was slower than the submitter alone (own / own_chunks per chunk) would
   have been: the threads made it worse. */
static bool tn__job_was_worse(double total, double own, int own_chunks, int nt) {
    if (own_chunks < 1 || own_chunks >= nt || !(own > 0)) return false;   /* all its own: the serial cost */
    return total > own / own_chunks * nt;
}
/* The back-off after a job's verdict: state[0] strikes in a row, state[1] jobs left to run
   inline, state[2] the next back-off's length (32 jobs, doubling while strikes recur, to
   4096; halved by each good job). */
static void tn__pool_backoff(int *state, bool worse) {
    if (state[2] < 32) state[2] = 32;
    if (!worse) {
        state[0] = 0;
        if (state[2] > 32) state[2] /= 2;
        return;
    }
    if (++state[0] < 2) return;
    state[0] = 0;
    state[1] = state[2];
    state[2] = state[2] < 4096 ? 2 * state[2] : 4096;
}

/* ---- the machine ---- */

/* The first line of `path` starting with `key` (the whole first line when key is ""), its
   text after the key into buf; false when there is none. */
static bool tn__read_line(const char *path, const char *key, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    bool ok = false;
    size_t kl = strlen(key);
    while (f && !ok && fgets(buf, (int)cap, f))
        if (!strncmp(buf, key, kl)) {
            memmove(buf, buf + kl, strlen(buf + kl) + 1);
            ok = true;
        }
    if (f) fclose(f);
    return ok;
}
/* The CPU quota of this process's cgroup (v2 cpu.max, else v1 cfs_quota_us), 0: none. */
static int tn__cgroup_quota_cpus(void) {
    char line[512], path[700];
    /* cgroup v2: "0::/the/group" names the group under /sys/fs/cgroup (just "/" in a
       container with its own cgroup namespace) */
    if (tn__read_line("/proc/self/cgroup", "0::", line, sizeof line)) {
        line[strcspn(line, "\n")] = 0;
        for (char *g = line; *g;) {   /* the group, then each parent: the tightest limit */
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", strcmp(g, "/") ? g : "");
            char text[128];
            int n = tn__read_line(path, "", text, sizeof text) ? tn__cpu_max_cpus(text) : 0;
            if (n > 0) return n;
            char *slash = strrchr(g, '/');
            if (!slash || slash == g) { if (!strcmp(g, "/")) break; g[1] = 0; continue; }
            *slash = 0;
        }
        return 0;
    }
    char q[64], p[64];
    if (tn__read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "", q, sizeof q) &&
        tn__read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "", p, sizeof p))
        return tn__quota_cpus((int64_t)strtoll(q, NULL, 10), (int64_t)strtoll(p, NULL, 10));
    return 0;
}
/* The default count: TN_NUM_THREADS or OMP_NUM_THREADS when set (as PyTorch honours the
   latter), else tn__default_threads_of this machine and process. */
static int tn__default_threads(void) {
    const char *env = getenv("TN_NUM_THREADS");
    if (!env || !*env) env = getenv("OMP_NUM_THREADS");
    if (env && *env) {
        long v = strtol(env, NULL, 10);   /* "4,2" (nested levels): the first */
        if (v > 0) return v > TN__POOL_MAX ? TN__POOL_MAX : (int)v;
    }
    int online = 0;
#if defined(__unix__) || defined(__APPLE__)
    online = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    char list[4096];
    int affinity = tn__read_line("/proc/self/status", "Cpus_allowed_list:", list, sizeof list) ? tn__cpu_list_count(list + strspn(list, " \t")) : 0;
    return tn__default_threads_of(online, affinity, tn__cgroup_quota_cpus());
}

/* ---- fork ---- */

/* A child forked while helpers existed has none of them (fork copies one thread) and may
   have copied the pool's lock held: as PyTorch, a forked child runs one thread. A
   pthread_atfork handler, registered before the first helper starts (every thread count
   comes from tn__max_threads), sets the flag. */
#ifdef TN__POOL
#define TN__FORK_GUARD 1
static volatile int tn__forked_child;
static void tn__atfork_child(void) { tn__forked_child = 1; }
static void tn__fork_guard_register(void) { pthread_atfork(NULL, NULL, tn__atfork_child); }
static pthread_once_t tn__fork_guard_once = PTHREAD_ONCE_INIT;
#endif
/* Whether this process was forked after the guard was set up: one thread then. */
static bool tn__in_forked_child(void) {
#ifdef TN__FORK_GUARD
    pthread_once(&tn__fork_guard_once, tn__fork_guard_register);
    return tn__forked_child != 0;
#else
    return false;
#endif
}

/* ---- the count ---- */

static int tn__threads_user;      /* tn_set_num_threads's count; 0: the default */
static int tn__threads_dflt;      /* the default, computed once */
#ifdef TN__POOL
static TN__TLS int tn__in_job;    /* this thread runs a chunk: nested jobs run inline */
#endif
/* The threads a job may use now: 1 without the pool, in a forked child or inside a job. */
static int tn__max_threads(void) {
#ifdef TN__POOL
    if (tn__in_forked_child() || tn__in_job) return 1;
    int u = __atomic_load_n(&tn__threads_user, __ATOMIC_RELAXED);
    if (u > 0) return u;
    int d = __atomic_load_n(&tn__threads_dflt, __ATOMIC_RELAXED);
    if (d <= 0) __atomic_store_n(&tn__threads_dflt, d = tn__default_threads(), __ATOMIC_RELAXED);
    return d;
#else
    (void)tn__in_forked_child; (void)tn__default_threads; (void)tn__threads_user; (void)tn__threads_dflt;
    (void)tn__job_was_worse; (void)tn__pool_backoff;
    return 1;
#endif
}
/* Threads for `work` units split into at most `parts` independent pieces, now. */
static int tn__par_threads(int64_t work, int64_t parts) { return tn__threads_for((double)work, parts, tn__max_threads()); }

/* ---- the pool ---- */

/* A job: fn(ctx, t, nt) for every chunk t in [0, nt), each exactly once, on any thread. */
typedef void (*tn__par_fn)(void *ctx, int t, int nt);
#ifdef TN__POOL
static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done_cv;    /* helpers sleep on wake; the submitter on done_cv */
    int helpers, sleeping;           /* started helpers; those asleep (under mu) */
    int busy;                        /* a job in flight: another submitter runs inline */
    uint64_t word;                   /* the job: generation << 32 | next unclaimed chunk */
    int nt, done;                    /* chunks in the job; chunks finished */
    int allow;                       /* helpers 0 .. allow-1 may take the job's chunks (the count now) */
    tn__par_fn fn;
    void *ctx;
    int backoff[3];                  /* tn__pool_backoff's state (the submitter's, under busy) */
} tn__pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, {0, 0, 0}};
static double tn__pool_now(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void tn__pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/* Wait for ready(arg) without sleeping: TN_POOL_SPIN pause rounds, then (yield) polls
   between sched_yield calls for TN_POOL_YIELD_US, until a sched_yield takes over 50 us: then
   another process had the core, and a thread that stays runnable takes a share of the
   machine that the submitting thread could have had (a CNN epoch with a busy process per
   core ran 1.4x slower at 2 threads than at 1): it goes to sleep instead. Returns whether
   it became ready. */
static bool tn__pool_poll(bool (*ready)(const void *), const void *arg, bool yield) {
    for (int i = 0; i < TN_POOL_SPIN; i++) {
        if (ready(arg)) return true;
        tn__pool_pause();
    }
    if (!yield || TN_POOL_YIELD_US <= 0) return ready(arg);
    double t = tn__pool_now();
    const double t_end = t + 1e-6 * TN_POOL_YIELD_US;
    for (;;) {
        if (ready(arg)) return true;
        sched_yield();
        const double t1 = tn__pool_now();
        if (t1 > t_end || t1 - t > 50e-6) return ready(arg);
        t = t1;
    }
}
static bool tn__pool_new_job(const void *seen) { return __atomic_load_n(&tn__pool.word, __ATOMIC_ACQUIRE) >> 32 != *(const uint64_t *)seen; }
static bool tn__pool_job_done(const void *nt) { return __atomic_load_n(&tn__pool.done, __ATOMIC_ACQUIRE) >= *(const int *)nt; }
/* Claim and run the chunks of generation gen left; a helper passes the generation it saw,
   so it never claims a chunk of a later job with an earlier job's fn (the claim fails).
   Returns the chunks this thread ran. */
static int tn__pool_work(uint64_t gen) {
    int ran = 0;
    for (;;) {
        uint64_t w = __atomic_load_n(&tn__pool.word, __ATOMIC_ACQUIRE);
        if (w >> 32 != gen) return ran;
        tn__par_fn fn = __atomic_load_n(&tn__pool.fn, __ATOMIC_RELAXED);
        void *ctx = __atomic_load_n(&tn__pool.ctx, __ATOMIC_RELAXED);
        int nt = __atomic_load_n(&tn__pool.nt, __ATOMIC_RELAXED);
        int t = (int)(uint32_t)w;
        if (t >= nt) return ran;
        /* a successful claim proves the job did not change since w was read (its chunk t
           was still open, so the job could not have finished), so fn, ctx, nt are its own */
        if (!__atomic_compare_exchange_n(&tn__pool.word, &w, w + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
        tn__in_job = 1;
        fn(ctx, t, nt);
        tn__in_job = 0;
        ran++;
        if (__atomic_add_fetch(&tn__pool.done, 1, __ATOMIC_ACQ_REL) == nt) {
            pthread_mutex_lock(&tn__pool.mu);   /* the last chunk: wake a sleeping submitter */
            pthread_cond_broadcast(&tn__pool.done_cv);
            pthread_mutex_unlock(&tn__pool.mu);
        }
    }
}
/* Helper `id` (0, 1, ... in start order): takes part in the jobs whose count admits it (a
   count lowered by tn_set_num_threads leaves the others asleep). */
static void *tn__pool_helper(void *arg) {
    const int id = (int)(intptr_t)arg;
    uint64_t seen = 0;
    bool idle = false;   /* the last job was not for this helper: sleep without polling */
    for (;;) {
        uint64_t gen = seen;
        if (!idle && tn__pool_poll(tn__pool_new_job, &seen, true)) gen = __atomic_load_n(&tn__pool.word, __ATOMIC_ACQUIRE) >> 32;
        if (gen == seen) {   /* then sleep: a waiting helper takes no CPU from anyone */
            pthread_mutex_lock(&tn__pool.mu);
            tn__pool.sleeping++;
            while ((gen = __atomic_load_n(&tn__pool.word, __ATOMIC_ACQUIRE) >> 32) == seen) pthread_cond_wait(&tn__pool.wake, &tn__pool.mu);
            tn__pool.sleeping--;
            pthread_mutex_unlock(&tn__pool.mu);
        }
        seen = gen;
        idle = id >= __atomic_load_n(&tn__pool.allow, __ATOMIC_RELAXED);   /* stored before the job's word */
        if (!idle) tn__pool_work(gen);
    }
    return NULL;
}
#endif
/* Run job fn on up to nt threads (nt chunks; nt from tn__par_threads). The submitting
   thread works too; it waits only for chunks a helper has already claimed. Inline, chunk
   by chunk, when nt < 2, inside a job, or while another thread's job holds the pool. */
static void tn__parallel(int nt, tn__par_fn fn, void *ctx) {
#ifdef TN__POOL
    int expect = 0;   /* a forked child never touches the pool: it has no helpers, and fork may have copied its lock held */
    if (nt > 1 && !tn__in_job && !tn__in_forked_child() && __atomic_compare_exchange_n(&tn__pool.busy, &expect, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        if (tn__pool.backoff[1] > 0) {   /* backing off: this one inline (as one job: nested ones too) */
            tn__pool.backoff[1]--;
            __atomic_store_n(&tn__pool.busy, 0, __ATOMIC_RELEASE);
            tn__in_job = 1;
            for (int t = 0; t < nt; t++) fn(ctx, t, nt);
            tn__in_job = 0;
            return;
        }
        const double t0 = tn__pool_now();
        const int max = tn__max_threads(), want = (nt < max ? nt : max) - 1;   /* helpers: the count's, not the chunks' */
        if (tn__pool.helpers < want) {   /* started as counts first need them */
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            pthread_t th;
            while (tn__pool.helpers < want && pthread_create(&th, &at, tn__pool_helper, (void *)(intptr_t)tn__pool.helpers) == 0) tn__pool.helpers++;
            pthread_attr_destroy(&at);
        }
        __atomic_store_n(&tn__pool.fn, fn, __ATOMIC_RELAXED);
        __atomic_store_n(&tn__pool.ctx, ctx, __ATOMIC_RELAXED);
        __atomic_store_n(&tn__pool.nt, nt, __ATOMIC_RELAXED);
        __atomic_store_n(&tn__pool.done, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&tn__pool.allow, want, __ATOMIC_RELAXED);
        uint64_t gen = (__atomic_load_n(&tn__pool.word, __ATOMIC_RELAXED) >> 32) + 1;
        if ((uint32_t)gen == 0) gen = 1;   /* helpers start having seen generation 0 */
        __atomic_store_n(&tn__pool.word, (gen & 0xffffffffu) << 32, __ATOMIC_RELEASE);
        pthread_mutex_lock(&tn__pool.mu);   /* wake the sleeping helpers (those the count leaves out sleep again) */
        if (tn__pool.sleeping > 0) pthread_cond_broadcast(&tn__pool.wake);
        pthread_mutex_unlock(&tn__pool.mu);
        const int own = tn__pool_work(gen & 0xffffffffu);
        const double t1 = tn__pool_now();
        /* every chunk is claimed now: wait for the helpers' (a moment polling, then asleep;
           not yielding: on a busy core that gives the job's own core away for a time slice) */
        if (!tn__pool_poll(tn__pool_job_done, &nt, false)) {
            pthread_mutex_lock(&tn__pool.mu);
            while (__atomic_load_n(&tn__pool.done, __ATOMIC_ACQUIRE) < nt) pthread_cond_wait(&tn__pool.done_cv, &tn__pool.mu);
            pthread_mutex_unlock(&tn__pool.mu);
        }
        tn__pool_backoff(tn__pool.backoff, tn__job_was_worse(tn__pool_now() - t0, t1 - t0, own, nt));
        __atomic_store_n(&tn__pool.busy, 0, __ATOMIC_RELEASE);
        return;
    }
#endif
    for (int t = 0; t < nt; t++) fn(ctx, t, nt);
}
/* A job over n items: chunk t of nt runs body(args, i0, i1) on its share [i0, i1) (the
   shares tn__split_at gives, so a body that depends only on its items gives the same bits
   for any count). */
typedef struct { void (*body)(void *args, int64_t i0, int64_t i1); void *args; int64_t n; } tn__range_job;
static void tn__range_chunk(void *p, int t, int nt) {
    const tn__range_job *j = (const tn__range_job *)p;
    int64_t i0 = tn__split_at(j->n, t, nt), i1 = tn__split_at(j->n, t + 1, nt);
    if (i1 > i0) j->body(j->args, i0, i1);
}
static void tn__parallel_range(int nt, int64_t n, void (*body)(void *args, int64_t i0, int64_t i1), void *args) {
    if (nt < 2 || n < 2) { if (n > 0) body(args, 0, n); return; }
    tn__range_job j = {body, args, n};
    tn__parallel(nt, tn__range_chunk, &j);
}

TNDEF void tn_set_num_threads(int n) {
    if (n > 0) {
#ifdef TN__POOL
        __atomic_store_n(&tn__threads_user, n > TN__POOL_MAX ? TN__POOL_MAX : n, __ATOMIC_RELAXED);
#endif
    }
}
TNDEF int tn_get_num_threads(void) { return tn__max_threads(); }   /* 1 in a forked child */
TNDEF bool tn_openmp_is_available(void) {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}
