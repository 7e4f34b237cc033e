/* test_onnx.c — ONNX export (tn_onnx_export) and import (tn_onnx_load).
 *
 *  1. Round trip: the MLP, the fashion CNN (eval batch norm), a transformer encoder layer
 *     and a list of module types are traced, exported, loaded back and run: the outputs
 *     equal the eager forward's. (bindings/python/tests/test_onnx.py checks the same files
 *     with onnx.checker, and runs models exported by torch.onnx.export.)
 *  2. Errors: an op without an export and an unsupported ONNX operator are named; options.
 *  3. Hostile bytes: truncations and mutations of a valid model are refused with a message
 *     or load as a graph, never a crash (ASan under SANITIZE=1; tests/fuzz/fuzz_onnx.c).
 *  4. ONNX's operator conformance data (Debian's libonnx-testdata: node tests, each a
 *     model.onnx with test_data_set_N/input_K.pb and output_K.pb): every test whose model
 *     loads is run and must match its outputs; a model using an operator or an attribute
 *     we do not support must be refused with "not supported". The counts are printed
 *     (README states them). Skipped when the data is absent. */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#define TN_JIT_TEST_TMP "/tmp/tn_onnx"
#include "tn_jit_test.h"
static void randomize_bn(tn_module *m, void *user) {
    (void)user;
    tn_tensor *rm = tn_module_get(m, "running_mean"), *rv = tn_module_get(m, "running_var");
    if (!rm || !rv) return;
    tn_no_grad_begin();
    tn_copy_(rm, tn_mul_scalar(tn_randn(tn_shape(rm), 1, TN_F32), 0.3));
    tn_copy_(rv, tn_add_scalar(tn_rand(tn_shape(rv), 1, TN_F32), 0.5));
    tn_no_grad_end();
}

static tn_tensor *lgamma_fn(tn_tensor *const *in, int n, void *user) { (void)n; (void)user; return tn_lgamma(in[0]); }

/* trace m on x, export, load back: the loaded graph on x2 equals eager */
static void roundtrip(int line, tn_module *m, tn_tensor *x, tn_tensor *x2, double tol, const char *file) {
    tn_module_apply(m, randomize_bn, NULL);
    tn_module_eval(m);
    tn_graph *g = tn_jit_trace_module(m, x);
    if (!g) { fail_at(line, "trace %s: %s", tn_module_name(m), tn_last_error()); return; }
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir(), file);
    if (tn_onnx_export(g, path, .input_names = "x", .output_names = "y")) { fail_at(line, "export %s: %s", tn_module_name(m), tn_last_error()); tn_graph_free(g); return; }
    tn_graph *h = tn_onnx_load(path);
    if (!h) { fail_at(line, "load %s: %s", tn_module_name(m), tn_last_error()); tn_graph_free(g); return; }
    tn_no_grad_begin();
    tn_tensor *want = tn_module_forward(m, x2);
    tn_no_grad_end();
    tn_tensor *got = tn_graph_forward(h, x2);
    double d = maxdiff(got, want);
    if (!(d <= tol)) fail_at(line, "%s: the ONNX round trip differs from eager by %g (%s)", tn_module_name(m), d, got ? "" : tn_last_error());
    else tn_test_passed++;
    tn_graph_free(g);
    tn_graph_free(h);
}

