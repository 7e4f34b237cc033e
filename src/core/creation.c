/* The CPU element types. Each entry: dtype, C type, suffix, how values convert
   (flt: through double; int: through int64_t, so int64 values stay exact). */
#define TN__TYPES(X) X(TN_F32, float, f32, flt) X(TN_F64, double, f64, flt) X(TN_I32, int32_t, i32, int) \
                     X(TN_I64, int64_t, i64, int) X(TN_U8, uint8_t, u8, int) X(TN_BOOL, bool, b, int) \
                     X(TN_I8, int8_t, i8, int) X(TN_I16, int16_t, i16, int)
#define TN__TYPES_WITH(X, A, B) X(TN_F32, float, f32, flt, A, B) X(TN_F64, double, f64, flt, A, B) \
    X(TN_I32, int32_t, i32, int, A, B) X(TN_I64, int64_t, i64, int, A, B) X(TN_U8, uint8_t, u8, int, A, B) X(TN_BOOL, bool, b, int, A, B) \
    X(TN_I8, int8_t, i8, int, A, B) X(TN_I16, int16_t, i16, int, A, B)

/* Strided elementwise conversion, one function per destination type. */
#define TN__CAST_FROM(E, TI, SI, KI, TO, SO) case E: { \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI)) { \
        TO *o = (TO *)p[0]; const TI *in = (const TI *)p[1]; \
        for (int64_t i = 0; i < n; i++) o[i] = tn__cvt_##SO##_##KI(in[i]); \
    } else if (s[0] == (int64_t)sizeof(TO) && s[1] == 0) { /* fill: convert once */ \
        TO *o = (TO *)p[0]; const TO v = tn__cvt_##SO##_##KI(*(const TI *)p[1]); \
        for (int64_t i = 0; i < n; i++) o[i] = v; \
    } else for (int64_t i = 0; i < n; i++) \
        *(TO *)(p[0] + i * s[0]) = tn__cvt_##SO##_##KI(*(const TI *)(p[1] + i * s[1])); \
    break; }
#define TN__DEFINE_CAST_TO(E, TO, SO, KO) \
    static void tn__cast_to_##SO(char **p, const int64_t *s, int64_t n, void *ctx) { \
        switch (*(const tn_dtype *)ctx) { TN__TYPES_WITH(TN__CAST_FROM, TO, SO) default: break; } }
TN__TYPES(TN__DEFINE_CAST_TO)

/* Same-dtype copies move bytes (ctx: the element size). */
static void tn__copy_bytes(char **p, const int64_t *s, int64_t n, void *ctx) {
    const int64_t es = *(const int64_t *)ctx;
    if (s[0] == es && s[1] == es) { memcpy(p[0], p[1], (size_t)(n * es)); return; }
    if (s[0] == es && s[1] == 0 && es == 4) { uint32_t v, *o = (uint32_t *)p[0]; memcpy(&v, p[1], 4); for (int64_t i = 0; i < n; i++) o[i] = v; return; }
    if (s[0] == es && s[1] == 0 && es == 8) { uint64_t v, *o = (uint64_t *)p[0]; memcpy(&v, p[1], 8); for (int64_t i = 0; i < n; i++) o[i] = v; return; }
    switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) *(uint8_t *)(p[0] + i * s[0]) = *(const uint8_t *)(p[1] + i * s[1]); break;
    case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(p[0] + i * s[0]) = *(const uint16_t *)(p[1] + i * s[1]); break;
    case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(p[0] + i * s[0]) = *(const uint32_t *)(p[1] + i * s[1]); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], (size_t)es); break;
    }
}
static int tn__cpu_copy(tn_tensor *dst, tn_tensor *src) {
    tn__iter it;
    tn__iter_init(&it, dst->shape, dst->ndim);
    tn__iter_add(&it, dst);
    tn__iter_add(&it, src);
    tn_dtype from = src->dtype;
    if (from == dst->dtype && from != TN_BOOL) {
        int64_t es = (int64_t)tn_dtype_size(from);
        tn__iter_run_par(&it, tn__copy_bytes, &es, -1);
        return 0;
    }
    if (tn_dtype_is_complex(dst->dtype) || tn_dtype_is_complex(from)) {
        tn_dtype c[2] = {dst->dtype, from};
        tn__iter_run_par(&it, tn__cast_complex, c, -1);
        return 0;
    }
    if (tn__is_half(dst->dtype) && from == TN_F32) { tn__iter_run_par(&it, tn__half_from_f32, &dst->dtype, -1); return 0; }
    if (tn__is_half(from) && dst->dtype == TN_F32) { tn__iter_run_par(&it, tn__f32_from_half, &from, -1); return 0; }
    if (tn__is_half(from) || tn__is_half(dst->dtype)) {
        tn__half_cast c = {dst->dtype, from};
        tn__iter_run_par(&it, tn__cast_half_any, &c, -1);
        return 0;
    }
    switch (dst->dtype) {
#define TN__CAST_CASE(E, T, S, K) case E: tn__iter_run_par(&it, tn__cast_to_##S, &from, -1); break;
        TN__TYPES(TN__CAST_CASE)
#undef TN__CAST_CASE
        default: return TN__FAIL_INT("copy: dtype %s is not supported on the CPU", tn_dtype_name(dst->dtype));
    }
    return 0;
}

