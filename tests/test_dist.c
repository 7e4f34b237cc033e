/* test_dist.c — torch.distributed's collectives over MPI, checked on every rank against
 * what each rank can compute alone: every dtype and reduce op, strided tensors, lists,
 * point to point, async work, subgroups, errors; `timeout` mode: a rank that does not
 * come makes the others fail with an error instead of hanging.
 *
 *     make DIST=mpi build/mpi/test_dist && mpirun -np 3 --oversubscribe build/mpi/test_dist
 * Built without MPI (make test), it checks that every call says MPI is missing. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <string.h>
#include <unistd.h>

static int R, W;   /* rank, world size */

/* [4] of value v in dtype d */
static tn_tensor *filled(double v, tn_dtype d) { return tn_full(TN_SHAPE(4), v, d); }
static double first(tn_tensor *t) { return tn_item(tn_select(tn_reshape(t, TN_SHAPE(-1)), 0, 0)); }   /* element [0, ..., 0] */

TEST(without_mpi) {
    CHECK(!tn_dist_is_available() && !tn_dist_is_initialized());
    CHECK(tn_dist_init("mpi") == -1 && strstr(tn_last_error(), "built without MPI (build it with make DIST=mpi"));
    tn_scope_begin();
    CHECK(tn_dist_all_reduce(filled(1, TN_F32), TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "tn_dist_all_reduce"));
    CHECK(tn_dist_barrier(NULL) == -1 && tn_dist_get_rank(NULL) == -1);
    CHECK(tn_dist_new_group(NULL, 0) == NULL);
    tn_scope_end();
}

TEST(all_reduce_every_dtype_and_op) {
    tn_scope_begin();
    const tn_dtype dts[] = {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8};
    double sum = 0, prod = 1;
    for (int r = 0; r < W; r++) { sum += r + 1; prod *= r + 1; }
    for (int i = 0; i < 5; i++) {
        tn_tensor *t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, NULL) == 0 && first(t) == sum && tn_get_dtype(t) == dts[i]);
        t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_PRODUCT, NULL) == 0 && first(t) == prod);
        t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_MIN, NULL) == 0 && first(t) == 1);
        t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_MAX, NULL) == 0 && first(t) == W);
        t = filled(R + 1, dts[i]);
        if (tn_dtype_is_floating(dts[i])) CHECK(tn_dist_all_reduce(t, TN_DIST_AVG, NULL) == 0 && fabs(first(t) - sum / W) < 1e-6);
        else CHECK(tn_dist_all_reduce(t, TN_DIST_AVG, NULL) == -1 && strstr(tn_last_error(), "AVG needs a floating-point"));
    }
    tn_tensor *b = tn_full(TN_SHAPE(2), R == 0, TN_BOOL);           /* only rank 0 true */
    CHECK(tn_dist_all_reduce(b, TN_DIST_MAX, NULL) == 0 && first(b) == 1);
    b = tn_full(TN_SHAPE(2), R == 0, TN_BOOL);
    CHECK(tn_dist_all_reduce(b, TN_DIST_MIN, NULL) == 0 && first(b) == (W == 1));
    /* a strided view: reduced in place through a staging copy, the layout kept */
    tn_tensor *base = tn_mul_scalar(tn_reshape(tn_arange(0, 12, 1, TN_F64), TN_SHAPE(3, 4)), R + 1);
    tn_tensor *v = tn_narrow(tn_t(base), 0, 1, 2);                   /* [2, 3], strides (1, 4), offset 1 */
    CHECK(tn_dist_all_reduce(v, TN_DIST_SUM, NULL) == 0 && !tn_is_contiguous(v));
    tn_tensor *want = tn_mul_scalar(tn_narrow(tn_t(tn_reshape(tn_arange(0, 12, 1, TN_F64), TN_SHAPE(3, 4))), 0, 1, 2), sum);
    CHECK(tn_equal(v, want));
    CHECK(tn_item(tn_select(tn_select(base, 0, 0), 0, 0)) == 0);    /* outside the view: untouched */
    tn_tensor *empty = tn_zeros(TN_SHAPE(0), TN_F32);
    CHECK(tn_dist_all_reduce(empty, TN_DIST_SUM, NULL) == 0);
    tn_tensor *scalar = tn_scalar_tensor(R, TN_I64);
    CHECK(tn_dist_all_reduce(scalar, TN_DIST_SUM, NULL) == 0 && tn_item(scalar) == W * (W - 1) / 2);
    CHECK(tn_dist_all_reduce(filled(1, TN_F32), (tn_dist_op)9, NULL) == -1 && strstr(tn_last_error(), "invalid reduce op"));
    /* complex: rank r holds (r + 1) + (r + 2)i; sums, products and averages as complex numbers, no MIN/MAX (as PyTorch) */
    for (int c = 0; c < 2; c++) {
        const tn_dtype d = c ? TN_C128 : TN_C64;
        double pr = 1, pi = 0;
        for (int r = 0; r < W; r++) { const double a = pr * (r + 1) - pi * (r + 2), b = pr * (r + 2) + pi * (r + 1); pr = a; pi = b; }
        tn_tensor *z = tn_complex(filled(R + 1, TN_F64), filled(R + 2, TN_F64));
        tn_tensor *t = tn_clone(tn_to_dtype(z, d));   /* (a copy: to_dtype of z's own dtype is z) */
        CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, NULL) == 0 && first(tn_real(t)) == sum && first(tn_imag(t)) == sum + W);
        t = tn_clone(tn_to_dtype(z, d));
        CHECK(tn_dist_all_reduce(t, TN_DIST_PRODUCT, NULL) == 0 && fabs(first(tn_real(t)) - pr) < 1e-3 && fabs(first(tn_imag(t)) - pi) < 1e-3);
        t = tn_clone(tn_to_dtype(z, d));
        CHECK(tn_dist_all_reduce(t, TN_DIST_AVG, NULL) == 0 && fabs(first(tn_real(t)) - sum / W) < 1e-6 && fabs(first(tn_imag(t)) - (sum + W) / W) < 1e-6);
        CHECK(tn_dist_all_reduce(tn_clone(tn_to_dtype(z, d)), TN_DIST_MAX, NULL) == -1 && strstr(tn_last_error(), "MAX on complex"));
        CHECK(tn_dist_all_reduce(tn_clone(tn_to_dtype(z, d)), TN_DIST_MIN, NULL) == -1 && strstr(tn_last_error(), "MIN on complex"));
    }
    tn_scope_end();
}

