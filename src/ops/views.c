/* The offset of element `index` along a dim of stride `stride` from t's: it fits for a
   view with elements; for an empty one (another size 0, the others huge) the product may
   not, and any offset will do, so it keeps t's. */
static int64_t tn__view_offset(const tn_tensor *t, int64_t index, int64_t stride) {
    int64_t o;
    return tn__mul_ok(index, stride, &o) && tn__add_ok(t->offset, o, &o) ? o : t->offset;
}
static tn_tensor *tn__view_own(tn_tensor *t, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    tn_tensor *v = tn__view_of(t, shape, strides, ndim, offset);
    if (v) v->base = tn_retain(t->base ? t->base : t); /* user-visible views know their base */
    return tn__own(v);
}

/* A view op's node: v (already made) gets op's backward with attributes attrs. */
static tn_tensor *tn__view_record(tn_tensor *t, tn_tensor *v, tn__gop op, const int64_t *attrs, int nattrs) {
    tn_node *node = v ? tn__node_new(op, 0, &t, 1) : NULL;
    if (node) {
        for (int k = 0; k < nattrs; k++) node->i[k] = attrs[k];
        node->ni = nattrs;
    }
    return tn__node_attach(node, v);
}

/* Strides for viewing (shape, strides) as newshape without a copy, as ATen's
   computeStride: each run of dims that is contiguous in memory may be re-split freely.
   Returns 0, or -1 (no error recorded) when a copy is unavoidable. */
static int tn__view_strides(const int64_t *shape, const int64_t *strides, int ndim, const int64_t *nshape, int nnd, int64_t *nstrides) {
    if (tn__numel(shape, ndim) == 0 || ndim == 0) {
        tn__contiguous_strides(nshape, nnd, nstrides);
        return 0;
    }
    int view_d = nnd - 1;
    int64_t chunk = strides[ndim - 1], tensor_numel = 1, view_numel = 1, next;
    for (int d = ndim - 1; d >= 0; d--) {
        tensor_numel = tn__mul_or(tensor_numel, shape[d], INT64_MAX);   /* fits: a non-empty tensor's sizes */
        if (d == 0 || (shape[d - 1] != 1 && (!tn__mul_ok(tensor_numel, chunk, &next) || strides[d - 1] != next))) {
            while (view_d >= 0 && (view_numel < tensor_numel || nshape[view_d] == 1)) {
                if (!tn__mul_ok(view_numel, chunk, &nstrides[view_d])) return -1;   /* strides past int64: copy instead */
                view_numel = tn__mul_or(view_numel, nshape[view_d], INT64_MAX);   /* fits: the view's sizes multiply up to numel */
                view_d--;
            }
            if (view_numel != tensor_numel) return -1;
            if (d > 0) { chunk = strides[d - 1]; tensor_numel = 1; view_numel = 1; }
        }
    }
    return view_d == -1 ? 0 : -1;
}

/* Resolve a requested shape with at most one -1 against numel. */
static int tn__infer_shape(const char *fn, tn_tensor *t, const int64_t *shape, int ndim, int64_t *out) {
    if (ndim < 0 || ndim > TN_MAX_DIMS) return TN__FAIL_INT("%s: ndim %d out of range [0, %d]", fn, ndim, TN_MAX_DIMS);
    if (ndim > 0 && !shape) return TN__FAIL_INT("%s: shape is NULL", fn);
    int infer = -1;
    int64_t known = 1, numel = tn_numel(t);
    for (int i = 0; i < ndim; i++) {
        out[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0) return TN__FAIL_INT("%s: only one dimension can be inferred (shape %s)", fn, tn__shape_str(shape, ndim));
            infer = i;
        } else if (shape[i] < 0) {
            return TN__FAIL_INT("%s: invalid shape dimension %lld in %s", fn, (long long)shape[i], tn__shape_str(shape, ndim));
        } else if (!tn__mul_ok(known, shape[i], &known)) {
            return TN__FAIL_INT("%s: shape %s has too many elements", fn, tn__shape_str(shape, ndim));
        }
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return TN__FAIL_INT("%s: shape %s is invalid for input of size %lld", fn, tn__shape_str(shape, ndim), (long long)numel);
        out[infer] = numel / known;
    } else if (known != numel) {
        return TN__FAIL_INT("%s: shape %s is invalid for input of size %lld", fn, tn__shape_str(shape, ndim), (long long)numel);
    }
    return 0;
}

