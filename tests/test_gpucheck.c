/* test_gpucheck.c — issue 23's review fixes that a CPU machine can prove.
 *
 * The GPU comparator (an infinity only where the same infinity is expected, NaN only where
 * NaN is), the stand-in declining exactly the cases tensor_cuda.cu declines, the stand-in's
 * unreadable-device-memory mode (a host read of a CUDA tensor's data faults; the GPU test
 * cases and bench_cuda's GPT-style step all pass with it), PyTorch's two TF32 switches, and
 * the test filters. */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#include "cuda_cases.h"
#include "cuda_cases_attention.h"
#include "cuda_cases_epilogue.h"

TEST(comparator_infinities_and_nan) {
    CHECK(same_value(INFINITY, INFINITY, 1e-5));
    CHECK(same_value(-INFINITY, -INFINITY, 0));
    CHECK(!same_value(-3.4e38, -INFINITY, 1e-5));   /* cuDNN's -FLT_MAX for an all -inf window: caught */
    CHECK(!same_value(0, INFINITY, 1e-5));
    CHECK(!same_value(INFINITY, -INFINITY, 1e-5));
    CHECK(!same_value(INFINITY, 1e30, 1e-5));
    CHECK(same_value(NAN, NAN, 0));
    CHECK(!same_value(NAN, 1, 1e-5));
    CHECK(!same_value(1, NAN, 1e-5));
    CHECK(!same_value(NAN, INFINITY, 1e-5));
    CHECK(same_value(1.0, 1.0 + 1e-7, 1e-6) && !same_value(1.0, 1.1, 1e-6));
    /* through SAME on tensors (same_value is its comparison): -inf matches -inf */
    tn_scope_begin();
    tn_tensor *expected = tn_from_data((float[]){-INFINITY, 1, NAN}, TN_SHAPE(3), TN_F32);
    CHECK(max_diff_at(__LINE__, "-inf matches -inf", tn_to(expected, TN_CUDA), expected, 1e-5) == 0);
    tn_scope_end();
}

/* Each library entry of the stand-in declines (returns 1) where cu_conv2d, cu_batch_norm,
   cu_pool2d, cu_layer_norm, cu_cross_entropy and cu_attention do, and runs where they run. */
