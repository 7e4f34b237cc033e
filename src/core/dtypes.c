static const char *const tn__dtype_names[TN_NUM_DTYPES] = {"float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16", "int8", "int16",
                                                            "complex64", "complex128"};
static const size_t tn__dtype_sizes[TN_NUM_DTYPES] = {4, 8, 4, 8, 1, 1, 2, 2, 1, 2, 8, 16};

TNDEF const char *tn_dtype_name(tn_dtype d) { return (unsigned)d < TN_NUM_DTYPES ? tn__dtype_names[d] : "invalid"; }
TNDEF size_t tn_dtype_size(tn_dtype d) { return (unsigned)d < TN_NUM_DTYPES ? tn__dtype_sizes[d] : 0; }
TNDEF bool tn_dtype_is_floating(tn_dtype d) { return d == TN_F32 || d == TN_F64 || d == TN_F16 || d == TN_BF16; }
TNDEF bool tn_dtype_is_complex(tn_dtype d) { return d == TN_C64 || d == TN_C128; }
TNDEF tn_dtype tn_dtype_to_real(tn_dtype d) { return d == TN_C64 ? TN_F32 : d == TN_C128 ? TN_F64 : d; }
TNDEF tn_dtype tn_dtype_to_complex(tn_dtype d) { return d == TN_F64 ? TN_C128 : tn_dtype_is_floating(d) ? TN_C64 : d; }
TNDEF const char *tn_device_name(tn_device d) { return d == TN_CPU ? "cpu" : d == TN_CUDA ? "cuda" : "invalid"; }
/* PyTorch's ScalarType names, for its "not implemented for 'Long'" messages */
static const char *tn__torch_type_name(tn_dtype d) {
    static const char *const names[TN_NUM_DTYPES] = {"Float", "Double", "Int", "Long", "Byte", "Bool", "Half", "BFloat16", "Char", "Short",
                                                          "ComplexFloat", "ComplexDouble"};
    return (unsigned)d < TN_NUM_DTYPES ? names[d] : "invalid";
}
static bool tn__is_int(tn_dtype d) { return d == TN_I32 || d == TN_I64 || d == TN_U8 || d == TN_I8 || d == TN_I16; }
/* The range of an integral dtype (bool: 0..1), as doubles (int64's ends round to +-2^63). */
static double tn__int_lowest(tn_dtype d) {
    return d == TN_I8 ? -128.0 : d == TN_I16 ? -32768.0 : d == TN_I32 ? -2147483648.0 : d == TN_I64 ? -9223372036854775808.0 : 0;
}
static double tn__int_highest(tn_dtype d) {
    return d == TN_I8 ? 127.0 : d == TN_I16 ? 32767.0 : d == TN_I32 ? 2147483647.0 : d == TN_I64 ? 9223372036854775807.0 : d == TN_U8 ? 255.0 : 1.0;
}
static int tn__category(tn_dtype d) { return d == TN_BOOL ? 0 : tn__is_int(d) ? 1 : tn_dtype_is_complex(d) ? 3 : 2; }

TNDEF tn_dtype tn_promote_types(tn_dtype a, tn_dtype b) {
    if (a == b) return a;
    int ca = tn__category(a), cb = tn__category(b);
    /* complex with float64 (or complex128 with anything) is complex128, as PyTorch's table */
    if (ca == 3 || cb == 3) return a == TN_C128 || b == TN_C128 || a == TN_F64 || b == TN_F64 ? TN_C128 : TN_C64;
    if (ca != cb) return ca > cb ? a : b;
    if (ca == 1) {   /* the wider signed type; uint8 with int8 needs int16 (PyTorch's table) */
        if (a == TN_U8 || b == TN_U8) { tn_dtype o = a == TN_U8 ? b : a; return o == TN_I8 ? TN_I16 : o; }
        return tn_dtype_size(a) >= tn_dtype_size(b) ? a : b;
    }
    if (a == TN_F64 || b == TN_F64) return TN_F64;
    return TN_F32; /* f16 with bf16 or f32 */
}

static tn_dtype tn__default_dtype = TN_F32;
TNDEF int tn_set_default_dtype(tn_dtype d) {
    if (!tn_dtype_is_floating(d)) return TN__FAIL_INT("tn_set_default_dtype: only floating-point types are supported as the default type (got %s)", tn_dtype_name(d));
    if (d != TN_F32 && d != TN_F64) return TN__FAIL_INT("tn_set_default_dtype: %s is not supported as the default type (the CPU kernels refuse half precision)", tn_dtype_name(d));
    tn__default_dtype = d;
    return 0;
}
TNDEF tn_dtype tn_get_default_dtype(void) { return tn__default_dtype; }

