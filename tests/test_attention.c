/* test_attention.c — the fused scaled dot-product attention (src/nn/attention.c) and the
 * modules that take it (MultiheadAttention without weights, the Transformer layers).
 *
 *  1. Values and float64 gradients against the definition written in library ops here
 *     (softmax(q k^T * scale + mask) v through matmul and softmax, differentiated by
 *     autograd): random, non-contiguous and broadcast inputs, causal, bool and additive
 *     masks, odd sizes and lengths that are not a multiple of the 64-row tile; float32 too.
 *  2. tn_gradcheck (float64) through the fused op, and tn_gradgradcheck (double backward
 *     goes through the composite formulas).
 *  3. The fused path is the one taken (the graph holds its node) and it keeps no L x S
 *     matrix: forward + backward at T = 512 peak below one [B, T, T] matrix.
 *  4. Errors: shapes and masks that do not fit are refused with messages.
 * PyTorch is the oracle in bindings/python/tests/test_attention.py.
 * Build: make build/test_attention */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <math.h>
#include <string.h>

#define SH(...) TN_SHAPE(__VA_ARGS__)

/* the definition, in library ops */
static tn_tensor *ref_sdpa(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, bool causal, double scale) {
    const int64_t L = tn_shape(q)[tn_ndim(q) - 2], S = tn_shape(k)[tn_ndim(k) - 2], E = tn_shape(q)[tn_ndim(q) - 1];
    tn_tensor *s = tn_mul_scalar(tn_matmul(q, tn_transpose(k, -2, -1)), scale > 0 ? scale : 1 / sqrt((double)E));
    if (causal) mask = tn_tril(tn_ones(SH(L, S), TN_BOOL));
    if (mask && tn_get_dtype(mask) == TN_BOOL) s = tn_masked_fill(s, tn_logical_not(mask), -INFINITY);
    else if (mask) s = tn_add(s, mask);
    return tn_matmul(tn_softmax(s, -1), v);
}
static bool uses_fused(tn_tensor *y) {
    char *dot = tn_graph_dot(y);
    bool r = dot && strstr(dot, "ScaledDotProductFlashAttentionForCpuBackward0") != NULL;
    tn_string_free(dot);
    return r;
}
/* a tensor of shape `shape` whose last two dims are stored transposed (non-contiguous) */
static tn_tensor *rand_t(const int64_t *shape, int nd, tn_dtype dt) {
    int64_t s[8];
    memcpy(s, shape, (size_t)nd * sizeof(int64_t));
    s[nd - 1] = shape[nd - 2];
    s[nd - 2] = shape[nd - 1];
    return tn_transpose(tn_randn(s, nd, dt), -2, -1);
}
static void leaf(tn_tensor *t) { tn_requires_grad_(t, true); }

/* one case: fused vs the definition, values and gradients of q, k, v */
static void check_case(const int64_t *qs, int qn, const int64_t *ks, const int64_t *vs, int kn, tn_tensor *mask, bool causal, double scale,
                       bool noncontig, tn_dtype dt, double tol) {
    tn_scope_begin();
    tn_tensor *q0 = noncontig ? tn_contiguous(rand_t(qs, qn, dt)) : tn_randn(qs, qn, dt), *k0 = tn_randn(ks, kn, dt), *v0 = tn_randn(vs, kn, dt);
    tn_tensor *q = noncontig ? tn_transpose(tn_contiguous(tn_transpose(q0, -2, -1)), -2, -1) : tn_clone(q0);
    tn_tensor *k = noncontig ? tn_transpose(tn_contiguous(tn_transpose(k0, -2, -1)), -2, -1) : tn_clone(k0), *v = tn_clone(v0);
    tn_tensor *qr = tn_clone(q0), *kr = tn_clone(k0), *vr = tn_clone(v0);
    tn_tensor *ls[6] = {q, k, v, qr, kr, vr};
    for (int i = 0; i < 6; i++) leaf(ls[i]);
    tn_tensor *y = tn_scaled_dot_product_attention(q, k, v, .attn_mask = mask, .is_causal = causal, .scale = scale), *yr = ref_sdpa(qr, kr, vr, mask, causal, scale);
    CHECK(y && yr && uses_fused(y));
    CHECK(y && yr && tn_ndim(y) == tn_ndim(yr) && !memcmp(tn_shape(y), tn_shape(yr), (size_t)tn_ndim(y) * sizeof(int64_t)));
    CHECK_MSG(y && yr && tn_allclose(y, yr, .rtol = tol, .atol = tol), "values: max diff %g", y && yr ? tn_item(tn_max(tn_abs(tn_sub(y, yr)))) : -1.0);
    tn_tensor *g = tn_randn(tn_shape(yr), tn_ndim(yr), dt);
    CHECK(tn_backward(y, .gradient = g) == 0 && tn_backward(yr, .gradient = g) == 0);
    for (int i = 0; i < 3; i++) {
        tn_tensor *a = tn_grad(ls[i]), *b = tn_grad(ls[i + 3]);
        CHECK_MSG(a && b && tn_allclose(a, b, .rtol = tol * 10, .atol = tol * 10), "grad %d: max diff %g", i, a && b ? tn_item(tn_max(tn_abs(tn_sub(a, b)))) : -1.0);
    }
    tn_scope_end();
}

