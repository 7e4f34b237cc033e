/* seeds.c — the seed corpora of the fuzz harnesses, made by the library itself.
 *
 *   build/fuzz/seeds DIR      writes DIR/<harness>/<seed> for every harness
 *
 * safetensors and checkpoint seeds are files tn_safetensors_save / tn_safetensors_serialize
 * / tn_checkpoint_save write (every dtype, 0-d, empty and 8-dim tensors, metadata, the
 * checkpoint harness's own model with Adam, SGD and no optimizer state); IDX and CSV seeds
 * are written here from tensors the library made (the library reads these formats but
 * does not write them): every IDX element type, 0 to 3 dims, empty, gzip; CSV with and
 * without a header, labels by index and by name, tabs, quotes, blank lines, CRLF; option
 * seeds are valid option texts for every target of fuzz_options.c (its table decides the
 * first byte). Nothing here is a committed binary blob: change the library's writers and
 * the seeds follow.
 *
 * tests/test_fuzz_harness.c includes this file (FUZZ_SEEDS_NO_MAIN) to replay the seeds
 * through the harnesses in `make test`. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <sys/stat.h>
#include <zlib.h>
#define FUZZ_NO_MAIN
#define FUZZ_ENTRY fuzz_options_one
#include "fuzz_options.c"   /* its target table: the seeds' first bytes */
#undef FUZZ_ENTRY

typedef void (*fuzz_emit_fn)(const char *harness, const char *name, const void *data, size_t n, void *user);

static void seeds_fail(const char *what) {
    fprintf(stderr, "seeds: %s: %s\n", what, tn_last_error());
    exit(1);
}

