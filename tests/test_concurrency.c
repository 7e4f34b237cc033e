/* test_concurrency.c — processes and threads around the library (issue 18).
 *
 *   fork: a child forked after the parent ran OpenMP regions (elementwise ops, GEMM) runs
 *         the same ops to the end, on one thread, as PyTorch's forked children do
 *         (libgomp's pool does not survive fork: the child's first region waited forever).
 *         The parent waits with a timeout, so a hang is a failed check.
 *   threads: several pthreads share input tensors, retaining and releasing them while
 *         they run ops on them (views, copies, flips, reductions, sorts, matmuls, indexing,
 *         convolution, autograd on their own leaves). The values are checked; under
 *         ThreadSanitizer (make test TSAN=1, tests/tsan.mk) the run must be race-free: an
 *         internal helper that copied a whole tensor struct read the refcount another
 *         thread was changing.
 *
 * Built with -fopenmp against the OpenMP object (tests/tsan.mk's rule, as test_threads);
 * without OpenMP the fork case holds trivially. */
#define _POSIX_C_SOURCE 200809L /* fork, nanosleep */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <time.h>
#include <pthread.h>
#ifdef __unix__
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#endif

/* ops big enough for the OpenMP split (TN_PARALLEL_MIN elements, a GEMM of 4e6 products);
   0 when every value is right */
static int big_ops(void) {
    int bad = 0;
    tn_scope_begin();
    const int64_t n = 1 << 20;
    tn_tensor *a = tn_arange(0, (double)n, 1, TN_F64);
    tn_tensor *b = tn_mul_scalar(tn_add(a, a), 0.5);               /* elementwise, split by range */
    bad += !b || tn_item(tn_sum(b)) != (double)n * (double)(n - 1) / 2;
    tn_tensor *m = tn_ones(TN_SHAPE(256, 256), TN_F32);
    tn_tensor *p = tn_matmul(m, m);                                  /* 16.7e6 products: the GEMM's threads */
    bad += !p || tn_item(tn_amin(p, NULL, 0)) != 256 || tn_item(tn_amax(p, NULL, 0)) != 256;
    tn_tensor *r = tn_sum_dims(tn_reshape(b, TN_SHAPE(1024, 1024)), TN_SHAPE(1));   /* a reduction over kept rows */
    bad += !r || tn_item(tn_sum(r)) != (double)n * (double)(n - 1) / 2;
    tn_scope_end();
    return bad;
}