TNDEF tn_tensor *tn_view(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (tn__infer_shape("tn_view", t, shape, ndim, ns)) return NULL;
    if (tn__view_strides(t->shape, t->strides, t->ndim, ns, ndim, st))
        return (tn_tensor *)tn__error("tn_view: view size %s is not compatible with input tensor's size %s and stride %s "
            "(at least one dimension spans across two contiguous subspaces); use tn_reshape", tn__shape_str(ns, ndim),
            TN__SHAPE(t), tn__shape_str(t->strides, t->ndim));
    return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_RESHAPE, NULL, 0);
}

static tn_tensor *tn__reshape_impl(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (tn__infer_shape("tn_reshape", t, shape, ndim, ns)) return NULL;
    if (tn__view_strides(t->shape, t->strides, t->ndim, ns, ndim, st) == 0)
        return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_RESHAPE, NULL, 0);
    tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
    if (!c) return NULL;
    tn__contiguous_strides(ns, ndim, st);
    tn_tensor *r = tn__view_own(c, ns, st, ndim, 0);
    tn_release(c);
    return tn__view_record(t, r, G_RESHAPE, NULL, 0);
}
TNDEF tn_tensor *tn_reshape(tn_tensor *t, const int64_t *shape, int ndim) { return TN__AS("tn_reshape", tn__reshape_impl(t, shape, ndim)); }

TNDEF tn_tensor *tn_flatten_opts(tn_tensor *t, tn_flatten_fn_opts o) {
    const int64_t start_dim = o.start_dim;
    const int64_t end_dim = o.end_dim;
    TN__CHECK_NULL(t);
    int s = tn__wrap_dim("tn_flatten", start_dim, t->ndim), e = s < 0 ? -1 : tn__wrap_dim("tn_flatten", end_dim, t->ndim);
    if (s < 0 || e < 0) return NULL;
    if (s > e) return (tn_tensor *)tn__error("tn_flatten: start_dim %lld cannot come after end_dim %lld", (long long)start_dim, (long long)end_dim);
    if (t->ndim == 0) { int64_t one = 1; return tn_reshape(t, &one, 1); }
    int64_t ns[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < s; i++) ns[nd++] = t->shape[i];
    if (!tn__numel_ok(t->shape + s, e - s + 1, &ns[nd]))   /* an empty tensor's huge sizes (a non-empty one's fit) */
        return (tn_tensor *)tn__error("tn_flatten: flattening dims %d to %d of %s: the size overflows int64", s, e, TN__SHAPE(t));
    nd++;
    for (int i = e + 1; i < t->ndim; i++) ns[nd++] = t->shape[i];
    return tn_reshape(t, ns, nd);
}
TNDEF tn_tensor *tn_flatten_str(tn_tensor *t, const char *options) { TN__KW_STR(tn_flatten_fn_opts, flatten, "tn_flatten", options, tn_flatten_opts(t, o)); }

TNDEF tn_tensor *tn_unflatten(tn_tensor *t, int64_t dim, const int64_t *sizes, int n) {
    TN__CHECK_NULL(t);
    int d = tn__wrap_dim("tn_unflatten", dim, t->ndim);
    if (d < 0) return NULL;
    if (n < 1 || !sizes || t->ndim - 1 + n > TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_unflatten: need 1 to %d sizes, got %d", TN_MAX_DIMS - t->ndim + 1, n);
    int64_t ns[TN_MAX_DIMS], prod = 1, infer = -1;
    int nd = 0;
    for (int i = 0; i < d; i++) ns[nd++] = t->shape[i];
    for (int i = 0; i < n; i++) {
        if (sizes[i] == -1) {
            if (infer >= 0) return (tn_tensor *)tn__error("tn_unflatten: only one dimension can be inferred (sizes %s)", tn__shape_str(sizes, n));
            infer = nd;
        } else if (sizes[i] < 0 || !tn__mul_ok(prod, sizes[i], &prod)) {
            return (tn_tensor *)tn__error("tn_unflatten: invalid sizes %s", tn__shape_str(sizes, n));
        }
        ns[nd++] = sizes[i];
    }
    for (int i = d + 1; i < t->ndim; i++) ns[nd++] = t->shape[i];
    if (infer >= 0 && prod > 0) ns[infer] = t->shape[d] / prod;
    if ((infer >= 0 ? ns[infer] * prod : prod) != t->shape[d])
        return (tn_tensor *)tn__error("tn_unflatten: sizes %s don't multiply up to the size of dim %d (%lld) in %s",
                                      tn__shape_str(sizes, n), d, (long long)t->shape[d], TN__SHAPE(t));
    return tn_view(t, ns, nd);
}

TNDEF tn_tensor *tn_permute(tn_tensor *t, const int64_t *dims, int ndim) {
    TN__CHECK_NULL(t);
    if (ndim != t->ndim || (ndim && !dims))
        return (tn_tensor *)tn__error("tn_permute: number of dims (%d) doesn't match the tensor's %d dims (shape %s)", ndim, t->ndim, TN__SHAPE(t));
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS], perm[TN_MAX_DIMS];
    bool seen[TN_MAX_DIMS] = {false};
    for (int i = 0; i < ndim; i++) {
        int d = tn__wrap_dim("tn_permute", dims[i], ndim);
        if (d < 0) return NULL;
        if (seen[d]) return (tn_tensor *)tn__error("tn_permute: dim %d repeats in %s", d, tn__shape_str(dims, ndim));
        seen[d] = true;
        perm[i] = d;
        ns[i] = t->shape[d];
        st[i] = t->strides[d];
    }
    return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_PERMUTE, perm, ndim);
}