/* the bytes of a file (malloc'd), or exit */
static unsigned char *seeds_slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) seeds_fail(path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc((size_t)len + 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) seeds_fail(path);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void seeds_emit_dict(fuzz_emit_fn emit, void *user, const char *name, const tn_dict *d) {
    size_t n;
    char *b = tn_safetensors_serialize(d, &n);
    if (!b) seeds_fail(name);
    emit("safetensors_buffer", name, b, n, user);
    emit("safetensors_file", name, b, n, user);
    tn_string_free(b);
}

static void seeds_safetensors(fuzz_emit_fn emit, void *user) {
    tn_scope_begin();
    tn_manual_seed(11);
    tn_dict *d = tn_dict_new();
    tn_dict_set(d, "f32", tn_randn(TN_SHAPE(2, 3), TN_F32));
    tn_dict_set(d, "f64", tn_randn(TN_SHAPE(3), TN_F64));
    tn_dict_set(d, "i32", tn_randint(-5, 5, TN_SHAPE(2, 2), TN_I32, NULL));
    tn_dict_set(d, "i64", tn_scalar_tensor(-7, TN_I64));
    tn_dict_set(d, "u8", tn_randint(0, 255, TN_SHAPE(4), TN_U8, NULL));
    tn_dict_set(d, "mask", tn_to_dtype(tn_randint(0, 2, TN_SHAPE(3), TN_I64, NULL), TN_BOOL));
    tn_dict_set_meta(d, "format", "pt");
    seeds_emit_dict(emit, user, "dtypes", d);
    tn_dict_free(d);

    d = tn_dict_new();
    seeds_emit_dict(emit, user, "empty_dict", d);
    tn_dict_set_meta(d, "note", "metadata only, \"quoted\" \\ and \xc3\xa9");
    seeds_emit_dict(emit, user, "meta_only", d);
    tn_dict_free(d);

    d = tn_dict_new();
    tn_dict_set(d, "empty_rows", tn_zeros(TN_SHAPE(0, 3), TN_F32));
    tn_dict_set(d, "empty_cols", tn_zeros(TN_SHAPE(1, 0), TN_I64));
    tn_dict_set(d, "eight_dims", tn_ones(TN_SHAPE(1, 2, 1, 2, 1, 2, 1, 2), TN_F64));
    tn_dict_set(d, "scalar", tn_scalar_tensor(0.5, TN_F32));
    tn_dict_set(d, "a name with spaces and \xe2\x82\xac", tn_ones(TN_SHAPE(2), TN_U8));
    seeds_emit_dict(emit, user, "shapes", d);
    tn_dict_free(d);

    tn_module *m = fuzz_ckpt_model(2, 3);
    d = tn_module_state_dict(m);
    seeds_emit_dict(emit, user, "state_dict", d);
    /* and once through the file writer (temporary file renamed into place) */
    char path[512];
    fuzz_tmp_path("seed.safetensors", path, sizeof path);
    if (tn_safetensors_save(path, d)) seeds_fail("tn_safetensors_save");
    size_t n;
    unsigned char *b = seeds_slurp(path, &n);
    emit("safetensors_buffer", "saved_file", b, n, user);
    emit("safetensors_file", "saved_file", b, n, user);
    free(b);
    unlink(path);
    tn_dict_free(d);
    tn_module_free(m);
    tn_scope_end();
}

static void seeds_checkpoint(fuzz_emit_fn emit, void *user) {
    static const struct { const char *name, *kind, *opts; int steps; int64_t hidden; } cases[] = {
        {"adam_2_steps", "Adam", "lr=0.01", 2, 4},             /* the harness's own setup: loads */
        {"adam_no_state", "Adam", "lr=0.01", 0, 4},            /* no state yet */
        {"adam_amsgrad", "Adam", "lr=0.01, amsgrad=True", 1, 4},
        {"sgd_momentum", "SGD", "lr=0.1, momentum=0.9", 2, 4},
        {"adam_hidden_8", "Adam", "lr=0.01", 1, 8},            /* shapes differ */
        {"no_optimizer", NULL, NULL, 1, 4},
        {"lbfgs", "LBFGS", "lr=1, max_iter=3, history_size=3", 2, 4},
        {"rmsprop", "RMSprop", "lr=0.01, momentum=0.5, centered=True", 2, 4},
        {"sgd_no_momentum", "SGD", "lr=0.1", 1, 4},            /* no momentum buffers: the harness's SGD has them */
    };
    char path[512];
    fuzz_tmp_path("seed_ck.safetensors", path, sizeof path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tn_module *m = fuzz_ckpt_model(5 + i, cases[i].hidden);
        tn_optim *o = fuzz_ckpt_optim(m, cases[i].kind ? cases[i].kind : "SGD", cases[i].opts ? cases[i].opts : "lr=0.1");
        if (!m || !o || fuzz_ckpt_train(m, o, cases[i].steps)) seeds_fail(cases[i].name);
        if (tn_checkpoint_save(path, m, cases[i].kind ? o : NULL, 10 * (int64_t)i + 3)) seeds_fail(cases[i].name);
        size_t n;
        unsigned char *b = seeds_slurp(path, &n);
        emit("checkpoint", cases[i].name, b, n, user);
        if (i == 0) { emit("safetensors_buffer", "checkpoint", b, n, user); emit("safetensors_file", "checkpoint", b, n, user); }
        free(b);
        tn_optim_free(o);
        tn_module_free(m);
    }
    /* near misses: the harness's own checkpoint with entries in other dtypes (a load casts
       what it can; F16 and BF16 it cannot, and one such entry late in the file must not
       leave the entries before it loaded) */
    static const struct { const char *name, *key; tn_dtype dtype; } recast[] = {
        {"model_f64", "model.", TN_F64},                 /* every model entry */
        {"last_bias_f16", "model.3.bias", TN_F16},
        {"bn_var_bf16", "model.1.running_var", TN_BF16},
        {"exp_avg_f16", "optim.state.3.exp_avg", TN_F16},
        {"exp_avg_i64", "optim.state.0.exp_avg", TN_I64},
        {"nbt_f32", "model.1.num_batches_tracked", TN_F32},
        {"step_u8", "optim.state.1.step", TN_U8},
        {"lr_bool", "optim.param_groups.0.lr", TN_BOOL},
        {"step_f64", "step", TN_F64},
    };
    tn_module *m = fuzz_ckpt_model(5, 4);
    tn_optim *o = fuzz_ckpt_optim(m, "Adam", "lr=0.01");
    if (!m || !o || fuzz_ckpt_train(m, o, 2) || tn_checkpoint_save(path, m, o, 2)) seeds_fail("recast checkpoint");
    for (size_t i = 0; i < sizeof recast / sizeof recast[0]; i++) {
        tn_dict *d = tn_safetensors_load(path);
        if (!d) seeds_fail(recast[i].name);
        tn_scope_begin();
        for (int k = 0; k < tn_dict_len(d); k++) {
            const char *key = tn_dict_key(d, k);
            if (strncmp(key, recast[i].key, strlen(recast[i].key))) continue;
            tn_tensor *t = tn_dict_value(d, k), *c;
            if (recast[i].dtype == TN_F16 || recast[i].dtype == TN_BF16) {
                /* no conversion to half on the CPU: the top 16 bits of each float32 (bfloat16's
                   encoding; as float16 bits, some other numbers) */
                tn_tensor *f = tn_contiguous(tn_to_dtype(t, TN_F32));
                int64_t n = tn_numel(f);
                uint16_t *h = (uint16_t *)malloc((size_t)(n ? n : 1) * 2);
                for (int64_t j = 0; j < n; j++) { uint32_t u; memcpy(&u, (const float *)tn_data_ptr(f) + j, 4); h[j] = (uint16_t)(u >> 16); }
                c = tn_from_data(h, tn_shape(t), tn_ndim(t), recast[i].dtype);
                free(h);
            } else c = tn_to_dtype(t, recast[i].dtype);
            if (!c || tn_dict_set(d, key, c)) seeds_fail(recast[i].name);
        }
        size_t n;
        char *b = tn_safetensors_serialize(d, &n);
        if (!b) seeds_fail(recast[i].name);
        emit("checkpoint", recast[i].name, b, n, user);
        tn_string_free(b);
        tn_scope_end();
        tn_dict_free(d);
    }
    /* a step past int64 (tn_checkpoint_load converts it) */
    {
        tn_dict *d = tn_safetensors_load(path);
        tn_tensor *big = tn_scalar_tensor(1e300, TN_F64);
        size_t n;
        char *b = d && big && !tn_dict_set(d, "step", big) ? tn_safetensors_serialize(d, &n) : NULL;
        if (!b) seeds_fail("step_1e300");
        emit("checkpoint", "step_1e300", b, n, user);
        tn_string_free(b);
        tn_release(big);
        tn_dict_free(d);
    }
    tn_optim_free(o);
    tn_module_free(m);
    unlink(path);
}

/* IDX: 00 00 <type> <ndim>, big-endian u32 dims, big-endian elements (of t's values) */
static size_t seeds_idx_bytes(unsigned char *out, size_t cap, int type, tn_tensor *t) {
    static const int size_of[16] = {[0x08] = 1, [0x09] = 1, [0x0B] = 2, [0x0C] = 4, [0x0D] = 4, [0x0E] = 8};
    int es = size_of[type], nd = tn_ndim(t);
    size_t n = 0;
    unsigned char *p = out;
    p[0] = 0; p[1] = 0; p[2] = (unsigned char)type; p[3] = (unsigned char)nd;
    n = 4;
    for (int d = 0; d < nd; d++, n += 4)
        for (int k = 0; k < 4; k++) p[n + k] = (unsigned char)((uint64_t)tn_shape(t)[d] >> (24 - 8 * k));
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, type >= 0x0D ? TN_F64 : TN_I64));
    for (int64_t i = 0; i < tn_numel(t) && n + (size_t)es <= cap; i++, n += (size_t)es) {
        uint64_t u;
        if (type == 0x0D) { float f = (float)((double *)tn_data_ptr(c))[i]; uint32_t v; memcpy(&v, &f, 4); u = v; }
        else if (type == 0x0E) memcpy(&u, (double *)tn_data_ptr(c) + i, 8);
        else u = (uint64_t)((int64_t *)tn_data_ptr(c))[i];
        for (int k = 0; k < es; k++) p[n + k] = (unsigned char)(u >> (8 * (es - 1 - k)));
    }
    return n;
}
static void seeds_idx(fuzz_emit_fn emit, void *user) {
    tn_scope_begin();
    tn_manual_seed(13);
    static unsigned char buf[1 << 16];
    const struct { const char *name; int type; tn_tensor *t; } cases[] = {
        {"u8_images", 0x08, tn_randint(0, 256, TN_SHAPE(3, 4, 4), TN_I64, NULL)},
        {"u8_labels", 0x08, tn_randint(0, 10, TN_SHAPE(6), TN_I64, NULL)},
        {"i8", 0x09, tn_randint(-128, 128, TN_SHAPE(5), TN_I64, NULL)},
        {"i16", 0x0B, tn_randint(-30000, 30000, TN_SHAPE(2, 3), TN_I64, NULL)},
        {"i32", 0x0C, tn_randint(-100000, 100000, TN_SHAPE(4), TN_I64, NULL)},
        {"f32", 0x0D, tn_randn(TN_SHAPE(2, 2), TN_F64)},
        {"f64", 0x0E, tn_randn(TN_SHAPE(3), TN_F64)},
        {"scalar", 0x0C, tn_scalar_tensor(42, TN_I64)},
        {"empty", 0x08, tn_zeros(TN_SHAPE(0, 28), TN_I64)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!cases[i].t) seeds_fail(cases[i].name);
        size_t n = seeds_idx_bytes(buf, sizeof buf, cases[i].type, cases[i].t);
        emit("idx", cases[i].name, buf, n, user);
        emit("idx_gz", cases[i].name, buf, n, user);
        if (i < 3) { /* gzip files for the plain harness: damaged streams through zlib */
            static unsigned char gz[1 << 16];
            char gzname[64];
            z_stream z;
            memset(&z, 0, sizeof z);
            if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) seeds_fail("zlib");
            z.next_in = buf; z.avail_in = (uInt)n; z.next_out = gz; z.avail_out = sizeof gz;
            if (deflate(&z, Z_FINISH) != Z_STREAM_END) seeds_fail("zlib");
            snprintf(gzname, sizeof gzname, "%s.gz", cases[i].name);
            emit("idx", gzname, gz, sizeof gz - z.avail_out, user);
            deflateEnd(&z);
        }
    }
    tn_scope_end();
}

