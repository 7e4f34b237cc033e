/* nosync_cases.h — steady-state training steps that must not wait on the GPU (issue 23,
 * item 3), shared by test_nosync.c (the checking stand-in) and test_cuda.c (a real GPU).
 *
 * Each case builds a model on TN_CUDA, runs warm-up steps (the caches fill: allocator
 * blocks, cuDNN plans, optimizer state), then counts host <-> device transfers and
 * synchronisations (tn_cuda_memory_stats) over more steps: zero, and exactly one copy
 * back for the user's own tn_item of the loss. The batch is on the device beforehand. */
#ifndef NOSYNC_CASES_H
#define NOSYNC_CASES_H

typedef struct nosync_counts { int64_t h2d, d2h, syncs; } nosync_counts;
static nosync_counts nosync_now(void) {
    tn_cuda_stats s = tn_cuda_memory_stats();
    nosync_counts c = {s.num_h2d, s.num_d2h, s.num_syncs};
    return c;
}
/* what happened since c0 */
static nosync_counts nosync_since(nosync_counts c0) {
    nosync_counts c = nosync_now();
    c.h2d -= c0.h2d;
    c.d2h -= c0.d2h;
    c.syncs -= c0.syncs;
    return c;
}

/* one training step: forward, loss, zero_grad, backward, step; the loss stays on the device */
typedef tn_tensor *(*nosync_forward_fn)(tn_module *m, tn_tensor *x);
static tn_tensor *nosync_step(tn_module *m, tn_optim *opt, nosync_forward_fn fwd, tn_tensor *x, tn_tensor *y) {
    tn_tensor *out = fwd(m, x);
    if (out && out->ndim == 3) out = tn_reshape(out, TN_SHAPE(-1, out->shape[2]));   /* [B, T, V] logits -> [B*T, V] */
    tn_tensor *loss = tn_cross_entropy(out, y);
    if (!loss) return NULL;
    tn_optim_zero_grad(opt);
    if (tn_backward(loss) || tn_optim_step(opt)) return NULL;
    return loss;
}

/* Runs `warm` steps, then `steps` counted ones; the user's tn_item of the last loss is
   counted apart. Returns the counts of the steps alone, *item those of the tn_item. */
static int nosync_run(const char *what, tn_module *m, tn_optim *opt, nosync_forward_fn fwd, tn_tensor *x, tn_tensor *y, int warm, int steps,
                      nosync_counts *step_counts, nosync_counts *item_counts, double *loss_value) {
    for (int i = 0; i < warm; i++) {
        tn_scope_begin();
        tn_tensor *l = nosync_step(m, opt, fwd, x, y);
        double v = l ? tn_item(l) : NAN;   /* warm-up may synchronise: caches fill here */
        tn_scope_end();
        if (!l || v != v) { printf("%s: warm-up step %d failed: %s\n", what, i, tn_last_error()); return -1; }
    }
    nosync_counts c0 = nosync_now();
    tn_tensor *last = NULL;
    tn_scope_begin();
    for (int i = 0; i < steps; i++) {
        tn_release(last);
        tn_scope_begin();
        tn_tensor *l = nosync_step(m, opt, fwd, x, y);
        last = l ? tn_retain(l) : NULL;
        tn_scope_end();
        if (!last) { tn_scope_end(); printf("%s: step %d failed: %s\n", what, i, tn_last_error()); return -1; }
    }
    *step_counts = nosync_since(c0);
    nosync_counts c1 = nosync_now();
    *loss_value = tn_item(last);
    *item_counts = nosync_since(c1);
    tn_release(last);
    tn_scope_end();
    return 0;
}

/* ---- the three models ---- */
static tn_tensor *nosync_seq_fwd(tn_module *m, tn_tensor *x) { return tn_module_forward(m, x); }

/* a small GPT-like model: token + position embeddings, causal self-attention blocks
   (TransformerEncoderLayer, norm_first), a final LayerNorm and a linear head */
static tn_module *nosync_gpt(int64_t vocab, int64_t T, int64_t E, int64_t heads, int layers) {
    tn_module *m = tn_nn_sequential(tn_nn_embedding(vocab, E), tn_nn_embedding(T, E),
                                    tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(E, heads, .dim_feedforward = 4 * E, .dropout = 0.1,
                                                                                              .activation = TN_ACTIVATION_GELU, .batch_first = true,
                                                                                              .norm_first = true), layers),
                                    tn_nn_layer_norm(TN_SHAPE(E)), tn_nn_linear(E, vocab, .bias = false));
    return m;
}
static tn_tensor *nosync_pos;   /* positions 0..T-1 on the device: a buffer the model keeps */
static tn_tensor *nosync_gpt_fwd(tn_module *m, tn_tensor *idx) {
    tn_tensor *h = tn_add(tn_module_forward(tn_module_child(m, "0"), idx), tn_module_forward(tn_module_child(m, "1"), nosync_pos));
    h = tn_nn_transformer_encoder_forward(tn_module_child(m, "2"), h, .is_causal = true);
    h = tn_module_forward(tn_module_child(m, "3"), h);
    return tn_module_forward(tn_module_child(m, "4"), h);
}