TNDEF tn_tensor *tn_transpose(tn_tensor *t, int64_t dim0, int64_t dim1) {
    TN__CHECK_NULL(t);
    int a = tn__wrap_dim("tn_transpose", dim0, t->ndim), b = a < 0 ? -1 : tn__wrap_dim("tn_transpose", dim1, t->ndim);
    if (a < 0 || b < 0) return NULL;
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    memcpy(st, t->strides, sizeof st);
    if (t->ndim) {
        ns[a] = t->shape[b]; ns[b] = t->shape[a];
        st[a] = t->strides[b]; st[b] = t->strides[a];
    }
    int64_t perm[TN_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) perm[i] = i == a ? b : i == b ? a : i;
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, t->ndim, t->offset), G_PERMUTE, perm, t->ndim), "TransposeBackward0");
}

TNDEF tn_tensor *tn_t(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->ndim > 2) return (tn_tensor *)tn__error("tn_t: expects a tensor with <= 2 dimensions, but got %d (shape %s)", t->ndim, TN__SHAPE(t));
    return tn__grad_name(t->ndim < 2 ? tn__view_record(t, tn__view_own(t, t->shape, t->strides, t->ndim, t->offset), G_RESHAPE, NULL, 0) : tn_transpose(t, 0, 1), "TBackward0");
}

TNDEF tn_tensor *tn_narrow(tn_tensor *t, int64_t dim, int64_t start, int64_t length) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_narrow: cannot be applied to a 0-dim tensor");
    int d = tn__wrap_dim("tn_narrow", dim, t->ndim);
    if (d < 0) return NULL;
    int64_t size = t->shape[d];
    if (start < -size || start > size)
        return (tn_tensor *)tn__error("tn_narrow: start %lld out of range for dimension %d of size %lld", (long long)start, d, (long long)size);
    if (start < 0) start += size;
    if (length < 0 || length > size - start)
        return (tn_tensor *)tn__error("tn_narrow: start (%lld) + length (%lld) exceeds dimension %d of size %lld", (long long)start, (long long)length, d, (long long)size);
    int64_t ns[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    ns[d] = length;
    int64_t attrs[3] = {d, start, 1};
    return tn__view_record(t, tn__view_own(t, ns, t->strides, t->ndim, tn__view_offset(t, start, t->strides[d])), G_SLICE, attrs, 3);
}
static tn_tensor *tn__narrow_copy_impl(tn_tensor *t, int64_t dim, int64_t start, int64_t length) {
    tn_scope_begin();
    tn_tensor *v = tn_narrow(t, dim, start, length);
    return tn__scope_return(v ? tn_clone(v) : NULL);
}
TNDEF tn_tensor *tn_narrow_copy(tn_tensor *t, int64_t dim, int64_t start, int64_t length) { return TN__AS("tn_narrow_copy", tn__narrow_copy_impl(t, dim, start, length)); }

