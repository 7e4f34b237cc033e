/* test_cuda.c — the GPU unit.
 *
 * Always: what a build without the unit (or a machine without a GPU) does — clear
 * errors, never a crash — and the scalar math the unit shares with the CPU.
 * With a GPU (built by `make cuda`, so TENSOR_CUDA is defined): every op and its
 * gradient on the GPU against the CPU result (float32 tolerances, TF32 off), the
 * caching allocator's reuse and statistics, and a CNN training step. */
#define _POSIX_C_SOURCE 200809L   /* setenv (cuda_cases_attention.h); popen, readlink (cuda_cases_ipc.h) */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

/* ---- without a usable GPU ---- */
TEST(unavailable_errors) {
    tn_scope_begin();
    CHECK(!tn_cuda_is_available());
    CHECK(tn_cuda_device_count() == 0);
    CHECK(tn_cuda_current_device() == -1);
    CHECK(strlen(tn_cuda_unavailable_reason()) > 10);
#ifndef TENSOR_CUDA
    CHECK(strstr(tn_cuda_unavailable_reason(), "without the GPU unit") != NULL);
#endif
    tn_tensor *x = tn_ones(TN_SHAPE(2, 3), TN_F32);
    CHECK_ERR(tn_to(x, TN_CUDA), "device 'cuda' is not available");
    CHECK_ERR(tn_to(x, TN_CUDA), tn_cuda_unavailable_reason());
    CHECK_ERR(tn_to_non_blocking(x, TN_CUDA), "not available");
    CHECK_ERR(tn_cuda_synchronize() == 0, "tn_cuda_synchronize: CUDA is not available");
    CHECK_ERR(tn_cuda_set_device(0) == 0, "tn_cuda_set_device: CUDA is not available");
    CHECK_ERR(tn_pin_memory(x), "tn_pin_memory: CUDA is not available");
    CHECK(!tn_is_pinned(x));
    tn_cuda_stats s = tn_cuda_memory_stats();
    CHECK(s.allocated == 0 && s.reserved == 0 && s.num_allocs == 0);
    tn_cuda_empty_cache(); /* harmless */
    tn_cuda_reset_peak_memory_stats();
    CHECK(!tn_get_tf32());   /* PyTorch's defaults: matmul TF32 off, cuDNN's on, two switches */
    CHECK(tn_get_cudnn_tf32());
    tn_set_tf32(true);
    CHECK(tn_get_tf32() && tn_get_cudnn_tf32());
    tn_set_cudnn_tf32(false);
    CHECK(tn_get_tf32() && !tn_get_cudnn_tf32());
    tn_set_tf32(false);
    tn_set_cudnn_tf32(true);
    CHECK(s.num_cudnn_conv == 0 && s.num_conv_fallbacks == 0 && s.num_cudnn_algo_retries == 0);
    CHECK(tn_to(x, TN_CPU) == x); /* same device: the tensor itself */
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* The Philox draw the GPU kernels use is the CPU's: tn_philox_draw reproduces tn_rand,
   tn_randn and tn_randint element by element. */
TEST(shared_philox_draw) {
    tn_scope_begin();
    tn_generator *g = tn_generator_new_philox(1234);
    uint64_t off = g->offset;
    tn_tensor *u = tn_rand_gen(TN_SHAPE(257), TN_F32, g);
    for (int64_t i = 0; i < 257; i++) {
        int64_t iv;
        double v = tn_philox_draw(0, true, 1234, off + (uint64_t)i, 0, 1, 0, 0, &iv);
        if ((float)v != ((float *)tn_data_ptr(u))[i]) { fail_at(__LINE__, "uniform f32 element %lld", (long long)i); break; }
    }
    off = g->offset;
    tn_tensor *n = tn_randn_gen(TN_SHAPE(100), TN_F64, g);
    for (int64_t i = 0; i < 100; i++) {
        int64_t iv;
        double v = tn_philox_draw(1, false, 1234, off + (uint64_t)i, 0, 1, 0, 0, &iv);
        if (v != ((double *)tn_data_ptr(n))[i]) { fail_at(__LINE__, "normal f64 element %lld", (long long)i); break; }
    }
    off = g->offset;
    tn_tensor *r = tn_randint(-5, INT64_MAX, TN_SHAPE(50), TN_I64, g);
    for (int64_t i = 0; i < 50; i++) {
        int64_t iv;
        tn_philox_draw(2, false, 1234, off + (uint64_t)i, 0, 0, -5, (uint64_t)INT64_MAX + 5, &iv);
        if (iv != ((int64_t *)tn_data_ptr(r))[i]) { fail_at(__LINE__, "randint element %lld", (long long)i); break; }
    }
    tn_generator_free(g);
    tn_scope_end();
}

#include "cuda_cases.h"
#include "cuda_cases_more_a.h"
#include "cuda_cases_attention.h"
#include "cuda_cases_half.h"
#include "cuda_cases_linalg.h"
#include "cuda_cases_epilogue.h"
#include "cuda_cases_complex.h"
#include "cuda_cases_linalg_cx.h"
#include "cuda_cases_graphs.h"
#include "cuda_cases_ipc.h"
#include "cuda_cases_fused.h"
#include "nosync_cases.h"

/* ---- with the real GPU unit only ---- */
TEST(gpu_transfers) {
    tn_scope_begin();
    tn_tensor *x = tn_transpose(RANDN(5, 7), 0, 1);       /* strided source */
    tn_tensor *g = tn_to(x, TN_CUDA);
    SAME("strided upload", g, x, 0);
    tn_tensor *i = tn_to(tn_to_dtype(tn_to(x, TN_CUDA), TN_I64), TN_CPU);
    CHECK(i && i->dtype == TN_I64 && i->device == TN_CPU);
    tn_tensor *p = tn_pin_memory(x);
    CHECK(p && tn_is_pinned(p));
    tn_tensor *a = tn_to_non_blocking(p, TN_CUDA);
    CHECK(tn_cuda_synchronize() == 0);
    SAME("non_blocking upload", a, x, 0);
    tn_tensor *y = tn_ones(TN_SHAPE(2), TN_F32);
    CHECK_ERR(tn_add(g, y), "same device");
    CHECK(tn_cuda_device_count() >= 1 && tn_cuda_current_device() >= 0);
    CHECK_ERR(tn_cuda_set_device(1000) == 0, "does not exist");
    tn_scope_end();
}

TEST(gpu_allocator) {
    tn_scope_begin();
    tn_cuda_empty_cache();
    tn_cuda_stats s0 = tn_cuda_memory_stats();
    tn_tensor *a = tn_to(tn_zeros(TN_SHAPE(1000, 1000), TN_F32), TN_CUDA);
    tn_cuda_stats s1 = tn_cuda_memory_stats();
    CHECK(s1.allocated >= s0.allocated + 4000000);
    CHECK(s1.reserved >= s1.allocated);
    tn_release(tn_retain(a));
    tn_scope_end();
    tn_scope_begin();
    tn_cuda_stats s2 = tn_cuda_memory_stats();
    CHECK(s2.allocated == s0.allocated);          /* freed back to the cache */
    CHECK(s2.reserved == s1.reserved);            /* but not to the driver */
    int64_t mallocs = s2.num_cuda_mallocs;
    tn_tensor *b = tn_to(tn_zeros(TN_SHAPE(1000, 1000), TN_F32), TN_CUDA);
    CHECK(b && tn_cuda_memory_stats().num_cuda_mallocs == mallocs); /* reused */
    CHECK(tn_cuda_memory_stats().peak_allocated >= s1.allocated);
    tn_scope_end();
    tn_cuda_empty_cache();
    CHECK(tn_cuda_memory_stats().reserved == s0.reserved);
}

/* The cuDNN entry itself, each mode against the CPU's convolution and its gradients:
   strides, padding, dilation and groups that differ per axis, float32 and float64. */
TEST(gpu_cudnn_conv) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    if (!be->conv2d) { printf("gpu_cudnn_conv: the unit was built without cuDNN\n"); return; }
    for (int dt = 0; dt < 2; dt++)
        for (int groups = 1; groups <= 2; groups++) {
            tn_scope_begin();
            tn_dtype d = dt ? TN_F64 : TN_F32;
            double tol = dt ? 1e-10 : 1e-4;
            tn_tensor *x = tn_randn(TN_SHAPE(2, 4, 9, 8), d), *w = tn_randn(TN_SHAPE(6, 4 / groups, 3, 3), d);
            tn_requires_grad_(x, true);
            tn_requires_grad_(w, true);
            tn_tensor *y = tn_conv2d(x, w, NULL, .stride_hw = {2, 1}, .padding_hw = {1, 0}, .dilation_hw = {1, 2}, .groups = groups);
            tn_tensor *gy = tn_randn(y->shape, y->ndim, d);
            CHECK(tn_backward(tn_sum(tn_mul(y, gy))) == 0);
            const int64_t geom[7] = {2, 1, 1, 0, 1, 2, groups};
            tn_tensor *xg = tn_to(tn_detach(x), TN_CUDA), *wg = tn_to(tn_detach(w), TN_CUDA), *gyg = tn_to(gy, TN_CUDA);
            tn_tensor *yg = tn_to(tn_zeros_like(y), TN_CUDA), *gx = tn_to(tn_zeros_like(x), TN_CUDA), *gw = tn_to(tn_zeros_like(w), TN_CUDA);
            CHECK_MSG(be->conv2d(0, xg, wg, yg, geom) == 0, "forward: %s", tn_last_error());
            SAME("cudnn forward", yg, tn_detach(y), tol);
            CHECK_MSG(be->conv2d(1, gx, wg, gyg, geom) == 0, "backward data: %s", tn_last_error());
            SAME("cudnn backward data", gx, tn_grad(x), tol);
            CHECK_MSG(be->conv2d(2, xg, gw, gyg, geom) == 0, "backward filter: %s", tn_last_error());
            SAME("cudnn backward filter", gw, tn_grad(w), tol);
            tn_scope_end();
        }
}

