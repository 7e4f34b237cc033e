/* ---- half precision: float16 and bfloat16 scalars ----
   The conversions are c10's (fp16_ieee_from_fp32_value, round_to_nearest_even), so every
   bit pattern converts as in PyTorch: round to nearest even, subnormals, inf, and NaN
   (float16: the quiet NaN 0x7E00 with the sign; bfloat16: 0xFFFF, as PyTorch's tensor conversions). Storage only: values
   are computed in float32 registers (the CPU backend stages half operands in float32). */
static float tn__bits_f32(uint32_t w) { float f; memcpy(&f, &w, 4); return f; }
static uint32_t tn__f32_bits(float f) { uint32_t w; memcpy(&w, &f, 4); return w; }

/* static, so the conversion loops below inline and vectorise them; the TNDEF names wrap them */
static inline float tn__h2f(uint16_t h) {
    const uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, two_w = w + w;
    /* normal: the exponent rebased by a multiply; subnormal: the mantissa minus a magic 0.5 */
    const float normalized = tn__bits_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    const float denormalized = tn__bits_f32((two_w >> 17) | (126u << 23)) - 0.5f;
    const uint32_t sub_mask = 0u - (uint32_t)(two_w < (1u << 27));
    return tn__bits_f32(sign | (sub_mask & tn__f32_bits(denormalized)) | (~sub_mask & tn__f32_bits(normalized)));
}
static inline uint16_t tn__f2h(float f) {
    /* scaling up then down rounds the mantissa to 10 bits in the FPU (round to nearest even) */
    float base = (fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
    const uint32_t w = tn__f32_bits(f), shl1_w = w + w, sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    bias = bias > 0x71000000u ? bias : 0x71000000u;   /* branch-free throughout: the loops vectorise */
    base = tn__bits_f32((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = tn__f32_bits(base);
    const uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
    const uint32_t nan_mask = 0u - (uint32_t)(shl1_w > 0xFF000000u);
    return (uint16_t)((sign >> 16) | (nan_mask & 0x7E00u) | (~nan_mask & nonsign));
}
static inline float tn__bf2f(uint16_t h) { return tn__bits_f32((uint32_t)h << 16); }
static inline uint16_t tn__f2bf(float f) {
    if (f != f) return 0xFFFF;   /* PyTorch's tensor conversions (its vector kernels); c10's scalar one gives 0x7FC0 */
    const uint32_t w = tn__f32_bits(f);
    return (uint16_t)((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}
TNDEF float tn_half_to_float(uint16_t bits) { return tn__h2f(bits); }
TNDEF uint16_t tn_float_to_half(float value) { return tn__f2h(value); }
TNDEF float tn_bfloat16_to_float(uint16_t bits) { return tn__bf2f(bits); }
TNDEF uint16_t tn_float_to_bfloat16(float value) { return tn__f2bf(value); }
static bool tn__is_half(tn_dtype d) { return d == TN_F16 || d == TN_BF16; }
/* torch.finfo(d).max of a floating dtype */
static double tn__finfo_max(tn_dtype d) { return d == TN_F32 ? FLT_MAX : d == TN_F16 ? 65504.0 : d == TN_BF16 ? 0x1.FEp127 : DBL_MAX; }

/* Strided conversions between a half dtype and float32 (the staging copies). */
static void tn__half_from_f32(char **p, const int64_t *s, int64_t n, void *ctx) {
    const bool bf = *(const tn_dtype *)ctx == TN_BF16;
    if (s[0] == 2 && s[1] == 4) {
        uint16_t *o = (uint16_t *)p[0]; const float *in = (const float *)p[1];
        if (bf) for (int64_t i = 0; i < n; i++) o[i] = tn__f2bf(in[i]);
        else for (int64_t i = 0; i < n; i++) o[i] = tn__f2h(in[i]);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        float v = *(const float *)(p[1] + i * s[1]);
        *(uint16_t *)(p[0] + i * s[0]) = bf ? tn__f2bf(v) : tn__f2h(v);
    }
}
static void tn__f32_from_half(char **p, const int64_t *s, int64_t n, void *ctx) {
    const bool bf = *(const tn_dtype *)ctx == TN_BF16;
    if (s[0] == 4 && s[1] == 2) {
        float *o = (float *)p[0]; const uint16_t *in = (const uint16_t *)p[1];
        if (bf) for (int64_t i = 0; i < n; i++) o[i] = tn__bf2f(in[i]);
        else for (int64_t i = 0; i < n; i++) o[i] = tn__h2f(in[i]);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = *(const uint16_t *)(p[1] + i * s[1]);
        *(float *)(p[0] + i * s[0]) = bf ? tn__bf2f(h) : tn__h2f(h);
    }
}
/* Element conversions where one side is half and the other is not float32 (rare: a
   double, an integer or the other half type): through float, as c10 converts. */
typedef struct { tn_dtype to, from; } tn__half_cast;
static float tn__load_as_float(const char *p, tn_dtype d) {
    switch (d) {
    case TN_F32: return *(const float *)p;
    case TN_F64: return (float)*(const double *)p;
    case TN_I32: return (float)*(const int32_t *)p;
    case TN_I64: return (float)*(const int64_t *)p;
    case TN_U8: return (float)*(const uint8_t *)p;
    case TN_I8: return (float)*(const int8_t *)p;
    case TN_I16: return (float)*(const int16_t *)p;
    case TN_BOOL: return *(const bool *)p ? 1.0f : 0.0f;
    case TN_F16: return tn__h2f(*(const uint16_t *)p);
    default: return tn__bf2f(*(const uint16_t *)p);
    }
}
static void tn__cast_half_any(char **p, const int64_t *s, int64_t n, void *ctx) {
    const tn__half_cast *c = (const tn__half_cast *)ctx;
    for (int64_t i = 0; i < n; i++) {
        const float v = tn__load_as_float(p[1] + i * s[1], c->from);
        char *o = p[0] + i * s[0];
        switch (c->to) {
        case TN_F32: *(float *)o = v; break;
        case TN_F64: *(double *)o = v; break;
        case TN_I32: *(int32_t *)o = v != v || v >= 2147483648.0f || v < -2147483648.0f ? INT32_MIN : (int32_t)v; break;
        case TN_I64: *(int64_t *)o = v != v || v >= 9.2233720368547758e18f || v < -9.2233720368547758e18f ? INT64_MIN : (int64_t)v; break;
        case TN_U8: *(uint8_t *)o = (uint8_t)(uint64_t)(v != v || v >= 9.2233720368547758e18f || v < -9.2233720368547758e18f ? INT64_MIN : (int64_t)v); break;
        case TN_I8: *(int8_t *)o = tn__cvt_i8_flt(v); break;     /* through int32, as PyTorch */
        case TN_I16: *(int16_t *)o = tn__cvt_i16_flt(v); break;
        case TN_BOOL: *(bool *)o = v != 0; break;
        case TN_F16: *(uint16_t *)o = tn__f2h(v); break;
        default: *(uint16_t *)o = v != v ? 0x7FC0 : tn__f2bf(v); break;   /* c10's scalar NaN, as PyTorch's non-float32 sources */
        }
    }
}
