/* test_rnn.c — the recurrent and attention modules of section 12 (RNN, LSTM, GRU, their
 * cells and functional cells, MultiheadAttention, Transformer encoder/decoder layers and
 * stacks).
 *
 *  1. RNN/LSTM/GRU outputs and final states against the cell equations written naively
 *     below (loops over layers, directions, time steps, batch and units), for multi-layer,
 *     bidirectional, batch_first, given or zero initial states, unbatched input, no bias,
 *     LSTM projections; dropout between layers.
 *  2. tn_gradcheck in float64 through every module (parameters included).
 *  3. PyTorch 1.13 as the oracle (/usr/bin/python3): the Python side builds the same
 *     modules, loads our state dict (strict, so the keys must match), runs the same inputs
 *     and prints outputs, gradients and its state-dict keys; skipped cleanly without torch.
 *  4. Initialisation statistics, state-dict keys, repr, deep copies in the stacks, bad
 *     input and bad options (messages name the layer), NULL pass-through, no leaks.
 * Build: gcc -std=c11 -Wall -Wextra -pedantic -O2 -g -I. tests/test_rnn.c -lm -pthread */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, fdopen: PyTorch as the oracle */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* helpers                                                                                 */
/* ------------------------------------------------------------------------------------ */
#define SH(...) TN_SHAPE(__VA_ARGS__)
#define NARGS_(...) ((int)(sizeof((tn_tensor *[]){__VA_ARGS__}) / sizeof(tn_tensor *)))

/* all elements (row-major) as doubles, malloc'ed; *n receives the count */
static double *tdata(tn_tensor *t, int64_t *n) {
    *n = 0;
    if (!t) return (double *)calloc(1, sizeof(double));
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *c = tn_contiguous(tn_to_dtype(tn_detach(t), TN_F64));
    int64_t m = c ? tn_numel(c) : 0;
    double *v = (double *)malloc((size_t)(m + 1) * sizeof(double));
    if (c && v) { memcpy(v, tn_data_ptr(c), (size_t)m * sizeof(double)); *n = m; }
    tn_scope_end();
    tn_no_grad_end();
    return v;
}
static double *pdata(tn_module *m, const char *name) { /* a parameter's values, or NULL if absent */
    int64_t n;
    tn_tensor *t = tn_module_get(m, name);
    return t ? tdata(t, &n) : NULL;
}
static bool close_(double a, double e, double tol) {
    if (a != a || e != e) return a != a && e != e;
    if (isinf(e) || isinf(a)) return a == e;
    return fabs(a - e) <= tol * (1 + fabs(e));
}
static void check_arr_(tn_tensor *t, const double *e, int64_t n, double tol, const char *what, int line) {
    if (!t) { fail_at(line, "%s is NULL (%s)", what, tn_last_error()); return; }
    int64_t m;
    double *v = tdata(t, &m);
    if (m != n) fail_at(line, "%s has %lld elements, expected %lld", what, (long long)m, (long long)n);
    else {
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++) if (!close_(v[i], e[i], tol)) bad = i;
        if (bad >= 0) fail_at(line, "%s[%lld] = %.15g, expected %.15g", what, (long long)bad, v[bad], e[bad]);
        else tn_test_passed++;
    }
    free(v);
}
#define CHECK_ARR(t, e, n, tol) check_arr_((t), (e), (n), (tol), #t, __LINE__)
static void check_same_(tn_tensor *a, tn_tensor *b, double tol, const char *what, int line) {
    if (!a || !b) { fail_at(line, "%s: NULL (%s)", what, tn_last_error()); return; }
    int64_t nb;
    double *vb = tdata(b, &nb);
    check_arr_(a, vb, nb, tol, what, line);
    free(vb);
}
#define CHECK_SAME(a, b, tol) check_same_((a), (b), (tol), #a " vs " #b, __LINE__)
static void check_shape_(tn_tensor *t, const int64_t *s, int nd, const char *what, int line) {
    if (!t) { fail_at(line, "%s is NULL (%s)", what, tn_last_error()); return; }
    bool ok = tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_shape(t)[i] == s[i];
    if (!ok) {
        char buf[128] = "";
        int k = 0;
        for (int i = 0; i < tn_ndim(t) && k < 100; i++) k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%lld", i ? ", " : "", (long long)tn_shape(t)[i]);
        fail_at(line, "%s has shape [%s]", what, buf);
        return;
    }
    tn_test_passed++;
}
#define CHECK_SHAPE(t, ...) check_shape_((t), SH(__VA_ARGS__), #t, __LINE__)
static void check_repr_(tn_module *m, const char *want, int line) {
    char *s = tn_module_repr(m);
    if (!s || strcmp(s, want)) fail_at(line, "repr is\n%s\nexpected\n%s", s ? s : "(NULL)", want);
    else tn_test_passed++;
    tn_string_free(s);
}
#define CHECK_REPR(m, want) check_repr_((m), (want), __LINE__)
/* the state dict's keys joined by spaces */
static void check_keys_(tn_module *m, const char *want, int line) {
    char buf[4096] = "";
    tn_dict *sd = tn_module_state_dict(m);
    for (int i = 0; i < tn_dict_len(sd); i++) {
        if (i) strcat(buf, " ");
        strcat(buf, tn_dict_key(sd, i));
    }
    tn_dict_free(sd);
    if (strcmp(buf, want)) fail_at(line, "state dict keys are\n  %s\nexpected\n  %s", buf, want);
    else tn_test_passed++;
}
#define CHECK_KEYS(m, want) check_keys_((m), (want), __LINE__)

/* every test runs in a scope and must give back every tensor it made */
#define BEGIN tn_memory_stats s0_ = tn_memory_stats_get(); tn_scope_begin(); tn_manual_seed(42)
#define END tn_scope_end(); do { tn_memory_stats s1_ = tn_memory_stats_get(); \
    CHECK_MSG(s1_.live_tensors == s0_.live_tensors && s1_.live_bytes == s0_.live_bytes, \
              "leak: %lld tensors / %lld bytes live, expected %lld / %lld", (long long)s1_.live_tensors, \
              (long long)s1_.live_bytes, (long long)s0_.live_tensors, (long long)s0_.live_bytes); } while (0)

static tn_tensor *rn(const int64_t *shape, int nd) { return tn_randn(shape, nd, TN_F64); }
#define RN(...) rn(SH(__VA_ARGS__))
static tn_tensor *leaf(tn_tensor *t) { if (t) tn_requires_grad_(t, true); return t; }
/* sum(t * (1 + 0.5 sin(i + 1))): a scalar that depends on every element differently */
static tn_tensor *wsum(tn_tensor *t) {
    if (!t) return NULL;
    int64_t n = tn_numel(t);
    tn_tensor *w = tn_add_scalar(tn_mul_scalar(tn_sin(tn_arange(1, (double)n + 1, 1, tn_get_dtype(t))), 0.5), 1);
    return tn_sum(tn_mul(t, tn_reshape(w, tn_shape(t), tn_ndim(t))));
}
static tn_module *f64(tn_module *m) { if (m) tn_module_to_dtype(m, TN_F64); return m; }

/* ------------------------------------------------------------------------------------ */
/* the naive reference: PyTorch's cell equations, element by element                      */
/* ------------------------------------------------------------------------------------ */
enum { M_TANH, M_RELU, M_LSTM, M_GRU };
static double sig(double x) { return 1 / (1 + exp(-x)); }
/* One sample: x [in], h [P or H], c [H]; weights row-major; b_* may be NULL, whr NULL
   unless the LSTM has projections (P = proj size, else P = H). */
static void ref_cell(int mode, int64_t in, int64_t H, int64_t P, const double *x, const double *h, const double *c, const double *wih,
                     const double *whh, const double *bih, const double *bhh, const double *whr, double *hn, double *cn) {
    const int G = mode == M_LSTM ? 4 : mode == M_GRU ? 3 : 1;
    double *gi = (double *)calloc((size_t)(G * H), sizeof(double)), *gh = (double *)calloc((size_t)(G * H), sizeof(double));
    double *mm = (double *)calloc((size_t)H, sizeof(double));
    for (int64_t g = 0; g < G * H; g++) {
        double a = bih ? bih[g] : 0, b = bhh ? bhh[g] : 0;
        for (int64_t j = 0; j < in; j++) a += wih[g * in + j] * x[j];
        for (int64_t j = 0; j < P; j++) b += whh[g * P + j] * h[j];
        gi[g] = a;
        gh[g] = b;
    }
    for (int64_t k = 0; k < H; k++) {
        if (mode == M_TANH) hn[k] = tanh(gi[k] + gh[k]);
        else if (mode == M_RELU) hn[k] = gi[k] + gh[k] > 0 ? gi[k] + gh[k] : 0;
        else if (mode == M_GRU) {
            double r = sig(gi[k] + gh[k]), z = sig(gi[H + k] + gh[H + k]), n = tanh(gi[2 * H + k] + r * gh[2 * H + k]);
            hn[k] = (1 - z) * n + z * h[k];
        } else {
            double i = sig(gi[k] + gh[k]), f = sig(gi[H + k] + gh[H + k]), g = tanh(gi[2 * H + k] + gh[2 * H + k]), o = sig(gi[3 * H + k] + gh[3 * H + k]);
            cn[k] = f * c[k] + i * g;
            mm[k] = o * tanh(cn[k]);
        }
    }
    if (mode == M_LSTM) {
        if (!whr) memcpy(hn, mm, (size_t)H * sizeof(double));
        else for (int64_t p = 0; p < P; p++) {
            hn[p] = 0;
            for (int64_t k = 0; k < H; k++) hn[p] += whr[p * H + k] * mm[k];
        }
    }
    free(gi); free(gh); free(mm);
}
/* The whole module: x [L][N][in] (sequence first), h0 [DL][N][P], c0 [DL][N][H] (NULL:
   zeros). out [L][N][D*P], hn [DL][N][P], cn [DL][N][H]. zero_between: the inputs of layers
   after the first are zeros (dropout with p = 1). Parameters are read from the module. */
typedef struct { int mode, D; int64_t in, H, P, layers; } rcfg;
static void ref_rnn(tn_module *m, rcfg c, int64_t L, int64_t N, const double *x, const double *h0, const double *c0, double *out, double *hn,
                    double *cn, bool zero_between) {
    const int64_t P = c.P, H = c.H, D = c.D;
    double *in = (double *)malloc((size_t)(L * N * (c.in > D * P ? c.in : D * P)) * sizeof(double));
    double *lo = (double *)malloc((size_t)(L * N * D * P) * sizeof(double));
    double *h = (double *)malloc((size_t)P * sizeof(double)), *cc = (double *)malloc((size_t)H * sizeof(double));
    double *h2 = (double *)malloc((size_t)P * sizeof(double)), *c2 = (double *)malloc((size_t)H * sizeof(double));
    memcpy(in, x, (size_t)(L * N * c.in) * sizeof(double));
    int64_t lin = c.in;
    for (int64_t l = 0; l < c.layers; l++) {
        if (l > 0 && zero_between) memset(in, 0, (size_t)(L * N * lin) * sizeof(double));
        for (int d = 0; d < D; d++) {
            char sfx[32], nm[64];
            snprintf(sfx, sizeof sfx, "_l%lld%s", (long long)l, d ? "_reverse" : "");
            snprintf(nm, sizeof nm, "weight_ih%s", sfx); double *wih = pdata(m, nm);
            snprintf(nm, sizeof nm, "weight_hh%s", sfx); double *whh = pdata(m, nm);
            snprintf(nm, sizeof nm, "bias_ih%s", sfx); double *bih = pdata(m, nm);
            snprintf(nm, sizeof nm, "bias_hh%s", sfx); double *bhh = pdata(m, nm);
            snprintf(nm, sizeof nm, "weight_hr%s", sfx); double *whr = pdata(m, nm);
            const int64_t idx = l * D + d;
            for (int64_t n = 0; n < N; n++) {
                for (int64_t k = 0; k < P; k++) h[k] = h0 ? h0[(idx * N + n) * P + k] : 0;
                for (int64_t k = 0; k < H; k++) cc[k] = c0 ? c0[(idx * N + n) * H + k] : 0;
                for (int64_t s = 0; s < L; s++) {
                    int64_t t = d ? L - 1 - s : s;
                    ref_cell(c.mode, lin, H, P, in + (t * N + n) * lin, h, cc, wih, whh, bih, bhh, whr, h2, c2);
                    memcpy(h, h2, (size_t)P * sizeof(double));
                    if (c.mode == M_LSTM) memcpy(cc, c2, (size_t)H * sizeof(double));
                    for (int64_t k = 0; k < P; k++) lo[(t * N + n) * D * P + d * P + k] = h[k];
                }
                for (int64_t k = 0; k < P; k++) hn[(idx * N + n) * P + k] = h[k];
                for (int64_t k = 0; cn && k < H; k++) cn[(idx * N + n) * H + k] = cc[k];
            }
            free(wih); free(whh); free(bih); free(bhh); free(whr);
        }
        lin = D * P;
        memcpy(in, lo, (size_t)(L * N * lin) * sizeof(double));
    }
    memcpy(out, lo, (size_t)(L * N * D * P) * sizeof(double));
    free(in); free(lo); free(h); free(cc); free(h2); free(c2);
}

/* ------------------------------------------------------------------------------------ */
/* 1. modules against the reference                                                        */
/* ------------------------------------------------------------------------------------ */
/* Build mode's module with options, run x (random) through it with random or no initial
   states, compare output, h_n (and c_n) with ref_rnn. */
