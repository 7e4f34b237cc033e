/* ---- joining and splitting ---- */
static tn_tensor *tn__cat_impl(tn_tensor *const *ts, int n, int64_t dim) {
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("tn_cat: expected a non-empty list of tensors");
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    tn_tensor *ref = NULL; /* first tensor that is not a legacy 1-d empty one */
    for (int i = 0; i < n && !ref; i++) if (!(ts[i]->ndim == 1 && ts[i]->shape[0] == 0)) ref = ts[i];
    if (!ref) ref = ts[0];
    for (int i = 0; i < n; i++)
        if (ts[i]->ndim == 0) return (tn_tensor *)tn__error("tn_cat: zero-dimensional tensor (at position %d) cannot be concatenated", i);
    int d = tn__wrap_dim("tn_cat", dim, ref->ndim);
    if (d < 0) return NULL;
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, ref->shape, sizeof shape);
    shape[d] = 0;
    for (int i = 0; i < n; i++) {
        tn_tensor *t = ts[i];
        if (t->ndim == 1 && t->shape[0] == 0 && ref->ndim != 1) continue;
        if (t->ndim != ref->ndim) return (tn_tensor *)tn__error("tn_cat: tensors must have same number of dimensions: got %d and %d (tensor %d)", ref->ndim, t->ndim, i);
        if (tn__check_same_device("tn_cat", ref, t)) return NULL;
        for (int j = 0; j < t->ndim; j++)
            if (j != d && t->shape[j] != ref->shape[j])
                return (tn_tensor *)tn__error("tn_cat: sizes of tensors must match except in dimension %d: expected size %lld but got size %lld for tensor number %d in the list (shapes %s and %s)",
                                              d, (long long)ref->shape[j], (long long)t->shape[j], i, TN__SHAPE(ref), TN__SHAPE(t));
        shape[d] += t->shape[d];
    }
    tn_tensor *out = tn__new(tn_result_type(ts, n), ref->device, shape, ref->ndim);
    int64_t off = 0;
    for (int i = 0; i < n && out && tn_numel(out) > 0; i++) {   /* an empty result has nothing to copy (and offsets that may not fit) */
        tn_tensor *t = ts[i];
        if (t->ndim != ref->ndim) continue;
        tn_tensor part = tn__shallow(out);
        part.shape[d] = t->shape[d];
        part.offset = out->offset + off * out->strides[d];
        off += t->shape[d];
        if (tn__copy(&part, t)) { tn_release(out); out = NULL; }
    }
    tn_node *nd = out ? tn__node_new(G_CAT, 0, ts, n) : NULL;
    if (nd) nd->i[0] = d;
    return tn__own(tn__node_attach(nd, out));
}
TNDEF tn_tensor *tn_cat_opts(tn_tensor *const *ts, int n, tn_cat_fn_opts o) {
    TN__AUTOCAST_LIST(TN__AC_PROMOTE, tn_cat_opts(ac_, n, o), ts, n);
    return TN__AS("tn_cat", tn__cat_impl(ts, n, o.dim));
}
TNDEF tn_tensor *tn_cat_str(tn_tensor *const *ts, int n, const char *options) {
    TN__KW_STR(tn_cat_fn_opts, cat, "tn_cat", options, tn_cat_opts(ts, n, o));
}

static tn_tensor *tn__stack_impl(tn_tensor *const *ts, int n, int64_t dim) {
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("tn_stack: expected a non-empty list of tensors");
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    for (int i = 1; i < n; i++)
        if (ts[i]->ndim != ts[0]->ndim || memcmp(ts[i]->shape, ts[0]->shape, (size_t)ts[0]->ndim * sizeof(int64_t)))
            return (tn_tensor *)tn__error("tn_stack: stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d", TN__SHAPE(ts[0]), TN__SHAPE(ts[i]), i);
    int d = tn__wrap_dim("tn_stack", dim, ts[0]->ndim + 1);
    if (d < 0) return NULL;
    tn_tensor **us = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *us);
    if (!us) return (tn_tensor *)tn__error("tn_stack: out of memory");
    tn_scope_begin();
    for (int i = 0; i < n; i++) us[i] = tn_unsqueeze(ts[i], d);
    tn_tensor *r = tn_keep(tn_cat(us, n, .dim = d));
    tn_scope_end();
    TN_FREE(us);
    return r;
}
TNDEF tn_tensor *tn_stack_opts(tn_tensor *const *ts, int n, tn_cat_fn_opts o) {
    TN__AUTOCAST_LIST(TN__AC_PROMOTE, tn_stack_opts(ac_, n, o), ts, n);
    return tn__grad_name(TN__AS("tn_stack", tn__stack_impl(ts, n, o.dim)), "StackBackward0");
}
TNDEF tn_tensor *tn_stack_str(tn_tensor *const *ts, int n, const char *options) {
    TN__KW_STR(tn_cat_fn_opts, cat, "tn_stack", options, tn_stack_opts(ts, n, o));
}

TNDEF int tn_split_sizes_opts(tn_tensor *t, const int64_t *sizes, int n, tn_tensor **out, int max_out, tn_split_fn_opts o) {
    if (!t) return -1;
    if (t->ndim == 0) return TN__FAIL_INT("tn_split_sizes: cannot split a 0-dim tensor");
    int d = tn__wrap_dim("tn_split_sizes", o.dim, t->ndim);
    if (d < 0) return -1;
    if (n < 0 || (n > 0 && !sizes)) return TN__FAIL_INT("tn_split_sizes: sizes must be a non-NULL array of n >= 0 entries (n = %d)", n);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0) return TN__FAIL_INT("tn_split_sizes: split sizes must be non-negative, got %lld", (long long)sizes[i]);
        if (!tn__add_ok(total, sizes[i], &total)) return TN__FAIL_INT("tn_split_sizes: split sizes %s overflow", tn__shape_str(sizes, n));
    }
    if (total != t->shape[d])
        return TN__FAIL_INT("tn_split_sizes: split sizes %s sum to %lld, expected the size of dim %d (%lld)", tn__shape_str(sizes, n), (long long)total, d, (long long)t->shape[d]);
    if (out && max_out < n) return TN__FAIL_INT("tn_split_sizes: %d pieces do not fit in max_out = %d", n, max_out);
    int64_t start = 0;
    for (int i = 0; i < n && out; i++) {
        out[i] = tn_narrow(t, d, start, sizes[i]);
        start += sizes[i];
    }
    return n;
}
TNDEF int tn_split_sizes_str(tn_tensor *t, const int64_t *sizes, int n, tn_tensor **out, int max_out, const char *options) {
    TN__KW_STR_INT(tn_split_fn_opts, split, "tn_split_sizes", options, tn_split_sizes_opts(t, sizes, n, out, max_out, o));
}