static int tn__cpu_fill(tn_tensor *dst, double value) {
    if (value == 0 && !signbit(value) && tn_is_contiguous(dst)) {   /* zeros (gradient buffers, the view backwards' scatters): all bits 0 in every dtype */
        if (tn_numel(dst) > 0) memset(tn_data_ptr(dst), 0, (size_t)tn_numel(dst) * tn_dtype_size(dst->dtype));
        return 0;
    }
    tn_tensor v; /* a one-element f64 operand broadcast over dst */
    memset(&v, 0, sizeof v);
    tn_storage st;
    memset(&st, 0, sizeof st);
    st.data = &value;
    v.storage = &st;
    v.dtype = TN_F64;
    return tn__cpu_copy(dst, &v);
}

/* Philox draws: element i of a draw uses counter (offset + i), so threads can take ranges
   and the numbers do not depend on how many there are. */
typedef struct { tn_random_op op; char *base; tn_dtype dt; uint64_t seed, offset; double a, b; int64_t low; uint64_t range; } tn__random_args;
static void tn__random_part(void *args, int64_t lo, int64_t hi) {
    const tn__random_args *r = (const tn__random_args *)args;
    const tn_random_op op = r->op;
    const tn_dtype dt = r->dt;
    const uint64_t seed = r->seed, offset = r->offset;
    const double a = r->a, b = r->b;
    char *base = r->base;
    /* uniform float draws (dropout's masks, rand): the op and dtype as constants, so the
       per-element switches fold and the Philox rounds vectorise (the same numbers) */
    if (op == UNIFORM && dt == TN_F32) {
        float *o = (float *)base;
        for (int64_t i = lo; i < hi; i++) {
            int64_t iv;
            o[i] = (float)tn_philox_draw(UNIFORM, true, seed, offset + (uint64_t)i, a, b, 0, 0, &iv);
        }
        return;
    }
    if (op == UNIFORM && dt == TN_F64) {
        double *o = (double *)base;
        for (int64_t i = lo; i < hi; i++) {
            int64_t iv;
            o[i] = tn_philox_draw(UNIFORM, false, seed, offset + (uint64_t)i, a, b, 0, 0, &iv);
        }
        return;
    }
    for (int64_t i = lo; i < hi; i++) {
        int64_t iv;
        double v = tn_philox_draw((int)op, dt == TN_F32, seed, offset + (uint64_t)i, a, b, r->low, r->range, &iv);
        if (op == RANDINT && dt == TN_I64) { ((int64_t *)base)[i] = iv; continue; } /* exact */
        switch (dt) {
        case TN_F32: ((float *)base)[i] = (float)v; break;
        case TN_F64: ((double *)base)[i] = v; break;
        case TN_I32: ((int32_t *)base)[i] = (int32_t)v; break;
        case TN_I64: ((int64_t *)base)[i] = (int64_t)v; break;
        case TN_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
        case TN_I8: ((int8_t *)base)[i] = tn__cvt_i8_flt(v); break;
        case TN_I16: ((int16_t *)base)[i] = tn__cvt_i16_flt(v); break;
        default: ((bool *)base)[i] = v != 0; break;
        }
    }
}
static int tn__cpu_random(tn_random_op op, tn_tensor *out, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range) {
    const int64_t n = tn_numel(out);
    tn__random_args r = {op, (char *)tn_data_ptr(out), out->dtype, seed, offset, a, b, low, range};
    tn__parallel_range(tn__par_threads(tn__mul_sat(n, 16), n), n, tn__random_part, &r);   /* a draw costs about 16 simple ops */
    return 0;
}

static int tn__check_dtype_arg(const char *fn, tn_dtype dtype) {
    if ((unsigned)dtype >= TN_NUM_DTYPES) return TN__FAIL_INT("%s: invalid dtype %d", fn, (int)dtype);
    return 0;
}
/* A dtype the CPU kernels can write (creation functions that fill values). */
static int tn__check_cpu_dtype_arg(const char *fn, tn_dtype dtype) { return tn__check_dtype_arg(fn, dtype); }

/* New uninitialised tensor after checking a user shape, untracked. */
static tn_tensor *tn__new_checked(const char *fn, const int64_t *shape, int ndim, tn_dtype dtype) {
    if (tn__check_shape(fn, shape, ndim) || tn__check_dtype_arg(fn, dtype)) return NULL;
    return TN__AS(fn, tn__new(dtype, TN_CPU, shape, ndim)); /* out of memory reads "tn_zeros: out of memory ..." */
}

/* PyTorch refuses a fill value that does not fit an integer dtype (300 into uint8). */
static int tn__check_fill_value(const char *fn, double v, tn_dtype dtype) {
    if (tn__is_int(dtype) && !(v >= tn__int_lowest(dtype) && v <= tn__int_highest(dtype)))
        return TN__FAIL_INT("%s: value %g cannot be converted to type %s without overflow", fn, v, tn_dtype_name(dtype));
    return 0;
}

static tn_tensor *tn__filled(const char *fn, const int64_t *shape, int ndim, double value, tn_dtype dtype) {
    if (tn__check_cpu_dtype_arg(fn, dtype) || tn__check_fill_value(fn, value, dtype)) return NULL;
    tn_tensor *t = tn__new_checked(fn, shape, ndim, dtype);
    if (t && tn__backend(t->device)->fill(t, value)) { tn_release(t); return NULL; }
    return t;
}