TEST(broadcast_and_reduce) {
    tn_scope_begin();
    for (int src = 0; src < W; src++) {
        tn_tensor *t = filled(R == src ? 42 + src : -1, TN_F32);
        CHECK(tn_dist_broadcast(t, src, NULL) == 0 && first(t) == 42 + src);
    }
    for (int dst = 0; dst < W; dst++) {
        tn_tensor *t = filled(R + 1, TN_I64);
        CHECK(tn_dist_reduce(t, dst, TN_DIST_SUM, NULL) == 0);
        if (R == dst) CHECK(first(t) == W * (W + 1) / 2);
    }
    CHECK(tn_dist_broadcast(filled(0, TN_F32), W, NULL) == -1 && strstr(tn_last_error(), "is not in the world"));
    tn_scope_end();
}

TEST(lists) {
    tn_scope_begin();
    tn_tensor *outs[64], *ins[64];
    for (int i = 0; i < W; i++) outs[i] = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    tn_tensor *mine = tn_add_scalar(tn_zeros(TN_SHAPE(2, 3), TN_F32), R * 10);
    CHECK(tn_dist_all_gather(outs, mine, NULL) == 0);
    for (int i = 0; i < W; i++) CHECK(first(outs[i]) == i * 10 && tn_item(tn_sum(outs[i])) == 60 * i);
    /* gather to the last rank */
    for (int i = 0; i < W; i++) outs[i] = tn_zeros(TN_SHAPE(2, 3), TN_F32);
    CHECK(tn_dist_gather(mine, R == W - 1 ? outs : NULL, W - 1, NULL) == 0);
    if (R == W - 1) for (int i = 0; i < W; i++) CHECK(first(outs[i]) == i * 10);
    /* scatter from rank 0: rank i gets i + 100 */
    for (int i = 0; i < W; i++) ins[i] = tn_full(TN_SHAPE(2, 3), i + 100, TN_F64);
    tn_tensor *got = tn_zeros(TN_SHAPE(2, 3), TN_F64);
    CHECK(tn_dist_scatter(got, R == 0 ? ins : NULL, 0, NULL) == 0 && first(got) == R + 100);
    /* reduce_scatter: rank i gets the sum over ranks of their ins[i] = (rank + 1) * (i + 1) */
    for (int i = 0; i < W; i++) ins[i] = tn_full(TN_SHAPE(3), (R + 1) * (i + 1), TN_I64);
    tn_tensor *out = tn_zeros(TN_SHAPE(3), TN_I64);
    CHECK(tn_dist_reduce_scatter(out, ins, TN_DIST_SUM, NULL) == 0 && first(out) == (R + 1) * W * (W + 1) / 2);
    ins[W - 1] = tn_zeros(TN_SHAPE(4), TN_I64);                      /* a wrong shape in the list */
    CHECK(tn_dist_reduce_scatter(out, ins, TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "every tensor must be"));
    tn_scope_end();
}

