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
