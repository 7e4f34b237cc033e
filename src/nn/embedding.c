/* ---- embedding, one_hot ---- */
/* The weight gradient of an embedding on the CPU: gw [V, D] (new) from gy rows [n, D] and
   their indices (int64, checked by the forward), the padding row (pad >= 0) left zero. A
   segmented sum instead of a scatter-add per row: the positions sorted by index (a counting
   sort, stable), then each row of gw written once, its hits added in position order (the
   order of a serial index_add, as PyTorch's CPU embedding_backward: the same bits), rows
   split among threads with nothing shared. */
typedef struct { const int64_t *start, *order; const void *gy; void *gw; int64_t D, pad; bool f64; } tn__emb_bw_args;
static void tn__emb_bw_rows(void *args, int64_t r0, int64_t r1) {
    const tn__emb_bw_args *a = (const tn__emb_bw_args *)args;
    const int64_t D = a->D;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t b = a->start[r], e = r == a->pad ? b : a->start[r + 1];
        if (a->f64) {
            double *o = (double *)a->gw + r * D;
            const double *g = (const double *)a->gy;
            memset(o, 0, (size_t)D * sizeof *o);
            for (int64_t k = b; k < e; k++) { const double *gr = g + a->order[k] * D; for (int64_t d = 0; d < D; d++) o[d] += gr[d]; }
        } else {
            float *o = (float *)a->gw + r * D;
            const float *g = (const float *)a->gy;
            memset(o, 0, (size_t)D * sizeof *o);
            for (int64_t k = b; k < e; k++) { const float *gr = g + a->order[k] * D; for (int64_t d = 0; d < D; d++) o[d] += gr[d]; }
        }
    }
}
static tn_tensor *tn__embedding_grad_cpu(tn_tensor *gy, tn_tensor *idx, int64_t V, int64_t pad) {
    const int64_t n = tn_numel(idx), D = gy->shape[1];
    tn_tensor *gw = tn__own(tn__new(gy->dtype, TN_CPU, TN_SHAPE(V, D)));
    int64_t *start = (int64_t *)tn__malloc_n("embedding backward", tn__add_sat(V, 1), sizeof(int64_t));
    int64_t *order = (int64_t *)tn__malloc_n("embedding backward", n > 0 ? n : 1, sizeof(int64_t));
    if (!gw || !start || !order) { TN_FREE(start); TN_FREE(order); return NULL; }
    const int64_t *ix = (const int64_t *)tn_data_ptr(idx);
    memset(start, 0, (size_t)(V + 1) * sizeof *start);
    for (int64_t i = 0; i < n; i++) start[ix[i] + 1]++;
    for (int64_t r = 0; r < V; r++) start[r + 1] += start[r];
    for (int64_t i = 0; i < n; i++) order[start[ix[i]]++] = i;   /* stable: positions ascending per index */
    for (int64_t r = V; r > 0; r--) start[r] = start[r - 1];      /* start[r] moved to the end of row r: back */
    start[0] = 0;
    tn__emb_bw_args a = {start, order, tn_data_ptr(gy), tn_data_ptr(gw), D, pad, gy->dtype == TN_F64};
    tn__parallel_range(tn__par_threads(tn__add_sat(tn__mul_sat(n, D), tn__mul_sat(V, D)), V), V, tn__emb_bw_rows, &a);
    TN_FREE(start);
    TN_FREE(order);
    return gw;
}
/* EmbeddingBackward0: saved the flat int64 indices; i[0] V, i[1] the padding row (-1: none). */
static int tn__embedding_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)user; (void)nin;
    tn_tensor *idx = tn_ctx_saved(n, 0);
    const int64_t V = n->i[0], pad = n->i[1], D = gy->shape[gy->ndim - 1];
    if (!idx) return -1;
    tn_tensor *g2 = tn_reshape(gy, TN_SHAPE(-1, D));
    if (tn__grad_disabled && gy->device == TN_CPU && (gy->dtype == TN_F32 || gy->dtype == TN_F64)) {   /* plain: the segmented sum */
        tn_tensor *gc = tn_contiguous(g2);
        return !gc || !(gin[0] = tn__embedding_grad_cpu(gc, idx, V, pad)) ? -1 : 0;
    }
    /* recording (create_graph) or elsewhere: an accumulating index_put, differentiable in gy */
    if (pad >= 0) g2 = tn_where(tn_unsqueeze(tn_ne_scalar(idx, (double)pad), 1), g2, tn_zeros_like(g2));
    tn_tensor *z = tn__own(tn__full_on(TN_SHAPE(V, D), 0, gy->dtype, gy->device)), *ix[1] = {idx};   /* on gy's device, as its index */
    if (idx->device != gy->device) ix[0] = tn_to(idx, gy->device);
    gin[0] = z && ix[0] ? tn_index_put(z, ix, 1, g2, .accumulate = true) : NULL;
    return gin[0] ? 0 : -1;
}
/* The rows of a contiguous CPU weight at int64 indices (contiguous, all in [0, V)), a row
   copy each: index_select's generic strided loop cost 1 % of the GPT step. NULL for other
   arguments (index_select then copies them or reports the bad index). */