/* The convolution's algorithm choice: every call counted as cuDNN or fallback, a float32
   convolution with cuDNN's TF32 on within TF32's rounding and off within float32's, and
   the second call of a shape served from the cache (no new heuristic failures). */
TEST(gpu_cudnn_paths) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    if (!be->conv2d) { printf("gpu_cudnn_paths: the unit was built without cuDNN\n"); return; }
    tn_scope_begin();
    tn_tensor *x = RANDN(4, 16, 20, 20), *w = RANDN(32, 16, 3, 3);
    tn_tensor *ref = tn_conv2d(x, w, NULL, .padding = 1), *xg = tn_to(x, TN_CUDA), *wg = tn_to(w, TN_CUDA);
    for (int tf32 = 0; tf32 < 2; tf32++) {
        tn_set_cudnn_tf32(tf32);
        tn_cuda_stats s0 = tn_cuda_memory_stats();
        SAME(tf32 ? "conv2d, cuDNN TF32 on" : "conv2d, cuDNN TF32 off", tn_conv2d(xg, wg, NULL, .padding = 1), ref, tf32 ? 2e-2 : 1e-4);
        tn_cuda_stats s1 = tn_cuda_memory_stats();
        CHECK_MSG(s1.num_cudnn_conv + s1.num_conv_fallbacks == s0.num_cudnn_conv + s0.num_conv_fallbacks + 1, "one call, one path");
        CHECK_MSG(s1.num_cudnn_conv == s0.num_cudnn_conv + 1, "cuDNN declined a plain 3x3 convolution (%lld fallbacks, %lld failed algorithms)",
                  (long long)s1.num_conv_fallbacks, (long long)s1.num_cudnn_algo_retries);
        CHECK(tn_conv2d(xg, wg, NULL, .padding = 1) != NULL);
        tn_cuda_stats s2 = tn_cuda_memory_stats();
        CHECK(s2.num_cudnn_algo_retries == s1.num_cudnn_algo_retries && s2.num_cudnn_conv == s1.num_cudnn_conv + 1);
    }
    tn_set_cudnn_tf32(false);
    tn_scope_end();
}

