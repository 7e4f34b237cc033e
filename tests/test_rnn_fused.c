/* test_rnn_fused.c — the fused recurrences of the RNN, LSTM and GRU layers (issue 25:
 * src/modules/rnn.c's tn__lstm_seq and tn__rnnseq) against the functional cells stepped by
 * hand (tn_lstm_cell, tn_gru_cell, tn_rnn_tanh_cell, tn_rnn_relu_cell: library ops, the
 * unfused path): outputs, final states and the gradients of the input, the initial states
 * and every parameter, in float64 and float32 (the float32 loops use the vectorisable
 * exp/tanh), forward and reverse directions, two layers; tn_gradgradcheck through each layer
 * (first order; see the note in test_gradgradcheck); the fast exp/tanh themselves.
 * PyTorch is the oracle for the layers in bindings/python/tests/test_rnn.py.
 * Build: make build/test_rnn_fused */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <math.h>
#include <string.h>

#define SH(...) TN_SHAPE(__VA_ARGS__)
enum { K_TANH, K_RELU, K_LSTM, K_GRU };

static tn_module *make(int kind, int64_t in, int64_t hid, bool bidir, tn_dtype dt) {
    tn_module *m = kind == K_LSTM ? tn_nn_lstm(in, hid, .num_layers = 2, .bidirectional = bidir)
                 : kind == K_GRU  ? tn_nn_gru(in, hid, .num_layers = 2, .bidirectional = bidir)
                                  : tn_nn_rnn(in, hid, .num_layers = 2, .bidirectional = bidir,
                                              .nonlinearity = kind == K_RELU ? TN_NONLINEARITY_RELU : TN_NONLINEARITY_TANH);
    if (m && dt == TN_F64) tn_module_to_dtype(m, TN_F64);
    return m;
}
static tn_tensor *P(tn_module *m, const char *w, int l, int d) {
    char name[64];
    snprintf(name, sizeof name, "%s_l%d%s", w, l, d ? "_reverse" : "");
    return tn_module_get(m, name);
}
/* the layer stepped by hand through the functional cells: output [L, N, D*H], h_n (and c_n) */
static tn_tensor *by_cells(int kind, tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor *c0, int D, tn_tensor **hn, tn_tensor **cn) {
    const int64_t L = tn_shape(x)[0];
    tn_tensor *in = x, *hs[16], *cs[16], *steps[64];
    for (int l = 0; l < 2; l++) {
        tn_tensor *dirs[2];
        for (int d = 0; d < D; d++) {
            tn_tensor *h = tn_select(h0, 0, l * D + d), *c = c0 ? tn_select(c0, 0, l * D + d) : NULL;
            for (int64_t s = 0; s < L; s++) {
                const int64_t t = d ? L - 1 - s : s;
                tn_tensor *xt = tn_select(in, 0, t), *wi = P(m, "weight_ih", l, d), *wh = P(m, "weight_hh", l, d), *bi = P(m, "bias_ih", l, d), *bh = P(m, "bias_hh", l, d);
                if (kind == K_LSTM) h = tn_lstm_cell(xt, h, c, wi, wh, bi, bh, &c);
                else if (kind == K_GRU) h = tn_gru_cell(xt, h, wi, wh, bi, bh);
                else if (kind == K_RELU) h = tn_rnn_relu_cell(xt, h, wi, wh, bi, bh);
                else h = tn_rnn_tanh_cell(xt, h, wi, wh, bi, bh);
                steps[t] = h;
            }
            hs[l * D + d] = h;
            cs[l * D + d] = c;
            dirs[d] = tn_stack(steps, (int)L);
        }
        in = D == 2 ? tn_cat(dirs, 2, .dim = 2) : dirs[0];
    }
    *hn = tn_stack(hs, 2 * D);
    if (cn) *cn = kind == K_LSTM ? tn_stack(cs, 2 * D) : NULL;
    return in;
}
static bool close_to(tn_tensor *a, tn_tensor *b, double tol) { return a && b && tn_allclose(a, b, .rtol = tol, .atol = tol); }