TEST(stand_in_declines_as_the_unit) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    tn_scope_begin();
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(2, 3, 6, 6), TN_F32), TN_CUDA), *y = tn_to(tn_zeros(TN_SHAPE(2, 3, 3, 3), TN_F32), TN_CUDA);
    tn_tensor *gy = tn_to(tn_randn(TN_SHAPE(2, 3, 3, 3), TN_F32), TN_CUDA), *gx = tn_to(tn_zeros(TN_SHAPE(2, 3, 6, 6), TN_F32), TN_CUDA);
    const int64_t maxg[7] = {2, 2, 2, 2, 0, 0, 0}, maxpad[7] = {3, 3, 2, 2, 1, 1, 0}, avg[7] = {2, 2, 2, 2, 0, 0, 1};
    CHECK(be->pool2d(x, y, NULL, NULL, maxg) == 0);        /* max forward, unpadded: cuDNN's */
    CHECK(be->pool2d(x, y, gy, gx, maxg) == 1);            /* max backward: the argmax path */
    CHECK(be->pool2d(x, y, NULL, NULL, maxpad) == 1);      /* max padded: the composite */
    CHECK(be->pool2d(x, y, NULL, NULL, avg) == 0 && be->pool2d(x, y, gy, gx, avg) == 0);
    /* batch norm: the evaluation-mode backward (3) is the header's closed form */
    tn_tensor *bx = tn_to(tn_randn(TN_SHAPE(4, 3, 5), TN_F32), TN_CUDA), *by = tn_to(tn_zeros(TN_SHAPE(4, 3, 5), TN_F32), TN_CUDA);
    tn_tensor *st = tn_to(tn_cat(((tn_tensor *[]){tn_zeros(TN_SHAPE(3), TN_F64), tn_ones(TN_SHAPE(6), TN_F64)}), 2), TN_CUDA);
    tn_tensor *bgx = tn_to(tn_zeros(TN_SHAPE(4, 3, 5), TN_F32), TN_CUDA);
    CHECK(be->batch_norm(0, bx, NULL, NULL, st, by, NULL, NULL, NULL, 1e-5) == 0);
    CHECK(be->batch_norm(1, bx, NULL, NULL, st, by, NULL, NULL, NULL, 1e-5) == 0);
    CHECK(be->batch_norm(2, bx, NULL, NULL, st, by, bgx, NULL, NULL, 1e-5) == 0);
    CHECK(be->batch_norm(3, bx, NULL, NULL, st, by, bgx, NULL, NULL, 1e-5) == 1);
    tn_tensor *st32 = tn_to(tn_zeros(TN_SHAPE(9), TN_F32), TN_CUDA);
    CHECK(be->batch_norm(0, bx, NULL, NULL, st32, by, NULL, NULL, NULL, 1e-5) == 1);   /* statistics not in float64 */
    /* layer norm: an affine forward with a weight and no bias */
    tn_tensor *lx = tn_to(tn_randn(TN_SHAPE(4, 5), TN_F32), TN_CUDA), *ly = tn_to(tn_zeros(TN_SHAPE(4, 5), TN_F32), TN_CUDA);
    tn_tensor *lw = tn_to(tn_ones(TN_SHAPE(5), TN_F32), TN_CUDA), *lst = tn_to(tn_zeros(TN_SHAPE(8), TN_F64), TN_CUDA);
    CHECK(be->layer_norm(0, lx, lw, NULL, lst, ly, NULL, NULL, NULL, 1e-5) == 1);
    CHECK(be->layer_norm(0, lx, lw, lw, lst, ly, NULL, NULL, NULL, 1e-5) == 0);
    /* cross-entropy: integer logits */
    tn_tensor *cx = tn_to(tn_zeros(TN_SHAPE(3, 4), TN_I64), TN_CUDA), *ct = tn_to(tn_zeros(TN_SHAPE(3), TN_I64), TN_CUDA);
    tn_tensor *clse = tn_to(tn_zeros(TN_SHAPE(3), TN_F64), TN_CUDA);
    CHECK(be->cross_entropy(0, cx, ct, ct, clse, ct, NULL) == 1);
    attention_declines(be);   /* cuda_cases_attention.h: the same checks run on the GPU in test_cuda */
    /* convolution runs; TN_CUDNN=0 turns every library entry off, as the unit's */
    tn_tensor *w = tn_to(tn_randn(TN_SHAPE(4, 3, 3, 3), TN_F32), TN_CUDA), *cy = tn_to(tn_zeros(TN_SHAPE(2, 4, 4, 4), TN_F32), TN_CUDA);
    const int64_t cg[7] = {1, 1, 0, 0, 1, 1, 1};
    CHECK(be->conv2d(0, x, w, cy, cg) == 0);
    setenv("TN_CUDNN", "0", 1);
    CHECK(be->conv2d(0, x, w, cy, cg) == 1);
    CHECK(be->pool2d(x, y, NULL, NULL, avg) == 1);
    CHECK(be->batch_norm(0, bx, NULL, NULL, st, by, NULL, NULL, NULL, 1e-5) == 1);
    unsetenv("TN_CUDNN");
    /* the header follows the declines: max pooling's gradient on the stand-in still equals the CPU's */
    tn_tensor *xc = tn_randn(TN_SHAPE(2, 3, 6, 6), TN_F32), *xd = tn_to(xc, TN_CUDA);
    tn_requires_grad_(xc, true);
    tn_requires_grad_(xd, true);
    CHECK(tn_backward(tn_sum(tn_max_pool2d(xc, 2))) == 0 && tn_backward(tn_sum(tn_max_pool2d(xd, 2))) == 0);
    SAME("max_pool2d gradient through the argmax", tn_grad(xd), tn_grad(xc), 0);
    tn_scope_end();
}

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
/* In a child: read (or write) the data of a CUDA tensor from the host. Returns whether the
   child got as far as the access and then died (or, control, exited normally). */
