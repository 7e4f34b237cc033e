/* ---- CTC loss ----
   Per sample, the log-space forward (alpha) and backward (beta) recursions over the target
   with blanks interleaved (l' = blank, l1, blank, l2, ..., blank), as PyTorch's CPU kernel;
   the gradient table, exp(lp) - exp(log(sum of alpha beta over the positions of c) + nll -
   lp), is made with the loss when log_probs requires grad and scaled by the incoming
   gradient in the node's backward. */
static double tn__lse2(double a, double b) {
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}
/* One sample: lp [T][C] at stride ts between time steps, its target tg[0..L), input length
   Ti. The loss into *nll; with g (stride ts too, zeroed by the caller), the gradient. la, lb:
   scratch of Ti * (2L + 1) doubles each. */
static void tn__ctc_sample(const double *lp, int64_t ts, int64_t C, const int64_t *tg, int64_t L, int64_t Ti, int64_t blank, double *la, double *lb,
                           double *nll, double *g) {
    const int64_t S = 2 * L + 1;
#define TN__LBL(s) ((s) % 2 ? tg[(s) / 2] : blank)
    for (int64_t i = 0; i < Ti * S; i++) la[i] = lb[i] = -INFINITY;
    if (Ti == 0) { *nll = L == 0 ? 0 : INFINITY; return; }
    la[0] = lp[blank];
    if (L > 0) la[1] = lp[tg[0]];
    for (int64_t t = 1; t < Ti; t++)
        for (int64_t s = 0; s < S; s++) {
            const int64_t c = TN__LBL(s);
            double v = la[(t - 1) * S + s];
            if (s > 0) v = tn__lse2(v, la[(t - 1) * S + s - 1]);
            if (s > 1 && c != blank && c != TN__LBL(s - 2)) v = tn__lse2(v, la[(t - 1) * S + s - 2]);
            la[t * S + s] = v == -INFINITY ? v : v + lp[t * ts + c];
        }
    double ll = la[(Ti - 1) * S + S - 1];
    if (L > 0) ll = tn__lse2(ll, la[(Ti - 1) * S + S - 2]);
    *nll = -ll;
    if (!g) return;
    lb[(Ti - 1) * S + S - 1] = lp[(Ti - 1) * ts + blank];
    if (L > 0) lb[(Ti - 1) * S + S - 2] = lp[(Ti - 1) * ts + tg[L - 1]];
    for (int64_t t = Ti - 2; t >= 0; t--)
        for (int64_t s = 0; s < S; s++) {
            const int64_t c = TN__LBL(s);
            double v = lb[(t + 1) * S + s];
            if (s < S - 1) v = tn__lse2(v, lb[(t + 1) * S + s + 1]);
            if (s < S - 2 && c != blank && c != TN__LBL(s + 2)) v = tn__lse2(v, lb[(t + 1) * S + s + 2]);
            lb[t * S + s] = v == -INFINITY ? v : v + lp[t * ts + c];
        }
    for (int64_t t = 0; t < Ti; t++) {
        double *gt = g + t * ts;
        for (int64_t c = 0; c < C; c++) gt[c] = -INFINITY;   /* log(sum of alpha beta) per label first */
        for (int64_t s = 0; s < S; s++) {
            const int64_t c = TN__LBL(s);
            gt[c] = tn__lse2(gt[c], la[t * S + s] + lb[t * S + s]);
        }
        for (int64_t c = 0; c < C; c++) gt[c] = exp(lp[t * ts + c]) - exp(gt[c] + *nll - lp[t * ts + c]);
    }
#undef TN__LBL
}
static int tn__ctc_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *gt = tn_ctx_saved(n, 0);
    if (!gt) return -1;
    gin[0] = gt->ndim == 3 ? tn_mul(gt, tn_reshape(gy, TN_SHAPE(1, -1, 1))) : tn_mul(gt, gy);
    return gin[0] ? 0 : -1;
}
/* An int64 host copy of a lengths or targets tensor. */
static tn_tensor *tn__ctc_ints(const char *fn, tn_tensor *t, const char *what) {
    if (t->dtype != TN_I64 && t->dtype != TN_I32) return (tn_tensor *)tn__error("%s: %s must be int64 or int32, got %s", fn, what, tn_dtype_name(t->dtype));
    return tn_contiguous(tn_to_dtype(tn_to(t, TN_CPU), TN_I64));
}
static tn_tensor *tn__ctc_impl(tn_tensor *lp, tn_tensor *tg, tn_tensor *il, tn_tensor *tl, tn_loss_fn_opts o) {
    const char *fn = "tn_ctc_loss";
    TN__CHECK_NULL(lp, tg, il, tl);
    if (tn__loss_fn_args(fn, "ctc_loss", &o, "blank, reduction, zero_infinity")) return NULL;
    const int64_t blank = o.blank == TN_NONE ? 0 : o.blank;
    const bool zinf = tn__or_b(o.zero_infinity, false);
    if (lp->ndim != 3 && lp->ndim != 2) return (tn_tensor *)tn__error("%s: log_probs must be [T, N, C] or unbatched [T, C], got %s", fn, TN__SHAPE(lp));
    if (!tn_dtype_is_floating(lp->dtype) || lp->dtype == TN_F16 || lp->dtype == TN_BF16) return (tn_tensor *)tn__error("%s: log_probs must be float32 or float64, got %s", fn, tn_dtype_name(lp->dtype));
    const bool batched = lp->ndim == 3;
    const int64_t T = lp->shape[0], N = batched ? lp->shape[1] : 1, C = lp->shape[lp->ndim - 1];
    if (blank < 0 || blank >= C) return (tn_tensor *)tn__error("%s: blank must be in label range", fn);
    if (tn_numel(il) != N || il->ndim > 1 || (batched && il->ndim != 1)) return (tn_tensor *)tn__error("%s: input_lengths must be of size batch_size", fn);
    if (tn_numel(tl) != N || tl->ndim > 1 || (batched && tl->ndim != 1)) return (tn_tensor *)tn__error("%s: target_lengths must be of size batch_size", fn);
    if (tg->ndim != 1 && tg->ndim != 2) return (tn_tensor *)tn__error("%s: targets must be 1-d (concatenated) or 2-d [N, S], got %s", fn, TN__SHAPE(tg));
    if (tg->ndim == 2 && (!batched || tg->shape[0] != N)) return (tn_tensor *)tn__error("%s: targets %s must be [N, S] with N = %lld", fn, TN__SHAPE(tg), (long long)N);
    tn_scope_begin();
    tn_tensor *ilc = tn__ctc_ints(fn, il, "input_lengths"), *tlc = ilc ? tn__ctc_ints(fn, tl, "target_lengths") : NULL, *tgc = tlc ? tn__ctc_ints(fn, tg, "targets") : NULL;
    tn_tensor *lpc = tgc ? tn_contiguous(tn_to_dtype(tn_to(tn_detach(lp), TN_CPU), TN_F64)) : NULL;
    if (!lpc) { tn_scope_end(); return NULL; }
    const int64_t *ilp = (const int64_t *)tn_data_ptr(ilc), *tlp = (const int64_t *)tn_data_ptr(tlc), *tgp = (const int64_t *)tn_data_ptr(tgc);
    const int64_t S = tg->ndim == 2 ? tg->shape[1] : 0, total = tn_numel(tg);
    int64_t maxL = 0, sumL = 0, maxT = 0;
    for (int64_t b = 0; b < N; b++) {
        if (ilp[b] < 0 || ilp[b] > T) { tn_scope_end(); return (tn_tensor *)tn__error("%s: Expected input_lengths to have value at most %lld, but got value %lld (while checking arguments for ctc_loss_cpu)", fn, (long long)T, (long long)ilp[b]); }
        if (tlp[b] < 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: target_lengths must be non-negative, got %lld", fn, (long long)tlp[b]); }
        maxL = TN__MAX(maxL, tlp[b]); maxT = TN__MAX(maxT, ilp[b]);
        sumL += tlp[b];
    }
    if (tg->ndim == 2 && S < maxL) { tn_scope_end(); return (tn_tensor *)tn__error("%s: Expected tensor to have size at least %lld at dimension 1, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)", fn, (long long)maxL, (long long)S); }
    if (tg->ndim == 1 && sumL > total) { tn_scope_end(); return (tn_tensor *)tn__error("%s: targets hold %lld labels, fewer than the target lengths' sum %lld", fn, (long long)total, (long long)sumL); }
    for (int64_t i = 0; i < total; i++)
        if (tgp[i] < 0 || tgp[i] >= C) {
            /* padding past a target's length is never read; check what is */
            bool used = tg->ndim == 1 ? i < sumL : i % (S ? S : 1) < tlp[i / (S ? S : 1)];
            if (used) { tn_scope_end(); return (tn_tensor *)tn__error("%s: target label %lld is out of range for %lld classes", fn, (long long)tgp[i], (long long)C); }
        }
    const bool need_grad = tn_requires_grad(lp) && tn_is_grad_enabled();
    int64_t work;
    if (!tn__mul_ok(maxT, 2 * maxL + 1, &work) || !tn__mul_ok(work, 2, &work)) { tn_scope_end(); return (tn_tensor *)tn__error("%s: the recursion tables overflow", fn); }
    double *scratch = (double *)tn__malloc_n(fn, work ? work : 1, sizeof(double));
    tn_tensor *loss = scratch ? tn__own(tn__new(TN_F64, TN_CPU, TN_SHAPE(N))) : NULL, *gt = NULL;
    if (loss && need_grad && (gt = tn__own(tn__new(TN_F64, TN_CPU, TN_SHAPE(T, N, C))))) memset(tn_data_ptr(gt), 0, (size_t)tn_numel(gt) * sizeof(double));
    if (!loss || (need_grad && !gt)) { TN_FREE(scratch); tn_scope_end(); return NULL; }
    const double *lpp = (const double *)tn_data_ptr(lpc);
    double *lossp = (double *)tn_data_ptr(loss), *gp = gt ? (double *)tn_data_ptr(gt) : NULL;
    int64_t toff = 0;
    for (int64_t b = 0; b < N; b++) {
        const int64_t *tgt = tg->ndim == 2 ? tgp + b * S : tgp + toff;
        const int64_t half = ilp[b] * (2 * tlp[b] + 1);
        tn__ctc_sample(lpp + b * C, N * C, C, tgt, tlp[b], ilp[b], blank, scratch, scratch + half, &lossp[b], gp ? gp + b * C : NULL);
        toff += tlp[b];
        if (zinf && lossp[b] == INFINITY) {
            lossp[b] = 0;
            for (int64_t t = 0; gp && t < T; t++) memset(gp + (t * N + b) * C, 0, (size_t)C * sizeof(double));
        }
    }
    TN_FREE(scratch);
    tn_tensor *r = tn_to(tn_to_dtype(loss, lp->dtype), lp->device);
    if (r && need_grad) {
        tn_tensor *g = tn_to(tn_to_dtype(gt, lp->dtype), lp->device);
        if (!batched) g = tn_squeeze_dim(g, 1);
        r = tn_clone(r);   /* a tensor of its own for the node */
        tn_node *nd = r && g ? tn__fn_node("CtcLossBackward0", tn__ctc_bw, &lp, 1) : NULL;
        if (nd) tn__node_save(nd, g);
        r = tn__node_attach(nd, r);
    }
    if (!batched) r = tn_reshape(r, NULL, 0);
    if (o.reduction == TN_REDUCTION_MEAN) r = tn_mean(tn_div(r, tn_to(tn_to_dtype(tn_clamp(tlc, .min = 1), lp->dtype), lp->device)));
    else if (o.reduction == TN_REDUCTION_SUM) r = tn_sum(r);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_ctc_loss_opts(tn_tensor *log_probs, tn_tensor *targets, tn_tensor *input_lengths, tn_tensor *target_lengths, tn_loss_fn_opts o) {
    return TN__AS("tn_ctc_loss", tn__ctc_impl(log_probs, targets, input_lengths, target_lengths, o));
}
TNDEF tn_tensor *tn_ctc_loss_str(tn_tensor *log_probs, tn_tensor *targets, tn_tensor *input_lengths, tn_tensor *target_lengths, const char *options) {
    TN__KW_STR(tn_loss_fn_opts, loss_fn, "tn_ctc_loss", options, tn_ctc_loss_opts(log_probs, targets, input_lengths, target_lengths, o));
}
