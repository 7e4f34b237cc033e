/* ---- pooling over 3 spatial dims, and window maxima over any windows ----
   Maxima (max_pool3d, adaptive_max_pool3d, fractional_max_pool2d/3d) gather each window's
   positions with one index_select per dim, by a table of the window's in-range positions
   (a short window repeats its last one, which cannot change a maximum or its first
   position), and take tn_max_dim over them: the gradient reaches the first largest value in
   (d, h, w) order as PyTorch's scan does, and is differentiable again. Averages
   (avg_pool3d, adaptive_avg_pool3d) are separable: one [out, in] matrix per dim, each
   row holding the window's weights, applied by matmul. */

/* Windows along one spatial dim: output o covers the positions start[o] + k * dil below
   end[o] that lie in [0, in). */
typedef struct tn__wdim { int64_t in, out, dil, *start, *end; } tn__wdim;
/* The window tables of one dim: positions [out * K] (K: the widest window's count) as an
   int64 tensor on the CPU, K in *K. NULL with an error when a window has no position in
   range (the caller's geometry forbids it) or memory runs out. */
static tn_tensor *tn__wdim_positions(const char *fn, const tn__wdim *w, int64_t *K) {
    int64_t k = 1;
    for (int64_t o = 0; o < w->out; o++) {
        int64_t first = w->start[o] >= 0 ? w->start[o] : w->start[o] + (-w->start[o] + w->dil - 1) / w->dil * w->dil;
        int64_t end = TN__MIN(w->end[o], w->in);
        if (first >= end) return (tn_tensor *)tn__error("%s: a pooling window lies entirely in the padding", fn);
        k = TN__MAX(k, (end - first + w->dil - 1) / w->dil);
    }
    tn_tensor *t = tn__new_checked(fn, TN_SHAPE(w->out, k), TN_I64);
    if (!t) return NULL;
    int64_t *pos = (int64_t *)tn_data_ptr(t);
    for (int64_t o = 0; o < w->out; o++) {
        int64_t first = w->start[o] >= 0 ? w->start[o] : w->start[o] + (-w->start[o] + w->dil - 1) / w->dil * w->dil, last = first;
        int64_t end = TN__MIN(w->end[o], w->in);
        for (int64_t j = 0; j < k; j++) {
            if (first + j * w->dil < end) last = first + j * w->dil;
            pos[o * k + j] = last;
        }
    }
    *K = k;
    return tn__own(t);
}
/* The maximum of each window of x [N, C, *] (nsp spatial dims, 1 to 3) and, when indices is
   not NULL, its position flat over each input volume (int64). */
