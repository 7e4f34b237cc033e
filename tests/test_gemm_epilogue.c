/* test_gemm_epilogue.c — issue 25/22: the GEMM's epilogue (bias + activation applied to each
 * tile of C while it is in cache, src/ops/gemm.c) and its users.
 *
 *  1. tn__gemm_ep_f32/f64 against the unfused path (C filled with beta * bias, the GEMM
 *     adding to it, then the activation's own scalar formula): bit for bit, for per-row and
 *     per-column biases (strides 0, 1, 2), every activation, every kernel ISA, tiny products
 *     (the direct loop), K past one cache block (several K slices), edge tiles, strided and
 *     column-major C and narrow C (the transposed product), 2 threads, K = 0.
 *  2. addmm / linear (the bias in the epilogue instead of a broadcast copy first): equal to
 *     mm + add bit for bit, per-row and 0-d biases, alpha/beta, empty shapes, bad shapes
 *     still raise; gradients; float64 gradcheck.
 *  3. conv2d's im2col GEMM with the bias in its epilogue: equal to the convolution without
 *     bias plus the bias, bit for bit (the special paths too); float64 gradcheck.
 *  5. Self-attention's packed projections (issue 25 item 3): MultiheadAttention's attention
 *     node takes qkv itself when recording for backward, its gradient one buffer: values and
 *     gradients (input, in_proj weight and bias, out_proj) equal the composite path's
 *     (need_weights), with masks, key padding, batch_first or not; float64 gradcheck and
 *     gradgradcheck (create_graph through the packed node).
 *  4. The graph replay: linear / conv2d followed by relu, gelu (erf and tanh) or silu run as
 *     one product with the activation in its epilogue under no_grad (tn_graph_fused_nodes
 *     counts them): the replay equals eager bit for bit, optimised or not, with grad enabled
 *     (unfused) too; an activation whose input is read twice or is an output is not fused.
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

static uint64_t rs = 88172645463325252ull;
static double urand(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (double)(rs >> 11) / 9007199254740992.0 * 2 - 1; }

static float act_f32(int act, float x) {
    switch (act) {
    case TN__EPI_RELU: return x < 0 ? 0.0f : x;
    case TN__EPI_GELU: return tn_gelu_f32(x);
    case TN__EPI_GELU_TANH: return tn_gelu_tanh_f32(x);
    case TN__EPI_SILU: return tn_silu_f32(x);
    default: return x;
    }
}
static double act_f64(int act, double x) {
    switch (act) {
    case TN__EPI_RELU: return x < 0 ? 0.0 : x;
    case TN__EPI_GELU: return tn_gelu_f64(x);
    case TN__EPI_GELU_TANH: return tn_gelu_tanh_f64(x);
    case TN__EPI_SILU: return tn_silu_f64(x);
    default: return x;
    }
}

/* One case: C [M, N] with strides (rsc, csc) inside a buffer, bias per row or column with
   stride bst; fused vs unfused, compared bit for bit, in both precisions. */
