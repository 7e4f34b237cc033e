/* test_modules.c — section 12 "modules" of tensor.h (the tn_module base, containers,
 * layers, nn.init, state dicts) and section 15's training checkpoints.
 *
 *  1. The module base: registering parameters, buffers and children (bad names, duplicates
 *     across kinds, NULLs), dotted lookups, named_parameters / named_buffers / state_dict
 *     key order for nested containers (equal to torch 1.13's for the same architecture),
 *     persistent buffers, train/eval, zero_grad, apply order, to_dtype, repr (equal to
 *     torch's print(model) for every layer kind).
 *  2. load_state_dict: strict, missing, unexpected, size mismatch (nothing loaded on
 *     error), non-strict lists, dtype conversion; torch's state dicts (written by Python in
 *     the safetensors format) reproduce torch's outputs for an MLP, a CNN with BatchNorm
 *     (eval), an LSTM and a TransformerEncoderLayer, and ours load strictly into torch.
 *  3. Layers: every constructor with default and other options, bad options (messages
 *     name the constructor), forward errors (messages name the layer), forward equal to
 *     the functional op on the layer's parameters, gradients reaching the parameters.
 *  4. Initialisation by the statistics of large draws; every tn_init_*; calculate_gain.
 *  5. Checkpoints: k steps + save + load into a fresh model/optimizer + m steps is bit-
 *     identical to k + m steps (Adam, SGD with momentum); bad checkpoints refused.
 *  6. A module written here (params, buffers, children, destroy, extra_repr).
 * Each test runs in a forked child (a crash is one failure), inside a scope, and must
 * give back every tensor and byte it made. PyTorch (/usr/bin/python3 with torch) is the
 * oracle where noted; without it those checks print "skipped: ..." and the rest runs
 * (TN_TEST_NO_TORCH=1 forces that; TN_MODULES_KEEP=1 keeps the temporary directory).
 * Build: gcc -std=c11 -Wall -Wextra -pedantic -O2 -g -I. -DTENSOR_ZLIB tests/test_modules.c -lm -pthread -lz
 * (ASan/UBSan: add -fsanitize=address,undefined -fno-sanitize-recover=undefined; LeakSanitizer
 * then checks each test's child too). */
#define _POSIX_C_SOURCE 200809L /* popen, mkdtemp, fork */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __unix__
#include <sys/types.h>
#include <sys/wait.h>
#endif

/* ==================================================================================== */
/* helpers                                                                                */
/* ==================================================================================== */
#define SH(...) TN_SHAPE(__VA_ARGS__)
static char tmpdir[512];
static const char *tmp_path(const char *name) {
    static char bufs[4][700];
    static int k;
    char *b = bufs[k++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
    return b;
}
/* All elements (row-major) as doubles, malloc'ed; *n receives the count. */
static double *vals(tn_tensor *t, int64_t *n) {
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
static double val_at(tn_tensor *t, int64_t i) {
    int64_t n;
    double *v = vals(t, &n), r = i < n ? v[i] : NAN;
    free(v);
    return r;
}
static bool same_shape(tn_tensor *a, tn_tensor *b) {
    return a && b && tn_ndim(a) == tn_ndim(b) && !memcmp(tn_shape(a), tn_shape(b), (size_t)tn_ndim(a) * sizeof(int64_t));
}
/* max |a - b| / (1 + |b|); INFINITY when either is NULL or the shapes differ. */
static double relerr(tn_tensor *a, tn_tensor *b) {
    if (!same_shape(a, b)) return INFINITY;
    int64_t na, nb;
    double *va = vals(a, &na), *vb = vals(b, &nb), e = 0;
    for (int64_t i = 0; i < na && i < nb; i++) {
        double d = fabs(va[i] - vb[i]) / (1 + fabs(vb[i]));
        if (d > e || d != d) e = d != d ? INFINITY : d;
    }
    free(va);
    free(vb);
    return e;
}
#define CHECK_SAME(a, b, tol) do { double e_ = relerr((a), (b)); \
    CHECK_MSG(e_ <= (tol), "%s vs %s: max error %g (tol %g)", #a, #b, e_, (double)(tol)); } while (0)
/* Same dtype, shape and bytes. */
static bool bitsame(tn_tensor *a, tn_tensor *b) {
    if (!same_shape(a, b) || tn_get_dtype(a) != tn_get_dtype(b)) return false;
    tn_scope_begin();
    tn_tensor *ca = tn_contiguous(tn_detach(a)), *cb = tn_contiguous(tn_detach(b));
    bool ok = ca && cb && !memcmp(tn_data_ptr(ca), tn_data_ptr(cb), (size_t)tn_numel(a) * tn_dtype_size(tn_get_dtype(a)));
    tn_scope_end();
    return ok;
}
/* Every entry of a and b (same keys, same order) bit-identical. */
static bool dicts_bitsame(const tn_dict *a, const tn_dict *b) {
    if (!a || !b || tn_dict_len(a) != tn_dict_len(b)) return false;
    for (int i = 0; i < tn_dict_len(a); i++)
        if (strcmp(tn_dict_key(a, i), tn_dict_key(b, i)) || !bitsame(tn_dict_value(a, i), tn_dict_value(b, i))) return false;
    return true;
}
/* "k1,k2,..." (malloc'ed) */
static char *keys_of(const tn_dict *d) {
    size_t cap = 16;
    for (int i = 0; i < tn_dict_len(d); i++) cap += strlen(tn_dict_key(d, i)) + 1;
    char *s = (char *)calloc(cap, 1);
    for (int i = 0; i < tn_dict_len(d); i++) {
        if (i) strcat(s, ",");
        strcat(s, tn_dict_key(d, i));
    }
    return s;
}
static bool keys_are(const tn_dict *d, const char *want) {
    char *k = keys_of(d);
    bool ok = !strcmp(k, want);
    if (!ok) printf("  keys: %s\n  want: %s\n", k, want);
    free(k);
    return ok;
}
/* A tensor from doubles. */
static tn_tensor *arr(const double *v, const int64_t *shape, int nd, tn_dtype dt) {
    tn_tensor *t = tn_from_data(v, shape, nd, TN_F64);
    return dt == TN_F64 ? t : tn_to_dtype(t, dt);
}
/* A deterministic cotangent of t's shape: 1 + 0.5 sin(i). */
static tn_tensor *cotangent(tn_tensor *t) {
    int64_t n = tn_numel(t);
    double *v = (double *)malloc((size_t)(n + 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) v[i] = 1 + 0.5 * sin((double)i + 1);
    tn_tensor *c = arr(v, tn_shape(t), tn_ndim(t), tn_get_dtype(t));
    free(v);
    return c;
}
/* Sample moments of a tensor. */
typedef struct { double mean, var, min, max; int64_t n; } moments;
static moments moments_of(tn_tensor *t) {
    moments m = {0, 0, INFINITY, -INFINITY, 0};
    double *v = vals(t, &m.n);
    for (int64_t i = 0; i < m.n; i++) { m.mean += v[i]; if (v[i] < m.min) m.min = v[i]; if (v[i] > m.max) m.max = v[i]; }
    m.mean /= (double)(m.n ? m.n : 1);
    for (int64_t i = 0; i < m.n; i++) m.var += (v[i] - m.mean) * (v[i] - m.mean);
    m.var /= (double)(m.n > 1 ? m.n - 1 : 1);
    free(v);
    return m;
}
/* A string contains every one of a list of pieces. */
static bool has(const char *s, const char *piece) { return s && strstr(s, piece); }

/* The parameters of m as an array (for optimizers), in named_parameters order; free with free(). */
static tn_tensor **params_of(tn_module *m, int *n) {
    tn_dict *d = tn_module_named_parameters(m);
    *n = tn_dict_len(d);
    tn_tensor **p = (tn_tensor **)calloc((size_t)*n + 1, sizeof *p);
    for (int i = 0; i < *n; i++) p[i] = tn_dict_value(d, i);   /* the module keeps them alive */
    tn_dict_free(d);
    return p;
}

/* ==================================================================================== */
/* a module written here: y = scale * fc(x), with a persistent and a non-persistent      */
/* buffer; the same class exists on the Python side ("Custom")                            */
/* ==================================================================================== */
typedef struct custom_m { tn_module base; int64_t width; char *scratch; } custom_m;
static int custom_destroyed;
static tn_tensor *custom_fwd(tn_module *m, tn_tensor *x) {
    return tn_mul(tn_module_get(m, "scale"), tn_module_forward(tn_module_child(m, "fc"), x));
}
static void custom_destroy(tn_module *m) {
    custom_destroyed++;
    free(((custom_m *)m)->scratch);   /* LeakSanitizer notices if destroy is never called */
}
static void custom_repr(tn_module *m, char *b, size_t n) { snprintf(b, n, "width=%lld", (long long)((custom_m *)m)->width); }
static const tn_module_type custom_type = {"Custom", custom_fwd, custom_destroy, custom_repr};
static tn_module *custom_new(int64_t width) {
    custom_m *c = (custom_m *)tn_module_new(&custom_type, sizeof *c);
    if (!c) return NULL;
    c->width = width;
    c->scratch = (char *)malloc(32);
    tn_scope_begin();
    bool ok = tn_module_register_buffer(&c->base, "count", tn_zeros(SH(1), TN_F32)) &&
              tn_module_add(&c->base, "fc", tn_nn_linear(width, width)) &&
              tn_module_register_parameter(&c->base, "scale", tn_ones(SH(width), TN_F32)) &&
              tn_module_register_buffer(&c->base, "tmp", tn_zeros(SH(2), TN_F32), .persistent = false);
    tn_scope_end();
    if (!ok) { tn_module_free(&c->base); return NULL; }
    return &c->base;
}

/* The nested architecture whose keys are compared with torch's (Python: nested()). */
static tn_module *nested_new(void) {
    tn_module *ml = tn_nn_module_list();
    tn_nn_sequential_append(ml, tn_nn_linear(2, 2));
    tn_nn_sequential_append(ml, tn_nn_group_norm(1, 2));
    tn_nn_sequential_append(ml, tn_nn_embedding(5, 2, .padding_idx = 0));
    tn_module *md = tn_nn_module_dict();
    tn_module_add(md, "bn", tn_nn_batch_norm1d(2, .affine = false));
    tn_module_add(md, "bn_nt", tn_nn_batch_norm1d(2, .track_running_stats = false));
    tn_module_add(md, "custom", custom_new(3));
    return tn_nn_sequential(
        tn_nn_conv2d(1, 2, 3), tn_nn_batch_norm2d(2), tn_nn_relu(),
        tn_nn_sequential(tn_nn_linear(4, 4), tn_nn_layer_norm(SH(4)),
                         tn_nn_sequential(tn_nn_linear(4, 2), tn_nn_batch_norm1d(2))),
        ml, md,
        tn_nn_lstm(3, 4, .num_layers = 2, .bidirectional = true, .proj_size = 2),
        tn_nn_multihead_attention(8, 2, .kdim = 4, .vdim = 6, .add_bias_kv = true),
        tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16), 2, .norm = tn_nn_layer_norm(SH(8))),
        tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 16),
        tn_nn_bilinear(2, 3, 4),
        tn_nn_conv_transpose2d(2, 3, 3, .bias = false));
}

/* The models whose torch state dicts we load (Python: MK[name]()); built in registration
   order so that a seed gives the same weights every time. */
static tn_module *mlp_new(void) {
    tn_module *a = tn_nn_linear(10, 16), *b = tn_nn_tanh(), *c = tn_nn_dropout(.p = 0.3), *d = tn_nn_linear(16, 8);
    tn_module *e = tn_nn_activation("LeakyReLU", .negative_slope = 0.1), *f = tn_nn_layer_norm(SH(8)), *g = tn_nn_linear(8, 3);
    return tn_nn_sequential(a, b, c, d, e, f, g);
}
static tn_module *cnn_new(void) {
    tn_module *a = tn_nn_conv2d(1, 4, 3, .padding = 1), *b = tn_nn_batch_norm2d(4), *c = tn_nn_relu(), *d = tn_nn_max_pool2d(2);
    tn_module *e = tn_nn_conv2d(4, 6, 3, .stride = 2, .groups = 2, .bias = false), *f = tn_nn_batch_norm2d(6, .momentum = NAN), *g = tn_nn_gelu();
    tn_module *h = tn_nn_avg_pool2d(2, .ceil_mode = true), *i = tn_nn_flatten(), *j = tn_nn_linear(6, 3);
    return tn_nn_sequential(a, b, c, d, e, f, g, h, i, j);
}
static tn_module *lstm_new(void) { return tn_nn_lstm(4, 5, .num_layers = 2, .bidirectional = true); }
static tn_module *tel_new(void) { return tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16); }
static tn_module *zoo_new(const char *name) {
    if (!strcmp(name, "mlp")) return mlp_new();
    if (!strcmp(name, "cnn")) return cnn_new();
    if (!strcmp(name, "lstm")) return lstm_new();
    if (!strcmp(name, "tel")) return tel_new();
    return nested_new();
}

/* ==================================================================================== */
/* repr cases: the Python expression and the same module built here                        */
/* ==================================================================================== */
#define RCASE(n, py, expr) case n: if (out) *out = (expr); return py;
static const char *repr_case(int i, tn_module **out) {
    switch (i) {
    RCASE(0, "nn.Conv1d(2, 4, 3, padding='same', bias=False)", tn_nn_conv1d(2, 4, 3, .padding = TN_PADDING_SAME, .bias = false))
    RCASE(1, "nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2)", tn_nn_conv1d(2, 4, 3, .stride = 2, .padding = 1, .dilation = 2))
    RCASE(2, "nn.Conv2d(2, 4, (3, 5), stride=2, padding=(1, 2), dilation=2, groups=2)", tn_nn_conv2d(2, 4, 3, .kernel_size_hw = {3, 5}, .stride = 2, .padding_hw = {1, 2}, .dilation = 2, .groups = 2))
    RCASE(3, "nn.Conv2d(2, 4, 3, padding='valid')", tn_nn_conv2d(2, 4, 3, .padding = TN_PADDING_VALID))
    RCASE(4, "nn.Conv2d(1, 32, 3, padding=1)", tn_nn_conv2d(1, 32, 3, .padding = 1))
    RCASE(5, "nn.Conv2d(3, 8, 3, padding='same', dilation=2)", tn_nn_conv2d(3, 8, 3, .padding = TN_PADDING_SAME, .dilation = 2))
    RCASE(6, "nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)", tn_nn_conv_transpose2d(4, 2, 3, .stride = 2, .padding = 1, .output_padding = 1))
    RCASE(7, "nn.ConvTranspose2d(4, 2, 3, groups=2, bias=False, dilation=2)", tn_nn_conv_transpose2d(4, 2, 3, .groups = 2, .bias = false, .dilation = 2))
    RCASE(8, "nn.MaxPool2d(3, stride=2, padding=1, dilation=2, ceil_mode=True)", tn_nn_max_pool2d(3, .stride = 2, .padding = 1, .dilation = 2, .ceil_mode = true))
    RCASE(9, "nn.MaxPool2d(2)", tn_nn_max_pool2d(2))
    RCASE(10, "nn.MaxPool1d(3)", tn_nn_max_pool1d(3))
    RCASE(11, "nn.MaxPool1d(4, stride=2, padding=1)", tn_nn_max_pool1d(4, .stride = 2, .padding = 1))
    RCASE(12, "nn.AvgPool2d(2)", tn_nn_avg_pool2d(2))
    RCASE(13, "nn.AvgPool2d(3, stride=1, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=2)",
          tn_nn_avg_pool2d(3, .stride = 1, .padding = 1, .ceil_mode = true, .count_include_pad = false, .divisor_override = 2))
    RCASE(14, "nn.AvgPool1d(2)", tn_nn_avg_pool1d(2))
    RCASE(15, "nn.AvgPool1d(3, stride=2, padding=1)", tn_nn_avg_pool1d(3, .stride = 2, .padding = 1))
    RCASE(16, "nn.AdaptiveAvgPool2d((2, 3))", tn_nn_adaptive_avg_pool2d(2, 3))
    RCASE(17, "nn.AdaptiveAvgPool2d(1)", tn_nn_adaptive_avg_pool2d(1, 1))
    RCASE(18, "nn.AdaptiveMaxPool2d((4, 2))", tn_nn_adaptive_max_pool2d(4, 2))
    RCASE(19, "nn.BatchNorm2d(3, momentum=None)", tn_nn_batch_norm2d(3, .momentum = NAN))
    RCASE(20, "nn.BatchNorm1d(3, eps=1e-3, affine=False, track_running_stats=False)", tn_nn_batch_norm1d(3, .eps = 1e-3, .affine = false, .track_running_stats = false))
    RCASE(21, "nn.BatchNorm2d(16, momentum=0.01)", tn_nn_batch_norm2d(16, .momentum = 0.01))
    RCASE(22, "nn.LayerNorm([4, 5])", tn_nn_layer_norm(SH(4, 5)))
    RCASE(23, "nn.LayerNorm(4, eps=1e-6, elementwise_affine=False)", tn_nn_layer_norm(SH(4), .eps = 1e-6, .elementwise_affine = false))
    RCASE(24, "nn.GroupNorm(2, 4, eps=1e-3, affine=False)", tn_nn_group_norm(2, 4, .eps = 1e-3, .affine = false))
    RCASE(25, "nn.GroupNorm(3, 6)", tn_nn_group_norm(3, 6))
    RCASE(26, "nn.Dropout(0.25)", tn_nn_dropout(.p = 0.25))
    RCASE(27, "nn.Dropout2d()", tn_nn_dropout2d())
    RCASE(28, "nn.Dropout(0.0)", tn_nn_dropout(.p = 0))
    RCASE(29, "nn.Embedding(10, 3, padding_idx=-1)", tn_nn_embedding(10, 3, .padding_idx = -1))
    RCASE(30, "nn.Embedding(10, 3)", tn_nn_embedding(10, 3))
    RCASE(31, "nn.Flatten()", tn_nn_flatten())
    RCASE(32, "nn.Flatten(0, 2)", tn_nn_flatten(.start_dim = 0, .end_dim = 2))
    RCASE(33, "nn.Unflatten(1, (2, 3))", tn_nn_unflatten(1, SH(2, 3)))
    RCASE(34, "nn.Identity()", tn_nn_identity())
    RCASE(35, "nn.Linear(3, 4)", tn_nn_linear(3, 4))
    RCASE(36, "nn.Linear(3, 4, bias=False)", tn_nn_linear(3, 4, .bias = false))
    RCASE(37, "nn.Bilinear(2, 3, 4, bias=False)", tn_nn_bilinear(2, 3, 4, .bias = false))
    RCASE(38, "nn.ReLU()", tn_nn_relu())
    RCASE(39, "nn.ReLU6()", tn_nn_activation("ReLU6"))
    RCASE(40, "nn.LeakyReLU()", tn_nn_activation("LeakyReLU"))
    RCASE(41, "nn.LeakyReLU(0.2)", tn_nn_activation("LeakyReLU", .negative_slope = 0.2))
    RCASE(42, "nn.ELU()", tn_nn_activation("ELU"))
    RCASE(43, "nn.ELU(alpha=0.5)", tn_nn_activation("ELU", .alpha = 0.5))
    RCASE(44, "nn.SELU()", tn_nn_activation("SELU"))
    RCASE(45, "nn.CELU(alpha=2.0)", tn_nn_activation("CELU", .alpha = 2.0))
    RCASE(46, "nn.GELU()", tn_nn_gelu())
    RCASE(47, "nn.GELU(approximate='tanh')", tn_nn_activation("GELU", .approximate = TN_APPROXIMATE_TANH))
    RCASE(48, "nn.SiLU()", tn_nn_activation("SiLU"))
    RCASE(49, "nn.Mish()", tn_nn_activation("Mish"))
    RCASE(50, "nn.Softplus()", tn_nn_activation("Softplus"))
    RCASE(51, "nn.Softplus(beta=2, threshold=10)", tn_nn_activation("Softplus", .beta = 2, .threshold = 10))
    RCASE(52, "nn.Hardtanh()", tn_nn_activation("Hardtanh"))
    RCASE(53, "nn.Hardtanh(min_val=-2.0, max_val=0.5)", tn_nn_activation("Hardtanh", .min_val = -2.0, .max_val = 0.5))
    RCASE(54, "nn.Hardswish()", tn_nn_activation("Hardswish"))
    RCASE(55, "nn.Hardsigmoid()", tn_nn_activation("Hardsigmoid"))
    RCASE(56, "nn.Tanh()", tn_nn_tanh())
    RCASE(57, "nn.Sigmoid()", tn_nn_sigmoid())
    RCASE(58, "nn.Softmax(dim=1)", tn_nn_activation("Softmax", .dim = 1))
    RCASE(59, "nn.LogSoftmax(dim=-1)", tn_nn_activation("LogSoftmax", .dim = -1))
    RCASE(60, "nn.Softmax(dim=0)", tn_nn_activation("Softmax", .dim = 0))
    RCASE(61, "nn.Sequential()", tn_nn_sequential_n(NULL, 0))
    RCASE(62, "nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Sequential()))",
          tn_nn_sequential(tn_nn_linear(2, 2), tn_nn_sequential(tn_nn_relu(), tn_nn_sequential_n(NULL, 0))))
    RCASE(63, "nn.ModuleList([nn.Linear(2, 3), nn.ReLU()])", NULL)   /* built by repr_build */
    RCASE(64, "nn.ModuleDict({'a': nn.Linear(2, 3), 'act': nn.Tanh()})", NULL)
    RCASE(65, "nn.LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)",
          tn_nn_lstm(3, 4, .num_layers = 2, .batch_first = true, .dropout = 0.5, .bidirectional = true))
    RCASE(66, "nn.LSTM(3, 4, proj_size=2)", tn_nn_lstm(3, 4, .proj_size = 2))
    RCASE(67, "nn.GRU(3, 4, bias=False)", tn_nn_gru(3, 4, .bias = false))
    RCASE(68, "nn.RNN(3, 4, nonlinearity='relu')", tn_nn_rnn(3, 4, .nonlinearity = TN_NONLINEARITY_RELU))
    RCASE(69, "nn.RNNCell(3, 4, nonlinearity='relu')", tn_nn_rnn_cell(3, 4, .nonlinearity = TN_NONLINEARITY_RELU))
    RCASE(70, "nn.LSTMCell(3, 4, bias=False)", tn_nn_lstm_cell(3, 4, .bias = false))
    RCASE(71, "nn.GRUCell(3, 4)", tn_nn_gru_cell(3, 4))
    RCASE(72, "nn.MultiheadAttention(8, 2)", tn_nn_multihead_attention(8, 2))
    RCASE(73, "nn.MultiheadAttention(8, 2, bias=False, kdim=4, vdim=6)", tn_nn_multihead_attention(8, 2, .bias = false, .kdim = 4, .vdim = 6))
    RCASE(74, "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)", tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16))
    RCASE(75, "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation='gelu', layer_norm_eps=1e-6, batch_first=True, norm_first=True)",
          tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .dropout = 0.0, .activation = TN_ACTIVATION_GELU, .layer_norm_eps = 1e-6, .batch_first = true, .norm_first = true))
    RCASE(76, "nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)", tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 16))
    RCASE(77, "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2, nn.LayerNorm(8))",
          tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16), 2, .norm = tn_nn_layer_norm(SH(8))))
    RCASE(78, "nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16), 1)",
          tn_nn_transformer_decoder(tn_nn_transformer_decoder_layer(8, 2, .dim_feedforward = 16), 1))
    RCASE(79, "Custom(4)", custom_new(4))
    RCASE(80, "nn.Bilinear(2, 3, 4)", tn_nn_bilinear(2, 3, 4))
    default: return NULL;
    }
}
/* The containers that need statements. */
static tn_module *repr_build(int i) {
    tn_module *m = NULL;
    if (i == 63) {
        m = tn_nn_module_list();
        tn_nn_sequential_append(m, tn_nn_linear(2, 3));
        tn_nn_sequential_append(m, tn_nn_relu());
        return m;
    }
    if (i == 64) {
        m = tn_nn_module_dict();
        tn_module_add(m, "a", tn_nn_linear(2, 3));
        tn_module_add(m, "act", tn_nn_tanh());
        return m;
    }
    repr_case(i, &m);
    return m;
}
/* A representative model (Python: rep()), printed whole. */
static tn_module *representative_new(void) {
    return tn_nn_sequential(
        tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8, .momentum = NAN), tn_nn_relu(), tn_nn_max_pool2d(2)),
        tn_nn_sequential(tn_nn_conv2d(8, 16, 3, .stride = 2, .groups = 2, .bias = false), tn_nn_group_norm(4, 16), tn_nn_activation("LeakyReLU", .negative_slope = 0.2),
                         tn_nn_dropout2d(.p = 0.1), tn_nn_adaptive_avg_pool2d(1, 1)),
        tn_nn_flatten(), tn_nn_linear(16, 32), tn_nn_layer_norm(SH(32)), tn_nn_gelu(), tn_nn_dropout(),
        tn_nn_unflatten(1, SH(4, 8)), tn_nn_conv1d(4, 4, 3, .padding = TN_PADDING_SAME), tn_nn_flatten(), custom_new(32),
        tn_nn_linear(32, 10, .bias = false), tn_nn_activation("LogSoftmax", .dim = 1));
}