static tn_tensor *tn__window_max(const char *fn, tn_tensor *x, int nsp, const tn__wdim *dims, tn_tensor **indices) {
    tn_tensor *pos[3];
    int64_t K[3], out[3], in[3], Kall = 1;
    for (int i = 0; i < nsp; i++) {
        if (!(pos[i] = tn__wdim_positions(fn, &dims[i], &K[i]))) return NULL;
        out[i] = dims[i].out; in[i] = dims[i].in;
        Kall = tn__mul_sat(Kall, K[i]);
    }
    const int64_t N = x->shape[0], C = x->shape[1];
    int64_t wshape[TN_MAX_DIMS], perm[TN_MAX_DIMS], vshape[TN_MAX_DIMS];
    wshape[0] = vshape[0] = N; wshape[1] = vshape[1] = C; perm[0] = 0; perm[1] = 1;
    tn_tensor *y = x;
    for (int i = 0; i < nsp; i++) {
        y = tn_index_select(y, 2 + i, tn_to(tn_reshape(pos[i], TN_SHAPE(-1)), x->device));   /* [.., out_i * K_i, ..] */
        wshape[2 + 2 * i] = out[i]; wshape[3 + 2 * i] = K[i];
        perm[2 + i] = 2 + 2 * i; perm[2 + nsp + i] = 3 + 2 * i;
        vshape[2 + i] = out[i];
    }
    vshape[2 + nsp] = Kall;
    /* [N, C, o0, k0, o1, k1, ..] -> [N, C, o0, o1, .., k0 * k1 * ..] */
    y = tn_reshape(tn_permute(tn_reshape(y, wshape, 2 + 2 * nsp), perm, 2 + 2 * nsp), vshape, 3 + nsp);
    tn_tensor *kidx = NULL, *v = tn_max_dim(y, -1, indices ? &kidx : NULL);
    if (!v || !indices) return v;
    /* flat input positions of every (window, k): [1, 1, o0, o1, .., K] */
    int64_t nw = 1, fshape[TN_MAX_DIMS];
    for (int i = 0; i < nsp; i++) { nw = tn__mul_sat(nw, out[i]); fshape[2 + i] = out[i]; }
    fshape[0] = fshape[1] = 1; fshape[2 + nsp] = Kall;
    tn_tensor *flat = tn__new_checked(fn, fshape, 3 + nsp, TN_I64);
    if (!flat) return NULL;
    tn__own(flat);
    int64_t *fp = (int64_t *)tn_data_ptr(flat);
    const int64_t *p0 = (const int64_t *)tn_data_ptr(pos[0]), *p1 = nsp > 1 ? (const int64_t *)tn_data_ptr(pos[1]) : NULL,
                  *p2 = nsp > 2 ? (const int64_t *)tn_data_ptr(pos[2]) : NULL;
    for (int64_t wi = 0; wi < nw; wi++) {
        int64_t o[3] = {wi, 0, 0}, r = wi;   /* the window's (o0, o1, o2) */
        for (int i = nsp - 1; i >= 0; i--) { o[i] = r % out[i]; r /= out[i]; }
        for (int64_t k = 0; k < Kall; k++) {
            int64_t kk[3] = {k, 0, 0}, q = k, f;
            for (int i = nsp - 1; i >= 0; i--) { kk[i] = q % K[i]; q /= K[i]; }
            f = p0[o[0] * K[0] + kk[0]];
            if (nsp > 1) f = f * in[1] + p1[o[1] * K[1] + kk[1]];
            if (nsp > 2) f = f * in[2] + p2[o[2] * K[2] + kk[2]];
            fp[wi * Kall + k] = f;
        }
    }
    vshape[2 + nsp] = Kall;
    tn_tensor *fe = tn_expand(tn_to(flat, x->device), vshape, 3 + nsp);
    *indices = tn_squeeze_dim(tn_gather(fe, -1, tn_unsqueeze(kidx, -1)), -1);
    return *indices ? v : NULL;
}
/* An [out, in] matrix from row-major doubles, in like's dtype and on its device. */
static tn_tensor *tn__dim_matrix(const double *m, int64_t out, int64_t in, const tn_tensor *like) {
    return tn_to(tn_to_dtype(tn_from_data(m, TN_SHAPE(out, in), TN_F64), like->dtype), like->device);
}
/* y with spatial dim d (of nd) replaced by m [out, in] applied along it. */
static tn_tensor *tn__along(tn_tensor *y, int d, int nd, tn_tensor *m) {
    if (d == nd - 1) return tn_matmul(y, tn_t(m));
    if (d == nd - 2) return tn_matmul(m, y);
    return tn_transpose(tn_matmul(m, tn_transpose(y, d, nd - 2)), d, nd - 2);
}

/* ---- the 3-d poolings ---- */
static const char *const tn__pool3d_options[2] = {"kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override",
                                                  "kernel_size, stride, padding, dilation, return_indices, ceil_mode"};
