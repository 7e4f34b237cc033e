static const char *const tn__dtype_names[TN_NUM_DTYPES] = {"float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16"};
static const size_t tn__dtype_sizes[TN_NUM_DTYPES] = {4, 8, 4, 8, 1, 1, 2, 2};

TNDEF const char *tn_dtype_name(tn_dtype d) { return (unsigned)d < TN_NUM_DTYPES ? tn__dtype_names[d] : "invalid"; }
TNDEF size_t tn_dtype_size(tn_dtype d) { return (unsigned)d < TN_NUM_DTYPES ? tn__dtype_sizes[d] : 0; }
TNDEF bool tn_dtype_is_floating(tn_dtype d) { return d == TN_F32 || d == TN_F64 || d == TN_F16 || d == TN_BF16; }
TNDEF const char *tn_device_name(tn_device d) { return d == TN_CPU ? "cpu" : d == TN_CUDA ? "cuda" : "invalid"; }
/* PyTorch's ScalarType names, for its "not implemented for 'Long'" messages */
static const char *tn__torch_type_name(tn_dtype d) {
    static const char *const names[TN_NUM_DTYPES] = {"Float", "Double", "Int", "Long", "Byte", "Bool", "Half", "BFloat16"};
    return (unsigned)d < TN_NUM_DTYPES ? names[d] : "invalid";
}
static bool tn__is_int(tn_dtype d) { return d == TN_I32 || d == TN_I64 || d == TN_U8; }
static int tn__category(tn_dtype d) { return d == TN_BOOL ? 0 : tn__is_int(d) ? 1 : 2; }

TNDEF tn_dtype tn_promote_types(tn_dtype a, tn_dtype b) {
    if (a == b) return a;
    int ca = tn__category(a), cb = tn__category(b);
    if (ca != cb) return ca > cb ? a : b;
    if (ca == 1) return a == TN_U8 ? b : b == TN_U8 ? a : (a == TN_I64 || b == TN_I64 ? TN_I64 : TN_I32);
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
        *slot = *slot == TN_NUM_DTYPES ? d : tn_promote_types(*slot, d);
    }
    tn_dtype r = tn__combine_categories(dim, tn__combine_categories(zero, wrapped));
    return r == TN_NUM_DTYPES ? tn__default_dtype : r;
}
