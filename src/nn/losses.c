/* ---- losses ----
   Composites of differentiable ops, following PyTorch 1.13's decompositions (its
   derivatives where they differ are noted), so double backward comes for free. Each
   public function runs its body in a scope, keeps the result and names its node. */
static int tn__loss_check_reduction(const char *fn, tn_reduction r, bool batchmean_ok) {
    if ((int)r == (int)TN_REDUCTION_BATCHMEAN && !batchmean_ok)
        return TN__FAIL_INT("%s: reduction TN_REDUCTION_BATCHMEAN is only valid for tn_kl_div (expected TN_REDUCTION_MEAN, TN_REDUCTION_SUM or TN_REDUCTION_NONE)", fn);
    if ((int)r < 0 || (int)r > (batchmean_ok ? 3 : 2))
        return TN__FAIL_INT("%s: invalid reduction %d (expected TN_REDUCTION_MEAN, TN_REDUCTION_SUM, TN_REDUCTION_NONE%s)", fn, (int)r,
                            batchmean_ok ? " or TN_REDUCTION_BATCHMEAN" : "");
    return 0;
}
/* PyTorch's apply_loss_reduction (none: the elementwise loss itself) */
static tn_tensor *tn__loss_reduce(tn_tensor *l, tn_reduction r) {
    return r == TN_REDUCTION_MEAN ? tn_mean(l) : r == TN_REDUCTION_SUM ? tn_sum(l) : l;
}
/* The end of every loss body: name the result's node, hand it out of the scope. */
static tn_tensor *tn__loss_finish(tn_tensor *r, const char *grad_name) {
    r = tn_keep(grad_name ? tn__grad_name(r, grad_name) : r);
    tn_scope_end();
    return r;
}
/* tn__loss_finish for a loss that is one node in PyTorch: its next functions are the
   inputs' (a, and b unless NULL), as PyTorch's node's */
static tn_tensor *tn__loss_finish_over(tn_tensor *r, const char *grad_name, tn_tensor *a, tn_tensor *b) {
    tn_tensor *ins[2] = {a, b};
    r = tn_keep(tn__grad_name_over(r, grad_name, ins, b ? 2 : 1));
    tn_scope_end();
    return r;
}
/* a and b broadcast together (names a and b in the message); with need_float, to a floating type */
static int tn__loss_check_pair(const char *fn, const char *na, tn_tensor *a, const char *nb, tn_tensor *b, bool need_float) {
    int64_t shape[TN_MAX_DIMS];
    if (a->ndim > TN_MAX_DIMS || b->ndim > TN_MAX_DIMS || tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape) < 0)
        return TN__FAIL_INT("%s: %s %s and %s %s are not broadcastable", fn, na, TN__SHAPE(a), nb, TN__SHAPE(b));
    tn_tensor *ab[2];
    ab[0] = a;
    ab[1] = b;
    tn_dtype dt = tn_result_type(ab, 2);
    if (need_float && !tn_dtype_is_floating(dt))
        return TN__FAIL_INT("%s: expected floating point %s and %s, got %s and %s", fn, na, nb, tn_dtype_name(a->dtype), tn_dtype_name(b->dtype));
    return 0;
}

/* x + v where PyTorch's v is a Python float: an integer x goes to the default dtype, as
   PyTorch promotes it (in C an integral v would be an integer scalar and keep x's dtype). */
static tn_tensor *tn__add_float_scalar(tn_tensor *x, double v) {
    if (x && (x->dtype == TN_BOOL || (!tn_dtype_is_floating(x->dtype) && !tn_is_complex(x)))) x = tn_to_dtype(x, tn_get_default_dtype());   /* (complex stays complex) */
    return tn_add_scalar(x, v);
}

static tn_tensor *tn__mse_l1_impl(const char *fn, tn_tensor *input, tn_tensor *target, tn_reduction red, bool l1) {
    TN__CHECK_NULL(input, target);
    /* l1 stays a plain composite as in PyTorch (abs of integers works; their mean fails in tn_mean) */
    if (tn__loss_check_reduction(fn, red, false) || tn__loss_check_pair(fn, "input", input, "target", target, !l1)) return NULL;
    tn_scope_begin();
    tn_tensor *d = tn_sub(input, target);
    tn_tensor *r = tn__loss_reduce(l1 ? tn_abs(d) : tn_square(d), red);
    return l1 ? tn__loss_finish(r, NULL) : tn__loss_finish_over(r, "MseLossBackward0", input, target);
}
TNDEF tn_tensor *tn_mse_loss_opts(tn_tensor *input, tn_tensor *target, tn_reduction_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_mse_loss_opts(ac_[0], ac_[1], o), input, target);
    return TN__AS("tn_mse_loss", tn__mse_l1_impl("tn_mse_loss", input, target, (tn_reduction)o.reduction, false));
}
TNDEF tn_tensor *tn_mse_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_reduction_fn_opts, reduction, "tn_mse_loss", options, tn_mse_loss_opts(input, target, o));
}
TNDEF tn_tensor *tn_l1_loss_opts(tn_tensor *input, tn_tensor *target, tn_reduction_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_l1_loss_opts(ac_[0], ac_[1], o), input, target);
    return TN__AS("tn_l1_loss", tn__mse_l1_impl("tn_l1_loss", input, target, (tn_reduction)o.reduction, true));
}
TNDEF tn_tensor *tn_l1_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_reduction_fn_opts, reduction, "tn_l1_loss", options, tn_l1_loss_opts(input, target, o));
}

/* PyTorch's huber_loss_backward builds its TensorIterator without type promotion (2025 as
   1.13; mse and smooth_l1 promote since 2.x), so a backward through input and target of two
   dtypes raises there; the forward works. A post-hook on the loss's node raises it, with the
   dtypes packed in user: found * 64 + expected + 1. */