/* tn_pool3d_opts -> kernel, stride, padding, dilation per dim, checked; divisor 0: none. */
static int tn__pool3d_args(const char *fn, const char *what, bool max, int64_t ksize, const tn_pool3d_opts *o, int64_t k[3], int64_t s[3], int64_t p[3],
                           int64_t d[3], int64_t *divisor) {
    const tn_pool3d_opts def = TN_DEFAULTS(tn_pool3d_opts);
    if (tn__kw_only(fn, what, tn__kw_pool3d, TN__KW_N(tn__kw_pool3d), o, &def, tn__pool3d_options[max])) return -1;
    if (o->stride != TN_NONE && o->stride <= 0 && !o->stride_dhw.n) return TN__FAIL_INT("%s: stride should be greater than zero (None: the kernel size)", fn);
    if (tn__kw_triple(fn, "kernel_size", ksize, &o->kernel_size_dhw, k) || tn__kw_triple(fn, "padding", o->padding, &o->padding_dhw, p) ||
        tn__kw_triple(fn, "dilation", o->dilation, &o->dilation_dhw, d))
        return -1;
    if (o->stride == TN_NONE && !o->stride_dhw.n) memcpy(s, k, 3 * sizeof(int64_t));
    else if (tn__kw_triple(fn, "stride", o->stride, &o->stride_dhw, s)) return -1;
    for (int i = 0; i < 3; i++) {
        if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0)
            return TN__FAIL_INT("%s: kernel_size, stride and dilation must be greater than zero (got %lld, %lld, %lld)", fn, (long long)k[i], (long long)s[i], (long long)d[i]);
        if (k[i] > INT32_MAX || s[i] > INT32_MAX || d[i] > INT32_MAX || p[i] > INT32_MAX)
            return TN__FAIL_INT("%s: kernel_size, stride, padding and dilation must be below 2^31", fn);
        if (p[i] < 0 || p[i] > (max ? (d[i] * (k[i] - 1) + 1) / 2 : k[i] / 2))
            return TN__FAIL_INT("%s: pad should be at most half of %skernel size, but got pad=%lld and kernel_size=%lld", fn, max ? "effective " : "",
                                (long long)p[i], (long long)k[i]);
    }
    if (o->divisor_override != TN_NONE && o->divisor_override == 0) return TN__FAIL_INT("%s: divisor must be not zero", fn);
    *divisor = o->divisor_override == TN_NONE ? 0 : o->divisor_override;
    return 0;
}
/* x [N, C, D, H, W] or [C, D, H, W] as 5-d; NULL with PyTorch's message otherwise. */
static tn_tensor *tn__pool3d_input(const char *fn, tn_tensor *x) {
    if (x->ndim != 4 && x->ndim != 5) return (tn_tensor *)tn__error("%s: non-empty 4D or 5D (batch mode) tensor expected for input, got %s", fn, TN__SHAPE(x));
    return tn__pool_input(fn, x, 3);
}
/* The output counts of a windowed pooling; -1 with PyTorch's message when one is below 1. */
static int tn__pool3d_counts(const char *fn, tn_tensor *x5, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d, bool ceil_mode, int64_t *out) {
    for (int i = 0; i < 3; i++) out[i] = tn__window_count(x5->shape[2 + i], k[i], p[i], s[i], d[i], ceil_mode);
    if (out[0] < 1 || out[1] < 1 || out[2] < 1)
        return TN__FAIL_INT("%s: Given input size: (%lldx%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lldx%lld). Output size is too small", fn,
                            (long long)x5->shape[1], (long long)x5->shape[2], (long long)x5->shape[3], (long long)x5->shape[4], (long long)x5->shape[1],
                            (long long)TN__MAX(out[0], 0), (long long)TN__MAX(out[1], 0), (long long)TN__MAX(out[2], 0));
    return tn__check_shape(fn, TN_SHAPE(x5->shape[0], x5->shape[1], out[0], out[1], out[2]));
}
/* Undo tn__pool_input for a 3-d pooling's result (and indices). */
static tn_tensor *tn__pool3d_output(tn_tensor *y, tn_tensor *x) { return x->ndim == 5 ? y : tn_squeeze_dim(y, 0); }
/* Tables of start and end positions for out windows of dim i, filled by the caller: 2 * out each. */
static int tn__wdims_alloc(const char *fn, tn__wdim *w, int n, int64_t **buf) {
    int64_t total = 0;
    for (int i = 0; i < n && total >= 0; i++)
        if (!tn__add_ok(total, w[i].out, &total) || !tn__add_ok(total, w[i].out, &total)) total = -1;   /* tn__malloc_n refuses it */
    if (!(*buf = (int64_t *)tn__malloc_n(fn, total, sizeof(int64_t)))) return -1;
    int64_t *q = *buf;
    for (int i = 0; i < n; i++) { w[i].start = q; w[i].end = q + w[i].out; q += 2 * w[i].out; }
    return 0;
}
static tn_tensor *tn__max_pool3d(const char *fn, tn_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d, bool ceil_mode,
                                 tn_tensor **indices) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *x5 = tn__pool3d_input(fn, x), *idx = NULL, *y = NULL;
    int64_t out[3], *buf = NULL;
    tn__wdim w[3];
    if (x5 && !tn__pool3d_counts(fn, x5, k, s, p, d, ceil_mode, out)) {
        for (int i = 0; i < 3; i++) { w[i].in = x5->shape[2 + i]; w[i].out = out[i]; w[i].dil = d[i]; }
        if (!tn__wdims_alloc(fn, w, 3, &buf)) {
            for (int i = 0; i < 3; i++)
                for (int64_t o = 0; o < out[i]; o++) { w[i].start[o] = o * s[i] - p[i]; w[i].end[o] = w[i].start[o] + d[i] * (k[i] - 1) + 1; }
            y = tn__window_max(fn, x5, 3, w, indices ? &idx : NULL);
            TN_FREE(buf);
        }
    }
    if (y && indices) *indices = tn_keep(tn__pool3d_output(idx, x));
    y = y ? tn__grad_name(tn__pool3d_output(tn__grad_name(y, "MaxPool3DWithIndicesBackward0"), x), "MaxPool3DWithIndicesBackward0") : NULL;
    return tn__scope_return(y);
}
static tn_tensor *tn__max_pool3d_kw(const char *fn, tn_tensor *x, tn_tensor **indices, int64_t ksize, const tn_pool3d_opts *o) {
    if (indices) *indices = NULL;
    int64_t k[3], st[3], pd[3], dl[3], divisor;
    if (tn__pool3d_args(fn, "max_pool3d", true, ksize, o, k, st, pd, dl, &divisor)) return NULL;
    if (o->return_indices && !indices) return (tn_tensor *)tn__error("%s: return_indices: call tn_max_pool3d_with_indices", fn);
    return TN__AS(fn, tn__max_pool3d(fn, x, k, st, pd, dl, o->ceil_mode, indices));
}
TNDEF tn_tensor *tn_max_pool3d_opts(tn_tensor *x, tn_tensor **indices, int64_t k, tn_pool3d_opts o) { return tn__max_pool3d_kw("tn_max_pool3d", x, indices, k, &o); }
TNDEF tn_tensor *tn_max_pool3d_str(tn_tensor *x, tn_tensor **indices, int64_t k, const char *options) {
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_pool3d, TN__KW_N(tn__kw_pool3d), tn__pool3d_options[1], keys);
    tn_pool3d_opts o = TN_DEFAULTS(tn_pool3d_opts);
    return tn__kw_parse("tn_max_pool3d", options, keys, n, &o, NULL) ? NULL : tn_max_pool3d_opts(x, indices, k, o);
}
/* Average pooling's matrix along one dim: row o holds 1/divisor over the window's in-range
   positions (PyTorch's divisors: the window clipped to the padded input, or to the input
   without count_include_pad; the product over dims of these is PyTorch's divide_factor).
   divisor_override: ones (the caller divides). */
