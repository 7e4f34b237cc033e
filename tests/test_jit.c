/* test_jit.c — graphs: tn_jit_trace / tn_jit_trace_module capture a forward where autograd
 * records it, tn_graph_run replays it, tn_graph_save / tn_graph_load keep it in a file.
 *
 *  1. Capture + replay: an MLP, the fashion CNN (conv, eval batch norm, max pool, flatten,
 *     dropout off, linear), a transformer encoder layer and a list of module types: the
 *     replay on new inputs (non-contiguous too) equals the eager forward exactly; the graph
 *     has PyTorch's op names and the parameters as named constants; a function of two
 *     inputs (broadcasting, scalars, where on a given mask, cat, slices, sums, softmax).
 *  2. Dynamic batch; input checks; gradients through a replay equal eager ones.
 *  3. What cannot be captured is refused with a message (integer inputs, training batch
 *     norm, a mask computed in the forward, a custom op).
 *  4. Save/load: the loaded graph equals the traced one (same output, same printout); a
 *     failed save keeps the old file; hostile files (truncated, mutated bytes, hand-written
 *     bad graph text) are refused with a message, never a crash.
 * Each test runs in a forked child (RUN_ISOLATED) and must give back every tensor. */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

#define TN_JIT_TEST_TMP "/tmp/tn_jit"
#include "tn_jit_test.h"

/* trace m on x, replay on x2 (and x): equal to the eager forward */
static tn_graph *check_module(int line, tn_module *m, tn_tensor *x, tn_tensor *x2, double tol) {
    tn_module_eval(m);
    tn_graph *g = tn_jit_trace_module(m, x);
    if (!g) { fail_at(line, "trace %s: %s", tn_module_name(m), tn_last_error()); return NULL; }
    tn_tensor *ins[2] = {x, x2};
    for (int k = 0; k < 2; k++) {
        tn_no_grad_begin();
        tn_tensor *want = tn_module_forward(m, ins[k]);
        tn_no_grad_end();
        tn_tensor *got = tn_graph_forward(g, ins[k]);
        double d = maxdiff(got, want);
        if (!(d <= tol)) fail_at(line, "%s: replay differs from eager by %g (%s)", tn_module_name(m), d, got ? "" : tn_last_error());
        else tn_test_passed++;
    }
    return g;
}
static bool has_op(const tn_graph *g, const char *op) {
    for (int i = 0; i < tn_graph_num_nodes(g); i++) if (!strcmp(tn_graph_node_op(g, i), op)) return true;
    return false;
}

static tn_module *make_cnn(void) {
    return tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu(), tn_nn_max_pool2d(2),
                            tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_batch_norm2d(16), tn_nn_relu(), tn_nn_max_pool2d(2),
                            tn_nn_flatten(), tn_nn_dropout(.p = 0.25), tn_nn_linear(16 * 7 * 7, 32), tn_nn_relu(), tn_nn_linear(32, 10));
}
/* batch norm's running statistics away from 0 and 1, so eval mode is really exercised */
static void randomize_bn(tn_module *m, void *user) {
    (void)user;
    tn_tensor *rm = tn_module_get(m, "running_mean"), *rv = tn_module_get(m, "running_var");
    if (!rm || !rv) return;
    tn_no_grad_begin();
    tn_copy_(rm, tn_mul_scalar(tn_randn(tn_shape(rm), 1, TN_F32), 0.3));
    tn_copy_(rv, tn_add_scalar(tn_rand(tn_shape(rv), 1, TN_F32), 0.5));
    tn_no_grad_end();
}

