/* ---- resizing ---- */
/* F.interpolate's modes, by their names' order. */
enum { TN__NEAREST, TN__NEAREST_EXACT, TN__LINEAR, TN__BILINEAR, TN__BICUBIC, TN__TRILINEAR, TN__AREA };
static const char *const tn__interp_modes[7] = {"nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"};
/* PyTorch's cubic convolution weights (A = -0.75) of the 4 taps around t in [0, 1). */
static void tn__cubic_coeffs(double t, double c[4]) {
    const double A = -0.75, x1 = t, x2 = 1 - t;
#define TN__CC1(x) (((A + 2) * (x) - (A + 3)) * (x) * (x) + 1)
#define TN__CC2(x) ((((x) * A - 5 * A) * (x) + 8 * A) * (x) - 4 * A)
    c[0] = TN__CC2(x1 + 1); c[1] = TN__CC1(x1); c[2] = TN__CC1(x2); c[3] = TN__CC2(x2 + 1);
#undef TN__CC1
#undef TN__CC2
}
/* Bicubic resizing's [out, in] matrix: 4 taps per output, their indices clamped into the
   input as PyTorch's upsample_get_value_bounded (clamped taps add up). */
static tn_tensor *tn__cubic_matrix(const char *fn, int64_t in, int64_t out, double scale, bool align_corners, const tn_tensor *like) {
    double *m = (double *)tn__malloc_n(fn, tn__mul_or(in, out, -1), sizeof(double));
    if (!m) return NULL;
    memset(m, 0, (size_t)(in * out) * sizeof(double));
    for (int64_t o = 0; o < out; o++) {
        const double src = align_corners ? (double)o * scale : ((double)o + 0.5) * scale - 0.5;   /* cubic: not clamped at 0 */
        const double f = floor(src);
        double c[4];
        tn__cubic_coeffs(src - f, c);
        for (int k = 0; k < 4; k++) {
            double j = f - 1 + k;
            j = j < 0 ? 0 : j > (double)(in - 1) ? (double)(in - 1) : j;   /* clamped before converting */
            m[o * in + (int64_t)j] += c[k];
        }
    }
    tn_tensor *t = tn__dim_matrix(m, out, in, like);
    TN_FREE(m);
    return t;
}
/* nearest and nearest-exact's source index of each output, in float as PyTorch computes it. */
static tn_tensor *tn__nearest_table(const char *fn, int64_t in, int64_t out, const double *sf, bool exact, tn_device device) {
    int64_t *ix = (int64_t *)tn__malloc_n(fn, out, sizeof(int64_t));
    if (!ix) return NULL;
    const float scale = sf && *sf > 0 ? (float)(1.0 / *sf) : (float)in / (float)out;
    for (int64_t o = 0; o < out; o++) {
        const float v = floorf(exact ? ((float)o + 0.5f) * scale : (float)o * scale);
        ix[o] = v < (float)(in - 1) ? (int64_t)v : in - 1;   /* clamped before converting */
    }
    tn_tensor *t = tn_to(tn_from_data(ix, TN_SHAPE(out), TN_I64), device);
    TN_FREE(ix);
    return t;
}
/* size / scale_factor: nsize / nsf values (0: None; 1: every spatial dim, as PyTorch's int
   or float; else one per spatial dim); align_corners_opt: -1 None, 0 False, 1 True */
