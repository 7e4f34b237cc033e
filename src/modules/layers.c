/* ---- layers ---- */
/* Python's repr of a float ("0.1", "1.0", "1e-05"), for extra_repr. */
static const char *tn__pyfloat(double v, char *buf) {
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    /* Python's repr writes exponents only below 1e-4 and from 1e16 on: 20.0, not 2e+01 */
    const int e = v != 0 && isfinite(v) ? (int)floor(log10(fabs(v))) : 0;
    if (strchr(buf, 'e') && e >= -4 && e < 16) snprintf(buf, 32, "%.*f", prec - 1 - e > 0 ? prec - 1 - e : 0, v);
    if (v == v && !strpbrk(buf, ".eni")) strcat(buf, ".0");
    return buf;
}
/* "(3, 3)" or "(3,)" as Python prints a tuple of n <= TN_MAX_DIMS ints, into buf of
   TN__PYTUPLE_CAP bytes: room for 8 int64s of 20 characters, ", " between, "(" and ",)". */
#define TN__PYTUPLE_CAP 192
static const char *tn__pytuple(const int64_t *v, int n, char *buf) {
    int k = snprintf(buf, TN__PYTUPLE_CAP, "(");
    for (int i = 0; i < n && i < TN_MAX_DIMS; i++) k += snprintf(buf + k, (size_t)(TN__PYTUPLE_CAP - k), i ? ", %lld" : "%lld", (long long)v[i]);
    snprintf(buf + k, (size_t)(TN__PYTUPLE_CAP - k), n == 1 ? ",)" : ")");
    return buf;
}
static tn_tensor *tn__param(tn_module *m, const char *name, const int64_t *shape, int ndim) {
    tn_tensor *t = tn__new_checked("tn_nn", shape, ndim, TN_F32);
    tn_tensor *r = t ? tn_module_register_parameter(m, name, t) : NULL;
    tn_release(t);
    return r;
}
static tn_tensor *tn__buffer(tn_module *m, const char *name, const int64_t *shape, int ndim, tn_dtype dtype, double value) {
    tn_tensor *t = tn__filled("tn_nn", shape, ndim, value, dtype);
    tn_tensor *r = t ? tn_module_register_buffer(m, name, t) : NULL;
    tn_release(t);
    return r;
}
/* A constructor's options parsed, checked, done; on error m is freed and NULL returned. */
static tn_module *tn__module_or_free(tn_module *m, int failed) {
    if (failed) { tn_module_free(m); return NULL; }
    return m;
}

/* Linear, Bilinear */
typedef struct tn__linear { tn_module base; int64_t in, in2, out; } tn__linear;
static tn_tensor *tn__linear_fwd(tn_module *m, tn_tensor *x) { return TN__AS("Linear", tn_linear(x, tn_module_get(m, "weight"), tn_module_get(m, "bias"))); }
static void tn__linear_repr(tn_module *m, char *b, size_t n) {
    tn__linear *l = (tn__linear *)m;
    snprintf(b, n, "in_features=%lld, out_features=%lld, bias=%s", (long long)l->in, (long long)l->out, tn_module_get(m, "bias") ? "True" : "False");
}
static const tn_module_type tn__linear_type = {"Linear", tn__linear_fwd, NULL, tn__linear_repr};
TNDEF tn_module *tn_nn_linear_opts(int64_t in, int64_t out, tn_linear_opts o) {
    const bool bias = o.bias;
    if (in < 0 || out < 0) return (tn_module *)tn__error("tn_nn_linear: in_features (%lld) and out_features (%lld) must be non-negative", (long long)in, (long long)out);
    tn__linear *l = (tn__linear *)tn_module_new(&tn__linear_type, sizeof(tn__linear));
    if (!l) return NULL;
    l->in = in; l->out = out;
    tn_tensor *w = tn__param(&l->base, "weight", TN_SHAPE(out, in)), *b = bias ? tn__param(&l->base, "bias", TN_SHAPE(out)) : NULL;
    double bound = in > 0 ? 1 / sqrt((double)in) : 0;   /* reset_parameters: weight, then bias U(-1/sqrt(in), 1/sqrt(in)) */
    int failed = !w || (bias && !b) || tn__init_kaiming_a5(w) || (b && tn_init_uniform_(b, .a = -bound, .b = bound));
    return tn__module_or_free(&l->base, failed);
}
TNDEF tn_module *tn_nn_linear_str(int64_t in, int64_t out, const char *options) {
    TN__KW_STR(tn_linear_opts, linear, "tn_nn_linear", options, tn_nn_linear_opts(in, out, o));
}
static void tn__bilinear_repr(tn_module *m, char *b, size_t n) {
    tn__linear *l = (tn__linear *)m;
    snprintf(b, n, "in1_features=%lld, in2_features=%lld, out_features=%lld, bias=%s", (long long)l->in, (long long)l->in2, (long long)l->out, tn_module_get(m, "bias") ? "True" : "False");
}
static const tn_module_type tn__bilinear_type = {"Bilinear", NULL, NULL, tn__bilinear_repr};
TNDEF tn_tensor *tn_nn_bilinear_forward(tn_module *m, tn_tensor *x1, tn_tensor *x2) {
    if (!m || m->type != &tn__bilinear_type) return (tn_tensor *)tn__error("tn_nn_bilinear_forward: need a Bilinear module");
    return TN__AS("Bilinear", tn_bilinear(x1, x2, tn_module_get(m, "weight"), tn_module_get(m, "bias")));
}
TNDEF tn_module *tn_nn_bilinear_opts(int64_t in1, int64_t in2, int64_t out, tn_linear_opts o) {
    const bool bias = o.bias;
    if (in1 < 0 || in2 < 0 || out < 0) return (tn_module *)tn__error("tn_nn_bilinear: sizes must be non-negative");
    tn__linear *l = (tn__linear *)tn_module_new(&tn__bilinear_type, sizeof(tn__linear));
    if (!l) return NULL;
    l->in = in1; l->in2 = in2; l->out = out;
    tn_tensor *w = tn__param(&l->base, "weight", TN_SHAPE(out, in1, in2)), *b = bias ? tn__param(&l->base, "bias", TN_SHAPE(out)) : NULL;
    double bound = in1 > 0 ? 1 / sqrt((double)in1) : 0;
    int failed = !w || (bias && !b) || tn_init_uniform_(w, .a = -bound, .b = bound) || (b && tn_init_uniform_(b, .a = -bound, .b = bound));
    return tn__module_or_free(&l->base, failed);
}
TNDEF tn_module *tn_nn_bilinear_str(int64_t in1, int64_t in2, int64_t out, const char *options) {
    TN__KW_STR(tn_linear_opts, linear, "tn_nn_bilinear", options, tn_nn_bilinear_opts(in1, in2, out, o));
}

