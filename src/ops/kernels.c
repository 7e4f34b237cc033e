TNDEF int tn_broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out) {
    if (na < 0 || na > TN_MAX_DIMS || nb < 0 || nb > TN_MAX_DIMS || (na && !a) || (nb && !b) || !out)
        return TN__FAIL_INT("tn_broadcast_shapes: ndim %d and %d must be in [0, %d] with non-NULL shapes", na, nb, TN_MAX_DIMS);
    int n = tn__broadcast(a, na, b, nb, out);
    if (n < 0) return TN__FAIL_INT("tn_broadcast_shapes: shapes %s and %s cannot be broadcast", tn__shape_str(a, na), tn__shape_str(b, nb));
    return n;
}

/* expf and tanhf the compiler can vectorise (plain arithmetic, no libm call): Cephes' expf
   polynomial after rounding x / ln 2 with the 1.5 * 2^23 trick, within 2 ulp; exp(x) is 0 below
   -87.3 (so -inf gives 0) and exp(88) above 88, NaN stays NaN. The attention's, the LSTM's
   (src/modules/rnn.c) and cross-entropy's inner loops run on them; libm's scalar calls were a
   fifth of an LSTM step.
   Always inlined: an LSTM gate loop with five calls to an out-of-line copy stayed scalar (14 %
   of the step); tn__expf_fast and tn__tanhf_fast are the same, extern for the tests. */
TN__ALWAYS_INLINE float tn__expf_v(float x) {
    const float lo = -87.33654f, hi = 88.0f;
    const float xc = x > lo ? (x < hi ? x : hi) : lo;
    const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) * (1 << 23);
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x != x ? x : x < lo ? 0.0f : p * scale;
}
/* tanh as 1 - 2 / (exp(2x) + 1), and its Taylor series near 0 where that cancels */
TN__ALWAYS_INLINE float tn__tanhf_v(float x) {
    const float x2 = x * x;
    return x2 < 0.00390625f ? x * (1.0f + x2 * (-0.333333333f + x2 * 0.133333333f)) : 1.0f - 2.0f / (tn__expf_v(2.0f * x) + 1.0f);
}

#ifdef TN_TESTING
float tn__expf_fast(float x) { return tn__expf_v(x); }
float tn__tanhf_fast(float x) { return tn__tanhf_v(x); }
#endif

/* Kernel loops. Each operand p[k] advances by s[k] bytes; the first branch is the
   contiguous case, written so the compiler vectorises it. */
#define TN__MAP1(TO, TI, EXPR) do { \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI)) { \
        TO *o_ = (TO *)p[0]; const TI *i_ = (const TI *)p[1]; \
        for (int64_t i = 0; i < n; i++) { TI x = i_[i]; o_[i] = (TO)(EXPR); } \
    } else for (int64_t i = 0; i < n; i++) { \
        TI x = *(const TI *)(p[1] + i * s[1]); *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); } \
} while (0)
#define TN__MAP2(TO, TI, EXPR) do { \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI) && s[2] == (int64_t)sizeof(TI)) { \
        TO *o_ = (TO *)p[0]; const TI *a_ = (const TI *)p[1], *b_ = (const TI *)p[2]; \
        for (int64_t i = 0; i < n; i++) { TI a = a_[i], b = b_[i]; o_[i] = (TO)(EXPR); } \
    } else if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI) && s[2] == 0) { /* tensor op scalar */ \
        TO *o_ = (TO *)p[0]; const TI *a_ = (const TI *)p[1]; const TI b = *(const TI *)p[2]; \
        for (int64_t i = 0; i < n; i++) { TI a = a_[i]; o_[i] = (TO)(EXPR); } \
    } else for (int64_t i = 0; i < n; i++) { \
        TI a = *(const TI *)(p[1] + i * s[1]), b = *(const TI *)(p[2] + i * s[2]); \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); } \
} while (0)
#define TN__MAP3(TO, T1, TI, EXPR) do { for (int64_t i = 0; i < n; i++) { \
    T1 c = *(const T1 *)(p[1] + i * s[1]); TI a = *(const TI *)(p[2] + i * s[2]), b = *(const TI *)(p[3] + i * s[3]); \
    *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); } } while (0)

typedef struct tn__kctx { int op; double alpha, params[3]; int failed; } tn__kctx;
/* x < 0 that is silent (no "always false" warning) for unsigned types */
#define TN__ISNEG(x) ((x) < 1 && (x) != 0)