static void ref_case(int mode, const char *options, rcfg c, int64_t L, int64_t N, bool batched, bool batch_first, bool give_h0, int line) {
    tn_scope_begin();
    c.mode = mode;
    tn_module *m = f64(mode == M_LSTM ? tn_nn_lstm_str(c.in, c.H, options) : mode == M_GRU ? tn_nn_gru_str(c.in, c.H, options) : tn_nn_rnn_str(c.in, c.H, options));
    if (!m) { fail_at(line, "constructor failed: %s", tn_last_error()); tn_scope_end(); return; }
    const int64_t DL = c.D * c.layers, P = c.P;
    tn_tensor *xs = RN(L, N, c.in), *h0 = give_h0 ? RN(DL, N, P) : NULL, *c0 = give_h0 && mode == M_LSTM ? RN(DL, N, c.H) : NULL;
    tn_tensor *x = !batched ? tn_select(xs, 1, 0) : batch_first ? tn_contiguous(tn_transpose(xs, 0, 1)) : xs;
    tn_tensor *h0m = h0 && !batched ? tn_select(h0, 1, 0) : h0, *c0m = c0 && !batched ? tn_select(c0, 1, 0) : c0;
    tn_tensor *hn = NULL, *cn = NULL;
    tn_tensor *y = mode == M_LSTM ? tn_nn_lstm_forward(m, x, h0m, c0m, &hn, &cn) : tn_nn_rnn_forward(m, x, h0m, &hn);
    int64_t n;
    double *xv = tdata(xs, &n), *h0v = h0 ? tdata(h0, &n) : NULL, *c0v = c0 ? tdata(c0, &n) : NULL;
    double *out = (double *)malloc((size_t)(L * N * c.D * P) * sizeof(double)), *hv = (double *)malloc((size_t)(DL * N * P) * sizeof(double));
    double *cv = (double *)malloc((size_t)(DL * N * c.H) * sizeof(double));
    ref_rnn(m, c, L, N, xv, h0v, c0v, out, hv, mode == M_LSTM ? cv : NULL, false);
    if (!y) fail_at(line, "forward failed (%s): %s", options, tn_last_error());
    else {
        if (batched && batch_first) check_shape_(y, SH(N, L, c.D * P), "output", line);
        else if (batched) check_shape_(y, SH(L, N, c.D * P), "output", line);
        else check_shape_(y, SH(L, c.D * P), "output", line);
        if (batched) check_shape_(hn, SH(DL, N, P), "h_n", line);
        else check_shape_(hn, SH(DL, P), "h_n", line);
        check_arr_(batched && batch_first ? tn_transpose(y, 0, 1) : y, out, L * N * c.D * P, 1e-11, "output", line);
        check_arr_(hn, hv, DL * N * P, 1e-11, "h_n", line);
        if (mode == M_LSTM) {
            if (batched) check_shape_(cn, SH(DL, N, c.H), "c_n", line);
            else check_shape_(cn, SH(DL, c.H), "c_n", line);
            check_arr_(cn, cv, DL * N * c.H, 1e-11, "c_n", line);
        } else CHECK(cn == NULL);
    }
    free(xv); free(h0v); free(c0v); free(out); free(hv); free(cv);
    tn_module_free(m);
    tn_scope_end();
}
static rcfg cfg(int64_t in, int64_t H, int64_t P, int64_t layers, int D) { rcfg c; c.mode = 0; c.in = in; c.H = H; c.P = P ? P : H; c.layers = layers; c.D = D; return c; }
#define REF(mode, opts, c, L, N, batched, bf, h0) ref_case(mode, opts, c, L, N, batched, bf, h0, __LINE__)

TEST(test_rnn_vs_reference) {
    BEGIN;
    REF(M_TANH, "", cfg(3, 4, 0, 1, 1), 5, 2, true, false, false);
    REF(M_TANH, "num_layers=2, bidirectional=True", cfg(3, 4, 0, 2, 2), 4, 3, true, false, true);
    REF(M_RELU, "nonlinearity='relu', num_layers=3, batch_first=True", cfg(2, 3, 0, 3, 1), 4, 2, true, true, true);
    REF(M_TANH, "bias=False, bidirectional=True", cfg(3, 2, 0, 1, 2), 3, 2, true, false, true);
    REF(M_TANH, "num_layers=2", cfg(3, 4, 0, 2, 1), 6, 1, false, false, true);             /* unbatched */
    REF(M_LSTM, "", cfg(3, 4, 0, 1, 1), 5, 2, true, false, false);
    REF(M_LSTM, "num_layers=2, bidirectional=True, batch_first=True", cfg(3, 4, 0, 2, 2), 5, 3, true, true, true);
    REF(M_LSTM, "num_layers=3, bias=False", cfg(2, 3, 0, 3, 1), 4, 2, true, false, true);
    REF(M_LSTM, "bidirectional=True", cfg(3, 4, 0, 1, 2), 4, 1, false, false, true);      /* unbatched */
    REF(M_LSTM, "proj_size=2, num_layers=2, bidirectional=True", cfg(3, 5, 2, 2, 2), 4, 2, true, false, true);
    REF(M_LSTM, "proj_size=3, batch_first=True", cfg(2, 4, 3, 1, 1), 3, 2, true, true, false);
    REF(M_LSTM, "proj_size=1", cfg(2, 3, 1, 1, 1), 3, 1, false, true, true);            /* unbatched, batch_first ignored */
    REF(M_GRU, "", cfg(3, 4, 0, 1, 1), 5, 2, true, false, false);
    REF(M_GRU, "num_layers=2, bidirectional=True, batch_first=True", cfg(3, 4, 0, 2, 2), 4, 3, true, true, true);
    REF(M_GRU, "num_layers=2, bias=False", cfg(4, 3, 0, 2, 1), 3, 2, true, false, true);
    REF(M_GRU, "bidirectional=True, batch_first=True", cfg(3, 2, 0, 1, 2), 5, 1, false, true, false);
    REF(M_TANH, "", cfg(3, 4, 0, 1, 1), 1, 2, true, false, true);                        /* one time step */
    REF(M_GRU, "num_layers=2", cfg(3, 4, 0, 2, 1), 3, 0, true, false, false);            /* empty batch */
    END;
}

/* dropout between layers: off in eval mode, every layer input after the first zeroed with p = 1 */
TEST(test_rnn_dropout) {
    BEGIN;
    tn_module *m = f64(tn_nn_lstm(3, 4, .num_layers = 3, .dropout = 1.0));
    rcfg c = cfg(3, 4, 0, 3, 1);
    c.mode = M_LSTM;
    tn_tensor *x = RN(4, 2, 3), *hn;
    int64_t n;
    double *xv = tdata(x, &n), out[4 * 2 * 4], hv[3 * 2 * 4], cv[3 * 2 * 4];
    ref_rnn(m, c, 4, 2, xv, NULL, NULL, out, hv, cv, true);
    tn_tensor *y = tn_nn_lstm_forward(m, x, NULL, NULL, &hn, NULL);
    CHECK_ARR(y, out, 32, 1e-11);
    CHECK_ARR(hn, hv, 24, 1e-11);
    tn_module_eval(m);
    ref_rnn(m, c, 4, 2, xv, NULL, NULL, out, hv, cv, false);
    CHECK_ARR(tn_nn_lstm_forward(m, x, NULL, NULL, NULL, NULL), out, 32, 1e-11);
    tn_module_free(m);
    /* p = 0.5: random, changes the output in training only; the last layer's output is not dropped */
    m = f64(tn_nn_gru(3, 4, .num_layers = 2, .dropout = 0.5));
    tn_tensor *a = tn_module_forward(m, x), *b = tn_module_forward(m, x);
    CHECK(a && b && !tn_allclose(a, b, .rtol = 1e-12, .atol = 1e-12));
    tn_module_eval(m);
    a = tn_module_forward(m, x);
    b = tn_module_forward(m, x);
    CHECK(a && b && tn_equal(a, b));
    tn_module_free(m);
    free(xv);
    END;
}

/* functional cells and the cell modules against ref_cell */
static void cell_case(int mode, int64_t in, int64_t H, int64_t N, bool batched, bool bias, bool module, bool zero_state, int line) {
    tn_scope_begin();
    const int G = mode == M_LSTM ? 4 : mode == M_GRU ? 3 : 1;
    tn_module *m = NULL;
    tn_tensor *wih, *whh, *bih = NULL, *bhh = NULL;
    if (module) {
        char o[64];
        snprintf(o, sizeof o, "bias=%s%s", bias ? "True" : "False", mode == M_RELU ? ", nonlinearity='relu'" : "");
        m = f64(mode == M_LSTM ? tn_nn_lstm_cell_str(in, H, o) : mode == M_GRU ? tn_nn_gru_cell_str(in, H, o) : tn_nn_rnn_cell_str(in, H, o));
        wih = tn_module_get(m, "weight_ih"); whh = tn_module_get(m, "weight_hh");
        bih = tn_module_get(m, "bias_ih"); bhh = tn_module_get(m, "bias_hh");
        CHECK(bias == (bih != NULL));
    } else {
        wih = RN(G * H, in); whh = RN(G * H, H);
        if (bias) { bih = RN(G * H); bhh = RN(G * H); }
    }
    tn_tensor *x = batched ? RN(N, in) : RN(in), *h = zero_state ? NULL : batched ? RN(N, H) : RN(H);
    tn_tensor *c = zero_state || mode != M_LSTM ? NULL : batched ? RN(N, H) : RN(H), *cout = NULL, *y;
    if (module) y = mode == M_LSTM ? tn_nn_lstm_cell_forward(m, x, h, c, &cout) : mode == M_GRU ? tn_nn_gru_cell_forward(m, x, h) : tn_nn_rnn_cell_forward(m, x, h);
    else y = mode == M_LSTM ? tn_lstm_cell(x, h, c, wih, whh, bih, bhh, &cout) : mode == M_GRU ? tn_gru_cell(x, h, wih, whh, bih, bhh)
           : mode == M_RELU ? tn_rnn_relu_cell(x, h, wih, whh, bih, bhh) : tn_rnn_tanh_cell(x, h, wih, whh, bih, bhh);
    int64_t n, rows = batched ? N : 1;
    double *xv = tdata(x, &n), *hv = h ? tdata(h, &n) : (double *)calloc((size_t)(rows * H), sizeof(double));
    double *cv = c ? tdata(c, &n) : (double *)calloc((size_t)(rows * H), sizeof(double));
    double *wi = tdata(wih, &n), *wh = tdata(whh, &n), *bi = bias ? tdata(bih, &n) : NULL, *bh = bias ? tdata(bhh, &n) : NULL;
    double *ho = (double *)malloc((size_t)(rows * H) * sizeof(double)), *co = (double *)malloc((size_t)(rows * H) * sizeof(double));
    for (int64_t r = 0; r < rows; r++) ref_cell(mode, in, H, H, xv + r * in, hv + r * H, cv + r * H, wi, wh, bi, bh, NULL, ho + r * H, co + r * H);
    if (batched) check_shape_(y, SH(N, H), "h'", line);
    else check_shape_(y, SH(H), "h'", line);
    check_arr_(y, ho, rows * H, 1e-12, "h'", line);
    if (mode == M_LSTM) check_arr_(cout, co, rows * H, 1e-12, "c'", line);
    if (module && zero_state) { /* the single-input forward: zero states, h' only */
        check_same_(tn_module_forward(m, x), y, 1e-15, "tn_module_forward", line);
    }
    free(xv); free(hv); free(cv); free(wi); free(wh); free(bi); free(bh); free(ho); free(co);
    tn_module_free(m);
    tn_scope_end();
}
#define CELL(mode, in, H, N, batched, bias, module, zero) cell_case(mode, in, H, N, batched, bias, module, zero, __LINE__)

TEST(test_cells) {
    BEGIN;
    for (int mode = 0; mode < 4; mode++) {
        CELL(mode, 3, 4, 2, true, true, false, false);
        CELL(mode, 3, 4, 2, false, true, false, false);
        CELL(mode, 2, 3, 5, true, false, false, false);
        CELL(mode, 3, 4, 2, true, true, true, false);
        CELL(mode, 3, 4, 2, false, false, true, false);
        CELL(mode, 3, 2, 3, true, true, true, true);
        CELL(mode, 4, 2, 1, false, true, true, true);
    }
    /* LSTMCell c_out may be NULL; the functional cell accepts f32 */
    tn_tensor *x = tn_randn(SH(2, 3), TN_F32), *h = tn_randn(SH(2, 2), TN_F32), *w1 = tn_randn(SH(8, 3), TN_F32), *w2 = tn_randn(SH(8, 2), TN_F32);
    tn_tensor *c1, *h1 = tn_lstm_cell(x, h, h, w1, w2, NULL, NULL, &c1), *h2 = tn_lstm_cell(x, h, h, w1, w2, NULL, NULL, NULL);
    CHECK(h1 && c1 && h2 && tn_equal(h1, h2) && tn_get_dtype(h1) == TN_F32);
    END;
}

/* ------------------------------------------------------------------------------------ */
/* attention against its definition                                                        */
/* ------------------------------------------------------------------------------------ */
/* Sequence-first q [L][N][E], k and v [S][N][E]; am [L][S] additive or NULL; kpm [N][S]
   (true = masked) or NULL. out [L][N][E]; w [N][H][L][S] per head. */
static void ref_mha(tn_module *m, int64_t E, int64_t H, int64_t L, int64_t S, int64_t N, const double *q, const double *k, const double *v,
                    const double *am, const bool *kpm, double *out, double *w) {
    const int64_t hd = E / H;
    double *W = pdata(m, "in_proj_weight"), *b = pdata(m, "in_proj_bias"), *Wo = pdata(m, "out_proj.weight"), *bo = pdata(m, "out_proj.bias");
    double *Q = (double *)malloc((size_t)(L * hd) * sizeof(double)), *K = (double *)malloc((size_t)(S * hd) * sizeof(double));
    double *V = (double *)malloc((size_t)(S * hd) * sizeof(double)), *cat = (double *)calloc((size_t)(L * N * E), sizeof(double));
    double *P = (double *)malloc((size_t)S * sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t d = 0; d < hd; d++) {
                int64_t r = h * hd + d;
                for (int64_t l = 0; l < L; l++) {
                    double a = b ? b[r] : 0;
                    for (int64_t j = 0; j < E; j++) a += W[r * E + j] * q[(l * N + n) * E + j];
                    Q[l * hd + d] = a;
                }
                for (int64_t s = 0; s < S; s++) {
                    double a = b ? b[E + r] : 0, c = b ? b[2 * E + r] : 0;
                    for (int64_t j = 0; j < E; j++) { a += W[(E + r) * E + j] * k[(s * N + n) * E + j]; c += W[(2 * E + r) * E + j] * v[(s * N + n) * E + j]; }
                    K[s * hd + d] = a;
                    V[s * hd + d] = c;
                }
            }
            for (int64_t l = 0; l < L; l++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t s = 0; s < S; s++) {
                    double a = 0;
                    for (int64_t d = 0; d < hd; d++) a += Q[l * hd + d] * K[s * hd + d];
                    a = a / sqrt((double)hd) + (am ? am[l * S + s] : 0) + (kpm && kpm[n * S + s] ? -INFINITY : 0);
                    P[s] = a;
                    if (a > mx) mx = a;
                }
                for (int64_t s = 0; s < S; s++) sum += (P[s] = exp(P[s] - mx));
                for (int64_t s = 0; s < S; s++) {
                    P[s] /= sum;
                    w[((n * H + h) * L + l) * S + s] = P[s];
                }
                for (int64_t d = 0; d < hd; d++) {
                    double a = 0;
                    for (int64_t s = 0; s < S; s++) a += P[s] * V[s * hd + d];
                    cat[(l * N + n) * E + h * hd + d] = a;
                }
            }
        }
    for (int64_t i = 0; i < L * N; i++)
        for (int64_t e = 0; e < E; e++) {
            double a = bo ? bo[e] : 0;
            for (int64_t j = 0; j < E; j++) a += Wo[e * E + j] * cat[i * E + j];
            out[i * E + e] = a;
        }
    free(W); free(b); free(Wo); free(bo); free(Q); free(K); free(V); free(cat); free(P);
}
/* one case: batch_first / unbatched layouts, float or bool attn_mask (bool: true = masked),
   key padding, per-head or averaged weights */