/* Conv1d, Conv2d, ConvTranspose2d */
typedef struct tn__convm { tn_module base; int nsp, mode; bool transposed, same, valid; int64_t in, out, k[2], s[2], p[2], d[2], op[2], groups; } tn__convm;
/* F.pad's padding (last dim first) for a padding_mode other than zeros, as PyTorch's
   _reversed_padding_repeated_twice: padding='same' splits d (k - 1) with the extra one after. */
static void tn__conv_mode_pads(int nsp, bool same, const int64_t *k, const int64_t *p, const int64_t *d, int64_t *pads) {
    for (int i = 0; i < nsp; i++) {
        const int dim = nsp - 1 - i;
        const int64_t total = same ? d[dim] * (k[dim] - 1) : 2 * p[dim];
        pads[2 * i] = same ? total / 2 : p[dim];
        pads[2 * i + 1] = total - pads[2 * i];
    }
}
static tn_tensor *tn__conv_fwd(tn_module *m, tn_tensor *x) {
    tn__convm *c = (tn__convm *)m;
    tn_tensor *w = tn_module_get(m, "weight"), *b = tn_module_get(m, "bias");
    int64_t p[2] = {c->same ? TN_PADDING_SAME : c->p[0], c->p[1]};
    if (c->mode != TN_PADDING_ZEROS) {
        int64_t pads[4];
        tn__conv_mode_pads(c->nsp, c->same, c->k, c->p, c->d, pads);
        tn_scope_begin();
        tn_tensor *xp = x ? tn_pad(x, pads, 2 * c->nsp, .mode = c->mode) : NULL;
        p[0] = p[1] = 0;
        return tn__scope_return(TN__AS(m->type->name, xp ? tn__conv("tn_conv", xp, w, b, c->nsp, false, c->s, p, c->d, c->op, c->groups) : NULL));
    }
    return TN__AS(m->type->name, tn__conv("tn_conv", x, w, b, c->nsp, c->transposed, c->s, p, c->d, c->op, c->groups));
}
static const char *const tn__padding_mode_names[4] = {"zeros", "reflect", "replicate", "circular"};
static void tn__conv_repr(tn_module *m, char *b, size_t n) {
    tn__convm *c = (tn__convm *)m;
    char t[TN__PYTUPLE_CAP];
    int k = snprintf(b, n, "%lld, %lld, kernel_size=%s", (long long)c->in, (long long)c->out, tn__pytuple(c->k, c->nsp, t));
    k += snprintf(b + k, n - (size_t)k, ", stride=%s", tn__pytuple(c->s, c->nsp, t));
    if (c->same || c->valid) k += snprintf(b + k, n - (size_t)k, ", padding=%s", c->same ? "same" : "valid");
    else if (c->p[0] || c->p[c->nsp - 1]) k += snprintf(b + k, n - (size_t)k, ", padding=%s", tn__pytuple(c->p, c->nsp, t));
    if (c->d[0] != 1 || c->d[c->nsp - 1] != 1) k += snprintf(b + k, n - (size_t)k, ", dilation=%s", tn__pytuple(c->d, c->nsp, t));
    if (c->transposed && (c->op[0] || c->op[c->nsp - 1])) k += snprintf(b + k, n - (size_t)k, ", output_padding=%s", tn__pytuple(c->op, c->nsp, t));
    if (c->groups != 1) k += snprintf(b + k, n - (size_t)k, ", groups=%lld", (long long)c->groups);
    if (!tn_module_get(m, "bias")) k += snprintf(b + k, n - (size_t)k, ", bias=False");
    if (c->mode != TN_PADDING_ZEROS) snprintf(b + k, n - (size_t)k, ", padding_mode=%s", tn__padding_mode_names[c->mode]);
}
static const tn_module_type tn__conv1d_type = {"Conv1d", tn__conv_fwd, NULL, tn__conv_repr};
static const tn_module_type tn__conv2d_type = {"Conv2d", tn__conv_fwd, NULL, tn__conv_repr};
static const tn_module_type tn__convt2d_type = {"ConvTranspose2d", tn__conv_fwd, NULL, tn__conv_repr};
/* A pair option: the _hw pair when given, else the int for both dims. */
static void tn__kw_pair(int64_t *out, int64_t v, const int64_t hw[2]) {
    const bool pair = hw[0] || hw[1];
    out[0] = pair ? hw[0] : v;
    out[1] = pair ? hw[1] : v;
}
static tn_module *tn__conv_new(const char *fn, const tn_module_type *type, int nsp, bool transposed, int64_t in, int64_t out, int64_t ksize, tn_conv_opts o) {
    int64_t k[2], st[2], pd[2], dl[2], op[2];
    tn__kw_pair(k, ksize, o.kernel_size_hw);
    tn__kw_pair(st, o.stride, o.stride_hw);
    tn__kw_pair(pd, o.padding, o.padding_hw);
    tn__kw_pair(dl, o.dilation, o.dilation_hw);
    tn__kw_pair(op, o.output_padding, o.output_padding_hw);
    const bool pairs = o.kernel_size_hw[0] || o.kernel_size_hw[1] || o.stride_hw[0] || o.stride_hw[1] || o.padding_hw[0] || o.padding_hw[1] ||
                       o.dilation_hw[0] || o.dilation_hw[1] || o.output_padding_hw[0] || o.output_padding_hw[1];
    if (nsp == 1 && pairs) return (tn_module *)tn__error("%s: a 1-d convolution takes ints, not (h, w) pairs", fn);
    if (!transposed && (op[0] || op[1])) return (tn_module *)tn__error("%s: output_padding is an option of the transposed convolution only", fn);
    if (o.padding_mode < 0 || o.padding_mode > TN_PADDING_CIRCULAR) return (tn_module *)tn__error("%s: padding_mode %d is not one of TN_PADDING_ZEROS ... TN_PADDING_CIRCULAR", fn, o.padding_mode);
    if (o.padding_mode != TN_PADDING_ZEROS && transposed) return (tn_module *)tn__error("%s: Only \"zeros\" padding mode is supported for ConvTranspose2d", fn);
    const bool same = o.padding == TN_PADDING_SAME, valid = o.padding == TN_PADDING_VALID;
    if (same || valid) pd[0] = pd[1] = 0;
    if (in <= 0 || out <= 0 || o.groups <= 0 || in % o.groups || out % o.groups)
        return (tn_module *)tn__error("%s: in_channels (%lld) and out_channels (%lld) must be positive and divisible by groups (%lld)", fn, (long long)in, (long long)out, (long long)o.groups);
    for (int i = 0; i < nsp; i++)
        if (k[i] <= 0 || st[i] <= 0 || dl[i] <= 0 || pd[i] < 0 || op[i] < 0)
            return (tn_module *)tn__error("%s: kernel_size, stride and dilation must be positive and padding non-negative", fn);
    if (same && !transposed && (st[0] != 1 || st[1] != 1)) return (tn_module *)tn__error("%s: padding='same' is not supported for strided convolutions", fn);
    if ((same || valid) && transposed) return (tn_module *)tn__error("%s: only 'zeros' padding mode and numeric padding are supported for ConvTranspose2d", fn);
    tn__convm *c = (tn__convm *)tn_module_new(type, sizeof(tn__convm));
    if (!c) return NULL;
    c->nsp = nsp; c->mode = o.padding_mode; c->transposed = transposed; c->in = in; c->out = out; c->groups = o.groups; c->same = same; c->valid = valid;
    for (int i = 0; i < 2; i++) { c->k[i] = k[i]; c->s[i] = st[i]; c->p[i] = pd[i]; c->d[i] = dl[i]; c->op[i] = op[i]; }
    int64_t shape[4] = {transposed ? in : out, transposed ? out / c->groups : in / c->groups, c->k[0], c->k[1]};
    tn_tensor *w = tn__param(&c->base, "weight", shape, 2 + nsp), *b = o.bias ? tn__param(&c->base, "bias", TN_SHAPE(out)) : NULL;
    double fan_in = 0;
    if (w) fan_in = (double)tn_numel(w) / (double)w->shape[0];   /* size(1) * receptive field, as _calculate_fan_in_and_fan_out */
    double bound = fan_in > 0 ? 1 / sqrt(fan_in) : 0;
    bool failed = !w || (o.bias && !b) || tn__init_kaiming_a5(w) || (b && tn_init_uniform_(b, .a = -bound, .b = bound));
    return tn__module_or_free(&c->base, failed);
}
TNDEF tn_module *tn_nn_conv1d_opts(int64_t in, int64_t out, int64_t k, tn_conv_opts o) { return tn__conv_new("tn_nn_conv1d", &tn__conv1d_type, 1, false, in, out, k, o); }
TNDEF tn_module *tn_nn_conv2d_opts(int64_t in, int64_t out, int64_t k, tn_conv_opts o) { return tn__conv_new("tn_nn_conv2d", &tn__conv2d_type, 2, false, in, out, k, o); }
TNDEF tn_module *tn_nn_conv_transpose2d_opts(int64_t in, int64_t out, int64_t k, tn_conv_opts o) {
    return tn__conv_new("tn_nn_conv_transpose2d", &tn__convt2d_type, 2, true, in, out, k, o);
}
TNDEF tn_module *tn_nn_conv1d_str(int64_t in, int64_t out, int64_t k, const char *options) {
    TN__KW_STR(tn_conv_opts, conv, "tn_nn_conv1d", options, tn_nn_conv1d_opts(in, out, k, o));
}
TNDEF tn_module *tn_nn_conv2d_str(int64_t in, int64_t out, int64_t k, const char *options) {
    TN__KW_STR(tn_conv_opts, conv, "tn_nn_conv2d", options, tn_nn_conv2d_opts(in, out, k, o));
}
TNDEF tn_module *tn_nn_conv_transpose2d_str(int64_t in, int64_t out, int64_t k, const char *options) {
    TN__KW_STR(tn_conv_opts, conv, "tn_nn_conv_transpose2d", options, tn_nn_conv_transpose2d_opts(in, out, k, o));
}

