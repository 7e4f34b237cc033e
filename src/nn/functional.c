static tn_tensor *tn__softmax(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_floating(x->dtype)) {   /* PyTorch has no integer kernel (its dtype= argument converts first) */
        int d = tn__wrap_dim(fn, dim, x->ndim);
        if (d < 0) return NULL;
        if (tn_numel(x) == 0) return tn__own(tn__new(x->dtype, x->device, x->shape, x->ndim));   /* PyTorch returns before the kernel */
        return (tn_tensor *)tn__error("%s: \"%s_%skernel_impl\" not implemented for '%s' (input %s)", fn, op == SOFTMAX ? "softmax" : "log_softmax",
                                      x->ndim <= 1 || d == x->ndim - 1 ? "lastdim_" : "", tn__torch_type_name(x->dtype), TN__SHAPE(x));
    }
    return tn__lane_like(fn, op, x, dim, x->dtype);
}
TNDEF tn_tensor *tn_softmax(tn_tensor *x, int64_t dim) {
    TN__AUTOCAST(TN__AC_F32_CUDA, tn_softmax(ac_[0], dim), x);
    return tn__softmax("tn_softmax", SOFTMAX, x, dim);
}
TNDEF tn_tensor *tn_log_softmax(tn_tensor *x, int64_t dim) {
    TN__AUTOCAST(TN__AC_F32_CUDA, tn_log_softmax(ac_[0], dim), x);
    return tn__softmax("tn_log_softmax", LOG_SOFTMAX, x, dim);
}
static tn_tensor *tn__gumbel_softmax(tn_tensor *logits, tn_gumbel_softmax_fn_opts o) {
    TN__CHECK_NULL(logits);
    if (!tn_dtype_is_floating(logits->dtype))   /* exponential_'s check, as PyTorch's first failure */
        return (tn_tensor *)tn__error("exponential_ distribution is a continuous probability distribution. dtype must be a floating point but you specified %s",
                                      tn__torch_type_name(logits->dtype));
    if (tn__wrap_dim("tn_gumbel_softmax", o.dim, logits->ndim) < 0) return NULL;
    tn_scope_begin();
    /* empty_like(logits, legacy_contiguous_format): a contiguous tensor of logits' shape */
    tn_tensor *e = tn__own(tn__new(logits->dtype, logits->device, logits->shape, logits->ndim));
    tn_tensor *y = e && tn_exponential_(e) ? tn_softmax(tn_div_scalar(tn_add(logits, tn_neg(tn_log(e))), o.tau), o.dim) : NULL;
    if (y && o.hard) {
        tn_tensor *index = tn_argmax_dim(y, .dim = o.dim, .keepdim = true);   /* y_soft.max(dim)[1]: the first maximum */
        tn_tensor *ones = index ? tn_ones_like(tn_to_dtype(index, y->dtype)) : NULL;
        tn_tensor *y_hard = ones ? tn_scatter(tn_zeros_like(tn_detach(y)), o.dim, index, ones) : NULL;
        y = y_hard ? tn_add(tn_sub(y_hard, tn_detach(y)), y) : NULL;
    }
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_gumbel_softmax_opts(tn_tensor *logits, tn_gumbel_softmax_fn_opts o) { return TN__AS("tn_gumbel_softmax", tn__gumbel_softmax(logits, o)); }
TNDEF tn_tensor *tn_gumbel_softmax_str(tn_tensor *logits, const char *options) {
    TN__KW_STR(tn_gumbel_softmax_fn_opts, gumbel_softmax, "tn_gumbel_softmax", options, tn_gumbel_softmax_opts(logits, o));
}

/* ---- activations ---- */
static tn_tensor *tn__act(const char *fn, tn_unary_op op, tn_tensor *x, double p0, double p1, double p2) {
    double p[3] = {p0, p1, p2};
    return TN__AS(fn, tn__unary(op, x, p));
}
/* hardtanh of an integer tensor stays integral (torch truncates the bounds): a clamp */
static tn_tensor *tn__hardtanh(const char *fn, tn_tensor *x, double lo, double hi) {
    if (x && x->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: Bool inputs not supported for hardtanh (input %s)", fn, TN__SHAPE(x));
    if (x && !tn_dtype_is_floating(x->dtype)) return TN__AS(fn, tn_clamp(x, .min = trunc(lo), .max = trunc(hi)));
    return tn__act(fn, HARDTANH, x, lo, hi, 0);
}
TNDEF tn_tensor *tn_relu6(tn_tensor *x) { return tn__hardtanh("tn_relu6", x, 0, 6); }
TNDEF tn_tensor *tn_leaky_relu_opts(tn_tensor *x, tn_leaky_relu_fn_opts o) { return tn__act("tn_leaky_relu", LEAKY_RELU, x, o.negative_slope, 0, 0); }
TNDEF tn_tensor *tn_leaky_relu_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_leaky_relu_fn_opts, leaky_relu, "tn_leaky_relu", options, tn_leaky_relu_opts(x, o));
}
TNDEF tn_tensor *tn_elu_opts(tn_tensor *x, tn_elu_fn_opts o) { return tn__act("tn_elu", ELU, x, o.alpha, 1, 1); }
TNDEF tn_tensor *tn_elu_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_elu_fn_opts, elu, "tn_elu", options, tn_elu_opts(x, o)); }
TNDEF tn_tensor *tn_selu(tn_tensor *x) {
    return tn__act("tn_selu", ELU, x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1);
}
TNDEF tn_tensor *tn_celu_opts(tn_tensor *x, tn_elu_fn_opts o) {
    if (o.alpha == 0) return (tn_tensor *)tn__error("tn_celu: alpha must be nonzero (ZeroDivisionError in PyTorch)");
    return tn__grad_name(tn__act("tn_celu", ELU, x, o.alpha, 1, 1 / o.alpha), "CeluBackward0");
}
TNDEF tn_tensor *tn_celu_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_elu_fn_opts, elu, "tn_celu", options, tn_celu_opts(x, o)); }
TNDEF tn_tensor *tn_hardtanh_opts(tn_tensor *x, tn_hardtanh_fn_opts o) {
    if (o.min_val > o.max_val) return (tn_tensor *)tn__error("tn_hardtanh: min_val (%g) cannot be greater than max_val (%g)", o.min_val, o.max_val);
    return tn__hardtanh("tn_hardtanh", x, o.min_val, o.max_val);
}
TNDEF tn_tensor *tn_hardtanh_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_hardtanh_fn_opts, hardtanh, "tn_hardtanh", options, tn_hardtanh_opts(x, o)); }
TNDEF tn_tensor *tn_mish(tn_tensor *x) { return tn__act("tn_mish", MISH, x, 0, 0, 0); }
TNDEF tn_tensor *tn_hardswish(tn_tensor *x) { return tn__act("tn_hardswish", HARDSWISH, x, 0, 0, 0); }
TNDEF tn_tensor *tn_hardsigmoid(tn_tensor *x) { return tn__act("tn_hardsigmoid", HARDSIGMOID, x, 0, 0, 0); }