static int gemm_case(int64_t M, int64_t N, int64_t K, int per_row, int64_t bst, int act, int layout, double bbeta) {
    const int64_t nb = per_row ? M : N, blen = nb * (bst ? bst : 1) + 1;
    /* layout 0: row-major C, 1: column-major, 2: every 2nd column of a wider row-major C */
    const int64_t rsc = layout == 1 ? 1 : layout == 2 ? 2 * N + 1 : N, csc = layout == 1 ? M : layout == 2 ? 2 : 1;
    const int64_t clen = layout == 2 ? M * (2 * N + 1) + 1 : M * N + 1;
    float *A = malloc((size_t)(M * K + 1) * 4), *B = malloc((size_t)(K * N + 1) * 4), *bias = malloc((size_t)blen * 4);
    float *C1 = malloc((size_t)clen * 4), *C2 = malloc((size_t)clen * 4);
    double *Ad = malloc((size_t)(M * K + 1) * 8), *Bd = malloc((size_t)(K * N + 1) * 8), *biasd = malloc((size_t)blen * 8);
    double *D1 = malloc((size_t)clen * 8), *D2 = malloc((size_t)clen * 8);
    int bad = 0;
    for (int64_t i = 0; i < M * K; i++) Ad[i] = A[i] = (float)urand();
    for (int64_t i = 0; i < K * N; i++) Bd[i] = B[i] = (float)urand();
    for (int64_t i = 0; i < blen; i++) biasd[i] = bias[i] = (float)urand();
    for (int64_t i = 0; i < clen; i++) { C1[i] = C2[i] = 7.0f; D1[i] = D2[i] = 7.0; }
    /* unfused: C = beta * bias, then C += A @ B, then the activation */
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            const int64_t bi = (per_row ? i : j) * bst;
            C1[i * rsc + j * csc] = (float)bbeta * bias[bi];
            D1[i * rsc + j * csc] = bbeta * biasd[bi];
        }
    tn__gemm_f32(M, N, K, 1.0f, A, K, 1, B, N, 1, 1.0f, C1, rsc, csc);
    tn__gemm_f64(M, N, K, 1.0, Ad, K, 1, Bd, N, 1, 1.0, D1, rsc, csc);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            C1[i * rsc + j * csc] = act_f32(act, C1[i * rsc + j * csc]);
            D1[i * rsc + j * csc] = act_f64(act, D1[i * rsc + j * csc]);
        }
    tn__gemm_epi ep = {bias, bst, bbeta, per_row, act}, epd = {biasd, bst, bbeta, per_row, act};
    if (tn__gemm_ep_f32(M, N, K, 1.0f, A, K, 1, B, N, 1, 0.0f, C2, rsc, csc, &ep)) bad = 1;
    if (tn__gemm_ep_f64(M, N, K, 1.0, Ad, K, 1, Bd, N, 1, 0.0, D2, rsc, csc, &epd)) bad = 1;
    if (memcmp(C1, C2, (size_t)clen * 4) || memcmp(D1, D2, (size_t)clen * 8)) bad = 1;   /* the sentinels outside C too */
    free(A); free(B); free(bias); free(C1); free(C2); free(Ad); free(Bd); free(biasd); free(D1); free(D2);
    return bad;
}

TEST(gemm_epilogue_bits) {
    const int64_t shapes[][3] = {{3, 4, 5}, {1, 1, 1}, {12, 32, 64}, {13, 33, 7}, {50, 70, 600}, {37, 5, 130}, {100, 3, 40}, {4, 200, 300},
                                 {64, 128, 128}, {97, 61, 1100}, {7, 9, 0}};
    int fails = 0, cases = 0;
    const int isa0 = tn__gemm_tune.isa, th0 = tn__gemm_tune.threads;
    for (int isa = 0; isa <= tn__gemm_isa(); isa++) {
        tn__gemm_tune.isa = isa;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int per_row = 0; per_row < 2; per_row++)
                for (int act = 0; act <= TN__EPI_SILU; act++) {
                    const int layout = (int)((s + (size_t)act) % 3);
                    const int64_t bst = (s + (size_t)per_row) % 3 == 0 ? 0 : (int64_t)((s % 2) + 1);
                    const double bb = act == TN__EPI_GELU ? 0.5 : 1.0;
                    fails += gemm_case(shapes[s][0], shapes[s][1], shapes[s][2], per_row, bst, act, layout, bb);
                    cases++;
                }
    }
    tn__gemm_tune.isa = isa0;
    tn__gemm_tune.threads = 2;   /* the threaded split of the M blocks */
    for (int act = 0; act <= TN__EPI_SILU; act++) { fails += gemm_case(300, 100, 200, act & 1, 1, act, 0, 1.0); cases++; }
    tn__gemm_tune.threads = th0;
    tn__gemm_tune.kc = 16;   /* many K slices: the bias after the first, the activation after the last */
    for (int act = 0; act <= TN__EPI_SILU; act++) { fails += gemm_case(29, 45, 100, act & 1, 1, act, act % 3, 1.0); cases++; }
    tn__gemm_tune.kc = 0;
    CHECK_MSG(fails == 0, "%d of %d epilogue cases differ from the unfused path", fails, cases);
    /* without bias and activation the epilogue is the plain GEMM */
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4], Cr[4];
    tn__gemm_epi none = {NULL, 0, 1, 0, TN__EPI_NONE};
    CHECK(tn__gemm_ep_f32(2, 2, 3, 1.0f, A, 3, 1, B, 2, 1, 0.0f, C, 2, 1, &none) == 0);
    tn__gemm_f32(2, 2, 3, 1.0f, A, 3, 1, B, 2, 1, 0.0f, Cr, 2, 1);
    CHECK(!memcmp(C, Cr, sizeof C));
}