/* ==================================================================================== */
/* the PyTorch oracle                                                                     */
/* ==================================================================================== */
static const char *const py_script[] = {   /* pieces: ISO C limits one string literal to 4095 chars */
    "import sys, os, json, struct, copy\n"
    "try:\n"
    "    import numpy as np\n"
    "    import torch, torch.nn as nn\n"
    "except Exception as e:\n"
    "    print('NOTORCH %s' % e); sys.exit(0)\n"
    "mode, d = sys.argv[1], sys.argv[2]\n"
    "def block(name, text):\n"
    "    print('@@ ' + name); print(text); print('@@@')\n"
    "NP = {'F32': '<f4', 'F64': '<f8', 'I64': '<i8'}\n"
    "ST = {'float32': 'F32', 'float64': 'F64', 'int64': 'I64'}\n"
    "def st_save(path, ts):\n"            /* safetensors, written from the spec */
    "    hdr, off, blobs = {}, 0, []\n"
    "    for k, t in ts.items():\n"
    "        a = np.array(t.detach().cpu().numpy(), order='C')\n"   /* (ascontiguousarray makes 0-d 1-d) */
    "        b = a.astype(NP[ST[str(a.dtype)]]).tobytes()\n"
    "        hdr[k] = {'dtype': ST[str(a.dtype)], 'shape': list(a.shape), 'data_offsets': [off, off + len(b)]}\n"
    "        off += len(b); blobs.append(b)\n"
    "    h = json.dumps(hdr).encode(); h += b' ' * ((8 - len(h) % 8) % 8)\n"
    "    with open(path, 'wb') as f: f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))\n"
    "def st_load(path):\n"
    "    b = open(path, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]\n"
    "    h = json.loads(b[8:8 + n].decode('utf-8')); h.pop('__metadata__', None); data = b[8 + n:]; out = {}\n"
    "    for k, v in h.items():\n"
    "        s, e = v['data_offsets']\n"
    "        out[k] = torch.from_numpy(np.frombuffer(data[s:e], dtype=NP[v['dtype']]).reshape(v['shape']).copy())\n"
    "    return out\n"
    ,
    "class Custom(nn.Module):\n"
    "    def __init__(self, width):\n"
    "        super().__init__()\n"
    "        self.width = width\n"
    "        self.register_buffer('count', torch.zeros(1))\n"
    "        self.fc = nn.Linear(width, width)\n"
    "        self.scale = nn.Parameter(torch.ones(width))\n"
    "        self.register_buffer('tmp', torch.zeros(2), persistent=False)\n"
    "    def forward(self, x): return self.scale * self.fc(x)\n"
    "    def extra_repr(self): return 'width=%d' % self.width\n"
    "def nested():\n"
    "    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(),\n"
    "        nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2))),\n"
    "        nn.ModuleList([nn.Linear(2, 2), nn.GroupNorm(1, 2), nn.Embedding(5, 2, padding_idx=0)]),\n"
    "        nn.ModuleDict({'bn': nn.BatchNorm1d(2, affine=False), 'bn_nt': nn.BatchNorm1d(2, track_running_stats=False), 'custom': Custom(3)}),\n"
    "        nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2),\n"
    "        nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True),\n"
    "        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, nn.LayerNorm(8)),\n"
    "        nn.TransformerDecoderLayer(8, 2, 16), nn.Bilinear(2, 3, 4), nn.ConvTranspose2d(2, 3, 3, bias=False))\n"
    "def rep():\n"
    "    return nn.Sequential(\n"
    "        nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8, momentum=None), nn.ReLU(), nn.MaxPool2d(2)),\n"
    "        nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, groups=2, bias=False), nn.GroupNorm(4, 16), nn.LeakyReLU(0.2), nn.Dropout2d(0.1), nn.AdaptiveAvgPool2d(1)),\n"
    "        nn.Flatten(), nn.Linear(16, 32), nn.LayerNorm(32), nn.GELU(), nn.Dropout(0.5), nn.Unflatten(1, (4, 8)),\n"
    "        nn.Conv1d(4, 4, 3, padding='same'), nn.Flatten(), Custom(32), nn.Linear(32, 10, bias=False), nn.LogSoftmax(dim=1))\n"
    "def mlp(): return nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 8), nn.LeakyReLU(0.1), nn.LayerNorm(8), nn.Linear(8, 3))\n"
    "def cnn():\n"
    "    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),\n"
    "        nn.Conv2d(4, 6, 3, stride=2, groups=2, bias=False), nn.BatchNorm2d(6, momentum=None), nn.GELU(),\n"
    "        nn.AvgPool2d(2, ceil_mode=True), nn.Flatten(), nn.Linear(6, 3))\n"
    "def lstm(): return nn.LSTM(4, 5, num_layers=2, bidirectional=True)\n"
    "def tel(): return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)\n"
    "MK = {'mlp': mlp, 'cnn': cnn, 'lstm': lstm, 'tel': tel, 'nested': nested}\n"
    "XS = {'mlp': (4, 10), 'cnn': (2, 1, 12, 12), 'lstm': (3, 2, 4), 'tel': (5, 3, 8)}\n"
    "def fwd(m, x):\n"
    "    y = m(x)\n"
    "    return (y[0] if isinstance(y, tuple) else y).detach()\n"
    ,
    "if mode == 'gen':\n"
    "    m = nested()\n"
    "    block('KEYS_P', ','.join(k for k, _ in m.named_parameters()))\n"
    "    block('KEYS_B', ','.join(k for k, _ in m.named_buffers()))\n"
    "    block('KEYS_S', ','.join(m.state_dict().keys()))\n"
    "    block('REPR_rep', repr(rep()))\n"
    "    for i, line in enumerate(open(os.path.join(d, 'repr_cases.txt')).read().splitlines()):\n"
    "        try: block('R%d' % i, repr(eval(line)))\n"
    "        except Exception as e: block('R%d' % i, 'ERROR %s' % e)\n"
    "    for name in ['mlp', 'cnn', 'lstm', 'tel']:\n"
    "        torch.manual_seed(1)\n"
    "        m = MK[name]()\n"
    "        if name == 'cnn':\n"            /* give the running statistics something to hold */
    "            with torch.no_grad():\n"
    "                for _ in range(3): m(torch.randn(8, 1, 12, 12) * 2 + 0.5)\n"
    "        m.eval()\n"
    "        x = torch.randn(*XS[name])\n"
    "        m64 = copy.deepcopy(m).double()\n"
    "        ts = {'x': x, 'y': fwd(m, x), 'y64': fwd(m64, x.double())}\n"
    "        ts.update({'sd.' + k: v for k, v in m.state_dict().items()})\n"
    "        ts.update({'sd64.' + k: v for k, v in m64.state_dict().items()})\n"
    "        st_save(os.path.join(d, 't2c_%s.safetensors' % name), ts)\n"
    "else:\n"                            /* check the state dicts the C side wrote */
    "    for name in ['mlp', 'cnn', 'lstm', 'tel', 'nested']:\n"
    "        path = os.path.join(d, 'c2t_%s.safetensors' % name)\n"
    "        if not os.path.exists(path): continue\n"
    "        try:\n"
    "            ts = st_load(path)\n"
    "            m = MK[name]().double()\n"
    "            m.load_state_dict({k[3:]: v for k, v in ts.items() if k.startswith('sd.')}, strict=True)\n"
    "            if name == 'nested':\n"
    "                print('C2T %s 0' % name); continue\n"
    "            m.eval()\n"
    "            y = fwd(m, ts['x'])\n"
    "            print('C2T %s %.3e' % (name, (y - ts['y']).abs().max().item()))\n"
    "        except Exception as e:\n"
    "            print('C2T %s ERROR %s' % (name, str(e).replace('\\n', ' ')))\n"
    "print('@@END')\n",
    NULL};

static char *oracle;                 /* stdout of the 'gen' run; NULL without torch */
static char oracle_why[300] = "not run";

/* Runs the script in mode; returns its stdout (malloc'ed), or NULL with why set. */
static char *run_torch(const char *mode, char *why, size_t whycap) {
    if (getenv("TN_TEST_NO_TORCH")) { snprintf(why, whycap, "TN_TEST_NO_TORCH is set"); return NULL; }
    if (access("/usr/bin/python3", X_OK) != 0) { snprintf(why, whycap, "/usr/bin/python3 not found"); return NULL; }
    const char *sp = tmp_path("oracle.py");
    FILE *f = fopen(sp, "w");
    if (!f) { snprintf(why, whycap, "cannot write %s", sp); return NULL; }
    for (int i = 0; py_script[i]; i++) fputs(py_script[i], f);
    fclose(f);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' %s '%s' 2>'%s'", sp, mode, tmpdir, tmp_path("oracle_stderr.txt"));
    FILE *p = popen(cmd, "r");
    if (!p) { snprintf(why, whycap, "popen failed"); return NULL; }
    size_t cap = 1 << 16, n = 0;
    char *out = (char *)malloc(cap);
    for (size_t got; (got = fread(out + n, 1, cap - n - 1, p)) > 0;) {
        n += got;
        if (cap - n < 4096) out = (char *)realloc(out, cap *= 2);
    }
    out[n] = 0;
    pclose(p);
    if (!strncmp(out, "NOTORCH", 7)) { snprintf(why, whycap, "torch is not importable by /usr/bin/python3 (%.200s)", out + 8); free(out); return NULL; }
    if (!strstr(out, "@@END")) {
        char err[4096] = "";
        FILE *e = fopen(tmp_path("oracle_stderr.txt"), "r");
        if (e) { size_t k = fread(err, 1, sizeof err - 1, e); err[k] = 0; fclose(e); }
        printf("the torch script failed:\n%s\n%s\n", out, err);
        snprintf(why, whycap, "the torch script failed");
        free(out);
        return NULL;
    }
    return out;
}
/* The text of block name (malloc'ed), or NULL. */
static char *oracle_block(const char *name) {
    if (!oracle) return NULL;
    char tag[64];
    snprintf(tag, sizeof tag, "@@ %s\n", name);
    const char *s = strstr(oracle, tag);
    if (!s) return NULL;
    s += strlen(tag);
    const char *e = strstr(s, "\n@@@\n");
    if (!e) return NULL;
    char *r = (char *)malloc((size_t)(e - s) + 1);
    memcpy(r, s, (size_t)(e - s));
    r[e - s] = 0;
    return r;
}
static void oracle_init(void) {
    FILE *f = fopen(tmp_path("repr_cases.txt"), "w");
    for (int i = 0; f && repr_case(i, NULL); i++) fprintf(f, "%s\n", repr_case(i, NULL));
    if (f) fclose(f);
    oracle = run_torch("gen", oracle_why, sizeof oracle_why);
}
#define NEED_TORCH(what) do { if (!oracle) { printf("skipped: %s (%s)\n", what, oracle_why); return; } } while (0)
/* Both texts, for a failed comparison. */
static void show_diff(const char *ours, const char *theirs) {
    printf("  ours:\n%s\n  torch's:\n%s\n", ours ? ours : "(null)", theirs ? theirs : "(null)");
}

/* ==================================================================================== */
/* 1. the module base                                                                     */
/* ==================================================================================== */
static tn_tensor *plain_fwd(tn_module *m, tn_tensor *x) { (void)m; return tn_mul_scalar(x, 2); }
static const tn_module_type plain_type = {"Plain", plain_fwd, NULL, NULL};

