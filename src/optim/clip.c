/* ---- gradient clipping: torch.nn.utils ---- */
static tn_tensor *tn__clip_total_norm(tn_tensor *const *grads, int n, double norm_type) {
    tn_tensor **norms = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *norms);
    if (!norms) return (tn_tensor *)tn__error("out of memory");
    for (int i = 0; i < n; i++) norms[i] = tn_norm(grads[i], .p = norm_type);
    tn_tensor *total = tn_norm(tn_stack(norms, n), .p = norm_type);
    TN_FREE(norms);
    return total;
}
/* clip_grad_norm_'s common case in one pass: float32 or float64 gradients, contiguous, on
   the CPU, all one dtype, the 2-norm. The squares are summed in double over fixed blocks of
   the gradients laid end to end (the blocks' sums added in order: the same bits for any
   thread count); the total rounded to the gradients' dtype, as torch's; the coefficient
   max_norm / (total + 1e-6) in that dtype, and when below 1 a second pass scales every
   gradient (torch multiplies by the clamped 1 too: the same values). */
#define TN__CLIP_BLOCK 65536
typedef struct { tn_tensor **g; int n; const int64_t *end; double *part; double coef; bool f64; } tn__clip_args;
/* the gradient element range [lo, hi) of the concatenation, gradient by gradient */
#define TN__CLIP_WALK(a, lo, hi, BODY) \
    for (int i_ = 0; i_ < (a)->n; i_++) { \
        const int64_t b_ = i_ ? (a)->end[i_ - 1] : 0, e_ = (a)->end[i_]; \
        const int64_t s_ = (lo) > b_ ? (lo) : b_, t_ = (hi) < e_ ? (hi) : e_; \
        if (s_ >= t_) continue; \
        char *p_ = (char *)tn_data_ptr((a)->g[i_]); \
        const int64_t k0 = s_ - b_, k1 = t_ - b_; \
        BODY \
    }