/* c10's combine_categories: a lower-priority class (0-d tensors, then wrapped numbers)
   only matters when its category is higher. TN_NUM_DTYPES stands for "undefined". */
static tn_dtype tn__combine_categories(tn_dtype higher, tn_dtype lower) {
    if (higher != TN_NUM_DTYPES && tn_dtype_is_complex(higher)) return higher;
    if (lower != TN_NUM_DTYPES && tn_dtype_is_complex(lower))   /* a floating higher keeps its precision */
        return higher != TN_NUM_DTYPES && tn_dtype_is_floating(higher) ? tn_dtype_to_complex(higher) : lower;
    if (higher != TN_NUM_DTYPES && tn_dtype_is_floating(higher)) return higher;
    if (higher == TN_BOOL || (lower != TN_NUM_DTYPES && tn_dtype_is_floating(lower))) {
        if (higher == TN_NUM_DTYPES) return lower;
        if (lower == TN_NUM_DTYPES) return higher;
        return tn_promote_types(higher, lower);
    }
    return higher != TN_NUM_DTYPES ? higher : lower;
}

TNDEF tn_dtype tn_result_type(tn_tensor *const *ts, int n) {
    tn_dtype dim = TN_NUM_DTYPES, zero = TN_NUM_DTYPES, wrapped = TN_NUM_DTYPES;
    for (int i = 0; i < n; i++) {
        tn_tensor *t = ts[i];
        if (!t) continue;
        tn_dtype *slot = t->is_wrapped_number ? &wrapped : t->ndim == 0 ? &zero : &dim;
        tn_dtype d = t->dtype;
        if (t->is_wrapped_number && tn_dtype_is_floating(d)) d = tn__default_dtype; /* a Python float */
        if (t->is_wrapped_number && tn_dtype_is_complex(d)) d = tn_dtype_to_complex(tn__default_dtype); /* a Python complex */
        *slot = *slot == TN_NUM_DTYPES ? d : tn_promote_types(*slot, d);
    }
    tn_dtype r = tn__combine_categories(dim, tn__combine_categories(zero, wrapped));
    return r == TN_NUM_DTYPES ? tn__default_dtype : r;
}

/* Element conversions, one per destination type and source kind (flt: from double; int:
   from int64_t); the CPU copies (creation.c) and half staging (half.c) use them. */
/* Float -> integer conversions are undefined in C out of range; give what x86 (and so
   PyTorch on CPU) gives: the "integer indefinite" value, uint8 wraps through int64, and
   int8/int16 wrap through int32 (so 300.0 -> int8 44, and beyond int32 0, as PyTorch).
   Integer -> narrower integer keeps the low bits. */
static int64_t tn__f2i64(double v) { return (v != v || v >= 9.2233720368547758e18 || v < -9.2233720368547758e18) ? INT64_MIN : (int64_t)v; }
static float tn__cvt_f32_flt(double v) { return (float)v; }
static float tn__cvt_f32_int(int64_t v) { return (float)v; }
static double tn__cvt_f64_flt(double v) { return v; }
static double tn__cvt_f64_int(int64_t v) { return (double)v; }
static int32_t tn__cvt_i32_flt(double v) { return (v != v || v >= 2147483648.0 || v <= -2147483649.0) ? INT32_MIN : (int32_t)v; }
static int32_t tn__cvt_i32_int(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static int8_t tn__cvt_i8_int(int64_t v) { return (int8_t)(uint8_t)(uint64_t)v; }
static int8_t tn__cvt_i8_flt(double v) { return tn__cvt_i8_int(tn__cvt_i32_flt(v)); }
static int16_t tn__cvt_i16_int(int64_t v) { return (int16_t)(uint16_t)(uint64_t)v; }
static int16_t tn__cvt_i16_flt(double v) { return tn__cvt_i16_int(tn__cvt_i32_flt(v)); }
static int64_t tn__cvt_i64_flt(double v) { return tn__f2i64(v); }
static int64_t tn__cvt_i64_int(int64_t v) { return v; }
static uint8_t tn__cvt_u8_flt(double v) { return (uint8_t)(uint64_t)tn__f2i64(v); }
static uint8_t tn__cvt_u8_int(int64_t v) { return (uint8_t)(uint64_t)v; }
static bool tn__cvt_b_flt(double v) { return v != 0; }
static bool tn__cvt_b_int(int64_t v) { return v != 0; }

