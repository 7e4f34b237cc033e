/* test_kwargs.c — keyword arguments: the struct form (tn_nn_conv2d(1, 32, 3, .padding = 1))
 * and the option text (tn_nn_conv2d_str(1, 32, 3, "padding=1")) build the same thing, with
 * PyTorch's defaults for every name left out; the text parser takes PyTorch's syntax of any
 * length and refuses what it cannot read with a message naming the option. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

/* Both modules exist and print the same (PyTorch's repr) with the same parameter shapes. */
static void same_module(tn_module *a, tn_module *b, const char *what, int line) {
    if (!a || !b) { fail_at(line, "%s: %s (error: %s)", what, a ? "text form failed" : "struct form failed", tn_last_error()); tn_module_free(a); tn_module_free(b); return; }
    char *ra = tn_module_repr(a), *rb = tn_module_repr(b);
    if (strcmp(ra, rb)) fail_at(line, "%s: struct form %s, text form %s", what, ra, rb);
    else tn_test_passed++;
    tn_string_free(ra);
    tn_string_free(rb);
    tn_dict *pa = tn_module_state_dict(a), *pb = tn_module_state_dict(b);
    bool shapes = tn_dict_len(pa) == tn_dict_len(pb);
    for (int i = 0; shapes && i < tn_dict_len(pa); i++) {
        tn_tensor *x = tn_dict_value(pa, i), *y = tn_dict_get(pb, tn_dict_key(pa, i));
        shapes = y && tn_ndim(x) == tn_ndim(y) && !memcmp(tn_shape(x), tn_shape(y), sizeof(int64_t) * (size_t)tn_ndim(x));
    }
    if (!shapes) fail_at(line, "%s: the state dicts differ in names or shapes", what);
    else tn_test_passed++;
    tn_dict_free(pa);
    tn_dict_free(pb);
    tn_module_free(a);
    tn_module_free(b);
}
#define SAME(a, b) same_module((a), (b), #a, __LINE__)

/* m exists and its repr contains want (then m is freed). */
static void repr_has(tn_module *m, const char *want, const char *what, int line) {
    if (!m) { fail_at(line, "%s: failed (error: %s)", what, tn_last_error()); return; }
    char *r = tn_module_repr(m);
    if (!strstr(r, want)) fail_at(line, "%s: repr %s lacks %s", what, r, want);
    else tn_test_passed++;
    tn_string_free(r);
    tn_module_free(m);
}
#define REPR_HAS(m, want) repr_has((m), (want), #m, __LINE__)