/* ---- unary kernels ---- */
/* @template TN__DEFINE_UNARY_FLOAT(T, S, F) */
static void tn__unary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    const T lo = (T)c->params[0], hi = (T)c->params[1], p2 = (T)c->params[2];
    switch ((tn_unary_op)c->op) {
    case NEG: TN__MAP1(T, T, -x); break;
    case ABS: TN__MAP1(T, T, fabs##F(x)); break;
    case SIGN: TN__MAP1(T, T, (T)((x > 0) - (x < 0))); break; /* sign(NaN) = 0, as PyTorch */
    case SQUARE: TN__MAP1(T, T, x * x); break;
    case RELU: TN__MAP1(T, T, x < 0 ? (T)0 : x); break;
    case FLOOR: TN__MAP1(T, T, floor##F(x)); break;
    case CEIL: TN__MAP1(T, T, ceil##F(x)); break;
    case ROUND: TN__MAP1(T, T, nearbyint##F(x)); break;
    case TRUNC: TN__MAP1(T, T, trunc##F(x)); break;
    case FRAC: TN__MAP1(T, T, x - trunc##F(x)); break;
    case CLAMP: TN__MAP1(T, T, (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x)); break;
    case NAN_TO_NUM: TN__MAP1(T, T, x != x ? lo : x == (T)INFINITY ? hi : x == -(T)INFINITY ? p2 : x); break;
    case EXP: TN__MAP1(T, T, exp##F(x)); break;
    case EXP2: TN__MAP1(T, T, exp2##F(x)); break;
    case LOG: TN__MAP1(T, T, log##F(x)); break;
    case LOG2: TN__MAP1(T, T, log2##F(x)); break;
    case LOG10: TN__MAP1(T, T, log10##F(x)); break;
    case LOG1P: TN__MAP1(T, T, log1p##F(x)); break;
    case EXPM1: TN__MAP1(T, T, expm1##F(x)); break;
    case SQRT: TN__MAP1(T, T, sqrt##F(x)); break;
    case RSQRT: TN__MAP1(T, T, (T)1 / sqrt##F(x)); break;
    case RECIPROCAL: TN__MAP1(T, T, (T)1 / x); break;
    /* float32: SLEEF's sinf8_u10 / cosf8_u10 as torch (src/ops/sleef.c) */
    case SIN: if (sizeof(T) == sizeof(float)) tn__sleef_trigf_run(false, p[0], s[0], p[1], s[1], n); else TN__MAP1(T, T, sin##F(x)); break;
    case COS: if (sizeof(T) == sizeof(float)) tn__sleef_trigf_run(true, p[0], s[0], p[1], s[1], n); else TN__MAP1(T, T, cos##F(x)); break;
    case TAN: TN__MAP1(T, T, tan##F(x)); break;
    case ASIN: TN__MAP1(T, T, asin##F(x)); break;
    case ACOS: TN__MAP1(T, T, acos##F(x)); break;
    case ATAN: TN__MAP1(T, T, atan##F(x)); break;
    case SINH: TN__MAP1(T, T, sinh##F(x)); break;
    case COSH: TN__MAP1(T, T, cosh##F(x)); break;
    case TANH: TN__MAP1(T, T, tanh##F(x)); break;
    case ASINH: TN__MAP1(T, T, asinh##F(x)); break;
    case ACOSH: TN__MAP1(T, T, acosh##F(x)); break;
    case ATANH: TN__MAP1(T, T, atanh##F(x)); break;
    case SIGMOID: TN__MAP1(T, T, tn_sigmoid_##S(x)); break;
    case GELU: TN__MAP1(T, T, tn_gelu_##S(x)); break;
    case GELU_TANH: TN__MAP1(T, T, tn_gelu_tanh_##S(x)); break;
    case SILU: TN__MAP1(T, T, tn_silu_##S(x)); break;
    case SOFTPLUS: TN__MAP1(T, T, tn_softplus_##S(x, lo, hi)); break;
    case LEAKY_RELU: TN__MAP1(T, T, tn_leaky_relu_##S(x, lo)); break;
    case ELU: TN__MAP1(T, T, tn_elu_##S(x, lo, hi, p2)); break;
    case HARDTANH: TN__MAP1(T, T, x != x ? x : tn_hardtanh_##S(x, lo, hi)); break;
    case MISH: TN__MAP1(T, T, tn_mish_##S(x)); break;
    case HARDSWISH: TN__MAP1(T, T, tn_hardswish_##S(x)); break;
    case HARDSIGMOID: TN__MAP1(T, T, tn_hardsigmoid_##S(x)); break;
    case ERF: TN__MAP1(T, T, erf##F(x)); break;
    case ERFC: TN__MAP1(T, T, erfc##F(x)); break;
    case ERFINV: TN__MAP1(T, T, tn_erfinv_f64((double)x)); break;
    case LGAMMA: TN__MAP1(T, T, tn_lgamma_f64((double)x)); break;
    case DIGAMMA: TN__MAP1(T, T, tn_digamma_f64((double)x)); break;
    case POLYGAMMA: { const int64_t order = (int64_t)c->params[0]; if (order == 1) TN__MAP1(T, T, tn_trigamma_##S(x)); else TN__MAP1(T, T, tn_polygamma_f64(order, (double)x)); break; }
    case I0: TN__MAP1(T, T, tn_i0_f64((double)x)); break;
    case I0E: TN__MAP1(T, T, tn_i0e_f64((double)x)); break;
    case I1: TN__MAP1(T, T, tn_i1_f64((double)x)); break;
    case I1E: TN__MAP1(T, T, tn_i1e_f64((double)x)); break;
    case SINC: TN__MAP1(T, T, tn_sinc_##S(x)); break;
    case LOGIT: TN__MAP1(T, T, tn_logit_##S(x, lo)); break;
    case NDTR: TN__MAP1(T, T, tn_ndtr_f64((double)x)); break;
    case NDTRI: TN__MAP1(T, T, tn_ndtri_f64((double)x)); break;
    case LOG_NDTR: TN__MAP1(T, T, tn_log_ndtr_f64((double)x)); break;
    case ERFCX: TN__MAP1(T, T, tn_erfcx_f64((double)x)); break;
    case ENTR: TN__MAP1(T, T, tn_entr_f64((double)x)); break;
    case BESSEL_J0: TN__MAP1(T, T, tn_bessel_j0_f64((double)x)); break;
    case BESSEL_J1: TN__MAP1(T, T, tn_bessel_j1_f64((double)x)); break;
    case BESSEL_Y0: TN__MAP1(T, T, tn_bessel_y_f64(0, (double)x)); break;
    case BESSEL_Y1: TN__MAP1(T, T, tn_bessel_y_f64(1, (double)x)); break;
    case MODIFIED_BESSEL_I0: TN__MAP1(T, T, tn_i0_f64((double)x)); break;
    case MODIFIED_BESSEL_I1: TN__MAP1(T, T, tn_i1_f64((double)x)); break;
    case MODIFIED_BESSEL_K0: TN__MAP1(T, T, tn_bessel_k_f64(0, (double)x, false)); break;
    case MODIFIED_BESSEL_K1: TN__MAP1(T, T, tn_bessel_k_f64(1, (double)x, false)); break;
    case SCALED_MODIFIED_BESSEL_K0: TN__MAP1(T, T, tn_bessel_k_f64(0, (double)x, true)); break;
    case SCALED_MODIFIED_BESSEL_K1: TN__MAP1(T, T, tn_bessel_k_f64(1, (double)x, true)); break;
    case SPHERICAL_BESSEL_J0: TN__MAP1(T, T, tn_spherical_bessel_j0_f64((double)x)); break;
    case AIRY_AI: TN__MAP1(T, T, tn_airy_ai_f64((double)x)); break;
    case FREXP_MANTISSA: { int e; TN__MAP1(T, T, frexp##F(x, &e)); break; }
    case FREXP_EXPONENT: { int e; TN__MAP1(T, T, ((void)frexp##F(x, &e), x == x && x != (T)INFINITY && x != -(T)INFINITY ? (T)e : (T)0)); break; }
    case SIGNBIT: TN__MAP1(bool, T, signbit(x)); break;
    case ISNAN: TN__MAP1(bool, T, x != x); break;
    case ISINF: TN__MAP1(bool, T, x == (T)INFINITY || x == -(T)INFINITY); break;
    case ISFINITE: TN__MAP1(bool, T, x == x && x != (T)INFINITY && x != -(T)INFINITY); break;
    case LOGICAL_NOT: TN__MAP1(bool, T, x == 0); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    } }
/* @end TN__DEFINE_UNARY_FLOAT */
TN__DEFINE_UNARY_FLOAT(float, f32, f)
TN__DEFINE_UNARY_FLOAT(double, f64, )

/* Integers wrap on overflow as PyTorch does: arithmetic goes through the unsigned type U
   (signed overflow would be undefined in C). */
/* @template TN__DEFINE_UNARY_INT(T, S, U) */
static void tn__unary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    const double lo = c->params[0], hi = c->params[1];
    switch ((tn_unary_op)c->op) {
    case NEG: TN__MAP1(T, T, (U)0 - (U)x); break;
    case ABS: TN__MAP1(T, T, TN__ISNEG(x) ? (T)((U)0 - (U)x) : x); break;
    case SIGN: TN__MAP1(T, T, (x > 0) - TN__ISNEG(x)); break;
    case SQUARE: TN__MAP1(T, T, (U)x * (U)x); break;
    case RELU: TN__MAP1(T, T, TN__ISNEG(x) ? 0 : x); break;
    case FLOOR: case CEIL: case ROUND: case TRUNC: case NAN_TO_NUM: TN__MAP1(T, T, x); break;
    case CLAMP: TN__MAP1(T, T, (double)x > hi || lo > hi ? (T)hi : (double)x < lo ? (T)lo : x); break; /* min(max(x, lo), hi) */
    case BITWISE_NOT: TN__MAP1(T, T, ~x); break;
    case LOGICAL_NOT: TN__MAP1(bool, T, x == 0); break;
    case SIGNBIT: TN__MAP1(bool, T, TN__ISNEG(x)); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    } }
/* @end TN__DEFINE_UNARY_INT */
TN__DEFINE_UNARY_INT(int32_t, i32, uint32_t)
TN__DEFINE_UNARY_INT(int64_t, i64, uint64_t)
TN__DEFINE_UNARY_INT(uint8_t, u8, uint8_t)
TN__DEFINE_UNARY_INT(int8_t, i8, uint32_t)   /* int8/int16 wrap through uint32_t: a uint16_t product promotes to int and could overflow */
TN__DEFINE_UNARY_INT(int16_t, i16, uint32_t)

static void tn__unary_b(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    switch ((tn_unary_op)c->op) {
    case SIGN: case FLOOR: case CEIL: case ROUND: case TRUNC: case NAN_TO_NUM: TN__MAP1(bool, bool, x); break;
    case CLAMP: TN__MAP1(bool, bool, (double)x < c->params[0] ? c->params[0] != 0 : (double)x > c->params[1] ? c->params[1] != 0 : x); break;
    case BITWISE_NOT: case LOGICAL_NOT: TN__MAP1(bool, bool, !x); break;
    case SIGNBIT: TN__MAP1(bool, bool, false && x); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    }
}

static tn__loop_fn tn__pick_loop(tn_dtype d, tn__loop_fn f32, tn__loop_fn f64, tn__loop_fn i32, tn__loop_fn i64, tn__loop_fn u8, tn__loop_fn b,
                                 tn__loop_fn i8, tn__loop_fn i16) {
    switch (d) {
    case TN_F32: return f32; case TN_F64: return f64; case TN_I32: return i32;
    case TN_I64: return i64; case TN_U8: return u8; case TN_BOOL: return b;
    case TN_I8: return i8; case TN_I16: return i16; default: return NULL;
    }
}

/* float32 sin / cos of an input whose strides are out of row-major order (a transpose):
   torch keeps that layout for its result and walks memory order, so SLEEF's groups of 8
   (src/ops/sleef.c) fall along memory there. Computed so here, into a buffer of that
   layout, then copied into the row-major out; false: not such a case (or no memory). */
static bool tn__trig_in_memory_order(tn_unary_op op, tn_tensor *out, tn_tensor *x, tn__kctx *c) {
    if ((op != SIN && op != COS) || x->dtype != TN_F32 || out->dtype != TN_F32 || out->ndim != x->ndim) return false;
    int nd = 0, dims[TN_MAX_DIMS];
    bool ordered = true;
    for (int i = 0; i < x->ndim; i++) {
        if (x->shape[i] == 1) continue;
        if (x->strides[i] <= 0) return false;   /* broadcast: torch keeps the row-major order */
        if (nd && x->strides[dims[nd - 1]] < x->strides[i]) ordered = false;
        dims[nd++] = i;
    }
    if (ordered) return false;
    for (int i = 1; i < nd; i++)   /* x's dims by decreasing stride (stable) */
        for (int j = i; j > 0 && x->strides[dims[j - 1]] < x->strides[dims[j]]; j--) { const int t = dims[j]; dims[j] = dims[j - 1]; dims[j - 1] = t; }
    const int64_t n = tn_numel(x);
    float *buf = (float *)TN_MALLOC((size_t)n * sizeof(float));   /* n floats exist already in x */
    if (!buf) return false;
    tn__iter it, back;
    int64_t bs[TN_MAX_DIMS], st = (int64_t)sizeof(float);
    it.ndim = nd;
    it.nops = 2;
    it.data[0] = (char *)buf;
    it.data[1] = (char *)tn_data_ptr(x);
    for (int k = nd - 1; k >= 0; k--) {
        it.shape[k] = x->shape[dims[k]];
        it.strides[0][k] = bs[dims[k]] = st;
        it.strides[1][k] = x->strides[dims[k]] * (int64_t)sizeof(float);
        st *= x->shape[dims[k]];
    }
    tn__iter_run_par(&it, tn__unary_f32, c, -1);
    tn__iter_init(&back, out->shape, out->ndim);
    tn__iter_add(&back, out);
    back.nops = 2;
    back.data[1] = (char *)buf;
    for (int i = 0; i < out->ndim; i++) back.strides[1][i] = x->shape[i] == 1 ? 0 : bs[i];
    int64_t es = (int64_t)sizeof(float);
    tn__iter_run_par(&back, tn__copy_bytes, &es, -1);
    TN_FREE(buf);
    return true;
}

static int tn__cpu_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params) {
    tn__kctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    if (params) memcpy(c.params, params, sizeof c.params);
    if (tn_dtype_is_complex(x->dtype)) {
        tn__iter it;
        tn__iter_init(&it, out->shape, out->ndim);
        tn__iter_add(&it, out);
        tn__iter_add(&it, x);
        if (!tn__complex_unary_ok(op) || tn__complex_run(&it, x->dtype == TN_C64 ? tn__unary_c64 : tn__unary_c128, op, 0))
            return TN__FAIL_INT("%s: not implemented for dtype %s", tn_unary_op_name(op), tn_dtype_name(x->dtype));
        return 0;
    }
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__unary_f32, tn__unary_f64, tn__unary_i32, tn__unary_i64, tn__unary_u8, tn__unary_b, tn__unary_i8, tn__unary_i16);
    if (!fn) return TN__FAIL_INT("%s: dtype %s is not supported on the CPU", tn_unary_op_name(op), tn_dtype_name(x->dtype));
    if (tn__trig_in_memory_order(op, out, x, &c)) return 0;
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    tn__iter_add(&it, x);
    tn__iter_run_par(&it, fn, &c, -1);
    if (c.failed) return TN__FAIL_INT("%s: not implemented for dtype %s", tn_unary_op_name(op), tn_dtype_name(x->dtype));
    return 0;
}

/* ---- binary kernels ---- */
/* Python's floor division and modulo for floats (as CPython and PyTorch compute them). */
#define TN__DEFINE_FLOAT_DIVMOD(T, S, F) \
    static T tn__floordiv_##S(T a, T b) { \
        if (b == 0) return a / b; \
        T mod = fmod##F(a, b), div = (a - mod) / b; \
        if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1; \
        if (div == 0) return copysign##F((T)0, a / b); \
        T fl = floor##F(div); \
        return div - fl > (T)0.5 ? fl + 1 : fl; } \
    static T tn__remainder_##S(T a, T b) { \
        T r = fmod##F(a, b); \
        return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r; }
TN__DEFINE_FLOAT_DIVMOD(float, f32, f)
TN__DEFINE_FLOAT_DIVMOD(double, f64, )

/* POW's alpha: 1 for a tensor exponent (tn_pow: PyTorch's pow_tensor_tensor, no special
   exponents, SLEEF on each 16, powf on the rest), else the Python-number exponent itself
   (tn_pow_scalar: pow_tensor_scalar's special exponents 2, 3, -2 as products, 0.5, -0.5, -1
   as sqrt, rsqrt, reciprocal; otherwise SLEEF with the float exponent on each 16 and
   (float)pow(double, double exponent) on the rest). An exponent of 1 passes as a tensor's:
   torch copies, SLEEF and powf give x itself. */
static void tn__pow_f32(char **p, const int64_t *s, int64_t n, double alpha) {
    const bool scalar = alpha != 1;
    const float e = (float)alpha;
    if (scalar) {
        if (alpha == 2) { TN__MAP2(float, float, ((void)b, a * a)); return; }
        if (alpha == 3) { TN__MAP2(float, float, ((void)b, a * a * a)); return; }
        if (alpha == -2) { TN__MAP2(float, float, ((void)b, 1.0f / (a * a))); return; }
        if (alpha == 0.5) { TN__MAP2(float, float, ((void)b, sqrtf(a))); return; }
        if (alpha == -0.5) { TN__MAP2(float, float, ((void)b, 1.0f / sqrtf(a))); return; }
        if (alpha == -1) { TN__MAP2(float, float, ((void)b, 1.0f / a)); return; }
    }
    /* torch's vectorized_loop: the output and the operands contiguous, one of its inputs may
       be a broadcast scalar (pow_tensor_scalar has one input, the base; pow_tensor_tensor two) */
    const bool va = s[1] == 4 || s[1] == 0, vb = s[2] == 4 || s[2] == 0;
    const int64_t nv = s[0] == 4 && va && (scalar || (vb && (s[1] | s[2]) != 0)) ? n / 16 * 16 : 0;
    if (nv) tn__sleef_powf_run(p[0], 4, p[1], s[1], scalar ? (const char *)&e : p[2], scalar ? 0 : s[2], nv);
    for (int64_t i = nv; i < n; i++) {
        const float a = *(const float *)(p[1] + i * s[1]);
        *(float *)(p[0] + i * s[0]) = scalar ? (float)pow((double)a, alpha) : powf(a, *(const float *)(p[2] + i * s[2]));
    }
}
/* float64: the special exponents as there; libm's pow for the rest (torch: Sleef_powd4_u10) */
static void tn__pow_f64(char **p, const int64_t *s, int64_t n, double alpha) {
    if (alpha == 2) TN__MAP2(double, double, ((void)b, a * a));
    else if (alpha == 3) TN__MAP2(double, double, ((void)b, a * a * a));
    else if (alpha == -2) TN__MAP2(double, double, ((void)b, 1.0 / (a * a)));
    else if (alpha == 0.5) TN__MAP2(double, double, ((void)b, sqrt(a)));
    else if (alpha == -0.5) TN__MAP2(double, double, ((void)b, 1.0 / sqrt(a)));
    else if (alpha == -1) TN__MAP2(double, double, ((void)b, 1.0 / a));
    else TN__MAP2(double, double, pow(a, b));
}

/* add(a, b, alpha) for alpha != 1 as torch: one fused multiply-add (its vec::fmadd, and the
   scalar a + alpha * b its compiler contracts); plain (fma a libm call) and AVX2+FMA copies */
#define TN__AXPY_LOOP(T, F, NAME, ATTR) ATTR static void NAME(char **p, const int64_t *s, int64_t n, T alpha) { TN__MAP2(T, T, fma##F(alpha, b, a)); }
TN__AXPY_LOOP(float, f, tn__axpy_plain_f32, TN__PLAIN_FN)
TN__AXPY_LOOP(double, , tn__axpy_plain_f64, TN__PLAIN_FN)
#ifdef TN__FMA_FN
TN__AXPY_LOOP(float, f, tn__axpy_fma_f32, TN__FMA_FN)
TN__AXPY_LOOP(double, , tn__axpy_fma_f64, TN__FMA_FN)
#define TN__AXPY(S) (tn__cpu_fma() ? tn__axpy_fma_##S : tn__axpy_plain_##S)
#else
#define TN__AXPY(S) tn__axpy_plain_##S
#endif
static void tn__axpy_f32(char **p, const int64_t *s, int64_t n, float alpha) { TN__AXPY(f32)(p, s, n, alpha); }
static void tn__axpy_f64(char **p, const int64_t *s, int64_t n, double alpha) { TN__AXPY(f64)(p, s, n, alpha); }

/* @template TN__DEFINE_BINARY_FLOAT(T, S, F) */
static void tn__binary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    const T alpha = (T)c->alpha;
    switch ((tn_binary_op)c->op) {
    case ADD: if (alpha == 1) TN__MAP2(T, T, a + b); else tn__axpy_##S(p, s, n, alpha); break;
    case SUB: if (alpha == 1) TN__MAP2(T, T, a - b); else tn__axpy_##S(p, s, n, -alpha); break;   /* torch: add(-alpha) */
    case MUL: TN__MAP2(T, T, a * b); break;
    case DIV: TN__MAP2(T, T, a / b); break;
    case FLOOR_DIVIDE: TN__MAP2(T, T, tn__floordiv_##S(a, b)); break;
    case REMAINDER: TN__MAP2(T, T, tn__remainder_##S(a, b)); break;
    case FMOD: TN__MAP2(T, T, fmod##F(a, b)); break;
    case POW: tn__pow_##S(p, s, n, c->alpha); break;
    case ATAN2: TN__MAP2(T, T, atan2##F(a, b)); break;
    case MAXIMUM: TN__MAP2(T, T, (a != a || a > b) ? a : b); break;
    case MINIMUM: TN__MAP2(T, T, (a != a || a < b) ? a : b); break;
    case FMAX: TN__MAP2(T, T, fmax##F(a, b)); break;
    case FMIN: TN__MAP2(T, T, fmin##F(a, b)); break;
    case LOGADDEXP: TN__MAP2(T, T, tn_logaddexp_##S(a, b)); break;
    case LOGADDEXP2: TN__MAP2(T, T, tn_logaddexp2_##S(a, b)); break;
    case HYPOT: TN__MAP2(T, T, hypot##F(a, b)); break;
    case XLOGY: TN__MAP2(T, T, tn_xlogy_##S(a, b)); break;
    case XLOG1PY: TN__MAP2(T, T, tn_xlog1py_##S(a, b)); break;
    case ZETA: TN__MAP2(T, T, (T)tn_zeta_f64((double)a, (double)b)); break;
    case GAMMAINC: TN__MAP2(T, T, (T)tn_igamma_f64((double)a, (double)b, false)); break;
    case GAMMAINCC: TN__MAP2(T, T, (T)tn_igamma_f64((double)a, (double)b, true)); break;
    case CHEBYSHEV_POLYNOMIAL_T: TN__MAP2(T, T, (T)tn_orthopoly_f64(0, (double)a, (double)b)); break;
    case CHEBYSHEV_POLYNOMIAL_U: TN__MAP2(T, T, (T)tn_orthopoly_f64(1, (double)a, (double)b)); break;
    case CHEBYSHEV_POLYNOMIAL_V: TN__MAP2(T, T, (T)tn_orthopoly_f64(2, (double)a, (double)b)); break;
    case CHEBYSHEV_POLYNOMIAL_W: TN__MAP2(T, T, (T)tn_orthopoly_f64(3, (double)a, (double)b)); break;
    case HERMITE_POLYNOMIAL_H: TN__MAP2(T, T, (T)tn_orthopoly_f64(4, (double)a, (double)b)); break;
    case HERMITE_POLYNOMIAL_HE: TN__MAP2(T, T, (T)tn_orthopoly_f64(5, (double)a, (double)b)); break;
    case LAGUERRE_POLYNOMIAL_L: TN__MAP2(T, T, (T)tn_orthopoly_f64(6, (double)a, (double)b)); break;
    case LEGENDRE_POLYNOMIAL_P: TN__MAP2(T, T, (T)tn_orthopoly_f64(7, (double)a, (double)b)); break;
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_T: TN__MAP2(T, T, (T)tn_orthopoly_f64(0, 2.0 * a - 1, (double)b)); break;
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_U: TN__MAP2(T, T, (T)tn_orthopoly_f64(1, 2.0 * a - 1, (double)b)); break;
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_V: TN__MAP2(T, T, (T)tn_orthopoly_f64(2, 2.0 * a - 1, (double)b)); break;
    case SHIFTED_CHEBYSHEV_POLYNOMIAL_W: TN__MAP2(T, T, (T)tn_orthopoly_f64(3, 2.0 * a - 1, (double)b)); break;
    case COPYSIGN: TN__MAP2(T, T, copysign##F(a, b)); break;
    case NEXTAFTER: TN__MAP2(T, T, nextafter##F(a, b)); break;
    case HEAVISIDE: TN__MAP2(T, T, tn_heaviside_##S(a, b)); break;
    case EQ: TN__MAP2(bool, T, a == b); break;
    case NE: TN__MAP2(bool, T, a != b); break;
    case LT: TN__MAP2(bool, T, a < b); break;
    case LE: TN__MAP2(bool, T, a <= b); break;
    case GT: TN__MAP2(bool, T, a > b); break;
    case GE: TN__MAP2(bool, T, a >= b); break;
    case THRESHOLD_BACKWARD: TN__MAP2(T, T, b <= alpha ? (T)0 : a); break;
    case GELU_BACKWARD: TN__MAP2(T, T, tn_gelu_backward_##S(a, b)); break;
    case GELU_TANH_BACKWARD: TN__MAP2(T, T, tn_gelu_tanh_backward_##S(a, b)); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    } }
/* @end TN__DEFINE_BINARY_FLOAT */
TN__DEFINE_BINARY_FLOAT(float, f32, f)
TN__DEFINE_BINARY_FLOAT(double, f64, )

/* Integer division family: division by zero is an error (PyTorch raises), and
   MIN / -1 wraps instead of trapping. */
/* @template TN__DEFINE_INT_DIVMOD(T, S, U, SIGNED) */
static T tn__ifloordiv_##S(T a, T b, int *bad) {
    if (b == 0) { *bad = 2; return 0; }
    if (SIGNED && b == (T)-1) return (T)((U)0 - (U)a);
    T q = (T)(a / b);
    return (a % b != 0 && (TN__ISNEG(a) != TN__ISNEG(b))) ? (T)(q - 1) : q; }
static T tn__iremainder_##S(T a, T b, int *bad, bool python) {
    if (b == 0) { *bad = 2; return 0; }
    if (SIGNED && b == (T)-1) return 0;
    T r = (T)(a % b);
    return (python && r != 0 && (TN__ISNEG(r) != TN__ISNEG(b))) ? (T)(r + b) : r; }
static T tn__ipow_##S(T a, T b, int *bad) {
    if (TN__ISNEG(b)) { (void)bad; if (a == 1) return 1; if (SIGNED && a == (T)-1) return (b & 1) ? a : 1; return 0; } /* 1/a^n truncated */
    U r = 1, base = (U)a;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) { if (e & 1) r = (U)(r * base); base = (U)(base * base); }
    return (T)r; }
/* |a / gcd * b|, wrapping as PyTorch's */
static T tn__lcm_##S(T a, T b) {
    const U ua = TN__ISNEG(a) ? (U)0 - (U)a : (U)a, ub = TN__ISNEG(b) ? (U)0 - (U)b : (U)b, g = (U)tn_gcd_u64(ua, ub);
    return g == 0 ? (T)0 : (T)(U)((U)(ua / g) * ub); }
/* a >> s, arithmetic for a negative a whatever the compiler's >> of negatives does;
   s in [0, width - SIGNED]. As 2025 PyTorch, a count past that (or negative) shifts by it:
   the sign for signed, 0 for unsigned. */
static T tn__shr_##S(T a, T s) {
    const int w = 8 * (int)sizeof(T) - SIGNED;
    const int k = TN__ISNEG(s) || (uint64_t)s >= (uint64_t)w ? w : (int)s;
    return TN__ISNEG(a) ? (T)~(T)(~a >> k) : (T)(a >> k); }
/* a << s as unsigned bits; 0 where s is negative or at least the width (2025 PyTorch) */
static T tn__shl_##S(T a, T s) { return TN__ISNEG(s) || (uint64_t)s >= 8 * sizeof(T) ? (T)0 : (T)((U)a << (int)s); }
/* @end TN__DEFINE_INT_DIVMOD */
TN__DEFINE_INT_DIVMOD(int32_t, i32, uint32_t, 1)
TN__DEFINE_INT_DIVMOD(int64_t, i64, uint64_t, 1)
TN__DEFINE_INT_DIVMOD(uint8_t, u8, uint8_t, 0)
TN__DEFINE_INT_DIVMOD(int8_t, i8, uint32_t, 1)
TN__DEFINE_INT_DIVMOD(int16_t, i16, uint32_t, 1)

/* @template TN__DEFINE_BINARY_INT(T, S, U) */
static void tn__binary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    const U alpha = (U)(int64_t)c->alpha;
    int bad = 0;
    switch ((tn_binary_op)c->op) {
    case ADD: TN__MAP2(T, T, (U)a + alpha * (U)b); break;
    case SUB: TN__MAP2(T, T, (U)a - alpha * (U)b); break;
    case MUL: TN__MAP2(T, T, (U)a * (U)b); break;
    case FLOOR_DIVIDE: TN__MAP2(T, T, tn__ifloordiv_##S(a, b, &bad)); break;
    case REMAINDER: TN__MAP2(T, T, tn__iremainder_##S(a, b, &bad, true)); break;
    case FMOD: TN__MAP2(T, T, tn__iremainder_##S(a, b, &bad, false)); break;
    case POW: TN__MAP2(T, T, tn__ipow_##S(a, b, &bad)); break;
    case MAXIMUM: case FMAX: TN__MAP2(T, T, a > b ? a : b); break;
    case MINIMUM: case FMIN: TN__MAP2(T, T, a < b ? a : b); break;
    case HEAVISIDE: TN__MAP2(T, T, a == 0 ? b : (T)(a > 0)); break;
    case GCD: TN__MAP2(T, T, tn_gcd_u64(TN__ISNEG(a) ? (U)0 - (U)a : (U)a, TN__ISNEG(b) ? (U)0 - (U)b : (U)b)); break;
    case LCM: TN__MAP2(T, T, tn__lcm_##S(a, b)); break;
    case BITWISE_AND: TN__MAP2(T, T, a & b); break;
    case BITWISE_OR: TN__MAP2(T, T, a | b); break;
    case BITWISE_XOR: TN__MAP2(T, T, a ^ b); break;
    case BITWISE_LEFT_SHIFT: TN__MAP2(T, T, tn__shl_##S(a, b)); break;
    case BITWISE_RIGHT_SHIFT: TN__MAP2(T, T, tn__shr_##S(a, b)); break;
    case EQ: TN__MAP2(bool, T, a == b); break;
    case NE: TN__MAP2(bool, T, a != b); break;
    case LT: TN__MAP2(bool, T, a < b); break;
    case LE: TN__MAP2(bool, T, a <= b); break;
    case GT: TN__MAP2(bool, T, a > b); break;
    case GE: TN__MAP2(bool, T, a >= b); break;
    default: bad = 1; break;
    }
    if (bad) TN__STORE_RELAXED(&c->failed, bad); }
/* @end TN__DEFINE_BINARY_INT */
TN__DEFINE_BINARY_INT(int32_t, i32, uint32_t)
TN__DEFINE_BINARY_INT(int64_t, i64, uint64_t)
TN__DEFINE_BINARY_INT(uint8_t, u8, uint8_t)
TN__DEFINE_BINARY_INT(int8_t, i8, uint32_t)
TN__DEFINE_BINARY_INT(int16_t, i16, uint32_t)

static void tn__binary_b(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    switch ((tn_binary_op)c->op) {
    case ADD: if (c->alpha == 0) { TN__MAP2(bool, bool, a && (b || !b)); break; } /* a + 0*b */ /* fall through */
    case MAXIMUM: case FMAX: case HEAVISIDE: case BITWISE_OR: case LOGICAL_OR: TN__MAP2(bool, bool, a || b); break;
    case MUL: case MINIMUM: case FMIN: case BITWISE_AND: case LOGICAL_AND: TN__MAP2(bool, bool, a && b); break;
    case BITWISE_XOR: case LOGICAL_XOR: case NE: TN__MAP2(bool, bool, a != b); break;
    case EQ: TN__MAP2(bool, bool, a == b); break;
    case LT: TN__MAP2(bool, bool, !a && b); break;
    case LE: TN__MAP2(bool, bool, !a || b); break;
    case GT: TN__MAP2(bool, bool, a && !b); break;
    case GE: TN__MAP2(bool, bool, a || !b); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    }
}

static int tn__cpu_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha) {
    tn__kctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.alpha = alpha;
    if (tn_dtype_is_complex(a->dtype)) {
        tn__iter it;
        tn__iter_init(&it, out->shape, out->ndim);
        tn__iter_add(&it, out);
        tn__iter_add(&it, a);
        tn__iter_add(&it, b);
        if (!tn__complex_binary_ok(op) || tn__complex_run(&it, a->dtype == TN_C64 ? tn__binary_c64 : tn__binary_c128, op, alpha))
            return TN__FAIL_INT("%s: not implemented for dtype %s", tn_binary_op_name(op), tn_dtype_name(a->dtype));
        return 0;
    }
    tn__loop_fn fn = tn__pick_loop(a->dtype, tn__binary_f32, tn__binary_f64, tn__binary_i32, tn__binary_i64, tn__binary_u8, tn__binary_b, tn__binary_i8, tn__binary_i16);
    if (!fn) return TN__FAIL_INT("%s: dtype %s is not supported on the CPU", tn_binary_op_name(op), tn_dtype_name(a->dtype));
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    tn__iter_add(&it, a);
    tn__iter_add(&it, b);
    tn__iter_run_par(&it, fn, &c, -1);
    if (c.failed == 2) return TN__FAIL_INT("%s: integer division by zero (ZeroDivisionError)", tn_binary_op_name(op));
    if (c.failed) return TN__FAIL_INT("%s: not implemented for dtype %s", tn_binary_op_name(op), tn_dtype_name(a->dtype));
    return 0;
}

/* ---- ternary kernels: where, lerp, addcmul, addcdiv ---- */
#define TN__DEFINE_TERNARY(T, S, ISFLOAT) \
static void tn__ternary_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
    tn__kctx *kc = (tn__kctx *)vc; \
    const T v = (T)kc->alpha; \
    switch ((tn_ternary_op)kc->op) { \
    case WHERE: TN__MAP3(T, bool, T, c ? a : b); break; \
    case LERP: if (ISFLOAT) TN__MAP3(T, T, T, ((double)b < 0.5 && (double)b > -0.5) ? c + b * (a - c) : a - (a - c) * ((T)1 - b)); else TN__STORE_RELAXED(&kc->failed, 1); break; /* |w| < 0.5, as PyTorch */ \
    case ADDCMUL: TN__MAP3(T, T, T, c + v * a * b); break; \
    case ADDCDIV: if (ISFLOAT) TN__MAP3(T, T, T, c + v * a / b); else TN__STORE_RELAXED(&kc->failed, 1); break; \
    default: TN__STORE_RELAXED(&kc->failed, 1); break; \
    } }
#define TN__DEFINE_TERNARY_TYPES(E, T, S, K) TN__DEFINE_TERNARY(T, S, E == TN_F32 || E == TN_F64)
TN__TYPES(TN__DEFINE_TERNARY_TYPES)

static int tn__cpu_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    tn__kctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.alpha = value;
    /* operand order for the loop: out, first, second, third; WHERE: cond, a, b;
       LERP: start, end, weight -> (c, a, b) = (start, end, weight) */
    if (tn_dtype_is_complex(out->dtype)) {
        tn__iter it;
        tn__iter_init(&it, out->shape, out->ndim);
        tn__iter_add(&it, out);
        tn__iter_add(&it, x);
        tn__iter_add(&it, y);
        tn__iter_add(&it, z);
        if (tn__complex_run(&it, out->dtype == TN_C64 ? tn__ternary_c64 : tn__ternary_c128, op, value))
            return TN__FAIL_INT("ternary op %d: not implemented for dtype %s", (int)op, tn_dtype_name(out->dtype));
        return 0;
    }
    tn__loop_fn fn = tn__pick_loop(out->dtype, tn__ternary_f32, tn__ternary_f64, tn__ternary_i32, tn__ternary_i64, tn__ternary_u8, tn__ternary_b, tn__ternary_i8, tn__ternary_i16);
    if (!fn) return TN__FAIL_INT("ternary op: dtype %s is not supported on the CPU", tn_dtype_name(out->dtype));
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    tn__iter_add(&it, x);
    tn__iter_add(&it, y);
    tn__iter_add(&it, z);
    tn__iter_run_par(&it, fn, &c, -1);
    if (c.failed) return TN__FAIL_INT("ternary op %d: not implemented for dtype %s", (int)op, tn_dtype_name(out->dtype));
    return 0;
}