static void tn__clip_sq_blocks(void *args, int64_t b0, int64_t b1) {
    tn__clip_args *a = (tn__clip_args *)args;
    for (int64_t b = b0; b < b1; b++) {
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};   /* 8 lanes (they vectorise), added last */
        TN__CLIP_WALK(a, b * TN__CLIP_BLOCK, (b + 1) * TN__CLIP_BLOCK, {
            int64_t k = k0;
            if (a->f64) {
                const double *x = (const double *)p_;
                for (; k + 8 <= k1; k += 8) for (int l = 0; l < 8; l++) acc[l] += x[k + l] * x[k + l];
                for (; k < k1; k++) acc[k & 7] += x[k] * x[k];
            } else {
                const float *x = (const float *)p_;
                for (; k + 8 <= k1; k += 8) for (int l = 0; l < 8; l++) acc[l] += (double)x[k + l] * (double)x[k + l];
                for (; k < k1; k++) acc[k & 7] += (double)x[k] * (double)x[k];
            }
        })
        a->part[b] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
}
static void tn__clip_scale(void *args, int64_t lo, int64_t hi) {
    tn__clip_args *a = (tn__clip_args *)args;
    TN__CLIP_WALK(a, lo, hi, {
        if (a->f64) { double *x = (double *)p_; const double c = a->coef; for (int64_t k = k0; k < k1; k++) x[k] *= c; }
        else { float *x = (float *)p_; const float c = (float)a->coef; for (int64_t k = k0; k < k1; k++) x[k] *= c; }
    })
}
#undef TN__CLIP_WALK
/* 1: not this case (the composite runs); 0 with *result; -1 on failure */
static int tn__clip_fused(tn_tensor **grads, int n, double max_norm, double norm_type, double *result) {
    if (norm_type != 2 || n < 1) return 1;
    const tn_dtype dt = grads[0]->dtype;
    for (int i = 0; i < n; i++)
        if (grads[i]->device != TN_CPU || grads[i]->dtype != dt || (dt != TN_F32 && dt != TN_F64) || !tn_is_contiguous(grads[i])) return 1;
    int64_t *end = (int64_t *)tn__malloc_n("tn_clip_grad_norm_", n, sizeof(int64_t)), total_n = 0;
    if (!end) return -1;
    for (int i = 0; i < n; i++) end[i] = total_n = tn__add_sat(total_n, tn_numel(grads[i]));
    const int64_t nblk = (total_n + TN__CLIP_BLOCK - 1) / TN__CLIP_BLOCK;
    double *part = (double *)tn__malloc_n("tn_clip_grad_norm_", nblk > 0 ? nblk : 1, sizeof(double));
    if (!part) { TN_FREE(end); return -1; }
    tn__clip_args a = {grads, n, end, part, 1.0, dt == TN_F64};
    tn__parallel_range(tn__par_threads(tn__mul_sat(total_n, 2), nblk), nblk, tn__clip_sq_blocks, &a);
    double sq = 0;
    for (int64_t b = 0; b < nblk; b++) sq += part[b];
    double total = sqrt(sq);
    if (dt == TN_F32) {
        const float tf = (float)total, coef = (float)max_norm / (tf + (float)1e-6);
        total = tf;
        a.coef = coef;
    } else
        a.coef = max_norm / (total + 1e-6);
    if (a.coef < 1 || a.coef != a.coef)   /* clamped to 1: the gradients stay as they are */
        tn__parallel_range(tn__par_threads(total_n, total_n), total_n, tn__clip_scale, &a);
    for (int i = 0; i < n; i++) tn__bump_version(grads[i]);
    TN_FREE(part);
    TN_FREE(end);
    *result = total;
    return 0;
}
#undef TN__CLIP_BLOCK
TNDEF double tn_clip_grad_norm__opts(tn_tensor *const *params, int n, double max_norm, tn_clip_grad_norm_fn_opts o) {
    const char *fn = "tn_clip_grad_norm_";
    const double norm_type = o.norm_type;   /* o.foreach only picks PyTorch's kernels: nothing here */
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
    /* error_if_nonfinite needs the norm before any grad is scaled: the unfused path */
    const int fused = o.error_if_nonfinite ? 1 : tn__clip_fused(grads, ng, max_norm, norm_type, &result);
    if (fused <= 0) {   /* done in one pass (or out of memory, recorded) */
        TN_FREE(grads);
        return fused < 0 ? NAN : result;
    }
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *total = TN__AS(fn, tn__clip_total_norm(grads, ng, norm_type));
    if (total && o.error_if_nonfinite && !isfinite(tn_item(total))) {
        tn__error("%s: The total norm of order %g for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this "
                  "error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`", fn, norm_type);
        total = NULL;
    }
    if (total) {
        /* clip_coef = max_norm / (total_norm + 1e-6), clamped to 1, in the norm's dtype */
        tn_tensor *denom = tn_add_scalar(total, 1e-6);
        tn_tensor *coef = TN__AS(fn, tn_clamp(tn_div(tn_full_like(denom, max_norm), denom), .max = 1.0));
        bool ok = coef != NULL;
        for (int i = 0; ok && i < ng; i++) ok = TN__AS(fn, tn_mul_(grads[i], coef)) != NULL;
        if (ok) result = tn_item(total);
    }
    tn_scope_end();
    tn_no_grad_end();
    TN_FREE(grads);
    return result;
}
TNDEF double tn_clip_grad_norm__str(tn_tensor *const *params, int n, double max_norm, const char *options) {
    TN__KW_STR_NAN(tn_clip_grad_norm_fn_opts, clip_grad_norm, "tn_clip_grad_norm_", options, tn_clip_grad_norm__opts(params, n, max_norm, o));
}
TNDEF int tn_clip_grad_value_(tn_tensor *const *params, int n, double clip_value) {
    const char *fn = "tn_clip_grad_value_";
    if (n < 0 || (n > 0 && !params)) return TN__FAIL_INT("%s: need an array of %d parameters", fn, n);
    for (int i = 0; i < n; i++) if (!params[i]) return -1;
    int rc = 0;
    tn_no_grad_begin();
    tn_scope_begin();
    for (int i = 0; i < n && rc == 0; i++)
        if (params[i]->grad && !TN__AS(fn, tn_clamp_(params[i]->grad, .min = -clip_value, .max = clip_value))) rc = -1;
    tn_scope_end();
    tn_no_grad_end();
    return rc;
}