static void mha_case(const char *options, int64_t E, int64_t H, int64_t L, int64_t S, int64_t N, bool batched, bool bf, int mask_kind, bool use_kpm,
                     bool average, int line) {
    tn_scope_begin();
    tn_module *m = f64(tn_nn_multihead_attention_str(E, H, options));
    tn_tensor *q = RN(L, N, E), *k = RN(S, N, E), *v = RN(S, N, E);
    double *am = NULL;
    bool *kb = NULL;
    tn_tensor *mask = NULL, *kpm = NULL;
    if (mask_kind == 1) { mask = RN(L, S); int64_t n; am = tdata(mask, &n); }
    if (mask_kind == 2) { /* bool: mask a few pairs, never a whole row */
        am = (double *)calloc((size_t)(L * S), sizeof(double));
        bool *mb = (bool *)calloc((size_t)(L * S), sizeof(bool));
        for (int64_t i = 0; i < L * S; i++) if (i % 3 == 1) { mb[i] = true; am[i] = -INFINITY; }
        mask = tn_from_data(mb, SH(L, S), TN_BOOL);
        free(mb);
    }
    if (use_kpm) {
        kb = (bool *)calloc((size_t)(N * S), sizeof(bool));
        for (int64_t n = 0; n < N; n++) kb[n * S + (n + 1) % S] = true;
        kpm = batched ? tn_from_data(kb, SH(N, S), TN_BOOL) : tn_from_data(kb, SH(S), TN_BOOL);
    }
    int64_t n;
    double *qv = tdata(q, &n), *kv = tdata(k, &n), *vv = tdata(v, &n);
    double *out = (double *)malloc((size_t)(L * N * E) * sizeof(double)), *w = (double *)malloc((size_t)(N * H * L * S) * sizeof(double));
    double *wa = (double *)calloc((size_t)(N * L * S), sizeof(double));
    ref_mha(m, E, H, L, S, N, qv, kv, vv, am, kb, out, w);
    for (int64_t b = 0; b < N; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < L * S; i++) wa[b * L * S + i] += w[(b * H + h) * L * S + i] / (double)H;
    tn_tensor *qm = !batched ? tn_select(q, 1, 0) : bf ? tn_transpose(q, 0, 1) : q;
    tn_tensor *km = !batched ? tn_select(k, 1, 0) : bf ? tn_transpose(k, 0, 1) : k;
    tn_tensor *vm = !batched ? tn_select(v, 1, 0) : bf ? tn_transpose(v, 0, 1) : v;
    tn_tensor *wt = NULL, *y = tn_nn_mha_forward(m, qm, km, vm, &wt, .key_padding_mask = kpm, .attn_mask = mask, .average_attn_weights = average);
    if (!y) fail_at(line, "mha forward (%s): %s", options, tn_last_error());
    else {
        if (!batched) check_shape_(y, SH(L, E), "output", line);
        else if (bf) check_shape_(y, SH(N, L, E), "output", line);
        else check_shape_(y, SH(L, N, E), "output", line);
        check_arr_(batched && bf ? tn_transpose(y, 0, 1) : y, out, L * N * E, 1e-11, "output", line);
        if (average) {
            if (batched) check_shape_(wt, SH(N, L, S), "weights", line);
            else check_shape_(wt, SH(L, S), "weights", line);
            check_arr_(wt, wa, N * L * S, 1e-11, "averaged weights", line);
        } else {
            if (batched) check_shape_(wt, SH(N, H, L, S), "weights", line);
            else check_shape_(wt, SH(H, L, S), "weights", line);
            check_arr_(wt, w, N * H * L * S, 1e-11, "weights", line);
        }
        /* need_weights false: same output, no weights */
        tn_tensor *w2 = q;
        check_same_(tn_nn_mha_forward(m, qm, km, vm, &w2, .key_padding_mask = kpm, .need_weights = false, .attn_mask = mask), y, 1e-14, "need_weights=False", line);
        CHECK(w2 == NULL);
    }
    free(am); free(kb); free(qv); free(kv); free(vv); free(out); free(w); free(wa);
    tn_module_free(m);
    tn_scope_end();
}
#define MHA(opts, E, H, L, S, N, batched, bf, mk, kpm, avg) mha_case(opts, E, H, L, S, N, batched, bf, mk, kpm, avg, __LINE__)

TEST(test_mha_vs_reference) {
    BEGIN;
    MHA("", 8, 2, 3, 4, 2, true, false, 0, false, true);
    MHA("", 8, 2, 3, 4, 2, true, false, 1, true, true);
    MHA("", 6, 3, 4, 4, 3, true, false, 2, true, false);
    MHA("batch_first=True", 8, 4, 2, 5, 2, true, true, 1, true, false);
    MHA("batch_first=True, bias=False", 4, 1, 3, 3, 2, true, true, 2, false, true);
    MHA("", 8, 2, 3, 4, 1, false, false, 1, true, true);
    MHA("batch_first=True", 8, 2, 3, 4, 1, false, true, 2, true, false);   /* unbatched: batch_first ignored */
    /* is_causal without a mask equals the square subsequent mask; with a mask, the mask is used */
    tn_module *m = f64(tn_nn_multihead_attention(8, 2));
    tn_tensor *x = RN(4, 2, 8), *cm = tn_nn_generate_square_subsequent_mask(4, TN_F64);
    CHECK_SAME(tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false, .is_causal = true), tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false, .attn_mask = cm), 1e-12);
    tn_tensor *zm = tn_zeros(SH(4, 4), TN_F64);
    CHECK_SAME(tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false, .attn_mask = zm, .is_causal = true), tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false), 1e-12);
    /* a 3-D mask [N*H, L, S] per head, bool and float alike; a float key padding mask adds */
    tn_tensor *m3 = tn_lt_scalar(tn_rand(SH(4, 4, 4), TN_F64), 0.3), *eye = tn_eye(4, 4, TN_BOOL);
    m3 = tn_logical_and(m3, tn_logical_not(eye));   /* the diagonal stays visible */
    tn_tensor *f3 = tn_masked_fill(tn_zeros(SH(4, 4, 4), TN_F64), m3, -INFINITY);
    CHECK_SAME(tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false, .attn_mask = m3), tn_nn_mha_forward(m, x, x, x, NULL, .need_weights = false, .attn_mask = f3), 1e-12);
    tn_tensor *kb = tn_from_data((const bool[]){false, true, false, false, false, false, true, false}, SH(2, 4), TN_BOOL);
    tn_tensor *kf = tn_masked_fill(tn_zeros(SH(2, 4), TN_F64), kb, -INFINITY);
    CHECK_SAME(tn_nn_mha_forward(m, x, x, x, NULL, .key_padding_mask = kf, .need_weights = false), tn_nn_mha_forward(m, x, x, x, NULL, .key_padding_mask = kb, .need_weights = false), 1e-12);
    /* weights: rows sum to 1 */
    tn_tensor *wt;
    CHECK(tn_nn_mha_forward(m, x, x, x, &wt, .key_padding_mask = kb, .attn_mask = cm) != NULL);
    CHECK(wt && tn_allclose(tn_sum_dims(wt, SH(-1)), tn_ones(SH(2, 4), TN_F64), .rtol = 1e-12, .atol = 1e-12));
    /* a row masked everywhere gives NaN, as PyTorch */
    tn_tensor *all = tn_ones(SH(2, 4), TN_BOOL), *yn = tn_nn_mha_forward(m, x, x, x, NULL, .key_padding_mask = all, .need_weights = false);
    CHECK(yn && tn_item(tn_any(tn_logical_not(tn_isnan(yn)))) == 0);
    /* dropout on the weights only in training */
    tn_module *d = f64(tn_nn_multihead_attention(8, 2, .dropout = 0.5));
    tn_tensor *a = tn_nn_mha_forward(d, x, x, x, &wt);
    CHECK(a && wt && !tn_allclose(tn_sum_dims(wt, SH(-1)), tn_ones(SH(2, 4), TN_F64), .rtol = 1e-9, .atol = 1e-9));
    tn_module_eval(d);
    a = tn_nn_mha_forward(d, x, x, x, &wt);
    /* need_weights=False takes the fused attention (another summation order): equal within rounding */
    CHECK(a && tn_allclose(a, tn_nn_mha_forward(d, x, x, x, NULL, .need_weights = false), .rtol = 1e-12, .atol = 1e-12));
    tn_module_free(d);
    tn_module_free(m);
    END;
}

/* the transformer layers are wired as PyTorch's: compare with the same blocks called by hand */
TEST(test_transformer_wiring) {
    BEGIN;
    for (int nf = 0; nf < 2; nf++)
        for (int dec = 0; dec < 2; dec++) {
            tn_scope_begin();
            const char *opts = nf ? "dim_feedforward=16, norm_first=True, activation='gelu', layer_norm_eps=1e-3" : "dim_feedforward=16, dropout=0.2";
            tn_module *m = f64(dec ? tn_nn_transformer_decoder_layer_str(8, 2, opts) : tn_nn_transformer_encoder_layer_str(8, 2, opts));
            tn_module_eval(m);
            tn_tensor *x = RN(3, 2, 8), *mem = RN(5, 2, 8), *mask = tn_nn_generate_square_subsequent_mask(3, TN_F64);
            tn_tensor *kpm = tn_from_data((const bool[]){false, false, true, false, false, false}, SH(2, 3), TN_BOOL);
            tn_tensor *mkpm = tn_from_data((const bool[]){false, true, false, false, false, false, false, false, true, false}, SH(2, 5), TN_BOOL);
            tn_module *sa = tn_module_child(m, "self_attn"), *ca = tn_module_child(m, "multihead_attn");
#define C(name, t) tn_module_forward(tn_module_child(m, name), t)
#define FF(t) C("linear2", nf ? tn_gelu(C("linear1", t)) : tn_relu(C("linear1", t)))
            tn_tensor *y = x;
            if (nf) {
                tn_tensor *t = C("norm1", y);
                y = tn_add(y, tn_nn_mha_forward(sa, t, t, t, NULL, .key_padding_mask = kpm, .need_weights = false, .attn_mask = mask));
                if (dec) y = tn_add(y, tn_nn_mha_forward(ca, C("norm2", y), mem, mem, NULL, .key_padding_mask = mkpm, .need_weights = false));
                y = tn_add(y, FF(C(dec ? "norm3" : "norm2", y)));
            } else {
                y = C("norm1", tn_add(y, tn_nn_mha_forward(sa, y, y, y, NULL, .key_padding_mask = kpm, .need_weights = false, .attn_mask = mask)));
                if (dec) y = C("norm2", tn_add(y, tn_nn_mha_forward(ca, y, mem, mem, NULL, .key_padding_mask = mkpm, .need_weights = false)));
                y = C(dec ? "norm3" : "norm2", tn_add(y, FF(y)));
            }
#undef C
#undef FF
            tn_tensor *got = dec ? tn_nn_transformer_decoder_layer_forward(m, x, mem, .tgt_mask = mask, .tgt_key_padding_mask = kpm, .memory_key_padding_mask = mkpm)
                                 : tn_nn_transformer_encoder_layer_forward(m, x, .src_mask = mask, .src_key_padding_mask = kpm);
            CHECK_SAME(got, y, 1e-12);
            CHECK_SHAPE(got, 3, 2, 8);
            /* is_causal builds the same mask */
            got = dec ? tn_nn_transformer_decoder_layer_forward(m, x, mem, .tgt_key_padding_mask = kpm, .memory_key_padding_mask = mkpm, .tgt_is_causal = true) : tn_nn_transformer_encoder_layer_forward(m, x, .src_key_padding_mask = kpm, .is_causal = true);
            CHECK_SAME(got, y, 1e-12);
            /* training: dropout makes two calls differ (p = 0.2) unless p = 0 */
            tn_module_train(m);
            tn_tensor *a = dec ? tn_nn_transformer_decoder_layer_forward(m, x, mem) : tn_module_forward(m, x);
            tn_tensor *b = dec ? tn_nn_transformer_decoder_layer_forward(m, x, mem) : tn_module_forward(m, x);
            CHECK(a && b && (nf ? true : !tn_allclose(a, b, .rtol = 1e-12, .atol = 1e-12)));
            if (nf) CHECK(a && b && !tn_allclose(a, b, .rtol = 1e-12, .atol = 1e-12));   /* default dropout 0.1 */
            tn_module_free(m);
            tn_scope_end();
        }
    /* stacks: the layers in turn, then the norm */
    tn_module *layer = f64(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 12, .batch_first = true));
    tn_module *enc = tn_nn_transformer_encoder(layer, 3, .norm = f64(tn_nn_layer_norm(SH(8))));
    tn_module_eval(enc);
    tn_tensor *x = RN(2, 5, 8), *kpm = tn_from_data((const bool[]){false, false, false, true, true, false, false, false, false, false}, SH(2, 5), TN_BOOL);
    tn_tensor *y = x;
    for (int i = 0; i < 3; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "layers.%d", i);
        y = tn_nn_transformer_encoder_layer_forward(tn_module_child(enc, nm), y, .src_key_padding_mask = kpm);
    }
    y = tn_module_forward(tn_module_child(enc, "norm"), y);
    CHECK_SAME(tn_nn_transformer_encoder_forward(enc, x, .src_key_padding_mask = kpm), y, 1e-12);
    /* in a Sequential: the single-input forward (no masks) */
    tn_module *seq = tn_nn_sequential(enc, tn_nn_linear(8, 3));
    f64(seq);
    tn_module_eval(seq);
    y = tn_module_forward(seq, x);
    CHECK_SHAPE(y, 2, 5, 3);
    tn_module_free(seq);
    END;
}

