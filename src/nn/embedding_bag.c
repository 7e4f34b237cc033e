/* ---- embedding_bag ----
   The bags as rows of a [B, Lmax] table of input positions (the host reads the offsets),
   their embeddings gathered into [B, Lmax, D] and reduced over the bag with the padding
   slots masked out: sums and means weigh them by 0, maxima see -inf. All of it
   differentiable (index_select, where, sum, max), so the gradients reach weight and
   per_sample_weights, twice too. */
static tn_tensor *tn__embedding_bag_impl(tn_tensor *in, tn_tensor *w, tn_embedding_bag_fn_opts o) {
    const char *fn = "tn_embedding_bag";
    TN__CHECK_NULL(in, w);
    tn_tensor *off = o.offsets, *psw = o.per_sample_weights;
    if (in->dtype != TN_I64 && in->dtype != TN_I32) return (tn_tensor *)tn__error("%s: expected input of dtype int64 or int32, got %s", fn, tn_dtype_name(in->dtype));
    if (w->ndim != 2) return (tn_tensor *)tn__error("%s: weight has to be a 2D Tensor, but got Tensor of dimension %d", fn, w->ndim);
    if (!tn_dtype_is_floating(w->dtype)) return (tn_tensor *)tn__error("%s: expected a floating point weight, got %s", fn, tn_dtype_name(w->dtype));
    if (o.mode < TN_BAG_SUM || o.mode > TN_BAG_MAX) return (tn_tensor *)tn__error("%s: mode %d is not TN_BAG_SUM, TN_BAG_MEAN or TN_BAG_MAX", fn, o.mode);
    if (in->ndim == 2 && off) return (tn_tensor *)tn__error("%s: if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type Tensor", fn);
    if (in->ndim == 1 && !off) return (tn_tensor *)tn__error("%s: offsets has to be a 1D Tensor but got None", fn);
    if (in->ndim != 1 && in->ndim != 2) return (tn_tensor *)tn__error("%s: input has to be 1D or 2D Tensor, but got Tensor of dimension %d", fn, in->ndim);
    if (off && (off->ndim != 1 || (off->dtype != TN_I64 && off->dtype != TN_I32)))
        return (tn_tensor *)tn__error("%s: offsets has to be a 1D int64 or int32 Tensor, got %s of %s", fn, TN__SHAPE(off), tn_dtype_name(off->dtype));
    if (psw && o.mode != TN_BAG_SUM)
        return (tn_tensor *)tn__error("%s: embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='%s'). Please open a feature request on GitHub.",
                                      fn, o.mode == TN_BAG_MEAN ? "mean" : "max");
    if (psw && (psw->ndim != in->ndim || memcmp(psw->shape, in->shape, (size_t)in->ndim * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: embedding_bag: If per_sample_weights (%s) is not None, then it must have the same shape as the input (%s)", fn, TN__SHAPE(psw), TN__SHAPE(in));
    if (psw && tn__nn_same(fn, w, psw, "per_sample_weights")) return NULL;
    const int64_t V = w->shape[0], D = w->shape[1], n = tn_numel(in);
    int64_t pad = o.padding_idx;
    if (pad != TN_NONE && (pad < -V || pad >= V)) return (tn_tensor *)tn__error("%s: padding_idx must be within num_embeddings (%lld), got %lld", fn, (long long)V, (long long)pad);
    if (pad != TN_NONE && pad < 0) pad += V;
    tn_scope_begin();
    tn_tensor *ic = tn_contiguous(tn_to_dtype(tn_to(in, TN_CPU), TN_I64)), *oc = off ? tn_contiguous(tn_to_dtype(tn_to(off, TN_CPU), TN_I64)) : NULL;
    if (!ic || (off && !oc)) { tn_scope_end(); return NULL; }
    const int64_t *ip = (const int64_t *)tn_data_ptr(ic), *op = oc ? (const int64_t *)tn_data_ptr(oc) : NULL;
    for (int64_t i = 0; i < n; i++)
        if (ip[i] < 0 || ip[i] >= V) { tn_scope_end(); return (tn_tensor *)tn__error("%s: index %lld is out of range for %lld embeddings (index out of range in self)", fn, (long long)ip[i], (long long)V); }
    int64_t B, Lmax = 0;
    if (!off) { B = in->shape[0]; Lmax = in->shape[1]; }
    else {
        const int64_t no = off->shape[0];
        B = o.include_last_offset ? no - 1 : no;
        if (no > 0 && op[0] != 0) {
            tn_scope_end();
            return (tn_tensor *)tn__error("%s: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got %lld", fn, (long long)op[0]);
        }
        if (no > 0 && op[no - 1] > n) {
            tn_scope_end();
            return (tn_tensor *)tn__error("%s: offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld", fn, (long long)n, (long long)op[no - 1]);
        }
        if (B < 0) B = 0;
        for (int64_t b = 0; b < B; b++) {
            const int64_t end = b + 1 < no ? op[b + 1] : n;
            if (end < op[b]) { tn_scope_end(); return (tn_tensor *)tn__error("%s: offsets must be non-decreasing, got offsets[%lld] = %lld after %lld", fn, (long long)(b + 1), (long long)end, (long long)op[b]); }
            Lmax = TN__MAX(Lmax, end - op[b]);
        }
    }
    /* pos [B, Lmax]: input positions (0 in a padding slot), keep: the slot counts */
    int64_t BL;
    if (!tn__mul_ok(B, Lmax, &BL)) { tn_scope_end(); return (tn_tensor *)tn__error("%s: the bags are too large", fn); }
    if (tn__check_shape(fn, TN_SHAPE(B, Lmax, D))) { tn_scope_end(); return NULL; }
    tn_tensor *pos = tn__own(tn__new(TN_I64, TN_CPU, TN_SHAPE(B, Lmax))), *keep = tn__own(tn__new(TN_BOOL, TN_CPU, TN_SHAPE(B, Lmax)));
    tn_tensor *cnt = tn__own(tn__new(TN_F64, TN_CPU, TN_SHAPE(B, 1)));
    if (!pos || !keep || !cnt) { tn_scope_end(); return NULL; }
    int64_t *pp = (int64_t *)tn_data_ptr(pos);
    bool *kp = (bool *)tn_data_ptr(keep);
    double *cp = (double *)tn_data_ptr(cnt);
    for (int64_t b = 0; b < B; b++) {
        const int64_t start = off ? op[b] : b * Lmax, end = off ? (b + 1 < off->shape[0] ? op[b + 1] : n) : start + Lmax;
        int64_t c = 0;
        for (int64_t j = 0; j < Lmax; j++) {
            const bool in_bag = start + j < end, use = in_bag && (pad == TN_NONE || ip[start + j] != pad);
            pp[b * Lmax + j] = in_bag ? start + j : 0;
            kp[b * Lmax + j] = use;
            c += use;
        }
        cp[b] = (double)c;
    }
    tn_tensor *posd = tn_to(pos, w->device), *keepd = tn_to(tn_unsqueeze(keep, -1), w->device);
    tn_tensor *idx = tn_index_select(tn_to(tn_reshape(ic, TN_SHAPE(-1)), w->device), 0, tn_reshape(posd, TN_SHAPE(-1)));
    tn_tensor *rows = tn_reshape(tn_index_select(w, 0, idx), TN_SHAPE(B, Lmax, D)), *y;
    if (o.mode == TN_BAG_MAX) {
        y = Lmax ? tn_max_dim(tn_where(keepd, rows, tn__own(tn__full_on(NULL, 0, -INFINITY, w->dtype, w->device))), 1, NULL) : NULL;
        tn_tensor *empty = tn_to(tn_eq_scalar(cnt, 0), w->device);
        y = Lmax ? tn_where(empty, tn_zeros_like(y), y) : tn__own(tn__full_on(TN_SHAPE(B, D), 0, w->dtype, w->device));
    } else {
        tn_tensor *scale = tn_to_dtype(keepd, w->dtype);
        if (psw) scale = tn_mul(scale, tn_reshape(tn_index_select(tn_reshape(psw, TN_SHAPE(-1)), 0, tn_reshape(posd, TN_SHAPE(-1))), TN_SHAPE(B, Lmax, 1)));
        y = tn_sum_dims(tn_mul(rows, scale), TN_SHAPE(1));
        if (o.mode == TN_BAG_MEAN) y = tn_div(y, tn_to(tn_to_dtype(tn_clamp(cnt, .min = 1), w->dtype), w->device));
    }
    return tn__scope_return(tn__grad_name(y, "EmbeddingBagBackward0"));
}
TNDEF tn_tensor *tn_embedding_bag_opts(tn_tensor *input, tn_tensor *weight, tn_embedding_bag_fn_opts o) { return TN__AS("tn_embedding_bag", tn__embedding_bag_impl(input, weight, o)); }
TNDEF tn_tensor *tn_embedding_bag_str(tn_tensor *input, tn_tensor *weight, tn_tensor *offsets, tn_tensor *per_sample_weights, const char *options) {
    TN__KW_STR(tn_embedding_bag_fn_opts, embedding_bag, "tn_embedding_bag", options,
               (o.offsets = offsets, o.per_sample_weights = per_sample_weights, tn_embedding_bag_opts(input, weight, o)));
}