TEST(base_register) {
    tn_module *m = tn_module_new(&plain_type, sizeof(tn_module));
    CHECK(m && m->training && !strcmp(tn_module_name(m), "Plain"));
    tn_tensor *w = tn_randn(SH(2, 3), TN_F32), *b = tn_zeros(SH(3), TN_F32), *np = tn_ones(SH(2), TN_F32);
    CHECK(!tn_requires_grad(w));
    CHECK(tn_module_register_parameter(m, "w", w) == w);                 /* returns t, borrowed */
    CHECK(tn_requires_grad(w) && tn_is_leaf(w));                         /* a parameter requires grad */
    CHECK(tn_module_register_buffer(m, "b", b) == b && !tn_requires_grad(b));
    CHECK(tn_module_register_buffer(m, "np", np, .persistent = false) == np);
    tn_module *fc = tn_module_add(m, "fc", tn_nn_linear(3, 2));
    CHECK(fc && tn_module_num_children(m) == 1 && tn_module_child(m, "fc") == fc);
    const char *cn = NULL;
    CHECK(tn_module_child_at(m, 0, &cn) == fc && cn && !strcmp(cn, "fc"));
    CHECK(tn_module_child_at(m, 1, &cn) == NULL && tn_module_child_at(m, -1, NULL) == NULL);

    /* bad names: '.', empty, NULL; NULL module */
    CHECK_ERR(tn_module_register_parameter(m, "a.b", w), "tn_module_register_parameter: need a module and a name without '.' (got \"a.b\")");
    CHECK_ERR(tn_module_register_parameter(m, "", w), "tn_module_register_parameter: need a module and a name without '.'");
    CHECK_ERR(tn_module_register_parameter(m, NULL, w), "(null)");
    CHECK_ERR(tn_module_register_parameter(NULL, "x", w), "tn_module_register_parameter: need a module");
    CHECK_ERR(tn_module_register_buffer(m, "x.y", b), "tn_module_register_buffer: need a module and a name without '.'");
    CHECK_ERR(tn_module_add(m, "c.d", tn_nn_relu()), "tn_module_add: need a module and a name without '.'");   /* the child is freed */
    CHECK_ERR(tn_module_add(NULL, "c", tn_nn_relu()), "tn_module_add: need a module");
    /* one name, one kind (PyTorch: "attribute 'w' already exists") */
    CHECK_ERR(tn_module_register_buffer(m, "w", b), "tn_module_register_buffer: \"w\" is already a parameter of Plain");
    CHECK_ERR(tn_module_register_parameter(m, "b", w), "tn_module_register_parameter: \"b\" is already a buffer of Plain");
    CHECK_ERR(tn_module_register_parameter(m, "fc", w), "\"fc\" is already a child of Plain");
    CHECK_ERR(tn_module_add(m, "w", tn_nn_relu()), "tn_module_add: \"w\" is already a parameter of Plain");
    CHECK_ERR(tn_module_add(m, "np", tn_nn_relu()), "\"np\" is already a buffer of Plain");
    CHECK_ERR(tn_module_register_buffer(m, "fc", b, .persistent = false), "\"fc\" is already a child of Plain");
    /* parameters must be floating leaves */
    tn_tensor *nl = tn_mul_scalar(w, 2);                                  /* has a grad_fn */
    CHECK_ERR(tn_module_register_parameter(m, "nl", nl), "tn_module_register_parameter: \"nl\" must be a leaf tensor");
    CHECK_ERR(tn_module_register_parameter(m, "i", tn_zeros(SH(2), TN_I64)), "tn_module_register_parameter: \"i\" must be floating, got int64");
    CHECK(tn_module_register_buffer(m, "steps", tn_zeros(SH(1), TN_I64)) != NULL);   /* buffers may be integers */
    /* NULL tensors pass through silently (a failed expression upstream keeps its message) */
    tn_clear_error();
    CHECK(tn_module_register_parameter(m, "z", NULL) == NULL && tn_module_register_buffer(m, "z", NULL) == NULL && tn_module_add(m, "z", NULL) == NULL);
    CHECK(tn_last_error()[0] == 0 && tn_module_get(m, "z") == NULL && tn_module_child(m, "z") == NULL);
    /* none of the refused registrations left anything behind */
    tn_dict *p = tn_module_named_parameters(m), *bu = tn_module_named_buffers(m), *sd = tn_module_state_dict(m);
    CHECK(keys_are(p, "w,fc.weight,fc.bias"));
    CHECK(keys_are(bu, "b,np,steps"));
    CHECK(keys_are(sd, "w,b,steps,fc.weight,fc.bias"));                  /* parameters, persistent buffers, children */
    CHECK(tn_dict_value(p, 0) == w && tn_dict_value(bu, 1) == np);       /* named_*: the tensors themselves */
    /* state_dict: detached tensors sharing the module's storage (writes reach the module, as in PyTorch) */
    CHECK(tn_dict_value(sd, 0) != w && tn_same_storage(tn_dict_value(sd, 0), w) && !tn_requires_grad(tn_dict_value(sd, 0)));
    CHECK(tn_is_leaf(tn_dict_value(sd, 0)) && tn_grad_fn_name(tn_dict_value(sd, 0)) == NULL);
    tn_no_grad_begin();
    tn_fill_(tn_dict_value(sd, 0), 3);
    tn_no_grad_end();
    CHECK(val_at(w, 5) == 3);
    tn_dict_free(p); tn_dict_free(bu); tn_dict_free(sd);
    /* the same name and kind replaces, in place (order kept), releasing the old tensor */
    tn_tensor *w2 = tn_full(SH(4), 7, TN_F32);
    CHECK(tn_module_register_parameter(m, "w", w2) == w2 && tn_module_get(m, "w") == w2);
    p = tn_module_named_parameters(m);
    CHECK(keys_are(p, "w,fc.weight,fc.bias") && tn_dict_value(p, 0) == w2);
    tn_dict_free(p);
    tn_module *fc2 = tn_module_add(m, "fc", tn_nn_linear(3, 5, .bias = false));  /* the old child is freed */
    CHECK(fc2 && tn_module_num_children(m) == 1 && tn_module_child(m, "fc") == fc2 && tn_module_num_parameters(m) == 4 + 15);
    /* registration retains: the module keeps w2 alive after the scope drops its reference */
    tn_scope_begin();
    tn_tensor *kept = tn_module_register_buffer(m, "kept", tn_arange(0, 5, 1, TN_F32));
    tn_scope_end();
    CHECK(kept && tn_numel(tn_module_get(m, "kept")) == 5 && val_at(tn_module_get(m, "kept"), 4) == 4);
    /* lookups by dotted name */
    CHECK(tn_module_get(m, "fc.weight") == tn_module_get(fc2, "weight") && tn_module_get(m, "fc.bias") == NULL);
    CHECK(tn_module_get(m, "fc") == NULL && tn_module_get(m, "fc.") == NULL && tn_module_get(m, "nope.weight") == NULL);
    CHECK(tn_module_get(m, "") == NULL && tn_module_get(m, NULL) == NULL && tn_module_get(NULL, "w") == NULL);
    CHECK(tn_module_get(m, "b") == b && tn_module_get(m, "np") == np);   /* buffers too */
    CHECK(tn_module_forward(m, w2) && val_at(tn_module_forward(m, w2), 0) == 14);
    CHECK(tn_module_forward(m, NULL) == NULL && tn_module_forward(NULL, w2) == NULL);
    /* tn_module_new's own checks */
    CHECK_ERR(tn_module_new(NULL, sizeof(tn_module)), "tn_module_new: need a type with a name");
    CHECK_ERR(tn_module_new(&plain_type, sizeof(tn_module) - 1), "size >= sizeof(tn_module)");
    tn_module_free(m);
    tn_module_free(NULL);                                                /* a no-op */
}

/* tn_module_add with a module already in the tree (itself, an ancestor, a child under a
   second name or again under its own name): refused, and nothing is freed (the tree owns it). */
TEST(base_add_cycles) {
    tn_module *inner = tn_nn_sequential(tn_nn_linear(2, 2));
    tn_module *m = tn_nn_sequential(tn_nn_relu(), inner);
    CHECK_ERR(tn_module_add(m, "self", m), "tn_module_add");
    CHECK_ERR(tn_module_add(inner, "up", m), "tn_module_add");           /* an ancestor */
    CHECK_ERR(tn_module_add(m, "again", inner), "tn_module_add");        /* a second owner */
    CHECK_ERR(tn_module_add(m, "1", inner), "tn_module_add");            /* replacing itself */
    CHECK(tn_module_num_children(m) == 2 && tn_module_num_children(inner) == 1 && tn_module_get(m, "1.0.weight") != NULL);
    char *r = tn_module_repr(m);
    CHECK(r && !strcmp(r, "Sequential(\n  (0): ReLU()\n  (1): Sequential(\n    (0): Linear(in_features=2, out_features=2, bias=True)\n  )\n)"));
    tn_string_free(r);
    tn_module_free(m);
}

/* named_parameters / named_buffers / state_dict of nested containers, in torch's order. */
TEST(keys_nested) {
    tn_module *m = nested_new();
    CHECK(m != NULL);
    if (!m) { printf("  %s\n", tn_last_error()); return; }
    tn_dict *p = tn_module_named_parameters(m), *b = tn_module_named_buffers(m), *s = tn_module_state_dict(m);
    /* without torch: spot checks of what torch 1.13 gives for this architecture */
    CHECK(!strcmp(tn_dict_key(p, 0), "0.weight") && !strcmp(tn_dict_key(p, 1), "0.bias") && !strcmp(tn_dict_key(p, 2), "1.weight"));
    CHECK(tn_dict_contains(p, "4.2.weight") && tn_dict_contains(p, "5.custom.scale") && tn_dict_contains(p, "5.custom.fc.weight"));
    CHECK(tn_dict_contains(p, "6.weight_hr_l1_reverse") && tn_dict_contains(p, "7.bias_k") && tn_dict_contains(p, "8.layers.1.self_attn.in_proj_weight"));
    CHECK(tn_dict_contains(p, "8.norm.bias") && tn_dict_contains(p, "9.multihead_attn.out_proj.weight") && tn_dict_contains(p, "11.weight"));
    CHECK(tn_dict_contains(b, "5.custom.tmp") && !tn_dict_contains(s, "5.custom.tmp"));     /* non-persistent */
    CHECK(tn_dict_contains(s, "5.bn.num_batches_tracked") && !tn_dict_contains(s, "5.bn_nt.running_mean") && !tn_dict_contains(s, "5.bn.weight"));
    CHECK(tn_get_dtype(tn_dict_get(s, "1.num_batches_tracked")) == TN_I64 && tn_ndim(tn_dict_get(s, "1.num_batches_tracked")) == 0);
    /* own tensors before the children's: "scale" precedes "fc.*" though registered after fc */
    int is = -1, ifc = -1;
    for (int i = 0; i < tn_dict_len(s); i++) {
        if (!strcmp(tn_dict_key(s, i), "5.custom.scale")) is = i;
        if (!strcmp(tn_dict_key(s, i), "5.custom.fc.weight")) ifc = i;
    }
    CHECK(is >= 0 && ifc == is + 2);                                     /* scale, count, fc.weight */
    int64_t total = 0;
    for (int i = 0; i < tn_dict_len(p); i++) total += tn_numel(tn_dict_value(p, i));
    CHECK(tn_module_num_parameters(m) == total && total > 0);
    if (oracle) {
        const char *names[3] = {"KEYS_P", "KEYS_B", "KEYS_S"};
        tn_dict *ds[3] = {p, b, s};
        for (int k = 0; k < 3; k++) {
            char *want = oracle_block(names[k]), *got = keys_of(ds[k]);
            CHECK_MSG(want && !strcmp(want, got), "%s differs from torch's:\n  ours:  %s\n  torch: %s", names[k], got, want ? want : "(none)");
            free(want);
            free(got);
        }
    } else printf("skipped: key order against torch (%s)\n", oracle_why);
    tn_dict_free(p); tn_dict_free(b); tn_dict_free(s);
    tn_module_free(m);
}

/* Shared (tied) parameters, as an embedding tied to the output layer: named_parameters and
   named_buffers list a tensor once (PyTorch's remove_duplicate), state_dict under every name. */
TEST(tied_weights) {
    tn_module *emb = tn_nn_embedding(5, 3), *lin = tn_nn_linear(3, 5, .bias = false);
    tn_tensor *w = tn_module_get(emb, "weight");
    CHECK(tn_module_register_parameter(lin, "weight", w) == w);
    tn_module *m = tn_nn_sequential(emb, lin);
    tn_tensor *b = tn_zeros(SH(2), TN_F32);
    tn_module_register_buffer(m, "b", b);
    tn_module_register_buffer(lin, "b2", b);
    tn_dict *p = tn_module_named_parameters(m), *bu = tn_module_named_buffers(m), *s = tn_module_state_dict(m);
    CHECK(keys_are(p, "0.weight"));                                     /* torch 1.13: ['0.weight'] */
    CHECK(keys_are(bu, "b"));                                           /* ['b'] */
    CHECK(keys_are(s, "b,0.weight,1.weight,1.b2"));                     /* ['b', '0.weight', '1.weight', '1.b2'] */
    CHECK(tn_same_storage(tn_dict_get(s, "0.weight"), tn_dict_get(s, "1.weight")));
    CHECK(tn_module_num_parameters(m) == 15);                           /* sum(p.numel() for p in m.parameters()) */
    /* so an optimizer over named_parameters accepts the tied model */
    tn_optim *o = tn_optim_sgd(tn_dict_values(p), tn_dict_len(p), .lr = 0.1);
    CHECK_MSG(o != NULL, "%s", tn_last_error());
    tn_optim_free(o);
    tn_dict_free(p); tn_dict_free(bu); tn_dict_free(s);
    tn_module_free(m);
}

/* Persistent and non-persistent buffers in state dicts and loading. */
TEST(buffers_persistent) {
    tn_module *c = custom_new(3);
    tn_dict *b = tn_module_named_buffers(c), *s = tn_module_state_dict(c);
    CHECK(keys_are(b, "count,tmp"));
    CHECK(keys_are(s, "scale,count,fc.weight,fc.bias"));
    /* a key for the non-persistent buffer is unexpected, as in PyTorch */
    tn_dict_set(s, "tmp", tn_ones(SH(2), TN_F32));
    CHECK_ERR(tn_module_load_state_dict(c, s, NULL, NULL) == 0, "Unexpected key(s) in state_dict: \"tmp\".");
    tn_dict *miss = tn_dict_new(), *unex = tn_dict_new();
    CHECK(tn_module_load_state_dict(c, s, miss, unex, .strict = false) == 0);
    CHECK(tn_dict_len(miss) == 0 && keys_are(unex, "tmp"));
    CHECK(val_at(tn_module_get(c, "tmp"), 0) == 0);                     /* not loaded */
    /* buffers are moved by to_dtype and are never trained */
    CHECK(tn_module_to_dtype(c, TN_F64) == 0 && tn_get_dtype(tn_module_get(c, "tmp")) == TN_F64 && !tn_requires_grad(tn_module_get(c, "count")));
    tn_dict_free(miss); tn_dict_free(unex); tn_dict_free(b); tn_dict_free(s);
    tn_module_free(c);
}

static void flags_of(tn_module *m, int *ntrain, int *ntotal) {
    (*ntotal)++;
    if (m->training) (*ntrain)++;
    for (int i = 0; i < tn_module_num_children(m); i++) flags_of(tn_module_child_at(m, i, NULL), ntrain, ntotal);
}
/* train/eval: recursive; Dropout is the identity in eval; BatchNorm uses batch statistics
   (and updates the running ones) in training, the running ones in eval. */
TEST(train_eval) {
    tn_module *m = nested_new();
    int nt = 0, n = 0;
    flags_of(m, &nt, &n);
    CHECK(n > 20 && nt == n);                                            /* modules start in training mode */
    tn_module_eval(m);
    nt = n = 0; flags_of(m, &nt, &n);
    CHECK(nt == 0);
    tn_module_train(tn_module_child(m, "8.layers"));               /* a subtree */
    nt = n = 0; flags_of(m, &nt, &n);
    CHECK(nt > 5 && nt < n && tn_module_child(m, "8.layers.1.dropout")->training && !tn_module_child(m, "8")->training);
    tn_module_train(m);
    nt = n = 0; flags_of(m, &nt, &n);
    CHECK(nt == n);
    tn_module_free(m);

    /* Dropout */
    tn_manual_seed(3);
    tn_module *d = tn_nn_dropout();
    tn_tensor *x = tn_add_scalar(tn_rand(SH(4000), TN_F32), 1);
    tn_tensor *y = tn_module_forward(d, x);
    int64_t nz = 0, cnt;
    double *v = vals(y, &cnt), *xv = vals(x, &cnt);
    bool scaled = true;
    for (int64_t i = 0; i < cnt; i++) { if (v[i] == 0) nz++; else if (fabs(v[i] - 2 * xv[i]) > 1e-6) scaled = false; }
    free(v); free(xv);
    CHECK(nz > 1800 && nz < 2200 && scaled);
    tn_module_eval(d);
    CHECK(bitsame(tn_module_forward(d, x), x));
    tn_module_free(d);

    /* BatchNorm2d */
    double xs[2 * 2 * 2 * 2] = {1, 2, 3, 4, -1, 0, 5, 2, 2, 2, 6, 0, 3, -3, 1, 1};
    tn_tensor *xb = arr(xs, SH(2, 2, 2, 2), TN_F32);
    tn_module *bn = tn_nn_batch_norm2d(2);
    tn_no_grad_begin();
    tn_copy_(tn_module_get(bn, "weight"), arr((double[]){2, 0.5}, SH(2), TN_F32));
    tn_copy_(tn_module_get(bn, "bias"), arr((double[]){1, -1}, SH(2), TN_F32));
    tn_no_grad_end();
    tn_tensor *yb = tn_module_forward(bn, xb);
    /* channel 0: {1,2,3,4,2,2,6,0}: mean 2.5, biased var 3, unbiased 24/7; channel 1: {-1,0,5,2,3,-3,1,1}: mean 1, var 5.25, unbiased 6 */
    CHECK_CLOSE(val_at(yb, 0), 2 * (1 - 2.5) / sqrt(3 + 1e-5) + 1, 1e-5);
    CHECK_CLOSE(val_at(yb, 4), 0.5 * (-1 - 1) / sqrt(5.25 + 1e-5) - 1, 1e-5);
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_mean"), 0), 0.25, 1e-6);
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_mean"), 1), 0.1, 1e-6);
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_var"), 0), 0.9 + 0.1 * 24.0 / 7, 1e-6);
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_var"), 1), 0.9 + 0.1 * 6, 1e-6);
    CHECK(val_at(tn_module_get(bn, "num_batches_tracked"), 0) == 1);
    tn_module_eval(bn);
    tn_tensor *ye = tn_module_forward(bn, xb);
    double rv0 = 0.9 + 0.1 * 24.0 / 7, rv1 = 0.9 + 0.1 * 6;
    CHECK_CLOSE(val_at(ye, 0), 2 * (1 - 0.25) / sqrt(rv0 + 1e-5) + 1, 1e-5);
    CHECK_CLOSE(val_at(ye, 7), 0.5 * (2 - 0.1) / sqrt(rv1 + 1e-5) - 1, 1e-5);
    CHECK(val_at(tn_module_get(bn, "num_batches_tracked"), 0) == 1);     /* eval leaves the statistics alone */
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_mean"), 0), 0.25, 1e-6);
    tn_module_free(bn);
    /* momentum=None: the cumulative average of the batch statistics */
    bn = tn_nn_batch_norm2d(2, .momentum = NAN);
    tn_module_forward(bn, xb);
    tn_module_forward(bn, tn_add_scalar(xb, 4));
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_mean"), 0), (2.5 + 6.5) / 2, 1e-5);
    CHECK_CLOSE(val_at(tn_module_get(bn, "running_var"), 1), 6, 1e-5);
    CHECK(val_at(tn_module_get(bn, "num_batches_tracked"), 0) == 2);
    tn_module_free(bn);
    /* track_running_stats=False: batch statistics in eval too */
    bn = tn_nn_batch_norm2d(2, .track_running_stats = false, .affine = false);
    tn_module_eval(bn);
    CHECK(tn_module_get(bn, "running_mean") == NULL && tn_module_get(bn, "weight") == NULL);
    CHECK_CLOSE(val_at(tn_module_forward(bn, xb), 0), (1 - 2.5) / sqrt(3 + 1e-5), 1e-5);
    tn_module_free(bn);
}