TNDEF tn_tensor *tn_slice(tn_tensor *t, int64_t dim, int64_t start, int64_t stop, int64_t step) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_slice: cannot slice a 0-dim tensor");
    int d = tn__wrap_dim("tn_slice", dim, t->ndim);
    if (d < 0) return NULL;
    if (step <= 0) return (tn_tensor *)tn__error("tn_slice: step must be greater than zero, got %lld", (long long)step);
    int64_t size = t->shape[d];
    if (start < 0) start = start < -size ? 0 : start + size; /* Python's clamping */
    if (stop < 0) stop = stop < -size ? 0 : stop + size;
    start = TN__MIN(start, size);
    stop = TN__MAX(TN__MIN(stop, size), start);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    memcpy(st, t->strides, sizeof st);
    ns[d] = stop > start ? (stop - start - 1) / step + 1 : 0;
    if (ns[d] > 1) st[d] = tn__mul_or(st[d], step, st[d]); /* one element or none: the stride never applies (and may not fit); nor for an empty tensor */
    int64_t attrs[3] = {d, start, step};
    return tn__view_record(t, tn__view_own(t, ns, st, t->ndim, tn__view_offset(t, start, t->strides[d])), G_SLICE, attrs, 3);
}

TNDEF tn_tensor *tn_select(tn_tensor *t, int64_t dim, int64_t index) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_select: cannot be applied to a 0-dim tensor");
    int d = tn__wrap_dim("tn_select", dim, t->ndim);
    if (d < 0) return NULL;
    if (index < -t->shape[d] || index >= t->shape[d])
        return (tn_tensor *)tn__error("tn_select: index %lld out of range for tensor of size %s at dimension %d", (long long)index, TN__SHAPE(t), d);
    if (index < 0) index += t->shape[d];
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    int64_t attrs[2] = {d, index};
    return tn__view_record(t, tn__view_own(t, ns, st, nd, tn__view_offset(t, index, t->strides[d])), G_SELECT, attrs, 2);
}

/* g [..., L] laid along the offset diagonal of zeros [..., n, m], built of pad and reshape
   so that it stays differentiable: row k of [L, m + 1] holds g[k] first, and read flat
   from `start` those rows put g[k] at (k, k + offset) of the [n, m] matrix. */
