/* ---- complex numbers: scalar formulas and the CPU loops of complex64/complex128 ----
   A complex element is (real, imag) of float (complex64) or double (complex128). The
   formulas run in double on a plain struct (no C99 _Complex: the header also compiles as
   C++), written as c10::complex and PyTorch's CPU kernels compute them: division is
   c10's scaled (Smith) division, the transcendental functions the textbook formulas. */
typedef struct tn__cplx { double re, im; } tn__cplx;
static tn__cplx tn__cx(double re, double im) { tn__cplx z; z.re = re; z.im = im; return z; }
static tn__cplx tn__cadd(tn__cplx a, tn__cplx b) { return tn__cx(a.re + b.re, a.im + b.im); }
static tn__cplx tn__cmul(tn__cplx a, tn__cplx b) { return tn__cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static tn__cplx tn__cscale(tn__cplx a, double s) { return tn__cx(a.re * s, a.im * s); }
/* c10::complex's scaled division; by zero NaN in both parts, as PyTorch's vectorised
   CPU kernels give for every numerator (c10's scalar form gives inf/nan parts) */
static tn__cplx tn__cdiv(tn__cplx a, tn__cplx b) {
    const double c = b.re, d = b.im, ac = fabs(c), ad = fabs(d);
    if (ac >= ad) {
        if (ac == 0 && ad == 0) return tn__cx(NAN, NAN);
        const double rat = d / c, scl = 1.0 / (c + d * rat);
        return tn__cx((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    const double rat = c / d, scl = 1.0 / (d + c * rat);
    return tn__cx((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
static double tn__cabs(tn__cplx z) { return hypot(z.re, z.im); }
static tn__cplx tn__cexp(tn__cplx z) {
    if (z.im == 0) return tn__cx(exp(z.re), z.im);   /* a real argument keeps its signed zero */
    const double e = exp(z.re);
    return tn__cx(e * cos(z.im), e * sin(z.im));
}
static tn__cplx tn__clog(tn__cplx z) { return tn__cx(log(tn__cabs(z)), atan2(z.im, z.re)); }
static tn__cplx tn__csqrt(tn__cplx z) {
    const double x = z.re, y = z.im;
    if (x == 0 && y == 0) return tn__cx(0, y);
    if (isinf(y)) return tn__cx(INFINITY, y);
    if (x != x) return tn__cx(x, y != y ? y : NAN);
    if (isinf(x)) return x > 0 ? tn__cx(x, y != y ? y : copysign(0.0, y)) : tn__cx(y != y ? y : 0.0, copysign(INFINITY, y));
    const double t = sqrt((fabs(x) + hypot(x, y)) * 0.5);
    return x >= 0 ? tn__cx(t, y / (2 * t)) : tn__cx(fabs(y) / (2 * t), copysign(t, y));
}
static tn__cplx tn__csin(tn__cplx z) { return tn__cx(sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im)); }
static tn__cplx tn__ccos(tn__cplx z) { return tn__cx(cos(z.re) * cosh(z.im), -sin(z.re) * sinh(z.im)); }
static tn__cplx tn__csinh(tn__cplx z) { return tn__cx(sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im)); }
static tn__cplx tn__ccosh(tn__cplx z) { return tn__cx(cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im)); }
static tn__cplx tn__ctanh(tn__cplx z) {   /* Kahan's formula (as C libraries' ctanh): no overflow for large |re| */
    const double x = z.re, y = z.im;
    if (y == 0) return tn__cx(tanh(x), y);
    if (fabs(x) > 22) { const double e = exp(-2 * fabs(x)); return tn__cx(copysign(1.0, x), 4 * sin(y) * cos(y) * e); }
    const double t = tan(y), b = 1 + t * t, sh = sinh(x), c = sqrt(1 + sh * sh), den = 1 + b * sh * sh;
    return tn__cx(b * c * sh / den, t / den);
}
static tn__cplx tn__ctan(tn__cplx z) { tn__cplx t = tn__ctanh(tn__cx(-z.im, z.re)); return tn__cx(t.im, -t.re); }   /* -i tanh(iz) */
static tn__cplx tn__cpow(tn__cplx a, tn__cplx b) {
    if (b.re == 0 && b.im == 0) return tn__cx(1, 0);
    if (a.re == 0 && a.im == 0 && b.im == 0 && b.re > 0) return tn__cx(0, 0);
    if (b.im == 0 && b.re == 1) return a;
    if (b.im == 0 && b.re == 2) return tn__cmul(a, a);
    return tn__cexp(tn__cmul(b, tn__clog(a)));
}
static tn__cplx tn__csgn(tn__cplx z) {
    if (z.re == 0 && z.im == 0) return tn__cx(0, 0);
    const double a = tn__cabs(z);
    return tn__cx(z.re / a, z.im / a);
}
/* The inverse functions: Kahan's formulas ("Branch cuts for complex elementary functions",
   as C libraries' casin/cacos/cacosh/catanh): square roots of 1 -+ z whose signed zeros
   put the branch cuts where std::asin etc. have them, no cancellation near the cuts. */
static tn__cplx tn__casin(tn__cplx z) {
    const tn__cplx s1 = tn__csqrt(tn__cx(1 - z.re, -z.im)), s2 = tn__csqrt(tn__cx(1 + z.re, z.im));
    return tn__cx(atan2(z.re, s1.re * s2.re - s1.im * s2.im), asinh(s1.re * s2.im - s1.im * s2.re));
}
static tn__cplx tn__cacos(tn__cplx z) {
    const tn__cplx s1 = tn__csqrt(tn__cx(1 - z.re, -z.im)), s2 = tn__csqrt(tn__cx(1 + z.re, z.im));
    return tn__cx(2 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}
static tn__cplx tn__cacosh(tn__cplx z) {
    const tn__cplx s1 = tn__csqrt(tn__cx(z.re - 1, z.im)), s2 = tn__csqrt(tn__cx(z.re + 1, z.im));
    return tn__cx(asinh(s1.re * s2.re + s1.im * s2.im), 2 * atan2(s1.im, s2.re));
}
static tn__cplx tn__catanh(tn__cplx z) {
    const double x = z.re, y = z.im, ax = fabs(x);
    if (y == 0 && ax <= 1) return tn__cx(atanh(x), y);   /* the real axis keeps its signed zero */
    return tn__cx(0.25 * log1p(4 * x / ((1 - x) * (1 - x) + y * y)), 0.5 * atan2(2 * y, (1 - x) * (1 + x) - y * y));
}
/* asinh(z) = -i asin(iz), atan(z) = -i atanh(iz) */
static tn__cplx tn__casinh(tn__cplx z) { const tn__cplx t = tn__casin(tn__cx(-z.im, z.re)); return tn__cx(t.im, -t.re); }
static tn__cplx tn__catan(tn__cplx z) { const tn__cplx t = tn__catanh(tn__cx(-z.im, z.re)); return tn__cx(t.im, -t.re); }

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

/* The unary ops defined for complex operands (the others fail; ABS and ANGLE's callers
   give a real output: ABS here writes the real dtype). SIGN computes sgn (z / |z|):
   tn_sign refuses complex before it gets here, as PyTorch. */
static bool tn__complex_unary_ok(int op) {
    switch (op) {
    case NEG: case ABS: case SIGN: case SQUARE: case EXP: case LOG: case LOG2: case LOG10: case SQRT: case RSQRT:
    case RECIPROCAL: case SIN: case COS: case TAN: case SINH: case COSH: case TANH: case SIGMOID:
    case ASIN: case ACOS: case ATAN: case ASINH: case ACOSH: case ATANH: case SINC: case SILU:
    case ISNAN: case ISINF: case ISFINITE: case LOGICAL_NOT: return true;
    default: return false;
    }
}
/* @template TN__DEFINE_UNARY_COMPLEX(T, S) */
static void tn__unary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__cctx *c = (tn__cctx *)vc;
    const int op = c->op;
    switch (op) {
    case NEG: TN__CMAP1(T, tn__cx(-x.re, -x.im)); break;
    case ABS: TN__CMAP1_TO(T, T, tn__cabs(x)); break;
    case SIGN: TN__CMAP1(T, tn__csgn(x)); break;
    case SQUARE: TN__CMAP1(T, tn__cmul(x, x)); break;
    case EXP: TN__CMAP1(T, tn__cexp(x)); break;
    case LOG: TN__CMAP1(T, tn__clog(x)); break;
    case LOG2: { TN__CMAP1(T, tn__cscale(tn__clog(x), 1 / 0.69314718055994530942)); break; }   /* log(z) / log(2): part by part */
    case LOG10: { TN__CMAP1(T, tn__cscale(tn__clog(x), 1 / 2.30258509299404568402)); break; }
    case SQRT: TN__CMAP1(T, tn__csqrt(x)); break;
    case RSQRT: TN__CMAP1(T, tn__cdiv(tn__cx(1, 0), tn__csqrt(x))); break;
    case RECIPROCAL: TN__CMAP1(T, tn__cdiv(tn__cx(1, 0), x)); break;
    case SIN: TN__CMAP1(T, tn__csin(x)); break;
    case COS: TN__CMAP1(T, tn__ccos(x)); break;
    case TAN: TN__CMAP1(T, tn__ctan(x)); break;
    case SINH: TN__CMAP1(T, tn__csinh(x)); break;
    case COSH: TN__CMAP1(T, tn__ccosh(x)); break;
    case TANH: TN__CMAP1(T, tn__ctanh(x)); break;
    case SIGMOID: TN__CMAP1(T, tn__cdiv(tn__cx(1, 0), tn__cadd(tn__cx(1, 0), tn__cexp(tn__cx(-x.re, -x.im))))); break;
    case ASIN: TN__CMAP1(T, tn__casin(x)); break;
    case ACOS: TN__CMAP1(T, tn__cacos(x)); break;
    case ATAN: TN__CMAP1(T, tn__catan(x)); break;
    case ASINH: TN__CMAP1(T, tn__casinh(x)); break;
    case ACOSH: TN__CMAP1(T, tn__cacosh(x)); break;
    case ATANH: TN__CMAP1(T, tn__catanh(x)); break;
    case SINC: for (int64_t i = 0; i < n; i++) {   /* pi z rounded to T first, as ATen (sin grows like e^|Im|) */
            const tn__cplx x = TN__CLOAD(T, p[1] + i * s[1]);
            const T pi = (T)3.14159265358979323846, pr = pi * (T)x.re, pim = pi * (T)x.im;
            TN__CSTORE(T, p[0] + i * s[0], x.re == 0 && x.im == 0 ? tn__cx(1, 0) : tn__cdiv(tn__csin(tn__cx(pr, pim)), tn__cx(pr, pim)));
        } break;
    case SILU: TN__CMAP1(T, tn__cdiv(x, tn__cadd(tn__cx(1, 0), tn__cexp(tn__cx(-x.re, -x.im))))); break;   /* ATen's x / (1 + exp(-x)) */
    case ISNAN: TN__CMAP1_TO(bool, T, x.re != x.re || x.im != x.im); break;
    case ISINF: TN__CMAP1_TO(bool, T, isinf(x.re) || isinf(x.im)); break;
    case ISFINITE: TN__CMAP1_TO(bool, T, isfinite(x.re) && isfinite(x.im)); break;
    case LOGICAL_NOT: TN__CMAP1_TO(bool, T, x.re == 0 && x.im == 0); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    } }
/* @end TN__DEFINE_UNARY_COMPLEX */
TN__DEFINE_UNARY_COMPLEX(float, c64)
TN__DEFINE_UNARY_COMPLEX(double, c128)

static bool tn__complex_binary_ok(int op) {
    return op == ADD || op == SUB || op == MUL || op == DIV || op == POW || op == EQ || op == NE ||
           op == LOGICAL_AND || op == LOGICAL_OR || op == LOGICAL_XOR;
}
/* @template TN__DEFINE_BINARY_COMPLEX(T, S) */
static void tn__binary_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__cctx *c = (tn__cctx *)vc;
    const int op = c->op;
    const double alpha = c->alpha;
    switch (op) {
    case ADD: TN__CMAP2(T, tn__cx(a.re + alpha * b.re, a.im + alpha * b.im)); break;
    case SUB: TN__CMAP2(T, tn__cx(a.re - alpha * b.re, a.im - alpha * b.im)); break;
    case MUL: TN__CMAP2(T, tn__cmul(a, b)); break;
    case DIV: TN__CMAP2(T, tn__cdiv(a, b)); break;
    case POW: TN__CMAP2(T, tn__cpow(a, b)); break;
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
    const tn__cplx v = tn__cx(kc->alpha, 0);
    switch (kc->op) {
    case WHERE: for (int64_t i = 0; i < n; i++) {
            const char *src = *(const bool *)(p[1] + i * s[1]) ? p[2] + i * s[2] : p[3] + i * s[3];
            TN__CSTORE(T, p[0] + i * s[0], TN__CLOAD(T, src)); }
        break;
    case ADDCMUL: TN__CMAP3(T, tn__cadd(c, tn__cmul(v, tn__cmul(a, b)))); break;
    case ADDCDIV: TN__CMAP3(T, tn__cadd(c, tn__cmul(v, tn__cdiv(a, b)))); break;
    case LERP: TN__CMAP3(T, tn__cabs(b) < 0.5 ? tn__cadd(c, tn__cmul(b, tn__cadd(a, tn__cscale(c, -1))))   /* |w| < 0.5, as ATen */
                                              : tn__cadd(a, tn__cscale(tn__cmul(tn__cadd(a, tn__cscale(c, -1)), tn__cx(1 - b.re, -b.im)), -1))); break;
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
