/* ---- RNG ---- */
static tn_generator tn__default_gen = {0x853c49e6748fea9bULL, 0};
TNDEF tn_generator *tn_default_generator(void) { return &tn__default_gen; }
TNDEF void tn_manual_seed(uint64_t seed) { tn__default_gen.seed = seed; tn__default_gen.offset = 0; }
TNDEF tn_generator *tn_generator_new(uint64_t seed) {
    tn_generator *g = (tn_generator *)TN_MALLOC(sizeof *g);
    if (!g) return (tn_generator *)tn__error("tn_generator_new: out of memory");
    g->seed = seed;
    g->offset = 0;
    return g;
}
TNDEF void tn_generator_free(tn_generator *g) { TN_FREE(g); }

/* Reserve n counters of a generator (atomically, so threads get disjoint draws). */
static uint64_t tn__gen_take(tn_generator *g, int64_t n) {
    if (!g) g = &tn__default_gen;
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_fetch_add(&g->offset, (uint64_t)n, __ATOMIC_ACQ_REL);
#else
    uint64_t o = g->offset; g->offset += (uint64_t)n; return o;
#endif
}

static tn_tensor *tn__random(const char *fn, tn_random_op op, const int64_t *shape, int ndim, tn_dtype dtype,
                             tn_generator *gen, double a, double b, int64_t low, uint64_t range, tn_device device) {
    if (tn__check_cpu_dtype_arg(fn, dtype)) return NULL;
    if (op != RANDINT && !tn_dtype_is_floating(dtype))
        return (tn_tensor *)tn__error("%s: expected a floating dtype, got %s", fn, tn_dtype_name(dtype));
    tn_tensor *t = device == TN_CPU ? tn__new_checked(fn, shape, ndim, dtype)
                 : tn__check_shape(fn, shape, ndim) ? NULL : TN__AS(fn, tn__new(dtype, device, shape, ndim));
    if (!t) return NULL;
    uint64_t off = tn__gen_take(gen, tn_numel(t));
    if (tn__backend(t->device)->random(op, t, (gen ? gen : &tn__default_gen)->seed, off, a, b, low, range)) { tn_release(t); return NULL; }
    return tn__own(t);
}

