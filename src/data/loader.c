/* ---- DataLoader ----
   The caller's process owns the epoch (the sample order, drawn from the generator at its
   start); batch k is samples order[k*bs, (k+1)*bs). num_workers=0 loads each batch in the
   caller's thread when it is asked for. num_workers > 0 forks that many worker PROCESSES
   (PyTorch's model: a dataset's get and the collate run with no lock, no shared state and
   no GIL-like contention; a crash in one is an error here, not the end of the program):

   - tasks: batch k goes to worker k % num_workers (round robin, as PyTorch's for a
     map-style dataset), at most prefetch_factor * num_workers batches ahead of the one the
     caller waits for. A task is the batch number and the epoch's length; the sample order
     lies in a shared anonymous mapping the parent writes between epochs, when no task is
     in flight.
   - results: a worker loads and collates the batch, moves each batch tensor into shared
     memory (src/io/shared.c) and sends it over its socket as a file descriptor
     (tn_shared_send); the caller maps the same pages (tn_shared_recv): batch data is never
     copied through the socket. Each worker answers its tasks in order, so batch k is the
     next message on worker k % num_workers's socket: delivery is in order with no
     reordering buffer. A failed batch comes back as the worker's message.
   - a worker that dies is seen as the end of its socket (it holds the only other end),
     a worker that takes longer than `timeout` seconds as a timeout; either is an error
     that shuts the workers down and ends the epoch (the next call starts a new one).
   - workers start with the epoch and exit at its end; with persistent_workers they start
     with the first epoch and serve every epoch until tn_loader_free, which kills and
     reaps them at any point (SIGTERM, held off while a worker creates a shared file, so
     no name is left in /dev/shm).
   - seeding as PyTorch's: each iterator draws a base seed from the loader's generator (a
     persistent loader only for its first epoch); worker i runs tn_manual_seed(base + i)
     before worker_init_fn, and tn_get_worker_info() says who it is. */
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_FORK 1
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#ifndef __cplusplus
int kill(pid_t pid, int sig);          /* POSIX, hidden by -std=c11 without _POSIX_C_SOURCE */
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0                 /* macOS: SIGPIPE is ignored in the workers anyway */
#endif
#endif

typedef struct tn__loader_task { int64_t type, batch, n; } tn__loader_task;   /* type: 1 load, 0 exit */
typedef struct tn__loader_reply { int64_t batch; int32_t rc, nitems; char err[1024]; } tn__loader_reply;

struct tn_loader {
    tn_dataset *ds;
    int nitems;
    int64_t batch_size;        /* 0: batch_size=None */
    bool shuffle, drop_last, persistent;
    int num_workers, prefetch_factor;
    double timeout;            /* seconds; 0: wait for ever */
    tn_generator *gen;         /* owned; NULL: the default generator */
    tn_collate_fn collate;     /* NULL: the default */
    void *collate_user;
    tn_worker_init_fn init;
    void *init_user;
    bool in_epoch;
    int64_t n, nbatches, *order, next, dispatched;
    int cap;                   /* batches in flight at most */
    /* worker processes: running while nrunning > 0 */
    int nrunning;
    int *pid, *sock;           /* num_workers of each; sock: the parent's end */
    uint64_t base_seed;
    tn_tensor *shorder;        /* the order in shared memory, which forked workers see */
    tn_tensor **items;         /* nitems: the batch being loaded (num_workers=0) */
};

static tn_worker_info tn__worker_info;
static bool tn__is_worker;

TNDEF const tn_worker_info *tn_get_worker_info(void) { return tn__is_worker ? &tn__worker_info : NULL; }
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
        if (!(batch[k] = TN__AS("tn_default_collate", tn_stack(col, (int)nsamples)))) break;
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

static int64_t tn__loader_nbatches(const tn_loader *l, int64_t n) {
    if (!l->batch_size) return n;
    return l->drop_last ? n / l->batch_size : n / l->batch_size + (n % l->batch_size != 0);
}

#if TN__HAVE_FORK
/* send() of one whole message, without SIGPIPE when the other end is gone; 0 or -1. */
static int tn__loader_send(int sock, const void *p, size_t n, int flags) {
    ssize_t w;
    do w = send(sock, p, n, MSG_NOSIGNAL | flags); while (w < 0 && errno == EINTR);
    return w == (ssize_t)n ? 0 : -1;
}

/* SIGTERM ends a worker at once, except while it creates a shared file (named for a
   moment): then as soon as that is done, so a loader freed at that moment leaves no name
   in /dev/shm. */