static tn_tensor *tn__avg_matrix(const char *fn, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, bool count_include_pad, bool ones, const tn_tensor *like) {
    double *m = (double *)tn__malloc_n(fn, tn__mul_or(in, out, -1), sizeof(double));
    if (!m) return NULL;
    memset(m, 0, (size_t)(in * out) * sizeof(double));
    for (int64_t o = 0; o < out; o++) {
        int64_t a = o * s - p, b = TN__MIN(a + k, in + p);
        const int64_t pool = b - a;
        a = TN__MAX(a, 0); b = TN__MIN(b, in);
        const double v = ones ? 1.0 : 1.0 / (double)(count_include_pad ? pool : b - a);
        for (int64_t j = a; j < b; j++) m[o * in + j] = v;
    }
    tn_tensor *t = tn__dim_matrix(m, out, in, like);
    TN_FREE(m);
    return t;
}
static tn_tensor *tn__avg_pool3d(const char *fn, tn_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p, bool ceil_mode, bool count_include_pad,
                                 int64_t divisor) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *x5 = tn__pool3d_input(fn, x), *y = NULL;
    int64_t out[3];
    const int64_t one[3] = {1, 1, 1};
    if (x5 && !tn__pool3d_counts(fn, x5, k, s, p, one, ceil_mode, out)) {
        y = x5;
        for (int i = 0; i < 3 && y; i++) y = tn__along(y, 2 + i, 5, tn__avg_matrix(fn, x5->shape[2 + i], out[i], k[i], s[i], p[i], count_include_pad, divisor != 0, x5));
        if (divisor) y = tn_div_scalar(y, (double)divisor);
    }
    y = y ? tn_contiguous(tn__grad_name(y, "AvgPool3DBackward0")) : NULL;
    return tn__scope_return(y ? tn__grad_name(tn__pool3d_output(y, x), "AvgPool3DBackward0") : NULL);
}
TNDEF tn_tensor *tn_avg_pool3d_opts(tn_tensor *x, int64_t ksize, tn_pool3d_opts o) {
    const char *fn = "tn_avg_pool3d";
    int64_t k[3], st[3], pd[3], dl[3], divisor;
    if (tn__pool3d_args(fn, "avg_pool3d", false, ksize, &o, k, st, pd, dl, &divisor)) return NULL;
    return TN__AS(fn, tn__avg_pool3d(fn, x, k, st, pd, o.ceil_mode, o.count_include_pad, divisor));
}
TNDEF tn_tensor *tn_avg_pool3d_str(tn_tensor *x, int64_t k, const char *options) {
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_pool3d, TN__KW_N(tn__kw_pool3d), tn__pool3d_options[0], keys);
    tn_pool3d_opts o = TN_DEFAULTS(tn_pool3d_opts);
    return tn__kw_parse("tn_avg_pool3d", options, keys, n, &o, NULL) ? NULL : tn_avg_pool3d_opts(x, k, o);
}
/* Adaptive pooling over 3 dims: output sizes positive and their tables within int64. */
static tn_tensor *tn__adaptive3d_input(const char *fn, tn_tensor *x, const int64_t *out) {
    if (out[0] <= 0 || out[1] <= 0 || out[2] <= 0)
        return (tn_tensor *)tn__error("%s: output size (%lld, %lld, %lld) must be positive", fn, (long long)out[0], (long long)out[1], (long long)out[2]);
    tn_tensor *x5 = tn__pool3d_input(fn, x);
    if (!x5 || tn__check_shape(fn, TN_SHAPE(x5->shape[0], x5->shape[1], out[0], out[1], out[2]))) return NULL;
    for (int i = 0; i < 3; i++)
        if (tn__adaptive_fits(fn, x5->shape[2 + i], out[i])) return NULL;
    return x5;
}
static tn_tensor *tn__adaptive_avg_pool3d(const char *fn, tn_tensor *x, const int64_t *out) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *x5 = tn__adaptive3d_input(fn, x, out), *y = NULL;
    const bool global = out[0] == 1 && out[1] == 1 && out[2] == 1;
    if (x5 && global) y = tn_mean_dims(x5, TN_SHAPE(2, 3, 4), .keepdim = true);   /* MeanBackward1, as PyTorch */
    else if (x5) {
        y = x5;
        for (int i = 0; i < 3 && y; i++)
            if (x5->shape[2 + i] != out[i]) y = tn__along(y, 2 + i, 5, tn__resize_matrix(fn, 0, x5->shape[2 + i], out[i], 0, false, x5));
        y = tn__grad_name(y == x5 ? tn_clone(y) : tn_contiguous(y), "AdaptiveAvgPool3DBackward0");
    }
    y = y ? tn__pool3d_output(y, x) : NULL;
    return tn__scope_return(global ? y : tn__grad_name(y, "AdaptiveAvgPool3DBackward0"));
}
TNDEF tn_tensor *tn_adaptive_avg_pool3d(tn_tensor *x, int64_t od, int64_t oh, int64_t ow) {
    const int64_t out[3] = {od, oh, ow};
    return TN__AS("tn_adaptive_avg_pool3d", tn__adaptive_avg_pool3d("tn_adaptive_avg_pool3d", x, out));
}
static tn_tensor *tn__adaptive_max_pool3d(const char *fn, tn_tensor *x, const int64_t *out, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *x5 = tn__adaptive3d_input(fn, x, out), *idx = NULL, *y = NULL;
    int64_t *buf = NULL;
    tn__wdim w[3];
    if (x5) {
        for (int i = 0; i < 3; i++) { w[i].in = x5->shape[2 + i]; w[i].out = out[i]; w[i].dil = 1; }
        if (!tn__wdims_alloc(fn, w, 3, &buf)) {
            for (int i = 0; i < 3; i++) tn__adaptive_table(w[i].in, out[i], w[i].start, w[i].end);
            y = tn__window_max(fn, x5, 3, w, indices ? &idx : NULL);
            TN_FREE(buf);
        }
    }
    if (y && indices) *indices = tn_keep(tn__pool3d_output(idx, x));
    return tn__scope_return(y ? tn__grad_name(tn__pool3d_output(tn__grad_name(y, "AdaptiveMaxPool3DBackward0"), x), "AdaptiveMaxPool3DBackward0") : NULL);
}
TNDEF tn_tensor *tn_adaptive_max_pool3d(tn_tensor *x, int64_t od, int64_t oh, int64_t ow, tn_tensor **indices) {
    const int64_t out[3] = {od, oh, ow};
    return TN__AS("tn_adaptive_max_pool3d", tn__adaptive_max_pool3d("tn_adaptive_max_pool3d", x, out, indices));
}