TNDEF tn_tensor *tn_rand(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__random("tn_rand", UNIFORM, shape, ndim, dtype, NULL, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_randn(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__random("tn_randn", NORMAL, shape, ndim, dtype, NULL, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_rand_gen(const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) { return tn__random("tn_rand_gen", UNIFORM, shape, ndim, dtype, g, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_randn_gen(const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) { return tn__random("tn_randn_gen", NORMAL, shape, ndim, dtype, g, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_normal(double mean, double std, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (!(std >= 0)) return (tn_tensor *)tn__error("tn_normal: std must be >= 0, got %g", std);
    return tn__random("tn_normal", NORMAL, shape, ndim, dtype, g, mean, std, 0, 0, TN_CPU);
}
TNDEF tn_tensor *tn_uniform(double low, double high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (!(low <= high)) return (tn_tensor *)tn__error("tn_uniform: expected low <= high, got %g > %g", low, high);
    return tn__random("tn_uniform", UNIFORM, shape, ndim, dtype, g, low, high, 0, 0, TN_CPU);
}
TNDEF tn_tensor *tn_randint(int64_t low, int64_t high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (low >= high) return (tn_tensor *)tn__error("tn_randint: expected low < high, got low %lld, high %lld", (long long)low, (long long)high);
    if (dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_randint: dtype bool is not supported");
    double dmin = dtype == TN_U8 ? 0 : dtype == TN_I32 ? INT32_MIN : dtype == TN_F32 ? -16777216.0 : dtype == TN_F64 ? -9007199254740992.0 : -9.3e18;
    double dmax = dtype == TN_U8 ? 256 : dtype == TN_I32 ? 2147483648.0 : dtype == TN_F32 ? 16777217.0 : dtype == TN_F64 ? 9007199254740993.0 : 9.3e18;
    if ((double)low < dmin || (double)high > dmax)
        return (tn_tensor *)tn__error("tn_randint: range [%lld, %lld) is out of bounds for dtype %s", (long long)low, (long long)high, tn_dtype_name(dtype));
    return tn__random("tn_randint", RANDINT, shape, ndim, dtype, g, (double)low, (double)high, low, (uint64_t)high - (uint64_t)low, TN_CPU);
}
TNDEF tn_tensor *tn_rand_like(tn_tensor *t) { TN__CHECK_NULL(t); return tn__random("tn_rand_like", UNIFORM, t->shape, t->ndim, t->dtype, NULL, 0, 1, 0, 0, t->device); }
TNDEF tn_tensor *tn_randn_like(tn_tensor *t) { TN__CHECK_NULL(t); return tn__random("tn_randn_like", NORMAL, t->shape, t->ndim, t->dtype, NULL, 0, 1, 0, 0, t->device); }

static tn_tensor *tn__bernoulli_impl(tn_tensor *p, tn_generator *gen) {
    TN__CHECK_NULL(p);
    if (tn__check_cpu_dtype("tn_bernoulli", p)) return NULL;
    if (!tn_dtype_is_floating(p->dtype)) return (tn_tensor *)tn__error("tn_bernoulli: expected a floating probability tensor, got %s", tn_dtype_name(p->dtype));
    tn_scope_begin();
    double lo = tn_numel(p) ? tn_item(tn_amin(p, NULL, 0, false)) : 0, hi = tn_numel(p) ? tn_item(tn_amax(p, NULL, 0, false)) : 0;
    if (!(lo >= 0 && hi <= 1)) {
        tn_scope_end();
        return (tn_tensor *)tn__error("tn_bernoulli: expected 0 <= p <= 1 for every element of p (shape %s), got values from %g to %g", TN__SHAPE(p), lo, hi);
    }
    tn_tensor *u = tn__random("tn_bernoulli", UNIFORM, p->shape, p->ndim, TN_F64, gen, 0, 1, 0, 0, p->device);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_lt(u, p), p->dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bernoulli(tn_tensor *p, tn_generator *gen) { return TN__AS("tn_bernoulli", tn__bernoulli_impl(p, gen)); }
static tn_tensor *tn__bernoulli_p_impl(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen) {
    if (!(p >= 0 && p <= 1)) return (tn_tensor *)tn__error("tn_bernoulli_p: p must be in [0, 1], got %g", p);
    tn_scope_begin();
    tn_tensor *u = tn_rand_gen(shape, ndim, TN_F64, gen);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_lt_scalar(u, p), dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bernoulli_p(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen) { return TN__AS("tn_bernoulli_p", tn__bernoulli_p_impl(shape, ndim, p, dtype, gen)); }
/* A permutation as the argsort of uniform keys: the same on every device. */
static tn_tensor *tn__randperm_impl(int64_t n, tn_dtype dtype, tn_generator *gen) {
    if (n < 0) return (tn_tensor *)tn__error("tn_randperm: n must be non-negative, got %lld", (long long)n);
    if (tn__check_dtype_arg("tn_randperm", dtype)) return NULL;
    if (dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_randperm: \"randperm\" not implemented for 'Bool'");
    /* as PyTorch: the largest value n - 1 must fit an integer dtype, and n values must stay
       distinct in a float one (its mantissa bits + 1) */
    if ((dtype == TN_U8 && n > 256) || (dtype == TN_I32 && n - 1 > INT32_MAX))
        return (tn_tensor *)tn__error("tn_randperm: n = %lld: value cannot be converted to type %s_t without overflow", (long long)n, tn_dtype_name(dtype));
    int digits = dtype == TN_F32 ? 24 : dtype == TN_F64 ? 53 : dtype == TN_F16 ? 11 : 0;
    if (digits && n > ((int64_t)1 << digits) + 1)
        return (tn_tensor *)tn__error("tn_randperm: n = %lld: n cannot be greater than 2^%d+1 for %s type", (long long)n, digits, tn__torch_type_name(dtype));
    tn_scope_begin();
    tn_tensor *keys = tn_rand_gen(&n, 1, TN_F64, gen);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_argsort(keys, 0, false), dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_randperm(int64_t n, tn_dtype dtype, tn_generator *gen) { return TN__AS("tn_randperm", tn__randperm_impl(n, dtype, gen)); }

/* multinomial as PyTorch: without replacement (or for one sample) the categories' race
   p / E, E ~ Exp(1) (the largest num_samples win: each a draw without replacement in
   proportion to p); with replacement inverse-CDF draws: the first category whose
   cumulative probability exceeds a uniform. */
static tn_tensor *tn__multinomial_impl(tn_tensor *p, int64_t ns, bool replacement, tn_generator *gen) {
    const char *fn = "tn_multinomial";
    TN__CHECK_NULL(p);
    if (tn__check_cpu_dtype(fn, p)) return NULL;
    if (!tn_dtype_is_floating(p->dtype)) return (tn_tensor *)tn__error("%s: multinomial only supports floating-point dtypes for input, got: %s", fn, tn_dtype_name(p->dtype));
    if (p->ndim != 1 && p->ndim != 2) return (tn_tensor *)tn__error("%s: prob_dist must be 1 or 2 dim, got shape %s", fn, TN__SHAPE(p));
    const int64_t C = p->shape[p->ndim - 1], R = p->ndim == 2 ? p->shape[0] : 1;
    if (C > ((int64_t)1 << 24)) return (tn_tensor *)tn__error("%s: number of categories cannot exceed 2^24 (got %lld)", fn, (long long)C);
    if (ns <= 0) return (tn_tensor *)tn__error("%s: cannot sample n_sample <= 0 samples (got %lld)", fn, (long long)ns);
    if (!replacement && ns > C)
        return (tn_tensor *)tn__error("%s: cannot sample n_sample > prob_dist.size(-1) samples without replacement (%lld > %lld)", fn, (long long)ns, (long long)C);
    int64_t oshape[2] = {R, ns};
    if (R == 0) return tn__own(tn__new(TN_I64, p->device, p->ndim == 2 ? oshape : oshape + 1, p->ndim));
    if (C == 0) return (tn_tensor *)tn__error("%s: invalid multinomial distribution (sum of probabilities <= 0): no categories", fn);
    tn_scope_begin();
    int64_t last = -1, rc2[2] = {R, C};
    tn_tensor *pd = tn_reshape(tn_detach(p), rc2, 2), *r = NULL;
    tn_tensor *lo = tn_amin(pd, NULL, 0, false), *hi = lo ? tn_amax(pd, NULL, 0, false) : NULL;   /* NaN propagates into hi */
    tn_tensor *sums = hi ? tn_sum_dims(pd, &last, 1, true) : NULL;
    bool ok = sums != NULL;
    if (ok && !(tn_item(lo) >= 0 && tn_item(hi) < INFINITY)) ok = (tn__error("%s: probability tensor contains either `inf`, `nan` or element < 0", fn), false);
    if (ok && tn_item(tn_any(tn_eq_scalar(sums, 0)))) ok = (tn__error("%s: invalid multinomial distribution (sum of probabilities <= 0)", fn), false);
    if (ok && (!replacement || ns == 1)) {
        tn_tensor *u = tn__random(fn, UNIFORM, rc2, 2, p->dtype, gen, 0, 1, 0, 0, p->device);
        tn_tensor *q = tn_div(pd, tn_neg(tn_log(u)));   /* u = 0: E = inf, q = 0 (probability 2^-53, or 2^-24 for float32) */
        if (ns == 1) r = tn_argmax_dim(q, -1, true);
        else tn_topk(q, ns, -1, true, &r);
    } else if (ok) {
        tn_tensor *cdf = tn_div(tn_cumsum(tn_to_dtype(pd, TN_F64), -1), tn_to_dtype(sums, TN_F64));
        tn_tensor *parts[2] = {cdf ? tn_narrow(cdf, -1, 0, C - 1) : NULL, cdf ? tn_ones_like(tn_narrow(cdf, -1, 0, 1)) : NULL};
        cdf = parts[1] ? tn_cat(parts, 2, -1) : NULL;   /* the last exactly 1 */
        tn_tensor *u = cdf ? tn__random(fn, UNIFORM, oshape, 2, TN_F64, gen, 0, 1, 0, 0, p->device) : NULL;
        tn_searchsorted_fn_opts so = TN_DEFAULTS(tn_searchsorted_fn_opts);
        so.right = true;   /* the first cumulative probability above u: a category of weight 0 is never drawn */
        r = u ? tn_clamp(tn_searchsorted_opts(cdf, u, so), 0, (double)(C - 1)) : NULL;
    }
    if (r && p->ndim == 1) r = tn_reshape(r, &ns, 1);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_multinomial(tn_tensor *probs, int64_t num_samples, bool replacement, tn_generator *gen) {
    return TN__AS("tn_multinomial", tn__multinomial_impl(probs, num_samples, replacement, gen));
}