static volatile sig_atomic_t tn__worker_hold, tn__worker_term;
static void tn__worker_on_term(int sig) {
    (void)sig;
    if (tn__worker_hold) tn__worker_term = 1;
    else _exit(0);
}

/* A batch tensor as a worker sends it (retained; NULL with an error): a compact copy when
   it views a larger storage (a sample of a TensorDataset is a view of the whole dataset),
   in shared memory. */
static tn_tensor *tn__loader_shareable(tn_tensor *t) {
    int64_t bytes = tn_numel(t) * (int64_t)tn_dtype_size(t->dtype);
    tn_scope_begin();
    if (t->offset || !tn_is_contiguous(t) || (int64_t)t->storage->nbytes != bytes || tn_requires_grad(t))
        t = tn_clone(tn_detach(t));
    tn__worker_hold = 1;
    t = t ? tn_share_memory_(t) : NULL;
    tn__worker_hold = 0;
    if (tn__worker_term) _exit(0);
    tn_retain(t);
    tn_scope_end();
    return t;
}

/* A worker process: seed, worker_init_fn, then one reply per task until the exit task or
   the end of its socket (the parent is gone). Never returns. */
static void tn__loader_worker_main(tn_loader *l, int id, int sock) {
    signal(SIGINT, SIG_IGN);           /* Ctrl-C is the main process's to handle, as in PyTorch */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, tn__worker_on_term);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);  /* no orphans if the parent is killed */
#endif
    const uint64_t seed = l->base_seed + (uint64_t)id;
    tn__is_worker = true;
    tn__worker_info.id = id;
    tn__worker_info.num_workers = l->num_workers;
    tn__worker_info.seed = seed;
    tn__worker_info.dataset = l->ds;
    tn_manual_seed(seed);
    char init_err[sizeof ((tn__loader_reply *)0)->err] = "";
    if (l->init) {
        unsigned before = tn__nerrors;
        tn__quiet++;
        tn_scope_begin();
        int rc = l->init(id, l->init_user);
        tn_scope_end();
        tn__quiet--;
        if (rc) snprintf(init_err, sizeof init_err, "worker %d: worker_init_fn returned %d: %.900s", id, rc,
                         tn__nerrors != before ? tn__errbuf : "(no error message)");
    }
    tn_tensor **items = (tn_tensor **)TN_MALLOC((size_t)l->nitems * sizeof *items);
    tn__loader_reply *r = (tn__loader_reply *)TN_MALLOC(sizeof *r);
    if (!items || !r) _exit(3);
    for (;;) {
        tn__loader_task t;
        ssize_t got;
        do got = recv(sock, &t, sizeof t, 0); while (got < 0 && errno == EINTR);
        if (got != (ssize_t)sizeof t || t.type != 1) _exit(0);
        memset(r, 0, sizeof *r);
        r->batch = t.batch;
        r->nitems = l->nitems;
        l->order = (int64_t *)tn_data_ptr(l->shorder);
        l->n = t.n;
        if (init_err[0]) {
            r->rc = -1;
            memcpy(r->err, init_err, sizeof r->err);
        } else {
            r->rc = tn__loader_load(l, t.batch, items, r->err, sizeof r->err, id) ? -1 : 0;
        }
        /* into shared memory before the reply, so that a failure (a full /dev/shm) is the reply */
        tn__quiet++;
        for (int k = 0; k < l->nitems && r->rc == 0; k++) {
            tn_tensor *s = tn__loader_shareable(items[k]);
            if (!s) {
                snprintf(r->err, sizeof r->err, "worker %d, batch %lld: %.900s", id, (long long)t.batch, tn__errbuf);
                r->rc = -1;
                for (int j = 0; j < l->nitems; j++) tn_release(items[j]);   /* shared ones before k, loaded ones after */
                break;
            }
            tn_release(items[k]);
            items[k] = s;
        }
        tn__quiet--;
        if (tn__loader_send(sock, r, sizeof *r, 0)) _exit(0);
        if (r->rc) continue;
        for (int k = 0; k < l->nitems; k++) {
            if (tn_shared_send(sock, items[k])) _exit(0);   /* the parent is gone */
            tn_release(items[k]);
        }
    }
}

