/* ---- LP pooling, max unpooling, fractional max pooling ---- */
/* lp_pool: avg_pool of x^p, times the window size, to the 1/p (sign(out) relu(|out|) as
   PyTorch writes it), for nsp = 1, 2 or 3 (k: the kernel's dims). */
static tn_tensor *tn__lp_finish(tn_tensor *avg, double p, int64_t window) {
    tn_tensor *a = tn_mul(tn_sign(avg), tn_relu(tn_abs(avg)));
    return tn_pow_scalar(tn_mul_scalar(a, (double)window), 1.0 / p);
}
static tn_tensor *tn__lp_pool(const char *fn, const char *what, tn_tensor *x, int nsp, double p, int64_t ksize, const tn_pool_opts *o) {
    TN__CHECK_NULL(x);
    const tn_pool_opts def = TN_DEFAULTS(tn_pool_opts);
    if (tn__kw_only(fn, what, tn__kw_pool, TN__KW_N(tn__kw_pool), o, &def, "kernel_size, stride, ceil_mode")) return NULL;
    if (nsp == 1 && (o->kernel_size_hw[0] || o->stride_hw[0])) return (tn_tensor *)tn__error("%s: a 1-d pooling takes ints, not (h, w) pairs", fn);
    tn_pool_opts a = def;
    a.stride = o->stride; a.ceil_mode = o->ceil_mode;
    memcpy(a.kernel_size_hw, o->kernel_size_hw, sizeof a.kernel_size_hw);
    memcpy(a.stride_hw, o->stride_hw, sizeof a.stride_hw);
    const int64_t window = nsp == 1 ? ksize : o->kernel_size_hw[0] || o->kernel_size_hw[1] ? tn__mul_sat(o->kernel_size_hw[0], o->kernel_size_hw[1]) : tn__mul_sat(ksize, ksize);
    tn_scope_begin();
    tn_tensor *xp = tn_pow_scalar(x, p);
    tn_tensor *avg = nsp == 1 ? tn_avg_pool1d_opts(xp, ksize, a) : tn_avg_pool2d_opts(xp, ksize, a);
    return tn__scope_return(tn__lp_finish(avg, p, window));
}
TNDEF tn_tensor *tn_lp_pool1d_opts(tn_tensor *x, double p, int64_t k, tn_pool_opts o) { return TN__AS("tn_lp_pool1d", tn__lp_pool("tn_lp_pool1d", "lp_pool1d", x, 1, p, k, &o)); }
TNDEF tn_tensor *tn_lp_pool2d_opts(tn_tensor *x, double p, int64_t k, tn_pool_opts o) { return TN__AS("tn_lp_pool2d", tn__lp_pool("tn_lp_pool2d", "lp_pool2d", x, 2, p, k, &o)); }
static tn_tensor *tn__lp_pool3d(tn_tensor *x, double p, int64_t ksize, const tn_pool3d_opts *o) {
    const char *fn = "tn_lp_pool3d";
    TN__CHECK_NULL(x);
    const tn_pool3d_opts def = TN_DEFAULTS(tn_pool3d_opts);
    if (tn__kw_only(fn, "lp_pool3d", tn__kw_pool3d, TN__KW_N(tn__kw_pool3d), o, &def, "kernel_size, stride, ceil_mode")) return NULL;
    int64_t k[3];
    if (tn__kw_triple(fn, "kernel_size", ksize, &o->kernel_size_dhw, k)) return NULL;
    tn_pool3d_opts a = def;
    a.stride = o->stride; a.stride_dhw = o->stride_dhw; a.kernel_size_dhw = o->kernel_size_dhw; a.ceil_mode = o->ceil_mode;
    tn_scope_begin();
    tn_tensor *avg = tn_avg_pool3d_opts(tn_pow_scalar(x, p), ksize, a);
    return tn__scope_return(tn__lp_finish(avg, p, tn__mul_sat(tn__mul_sat(k[0], k[1]), k[2])));
}
TNDEF tn_tensor *tn_lp_pool3d_opts(tn_tensor *x, double p, int64_t k, tn_pool3d_opts o) { return TN__AS("tn_lp_pool3d", tn__lp_pool3d(x, p, k, &o)); }
TNDEF tn_tensor *tn_lp_pool1d_str(tn_tensor *x, double p, int64_t k, const char *options) {
    TN__KW_STR(tn_pool_opts, pool, "tn_lp_pool1d", options, tn_lp_pool1d_opts(x, p, k, o));
}
TNDEF tn_tensor *tn_lp_pool2d_str(tn_tensor *x, double p, int64_t k, const char *options) {
    TN__KW_STR(tn_pool_opts, pool, "tn_lp_pool2d", options, tn_lp_pool2d_opts(x, p, k, o));
}
TNDEF tn_tensor *tn_lp_pool3d_str(tn_tensor *x, double p, int64_t k, const char *options) {
    TN__KW_STR(tn_pool3d_opts, pool3d, "tn_lp_pool3d", options, tn_lp_pool3d_opts(x, p, k, o));
}