/* ------------------------------------------------------------------------------------ */
/* 2. gradients                                                                            */
/* ------------------------------------------------------------------------------------ */
/* gradcheck of a module forward: inputs[0..nx) are the tensors passed to the forward, the
   rest the module's parameters (perturbed in place by tn_gradcheck, so the module sees them). */
typedef struct { tn_module *m; int kind; tn_tensor *mask, *kpm; } gctx;
static tn_tensor *gc_fn(tn_tensor *const *in, int n, void *user) {
    gctx *g = (gctx *)user;
    (void)n;
    tn_tensor *hn = NULL, *cn = NULL, *w = NULL, *y;
    switch (g->kind) {
    case 0: y = tn_nn_lstm_forward(g->m, in[0], in[1], in[2], &hn, &cn); break;
    case 1: y = tn_nn_rnn_forward(g->m, in[0], in[1], &hn); break;
    case 2: y = tn_nn_mha_forward(g->m, in[0], in[1], in[2], &w, .key_padding_mask = g->kpm, .attn_mask = g->mask, .average_attn_weights = false); break;
    case 3: y = tn_nn_transformer_encoder_layer_forward(g->m, in[0], .src_mask = g->mask, .src_key_padding_mask = g->kpm); break;
    case 4: y = tn_nn_transformer_decoder_layer_forward(g->m, in[0], in[1], .tgt_mask = g->mask, .memory_key_padding_mask = g->kpm); break;
    default: y = tn_lstm_cell(in[0], in[1], in[2], in[3], in[4], in[5], in[6], &cn); break;
    }
    tn_tensor *s = wsum(y);
    if (hn) s = tn_add(s, wsum(hn));
    if (cn) s = tn_add(s, wsum(cn));
    if (w) s = tn_add(s, wsum(w));
    return s;
}
static tn_tensor *gc_gru_cell(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return wsum(tn_gru_cell(in[0], in[1], in[2], in[3], in[4], in[5]));
}
static tn_tensor *gc_rnn_cell(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return tn_add(wsum(tn_rnn_tanh_cell(in[0], in[1], in[2], in[3], in[4], in[5])), wsum(tn_rnn_relu_cell(in[0], in[1], in[2], in[3], NULL, in[5])));
}
static void gc_module(gctx *g, tn_tensor **xs, int nx, int line) {
    tn_tensor *ins[64];
    int n = 0;
    for (int i = 0; i < nx; i++) ins[n++] = xs[i];
    tn_dict *ps = tn_module_named_parameters(g->m);
    for (int i = 0; i < tn_dict_len(ps) && n < 64; i++) ins[n++] = tn_dict_value(ps, i);
    int64_t live0 = tn_memory_stats_get().live_tensors;
    tn_clear_error();
    if (tn_gradcheck(gc_fn, ins, n, g, .atol = 1e-7, .rtol = 1e-5)) tn_test_passed++;
    else fail_at(line, "gradcheck: %s", tn_last_error());
    CHECK_MSG(tn_memory_stats_get().live_tensors == live0, "gradcheck leaked tensors (line %d)", line);
    tn_dict_free(ps);
}
TEST(test_gradcheck) {
    BEGIN;
    gctx g;
    memset(&g, 0, sizeof g);
    /* LSTM: 2 layers, bidirectional, projections, given states */
    g.m = f64(tn_nn_lstm(2, 3, .num_layers = 2, .bidirectional = true, .proj_size = 2));
    g.kind = 0;
    tn_tensor *x = leaf(RN(3, 2, 2)), *h0 = leaf(RN(4, 2, 2)), *c0 = leaf(RN(4, 2, 3));
    gc_module(&g, (tn_tensor *[]){x, h0, c0}, 3, __LINE__);
    tn_module_free(g.m);
    /* GRU batch_first, 2 layers, bidirectional */
    g.m = f64(tn_nn_gru(2, 2, .num_layers = 2, .bidirectional = true, .batch_first = true));
    g.kind = 1;
    x = leaf(RN(2, 3, 2)); h0 = leaf(RN(4, 2, 2));
    gc_module(&g, (tn_tensor *[]){x, h0}, 2, __LINE__);
    tn_module_free(g.m);
    /* RNN unbatched, no bias */
    g.m = f64(tn_nn_rnn(3, 2, .num_layers = 2, .bias = false));
    x = leaf(RN(4, 3)); h0 = leaf(RN(2, 2));
    gc_module(&g, (tn_tensor *[]){x, h0}, 2, __LINE__);
    tn_module_free(g.m);
    /* functional cells, every argument */
    g.m = NULL;
    g.kind = 5;
    tn_tensor *ins[7] = {leaf(RN(2, 3)), leaf(RN(2, 2)), leaf(RN(2, 2)), leaf(RN(8, 3)), leaf(RN(8, 2)), leaf(RN(8)), leaf(RN(8))};
    CHECK_MSG(tn_gradcheck(gc_fn, ins, 7, &g, .atol = 1e-7, .rtol = 1e-5), "lstm_cell: %s", tn_last_error());
    tn_tensor *gins[6] = {leaf(RN(2, 3)), leaf(RN(2, 2)), leaf(RN(6, 3)), leaf(RN(6, 2)), leaf(RN(6)), leaf(RN(6))};
    CHECK_MSG(tn_gradcheck(gc_gru_cell, gins, 6, NULL, .atol = 1e-7, .rtol = 1e-5), "gru_cell: %s", tn_last_error());
    CHECK_MSG(tn_gradgradcheck(gc_gru_cell, gins, 6, NULL, .atol = 1e-6, .rtol = 1e-4), "gru_cell gradgrad: %s", tn_last_error());
    tn_tensor *rins[6] = {leaf(RN(3)), leaf(RN(2)), leaf(RN(2, 3)), leaf(RN(2, 2)), leaf(RN(2)), leaf(RN(2))};
    CHECK_MSG(tn_gradcheck(gc_rnn_cell, rins, 6, NULL, .atol = 1e-7, .rtol = 1e-5), "rnn cells: %s", tn_last_error());
    /* MHA: float attn_mask and bool key padding, per-head weights */
    g.m = f64(tn_nn_multihead_attention(4, 2));
    g.kind = 2;
    g.mask = RN(3, 4);
    g.kpm = tn_from_data((const bool[]){false, false, true, false, false, false, false, true}, SH(2, 4), TN_BOOL);
    tn_tensor *q = leaf(RN(3, 2, 4)), *k = leaf(RN(4, 2, 4)), *v = leaf(RN(4, 2, 4));
    gc_module(&g, (tn_tensor *[]){q, k, v}, 3, __LINE__);
    tn_module_free(g.m);
    /* MHA with every option */
    g.m = f64(tn_nn_multihead_attention(4, 2, .kdim = 3, .vdim = 2, .add_bias_kv = true, .add_zero_attn = true, .batch_first = true));
    g.mask = NULL;
    k = leaf(RN(2, 4, 3)); v = leaf(RN(2, 4, 2));
    gc_module(&g, (tn_tensor *[]){leaf(RN(2, 3, 4)), k, v}, 3, __LINE__);
    tn_module_free(g.m);
    /* encoder layer (eval: no dropout), both orders; decoder layer */
    for (int nf = 0; nf < 2; nf++) {
        g.m = f64(tn_nn_transformer_encoder_layer_str(4, 2, nf ? "dim_feedforward=6, norm_first=True, activation='gelu'" : "dim_feedforward=6"));
        tn_module_eval(g.m);
        g.kind = 3;
        g.mask = tn_nn_generate_square_subsequent_mask(3, TN_F64);
        g.kpm = NULL;
        gc_module(&g, (tn_tensor *[]){leaf(RN(3, 2, 4))}, 1, __LINE__);
        tn_module_free(g.m);
    }
    /* second order through the modules: everything is composed of differentiable ops */
    g.kind = 0;
    g.m = f64(tn_nn_lstm(2, 2, .bidirectional = true, .proj_size = 1));
    tn_tensor *gg[4] = {leaf(RN(2, 1, 2)), leaf(RN(2, 1, 1)), leaf(RN(2, 1, 2)), tn_module_get(g.m, "weight_hh_l0")};
    CHECK_MSG(tn_gradgradcheck(gc_fn, gg, 4, &g), "LSTM gradgradcheck: %s", tn_last_error());
    tn_module_free(g.m);
    g.kind = 3;
    g.m = f64(tn_nn_transformer_encoder_layer(2, 1, .dim_feedforward = 2, .activation = TN_ACTIVATION_GELU));
    tn_module_eval(g.m);
    g.mask = g.kpm = NULL;
    gg[0] = leaf(RN(2, 1, 2));
    CHECK_MSG(tn_gradgradcheck(gc_fn, gg, 1, &g), "encoder layer gradgradcheck: %s", tn_last_error());
    tn_module_free(g.m);
    g.m = f64(tn_nn_transformer_decoder_layer(4, 2, .dim_feedforward = 5, .batch_first = true));
    tn_module_eval(g.m);
    g.kind = 4;
    g.kpm = tn_from_data((const bool[]){false, true, false, false}, SH(2, 2), TN_BOOL);
    gc_module(&g, (tn_tensor *[]){leaf(RN(2, 3, 4)), leaf(RN(2, 2, 4))}, 2, __LINE__);
    tn_module_free(g.m);
    END;
}

/* a tiny training loop learns: gradients reach every parameter and the loss falls */
TEST(test_training) {
    BEGIN;
    tn_module *net = tn_nn_sequential(tn_nn_gru(2, 8, .batch_first = true), tn_nn_linear(8, 1));
    tn_tensor *x = tn_randn(SH(4, 6, 2), TN_F32), *y = tn_cumsum(tn_sum_dims(x, SH(2), .keepdim = true), 1);   /* running sums */
    double first = 0, last = 0;
    tn_dict *ps = tn_module_named_parameters(net);
    for (int step = 0; step < 60; step++) {
        tn_scope_begin();
        tn_tensor *d = tn_sub(tn_module_forward(net, x), y), *loss = tn_mean(tn_mul(d, d));
        CHECK(tn_backward(loss) == 0);
        if (step == 0) first = tn_item(loss);
        last = tn_item(loss);
        tn_no_grad_begin();
        for (int i = 0; i < tn_dict_len(ps); i++) {
            tn_tensor *p = tn_dict_value(ps, i);
            if (step == 0) CHECK_MSG(tn_grad(p) != NULL, "no gradient for %s", tn_dict_key(ps, i));
            if (tn_grad(p)) tn_sub_(p, tn_mul_scalar(tn_grad(p), 0.05));
        }
        tn_no_grad_end();
        tn_module_zero_grad(net);
        tn_scope_end();
    }
    CHECK_MSG(last < 0.5 * first, "loss %g -> %g", first, last);
    tn_dict_free(ps);
    tn_module_free(net);
    END;
}

/* ------------------------------------------------------------------------------------ */
/* 3. PyTorch as the oracle                                                                */
/* ------------------------------------------------------------------------------------ */
/* The cases write a Python script: our state dicts and inputs as literals, then one
   function per case that builds the torch module, loads the state dict (strict), runs the
   same inputs and prints "R name n values..." for every result we recorded with want(), and
   "K name n keys..." for its state-dict keys. After all cases the script runs once. */
static FILE *py;
typedef struct { char name[48]; tn_tensor *t; double tol; char *keys; } want_t;
static want_t wants[160];
static int nwants;
static void want(const char *name, tn_tensor *t, double tol) {
    if (nwants == 160) return;
    want_t *w = &wants[nwants++];
    snprintf(w->name, sizeof w->name, "%s", name);
    w->t = t ? tn_retain(tn_detach(t)) : NULL;
    w->tol = tol;
    w->keys = NULL;
    if (!t) CHECK_MSG(0, "%s: our result is NULL (%s)", name, tn_last_error());
}
static void want_keys(const char *name, tn_module *m) {
    if (nwants == 160) return;
    want_t *w = &wants[nwants++];
    snprintf(w->name, sizeof w->name, "%s", name);
    w->t = NULL;
    w->keys = (char *)calloc(8192, 1);
    tn_dict *sd = tn_module_state_dict(m);
    for (int i = 0; i < tn_dict_len(sd); i++) { strcat(w->keys, " "); strcat(w->keys, tn_dict_key(sd, i)); }
    tn_dict_free(sd);
    fprintf(py, "K('%s', m)\n", name);   /* inside the case function (py_begin), after m is built */
}
static void py_t(const char *var, tn_tensor *t) {
    int64_t n;
    double *v = tdata(t, &n);
    tn_dtype dt = tn_get_dtype(t);
    fprintf(py, "%s = T([", var);
    for (int64_t i = 0; i < n; i++) fprintf(py, dt == TN_BOOL ? "%s%.0f" : "%s%.17g", i ? "," : "", v[i]);
    fprintf(py, "], [");
    for (int i = 0; i < tn_ndim(t); i++) fprintf(py, "%s%lld", i ? "," : "", (long long)tn_shape(t)[i]);
    fprintf(py, "], '%s')\n", dt == TN_BOOL ? "bool" : dt == TN_F32 ? "f32" : "f64");
    free(v);
}
static void py_sd(const char *var, tn_module *m) {
    tn_dict *sd = tn_module_state_dict(m);
    fprintf(py, "%s = {}\n", var);
    for (int i = 0; i < tn_dict_len(sd); i++) {
        py_t("_t", tn_dict_value(sd, i));
        fprintf(py, "%s['%s'] = _t\n", var, tn_dict_key(sd, i));
    }
    tn_dict_free(sd);
}
/* the torch side of one case: code lines run inside def case_<name>() */
static bool py_open;   /* a case's def line (and its module) already written by py_begin */
static void py_begin(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(py, fmt, ap);
    va_end(ap);
    py_open = true;
}
static void py_case(const char *name, const char *code) {
    if (!py_open) fprintf(py, "def case_%s():\n", name);
    fprintf(py, "%s\ncase('%s', case_%s)\n", code, name, name);
    py_open = false;
}