TEST(conv_struct_and_text_agree) {
    SAME(tn_nn_conv2d(1, 32, 3), tn_nn_conv2d_str(1, 32, 3, NULL));
    SAME(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_conv2d_str(1, 32, 3, "padding=1"));
    SAME(tn_nn_conv2d(2, 4, 3, .kernel_size_hw = {3, 5}, .stride = 2, .padding_hw = {1, 2}, .dilation = 2, .groups = 2),
         tn_nn_conv2d_str(2, 4, 3, "kernel_size=(3, 5), stride=2, padding=(1, 2), dilation=2, groups=2"));
    SAME(tn_nn_conv2d(3, 8, 3, .padding = TN_PADDING_SAME, .dilation = 2, .bias = false),
         tn_nn_conv2d_str(3, 8, 3, "padding='same', dilation=2, bias=False"));
    SAME(tn_nn_conv2d(3, 8, 3, .padding = TN_PADDING_VALID), tn_nn_conv2d_str(3, 8, 3, "padding=\"valid\""));
    SAME(tn_nn_conv1d(2, 4, 3, .stride = 2, .padding = 1, .dilation = 2), tn_nn_conv1d_str(2, 4, 3, "stride=2, padding=1, dilation=2"));
    SAME(tn_nn_conv_transpose2d(4, 2, 3, .stride = 2, .padding = 1, .output_padding = 1),
         tn_nn_conv_transpose2d_str(4, 2, 3, "stride=2, padding=1, output_padding=1"));
    SAME(tn_nn_conv_transpose2d(4, 2, 3, .stride_hw = {2, 1}, .output_padding_hw = {1, 0}),
         tn_nn_conv_transpose2d_str(4, 2, 3, "stride=(2, 1), output_padding=(1, 0)"));
    /* names in any order, defaults restated, spaces and brackets as Python allows */
    SAME(tn_nn_conv2d(2, 4, 3, .bias = true, .groups = 2, .stride_hw = {2, 1}, .padding_mode = TN_PADDING_ZEROS),
         tn_nn_conv2d_str(2, 4, 3, "  groups = 2 ,stride=[2, 1],bias=True, padding_mode='zeros' "));
    /* the struct from TN_DEFAULTS, filled by hand, as C++ or generated code would */
    tn_conv_opts o = TN_DEFAULTS(tn_conv_opts);
    CHECK(o.stride == 1 && o.padding == 0 && o.dilation == 1 && o.groups == 1 && o.bias && o.padding_mode == TN_PADDING_ZEROS);
    CHECK(o.kernel_size_hw[0] == 0 && o.stride_hw[1] == 0);
    o.padding = 2;
    o.bias = false;
    SAME(tn_nn_conv2d_opts(1, 2, 5, o), tn_nn_conv2d_str(1, 2, 5, "padding=2, bias=False"));
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(kwargs_text_errors) {
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "pading=1"), "tn_nn_conv2d: unknown option 'pading' (valid: stride, padding,");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride"), "tn_nn_conv2d: option text \"stride\": expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride="), "expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "=2"), "expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=1, stride=2"), "tn_nn_conv2d: option 'stride' given twice");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=2x"), "tn_nn_conv2d: option stride=2x is not a number");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=1e300"), "tn_nn_conv2d: option stride=1e+300: expected an integer");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=nan"), "expected an integer");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=(1, 2, 3)"), "tn_nn_conv2d: option stride=(1, 2, 3): expected at most 2 values");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=()"), "is not a number or a tuple of numbers");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "groups=(1, 2)"), "tn_nn_conv2d: option groups=(1, 2): expected at most 1 value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "bias=maybe"), "tn_nn_conv2d: option bias=maybe: expected True or False");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "padding_mode='mirror'"), "option padding_mode='mirror': expected one of zeros|reflect|replicate|circular");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "padding=same'"), "expected an int, a tuple, 'same' or 'valid'");
    /* no fixed buffers: a long name or value is read whole (and refused here for what it says) */
    char *text = (char *)malloc(20000);
    memset(text, 'x', 19990);
    memcpy(text + 19990, "=1", 3);
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, text), "tn_nn_conv2d: unknown option 'xxxx");
    memcpy(text, "stride=", 7);
    memset(text + 7, '0', 19000);
    memcpy(text + 19007, "2", 2);   /* stride=000...0002 */
    tn_module *m = tn_nn_conv2d_str(1, 2, 3, text);
    CHECK_MSG(m != NULL, "a long number: %s", tn_last_error());
    tn_module_free(m);
    free(text);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(pool_norm_embedding_agree) {
    SAME(tn_nn_max_pool2d(2), tn_nn_max_pool2d_str(2, NULL));
    SAME(tn_nn_max_pool2d(3, .stride = 2, .padding = 1, .dilation = 2, .ceil_mode = true),
         tn_nn_max_pool2d_str(3, "stride=2, padding=1, dilation=2, ceil_mode=True"));
    SAME(tn_nn_max_pool2d(3, .kernel_size_hw = {3, 2}, .stride_hw = {2, 1}), tn_nn_max_pool2d_str(3, "kernel_size=(3, 2), stride=(2, 1)"));
    SAME(tn_nn_max_pool1d(4, .stride = 2, .padding = 1), tn_nn_max_pool1d_str(4, "stride=2, padding=1"));
    SAME(tn_nn_avg_pool2d(3, .stride = 1, .padding = 1, .count_include_pad = false, .divisor_override = 2),
         tn_nn_avg_pool2d_str(3, "stride=1, padding=1, count_include_pad=False, divisor_override=2"));
    SAME(tn_nn_avg_pool1d(3, .stride = 2), tn_nn_avg_pool1d_str(3, "stride=2, divisor_override=None"));
    /* PyTorch's defaults: stride None = the kernel size */
    REPR_HAS(tn_nn_max_pool2d(3), "MaxPool2d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)");
    tn_pool_opts po = TN_DEFAULTS(tn_pool_opts);
    CHECK(po.stride == TN_NONE && po.padding == 0 && po.dilation == 1 && !po.return_indices && !po.ceil_mode && po.count_include_pad &&
          po.divisor_override == TN_NONE);
    /* an option of the other kind: an error in both forms, unless at its default */
    CHECK_ERR(tn_nn_avg_pool2d(2, .dilation = 2), "tn_nn_avg_pool2d: dilation is not an option of AvgPool2d");
    CHECK_ERR(tn_nn_max_pool2d(2, .count_include_pad = false), "tn_nn_max_pool2d: count_include_pad is not an option of MaxPool2d");
    CHECK_ERR(tn_nn_max_pool1d(2, .divisor_override = 1), "divisor_override is not an option of MaxPool1d");
    CHECK_ERR(tn_nn_max_pool1d_str(2, "count_include_pad=True"), "tn_nn_max_pool1d: unknown option 'count_include_pad'");
    CHECK_ERR(tn_nn_max_pool1d(2, .stride_hw = {2, 1}), "a 1-d pooling takes ints");
    CHECK_ERR(tn_nn_max_pool2d(2, .stride = 0), "stride should be greater than zero");
    CHECK_ERR(tn_nn_avg_pool2d(2, .divisor_override = 0), "divisor must be not zero");
    SAME(tn_nn_avg_pool2d(2, .dilation = 1, .return_indices = false), tn_nn_avg_pool2d_str(2, NULL));

    SAME(tn_nn_batch_norm2d(8), tn_nn_batch_norm2d_str(8, ""));
    SAME(tn_nn_batch_norm1d(3, .eps = 1e-3, .affine = false, .track_running_stats = false),
         tn_nn_batch_norm1d_str(3, "eps=1e-3, affine=False, track_running_stats=False"));
    SAME(tn_nn_batch_norm2d(3, .momentum = NAN), tn_nn_batch_norm2d_str(3, "momentum=None"));
    REPR_HAS(tn_nn_batch_norm2d(3, .momentum = 0), "momentum=0.0,");   /* zero is not the default */
    REPR_HAS(tn_nn_batch_norm2d(3), "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
    SAME(tn_nn_layer_norm(TN_SHAPE(4, 5), .eps = 1e-6, .elementwise_affine = false),
         tn_nn_layer_norm_str(TN_SHAPE(4, 5), "eps=1e-6, elementwise_affine=False"));
    const int64_t shape[2] = {4, 5};
    SAME(tn_nn_layer_norm(shape, 2, .bias = false), tn_nn_layer_norm_str(shape, 2, "bias=False"));
    const tn_layer_norm_module_opts lo = TN_DEFAULTS(tn_layer_norm_module_opts);
    SAME(tn_nn_layer_norm(TN_SHAPE(5)), tn_nn_layer_norm_opts(shape + 1, 1, lo));
    SAME(tn_nn_group_norm(2, 4, .eps = 1e-3, .affine = false), tn_nn_group_norm_str(2, 4, "eps=1e-3, affine=False"));
    REPR_HAS(tn_nn_group_norm(3, 6), "GroupNorm(3, 6, eps=1e-05, affine=True)");

    /* padding_idx: None by default; 0 is row 0 */
    SAME(tn_nn_embedding(10, 3), tn_nn_embedding_str(10, 3, "padding_idx=None"));
    SAME(tn_nn_embedding(10, 3, .padding_idx = 0), tn_nn_embedding_str(10, 3, "padding_idx=0"));
    SAME(tn_nn_embedding(10, 3, .padding_idx = -1), tn_nn_embedding_str(10, 3, "padding_idx=-1"));
    REPR_HAS(tn_nn_embedding(10, 3, .padding_idx = 0), "Embedding(10, 3, padding_idx=0)");
    tn_module *e = tn_nn_embedding(10, 3);
    char *r = tn_module_repr(e);
    CHECK(!strcmp(r, "Embedding(10, 3)"));
    tn_string_free(r);
    tn_module_free(e);
    e = tn_nn_embedding(4, 2, .padding_idx = 0);   /* row 0 is zeros */
    tn_scope_begin();
    CHECK(e && tn_item(tn_sum(tn_abs(tn_select(tn_module_get(e, "weight"), 0, 0)))) == 0);
    tn_scope_end();
    tn_module_free(e);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(activation_agree) {
    static const char *const names[] = {"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
                                        "Hardtanh", "Hardswish", "Hardsigmoid", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) SAME(tn_nn_activation(names[i]), tn_nn_activation_str(names[i], NULL));
    SAME(tn_nn_activation("LeakyReLU", .negative_slope = 0.2), tn_nn_activation_str("LeakyReLU", "negative_slope=0.2"));
    SAME(tn_nn_activation("ELU", .alpha = 0.5, .inplace = true), tn_nn_activation_str("ELU", "alpha=0.5, inplace=True"));
    SAME(tn_nn_activation("GELU", .approximate = TN_APPROXIMATE_TANH), tn_nn_activation_str("GELU", "approximate='tanh'"));
    SAME(tn_nn_activation("Softplus", .beta = 2, .threshold = 10), tn_nn_activation_str("Softplus", "beta=2, threshold=10"));
    SAME(tn_nn_activation("Hardtanh", .min_val = -2, .max_val = 0.5), tn_nn_activation_str("Hardtanh", "min_val=-2.0, max_val=0.5"));
    SAME(tn_nn_activation("Softmax", .dim = 0), tn_nn_activation_str("Softmax", "dim=0"));
    /* PyTorch's per-activation defaults, and zero meaning zero */
    REPR_HAS(tn_nn_activation("LeakyReLU"), "LeakyReLU(negative_slope=0.01)");
    REPR_HAS(tn_nn_activation("LeakyReLU", .negative_slope = 0), "LeakyReLU(negative_slope=0.0)");
    REPR_HAS(tn_nn_activation("ELU"), "ELU(alpha=1.0)");
    REPR_HAS(tn_nn_activation("Softplus"), "Softplus(beta=1, threshold=20)");
    REPR_HAS(tn_nn_activation("Hardtanh"), "Hardtanh(min_val=-1.0, max_val=1.0)");
    REPR_HAS(tn_nn_activation("Softmax"), "Softmax(dim=None)");
    REPR_HAS(tn_nn_activation("GELU"), "GELU(approximate='none')");
    /* dim=None: PyTorch's implicit dim (1 for a 2-d input) */
    tn_module *sm = tn_nn_activation("Softmax"), *s1 = tn_nn_activation("Softmax", .dim = 1);
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(2, 3), TN_F32);
    CHECK(tn_item(tn_max(tn_abs(tn_sub(tn_module_forward(sm, x), tn_module_forward(s1, x))))) == 0);
    tn_scope_end();
    tn_module_free(sm);
    tn_module_free(s1);
    /* an option the activation does not have */
    CHECK_ERR(tn_nn_activation("ReLU", .alpha = 2), "tn_nn_activation: alpha is not an option of ReLU (valid: inplace)");
    CHECK_ERR(tn_nn_activation("Tanh", .inplace = true), "inplace is not an option of Tanh (valid: none)");
    CHECK_ERR(tn_nn_activation("GELU", .dim = 1), "dim is not an option of GELU");
    CHECK_ERR(tn_nn_activation_str("ReLU", "alpha=2"), "tn_nn_activation: unknown option 'alpha' (valid: inplace)");
    CHECK_ERR(tn_nn_activation("Swish"), "tn_nn_activation: unknown activation \"Swish\"");
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(rnn_attention_agree) {
    SAME(tn_nn_rnn(3, 4), tn_nn_rnn_str(3, 4, NULL));
    SAME(tn_nn_rnn(3, 4, .num_layers = 2, .nonlinearity = TN_NONLINEARITY_RELU, .bias = false),
         tn_nn_rnn_str(3, 4, "num_layers=2, nonlinearity='relu', bias=False"));
    SAME(tn_nn_lstm(3, 4, .num_layers = 2, .batch_first = true, .dropout = 0.5, .bidirectional = true, .proj_size = 2),
         tn_nn_lstm_str(3, 4, "num_layers=2, batch_first=True, dropout=0.5, bidirectional=True, proj_size=2"));
    SAME(tn_nn_gru(3, 4, .bidirectional = true), tn_nn_gru_str(3, 4, "bidirectional=True"));
    SAME(tn_nn_rnn_cell(3, 4, .nonlinearity = TN_NONLINEARITY_RELU), tn_nn_rnn_cell_str(3, 4, "nonlinearity=relu"));
    SAME(tn_nn_lstm_cell(3, 4, .bias = false), tn_nn_lstm_cell_str(3, 4, "bias=False"));
    SAME(tn_nn_gru_cell(3, 4), tn_nn_gru_cell_str(3, 4, ""));
    REPR_HAS(tn_nn_lstm(3, 4, .dropout = 0), "LSTM(3, 4)");
    CHECK_ERR(tn_nn_lstm(3, 4, .nonlinearity = TN_NONLINEARITY_RELU), "tn_nn_lstm: nonlinearity is not an option of LSTM");
    CHECK_ERR(tn_nn_gru(3, 4, .proj_size = 2), "proj_size argument is only supported for LSTM");
    CHECK_ERR(tn_nn_gru_cell(3, 4, .nonlinearity = TN_NONLINEARITY_RELU), "nonlinearity is not an option of GRUCell (valid: bias)");
    CHECK_ERR(tn_nn_gru_str(3, 4, "proj_size=0"), "tn_nn_gru: unknown option 'proj_size'");   /* PyTorch refuses the keyword, even 0 */

    SAME(tn_nn_multihead_attention(8, 2), tn_nn_multihead_attention_str(8, 2, "kdim=None, vdim=None"));
    SAME(tn_nn_multihead_attention(8, 2, .bias = false, .add_bias_kv = true, .kdim = 4, .vdim = 6, .batch_first = true, .dropout = 0.1),
         tn_nn_multihead_attention_str(8, 2, "bias=False, add_bias_kv=True, kdim=4, vdim=6, batch_first=True, dropout=0.1"));
    SAME(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16),
         tn_nn_transformer_encoder_layer_str(8, 2, "dim_feedforward=16"));
    SAME(tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 16, .activation = TN_ACTIVATION_GELU, .norm_first = true, .bias = false,
                                         .layer_norm_eps = 1e-6, .batch_first = true),
         tn_nn_transformer_decoder_layer_str(8, 2, "dim_feedforward=16, activation='gelu', norm_first=True, bias=False, layer_norm_eps=1e-6, batch_first=True"));
    /* dropout: 0.1 when left out, 0 when given 0 */
    REPR_HAS(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16), "(dropout): Dropout(p=0.1, inplace=False)");
    REPR_HAS(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .dropout = 0), "(dropout): Dropout(p=0.0, inplace=False)");
    REPR_HAS(tn_nn_transformer_encoder_layer(8, 2), "out_features=2048");
    REPR_HAS(tn_nn_transformer_encoder_layer(8, 2, .layer_norm_eps = 1e-3), "LayerNorm((8,), eps=0.001");
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* ---- optimizers and schedulers ---- */
static tn_tensor *param_(double v) {
    tn_tensor *t = tn_full(TN_SHAPE(3), v, TN_F64);
    tn_requires_grad_(t, true);
    return t;
}
/* Both optimizers exist and their param_groups hold the same options (state dicts'
   "param_groups.*" entries; the parameter lists differ only in identity). */
