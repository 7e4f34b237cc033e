/* tests/test_nn_more.c — the nn functionality of issue 20 item 3: F.pad's reflect /
 * replicate / circular modes, the shrink / softsign / threshold / GLU / PReLU / RReLU
 * activations, 3-d convolution and pooling, LP and fractional pooling, max_unpool, local
 * response norm, channel_shuffle, dropout3d, embedding_bag, grid_sample / affine_grid, the
 * interpolate modes, the margin / multi-label / triplet / likelihood losses and CTC loss,
 * and the C modules over them.
 *
 * Every differentiable op goes through tn_gradcheck in float64 on random (and strided)
 * inputs, the composites also through tn_gradgradcheck; small cases are checked against
 * values worked by hand; 0-size inputs and argument errors are checked. Values against
 * PyTorch are bindings/python/tests/test_nn_more.py's job (OpInfo / ModuleInfo samples). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

/* ---- helpers ---- */
static tn_tensor *leaf(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
static tn_tensor *rnd(const int64_t *shape, int nd) { return leaf(tn_randn(shape, nd, TN_F64)); }
/* a strided (every other element of the last dim) random float64 leaf */
static tn_tensor *rnd_strided(const int64_t *shape, int nd) {
    int64_t s[TN_MAX_DIMS];
    memcpy(s, shape, (size_t)nd * sizeof(int64_t));
    s[nd - 1] *= 2;
    tn_tensor *big = tn_randn(s, nd, TN_F64);
    return leaf(tn_contiguous(tn_slice(big, nd - 1, 0, s[nd - 1], 2)));
}
static const double *D(tn_tensor *t) {
    tn_tensor *c = t ? tn_contiguous(tn_to_dtype(tn_detach(t), TN_F64)) : NULL;
    return c ? (const double *)tn_data_ptr(c) : NULL;
}
static void gc_run(const char *name, tn_gradcheck_fn fn, tn_tensor *const *ins, int n, void *user, int order, int line) {
    tn_clear_error();
    if (tn_gradcheck(fn, ins, n, user)) tn_test_passed++;
    else fail_at(line, "gradcheck %s: %s", name, tn_last_error());
    if (order < 2) return;
    tn_clear_error();
    if (tn_gradgradcheck(fn, ins, n, user)) tn_test_passed++;
    else fail_at(line, "gradgradcheck %s: %s", name, tn_last_error());
}
#define GC(name, ins, n, user, order) gc_run(#name, name, ins, n, user, order, __LINE__)
#define FN(name, expr) static tn_tensor *name(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return expr; }
static bool same_shape(tn_tensor *t, const int64_t *s, int nd) {
    if (!t || tn_ndim(t) != nd) return false;
    for (int i = 0; i < nd; i++)
        if (tn_shape(t)[i] != s[i]) return false;
    return true;
}

/* ---- F.pad's modes ---- */
static const int64_t PAD1[2] = {2, 1}, PAD2[4] = {1, 2, 2, 0}, PAD3[6] = {1, 0, 0, 1, 1, 1}, PADNEG[4] = {-1, 1, 1, -1};
FN(f_reflect1, tn_pad(in[0], PAD1, 2, .mode = TN_PADDING_REFLECT))
FN(f_reflect2, tn_pad(in[0], PAD2, 4, .mode = TN_PADDING_REFLECT))
FN(f_reflect3, tn_pad(in[0], PAD3, 6, .mode = TN_PADDING_REFLECT))
FN(f_replicate1, tn_pad(in[0], PAD1, 2, .mode = TN_PADDING_REPLICATE))
FN(f_replicate2, tn_pad(in[0], PAD2, 4, .mode = TN_PADDING_REPLICATE))
FN(f_replicate3, tn_pad(in[0], PAD3, 6, .mode = TN_PADDING_REPLICATE))
FN(f_circular1, tn_pad(in[0], PAD1, 2, .mode = TN_PADDING_CIRCULAR))
FN(f_circular2, tn_pad(in[0], PAD2, 4, .mode = TN_PADDING_CIRCULAR))
FN(f_circular3, tn_pad(in[0], PAD3, 6, .mode = TN_PADDING_CIRCULAR))
FN(f_circular_neg, tn_pad(in[0], PADNEG, 4, .mode = TN_PADDING_CIRCULAR))

TEST(test_pad_modes_values) {
    tn_scope_begin();
    const double v[4] = {1, 2, 3, 4};
    tn_tensor *x = tn_from_data(v, TN_SHAPE(1, 4), TN_F64);
    const int64_t p[2] = {2, 3};
    const double refl[9] = {3, 2, 1, 2, 3, 4, 3, 2, 1}, repl[9] = {1, 1, 1, 2, 3, 4, 4, 4, 4}, circ[9] = {3, 4, 1, 2, 3, 4, 1, 2, 3};
    const double *r;
    tn_tensor *y = tn_pad(x, p, 2, .mode = TN_PADDING_REFLECT);
    CHECK(same_shape(y, TN_SHAPE(1, 9)));
    CHECK((r = D(y)) && !memcmp(r, refl, sizeof refl));
    CHECK((r = D(tn_pad(x, p, 2, .mode = TN_PADDING_REPLICATE))) && !memcmp(r, repl, sizeof repl));
    CHECK((r = D(tn_pad(x, p, 2, .mode = TN_PADDING_CIRCULAR))) && !memcmp(r, circ, sizeof circ));
    /* a negative pad crops, and the other side wraps within what is kept (torch) */
    const int64_t pn[2] = {-1, 2};
    const double cneg[5] = {2, 3, 4, 2, 3};
    CHECK((r = D(tn_pad(x, pn, 2, .mode = TN_PADDING_CIRCULAR))) && !memcmp(r, cneg, sizeof cneg));
    /* 0-size batch */
    CHECK(same_shape(tn_pad(tn_zeros(TN_SHAPE(0, 2, 3), TN_F32), p, 2, .mode = TN_PADDING_REPLICATE), TN_SHAPE(0, 2, 8)));
    CHECK_ERR(tn_pad(x, ((const int64_t[]){4, 0}), 2, .mode = TN_PADDING_REFLECT), "Padding size should be less than");
    CHECK_ERR(tn_pad(x, ((const int64_t[]){5, 0}), 2, .mode = TN_PADDING_CIRCULAR), "wrapping around more than once");
    CHECK_ERR(tn_pad(x, p, 1, .mode = TN_PADDING_REFLECT), "divisible by 2");
    CHECK_ERR(tn_pad(tn_zeros(TN_SHAPE(4), TN_F64), PAD2, 4, .mode = TN_PADDING_REFLECT), "less than or equal to two times");
    CHECK_ERR(tn_pad(tn_zeros(TN_SHAPE(2, 0, 3), TN_F64), p, 2, .mode = TN_PADDING_REFLECT), "non-zero dimensions");
    tn_scope_end();
}

TEST(test_pad_modes_grad) {
    tn_scope_begin();
    tn_tensor *x1 = rnd_strided(TN_SHAPE(2, 3, 4)), *x2 = rnd(TN_SHAPE(2, 2, 3, 4)), *x3 = rnd(TN_SHAPE(1, 2, 3, 2, 3));
    tn_tensor *u2 = rnd(TN_SHAPE(2, 3, 4));   /* unbatched 2-d */
    GC(f_reflect1, &x1, 1, NULL, 2);
    GC(f_reflect2, &x2, 1, NULL, 2);
    GC(f_reflect2, &u2, 1, NULL, 1);
    GC(f_reflect3, &x3, 1, NULL, 2);
    GC(f_replicate1, &x1, 1, NULL, 2);
    GC(f_replicate2, &x2, 1, NULL, 2);
    GC(f_replicate3, &x3, 1, NULL, 1);
    GC(f_circular1, &x1, 1, NULL, 2);
    GC(f_circular2, &x2, 1, NULL, 2);
    GC(f_circular3, &x3, 1, NULL, 1);
    GC(f_circular_neg, &x2, 1, NULL, 1);
    tn_scope_end();
}

/* ---- activations ---- */
FN(f_hardshrink, tn_hardshrink(in[0], .lambd = 0.3))
FN(f_softshrink, tn_softshrink(in[0], .lambd = 0.3))
FN(f_tanhshrink, tn_tanhshrink(in[0]))
FN(f_softsign, tn_softsign(in[0]))
FN(f_logsigmoid, tn_logsigmoid(in[0]))
FN(f_threshold, tn_threshold(in[0], 0.1, -2))
FN(f_glu, tn_glu(in[0], .dim = 1))
FN(f_glu_last, tn_glu(in[0]))
FN(f_softmin, tn_softmin(in[0], .dim = 1))
FN(f_prelu, tn_prelu(in[0], in[1]))
FN(f_rrelu_eval, tn_rrelu(in[0], .lower = 0.1, .upper = 0.3))

TEST(test_activations) {
    tn_scope_begin();
    const double v[5] = {-2, -0.25, 0, 0.25, 2};
    tn_tensor *x = tn_from_data(v, TN_SHAPE(5), TN_F64);
    const double hs[5] = {-2, 0, 0, 0, 2}, ss[5] = {-1.5, 0, 0, 0, 1.5}, th[5] = {-7, -7, -7, 0.25, 2};
    const double *r;
    CHECK((r = D(tn_hardshrink(x))) && !memcmp(r, hs, sizeof hs));
    CHECK((r = D(tn_softshrink(x))) && !memcmp(r, ss, sizeof ss));
    CHECK((r = D(tn_threshold(x, 0.1, -7))) && !memcmp(r, th, sizeof th));
    CHECK((r = D(tn_softsign(x))) && fabs(r[0] + 2.0 / 3) < 1e-15 && fabs(r[3] - 0.2) < 1e-15);
    CHECK((r = D(tn_logsigmoid(tn_scalar_tensor(-800, TN_F64)))) && fabs(r[0] + 800) < 1e-12);   /* stable */
    CHECK((r = D(tn_rrelu(x, .lower = 0.1, .upper = 0.3))) && fabs(r[0] + 2 * 0.2) < 1e-15);          /* eval: the mean slope */
    /* training: each negative element's slope is drawn from U[lower, upper] */
    tn_tensor *neg = tn_neg(tn_ones(TN_SHAPE(1000), TN_F64));
    r = D(tn_rrelu(neg, .lower = 0.1, .upper = 0.3, .training = true));
    bool in_range = r != NULL, varied = false;
    for (int i = 0; r && i < 1000; i++) {
        in_range &= r[i] <= -0.1 && r[i] >= -0.3;
        varied |= r[i] != r[0];
    }
    CHECK(in_range && varied);
    CHECK(same_shape(tn_glu(tn_zeros(TN_SHAPE(0, 4), TN_F64), .dim = 1), TN_SHAPE(0, 2)));
    CHECK_ERR(tn_glu(tn_zeros(TN_SHAPE(3, 5), TN_F64), .dim = 1), "even");
    CHECK_ERR(tn_prelu(tn_zeros(TN_SHAPE(2, 3), TN_F64), tn_zeros(TN_SHAPE(2), TN_F64)), "prelu");
    tn_tensor *a = rnd_strided(TN_SHAPE(3, 4, 2)), *g = rnd(TN_SHAPE(3, 6, 2)), *w1 = leaf(tn_full(TN_SHAPE(1), 0.25, TN_F64));
    tn_tensor *w4 = rnd(TN_SHAPE(4));
    GC(f_hardshrink, &a, 1, NULL, 2);
    GC(f_softshrink, &a, 1, NULL, 2);
    GC(f_tanhshrink, &a, 1, NULL, 2);
    GC(f_softsign, &a, 1, NULL, 2);
    GC(f_logsigmoid, &a, 1, NULL, 2);
    GC(f_threshold, &a, 1, NULL, 2);
    GC(f_glu, &g, 1, NULL, 2);
    GC(f_glu_last, &g, 1, NULL, 2);
    GC(f_softmin, &a, 1, NULL, 2);
    tn_tensor *pin1[2] = {a, w1}, *pin4[2] = {a, w4};
    GC(f_prelu, pin1, 2, NULL, 2);
    GC(f_prelu, pin4, 2, NULL, 2);
    GC(f_rrelu_eval, &a, 1, NULL, 2);
    tn_scope_end();
}

/* ---- 3-d convolution and pooling ---- */
FN(f_conv3d, tn_conv3d(in[0], in[1], in[2], .stride = 2, .padding = 1))
FN(f_conv3d_groups, tn_conv3d(in[0], in[1], NULL, .groups = 2, .dilation_dhw = TN_INTS(1, 2, 1), .padding_dhw = TN_INTS(0, 1, 2)))
FN(f_convt3d, tn_conv_transpose3d(in[0], in[1], in[2], .stride = 2, .padding = 1, .output_padding = 1))
FN(f_convt3d_groups, tn_conv_transpose3d(in[0], in[1], NULL, .groups = 2, .dilation = 2))
FN(f_maxpool3d, tn_max_pool3d(in[0], 2, .stride = 1, .padding = 1, .ceil_mode = true))
FN(f_avgpool3d, tn_avg_pool3d(in[0], 3, .stride = 2, .padding = 1, .count_include_pad = false))
FN(f_avgpool3d_div, tn_avg_pool3d(in[0], 2, .ceil_mode = true, .divisor_override = 3))
FN(f_adavg3d, tn_adaptive_avg_pool3d(in[0], 2, 3, 2))
FN(f_admax3d, tn_adaptive_max_pool3d(in[0], 2, 3, 2, NULL))
FN(f_lp1d, tn_lp_pool1d(in[0], 2.0, 3, .stride = 2))
FN(f_lp2d, tn_lp_pool2d(in[0], 3.0, 2))
FN(f_lrn, tn_local_response_norm(in[0], 3, .alpha = 0.1, .beta = 0.5, .k = 2))
FN(f_shuffle, tn_channel_shuffle(in[0], 2))
static tn_tensor *f_dropout3d(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_manual_seed(7);   /* the same channels every call */
    return tn_dropout3d(in[0], .p = 0.4);
}

TEST(test_conv_pool_3d) {
    tn_scope_begin();
    tn_tensor *x = rnd_strided(TN_SHAPE(2, 2, 4, 5, 4)), *w = rnd(TN_SHAPE(3, 2, 3, 2, 3)), *b = rnd(TN_SHAPE(3));
    tn_tensor *y = tn_conv3d(x, w, b, .stride = 2, .padding = 1);
    CHECK(same_shape(y, TN_SHAPE(2, 3, 2, 3, 2)));
    /* one output by hand: window at the origin, padded by 1 */
    {
        const double *xv = D(x), *wv = D(w), *bv = D(b), *yv = D(y);
        double acc = bv[0];
        for (int c = 0; c < 2; c++)
            for (int kd = 0; kd < 3; kd++)
                for (int kh = 0; kh < 2; kh++)
                    for (int kw = 0; kw < 3; kw++) {
                        int d = kd - 1, h = kh - 1, ww = kw - 1;
                        if (d < 0 || h < 0 || ww < 0) continue;
                        acc += xv[((c * 4 + d) * 5 + h) * 4 + ww] * wv[(((0 * 2 + c) * 3 + kd) * 2 + kh) * 3 + kw];
                    }
        CHECK_CLOSE(yv[0], acc, 1e-12);
    }
    tn_tensor *cin[3] = {x, w, b};
    GC(f_conv3d, cin, 3, NULL, 2);
    tn_tensor *xg = rnd(TN_SHAPE(1, 4, 3, 4, 5)), *wg = rnd(TN_SHAPE(4, 2, 2, 2, 2));
    tn_tensor *gin[2] = {xg, wg};
    GC(f_conv3d_groups, gin, 2, NULL, 1);
    tn_tensor *xt = rnd(TN_SHAPE(2, 2, 2, 3, 2)), *wt = rnd(TN_SHAPE(2, 3, 3, 3, 2)), *bt = rnd(TN_SHAPE(3));
    tn_tensor *tin[3] = {xt, wt, bt};
    CHECK(same_shape(tn_conv_transpose3d(xt, wt, bt, .stride = 2, .padding = 1, .output_padding = 1), TN_SHAPE(2, 3, 4, 6, 3)));
    GC(f_convt3d, tin, 3, NULL, 2);
    tn_tensor *xtg = rnd(TN_SHAPE(1, 4, 2, 2, 3)), *wtg = rnd(TN_SHAPE(4, 1, 2, 2, 2));
    tn_tensor *tgin[2] = {xtg, wtg};
    GC(f_convt3d_groups, tgin, 2, NULL, 1);
    CHECK_ERR(tn_conv3d(tn_zeros(TN_SHAPE(1, 3, 4, 4, 4), TN_F64), tn_zeros(TN_SHAPE(2, 2, 1, 1, 1), TN_F64), NULL), "conv3d");
    CHECK_ERR(tn_conv3d(tn_zeros(TN_SHAPE(1, 2, 4, 4), TN_F64), tn_zeros(TN_SHAPE(2, 2, 1, 1), TN_F64), NULL), "conv3d");

    tn_tensor *p = rnd(TN_SHAPE(2, 2, 3, 4, 3));
    tn_tensor *idx = NULL, *m = tn_max_pool3d_with_indices(p, &idx, 2);
    CHECK(same_shape(m, TN_SHAPE(2, 2, 1, 2, 1)) && idx && tn_get_dtype(idx) == TN_I64);
    {   /* the maximum and its flat index within the volume */
        const double *pv = D(p), *mv = D(m);
        const int64_t *iv = (const int64_t *)tn_data_ptr(tn_contiguous(idx));
        double best = -INFINITY;
        int64_t at = -1;
        for (int d = 0; d < 2; d++)
            for (int h = 0; h < 2; h++)
                for (int w2 = 0; w2 < 2; w2++) {
                    int64_t f = (d * 4 + h) * 3 + w2;
                    if (pv[f] > best) { best = pv[f]; at = f; }
                }
        CHECK_CLOSE(mv[0], best, 0);
        CHECK(iv[0] == at);
    }
    GC(f_maxpool3d, &p, 1, NULL, 2);
    GC(f_avgpool3d, &p, 1, NULL, 2);
    GC(f_avgpool3d_div, &p, 1, NULL, 2);
    tn_tensor *q = rnd(TN_SHAPE(2, 2, 5, 4, 3));
    GC(f_adavg3d, &q, 1, NULL, 2);
    GC(f_admax3d, &q, 1, NULL, 2);
    tn_tensor *u = rnd(TN_SHAPE(2, 3, 4, 3));   /* unbatched 3-d pooling */
    CHECK(same_shape(tn_max_pool3d(u, 2), TN_SHAPE(2, 1, 2, 1)));
    GC(f_avgpool3d, &u, 1, NULL, 1);
    CHECK_ERR(tn_avg_pool3d(p, 2, .divisor_override = 0), "divisor must be not zero");
    CHECK_ERR(tn_max_pool3d(p, 2, .padding = 2), "pad");
    CHECK(same_shape(tn_adaptive_avg_pool3d(tn_zeros(TN_SHAPE(0, 2, 3, 3, 3), TN_F64), 1, 2, 1), TN_SHAPE(0, 2, 1, 2, 1)));

    tn_tensor *l1 = leaf(tn_add_scalar(tn_abs(tn_randn(TN_SHAPE(2, 3, 8), TN_F64)), 0.1));
    tn_tensor *l2 = leaf(tn_add_scalar(tn_abs(tn_randn(TN_SHAPE(2, 3, 4, 5), TN_F64)), 0.1));
    GC(f_lp1d, &l1, 1, NULL, 2);
    GC(f_lp2d, &l2, 1, NULL, 2);
    {   /* lp_pool1d with p = 2: the window's 2-norm */
        const double *xv = D(l1), *yv = D(tn_lp_pool1d(l1, 2.0, 3, .stride = 2));
        CHECK_CLOSE(yv[1], sqrt(xv[2] * xv[2] + xv[3] * xv[3] + xv[4] * xv[4]), 1e-12);
    }
    tn_tensor *r = rnd(TN_SHAPE(2, 5, 3, 2));
    GC(f_lrn, &r, 1, NULL, 2);
    /* no gradcheck for cross_map_lrn2d: its backward is PyTorch's legacy one (a symmetric
       window), not the forward's derivative; test_nn_more.py compares it with PyTorch's */
    CHECK(same_shape(tn_cross_map_lrn2d(r, 3), TN_SHAPE(2, 5, 3, 2)));
    tn_tensor *r4 = rnd(TN_SHAPE(2, 4, 3, 2));
    GC(f_shuffle, &r4, 1, NULL, 2);
    {
        const double *rv = D(r), *sv = D(tn_channel_shuffle(tn_narrow(r, 1, 0, 4), 2));
        CHECK(sv && sv[1 * 6] == rv[2 * 6] && sv[2 * 6] == rv[1 * 6]);   /* channels 0 2 1 3 */
    }
    CHECK_ERR(tn_channel_shuffle(r, 2), "divisible");
    GC(f_dropout3d, &q, 1, NULL, 2);
    {   /* whole channels: each [D, H, W] volume all zero or all x / (1 - p) */
        tn_manual_seed(3);
        const double *qv = D(q), *dv = D(tn_dropout3d(q));
        bool whole = dv != NULL;
        for (int ch = 0; dv && ch < 4; ch++) {
            bool zero = dv[ch * 60] == 0;
            for (int i = 0; i < 60; i++) whole &= zero ? dv[ch * 60 + i] == 0 : fabs(dv[ch * 60 + i] - 2 * qv[ch * 60 + i]) < 1e-15;
        }
        CHECK(whole);
    }
    tn_scope_end();
}

/* ---- unpooling, fractional pooling ---- */
static tn_tensor *g_idx, *g_samples;
FN(f_unpool2d, tn_max_unpool(in[0], g_idx, (const int64_t[]){4, 6}, 2))
FN(f_fractional2d, tn_fractional_max_pool2d(in[0], (const int64_t[]){2, 2}, (const int64_t[]){3, 4}, g_samples, NULL))
FN(f_fractional3d, tn_fractional_max_pool3d(in[0], (const int64_t[]){2, 2, 2}, (const int64_t[]){2, 3, 2}, g_samples, NULL))

TEST(test_unpool_fractional) {
    tn_scope_begin();
    tn_tensor *x = rnd(TN_SHAPE(2, 3, 4, 6)), *idx = NULL;
    tn_tensor *m = tn_max_pool2d_with_indices(x, &idx, 2);
    CHECK(m && idx);
    tn_tensor *u = tn_max_unpool(m, idx, (const int64_t[]){4, 6}, 2);
    CHECK(same_shape(u, TN_SHAPE(2, 3, 4, 6)));
    {   /* every maximum back where it came from, zeros elsewhere */
        const double *xv = D(x), *uv = D(u);
        int nonzero = 0;
        bool ok = uv != NULL;
        for (int i = 0; uv && i < 144; i++)
            if (uv[i] != 0) { nonzero++; ok &= uv[i] == xv[i]; }
        CHECK(ok && nonzero == 36);
    }
    g_idx = idx;
    tn_tensor *md = leaf(tn_detach(m));
    GC(f_unpool2d, &md, 1, NULL, 2);
    CHECK_ERR(tn_max_unpool(m, idx, (const int64_t[]){2, 2}, 2), "max_unpool");

    g_samples = tn_rand(TN_SHAPE(2, 3, 2), TN_F64);
    tn_tensor *fx = rnd(TN_SHAPE(2, 3, 7, 8));
    tn_tensor *fi = NULL, *fy = tn_fractional_max_pool2d(fx, (const int64_t[]){2, 2}, (const int64_t[]){3, 4}, g_samples, &fi);
    CHECK(same_shape(fy, TN_SHAPE(2, 3, 3, 4)));
    {   /* each output is the input at its index */
        const double *xv = D(fx), *yv = D(fy);
        const int64_t *iv = fi ? (const int64_t *)tn_data_ptr(tn_contiguous(fi)) : NULL;
        bool ok = yv && iv;
        for (int pl = 0; ok && pl < 6; pl++)
            for (int o = 0; o < 12; o++) {
                int64_t at = iv[pl * 12 + o];
                ok &= at >= 0 && at < 56 && yv[pl * 12 + o] == xv[pl * 56 + at];
            }
        CHECK(ok);
    }
    GC(f_fractional2d, &fx, 1, NULL, 2);
    g_samples = tn_rand(TN_SHAPE(1, 2, 3), TN_F64);
    tn_tensor *fx3 = rnd(TN_SHAPE(1, 2, 5, 6, 5));
    GC(f_fractional3d, &fx3, 1, NULL, 1);
    CHECK_ERR(tn_fractional_max_pool2d(fx, (const int64_t[]){2, 2}, (const int64_t[]){7, 8}, g_samples, NULL), "fractional_max_pool2d");
    tn_scope_end();
}

/* ---- embedding_bag ---- */
static tn_tensor *g_bag_in, *g_offsets;
FN(f_bag_sum_psw, tn_embedding_bag(g_bag_in, in[0], .offsets = g_offsets, .mode = TN_BAG_SUM, .per_sample_weights = in[1]))
FN(f_bag_mean, tn_embedding_bag(g_bag_in, in[0], .offsets = g_offsets, .mode = TN_BAG_MEAN, .padding_idx = 2))
FN(f_bag_max, tn_embedding_bag(g_bag_in, in[0], .offsets = g_offsets, .mode = TN_BAG_MAX))

TEST(test_embedding_bag) {
    tn_scope_begin();
    const int64_t iv[7] = {1, 2, 4, 5, 4, 3, 2}, ov[4] = {0, 2, 2, 5};
    const double wv[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};   /* [6, 2] */
    tn_tensor *in = tn_from_data(iv, TN_SHAPE(7), TN_I64), *off = tn_from_data(ov, TN_SHAPE(4), TN_I64);
    tn_tensor *w = tn_from_data(wv, TN_SHAPE(6, 2), TN_F64);
    /* bags {1, 2}, {}, {4, 5, 4}, {3, 2} */
    const double sum[8] = {6, 8, 0, 0, 26, 29, 10, 12}, mean_pad[8] = {2, 3, 0, 0, 26.0 / 3, 29.0 / 3, 6, 7}, mx[8] = {4, 5, 0, 0, 10, 11, 6, 7};
    const double *r;
    CHECK((r = D(tn_embedding_bag(in, w, .offsets = off, .mode = TN_BAG_SUM))) && !memcmp(r, sum, sizeof sum));
    CHECK((r = D(tn_embedding_bag(in, w, .offsets = off, .padding_idx = 2))) && !memcmp(r, mean_pad, sizeof mean_pad));
    CHECK((r = D(tn_embedding_bag(in, w, .offsets = off, .mode = TN_BAG_MAX))) && !memcmp(r, mx, sizeof mx));
    /* include_last_offset: 3 bags, the last ending at offsets[3] */
    CHECK(same_shape(tn_embedding_bag(in, w, .offsets = off, .mode = TN_BAG_SUM, .include_last_offset = true), TN_SHAPE(3, 2)));
    /* 2-d input: a bag per row */
    CHECK(same_shape(tn_embedding_bag(tn_reshape(tn_narrow(in, 0, 0, 6), TN_SHAPE(3, 2)), w), TN_SHAPE(3, 2)));
    CHECK_ERR(tn_embedding_bag(in, w, .offsets = off, .mode = TN_BAG_MEAN, .per_sample_weights = tn_ones(TN_SHAPE(7), TN_F64)), "per_sample_weights");
    CHECK_ERR(tn_embedding_bag(tn_from_data((const int64_t[]){6}, TN_SHAPE(1), TN_I64), w, .offsets = tn_zeros(TN_SHAPE(1), TN_I64)), "out of");
    g_bag_in = in; g_offsets = off;
    tn_tensor *wr = rnd(TN_SHAPE(6, 3)), *psw = rnd(TN_SHAPE(7));
    tn_tensor *pin[2] = {wr, psw};
    GC(f_bag_sum_psw, pin, 2, NULL, 2);
    GC(f_bag_mean, &wr, 1, NULL, 2);
    GC(f_bag_max, &wr, 1, NULL, 1);
    tn_scope_end();
}

/* ---- grid_sample, affine_grid, interpolate ---- */
FN(f_grid_zeros, tn_grid_sample(in[0], in[1]))
FN(f_grid_border_ac, tn_grid_sample(in[0], in[1], .padding_mode = TN_GRID_BORDER, .align_corners = true))
FN(f_grid_reflect, tn_grid_sample(in[0], in[1], .padding_mode = TN_GRID_REFLECTION))
FN(f_grid_reflect_ac, tn_grid_sample(in[0], in[1], .padding_mode = TN_GRID_REFLECTION, .align_corners = true))
FN(f_grid_nearest, tn_grid_sample(in[0], in[1], .mode = TN_GRID_NEAREST))
FN(f_grid_bicubic, tn_grid_sample(in[0], in[1], .mode = TN_GRID_BICUBIC))
FN(f_grid_bicubic_border_ac, tn_grid_sample(in[0], in[1], .mode = TN_GRID_BICUBIC, .padding_mode = TN_GRID_BORDER, .align_corners = true))
FN(f_grid_bicubic_reflect, tn_grid_sample(in[0], in[1], .mode = TN_GRID_BICUBIC, .padding_mode = TN_GRID_REFLECTION))
FN(f_affine2d, tn_affine_grid(in[0], TN_SHAPE(2, 3, 4, 5)))
FN(f_affine3d, tn_affine_grid(in[0], TN_SHAPE(2, 1, 3, 2, 4), .align_corners = true))
FN(f_bicubic, tn_interpolate(in[0], .size = TN_INTS(5, 7), .mode = "bicubic"))
FN(f_bicubic_ac, tn_interpolate(in[0], .size = TN_INTS(5, 2), .mode = "bicubic", .align_corners = true))
FN(f_trilinear, tn_interpolate(in[0], .size = TN_INTS(3, 5, 4), .mode = "trilinear"))
FN(f_area, tn_interpolate(in[0], .size = TN_INTS(2, 3), .mode = "area"))
FN(f_nearest_exact3d, tn_interpolate(in[0], .size = TN_INTS(4, 3, 5), .mode = "nearest-exact"))

TEST(test_sampling) {
    tn_scope_begin();
    /* the identity grid with align_corners samples the pixels themselves */
    tn_tensor *x = rnd(TN_SHAPE(2, 3, 4, 5));
    const double th[6] = {1, 0, 0, 0, 1, 0};
    tn_tensor *theta = tn_expand(tn_from_data(th, TN_SHAPE(1, 2, 3), TN_F64), TN_SHAPE(2, 2, 3));
    tn_tensor *idg = tn_affine_grid(theta, TN_SHAPE(2, 3, 4, 5), .align_corners = true);
    CHECK(same_shape(idg, TN_SHAPE(2, 4, 5, 2)));
    tn_tensor *same = tn_grid_sample(x, idg, .align_corners = true);
    {
        const double *a = D(same), *b = D(x);
        bool ok = a && b;
        for (int i = 0; ok && i < 120; i++) ok &= fabs(a[i] - b[i]) < 1e-12;
        CHECK(ok);
    }
    {   /* affine_grid without align_corners: pixel centres at (2 i + 1) / W - 1 */
        const double *g = D(tn_affine_grid(theta, TN_SHAPE(2, 3, 4, 5)));
        CHECK(g && fabs(g[0] + 0.8) < 1e-15 && fabs(g[1] + 0.75) < 1e-15);
    }
    /* out of range: zeros reads 0, border the edge value */
    const double far[2] = {5, 5};
    tn_tensor *gfar = tn_expand(tn_from_data(far, TN_SHAPE(1, 1, 1, 2), TN_F64), TN_SHAPE(2, 1, 1, 2));
    const double *z = D(tn_grid_sample(x, gfar)), *bd = D(tn_grid_sample(x, gfar, .padding_mode = TN_GRID_BORDER)), *xv = D(x);
    CHECK(z && z[0] == 0 && bd && fabs(bd[0] - xv[19]) < 1e-12);
    tn_tensor *grid = leaf(tn_mul_scalar(tn_rand(TN_SHAPE(2, 3, 2, 2), TN_F64), 2.4));
    grid = leaf(tn_detach(tn_sub_scalar(grid, 1.2)));   /* some taps outside [-1, 1] */
    tn_tensor *in2[2] = {x, grid};
    GC(f_grid_zeros, in2, 2, NULL, 1);
    GC(f_grid_border_ac, in2, 2, NULL, 1);
    GC(f_grid_reflect, in2, 2, NULL, 1);
    GC(f_grid_reflect_ac, in2, 2, NULL, 1);
    GC(f_grid_nearest, in2, 2, NULL, 1);
    tn_tensor *x3 = rnd(TN_SHAPE(1, 2, 3, 4, 3)), *g3 = leaf(tn_detach(tn_sub_scalar(tn_mul_scalar(tn_rand(TN_SHAPE(1, 2, 2, 3, 3), TN_F64), 2.2), 1.1)));
    tn_tensor *in3[2] = {x3, g3};
    GC(f_grid_zeros, in3, 2, NULL, 1);
    GC(f_grid_reflect_ac, in3, 2, NULL, 1);
    CHECK_ERR(tn_grid_sample(x3, g3, .mode = TN_GRID_BICUBIC), "bicubic interpolation only supports 4D input");
    CHECK_ERR(tn_grid_sample(x, tn_zeros(TN_SHAPE(2, 3, 2, 3), TN_F64)), "grid");
    GC(f_grid_bicubic, in2, 2, NULL, 1);
    GC(f_grid_bicubic_border_ac, in2, 2, NULL, 1);
    GC(f_grid_bicubic_reflect, in2, 2, NULL, 1);
    {   /* bicubic at the pixel centres (align_corners, identity grid) is the input itself, and
           far outside with border padding the edge value (the weights sum to 1) */
        const double *a = D(tn_grid_sample(x, idg, .mode = TN_GRID_BICUBIC, .align_corners = true)), *b = D(x);
        bool ok = a && b;
        for (int i = 0; ok && i < 120; i++) ok &= fabs(a[i] - b[i]) < 1e-12;
        CHECK(ok);
        const double *bb = D(tn_grid_sample(x, gfar, .mode = TN_GRID_BICUBIC, .padding_mode = TN_GRID_BORDER));
        CHECK(bb && fabs(bb[0] - xv[19]) < 1e-12);
    }
    tn_tensor *t2 = rnd(TN_SHAPE(2, 2, 3)), *t3 = rnd(TN_SHAPE(2, 3, 4));
    GC(f_affine2d, &t2, 1, NULL, 2);
    GC(f_affine3d, &t3, 1, NULL, 2);
    CHECK_ERR(tn_affine_grid(t2, TN_SHAPE(2, 3, 4, 5, 6)), "affine_grid");

    tn_tensor *im = rnd_strided(TN_SHAPE(2, 2, 3, 4)), *vol = rnd(TN_SHAPE(1, 2, 2, 3, 3));
    GC(f_bicubic, &im, 1, NULL, 2);
    GC(f_bicubic_ac, &im, 1, NULL, 2);
    GC(f_area, &im, 1, NULL, 2);
    GC(f_trilinear, &vol, 1, NULL, 2);
    GC(f_nearest_exact3d, &vol, 1, NULL, 2);
    {   /* bicubic align_corners to the same size is the identity; trilinear too */
        const double *a = D(tn_interpolate(im, .size = TN_INTS(3, 4), .mode = "bicubic", .align_corners = true)), *b = D(im);
        const double *c = D(tn_interpolate(vol, .size = TN_INTS(2, 3, 3), .mode = "trilinear")), *d = D(vol);
        bool ok = a && b && c && d;
        for (int i = 0; ok && i < 48; i++) ok &= fabs(a[i] - b[i]) < 1e-12;
        for (int i = 0; ok && i < 36; i++) ok &= fabs(c[i] - d[i]) < 1e-12;
        CHECK(ok);
    }
    {   /* area to half size: 2 x 2 means */
        const double v[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        const double *a = D(tn_interpolate(tn_from_data(v, TN_SHAPE(1, 1, 4, 4), TN_F64), .size = TN_INTS(2, 2), .mode = "area"));
        CHECK(a && a[0] == 3.5 && a[1] == 5.5 && a[2] == 11.5 && a[3] == 13.5);
    }
    CHECK_ERR(tn_interpolate(vol, .size = TN_INTS(3, 3), .mode = "bicubic"), "bicubic");
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(3, 3), .mode = "trilinear"), "trilinear");
    tn_scope_end();
}