static int tn__huber_dtype_hook(tn_tensor **grad_inputs, int n, tn_tensor *grad_output, void *user) {
    (void)grad_inputs; (void)n; (void)grad_output;
    unsigned code = (unsigned)((uintptr_t)user - 1);
    return TN__FAIL_INT("Found dtype %s but expected %s", tn__torch_type_name((tn_dtype)(code / 64)), tn__torch_type_name((tn_dtype)(code % 64)));
}
/* smooth_l1 (huber false): z < beta ? 0.5 z^2 / beta : z - 0.5 beta; huber: z < delta ?
   0.5 z^2 : delta (z - 0.5 delta), z = |input - target|. huber's result has input's dtype
   (PyTorch's empty_like(input) output), smooth_l1's the promoted one. */
static tn_tensor *tn__smooth_l1_impl(const char *fn, tn_tensor *input, tn_tensor *target, tn_reduction red, double beta, bool huber) {
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__loss_check_pair(fn, "input", input, "target", target, true)) return NULL;
    if (huber && !(beta > 0)) return (tn_tensor *)tn__error("%s: delta must be positive, got %g", fn, beta);
    if (!huber && !(beta >= 0)) return (tn_tensor *)tn__error("%s: beta must be non-negative, got %g", fn, beta);
    tn_scope_begin();
    tn_tensor *d = tn_sub(input, target), *z = tn_abs(d), *l;
    if (!huber && beta == 0) {
        l = z; /* PyTorch's l1 path (the quadratic branch would be 0/0) */
    } else {
        tn_tensor *quad = tn_mul_scalar(tn_mul(d, d), 0.5);
        if (!huber) quad = tn_div_scalar(quad, beta);
        tn_tensor *lin = tn_sub_scalar(z, 0.5 * beta);
        if (huber) lin = tn_mul_scalar(lin, beta);
        l = tn_where(tn_lt_scalar(z, beta), quad, lin);
    }
    if (huber && l && l->dtype != input->dtype) l = tn_to_dtype(l, input->dtype);
    tn_tensor *r = tn__loss_reduce(l, red);
    if (huber && r && r->grad_fn && input->dtype != target->dtype) {
        /* the gradient of input is computed first: its message, else target's */
        tn_dtype found = input->requires_grad ? target->dtype : input->dtype, expected = input->requires_grad ? input->dtype : target->dtype;
        if (tn_node_register_hook(r->grad_fn, tn__huber_dtype_hook, (void *)(uintptr_t)((unsigned)found * 64 + (unsigned)expected + 1)) < 0) r = NULL;
    }
    return tn__loss_finish_over(r, huber ? "HuberLossBackward0" : "SmoothL1LossBackward0", input, target);
}
TNDEF tn_tensor *tn_smooth_l1_loss_opts(tn_tensor *input, tn_tensor *target, tn_smooth_l1_loss_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_smooth_l1_loss_opts(ac_[0], ac_[1], o), input, target);
    return TN__AS("tn_smooth_l1_loss", tn__smooth_l1_impl("tn_smooth_l1_loss", input, target, (tn_reduction)o.reduction, o.beta, false));
}
TNDEF tn_tensor *tn_smooth_l1_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_smooth_l1_loss_fn_opts, smooth_l1_loss, "tn_smooth_l1_loss", options, tn_smooth_l1_loss_opts(input, target, o));
}
TNDEF tn_tensor *tn_huber_loss_opts(tn_tensor *input, tn_tensor *target, tn_huber_loss_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_huber_loss_opts(ac_[0], ac_[1], o), input, target);
    return TN__AS("tn_huber_loss", tn__smooth_l1_impl("tn_huber_loss", input, target, (tn_reduction)o.reduction, o.delta, true));
}
TNDEF tn_tensor *tn_huber_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_huber_loss_fn_opts, huber_loss, "tn_huber_loss", options, tn_huber_loss_opts(input, target, o));
}

/* Checks of input [C] / [N, C] / [N, C, d1, ...] against a class-index target and weight. */
static int tn__class_check(const char *fn, tn_tensor *input, tn_tensor *target, tn_tensor *weight) {
    if (tn__check_cpu_dtype(fn, input)) return -1;
    if (!tn_dtype_is_floating(input->dtype))
        return TN__FAIL_INT("%s: expected a floating point input, got %s (input %s)", fn, tn_dtype_name(input->dtype), TN__SHAPE(input));
    if (input->ndim == 0)
        return TN__FAIL_INT("%s: expected an input of 1 or more dimensions ([C], [N, C] or [N, C, d1, ...]), got a 0-d input", fn);
    if (target->dtype != TN_I64)
        return TN__FAIL_INT("%s: expected target dtype int64 (Long), got %s (input %s, target %s)", fn, tn_dtype_name(target->dtype),
                            TN__SHAPE(input), TN__SHAPE(target));
    int64_t want[TN_MAX_DIMS];
    int nw = 0;
    for (int i = 0; i < input->ndim; i++) if (i != 1) want[nw++] = input->shape[i];
    if (input->ndim == 1) nw = 0;
    if (target->ndim != nw) {
        if (nw == 0)
            return TN__FAIL_INT("%s: an unbatched input %s expects a 0-d target, got target %s", fn, TN__SHAPE(input), TN__SHAPE(target));
        return TN__FAIL_INT("%s: expected a %d-d target %s for input %s, got target %s", fn, nw, tn__shape_str(want, nw), TN__SHAPE(input), TN__SHAPE(target));
    }
    if (nw > 0 && target->shape[0] != input->shape[0])
        return TN__FAIL_INT("%s: input batch size %lld does not match target batch size %lld (input %s, target %s)", fn,
                            (long long)input->shape[0], (long long)target->shape[0], TN__SHAPE(input), TN__SHAPE(target));
    for (int i = 1; i < nw; i++)
        if (target->shape[i] != want[i])
            return TN__FAIL_INT("%s: size mismatch: input %s expects target %s, got target %s", fn, TN__SHAPE(input), tn__shape_str(want, nw), TN__SHAPE(target));
    int64_t c = input->shape[input->ndim == 1 ? 0 : 1];
    if (weight) {
        if (weight->ndim != 1 || weight->shape[0] != c)
            return TN__FAIL_INT("%s: weight should be defined for all %lld classes or no classes, got weight %s (input %s)", fn, (long long)c,
                                TN__SHAPE(weight), TN__SHAPE(input));
        if (weight->dtype != input->dtype)
            return TN__FAIL_INT("%s: expected weight dtype %s (as input), got %s", fn, tn_dtype_name(input->dtype), tn_dtype_name(weight->dtype));
    }
    return 0;
}

