/* test_dist_nccl.c — the "nccl" backend of torch.distributed through the backend table's
 * nccl entry, here the checking stand-in's (host memory; MPI between ranks): every
 * collective, dtype and op on CUDA tensors against what each rank computes alone (the same
 * values tests/test_dist.c checks the mpi backend against), no host staging, async work,
 * subgroups, errors (CPU tensors, non-members, bad ranks), DDP against one process on the
 * whole batch, a small CNN too; built without MPI, torchrun's variables and the TCP
 * rendezvous that carries the ncclUniqueId (two processes by fork). Built with the GPU unit
 * on a machine with a GPU (build/cuda/test_dist_nccl, make gpu-check) the same cases run
 * on real NCCL, one rank.
 *
 *     make build/test_dist_nccl && ./build/test_dist_nccl                 (one rank, no MPI)
 *     make DIST=mpi build/mpi/test_dist_nccl && mpirun -np 3 --oversubscribe build/mpi/test_dist_nccl
 *     mpirun -np 2 build/mpi/test_dist_nccl timeout     (a rank that does not come: an error, the communicator aborted) */
#define _POSIX_C_SOURCE 200809L   /* setenv, fork */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <signal.h>
#include <time.h>

static int R, W;   /* rank, world size */
static bool gpu;   /* a real GPU and NCCL serve TN_CUDA */

static tn_tensor *dev(tn_tensor *t) { return tn_to(t, TN_CUDA); }
static tn_tensor *filled(double v, tn_dtype d) { return dev(tn_full(TN_SHAPE(4), v, d)); }   /* [4] of v on the device */
static double first(tn_tensor *t) { return tn_item(tn_select(tn_reshape(tn_to(t, TN_CPU), TN_SHAPE(-1)), 0, 0)); }
static int64_t transfers(void) { tn_cuda_stats s = tn_cuda_memory_stats(); return s.num_h2d + s.num_d2h; }

TEST(unavailable_without_a_cuda_backend) {
    CHECK(!tn_dist_is_backend_available("nccl") && !tn_dist_is_backend_available("bogus") && !tn_dist_is_backend_available(NULL));
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "backend 'nccl' needs CUDA"));
    CHECK(tn_dist_init("bogus") == -1 && strstr(tn_last_error(), "backend 'bogus' is not available"));
    CHECK(!tn_dist_is_initialized());
#ifndef TENSOR_MPI
    CHECK(tn_dist_init("mpi") == -1 && strstr(tn_last_error(), "built without MPI"));
    CHECK(tn_dist_init("gloo") == -1 && strstr(tn_last_error(), "built without MPI"));
#endif
}