/* max_unpool: zeros [N, C, prod(output_size)] with x scattered at indices (scatter's
   backward, a gather, is the gradient). */
static tn_tensor *tn__max_unpool_impl(tn_tensor *x, tn_tensor *idx, const int64_t *os, int n) {
    const char *fn = "tn_max_unpool";
    TN__CHECK_NULL(x, idx);
    if (n < 1 || n > 3 || !os) return (tn_tensor *)tn__error("%s: output_size must hold 1, 2 or 3 spatial sizes (got %d)", fn, n);
    if (idx->dtype != TN_I64) return (tn_tensor *)tn__error("%s: elements in indices should be type int64 but got: %s", fn, tn_dtype_name(idx->dtype));
    if (x->ndim != n + 1 && x->ndim != n + 2)
        return (tn_tensor *)tn__error("%s: Input to max_unpooling%dd should be a %dd or %dd Tensor, but got a tensor with %d dimensions.", fn, n, n + 1, n + 2, x->ndim);
    if (idx->ndim != x->ndim || memcmp(idx->shape, x->shape, (size_t)x->ndim * sizeof(int64_t)))
        return (tn_tensor *)tn__error("%s: Expected shape of indices to be same as that of the input tensor (%s) but got indices tensor with shape: %s", fn, TN__SHAPE(x), TN__SHAPE(idx));
    if (!tn_dtype_is_floating(x->dtype)) return (tn_tensor *)tn__error("%s: expected a floating point input, got %s", fn, tn_dtype_name(x->dtype));
    for (int d = x->ndim - n; d < x->ndim; d++)
        if (x->shape[d] <= 0) return (tn_tensor *)tn__error("%s: Expected input to have non-zero size for non-batch dimensions, but got %s", fn, TN__SHAPE(x));
    int64_t vol = 1, shape[5];
    const bool batched = x->ndim == n + 2;
    for (int i = 0; i < n; i++) {
        if (os[i] <= 0) return (tn_tensor *)tn__error("%s: output_size must be positive, got %lld", fn, (long long)os[i]);
        if (!tn__mul_ok(vol, os[i], &vol)) return (tn_tensor *)tn__error("%s: output_size is too large", fn);
    }
    const int64_t N = batched ? x->shape[0] : 1, C = x->shape[batched ? 1 : 0], L = tn__numel(x->shape + x->ndim - n, n);
    shape[0] = N; shape[1] = C;
    for (int i = 0; i < n; i++) shape[2 + i] = os[i];
    if (tn__check_shape(fn, shape, n + 2)) return NULL;
    tn_scope_begin();
    if (tn_numel(idx)) {
        const int64_t lo = (int64_t)tn_item(tn_min(idx)), hi = (int64_t)tn_item(tn_max(idx));
        if (lo < 0 || hi >= vol) {
            tn_scope_end();
            char sz[96];
            int k = 0;
            for (int i = 0; i < n; i++) k += snprintf(sz + k, sizeof sz - (size_t)k, i ? "x%lld" : "%lld", (long long)os[i]);
            return (tn_tensor *)tn__error("%s: Found an invalid max index: %lld (output volumes are of size %s)", fn, (long long)(lo < 0 ? lo : hi), sz);
        }
    }
    tn_tensor *z = tn__own(tn__full_on(TN_SHAPE(N, C, vol), 0, x->dtype, x->device));
    tn_tensor *y = tn_scatter(z, 2, tn_reshape(idx, TN_SHAPE(N, C, L)), tn_reshape(x, TN_SHAPE(N, C, L)));
    y = tn_reshape(y, batched ? shape : shape + 1, batched ? n + 2 : n + 1);
    static const char *const names[3] = {"SqueezeBackward1", "MaxUnpool2DBackward0", "MaxUnpool3DBackward0"};   /* 1-d: PyTorch squeezes a 2-d unpooling */
    return tn__scope_return(tn__grad_name(y, names[n - 1]));
}
TNDEF tn_tensor *tn_max_unpool(tn_tensor *x, tn_tensor *indices, const int64_t *output_size, int n) { return TN__AS("tn_max_unpool", tn__max_unpool_impl(x, indices, output_size, n)); }

