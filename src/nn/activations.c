/* ---- activations beyond functional.c's: shrinks, softsign, log-sigmoid, threshold, GLU,
   softmin, PReLU, RReLU ----
   Composites of differentiable ops (gradients of any order, and the GPU through the
   elementwise kernels), their results' nodes named as PyTorch's. */
static int tn__act_input(const char *fn, tn_tensor *x) {
    if (!tn_dtype_is_floating(x->dtype))
        return TN__FAIL_INT("%s: expected a floating point input, got %s (input %s)", fn, tn_dtype_name(x->dtype), TN__SHAPE(x));
    return 0;
}
static tn_tensor *tn__shrink_impl(const char *fn, tn_tensor *x, double lambd, bool soft) {
    TN__CHECK_NULL(x);
    if (tn__act_input(fn, x)) return NULL;
    if (soft && !(lambd >= 0)) return (tn_tensor *)tn__error("%s: lambda must be greater or equal to 0, but found to be %g.", fn, lambd);
    tn_scope_begin();
    tn_tensor *y;
    if (soft) y = tn_sub(x, tn_clamp(x, .min = -lambd, .max = lambd));   /* x - lambd, x + lambd or 0; NaN - NaN keeps NaN */
    else y = tn_where(tn_le_scalar(tn_abs(x), lambd), tn_zeros(NULL, 0, x->dtype), x);   /* NaN: not <=, kept */
    return tn__scope_return(tn__grad_name(y, soft ? "SoftshrinkBackward0" : "HardshrinkBackward0"));
}
TNDEF tn_tensor *tn_hardshrink_opts(tn_tensor *x, tn_shrink_fn_opts o) { return TN__AS("tn_hardshrink", tn__shrink_impl("tn_hardshrink", x, o.lambd, false)); }
TNDEF tn_tensor *tn_hardshrink_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_shrink_fn_opts, shrink, "tn_hardshrink", options, tn_hardshrink_opts(x, o));
}
TNDEF tn_tensor *tn_softshrink_opts(tn_tensor *x, tn_shrink_fn_opts o) { return TN__AS("tn_softshrink", tn__shrink_impl("tn_softshrink", x, o.lambd, true)); }
TNDEF tn_tensor *tn_softshrink_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_shrink_fn_opts, shrink, "tn_softshrink", options, tn_softshrink_opts(x, o));
}
static tn_tensor *tn__tanhshrink_impl(tn_tensor *x) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    return tn__scope_return(tn_sub(x, tn_tanh(x)));   /* SubBackward0, as PyTorch's Python composite */
}
TNDEF tn_tensor *tn_tanhshrink(tn_tensor *x) { return TN__AS("tn_tanhshrink", tn__tanhshrink_impl(x)); }
static tn_tensor *tn__softsign_impl(tn_tensor *x) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    return tn__scope_return(tn_div(x, tn_add_scalar(tn_abs(x), 1)));   /* DivBackward0, as PyTorch */
}
TNDEF tn_tensor *tn_softsign(tn_tensor *x) { return TN__AS("tn_softsign", tn__softsign_impl(x)); }
static tn_tensor *tn__logsigmoid_impl(tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (tn__act_input("tn_logsigmoid", x)) return NULL;
    tn_scope_begin();
    /* -softplus(-x) = min(x, 0) - log1p(exp(-|x|)): no overflow on either side */
    tn_tensor *y = tn_sub(tn_clamp(x, .max = 0), tn_log1p(tn_exp(tn_neg(tn_abs(x)))));
    return tn__scope_return(tn__grad_name_over(y, "LogSigmoidBackward0", &x, 1));
}
TNDEF tn_tensor *tn_logsigmoid(tn_tensor *x) { return TN__AS("tn_logsigmoid", tn__logsigmoid_impl(x)); }
static tn_tensor *tn__threshold_impl(tn_tensor *x, double threshold, double value) {
    TN__CHECK_NULL(x);
    if (x->dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_threshold: \"threshold_cpu\" not implemented for 'Bool' (input %s)", TN__SHAPE(x));
    tn_scope_begin();
    /* x <= threshold ? value : x, as PyTorch (NaN is kept); integer inputs stay integral */
    tn_tensor *v = tn_full(NULL, 0, value, x->dtype);
    tn_tensor *y = tn_where(tn_le_scalar(x, threshold), tn_to(v, x->device), x);
    return tn__scope_return(tn__grad_name(y, "ThresholdBackward0"));
}
TNDEF tn_tensor *tn_threshold(tn_tensor *x, double threshold, double value) { return TN__AS("tn_threshold", tn__threshold_impl(x, threshold, value)); }
static tn_tensor *tn__glu_impl(tn_tensor *x, int64_t dim) {
    const char *fn = "tn_glu";
    TN__CHECK_NULL(x);
    if (x->ndim == 0) return (tn_tensor *)tn__error("%s: glu does not support scalars because halving size must be even", fn);
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0 || tn__act_input(fn, x)) return NULL;
    if (x->shape[d] % 2)
        return (tn_tensor *)tn__error("%s: Halving dimension must be even, but dimension %d is size %lld (input %s)", fn, d, (long long)x->shape[d], TN__SHAPE(x));
    const int64_t h = x->shape[d] / 2;
    tn_scope_begin();
    tn_tensor *y = tn_mul(tn_narrow(x, d, 0, h), tn_sigmoid(tn_narrow(x, d, h, h)));
    return tn__scope_return(tn__grad_name(y, "GluBackward0"));
}
TNDEF tn_tensor *tn_glu_opts(tn_tensor *x, tn_glu_fn_opts o) { return TN__AS("tn_glu", tn__glu_impl(x, o.dim)); }
TNDEF tn_tensor *tn_glu_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_glu_fn_opts, glu, "tn_glu", options, tn_glu_opts(x, o)); }
static tn_tensor *tn__softmin_impl(tn_tensor *x, int64_t dim) {
    TN__CHECK_NULL(x);
    if (dim == TN_NONE) dim = x->ndim == 0 || x->ndim == 1 || x->ndim == 3 ? 0 : 1;   /* F._get_softmax_dim */
    if (tn__wrap_dim("tn_softmin", dim, x->ndim) < 0) return NULL;
    tn_scope_begin();
    return tn__scope_return(tn_softmax(tn_neg(x), dim));
}
TNDEF tn_tensor *tn_softmin_opts(tn_tensor *x, tn_softmin_fn_opts o) { return TN__AS("tn_softmin", tn__softmin_impl(x, o.dim)); }
TNDEF tn_tensor *tn_softmin_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_softmin_fn_opts, softmin, "tn_softmin", options, tn_softmin_opts(x, o)); }
static tn_tensor *tn__prelu_impl(tn_tensor *x, tn_tensor *w) {
    const char *fn = "tn_prelu";
    TN__CHECK_NULL(x); TN__CHECK_NULL(w);
    if (tn__act_input(fn, x) || tn__nn_same(fn, x, w, "weight")) return NULL;
    const int64_t C = x->ndim >= 2 ? x->shape[1] : 1, n = tn_numel(w);
    if (w->ndim > 1) return (tn_tensor *)tn__error("%s: weight must be a scalar or 1-d, got %s", fn, TN__SHAPE(w));
    if (n != 1 && n != C)
        return (tn_tensor *)tn__error("%s: Mismatch of parameter numbers and input channel size. Found parameter numbers = %lld and channel size = %lld.", fn, (long long)n, (long long)C);
    tn_scope_begin();
    tn_tensor *wb = n == 1 || x->ndim < 2 ? tn_reshape(w, NULL, 0) : tn__per_channel(w, x->ndim);
    tn_tensor *y = tn_where(tn_gt_scalar(x, 0), x, tn_mul(wb, x));
    return tn__scope_return(tn__grad_name(y, "PreluBackward0"));
}
TNDEF tn_tensor *tn_prelu(tn_tensor *x, tn_tensor *weight) {
    TN__AUTOCAST(TN__AC_LOWER, tn_prelu(ac_[0], ac_[1]), x, weight);   /* PyTorch 2's CPU list (1.13: float32) */
    return TN__AS("tn_prelu", tn__prelu_impl(x, weight));
}
TN__NO_CONTRACT_BEGIN   /* the noise's uniform * (hi - lo) + lo: two roundings, as torch's */
static tn_tensor *tn__rrelu_impl(tn_tensor *x, double lower, double upper, bool training) {
    const char *fn = "tn_rrelu";
    TN__CHECK_NULL(x);
    if (tn__act_input(fn, x)) return NULL;
    if (!(lower <= upper)) return (tn_tensor *)tn__error("%s: Lower bound should be less than or equal to the upper bound (lower %g, upper %g)", fn, lower, upper);
    if (!training) return TN__AS(fn, tn__grad_name(tn_leaky_relu(x, .negative_slope = (lower + upper) / 2), "RreluWithNoiseBackward0"));
    tn_scope_begin();
    /* the noise PyTorch saves: a U(lower, upper) slope where x <= 0, 1 elsewhere; y = x * noise */
    tn_tensor *noise;
    if (x->device == TN_CPU && tn_default_generator()->kind == TN_GEN_MT19937) {
        /* PyTorch's CPU loop: over x's elements in order, a uniform double only where x <= 0 (a
           NaN draws none), lower and upper first rounded to x's dtype */
        tn_tensor *xc = tn_contiguous(tn_to_dtype(tn_detach(x), TN_F64));
        noise = xc ? tn_empty(x->shape, x->ndim, TN_F64) : NULL;
        if (!noise) return tn__scope_return(NULL);
        const double lo = x->dtype == TN_F64 ? lower : (double)(float)lower, hi = x->dtype == TN_F64 ? upper : (double)(float)upper;
        const double *xv = (const double *)tn_data_ptr(xc);
        double *nv = (double *)tn_data_ptr(noise);
        for (int64_t i = 0; i < tn_numel(noise); i++) nv[i] = xv[i] <= 0 ? tn_generator_uniform(NULL) * (hi - lo) + lo : 1;
        noise = tn_to_dtype(noise, x->dtype);
    } else {
        tn_tensor *slopes = tn_to(tn_uniform(lower, upper, x->shape, x->ndim, x->dtype, NULL), x->device);
        noise = tn_where(tn_gt_scalar(tn_detach(x), 0), tn_ones_like(slopes), slopes);
    }
    return tn__scope_return(tn__grad_name(tn_mul(x, noise), "RreluWithNoiseBackward0"));
}
TN__NO_CONTRACT_END
TNDEF tn_tensor *tn_rrelu_opts(tn_tensor *x, tn_rrelu_fn_opts o) { return TN__AS("tn_rrelu", tn__rrelu_impl(x, o.lower, o.upper, o.training)); }
TNDEF tn_tensor *tn_rrelu_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_rrelu_fn_opts, rrelu, "tn_rrelu", options, tn_rrelu_opts(x, o)); }
