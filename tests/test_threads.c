/* test_threads.c — the CPU kernels' OpenMP split gives the documented results:
 *   elementwise ops, optimizer steps, reductions, max pooling, convolution forward and
 *   input gradient, matrix products (split by rows, or by columns for a few rows): the same
 *   bits for 1, 2 and 3 threads; convolution's weight gradient
 *   (per-thread partial sums): the same bits twice at one thread count, and close across
 *   counts.
 * Built with -fopenmp (Makefile rule); without OpenMP every count is one thread and the
 * checks hold trivially. Sizes are above TN_PARALLEL_MIN so the threads do split. */
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include "tn_test.h"
#include <stdlib.h>

/* bitwise equality of two same-shaped tensors (NaN == NaN when the bits agree) */
static bool same_bits(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || tn_numel(a) != tn_numel(b) || tn_get_dtype(a) != tn_get_dtype(b)) return false;
    tn_tensor *ca = tn_contiguous(a), *cb = tn_contiguous(b);
    bool ok = !memcmp(tn_data_ptr(ca), tn_data_ptr(cb), (size_t)tn_numel(a) * tn_dtype_size(tn_get_dtype(a)));
    return ok;
}
static double max_abs_diff(tn_tensor *a, tn_tensor *b) { return tn_item(tn_max(tn_abs(tn_sub(a, b)))); }

typedef tn_tensor *(*op_fn)(tn_tensor *const *in);
/* fn's result at 1 thread against 2 and 3 threads: identical bits */
static void check_invariant(const char *name, op_fn fn, tn_tensor *const *in, int line) {
    tn_set_num_threads(1);
    tn_tensor *r1 = fn(in);
    for (int t = 2; t <= 3; t++) {
        tn_set_num_threads(t);
        tn_tensor *rt = fn(in);
        if (same_bits(r1, rt)) tn_test_passed++;
        else fail_at(line, "%s: %d threads differ from 1 (max |diff| %g)", name, t, rt && r1 ? max_abs_diff(r1, rt) : -1.0);
    }
    tn_set_num_threads(1);
}
#define INVARIANT(fn, ...) do { tn_tensor *in_[] = {__VA_ARGS__}; check_invariant(#fn, fn, in_, __LINE__); } while (0)