#define NS_ZERO_COUNTS(what, c) CHECK_MSG((c).h2d == 0 && (c).d2h == 0 && (c).syncs == 0, "%s: %lld uploads, %lld downloads, %lld syncs in the steps", \
                                       what, (long long)(c).h2d, (long long)(c).d2h, (long long)(c).syncs)
#define NS_ITEM_COUNTS(what, c) CHECK_MSG((c).h2d == 0 && (c).d2h == 1 && (c).syncs == 1, "%s: tn_item: %lld uploads, %lld downloads, %lld syncs", \
                                       what, (long long)(c).h2d, (long long)(c).d2h, (long long)(c).syncs)

static void ns_run_case(const char *what, tn_module *m, tn_optim *opt, nosync_forward_fn fwd, tn_tensor *x, tn_tensor *y) {
    nosync_counts st = {0, 0, 0}, it = {0, 0, 0};
    double loss = NAN;
    CHECK_MSG(nosync_run(what, m, opt, fwd, x, y, 2, 3, &st, &it, &loss) == 0, "%s: %s", what, tn_last_error());
    printf("%s: steps %lld/%lld/%lld item %lld/%lld/%lld loss %g\n", what, (long long)st.h2d, (long long)st.d2h, (long long)st.syncs,
           (long long)it.h2d, (long long)it.d2h, (long long)it.syncs, loss);
    NS_ZERO_COUNTS(what, st);
    NS_ITEM_COUNTS(what, it);
    CHECK(loss == loss);
}

TEST(nosync_mlp_step) {
    tn_scope_begin();
    tn_manual_seed(1);
    tn_module *m = tn_nn_sequential(tn_nn_flatten(), tn_nn_linear(784, 64), tn_nn_relu(), tn_nn_dropout(.p = 0.2), tn_nn_linear(64, 10));
    CHECK(tn_module_to(m, TN_CUDA) == 0);
    tn_dict *p = tn_module_named_parameters(m);
    tn_optim *opt = tn_optim_sgd(tn_dict_values(p), tn_dict_len(p), .lr = 0.1, .momentum = 0.9);
    tn_tensor *x = tn_to(tn_rand(TN_SHAPE(32, 1, 28, 28), TN_F32), TN_CUDA), *y = tn_to(tn_randint(0, 10, TN_SHAPE(32), TN_I64, NULL), TN_CUDA);
    ns_run_case("MLP", m, opt, nosync_seq_fwd, x, y);
    tn_optim_free(opt);
    tn_dict_free(p);
    tn_module_free(m);
    tn_scope_end();
}

TEST(nosync_cnn_step) {
    tn_scope_begin();
    tn_manual_seed(2);
    tn_module *m = tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu(), tn_nn_max_pool2d(2),
                                    tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                    tn_nn_flatten(), tn_nn_dropout(.p = 0.25), tn_nn_linear(16 * 7 * 7, 10));
    CHECK(tn_module_to(m, TN_CUDA) == 0);
    tn_dict *p = tn_module_named_parameters(m);
    tn_optim *opt = tn_optim_adam(tn_dict_values(p), tn_dict_len(p), .lr = 1e-3);
    tn_tensor *x = tn_to(tn_rand(TN_SHAPE(16, 1, 28, 28), TN_F32), TN_CUDA), *y = tn_to(tn_randint(0, 10, TN_SHAPE(16), TN_I64, NULL), TN_CUDA);
    ns_run_case("CNN", m, opt, nosync_seq_fwd, x, y);
    tn_optim_free(opt);
    tn_dict_free(p);
    tn_module_free(m);
    tn_scope_end();
}