TNDEF tn_tensor *tn_empty(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__own(tn__new_checked("tn_empty", shape, ndim, dtype)); }
TNDEF tn_tensor *tn_zeros(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__own(tn__filled("tn_zeros", shape, ndim, 0, dtype)); }
TNDEF tn_tensor *tn_ones(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__own(tn__filled("tn_ones", shape, ndim, 1, dtype)); }
TNDEF tn_tensor *tn_full(const int64_t *shape, int ndim, double value, tn_dtype dtype) { return tn__own(tn__filled("tn_full", shape, ndim, value, dtype)); }

TNDEF tn_tensor *tn_from_data(const void *data, const int64_t *shape, int ndim, tn_dtype dtype) {
    tn_tensor *t = tn__new_checked("tn_from_data", shape, ndim, dtype);
    if (!t) return NULL;
    size_t nb = (size_t)tn_numel(t) * tn_dtype_size(dtype);
    if (nb && !data) { tn_release(t); return (tn_tensor *)tn__error("tn_from_data: data is NULL"); }
    if (nb) memcpy(tn_data_ptr(t), data, nb);
    return tn__own(t);
}

static void tn__noop_deleter(void *data, void *ctx) { (void)data; (void)ctx; }
/* A CPU storage over memory someone else allocated, freed by deleter(data, ctx). */
static tn_storage *tn__foreign_storage(void *data, size_t nbytes, void (*deleter)(void *, void *), void *ctx) {
    tn_storage *s = (tn_storage *)TN_MALLOC(sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->refcount = 1;
    s->data = data;
    s->nbytes = nbytes;
    s->device = TN_CPU;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    TN__ATOMIC_ADD(&tn__live_storages, 1);
    return s;
}

/* A tensor over memory someone else allocated on device (tn_from_blob, tn_from_dlpack),
   freed by deleter(data, ctx) with its storage. */
static tn_tensor *tn__from_memory(const char *fn, void *data, const int64_t *shape, int ndim, const int64_t *strides, tn_dtype dtype,
                                  tn_device device, void (*deleter)(void *data, void *ctx), void *ctx) {
    if (tn__check_shape(fn, shape, ndim) || tn__check_dtype_arg(fn, dtype)) return NULL;
    if (!data) return (tn_tensor *)tn__error("%s: data is NULL", fn);
    int64_t st[TN_MAX_DIMS], span = 1;
    tn__contiguous_strides(shape, ndim, st);
    for (int i = 0; i < ndim; i++) {
        if (strides) {
            if (strides[i] < 0) return (tn_tensor *)tn__error("%s: negative stride %lld", fn, (long long)strides[i]);
            st[i] = strides[i];
        }
        if (shape[i] == 0) span = 0;
    }
    if (span) {
        int64_t last, bytes;
        if (!tn__span_ok(shape, st, ndim, 0, &last) || last == INT64_MAX || !tn__mul_ok(last + 1, (int64_t)tn_dtype_size(dtype), &bytes))

            return (tn_tensor *)tn__error("%s: shape %s with strides %s reaches past any addressable memory", fn, tn__shape_str(shape, ndim), tn__shape_str(st, ndim));
        span = last + 1;
    }
    /* the deleter is attached once nothing can fail: on error the memory stays the caller's */
    tn_storage *s = tn__foreign_storage(data, (size_t)span * tn_dtype_size(dtype), tn__noop_deleter, NULL);
    if (!s) return (tn_tensor *)tn__error("%s: out of memory", fn);
    s->device = device;
    tn_tensor *t = tn__tensor_over(s, dtype, shape, st, ndim, 0);
    if (t && deleter) { s->deleter = deleter; s->deleter_ctx = ctx; }
    return t;
}
TNDEF tn_tensor *tn_from_blob(void *data, const int64_t *shape, int ndim, const int64_t *strides, tn_dtype dtype,
                              void (*deleter)(void *data, void *ctx), void *ctx) {
    return tn__own(tn__from_memory("tn_from_blob", data, shape, ndim, strides, dtype, TN_CPU, deleter, ctx));
}

static tn_tensor *tn__scalar_new(double value, tn_dtype dtype, bool wrapped) {
    tn_tensor *t = tn__filled("tn_scalar", NULL, 0, value, dtype);
    if (t) t->is_wrapped_number = wrapped;
    return t;
}
static tn_tensor *tn__scalar_tensor_impl(double value, tn_dtype dtype) { return tn__own(tn__scalar_new(value, dtype, false)); }
TNDEF tn_tensor *tn_scalar(double value) { return tn__own(tn__scalar_new(value, TN_F64, true)); }
TNDEF tn_tensor *tn_scalar_bool(bool value) { return tn__own(tn__scalar_new(value, TN_BOOL, true)); }
TNDEF tn_tensor *tn_scalar_int(int64_t value) {
    tn_tensor *t = tn__scalar_new(0, TN_I64, true);
    if (t) *(int64_t *)tn_data_ptr(t) = value;
    return tn__own(t);
}
TNDEF tn_tensor *tn_scalar_complex(double re, double im) {
    tn_tensor *t = tn__scalar_new(0, TN_C128, true);
    if (t) { ((double *)tn_data_ptr(t))[0] = re; ((double *)tn_data_ptr(t))[1] = im; }
    return tn__own(t);
}
TNDEF tn_tensor *tn_scalar_tensor(double value, tn_dtype dtype) { return TN__AS("tn_scalar_tensor", tn__scalar_tensor_impl(value, dtype)); }

/* PyTorch's CPU kernels of arange and linspace fill a contiguous result two 32-byte vectors
   at a time (AVX2) and the tail one element at a time: a vector's first element comes from
   the scalar formula f(i), the others from it plus k steps. The values differ from f(i + k)
   in the last bit (floats) or by truncation (integers), so they are computed the same way
   here: lanes(dtype) elements per vector, vectors in pairs. Its compiler fuses the scalar
   formula's multiply-add (and arange's lanes'), hence fma() where it rounds once. */
/* linspace/logspace's start or end in an integral dtype: truncated, and PyTorch's overflow
   error where it does not fit (uint8 takes -255..-1 as an int does: modulo 256) */
static int tn__range_end(const char *fn, double v, tn_dtype dtype, double *out) {
    const double lo = dtype == TN_U8 ? -255 : tn__int_lowest(dtype);
    const double hi = dtype == TN_I64 ? 9223372036854774784.0 : tn__int_highest(dtype);
    if (!(v >= lo && v <= hi)) return TN__FAIL_INT("%s: value cannot be converted to type %s without overflow (got %g)", fn, tn_dtype_name(dtype), v);
    v = trunc(v);
    *out = dtype == TN_U8 && v < 0 ? v + 256 : v;
    return 0;
}
static int64_t tn__range_lanes(tn_dtype dtype) { return 32 / (int64_t)tn_dtype_size(dtype); }
static bool tn__range_vector(int64_t i, int64_t n, int64_t lanes) { return i < n - n % (2 * lanes); }

TNDEF tn_tensor *tn_arange(double start, double end, double step, tn_dtype dtype) {
    if (tn__check_cpu_dtype_arg("tn_arange", dtype)) return NULL;
    if (dtype == TN_BOOL || tn_dtype_is_complex(dtype)) return (tn_tensor *)tn__error("tn_arange: \"arange_cpu\" not implemented for '%s'", tn__torch_type_name(dtype));
    const bool integral = !tn_dtype_is_floating(dtype);
    /* an integral result takes start, end and step truncated to int64 first (PyTorch's
       accumulate type): arange(0, 5, 1.5, dtype=int64) steps by 1 */
    double xs = start, xe = end, xst = step;
    if (integral) {
        if (!isfinite(start) || !isfinite(end)) return (tn_tensor *)tn__error("tn_arange: unsupported range: %g -> %g", start, end);
        if (step != step || fabs(step) >= 9.2e18 || fabs(start) >= 9.2e18 || fabs(end) >= 9.2e18)
            return (tn_tensor *)tn__error("tn_arange: start, end and step must fit in int64 for an integral dtype");
        xs = trunc(start); xe = trunc(end); xst = trunc(step);
    }
    if (xst == 0 || xst != xst) return (tn_tensor *)tn__error("tn_arange: step must be nonzero");
    if (!isfinite(xs) || !isfinite(xe)) return (tn_tensor *)tn__error("tn_arange: unsupported range: %g -> %g", start, end);
    if ((xst > 0 && xe < xs) || (xst < 0 && xe > xs))
        return (tn_tensor *)tn__error("tn_arange: upper bound and larger bound inconsistent with step sign (start %g, end %g, step %g)", start, end, step);
    double nd;
    if (dtype == TN_I64) { /* int64: exact integer arithmetic, ceil of an integer quotient */
        int64_t s = (int64_t)xs, e = (int64_t)xe, st = (int64_t)xst, sgn = st > 0 ? 1 : -1;
        nd = (double)((e - s + st - sgn) / st);
    } else {
        nd = ceil((end - start) / step);   /* the other dtypes: from the values as given */
    }
    if (nd > 9e15) return (tn_tensor *)tn__error("tn_arange: too many elements (%g)", nd);
    int64_t n = nd > 0 ? (int64_t)nd : 0;
    tn_tensor *t = tn__new_checked("tn_arange", &n, 1, dtype);
    if (!t) return NULL;
    tn_tensor *tmp = tn__new(TN_F64, TN_CPU, &n, 1);
    if (!tmp) { tn_release(t); return NULL; }
    double *v = (double *)tmp->storage->data;
    const int64_t lanes = tn__range_lanes(dtype);
    for (int64_t i = 0; i < n; i++) {
        if (integral) { v[i] = xs + (double)i * xst; continue; }   /* exact in int64 (and in double up to 2^53) */
        const int64_t i0 = tn__range_vector(i, n, lanes) ? i - i % lanes : i;
        const double b = fma(xst, (double)i0, xs);
        if (i == i0) v[i] = dtype == TN_F32 ? (float)b : b;
        else if (dtype == TN_F32) v[i] = (float)fma((double)(i - i0), xst, (double)(float)b);
        else v[i] = fma((double)(i - i0), xst, b);
    }
    tn__cpu_copy(t, tmp);
    tn_release(tmp);
    return tn__own(t);
}

/* linspace's value i: from start in the first half, from end in the second (both ends exact) */
#define TN__LINSPACE_AT(FMA, T, i) ((i) < half ? FMA(st, (T)(i), s) : FMA(-st, (T)(steps - (i) - 1), e))
TNDEF tn_tensor *tn_linspace(double start, double end, int64_t steps, tn_dtype dtype) {
    if (steps < 0) return (tn_tensor *)tn__error("tn_linspace: number of steps must be non-negative, got %lld", (long long)steps);
    if (tn__check_cpu_dtype_arg("tn_linspace", dtype)) return NULL;
    if (dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_linspace: \"linspace_cpu\" not implemented for 'Bool'");
    if (tn_dtype_is_complex(dtype)) {   /* real ends: the part dtype's values, imaginary parts 0 */
        tn_tensor *r = tn_linspace(start, end, steps, tn_dtype_to_real(dtype));
        return r ? tn_to_dtype(r, dtype) : NULL;
    }
    double s0 = start, e0 = end;
    if (!tn_dtype_is_floating(dtype) && (tn__range_end("tn_linspace", start, dtype, &s0) || tn__range_end("tn_linspace", end, dtype, &e0))) return NULL;
    tn_tensor *t = tn__new_checked("tn_linspace", &steps, 1, dtype);
    tn_tensor *tmp = t ? tn__new(TN_F64, TN_CPU, &steps, 1) : NULL;
    if (!tmp) { tn_release(t); return NULL; }
    double *v = (double *)tmp->storage->data;
    const int64_t half = steps / 2, lanes = tn__range_lanes(dtype);
    if (steps == 1) {
        v[0] = s0;
    } else if (dtype == TN_F32) { /* float arithmetic throughout, as PyTorch's float kernel */
        const float s = (float)start, e = (float)end, st = (e - s) / (float)(steps - 1);
        for (int64_t i = 0; i < steps; i++) {
            const int64_t i0 = tn__range_vector(i, steps, lanes) ? i - i % lanes : i;
            const float b = TN__LINSPACE_AT(fmaf, float, i0), k = (float)(i - i0) * st;
            v[i] = i == i0 ? b : (float)(b + k);
        }
    } else if (dtype == TN_F64) {
        const double s = start, e = end, st = (e - s) / (double)(steps - 1);
        for (int64_t i = 0; i < steps; i++) {
            const int64_t i0 = tn__range_vector(i, steps, lanes) ? i - i % lanes : i;
            const double b = TN__LINSPACE_AT(fma, double, i0), k = (double)(i - i0) * st;
            v[i] = i == i0 ? b : b + k;
        }
    } else { /* integral: start and end truncated first, a double step, each value truncated */
        const double s = s0, e = e0, st = (e - s) / (double)(steps - 1);
        for (int64_t i = 0; i < steps; i++) {
            const int64_t i0 = tn__range_vector(i, steps, lanes) ? i - i % lanes : i;
            const double b = trunc(TN__LINSPACE_AT(fma, double, i0)), k = (double)(i - i0) * st;
            v[i] = i == i0 ? b : trunc(b + k);
        }
    }
    tn__cpu_copy(t, tmp);
    tn_release(tmp);
    return tn__own(t);
}
#undef TN__LINSPACE_AT

TNDEF tn_tensor *tn_logspace_opts(double start, double end, int64_t steps, tn_dtype dtype, tn_logspace_fn_opts o) {
    const double base = o.base;
    if (steps < 0) return (tn_tensor *)tn__error("tn_logspace: number of steps must be non-negative, got %lld", (long long)steps);
    if (tn__check_cpu_dtype_arg("tn_logspace", dtype)) return NULL;
    if (dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_logspace: \"logspace_cpu\" not implemented for 'Bool'");
    if (tn_dtype_is_complex(dtype)) {   /* real ends: the part dtype's values, imaginary parts 0 */
        tn_tensor *r = tn_logspace(start, end, steps, tn_dtype_to_real(dtype), .base = base);
        return r ? tn_to_dtype(r, dtype) : NULL;
    }
    double s = start, e = end;
    if (dtype == TN_F32) { s = (float)start; e = (float)end; }
    else if (!tn_dtype_is_floating(dtype) && (tn__range_end("tn_logspace", start, dtype, &s) || tn__range_end("tn_logspace", end, dtype, &e))) return NULL;
    tn_tensor *t = tn__new_checked("tn_logspace", &steps, 1, dtype);
    tn_tensor *tmp = t ? tn__new(TN_F64, TN_CPU, &steps, 1) : NULL;
    if (!tmp) { tn_release(t); return NULL; }
    double *v = (double *)tmp->storage->data;
    /* the step in double from the ends in the result's type (float32 ends subtract in float) */
    const double st = steps > 1 ? (dtype == TN_F32 ? (double)((float)e - (float)s) : e - s) / (double)(steps - 1) : 0;
    const int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; i++) {
        double p = steps == 1 ? pow(base, start) : i < half ? pow(base, s + st * (double)i) : pow(base, e - st * (double)(steps - i - 1));
        if (dtype == TN_F32) p = (float)p;
        else if (!tn_dtype_is_floating(dtype)) p = trunc(p);
        v[i] = p;
    }
    tn__cpu_copy(t, tmp);
    tn_release(tmp);
    return tn__own(t);
}
TNDEF tn_tensor *tn_logspace_str(double start, double end, int64_t steps, tn_dtype dtype, const char *options) { TN__KW_STR(tn_logspace_fn_opts, logspace, "tn_logspace", options, tn_logspace_opts(start, end, steps, dtype, o)); }