static tn_tensor *f_add(tn_tensor *const *in) { return tn_add(in[0], in[1]); }
/* batch norm (training) and its plain backward: threads take channels */
static tn_tensor *f_bn(tn_tensor *const *in) {
    tn_tensor *x = tn_detach(in[0]);
    tn_requires_grad_(x, true);
    tn_tensor *y = tn_batch_norm(x, NULL, NULL, .weight = in[1], .bias = in[2], .training = true);
    tn_backward(tn_sum(tn_mul(y, y)));
    return tn_cat(((tn_tensor *[]){tn_flatten(y), tn_flatten(tn_grad(x))}), 2);
}
/* random draws from a fixed generator state: the same numbers for any thread count */
static tn_tensor *f_rand(tn_tensor *const *in) {
    tn_generator g;   /* a Philox stream (zero-initialised kind) */
    memset(&g, 0, sizeof g);
    g.seed = 7;
    g.offset = 1000;
    return tn_add(tn_rand_gen(in[0]->shape, in[0]->ndim, TN_F32, &g), tn_randn_gen(in[0]->shape, in[0]->ndim, TN_F64, &g));
}
/* dropout's one-pass mask from a fixed seed (mt19937: drawn serially) */
static tn_tensor *f_drop(tn_tensor *const *in) { tn_manual_seed(3); return tn_dropout(in[0], .p = 0.3); }
/* the same from a Philox default generator (the vectorised kernel, threads taking ranges of counters) */
static tn_tensor *f_drop_philox(tn_tensor *const *in) {
    tn_manual_seed(3);
    tn_default_generator()->kind = TN_GEN_PHILOX;
    tn_tensor *r = tn_dropout(in[0], .p = 0.3);
    tn_default_generator()->kind = TN_GEN_MT19937;
    return r;
}
static tn_tensor *f_bcast(tn_tensor *const *in) { return tn_mul(in[0], tn_slice(in[1], 0, 0, 1, 1)); }   /* [1, n] broadcast */
static tn_tensor *f_strided(tn_tensor *const *in) { return tn_exp(tn_transpose(in[0], 0, 1)); }
static tn_tensor *f_where(tn_tensor *const *in) { return tn_where(tn_gt_scalar(in[0], 0), in[0], in[1]); }
static tn_tensor *f_cast(tn_tensor *const *in) { return tn_to_dtype(in[0], TN_F64); }
static tn_tensor *f_copy(tn_tensor *const *in) { return tn_contiguous(tn_transpose(in[0], 0, 1)); }
static tn_tensor *f_sum_all(tn_tensor *const *in) { return tn_sum(in[0]); }
static tn_tensor *f_sum_rows(tn_tensor *const *in) { return tn_sum_dims(in[0], TN_SHAPE(1)); }
static tn_tensor *f_sum_cols(tn_tensor *const *in) { return tn_sum_dims(in[0], TN_SHAPE(0)); }
static tn_tensor *f_sum_bias(tn_tensor *const *in) { return tn_sum_dims(in[0], TN_SHAPE(0, 2, 3)); }
static tn_tensor *f_amax(tn_tensor *const *in) { return tn_amax(in[0], TN_SHAPE(1)); }
static tn_tensor *f_softmax(tn_tensor *const *in) { return tn_softmax(in[0], 1); }
static tn_tensor *f_pool(tn_tensor *const *in) { return tn_max_pool2d(in[0], 2, .stride = 2); }
static tn_tensor *f_pool3(tn_tensor *const *in) { return tn_max_pool2d(in[0], 3, .stride = 2, .padding = 1); }
static tn_tensor *f_conv(tn_tensor *const *in) { return tn_conv2d(in[0], in[1], in[2], .padding = 1); }
/* the input gradient (Winograd for these shapes) */
static tn_tensor *f_conv_gx(tn_tensor *const *in) {
    tn_tensor *xl = tn_detach(in[0]);
    tn_requires_grad_(xl, true);
    return tn_backward(tn_sum(tn_square(tn_conv2d(xl, in[1], NULL, .padding = 1)))) ? NULL : tn_grad(xl);
}
/* depthwise: the forward and the input gradient by the direct loops */
static tn_tensor *f_dwconv(tn_tensor *const *in) {
    tn_tensor *xl = tn_detach(in[0]);
    tn_requires_grad_(xl, true);
    tn_tensor *y = tn_conv2d(xl, in[1], NULL, .padding = 1, .groups = 8);
    tn_tensor *both[2] = {y, NULL};
    if (tn_backward(tn_sum(tn_square(y)))) return NULL;
    both[0] = tn_flatten(y);
    both[1] = tn_flatten(tn_grad(xl));
    return tn_cat(both, 2);
}
static tn_tensor *f_conv1x1(tn_tensor *const *in) { return tn_conv2d(in[0], tn_slice(in[1], 3, 1, 2, 1), NULL); }
/* three Adam steps and three SGD-momentum steps (the optimizers' elementwise loops) */
static tn_tensor *f_optim(tn_tensor *const *in) {
    tn_tensor *out[2];
    for (int j = 0; j < 2; j++) {
        tn_tensor *p = tn_clone(in[0]);
        tn_requires_grad_(p, true);
        tn_optim *o = j ? tn_optim_sgd(&p, 1, .lr = 0.1, .momentum = 0.9) : tn_optim_adamw(&p, 1, .lr = 0.01);
        for (int k = 0; k < 3; k++) {
            tn_set_grad(p, tn_mul_scalar(in[1], k + 1));
            tn_optim_step(o);
        }
        tn_optim_free(o);
        out[j] = tn_detach(p);
    }
    return tn_cat(out, 2);
}
static tn_tensor *f_relu_bw(tn_tensor *const *in) {   /* the input gradient of relu then max pool */
    tn_tensor *x = tn_detach(in[0]);
    tn_requires_grad_(x, true);
    tn_backward(tn_sum(tn_mul(tn_max_pool2d(tn_relu(x), 2, .stride = 2), in[1])));
    return tn_grad(x);
}

/* products: linear (x W^T + b: W^T is a transposing B), its ReLU, x @ B with B by rows, a
   transposed A (the weight gradient's dY^T X), and a batched matmul */
static tn_tensor *f_linear(tn_tensor *const *in) { return tn_relu(tn_linear(in[0], in[1], in[2])); }
static tn_tensor *f_mm(tn_tensor *const *in) { return tn_matmul(in[0], in[1]); }
static tn_tensor *f_mm_ta(tn_tensor *const *in) { return tn_matmul(tn_transpose(in[0], 0, 1), in[1]); }
static tn_tensor *f_bmm(tn_tensor *const *in) { return tn_matmul(in[0], in[1]); }

TEST(matrix_products) {
    tn_scope_begin();
    tn_manual_seed(4);
    /* M (rows) from one micro-panel to past two M blocks (the column split's limit), N with
       a ragged last panel, K over several K slices; float32 and float64 */
    static const int64_t shapes[][3] = {{64, 784, 256}, {128, 784, 256}, {13, 300, 1030}, {200, 1100, 97}, {193, 200, 600}, {400, 96, 300}, {3, 64, 515}};
    for (int d = 0; d < 2; d++) {
        const tn_dtype dt = d ? TN_F64 : TN_F32;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
            tn_tensor *x = tn_randn(TN_SHAPE(M, K), dt), *w = tn_randn(TN_SHAPE(N, K), dt), *b = tn_randn(TN_SHAPE(N), dt);
            INVARIANT(f_linear, x, w, b);
            INVARIANT(f_mm, x, tn_randn(TN_SHAPE(K, N), dt));
            INVARIANT(f_mm_ta, tn_randn(TN_SHAPE(K, M), dt), tn_randn(TN_SHAPE(K, N), dt));
        }
        INVARIANT(f_bmm, tn_randn(TN_SHAPE(3, 40, 300), dt), tn_randn(TN_SHAPE(3, 300, 700), dt));
    }
    /* against float64: the split computes the right product, not only the same one */
    tn_tensor *x = tn_randn(TN_SHAPE(100, 333), TN_F32), *w = tn_randn(TN_SHAPE(777, 333), TN_F32);
    tn_set_num_threads(2);
    tn_tensor *y = tn_matmul(x, tn_transpose(w, 0, 1));
    tn_set_num_threads(1);
    tn_tensor *ref = tn_matmul(tn_to_dtype(x, TN_F64), tn_transpose(tn_to_dtype(w, TN_F64), 0, 1));
    CHECK(max_abs_diff(tn_to_dtype(y, TN_F64), ref) < 1e-3);
    tn_scope_end();
}

