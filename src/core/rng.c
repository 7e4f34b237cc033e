/* ---- RNG ----
   The CPU stream is PyTorch's CPUGeneratorImpl: mt19937 (at::mt19937: seeded from the seed's
   low 32 bits, PyTorch's left/next bookkeeping) and the transformations of ATen's
   TransformationHelper.h / DistributionsHelper.h and the CPU kernels of
   native/cpu/DistributionTemplates.h, element by element in order. A Philox generator (and
   every GPU draw) takes counters instead: see tn_philox_draw. */
/* No contraction of a product into a following add here (gcc's default outside ISO C modes,
   -std=gnu*, and clang's within an expression would fuse them): the draws are torch's bits
   with the multiply-adds its build fused written as fma / fmaf, every other product rounded
   alone, whatever -std or -ffp-contract the file is compiled with (as src/ops/sleef.c). */
TN__NO_CONTRACT_BEGIN
static tn_generator tn__default_gen = {67280421310721ULL, 0, TN_GEN_MT19937, 0, 0, 0, 0, {0}, 0};
TNDEF tn_generator *tn_default_generator(void) { return &tn__default_gen; }

/* One draw at a time per generator (PyTorch's generator mutex): a spin lock, as draws are short. */
static void tn__gen_lock(tn_generator *g) {
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_exchange_n(&g->lock, 1, __ATOMIC_ACQUIRE)) {}
#else
    (void)g;
#endif
}
static void tn__gen_unlock(tn_generator *g) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(&g->lock, 0, __ATOMIC_RELEASE);
#else
    (void)g;