static tn_tensor *tn__diag_place(tn_tensor *g, int64_t n, int64_t m, int64_t offset) {
    if (!g) return NULL;
    int nb = g->ndim - 1;
    int64_t shape[TN_MAX_DIMS + 1], flat[TN_MAX_DIMS], total, L = g->shape[nb], row, len;
    memcpy(shape, g->shape, (size_t)nb * sizeof *shape);
    shape[nb] = n; shape[nb + 1] = m;
    if (nb + 2 > TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_diag_embed: the result would have %d dims, more than %d", nb + 2, TN_MAX_DIMS);
    if (!tn__mul_ok(n, m, &total) || !tn__add_ok(m, 1, &row) || !tn__mul_ok(L, row, &len) || tn__check_shape("tn_diag_embed", shape, nb + 2)) return NULL;
    if (L == 0 || total == 0) return tn__own(tn__full_on(shape, nb + 2, 0, g->dtype, g->device));   /* nothing to place */
    memcpy(flat, g->shape, (size_t)nb * sizeof *flat);
    flat[nb] = len;
    const int64_t start = offset >= 0 ? offset : -offset * m, p1[2] = {0, m}, p2[2] = {start, total - start - len};
    return tn_reshape(tn_pad(tn_reshape(tn_pad(tn_unsqueeze(g, -1), p1, 2), flat, nb + 1), p2, 2), shape, nb + 2);
}
/* Where each of ndim dims comes from in [others..., d1, d2]: a permutation for tn_permute. */
static void tn__diag_perm(int ndim, int d1, int d2, int64_t *perm) {
    for (int k = 0, j = 0; k < ndim; k++) perm[k] = k == d1 ? ndim - 2 : k == d2 ? ndim - 1 : j++;
}

/* tn_diagonal's body, positional for the library's own callers */
static tn_tensor *tn__diagonal(tn_tensor *t, int64_t offset, int64_t dim1, int64_t dim2) {
    TN__CHECK_NULL(t);
    int d1 = tn__wrap_dim("tn_diagonal", dim1, t->ndim), d2 = d1 < 0 ? -1 : tn__wrap_dim("tn_diagonal", dim2, t->ndim);
    if (d1 < 0 || d2 < 0) return NULL;
    if (d1 == d2) return (tn_tensor *)tn__error("tn_diagonal: diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
    int64_t n = t->shape[d1], m = t->shape[d2], L, off = t->offset;
    if (offset >= 0) L = offset >= m ? 0 : TN__MIN(n, m - offset);
    else L = -offset >= n ? 0 : TN__MIN(n + offset, m);
    if (L > 0) off = tn__view_offset(t, offset >= 0 ? offset : -offset, offset >= 0 ? t->strides[d2] : t->strides[d1]);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d1 && i != d2) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    ns[nd] = L;
    st[nd++] = L > 1 ? t->strides[d1] + t->strides[d2] : 1;   /* a size-1 diagonal's stride never applies */
    int64_t attrs[3] = {d1, d2, offset};
    return tn__view_record(t, tn__view_own(t, ns, st, nd, off), G_DIAGONAL, attrs, 3);
}
TNDEF tn_tensor *tn_diagonal_opts(tn_tensor *t, tn_diagonal_fn_opts o) { return tn__diagonal(t, o.offset, o.dim1, o.dim2); }
TNDEF tn_tensor *tn_diagonal_str(tn_tensor *t, const char *options) {
    TN__KW_STR(tn_diagonal_fn_opts, diagonal, "tn_diagonal", options, tn_diagonal_opts(t, o));
}

static tn_tensor *tn__diag_embed_impl(tn_tensor *t, int64_t offset, int64_t dim1, int64_t dim2) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_diag_embed: expected an input of at least 1 dimension, got a 0-d tensor");
    int nd = t->ndim + 1, d1 = tn__wrap_dim("tn_diag_embed", dim1, nd), d2 = d1 < 0 ? -1 : tn__wrap_dim("tn_diag_embed", dim2, nd);
    if (d1 < 0 || d2 < 0) return NULL;
    if (d1 == d2) return (tn_tensor *)tn__error("tn_diag_embed: diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
    int64_t n, perm[TN_MAX_DIMS + 1];
    if (!tn__add_ok(t->shape[t->ndim - 1], offset < 0 ? -offset : offset, &n)) return (tn_tensor *)tn__error("tn_diag_embed: offset %lld is too large", (long long)offset);
    tn__diag_perm(nd, d1, d2, perm);
    tn_scope_begin();
    return tn__scope_return(tn_permute(tn__diag_place(t, n, n, offset), perm, nd));
}
TNDEF tn_tensor *tn_diag_embed_opts(tn_tensor *t, tn_diag_embed_fn_opts o) {
    return tn__grad_name(TN__AS("tn_diag_embed", tn__diag_embed_impl(t, o.offset, o.dim1, o.dim2)), "DiagEmbedBackward0");
}
TNDEF tn_tensor *tn_diag_embed_str(tn_tensor *t, const char *options) {
    TN__KW_STR(tn_diag_embed_fn_opts, diag_embed, "tn_diag_embed", options, tn_diag_embed_opts(t, o));
}
TNDEF tn_tensor *tn_diag_opts(tn_tensor *t, tn_diag_fn_opts o) {
    const int64_t diagonal = o.diagonal;
    TN__CHECK_NULL(t);
    if (t->ndim == 1) return TN__AS("tn_diag", tn__diag_embed_impl(t, diagonal, 0, 1));
    if (t->ndim != 2) return (tn_tensor *)tn__error("tn_diag: Supports 1D or 2D tensors. Got %dD", t->ndim);
    tn_scope_begin();
    return tn__scope_return(TN__AS("tn_diag", tn_clone(tn__diagonal(t, diagonal, 0, 1))));
}
TNDEF tn_tensor *tn_diag_str(tn_tensor *t, const char *options) {
    TN__KW_STR(tn_diag_fn_opts, diag, "tn_diag", options, tn_diag_opts(t, o));
}
TNDEF tn_tensor *tn_diagflat_opts(tn_tensor *t, tn_diagflat_fn_opts o) {
    const int64_t offset = o.offset;
    TN__CHECK_NULL(t);
    const int64_t flat = -1;
    tn_scope_begin();
    return tn__scope_return(TN__AS("tn_diagflat", tn__diag_embed_impl(tn_reshape(t, &flat, 1), offset, 0, 1)));
}
TNDEF tn_tensor *tn_diagflat_str(tn_tensor *t, const char *options) {
    TN__KW_STR(tn_diagflat_fn_opts, diagflat, "tn_diagflat", options, tn_diagflat_opts(t, o));
}

/* Strides of t expanded to shape (aligned right); -1 keeps a size. Returns 0 or -1 + error. */
static int tn__expand_strides(const char *fn, tn_tensor *t, const int64_t *shape, int ndim, int64_t *ns, int64_t *st) {
    if (ndim < t->ndim || ndim > TN_MAX_DIMS || (ndim && !shape))
        return TN__FAIL_INT("%s: the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d, shape %s)", fn, ndim, t->ndim, TN__SHAPE(t));
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - (ndim - t->ndim);
        int64_t want = shape[i];
        if (j < 0) {
            if (want < 0) return TN__FAIL_INT("%s: the expanded size %lld is not allowed in a leading, non-existing dimension", fn, (long long)want);
            ns[i] = want; st[i] = 0;
        } else if (want == -1 || want == t->shape[j]) {
            ns[i] = t->shape[j]; st[i] = t->strides[j];
        } else if (t->shape[j] == 1 && want >= 0) {
            ns[i] = want; st[i] = 0;
        } else {
            return TN__FAIL_INT("%s: the expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton dimension %d; target sizes %s, tensor sizes %s",
                                fn, (long long)want, (long long)t->shape[j], i, tn__shape_str(shape, ndim), TN__SHAPE(t));
        }
    }
    return tn__check_shape(fn, ns, ndim);
}