TEST(point_to_point_and_async) {
    tn_scope_begin();
    if (W > 1) {
        const int next = (R + 1) % W, prev = (R + W - 1) % W;
        tn_dist_work *s = tn_dist_send_async(filled(R, TN_F32), next, 7, NULL);
        tn_tensor *t = filled(-1, TN_F32);
        CHECK(tn_dist_recv(t, -1, 7, NULL) == prev && first(t) == prev);   /* any source: the sender's rank */
        CHECK(s && tn_dist_wait(s) == 0);
    }
    tn_tensor *a = filled(1, TN_F64);
    tn_dist_work *w = tn_dist_all_reduce_async(a, TN_DIST_SUM, NULL);
    int done = 0;
    for (int i = 0; i < 1000000 && done == 0; i++) done = tn_dist_test(w);
    CHECK(w && done == 1 && tn_dist_wait(w) == 0 && first(a) == W);
    CHECK(tn_dist_barrier(NULL) == 0);
    tn_scope_end();
}

TEST(subgroups) {
    tn_scope_begin();
    int64_t ranks[2] = {0, W - 1};
    const int n = W > 1 ? 2 : 1;
    tn_dist_group *g = tn_dist_new_group(ranks, n);
    CHECK(g != NULL);
    const bool member = R == 0 || R == W - 1;
    CHECK(tn_dist_get_world_size(g) == n && tn_dist_get_rank(g) == (member ? (R == 0 ? 0 : 1) : -1));
    tn_tensor *t = filled(R + 1, TN_F32);
    if (member) CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, g) == 0 && first(t) == (W > 1 ? 1 + W : 1));
    else CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, g) == -1 && strstr(tn_last_error(), "not a member of the group"));
    if (member) CHECK(tn_dist_broadcast(t, W - 1, g) == 0);               /* a global rank as the source */
    if (W > 2 && member) CHECK(tn_dist_broadcast(t, 1, g) == -1 && strstr(tn_last_error(), "global rank 1 is not a member"));
    tn_dist_group_free(g);
    int64_t dup[2] = {0, 0};
    CHECK(W < 2 || (tn_dist_new_group(dup, 2) == NULL && strstr(tn_last_error(), "listed twice")));
    tn_scope_end();
}

/* A 4-3-2 MLP as explicit leaves: w1, b1, w2, b2 (and an unused one), from seed. */
static void mlp_init(tn_tensor **p, uint64_t seed) {
    tn_manual_seed(seed);
    const int64_t shapes[5][2] = {{3, 4}, {3, 1}, {2, 3}, {2, 1}, {5, 1}};
    for (int i = 0; i < 5; i++) {
        p[i] = tn_retain(tn_randn(shapes[i], shapes[i][1] == 1 ? 1 : 2, TN_F64));
        tn_requires_grad_(p[i], true);
    }
}
static tn_tensor *mlp_loss(tn_tensor **p, tn_tensor *x, tn_tensor *y) {
    tn_tensor *h = tn_tanh(tn_add(tn_matmul(x, tn_t(p[0])), tn_t(p[1])));
    return tn_mse_loss(tn_add(tn_matmul(h, tn_t(p[2])), tn_t(p[3])), y);
}
static void sgd(tn_tensor **p, int n, double lr) {
    tn_no_grad_begin();
    for (int i = 0; i < n; i++) {
        if (tn_grad(p[i])) tn_sub_(p[i], tn_mul_scalar(tn_grad(p[i]), lr));
        tn_set_grad(p[i], NULL);
    }
    tn_no_grad_end();
}

/* DDP on W ranks, each with its quarter of a global batch, equals one process on the whole
   batch: same parameters after steps, with one bucket per parameter and one for all;
   no_sync accumulation equals the two batches' gradients summed; an unused parameter
   neither hangs nor gets a gradient. */