/* Pieces of `size` along dim d: all `step` long but the last (n pieces), or, when
   step is 0 (an empty dim chunked), n empty pieces. */
static int tn__split_even(const char *fn, tn_tensor *t, int d, int64_t step, int64_t n, tn_tensor **out, int max_out) {
    if (n > INT32_MAX) return TN__FAIL_INT("%s: %lld pieces is too many", fn, (long long)n);
    if (out && max_out < n) return TN__FAIL_INT("%s: %lld pieces do not fit in max_out = %d", fn, (long long)n, max_out);
    for (int64_t i = 0; i < n && out; i++) {
        int64_t start = TN__MIN(i * step, t->shape[d]);
        out[i] = tn_narrow(t, d, start, TN__MIN(step, t->shape[d] - start));
    }
    return (int)n;
}

TNDEF int tn_split_opts(tn_tensor *t, int64_t split_size, tn_tensor **out, int max_out, tn_split_fn_opts o) {
    if (!t) return -1;
    if (t->ndim == 0) return TN__FAIL_INT("tn_split: cannot split a 0-dim tensor");
    int d = tn__wrap_dim("tn_split", o.dim, t->ndim);
    if (d < 0) return -1;
    if (split_size < 0 || (split_size == 0 && t->shape[d] != 0))
        return TN__FAIL_INT("tn_split: split_size must be positive (or 0 for an empty dim), got %lld", (long long)split_size);
    int64_t size = t->shape[d], n = split_size ? size / split_size + (size % split_size != 0) : 1;
    return tn__split_even("tn_split", t, d, split_size, n ? n : 1, out, max_out);
}
TNDEF int tn_split_str(tn_tensor *t, int64_t split_size, tn_tensor **out, int max_out, const char *options) {
    TN__KW_STR_INT(tn_split_fn_opts, split, "tn_split", options, tn_split_opts(t, split_size, out, max_out, o));
}

TNDEF int tn_chunk_opts(tn_tensor *t, int64_t chunks, tn_tensor **out, int max_out, tn_split_fn_opts o) {
    if (!t) return -1;
    if (chunks <= 0) return TN__FAIL_INT("tn_chunk: number of chunks must be greater than 0, got %lld", (long long)chunks);
    if (t->ndim == 0) return TN__FAIL_INT("tn_chunk: cannot chunk a 0-dim tensor");
    int d = tn__wrap_dim("tn_chunk", o.dim, t->ndim);
    if (d < 0) return -1;
    int64_t size = t->shape[d], step = size / chunks + (size % chunks != 0);
    if (size == 0) return tn__split_even("tn_chunk", t, d, 0, chunks, out, max_out); /* PyTorch: `chunks` empty pieces */
    return tn__split_even("tn_chunk", t, d, step, size / step + (size % step != 0), out, max_out);
}
TNDEF int tn_chunk_str(tn_tensor *t, int64_t chunks, tn_tensor **out, int max_out, const char *options) {
    TN__KW_STR_INT(tn_split_fn_opts, split, "tn_chunk", options, tn_chunk_opts(t, chunks, out, max_out, o));
}

static tn_tensor *tn__flip_impl(tn_tensor *t, const int64_t *dims, int n) {
    TN__CHECK_NULL(t);
    if (n < 0 || (n > 0 && !dims)) return (tn_tensor *)tn__error("tn_flip: dims must be a non-NULL array of n >= 0 entries (n = %d)", n);
    tn_tensor v = tn__shallow(t); /* a transient view walking the flipped dims backwards */
    bool seen[TN_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        int d = tn__wrap_dim("tn_flip", dims[i], t->ndim);
        if (d < 0) return NULL;
        if (seen[d]) return (tn_tensor *)tn__error("tn_flip: dim %d appears multiple times in the list of dims", d);
        seen[d] = true;
        if (t->ndim == 0 || tn_numel(t) == 0) continue;   /* nothing to flip (and the offset may not fit) */
        v.offset += (t->shape[d] - 1) * t->strides[d];
        v.strides[d] = -t->strides[d];
    }
    tn_tensor *out = tn__copy_as(&v, t->dtype, t->device);
    tn_node *nd = out ? tn__node_new(G_FLIP, 0, &t, 1) : NULL;
    if (nd) { nd->ni = n; for (int i = 0; i < n; i++) nd->i[i] = dims[i]; }
    return tn__own(tn__node_attach(nd, out));
}
TNDEF tn_tensor *tn_flip(tn_tensor *t, const int64_t *dims, int n) { return TN__AS("tn_flip", tn__flip_impl(t, dims, n)); }