static void same_optim(tn_optim *a, tn_optim *b, const char *what, int line) {
    if (!a || !b) { fail_at(line, "%s: %s (error: %s)", what, a ? "text form failed" : "struct form failed", tn_last_error()); tn_optim_free(a); tn_optim_free(b); return; }
    tn_dict *da = tn_optim_state_dict(a), *db = tn_optim_state_dict(b);
    bool same = tn_dict_len(da) == tn_dict_len(db);
    for (int i = 0; same && i < tn_dict_len(da); i++) {
        const char *k = tn_dict_key(da, i);
        tn_tensor *x = tn_dict_value(da, i), *y = tn_dict_get(db, k);
        if (strncmp(k, "param_groups.", 13) || strstr(k, ".params")) continue;
        same = y && tn_item(x) == tn_item(y);
        if (!same) fail_at(line, "%s: %s is %g (struct form), %g (text form)", what, k, tn_item(x), y ? tn_item(y) : NAN);
    }
    if (same) tn_test_passed++;
    else if (tn_dict_len(da) != tn_dict_len(db)) fail_at(line, "%s: the state dicts differ in length", what);
    tn_dict_free(da);
    tn_dict_free(db);
    tn_optim_free(a);
    tn_optim_free(b);
}
#define SAME_OPTIM(a, b) same_optim((a), (b), #a, __LINE__)
/* group 0's option name of o (o is freed) */
static double got_(tn_optim *o, const char *name) {
    double v = o ? tn_optim_get(o, 0, name) : NAN;
    tn_optim_free(o);
    return v;
}