TEST(all_reduce_every_dtype_and_op) {
    tn_scope_begin();
    const tn_dtype dts[] = {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_F16, TN_BF16};
    double sum = 0, prod = 1;
    for (int r = 0; r < W; r++) { sum += r + 1; prod *= r + 1; }
    for (int i = 0; i < 7; i++) {
        tn_tensor *t = filled(R + 1, dts[i]);
        const int64_t moved = transfers();
        CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, NULL) == 0);
        CHECK(transfers() == moved);                                     /* on the device: nothing staged through the host */
        CHECK(first(t) == sum && tn_get_dtype(t) == dts[i] && tn_get_device(t) == TN_CUDA);
        t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_PRODUCT, NULL) == 0 && first(t) == prod);
        t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_MIN, NULL) == 0 && first(t) == 1);
        t = filled(R + 1, dts[i]);
        CHECK(tn_dist_all_reduce(t, TN_DIST_MAX, NULL) == 0 && first(t) == W);
        t = filled(R + 1, dts[i]);
        if (tn_dtype_is_floating(dts[i])) CHECK(tn_dist_all_reduce(t, TN_DIST_AVG, NULL) == 0 && fabs(first(t) - sum / W) < 1e-2);
        else CHECK(tn_dist_all_reduce(t, TN_DIST_AVG, NULL) == -1 && strstr(tn_last_error(), "AVG needs a floating-point"));
    }
    /* bools: or (SUM, MAX) and and (PRODUCT, MIN), as PyTorch maps them onto NCCL's uint8 */
    const tn_dist_op bops[4] = {TN_DIST_SUM, TN_DIST_MAX, TN_DIST_PRODUCT, TN_DIST_MIN};
    for (int k = 0; k < 4; k++) {
        tn_tensor *b = dev(tn_full(TN_SHAPE(2), R == 0, TN_BOOL));      /* only rank 0 true */
        CHECK(tn_dist_all_reduce(b, bops[k], NULL) == 0 && first(b) == (k < 2 ? 1 : W == 1) && tn_get_dtype(b) == TN_BOOL);
    }
    CHECK(tn_dist_all_reduce(dev(tn_full(TN_SHAPE(2), 1, TN_BOOL)), TN_DIST_AVG, NULL) == -1 && strstr(tn_last_error(), "AVG needs a floating-point"));
    /* a strided device view: through a contiguous device copy, the layout kept, still no host staging */
    tn_tensor *base = dev(tn_mul_scalar(tn_reshape(tn_arange(0, 12, 1, TN_F64), TN_SHAPE(3, 4)), R + 1));
    tn_tensor *v = tn_narrow(tn_t(base), 0, 1, 2);                   /* [2, 3], strides (1, 4), offset 1 */
    const int64_t moved = transfers();
    CHECK(tn_dist_all_reduce(v, TN_DIST_SUM, NULL) == 0 && !tn_is_contiguous(v) && transfers() == moved);
    tn_tensor *want = tn_mul_scalar(tn_narrow(tn_t(tn_reshape(tn_arange(0, 12, 1, TN_F64), TN_SHAPE(3, 4))), 0, 1, 2), sum);
    CHECK(tn_equal(tn_to(v, TN_CPU), want));
    CHECK(first(base) == 0);                                         /* outside the view: untouched */
    CHECK(tn_dist_all_reduce(dev(tn_zeros(TN_SHAPE(0), TN_F32)), TN_DIST_SUM, NULL) == 0);   /* 0 elements */
    tn_tensor *scalar = dev(tn_scalar_tensor(R, TN_I64));           /* 0-d */
    CHECK(tn_dist_all_reduce(scalar, TN_DIST_SUM, NULL) == 0 && tn_item(scalar) == W * (W - 1) / 2 && tn_ndim(scalar) == 0);
    CHECK(tn_dist_all_reduce(filled(1, TN_F32), (tn_dist_op)9, NULL) == -1 && strstr(tn_last_error(), "invalid reduce op"));
    /* CPU tensors: PyTorch's error for the nccl process group */
    CHECK(tn_dist_all_reduce(tn_ones(TN_SHAPE(2), TN_F32), TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "Tensors must be CUDA and dense"));
    CHECK(tn_dist_broadcast(tn_ones(TN_SHAPE(2), TN_F32), 0, NULL) == -1 && strstr(tn_last_error(), "on cpu"));
    CHECK(tn_dist_all_reduce(NULL, TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "tensor is NULL"));
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
        t = filled(R + 1, TN_F32);
        CHECK(tn_dist_reduce(t, dst, TN_DIST_AVG, NULL) == 0);
        if (R == dst) CHECK(fabs(first(t) - (W + 1) / 2.0) < 1e-6);
    }
    CHECK(tn_dist_broadcast(filled(0, TN_F32), W, NULL) == -1 && strstr(tn_last_error(), "is not in the world"));
    CHECK(tn_dist_broadcast(filled(0, TN_F32), -1, NULL) == -1 && strstr(tn_last_error(), "is not in the world"));
    CHECK(tn_dist_reduce(filled(0, TN_F32), W, TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "is not in the world"));
    tn_scope_end();
}