static tn_tensor *rg(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
static tn_tensor *rnd_t(const int64_t *shape, int nd, tn_dtype dt) { return tn_to_dtype(tn_randn(shape, nd, TN_F32), dt); }
static bool same_bits(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || a->dtype != b->dtype || !tn_equal(tn_ones_like(a), tn_ones_like(b))) return false;
    tn_tensor *ac = tn_contiguous(a), *bc = tn_contiguous(b);
    return !memcmp(tn_data_ptr(ac), tn_data_ptr(bc), (size_t)tn_numel(ac) * tn_dtype_size(ac->dtype));
}

static tn_tensor *addmm_fn(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_addmm(in[0], in[1], in[2], .beta = 0.5, .alpha = 1.5); }
static tn_tensor *linear_fn(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_linear(in[0], in[1], in[2]); }

TEST(addmm_bias_epilogue) {
    tn_manual_seed(1);
    tn_scope_begin();
    for (int d = 0; d < 2; d++) {
        const tn_dtype dt = d ? TN_F64 : TN_F32;
        tn_tensor *x = rnd_t(TN_SHAPE(37, 50), dt), *w = rnd_t(TN_SHAPE(29, 50), dt), *b = rnd_t(TN_SHAPE(29), dt);
        tn_tensor *xs = tn_slice(rnd_t(TN_SHAPE(74, 50), dt), 0, 0, 74, 2);   /* non-contiguous */
        CHECK(same_bits(tn_addmm(b, x, tn_t(w)), tn_add(tn_mm(x, tn_t(w)), b)));
        CHECK(same_bits(tn_linear(xs, w, b), tn_add(tn_mm(xs, tn_t(w)), b)));
        tn_tensor *x3 = rnd_t(TN_SHAPE(4, 9, 50), dt);   /* linear of 3-d input: one addmm */
        CHECK(same_bits(tn_linear(x3, w, b), tn_add(tn_matmul(x3, tn_t(w)), b)));
        tn_tensor *bcol = rnd_t(TN_SHAPE(37, 1), dt), *brow = rnd_t(TN_SHAPE(1, 29), dt);
        CHECK(same_bits(tn_addmm(bcol, x, tn_t(w)), tn_add(tn_mm(x, tn_t(w)), bcol)));
        CHECK(same_bits(tn_addmm(brow, x, tn_t(w)), tn_add(tn_mm(x, tn_t(w)), brow)));
        tn_tensor *bstr = tn_slice(rnd_t(TN_SHAPE(58), dt), 0, 0, 58, 2);   /* a strided bias */
        CHECK(same_bits(tn_addmm(bstr, x, tn_t(w)), tn_add(tn_mm(x, tn_t(w)), bstr)));
        tn_tensor *s0 = tn_scalar_tensor(0.25, dt);
        CHECK(same_bits(tn_addmm(s0, x, tn_t(w)), tn_add(tn_mm(x, tn_t(w)), s0)));
        /* alpha / beta: against float64 */
        tn_tensor *r = tn_addmm(b, x, tn_t(w), .beta = 0.5, .alpha = 1.5);
        tn_tensor *ref = tn_add(tn_mul_scalar(tn_mm(tn_to_dtype(x, TN_F64), tn_t(tn_to_dtype(w, TN_F64))), 1.5), tn_mul_scalar(tn_to_dtype(b, TN_F64), 0.5));
        CHECK(tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(r, TN_F64), ref)))) < (d ? 1e-12 : 1e-4));
        /* K = 0: beta * bias; M = 0 */
        tn_tensor *e = tn_addmm(b, tn_zeros(TN_SHAPE(5, 0), dt), tn_zeros(TN_SHAPE(0, 29), dt), .beta = 2.0);
        CHECK(e && tn_equal(e, tn_expand(tn_mul_scalar(b, 2.0), TN_SHAPE(5, 29))));
        tn_tensor *m0 = tn_addmm(b, tn_zeros(TN_SHAPE(0, 50), dt), tn_t(w));
        CHECK(m0 && tn_numel(m0) == 0 && tn_shape(m0)[1] == 29);
        /* a bias that does not broadcast still raises */
        CHECK_ERR(tn_addmm(rnd_t(TN_SHAPE(28), dt), x, tn_t(w)), "");
        CHECK_ERR(tn_addmm(rnd_t(TN_SHAPE(36, 1), dt), x, tn_t(w)), "");
        /* gradients through the fused forward: as through mm + add */
        tn_tensor *xg = rg(tn_clone(x)), *wg = rg(tn_clone(w)), *bg = rg(tn_clone(b));
        tn_tensor *up = rnd_t(TN_SHAPE(37, 29), dt);
        tn_backward(tn_sum(tn_mul(tn_linear(xg, wg, bg), up)));
        tn_tensor *x2 = rg(tn_clone(x)), *w2 = rg(tn_clone(w)), *b2 = rg(tn_clone(b));
        tn_backward(tn_sum(tn_mul(tn_add(tn_mm(x2, tn_t(w2)), b2), up)));
        CHECK(same_bits(tn_grad(xg), tn_grad(x2)) && same_bits(tn_grad(wg), tn_grad(w2)) && same_bits(tn_grad(bg), tn_grad(b2)));
    }
    tn_tensor *in[3] = {rg(rnd_t(TN_SHAPE(4), TN_F64)), rg(rnd_t(TN_SHAPE(3, 5), TN_F64)),
                        rg(rnd_t(TN_SHAPE(5, 4), TN_F64))};
    CHECK(tn_gradcheck(addmm_fn, in, 3, NULL));
    CHECK(tn_gradgradcheck(addmm_fn, in, 3, NULL));
    tn_tensor *lin[3] = {rg(rnd_t(TN_SHAPE(2, 3, 5), TN_F64)), rg(rnd_t(TN_SHAPE(4, 5), TN_F64)),
                         rg(rnd_t(TN_SHAPE(4), TN_F64))};
    CHECK(tn_gradcheck(linear_fn, lin, 3, NULL));
    tn_scope_end();
}