/* ---- nn helpers ---- */
/* An op whose backward is a function beside its forward, with the custom-op signature:
   saved tensors through tn_ctx_saved, attributes in n->d and n->i. */
static tn_node *tn__fn_node(const char *name, tn_custom_backward bw, tn_tensor *const *ins, int n) {
    tn_node *nd = tn__node_new(G_CUSTOM, 0, ins, n);
    if (nd) { nd->name = name; nd->custom_bw = bw; }
    return nd;
}
static int tn__nn_check(const char *fn, tn_tensor *x, const char *what) {
    if (!tn_dtype_is_floating(x->dtype))
        return TN__FAIL_INT("%s: %s must be a floating dtype, got %s", fn, what, tn_dtype_name(x->dtype));
    /* the layers multiply sizes in groups (N * C, H * W): an empty tensor's other sizes
       (zeros(0, 2^40, 2^40)) must multiply within int64 too (a non-empty one's do) */
    int64_t p = 1;
    for (int i = 0; i < x->ndim; i++)
        if (x->shape[i] && !tn__mul_ok(p, x->shape[i], &p))
            return TN__FAIL_INT("%s: %s %s is empty, but its other sizes multiply past int64", fn, what, TN__SHAPE(x));
    return 0;
}
/* The other tensors of a layer (weight, bias, ...) must match the input's dtype and device. */
static int tn__nn_same(const char *fn, tn_tensor *x, tn_tensor *t, const char *what) {
    if (!t) return 0;
    if (t->dtype != x->dtype) return TN__FAIL_INT("%s: input (%s) and %s (%s) must have the same dtype", fn, tn_dtype_name(x->dtype), what, tn_dtype_name(t->dtype));
    if (t->device != x->device) return TN__FAIL_INT("%s: input (%s) and %s (%s) must be on the same device", fn, tn_device_name(x->device), what, tn_device_name(t->device));
    return 0;
}
/* Layers in half precision compute in float32: t cast with a node (its gradient comes back
   rounded to t's dtype), owned by the open scope; the layer's float32 result is rounded to
   the input's dtype once, as PyTorch's CPU kernels store it. */