TNDEF tn_tensor *tn_eye(int64_t n, int64_t m, tn_dtype dtype) {
    if (n < 0) return (tn_tensor *)tn__error("tn_eye: n must be greater or equal to 0, got %lld", (long long)n);
    if (m == TN_NONE || m == -1) m = n;
    if (m < 0) return (tn_tensor *)tn__error("tn_eye: m must be greater or equal to 0, got %lld", (long long)m);
    int64_t shape[2] = {n, m};
    tn_tensor *t = tn__filled("tn_eye", shape, 2, 0, dtype);
    if (!t) return NULL;
    tn_tensor diag = tn__shallow(t); /* the diagonal as a strided 1-d view */
    diag.ndim = 1;
    diag.shape[0] = TN__MIN(n, m);
    diag.strides[0] = m + 1;
    tn__cpu_fill(&diag, 1);
    return tn__own(t);
}

TNDEF tn_tensor *tn_empty_like(tn_tensor *t) {
    TN__CHECK_NULL(t);
    return tn__own(tn__new(t->dtype, t->device, t->shape, t->ndim));
}
static tn_tensor *tn__full_like(tn_tensor *t, double v) {
    tn_tensor *r = tn__new(t->dtype, t->device, t->shape, t->ndim);
    if (r && tn__backend(r->device)->fill(r, v)) { tn_release(r); return NULL; }
    return r;
}
/* A new tensor filled with v on any device (no copy from the host), untracked. */
static tn_tensor *tn__full_on(const int64_t *shape, int ndim, double v, tn_dtype dtype, tn_device device) {
    tn_tensor *r = tn__new(dtype, device, shape, ndim);
    if (r && tn__backend(device)->fill(r, v)) { tn_release(r); return NULL; }
    return r;
}
/* int64 0, 1, ..., n - 1 on any device (owned); off the CPU made there: the running sum of ones, less one */
static tn_tensor *tn__arange_on(int64_t n, tn_device device) {
    if (device == TN_CPU) return tn_arange(0, (double)n, 1, TN_I64);
    return tn_sub(tn_cumsum(tn__own(tn__full_on(&n, 1, 1, TN_I64, device)), 0), tn_scalar_int(1));
}
static tn_tensor *tn__zeros_like_impl(tn_tensor *t) { TN__CHECK_NULL(t); return tn__own(tn__full_like(t, 0)); }
static tn_tensor *tn__ones_like_impl(tn_tensor *t) { TN__CHECK_NULL(t); return tn__own(tn__full_like(t, 1)); }
static tn_tensor *tn__full_like_impl(tn_tensor *t, double v) { TN__CHECK_NULL(t); return tn__own(tn__full_like(t, v)); }

