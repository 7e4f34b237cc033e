/* cuda_cases_epilogue.h — the fused GEMM epilogue behind tn_backend.matmul_ep (cuBLASLt on
 * the GPU, issue 23 item 4): Linear's bias added by the product itself (float32, float16,
 * bfloat16; 2-d and 3-d inputs; row- and column-major operands), ReLU and tanh-GELU (the graph
 * replay's linear + activation), the bias gradient summed by the weight gradient's product
 * (Linear's backward), against the CPU; the cases it declines (float64, a misaligned or
 * strided bias, erf-GELU, TN_CUDA_GEMM_EPILOGUE=0) take the passes and give the same values;
 * tn_cuda_stats counts both. Included by test_cuda.c (the GPU unit) and test_devices.c (the
 * stand-in, which runs the passes the epilogue fuses). Include after cuda_cases.h. */
#ifndef CUDA_CASES_EPILOGUE_H
#define CUDA_CASES_EPILOGUE_H
#if defined(_WIN32)
static void ep_setenv(const char *v) { _putenv_s("TN_CUDA_GEMM_EPILOGUE", v ? v : ""); }
#else
static void ep_setenv(const char *v) {
    if (v) setenv("TN_CUDA_GEMM_EPILOGUE", v, 1);
    else unsetenv("TN_CUDA_GEMM_EPILOGUE");
}
#endif

/* linear(x, w, b) on the GPU against the CPU, and whether the epilogue ran (ran: +1 call)
   or declined (+1 fallback); the gradients of x, w and b through the ordinary backward.
   The bias is bs[start : start + step * n : step] of bs on each side (a view made on the
   device: an offset or strided bias reaches the entry as such), n = w's rows; bs NULL: none. */
