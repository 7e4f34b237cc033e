/* ---- more layers: 3-d convolution and pooling, LP pooling, unpooling, LRN, shuffles,
   padding layers, PReLU, Threshold (their functional ops are in src/nn) ---- */
/* "2" for an int option given as one value, "(2, 1, 1)" for a tuple, as PyTorch keeps them. */
static const char *tn__int_or_tuple(int64_t v, const tn_ints *l, char *buf) {
    if (l->n) return tn__pytuple(l->v, l->n, buf);
    snprintf(buf, 64, "%lld", (long long)v);
    return buf;
}

/* Conv3d, ConvTranspose3d */
typedef struct tn__conv3dm { tn_module base; bool transposed, same; int mode; int64_t in, out, k[3], s[3], p[3], d[3], op[3], groups; } tn__conv3dm;
static tn_tensor *tn__conv3d_mod_fwd(tn_module *m, tn_tensor *x) {
    tn__conv3dm *c = (tn__conv3dm *)m;
    tn_tensor *w = tn_module_get(m, "weight"), *b = tn_module_get(m, "bias");
    int64_t p[3] = {c->same ? TN_PADDING_SAME : c->p[0], c->p[1], c->p[2]};
    if (c->mode == TN_PADDING_ZEROS) return TN__AS(m->type->name, tn__conv3d("tn_conv3d", x, w, b, c->transposed, c->s, p, c->d, c->transposed ? c->op : NULL, c->groups));
    int64_t pads[6];
    tn__conv_mode_pads(3, c->same, c->k, c->p, c->d, pads);
    tn_scope_begin();
    tn_tensor *xp = x ? tn_pad(x, pads, 6, .mode = c->mode) : NULL;
    const int64_t zero[3] = {0, 0, 0};
    return tn__scope_return(TN__AS(m->type->name, xp ? tn__conv3d("tn_conv3d", xp, w, b, false, c->s, zero, c->d, NULL, c->groups) : NULL));
}
static void tn__conv3d_mod_repr(tn_module *m, char *b, size_t n) {
    tn__conv3dm *c = (tn__conv3dm *)m;
    char t[64];
    int k = snprintf(b, n, "%lld, %lld, kernel_size=%s", (long long)c->in, (long long)c->out, tn__pytuple(c->k, 3, t));
    k += snprintf(b + k, n - (size_t)k, ", stride=%s", tn__pytuple(c->s, 3, t));
    if (c->same) k += snprintf(b + k, n - (size_t)k, ", padding=same");
    else if (c->p[0] || c->p[1] || c->p[2]) k += snprintf(b + k, n - (size_t)k, ", padding=%s", tn__pytuple(c->p, 3, t));
    if (c->d[0] != 1 || c->d[1] != 1 || c->d[2] != 1) k += snprintf(b + k, n - (size_t)k, ", dilation=%s", tn__pytuple(c->d, 3, t));
    if (c->transposed && (c->op[0] || c->op[1] || c->op[2])) k += snprintf(b + k, n - (size_t)k, ", output_padding=%s", tn__pytuple(c->op, 3, t));
    if (c->groups != 1) k += snprintf(b + k, n - (size_t)k, ", groups=%lld", (long long)c->groups);
    if (!tn_module_get(m, "bias")) k += snprintf(b + k, n - (size_t)k, ", bias=False");
    if (c->mode != TN_PADDING_ZEROS) snprintf(b + k, n - (size_t)k, ", padding_mode=%s", tn__padding_mode_names[c->mode]);
}
static const tn_module_type tn__conv3d_type = {"Conv3d", tn__conv3d_mod_fwd, NULL, tn__conv3d_mod_repr};
static const tn_module_type tn__convt3d_type = {"ConvTranspose3d", tn__conv3d_mod_fwd, NULL, tn__conv3d_mod_repr};
static tn_module *tn__conv3d_new(const char *fn, bool transposed, int64_t in, int64_t out, int64_t ksize, tn_conv3d_layer_opts o) {
    int64_t k[3], st[3], pd[3], dl[3], op[3];
    const bool same = o.padding == TN_PADDING_SAME, valid = o.padding == TN_PADDING_VALID;
    if (tn__kw_triple(fn, "kernel_size", ksize, &o.kernel_size_dhw, k) || tn__kw_triple(fn, "stride", o.stride, &o.stride_dhw, st) ||
        tn__kw_triple(fn, "padding", same || valid ? 0 : o.padding, &o.padding_dhw, pd) || tn__kw_triple(fn, "dilation", o.dilation, &o.dilation_dhw, dl) ||
        tn__kw_triple(fn, "output_padding", o.output_padding, &o.output_padding_dhw, op))
        return NULL;
    if (o.padding_mode < 0 || o.padding_mode > TN_PADDING_CIRCULAR) return (tn_module *)tn__error("%s: padding_mode %d is not one of TN_PADDING_ZEROS ... TN_PADDING_CIRCULAR", fn, o.padding_mode);
    if (transposed && o.padding_mode != TN_PADDING_ZEROS) return (tn_module *)tn__error("%s: Only \"zeros\" padding mode is supported for ConvTranspose3d", fn);
    if (!transposed && (op[0] || op[1] || op[2])) return (tn_module *)tn__error("%s: output_padding is an option of the transposed convolution only", fn);
    if (transposed && (same || valid)) return (tn_module *)tn__error("%s: only numeric padding is supported for ConvTranspose3d", fn);
    if (in <= 0 || out <= 0 || o.groups <= 0 || in % o.groups || out % o.groups)
        return (tn_module *)tn__error("%s: in_channels (%lld) and out_channels (%lld) must be positive and divisible by groups (%lld)", fn, (long long)in, (long long)out, (long long)o.groups);
    for (int i = 0; i < 3; i++) {
        if (k[i] <= 0 || st[i] <= 0 || dl[i] <= 0 || pd[i] < 0 || op[i] < 0)
            return (tn_module *)tn__error("%s: kernel_size, stride and dilation must be positive and padding non-negative", fn);
        if (same && st[i] != 1) return (tn_module *)tn__error("%s: padding='same' is not supported for strided convolutions", fn);
    }
    tn__conv3dm *c = (tn__conv3dm *)tn_module_new(transposed ? &tn__convt3d_type : &tn__conv3d_type, sizeof(tn__conv3dm));
    if (!c) return NULL;
    c->transposed = transposed; c->same = same; c->mode = o.padding_mode; c->in = in; c->out = out; c->groups = o.groups;
    for (int i = 0; i < 3; i++) { c->k[i] = k[i]; c->s[i] = st[i]; c->p[i] = pd[i]; c->d[i] = dl[i]; c->op[i] = op[i]; }
    const int64_t shape[5] = {transposed ? in : out, transposed ? out / o.groups : in / o.groups, k[0], k[1], k[2]};
    tn_tensor *w = tn__param(&c->base, "weight", shape, 5), *b = o.bias ? tn__param(&c->base, "bias", TN_SHAPE(out)) : NULL;
    const double fan_in = w ? (double)tn_numel(w) / (double)w->shape[0] : 0, bound = fan_in > 0 ? 1 / sqrt(fan_in) : 0;
    const bool failed = !w || (o.bias && !b) || tn_init_uniform_(w, .a = -bound, .b = bound) || (b && tn_init_uniform_(b, .a = -bound, .b = bound));
    return tn__module_or_free(&c->base, failed);
}
TNDEF tn_module *tn_nn_conv3d_opts(int64_t in, int64_t out, int64_t k, tn_conv3d_layer_opts o) { return tn__conv3d_new("tn_nn_conv3d", false, in, out, k, o); }
TNDEF tn_module *tn_nn_conv_transpose3d_opts(int64_t in, int64_t out, int64_t k, tn_conv3d_layer_opts o) { return tn__conv3d_new("tn_nn_conv_transpose3d", true, in, out, k, o); }
TNDEF tn_module *tn_nn_conv3d_str(int64_t in, int64_t out, int64_t k, const char *options) {
    TN__KW_STR(tn_conv3d_layer_opts, conv3d, "tn_nn_conv3d", options, tn_nn_conv3d_opts(in, out, k, o));
}
TNDEF tn_module *tn_nn_conv_transpose3d_str(int64_t in, int64_t out, int64_t k, const char *options) {
    TN__KW_STR(tn_conv3d_layer_opts, conv3d, "tn_nn_conv_transpose3d", options, tn_nn_conv_transpose3d_opts(in, out, k, o));
}

/* MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, LPPool1d/2d */
typedef struct tn__pool3dm { tn_module base; int kind; int64_t ksize, out[3]; double norm_type; tn_pool3d_opts o; tn_pool_opts o2; } tn__pool3dm;
static tn_tensor *tn__pool3d_mod_fwd(tn_module *m, tn_tensor *x) {
    tn__pool3dm *q = (tn__pool3dm *)m;
    switch (q->kind) {
    case 0: return TN__AS(m->type->name, tn_max_pool3d_opts(x, NULL, q->ksize, q->o));
    case 1: return TN__AS(m->type->name, tn_avg_pool3d_opts(x, q->ksize, q->o));
    case 2: return TN__AS(m->type->name, tn_adaptive_avg_pool3d(x, q->out[0], q->out[1], q->out[2]));
    case 3: return TN__AS(m->type->name, tn_adaptive_max_pool3d(x, q->out[0], q->out[1], q->out[2], NULL));
    case 4: return TN__AS(m->type->name, tn_lp_pool1d_opts(x, q->norm_type, q->ksize, q->o2));
    default: return TN__AS(m->type->name, tn_lp_pool2d_opts(x, q->norm_type, q->ksize, q->o2));
    }
}
static void tn__pool3d_mod_repr(tn_module *m, char *b, size_t n) {
    tn__pool3dm *q = (tn__pool3dm *)m;
    char t1[64], t2[64], t3[64], t4[64];
    const tn_pool3d_opts *o = &q->o;
    if (q->kind == 2 || q->kind == 3) {
        if (q->out[0] == q->out[1] && q->out[1] == q->out[2]) snprintf(b, n, "output_size=%lld", (long long)q->out[0]);
        else snprintf(b, n, "output_size=%s", tn__pytuple(q->out, 3, t1));
        return;
    }
    if (q->kind >= 4) {
        const tn_pool_opts *p = &q->o2;
        const bool pair = p->kernel_size_hw[0] || p->kernel_size_hw[1];
        if (pair) tn__pytuple(p->kernel_size_hw, 2, t2);
        else snprintf(t2, 64, "%lld", (long long)q->ksize);
        if (p->stride_hw[0] || p->stride_hw[1]) tn__pytuple(p->stride_hw, 2, t3);
        else if (p->stride == TN_NONE) snprintf(t3, 64, "None");
        else snprintf(t3, 64, "%lld", (long long)p->stride);
        snprintf(b, n, "norm_type=%g, kernel_size=%s, stride=%s, ceil_mode=%s", q->norm_type, t2, t3, p->ceil_mode ? "True" : "False");
        return;
    }
    /* stride None becomes the kernel size, as PyTorch's constructors do */
    const char *k = tn__int_or_tuple(q->ksize, &o->kernel_size_dhw, t1);
    const char *s = o->stride == TN_NONE && !o->stride_dhw.n ? k : tn__int_or_tuple(o->stride, &o->stride_dhw, t2);
    int w = snprintf(b, n, "kernel_size=%s, stride=%s, padding=%s", k, s, tn__int_or_tuple(o->padding, &o->padding_dhw, t3));
    if (q->kind == 0) snprintf(b + w, n - (size_t)w, ", dilation=%s, ceil_mode=%s", tn__int_or_tuple(o->dilation, &o->dilation_dhw, t4), o->ceil_mode ? "True" : "False");
}
static const tn_module_type tn__maxpool3d_type = {"MaxPool3d", tn__pool3d_mod_fwd, NULL, tn__pool3d_mod_repr};
static const tn_module_type tn__avgpool3d_type = {"AvgPool3d", tn__pool3d_mod_fwd, NULL, tn__pool3d_mod_repr};
static const tn_module_type tn__adaptive_avg3d_type = {"AdaptiveAvgPool3d", tn__pool3d_mod_fwd, NULL, tn__pool3d_mod_repr};
static const tn_module_type tn__adaptive_max3d_type = {"AdaptiveMaxPool3d", tn__pool3d_mod_fwd, NULL, tn__pool3d_mod_repr};
static const tn_module_type tn__lppool1d_type = {"LPPool1d", tn__pool3d_mod_fwd, NULL, tn__pool3d_mod_repr};
static const tn_module_type tn__lppool2d_type = {"LPPool2d", tn__pool3d_mod_fwd, NULL, tn__pool3d_mod_repr};
static tn_module *tn__pool3d_new(const char *fn, const tn_module_type *type, int kind, int64_t ksize, tn_pool3d_opts o) {
    int64_t k[3], st[3], pd[3], dl[3], divisor;
    if (tn__pool3d_args(fn, kind == 0 ? "max_pool3d" : "avg_pool3d", kind == 0, ksize, &o, k, st, pd, dl, &divisor)) return NULL;
    if (kind == 0 && o.return_indices) return (tn_module *)tn__error("%s: return_indices: call tn_max_pool3d_with_indices instead", fn);
    tn__pool3dm *q = (tn__pool3dm *)tn_module_new(type, sizeof(tn__pool3dm));
    if (q) { q->kind = kind; q->ksize = ksize; q->o = o; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_max_pool3d_opts(int64_t k, tn_pool3d_opts o) { return tn__pool3d_new("tn_nn_max_pool3d", &tn__maxpool3d_type, 0, k, o); }
TNDEF tn_module *tn_nn_avg_pool3d_opts(int64_t k, tn_pool3d_opts o) { return tn__pool3d_new("tn_nn_avg_pool3d", &tn__avgpool3d_type, 1, k, o); }
TNDEF tn_module *tn_nn_max_pool3d_str(int64_t k, const char *options) {
    TN__KW_STR(tn_pool3d_opts, pool3d, "tn_nn_max_pool3d", options, tn_nn_max_pool3d_opts(k, o));
}
TNDEF tn_module *tn_nn_avg_pool3d_str(int64_t k, const char *options) {
    TN__KW_STR(tn_pool3d_opts, pool3d, "tn_nn_avg_pool3d", options, tn_nn_avg_pool3d_opts(k, o));
}
static tn_module *tn__adaptive3d_new(const tn_module_type *type, int kind, int64_t od, int64_t oh, int64_t ow) {
    if (od <= 0 || oh <= 0 || ow <= 0)
        return (tn_module *)tn__error("tn_nn_%s: output size (%lld, %lld, %lld) must be positive", kind == 2 ? "adaptive_avg_pool3d" : "adaptive_max_pool3d", (long long)od,
                                      (long long)oh, (long long)ow);
    tn__pool3dm *q = (tn__pool3dm *)tn_module_new(type, sizeof(tn__pool3dm));
    if (q) { q->kind = kind; q->out[0] = od; q->out[1] = oh; q->out[2] = ow; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_adaptive_avg_pool3d(int64_t od, int64_t oh, int64_t ow) { return tn__adaptive3d_new(&tn__adaptive_avg3d_type, 2, od, oh, ow); }
TNDEF tn_module *tn_nn_adaptive_max_pool3d(int64_t od, int64_t oh, int64_t ow) { return tn__adaptive3d_new(&tn__adaptive_max3d_type, 3, od, oh, ow); }
static tn_module *tn__lp_new(const char *fn, int nsp, double norm_type, int64_t ksize, tn_pool_opts o) {
    const tn_pool_opts def = TN_DEFAULTS(tn_pool_opts);
    if (tn__kw_only(fn, nsp == 1 ? "LPPool1d" : "LPPool2d", tn__kw_pool, TN__KW_N(tn__kw_pool), &o, &def, "kernel_size, stride, ceil_mode")) return NULL;
    if (ksize <= 0 && !o.kernel_size_hw[0]) return (tn_module *)tn__error("%s: kernel_size must be positive, got %lld", fn, (long long)ksize);
    tn__pool3dm *q = (tn__pool3dm *)tn_module_new(nsp == 1 ? &tn__lppool1d_type : &tn__lppool2d_type, sizeof(tn__pool3dm));
    if (q) { q->kind = 3 + nsp; q->ksize = ksize; q->norm_type = norm_type; q->o2 = o; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_lp_pool1d_opts(double norm_type, int64_t k, tn_pool_opts o) { return tn__lp_new("tn_nn_lp_pool1d", 1, norm_type, k, o); }
TNDEF tn_module *tn_nn_lp_pool2d_opts(double norm_type, int64_t k, tn_pool_opts o) { return tn__lp_new("tn_nn_lp_pool2d", 2, norm_type, k, o); }

/* MaxUnpool1d/2d/3d: the indices come with the input, so the forward is its own function;
   the single-input forward is an error that says so. */
typedef struct tn__unpoolm { tn_module base; int n; int64_t k, s, p; } tn__unpoolm;
static tn_tensor *tn__unpool_fwd(tn_module *m, tn_tensor *x) {
    (void)x;
    return (tn_tensor *)tn__error("%s: the forward needs the indices: call tn_nn_max_unpool_forward(m, x, indices)", m->type->name);
}
static void tn__unpool_repr(tn_module *m, char *b, size_t n) {
    tn__unpoolm *q = (tn__unpoolm *)m;
    char t1[64], t2[64], t3[64];
    const int64_t k[3] = {q->k, q->k, q->k}, s[3] = {q->s, q->s, q->s}, p[3] = {q->p, q->p, q->p};
    snprintf(b, n, "kernel_size=%s, stride=%s, padding=%s", tn__pytuple(k, q->n, t1), tn__pytuple(s, q->n, t2), tn__pytuple(p, q->n, t3));
}
static const tn_module_type tn__unpool_types[3] = {{"MaxUnpool1d", tn__unpool_fwd, NULL, tn__unpool_repr},
                                                   {"MaxUnpool2d", tn__unpool_fwd, NULL, tn__unpool_repr},
                                                   {"MaxUnpool3d", tn__unpool_fwd, NULL, tn__unpool_repr}};
TNDEF tn_module *tn_nn_max_unpool_opts(int n, int64_t kernel_size, tn_max_unpool_opts o) {
    if (n < 1 || n > 3) return (tn_module *)tn__error("tn_nn_max_unpool: n must be 1, 2 or 3 spatial dims, got %d", n);
    const int64_t stride = o.stride == TN_NONE ? kernel_size : o.stride;   /* None: kernel_size, as PyTorch */
    if (kernel_size <= 0 || stride <= 0 || o.padding < 0)
        return (tn_module *)tn__error("tn_nn_max_unpool: kernel_size and stride must be positive and padding non-negative (got %lld, %lld, %lld)",
                                      (long long)kernel_size, (long long)stride, (long long)o.padding);
    tn__unpoolm *q = (tn__unpoolm *)tn_module_new(&tn__unpool_types[n - 1], sizeof(tn__unpoolm));
    if (q) { q->n = n; q->k = kernel_size; q->s = stride; q->p = o.padding; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_max_unpool_str(int n, int64_t kernel_size, const char *options) {
    TN__KW_STR(tn_max_unpool_opts, max_unpool, "tn_nn_max_unpool", options, tn_nn_max_unpool_opts(n, kernel_size, o));
}
TNDEF tn_tensor *tn_nn_max_unpool_forward(tn_module *m, tn_tensor *x, tn_tensor *indices) {
    if (!m || m->type->forward != tn__unpool_fwd) return (tn_tensor *)tn__error("tn_nn_max_unpool_forward: m is not a MaxUnpool module");
    TN__CHECK_NULL(x);
    tn__unpoolm *q = (tn__unpoolm *)m;
    int64_t size[3];
    if (x->ndim < q->n + 1) return (tn_tensor *)tn__error("%s: expected a [N, C, *] or [C, *] input with %d spatial dims, got %s", m->type->name, q->n, TN__SHAPE(x));
    for (int i = 0; i < q->n; i++) {
        const int64_t in = x->shape[x->ndim - q->n + i];   /* (in - 1) * stride - 2 * padding + kernel_size */
        if (!tn__mul_ok(in > 0 ? in - 1 : 0, q->s, &size[i]) || !tn__add_ok(size[i], q->k - 2 * q->p, &size[i]))
            return (tn_tensor *)tn__error("%s: the output size overflows", m->type->name);
    }
    return TN__AS(m->type->name, tn_max_unpool(x, indices, size, q->n));
}

/* LocalResponseNorm, ChannelShuffle, PixelShuffle, PixelUnshuffle, Threshold */
typedef struct tn__shapem { tn_module base; int kind; int64_t v; double a, b, k; } tn__shapem;
static tn_tensor *tn__shapem_fwd(tn_module *m, tn_tensor *x) {
    tn__shapem *q = (tn__shapem *)m;
    switch (q->kind) {
    case 0: return TN__AS(m->type->name, tn_local_response_norm(x, q->v, .alpha = q->a, .beta = q->b, .k = q->k));
    case 1: return TN__AS(m->type->name, tn_channel_shuffle(x, q->v));
    case 2: return TN__AS(m->type->name, tn_pixel_shuffle(x, q->v));
    case 3: return TN__AS(m->type->name, tn_pixel_unshuffle(x, q->v));
    default: return TN__AS(m->type->name, tn_threshold(x, q->a, q->b));
    }
}
static void tn__shapem_repr(tn_module *m, char *b, size_t n) {
    tn__shapem *q = (tn__shapem *)m;
    char t1[32], t2[32], t3[32];
    switch (q->kind) {
    case 0: snprintf(b, n, "%lld, alpha=%s, beta=%s, k=%s", (long long)q->v, tn__pyfloat(q->a, t1), tn__pyfloat(q->b, t2), tn__pyfloat(q->k, t3)); break;
    case 1: snprintf(b, n, "groups=%lld", (long long)q->v); break;
    case 2: snprintf(b, n, "upscale_factor=%lld", (long long)q->v); break;
    case 3: snprintf(b, n, "downscale_factor=%lld", (long long)q->v); break;
    default: snprintf(b, n, "threshold=%s, value=%s", tn__pyfloat(q->a, t1), tn__pyfloat(q->b, t2)); break;
    }
}
static const tn_module_type tn__shapem_types[5] = {{"LocalResponseNorm", tn__shapem_fwd, NULL, tn__shapem_repr}, {"ChannelShuffle", tn__shapem_fwd, NULL, tn__shapem_repr},
                                                   {"PixelShuffle", tn__shapem_fwd, NULL, tn__shapem_repr}, {"PixelUnshuffle", tn__shapem_fwd, NULL, tn__shapem_repr},
                                                   {"Threshold", tn__shapem_fwd, NULL, tn__shapem_repr}};
static tn_module *tn__shapem_new(int kind, int64_t v, double a, double b, double k) {
    if (kind < 4 && v <= 0) return (tn_module *)tn__error("tn_nn_%s: the size must be positive, got %lld", tn__shapem_types[kind].name, (long long)v);
    tn__shapem *q = (tn__shapem *)tn_module_new(&tn__shapem_types[kind], sizeof(tn__shapem));
    if (q) { q->kind = kind; q->v = v; q->a = a; q->b = b; q->k = k; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_local_response_norm_opts(int64_t size, tn_lrn_opts o) { return tn__shapem_new(0, size, o.alpha, o.beta, o.k); }
TNDEF tn_module *tn_nn_channel_shuffle(int64_t groups) { return tn__shapem_new(1, groups, 0, 0, 0); }
TNDEF tn_module *tn_nn_pixel_shuffle(int64_t upscale_factor) { return tn__shapem_new(2, upscale_factor, 0, 0, 0); }
TNDEF tn_module *tn_nn_pixel_unshuffle(int64_t downscale_factor) { return tn__shapem_new(3, downscale_factor, 0, 0, 0); }
TNDEF tn_module *tn_nn_threshold(double threshold, double value) { return tn__shapem_new(4, 0, threshold, value, 0); }

/* Padding layers */
typedef struct tn__padm { tn_module base; int mode, n; bool zero; int64_t pad[6]; double value; } tn__padm;
static tn_tensor *tn__pad_mod_fwd(tn_module *m, tn_tensor *x) {
    tn__padm *q = (tn__padm *)m;
    if (q->mode == 0) return TN__AS(m->type->name, tn_pad(x, q->pad, 2 * q->n, .value = q->value));
    return TN__AS(m->type->name, tn_pad(x, q->pad, 2 * q->n, .mode = q->mode));
}
static void tn__pad_mod_repr(tn_module *m, char *b, size_t n) {
    tn__padm *q = (tn__padm *)m;
    char t[64], v[32];
    if (q->mode == 0 && !q->zero) snprintf(b, n, "padding=%s, value=%s", tn__pytuple(q->pad, 2 * q->n, t), tn__pyfloat(q->value, v));
    else snprintf(b, n, "%s", tn__pytuple(q->pad, 2 * q->n, t));
}
#define TN__PAD_TYPE(name) {name, tn__pad_mod_fwd, NULL, tn__pad_mod_repr}
static const tn_module_type tn__pad_types[15] = {
    TN__PAD_TYPE("ConstantPad1d"), TN__PAD_TYPE("ConstantPad2d"), TN__PAD_TYPE("ConstantPad3d"),
    TN__PAD_TYPE("ReflectionPad1d"), TN__PAD_TYPE("ReflectionPad2d"), TN__PAD_TYPE("ReflectionPad3d"),
    TN__PAD_TYPE("ReplicationPad1d"), TN__PAD_TYPE("ReplicationPad2d"), TN__PAD_TYPE("ReplicationPad3d"),
    TN__PAD_TYPE("CircularPad1d"), TN__PAD_TYPE("CircularPad2d"), TN__PAD_TYPE("CircularPad3d"),
    TN__PAD_TYPE("ZeroPad1d"), TN__PAD_TYPE("ZeroPad2d"), TN__PAD_TYPE("ZeroPad3d")};
TNDEF tn_module *tn_nn_pad_opts(const char *name, const int64_t *padding, int n, tn_pad_module_opts o) {
    const double value = o.value;
    const char *fn = "tn_nn_pad";
    int t = -1;
    for (int i = 0; name && i < 15; i++) if (!strcmp(name, tn__pad_types[i].name)) t = i;
    if (t < 0)
        return (tn_module *)tn__error("%s: unknown padding layer \"%s\" (ConstantPad, ReflectionPad, ReplicationPad, CircularPad, ZeroPad with 1d, 2d or 3d)", fn, name ? name : "(null)");
    const int dims = t % 3 + 1;
    if (!padding || (n != 1 && n != 2 * dims)) return (tn_module *)tn__error("%s: %s takes 1 or %d padding sizes, got %d", fn, name, 2 * dims, padding ? n : 0);
    if (t >= 3 && value != 0) return (tn_module *)tn__error("%s: value is not an option of %s (only ConstantPad's)", fn, name);   /* PyTorch's have no value */
    tn__padm *q = (tn__padm *)tn_module_new(&tn__pad_types[t], sizeof(tn__padm));
    if (!q) return NULL;
    q->n = dims; q->zero = t >= 12; q->mode = t >= 12 ? 0 : t / 3; q->value = t >= 12 ? 0 : value;
    for (int i = 0; i < 2 * dims; i++) q->pad[i] = padding[n == 1 ? 0 : i];
    return &q->base;
}
TNDEF tn_module *tn_nn_pad_str(const char *name, const int64_t *padding, int n, const char *options) {
    TN__KW_STR(tn_pad_module_opts, pad_module, "tn_nn_pad", options, tn_nn_pad_opts(name, padding, n, o));
}

/* PReLU */
typedef struct tn__preluM { tn_module base; int64_t num; double init; } tn__preluM;
static tn_tensor *tn__prelu_mod_fwd(tn_module *m, tn_tensor *x) { return TN__AS("PReLU", tn_prelu(x, tn_module_get(m, "weight"))); }
static void tn__prelu_mod_repr(tn_module *m, char *b, size_t n) { snprintf(b, n, "num_parameters=%lld", (long long)((tn__preluM *)m)->num); }
static const tn_module_type tn__prelu_type = {"PReLU", tn__prelu_mod_fwd, NULL, tn__prelu_mod_repr};
TNDEF tn_module *tn_nn_prelu_opts(tn_prelu_opts o) {
    const int64_t num_parameters = o.num_parameters;
    const double init = o.init;
    if (num_parameters <= 0) return (tn_module *)tn__error("tn_nn_prelu: num_parameters must be positive, got %lld", (long long)num_parameters);
    tn__preluM *q = (tn__preluM *)tn_module_new(&tn__prelu_type, sizeof(tn__preluM));
    if (!q) return NULL;
    q->num = num_parameters; q->init = init;
    tn_tensor *w = tn__param(&q->base, "weight", &q->num, 1);
    return tn__module_or_free(&q->base, !w || tn_init_constant_(w, init));
}
TNDEF tn_module *tn_nn_prelu_str(const char *options) { TN__KW_STR(tn_prelu_opts, prelu, "tn_nn_prelu", options, tn_nn_prelu_opts(o)); }

/* EmbeddingBag */
typedef struct tn__bagm { tn_module base; int64_t num, dim; tn_embedding_bag_layer_opts o; } tn__bagm;
static const char *const tn__bag_modes[3] = {"sum", "mean", "max"};
TNDEF tn_tensor *tn_nn_embedding_bag_forward(tn_module *m, tn_tensor *input, tn_tensor *offsets, tn_tensor *per_sample_weights) {
    if (!m || strcmp(m->type->name, "EmbeddingBag")) return (tn_tensor *)tn__error("tn_nn_embedding_bag_forward: m is not an EmbeddingBag module");
    tn__bagm *q = (tn__bagm *)m;
    return TN__AS("EmbeddingBag", tn_embedding_bag(input, tn_module_get(m, "weight"), .offsets = offsets, .mode = q->o.mode, .per_sample_weights = per_sample_weights,
                                                   .include_last_offset = q->o.include_last_offset, .padding_idx = q->o.padding_idx));
}
static tn_tensor *tn__bag_fwd(tn_module *m, tn_tensor *x) { return tn_nn_embedding_bag_forward(m, x, NULL, NULL); }
static void tn__bag_repr(tn_module *m, char *b, size_t n) {
    tn__bagm *q = (tn__bagm *)m;
    int k = snprintf(b, n, "%lld, %lld, mode=%s", (long long)q->num, (long long)q->dim, tn__bag_modes[q->o.mode]);
    if (q->o.padding_idx != TN_NONE) snprintf(b + k, n - (size_t)k, ", padding_idx=%lld", (long long)q->o.padding_idx);
}
static const tn_module_type tn__bag_type = {"EmbeddingBag", tn__bag_fwd, NULL, tn__bag_repr};
TNDEF tn_module *tn_nn_embedding_bag_opts(int64_t num, int64_t dim, tn_embedding_bag_layer_opts o) {
    const char *fn = "tn_nn_embedding_bag";
    if (num <= 0 || dim <= 0) return (tn_module *)tn__error("%s: num_embeddings (%lld) and embedding_dim (%lld) must be positive", fn, (long long)num, (long long)dim);
    if (o.mode < TN_BAG_SUM || o.mode > TN_BAG_MAX) return (tn_module *)tn__error("%s: mode %d is not TN_BAG_SUM, TN_BAG_MEAN or TN_BAG_MAX", fn, o.mode);
    if (o.padding_idx != TN_NONE && (o.padding_idx < -num || o.padding_idx >= num))
        return (tn_module *)tn__error("%s: padding_idx must be within num_embeddings (%lld), got %lld", fn, (long long)num, (long long)o.padding_idx);
    if (o.padding_idx != TN_NONE && o.padding_idx < 0) o.padding_idx += num;   /* kept as PyTorch's constructor keeps it */
    tn__bagm *q = (tn__bagm *)tn_module_new(&tn__bag_type, sizeof(tn__bagm));
    if (!q) return NULL;
    q->num = num; q->dim = dim; q->o = o;
    tn_tensor *w = tn__param(&q->base, "weight", TN_SHAPE(num, dim));
    int failed = !w || tn_init_normal_(w);
    if (!failed && o.padding_idx != TN_NONE) {
        tn_scope_begin();
        failed = tn__init_fill(tn_select(tn_detach(w), 0, o.padding_idx), tn_zeros(TN_SHAPE(dim), TN_F32));
        tn_scope_end();
    }
    return tn__module_or_free(&q->base, failed);
}
TNDEF tn_module *tn_nn_embedding_bag_str(int64_t num, int64_t dim, const char *options) {
    TN__KW_STR(tn_embedding_bag_layer_opts, embedding_bag_layer, "tn_nn_embedding_bag", options, tn_nn_embedding_bag_opts(num, dim, o));
}

/* Lazy modules: built with empty placeholders (PyTorch's UninitializedParameter) and a Lazy
   type; the first forward reads the feature size off the input, registers the real
   parameters and buffers (in the placeholders' dtype and device), initialises them as the
   eager constructor would (the same draws from the same seed) and switches to the eager
   type (PyTorch's cls_to_become). An optimizer must be made after that first call. */
static tn_tensor *tn__lazy_param(tn_module *m, const char *name, const int64_t *shape, int nd, bool buffer, double fill) {
    tn_tensor *old = tn_module_get(m, name);
    tn_tensor *t = old ? tn__filled("tn_nn", shape, nd, fill, old->dtype) : NULL;
    tn_tensor *td = t ? tn_to(t, old->device) : NULL;
    tn_tensor *r = !td ? NULL : buffer ? tn_module_register_buffer(m, name, td) : tn_module_register_parameter(m, name, td);
    if (td != t) tn_release(td);
    tn_release(t);
    return r;
}
static tn_tensor *tn__lazy_linear_fwd(tn_module *m, tn_tensor *x) {
    tn__linear *l = (tn__linear *)m;
    TN__CHECK_NULL(x);
    if (x->ndim < 1) return (tn_tensor *)tn__error("LazyLinear: expected an input with at least 1 dim, got %s", TN__SHAPE(x));
    const int64_t in = x->shape[x->ndim - 1];
    const bool bias = tn_module_get(m, "bias") != NULL;
    tn_tensor *w = tn__lazy_param(m, "weight", TN_SHAPE(l->out, in), false, 0), *b = bias ? tn__lazy_param(m, "bias", TN_SHAPE(l->out), false, 0) : NULL;
    const double bound = in > 0 ? 1 / sqrt((double)in) : 0;
    if (!w || (bias && !b) || tn_init_uniform_(w, .a = -bound, .b = bound) || (b && tn_init_uniform_(b, .a = -bound, .b = bound))) return NULL;
    l->in = in;
    m->type = &tn__linear_type;
    return tn__linear_fwd(m, x);
}
static const tn_module_type tn__lazy_linear_type = {"LazyLinear", tn__lazy_linear_fwd, NULL, tn__linear_repr};
/* Empty placeholders for the named tensors of m (size 0), replacing what the eager constructor made. */
static bool tn__lazy_placeholders(tn_module *m, const char *const *names, int n, bool buffers) {
    const int64_t zero = 0;
    for (int i = 0; i < n; i++)
        if (tn_module_get(m, names[i]) && !tn__lazy_param(m, names[i], &zero, 1, buffers, 0)) return false;
    return true;
}
TNDEF tn_module *tn_nn_lazy_linear_opts(int64_t out_features, tn_linear_opts o) {
    tn_module *m = tn_nn_linear_opts(0, out_features, o);
    if (!m) return NULL;
    const char *const names[2] = {"weight", "bias"};
    m->type = &tn__lazy_linear_type;
    return tn__module_or_free(m, !tn__lazy_placeholders(m, names, 2, false));
}
TNDEF tn_module *tn_nn_lazy_linear_str(int64_t out_features, const char *options) {
    TN__KW_STR(tn_linear_opts, linear, "tn_nn_lazy_linear", options, tn_nn_lazy_linear_opts(out_features, o));
}

static tn_tensor *tn__lazy_conv_fwd(tn_module *m, tn_tensor *x) {
    TN__CHECK_NULL(x);
    const bool three = !strcmp(m->type->name, "LazyConv3d") || !strcmp(m->type->name, "LazyConvTranspose3d");
    tn__convm *c2 = three ? NULL : (tn__convm *)m;
    tn__conv3dm *c3 = three ? (tn__conv3dm *)m : NULL;
    const int nsp = three ? 3 : c2->nsp;
    const bool transposed = three ? c3->transposed : c2->transposed;
    const int64_t groups = three ? c3->groups : c2->groups, out = three ? c3->out : c2->out;
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2) return (tn_tensor *)tn__error("%s: expected a %dD or %dD input, got %s", m->type->name, nsp + 1, nsp + 2, TN__SHAPE(x));
    const int64_t in = x->shape[x->ndim == nsp + 1 ? 0 : 1];
    if (in <= 0 || in % groups) return (tn_tensor *)tn__error("%s: in_channels (%lld) must be positive and divisible by groups (%lld)", m->type->name, (long long)in, (long long)groups);
    int64_t shape[5] = {transposed ? in : out, transposed ? out / groups : in / groups, 0, 0, 0};
    for (int i = 0; i < nsp; i++) shape[2 + i] = three ? c3->k[i] : c2->k[i];
    const bool bias = tn_module_get(m, "bias") != NULL;
    tn_tensor *w = tn__lazy_param(m, "weight", shape, 2 + nsp, false, 0), *b = bias ? tn__lazy_param(m, "bias", TN_SHAPE(out), false, 0) : NULL;
    const double fan_in = w ? (double)tn_numel(w) / (double)w->shape[0] : 0, bound = fan_in > 0 ? 1 / sqrt(fan_in) : 0;
    if (!w || (bias && !b) || tn_init_uniform_(w, .a = -bound, .b = bound) || (b && tn_init_uniform_(b, .a = -bound, .b = bound))) return NULL;
    if (three) {
        c3->in = in;
        m->type = transposed ? &tn__convt3d_type : &tn__conv3d_type;
    } else {
        c2->in = in;
        m->type = transposed ? &tn__convt2d_type : nsp == 1 ? &tn__conv1d_type : &tn__conv2d_type;
    }
    return m->type->forward(m, x);
}
static void tn__lazy_conv_repr(tn_module *m, char *b, size_t n) {
    const bool three = !strcmp(m->type->name, "LazyConv3d") || !strcmp(m->type->name, "LazyConvTranspose3d");
    if (three) tn__conv3d_mod_repr(m, b, n);
    else tn__conv_repr(m, b, n);
}
static const tn_module_type tn__lazy_conv_types[5] = {{"LazyConv1d", tn__lazy_conv_fwd, NULL, tn__lazy_conv_repr}, {"LazyConv2d", tn__lazy_conv_fwd, NULL, tn__lazy_conv_repr},
                                                      {"LazyConv3d", tn__lazy_conv_fwd, NULL, tn__lazy_conv_repr},
                                                      {"LazyConvTranspose2d", tn__lazy_conv_fwd, NULL, tn__lazy_conv_repr},
                                                      {"LazyConvTranspose3d", tn__lazy_conv_fwd, NULL, tn__lazy_conv_repr}};
/* The eager module made with in_channels = groups (valid), then in_channels 0 and placeholders. */
static tn_module *tn__lazy_conv(tn_module *m, int kind) {
    if (!m) return NULL;
    const char *const names[2] = {"weight", "bias"};
    if (kind == 2 || kind == 4) ((tn__conv3dm *)m)->in = 0;
    else ((tn__convm *)m)->in = 0;
    m->type = &tn__lazy_conv_types[kind];
    return tn__module_or_free(m, !tn__lazy_placeholders(m, names, 2, false));
}
/* groups for the placeholder in_channels, or 0 after recording the error */
static int64_t tn__lazy_groups(const char *fn, int64_t out, int64_t groups) {
    if (groups > 0 && out > 0 && out % groups == 0) return groups;
    tn__error("%s: out_channels (%lld) must be positive and divisible by groups (%lld)", fn, (long long)out, (long long)groups);
    return 0;
}
TNDEF tn_module *tn_nn_lazy_conv1d_opts(int64_t out, int64_t k, tn_conv_opts o) {
    const int64_t g = tn__lazy_groups("tn_nn_lazy_conv1d", out, o.groups);
    return g ? tn__lazy_conv(tn_nn_conv1d_opts(g, out, k, o), 0) : NULL;
}
TNDEF tn_module *tn_nn_lazy_conv2d_opts(int64_t out, int64_t k, tn_conv_opts o) {
    const int64_t g = tn__lazy_groups("tn_nn_lazy_conv2d", out, o.groups);
    return g ? tn__lazy_conv(tn_nn_conv2d_opts(g, out, k, o), 1) : NULL;
}
TNDEF tn_module *tn_nn_lazy_conv3d_opts(int64_t out, int64_t k, tn_conv3d_layer_opts o) {
    const int64_t g = tn__lazy_groups("tn_nn_lazy_conv3d", out, o.groups);
    return g ? tn__lazy_conv(tn_nn_conv3d_opts(g, out, k, o), 2) : NULL;
}
TNDEF tn_module *tn_nn_lazy_conv_transpose2d_opts(int64_t out, int64_t k, tn_conv_opts o) {
    const int64_t g = tn__lazy_groups("tn_nn_lazy_conv_transpose2d", out, o.groups);
    return g ? tn__lazy_conv(tn_nn_conv_transpose2d_opts(g, out, k, o), 3) : NULL;
}
TNDEF tn_module *tn_nn_lazy_conv_transpose3d_opts(int64_t out, int64_t k, tn_conv3d_layer_opts o) {
    const int64_t g = tn__lazy_groups("tn_nn_lazy_conv_transpose3d", out, o.groups);
    return g ? tn__lazy_conv(tn_nn_conv_transpose3d_opts(g, out, k, o), 4) : NULL;
}

static tn_tensor *tn__lazy_bn_fwd(tn_module *m, tn_tensor *x) {
    tn__normm *q = (tn__normm *)m;
    TN__CHECK_NULL(x);
    if (x->ndim < 2) return (tn_tensor *)tn__error("%s: expected an input with at least 2 dims, got %s", m->type->name, TN__SHAPE(x));
    const int64_t nf = x->shape[1];
    if (q->affine && (!tn__lazy_param(m, "weight", &nf, 1, false, 1) || !tn__lazy_param(m, "bias", &nf, 1, false, 0))) return NULL;
    if (q->track && (!tn__lazy_param(m, "running_mean", &nf, 1, true, 0) || !tn__lazy_param(m, "running_var", &nf, 1, true, 1))) return NULL;
    q->nf = nf;
    m->type = q->kind == 0 ? &tn__bn1d_type : q->kind == 1 ? &tn__bn2d_type : &tn__bn3d_type;
    return tn__norm_fwd(m, x);
}
static const tn_module_type tn__lazy_bn_types[3] = {{"LazyBatchNorm1d", tn__lazy_bn_fwd, NULL, tn__norm_repr}, {"LazyBatchNorm2d", tn__lazy_bn_fwd, NULL, tn__norm_repr},
                                                    {"LazyBatchNorm3d", tn__lazy_bn_fwd, NULL, tn__norm_repr}};
static tn_module *tn__lazy_bn(tn_module *m, int d) {
    if (!m) return NULL;
    const char *const params[2] = {"weight", "bias"}, *const bufs[2] = {"running_mean", "running_var"};
    ((tn__normm *)m)->nf = 0;
    m->type = &tn__lazy_bn_types[d];
    return tn__module_or_free(m, !tn__lazy_placeholders(m, params, 2, false) || !tn__lazy_placeholders(m, bufs, 2, true));
}
TNDEF tn_module *tn_nn_lazy_batch_norm1d_opts(tn_batch_norm_module_opts o) { return tn__lazy_bn(tn_nn_batch_norm1d_opts(1, o), 0); }
TNDEF tn_module *tn_nn_lazy_batch_norm2d_opts(tn_batch_norm_module_opts o) { return tn__lazy_bn(tn_nn_batch_norm2d_opts(1, o), 1); }
TNDEF tn_module *tn_nn_lazy_batch_norm3d_opts(tn_batch_norm_module_opts o) { return tn__lazy_bn(tn_nn_batch_norm3d_opts(1, o), 2); }