/* Read the class indices (in the caller's scope): *safe (int64, target's shape, ignored
   entries replaced by class 0 so gathers stay in range) and *keep (bool: entries that
   count). Returns how many count, or -1 (a target out of [0, C) that is not ignore_index),
   or, for targets on a device with index checks, -2 without waiting for it: the count is
   not known and a bad target is reported at the next synchronisation. */
static int64_t tn__class_targets(const char *fn, tn_tensor *input, tn_tensor *target, int64_t ignore_index, tn_tensor **safe, tn_tensor **keep) {
    int64_t c = input->shape[input->ndim == 1 ? 0 : 1], n = tn_numel(target), count = 0;
    if (target->device != TN_CPU && target->device == input->device && tn__backend(target->device)->check_index) {
        *safe = tn__own(tn__device_checked(target, c, 2, ignore_index, "%s: target %%lld is out of bounds for %lld classes (input %s, target %s)", fn,
                                           (long long)c, TN__SHAPE(input), TN__SHAPE(target)));
        *keep = tn_ne(target, tn_scalar_int(ignore_index));
        return *safe && *keep ? -2 : -1;
    }
    tn_tensor *tc = tn_contiguous(tn_to(target, TN_CPU));
    int64_t *s = (int64_t *)tn__malloc_n(fn, n + 1, sizeof(int64_t));
    uint8_t *k = s ? (uint8_t *)tn__malloc_n(fn, n + 1, 1) : NULL;
    if (!tc || !s || !k) {
        TN_FREE(s);
        TN_FREE(k);
        return -1;   /* tn__malloc_n or the copy said why */
    }
    const int64_t *v = (const int64_t *)tn_data_ptr(tc);
    for (int64_t i = 0; i < n; i++) {
        k[i] = v[i] != ignore_index;
        s[i] = k[i] ? v[i] : 0;
        if (k[i] && (v[i] < 0 || v[i] >= c)) {
            tn__error("%s: target %lld is out of bounds for %lld classes (input %s, target %s)", fn, (long long)v[i], (long long)c,
                      TN__SHAPE(input), TN__SHAPE(target));
            TN_FREE(s);
            TN_FREE(k);
            return -1;
        }
        count += k[i];
    }
    *safe = tn_to(tn_from_data(s, target->shape, target->ndim, TN_I64), input->device);
    *keep = tn_to(tn_from_data(k, target->shape, target->ndim, TN_BOOL), input->device);
    TN_FREE(s);
    TN_FREE(k);
    return *safe && *keep ? count : -1;
}

/* weight[c] at each target entry, 0 where ignored (input's dtype, target's shape) */
static tn_tensor *tn__class_weights(tn_tensor *input, tn_tensor *weight, tn_tensor *safe, tn_tensor *keep) {
    tn_tensor *kf = tn_to_dtype(keep, input->dtype);
    if (!weight || !safe) return kf;
    tn_tensor *w = tn_index_select(weight, 0, tn_flatten(safe));
    return tn_mul(w ? tn_reshape(w, safe->shape, safe->ndim) : NULL, kf);
}

/* Sum of w_i * l_i over target entries divided by the total weight tw (w includes the
   ignore mask): PyTorch's weighted mean. When no weight counts (tw == 0) the result is NaN
   with a zero gradient at ignored entries, as PyTorch's. nkeep: the entries that count, or
   -2 when unknown (targets on a device: tw stays there, no waiting). */
static tn_tensor *tn__class_mean(tn_tensor *wl, tn_tensor *w, tn_tensor *keep, tn_tensor *weight, int64_t nkeep) {
    if (!weight && nkeep >= 0) { /* tw = nkeep */
        tn_tensor *s = tn_sum(wl);
        return nkeep ? tn_div_scalar(s, (double)nkeep) : tn_add_scalar(tn_mul_scalar(s, 0), NAN);
    }
    tn_tensor *tw = tn_sum(w);
    if (tw && tw->device != TN_CPU) {   /* sum / (tw or 1) + (NaN where tw == 0): the gradient stays 0 at ignored entries */
        tn_tensor *none = tn_eq_scalar(tw, 0);
        return tn_add(tn_div(tn_sum(wl), tn_where(none, tn_scalar(1), tw)), tn_where(none, tn_scalar(NAN), tn_scalar(0)));
    }
    double twv = tw ? tn_item(tw) : 0;
    if (twv != 0) return tn_div(tn_sum(wl), tw);
    /* wl / tw elementwise with the ignored entries kept at exactly 0 */
    tn_tensor *ratio = tn_where(keep, tn_div(wl, tw), tn_zeros_like(wl));
    return tn_add_scalar(tn_sum(ratio), NAN);
}