TEST(lists) {
    tn_scope_begin();
    tn_tensor *outs[64], *ins[64];
    for (int i = 0; i < W; i++) outs[i] = dev(tn_zeros(TN_SHAPE(2, 3), TN_F32));
    tn_tensor *mine = dev(tn_add_scalar(tn_zeros(TN_SHAPE(2, 3), TN_F32), R * 10));
    const int64_t moved = transfers();
    CHECK(tn_dist_all_gather(outs, mine, NULL) == 0 && transfers() == moved);
    for (int i = 0; i < W; i++) CHECK(first(outs[i]) == i * 10 && tn_item(tn_sum(outs[i])) == 60 * i);
    /* gather to the last rank (grouped receives there) */
    for (int i = 0; i < W; i++) outs[i] = dev(tn_zeros(TN_SHAPE(2, 3), TN_F32));
    CHECK(tn_dist_gather(mine, R == W - 1 ? outs : NULL, W - 1, NULL) == 0);
    if (R == W - 1) for (int i = 0; i < W; i++) CHECK(first(outs[i]) == i * 10);
    /* scatter from rank 0: rank i gets i + 100 */
    for (int i = 0; i < W; i++) ins[i] = dev(tn_full(TN_SHAPE(2, 3), i + 100, TN_F64));
    tn_tensor *got = dev(tn_zeros(TN_SHAPE(2, 3), TN_F64));
    CHECK(tn_dist_scatter(got, R == 0 ? ins : NULL, 0, NULL) == 0 && first(got) == R + 100);
    /* reduce_scatter: rank i gets the sum over ranks of their ins[i] = (rank + 1) * (i + 1) */
    for (int i = 0; i < W; i++) ins[i] = dev(tn_full(TN_SHAPE(3), (R + 1) * (i + 1), TN_I64));
    tn_tensor *out = dev(tn_zeros(TN_SHAPE(3), TN_I64));
    CHECK(tn_dist_reduce_scatter(out, ins, TN_DIST_SUM, NULL) == 0 && first(out) == (R + 1) * W * (W + 1) / 2);
    for (int i = 0; i < W; i++) ins[i] = dev(tn_full(TN_SHAPE(3), (R + 1) * (i + 1), TN_F32));
    tn_tensor *outf = tn_narrow(dev(tn_zeros(TN_SHAPE(6), TN_F32)), 0, 0, 3);   /* a view of a bigger buffer */
    CHECK(tn_dist_reduce_scatter(outf, ins, TN_DIST_MAX, NULL) == 0 && first(outf) == W * (R + 1));
    ins[W - 1] = dev(tn_zeros(TN_SHAPE(4), TN_I64));                 /* a wrong shape in the list */
    CHECK(tn_dist_reduce_scatter(out, ins, TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "every tensor must be"));
    for (int i = 0; i < W; i++) outs[i] = tn_zeros(TN_SHAPE(2, 3), TN_F32);   /* CPU tensors in the list */
    CHECK(tn_dist_all_gather(outs, mine, NULL) == -1 && strstr(tn_last_error(), "Tensors must be CUDA and dense"));
    tn_scope_end();
}

TEST(point_to_point_and_async) {
    tn_scope_begin();
    if (W > 1) {
        const int next = (R + 1) % W, prev = (R + W - 1) % W;
        tn_dist_work *s = tn_dist_send_async(filled(R, TN_F32), next, 7, NULL);
        tn_tensor *t = filled(-1, TN_F32);
        CHECK(tn_dist_recv(t, prev, 7, NULL) == prev && first(t) == prev);   /* returns the sender's rank */
        CHECK(s && tn_dist_wait(s) == 0);
        CHECK(tn_dist_recv(t, -1, 0, NULL) == -1 && strstr(tn_last_error(), "cannot receive from any source"));
    }
    CHECK(tn_dist_send(filled(1, TN_F32), R, 0, NULL) == -1 && strstr(tn_last_error(), "Invalid destination rank"));
    CHECK(tn_dist_recv(filled(1, TN_F32), R, 0, NULL) == -1 && strstr(tn_last_error(), "Invalid source rank"));
    CHECK(tn_dist_send(filled(1, TN_F32), W, 0, NULL) == -1 && strstr(tn_last_error(), "is not in the world"));
    tn_tensor *a = filled(1, TN_F64), *b = filled(2, TN_BF16);
    tn_dist_work *w = tn_dist_all_reduce_async(a, TN_DIST_SUM, NULL), *w2 = tn_dist_all_reduce_async(b, TN_DIST_AVG, NULL);
    int done = 0;
    for (int i = 0; i < 1000000 && done == 0; i++) done = tn_dist_test(w);
    CHECK(w && done == 1 && tn_dist_test(w) == 1 && tn_dist_wait(w) == 0 && first(a) == W);
    CHECK(w2 && tn_dist_wait(w2) == 0 && first(b) == 2);
    CHECK(tn_dist_wait(NULL) == -1 && tn_dist_test(NULL) == -1);
    CHECK(tn_dist_barrier(NULL) == 0);
    tn_scope_end();
}