static void record_apply(tn_module *m, void *user) {
    char *s = (char *)user;
    strcat(s, tn_module_name(m));
    strcat(s, ",");
}
static void count_linear(tn_module *m, void *user) { if (!strcmp(tn_module_name(m), "Linear")) (*(int *)user)++; }
/* zero_grad sets .grad to NULL; apply visits children first (post-order, as nn.Module.apply). */
TEST(zero_grad_apply) {
    tn_module *m = tn_nn_sequential(tn_nn_linear(3, 4), tn_nn_sequential(tn_nn_relu(), tn_nn_linear(4, 2)), tn_nn_tanh());
    tn_tensor *loss = tn_sum(tn_module_forward(m, tn_randn(SH(5, 3), TN_F32)));
    CHECK(tn_backward(loss) == 0);
    tn_dict *p = tn_module_named_parameters(m);
    bool all = true;
    for (int i = 0; i < tn_dict_len(p); i++) all = all && tn_grad(tn_dict_value(p, i)) != NULL;
    CHECK(all && tn_dict_len(p) == 4);
    tn_module_zero_grad(m);
    bool none = true;
    for (int i = 0; i < tn_dict_len(p); i++) none = none && tn_grad(tn_dict_value(p, i)) == NULL;
    CHECK(none);
    tn_dict_free(p);
    char order[256] = "";
    tn_module_apply(m, record_apply, order);
    CHECK_MSG(!strcmp(order, "Linear,ReLU,Linear,Sequential,Tanh,Sequential,"), "apply order %s", order);
    int nlin = 0;
    tn_module_apply(m, count_linear, &nlin);
    CHECK(nlin == 2);
    tn_module_apply(NULL, record_apply, order);                          /* no-ops */
    tn_module_apply(m, NULL, NULL);
    tn_module_zero_grad(NULL);
    tn_module_free(m);
}

/* to_dtype converts in place: the same tensor objects, new dtype; optimizers built before
   keep stepping them; integer buffers stay. */
TEST(to_dtype) {
    tn_manual_seed(5);
    tn_module *m = tn_nn_sequential(tn_nn_linear(3, 4), tn_nn_batch_norm1d(4), tn_nn_tanh(), tn_nn_linear(4, 2));
    tn_tensor *x = tn_randn(SH(6, 3), TN_F32);
    tn_dict *p = tn_module_named_parameters(m);
    int np;
    tn_tensor **pp = params_of(m, &np);
    tn_optim *sgd = tn_optim_sgd(pp, np, .lr = 0.5);
    tn_backward(tn_sum(tn_module_forward(m, x)));                        /* grads exist before the move */
    tn_dict *before = tn_module_state_dict(m);
    tn_dict *b32 = tn_dict_new();                                        /* copies of the float32 values */
    for (int i = 0; i < tn_dict_len(before); i++) tn_dict_set(b32, tn_dict_key(before, i), tn_clone(tn_dict_value(before, i)));
    CHECK(tn_module_to_dtype(m, TN_F64) == 0);
    tn_dict *p2 = tn_module_named_parameters(m);
    bool same_objs = tn_dict_len(p) == tn_dict_len(p2), f64 = true, grads = true;
    for (int i = 0; i < tn_dict_len(p2) && same_objs; i++) {
        tn_tensor *t = tn_dict_value(p2, i);
        same_objs = same_objs && t == tn_dict_value(p, i) && t == pp[i];
        f64 = f64 && tn_get_dtype(t) == TN_F64 && tn_requires_grad(t) && tn_is_leaf(t);
        grads = grads && tn_grad(t) && tn_get_dtype(tn_grad(t)) == TN_F64;   /* grads follow */
    }
    CHECK(same_objs && f64 && grads);
    CHECK(tn_get_dtype(tn_module_get(m, "1.running_var")) == TN_F64 && tn_get_dtype(tn_module_get(m, "1.num_batches_tracked")) == TN_I64);
    tn_dict *after = tn_module_state_dict(m);
    bool exact = true;
    for (int i = 0; i < tn_dict_len(after); i++) exact = exact && relerr(tn_dict_value(after, i), tn_dict_value(b32, i)) == 0;
    CHECK(exact);                                                        /* float32 values are exact in float64 */
    /* a float64 forward; the optimizer built before the move updates the float64 tensors */
    tn_module_zero_grad(m);
    tn_tensor *y = tn_module_forward(m, tn_to_dtype(x, TN_F64));
    CHECK(y && tn_get_dtype(y) == TN_F64);
    CHECK(tn_backward(tn_sum(y)) == 0);
    tn_tensor *w = tn_module_get(m, "0.weight"), *w_old = tn_clone(w), *g = tn_clone(tn_grad(w));
    CHECK(tn_optim_step(sgd) == 0);
    CHECK(tn_module_get(m, "0.weight") == w && tn_get_dtype(w) == TN_F64);
    CHECK_SAME(w, tn_sub(w_old, tn_mul_scalar(g, 0.5)), 0);
    /* and back to float32 */
    CHECK(tn_module_to_dtype(m, TN_F32) == 0 && tn_get_dtype(w) == TN_F32 && tn_module_get(m, "0.weight") == w);
    CHECK_ERR(tn_module_to_dtype(m, TN_I64) == 0, "tn_module_to_dtype: nn.Module.to only accepts floating dtypes, got int64");
    CHECK(tn_get_dtype(w) == TN_F32);
    CHECK(tn_module_to(m, TN_CPU) == 0 && tn_get_device(w) == TN_CPU);
    if (!tn_cuda_is_available()) {   /* refused as a whole: nothing moved */
        CHECK_ERR(tn_module_to(m, TN_CUDA) == 0, "'cuda' is not available");
        CHECK(tn_get_device(w) == TN_CPU && tn_get_device(tn_module_get(m, "3.bias")) == TN_CPU && tn_module_forward(m, x) != NULL);
    }
    CHECK(tn_module_to_dtype(NULL, TN_F64) == -1 && tn_module_to(NULL, TN_CPU) == -1);
    tn_optim_free(sgd);
    free(pp);
    tn_dict_free(before); tn_dict_free(b32); tn_dict_free(p); tn_dict_free(p2); tn_dict_free(after);
    tn_module_free(m);
}

/* Adam with state made in float32, then the model moved to float64: the next step must
   refuse (as PyTorch does) or convert, never read the float32 state as float64. */
TEST(to_dtype_optimizer_state) {
    tn_module *m = tn_nn_linear(64, 64);
    int np;
    tn_tensor **pp = params_of(m, &np);
    tn_optim *adam = tn_optim_adam(pp, np, .lr = 0.01);
    tn_tensor *x = tn_randn(SH(2, 64), TN_F32);
    tn_backward(tn_sum(tn_module_forward(m, x)));
    CHECK(tn_optim_step(adam) == 0);                                     /* state made in float32 */
    CHECK(tn_module_to_dtype(m, TN_F64) == 0);
    tn_module_zero_grad(m);
    tn_backward(tn_sum(tn_module_forward(m, tn_to_dtype(x, TN_F64))));
    tn_clear_error();
    int rc = tn_optim_step(adam);
    CHECK_MSG(rc == 0 ? tn_get_dtype(tn_optim_state(adam, 0, "exp_avg")) == TN_F64 : tn_last_error()[0] != 0,
              "step after to_dtype: rc %d, error \"%s\"", rc, tn_last_error());
    tn_optim_free(adam);
    free(pp);
    tn_module_free(m);
}

/* repr: every layer kind, as print(module) in torch 1.13. */
TEST(repr_layers) {
    /* hand-written expectations (also without torch) */
    struct { int i; const char *want; } hand[] = {
        {0, "Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same, bias=False)"},
        {2, "Conv2d(2, 4, kernel_size=(3, 5), stride=(2, 2), padding=(1, 2), dilation=(2, 2), groups=2)"},
        {6, "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))"},
        {8, "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)"},
        {19, "BatchNorm2d(3, eps=1e-05, momentum=None, affine=True, track_running_stats=True)"},
        {22, "LayerNorm((4, 5), eps=1e-05, elementwise_affine=True)"},
        {24, "GroupNorm(2, 4, eps=0.001, affine=False)"},
        {26, "Dropout(p=0.25, inplace=False)"},
        {29, "Embedding(10, 3, padding_idx=9)"},
        {33, "Unflatten(dim=1, unflattened_size=(2, 3))"},
        {47, "GELU(approximate='tanh')"},
        {61, "Sequential()"},
        {72, "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n)"},
        {79, "Custom(\n  width=4\n  (fc): Linear(in_features=4, out_features=4, bias=True)\n)"},
    };
    for (size_t k = 0; k < sizeof hand / sizeof hand[0]; k++) {
        tn_module *m = repr_build(hand[k].i);
        char *s = tn_module_repr(m);
        CHECK_MSG(s && !strcmp(s, hand[k].want), "repr of %s:\n  ours: %s\n  want: %s", repr_case(hand[k].i, NULL), s ? s : tn_last_error(), hand[k].want);
        tn_string_free(s);
        tn_module_free(m);
    }
    CHECK(tn_module_repr(NULL) == NULL);
    if (!oracle) { printf("skipped: repr against torch (%s)\n", oracle_why); return; }
    int n = 0, bad = 0;
    for (int i = 0; repr_case(i, NULL); i++, n++) {
        char name[16];
        snprintf(name, sizeof name, "R%d", i);
        char *want = oracle_block(name);
        tn_module *m = repr_build(i);
        char *s = m ? tn_module_repr(m) : NULL;
        bool ok = s && want && !strcmp(s, want);
        CHECK_MSG(ok, "repr of %s differs from torch's", repr_case(i, NULL));
        if (!ok) { bad++; show_diff(s ? s : tn_last_error(), want); }
        tn_string_free(s);
        free(want);
        tn_module_free(m);
    }
    CHECK(n > 75);
    /* a representative model, whole */
    tn_module *m = representative_new();
    char *s = tn_module_repr(m), *want = oracle_block("REPR_rep");
    bool ok = s && want && !strcmp(s, want);
    CHECK_MSG(ok, "repr of the representative model differs from torch's");
    if (!ok) show_diff(s, want);
    tn_string_free(s);
    free(want);
    tn_module_free(m);
}

/* ==================================================================================== */
/* 2. load_state_dict                                                                     */
/* ==================================================================================== */
static tn_module *small_new(uint64_t seed) {
    tn_manual_seed(seed);
    tn_module *a = tn_nn_linear(4, 3), *b = tn_nn_batch_norm1d(3), *c = tn_nn_linear(3, 2);
    return tn_nn_sequential(a, b, c);
}
static tn_dict *clone_dict(const tn_dict *d) {
    tn_dict *c = tn_dict_new();
    for (int i = 0; i < tn_dict_len(d); i++) tn_dict_set(c, tn_dict_key(d, i), tn_clone(tn_dict_value(d, i)));
    return c;
}
TEST(load_state_dict) {
    tn_module *a = small_new(1), *b = small_new(2);
    tn_module_forward(a, tn_randn(SH(5, 4), TN_F32));                    /* running stats and num_batches_tracked change */
    tn_dict *sa = tn_module_state_dict(a);
    tn_dict *sb0 = tn_module_state_dict(b), *b0 = clone_dict(sb0);     /* b's own values, copied */
    tn_dict_free(sb0);
    CHECK(!dicts_bitsame(sa, b0));
    /* strict success: every value copied, the module's tensors stay the same objects */
    tn_tensor *bw = tn_module_get(b, "0.weight");
    CHECK(tn_module_load_state_dict(b, sa, NULL, NULL) == 0);
    tn_dict *sb = tn_module_state_dict(b);
    CHECK(dicts_bitsame(sa, sb) && tn_module_get(b, "0.weight") == bw && tn_requires_grad(bw) && tn_is_leaf(bw));
    CHECK(!tn_same_storage(bw, tn_module_get(a, "0.weight")));          /* copied, not aliased */
    CHECK(val_at(tn_module_get(b, "1.num_batches_tracked"), 0) == 1);
    tn_dict_free(sb);
    CHECK(tn_module_load_state_dict(b, b0, NULL, NULL) == 0);     /* back to b's own values */

    /* missing keys: strict error in PyTorch's words, nothing loaded */
    tn_dict *sd = clone_dict(sa);
    tn_dict_remove(sd, "0.bias");
    tn_dict_remove(sd, "1.running_var");
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL) == 0,
              "tn_module_load_state_dict: Error(s) in loading state_dict for Sequential: Missing key(s) in state_dict: \"0.bias\", \"1.running_var\".");
    sb = tn_module_state_dict(b);
    CHECK(dicts_bitsame(sb, b0));
    tn_dict_free(sb);
    /* unexpected keys */
    tn_dict_free(sd);
    sd = clone_dict(sa);
    tn_dict_set(sd, "extra", tn_zeros(SH(1), TN_F32));
    tn_dict_set(sd, "3.weight", tn_zeros(SH(1), TN_F32));
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL) == 0,
              "Error(s) in loading state_dict for Sequential: Unexpected key(s) in state_dict: \"extra\", \"3.weight\".");
    sb = tn_module_state_dict(b);
    CHECK(dicts_bitsame(sb, b0));
    tn_dict_free(sb);
    /* both, in PyTorch's order (missing first) */
    tn_dict_remove(sd, "2.bias");
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL) == 0,
              "Missing key(s) in state_dict: \"2.bias\". Unexpected key(s) in state_dict: \"extra\", \"3.weight\".");
    /* non-strict: the lists are filled, the rest is loaded */
    tn_dict *miss = tn_dict_new(), *unex = tn_dict_new();
    CHECK(tn_module_load_state_dict(b, sd, miss, unex, .strict = false) == 0);
    CHECK(keys_are(miss, "2.bias") && keys_are(unex, "extra,3.weight"));
    CHECK(tn_dict_value(miss, 0) == NULL);
    CHECK(bitsame(tn_module_get(b, "2.weight"), tn_module_get(a, "2.weight")) && bitsame(tn_module_get(b, "2.bias"), tn_dict_get(b0, "2.bias")));
    CHECK(tn_module_load_state_dict(b, sd, NULL, NULL, .strict = false) == 0);    /* lists are optional */
    CHECK(tn_module_load_state_dict(b, b0, NULL, NULL) == 0);
    tn_dict_free(miss); tn_dict_free(unex);
    /* a shape mismatch is always an error, strict or not, and nothing is loaded */
    tn_dict_free(sd);
    sd = clone_dict(sa);
    tn_dict_set(sd, "0.weight", tn_zeros(SH(2, 4), TN_F32));
    tn_dict_set(sd, "1.num_batches_tracked", tn_zeros(SH(1), TN_I64));
    const char *msg = "size mismatch for 0.weight: copying a param with shape [2, 4] from checkpoint, the shape in current model is [3, 4].";
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL) == 0, msg);
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL, .strict = false) == 0, msg);
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL, .strict = false) == 0,
              "size mismatch for 1.num_batches_tracked: copying a param with shape [1] from checkpoint, the shape in current model is [].");
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL, .strict = false) == 0, "Error(s) in loading state_dict for Sequential:");
    sb = tn_module_state_dict(b);
    CHECK(dicts_bitsame(sb, b0));
    tn_dict_free(sb);
    /* a mismatch together with a missing key: both reported */
    tn_dict_remove(sd, "2.bias");
    CHECK_ERR(tn_module_load_state_dict(b, sd, NULL, NULL) == 0, "Missing key(s) in state_dict: \"2.bias\". size mismatch for 0.weight");
    /* dtype conversion: float64 values into float32 parameters, int32 into the int64 buffer */
    tn_dict_free(sd);
    sd = tn_dict_new();
    for (int i = 0; i < tn_dict_len(sa); i++) {
        tn_tensor *v = tn_dict_value(sa, i);
        tn_dict_set(sd, tn_dict_key(sa, i), tn_to_dtype(v, tn_get_dtype(v) == TN_I64 ? TN_I32 : TN_F64));
    }
    CHECK(tn_module_load_state_dict(b, sd, NULL, NULL) == 0);
    sb = tn_module_state_dict(b);
    CHECK(dicts_bitsame(sb, sa) && tn_get_dtype(tn_module_get(b, "0.weight")) == TN_F32);
    tn_dict_free(sb);
    /* later changes to the loaded dict do not reach the module */
    tn_no_grad_begin();
    tn_fill_(tn_dict_get(sd, "0.weight"), 5);
    tn_no_grad_end();
    CHECK(bitsame(tn_module_get(b, "0.weight"), tn_module_get(a, "0.weight")));
    /* non-contiguous values and values with autograd history load as plain copies */
    tn_dict_free(sd);
    sd = clone_dict(sa);
    tn_dict_set(sd, "0.weight", tn_t(tn_contiguous(tn_t(tn_module_get(a, "0.weight")))));
    tn_dict_set(sd, "0.bias", tn_mul_scalar(tn_module_get(a, "0.bias"), 1));
    CHECK(!tn_is_contiguous(tn_dict_get(sd, "0.weight")) && tn_grad_fn_name(tn_dict_get(sd, "0.bias")) != NULL);
    CHECK(tn_module_load_state_dict(b, b0, NULL, NULL) == 0 && tn_module_load_state_dict(b, sd, NULL, NULL) == 0);
    CHECK(bitsame(tn_module_get(b, "0.weight"), tn_module_get(a, "0.weight")) && bitsame(tn_module_get(b, "0.bias"), tn_module_get(a, "0.bias")));
    CHECK(tn_is_leaf(tn_module_get(b, "0.bias")) && tn_grad_fn_name(tn_module_get(b, "0.bias")) == NULL && tn_requires_grad(tn_module_get(b, "0.bias")));
    /* many missing keys: the message is cut, never overflowed */
    tn_module *big = nested_new();
    tn_dict *empty = tn_dict_new();
    CHECK_ERR(tn_module_load_state_dict(big, empty, NULL, NULL) == 0, "Error(s) in loading state_dict for Sequential: Missing key(s) in state_dict: \"0.weight\", \"0.bias\",");
    tn_dict *miss2 = tn_dict_new();
    CHECK(tn_module_load_state_dict(big, empty, miss2, NULL, .strict = false) == 0);
    tn_dict *sbig = tn_module_state_dict(big);
    CHECK(tn_dict_len(miss2) == tn_dict_len(sbig) && tn_dict_len(miss2) > 100);
    tn_dict_free(sbig); tn_dict_free(miss2); tn_dict_free(empty);
    tn_module_free(big);
    /* bad arguments */
    CHECK_ERR(tn_module_load_state_dict(NULL, sd, NULL, NULL) == 0, "tn_module_load_state_dict: need a module and a state dict");
    CHECK_ERR(tn_module_load_state_dict(b, NULL, NULL, NULL) == 0, "tn_module_load_state_dict: need a module and a state dict");
    CHECK(tn_module_state_dict(NULL) == NULL && tn_module_named_parameters(NULL) == NULL);
    tn_dict_free(sd); tn_dict_free(sa); tn_dict_free(b0);
    tn_module_free(a);
    tn_module_free(b);
}

/* The torch state dicts written by Python (sd.* float32, sd64.* float64) give torch's
   outputs y / y64 for the same input. */