TEST(elementwise_and_reductions) {
    tn_scope_begin();
    tn_manual_seed(1);
    tn_tensor *a = tn_randn(TN_SHAPE(300, 257), TN_F32), *b = tn_randn(TN_SHAPE(300, 257), TN_F32);
    INVARIANT(f_add, a, b);
    INVARIANT(f_bn, tn_randn(TN_SHAPE(8, 16, 20, 20), TN_F32), tn_randn(TN_SHAPE(16), TN_F32), tn_randn(TN_SHAPE(16), TN_F32));
    /* more channels than a block (64) and an odd plane; float64 */
    INVARIANT(f_bn, tn_randn(TN_SHAPE(9, 131, 5, 7), TN_F64), tn_randn(TN_SHAPE(131), TN_F64), tn_randn(TN_SHAPE(131), TN_F64));
    INVARIANT(f_drop, tn_randn(TN_SHAPE(301, 257), TN_F32));
    INVARIANT(f_drop_philox, tn_randn(TN_SHAPE(301, 257), TN_F32));
    INVARIANT(f_rand, a);
    INVARIANT(f_bcast, a, b);
    INVARIANT(f_strided, a);
    INVARIANT(f_where, a, b);
    INVARIANT(f_cast, a);
    INVARIANT(f_copy, a);
    INVARIANT(f_sum_all, a);
    INVARIANT(f_sum_rows, a);
    INVARIANT(f_sum_cols, a);
    INVARIANT(f_amax, a);
    INVARIANT(f_softmax, a);
    INVARIANT(f_optim, a, b);
    INVARIANT(f_sum_bias, tn_randn(TN_SHAPE(8, 16, 30, 30), TN_F32));
    /* a row sum against a float64 reference */
    tn_tensor *rows = tn_sum_dims(a, TN_SHAPE(1)), *ref = tn_sum_dims(tn_to_dtype(a, TN_F64), TN_SHAPE(1));
    CHECK(max_abs_diff(tn_to_dtype(rows, TN_F64), ref) < 1e-4);
    tn_scope_end();
}

TEST(pooling_and_convolution) {
    tn_scope_begin();
    tn_manual_seed(2);
    tn_tensor *x = tn_randn(TN_SHAPE(6, 8, 30, 30), TN_F32), *w = tn_randn(TN_SHAPE(16, 8, 3, 3), TN_F32), *b = tn_randn(TN_SHAPE(16), TN_F32);
    INVARIANT(f_pool, x);
    INVARIANT(f_pool3, x);
    INVARIANT(f_conv, x, w, b);
    INVARIANT(f_conv_gx, x, w);
    INVARIANT(f_dwconv, x, tn_randn(TN_SHAPE(16, 1, 3, 3), TN_F32));
    INVARIANT(f_conv1x1, x, tn_randn(TN_SHAPE(16, 8, 1, 3), TN_F32));
    INVARIANT(f_relu_bw, x, tn_randn(TN_SHAPE(6, 8, 15, 15), TN_F32));
    /* the weight gradient: same bits twice at a thread count, close across counts */
    tn_tensor *gw[4] = {NULL, NULL, NULL, NULL};
    for (int t = 1; t <= 3; t++) {
        tn_set_num_threads(t);
        for (int rep = 0; rep < (t == 2 ? 2 : 1); rep++) {
            tn_tensor *wl = tn_detach(w);
            tn_requires_grad_(wl, true);
            tn_backward(tn_sum(tn_square(tn_conv2d(x, wl, b, .padding = 1))));
            if (rep == 1) CHECK(same_bits(tn_grad(wl), gw[2]));
            else gw[t] = tn_grad(wl);
        }
    }
    tn_set_num_threads(1);
    double scale = tn_item(tn_max(tn_abs(gw[1])));
    CHECK(max_abs_diff(gw[1], gw[2]) <= 1e-5 * scale);
    CHECK(max_abs_diff(gw[1], gw[3]) <= 1e-5 * scale);
    tn_scope_end();
}

int main(void) {
    RUN(elementwise_and_reductions);
    RUN(pooling_and_convolution);
    RUN(matrix_products);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