/* ---- losses ---- */
static tn_tensor *g_t, *g_t2;
FN(f_soft_margin, tn_soft_margin_loss(in[0], g_t))
FN(f_ml_soft_margin, tn_multilabel_soft_margin_loss(in[0], g_t2, .weight = in[1]))
FN(f_ml_margin, tn_multilabel_margin_loss(in[0], g_t, .reduction = TN_REDUCTION_NONE))
FN(f_hinge, tn_hinge_embedding_loss(in[0], g_t, .margin = 0.5))
FN(f_multi_margin, tn_multi_margin_loss(in[0], g_t, .p = 2, .margin = 0.7, .weight = in[1]))
FN(f_triplet, tn_triplet_margin_loss(in[0], in[1], in[2], .swap = true, .p = 1.5))
FN(f_gauss, tn_gaussian_nll_loss(in[0], g_t, in[1], .full = true))
FN(f_poisson, tn_poisson_nll_loss(in[0], g_t, .reduction = TN_REDUCTION_SUM))
FN(f_poisson_full, tn_poisson_nll_loss(in[0], g_t, .log_input = false, .full = true))
FN(f_pairwise, tn_pairwise_distance(in[0], in[1], .p = 3.0, .keepdim = true))
static tn_tensor *cosine_distance(tn_tensor *a, tn_tensor *b, void *user) {
    (void)user;
    return tn_rsub_scalar(tn_cosine_similarity(a, b), 1.0);
}
FN(f_triplet_dist, tn_triplet_margin_with_distance_loss(in[0], in[1], in[2], cosine_distance, NULL, .margin = 0.3))
/* through log_softmax: PyTorch's gradient, exp(lp) - posterior, is the derivative for
   normalised log_probs only (as PyTorch's, whose gradcheck goes through log_softmax too) */