TEST(ddp_matches_one_process) {
    for (int caps = 0; caps < 2; caps++) {
        tn_scope_begin();
        tn_tensor *p[5], *ref[5];
        mlp_init(p, 100 + (uint64_t)R);                  /* different on every rank: DDP broadcasts rank 0's */
        tn_ddp *d = tn_ddp_new(p, 5, NULL, .bucket_cap_mb = caps ? 25 : 1e-6);
        CHECK(d != NULL);
        mlp_init(ref, 100);                             /* rank 0's, here too */
        for (int i = 0; i < 5; i++) CHECK(tn_equal(p[i], ref[i]));
        tn_manual_seed(7);                               /* the same global batches on every rank */
        for (int step = 0; step < 3; step++) {
            tn_tensor *X = tn_randn(TN_SHAPE(4 * W, 4), TN_F64), *Y = tn_randn(TN_SHAPE(4 * W, 2), TN_F64);
            tn_tensor *X2 = tn_randn(TN_SHAPE(4 * W, 4), TN_F64), *Y2 = tn_randn(TN_SHAPE(4 * W, 2), TN_F64);
            const bool accumulate = step == 2;
            if (accumulate) {                            /* micro-batch 1 without sync, 2 with */
                CHECK(tn_ddp_no_sync(d, true) == 0);
                CHECK(tn_backward(mlp_loss(p, tn_narrow(X2, 0, 4 * R, 4), tn_narrow(Y2, 0, 4 * R, 4))) == 0);
                CHECK(tn_ddp_no_sync(d, false) == 0);
                CHECK(tn_backward(mlp_loss(ref, X2, Y2)) == 0);
            }
            CHECK(tn_backward(mlp_loss(p, tn_narrow(X, 0, 4 * R, 4), tn_narrow(Y, 0, 4 * R, 4))) == 0);
            CHECK(tn_backward(mlp_loss(ref, X, Y)) == 0);
            for (int i = 0; i < 4; i++) CHECK(tn_allclose(tn_grad(p[i]), tn_grad(ref[i]), .rtol = 1e-10, .atol = 1e-12));
            CHECK(tn_grad(p[4]) && tn_item(tn_sum(tn_abs(tn_grad(p[4])))) == 0);   /* unused: zeros */
            sgd(p, 5, 0.1);
            sgd(ref, 5, 0.1);
        }
        for (int i = 0; i < 4; i++) CHECK(tn_allclose(p[i], ref[i], .rtol = 1e-10, .atol = 1e-12));
        tn_ddp_free(d);
        for (int i = 0; i < 5; i++) { tn_release(p[i]); tn_release(ref[i]); }
        tn_scope_end();
    }
    CHECK(tn_autograd_queue_callback(NULL, NULL) == -1);
    CHECK(tn_ddp_new(NULL, 0, NULL, .bucket_cap_mb = -1) == NULL && strstr(tn_last_error(), "bucket_cap_mb"));
}

int main(int argc, char **argv) {
    if (!tn_dist_is_available()) {
        RUN(without_mpi);
        return tn_test_report();
    }
    const bool timeout_mode = argc > 1 && !strcmp(argv[1], "timeout");
    if (tn_dist_init("mpi", .timeout = timeout_mode ? 2 : 0)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    R = tn_dist_get_rank(NULL);
    W = tn_dist_get_world_size(NULL);
    if (timeout_mode) {
        /* rank 0 waits at a barrier that rank 1 reaches only after the 2-second deadline */
        if (R == 1) sleep(4);
        int rc = tn_dist_barrier(NULL);
        if (R == 0) printf("rank 0: %s\n", rc == -1 ? tn_last_error() : "no timeout");
        tn_dist_destroy();
        return R == 0 ? (rc == -1 && strstr(tn_last_error(), "timed out after 2 s") ? 0 : 1) : 0;
    }
    CHECK(tn_dist_is_initialized() && W >= 1 && R >= 0 && R < W && W <= 64);
    CHECK(tn_dist_init("mpi") == -1 && strstr(tn_last_error(), "already initialized"));
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "already initialized"));
    CHECK(tn_dist_init("tcp") == -1 && strstr(tn_last_error(), "backend 'tcp' is not available"));
    RUN(all_reduce_every_dtype_and_op);
    RUN(broadcast_and_reduce);
    RUN(lists);
    RUN(point_to_point_and_async);
    RUN(subgroups);
    RUN(ddp_matches_one_process);
    CHECK(tn_dist_destroy() == 0 && !tn_dist_is_initialized());
    CHECK(tn_dist_init("mpi") == -1 && strstr(tn_last_error(), "cannot be initialized again"));
    char name[32];
    snprintf(name, sizeof name, "rank %d of %d", R, W);
    tn_test_current = name;
    return tn_test_report();
}
