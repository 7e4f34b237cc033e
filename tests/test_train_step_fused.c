/* test_train_step_fused.c — issue 25's second CPU round (the transformer and LSTM training
 * steps): every faster path gives the bits of the path it replaced.
 *   - the recurrences' AVX2 and AVX-512 loops (src/modules/rnn.c, tn__wide_loops: a CPU
 *     without AVX-512 runs its AVX2 loops at level 2 too) against the plain ones: LSTM, GRU and RNN layers, float32, outputs, final states and every gradient
 *     bit-identical (the same IEEE operations, 16 lanes instead of 4), with a hidden size
 *     that leaves a vector tail; the layers against PyTorch and the cells are in
 *     test_rnn_fused.c and bindings/python/tests/test_rnn.py.
 *   - the fused attention's AVX2 and AVX-512 loops (src/nn/attention.c) against the plain ones: causal,
 *     bool-masked, additive-masked and unmasked, non-contiguous q, k, v, rows and keys across
 *     the 64-row tiles with tails: output and q, k, v gradients bit-identical.
 *   - cross-entropy's AVX2 and AVX-512 rows (src/nn/norm.c) against the plain ones: the loss and the
 *     input gradient bit-identical, with ignore_index, class weights and label smoothing, a
 *     class count that leaves a tail of the 64-value blocks; both within float rounding of
 *     the float64 computation.
 *   - the optimizers' multi-tensor step (src/optim/optim.c, tn__optim_multi) against one
 *     parameter at a time: SGD (plain; momentum, weight decay, nesterov), Adam, AdamW with
 *     amsgrad, maximize, RMSprop centered with momentum, over float32 and float64 parameters
 *     of many sizes (0-size, 0-d, one big enough to split across threads), a transposed one,
 *     two views of one storage and one without a grad, at 1 and 2 threads, three steps:
 *     parameters and state bit-identical.
 *   - layer norm's AVX2 and AVX-512 rows and its one-pass backward (src/nn/norm.c): the plain,
 *     AVX2 and AVX-512 loops give the same bits, at 1 and 2 threads the same bits (row blocks fixed by
 *     the size), float32 within rounding of float64, float64 equal to the composite of
 *     mean/var ops (values and gradients) to 1e-12; widths 1..200 (the 8-lane tail) and row
 *     counts across the 64-row blocks, with and without weight and bias.
 *   - self-attention's q, k, v gradients written straight into the packed projections' buffer
 *     (src/nn/attention.c, tn__sdpa_grads into qkv): MultiheadAttention's fused path against
 *     its composite (need_weights), float32 and float64, batch_first both ways, causal and
 *     key-padding masks, a non-contiguous input: output and every gradient.
 *   - the embedding's row copy (src/nn/embedding.c): index_select's values, out-of-range and
 *     negative indices still refused with its message, gradients unchanged.
 *   - gradient accumulation in place (src/autograd/engine.c, tn__accumulate): several paths
 *     into a leaf, into a retained non-leaf and into autograd.grad's inputs give the sums
 *     of the out-of-place path, and no tensor the caller can see is written: the gradient
 *     passed to backward, a retained .grad, a gradient a hook kept.
 * Build: make build/test_train_step_fused */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#define SH(...) TN_SHAPE(__VA_ARGS__)
#define WIDE_NAME(lv) ((lv) == 1 ? "AVX2" : "AVX-512")

/* forward and backward of a 2-layer bidirectional layer of `kind` (0 RNN tanh, 1 RNN relu,
   2 LSTM, 3 GRU): out[0] the output, then h_n, c_n (LSTM), then the gradients of the input,
   h0 (c0) and every parameter; returns the count */