TEST(subgroups) {
    tn_scope_begin();
    int64_t ranks[2] = {W - 1, 0};                                   /* group order as given: W - 1 is rank 0 */
    const int n = W > 1 ? 2 : 1;
    tn_dist_group *g = tn_dist_new_group(ranks, n);
    CHECK(g != NULL);
    const bool member = R == 0 || R == W - 1;
    CHECK(tn_dist_get_world_size(g) == n && tn_dist_get_rank(g) == (member ? (R == W - 1 ? 0 : 1) : -1));
    tn_tensor *t = filled(R + 1, TN_F32);
    if (member) CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, g) == 0 && first(t) == (W > 1 ? 1 + W : 1));
    else CHECK(tn_dist_all_reduce(t, TN_DIST_SUM, g) == -1 && strstr(tn_last_error(), "not a member of the group"));
    if (member) {
        tn_tensor *s = filled(R == 0 ? 5 : 6, TN_F32);
        CHECK(tn_dist_broadcast(s, 0, g) == 0 && first(s) == 5);   /* a global rank as the source */
        tn_tensor *outs[2] = {filled(0, TN_I32), filled(0, TN_I32)};
        CHECK(tn_dist_all_gather(outs, filled(R, TN_I32), g) == 0 && first(outs[0]) == W - 1 && first(outs[n - 1]) == 0);
        CHECK(tn_dist_barrier(g) == 0);
    }
    if (W > 2 && member) CHECK(tn_dist_broadcast(t, 1, g) == -1 && strstr(tn_last_error(), "global rank 1 is not a member"));
    tn_dist_group_free(g);
    tn_dist_group *none = tn_dist_new_group(NULL, 0);                /* no members: every rank is outside */
    CHECK(none && tn_dist_get_world_size(none) == 0 && tn_dist_get_rank(none) == -1);
    CHECK(tn_dist_barrier(none) == -1 && strstr(tn_last_error(), "not a member of the group"));
    tn_dist_group_free(none);
    int64_t dup[2] = {0, 0}, out_of_world[1] = {W};
    CHECK(W < 2 || (tn_dist_new_group(dup, 2) == NULL && strstr(tn_last_error(), "listed twice")));
    CHECK(tn_dist_new_group(out_of_world, 1) == NULL && strstr(tn_last_error(), "is not in the world"));
    tn_scope_end();
}

