/* ---- dropout ---- */
/* Dropout's mask in one pass on the CPU. From a Philox default generator: scale where element i's uniform double draw (tn_rand's:
   Philox counter off + i, u = (64 high bits >> 11) 2^-53) is below q, else 0 -- the values the
   draw, tn_lt_scalar, tn_to_dtype and tn_mul_scalar made in four passes. u < q is compared as
   integers: (bits >> 11) < ceil(q 2^53). The Philox rounds dominate: here in 64-bit variables,
   so that a loop over counters vectorises in 64-bit lanes without shuffles (the multiplies read
   the low halves; the junk xor leaves in the high halves is masked at the end; the same words
   as tn_philox4x32), and on x86 compiled for AVX-512 and AVX2 too, chosen at run time. */
/* @template TN__DROP_MASK(NAME, ATTR) */
ATTR static void NAME(float *of, double *od, int64_t i0, int64_t i1, uint64_t seed, uint64_t off, uint64_t thr, double s) {
    const uint64_t m32 = 0xFFFFFFFFu;
    const float sf = (float)s;
    for (int64_t i = i0; i < i1; i++) {
        const uint64_t ctr = off + (uint64_t)i;
        uint64_t c0 = ctr & m32, c1 = ctr >> 32, c2 = 0, c3 = 0, k0 = seed & m32, k1 = seed >> 32;
        for (int r = 0; r < 10; r++) {
            const uint64_t p0 = (uint64_t)0xD2511F53u * (uint32_t)c0, p1 = (uint64_t)0xCD9E8D57u * (uint32_t)c2;
            const uint64_t n0 = (p1 >> 32) ^ c1 ^ k0, n2 = (p0 >> 32) ^ c3 ^ k1;
            c1 = p1; c3 = p0; c0 = n0; c2 = n2;
            k0 = (k0 + 0x9E3779B9u) & m32; k1 = (k1 + 0xBB67AE85u) & m32;
        }
        const bool keep = ((((c0 & m32) << 32) | (c1 & m32)) >> 11) < thr;
        if (of) of[i] = keep ? sf : 0.0f;
        else od[i] = keep ? s : 0.0;
    }
}
/* @end TN__DROP_MASK */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__DROP_X86 1
#else
#define TN__DROP_X86 0
#endif
TN__DROP_MASK(tn__drop_mask_base, )
#if TN__DROP_X86
TN__DROP_MASK(tn__drop_mask_avx512, __attribute__((target("avx512f"))))
TN__DROP_MASK(tn__drop_mask_avx2, __attribute__((target("avx2"))))
#endif
/* Test knob: the widest copy run, 2 AVX-512 where the CPU has it (else AVX2), 1 at most AVX2, 0 the plain loop. */
TN__TESTABLE int tn__drop_wide = 2;
/* the arguments of a threaded Philox mask: the loop for this CPU, its outputs and counters */
typedef struct {
    void (*fn)(float *, double *, int64_t, int64_t, uint64_t, uint64_t, uint64_t, double);
    float *of; double *od; uint64_t seed, off, thr; double scale;
} tn__drop_args;
static void tn__drop_part(void *args, int64_t lo, int64_t hi) {
    const tn__drop_args *a = (const tn__drop_args *)args;
    a->fn(a->of, a->od, lo, hi, a->seed, a->off, a->thr, a->scale);
}
static tn_tensor *tn__drop_mask_cpu(const int64_t *shape, int nd, tn_dtype dtype, double p) {
    tn_tensor *m = tn__new(dtype, TN_CPU, shape, nd);
    if (!m) return NULL;
    const int64_t n = tn_numel(m);
    float *of = dtype == TN_F32 ? (float *)tn_data_ptr(m) : NULL;
    double *od = dtype == TN_F32 ? NULL : (double *)tn_data_ptr(m);
    const uint64_t thr = (uint64_t)ceil((1 - p) * 0x1.0p53);   /* u < 1 - p, u = k 2^-53: k < thr */
    if (tn__default_gen.kind == TN_GEN_MT19937) {
        /* PyTorch's CPU dropout: noise.bernoulli_(1 - p) (a uniform double: random64()'s low
           53 bits) and noise.div_(1 - p) in the input's dtype, serially from mt19937 */
        const float sf = 1.0f / (float)(1 - p);
        const double sd = 1.0 / (1 - p);
        tn_generator *g = &tn__default_gen;
        tn__gen_lock(g);
        for (int64_t i = 0; i < n; i++) {
            const bool keep = (tn__mt64(g) & ((UINT64_C(1) << 53) - 1)) < thr;
            if (of) of[i] = keep ? sf : 0.0f;
            else od[i] = keep ? sd : 0.0;
        }
        tn__gen_unlock(g);
        return tn__own(m);
    }
    const uint64_t off = tn__gen_take(NULL, n), seed = tn__default_gen.seed;
    void (*fn)(float *, double *, int64_t, int64_t, uint64_t, uint64_t, uint64_t, double) = tn__drop_mask_base;
#if TN__DROP_X86
    __builtin_cpu_init();
    if (tn__drop_wide >= 2 && __builtin_cpu_supports("avx512f")) fn = tn__drop_mask_avx512;
    else if (tn__drop_wide >= 1 && __builtin_cpu_supports("avx2")) fn = tn__drop_mask_avx2;
#endif
    tn__drop_args a = {fn, of, od, seed, off, thr, 1 / (1 - p)};
    tn__parallel_range(tn__par_threads(tn__mul_sat(n, 16), n), n, tn__drop_part, &a);   /* a draw costs about 16 simple ops */
    return tn__own(m);
}
/* channels: 0 elementwise, 2 dropout2d's channels (3-d [N, C, L] or 4-d input), 3 dropout3d's
   (5-d, or an unbatched 4-d [C, D, H, W]). */