static int host_access_child(int mode) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        tn_debug_cuda_stand_in_unreadable();
        tn_tensor *g = tn_to(tn_ones(TN_SHAPE(1000), TN_F32), TN_CUDA);
        tn_tensor *h = mode == 2 ? tn_to(g, TN_CPU) : g;   /* 2: a CPU copy, readable */
        if (!h || write(fd[1], "r", 1) != 1) _exit(3);
        int null = open("/dev/null", O_WRONLY);   /* the expected fault's report (ASan's) is noise */
        if (null >= 0) dup2(null, 2);
        volatile float *p = (volatile float *)tn_data_ptr(h);
        if (mode == 1) p[10] = 2;
        float v = p[10];
        _exit(v == 1 ? 0 : 4);
    }
    close(fd[1]);
    char c = 0;
    ssize_t got = read(fd[0], &c, 1);
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != 1) return -1;                               /* died before the access */
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;  /* 1: faulted at the access (a signal, or ASan's report) */
}
#endif

TEST(unreadable_device_memory) {
#if defined(__unix__) || defined(__APPLE__)
    CHECK(host_access_child(0) == 1);   /* a host read of device memory faults */
    CHECK(host_access_child(1) == 1);   /* and a write */
    CHECK(host_access_child(2) == 0);   /* the CPU copy reads fine */
#endif
    /* a training step, the library entries and every GPU test case in the mode */
    tn_debug_cuda_stand_in_unreadable();
    CHECK(strstr(tn_get_backend(TN_CUDA)->name, "stand-in") != NULL);
    gpu_ops_match_cpu();
    gpu_norm_pool_state();
    gpu_library_entries();
    gpu_random_matches_cpu();
    gpu_multi_tensor_optim();
    gpu_cnn_training_step();
    gpu_attention_declines();
    gpu_fused_attention();
    gpu_fused_attention_half();
    gpu_fused_mha();
    gpu_mha_declined();
    gpu_gemm_epilogue();
    tn_debug_cuda_stand_in();
}

/* bench_cuda's GPT-style step (smaller): token + position embeddings, pre-norm GELU encoder
   layers under the causal mask, final LayerNorm, LM head, AdamW; three steps on the CPU and
   on the stand-in with unreadable memory give the same losses */
enum { G_V = 64, G_D = 32, G_H = 4, G_FF = 64, G_L = 2, G_T = 16, G_B = 3 };
static double gpt_losses(tn_device dev, double *losses) {
    tn_manual_seed(0);
    tn_module *m = tn_nn_sequential(tn_nn_embedding(G_V, G_D), tn_nn_embedding(G_T, G_D),
                                    tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(G_D, G_H, .dim_feedforward = G_FF, .dropout = 0,
                                                                                              .activation = TN_ACTIVATION_GELU, .batch_first = true,
                                                                                              .norm_first = true), G_L, .norm = tn_nn_layer_norm(TN_SHAPE(G_D))),
                                    tn_nn_linear(G_D, G_V, .bias = false));
    if (!m || tn_module_to(m, dev)) return -1;
    tn_dict *ps = tn_module_named_parameters(m);
    tn_optim *opt = tn_optim_adamw(tn_dict_values(ps), tn_dict_len(ps), .lr = 3e-4);
    tn_dict_free(ps);
    tn_scope_begin();
    tn_tensor *x = tn_to(tn_randint(0, G_V, TN_SHAPE(G_B, G_T), TN_I64, NULL), dev), *y = tn_to(tn_randint(0, G_V, TN_SHAPE(G_B * G_T), TN_I64, NULL), dev);
    tn_tensor *pos = tn_to(tn_arange(0, G_T, 1, TN_I64), dev), *mask = tn_to(tn_nn_generate_square_subsequent_mask(G_T, TN_F32), dev);
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++) {
        tn_scope_begin();
        tn_optim_zero_grad(opt);
        tn_tensor *h = tn_add(tn_module_forward(tn_module_child_at(m, 0, NULL), x), tn_module_forward(tn_module_child_at(m, 1, NULL), pos));
        h = h ? tn_nn_transformer_encoder_forward(tn_module_child_at(m, 2, NULL), h, .mask = mask, .is_causal = true) : NULL;
        tn_tensor *logits = h ? tn_module_forward(tn_module_child_at(m, 3, NULL), h) : NULL;
        tn_tensor *loss = logits ? tn_cross_entropy(tn_reshape(logits, TN_SHAPE(-1, G_V)), y) : NULL;
        rc = loss && loss->device == dev && tn_backward(loss) == 0 && tn_optim_step(opt) == 0 ? 0 : -1;
        if (rc == 0) losses[i] = tn_item(loss);
        tn_scope_end();
    }
    tn_scope_end();
    tn_optim_free(opt);
    tn_module_free(m);
    return rc;
}
TEST(gpt_step_on_stand_in) {
    double cpu[3] = {0}, dev[3] = {0};
    CHECK_MSG(gpt_losses(TN_CPU, cpu) == 0, "cpu: %s", tn_last_error());
    tn_debug_cuda_stand_in_unreadable();
    const tn_cuda_stats a = tn_cuda_memory_stats();
    CHECK_MSG(gpt_losses(TN_CUDA, dev) == 0, "stand-in: %s", tn_last_error());
    const tn_cuda_stats b = tn_cuda_memory_stats();
    /* every layer's attention through the fused entry, forward and backward, three steps */
    CHECK(b.num_fused_attention - a.num_fused_attention == 2 * G_L * 3 && b.num_attention_fallbacks == a.num_attention_fallbacks);
    tn_debug_cuda_stand_in();
    for (int i = 0; i < 3; i++) CHECK_CLOSE(dev[i], cpu[i], 1e-5);
    CHECK(cpu[2] < cpu[0]);   /* it trains */
}