static tn_dict *strip(const tn_dict *d, const char *prefix) {
    tn_dict *r = tn_dict_new();
    size_t n = strlen(prefix);
    for (int i = 0; i < tn_dict_len(d); i++)
        if (!strncmp(tn_dict_key(d, i), prefix, n)) tn_dict_set(r, tn_dict_key(d, i) + n, tn_dict_value(d, i));
    return r;
}
TEST(torch_state_dicts) {
    NEED_TORCH("loading torch's state dicts");
    const char *names[4] = {"mlp", "cnn", "lstm", "tel"};
    for (int k = 0; k < 4; k++) {
        char file[64];
        snprintf(file, sizeof file, "t2c_%s.safetensors", names[k]);
        tn_dict *all = tn_safetensors_load(tmp_path(file));
        CHECK_MSG(all != NULL, "%s: %s", file, tn_last_error());
        if (!all) continue;
        tn_dict *sd = strip(all, "sd."), *sd64 = strip(all, "sd64.");
        tn_tensor *x = tn_dict_get(all, "x"), *y = tn_dict_get(all, "y"), *y64 = tn_dict_get(all, "y64");
        /* float32 */
        tn_module *m = zoo_new(names[k]);
        int rc = tn_module_load_state_dict(m, sd, NULL, NULL);
        CHECK_MSG(rc == 0, "%s: %s", names[k], tn_last_error());
        tn_module_eval(m);
        tn_tensor *out = tn_module_forward(m, x);
        double e = relerr(out, y);
        CHECK_MSG(e <= 2e-5, "%s float32: max error %g against torch (%s)", names[k], e, out ? "" : tn_last_error());
        /* float64: the module moved to float64, torch's float64 state dict */
        CHECK(tn_module_to_dtype(m, TN_F64) == 0);
        rc = tn_module_load_state_dict(m, sd64, NULL, NULL);
        CHECK_MSG(rc == 0, "%s: %s", names[k], tn_last_error());
        e = relerr(tn_module_forward(m, tn_to_dtype(x, TN_F64)), y64);
        CHECK_MSG(e <= 1e-12, "%s float64: max error %g against torch", names[k], e);
        /* float32 values loaded into the float64 module (converted on load): the same */
        CHECK(tn_module_load_state_dict(m, sd, NULL, NULL) == 0);
        e = relerr(tn_module_forward(m, tn_to_dtype(x, TN_F64)), y64);
        CHECK_MSG(e <= 1e-12, "%s float32 state dict into float64: max error %g against torch", names[k], e);
        tn_module_free(m);
        tn_dict_free(sd); tn_dict_free(sd64); tn_dict_free(all);
    }
}

/* Our state dicts load strictly into torch's modules and give our outputs there. */
static int save_with(const char *file, tn_dict *sd, tn_tensor *x, tn_tensor *y) {
    tn_dict *d = tn_dict_new();
    for (int i = 0; i < tn_dict_len(sd); i++) {
        char key[300];
        const char *k = tn_dict_key(sd, i);
        snprintf(key, sizeof key, "sd.%s", k ? k : "");
        tn_dict_set(d, key, tn_dict_value(sd, i));
    }
    if (x) tn_dict_set(d, "x", x);
    if (y) tn_dict_set(d, "y", y);
    int rc = tn_safetensors_save(tmp_path(file), d);
    tn_dict_free(d);
    return rc;
}
TEST(c_to_torch) {
    NEED_TORCH("our state dicts in torch");
    const char *names[5] = {"mlp", "cnn", "lstm", "tel", "nested"};
    int64_t xs[4][4] = {{4, 10}, {2, 1, 12, 12}, {3, 2, 4}, {5, 3, 8}};
    int xn[4] = {2, 4, 3, 3};
    tn_manual_seed(11);
    for (int k = 0; k < 5; k++) {
        tn_module *m = zoo_new(names[k]);
        tn_tensor *x = NULL, *y = NULL;
        if (k < 4) {
            CHECK(tn_module_to_dtype(m, TN_F64) == 0);
            x = tn_randn(xs[k], xn[k], TN_F64);
            if (k == 1) { tn_no_grad_begin(); tn_module_forward(m, tn_add_scalar(tn_mul_scalar(x, 2), 1)); tn_no_grad_end(); }  /* running stats */
            tn_module_eval(m);
            y = tn_module_forward(m, x);
        }
        char file[64];
        snprintf(file, sizeof file, "c2t_%s.safetensors", names[k]);
        tn_dict *sd = tn_module_state_dict(m);
        CHECK(save_with(file, sd, x, y) == 0);
        tn_dict_free(sd);
        tn_module_free(m);
    }
    char why[300];
    char *out = run_torch("check", why, sizeof why);
    CHECK_MSG(out != NULL, "torch check run: %s", why);
    for (int k = 0; out && k < 5; k++) {
        char tag[32];
        snprintf(tag, sizeof tag, "C2T %s ", names[k]);
        const char *at = strstr(out, tag);
        char line[1024] = "no line";
        if (at) snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\n"), at);
        double e = at ? strtod(at + strlen(tag), NULL) : INFINITY;
        CHECK_MSG(at && !has(line, "ERROR") && e <= 1e-12, "%s in torch: %s", names[k], line);
    }
    free(out);
}

/* ==================================================================================== */
/* 3. layers                                                                              */
/* ==================================================================================== */
/* ym: the layer's output; yr: the functional op's on the layer's own parameters. Equal
   values, and equal gradients of sum(y * cot) for every parameter (and x when it requires
   grad); every parameter receives a gradient. */
static void same_as_functional(const char *what, tn_module *m, tn_tensor *x, tn_tensor *ym, tn_tensor *yr, double tol) {
    CHECK_MSG(ym && yr, "%s: no output (%s)", what, tn_last_error());
    if (!ym || !yr) return;
    double e = relerr(ym, yr);
    CHECK_MSG(e <= tol && tn_get_dtype(ym) == tn_get_dtype(yr), "%s: forward differs from the functional op by %g", what, e);
    tn_dict *p = tn_module_named_parameters(m);
    if (!tn_requires_grad(ym)) {
        CHECK_MSG(tn_dict_len(p) == 0 && !(x && tn_requires_grad(x)), "%s: the output does not require grad", what);
        tn_dict_free(p);
        return;
    }
    tn_tensor *cot = cotangent(ym);
    tn_dict *g = tn_dict_new();
    tn_tensor *gx = NULL;
    tn_module_zero_grad(m);
    if (x) tn_set_grad(x, NULL);
    CHECK_MSG(tn_backward(tn_sum(tn_mul(ym, cot))) == 0, "%s: backward: %s", what, tn_last_error());
    for (int i = 0; i < tn_dict_len(p); i++) {
        tn_tensor *gi = tn_grad(tn_dict_value(p, i));
        CHECK_MSG(gi != NULL, "%s: no gradient reached %s", what, tn_dict_key(p, i) ? tn_dict_key(p, i) : "?");
        tn_dict_set(g, tn_dict_key(p, i), gi);
    }
    if (x && tn_requires_grad(x)) gx = tn_grad(x) ? tn_clone(tn_grad(x)) : NULL;
    tn_module_zero_grad(m);
    if (x) tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_sum(tn_mul(yr, cot))) == 0);
    for (int i = 0; i < tn_dict_len(p); i++) {
        double ge = relerr(tn_dict_value(g, i), tn_grad(tn_dict_value(p, i)));
        CHECK_MSG(ge <= tol * 10, "%s: gradient of %s differs from the functional op's by %g", what, tn_dict_key(p, i), ge);
    }
    if (x && tn_requires_grad(x)) CHECK_MSG(relerr(gx, tn_grad(x)) <= tol * 10, "%s: input gradient differs", what);
    tn_module_zero_grad(m);
    if (x) tn_set_grad(x, NULL);
    tn_dict_free(g);
    tn_dict_free(p);
}
#define P(name) tn_module_get(M, name)
#define LAYER(what, mexpr, x, REF) do { tn_module *M = (mexpr); \
    CHECK_MSG(M != NULL, "%s: %s", what, tn_last_error()); \
    if (M) { tn_tensor *ym_ = tn_module_forward(M, x); tn_tensor *yr_ = (REF); same_as_functional(what, M, x, ym_, yr_, 1e-6); tn_module_free(M); } \
} while (0)
static tn_tensor *input(const int64_t *shape, int nd) {
    tn_tensor *x = tn_randn(shape, nd, TN_F32);
    tn_requires_grad_(x, true);
    return x;
}
static const int64_t I2[2][2] = {{2, 1}, {1, 0}};

static const struct { const char *name, *opts; } acts[] = {
    {"ReLU", NULL}, {"ReLU6", NULL}, {"LeakyReLU", "negative_slope=0.2"}, {"LeakyReLU", NULL}, {"ELU", "alpha=0.5"}, {"ELU", NULL},
    {"SELU", NULL}, {"CELU", "alpha=2.0"}, {"GELU", NULL}, {"GELU", "approximate='tanh'"}, {"SiLU", NULL}, {"Mish", NULL},
    {"Softplus", "beta=2, threshold=5"}, {"Softplus", NULL}, {"Hardtanh", "min_val=-2.0, max_val=0.5"}, {"Hardtanh", NULL},
    {"Hardswish", NULL}, {"Hardsigmoid", NULL}, {"Tanh", NULL}, {"Sigmoid", NULL}, {"Softmax", "dim=0"}, {"LogSoftmax", "dim=-1"},
    {"ReLU", "inplace=False"}, {"Softmax", "dim=1"}};
static tn_tensor *act_ref(int k, tn_tensor *x) {
    switch (k) {
    case 0: case 22: return tn_relu(x);
    case 1: return tn_relu6(x);
    case 2: return tn_leaky_relu(x, .negative_slope = 0.2);
    case 3: return tn_leaky_relu(x);
    case 4: return tn_elu(x, .alpha = 0.5);
    case 5: return tn_elu(x);
    case 6: return tn_selu(x);
    case 7: return tn_celu(x, .alpha = 2);
    case 8: return tn_gelu(x);
    case 9: return tn_gelu(x, .approximate = TN_APPROXIMATE_TANH);
    case 10: return tn_silu(x);
    case 11: return tn_mish(x);
    case 12: return tn_softplus(x, .beta = 2, .threshold = 5);
    case 13: return tn_softplus(x);
    case 14: return tn_hardtanh(x, .min_val = -2, .max_val = 0.5);
    case 15: return tn_hardtanh(x);
    case 16: return tn_hardswish(x);
    case 17: return tn_hardsigmoid(x);
    case 18: return tn_tanh(x);
    case 19: return tn_sigmoid(x);
    case 20: return tn_softmax(x, 0);
    case 21: return tn_log_softmax(x, -1);
    default: return tn_softmax(x, 1);
    }
}

TEST(layers_forward) {
    tn_manual_seed(21);
    tn_tensor *x;
    x = input(SH(4, 5));
    LAYER("Linear", tn_nn_linear(5, 3), x, tn_linear(x, P("weight"), P("bias")));
    LAYER("Linear(bias=False)", tn_nn_linear(5, 3, .bias = false), x, tn_linear(x, P("weight"), NULL));
    x = input(SH(2, 4, 5));
    LAYER("Linear on 3-d input", tn_nn_linear(5, 3), x, tn_linear(x, P("weight"), P("bias")));
    {   /* Bilinear: two inputs */
        tn_module *M = tn_nn_bilinear(3, 4, 2);
        tn_tensor *x1 = input(SH(5, 3)), *x2 = input(SH(5, 4));
        CHECK(M && tn_numel(P("weight")) == 24 && tn_numel(P("bias")) == 2);
        same_as_functional("Bilinear", M, x1, tn_nn_bilinear_forward(M, x1, x2), tn_bilinear(x1, x2, P("weight"), P("bias")), 1e-6);
        CHECK_ERR(tn_module_forward(M, x1), "tn_module_forward: Bilinear has no single-input forward");
        tn_module_free(M);
        M = tn_nn_linear(3, 3);
        CHECK_ERR(tn_nn_bilinear_forward(M, x1, x2), "tn_nn_bilinear_forward: need a Bilinear module");
        tn_module_free(M);
    }
    x = input(SH(2, 4, 11));
    LAYER("Conv1d", tn_nn_conv1d(4, 6, 3, .stride = 2, .padding = 1, .dilation = 2, .groups = 2), x, tn_conv1d(x, P("weight"), P("bias"), .stride = 2, .padding = 1, .dilation = 2, .groups = 2));
    LAYER("Conv1d(padding='same')", tn_nn_conv1d(4, 3, 4, .padding = TN_PADDING_SAME, .bias = false), x, tn_conv1d(x, P("weight"), NULL, .padding = TN_PADDING_SAME));
    LAYER("Conv1d defaults", tn_nn_conv1d(4, 3, 2), x, tn_conv1d(x, P("weight"), P("bias")));
    x = input(SH(2, 4, 9, 8));
    LAYER("Conv2d", tn_nn_conv2d(4, 6, 3, .kernel_size_hw = {3, 2}, .stride_hw = {2, 1}, .padding_hw = {1, 0}, .dilation_hw = {1, 2}, .groups = 2), x,
          tn_conv2d(x, P("weight"), P("bias"), .stride_hw = {I2[0][0], I2[0][1]}, .padding_hw = {1, 0}, .dilation_hw = {1, 2}, .groups = 2));
    LAYER("Conv2d(padding='same')", tn_nn_conv2d(4, 2, 3, .padding = TN_PADDING_SAME, .dilation = 2), x, tn_conv2d(x, P("weight"), P("bias"), .padding = TN_PADDING_SAME, .dilation = 2));
    LAYER("Conv2d(padding='valid')", tn_nn_conv2d(4, 2, 3, .padding = TN_PADDING_VALID), x, tn_conv2d(x, P("weight"), P("bias")));
    LAYER("Conv2d defaults", tn_nn_conv2d(4, 5, 2), x, tn_conv2d(x, P("weight"), P("bias")));
    x = input(SH(4, 9, 8));
    LAYER("Conv2d unbatched", tn_nn_conv2d(4, 5, 2, .stride = 2), x, tn_conv2d(x, P("weight"), P("bias"), .stride = 2));
    x = input(SH(2, 4, 5, 5));
    LAYER("ConvTranspose2d", tn_nn_conv_transpose2d(4, 6, 3, .stride = 2, .padding = 1, .output_padding = 1, .groups = 2), x,
          tn_conv_transpose2d(x, P("weight"), P("bias"), .stride = 2, .padding = 1, .output_padding = 1, .groups = 2));
    LAYER("ConvTranspose2d(dilation)", tn_nn_conv_transpose2d(4, 3, 2, .kernel_size_hw = {2, 3}, .dilation = 2, .bias = false), x,
          tn_conv_transpose2d(x, P("weight"), NULL, .dilation = 2));
    x = input(SH(2, 3, 9, 10));
    LAYER("MaxPool2d", tn_nn_max_pool2d(3, .stride = 2, .padding = 1, .dilation = 2, .ceil_mode = true), x, tn_max_pool2d(x, 3, .stride = 2, .padding = 1, .dilation = 2, .ceil_mode = true));
    LAYER("MaxPool2d(kernel_size=(2, 3))", tn_nn_max_pool2d(2, .kernel_size_hw = {2, 3}, .stride_hw = {1, 2}), x,
          tn_max_pool2d(x, 2, .kernel_size_hw = {2, 3}, .stride_hw = {1, 2}));
    LAYER("MaxPool2d defaults", tn_nn_max_pool2d(2), x, tn_max_pool2d(x, 2));
    LAYER("AvgPool2d", tn_nn_avg_pool2d(3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false, .divisor_override = 2), x,
          tn_avg_pool2d(x, 3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false, .divisor_override = 2));
    LAYER("AvgPool2d defaults", tn_nn_avg_pool2d(2), x, tn_avg_pool2d(x, 2));
    LAYER("AdaptiveAvgPool2d", tn_nn_adaptive_avg_pool2d(2, 3), x, tn_adaptive_avg_pool2d(x, 2, 3));
    LAYER("AdaptiveMaxPool2d", tn_nn_adaptive_max_pool2d(3, 2), x, tn_adaptive_max_pool2d(x, 3, 2, NULL));
    x = input(SH(2, 3, 10));
    LAYER("MaxPool1d", tn_nn_max_pool1d(3, .stride = 2, .padding = 1), x, tn_max_pool1d(x, 3, .stride = 2, .padding = 1));
    LAYER("MaxPool1d(dilation)", tn_nn_max_pool1d(3, .dilation = 2, .ceil_mode = true), x, tn_max_pool1d(x, 3, .dilation = 2, .ceil_mode = true));
    LAYER("AvgPool1d", tn_nn_avg_pool1d(2), x, tn_avg_pool1d(x, 2));
    LAYER("AvgPool1d(count_include_pad=False)", tn_nn_avg_pool1d(3, .padding = 1, .count_include_pad = false), x, tn_avg_pool1d(x, 3, .padding = 1, .count_include_pad = false));
    /* normalisation */
    x = input(SH(2, 6, 3, 3));
    LAYER("GroupNorm", tn_nn_group_norm(2, 6, .eps = 1e-4), x, tn_group_norm(x, 2, .weight = P("weight"), .bias = P("bias"), .eps = 1e-4));
    LAYER("GroupNorm(affine=False)", tn_nn_group_norm(3, 6, .affine = false), x, tn_group_norm(x, 3));
    x = input(SH(2, 3, 4, 5));
    LAYER("LayerNorm", tn_nn_layer_norm(SH(4, 5), .eps = 1e-6), x, tn_layer_norm(x, SH(4, 5), .weight = P("weight"), .bias = P("bias"), .eps = 1e-6));
    LAYER("LayerNorm(elementwise_affine=False)", tn_nn_layer_norm(SH(5), .elementwise_affine = false), x, tn_layer_norm(x, SH(5)));
    LAYER("LayerNorm(bias=False)", tn_nn_layer_norm(SH(5), .bias = false), x, tn_layer_norm(x, SH(5), .weight = P("weight")));
    {
        tn_module *ln = tn_nn_layer_norm(SH(5), .bias = false);
        CHECK(ln && tn_module_get(ln, "weight") && !tn_module_get(ln, "bias"));
        tn_module_free(ln);
    }
    const char *bn_opts[3] = {NULL, "eps=1e-3, momentum=0.3", "momentum=None"};
    const int64_t bn_shapes[3][4] = {{6, 3, 4, 5}, {6, 3, 5, 0}, {6, 3, 0, 0}};
    for (int k = 0; k < 3; k++)
        for (int s = 0; s < 3; s++) {   /* BatchNorm2d on 4-d, BatchNorm1d on 3-d and 2-d input */
            double eps = k == 1 ? 1e-3 : 1e-5, mom = k == 1 ? 0.3 : 0.1;
            int nd = s == 0 ? 4 : s == 1 ? 3 : 2;
            tn_module *M = s == 0 ? tn_nn_batch_norm2d_str(3, bn_opts[k]) : tn_nn_batch_norm1d_str(3, bn_opts[k]);
            tn_no_grad_begin();
            tn_copy_(P("weight"), tn_rand(SH(3), TN_F32));
            tn_copy_(P("bias"), tn_randn(SH(3), TN_F32));
            tn_no_grad_end();
            x = tn_add_scalar(input(bn_shapes[s], nd), 1);
            for (int step = 0; step < 2; step++) {
                tn_tensor *rm = tn_clone(P("running_mean")), *rv = tn_clone(P("running_var"));
                tn_tensor *ym = tn_module_forward(M, x);
                if (k == 2) mom = 1.0 / (step + 1);             /* cumulative average */
                tn_tensor *yr = tn_batch_norm(x, rm, rv, .weight = P("weight"), .bias = P("bias"), .training = true, .momentum = mom, .eps = eps);
                char what[96];
                snprintf(what, sizeof what, "BatchNorm%dd(%s) on %d-d input, training step %d", s ? 1 : 2, bn_opts[k] ? bn_opts[k] : "", nd, step);
                same_as_functional(what, M, NULL, ym, yr, 1e-6);
                CHECK_MSG(relerr(P("running_mean"), rm) <= 1e-6 && relerr(P("running_var"), rv) <= 1e-6, "%s: running statistics", what);
            }
            CHECK(val_at(P("num_batches_tracked"), 0) == 2);
            tn_module_eval(M);
            char what[96];
            snprintf(what, sizeof what, "BatchNorm%dd(%s) eval", s ? 1 : 2, bn_opts[k] ? bn_opts[k] : "");
            same_as_functional(what, M, NULL, tn_module_forward(M, x), tn_batch_norm(x, P("running_mean"), P("running_var"), .weight = P("weight"), .bias = P("bias"), .eps = eps), 1e-6);
            tn_module_free(M);
        }
    /* dropout: the same mask as the functional op from the same seed */
    x = input(SH(4, 6, 3, 3));
    tn_manual_seed(7);
    LAYER("Dropout", tn_nn_dropout(.p = 0.4), x, (tn_manual_seed(7), tn_dropout(x, .p = 0.4)));
    tn_manual_seed(8);
    LAYER("Dropout2d", tn_nn_dropout2d(), x, (tn_manual_seed(8), tn_dropout2d(x)));
    LAYER("Dropout(0)", tn_nn_dropout(.p = 0), x, tn_dropout(x, .p = 0));
    LAYER("Dropout(1)", tn_nn_dropout(.p = 1), x, tn_dropout(x, .p = 1));
    /* embeddings */
    int64_t iv[12] = {1, 2, 3, 9, 2, 0, 2, 5, 5, 7, 8, 2};
    tn_tensor *idx = tn_from_data(iv, SH(3, 4), TN_I64);
    LAYER("Embedding", tn_nn_embedding(10, 4), idx, tn_embedding(idx, P("weight")));
    {
        tn_module *M = tn_nn_embedding(10, 4, .padding_idx = 2);
        same_as_functional("Embedding(padding_idx=2)", M, idx, tn_module_forward(M, idx), tn_embedding_padded(idx, P("weight"), 2), 1e-6);
        tn_backward(tn_sum(tn_module_forward(M, idx)));
        tn_tensor *g = tn_grad(P("weight"));
        CHECK(g && val_at(tn_sum(tn_abs(tn_select(g, 0, 2))), 0) == 0 && val_at(tn_select(tn_select(g, 0, 5), 0, 1), 0) == 2);
        tn_module_free(M);
        M = tn_nn_embedding(10, 4, .padding_idx = -3);   /* counts from the end: row 7 */
        tn_backward(tn_sum(tn_module_forward(M, idx)));
        g = tn_grad(P("weight"));
        CHECK(g && val_at(tn_sum(tn_abs(tn_select(g, 0, 7))), 0) == 0 && val_at(tn_select(tn_select(g, 0, 8), 0, 0), 0) == 1);
        tn_module_free(M);
    }
    /* shapes */
    x = input(SH(2, 6, 2));
    LAYER("Flatten", tn_nn_flatten(), x, tn_flatten(x, .start_dim = 1));
    LAYER("Flatten(0, 1)", tn_nn_flatten(.start_dim = 0, .end_dim = 1), x, tn_flatten(x, .end_dim = 1));
    LAYER("Unflatten", tn_nn_unflatten(1, SH(2, 3)), x, tn_unflatten(x, 1, SH(2, 3)));
    LAYER("Unflatten(-1)", tn_nn_unflatten(-1, SH(2, 1)), x, tn_unflatten(x, -1, SH(2, 1)));
    LAYER("Identity", tn_nn_identity(), x, x);
    /* activations */
    x = input(SH(3, 7));
    for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s(%s)", acts[k].name, acts[k].opts ? acts[k].opts : "");
        LAYER(what, tn_nn_activation_str(acts[k].name, acts[k].opts), x, act_ref((int)k, x));
    }
    /* containers */
    LAYER("Sequential", tn_nn_sequential(tn_nn_linear(7, 5), tn_nn_relu(), tn_nn_sequential(tn_nn_linear(5, 2, .bias = false), tn_nn_tanh())), x,
          tn_tanh(tn_linear(tn_relu(tn_linear(x, P("0.weight"), P("0.bias"))), P("2.0.weight"), NULL)));
    LAYER("empty Sequential", tn_nn_sequential_n(NULL, 0), x, x);
    {
        tn_module *M = tn_nn_sequential(tn_nn_linear(7, 5));
        CHECK(tn_nn_sequential_append(M, tn_nn_gelu()) && tn_nn_sequential_append(M, tn_nn_linear(5, 1)) && tn_module_num_children(M) == 3);
        same_as_functional("Sequential after append", M, x, tn_module_forward(M, x),
                           tn_linear(tn_gelu(tn_linear(x, P("0.weight"), P("0.bias"))), P("2.weight"), P("2.bias")), 1e-6);
        CHECK(tn_nn_sequential_append(M, NULL) == NULL && tn_nn_sequential_append(NULL, tn_nn_relu()) == NULL);  /* the module is freed */
        tn_module_free(M);
        M = tn_nn_module_list();
        tn_nn_sequential_append(M, tn_nn_relu());
        CHECK(tn_module_child(M, "0") != NULL);
        CHECK_ERR(tn_module_forward(M, x), "tn_module_forward: ModuleList has no single-input forward");
        tn_module_free(M);
        M = tn_nn_module_dict();
        CHECK_ERR(tn_module_forward(M, x), "tn_module_forward: ModuleDict has no single-input forward");
        tn_module_free(M);
    }
    /* the recurrent and attention modules' single-input forwards equal their full forwards */
    x = input(SH(3, 2, 4));
    LAYER("LSTM", tn_nn_lstm(4, 5, .num_layers = 2), x, tn_nn_lstm_forward(M, x, NULL, NULL, NULL, NULL));
    LAYER("GRU", tn_nn_gru(4, 5, .bidirectional = true), x, tn_nn_rnn_forward(M, x, NULL, NULL));
    x = input(SH(3, 2, 8));
    {
        tn_module *M = tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .dropout = 0.0);
        same_as_functional("TransformerEncoderLayer", M, x, tn_module_forward(M, x), tn_nn_transformer_encoder_layer_forward(M, x), 1e-6);
        tn_module_free(M);
    }
}