static void check_kind(int kind, bool bidir, tn_dtype dt, double tol) {
    tn_scope_begin();
    const int D = bidir ? 2 : 1;
    const int64_t L = 7, N = 5, IN = 3, H = 6;
    tn_module *m = make(kind, IN, H, bidir, dt);
    CHECK(m != NULL);
    tn_tensor *x = tn_randn(SH(L, N, IN), dt), *h0 = tn_randn(SH(2 * D, N, H), dt), *c0 = kind == K_LSTM ? tn_randn(SH(2 * D, N, H), dt) : NULL;
    tn_requires_grad_(x, true); tn_requires_grad_(h0, true);
    if (c0) tn_requires_grad_(c0, true);
    tn_tensor *hn, *cn = NULL, *hr, *cr = NULL;
    tn_tensor *y = kind == K_LSTM ? tn_nn_lstm_forward(m, x, h0, c0, &hn, &cn) : tn_nn_rnn_forward(m, x, h0, &hn);
    tn_tensor *yr = by_cells(kind, m, x, h0, c0, D, &hr, kind == K_LSTM ? &cr : NULL);
    CHECK_MSG(close_to(y, yr, tol), "kind %d bidir %d %s: output", kind, bidir, tn_dtype_name(dt));
    CHECK_MSG(close_to(hn, hr, tol), "kind %d: h_n", kind);
    if (kind == K_LSTM) CHECK_MSG(close_to(cn, cr, tol), "kind %d: c_n", kind);
    /* gradients: a random weighting of every result */
    tn_tensor *gy = tn_randn(tn_shape(y), 3, dt), *gh = tn_randn(tn_shape(hn), 3, dt), *gc = kind == K_LSTM ? tn_randn(tn_shape(cn), 3, dt) : NULL;
    tn_tensor *loss = tn_add(tn_sum(tn_mul(y, gy)), tn_sum(tn_mul(hn, gh))), *lossr = tn_add(tn_sum(tn_mul(yr, gy)), tn_sum(tn_mul(hr, gh)));
    if (gc) { loss = tn_add(loss, tn_sum(tn_mul(cn, gc))); lossr = tn_add(lossr, tn_sum(tn_mul(cr, gc))); }
    tn_tensor *ins[64];
    int n = 0;
    ins[n++] = x; ins[n++] = h0;
    if (c0) ins[n++] = c0;
    tn_dict *ps = tn_module_named_parameters(m);
    for (int64_t i = 0; i < tn_dict_len(ps); i++) ins[n++] = tn_dict_values(ps)[i];
    tn_tensor *ga[64], *gb[64];
    CHECK(tn_autograd_grad(&loss, 1, ins, n, NULL, ga) == 0 && tn_autograd_grad(&lossr, 1, ins, n, NULL, gb) == 0);
    for (int i = 0; i < n; i++) CHECK_MSG(close_to(ga[i], gb[i], tol * 10), "kind %d bidir %d %s: gradient %d", kind, bidir, tn_dtype_name(dt), i);
    tn_dict_free(ps);
    tn_module_free(m);
    tn_scope_end();
}
TEST(test_layers_vs_cells) {
    tn_manual_seed(0);
    for (int kind = 0; kind < 4; kind++)
        for (int bd = 0; bd < 2; bd++) {
            check_kind(kind, bd, TN_F64, 1e-10);
            check_kind(kind, bd, TN_F32, 2e-5);
        }
}

static tn_tensor *layer_fn(tn_tensor *const *in, int n, void *user) {
    (void)n;
    tn_module *m = (tn_module *)user;
    return tn_module_forward(m, in[0]);
}
TEST(test_gradcheck_layers) {
    tn_manual_seed(1);
    for (int kind = 0; kind < 4; kind++) {
        tn_scope_begin();
        tn_module *m = make(kind, 2, 3, kind == K_GRU, TN_F64);
        tn_tensor *x = tn_randn(SH(4, 2, 2), TN_F64);
        tn_requires_grad_(x, true);
        CHECK_MSG(tn_gradcheck(layer_fn, &x, 1, m), "kind %d gradcheck: %s", kind, tn_last_error());
        /* only the input requires grad: the fused backward's create_graph branch runs a
           backward inside the backward, over the input's projection (the outer graph) */
        CHECK_MSG(tn_gradgradcheck(layer_fn, &x, 1, m), "kind %d gradgradcheck: %s", kind, tn_last_error());
        tn_module_free(m);
        tn_scope_end();
    }
}

TEST(test_fast_exp_tanh) {
    double worst_e = 0, worst_t = 0;
    for (double x = -87; x <= 88; x += 0.001) {
        const float f = (float)x;
        const double e = exp((double)f), t = tanh((double)f);
        const double re = fabs((double)tn__expf_fast(f) - e) / e, rt = fabs((double)tn__tanhf_fast(f) - t) / (fabs(t) > 1e-30 ? fabs(t) : 1);
        worst_e = re > worst_e ? re : worst_e;
        worst_t = rt > worst_t ? rt : worst_t;
    }
    CHECK_MSG(worst_e < 4e-7, "expf: relative error %g", worst_e);
    CHECK_MSG(worst_t < 2e-6, "tanhf: relative error %g", worst_t);   /* 1 - 2/(e^2x + 1) cancels just above |x| = 1/16 */
    CHECK(tn__expf_fast(-INFINITY) == 0 && tn__expf_fast(-100) == 0 && isnan(tn__expf_fast(NAN)) && isfinite(tn__expf_fast(1000)));
    CHECK(tn__tanhf_fast(50) == 1 && tn__tanhf_fast(-50) == -1 && tn__tanhf_fast(0) == 0 && tn__tanhf_fast(1e-20f) == 1e-20f);
}

int main(void) {
    tn_memory_stats start = tn_memory_stats_get();
    RUN(test_layers_vs_cells);
    RUN(test_gradcheck_layers);
    RUN(test_fast_exp_tanh);
    tn_memory_stats end = tn_memory_stats_get();
    CHECK_MSG(end.live_tensors == start.live_tensors, "leaked %lld tensors", (long long)(end.live_tensors - start.live_tensors));
    return tn_test_report();
}