#ifdef __unix__
/* 0: the child ran big_ops right and exited; 1: still running after `secs` (killed) */
static int child_result(double secs, int *status) {
    pid_t pid = fork();
    if (pid == 0) {
        int bad = big_ops();
        _exit(bad ? 10 : tn_get_num_threads() == 1 ? 0 : 11);   /* one thread in a forked child */
    }
    if (pid < 0) { *status = -1; return 0; }
    struct timespec step = {0, 10 * 1000 * 1000};
    for (double waited = 0; waited < secs; waited += 0.01) {
        if (waitpid(pid, status, WNOHANG) == pid) return 0;
        nanosleep(&step, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, status, 0);
    return 1;
}

TEST(fork_after_parallel_ops) {
    tn_set_num_threads(2);   /* a team even on a one-core machine */
    CHECK(big_ops() == 0);   /* the parent's regions start OpenMP's pool */
    int st = 0;
    int hung = child_result(60, &st);
    CHECK_MSG(!hung, "the forked child hung in its first parallel region (killed after 60 s)");
    CHECK_MSG(hung || (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0), "the forked child failed: %s %d (10: wrong values, 11: not one thread)",
              st >= 0 && WIFEXITED(st) ? "exit status" : "signal", st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    /* the parent keeps its threads */
    CHECK(big_ops() == 0);
#ifdef _OPENMP
    CHECK(tn_get_num_threads() == 2);
#endif
    /* a grandchild too */
    pid_t pid = fork();
    if (pid == 0) {
        int st2 = 0;
        _exit(child_result(60, &st2) || !WIFEXITED(st2) || WEXITSTATUS(st2) != 0 ? 1 : 0);
    }
    int st3 = 0;
    waitpid(pid, &st3, 0);
    CHECK_MSG(WIFEXITED(st3) && WEXITSTATUS(st3) == 0, "a child of a forked child failed or hung");
    tn_set_num_threads(1);
}
#endif

/* ---------------------------------------------------------------------------------- */
/* threads sharing tensors                                                             */
/* ---------------------------------------------------------------------------------- */
enum { NTHREADS = 4, ROUNDS = 40 };
typedef struct shared { tn_tensor *x, *m, *img, *w, *idx; int bad[NTHREADS], line[NTHREADS]; } shared;
typedef struct worker { shared *s; int id; } worker;

static double sum_of(tn_tensor *t) { return t ? tn_item(tn_sum(t)) : -1e300; }

static void *work(void *arg) {
    worker *wk = (worker *)arg;
    shared *s = wk->s;
    int bad = 0, line = 0;
    /* a wrong result: counted, with the line of the first */
#define CHK(wrong) do { if (wrong) { bad++; if (!line) line = __LINE__; } } while (0)
    for (int round = 0; round < ROUNDS; round++) {
        tn_scope_begin();
        tn_tensor *x = tn_retain(s->x), *m = tn_retain(s->m);   /* other threads retain and release the same tensors */
        /* x = arange(24) as [2, 3, 4]: sum 276 */
        CHK(sum_of(tn_flip(x, TN_SHAPE(0, 2))) != 276);                       /* a flipped transient view */
        CHK(sum_of(tn_pad(x, TN_SHAPE(1, 1))) != 276);                          /* pad's source view */
        CHK(sum_of(tn_contiguous(tn_transpose(x, 0, 2))) != 276);
        CHK(sum_of(tn_cumsum(x, 2)) != 660);                                       /* a lane op's views */
        tn_tensor *sorted = tn_sort(x, NULL, .dim = 1, .descending = true);
        CHK(!sorted || tn_item(tn_select(tn_select(tn_select(sorted, 0, 0), 0, 0), 0, 0)) != 8);
        CHK(sum_of(tn_gather(x, 2, tn_zeros(TN_SHAPE(2, 3, 1), TN_I64))) != 60);   /* restrided operands */
        CHK(sum_of(tn_index_select(x, 1, s->idx)) != 184);                          /* rows 0 and 2 */
        CHK(sum_of(tn_cat(((tn_tensor *[]){x, x}), 2)) != 552);
        CHK(sum_of(tn_repeat(x, TN_SHAPE(2, 1, 1))) != 552);
        CHK(sum_of(tn_matmul(m, m)) != 64 * 8);                                    /* m = ones [8, 8] */
        CHK(sum_of(tn_mv(m, tn_select(m, 0, 0))) != 64);
        CHK(sum_of(tn_dot(tn_select(m, 0, 1), tn_select(m, 1, 0))) != 8);
        CHK(sum_of(tn_conv2d(s->img, s->w, NULL, .padding = 1)) != 256);   /* ones [1,1,6,6] * ones [1,1,3,3], padding 1 */
        CHK(sum_of(tn_max_pool2d(s->img, 2, .stride = 2)) != 9);
        CHK(sum_of(tn_softmax(tn_to_dtype(x, TN_F32), 2)) < 5.99 || sum_of(tn_softmax(tn_to_dtype(x, TN_F32), 2)) > 6.01);
        /* autograd on a leaf of this thread's own, from the shared input */
        tn_tensor *leaf = tn_to_dtype(x, TN_F64);
        tn_requires_grad_(leaf, true);
        tn_tensor *y = tn_sum(tn_mul(tn_flip(leaf, TN_SHAPE(1)), leaf));
        CHK(!y || tn_backward(y) != 0 || !tn_grad(leaf) || tn_item(tn_sum(tn_grad(leaf))) != 2 * 276);
        tn_release(x);
        tn_release(m);
        tn_scope_end();
    }
    s->bad[wk->id] = bad;
    s->line[wk->id] = line;
#undef CHK
    return NULL;
}

TEST(threads_share_tensors) {
    shared s;
    memset(&s, 0, sizeof s);
    tn_scope_begin();
    s.x = tn_keep(tn_reshape(tn_arange(0, 24, 1, TN_I64), TN_SHAPE(2, 3, 4)));   /* the view outlives the scope, its base too */
    tn_scope_end();
    s.m = tn_ones(TN_SHAPE(8, 8), TN_F32);
    s.img = tn_ones(TN_SHAPE(1, 1, 6, 6), TN_F32);
    s.w = tn_ones(TN_SHAPE(1, 1, 3, 3), TN_F32);
    s.idx = tn_from_data((const int64_t[]){0, 2}, TN_SHAPE(2), TN_I64);
    pthread_t th[NTHREADS];
    worker wk[NTHREADS];
    int started = 0;
    for (int i = 0; i < NTHREADS; i++) {
        wk[i].s = &s;
        wk[i].id = i;
        if (pthread_create(&th[i], NULL, work, &wk[i]) == 0) started++;
        else break;
    }
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    CHECK(started == NTHREADS);
    for (int i = 0; i < started; i++) CHECK_MSG(s.bad[i] == 0, "thread %d: %d wrong results (the first at line %d)", i, s.bad[i], s.line[i]);
    tn_release(s.x); tn_release(s.m); tn_release(s.img); tn_release(s.w); tn_release(s.idx);
    tn_memory_stats ms = tn_memory_stats_get();
    CHECK_MSG(ms.live_tensors == 0, "%lld tensors left alive", (long long)ms.live_tensors);
}

int main(void) {
#ifdef __unix__
    RUN(fork_after_parallel_ops);
#endif
    RUN(threads_share_tensors);
    return tn_test_report();
}