/* Bad constructor arguments and options: NULL and a message naming the constructor. */
TEST(layer_errors) {
    /* the option text itself */
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "pading=1"), "tn_nn_conv2d: unknown option 'pading' (valid: stride, padding, dilation, groups, bias, padding_mode, output_padding, kernel_size)");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride"), "tn_nn_conv2d: option text \"stride\": expected name=value");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=1, stride=2"), "tn_nn_conv2d: option 'stride' given twice");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=abc"), "tn_nn_conv2d: option stride=abc");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "stride=1.5"), "tn_nn_conv2d: option stride=1.5: expected an integer");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "kernel_size=(3, 3, 3)"), "tn_nn_conv2d: option kernel_size=(3, 3, 3): expected at most 2 values");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "bias=maybe"), "tn_nn_conv2d: option bias=maybe: expected True or False");
    CHECK_ERR(tn_nn_conv2d_str(1, 2, 3, "padding='full'"), "tn_nn_conv2d: option padding='full': expected an int, a tuple, 'same' or 'valid'");
    CHECK_ERR(tn_nn_conv_transpose2d(1, 2, 3, .padding = TN_PADDING_SAME), "tn_nn_conv_transpose2d:");
    CHECK_ERR(tn_nn_conv1d(1, 2, 3, .output_padding = 1), "tn_nn_conv1d: output_padding is an option of the transposed convolution only");
    /* spacing, tuples and True/False are read as Python would */
    tn_module *m = tn_nn_conv2d(2, 4, 3, .stride_hw = {2, 1}, .padding = 1, .bias = false, .groups = 2);
    char *s = tn_module_repr(m);
    CHECK_MSG(s && !strcmp(s, "Conv2d(2, 4, kernel_size=(3, 3), stride=(2, 1), padding=(1, 1), groups=2, bias=False)"), "%s", s ? s : tn_last_error());
    tn_string_free(s);
    tn_module_free(m);
    /* conv arguments */
    CHECK_ERR(tn_nn_conv2d(3, 4, 3, .groups = 2), "tn_nn_conv2d: in_channels (3) and out_channels (4) must be positive and divisible by groups (2)");
    CHECK_ERR(tn_nn_conv2d(4, 6, 3, .groups = 4), "divisible by groups (4)");
    CHECK_ERR(tn_nn_conv2d(4, 4, 3, .groups = 0), "tn_nn_conv2d:");
    CHECK_ERR(tn_nn_conv2d(0, 4, 3), "tn_nn_conv2d: in_channels (0)");
    CHECK_ERR(tn_nn_conv2d(1, 4, 3, .padding = TN_PADDING_SAME, .stride = 2), "tn_nn_conv2d: padding='same' is not supported for strided convolutions");
    CHECK_ERR(tn_nn_conv1d(1, 4, 3, .padding = TN_PADDING_SAME, .stride = 2), "tn_nn_conv1d: padding='same' is not supported for strided convolutions");
    /* the other padding modes are Conv's only (test_nn_more.c checks their values) */
    CHECK_ERR(tn_nn_conv_transpose2d(1, 4, 3, .padding_mode = TN_PADDING_REFLECT), "tn_nn_conv_transpose2d: Only \"zeros\" padding mode is supported for ConvTranspose2d");
    CHECK_ERR(tn_nn_conv2d_str(1, 4, 3, "padding_mode='mirror'"), "tn_nn_conv2d: option padding_mode='mirror': expected one of zeros|reflect|replicate|circular");
    m = tn_nn_conv2d(1, 4, 3, .padding_mode = TN_PADDING_ZEROS);
    CHECK(m != NULL);
    tn_module_free(m);
    CHECK_ERR(tn_nn_conv2d(1, 4, 0), "tn_nn_conv2d: kernel_size, stride and dilation must be positive and padding non-negative");
    CHECK_ERR(tn_nn_conv2d(1, 4, -1), "tn_nn_conv2d: kernel_size");
    CHECK_ERR(tn_nn_conv1d(1, 4, 3, .stride = 0), "tn_nn_conv1d: kernel_size, stride and dilation must be positive");
    CHECK_ERR(tn_nn_conv2d(1, 4, 3, .kernel_size_hw = {3, 0}), "tn_nn_conv2d: kernel_size");
    CHECK_ERR(tn_nn_conv2d_str(1, 4, 3, "padding=-1"), "tn_nn_conv2d: option padding=-1: padding must be non-negative");
    CHECK_ERR(tn_nn_conv2d(1, 4, 3, .padding = -1), "tn_nn_conv2d: kernel_size, stride and dilation must be positive and padding non-negative");
    CHECK_ERR(tn_nn_conv1d(1, 4, 3, .stride_hw = {2, 1}), "tn_nn_conv1d: a 1-d convolution takes ints, not (h, w) pairs");
    CHECK_ERR(tn_nn_conv_transpose2d(1, 4, 0), "tn_nn_conv_transpose2d: kernel_size");
    CHECK_ERR(tn_nn_conv_transpose2d(3, 4, 3, .groups = 2), "tn_nn_conv_transpose2d: in_channels (3) and out_channels (4)");
    /* pooling */
    CHECK_ERR(tn_nn_max_pool2d(0), "tn_nn_max_pool2d: kernel_size, stride and dilation must be greater than zero");
    CHECK_ERR(tn_nn_avg_pool1d(-2), "tn_nn_avg_pool1d: kernel_size");
    CHECK_ERR(tn_nn_max_pool2d(2, .padding = 2), "tn_nn_max_pool2d: pad should be at most half of effective kernel size");
    CHECK_ERR(tn_nn_max_pool2d(2, .return_indices = true), "tn_nn_max_pool2d: return_indices");
    CHECK_ERR(tn_nn_avg_pool2d_str(2, "dilation=2"), "tn_nn_avg_pool2d: unknown option 'dilation' (valid: kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)");
    CHECK_ERR(tn_nn_max_pool1d_str(2, "count_include_pad=True"), "tn_nn_max_pool1d: unknown option 'count_include_pad'");
    CHECK_ERR(tn_nn_adaptive_avg_pool2d(0, 2), "tn_nn_adaptive_avg_pool2d: output size (0, 2) must be positive");
    CHECK_ERR(tn_nn_adaptive_max_pool2d(2, -1), "tn_nn_adaptive_max_pool2d:");
    /* norms */
    CHECK_ERR(tn_nn_batch_norm2d(0), "tn_nn_batch_norm2d: num_features must be positive, got 0");
    CHECK_ERR(tn_nn_batch_norm1d_str(3, "momentum=fast"), "tn_nn_batch_norm1d: option momentum=fast");
    CHECK_ERR(tn_nn_batch_norm1d_str(3, "elementwise_affine=True"), "tn_nn_batch_norm1d: unknown option 'elementwise_affine' (valid: eps, momentum, affine, track_running_stats)");
    CHECK_ERR(tn_nn_group_norm(3, 4), "tn_nn_group_norm: num_channels (4) must be divisible by num_groups (3)");
    CHECK_ERR(tn_nn_group_norm(0, 4), "tn_nn_group_norm:");
    char lim[64];
    snprintf(lim, sizeof lim, "normalized_shape must have 1 to %d dims", TN_MAX_DIMS);
    CHECK_ERR(tn_nn_layer_norm(NULL, 0), lim);
    CHECK_ERR(tn_nn_layer_norm_str(SH(4), "affine=True"), "tn_nn_layer_norm: unknown option 'affine' (valid: eps, elementwise_affine, bias)");
    /* dropout */
    CHECK_ERR(tn_nn_dropout(.p = 1.5), "tn_nn_dropout: dropout probability has to be between 0 and 1, but got 1.5");
    CHECK_ERR(tn_nn_dropout(.p = -0.1), "tn_nn_dropout: dropout probability has to be between 0 and 1, but got -0.1");
    CHECK_ERR(tn_nn_dropout(.p = NAN), "tn_nn_dropout: dropout probability");
    CHECK_ERR(tn_nn_dropout2d(.p = 2), "tn_nn_dropout2d: dropout probability has to be between 0 and 1");
    CHECK_ERR(tn_nn_transformer_encoder_layer(8, 2, .dropout = 1.5), "tn_nn_transformer_encoder_layer: dropout probability");
    CHECK_ERR(tn_nn_multihead_attention(8, 2, .dropout = -1), "tn_nn_multihead_attention: dropout probability");
    CHECK_ERR(tn_nn_lstm(3, 4, .dropout = 2), "tn_nn_lstm: dropout should be a number in range [0, 1]");
    /* embedding, linear, flatten */
    CHECK_ERR(tn_nn_embedding(10, 3, .padding_idx = 10), "tn_nn_embedding: padding_idx must be within num_embeddings (10), got 10");
    CHECK_ERR(tn_nn_embedding(10, 3, .padding_idx = -11), "tn_nn_embedding: padding_idx must be within num_embeddings");
    CHECK_ERR(tn_nn_embedding(0, 3), "tn_nn_embedding: num_embeddings (0) and embedding_dim (3) must be positive");
    CHECK_ERR(tn_nn_embedding_str(10, 3, "max_norm=1"), "tn_nn_embedding: unknown option 'max_norm' (valid: padding_idx)");
    CHECK_ERR(tn_nn_linear(-1, 3), "tn_nn_linear: in_features (-1) and out_features (3) must be non-negative");
    CHECK_ERR(tn_nn_bilinear(2, -3, 4), "tn_nn_bilinear: sizes must be non-negative");
    snprintf(lim, sizeof lim, "tn_nn_unflatten: need 1 to %d sizes", TN_MAX_DIMS);
    CHECK_ERR(tn_nn_unflatten(1, NULL, 0), lim);
    /* activations */
    CHECK_ERR(tn_nn_activation("Swish"), "tn_nn_activation: unknown activation \"Swish\"");
    CHECK_ERR(tn_nn_activation(NULL), "tn_nn_activation: unknown activation \"(null)\"");
    CHECK_ERR(tn_nn_activation_str("ReLU", "negative_slope=0.1"), "tn_nn_activation: unknown option 'negative_slope' (valid: inplace)");
    CHECK_ERR(tn_nn_activation_str("LeakyReLU", "slope=0.1"), "tn_nn_activation: unknown option 'slope' (valid: negative_slope, inplace)");
    CHECK_ERR(tn_nn_activation_str("GELU", "approximate='fast'"), "tn_nn_activation: option approximate='fast': expected one of none|tanh");
    CHECK_ERR(tn_nn_activation_str("ELU", "alpha=x"), "tn_nn_activation: option alpha=x");
    CHECK_ERR(tn_nn_activation_str("Softmax", "dim=0.5"), "tn_nn_activation: option dim=0.5: expected an integer");
    CHECK_ERR(tn_nn_activation_str("Tanh", "inplace=2"), "tn_nn_activation: unknown option 'inplace' (valid: none)");
    /* a failed constructor inside tn_nn_sequential: NULL, its message, the others freed */
    CHECK_ERR(tn_nn_sequential(tn_nn_linear(2, 2), tn_nn_conv2d(1, 1, 0), tn_nn_relu()), "tn_nn_conv2d: kernel_size");
    CHECK_ERR(tn_nn_sequential_n(NULL, 2), "tn_nn_sequential: a module is NULL");
    CHECK_ERR(tn_nn_sequential_n(NULL, -1), "tn_nn_sequential");
}

/* Forward errors name the layer. */
TEST(forward_errors) {
    tn_tensor *x = tn_randn(SH(2, 3, 8, 8), TN_F32);
    struct { tn_module *m; tn_tensor *x; const char *want; } cases[] = {
        {tn_nn_conv2d(4, 2, 3), x, "Conv2d: given groups=1, weight of size [2, 4, 3, 3], expected input [2, 3, 8, 8] to have 4 channels, but got 3 channels instead"},
        {tn_nn_conv1d(4, 2, 3), x, "Conv1d:"},
        {tn_nn_conv_transpose2d(4, 2, 3), x, "ConvTranspose2d:"},
        {tn_nn_linear(5, 2), x, "Linear:"},
        {tn_nn_batch_norm2d(4), x, "BatchNorm2d:"},
        {tn_nn_batch_norm2d(3), tn_randn(SH(2, 3, 8), TN_F32), "BatchNorm2d: expected 4D input (got 3D input [2, 3, 8])"},
        {tn_nn_batch_norm1d(3), x, "BatchNorm1d: expected 2D or 3D input (got 4D input [2, 3, 8, 8])"},
        {tn_nn_layer_norm(SH(7)), x, "LayerNorm:"},
        {tn_nn_group_norm(2, 4), x, "GroupNorm:"},
        {tn_nn_max_pool2d(2), tn_randn(SH(3), TN_F32), "MaxPool2d:"},
        {tn_nn_max_pool2d(9), x, "MaxPool2d:"},
        {tn_nn_avg_pool1d(2), tn_randn(SH(3), TN_F32), "AvgPool1d:"},
        {tn_nn_adaptive_avg_pool2d(2, 2), tn_randn(SH(3), TN_F32), "AdaptiveAvgPool2d:"},
        {tn_nn_embedding(10, 3), x, "Embedding:"},
        {tn_nn_embedding(10, 3), tn_from_data((int64_t[]){1, 12}, SH(2), TN_I64), "Embedding:"},
        {tn_nn_flatten(.start_dim = 5), x, "Flatten:"},
        {tn_nn_unflatten(1, SH(2, 2)), x, "Unflatten:"},
        {tn_nn_dropout(), tn_zeros(SH(3), TN_I64), "Dropout:"},
        {tn_nn_activation("Softmax", .dim = 5), x, "Softmax:"},
        {tn_nn_activation("LogSoftmax", .dim = -7), x, "LogSoftmax:"},
        {tn_nn_activation("GELU"), tn_zeros(SH(3), TN_BOOL), "GELU:"},
        {tn_nn_activation("Hardtanh"), tn_zeros(SH(3), TN_BOOL), "Hardtanh:"},
        {tn_nn_lstm(5, 4), x, "LSTM:"},
        {tn_nn_multihead_attention(8, 2), x, "tn_module_forward: MultiheadAttention has no single-input forward"},
        {tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16), x, "TransformerEncoderLayer:"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tn_module *m = cases[k].m;
        CHECK_MSG(m != NULL, "case %d: constructor failed: %s", (int)k, tn_last_error());
        if (!m) continue;
        CHECK_ERR(tn_module_forward(m, cases[k].x), cases[k].want);
        tn_module_free(m);
    }
    /* the message of a layer deep inside a Sequential is the layer's */
    tn_module *m = tn_nn_sequential(tn_nn_flatten(), tn_nn_linear(192, 10), tn_nn_relu(), tn_nn_linear(11, 2));
    CHECK_ERR(tn_module_forward(m, x), "Linear:");
    tn_module_free(m);
    /* and a NULL input stays silent */
    m = tn_nn_linear(2, 2);
    tn_clear_error();
    CHECK(tn_module_forward(m, NULL) == NULL && tn_last_error()[0] == 0);
    tn_module_free(m);
}

