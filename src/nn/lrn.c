/* ---- local response normalisation, CrossMapLRN2d, channel shuffle ----
   The sums over neighbouring channels are one [C, C] band matrix applied along the channel
   dim (tn__along), so the gradient is matmul's. */
/* A [C, C] matrix of v where j - c is in [lo, hi] (the band), plus v at column 0 for the rows
   from extra0 on (CrossMapLRN2d's quirk; -1: none). */
static tn_tensor *tn__band_matrix(const char *fn, int64_t C, int64_t lo, int64_t hi, double v, int64_t extra0, const tn_tensor *like) {
    double *m = (double *)tn__malloc_n(fn, tn__mul_or(C, C, -1), sizeof(double));
    if (!m) return NULL;
    memset(m, 0, (size_t)(C * C) * sizeof(double));
    for (int64_t c = 0; c < C; c++) {
        for (int64_t j = TN__MAX(0, c + lo); j <= TN__MIN(C - 1, c + hi); j++) m[c * C + j] = v;
        if (extra0 >= 0 && c >= extra0 && c + lo > 0) m[c * C] = v;
    }
    tn_tensor *t = tn__dim_matrix(m, C, C, like);
    TN_FREE(m);
    return t;
}
static tn_tensor *tn__lrn_impl(tn_tensor *x, int64_t size, tn_lrn_opts o) {
    const char *fn = "tn_local_response_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 3) return (tn_tensor *)tn__error("%s: Expected 3D or higher dimensionality input (got %d dimensions)", fn, x->ndim);
    if (size <= 0) return (tn_tensor *)tn__error("%s: size must be positive, got %lld", fn, (long long)size);
    /* int64: PyTorch's avg_pool of x^2 runs in int64 (a truncating division), then alpha
       makes it the default dtype; its avg_pool has no other integer kernel */
    const bool i64 = x->dtype == TN_I64;
    if (!i64 && tn__nn_check(fn, x, "input")) return NULL;
    if (tn_numel(x) == 0) return tn__own(tn_retain(x));   /* the input itself, as PyTorch */
    const int64_t C = x->shape[1];
    tn_scope_begin();
    /* avg_pool of x^2 over [c - size/2, c + (size-1)/2], zero padded: divisor size */
    tn_tensor *sq = tn_mul(x, x), *avg;
    if (i64) {   /* the window sums in float64 (exact below 2^53), divided and truncated */
        tn_tensor *sqf = tn_to_dtype(sq, TN_F64);
        tn_tensor *band = sqf ? tn__band_matrix(fn, C, -(size / 2), (size - 1) / 2, 1.0, -1, sqf) : NULL;
        avg = tn_to_dtype(tn_trunc(tn_div_scalar(tn__along(sqf, 1, x->ndim, band), (double)size)), tn_get_default_dtype());
    } else {
        tn_tensor *band = tn__band_matrix(fn, C, -(size / 2), (size - 1) / 2, 1.0 / (double)size, -1, x);
        avg = tn__along(sq, 1, x->ndim, band);
    }
    tn_tensor *div = tn_pow_scalar(tn_add_scalar(tn_mul_scalar(avg, o.alpha), o.k), o.beta);
    return tn__scope_return(tn_div(x, div));   /* DivBackward0, as PyTorch */
}
TNDEF tn_tensor *tn_local_response_norm_opts(tn_tensor *x, int64_t size, tn_lrn_opts o) { return TN__AS("tn_local_response_norm", tn__lrn_impl(x, size, o)); }
TNDEF tn_tensor *tn_local_response_norm_str(tn_tensor *x, int64_t size, const char *options) {
    TN__KW_STR(tn_lrn_opts, lrn, "tn_local_response_norm", options, tn_local_response_norm_opts(x, size, o));
}

/* CrossMapLRN2d: the forward of PyTorch's legacy loop and that function's own backward,
   gx = scale^-beta gy - 2 alpha beta / size * x * B (gy y / scale), B the band of rows
   [c - ipp, c + size - 1 - ipp] (ipp = int(size - (size - 1) / 2), its Python port's). Saved:
   x, scale, y; attributes: size (i[0]), alpha, beta (d[0], d[1]). */