static double tn__now(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);      /* C11's clock (clock_gettime is hidden under -std=c11) */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *tn__signal_name(int sig) {
    switch (sig) {
    case SIGKILL: return "Killed";
    case SIGTERM: return "Terminated";
    case SIGSEGV: return "Segmentation fault";
    case SIGABRT: return "Aborted";
    case SIGBUS:  return "Bus error";
    case SIGFPE:  return "Floating point exception";
    case SIGILL:  return "Illegal instruction";
    default:      return "a signal";
    }
}

/* Ends every worker: closes the sockets (a waiting worker exits), SIGTERM (a busy one),
   SIGKILL for one still there after a second; reaps them all. */
static void tn__loader_stop_workers(tn_loader *l) {
    for (int i = 0; i < l->nrunning; i++) {
        if (l->sock[i] >= 0) close(l->sock[i]);
        l->sock[i] = -1;
        if (l->pid[i] > 0) kill(l->pid[i], SIGTERM);
    }
    double deadline = tn__now() + 1.0;
    for (int i = 0; i < l->nrunning; i++) {
        while (l->pid[i] > 0) {
            pid_t w = waitpid(l->pid[i], NULL, WNOHANG);
            if (w == l->pid[i] || (w < 0 && errno != EINTR)) { l->pid[i] = 0; break; }
            if (tn__now() > deadline) { kill(l->pid[i], SIGKILL); waitpid(l->pid[i], NULL, 0); l->pid[i] = 0; break; }
            poll(NULL, 0, 1);
        }
    }
    l->nrunning = 0;
}

/* Forks the workers for an epoch (the order already in shorder); 0 or -1 with an error. */
static int tn__loader_start_workers(tn_loader *l) {
    fflush(NULL);                      /* nothing buffered is written twice */
    for (int i = 0; i < l->num_workers; i++) {
        int sv[2];
#ifdef SOCK_SEQPACKET
        const int kind = SOCK_SEQPACKET;   /* message boundaries, in order, reliable */
#else
        const int kind = SOCK_DGRAM;
#endif
        if (socketpair(AF_UNIX, kind, 0, sv)) {
            int e = errno;
            tn__loader_stop_workers(l);
            return TN__FAIL_INT("tn_loader_next: cannot create a socket for worker %d: %s", i, strerror(e));
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(sv[0]);
            for (int j = 0; j < i; j++) close(l->sock[j]);   /* only the parent may hold the other ends */
            tn__loader_worker_main(l, i, sv[1]);
        }
        close(sv[1]);
        if (pid < 0) {
            int e = errno;
            close(sv[0]);
            tn__loader_stop_workers(l);
            return TN__FAIL_INT("tn_loader_next: cannot start worker process %d of %d: %s", i, l->num_workers, strerror(e));
        }
        fcntl(sv[0], F_SETFD, FD_CLOEXEC);
        l->pid[i] = pid;
        l->sock[i] = sv[0];
        l->nrunning = i + 1;
    }
    return 0;
}

/* The workers' failure: shut them down, end the epoch, record the message. -1. */
static int tn__loader_fail(tn_loader *l, const char *msg) {
    tn__loader_stop_workers(l);
    l->in_epoch = false;
    return TN__FAIL_INT("tn_loader_next: %s", msg);
}

/* recv of one message of worker w with the loader's timeout: its size, 0 when the worker
   is gone, -1 on timeout or error (message in err). */
static ssize_t tn__loader_recv(tn_loader *l, int w, void *buf, size_t cap, char *err, size_t errcap) {
    double deadline = l->timeout > 0 ? tn__now() + l->timeout : 0;
    struct pollfd p = {l->sock[w], POLLIN, 0};
    for (;;) {
        int ms = -1;
        if (l->timeout > 0) {
            double left = deadline - tn__now();
            if (left <= 0) {
                snprintf(err, errcap, "DataLoader timed out after %g seconds (worker %d, batch %lld)", l->timeout, w, (long long)l->next);
                return -1;
            }
            ms = (int)(left * 1000) + 1;
        }
        int rc = poll(&p, 1, ms);
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0) { snprintf(err, errcap, "poll on worker %d's socket: %s", w, strerror(errno)); return -1; }
        if (rc == 0) continue;
        if (!buf) return 1;            /* readable: a tensor for tn_shared_recv */
        ssize_t n;
        do n = recv(l->sock[w], buf, cap, 0); while (n < 0 && errno == EINTR);
        if (n < 0 && errno == ECONNRESET) return 0;   /* died with our task unread: ended, as at EOF */
        if (n < 0) { snprintf(err, errcap, "recv from worker %d: %s", w, strerror(errno)); return -1; }
        return n;
    }
}

