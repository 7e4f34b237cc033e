/* test_jit22.c — issue 22's remainders: graph ops recorded as one node so they replay and
 * export (average pooling, the recurrent layers' fused recurrences).
 *
 *  1. AvgPool2d / AvgPool1d (padding, count_include_pad, ceil_mode, strides) trace as one
 *     aten::avg_pool2d node (not the composite's im2col): the replay equals eager exactly,
 *     gradients through a replay equal eager's, and the ONNX export (AveragePool) loads back
 *     to the eager output.
 *  2. LSTM, GRU and RNN (tanh, relu) layers, one or two layers, bidirectional, batch_first,
 *     trace as tn::lstm_recurrence / tn::rnn_recurrence nodes: replay equals eager, a
 *     saved and loaded graph too, gradients through the replay equal eager's; the ONNX
 *     export (LSTM / GRU / RNN operators) loads back to the eager output.
 *     (bindings/python/tests/test_jit22_onnx.py: onnx.checker on these files, and
 *     PyTorch's own exports of LSTM / GRU / RNN models run here.)
 *  3. The static memory plan: under no_grad the second run of a graph records its storages,
 *     later runs serve them from one arena: a steady run of the MLP, the CNN and a
 *     transformer encoder and an LSTM (optimised and not) allocates no storage (tn_memory_allocations)
 *     and equals eager; an output the caller holds is never overwritten by the next run,
 *     and outlives its graph; a run that makes storages differently from the plan (a
 *     strided input, another batch) is still right and plans anew.
 *  4. The optimised replay's residual add + layer norm in one pass (a chain with a second
 *     reader, an add with alpha, strided and empty operands not fused or run unfused), and
 *     constant weights packed once (the GEMM's panels of a linear layer's weight, the
 *     Winograd transform of a 3x3 convolution's): replays equal eager bit for bit, also
 *     after the weights change in place; a steady replay allocates nothing.
 *  5. conv2d (+ ReLU) + a 2x2, stride-2 max pool run as one pass by the replay (the small-K
 *     and Winograd paths, float32 and float64, even and odd sizes, batch 0 and 1, strided
 *     and NaN inputs, the portable rows): bit for bit against eager and the unfused replay;
 *     pools of other geometry and a ReLU read twice are not planned; convs that take other
 *     paths at run time (strided, dilated, im2col) run unfused and stay right.
 * Each test runs in a forked child (RUN_ISOLATED) and must give back every tensor. */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

#define TN_JIT_TEST_TMP "/tmp/tn_jit22"
#include "tn_jit_test.h"
static int count_op(const tn_graph *g, const char *op) {
    int c = 0;
    for (int i = 0; i < tn_graph_num_nodes(g); i++) c += !strcmp(tn_graph_node_op(g, i), op);
    return c;
}
static tn_tensor *eager(tn_module *m, tn_tensor *x) {
    tn_no_grad_begin();
    tn_tensor *y = tn_module_forward(m, x);
    tn_no_grad_end();
    return y;
}
/* The graph's replay, a saved-and-loaded copy and the ONNX round trip of m traced on x,
   each on x2 (a non-contiguous view too), against eager; the gradient of sum(y * w) with
   respect to the input through the replay against eager's. Returns the graph (caller
   frees) or NULL. */
static tn_graph *check_all(int line, tn_module *m, tn_tensor *x, tn_tensor *x2, double tol_onnx, const char *file) {
    tn_module_eval(m);
    tn_graph *g = tn_jit_trace_module(m, x);
    if (!g) { fail_at(line, "trace %s: %s", tn_module_name(m), tn_last_error()); return NULL; }
    tn_tensor *want = eager(m, x2);
    tn_tensor *got = tn_graph_forward(g, x2);
    double d = maxdiff(got, want);
    CHECK_MSG(d == 0, "line %d: %s: replay differs from eager by %g (%s)", line, tn_module_name(m), d, got ? "" : tn_last_error());
    /* a non-contiguous input of the same shape */
    int64_t tshape[8];
    const int nd = tn_ndim(x2);
    memcpy(tshape, tn_shape(x2), (size_t)nd * sizeof(int64_t));
    tshape[0] *= 2;
    tn_tensor *xs = tn_slice(rnd(tshape, nd), 0, 0, tshape[0], 2);
    d = maxdiff(tn_graph_forward(g, xs), eager(m, xs));
    CHECK_MSG(d == 0, "line %d: %s: replay on a strided input differs by %g", line, tn_module_name(m), d);
    /* save / load */
    char path[256];
    snprintf(path, sizeof path, "%s/%s.tng", tmpdir(), file);
    tn_graph *h = tn_graph_save(g, path) ? NULL : tn_graph_load(path);
    d = h ? maxdiff(tn_graph_forward(h, x2), want) : INFINITY;
    CHECK_MSG(d == 0, "line %d: %s: saved and loaded graph differs by %g (%s)", line, tn_module_name(m), d, h ? "" : tn_last_error());
    tn_graph_free(h);
    /* ONNX */
    snprintf(path, sizeof path, "%s/%s.onnx", tmpdir(), file);
    h = tn_onnx_export(g, path, .input_names = "x", .output_names = "y") ? NULL : tn_onnx_load(path);
    d = h ? maxdiff(tn_graph_forward(h, x2), want) : INFINITY;
    CHECK_MSG(d <= tol_onnx, "line %d: %s: ONNX round trip differs by %g (%s)", line, tn_module_name(m), d, h ? "" : tn_last_error());
    tn_graph_free(h);
    /* gradients through the replay */
    tn_tensor *xa = tn_clone(x2), *xb = tn_clone(x2);
    tn_requires_grad_(xa, true);
    tn_requires_grad_(xb, true);
    tn_tensor *w = tn_randn_like(want);
    tn_tensor *ya = tn_graph_forward(g, xa), *yb = tn_module_forward(m, xb);
    if (ya && yb && !tn_backward(tn_sum(tn_mul(ya, w))) && !tn_backward(tn_sum(tn_mul(yb, w)))) {
        d = maxdiff(tn_grad(xa), tn_grad(xb));
        CHECK_MSG(d <= 1e-6, "line %d: %s: gradient through the replay differs by %g", line, tn_module_name(m), d);
    } else fail_at(line, "%s: backward failed: %s", tn_module_name(m), tn_last_error());
    return g;
}

