/* ---- printing ---- */
/* PyTorch's repr (torch/_tensor_str.py): one width for all elements, chosen from the
   (summarised) nonzero finite values: integers print as "1.", wide ranges in %e; the
   knobs are torch.set_printoptions' (precision 4, linewidth 80, summarised past 1000
   elements with 3 edge items by default). */
typedef struct tn__print_state { int64_t precision, edgeitems, linewidth; double threshold; int sci_mode; } tn__print_state;
static tn__print_state tn__print_opts = {4, 3, 80, 1000, -1};

TNDEF int tn_set_printoptions_opts(tn_print_options o) {
    tn__print_state s = tn__print_opts;
    if (o.profile) {
        if (!strcmp(o.profile, "default")) { s.precision = 4; s.threshold = 1000; s.edgeitems = 3; s.linewidth = 80; }
        else if (!strcmp(o.profile, "short")) { s.precision = 2; s.threshold = 1000; s.edgeitems = 2; s.linewidth = 80; }
        else if (!strcmp(o.profile, "full")) { s.precision = 4; s.threshold = INFINITY; s.edgeitems = 3; s.linewidth = 80; }
        else return TN__FAIL_INT("tn_set_printoptions: unknown profile '%s' (expected 'default', 'short' or 'full')", o.profile);
    }
    if (o.precision != TN_NONE) {
        if (o.precision < 0 || o.precision > 40) return TN__FAIL_INT("tn_set_printoptions: precision must be in [0, 40] (got %lld)", (long long)o.precision);
        s.precision = o.precision;
    }
    if (o.threshold == o.threshold) {
        if (o.threshold < 0) return TN__FAIL_INT("tn_set_printoptions: threshold must be >= 0 (got %g)", o.threshold);
        s.threshold = o.threshold;
    }
    if (o.edgeitems != TN_NONE) {
        if (o.edgeitems < 0) return TN__FAIL_INT("tn_set_printoptions: edgeitems must be >= 0 (got %lld)", (long long)o.edgeitems);
        s.edgeitems = o.edgeitems;
    }
    if (o.linewidth != TN_NONE) {
        if (o.linewidth < 1) return TN__FAIL_INT("tn_set_printoptions: linewidth must be >= 1 (got %lld)", (long long)o.linewidth);
        s.linewidth = o.linewidth;
    }
    if (o.sci_mode < -1 || o.sci_mode > 1) return TN__FAIL_INT("tn_set_printoptions: sci_mode %d is not true, false or -1 (None)", o.sci_mode);
    s.sci_mode = o.sci_mode;   /* always set: PyTorch's sci_mode=None is "choose" */
    tn__print_opts = s;
    return 0;
}
TNDEF int tn_set_printoptions_str(const char *options) {
    tn_print_options o = TN_DEFAULTS(tn_print_options);
    uint64_t seen;
    if (tn__kw_parse("tn_set_printoptions", options, tn__kw_print, TN__KW_N(tn__kw_print), &o, &seen)) return -1;
    int rc = tn_set_printoptions_opts(o);
    tn__kw_release(tn__kw_print, TN__KW_N(tn__kw_print), &o, seen);
    return rc;
}
TNDEF void tn_get_printoptions(tn_print_options *out) {
    if (!out) return;
    tn_print_options o = TN_DEFAULTS(tn_print_options);
    o.precision = tn__print_opts.precision;
    o.threshold = tn__print_opts.threshold;
    o.edgeitems = tn__print_opts.edgeitems;
    o.linewidth = tn__print_opts.linewidth;
    o.sci_mode = tn__print_opts.sci_mode;
    *out = o;
}

#define TN__FMT_CAP 400   /* one value: %.40f of the largest double fits */
typedef struct tn__fmt {
    tn_tensor *t;            /* CPU, contiguous: f64, i64 or bool */
    bool floating, is_bool, int_mode, sci_mode, summarize;
    int width, precision;
    int64_t edge;            /* edge items of a summarised dim */
    double minabs, maxabs;
    bool any;
} tn__fmt;

static int tn__fmt_value(const tn__fmt *f, int64_t i, char *out, size_t cap) {
    if (f->is_bool) return snprintf(out, cap, "%s", ((const bool *)f->t->storage->data)[i] ? "True" : "False");
    if (!f->floating) return snprintf(out, cap, "%lld", (long long)((const int64_t *)f->t->storage->data)[i]);
    double v = ((const double *)f->t->storage->data)[i];
    if (v != v) return snprintf(out, cap, "nan");
    if (isinf(v)) return snprintf(out, cap, v > 0 ? "inf" : "-inf");
    if (f->sci_mode) return snprintf(out, cap, "%.*e", f->precision, v);
    if (f->int_mode) return snprintf(out, cap, "%.0f.", v);
    return snprintf(out, cap, "%.*f", f->precision, v);
}

