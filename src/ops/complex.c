/* ---- complex tensors: real/imag views, view_as_real/complex, conj, complex, polar ----
   A complex tensor's float view counts its storage in floats: element k of the complex
   tensor is floats 2k (real) and 2k + 1 (imag), so real/imag double the strides and the
   offset. Gradients follow PyTorch's convention: the gradient of a real loss L with
   respect to z is dL/dRe z + i dL/dIm z (the conjugate Wirtinger derivative, times 2). */
TNDEF bool tn_is_complex(const tn_tensor *t) { return t && tn_dtype_is_complex(t->dtype); }

/* A view of x's storage as dtype (element size half or double x's): shape, strides and
   offset in the new dtype's elements. */
static tn_tensor *tn__retyped_view(tn_tensor *x, tn_dtype dtype, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    tn_tensor *v = tn__view_own(x, shape, strides, ndim, offset);
    if (v) v->dtype = dtype;
    return v;
}
/* The real (part 0) or imaginary (part 1) float view of a complex tensor. */
static tn_tensor *tn__part_view(tn_tensor *x, int part) {
    int64_t st[TN_MAX_DIMS], off;
    for (int d = 0; d < x->ndim; d++) st[d] = x->strides[d] * 2;   /* fits: the bytes of the storage do */
    off = x->offset * 2 + part;
    return tn__retyped_view(x, tn_dtype_to_real(x->dtype), x->shape, st, x->ndim, off);
}

static int tn__real_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)nin; (void)user;
    return (gin[0] = tn_complex(g, tn_zeros_like(g))) ? 0 : -1;
}
static int tn__imag_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)nin; (void)user;
    return (gin[0] = tn_complex(tn_zeros_like(g), g)) ? 0 : -1;
}
static int tn__view_as_real_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)nin; (void)user;
    return (gin[0] = tn_view_as_complex(tn_contiguous(g))) ? 0 : -1;
}
static int tn__view_as_complex_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)nin; (void)user;
    return (gin[0] = tn_view_as_real(tn_contiguous(g))) ? 0 : -1;
}
static int tn__conj_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)nin; (void)user;
    return (gin[0] = tn_conj_physical(g)) ? 0 : -1;
}
static tn_tensor *tn__complex_record(const char *name, tn_custom_backward bw, tn_tensor *x, tn_tensor *out) {
    tn_node *nd = out ? tn__fn_node(name, bw, &x, 1) : NULL;
    return tn__node_attach(nd, out);
}

TNDEF tn_tensor *tn_real(tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_complex(x->dtype)) return tn__own(tn_retain(x));   /* torch.real of a real tensor is the tensor */
    return tn__complex_record("RealBackward0", tn__real_bw, x, tn__part_view(x, 0));
}
TNDEF tn_tensor *tn_imag(tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_complex(x->dtype)) return (tn_tensor *)tn__error("tn_imag: imag is not implemented for tensors with non-complex dtypes.");
    return tn__complex_record("ImagBackward0", tn__imag_bw, x, tn__part_view(x, 1));
}
TNDEF tn_tensor *tn_view_as_real(tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_complex(x->dtype)) return (tn_tensor *)tn__error("tn_view_as_real: view_as_real is only supported for complex tensors (got %s)", tn_dtype_name(x->dtype));
    if (x->ndim >= TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_view_as_real: a %d-d tensor would need %d dims (TN_MAX_DIMS is %d)", x->ndim, x->ndim + 1, TN_MAX_DIMS);
    int64_t sh[TN_MAX_DIMS], st[TN_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) { sh[d] = x->shape[d]; st[d] = x->strides[d] * 2; }
    sh[x->ndim] = 2;
    st[x->ndim] = 1;
    tn_tensor *v = tn__retyped_view(x, tn_dtype_to_real(x->dtype), sh, st, x->ndim + 1, x->offset * 2);
    return tn__complex_record("ViewAsRealBackward0", tn__view_as_real_bw, x, v);
}
TNDEF tn_tensor *tn_view_as_complex(tn_tensor *x) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_view_as_complex";
    if (x->dtype != TN_F32 && x->dtype != TN_F64)   /* PyTorch's message; half is refused too here (no complex32) */
        return (tn_tensor *)tn__error("%s: view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: %s", fn, tn__torch_type_name(x->dtype));
    if (x->ndim == 0) return (tn_tensor *)tn__error("%s: Input tensor must have one or more dimensions", fn);
    if (x->shape[x->ndim - 1] != 2) return (tn_tensor *)tn__error("%s: Tensor must have a last dimension of size 2 (got shape %s)", fn, TN__SHAPE(x));
    if (x->strides[x->ndim - 1] != 1) return (tn_tensor *)tn__error("%s: Tensor must have a last dimension with stride 1", fn);
    for (int d = 0; d < x->ndim - 1; d++)
        if (x->strides[d] % 2) return (tn_tensor *)tn__error("%s: Tensor must have a stride divisible by 2 for all but last dimension", fn);
    if (x->offset % 2) return (tn_tensor *)tn__error("%s: Tensor must have a storage_offset divisible by 2", fn);
    int64_t st[TN_MAX_DIMS];
    for (int d = 0; d < x->ndim - 1; d++) st[d] = x->strides[d] / 2;
    tn_tensor *v = tn__retyped_view(x, tn_dtype_to_complex(x->dtype), x->shape, st, x->ndim - 1, x->offset / 2);
    return tn__complex_record("ViewAsComplexBackward0", tn__view_as_complex_bw, x, v);
}

