/* ---- the margin, multi-label, triplet and likelihood losses ----
   As losses.c: composites of differentiable ops following PyTorch's decompositions (its
   native ones where PyTorch has a kernel), the result's node named as PyTorch's. Their
   keyword arguments come in one struct, tn_loss_fn_opts, whose fields start "not given". */
/* The loss's own options (valid: "margin, reduction", PyTorch's order) and its reduction;
   the others must not be given. */
static int tn__loss_fn_args(const char *fn, const char *what, const tn_loss_fn_opts *o, const char *valid) {
    const tn_loss_fn_opts def = TN_DEFAULTS(tn_loss_fn_opts);
    if (tn__kw_only(fn, what, tn__kw_loss_fn, TN__KW_N(tn__kw_loss_fn), o, &def, valid)) return -1;
    return tn__loss_check_reduction(fn, (tn_reduction)o->reduction, false);
}
static double tn__or(double v, double def) { return v == v ? v : def; }   /* a D option: NAN is "not given" */
static bool tn__or_b(int v, bool def) { return v < 0 ? def : v != 0; }    /* an OB option */
static tn_tensor *tn__loss_fn_finish(tn_tensor *l, int reduction, const char *none_name) {
    if (reduction == TN_REDUCTION_NONE) return tn__loss_finish(l, none_name);
    return tn__loss_finish(tn__loss_reduce(l, (tn_reduction)reduction), NULL);
}

static tn_tensor *tn__pairwise_distance_impl(tn_tensor *x1, tn_tensor *x2, double p, double eps, bool keepdim) {
    const char *fn = "tn_pairwise_distance";
    TN__CHECK_NULL(x1, x2);
    if (tn__loss_check_pair(fn, "x1", x1, "x2", x2, false)) return NULL;   /* integers: x1 - x2 integer, + eps the default dtype */
    const int64_t d = TN__MAX(x1->ndim, x2->ndim) - 1;   /* the innermost dim (-1 of a 0-d pair) */
    tn_scope_begin();
    return tn__scope_return(tn__grad_name(tn_norm_dims(tn__add_float_scalar(tn_sub(x1, x2), eps), &d, 1, .p = p, .keepdim = keepdim), "NormBackward1"));
}
/* tn_pairwise_distance, positional for the library's own callers */
static tn_tensor *tn__pairwise_distance(tn_tensor *x1, tn_tensor *x2, double p, double eps, bool keepdim) {
    return TN__AS("tn_pairwise_distance", tn__pairwise_distance_impl(x1, x2, p, eps, keepdim));
}
TNDEF tn_tensor *tn_pairwise_distance_opts(tn_tensor *x1, tn_tensor *x2, tn_pairwise_distance_fn_opts o) { return tn__pairwise_distance(x1, x2, o.p, o.eps, o.keepdim); }
TNDEF tn_tensor *tn_pairwise_distance_str(tn_tensor *x1, tn_tensor *x2, const char *options) {
    TN__KW_STR(tn_pairwise_distance_fn_opts, pairwise_distance, "tn_pairwise_distance", options, tn_pairwise_distance_opts(x1, x2, o));
}

static tn_tensor *tn__soft_margin_impl(tn_tensor *x, tn_tensor *t, tn_loss_fn_opts o) {
    const char *fn = "tn_soft_margin_loss";
    TN__CHECK_NULL(x, t);
    if (tn__loss_fn_args(fn, "soft_margin_loss", &o, "reduction") || tn__loss_check_pair(fn, "input", x, "target", t, true)) return NULL;
    tn_scope_begin();
    tn_tensor *l = tn_log1p(tn_exp(tn_neg(tn_mul(x, t))));   /* PyTorch's formula (its overflow too) */
    return tn__loss_finish_over(tn__loss_reduce(l, (tn_reduction)o.reduction), "SoftMarginLossBackward0", x, NULL);   /* (target: not differentiable) */
}
TNDEF tn_tensor *tn_soft_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts o) {
    return TN__AS("tn_soft_margin_loss", tn__soft_margin_impl(input, target, o));
}