/* Visit the elements that will be printed (edge items only when summarising). */
typedef void (*tn__visit_fn)(tn__fmt *f, int64_t i);
static void tn__visit(tn__fmt *f, int dim, int64_t base, tn__visit_fn fn) {
    tn_tensor *t = f->t;
    if (t->ndim == 0) { fn(f, 0); return; }
    int64_t n = t->shape[dim], st = t->strides[dim];
    for (int64_t i = 0; i < n; i++) {
        if (f->summarize && n > tn__mul_sat(2, f->edge) && i == f->edge) i = n - f->edge;
        if (i >= n) break;
        if (dim == t->ndim - 1) fn(f, base + i * st);
        else tn__visit(f, dim + 1, base + i * st, fn);
    }
}
static void tn__scan_value(tn__fmt *f, int64_t i) {
    char buf[TN__FMT_CAP];
    if (!f->floating) {
        int w = tn__fmt_value(f, i, buf, sizeof buf);
        if (w > f->width) f->width = w;
        return;
    }
    double v = ((const double *)f->t->storage->data)[i];
    if (v != v || isinf(v) || v == 0) return;
    double a = fabs(v);
    if (!f->any || a < f->minabs) f->minabs = a;
    if (!f->any || a > f->maxabs) f->maxabs = a;
    if (v != ceil(v)) f->int_mode = false;
    f->any = true;
}
static void tn__width_value(tn__fmt *f, int64_t i) {
    double v = ((const double *)f->t->storage->data)[i];
    if (v != v || isinf(v) || v == 0) return;
    char buf[TN__FMT_CAP];
    int w = tn__fmt_value(f, i, buf, sizeof buf);
    if (w > f->width) f->width = w;
}

/* A complex element (f2: the imaginary parts' formatter): the real part padded to its
   width, then the imaginary part unpadded with its sign and "j", as PyTorch's
   _val_formatter. */
static void tn__print_value(const tn__fmt *f, const tn__fmt *f2, tn__sbuf *b, int64_t i) {
    char buf[TN__FMT_CAP];
    int w = tn__fmt_value(f, i, buf, sizeof buf);
    tn__sb_pad(b, f->width - w);
    tn__sb_puts(b, buf);
    if (!f2) return;
    tn__fmt_value(f2, i, buf, sizeof buf);
    if (buf[0] != '-' && buf[0] != '+') tn__sb_puts(b, "+");
    tn__sb_puts(b, buf);
    tn__sb_puts(b, "j");
}
static void tn__print_rec(tn__fmt *f, const tn__fmt *f2, tn__sbuf *b, int dim, int64_t base, int indent) {
    tn_tensor *t = f->t;
    if (t->ndim == 0) { char buf[TN__FMT_CAP]; int w = tn__fmt_value(f, 0, buf, sizeof buf); tn__sb_pad(b, f2 ? f->width - w : 0); tn__sb_puts(b, buf);
                        if (f2) { tn__fmt_value(f2, 0, buf, sizeof buf); if (buf[0] != '-') tn__sb_puts(b, "+"); tn__sb_puts(b, buf); tn__sb_puts(b, "j"); }
                        return; }
    int64_t n = t->shape[dim], st = t->strides[dim];
    tn__sb_puts(b, "[");
    if (dim == t->ndim - 1) {
        const int elem = f->width + 2 + (f2 ? f2->width + 1 : 0);   /* PyTorch's element_length */
        int64_t per_line = TN__MAX(1, (tn__print_opts.linewidth - indent) / elem), col = 0;
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                tn__sb_puts(b, ",");
                if (col == per_line) { tn__sb_puts(b, "\n"); tn__sb_pad(b, indent + 1); col = 0; }
                else tn__sb_puts(b, " ");
            }
            if (f->summarize && n > tn__mul_sat(2, f->edge) && i == f->edge) {
                tn__sb_puts(b, " ...");
                i = n - f->edge - 1;
            } else tn__print_value(f, f2, b, base + i * st);
            col++;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                tn__sb_puts(b, ",");
                for (int k = 0; k < t->ndim - 1 - dim; k++) tn__sb_puts(b, "\n");
                tn__sb_pad(b, indent + 1);
            }
            if (f->summarize && n > tn__mul_sat(2, f->edge) && i == f->edge) {
                tn__sb_puts(b, "...");
                i = n - f->edge - 1;
            } else tn__print_rec(f, f2, b, dim + 1, base + i * st, indent + 1);
        }
    }
    tn__sb_puts(b, "]");
}

/* A formatter over t's values (for a complex t: its real part, or imag true: its
   imaginary part): PyTorch's _Formatter, its mode and width from the printed values. */
