/* ---- grid_sample, affine_grid ----
   Sampling is gathers of the input at the integer taps around each grid point, weighted by
   the distances to them: the source coordinates are library ops on the grid (unnormalised,
   clamped or reflected as PyTorch's compute_coordinates), the taps their floors (or
   roundings) taken without gradient, so the result differentiates in the input (gather's
   backward) and in the grid (the weights'), to any order. */
/* PyTorch's reflect_coordinates of c into [twice_low / 2, twice_high / 2], then its clip. */
static tn_tensor *tn__grid_reflect(tn_tensor *c, double twice_low, double twice_high, int64_t size) {
    if (twice_low == twice_high) return tn_mul_scalar(c, 0);
    const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
    tn_tensor *a = tn_abs(tn_sub_scalar(c, lo));
    tn_tensor *flips = tn_floor(tn_div_scalar(tn_detach(a), span));
    tn_tensor *extra = tn_sub(a, tn_mul_scalar(flips, span));   /* fmod(a, span) with a's gradient */
    tn_tensor *even = tn_eq_scalar(tn_remainder_scalar(flips, 2), 0);
    tn_tensor *r = tn_where(even, tn_add_scalar(extra, lo), tn_add_scalar(tn_rsub_scalar(extra, span), lo));
    return tn_clamp(r, .min = 0, .max = (double)(size - 1));
}
/* The unpadded source coordinate along a dim of size from the normalised grid coordinate g. */
static tn_tensor *tn__grid_unnormalize(tn_tensor *g, int64_t size, bool align) {
    return align ? tn_mul_scalar(tn_add_scalar(g, 1), (double)(size - 1) / 2) : tn_div_scalar(tn_sub_scalar(tn_mul_scalar(tn_add_scalar(g, 1), (double)size), 1), 2);
}
/* A source coordinate c brought inside by the padding mode (PyTorch's compute_coordinates). */
static tn_tensor *tn__grid_pad(tn_tensor *c, int64_t size, int padding, bool align) {
    if (padding == TN_GRID_BORDER) return tn_clamp(c, .min = 0, .max = (double)(size - 1));
    if (padding == TN_GRID_REFLECTION) return align ? tn__grid_reflect(c, 0, 2.0 * (double)(size - 1), size) : tn__grid_reflect(c, -1, 2.0 * (double)size - 1, size);
    return c;
}
/* PyTorch's cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from t in [0, 1). */
static tn_tensor *tn__grid_cubic_weight(tn_tensor *t, int tap) {
    const double A = -0.75;
    if (tap == 0 || tap == 1) {   /* |d| <= 1: ((A + 2) d - (A + 3)) d^2 + 1, d = t or 1 - t */
        tn_tensor *d = tap == 0 ? t : tn_rsub_scalar(t, 1);
        return tn_add_scalar(tn_mul(tn_sub_scalar(tn_mul_scalar(d, A + 2), A + 3), tn_mul(d, d)), 1);
    }
    /* 1 < |d| < 2: ((A d - 5A) d + 8A) d - 4A, d = t + 1 or 2 - t */
    tn_tensor *d = tap == -1 ? tn_add_scalar(t, 1) : tn_rsub_scalar(t, 2);
    return tn_sub_scalar(tn_mul(tn_add_scalar(tn_mul(tn_sub_scalar(tn_mul_scalar(d, A), 5 * A), d), 8 * A), d), 4 * A);
}
static tn_tensor *tn__grid_sample_impl(tn_tensor *x, tn_tensor *grid, tn_grid_opts o) {
    const char *fn = "tn_grid_sample";
    TN__CHECK_NULL(x, grid);
    if ((x->ndim != 4 && x->ndim != 5) || grid->ndim != x->ndim)
        return (tn_tensor *)tn__error("%s: grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with sizes %s and grid with sizes %s",
                                      fn, TN__SHAPE(x), TN__SHAPE(grid));
    const int nsp = x->ndim - 2;
    if (grid->shape[0] != x->shape[0])
        return (tn_tensor *)tn__error("%s: grid_sampler(): expected grid and input to have same batch size, but got input with sizes %s and grid with sizes %s", fn, TN__SHAPE(x), TN__SHAPE(grid));
    if (grid->shape[grid->ndim - 1] != nsp)
        return (tn_tensor *)tn__error("%s: grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes %s", fn, nsp, TN__SHAPE(grid));
    for (int d = 2; d < x->ndim; d++)
        if (x->shape[d] <= 0)
            return (tn_tensor *)tn__error("%s: grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes %s with dimension %d being empty", fn, TN__SHAPE(x), d);
    if (o.mode < 0 || o.mode > TN_GRID_BICUBIC || o.padding_mode < 0 || o.padding_mode > TN_GRID_REFLECTION)
        return (tn_tensor *)tn__error("%s: mode %d or padding_mode %d is out of range", fn, o.mode, o.padding_mode);
    if (o.mode == TN_GRID_BICUBIC && nsp != 2)
        return (tn_tensor *)tn__error("%s: grid_sampler(): bicubic interpolation only supports 4D input, got input with sizes %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, grid, "grid")) return NULL;
    const int64_t N = x->shape[0], C = x->shape[1], *in = x->shape + 2, *out = grid->shape + 1, V = tn__numel(in, nsp), L = tn__numel(out, nsp);
    int64_t oshape[5] = {N, C, 0, 0, 0};
    for (int i = 0; i < nsp; i++) oshape[2 + i] = out[i];
    if (tn__check_shape(fn, oshape, x->ndim)) return NULL;
    tn_scope_begin();
    /* coords[i]: the source coordinate along spatial dim i (D, H, W order); the grid's last
       dim lists them as (x, y[, z]), the reverse */
    tn_tensor *coord[3], *xf = tn_reshape(x, TN_SHAPE(N, C, V)), *y = NULL;
    /* bicubic pads each tap, not the coordinate (PyTorch's get_value_bounded) */
    for (int i = 0; i < nsp; i++) {
        coord[i] = tn__grid_unnormalize(tn_select(grid, -1, nsp - 1 - i), in[i], o.align_corners);
        if (o.mode != TN_GRID_BICUBIC) coord[i] = tn__grid_pad(coord[i], in[i], o.padding_mode, o.align_corners);
    }
    const int corners = o.mode == TN_GRID_NEAREST ? 1 : o.mode == TN_GRID_BICUBIC ? 16 : 1 << nsp;
    tn_tensor *base[3], *frac[3];
    for (int i = 0; i < nsp; i++) {   /* the first tap: floor (or the nearest), from finite values */
        /* bilinear/nearest coordinates far outside read only zeros: clamp them near; bicubic's
           taps are padded one by one, so its coordinates keep their distance to the taps */
        const double lo = o.mode == TN_GRID_BICUBIC ? -1073741824.0 : -2, hi = o.mode == TN_GRID_BICUBIC ? 1073741824.0 : (double)in[i] + 1;
        tn_tensor *c = tn_nan_to_num(tn_clamp(tn_detach(coord[i]), .min = lo, .max = hi), .nan = lo, .posinf = hi, .neginf = lo);
        base[i] = o.mode == TN_GRID_NEAREST ? tn_round(c) : tn_floor(c);
        frac[i] = tn_sub(coord[i], base[i]);   /* the distance past the first tap (its gradient: the coordinate's) */
    }
    for (int k = 0; k < corners; k++) {
        tn_tensor *lin = NULL, *valid = NULL, *w = NULL;
        for (int i = 0; i < nsp; i++) {
            if (o.mode == TN_GRID_BICUBIC) {   /* tap -1..2 of dim i: k's two bits for it */
                const int tap = (k >> (2 * (nsp - 1 - i)) & 3) - 1;
                tn_tensor *t = tn__grid_pad(tn_add_scalar(base[i], tap), in[i], o.padding_mode, o.align_corners);
                tn_tensor *ok = tn_logical_and(tn_ge_scalar(t, 0), tn_le_scalar(t, (double)(in[i] - 1)));
                tn_tensor *ti = tn_to_dtype(tn_clamp(t, .min = 0, .max = (double)(in[i] - 1)), TN_I64);
                valid = valid ? tn_logical_and(valid, ok) : ok;
                lin = lin ? tn_add(tn_mul_scalar(lin, (double)in[i]), ti) : ti;
                tn_tensor *wi = tn__grid_cubic_weight(frac[i], tap);
                w = w ? tn_mul(w, wi) : wi;
                continue;
            }
            const int up = k >> (nsp - 1 - i) & 1;
            tn_tensor *t = up ? tn_add_scalar(base[i], 1) : base[i];
            tn_tensor *ok = tn_logical_and(tn_ge_scalar(t, 0), tn_le_scalar(t, (double)(in[i] - 1)));
            tn_tensor *ti = tn_to_dtype(tn_clamp(t, .min = 0, .max = (double)(in[i] - 1)), TN_I64);
            valid = valid ? tn_logical_and(valid, ok) : ok;
            lin = lin ? tn_add(tn_mul_scalar(lin, (double)in[i]), ti) : ti;
            if (o.mode != TN_GRID_NEAREST) {
                tn_tensor *wi = up ? frac[i] : tn_rsub_scalar(frac[i], 1);
                w = w ? tn_mul(w, wi) : wi;
            }
        }
        tn_tensor *idx = tn_expand(tn_reshape(lin, TN_SHAPE(N, 1, L)), TN_SHAPE(N, C, L));
        tn_tensor *v = tn_gather(xf, 2, idx);
        tn_tensor *vw = tn_reshape(valid, TN_SHAPE(N, 1, L));
        if (w) v = tn_mul(v, tn_where(vw, tn_reshape(w, TN_SHAPE(N, 1, L)), tn_zeros(NULL, 0, x->dtype)));   /* a tap outside adds nothing, not NaN * 0 */
        else v = tn_where(vw, v, tn_zeros(NULL, 0, x->dtype));
        y = y ? tn_add(y, v) : v;
    }
    if (o.mode == TN_GRID_NEAREST && tn_requires_grad(grid) && tn_is_grad_enabled()) {
        /* PyTorch's grid gradient is zeros, not None: a zero term that depends on the grid */
        tn_tensor *z = tn_where(tn_isfinite(grid), tn_mul_scalar(grid, 0), tn_zeros(NULL, 0, x->dtype));
        y = tn_add(y, tn_reshape(tn_sum_dims(tn_reshape(z, TN_SHAPE(N, L, nsp)), TN_SHAPE(-1)), TN_SHAPE(N, 1, L)));
    }
    y = tn_reshape(y, oshape, x->ndim);
    return tn__scope_return(tn__grad_name(y, nsp == 2 ? "GridSampler2DBackward0" : "GridSampler3DBackward0"));
}
TNDEF tn_tensor *tn_grid_sample_opts(tn_tensor *input, tn_tensor *grid, tn_grid_opts o) { return TN__AS("tn_grid_sample", tn__grid_sample_impl(input, grid, o)); }
TNDEF tn_tensor *tn_grid_sample_str(tn_tensor *input, tn_tensor *grid, const char *options) {
    TN__KW_STR(tn_grid_opts, grid_sample, "tn_grid_sample", options, tn_grid_sample_opts(input, grid, o));
}

/* affine_grid: the base grid [H * W, 3] of (x, y, 1) (D * H * W of (x, y, z, 1)) times theta^T. */
static tn_tensor *tn__affine_grid_impl(tn_tensor *theta, const int64_t *size, int n, bool align) {
    const char *fn = "tn_affine_grid";
    TN__CHECK_NULL(theta);
    if (!size || (n != 4 && n != 5))
        return (tn_tensor *)tn__error("%s: affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got %d sizes.", fn, n);
    for (int i = 0; i < n; i++)
        if (size[i] <= 0) return (tn_tensor *)tn__error("%s: Expected non-zero, positive output size. Got %s", fn, tn__shape_str(size, n));
    if (!tn_dtype_is_floating(theta->dtype)) return (tn_tensor *)tn__error("%s: Expected theta to have floating point type, but got %s", fn, tn_dtype_name(theta->dtype));
    const int nsp = n - 2;
    if (theta->ndim != 3 || theta->shape[0] != size[0] || theta->shape[1] != nsp || theta->shape[2] != nsp + 1)
        return (tn_tensor *)tn__error("%s: Expected a batch of %dD affine matrices of shape Nx%dx%d for size %s. Got %s.", fn, nsp, nsp, nsp + 1, tn__shape_str(size, n), TN__SHAPE(theta));
    const int64_t N = size[0], *sp = size + 2;
    int64_t L = 1, gshape[5];
    for (int i = 0; i < nsp; i++) { if (!tn__mul_ok(L, sp[i], &L)) return (tn_tensor *)tn__error("%s: size %s is too large", fn, tn__shape_str(size, n)); gshape[1 + i] = sp[i]; }
    gshape[0] = N; gshape[1 + nsp] = nsp;
    if (tn__check_shape(fn, gshape, nsp + 2) || tn__check_shape(fn, TN_SHAPE(L, nsp + 1))) return NULL;
    double *b = (double *)tn__malloc_n(fn, L * (nsp + 1), sizeof(double));
    if (!b) return NULL;
    for (int64_t p = 0; p < L; p++) {
        int64_t r = p;
        for (int i = nsp - 1; i >= 0; i--) {   /* dim i (D, H, W order) is the base grid's column nsp - 1 - i: x, y, z */
            const int64_t j = r % sp[i], m = sp[i];
            r /= sp[i];
            double v = m <= 1 ? 0 : -1 + 2.0 * (double)j / (double)(m - 1);
            if (!align && m > 1) v = v * (double)(m - 1) / (double)m;
            b[p * (nsp + 1) + (nsp - 1 - i)] = v;
        }
        b[p * (nsp + 1) + nsp] = 1;
    }
    tn_scope_begin();
    tn_tensor *base = tn_to(tn_to_dtype(tn_from_data(b, TN_SHAPE(L, nsp + 1), TN_F64), theta->dtype), theta->device);
    TN_FREE(b);
    tn_tensor *g = tn_reshape(tn_matmul(base, tn_transpose(theta, 1, 2)), gshape, nsp + 2);   /* [N, L, nsp] */
    return tn__scope_return(tn__grad_name(g, "AffineGridGeneratorBackward0"));
}
TNDEF tn_tensor *tn_affine_grid_opts(tn_tensor *theta, const int64_t *size, int n, tn_affine_grid_fn_opts o) {
    const bool align_corners = o.align_corners == 1;   /* None is False */
    return TN__AS("tn_affine_grid", tn__affine_grid_impl(theta, size, n, align_corners));
}
TNDEF tn_tensor *tn_affine_grid_str(tn_tensor *theta, const int64_t *size, int n, const char *options) { TN__KW_STR(tn_affine_grid_fn_opts, affine_grid, "tn_affine_grid", options, tn_affine_grid_opts(theta, size, n, o)); }