TNDEF tn_tensor *tn_expand(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (tn__expand_strides("tn_expand", t, shape, ndim, ns, st)) return NULL;
    return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_EXPAND, NULL, 0);
}
TNDEF tn_tensor *tn_expand_as(tn_tensor *t, tn_tensor *other) { TN__CHECK_NULL(t, other); return TN__AS("tn_expand_as", tn_expand(t, other->shape, other->ndim)); }
TNDEF tn_tensor *tn_broadcast_to(tn_tensor *t, const int64_t *shape, int ndim) { return TN__AS("tn_broadcast_to", tn_expand(t, shape, ndim)); }

TNDEF tn_tensor *tn_squeeze(tn_tensor *t) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] != 1) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset), G_RESHAPE, NULL, 0), "SqueezeBackward0");
}

TNDEF tn_tensor *tn_squeeze_dim(tn_tensor *t, int64_t dim) {
    TN__CHECK_NULL(t);
    int d = tn__wrap_dim("tn_squeeze_dim", dim, t->ndim);
    if (d < 0) return NULL;
    if (t->ndim == 0 || t->shape[d] != 1) return tn__grad_name(tn__view_record(t, tn__view_own(t, t->shape, t->strides, t->ndim, t->offset), G_RESHAPE, NULL, 0), "SqueezeBackward1");
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset), G_RESHAPE, NULL, 0), "SqueezeBackward1");
}

TNDEF tn_tensor *tn_unsqueeze(tn_tensor *t, int64_t dim) {
    TN__CHECK_NULL(t);
    if (t->ndim >= TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_unsqueeze: a %d-d tensor cannot grow past %d dims", t->ndim, TN_MAX_DIMS);
    int d = tn__wrap_dim("tn_unsqueeze", dim, t->ndim + 1);
    if (d < 0) return NULL;
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == d) { ns[nd] = 1; st[nd++] = d < t->ndim ? tn__mul_or(t->shape[d], t->strides[d], 1) : 1; }   /* a size-1 dim's stride is never used */
        if (i < t->ndim) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    }
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset), G_RESHAPE, NULL, 0), "UnsqueezeBackward0");
}