static tn_tensor *tn__multilabel_soft_margin_impl(tn_tensor *x, tn_tensor *t, tn_loss_fn_opts o) {
    const char *fn = "tn_multilabel_soft_margin_loss";
    TN__CHECK_NULL(x, t);
    if (tn__loss_fn_args(fn, "multilabel_soft_margin_loss", &o, "weight, reduction") || tn__loss_check_pair(fn, "input", x, "target", t, true)) return NULL;
    if (o.weight && tn__loss_check_pair(fn, "input", x, "weight", o.weight, true)) return NULL;
    if (x->ndim == 0) return (tn_tensor *)tn__error("%s: expected an input with a class dim, got a 0-d input", fn);
    const int64_t cd = x->ndim - 1, C = x->shape[cd];   /* the class dim: the last, as PyTorch 2.x (1.13: dim 1) */
    tn_scope_begin();
    tn_tensor *l = tn_neg(tn_add(tn_mul(t, tn_logsigmoid(x)), tn_mul(tn_rsub_scalar(t, 1), tn_logsigmoid(tn_neg(x)))));
    if (o.weight) l = tn_mul(l, o.weight);
    l = tn_div_scalar(tn_sum_dims(l, &cd, 1), (double)C);
    return tn__loss_fn_finish(l, o.reduction, "DivBackward0");
}
TNDEF tn_tensor *tn_multilabel_soft_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts o) {
    return TN__AS("tn_multilabel_soft_margin_loss", tn__multilabel_soft_margin_impl(input, target, o));
}

/* input [N, C] or [C] and a target of its shape or kind: 0 and the batch N (1 unbatched),
   or -1 with PyTorch's message. */
static int tn__multi_class_input(const char *fn, tn_tensor *x, tn_tensor *t, bool same_shape, int64_t *N) {
    if (x->ndim > 2 || (x->ndim >= 1 && x->shape[x->ndim - 1] == 0))
        return TN__FAIL_INT("%s: Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s", fn, TN__SHAPE(x));
    if (t->dtype != TN_I64) return TN__FAIL_INT("%s: expected an int64 target, got %s", fn, tn_dtype_name(t->dtype));
    *N = x->ndim == 2 ? x->shape[0] : 1;
    if (same_shape ? (t->ndim != x->ndim || memcmp(t->shape, x->shape, (size_t)x->ndim * sizeof(int64_t)))
                   : (x->ndim == 2 ? t->ndim != 1 || t->shape[0] != *N : t->ndim > 1 || tn_numel(t) != 1))
        return TN__FAIL_INT(same_shape ? "%s: inconsistent size %s for argument #2 'target' (input %s)" : "%s: inconsistent target size, got: %s (input %s)", fn,
                            TN__SHAPE(t), TN__SHAPE(x));
    return tn__nn_check(fn, x, "input");
}
static tn_tensor *tn__multi_margin_impl(tn_tensor *x, tn_tensor *t, tn_loss_fn_opts o) {
    const char *fn = "tn_multi_margin_loss";
    TN__CHECK_NULL(x, t);
    int64_t N;
    if (tn__loss_fn_args(fn, "multi_margin_loss", &o, "p, margin, weight, reduction") || tn__multi_class_input(fn, x, t, false, &N)) return NULL;
    const double p = tn__or(o.p, 1), margin = tn__or(o.margin, 1);
    if (p != 1 && p != 2) return (tn_tensor *)tn__error("%s: only p == 1 and p == 2 supported (got %g)", fn, p);
    const int64_t C = x->ndim ? x->shape[x->ndim - 1] : 1;
    if (o.weight && (o.weight->ndim != 1 || o.weight->shape[0] != C))
        return (tn_tensor *)tn__error("%s: inconsistent weight size, expected %lld but got %s", fn, (long long)C, TN__SHAPE(o.weight));
    if (o.weight && tn__nn_same(fn, x, o.weight, "weight")) return NULL;
    tn_scope_begin();
    if (tn_numel(t) && (tn_item(tn_min(t)) < 0 || tn_item(tn_max(t)) >= (double)C)) { tn_scope_end(); return (tn_tensor *)tn__error("%s: target out of range (%lld classes)", fn, (long long)C); }
    tn_tensor *x2 = tn_reshape(x, TN_SHAPE(N, C)), *t2 = tn_to(tn_reshape(t, TN_SHAPE(N, 1)), x->device);
    tn_tensor *z = tn_clamp(tn_add(tn_rsub_scalar(tn_gather(x2, 1, t2), margin), x2), .min = 0);   /* margin - x[y] + x[i] */
    if (p == 2) z = tn_mul(z, z);
    if (o.weight) z = tn_mul(z, tn_reshape(tn_index_select(o.weight, 0, tn_reshape(t2, TN_SHAPE(-1))), TN_SHAPE(N, 1)));
    tn_tensor *own = tn_eq(tn__arange_on(C, x->device), t2);   /* i == y counts nowhere */
    tn_tensor *l = tn_div_scalar(tn_sum_dims(tn_where(own, tn_zeros_like(z), z), TN_SHAPE(1)), (double)C);
    if (x->ndim < 2) l = tn_reshape(l, NULL, 0);
    return tn__loss_finish(tn__loss_reduce(l, (tn_reduction)o.reduction), "MultiMarginLossBackward0");
}
TNDEF tn_tensor *tn_multi_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts o) {
    return TN__AS("tn_multi_margin_loss", tn__multi_margin_impl(input, target, o));
}