static tn_tensor *conv_fn(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_conv2d(in[0], in[1], in[2], .padding = 1); }

TEST(conv_bias_epilogue) {
    tn_manual_seed(2);
    tn_scope_begin();
    const int fast0 = tn__conv_fast_paths;
    for (int fast = 0; fast < 2; fast++) {
        tn__conv_fast_paths = fast;
        for (int d = 0; d < 2; d++) {
            const tn_dtype dt = d ? TN_F64 : TN_F32;
            /* a large image (blocks of rows: the GEMM writes y), small images (several per GEMM),
               1x1 (the image its own columns), groups, stride */
            const int64_t cs[][7] = {{2, 8, 40, 40, 16, 3, 1}, {6, 8, 6, 6, 12, 3, 1}, {2, 16, 10, 10, 24, 1, 1}, {2, 8, 12, 12, 8, 3, 2}, {3, 1, 9, 9, 5, 3, 1}};
            for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
                const int64_t N = cs[c][0], C = cs[c][1], H = cs[c][2], W = cs[c][3], O = cs[c][4], k = cs[c][5], G = cs[c][6];
                tn_tensor *x = rnd_t(TN_SHAPE(N, C, H, W), dt), *w = rnd_t(TN_SHAPE(O, C / G, k, k), dt), *b = rnd_t(TN_SHAPE(O), dt);
                tn_tensor *y = tn_conv2d(x, w, b, .padding = k / 2, .groups = G), *y0 = tn_conv2d(x, w, NULL, .padding = k / 2, .groups = G);
                /* the im2col GEMM: bit for bit; the special paths (Winograd, depthwise and
                   small-K loops) start their sums from the bias: to rounding */
                tn_tensor *yr = tn_add(y0, tn_reshape(b, TN_SHAPE(1, O, 1, 1)));
                CHECK_MSG(fast ? tn_item(tn_max(tn_abs(tn_sub(y, yr)))) < (d ? 1e-12 : 1e-4) : same_bits(y, yr), "conv case %d, %s, fast paths %d", (int)c, tn_dtype_name(dt), fast);
                tn_tensor *ys = tn_conv2d(x, w, b, .padding = k / 2, .stride = 2, .groups = G);
                tn_tensor *ys0 = tn_conv2d(x, w, NULL, .padding = k / 2, .stride = 2, .groups = G), *ysr = tn_add(ys0, tn_reshape(b, TN_SHAPE(1, O, 1, 1)));
                CHECK(fast ? tn_item(tn_max(tn_abs(tn_sub(ys, ysr)))) < (d ? 1e-12 : 1e-4) : same_bits(ys, ysr));
            }
        }
    }
    tn__conv_fast_paths = 0;
    tn_tensor *in[3] = {rg(rnd_t(TN_SHAPE(2, 2, 5, 5), TN_F64)), rg(rnd_t(TN_SHAPE(3, 2, 3, 3), TN_F64)),
                        rg(rnd_t(TN_SHAPE(3), TN_F64))};
    CHECK(tn_gradcheck(conv_fn, in, 3, NULL));
    tn__conv_fast_paths = fast0;
    tn_scope_end();
}

