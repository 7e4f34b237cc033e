/* test_devices.c — the header's device handling, on any machine.
 *
 * tn_debug_cuda_stand_in() registers for TN_CUDA the CPU kernels over host memory behind a
 * check of every operand as the real unit needs it (on the device, or a 0-d CPU scalar
 * where the unit takes one); a failed check is an error. Then the GPU test cases of
 * cuda_cases.h run against it, plus cases that once let a CPU tensor reach a device
 * kernel (on a real GPU: an illegal address) or left a result on the CPU. */
#define _POSIX_C_SOURCE 200809L   /* setenv (cuda_cases_attention.h) */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#include "cuda_cases.h"
#include "cuda_cases_more_a.h"
#include "cuda_cases_attention.h"
#include "cuda_cases_half.h"
#include "cuda_cases_linalg.h"
#include "cuda_cases_epilogue.h"
#include "cuda_cases_complex.h"
#include "cuda_cases_linalg_cx.h"

static tn_tensor *dev(tn_tensor *t) { return tn_to(t, TN_CUDA); }
#define I64(...) tn_from_data((int64_t[]){__VA_ARGS__}, TN_SHAPE(sizeof((int64_t[]){__VA_ARGS__}) / 8), TN_I64)
#define ON_GPU(what, expr) do { tn_clear_error(); tn_tensor *r_ = (expr); \
    if (!r_) fail_at(__LINE__, "%s: %s", what, tn_last_error()); \
    else if (r_->device != TN_CUDA) fail_at(__LINE__, "%s: the result is on %s", what, tn_device_name(r_->device)); \
    else tn_test_passed++; } while (0)

/* Each of these once handed a CPU tensor to a device kernel, or left a result on the CPU. */
TEST(device_mixing) {
    tn_scope_begin();
    tn_tensor *x2 = dev(tn_randn(TN_SHAPE(4, 6), TN_F32)), *x4 = dev(tn_randn(TN_SHAPE(2, 3, 8, 8), TN_F32));
    tn_requires_grad_(x2, true);
    ON_GPU("add_scalar", tn_add_scalar(x2, 0.5));
    ON_GPU("mean", tn_mean(x2));
    ON_GPU("triu", tn_triu(x2));
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
    ON_GPU("dropout", tn_dropout(x2));
    ON_GPU("dropout p=1", tn_dropout(x2, .p = 1.0));
    ON_GPU("avg_pool2d", tn_avg_pool2d(x4, 3, .stride = 2, .padding = 1));
    ON_GPU("one_hot", tn_one_hot(dev(I64(0, 2)), .num_classes = 3));
    ON_GPU("interpolate nearest", tn_interpolate(x4, .size = TN_INTS(16, 16)));
    ON_GPU("interpolate bilinear", tn_interpolate(x4, .size = TN_INTS(16, 16), .mode = "bilinear"));
    /* gradients that build helper tensors */
    tn_tensor *p = tn_prod_dims(x2, TN_DIMS(1));
    CHECK_MSG(tn_backward(tn_sum(p)) == 0 && tn_grad(x2) && tn_grad(x2)->device == TN_CUDA, "prod backward: %s", tn_last_error());
    tn_tensor *y = dev(tn_randn(TN_SHAPE(5, 3), TN_F32));
    tn_requires_grad_(y, true);
    tn_tensor *ix = dev(I64(1, 3));
    tn_tensor *z = tn_index_put(y, &ix, 1, dev(tn_randn(TN_SHAPE(2, 3), TN_F32)));
    CHECK_MSG(z && tn_backward(tn_sum(z)) == 0 && tn_grad(y)->device == TN_CUDA, "index_put backward: %s", tn_last_error());
    /* in place with a CPU value or into a CPU target */
    tn_tensor *t = dev(tn_zeros(TN_SHAPE(3, 4), TN_F32));
    tn_tensor *i2 = dev(I64(0, 2));
    ON_GPU("index_put_ with a CPU 0-d value", tn_index_put_(t, &i2, 1, tn_scalar_tensor(5, TN_F32)));
    CHECK_ERR(tn_scatter_add(t, 0, dev(tn_reshape(I64(0, 1, 2, 0), TN_SHAPE(1, 4))), tn_ones(TN_SHAPE(1, 4), TN_F32)), "same device");
    CHECK_ERR(tn_add_(tn_scalar_tensor(0, TN_F32), dev(tn_scalar_tensor(2, TN_F32))), "same device");
    /* the stand-in's own check: a CPU result handed to a device kernel */
    tn_tensor *cpu_out = tn_zeros(TN_SHAPE(4, 6), TN_F32);
    CHECK_ERR(tn_get_backend(TN_CUDA)->binary(ADD, cpu_out, x2, x2, 1) == 0, "stand-in GPU: binary got out on cpu");
    tn_scope_end();
}

int main(void) {
    tn_debug_cuda_stand_in();
    CHECK(!tn_cuda_is_available());   /* the stand-in is not a GPU */
    RUN(gpu_ops_match_cpu);
    RUN(gpu_more_a_ops_match_cpu);
    RUN(gpu_linalg_match_cpu);
    RUN(gpu_linalg_errors);
    RUN(gpu_linalg_more_match_cpu);
    RUN(gpu_linalg_more_errors);
    RUN(gpu_linalg_eig);
    RUN(gpu_complex_ops_match_cpu);
    RUN(gpu_linalg_complex_match_cpu);
    RUN(gpu_ldl_match_cpu);
    RUN(gpu_complex_declines);
    RUN(gpu_fft_match_cpu);
    RUN(gpu_half_bit_conversions);
    RUN(gpu_half_storage);
    RUN(gpu_copy_packs);
    RUN(gpu_half_ops_match_cpu);
    RUN(gpu_half_autocast);
    RUN(gpu_half_autocast_training);
    RUN(gpu_random_matches_cpu);
    RUN(gpu_norm_pool_state);
    RUN(gpu_library_entries);
    RUN(gpu_attention_declines);
    RUN(gpu_fused_attention);
    RUN(gpu_fused_attention_half);
    RUN(gpu_fused_mha);
    RUN(gpu_gemm_epilogue);
    RUN(gpu_mha_declined);
    RUN(gpu_multi_tensor_optim);
    RUN(gpu_cnn_training_step);
    RUN(device_mixing);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