/* A 4-3-2 MLP as explicit leaves: w1, b1, w2, b2 (and an unused one), from seed (on the CPU). */
static void mlp_init(tn_tensor **p, uint64_t seed, bool cuda) {
    tn_manual_seed(seed);
    const int64_t shapes[5][2] = {{3, 4}, {3, 1}, {2, 3}, {2, 1}, {5, 1}};
    for (int i = 0; i < 5; i++) {
        tn_scope_begin();
        tn_tensor *x = tn_randn(shapes[i], shapes[i][1] == 1 ? 1 : 2, TN_F64);
        p[i] = tn_retain(cuda ? tn_to(x, TN_CUDA) : x);
        tn_scope_end();
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

/* DDP over nccl with the parameters on the device: buckets all-reduced there; W ranks with a
   share each equal one process on the whole batch (on the CPU), with one bucket per
   parameter and one for all, no_sync accumulation and an unused parameter. */
TEST(ddp_matches_one_process) {
    for (int caps = 0; caps < 2; caps++) {
        tn_scope_begin();
        tn_tensor *p[5], *ref[5];
        mlp_init(p, 100 + (uint64_t)R, true);            /* different on every rank: DDP broadcasts rank 0's */
        tn_ddp *d = tn_ddp_new(p, 5, NULL, .bucket_cap_mb = caps ? 25 : 1e-6);
        CHECK(d != NULL);
        mlp_init(ref, 100, false);                       /* rank 0's, here too */
        for (int i = 0; i < 5; i++) CHECK(tn_get_device(p[i]) == TN_CUDA && tn_equal(tn_to(p[i], TN_CPU), ref[i]));
        tn_manual_seed(7);                               /* the same global batches on every rank */
        for (int step = 0; step < 3; step++) {
            tn_tensor *X = tn_randn(TN_SHAPE(4 * W, 4), TN_F64), *Y = tn_randn(TN_SHAPE(4 * W, 2), TN_F64);
            tn_tensor *X2 = tn_randn(TN_SHAPE(4 * W, 4), TN_F64), *Y2 = tn_randn(TN_SHAPE(4 * W, 2), TN_F64);
            tn_tensor *x = dev(tn_narrow(X, 0, 4 * R, 4)), *y = dev(tn_narrow(Y, 0, 4 * R, 4));
            int64_t local_moves = -1;                    /* host <-> device copies of a backward without sync */
            if (step == 2) {                             /* micro-batch 1 without sync, 2 with */
                CHECK(tn_ddp_no_sync(d, true) == 0);
                tn_tensor *l = mlp_loss(p, dev(tn_narrow(X2, 0, 4 * R, 4)), dev(tn_narrow(Y2, 0, 4 * R, 4)));
                const int64_t t0 = transfers();
                CHECK(tn_backward(l) == 0);
                local_moves = transfers() - t0;
                CHECK(tn_ddp_no_sync(d, false) == 0);
                CHECK(tn_backward(mlp_loss(ref, X2, Y2)) == 0);
            }
            tn_tensor *l = mlp_loss(p, x, y);
            const int64_t t0 = transfers();
            CHECK(tn_backward(l) == 0);
            if (local_moves >= 0) CHECK(transfers() - t0 == local_moves);   /* the buckets' all-reduce adds no host staging */
            CHECK(tn_backward(mlp_loss(ref, X, Y)) == 0);
            for (int i = 0; i < 4; i++)
                CHECK(tn_get_device(tn_grad(p[i])) == TN_CUDA && tn_allclose(tn_to(tn_grad(p[i]), TN_CPU), tn_grad(ref[i]), .rtol = 1e-10, .atol = 1e-12));
            CHECK(tn_grad(p[4]) && tn_item(tn_sum(tn_abs(tn_grad(p[4])))) == 0);   /* unused: zeros */
            sgd(p, 5, 0.1);
            sgd(ref, 5, 0.1);
        }
        for (int i = 0; i < 4; i++) CHECK(tn_allclose(tn_to(p[i], TN_CPU), ref[i], .rtol = 1e-10, .atol = 1e-12));
        tn_ddp_free(d);
        for (int i = 0; i < 5; i++) { tn_release(p[i]); tn_release(ref[i]); }
        tn_scope_end();
    }
}

/* The CNN of the examples in small (conv 3x3, ReLU, 2x2 max pool, linear, cross-entropy;
   float64, so no TF32 on a GPU) for a few DDP steps over nccl on the device against one
   process on the whole batch on the CPU. */
static tn_tensor *cnn_loss(tn_tensor **p, tn_tensor *x, tn_tensor *y) {
    tn_tensor *h = tn_max_pool2d(tn_relu(tn_conv2d(x, p[0], p[1])), 2);
    return tn_cross_entropy(tn_linear(tn_flatten(h, .start_dim = 1), p[2], p[3]), y);
}
TEST(ddp_cnn_matches_one_process) {
    tn_scope_begin();
    const int64_t shapes[4][4] = {{4, 1, 3, 3}, {4}, {10, 36}, {10}};
    const int nd[4] = {4, 1, 2, 1};
    tn_tensor *p[4], *ref[4];
    tn_manual_seed(11);
    for (int i = 0; i < 4; i++) {
        ref[i] = tn_retain(tn_mul_scalar(tn_randn(shapes[i], nd[i], TN_F64), 0.3));
        p[i] = tn_retain(dev(ref[i]));
        tn_requires_grad_(ref[i], true);
        tn_requires_grad_(p[i], true);
    }
    tn_ddp *d = tn_ddp_new(p, 4, NULL);
    CHECK(d != NULL);
    for (int step = 0; step < 4; step++) {
        tn_tensor *X = tn_randn(TN_SHAPE(2 * W, 1, 8, 8), TN_F64);
        tn_tensor *Y = tn_randint(0, 10, TN_SHAPE(2 * W), TN_I64, NULL);
        CHECK(tn_backward(cnn_loss(p, dev(tn_narrow(X, 0, 2 * R, 2)), dev(tn_narrow(Y, 0, 2 * R, 2)))) == 0);
        CHECK(tn_backward(cnn_loss(ref, X, Y)) == 0);
        for (int i = 0; i < 4; i++) CHECK(tn_allclose(tn_to(tn_grad(p[i]), TN_CPU), tn_grad(ref[i]), .rtol = 1e-9, .atol = 1e-12));
        sgd(p, 4, 0.5);
        sgd(ref, 4, 0.5);
    }
    for (int i = 0; i < 4; i++) CHECK(tn_allclose(tn_to(p[i], TN_CPU), ref[i], .rtol = 1e-9, .atol = 1e-12));
    tn_ddp_free(d);
    for (int i = 0; i < 4; i++) { tn_release(p[i]); tn_release(ref[i]); }
    tn_scope_end();
}

#ifndef TENSOR_MPI
/* a port nobody listens on now (the kernel's choice for port 0) */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && getsockname(fd, (struct sockaddr *)&sa, &len) == 0) port = ntohs(sa.sin_port);
    if (fd >= 0) close(fd);
    return port;
}
static void set_env(int rank, int world, const char *addr, int port) {
    char r[16], w[16], p[16];
    snprintf(r, sizeof r, "%d", rank);
    snprintf(w, sizeof w, "%d", world);
    snprintf(p, sizeof p, "%d", port);
    setenv("RANK", r, 1);
    setenv("WORLD_SIZE", w, 1);
    if (addr) setenv("MASTER_ADDR", addr, 1); else unsetenv("MASTER_ADDR");
    setenv("MASTER_PORT", p, 1);
}
static void clear_env(void) { unsetenv("RANK"); unsetenv("WORLD_SIZE"); unsetenv("MASTER_ADDR"); unsetenv("MASTER_PORT"); }