static tn_tensor *tn__multilabel_margin_impl(tn_tensor *x, tn_tensor *t, tn_loss_fn_opts o) {
    const char *fn = "tn_multilabel_margin_loss";
    TN__CHECK_NULL(x, t);
    int64_t N;
    if (tn__loss_fn_args(fn, "multilabel_margin_loss", &o, "reduction") || tn__multi_class_input(fn, x, t, true, &N)) return NULL;
    const int64_t C = x->ndim ? x->shape[x->ndim - 1] : 1, NC = tn__mul_sat(N, C);
    tn_scope_begin();
    /* on the host: which target slots are valid (before the first -1) and which classes are targets */
    tn_tensor *tc = tn_contiguous(tn_to(t, TN_CPU));
    tn_tensor *valid = tn__own(tn__new(TN_BOOL, TN_CPU, TN_SHAPE(N, C, 1))), *istgt = tn__own(tn__new(TN_BOOL, TN_CPU, TN_SHAPE(N, 1, C)));
    tn_tensor *slot = tn__own(tn__new(TN_I64, TN_CPU, TN_SHAPE(N, C)));
    if (!tc || !valid || !istgt || !slot) { tn_scope_end(); return NULL; }
    const int64_t *tp = (const int64_t *)tn_data_ptr(tc);
    bool *vp = (bool *)tn_data_ptr(valid), *ip = (bool *)tn_data_ptr(istgt);
    int64_t *sp = (int64_t *)tn_data_ptr(slot);
    memset(ip, 0, (size_t)NC);
    for (int64_t n = 0; n < N; n++) {
        bool ended = false;
        for (int64_t j = 0; j < C; j++) {
            const int64_t c = tp[n * C + j];
            if (c < -1 || c >= C) { tn_scope_end(); return (tn_tensor *)tn__error("%s: argument #2 'target' is out of range (%lld for %lld classes)", fn, (long long)c, (long long)C); }
            ended = ended || c == -1;
            vp[n * C + j] = !ended;
            sp[n * C + j] = ended ? 0 : c;
            if (!ended) ip[n * C + c] = true;
        }
    }
    tn_tensor *x2 = tn_reshape(x, TN_SHAPE(N, C));
    tn_tensor *xt = tn_unsqueeze(tn_gather(x2, 1, tn_to(slot, x->device)), 2);                  /* [N, C(j), 1]: x at target j */
    tn_tensor *z = tn_clamp(tn_add(tn_rsub_scalar(xt, 1), tn_unsqueeze(x2, 1)), .min = 0);  /* 1 - x[t_j] + x[i] */
    tn_tensor *use = tn_to(tn_logical_and(valid, tn_logical_not(istgt)), x->device);
    tn_tensor *l = tn_div_scalar(tn_sum_dims(tn_where(use, z, tn_zeros_like(z)), TN_SHAPE(1, 2)), (double)C);
    if (x->ndim < 2) l = tn_reshape(l, NULL, 0);
    return tn__loss_finish(tn__loss_reduce(l, (tn_reduction)o.reduction), "MultilabelMarginLossBackward0");
}
TNDEF tn_tensor *tn_multilabel_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts o) {
    return TN__AS("tn_multilabel_margin_loss", tn__multilabel_margin_impl(input, target, o));
}