static tn_tensor *tn__nn_f32(tn_tensor *t) { return t && tn__is_half(t->dtype) ? tn_to_dtype(t, TN_F32) : t; }
static tn_tensor *tn__nn_half_return(tn_tensor *r, tn_dtype dtype) { return tn__scope_return(r ? tn_to_dtype(r, dtype) : NULL); }
/* Integer inputs of the layers that PyTorch's CPU computes in their integer dtype (conv,
   bilinear): computed here in float64, exact while no sum can reach 2^53 (bounded by the
   factors' largest magnitudes times `terms`, the products per output, plus the bias's),
   then wrapped to the dtype as PyTorch's integer arithmetic wraps. Begin: 1 with the
   factors t[0..nfac-1] and *bias replaced by float64 copies (owned by the open scope), 0
   when t[0] is not an integer tensor (the float path decides), -1 on an error. */
/* (complex is not an integer: the layers refuse it, or take it part by part) */
static bool tn__nn_is_int(const tn_tensor *x) { return x && x->dtype != TN_BOOL && !tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype); }
static double tn__nn_absmax(tn_tensor *t) { return t && tn_numel(t) ? tn_item(tn_max(tn_abs(tn_to_dtype(t, TN_F64)))) : 0; }
static int tn__nn_int_begin(const char *fn, tn_tensor **t, int nfac, tn_tensor **bias, int64_t terms) {
    if (!tn__nn_is_int(t[0])) return 0;
    static const char *const names[] = {"input", "input2", "weight"};
    for (int i = 1; i < nfac; i++)
        if (tn__nn_same(fn, t[0], t[i], names[i == nfac - 1 ? 2 : 1])) return -1;
    if (*bias && tn__nn_same(fn, t[0], *bias, "bias")) return -1;
    double bound = (double)terms;
    for (int i = 0; i < nfac; i++) bound *= tn__nn_absmax(t[i]);
    bound += tn__nn_absmax(*bias);
    if (!(bound < 9007199254740992.0))
        return TN__FAIL_INT("%s: %s inputs this large are not supported: a sum could reach %g, past float64's exact integers (2^53), "
                            "where PyTorch's integer kernel wraps", fn, tn_dtype_name(t[0]->dtype), bound);
    for (int i = 0; i < nfac; i++) t[i] = tn_to_dtype(t[i], TN_F64);
    if (*bias) *bias = tn_to_dtype(*bias, TN_F64);
    return 1;
}
/* the float64 result of an integer layer in the input's dtype (exact, then wrapped) */
static tn_tensor *tn__nn_int_end(tn_tensor *y, tn_dtype dtype) { return tn__scope_return(y ? tn_to_dtype(tn_to_dtype(y, TN_I64), dtype) : NULL); }
/* A [1, C, 1, ...] view of a per-channel vector for an input of ndim dims. */
static tn_tensor *tn__per_channel(tn_tensor *v, int ndim) {
    int64_t shape[TN_MAX_DIMS];
    for (int d = 0; d < ndim; d++) shape[d] = 1;
    shape[1] = -1;
    return v ? tn_reshape(v, shape, ndim) : NULL;
}