static int tn__fmt_init(tn__fmt *f, tn_tensor *t, bool imag) {
    memset(f, 0, sizeof *f);
    const bool cplx = tn_dtype_is_complex(t->dtype);
    f->floating = cplx || tn_dtype_is_floating(t->dtype);
    f->is_bool = t->dtype == TN_BOOL;
    if (cplx) {   /* the part as a float64 copy: the same contiguous layout for both parts */
        tn_scope_begin();
        tn_tensor *part = imag ? tn_imag(t) : tn_real(t);
        f->t = part ? tn__copy_as(part, TN_F64, TN_CPU) : NULL;
        tn_scope_end();
    } else f->t = tn__copy_as(t, f->floating ? TN_F64 : f->is_bool ? TN_BOOL : TN_I64, TN_CPU);
    if (!f->t) return -1;
    f->int_mode = true;
    f->width = 1;
    f->summarize = (double)tn_numel(t) > tn__print_opts.threshold;
    f->precision = (int)tn__print_opts.precision;
    f->edge = tn__print_opts.edgeitems;
    if (tn_numel(t) == 0) return 0;
    tn__visit(f, 0, 0, tn__scan_value);
    if (f->floating && f->any) {
        double ratio = f->maxabs / f->minabs;
        f->sci_mode = f->int_mode ? (ratio > 1000 || f->maxabs > 1e8) : (ratio > 1000 || f->maxabs > 1e8 || f->minabs < 1e-4);
        tn__visit(f, 0, 0, tn__width_value);
    }
    if (f->floating && tn__print_opts.sci_mode >= 0) f->sci_mode = tn__print_opts.sci_mode;   /* after the width, as PyTorch */
    return 0;
}

TNDEF char *tn_to_string(tn_tensor *t) {
    if (!t) return NULL;
    if (tn__check_cpu_dtype("tn_to_string", t)) return NULL;
    const bool cplx = tn_dtype_is_complex(t->dtype);
    tn__fmt f, f2;
    if (tn__fmt_init(&f, t, false)) return NULL;
    if (cplx && tn__fmt_init(&f2, t, true)) { tn_release(f.t); return NULL; }
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__sb_puts(&b, "tensor(");
    if (tn_numel(t) == 0) tn__sb_puts(&b, "[]");
    else tn__print_rec(&f, cplx ? &f2 : NULL, &b, 0, 0, 7);
    /* suffixes, wrapped onto a new line past 80 columns as PyTorch does; built at their
       length (a custom function's name, eight 19-digit sizes are never cut) */
    tn__sbuf suffixes[4];
    memset(suffixes, 0, sizeof suffixes);
    int ns = 0;
    char num[32];   /* an int64 */
    if (t->device != TN_CPU) {
        tn__sb_puts(&suffixes[ns], "device='");
        tn__sb_puts(&suffixes[ns], tn_device_name(t->device));
        tn__sb_puts(&suffixes[ns++], ":0'");
    }
    if (tn_numel(t) == 0 && t->ndim != 1) {
        tn__sb_puts(&suffixes[ns], "size=(");
        for (int i = 0; i < t->ndim; i++) {
            snprintf(num, sizeof num, i ? ", %lld" : "%lld", (long long)t->shape[i]);
            tn__sb_puts(&suffixes[ns], num);
        }
        tn__sb_puts(&suffixes[ns++], t->ndim == 1 ? ",)" : ")");
    }
    /* an empty tensor names every dtype but the default (nothing to infer it from); the
       complex dtype of the default float dtype goes unnamed, as PyTorch */
    if (t->dtype != tn__default_dtype && (tn_numel(t) == 0 || (t->dtype != TN_I64 && t->dtype != TN_BOOL && t->dtype != tn_dtype_to_complex(tn__default_dtype)))) {
        tn__sb_puts(&suffixes[ns], "dtype=torch.");
        tn__sb_puts(&suffixes[ns++], tn_dtype_name(t->dtype));
    }
    if (t->grad_fn) {
        tn__sb_puts(&suffixes[ns], "grad_fn=<");
        tn__sb_puts(&suffixes[ns], tn_grad_fn_name(t));
        tn__sb_puts(&suffixes[ns++], ">");
    } else if (t->requires_grad) tn__sb_puts(&suffixes[ns++], "requires_grad=True");
    for (int i = 0; i < ns; i++) b.failed |= suffixes[i].failed;
    /* PyTorch: last_line_len = len(s) - s.rfind("\n") + 1 (rfind gives -1 when absent) */
    const char *lastnl = b.s ? strrchr(b.s, '\n') : NULL;
    size_t last = lastnl ? (size_t)(b.s + b.n - lastnl) + 1 : b.n + 2;

    for (int i = 0; i < ns && !b.failed; i++) {
        size_t sl = suffixes[i].n;
        if ((int64_t)(last + sl + 2) > tn__print_opts.linewidth) {
            tn__sb_puts(&b, ",\n");
            tn__sb_pad(&b, 7);
            last = 7 + sl;
        } else {
            tn__sb_puts(&b, ", ");
            last += sl + 2;
        }
        tn__sb_puts(&b, suffixes[i].s);
    }
    for (int i = 0; i < ns; i++) TN_FREE(suffixes[i].s);
    tn__sb_puts(&b, ")");
    tn_release(f.t);
    if (cplx) tn_release(f2.t);
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_to_string: out of memory"); }
    return b.s;
}

TNDEF void tn_string_free(char *s) { TN_FREE(s); }

TNDEF int tn_print(tn_tensor *t) {
    if (t && tn__check_cpu_dtype("tn_print", t)) return -1;
    char *s = tn_to_string(t);
    if (!s) return -1;
    puts(s);
    tn_string_free(s);
    return 0;
}