/* nll_loss on log-probabilities logp: -weight[t] * logp[t] at each target entry */
static tn_tensor *tn__nll_core(tn_tensor *logp, tn_tensor *safe, tn_tensor *keep, tn_tensor *weight, int64_t nkeep, tn_reduction red) {
    if (!logp || !safe || !keep) return NULL;
    int64_t cd = logp->ndim == 1 ? 0 : 1;
    tn_tensor *g = tn_gather(logp, cd, tn_unsqueeze(safe, cd));
    g = g ? tn_reshape(g, safe->shape, safe->ndim) : NULL;
    tn_tensor *w = tn__class_weights(logp, weight, safe, keep);
    tn_tensor *wl = tn_neg(tn_mul(g, w));
    if (red == TN_REDUCTION_NONE) return wl;
    if (red == TN_REDUCTION_SUM) return tn_sum(wl);
    return tn__class_mean(wl, w, keep, weight, nkeep);
}

/* PyTorch's node for nll_loss_nd: nll_loss up to 2-d, nll_loss2d beyond (3-d and 5+-d
   inputs are viewed as 4-d, so their unreduced result is a view) */
static const char *tn__nll_name(int ndim, tn_reduction red) {
    return ndim <= 2 ? "NllLossBackward0" : ndim != 4 && red == TN_REDUCTION_NONE ? "ViewBackward0" : "NllLoss2DBackward0";
}
/* the end of an nll_loss over log-probabilities logp: PyTorch's node shows logp's (not a view's) */
static tn_tensor *tn__nll_finish(tn_tensor *r, tn_tensor *logp, int ndim, tn_reduction red) {
    const char *name = tn__nll_name(ndim, red);
    return name[0] == 'V' ? tn__loss_finish(r, name) : tn__loss_finish_over(r, name, logp, NULL);
}

static tn_tensor *tn__nll_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction red) {
    const char *fn = "tn_nll_loss";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__class_check(fn, input, target, weight)) return NULL;
    tn_scope_begin();
    tn_tensor *safe = NULL, *keep = NULL;
    int64_t nkeep = tn__class_targets(fn, input, target, ignore_index, &safe, &keep);
    return tn__nll_finish(nkeep == -1 ? NULL : tn__nll_core(input, safe, keep, weight, nkeep, red), input, input->ndim, red);
}
TNDEF tn_tensor *tn_nll_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_nll_loss_opts(ac_[0], ac_[1], (o.weight = ac_[2], o)), input, target, o.weight);
    if (o.label_smoothing != 0) return (tn_tensor *)tn__error("tn_nll_loss: label_smoothing is an option of cross_entropy, not nll_loss");
    return TN__AS("tn_nll_loss", tn__nll_impl(input, target, o.weight, o.ignore_index, (tn_reduction)o.reduction));
}
TNDEF tn_tensor *tn_nll_loss_str(tn_tensor *input, tn_tensor *target, const char *options) {
    tn__kwkey keys[TN__KW_MAXKEYS];   /* label_smoothing is cross_entropy's */
    const int n = tn__kw_filter(tn__kw_loss, TN__KW_N(tn__kw_loss), "weight, ignore_index, reduction", keys);
    tn_loss_opts o = TN_DEFAULTS(tn_loss_opts);
    return tn__kw_parse("tn_nll_loss", options, keys, n, &o, NULL) ? NULL : tn_nll_loss_opts(input, target, o);
}

/* weight [C] viewed along the class dim of an input of ndim dims: [1, C, 1, ...] (or [C]) */
static tn_tensor *tn__class_view(tn_tensor *weight, int ndim) {
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < ndim; i++) shape[i] = 1;
    shape[ndim == 1 ? 0 : 1] = tn_numel(weight);
    return tn_reshape(weight, shape, ndim);
}

/* Class probabilities (PyTorch's cross_entropy_loss_prob_target): -sum(logp * t * w) */
static tn_tensor *tn__ce_prob(const char *fn, tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_reduction red, double ls, const char **name) {
    int64_t cd = input->ndim == 1 ? 0 : 1, c = input->shape[cd];
    if (!tn_dtype_is_floating(target->dtype))
        return (tn_tensor *)tn__error("%s: expected a floating point target for class probabilities (target of input's shape %s), got %s", fn,
                                      TN__SHAPE(input), tn_dtype_name(target->dtype));
    if (weight && (weight->ndim != 1 || weight->shape[0] != c))
        return (tn_tensor *)tn__error("%s: weight should be defined for all %lld classes or no classes, got weight %s (input %s)", fn, (long long)c,
                                      TN__SHAPE(weight), TN__SHAPE(input));
    tn_tensor *logp = tn_log_softmax(input, cd);
    tn_tensor *t = ls > 0 ? tn_add_scalar(tn_mul_scalar(target, 1 - ls), ls / (double)c) : target;
    tn_tensor *p = tn_mul(logp, t);
    if (weight) p = tn_mul(p, tn__class_view(weight, input->ndim));
    if (red == TN_REDUCTION_NONE) return tn_neg(tn_sum_dims(p, &cd, 1));
    tn_tensor *s = tn_neg(tn_sum(p));
    if (red == TN_REDUCTION_SUM) return s;
    *name = "DivBackward1";
    int64_t numel = tn_numel(input);
    return numel == 0 ? tn_add_scalar(s, NAN) : tn_div_scalar(s, (double)(numel / c));
}

/* Cross-entropy with class targets as one node over the rows (tn_backend.cross_entropy):
   each row's loss wr (logsumexp(x) - x[t]); the reduction is composed on top, so the
   graph reads as PyTorch's (NllLossBackward0 over LogSoftmaxBackward0). The backward is
   the entry's, or (create_graph, or declined) the closed form with differentiable ops. */