static void ep_linear_case(int line, const char *what, tn_tensor *x, tn_tensor *w, tn_tensor *bs, int64_t start, int64_t step, double tol, bool ran,
                           int bwd_runs) {
    tn_scope_begin();
    const int64_t n = w->shape[0];
    tn_tensor *cx = tn_detach(x), *cw = tn_detach(w), *cbs = bs ? tn_detach(bs) : NULL;
    tn_tensor *gx = tn_detach(tn_to(x, TN_CUDA)), *gw = tn_detach(tn_to(w, TN_CUDA)), *gbs = bs ? tn_detach(tn_to(bs, TN_CUDA)) : NULL;
    tn_tensor *cin[3] = {cx, cw, cbs}, *gin[3] = {gx, gw, gbs};
    for (int i = 0; i < 3; i++)
        if (cin[i]) { tn_requires_grad_(cin[i], true); tn_requires_grad_(gin[i], true); }
    tn_tensor *cb = bs ? tn_slice(cbs, 0, start, start + step * n, step) : NULL, *gb = bs ? tn_slice(gbs, 0, start, start + step * n, step) : NULL;
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    tn_tensor *go = tn_linear(gx, gw, gb);
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    tn_tensor *co = tn_linear(cx, cw, cb);
    if (max_diff_at(line, what, go, co, tol) == 0) {
        const int64_t runs = s1.num_gemm_epilogue - s0.num_gemm_epilogue, declined = s1.num_gemm_epilogue_fallbacks - s0.num_gemm_epilogue_fallbacks;
        if (ran && (runs != 1 || declined != 0)) fail_at(line, "%s: the epilogue ran %lld times and declined %lld (expected 1 run)", what, (long long)runs, (long long)declined);
        else if (!ran && runs != 0) fail_at(line, "%s: the epilogue ran %lld times (expected it to decline)", what, (long long)runs);
        else tn_test_passed++;
        tn_tensor *wt = tn_to_dtype(tn_rand_like(tn_to_dtype(co, TN_F32)), co->dtype);
        tn_tensor *gl = tn_sum(tn_mul(go, tn_to(wt, TN_CUDA)));
        const tn_cuda_stats s2 = tn_cuda_memory_stats();
        const int brc = tn_backward(gl);
        const int64_t bruns = tn_cuda_memory_stats().num_gemm_epilogue - s2.num_gemm_epilogue;   /* the weight + bias gradient product */
        if (brc || tn_backward(tn_sum(tn_mul(co, wt))))
            fail_at(line, "%s backward: %s", what, tn_last_error());
        else if (bruns != bwd_runs)
            fail_at(line, "%s backward: the epilogue ran %lld times (expected %d)", what, (long long)bruns, bwd_runs);
        else
            for (int i = 0; i < 3; i++)
                if (cin[i]) {
                    char name[96];
                    snprintf(name, sizeof name, "%s grad %d", what, i);
                    max_diff_at(line, name, tn_grad(gin[i]), tn_grad(cin[i]), tol * 10);
                }
    }
    tn_scope_end();
}
/* the entry itself with an activation: act(a @ b + bias) against the CPU's passes */
static void ep_act_case(int line, const char *what, int act, tn_dtype d, double tol, bool ran) {
    tn_scope_begin();
    tn_tensor *a = tn_randn(TN_SHAPE(9, 20), d), *b = tn_randn(TN_SHAPE(20, 13), d), *bias = tn_randn(TN_SHAPE(13), d);
    tn_tensor *c = tn_to(tn_zeros(TN_SHAPE(9, 13), d), TN_CUDA);
    const bool bgrad = act == TN__EPI_BGRAD_A || act == TN__EPI_BGRAD_B;
    if (act == TN__EPI_BGRAD_A) bias = tn_randn(TN_SHAPE(9), d);   /* an output: a's row sums */
    tn_tensor *gbias = tn_to(bias, TN_CUDA);
    const int rc = tn_get_backend(TN_CUDA)->matmul_ep(c, tn_to(a, TN_CUDA), tn_to(b, TN_CUDA), gbias, 1.0, act);
    if (!ran) {
        if (rc != 1) fail_at(line, "%s: the entry returned %d (expected 1: declined)", what, rc);
        else tn_test_passed++;
    } else if (rc != 0) fail_at(line, "%s: the entry returned %d: %s", what, rc, tn_last_error());
    else {
        tn_tensor *p = tn_matmul(tn_to_dtype(a, TN_F32), tn_to_dtype(b, TN_F32)), *y = bgrad ? p : tn_add(p, tn_to_dtype(bias, TN_F32));
        if (act == TN__EPI_RELU) y = tn_relu(y);
        if (act == TN__EPI_GELU_TANH) y = tn_gelu(y, .approximate = TN_APPROXIMATE_TANH);
        SAME(what, c, tn_to_dtype(y, d), tol);
        if (bgrad) SAME(what, gbias, tn_to_dtype(act == TN__EPI_BGRAD_A ? tn_sum_dims(tn_to_dtype(a, TN_F32), TN_SHAPE(1)) : tn_sum_dims(tn_to_dtype(b, TN_F32), TN_SHAPE(0)), d), tol);
    }
    tn_scope_end();
}