TEST(test_values_and_grads) {
    tn_manual_seed(0);
    static const struct { int n; int64_t qb[2], kb[2]; int64_t L, S, E, Ev; } cases[] = {
        {2, {2, 3}, {2, 3}, 5, 7, 8, 4}, {1, {2, 0}, {2, 0}, 70, 130, 16, 16}, {2, {3, 1}, {1, 2}, 65, 65, 12, 5},
        {0, {0, 0}, {0, 0}, 1, 1, 3, 3}, {1, {1, 0}, {4, 0}, 129, 64, 32, 32}, {1, {2, 0}, {2, 0}, 200, 3, 7, 9},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t qs[4], ks[4], vs[4];
        const int n = cases[c].n;
        for (int d = 0; d < n; d++) { qs[d] = cases[c].qb[d]; ks[d] = vs[d] = cases[c].kb[d]; }
        qs[n] = cases[c].L; qs[n + 1] = cases[c].E;
        ks[n] = cases[c].S; ks[n + 1] = cases[c].E;
        vs[n] = cases[c].S; vs[n + 1] = cases[c].Ev;
        const int64_t L = cases[c].L, S = cases[c].S;
        for (int nc = 0; nc < 2; nc++) {
            check_case(qs, n + 2, ks, vs, n + 2, NULL, false, 0, nc, TN_F64, 1e-10);
            check_case(qs, n + 2, ks, vs, n + 2, NULL, true, 0, nc, TN_F64, 1e-10);
            check_case(qs, n + 2, ks, vs, n + 2, NULL, false, 0.3, nc, TN_F64, 1e-10);
            tn_scope_begin();
            /* bool mask (true = may attend), first key always allowed: no row wholly masked */
            tn_tensor *bm = tn_index_fill(tn_gt_scalar(tn_rand(SH(L, S), TN_F64), 0.3), 1, tn_zeros(SH(1), TN_I64), 1);
            check_case(qs, n + 2, ks, vs, n + 2, bm, false, 0, nc, TN_F64, 1e-10);
            /* broadcast bool mask [1, S], and an additive float mask with -inf entries */
            tn_tensor *bb = tn_index_fill(tn_gt_scalar(tn_rand(SH(1, S), TN_F64), 0.5), 1, tn_zeros(SH(1), TN_I64), 1);
            check_case(qs, n + 2, ks, vs, n + 2, bb, false, 0, nc, TN_F64, 1e-10);
            tn_tensor *fm = tn_masked_fill(tn_randn(SH(L, S), TN_F64), tn_logical_not(bm), -INFINITY);
            check_case(qs, n + 2, ks, vs, n + 2, fm, false, 0, nc, TN_F64, 1e-10);
            tn_scope_end();
            check_case(qs, n + 2, ks, vs, n + 2, NULL, true, 0, nc, TN_F32, 2e-5);
        }
    }
}