static int tn__cuda_graph_refuse(const char *fn, const char *what);   /* src/backend/cuda_graph.c */
/* dst <- src (src broadcast to dst), through the backend that owns the non-CPU side. */
static int tn__copy(tn_tensor *dst, tn_tensor *src) {
    const tn_backend *be = tn__backend(dst->device != TN_CPU ? dst->device : src->device);
    if (!be) return TN__FAIL_INT("copy: no backend for device %s", tn_device_name(src->device));
    if (dst->device != src->device && !tn__si_inside && tn_cuda_graph_capturing())   /* a synchronous copy: no capture holds one */
        return tn__cuda_graph_refuse("copy", dst->device == TN_CPU ? "a copy from the GPU to the host (.item(), .cpu(), .tolist(), printing: it synchronises)"
                                                                     : "a copy from the host to the GPU (a CPU tensor moved or used where a GPU one is needed)");
    if (tn__check_cpu_dtype("copy", src) || tn__check_cpu_dtype("copy", dst)) return -1;
    if (be->copy(dst, src)) return -1;
    /* a copy to the host waited for the device: a failed device-side check surfaces here */
    return dst->device == TN_CPU && src->device != TN_CPU && !tn__si_inside ? tn__deferred_report("a copy to the host") : 0;
}
TNDEF tn_tensor *tn_full_like(tn_tensor *t, double v) { return TN__AS("tn_full_like", tn__full_like_impl(t, v)); }
TNDEF tn_tensor *tn_ones_like(tn_tensor *t) { return TN__AS("tn_ones_like", tn__ones_like_impl(t)); }
TNDEF tn_tensor *tn_zeros_like(tn_tensor *t) { return TN__AS("tn_zeros_like", tn__zeros_like_impl(t)); }