TNDEF tn_tensor *tn_unfold(tn_tensor *t, int64_t dim, int64_t size, int64_t step) {
    TN__CHECK_NULL(t);
    int d = tn__wrap_dim("tn_unfold", dim, t->ndim);
    if (d < 0) return NULL;
    int64_t dsize = t->ndim ? t->shape[d] : 1, dstride = t->ndim ? t->strides[d] : 1;
    if (size < 0 || size > dsize)
        return (tn_tensor *)tn__error("tn_unfold: maximum size for tensor at dimension %d is %lld but size is %lld", d, (long long)dsize, (long long)size);
    if (step <= 0) return (tn_tensor *)tn__error("tn_unfold: step is %lld but must be > 0", (long long)step);
    if (t->ndim >= TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_unfold: a %d-d tensor cannot grow past %d dims", t->ndim, TN_MAX_DIMS);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    memcpy(st, t->strides, sizeof st);
    if (t->ndim == 0) { /* PyTorch: a 0-d tensor unfolds to shape [size] */
        ns[0] = size; st[0] = 1;
        int64_t attrs0[3] = {0, size, step};
        return tn__view_record(t, tn__view_own(t, ns, st, 1, t->offset), G_UNFOLD, attrs0, 3);
    }
    int nd = t->ndim;

    ns[d] = (dsize - size) / step + 1;
    st[d] = tn__mul_or(dstride, step, dstride);   /* fits when it is used: more than one window of a non-empty tensor */
    ns[nd] = size;
    st[nd] = dstride;
    if (tn__check_shape("tn_unfold", ns, nd + 1)) return NULL;   /* overlapping windows of an expanded view can outnumber int64 */
    int64_t attrs[3] = {d, size, step};
    return tn__view_record(t, tn__view_own(t, ns, st, nd + 1, t->offset), G_UNFOLD, attrs, 3);
}

/* The storage index (less base) of every element of a geometry, as an int64 tensor of its shape. */
static tn_tensor *tn__storage_index(const int64_t *shape, const int64_t *strides, int nd, int64_t offset, int64_t base) {
    int64_t ones[TN_MAX_DIMS];
    for (int k = 0; k < nd; k++) ones[k] = 1;
    tn_tensor *idx = tn_reshape(tn_scalar_tensor((double)(offset - base), TN_I64), ones, nd);
    for (int k = 0; k < nd; k++) {
        ones[k] = shape[k];
        idx = tn_add(idx, tn_reshape(tn_mul(tn_arange(0, (double)shape[k], 1, TN_I64), tn_scalar_int(strides[k])), ones, nd));
        ones[k] = 1;
    }
    return idx;
}
/* PyTorch's AsStridedBackward: the output's gradient is summed into the storage positions
   it was read from, and each input element takes its position's sum (shared by the
   elements of an input that overlaps itself). Index tensors of both geometries, relative
   to the lowest position either reaches, are saved for it. */
static tn_tensor *tn__as_strided_record(tn_tensor *t, tn_tensor *v) {
    if (!v || !t->requires_grad || !tn_is_grad_enabled()) return v;
    int64_t lo = TN__MIN(t->offset, v->offset), hi = -1, last;
    if (tn_numel(t) && tn__span_ok(t->shape, t->strides, t->ndim, t->offset, &last)) hi = last;
    if (tn_numel(v) && tn__span_ok(v->shape, v->strides, v->ndim, v->offset, &last)) hi = TN__MAX(hi, last);
    tn_node *node = tn__node_new(G_AS_STRIDED, 0, &t, 1);
    if (!node) return tn__node_attach(NULL, v);
    node->i[0] = hi - lo + 1;   /* positions in all */
    node->ni = 1;
    tn_scope_begin();
    tn_tensor *ii = tn_to(tn__storage_index(t->shape, t->strides, t->ndim, t->offset, lo), t->device);
    tn_tensor *io = tn_to(tn__storage_index(v->shape, v->strides, v->ndim, v->offset, lo), t->device);
    if (ii && io) { tn__node_save(node, ii); tn__node_save(node, io); }
    tn_scope_end();
    return tn__node_attach(node, v);
}

TNDEF tn_tensor *tn_as_strided(tn_tensor *t, const int64_t *shape, int ndim, const int64_t *strides, int64_t offset) {
    TN__CHECK_NULL(t);
    if (tn__check_shape("tn_as_strided", shape, ndim)) return NULL;
    if (ndim && !strides) return (tn_tensor *)tn__error("tn_as_strided: strides is NULL");
    int64_t last, es = (int64_t)tn_dtype_size(t->dtype), bytes = 0;
    if (offset < 0) return (tn_tensor *)tn__error("tn_as_strided: negative storage offset %lld", (long long)offset);
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0) return (tn_tensor *)tn__error("tn_as_strided: negative stride %lld", (long long)strides[i]);
    int64_t count = 0;
    if (!tn__span_ok(shape, strides, ndim, offset, &last) || (last >= 0 && (!tn__add_ok(last, 1, &count) || !tn__mul_ok(count, es, &bytes) || bytes > (int64_t)t->storage->nbytes)))
        return (tn_tensor *)tn__error("tn_as_strided: size %s, stride %s, offset %lld reach past the storage's %lld elements",
            tn__shape_str(shape, ndim), tn__shape_str(strides, ndim), (long long)offset, (long long)(t->storage->nbytes / (size_t)es));
    return tn__as_strided_record(t, tn__view_own(t, shape, strides, ndim, offset));
}
/* The view scatters: the view taken of the flat positions of t (an arange of t's shape)
   names the elements src replaces, and a scatter along the flattened t writes them
   (out-of-place, so t and src both get their gradients, to any order: t's outside the view,
   src's the view's part). kind: 0 select, 1 slice, 2 diagonal, 3 as_strided; a[]: their
   arguments. */