/* ==================================================================================== */
/* 4. initialisation                                                                      */
/* ==================================================================================== */
/* U(-bound, bound) by its moments: mean 0, variance bound^2 / 3, range close to the bound. */
static void check_uniform(const char *what, tn_tensor *t, double lo, double hi) {
    moments m = moments_of(t);
    double n = (double)m.n, var = (hi - lo) * (hi - lo) / 12, mid = (hi + lo) / 2;
    CHECK_MSG(m.min >= lo && m.max <= hi, "%s: range [%g, %g] outside [%g, %g]", what, m.min, m.max, lo, hi);
    CHECK_MSG(fabs(m.mean - mid) <= 6 * sqrt(var / n), "%s: mean %g, want %g", what, m.mean, mid);
    CHECK_MSG(fabs(m.var / var - 1) <= 6 * sqrt(0.8 / n) + 1e-6, "%s: variance %g, want %g", what, m.var, var);
    if (n >= 10000) CHECK_MSG(m.min < lo + (hi - lo) * 20 / n && m.max > hi - (hi - lo) * 20 / n, "%s: range [%g, %g] does not reach [%g, %g]", what, m.min, m.max, lo, hi);
}
static void check_normal(const char *what, tn_tensor *t, double mean, double std) {
    moments m = moments_of(t);
    double n = (double)m.n;
    CHECK_MSG(fabs(m.mean - mean) <= 6 * std / sqrt(n), "%s: mean %g, want %g", what, m.mean, mean);
    CHECK_MSG(fabs(m.var / (std * std) - 1) <= 6 * sqrt(2 / n), "%s: std %g, want %g", what, sqrt(m.var), std);
    if (n >= 10000) CHECK_MSG(m.max > mean + 3 * std && m.min < mean - 3 * std, "%s: tails missing [%g, %g]", what, m.min, m.max);
}
static bool all_equal(tn_tensor *t, double v) {
    moments m = moments_of(t);
    return m.n > 0 && m.min == v && m.max == v;
}
TEST(init_layers) {
    tn_manual_seed(31);
    tn_module *m = tn_nn_linear(1000, 400);
    double b = 1 / sqrt(1000.0);
    check_uniform("Linear(1000, 400).weight", tn_module_get(m, "weight"), -b, b);
    check_uniform("Linear(1000, 400).bias", tn_module_get(m, "bias"), -b, b);
    tn_module_free(m);
    m = tn_nn_conv2d(16, 64, 5);   /* fan_in 16 * 25 */
    check_uniform("Conv2d(16, 64, 5).weight", tn_module_get(m, "weight"), -1 / sqrt(400.0), 1 / sqrt(400.0));
    check_uniform("Conv2d(16, 64, 5).bias", tn_module_get(m, "bias"), -1 / sqrt(400.0), 1 / sqrt(400.0));
    tn_module_free(m);
    m = tn_nn_conv2d(16, 64, 5, .groups = 4, .kernel_size_hw = {5, 3});   /* fan_in 4 * 15 */
    check_uniform("Conv2d(16, 64, (5, 3), groups=4).weight", tn_module_get(m, "weight"), -1 / sqrt(60.0), 1 / sqrt(60.0));
    tn_module_free(m);
    m = tn_nn_conv1d(8, 128, 7);
    check_uniform("Conv1d(8, 128, 7).weight", tn_module_get(m, "weight"), -1 / sqrt(56.0), 1 / sqrt(56.0));
    tn_module_free(m);
    m = tn_nn_conv_transpose2d(64, 24, 4);   /* weight [64, 24, 4, 4]: fan_in = size(1) * 16 */
    check_uniform("ConvTranspose2d(64, 24, 4).weight", tn_module_get(m, "weight"), -1 / sqrt(384.0), 1 / sqrt(384.0));
    check_uniform("ConvTranspose2d(64, 24, 4).bias", tn_module_get(m, "bias"), -1 / sqrt(384.0), 1 / sqrt(384.0));
    tn_module_free(m);
    m = tn_nn_bilinear(30, 20, 50);   /* bound 1/sqrt(in1_features) */
    check_uniform("Bilinear(30, 20, 50).weight", tn_module_get(m, "weight"), -1 / sqrt(30.0), 1 / sqrt(30.0));
    tn_module_free(m);
    m = tn_nn_lstm(10, 100);
    check_uniform("LSTM(10, 100).weight_hh_l0", tn_module_get(m, "weight_hh_l0"), -0.1, 0.1);
    tn_module_free(m);
    m = tn_nn_embedding(2000, 64, .padding_idx = 3);
    tn_tensor *w = tn_module_get(m, "weight");
    CHECK(all_equal(tn_select(w, 0, 3), 0));
    check_normal("Embedding(2000, 64).weight", tn_cat(((tn_tensor *[]){tn_narrow(w, 0, 0, 3), tn_narrow(w, 0, 4, 1996)}), 2), 0, 1);
    tn_module_free(m);
    m = tn_nn_batch_norm2d(7);
    CHECK(all_equal(tn_module_get(m, "weight"), 1) && all_equal(tn_module_get(m, "bias"), 0));
    CHECK(all_equal(tn_module_get(m, "running_mean"), 0) && all_equal(tn_module_get(m, "running_var"), 1));
    CHECK(tn_get_dtype(tn_module_get(m, "num_batches_tracked")) == TN_I64 && val_at(tn_module_get(m, "num_batches_tracked"), 0) == 0);
    CHECK(tn_get_dtype(tn_module_get(m, "weight")) == TN_F32 && tn_size(tn_module_get(m, "running_var"), 0) == 7);
    tn_module_free(m);
    m = tn_nn_layer_norm(SH(3, 4));
    CHECK(all_equal(tn_module_get(m, "weight"), 1) && all_equal(tn_module_get(m, "bias"), 0) && tn_ndim(tn_module_get(m, "weight")) == 2);
    tn_module_free(m);
    m = tn_nn_group_norm(2, 6);
    CHECK(all_equal(tn_module_get(m, "weight"), 1) && all_equal(tn_module_get(m, "bias"), 0) && tn_numel(tn_module_get(m, "weight")) == 6);
    tn_module_free(m);
    m = tn_nn_multihead_attention(16, 4);   /* xavier_uniform in_proj, zero biases */
    check_uniform("MultiheadAttention.in_proj_weight", tn_module_get(m, "in_proj_weight"), -sqrt(6.0 / 64), sqrt(6.0 / 64));
    CHECK(all_equal(tn_module_get(m, "in_proj_bias"), 0) && all_equal(tn_module_get(m, "out_proj.bias"), 0));
    tn_module_free(m);
    /* the same seed, the same weights */
    tn_manual_seed(77);
    tn_module *a = cnn_new();
    tn_manual_seed(77);
    tn_module *c = cnn_new();
    tn_dict *sa = tn_module_state_dict(a), *sc = tn_module_state_dict(c);
    CHECK(dicts_bitsame(sa, sc));
    tn_dict_free(sa); tn_dict_free(sc);
    tn_module_free(a);
    tn_module_free(c);
}

static double phi(double x) { return exp(-x * x / 2) / sqrt(2 * 3.14159265358979323846); }
static double Phi(double x) { return 0.5 * (1 + erf(x / sqrt(2.0))); }
TEST(init_functions) {
    tn_manual_seed(41);
    tn_tensor *t = tn_empty(SH(400, 500), TN_F64);
    CHECK(tn_init_uniform_(t, .a = -0.5, .b = 2) == 0);
    check_uniform("uniform_(-0.5, 2)", t, -0.5, 2);
    CHECK(tn_init_normal_(t, .mean = 3, .std = 0.25) == 0);
    check_normal("normal_(3, 0.25)", t, 3, 0.25);
    CHECK(tn_init_constant_(t, -1.5) == 0 && all_equal(t, -1.5));
    CHECK(tn_init_zeros_(t) == 0 && all_equal(t, 0));
    CHECK(tn_init_ones_(t) == 0 && all_equal(t, 1));
    CHECK(tn_get_dtype(t) == TN_F64 && tn_size(t, 1) == 500);
    /* xavier: fans of a [out, in, k, k] tensor include the receptive field */
    tn_tensor *c4 = tn_empty(SH(64, 32, 3, 3), TN_F32);   /* fan_in 288, fan_out 576 */
    CHECK(tn_init_xavier_uniform_(c4, .gain = 2) == 0);
    double a = 2 * sqrt(6.0 / (288 + 576));
    check_uniform("xavier_uniform_(gain=2)", c4, -a, a);
    CHECK(tn_init_xavier_normal_(t, .gain = 0.5) == 0);
    check_normal("xavier_normal_(gain=0.5)", t, 0, 0.5 * sqrt(2.0 / 900));
    CHECK(tn_init_xavier_uniform_(t) == 0);
    check_uniform("xavier_uniform_", t, -sqrt(6.0 / 900), sqrt(6.0 / 900));
    /* kaiming: fan_in / fan_out, relu / leaky_relu gains */
    CHECK(tn_init_kaiming_uniform_(c4, .nonlinearity = "relu") == 0);
    a = sqrt(2.0) * sqrt(3.0 / 288);
    check_uniform("kaiming_uniform_(fan_in, relu)", c4, -a, a);
    CHECK(tn_init_kaiming_uniform_(c4, .a = 0.2, .mode = "fan_out") == 0);
    a = sqrt(2.0 / (1 + 0.04)) * sqrt(3.0 / 576);
    check_uniform("kaiming_uniform_(a=0.2, fan_out, leaky_relu)", c4, -a, a);
    CHECK(tn_init_kaiming_uniform_(c4, .a = sqrt(5.0)) == 0);   /* what Linear/Conv use: 1/sqrt(fan_in) */
    check_uniform("kaiming_uniform_(a=sqrt(5))", c4, -1 / sqrt(288.0), 1 / sqrt(288.0));
    CHECK(tn_init_kaiming_uniform_(c4) == 0);   /* defaults: fan_in, leaky_relu with a = 0 */
    check_uniform("kaiming_uniform_ defaults", c4, -sqrt(6.0 / 288), sqrt(6.0 / 288));
    CHECK(tn_init_kaiming_normal_(t, .nonlinearity = "relu") == 0);    /* [400, 500]: fan_in 500 */
    check_normal("kaiming_normal_(fan_in, relu)", t, 0, sqrt(2.0 / 500));
    CHECK(tn_init_kaiming_normal_(t, .a = 0.1, .mode = "fan_out") == 0);
    check_normal("kaiming_normal_(a=0.1, fan_out, leaky_relu)", t, 0, sqrt(2.0 / 1.01) / sqrt(400.0));
    CHECK(tn_init_kaiming_normal_(t, .mode = "fan_out", .nonlinearity = "tanh") == 0);
    check_normal("kaiming_normal_(fan_out, tanh)", t, 0, 5.0 / 3 / sqrt(400.0));
    /* orthogonal: W^T W = gain^2 I (tall), W W^T = gain^2 I (wide), rows x (the rest) for 4-d */
    const int64_t shapes[4][4] = {{60, 20}, {20, 60}, {8, 2, 3, 3}, {25, 25}};
    const int nds[4] = {2, 2, 4, 2};
    const double gains[4] = {1, 1.5, 2, 1};
    for (int k = 0; k < 4; k++) {
        tn_tensor *q = tn_empty(shapes[k], nds[k], TN_F32);
        CHECK(tn_init_orthogonal_(q, .gain = gains[k]) == 0);
        tn_tensor *q2 = tn_reshape(q, SH(shapes[k][0], -1));
        bool tall = tn_size(q2, 0) >= tn_size(q2, 1);
        tn_tensor *g = tall ? tn_matmul(tn_t(q2), q2) : tn_matmul(q2, tn_t(q2));
        int64_t n = tn_size(g, 0);
        double e = relerr(g, tn_mul_scalar(tn_eye(n, -1, TN_F32), gains[k] * gains[k]));
        CHECK_MSG(e <= 2e-5, "orthogonal_ %s gain %g: |Q^T Q - gain^2 I| = %g", tall ? "tall" : "wide", gains[k], e);
        CHECK(tn_ndim(q) == nds[k]);
    }
    tn_tensor *q = tn_empty(SH(30, 10), TN_F64);   /* two draws differ (random, not fixed) */
    tn_init_orthogonal_(q);
    tn_tensor *q1 = tn_clone(q);
    tn_init_orthogonal_(q);
    CHECK(relerr(q, q1) > 1e-3);
    /* trunc_normal: bounds respected; mean and std of the truncated distribution */
    const double tp[3][4] = {{1, 2, -1, 2}, {0, 1, -2, 2}, {0, 1, 0.5, 3}};
    for (int k = 0; k < 3; k++) {
        double mu = tp[k][0], s = tp[k][1], lo = tp[k][2], hi = tp[k][3];
        CHECK(tn_init_trunc_normal_(t, .mean = mu, .std = s, .a = lo, .b = hi) == 0);
        moments m = moments_of(t);
        double al = (lo - mu) / s, be = (hi - mu) / s, Z = Phi(be) - Phi(al);
        double mean = mu + s * (phi(al) - phi(be)) / Z;
        double var = s * s * (1 + (al * phi(al) - be * phi(be)) / Z - pow((phi(al) - phi(be)) / Z, 2));
        CHECK_MSG(m.min >= lo && m.max <= hi, "trunc_normal_(%g, %g, %g, %g): range [%g, %g]", mu, s, lo, hi, m.min, m.max);
        CHECK_MSG(fabs(m.mean - mean) <= 6 * sqrt(var / (double)m.n), "trunc_normal_(%g, %g, %g, %g): mean %g, want %g", mu, s, lo, hi, m.mean, mean);
        CHECK_MSG(fabs(m.var / var - 1) <= 0.02, "trunc_normal_(%g, %g, %g, %g): variance %g, want %g", mu, s, lo, hi, m.var, var);
        CHECK(m.min < lo + 0.01 * (hi - lo) && m.max > hi - 0.01 * (hi - lo));
    }
    /* calculate_gain */
    CHECK_CLOSE(tn_init_calculate_gain("linear"), 1, 0);
    CHECK_CLOSE(tn_init_calculate_gain("conv2d"), 1, 0);
    CHECK_CLOSE(tn_init_calculate_gain("conv_transpose1d"), 1, 0);
    CHECK_CLOSE(tn_init_calculate_gain("sigmoid"), 1, 0);
    CHECK_CLOSE(tn_init_calculate_gain("tanh"), 5.0 / 3, 1e-15);
    CHECK_CLOSE(tn_init_calculate_gain("relu"), sqrt(2.0), 1e-15);
    CHECK_CLOSE(tn_init_calculate_gain("leaky_relu"), sqrt(2.0 / (1 + 0.01 * 0.01)), 1e-15);
    CHECK_CLOSE(tn_init_calculate_gain("leaky_relu", .param = 0.2), sqrt(2.0 / 1.04), 1e-15);
    CHECK_CLOSE(tn_init_calculate_gain("leaky_relu", .param = 0), sqrt(2.0), 1e-15);
    CHECK_CLOSE(tn_init_calculate_gain("selu"), 0.75, 0);
    tn_clear_error();
    CHECK(isnan(tn_init_calculate_gain("swish")) && has(tn_last_error(), "tn_init_calculate_gain: unsupported nonlinearity swish"));
    /* errors */
    tn_tensor *v = tn_zeros(SH(10), TN_F32), *iv = tn_zeros(SH(3, 3), TN_I64);
    CHECK_ERR(tn_init_xavier_uniform_(v) == 0, "tn_init_xavier_uniform_: fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got [10])");
    CHECK_ERR(tn_init_xavier_normal_(v) == 0, "tn_init_xavier_normal_: fan in and fan out can not be computed");
    CHECK_ERR(tn_init_kaiming_uniform_(v, .nonlinearity = "relu") == 0, "tn_init_kaiming_uniform_: fan in and fan out can not be computed");
    CHECK_ERR(tn_init_kaiming_normal_(v, .nonlinearity = "relu") == 0, "tn_init_kaiming_normal_: fan in and fan out can not be computed");
    CHECK_ERR(tn_init_orthogonal_(v) == 0, "tn_init_orthogonal_: only tensors with 2 or more dimensions are supported");
    CHECK_ERR(tn_init_kaiming_uniform_(c4, .mode = "fan_avg", .nonlinearity = "relu") == 0, "tn_init_kaiming_uniform_: mode fan_avg not supported, please use one of fan_in, fan_out");
    CHECK_ERR(tn_init_kaiming_normal_(c4, .nonlinearity = "swish") == 0, "unsupported nonlinearity swish");
    CHECK_ERR(tn_init_trunc_normal_(t, .a = 2, .b = -2) == 0, "tn_init_trunc_normal_: need a < b (got a=2, b=-2)");
    CHECK_ERR(tn_init_uniform_(iv) == 0, "tn_init_uniform_: expected a floating tensor, got int64");
    CHECK_ERR(tn_init_normal_(iv) == 0, "tn_init_normal_: expected a floating tensor");
    CHECK(all_equal(iv, 0));
    CHECK(tn_init_uniform_(NULL) == -1 && tn_init_orthogonal_(NULL) == -1 && tn_init_xavier_uniform_(NULL) == -1);
    /* a parameter initialised in place stays a leaf that requires grad, with no history */
    tn_module *m = tn_nn_linear(3, 3);
    tn_tensor *w = tn_module_get(m, "weight");
    CHECK(tn_init_orthogonal_(w) == 0 && tn_is_leaf(w) && tn_requires_grad(w) && tn_grad(w) == NULL);
    tn_module_free(m);
}