TEST(test_roundtrip_models) {
    begin();
    tn_module *mlp = tn_nn_sequential(tn_nn_linear(8, 16), tn_nn_relu(), tn_nn_linear(16, 16), tn_nn_tanh(), tn_nn_linear(16, 3));
    roundtrip(__LINE__, mlp, rnd(TN_SHAPE(4, 8)), rnd(TN_SHAPE(4, 8)), 1e-5, "mlp.onnx");
    tn_module *cnn = tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_batch_norm2d(16), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_flatten(), tn_nn_dropout(.p = 0.25), tn_nn_linear(16 * 7 * 7, 32), tn_nn_relu(), tn_nn_linear(32, 10));
    roundtrip(__LINE__, cnn, rnd(TN_SHAPE(2, 1, 28, 28)), rnd(TN_SHAPE(2, 1, 28, 28)), 1e-4, "cnn.onnx");
    tn_module *enc = tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .batch_first = true);
    roundtrip(__LINE__, enc, rnd(TN_SHAPE(2, 5, 8)), rnd(TN_SHAPE(2, 5, 8)), 1e-4, "encoder.onnx");
    tn_module *encg = tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 16, .batch_first = true, .activation = TN_ACTIVATION_GELU, .norm_first = true);
    roundtrip(__LINE__, encg, rnd(TN_SHAPE(2, 5, 8)), rnd(TN_SHAPE(2, 5, 8)), 1e-4, "encoder_gelu.onnx");
    tn_module_free(mlp); tn_module_free(cnn); tn_module_free(enc); tn_module_free(encg);
    end(__LINE__);
}

TEST(test_roundtrip_module_types) {
    begin();
    struct { tn_module *m; int64_t shape[4]; int nd; } cases[] = {
        {tn_nn_linear(5, 3, .bias = false), {2, 3, 5}, 3},
        {tn_nn_conv2d(4, 6, 3, .stride = 2, .padding = 1, .groups = 2), {2, 4, 7, 7}, 4},
        {tn_nn_conv2d(3, 2, 1, .bias = false), {1, 3, 5, 5}, 4},
        {tn_nn_batch_norm1d(4), {3, 4}, 2},
        {tn_nn_batch_norm2d(3, .affine = false), {2, 3, 4, 4}, 4},
        {tn_nn_layer_norm(TN_SHAPE(6)), {2, 3, 6}, 3},
        {tn_nn_layer_norm(TN_SHAPE(3, 6), .elementwise_affine = false), {2, 3, 6}, 3},
        {tn_nn_max_pool2d(3, .stride = 2, .padding = 1), {2, 3, 8, 8}, 4},
        {tn_nn_adaptive_avg_pool2d(1, 1), {2, 3, 5, 5}, 4},
        {tn_nn_flatten(), {2, 3, 4}, 3},
        {tn_nn_unflatten(1, TN_SHAPE(2, 3)), {2, 6}, 2},
        {tn_nn_gelu(), {2, 5}, 2},
        {tn_nn_activation("GELU", .approximate = TN_APPROXIMATE_TANH), {2, 5}, 2},
        {tn_nn_sigmoid(), {2, 5}, 2},
        {tn_nn_activation("LeakyReLU", .negative_slope = 0.2), {2, 5}, 2},
        {tn_nn_activation("ELU", .alpha = 0.7), {2, 5}, 2},
        {tn_nn_activation("SELU"), {2, 5}, 2},
        {tn_nn_activation("Softmax", .dim = 1), {2, 5}, 2},
        {tn_nn_activation("LogSoftmax", .dim = -1), {2, 5}, 2},
        {tn_nn_activation("Hardtanh", .min_val = -0.5, .max_val = 0.5), {2, 5}, 2},
        {tn_nn_activation("SiLU"), {2, 5}, 2},
        {tn_nn_activation("Mish"), {2, 5}, 2},
        {tn_nn_activation("Hardswish"), {2, 5}, 2},
        {tn_nn_activation("Hardsigmoid"), {2, 5}, 2},
        {tn_nn_activation("Softplus"), {2, 5}, 2},
        {tn_nn_dropout(), {2, 5}, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char file[64];
        snprintf(file, sizeof file, "case%zu.onnx", i);
        if (getenv("TN_ONNX_VERBOSE")) fprintf(stderr, "case %zu: %s\n", i, tn_module_name(cases[i].m));
        roundtrip(__LINE__, cases[i].m, rnd(cases[i].shape, cases[i].nd), rnd(cases[i].shape, cases[i].nd), 1e-5, file);
        tn_module_free(cases[i].m);
    }
    end(__LINE__);
}

/* ---- hand-written protobuf: varints and length-delimited fields ---- */
typedef struct { unsigned char b[4096]; size_t n; } pb;
static void pb_varint(pb *p, uint64_t v) { do { p->b[p->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)); v >>= 7; } while (v); }
static void pb_int(pb *p, int field, int64_t v) { pb_varint(p, (uint64_t)field << 3); pb_varint(p, (uint64_t)v); }
static void pb_bytes(pb *p, int field, const void *d, size_t n) { pb_varint(p, ((uint64_t)field << 3) | 2); pb_varint(p, n); memcpy(p->b + p->n, d, n); p->n += n; }
static void pb_str(pb *p, int field, const char *s) { pb_bytes(p, field, s, strlen(s)); }
static void pb_msg(pb *p, int field, const pb *m) { pb_bytes(p, field, m->b, m->n); }
/* a model: graph (input x float [2], one node op(x) -> y, output y), opset 17 */
static pb model_with(const char *op, const pb *extra_graph_fields) {
    pb dim = {{0}, 0}, shape = {{0}, 0}, tt = {{0}, 0}, type = {{0}, 0}, vi = {{0}, 0}, node = {{0}, 0}, g = {{0}, 0}, m = {{0}, 0}, os = {{0}, 0}, vo = {{0}, 0};
    pb_int(&dim, 1, 2); pb_msg(&shape, 1, &dim);
    pb_int(&tt, 1, 1); pb_msg(&tt, 2, &shape);
    pb_msg(&type, 1, &tt);
    pb_str(&vi, 1, "x"); pb_msg(&vi, 2, &type);
    pb_str(&vo, 1, "y"); pb_msg(&vo, 2, &type);
    pb_str(&node, 1, "x"); pb_str(&node, 2, "y"); pb_str(&node, 4, op);
    pb_msg(&g, 1, &node);
    if (extra_graph_fields) { memcpy(g.b + g.n, extra_graph_fields->b, extra_graph_fields->n); g.n += extra_graph_fields->n; }
    pb_msg(&g, 11, &vi); pb_msg(&g, 12, &vo);
    pb_int(&m, 1, 8); pb_msg(&m, 7, &g);
    pb_str(&os, 1, ""); pb_int(&os, 2, 17); pb_msg(&m, 8, &os);
    return m;
}

