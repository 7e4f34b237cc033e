/* ---- complex numbers: scalar formulas and the CPU loops of complex64/complex128 ----
   A complex element is (real, imag) of float (complex64) or double (complex128). The
   formulas run in double on a plain struct (no C99 _Complex: the header also compiles as
   C++), written as c10::complex and PyTorch's CPU kernels compute them: division is
   c10's scaled (Smith) division, the transcendental functions the textbook formulas.
   The formulas and the lists of ops with a complex form are in src/api.h (tn__cplx,
   tn__complex_unary_ok): the GPU unit computes with the same ones. */
/* One element of any dtype as a complex number, and a complex number stored into any
   dtype: to a real dtype goes the real part (PyTorch's casts; torch warns), to bool
   whether it is nonzero. */
static tn__cplx tn__cload_any(const char *p, tn_dtype d) {
    switch (d) {
    case TN_C64: return tn__cx(((const float *)p)[0], ((const float *)p)[1]);
    case TN_C128: return tn__cx(((const double *)p)[0], ((const double *)p)[1]);
    case TN_F32: return tn__cx(*(const float *)p, 0);
    case TN_F64: return tn__cx(*(const double *)p, 0);
    case TN_I32: return tn__cx(*(const int32_t *)p, 0);
    case TN_I64: return tn__cx((double)*(const int64_t *)p, 0);
    case TN_U8: return tn__cx(*(const uint8_t *)p, 0);
    case TN_I8: return tn__cx(*(const int8_t *)p, 0);
    case TN_I16: return tn__cx(*(const int16_t *)p, 0);
    case TN_BOOL: return tn__cx(*(const bool *)p ? 1 : 0, 0);
    case TN_F16: return tn__cx(tn_half_to_float(*(const uint16_t *)p), 0);
    default: return tn__cx(tn_bfloat16_to_float(*(const uint16_t *)p), 0);
    }
}
static void tn__cstore_any(char *p, tn_dtype d, tn__cplx z) {
    switch (d) {
    case TN_C64: ((float *)p)[0] = (float)z.re; ((float *)p)[1] = (float)z.im; break;
    case TN_C128: ((double *)p)[0] = z.re; ((double *)p)[1] = z.im; break;
    case TN_F32: *(float *)p = (float)z.re; break;
    case TN_F64: *(double *)p = z.re; break;
    case TN_I32: *(int32_t *)p = tn__cvt_i32_flt(z.re); break;
    case TN_I64: *(int64_t *)p = tn__cvt_i64_flt(z.re); break;
    case TN_U8: *(uint8_t *)p = tn__cvt_u8_flt(z.re); break;
    case TN_I8: *(int8_t *)p = tn__cvt_i8_flt(z.re); break;
    case TN_I16: *(int16_t *)p = tn__cvt_i16_flt(z.re); break;
    case TN_BOOL: *(bool *)p = z.re != 0 || z.im != 0; break;
    case TN_F16: *(uint16_t *)p = tn_float_to_half((float)z.re); break;
    default: *(uint16_t *)p = tn_float_to_bfloat16((float)z.re); break;
    }
}
/* A copy where either side is complex (ctx: {to, from}). */
static void tn__cast_complex(char **p, const int64_t *s, int64_t n, void *ctx) {
    const tn_dtype to = ((const tn_dtype *)ctx)[0], from = ((const tn_dtype *)ctx)[1];
    for (int64_t i = 0; i < n; i++) tn__cstore_any(p[0] + i * s[0], to, tn__cload_any(p[1] + i * s[1], from));
}

/* ---- the elementwise loops: unary, binary and ternary ops of complex operands ---- */
typedef struct tn__cctx { int op; double alpha; int failed; } tn__cctx;
#define TN__CLOAD(T, ptr) tn__cx(((const T *)(ptr))[0], ((const T *)(ptr))[1])
#define TN__CSTORE(T, ptr, z) do { const tn__cplx z_ = (z); ((T *)(ptr))[0] = (T)z_.re; ((T *)(ptr))[1] = (T)z_.im; } while (0)
#define TN__CMAP1(T, EXPR) for (int64_t i = 0; i < n; i++) { const tn__cplx x = TN__CLOAD(T, p[1] + i * s[1]); TN__CSTORE(T, p[0] + i * s[0], EXPR); }
#define TN__CMAP1_TO(TO, T, EXPR) for (int64_t i = 0; i < n; i++) { const tn__cplx x = TN__CLOAD(T, p[1] + i * s[1]); *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); }
#define TN__CMAP2(T, EXPR) for (int64_t i = 0; i < n; i++) { \
    const tn__cplx a = TN__CLOAD(T, p[1] + i * s[1]), b = TN__CLOAD(T, p[2] + i * s[2]); TN__CSTORE(T, p[0] + i * s[0], EXPR); }
#define TN__CMAP2_TO(TO, T, EXPR) for (int64_t i = 0; i < n; i++) { \
    const tn__cplx a = TN__CLOAD(T, p[1] + i * s[1]), b = TN__CLOAD(T, p[2] + i * s[2]); *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); }
#define TN__CMAP3(T, EXPR) for (int64_t i = 0; i < n; i++) { \
    const tn__cplx c = TN__CLOAD(T, p[1] + i * s[1]), a = TN__CLOAD(T, p[2] + i * s[2]), b = TN__CLOAD(T, p[3] + i * s[3]); \
    TN__CSTORE(T, p[0] + i * s[0], EXPR); }