static tn_tensor *tn__embedding_rows_cpu(tn_tensor *w, tn_tensor *flat) {
    if (!flat || w->device != TN_CPU || flat->device != TN_CPU || flat->dtype != TN_I64 || !tn_is_contiguous(w) || !tn_is_contiguous(flat) ||
        tn_numel(w) == 0)
        return NULL;
    const int64_t n = tn_numel(flat), V = w->shape[0], D = w->shape[1];
    const int64_t *ix = (const int64_t *)tn_data_ptr(flat);
    for (int64_t i = 0; i < n; i++)
        if (ix[i] < 0 || ix[i] >= V) return NULL;
    tn_tensor *rows = tn__own(tn__new(w->dtype, TN_CPU, TN_SHAPE(n, D)));
    if (!rows) return NULL;
    const size_t rb = (size_t)D * tn_dtype_size(w->dtype);
    const char *src = (const char *)tn_data_ptr(w);
    char *dst = (char *)tn_data_ptr(rows);
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * rb, src + (size_t)ix[i] * rb, rb);
    return rows;
}
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
    tn_tensor *rows = tn__embedding_rows_cpu(w, flat);
    if (!rows) {
        tn_no_grad_begin();   /* the rows without history: the node below is the op's */
        rows = tn_index_select(w, 0, flat);
        tn_no_grad_end();
    }
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, idx->shape, (size_t)idx->ndim * sizeof(int64_t));
    shape[idx->ndim] = D;
    tn_tensor *y = rows ? tn_reshape(rows, shape, idx->ndim + 1) : NULL;
    if (y && w->requires_grad && !tn__grad_disabled) {
        tn_tensor *ix64 = tn_contiguous(tn_to_dtype(flat, TN_I64));   /* where they are: no wait for a device */
        tn_node *nd = ix64 ? tn__fn_node("EmbeddingBackward0", tn__embedding_bw, &w, 1) : NULL;
        if (!nd) { tn_scope_end(); return NULL; }
        nd->i[0] = V;
        nd->i[1] = padded ? pad : -1;
        nd->ni = 2;
        tn__node_save(nd, ix64);
        y = tn__node_attach(nd, y);
    }
    return tn__scope_return(y);
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
    if (nc >= 0 && idx->device != TN_CPU && tn__backend(idx->device)->check_index) {   /* checked on the device, reported at the next sync */
        if (!tn__own(tn__device_checked(idx, nc, 0, 0, "%s: class value %%lld is out of range for num_classes = %lld", fn, (long long)nc))) {
            tn_scope_end();
            return NULL;
        }
    } else if (tn_numel(idx) > 0) { lo = (int64_t)tn_item(tn_min(idx)); hi = (int64_t)tn_item(tn_max(idx)); }
    if (nc < 0 && tn_numel(idx) == 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: can not infer total number of classes from empty tensor", fn); }
    if (nc < 0) nc = hi + 1;
    if (lo < 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: class values must be non-negative (got %lld)", fn, (long long)lo); }
    if (hi >= nc) { tn_scope_end(); return (tn_tensor *)tn__error("%s: class values must be smaller than num_classes (got %lld for %lld classes)", fn, (long long)hi, (long long)nc); }
    tn_tensor *y = tn_to_dtype(tn_eq(tn_unsqueeze(idx, -1), tn__arange_on(nc, idx->device)), TN_I64);
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_one_hot_opts(tn_tensor *indices, tn_one_hot_fn_opts o) { return TN__AS("tn_one_hot", tn__one_hot_impl(indices, o.num_classes)); }
TNDEF tn_tensor *tn_one_hot_str(tn_tensor *indices, const char *options) { TN__KW_STR(tn_one_hot_fn_opts, one_hot, "tn_one_hot", options, tn_one_hot_opts(indices, o)); }

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
    const int64_t E = q->shape[q->ndim - 1];
    if (!(scale > 0)) scale = 1 / sqrt((double)(E ? E : 1));
    if (tn__sdpa_fusable(q, k, v, mask, dropout_p)) return tn__sdpa_fused(q, k, v, mask, causal, scale);   /* no L x S matrix */
    return tn__sdpa_composite(q, k, v, mask, dropout_p, causal, scale);
}
/* scale NAN (None) or not positive: 1/sqrt(E) (tn__sdpa_impl's !(scale > 0)) */
TNDEF tn_tensor *tn_scaled_dot_product_attention_opts(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_sdpa_fn_opts o) {
    TN__AUTOCAST(TN__AC_LOWER, tn_scaled_dot_product_attention(ac_[0], ac_[1], ac_[2], .attn_mask = ac_[3], .dropout_p = o.dropout_p, .is_causal = o.is_causal,
                                                               .scale = o.scale), q, k, v, o.attn_mask);
    return TN__AS("tn_scaled_dot_product_attention", tn__sdpa_impl(q, k, v, o.attn_mask, o.dropout_p, o.is_causal, o.scale));
}
TNDEF tn_tensor *tn_scaled_dot_product_attention_str(tn_tensor *q, tn_tensor *k, tn_tensor *v, const char *options) {
    TN__KW_STR(tn_sdpa_fn_opts, sdpa, "tn_scaled_dot_product_attention", options, tn_scaled_dot_product_attention_opts(q, k, v, o));
}