static tn_tensor *tn__dropout(const char *fn, tn_tensor *x, double p, bool training, int channels) {
    TN__CHECK_NULL(x);
    if (!(p >= 0 && p <= 1)) return (tn_tensor *)tn__error("%s: dropout probability has to be between 0 and 1, but got %g", fn, p);
    if (!training || p == 0) return tn__own(tn_retain(x));   /* the input itself, as PyTorch */
    if (tn__nn_check(fn, x, "input")) return NULL;
    int64_t shape[TN_MAX_DIMS];
    int nd = x->ndim;
    memcpy(shape, x->shape, (size_t)nd * sizeof(int64_t));
    if (channels == 2) {
        if (nd != 3 && nd != 4) return (tn_tensor *)tn__error("%s: expected 3-d [N, C, L] or 4-d [N, C, H, W] input, got %s", fn, TN__SHAPE(x));
        for (int d = 2; d < nd; d++) shape[d] = 1;   /* PyTorch 1.13's feature_dropout: one draw per (dim 0, dim 1) */
    } else if (channels == 3) {
        if (nd != 4 && nd != 5) return (tn_tensor *)tn__error("%s: expected 4-d [C, D, H, W] or 5-d [N, C, D, H, W] input, got %s", fn, TN__SHAPE(x));
        for (int d = nd - 3; d < nd; d++) shape[d] = 1;   /* one draw per channel (of each sample) */
    }
    tn_scope_begin();
    /* bernoulli_p's draws, made where x lives: the same mask for the same seed on every device */
    tn_tensor *mask = p == 1 ? tn__own(tn__full_on(shape, nd, 0, x->dtype, x->device))
                    : x->device == TN_CPU && (x->dtype == TN_F32 || x->dtype == TN_F64) ? tn__drop_mask_cpu(shape, nd, x->dtype, p)
                    : tn_mul_scalar(tn_to_dtype(tn_lt_scalar(tn__random("tn_dropout", UNIFORM, shape, nd, TN_F64, NULL, 0, 1, 0, 0, x->device), 1 - p),
                                                x->dtype), 1 / (1 - p));
    return tn__scope_return(tn_mul(x, mask));   /* MulBackward0, as PyTorch 1.13 on CPU */
}
TNDEF tn_tensor *tn_dropout_opts(tn_tensor *x, tn_dropout_fn_opts o) { return TN__AS("tn_dropout", tn__dropout("tn_dropout", x, o.p, o.training, 0)); }
TNDEF tn_tensor *tn_dropout2d_opts(tn_tensor *x, tn_dropout_fn_opts o) { return TN__AS("tn_dropout2d", tn__dropout("tn_dropout2d", x, o.p, o.training, 2)); }
TNDEF tn_tensor *tn_dropout3d_opts(tn_tensor *x, tn_dropout_fn_opts o) { return TN__AS("tn_dropout3d", tn__dropout("tn_dropout3d", x, o.p, o.training, 3)); }
TNDEF tn_tensor *tn_dropout_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_dropout_fn_opts, dropout_fn, "tn_dropout", options, tn_dropout_opts(x, o)); }
TNDEF tn_tensor *tn_dropout2d_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_dropout_fn_opts, dropout_fn, "tn_dropout2d", options, tn_dropout2d_opts(x, o)); }
TNDEF tn_tensor *tn_dropout3d_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_dropout_fn_opts, dropout_fn, "tn_dropout3d", options, tn_dropout3d_opts(x, o)); }