static void oracle_rnn_cases(void) {
    /* LSTM: 2 layers, bidirectional, batch_first, given states; outputs and gradients */
    tn_module *m = f64(tn_nn_lstm(3, 4, .num_layers = 2, .bidirectional = true, .batch_first = true));
    tn_tensor *x = leaf(RN(2, 5, 3)), *h0 = leaf(RN(4, 2, 4)), *c0 = leaf(RN(4, 2, 4)), *hn, *cn;
    tn_tensor *y = tn_nn_lstm_forward(m, x, h0, c0, &hn, &cn);
    py_sd("sd", m); py_t("x", x); py_t("h0", h0); py_t("c0", c0);
    want("lstm_y", y, 1e-10); want("lstm_hn", hn, 1e-10); want("lstm_cn", cn, 1e-10);
    CHECK(tn_backward(tn_add(tn_add(wsum(y), wsum(hn)), wsum(cn))) == 0);
    want("lstm_gx", tn_grad(x), 1e-9); want("lstm_gh0", tn_grad(h0), 1e-9); want("lstm_gc0", tn_grad(c0), 1e-9);
    want("lstm_gw", tn_grad(tn_module_get(m, "weight_hh_l1_reverse")), 1e-9); want("lstm_gb", tn_grad(tn_module_get(m, "bias_ih_l0")), 1e-9);
    py_begin("def case_lstm():\n    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("lstm_keys", m);
    py_case("lstm", "    X, H, C = x.clone().requires_grad_(), h0.clone().requires_grad_(), c0.clone().requires_grad_()\n"
                    "    y, (hn, cn) = m(X, (H, C))\n    R('lstm_y', y); R('lstm_hn', hn); R('lstm_cn', cn)\n"
                    "    (WS(y) + WS(hn) + WS(cn)).backward()\n    R('lstm_gx', X.grad); R('lstm_gh0', H.grad); R('lstm_gc0', C.grad)\n"
                    "    R('lstm_gw', m.weight_hh_l1_reverse.grad); R('lstm_gb', m.bias_ih_l0.grad)");
    tn_module_free(m);

    /* LSTM with projections, unbatched, zero states */
    m = f64(tn_nn_lstm(3, 5, .proj_size = 2, .num_layers = 2));
    x = RN(4, 3);
    y = tn_nn_lstm_forward(m, x, NULL, NULL, &hn, &cn);
    py_sd("sd", m); py_t("x", x);
    want("lstmp_y", y, 1e-10); want("lstmp_hn", hn, 1e-10); want("lstmp_cn", cn, 1e-10);
    py_begin("def case_lstmp():\n    m = nn.LSTM(3, 5, proj_size=2, num_layers=2).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("lstmp_keys", m);
    py_case("lstmp", "    y, (hn, cn) = m(x)\n    R('lstmp_y', y); R('lstmp_hn', hn); R('lstmp_cn', cn)");
    tn_module_free(m);

    /* float32 LSTM as built (no conversion) */
    m = tn_nn_lstm(3, 4);
    x = tn_randn(SH(5, 2, 3), TN_F32);
    y = tn_module_forward(m, x);
    py_sd("sd", m); py_t("x", x);
    want("lstm32_y", y, 2e-6);
    py_case("lstm32", "    m = nn.LSTM(3, 4)\n    m.load_state_dict(sd)\n    R('lstm32_y', m(x)[0])");
    tn_module_free(m);

    /* GRU: 2 layers, bidirectional, given h0; gradients */
    m = f64(tn_nn_gru(3, 4, .num_layers = 2, .bidirectional = true));
    x = leaf(RN(5, 2, 3)); h0 = leaf(RN(4, 2, 4));
    y = tn_nn_rnn_forward(m, x, h0, &hn);
    py_sd("sd", m); py_t("x", x); py_t("h0", h0);
    want("gru_y", y, 1e-10); want("gru_hn", hn, 1e-10);
    CHECK(tn_backward(tn_add(wsum(y), wsum(hn))) == 0);
    want("gru_gx", tn_grad(x), 1e-9); want("gru_gh0", tn_grad(h0), 1e-9); want("gru_gw", tn_grad(tn_module_get(m, "weight_hh_l0")), 1e-9);
    want("gru_gb", tn_grad(tn_module_get(m, "bias_hh_l1_reverse")), 1e-9);
    py_begin("def case_gru():\n    m = nn.GRU(3, 4, num_layers=2, bidirectional=True).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("gru_keys", m);
    py_case("gru", "    X, H = x.clone().requires_grad_(), h0.clone().requires_grad_()\n    y, hn = m(X, H)\n    R('gru_y', y); R('gru_hn', hn)\n"
                   "    (WS(y) + WS(hn)).backward()\n    R('gru_gx', X.grad); R('gru_gh0', H.grad); R('gru_gw', m.weight_hh_l0.grad); R('gru_gb', m.bias_hh_l1_reverse.grad)");
    tn_module_free(m);

    /* RNN relu, no bias, batch_first */
    m = f64(tn_nn_rnn(3, 4, .nonlinearity = TN_NONLINEARITY_RELU, .bias = false, .batch_first = true, .num_layers = 2));
    x = RN(2, 5, 3);
    y = tn_nn_rnn_forward(m, x, NULL, &hn);
    py_sd("sd", m); py_t("x", x);
    want("rnn_y", y, 1e-10); want("rnn_hn", hn, 1e-10);
    py_begin("def case_rnn():\n    m = nn.RNN(3, 4, nonlinearity='relu', bias=False, batch_first=True, num_layers=2).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("rnn_keys", m);
    py_case("rnn", "    y, hn = m(x)\n    R('rnn_y', y); R('rnn_hn', hn)");
    tn_module_free(m);

    /* cells */
    m = f64(tn_nn_lstm_cell(3, 4));
    x = RN(2, 3); h0 = RN(2, 4); c0 = RN(2, 4);
    y = tn_nn_lstm_cell_forward(m, x, h0, c0, &cn);
    py_sd("sd", m); py_t("x", x); py_t("h0", h0); py_t("c0", c0);
    want("lstmcell_h", y, 1e-12); want("lstmcell_c", cn, 1e-12);
    py_case("lstmcell", "    m = nn.LSTMCell(3, 4).double(); m.load_state_dict(sd)\n    h, c = m(x, (h0, c0))\n    R('lstmcell_h', h); R('lstmcell_c', c)");
    tn_module_free(m);
    m = f64(tn_nn_gru_cell(3, 4));
    x = RN(3); h0 = RN(4);
    y = tn_nn_gru_cell_forward(m, x, h0);
    py_sd("sd", m); py_t("x", x); py_t("h0", h0);
    want("grucell_h", y, 1e-12);
    py_case("grucell", "    m = nn.GRUCell(3, 4).double(); m.load_state_dict(sd)\n    R('grucell_h', m(x, h0))");
    tn_module_free(m);
    m = f64(tn_nn_rnn_cell(3, 4, .nonlinearity = TN_NONLINEARITY_RELU, .bias = false));
    x = RN(2, 3);
    y = tn_module_forward(m, x);
    py_sd("sd", m); py_t("x", x);
    want("rnncell_h", y, 1e-12);
    py_case("rnncell", "    m = nn.RNNCell(3, 4, nonlinearity='relu', bias=False).double(); m.load_state_dict(sd)\n    R('rnncell_h', m(x))");
    tn_module_free(m);
}

static void oracle_attention_cases(void) {
    /* seq-first, bool key padding + float attn_mask, averaged weights, gradients */
    tn_module *m = f64(tn_nn_multihead_attention(8, 2));
    tn_tensor *q = leaf(RN(3, 2, 8)), *k = RN(4, 2, 8), *v = RN(4, 2, 8), *am = RN(3, 4), *w;
    tn_tensor *kpm = tn_from_data((const bool[]){false, false, true, false, true, false, false, false}, SH(2, 4), TN_BOOL);
    tn_tensor *y = tn_nn_mha_forward(m, q, k, v, &w, .key_padding_mask = kpm, .attn_mask = am);
    py_sd("sd", m); py_t("q", q); py_t("k", k); py_t("v", v); py_t("am", am); py_t("kpm", kpm);
    want("mha1_y", y, 1e-10); want("mha1_w", w, 1e-10);
    CHECK(tn_backward(tn_add(wsum(y), wsum(w))) == 0);
    want("mha1_gq", tn_grad(q), 1e-9); want("mha1_gw", tn_grad(tn_module_get(m, "in_proj_weight")), 1e-9);
    want("mha1_gb", tn_grad(tn_module_get(m, "out_proj.bias")), 1e-9);
    py_begin("def case_mha1():\n    m = nn.MultiheadAttention(8, 2).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("mha1_keys", m);
    py_case("mha1", "    Q = q.clone().requires_grad_()\n    y, w = m(Q, k, v, key_padding_mask=kpm, need_weights=True, attn_mask=am)\n"
                    "    R('mha1_y', y); R('mha1_w', w)\n    (WS(y) + WS(w)).backward()\n"
                    "    R('mha1_gq', Q.grad); R('mha1_gw', m.in_proj_weight.grad); R('mha1_gb', m.out_proj.bias.grad)");
    tn_module_free(m);

    /* batch_first self-attention, 3-D bool attn_mask, per-head weights */
    m = f64(tn_nn_multihead_attention(8, 2, .batch_first = true));
    tn_tensor *x = RN(2, 3, 8), *m3 = tn_logical_and(tn_lt_scalar(tn_rand(SH(4, 3, 3), TN_F64), 0.4), tn_logical_not(tn_eye(3, 3, TN_BOOL)));
    y = tn_nn_mha_forward(m, x, x, x, &w, .attn_mask = m3, .average_attn_weights = false);
    py_sd("sd", m); py_t("x", x); py_t("m3", m3);
    want("mha2_y", y, 1e-10); want("mha2_w", w, 1e-10);
    py_case("mha2", "    m = nn.MultiheadAttention(8, 2, batch_first=True).double(); m.load_state_dict(sd)\n"
                    "    y, w = m(x, x, x, attn_mask=m3, average_attn_weights=False)\n    R('mha2_y', y); R('mha2_w', w)");
    tn_module_free(m);

    /* kdim, vdim, add_bias_kv, add_zero_attn, no bias, key padding */
    m = f64(tn_nn_multihead_attention(6, 3, .kdim = 5, .vdim = 4, .add_bias_kv = true, .add_zero_attn = true));
    q = RN(3, 2, 6); k = RN(4, 2, 5); v = RN(4, 2, 4);
    y = tn_nn_mha_forward(m, q, k, v, &w, .key_padding_mask = kpm);
    py_sd("sd", m); py_t("q", q); py_t("k", k); py_t("v", v);
    want("mha3_y", y, 1e-10); want("mha3_w", w, 1e-10);
    py_begin("def case_mha3():\n    m = nn.MultiheadAttention(6, 3, kdim=5, vdim=4, add_bias_kv=True, add_zero_attn=True).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("mha3_keys", m);
    py_case("mha3", "    y, w = m(q, k, v, key_padding_mask=kpm)\n    R('mha3_y', y); R('mha3_w', w)");
    tn_module_free(m);

    /* unbatched, 3-D bool mask [H, L, S] and 1-D key padding; no bias */
    m = f64(tn_nn_multihead_attention(4, 2, .bias = false));
    q = RN(3, 4); k = RN(5, 4);
    m3 = tn_from_data((const bool[]){0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0}, SH(2, 3, 5), TN_BOOL);
    tn_tensor *k1 = tn_from_data((const bool[]){0, 0, 0, 0, 1}, SH(5), TN_BOOL);
    y = tn_nn_mha_forward(m, q, k, k, &w, .key_padding_mask = k1, .attn_mask = m3);
    py_sd("sd", m); py_t("q", q); py_t("k", k); py_t("m3", m3); py_t("k1", k1);
    want("mha4_y", y, 1e-10); want("mha4_w", w, 1e-10);
    py_begin("def case_mha4():\n    m = nn.MultiheadAttention(4, 2, bias=False).double()\n    m.load_state_dict(sd)\n    ");
    want_keys("mha4_keys", m);
    py_case("mha4", "    y, w = m(q, k, k, key_padding_mask=k1, attn_mask=m3)\n    R('mha4_y', y); R('mha4_w', w)");
    tn_module_free(m);
}

static void oracle_transformer_cases(void) {
    /* encoder layer, post-norm, float causal mask and key padding; eval; gradients */
    tn_module *m = f64(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16));
    tn_module_eval(m);
    tn_tensor *x = leaf(RN(5, 2, 8)), *mask = tn_nn_generate_square_subsequent_mask(5, TN_F64);
    tn_tensor *kpm = tn_from_data((const bool[]){0, 0, 0, 0, 1, 0, 0, 1, 0, 0}, SH(2, 5), TN_BOOL);
    tn_tensor *y = tn_nn_transformer_encoder_layer_forward(m, x, .src_mask = mask, .src_key_padding_mask = kpm);
    py_sd("sd", m); py_t("x", x); py_t("kpm", kpm);
    want("enc1_y", y, 1e-10);
    want("enc1_causal", tn_nn_transformer_encoder_layer_forward(m, x, .src_key_padding_mask = kpm, .is_causal = true), 1e-10);
    CHECK(tn_backward(wsum(y)) == 0);
    want("enc1_gx", tn_grad(x), 1e-9); want("enc1_gw", tn_grad(tn_module_get(m, "linear1.weight")), 1e-9);
    want("enc1_gn", tn_grad(tn_module_get(m, "norm1.weight")), 1e-9);
    py_begin("def case_enc1():\n    m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16).double()\n    m.load_state_dict(sd); m.eval()\n    ");
    want_keys("enc1_keys", m);
    py_case("enc1", "    mask = nn.Transformer.generate_square_subsequent_mask(5).double()\n    X = x.clone().requires_grad_()\n"
                    "    y = m(X, src_mask=mask, src_key_padding_mask=kpm)\n    R('enc1_y', y); R('enc1_causal', y)\n    WS(y).backward()\n"
                    "    R('enc1_gx', X.grad); R('enc1_gw', m.linear1.weight.grad); R('enc1_gn', m.norm1.weight.grad)");
    tn_module_free(m);

    /* encoder layer, pre-norm, gelu, batch_first, another eps */
    m = f64(tn_nn_transformer_encoder_layer(8, 4, .dim_feedforward = 12, .norm_first = true, .activation = TN_ACTIVATION_GELU, .batch_first = true, .layer_norm_eps = 1e-3));
    tn_module_eval(m);
    x = RN(2, 5, 8);
    y = tn_nn_transformer_encoder_layer_forward(m, x, .src_key_padding_mask = kpm);
    py_sd("sd", m); py_t("x", x);
    want("enc2_y", y, 1e-10);
    py_case("enc2", "    m = nn.TransformerEncoderLayer(8, 4, dim_feedforward=12, norm_first=True, activation='gelu', batch_first=True, layer_norm_eps=1e-3).double()\n"
                    "    m.load_state_dict(sd); m.eval()\n    R('enc2_y', m(x, src_key_padding_mask=kpm))");
    tn_module_free(m);

    /* decoder layer, post-norm: causal tgt mask, both key paddings */
    for (int nf = 0; nf < 2; nf++) {
        char name[32], code[1024];
        m = f64(tn_nn_transformer_decoder_layer_str(8, 2, nf ? "dim_feedforward=16, norm_first=True, batch_first=True, activation='gelu'" : "dim_feedforward=16"));
        tn_module_eval(m);
        tn_tensor *tgt = nf ? RN(2, 4, 8) : RN(4, 2, 8), *mem = nf ? RN(2, 6, 8) : RN(6, 2, 8), *tm = tn_nn_generate_square_subsequent_mask(4, TN_F64);
        tn_tensor *tk = tn_from_data((const bool[]){0, 0, 1, 0, 0, 0, 0, 0}, SH(2, 4), TN_BOOL);
        tn_tensor *mk = tn_from_data((const bool[]){0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, SH(2, 6), TN_BOOL);
        tn_tensor *mm = RN(4, 6);
        y = tn_nn_transformer_decoder_layer_forward(m, tgt, mem, .tgt_mask = tm, .memory_mask = mm, .tgt_key_padding_mask = tk, .memory_key_padding_mask = mk);
        py_sd("sd", m); py_t("tgt", tgt); py_t("mem", mem); py_t("tk", tk); py_t("mk", mk); py_t("mm", mm);
        snprintf(name, sizeof name, "dec%d_y", nf);
        want(name, y, 1e-10);
        snprintf(name, sizeof name, "dec%d_causal", nf);
        want(name, tn_nn_transformer_decoder_layer_forward(m, tgt, mem, .memory_mask = mm, .tgt_key_padding_mask = tk, .memory_key_padding_mask = mk, .tgt_is_causal = true), 1e-10);
        py_begin("def case_dec%d():\n    m = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16%s).double()\n    m.load_state_dict(sd); m.eval()\n    ",
                nf, nf ? ", norm_first=True, batch_first=True, activation='gelu'" : "");
        snprintf(name, sizeof name, "dec%d_keys", nf);
        want_keys(name, m);
        snprintf(code, sizeof code, "    tm = nn.Transformer.generate_square_subsequent_mask(4).double()\n"
                                    "    y = m(tgt, mem, tgt_mask=tm, memory_mask=mm, tgt_key_padding_mask=tk, memory_key_padding_mask=mk)\n"
                                    "    R('dec%d_y', y); R('dec%d_causal', y)", nf, nf);
        snprintf(name, sizeof name, "dec%d", nf);
        py_case(name, code);
        tn_module_free(m);
    }

    /* the stacks, with a final norm */
    m = f64(tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .batch_first = true), 2, .norm = tn_nn_layer_norm(SH(8))));
    tn_module_eval(m);
    /* different weights per layer, as after training */
    tn_no_grad_begin();
    tn_add_scalar_(tn_module_get(m, "layers.1.linear1.weight"), 0.1);
    tn_no_grad_end();
    x = RN(2, 5, 8);
    y = tn_nn_transformer_encoder_forward(m, x, .src_key_padding_mask = kpm);
    py_sd("sd", m); py_t("x", x);
    want("encs_y", y, 1e-10);
    py_begin("def case_encs():\n    m = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True), 2, norm=nn.LayerNorm(8)).double()\n"
                "    m.load_state_dict(sd); m.eval()\n    ");
    want_keys("encs_keys", m);
    py_case("encs", "    R('encs_y', m(x, src_key_padding_mask=kpm))");
    tn_module_free(m);
    m = f64(tn_nn_transformer_decoder(tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 16), 3, .norm = tn_nn_layer_norm(SH(8))));
    tn_module_eval(m);
    tn_tensor *tgt = RN(4, 2, 8), *mem = RN(3, 2, 8);
    y = tn_nn_transformer_decoder_forward(m, tgt, mem, .tgt_is_causal = true);
    py_sd("sd", m); py_t("tgt", tgt); py_t("mem", mem);
    want("decs_y", y, 1e-10);
    py_begin("def case_decs():\n    m = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16), 3, norm=nn.LayerNorm(8)).double()\n"
                "    m.load_state_dict(sd); m.eval()\n    ");
    want_keys("decs_keys", m);
    py_case("decs", "    R('decs_y', m(tgt, mem, tgt_mask=nn.Transformer.generate_square_subsequent_mask(4).double()))");
    tn_module_free(m);
}

static want_t *find_want(const char *name) {
    for (int i = 0; i < nwants; i++) if (!strcmp(wants[i].name, name)) return &wants[i];
    return NULL;
}
TEST(test_against_torch) {
    if (access("/usr/bin/python3", X_OK) != 0) { printf("skipped: /usr/bin/python3 not found\n"); return; }
    BEGIN;
    char path[] = "/tmp/tn_test_rnn_XXXXXX";
    int fd = mkstemp(path);
    py = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!py) { printf("skipped: cannot write a temporary file\n"); tn_scope_end(); return; }
    fprintf(py, "import sys, warnings\nwarnings.simplefilter('ignore')\n"
                "try:\n    import torch, torch.nn as nn\nexcept Exception:\n    print('NOTORCH'); sys.exit(0)\n"
                "DT = {'f64': torch.float64, 'f32': torch.float32, 'bool': torch.bool}\n"
                "def T(v, shape, dt):\n    return torch.tensor(v, dtype=DT[dt]).reshape(shape)\n"
                "def R(name, t):\n    t = t.detach().double().flatten()\n    print('R', name, t.numel(), *['%%.17g' %% x for x in t.tolist()])\n"
                "def K(name, m):\n    print('K', name, len(m.state_dict()), *m.state_dict().keys())\n"
                "def WS(t):\n    w = 1 + 0.5 * torch.sin(torch.arange(1, t.numel() + 1, dtype=t.dtype))\n    return (t * w.reshape(t.shape)).sum()\n"
                "def case(name, fn):\n    try:\n        fn()\n    except Exception as e:\n        print('E', name, repr(e).replace(chr(10), ' '))\n");
    nwants = 0;
    oracle_rnn_cases();
    oracle_attention_cases();
    oracle_transformer_cases();
    fprintf(py, "print('DONE')\n");
    fclose(py);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s 2>&1", path);
    FILE *p = popen(cmd, "r");
    char *line = NULL;
    size_t cap = 0;
    int seen = 0;
    bool done = false, notorch = false;
    while (p && getline(&line, &cap, p) > 0) {
        line[strcspn(line, "\n")] = 0;
        if (!strcmp(line, "NOTORCH")) { notorch = true; break; }
        if (!strcmp(line, "DONE")) { done = true; continue; }
        char *save = NULL, *kind = strtok_r(line, " ", &save), *name = strtok_r(NULL, " ", &save);
        if (!kind || !name) continue;
        if (!strcmp(kind, "E")) { CHECK_MSG(0, "torch failed in case %s: %s", name, save ? save : ""); continue; }
        want_t *w = find_want(name);
        if (!w) { CHECK_MSG(0, "torch printed %s, which we did not compute", name); continue; }
        long n = strtol(strtok_r(NULL, " ", &save), NULL, 10);
        seen++;
        if (!strcmp(kind, "K")) {
            CHECK_MSG(w->keys && !strcmp(w->keys + 1, save ? save : ""), "%s: ours\n  %s\ntorch's\n  %s", name, w->keys ? w->keys + 1 : "", save ? save : "");
            continue;
        }
        double *vals = (double *)malloc((size_t)(n + 1) * sizeof(double));
        for (long i = 0; i < n; i++) { char *tok = strtok_r(NULL, " ", &save); vals[i] = tok ? strtod(tok, NULL) : NAN; }
        char what[80];
        snprintf(what, sizeof what, "%s (vs torch)", name);
        if (w->t) check_arr_(w->t, vals, n, w->tol, what, __LINE__);
        free(vals);
    }
    free(line);
    if (p) pclose(p);
    if (getenv("TN_KEEP_PY")) printf("script: %s\n", path); else remove(path);
    if (notorch) printf("skipped: torch is not importable by /usr/bin/python3\n");
    else {
        CHECK_MSG(done, "the torch script did not finish");
        CHECK_MSG(seen == nwants, "torch answered %d of %d results", seen, nwants);
    }
    for (int i = 0; i < nwants; i++) { tn_release(wants[i].t); free(wants[i].keys); }
    nwants = 0;
    END;
}

/* ------------------------------------------------------------------------------------ */
/* 4. initialisation, names, repr, copies, errors                                          */
/* ------------------------------------------------------------------------------------ */
/* U(-bound, bound): every value within the bound and the largest close to it, mean ~ 0,
   variance ~ bound^2 / 3 */
static void check_uniform_(tn_tensor *const *ts, int n, double bound, const char *what, int line) {
    double sum = 0, sq = 0, mx = 0;
    int64_t cnt = 0;
    for (int i = 0; i < n; i++) {
        int64_t m;
        double *v = tdata(ts[i], &m);
        for (int64_t j = 0; j < m; j++) { sum += v[j]; sq += v[j] * v[j]; if (fabs(v[j]) > mx) mx = fabs(v[j]); }
        cnt += m;
        free(v);
    }
    double mean = sum / (double)cnt, var = sq / (double)cnt - mean * mean, sd_mean = bound / sqrt(3.0 * (double)cnt);
    /* tolerances: about 8 standard errors of each statistic for cnt draws */
    if (!(mx <= bound * (1 + 1e-6) && mx > bound * (1 - 8.0 / (double)cnt))) fail_at(line, "%s: max |w| = %g, bound %g", what, mx, bound);
    else if (!(fabs(mean) < 8 * sd_mean)) fail_at(line, "%s: mean %g (%lld values, sd %g)", what, mean, (long long)cnt, sd_mean);
    else if (!(fabs(var / (bound * bound / 3) - 1) < 8 * sqrt(0.8 / (double)cnt))) fail_at(line, "%s: variance %g, expected %g", what, var, bound * bound / 3);
    else tn_test_passed++;
}
static void all_params(tn_module *m, tn_tensor **out, int *n) {
    tn_dict *d = tn_module_named_parameters(m);
    *n = tn_dict_len(d);
    for (int i = 0; i < *n; i++) out[i] = tn_dict_value(d, i);
    tn_dict_free(d);   /* the module keeps them alive */
}
TEST(test_init) {
    BEGIN;
    tn_tensor *ps[64];
    int n;
    tn_module *m = tn_nn_lstm(20, 16, .num_layers = 2, .bidirectional = true);
    all_params(m, ps, &n);
    CHECK(n == 16 && tn_get_dtype(ps[0]) == TN_F32 && tn_requires_grad(ps[0]));
    check_uniform_(ps, n, 0.25, "LSTM", __LINE__);
    for (int i = 0; i < n; i++) check_uniform_(ps + i, 1, 0.25, "one LSTM parameter", __LINE__);   /* biases too */
    tn_module_free(m);
    m = tn_nn_gru_str(30, 25, "proj_size=0, bias=True");   /* proj_size is LSTM only, even 0: PyTorch refuses the keyword */
    CHECK(m == NULL);
    m = tn_nn_gru_cell(30, 25);
    all_params(m, ps, &n);
    check_uniform_(ps, n, 0.2, "GRUCell", __LINE__);
    tn_module_free(m);
    m = tn_nn_rnn(10, 100, .nonlinearity = TN_NONLINEARITY_RELU);
    all_params(m, ps, &n);
    check_uniform_(ps, n, 0.1, "RNN", __LINE__);
    tn_module_free(m);
    m = tn_nn_lstm(8, 9, .proj_size = 4);
    all_params(m, ps, &n);
    check_uniform_(ps, n, 1 / 3.0, "LSTM with projections", __LINE__);
    tn_module_free(m);
    /* MHA: xavier_uniform in_proj_weight [3E, E]: bound sqrt(6 / (E + 3E)); zero biases; out_proj as Linear */
    m = tn_nn_multihead_attention(64, 4);
    tn_tensor *w = tn_module_get(m, "in_proj_weight");
    CHECK_SHAPE(w, 192, 64);
    check_uniform_(&w, 1, sqrt(6.0 / 256), "in_proj_weight", __LINE__);
    w = tn_module_get(m, "out_proj.weight");
    check_uniform_(&w, 1, 1 / 8.0, "out_proj.weight", __LINE__);
    CHECK(tn_item(tn_sum(tn_abs(tn_module_get(m, "in_proj_bias")))) == 0 && tn_item(tn_sum(tn_abs(tn_module_get(m, "out_proj.bias")))) == 0);
    tn_module_free(m);
    m = tn_nn_multihead_attention(256, 4, .kdim = 100, .vdim = 50, .add_bias_kv = true);
    w = tn_module_get(m, "k_proj_weight");
    CHECK_SHAPE(w, 256, 100);
    check_uniform_(&w, 1, sqrt(6.0 / 356), "k_proj_weight", __LINE__);
    w = tn_module_get(m, "v_proj_weight");
    check_uniform_(&w, 1, sqrt(6.0 / 306), "v_proj_weight", __LINE__);
    tn_tensor *bk = tn_module_get(m, "bias_k");   /* xavier_normal over [1, 1, E]: std 1/sqrt(E) */
    CHECK_SHAPE(bk, 1, 1, 256);
    CHECK_CLOSE(tn_item(tn_std(bk)), 1 / 16.0, 0.015);
    tn_module_free(m);
    /* the transformer layer: Linear's init, LayerNorm ones and zeros */
    m = tn_nn_transformer_encoder_layer(32, 4, .dim_feedforward = 64);
    w = tn_module_get(m, "linear2.weight");
    check_uniform_(&w, 1, 1 / 8.0, "linear2.weight", __LINE__);
    CHECK(tn_item(tn_sum(tn_module_get(m, "norm1.weight"))) == 32 && tn_item(tn_sum(tn_abs(tn_module_get(m, "norm2.bias")))) == 0);
    CHECK(tn_item(tn_sum(tn_abs(tn_module_get(m, "self_attn.in_proj_bias")))) == 0);
    tn_module_free(m);
    END;
}

TEST(test_names_and_repr) {
    BEGIN;
    tn_module *m = tn_nn_lstm(10, 20, .num_layers = 2, .batch_first = true);
    CHECK_REPR(m, "LSTM(10, 20, num_layers=2, batch_first=True)");
    CHECK_KEYS(m, "weight_ih_l0 weight_hh_l0 bias_ih_l0 bias_hh_l0 weight_ih_l1 weight_hh_l1 bias_ih_l1 bias_hh_l1");
    CHECK_SHAPE(tn_module_get(m, "weight_ih_l1"), 80, 20);
    tn_module_free(m);
    m = tn_nn_lstm(4, 3, .num_layers = 2, .bidirectional = true, .proj_size = 2);
    CHECK_REPR(m, "LSTM(4, 3, proj_size=2, num_layers=2, bidirectional=True)");
    CHECK_KEYS(m, "weight_ih_l0 weight_hh_l0 bias_ih_l0 bias_hh_l0 weight_hr_l0 weight_ih_l0_reverse weight_hh_l0_reverse bias_ih_l0_reverse "
                  "bias_hh_l0_reverse weight_hr_l0_reverse weight_ih_l1 weight_hh_l1 bias_ih_l1 bias_hh_l1 weight_hr_l1 weight_ih_l1_reverse "
                  "weight_hh_l1_reverse bias_ih_l1_reverse bias_hh_l1_reverse weight_hr_l1_reverse");
    CHECK_SHAPE(tn_module_get(m, "weight_ih_l1_reverse"), 12, 4);
    CHECK_SHAPE(tn_module_get(m, "weight_hh_l1"), 12, 2);
    CHECK_SHAPE(tn_module_get(m, "weight_hr_l0"), 2, 3);
    tn_module_free(m);
    m = tn_nn_rnn(4, 3, .nonlinearity = TN_NONLINEARITY_RELU, .dropout = 0.5, .num_layers = 2, .bias = false);
    CHECK_REPR(m, "RNN(4, 3, num_layers=2, bias=False, dropout=0.5)");
    CHECK_KEYS(m, "weight_ih_l0 weight_hh_l0 weight_ih_l1 weight_hh_l1");
    tn_module_free(m);
    m = tn_nn_gru(5, 6, .bidirectional = true);
    CHECK_REPR(m, "GRU(5, 6, bidirectional=True)");
    CHECK_KEYS(m, "weight_ih_l0 weight_hh_l0 bias_ih_l0 bias_hh_l0 weight_ih_l0_reverse weight_hh_l0_reverse bias_ih_l0_reverse bias_hh_l0_reverse");
    CHECK_SHAPE(tn_module_get(m, "weight_hh_l0_reverse"), 18, 6);
    tn_module_free(m);
    m = tn_nn_rnn_cell(2, 3, .nonlinearity = TN_NONLINEARITY_RELU);
    CHECK_REPR(m, "RNNCell(2, 3, nonlinearity=relu)");
    CHECK_KEYS(m, "weight_ih weight_hh bias_ih bias_hh");
    tn_module_free(m);
    m = tn_nn_gru_cell(3, 4, .bias = false);
    CHECK_REPR(m, "GRUCell(3, 4, bias=False)");
    CHECK_KEYS(m, "weight_ih weight_hh");
    tn_module_free(m);
    m = tn_nn_lstm_cell(3, 4);
    CHECK_REPR(m, "LSTMCell(3, 4)");
    CHECK_SHAPE(tn_module_get(m, "weight_hh"), 16, 4);
    tn_module_free(m);
    m = tn_nn_multihead_attention(4, 2);
    CHECK_REPR(m, "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)\n)");
    CHECK_KEYS(m, "in_proj_weight in_proj_bias out_proj.weight out_proj.bias");
    tn_module_free(m);
    m = tn_nn_multihead_attention(4, 2, .kdim = 3, .vdim = 5, .add_bias_kv = true, .bias = false);
    CHECK_KEYS(m, "q_proj_weight k_proj_weight v_proj_weight bias_k bias_v out_proj.weight");
    tn_module_free(m);
    m = tn_nn_transformer_encoder_layer(4, 2, .dim_feedforward = 8);
    CHECK_REPR(m, "TransformerEncoderLayer(\n"
                  "  (self_attn): MultiheadAttention(\n"
                  "    (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)\n"
                  "  )\n"
                  "  (linear1): Linear(in_features=4, out_features=8, bias=True)\n"
                  "  (dropout): Dropout(p=0.1, inplace=False)\n"
                  "  (linear2): Linear(in_features=8, out_features=4, bias=True)\n"
                  "  (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
                  "  (norm2): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
                  "  (dropout1): Dropout(p=0.1, inplace=False)\n"
                  "  (dropout2): Dropout(p=0.1, inplace=False)\n"
                  ")");
    CHECK_KEYS(m, "self_attn.in_proj_weight self_attn.in_proj_bias self_attn.out_proj.weight self_attn.out_proj.bias linear1.weight linear1.bias "
                  "linear2.weight linear2.bias norm1.weight norm1.bias norm2.weight norm2.bias");
    tn_module_free(m);
    m = tn_nn_transformer_decoder_layer(4, 2, .dim_feedforward = 8, .bias = false);
    CHECK_KEYS(m, "self_attn.in_proj_weight self_attn.out_proj.weight multihead_attn.in_proj_weight multihead_attn.out_proj.weight linear1.weight "
                  "linear2.weight norm1.weight norm2.weight norm3.weight");
    const char *want[11] = {"self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "norm3", "dropout1", "dropout2", "dropout3"};
    CHECK(tn_module_num_children(m) == 11);
    for (int i = 0; i < 11; i++) {
        const char *nm = NULL;
        tn_module_child_at(m, i, &nm);
        CHECK_MSG(nm && !strcmp(nm, want[i]), "child %d is %s, expected %s", i, nm ? nm : "(none)", want[i]);
    }
    tn_module_free(m);
    m = tn_nn_transformer_decoder(tn_nn_transformer_decoder_layer(4, 2, .dim_feedforward = 8), 2);
    CHECK(m && tn_module_child(m, "norm") == NULL && tn_module_num_children(tn_module_child(m, "layers")) == 2);
    CHECK(!strcmp(tn_module_name(m), "TransformerDecoder") && !strcmp(tn_module_name(tn_module_child(m, "layers")), "ModuleList"));
    CHECK(tn_module_get(m, "layers.1.multihead_attn.out_proj.bias") != NULL);
    tn_module_free(m);
    END;
}

/* the stacks deep-copy the layer: equal values, separate storage, flags kept; the layer is freed */
TEST(test_stack_copies) {
    BEGIN;
    tn_module *layer = tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16);
    tn_requires_grad_(tn_module_get(layer, "linear1.bias"), false);   /* a frozen parameter stays frozen */
    tn_module_eval(layer);
    tn_dict *orig = tn_module_state_dict(layer), *copy = tn_dict_new();
    for (int i = 0; i < tn_dict_len(orig); i++) tn_dict_set(copy, tn_dict_key(orig, i), tn_clone(tn_dict_value(orig, i)));
    tn_dict_free(orig);
    tn_module *enc = tn_nn_transformer_encoder(layer, 3, .norm = tn_nn_layer_norm(SH(8)));
    CHECK(enc != NULL);
    tn_dict *sd = tn_module_state_dict(enc);
    CHECK(tn_dict_len(sd) == 3 * tn_dict_len(copy) + 2);
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < tn_dict_len(copy); i++) {
            char key[128];
            snprintf(key, sizeof key, "layers.%d.%s", l, tn_dict_key(copy, i));
            tn_tensor *t = tn_dict_get(sd, key);
            CHECK_MSG(t && tn_equal(t, tn_dict_value(copy, i)), "%s differs from the layer's", key);
        }
    CHECK(!tn_same_storage(tn_module_get(enc, "layers.0.linear1.weight"), tn_module_get(enc, "layers.1.linear1.weight")));
    CHECK(!tn_requires_grad(tn_module_get(enc, "layers.2.linear1.bias")) && tn_requires_grad(tn_module_get(enc, "layers.2.linear1.weight")));
    CHECK(!tn_module_child(enc, "layers.1")->training && !tn_module_child(enc, "layers.1.dropout")->training);
    tn_no_grad_begin();
    tn_fill_(tn_module_get(enc, "layers.0.linear2.bias"), 7);
    tn_no_grad_end();
    CHECK(tn_item(tn_max(tn_module_get(enc, "layers.1.linear2.bias"))) < 7);
    CHECK(strcmp(tn_module_name(tn_module_child(enc, "layers.2.self_attn.out_proj")), "NonDynamicallyQuantizableLinear") == 0);
    tn_dict_free(sd);
    tn_dict_free(copy);
    tn_module_free(enc);
    /* zero layers, no norm: the input itself */
    enc = tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(4, 1), 0);
    tn_tensor *x = tn_randn(SH(2, 3, 4), TN_F32), *y = tn_module_forward(enc, x);
    CHECK(y == x);
    tn_module_free(enc);
    /* a module of another type cannot be a stack's layer; both are freed */
    CHECK_ERR(tn_nn_transformer_encoder(tn_nn_linear(4, 4), 2, .norm = tn_nn_layer_norm(SH(4))), "tn_nn_transformer_encoder: expected a TransformerEncoderLayer, got Linear");
    CHECK_ERR(tn_nn_transformer_decoder(tn_nn_transformer_encoder_layer(4, 2), 2), "tn_nn_transformer_decoder: expected a TransformerDecoderLayer, got TransformerEncoderLayer");
    CHECK_ERR(tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(4, 2), -1), "num_layers must be non-negative");
    CHECK_ERR(tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(4, 3), 2), "tn_nn_transformer_encoder_layer: embed_dim must be divisible by num_heads");
    END;
}