static tn_tensor *tn__hinge_embedding_impl(tn_tensor *x, tn_tensor *t, tn_loss_fn_opts o) {
    const char *fn = "tn_hinge_embedding_loss";
    TN__CHECK_NULL(x, t);
    if (tn__loss_fn_args(fn, "hinge_embedding_loss", &o, "margin, reduction") || tn__loss_check_pair(fn, "input", x, "target", t, false)) return NULL;
    const double margin = tn__or(o.margin, 1);
    tn_scope_begin();
    /* PyTorch's: where(t != 1, max(0, margin - x), 0) + where(t != -1, x, 0) */
    tn_tensor *zero = tn_zeros(NULL, 0, x->dtype);
    tn_tensor *lm = tn_where(tn_ne_scalar(t, 1), tn_clamp(tn_rsub_scalar(x, margin), .min = 0), tn_to(zero, x->device));
    tn_tensor *ls = tn_where(tn_ne_scalar(t, -1), x, tn_to(zero, x->device));
    return tn__loss_fn_finish(tn_add(lm, ls), o.reduction, NULL);
}
TNDEF tn_tensor *tn_hinge_embedding_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts o) {
    return TN__AS("tn_hinge_embedding_loss", tn__hinge_embedding_impl(input, target, o));
}

static tn_tensor *tn__triplet_impl(const char *fn, tn_tensor *a, tn_tensor *p, tn_tensor *n, tn_distance_fn dist, void *user, bool custom, tn_loss_fn_opts o) {
    TN__CHECK_NULL(a, p, n);
    if (tn__loss_fn_args(fn, custom ? "triplet_margin_with_distance_loss" : "triplet_margin_loss", &o, custom ? "margin, swap, reduction" : "margin, p, eps, swap, reduction"))
        return NULL;
    if (a->ndim != p->ndim || p->ndim != n->ndim)
        return (tn_tensor *)tn__error("%s: The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor %dD, positive %dD, and negative %dD inputs",
                                      fn, a->ndim, p->ndim, n->ndim);
    const double margin = tn__or(o.margin, 1), pn = tn__or(o.p, 2), eps = tn__or(o.eps, 1e-6);
    const bool swap = tn__or_b(o.swap, false);
    tn_scope_begin();
    tn_tensor *dp, *dn, *ds = NULL;
    if (dist) {   /* the caller's function, run in this scope: the scope owns what it returns */
        dp = dist(a, p, user);
        dn = dp ? dist(a, n, user) : NULL;
        if (swap && dn) ds = dist(p, n, user);
        if (!dp || !dn || (swap && !ds)) {
            tn_scope_end();
            return tn_last_error()[0] ? NULL : (tn_tensor *)tn__error("%s: the distance function returned NULL", fn);
        }
    } else {
        dp = tn__pairwise_distance(a, p, pn, eps, false);
        dn = tn__pairwise_distance(a, n, pn, eps, false);
        if (swap) ds = tn__pairwise_distance(p, n, pn, eps, false);
    }
    if (swap) dn = tn_minimum(dn, ds);
    tn_tensor *l = tn_clamp(tn_add_scalar(tn_sub(dp, dn), margin), .min = 0);
    return tn__loss_fn_finish(l, o.reduction, "ClampMinBackward0");
}
TNDEF tn_tensor *tn_triplet_margin_loss_opts(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, tn_loss_fn_opts o) {
    return TN__AS("tn_triplet_margin_loss", tn__triplet_impl("tn_triplet_margin_loss", anchor, positive, negative, NULL, NULL, false, o));
}
TNDEF tn_tensor *tn_triplet_margin_with_distance_loss_opts(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, tn_distance_fn distance,
                                                           void *user, tn_loss_fn_opts o) {
    return TN__AS("tn_triplet_margin_with_distance_loss",
                  tn__triplet_impl("tn_triplet_margin_with_distance_loss", anchor, positive, negative, distance, user, true, o));
}