FN(f_ctc, tn_ctc_loss(tn_log_softmax(in[0], 2), g_t, g_t2, (tn_tensor *)user, .reduction = TN_REDUCTION_SUM))
FN(f_ctc_mean, tn_ctc_loss(tn_log_softmax(in[0], 2), g_t, g_t2, (tn_tensor *)user))

TEST(test_losses_more) {
    tn_scope_begin();
    tn_tensor *x = rnd(TN_SHAPE(4, 5)), *w5 = leaf(tn_rand(TN_SHAPE(5), TN_F64));
    g_t = tn_sub_scalar(tn_mul_scalar(tn_to_dtype(tn_randint(0, 2, TN_SHAPE(4, 5), TN_I64, NULL), TN_F64), 2), 1);
    GC(f_soft_margin, &x, 1, NULL, 2);
    GC(f_hinge, &x, 1, NULL, 2);
    g_t2 = tn_to_dtype(tn_randint(0, 2, TN_SHAPE(4, 5), TN_I64, NULL), TN_F64);
    tn_tensor *xw[2] = {x, w5};
    GC(f_ml_soft_margin, xw, 2, NULL, 2);
    {   /* soft margin by hand: mean log(1 + exp(-y x)) */
        const double *xv = D(x), *tv = D(g_t), *r = D(tn_soft_margin_loss(x, g_t));
        double acc = 0;
        for (int i = 0; i < 20; i++) acc += log1p(exp(-tv[i] * xv[i]));
        CHECK(r && fabs(r[0] - acc / 20) < 1e-12);
    }
    const int64_t mlt[12] = {3, 0, -1, 1, 0, 1, 2, 3, -1, 2, 1, 0};
    g_t = tn_from_data(mlt, TN_SHAPE(3, 4), TN_I64);
    tn_tensor *x34 = rnd(TN_SHAPE(3, 4));
    GC(f_ml_margin, &x34, 1, NULL, 2);
    {   /* row 0: targets {3, 0}, non-targets {1, 2} */
        const double *xv = D(x34), *r = D(tn_multilabel_margin_loss(x34, g_t, .reduction = TN_REDUCTION_NONE));
        double acc = 0;
        const int tg[2] = {3, 0}, nt[2] = {1, 2};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) acc += fmax(0, 1 - (xv[tg[a]] - xv[nt[b]]));
        CHECK(r && fabs(r[0] - acc / 4) < 1e-12);
    }
    g_t = tn_randint(0, 5, TN_SHAPE(4), TN_I64, NULL);
    GC(f_multi_margin, xw, 2, NULL, 2);
    CHECK_ERR(tn_multi_margin_loss(x, g_t, .p = 3), "p == 1 and p == 2");
    tn_tensor *a = rnd(TN_SHAPE(4, 5)), *p = rnd(TN_SHAPE(4, 5)), *n = rnd_strided(TN_SHAPE(4, 5));
    tn_tensor *apn[3] = {a, p, n};
    GC(f_triplet, apn, 3, NULL, 2);
    GC(f_triplet_dist, apn, 3, NULL, 2);
    tn_tensor *ab[2] = {a, p};
    GC(f_pairwise, ab, 2, NULL, 2);
    CHECK_ERR(tn_triplet_margin_loss(a, p, tn_zeros(TN_SHAPE(4, 6), TN_F64)), "triplet_margin_loss");
    g_t = tn_randn(TN_SHAPE(4, 5), TN_F64);
    tn_tensor *var = leaf(tn_add_scalar(tn_rand(TN_SHAPE(4, 1), TN_F64), 0.2));
    tn_tensor *xv2[2] = {x, var};
    GC(f_gauss, xv2, 2, NULL, 2);
    CHECK_ERR(tn_gaussian_nll_loss(x, g_t, tn_neg(tn_ones(TN_SHAPE(4, 5), TN_F64))), "var has negative entry");
    g_t = tn_to_dtype(tn_randint(0, 4, TN_SHAPE(4, 5), TN_I64, NULL), TN_F64);
    GC(f_poisson, &x, 1, NULL, 2);
    tn_tensor *pos = leaf(tn_add_scalar(tn_rand(TN_SHAPE(4, 5), TN_F64), 0.3));
    GC(f_poisson_full, &pos, 1, NULL, 2);
    {   /* poisson with log_input: mean exp(x) - t x */
        const double *xv = D(x), *tv = D(g_t), *r = D(tn_poisson_nll_loss(x, g_t));
        double acc = 0;
        for (int i = 0; i < 20; i++) acc += exp(xv[i]) - tv[i] * xv[i];
        CHECK(r && fabs(r[0] - acc / 20) < 1e-12);
    }
    tn_scope_end();
}