TEST(optim_agree) {
    tn_tensor *p = param_(1), *q = param_(2);
    tn_tensor *const ps[2] = {p, q};
    static const char *const kinds[] = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS"};
    tn_optim_opts none = TN_DEFAULTS(tn_optim_opts);
    for (int k = 0; k < 10; k++) SAME_OPTIM(tn_optim_create(kinds[k], ps, 2), tn_optim_create_str(kinds[k], ps, 2, NULL));
    for (int k = 0; k < 10; k++) SAME_OPTIM(tn_optim_create_opts(kinds[k], ps, 2, none), tn_optim_create_str(kinds[k], ps, 2, ""));
    SAME_OPTIM(tn_optim_sgd(ps, 2, .lr = 0.1, .momentum = 0.9, .dampening = 0, .weight_decay = 1e-4, .nesterov = true, .maximize = true),
               tn_optim_create_str("SGD", ps, 2, "lr=0.1, momentum=0.9, dampening=0, weight_decay=1e-4, nesterov=True, maximize=True"));
    SAME_OPTIM(tn_optim_adam(ps, 2, .lr = 3e-4, .betas = {0.5, 0.75}, .eps = 1e-6, .amsgrad = true, .foreach = false),
               tn_optim_create_str("Adam", ps, 2, "lr=3e-4, betas=(0.5, 0.75), eps=1e-6, amsgrad=True, foreach=False"));
    SAME_OPTIM(tn_optim_adamw(ps, 2, .weight_decay = 0.05, .fused = -1, .capturable = false, .differentiable = false),
               tn_optim_create_str("AdamW", ps, 2, "weight_decay=0.05, fused=None, capturable=False, differentiable=False"));
    SAME_OPTIM(tn_optim_rmsprop(ps, 2, .alpha = 0.9, .momentum = 0.5, .centered = true),
               tn_optim_create_str("RMSprop", ps, 2, "alpha=0.9, momentum=0.5, centered=True"));
    SAME_OPTIM(tn_optim_adagrad(ps, 2, .lr_decay = 0.01, .initial_accumulator_value = 0.25, .eps = 1e-9),
               tn_optim_create_str("Adagrad", ps, 2, "lr_decay=0.01, initial_accumulator_value=0.25, eps=1e-9"));
    SAME_OPTIM(tn_optim_adadelta(ps, 2, .rho = 0.8), tn_optim_create_str("Adadelta", ps, 2, "rho=0.8"));
    SAME_OPTIM(tn_optim_adamax(ps, 2, .betas = {0.8, 0.9}), tn_optim_create_str("Adamax", ps, 2, "betas=(0.8, 0.9)"));
    SAME_OPTIM(tn_optim_nadam(ps, 2, .momentum_decay = 0.01, .decoupled_weight_decay = true, .weight_decay = 0.1),
               tn_optim_create_str("NAdam", ps, 2, "momentum_decay=0.01, decoupled_weight_decay=True, weight_decay=0.1"));
    SAME_OPTIM(tn_optim_radam(ps, 2, .decoupled_weight_decay = true), tn_optim_create_str("RAdam", ps, 2, "decoupled_weight_decay=True"));
    SAME_OPTIM(tn_optim_lbfgs(ps, 2, .max_iter = 10, .history_size = 5, .line_search_fn = TN_LINE_SEARCH_STRONG_WOLFE),
               tn_optim_create_str("LBFGS", ps, 2, "max_iter=10, history_size=5, line_search_fn='strong_wolfe'"));
    SAME_OPTIM(tn_optim_lbfgs(ps, 2, .max_eval = 7, .tolerance_grad = 1e-5, .tolerance_change = 1e-8),
               tn_optim_create_str("LBFGS", ps, 2, "max_eval=7, tolerance_grad=1e-5, tolerance_change=1e-8"));
    SAME_OPTIM(tn_optim_create("Adam", ps, 2, .lr = 0.5), tn_optim_adam(ps, 2, .lr = 0.5));
    /* PyTorch's defaults, per kind */
    CHECK(got_(tn_optim_sgd(ps, 2), "lr") == 1e-3 && got_(tn_optim_sgd(ps, 2), "momentum") == 0);
    CHECK(got_(tn_optim_adam(ps, 2), "betas[0]") == 0.9 && got_(tn_optim_adam(ps, 2), "betas[1]") == 0.999 && got_(tn_optim_adam(ps, 2), "eps") == 1e-8);
    CHECK(got_(tn_optim_adam(ps, 2), "weight_decay") == 0 && got_(tn_optim_adamw(ps, 2), "weight_decay") == 1e-2);
    CHECK(got_(tn_optim_rmsprop(ps, 2), "lr") == 1e-2 && got_(tn_optim_rmsprop(ps, 2), "alpha") == 0.99);
    CHECK(got_(tn_optim_adagrad(ps, 2), "lr") == 1e-2 && got_(tn_optim_adagrad(ps, 2), "eps") == 1e-10);
    CHECK(got_(tn_optim_adadelta(ps, 2), "lr") == 1 && got_(tn_optim_adadelta(ps, 2), "rho") == 0.9 && got_(tn_optim_adadelta(ps, 2), "eps") == 1e-6);
    CHECK(got_(tn_optim_adamax(ps, 2), "lr") == 2e-3 && got_(tn_optim_nadam(ps, 2), "momentum_decay") == 4e-3 && got_(tn_optim_radam(ps, 2), "lr") == 1e-3);
    CHECK(got_(tn_optim_lbfgs(ps, 2), "lr") == 1 && got_(tn_optim_lbfgs(ps, 2), "max_iter") == 20 && got_(tn_optim_lbfgs(ps, 2), "max_eval") == 25 &&
          got_(tn_optim_lbfgs(ps, 2), "history_size") == 100 && got_(tn_optim_lbfgs(ps, 2), "line_search_fn") == TN_LINE_SEARCH_NONE);
    CHECK(got_(tn_optim_lbfgs(ps, 2, .max_iter = 8), "max_eval") == 10);   /* max_eval None: max_iter * 5 // 4 */
    /* zero is not "not given" */
    CHECK(got_(tn_optim_adamw(ps, 2, .weight_decay = 0), "weight_decay") == 0);
    CHECK(got_(tn_optim_sgd(ps, 2, .lr = 0), "lr") == 0 && got_(tn_optim_adam(ps, 2, .betas = {0, 0}), "betas[1]") == 0);
    CHECK(got_(tn_optim_rmsprop(ps, 2, .momentum = 0), "momentum") == 0 && got_(tn_optim_adam(ps, 2, .amsgrad = false), "amsgrad") == 0);
    /* add_param_group: a field not given keeps the optimizer's value, one given (0 too) replaces it */
    tn_optim *a = tn_optim_sgd(&p, 1, .lr = 0.1, .momentum = 0.9, .nesterov = true), *b = tn_optim_create_str("SGD", &p, 1, "lr=0.1, momentum=0.9, nesterov=True");
    CHECK(tn_optim_add_param_group(a, &q, 1, .weight_decay = 0.01) == 0 && tn_optim_add_param_group_str(b, &q, 1, "weight_decay=0.01") == 0);
    CHECK(tn_optim_get(a, 1, "lr") == 0.1 && tn_optim_get(a, 1, "momentum") == 0.9 && tn_optim_get(a, 1, "nesterov") == 1 && tn_optim_get(a, 1, "weight_decay") == 0.01);
    SAME_OPTIM(a, b);
    a = tn_optim_sgd(&p, 1, .lr = 0.1, .momentum = 0.9);
    b = tn_optim_sgd(&p, 1, .lr = 0.1, .momentum = 0.9);
    CHECK(tn_optim_add_param_group(a, &q, 1, .momentum = 0, .lr = 0.5) == 0 && tn_optim_add_param_group_str(b, &q, 1, "momentum=0, lr=0.5") == 0);
    CHECK(tn_optim_get(a, 1, "momentum") == 0 && tn_optim_get(a, 1, "lr") == 0.5 && tn_optim_get(a, 0, "momentum") == 0.9);
    SAME_OPTIM(a, b);
    a = tn_optim_adam(&p, 1, .betas = {0.5, 0.6});
    CHECK(tn_optim_add_param_group(a, &q, 1, .betas = {NAN, 0.7}) == 0 && tn_optim_get(a, 1, "betas[0]") == 0.5 && tn_optim_get(a, 1, "betas[1]") == 0.7);
    tn_optim_free(a);
    /* an option the kind does not have */
    CHECK_ERR(tn_optim_adam(ps, 2, .momentum = 0.9), "tn_optim_adam: momentum is not an option of Adam (valid: lr, betas, eps, weight_decay, amsgrad, maximize");
    CHECK_ERR(tn_optim_sgd(ps, 2, .betas = {0.9, 0.99}), "tn_optim_sgd: betas is not an option of SGD");
    CHECK_ERR(tn_optim_lbfgs(ps, 2, .foreach = true), "foreach is not an option of LBFGS");
    CHECK_ERR(tn_optim_create_str("Adam", ps, 2, "momentum=0.9"), "tn_optim_adam: unknown option 'momentum' (valid: lr, betas, eps, weight_decay, amsgrad, maximize, capturable");
    CHECK_ERR(tn_optim_rmsprop(ps, 2, .capturable = true), "tn_optim_rmsprop: capturable=True is not supported (only capturable=False)");
    CHECK_ERR(tn_optim_adam(ps, 2, .amsgrad = 2), "option amsgrad=2: expected true or false");
    tn_optim *s = tn_optim_sgd(&p, 1);
    CHECK_ERR(tn_optim_add_param_group(s, &q, 1, .eps = 1e-8) == 0, "tn_optim_add_param_group: eps is not an option of SGD");
    tn_optim_free(s);
    tn_release(p);
    tn_release(q);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* Two SGD optimizers (lr 0.1, momentum 0.9, two groups), a scheduler on each (struct form,
   text form), stepped together: the same learning rates and momenta every step. */
static tn_optim *sched_optim_(tn_tensor **keep) {
    keep[0] = param_(1);
    keep[1] = param_(2);
    tn_optim *o = tn_optim_sgd(keep, 1, .lr = 0.1, .momentum = 0.9);
    tn_optim_add_param_group(o, keep + 1, 1, .lr = 0.05);
    return o;
}
static void same_sched(tn_lr_scheduler *a, tn_optim *oa, tn_lr_scheduler *b, tn_optim *ob, bool plateau, const char *what, int line) {
    bool same = a && b;
    if (!same) fail_at(line, "%s: %s (error: %s)", what, a ? "text form failed" : "struct form failed", tn_last_error());
    for (int step = 0; same && step < 8; step++) {
        for (int g = 0; same && g < 2; g++)
            same = tn_lr_scheduler_get_last_lr(a, g) == tn_lr_scheduler_get_last_lr(b, g) && tn_optim_get(oa, g, "lr") == tn_optim_get(ob, g, "lr") &&
                   tn_optim_get(oa, g, "momentum") == tn_optim_get(ob, g, "momentum");
        if (!same) fail_at(line, "%s: step %d: lr %g vs %g", what, step, tn_optim_get(oa, 0, "lr"), tn_optim_get(ob, 0, "lr"));
        if (plateau) { tn_lr_scheduler_step_metric(a, 1.0); tn_lr_scheduler_step_metric(b, 1.0); }
        else { tn_lr_scheduler_step(a); tn_lr_scheduler_step(b); }
    }
    if (same) tn_test_passed++;
    tn_lr_scheduler_free(a);
    tn_lr_scheduler_free(b);
}
#define SAME_SCHED(call, kind, text) do { \
        tn_tensor *ka_[2], *kb_[2]; \
        tn_optim *o = sched_optim_(ka_), *ob_ = sched_optim_(kb_); \
        tn_lr_scheduler *sa_ = call; \
        same_sched(sa_, o, tn_lr_scheduler_create_str(ob_, kind, text), ob_, !strcmp(kind, "ReduceLROnPlateau"), #call, __LINE__); \
        tn_optim_free(o); tn_optim_free(ob_); \
        for (int i_ = 0; i_ < 2; i_++) { tn_release(ka_[i_]); tn_release(kb_[i_]); } \
    } while (0)

TEST(scheduler_agree) {
    SAME_SCHED(tn_lr_scheduler_step_lr(o, .step_size = 2), "StepLR", "step_size=2");
    SAME_SCHED(tn_lr_scheduler_step_lr(o, .step_size = 3, .gamma = 0.5), "StepLR", "step_size=3, gamma=0.5");
    SAME_SCHED(tn_lr_scheduler_step_lr(o, .step_size = 2, .gamma = 0), "StepLR", "step_size=2, gamma=0");   /* zero is zero */
    SAME_SCHED(tn_lr_scheduler_multi_step_lr(o, .milestones = TN_INTS(5, 2)), "MultiStepLR", "milestones=[5, 2]");
    SAME_SCHED(tn_lr_scheduler_multi_step_lr(o, .milestones = TN_INTS(3), .gamma = 0.3), "MultiStepLR", "milestones=(3,), gamma=0.3");
    SAME_SCHED(tn_lr_scheduler_exponential_lr(o, .gamma = 0.9), "ExponentialLR", "gamma=0.9");
    SAME_SCHED(tn_lr_scheduler_cosine_annealing_lr(o, .T_max = 4, .eta_min = 0.01), "CosineAnnealingLR", "T_max=4, eta_min=0.01");
    SAME_SCHED(tn_lr_scheduler_cosine_annealing_warm_restarts(o, .T_0 = 2, .T_mult = 2), "CosineAnnealingWarmRestarts", "T_0=2, T_mult=2");
    SAME_SCHED(tn_lr_scheduler_linear_lr(o), "LinearLR", NULL);
    SAME_SCHED(tn_lr_scheduler_linear_lr(o, .start_factor = 0.5, .end_factor = 0.9, .total_iters = 3), "LinearLR", "start_factor=0.5, end_factor=0.9, total_iters=3");
    SAME_SCHED(tn_lr_scheduler_constant_lr(o), "ConstantLR", "");
    SAME_SCHED(tn_lr_scheduler_constant_lr(o, .factor = 0.5, .total_iters = 2, .last_epoch = -1), "ConstantLR", "factor=0.5, total_iters=2, last_epoch=-1");
    SAME_SCHED(tn_lr_scheduler_polynomial_lr(o, .total_iters = 4, .power = 2), "PolynomialLR", "total_iters=4, power=2.0");
    SAME_SCHED(tn_lr_scheduler_one_cycle_lr(o, .max_lr = 1.0, .total_steps = 10), "OneCycleLR", "max_lr=1.0, total_steps=10");
    SAME_SCHED(tn_lr_scheduler_one_cycle_lr(o, .max_lr_groups = TN_DOUBLES(1.0, 0.5), .epochs = 2, .steps_per_epoch = 5, .anneal_strategy = TN_ANNEAL_LINEAR,
                                            .three_phase = true, .max_momentum_groups = TN_DOUBLES(0.9, 0.8), .base_momentum = 0.7, .div_factor = 10,
                                            .final_div_factor = 100, .pct_start = 0.4),
               "OneCycleLR", "max_lr=(1.0, 0.5), epochs=2, steps_per_epoch=5, anneal_strategy='linear', three_phase=True, max_momentum=(0.9, 0.8), "
               "base_momentum=0.7, div_factor=10, final_div_factor=100, pct_start=0.4");
    SAME_SCHED(tn_lr_scheduler_one_cycle_lr(o, .max_lr = 0.5, .total_steps = 8, .cycle_momentum = false), "OneCycleLR", "max_lr=0.5, total_steps=8, cycle_momentum=False");
    SAME_SCHED(tn_lr_scheduler_reduce_lr_on_plateau(o), "ReduceLROnPlateau", NULL);
    SAME_SCHED(tn_lr_scheduler_reduce_lr_on_plateau(o, .mode = TN_MODE_MAX, .factor = 0.5, .patience = 1, .threshold = 0.1, .threshold_mode = TN_THRESHOLD_ABS,
                                                    .cooldown = 1, .min_lr_groups = TN_DOUBLES(0.01, 0.02), .eps = 1e-9),
               "ReduceLROnPlateau", "mode='max', factor=0.5, patience=1, threshold=0.1, threshold_mode='abs', cooldown=1, min_lr=(0.01, 0.02), eps=1e-9");
    SAME_SCHED(tn_lr_scheduler_reduce_lr_on_plateau(o, .patience = 0, .min_lr = 0.04), "ReduceLROnPlateau", "patience=0, min_lr=0.04");
    /* required options, other kinds' options */
    tn_tensor *k[2];
    tn_optim *o = sched_optim_(k);
    CHECK_ERR(tn_lr_scheduler_step_lr(o), "tn_lr_scheduler_step_lr: StepLR needs step_size");
    CHECK_ERR(tn_lr_scheduler_multi_step_lr(o), "MultiStepLR needs milestones");
    CHECK_ERR(tn_lr_scheduler_exponential_lr(o), "ExponentialLR needs gamma");
    CHECK_ERR(tn_lr_scheduler_cosine_annealing_lr(o), "CosineAnnealingLR needs T_max");
    CHECK_ERR(tn_lr_scheduler_cosine_annealing_warm_restarts(o), "CosineAnnealingWarmRestarts needs T_0");
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .total_steps = 3), "OneCycleLR needs max_lr");
    CHECK_ERR(tn_lr_scheduler_step_lr(o, .step_size = 2, .eta_min = 0.1), "tn_lr_scheduler_step_lr: eta_min is not an option of StepLR (valid: step_size, gamma, last_epoch)");
    CHECK_ERR(tn_lr_scheduler_reduce_lr_on_plateau(o, .last_epoch = 3), "last_epoch is not an option of ReduceLROnPlateau");
    CHECK_ERR(tn_lr_scheduler_create_str(o, "StepLR", "step_size=2, eta_min=0.1"), "tn_lr_scheduler_step_lr: unknown option 'eta_min' (valid: step_size, gamma, last_epoch)");
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .max_lr_groups = TN_DOUBLES(0.1), .total_steps = 3), "expected 2 values for max_lr, got 1");
    CHECK_ERR(tn_lr_scheduler_create_opts(o, "StepLRR", (tn_lr_scheduler_opts)TN_DEFAULTS(tn_lr_scheduler_opts)), "tn_lr_scheduler_create: unknown scheduler 'StepLRR'");
    tn_optim_free(o);
    tn_release(k[0]);
    tn_release(k[1]);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* ---- data ---- */