static int run_layer(int kind, tn_tensor **out) {
    tn_manual_seed(7);
    const int64_t L = 6, N = 5, IN = 11, H = 37; /* 37: two 16-lane vectors and a tail */
    tn_module *m = kind == 2 ? tn_nn_lstm(IN, H, .num_layers = 2, .bidirectional = true)
                 : kind == 3 ? tn_nn_gru(IN, H, .num_layers = 2, .bidirectional = true)
                             : tn_nn_rnn(IN, H, .num_layers = 2, .bidirectional = true,
                                         .nonlinearity = kind ? TN_NONLINEARITY_RELU : TN_NONLINEARITY_TANH);
    tn_tensor *x = tn_randn(SH(L, N, IN), TN_F32), *h0 = tn_randn(SH(4, N, H), TN_F32), *c0 = kind == 2 ? tn_randn(SH(4, N, H), TN_F32) : NULL;
    tn_requires_grad_(x, true);
    tn_requires_grad_(h0, true);
    if (c0) tn_requires_grad_(c0, true);
    tn_tensor *hn = NULL, *cn = NULL;
    tn_tensor *y = kind == 2 ? tn_nn_lstm_forward(m, x, h0, c0, &hn, &cn) : tn_nn_rnn_forward(m, x, h0, &hn);
    int n = 0;
    out[n++] = y;
    out[n++] = hn;
    if (cn) out[n++] = cn;
    tn_tensor *loss = tn_add(tn_sum(tn_mul(y, tn_randn(tn_shape(y), 3, TN_F32))), tn_sum(tn_mul(hn, tn_randn(tn_shape(hn), 3, TN_F32))));
    if (cn) loss = tn_add(loss, tn_sum(tn_mul(cn, tn_randn(tn_shape(cn), 3, TN_F32))));
    tn_tensor *ins[64];
    int k = 0;
    ins[k++] = x;
    ins[k++] = h0;
    if (c0) ins[k++] = c0;
    tn_dict *ps = tn_module_named_parameters(m);
    for (int64_t i = 0; i < tn_dict_len(ps); i++) ins[k++] = tn_dict_values(ps)[i];
    CHECK(tn_autograd_grad(&loss, 1, ins, k, NULL, out + n) == 0);
    n += k;
    tn_dict_free(ps);
    tn_module_free(m);
    return n;
}
TEST(test_rnn_wide_loops_bitwise) {
    for (int lv = 1; lv <= 2; lv++)
        for (int kind = 0; kind < 4; kind++) {
            tn_scope_begin();
            tn_tensor *a[64], *b[64];
            tn__wide_loops = 0;
            const int na = run_layer(kind, a);
            tn__wide_loops = lv;
            const int nb = run_layer(kind, b);
            CHECK(na == nb && na > 3);
            for (int i = 0; i < na && i < nb; i++)
                CHECK_MSG(a[i] && b[i] && tn_equal(a[i], b[i]), "kind %d: result %d differs between the plain and the %s loops", kind, i, WIDE_NAME(lv));
            tn_scope_end();
        }
    tn__wide_loops = 2;
}

/* the attention forward and backward, results into out[0..3] (out, dq, dk, dv) */
static void run_sdpa(int maskkind, tn_tensor **out) {
    tn_manual_seed(11);
    const int64_t B = 3, L = 70, S = 75, E = 20;
    /* q, k, v as transposed views of [B, E, L] buffers: not contiguous */
    tn_tensor *q = tn_transpose(tn_randn(SH(B, E, L), TN_F32), 1, 2), *k = tn_transpose(tn_randn(SH(B, E, S), TN_F32), 1, 2);
    tn_tensor *v = tn_transpose(tn_randn(SH(B, E, S), TN_F32), 1, 2);
    tn_tensor *leaves[3] = {q, k, v};
    for (int i = 0; i < 3; i++) tn_requires_grad_(leaves[i], true);
    tn_tensor *mask = maskkind == 2 ? tn_gt(tn_randn(SH(L, S), TN_F32), tn_scalar_tensor(-1.0, TN_F32))
                    : maskkind == 3 ? tn_randn(SH(B, 1, S), TN_F32) : NULL;
    out[0] = tn_scaled_dot_product_attention(q, k, v, .attn_mask = mask, .is_causal = maskkind == 1);
    tn_tensor *loss = tn_sum(tn_mul(out[0], tn_randn(tn_shape(out[0]), 3, TN_F32)));
    CHECK(tn_autograd_grad(&loss, 1, leaves, 3, NULL, out + 1) == 0);
}
TEST(test_sdpa_wide_loops_bitwise) {
    for (int lv = 1; lv <= 2; lv++)
        for (int mk = 0; mk < 4; mk++) {
            tn_scope_begin();
            tn_tensor *a[4] = {NULL}, *b[4] = {NULL};
            tn__wide_loops = 0;
            run_sdpa(mk, a);
            tn__wide_loops = lv;
            run_sdpa(mk, b);
            for (int i = 0; i < 4; i++)
                CHECK_MSG(a[i] && b[i] && tn_equal(a[i], b[i]), "mask kind %d: result %d differs between the plain and the %s loops", mk, i, WIDE_NAME(lv));
            tn_scope_end();
        }
    tn__wide_loops = 2;
}

