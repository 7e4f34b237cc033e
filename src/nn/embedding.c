/* ---- embedding, one_hot ---- */
static tn_tensor *tn__embedding_impl(tn_tensor *idx, tn_tensor *w, bool padded, int64_t pad) {
    const char *fn = "tn_embedding";
    TN__CHECK_NULL(idx); TN__CHECK_NULL(w);
    if (idx->dtype != TN_I64 && idx->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: expected indices of dtype int64 or int32, got %s", fn, tn_dtype_name(idx->dtype));
    if (w->ndim != 2) return (tn_tensor *)tn__error("%s: weight must be 2-d [num_embeddings, embedding_dim], got %s", fn, TN__SHAPE(w));
    if (idx->ndim + 1 > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: indices %s have too many dims", fn, TN__SHAPE(idx));
    const int64_t V = w->shape[0], D = w->shape[1];
    if (padded && (pad < -V || pad >= V)) return (tn_tensor *)tn__error("%s: padding_idx %lld must be within num_embeddings (%lld)", fn, (long long)pad, (long long)V);
    if (pad < 0) pad += V;
    tn_scope_begin();
    tn_tensor *flat = tn_reshape(idx, TN_SHAPE(-1));
    tn_tensor *rows = tn_index_select(w, 0, flat);
    if (padded && w->requires_grad) { /* the padding row gets no gradient */
        tn_tensor *keep = tn_unsqueeze(tn_ne_scalar(flat, (double)pad), 1);
        rows = tn_where(keep, rows, tn_index_select(tn_detach(w), 0, flat));
    }
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, idx->shape, (size_t)idx->ndim * sizeof(int64_t));
    shape[idx->ndim] = D;
    return tn__scope_return(tn__grad_name(tn_reshape(rows, shape, idx->ndim + 1), "EmbeddingBackward0"));
}
TNDEF tn_tensor *tn_embedding(tn_tensor *indices, tn_tensor *weight) { return TN__AS("tn_embedding", tn__embedding_impl(indices, weight, false, 0)); }
TNDEF tn_tensor *tn_embedding_padded(tn_tensor *indices, tn_tensor *weight, int64_t padding_idx) {
    return TN__AS("tn_embedding", tn__embedding_impl(indices, weight, true, padding_idx));
}
static tn_tensor *tn__one_hot_impl(tn_tensor *idx, int64_t nc) {
    const char *fn = "tn_one_hot";
    TN__CHECK_NULL(idx);
    if (idx->dtype != TN_I64) return (tn_tensor *)tn__error("%s: one_hot is only applicable to index tensors (int64), got %s", fn, tn_dtype_name(idx->dtype));
    if (idx->ndim + 1 > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: indices %s have too many dims", fn, TN__SHAPE(idx));
    tn_scope_begin();
    int64_t lo = 0, hi = -1;
    if (tn_numel(idx) > 0) { lo = (int64_t)tn_item(tn_min(idx)); hi = (int64_t)tn_item(tn_max(idx)); }
    if (nc < 0 && tn_numel(idx) == 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: can not infer total number of classes from empty tensor", fn); }
    if (nc < 0) nc = hi + 1;
    if (lo < 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: class values must be non-negative (got %lld)", fn, (long long)lo); }
    if (hi >= nc) { tn_scope_end(); return (tn_tensor *)tn__error("%s: class values must be smaller than num_classes (got %lld for %lld classes)", fn, (long long)hi, (long long)nc); }
    tn_tensor *y = tn_to_dtype(tn_eq(tn_unsqueeze(idx, -1), tn_to(tn_arange(0, (double)nc, 1, TN_I64), idx->device)), TN_I64);
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_one_hot(tn_tensor *indices, int64_t num_classes) { return TN__AS("tn_one_hot", tn__one_hot_impl(indices, num_classes)); }

/* ---- attention ---- */
static tn_tensor *tn__sdpa_impl(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, double dropout_p, bool causal, double scale) {
    const char *fn = "tn_scaled_dot_product_attention";
    TN__CHECK_NULL(q); TN__CHECK_NULL(k); TN__CHECK_NULL(v);
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2 || q->shape[q->ndim - 1] != k->shape[k->ndim - 1] || k->shape[k->ndim - 2] != v->shape[v->ndim - 2])
        return (tn_tensor *)tn__error("%s: expected q [*, L, E], k [*, S, E], v [*, S, Ev], got %s, %s, %s", fn, TN__SHAPE(q), TN__SHAPE(k), TN__SHAPE(v));
    if (tn__nn_check(fn, q, "query") || tn__nn_same(fn, q, k, "key") || tn__nn_same(fn, q, v, "value")) return NULL;
    if (mask && mask->dtype != TN_BOOL && mask->dtype != q->dtype)
        return (tn_tensor *)tn__error("%s: attn_mask must be bool or match the query dtype %s, got %s", fn, tn_dtype_name(q->dtype), tn_dtype_name(mask->dtype));
    if (causal && mask) return (tn_tensor *)tn__error("%s: give attn_mask or is_causal, not both", fn);
    const int64_t L = q->shape[q->ndim - 2], S = k->shape[k->ndim - 2], E = q->shape[q->ndim - 1];
    if (!(scale > 0)) scale = 1 / sqrt((double)(E ? E : 1));
    if (tn__sdpa_fusable(q, k, v, mask, dropout_p)) return tn__sdpa_fused(q, k, v, mask, causal, scale);   /* no L x S matrix */
    tn_scope_begin();
    tn_tensor *att = tn_mul_scalar(tn_matmul(q, tn_transpose(k, -2, -1)), scale);
    if (causal) mask = tn_tril(tn_to(tn_ones(TN_SHAPE(L, S), TN_BOOL), q->device), 0);
    if (mask && mask->dtype == TN_BOOL) att = tn_masked_fill(att, tn_logical_not(mask), -INFINITY);
    else if (mask) att = tn_add(att, mask);
    att = tn_softmax(att, -1);
    if (dropout_p > 0) att = tn_dropout(att, dropout_p, true);
    return tn__scope_return(tn_matmul(att, v));
}
TNDEF tn_tensor *tn_scaled_dot_product_attention(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *attn_mask, double dropout_p, bool is_causal, double scale) {
    return TN__AS("tn_scaled_dot_product_attention", tn__sdpa_impl(q, k, v, attn_mask, dropout_p, is_causal, scale));
}
