/* ---- gradient clipping: torch.nn.utils ---- */
static tn_tensor *tn__clip_total_norm(tn_tensor *const *grads, int n, double norm_type) {
    tn_tensor **norms = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *norms);
    if (!norms) return (tn_tensor *)tn__error("out of memory");
    for (int i = 0; i < n; i++) norms[i] = tn_norm(grads[i], norm_type);
    tn_tensor *total = tn_norm(tn_stack(norms, n, 0), norm_type);
    TN_FREE(norms);
    return total;
}
TNDEF double tn_clip_grad_norm_(tn_tensor *const *params, int n, double max_norm, double norm_type) {
    const char *fn = "tn_clip_grad_norm_";
    if (n < 0 || (n > 0 && !params)) return tn__error("%s: need an array of %d parameters", fn, n), NAN;
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (!params[i]) return NAN;
        ng += params[i]->grad != NULL;
    }
    if (ng == 0) return 0.0;
    tn_tensor **grads = (tn_tensor **)TN_MALLOC((size_t)ng * sizeof *grads);
    if (!grads) return tn__error("%s: out of memory", fn), NAN;
    ng = 0;
    for (int i = 0; i < n; i++) if (params[i]->grad) grads[ng++] = params[i]->grad;
    double result = NAN;
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *total = TN__AS(fn, tn__clip_total_norm(grads, ng, norm_type));
    if (total) {
        /* clip_coef = max_norm / (total_norm + 1e-6), clamped to 1, in the norm's dtype */
        tn_tensor *denom = tn_add_scalar(total, 1e-6);
        tn_tensor *coef = TN__AS(fn, tn_clamp(tn_div(tn_full_like(denom, max_norm), denom), -INFINITY, 1.0));
        bool ok = coef != NULL;
        for (int i = 0; ok && i < ng; i++) ok = TN__AS(fn, tn_mul_(grads[i], coef)) != NULL;
        if (ok) result = tn_item(total);
    }
    tn_scope_end();
    tn_no_grad_end();
    TN_FREE(grads);
    return result;
}
TNDEF int tn_clip_grad_value_(tn_tensor *const *params, int n, double clip_value) {
    const char *fn = "tn_clip_grad_value_";
    if (n < 0 || (n > 0 && !params)) return TN__FAIL_INT("%s: need an array of %d parameters", fn, n);
    for (int i = 0; i < n; i++) if (!params[i]) return -1;
    int rc = 0;
    tn_no_grad_begin();
    tn_scope_begin();
    for (int i = 0; i < n && rc == 0; i++)
        if (params[i]->grad && !TN__AS(fn, tn_clamp_(params[i]->grad, -clip_value, clip_value))) rc = -1;
    tn_scope_end();
    tn_no_grad_end();
    return rc;
}