#endif
}
static void tn__mt_seed(tn_generator *g) {
    g->mt[0] = (uint32_t)g->seed;
    for (uint32_t j = 1; j < 624; j++) g->mt[j] = 1812433253u * (g->mt[j - 1] ^ (g->mt[j - 1] >> 30)) + j;
    g->mt_left = 1;
    g->mt_next = 0;
}
/* The next uint32 of mt19937 (the caller holds the lock). */
static uint32_t tn__mt32(tn_generator *g) {
    if (g->mt_left <= 0) tn__mt_seed(g);
    if (--g->mt_left == 0) {
        uint32_t *s = g->mt;
        for (int i = 0; i < 624; i++) {
            uint32_t y = (s[i] & 0x80000000u) | (s[i + 1 < 624 ? i + 1 : 0] & 0x7fffffffu);
            s[i] = s[i + 397 < 624 ? i + 397 : i + 397 - 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->mt_left = 624;
        g->mt_next = 0;
    }
    uint32_t y = g->mt[g->mt_next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}
static uint64_t tn__mt64(tn_generator *g) { uint64_t hi = tn__mt32(g); return (hi << 32) | tn__mt32(g); }
/* uniform_real_distribution<double>(0, 1) and <float>: the low 53 / 24 bits */
static double tn__mt_unif64(tn_generator *g) { return (double)(tn__mt64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1.0p-53; }
static float tn__mt_unif32(tn_generator *g) { return (float)(tn__mt32(g) & 0xFFFFFFu) * 0x1.0p-24f; }
/* normal_distribution<double>: Box-Muller over two uniform doubles, the sine half kept for the next call */
static double tn__mt_normal(tn_generator *g) {
    if (g->has_normal) { g->has_normal = 0; return g->normal; }
    const double u1 = tn__mt_unif64(g), u2 = tn__mt_unif64(g);
    const double r = sqrt(-2.0 * log(1.0 - u2)), theta = 2.0 * 3.14159265358979323846 * u1;
    g->normal = r * sin(theta);
    g->has_normal = 1;
    return r * cos(theta);
}

static void tn__gen_init(tn_generator *g, uint64_t seed, int kind) {
    memset(g, 0, sizeof *g);
    g->seed = seed;
    g->kind = kind;
    if (kind == TN_GEN_MT19937) tn__mt_seed(g);
}
TNDEF void tn_generator_manual_seed(tn_generator *g, uint64_t seed) {
    if (!g) g = &tn__default_gen;
    tn__gen_lock(g);
    const int kind = g->kind;
    tn__gen_init(g, seed, kind);   /* clears the lock too */
}
TNDEF void tn_manual_seed(uint64_t seed) { tn_generator_manual_seed(&tn__default_gen, seed); }
static tn_generator *tn__generator_new(uint64_t seed, int kind) {
    tn_generator *g = (tn_generator *)TN_MALLOC(sizeof *g);
    if (!g) return (tn_generator *)tn__error("tn_generator_new: out of memory");
    tn__gen_init(g, seed, kind);
    return g;
}
TNDEF tn_generator *tn_generator_new(uint64_t seed) { return tn__generator_new(seed, TN_GEN_MT19937); }
TNDEF tn_generator *tn_generator_new_philox(uint64_t seed) { return tn__generator_new(seed, TN_GEN_PHILOX); }
TNDEF void tn_generator_free(tn_generator *g) { if (g != &tn__default_gen) TN_FREE(g); }

/* Reserve n counters of a generator (atomically, so threads get disjoint draws). */
static uint64_t tn__gen_take(tn_generator *g, int64_t n) {
    if (!g) g = &tn__default_gen;
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_fetch_add(&g->offset, (uint64_t)n, __ATOMIC_ACQ_REL);
#else
    uint64_t o = g->offset; g->offset += (uint64_t)n; return o;
#endif
}
static int tn__cg_random(tn_generator *g, int64_t n, uint64_t *off);   /* a draw inside a CUDA-graph capture (backend/cuda_graph.c) */
static bool tn__gen_mt(tn_generator *g) { return (g ? g : &tn__default_gen)->kind == TN_GEN_MT19937; }

TNDEF uint64_t tn_generator_random64(tn_generator *g) {
    if (!g) g = &tn__default_gen;
    if (g->kind != TN_GEN_MT19937) {
        uint32_t r[4];
        tn_philox4x32(g->seed, 0, tn__gen_take(g, 1), r);
        return ((uint64_t)r[0] << 32) | r[1];
    }
    tn__gen_lock(g);
    const uint64_t v = tn__mt64(g);
    tn__gen_unlock(g);
    return v;
}
TNDEF uint32_t tn_generator_random(tn_generator *g) {
    if (!g) g = &tn__default_gen;
    if (g->kind != TN_GEN_MT19937) return (uint32_t)(tn_generator_random64(g) >> 32);
    tn__gen_lock(g);
    const uint32_t v = tn__mt32(g);
    tn__gen_unlock(g);
    return v;
}
TNDEF double tn_generator_uniform(tn_generator *g) { return (double)(tn_generator_random64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1.0p-53; }
/* normal_distribution<double>(0, 1) of an mt19937 generator, its cached sine half included
   (the samplers of src/nn/samplers.c draw their normals so) */
static double tn__gen_mt_normal(tn_generator *g) {
    tn__gen_lock(g);
    const double z = tn__mt_normal(g);
    tn__gen_unlock(g);
    return z;
}

/* PyTorch's CPUGeneratorImplState: {uint64 seed; int left, seeded; uint64 next; uint64
   state[624]; double normal_x, normal_y, normal_rho; int normal_is_valid; (pad) float
   next_float_normal_sample; bool valid; (pad)}, little-endian as on the machines it runs on. */
static void tn__put(uint8_t *p, uint64_t v, int n) { for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t tn__get(const uint8_t *p, int n) { uint64_t v = 0; for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i); return v; }
TNDEF int64_t tn_generator_get_state(const tn_generator *cg, uint8_t *out, int64_t cap) {
    tn_generator *g = (tn_generator *)(uintptr_t)(cg ? cg : &tn__default_gen);
    const int64_t n = g->kind == TN_GEN_MT19937 ? TN_GENERATOR_STATE_BYTES : 16;
    if (!out || cap < n) return TN__FAIL_INT("tn_generator_get_state: need a buffer of %lld bytes (got %lld)", (long long)n, (long long)cap);
    memset(out, 0, (size_t)n);
    tn__gen_lock(g);
    if (g->kind != TN_GEN_MT19937) {
        tn__put(out, g->seed, 8);
        tn__put(out + 8, g->offset, 8);
    } else {
        if (g->mt_left <= 0) tn__mt_seed(g);
        tn__put(out, g->seed, 8);
        tn__put(out + 8, (uint64_t)g->mt_left, 4);
        tn__put(out + 12, 1, 4);
        tn__put(out + 16, (uint64_t)g->mt_next, 8);
        for (int i = 0; i < 624; i++) tn__put(out + 24 + 8 * i, g->mt[i], 8);
        if (g->has_normal) {
            uint64_t bits;
            memcpy(&bits, &g->normal, 8);
            tn__put(out + 5024, bits, 8);   /* normal_y */
            tn__put(out + 5040, 1, 4);      /* normal_is_valid */
        }
    }
    tn__gen_unlock(g);
    return n;
}
TNDEF int tn_generator_set_state(tn_generator *g, const uint8_t *st, int64_t n) {
    if (!g) g = &tn__default_gen;
    /* PyTorch takes its legacy 5048-byte state too (no float normal), a Philox one is 16 */
    if (!st || (n != TN_GENERATOR_STATE_BYTES && n != 5048 && n != 16))
        return TN__FAIL_INT("tn_generator_set_state: Expected either a CPUGeneratorImplStateLegacy of size 5048 or a CPUGeneratorImplState "
                            "of size %d (or a Philox state of 16 bytes) but found the input RNG state size to be %lld", TN_GENERATOR_STATE_BYTES, (long long)n);
    const int64_t left = n == 16 ? 1 : (int64_t)tn__get(st + 8, 4), next = n == 16 ? 0 : (int64_t)tn__get(st + 16, 8);
    if (n != 16 && (left < 1 || left > 624 || next < 0 || left + next > 625))   /* left + next is 625 once drawn from: reads stay within the 624 words */
        return TN__FAIL_INT("tn_generator_set_state: invalid mt19937 state (left %lld, next %lld)", (long long)left, (long long)next);
    tn__gen_lock(g);
    if (n == 16) {
        tn__gen_init(g, tn__get(st, 8), TN_GEN_PHILOX);
        g->offset = tn__get(st + 8, 8);
        return 0;
    }
    tn__gen_init(g, tn__get(st, 8), TN_GEN_MT19937);
    for (int i = 0; i < 624; i++) g->mt[i] = (uint32_t)tn__get(st + 24 + 8 * i, 8);
    g->mt_left = (int)left;
    g->mt_next = (int)next;
    if (tn__get(st + 5040, 4)) {
        uint64_t bits = tn__get(st + 5024, 8);
        memcpy(&g->normal, &bits, 8);
        g->has_normal = 1;
    }
    return 0;   /* tn__gen_init cleared the lock */
}

/* Fill the new contiguous CPU tensor t from mt19937 as PyTorch's CPU kernels do (the caller
   holds the lock): uniform_ in t's dtype (float: 24 bits of random(), double: 53 of
   random64()), normal_ through normal_fill for 16 or more elements (uniforms, then
   Box-Muller on each 16: 8 pairs (j, j + 8), the last 16 redrawn when 16 does not divide n)
   and through the cached normal_distribution<double> below, random_(from, to) as
   uniform_int_from_to_distribution (random64() when the range needs 33 bits, in 64-bit and
   float dtypes). */
/* normal_fill_16_AVX2, the float32 normal_fill torch runs on an x86-64 CPU with AVX2 (its
   AVX-512 build registers no normal kernel, so it too runs this): avx_mathfun.h's log256_ps
   and sincos256_ps (Cephes logf / sinf / cosf in 8 lanes), each lane here in scalar C. The
   fmaf calls are where the compiler of libtorch (gcc, -ffp-contract=fast) fused a mul_ps with
   the next add_ps or sub_ps: read from torch 1.13's libtorch_cpu.so (Debian) and checked bit
   for bit; the products left unfused are rounded separately, and no product here feeds an
   add that a compiler could fuse. 2025 PyTorch runs the same. Compiled twice: plain (fmaf a
   libm call) and for AVX2 with FMA (the same bits, 8 lanes at once), chosen at run time. */
/* @template TN__NORMAL16_F32(SFX, ATTR) */
/* log256_ps for x in [2^-24, 1] (u1's range: its NaN mask and its clamp to the least normal
   change nothing, left out). The selections are masks, as there, so that the loop vectorises. */
ATTR static inline float tn__am_logf_##SFX(float x) {
    float e = (float)((int32_t)(tn__f32_bits(x) >> 23) - 0x7f) + 1.0f;
    x = tn__bits_f32((tn__f32_bits(x) & ~0x7f800000u) | 0x3f000000u);   /* the mantissa in [0.5, 1) */
    const uint32_t lo = -(uint32_t)(x < 0.707106781186547524f);         /* cephes_SQRTHF */
    x = (x - 1.0f) + tn__bits_f32(tn__f32_bits(x) & lo);
    e -= tn__bits_f32(tn__f32_bits(1.0f) & lo);
    const float z = x * x;
    float y = 7.0376836292E-2f;
    y = fmaf(y, x, -1.1514610310E-1f);
    y = fmaf(y, x, 1.1676998740E-1f);
    y = fmaf(y, x, -1.2420140846E-1f);
    y = fmaf(y, x, 1.4249322787E-1f);
    y = fmaf(y, x, -1.6668057665E-1f);
    y = fmaf(y, x, 2.0000714765E-1f);
    y = fmaf(y, x, -2.4999993993E-1f);
    y = fmaf(y, x, 3.3333331174E-1f);
    y = fmaf(y * x, z, e * -2.12194440e-4f);                             /* cephes_log_q1 */
    y = fmaf(-z, 0.5f, y);
    return fmaf(e, 0.693359375f, x + y);                                 /* cephes_log_q2 */
}
/* sincos256_ps for x in [0, 2 pi) */
ATTR static inline void tn__am_sincosf_##SFX(float x, float *s, float *c) {
    const uint32_t sign = tn__f32_bits(x) & 0x80000000u;
    x = fabsf(x);
    const int32_t j = ((int32_t)(x * 1.27323954473516f) + 1) & ~1;       /* cephes_FOPI: 4 / pi */
    const float y = (float)j;
    const uint32_t sign_sin = sign ^ ((uint32_t)(j & 4) << 29), sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    const uint32_t poly = -(uint32_t)((j & 2) == 0);
    x = fmaf(y, -0.78515625f, x);                                        /* minus_cephes_DP1..3 */
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    const float z = x * x;
    float yc = 2.443315711809948E-005f;                                  /* coscof */
    yc = fmaf(yc, z, -1.388731625493765E-003f);
    yc = fmaf(yc, z, 4.166664568298827E-002f);
    yc = fmaf(yc * z, z, -(z * 0.5f)) + 1.0f;
    float ys = -1.9515295891E-4f;                                        /* sincof */
    ys = fmaf(ys, z, 8.3321608736E-3f);
    ys = fmaf(ys, z, -1.6666654611E-1f);
    ys = fmaf(ys * z, x, x);
    /* the selection as there (x + 0 and x - 0: the same bits but for -0) */
    const float s2 = tn__bits_f32(tn__f32_bits(ys) & poly), s1 = tn__bits_f32(tn__f32_bits(yc) & ~poly);
    *s = tn__bits_f32(tn__f32_bits(s1 + s2) ^ sign_sin);
    *c = tn__bits_f32(tn__f32_bits((yc - s1) + (ys - s2)) ^ sign_cos);
}
/* Box-Muller on nblk blocks of 16 uniforms from d: 8 pairs (j, j + 8) each */
ATTR static void tn__mt_normal16_f32_##SFX(float *d, int64_t nblk, float mean, float std) {
    const float two_pi = (float)(2.0 * 3.14159265358979323846);
    for (int64_t b = 0; b < nblk; b++, d += 16)
        for (int j = 0; j < 8; j++) {
            const float u1 = 1.0f - d[j], u2 = d[j + 8];   /* [0, 1) -> (0, 1] for log */
            const float radius = sqrtf(-2.0f * tn__am_logf_##SFX(u1));
            float s, c;
            tn__am_sincosf_##SFX(two_pi * u2, &s, &c);
            d[j] = fmaf(radius * c, std, mean);
            d[j + 8] = fmaf(radius * s, std, mean);
        }
}
/* @end TN__NORMAL16_F32 */
TN__NORMAL16_F32(base, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
TN__NORMAL16_F32(fma, __attribute__((target("avx2,fma"))))
#endif
TN__TESTABLE int tn__normal_fma_loop = 1;   /* 0 (tests): the plain copy everywhere */
static void tn__mt_normal16_f32(float *d, int64_t nblk, float mean, float std) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (tn__normal_fma_loop && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        tn__mt_normal16_f32_fma(d, nblk, mean, std);
        return;
    }
#endif
    tn__mt_normal16_f32_base(d, nblk, mean, std);
}
static void tn__mt_normal16_f64(double *d, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        const double u1 = 1.0 - d[j], u2 = d[j + 8];
        const double radius = sqrt(-2.0 * log(u1)), theta = 6.28318530717958647692 * u2;
        d[j] = fma(radius * cos(theta), std, mean);
        d[j + 8] = fma(radius * sin(theta), std, mean);
    }
}
static void tn__mt_store(char *base, tn_dtype dt, int64_t i, double v, int64_t iv, bool isint) {
    switch (dt) {
    case TN_F32: ((float *)base)[i] = isint ? (float)iv : (float)v; break;
    case TN_F64: ((double *)base)[i] = isint ? (double)iv : v; break;
    case TN_I32: ((int32_t *)base)[i] = isint ? (int32_t)iv : (int32_t)v; break;
    case TN_I64: ((int64_t *)base)[i] = isint ? iv : (int64_t)v; break;
    case TN_U8: ((uint8_t *)base)[i] = isint ? (uint8_t)iv : (uint8_t)v; break;
    case TN_I8: ((int8_t *)base)[i] = isint ? tn__cvt_i8_int(iv) : tn__cvt_i8_flt(v); break;
    case TN_I16: ((int16_t *)base)[i] = isint ? tn__cvt_i16_int(iv) : tn__cvt_i16_flt(v); break;
    default: ((bool *)base)[i] = isint ? iv != 0 : v != 0; break;
    }
}
/* serial: normal_ of a non-contiguous tensor (PyTorch's serial kernel: the cached
   normal_distribution<double> for every element, whatever the count) */
static void tn__mt_fill(tn_random_op op, tn_tensor *t, tn_generator *g, double a, double b, int64_t low, uint64_t range, bool serial) {
    const int64_t n = tn_numel(t);
    char *base = (char *)tn_data_ptr(t);
    const tn_dtype dt = t->dtype;
    if (op == NORMAL && n >= 16 && !serial && (dt == TN_F32 || dt == TN_F64)) {
        if (dt == TN_F32) {
            float *d = (float *)base;
            for (int64_t i = 0; i < n; i++) d[i] = tn__mt_unif32(g);
            tn__mt_normal16_f32(d, n / 16, (float)a, (float)b);
            if (n % 16) {
                for (int j = 0; j < 16; j++) d[n - 16 + j] = tn__mt_unif32(g);
                tn__mt_normal16_f32(d + n - 16, 1, (float)a, (float)b);
            }
        } else {
            double *d = (double *)base;
            for (int64_t i = 0; i < n; i++) d[i] = tn__mt_unif64(g);
            for (int64_t i = 0; i + 16 <= n; i += 16) tn__mt_normal16_f64(d + i, a, b);
            if (n % 16) {
                for (int j = 0; j < 16; j++) d[n - 16 + j] = tn__mt_unif64(g);
                tn__mt_normal16_f64(d + n - 16, a, b);
            }
        }
        return;
    }
    /* range 0: random_'s full 64 bits (random64() as an int64) */
    const bool wide = (range == 0 || range >= (UINT64_C(1) << 32)) && (dt == TN_I64 || dt == TN_F64 || dt == TN_F32);
    const float af = (float)a, bf = (float)b;
    for (int64_t i = 0; i < n; i++) {
        if (op == UNIFORM && dt == TN_F32) { ((float *)base)[i] = fmaf(tn__mt_unif32(g), bf - af, af); continue; }
        if (op == UNIFORM) { tn__mt_store(base, dt, i, fma(tn__mt_unif64(g), b - a, a), 0, false); continue; }
        if (op == NORMAL) { tn__mt_store(base, dt, i, fma(tn__mt_normal(g), b, a), 0, false); continue; }
        const uint64_t r = wide ? tn__mt64(g) : tn__mt32(g);
        tn__mt_store(base, dt, i, 0, (int64_t)((range ? r % range : r) + (uint64_t)low), true);
    }
}

/* normal_fill<Half> / <BFloat16> of a half-precision tensor of 16 or more elements: the
   uniforms of uniform_real_distribution<scalar_t> (11 or 8 bits of random()), then
   normal_fill_16 with every step in the dtype: c10's arithmetic between two halves and its
   std:: math overloads (log, sqrt, cos, sin of a half return a half) round each result.
   That is 2025 PyTorch for both dtypes and 1.13 for bfloat16; 1.13 had the math overloads
   for bfloat16 only, so its float16 kept log, sqrt, cos and sin in float (a half ulp or two
   apart). d: the float staging of the result, every value a half. */
static float tn__round_half(float x, bool bf) { return bf ? tn__bf2f(tn__f2bf(x)) : tn__h2f(tn__f2h(x)); }
static void tn__mt_normal16_half(float *d, float mean, float std, bool bf) {
    for (int j = 0; j < 8; j++) {
        const float u1 = tn__round_half(1.0f - d[j], bf), u2 = d[j + 8];
        const float radius = tn__round_half(sqrtf(tn__round_half(-2.0f * tn__round_half(logf(u1), bf), bf)), bf);
        const float theta = tn__round_half((float)(6.28318530717958647692 * (double)u2), bf);   /* double * Half is a double */
        const float c = tn__round_half(cosf(theta), bf), s = tn__round_half(sinf(theta), bf);
        d[j] = tn__round_half(tn__round_half(tn__round_half(radius * c, bf) * std, bf) + mean, bf);
        d[j + 8] = tn__round_half(tn__round_half(tn__round_half(radius * s, bf) * std, bf) + mean, bf);
    }
}
static void tn__mt_normal_fill_half(float *d, int64_t n, bool bf, double mean, double std, tn_generator *g) {
    const int digits = bf ? 8 : 11;
    const float m = tn__round_half((float)mean, bf), s = tn__round_half((float)std, bf);   /* static_cast<scalar_t>(double): through float */
    for (int64_t i = 0; i < n; i++) d[i] = (float)(tn__mt32(g) & ((1u << digits) - 1)) * ldexpf(1.0f, -digits);
    for (int64_t i = 0; i + 16 <= n; i += 16) tn__mt_normal16_half(d + i, m, s, bf);
    if (n % 16) {
        for (int j = 0; j < 16; j++) d[n - 16 + j] = (float)(tn__mt32(g) & ((1u << digits) - 1)) * ldexpf(1.0f, -digits);
        tn__mt_normal16_half(d + n - 16, m, s, bf);
    }
}

/* v rounded to a float of `digits` significant bits, to nearest even (half's 11, bfloat16's 8;
   the small range the bounds of a draw take) */
static float tn__round_float_to(double v, int digits) {
    if (v == 0 || !isfinite(v)) return (float)v;
    int e;
    const double m = frexp(v, &e);
    return (float)ldexp(nearbyint(ldexp(m, digits)), e - digits);
}
static tn_tensor *tn__random_ex(const char *fn, tn_random_op op, const int64_t *shape, int ndim, tn_dtype dtype,
                                tn_generator *gen, double a, double b, int64_t low, uint64_t range, tn_device device, bool serial) {
    if (tn__check_cpu_dtype_arg(fn, dtype)) return NULL;
    if (op != RANDINT && tn_dtype_is_complex(dtype)) {   /* PyTorch's: the real view's draw, normal's std over sqrt(2) */
        if (ndim >= TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: a complex tensor of %d dims (its real view needs %d, the limit is %d)", fn, ndim, ndim + 1, TN_MAX_DIMS);
        int64_t s2[TN_MAX_DIMS];
        if (ndim > 0) memcpy(s2, shape, (size_t)ndim * sizeof *s2);
        s2[ndim] = 2;
        tn_tensor *r = tn__random_ex(fn, op, s2, ndim + 1, dtype == TN_C64 ? TN_F32 : TN_F64, gen, a, op == NORMAL ? b / sqrt(2.0) : b, low, range, device, serial);
        return r ? tn_view_as_complex(r) : NULL;
    }
    if (op != RANDINT && !tn_dtype_is_floating(dtype))
        return (tn_tensor *)tn__error("%s: expected a floating dtype, got %s", fn, tn_dtype_name(dtype));
    tn_tensor *t = device == TN_CPU ? tn__new_checked(fn, shape, ndim, dtype)
                 : tn__check_shape(fn, shape, ndim) ? NULL : TN__AS(fn, tn__new(dtype, device, shape, ndim));
    if (!t) return NULL;
    tn_generator *g = gen ? gen : &tn__default_gen;
    if (t->device == TN_CPU && g->kind == TN_GEN_MT19937) {
        /* half precision: drawn as float32, rounded. uniform_ as PyTorch's: 11 (bfloat16: 8) bits
           of random() over the bounds rounded to the dtype, in float; normal_ of 16 or more
           as normal_fill in the dtype, of fewer (or serial) the normal doubles rounded */
        tn_tensor *d = tn__is_half(dtype) ? tn__new(TN_F32, TN_CPU, t->shape, t->ndim) : tn_retain(t);
        if (!d) { tn_release(t); return NULL; }
        tn__gen_lock(g);
        if (op == UNIFORM && tn__is_half(dtype)) {
            const int digits = dtype == TN_F16 ? 11 : 8;
            /* to - from in the half dtype (c10's Half arithmetic rounds), the rest in float */
            const float af = tn__round_float_to(a, digits), bf = tn__round_float_to(tn__round_float_to(b, digits) - (double)af, digits);
            float *o = (float *)tn_data_ptr(d);
            for (int64_t i = 0; i < tn_numel(d); i++)
                o[i] = fmaf((float)(tn__mt32(g) & ((1u << digits) - 1)) * ldexpf(1.0f, -digits), bf, af);
        } else if (op == NORMAL && tn__is_half(dtype) && tn_numel(d) >= 16 && !serial) {
            tn__mt_normal_fill_half((float *)tn_data_ptr(d), tn_numel(d), dtype == TN_BF16, a, b, g);
        } else {
            tn__mt_fill(op, d, g, a, b, low, range, serial);
        }
        tn__gen_unlock(g);
        int rc = d != t ? tn__copy(t, d) : 0;
        tn_release(d);
        if (rc) { tn_release(t); return NULL; }
        return tn__own(t);
    }
    uint64_t off;
    if (t->device == TN_CUDA && tn_cuda_graph_capturing()) {   /* the graph's counters, taken per replay (backend/cuda_graph.c) */
        if (tn__cg_random(gen, tn_numel(t), &off)) { tn_release(t); return NULL; }
    } else off = tn__gen_take(g, tn_numel(t));
    if (tn__backend(t->device)->random(op, t, g->seed, off, a, b, low, range)) { tn_release(t); return NULL; }
    return tn__own(t);
}

static tn_tensor *tn__random(const char *fn, tn_random_op op, const int64_t *shape, int ndim, tn_dtype dtype,
                             tn_generator *gen, double a, double b, int64_t low, uint64_t range, tn_device device) {
    return tn__random_ex(fn, op, shape, ndim, dtype, gen, a, b, low, range, device, false);
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
static const char *tn__cpp_type_name(tn_dtype dt);   /* PyTorch's messages name C++ types */
TNDEF tn_tensor *tn_randint(int64_t low, int64_t high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (low >= high) return (tn_tensor *)tn__error("tn_randint: expected low < high, got low %lld, high %lld", (long long)low, (long long)high);
    if (dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_randint: dtype bool is not supported");
    if (tn_dtype_is_complex(dtype)) return (tn_tensor *)tn__error("tn_randint: check_random_bounds handles only integral, floating-point and boolean types (got %s)", tn_dtype_name(dtype));
    const bool narrow = tn__is_int(dtype) && dtype != TN_I64;
    double dmin = narrow ? tn__int_lowest(dtype) : dtype == TN_F32 ? -16777216.0 : dtype == TN_F64 ? -9007199254740992.0 : -9.3e18;
    double dmax = narrow ? tn__int_highest(dtype) + 1 : dtype == TN_F32 ? 16777217.0 : dtype == TN_F64 ? 9007199254740993.0 : 9.3e18;
    if ((double)low < dmin || (double)low >= dmax) return (tn_tensor *)tn__error("tn_randint: from is out of bounds for %s (from = %lld)", tn__cpp_type_name(dtype), (long long)low);
    if ((double)high > dmax) return (tn_tensor *)tn__error("tn_randint: to - 1 is out of bounds for %s (to = %lld)", tn__cpp_type_name(dtype), (long long)high);
    return tn__random("tn_randint", RANDINT, shape, ndim, dtype, g, (double)low, (double)high, low, (uint64_t)high - (uint64_t)low, TN_CPU);
}
TNDEF tn_tensor *tn_rand_like(tn_tensor *t) { TN__CHECK_NULL(t); return tn__random("tn_rand_like", UNIFORM, t->shape, t->ndim, t->dtype, NULL, 0, 1, 0, 0, t->device); }
TNDEF tn_tensor *tn_randn_like(tn_tensor *t) { TN__CHECK_NULL(t); return tn__random("tn_randn_like", NORMAL, t->shape, t->ndim, t->dtype, NULL, 0, 1, 0, 0, t->device); }

static tn_tensor *tn__bernoulli_impl(tn_tensor *p, tn_generator *gen) {
    TN__CHECK_NULL(p);
    if (tn__check_cpu_dtype("tn_bernoulli", p)) return NULL;
    if (!tn_dtype_is_floating(p->dtype)) return (tn_tensor *)tn__error("tn_bernoulli: expected a floating probability tensor, got %s", tn_dtype_name(p->dtype));
    tn_scope_begin();
    double lo = tn_numel(p) ? tn_item(tn_amin(p, NULL, 0)) : 0, hi = tn_numel(p) ? tn_item(tn_amax(p, NULL, 0)) : 0;
    if (!(lo >= 0 && hi <= 1)) {
        tn_scope_end();
        return (tn_tensor *)tn__error("tn_bernoulli: expected 0 <= p <= 1 for every element of p (shape %s), got values from %g to %g", TN__SHAPE(p), lo, hi);
    }
    /* PyTorch's CPU kernel draws bernoulli_distribution<float> (a float uniform) for a float32 p */
    const tn_dtype ud = p->device == TN_CPU && tn__gen_mt(gen) && p->dtype == TN_F32 ? TN_F32 : TN_F64;
    tn_tensor *u = tn__random("tn_bernoulli", UNIFORM, p->shape, p->ndim, ud, gen, 0, 1, 0, 0, p->device);
    tn_tensor *r = tn_to_dtype(tn_lt(u, p), p->dtype);
    r = tn__zero_grad_node(r, p, "BernoulliBackward0", true);   /* p's gradient: zeros, as PyTorch */
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bernoulli(tn_tensor *p, tn_generator *gen) { return TN__AS("tn_bernoulli", tn__bernoulli_impl(p, gen)); }
static tn_tensor *tn__bernoulli_p_impl(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen) {
    if (!(p >= 0 && p <= 1)) return (tn_tensor *)tn__error("tn_bernoulli_p: p must be in [0, 1], got %g", p);
    if (tn_dtype_is_complex(dtype)) return (tn_tensor *)tn__error("tn_bernoulli_p: \"bernoulli_scalar_cpu_\" not implemented for '%s'", tn__torch_type_name(dtype));
    tn_scope_begin();
    tn_tensor *u = tn_rand_gen(shape, ndim, TN_F64, gen);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_lt_scalar(u, p), dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bernoulli_p(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen) { return TN__AS("tn_bernoulli_p", tn__bernoulli_p_impl(shape, ndim, p, dtype, gen)); }
/* PyTorch's randperm_cpu from mt19937: swap i with i + random() % (n - i); from n >= 2^32 / 20
   (PyTorch 2.x; 1.13 had only the first loop) the inside-out shuffle with random64() % (i + 1).
   From a Philox generator: the argsort of uniform keys, the same on every device. */
static void tn__randperm_mt(int64_t *r, int64_t n, tn_generator *g) {
    tn__gen_lock(g);
    if (n < (int64_t)(UINT32_MAX / 20)) {
        for (int64_t i = 0; i < n; i++) r[i] = i;
        for (int64_t i = 0; i < n - 1; i++) {
            const int64_t z = (int64_t)(tn__mt32(g) % (uint64_t)(n - i)), sav = r[i];
            r[i] = r[z + i];
            r[z + i] = sav;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const int64_t z = (int64_t)(tn__mt64(g) % (uint64_t)(i + 1));
            r[i] = r[z];
            r[z] = i;
        }
    }
    tn__gen_unlock(g);
}
static tn_tensor *tn__randperm_impl(int64_t n, tn_dtype dtype, tn_generator *gen) {
    if (n < 0) return (tn_tensor *)tn__error("tn_randperm: n must be non-negative, got %lld", (long long)n);
    if (tn__check_dtype_arg("tn_randperm", dtype)) return NULL;
    if (dtype == TN_BOOL || tn_dtype_is_complex(dtype)) return (tn_tensor *)tn__error("tn_randperm: \"randperm\" not implemented for '%s'", tn__torch_type_name(dtype));
    /* as PyTorch: the largest value n - 1 must fit an integer dtype, and n values must stay
       distinct in a float one (its mantissa bits + 1) */
    if (tn__is_int(dtype) && dtype != TN_I64 && (double)(n - 1) > tn__int_highest(dtype))
        return (tn_tensor *)tn__error("tn_randperm: n = %lld: value cannot be converted to type %s_t without overflow", (long long)n, tn_dtype_name(dtype));
    int digits = dtype == TN_F32 ? 24 : dtype == TN_F64 ? 53 : dtype == TN_F16 ? 11 : 0;
    if (digits && n > ((int64_t)1 << digits) + 1)
        return (tn_tensor *)tn__error("tn_randperm: n = %lld: n cannot be greater than 2^%d+1 for %s type", (long long)n, digits, tn__torch_type_name(dtype));
    if (tn__gen_mt(gen)) {
        tn_scope_begin();
        tn_tensor *r = tn__own(tn__new_checked("tn_randperm", &n, 1, TN_I64));
        if (r) tn__randperm_mt((int64_t *)tn_data_ptr(r), n, gen ? gen : &tn__default_gen);
        tn_tensor *c = r ? tn_keep(tn_to_dtype(r, dtype)) : NULL;
        tn_scope_end();
        return c;
    }
    tn_scope_begin();
    tn_tensor *keys = tn_rand_gen(&n, 1, TN_F64, gen);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_argsort(keys, .dim = 0), dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_randperm(int64_t n, tn_dtype dtype, tn_generator *gen) { return TN__AS("tn_randperm", tn__randperm_impl(n, dtype, gen)); }

/* exponential_distribution<double>(lambda) of PyTorch's CPU kernel: -log1p(-u) / lambda, u a
   uniform double (2025 PyTorch; 1.13 computed log(1 - u), which can differ in the last bit) */
static double tn__mt_exponential(tn_generator *g, double lambda) { return -1.0 / lambda * log1p(-tn__mt_unif64(g)); }

/* multinomial from mt19937 as PyTorch's CPU code draws it. Without replacement, and for one
   sample (2025 PyTorch; 1.13 sent one sample with replacement down the second path), the
   race p / E with E = empty_like(p).exponential_() (one double per element in p's memory
   order, rounded to p's dtype; the quotient in p's dtype): argmax, or topk's largest. With
   replacement (MultinomialKernel.cpp) row by row: the running sum of p in p's dtype (float
   for half), divided by the sum, the last set to 1, then for each sample a uniform double u
   and the first category whose cumulative value is >= u. pd: p detached, as [R, C]. */
static tn_tensor *tn__multinomial_mt(tn_tensor *p, tn_tensor *pd, int64_t R, int64_t C, int64_t ns, bool replacement, tn_generator *g) {
    const char *fn = "tn_multinomial";
    int64_t oshape[2] = {R, ns};
    if (!replacement || ns == 1) {
        /* empty_like keeps a dense permuted layout: a column-major [R, C] draws column by column */
        const bool colmajor = p->ndim == 2 && R > 1 && C > 1 && p->strides[0] == 1 && p->strides[1] == R;
        int64_t qs[2] = {colmajor ? C : R, colmajor ? R : C};
        tn_tensor *e = tn__own(tn__new_checked(fn, qs, 2, TN_F64));
        if (!e) return NULL;
        double *d = (double *)tn_data_ptr(e);
        tn__gen_lock(g);
        for (int64_t i = 0; i < R * C; i++) d[i] = tn__mt_exponential(g, 1.0);
        tn__gen_unlock(g);
        tn_tensor *q = tn_div(pd, tn_to_dtype(colmajor ? tn_transpose(e, 0, 1) : e, p->dtype));
        tn_tensor *r = NULL;
        if (ns == 1) r = tn_argmax_dim(q, .dim = -1, .keepdim = true);
        else if (q) tn_topk(q, ns, &r);
        return r;
    }
    if (C == 0) return (tn_tensor *)tn__error("%s: invalid multinomial distribution (sum of probabilities <= 0)", fn);
    /* the running sum in float for float32 and half, double for float64 */
    const tn_dtype acc = p->dtype == TN_F64 ? TN_F64 : TN_F32;
    tn_tensor *pc = tn_contiguous(tn_to_dtype(pd, acc));
    tn_tensor *r = pc ? tn__own(tn__new_checked(fn, oshape, 2, TN_I64)) : NULL;
    double *cum = r ? (double *)TN_MALLOC((size_t)C * sizeof(double)) : NULL;   /* C <= 2^24 */
    if (r && !cum) return (tn_tensor *)tn__error("%s: out of memory", fn);
    if (!r) return NULL;
    int64_t *out = (int64_t *)tn_data_ptr(r);
    const float *pf = acc == TN_F32 ? (const float *)tn_data_ptr(pc) : NULL;
    const double *pdd = acc == TN_F64 ? (const double *)tn_data_ptr(pc) : NULL;
    const char *bad = NULL;
    tn__gen_lock(g);
    for (int64_t i = 0; i < R && !bad; i++) {
        float sf = 0;
        double sd = 0;
        for (int64_t j = 0; j < C && !bad; j++) {
            const double v = pf ? (double)pf[i * C + j] : pdd[i * C + j];
            if (!(v >= 0)) bad = "invalid multinomial distribution (encountering probability entry < 0)";
            else if (!isfinite(v)) bad = "invalid multinomial distribution (encountering probability entry = infinity or NaN)";
            if (pf) { sf += (float)v; cum[j] = sf; } else { sd += v; cum[j] = sd; }
        }
        if (bad) break;
        if (!((pf ? (double)sf : sd) > 0)) { bad = "invalid multinomial distribution (sum of probabilities <= 0)"; break; }
        for (int64_t j = 0; j < C; j++) cum[j] = pf ? (double)((float)cum[j] / sf) : cum[j] / sd;
        cum[C - 1] = 1;
        for (int64_t k = 0; k < ns; k++) {
            const double u = tn__mt_unif64(g);
            int64_t lo = 0, hi = C;
            while (hi > lo) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (cum[mid] < u) lo = mid + 1;
                else hi = mid;
            }
            out[i * ns + k] = lo;
        }
    }
    tn__gen_unlock(g);
    TN_FREE(cum);
    if (bad) return (tn_tensor *)tn__error("%s: %s", fn, bad);
    return r;
}

/* On a device or from a Philox generator the same race and inverse CDF through tensor ops
   (uniforms in p's dtype; the numbers are the generator's own, not PyTorch's). */
static tn_tensor *tn__multinomial_impl(tn_tensor *p, int64_t ns, bool replacement, tn_generator *gen) {
    const char *fn = "tn_multinomial";
    TN__CHECK_NULL(p);
    if (tn__check_cpu_dtype(fn, p)) return NULL;
    if (p->ndim != 1 && p->ndim != 2) return (tn_tensor *)tn__error("%s: prob_dist must be 1 or 2 dim, got shape %s", fn, TN__SHAPE(p));
    if (!tn_dtype_is_floating(p->dtype)) return (tn_tensor *)tn__error("%s: multinomial only supports floating-point dtypes for input, got: %s", fn, tn_dtype_name(p->dtype));
    const int64_t C = p->shape[p->ndim - 1], R = p->ndim == 2 ? p->shape[0] : 1;
    if (ns <= 0) return (tn_tensor *)tn__error("%s: cannot sample n_sample <= 0 samples (got %lld)", fn, (long long)ns);
    if (!replacement && ns > C)
        return (tn_tensor *)tn__error("%s: cannot sample n_sample > prob_dist.size(-1) samples without replacement (%lld > %lld)", fn, (long long)ns, (long long)C);
    if (C > ((int64_t)1 << 24)) return (tn_tensor *)tn__error("%s: number of categories cannot exceed 2^24 (got %lld)", fn, (long long)C);
    int64_t oshape[2] = {R, ns};
    if (R == 0) return tn__own(tn__new(TN_I64, p->device, p->ndim == 2 ? oshape : oshape + 1, p->ndim));
    tn_generator *g = gen ? gen : &tn__default_gen;
    const bool mt = p->device == TN_CPU && g->kind == TN_GEN_MT19937;
    const bool race = !replacement || ns == 1;
    tn_scope_begin();
    int64_t last = -1, rc2[2] = {R, C};
    tn_tensor *pd = tn_reshape(tn_detach(p), rc2, 2), *r = NULL;
    bool ok = pd != NULL;
    tn_tensor *sums = NULL;
    if (ok && (race || !mt)) {   /* the mt19937 kernel with replacement checks as it sums */
        tn_tensor *lo = C ? tn_amin(pd, NULL, 0) : NULL, *hi = lo ? tn_amax(pd, NULL, 0) : NULL;   /* NaN propagates into hi */
        sums = tn_sum_dims(pd, &last, 1, .keepdim = true);
        ok = sums != NULL && (C == 0 || hi != NULL);
        if (ok && C && !(tn_item(lo) >= 0 && tn_item(hi) < INFINITY))
            ok = (tn__error(race ? "%s: probability tensor contains either `inf`, `nan` or element < 0"
                                 : "%s: invalid multinomial distribution (encountering probability entry < 0, infinity or NaN)", fn), false);
        if (ok && (C == 0 || tn_item(tn_any(tn_eq_scalar(sums, 0))))) ok = (tn__error("%s: invalid multinomial distribution (sum of probabilities <= 0)", fn), false);
    }
    if (ok && mt) {
        r = tn__multinomial_mt(p, pd, R, C, ns, replacement, g);
    } else if (ok && race) {
        tn_tensor *u = tn__random(fn, UNIFORM, rc2, 2, p->dtype, gen, 0, 1, 0, 0, p->device);
        tn_tensor *q = tn_div(pd, tn_neg(tn_log(u)));   /* u = 0: E = inf, q = 0 (probability 2^-53, or 2^-24 for float32) */
        if (ns == 1) r = tn_argmax_dim(q, .dim = -1, .keepdim = true);
        else tn_topk(q, ns, &r);
    } else if (ok) {
        tn_tensor *cdf = tn_div(tn_cumsum(tn_to_dtype(pd, TN_F64), -1), tn_to_dtype(sums, TN_F64));
        tn_tensor *parts[2] = {cdf ? tn_narrow(cdf, -1, 0, C - 1) : NULL, cdf ? tn_ones_like(tn_narrow(cdf, -1, 0, 1)) : NULL};
        cdf = parts[1] ? tn_cat(parts, 2, .dim = -1) : NULL;   /* the last exactly 1 */
        tn_tensor *u = cdf ? tn__random(fn, UNIFORM, oshape, 2, TN_F64, gen, 0, 1, 0, 0, p->device) : NULL;
        tn_searchsorted_fn_opts so = TN_DEFAULTS(tn_searchsorted_fn_opts);
        so.right = true;   /* the first cumulative probability above u: a category of weight 0 is never drawn */
        r = u ? tn_clamp(tn_searchsorted_opts(cdf, u, so), .min = 0, .max = (double)(C - 1)) : NULL;
    }
    if (r && p->ndim == 1) r = tn_reshape(r, &ns, 1);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_multinomial_opts(tn_tensor *probs, int64_t num_samples, tn_generator *gen, tn_multinomial_fn_opts o) {
    return TN__AS("tn_multinomial", tn__multinomial_impl(probs, num_samples, o.replacement, gen));
}
TNDEF tn_tensor *tn_multinomial_str(tn_tensor *probs, int64_t num_samples, tn_generator *gen, const char *options) { TN__KW_STR(tn_multinomial_fn_opts, multinomial, "tn_multinomial", options, tn_multinomial_opts(probs, num_samples, gen, o)); }

/* ---- the in-place samplers: exponential_, geometric_, cauchy_, log_normal_, random_ ----
   PyTorch's CPU kernels draw one double per element from mt19937 (DistributionsHelper.h's
   distributions, TransformationHelper.h's transformations) and cast it to the tensor's
   dtype, element by element in the tensor's memory order (TensorIterator's: the dims by
   stride). From a Philox generator, or for a device tensor, the same transformations of the
   generator's own uniforms / normals (the Philox stream, device-independent). */
typedef enum { TN__EXPONENTIAL, TN__GEOMETRIC, TN__CAUCHY, TN__LOG_NORMAL } tn__sampler;
static double tn__sample_of(tn__sampler s, double u, double a, double b) {
    switch (s) {
    case TN__EXPONENTIAL: return -1.0 / a * log1p(-u);
    case TN__GEOMETRIC: return ceil(log(u) / log1p(-a));
    case TN__CAUCHY: return fma(b, tan(3.14159265358979323846 * (u - 0.5)), a);   /* PyTorch's build contracts it */
    default: return exp(u);   /* TN__LOG_NORMAL: u is the normal a + b z */
    }
}
static double tn__mt_sample(tn_generator *g, tn__sampler s, double a, double b) {
    if (s == TN__LOG_NORMAL) return exp(fma(tn__mt_normal(g), b, a));
    return tn__sample_of(s, tn__mt_unif64(g), a, b);
}
/* t's dims from the largest stride to the smallest (memory order; stable), and the inverse */
static void tn__memory_order(const tn_tensor *t, int64_t *perm, int64_t *inv, int64_t *pshape) {
    for (int i = 0; i < t->ndim; i++) perm[i] = i;
    for (int i = 1; i < t->ndim; i++)
        for (int j = i; j > 0 && t->shape[perm[j]] > 1 && (t->shape[perm[j - 1]] <= 1 || t->strides[perm[j]] > t->strides[perm[j - 1]]); j--) {
            const int64_t k = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = k;
        }
    for (int i = 0; i < t->ndim; i++) { inv[perm[i]] = i; pshape[i] = t->shape[perm[i]]; }
}
/* v (t's values in memory order, as pshape) into t */
static int tn__fill_in_order(tn_tensor *t, tn_tensor *v, const int64_t *inv) {
    return v ? tn_copy_(t, tn_permute(v, inv, t->ndim)) : -1;
}
static tn_tensor *tn__sample_(const char *fn, tn_tensor *t, tn__sampler s, double a, double b, tn_generator *gen) {
    if (tn_numel(t) == 0) return t;
    tn_generator *g = gen ? gen : &tn__default_gen;
    int64_t perm[TN_MAX_DIMS], inv[TN_MAX_DIMS], pshape[TN_MAX_DIMS];
    tn__memory_order(t, perm, inv, pshape);
    tn_scope_begin();
    tn_tensor *v = tn__own(tn__new_checked(fn, pshape, t->ndim, TN_F64));
    if (v && t->device == TN_CPU && g->kind == TN_GEN_MT19937) {
        double *d = (double *)tn_data_ptr(v);
        tn__gen_lock(g);
        for (int64_t i = 0; i < tn_numel(v); i++) d[i] = tn__mt_sample(g, s, a, b);
        tn__gen_unlock(g);
    } else if (v) {   /* the counters of t's device, transformed here */
        const bool normal = s == TN__LOG_NORMAL;
        tn_tensor *u = tn__random(fn, normal ? NORMAL : UNIFORM, pshape, t->ndim, TN_F64, g, normal ? a : 0, normal ? b : 1, 0, 0, t->device);
        if (u && t->device != TN_CPU) u = tn_to(u, TN_CPU);   /* tn__random's results are the scope's */
        double *d = (double *)tn_data_ptr(v);
        const double *du = u ? (const double *)tn_data_ptr(u) : NULL;
        for (int64_t i = 0; du && i < tn_numel(v); i++) d[i] = tn__sample_of(s, du[i], a, b);
        if (!du) v = NULL;
    }
    /* to an integer dtype (geometric_) as C++'s static_cast: truncated to int64, then wrapped */
    if (v && !tn_dtype_is_floating(t->dtype)) v = tn_to_dtype(tn_to_dtype(v, TN_I64), t->dtype);
    else if (v) v = tn_to_dtype(v, t->dtype);
    if (v && t->device != TN_CPU) v = tn_to(v, t->device);
    const int rc = tn__fill_in_order(t, v, inv);
    tn_scope_end();
    return rc ? NULL : t;
}
/* normal_ and uniform_ in place: the values drawn as a new tensor of t's dims in t's
   memory order (TensorIterator's order) would be, then copied into t; normal_ of a
   non-contiguous t takes PyTorch's serial kernel (a normal double per element). */
static tn_tensor *tn__fill_random_(const char *fn, tn_tensor *t, tn_random_op op, double a, double b, tn_generator *gen) {
    if (tn_numel(t) == 0) return t;
    int64_t perm[TN_MAX_DIMS], inv[TN_MAX_DIMS], pshape[TN_MAX_DIMS];
    tn__memory_order(t, perm, inv, pshape);
    tn_scope_begin();
    tn_tensor *v = tn__random_ex(fn, op, pshape, t->ndim, t->dtype, gen, a, b, 0, 0, t->device, op == NORMAL && !tn_is_contiguous(t));
    const int rc = tn__fill_in_order(t, v, inv);
    tn_scope_end();
    return rc ? NULL : t;
}
static tn_tensor *tn__normal_impl(tn_tensor *t, double mean, double std, tn_generator *gen) {
    const char *fn = "tn_normal_";
    TN__CHECK_NULL(t);
    if (tn__check_cpu_dtype(fn, t)) return NULL;
    if (!(std >= 0)) return (tn_tensor *)tn__error("%s: normal expects std >= 0.0, but found std %g", fn, std);
    if (!tn_dtype_is_floating(t->dtype) && !tn_dtype_is_complex(t->dtype)) return (tn_tensor *)tn__error("%s: \"normal_kernel_cpu\" not implemented for '%s'", fn, tn__torch_type_name(t->dtype));
    return TN__AS(fn, tn__fill_random_(fn, t, NORMAL, mean, std, gen));
}
static tn_tensor *tn__uniform_impl(tn_tensor *t, double from, double to, tn_generator *gen) {
    const char *fn = "tn_uniform_";
    TN__CHECK_NULL(t);
    if (tn__check_cpu_dtype(fn, t)) return NULL;
    if (!tn_dtype_is_floating(t->dtype) && !tn_dtype_is_complex(t->dtype)) return (tn_tensor *)tn__error("%s: \"check_uniform_bounds\" not implemented for '%s'", fn, tn__torch_type_name(t->dtype));
    if (!(from <= to)) return (tn_tensor *)tn__error("%s: uniform_ expects to return a [from, to) range, but found from=%g > to=%g", fn, from, to);
    const tn_dtype part = t->dtype == TN_C64 ? TN_F32 : t->dtype == TN_C128 ? TN_F64 : t->dtype;   /* complex: each part's bounds */
    if (!(to - from <= tn__finfo_max(part)))
        return (tn_tensor *)tn__error("%s: uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%g and from=%g which result in to-from to exceed the limit",
                                      fn, tn__torch_type_name(part), to, from);
    return TN__AS(fn, tn__fill_random_(fn, t, UNIFORM, from, to, gen));
}
static int tn__check_sampler_target(const char *fn, const char *what, tn_tensor *t) {
    if (tn__check_cpu_dtype(fn, t)) return -1;
    if (!tn_dtype_is_floating(t->dtype))
        return TN__FAIL_INT("%s: %s distribution is a continuous probability distribution. dtype must be a floating point but you specified %s",
                            fn, what, tn__torch_type_name(t->dtype));
    return 0;
}
static tn_tensor *tn__exponential_impl(tn_tensor *t, double lambd, tn_generator *gen) {
    const char *fn = "tn_exponential_";
    TN__CHECK_NULL(t);
    if (tn__check_sampler_target(fn, "Exponential", t)) return NULL;
    /* 2025 PyTorch; 1.13 took lambda = 0 (all inf) */
    if (!(lambd > 0)) return (tn_tensor *)tn__error("%s: exponential_ expects lambda > 0.0, but found lambda=%g", fn, lambd);
    return TN__AS(fn, tn__sample_(fn, t, TN__EXPONENTIAL, lambd, 0, gen));
}
static tn_tensor *tn__geometric_impl(tn_tensor *t, double p, tn_generator *gen) {
    const char *fn = "tn_geometric_";
    TN__CHECK_NULL(t);
    if (tn__check_cpu_dtype(fn, t)) return NULL;
    if (tn_is_complex(t)) return (tn_tensor *)tn__error("%s: \"geometric_cpu\" not implemented for '%s'", fn, tn__torch_type_name(t->dtype));
    if (!(p > 0 && p < 1)) return (tn_tensor *)tn__error("%s: geometric_ expects p to be in (0, 1), but got p=%g", fn, p);
    if (t->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: \"geometric_cpu\" not implemented for 'Bool'", fn);
    return TN__AS(fn, tn__sample_(fn, t, TN__GEOMETRIC, p, 0, gen));
}
static tn_tensor *tn__cauchy_impl(tn_tensor *t, double median, double sigma, tn_generator *gen) {
    const char *fn = "tn_cauchy_";
    TN__CHECK_NULL(t);
    /* 2025 PyTorch checks sigma (1.13 drew with any) */
    if (!(sigma > 0)) return (tn_tensor *)tn__error("%s: cauchy_ expects sigma > 0.0, but found sigma=%g", fn, sigma);
    if (tn__check_sampler_target(fn, "Cauchy", t)) return NULL;
    return TN__AS(fn, tn__sample_(fn, t, TN__CAUCHY, median, sigma, gen));
}
static tn_tensor *tn__log_normal_impl(tn_tensor *t, double mean, double std, tn_generator *gen) {
    const char *fn = "tn_log_normal_";
    TN__CHECK_NULL(t);
    if (!(std > 0)) return (tn_tensor *)tn__error("%s: log_normal_ expects std > 0.0, but found std=%g", fn, std);
    if (tn__check_sampler_target(fn, "LogNormal", t)) return NULL;
    return TN__AS(fn, tn__sample_(fn, t, TN__LOG_NORMAL, mean, std, gen));
}

static int tn__float_digits(tn_dtype dt) { return dt == TN_F64 ? 53 : dt == TN_F32 ? 24 : dt == TN_F16 ? 11 : 8; }
/* static_cast<int64_t>(static_cast<scalar_t>(v)) for a float dtype of `digits` mantissa bits */
static int64_t tn__round_to_digits(int64_t v, tn_dtype dt) {
    if (dt == TN_F64) return (int64_t)(double)v;
    const float f = (float)v;
    if (dt == TN_F32) return (int64_t)f;
    int e;
    const double m = frexp((double)f, &e);   /* half: round f's significand to 11 (8) bits, to nearest even */
    return (int64_t)ldexp(nearbyint(ldexp(m, dt == TN_F16 ? 11 : 8)), e - (dt == TN_F16 ? 11 : 8));
}
/* PyTorch's update_from / update_to: a float dtype's from / to moved inside what it represents */
static int64_t tn__update_from(int64_t from, tn_dtype dt) {
    const int64_t fp1 = tn__round_to_digits(from + 1, dt);
    if (fp1 < from) {
        int64_t f = from + 1 < 0 ? -(from + 1) : from + 1;
        int n = 0;
        while (f >>= 1) ++n;
        from = fp1 + ((int64_t)1 << (n - tn__float_digits(dt) + 1));
    }
    return from;
}
static int64_t tn__update_to(int64_t to, tn_dtype dt) {
    const int64_t tm1 = tn__round_to_digits(to - 1, dt);
    if (tm1 >= to) {
        int64_t f = to - 1 < 0 ? -(to - 1) : to - 1;
        int n = 0;
        while (f >>= 1) ++n;
        to = tm1 - ((int64_t)1 << (n - tn__float_digits(dt) + 1));
    }
    return to;
}
static const char *tn__cpp_type_name(tn_dtype dt) {
    switch (dt) {
    case TN_F32: return "float";
    case TN_F64: return "double";
    case TN_F16: return "c10::Half";
    case TN_BF16: return "c10::BFloat16";
    case TN_I32: return "int";
    case TN_I64: return "long int";
    case TN_U8: return "unsigned char";
    case TN_I8: return "signed char";
    case TN_I16: return "short int";
    default: return "bool";
    }
}
/* random_(from, to): PyTorch's random_from_to_impl (checks, then uniform_int_from_to draws:
   random() % range + from, random64() from a 2^32 range in int64/double/float/bfloat16);
   to TN_NONE: the dtype's largest value (2^digits for a float one) included; from TN_NONE
   (INT64_MIN) too: all 64 bits of random64(), in int64, double, float or bfloat16. */
static tn_tensor *tn__random_impl(tn_tensor *t, int64_t from, int64_t to, tn_generator *gen) {
    const char *fn = "tn_random_";
    const tn_dtype dt = t->dtype;
    const bool fl = tn_dtype_is_floating(dt), full = from == INT64_MIN && to == TN_NONE;
    int64_t last = 0;   /* the largest value drawn */
    if (to != TN_NONE) {
        if (from >= to) return (tn_tensor *)tn__error("%s: random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld", fn, (long long)from, (long long)to);
        if (fl) {
            from = tn__update_from(from, dt);
            to = tn__update_to(to, dt);
            if (from >= to)
                return (tn_tensor *)tn__error("%s: random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=%lld >= to=%lld",
                                              fn, (long long)from, (long long)to);
        }
        last = to - 1;
    } else if (!full) {
        last = dt == TN_I64 ? INT64_MAX : !fl ? (int64_t)tn__int_highest(dt) : (int64_t)1 << tn__float_digits(dt);
        if (fl) {
            from = tn__update_from(from, dt);
            if (from >= last)
                return (tn_tensor *)tn__error("%s: random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from=%lld > to_inc=%lld",
                                              fn, (long long)from, (long long)last);
        }
    } else if (dt == TN_BOOL || dt == TN_F16) {   /* not in the kernel's dispatch */
        return (tn_tensor *)tn__error("%s: \"random_full_64_bits_range_kernel_cpu\" not implemented for '%s'", fn, tn__torch_type_name(dt));
    } else if (dt != TN_I64 && dt != TN_F64 && dt != TN_F32 && dt != TN_BF16) {
        return (tn_tensor *)tn__error("%s: random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16", fn);
    }
    if (!full) {   /* check_from_to_in_range: from and to - 1 within the dtype */
        const bool narrow = !fl && dt != TN_I64;   /* bool and the integers but int64 */
        const double lo = narrow ? tn__int_lowest(dt) : dt == TN_F16 ? -65504.0 : dt == TN_BF16 ? -3.3895313892515355e38 : -1e300;
        const double hi = narrow ? tn__int_highest(dt) : -lo;
        if (!((double)from >= lo && (double)from <= hi)) return (tn_tensor *)tn__error("%s: from is out of bounds for %s", fn, tn__cpp_type_name(dt));
        if (!((double)last >= lo && (double)last <= hi)) return (tn_tensor *)tn__error("%s: to - 1 is out of bounds for %s", fn, tn__cpp_type_name(dt));
    }
    const uint64_t range = full ? 0 : (uint64_t)last - (uint64_t)from + 1;   /* 0: all 64 bits */
    if (tn_numel(t) == 0) return t;
    tn_generator *g = gen ? gen : &tn__default_gen;
    int64_t perm[TN_MAX_DIMS], inv[TN_MAX_DIMS], pshape[TN_MAX_DIMS];
    tn__memory_order(t, perm, inv, pshape);
    tn_scope_begin();
    /* the values in memory order, on t's device (Philox counters there); then into t */
    tn_tensor *v = tn__random(fn, RANDINT, pshape, t->ndim, dt, g, (double)from, (double)last + 1, full ? 0 : from, range, t->device);
    const int rc = tn__fill_in_order(t, v, inv);   /* v: the scope's */
    tn_scope_end();
    return rc ? NULL : t;
}
static tn_tensor *tn__random_fill(tn_tensor *t, int64_t from, int64_t to, tn_generator *gen) {
    TN__CHECK_NULL(t);
    if (tn__check_cpu_dtype("tn_random_", t)) return NULL;
    if (tn_is_complex(t)) return (tn_tensor *)tn__error("tn_random_: check_random_bounds handles only integral, floating-point and boolean types (got %s)", tn_dtype_name(t->dtype));
    return TN__AS("tn_random_", tn__random_impl(t, from, to, gen));
}
/* The in-place fills' keyword forms (PyTorch's names and defaults, the generator a field) */
TNDEF tn_tensor *tn_normal__opts(tn_tensor *t, tn_normal_fill_opts o) { return tn__normal_impl(t, o.mean, o.std, o.generator); }
TNDEF tn_tensor *tn_normal__str(tn_tensor *t, const char *options) { TN__KW_STR(tn_normal_fill_opts, normal_fill, "tn_normal_", options, tn_normal__opts(t, o)); }
TNDEF tn_tensor *tn_uniform__opts(tn_tensor *t, tn_uniform_fill_opts o) { return tn__uniform_impl(t, o.from, o.to, o.generator); }
TNDEF tn_tensor *tn_uniform__str(tn_tensor *t, const char *options) { TN__KW_STR(tn_uniform_fill_opts, uniform_fill, "tn_uniform_", options, tn_uniform__opts(t, o)); }
TNDEF tn_tensor *tn_exponential__opts(tn_tensor *t, tn_exponential_fill_opts o) { return tn__exponential_impl(t, o.lambd, o.generator); }
TNDEF tn_tensor *tn_exponential__str(tn_tensor *t, const char *options) { TN__KW_STR(tn_exponential_fill_opts, exponential_fill, "tn_exponential_", options, tn_exponential__opts(t, o)); }
TNDEF tn_tensor *tn_cauchy__opts(tn_tensor *t, tn_cauchy_fill_opts o) { return tn__cauchy_impl(t, o.median, o.sigma, o.generator); }
TNDEF tn_tensor *tn_cauchy__str(tn_tensor *t, const char *options) { TN__KW_STR(tn_cauchy_fill_opts, cauchy_fill, "tn_cauchy_", options, tn_cauchy__opts(t, o)); }
TNDEF tn_tensor *tn_log_normal__opts(tn_tensor *t, tn_log_normal_fill_opts o) { return tn__log_normal_impl(t, o.mean, o.std, o.generator); }
TNDEF tn_tensor *tn_log_normal__str(tn_tensor *t, const char *options) { TN__KW_STR(tn_log_normal_fill_opts, log_normal_fill, "tn_log_normal_", options, tn_log_normal__opts(t, o)); }
TNDEF tn_tensor *tn_random__opts(tn_tensor *t, tn_random_fill_opts o) { return tn__random_fill(t, o.from, o.to, o.generator); }
TNDEF tn_tensor *tn_random__str(tn_tensor *t, const char *options) { TN__KW_STR(tn_random_fill_opts, random_fill, "tn_random_", options, tn_random__opts(t, o)); }
TNDEF tn_tensor *tn_geometric__opts(tn_tensor *t, double p, tn_generator_fill_opts o) { return tn__geometric_impl(t, p, o.generator); }
TNDEF tn_tensor *tn_geometric__str(tn_tensor *t, double p, const char *options) { TN__KW_STR(tn_generator_fill_opts, generator_fill, "tn_geometric_", options, tn_geometric__opts(t, p, o)); }
TN__NO_CONTRACT_END