/* ---- linear ---- */
static tn_tensor *tn__linear_impl(tn_tensor *x, tn_tensor *w, tn_tensor *b) {
    TN__CHECK_NULL(x); TN__CHECK_NULL(w);
    if (w->ndim != 2 || (b && b->ndim > 1)) return (tn_tensor *)tn__error("tn_linear: weight must be 2-d [out, in] (got %s) and bias 1-d or 0-d", TN__SHAPE(w));
    if (x->ndim == 0 || x->shape[x->ndim - 1] != w->shape[1])
        return (tn_tensor *)tn__error("tn_linear: input %s and weight %s: the last dim of the input must equal in_features (%lld)", TN__SHAPE(x), TN__SHAPE(w), (long long)w->shape[1]);
    if (b && b->ndim == 1 && b->shape[0] != w->shape[0]) return (tn_tensor *)tn__error("tn_linear: bias %s must have out_features (%lld) elements", TN__SHAPE(b), (long long)w->shape[0]);
    if (tn__nn_same("tn_linear", x, w, "weight") || tn__nn_same("tn_linear", x, b, "bias")) return NULL;
    tn_scope_begin();
    tn_tensor *wt = tn_t(w), *y;
    if (x->ndim == 2 && b) y = tn__addmm(b, x, wt, 1, 1);  /* one GEMM with the bias as C, as PyTorch */
    else if (x->ndim > 2 && b) {   /* the leading dims folded into rows: the same GEMM */
        int64_t x2[2] = {tn__numel(x->shape, x->ndim - 1), x->shape[x->ndim - 1]}, ys[TN_MAX_DIMS];
        memcpy(ys, x->shape, (size_t)(x->ndim - 1) * sizeof(int64_t));
        ys[x->ndim - 1] = w->shape[0];
        y = tn_reshape(tn__addmm(b, tn_reshape(x, x2, 2), wt, 1, 1), ys, x->ndim);
    } else {
        y = tn_matmul(x, wt);
        if (b) y = tn_add(y, b);
    }
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_linear(tn_tensor *x, tn_tensor *w, tn_tensor *b) {
    TN__AUTOCAST(TN__AC_LOWER, tn_linear(ac_[0], ac_[1], ac_[2]), x, w, b);
    return TN__AS("tn_linear", tn__linear_impl(x, w, b));
}
static tn_tensor *tn__bilinear_impl(tn_tensor *x1, tn_tensor *x2, tn_tensor *w, tn_tensor *b) {
    TN__CHECK_NULL(x1); TN__CHECK_NULL(x2); TN__CHECK_NULL(w);
    if (w->ndim != 3 || x1->ndim == 0 || x2->ndim == 0 || x1->shape[x1->ndim - 1] != w->shape[1] || x2->shape[x2->ndim - 1] != w->shape[2] ||
        x1->ndim != x2->ndim || memcmp(x1->shape, x2->shape, (size_t)(x1->ndim - 1) * sizeof(int64_t)))
        return (tn_tensor *)tn__error("tn_bilinear: inputs %s and %s do not fit weight %s (expected [*, in1], [*, in2] and [out, in1, in2])", TN__SHAPE(x1), TN__SHAPE(x2), TN__SHAPE(w));
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0])) return (tn_tensor *)tn__error("tn_bilinear: bias %s must be [%lld]", TN__SHAPE(b), (long long)w->shape[0]);
    if (tn__nn_check("tn_bilinear", x1, "input1") || tn__nn_same("tn_bilinear", x1, x2, "input2") || tn__nn_same("tn_bilinear", x1, w, "weight") ||
        tn__nn_same("tn_bilinear", x1, b, "bias")) return NULL;
    int64_t O = w->shape[0], I1 = w->shape[1], I2 = w->shape[2], B = tn__numel(x1->shape, x1->ndim - 1);
    tn_scope_begin();
    /* y[b, o] = sum_j (x1 @ W')[b, o, j] x2[b, j], W' = W as [in1, out * in2], over the
       leading dims flattened to one (B rows: an 8-d input needs no 9th dim) */
    tn_tensor *wp = tn_reshape(tn_permute(w, TN_SHAPE(1, 0, 2)), TN_SHAPE(I1, tn__mul_sat(O, I2)));
    tn_tensor *t = tn_reshape(tn_matmul(tn_reshape(x1, TN_SHAPE(B, I1)), wp), TN_SHAPE(B, O, I2));
    tn_tensor *y = tn_sum_dims(tn_mul(t, tn_reshape(x2, TN_SHAPE(B, 1, I2))), TN_SHAPE(-1));
    int64_t shape[TN_MAX_DIMS];
    for (int d = 0; d < x1->ndim - 1; d++) shape[d] = x1->shape[d];
    shape[x1->ndim - 1] = O;
    y = tn_reshape(y, shape, x1->ndim);
    if (b) y = tn_add(y, b);
    return tn__scope_return(y);
}
static tn_tensor *tn__bilinear_any(tn_tensor *x1, tn_tensor *x2, tn_tensor *w, tn_tensor *b) {
    TN__CHECK_NULL(x1); TN__CHECK_NULL(x2); TN__CHECK_NULL(w);
    if (!tn__nn_is_int(x1)) return tn__bilinear_impl(x1, x2, w, b);
    tn_scope_begin();   /* integers, as PyTorch's CPU: each output sums in1 * in2 products */
    tn_tensor *f[3] = {x1, x2, w};
    int r = w->ndim == 3 ? tn__nn_int_begin("tn_bilinear", f, 3, &b, tn__mul_sat(w->shape[1], w->shape[2])) : 0;
    if (r < 0) { tn_scope_end(); return NULL; }
    return tn__nn_int_end(tn__bilinear_impl(f[0], f[1], f[2], b), x1->dtype);
}
TNDEF tn_tensor *tn_bilinear(tn_tensor *x1, tn_tensor *x2, tn_tensor *w, tn_tensor *b) { return TN__AS("tn_bilinear", tn__bilinear_any(x1, x2, w, b)); }