/* conj is a copy here (PyTorch's is a lazy view with a conjugate bit: writes through it
   reach the input there, not here); of a real tensor it is the tensor itself. */
static tn_tensor *tn__conj_copy(const char *node, tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_complex(x->dtype)) return tn__own(tn_retain(x));
    tn_tensor *r = tn__copy_as(x, x->dtype, x->device);
    if (r) {   /* negate the imaginary parts in place (a fresh contiguous tensor), on its device */
        tn_tensor im = tn__shallow(r);
        im.dtype = tn_dtype_to_real(r->dtype);
        for (int d = 0; d < im.ndim; d++) im.strides[d] *= 2;
        im.offset = 1;
        if (tn_numel(r) > 0 && tn__backend(r->device)->unary(NEG, &im, &im, NULL)) { tn_release(r); return NULL; }
    }
    return tn__own(tn__complex_record(node, tn__conj_bw, x, r));
}
TNDEF tn_tensor *tn_conj(tn_tensor *x) { return tn__conj_copy("ConjBackward0", x); }
TNDEF tn_tensor *tn_conj_physical(tn_tensor *x) { return tn__conj_copy("ConjPhysicalBackward0", x); }

/* torch.complex / torch.polar's checks: both float32 or both float64 (no complex32). */
static int tn__check_complex_parts(const char *fn, tn_tensor *a, tn_tensor *b) {
    if ((a->dtype != TN_F32 && a->dtype != TN_F64) || (b->dtype != TN_F32 && b->dtype != TN_F64))
        return TN__FAIL_INT("%s: Expected both inputs to be Half, Float or Double tensors but got %s and %s", fn, tn__torch_type_name(a->dtype), tn__torch_type_name(b->dtype));
    if (a->dtype != b->dtype)
        return TN__FAIL_INT("%s: Expected object of scalar type %s but got scalar type %s for second argument", fn, tn__torch_type_name(a->dtype), tn__torch_type_name(b->dtype));
    return tn__check_same_device(fn, a, b);
}
/* real + i imag, broadcast, as a new complex tensor (untracked). */
static tn_tensor *tn__complex_from_parts(const char *fn, tn_tensor *re, tn_tensor *im) {
    int64_t shape[TN_MAX_DIMS];
    int nd = tn__broadcast(re->shape, re->ndim, im->shape, im->ndim, shape);
    if (nd < 0) return (tn_tensor *)tn__error("%s: The size of tensor a %s must match the size of tensor b %s at a non-singleton dimension", fn, TN__SHAPE(re), TN__SHAPE(im));
    tn_tensor *out = tn__new(tn_dtype_to_complex(re->dtype), re->device, shape, nd);
    if (!out) return NULL;
    tn_scope_begin();
    tn_tensor *r = tn__part_view(out, 0), *i = r ? tn__part_view(out, 1) : NULL;   /* views the scope owns */
    int rc = !i || tn__copy(r, re) || tn__copy(i, im);
    tn_scope_end();
    if (rc) { tn_release(out); return NULL; }
    return out;
}
static int tn__complex_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)nin; (void)user;
    gin[0] = tn_real(g);
    gin[1] = tn_imag(g);
    return gin[0] && gin[1] ? 0 : -1;
}
TNDEF tn_tensor *tn_complex(tn_tensor *real, tn_tensor *imag) {
    TN__CHECK_NULL(real, imag);
    if (tn__check_complex_parts("tn_complex", real, imag)) return NULL;
    tn_tensor *ins[2] = {real, imag}, *out = tn__complex_from_parts("tn_complex", real, imag);
    tn_node *nd = out ? tn__fn_node("ComplexBackward0", tn__complex_bw, ins, 2) : NULL;
    return tn__own(tn__node_attach(nd, out));
}
/* abs * (cos(angle) + i sin(angle)); its gradient is that of the composite:
   abs grad = Re(g conj(e^{i angle})), angle grad = Re(g conj(i z)) */
TNDEF tn_tensor *tn_polar(tn_tensor *abs, tn_tensor *angle) {
    TN__CHECK_NULL(abs, angle);
    if (tn__check_complex_parts("tn_polar", abs, angle)) return NULL;
    tn_scope_begin();
    tn_tensor *r = tn_complex(tn_mul(abs, tn_cos(angle)), tn_mul(abs, tn_sin(angle)));
    return tn__grad_name(tn__scope_return(r), "PolarBackward0");
}

TNDEF int tn_item_complex(tn_tensor *t, double *re, double *im) {
    if (!t) return TN__FAIL_INT("tn_item_complex: tensor is NULL");
    if (tn_numel(t) != 1) return TN__FAIL_INT("tn_item_complex: a Tensor with %lld elements cannot be converted to Scalar", (long long)tn_numel(t));
    tn_tensor *c = tn__copy_as(t, TN_C128, TN_CPU);
    if (!c) return -1;
    const double *p = (const double *)tn_data_ptr(c);
    if (re) *re = p[0];
    if (im) *im = p[1];
    tn_release(c);
    return 0;
}