/* Both loaders exist and give the same batches (count, shapes, values) for one epoch. */
static void same_loader(tn_loader *a, tn_loader *b, const char *what, int line) {
    bool same = a && b && tn_loader_len(a) == tn_loader_len(b);
    if (!a || !b) fail_at(line, "%s: %s (error: %s)", what, a ? "text form failed" : "struct form failed", tn_last_error());
    for (int r = 1; same && r == 1;) {
        tn_tensor *x[2] = {NULL, NULL}, *y[2] = {NULL, NULL};
        r = tn_loader_next(a, x);
        same = r == tn_loader_next(b, y);
        for (int k = 0; same && r == 1 && k < 2; k++) {
            tn_scope_begin();
            same = tn_ndim(x[k]) == tn_ndim(y[k]) && !memcmp(tn_shape(x[k]), tn_shape(y[k]), sizeof(int64_t) * (size_t)tn_ndim(x[k])) &&
                   tn_item(tn_sum(tn_abs(tn_sub(tn_to_dtype(x[k], TN_F64), tn_to_dtype(y[k], TN_F64))))) == 0;
            tn_scope_end();
        }
        for (int k = 0; r == 1 && k < 2; k++) { tn_release(x[k]); tn_release(y[k]); }
    }
    if (same) tn_test_passed++;
    else if (a && b) fail_at(line, "%s: the batches differ", what);
    tn_loader_free(a);
    tn_loader_free(b);
}
#define SAME_LOADER(a, b) same_loader((a), (b), #a, __LINE__)
static void same_tensor(tn_tensor *a, tn_tensor *b, const char *what, int line) {
    bool same = a && b && tn_ndim(a) == tn_ndim(b) && tn_get_dtype(a) == tn_get_dtype(b) &&
                !memcmp(tn_shape(a), tn_shape(b), sizeof(int64_t) * (size_t)tn_ndim(a));
    if (same) {
        tn_scope_begin();
        same = tn_numel(a) == 0 || tn_item(tn_sum(tn_abs(tn_sub(tn_to_dtype(a, TN_F64), tn_to_dtype(b, TN_F64))))) == 0;
        tn_scope_end();
    }
    if (same) tn_test_passed++;
    else fail_at(line, "%s: the tensors differ (error: %s)", what, tn_last_error());
    tn_release(a);
    tn_release(b);
}
#define SAME_TENSOR(a, b) same_tensor((a), (b), #a, __LINE__)