/* ---- the graph replay ---- */
static tn_tensor *eager(tn_module *m, tn_tensor *x) {
    tn_no_grad_begin();
    tn_tensor *y = tn_module_forward(m, x);
    tn_no_grad_end();
    return y;
}
static tn_tensor *replay(tn_graph *g, tn_tensor *x, bool grad) {
    tn_tensor *y = NULL;
    if (!grad) tn_no_grad_begin();
    if (tn_graph_run(g, &x, 1, &y, 1) < 0) y = NULL;
    if (!grad) tn_no_grad_end();
    return y;
}
/* m traced on x (eval mode): fused nodes as expected; replays (3 under no_grad: warm-up,
   the plan's recording, served from the plan; one with grad) equal eager bit for bit, the
   optimised graph's too. */
static void check_graph(int line, const char *name, tn_module *m, tn_tensor *x, int fused) {
    tn_module_eval(m);
    tn_tensor *want = eager(m, x);
    for (int opt = 0; opt < 2; opt++) {
        tn_graph *g = tn_jit_trace_module(m, x);
        if (!g) { fail_at(line, "%s: trace: %s", name, tn_last_error()); return; }
        if (opt && tn_graph_optimize(g) < 0) { fail_at(line, "%s: optimize: %s", name, tn_last_error()); tn_graph_free(g); return; }
        const int f = tn_graph_fused_nodes(g);
        if (f != fused) fail_at(line, "%s: %d nodes fused, expected %d", name, f, fused);
        else tn_test_passed++;
        for (int r = 0; r < 4; r++) {
            tn_tensor *got = replay(g, x, r == 3);
            if (!same_bits(got, want)) fail_at(line, "%s (optimised %d, run %d): replay differs from eager by %g", name, opt, r, got ? tn_item(tn_max(tn_abs(tn_sub(got, want)))) : -1.0);
            else tn_test_passed++;
        }
        tn_graph_free(g);
    }
}
#define CHECK_GRAPH(name, m, x, fused) check_graph(__LINE__, name, m, x, fused)