/* CSV: "<options>\0<file>" (fuzz_csv.c), the numbers from a tensor */
static void seeds_csv_one(fuzz_emit_fn emit, void *user, const char *name, const char *opts, const char *text) {
    static char buf[1 << 14];
    size_t ol = opts ? strlen(opts) + 1 : 0, tl = strlen(text);
    if (opts) memcpy(buf, opts, ol);
    memcpy(buf + ol, text, tl);
    emit("csv", name, buf, ol + tl, user);
}
static void seeds_csv(fuzz_emit_fn emit, void *user) {
    tn_scope_begin();
    tn_manual_seed(17);
    tn_tensor *x = tn_contiguous(tn_to_dtype(tn_randn(TN_SHAPE(4, 3), TN_F32), TN_F64));
    tn_tensor *y = tn_contiguous(tn_randint(0, 3, TN_SHAPE(4), TN_I64, NULL));
    const double *xv = (const double *)tn_data_ptr(x);
    const int64_t *yv = (const int64_t *)tn_data_ptr(y);
    char plain[2048], tabbed[2048], quoted[2048];
    size_t a = 0, b = 0, c = 0;
    a += (size_t)snprintf(plain + a, sizeof plain - a, "f0,f1,f2,label\n");
    b += (size_t)snprintf(tabbed + b, sizeof tabbed - b, "label\tf0\tf1\tf2\r\n");
    c += (size_t)snprintf(quoted + c, sizeof quoted - c, "\"f 0\",\"f,1\",\"f\"\"2\",\"label\"\n");
    for (int r = 0; r < 4; r++) {
        a += (size_t)snprintf(plain + a, sizeof plain - a, "%.9g,%.9g,%.9g,%lld\n", xv[3 * r], xv[3 * r + 1], xv[3 * r + 2], (long long)yv[r]);
        b += (size_t)snprintf(tabbed + b, sizeof tabbed - b, "%lld\t%.17g\t%.17g\t%.17g\r\n%s", (long long)yv[r], xv[3 * r], xv[3 * r + 1], xv[3 * r + 2], r == 1 ? "\r\n" : "");
        c += (size_t)snprintf(quoted + c, sizeof quoted - c, " \"%.6g\" , %.6g ,\"%g\",%lld\n", xv[3 * r], xv[3 * r + 1], xv[3 * r + 2], (long long)yv[r]);
    }
    seeds_csv_one(emit, user, "defaults", NULL, plain);
    seeds_csv_one(emit, user, "label_name", "label_name='label'", plain);
    seeds_csv_one(emit, user, "label_last_f64", "label_column=-1, dtype=float64", plain);
    seeds_csv_one(emit, user, "tabs", "delimiter='\\t', label_column=0", tabbed);
    seeds_csv_one(emit, user, "quoted", "header=True, delimiter=',', label_column=3", quoted);
    seeds_csv_one(emit, user, "no_header", "header=False", plain + strlen("f0,f1,f2,label\n"));
    seeds_csv_one(emit, user, "semicolons", "delimiter=';', header=False", "1;2;3\n\n4;5;6\n   \n7;8;9");
    tn_scope_end();
}