static tn_tensor *tn__gaussian_nll_impl(tn_tensor *x, tn_tensor *t, tn_tensor *var, tn_loss_fn_opts o) {
    const char *fn = "tn_gaussian_nll_loss";
    TN__CHECK_NULL(x, t, var);
    if (tn__loss_fn_args(fn, "gaussian_nll_loss", &o, "full, eps, reduction") || tn__loss_check_pair(fn, "input", x, "target", t, true)) return NULL;
    const double eps = tn__or(o.eps, 1e-6);
    const bool full = tn__or_b(o.full, false);
    const bool same = var->ndim == x->ndim && !memcmp(var->shape, x->shape, (size_t)x->ndim * sizeof(int64_t));
    /* homoscedastic: var one dim short of input (unsqueezed), or its last dim 1 */
    const bool short1 = x->ndim >= 1 && var->ndim == x->ndim - 1 && !memcmp(var->shape, x->shape, (size_t)var->ndim * sizeof(int64_t));
    const bool last1 = x->ndim >= 1 && var->ndim == x->ndim && !memcmp(var->shape, x->shape, (size_t)(x->ndim - 1) * sizeof(int64_t)) && var->shape[x->ndim - 1] == 1;
    if (!same && !short1 && !last1) return (tn_tensor *)tn__error("%s: var is of incorrect size (input %s, var %s)", fn, TN__SHAPE(x), TN__SHAPE(var));
    tn_scope_begin();
    if (tn_numel(var) && tn_item(tn_any(tn_lt_scalar(var, 0)))) { tn_scope_end(); return (tn_tensor *)tn__error("%s: var has negative entry/entries", fn); }
    tn_tensor *v = short1 ? tn_unsqueeze(var, -1) : var;
    /* clamped under no_grad in PyTorch: the values are max(var, eps), the gradient var's */
    v = tn_add(v, tn_detach(tn_sub(tn_clamp(v, .min = eps), v)));
    tn_tensor *d = tn_sub(x, t);
    tn_tensor *l = tn_mul_scalar(tn_add(tn_log(v), tn_div(tn_mul(d, d), v)), 0.5);
    if (full) l = tn_add_scalar(l, 0.5 * log(2 * 3.14159265358979323846));
    return tn__loss_fn_finish(l, o.reduction, NULL);
}
TNDEF tn_tensor *tn_gaussian_nll_loss_opts(tn_tensor *input, tn_tensor *target, tn_tensor *var, tn_loss_fn_opts o) {
    return TN__AS("tn_gaussian_nll_loss", tn__gaussian_nll_impl(input, target, var, o));
}