/* A contiguous copy of t with the given dtype on the given device, untracked. */
static tn_tensor *tn__copy_as(tn_tensor *t, tn_dtype dtype, tn_device device) {
    tn_tensor *r = tn__new(dtype, device, t->shape, t->ndim);
    if (r && tn__copy(r, t)) { tn_release(r); return NULL; }
    return r;
}

/* in converted to dtype (a new reference either way), untracked. */
static tn_tensor *tn__as_dtype(tn_tensor *in, tn_dtype dtype) {
    return in->dtype == dtype ? tn_retain(in) : tn__copy_as(in, dtype, in->device);
}

/* A copy of t (new dtype or device) with its node: the gradient flows back unchanged
   and is converted to t's dtype and device by the engine. */
static tn_tensor *tn__copy_record(tn_tensor *t, tn_tensor *out, tn__gop op) {
    tn_node *node = out ? tn__node_new(op, 0, &t, 1) : NULL;
    return tn__node_attach(node, out);
}
TNDEF tn_tensor *tn_clone(tn_tensor *t) { TN__CHECK_NULL(t); if (tn__check_cpu_dtype("tn_clone", t)) return NULL; return tn__own(tn__copy_record(t, tn__copy_as(t, t->dtype, t->device), G_COPY)); }
static tn_tensor *tn__contiguous_impl(tn_tensor *t) {
    TN__CHECK_NULL(t);
    return tn__own(tn_is_contiguous(t) ? tn_retain(t) : tn__copy_record(t, tn__copy_as(t, t->dtype, t->device), G_COPY));
}
TNDEF tn_tensor *tn_contiguous(tn_tensor *t) { return TN__AS("tn_contiguous", tn__contiguous_impl(t)); }
TNDEF tn_tensor *tn_to_dtype(tn_tensor *t, tn_dtype dtype) {
    TN__CHECK_NULL(t);
    if (tn__check_dtype_arg("tn_to_dtype", dtype)) return NULL;
    if (t->device == TN_CPU && t->dtype != dtype && (tn__check_cpu_dtype("tn_to_dtype", t) || tn__check_cpu_dtype_arg("tn_to_dtype", dtype))) return NULL;
    return tn__own(t->dtype == dtype ? tn_retain(t) : tn__grad_name(tn__copy_record(t, tn__copy_as(t, dtype, t->device), G_COPY), "ToCopyBackward0"));
}
TNDEF tn_tensor *tn_to(tn_tensor *t, tn_device device) {
    TN__CHECK_NULL(t);
    if (t->device == device) return tn__own(tn_retain(t));
    if (!tn__backend(device)) return (tn_tensor *)tn__error("tn_to: device '%s' is not available: %s", tn_device_name(device),
        device == TN_CUDA ? tn_cuda_unavailable_reason() : "invalid device");
    return tn__own(tn__copy_record(t, tn__copy_as(t, t->dtype, device), G_TO));
}