/* the white-box rendezvous of tensor.h (TN_TESTING) */
int tn__tcp_rendezvous(const char *fn, int rank, int world, const char *addr, const char *port, double timeout_s);
int tn__tcp_bcast(const char *fn, int rank, void *buf, size_t n, double timeout_s);
void tn__tcp_close(void);

/* torchrun's variables, each one PyTorch's env:// rendezvous needs (also for one process),
   in its order and words; .rank / .world_size stand in for RANK / WORLD_SIZE */
#define ENV_MSG "Error initializing torch.distributed using env:// rendezvous: environment variable "
TEST(torchrun_variables) {
    clear_env();
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), ENV_MSG "RANK expected, but not set"));
    setenv("RANK", "0", 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), ENV_MSG "WORLD_SIZE expected, but not set"));
    setenv("WORLD_SIZE", "1", 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), ENV_MSG "MASTER_ADDR expected, but not set"));
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), ENV_MSG "MASTER_PORT expected, but not set"));
    clear_env();
    CHECK(tn_dist_init("nccl", .rank = 0) == -1 && strstr(tn_last_error(), ENV_MSG "WORLD_SIZE expected, but not set"));
    CHECK(tn_dist_init("nccl", .rank = 0, .world_size = 1) == -1 && strstr(tn_last_error(), ENV_MSG "MASTER_ADDR expected, but not set"));
    CHECK(tn_dist_init("nccl", .rank = -2) == -1 && strstr(tn_last_error(), "each is -1 (not given)"));
    CHECK(tn_dist_init("nccl", .world_size = 0) == -1 && strstr(tn_last_error(), "each is -1 (not given)"));
    CHECK(tn_dist_init_str("nccl", "rank=0, world_size=1") == -1 && strstr(tn_last_error(), ENV_MSG "MASTER_ADDR expected, but not set"));
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", "29500", 1);   /* one process: nothing listens, as the variables are all it needs */
    CHECK(tn_dist_init("nccl", .rank = 1, .world_size = 1) == -1 && strstr(tn_last_error(), "RANK=1 is not below WORLD_SIZE=1"));
    CHECK(tn_dist_init("nccl", .rank = 0, .world_size = 1) == 0 && tn_dist_get_world_size(NULL) == 1 && tn_dist_destroy() == 0);
    clear_env();
    setenv("RANK", "0", 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), ENV_MSG "WORLD_SIZE expected, but not set"));
    set_env(2, 2, "127.0.0.1", 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "RANK=2 is not below WORLD_SIZE=2"));
    setenv("WORLD_SIZE", "two", 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "WORLD_SIZE=two is not an integer"));
    set_env(1, 2, NULL, 1);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "MASTER_ADDR expected, but not set"));
    set_env(1, 2, "127.0.0.1", 0);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "MASTER_PORT=0 is not a port number"));
    set_env(1, 2, "no-such-host.invalid", 29500);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "no IPv4 address for that host"));
    /* rank 0 alone of 2: the others never come, an error after the timeout */
    set_env(0, 2, "127.0.0.1", free_port());
    CHECK(tn_dist_init("nccl", .timeout = 1) == -1 && strstr(tn_last_error(), "timed out after 1 s: 1 of 2 ranks connected"));
    set_env(1, 2, "127.0.0.1", free_port());
    CHECK(tn_dist_init("nccl", .timeout = 1) == -1 && strstr(tn_last_error(), "timed out after 1 s connecting to rank 0 at 127.0.0.1"));
    /* a host that never answers (a non-routed address): the deadline holds, connect() does not block for minutes */
    set_env(1, 2, "10.255.255.1", free_port());
    const time_t t0 = time(NULL);
    CHECK(tn_dist_init("nccl", .timeout = 1) == -1 && strstr(tn_last_error(), "timed out after 1 s connecting to rank 0 at 10.255.255.1"));
    CHECK(time(NULL) - t0 < 5);
    CHECK(!tn_dist_is_initialized());
    clear_env();
}