TEST(test_ctc) {
    tn_scope_begin();
    /* T = 1, one label: the loss is -log p(label) at that step; all-blank path for L = 0 */
    const double lp1[3] = {log(0.2), log(0.5), log(0.3)};
    tn_tensor *lp = tn_from_data(lp1, TN_SHAPE(1, 1, 3), TN_F64);
    const int64_t one = 1;
    tn_tensor *tg = tn_from_data((const int64_t[]){2}, TN_SHAPE(1, 1), TN_I64), *il = tn_from_data(&one, TN_SHAPE(1), TN_I64);
    const double *r = D(tn_ctc_loss(lp, tg, il, il, .reduction = TN_REDUCTION_NONE));
    CHECK(r && fabs(r[0] + log(0.3)) < 1e-12);
    r = D(tn_ctc_loss(lp, tg, il, tn_zeros(TN_SHAPE(1), TN_I64), .reduction = TN_REDUCTION_NONE));
    CHECK(r && fabs(r[0] + log(0.2)) < 1e-12);
    /* T = 2, target "1": paths (1, 1), (0, 1), (1, 0) */
    const double p2[6] = {0.5, 0.3, 0.2, 0.1, 0.6, 0.3};
    double l2[6];
    for (int i = 0; i < 6; i++) l2[i] = log(p2[i]);
    tn_tensor *lpt = tn_from_data(l2, TN_SHAPE(2, 1, 3), TN_F64);
    const int64_t two = 2;
    r = D(tn_ctc_loss(lpt, tn_from_data((const int64_t[]){1}, TN_SHAPE(1), TN_I64), tn_from_data(&two, TN_SHAPE(1), TN_I64), il));
    CHECK(r && fabs(r[0] + log(0.3 * 0.6 + 0.5 * 0.6 + 0.3 * 0.1)) < 1e-12);   /* mean over 1 sample / length 1 */
    /* a repeated label needs a blank between: "1 1" in T = 2 is impossible */
    r = D(tn_ctc_loss(lpt, tn_from_data((const int64_t[]){1, 1}, TN_SHAPE(1, 2), TN_I64), tn_from_data(&two, TN_SHAPE(1), TN_I64),
                      tn_from_data(&two, TN_SHAPE(1), TN_I64), .reduction = TN_REDUCTION_SUM));
    CHECK(r && r[0] == INFINITY);
    r = D(tn_ctc_loss(lpt, tn_from_data((const int64_t[]){1, 1}, TN_SHAPE(1, 2), TN_I64), tn_from_data(&two, TN_SHAPE(1), TN_I64),
                      tn_from_data(&two, TN_SHAPE(1), TN_I64), .reduction = TN_REDUCTION_SUM, .zero_infinity = true));
    CHECK(r && r[0] == 0);
    /* gradcheck: [T, N, C] log_softmax inputs, padded targets, several lengths */
    tn_tensor *logits = rnd(TN_SHAPE(6, 3, 4));
    const int64_t tv[9] = {1, 2, 2, 3, 1, 0, 2, 0, 0}, lens_in[3] = {6, 5, 3}, lens_t[3] = {3, 2, 1};
    g_t = tn_from_data(tv, TN_SHAPE(3, 3), TN_I64);
    g_t2 = tn_from_data(lens_in, TN_SHAPE(3), TN_I64);
    tn_tensor *tl = tn_from_data(lens_t, TN_SHAPE(3), TN_I64);
    tn_tensor *lps = tn_log_softmax(logits, 2);
    GC(f_ctc, &logits, 1, tl, 1);
    GC(f_ctc_mean, &logits, 1, tl, 1);
    /* the gradient of a log_softmax'd input: PyTorch's formula, exact through log_softmax */
    tn_tensor *ls_in = rnd(TN_SHAPE(6, 3, 4));
    tn_tensor *loss = tn_ctc_loss(tn_log_softmax(ls_in, 2), g_t, g_t2, tl);
    CHECK(loss && tn_backward(loss) == 0 && tn_grad(ls_in));
    CHECK_ERR(tn_ctc_loss(lps, g_t, tn_from_data((const int64_t[]){7, 1, 1}, TN_SHAPE(3), TN_I64), tl), "input_lengths");
    CHECK_ERR(tn_ctc_loss(lps, tn_narrow(g_t, 1, 0, 2), g_t2, tl), "at least 3");
    CHECK_ERR(tn_ctc_loss(lps, g_t, g_t2, tl, .blank = 4), "blank must be in label range");
    CHECK_ERR(tn_ctc_loss(lps, tn_to_dtype(g_t, TN_F64), g_t2, tl), "targets must be int64 or int32");
    tn_scope_end();
}