TEST(data_agree) {
    tn_tensor *x = tn_arange(0, 20, 1, TN_F32), *y = tn_arange(0, 10, 1, TN_I64);
    tn_tensor *xs[2] = {tn_reshape(x, TN_SHAPE(10, 2)), y};
    tn_dataset *ds = tn_tensor_dataset(xs, 2);
    SAME_LOADER(tn_loader_new(ds), tn_loader_new_str(ds, NULL));
    SAME_LOADER(tn_loader_new(ds, .batch_size = 3, .drop_last = true), tn_loader_new_str(ds, "batch_size=3, drop_last=True"));
    SAME_LOADER(tn_loader_new(ds, .batch_size = 4, .shuffle = true, .seed = 0, .num_workers = 2, .prefetch_factor = 3),
                tn_loader_new_str(ds, "batch_size=4, shuffle=True, seed=0, num_workers=2, prefetch_factor=3"));
    SAME_LOADER(tn_loader_new(ds, .batch_size = 4, .shuffle = true, .seed = 0), tn_loader_new_str(ds, "batch_size=4, shuffle=True, seed=0, num_workers=0"));
    tn_loader *l = tn_loader_new(ds);   /* PyTorch's batch_size=1 */
    CHECK(tn_loader_len(l) == 10);
    tn_loader_free(l);
    l = tn_loader_new(ds, .batch_size = TN_NONE);   /* None: samples one by one */
    tn_tensor *b[2];
    CHECK(tn_loader_len(l) == 10 && tn_loader_next(l, b) == 1 && tn_ndim(b[0]) == 1 && tn_ndim(b[1]) == 0);
    tn_release(b[0]);
    tn_release(b[1]);
    tn_loader_free(l);
    CHECK_ERR(tn_loader_new(ds, .batch_size = 0), "batch_size should be a positive integer value");   /* 0 is not None */
    CHECK_ERR(tn_loader_new(ds, .prefetch_factor = 2), "prefetch_factor option could only be specified with num_workers > 0");
    CHECK_ERR(tn_loader_new_str(ds, "prefetch_factor=2"), "prefetch_factor option could only be specified with num_workers > 0");
    CHECK_ERR(tn_loader_new_str(ds, "batch_size=1, batch=2"), "tn_loader_new: unknown option 'batch' (valid: batch_size, shuffle, drop_last, num_workers, prefetch_factor, persistent_workers, timeout, seed)");
    tn_dataset_free(ds);
    tn_release(xs[0]);
    tn_release(x);
    tn_release(y);

    char path[] = "/tmp/tn_kwargs_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f) return;
    fputs("a;b;label;c\n1;2;0;3\n4;5;1;6\n", f);
    fclose(f);
    tn_tensor *la, *lb;
    SAME_TENSOR(tn_read_csv(path, NULL, .delimiter = ";"), tn_read_csv_str(path, NULL, "delimiter=';'"));
    SAME_TENSOR(tn_read_csv(path, &la, .delimiter = ";", .label_name = "label", .dtype = TN_F64),
                tn_read_csv_str(path, &lb, "delimiter=';', label_name='label', dtype=float64"));
    SAME_TENSOR(la, lb);
    SAME_TENSOR(tn_read_csv(path, &la, .delimiter = ";", .label_column = -2), tn_read_csv_str(path, &lb, "delimiter=';', label_column=-2"));
    SAME_TENSOR(la, lb);
    SAME_TENSOR(tn_read_csv(path, &la, .delimiter = ";", .label_column = 2, .header = true), tn_read_csv_str(path, &lb, "label_column=2, delimiter=;, header=True"));
    SAME_TENSOR(la, lb);
    x = tn_read_csv(path, &la, .delimiter = ";", .label_column = 0);   /* 0 is column 0, not "none" */
    tn_scope_begin();
    CHECK(x && la && tn_size(x, 1) == 3 && tn_item(tn_select(la, 0, 1)) == 4);
    tn_scope_end();
    tn_release(x);
    tn_release(la);
    x = tn_read_csv(path, &la, .delimiter = ";");
    CHECK(x && !la && tn_size(x, 1) == 4 && tn_get_dtype(x) == TN_F32);   /* defaults: no label column, float32 */
    tn_release(x);
    CHECK_ERR(tn_read_csv(path, NULL), "tn_read_csv:");   /* the default delimiter ',' */
    CHECK_ERR(tn_read_csv(path, NULL, .delimiter = ";", .label_column = 1, .label_name = "label"), "give label_column or label_name, not both");
    CHECK_ERR(tn_read_csv_str(path, NULL, "delimiter=';', label_column='label'"), "tn_read_csv: option label_column='label' is not a number");
    remove(path);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* ---- functional ops and autograd ---- */
/* same values (both exist, same shape, max |a - b| == 0); both released */
#define SAME_VALUES(a, b) same_tensor((a), (b), #a, __LINE__)

TEST(functional_agree) {
    tn_scope_begin();
    tn_manual_seed(3);
    tn_tensor *x = tn_randn(TN_SHAPE(2, 4, 7, 6), TN_F64), *w = tn_randn(TN_SHAPE(6, 2, 3, 3), TN_F64), *b = tn_randn(TN_SHAPE(6), TN_F64);
    tn_tensor *x1 = tn_randn(TN_SHAPE(2, 4, 9), TN_F64), *w1 = tn_randn(TN_SHAPE(6, 4, 3), TN_F64), *wt = tn_randn(TN_SHAPE(4, 3, 3, 3), TN_F64);
    tn_tensor *wt1 = tn_randn(TN_SHAPE(4, 3, 3), TN_F64);
    /* tn_keep: same_tensor releases its arguments; the scope owns the rest */
#define K(t) tn_retain(t)
    SAME_VALUES(K(tn_conv2d(x, w, b, .groups = 2)), K(tn_conv2d_str(x, w, b, "groups=2")));
    SAME_VALUES(K(tn_conv2d(x, w, b, .stride = 2, .padding = 1, .groups = 2)), K(tn_conv2d_str(x, w, b, "stride=2, padding=1, groups=2")));
    SAME_VALUES(K(tn_conv2d(x, w, NULL, .stride_hw = {2, 1}, .padding_hw = {1, 0}, .dilation_hw = {1, 2}, .groups = 2)),
                K(tn_conv2d_str(x, w, NULL, "stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2")));
    SAME_VALUES(K(tn_conv2d(x, w, b, .padding = TN_PADDING_SAME, .dilation = 2, .groups = 2)), K(tn_conv2d_str(x, w, b, "padding='same', dilation=2, groups=2")));
    SAME_VALUES(K(tn_conv2d(x, w, b, .padding = TN_PADDING_VALID, .groups = 2)), K(tn_conv2d(x, w, b, .padding = 0, .groups = 2)));
    SAME_VALUES(K(tn_conv1d(x1, w1, NULL, .stride = 2, .padding = 1, .dilation = 2)), K(tn_conv1d_str(x1, w1, NULL, "stride=2, padding=1, dilation=2")));
    SAME_VALUES(K(tn_conv_transpose2d(x, wt, NULL, .stride = 2, .padding = 1, .output_padding = 1)),
                K(tn_conv_transpose2d_str(x, wt, NULL, "stride=2, padding=1, output_padding=1")));
    SAME_VALUES(K(tn_conv_transpose2d(x, wt, NULL, .stride_hw = {2, 1}, .output_padding_hw = {1, 0})),
                K(tn_conv_transpose2d_str(x, wt, NULL, "stride=(2, 1), output_padding=(1, 0)")));
    SAME_VALUES(K(tn_conv_transpose1d(x1, wt1, NULL, .stride = 2, .dilation = 2)), K(tn_conv_transpose1d_str(x1, wt1, NULL, "stride=2, dilation=2")));
    CHECK_ERR(tn_conv2d(x, w, b, .groups = 2, .output_padding = 1), "tn_conv2d: output_padding is an option of the transposed convolutions only");
    CHECK_ERR(tn_conv2d_str(x, w, b, "groups=2, stride=(0, 0)"), "tn_conv2d: stride");   /* a pair of zeros is zero, not "not given" */
    CHECK_ERR(tn_conv1d(x1, w1, NULL, .stride_hw = {2, 1}), "a 1-d convolution takes ints");

    tn_tensor *ia, *ib;
    SAME_VALUES(K(tn_max_pool2d(x, 2)), K(tn_max_pool2d_str(x, NULL, 2, NULL)));
    SAME_VALUES(K(tn_max_pool2d_with_indices(x, &ia, 3, .stride = 2, .padding = 1, .dilation = 2, .ceil_mode = true)),
                K(tn_max_pool2d_str(x, &ib, 3, "stride=2, padding=1, dilation=2, ceil_mode=True")));
    SAME_VALUES(K(ia), K(ib));
    SAME_VALUES(K(tn_max_pool2d(x, 3, .kernel_size_hw = {3, 2}, .stride_hw = {1, 2})), K(tn_max_pool2d_str(x, NULL, 3, "kernel_size=(3, 2), stride=(1, 2)")));
    SAME_VALUES(K(tn_max_pool1d_with_indices(x1, &ia, 2, .stride = 1)), K(tn_max_pool1d_str(x1, &ib, 2, "stride=1")));
    SAME_VALUES(K(ia), K(ib));
    SAME_VALUES(K(tn_avg_pool2d(x, 3, .stride = 1, .padding = 1, .count_include_pad = false, .divisor_override = 2)),
                K(tn_avg_pool2d_str(x, 3, "stride=1, padding=1, count_include_pad=False, divisor_override=2")));
    SAME_VALUES(K(tn_avg_pool1d(x1, 3, .ceil_mode = true)), K(tn_avg_pool1d_str(x1, 3, "ceil_mode=True, stride=None")));
    SAME_VALUES(K(tn_avg_pool2d(x, 2)), K(tn_avg_pool2d(x, 2, .stride = 2, .padding = 0)));   /* stride None: the kernel size */
    CHECK_ERR(tn_avg_pool2d(x, 2, .dilation = 2), "tn_avg_pool2d: dilation is not an option of avg_pool2d");
    CHECK_ERR(tn_max_pool2d(x, 2, .return_indices = true), "tn_max_pool2d: return_indices: call tn_max_pool2d_with_indices");
    CHECK_ERR(tn_max_pool2d_str(x, NULL, 2, "divisor_override=2"), "tn_max_pool2d: unknown option 'divisor_override'");

    tn_tensor *logits = tn_randn(TN_SHAPE(5, 4), TN_F64), *y = tn_randint(0, 4, TN_SHAPE(5), TN_I64, NULL);
    tn_tensor *cw = tn_rand(TN_SHAPE(4), TN_F64), *logp = tn_log_softmax(logits, 1);
    SAME_VALUES(K(tn_cross_entropy(logits, y)), K(tn_cross_entropy_str(logits, y, NULL)));
    SAME_VALUES(K(tn_cross_entropy(logits, y, .ignore_index = 1, .reduction = TN_REDUCTION_SUM, .label_smoothing = 0.1)),
                K(tn_cross_entropy_str(logits, y, "ignore_index=1, reduction='sum', label_smoothing=0.1")));
    SAME_VALUES(K(tn_cross_entropy(logits, y, .reduction = TN_REDUCTION_NONE)), K(tn_cross_entropy_str(logits, y, "reduction='none'")));
    SAME_VALUES(K(tn_nll_loss(logp, y, .ignore_index = 2, .reduction = TN_REDUCTION_SUM)), K(tn_nll_loss_str(logp, y, "ignore_index=2, reduction='sum'")));
    /* defaults: mean, ignore_index -100, no smoothing; ignore_index 0 is class 0 */
    SAME_VALUES(K(tn_nll_loss(logp, y)), K(tn_nll_loss(logp, y, .weight = NULL, .ignore_index = -100, .reduction = TN_REDUCTION_MEAN)));
    SAME_VALUES(K(tn_cross_entropy(logits, y)), K(tn_nll_loss(logp, y)));
    tn_tensor *y0 = tn_zeros(TN_SHAPE(5), TN_I64);
    CHECK(tn_item(tn_nll_loss(logp, y0, .ignore_index = 0, .reduction = TN_REDUCTION_SUM)) == 0);
    /* the weight: a tensor field (the option text cannot give one) */
    SAME_VALUES(K(tn_cross_entropy(logits, y, .weight = cw)), K(tn_nll_loss(logp, y, .weight = cw)));
    CHECK_ERR(tn_cross_entropy_str(logits, y, "weight=None"), "tn_cross_entropy: option weight is a tensor, which the option text cannot give");
    CHECK_ERR(tn_nll_loss(logp, y, .label_smoothing = 0.1), "tn_nll_loss: label_smoothing is an option of cross_entropy");
    CHECK_ERR(tn_nll_loss_str(logp, y, "label_smoothing=0.1"), "tn_nll_loss: unknown option 'label_smoothing' (valid: weight, ignore_index, reduction)");
    CHECK_ERR(tn_cross_entropy_str(logits, y, "reduction='batchmean'"), "expected one of mean|sum|none");
#undef K
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(autograd_agree) {
    tn_scope_begin();
    tn_tensor *x = tn_full(TN_SHAPE(3), 2.0, TN_F64);
    tn_requires_grad_(x, true);
    /* defaults: gradient ones for a one-element output, retain_graph None = create_graph = false */
    tn_tensor *l = tn_sum(tn_mul(x, x));
    CHECK(tn_backward(l) == 0 && tn_item(tn_sum(tn_grad(x))) == 12);
    CHECK_ERR(tn_backward(l) == 0, "tn_backward:");   /* the graph was freed */
    tn_set_grad(x, NULL);
    l = tn_sum(tn_mul(x, x));
    CHECK(tn_backward(l, .retain_graph = true) == 0 && tn_backward(l) == 0 && tn_item(tn_sum(tn_grad(x))) == 24);
    tn_set_grad(x, NULL);
    /* a gradient for a non-scalar output; the _opts form from TN_DEFAULTS */
    tn_tensor *y = tn_mul(x, x), *g = tn_full(TN_SHAPE(3), 0.5, TN_F64);
    tn_autograd_opts o = TN_DEFAULTS(tn_autograd_opts);
    CHECK(o.gradient == NULL && o.retain_graph == -1 && !o.create_graph && !o.allow_unused);
    o.gradient = g;
    CHECK(tn_backward_opts(y, o) == 0 && tn_item(tn_sum(tn_grad(x))) == 6);
    tn_set_grad(x, NULL);
    /* create_graph: the graph is kept (retain_graph None follows it) and the gradient has history */
    l = tn_sum(tn_mul(x, tn_mul(x, x)));
    tn_tensor *dx = NULL;
    CHECK(tn_autograd_grad(&l, 1, &x, 1, NULL, &dx, .create_graph = true) == 0 && tn_requires_grad(dx));
    CHECK(tn_autograd_grad(&l, 1, &x, 1, NULL, &dx) == 0 && !tn_requires_grad(dx));
    tn_tensor *z = tn_full(TN_SHAPE(1), 1.0, TN_F64);
    tn_requires_grad_(z, true);
    tn_tensor *ins[2] = {x, z}, *res[2];
    l = tn_sum(tn_mul(x, x));
    CHECK_ERR(tn_autograd_grad(&l, 1, ins, 2, NULL, res, .retain_graph = true) == 0, "not have been used");
    CHECK(tn_autograd_grad(&l, 1, ins, 2, NULL, res, .allow_unused = true) == 0 && res[1] == NULL && res[0]);
    CHECK_ERR(tn_backward(tn_sum(tn_mul(x, x)), .allow_unused = true) == 0, "tn_backward: allow_unused is an option of tn_autograd_grad");
    CHECK_ERR(tn_autograd_grad(&l, 1, &x, 1, NULL, res, .gradient = g) == 0, "tn_autograd_grad: gradient is an option of tn_backward");
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

int main(void) {
    RUN(conv_struct_and_text_agree);
    RUN(kwargs_text_errors);
    RUN(pool_norm_embedding_agree);
    RUN(activation_agree);
    RUN(rnn_attention_agree);
    RUN(optim_agree);
    RUN(scheduler_agree);
    RUN(data_agree);
    RUN(functional_agree);
    RUN(autograd_agree);
    return tn_test_report();
}