static int tn__ce_rows_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *t = tn_ctx_saved(n, 1), *wr = tn_ctx_saved(n, 2), *lse = tn_ctx_saved(n, 3);
    if (!x || !t || !wr || !lse) return -1;
    if (tn__grad_disabled) {
        tn_tensor *g = tn_contiguous(gy), *gx = tn__own(tn__new(x->dtype, x->device, x->shape, 2));
        int r = g && gx ? tn__backend(x->device)->cross_entropy(1, x, t, wr, lse, g, gx) : -1;
        if (r <= 0) return r ? -1 : ((gin[0] = gx), 0);
    }
    tn_tensor *oh = tn_to_dtype(tn_one_hot(t, .num_classes = x->shape[1]), x->dtype);
    gin[0] = tn_mul(tn_sub(tn_softmax(x, 1), oh), tn_unsqueeze(tn_mul(gy, wr), 1));
    return gin[0] ? 0 : -1;
}
/* The rows' losses [N] of x [N, C]; NULL with *declined set when the backend declines. */
static tn_tensor *tn__ce_rows(const tn_backend *be, tn_tensor *x, tn_tensor *t, tn_tensor *wr, bool *declined) {
    const int64_t N = x->shape[0];
    tn_tensor *xc = tn_contiguous(x), *tc = tn_contiguous(tn_reshape(t, TN_SHAPE(N))), *wc = tn_contiguous(tn_reshape(wr, TN_SHAPE(N)));
    tn_tensor *lse = tn__own(tn__new(TN_F64, x->device, TN_SHAPE(N)));
    tn_tensor *out = xc && tc && wc && lse ? tn__new(x->dtype, x->device, TN_SHAPE(N)) : NULL;
    int r = out ? be->cross_entropy(0, xc, tc, wc, lse, out, NULL) : -1;
    if (r) { tn_release(out); *declined = r > 0; return NULL; }
    tn_node *nd = tn__fn_node("LogSoftmaxBackward0", tn__ce_rows_bw, &x, 1);
    if (nd) {
        tn__node_save(nd, xc);
        tn__node_save(nd, tc);
        tn__node_save(nd, wc);
        tn__node_save(nd, lse);
    }
    return tn__own(tn__node_attach(nd, out));
}
static tn_tensor *tn__ce_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction red, double ls) {
    const char *fn = "tn_cross_entropy";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false)) return NULL;
    if (ls > 1 || ls != ls) return (tn_tensor *)tn__error("%s: label_smoothing must be between 0.0 and 1.0, got %g", fn, ls);
    if (tn__check_cpu_dtype(fn, input)) return NULL;
    if (!tn_dtype_is_floating(input->dtype))
        return (tn_tensor *)tn__error("%s: expected a floating point input, got %s (input %s)", fn, tn_dtype_name(input->dtype), TN__SHAPE(input));
    bool probs = input->ndim > 0 && target->ndim == input->ndim && memcmp(target->shape, input->shape, (size_t)input->ndim * sizeof(int64_t)) == 0;
    if (probs) {
        if (ignore_index != -100) return (tn_tensor *)tn__error("%s: ignore_index is not supported for class-probability targets (got %lld)", fn, (long long)ignore_index);
        const char *name = "NegBackward0";
        tn_scope_begin();
        tn_tensor *r = tn__ce_prob(fn, input, target, weight, red, ls, &name);
        return tn__loss_finish(r, name);
    }
    if (tn__class_check(fn, input, target, weight)) return NULL;
    tn_scope_begin();
    tn_tensor *safe = NULL, *keep = NULL;
    int64_t nkeep = tn__class_targets(fn, input, target, ignore_index, &safe, &keep);
    if (nkeep == -1) return tn__loss_finish(NULL, NULL);
    const tn_backend *be = tn__backend(input->device);
    if (be->cross_entropy && input->ndim <= 2 && !(ls > 0) && !(weight && weight->requires_grad)) {   /* one node over the rows, the reduction on top */
        bool declined = false;
        tn_tensor *wr = tn__class_weights(input, weight, safe, keep);
        tn_tensor *node = wr ? tn__ce_rows(be, input->ndim == 1 ? tn_unsqueeze(input, 0) : input, safe, wr, &declined) : NULL;
        if (node || !declined) {
            tn_tensor *rows = tn_reshape(node, target->shape, target->ndim);
            tn_tensor *r = red == TN_REDUCTION_NONE ? rows : red == TN_REDUCTION_SUM ? tn_sum(rows) : tn__class_mean(rows, wr, keep, weight, nkeep);
            return tn__nll_finish(r, node, input->ndim, red);   /* NllLossBackward0 over its LogSoftmaxBackward0 */
        }
    }
    int64_t cd = input->ndim == 1 ? 0 : 1;
    tn_tensor *logp = tn_log_softmax(input, cd);
    tn_tensor *nll = tn__nll_core(logp, safe, keep, weight, nkeep, red);
    if (!(ls > 0)) return tn__nll_finish(nll, logp, input->ndim, red);
    /* label smoothing (PyTorch's cross_entropy_loss_label_smoothing): the uniform part
       -sum_c w_c logp_c per entry, 0 where ignored, normalised as the nll part */
    tn_tensor *sm = tn_neg(tn_sum_dims(weight ? tn_mul(logp, tn__class_view(weight, input->ndim)) : logp, &cd, 1));
    sm = tn_where(keep, sm, tn_scalar(0));
    tn_tensor *ret = sm;
    if (red == TN_REDUCTION_SUM) ret = tn_sum(sm);
    else if (red == TN_REDUCTION_MEAN) {
        ret = weight || nkeep < 0 ? tn__class_mean(sm, tn__class_weights(input, weight, safe, keep), keep, weight, nkeep)
                                  : tn_div_scalar(tn_sum(sm), (double)nkeep);
    }
    int64_t c = input->shape[cd];
    return tn__loss_finish(tn_add(tn_mul_scalar(nll, 1 - ls), tn_mul_scalar(ret, ls / (double)c)), "AddBackward0");
}
TNDEF tn_tensor *tn_cross_entropy_opts(tn_tensor *input, tn_tensor *target, tn_loss_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_cross_entropy_opts(ac_[0], ac_[1], (o.weight = ac_[2], o)), input, target, o.weight);
    return TN__AS("tn_cross_entropy", tn__ce_impl(input, target, o.weight, o.ignore_index, (tn_reduction)o.reduction, o.label_smoothing));
}
TNDEF tn_tensor *tn_cross_entropy_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_loss_opts, loss, "tn_cross_entropy", options, tn_cross_entropy_opts(input, target, o));
}