static void seeds_options(fuzz_emit_fn emit, void *user) {
    static const struct { const char *target, *text; } cases[] = {
        {"conv1d", "stride=2, padding=1, dilation=1, groups=2, bias=False"},
        {"conv1d", "padding='same', padding_mode='zeros'"},
        {"conv2d", "stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=1, bias=True, padding_mode='zeros'"},
        {"conv2d", "padding='valid'"},
        {"conv2d", "padding='same', dilation=2"},
        {"conv_transpose2d", "stride=2, padding=1, output_padding=1, groups=2"},
        {"conv_transpose2d", "stride=(2, 3), output_padding=(1, 2), dilation=1"},
        {"max_pool2d", "stride=1, padding=1, dilation=2, ceil_mode=True"},
        {"avg_pool2d", "stride=2, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=3"},
        {"max_pool1d", "stride=2, ceil_mode=False"},
        {"avg_pool1d", "stride=1, padding=1, count_include_pad=True"},
        {"batch_norm1d", "eps=1e-3, momentum=0.2, affine=False, track_running_stats=True"},
        {"batch_norm2d", "momentum=None, affine=True"},
        {"batch_norm2d", "track_running_stats=False"},
        {"layer_norm", "eps=1e-6, elementwise_affine=True, bias=False"},
        {"group_norm", "eps=1e-5, affine=False"},
        {"embedding", "padding_idx=0"},
        {"embedding", "padding_idx=-1"},
        {"activation", "LeakyReLU;negative_slope=0.2, inplace=False"},
        {"activation", "GELU;approximate='tanh'"},
        {"activation", "Softmax;dim=1"},
        {"activation", "Hardtanh;min_val=-2.0, max_val=2.0"},
        {"activation", "Softplus;beta=2, threshold=10"},
        {"rnn", "num_layers=2, nonlinearity='relu', bias=True, batch_first=False, dropout=0.5, bidirectional=True"},
        {"lstm", "num_layers=2, proj_size=2, batch_first=True"},
        {"gru", "num_layers=1, bidirectional=True, bias=False"},
        {"rnn_cell", "bias=True, nonlinearity='tanh'"},
        {"lstm_cell", "bias=False"},
        {"gru_cell", "bias=True"},
        {"multihead_attention", "dropout=0.1, bias=True, add_bias_kv=True, add_zero_attn=True, kdim=4, vdim=4, batch_first=False"},
        {"multihead_attention", "kdim=3, vdim=5, batch_first=True"},
        {"transformer_encoder_layer", "dim_feedforward=8, dropout=0.1, activation='gelu', layer_norm_eps=1e-5, batch_first=True, norm_first=True, bias=True"},
        {"transformer_decoder_layer", "dim_feedforward=6, dropout=0.0, activation='relu', norm_first=False"},
        {"optim_create", "SGD;lr=0.1, momentum=0.9, dampening=0, weight_decay=1e-4, nesterov=True, maximize=False"},
        {"optim_create", "Adam;lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=True"},
        {"optim_create", "AdamW;lr=1e-3, weight_decay=0.01"},
        {"optim_create", "RMSprop;lr=0.01, alpha=0.99, eps=1e-8, momentum=0.5, centered=True"},
        {"optim_create", "Adagrad;lr=0.01, lr_decay=0.1, initial_accumulator_value=0.1"},
        {"optim_create", "Adadelta;lr=1.0, rho=0.9"},
        {"optim_create", "Adamax;lr=0.002"},
        {"optim_create", "NAdam;lr=0.002, momentum_decay=0.004, decoupled_weight_decay=True"},
        {"optim_create", "RAdam;lr=0.001, decoupled_weight_decay=False"},
        {"optim_create", "LBFGS;lr=1, max_iter=5, history_size=3, line_search_fn='strong_wolfe'"},
        {"optim_add_param_group", "lr=0.5, momentum=0.0, nesterov=False"},
        {"lr_scheduler_create", "StepLR;step_size=2, gamma=0.5"},
        {"lr_scheduler_create", "MultiStepLR;milestones=(1, 3), gamma=0.1"},
        {"lr_scheduler_create", "ExponentialLR;gamma=0.9"},
        {"lr_scheduler_create", "CosineAnnealingLR;T_max=4, eta_min=0.001"},
        {"lr_scheduler_create", "CosineAnnealingWarmRestarts;T_0=2, T_mult=2"},
        {"lr_scheduler_create", "LinearLR;start_factor=0.5, total_iters=3"},
        {"lr_scheduler_create", "ConstantLR;factor=0.5, total_iters=2"},
        {"lr_scheduler_create", "PolynomialLR;total_iters=4, power=2.0"},
        {"lr_scheduler_create", "OneCycleLR;max_lr=0.1, total_steps=10, anneal_strategy='linear', cycle_momentum=True"},
        {"lr_scheduler_create", "ReduceLROnPlateau;mode='max', patience=1, factor=0.5, threshold=1e-4, cooldown=1"},
        {"loader_new", "batch_size=3, shuffle=True, drop_last=True, seed=5"},
        {"loader_new", "batch_size=None"},
        {"loader_new", "batch_size=4, num_workers=2, prefetch_factor=3, seed=1"},
        {"loader_new", ""},
    };
    unsigned char buf[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int t = fuzz_options_target(cases[i].target);
        if (t < 0) seeds_fail(cases[i].target);
        size_t n = strlen(cases[i].text);
        buf[0] = (unsigned char)t;
        memcpy(buf + 1, cases[i].text, n);
        char name[80];
        snprintf(name, sizeof name, "%s_%zu", cases[i].target, i);
        emit("options", name, buf, n + 1, user);
    }
}