TEST(test_errors_named) {
    begin();
    /* a hand-written model runs */
    pb m = model_with("Relu", NULL);
    tn_graph *g = tn_onnx_load_buffer(m.b, m.n);
    CHECK_MSG(g != NULL, "hand-written Relu model: %s", tn_last_error());
    if (g) {
        tn_tensor *x = tn_from_data((float[]){-1, 2}, TN_SHAPE(2), TN_F32), *y = tn_graph_forward(g, x);
        CHECK(y && maxdiff(y, tn_relu(x)) == 0);
        tn_graph_free(g);
    }
    /* an unknown operator: named, with the opset */
    m = model_with("FancyOp", NULL);
    CHECK_ERR(tn_onnx_load_buffer(m.b, m.n), "operator FancyOp (opset 17) is not supported");
    /* a tensor whose sizes promise far more than its data: refused before any allocation */
    pb t = {{0}, 0}, extra = {{0}, 0};
    pb_int(&t, 1, (int64_t)1 << 40); pb_int(&t, 1, (int64_t)1 << 30); pb_int(&t, 2, 1); pb_str(&t, 8, "w"); pb_bytes(&t, 9, "abcd", 4);
    pb_msg(&extra, 5, &t);
    m = model_with("Relu", &extra);
    CHECK_ERR(tn_onnx_load_buffer(m.b, m.n), "multiply past int64");
    pb t2 = {{0}, 0}, extra2 = {{0}, 0};
    pb_int(&t2, 1, 1000000); pb_int(&t2, 2, 1); pb_str(&t2, 8, "w"); pb_bytes(&t2, 9, "abcd", 4);
    pb_msg(&extra2, 5, &t2);
    m = model_with("Relu", &extra2);
    CHECK_ERR(tn_onnx_load_buffer(m.b, m.n), "raw data does not match its sizes");
    /* lengths past the end, a varint of 11 bytes, a group wire type */
    const unsigned char bad1[] = {0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
    CHECK_ERR(tn_onnx_load_buffer(bad1, sizeof bad1), "not a valid ONNX model");
    const unsigned char bad2[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_ERR(tn_onnx_load_buffer(bad2, sizeof bad2), "not a valid ONNX model");
    const unsigned char bad3[] = {0x0b, 0x00};
    CHECK_ERR(tn_onnx_load_buffer(bad3, sizeof bad3), "not a valid ONNX model");
    CHECK_ERR(tn_onnx_load_buffer("", 0), "has no graph");
    CHECK_ERR(tn_onnx_load("/nonexistent/model.onnx"), "cannot open");
    CHECK_ERR(tn_onnx_load_tensor_buffer(bad1, sizeof bad1), "not a valid ONNX model");
    /* export: an op without an export is named; a bad opset; the old file is kept on failure */
    tn_tensor *a = tn_randn(TN_SHAPE(2, 3), TN_F32);
    tn_graph *gi = tn_jit_trace(lgamma_fn, NULL, &a, 1, NULL);
    CHECK_MSG(gi != NULL, "trace: %s", tn_last_error());
    char path[256];
    snprintf(path, sizeof path, "%s/err.onnx", tmpdir());
    FILE *f = fopen(path, "wb");
    if (f) { fputs("old", f); fclose(f); }
    CHECK(tn_onnx_export(gi, path) == -1);
    CHECK(strstr(tn_last_error(), "aten::lgamma has no ONNX export") != NULL);
    CHECK(tn_onnx_export(gi, path, .opset_version = 13) == -1);
    CHECK(strstr(tn_last_error(), "opset_version=13 is not supported") != NULL);
    CHECK(tn_onnx_export_str(gi, path, "opset_version=17, input_names='a', colour=2") == -1);
    f = fopen(path, "rb");
    char buf[8] = {0};
    if (f) { CHECK(fread(buf, 1, 7, f) == 3); fclose(f); }
    CHECK(!strcmp(buf, "old"));
    tn_graph_free(gi);
    end(__LINE__);
}

/* truncations and mutations of a valid model: an error or a graph, never a crash or a leak */
TEST(test_hostile_bytes) {
    begin();
    tn_module *m = tn_nn_sequential(tn_nn_conv2d(1, 2, 3, .padding = 1), tn_nn_batch_norm2d(2), tn_nn_relu(), tn_nn_flatten(), tn_nn_linear(2 * 4 * 4, 3),
                                    tn_nn_activation("Softmax", .dim = 1));
    tn_module_eval(m);
    tn_graph *g = tn_jit_trace_module(m, rnd(TN_SHAPE(2, 1, 4, 4)));
    char path[256];
    snprintf(path, sizeof path, "%s/hostile.onnx", tmpdir());
    CHECK(g && tn_onnx_export(g, path) == 0);
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long n = 0;
    if (f) { fseek(f, 0, SEEK_END); n = ftell(f); fseek(f, 0, SEEK_SET); data = (unsigned char *)malloc((size_t)n); if (fread(data, 1, (size_t)n, f) != (size_t)n) n = 0; fclose(f); }
    CHECK(n > 100);
    int loaded = 0, refused = 0;
    for (long len = 0; len < n; len += (len < 64 ? 1 : 7)) {   /* every short prefix, then a sample */
        tn_scope_begin();
        unsigned char *cut = (unsigned char *)malloc((size_t)(len ? len : 1));   /* an exact-size copy: ASan sees a read past it */
        memcpy(cut, data, (size_t)len);
        tn_graph *h = tn_onnx_load_buffer(cut, (size_t)len);
        if (h) loaded++; else { refused++; if (!tn_last_error()[0]) fail_at(__LINE__, "a truncation to %ld bytes was refused without a message", len); }
        tn_graph_free(h);
        free(cut);
        tn_scope_end();
    }
    srand(5);
    unsigned char *mut = (unsigned char *)malloc((size_t)n);
    for (int it = 0; it < 1500; it++) {
        tn_scope_begin();
        memcpy(mut, data, (size_t)n);
        for (int k = 0, nm = 1 + rand() % 4; k < nm; k++) {
            const long at = rand() % n;
            const int kind = rand() % 3;
            mut[at] = kind == 0 ? (unsigned char)(mut[at] ^ (1u << (rand() % 8))) : kind == 1 ? (unsigned char)rand() : 0xff;
        }
        tn_clear_error();
        tn_graph *h = tn_onnx_load_buffer(mut, (size_t)n);
        if (h) {   /* a graph that loads runs, or refuses its input with a message */
            loaded++;
            if (tn_graph_num_inputs(h) == 1 && tn_graph_num_outputs(h) == 1) {
                tn_tensor *y = tn_graph_forward(h, rnd(TN_SHAPE(2, 1, 4, 4)));
                if (!y && !tn_last_error()[0]) fail_at(__LINE__, "a mutated model's run failed without a message");
            }
        } else { refused++; if (!tn_last_error()[0]) fail_at(__LINE__, "a mutation was refused without a message"); }
        tn_graph_free(h);
        tn_scope_end();
    }
    printf("  hostile bytes: %d loaded, %d refused\n", loaded, refused);
    CHECK(refused > 100 && loaded > 0);
    free(mut);
    free(data);
    tn_graph_free(g);
    tn_module_free(m);
    end(__LINE__);
}

/* ---- ONNX's node tests ---- */
#define TESTDATA "/usr/share/libonnx-testdata/data"
static bool file_exists(const char *p) { struct stat st; return stat(p, &st) == 0; }
/* all values close (NaN where NaN), same dtype and shape */
static bool outputs_match(tn_tensor *got, tn_tensor *want, char *why, size_t cap) {
    if (!got || !want) { snprintf(why, cap, "no output"); return false; }
    if (tn_get_dtype(got) != tn_get_dtype(want)) { snprintf(why, cap, "dtype %s, expected %s", tn_dtype_name(tn_get_dtype(got)), tn_dtype_name(tn_get_dtype(want))); return false; }
    if (tn_ndim(got) != tn_ndim(want) || memcmp(tn_shape(got), tn_shape(want), (size_t)tn_ndim(got) * sizeof(int64_t))) { snprintf(why, cap, "shape differs"); return false; }
    if (tn_numel(got) == 0) return true;
    tn_tensor *g = tn_to_dtype(got, TN_F64), *w = tn_to_dtype(want, TN_F64);
    tn_tensor *bad = tn_logical_and(tn_gt(tn_abs(tn_sub(g, w)), tn_add_scalar(tn_mul_scalar(tn_abs(w), 1e-3), 1e-5)),
                                    tn_logical_not(tn_logical_and(tn_isnan(g), tn_isnan(w))));
    tn_tensor *inf_same = tn_logical_and(tn_isinf(g), tn_eq(g, w));
    bad = tn_logical_and(bad, tn_logical_not(inf_same));
    if (tn_item(tn_sum(bad)) > 0) { snprintf(why, cap, "values differ by up to %g", tn_item(tn_max(tn_nan_to_num(tn_abs(tn_sub(g, w)), .posinf = 0, .neginf = 0)))); return false; }
    return true;
}
static int total_passed;
static void run_suite(const char *root) {
    DIR *dir = opendir(root);
    if (!dir) { printf("  (ONNX test data not found at %s: install libonnx-testdata; skipped)\n", root); return; }
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.') continue;
        if (n == cap) { cap = cap ? 2 * cap : 256; names = (char **)realloc(names, (size_t)cap * sizeof *names); }
        names[n++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)n, sizeof *names, (int (*)(const void *, const void *))strcmp);
    int passed = 0, skipped = 0, failed = 0;
    const bool verbose = getenv("TN_ONNX_VERBOSE") != NULL;
    for (int i = 0; i < n; i++) {
        char path[2048], why[256] = "";
        snprintf(path, sizeof path, "%s/%s/model.onnx", root, names[i]);
        if (!file_exists(path)) continue;
        begin();
        tn_clear_error();
        tn_graph *g = tn_onnx_load(path);
        bool ok = g != NULL;
        if (!g) {
            if (strstr(tn_last_error(), "not supported")) { skipped++; if (verbose) printf("  skip %s: %s\n", names[i], tn_last_error()); end(__LINE__); continue; }
            snprintf(why, sizeof why, "load: %.200s", tn_last_error());
        }
        for (int s = 0; ok; s++) {
            char sd[1024];
            snprintf(sd, sizeof sd, "%s/%s/test_data_set_%d", root, names[i], s);
            if (!file_exists(sd)) break;
            int ni = tn_graph_num_inputs(g), no = tn_graph_num_outputs(g);
            tn_tensor *ins[16], *outs[16];
            for (int k = 0; k < ni && k < 16 && ok; k++) {
                snprintf(path, sizeof path, "%s/input_%d.pb", sd, k);
                if (!(ins[k] = tn_onnx_load_tensor(path))) { ok = false; snprintf(why, sizeof why, "input %d: %.200s", k, tn_last_error()); }
            }
            if (ok && (ni > 16 || no > 16)) { ok = false; snprintf(why, sizeof why, "too many inputs or outputs"); }
            if (ok && tn_graph_run(g, ins, ni, outs, 16) < 0) { ok = false; snprintf(why, sizeof why, "run: %.200s", tn_last_error()); }
            for (int k = 0; k < no && ok; k++) {
                snprintf(path, sizeof path, "%s/output_%d.pb", sd, k);
                tn_tensor *want = tn_onnx_load_tensor(path);
                char w2[200];
                if (!outputs_match(outs[k], want, w2, sizeof w2)) { ok = false; snprintf(why, sizeof why, "set %d output %d: %s", s, k, want ? w2 : tn_last_error()); }
            }
        }
        tn_graph_free(g);
        end(__LINE__);
        if (ok) passed++;
        else { failed++; fail_at(__LINE__, "ONNX node test %s: %s", names[i], why); }
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    printf("  ONNX tests (%s): %d passed, %d skipped (an operator or attribute not supported), %d failed\n", root, passed, skipped, failed);
    total_passed += passed;
}
/* ONNX's node tests, and its models converted from PyTorch (pytorch-converted: modules,
   pytorch-operator: ops) and simple ones; TN_ONNX_TESTDATA=DIR runs one directory of them */
TEST(test_onnx_node_conformance) {
    const char *one = getenv("TN_ONNX_TESTDATA");
    if (one) { run_suite(one); return; }
    if (!file_exists(TESTDATA)) { printf("  (ONNX test data not found at %s: install libonnx-testdata; skipped)\n", TESTDATA); return; }
    const char *subs[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    for (int i = 0; i < 4; i++) {
        char root[256];
        snprintf(root, sizeof root, "%s/%s", TESTDATA, subs[i]);
        run_suite(root);
    }
    if (total_passed < 250) fail_at(__LINE__, "only %d ONNX tests passed", total_passed);
}

int main(int argc, char **argv) {
    (void)argc; (void)argv;
    RUN_ISOLATED(test_roundtrip_models, 300);
    RUN_ISOLATED(test_roundtrip_module_types, 300);
    RUN_ISOLATED(test_errors_named, 60);
    RUN_ISOLATED(test_hostile_bytes, 300);
    RUN_ISOLATED(test_onnx_node_conformance, 600);
    return tn_test_report();
}
