/* ---- resizing ---- */
static tn_tensor *tn__interpolate_impl(tn_tensor *x, const int64_t *size, const double *sf, const char *mode, bool align_corners) {
    const char *fn = "tn_interpolate";
    TN__CHECK_NULL(x);
    int nsp = x->ndim - 2, m = !mode ? -1 : !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "linear") ? 1 : !strcmp(mode, "bilinear") ? 2 : -1;
    if (m < 0) return (tn_tensor *)tn__error("%s: mode '%s' is not supported (nearest, linear, bilinear)", fn, mode ? mode : "(null)");
    if (nsp < 1 || nsp > 2 || (m == 1 && nsp != 1) || (m == 2 && nsp != 2))
        return (tn_tensor *)tn__error("%s: mode '%s' expects a %s input, got %s", fn, mode, m == 1 ? "3-d [N, C, W]" : m == 2 ? "4-d [N, C, H, W]" : "3-d or 4-d", TN__SHAPE(x));
    if (!size == !sf) return (tn_tensor *)tn__error("%s: give exactly one of size and scale_factor", fn);
    if (m == 0 && align_corners) return (tn_tensor *)tn__error("%s: align_corners option can only be set with the interpolating modes: linear | bilinear", fn);
    if (tn__nn_check(fn, x, "input")) return NULL;
    int64_t out[2], oshape[4] = {x->shape[0], x->shape[1], 0, 0};
    double scale[2];
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[2 + i];
        if (sf && !(sf[i] > 0)) return (tn_tensor *)tn__error("%s: scale_factor must be positive, got %g", fn, sf[i]);
        if (size) out[i] = size[i];
        else if (tn__double_to_int64(fn, "the output size from scale_factor", floor((double)in * sf[i]), &out[i])) return NULL;
        if (out[i] <= 0 || in <= 0) return (tn_tensor *)tn__error("%s: input %s and output size %lld must be positive", fn, TN__SHAPE(x), (long long)out[i]);
        oshape[2 + i] = out[i];
        /* PyTorch's area_pixel_compute_scale: a given scale_factor is used as is */
        scale[i] = m && align_corners ? (out[i] > 1 ? (double)(in - 1) / (double)(out[i] - 1) : 0) : sf ? 1 / sf[i] : (double)in / (double)out[i];
    }
    /* the output's size first: the index tables and matrices below are sized by it */
    if (tn__check_shape(fn, oshape, x->ndim)) return NULL;
    tn_scope_begin();
    tn_tensor *y = x;
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[2 + i];
        if (m == 0) {
            int64_t *ix = (int64_t *)tn__malloc_n(fn, out[i], sizeof(int64_t));
            if (!ix) { tn_scope_end(); return NULL; }
            for (int64_t o = 0; o < out[i]; o++) { double s = floor((double)o * scale[i]); ix[o] = s < (double)(in - 1) ? (int64_t)s : in - 1; }   /* clamped before converting */
            y = tn_index_select(y, 2 + i, tn_to(tn_from_data(ix, TN_SHAPE(out[i]), TN_I64), y->device));
            TN_FREE(ix);
            if (!y) break;   /* out of memory: the next dim would read y */
        } else if (out[i] != in) {   /* an unchanged size is copied whatever scale_factor says, as PyTorch */
            tn_tensor *mat = tn__resize_matrix(fn, 1, in, out[i], scale[i], align_corners, x);
            y = i == nsp - 1 ? tn_matmul(y, tn_t(mat)) : tn_matmul(mat, y);   /* last dim from the right, H from the left */
        }
    }
    y = y == x ? tn_clone(x) : y;
    return tn__scope_return(tn__grad_name(y, m == 0 ? (nsp == 1 ? "UpsampleNearest1DBackward1" : "UpsampleNearest2DBackward1")
                                             : m == 1 ? "UpsampleLinear1DBackward1" : "UpsampleBilinear2DBackward1"));
}
TNDEF tn_tensor *tn_interpolate(tn_tensor *x, const int64_t *size, const double *scale_factor, const char *mode, bool align_corners) {
    return TN__AS("tn_interpolate", tn__interpolate_impl(x, size, scale_factor, mode, align_corners));
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