TEST(test_errors) {
    BEGIN;
    /* options */
    CHECK_ERR(tn_nn_rnn_str(3, 4, "nonlinearity='sigmoid'"), "tn_nn_rnn: option nonlinearity='sigmoid': expected one of tanh|relu");
    CHECK_ERR(tn_nn_lstm_str(3, 4, "nonlinearity='relu'"), "tn_nn_lstm: unknown option 'nonlinearity'");
    CHECK_ERR(tn_nn_gru(3, 4, .proj_size = 2), "tn_nn_gru: proj_size argument is only supported for LSTM, not RNN or GRU");
    CHECK_ERR(tn_nn_lstm(3, 4, .proj_size = 4), "tn_nn_lstm: proj_size has to be smaller than hidden_size");
    CHECK_ERR(tn_nn_lstm(3, 4, .proj_size = -1), "proj_size should be a positive integer or zero");
    CHECK_ERR(tn_nn_gru(3, 4, .dropout = 1.5), "tn_nn_gru: dropout should be a number in range [0, 1]");
    CHECK_ERR(tn_nn_rnn(3, 4, .num_layers = 0), "tn_nn_rnn: num_layers must be greater than zero");
    CHECK_ERR(tn_nn_rnn(3, 0), "tn_nn_rnn: hidden_size must be greater than zero");
    CHECK_ERR(tn_nn_lstm_str(3, 4, "num_layers=1.5"), "expected an integer");
    CHECK_ERR(tn_nn_lstm_str(3, 4, "bidirectional=maybe"), "expected True or False");
    CHECK_ERR(tn_nn_lstm_cell_str(3, 4, "num_layers=2"), "tn_nn_lstm_cell: unknown option 'num_layers' (valid: bias)");
    CHECK_ERR(tn_nn_rnn_cell_str(3, 4, "nonlinearity=gelu"), "expected one of tanh|relu");
    CHECK_ERR(tn_nn_multihead_attention(5, 2), "tn_nn_multihead_attention: embed_dim must be divisible by num_heads (got embed_dim=5, num_heads=2)");
    CHECK_ERR(tn_nn_multihead_attention(4, 0), "must be positive");
    CHECK_ERR(tn_nn_multihead_attention(4, 2, .dropout = 2), "dropout probability has to be between 0 and 1");
    CHECK_ERR(tn_nn_multihead_attention(4, 2, .kdim = 0), "kdim (0) and vdim (4) must be positive");
    CHECK_ERR(tn_nn_multihead_attention_str(4, 2, "num_heads=2"), "unknown option 'num_heads'");
    CHECK_ERR(tn_nn_transformer_encoder_layer(8, 3), "tn_nn_transformer_encoder_layer: embed_dim must be divisible by num_heads");
    CHECK_ERR(tn_nn_transformer_encoder_layer_str(8, 2, "activation='tanh'"), "option activation='tanh': expected one of relu|gelu");
    CHECK_ERR(tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 0), "tn_nn_transformer_decoder_layer: dim_feedforward must be positive");
    CHECK_ERR(tn_nn_transformer_decoder_layer(8, 2, .dropout = -0.1), "dropout probability has to be between 0 and 1");
    CHECK_ERR(tn_nn_transformer_encoder_layer_str(8, 2, "nhead=2"), "unknown option 'nhead'");
    CHECK_ERR(tn_nn_generate_square_subsequent_mask(-1, TN_F32), "sz must be non-negative");
    CHECK_ERR(tn_nn_generate_square_subsequent_mask(3, TN_I64), "dtype must be floating");

    /* RNN forwards */
    tn_module *lstm = tn_nn_lstm(3, 4, .num_layers = 2), *gru = tn_nn_gru(3, 4, .bidirectional = true);
    tn_tensor *x = tn_randn(SH(5, 2, 3), TN_F32), *hn = x, *cn = x;
    CHECK_ERR(tn_nn_lstm_forward(lstm, tn_randn(SH(5, 2, 4), TN_F32), NULL, NULL, &hn, &cn), "LSTM: input.size(-1) must be equal to input_size. Expected 3, got 4");
    CHECK(hn == NULL && cn == NULL);
    CHECK_ERR(tn_nn_lstm_forward(lstm, x, tn_zeros(SH(1, 2, 4), TN_F32), tn_zeros(SH(2, 2, 4), TN_F32), NULL, NULL), "LSTM: Expected hidden[0] size (2, 2, 4), got [1, 2, 4]");
    CHECK_ERR(tn_nn_lstm_forward(lstm, x, tn_zeros(SH(2, 2, 4), TN_F32), tn_zeros(SH(2, 3, 4), TN_F32), NULL, NULL), "LSTM: Expected hidden[1] size (2, 2, 4), got [2, 3, 4]");
    CHECK_ERR(tn_nn_lstm_forward(lstm, x, tn_zeros(SH(2, 4), TN_F32), tn_zeros(SH(2, 4), TN_F32), NULL, NULL), "LSTM: for batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors");
    CHECK_ERR(tn_nn_lstm_forward(lstm, x, tn_zeros(SH(2, 2, 4), TN_F32), NULL, NULL, NULL), "LSTM: give both h0 and c0");
    CHECK_ERR(tn_nn_lstm_forward(lstm, tn_randn(SH(5, 2, 3, 1), TN_F32), NULL, NULL, NULL, NULL), "LSTM: expected input to be 2-D or 3-D but received 4-D tensor");
    CHECK_ERR(tn_nn_lstm_forward(lstm, tn_ones(SH(5, 2, 3), TN_I64), NULL, NULL, NULL, NULL), "LSTM: input must be a floating dtype, got int64");
    CHECK_ERR(tn_nn_lstm_forward(lstm, tn_randn(SH(5, 2, 3), TN_F64), NULL, NULL, NULL, NULL), "LSTM: input (float64) and weight_ih_l0 (float32) must have the same dtype");
    CHECK_ERR(tn_nn_lstm_forward(lstm, tn_randn(SH(0, 2, 3), TN_F32), NULL, NULL, NULL, NULL), "LSTM: the sequence length must be positive");
    CHECK_ERR(tn_nn_rnn_forward(gru, x, tn_zeros(SH(2, 3, 4), TN_F32), &hn), "GRU: Expected hidden size (2, 2, 4), got [2, 3, 4]");
    CHECK_ERR(tn_nn_rnn_forward(gru, tn_randn(SH(5, 3), TN_F32), tn_zeros(SH(2, 1, 4), TN_F32), NULL), "GRU: for unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
    CHECK_ERR(tn_nn_rnn_forward(gru, x, tn_zeros(SH(2, 2, 4), TN_F64), NULL), "GRU: input (float32) and hx (float64) must have the same dtype");
    CHECK_ERR(tn_nn_rnn_forward(lstm, x, NULL, NULL), "tn_nn_rnn_forward: expected an RNN or GRU module, got LSTM");
    CHECK_ERR(tn_nn_lstm_forward(gru, x, NULL, NULL, NULL, NULL), "tn_nn_lstm_forward: expected an LSTM module, got GRU");
    CHECK_ERR(tn_nn_rnn_forward(NULL, x, NULL, NULL), "tn_nn_rnn_forward: expected an RNN or GRU module, got NULL");
    CHECK_ERR(tn_module_forward(gru, tn_randn(SH(5, 2, 2), TN_F32)), "GRU: input.size(-1) must be equal to input_size. Expected 3, got 2");
    /* NULL passes through without a message */
    tn_clear_error();
    CHECK(tn_nn_lstm_forward(lstm, NULL, NULL, NULL, &hn, NULL) == NULL && hn == NULL && tn_last_error()[0] == 0);
    CHECK(tn_nn_rnn_forward(gru, NULL, NULL, NULL) == NULL && tn_last_error()[0] == 0);
    tn_module_free(lstm);
    tn_module_free(gru);

    /* cells */
    tn_module *cell = tn_nn_lstm_cell(4, 3), *rc = tn_nn_rnn_cell(4, 3);
    tn_tensor *cx = x;
    CHECK_ERR(tn_nn_lstm_cell_forward(cell, tn_randn(SH(2, 5), TN_F32), NULL, NULL, &cx), "LSTMCell: input has inconsistent input_size: got 5 expected 4");
    CHECK(cx == NULL);
    CHECK_ERR(tn_nn_lstm_cell_forward(cell, tn_randn(SH(2, 4), TN_F32), tn_zeros(SH(3, 3), TN_F32), tn_zeros(SH(3, 3), TN_F32), NULL), "LSTMCell: Input batch size 2 doesn't match hidden0 batch size 3");
    CHECK_ERR(tn_nn_lstm_cell_forward(cell, tn_randn(SH(2, 4), TN_F32), tn_zeros(SH(2, 3), TN_F32), tn_zeros(SH(2, 5), TN_F32), NULL), "LSTMCell: hidden1 has inconsistent hidden_size: got 5, expected 3");
    CHECK_ERR(tn_nn_lstm_cell_forward(cell, tn_randn(SH(2, 4), TN_F32), tn_zeros(SH(2, 3), TN_F32), NULL, NULL), "LSTMCell: give both h and c");
    CHECK_ERR(tn_nn_rnn_cell_forward(rc, tn_randn(SH(2, 2, 4), TN_F32), NULL), "RNNCell: expected input to be 1-D or 2-D but received 3-D tensor");
    CHECK_ERR(tn_nn_rnn_cell_forward(rc, tn_randn(SH(4), TN_F32), tn_zeros(SH(1, 3), TN_F32)), "RNNCell: for unbatched 1-D input [4], hidden0 should also be 1-D but got [1, 3]");
    CHECK_ERR(tn_nn_gru_cell_forward(cell, tn_randn(SH(2, 4), TN_F32), NULL), "tn_nn_gru_cell_forward: expected an RNNCell or GRUCell module, got LSTMCell");
    CHECK_ERR(tn_nn_lstm_cell_forward(rc, tn_randn(SH(2, 4), TN_F32), NULL, NULL, NULL), "tn_nn_lstm_cell_forward: expected an LSTMCell module, got RNNCell");
    tn_module_free(cell);
    tn_module_free(rc);
    tn_tensor *w1 = tn_randn(SH(6, 3), TN_F32), *w2 = tn_randn(SH(6, 2), TN_F32), *h = tn_zeros(SH(2, 2), TN_F32), *xx = tn_randn(SH(2, 3), TN_F32);
    CHECK_ERR(tn_gru_cell(xx, h, w1, tn_randn(SH(6, 3), TN_F32), NULL, NULL), "tn_gru_cell: weight_ih [6, 3] and weight_hh [6, 3] must be [3*hidden_size, input_size] and [3*hidden_size, hidden_size]");
    CHECK_ERR(tn_lstm_cell(xx, h, h, w1, w2, NULL, NULL, NULL), "tn_lstm_cell: weight_ih [6, 3] and weight_hh [6, 2] must be [4*hidden_size");
    CHECK_ERR(tn_gru_cell(xx, h, w1, w2, tn_zeros(SH(5), TN_F32), NULL), "tn_gru_cell: bias_ih [5] must be [6] (3*hidden_size)");
    CHECK_ERR(tn_rnn_tanh_cell(tn_randn(SH(2, 3), TN_F64), tn_zeros(SH(2, 6), TN_F64), w1, tn_randn(SH(6, 6), TN_F32), NULL, NULL), "tn_rnn_tanh_cell: input (float64) and weight_ih (float32) must have the same dtype");
    tn_clear_error();
    CHECK(tn_gru_cell(xx, NULL, w1, w2, NULL, NULL) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_lstm_cell(xx, h, NULL, w1, w2, NULL, NULL, &cx) == NULL && cx == NULL && tn_last_error()[0] == 0);

    /* attention */
    tn_module *mha = tn_nn_multihead_attention(8, 2);
    tn_tensor *q = tn_randn(SH(3, 2, 8), TN_F32), *k = tn_randn(SH(4, 2, 8), TN_F32), *wt = q;
    CHECK_ERR(tn_nn_mha_forward(mha, tn_randn(SH(3, 2, 6), TN_F32), k, k, &wt), "MultiheadAttention: was expecting embedding dimension of 8, but got 6");
    CHECK(wt == NULL);
    CHECK_ERR(tn_nn_mha_forward(mha, q, k, k, NULL, .need_weights = false, .attn_mask = tn_zeros(SH(3, 3), TN_F32)), "MultiheadAttention: The shape of the 2D attn_mask is [3, 3], but should be [3, 4].");
    CHECK_ERR(tn_nn_mha_forward(mha, q, k, k, NULL, .need_weights = false, .attn_mask = tn_zeros(SH(2, 3, 4), TN_BOOL)), "The shape of the 3D attn_mask is [2, 3, 4], but should be [4, 3, 4].");
    CHECK_ERR(tn_nn_mha_forward(mha, q, k, k, NULL, .need_weights = false, .attn_mask = tn_zeros(SH(3, 4), TN_I64)), "only float and bool types are supported for attn_mask, not int64");
    CHECK_ERR(tn_nn_mha_forward(mha, q, k, k, NULL, .key_padding_mask = tn_zeros(SH(2, 3), TN_BOOL), .need_weights = false), "MultiheadAttention: expecting key_padding_mask shape of [2, 4], but got [2, 3]");
    CHECK_ERR(tn_nn_mha_forward(mha, q, k, k, NULL, .key_padding_mask = tn_zeros(SH(2, 4), TN_I32), .need_weights = false), "only bool and floating types of key_padding_mask are supported, got int32");
    CHECK_ERR(tn_nn_mha_forward(mha, q, k, tn_randn(SH(5, 2, 8), TN_F32), NULL, .need_weights = false), "must agree in batch size, and key and value in sequence length");
    CHECK_ERR(tn_nn_mha_forward(mha, q, tn_randn(SH(4, 8), TN_F32), k, NULL, .need_weights = false), "for batched (3-D) query, expected key and value to be 3-D but found 2-D and 3-D tensors respectively");
    CHECK_ERR(tn_nn_mha_forward(mha, tn_randn(SH(8), TN_F32), k, k, NULL, .need_weights = false), "query should be unbatched 2D or batched 3D tensor but received 1-D query tensor");
    CHECK_ERR(tn_nn_mha_forward(mha, tn_randn(SH(3, 8), TN_F32), tn_randn(SH(4, 8), TN_F32), tn_randn(SH(4, 8), TN_F32), NULL, .key_padding_mask = tn_zeros(SH(1, 4), TN_BOOL), .need_weights = false),
              "expecting key_padding_mask shape of [4], but got [1, 4]");
    CHECK_ERR(tn_nn_mha_forward(mha, tn_randn(SH(3, 2, 8), TN_F64), tn_randn(SH(4, 2, 8), TN_F64), tn_randn(SH(4, 2, 8), TN_F64), NULL, .need_weights = false),
              "MultiheadAttention: input (float64) and in_proj_weight (float32) must have the same dtype");
    CHECK_ERR(tn_nn_mha_forward(lstm = tn_nn_linear(8, 8), q, k, k, NULL, .need_weights = false), "tn_nn_mha_forward: expected a MultiheadAttention module, got Linear");
    tn_module_free(lstm);
    CHECK_ERR(tn_module_forward(mha, q), "tn_module_forward: MultiheadAttention has no single-input forward");
    tn_clear_error();
    CHECK(tn_nn_mha_forward(mha, q, NULL, k, NULL, .need_weights = false) == NULL && tn_last_error()[0] == 0);
    tn_module_free(mha);

    /* transformer layers: errors name the layer, then the block that failed */
    tn_module *enc = tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16), *dec = tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 16, .norm_first = true);
    CHECK_ERR(tn_module_forward(enc, tn_randn(SH(3, 2, 6), TN_F32)), "TransformerEncoderLayer: MultiheadAttention: was expecting embedding dimension of 8, but got 6");
    CHECK_ERR(tn_nn_transformer_encoder_layer_forward(enc, q, .src_mask = tn_zeros(SH(2, 2), TN_F32)), "TransformerEncoderLayer: MultiheadAttention: The shape of the 2D attn_mask is [2, 2], but should be [3, 3].");
    CHECK_ERR(tn_nn_transformer_decoder_layer_forward(dec, q, tn_randn(SH(4, 2, 6), TN_F32)), "TransformerDecoderLayer: MultiheadAttention: key [4, 2, 6] and value [4, 2, 6] must have kdim=8 and vdim=8 features");
    CHECK_ERR(tn_nn_transformer_decoder_layer_forward(dec, tn_randn(SH(3, 2, 6), TN_F32), k), "TransformerDecoderLayer: LayerNorm:");
    CHECK_ERR(tn_nn_transformer_decoder_layer_forward(enc, q, k), "tn_nn_transformer_decoder_layer_forward: expected a TransformerDecoderLayer, got TransformerEncoderLayer");
    CHECK_ERR(tn_module_forward(dec, q), "tn_module_forward: TransformerDecoderLayer has no single-input forward");
    tn_module *stack = tn_nn_transformer_encoder(enc, 2);
    CHECK_ERR(tn_nn_transformer_encoder_forward(stack, q, .src_key_padding_mask = tn_zeros(SH(3, 2), TN_BOOL)), "TransformerEncoder: TransformerEncoderLayer: MultiheadAttention: expecting key_padding_mask shape of [2, 3], but got [3, 2]");
    CHECK_ERR(tn_nn_transformer_decoder_forward(stack, q, k), "tn_nn_transformer_decoder_forward: expected a TransformerDecoder, got TransformerEncoder");
    tn_clear_error();
    CHECK(tn_nn_transformer_encoder_forward(stack, NULL) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_nn_transformer_decoder_layer_forward(dec, q, NULL) == NULL && tn_last_error()[0] == 0);
    tn_module_free(stack);
    tn_module_free(dec);
    END;
}

int main(void) {
    tn_memory_stats start = tn_memory_stats_get();
    RUN(test_rnn_vs_reference);
    RUN(test_rnn_dropout);
    RUN(test_cells);
    RUN(test_mha_vs_reference);
    RUN(test_transformer_wiring);
    RUN(test_gradcheck);
    RUN(test_training);
    RUN(test_init);
    RUN(test_names_and_repr);
    RUN(test_stack_copies);
    RUN(test_errors);
    RUN(test_against_torch);
    tn_memory_stats end = tn_memory_stats_get();
    tn_test_current = "main";
    CHECK_MSG(end.live_tensors == start.live_tensors, "leak: %lld live tensors at start, %lld at end", (long long)start.live_tensors, (long long)end.live_tensors);
    return tn_test_report();
}