#define NPAR 9
/* the parameters: see the header; grads random, the last one has none */
static void make_params(tn_tensor **p) {
    tn_manual_seed(5);
    tn_tensor *base = tn_randn(SH(100), TN_F32);
    p[0] = tn_randn(SH(300000), TN_F32);
    p[1] = tn_randn(SH(7), TN_F32);
    p[2] = tn_randn(SH(0), TN_F32);
    p[3] = tn_randn(NULL, 0, TN_F32);
    p[4] = tn_t(tn_randn(SH(20, 30), TN_F32));
    p[5] = tn_narrow(base, 0, 0, 50);
    p[6] = tn_narrow(base, 0, 50, 50);
    p[7] = tn_randn(SH(1000), TN_F64);
    p[8] = tn_randn(SH(513), TN_F32);
    for (int i = 0; i < NPAR; i++) tn_requires_grad_(p[i], true);
}
static void set_grads(tn_tensor **p, int step) {
    tn_manual_seed(100 + (uint64_t)step);
    for (int i = 0; i < NPAR - 1; i++) tn_set_grad(p[i], tn_randn(tn_shape(p[i]), tn_ndim(p[i]), tn_get_dtype(p[i])));
}
static tn_optim *make_opt(int cfg, tn_tensor **p) {
    switch (cfg) {
    case 0: return tn_optim_sgd(p, NPAR, .lr = 0.1);
    case 1: return tn_optim_sgd(p, NPAR, .lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true);
    case 2: return tn_optim_adam(p, NPAR, .lr = 1e-2);
    case 3: return tn_optim_adamw(p, NPAR, .lr = 1e-2, .amsgrad = true);
    case 4: return tn_optim_adam(p, NPAR, .lr = 1e-2, .weight_decay = 0.1, .maximize = true);
    default: return tn_optim_rmsprop(p, NPAR, .lr = 1e-2, .centered = true, .momentum = 0.5);
    }
}
static const char *const state_names[] = {"momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "square_avg", "grad_avg"};
/* 3 steps of config cfg; clones of the parameters then of every state buffer into out */
static int run_opt(int cfg, tn_tensor **out) {
    tn_tensor *p[NPAR];
    make_params(p);
    tn_optim *o = make_opt(cfg, p);
    CHECK(o != NULL);
    for (int step = 0; step < 3 && o; step++) {
        set_grads(p, step);
        CHECK(tn_optim_step(o) == 0);
    }
    int n = 0;
    for (int i = 0; i < NPAR; i++) out[n++] = tn_clone(tn_detach(p[i]));
    for (int i = 0; o && i < NPAR; i++)
        for (int k = 0; k < 6; k++) { tn_tensor *st = tn_optim_state(o, i, state_names[k]); out[n++] = st ? tn_clone(st) : NULL; }
    tn_optim_free(o);
    return n;
}
/* cross-entropy's loss and input gradient into out[0..1] (variant v: plain, weighted with
   ignore_index, label smoothing), in dtype dt from the same float64 values */
static void run_ce(int v, tn_dtype dt, tn_tensor **out) {
    tn_manual_seed(11);
    const int64_t N = 37, C = 157;   /* 157: two 64-value blocks and a tail */
    tn_tensor *x64 = tn_mul_scalar(tn_randn(SH(N, C), TN_F64), 4.0), *t = tn_randint(0, C, SH(N), TN_I64, NULL), *w = tn_rand(SH(C), TN_F64);
    tn_tensor *x = tn_to_dtype(x64, dt);
    tn_requires_grad_(x, true);
    tn_tensor *l = v == 0 ? tn_cross_entropy(x, t) : v == 1 ? tn_cross_entropy(x, t, .weight = tn_to_dtype(w, dt), .ignore_index = 3)
                                                             : tn_cross_entropy(x, t, .label_smoothing = 0.1);
    tn_backward(l);
    out[0] = l;
    out[1] = tn_grad(x);
}
TEST(test_ce_wide_loops_bitwise) {
    for (int lv = 1; lv <= 2; lv++)
        for (int v = 0; v < 3; v++) {
            tn_scope_begin();
            tn_tensor *a[2] = {NULL}, *b[2] = {NULL}, *r[2] = {NULL};
            tn__wide_loops = 0;
            run_ce(v, TN_F32, a);
            tn__wide_loops = lv;
            run_ce(v, TN_F32, b);
            run_ce(v, TN_F64, r);
            for (int i = 0; i < 2; i++) {
                CHECK_MSG(a[i] && b[i] && tn_equal(a[i], b[i]), "variant %d: result %d differs between the plain and the %s loops", v, i, WIDE_NAME(lv));
                CHECK_MSG(b[i] && r[i] && tn_allclose(tn_to_dtype(b[i], TN_F64), r[i], .atol = 1e-7),
                          "variant %d: result %d is not float64's to float rounding", v, i);
            }
            tn_scope_end();
        }
    tn__wide_loops = 2;
}

/* cross-entropy rows' max in 16 lanes: a NaN anywhere in a row (the first lane, the vector
   part, the tail) gives that row NaN, as torch's logsumexp; +-inf and ties as before; rows
   narrower than, equal to and wider than the lanes; the plain and AVX-512 loops agree and
   match float64 */
TEST(test_ce_row_max_lanes) {
    static const int64_t Cs[] = {1, 5, 15, 16, 17, 40, 157};
    for (int ci = 0; ci < 7; ci++) {
        const int64_t N = 6, C = Cs[ci];
        tn_scope_begin();
        tn_manual_seed(5);
        tn_tensor *x64 = tn_mul_scalar(tn_randn(SH(N, C), TN_F64), 3.0), *t = tn_randint(0, C, SH(N), TN_I64, NULL);
        double *xp = (double *)tn_data_ptr(x64);
        xp[0 * C + 0] = NAN;                      /* row 0: NaN first */
        xp[1 * C + C / 2] = NAN;                  /* row 1: NaN in the middle */
        xp[2 * C + C - 1] = NAN;                  /* row 2: NaN last */
        xp[3 * C + C - 1] = INFINITY;             /* row 3: +inf (loss NaN or inf, as float64's) */
        if (C > 1) xp[4 * C + 0] = -INFINITY;     /* row 4: -inf somewhere (not its only value) */
        for (int64_t c = 0; c < C; c++) xp[5 * C + c] = 2.0;   /* row 5: all ties */
        tn_tensor *r[4];
        for (int v = 0; v < 4; v++) {   /* plain, AVX2, AVX-512 (where the CPU has them), float64 */
            tn__wide_loops = v < 3 ? v : 2;
            r[v] = tn_cross_entropy(v == 3 ? x64 : tn_to_dtype(x64, TN_F32), t, .reduction = TN_REDUCTION_NONE);
        }
        tn__wide_loops = 2;
        for (int v = 1; v < 3; v++)
            CHECK_MSG(r[0] && r[v] && tn_allclose(r[0], r[v], .rtol = 0, .atol = 0, .equal_nan = true), "C %d: the plain and %s rows differ", (int)C, WIDE_NAME(v));
        r[2] = r[3];
        CHECK_MSG(r[1] && r[2] && tn_allclose(tn_to_dtype(r[1], TN_F64), r[2], .atol = 1e-5, .equal_nan = true), "C %d: not float64's values", (int)C);
        const float *l = r[1] ? (const float *)tn_data_ptr(tn_contiguous(r[1])) : NULL;
        CHECK_MSG(l && isnan(l[0]) && isnan(l[1]) && isnan(l[2]) && !isnan(l[4]) && !isnan(l[5]), "C %d: NaN rows", (int)C);
        CHECK_MSG(l && fabsf(l[5] - logf((float)C)) < 1e-5f, "C %d: ties give log(C)", (int)C);
        tn_scope_end();
    }
}

TEST(test_optim_multi_tensor_bitwise) {
    for (int threads = 1; threads <= 2; threads++) {
        tn_set_num_threads(threads);
        for (int cfg = 0; cfg < 6; cfg++) {
            tn_scope_begin();
            tn_tensor *a[NPAR * 7], *b[NPAR * 7];
            tn__optim_multi = 1;
            const int na = run_opt(cfg, a);
            tn__optim_multi = 0;
            const int nb = run_opt(cfg, b);
            tn__optim_multi = 1;
            CHECK(na == nb);
            for (int i = 0; i < na && i < nb; i++)
                CHECK_MSG((!a[i] && !b[i]) || (a[i] && b[i] && tn_equal(a[i], b[i])), "threads %d config %d: tensor %d differs between the multi-tensor and the one-at-a-time step", threads, cfg, i);
            /* the step changed something: a test that cannot fail is none */
            tn_tensor *p0[NPAR];
            make_params(p0);
            CHECK(!tn_equal(a[0], p0[0]) && !tn_equal(a[7], p0[7]) && tn_equal(a[8], p0[8]));
            tn_scope_end();
        }
    }
    tn_set_num_threads(1);
}

/* a hook that keeps (a copy of and) a reference to the gradient it saw */
/* layer norm over the last dim of x [M, D] (weight and bias when wb), forward and the
   gradients of sum(y * r) for x, w, b: out[0..3] */
static void run_ln(int64_t M, int64_t D, bool wb, tn_dtype dt, bool composite, tn_tensor **out) {
    tn_manual_seed(3);
    tn_tensor *x = tn_to_dtype(tn_add_scalar(tn_mul_scalar(tn_randn(SH(M, D), TN_F64), 3.0), 0.5), dt);
    tn_tensor *w = wb ? tn_to_dtype(tn_randn(SH(D), TN_F64), dt) : NULL, *b = wb ? tn_to_dtype(tn_randn(SH(D), TN_F64), dt) : NULL;
    tn_tensor *r = tn_to_dtype(tn_randn(SH(M, D), TN_F64), dt);
    tn_requires_grad_(x, true);
    if (wb) { tn_requires_grad_(w, true); tn_requires_grad_(b, true); }
    tn_tensor *y;
    if (composite) {
        tn_tensor *mean = tn_mean_dims(x, SH(1), .keepdim = true), *var = tn_var_dims(x, SH(1), .correction = 0, .keepdim = true);
        y = tn_mul(tn_sub(x, mean), tn_rsqrt(tn_add_scalar(var, 1e-5)));
        if (wb) y = tn_add(tn_mul(y, w), b);
    } else {
        y = tn_layer_norm(x, SH(D), .weight = w, .bias = b);
    }
    tn_tensor *ins[3] = {x, w, b}, *loss = tn_sum(tn_mul(y, r));
    out[0] = y;
    out[2] = out[3] = NULL;
    CHECK(tn_autograd_grad(&loss, 1, ins, wb ? 3 : 1, NULL, out + 1) == 0);
}
TEST(test_ln_wide_loops_bitwise) {
    static const int64_t Ds[] = {1, 7, 8, 13, 128, 200}, Ms[] = {1, 63, 64, 130};
    for (int lv = 1; lv <= 2; lv++)
    for (int di = 0; di < 6; di++)
        for (int mi = 0; mi < 4; mi++)
            for (int wb = 0; wb < 2; wb++) {
                const int64_t D = Ds[di], M = Ms[mi];
                tn_scope_begin();
                tn_tensor *p32[4], *x32[4], *t32[4], *p64[4], *x64[4], *c64[4];
                tn__wide_loops = 0;
                run_ln(M, D, wb, TN_F32, false, p32);
                run_ln(M, D, wb, TN_F64, false, p64);
                tn__wide_loops = lv;
                run_ln(M, D, wb, TN_F32, false, x32);
                run_ln(M, D, wb, TN_F64, false, x64);
                run_ln(M, D, wb, TN_F64, true, c64);
                const int nt = tn_get_num_threads();
                tn_set_num_threads(nt == 1 ? 2 : 1);
                run_ln(M, D, wb, TN_F32, false, t32);
                tn_set_num_threads(nt);
                for (int i = 0; i < (wb ? 4 : 2); i++) {
                    CHECK_MSG(p32[i] && x32[i] && tn_equal(p32[i], x32[i]), "D %lld M %lld wb %d: float32 result %d differs plain / %s", (long long)D, (long long)M, wb, i, WIDE_NAME(lv));
                    CHECK_MSG(p64[i] && x64[i] && tn_equal(p64[i], x64[i]), "D %lld M %lld wb %d: float64 result %d differs plain / %s", (long long)D, (long long)M, wb, i, WIDE_NAME(lv));
                    CHECK_MSG(t32[i] && tn_equal(t32[i], x32[i]), "D %lld M %lld wb %d: result %d differs at another thread count", (long long)D, (long long)M, wb, i);
                    CHECK_MSG(c64[i] && tn_allclose(x64[i], c64[i], .rtol = 1e-10, .atol = 1e-10),
                              "D %lld M %lld wb %d: float64 result %d is not the composite's", (long long)D, (long long)M, wb, i);
                    /* D = 1: y is b (or 0) and x's gradient 0; float32 within its rounding otherwise */
                    CHECK_MSG(tn_allclose(tn_to_dtype(x32[i], TN_F64), x64[i], .rtol = 1e-4, .atol = 1e-4 * (double)M),
                              "D %lld M %lld wb %d: float32 result %d is not float64's to float rounding", (long long)D, (long long)M, wb, i);
                }
                tn_scope_end();
            }
    tn__wide_loops = 2;
}

/* MultiheadAttention's self-attention, fused (need_weights false: the packed qkv node) or the
   composite (need_weights): out[0] the output, then the gradients of x and the parameters */
static int run_mha(bool fused, bool bf, int maskkind, bool nc, tn_dtype dt, tn_tensor **out) {
    tn_manual_seed(13);
    tn_module *m = tn_nn_multihead_attention(16, 4, .batch_first = bf, .dropout = 0);
    tn_module_to_dtype(m, dt);
    const int64_t N = 3, L = 70;   /* 70: a 64-row tile and a tail */
    const int64_t xs[3] = {bf ? N : L, bf ? L : N, 16};
    tn_tensor *x = tn_to_dtype(tn_randn(xs, 3, TN_F64), dt);
    if (nc) x = tn_transpose(tn_contiguous(tn_transpose(x, 0, 1)), 0, 1);
    tn_requires_grad_(x, true);
    tn_tensor *kpm = maskkind == 2 ? tn_gt_scalar(tn_rand(SH(N, L), TN_F64), 0.8) : NULL;
    if (kpm) for (int64_t n = 0; n < N; n++) tn_fill_(tn_select(tn_select(kpm, 0, n), 0, 0), 0);   /* no row fully masked */
    tn_tensor *w = NULL;
    tn_tensor *y = tn_nn_mha_forward(m, x, x, x, fused ? NULL : &w, .need_weights = !fused, .key_padding_mask = kpm,
                                     .attn_mask = maskkind == 1 ? tn_nn_generate_square_subsequent_mask(L, dt) : NULL, .is_causal = maskkind == 1);
    tn_tensor *loss = tn_sum(tn_mul(y, tn_to_dtype(tn_randn(tn_shape(y), 3, TN_F64), dt)));
    tn_tensor *ins[16];
    int k = 0, n = 0;
    ins[k++] = x;
    tn_dict *ps = tn_module_named_parameters(m);
    for (int64_t i = 0; i < tn_dict_len(ps); i++) ins[k++] = tn_dict_values(ps)[i];
    out[n++] = y;
    CHECK(tn_autograd_grad(&loss, 1, ins, k, NULL, out + n) == 0);
    n += k;
    tn_dict_free(ps);
    tn_module_free(m);
    return n;
}
TEST(test_mha_qkv_grads_in_place) {
    for (int dt = 0; dt < 2; dt++)
        for (int bf = 0; bf < 2; bf++)
            for (int mk = 0; mk < 3; mk++)
                for (int nc = 0; nc < 2; nc++) {
                    tn_scope_begin();
                    tn_tensor *a[16] = {NULL}, *b[16] = {NULL};
                    const tn_dtype d = dt ? TN_F64 : TN_F32;
                    const int n = run_mha(true, bf, mk, nc, d, a), n2 = run_mha(false, bf, mk, nc, d, b);
                    CHECK(n == n2 && n >= 5);
                    for (int i = 0; i < n; i++)
                        CHECK_MSG(a[i] && b[i] && tn_allclose(a[i], b[i], .rtol = dt ? 1e-10 : 1e-4, .atol = dt ? 1e-10 : 1e-5),
                                  "dtype %d bf %d mask %d nc %d: result %d fused differs from the composite", dt, bf, mk, nc, i);
                    tn_scope_end();
                }
}
/* the embedding's row copy: index_select's rows and gradients; a bad index still refused */
TEST(test_embedding_rows) {
    tn_scope_begin();
    tn_manual_seed(9);
    tn_tensor *w = tn_randn(SH(10, 5), TN_F32), *ix = tn_randint(0, 10, SH(4, 6), TN_I64, NULL);
    tn_requires_grad_(w, true);
    tn_tensor *y = tn_embedding(ix, w);
    CHECK(y && tn_ndim(y) == 3 && tn_shape(y)[2] == 5);
    CHECK(tn_equal(y, tn_reshape(tn_index_select(tn_detach(w), 0, tn_reshape(ix, SH(-1))), SH(4, 6, 5))));
    tn_backward(tn_sum(tn_mul(y, y)));
    CHECK(tn_allclose(tn_grad(w), tn_index_add(tn_zeros(SH(10, 5), TN_F32), 0, tn_reshape(ix, SH(-1)), tn_reshape(tn_mul_scalar(tn_detach(y), 2), SH(24, 5))), .atol = 1e-6));
    CHECK(tn_equal(tn_embedding(tn_transpose(ix, 0, 1), w), tn_transpose(y, 0, 1)));   /* non-contiguous indices: index_select's path */
    CHECK(tn_numel(tn_embedding(tn_zeros(SH(0), TN_I64), w)) == 0);
    CHECK(tn_embedding(tn_full(SH(2), 10, TN_I64), w) == NULL);
    CHECK(strstr(tn_last_error(), "index") != NULL);
    CHECK(tn_embedding(tn_full(SH(2), -1, TN_I64), w) == NULL);
    tn_clear_error();
    tn_scope_end();
}

static tn_tensor *kept_ref, *kept_copy;
static tn_tensor *keep_hook(tn_tensor *g, void *user) {
    (void)user;
    tn_release(kept_ref);
    tn_release(kept_copy);
    kept_ref = tn_retain(g);
    kept_copy = tn_retain(tn_clone(g));
    return NULL;
}
TEST(test_accumulate_in_place) {
    tn_manual_seed(3);
    tn_scope_begin();
    tn_tensor *x = tn_randn(SH(4, 6), TN_F32), *a = tn_randn(SH(4, 6), TN_F32), *G = tn_randn(SH(4, 6), TN_F32);
    tn_requires_grad_(x, true);
    tn_tensor *G0 = tn_clone(G);
    /* h = 2x (retained), used three times; x used twice more directly */
    tn_tensor *h = tn_mul_scalar(x, 2);
    CHECK(tn_retain_grad(h) == 0);
    CHECK(tn_register_hook(h, keep_hook, NULL) >= 0);
    tn_tensor *z = tn_add(tn_add(tn_add(tn_mul(h, a), h), tn_exp(h)), tn_add(tn_mul(x, x), x));
    CHECK(tn_backward(z, .gradient = G, .retain_graph = true) == 0);
    /* by hand: dz/dh = a + 1 + exp(h); dz/dx = 2 dz/dh + 2x + 1 */
    tn_tensor *gh = tn_mul(G, tn_add(tn_add_scalar(a, 1), tn_exp(h))), *gx = tn_add(tn_mul_scalar(gh, 2), tn_mul(G, tn_add_scalar(tn_mul_scalar(x, 2), 1)));
    CHECK(tn_equal(G, G0));                                   /* the caller's gradient is not written */
    CHECK(tn_allclose(tn_grad(h), gh, .rtol = 1e-6, .atol = 1e-6));
    CHECK(tn_allclose(tn_grad(x), gx, .atol = 1e-5));
    CHECK(kept_ref && kept_copy && tn_equal(kept_ref, kept_copy)); /* nor a gradient a hook holds */
    tn_tensor *hg = tn_clone(tn_grad(h)), *xg = tn_clone(tn_grad(x));
    /* again: .grad accumulates (x's and the retained h's), the earlier values untouched where held */
    tn_tensor *xg_ref = tn_retain(tn_grad(x));
    CHECK(tn_backward(z, .gradient = G) == 0);
    CHECK(tn_allclose(tn_grad(x), tn_mul_scalar(xg, 2), .atol = 1e-5));
    CHECK(tn_allclose(tn_grad(h), tn_mul_scalar(hg, 2), .atol = 1e-5));
    CHECK(tn_equal(G, G0) && tn_equal(kept_ref, kept_copy));
    tn_release(xg_ref);
    /* autograd.grad: the same sums, and create_graph still records them (double backward) */
    tn_tensor *y = tn_sum(tn_add(tn_add(tn_mul(x, x), tn_mul(x, x)), tn_mul(tn_mul(x, x), x)));
    tn_tensor *g1 = NULL, *g2 = NULL;
    CHECK(tn_autograd_grad(&y, 1, &x, 1, NULL, &g1, .create_graph = true) == 0);
    CHECK(tn_allclose(g1, tn_add(tn_mul_scalar(x, 4), tn_mul_scalar(tn_mul(x, x), 3)), .atol = 1e-5));
    tn_tensor *s1 = tn_sum(g1);
    CHECK(tn_autograd_grad(&s1, 1, &x, 1, NULL, &g2) == 0);
    CHECK(tn_allclose(g2, tn_add_scalar(tn_mul_scalar(x, 6), 4), .atol = 1e-5));
    tn_release(kept_ref); tn_release(kept_copy);
    kept_ref = kept_copy = NULL;
    tn_scope_end();
}

int main(void) {
    tn_memory_stats start = tn_memory_stats_get();
    RUN(test_rnn_wide_loops_bitwise);
    RUN(test_sdpa_wide_loops_bitwise);
    RUN(test_ce_wide_loops_bitwise);
    RUN(test_ce_row_max_lanes);
    RUN(test_ln_wide_loops_bitwise);
    RUN(test_mha_qkv_grads_in_place);
    RUN(test_embedding_rows);
    RUN(test_accumulate_in_place);
    RUN(test_optim_multi_tensor_bitwise);
    tn_memory_stats end = tn_memory_stats_get();
    CHECK_MSG(end.live_tensors == start.live_tensors, "leaked %lld tensors", (long long)(end.live_tensors - start.live_tensors));
    return tn_test_report();
}
