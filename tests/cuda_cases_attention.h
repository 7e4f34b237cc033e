/* cuda_cases_attention.h — the fused attention behind tn_backend.attention (issue 23 item
 * 4), against the CPU's fused kernel: values and the gradients of q, k and v, causal or not,
 * float and bool masks broadcast over batch and heads, L != S, head dims 64, 40 and 128,
 * strided and broadcast inputs, float64; that the entry ran (the node's name) or declined
 * (head dim 129, TN_CUDA_FUSED_ATTENTION=0: the composite, same values); MultiheadAttention.
 * Included by test_cuda.c (the GPU unit) and test_devices.c (the stand-in, which serves the
 * entry with the CPU's kernel). Include after cuda_cases.h. */
#ifndef CUDA_CASES_ATTENTION_H
#define CUDA_CASES_ATTENTION_H
#if defined(_WIN32)
static void attn_setenv(const char *v) { _putenv_s("TN_CUDA_FUSED_ATTENTION", v ? v : ""); }
#else
static void attn_setenv(const char *v) {
    if (v) setenv("TN_CUDA_FUSED_ATTENTION", v, 1);
    else unsetenv("TN_CUDA_FUSED_ATTENTION");
}
#endif

/* in: q, k, v and (optional) the mask */
static tn_tensor *f_sdpa_plain(tn_tensor *const *x) { return tn_scaled_dot_product_attention(x[0], x[1], x[2]); }
static tn_tensor *f_sdpa_causal(tn_tensor *const *x) { return tn_scaled_dot_product_attention(x[0], x[1], x[2], .is_causal = true); }
static tn_tensor *f_sdpa_mask(tn_tensor *const *x) { return tn_scaled_dot_product_attention(x[0], x[1], x[2], .attn_mask = x[3], .scale = 0.3); }
/* q as a transposed view (strided rows and batch), k broadcast over the heads */
static tn_tensor *f_sdpa_views(tn_tensor *const *x) {
    return tn_scaled_dot_product_attention(tn_transpose(x[0], 1, 2), tn_expand(x[1], TN_SHAPE(2, 3, 40, 32)), x[2], .is_causal = true);
}

/* the output of sdpa on the GPU came from the fused node (the entry ran) */
static bool attn_fused_node(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, bool causal) {
    tn_tensor *g = tn_detach(tn_to(q, TN_CUDA));
    tn_requires_grad_(g, true);
    tn_tensor *o = tn_scaled_dot_product_attention(g, tn_to(k, TN_CUDA), tn_to(v, TN_CUDA), .attn_mask = mask ? tn_to(mask, TN_CUDA) : NULL, .is_causal = causal);
    const char *name = o ? tn_grad_fn_name(o) : NULL;
    return name && !strcmp(name, "ScaledDotProductEfficientAttentionBackward0");
}

/* The attention entry runs or declines (the stand-in as the unit: test_gpucheck and
   test_cuda both call this). */