/* ONNX models tn_onnx_export writes: an MLP, a small CNN with batch norm (dynamic batch) */
static void seeds_onnx(fuzz_emit_fn emit, void *user) {
    tn_scope_begin();
    tn_manual_seed(13);
    tn_module *ms[3] = {tn_nn_sequential(tn_nn_linear(4, 8), tn_nn_gelu(), tn_nn_linear(8, 3), tn_nn_activation("Softmax", .dim = 1)),
                        tn_nn_sequential(tn_nn_conv2d(1, 2, 3, .padding = 1), tn_nn_batch_norm2d(2), tn_nn_relu(), tn_nn_max_pool2d(2),
                                         tn_nn_flatten(), tn_nn_linear(2 * 2 * 2, 2)),
                        tn_nn_transformer_encoder_layer(8, 2, .dim_feedforward = 8, .batch_first = true)};
    const int64_t shapes[3][4] = {{2, 4}, {2, 1, 4, 4}, {2, 3, 8}};
    const int nds[3] = {2, 4, 3};
    const char *names[3] = {"mlp", "cnn_dynamic_batch", "encoder_layer"};
    char path[256];
    fuzz_tmp_path("seed.onnx", path, sizeof path);
    for (int i = 0; i < 3; i++) {
        tn_module_eval(ms[i]);
        tn_graph *g = tn_jit_trace_module(ms[i], tn_randn(shapes[i], nds[i], TN_F32));
        if (!g || (i == 1 && tn_graph_set_dynamic(g, 0, 0)) || tn_onnx_export(g, path)) seeds_fail(names[i]);
        size_t n;
        unsigned char *b = seeds_slurp(path, &n);
        emit("onnx", names[i], b, n, user);
        free(b);
        tn_graph_free(g);
        tn_module_free(ms[i]);
    }
    unlink(path);
    tn_scope_end();
}

static void fuzz_make_seeds(fuzz_emit_fn emit, void *user) {
    seeds_safetensors(emit, user);
    seeds_checkpoint(emit, user);
    seeds_idx(emit, user);
    seeds_csv(emit, user);
    seeds_options(emit, user);
    seeds_onnx(emit, user);
}

#ifndef FUZZ_SEEDS_NO_MAIN
static void seeds_write(const char *harness, const char *name, const void *data, size_t n, void *user) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", (const char *)user, harness);
    if (mkdir(path, 0777) && errno != EEXIST) { perror(path); exit(1); }
    snprintf(path, sizeof path, "%s/%s/%s", (const char *)user, harness, name);
    if (fuzz_write_file(path, data, n)) { perror(path); exit(1); }
}
int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
    if (mkdir(argv[1], 0777) && errno != EEXIST) { perror(argv[1]); return 1; }
    fuzz_make_seeds(seeds_write, argv[1]);
    return 0;
}
#endif