/* Two processes (fork) meet through MASTER_ADDR:MASTER_PORT: rank 1 receives what rank 0
   sends; then tn_dist_init("nccl") end to end: rank 0's stand-in id reaches rank 1, whose
   INIT recognises it (and then says two processes need the MPI build, as the stand-in does). */
TEST(tcp_rendezvous_two_processes) {
    char port[16];
    snprintf(port, sizeof port, "%d", free_port());
    unsigned char msg[129];
    for (int i = 0; i < 129; i++) msg[i] = (unsigned char)(i * 7 + 3);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char got[129];
        memset(got, 0, sizeof got);
        int ok = tn__tcp_rendezvous("child", 1, 2, "localhost", port, 10) == 0 && tn__tcp_bcast("child", 1, got, sizeof got, 10) == 0 &&
                 memcmp(got, msg, sizeof got) == 0;
        tn__tcp_close();
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0);
    CHECK(tn__tcp_rendezvous("parent", 0, 2, NULL, port, 10) == 0 && tn__tcp_bcast("parent", 0, msg, sizeof msg, 10) == 0);
    tn__tcp_close();
    int st = -1;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    /* a connection that never says its rank (a port scanner) is dropped after a few seconds,
       not held to the deadline: rank 1, connecting after it, still joins */
    snprintf(port, sizeof port, "%d", free_port());
    fflush(NULL);
    pid_t silent = fork();
    if (silent == 0) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(port));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int tries = 0; tries < 500; tries++) {   /* until rank 0 listens */
            const int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) { sleep(20); _exit(0); }
            if (fd >= 0) close(fd);
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        }
        _exit(1);
    }
    pid = fork();
    if (pid == 0) {
        nanosleep(&(struct timespec){0, 500000000}, NULL);   /* after the silent one */
        int ok = tn__tcp_rendezvous("child", 1, 2, "127.0.0.1", port, 15) == 0;
        tn__tcp_close();
        _exit(ok ? 0 : 1);
    }
    const double t0 = (double)time(NULL);
    CHECK(tn__tcp_rendezvous("parent", 0, 2, NULL, port, 15) == 0);
    CHECK((double)time(NULL) - t0 < 12);   /* the silent peer cost its few seconds, not the 15 s deadline */
    tn__tcp_close();
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    kill(silent, SIGKILL);
    waitpid(silent, &st, 0);

    if (gpu) return;   /* two ranks on one GPU: NCCL refuses (the stand-in's id check is what this proves) */
    const int p = free_port();
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        set_env(1, 2, "127.0.0.1", p);
        const int rc = tn_dist_init("nccl", .timeout = 10);
        _exit(rc == -1 && strstr(tn_last_error(), "nccl over 2 ranks needs the MPI build") ? 0 : 1);
    }
    set_env(0, 2, "127.0.0.1", p);
    CHECK(tn_dist_init("nccl", .timeout = 10) == -1 && strstr(tn_last_error(), "nccl over 2 ranks needs the MPI build"));
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(!tn_dist_is_initialized());
    clear_env();
}
#endif