/* Pooling modules */
typedef struct tn__poolm { tn_module base; int nsp, kind; bool ceil_mode, count_include_pad; int64_t k[2], s[2], p[2], d[2], divisor; } tn__poolm;
static tn_tensor *tn__pool_fwd(tn_module *m, tn_tensor *x) {
    tn__poolm *q = (tn__poolm *)m;
    const char *fn = m->type->name, *in = "tn_pool";   /* inner messages get the module's name */
    if (q->kind == 2) return TN__AS(fn, tn__adaptive_avg_pool(in, x, q->k[0], q->k[1]));
    if (q->kind == 3) return TN__AS(fn, tn__adaptive_max_pool(in, x, q->k[0], q->k[1], NULL));
    int64_t k[2] = {q->k[0], q->k[1]}, s[2] = {q->s[0], q->s[1]}, p[2] = {q->p[0], q->p[1]}, d[2] = {q->d[0], q->d[1]};
    if (q->kind == 0) return TN__AS(fn, tn__max_pool(in, x, q->nsp, k, s, p, d, q->ceil_mode, NULL));
    return TN__AS(fn, tn__avg_pool(in, x, q->nsp, k, s, p, q->ceil_mode, q->count_include_pad, q->divisor));
}
static void tn__pool_repr(tn_module *m, char *b, size_t n) {
    tn__poolm *q = (tn__poolm *)m;
    char t1[TN__PYTUPLE_CAP], t2[TN__PYTUPLE_CAP], t3[TN__PYTUPLE_CAP];
    if (q->kind >= 2) { snprintf(b, n, "output_size=%s", q->k[0] == q->k[1] ? (snprintf(t1, 64, "%lld", (long long)q->k[0]), t1) : tn__pytuple(q->k, 2, t1)); return; }
    /* ints as PyTorch keeps them when given as ints; AvgPool1d stores _single() tuples */
    const bool tup1 = q->nsp == 1 && q->kind == 1;
#define TN__ONE(v, t) (tup1 ? tn__pytuple(v, 1, t) : (q->nsp == 1 || v[0] == v[1]) ? (snprintf(t, 64, "%lld", (long long)v[0]), t) : tn__pytuple(v, 2, t))
    int64_t s[2] = {q->s[0] ? q->s[0] : q->k[0], q->s[1] ? q->s[1] : q->k[1]};
    int k = snprintf(b, n, "kernel_size=%s, stride=%s, padding=%s", TN__ONE(q->k, t1), TN__ONE(s, t2), TN__ONE(q->p, t3));
    if (q->kind == 0) snprintf(b + k, n - (size_t)k, ", dilation=%s, ceil_mode=%s", TN__ONE(q->d, t1), q->ceil_mode ? "True" : "False");
#undef TN__ONE
}
static const tn_module_type tn__maxpool1d_type = {"MaxPool1d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__maxpool2d_type = {"MaxPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__avgpool1d_type = {"AvgPool1d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__avgpool2d_type = {"AvgPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__adaptive_avg_type = {"AdaptiveAvgPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__adaptive_max_type = {"AdaptiveMaxPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static tn_module *tn__pool_new(const char *fn, const tn_module_type *type, int nsp, int kind, int64_t ksize, tn_pool_opts o) {
    int64_t k[2], st[2], pd[2], dl[2], divisor;
    if (tn__pool_args(fn, type->name, nsp, kind == 0, ksize, &o, k, st, pd, dl, &divisor)) return NULL;
    if (kind == 0 && o.return_indices) return (tn_module *)tn__error("%s: return_indices: call tn_max_pool%dd_with_indices instead", fn, nsp);
    int64_t g[10];
    if (tn__pool_geometry(fn, nsp, k, st, pd, dl, g)) return NULL;
    tn__poolm *q = (tn__poolm *)tn_module_new(type, sizeof(tn__poolm));
    if (!q) return NULL;
    q->nsp = nsp; q->kind = kind; q->ceil_mode = o.ceil_mode; q->count_include_pad = o.count_include_pad; q->divisor = divisor;
    for (int i = 0; i < 2; i++) { q->k[i] = k[i]; q->s[i] = st[i]; q->p[i] = pd[i]; q->d[i] = dl[i]; }
    return &q->base;
}
TNDEF tn_module *tn_nn_max_pool2d_opts(int64_t k, tn_pool_opts o) { return tn__pool_new("tn_nn_max_pool2d", &tn__maxpool2d_type, 2, 0, k, o); }
TNDEF tn_module *tn_nn_avg_pool2d_opts(int64_t k, tn_pool_opts o) { return tn__pool_new("tn_nn_avg_pool2d", &tn__avgpool2d_type, 2, 1, k, o); }
TNDEF tn_module *tn_nn_max_pool1d_opts(int64_t k, tn_pool_opts o) { return tn__pool_new("tn_nn_max_pool1d", &tn__maxpool1d_type, 1, 0, k, o); }
TNDEF tn_module *tn_nn_avg_pool1d_opts(int64_t k, tn_pool_opts o) { return tn__pool_new("tn_nn_avg_pool1d", &tn__avgpool1d_type, 1, 1, k, o); }
TNDEF tn_module *tn_nn_max_pool2d_str(int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_nn_max_pool2d", true, options, &o) ? NULL : tn_nn_max_pool2d_opts(k, o);
}
TNDEF tn_module *tn_nn_avg_pool2d_str(int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_nn_avg_pool2d", false, options, &o) ? NULL : tn_nn_avg_pool2d_opts(k, o);
}
TNDEF tn_module *tn_nn_max_pool1d_str(int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_nn_max_pool1d", true, options, &o) ? NULL : tn_nn_max_pool1d_opts(k, o);
}
TNDEF tn_module *tn_nn_avg_pool1d_str(int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_nn_avg_pool1d", false, options, &o) ? NULL : tn_nn_avg_pool1d_opts(k, o);
}
static tn_module *tn__adaptive_new(const tn_module_type *type, int kind, int64_t oh, int64_t ow) {
    if (oh <= 0 || ow <= 0) return (tn_module *)tn__error("tn_nn_%s: output size (%lld, %lld) must be positive", kind == 2 ? "adaptive_avg_pool2d" : "adaptive_max_pool2d", (long long)oh, (long long)ow);
    tn__poolm *q = (tn__poolm *)tn_module_new(type, sizeof(tn__poolm));
    if (q) { q->kind = kind; q->nsp = 2; q->k[0] = oh; q->k[1] = ow; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_adaptive_avg_pool2d(int64_t oh, int64_t ow) { return tn__adaptive_new(&tn__adaptive_avg_type, 2, oh, ow); }
TNDEF tn_module *tn_nn_adaptive_max_pool2d(int64_t oh, int64_t ow) { return tn__adaptive_new(&tn__adaptive_max_type, 3, oh, ow); }

/* BatchNorm1d/2d, LayerNorm, GroupNorm */
typedef struct tn__normm { tn_module base; int kind; int64_t nf, groups, shape[TN_MAX_DIMS]; int nshape; double eps, momentum; bool affine, track; } tn__normm;
static tn_tensor *tn__norm_fwd(tn_module *m, tn_tensor *x) {
    tn__normm *q = (tn__normm *)m;
    const char *fn = m->type->name;
    if (!x) return NULL;
    tn_tensor *w = tn_module_get(m, "weight"), *b = tn_module_get(m, "bias");
    if (q->kind == 2) return TN__AS(fn, tn_layer_norm(x, q->shape, q->nshape, .weight = w, .bias = b, .eps = q->eps));
    if (q->kind == 3) return TN__AS(fn, tn_group_norm(x, q->groups, .weight = w, .bias = b, .eps = q->eps));
    if (q->kind == 0 && x->ndim != 2 && x->ndim != 3) return (tn_tensor *)tn__error("%s: expected 2D or 3D input (got %dD input %s)", fn, x->ndim, TN__SHAPE(x));
    if (q->kind == 1 && x->ndim != 4) return (tn_tensor *)tn__error("%s: expected 4D input (got %dD input %s)", fn, x->ndim, TN__SHAPE(x));
    if (q->kind == 4 && x->ndim != 5) return (tn_tensor *)tn__error("%s: expected 5D input (got %dD input %s)", fn, x->ndim, TN__SHAPE(x));
    double factor = q->momentum == q->momentum ? q->momentum : 0;
    tn_tensor *nbt = tn_module_get(m, "num_batches_tracked");
    if (m->training && q->track && nbt) {
        tn_no_grad_begin();
        tn_scope_begin();
        tn_add_scalar_(nbt, 1);
        tn_scope_end();
        tn_no_grad_end();
        if (q->momentum != q->momentum) factor = 1.0 / tn_item(nbt);   /* cumulative moving average */

    }
    tn_tensor *rm = tn_module_get(m, "running_mean"), *rv = tn_module_get(m, "running_var");
    bool bn_training = m->training || (!rm && !rv);
    return TN__AS(fn, tn_batch_norm(x, !m->training || q->track ? rm : NULL, !m->training || q->track ? rv : NULL, .weight = w, .bias = b,
                                    .training = bn_training, .momentum = factor, .eps = q->eps));
}
static void tn__norm_repr(tn_module *m, char *b, size_t n) {
    tn__normm *q = (tn__normm *)m;
    char e[32], mo[32], t[TN__PYTUPLE_CAP];
    if (q->kind == 2) snprintf(b, n, "%s, eps=%s, elementwise_affine=%s", tn__pytuple(q->shape, q->nshape, t), tn__pyfloat(q->eps, e), q->affine ? "True" : "False");
    else if (q->kind == 3) snprintf(b, n, "%lld, %lld, eps=%s, affine=%s", (long long)q->groups, (long long)q->nf, tn__pyfloat(q->eps, e), q->affine ? "True" : "False");
    else snprintf(b, n, "%lld, eps=%s, momentum=%s, affine=%s, track_running_stats=%s", (long long)q->nf, tn__pyfloat(q->eps, e),
                  q->momentum == q->momentum ? tn__pyfloat(q->momentum, mo) : "None", q->affine ? "True" : "False", q->track ? "True" : "False");
}
static const tn_module_type tn__bn1d_type = {"BatchNorm1d", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__bn2d_type = {"BatchNorm2d", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__bn3d_type = {"BatchNorm3d", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__ln_type = {"LayerNorm", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__gn_type = {"GroupNorm", tn__norm_fwd, NULL, tn__norm_repr};
/* kind 0/1/4 BatchNorm1d/2d/3d, 2 LayerNorm (shape), 3 GroupNorm (groups) */
static tn_module *tn__norm_new(const char *fn, const tn_module_type *type, int kind, int64_t nf, int64_t groups, const int64_t *shape, int nshape,
                               double eps, double momentum, bool affine, bool has_bias, bool track) {
    if (kind == 2 && (!shape || nshape < 1 || nshape > TN_MAX_DIMS)) return (tn_module *)tn__error("%s: normalized_shape must have 1 to %d dims", fn, TN_MAX_DIMS);
    if (kind == 3 && (groups <= 0 || nf % groups))
        return (tn_module *)tn__error("%s: num_channels (%lld) must be divisible by num_groups (%lld)", fn, (long long)nf, (long long)groups);
    if (kind != 2 && nf <= 0) return (tn_module *)tn__error("%s: num_features must be positive, got %lld", fn, (long long)nf);
    tn__normm *q = (tn__normm *)tn_module_new(type, sizeof(tn__normm));
    if (!q) return NULL;
    q->kind = kind; q->nf = nf; q->groups = groups; q->eps = eps; q->momentum = momentum; q->affine = affine; q->track = track;
    for (int i = 0; kind == 2 && i < nshape; i++) q->shape[i] = shape[i];
    q->nshape = kind == 2 ? nshape : 0;
    const int64_t *ps = kind == 2 ? q->shape : &q->nf;
    int pn = kind == 2 ? q->nshape : 1;
    int failed = 0;
    if (q->affine) {
        tn_tensor *w = tn__param(&q->base, "weight", ps, pn), *b = has_bias ? tn__param(&q->base, "bias", ps, pn) : NULL;
        failed = !w || (has_bias && !b) || tn_init_ones_(w) || (b && tn_init_zeros_(b));
    }
    if (!failed && (kind <= 1 || kind == 4) && q->track)
        failed = !tn__buffer(&q->base, "running_mean", &nf, 1, TN_F32, 0) || !tn__buffer(&q->base, "running_var", &nf, 1, TN_F32, 1) ||
                 !tn__buffer(&q->base, "num_batches_tracked", NULL, 0, TN_I64, 0);
    return tn__module_or_free(&q->base, failed);
}
TNDEF tn_module *tn_nn_batch_norm1d_opts(int64_t nf, tn_batch_norm_module_opts o) {
    return tn__norm_new("tn_nn_batch_norm1d", &tn__bn1d_type, 0, nf, 0, NULL, 0, o.eps, o.momentum, o.affine, true, o.track_running_stats);
}
TNDEF tn_module *tn_nn_batch_norm2d_opts(int64_t nf, tn_batch_norm_module_opts o) {
    return tn__norm_new("tn_nn_batch_norm2d", &tn__bn2d_type, 1, nf, 0, NULL, 0, o.eps, o.momentum, o.affine, true, o.track_running_stats);
}
TNDEF tn_module *tn_nn_batch_norm3d_opts(int64_t nf, tn_batch_norm_module_opts o) {
    return tn__norm_new("tn_nn_batch_norm3d", &tn__bn3d_type, 4, nf, 0, NULL, 0, o.eps, o.momentum, o.affine, true, o.track_running_stats);
}
TNDEF tn_module *tn_nn_layer_norm_opts(const int64_t *shape, int n, tn_layer_norm_module_opts o) {
    return tn__norm_new("tn_nn_layer_norm", &tn__ln_type, 2, 0, 0, shape, n, o.eps, 0, o.elementwise_affine, o.bias, false);
}
TNDEF tn_module *tn_nn_group_norm_opts(int64_t groups, int64_t channels, tn_group_norm_module_opts o) {
    return tn__norm_new("tn_nn_group_norm", &tn__gn_type, 3, channels, groups, NULL, 0, o.eps, 0, o.affine, true, false);
}
TNDEF tn_module *tn_nn_batch_norm1d_str(int64_t nf, const char *options) {
    TN__KW_STR(tn_batch_norm_module_opts, batch_norm, "tn_nn_batch_norm1d", options, tn_nn_batch_norm1d_opts(nf, o));
}
TNDEF tn_module *tn_nn_batch_norm2d_str(int64_t nf, const char *options) {
    TN__KW_STR(tn_batch_norm_module_opts, batch_norm, "tn_nn_batch_norm2d", options, tn_nn_batch_norm2d_opts(nf, o));
}
TNDEF tn_module *tn_nn_batch_norm3d_str(int64_t nf, const char *options) {
    TN__KW_STR(tn_batch_norm_module_opts, batch_norm, "tn_nn_batch_norm3d", options, tn_nn_batch_norm3d_opts(nf, o));
}
TNDEF tn_module *tn_nn_layer_norm_str(const int64_t *shape, int n, const char *options) {
    TN__KW_STR(tn_layer_norm_module_opts, layer_norm, "tn_nn_layer_norm", options, tn_nn_layer_norm_opts(shape, n, o));
}
TNDEF tn_module *tn_nn_group_norm_str(int64_t groups, int64_t channels, const char *options) {
    TN__KW_STR(tn_group_norm_module_opts, group_norm, "tn_nn_group_norm", options, tn_nn_group_norm_opts(groups, channels, o));
}

/* Dropout, Embedding, Flatten, Unflatten, Identity */
typedef struct tn__miscm { tn_module base; double p; int64_t a, b, sizes[TN_MAX_DIMS]; int n; bool padded, inplace; } tn__miscm;
static tn_tensor *tn__dropout_fwd(tn_module *m, tn_tensor *x) {
    tn__miscm *q = (tn__miscm *)m;
    return TN__AS(m->type->name, tn__dropout("tn_dropout", x, q->p, m->training, q->n == 1 ? 0 : q->n));   /* kind 1, 2, 3: Dropout, Dropout2d, Dropout3d */

}
static void tn__dropout_repr(tn_module *m, char *b, size_t n) {
    char t[32];
    snprintf(b, n, "p=%s, inplace=%s", tn__pyfloat(((tn__miscm *)m)->p, t), ((tn__miscm *)m)->inplace ? "True" : "False");
}
static const tn_module_type tn__dropout_type = {"Dropout", tn__dropout_fwd, NULL, tn__dropout_repr};
static const tn_module_type tn__dropout2d_type = {"Dropout2d", tn__dropout_fwd, NULL, tn__dropout_repr};
static const tn_module_type tn__dropout3d_type = {"Dropout3d", tn__dropout_fwd, NULL, tn__dropout_repr};
static tn_module *tn__dropout_new(const tn_module_type *type, tn_dropout_module_opts o, int kind) {
    const double p = o.p;
    if (!(p >= 0 && p <= 1)) return (tn_module *)tn__error("tn_nn_%s: dropout probability has to be between 0 and 1, but got %g", kind == 3 ? "dropout3d" : kind == 2 ? "dropout2d" : "dropout", p);
    tn__miscm *q = (tn__miscm *)tn_module_new(type, sizeof(tn__miscm));
    if (q) { q->p = p; q->n = kind; q->inplace = o.inplace; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_dropout_opts(tn_dropout_module_opts o) { return tn__dropout_new(&tn__dropout_type, o, 1); }
TNDEF tn_module *tn_nn_dropout2d_opts(tn_dropout_module_opts o) { return tn__dropout_new(&tn__dropout2d_type, o, 2); }
TNDEF tn_module *tn_nn_dropout3d_opts(tn_dropout_module_opts o) { return tn__dropout_new(&tn__dropout3d_type, o, 3); }
TNDEF tn_module *tn_nn_dropout_str(const char *options) { TN__KW_STR(tn_dropout_module_opts, dropout, "tn_nn_dropout", options, tn_nn_dropout_opts(o)); }
TNDEF tn_module *tn_nn_dropout2d_str(const char *options) { TN__KW_STR(tn_dropout_module_opts, dropout, "tn_nn_dropout2d", options, tn_nn_dropout2d_opts(o)); }
TNDEF tn_module *tn_nn_dropout3d_str(const char *options) { TN__KW_STR(tn_dropout_module_opts, dropout, "tn_nn_dropout3d", options, tn_nn_dropout3d_opts(o)); }
static tn_tensor *tn__embedding_fwd(tn_module *m, tn_tensor *x) {
    tn__miscm *q = (tn__miscm *)m;
    tn_tensor *w = tn_module_get(m, "weight");
    return TN__AS("Embedding", q->padded ? tn_embedding_padded(x, w, q->p > 0 ? (int64_t)q->p : 0) : tn_embedding(x, w));
}
static void tn__embedding_repr(tn_module *m, char *b, size_t n) {
    tn__miscm *q = (tn__miscm *)m;
    int k = snprintf(b, n, "%lld, %lld", (long long)q->a, (long long)q->b);
    if (q->padded) snprintf(b + k, n - (size_t)k, ", padding_idx=%lld", (long long)q->p);
}
static const tn_module_type tn__embedding_type = {"Embedding", tn__embedding_fwd, NULL, tn__embedding_repr};
TNDEF tn_module *tn_nn_embedding_opts(int64_t num, int64_t dim, tn_embedding_opts o) {
    const char *fn = "tn_nn_embedding";
    const int64_t pad = o.padding_idx;
    const bool given = pad != TN_NONE;
    if (num <= 0 || dim <= 0) return (tn_module *)tn__error("%s: num_embeddings (%lld) and embedding_dim (%lld) must be positive", fn, (long long)num, (long long)dim);
    if (given && (pad < -num || pad >= num)) return (tn_module *)tn__error("%s: padding_idx must be within num_embeddings (%lld), got %lld", fn, (long long)num, (long long)pad);
    tn__miscm *q = (tn__miscm *)tn_module_new(&tn__embedding_type, sizeof(tn__miscm));
    if (!q) return NULL;
    q->a = num; q->b = dim; q->padded = given; q->p = given ? (double)(pad < 0 ? pad + num : pad) : 0;
    tn_tensor *w = tn__param(&q->base, "weight", TN_SHAPE(num, dim));
    int failed = !w || tn_init_normal_(w);
    if (!failed && q->padded) {
        tn_scope_begin();
        failed = tn__init_fill(tn_select(tn_detach(w), 0, (int64_t)q->p), tn_zeros(TN_SHAPE(dim), TN_F32));
        tn_scope_end();
    }
    return tn__module_or_free(&q->base, failed);
}
TNDEF tn_module *tn_nn_embedding_str(int64_t num, int64_t dim, const char *options) {
    TN__KW_STR(tn_embedding_opts, embedding, "tn_nn_embedding", options, tn_nn_embedding_opts(num, dim, o));
}
static tn_tensor *tn__flatten_fwd(tn_module *m, tn_tensor *x) {
    tn__miscm *q = (tn__miscm *)m;
    if (q->n) return TN__AS("Unflatten", tn_unflatten(x, q->a, q->sizes, q->n));
    return TN__AS("Flatten", tn_flatten(x, .start_dim = q->a, .end_dim = q->b));
}
static void tn__flatten_repr(tn_module *m, char *b, size_t n) {
    tn__miscm *q = (tn__miscm *)m;
    char t[TN__PYTUPLE_CAP];
    if (q->n) snprintf(b, n, "dim=%lld, unflattened_size=%s", (long long)q->a, tn__pytuple(q->sizes, q->n, t));
    else snprintf(b, n, "start_dim=%lld, end_dim=%lld", (long long)q->a, (long long)q->b);
}
static const tn_module_type tn__flatten_type = {"Flatten", tn__flatten_fwd, NULL, tn__flatten_repr};
static const tn_module_type tn__unflatten_type = {"Unflatten", tn__flatten_fwd, NULL, tn__flatten_repr};
TNDEF tn_module *tn_nn_flatten_opts(tn_flatten_module_opts o) {
    tn__miscm *q = (tn__miscm *)tn_module_new(&tn__flatten_type, sizeof(tn__miscm));
    if (q) { q->a = o.start_dim; q->b = o.end_dim; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_flatten_str(const char *options) { TN__KW_STR(tn_flatten_module_opts, flatten_module, "tn_nn_flatten", options, tn_nn_flatten_opts(o)); }
TNDEF tn_module *tn_nn_unflatten(int64_t dim, const int64_t *sizes, int n) {
    if (!sizes || n < 1 || n > TN_MAX_DIMS) return (tn_module *)tn__error("tn_nn_unflatten: need 1 to %d sizes", TN_MAX_DIMS);
    tn__miscm *q = (tn__miscm *)tn_module_new(&tn__unflatten_type, sizeof(tn__miscm));
    if (q) { q->a = dim; q->n = n; memcpy(q->sizes, sizes, (size_t)n * sizeof(int64_t)); }
    return q ? &q->base : NULL;
}
static tn_tensor *tn__identity_fwd(tn_module *m, tn_tensor *x) { (void)m; return tn__own(tn_retain(x)); }
static const tn_module_type tn__identity_type = {"Identity", tn__identity_fwd, NULL, NULL};
TNDEF tn_module *tn_nn_identity(void) { return tn_module_new(&tn__identity_type, sizeof(tn_module)); }

/* Activations: one module type per PyTorch class, one forward over a table. */
typedef struct tn__actm { tn_module base; int kind; double p[2]; int64_t dim; char repr[96]; } tn__actm;   /* repr: "min_val=%s, max_val=%s" of two 24-character floats at most */
static const char *const tn__act_names[] = {"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
                                             "Hardtanh", "Hardswish", "Hardsigmoid", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
                                             "Softmin", "Softmax2d", "LogSigmoid", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "RReLU"};
#define TN__NUM_ACTS 26
static tn_tensor *tn__act_apply(tn__actm *a, tn_tensor *x, bool training) {
    tn_tensor *y = NULL;
    switch (a->kind) {
    case 0: y = tn_relu(x); break;
    case 1: y = tn_relu6(x); break;
    case 2: y = tn_leaky_relu(x, .negative_slope = a->p[0]); break;
    case 3: y = tn_elu(x, .alpha = a->p[0]); break;
    case 4: y = tn_selu(x); break;
    case 5: y = tn_celu(x, .alpha = a->p[0]); break;
    case 6: y = tn_gelu(x, .approximate = a->p[0] != 0 ? TN_APPROXIMATE_TANH : TN_APPROXIMATE_NONE); break;
    case 7: y = tn_silu(x); break;
    case 8: y = tn_mish(x); break;
    case 9: y = tn_softplus(x, .beta = a->p[0], .threshold = a->p[1]); break;
    case 10: y = tn_hardtanh(x, .min_val = a->p[0], .max_val = a->p[1]); break;
    case 11: y = tn_hardswish(x); break;
    case 12: y = tn_hardsigmoid(x); break;
    case 13: y = tn_tanh(x); break;
    case 14: y = tn_sigmoid(x); break;
    case 15: case 16: {
        /* dim=None: PyTorch's legacy _get_softmax_dim (0 for 0-, 1- and 3-d inputs, else 1) */
        const int64_t dim = a->dim != TN_NONE ? a->dim : x && x->ndim != 0 && x->ndim != 1 && x->ndim != 3 ? 1 : 0;
        y = a->kind == 15 ? tn_softmax(x, dim) : tn_log_softmax(x, dim);
        break;
    }
    case 17: y = tn_softmin(x, .dim = a->dim); break;
    case 18:
        if (x && x->ndim != 3 && x->ndim != 4) return (tn_tensor *)tn__error("Softmax2d: expected input to be 3D or 4D, got %dD instead", x->ndim);
        y = tn_softmax(x, -3);
        break;
    case 19: y = tn_logsigmoid(x); break;
    case 20: y = tn_softsign(x); break;
    case 21: y = tn_tanhshrink(x); break;
    case 22: y = tn_hardshrink(x, .lambd = a->p[0]); break;
    case 23: y = tn_softshrink(x, .lambd = a->p[0]); break;
    case 24: y = tn_glu(x, .dim = a->dim != TN_NONE ? a->dim : -1); break;
    case 25: y = tn_rrelu(x, .lower = a->p[0], .upper = a->p[1], .training = training); break;
    }
    return y;
}
static tn_tensor *tn__act_fwd(tn_module *m, tn_tensor *x) { return TN__AS(m->type->name, tn__act_apply((tn__actm *)m, x, m->training)); }
static void tn__act_repr(tn_module *m, char *b, size_t n) { snprintf(b, n, "%s", ((tn__actm *)m)->repr); }
#define TN__ACT_TYPE(name) {name, tn__act_fwd, NULL, tn__act_repr}
static const tn_module_type tn__act_types[TN__NUM_ACTS] = {
    TN__ACT_TYPE("ReLU"), TN__ACT_TYPE("ReLU6"), TN__ACT_TYPE("LeakyReLU"), TN__ACT_TYPE("ELU"),
    TN__ACT_TYPE("SELU"), TN__ACT_TYPE("CELU"), TN__ACT_TYPE("GELU"), TN__ACT_TYPE("SiLU"),
    TN__ACT_TYPE("Mish"), TN__ACT_TYPE("Softplus"), TN__ACT_TYPE("Hardtanh"), TN__ACT_TYPE("Hardswish"),
    TN__ACT_TYPE("Hardsigmoid"), TN__ACT_TYPE("Tanh"), TN__ACT_TYPE("Sigmoid"), TN__ACT_TYPE("Softmax"),
    TN__ACT_TYPE("LogSoftmax"), TN__ACT_TYPE("Softmin"), TN__ACT_TYPE("Softmax2d"), TN__ACT_TYPE("LogSigmoid"),
    TN__ACT_TYPE("Softsign"), TN__ACT_TYPE("Tanhshrink"), TN__ACT_TYPE("Hardshrink"), TN__ACT_TYPE("Softshrink"),
    TN__ACT_TYPE("GLU"), TN__ACT_TYPE("RReLU")};
/* The keyword arguments of each activation, in tn__act_names' order. */
static const char *const tn__act_options[TN__NUM_ACTS] = {
    "inplace", "inplace", "negative_slope, inplace", "alpha, inplace", "inplace", "alpha, inplace", "approximate", "inplace",
    "inplace", "beta, threshold", "min_val, max_val, inplace", "inplace", "inplace", "", "", "dim", "dim",
    "dim", "", "", "", "", "lambd", "lambd", "dim", "lower, upper, inplace"};
static int tn__act_kind(const char *fn, const char *name) {
    for (int i = 0; name && i < TN__NUM_ACTS; i++) if (!strcmp(name, tn__act_names[i])) return i;
    return TN__FAIL_INT("%s: unknown activation \"%s\" (ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus, Hardtanh, Hardswish, Hardsigmoid, Tanh, Sigmoid, Softmax, LogSoftmax, Softmin, Softmax2d, LogSigmoid, Softsign, Tanhshrink, Hardshrink, Softshrink, GLU, RReLU)", fn, name ? name : "(null)");
}
TNDEF tn_module *tn_nn_activation_opts(const char *name, tn_activation_opts o) {
    const char *fn = "tn_nn_activation";
    const int kind = tn__act_kind(fn, name);
    if (kind < 0) return NULL;
    const tn_activation_opts def = TN_DEFAULTS(tn_activation_opts);
    if (tn__kw_only(fn, name, tn__kw_activation, TN__KW_N(tn__kw_activation), &o, &def, tn__act_options[kind])) return NULL;
    if (o.approximate != TN_APPROXIMATE_NONE && o.approximate != TN_APPROXIMATE_TANH)
        return (tn_module *)tn__error("%s: approximate %d is not TN_APPROXIMATE_NONE or TN_APPROXIMATE_TANH", fn, o.approximate);
    tn__actm *m = (tn__actm *)tn_module_new(&tn__act_types[kind], sizeof(tn__actm));
    if (!m) return NULL;
    char a[32], c[32];
    double p[2] = {0, 0};
    switch (kind) {
    case 2: p[0] = o.negative_slope; snprintf(m->repr, sizeof m->repr, "negative_slope=%s", tn__pyfloat(p[0], a)); break;
    case 3: case 5: p[0] = o.alpha; snprintf(m->repr, sizeof m->repr, "alpha=%s", tn__pyfloat(p[0], a)); break;
    case 6: p[0] = o.approximate == TN_APPROXIMATE_TANH; snprintf(m->repr, sizeof m->repr, "approximate='%s'", p[0] != 0 ? "tanh" : "none"); break;
    case 9: p[0] = o.beta; p[1] = o.threshold; snprintf(m->repr, sizeof m->repr, "beta=%g, threshold=%g", p[0], p[1]); break;
    case 10: p[0] = o.min_val; p[1] = o.max_val; snprintf(m->repr, sizeof m->repr, "min_val=%s, max_val=%s", tn__pyfloat(p[0], a), tn__pyfloat(p[1], c)); break;
    case 15: case 16: case 17:
        if (o.dim == TN_NONE) snprintf(m->repr, sizeof m->repr, "dim=None");
        else snprintf(m->repr, sizeof m->repr, "dim=%lld", (long long)o.dim);
        break;
    case 22: case 23: p[0] = o.lambd; snprintf(m->repr, sizeof m->repr, "%s", tn__pyfloat(p[0], a)); break;
    case 24: snprintf(m->repr, sizeof m->repr, "dim=%lld", (long long)(o.dim != TN_NONE ? o.dim : -1)); break;
    case 25:
        if (!(o.lower <= o.upper)) { tn_module_free(&m->base); return (tn_module *)tn__error("%s: RReLU: lower bound (%g) must not exceed upper bound (%g)", fn, o.lower, o.upper); }
        p[0] = o.lower; p[1] = o.upper;
        snprintf(m->repr, sizeof m->repr, "lower=%s, upper=%s", tn__pyfloat(p[0], a), tn__pyfloat(p[1], c));
        break;
    default: break;
    }
    m->kind = kind; m->p[0] = p[0]; m->p[1] = p[1]; m->dim = o.dim;
    return &m->base;
}
TNDEF tn_module *tn_nn_activation_str(const char *name, const char *options) {
    const char *fn = "tn_nn_activation";
    const int kind = tn__act_kind(fn, name);
    if (kind < 0) return NULL;
    tn__kwkey keys[TN__KW_MAXKEYS];   /* the named activation's own: an unknown name lists only those */
    const int n = tn__kw_filter(tn__kw_activation, TN__KW_N(tn__kw_activation), tn__act_options[kind], keys);
    tn_activation_opts o = TN_DEFAULTS(tn_activation_opts);
    return tn__kw_parse(fn, options, keys, n, &o, NULL) ? NULL : tn_nn_activation_opts(name, o);
}
TNDEF tn_module *tn_nn_relu(void) { return tn_nn_activation("ReLU"); }
TNDEF tn_module *tn_nn_tanh(void) { return tn_nn_activation("Tanh"); }
TNDEF tn_module *tn_nn_sigmoid(void) { return tn_nn_activation("Sigmoid"); }
TNDEF tn_module *tn_nn_gelu(void) { return tn_nn_activation("GELU"); }

/* Sequential, ModuleList, ModuleDict */
/* Each layer in a scope of its own, and each intermediate released as soon as the next layer
   has run (as Python drops them): what autograd saved stays, the rest goes back to the
   allocator at once, so the forward's peak is not every layer's output at the same time. */
static tn_tensor *tn__sequential_fwd(tn_module *m, tn_tensor *x) {
    tn_tensor *h = tn_retain(x);
    for (int i = 0; h && i < m->nchildren; i++) {
        tn_scope_begin();
        tn_tensor *y = tn_retain(tn_module_forward(m->children[i].m, h));
        tn_scope_end();
        tn_release(h);
        h = y;
    }
    return tn__own(h);
}
static const tn_module_type tn__sequential_type = {"Sequential", tn__sequential_fwd, NULL, NULL};
static const tn_module_type tn__module_list_type = {"ModuleList", NULL, NULL, NULL};
static const tn_module_type tn__module_dict_type = {"ModuleDict", NULL, NULL, NULL};
TNDEF tn_module *tn_nn_sequential_n(tn_module *const *mods, int n) {
    bool bad = n < 0 || (n > 0 && !mods);
    for (int i = 0; !bad && i < n; i++) bad = !mods[i];
    tn_module *s = bad ? NULL : tn_module_new(&tn__sequential_type, sizeof(tn_module));
    if (!s) { /* a layer that failed to build: free the others, keep its message */
        for (int i = 0; mods && i < n; i++) tn_module_free(mods[i]);
        if (bad && !tn_last_error()[0]) tn__error("tn_nn_sequential: a module is NULL");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        if (!tn_module_add(s, name, mods[i])) {
            for (int j = i + 1; j < n; j++) tn_module_free(mods[j]);
            tn_module_free(s);
            return NULL;
        }
    }
    return s;
}
TNDEF tn_module *tn_nn_sequential_append(tn_module *seq, tn_module *m) {
    if (!seq || !m) { tn_module_free(m); return NULL; }
    char name[16];
    snprintf(name, sizeof name, "%d", seq->nchildren);
    return tn_module_add(seq, name, m);
}
TNDEF tn_module *tn_nn_module_list(void) { return tn_module_new(&tn__module_list_type, sizeof(tn_module)); }
TNDEF tn_module *tn_nn_module_dict(void) { return tn_module_new(&tn__module_dict_type, sizeof(tn_module)); }
