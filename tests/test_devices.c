/* test_devices.c — the header's device handling, on any machine.
 *
 * A stand-in for the GPU unit is registered for TN_CUDA: the CPU kernels over host
 * memory, wrapped so that every operand a kernel gets is checked as the real unit needs
 * it (on the device, or a 0-d CPU scalar where the unit takes one). Then the GPU test
 * cases of cuda_cases.h run against it, plus cases that once let a CPU tensor reach a
 * device kernel. A "violation" is such an operand: on a real GPU, an illegal address. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static tn_backend stand_in;
static const tn_backend *cpu;
static int violations;
static void violation(const char *op, const char *what, const tn_tensor *t) {
    violations++;
    fail_at(0, "%s: operand %s is on %s (%lld elements): a device kernel would get a host pointer", op, what, tn_device_name(t->device),
            (long long)tn_numel(t));
}
#define ON_DEVICE(op, t) do { if ((t) && (t)->device != TN_CUDA) violation(op, #t, (t)); } while (0)
#define ON_DEVICE_OR_SCALAR(op, t) do { if ((t) && (t)->device != TN_CUDA && (tn_numel(t) != 1 || (t)->ndim != 0)) violation(op, #t, (t)); } while (0)

static int w_copy(tn_tensor *dst, tn_tensor *src) {
    if (dst->device != TN_CUDA && src->device != TN_CUDA) violation("copy", "both", dst);
    return cpu->copy(dst, src);
}
static int w_fill(tn_tensor *t, double v) { ON_DEVICE("fill", t); return cpu->fill(t, v); }
static int w_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *p) {
    ON_DEVICE("unary", out); ON_DEVICE_OR_SCALAR("unary", x); return cpu->unary(op, out, x, p);
}
static int w_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double al) {
    ON_DEVICE("binary", out); ON_DEVICE_OR_SCALAR("binary", a); ON_DEVICE_OR_SCALAR("binary", b); return cpu->binary(op, out, a, b, al);
}
static int w_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, tn_tensor *c, double v) {
    ON_DEVICE("ternary", out); ON_DEVICE_OR_SCALAR("ternary", a); ON_DEVICE_OR_SCALAR("ternary", b); ON_DEVICE_OR_SCALAR("ternary", c);
    return cpu->ternary(op, out, a, b, c, v);
}
static int w_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) { ON_DEVICE("reduce", out); ON_DEVICE("reduce", x); return cpu->reduce(op, out, x); }
static int w_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t d, int f) {
    ON_DEVICE("lane", out); ON_DEVICE("lane", out1); ON_DEVICE("lane", x); return cpu->lane(op, out, out1, x, d, f);
}
static int w_index(tn_index_mode m, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *is, int k) {
    ON_DEVICE("index", dst); ON_DEVICE("index", src);
    for (int j = 0; j < k; j++) ON_DEVICE("index", idx[j]);
    return cpu->index(m, dst, src, idx, is, k);
}
static tn_tensor *w_nonzero(tn_tensor *x) {
    ON_DEVICE("nonzero", x);
    tn_tensor *r = cpu->nonzero(x);
    if (!r) return NULL;
    tn_scope_begin();
    tn_tensor *d = tn_retain(tn_to(r, TN_CUDA)); /* as the unit does: the result lives on the device */
    tn_scope_end();
    tn_release(r);
    return d;
}
static int w_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double al, double be) {
    ON_DEVICE("matmul", c); ON_DEVICE("matmul", a); ON_DEVICE("matmul", b); return cpu->matmul(c, a, b, al, be);
}
static int w_random(tn_random_op op, tn_tensor *o, uint64_t s, uint64_t off, double a, double b, int64_t l, uint64_t r) {
    ON_DEVICE("random", o); return cpu->random(op, o, s, off, a, b, l, r);
}
static int w_im2col(int f, tn_tensor *c, tn_tensor *i, const int64_t *g) { ON_DEVICE("im2col", c); ON_DEVICE("im2col", i); return cpu->im2col(f, c, i, g); }
static int w_pool(tn_tensor *idx, tn_tensor *x, const int64_t *a, const int64_t *b, const int64_t *c, const int64_t *d, int64_t e, int64_t f) {
    ON_DEVICE("pool_argmax", idx); ON_DEVICE("pool_argmax", x); return cpu->pool_argmax(idx, x, a, b, c, d, e, f);
}
static int w_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    ON_DEVICE("optim", p); ON_DEVICE("optim", g);
    for (int j = 0; j < 3; j++) ON_DEVICE("optim", s[j]);
    return cpu->optim(k, p, g, s);
}

#include "cuda_cases.h"

static tn_tensor *dev(tn_tensor *t) { return tn_to(t, TN_CUDA); }
#define I64(...) tn_from_data((int64_t[]){__VA_ARGS__}, TN_SHAPE(sizeof((int64_t[]){__VA_ARGS__}) / 8), TN_I64)
#define ON_GPU(what, expr) do { tn_clear_error(); int v0_ = violations; tn_tensor *r_ = (expr); \
    if (!r_) fail_at(__LINE__, "%s: %s", what, tn_last_error()); \
    else if (r_->device != TN_CUDA) fail_at(__LINE__, "%s: the result is on %s", what, tn_device_name(r_->device)); \
    else if (violations == v0_) tn_test_passed++; } while (0)