int main(int argc, char **argv) {
    const bool timeout_mode = argc > 1 && !strcmp(argv[1], "timeout");
    gpu = tn_cuda_is_available();   /* the GPU unit with a GPU (make gpu-check): real NCCL; else the stand-in */
    printf("test_dist_nccl: %s\n", gpu ? "NCCL on the GPU" : "the stand-in's nccl entry (no GPU)");
    if (!timeout_mode && !gpu) RUN(unavailable_without_a_cuda_backend);
    if (!gpu) tn_debug_cuda_stand_in();
    CHECK(tn_dist_is_backend_available("nccl") && tn_dist_is_available());
#ifndef TENSOR_MPI
    RUN(torchrun_variables);
    RUN(tcp_rendezvous_two_processes);
    set_env(0, 1, "127.0.0.1", 29500);   /* one process, as torchrun --nproc-per-node 1 starts it */
#endif
    if (tn_dist_init("nccl", .timeout = timeout_mode ? 2 : 0)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    R = tn_dist_get_rank(NULL);
    W = tn_dist_get_world_size(NULL);
    if (timeout_mode) {
        /* rank 0 waits at a barrier that rank 1 reaches only after the 2-second deadline */
        if (R == 1) sleep(4);
        int rc = tn_dist_barrier(NULL);
        char first_error[512];
        snprintf(first_error, sizeof first_error, "%s", tn_last_error());
        tn_scope_begin();
        const int again = tn_dist_all_reduce(filled(1, TN_F32), TN_DIST_SUM, NULL);
        tn_scope_end();
        if (R == 0) printf("rank 0: %s\n", rc == -1 ? first_error : "no timeout");
        const bool ok = rc == -1 && strstr(first_error, "timed out after 2 s") && strstr(first_error, "communicator was aborted") && again == -1 &&
                        strstr(tn_last_error(), "process group is broken");
        tn_dist_destroy();
        return R == 0 ? (ok ? 0 : 1) : 0;
    }
    CHECK(tn_dist_is_initialized() && W >= 1 && R >= 0 && R < W && W <= 64);
    CHECK(tn_dist_init("nccl") == -1 && strstr(tn_last_error(), "already initialized"));
    RUN(all_reduce_every_dtype_and_op);
    RUN(broadcast_and_reduce);
    RUN(lists);
    RUN(point_to_point_and_async);
    RUN(subgroups);
    RUN(ddp_matches_one_process);
    RUN(ddp_cnn_matches_one_process);
    CHECK(tn_dist_destroy() == 0 && !tn_dist_is_initialized());
    CHECK(tn_dist_destroy() == -1 && strstr(tn_last_error(), "not initialized"));
    tn_scope_begin();
    CHECK(tn_dist_all_reduce(filled(1, TN_F32), TN_DIST_SUM, NULL) == -1 && strstr(tn_last_error(), "not initialized"));
    tn_scope_end();
#ifndef TENSOR_MPI
    /* without MPI nothing stops a second init in the same process */
    CHECK(tn_dist_init("nccl") == 0 && tn_dist_get_world_size(NULL) == 1 && tn_dist_destroy() == 0);
#endif
    char name[32];
    snprintf(name, sizeof name, "rank %d of %d", R, W);
    tn_test_current = name;
    return tn_test_report();
}