/* ---- sliding windows: im2col / col2im, each the other's backward ---- */
/* g: kh, kw, dh, dw, ph, pw, sh, sw, oh, ow (the backend's geometry), then H, W of the image. */
static tn_tensor *tn__col2im(tn_tensor *cols, int64_t H, int64_t W, const int64_t *g);
static tn_tensor *tn__im2col(tn_tensor *x, const int64_t *g);
static int tn__im2col_bw(tn_ctx *n, tn_tensor *gout, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    return (gin[0] = tn__col2im(gout, n->i[10], n->i[11], n->i)) ? 0 : -1;
}
static int tn__col2im_bw(tn_ctx *n, tn_tensor *gout, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    return (gin[0] = tn__im2col(gout, n->i)) ? 0 : -1;
}
/* A windowed op's node (im2col, col2im, convolution, library pooling) keeps the geometry
   g[10] in i[0..9] and n (1 or 2) integers of its own after it. */
static void tn__node_geom(tn_node *nd, const int64_t *g, int n, int64_t e0, int64_t e1) {
    memcpy(nd->i, g, 10 * sizeof(int64_t));
    nd->i[10] = e0;
    nd->i[11] = e1;
    nd->ni = 10 + n;
}
/* x [N, C, H, W] -> [N, C*kh*kw, oh*ow], stored as [C*kh*kw, N, oh*ow] so that convolution
   multiplies all samples in one GEMM. */