TEST(replay_linear_conv_activation) {
    tn_manual_seed(3);
    tn_scope_begin();
    for (int d = 0; d < 2; d++) {
        const tn_dtype dt = d ? TN_F64 : TN_F32;
        tn_module *acts[4] = {tn_nn_relu(), tn_nn_gelu(), tn_nn_activation("GELU", .approximate = TN_APPROXIMATE_TANH), tn_nn_activation("SiLU")};
        const char *names[4] = {"linear+relu", "linear+gelu", "linear+gelu_tanh", "linear+silu"};
        for (int a = 0; a < 4; a++) {
            tn_module *m = tn_nn_sequential(tn_nn_linear(40, 70), acts[a], tn_nn_linear(70, 10));
            tn_module_to_dtype(m, dt);
            CHECK_GRAPH(names[a], m, rnd_t(TN_SHAPE(33, 40), dt), 2);
            CHECK_GRAPH(names[a], m, rnd_t(TN_SHAPE(3, 11, 40), dt), 2);   /* 3-d: addmm, reshape, activation */
        }
        /* conv + relu: the im2col GEMM (wide image), small images, and the special paths */
        tn_module *cnn = tn_nn_sequential(tn_nn_conv2d(3, 16, 3, .padding = 1), tn_nn_relu(), tn_nn_conv2d(16, 8, 1), tn_nn_activation("SiLU"),
                                          tn_nn_conv2d(8, 8, 3, .padding = 1, .groups = 8), tn_nn_relu());
        tn_module_to_dtype(cnn, dt);
        CHECK_GRAPH("cnn", cnn, rnd_t(TN_SHAPE(2, 3, 20, 20), dt), 6);
        CHECK_GRAPH("cnn small", cnn, rnd_t(TN_SHAPE(5, 3, 6, 6), dt), 6);
        const int fast0 = tn__conv_fast_paths;
        tn__conv_fast_paths = 0;
        CHECK_GRAPH("cnn im2col", cnn, rnd_t(TN_SHAPE(2, 3, 20, 20), dt), 6);
        tn__conv_fast_paths = fast0;
        /* batch norm folded into the conv, then relu: fused after optimising only */
        tn_module *cbr = tn_nn_sequential(tn_nn_conv2d(3, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu());
        tn_module_to_dtype(cbr, dt);
        tn_module_eval(cbr);
        tn_tensor *x = rnd_t(TN_SHAPE(2, 3, 9, 9), dt), *want = eager(cbr, x);
        tn_graph *g = tn_jit_trace_module(cbr, x);
        CHECK(g && tn_graph_fused_nodes(g) == 0 && tn_graph_optimize(g) >= 0 && tn_graph_fused_nodes(g) == 2);
        for (int r = 0; g && r < 3; r++) {
            tn_tensor *got = replay(g, x, false);
            CHECK_MSG(got && tn_item(tn_max(tn_abs(tn_sub(got, want)))) < (d ? 1e-12 : 1e-4), "conv+bn+relu replay run %d", r);
        }
        tn_graph_free(g);
    }
    tn_scope_end();
}

/* no fusion where the product's result is read twice or is an output */
static tn_tensor *twice_fn(tn_tensor *const *in, int n, void *user) {
    (void)n;
    tn_tensor **w = (tn_tensor **)user, *y = tn_linear(in[0], w[0], w[1]);
    return tn_cat(((tn_tensor *[]){tn_relu(y), y}), 2);
}
static tn_tensor *last_fn(tn_tensor *const *in, int n, void *user) { (void)n; tn_tensor **w = (tn_tensor **)user; return tn_relu(tn_linear(in[0], w[0], w[1])); }
TEST(replay_not_fused) {
    tn_manual_seed(4);
    tn_scope_begin();
    tn_tensor *w[2] = {tn_randn(TN_SHAPE(20, 30), TN_F32), tn_randn(TN_SHAPE(20), TN_F32)}, *x = tn_randn(TN_SHAPE(8, 30), TN_F32);
    tn_graph *g = tn_jit_trace(twice_fn, w, &x, 1, NULL);
    CHECK(g && tn_graph_fused_nodes(g) == 0);
    tn_tensor *want = twice_fn(&x, 1, w);
    for (int r = 0; g && r < 3; r++) CHECK(same_bits(replay(g, x, false), want));
    tn_graph_free(g);
    g = tn_jit_trace(last_fn, w, &x, 1, NULL);   /* relu is the output: fused (the product is not) */
    CHECK(g && tn_graph_fused_nodes(g) == 2);
    want = last_fn(&x, 1, w);
    for (int r = 0; g && r < 3; r++) CHECK(same_bits(replay(g, x, false), want));
    tn_graph_free(g);
    tn_scope_end();
}

/* ---- self-attention's packed projections ---- */
static tn_module *mha_m;
static tn_tensor *mha_fn(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return tn_nn_mha_forward(mha_m, in[0], in[0], in[0], NULL, .need_weights = false, .attn_mask = tn_nn_generate_square_subsequent_mask(tn_shape(in[0])[1], TN_F64));
}
/* the inputs of the attention node under n (depth-first, a few levels), or -1 */
static int attn_inputs(tn_node *n, int depth) {
    if (!n || depth > 12) return -1;
    if (!strcmp(tn_node_name(n), "ScaledDotProductFlashAttentionForCpuBackward0")) return tn_node_num_next(n);
    for (int i = 0; i < tn_node_num_next(n); i++) {
        tn_node *c = tn_node_next(n, i, NULL);
        const int r = attn_inputs(c, depth + 1);
        tn_node_release(c);
        if (r >= 0) return r;
    }
    return -1;
}
static tn_tensor *grad_of(tn_module *m, const char *name) { return tn_grad(tn_module_get(m, name)); }
TEST(mha_packed_qkv) {
    tn_manual_seed(5);
    tn_scope_begin();
    for (int bf = 0; bf < 2; bf++)
        for (int mk = 0; mk < 3; mk++) {
            tn_module *m = tn_nn_multihead_attention(16, 4, .batch_first = bf != 0);
            tn_module_to_dtype(m, TN_F64);
            tn_tensor *x = rg(rnd_t(TN_SHAPE(3, 7, 16), TN_F64)), *x2 = rg(tn_clone(tn_detach(x))), *up = rnd_t(TN_SHAPE(3, 7, 16), TN_F64), *w = NULL;
            const int64_t L = bf ? 7 : 3, N = bf ? 3 : 7;
            tn_tensor *mask = mk == 1 ? tn_nn_generate_square_subsequent_mask(L, TN_F64) : NULL;
            tn_tensor *kpm = mk == 2 ? tn_gt_scalar(tn_rand(TN_SHAPE(N, L), TN_F64), 0.7) : NULL;
            tn_tensor *y = tn_nn_mha_forward(m, x, x, x, NULL, .key_padding_mask = kpm, .need_weights = false, .attn_mask = mask);
            tn_node *gf = y ? tn_grad_fn(y) : NULL;
            CHECK_MSG(attn_inputs(gf, 0) == (mk == 2 ? 3 : 2), "the packed node takes qkv, its parameters and the padding mask (a causal one is a flag): %d inputs", attn_inputs(gf, 0));
            tn_node_release(gf);
            CHECK(y && tn_backward(tn_sum(tn_mul(y, up))) == 0);
            tn_tensor *gw = tn_clone(grad_of(m, "in_proj_weight")), *gb = tn_clone(grad_of(m, "in_proj_bias")), *go = tn_clone(grad_of(m, "out_proj.weight"));
            tn_module_zero_grad(m);
            tn_tensor *y2 = tn_nn_mha_forward(m, x2, x2, x2, &w, .key_padding_mask = kpm, .attn_mask = mask);   /* the weights asked for: the composite */
            CHECK(y2 && tn_backward(tn_sum(tn_mul(y2, up))) == 0);
            CHECK_MSG(tn_allclose(y, y2, .rtol = 1e-10, .atol = 1e-12), "values, batch_first %d, mask %d", bf, mk);
            CHECK_MSG(tn_allclose(tn_grad(x), tn_grad(x2), .rtol = 1e-9, .atol = 1e-11) && tn_allclose(gw, grad_of(m, "in_proj_weight"), .rtol = 1e-9, .atol = 1e-11) &&
                      tn_allclose(gb, grad_of(m, "in_proj_bias"), .rtol = 1e-9, .atol = 1e-11) && tn_allclose(go, grad_of(m, "out_proj.weight"), .rtol = 1e-9, .atol = 1e-11),
                      "gradients, batch_first %d, mask %d", bf, mk);
            tn_no_grad_begin();   /* the inference path (views, not the packed node) */
            CHECK(tn_allclose(tn_nn_mha_forward(m, x, x, x, NULL, .key_padding_mask = kpm, .need_weights = false, .attn_mask = mask), y, .rtol = 1e-12, .atol = 1e-13));
            tn_no_grad_end();
            tn_module_free(m);
        }
    mha_m = tn_nn_multihead_attention(8, 2, .batch_first = true);
    tn_module_to_dtype(mha_m, TN_F64);
    tn_tensor *in[1] = {rg(rnd_t(TN_SHAPE(2, 4, 8), TN_F64))};
    CHECK(tn_gradcheck(mha_fn, in, 1, NULL));
    CHECK(tn_gradgradcheck(mha_fn, in, 1, NULL));
    tn_module_free(mha_m);
    tn_scope_end();
}

int main(void) {
    RUN(mha_packed_qkv);
    RUN(gemm_epilogue_bits);
    RUN(addmm_bias_epilogue);
    RUN(conv_bias_epilogue);
    RUN_ISOLATED(replay_linear_conv_activation, 300);
    RUN(replay_not_fused);
    return tn_test_report();
}