/* weight (may be NULL) broadcast to t's shape, or -1 with a message */
static int tn__loss_check_weight(const char *fn, const char *wname, tn_tensor *w, tn_tensor *t) {
    int64_t shape[TN_MAX_DIMS];
    if (!w) return 0;
    int n = w->ndim <= TN_MAX_DIMS ? tn__broadcast(w->shape, w->ndim, t->shape, t->ndim, shape) : -1;
    if (n != t->ndim || memcmp(shape, t->shape, (size_t)n * sizeof(int64_t)) != 0)
        return TN__FAIL_INT("%s: %s %s is not broadcastable to the loss's shape %s", fn, wname, TN__SHAPE(w), TN__SHAPE(t));
    if (!tn_dtype_is_floating(w->dtype)) return TN__FAIL_INT("%s: expected a floating point %s, got %s", fn, wname, tn_dtype_name(w->dtype));
    return 0;
}

/* max(log(x), -100) with a finite gradient at x = 0 (the log's input is 1 there) */
static tn_tensor *tn__clamped_log(tn_tensor *x) {
    tn_tensor *pos = tn_gt_scalar(x, 0);
    return tn_where(pos, tn_clamp(tn_log(tn_where(pos, x, tn_scalar(1))), .min = -100), tn_scalar(-100));
}

static tn_tensor *tn__bce_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_reduction red) {
    const char *fn = "tn_binary_cross_entropy";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__check_cpu_dtype(fn, input)) return NULL;
    if (target->ndim != input->ndim || memcmp(target->shape, input->shape, (size_t)input->ndim * sizeof(int64_t)) != 0)
        return (tn_tensor *)tn__error("%s: target %s must have the same shape as input %s", fn, TN__SHAPE(target), TN__SHAPE(input));
    if (!tn_dtype_is_floating(input->dtype))
        return (tn_tensor *)tn__error("%s: expected a floating point input, got %s", fn, tn_dtype_name(input->dtype));
    if (target->dtype != input->dtype)
        return (tn_tensor *)tn__error("%s: expected target dtype %s (as input), got %s", fn, tn_dtype_name(input->dtype), tn_dtype_name(target->dtype));
    if (tn__loss_check_weight(fn, "weight", weight, input)) return NULL;
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *inside = tn_all(tn_logical_and(tn_ge_scalar(input, 0), tn_le_scalar(input, 1))); /* NaN fails too */
    tn_no_grad_end();
    if (inside && tn_item(inside) == 0) {
        tn__error("%s: all elements of input should be between 0 and 1 (input %s)", fn, TN__SHAPE(input));
        return tn__loss_finish(NULL, NULL);
    }
    /* PyTorch's (t - 1) max(log(1 - x), -100) - t max(log(x), -100), times weight */
    tn_tensor *l = tn_sub(tn_mul(tn_sub_scalar(target, 1), tn__clamped_log(tn_rsub_scalar(input, 1))), tn_mul(target, tn__clamped_log(input)));
    if (weight) l = tn_mul(l, tn_to_dtype(weight, input->dtype));
    return tn__loss_finish_over(inside ? tn__loss_reduce(l, red) : NULL, "BinaryCrossEntropyBackward0", input, target);
}
TNDEF tn_tensor *tn_binary_cross_entropy_opts(tn_tensor *input, tn_tensor *target, tn_binary_cross_entropy_fn_opts o) {
    if (input && input->device == TN_CUDA && tn_autocast_is_enabled(TN_CUDA) && !tn__ac_suspended)   /* PyTorch's CUDA autocast bans it */
        return (tn_tensor *)tn__error("tn_binary_cross_entropy: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast. "
                                      "Many models use a sigmoid layer right before the binary cross entropy layer. In this case, combine the two layers "
                                      "using torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss. "
                                      "binary_cross_entropy_with_logits and BCEWithLogits are safe to autocast.");
    TN__AUTOCAST(TN__AC_F32, tn_binary_cross_entropy_opts(ac_[0], ac_[1], (o.weight = ac_[2], o)), input, target, o.weight);
    return TN__AS("tn_binary_cross_entropy", tn__bce_impl(input, target, o.weight, (tn_reduction)o.reduction));
}
TNDEF tn_tensor *tn_binary_cross_entropy_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, const char *options) {
    TN__KW_STR(tn_binary_cross_entropy_fn_opts, binary_cross_entropy, "tn_binary_cross_entropy", options,
               (o.weight = weight, tn_binary_cross_entropy_opts(input, target, o)));
}

