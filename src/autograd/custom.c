/* ---- custom ops ---- */
TNDEF tn_tensor *tn_custom_op(const char *name, tn_custom_forward forward, tn_custom_backward backward,
                              tn_tensor *const *inputs, int n, void *user) {
    if (!forward || !backward || n < 0 || (n && !inputs)) return (tn_tensor *)tn__error("tn_custom_op: need forward, backward and inputs");
    for (int k = 0; k < n; k++) if (!inputs[k]) return NULL;
    tn_node *nd = tn__node_new(G_CUSTOM, 0, inputs, n), tmp;
    tn_node *ctx = nd;
    if (!ctx) { /* no gradient needed: a throwaway context collects what forward saves */
        memset(&tmp, 0, sizeof tmp);
        tmp.nin = n;
        ctx = &tmp;
    }
    if (name && ctx == nd) { /* the node outlives the caller's string */
        size_t len = strlen(name) + 1;
        nd->custom_name = (char *)TN_MALLOC(len);
        if (nd->custom_name) memcpy(nd->custom_name, name, len);
        ctx->name = nd->custom_name;
    } else ctx->name = name;
    ctx->custom_bw = backward;
    ctx->custom_user = user;
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *out = forward(ctx, inputs, n, user);
    tn_no_grad_end();
    /* the result is a fresh view, so history never lands on a tensor forward merely passed through */
    tn_tensor *res = out ? tn__view_of(out, out->shape, out->strides, out->ndim, out->offset) : NULL;
    if (!out && tn_last_error()[0] == 0) tn__error("%s: forward returned NULL", name ? name : "tn_custom_op");
    tn_scope_end();
    if (ctx == &tmp) {
        for (int k = 0; k < tmp.nsaved; k++) { tn_release(tmp.saved[k]); if (tmp.saved_fn[k]) tn__node_release(tmp.saved_fn[k]); }
        tn__node_free_saved_arrays(&tmp);
    }
    if (!res) { tn__node_release(nd); return NULL; }
    res->is_view = false;
    for (int k = 0; nd && k < nd->nsaved && k < 32; k++) /* forward saved its own result: like PyTorch's saved outputs */
        if (nd->saved[k] && nd->saved[k]->storage == res->storage && nd->saved[k]->offset == res->offset &&
            nd->saved[k]->ndim == res->ndim && !memcmp(nd->saved[k]->shape, res->shape, (size_t)res->ndim * sizeof(int64_t)))
            nd->saved_output_mask |= 1u << k;
    return tn__own(tn__node_attach(nd, res));
}
TNDEF int tn_ctx_save(tn_ctx *ctx, tn_tensor *t) {
    if (!ctx || !t) return -1;
    int before = ctx->nsaved;
    tn__node_save(ctx, t);
    return ctx->nsaved > before ? 0 : -1;
}
TNDEF tn_tensor *tn_ctx_saved(tn_ctx *ctx, int i) {
    if (!ctx || i < 0 || i >= ctx->nsaved) return (tn_tensor *)tn__error("tn_ctx_saved: no saved tensor %d (%d saved)", i, ctx ? ctx->nsaved : 0);
    return ctx->unpacked ? ctx->unpacked[i] : ctx->saved[i];
}
TNDEF int tn_ctx_nsaved(tn_ctx *ctx) { return ctx ? ctx->nsaved : 0; }
TNDEF bool tn_ctx_needs_grad(tn_ctx *ctx, int i) {
    return ctx && ctx->next && i >= 0 && i < ctx->nin && (ctx->next[i].fn || ctx->next[i].leaf);
}