/* @template TN__DEFINE_UNARY_COMPLEX(T, S) */
static void tn__unary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__cctx *c = (tn__cctx *)vc;
    const int op = c->op;
    switch (op) {   /* the formulas: tn__cunary (src/api.h), shared with the GPU unit */
    case ABS: TN__CMAP1_TO(T, T, tn__cabs(x)); break;
    case ISNAN: TN__CMAP1_TO(bool, T, x.re != x.re || x.im != x.im); break;
    case ISINF: TN__CMAP1_TO(bool, T, isinf(x.re) || isinf(x.im)); break;
    case ISFINITE: TN__CMAP1_TO(bool, T, isfinite(x.re) && isfinite(x.im)); break;
    case LOGICAL_NOT: TN__CMAP1_TO(bool, T, x.re == 0 && x.im == 0); break;
    default:
        if (!tn__complex_unary_ok(op)) { TN__STORE_RELAXED(&c->failed, 1); break; }
        TN__CMAP1(T, tn__cunary(op, x, sizeof(T) == 4));
        break;
    } }
/* @end TN__DEFINE_UNARY_COMPLEX */
TN__DEFINE_UNARY_COMPLEX(float, c64)
TN__DEFINE_UNARY_COMPLEX(double, c128)

/* @template TN__DEFINE_BINARY_COMPLEX(T, S) */
static void tn__binary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__cctx *c = (tn__cctx *)vc;
    const int op = c->op;
    const double alpha = c->alpha;
    switch (op) {
    case ADD: case SUB: case MUL: case DIV: case POW: TN__CMAP2(T, tn__cbinary(op, a, b, alpha)); break;   /* src/api.h */
    case EQ: TN__CMAP2_TO(bool, T, a.re == b.re && a.im == b.im); break;
    case NE: TN__CMAP2_TO(bool, T, a.re != b.re || a.im != b.im); break;
    case LOGICAL_AND: TN__CMAP2_TO(bool, T, (a.re != 0 || a.im != 0) && (b.re != 0 || b.im != 0)); break;
    case LOGICAL_OR: TN__CMAP2_TO(bool, T, (a.re != 0 || a.im != 0) || (b.re != 0 || b.im != 0)); break;
    case LOGICAL_XOR: TN__CMAP2_TO(bool, T, (a.re != 0 || a.im != 0) != (b.re != 0 || b.im != 0)); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    } }
/* @end TN__DEFINE_BINARY_COMPLEX */
TN__DEFINE_BINARY_COMPLEX(float, c64)
TN__DEFINE_BINARY_COMPLEX(double, c128)

/* @template TN__DEFINE_TERNARY_COMPLEX(T, S) */
static void tn__ternary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__cctx *kc = (tn__cctx *)vc;
    switch (kc->op) {
    case WHERE: for (int64_t i = 0; i < n; i++) {
            const char *src = *(const bool *)(p[1] + i * s[1]) ? p[2] + i * s[2] : p[3] + i * s[3];
            TN__CSTORE(T, p[0] + i * s[0], TN__CLOAD(T, src)); }
        break;
    case ADDCMUL: case ADDCDIV: case LERP: TN__CMAP3(T, tn__cternary(kc->op, c, a, b, kc->alpha)); break;   /* src/api.h */
    default: TN__STORE_RELAXED(&kc->failed, 1); break;
    } }
/* @end TN__DEFINE_TERNARY_COMPLEX */
TN__DEFINE_TERNARY_COMPLEX(float, c64)
TN__DEFINE_TERNARY_COMPLEX(double, c128)

/* Run a complex kernel family's loop over the iterator: 0, or -1 when op has no complex form. */
static int tn__complex_run(tn__iter *it, tn__loop_fn fn, int op, double alpha) {
    tn__cctx c;
    c.op = op;
    c.alpha = alpha;
    c.failed = 0;
    tn__iter_run_par(it, fn, &c, -1);
    return c.failed ? -1 : 0;
}

/* Reductions (SUM, PROD) into out, restrided with stride 0 on the reduced dims: a single
   accumulator (in double) when out does not move, else element by element. */
/* @template TN__DEFINE_REDUCE_COMPLEX(T, S) */
static void tn__reduce_##S(char **p, const int64_t *s, int64_t n, void *ctx) {
    const bool sum = *(const tn_reduce_op *)ctx == SUM;
    if (s[0] == 0) {
        tn__cplx acc = TN__CLOAD(T, p[0]);
        for (int64_t i = 0; i < n; i++) { const tn__cplx x = TN__CLOAD(T, p[1] + i * s[1]); acc = sum ? tn__cadd(acc, x) : tn__cmul(acc, x); }
        TN__CSTORE(T, p[0], acc);
    } else for (int64_t i = 0; i < n; i++) {
        const tn__cplx a = TN__CLOAD(T, p[0] + i * s[0]), x = TN__CLOAD(T, p[1] + i * s[1]);
        TN__CSTORE(T, p[0] + i * s[0], sum ? tn__cadd(a, x) : tn__cmul(a, x));
    } }
/* @end TN__DEFINE_REDUCE_COMPLEX */
TN__DEFINE_REDUCE_COMPLEX(float, c64)
TN__DEFINE_REDUCE_COMPLEX(double, c128)