static tn_tensor *tn__bce_logits_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_tensor *pos_weight, tn_reduction red) {
    const char *fn = "tn_binary_cross_entropy_with_logits";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__check_cpu_dtype(fn, input)) return NULL;
    if (target->ndim != input->ndim || memcmp(target->shape, input->shape, (size_t)input->ndim * sizeof(int64_t)) != 0)
        return (tn_tensor *)tn__error("%s: target %s must have the same shape as input %s", fn, TN__SHAPE(target), TN__SHAPE(input));
    if (!tn_dtype_is_floating(input->dtype) || !tn_dtype_is_floating(target->dtype))
        return (tn_tensor *)tn__error("%s: expected floating point input and target, got %s and %s", fn, tn_dtype_name(input->dtype), tn_dtype_name(target->dtype));
    if (tn__loss_check_weight(fn, "weight", weight, input) || tn__loss_check_weight(fn, "pos_weight", pos_weight, input)) return NULL;
    tn_scope_begin();
    /* PyTorch's stable form: (1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m), m = max(-x, 0),
       lw = 1 + (pos_weight - 1) t */
    tn_tensor *m = tn_clamp(tn_neg(input), .min = 0);
    tn_tensor *lse = tn_log(tn_add(tn_exp(tn_neg(m)), tn_exp(tn_sub(tn_neg(input), m))));
    tn_tensor *lin = tn_mul(tn_rsub_scalar(target, 1), input), *l;
    if (pos_weight) l = tn_add(lin, tn_mul(tn_add_scalar(tn_mul(tn_sub_scalar(pos_weight, 1), target), 1), tn_add(lse, m)));
    else l = tn_add(tn_add(lin, m), lse);
    if (weight) l = tn_mul(l, weight);
    /* PyTorch computes in place into (1 - target): the loss has target's dtype */
    if (l && l->dtype != target->dtype) l = tn_to_dtype(l, target->dtype);
    return tn__loss_finish_over(tn__loss_reduce(l, red), "BinaryCrossEntropyWithLogitsBackward0", input, target);
}
TNDEF tn_tensor *tn_binary_cross_entropy_with_logits_opts(tn_tensor *input, tn_tensor *target, tn_binary_cross_entropy_with_logits_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_binary_cross_entropy_with_logits_opts(ac_[0], ac_[1], (o.weight = ac_[2], o.pos_weight = ac_[3], o)), input, target,
                 o.weight, o.pos_weight);
    return TN__AS("tn_binary_cross_entropy_with_logits", tn__bce_logits_impl(input, target, o.weight, o.pos_weight, (tn_reduction)o.reduction));
}
TNDEF tn_tensor *tn_binary_cross_entropy_with_logits_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_tensor *pos_weight,
                                                         const char *options) {
    TN__KW_STR(tn_binary_cross_entropy_with_logits_fn_opts, binary_cross_entropy_with_logits, "tn_binary_cross_entropy_with_logits", options,
               (o.weight = weight, o.pos_weight = pos_weight, tn_binary_cross_entropy_with_logits_opts(input, target, o)));
}

static tn_tensor *tn__kl_div_impl(tn_tensor *input, tn_tensor *target, tn_reduction red, bool log_target) {
    const char *fn = "tn_kl_div";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, true) || tn__loss_check_pair(fn, "input", input, "target", target, true)) return NULL;
    tn_scope_begin();
    tn_tensor *l;
    if (log_target) {
        l = tn_mul(tn_exp(target), tn_sub(target, input));
    } else { /* xlogy(t, t) - t x; xlogy is 0 at t = 0 (and so is its gradient here; PyTorch's is NaN) */
        tn_tensor *safe = tn_where(tn_eq_scalar(target, 0), tn_scalar(1), target);
        l = tn_sub(tn_mul(target, tn_log(safe)), tn_mul(target, input));
    }
    const char *name = NULL;
    if (red == TN_REDUCTION_BATCHMEAN) {
        l = tn_sum(l);
        if (input->ndim > 0) {
            l = tn_div_scalar(l, (double)input->shape[0]);
            name = "DivBackward0";
        }
    } else {
        l = tn__loss_reduce(l, red);
    }
    return tn__loss_finish(l, name);
}
TNDEF tn_tensor *tn_kl_div_opts(tn_tensor *input, tn_tensor *target, tn_kl_div_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32, tn_kl_div_opts(ac_[0], ac_[1], o), input, target);
    return TN__AS("tn_kl_div", tn__kl_div_impl(input, target, (tn_reduction)o.reduction, o.log_target));
}
TNDEF tn_tensor *tn_kl_div_str(tn_tensor *input, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_kl_div_fn_opts, kl_div, "tn_kl_div", options, tn_kl_div_opts(input, target, o));
}

/* ||x|| along dim (kept) clamped below at eps as torch 1.13's cosine_similarity does (an
   in-place clamp under no_grad): the value is max(||x||, eps) and the gradient of a
   clamped norm is x / eps (its backward divides by the clamped result). */
static tn_tensor *tn__clamped_norm(tn_tensor *x, int64_t dim, double eps) {
    tn_tensor *n = tn_norm_dims(x, &dim, 1, .keepdim = true);
    tn_tensor *small = n ? tn_lt_scalar(n, eps) : NULL, *any = small ? tn_any(small) : NULL;
    if (!any || tn_item(any) == 0) return any ? n : NULL;
    tn_tensor *s = tn_sum_dims(tn_square(x), &dim, 1, .keepdim = true);
    tn_tensor *alt = tn_add_scalar(tn_div_scalar(tn_sub(s, tn_detach(s)), 2 * eps), eps); /* value eps, gradient x / eps */
    return tn_where(small, alt, n);
}