/* ---- the C modules ---- */
static int repr_is(tn_module *m, const char *want, int line) {
    char *r = m ? tn_module_repr(m) : NULL;
    const int ok = r && !strcmp(r, want);
    if (ok) tn_test_passed++;
    else fail_at(line, "repr %s, expected %s (%s)", r ? r : "(null)", want, tn_last_error());
    tn_string_free(r);
    return ok;
}
#define REPR(m, want) repr_is(m, want, __LINE__)
/* m's forward equals want (both computed now) */
static void same_values(tn_tensor *a, tn_tensor *b, double tol, int line) {
    const double *x = D(a), *y = D(b);
    bool ok = x && y && tn_ndim(a) == tn_ndim(b) && tn_numel(a) == tn_numel(b);
    for (int64_t i = 0; ok && i < tn_numel(a); i++) ok = fabs(x[i] - y[i]) <= tol;
    if (ok) tn_test_passed++;
    else fail_at(line, "values differ (%s)", tn_last_error());
}
#define SAME(a, b) same_values(a, b, 1e-12, __LINE__)

TEST(test_modules_more) {
    tn_scope_begin();
    tn_module *m = tn_nn_conv3d(2, 4, 3, .stride = 2, .padding = 1, .bias = false);
    REPR(m, "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), bias=False)");
    tn_tensor *x = tn_randn(TN_SHAPE(2, 2, 4, 5, 4), TN_F32);
    CHECK(m && same_shape(tn_module_get(m, "weight"), TN_SHAPE(4, 2, 3, 3, 3)));
    {   /* PyTorch's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 2 * 27 */
        const double *w = D(tn_module_get(m, "weight"));
        bool in = w != NULL;
        for (int i = 0; w && i < 216; i++) in &= fabs(w[i]) <= 1 / sqrt(54.0);
        CHECK(in);
    }
    SAME(tn_module_forward(m, x), tn_conv3d(x, tn_module_get(m, "weight"), NULL, .stride = 2, .padding = 1));
    tn_module_free(m);
    m = tn_nn_conv3d(2, 3, 2, .padding_dhw = TN_INTS(1, 0, 1), .padding_mode = TN_PADDING_CIRCULAR);
    REPR(m, "Conv3d(2, 3, kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=(1, 0, 1), padding_mode=circular)");
    const int64_t pads[6] = {1, 1, 0, 0, 1, 1};
    SAME(tn_module_forward(m, x), tn_conv3d(tn_pad(x, pads, 6, .mode = TN_PADDING_CIRCULAR), tn_module_get(m, "weight"), tn_module_get(m, "bias")));
    tn_module_free(m);
    m = tn_nn_conv2d(2, 3, 3, .padding = TN_PADDING_SAME, .padding_mode = TN_PADDING_REFLECT);
    REPR(m, "Conv2d(2, 3, kernel_size=(3, 3), stride=(1, 1), padding=same, padding_mode=reflect)");
    tn_tensor *x2 = tn_randn(TN_SHAPE(2, 2, 5, 6), TN_F32);
    const int64_t p2[4] = {1, 1, 1, 1};
    SAME(tn_module_forward(m, x2), tn_conv2d(tn_pad(x2, p2, 4, .mode = TN_PADDING_REFLECT), tn_module_get(m, "weight"), tn_module_get(m, "bias")));
    tn_module_free(m);
    m = tn_nn_conv_transpose3d(4, 2, 3, .stride = 2, .output_padding = 1, .groups = 2);
    REPR(m, "ConvTranspose3d(4, 2, kernel_size=(3, 3, 3), stride=(2, 2, 2), output_padding=(1, 1, 1), groups=2)");
    CHECK(m && same_shape(tn_module_forward(m, tn_randn(TN_SHAPE(1, 4, 2, 3, 2), TN_F32)), TN_SHAPE(1, 2, 6, 8, 6)));
    tn_module_free(m);
    CHECK_ERR(tn_nn_conv_transpose3d(4, 2, 3, .padding_mode = TN_PADDING_REFLECT), "Only \"zeros\" padding mode");
    CHECK_ERR(tn_nn_conv3d(3, 2, 3, .groups = 2), "divisible by groups");
    CHECK_ERR(tn_nn_conv3d(2, 2, 3, .stride = 2, .padding = TN_PADDING_SAME), "strided");
    CHECK_ERR(tn_nn_conv3d_str(2, 2, 3, "stride=(1, 2)"), "tuple of 3 ints");
    m = tn_nn_conv3d_str(2, 4, 2, "stride=(2, 1, 1), bias=False, padding_mode='replicate'");
    REPR(m, "Conv3d(2, 4, kernel_size=(2, 2, 2), stride=(2, 1, 1), bias=False, padding_mode=replicate)");
    tn_module_free(m);

    m = tn_nn_max_pool3d(2);
    REPR(m, "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
    SAME(tn_module_forward(m, x), tn_max_pool3d(x, 2));
    tn_module_free(m);
    m = tn_nn_avg_pool3d(3, .stride_dhw = TN_INTS(2, 1, 1), .padding = 1, .count_include_pad = false);
    REPR(m, "AvgPool3d(kernel_size=3, stride=(2, 1, 1), padding=1)");
    SAME(tn_module_forward(m, x), tn_avg_pool3d(x, 3, .stride_dhw = TN_INTS(2, 1, 1), .padding = 1, .count_include_pad = false));
    tn_module_free(m);
    CHECK_ERR(tn_nn_max_pool3d(2, .count_include_pad = false), "count_include_pad");
    m = tn_nn_adaptive_avg_pool3d(2, 3, 2);
    REPR(m, "AdaptiveAvgPool3d(output_size=(2, 3, 2))");
    SAME(tn_module_forward(m, x), tn_adaptive_avg_pool3d(x, 2, 3, 2));
    tn_module_free(m);
    m = tn_nn_adaptive_max_pool3d(1, 1, 1);
    REPR(m, "AdaptiveMaxPool3d(output_size=1)");
    SAME(tn_module_forward(m, x), tn_adaptive_max_pool3d(x, 1, 1, 1, NULL));
    tn_module_free(m);
    m = tn_nn_lp_pool2d(2.0, 2, .stride = 1);
    REPR(m, "LPPool2d(norm_type=2, kernel_size=2, stride=1, ceil_mode=False)");
    SAME(tn_module_forward(m, x2), tn_lp_pool2d(x2, 2.0, 2, .stride = 1));
    tn_module_free(m);
    m = tn_nn_lp_pool1d(3.0, 2);
    REPR(m, "LPPool1d(norm_type=3, kernel_size=2, stride=None, ceil_mode=False)");
    tn_module_free(m);

    m = tn_nn_batch_norm3d(2, .momentum = 0.2);
    REPR(m, "BatchNorm3d(2, eps=1e-05, momentum=0.2, affine=True, track_running_stats=True)");
    CHECK(m && tn_module_get(m, "running_mean") && tn_module_get(m, "num_batches_tracked"));
    tn_tensor *y = m ? tn_module_forward(m, x) : NULL;
    SAME(y, tn_batch_norm(x, NULL, NULL, .training = true));
    {   /* running_mean moved 0.2 of the way to the batch mean */
        const double *rm = D(tn_module_get(m, "running_mean"));
        const double *bm = D(tn_mean_dims(tn_narrow(x, 1, 0, 1), TN_SHAPE(0, 1, 2, 3, 4)));
        CHECK(rm && bm && fabs(rm[0] - 0.2 * bm[0]) < 1e-6);
    }
    CHECK_ERR(tn_module_forward(m, x2), "expected 5D input");
    tn_module_free(m);
    m = tn_nn_dropout3d();
    REPR(m, "Dropout3d(p=0.5, inplace=False)");
    tn_module_eval(m);
    SAME(tn_module_forward(m, x), x);
    tn_module_free(m);
    CHECK_ERR(tn_nn_dropout3d(.p = 1.5), "tn_nn_dropout3d: dropout probability");

    tn_tensor *a = tn_randn(TN_SHAPE(3, 4, 6), TN_F64);
    m = tn_nn_activation("Hardshrink", .lambd = 0.25);
    REPR(m, "Hardshrink(0.25)");
    SAME(tn_module_forward(m, a), tn_hardshrink(a, .lambd = 0.25));
    tn_module_free(m);
    m = tn_nn_activation_str("Softshrink", "lambd=0.3");
    SAME(tn_module_forward(m, a), tn_softshrink(a, .lambd = 0.3));
    tn_module_free(m);
    m = tn_nn_activation("GLU");
    REPR(m, "GLU(dim=-1)");
    SAME(tn_module_forward(m, a), tn_glu(a));
    tn_module_free(m);
    m = tn_nn_activation("Softmin", .dim = 1);
    REPR(m, "Softmin(dim=1)");
    SAME(tn_module_forward(m, a), tn_softmin(a, .dim = 1));
    tn_module_free(m);
    m = tn_nn_activation("Softmax2d");
    REPR(m, "Softmax2d()");
    SAME(tn_module_forward(m, a), tn_softmax(a, 0));
    CHECK_ERR(tn_module_forward(m, tn_narrow(a, 0, 0, 1)) && tn_module_forward(m, tn_reshape(a, TN_SHAPE(72))), "Softmax2d: expected input to be 3D or 4D, got 1D");
    tn_module_free(m);
    const char *plain[4] = {"LogSigmoid", "Softsign", "Tanhshrink", "Softmax2d"};
    for (int i = 0; i < 3; i++) {
        m = tn_nn_activation(plain[i]);
        tn_tensor *want = i == 0 ? tn_logsigmoid(a) : i == 1 ? tn_softsign(a) : tn_tanhshrink(a);
        SAME(m ? tn_module_forward(m, a) : NULL, want);
        tn_module_free(m);
    }
    m = tn_nn_activation("RReLU");
    REPR(m, "RReLU(lower=0.125, upper=0.3333333333333333)");
    tn_module_eval(m);
    SAME(tn_module_forward(m, a), tn_rrelu(a));
    tn_module_free(m);
    CHECK_ERR(tn_nn_activation("RReLU", .lower = 0.5, .upper = 0.1), "lower bound");
    CHECK_ERR(tn_nn_activation("Hardshrink", .dim = 1), "dim is not an option of Hardshrink");
    CHECK_ERR(tn_nn_activation("Softplus", .lambd = 1), "lambd is not an option of Softplus");
    m = tn_nn_threshold(0.1, 20);
    REPR(m, "Threshold(threshold=0.1, value=20.0)");
    SAME(tn_module_forward(m, a), tn_threshold(a, 0.1, 20));
    tn_module_free(m);
    m = tn_nn_prelu(.num_parameters = 4, .init = 0.1);
    REPR(m, "PReLU(num_parameters=4)");
    CHECK(m && same_shape(tn_module_get(m, "weight"), TN_SHAPE(4)) && D(tn_module_get(m, "weight"))[3] == (double)0.1f);
    tn_tensor *af = tn_to_dtype(a, TN_F32);
    SAME(tn_module_forward(m, af), tn_prelu(af, tn_module_get(m, "weight")));
    tn_module_free(m);

    const int64_t pp[4] = {1, 0, 2, 1};
    m = tn_nn_pad("ReflectionPad2d", pp, 4);
    REPR(m, "ReflectionPad2d((1, 0, 2, 1))");
    SAME(tn_module_forward(m, a), tn_pad(a, pp, 4, .mode = TN_PADDING_REFLECT));
    tn_module_free(m);
    m = tn_nn_pad("ConstantPad1d", (const int64_t[]){2}, 1, .value = 3.5);
    REPR(m, "ConstantPad1d(padding=(2, 2), value=3.5)");
    SAME(tn_module_forward(m, a), tn_pad(a, ((const int64_t[]){2, 2}), 2, .value = 3.5));
    tn_module_free(m);
    CHECK_ERR(tn_nn_pad("ZeroPad2d", pp, 4, .value = 7), "tn_nn_pad: value is not an option of ZeroPad2d (only ConstantPad's)");   /* nn.ZeroPad2d has no value */
    CHECK_ERR(tn_nn_pad("ReflectionPad2d", pp, 4, .value = 1), "tn_nn_pad: value is not an option of ReflectionPad2d");
    m = tn_nn_pad("ZeroPad2d", pp, 4);
    REPR(m, "ZeroPad2d((1, 0, 2, 1))");
    SAME(tn_module_forward(m, a), tn_pad(a, pp, 4));
    tn_module_free(m);
    m = tn_nn_pad("CircularPad3d", (const int64_t[]){1}, 1);
    SAME(tn_module_forward(m, x), tn_pad(x, ((const int64_t[]){1, 1, 1, 1, 1, 1}), 6, .mode = TN_PADDING_CIRCULAR));
    tn_module_free(m);
    CHECK_ERR(tn_nn_pad("ReflectionPad2d", pp, 3), "takes 1 or 4 padding sizes");
    CHECK_ERR(tn_nn_pad("MirrorPad2d", pp, 4), "unknown padding layer");

    m = tn_nn_local_response_norm(3, .alpha = 0.1);
    REPR(m, "LocalResponseNorm(3, alpha=0.1, beta=0.75, k=1.0)");
    SAME(tn_module_forward(m, a), tn_local_response_norm(a, 3, .alpha = 0.1));
    tn_module_free(m);
    m = tn_nn_channel_shuffle(2);
    REPR(m, "ChannelShuffle(groups=2)");
    SAME(tn_module_forward(m, a), tn_channel_shuffle(a, 2));
    tn_module_free(m);
    m = tn_nn_pixel_shuffle(2);
    REPR(m, "PixelShuffle(upscale_factor=2)");
    tn_tensor *ps = tn_randn(TN_SHAPE(1, 8, 2, 3), TN_F64);
    SAME(tn_module_forward(m, ps), tn_pixel_shuffle(ps, 2));
    tn_module_free(m);
    m = tn_nn_pixel_unshuffle(2);
    REPR(m, "PixelUnshuffle(downscale_factor=2)");
    tn_module_free(m);
    CHECK_ERR(tn_nn_channel_shuffle(0), "must be positive");

    tn_tensor *idx = NULL, *pooled = tn_max_pool2d_with_indices(x2, &idx, 2);
    m = tn_nn_max_unpool(2, 2);
    REPR(m, "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))");
    SAME(tn_nn_max_unpool_forward(m, pooled, idx), tn_max_unpool(pooled, idx, (const int64_t[]){4, 6}, 2));
    CHECK_ERR(tn_module_forward(m, pooled), "needs the indices");
    tn_module_free(m);
    CHECK_ERR(tn_nn_max_unpool(4, 2), "n must be 1, 2 or 3");

    m = tn_nn_embedding_bag(10, 3, .mode = TN_BAG_MAX, .padding_idx = -1);
    REPR(m, "EmbeddingBag(10, 3, mode=max, padding_idx=9)");
    {
        const double *w = D(tn_module_get(m, "weight"));
        CHECK(w && w[27] == 0 && w[28] == 0 && w[29] == 0);   /* padding_idx's row */
    }
    tn_tensor *bag_in = tn_from_data((const int64_t[]){1, 2, 9, 4, 5, 9}, TN_SHAPE(2, 3), TN_I64);
    SAME(tn_module_forward(m, bag_in), tn_embedding_bag(bag_in, tn_module_get(m, "weight"), .mode = TN_BAG_MAX, .padding_idx = 9));
    tn_tensor *flat_in = tn_reshape(bag_in, TN_SHAPE(6)), *offs = tn_from_data((const int64_t[]){0, 4}, TN_SHAPE(2), TN_I64);
    SAME(tn_nn_embedding_bag_forward(m, flat_in, offs, NULL), tn_embedding_bag(flat_in, tn_module_get(m, "weight"), .offsets = offs, .mode = TN_BAG_MAX, .padding_idx = 9));
    tn_module_free(m);
    m = tn_nn_embedding_bag_str(5, 2, "mode='sum'");
    REPR(m, "EmbeddingBag(5, 2, mode=sum)");
    CHECK_ERR(tn_nn_embedding_bag_forward(m, flat_in, offs, NULL), "out of");
    tn_module_free(m);
    CHECK_ERR(tn_nn_embedding_bag(5, 2, .padding_idx = 5), "padding_idx must be within num_embeddings");
    tn_scope_end();
}

TEST(test_lazy_modules_c) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(2, 5), TN_F32);
    tn_module *m = tn_nn_lazy_linear(3);
    REPR(m, "LazyLinear(in_features=0, out_features=3, bias=True)");
    CHECK(m && tn_numel(tn_module_get(m, "weight")) == 0);
    tn_manual_seed(11);
    tn_tensor *y = m ? tn_module_forward(m, x) : NULL;
    REPR(m, "Linear(in_features=5, out_features=3, bias=True)");
    tn_manual_seed(11);
    tn_module *e = tn_nn_linear(5, 3);
    SAME(tn_module_get(m, "weight"), tn_module_get(e, "weight"));   /* the eager draws */
    SAME(tn_module_get(m, "bias"), tn_module_get(e, "bias"));
    SAME(y, tn_module_forward(e, x));
    tn_module_free(e);
    CHECK_ERR(tn_module_forward(m, tn_randn(TN_SHAPE(2, 4), TN_F32)), "Linear");   /* now it is a Linear(5, 3) */
    tn_module_free(m);

    tn_tensor *im = tn_randn(TN_SHAPE(2, 4, 5, 6), TN_F32);
    m = tn_nn_lazy_conv2d(6, 3, .groups = 2, .padding = 1);
    REPR(m, "LazyConv2d(0, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)");
    tn_manual_seed(12);
    y = tn_module_forward(m, im);
    tn_manual_seed(12);
    e = tn_nn_conv2d(4, 6, 3, .groups = 2, .padding = 1);
    REPR(m, "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)");
    SAME(y, tn_module_forward(e, im));
    tn_module_free(e);
    tn_module_free(m);
    CHECK_ERR(tn_nn_lazy_conv2d(6, 3, .groups = 4), "tn_nn_lazy_conv2d: out_channels (6) must be positive and divisible by groups (4)");
    m = tn_nn_lazy_conv2d(4, 3, .groups = 4);
    CHECK_ERR(m ? tn_module_forward(m, tn_randn(TN_SHAPE(1, 6, 5, 5), TN_F32)) : NULL, "divisible by groups");
    tn_module_free(m);
    m = tn_nn_lazy_conv1d(2, 2);
    CHECK(m && same_shape(tn_module_forward(m, tn_randn(TN_SHAPE(3, 7), TN_F32)), TN_SHAPE(2, 6)));   /* unbatched: channels = dim 0 */
    REPR(m, "Conv1d(3, 2, kernel_size=(2,), stride=(1,))");
    tn_module_free(m);
    m = tn_nn_lazy_conv3d(2, 2, .bias = false);
    CHECK(m && same_shape(tn_module_forward(m, tn_randn(TN_SHAPE(1, 3, 3, 3, 3), TN_F32)), TN_SHAPE(1, 2, 2, 2, 2)));
    CHECK(m && same_shape(tn_module_get(m, "weight"), TN_SHAPE(2, 3, 2, 2, 2)) && !tn_module_get(m, "bias"));
    tn_module_free(m);
    m = tn_nn_lazy_conv_transpose2d(3, 2, .stride = 2);
    CHECK(m && same_shape(tn_module_forward(m, im), TN_SHAPE(2, 3, 10, 12)) && same_shape(tn_module_get(m, "weight"), TN_SHAPE(4, 3, 2, 2)));
    tn_module_free(m);
    m = tn_nn_lazy_conv_transpose3d(3, 2);
    CHECK(m && same_shape(tn_module_forward(m, tn_randn(TN_SHAPE(1, 2, 2, 2, 2), TN_F32)), TN_SHAPE(1, 3, 3, 3, 3)));
    tn_module_free(m);

    m = tn_nn_lazy_batch_norm2d(.momentum = 0.5);
    REPR(m, "LazyBatchNorm2d(0, eps=1e-05, momentum=0.5, affine=True, track_running_stats=True)");
    y = m ? tn_module_forward(m, im) : NULL;
    REPR(m, "BatchNorm2d(4, eps=1e-05, momentum=0.5, affine=True, track_running_stats=True)");
    SAME(y, tn_batch_norm(im, NULL, NULL, .training = true));
    CHECK(m && same_shape(tn_module_get(m, "running_var"), TN_SHAPE(4)) && tn_item(tn_module_get(m, "num_batches_tracked")) == 1);
    tn_module_free(m);
    m = tn_nn_lazy_batch_norm1d(.affine = false);
    CHECK(m && same_shape(tn_module_forward(m, x), TN_SHAPE(2, 5)) && !tn_module_get(m, "weight") && same_shape(tn_module_get(m, "running_mean"), TN_SHAPE(5)));
    tn_module_free(m);
    m = tn_nn_lazy_batch_norm3d();
    CHECK(m && same_shape(tn_module_forward(m, tn_randn(TN_SHAPE(2, 3, 2, 2, 2), TN_F32)), TN_SHAPE(2, 3, 2, 2, 2)));
    tn_module_free(m);
    tn_scope_end();
}

int main(void) {
    tn_manual_seed(0);
    RUN(test_pad_modes_values);
    RUN(test_pad_modes_grad);
    RUN(test_activations);
    RUN(test_conv_pool_3d);
    RUN(test_unpool_fractional);
    RUN(test_embedding_bag);
    RUN(test_sampling);
    RUN(test_losses_more);
    RUN(test_ctc);
    RUN(test_modules_more);
    RUN(test_lazy_modules_c);
    return tn_test_report();
}