static tn_tensor *tn__view_scatter(const char *fn, int kind, tn_tensor *t, tn_tensor *src, const int64_t *a, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t, src);
    if (tn__check_same_device(fn, t, src)) return NULL;
    if (kind == 1 && a[3] <= 0) return (tn_tensor *)tn__error("%s: slice step must be positive (got %lld)", fn, (long long)a[3]);
    const int64_t n = tn_numel(t), flat = -1;
    tn_scope_begin();
    tn_tensor *pos = tn_reshape(tn_arange(0, (double)n, 1, TN_I64), t->shape, t->ndim), *view = NULL;
    if (pos && kind == 0) view = tn_select(pos, a[0], a[1]);
    if (pos && kind == 1) view = tn_slice(pos, a[0], a[1] == TN_NONE ? 0 : a[1], a[2] == TN_NONE ? TN_END : a[2], a[3]);
    if (pos && kind == 2) {
        tn_diagonal_fn_opts o = TN_DEFAULTS(tn_diagonal_fn_opts);
        o.offset = a[0]; o.dim1 = a[1]; o.dim2 = a[2];
        view = tn_diagonal_opts(pos, o);
    }
    if (pos && kind == 3) view = tn_as_strided(pos, shape, ndim, a, a[TN_MAX_DIMS] == TN_NONE ? 0 : a[TN_MAX_DIMS]);
    if (view && (view->ndim != src->ndim || (view->ndim && memcmp(view->shape, src->shape, (size_t)view->ndim * sizeof(int64_t))))) {
        tn__error("%s: expected src to have a size equal to the slice of self. src size = %s, slice size = %s", fn, TN__SHAPE(src), TN__SHAPE(view));
        tn_scope_end();   /* after the message: it reads the view's shape */
        return NULL;
    }
    tn_tensor *idx = view ? tn_to(tn_reshape(view, &flat, 1), t->device) : NULL;
    tn_tensor *r = idx ? tn_scatter(tn_reshape(t, &n, 1), 0, idx, tn_reshape(tn_to_dtype(src, t->dtype), &flat, 1)) : NULL;
    return tn__scope_return(r ? tn_reshape(r, t->shape, t->ndim) : NULL);
}
TNDEF tn_tensor *tn_select_scatter(tn_tensor *t, tn_tensor *src, int64_t dim, int64_t index) {
    const int64_t a[2] = {dim, index};
    return TN__AS("tn_select_scatter", tn__view_scatter("tn_select_scatter", 0, t, src, a, NULL, 0));
}
TNDEF tn_tensor *tn_slice_scatter_opts(tn_tensor *t, tn_tensor *src, tn_slice_scatter_fn_opts o) {
    const int64_t a[4] = {o.dim, o.start, o.end, o.step};
    return TN__AS("tn_slice_scatter", tn__view_scatter("tn_slice_scatter", 1, t, src, a, NULL, 0));
}
TNDEF tn_tensor *tn_slice_scatter_str(tn_tensor *t, tn_tensor *src, const char *options) {
    TN__KW_STR(tn_slice_scatter_fn_opts, slice_scatter, "tn_slice_scatter", options, tn_slice_scatter_opts(t, src, o));
}
TNDEF tn_tensor *tn_diagonal_scatter_opts(tn_tensor *t, tn_tensor *src, tn_diagonal_fn_opts o) {
    const int64_t a[3] = {o.offset, o.dim1, o.dim2};
    return TN__AS("tn_diagonal_scatter", tn__view_scatter("tn_diagonal_scatter", 2, t, src, a, NULL, 0));
}
TNDEF tn_tensor *tn_diagonal_scatter_str(tn_tensor *t, tn_tensor *src, const char *options) {
    TN__KW_STR(tn_diagonal_fn_opts, diagonal, "tn_diagonal_scatter", options, tn_diagonal_scatter_opts(t, src, o));
}
TNDEF tn_tensor *tn_as_strided_scatter(tn_tensor *t, tn_tensor *src, const int64_t *shape, int ndim, const int64_t *strides, int64_t storage_offset) {
    if (ndim < 0 || ndim > TN_MAX_DIMS || (ndim && (!shape || !strides)))
        return (tn_tensor *)tn__error("tn_as_strided_scatter: invalid size and stride (%d dims)", ndim);
    int64_t a[TN_MAX_DIMS + 1];
    if (ndim) memcpy(a, strides, (size_t)ndim * sizeof *a);
    a[TN_MAX_DIMS] = storage_offset;
    return TN__AS("tn_as_strided_scatter", tn__view_scatter("tn_as_strided_scatter", 3, t, src, a, shape, ndim));
}

TNDEF tn_tensor *tn_detach(tn_tensor *t) {
    TN__CHECK_NULL(t);
    return tn__view_own(t, t->shape, t->strides, t->ndim, t->offset);
}