TEST(test_avg_pool_one_node) {
    begin();
    struct { tn_module *m; int64_t shape[4]; int nd; } cases[] = {
        {tn_nn_avg_pool2d(2), {2, 3, 8, 8}, 4},
        {tn_nn_avg_pool2d(3, .stride = 2, .padding = 1), {2, 3, 9, 9}, 4},
        {tn_nn_avg_pool2d(3, .stride = 2, .padding = 1, .count_include_pad = false), {1, 2, 7, 6}, 4},
        {tn_nn_avg_pool2d(2, .ceil_mode = true), {2, 2, 7, 7}, 4},
        {tn_nn_avg_pool2d(3, .stride = 1), {1, 1, 5, 5}, 4},
        {tn_nn_avg_pool2d_str(2, "stride=(1, 2), padding=(1, 0)"), {2, 3, 6, 7}, 4},
        {tn_nn_avg_pool1d(3, .stride = 2, .padding = 1), {2, 3, 9}, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char file[32];
        snprintf(file, sizeof file, "pool%zu", i);
        tn_graph *g = check_all(__LINE__, cases[i].m, rnd(cases[i].shape, cases[i].nd), rnd(cases[i].shape, cases[i].nd), 1e-6, file);
        CHECK_MSG(g && count_op(g, "aten::avg_pool2d") == 1 && count_op(g, "aten::im2col") == 0, "case %zu: avg_pool2d is not one node", i);
        tn_graph_free(g);
        tn_module_free(cases[i].m);
    }
    /* divisor_override has no ONNX or graph form: still traced (the composite), still replays */
    tn_module *m = tn_nn_avg_pool2d(2, .divisor_override = 3);
    tn_tensor *x = rnd(TN_SHAPE(1, 2, 4, 4));
    tn_graph *g = tn_jit_trace_module(m, x);
    CHECK(g && count_op(g, "aten::avg_pool2d") == 0 && maxdiff(tn_graph_forward(g, x), eager(m, x)) == 0);
    tn_graph_free(g);
    tn_module_free(m);
    /* a CNN with average pooling exports whole */
    tn_module *cnn = tn_nn_sequential(tn_nn_conv2d(1, 4, 3, .padding = 1), tn_nn_relu(), tn_nn_avg_pool2d(2), tn_nn_conv2d(4, 8, 3, .padding = 1), tn_nn_gelu(),
                                      tn_nn_avg_pool2d(2), tn_nn_flatten(), tn_nn_linear(8 * 4 * 4, 10));
    g = check_all(__LINE__, cnn, rnd(TN_SHAPE(2, 1, 16, 16)), rnd(TN_SHAPE(2, 1, 16, 16)), 1e-5, "cnn_avg");
    CHECK(g && count_op(g, "aten::avg_pool2d") == 2);
    tn_graph_free(g);
    tn_module_free(cnn);
    end(__LINE__);
}

TEST(test_recurrent_layers) {
    begin();
    struct { tn_module *rnn; int64_t out; const char *op; int nodes; bool batch_first; } cases[] = {
        {tn_nn_lstm(6, 5), 5, "tn::lstm_recurrence", 1, false},
        {tn_nn_lstm(6, 5, .num_layers = 2, .bidirectional = true), 10, "tn::lstm_recurrence", 4, false},
        {tn_nn_lstm(6, 4, .batch_first = true, .bias = false), 4, "tn::lstm_recurrence", 1, true},
        {tn_nn_gru(6, 5), 5, "tn::rnn_recurrence", 1, false},
        {tn_nn_gru(6, 5, .num_layers = 2, .bidirectional = true, .batch_first = true), 10, "tn::rnn_recurrence", 4, true},
        {tn_nn_gru(6, 3, .bias = false), 3, "tn::rnn_recurrence", 1, false},
        {tn_nn_rnn(6, 5, .bidirectional = true), 10, "tn::rnn_recurrence", 2, false},
        {tn_nn_rnn(6, 5, .nonlinearity = TN_NONLINEARITY_RELU, .num_layers = 2), 5, "tn::rnn_recurrence", 2, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char file[32];
        snprintf(file, sizeof file, "rnn%zu", i);
        tn_module *m = tn_nn_sequential(cases[i].rnn, tn_nn_linear(cases[i].out, 3));
        const int64_t s[3] = {cases[i].batch_first ? 3 : 4, cases[i].batch_first ? 4 : 3, 6};
        tn_graph *g = check_all(__LINE__, m, rnd(s, 3), rnd(s, 3), 1e-5, file);
        CHECK_MSG(g && count_op(g, cases[i].op) == cases[i].nodes, "case %zu: %d %s nodes, expected %d", i, g ? count_op(g, cases[i].op) : -1, cases[i].op, cases[i].nodes);
        tn_graph_free(g);
        tn_module_free(m);
    }
    /* the printout names the op and its attributes */
    tn_module *m = tn_nn_gru(2, 2);
    tn_graph *g = tn_jit_trace_module(m, rnd(TN_SHAPE(3, 1, 2)));
    char *s = g ? tn_graph_str(g) : NULL;
    CHECK(s && strstr(s, "tn::rnn_recurrence(") && strstr(s, "mode=GRU, reverse=False"));
    tn_string_free(s);
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

static tn_module *make_model(int which) {
    if (which == 0) return tn_nn_sequential(tn_nn_linear(32, 64), tn_nn_relu(), tn_nn_linear(64, 64), tn_nn_gelu(), tn_nn_linear(64, 10));
    if (which == 1)
        return tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu(), tn_nn_max_pool2d(2),
                                tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_batch_norm2d(16), tn_nn_relu(), tn_nn_avg_pool2d(2),
                                tn_nn_flatten(), tn_nn_dropout(.p = 0.25), tn_nn_linear(16 * 7 * 7, 32), tn_nn_relu(), tn_nn_linear(32, 10));
    if (which == 2) return tn_nn_transformer_encoder_layer(32, 4, .dim_feedforward = 64, .batch_first = true);
    return tn_nn_sequential(tn_nn_lstm(16, 32, .num_layers = 2), tn_nn_linear(32, 8));   /* its output: a view (reshape) of addmm's */
}
static const int64_t model_shape[4][4] = {{8, 32}, {4, 1, 28, 28}, {2, 10, 32}, {6, 3, 16}};
static const int model_ndim[4] = {2, 4, 3, 3};

TEST(test_memory_plan) {
    begin();
    for (int which = 0; which < 4; which++)
        for (int opt = 0; opt < 2; opt++) {
            tn_module *m = make_model(which);
            tn_module_eval(m);
            const int64_t *shape = model_shape[which];
            const int nd = model_ndim[which];
            tn_tensor *x = rnd(shape, nd);
            tn_graph *g = tn_jit_trace_module(m, x);
            if (!g) { fail_at(__LINE__, "trace: %s", tn_last_error()); tn_module_free(m); continue; }
            if (opt && tn_graph_optimize(g) < 0) fail_at(__LINE__, "optimize: %s", tn_last_error());
            tn_no_grad_begin();
            tn_tensor *xs[4];
            for (int r = 0; r < 4; r++) xs[r] = rnd(shape, nd);
            for (int r = 0; r < 3; r++) {   /* the warm-up run, the planning run, the first run served (it allocates the arena) */
                tn_scope_begin();
                double d = maxdiff(tn_graph_forward(g, xs[r]), tn_module_forward(m, xs[r]));
                CHECK_MSG(d <= 1e-5, "model %d opt %d run %d: differs from eager by %g", which, opt, r, d);
                tn_scope_end();
            }
            CHECK_MSG(tn_graph_arena_bytes(g) > 0, "model %d opt %d: no plan after two runs", which, opt);
            /* a steady run: no storage allocated; the output (released) right */
            tn_tensor *want = tn_module_forward(m, xs[2]);
            for (int r = 0; r < 3; r++) {
                tn_scope_begin();
                const int64_t a0 = tn_memory_allocations();
                tn_tensor *y = tn_graph_forward(g, xs[2]);
                const int64_t allocs = tn_memory_allocations() - a0;
                CHECK_MSG(allocs == 0, "model %d opt %d: a steady run allocated %lld storages", which, opt, (long long)allocs);
                double d = maxdiff(y, want);
                CHECK_MSG(d <= 1e-5, "model %d opt %d: planned run differs from eager by %g", which, opt, d);
                tn_scope_end();
            }
            /* outputs held across runs are not overwritten */
            tn_tensor *y2 = tn_graph_forward(g, xs[2]);
            tn_tensor *y3 = tn_graph_forward(g, xs[3]);
            tn_tensor *y2b = tn_graph_forward(g, xs[2]);
            double d2 = maxdiff(y2, want), d3 = maxdiff(y3, tn_module_forward(m, xs[3]));
            CHECK_MSG(d2 <= 1e-5 && d3 <= 1e-5 && maxdiff(y2b, y2) == 0 && tn_data_ptr(y2) != tn_data_ptr(y3),
                      "model %d opt %d: held outputs overwritten (%g, %g)", which, opt, d2, d3);
            /* a strided input (the ops copy it: storages differ from the plan) */
            int64_t big[4];
            memcpy(big, shape, (size_t)nd * sizeof(int64_t));
            big[nd - 1] *= 2;
            tn_tensor *xst = tn_slice(rnd(big, nd), nd - 1, 0, big[nd - 1], 2);
            double ds = maxdiff(tn_graph_forward(g, xst), tn_module_forward(m, xst));
            CHECK_MSG(ds <= 1e-5, "model %d opt %d: strided input after the plan differs by %g", which, opt, ds);
            for (int r = 0; r < 4; r++) {   /* planned anew (or still served): right */
                double d = maxdiff(tn_graph_forward(g, xs[r]), tn_module_forward(m, xs[r]));
                CHECK_MSG(d <= 1e-5, "model %d opt %d: run after the strided one differs by %g", which, opt, d);
            }
            tn_no_grad_end();
            /* outputs outlive the graph (the arena is refcounted by what it serves) */
            tn_graph_free(g);
            CHECK_MSG(maxdiff(y2, want) <= 1e-5, "model %d opt %d: output changed after the graph was freed", which, opt);
            tn_module_free(m);
        }
    end(__LINE__);
}

TEST(test_memory_plan_dynamic_batch_and_grad) {
    begin();
    tn_module *m = make_model(1);
    tn_module_eval(m);
    tn_graph *g = tn_jit_trace_module(m, rnd(TN_SHAPE(4, 1, 28, 28)));
    if (g) tn_graph_set_dynamic(g, 0, 0);
    tn_no_grad_begin();
    const int64_t batches[] = {4, 4, 4, 4, 2, 2, 2, 2, 7, 4, 4, 4};
    for (size_t i = 0; g && i < sizeof batches / sizeof *batches; i++) {
        tn_scope_begin();
        tn_tensor *x = rnd(TN_SHAPE(batches[i], 1, 28, 28));
        const int64_t a0 = tn_memory_allocations();
        tn_tensor *y = tn_graph_forward(g, x);
        const int64_t allocs = tn_memory_allocations() - a0;
        double d = maxdiff(y, tn_module_forward(m, x));
        CHECK_MSG(d <= 1e-5, "run %zu (batch %lld) differs by %g", i, (long long)batches[i], d);
        if (i == 3 || i == 7 || i == 11) CHECK_MSG(allocs == 0, "run %zu (batch %lld): %lld allocations", i, (long long)batches[i], (long long)allocs);
        tn_scope_end();
    }
    tn_no_grad_end();
    /* with grad: no plan; gradients as eager */
    tn_tensor *x = rnd(TN_SHAPE(2, 1, 28, 28));
    tn_requires_grad_(x, true);
    tn_tensor *y = g ? tn_graph_forward(g, x) : NULL;
    CHECK(y && !tn_backward(tn_sum(y)) && tn_grad(x));
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

/* ---- elementwise fusion ---- */
static tn_tensor *chain_bias_gelu(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_gelu(tn_add(in[0], in[1])); }
static tn_tensor *chain_swish(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_mul(in[0], tn_sigmoid(in[0])); }
static tn_tensor *chain_residual(tn_tensor *const *in, int n, void *user) {   /* (x + y) * 0.5, tanh, - 1, relu */
    (void)n; (void)user;
    return tn_relu(tn_sub_scalar(tn_tanh(tn_mul_scalar(tn_add(in[0], in[1]), 0.5)), 1.0));
}
static tn_tensor *chain_long(tn_tensor *const *in, int n, void *user) {   /* 10 members, parameters, a tensor divisor, a second use of x */
    (void)n; (void)user;
    tn_tensor *x = in[0], *t = tn_elu(tn_mul(x, in[1]), .alpha = 0.7);
    t = tn_leaky_relu(tn_add_alpha(t, x, 0.3), .negative_slope = 0.05);
    t = tn_clamp(tn_pow_scalar(t, 2.0), .min = -1.0, .max = 3.0);
    t = tn_div(t, in[2]);
    return tn_maximum(tn_exp(tn_neg(t)), x);
}
/* An intermediate read twice ends a chain (its storage, the sum's 24 bytes inline, the fused output). */
static tn_tensor *chain_branch(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *a = tn_sigmoid(in[0]);
    return tn_add(tn_tanh(a), tn_sum_dims(a, TN_SHAPE(-1), .keepdim = true));
}
/* Two chains read one value, and the one planned first runs last (at the div): the value lives
   to that chain's run (it was released after the sigmoid, the last reader in node order). */
static tn_tensor *chain_shared(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *a = tn_gelu(tn_add(in[0], in[1]));
    return tn_div(tn_square(tn_tanh(a)), tn_add_scalar(tn_sigmoid(a), 1.0));
}
typedef struct { const char *name; tn_jit_trace_fn fn; int nin; int64_t shapes[3][4]; int nd[3]; int fused, storages; } fcase;

static void check_fused(int line, const fcase *c, tn_dtype dt) {
    tn_tensor *ex[3], *ins[3], *strided[3];
    for (int i = 0; i < c->nin; i++) {
        ex[i] = tn_to_dtype(rnd(c->shapes[i], c->nd[i]), dt);
        ins[i] = tn_to_dtype(rnd(c->shapes[i], c->nd[i]), dt);
        int64_t big[4];
        memcpy(big, c->shapes[i], sizeof big);
        big[0] *= 2;
        strided[i] = tn_slice(tn_to_dtype(rnd(big, c->nd[i]), dt), 0, 1, big[0], 2);   /* non-contiguous, same shape */
    }
    if (!strcmp(c->name, "long")) for (int i = 0; i < 3; i++) { ins[i] = tn_add_scalar(tn_abs(ins[i]), 0.5); strided[i] = tn_add_scalar(tn_abs(strided[i]), 0.5); ex[i] = tn_add_scalar(tn_abs(ex[i]), 0.5); }
    tn_graph *g = tn_jit_trace(c->fn, NULL, ex, c->nin, NULL);
    if (!g) { fail_at(line, "%s: trace: %s", c->name, tn_last_error()); return; }
    const int fused = tn_graph_fused_nodes(g);
    CHECK_MSG(fused == c->fused, "%s: %d nodes fused, expected %d", c->name, fused, c->fused);
    for (int k = 0; k < 2; k++) {
        tn_tensor **xs = k ? strided : ins;
        tn_tensor *want = c->fn(xs, c->nin, NULL), *unfused = NULL, *got = NULL;
        if (tn_graph_run(g, xs, c->nin, &unfused, 1) < 0) unfused = NULL;   /* grad enabled: the members one by one */
        tn_no_grad_begin();
        const int64_t a0 = tn_memory_allocations();
        if (tn_graph_run(g, xs, c->nin, &got, 1) < 0) got = NULL;
        const int64_t allocs = tn_memory_allocations() - a0;
        tn_no_grad_end();
        const double d1 = maxdiff(got, want), d2 = maxdiff(got, unfused);
        CHECK_MSG(d1 == 0 && d2 == 0, "%s (%s, %s input): fused replay differs from eager by %g, from the unfused replay by %g (%s)", c->name, tn_dtype_name(dt),
                  k ? "strided" : "contiguous", d1, d2, got ? "" : tn_last_error());
        if (k == 0) CHECK_MSG(allocs == c->storages, "%s: the fused replay made %lld storages, expected %d", c->name, (long long)allocs, c->storages);
    }
    tn_graph_free(g);
}

TEST(test_elementwise_fusion) {
    begin();
    const fcase cases[] = {
        {"bias_gelu", chain_bias_gelu, 2, {{16, 48}, {48}}, {2, 1}, 2, 1},
        {"swish", chain_swish, 1, {{3, 5, 40}}, {3}, 2, 1},
        {"residual", chain_residual, 2, {{4, 64}, {4, 64}}, {2, 2}, 5, 1},
        {"long", chain_long, 3, {{2, 3, 33}, {33}, {2, 1, 33}}, {3, 1, 3}, 10, 1},
        {"branch", chain_branch, 1, {{6, 20}}, {2}, 2, 2},   /* sigmoid is read twice: tanh and add fuse, sigmoid does not */
        {"shared", chain_shared, 2, {{5, 16}, {16}}, {2, 1}, 7, 3},   /* add-gelu, tanh-square-div, sigmoid-add */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_fused(__LINE__, &cases[i], TN_F32);
        check_fused(__LINE__, &cases[i], TN_F64);
    }
    /* a dynamic batch, and gradients through a fused graph's replay (grad enabled: unfused) */
    tn_tensor *ex[2] = {rnd(TN_SHAPE(4, 64)), rnd(TN_SHAPE(1, 64))};
    tn_graph *g = tn_jit_trace(chain_residual, NULL, ex, 2, NULL);
    CHECK(g && tn_graph_set_dynamic(g, 0, 0) == 0);
    tn_tensor *x7[2] = {rnd(TN_SHAPE(7, 64)), rnd(TN_SHAPE(1, 64))}, *y = NULL;
    tn_no_grad_begin();
    CHECK(g && tn_graph_run(g, x7, 2, &y, 1) == 1 && maxdiff(y, chain_residual(x7, 2, NULL)) == 0);
    tn_no_grad_end();
    tn_requires_grad_(x7[0], true);
    CHECK(g && tn_graph_run(g, x7, 2, &y, 1) == 1 && tn_backward(tn_sum(y)) == 0 && tn_grad(x7[0]));
    tn_graph_free(g);
    CHECK_ERR(tn_graph_fused_nodes(NULL) >= 0, "the graph is NULL");
    end(__LINE__);
}

/* Replay after optimisation (folding, fusion, the memory plan) equals replay before, for
   every example model: the unoptimised graph's replay with grad enabled (no fusion, no
   plan) against the optimised graph's no_grad replay, over several runs. */
TEST(test_optimised_replay_equals_replay) {
    begin();
    for (int which = 0; which < 4; which++) {
        tn_module *m = make_model(which);
        tn_module_eval(m);
        tn_tensor *x = rnd(model_shape[which], model_ndim[which]);
        tn_graph *g = tn_jit_trace_module(m, x), *h = tn_jit_trace_module(m, x);
        if (!g || !h || tn_graph_optimize(h) < 0) { fail_at(__LINE__, "model %d: %s", which, tn_last_error()); tn_graph_free(g); tn_graph_free(h); tn_module_free(m); continue; }
        for (int r = 0; r < 5; r++) {
            tn_tensor *xr = rnd(model_shape[which], model_ndim[which]);
            tn_tensor *before = tn_graph_forward(g, xr);
            tn_no_grad_begin();
            tn_tensor *after = tn_graph_forward(h, xr);
            tn_no_grad_end();
            const double d = maxdiff(after, before);
            CHECK_MSG(d <= 1e-5, "model %d run %d: optimised replay differs by %g", which, r, d);
        }
        tn_graph_free(g);
        tn_graph_free(h);
        tn_module_free(m);
    }
    end(__LINE__);
}

/* ---- the residual add and layer norm in one pass ---- */
static tn_tensor *ln_add(tn_tensor *const *in, int n, void *user) {   /* layer_norm(x + y) over the last dim, with weight and bias */
    (void)user;
    const int64_t d = tn_shape(in[0])[tn_ndim(in[0]) - 1];
    return tn_layer_norm(tn_add(in[0], in[1]), &d, 1, .weight = n > 2 ? in[2] : NULL, .bias = n > 3 ? in[3] : NULL, .eps = 1e-3);
}
static tn_tensor *ln_add2(tn_tensor *const *in, int n, void *user) {   /* over the last two dims, no affine */
    (void)n; (void)user;
    const int64_t *s = tn_shape(in[0]);
    return tn_layer_norm(tn_add(in[0], in[1]), s + 1, 2);
}
static tn_tensor *ln_add_reread(tn_tensor *const *in, int n, void *user) {   /* the sum read twice: not fused */
    (void)n; (void)user;
    const int64_t d = tn_shape(in[0])[tn_ndim(in[0]) - 1];
    tn_tensor *s = tn_add(in[0], in[1]);
    return tn_sub(tn_layer_norm(s, &d, 1), s);
}
static tn_tensor *ln_add_alpha(tn_tensor *const *in, int n, void *user) {   /* x + 2 y: not fused */
    (void)n; (void)user;
    const int64_t d = tn_shape(in[0])[tn_ndim(in[0]) - 1];
    return tn_layer_norm(tn_add_alpha(in[0], in[1], 2.0), &d, 1);
}
static tn_tensor *ln_residual(tn_tensor *const *in, int n, void *user) {   /* layer_norm(x + linear(x)): a transformer's residual */
    (void)n;
    tn_tensor **w = (tn_tensor **)user;
    const int64_t d = tn_shape(in[0])[tn_ndim(in[0]) - 1];
    return tn_layer_norm(tn_add(in[0], tn_linear(in[0], w[0], w[1])), &d, 1);
}
static bool same_bits22(tn_tensor *a, tn_tensor *b) {
    return a && b && tn_get_dtype(a) == tn_get_dtype(b) && tn_ndim(a) == tn_ndim(b) && !memcmp(tn_shape(a), tn_shape(b), (size_t)tn_ndim(a) * sizeof(int64_t)) &&
           (tn_numel(a) == 0 || !memcmp(tn_data_ptr(tn_contiguous(a)), tn_data_ptr(tn_contiguous(b)), (size_t)tn_numel(a) * tn_dtype_size(tn_get_dtype(a))));
}
/* fn traced on inputs of shapes sh (nin of them, nd dims each; the first two the add's):
   fused count, and no_grad replays (contiguous, 4 runs: warm-up, plan, served, steady; then
   strided add operands) bit for bit against eager and the grad-enabled (unfused) replay. */
static void check_ln_add(int line, const char *name, tn_jit_trace_fn fn, int nin, const int64_t (*sh)[4], const int *nd, tn_dtype dt, int fused) {
    tn_tensor *ex[4], *ins[4], *st[4];
    for (int i = 0; i < nin; i++) {
        ex[i] = tn_to_dtype(rnd(sh[i], nd[i]), dt);
        ins[i] = tn_to_dtype(rnd(sh[i], nd[i]), dt);
        int64_t big[4];
        memcpy(big, sh[i], sizeof big);
        big[nd[i] - 1] *= 2;
        st[i] = i < 2 ? tn_slice(tn_to_dtype(rnd(big, nd[i]), dt), nd[i] - 1, 0, big[nd[i] - 1], 2) : ins[i];   /* strided add operands */
    }
    tn_graph *g = tn_jit_trace(fn, NULL, ex, nin, NULL);
    if (!g) { fail_at(line, "%s: trace: %s", name, tn_last_error()); return; }
    const int f = tn_graph_fused_nodes(g);
    if (fused >= 0) CHECK_MSG(f == fused, "line %d: %s: %d nodes fused, expected %d", line, name, f, fused);
    for (int k = 0; k < 5; k++) {
        tn_scope_begin();   /* the previous run's output released: the plan serves this one's */
        tn_tensor **xs = k == 4 ? st : ins, *unfused = NULL, *got = NULL;
        tn_tensor *want = fn(xs, nin, NULL);
        if (tn_graph_run(g, xs, nin, &unfused, 1) < 0) unfused = NULL;   /* grad enabled: node by node */
        tn_no_grad_begin();
        const int64_t a0 = tn_memory_allocations();
        if (tn_graph_run(g, xs, nin, &got, 1) < 0) got = NULL;
        const int64_t allocs = tn_memory_allocations() - a0;
        tn_no_grad_end();
        CHECK_MSG(same_bits22(got, want) && same_bits22(got, unfused), "line %d: %s (%s, run %d): replay differs from eager by %g, from the unfused replay by %g (%s)", line,
                  name, tn_dtype_name(dt), k, maxdiff(got, want), maxdiff(got, unfused), got ? "" : tn_last_error());
        if (k == 3 && tn_numel(ins[0]) > 0) CHECK_MSG(allocs == 0, "line %d: %s: a steady replay allocated %lld storages", line, name, (long long)allocs);
        tn_scope_end();
    }
    tn_graph_free(g);
}
TEST(test_residual_layer_norm) {
    begin();
    const int64_t sh[4][4] = {{6, 5, 48}, {6, 5, 48}, {48}, {48}}, sh2[2][4] = {{3, 4, 33}, {3, 4, 33}}, sh0[4][4] = {{0, 16}, {0, 16}, {16}, {16}};
    const int nd[4] = {3, 3, 1, 1}, nd0[4] = {2, 2, 1, 1};
    for (int d = 0; d < 2; d++) {
        const tn_dtype dt = d ? TN_F64 : TN_F32;
        check_ln_add(__LINE__, "add+layer_norm", ln_add, 4, sh, nd, dt, 2);
        check_ln_add(__LINE__, "add+layer_norm, no affine", ln_add, 2, sh, nd, dt, 2);
        check_ln_add(__LINE__, "add+layer_norm over 2 dims", ln_add2, 2, sh2, nd, dt, 2);
        check_ln_add(__LINE__, "add+layer_norm, empty", ln_add, 4, sh0, nd0, dt, -1);   /* 0 rows: traced as the norm's composite */
        check_ln_add(__LINE__, "sum read twice", ln_add_reread, 2, sh, nd, dt, 0);
        check_ln_add(__LINE__, "add with alpha", ln_add_alpha, 2, sh, nd, dt, 0);
    }
    /* a 1-d sum (one row) */
    const int64_t sh1[2][4] = {{40}, {40}};
    const int nd1[2] = {1, 1};
    check_ln_add(__LINE__, "1-d", ln_add, 2, sh1, nd1, TN_F32, 2);
    /* a transformer's residual (x + linear(x)) at a dynamic batch, over several runs */
    tn_tensor *w[2] = {rnd(TN_SHAPE(24, 24)), rnd(TN_SHAPE(24))}, *ex = rnd(TN_SHAPE(4, 24));
    tn_graph *g = tn_jit_trace(ln_residual, w, &ex, 1, NULL);
    CHECK(g && tn_graph_set_dynamic(g, 0, 0) == 0 && tn_graph_fused_nodes(g) == 2);
    tn_tensor *x9 = rnd(TN_SHAPE(9, 24)), *y = NULL;
    tn_no_grad_begin();
    for (int r = 0; g && r < 4; r++) {
        tn_scope_begin();
        CHECK(tn_graph_run(g, &x9, 1, &y, 1) == 1 && same_bits22(y, ln_residual(&x9, 1, w)));
        tn_scope_end();
    }
    tn_no_grad_end();
    /* a wrong input still fails clearly (the planned graph checks it first) */
    tn_tensor *bad = rnd(TN_SHAPE(9, 25));
    CHECK_ERR((g ? tn_graph_run(g, &bad, 1, &y, 1) : -1) >= 0, "input 0");
    tn_graph_free(g);
    end(__LINE__);
}

/* A transformer encoder layer and a CNN (3x3 convolutions of 8 and more channels: Winograd),
   optimised: the fused counts (the transformer's two add + layer norm pairs and its
   feed-forward linear + relu; the CNN's conv/linear + relu),
   replays bit for bit against eager at a batch whose products take the packed weights,
   also after the weights change in place (packed again), and no allocation when steady. */
TEST(test_packed_weights_and_fusions) {
    begin();
    for (int which = 1; which <= 2; which++) {
        tn_module *m = which == 1 ? tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_relu(), tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2), tn_nn_flatten(), tn_nn_linear(16 * 7 * 7, 32), tn_nn_relu(), tn_nn_linear(32, 10))
                                  : make_model(2);
        tn_module_eval(m);
        const int64_t shapes[2][4] = {{5, 1, 14, 14}, {3, 12, 32}}, *shape = shapes[which - 1];
        const int nd = which == 1 ? 4 : 3;
        tn_tensor *x = rnd(shape, nd);
        tn_graph *g = tn_jit_trace_module(m, x);
        if (!g || tn_graph_optimize(g) < 0) { fail_at(__LINE__, "model %d: %s", which, tn_last_error()); tn_graph_free(g); tn_module_free(m); continue; }
        const int f = tn_graph_fused_nodes(g);
        const int fx = which == 1 ? 7 : 6;   /* the CNN's conv + relu + pool, conv + relu, linear + relu */
        CHECK_MSG(f == fx, "model %d: %d nodes fused, expected %d", which, f, fx);
        tn_no_grad_begin();
        for (int round = 0; round < 2; round++) {
            for (int r = 0; r < 4; r++) {
                tn_scope_begin();
                tn_tensor *want = tn_module_forward(m, x);
                const int64_t a0 = tn_memory_allocations();
                tn_tensor *got = tn_graph_forward(g, x);
                const int64_t allocs = tn_memory_allocations() - a0;
                CHECK_MSG(same_bits22(got, want), "model %d round %d run %d: replay differs from eager by %g", which, round, r, maxdiff(got, want));
                if (r == 3) CHECK_MSG(allocs == 0, "model %d round %d: a steady replay allocated %lld storages", which, round, (long long)allocs);
                tn_scope_end();
            }
            /* every parameter changed in place: the graph reads the new values (its constants
               are the parameters and views of them: no batch norm folded here), the packed
               weights are packed again */
            if (round == 0) {
                tn_dict *sd = tn_module_state_dict(m);
                for (int i = 0; i < tn_dict_len(sd); i++) tn_mul_scalar_(tn_dict_value(sd, i), 1.25);
                tn_dict_free(sd);
            }
        }
        tn_no_grad_end();
        tn_graph_free(g);
        tn_module_free(m);
    }
    end(__LINE__);
}

/* conv2d (+ ReLU) + 2x2 max pool in one pass (the optimised replay's tn__graph_epi_plan with
   TN__GEPI_POOL): a case's conv and pool, its operands' shapes, its dtype, the fused count
   it must plan, and whether the relu is also an output (read twice: not fused). */
typedef struct {
    const char *name;
    int64_t x[4], w[4];
    int64_t stride, pad, dil;       /* the conv's */
    int64_t pk, ps, pp, pd;         /* the pool's kernel, stride, padding, dilation */
    bool ceil, relu, relu_out, bias;
    tn_dtype dt;
    int fused;
} pcase;
static tn_tensor *conv_pool(tn_tensor *const *in, int n, void *user) {
    (void)n;
    const pcase *c = (const pcase *)user;
    tn_tensor *y = tn_conv2d(in[0], in[1], c->bias ? in[2] : NULL, .stride = c->stride, .padding = c->pad, .dilation = c->dil);
    tn_tensor *r = c->relu ? tn_relu(y) : y;
    tn_tensor *p = tn_max_pool2d(r, c->pk, .stride = c->ps, .padding = c->pp, .dilation = c->pd, .ceil_mode = c->ceil);
    return c->relu_out ? tn_add(tn_sum(p), tn_sum(r)) : p;
}
/* no_grad replays (warm-up, plan, served, steady, then a strided input and a batch of 1 at
   a dynamic batch) bit for bit against eager and the grad-enabled (unfused) replay */
static void check_pool(int line, const pcase *c) {
    tn_tensor *ex[3] = {tn_to_dtype(rnd(c->x, 4), c->dt), tn_to_dtype(rnd(c->w, 4), c->dt), tn_to_dtype(rnd(TN_SHAPE(c->w[0])), c->dt)};
    tn_graph *g = tn_jit_trace(conv_pool, (void *)c, ex, c->bias ? 3 : 2, NULL);
    if (!g || tn_graph_set_dynamic(g, 0, 0)) { fail_at(line, "%s: trace: %s", c->name, tn_last_error()); tn_graph_free(g); return; }
    const int f = tn_graph_fused_nodes(g);
    CHECK_MSG(f == c->fused, "line %d: %s: %d nodes fused, expected %d", line, c->name, f, c->fused);
    int64_t big[4] = {c->x[0], c->x[1], c->x[2], 2 * c->x[3]}, one[4] = {1, c->x[1], c->x[2], c->x[3]};
    tn_tensor *st = tn_slice(tn_to_dtype(rnd(big, 4), c->dt), 3, 1, big[3], 2), *b1 = tn_to_dtype(rnd(one, 4), c->dt);
    for (int k = 0; k < 6; k++) {
        tn_scope_begin();
        tn_tensor *xs[3] = {k == 4 ? st : k == 5 ? b1 : tn_to_dtype(rnd(c->x, 4), c->dt), ex[1], ex[2]}, *unfused = NULL, *got = NULL;
        if (k == 2) {   /* NaN and infinities in the input: the pool's NaN propagation and ReLU's */
            tn_tensor *v = tn_reshape(xs[0], TN_SHAPE(-1));
            const int64_t nv = tn_numel(v);
            if (nv > 3) { tn_fill_(tn_slice(v, 0, 0, 1, 1), NAN); tn_fill_(tn_slice(v, 0, nv / 2, nv / 2 + 1, 1), INFINITY); tn_fill_(tn_slice(v, 0, nv - 1, nv, 1), -INFINITY); }
        }
        tn_no_grad_begin();
        tn_tensor *want = conv_pool(xs, 3, (void *)c);
        tn_no_grad_end();
        if (tn_graph_run(g, xs, c->bias ? 3 : 2, &unfused, 1) < 0) unfused = NULL;   /* grad enabled: node by node */
        tn_no_grad_begin();
        const int64_t a0 = tn_memory_allocations();
        if (tn_graph_run(g, xs, c->bias ? 3 : 2, &got, 1) < 0) got = NULL;
        const int64_t allocs = tn_memory_allocations() - a0;
        tn_no_grad_end();
        CHECK_MSG(same_bits22(got, want) && same_bits22(got, unfused), "line %d: %s (run %d): replay differs from eager by %g, from the unfused replay by %g (%s)", line,
                  c->name, k, maxdiff(got, want), maxdiff(got, unfused), got ? "" : tn_last_error());
        if (k == 3 && c->x[0] > 0) CHECK_MSG(allocs == 0, "line %d: %s: a steady replay allocated %lld storages", line, c->name, (long long)allocs);
        tn_scope_end();
    }
    tn_graph_free(g);
}
TEST(test_conv_pool_fusion) {
    begin();
    const pcase cases[] = {
        /* the small-K path (1 and 3 input channels) and Winograd (8 and more), even and odd sizes */
        {"smallk 1->8 relu pool, 14x14", {3, 1, 14, 14}, {8, 1, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"smallk 3->5 relu pool, 13x19", {2, 3, 13, 19}, {5, 3, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"smallk 1->4 no relu pool, 35x9, no bias", {2, 1, 35, 9}, {4, 1, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, false, false, false, TN_F32, 2},
        {"smallk 1->6 5x5 kernel, unpadded, 4x4 out", {2, 1, 8, 8}, {6, 1, 5, 5}, 1, 0, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"wino 8->16 relu pool, 14x14", {2, 8, 14, 14}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"wino 9->11 relu pool, 11x9", {3, 9, 11, 9}, {11, 9, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"wino 8->8 unpadded, 2x2 out", {2, 8, 4, 4}, {8, 8, 3, 3}, 1, 0, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"wino 8->12 no relu, 37x20", {1, 8, 37, 20}, {12, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, false, false, true, TN_F32, 2},
        {"wino 8->16 float64", {2, 8, 10, 13}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F64, 3},
        {"batch 0", {0, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        /* planned, but the conv takes another path at run time (stride, dilation, 2 -> 5 channels at 5x5, padding 2): unfused, still right */
        {"strided conv", {2, 8, 16, 16}, {16, 8, 3, 3}, 2, 1, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"dilated conv", {2, 8, 16, 16}, {16, 8, 3, 3}, 1, 2, 2, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        {"im2col conv", {2, 2, 9, 9}, {5, 2, 5, 5}, 1, 2, 1, 2, 2, 0, 1, false, true, false, true, TN_F32, 3},
        /* pools that must not be planned: other windows, strides, padding, dilation, ceil mode; a relu read twice */
        {"pool stride 1", {2, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, 2, 1, 0, 1, false, true, false, true, TN_F32, 2},
        {"pool 3x3", {2, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, 3, 3, 0, 1, false, true, false, true, TN_F32, 2},
        {"pool padded", {2, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 1, 1, false, true, false, true, TN_F32, 2},
        {"pool dilated", {2, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 2, false, true, false, true, TN_F32, 2},
        {"pool ceil mode", {2, 8, 11, 11}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 1, true, true, false, true, TN_F32, 2},
        {"relu read twice", {2, 8, 10, 10}, {16, 8, 3, 3}, 1, 1, 1, 2, 2, 0, 1, false, true, true, true, TN_F32, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_pool(__LINE__, &cases[i]);
    /* the portable and the AVX2 Winograd rows (knob 0, 1; the default 2 takes AVX-512 where
       the CPU has it), the small-K path's AVX2 loops, and no fast paths (the pool then runs
       as its own node) */
    for (int lv = 0; lv < 2; lv++) {
        tn__wino_avx512 = lv;
        check_pool(__LINE__, &cases[5]);
        check_pool(__LINE__, &cases[7]);
    }
    tn__wino_avx512 = 2;
    tn__smallk_wide = 1;   /* the small-K path's AVX2 loops (the default where the CPU lacks AVX-512) */
    check_pool(__LINE__, &cases[1]);
    check_pool(__LINE__, &cases[2]);
    tn__smallk_wide = 2;
    tn__conv_fast_paths = 0;
    check_pool(__LINE__, &cases[0]);
    check_pool(__LINE__, &cases[4]);
    tn__conv_fast_paths = 1;
    /* the benchmark's CNN (conv-bn-relu-pool twice), optimised: batch norm folded, both convs pool */
    tn_module *m = tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_batch_norm2d(32), tn_nn_relu(), tn_nn_max_pool2d(2),
                                    tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_batch_norm2d(64), tn_nn_relu(), tn_nn_max_pool2d(2),
                                    tn_nn_flatten(), tn_nn_linear(64 * 7 * 7, 16), tn_nn_relu(), tn_nn_linear(16, 10));
    tn_module_eval(m);
    tn_tensor *x = rnd(TN_SHAPE(3, 1, 28, 28));
    tn_graph *g = tn_jit_trace_module(m, x), *o = tn_jit_trace_module(m, x);
    CHECK(g && o && tn_graph_optimize(o) > 0 && tn_graph_fused_nodes(o) == 8);   /* 2 x (conv, relu, pool), linear + relu */
    tn_no_grad_begin();
    for (int r = 0; g && o && r < 4; r++) {
        tn_scope_begin();
        tn_tensor *want = tn_graph_forward(g, x), *got = tn_graph_forward(o, x), *e = tn_module_forward(m, x);
        CHECK_MSG(want && got && maxdiff(got, want) < 1e-4 && maxdiff(got, e) < 1e-4, "cnn run %d: optimised replay differs by %g from the replay, %g from eager", r,
                  maxdiff(got, want), maxdiff(got, e));
        tn_scope_end();
    }
    tn_no_grad_end();
    tn_graph_free(g);
    tn_graph_free(o);
    tn_module_free(m);
    end(__LINE__);
}

int main(void) {
    RUN_ISOLATED(test_avg_pool_one_node, 300);
    RUN_ISOLATED(test_recurrent_layers, 300);
    RUN_ISOLATED(test_memory_plan, 300);
    RUN_ISOLATED(test_memory_plan_dynamic_batch_and_grad, 300);
    RUN_ISOLATED(test_elementwise_fusion, 300);
    RUN_ISOLATED(test_optimised_replay_equals_replay, 300);
    RUN_ISOLATED(test_residual_layer_norm, 300);
    RUN_ISOLATED(test_packed_weights_and_fusions, 300);
    RUN_ISOLATED(test_conv_pool_fusion, 300);
    return tn_test_report();
}