/* Each of these once handed a CPU tensor to a device kernel, or left a result on the CPU. */
TEST(device_mixing) {
    tn_scope_begin();
    tn_tensor *x2 = dev(tn_randn(TN_SHAPE(4, 6), TN_F32)), *x4 = dev(tn_randn(TN_SHAPE(2, 3, 8, 8), TN_F32));
    tn_requires_grad_(x2, true);
    ON_GPU("add_scalar", tn_add_scalar(x2, 0.5));
    ON_GPU("mean", tn_mean(x2));
    ON_GPU("triu", tn_triu(x2, 0));
    ON_GPU("where with a CPU scalar condition", tn_where(tn_scalar_bool(true), x2, x2));
    ON_GPU("where with CPU scalar values", tn_where(dev(tn_gt(tn_randn(TN_SHAPE(4, 6), TN_F32), tn_scalar(0))), tn_scalar(1), tn_scalar(2)));
    ON_GPU("lerp_scalar", tn_lerp_scalar(x2, x2, 0.25));
    CHECK_ERR(tn_index_select(x2, 0, I64(3, 0)), "same device");   /* as PyTorch (advanced indexing moves them) */
    ON_GPU("index with a CPU 0-d index", tn_index_select(x2, 0, tn_scalar_int(1)));
    tn_tensor *cpu_idx = I64(1, 3);
    ON_GPU("advanced index with CPU indices", tn_index(x2, &cpu_idx, 1));
    ON_GPU("rand_like", tn_rand_like(x2));
    ON_GPU("randn_like", tn_randn_like(x2));
    ON_GPU("bernoulli", tn_bernoulli(dev(tn_full(TN_SHAPE(5), 0.5, TN_F32)), NULL));
    ON_GPU("dropout", tn_dropout(x2, 0.5, true));
    ON_GPU("dropout p=1", tn_dropout(x2, 1.0, true));
    ON_GPU("avg_pool2d", tn_avg_pool2d(x4, 3, 2, 1, false, true));
    ON_GPU("one_hot", tn_one_hot(dev(I64(0, 2)), 3));
    ON_GPU("interpolate nearest", tn_interpolate(x4, (int64_t[]){16, 16}, NULL, "nearest", false));
    ON_GPU("interpolate bilinear", tn_interpolate(x4, (int64_t[]){16, 16}, NULL, "bilinear", false));
    /* gradients that build helper tensors */
    tn_tensor *p = tn_prod_dims(x2, TN_DIMS(1), false);
    CHECK_MSG(tn_backward(tn_sum(p)) == 0 && tn_grad(x2) && tn_grad(x2)->device == TN_CUDA, "prod backward: %s", tn_last_error());
    tn_tensor *y = dev(tn_randn(TN_SHAPE(5, 3), TN_F32));
    tn_requires_grad_(y, true);
    tn_tensor *ix = dev(I64(1, 3));
    tn_tensor *z = tn_index_put(y, &ix, 1, dev(tn_randn(TN_SHAPE(2, 3), TN_F32)), false);
    CHECK_MSG(z && tn_backward(tn_sum(z)) == 0 && tn_grad(y)->device == TN_CUDA, "index_put backward: %s", tn_last_error());
    /* in place with a CPU value or into a CPU target */
    tn_tensor *t = dev(tn_zeros(TN_SHAPE(3, 4), TN_F32));
    tn_tensor *i2 = dev(I64(0, 2));
    ON_GPU("index_put_ with a CPU 0-d value", tn_index_put_(t, &i2, 1, tn_scalar_tensor(5, TN_F32), false));
    CHECK_ERR(tn_scatter_add(t, 0, dev(tn_reshape(I64(0, 1, 2, 0), TN_SHAPE(1, 4))), tn_ones(TN_SHAPE(1, 4), TN_F32)), "same device");
    CHECK_ERR(tn_add_(tn_scalar_tensor(0, TN_F32), dev(tn_scalar_tensor(2, TN_F32))), "same device");
    tn_scope_end();
}

int main(void) {
    cpu = tn_get_backend(TN_CPU);
    stand_in = *cpu;
    stand_in.name = "cuda (stand-in)";
    stand_in.copy = w_copy; stand_in.fill = w_fill; stand_in.unary = w_unary; stand_in.binary = w_binary;
    stand_in.ternary = w_ternary; stand_in.reduce = w_reduce; stand_in.lane = w_lane; stand_in.index = w_index;
    stand_in.nonzero = w_nonzero; stand_in.matmul = w_matmul; stand_in.random = w_random; stand_in.im2col = w_im2col;
    stand_in.pool_argmax = w_pool; stand_in.optim = w_optim;
    tn_register_backend(TN_CUDA, &stand_in);
    RUN(gpu_ops_match_cpu);
    RUN(gpu_random_matches_cpu);
    RUN(gpu_cnn_training_step);
    RUN(device_mixing);
    CHECK_MSG(violations == 0, "%d operands would have reached a GPU kernel from the CPU", violations);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