static tn_tensor *tn__roll_impl(tn_tensor *t, const int64_t *shifts, const int64_t *dims, int n) {
    TN__CHECK_NULL(t);
    if (!shifts) return (tn_tensor *)tn__error("tn_roll: shifts is NULL");
    tn_scope_begin();
    tn_tensor *r = t;
    if (n == 0) {
        int64_t m1 = -1, zero = 0;
        tn_tensor *f = tn_roll(tn_reshape(t, &m1, 1), shifts, &zero, 1);
        r = f ? tn_reshape(f, t->shape, t->ndim) : NULL;
    } else if (!dims) {
        r = (tn_tensor *)tn__error("tn_roll: dims is NULL");
    }
    for (int i = 0; i < n && r; i++) {
        int d = tn__wrap_dim("tn_roll", dims[i], t->ndim);
        if (d < 0) { r = NULL; break; }
        int64_t size = t->ndim ? t->shape[d] : 1;
        if (size == 0) continue;
        int64_t s = ((shifts[i] % size) + size) % size;
        tn_tensor *parts[2] = {tn_narrow(r, d, size - s, s), tn_narrow(r, d, 0, size - s)};
        r = tn_cat(parts, 2, .dim = d);
    }
    if (r == t) r = tn_clone(t);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_roll(tn_tensor *t, const int64_t *shifts, const int64_t *dims, int n) { return tn__grad_name(TN__AS("tn_roll", tn__roll_impl(t, shifts, dims, n)), "RollBackward0"); }

static tn_tensor *tn__repeat_impl(tn_tensor *t, const int64_t *repeats, int n) {
    TN__CHECK_NULL(t);
    if (n < t->ndim) return (tn_tensor *)tn__error("tn_repeat: number of repeat dims (%d) can not be smaller than number of dimensions of tensor (%d)", n, t->ndim);
    if (n > TN_MAX_DIMS || (n && !repeats)) return (tn_tensor *)tn__error("tn_repeat: expected at most %d repeats, got %d", TN_MAX_DIMS, n);
    for (int i = 0; i < n; i++) if (repeats[i] < 0) return (tn_tensor *)tn__error("tn_repeat: repeats can not be negative, got %lld", (long long)repeats[i]);
    tn_scope_begin();
    int lead = n - t->ndim;
    int64_t shp[TN_MAX_DIMS] = {0}, out[TN_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        shp[i] = i < lead ? 1 : t->shape[i - lead];
        if (!tn__mul_ok(shp[i], repeats[i], &out[i])) { tn_scope_end(); return (tn_tensor *)tn__error("tn_repeat: repeats %s of shape %s give too many elements", tn__shape_str(repeats, n), TN__SHAPE(t)); }
    }
    int64_t total;
    if (tn__check_shape("tn_repeat", out, n)) { tn_scope_end(); return NULL; }
    tn__numel_ok(out, n, &total);
    tn_tensor *x = tn_reshape(t, shp, n), *r = x;
    if (total == 0) {   /* nothing to copy (and the products below may not fit) */
        int64_t all = -1;
        r = tn_reshape(tn_clone(tn_narrow(tn_reshape(x, &all, 1), 0, 0, 0)), out, n);   /* new storage, as PyTorch */
    }
    /* repeat one dim at a time, seen as [A, s, B] (A, B: the sizes before and after it):
       -> [A, 1, s, B] -> expand [A, r, s, B] -> copy -> [.., r * s, ..]. Four dims whatever
       n is, so an 8-d tensor repeats without a 9th dim. Every product here is at most the
       output's element count. */
    for (int i = 0; i < n && r && total > 0; i++) {
        if (repeats[i] == 1) continue;
        int64_t A = tn__numel(r->shape, i), B = tn__numel(r->shape + i + 1, n - 1 - i), s = r->shape[i];
        tn_tensor *u = tn_reshape(r, TN_SHAPE(A, 1, s, B));
        tn_tensor *e = tn_expand(u, TN_SHAPE(A, repeats[i], s, B));
        int64_t rs[TN_MAX_DIMS];
        memcpy(rs, r->shape, sizeof rs);
        rs[i] = out[i];
        r = tn_reshape(tn_contiguous(e), rs, n);
    }
    if (r == x) r = tn_clone(x);
    r = tn_keep(r ? tn_reshape(r, out, n) : NULL);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_repeat(tn_tensor *t, const int64_t *repeats, int n) { return tn__grad_name(TN__AS("tn_repeat", tn__repeat_impl(t, repeats, n)), "RepeatBackward0"); }

/* Keep elements with col - row <= diagonal (tril) or >= diagonal (triu). */
static tn_tensor *tn__tri(const char *fn, tn_tensor *t, int64_t diagonal, bool lower) {
    TN__CHECK_NULL(t);
    if (t->ndim < 2) return (tn_tensor *)tn__error("%s: input tensor must have at least 2 dimensions, got shape %s", fn, TN__SHAPE(t));
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    tn_scope_begin();
    tn_tensor *diff;   /* col - row over [r, c] */
    if (t->device == TN_CPU) {
        diff = tn_sub(tn_arange(0, (double)c, 1, TN_I64), tn_unsqueeze(tn_arange(0, (double)r, 1, TN_I64), 1));
    } else {   /* made on the device (no upload): running sums of ones along each dim are col + 1 and row + 1 */
        tn_tensor *ones = tn__own(tn__full_on(TN_SHAPE(r, c), 1, TN_I64, t->device));
        diff = tn_sub(tn_cumsum(ones, 1), tn_cumsum(ones, 0));
    }
    tn_tensor *mask = lower ? tn_le_scalar(diff, (double)diagonal) : tn_ge_scalar(diff, (double)diagonal);
    tn_tensor *res = tn_where(mask, t, tn_zeros(NULL, 0, t->dtype));
    tn_tensor *out = tn_keep(res ? tn_to_dtype(res, t->dtype) : NULL);
    tn_scope_end();
    return out;
}
/* tril / triu, positional for the library's own callers */
static tn_tensor *tn__tril(tn_tensor *t, int64_t diagonal) { return tn__grad_name(TN__AS("tn_tril", tn__tri("tn_tril", t, diagonal, true)), "TrilBackward0"); }
static tn_tensor *tn__triu(tn_tensor *t, int64_t diagonal) { return tn__grad_name(TN__AS("tn_triu", tn__tri("tn_triu", t, diagonal, false)), "TriuBackward0"); }
TNDEF tn_tensor *tn_tril_opts(tn_tensor *t, tn_diag_fn_opts o) { return tn__tril(t, o.diagonal); }
TNDEF tn_tensor *tn_triu_opts(tn_tensor *t, tn_diag_fn_opts o) { return tn__triu(t, o.diagonal); }
TNDEF tn_tensor *tn_tril_str(tn_tensor *t, const char *options) { TN__KW_STR(tn_diag_fn_opts, diag, "tn_tril", options, tn_tril_opts(t, o)); }
TNDEF tn_tensor *tn_triu_str(tn_tensor *t, const char *options) { TN__KW_STR(tn_diag_fn_opts, diag, "tn_triu", options, tn_triu_opts(t, o)); }

/* F.pad's constant mode (tn_pad_opts, in nn/padding.c, has the others). */
static tn_tensor *tn__pad_constant(tn_tensor *t, const int64_t *pad, int n, double value) {
    TN__CHECK_NULL(t);
    if (n % 2 || n / 2 > t->ndim || (n && !pad))
        return (tn_tensor *)tn__error("tn_pad: padding length %d must be even and at most twice the number of dims (%d)", n, t->ndim);
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    for (int i = 0; i < n / 2; i++) {
        int d = t->ndim - 1 - i;
        if (!tn__add_ok(shape[d], pad[2 * i], &shape[d]) || !tn__add_ok(shape[d], pad[2 * i + 1], &shape[d]))
            return (tn_tensor *)tn__error("tn_pad: padding %s of shape %s gives too many elements", tn__shape_str(pad, n), TN__SHAPE(t));
        if (shape[d] < 0)
            return (tn_tensor *)tn__error("tn_pad: the input size %lld, plus negative padding %lld and %lld resulted in a negative output size", (long long)t->shape[d], (long long)pad[2 * i], (long long)pad[2 * i + 1]);
    }
    if (tn__check_shape("tn_pad", shape, t->ndim) || tn__check_cpu_dtype("tn_pad", t)) return NULL;
    tn_tensor *out = TN__AS("tn_pad", tn__new(t->dtype, t->device, shape, t->ndim));
    if (!out || tn__backend(out->device)->fill(out, value)) { tn_release(out); return NULL; }
    tn_tensor src = tn__shallow(t), dst = tn__shallow(out); /* the overlap of input and output */
    bool empty = tn_numel(t) == 0 || tn_numel(out) == 0;   /* first: an empty tensor's offsets may not fit */
    for (int i = 0; i < n / 2 && !empty; i++) {
        int d = t->ndim - 1 - i;
        int64_t l = pad[2 * i], r = pad[2 * i + 1];
        int64_t s0 = l < 0 ? -l : 0, d0 = l > 0 ? l : 0;
        int64_t len = t->shape[d] - s0 - (r < 0 ? -r : 0);
        if (len <= 0) { empty = true; break; }
        src.offset += s0 * t->strides[d]; src.shape[d] = len;
        dst.offset += d0 * out->strides[d]; dst.shape[d] = len;
    }
    if (!empty && tn_numel(&src) > 0 && tn__copy(&dst, &src)) { tn_release(out); return NULL; }
    tn_node *nd = tn__node_new(G_PAD, 0, &t, 1);
    if (nd) { nd->ni = n; for (int i = 0; i < n; i++) nd->i[i] = pad[i]; }
    return tn__own(tn__node_attach(nd, out));
}

/* ---- repeat_interleave and diff ---- */
/* x with each slice along d repeated r times: [A, s, B] -> [A, s, r, B] -> [.., s * r, ..]
   (four dims whatever x's ndim, as tn_repeat). */
static tn_tensor *tn__repeat_slices(tn_tensor *x, int d, int64_t r) {
    int64_t out[TN_MAX_DIMS], all = -1;
    memcpy(out, x->shape, sizeof out);
    if (!tn__mul_ok(x->shape[d], r, &out[d])) return (tn_tensor *)tn__error("tn_repeat_interleave: %lld x %lld repeats overflow int64", (long long)x->shape[d], (long long)r);
    if (tn__check_shape("tn_repeat_interleave", out, x->ndim)) return NULL;
    if (tn__numel(out, x->ndim) == 0)   /* nothing to copy (and A * s * B below may not fit): a new empty tensor, still in the graph */
        return tn_reshape(tn_clone(tn_narrow(tn_reshape(x, &all, 1), 0, 0, 0)), out, x->ndim);
    int64_t A = tn__numel(x->shape, d), B = tn__numel(x->shape + d + 1, x->ndim - 1 - d), s = x->shape[d];
    return tn_reshape(tn_contiguous(tn_expand(tn_reshape(x, TN_SHAPE(A, s, 1, B)), TN_SHAPE(A, s, r, B))), out, x->ndim);
}
/* t flattened (dim TN_NONE) or as it is, and the dim to repeat along */
static tn_tensor *tn__repeat_input(const char *fn, tn_tensor *t, int64_t dim, int *d) {
    int64_t all = -1;
    if (dim == TN_NONE) { *d = 0; return tn_reshape(t, &all, 1); }
    if (t->ndim == 0) return (tn_tensor *)tn__error("%s: dim %lld out of range: Dimension specified as %lld but tensor has no dimensions", fn, (long long)dim, (long long)dim);
    *d = tn__wrap_dim(fn, dim, t->ndim);
    return *d < 0 ? NULL : t;
}
static tn_tensor *tn__repeat_interleave_impl(tn_tensor *t, int64_t repeats, int64_t dim, int64_t output_size) {
    const char *fn = "tn_repeat_interleave";
    TN__CHECK_NULL(t);
    if (repeats < 0) return (tn_tensor *)tn__error("%s: repeats can not be negative, got %lld", fn, (long long)repeats);
    tn_scope_begin();
    int d = 0;
    tn_tensor *x = tn__repeat_input(fn, t, dim, &d), *r = NULL;
    int64_t want = 0;
    if (x && output_size != TN_NONE && (!tn__mul_ok(x->shape[d], repeats, &want) || output_size != want))
        tn__error("%s: allocated size does not match required size (output_size %lld, %lld x %lld repeats)", fn, (long long)output_size, (long long)x->shape[d], (long long)repeats);
    else if (x) r = tn__repeat_slices(x, d, repeats);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_repeat_interleave_opts(tn_tensor *t, int64_t repeats, tn_repeat_interleave_fn_opts o) {
    return TN__AS("tn_repeat_interleave", tn__repeat_interleave_impl(t, repeats, o.dim, o.output_size));
}
TNDEF tn_tensor *tn_repeat_interleave_str(tn_tensor *t, int64_t repeats, const char *options) {
    TN__KW_STR(tn_repeat_interleave_fn_opts, repeat_interleave, "tn_repeat_interleave", options, tn_repeat_interleave_opts(t, repeats, o));
}
/* The counts of repeats (1-d or 0-d, int64 or int32) on the host, checked non-negative;
   their total in *total. */
static tn_tensor *tn__repeat_counts(const char *fn, tn_tensor *repeats, int64_t *total) {
    if (repeats->dtype != TN_I64 && repeats->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: \"repeat_interleave_cpu\" not implemented for '%s' (repeats must be int64 or int32)", fn, tn__torch_type_name(repeats->dtype));
    if (repeats->ndim > 1) return (tn_tensor *)tn__error("%s: repeats must be 0-dim or 1-dim tensor, got shape %s", fn, TN__SHAPE(repeats));
    tn_tensor *h = tn__copy_as(repeats, TN_I64, TN_CPU);
    if (!h) return NULL;
    const int64_t *v = (const int64_t *)tn_data_ptr(h);
    *total = 0;
    for (int64_t i = 0, n = tn_numel(h); i < n; i++) {
        if (v[i] < 0) {
            const long long bad = (long long)v[i];   /* (read before h goes) */
            tn_release(h);
            return (tn_tensor *)tn__error("%s: repeats can not be negative (repeats[%lld] = %lld)", fn, (long long)i, bad);
        }
        if (!tn__add_ok(*total, v[i], total)) { tn_release(h); return (tn_tensor *)tn__error("%s: the repeats' total overflows int64", fn); }
    }
    return h;
}
static tn_tensor *tn__repeat_indices_impl(const char *fn, tn_tensor *repeats, int64_t output_size) {
    TN__CHECK_NULL(repeats);
    int64_t total;
    tn_tensor *h = tn__repeat_counts(fn, repeats, &total);
    if (!h) return NULL;
    if (repeats->ndim != 1) { tn_release(h); return (tn_tensor *)tn__error("%s: repeats must be 1-dim, got shape %s", fn, TN__SHAPE(repeats)); }
    if (output_size != TN_NONE && output_size != total) {
        tn_release(h);
        return (tn_tensor *)tn__error("%s: allocated size does not match required size (output_size %lld, the repeats add up to %lld)", fn, (long long)output_size, (long long)total);
    }
    tn_tensor *out = tn__new(TN_I64, TN_CPU, &total, 1), *r = NULL;
    if (out) {
        const int64_t *v = (const int64_t *)tn_data_ptr(h);
        int64_t *o = (int64_t *)tn_data_ptr(out);
        for (int64_t i = 0, k = 0, n = tn_numel(h); i < n; i++)
            for (int64_t j = 0; j < v[i]; j++) o[k++] = i;
        r = tn__copy_as(out, repeats->dtype, repeats->device);
    }
    tn_release(out);
    tn_release(h);
    return tn__own(r);
}
TNDEF tn_tensor *tn_repeat_interleave_indices_opts(tn_tensor *repeats, tn_repeat_interleave_fn_opts o) {
    if (o.dim != TN_NONE) return (tn_tensor *)tn__error("tn_repeat_interleave_indices: dim is not an option of repeat_interleave(repeats) (valid: output_size)");
    return tn__repeat_indices_impl("tn_repeat_interleave_indices", repeats, o.output_size);
}
TNDEF tn_tensor *tn_repeat_interleave_indices_str(tn_tensor *repeats, const char *options) {
    TN__KW_STR(tn_repeat_interleave_fn_opts, repeat_interleave, "tn_repeat_interleave_indices", options, tn_repeat_interleave_indices_opts(repeats, o));
}
static tn_tensor *tn__repeat_interleave_tensor_impl(tn_tensor *t, tn_tensor *repeats, int64_t dim, int64_t output_size) {
    const char *fn = "tn_repeat_interleave";
    TN__CHECK_NULL(t, repeats);
    int64_t total;
    tn_tensor *h = tn__repeat_counts(fn, repeats, &total);
    if (!h) return NULL;
    tn_release(h);
    tn_scope_begin();
    int d = 0;
    tn_tensor *x = tn__repeat_input(fn, t, dim, &d), *r = NULL;
    if (x && tn_numel(repeats) == 1) {   /* one count for every slice */
        tn_tensor *one = tn__copy_as(repeats, TN_I64, TN_CPU);
        int64_t k = one ? *(const int64_t *)tn_data_ptr(one) : 0;
        tn_release(one);
        r = one ? TN__AS("tn_repeat_interleave", tn__repeat_interleave_impl(x, k, d, output_size)) : NULL;
    } else if (x && tn_numel(repeats) != x->shape[d]) {
        tn__error("%s: repeats must have the same size as input along dim (%lld repeats, size %lld)", fn, (long long)tn_numel(repeats), (long long)x->shape[d]);
    } else if (x) {
        int64_t all = -1;
        tn_tensor *idx = tn__repeat_indices_impl(fn, tn_reshape(repeats, &all, 1), output_size);
        r = idx ? tn_index_select(x, d, tn_to_dtype(idx, TN_I64)) : NULL;
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_repeat_interleave_tensor_opts(tn_tensor *t, tn_tensor *repeats, tn_repeat_interleave_fn_opts o) {
    return TN__AS("tn_repeat_interleave", tn__repeat_interleave_tensor_impl(t, repeats, o.dim, o.output_size));
}
TNDEF tn_tensor *tn_repeat_interleave_tensor_str(tn_tensor *t, tn_tensor *repeats, const char *options) {
    TN__KW_STR(tn_repeat_interleave_fn_opts, repeat_interleave, "tn_repeat_interleave", options, tn_repeat_interleave_tensor_opts(t, repeats, o));
}

static tn_tensor *tn__diff_impl(tn_tensor *t, int64_t n, int64_t dim, tn_tensor *prepend, tn_tensor *append) {
    const char *fn = "tn_diff";
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("%s: diff expects input to be at least one-dimensional", fn);
    /* PyTorch 2 refuses a negative order (1.13 returned the input unchanged) */
    if (n < 0) return (tn_tensor *)tn__error("%s: order must be non-negative but got %lld", fn, (long long)n);
    int d = tn__wrap_dim(fn, dim, t->ndim);
    if (d < 0) return NULL;
    tn_tensor *parts[3];
    int np = 0;
    for (int k = 0; k < 2; k++) {
        tn_tensor *p = k ? append : prepend;
        if (!p) continue;
        if (p->ndim != t->ndim) return (tn_tensor *)tn__error("%s: diff expects prepend or append to be the same dimension as input (input %s, got %s)", fn, TN__SHAPE(t), TN__SHAPE(p));
        for (int i = 0; i < t->ndim; i++)
            if (i != d && p->shape[i] != t->shape[i])
                return (tn_tensor *)tn__error("%s: diff expects the shape of tensor to prepend or append to match that of input except along the differencing dimension; "
                                              "input.size(%d) = %lld, but got tensor.size(%d) = %lld", fn, i, (long long)t->shape[i], i, (long long)p->shape[i]);
    }
    if (prepend) parts[np++] = prepend;
    parts[np++] = t;
    if (append) parts[np++] = append;
    tn_scope_begin();
    tn_tensor *r = np > 1 && n > 0 ? tn_cat(parts, np, .dim = d) : t;   /* n = 0: t itself, prepend and append ignored (as PyTorch) */
    for (int64_t k = 0; k < n && r; k++) {   /* one difference at a time; an empty dim stays empty */
        const int64_t len = r->shape[d];
        if (len == 0) break;
        tn_tensor *hi = tn_narrow(r, d, 1, len - 1), *lo = tn_narrow(r, d, 0, len - 1);
        r = r->dtype == TN_BOOL ? tn_logical_xor(hi, lo) : tn_sub(hi, lo);
    }
    if (r == t) r = tn_clone(t);   /* n = 0: a new tensor of the same values */
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_diff_opts(tn_tensor *t, tn_diff_fn_opts o) { return TN__AS("tn_diff", tn__diff_impl(t, o.n, o.dim, o.prepend, o.append)); }
TNDEF tn_tensor *tn_diff_str(tn_tensor *t, const char *options) { TN__KW_STR(tn_diff_fn_opts, diff, "tn_diff", options, tn_diff_opts(t, o)); }

/* torch.gradient (numpy.gradient's formulas): per dim, the interior (x[i+1] - x[i-1]) / 2h,
   or with coordinates the second-order weights of the uneven steps dx[i-1], dx[i]; the ends
   one-sided of edge_order. Composites of differentiable ops. */
static int tn__gradient_impl(const char *fn, tn_tensor *x, tn_tensor *const *coords, int ncoords, tn_tensor **out, const tn_gradient_fn_opts *o) {
    if (!x || !out) return -1;
    const int nd = x->ndim;
    int dims[TN_MAX_DIMS], n = o->dim.n ? o->dim.n : nd;
    if (n > TN_MAX_DIMS) return TN__FAIL_INT("%s: %d dims given, more than the %d of the input", fn, n, nd);
    for (int i = 0; i < n; i++) {
        dims[i] = o->dim.n ? tn__wrap_dim(fn, o->dim.v[i], nd) : i;
        if (dims[i] < 0) return -1;
        for (int j = 0; j < i; j++)
            if (dims[j] == dims[i]) return TN__FAIL_INT("%s: dim %d appears multiple times in the list of dims", fn, dims[i]);
    }
    if (o->edge_order != 1 && o->edge_order != 2) return TN__FAIL_INT("%s: torch.gradient only supports edge_order=1 and edge_order=2.", fn);
    const int ns = coords ? ncoords : o->spacing.n;
    if (coords ? ns != n : ns > 1 && ns != n)
        return TN__FAIL_INT("%s: torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, "
                            "but got a spacing argument of length %d and a dim argument of length %d.", fn, ns, n);
    for (int i = 0; i < n; i++) {
        if (x->shape[dims[i]] < o->edge_order + 1) return TN__FAIL_INT("%s: torch.gradient expected each dimension size to be at least edge_order+1", fn);
        if (coords && !coords[i]) return TN__FAIL_INT("%s: coordinates %d is NULL", fn, i);
    }
    tn_scope_begin();
    tn_tensor *xf = x;   /* integers as PyTorch's: promoted op by op (a float step or weight, a true division) */
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        const int64_t d = dims[i], len = x->shape[d];
#define TN__AT(a, l) tn_narrow(xf, d, (a) < 0 ? (a) + len : (a), l)
        tn_tensor *inner, *first, *last;
        if (coords) {
            int64_t along[TN_MAX_DIMS];
            for (int k = 0; k < nd; k++) along[k] = k == d ? -1 : 1;
            tn_tensor *dx = tn_diff(coords[i]), *p = dx ? tn_narrow(dx, 0, 0, dx->shape[0] - 1) : NULL, *q = dx ? tn_narrow(dx, 0, 1, dx->shape[0] - 1) : NULL;
            tn_tensor *dx1 = tn_reshape(p, along, nd), *dx2 = tn_reshape(q, along, nd), *s12 = tn_add(dx1, dx2);
            tn_tensor *a = tn_neg(tn_div(dx2, tn_mul(dx1, s12))), *b = tn_div(tn_sub(dx2, dx1), tn_mul(dx1, dx2)), *cc = tn_div(dx1, tn_mul(dx2, s12));
            inner = tn_add(tn_add(tn_mul(a, TN__AT(0, len - 2)), tn_mul(b, TN__AT(1, len - 2))), tn_mul(cc, TN__AT(2, len - 2)));
            const int64_t m = dx ? dx->shape[0] : 0;
            if (o->edge_order == 1) {
                first = tn_div(tn_sub(TN__AT(1, 1), TN__AT(0, 1)), tn_select(dx, 0, 0));
                last = tn_div(tn_sub(TN__AT(-1, 1), TN__AT(-2, 1)), tn_select(dx, 0, m - 1));
            } else {
                tn_tensor *h0 = tn_select(dx, 0, 0), *h1 = tn_select(dx, 0, 1), *h01 = tn_add(h0, h1);
                first = tn_add(tn_add(tn_mul(tn_neg(tn_div(tn_add(tn_mul_scalar(h0, 2), h1), tn_mul(h0, h01))), TN__AT(0, 1)),
                                      tn_mul(tn_div(h01, tn_mul(h0, h1)), TN__AT(1, 1))),
                               tn_mul(tn_neg(tn_div(h0, tn_mul(h1, h01))), TN__AT(2, 1)));
                h0 = tn_select(dx, 0, m - 2); h1 = tn_select(dx, 0, m - 1); h01 = tn_add(h0, h1);
                last = tn_add(tn_add(tn_mul(tn_div(h1, tn_mul(h0, h01)), TN__AT(-3, 1)), tn_mul(tn_neg(tn_div(h01, tn_mul(h0, h1))), TN__AT(-2, 1))),
                              tn_mul(tn_div(tn_add(tn_mul_scalar(h1, 2), h0), tn_mul(h1, h01)), TN__AT(-1, 1)));
            }
        } else {
            const double h = o->spacing.n == 0 ? 1 : o->spacing.v[o->spacing.n == 1 ? 0 : i];
            inner = tn_div_scalar(tn_sub(TN__AT(2, len - 2), TN__AT(0, len - 2)), 2 * h);
            if (o->edge_order == 1) {
                first = tn_div_scalar(tn_sub(TN__AT(1, 1), TN__AT(0, 1)), h);
                last = tn_div_scalar(tn_sub(TN__AT(-1, 1), TN__AT(-2, 1)), h);
            } else {
                first = tn_div_scalar(tn_add(tn_add(tn_mul_scalar(TN__AT(0, 1), -1.5), tn_mul_scalar(TN__AT(1, 1), 2)), tn_mul_scalar(TN__AT(2, 1), -0.5)), h);
                last = tn_div_scalar(tn_add(tn_add(tn_mul_scalar(TN__AT(-3, 1), 0.5), tn_mul_scalar(TN__AT(-2, 1), -2)), tn_mul_scalar(TN__AT(-1, 1), 1.5)), h);
            }
        }
#undef TN__AT
        tn_tensor *parts[3] = {first, inner, last};
        out[i] = first && inner && last ? tn_cat(parts, 3, .dim = d) : NULL;
        ok = out[i] != NULL;
    }
    for (int i = 0; i < n; i++) out[i] = ok ? tn_keep(out[i]) : NULL;
    tn_scope_end();
    return ok ? n : -1;
}
TNDEF int tn_gradient_opts(tn_tensor *x, tn_tensor **out, tn_gradient_fn_opts o) { return tn__gradient_impl("tn_gradient", x, NULL, 0, out, &o); }
TNDEF int tn_gradient_str(tn_tensor *x, tn_tensor **out, const char *options) {
    TN__KW_STR_INT(tn_gradient_fn_opts, gradient, "tn_gradient", options, tn_gradient_opts(x, out, o));
}
TNDEF int tn_gradient_coords(tn_tensor *x, tn_tensor *const *coords, int ncoords, tn_tensor **out, tn_gradient_fn_opts o) {
    if (!coords) return TN__FAIL_INT("tn_gradient_coords: coords is NULL");
    return tn__gradient_impl("tn_gradient", x, coords, ncoords, out, &o);
}
TNDEF int tn_gradient_coords_str(tn_tensor *x, tn_tensor *const *coords, int ncoords, tn_tensor **out, const char *options) {
    TN__KW_STR_INT(tn_gradient_fn_opts, gradient, "tn_gradient", options, tn_gradient_coords(x, coords, ncoords, out, o));
}

/* ---- composites of the above ---- */
static tn_tensor *tn__rot90_impl(tn_tensor *t, int64_t k, const int64_t *dims, int n) {
    TN__CHECK_NULL(t);
    if (n != 2) return (tn_tensor *)tn__error("tn_rot90: expected total rotation dims == 2, but got dims = %d", n);
    if (t->ndim < 2) return (tn_tensor *)tn__error("tn_rot90: expected total dims >= 2, but got total dims = %d", t->ndim);
    int d0 = tn__wrap_dim("tn_rot90", dims[0], t->ndim), d1 = d0 < 0 ? -1 : tn__wrap_dim("tn_rot90", dims[1], t->ndim);
    if (d0 < 0 || d1 < 0) return NULL;
    if (d0 == d1) return (tn_tensor *)tn__error("tn_rot90: expected rotation dims to be different, but got dim0 = %d and dim1 = %d", d0, d1);
    k = ((k % 4) + 4) % 4;
    const int64_t f0 = d0, f1 = d1, both[2] = {d0, d1};
    tn_scope_begin();
    switch (k) {
    case 1: return tn__scope_return(tn_transpose(tn_flip(t, &f1, 1), d0, d1));
    case 2: return tn__scope_return(tn_flip(t, both, 2));
    case 3: return tn__scope_return(tn_transpose(tn_flip(t, &f0, 1), d0, d1));
    default: return tn__scope_return(tn_clone(t));
    }
}
TNDEF tn_tensor *tn_rot90_opts(tn_tensor *t, tn_rot90_fn_opts o) { return TN__AS("tn_rot90", tn__rot90_impl(t, o.k, o.dims.v, o.dims.n)); }
TNDEF tn_tensor *tn_rot90_str(tn_tensor *t, const char *options) {
    TN__KW_STR(tn_rot90_fn_opts, rot90, "tn_rot90", options, tn_rot90_opts(t, o));
}

static tn_tensor *tn__block_diag_impl(tn_tensor *const *ts, int n) {
    if (n < 0 || (n && !ts)) return (tn_tensor *)tn__error("tn_block_diag: invalid tensor list");
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    if (n == 0) return tn__own(tn__new(TN_F32, TN_CPU, TN_SHAPE(0, 0)));
    int64_t rows = 0, cols = 0;
    for (int i = 0; i < n; i++) {
        if (ts[i]->ndim > 2) return (tn_tensor *)tn__error("tn_block_diag: Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions", i, ts[i]->ndim);
        if (tn__check_same_device("tn_block_diag", ts[0], ts[i])) return NULL;
        int64_t r = ts[i]->ndim == 2 ? ts[i]->shape[0] : 1, c = ts[i]->ndim == 2 ? ts[i]->shape[1] : ts[i]->ndim == 1 ? ts[i]->shape[0] : 1;
        if (!tn__add_ok(rows, r, &rows) || !tn__add_ok(cols, c, &cols)) return (tn_tensor *)tn__error("tn_block_diag: sizes too large");
    }
    tn_dtype dt = tn_result_type(ts, n);
    tn_tensor **rowsv = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *rowsv);
    if (!rowsv) return (tn_tensor *)tn__error("tn_block_diag: out of memory");
    tn_scope_begin();
    int64_t at = 0;
    for (int i = 0; i < n; i++) {   /* each block as a 2-d matrix, padded to the full width */
        tn_tensor *b = ts[i];
        int64_t c = b->ndim == 2 ? b->shape[1] : b->ndim == 1 ? b->shape[0] : 1;
        int64_t s[2] = {b->ndim == 2 ? b->shape[0] : 1, c}, pad[2] = {at, cols - at - c};
        rowsv[i] = tn_pad(tn_to_dtype(tn_reshape(b, s, 2), dt), pad, 2);
        at += c;
    }
    tn_tensor *r = tn_cat(rowsv, n);
    TN_FREE(rowsv);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_block_diag(tn_tensor *const *ts, int n) { return TN__AS("tn_block_diag", tn__block_diag_impl(ts, n)); }

static int tn__meshgrid_impl(tn_tensor *const *ts, int n, int indexing, tn_tensor **out) {
    if (n <= 0 || !ts || !out) return TN__FAIL_INT("tn_meshgrid: expects a non-empty list of tensors");
    if (n > TN_MAX_DIMS) return TN__FAIL_INT("tn_meshgrid: %d tensors would make %d-d grids, more than %d", n, n, TN_MAX_DIMS);
    if (indexing != TN_INDEXING_IJ && indexing != TN_INDEXING_XY)
        return TN__FAIL_INT("tn_meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %d", indexing);
    const bool xy = indexing == TN_INDEXING_XY;
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        if (!ts[i]) return -1;
        if (ts[i]->ndim > 1) return TN__FAIL_INT("tn_meshgrid: Expected 0D or 1D tensor in the tensor list but got: %s", TN__SHAPE(ts[i]));
        if (ts[i]->dtype != ts[0]->dtype) return TN__FAIL_INT("tn_meshgrid: expects all tensors to have the same dtype");
        if (ts[i]->device != ts[0]->device) return TN__FAIL_INT("tn_meshgrid: expects all tensors to have the same device");
    }
    for (int i = 0; i < n; i++) {   /* "xy" swaps the first two grid dims */
        int d = xy && n >= 2 && i < 2 ? 1 - i : i;
        shape[d] = tn_numel(ts[i]);
    }
    tn_tensor *grid[TN_MAX_DIMS];
    bool ok = true;
    tn_scope_begin();
    for (int i = 0; i < n; i++) {   /* each input along its own grid dim, expanded (a view) */
        int d = xy && n >= 2 && i < 2 ? 1 - i : i;
        int64_t s[TN_MAX_DIMS];
        for (int j = 0; j < n; j++) s[j] = j == d ? -1 : 1;
        grid[i] = tn_expand(tn_reshape(ts[i], s, n), shape, n);
        ok = ok && grid[i];
    }
    for (int i = 0; i < n && ok; i++) out[i] = tn_keep(grid[i]);   /* the caller's, only when all are made */
    tn_scope_end();
    return ok ? n : -1;
}
TNDEF int tn_meshgrid_opts(tn_tensor *const *ts, int n, tn_tensor **out, tn_meshgrid_fn_opts o) {
    tn__as_begin();
    int r = tn__meshgrid_impl(ts, n, o.indexing, out);
    return tn__as_end("tn_meshgrid", r < 0 ? NULL : (tn_tensor *)out) ? r : -1;
}
TNDEF int tn_meshgrid_str(tn_tensor *const *ts, int n, tn_tensor **out, const char *options) {
    TN__KW_STR_INT(tn_meshgrid_fn_opts, meshgrid, "tn_meshgrid", options, tn_meshgrid_opts(ts, n, out, o));
}

static tn_tensor *tn__cartesian_prod_impl(tn_tensor *const *ts, int n) {
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("tn_cartesian_prod: expects a non-empty list of tensors");
    for (int i = 0; i < n; i++) {
        if (!ts[i]) return NULL;
        if (ts[i]->ndim != 1) return (tn_tensor *)tn__error("tn_cartesian_prod: Expect a 1D vector, but got shape %s", TN__SHAPE(ts[i]));
    }
    if (n == 1) return tn__own(tn_retain(ts[0]));
    tn_tensor *grids[TN_MAX_DIMS];
    if (n > TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_cartesian_prod: at most %d tensors", TN_MAX_DIMS);
    tn_scope_begin();
    if (tn_meshgrid_opts(ts, n, grids, (tn_meshgrid_fn_opts)TN_DEFAULTS(tn_meshgrid_fn_opts)) < 0) return tn__scope_return(NULL);
    const int64_t flat = -1;
    for (int i = 0; i < n; i++) grids[i] = tn_reshape(grids[i], &flat, 1);
    return tn__scope_return(tn_stack(grids, n, .dim = 1));
}
TNDEF tn_tensor *tn_cartesian_prod(tn_tensor *const *ts, int n) { return TN__AS("tn_cartesian_prod", tn__cartesian_prod_impl(ts, n)); }

/* ---- tensor_split and the numpy-style stacks ---- */
/* Pieces [bounds[i], bounds[i + 1]) along dim, as Python slices (clamped; a later bound
   below an earlier one gives an empty piece). */
static int tn__split_bounds(const char *fn, tn_tensor *t, int d, const int64_t *inner, int n, tn_tensor **out, int max_out) {
    if (n >= INT32_MAX) return TN__FAIL_INT("%s: too many pieces", fn);
    if (out && max_out < n + 1) return TN__FAIL_INT("%s: %d pieces do not fit in max_out = %d", fn, n + 1, max_out);
    for (int i = 0; i <= n && out; i++)
        out[i] = tn_slice(t, d, i ? inner[i - 1] : 0, i < n ? inner[i] : TN_END, 1);
    return n + 1;
}
TNDEF int tn_tensor_split_opts(tn_tensor *t, int64_t sections, tn_tensor **out, int max_out, tn_tensor_split_fn_opts o) {
    const int64_t dim = o.dim;
    if (!t) return -1;
    if (t->ndim == 0) return TN__FAIL_INT("tn_tensor_split: expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
    int d = tn__wrap_dim("tn_tensor_split", dim, t->ndim);
    if (d < 0) return -1;
    if (sections <= 0) return TN__FAIL_INT("tn_tensor_split: number of sections must be larger than 0, got %lld", (long long)sections);
    if (sections > INT32_MAX) return TN__FAIL_INT("tn_tensor_split: %lld sections is too many", (long long)sections);
    if (out && max_out < sections) return TN__FAIL_INT("tn_tensor_split: %lld pieces do not fit in max_out = %d", (long long)sections, max_out);
    int64_t size = t->shape[d], base = size / sections, extra = size % sections, start = 0;
    for (int64_t i = 0; i < sections && out; i++) {   /* the first size % sections pieces one longer */
        int64_t len = base + (i < extra);
        out[i] = tn_narrow(t, d, start, len);
        start += len;
    }
    return (int)sections;
}
TNDEF int tn_tensor_split_str(tn_tensor *t, int64_t sections, tn_tensor **out, int max_out, const char *options) {
    TN__KW_STR_INT(tn_tensor_split_fn_opts, tensor_split, "tn_tensor_split", options, tn_tensor_split_opts(t, sections, out, max_out, o));
}
TNDEF int tn_tensor_split_indices_opts(tn_tensor *t, const int64_t *indices, int n, tn_tensor **out, int max_out, tn_tensor_split_fn_opts o) {
    const int64_t dim = o.dim;
    if (!t) return -1;
    if (t->ndim == 0) return TN__FAIL_INT("tn_tensor_split_indices: expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
    int d = tn__wrap_dim("tn_tensor_split_indices", dim, t->ndim);
    if (d < 0) return -1;
    if (n < 0 || (n && !indices)) return TN__FAIL_INT("tn_tensor_split_indices: indices must be a non-NULL array of n >= 0 entries (n = %d)", n);
    return tn__split_bounds("tn_tensor_split_indices", t, d, indices, n, out, max_out);
}
TNDEF int tn_tensor_split_indices_str(tn_tensor *t, const int64_t *indices, int n, tn_tensor **out, int max_out, const char *options) {
    TN__KW_STR_INT(tn_tensor_split_fn_opts, tensor_split, "tn_tensor_split_indices", options, tn_tensor_split_indices_opts(t, indices, n, out, max_out, o));
}

static tn_tensor *tn__atleast(tn_tensor *t, int nd) {
    TN__CHECK_NULL(t);
    if (t->ndim >= nd) return tn__own(tn_retain(t));
    int64_t s[3] = {1, 1, 1};
    if (t->ndim == 1) s[1] = t->shape[0];                          /* [n] -> [1, n] or [1, n, 1] */
    if (t->ndim == 2) { s[0] = t->shape[0]; s[1] = t->shape[1]; }   /* [m, n] -> [m, n, 1] */
    return tn_reshape(t, s, nd);
}
TNDEF tn_tensor *tn_atleast_1d(tn_tensor *t) { return tn__atleast(t, 1); }
TNDEF tn_tensor *tn_atleast_2d(tn_tensor *t) { return tn__atleast(t, 2); }
TNDEF tn_tensor *tn_atleast_3d(tn_tensor *t) { return tn__atleast(t, 3); }

/* kind 1 hstack, 2 vstack, 3 dstack: cat of the inputs made at least kind-d; 0 column_stack:
   0-/1-d inputs as columns, cat along dim 1 */
static tn_tensor *tn__npstack(const char *fn, tn_tensor *const *ts, int n, int kind) {
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("%s: expected a non-empty list of tensors", fn);
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    tn_tensor **us = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *us);
    if (!us) return (tn_tensor *)tn__error("%s: out of memory", fn);
    tn_scope_begin();
    for (int i = 0; i < n; i++) {
        const int64_t col[2] = {-1, 1};
        us[i] = kind == 0 ? (ts[i]->ndim <= 1 ? tn_reshape(ts[i], col, 2) : ts[i]) : tn__atleast(ts[i], kind);
    }
    int64_t dim = kind == 1 ? (us[0] && us[0]->ndim == 1 ? 0 : 1) : kind == 2 ? 0 : kind == 3 ? 2 : 1;
    tn_tensor *r = tn_cat(us, n, .dim = dim);
    TN_FREE(us);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_hstack(tn_tensor *const *ts, int n) { return TN__AS("tn_hstack", tn__npstack("tn_hstack", ts, n, 1)); }
TNDEF tn_tensor *tn_vstack(tn_tensor *const *ts, int n) { return TN__AS("tn_vstack", tn__npstack("tn_vstack", ts, n, 2)); }
TNDEF tn_tensor *tn_dstack(tn_tensor *const *ts, int n) { return TN__AS("tn_dstack", tn__npstack("tn_dstack", ts, n, 3)); }
TNDEF tn_tensor *tn_column_stack(tn_tensor *const *ts, int n) { return TN__AS("tn_column_stack", tn__npstack("tn_column_stack", ts, n, 0)); }