static int tn__cmlrn_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *scale = tn_ctx_saved(n, 1), *y = tn_ctx_saved(n, 2);
    if (!x || !scale || !y) return -1;
    const int64_t size = n->i[0], C = x->shape[1], ipp = (int64_t)((double)size - (double)(size - 1) / 2);
    const double alpha = n->d[0], beta = n->d[1];
    tn_tensor *band = tn__band_matrix("CrossMapLRN2d backward", C, -ipp, size - 1 - ipp, 1.0, -1, x);
    tn_tensor *ratio = tn__along(tn_div(tn_mul(gy, y), scale), 1, 4, band);
    gin[0] = tn_sub(tn_mul(tn_pow_scalar(scale, -beta), gy), tn_mul_scalar(tn_mul(x, ratio), 2 * alpha * beta / (double)size));
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__cmlrn_impl(tn_tensor *x, int64_t size, tn_lrn_opts o) {
    const char *fn = "tn_cross_map_lrn2d";
    TN__CHECK_NULL(x);
    if (x->ndim != 4) return (tn_tensor *)tn__error("%s: CrossMapLRN2d: Expected input to be 4D, got %dD instead.", fn, x->ndim);
    if (size <= 0) return (tn_tensor *)tn__error("%s: size must be positive, got %lld", fn, (long long)size);
    if (tn__nn_check(fn, x, "input")) return NULL;
    const int64_t C = x->shape[1], h = (size - 1) / 2;
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *band = tn__band_matrix(fn, C, -h, h, 1.0, h + 1, x);
    tn_tensor *scale = tn_add_scalar(tn_mul_scalar(tn__along(tn_mul(x, x), 1, 4, band), o.alpha / (double)size), o.k);
    tn_tensor *y = tn_contiguous(tn_mul(tn_pow_scalar(scale, -o.beta), x));
    tn_no_grad_end();
    if (y && tn_requires_grad(x) && tn_is_grad_enabled()) {
        /* the output is a copy of its own: saving the tensor the node is attached to would
           make a cycle (output -> node -> output) that is never freed */
        tn_tensor *out = tn_clone(y);
        tn_node *nd = out ? tn__fn_node("CrossMapLRN2dBackward", tn__cmlrn_bw, &x, 1) : NULL;
        if (nd) {
            nd->i[0] = size; nd->ni = 1;
            nd->d[0] = o.alpha; nd->d[1] = o.beta;
            tn__node_save(nd, x);
            tn__node_save(nd, scale);
            tn__node_save(nd, y);
        }
        y = tn__node_attach(nd, out);
    }
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_cross_map_lrn2d_opts(tn_tensor *x, int64_t size, tn_lrn_opts o) { return TN__AS("tn_cross_map_lrn2d", tn__cmlrn_impl(x, size, o)); }
TNDEF tn_tensor *tn_cross_map_lrn2d_str(tn_tensor *x, int64_t size, const char *options) {
    TN__KW_STR(tn_lrn_opts, lrn, "tn_cross_map_lrn2d", options, tn_cross_map_lrn2d_opts(x, size, o));
}

static tn_tensor *tn__channel_shuffle_impl(tn_tensor *x, int64_t g) {
    const char *fn = "tn_channel_shuffle";
    TN__CHECK_NULL(x);
    if (x->ndim <= 2) return (tn_tensor *)tn__error("%s: channel_shuffle expects input with > 2 dims, but got input with sizes %s", fn, TN__SHAPE(x));
    if (g <= 0) return (tn_tensor *)tn__error("%s: Number of groups to divide channels in must be positive. Value of groups:%lld", fn, (long long)g);
    const int64_t C = x->shape[1];
    if (C % g) return (tn_tensor *)tn__error("%s: Number of channels must be divisible by groups. Got %lld channels and %lld groups.", fn, (long long)C, (long long)g);
    if (x->ndim + 1 > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: input %s has too many dims", fn, TN__SHAPE(x));
    int64_t s[TN_MAX_DIMS];
    s[0] = x->shape[0]; s[1] = g; s[2] = C / g;
    for (int d = 2; d < x->ndim; d++) s[d + 1] = x->shape[d];
    tn_scope_begin();
    tn_tensor *y = tn_reshape(tn_contiguous(tn_transpose(tn_reshape(x, s, x->ndim + 1), 1, 2)), x->shape, x->ndim);
    if (y && tn_same_storage(y, x)) y = tn_clone(y);   /* one group: a new tensor, as PyTorch */
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_channel_shuffle(tn_tensor *x, int64_t groups) { return TN__AS("tn_channel_shuffle", tn__channel_shuffle_impl(x, groups)); }