static tn_tensor *tn__interpolate_impl(tn_tensor *x, const int64_t *sizes, int nsize, const double *sfs, int nsf, const char *mode, int align_corners_opt) {
    const char *fn = "tn_interpolate";
    TN__CHECK_NULL(x);
    int m = -1;
    for (int i = 0; mode && i < 7; i++) if (!strcmp(mode, tn__interp_modes[i])) m = i;
    if (m < 0) return (tn_tensor *)tn__error("%s: mode '%s' is not supported (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area)", fn, mode ? mode : "(null)");
    const int nsp = x->ndim - 2, need = m == TN__LINEAR ? 1 : m == TN__BILINEAR || m == TN__BICUBIC ? 2 : m == TN__TRILINEAR ? 3 : 0;
    if (nsp < 1 || nsp > 3 || (need && nsp != need))
        return (tn_tensor *)tn__error("%s: mode '%s' expects a %s input, got %s", fn, mode, need == 1 ? "3-d [N, C, W]" : need == 2 ? "4-d [N, C, H, W]" : need == 3 ? "5-d [N, C, D, H, W]" : "3-d, 4-d or 5-d", TN__SHAPE(x));
    if (!nsize == !nsf) return (tn_tensor *)tn__error("%s: give exactly one of size and scale_factor", fn);
    if (nsize > 1 && nsize != nsp) return (tn_tensor *)tn__error("%s: input %s has %d spatial dims, but size has %d values", fn, TN__SHAPE(x), nsp, nsize);
    if (nsf > 1 && nsf != nsp) return (tn_tensor *)tn__error("%s: input %s has %d spatial dims, but scale_factor has %d values", fn, TN__SHAPE(x), nsp, nsf);
    int64_t size_v[3];
    double sf_v[3];
    for (int i = 0; i < nsp; i++) {
        if (nsize) size_v[i] = sizes[nsize == 1 ? 0 : i];
        if (nsf) sf_v[i] = sfs[nsf == 1 ? 0 : i];
    }
    const int64_t *size = nsize ? size_v : NULL;
    const double *sf = nsf ? sf_v : NULL;
    const bool interp = m >= TN__LINEAR && m <= TN__TRILINEAR;
    /* PyTorch refuses an explicit align_corners (False too) for the other modes */
    if (!interp && align_corners_opt != -1) return (tn_tensor *)tn__error("%s: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear", fn);
    const bool align_corners = align_corners_opt == 1;   /* None is False */
    if (tn__nn_check(fn, x, "input")) return NULL;
    int64_t out[3], oshape[5] = {x->shape[0], x->shape[1], 0, 0, 0};
    double scale[3];
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[2 + i];
        if (sf && !(sf[i] > 0)) return (tn_tensor *)tn__error("%s: scale_factor must be positive, got %g", fn, sf[i]);
        if (size) out[i] = size[i];
        else if (tn__double_to_int64(fn, "the output size from scale_factor", floor((double)in * sf[i]), &out[i])) return NULL;
        if (out[i] <= 0 || in <= 0) return (tn_tensor *)tn__error("%s: input %s and output size %lld must be positive", fn, TN__SHAPE(x), (long long)out[i]);
        oshape[2 + i] = out[i];
        /* PyTorch's area_pixel_compute_scale: a given scale_factor is used as is */
        scale[i] = interp && align_corners ? (out[i] > 1 ? (double)(in - 1) / (double)(out[i] - 1) : 0) : sf ? 1 / sf[i] : (double)in / (double)out[i];
        if (m == TN__AREA && tn__adaptive_fits(fn, in, out[i])) return NULL;
    }
    /* the output's size first: the index tables and matrices below are sized by it */
    if (tn__check_shape(fn, oshape, x->ndim)) return NULL;
    tn_scope_begin();
    tn_tensor *y = x;
    for (int i = 0; i < nsp && y; i++) {
        const int64_t in = x->shape[2 + i];
        if (m == TN__NEAREST || m == TN__NEAREST_EXACT) y = tn_index_select(y, 2 + i, tn__nearest_table(fn, in, out[i], sf ? &sf[i] : NULL, m == TN__NEAREST_EXACT, x->device));
        else if (m == TN__BICUBIC) y = tn__along(y, 2 + i, x->ndim, tn__cubic_matrix(fn, in, out[i], scale[i], align_corners, x));
        else if (out[i] != in)   /* an unchanged size is copied whatever scale_factor says, as PyTorch's linear and area modes */
            y = tn__along(y, 2 + i, x->ndim, tn__resize_matrix(fn, m == TN__AREA ? 0 : 1, in, out[i], scale[i], align_corners, x));
    }
    y = y == x ? tn_clone(x) : tn_contiguous(y);
    static const char *const names[7][3] = {
        {"UpsampleNearest1DBackward1", "UpsampleNearest2DBackward1", "UpsampleNearest3DBackward1"},
        {"UpsampleNearestExact1DBackward1", "UpsampleNearestExact2DBackward1", "UpsampleNearestExact3DBackward1"},
        {"UpsampleLinear1DBackward1", NULL, NULL}, {NULL, "UpsampleBilinear2DBackward1", NULL}, {NULL, "UpsampleBicubic2DBackward1", NULL},
        {NULL, NULL, "UpsampleTrilinear3DBackward1"}, {"SqueezeBackward1", "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0"}};
    return tn__scope_return(tn__grad_name(y, names[m][nsp - 1]));
}
TNDEF tn_tensor *tn_interpolate_opts(tn_tensor *x, tn_interpolate_fn_opts o) {
    return TN__AS("tn_interpolate", tn__interpolate_impl(x, o.size.v, o.size.n, o.scale_factor.v, o.scale_factor.n, o.mode, o.align_corners));
}
TNDEF tn_tensor *tn_interpolate_str(tn_tensor *x, const char *options) {
    tn_interpolate_fn_opts o = TN_DEFAULTS(tn_interpolate_fn_opts);
    uint64_t seen;
    if (tn__kw_parse("tn_interpolate", options, tn__kw_interpolate, TN__KW_N(tn__kw_interpolate), &o, &seen)) return NULL;
    tn_tensor *r = tn_interpolate_opts(x, o);
    tn__kw_release(tn__kw_interpolate, TN__KW_N(tn__kw_interpolate), &o, seen);   /* the mode's copy */
    return r;
}
static tn_tensor *tn__pixel_shuffle(const char *fn, tn_tensor *x, int64_t r, bool inverse) {
    TN__CHECK_NULL(x);
    if (x->ndim < 3) return (tn_tensor *)tn__error("%s: expected input [*, C, H, W], got %s", fn, TN__SHAPE(x));
    if (r <= 0) return (tn_tensor *)tn__error("%s: factor must be greater than 0, got %lld", fn, (long long)r);
    /* the leading dims as one (an 8-d input needs 5 + 1 dims, not 10): [L, C, H, W] */
    const int nd = x->ndim, lead = 1;
    const int64_t C = x->shape[nd - 3], H = x->shape[nd - 2], W = x->shape[nd - 1], L = tn__numel(x->shape, nd - 3);
    int64_t rr, big;   /* r * r, and the size that grows by it (C * r * r, or H * r and W * r): checked products */
    if (!tn__mul_ok(r, r, &rr) || (inverse && !tn__mul_ok(C, rr, &big)) || (!inverse && (!tn__mul_ok(H, r, &big) || !tn__mul_ok(W, r, &big))))
        return (tn_tensor *)tn__error("%s: factor %lld is too large for input %s (the sizes overflow int64)", fn, (long long)r, TN__SHAPE(x));
    if (!inverse && C % rr) return (tn_tensor *)tn__error("%s: the channel count %lld of input %s must be divisible by the square of upscale_factor (%lld)", fn, (long long)C, TN__SHAPE(x), (long long)rr);
    if (inverse && (H % r || W % r)) return (tn_tensor *)tn__error("%s: height and width of input %s must be divisible by downscale_factor %lld", fn, TN__SHAPE(x), (long long)r);
    int64_t s1[TN_MAX_DIMS], perm[TN_MAX_DIMS], s2[TN_MAX_DIMS], out[TN_MAX_DIMS];
    s1[0] = s2[0] = L; perm[0] = 0;
    if (!inverse) { /* [*, C', r, r, H, W] -> [*, C', H, r, W, r] */
        int64_t a[5] = {C / rr, r, r, H, W}, p[5] = {0, 3, 1, 4, 2}, b[3] = {C / rr, H * r, W * r};
        for (int d = 0; d < 5; d++) { s1[lead + d] = a[d]; perm[lead + d] = lead + p[d]; }
        for (int d = 0; d < 3; d++) s2[lead + d] = b[d];
    } else {        /* [*, C, H', r, W', r] -> [*, C, r, r, H', W'] */
        int64_t a[5] = {C, H / r, r, W / r, r}, p[5] = {0, 2, 4, 1, 3}, b[3] = {C * rr, H / r, W / r};
        for (int d = 0; d < 5; d++) { s1[lead + d] = a[d]; perm[lead + d] = lead + p[d]; }
        for (int d = 0; d < 3; d++) s2[lead + d] = b[d];
    }
    memcpy(out, x->shape, (size_t)(nd - 3) * sizeof(int64_t));
    memcpy(out + nd - 3, s2 + 1, 3 * sizeof(int64_t));
    tn_scope_begin();
    tn_tensor *y = tn_reshape(tn_reshape(tn_permute(tn_reshape(x, s1, lead + 5), perm, lead + 5), s2, lead + 3), out, nd);
    if (y && tn_same_storage(y, x)) y = tn_clone(y);   /* factor 1: a new tensor, as PyTorch */
    return tn__scope_return(tn__grad_name(y, inverse ? "PixelUnshuffleBackward0" : "PixelShuffleBackward0"));
}
TNDEF tn_tensor *tn_pixel_shuffle(tn_tensor *x, int64_t r) { return TN__AS("tn_pixel_shuffle", tn__pixel_shuffle("tn_pixel_shuffle", x, r, false)); }
TNDEF tn_tensor *tn_pixel_unshuffle(tn_tensor *x, int64_t r) { return TN__AS("tn_pixel_unshuffle", tn__pixel_shuffle("tn_pixel_unshuffle", x, r, true)); }