/* The value of one element, read back to the host. */
static double tn__read_double(tn_tensor *t) {
    double v = NAN;
    tn_tensor *h = tn__copy_as(t, TN_F64, TN_CPU);
    if (h) { v = *(double *)tn_data_ptr(h); tn_release(h); }
    return v;
}

TNDEF double tn_item(tn_tensor *t) {
    if (!t) return NAN;
    if (t->device == TN_CPU && tn__check_cpu_dtype("tn_item", t)) return NAN;
    if (tn_numel(t) != 1) {
        tn__error("tn_item: a tensor with %lld elements (shape %s) cannot be converted to a scalar", (long long)tn_numel(t), TN__SHAPE(t));
        return NAN;
    }
    if (tn_dtype_is_complex(t->dtype)) {   /* a double holds it only when the imaginary part is 0 */
        double re = NAN, im = 0;
        if (tn_item_complex(t, &re, &im)) return NAN;
        if (im != 0 || im != im) { tn__error("tn_item: a complex value (%g%+gj) cannot be converted to a double; use tn_item_complex", re, im); return NAN; }
        return re;
    }
    if (t->dtype == TN_I64) { /* exact for |v| > 2^53 too, as far as a double allows */
        tn_tensor *h = tn__copy_as(t, TN_I64, TN_CPU);
        double v = h ? (double)*(int64_t *)tn_data_ptr(h) : NAN;
        tn_release(h);
        return v;
    }
    return tn__read_double(t);
}

/* Copy src into dst, cloning src first when the two overlap in memory but are not the
   same view (e.g. x.copy_(x.flip(0))), so no element is read after it was written. */
static int tn__copy_into(const char *fn, tn_tensor *dst, tn_tensor *src) {
    int64_t bshape[TN_MAX_DIMS];
    int nd = tn__broadcast(dst->shape, dst->ndim, src->shape, src->ndim, bshape);
    if (nd < 0 || nd != dst->ndim || memcmp(bshape, dst->shape, (size_t)nd * sizeof(int64_t)) != 0)
        return TN__FAIL_INT("%s: source of shape %s cannot be broadcast to destination %s", fn, TN__SHAPE(src), TN__SHAPE(dst));
    if (tn__check_same_device(fn, dst, src) || tn__check_no_internal_overlap(fn, dst)) return -1;
    tn_tensor *s = src;
    bool same_view = src->offset == dst->offset && src->ndim == dst->ndim &&
                     !memcmp(src->strides, dst->strides, (size_t)dst->ndim * sizeof(int64_t)) && src->dtype == dst->dtype;
    if (src->storage == dst->storage && !same_view) {
        s = tn__copy_as(src, src->dtype, src->device);
        if (!s) return -1;
    }
    int rc = tn__copy(dst, s);
    if (s != src) tn_release(s);
    if (rc == 0) tn__bump_version(dst);
    return rc;
}

TNDEF int tn_copy_(tn_tensor *dst, tn_tensor *src) {
    if (!dst || !src) return -1;
    if ((dst->device == TN_CPU && tn__check_cpu_dtype("tn_copy_", dst)) || (src->device == TN_CPU && tn__check_cpu_dtype("tn_copy_", src))) return -1;
    if (src->device != dst->device) {   /* across devices, as PyTorch's copy_: src moved to dst's first (differentiably: tn_to) */
        tn_scope_begin();
        tn_tensor *s = tn_to(src, dst->device);
        const int rc = s ? tn_copy_(dst, s) : -1;
        tn_scope_end();
        return rc;
    }
    int m = tn__inplace_mode("tn_copy_", dst, &src, 1);
    if (m < 0) return -1;
    if (m) { /* dst takes src's values and history (the old value gets no gradient, as PyTorch) */
        tn_scope_begin();
        /* where(true, src, old): the value of src, its gradient, and zeros for the old value */
        tn_tensor *old = tn_clone(dst);
        tn_tensor *r = tn_where(tn_ones(NULL, 0, TN_BOOL), tn_to_dtype(src, dst->dtype), old);
        int rc = tn__inplace_finish("tn_copy_", dst, r);
        tn_scope_end();
        return rc;
    }

    return tn__copy_into("tn_copy_", dst, src);
}