static tn_tensor *f_causal(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_scaled_dot_product_attention(in[0], in[1], in[2], .is_causal = true); }
static tn_tensor *f_mask(tn_tensor *const *in, int n, void *user) { (void)n; return tn_scaled_dot_product_attention(in[0], in[1], in[2], .attn_mask = (tn_tensor *)user); }
TEST(test_gradcheck) {
    tn_manual_seed(1);
    tn_scope_begin();
    tn_tensor *in[3] = {tn_randn(SH(2, 67, 3), TN_F64), tn_randn(SH(2, 67, 3), TN_F64), tn_randn(SH(1, 67, 2), TN_F64)};
    for (int i = 0; i < 3; i++) leaf(in[i]);
    CHECK(tn_gradcheck(f_causal, in, 3, NULL));
    tn_tensor *fm = tn_randn(SH(67, 67), TN_F64);
    CHECK(tn_gradcheck(f_mask, in, 3, fm));
    tn_tensor *bm = tn_index_fill(tn_gt_scalar(tn_rand(SH(67, 67), TN_F64), 0.5), 1, tn_zeros(SH(1), TN_I64), 1);
    CHECK(tn_gradcheck(f_mask, in, 3, bm));
    /* double backward: the create_graph gradients are the composite formulas' */
    tn_tensor *small[3] = {tn_randn(SH(2, 5, 3), TN_F64), tn_randn(SH(2, 6, 3), TN_F64), tn_randn(SH(2, 6, 2), TN_F64)};
    for (int i = 0; i < 3; i++) leaf(small[i]);
    CHECK(tn_gradgradcheck(f_causal, small, 3, NULL));
    CHECK(tn_gradgradcheck(f_mask, small, 3, tn_randn(SH(5, 6), TN_F64)));
    tn_scope_end();
}

TEST(test_fully_masked_rows) {
    /* a row with nothing to attend to: NaN, as softmax over -inf; the other rows unharmed */
    tn_scope_begin();
    tn_tensor *q = tn_randn(SH(3, 4), TN_F64), *k = tn_randn(SH(5, 4), TN_F64), *v = tn_randn(SH(5, 2), TN_F64);
    tn_tensor *m = tn_index_fill(tn_ones(SH(3, 5), TN_BOOL), 0, tn_ones(SH(1), TN_I64), 0);
    tn_tensor *y = tn_scaled_dot_product_attention(q, k, v, .attn_mask = m), *yr = ref_sdpa(q, k, v, m, false, 0);
    CHECK(y && isnan(tn_item(tn_select(tn_select(y, 0, 1), 0, 0))));
    CHECK(y && tn_allclose(y, yr, .rtol = 1e-12, .atol = 1e-12, .equal_nan = true));
    tn_scope_end();
}

/* forward + backward at T = 512, 8 heads of 64: the peak holds q, k, v, the output and the
   gradients, never one [8, 512, 512] matrix (8 MiB in float32) */
TEST(test_no_txt_matrix) {
    tn_scope_begin();
    tn_tensor *q = tn_randn(SH(8, 512, 64), TN_F32), *k = tn_randn(SH(8, 512, 64), TN_F32), *v = tn_randn(SH(8, 512, 64), TN_F32);
    leaf(q); leaf(k); leaf(v);
    tn_memory_stats before = tn_memory_stats_get();
    tn_memory_stats_reset_peak();
    tn_scope_begin();
    tn_tensor *y = tn_scaled_dot_product_attention(q, k, v, .is_causal = true);
    CHECK(y && tn_backward(tn_sum(y)) == 0);
    tn_scope_end();
    const int64_t peak = tn_memory_stats_get().peak_bytes - before.live_bytes, txt = (int64_t)8 * 512 * 512 * 4;
    CHECK_MSG(peak < txt, "peak %lld bytes, one T x T matrix %lld", (long long)peak, (long long)txt);
    /* the composite keeps several */
    tn_memory_stats_reset_peak();
    tn_scope_begin();
    tn_tensor *yr = ref_sdpa(q, k, v, NULL, true, 0);
    CHECK(yr && tn_backward(tn_sum(yr)) == 0);
    tn_scope_end();
    CHECK(tn_memory_stats_get().peak_bytes - before.live_bytes > 2 * txt);
    tn_scope_end();
}