TEST(tf32_switches) {
    CHECK(!tn_get_tf32());          /* torch.backends.cuda.matmul.allow_tf32: False */
    CHECK(tn_get_cudnn_tf32());     /* torch.backends.cudnn.allow_tf32: True */
    tn_set_cudnn_tf32(false);
    CHECK(!tn_get_cudnn_tf32() && !tn_get_tf32());
    tn_set_tf32(true);
    CHECK(tn_get_tf32() && !tn_get_cudnn_tf32());
    tn_set_tf32(false);
    tn_set_cudnn_tf32(true);
    CHECK(tn_get_cudnn_tf32() && !tn_get_tf32());
    tn_cuda_stats s = tn_cuda_memory_stats();   /* no unit: every path counter zero */
    CHECK(s.num_cudnn_conv == 0 && s.num_conv_fallbacks == 0 && s.num_cudnn_pool == 0 && s.num_batch_norm_fallbacks == 0);
}

/* TN_TEST_FILTER and TN_CASE_FILTER: comma-separated substrings */
TEST(test_filters) {
    const char *saved = getenv("TN_TEST_FILTER");
    setenv("TN_TEST_FILTER", "cnn_step,pool", 1);
    CHECK(tn_test_selected("TN_TEST_FILTER", "gpu_cnn_step"));
    CHECK(tn_test_selected("TN_TEST_FILTER", "max_pool2d"));
    CHECK(!tn_test_selected("TN_TEST_FILTER", "conv2d"));
    setenv("TN_TEST_FILTER", "", 1);
    CHECK(tn_test_selected("TN_TEST_FILTER", "anything"));
    if (saved) setenv("TN_TEST_FILTER", saved, 1); else unsetenv("TN_TEST_FILTER");
    tn_scope_begin();
    setenv("TN_CASE_FILTER", "no such case", 1);
    int before = tn_test_passed;
    CHECK_OP("exp", f_exp, 1e-5, true, RANDN(3));   /* filtered out: no checks run */
    CHECK(tn_test_passed == before);
    setenv("TN_CASE_FILTER", "exp", 1);
    CHECK_OP("exp", f_exp, 1e-5, true, RANDN(3));
    CHECK(tn_test_passed > before + 1);
    unsetenv("TN_CASE_FILTER");
    tn_scope_end();
}

int main(void) {
    tn_debug_cuda_stand_in();
    RUN(comparator_infinities_and_nan);
    RUN(stand_in_declines_as_the_unit);
    RUN(unreadable_device_memory);
    RUN(gpt_step_on_stand_in);
    RUN(tf32_switches);
    RUN(test_filters);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