static tn_tensor *tn__cosine_similarity_impl(tn_tensor *x1, tn_tensor *x2, int64_t dim, double eps) {
    const char *fn = "tn_cosine_similarity";
    TN__CHECK_NULL(x1, x2);
    int64_t shape[TN_MAX_DIMS];
    if (tn__loss_check_pair(fn, "x1", x1, "x2", x2, false)) return NULL;
    tn_tensor *ab[2];
    ab[0] = x1;
    ab[1] = x2;
    tn_dtype dt = tn_result_type(ab, 2);
    if (!tn_dtype_is_floating(dt)) return (tn_tensor *)tn__error("%s: expected a floating point common dtype, got %s", fn, tn_dtype_name(dt));
    int nd = tn__broadcast(x1->shape, x1->ndim, x2->shape, x2->ndim, shape);
    int d = tn__wrap_dim(fn, dim, nd);
    if (d < 0) return NULL;
    int64_t d64 = d;
    tn_scope_begin();
    tn_tensor *a = tn_broadcast_to(tn_to_dtype(x1, dt), shape, nd), *b = tn_broadcast_to(tn_to_dtype(x2, dt), shape, nd);
    tn_tensor *r = tn_sum_dims(tn_mul(tn_div(a, tn__clamped_norm(a, d64, eps)), tn_div(b, tn__clamped_norm(b, d64, eps))), &d64, 1);
    return tn__loss_finish(r, "SumBackward1");
}
TNDEF tn_tensor *tn_cosine_similarity_opts(tn_tensor *x1, tn_tensor *x2, tn_cosine_similarity_fn_opts o) {
    return TN__AS("tn_cosine_similarity", tn__cosine_similarity_impl(x1, x2, o.dim, o.eps));
}
TNDEF tn_tensor *tn_cosine_similarity_str(tn_tensor *x1, tn_tensor *x2, const char *options) {
    TN__KW_STR(tn_cosine_similarity_fn_opts, cosine_similarity, "tn_cosine_similarity", options, tn_cosine_similarity_opts(x1, x2, o));
}

static tn_tensor *tn__cosine_embedding_impl(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction red) {
    const char *fn = "tn_cosine_embedding_loss";
    TN__CHECK_NULL(x1, x2, target);
    if (tn__loss_check_reduction(fn, red, false)) return NULL;
    if (target->ndim > 1) return (tn_tensor *)tn__error("%s: expected a 0-d or 1-d target, got target %s", fn, TN__SHAPE(target));
    if (x1->ndim != target->ndim + 1 || x2->ndim != target->ndim + 1)
        return (tn_tensor *)tn__error("%s: a %d-d target %s expects %d-d inputs, got x1 %s and x2 %s", fn, target->ndim, TN__SHAPE(target),
                                      target->ndim + 1, TN__SHAPE(x1), TN__SHAPE(x2));
    if (tn__loss_check_pair(fn, "x1", x1, "x2", x2, false)) return NULL;   /* integers: the sums are integer, cos the default dtype */
    int64_t td = target->ndim;
    tn_scope_begin();
    /* PyTorch's: cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12)) */
    tn_tensor *prod = tn_sum_dims(tn_mul(x1, x2), &td, 1);
    tn_tensor *m1 = tn_add_scalar(tn_sum_dims(tn_mul(x1, x1), &td, 1), 1e-12);
    tn_tensor *m2 = tn_add_scalar(tn_sum_dims(tn_mul(x2, x2), &td, 1), 1e-12);
    tn_tensor *cos = tn_div(prod, tn_sqrt(tn_mul(m1, m2)));
    tn_tensor *zeros = cos ? tn_zeros_like(cos) : NULL;
    tn_tensor *pos = tn_where(tn_eq_scalar(target, 1), tn_rsub_scalar(cos, 1), zeros);
    tn_tensor *neg = tn_where(tn_eq_scalar(target, -1), tn_clamp(tn_sub_scalar(cos, margin), .min = 0), zeros);
    return tn__loss_finish(tn__loss_reduce(tn_add(pos, neg), red), NULL);
}
TNDEF tn_tensor *tn_cosine_embedding_loss_opts(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, tn_margin_loss_fn_opts o) {
    return TN__AS("tn_cosine_embedding_loss", tn__cosine_embedding_impl(x1, x2, target, o.margin, (tn_reduction)o.reduction));
}
TNDEF tn_tensor *tn_cosine_embedding_loss_str(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_margin_loss_fn_opts, margin_loss, "tn_cosine_embedding_loss", options, tn_cosine_embedding_loss_opts(x1, x2, target, o));
}

static tn_tensor *tn__margin_ranking_impl(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction red) {
    const char *fn = "tn_margin_ranking_loss";
    TN__CHECK_NULL(x1, x2, target);
    if (tn__loss_check_reduction(fn, red, false)) return NULL;
    if (x1->ndim != x2->ndim || x1->ndim != target->ndim)
        return (tn_tensor *)tn__error("%s: x1, x2 and target should have the same number of dimensions, got x1 %s, x2 %s, target %s", fn,
                                      TN__SHAPE(x1), TN__SHAPE(x2), TN__SHAPE(target));
    tn_scope_begin();
    tn_tensor *l = tn_clamp(tn__add_float_scalar(tn_mul(tn_neg(target), tn_sub(x1, x2)), margin), .min = 0);
    return tn__loss_finish(red == TN_REDUCTION_NONE ? tn__grad_name(l, "ClampMinBackward0") : tn__loss_reduce(l, red), NULL);
}
TNDEF tn_tensor *tn_margin_ranking_loss_opts(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, tn_margin_loss_fn_opts o) {
    return TN__AS("tn_margin_ranking_loss", tn__margin_ranking_impl(x1, x2, target, o.margin, (tn_reduction)o.reduction));
}
TNDEF tn_tensor *tn_margin_ranking_loss_str(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, const char *options) {
    TN__KW_STR(tn_margin_loss_fn_opts, margin_loss, "tn_margin_ranking_loss", options, tn_margin_ranking_loss_opts(x1, x2, target, o));
}