/* What became of worker w, whose socket ended: its pid and exit. */
static void tn__loader_dead(tn_loader *l, int w, char *err, size_t errcap) {
    int status = 0;
    pid_t pid = l->pid[w], r;
    for (int tries = 0; tries < 1000; tries++) {   /* the socket closes a moment before the exit is reported */
        r = waitpid(pid, &status, WNOHANG);
        if (r != 0) break;
        poll(NULL, 0, 1);
    }
    if (r == pid) l->pid[w] = 0;
    if (r == pid && WIFSIGNALED(status))
        snprintf(err, errcap, "DataLoader worker (pid %ld) is killed by signal: %s (signal %d; worker %d, waiting for batch %lld)",
                 (long)pid, tn__signal_name(WTERMSIG(status)), WTERMSIG(status), w, (long long)l->next);
    else
        snprintf(err, errcap, "DataLoader worker (pid(s) %ld) exited unexpectedly (worker %d, exit code %d, waiting for batch %lld)",
                 (long)pid, w, r == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1, (long long)l->next);
}

/* Sends tasks up to prefetch_factor * num_workers batches ahead. A send that cannot go
   now (a worker gone, or its queue full) stops it until the next call: the batch the
   caller waits for has been sent, or its worker's socket tells what became of it. */
static void tn__loader_dispatch(tn_loader *l) {
    while (l->dispatched < l->nbatches && l->dispatched < l->next + l->cap) {
        int w = (int)(l->dispatched % l->num_workers);
        tn__loader_task t = {1, l->dispatched, l->n};
        if (tn__loader_send(l->sock[w], &t, sizeof t, MSG_DONTWAIT)) return;
        l->dispatched++;
    }
}

/* Batch l->next from its worker into batch[] (new references, owned as results of library
   ops are); 1, or -1 with an error. A failed batch is skipped (the epoch goes on) unless
   the worker is gone or timed out. */