/* ==================================================================================== */
/* 5. checkpoints                                                                         */
/* ==================================================================================== */
static tn_module *ck_model(uint64_t seed, int64_t hidden) {
    tn_manual_seed(seed);
    tn_module *a = tn_nn_linear(6, hidden), *b = tn_nn_batch_norm1d(hidden), *c = tn_nn_tanh(), *d = tn_nn_linear(hidden, 3);
    return tn_nn_sequential(a, b, c, d);
}
static tn_optim *ck_optim(tn_module *m, const char *kind, const char *opts) {
    int n;
    tn_tensor **p = params_of(m, &n);
    tn_optim *o = tn_optim_create_str(kind, p, n, opts);
    free(p);
    return o;
}
static void ck_train(tn_module *m, tn_optim *o, tn_tensor *x, tn_tensor *y, int steps) {
    for (int s = 0; s < steps; s++) {
        tn_scope_begin();
        tn_tensor *loss = tn_mse_loss(tn_module_forward(m, x), y);
        tn_optim_zero_grad(o);
        CHECK(tn_backward(loss) == 0);
        CHECK(tn_optim_step(o) == 0);
        tn_scope_end();
    }
}
static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}
static void copy_prefix(const char *from, const char *to, long n) {
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    char *buf = (char *)malloc((size_t)n + 1);
    if (f && g && fread(buf, 1, (size_t)n, f) == (size_t)n) fwrite(buf, 1, (size_t)n, g);
    if (f) fclose(f);
    if (g) fclose(g);
    free(buf);
}
/* k steps, save, load into a fresh model and optimizer, m more steps == k + m steps. */
static void resume_case(const char *kind, const char *opts) {
    const int k = 4, m = 5;
    tn_manual_seed(100);
    tn_tensor *x = tn_randn(SH(16, 6), TN_F32), *y = tn_randn(SH(16, 3), TN_F32);
    /* uninterrupted */
    tn_module *r = ck_model(1, 16);
    tn_optim *ro = ck_optim(r, kind, opts);
    ck_train(r, ro, x, y, k + m);
    /* interrupted */
    tn_module *a = ck_model(1, 16);
    tn_optim *ao = ck_optim(a, kind, opts);
    ck_train(a, ao, x, y, k);
    const char *path = tmp_path("resume.safetensors");
    CHECK_MSG(tn_checkpoint_save(path, a, ao, k) == 0, "%s: save: %s", kind, tn_last_error());
    tn_module *b = ck_model(2, 16);   /* a different initialisation, replaced by the checkpoint */
    tn_optim *bo = ck_optim(b, kind, opts);
    int64_t step = -1;
    CHECK_MSG(tn_checkpoint_load(path, b, bo, &step) == 0, "%s: load: %s", kind, tn_last_error());
    CHECK(step == k);
    tn_dict *sa = tn_module_state_dict(a), *sb = tn_module_state_dict(b);
    CHECK_MSG(dicts_bitsame(sa, sb), "%s: the loaded model differs from the saved one", kind);
    tn_dict_free(sa); tn_dict_free(sb);
    tn_dict *oa = tn_optim_state_dict(ao), *ob = tn_optim_state_dict(bo);
    CHECK_MSG(dicts_bitsame(oa, ob) && tn_dict_len(oa) > 0, "%s: the loaded optimizer state differs from the saved one", kind);
    tn_dict_free(oa); tn_dict_free(ob);
    ck_train(b, bo, x, y, m);
    tn_dict *sr = tn_module_state_dict(r);
    sb = tn_module_state_dict(b);
    CHECK_MSG(dicts_bitsame(sr, sb), "%s: %d + %d steps through a checkpoint differ from %d steps", kind, k, m, k + m);
    tn_dict *orr = tn_optim_state_dict(ro);
    ob = tn_optim_state_dict(bo);
    CHECK_MSG(dicts_bitsame(orr, ob), "%s: optimizer states differ after resuming", kind);
    tn_dict_free(orr); tn_dict_free(ob); tn_dict_free(sr); tn_dict_free(sb);
    /* and the resumed run really moved: it is not the checkpoint's model */
    CHECK(!bitsame(tn_module_get(b, "0.weight"), tn_module_get(a, "0.weight")));
    tn_optim_free(ro); tn_optim_free(ao); tn_optim_free(bo);
    tn_module_free(r); tn_module_free(a); tn_module_free(b);
}
TEST(checkpoint_resume_adam) { resume_case("Adam", "lr=0.01"); }
TEST(checkpoint_resume_sgd) { resume_case("SGD", "lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3"); }
TEST(checkpoint_resume_adamw) { resume_case("AdamW", "lr=0.01, amsgrad=True"); }

TEST(checkpoint_errors) {
    tn_manual_seed(3);
    tn_tensor *x = tn_randn(SH(8, 6), TN_F32), *y = tn_randn(SH(8, 3), TN_F32);
    tn_module *a = ck_model(1, 16);
    tn_optim *ao = ck_optim(a, "Adam", "lr=0.01");
    ck_train(a, ao, x, y, 2);
    const char *path = tmp_path("ck.safetensors");
    CHECK(tn_checkpoint_save(path, a, ao, 2) == 0);
    CHECK(access(tmp_path("ck.safetensors.tmp"), F_OK) != 0);          /* no temporary left behind */
    /* the file is a safetensors file with the model, the optimizer and the step */
    tn_dict *f = tn_safetensors_load(path);
    CHECK(f && tn_dict_contains(f, "model.0.weight") && tn_dict_contains(f, "model.1.num_batches_tracked") && tn_dict_contains(f, "step"));
    CHECK(f && tn_dict_contains(f, "optim.state.0.exp_avg") && val_at(tn_dict_get(f, "step"), 0) == 2);
    tn_dict_free(f);
    CHECK(tn_checkpoint_save(path, a, ao, 3) == 0);                      /* over an existing file */
    int64_t step = 0;
    tn_module *b = ck_model(5, 16);
    tn_optim *bo = ck_optim(b, "Adam", "lr=0.01");
    CHECK(tn_checkpoint_load(path, b, bo, &step) == 0 && step == 3);
    CHECK(tn_checkpoint_load(path, b, bo, NULL) == 0);                   /* the step is optional */
    tn_optim_free(bo);
    tn_module_free(b);
    /* a different architecture: refused with the reason, and the model is unchanged */
    b = ck_model(5, 8);
    bo = ck_optim(b, "Adam", "lr=0.01");
    tn_dict *b0 = tn_module_state_dict(b), *b0c = clone_dict(b0);
    CHECK_ERR(tn_checkpoint_load(path, b, bo, &step) == 0, "size mismatch for 0.weight: copying a param with shape [16, 6] from checkpoint, the shape in current model is [8, 6].");
    CHECK_ERR(tn_checkpoint_load(path, b, bo, &step) == 0, "tn_checkpoint_load:");
    CHECK_ERR(tn_checkpoint_load(path, b, bo, &step) == 0, "ck.safetensors");
    tn_dict *b1 = tn_module_state_dict(b);
    CHECK(dicts_bitsame(b0c, b1));
    tn_dict_free(b1); tn_dict_free(b0); tn_dict_free(b0c);
    tn_optim_free(bo);
    tn_module_free(b);
    b = tn_nn_sequential(tn_nn_linear(6, 16), tn_nn_tanh(), tn_nn_linear(16, 3));
    CHECK_ERR(tn_checkpoint_load(path, b, NULL, &step) == 0, "Missing key(s) in state_dict: \"2.weight\", \"2.bias\". Unexpected key(s) in state_dict: ");
    CHECK_ERR(tn_checkpoint_load(path, b, NULL, &step) == 0, "\"1.running_mean\"");
    tn_module_free(b);
    /* the right model with the wrong optimizer: refused, and nothing is loaded */
    b = ck_model(5, 16);
    bo = ck_optim(b, "SGD", "lr=0.1, momentum=0.9");
    ck_train(b, bo, x, y, 1);
    b0 = tn_module_state_dict(b);
    b0c = clone_dict(b0);
    tn_clear_error();
    CHECK_MSG(tn_checkpoint_load(path, b, bo, &step) != 0, "an Adam checkpoint loaded into SGD");
    CHECK(has(tn_last_error(), "tn_checkpoint_load"));
    b1 = tn_module_state_dict(b);
    CHECK_MSG(dicts_bitsame(b0c, b1), "a failed checkpoint load changed the model");
    tn_dict_free(b1); tn_dict_free(b0); tn_dict_free(b0c);
    tn_optim_free(bo);
    /* a checkpoint without optimizer state, loaded with an optimizer: refused */
    CHECK(tn_checkpoint_save(tmp_path("noopt.safetensors"), a, NULL, 7) == 0);
    bo = ck_optim(b, "Adam", "lr=0.01");
    tn_clear_error();
    CHECK(tn_checkpoint_load(tmp_path("noopt.safetensors"), b, bo, &step) != 0 && tn_last_error()[0]);
    tn_optim_free(bo);
    CHECK(tn_checkpoint_load(tmp_path("noopt.safetensors"), b, NULL, &step) == 0 && step == 7);
    /* not a checkpoint: a plain safetensors file */
    tn_dict *plain = tn_dict_new();
    tn_dict_set(plain, "weight", tn_ones(SH(2, 2), TN_F32));
    CHECK(tn_safetensors_save(tmp_path("plain.safetensors"), plain) == 0);
    tn_dict_free(plain);
    CHECK_ERR(tn_checkpoint_load(tmp_path("plain.safetensors"), b, NULL, &step) == 0, "is not a checkpoint");
    CHECK_ERR(tn_checkpoint_load(tmp_path("plain.safetensors"), b, NULL, &step) == 0, "plain.safetensors");
    /* a state dict alone (model keys but no step) is not a checkpoint either */
    tn_dict *sd = tn_module_state_dict(b);
    CHECK(tn_safetensors_save(tmp_path("sd.safetensors"), sd) == 0);
    tn_dict_free(sd);
    CHECK_ERR(tn_checkpoint_load(tmp_path("sd.safetensors"), b, NULL, &step) == 0, "is not a checkpoint");
    /* truncated files, damaged header, missing file */
    long size = file_size(path);
    CHECK(size > 100);
    const long cuts[4] = {size - 1, size / 2, 12, 4};
    for (int i = 0; i < 4; i++) {
        copy_prefix(path, tmp_path("trunc.safetensors"), cuts[i]);
        tn_clear_error();
        CHECK_MSG(tn_checkpoint_load(tmp_path("trunc.safetensors"), b, NULL, &step) != 0 && has(tn_last_error(), "trunc.safetensors"),
                  "a checkpoint cut to %ld of %ld bytes: \"%s\"", cuts[i], size, tn_last_error());
    }
    CHECK_ERR(tn_checkpoint_load(tmp_path("missing.safetensors"), b, NULL, &step) == 0, "missing.safetensors");
    CHECK_ERR(tn_checkpoint_load(NULL, b, NULL, &step) == 0, "tn_checkpoint_load: need a path and a model");
    CHECK_ERR(tn_checkpoint_load(path, NULL, NULL, &step) == 0, "tn_checkpoint_load: need a path and a model");
    CHECK_ERR(tn_checkpoint_save(NULL, a, NULL, 0) == 0, "tn_checkpoint_save: need a path and a model");
    CHECK_ERR(tn_checkpoint_save(tmp_path("no/such/dir/ck.safetensors"), a, NULL, 0) == 0, "no/such/dir");
    tn_module_free(b);
    tn_optim_free(ao);
    tn_module_free(a);
}

/* ==================================================================================== */
/* 6. a module written here                                                               */
/* ==================================================================================== */
TEST(custom_module) {
    custom_destroyed = 0;
    tn_manual_seed(9);
    tn_module *c = custom_new(4);
    CHECK(c && tn_module_num_parameters(c) == 4 + 16 + 4);
    tn_module *m = tn_nn_sequential(tn_nn_linear(3, 4), c, tn_nn_relu());
    CHECK(m != NULL);
    tn_dict *s = tn_module_state_dict(m);
    CHECK(keys_are(s, "0.weight,0.bias,1.scale,1.count,1.fc.weight,1.fc.bias"));
    tn_dict_free(s);
    /* forward inside the Sequential, gradients reach the custom parameter */
    tn_no_grad_begin();
    tn_fill_(tn_module_get(m, "1.scale"), 0.5);
    tn_no_grad_end();
    tn_tensor *x = tn_randn(SH(5, 3), TN_F32);
    tn_tensor *y = tn_module_forward(m, x);
    tn_tensor *ref = tn_relu(tn_mul_scalar(tn_linear(tn_linear(x, tn_module_get(m, "0.weight"), tn_module_get(m, "0.bias")),
                                                     tn_module_get(m, "1.fc.weight"), tn_module_get(m, "1.fc.bias")), 0.5));
    CHECK_SAME(y, ref, 1e-6);
    CHECK(tn_backward(tn_sum(y)) == 0 && tn_grad(tn_module_get(m, "1.scale")) != NULL && tn_grad(tn_module_get(m, "1.fc.weight")) != NULL);
    /* repr with extra_repr and a child */
    char *r = tn_module_repr(m);
    const char *want = "Sequential(\n  (0): Linear(in_features=3, out_features=4, bias=True)\n  (1): Custom(\n    width=4\n"
                       "    (fc): Linear(in_features=4, out_features=4, bias=True)\n  )\n  (2): ReLU()\n)";
    CHECK_MSG(r && !strcmp(r, want), "repr:\n%s", r ? r : tn_last_error());
    tn_string_free(r);
    /* state dicts move between two instances */
    tn_manual_seed(10);
    tn_module *m2 = tn_nn_sequential(tn_nn_linear(3, 4), custom_new(4), tn_nn_relu());
    s = tn_module_state_dict(m);
    CHECK(tn_module_load_state_dict(m2, s, NULL, NULL) == 0);
    CHECK_SAME(tn_module_forward(m2, x), y, 0);
    tn_dict_free(s);
    /* to_dtype reaches the custom module's tensors */
    CHECK(tn_module_to_dtype(m2, TN_F64) == 0 && tn_get_dtype(tn_module_get(m2, "1.scale")) == TN_F64 &&
          tn_get_dtype(tn_module_get(m2, "1.count")) == TN_F64 && tn_get_dtype(tn_module_get(m2, "1.fc.bias")) == TN_F64);
    CHECK_SAME(tn_module_forward(m2, tn_to_dtype(x, TN_F64)), y, 1e-6);
    /* destroy: once per instance, when the tree is freed */
    CHECK(custom_destroyed == 0);
    tn_module_free(m);
    CHECK(custom_destroyed == 1);
    tn_module_free(m2);
    CHECK(custom_destroyed == 2);
    /* a custom module replaced inside its parent is destroyed then */
    tn_module *p = tn_nn_module_dict();
    tn_module_add(p, "c", custom_new(2));
    tn_module_add(p, "c", custom_new(2));
    CHECK(custom_destroyed == 3 && tn_module_num_children(p) == 1);
    tn_module_free(p);
    CHECK(custom_destroyed == 4);
    /* refused when added under a taken name of another kind: destroyed at once */
    p = tn_nn_linear(2, 2);
    CHECK_ERR(tn_module_add(p, "weight", custom_new(2)), "\"weight\" is already a parameter of Linear");
    CHECK(custom_destroyed == 5);
    tn_module_free(p);
}

/* tn_module_free frees everything; nothing is left in the memory statistics. */
TEST(free_everything) {
    tn_memory_stats s0 = tn_memory_stats_get();
    tn_scope_begin();
    tn_module *m = nested_new();
    tn_module *r = representative_new();
    tn_tensor *x = tn_randn(SH(2, 1, 16, 16), TN_F32);
    tn_backward(tn_sum(tn_module_forward(r, x)));                        /* grads and running stats too */
    tn_dict *s = tn_module_state_dict(m);
    tn_dict_free(s);
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors > s0.live_tensors);
    tn_module_free(m);
    tn_module_free(r);
    tn_memory_stats s1 = tn_memory_stats_get();
    CHECK_MSG(s1.live_tensors == s0.live_tensors && s1.live_bytes == s0.live_bytes, "left: %lld tensors, %lld bytes",
              (long long)(s1.live_tensors - s0.live_tensors), (long long)(s1.live_bytes - s0.live_bytes));
}

/* ==================================================================================== */
/* main                                                                                   */
/* ==================================================================================== */
/* Each test in a scope; afterwards every tensor and byte it made must be gone. */
static void run_body(const char *name, void (*fn)(void)) {
    tn_test_current = name;
    tn_memory_stats s0 = tn_memory_stats_get();
    tn_clear_error();
    tn_scope_begin();
    fn();
    tn_scope_end();
    tn_memory_stats s1 = tn_memory_stats_get();
    CHECK_MSG(s1.live_tensors == s0.live_tensors && s1.live_bytes == s0.live_bytes, "leak: %lld tensors, %lld bytes left",
              (long long)(s1.live_tensors - s0.live_tensors), (long long)(s1.live_bytes - s0.live_bytes));
}
#ifdef __unix__
static void run_isolated(const char *name, void (*fn)(void)) {
    int fd[2];
    if (pipe(fd) != 0) { run_body(name, fn); return; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        tn_test_passed = tn_test_failed = 0;
        alarm(120);
        run_body(name, fn);
        fflush(stdout);
        int leaks = 0;
#ifdef TN_TEST_LSAN
        leaks = __lsan_do_recoverable_leak_check();
#endif
        if (leaks) printf("FAIL %s: LeakSanitizer found leaks (see stderr)\n", name);
        int counts[2] = {tn_test_passed, tn_test_failed + (leaks != 0)};
        fflush(stdout);
        if (write(fd[1], counts, sizeof counts) != (ssize_t)sizeof counts) _exit(3);
        _exit(0);
    }
    close(fd[1]);
    int counts[2] = {0, 0}, st = 0;
    ssize_t got = read(fd[0], counts, sizeof counts);
    close(fd[0]);
    waitpid(pid, &st, 0);
    tn_test_current = name;
    if (got == (ssize_t)sizeof counts) { tn_test_passed += counts[0]; tn_test_failed += counts[1]; }
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == (ssize_t)sizeof counts, "crashed: child %s %d (see stderr)",
              WIFSIGNALED(st) ? "killed by signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}
#define RUN_T(name) run_isolated(#name, name)
#else
#define RUN_T(name) run_body(#name, name)
#endif

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tn_test_modules_XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) { printf("cannot make a temporary directory %s\n", tmpdir); return 1; }
    oracle_init();
    if (!oracle) printf("skipped: the PyTorch oracle (%s); the checks against torch are skipped\n", oracle_why);
    RUN_T(base_register);
    RUN_T(base_add_cycles);
    RUN_T(keys_nested);
    RUN_T(tied_weights);
    RUN_T(buffers_persistent);
    RUN_T(train_eval);
    RUN_T(zero_grad_apply);
    RUN_T(to_dtype);
    RUN_T(to_dtype_optimizer_state);
    RUN_T(repr_layers);
    RUN_T(load_state_dict);
    RUN_T(torch_state_dicts);
    RUN_T(c_to_torch);
    RUN_T(layers_forward);
    RUN_T(layer_errors);
    RUN_T(forward_errors);
    RUN_T(init_layers);
    RUN_T(init_functions);
    RUN_T(checkpoint_resume_adam);
    RUN_T(checkpoint_resume_sgd);
    RUN_T(checkpoint_resume_adamw);
    RUN_T(checkpoint_errors);
    RUN_T(custom_module);
    RUN_T(free_everything);
    free(oracle);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (!getenv("TN_MODULES_KEEP") && system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return tn_test_report();
}