int main(void) {
    RUN(shared_philox_draw);
    if (!tn_cuda_is_available()) {
        RUN(unavailable_errors);
        printf("test_cuda: GPU tests skipped: %s\n", tn_cuda_unavailable_reason());
        return tn_test_report();
    }
    tn_set_tf32(false);         /* float32 tolerances: TF32 off in cuBLAS and cuDNN alike */
    tn_set_cudnn_tf32(false);
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
    RUN(gpu_transfers);
    RUN(gpu_allocator);
    RUN(gpu_cudnn_conv);
    RUN(gpu_cudnn_paths);
    RUN(gpu_multi_tensor_optim);
    RUN(gpu_cnn_training_step);
    RUN(gpu_graph_replay);
    RUN(gpu_graph_capture_fallback);
    RUN(gpu_eager_graph_training);
    RUN(gpu_eager_graph_adam_refused);
    RUN(gpu_eager_graph_cnn);
    RUN(gpu_eager_graph_pool_sharing);
    RUN(gpu_eager_graph_errors);
    RUN(gpu_eager_graph_uncapturable);
    RUN(gpu_eager_graph_random);
    RUN(gpu_eager_graph_lm);
    RUN(gpu_eager_graph_check_slots);
    RUN(gpu_eager_graph_pool_argmax);
    RUN(gpu_cuda_ipc);    /* a child process maps this one's tensor by its CUDA IPC handle */
    RUN(gpu_fused_elementwise_replay);
    RUN(gpu_fused_elementwise_entry);
    NOSYNC_RUN_ALL("");   /* steady-state steps without transfers or waits; device-side checks */
    CHECK(tn_cuda_synchronize() == 0);
    tn_cuda_stats st = tn_cuda_memory_stats();
    printf("test_cuda: cuDNN paths: conv %lld (fallbacks %lld, failed algorithms %lld), pooling %lld (declined %lld), batch norm %lld (declined %lld); "
           "fused attention %lld (declined %lld)\n",
           (long long)st.num_cudnn_conv, (long long)st.num_conv_fallbacks, (long long)st.num_cudnn_algo_retries, (long long)st.num_cudnn_pool,
           (long long)st.num_pool_fallbacks, (long long)st.num_cudnn_batch_norm, (long long)st.num_batch_norm_fallbacks, (long long)st.num_fused_attention,
           (long long)st.num_attention_fallbacks);
    return tn_test_report();
}