static int tn__loader_receive(tn_loader *l, tn_tensor **batch) {
    tn__loader_dispatch(l);
    int w = (int)(l->next % l->num_workers);
    tn__loader_reply r;
    char err[sizeof r.err + 64];
    ssize_t n = tn__loader_recv(l, w, &r, sizeof r, err, sizeof err);
    if (n == 0) tn__loader_dead(l, w, err, sizeof err);
    if (n <= 0) return tn__loader_fail(l, err);
    if (n != (ssize_t)sizeof r || r.batch != l->next || r.nitems != l->nitems) {
        snprintf(err, sizeof err, "worker %d sent a malformed reply for batch %lld", w, (long long)l->next);
        return tn__loader_fail(l, err);
    }
    l->next++;
    if (r.rc) {
        r.err[sizeof r.err - 1] = 0;
        return TN__FAIL_INT("tn_loader_next: %s", r.err);
    }
    int k = 0;
    tn__quiet++;
    tn_scope_begin();                  /* a private scope: batch[] holds references of its own */
    for (; k < l->nitems; k++) {
        n = tn__loader_recv(l, w, NULL, 0, err, sizeof err);
        if (n < 0) break;
        if (!(batch[k] = tn_retain(tn_shared_recv(l->sock[w])))) {
            struct pollfd p = {l->sock[w], POLLIN, 0};
            char probe;
            if (poll(&p, 1, 0) >= 0 && recv(l->sock[w], &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0) tn__loader_dead(l, w, err, sizeof err);
            else snprintf(err, sizeof err, "batch %lld from worker %d: %.900s", (long long)(l->next - 1), w, tn__errbuf);
            break;
        }
    }
    tn_scope_end();
    tn__quiet--;
    if (k == l->nitems) {
        tn__loader_dispatch(l);
        return 1;
    }
    for (int j = 0; j < k; j++) tn_release(batch[j]), batch[j] = NULL;
    return tn__loader_fail(l, err);
}
#endif

TNDEF tn_loader *tn_loader_new_opts(tn_dataset *ds, tn_loader_opts o) {
    if (!ds) return NULL;
    if (!ds->get || !ds->len || ds->nitems < 1) return (tn_loader *)tn__error("tn_loader_new: the dataset needs len and get functions and nitems >= 1");
    int64_t bs = o.batch_size == TN_NONE ? 0 : o.batch_size, nw = o.num_workers, pf = o.prefetch_factor, seed = o.seed;   /* bs 0: None */
    const bool shuffle = o.shuffle, drop_last = o.drop_last, has_pf = pf != TN_NONE, has_seed = seed != TN_NONE;
    if (!has_pf) pf = 2;
    if (o.batch_size != TN_NONE && (bs < 1 || bs > INT_MAX))
        return (tn_loader *)tn__error("tn_loader_new: batch_size should be a positive integer value (at most %d), but got batch_size=%lld", INT_MAX, (long long)bs);
    if (nw < 0) return (tn_loader *)tn__error("tn_loader_new: num_workers option should be non-negative; use num_workers=0 to disable multiprocessing (got %lld)", (long long)nw);
    if (nw > 1024) return (tn_loader *)tn__error("tn_loader_new: num_workers=%lld is more than the 1024 processes a loader may start", (long long)nw);
    if (nw == 0 && has_pf) return (tn_loader *)tn__error("tn_loader_new: prefetch_factor option could only be specified with num_workers > 0 (let num_workers > 0 to enable multiprocessing, otherwise leave prefetch_factor out)");
    if (pf < 1 || pf > 65536) return (tn_loader *)tn__error("tn_loader_new: prefetch_factor should be a positive integer (at most 65536), but got %lld", (long long)pf);
    if (!bs && drop_last) return (tn_loader *)tn__error("tn_loader_new: batch_size=None option disables auto-batching and is mutually exclusive with drop_last");
    if (has_seed && seed < 0) return (tn_loader *)tn__error("tn_loader_new: seed should be a non-negative integer, but got %lld", (long long)seed);
    if (o.persistent_workers && nw == 0) return (tn_loader *)tn__error("tn_loader_new: persistent_workers option needs num_workers > 0");
    if (!(o.timeout >= 0) || o.timeout > 1e9) return (tn_loader *)tn__error("tn_loader_new: timeout option should be non-negative (seconds, 0: no timeout), but got %g", o.timeout);
#if !TN__HAVE_FORK
    if (nw > 0) return (tn_loader *)tn__error("tn_loader_new: num_workers=%lld needs worker processes (fork), which this platform lacks; use num_workers=0", (long long)nw);
#endif
    tn_loader *l = (tn_loader *)TN_MALLOC(sizeof *l);
    if (!l) return (tn_loader *)tn__error("tn_loader_new: out of memory");
    memset(l, 0, sizeof *l);
    l->ds = ds;
    l->nitems = ds->nitems;
    l->batch_size = bs;
    l->shuffle = shuffle;
    l->drop_last = drop_last;
    l->persistent = o.persistent_workers;
    l->timeout = o.timeout;
    l->num_workers = (int)nw;
    l->prefetch_factor = (int)pf;
    l->cap = (int)(nw * pf);
    bool ok = !has_seed || (l->gen = tn_generator_new((uint64_t)seed)) != NULL;
    ok = ok && (l->items = (tn_tensor **)TN_MALLOC((size_t)l->nitems * sizeof *l->items)) != NULL;
    if (ok && nw) {
        l->pid = (int *)TN_MALLOC((size_t)nw * sizeof *l->pid);
        l->sock = (int *)TN_MALLOC((size_t)nw * sizeof *l->sock);
        ok = l->pid && l->sock;
        for (int i = 0; ok && i < nw; i++) l->pid[i] = 0, l->sock[i] = -1;
    }
    if (!ok) {
        tn_loader_free(l);
        return (tn_loader *)tn__error("tn_loader_new: out of memory");
    }
    return l;
}
TNDEF tn_loader *tn_loader_new_str(tn_dataset *ds, const char *options) {
    if (!ds) return NULL;
    TN__KW_STR(tn_loader_opts, loader, "tn_loader_new", options, tn_loader_new_opts(ds, o));
}

TNDEF int tn_loader_set_collate(tn_loader *l, tn_collate_fn fn, void *user) {
    if (!l) return -1;
    if (l->in_epoch) return TN__FAIL_INT("tn_loader_set_collate: cannot change the collate function in the middle of an epoch (batch %lld of %lld)", (long long)l->next, (long long)l->nbatches);
    if (l->nrunning) return TN__FAIL_INT("tn_loader_set_collate: cannot change the collate function while persistent workers run (they have their own copy)");
    l->collate = fn;
    l->collate_user = fn ? user : NULL;
    return 0;
}

TNDEF int tn_loader_set_worker_init_fn(tn_loader *l, tn_worker_init_fn fn, void *user) {
    if (!l) return -1;
    if (l->in_epoch || l->nrunning) return TN__FAIL_INT("tn_loader_set_worker_init_fn: cannot change worker_init_fn while workers run (in an epoch, or persistent workers)");
    l->init = fn;
    l->init_user = fn ? user : NULL;
    return 0;
}

TNDEF int64_t tn_loader_len(const tn_loader *l) {
    if (!l) return -1;
    if (l->in_epoch) return l->nbatches;
    int64_t n = tn_dataset_len(l->ds);
    return n < 0 ? -1 : tn__loader_nbatches(l, n);
}

/* A new epoch: its length and sample order, drawn in the caller's process (so the order
   for a seed does not depend on the workers), and the workers' copy of the order. */
static int tn__loader_start_epoch(tn_loader *l) {
    int64_t n = tn_dataset_len(l->ds);
    if (n < 0) return -1;
    int64_t *order = (int64_t *)TN_REALLOC(l->order, (size_t)(n ? n : 1) * sizeof *order);
    if (!order) return TN__FAIL_INT("tn_loader_next: out of memory for an epoch of %lld samples", (long long)n);
    l->order = order;
    /* PyTorch's draws: the iterator's base seed (torch.empty((), dtype=int64).random_(generator=
       loader.generator)) as each iterator starts (a persistent loader's iterator starts once),
       then RandomSampler's permutation: randperm from the loader's generator, or from a new
       generator seeded by one more int64 draw from the default one */
    if (!l->nrunning) l->base_seed = tn_generator_random64(l->gen) & (uint64_t)INT64_MAX;
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
    l->n = n;
    l->nbatches = tn__loader_nbatches(l, n);
    l->next = l->dispatched = 0;
#if TN__HAVE_FORK
    if (l->num_workers && l->nbatches) {
        if (!l->shorder || tn_numel(l->shorder) < n) {   /* the workers see the old one: start them anew */
            tn__loader_stop_workers(l);
            tn_release(l->shorder);
            tn_scope_begin();
            l->shorder = tn_retain(TN__AS("tn_loader_next", tn_share_memory_(tn_empty(TN_SHAPE(n), TN_I64))));
            tn_scope_end();
            if (!l->shorder) return -1;
        }
        memcpy(tn_data_ptr(l->shorder), order, (size_t)n * sizeof *order);   /* no task is in flight */
        if (!l->nrunning && tn__loader_start_workers(l)) return -1;
    }
#endif
    l->in_epoch = true;
    return 0;
}

TNDEF int tn_loader_next(tn_loader *l, tn_tensor **batch) {
    if (!l) return -1;
    if (!batch) return TN__FAIL_INT("tn_loader_next: batch is NULL (expected room for %d tensors)", l->nitems);
    for (int k = 0; k < l->nitems; k++) batch[k] = NULL;
    if (!l->in_epoch && tn__loader_start_epoch(l)) return -1;
    if (l->next >= l->nbatches) {
        l->in_epoch = false;
#if TN__HAVE_FORK
        if (!l->persistent) tn__loader_stop_workers(l);
#endif
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
#if TN__HAVE_FORK
    if (l->num_workers) {
        int rc = tn__loader_receive(l, batch);
        if (rc != 1) return rc;
        for (int k = 0; k < l->nitems; k++)
            if (!tn__own(batch[k])) {  /* out of memory registering it: drop the rest too */
                for (int j = k + 1; j < l->nitems; j++) tn_release(batch[j]);
                for (int j = 0; j < l->nitems; j++) batch[j] = NULL;
                return -1;
            }
        return 1;
    }
#endif
    char err[1024];
    int rc = tn__loader_load(l, l->next, l->items, err, sizeof err, -1);
    l->next++;
    if (rc) return TN__FAIL_INT("tn_loader_next: %s", err);
    for (int k = 0; k < l->nitems; k++)
        if (!tn__own(batch[k] = l->items[k])) { /* out of memory registering it: drop the rest too */
            for (int j = k + 1; j < l->nitems; j++) tn_release(l->items[j]);
            for (int j = 0; j < l->nitems; j++) batch[j] = NULL;
            return -1;
        }
    return 1;
}

TNDEF void tn_loader_free(tn_loader *l) {
    if (!l) return;
#if TN__HAVE_FORK
    if (l->nrunning) tn__loader_stop_workers(l);
#endif
    tn_release(l->shorder);
    TN_FREE(l->pid);
    TN_FREE(l->sock);
    TN_FREE(l->items);
    TN_FREE(l->order);
    tn_generator_free(l->gen);
    TN_FREE(l);
}