static tn_tensor *tn__poisson_nll_impl(tn_tensor *x, tn_tensor *t, tn_loss_fn_opts o) {
    const char *fn = "tn_poisson_nll_loss";
    TN__CHECK_NULL(x, t);
    if (tn__loss_fn_args(fn, "poisson_nll_loss", &o, "log_input, full, eps, reduction") || tn__loss_check_pair(fn, "input", x, "target", t, false)) return NULL;
    const double eps = tn__or(o.eps, 1e-8);
    const bool log_input = tn__or_b(o.log_input, true), full = tn__or_b(o.full, false);
    tn_scope_begin();
    tn_tensor *l = log_input ? tn_sub(tn_exp(x), tn_mul(t, x)) : tn_sub(x, tn_mul(t, tn_log(tn_add_scalar(x, eps))));
    if (full) {   /* t log t - t + 0.5 log(2 pi t), where t > 1 */
        tn_tensor *st = tn_add(tn_sub(tn_mul(t, tn_log(t)), t), tn_mul_scalar(tn_log(tn_mul_scalar(t, 2 * 3.14159265358979323846)), 0.5));
        l = tn_add(l, tn_masked_fill(st, tn_le_scalar(t, 1), 0));
    }
    return tn__loss_fn_finish(l, o.reduction, NULL);
}
TNDEF tn_tensor *tn_poisson_nll_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts o) {
    return TN__AS("tn_poisson_nll_loss", tn__poisson_nll_impl(input, target, o));
}

/* The _str forms: the option text, and the weight tensor where the loss has one. */
#define TN__LOSS_FN_STR(fn, options, call) TN__KW_STR(tn_loss_fn_opts, loss_fn, fn, options, call)
TNDEF tn_tensor *tn_soft_margin_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__LOSS_FN_STR("tn_soft_margin_loss", options, tn_soft_margin_loss_opts(input, target, o));
}
TNDEF tn_tensor *tn_multilabel_soft_margin_loss_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, const char *options) {
    TN__LOSS_FN_STR("tn_multilabel_soft_margin_loss", options, (o.weight = weight, tn_multilabel_soft_margin_loss_opts(input, target, o)));
}
TNDEF tn_tensor *tn_multilabel_margin_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__LOSS_FN_STR("tn_multilabel_margin_loss", options, tn_multilabel_margin_loss_opts(input, target, o));
}
TNDEF tn_tensor *tn_hinge_embedding_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__LOSS_FN_STR("tn_hinge_embedding_loss", options, tn_hinge_embedding_loss_opts(input, target, o));
}
TNDEF tn_tensor *tn_multi_margin_loss_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, const char *options) {
    TN__LOSS_FN_STR("tn_multi_margin_loss", options, (o.weight = weight, tn_multi_margin_loss_opts(input, target, o)));
}
TNDEF tn_tensor *tn_triplet_margin_loss_str(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, const char *options) {
    TN__LOSS_FN_STR("tn_triplet_margin_loss", options, tn_triplet_margin_loss_opts(anchor, positive, negative, o));
}
TNDEF tn_tensor *tn_triplet_margin_with_distance_loss_str(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, tn_distance_fn distance,
                                                          void *user, const char *options) {
    TN__LOSS_FN_STR("tn_triplet_margin_with_distance_loss", options, tn_triplet_margin_with_distance_loss_opts(anchor, positive, negative, distance, user, o));
}
TNDEF tn_tensor *tn_gaussian_nll_loss_str(tn_tensor *input, tn_tensor *target, tn_tensor *var, const char *options) {
    TN__LOSS_FN_STR("tn_gaussian_nll_loss", options, tn_gaussian_nll_loss_opts(input, target, var, o));
}
TNDEF tn_tensor *tn_poisson_nll_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__LOSS_FN_STR("tn_poisson_nll_loss", options, tn_poisson_nll_loss_opts(input, target, o));
}