/* Fractional max pooling: per plane, window starts from PyTorch's generate_intervals (in
   the input's float type, as its kernel), the flat positions of every window's elements
   gathered from the plane, their first maximum taken (gather's gradient). */
/* @template TN__FRAC_INTERVALS(T, S) */
static void tn__frac_intervals_##S(T u, int64_t in, int64_t out, int64_t k, int64_t *seq) {
    if (out > 1) {
        const T alpha = (T)(in - k) / (T)(out - 1);
        for (int64_t i = 0; i < out - 1; i++) seq[i] = (int64_t)(int)(((T)i + u) * alpha) - (int64_t)(int)(u * alpha);
    }
    seq[out - 1] = in - k;
}
/* @end TN__FRAC_INTERVALS */
TN__FRAC_INTERVALS(float, f32)
TN__FRAC_INTERVALS(double, f64)
static tn_tensor *tn__fractional_impl(const char *fn, tn_tensor *x, int nsp, const int64_t *k, const int64_t *os, tn_tensor *samples, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: non-empty %dD or %dD (batch mode) tensor expected for input, but got: %s", fn, nsp + 1, nsp + 2, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return NULL;
    const bool batched = x->ndim == nsp + 2;
    const int64_t N = batched ? x->shape[0] : 1, C = x->shape[batched ? 1 : 0], *in = x->shape + x->ndim - nsp;
    for (int d = batched ? 1 : 0; d < x->ndim; d++)
        if (x->shape[d] == 0) return (tn_tensor *)tn__error("%s: Expected input to have non-zero size for non-batch dimensions, but got %s", fn, TN__SHAPE(x));
    static const char *const dn[3] = {"time", "height", "width"};
    for (int i = 0; i < nsp; i++) {
        const char *name = dn[i + 3 - nsp];
        if (k[i] <= 0 || os[i] <= 0) return (tn_tensor *)tn__error("%s: kernel_size and output_size must be greater than zero, but got %lld and %lld", fn, (long long)k[i], (long long)os[i]);
        if (os[i] + k[i] - 1 > in[i])
            return (tn_tensor *)tn__error("%s: out(): pool %s (%lld) too large relative to input %s (%lld)", fn, name, (long long)k[i], name, (long long)in[i]);
    }
    int64_t NC, L = 1, K = 1, oshape[5];
    if (!tn__mul_ok(N, C, &NC)) return (tn_tensor *)tn__error("%s: input %s is too large", fn, TN__SHAPE(x));
    for (int i = 0; i < nsp; i++) { L = tn__mul_sat(L, os[i]); K = tn__mul_sat(K, k[i]); oshape[2 + i] = os[i]; }
    oshape[0] = N; oshape[1] = C;
    if (tn__check_shape(fn, oshape, nsp + 2) || tn__check_shape(fn, TN_SHAPE(NC, L, K))) return NULL;
    if (samples) {
        const bool ok = samples->ndim == 3 ? samples->shape[0] == N && samples->shape[1] == C && samples->shape[2] == nsp
                                           : !batched && samples->ndim == 2 && samples->shape[0] == C && samples->shape[1] == nsp;
        if (!ok) return (tn_tensor *)tn__error("%s: random_samples %s must be [N, C, %d] = [%lld, %lld, %d]", fn, TN__SHAPE(samples), nsp, (long long)N, (long long)C, nsp);
        if (samples->dtype != x->dtype) return (tn_tensor *)tn__error("%s: expected random_samples of the input's dtype %s, got %s", fn, tn_dtype_name(x->dtype), tn_dtype_name(samples->dtype));
    }
    tn_scope_begin();
    tn_tensor *u = samples ? samples : tn_rand(TN_SHAPE(N, C, nsp), x->dtype);
    tn_tensor *uc = tn_contiguous(tn_to_dtype(tn_to(tn_detach(u), TN_CPU), TN_F64));
    tn_tensor *flat = uc ? tn__new_checked(fn, TN_SHAPE(NC, L, K), TN_I64) : NULL;
    int64_t *seq = flat ? (int64_t *)tn__malloc_n(fn, os[0] + (nsp > 1 ? os[1] : 0) + (nsp > 2 ? os[2] : 0), sizeof(int64_t)) : NULL;
    if (!seq) { tn_release(flat); tn_scope_end(); return NULL; }
    tn__own(flat);
    const double *up = (const double *)tn_data_ptr(uc);
    int64_t *fp = (int64_t *)tn_data_ptr(flat), *sq[3] = {seq, nsp > 1 ? seq + os[0] : NULL, nsp > 2 ? seq + os[0] + os[1] : NULL};
    for (int64_t pl = 0; pl < NC; pl++) {
        for (int i = 0; i < nsp; i++) {   /* the 2-d sample pair is (w, h); the 3-d triple (t, h, w) */
            const double v = up[pl * nsp + (nsp == 2 ? 1 - i : i)];
            if (x->dtype == TN_F32) tn__frac_intervals_f32((float)v, in[i], os[i], k[i], sq[i]);
            else tn__frac_intervals_f64(v, in[i], os[i], k[i], sq[i]);
        }
        for (int64_t o = 0; o < L; o++) {
            int64_t oi[3] = {o, 0, 0}, r = o;
            for (int i = nsp - 1; i >= 0; i--) { oi[i] = r % os[i]; r /= os[i]; }
            for (int64_t j = 0; j < K; j++) {
                int64_t ki[3] = {j, 0, 0}, q = j, f = 0;
                for (int i = nsp - 1; i >= 0; i--) { ki[i] = q % k[i]; q /= k[i]; }
                for (int i = 0; i < nsp; i++) f = f * in[i] + sq[i][oi[i]] + ki[i];
                fp[(pl * L + o) * K + j] = f;
            }
        }
    }
    TN_FREE(seq);
    const int64_t V = tn__numel(in, nsp);
    tn_tensor *fd = tn_to(flat, x->device);
    tn_tensor *vals = tn_reshape(tn_gather(tn_reshape(x, TN_SHAPE(NC, V)), 1, tn_reshape(fd, TN_SHAPE(NC, L * K))), TN_SHAPE(NC, L, K));
    tn_tensor *kidx = NULL, *y = tn_max_dim(vals, -1, indices ? &kidx : NULL);
    const int64_t *shp = batched ? oshape : oshape + 1;
    const int nd = batched ? nsp + 2 : nsp + 1;
    if (y && indices) *indices = tn_keep(tn_reshape(tn_squeeze_dim(tn_gather(fd, 2, tn_unsqueeze(kidx, -1)), -1), shp, nd));
    y = tn_reshape(y, shp, nd);
    if (!y && indices && *indices) { tn_release(*indices); *indices = NULL; }
    return tn__scope_return(tn__grad_name(y, nsp == 2 ? "FractionalMaxPool2DBackward0" : "FractionalMaxPool3DBackward0"));
}
TNDEF tn_tensor *tn_fractional_max_pool2d(tn_tensor *x, const int64_t kernel_size[2], const int64_t output_size[2], tn_tensor *random_samples, tn_tensor **indices) {
    if (!kernel_size || !output_size) return (tn_tensor *)tn__error("tn_fractional_max_pool2d: kernel_size and output_size are required");
    return TN__AS("tn_fractional_max_pool2d", tn__fractional_impl("tn_fractional_max_pool2d", x, 2, kernel_size, output_size, random_samples, indices));
}
TNDEF tn_tensor *tn_fractional_max_pool3d(tn_tensor *x, const int64_t kernel_size[3], const int64_t output_size[3], tn_tensor *random_samples, tn_tensor **indices) {
    if (!kernel_size || !output_size) return (tn_tensor *)tn__error("tn_fractional_max_pool3d: kernel_size and output_size are required");
    return TN__AS("tn_fractional_max_pool3d", tn__fractional_impl("tn_fractional_max_pool3d", x, 3, kernel_size, output_size, random_samples, indices));
}