TEST(test_modules_take_the_fused_path) {
    tn_manual_seed(2);
    tn_scope_begin();
    tn_module *m = tn_nn_multihead_attention(16, 4, .batch_first = true);
    tn_tensor *x = tn_randn(SH(2, 9, 16), TN_F32), *w = NULL;
    tn_tensor *mask = tn_nn_generate_square_subsequent_mask(9, TN_F32);
    tn_tensor *y = tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false, .attn_mask = mask);
    CHECK(y && uses_fused(y));
    /* need_weights: the weights exist, so the composite; same values */
    tn_tensor *y2 = tn_nn_mha_forward(m, x, x, x, &w, .attn_mask = mask);
    CHECK(y2 && w && !uses_fused(y2) && tn_allclose(y, y2, .atol = 1e-6));
    tn_module *l = tn_nn_transformer_encoder_layer(16, 4, .dim_feedforward = 32, .dropout = 0, .batch_first = true);
    tn_tensor *z = tn_nn_transformer_encoder_layer_forward(l, x, .src_mask = mask, .is_causal = true);
    CHECK(z && uses_fused(z));
    tn_module_free(l);
    tn_module_free(m);
    tn_scope_end();
}

/* Under CPU bf16 autocast MultiheadAttention's projections are bfloat16, which the CPU's
   fused kernels (float32/float64) do not take: the composite runs (it once read bfloat16
   buffers as float64: a heap overflow under ASan), the values near float32's, backward runs. */
TEST(test_cpu_autocast_mha) {
    tn_manual_seed(4);
    tn_scope_begin();
    tn_module *l = tn_nn_transformer_encoder_layer(32, 2, .dim_feedforward = 64, .dropout = 0, .batch_first = true, .norm_first = true);
    tn_tensor *x = tn_randn(SH(2, 16, 32), TN_F32), *mask = tn_nn_generate_square_subsequent_mask(16, TN_F32);
    tn_requires_grad_(x, true);
    tn_tensor *ref = tn_nn_transformer_encoder_layer_forward(l, x, .src_mask = mask, .is_causal = true);
    CHECK(tn_autocast_begin(TN_CPU, .dtype = TN_BF16) == 0);
    tn_tensor *y = tn_nn_transformer_encoder_layer_forward(l, x, .src_mask = mask, .is_causal = true);
    tn_tensor *a = tn_nn_mha_forward(tn_module_child(l, "self_attn"), x, x, x, NULL, .need_weights = false, .attn_mask = mask, .is_causal = true);
    CHECK(tn_autocast_end() == 0);
    CHECK(y && ref && tn_allclose(tn_to_dtype(y, TN_F32), ref, .rtol = 0.05, .atol = 0.05));
    CHECK(a && a->dtype == TN_BF16);
    CHECK(y && tn_backward(tn_sum(y)) == 0 && tn_grad(x) && tn_item(tn_sum(tn_isfinite(tn_grad(x)))) == 2 * 16 * 32);
    tn_module_free(l);
    tn_scope_end();
}

TEST(test_errors) {
    tn_scope_begin();
    tn_tensor *q = tn_randn(SH(2, 3, 4), TN_F32);
    CHECK_ERR(tn_scaled_dot_product_attention(q, tn_randn(SH(2, 3, 5), TN_F32), q), "tn_scaled_dot_product_attention");
    CHECK_ERR(tn_scaled_dot_product_attention(q, q, q, .attn_mask = tn_ones(SH(4, 3), TN_BOOL)), "tn_scaled_dot_product_attention");
    CHECK_ERR(tn_scaled_dot_product_attention(q, q, q, .attn_mask = tn_ones(SH(3, 3), TN_BOOL), .is_causal = true), "not both");
    CHECK_ERR(tn_scaled_dot_product_attention(q, q, q, .attn_mask = tn_ones(SH(3, 3), TN_I64)), "attn_mask must be bool");
    CHECK_ERR(tn_scaled_dot_product_attention(q, tn_randn(SH(2, 3, 4), TN_F64), q), "same dtype");
    /* empty sizes go through the composite */
    tn_tensor *e = tn_scaled_dot_product_attention(tn_randn(SH(2, 0, 4), TN_F32), q, q);
    CHECK(e && tn_ndim(e) == 3 && tn_shape(e)[1] == 0);
    tn_scope_end();
}

int main(void) {
    tn_memory_stats start = tn_memory_stats_get();
    RUN(test_values_and_grads);
    RUN(test_gradcheck);
    RUN(test_fully_masked_rows);
    RUN(test_no_txt_matrix);
    RUN(test_modules_take_the_fused_path);
    RUN(test_cpu_autocast_mha);
    RUN(test_errors);
    tn_memory_stats end = tn_memory_stats_get();
    CHECK_MSG(end.live_tensors == start.live_tensors, "leaked %lld tensors", (long long)(end.live_tensors - start.live_tensors));
    return tn_test_report();
}