static void attention_declines(const tn_backend *be) {
    tn_scope_begin();
    /* attention: float32 and float64 head dims up to 128 run, forward and backward; head dims
       over 128, integer or mixed dtypes, a float mask of another dtype, q's last dim strided,
       a strided result and TN_CUDA_FUSED_ATTENTION=0 decline */
    tn_tensor *aq = tn_to(tn_randn(TN_SHAPE(2, 5, 8), TN_F32), TN_CUDA), *ao = tn_to(tn_zeros(TN_SHAPE(2, 5, 8), TN_F32), TN_CUDA);
    tn_tensor *al = tn_to(tn_zeros(TN_SHAPE(2, 5), TN_F32), TN_CUDA), *ag[3];
    for (int i = 0; i < 3; i++) ag[i] = tn_to(tn_zeros(TN_SHAPE(2, 5, 8), TN_F32), TN_CUDA);
    CHECK(be->attention(aq, aq, aq, NULL, ao, al, NULL, NULL, NULL, NULL, 0.5, true) == 0);
    CHECK(be->attention(aq, aq, aq, NULL, ao, al, ao, ag[0], ag[1], ag[2], 0.5, true) == 0);
    tn_tensor *am = tn_to(tn_randn(TN_SHAPE(2, 5, 5), TN_F32), TN_CUDA), *amb = tn_to(tn_ones(TN_SHAPE(2, 5, 5), TN_BOOL), TN_CUDA);
    CHECK(be->attention(aq, aq, aq, am, ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 0);
    CHECK(be->attention(aq, aq, aq, amb, ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 0);
    CHECK(be->attention(aq, aq, aq, tn_to_dtype(am, TN_F64), ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    tn_tensor *aw = tn_to(tn_randn(TN_SHAPE(2, 5, 128), TN_F64), TN_CUDA), *awo = tn_to(tn_zeros(TN_SHAPE(2, 5, 128), TN_F64), TN_CUDA);
    tn_tensor *awl = tn_to(tn_zeros(TN_SHAPE(2, 5), TN_F64), TN_CUDA);
    CHECK(be->attention(aw, aw, aw, NULL, awo, awl, NULL, NULL, NULL, NULL, 0.5, false) == 0);
    tn_tensor *aw1 = tn_to(tn_randn(TN_SHAPE(2, 5, 129), TN_F64), TN_CUDA), *awo1 = tn_to(tn_zeros(TN_SHAPE(2, 5, 129), TN_F64), TN_CUDA);
    CHECK(be->attention(aw1, aw1, aw1, NULL, awo1, awl, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    tn_tensor *ai = tn_to(tn_zeros(TN_SHAPE(2, 5, 8), TN_I64), TN_CUDA), *ali = tn_to(tn_zeros(TN_SHAPE(2, 5), TN_I64), TN_CUDA);
    CHECK(be->attention(ai, ai, ai, NULL, ai, ali, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    CHECK(be->attention(aq, tn_to_dtype(aq, TN_F64), aq, NULL, ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    tn_tensor *at = tn_transpose(tn_to(tn_randn(TN_SHAPE(2, 8, 5), TN_F32), TN_CUDA), 1, 2);   /* [2, 5, 8], last dim strided */
    CHECK(be->attention(at, aq, aq, NULL, ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    CHECK(be->attention(tn_contiguous(at), aq, aq, NULL, ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 0);
    tn_tensor *ao_t = tn_transpose(tn_to(tn_zeros(TN_SHAPE(2, 8, 5), TN_F32), TN_CUDA), 1, 2);
    CHECK(be->attention(aq, aq, aq, NULL, ao_t, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    /* bfloat16 and float16 run in float32: their logsumexp and an additive mask are float32 */
    for (int h = 0; h < 2; h++) {
        const tn_dtype hd = h ? TN_F16 : TN_BF16;
        tn_tensor *hq = tn_to_dtype(aq, hd), *ho = tn_to_dtype(ao, hd), *hg[3];
        for (int i = 0; i < 3; i++) hg[i] = tn_to_dtype(ag[i], hd);
        CHECK(be->attention(hq, hq, hq, NULL, ho, al, NULL, NULL, NULL, NULL, 0.5, true) == 0);
        CHECK(be->attention(hq, hq, hq, NULL, ho, al, ho, hg[0], hg[1], hg[2], 0.5, true) == 0);
        CHECK(be->attention(hq, hq, hq, am, ho, al, NULL, NULL, NULL, NULL, 0.5, false) == 0);
        CHECK(be->attention(hq, hq, hq, amb, ho, al, NULL, NULL, NULL, NULL, 0.5, false) == 0);
        CHECK(be->attention(hq, hq, hq, tn_to_dtype(am, hd), ho, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
        CHECK(be->attention(hq, hq, hq, NULL, ho, tn_to_dtype(al, hd), NULL, NULL, NULL, NULL, 0.5, false) == 1);
        CHECK(be->attention(hq, aq, hq, NULL, ho, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
        CHECK(be->attention(hq, hq, hq, NULL, ao, al, NULL, NULL, NULL, NULL, 0.5, false) == 1);
    }
    attn_setenv("0");
    CHECK(be->attention(aq, aq, aq, NULL, ao, al, NULL, NULL, NULL, NULL, 0.5, true) == 1);
    attn_setenv(NULL);
    tn_scope_end();
}
TEST(gpu_attention_declines) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    if (be->attention) attention_declines(be);
}

TEST(gpu_fused_attention) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    if (!be->attention) return;
    tn_scope_begin();
    tn_manual_seed(11);
    /* causal, L = S = 70 (a partial second tile), head dim 64, two batch dims */
    tn_tensor *q = RANDN(2, 3, 70, 64), *k = RANDN(2, 3, 70, 64), *v = RANDN(2, 3, 70, 64);
    CHECK_OP("sdpa causal 64", f_sdpa_causal, 1e-4, true, q, k, v);
    CHECK_OP("sdpa plain 64", f_sdpa_plain, 1e-4, true, q, k, v);
    CHECK(attn_fused_node(q, k, v, NULL, true));
    /* L != S both ways, causal (top-left aligned) and not; head dim 40, value dim 24 */
    tn_tensor *q1 = RANDN(2, 33, 40), *k1 = RANDN(2, 100, 40), *v1 = RANDN(2, 100, 24);
    CHECK_OP("sdpa L<S head 40", f_sdpa_plain, 1e-4, true, q1, k1, v1);
    CHECK_OP("sdpa L<S causal head 40", f_sdpa_causal, 1e-4, true, q1, k1, v1);
    tn_tensor *q2 = RANDN(3, 90, 40), *k2 = RANDN(3, 20, 40), *v2 = RANDN(3, 20, 40);
    CHECK_OP("sdpa L>S causal", f_sdpa_causal, 1e-4, true, q2, k2, v2);
    /* an additive float mask [L, S] broadcast over batch and heads, and a scale */
    tn_tensor *fm = RANDN(70, 70);
    CHECK_OP("sdpa float mask", f_sdpa_mask, 1e-4, true, q, k, v, fm);
    CHECK(attn_fused_node(q, k, v, fm, false));
    /* a bool key-padding mask [2, 1, 1, S] (the last keys of batch 1 padded) */
    tn_tensor *kp = tn_lt(tn_arange(0, 70, 1, TN_F32), tn_full(TN_SHAPE(2, 1, 1, 1), 50, TN_F32));
    kp = tn_logical_or(kp, tn_eq_scalar(tn_reshape(tn_arange(0, 2, 1, TN_F32), TN_SHAPE(2, 1, 1, 1)), 0));
    CHECK_OP("sdpa bool key padding", f_sdpa_mask, 1e-4, true, q, k, v, kp);
    /* a bool mask [L, S] with a row where every key is masked: NaN there, as the CPU's */
    tn_tensor *bm = tn_gt_scalar(RANDN(70, 70), -0.5);
    bm = tn_mul(bm, tn_reshape(tn_ne_scalar(tn_arange(0, 70, 1, TN_F32), 5), TN_SHAPE(70, 1)));
    CHECK_OP("sdpa bool mask, a masked row", f_sdpa_mask, 1e-4, true, q, k, v, tn_to_dtype(bm, TN_BOOL));
    /* strided q and broadcast k */
    tn_tensor *q3 = RANDN(2, 40, 3, 32), *k3 = RANDN(2, 1, 40, 32), *v3 = RANDN(2, 3, 40, 32);
    CHECK_OP("sdpa strided q, broadcast k", f_sdpa_views, 1e-4, true, q3, k3, v3);
    /* head dim 128 (the wide tiles); 129 declines: the composite, same values */
    tn_tensor *q4 = RANDN(2, 65, 128), *k4 = RANDN(2, 65, 128), *v4 = RANDN(2, 65, 128);
    CHECK_OP("sdpa head 128", f_sdpa_causal, 1e-4, true, q4, k4, v4);
    CHECK(attn_fused_node(q4, k4, v4, NULL, false));
    tn_tensor *q5 = RANDN(2, 9, 129), *k5 = RANDN(2, 9, 129), *v5 = RANDN(2, 9, 8);
    CHECK_OP("sdpa head 129 (declined)", f_sdpa_causal, 1e-4, true, q5, k5, v5);
    CHECK(!attn_fused_node(q5, k5, v5, NULL, false));
    /* float64 */
    tn_tensor *q6 = tn_randn(TN_SHAPE(2, 37, 24), TN_F64), *k6 = tn_randn(TN_SHAPE(2, 45, 24), TN_F64), *v6 = tn_randn(TN_SHAPE(2, 45, 16), TN_F64);
    CHECK_OP("sdpa float64", f_sdpa_plain, 1e-10, true, q6, k6, v6);
    CHECK_OP("sdpa float64 causal mask", f_sdpa_mask, 1e-10, true, q6, k6, v6, tn_randn(TN_SHAPE(37, 45), TN_F64));
    /* the switch: TN_CUDA_FUSED_ATTENTION=0 declines every case (the composite runs) */
    attn_setenv("0");
    CHECK(!attn_fused_node(q, k, v, NULL, true));
    CHECK_OP("sdpa causal, fused attention off", f_sdpa_causal, 1e-4, true, q, k, v);
    attn_setenv(NULL);
    CHECK(attn_fused_node(q, k, v, NULL, true));
    tn_scope_end();
}

/* bfloat16 and float16 q, k, v: the fused kernels read them into float32 tiles, so the
   values and gradients are the CPU's float32 attention of the same (rounded) inputs, each
   result rounded once; an additive half mask is taken as float32 */
TEST(gpu_fused_attention_half) {
    if (!tn_get_backend(TN_CUDA)->attention) return;
    tn_scope_begin();
    tn_manual_seed(12);
    for (int h = 0; h < 2; h++) {
        const tn_dtype hd = h ? TN_F16 : TN_BF16;
        for (int mode = 0; mode < 3; mode++) {   /* causal; an additive mask; L != S, head dim 40 */
            tn_scope_begin();
            const int64_t L = mode == 2 ? 33 : 70, S = mode == 2 ? 100 : 70, E = mode == 2 ? 40 : 64;
            tn_tensor *in[3] = {tn_to_dtype(RANDN(2, 3, L, E), hd), tn_to_dtype(RANDN(2, 3, S, E), hd), tn_to_dtype(RANDN(2, 3, S, E), hd)};
            tn_tensor *mask = mode == 1 ? tn_to_dtype(RANDN(L, S), hd) : NULL, *c[3], *g[3];
            for (int i = 0; i < 3; i++) {
                c[i] = tn_detach(tn_to_dtype(in[i], TN_F32));
                g[i] = tn_detach(tn_to(in[i], TN_CUDA));
                tn_requires_grad_(c[i], true);
                tn_requires_grad_(g[i], true);
            }
            tn_tensor *yc = tn_scaled_dot_product_attention(c[0], c[1], c[2], .attn_mask = mask ? tn_to_dtype(mask, TN_F32) : NULL, .is_causal = mode == 0);
            tn_tensor *yg = tn_scaled_dot_product_attention(g[0], g[1], g[2], .attn_mask = mask ? tn_to(mask, TN_CUDA) : NULL, .is_causal = mode == 0);
            const char *name = yg ? tn_grad_fn_name(yg) : NULL;
            CHECK(name && !strcmp(name, "ScaledDotProductEfficientAttentionBackward0"));
            CHECK(yg && yg->dtype == hd);
            SAME(h ? "sdpa float16" : "sdpa bfloat16", yg, yc, h ? 2e-3 : 1e-2);
            tn_tensor *w = tn_to_dtype(tn_rand_like(yc), hd);
            CHECK(tn_backward(tn_sum(tn_mul(yc, tn_to_dtype(w, TN_F32)))) == 0 && tn_backward(tn_sum(tn_mul(yg, tn_to(w, TN_CUDA)))) == 0);
            for (int i = 0; i < 3; i++) {
                CHECK(tn_grad(g[i]) && tn_grad(g[i])->dtype == hd);
                SAME(h ? "sdpa float16 grad" : "sdpa bfloat16 grad", tn_grad(g[i]), tn_grad(c[i]), h ? 1e-2 : 5e-2);
            }
            tn_scope_end();
        }
    }
    tn_scope_end();
}

/* MultiheadAttention without weights (the fused path) on the GPU: outputs and parameter
   gradients as on the CPU, with a key padding mask, and causal */
TEST(gpu_fused_mha) {
    if (!tn_get_backend(TN_CUDA)->attention) return;
    tn_scope_begin();
    tn_manual_seed(5);
    tn_module *cpu = tn_nn_multihead_attention(64, 4, .batch_first = true), *gpu = tn_nn_multihead_attention(64, 4, .batch_first = true);
    tn_dict *sd = tn_module_state_dict(cpu);
    CHECK(tn_module_load_state_dict(gpu, sd, NULL, NULL) == 0);
    CHECK(tn_module_to(gpu, TN_CUDA) == 0);
    tn_tensor *x = RANDN(3, 50, 64), *kpm = tn_gt_scalar(tn_rand(TN_SHAPE(3, 50), TN_F32), 0.8);
    tn_tensor *causal = tn_nn_generate_square_subsequent_mask(50, TN_F32);
    for (int mode = 0; mode < 2; mode++) {
        tn_tensor *xc = tn_detach(x), *xg = tn_detach(tn_to(x, TN_CUDA));
        tn_requires_grad_(xc, true);
        tn_requires_grad_(xg, true);
        const tn_cuda_stats s0 = tn_cuda_memory_stats();
        tn_tensor *yc = tn_nn_mha_forward(cpu, xc, xc, xc, NULL, .key_padding_mask = mode ? NULL : kpm, .need_weights = false, .attn_mask = mode ? causal : NULL, .is_causal = mode == 1);
        tn_tensor *yg = tn_nn_mha_forward(gpu, xg, xg, xg, NULL, .key_padding_mask = mode ? NULL : tn_to(kpm, TN_CUDA), .need_weights = false, .attn_mask = mode ? tn_to(causal, TN_CUDA) : NULL, .is_causal = mode == 1);
        SAME(mode ? "mha causal" : "mha key padding", yg, yc, 1e-4);
        tn_tensor *w = tn_rand_like(yc);
        CHECK(tn_backward(tn_sum(tn_mul(yc, w))) == 0 && tn_backward(tn_sum(tn_mul(yg, tn_to(w, TN_CUDA)))) == 0);
        const tn_cuda_stats s1 = tn_cuda_memory_stats();
        CHECK(s1.num_fused_attention - s0.num_fused_attention == 2);   /* the fused kernels ran, forward and backward */
        SAME("mha grad x", tn_grad(xg), tn_grad(xc), 1e-3);
        SAME("mha grad in_proj_weight", tn_grad(tn_module_get(gpu, "in_proj_weight")), tn_grad(tn_module_get(cpu, "in_proj_weight")), 1e-3);
    }
    /* under bf16 autocast the projections are bfloat16: the fused kernels still run, forward
       and backward, the output near float32's */
    tn_tensor *xg = tn_detach(tn_to(x, TN_CUDA));
    tn_requires_grad_(xg, true);
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    CHECK(tn_autocast_begin(TN_CUDA, .dtype = TN_BF16) == 0);
    tn_tensor *yg = tn_nn_mha_forward(gpu, xg, xg, xg, NULL, .need_weights = false, .attn_mask = tn_to(causal, TN_CUDA), .is_causal = true);
    CHECK(tn_autocast_end() == 0);
    tn_tensor *yc = tn_nn_mha_forward(cpu, x, x, x, NULL, .need_weights = false, .attn_mask = causal, .is_causal = true);
    CHECK(yg && yg->dtype == TN_BF16);
    SAME("mha bf16 autocast", yg, yc, 5e-2);
    CHECK(yg && tn_backward(tn_sum(yg)) == 0 && tn_grad(xg));
    CHECK(tn_cuda_memory_stats().num_fused_attention - s0.num_fused_attention == 2);
    /* the packed projections' node under create_graph: the gradient formulas in library ops
       on views of qkv, a second derivative through them */
    for (int mode = 0; mode < 2; mode++) {
        tn_tensor *xc = tn_detach(x), *xg2 = tn_detach(tn_to(x, TN_CUDA));
        tn_requires_grad_(xc, true);
        tn_requires_grad_(xg2, true);
        tn_tensor *gc = NULL, *gg = NULL;
        tn_tensor *yc2 = tn_nn_mha_forward(cpu, xc, xc, xc, NULL, .need_weights = false, .attn_mask = causal, .is_causal = true);
        tn_tensor *yg2 = tn_nn_mha_forward(gpu, xg2, xg2, xg2, NULL, .need_weights = false, .attn_mask = tn_to(causal, TN_CUDA), .is_causal = true);
        tn_tensor *lc = tn_sum(tn_mul(yc2, yc2)), *lg = tn_sum(tn_mul(yg2, yg2));
        CHECK(tn_autograd_grad(&lc, 1, &xc, 1, NULL, &gc, .create_graph = true) == 0);
        CHECK(tn_autograd_grad(&lg, 1, &xg2, 1, NULL, &gg, .create_graph = true) == 0);
        SAME("mha create_graph grad", gg, gc, 1e-3);
        if (mode == 1) break;
        CHECK(gc && gg && tn_backward(tn_sum(tn_mul(gc, gc))) == 0 && tn_backward(tn_sum(tn_mul(gg, gg))) == 0);
        SAME("mha double backward", tn_grad(xg2), tn_grad(xc), 2e-3);
    }
    tn_dict_free(sd);
    tn_module_free(cpu);
    tn_module_free(gpu);
    tn_scope_end();
}
/* MultiheadAttention whose head dim (132) the fused kernels decline: the composite on the
   views of the packed projections, values and gradients as on the CPU */
TEST(gpu_mha_declined) {
    if (!tn_get_backend(TN_CUDA)->attention) return;
    tn_scope_begin();
    tn_manual_seed(6);
    tn_module *cpu = tn_nn_multihead_attention(264, 2, .batch_first = true), *gpu = tn_nn_multihead_attention(264, 2, .batch_first = true);
    tn_dict *sd = tn_module_state_dict(cpu);
    CHECK(tn_module_load_state_dict(gpu, sd, NULL, NULL) == 0);
    CHECK(tn_module_to(gpu, TN_CUDA) == 0);
    tn_tensor *x = RANDN(2, 9, 264), *xc = tn_detach(x), *xg = tn_detach(tn_to(x, TN_CUDA));
    tn_requires_grad_(xc, true);
    tn_requires_grad_(xg, true);
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    tn_tensor *yc = tn_nn_mha_forward(cpu, xc, xc, xc, NULL, .need_weights = false, .is_causal = false);
    tn_tensor *yg = tn_nn_mha_forward(gpu, xg, xg, xg, NULL, .need_weights = false, .is_causal = false);
    SAME("mha head dim 132", yg, yc, 1e-4);
    tn_tensor *w = tn_rand_like(yc);
    CHECK(tn_backward(tn_sum(tn_mul(yc, w))) == 0 && tn_backward(tn_sum(tn_mul(yg, tn_to(w, TN_CUDA)))) == 0);
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    CHECK(s1.num_fused_attention == s0.num_fused_attention && s1.num_attention_fallbacks > s0.num_attention_fallbacks);
    SAME("mha head dim 132 grad x", tn_grad(xg), tn_grad(xc), 1e-3);
    SAME("mha head dim 132 grad in_proj_weight", tn_grad(tn_module_get(gpu, "in_proj_weight")), tn_grad(tn_module_get(cpu, "in_proj_weight")), 1e-3);
    tn_dict_free(sd);
    tn_module_free(cpu);
    tn_module_free(gpu);
    tn_scope_end();
}
#endif
