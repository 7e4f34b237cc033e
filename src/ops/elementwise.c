/* ---- dispatch: dtype rules, broadcasting, in-place and aliasing ---- */
#define TN__NAME_ENTRY(name) #name,
static const char *const tn__unary_names_uc[] = {TN_UNARY_OPS(TN__NAME_ENTRY) ""};
static const char *const tn__binary_names_uc[] = {TN_BINARY_OPS(TN__NAME_ENTRY) ""};
static const char *tn__lower(const char *uc) { /* "LOG1P" -> "log1p" (a few rotating buffers) */
    static TN__TLS char bufs[4][32];
    static TN__TLS int which;
    char *b = bufs[which++ & 3];
    size_t i = 0;
    for (; uc[i] && i < 31; i++) b[i] = (char)(uc[i] >= 'A' && uc[i] <= 'Z' ? uc[i] - 'A' + 'a' : uc[i]);
    b[i] = 0;
    return b;
}
TNDEF const char *tn_unary_op_name(tn_unary_op op) { return (unsigned)op < TN_NUM_UNARY_OPS ? tn__lower(tn__unary_names_uc[op]) : "invalid"; }
TNDEF const char *tn_binary_op_name(tn_binary_op op) { return (unsigned)op < TN_NUM_BINARY_OPS ? tn__lower(tn__binary_names_uc[op]) : "invalid"; }

/* in as it is, or a copy when it shares memory with out without being the same view:
   writing out element by element must never clobber an element of in not yet read. */
static tn_tensor *tn__unalias(tn_tensor *out, tn_tensor *in) {
    if (out->storage != in->storage) return tn_retain(in);
    bool same = out->offset == in->offset && out->ndim == in->ndim && out->dtype == in->dtype &&
                !memcmp(out->strides, in->strides, (size_t)out->ndim * sizeof(int64_t)) &&
                !memcmp(out->shape, in->shape, (size_t)out->ndim * sizeof(int64_t));
    return same ? tn_retain(in) : tn__copy_as(in, in->dtype, in->device);
}

/* torch.can_cast: no float -> integral, no non-bool -> bool. */
static bool tn__can_cast(tn_dtype from, tn_dtype to) {
    if (tn_dtype_is_complex(from) && !tn_dtype_is_complex(to)) return false;   /* no complex -> real */
    if (tn_dtype_is_floating(from) && !tn_dtype_is_floating(to) && !tn_dtype_is_complex(to)) return false;
    if (from != TN_BOOL && to == TN_BOOL) return false;
    return true;
}

/* Write result r (a fresh tensor) into the in-place target, converting dtype. */
static tn_tensor *tn__store_inplace(const char *fn, tn_tensor *target, tn_tensor *r) {
    if (!r) return NULL;
    if (tn__check_no_internal_overlap(fn, target)) { tn_release(r); return NULL; }

    if (!tn__can_cast(r->dtype, target->dtype)) {
        tn__error("%s: result type %s can't be cast to the desired output type %s", fn, tn_dtype_name(r->dtype), tn_dtype_name(target->dtype));
        tn_release(r);
        return NULL;
    }
    int rc = tn__copy(target, r);
    tn_release(r);
    if (rc) return NULL;
    tn__bump_version(target);
    return tn_retain(target); /* untracked: callers pass it through tn__own */
}

static bool tn__is_float_op(tn_unary_op op) { return op >= EXP && op <= ERFC; }
static bool tn__is_pred_op(tn_unary_op op) { return op >= LOGICAL_NOT; }