TEST(nosync_transformer_step) {
    tn_scope_begin();
    tn_manual_seed(3);
    const int64_t V = 50, T = 12, B = 4;
    tn_module *m = nosync_gpt(V, T, 32, 4, 2);
    CHECK(m && tn_module_to(m, TN_CUDA) == 0);
    tn_dict *p = tn_module_named_parameters(m);
    tn_optim *opt = tn_optim_adamw(tn_dict_values(p), tn_dict_len(p), .lr = 1e-3);
    nosync_pos = tn_retain(tn_to(tn_arange(0, T, 1, TN_I64), TN_CUDA));
    tn_tensor *x = tn_to(tn_randint(0, V, TN_SHAPE(B, T), TN_I64, NULL), TN_CUDA), *y = tn_to(tn_randint(0, V, TN_SHAPE(B * T), TN_I64, NULL), TN_CUDA);
    ns_run_case("transformer", m, opt, nosync_gpt_fwd, x, y);
    tn_release(nosync_pos);
    nosync_pos = NULL;
    tn_optim_free(opt);
    tn_dict_free(p);
    tn_module_free(m);
    tn_scope_end();
}

static tn_tensor *ns_dev(tn_tensor *t) { return tn_to(t, TN_CUDA); }
#define NS_I64(...) tn_from_data((int64_t[]){__VA_ARGS__}, TN_SHAPE(sizeof((int64_t[]){__VA_ARGS__}) / 8), TN_I64)
/* |a - b| <= tol everywhere, a on the device and b on the CPU */
static void ns_same(int line, const char *what, tn_tensor *a, tn_tensor *b, double tol) {
    if (!a || !b) { fail_at(line, "%s: %s", what, tn_last_error()); return; }
    tn_tensor *h = tn_to(a, TN_CPU);
    if (!h || !tn_allclose(h, b, .rtol = 0, .atol = tol, .equal_nan = true)) fail_at(line, "%s differs", what);
    else tn_test_passed++;
}
#define NS_SAME(what, a, b, tol) ns_same(__LINE__, what, a, b, tol)
static tn_tensor *ns_rg(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
/* expr succeeds (queued on the device); the next synchronisation (sync, an expression) fails with msg */
#define NS_DEFERRED(expr, sync, msg) do { tn_clear_error(); tn_tensor *r_ = (expr); \
    CHECK_MSG(r_ != NULL, "%s: failed at once: %s", #expr, tn_last_error()); \
    CHECK_ERR(sync, msg); \
    CHECK_ERR(sync, "found on the device"); } while (0)

/* Bad indices and targets are still errors: reported by the next synchronisation, naming
   the op; the check's slot is cleared by the report, so the next sync is clean. */
TEST(nosync_bad_index) {
    tn_scope_begin();
    tn_tensor *x = ns_dev(tn_randn(TN_SHAPE(5, 3), TN_F32));
    nosync_counts c0 = nosync_now();
    tn_tensor *r = tn_index_select(x, 0, ns_dev(NS_I64(1, 7, 2)));
    nosync_counts c = nosync_since(c0);
    CHECK(r != NULL);
    CHECK_MSG(c.d2h == 0 && c.syncs == 1 && c.h2d == 1, "index_select: %lld/%lld/%lld (only the index's own upload)", (long long)c.h2d, (long long)c.d2h,
              (long long)c.syncs);
    CHECK_ERR(!isnan(tn_item(tn_sum(r))), "tn_index_select: index 7 is out of bounds for dimension 0 with size 5");
    CHECK(!isnan(tn_item(tn_sum(x))));   /* reported once */
    tn_tensor *again = tn_index_select(x, 0, ns_dev(NS_I64(-1)));   /* negative indices: an error for index_select, as PyTorch */
    CHECK(again != NULL);
    CHECK_ERR(tn_cuda_synchronize() == 0, "index -1 is out of bounds for dimension 0 with size 5");
    CHECK(tn_cuda_synchronize() == 0);
    /* the other index ops */
    tn_tensor *ix = ns_dev(tn_reshape(NS_I64(0, 3, 9, 1), TN_SHAPE(2, 2)));
    CHECK_ERR(!isnan(tn_item(tn_sum(tn_gather(x, 0, ix)))), "tn_gather: index 9 is out of bounds for dimension 0 with size 5");
    tn_tensor *ai = ns_dev(NS_I64(-6));
    NS_DEFERRED(tn_index(x, &ai, 1), tn_to(tn_index(x, &ai, 1), TN_CPU), "index -6 is out of bounds for dimension 0 with size 5");
    CHECK_ERR(tn_to(tn_scatter_add(tn_zeros_like(x), 0, ix, ns_dev(tn_ones(TN_SHAPE(2, 2), TN_F32))), TN_CPU), "out of bounds for dimension 0 with size 5");
    tn_tensor *w = ns_dev(tn_randn(TN_SHAPE(10, 4), TN_F32));
    NS_DEFERRED(tn_embedding(ns_dev(NS_I64(3, 10)), w), tn_to(tn_embedding(ns_dev(NS_I64(3, 10)), w), TN_CPU), "index 10 is out of bounds for dimension 0 with size 10");
    /* nonzero synchronises: it reports too */
    tn_tensor *bad = tn_index_select(x, 1, ns_dev(NS_I64(3)));
    CHECK(bad != NULL);
    CHECK_ERR(tn_nonzero(x), "tn_index_select: index 3 is out of bounds for dimension 1 with size 3");
    /* valid negative indices wrap on the device as on the CPU */
    tn_tensor *neg = NS_I64(-1, 0, -5);
    tn_tensor *dneg = ns_dev(neg), *xh = tn_to(x, TN_CPU);
    NS_SAME("advanced index with negative indices", tn_index(x, &dneg, 1), tn_index(xh, &neg, 1), 0);
    CHECK(tn_cuda_synchronize() == 0);
    tn_scope_end();
}

TEST(nosync_bad_target) {
    tn_scope_begin();
    tn_tensor *x = ns_dev(tn_randn(TN_SHAPE(4, 10), TN_F32));
    tn_tensor *l = tn_cross_entropy(x, ns_dev(NS_I64(1, 12, 3, -100)));
    CHECK(l != NULL);
    CHECK_ERR(!isnan(tn_item(l)), "tn_cross_entropy: target 12 is out of bounds for 10 classes");
    CHECK_ERR(tn_to(tn_nll_loss(tn_log_softmax(x, 1), ns_dev(NS_I64(1, 2, -3, 0))), TN_CPU), "tn_nll_loss: target -3 is out of bounds for 10 classes");
    /* ignore_index (default -100, or any value) is no error, and such rows do not count */
    tn_tensor *t = NS_I64(1, -100, 3, 7), *xh = tn_to(x, TN_CPU), *xr = ns_rg(tn_clone(xh)), *xd = ns_rg(tn_clone(x));
    tn_tensor *lc = tn_cross_entropy(xr, t), *lg = tn_cross_entropy(xd, ns_dev(t));
    NS_SAME("cross_entropy with an ignored row", lg, lc, 1e-6);
    CHECK(tn_backward(lc) == 0 && tn_backward(lg) == 0);
    NS_SAME("its gradient", tn_grad(xd), tn_grad(xr), 1e-6);
    tn_tensor *wt = tn_rand(TN_SHAPE(10), TN_F32);
    tn_tensor *t3 = NS_I64(1, 3, 3, 7);
    NS_SAME("weighted, ignore_index 3", tn_cross_entropy(x, ns_dev(t3), .weight = ns_dev(wt), .ignore_index = 3), tn_cross_entropy(xh, t3, .weight = wt, .ignore_index = 3), 1e-6);
    CHECK_ERR(tn_to(tn_cross_entropy(x, ns_dev(t), .ignore_index = 3), TN_CPU), "target -100 is out of bounds for 10 classes");
    NS_SAME("label smoothing", tn_cross_entropy(x, ns_dev(t), .label_smoothing = 0.1), tn_cross_entropy(xh, t, .label_smoothing = 0.1), 1e-6);
    NS_SAME("nll_loss sum", tn_nll_loss(x, ns_dev(t), .reduction = TN_REDUCTION_SUM), tn_nll_loss(xh, t, .reduction = TN_REDUCTION_SUM), 1e-6);
    /* every row ignored: NaN with zero gradients, as PyTorch */
    tn_tensor *all = NS_I64(-100, -100, -100, -100), *xz = ns_rg(tn_clone(x));
    tn_tensor *ln = tn_cross_entropy(xz, ns_dev(all));
    CHECK(ln && isnan(tn_item(ln)));
    CHECK(tn_backward(ln) == 0 && tn_item(tn_sum(tn_abs(tn_grad(xz)))) == 0);
    CHECK(tn_cuda_synchronize() == 0);
    tn_scope_end();
}

TEST(nosync_division_by_zero) {
    tn_scope_begin();
    tn_tensor *a = ns_dev(NS_I64(7, 8, 9)), *b = ns_dev(NS_I64(2, 0, 3));
    tn_tensor *q = tn_floor_divide(a, b);
    CHECK(q != NULL);
    CHECK_ERR(tn_cuda_synchronize() == 0, "floor_divide: integer division by zero (ZeroDivisionError)");
    CHECK_ERR(tn_to(tn_remainder(a, b), TN_CPU), "remainder: integer division by zero");
    CHECK_ERR(tn_floor_divide_scalar(a, 0), "division by zero");   /* a divisor from the host: at once */
    NS_SAME("floor_divide", tn_floor_divide(a, ns_dev(NS_I64(2, 3, 4))), NS_I64(3, 2, 2), 0);
    tn_scope_end();
}

/* Masks and tables made on the device match the CPU's, and made no transfer. */
TEST(nosync_device_helpers) {
    tn_scope_begin();
    tn_tensor *xh = tn_randn(TN_SHAPE(2, 5, 7), TN_F32), *x = ns_dev(xh);
    tn_tensor *ei = ns_dev(NS_I64(1, 4, 1)), *ew = ns_rg(ns_dev(tn_randn(TN_SHAPE(6, 3), TN_F32))), *q = ns_dev(tn_randn(TN_SHAPE(2, 3, 4), TN_F32));
    nosync_counts c0 = nosync_now();
    tn_tensor *u = tn_triu(x, .diagonal = 1), *lo = tn_tril(x, .diagonal = -2);
    tn_tensor *e = tn_embedding(ei, ew);
    tn_tensor *oh = tn_one_hot(ei, .num_classes = 6);
    tn_tensor *att = tn_scaled_dot_product_attention(q, q, q, .is_causal = true);
    CHECK(e && tn_backward(tn_sum(e)) == 0 && att);
    nosync_counts c = nosync_since(c0);
    CHECK_MSG(c.h2d == 0 && c.d2h == 0 && c.syncs == 0, "triu, tril, embedding, one_hot, causal attention: %lld/%lld/%lld", (long long)c.h2d, (long long)c.d2h,
              (long long)c.syncs);
    NS_SAME("triu", u, tn_triu(xh, .diagonal = 1), 0);
    NS_SAME("tril", lo, tn_tril(xh, .diagonal = -2), 0);
    NS_SAME("one_hot", oh, tn_one_hot(NS_I64(1, 4, 1), .num_classes = 6), 0);
    NS_DEFERRED(tn_one_hot(ei, .num_classes = 4), tn_to(tn_one_hot(ei, .num_classes = 4), TN_CPU), "tn_one_hot: class value 4 is out of range for num_classes = 4");
    tn_tensor *qh = tn_to(q, TN_CPU);
    NS_SAME("causal attention", att, tn_scaled_dot_product_attention(qh, qh, qh, .is_causal = true), 1e-5);
    tn_scope_end();
}

/* More distinct checks between two synchronisations than there are slots: the oldest are
   read by one counted synchronisation, nothing is lost. */
TEST(nosync_check_slots) {
    tn_scope_begin();
    tn_tensor *ix = ns_dev(NS_I64(0));
    tn_tensor *xs[80];
    for (int i = 0; i < 80; i++) xs[i] = ns_dev(tn_zeros(TN_SHAPE(i + 1), TN_F32));
    CHECK(tn_cuda_synchronize() == 0);
    nosync_counts c0 = nosync_now();
    bool ok = true;
    for (int i = 0; i < 80; i++) ok = ok && tn_index_select(xs[i], 0, ix) != NULL;   /* 80 messages (sizes 1..80) */
    nosync_counts c = nosync_since(c0);
    CHECK(ok);
    CHECK_MSG(c.syncs == 1 && c.d2h == 0 && c.h2d == 0, "80 checks: %lld syncs", (long long)c.syncs);
    tn_tensor *bad = tn_index_select(xs[3], 0, ns_dev(NS_I64(4)));
    CHECK(bad != NULL);
    CHECK_ERR(tn_cuda_synchronize() == 0, "index 4 is out of bounds for dimension 0 with size 4");
    tn_scope_end();
}

/* every case above; only: a substring of the names to run ("" for all) */
#define NOSYNC_RUN_ALL(only) do { \
    if (strstr("nosync_mlp_step", only)) RUN(nosync_mlp_step); \
    if (strstr("nosync_cnn_step", only)) RUN(nosync_cnn_step); \
    if (strstr("nosync_transformer_step", only)) RUN(nosync_transformer_step); \
    if (strstr("nosync_bad_index", only)) RUN(nosync_bad_index); \
    if (strstr("nosync_bad_target", only)) RUN(nosync_bad_target); \
    if (strstr("nosync_division_by_zero", only)) RUN(nosync_division_by_zero); \
    if (strstr("nosync_device_helpers", only)) RUN(nosync_device_helpers); \
    if (strstr("nosync_check_slots", only)) RUN(nosync_check_slots); } while (0)

#endif