TNDEF tn_tensor *tn_resize_(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    if (tn__check_shape("tn_resize_", shape, ndim)) return NULL;
    if (t->requires_grad) return (tn_tensor *)tn__error("tn_resize_: cannot resize variables that require grad");
    int64_t n = tn__numel(shape, ndim), need;
    if (!tn__add_ok(t->offset, n, &need) || !tn__mul_ok(need, (int64_t)tn_dtype_size(t->dtype), &need))
        return (tn_tensor *)tn__error("tn_resize_: shape %s past offset %lld overflows the storage size", tn__shape_str(shape, ndim), (long long)t->offset);
    if ((size_t)need > t->storage->nbytes) {
        if (t->storage->deleter) return (tn_tensor *)tn__error("tn_resize_: Trying to resize storage that is not resizable (memory from tn_from_blob)");
        tn_storage *s = tn__storage_new((size_t)need, t->device);
        if (!s) return NULL;
        int64_t nb = (int64_t)t->storage->nbytes, one = 1;
        if (nb > 0) {   /* the old bytes first, copied as uint8 views of both storages */
            TN__ATOMIC_ADD(&s->refcount, 1);
            TN__ATOMIC_ADD(&t->storage->refcount, 1);
            tn_tensor *d = tn__tensor_over(s, TN_U8, &nb, &one, 1, 0), *o = tn__tensor_over(t->storage, TN_U8, &nb, &one, 1, 0);
            int rc = d && o ? tn_copy_(d, o) : -1;
            tn_release(d);
            tn_release(o);
            if (rc) { tn__storage_release(s); return NULL; }
        }
        tn__storage_release(t->storage);
        t->storage = s;
    }
    t->ndim = ndim;
    if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);   /* a 0-d shape may be NULL */
    tn__contiguous_strides(t->shape, ndim, t->strides);
    tn__bump_version(t);
    return t;
}

/* The coordinates of the lower (upper) triangle, row by row, on the host. */
static tn_tensor *tn__tri_indices(const char *fn, int64_t row, int64_t col, int64_t offset, tn_dtype dtype, bool upper) {
    if (row < 0) return (tn_tensor *)tn__error("%s: row must be non-negative, got %lld", fn, (long long)row);
    if (col < 0) return (tn_tensor *)tn__error("%s: col must be non-negative, got %lld", fn, (long long)col);
    if (dtype != TN_I64 && dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: \"%s\" not implemented for '%s' (int64 or int32 only)", fn, upper ? "triu_indices" : "tril_indices", tn__torch_type_name(dtype));
    if (dtype == TN_I32 && (row > INT32_MAX || col > INT32_MAX))
        return (tn_tensor *)tn__error("%s: a %lld x %lld matrix's coordinates do not fit int32", fn, (long long)row, (long long)col);
    /* row i has the columns [lo, hi): [0, min(col, i + offset + 1)) or [max(0, i + offset), col);
       an offset past either corner means the same as the corner (and the sums then fit) */
    int64_t cells;
    if (!tn__mul_ok(row, col, &cells)) return (tn_tensor *)tn__error("%s: a %lld x %lld matrix has more elements than int64 counts", fn, (long long)row, (long long)col);
    offset = TN__MAX(-row, TN__MIN(offset, col));
    #define TN__TRI_RANGE(i, lo, hi) int64_t lo = upper ? TN__MAX(0, TN__MIN(col, (i) + offset)) : 0, \
        hi = upper ? col : TN__MAX(0, TN__MIN(col, (i) + offset + 1))
    int64_t count = 0;
    for (int64_t i = 0; i < row; i++) {
        TN__TRI_RANGE(i, lo, hi);
        count += hi - lo;   /* at most row * col elements: checked by tn__new */
    }
    int64_t shape[2] = {2, count};
    tn_tensor *h = tn__new_checked(fn, shape, 2, TN_I64), *r = NULL;
    if (h) {
        int64_t *p = (int64_t *)h->storage->data, k = 0;
        for (int64_t i = 0; i < row; i++) {
            TN__TRI_RANGE(i, lo, hi);
            for (int64_t j = lo; j < hi; j++, k++) { p[k] = i; p[count + k] = j; }
        }
        r = dtype == TN_I64 ? h : tn__copy_as(h, dtype, TN_CPU);
        if (r != h) tn_release(h);
    }
    #undef TN__TRI_RANGE
    return tn__own(r);
}
TNDEF tn_tensor *tn_tril_indices_opts(int64_t row, int64_t col, tn_tri_indices_fn_opts o) {
    return tn__tri_indices("tn_tril_indices", row, col, o.offset, (tn_dtype)o.dtype, false);
}
TNDEF tn_tensor *tn_tril_indices_str(int64_t row, int64_t col, const char *options) {
    TN__KW_STR(tn_tri_indices_fn_opts, tri_indices, "tn_tril_indices", options, tn_tril_indices_opts(row, col, o));
}
TNDEF tn_tensor *tn_triu_indices_opts(int64_t row, int64_t col, tn_tri_indices_fn_opts o) {
    return tn__tri_indices("tn_triu_indices", row, col, o.offset, (tn_dtype)o.dtype, true);
}
TNDEF tn_tensor *tn_triu_indices_str(int64_t row, int64_t col, const char *options) {
    TN__KW_STR(tn_tri_indices_fn_opts, tri_indices, "tn_triu_indices", options, tn_triu_indices_opts(row, col, o));
}