static tn_tensor *tn__im2col(tn_tensor *x, const int64_t *g) {
    int64_t N = x->shape[0], K, L;
    if (!tn__mul_ok(x->shape[1], g[0], &K) || !tn__mul_ok(K, g[1], &K) || !tn__mul_ok(g[8], g[9], &L))
        return (tn_tensor *)tn__error("im2col: the column buffer of %lld channels, kernel %lld x %lld and %lld x %lld windows overflows int64",
                                      (long long)x->shape[1], (long long)g[0], (long long)g[1], (long long)g[8], (long long)g[9]);
    int64_t shape[3] = {K, N, L};
    tn_tensor *c = tn__new(x->dtype, x->device, shape, 3);
    if (!c) return NULL;
    c->shape[0] = N; c->shape[1] = K;
    c->strides[0] = L; c->strides[1] = N * L; c->strides[2] = 1;
    if (tn__backend(x->device)->im2col(0, c, x, g)) { tn_release(c); return NULL; }
    tn_node *nd = tn__fn_node("Im2ColBackward0", tn__im2col_bw, &x, 1);
    if (nd) tn__node_geom(nd, g, 2, x->shape[2], x->shape[3]);
    return tn__own(tn__node_attach(nd, c));
}
static tn_tensor *tn__col2im(tn_tensor *cols, int64_t H, int64_t W, const int64_t *g) {
    int64_t shape[4] = {cols->shape[0], cols->shape[1] / (g[0] * g[1]), H, W};
    tn_tensor *img = tn__new(cols->dtype, cols->device, shape, 4);
    if (!img) return NULL;
    if (tn__backend(img->device)->fill(img, 0) || tn__backend(img->device)->im2col(1, cols, img, g)) { tn_release(img); return NULL; }
    tn_node *nd = tn__fn_node("Col2ImBackward0", tn__col2im_bw, &cols, 1);
    if (nd) tn__node_geom(nd, g, 2, H, W);
    return tn__own(tn__node_attach(nd, img));
}
/* Window count along one dim, as PyTorch's pooling_output_shape (ceil_mode: a last window
   may start in the right padding but not past it). */
