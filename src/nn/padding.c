/* ---- F.pad's reflect, replicate and circular modes ----
   Each padded dim is one index_select by a table of source positions (so the gradient is
   index_select's: index_add, twice differentiable, and the GPU comes with it). */
static const char *const tn__pad_mode_names[4] = {"constant", "reflect", "replicate", "circular"};
/* The source index of each of the in + l + r output positions of one dim. */
static tn_tensor *tn__pad_table(const char *fn, int mode, int64_t in, int64_t l, int64_t r, tn_device device) {
    const int64_t out = in + l + r;
    int64_t *ix = (int64_t *)tn__malloc_n(fn, out, sizeof(int64_t));
    if (!ix) return NULL;
    for (int64_t o = 0; o < out; o++) {
        int64_t i = o - l;
        if (mode == TN_PADDING_REFLECT) i = i < 0 ? -i : i >= in ? 2 * (in - 1) - i : i;
        else if (mode == TN_PADDING_REPLICATE) i = i < 0 ? 0 : i >= in ? in - 1 : i;
        else {
            /* a negative pad crops first; the positive one wraps within what is kept (torch) */
            const int64_t cl = l < 0 ? -l : 0, m = in - cl - (r < 0 ? -r : 0);
            i = o - (l > 0 ? l : 0);
            i = ((i % m) + m) % m + cl;
        }
        ix[o] = i;
    }
    tn_tensor *t = tn_to(tn_from_data(ix, TN_SHAPE(out), TN_I64), device);
    TN_FREE(ix);
    return t;
}
static tn_tensor *tn__pad_mode_impl(tn_tensor *x, const int64_t *pad, int n, int mode) {
    const char *fn = "tn_pad";
    TN__CHECK_NULL(x);
    if (mode < TN_PADDING_REFLECT || mode > TN_PADDING_CIRCULAR)
        return (tn_tensor *)tn__error("%s: mode %d is not TN_PADDING_ZEROS, TN_PADDING_REFLECT, TN_PADDING_REPLICATE or TN_PADDING_CIRCULAR", fn, mode);
    if (n % 2 || n < 0 || (n && !pad)) return (tn_tensor *)tn__error("%s: Padding length must be divisible by 2 (got %d)", fn, n);
    if (n > 2 * x->ndim)
        return (tn_tensor *)tn__error("%s: Padding length should be less than or equal to two times the input dimension but got padding length %d and input of dimension %d", fn, n, x->ndim);
    const int k = n / 2;   /* padded dims */
    if (k < 1 || k > 3 || x->ndim < k + 1 || x->ndim > k + 2)
        return (tn_tensor *)tn__error("%s: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (padding length %d, input %s)", fn, n, TN__SHAPE(x));
    const char *name = tn__pad_mode_names[mode];
    for (int d = x->ndim == k + 2 ? 1 : 0; d < x->ndim; d++)
        if (x->shape[d] == 0)
            return (tn_tensor *)tn__error("%s: %s padding: expected a %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: %s",
                                          fn, name, k + 1, k + 2, TN__SHAPE(x));
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof(int64_t));
    for (int i = 0; i < k; i++) {
        const int d = x->ndim - 1 - i;
        const int64_t l = pad[2 * i], r = pad[2 * i + 1], in = x->shape[d];
        if (mode == TN_PADDING_REFLECT && (l >= in || r >= in))
            return (tn_tensor *)tn__error("%s: Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                                          fn, (long long)l, (long long)r, d, TN__SHAPE(x));
        if (mode == TN_PADDING_CIRCULAR && (l > in || r > in))
            return (tn_tensor *)tn__error("%s: Padding value causes wrapping around more than once (padding (%lld, %lld) at dimension %d of input %s)", fn, (long long)l, (long long)r, d, TN__SHAPE(x));
        /* a pad past the size reflects or wraps out of range (refused above); replicate's
           may be any size: the sum is checked */
        if (!tn__add_ok(in, l, &shape[d]) || !tn__add_ok(shape[d], r, &shape[d]))
            return (tn_tensor *)tn__error("%s: padding (%lld, %lld) of input %s gives too many elements", fn, (long long)l, (long long)r, TN__SHAPE(x));
        if (shape[d] < 1)
            return (tn_tensor *)tn__error("%s: input (size %lld at dimension %d) is too small. Calculated output size: %lld (padding (%lld, %lld))", fn, (long long)in, d,
                                          (long long)shape[d], (long long)l, (long long)r);
    }
    if (tn__check_shape(fn, shape, x->ndim)) return NULL;
    tn_scope_begin();
    tn_tensor *y = x;
    for (int i = 0; i < k && y; i++) {
        const int d = x->ndim - 1 - i;
        y = tn_index_select(y, d, tn__pad_table(fn, mode, x->shape[d], pad[2 * i], pad[2 * i + 1], x->device));
    }
    if (y == x) y = tn_clone(x);
    static const char *const names[2][3] = {{"ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0"},
                                            {"ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0"}};
    return tn__scope_return(mode == TN_PADDING_CIRCULAR ? y : tn__grad_name(y, names[mode - 1][k - 1]));
}
TNDEF tn_tensor *tn_pad_opts(tn_tensor *t, const int64_t *pad, int n, tn_pad_fn_opts o) {
    static const char *const modes[] = {"constant", "reflect", "replicate", "circular"};
    if (o.mode == TN_PADDING_ZEROS) return tn__pad_constant(t, pad, n, o.value);
    if (o.mode > TN_PADDING_ZEROS && o.mode <= TN_PADDING_CIRCULAR && o.value != 0)   /* ATen: a value other than 0 */
        return (tn_tensor *)tn__error("tn_pad: Padding mode \"%s\" doesn't take in value argument", modes[o.mode]);
    return TN__AS("tn_pad", tn__pad_mode_impl(t, pad, n, o.mode));
}
TNDEF tn_tensor *tn_pad_str(tn_tensor *t, const int64_t *pad, int n, const char *options) { TN__KW_STR(tn_pad_fn_opts, pad, "tn_pad", options, tn_pad_opts(t, pad, n, o)); }