TEST(test_mlp) {
    begin();
    tn_module *m = tn_nn_sequential(tn_nn_linear(8, 16), tn_nn_relu(), tn_nn_linear(16, 16), tn_nn_tanh(), tn_nn_linear(16, 3));
    tn_graph *g = check_module(__LINE__, m, rnd(TN_SHAPE(4, 8)), rnd(TN_SHAPE(4, 8)), 0);
    CHECK(g && has_op(g, "aten::addmm") && has_op(g, "aten::relu") && has_op(g, "aten::tanh"));
    CHECK(tn_graph_num_inputs(g) == 1 && tn_graph_num_outputs(g) == 1);
    char *s = tn_graph_str(g);
    CHECK(s && strstr(s, "graph(%input0 : Float(4, 8)):") && strstr(s, "%0.weight : Float(16, 8) = prim::Constant()") &&
          strstr(s, "= aten::addmm(%0.bias, %input0, ") && strstr(s, "  return (%"));
    tn_string_free(s);
    /* a non-contiguous input of the traced shape */
    tn_tensor *xt = tn_transpose(rnd(TN_SHAPE(8, 4)), 0, 1);
    tn_no_grad_begin();
    tn_tensor *want = tn_module_forward(m, xt);
    tn_no_grad_end();
    CHECK(maxdiff(tn_graph_forward(g, xt), want) == 0);
    /* the replay reads the module's parameters: a change shows (as a traced module shares them) */
    tn_no_grad_begin();
    tn_fill_(tn_module_get(m, "4.bias"), 2.0);
    want = tn_module_forward(m, xt);
    tn_no_grad_end();
    CHECK(maxdiff(tn_graph_forward(g, xt), want) == 0);
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

TEST(test_cnn) {
    begin();
    tn_module *m = make_cnn();
    tn_module_apply(m, randomize_bn, NULL);
    tn_graph *g = check_module(__LINE__, m, rnd(TN_SHAPE(2, 1, 28, 28)), rnd(TN_SHAPE(2, 1, 28, 28)), 0);
    CHECK(g && has_op(g, "aten::conv2d") && has_op(g, "aten::batch_norm") && has_op(g, "aten::max_pool2d") && has_op(g, "aten::reshape"));
    char *s = tn_graph_str(g);
    CHECK(s && strstr(s, "aten::conv2d(%input0, %0.weight, %0.bias, stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=1)") &&
          strstr(s, "%1.running_mean") && strstr(s, "kernel_size=[2, 2], stride=[2, 2]"));
    if (!s || !strstr(s, "aten::conv2d(%input0")) printf("%s", s ? s : tn_last_error());
    tn_string_free(s);
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

TEST(test_module_types) {
    begin();
    tn_module *conv_g = tn_nn_conv2d(4, 6, 3, .stride = 2, .padding = 1, .dilation = 1, .groups = 2);
    struct { tn_module *m; int64_t shape[4]; int nd; } cases[] = {
        {tn_nn_linear(5, 3, .bias = false), {2, 3, 5}, 3},
        {tn_nn_conv1d(3, 4, 3, .padding = 2, .dilation = 2), {2, 3, 9}, 3},
        {conv_g, {2, 4, 9, 7}, 4},
        {tn_nn_conv2d(3, 2, 1, .bias = false), {1, 3, 5, 5}, 4},
        {tn_nn_batch_norm1d(4), {3, 4}, 2},
        {tn_nn_batch_norm2d(3, .affine = false), {2, 3, 4, 4}, 4},
        {tn_nn_layer_norm(TN_SHAPE(6)), {2, 3, 6}, 3},
        {tn_nn_layer_norm(TN_SHAPE(3, 6), .elementwise_affine = false), {2, 3, 6}, 3},
        {tn_nn_group_norm(2, 4), {2, 4, 3, 3}, 4},
        {tn_nn_max_pool2d(3, .stride = 2, .padding = 1, .ceil_mode = true), {2, 3, 8, 8}, 4},
        {tn_nn_max_pool1d(2), {2, 3, 8}, 3},
        {tn_nn_avg_pool2d(2), {2, 3, 8, 8}, 4},
        {tn_nn_adaptive_avg_pool2d(1, 1), {2, 3, 5, 5}, 4},
        {tn_nn_flatten(), {2, 3, 4}, 3},
        {tn_nn_unflatten(1, TN_SHAPE(2, 3)), {2, 6}, 2},
        {tn_nn_pixel_shuffle(2), {1, 8, 3, 3}, 4},
        {tn_nn_identity(), {2, 5}, 2},
        {tn_nn_gelu(), {2, 5}, 2},
        {tn_nn_sigmoid(), {2, 5}, 2},
        {tn_nn_activation("LeakyReLU", .negative_slope = 0.2), {2, 5}, 2},
        {tn_nn_activation("ELU", .alpha = 0.7), {2, 5}, 2},
        {tn_nn_activation("Softmax", .dim = 1), {2, 5}, 2},
        {tn_nn_activation("LogSoftmax", .dim = -1), {2, 5}, 2},
        {tn_nn_activation("Hardtanh", .min_val = -0.5, .max_val = 0.5), {2, 5}, 2},
        {tn_nn_activation("SiLU"), {2, 5}, 2},
        {tn_nn_activation("Softplus", .beta = 2), {2, 5}, 2},
        {tn_nn_dropout(), {2, 5}, 2},
        {tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .batch_first = true), {2, 5, 8}, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (getenv("TN_JIT_VERBOSE")) fprintf(stderr, "case %zu: %s\n", i, tn_module_name(cases[i].m));
        tn_module_apply(cases[i].m, randomize_bn, NULL);
        tn_graph *g = check_module(__LINE__, cases[i].m, rnd(cases[i].shape, cases[i].nd), rnd(cases[i].shape, cases[i].nd), 1e-6);
        tn_graph_free(g);
        tn_module_free(cases[i].m);
    }
    end(__LINE__);
}

/* a function of two inputs: broadcasting, scalars, a given mask, cat, slices, sums, softmax */
static tn_tensor *fn2(tn_tensor *const *in, int n, void *user) {
    (void)n;
    tn_tensor *mask = (tn_tensor *)user;
    tn_tensor *a = in[0], *b = in[1];
    tn_tensor *h = tn_add(tn_mul_scalar(a, 2.5), b);                     /* [3, 4] + [4] */
    h = tn_where(mask, h, tn_neg(h));
    h = tn_cat(((tn_tensor *[]){h, tn_exp(a)}), 2);                        /* [6, 4] */
    h = tn_narrow(tn_select(tn_reshape(h, TN_SHAPE(2, 3, 4)), 0, 1), 1, 1, 2);  /* [3, 2] */
    h = tn_matmul(tn_permute(h, TN_SHAPE(1, 0)), a);                       /* [2, 4] */
    return tn_add(tn_softmax(h, -1), tn_sum_dims(h, TN_SHAPE(1), .keepdim = true));
}
TEST(test_function) {
    begin();
    tn_tensor *mask = tn_gt_scalar(rnd(TN_SHAPE(3, 4)), 0);
    tn_tensor *ins[2] = {rnd(TN_SHAPE(3, 4)), rnd(TN_SHAPE(4))};
    tn_graph *g = tn_jit_trace(fn2, mask, ins, 2, NULL);
    CHECK(g != NULL);
    if (!g) printf("%s\n", tn_last_error());
    tn_tensor *ins2[2] = {rnd(TN_SHAPE(3, 4)), rnd(TN_SHAPE(4))}, *out[1] = {NULL};
    CHECK(tn_graph_run(g, ins2, 2, out, 1) == 1);
    CHECK(maxdiff(out[0], fn2(ins2, 2, mask)) == 0);
    CHECK(has_op(g, "aten::where") && has_op(g, "aten::cat") && has_op(g, "aten::select") && has_op(g, "aten::softmax"));
    /* input checks */
    CHECK_ERR(tn_graph_run(g, ins2, 1, out, 1) >= 0, "takes 2 inputs, got 1");
    tn_tensor *bad[2] = {rnd(TN_SHAPE(3, 5)), ins2[1]};
    CHECK_ERR(tn_graph_run(g, bad, 2, out, 1) >= 0, "input 0 is float32 [3, 5], but the graph was traced with float32 [3, 4]");
    tn_tensor *bad2[2] = {tn_to_dtype(ins2[0], TN_F64), ins2[1]};
    CHECK_ERR(tn_graph_run(g, bad2, 2, out, 1) >= 0, "input 0 is float64");
    CHECK_ERR(tn_graph_run(g, ins2, 2, out, 0) >= 0, "has 1 outputs");
    tn_graph_free(g);
    /* constants named by a dict of the same tensors */
    tn_dict *names = tn_dict_new();
    tn_dict_set(names, "attn.mask", mask);
    g = tn_jit_trace(fn2, mask, ins, 2, names);
    char *s = tn_graph_str(g);
    CHECK(s && strstr(s, "%attn.mask : Bool(3, 4) = prim::Constant()") && strstr(s, "aten::where(%attn.mask, "));
    tn_string_free(s);
    tn_dict_free(names);
    tn_graph_free(g);
    end(__LINE__);
}

TEST(test_dynamic_batch_and_grad) {
    begin();
    tn_module *m = make_cnn();
    tn_module_apply(m, randomize_bn, NULL);
    tn_module_eval(m);
    tn_graph *g = tn_jit_trace_module(m, rnd(TN_SHAPE(2, 1, 28, 28)));
    tn_tensor *x5 = rnd(TN_SHAPE(5, 1, 28, 28));
    CHECK_ERR(tn_graph_forward(g, x5), "input 0 is float32 [5, 1, 28, 28], but the graph was traced with float32 [2, 1, 28, 28]");
    CHECK_ERR(tn_graph_set_dynamic(g, 0, 1) == 0, "only dim 0");
    CHECK_ERR(tn_graph_set_dynamic(g, 1, 0) == 0, "input 1 out of range");
    CHECK(tn_graph_set_dynamic(g, 0, 0) == 0);
    tn_no_grad_begin();
    tn_tensor *want = tn_module_forward(m, x5);
    tn_no_grad_end();
    CHECK(maxdiff(tn_graph_forward(g, x5), want) == 0);
    /* gradients through a replay: the same ops record autograd as eager */
    tn_tensor *x = rnd(TN_SHAPE(3, 1, 28, 28));
    tn_requires_grad_(x, true);
    tn_backward(tn_sum(tn_module_forward(m, x)));
    tn_tensor *gx = tn_clone(tn_grad(x)), *gw = tn_clone(tn_grad(tn_module_get(m, "0.weight")));
    tn_set_grad(x, NULL);
    tn_module_zero_grad(m);
    tn_backward(tn_sum(tn_graph_forward(g, x)));
    CHECK(maxdiff(tn_grad(x), gx) < 1e-5);
    CHECK(maxdiff(tn_grad(tn_module_get(m, "0.weight")), gw) < 1e-4);
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

static tn_tensor *fn_mask(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_where(tn_gt_scalar(in[0], 0), in[0], tn_zeros_like(in[0])); }
/* a float cast of a mask is a float tensor made outside the recorded ops: caught by the check on other inputs */
static tn_tensor *fn_cast_mask(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_mul(in[0], tn_to_dtype(tn_gt_scalar(in[0], 0), TN_F32)); }
static tn_tensor *fn_custom_sq(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_mul(in[0], in[0]); }
TEST(test_refused) {
    begin();
    tn_module *emb = tn_nn_embedding(10, 4);
    CHECK_ERR(tn_jit_trace_module(emb, tn_arange(0, 6, 1, TN_I64)), "only floating point inputs can be traced yet");
    tn_module *bn = tn_nn_batch_norm1d(4);
    CHECK_ERR(tn_jit_trace_module(bn, rnd(TN_SHAPE(3, 4))), "batch_norm in training mode");
    tn_tensor *x = rnd(TN_SHAPE(3, 4));
    CHECK_ERR(tn_jit_trace(fn_mask, NULL, &x, 1, NULL), "a bool or integer tensor computed during the forward");
    CHECK_ERR(tn_jit_trace(NULL, NULL, &x, 1, NULL), "the function is NULL");
    CHECK_ERR(tn_jit_trace(fn_cast_mask, NULL, &x, 1, NULL), "the graph replays differently from the forward on other inputs");
    CHECK_ERR(tn_jit_trace(fn_custom_sq, NULL, &x, 0, NULL), "expected 1 to 64 example inputs");
    tn_module *prelu = tn_nn_prelu();   /* where(x > 0, ...): the mask is computed from the input */
    tn_module_eval(prelu);
    CHECK_ERR(tn_jit_trace_module(prelu, rnd(TN_SHAPE(2, 5))), "a bool or integer tensor computed during the forward");
    tn_module_free(prelu);
    tn_module *lstm = tn_nn_lstm(4, 3);
    tn_module_eval(lstm);
    tn_clear_error();
    tn_graph *gl = tn_jit_trace_module(lstm, rnd(TN_SHAPE(2, 1, 4)));
    if (gl) { /* if it traces, it must replay exactly */
        tn_tensor *x2 = rnd(TN_SHAPE(2, 1, 4));
        tn_no_grad_begin();
        tn_tensor *want = tn_module_forward(lstm, x2);
        tn_no_grad_end();
        CHECK(maxdiff(tn_graph_forward(gl, x2), want) < 1e-6);
    } else CHECK(strstr(tn_last_error(), "tn_jit_trace") != NULL);
    tn_graph_free(gl);
    tn_module_free(emb);
    tn_module_free(bn);
    tn_module_free(lstm);
    end(__LINE__);
}

TEST(test_save_load) {
    begin();
    tn_module *m = make_cnn();
    tn_module_apply(m, randomize_bn, NULL);
    tn_module_eval(m);
    tn_tensor *x = rnd(TN_SHAPE(2, 1, 28, 28));
    tn_graph *g = tn_jit_trace_module(m, x);
    CHECK(g && tn_graph_set_dynamic(g, 0, 0) == 0);
    char path[256];
    snprintf(path, sizeof path, "%s/cnn.tng", tmpdir());
    CHECK(tn_graph_save(g, path) == 0);
    tn_graph *h = tn_graph_load(path);
    CHECK(h != NULL);
    if (!h) printf("%s\n", tn_last_error());
    char *s1 = tn_graph_str(g), *s2 = tn_graph_str(h);
    CHECK(s1 && s2 && !strcmp(s1, s2));
    tn_string_free(s1); tn_string_free(s2);
    tn_tensor *x3 = rnd(TN_SHAPE(3, 1, 28, 28));
    CHECK(maxdiff(tn_graph_forward(h, x3), tn_graph_forward(g, x3)) == 0);
    /* the loaded graph owns its constants: the module may go */
    tn_graph_free(g);
    tn_module_free(m);
    CHECK(tn_graph_forward(h, x3) != NULL);
    /* scalars (wrapped numbers) keep their promotion */
    tn_tensor *mask = tn_gt_scalar(rnd(TN_SHAPE(3, 4)), 0), *ins[2] = {rnd(TN_SHAPE(3, 4)), rnd(TN_SHAPE(4))};
    tn_graph *f = tn_jit_trace(fn2, mask, ins, 2, NULL);
    char path2[256];
    snprintf(path2, sizeof path2, "%s/fn.tng", tmpdir());
    CHECK(tn_graph_save(f, path2) == 0);
    tn_graph *f2 = tn_graph_load(path2);
    tn_tensor *o1[1], *o2[1];
    CHECK(f2 && tn_graph_run(f, ins, 2, o1, 1) == 1 && tn_graph_run(f2, ins, 2, o2, 1) == 1 && maxdiff(o1[0], o2[0]) == 0);
    /* a failed save leaves the old file: saving into a missing directory fails, and a
       save over the file of another graph replaces it only when it succeeds */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/dir.tng", tmpdir());
    CHECK_ERR(tn_graph_save(f, bad) == 0, "");
    CHECK(tn_graph_save(f, path) == 0);
    tn_graph *f3 = tn_graph_load(path);
    CHECK(f3 && tn_graph_num_inputs(f3) == 2);
    tn_graph_free(f3);
    CHECK_ERR(tn_graph_load(bad), "tn_graph_load");
    tn_graph_free(h);
    tn_graph_free(f);
    tn_graph_free(f2);
    end(__LINE__);
}

/* a saved graph's bytes with its text replaced */
static char *with_text(const char *text, size_t *size, tn_tensor *w) {
    tn_dict *d = tn_dict_new();
    tn_dict_set_meta(d, "format", "tn_graph");
    tn_dict_set_meta(d, "tn_graph", text);
    if (w) tn_dict_set(d, "w", w);
    char *s = tn_safetensors_serialize(d, size);
    tn_dict_free(d);
    return s;
}
static void check_bad_text(int line, const char *text, const char *msg, tn_tensor *w) {
    size_t n;
    char *bytes = with_text(text, &n, w);
    tn_clear_error();
    tn_graph *g = tn_graph_load_buffer(bytes, n);
    if (g || !strstr(tn_last_error(), msg)) fail_at(line, "graph text %s: expected error \"%s\", got %s", text, msg, g ? "success" : tn_last_error());
    else tn_test_passed++;
    tn_graph_free(g);
    tn_string_free(bytes);
}
TEST(test_load_hostile) {
    begin();
    tn_tensor *w = rnd(TN_SHAPE(3, 4));
    const char *ok = "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_MM - float32 2 2 3 2 0 1 0 0\noutput 1 2\n";
    /* the well-formed text first: it loads and runs (mm of [2, 4] and w^T? no: [2,4] @ [3,4] fails cleanly) */
    size_t n;
    char *bytes = with_text(ok, &n, tn_transpose(w, 0, 1));
    tn_graph *g = tn_graph_load_buffer(bytes, n);
    CHECK(g != NULL);
    if (!g) printf("%s\n", tn_last_error());
    tn_tensor *x = rnd(TN_SHAPE(2, 4));
    CHECK(maxdiff(tn_graph_forward(g, x), tn_mm(x, tn_transpose(w, 0, 1))) == 0);
    tn_graph_free(g);
    tn_string_free(bytes);
    check_bad_text(__LINE__, "tn_graph 2\n", "graph format version 2 is not supported", w);
    check_bad_text(__LINE__, "torch 1\n", "expected \"tn_graph <version>\"", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_FOO - float32 2 2 3 2 0 1 0 0\noutput 1 2\n", "line 4 of the graph: unknown op", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_MM - float32 2 2 3 2 0 2 0 0\noutput 1 2\n", "an input value id (an earlier value)", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_MM - float32 2 2 3 3 0 1 1 0 0\noutput 1 2\n", "wrong number of inputs", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 v\nnode J_MM - float32 2 2 3 2 0 1 0 0\noutput 1 2\n", "constant \"v\" is not a tensor of the file", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float99 2 2 4\n", "unknown dtype", w);
    {   /* an input of one dim more than TN_MAX_DIMS */
        char over[64 + 4 * TN_MAX_DIMS];
        int k = snprintf(over, sizeof over, "tn_graph 1\ninput float32 %d", TN_MAX_DIMS + 1);
        for (int i = 0; i <= TN_MAX_DIMS; i++) k += snprintf(over + k, sizeof over - (size_t)k, " 1");
        snprintf(over + k, sizeof over - (size_t)k, "\n");
        check_bad_text(__LINE__, over, "ndim", w);
    }
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 -2 4\n", "a size \"-2\"", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 3 4294967296 4294967296 4294967296\n", "multiply past int64", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_UNARY nosuch float32 2 2 3 1 0 0 3 0 0 0\noutput 1 2\n", "unknown kernel op name", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_UNARY relu float32 2 2 3 1 0 0 2 0 0\noutput 1 2\n", "wrong number of float attributes", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_MM - float32 2 2 3 2 -1 1 0 0\noutput 1 2\n", "a required input is absent", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nnode J_MM - float32 2 2 3 2 0 1 0 0\n", "no output line", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 0 w\nconst 0 w\n", "declared twice", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\noutput 1 0\n", "tensor \"w\" of the file is not a constant of the graph", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\noutput 1 0\ndynamic 0 3\n", "the traced size is not the input's dim 0", NULL);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\noutput 1 0 junk\n", "unexpected text at the end of the line", NULL);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 2 2 4\nconst 1 w\n", "a wrapped number must be 0-d", w);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 1 2\nnode J_SLICE - float32 1 2 1 0 4 0 0 2 0 0\noutput 1 1\n", "step must be positive", NULL);
    check_bad_text(__LINE__, "tn_graph 1\ninput float32 1 2\nnode J_TO - float32 1 2 1 0 1 99 0\noutput 1 1\n", "unknown dtype", NULL);
    /* not a graph at all */
    tn_dict *d = tn_dict_new();
    tn_dict_set(d, "w", w);
    char *plain = tn_safetensors_serialize(d, &n);
    CHECK_ERR(tn_graph_load_buffer(plain, n), "not a saved graph");
    tn_string_free(plain);
    tn_dict_free(d);
    end(__LINE__);
}

/* every truncation and many random byte changes of a saved CNN: an error or a graph that
   runs or fails cleanly, never a crash (the sanitizer build checks the reads) */
TEST(test_load_fuzz) {
    begin();
    tn_module *m = tn_nn_sequential(tn_nn_conv2d(1, 2, 3), tn_nn_batch_norm2d(2), tn_nn_relu(), tn_nn_flatten(), tn_nn_linear(2 * 4 * 4, 3));
    tn_module_eval(m);
    tn_tensor *x = rnd(TN_SHAPE(1, 1, 6, 6));
    tn_graph *g = tn_jit_trace_module(m, x);
    char path[256];
    snprintf(path, sizeof path, "%s/fuzz.tng", tmpdir());
    CHECK(g && tn_graph_save(g, path) == 0);
    FILE *f = fopen(path, "rb");
    static unsigned char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(n > 100 && n < sizeof buf);
    int loaded = 0, refused = 0;
    for (size_t len = 0; len < n; len += (len < 400 ? 1 : 7)) {   /* truncated */
        tn_scope_begin();
        tn_clear_error();
        tn_graph *h = tn_graph_load_buffer(buf, len);
        if (h) { loaded++; tn_graph_forward(h, x); tn_graph_free(h); }
        else refused += tn_last_error()[0] != 0;
        tn_scope_end();
    }
    CHECK(loaded == 0 && refused > 0);
    static unsigned char mut[1 << 16];
    uint64_t s = 12345;
    int ran = 0;
    for (int it = 0; it < 3000; it++) {   /* mutated: 1 to 4 bytes changed */
        memcpy(mut, buf, n);
        for (int k = 0; k < 1 + it % 4; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t at = (size_t)(s >> 33) % n;
            mut[at] = (unsigned char)(s >> 17);
        }
        tn_scope_begin();
        tn_clear_error();
        tn_graph *h = tn_graph_load_buffer(mut, n);
        if (h) { ran += tn_graph_forward(h, x) != NULL; tn_graph_free(h); }
        else if (!tn_last_error()[0]) { fail_at(__LINE__, "a refused file without a message"); break; }
        tn_scope_end();
    }
    CHECK(ran > 0);   /* some changes (inside the weights) still give a graph that runs */
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

/* optimised replay = replay before (to float rounding): batch norm folded into conv and
   linear, constants folded (the transposed linear weights), fewer nodes; in-place
   activations under no_grad; peak memory of a replay no more than the eager forward's */
TEST(test_optimize) {
    begin();
    tn_module *m = tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu(), tn_nn_max_pool2d(2),
                                    tn_nn_conv2d(8, 16, 3, .padding = 1, .bias = false), tn_nn_batch_norm2d(16), tn_nn_relu(), tn_nn_max_pool2d(2),
                                    tn_nn_flatten(), tn_nn_linear(16 * 7 * 7, 32), tn_nn_batch_norm1d(32), tn_nn_relu(),
                                    tn_nn_linear(32, 10));
    tn_module_apply(m, randomize_bn, NULL);
    tn_module_eval(m);
    tn_tensor *x = rnd(TN_SHAPE(4, 1, 28, 28)), *x2 = rnd(TN_SHAPE(4, 1, 28, 28));
    tn_graph *g = tn_jit_trace_module(m, x), *h = tn_jit_trace_module(m, x);
    const int before = tn_graph_num_nodes(h);
    int rw = tn_graph_optimize(h);
    CHECK(rw >= 5);   /* 3 batch norms, 2 transposed weights */
    if (rw < 5) printf("rewrites %d: %s\n", rw, tn_last_error());
    CHECK(!has_op(h, "aten::batch_norm") && !has_op(h, "aten::permute") && tn_graph_num_nodes(h) == before - rw);
    tn_tensor *a = tn_graph_forward(g, x2), *b = tn_graph_forward(h, x2);
    CHECK(maxdiff(a, b) < 1e-4 && maxdiff(a, b) > 0);   /* folded in float64, rounded once: close, not identical */
    /* a second optimisation finds nothing; saved and loaded, the same outputs */
    CHECK(tn_graph_optimize(h) == 0);
    char path[256];
    snprintf(path, sizeof path, "%s/opt.tng", tmpdir());
    CHECK(tn_graph_save(h, path) == 0);
    tn_graph *l = tn_graph_load(path);
    CHECK(l && maxdiff(tn_graph_forward(l, x2), b) == 0);
    /* under no_grad: activations in place, intermediates freed after their last use */
    tn_no_grad_begin();
    tn_tensor *c = tn_graph_forward(h, x2);
    CHECK(maxdiff(c, b) == 0);
    tn_memory_stats_reset_peak();
    int64_t base = tn_memory_stats_get().live_bytes;
    tn_tensor *e = tn_module_forward(m, x2);
    int64_t eager_peak = tn_memory_stats_get().peak_bytes - base;
    tn_memory_stats_reset_peak();
    base = tn_memory_stats_get().live_bytes;
    tn_tensor *r = tn_graph_forward(h, x2);
    int64_t replay_peak = tn_memory_stats_get().peak_bytes - base;
    tn_no_grad_end();
    CHECK(maxdiff(r, e) < 1e-4);
    CHECK(replay_peak <= eager_peak);
    if (getenv("TN_JIT_VERBOSE")) printf("peak bytes: eager %lld, optimised replay %lld\n", (long long)eager_peak, (long long)replay_peak);
    /* gradients still flow through an optimised replay (to the input) */
    tn_tensor *xg = tn_clone(x2);
    tn_requires_grad_(xg, true);
    CHECK(tn_backward(tn_sum(tn_graph_forward(h, xg))) == 0 && tn_grad(xg) != NULL);
    CHECK_ERR(tn_graph_optimize(NULL) == 0, "the graph is NULL");
    tn_graph_free(g);
    tn_graph_free(h);
    tn_graph_free(l);
    tn_module_free(m);
    end(__LINE__);
}

int main(void) {
    RUN_ISOLATED(test_mlp, 60);
    RUN_ISOLATED(test_cnn, 60);
    RUN_ISOLATED(test_module_types, 120);
    RUN_ISOLATED(test_function, 60);
    RUN_ISOLATED(test_dynamic_batch_and_grad, 60);
    RUN_ISOLATED(test_refused, 60);
    RUN_ISOLATED(test_save_load, 60);
    RUN_ISOLATED(test_optimize, 60);
    RUN_ISOLATED(test_load_hostile, 60);
    RUN_ISOLATED(test_load_fuzz, 300);
    return tn_test_report();
}