static int64_t tn__window_count(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad) out--;
    return out;
}
static int tn__check_positive(const char *fn, const char *what, const int64_t *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i] <= 0) return TN__FAIL_INT("%s: %s must be greater than zero, got %lld", fn, what, (long long)v[i]);
    return 0;
}
static tn_tensor *tn__im2col_public(const char *fn, tn_tensor *x, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s) {
    TN__CHECK_NULL(x);
    if (x->ndim != 4 && x->ndim != 3) return (tn_tensor *)tn__error("%s: expected 3-d (unbatched) or 4-d (batched) input, got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__check_positive(fn, "kernel_size", k, 2) || tn__check_positive(fn, "dilation", d, 2) ||
        tn__check_positive(fn, "stride", s, 2)) return NULL;
    if (p[0] < 0 || p[1] < 0) return (tn_tensor *)tn__error("%s: padding must be non-negative", fn);
    for (int i = 0; i < 2; i++)   /* keeps the size arithmetic below far from int64 overflow */
        if (k[i] > INT32_MAX || d[i] > INT32_MAX || p[i] > INT32_MAX || s[i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: kernel_size, dilation, padding and stride must be below 2^31", fn);
    tn_scope_begin();
    tn_tensor *x4 = x->ndim == 4 ? x : tn_unsqueeze(x, 0);
    int64_t g[10] = {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], 0, 0};
    for (int i = 0; i < 2; i++) {
        g[8 + i] = (x4->shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
        if (x4->shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 < 0) {
            tn_scope_end();
            return (tn_tensor *)tn__error("%s: input %s is smaller than the dilated kernel (%lld x %lld) with padding (%lld, %lld)", fn, TN__SHAPE(x),
                                          (long long)(d[0] * (k[0] - 1) + 1), (long long)(d[1] * (k[1] - 1) + 1), (long long)p[0], (long long)p[1]);
        }
    }
    tn_tensor *c = tn_contiguous(tn__im2col(x4, g));
    return tn__scope_return(tn__grad_name(x->ndim == 4 ? c : tn_squeeze_dim(c, 0), "Im2ColBackward0"));
}
TNDEF tn_tensor *tn_im2col(tn_tensor *x, const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2], const int64_t stride[2]) {
    if (x && tn_is_complex(x)) {   /* a rearrangement: part by part (differentiable through the views) */
        tn_scope_begin();
        tn_tensor *re = tn__im2col_public("tn_im2col", tn_real(x), kernel, dilation, padding, stride);
        tn_tensor *im = re ? tn__im2col_public("tn_im2col", tn_imag(x), kernel, dilation, padding, stride) : NULL;
        return TN__AS("tn_im2col", tn__scope_return(im ? tn_complex(re, im) : NULL));
    }
    return TN__AS("tn_im2col", tn__im2col_public("tn_im2col", x, kernel, dilation, padding, stride));
}
static tn_tensor *tn__col2im_public(const char *fn, tn_tensor *c, const int64_t *os, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s) {
    TN__CHECK_NULL(c);
    if (c->ndim != 3 && c->ndim != 2) return (tn_tensor *)tn__error("%s: expected 2-d (unbatched) or 3-d (batched) input, got %s", fn, TN__SHAPE(c));
    if (tn__nn_check(fn, c, "input") || tn__check_positive(fn, "kernel_size", k, 2) || tn__check_positive(fn, "dilation", d, 2) ||
        tn__check_positive(fn, "stride", s, 2) || tn__check_positive(fn, "output_size", os, 2)) return NULL;
    if (p[0] < 0 || p[1] < 0) return (tn_tensor *)tn__error("%s: padding must be non-negative", fn);
    for (int i = 0; i < 2; i++)   /* keeps the size arithmetic below far from int64 overflow */
        if (k[i] > INT32_MAX || d[i] > INT32_MAX || p[i] > INT32_MAX || s[i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: kernel_size, dilation, padding and stride must be below 2^31", fn);
    if (os[0] > INT64_MAX / 4 || os[1] > INT64_MAX / 4) return (tn_tensor *)tn__error("%s: output_size (%lld, %lld) is too large", fn, (long long)os[0], (long long)os[1]);
    int64_t g[10] = {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], 0, 0};
    for (int i = 0; i < 2; i++) g[8 + i] = (os[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;   /* each term below 2^62 */
    int64_t rows = c->shape[c->ndim - 2], L = c->shape[c->ndim - 1], windows = g[8] > 0 && g[9] > 0 ? tn__mul_or(g[8], g[9], -1) : 0;
    if (rows % (k[0] * k[1]) || g[8] <= 0 || g[9] <= 0 || L != windows)
        return (tn_tensor *)tn__error("%s: input %s does not fit output_size (%lld, %lld) and kernel (%lld, %lld): expected [*, C*%lld, %lld]", fn, TN__SHAPE(c),
                                      (long long)os[0], (long long)os[1], (long long)k[0], (long long)k[1], (long long)(k[0] * k[1]),
                                      (long long)windows);
    tn_scope_begin();
    tn_tensor *c3 = c->ndim == 3 ? c : tn_unsqueeze(c, 0);
    tn_tensor *img = tn__col2im(c3, os[0], os[1], g);
    return tn__scope_return(tn__grad_name(c->ndim == 3 ? img : tn_squeeze_dim(img, 0), "Col2ImBackward0"));
}
TNDEF tn_tensor *tn_col2im(tn_tensor *cols, const int64_t output_size[2], const int64_t kernel[2], const int64_t dilation[2],
                           const int64_t padding[2], const int64_t stride[2]) {
    if (cols && tn_is_complex(cols)) {   /* sums of rearranged elements: part by part */
        tn_scope_begin();
        tn_tensor *re = tn__col2im_public("tn_col2im", tn_real(cols), output_size, kernel, dilation, padding, stride);
        tn_tensor *im = re ? tn__col2im_public("tn_col2im", tn_imag(cols), output_size, kernel, dilation, padding, stride) : NULL;
        return TN__AS("tn_col2im", tn__scope_return(im ? tn_complex(re, im) : NULL));
    }
    return TN__AS("tn_col2im", tn__col2im_public("tn_col2im", cols, output_size, kernel, dilation, padding, stride));
}