TEST(gpu_gemm_epilogue) {
    if (!tn_get_backend(TN_CUDA)->matmul_ep) { printf("gpu_gemm_epilogue: the unit has no matmul_ep entry\n"); return; }
    tn_scope_begin();
    ep_setenv(NULL);
    tn_manual_seed(7);
    /* float32: 2-d, 3-d (leading dims folded into rows), row- and column-major operands */
    ep_linear_case(__LINE__, "linear f32", tn_randn(TN_SHAPE(5, 7), TN_F32), tn_randn(TN_SHAPE(4, 7), TN_F32), tn_randn(TN_SHAPE(4), TN_F32), 0, 1, 1e-5, true, 1);
    ep_linear_case(__LINE__, "linear f32 3-d", tn_randn(TN_SHAPE(2, 3, 33), TN_F32), tn_randn(TN_SHAPE(65, 33), TN_F32), tn_randn(TN_SHAPE(65), TN_F32), 0, 1, 1e-5, true, 1);
    ep_linear_case(__LINE__, "linear f32 x^T", tn_t(tn_randn(TN_SHAPE(7, 6), TN_F32)), tn_randn(TN_SHAPE(3, 7), TN_F32), tn_randn(TN_SHAPE(3), TN_F32), 0, 1, 1e-5, true, 1);
    ep_linear_case(__LINE__, "linear f32 w^T", tn_randn(TN_SHAPE(6, 8), TN_F32), tn_t(tn_randn(TN_SHAPE(8, 5), TN_F32)), tn_randn(TN_SHAPE(5), TN_F32), 0, 1, 1e-5, true, 1);
    ep_linear_case(__LINE__, "linear f32 one row", tn_randn(TN_SHAPE(1, 9), TN_F32), tn_randn(TN_SHAPE(1, 9), TN_F32), tn_randn(TN_SHAPE(1), TN_F32), 0, 1, 1e-5, true, 1);
    /* half: float32 accumulation, the bias added before the one rounding */
    ep_linear_case(__LINE__, "linear bf16", tn_randn(TN_SHAPE(6, 16), TN_BF16), tn_randn(TN_SHAPE(8, 16), TN_BF16), tn_randn(TN_SHAPE(8), TN_BF16), 0, 1, 2e-2, true, 1);
    ep_linear_case(__LINE__, "linear f16", tn_randn(TN_SHAPE(6, 16), TN_F16), tn_randn(TN_SHAPE(8, 16), TN_F16), tn_randn(TN_SHAPE(8), TN_F16), 0, 1, 4e-3, true, 1);
    /* declined: float64, a bias 4 bytes off 16-byte alignment, a strided bias, the switch */
    ep_linear_case(__LINE__, "linear f64 (declined)", tn_randn(TN_SHAPE(5, 7), TN_F64), tn_randn(TN_SHAPE(4, 7), TN_F64), tn_randn(TN_SHAPE(4), TN_F64), 0, 1, 1e-12, false, 0);
    tn_tensor *wide = tn_randn(TN_SHAPE(9), TN_F32);
    ep_linear_case(__LINE__, "linear misaligned bias (declined)", tn_randn(TN_SHAPE(5, 7), TN_F32), tn_randn(TN_SHAPE(4, 7), TN_F32), wide, 1, 1, 1e-5, false, 1);
    ep_linear_case(__LINE__, "linear strided bias (declined)", tn_randn(TN_SHAPE(5, 7), TN_F32), tn_randn(TN_SHAPE(4, 7), TN_F32), wide, 0, 2, 1e-5, false, 1);
    ep_setenv("0");
    ep_linear_case(__LINE__, "linear TN_CUDA_GEMM_EPILOGUE=0 (declined)", tn_randn(TN_SHAPE(5, 7), TN_F32), tn_randn(TN_SHAPE(4, 7), TN_F32), tn_randn(TN_SHAPE(4), TN_F32), 0, 1, 1e-5, false, 0);
    ep_setenv(NULL);
    /* no bias: the plain product, not the epilogue */
    ep_linear_case(__LINE__, "linear no bias", tn_randn(TN_SHAPE(5, 7), TN_F32), tn_randn(TN_SHAPE(4, 7), TN_F32), NULL, 0, 1, 1e-5, false, 0);
    /* addmm with a full [M, N] input is a C matrix, not a bias vector: declined, right values */
    {
        tn_tensor *in = tn_randn(TN_SHAPE(3, 4), TN_F32), *a = tn_randn(TN_SHAPE(3, 5), TN_F32), *b = tn_randn(TN_SHAPE(5, 4), TN_F32);
        SAME("addmm full input", tn_addmm(tn_to(in, TN_CUDA), tn_to(a, TN_CUDA), tn_to(b, TN_CUDA)), tn_addmm(in, a, b), 1e-5);
        SAME("addmm beta 0.5", tn_addmm(tn_to(in, TN_CUDA), tn_to(a, TN_CUDA), tn_to(b, TN_CUDA), .beta = 0.5, .alpha = 2),
             tn_addmm(in, a, b, .beta = 0.5, .alpha = 2), 1e-5);
        tn_tensor *row = tn_randn(TN_SHAPE(4), TN_F32);
        SAME("addmm row bias, alpha 2", tn_addmm(tn_to(row, TN_CUDA), tn_to(a, TN_CUDA), tn_to(b, TN_CUDA), .alpha = 2), tn_addmm(row, a, b, .alpha = 2), 1e-5);
    }
    /* activations: ReLU and tanh-GELU in the epilogue; erf-GELU and SiLU declined (cuBLASLt
       has only the tanh form), the caller runs them as passes */
    ep_act_case(__LINE__, "entry relu f32", TN__EPI_RELU, TN_F32, 1e-5, true);
    ep_act_case(__LINE__, "entry gelu_tanh f32", TN__EPI_GELU_TANH, TN_F32, 1e-5, true);
    ep_act_case(__LINE__, "entry relu bf16", TN__EPI_RELU, TN_BF16, 2e-2, true);
    ep_act_case(__LINE__, "entry gelu erf (declined)", TN__EPI_GELU, TN_F32, 0, false);
    ep_act_case(__LINE__, "entry silu (declined)", TN__EPI_SILU, TN_F32, 0, false);
    ep_act_case(__LINE__, "entry relu f64 (declined)", TN__EPI_RELU, TN_F64, 0, false);
    /* the graph replay of a module traced on the device: linear + ReLU and linear +
       tanh-GELU as one product each, erf-GELU's linear with its bias only (the GELU a pass) */
    for (int k = 0; k < 3; k++) {
        tn_scope_begin();
        tn_manual_seed(11);
        tn_module *act = k == 0 ? tn_nn_relu() : tn_nn_activation("GELU", .approximate = k == 1 ? TN_APPROXIMATE_TANH : TN_APPROXIMATE_NONE);
        tn_module *m = tn_nn_sequential(tn_nn_linear(12, 16), act, tn_nn_linear(16, 3));
        tn_module_eval(m);
        tn_tensor *x = tn_randn(TN_SHAPE(10, 12), TN_F32);
        tn_no_grad_begin();
        tn_tensor *ref = tn_module_forward(m, x);
        CHECK(tn_module_to(m, TN_CUDA) == 0);
        tn_tensor *gx = tn_to(x, TN_CUDA);
        tn_graph *g = tn_jit_trace_module(m, gx);
        CHECK(g && tn_graph_optimize(g) >= 0);
        const tn_cuda_stats s0 = tn_cuda_memory_stats();
        tn_tensor *y = g ? tn_graph_forward(g, gx) : NULL;
        const tn_cuda_stats s1 = tn_cuda_memory_stats();
        char name[64];
        snprintf(name, sizeof name, "replay linear + %s", k == 0 ? "relu" : k == 1 ? "gelu_tanh" : "gelu");
        SAME(name, y, ref, 1e-5);
        if (s1.num_gemm_epilogue - s0.num_gemm_epilogue != 2)
            fail_at(__LINE__, "%s: %lld epilogue runs (expected 2)", name, (long long)(s1.num_gemm_epilogue - s0.num_gemm_epilogue));
        else tn_test_passed++;
        tn_no_grad_end();
        tn_graph_free(g);
        tn_module_free(m);
        tn_scope_end();
    }
    /* the bias gradient summed by the weight gradient's product: a's rows, b's columns */
    ep_act_case(__LINE__, "entry bgrad a f32", TN__EPI_BGRAD_A, TN_F32, 1e-5, true);
    ep_act_case(__LINE__, "entry bgrad b f32", TN__EPI_BGRAD_B, TN_F32, 1e-5, true);
    ep_act_case(__LINE__, "entry bgrad b bf16", TN__EPI_BGRAD_B, TN_BF16, 2e-2, true);
    tn_scope_end();
}
#endif