/* Untracked result of a unary op (the engine behind tn_exp and friends). */
/* The dtype a unary op computes in for x, or TN_NUM_DTYPES after an error under fn. */
static tn_dtype tn__unary_dtype(const char *fn, tn_unary_op op, tn_tensor *x) {
    if (tn__check_cpu_dtype(fn, x)) return TN_NUM_DTYPES;
    tn_dtype cd = x->dtype;
    if (tn_dtype_is_complex(cd)) {   /* the ops with complex formulas keep the dtype (abs's real result: tn__unary_raw) */
        if (op == SIGN) return (tn__error("%s: Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.", fn), TN_NUM_DTYPES);
        if (!tn__complex_unary_ok(op)) return (tn__error("%s: \"%s_cpu\" not implemented for '%s'", fn, tn_unary_op_name(op), tn__torch_type_name(cd)), TN_NUM_DTYPES);
        return cd;
    }
    /* before the float32 promotion of float functions: torch refuses integer input here */
    if (!tn_dtype_is_floating(cd) && (op == SILU || op == GELU || op == GELU_TANH || (op >= SOFTPLUS && op <= HARDSIGMOID && op != HARDTANH)))
        return (tn__error("%s: not implemented for dtype %s (floating tensors only, as PyTorch)", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if ((op == FREXP_MANTISSA || op == FREXP_EXPONENT) && !tn_dtype_is_floating(cd))
        return (tn__error("%s: torch.frexp() only supports floating-point dtypes, got %s", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if (tn__is_float_op(op) && !tn_dtype_is_floating(cd)) cd = tn__default_dtype;
    if (op == FRAC && !tn_dtype_is_floating(cd)) return (tn__error("%s: not implemented for dtype %s", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if (op == BITWISE_NOT && tn_dtype_is_floating(cd)) return (tn__error("%s: not implemented for dtype %s (integers and bool only)", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if (cd == TN_BOOL && op == SQUARE) cd = TN_I64; /* square is pow(x, 2): bool promotes to int64 */
    if (cd == TN_BOOL && (op == NEG || op == ABS || op == RELU))
        return (tn__error("%s: not supported for dtype bool%s", fn, op == NEG ? "; use tn_logical_not" : ""), TN_NUM_DTYPES);
    return cd;
}

static tn_tensor *tn__unary_raw(tn_unary_op op, tn_tensor *x, const double *params) {
    char fn[40];
    snprintf(fn, sizeof fn, "tn_%s", tn_unary_op_name(op));
    tn_dtype cd = tn__unary_dtype(fn, op, x);
    if (cd == TN_NUM_DTYPES) return NULL;
    if (!tn_dtype_is_floating(cd) && !tn_dtype_is_complex(cd) && (op == ISNAN || op == ISINF || op == ISFINITE)) { /* integers are always finite */
        tn_tensor *r = tn__new(TN_BOOL, x->device, x->shape, x->ndim);
        if (r && tn__backend(r->device)->fill(r, op == ISFINITE)) { tn_release(r); r = NULL; }
        return r;
    }
    tn_tensor *xc = tn__as_dtype(x, cd);
    tn_tensor *out = xc ? tn__new(tn__is_pred_op(op) ? TN_BOOL : op == ABS ? tn_dtype_to_real(cd) : cd, x->device, x->shape, x->ndim) : NULL;
    if (out && TN__KERNEL(fn, tn__backend(x->device)->unary(op, out, xc, params))) { tn_release(out); out = NULL; }
    tn_release(xc);
    return out;
}

/* Ops whose derivative is a function of the result: like PyTorch they save the result,
   so changing the input afterwards is fine (and changing the result is caught). */
static bool tn__saves_result(tn_unary_op op) {
    return op == EXP || op == EXP2 || op == EXPM1 || op == TANH || op == SIGMOID || op == SQRT || op == RSQRT || op == RELU;
}

/* Record a unary op's node: the input (or the result) is saved, params kept (clamp bounds, softplus). */
/* torch.special's Bessel and Airy functions have no derivative in PyTorch: their result does not require grad */
static bool tn__unary_nondiff(tn_unary_op op) { return op >= BESSEL_J0 && op <= AIRY_AI; }
static tn_tensor *tn__unary_record(tn_unary_op op, tn_tensor *x, const double *params, tn_tensor *out) {
    if (tn__unary_nondiff(op)) return out;
    tn_node *nd = out ? tn__node_new(G_UNARY, op, &x, 1) : NULL;
    if (nd) {
        if (tn__saves_result(op)) tn__node_save_result(nd, out); else tn__node_save(nd, x);
        if (params) memcpy(nd->d, params, 3 * sizeof(double));
    }
    return tn__node_attach(nd, out);
}

static tn_tensor *tn__unary(tn_unary_op op, tn_tensor *x, const double *params) {
    TN__CHECK_NULL(x);
    return tn__own(tn__unary_record(op, x, params, tn__unary_raw(op, x, params)));
}

/* ---- in-place ops under autograd ----
   An in-place op on a tensor in a graph is computed as its out-of-place form on a
   clone of the old value (so a saved old value is never the overwritten one), then the
   result is copied in and its history moved to the tensor, as PyTorch rebases it.
   Refused: leaves that require grad (their .grad would be meaningless) and views
   (the base's history would not see the change; PyTorch's CopySlices is not here yet). */
static int tn__inplace_mode(const char *fn, tn_tensor *x, tn_tensor *const *others, int n) {
    if (tn__grad_disabled) return 0;
    bool any = x->requires_grad;
    for (int i = 0; i < n; i++) any = any || (others[i] && others[i]->requires_grad);
    if (!any) return 0;
    if (x->requires_grad && !x->grad_fn)
        return TN__FAIL_INT("%s: a leaf tensor that requires grad is being used in an in-place operation; use tn_no_grad_begin() or an out-of-place op", fn);
    if (x->base) {
        if (x->base->requires_grad && !x->base->grad_fn)
            return TN__FAIL_INT("%s: a view of a leaf tensor that requires grad is being used in an in-place operation", fn);
        if (!tn_is_contiguous(x->base))
            return TN__FAIL_INT("%s: in-place operations on views of a non-contiguous tensor are not supported under autograd yet; use the out-of-place op", fn);
    } else if (x->is_view) {
        return TN__FAIL_INT("%s: in-place operation on a view whose base is unknown under autograd; use the out-of-place op", fn);
    }
    return 1;
}

/* x <- r, history included (r computed out of place from a clone of x). */
static int tn__inplace_finish(const char *fn, tn_tensor *x, tn_tensor *r) {
    if (!r) return -1;
    if (r->ndim != x->ndim || memcmp(r->shape, x->shape, (size_t)x->ndim * sizeof(int64_t)))
        return TN__FAIL_INT("%s: output with shape %s doesn't match the broadcast shape %s", fn, TN__SHAPE(x), TN__SHAPE(r));
    if (!tn__can_cast(r->dtype, x->dtype))
        return TN__FAIL_INT("%s: result type %s can't be cast to the desired output type %s", fn, tn_dtype_name(r->dtype), tn_dtype_name(x->dtype));
    if (tn__copy(x, r)) return -1;
    tn__bump_version(x);
    if (x->base) { /* a view: the base's history becomes "old base with this region replaced by r"
                      (CopySlices) and the view reads its values from the new base */
        if (tn__tracing) tn__trace_refuse(tn__tracing, "an in-place op on a view");
        tn_tensor *b = x->base, *ins[2] = {b, r};
        tn_node *cs = tn__node_new(G_COPY_SLICES, 0, ins, 2);
        if (!cs) return 0;
        cs->i[0] = x->ndim;
        for (int d = 0; d < x->ndim; d++) { cs->i[1 + d] = x->shape[d]; cs->i[1 + x->ndim + d] = x->strides[d]; }
        cs->i[1 + 2 * x->ndim] = x->offset - b->offset;
        tn__node_attach(cs, b);
        tn_node *vn = tn__node_new(G_BASE_VIEW, 0, &b, 1);
        if (vn) memcpy(vn->i, cs->i, sizeof vn->i);
        tn__node_attach(vn, x);
        return 0;
    }
    if (tn__tracing) tn__trace_alias(tn__tracing, x, r);
    if (r->grad_fn) {
        tn_node *n = r->grad_fn;
        TN__ATOMIC_ADD(&n->refcount, 1);
        x->grad_fn_version = tn_version(x);
        if (x->retains_grad) { /* retain_grad follows the tensor, as PyTorch */
            if (x->grad_fn && x->grad_fn->retain_target == x) x->grad_fn->retain_target = NULL;
            n->retain_target = x;
        }
        tn__node_release(x->grad_fn);
        x->grad_fn = n;
        x->requires_grad = true;
    }
    return 0;
}
static int tn__inplace_begin(const char *fn, tn_tensor *x, tn_tensor *const *others, int n, tn_tensor **x0) {
    *x0 = NULL;
    const int m = tn__inplace_mode(fn, x, others, n);
    if (m <= 0) return m;
    tn_scope_begin();
    *x0 = tn_clone(x);
    return 1;
}
static tn_tensor *tn__inplace_end(const char *fn, tn_tensor *x, tn_tensor *r) {
    const int rc = tn__inplace_finish(fn, x, r);
    tn_scope_end();
    return rc ? NULL : x;
}
/* An in-place op returns its first argument, borrowed (never a new reference: tn_add_(t, t)
   outside a scope leaks nothing); r is the raw path's untracked new reference to it. */
static tn_tensor *tn__borrowed(tn_tensor *r) {
    if (r) tn_release(r);   /* the caller's own reference keeps it alive */
    return r;
}

static tn_tensor *tn__unary_inplace(tn_unary_op op, tn_tensor *x, const double *params) {
    TN__CHECK_NULL(x);
    char fn[40];
    snprintf(fn, sizeof fn, "tn_%s_", tn_unary_op_name(op));
    if (tn__check_no_internal_overlap(fn, x)) return NULL;
    tn_dtype cd = tn__unary_dtype(fn, op, x);
    if (cd == TN_NUM_DTYPES) return NULL;
    if (op == ABS && tn_dtype_is_complex(cd)) return (tn_tensor *)tn__error("%s: In-place abs is not supported for complex tensors.", fn);
    tn_tensor *x0;
    int m = tn__inplace_begin(fn, x, NULL, 0, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end(fn, x, tn__unary(op, x0, params));
    if (x->dtype == cd && !tn__is_pred_op(op)) {
        if (TN__KERNEL(fn, tn__backend(x->device)->unary(op, x, x, params))) return NULL;  /* same view: no aliasing hazard */
        tn__bump_version(x);
        return x;
    }
    return tn__borrowed(tn__store_inplace(fn, x, tn__unary_raw(op, x, params)));
}

static bool tn__is_cmp(tn_binary_op op) { return op >= EQ && op <= GE; }
static bool tn__is_logical(tn_binary_op op) { return op >= LOGICAL_AND && op <= LOGICAL_XOR; }
static bool tn__is_bitwise(tn_binary_op op) { return op >= BITWISE_AND && op <= BITWISE_RIGHT_SHIFT; }
/* torch.special's binary functions: float results (integers give the default dtype) */
static bool tn__is_special_float(tn_binary_op op) { return op >= ZETA && op <= SHIFTED_CHEBYSHEV_POLYNOMIAL_W; }

/* A Python number as a 0-d wrapped tensor living on the caller's stack: no allocation.
   Its one reference belongs to the stack frame, so it must never be stored (a node
   that saves a wrapped number saves a copy). */
typedef struct tn__stack_scalar { tn_tensor t; tn_storage st; union { double f; int64_t i; unsigned char bytes[16]; } v; } tn__stack_scalar;
/* ss as an empty 0-d CPU tensor of dtype over its own value. */
static tn_tensor *tn__stack_scalar_setup(tn__stack_scalar *ss, tn_dtype dtype, bool wrapped) {
    memset(ss, 0, sizeof *ss);
    ss->st.refcount = 1;
    ss->st.data = &ss->v;
    ss->st.nbytes = tn_dtype_size(dtype);
    ss->st.device = TN_CPU;
    ss->t.refcount = 1;
    ss->t.dtype = dtype;
    ss->t.device = TN_CPU;
    ss->t.storage = &ss->st;
    ss->t.is_wrapped_number = wrapped;
    return &ss->t;
}
static tn_tensor *tn__stack_scalar_init(tn__stack_scalar *ss, double v) {
    bool integral = v == floor(v) && fabs(v) < 9.2e18;
    tn_tensor *t = tn__stack_scalar_setup(ss, integral ? TN_I64 : TN_F64, true);
    if (integral) ss->v.i = (int64_t)v; else ss->v.f = v;
    return t;
}
/* The 0-d CPU tensor b converted to dtype in ss (no allocation): a binary op's operand in
   its compute dtype, for the common case of a Python-number or 0-d operand. NULL when b
   does not qualify (the caller then converts by a copy). */
static tn_tensor *tn__stack_convert(tn__stack_scalar *ss, tn_tensor *b, tn_dtype dtype) {
    if (b->ndim != 0 || b->device != TN_CPU || b->dtype == dtype || tn_dtype_size(dtype) > sizeof ss->v) return NULL;
    tn_tensor *t = tn__stack_scalar_setup(ss, dtype, b->is_wrapped_number);
    return tn__copy(t, b) ? NULL : t;
}

/* The engine of every binary op: promotion, broadcasting, then one backend call.
   target != NULL makes it in-place (target is a, shape must equal the broadcast). */
static tn_tensor *tn__binary_raw(const char *fn, tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha, tn_tensor *target) {
    if (tn__check_cpu_dtype(fn, a) || tn__check_cpu_dtype(fn, b) || tn__check_same_device(fn, a, b)) return NULL;
    int64_t shape[TN_MAX_DIMS];
    int nd = tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape);
    if (nd < 0) return (tn_tensor *)tn__error("%s: the size of tensor a %s must match the size of tensor b %s at a non-singleton dimension", fn, TN__SHAPE(a), TN__SHAPE(b));
    tn_tensor *ab[2] = {a, b};
    tn_dtype rt = tn_result_type(ab, 2), cd = rt, od = rt;
    if (op == GAMMAINC || op == GAMMAINCC) {   /* igamma: floating only, as PyTorch */
        if (!tn_dtype_is_floating(rt)) return (tn_tensor *)tn__error("%s: \"igamma%s_cpu\" not implemented for '%s'", fn, op == GAMMAINCC ? "c" : "", tn__torch_type_name(rt));
    } else if (op == DIV || op == ATAN2 || op == XLOGY || op == XLOG1PY || op == COPYSIGN || tn__is_special_float(op)) { if (!tn_dtype_is_floating(rt) && !tn_dtype_is_complex(rt)) cd = od = tn__default_dtype; }
    else if ((op == LOGADDEXP || op == LOGADDEXP2 || op == HYPOT || op == NEXTAFTER) && !tn_dtype_is_floating(rt))
        return (tn_tensor *)tn__error("%s: \"%s_cpu\" not implemented for '%s' (floating tensors only)", fn, tn_binary_op_name(op), tn__torch_type_name(rt));
    else if ((op == GCD || op == LCM) && (tn_dtype_is_floating(rt) || rt == TN_BOOL))
        return (tn_tensor *)tn__error("%s: \"%s_cpu\" not implemented for '%s' (integer tensors only)", fn, tn_binary_op_name(op), tn__torch_type_name(rt));
    else if (op == HEAVISIDE && a->dtype != b->dtype)
        return (tn_tensor *)tn__error("%s: heaviside is not yet implemented for tensors with different dtypes (%s and %s)", fn, tn_dtype_name(a->dtype), tn_dtype_name(b->dtype));
    else if (tn__is_cmp(op)) od = TN_BOOL;
    else if (tn__is_logical(op)) cd = od = TN_BOOL;
    else if (tn__is_bitwise(op) && tn_dtype_is_floating(rt))
        return (tn_tensor *)tn__error("%s: not implemented for dtype %s (integers and bool only)", fn, tn_dtype_name(rt));
    else if ((op == BITWISE_LEFT_SHIFT || op == BITWISE_RIGHT_SHIFT) && rt == TN_BOOL)
        return (tn_tensor *)tn__error("%s: \"%s_cpu\" not implemented for 'Bool' (integers only)", fn, op == BITWISE_LEFT_SHIFT ? "lshift" : "rshift");
    if (op == SUB && (a->dtype == TN_BOOL || b->dtype == TN_BOOL))
        return (tn_tensor *)tn__error("%s: subtraction, the `-` operator, with a bool tensor is not supported; use tn_logical_not or tn_logical_xor", fn);
    if (op == POW && !tn_dtype_is_floating(rt) && b->is_wrapped_number && !tn_dtype_is_floating(b->dtype) && tn__read_double(b) < 0)
        return (tn_tensor *)tn__error("%s: integers to negative integer powers are not allowed", fn);
    if (cd == TN_BOOL && (op == FLOOR_DIVIDE || op == REMAINDER || op == FMOD || op == POW))
        return (tn_tensor *)tn__error("%s: not implemented for bool tensors", fn);
    if ((op == ADD || op == SUB) && !tn_dtype_is_floating(cd) && !tn_dtype_is_complex(cd) && alpha != floor(alpha))
        return (tn_tensor *)tn__error("%s: for integral input tensors, argument alpha must not be a floating point number (got %g)", fn, alpha);
    if (target && (nd != target->ndim || memcmp(shape, target->shape, (size_t)nd * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: output with shape %s doesn't match the broadcast shape %s", fn, TN__SHAPE(target), tn__shape_str(shape, nd));
    if (target && tn__check_no_internal_overlap(fn, target)) return NULL;
    if (target && !tn__can_cast(od, target->dtype))
        return (tn_tensor *)tn__error("%s: result type %s can't be cast to the desired output type %s", fn, tn_dtype_name(od), tn_dtype_name(target->dtype));
    tn_device dev = a->ndim == 0 && a->device == TN_CPU ? b->device : a->device;
    if (target && target->device != dev)   /* PyTorch: the CPU scalar rule is for inputs, not for the result */
        return (tn_tensor *)tn__error("%s: expected all tensors on the same device, got %s (the result) and %s", fn, tn_device_name(target->device), tn_device_name(dev));
    bool direct = target && target->dtype == od;
    tn_tensor *out = direct ? tn_retain(target) : tn__new(od, dev, shape, nd);
    tn__stack_scalar sa, sb;   /* 0-d CPU operands converted on the stack */
    tn_tensor *ca = out ? tn__stack_convert(&sa, a, cd) : NULL, *cb = out ? tn__stack_convert(&sb, b, cd) : NULL;
    tn_tensor *ac = out ? (ca ? tn_retain(ca) : tn__as_dtype(a, cd)) : NULL, *bc = ac ? (cb ? tn_retain(cb) : tn__as_dtype(b, cd)) : NULL;
    tn_tensor *au = bc ? tn__unalias(out, ac) : NULL, *bu = au ? tn__unalias(out, bc) : NULL;
    int rc = bu ? TN__KERNEL(fn, tn__backend(dev)->binary(op, out, au, bu, alpha)) : -1;
    tn_release(ac); tn_release(bc); tn_release(au); tn_release(bu);
    if (rc) { tn_release(out); return NULL; }
    if (target && !direct) return tn__store_inplace(fn, target, out);
    if (target) tn__bump_version(target);
    return out;
}

static tn_tensor *tn__binary_record(tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha, tn_tensor *out) {
    if (op >= CHEBYSHEV_POLYNOMIAL_T && op <= SHIFTED_CHEBYSHEV_POLYNOMIAL_W) return out;   /* no derivative, as PyTorch */
    tn_tensor *ab[2] = {a, b};
    tn_node *nd = out ? tn__node_new(G_BINARY, op, ab, 2) : NULL;
    if (nd && op != ADD && op != SUB) { /* add/sub need only shapes, as PyTorch: no saved tensors */
        /* mul needs each operand only for the other's gradient, div needs a only for b's:
           a slot that is not needed stays NULL, so changing that operand later is fine */
        bool need_a = op != MUL || b->requires_grad, need_b = op != MUL || a->requires_grad;
        if (op == DIV) need_a = b->requires_grad;
        tn__node_save(nd, need_a ? a : NULL);
        tn__node_save(nd, need_b ? b : NULL);
    }
    if (nd) nd->d[0] = alpha;
    return tn__node_attach(nd, out);
}

static tn_tensor *tn__binary(const char *fn, tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha) {
    TN__CHECK_NULL(a, b);
    return tn__own(tn__binary_record(op, a, b, alpha, tn__binary_raw(fn, op, a, b, alpha, NULL)));
}

static tn_tensor *tn__binary_inplace(const char *fn, tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha) {
    TN__CHECK_NULL(a, b);
    tn_tensor *x0;
    int m = tn__inplace_begin(fn, a, &b, 1, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end(fn, a, tn__binary(fn, op, x0, b, alpha));
    return tn__borrowed(tn__binary_raw(fn, op, a, b, alpha, a));
}

static tn_tensor *tn__binary_scalar(const char *fn, tn_binary_op op, tn_tensor *a, double v, bool reversed, tn_tensor *target) {
    TN__CHECK_NULL(a);
    if (target) {
        tn_tensor *x0;
        int m = tn__inplace_begin(fn, a, NULL, 0, &x0);
        if (m) return m < 0 ? NULL : tn__inplace_end(fn, a, tn__binary_scalar(fn, op, x0, v, reversed, NULL));
    }
    tn__stack_scalar ss;
    tn_tensor *s = tn__stack_scalar_init(&ss, v);
    /* POW's alpha: the exponent when it is this number (tn__pow_f32: PyTorch's pow_tensor_scalar) */
    tn_tensor *r = reversed ? tn__binary_raw(fn, op, s, a, 1, target) : tn__binary_raw(fn, op, a, s, op == POW ? v : 1, target);
    if (target) return tn__borrowed(r);
    r = reversed ? tn__binary_record(op, s, a, 1, r) : tn__binary_record(op, a, s, 1, r);
    return tn__own(r);
}


TNDEF tn_tensor *tn_add(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_add", ADD, a, b, 1); }
TNDEF tn_tensor *tn_add_alpha(tn_tensor *a, tn_tensor *b, double alpha) { return tn__binary("tn_add_alpha", ADD, a, b, alpha); }
TNDEF tn_tensor *tn_sub(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_sub", SUB, a, b, 1); }
TNDEF tn_tensor *tn_sub_alpha(tn_tensor *a, tn_tensor *b, double alpha) { return tn__binary("tn_sub_alpha", SUB, a, b, alpha); }
TNDEF tn_tensor *tn_mul(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_mul", MUL, a, b, 1); }
TNDEF tn_tensor *tn_div(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_div", DIV, a, b, 1); }
TNDEF tn_tensor *tn_floor_divide(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_floor_divide", FLOOR_DIVIDE, a, b, 1); }
TNDEF tn_tensor *tn_remainder(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_remainder", REMAINDER, a, b, 1); }
TNDEF tn_tensor *tn_fmod(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_fmod", FMOD, a, b, 1); }
TNDEF tn_tensor *tn_pow(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_pow", POW, a, b, 1); }
TNDEF tn_tensor *tn_atan2(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_atan2", ATAN2, a, b, 1); }
TNDEF tn_tensor *tn_maximum(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_maximum", MAXIMUM, a, b, 1); }
TNDEF tn_tensor *tn_minimum(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_minimum", MINIMUM, a, b, 1); }
TNDEF tn_tensor *tn_eq(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_eq", EQ, a, b, 1); }
TNDEF tn_tensor *tn_ne(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_ne", NE, a, b, 1); }
TNDEF tn_tensor *tn_lt(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_lt", LT, a, b, 1); }
TNDEF tn_tensor *tn_le(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_le", LE, a, b, 1); }
TNDEF tn_tensor *tn_gt(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_gt", GT, a, b, 1); }
TNDEF tn_tensor *tn_ge(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_ge", GE, a, b, 1); }
TNDEF tn_tensor *tn_logical_and(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logical_and", LOGICAL_AND, a, b, 1); }
TNDEF tn_tensor *tn_logical_or(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logical_or", LOGICAL_OR, a, b, 1); }
TNDEF tn_tensor *tn_logical_xor(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logical_xor", LOGICAL_XOR, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_and(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_and", BITWISE_AND, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_or(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_or", BITWISE_OR, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_xor(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_xor", BITWISE_XOR, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_left_shift(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_left_shift", BITWISE_LEFT_SHIFT, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_right_shift(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_right_shift", BITWISE_RIGHT_SHIFT, a, b, 1); }
TNDEF tn_tensor *tn_fmax(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_fmax", FMAX, a, b, 1); }
TNDEF tn_tensor *tn_fmin(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_fmin", FMIN, a, b, 1); }
TNDEF tn_tensor *tn_logaddexp(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logaddexp", LOGADDEXP, a, b, 1); }
TNDEF tn_tensor *tn_logaddexp2(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logaddexp2", LOGADDEXP2, a, b, 1); }
TNDEF tn_tensor *tn_hypot(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_hypot", HYPOT, a, b, 1); }
TNDEF tn_tensor *tn_nextafter(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_nextafter", NEXTAFTER, a, b, 1); }
TNDEF tn_tensor *tn_xlogy(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_xlogy", XLOGY, a, b, 1); }
TNDEF tn_tensor *tn_special_xlog1py(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_xlog1py", XLOG1PY, a, b, 1); }
TNDEF tn_tensor *tn_special_zeta(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_zeta", ZETA, a, b, 1); }
TNDEF tn_tensor *tn_special_gammainc(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_gammainc", GAMMAINC, a, b, 1); }
TNDEF tn_tensor *tn_special_gammaincc(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_gammaincc", GAMMAINCC, a, b, 1); }
TNDEF tn_tensor *tn_special_chebyshev_polynomial_t(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_chebyshev_polynomial_t", CHEBYSHEV_POLYNOMIAL_T, a, b, 1); }
TNDEF tn_tensor *tn_special_chebyshev_polynomial_u(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_chebyshev_polynomial_u", CHEBYSHEV_POLYNOMIAL_U, a, b, 1); }
TNDEF tn_tensor *tn_special_chebyshev_polynomial_v(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_chebyshev_polynomial_v", CHEBYSHEV_POLYNOMIAL_V, a, b, 1); }
TNDEF tn_tensor *tn_special_chebyshev_polynomial_w(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_chebyshev_polynomial_w", CHEBYSHEV_POLYNOMIAL_W, a, b, 1); }
TNDEF tn_tensor *tn_special_hermite_polynomial_h(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_hermite_polynomial_h", HERMITE_POLYNOMIAL_H, a, b, 1); }
TNDEF tn_tensor *tn_special_hermite_polynomial_he(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_hermite_polynomial_he", HERMITE_POLYNOMIAL_HE, a, b, 1); }
TNDEF tn_tensor *tn_special_laguerre_polynomial_l(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_laguerre_polynomial_l", LAGUERRE_POLYNOMIAL_L, a, b, 1); }
TNDEF tn_tensor *tn_special_legendre_polynomial_p(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_legendre_polynomial_p", LEGENDRE_POLYNOMIAL_P, a, b, 1); }
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_t(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_shifted_chebyshev_polynomial_t", SHIFTED_CHEBYSHEV_POLYNOMIAL_T, a, b, 1); }
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_u(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_shifted_chebyshev_polynomial_u", SHIFTED_CHEBYSHEV_POLYNOMIAL_U, a, b, 1); }
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_v(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_shifted_chebyshev_polynomial_v", SHIFTED_CHEBYSHEV_POLYNOMIAL_V, a, b, 1); }
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_w(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_special_shifted_chebyshev_polynomial_w", SHIFTED_CHEBYSHEV_POLYNOMIAL_W, a, b, 1); }
TNDEF tn_tensor *tn_copysign(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_copysign", COPYSIGN, a, b, 1); }
TNDEF tn_tensor *tn_heaviside(tn_tensor *x, tn_tensor *values) { return tn__binary("tn_heaviside", HEAVISIDE, x, values, 1); }
TNDEF tn_tensor *tn_gcd(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_gcd", GCD, a, b, 1); }
TNDEF tn_tensor *tn_lcm(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_lcm", LCM, a, b, 1); }
/* x * 2.0^other as PyTorch writes it: 2.0 is a Python float, so integers give float32 */
static tn_tensor *tn__ldexp_impl(tn_tensor *x, tn_tensor *other) {
    TN__CHECK_NULL(x, other);
    tn__stack_scalar ss;
    tn_tensor *two = tn__stack_scalar_setup(&ss, TN_F64, true);
    ss.v.f = 2.0;
    tn_scope_begin();
    return tn__scope_return(tn_mul(x, tn_pow(two, other)));
}
TNDEF tn_tensor *tn_ldexp(tn_tensor *x, tn_tensor *other) { return TN__AS("tn_ldexp", tn__ldexp_impl(x, other)); }
static tn_tensor *tn__float_power_impl(tn_tensor *a, tn_tensor *b, bool inplace) {
    TN__CHECK_NULL(a, b);
    const tn_dtype dt = tn_is_complex(a) || tn_is_complex(b) ? TN_C128 : TN_F64;   /* PyTorch: complex128 where either is complex */
    if (inplace && a->dtype != dt)
        return (tn_tensor *)tn__error("tn_float_power_: the base given to float_power_ has dtype %s but the operation's result requires dtype %s", tn_dtype_name(a->dtype), tn_dtype_name(dt));
    tn_scope_begin();
    tn_tensor *b64 = tn_to_dtype(b, dt);
    if (inplace) { tn_tensor *r = b64 ? tn_pow_(a, b64) : NULL; tn_scope_end(); return r; }
    return tn__scope_return(tn__grad_name(tn_pow(tn_to_dtype(a, dt), b64), "PowBackward1"));
}
TNDEF tn_tensor *tn_float_power(tn_tensor *a, tn_tensor *b) { return TN__AS("tn_float_power", tn__float_power_impl(a, b, false)); }
TNDEF tn_tensor *tn_float_power_(tn_tensor *a, tn_tensor *b) { return TN__AS("tn_float_power_", tn__float_power_impl(a, b, true)); }

TNDEF tn_tensor *tn_add_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_add_scalar", ADD, a, b, false, NULL); }
TNDEF tn_tensor *tn_sub_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_sub_scalar", SUB, a, b, false, NULL); }
TNDEF tn_tensor *tn_rsub_scalar(tn_tensor *a, double b) { return tn__grad_name(tn__binary_scalar("tn_rsub_scalar", SUB, a, b, true, NULL), "RsubBackward1"); }
TNDEF tn_tensor *tn_mul_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_mul_scalar", MUL, a, b, false, NULL); }
TNDEF tn_tensor *tn_div_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_div_scalar", DIV, a, b, false, NULL); }
TNDEF tn_tensor *tn_pow_scalar(tn_tensor *a, double e) {
    /* PyTorch refuses an integer tensor to a negative integer Scalar power (a tensor exponent is fine) */
    if (a && !tn_dtype_is_floating(a->dtype) && e < 0 && e == floor(e))
        return (tn_tensor *)tn__error("tn_pow_scalar: integers to negative integer powers are not allowed (%s tensor, exponent %g)", tn_dtype_name(a->dtype), e);
    return tn__grad_name(tn__binary_scalar("tn_pow_scalar", POW, a, e, false, NULL), "PowBackward0");
}
TNDEF tn_tensor *tn_rpow_scalar(double base, tn_tensor *e) { return tn__binary_scalar("tn_rpow_scalar", POW, e, base, true, NULL); }
TNDEF tn_tensor *tn_remainder_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_remainder_scalar", REMAINDER, a, b, false, NULL); }
TNDEF tn_tensor *tn_floor_divide_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_floor_divide_scalar", FLOOR_DIVIDE, a, b, false, NULL); }
TNDEF tn_tensor *tn_eq_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_eq_scalar", EQ, a, b, false, NULL); }
TNDEF tn_tensor *tn_ne_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_ne_scalar", NE, a, b, false, NULL); }
TNDEF tn_tensor *tn_lt_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_lt_scalar", LT, a, b, false, NULL); }
TNDEF tn_tensor *tn_le_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_le_scalar", LE, a, b, false, NULL); }
TNDEF tn_tensor *tn_gt_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_gt_scalar", GT, a, b, false, NULL); }
TNDEF tn_tensor *tn_ge_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_ge_scalar", GE, a, b, false, NULL); }

TNDEF tn_tensor *tn_add_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_add_", ADD, a, b, 1); }
TNDEF tn_tensor *tn_add_alpha_(tn_tensor *a, tn_tensor *b, double alpha) { return tn__binary_inplace("tn_add_alpha_", ADD, a, b, alpha); }
TNDEF tn_tensor *tn_sub_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_sub_", SUB, a, b, 1); }
TNDEF tn_tensor *tn_mul_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_mul_", MUL, a, b, 1); }
TNDEF tn_tensor *tn_div_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_div_", DIV, a, b, 1); }
TNDEF tn_tensor *tn_pow_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_pow_", POW, a, b, 1); }
TNDEF tn_tensor *tn_add_scalar_(tn_tensor *a, double b) { return tn__binary_scalar("tn_add_scalar_", ADD, a, b, false, a); }
TNDEF tn_tensor *tn_mul_scalar_(tn_tensor *a, double b) { return tn__binary_scalar("tn_mul_scalar_", MUL, a, b, false, a); }

TNDEF tn_tensor *tn_fill_(tn_tensor *t, double value) {
    TN__CHECK_NULL(t);
    /* under autograd: where(true, value, old) has the new value and a zero gradient to the old one */
    tn_tensor *x0;
    int m = tn__inplace_begin("tn_fill_", t, NULL, 0, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_fill_", t, tn_where(tn_ones(NULL, 0, TN_BOOL), tn_full(NULL, 0, value, t->dtype), x0));
    if (tn__check_cpu_dtype("tn_fill_", t) || tn__check_fill_value("tn_fill_", value, t->dtype) || tn__backend(t->device)->fill(t, value)) return NULL;

    tn__bump_version(t);
    return t;
}
TNDEF tn_tensor *tn_zero_(tn_tensor *t) { return TN__AS("tn_zero_", tn_fill_(t, 0)); }
/* torch.fill: where(true, value, x) has x's shape and dtype, no gradient to x (FillBackward0)
   and a 0-d value tensor's the summed one (FillBackward1) */
static tn_tensor *tn__fill_impl(const char *fn, tn_tensor *x, tn_tensor *value, double v) {
    TN__CHECK_NULL(x);
    if (value && value->ndim != 0)
        return (tn_tensor *)tn__error("%s: fill only supports 0-dimension value tensor but got tensor with %d dimensions.", fn, value->ndim);
    if (tn__check_cpu_dtype(fn, x) || (!value && tn__check_fill_value(fn, v, x->dtype))) return NULL;
    tn_scope_begin();
    tn_tensor *val = value ? tn_to(tn_to_dtype(value, x->dtype), x->device) : tn_full(NULL, 0, v, x->dtype);
    tn_tensor *r = tn_where(tn_ones(NULL, 0, TN_BOOL), val, x);
    return tn__scope_return(tn__grad_name(r, value ? "FillBackward1" : "FillBackward0"));
}
TNDEF tn_tensor *tn_fill(tn_tensor *x, double value) { return TN__AS("tn_fill", tn__fill_impl("tn_fill", x, NULL, value)); }
TNDEF tn_tensor *tn_fill_tensor(tn_tensor *x, tn_tensor *value) {
    TN__CHECK_NULL(value);
    return TN__AS("tn_fill_tensor", tn__fill_impl("tn_fill_tensor", x, value, 0));
}

TNDEF tn_tensor *tn_neg(tn_tensor *x) { return tn__unary(NEG, x, NULL); }
TNDEF tn_tensor *tn_abs(tn_tensor *x) { return tn__unary(ABS, x, NULL); }
TNDEF tn_tensor *tn_sign(tn_tensor *x) { return tn__unary(SIGN, x, NULL); }
TNDEF tn_tensor *tn_exp(tn_tensor *x) { return tn__unary(EXP, x, NULL); }
TNDEF tn_tensor *tn_exp2(tn_tensor *x) { return tn__unary(EXP2, x, NULL); }
TNDEF tn_tensor *tn_log(tn_tensor *x) { return tn__unary(LOG, x, NULL); }
TNDEF tn_tensor *tn_log2(tn_tensor *x) { return tn__unary(LOG2, x, NULL); }
TNDEF tn_tensor *tn_log10(tn_tensor *x) { return tn__unary(LOG10, x, NULL); }
TNDEF tn_tensor *tn_log1p(tn_tensor *x) { return tn__unary(LOG1P, x, NULL); }
TNDEF tn_tensor *tn_expm1(tn_tensor *x) { return tn__unary(EXPM1, x, NULL); }
TNDEF tn_tensor *tn_sqrt(tn_tensor *x) { return tn__unary(SQRT, x, NULL); }
TNDEF tn_tensor *tn_rsqrt(tn_tensor *x) { return tn__unary(RSQRT, x, NULL); }
TNDEF tn_tensor *tn_square(tn_tensor *x) { return tn__unary(SQUARE, x, NULL); }
TNDEF tn_tensor *tn_reciprocal(tn_tensor *x) { return tn__unary(RECIPROCAL, x, NULL); }
TNDEF tn_tensor *tn_sin(tn_tensor *x) { return tn__unary(SIN, x, NULL); }
TNDEF tn_tensor *tn_cos(tn_tensor *x) { return tn__unary(COS, x, NULL); }
TNDEF tn_tensor *tn_tan(tn_tensor *x) { return tn__unary(TAN, x, NULL); }
TNDEF tn_tensor *tn_asin(tn_tensor *x) { return tn__unary(ASIN, x, NULL); }
TNDEF tn_tensor *tn_acos(tn_tensor *x) { return tn__unary(ACOS, x, NULL); }
TNDEF tn_tensor *tn_atan(tn_tensor *x) { return tn__unary(ATAN, x, NULL); }
TNDEF tn_tensor *tn_sinh(tn_tensor *x) { return tn__unary(SINH, x, NULL); }
TNDEF tn_tensor *tn_cosh(tn_tensor *x) { return tn__unary(COSH, x, NULL); }
TNDEF tn_tensor *tn_tanh(tn_tensor *x) { return tn__unary(TANH, x, NULL); }
TNDEF tn_tensor *tn_sigmoid(tn_tensor *x) { return tn__unary(SIGMOID, x, NULL); }
TNDEF tn_tensor *tn_relu(tn_tensor *x) { return tn__unary(RELU, x, NULL); }
TNDEF tn_tensor *tn_gelu_opts(tn_tensor *x, tn_gelu_fn_opts o) {
    return TN__AS("tn_gelu", tn__unary(o.approximate == TN_APPROXIMATE_TANH ? GELU_TANH : GELU, x, NULL));
}
TNDEF tn_tensor *tn_gelu_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_gelu_fn_opts, gelu, "tn_gelu", options, tn_gelu_opts(x, o)); }
TNDEF tn_tensor *tn_silu(tn_tensor *x) {
    if (x && tn_is_complex(x) && x->requires_grad && tn_is_grad_enabled())   /* PyTorch has no complex formula */
        return (tn_tensor *)tn__error("tn_silu: silu does not support automatic differentiation for outputs with complex dtype.");
    return tn__unary(SILU, x, NULL);
}
TNDEF tn_tensor *tn_softplus_opts(tn_tensor *x, tn_softplus_fn_opts o) {
    double p[3] = {o.beta, o.threshold, 0};
    TN__CHECK_NULL(x);
    if (o.beta == 0) return (tn_tensor *)tn__error("tn_softplus: beta must be nonzero");
    return tn__unary(SOFTPLUS, x, p);
}
TNDEF tn_tensor *tn_softplus_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_softplus_fn_opts, softplus, "tn_softplus", options, tn_softplus_opts(x, o));
}
TNDEF tn_tensor *tn_erf(tn_tensor *x) { return tn__unary(ERF, x, NULL); }
TNDEF tn_tensor *tn_erfc(tn_tensor *x) { return tn__unary(ERFC, x, NULL); }
TNDEF tn_tensor *tn_floor(tn_tensor *x) { return tn__unary(FLOOR, x, NULL); }
TNDEF tn_tensor *tn_ceil(tn_tensor *x) { return tn__unary(CEIL, x, NULL); }
TNDEF tn_tensor *tn_round(tn_tensor *x) { return tn__unary(ROUND, x, NULL); }
TNDEF tn_tensor *tn_trunc(tn_tensor *x) { return tn__unary(TRUNC, x, NULL); }
TNDEF tn_tensor *tn_frac(tn_tensor *x) { return tn__unary(FRAC, x, NULL); }
TNDEF tn_tensor *tn_logical_not(tn_tensor *x) { return tn__unary(LOGICAL_NOT, x, NULL); }
TNDEF tn_tensor *tn_bitwise_not(tn_tensor *x) { return tn__unary(BITWISE_NOT, x, NULL); }
TNDEF tn_tensor *tn_isnan(tn_tensor *x) { return tn__unary(ISNAN, x, NULL); }
TNDEF tn_tensor *tn_isinf(tn_tensor *x) { return tn__unary(ISINF, x, NULL); }
TNDEF tn_tensor *tn_isfinite(tn_tensor *x) { return tn__unary(ISFINITE, x, NULL); }
TNDEF tn_tensor *tn_signbit(tn_tensor *x) { return tn__unary(SIGNBIT, x, NULL); }
static tn_tensor *tn__isinf_signed(tn_tensor *x, bool pos) {
    TN__CHECK_NULL(x);
    if (tn_is_complex(x)) return (tn_tensor *)tn__error("%s does not support complex inputs.", pos ? "isposinf" : "isneginf");
    if (!tn_dtype_is_floating(x->dtype)) return tn_zeros_like(tn_to_dtype(tn_detach(x), TN_BOOL));
    tn_scope_begin();
    return tn__scope_return(tn_logical_and(tn_isinf(x), pos ? tn_gt_scalar(x, 0) : tn_lt_scalar(x, 0)));
}
static tn_tensor *tn__isreal_impl(tn_tensor *x) {   /* real dtypes: all true; complex: imag == 0 */
    TN__CHECK_NULL(x);
    if (tn_is_complex(x)) {
        tn_scope_begin();
        return tn__scope_return(tn_eq_scalar(tn_imag(tn_detach(x)), 0));
    }
    tn_tensor *r = tn__new(TN_BOOL, x->device, x->shape, x->ndim);
    if (!r || !tn_fill_(r, 1)) { tn_release(r); return NULL; }
    return tn__own(r);
}
TNDEF tn_tensor *tn_isreal(tn_tensor *x) { return TN__AS("tn_isreal", tn__isreal_impl(x)); }
TNDEF tn_tensor *tn_isposinf(tn_tensor *x) { return TN__AS("tn_isposinf", tn__isinf_signed(x, true)); }
TNDEF tn_tensor *tn_isneginf(tn_tensor *x) { return TN__AS("tn_isneginf", tn__isinf_signed(x, false)); }
/* angle of a real tensor: where(isnan, x * 0, where(x < 0, pi, 0)) (x * 0 keeps the NaN and
   gives PyTorch's zero gradient) */
static tn_tensor *tn__angle_impl(tn_tensor *x) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *f = tn_dtype_is_floating(x->dtype) ? x : tn_to_dtype(x, tn_get_default_dtype());
    tn_tensor *c = f ? tn_where(tn_lt_scalar(f, 0), tn_full_like(f, 3.14159265358979323846), tn_zeros_like(tn_detach(f))) : NULL;
    return tn__scope_return(c ? tn_where(tn_isnan(f), tn_mul_scalar(f, 0), c) : NULL);
}
TNDEF tn_tensor *tn_angle(tn_tensor *x) {
    if (x && tn_dtype_is_complex(x->dtype)) return tn__grad_name(TN__AS("tn_angle", tn_atan2(tn_imag(x), tn_real(x))), "AngleBackward0");
    return TN__AS("tn_angle", tn__angle_impl(x));
}
TNDEF tn_tensor *tn_sgn(tn_tensor *x) {
    if (x && tn_dtype_is_complex(x->dtype)) {   /* x / |x|, 0 at 0: the composite's gradient is sgn's */
        tn_scope_begin();
        tn_tensor *a = tn_abs(x), *z = tn_eq_scalar(a, 0);
        tn_tensor *r = tn_where(z, tn_zeros_like(x), tn_div(x, tn_masked_fill(a, z, 1)));
        return tn__grad_name(TN__AS("tn_sgn", tn__scope_return(r)), "SgnBackward0");
    }
    return tn__grad_name(TN__AS("tn_sgn", tn__unary(SIGN, x, NULL)), "SgnBackward0");
}
TNDEF tn_tensor *tn_asinh(tn_tensor *x) { return tn__unary(ASINH, x, NULL); }
TNDEF tn_tensor *tn_acosh(tn_tensor *x) { return tn__unary(ACOSH, x, NULL); }
TNDEF tn_tensor *tn_atanh(tn_tensor *x) { return tn__unary(ATANH, x, NULL); }
/* x * pi/180: a Python float, so integers and bool give float32 as in PyTorch */
TNDEF tn_tensor *tn_deg2rad(tn_tensor *x) {
    if (x && tn_is_complex(x)) return (tn_tensor *)tn__error("tn_deg2rad: deg2rad is not supported for complex tensors.");
    return tn__grad_name(TN__AS("tn_deg2rad", tn_mul_scalar(x, 0.017453292519943295769)), "Deg2RadBackward0"); }
TNDEF tn_tensor *tn_rad2deg(tn_tensor *x) {
    if (x && tn_is_complex(x)) return (tn_tensor *)tn__error("tn_rad2deg: rad2deg is not supported for complex tensors.");
    return tn__grad_name(TN__AS("tn_rad2deg", tn_mul_scalar(x, 57.295779513082320877)), "Rad2DegBackward0"); }
TNDEF tn_tensor *tn_sinc(tn_tensor *x) { return tn__unary(SINC, x, NULL); }
TNDEF tn_tensor *tn_logit_opts(tn_tensor *x, tn_logit_fn_opts o) {
    double p[3] = {o.eps >= 0 ? o.eps : -1, 0, 0};   /* NaN (None) and negative: no clamp */
    return tn__unary(LOGIT, x, p);
}
TNDEF tn_tensor *tn_logit_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_logit_fn_opts, logit, "tn_logit", options, tn_logit_opts(x, o)); }
TNDEF tn_tensor *tn_lgamma(tn_tensor *x) { return tn__unary(LGAMMA, x, NULL); }
TNDEF tn_tensor *tn_digamma(tn_tensor *x) { return tn__unary(DIGAMMA, x, NULL); }
TNDEF tn_tensor *tn_polygamma(int64_t n, tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (n < 0) return (tn_tensor *)tn__error("tn_polygamma: polygamma(n, x) does not support negative n (got %lld)", (long long)n);
    double p[3] = {(double)n, 0, 0};
    return tn__unary(POLYGAMMA, x, p);
}
/* sum_j lgamma(x - j/2) + p (p - 1) / 4 log(pi), j < p, as PyTorch composes it */
static tn_tensor *tn__mvlgamma_impl(tn_tensor *x, int64_t p) {
    TN__CHECK_NULL(x);
    if (p < 1) return (tn_tensor *)tn__error("tn_mvlgamma: p has to be greater than or equal to 1 (got %lld)", (long long)p);
    if (tn__check_cpu_dtype("tn_mvlgamma", x)) return NULL;
    /* PyTorch 1.13 and later no longer check that every x exceeds (p - 1) / 2 */
    if (x->dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_mvlgamma: the input tensor may not be a boolean tensor");
    tn_scope_begin();
    tn_tensor *offs = tn_to(tn_arange(-0.5 * (double)p + 0.5, 0.5, 0.5, TN_F32), x->device);
    tn_tensor *args = tn_add(tn_unsqueeze(x, -1), offs);
    int64_t last = -1;
    return tn__scope_return(tn__grad_name(tn_add_scalar(tn_sum_dims(tn_lgamma(args), &last, 1), (double)p * (double)(p - 1) * 0.28618247146235004354),
                                        "MvlgammaBackward0"));
}
TNDEF tn_tensor *tn_mvlgamma(tn_tensor *x, int64_t p) { return TN__AS("tn_mvlgamma", tn__mvlgamma_impl(x, p)); }
TNDEF tn_tensor *tn_erfinv(tn_tensor *x) { return tn__unary(ERFINV, x, NULL); }
TNDEF tn_tensor *tn_i0(tn_tensor *x) { return tn__unary(I0, x, NULL); }
TNDEF tn_tensor *tn_special_i0e(tn_tensor *x) { return tn__unary(I0E, x, NULL); }
TNDEF tn_tensor *tn_special_i1(tn_tensor *x) { return tn__unary(I1, x, NULL); }
TNDEF tn_tensor *tn_special_i1e(tn_tensor *x) { return tn__unary(I1E, x, NULL); }
TNDEF tn_tensor *tn_special_ndtr(tn_tensor *x) { return tn__unary(NDTR, x, NULL); }
TNDEF tn_tensor *tn_special_ndtri(tn_tensor *x) { return tn__unary(NDTRI, x, NULL); }
TNDEF tn_tensor *tn_special_log_ndtr(tn_tensor *x) { return tn__unary(LOG_NDTR, x, NULL); }
TNDEF tn_tensor *tn_special_erfcx(tn_tensor *x) { return tn__unary(ERFCX, x, NULL); }
TNDEF tn_tensor *tn_special_entr(tn_tensor *x) { return tn__unary(ENTR, x, NULL); }
TNDEF tn_tensor *tn_special_bessel_j0(tn_tensor *x) { return tn__unary(BESSEL_J0, x, NULL); }
TNDEF tn_tensor *tn_special_bessel_j1(tn_tensor *x) { return tn__unary(BESSEL_J1, x, NULL); }
TNDEF tn_tensor *tn_special_bessel_y0(tn_tensor *x) { return tn__unary(BESSEL_Y0, x, NULL); }
TNDEF tn_tensor *tn_special_bessel_y1(tn_tensor *x) { return tn__unary(BESSEL_Y1, x, NULL); }
TNDEF tn_tensor *tn_special_modified_bessel_i0(tn_tensor *x) { return tn__unary(MODIFIED_BESSEL_I0, x, NULL); }
TNDEF tn_tensor *tn_special_modified_bessel_i1(tn_tensor *x) { return tn__unary(MODIFIED_BESSEL_I1, x, NULL); }
TNDEF tn_tensor *tn_special_modified_bessel_k0(tn_tensor *x) { return tn__unary(MODIFIED_BESSEL_K0, x, NULL); }
TNDEF tn_tensor *tn_special_modified_bessel_k1(tn_tensor *x) { return tn__unary(MODIFIED_BESSEL_K1, x, NULL); }
TNDEF tn_tensor *tn_special_scaled_modified_bessel_k0(tn_tensor *x) { return tn__unary(SCALED_MODIFIED_BESSEL_K0, x, NULL); }
TNDEF tn_tensor *tn_special_scaled_modified_bessel_k1(tn_tensor *x) { return tn__unary(SCALED_MODIFIED_BESSEL_K1, x, NULL); }
TNDEF tn_tensor *tn_special_spherical_bessel_j0(tn_tensor *x) { return tn__unary(SPHERICAL_BESSEL_J0, x, NULL); }
TNDEF tn_tensor *tn_special_airy_ai(tn_tensor *x) { return tn__unary(AIRY_AI, x, NULL); }
static tn_tensor *tn__frexp_impl(tn_tensor *x, tn_tensor **exponent) {
    TN__CHECK_NULL(x);
    tn_tensor *e = NULL;
    if (exponent) {   /* the exponent first (untracked), so a failure leaves nothing owned behind */
        tn_tensor *ef = tn__unary_raw(FREXP_EXPONENT, x, NULL);
        e = ef ? tn__copy_as(ef, TN_I32, ef->device) : NULL;
        tn_release(ef);
        if (!e) return NULL;
    }
    tn_tensor *m = tn__unary(FREXP_MANTISSA, x, NULL);
    if (!m) { tn_release(e); return NULL; }
    if (exponent) *exponent = tn__own(e);
    return m;
}
TNDEF tn_tensor *tn_frexp(tn_tensor *x, tn_tensor **exponent) {
    if (exponent) *exponent = NULL;
    return TN__AS("tn_frexp", tn__frexp_impl(x, exponent));
}
/* posinf NAN (None) or INFINITY / neginf NAN or -INFINITY mean the dtype's largest / lowest finite value. */
TNDEF tn_tensor *tn_nan_to_num_opts(tn_tensor *x, tn_nan_to_num_fn_opts o) {
    TN__CHECK_NULL(x);
    double big = tn__finfo_max(x->dtype);
    double p[3] = {o.nan, o.posinf != o.posinf || (isinf(o.posinf) && o.posinf > 0) ? big : o.posinf,
                   o.neginf != o.neginf || (isinf(o.neginf) && o.neginf < 0) ? -big : o.neginf};
    return tn__unary(NAN_TO_NUM, x, p);
}
TNDEF tn_tensor *tn_nan_to_num_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_nan_to_num_fn_opts, nan_to_num, "tn_nan_to_num", options, tn_nan_to_num_opts(x, o));
}

/* Bounds for clamp on x's dtype; a non-integral bound on an integer tensor promotes
   to float32 (PyTorch's type promotion for clamp). */
static tn_tensor *tn__clamp_raw(tn_tensor *x, double lo, double hi) {
    double p[3] = {lo != lo ? NAN : lo, hi != hi ? NAN : hi, 0};
    if (tn_is_complex(x)) return (tn_tensor *)tn__error("tn_clamp: clamp is not supported for complex types");   /* (NaN bounds too) */
    if (lo != lo || hi != hi) { /* NaN bound: PyTorch gives NaN */
        tn_tensor *r = tn__new(tn_dtype_is_floating(x->dtype) ? x->dtype : TN_F32, x->device, x->shape, x->ndim);
        if (r && tn__backend(r->device)->fill(r, NAN)) { tn_release(r); r = NULL; }
        return r;
    }
    if (x->dtype == TN_BOOL) { /* bool with integer bounds promotes to int64, as PyTorch */
        tn_tensor *xi = tn__copy_as(x, TN_I64, x->device);
        tn_tensor *r = xi ? tn__clamp_raw(xi, lo, hi) : NULL;
        tn_release(xi);
        return r;
    }
    if (x->dtype == TN_U8) { /* PyTorch casts integral bounds to uint8 first (-1 becomes 255) */
        if (isfinite(lo) && lo == floor(lo)) p[0] = lo = (double)(uint8_t)(int64_t)lo;
        if (isfinite(hi) && hi == floor(hi)) p[1] = hi = (double)(uint8_t)(int64_t)hi;
    }
    if ((x->dtype == TN_I8 || x->dtype == TN_I16) && lo == floor(lo) && hi == floor(hi)) {   /* PyTorch refuses a bound the dtype cannot hold */
        for (int k = 0; k < 2; k++) {
            const double v = k ? hi : lo;
            if (isfinite(v) && !(v >= tn__int_lowest(x->dtype) && v <= tn__int_highest(x->dtype)))
                return (tn_tensor *)tn__error("clamp: value %g cannot be converted to type %s without overflow", v, tn_dtype_name(x->dtype));
        }
    }
    if (!tn_dtype_is_floating(x->dtype) && ((isfinite(lo) && lo != floor(lo)) || (isfinite(hi) && hi != floor(hi)))) {

        tn_tensor *xf = tn__copy_as(x, TN_F32, x->device);
        tn_tensor *r = xf ? tn__unary_raw(CLAMP, xf, p) : NULL;
        tn_release(xf);
        return r;
    }
    return tn__unary_raw(CLAMP, x, p);
}
static tn_tensor *tn__clamp(tn_tensor *x, double min, double max) {
    TN__CHECK_NULL(x);
    double p[3] = {min, max, 0};
    return tn__own(tn__unary_record(CLAMP, x, p, tn__clamp_raw(x, min, max)));
}
/* The options' bounds as the kernel's: None (NAN) is no bound; one of them must be given. */
static int tn__clamp_bounds(const char *fn, tn_clamp_fn_opts o, double *min, double *max) {
    if (isnan(o.min) && isnan(o.max)) return TN__FAIL_INT("%s: At least one of 'min' or 'max' must not be None", fn);
    *min = isnan(o.min) ? -INFINITY : o.min;
    *max = isnan(o.max) ? INFINITY : o.max;
    return 0;
}
TNDEF tn_tensor *tn_clamp_opts(tn_tensor *x, tn_clamp_fn_opts o) {
    double min, max;
    TN__CHECK_NULL(x);
    return tn__clamp_bounds("tn_clamp", o, &min, &max) ? NULL : tn__clamp(x, min, max);
}
TNDEF tn_tensor *tn_clamp_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_clamp_fn_opts, clamp, "tn_clamp", options, tn_clamp_opts(x, o)); }
TNDEF tn_tensor *tn_clamp__opts(tn_tensor *x, tn_clamp_fn_opts o) {
    double min, max;
    TN__CHECK_NULL(x);
    if (tn__clamp_bounds("tn_clamp_", o, &min, &max) || tn__check_cpu_dtype("tn_clamp_", x)) return NULL;
    tn_tensor *x0;
    int m = tn__inplace_begin("tn_clamp_", x, NULL, 0, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_clamp_", x, tn__clamp(x0, min, max));
    return tn__borrowed(tn__store_inplace("tn_clamp_", x, tn__clamp_raw(x, min, max)));
}
TNDEF tn_tensor *tn_clamp__str(tn_tensor *x, const char *options) { TN__KW_STR(tn_clamp_fn_opts, clamp, "tn_clamp_", options, tn_clamp__opts(x, o)); }
static tn_tensor *tn__clamp_tensor_impl(tn_tensor *x, tn_tensor *min, tn_tensor *max) {
    TN__CHECK_NULL(x);
    if (!min && !max) return (tn_tensor *)tn__error("tn_clamp_tensor: at least one of min and max must be given");
    tn_scope_begin();
    tn_no_grad_begin();   /* the value: minimum(maximum(x, min), max); the gradient is PyTorch's clamp_backward below */
    tn_tensor *r = x;
    if (min) r = tn_maximum(r, min);
    if (max && r) r = tn_minimum(r, max);
    if (r == x) r = tn_clone(x);
    tn_no_grad_end();
    r = tn_keep(r);
    tn_scope_end();
    tn_tensor *ins[3] = {x, min, max};
    tn_node *nd = r ? tn__node_new(G_CLAMP, 0, ins, 3) : NULL;
    for (int k = 0; k < 3; k++) tn__node_save(nd, ins[k]);
    return tn__node_attach(nd, r);
}
TNDEF tn_tensor *tn_clamp_tensor(tn_tensor *x, tn_tensor *min, tn_tensor *max) { return TN__AS("tn_clamp_tensor", tn__clamp_tensor_impl(x, min, max)); }
TNDEF tn_tensor *tn_clamp_min(tn_tensor *x, double min) { return tn__grad_name(TN__AS("tn_clamp_min", tn__clamp(x, min, INFINITY)), "ClampMinBackward0"); }
TNDEF tn_tensor *tn_clamp_max(tn_tensor *x, double max) { return tn__grad_name(TN__AS("tn_clamp_max", tn__clamp(x, -INFINITY, max)), "ClampMaxBackward0"); }

TNDEF tn_tensor *tn_neg_(tn_tensor *x) { return tn__unary_inplace(NEG, x, NULL); }
TNDEF tn_tensor *tn_exp_(tn_tensor *x) { return tn__unary_inplace(EXP, x, NULL); }
TNDEF tn_tensor *tn_relu_(tn_tensor *x) { return tn__unary_inplace(RELU, x, NULL); }
TNDEF tn_tensor *tn_sigmoid_(tn_tensor *x) { return tn__unary_inplace(SIGMOID, x, NULL); }
TNDEF tn_tensor *tn_tanh_(tn_tensor *x) { return tn__unary_inplace(TANH, x, NULL); }
TNDEF tn_tensor *tn_sqrt_(tn_tensor *x) { return tn__unary_inplace(SQRT, x, NULL); }
TNDEF tn_tensor *tn_square_(tn_tensor *x) { return tn__unary_inplace(SQUARE, x, NULL); }

/* The engine of where/lerp/addcmul/addcdiv: broadcast three operands, promote. */
static tn_tensor *tn__ternary_raw(const char *fn, tn_ternary_op op, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value, tn_tensor *target) {
    tn_tensor *ops[3] = {x, y, z};
    int64_t shape[TN_MAX_DIMS];
    int nd = 0, first = 0; /* the result's device: the first operand that is not a CPU scalar */
    while (first < 2 && ops[first]->ndim == 0 && ops[first]->device == TN_CPU) first++;
    for (int i = 0; i < 3; i++) {
        if (tn__check_cpu_dtype(fn, ops[i]) || tn__check_same_device(fn, ops[first], ops[i])) return NULL;
        int r = tn__broadcast(shape, nd, ops[i]->shape, ops[i]->ndim, shape);
        if (r < 0) return (tn_tensor *)tn__error("%s: shapes %s, %s and %s cannot be broadcast together", fn, TN__SHAPE(x), TN__SHAPE(y), TN__SHAPE(z));
        nd = r;
    }
    tn_dtype dt;
    if (op == WHERE) {
        if (x->dtype != TN_BOOL) return (tn_tensor *)tn__error("%s: condition must be a bool tensor, got %s", fn, tn_dtype_name(x->dtype));
        dt = tn_result_type(ops + 1, 2);
    } else {
        dt = tn_result_type(ops, 3);
        if (op == LERP && ((!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype)) || (!tn_dtype_is_floating(y->dtype) && !tn_dtype_is_complex(y->dtype))))
            return (tn_tensor *)tn__error("%s: lerp not implemented for dtypes %s and %s (floating tensors only)", fn, tn_dtype_name(x->dtype), tn_dtype_name(y->dtype));

        if (op == ADDCDIV && !tn_dtype_is_floating(dt) && !tn_dtype_is_complex(dt))
            return (tn_tensor *)tn__error("%s: integer division with addcdiv is no longer supported; use floating tensors", fn);
    }
    if (target && (nd != target->ndim || memcmp(shape, target->shape, (size_t)nd * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: output with shape %s doesn't match the broadcast shape %s", fn, TN__SHAPE(target), tn__shape_str(shape, nd));
    tn_tensor *out = tn__new(dt, ops[first]->device, shape, nd), *c[3] = {NULL, NULL, NULL};
    int rc = out ? 0 : -1;
    for (int i = 0; i < 3 && rc == 0; i++) {
        c[i] = tn__as_dtype(ops[i], (op == WHERE && i == 0) ? TN_BOOL : dt);
        if (!c[i]) rc = -1;
    }
    /* kernel operand order: WHERE (cond, a, b); others (self, t1, t2) -> loop's (c, a, b) */
    if (rc == 0) rc = tn__backend(out->device)->ternary(op, out, c[0], c[1], c[2], value);
    for (int i = 0; i < 3; i++) tn_release(c[i]);
    if (rc) { tn_release(out); return NULL; }
    return target ? tn__store_inplace(fn, target, out) : out;
}

/* Out-of-place ternary op with its node (all three inputs saved). */
static tn_tensor *tn__ternary(const char *fn, tn_ternary_op op, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    TN__CHECK_NULL(x, y, z);
    tn_tensor *ins[3] = {x, y, z};
    tn_tensor *out = tn__ternary_raw(fn, op, x, y, z, value, NULL);
    tn_node *nd = out ? tn__node_new(G_TERNARY, op, ins, 3) : NULL;
    for (int k = 0; nd && k < 3; k++) tn__node_save(nd, op == WHERE && k > 0 ? NULL : ins[k]); /* where needs only its condition */

    if (nd) nd->d[0] = value;
    return tn__own(tn__node_attach(nd, out));
}
static tn_tensor *tn__ternary_inplace(const char *fn, tn_ternary_op op, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    TN__CHECK_NULL(x, y, z);
    tn_tensor *others[2] = {y, z};
    tn_tensor *x0;
    int m = tn__inplace_begin(fn, x, others, 2, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end(fn, x, tn__ternary(fn, op, x0, y, z, value));
    return tn__borrowed(tn__ternary_raw(fn, op, x, y, z, value, x));
}

TNDEF tn_tensor *tn_where(tn_tensor *cond, tn_tensor *a, tn_tensor *b) { return tn__ternary("tn_where", WHERE, cond, a, b, 0); }
TNDEF tn_tensor *tn_lerp(tn_tensor *start, tn_tensor *end, tn_tensor *weight) { return tn__ternary("tn_lerp", LERP, start, end, weight, 0); }
static tn_tensor *tn__lerp_scalar(tn_tensor *start, tn_tensor *end, double weight, tn_tensor *target) {
    TN__CHECK_NULL(start, end);
    tn_tensor *w = tn__scalar_new(weight, TN_F64, true);
    tn_tensor *r = !w ? NULL : target ? tn__ternary_inplace("tn_lerp_", LERP, start, end, w, 0) : tn__ternary("tn_lerp_scalar", LERP, start, end, w, 0);
    tn_release(w); /* a node that saved w holds its own reference */
    return r;

}
TNDEF tn_tensor *tn_lerp_scalar(tn_tensor *start, tn_tensor *end, double weight) { return tn__grad_name(tn__lerp_scalar(start, end, weight, NULL), "LerpBackward0"); }
TNDEF tn_tensor *tn_lerp_(tn_tensor *start, tn_tensor *end, double weight) { return tn__lerp_scalar(start, end, weight, start); }
TNDEF tn_tensor *tn_addcmul_opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts o) { return tn__ternary("tn_addcmul", ADDCMUL, x, t1, t2, o.value); }
TNDEF tn_tensor *tn_addcdiv_opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts o) { return tn__ternary("tn_addcdiv", ADDCDIV, x, t1, t2, o.value); }
TNDEF tn_tensor *tn_addcmul__opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts o) { return tn__ternary_inplace("tn_addcmul_", ADDCMUL, x, t1, t2, o.value); }
TNDEF tn_tensor *tn_addcdiv__opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts o) { return tn__ternary_inplace("tn_addcdiv_", ADDCDIV, x, t1, t2, o.value); }
TNDEF tn_tensor *tn_addcmul_str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options) { TN__KW_STR(tn_addcmul_fn_opts, addcmul, "tn_addcmul", options, tn_addcmul_opts(x, t1, t2, o)); }
TNDEF tn_tensor *tn_addcdiv_str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options) { TN__KW_STR(tn_addcmul_fn_opts, addcmul, "tn_addcdiv", options, tn_addcdiv_opts(x, t1, t2, o)); }
TNDEF tn_tensor *tn_addcmul__str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options) { TN__KW_STR(tn_addcmul_fn_opts, addcmul, "tn_addcmul_", options, tn_addcmul__opts(x, t1, t2, o)); }
TNDEF tn_tensor *tn_addcdiv__str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options) { TN__KW_STR(tn_addcmul_fn_opts, addcmul, "tn_addcdiv_", options, tn_addcdiv__opts(x, t1, t2, o)); }


TNDEF bool tn_allclose_opts(tn_tensor *a, tn_tensor *b, tn_isclose_fn_opts o) {
    const double rtol = o.rtol;
    const double atol = o.atol;
    const bool equal_nan = o.equal_nan;
    if (!a || !b) return false;
    int64_t bs[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_allclose", a) || tn__check_cpu_dtype("tn_allclose", b)) return false;
    if (tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, bs) < 0) {
        tn__error("tn_allclose: shapes %s and %s cannot be broadcast", TN__SHAPE(a), TN__SHAPE(b));
        return false;
    }
    tn_scope_begin();
    tn_tensor *af = tn_to_dtype(a, TN_F64), *bf = tn_to_dtype(b, TN_F64);
    tn_tensor *diff = tn_abs(tn_sub(af, bf));
    tn_tensor *tol = tn_add_scalar(tn_mul_scalar(tn_abs(bf), rtol), atol);
    /* torch.isclose: equal, or both finite and within tolerance */
    tn_tensor *ok = tn_logical_and(tn_le(diff, tol), tn_logical_and(tn_isfinite(af), tn_isfinite(bf)));
    if (ok) ok = tn_logical_or(ok, tn_eq(af, bf));

    if (ok && equal_nan) ok = tn_logical_or(ok, tn_logical_and(tn_isnan(af), tn_isnan(bf)));
    bool r = ok && tn_item(tn_all(ok)) != 0;
    tn_scope_end();
    return r;
}
TNDEF bool tn_allclose_str(tn_tensor *a, tn_tensor *b, const char *options) { TN__KW_STR_BOOL(tn_isclose_fn_opts, isclose, "tn_allclose", options, tn_allclose_opts(a, b, o)); }

static tn_tensor *tn__isclose_impl(tn_tensor *a, tn_tensor *b, double rtol, double atol, bool equal_nan) {
    TN__CHECK_NULL(a, b);
    if (a->dtype != b->dtype) return (tn_tensor *)tn__error("tn_isclose: %s did not match %s", tn__torch_type_name(a->dtype), tn__torch_type_name(b->dtype));
    if (!(rtol >= 0)) return (tn_tensor *)tn__error("tn_isclose: rtol must be greater than or equal to zero, but got %g", rtol);
    if (!(atol >= 0)) return (tn_tensor *)tn__error("tn_isclose: atol must be greater than or equal to zero, but got %g", atol);
    tn_scope_begin();
    tn_tensor *close = tn_eq(a, b);
    if (close && equal_nan && tn_dtype_is_floating(a->dtype)) close = tn_logical_or(close, tn_logical_and(tn_isnan(a), tn_isnan(b)));
    if (close && (rtol != 0 || atol != 0)) {
        /* in the inputs' dtype, as PyTorch (bools as the default float dtype) */
        tn_tensor *ca = a->dtype == TN_BOOL ? tn_to_dtype(a, tn_get_default_dtype()) : a, *cb = a->dtype == TN_BOOL ? tn_to_dtype(b, tn_get_default_dtype()) : b;
        tn_tensor *err = tn_abs(tn_sub(ca, cb)), *allowed = tn_add_scalar(tn_abs(tn_mul_scalar(cb, rtol)), atol);
        close = tn_logical_or(close, tn_logical_and(tn_isfinite(err), tn_le(err, allowed)));
    }
    return tn__scope_return(close);
}
TNDEF tn_tensor *tn_isclose_opts(tn_tensor *a, tn_tensor *b, tn_isclose_fn_opts o) {
    return TN__AS("tn_isclose", tn__isclose_impl(a, b, o.rtol, o.atol, o.equal_nan));
}
TNDEF tn_tensor *tn_isclose_str(tn_tensor *a, tn_tensor *b, const char *options) { TN__KW_STR(tn_isclose_fn_opts, isclose, "tn_isclose", options, tn_isclose_opts(a, b, o)); }

TNDEF bool tn_equal(tn_tensor *a, tn_tensor *b) {
    if (a && b && (tn__check_cpu_dtype("tn_equal", a) || tn__check_cpu_dtype("tn_equal", b))) return false;
    if (!a || !b || a->ndim != b->ndim || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t))) return false;
    tn_scope_begin();
    tn_tensor *eq = tn_eq(a, b);
    bool r = eq && tn_item(tn_all(eq)) != 0;
    tn_scope_end();
    return r;
}
