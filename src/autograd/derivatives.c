/* ---- backward formulas ---- */
/* A saved result for a formula: the saved data as it is, or, when the backward is being
   recorded (create_graph), a view of it whose grad_fn is the node itself, so second
   derivatives flow through the result as through PyTorch's saved outputs. */
static tn_tensor *tn__saved_output(tn_node *n, tn_tensor *saved) {
    if (tn__grad_disabled) return saved;
    tn_tensor *v = tn__view_of(saved, saved->shape, saved->strides, saved->ndim, saved->offset);
    if (!v) return NULL;
    TN__ATOMIC_ADD(&n->refcount, 1);
    v->grad_fn = n;
    v->requires_grad = true;
    return tn__own(v);
}

static tn_tensor *tn__zeros_meta(const tn__meta *m, tn_dtype dtype) {
    tn_tensor *z = tn_zeros(m->shape, m->ndim, dtype);
    return m->device == TN_CPU ? z : tn_to(z, m->device);
}
static int tn__zeros_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    gin[0] = tn__zeros_meta(&n->in[0], g->dtype);
    return gin[0] ? 0 : -1;
}
static int tn__undefined_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)n; (void)g; (void)nin; (void)user;
    gin[0] = NULL;
    return 0;
}
static tn_tensor *tn__zero_grad_node(tn_tensor *r, tn_tensor *x, const char *name, bool zeros) {
    tn_node *nd = r ? tn__node_new(G_CUSTOM, 0, &x, 1) : NULL;
    if (nd) { nd->name = name; nd->custom_bw = zeros ? tn__zeros_bw : tn__undefined_bw; }
    return tn__node_attach(nd, r);
}

/* g summed over the dims it was broadcast along, to the input's shape. */
static tn_tensor *tn__sum_to(tn_tensor *g, const tn__meta *m) {
    if (!g) return NULL;
    int lead = g->ndim - m->ndim, nd = 0;
    int64_t dims[TN_MAX_DIMS];
    for (int i = 0; i < g->ndim; i++)
        if (i < lead || (m->shape[i - lead] == 1 && g->shape[i] != 1)) dims[nd++] = i;
    if (nd == 0) return g;
    return tn_reshape(tn_sum_dims(g, dims, nd, .keepdim = true), m->shape, m->ndim);
}

/* g of a reduction, broadcast back over the reduced dims (mask in n->i). */
static tn_tensor *tn__unreduce(tn_node *n, tn_tensor *g) {
    const tn__meta *m = &n->in[0];
    int64_t k[TN_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) k[d] = n->i[d] ? 1 : m->shape[d];
    return tn_expand(tn_reshape(g, k, m->ndim), m->shape, m->ndim);
}

/* Differentiable inverse of a slice: zeros of shape m with g written into the slice
   (dim, start, step). Its own backward is that slice again. */
static tn_tensor *tn__slice_scatter(tn_tensor *g, const tn__meta *m, int64_t dim, int64_t start, int64_t step) {
    if (!g) return NULL;
    tn_tensor *out = tn__new(g->dtype, g->device, m->shape, m->ndim);
    if (!out) return NULL;
    tn_tensor v = tn__shallow(out);
    /* the strides and offset fit when g has elements (they reach into out); an empty g copies nothing */
    v.strides[dim] = tn__mul_or(v.strides[dim], step, v.strides[dim]);
    v.offset += tn__mul_or(start, out->strides[dim], 0);
    for (int d = 0; d < g->ndim; d++) v.shape[d] = g->shape[d];
    if (tn__backend(out->device)->fill(out, 0) || (tn_numel(g) > 0 && tn__copy(&v, g))) { tn_release(out); return NULL; }
    tn_node *nd = tn__node_new(G_SLICE_SCATTER, 0, &g, 1);
    if (nd) { nd->i[0] = dim; nd->i[1] = start; nd->i[2] = step; }
    return tn__own(tn__node_attach(nd, out));
}

static tn_tensor *tn__mask_as(tn_tensor *mask, tn_tensor *like) { return tn_to_dtype(mask, like->dtype); }
static tn_tensor *tn__scaled(tn_tensor *t, double alpha) { return alpha == 1 ? t : tn_mul_scalar(t, alpha); }
/* mm's gradient for mat2 (a^T g) in mat2's layout, as PyTorch: a column-major mat2 (a
   linear layer's transposed weight) gets (g^T a)^T, so the weight's gradient comes out
   contiguous and the engine can hand it to .grad without a copy. */
static tn_tensor *tn__mm_mat2_grad(tn_tensor *a, tn_tensor *b, tn_tensor *g) {
    if (b->ndim == 2 && b->shape[0] > 1 && b->shape[1] > 1 && b->strides[0] == 1 && b->strides[1] == b->shape[0])
        return tn_t(tn_mm(tn_t(g), a));
    return tn_mm(tn_t(a), g);
}

/* addmm's gradients for mat2 and for a bias vector (input [N] or [1, N], beta = alpha = 1)
   as one product on a device whose matmul_ep sums the bias gradient in the product's
   epilogue (cuBLASLt's BGRAD): *gm2 in tn__mm_mat2_grad's layout, *gin its column sums of g.
   1 (nothing made) where it declines, or when recording a graph (create_graph). */
static int tn__addmm_grads_fused(tn_tensor *m1, tn_tensor *m2, tn_tensor *g, const tn__meta *in, tn_tensor **gm2, tn_tensor **gin) {
    const tn_backend *be = tn__backend(g->device);
    if (!tn__grad_disabled || g->device == TN_CPU || !be->matmul_ep || g->ndim != 2 || m1->ndim != 2 || m2->ndim != 2 ||
        in->ndim < 1 || in->ndim > 2 || in->shape[in->ndim - 1] != g->shape[1] || (in->ndim == 2 && in->shape[0] != 1))
        return 1;
    /* a column-major mat2 (Linear's transposed weight): c = g^T m1, its transpose the
       gradient, the bias gradient the row sums of g^T; else c = m1^T g and the column sums of g */
    const bool colmajor = m2->shape[0] > 1 && m2->shape[1] > 1 && m2->strides[0] == 1 && m2->strides[1] == m2->shape[0];
    tn_tensor *a = colmajor ? tn_t(g) : tn_t(m1), *b = colmajor ? m1 : g;
    const int64_t cs[2] = {a ? a->shape[0] : 0, b->shape[1]};
    tn_tensor *c = a ? tn__new(g->dtype, g->device, cs, 2) : NULL, *v = c ? tn__new(g->dtype, g->device, in->shape, in->ndim) : NULL;
    const int rc = v ? be->matmul_ep(c, a, b, v, 1.0, colmajor ? TN__EPI_BGRAD_A : TN__EPI_BGRAD_B) : -1;
    if (rc != 0) { tn_release(c); tn_release(v); return rc; }
    *gm2 = colmajor ? tn_t(tn__own(c)) : tn__own(c);
    *gin = tn__own(v);
    return 0;
}

/* The incoming gradient g can take an elementwise backward's result in place: nothing
   but the engine holds it or its storage (no hook, retain_grad or .grad kept it), it is
   dense and has the result's shape and dtype, and no graph is being recorded. One buffer
   less at the backward's peak (a CNN's first-layer gradients are 6.4 MB each). */
static bool tn__grad_reusable(tn_tensor *g, tn_tensor *like) {
    return tn__grad_disabled && g->refcount == 1 && g->storage && g->storage->refcount == 1 && !g->grad_fn && !g->requires_grad &&
           g->dtype == like->dtype && g->device == like->device && g->ndim == like->ndim &&
           !memcmp(g->shape, like->shape, (size_t)g->ndim * sizeof(int64_t)) && tn_is_contiguous(g);
}
/* g op b for an elementwise backward: into g when it is reusable, else a new tensor */
/* The one-pass gradient kernels (relu's, gelu's) take g and x of one real floating dtype;
   half ones compute in float32 and round once, as PyTorch's half kernels (the composite
   formula would round at each of its dozen ops) */
static bool tn__one_pass_grad(tn_tensor *g, tn_tensor *x) {
    return g->dtype == x->dtype && (g->dtype == TN_F32 || g->dtype == TN_F64 || tn__is_half(g->dtype));
}
static tn_tensor *tn__grad_binary(const char *fn, tn_binary_op op, tn_tensor *g, tn_tensor *b, double alpha) {
    if (tn__grad_reusable(g, b)) return tn__own(tn__binary_raw(fn, op, g, b, alpha, g));
    return tn__binary(fn, op, g, b, alpha);
}

/* gin[k] = gradient for input k given g, the gradient of the node's result; results
   are tracked by the caller's scope. Formulas use public ops, so they are recorded
   when create_graph is on. */
static int tn__node_backward(tn_node *n, tn_tensor *g, tn_tensor **gin) {
    tn_tensor **S = n->saved, *unpacked[4 * TN_MAX_DIMS];
    if (n->save_failed) return TN__FAIL_INT("autograd: %s cannot run its backward: a tensor it saved is missing (out of memory when it was recorded)", tn__node_name(n));
    if (!tn__grad_disabled && n->nsaved <= 4 * TN_MAX_DIMS) { /* recording: saved non-leaves get their history back */
        for (int k = 0; k < n->nsaved; k++) {
            unpacked[k] = S[k];
            if (S[k] && k < 32 && (n->saved_output_mask >> k & 1)) { unpacked[k] = tn__saved_output(n, S[k]); continue; }
            if (!S[k] || !n->saved_fn[k]) continue;
            tn_tensor *v = tn__view_of(S[k], S[k]->shape, S[k]->strides, S[k]->ndim, S[k]->offset);
            if (!v) return -1;
            v->is_view = false;
            TN__ATOMIC_ADD(&n->saved_fn[k]->refcount, 1);
            v->grad_fn = n->saved_fn[k];
            v->requires_grad = true;
            unpacked[k] = tn__own(v);
        }
        S = unpacked;
    }
#define TN__NEED(k) (n->next[k].fn || n->next[k].leaf)
    switch (n->op) {
    case G_UNARY: {
        tn_tensor *x = S[0], *d = NULL;
        const double ln2 = 0.69314718055994530942, ln10 = 2.30258509299404568402;
        switch ((tn_unary_op)n->sub) {
        case NEG: gin[0] = tn_neg(g); return 0;
        case ABS: if (tn_dtype_is_complex(x->dtype)) { gin[0] = tn_mul(g, tn_sgn(x)); return 0; }   /* real g, complex z: g z / |z| */
            d = tn_sign(x); break;
        case SIGN: case FLOOR: case CEIL: case ROUND: case TRUNC: gin[0] = tn_zeros_like(g); return 0;
        case SQUARE: d = tn_mul_scalar(x, 2); break;
        case RELU: /* x is the saved result here */
            if (tn__grad_disabled && tn__one_pass_grad(g, x)) {
                gin[0] = tn__grad_binary("relu backward", THRESHOLD_BACKWARD, g, x, 0);   /* one pass, no mask */
                return 0;
            }
            d = tn__mask_as(tn_logical_not(tn_le_scalar(x, 0)), g);   /* recording (create_graph): differentiable ops */
            break;
        case CLAMP: d = tn__mask_as(tn_logical_and(tn_ge_scalar(x, n->d[0]), tn_le_scalar(x, n->d[1])), g); break;
        case EXP: d = tn__saved_output(n, x); break;                 /* x is the result y here */
        case EXPM1: d = tn_add_scalar(tn__saved_output(n, x), 1); break;
        case EXP2: d = tn_mul_scalar(tn__saved_output(n, x), ln2); break;
        case LOG: gin[0] = tn_div(g, tn_conj(x)); return 0;
        case LOG2: gin[0] = tn_div(g, tn_mul_scalar(tn_conj(x), ln2)); return 0;
        case LOG10: gin[0] = tn_div(g, tn_mul_scalar(tn_conj(x), ln10)); return 0;
        case LOG1P: gin[0] = tn_div(g, tn_add_scalar(x, 1)); return 0;
        case SQRT: gin[0] = tn_div(g, tn_mul_scalar(tn_conj(tn__saved_output(n, x)), 2)); return 0;
        case RSQRT: d = tn_mul_scalar(tn_pow_scalar(tn__saved_output(n, x), 3), -0.5); break;
        case RECIPROCAL: d = tn_neg(tn_reciprocal(tn_square(x))); break;
        case SIN: d = tn_cos(x); break;
        case COS: d = tn_neg(tn_sin(x)); break;
        case TAN: d = tn_add_scalar(tn_square(tn_tan(x)), 1); break;
        case ASIN: d = tn_rsqrt(tn_rsub_scalar(tn_square(x), 1)); break;
        case ACOS: d = tn_neg(tn_rsqrt(tn_rsub_scalar(tn_square(x), 1))); break;
        case ATAN: d = tn_reciprocal(tn_add_scalar(tn_square(x), 1)); break;
        case SINH: d = tn_cosh(x); break;
        case COSH: d = tn_sinh(x); break;
        case TANH: d = tn_rsub_scalar(tn_square(tn__saved_output(n, x)), 1); break;
        case ASINH: d = tn_rsqrt(tn_add_scalar(tn_square(x), 1)); break;
        case ACOSH: d = tn_rsqrt(tn_sub_scalar(tn_square(x), 1)); break;
        case ATANH: d = tn_reciprocal(tn_rsub_scalar(tn_square(x), 1)); break;
        case SIGMOID: { tn_tensor *s = tn__saved_output(n, x); d = tn_mul(s, tn_rsub_scalar(s, 1)); break; }
        case GELU: { /* Phi(x) + x phi(x) */
            if (tn__grad_disabled && tn__one_pass_grad(g, x)) {
                gin[0] = tn__grad_binary("gelu backward", GELU_BACKWARD, g, x, 0);   /* one pass */
                return 0;
            }
            tn_tensor *cdf = tn_mul_scalar(tn_add_scalar(tn_erf(tn_mul_scalar(x, 0.70710678118654752440)), 1), 0.5);
            tn_tensor *pdf = tn_mul_scalar(tn_exp(tn_mul_scalar(tn_square(x), -0.5)), 0.39894228040143267794);
            d = tn_add(cdf, tn_mul(x, pdf));
            break;
        }
        case GELU_TANH: { /* 0.5(1+t) + 0.5 x (1-t^2) k (1 + 3c x^2), t = tanh(k(x + c x^3)) */
            if (tn__grad_disabled && tn__one_pass_grad(g, x)) {
                gin[0] = tn__grad_binary("gelu backward", GELU_TANH_BACKWARD, g, x, 0);
                return 0;
            }
            const double k = 0.79788456080286535588, c = 0.044715;
            tn_tensor *x2 = tn_square(x);
            tn_tensor *t = tn_tanh(tn_mul_scalar(tn_add(x, tn_mul_scalar(tn_mul(x2, x), c)), k));
            tn_tensor *left = tn_mul_scalar(tn_add_scalar(t, 1), 0.5);
            tn_tensor *right = tn_mul(tn_mul_scalar(tn_mul(x, tn_rsub_scalar(tn_square(t), 1)), 0.5 * k), tn_add_scalar(tn_mul_scalar(x2, 3 * c), 1));
            d = tn_add(left, right);
            break;
        }
        case SILU: { tn_tensor *s = tn_sigmoid(x); d = tn_mul(s, tn_add_scalar(tn_mul(x, tn_rsub_scalar(s, 1)), 1)); break; }
        case SOFTPLUS: { /* sigmoid(beta x) below the threshold, 1 above */
            tn_tensor *z = tn_mul_scalar(x, n->d[0]);
            d = tn_where(tn_gt_scalar(z, n->d[1]), tn_ones_like(g), tn_sigmoid(z));
            break;
        }
        case LEAKY_RELU: d = tn_where(tn_gt_scalar(x, 0), tn_ones_like(g), tn_full_like(g, n->d[0])); break;
        case ELU: { /* scale (x > 0), else scale alpha input_scale exp(x input_scale) */
            tn_tensor *neg = tn_mul_scalar(tn_exp(tn_mul_scalar(x, n->d[2])), n->d[0] * n->d[1] * n->d[2]);
            d = tn_where(tn_le_scalar(x, 0), neg, tn_full_like(g, n->d[1]));   /* a NaN x takes the scale, as PyTorch */
            break;
        }
        case HARDTANH: /* hardtanh_backward: 0 where x <= min or x >= max (a NaN x passes g) */
            d = tn__mask_as(tn_logical_not(tn_logical_or(tn_le_scalar(x, n->d[0]), tn_ge_scalar(x, n->d[1]))), g);
            break;
        case MISH: { /* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x) */
            tn_tensor *t = tn_tanh(tn_softplus(x));
            d = tn_add(t, tn_mul(tn_mul(x, tn_sigmoid(x)), tn_rsub_scalar(tn_square(t), 1)));
            break;
        }
        case HARDSWISH: /* 0 below -3, x/3 + 1/2 up to 3, 1 above */
            d = tn_where(tn_lt_scalar(x, -3), tn_zeros_like(g), tn_where(tn_le_scalar(x, 3), tn_add_scalar(tn_div_scalar(x, 3), 0.5), tn_ones_like(g)));
            break;
        case HARDSIGMOID: d = tn_mul_scalar(tn__mask_as(tn_logical_and(tn_gt_scalar(x, -3), tn_lt_scalar(x, 3)), g), 1.0 / 6); break;
        case ERF: d = tn_mul_scalar(tn_exp(tn_neg(tn_square(x))), 1.12837916709551257390); break;

        case ERFC: d = tn_mul_scalar(tn_exp(tn_neg(tn_square(x))), -1.12837916709551257390); break;
        case ERFINV: d = tn_mul_scalar(tn_exp(tn_square(tn_erfinv(x))), 0.88622692545275801365); break;   /* sqrt(pi) / 2 */
        case LGAMMA: d = tn_digamma(x); break;
        case DIGAMMA: d = tn_polygamma(1, x); break;
        case POLYGAMMA: d = tn_polygamma((int64_t)n->d[0] + 1, x); break;
        case I0: d = tn_special_i1(x); break;
        case I0E: d = tn_sub(tn_special_i1e(x), tn_mul(tn_sgn(x), tn_special_i0e(x))); break;
        case I1: case I1E: { /* i0 - i1 / x (scaled: i0e - i1e (sgn x + 1 / x)), 1/2 at 0 */
            tn_tensor *r = n->sub == I1 ? tn_sub(tn_i0(x), tn_div(tn_special_i1(x), x))
                                        : tn_sub(tn_special_i0e(x), tn_mul(tn_special_i1e(x), tn_add(tn_sgn(x), tn_reciprocal(x))));
            d = tn_where(tn_eq_scalar(x, 0), tn_full_like(g, 0.5), r);
            break;
        }
        case SINC: { /* (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at 0 */
            tn_tensor *px = tn_mul_scalar(x, 3.14159265358979323846);
            tn_tensor *r = tn_div(tn_sub(tn_mul(tn_cos(px), px), tn_sin(px)), tn_mul(px, x));
            d = tn_where(tn_eq_scalar(x, 0), tn_zeros_like(g), r);
            break;
        }
        case LOGIT: { /* 1 / (x (1 - x)); outside [eps, 1 - eps] 0, or without eps NaN outside [0, 1] */
            const double eps = n->d[0];
            tn_tensor *r = tn_reciprocal(tn_mul(x, tn_rsub_scalar(x, 1)));
            tn_tensor *out = tn_logical_or(tn_lt_scalar(x, eps < 0 ? 0 : eps), tn_gt_scalar(x, eps < 0 ? 1 : 1 - eps));
            d = tn_where(out, tn_full_like(g, eps < 0 ? NAN : 0), r);
            break;
        }
        case NDTR: d = tn_mul_scalar(tn_exp(tn_mul_scalar(tn_square(x), -0.5)), 0.39894228040143267794); break;   /* the normal pdf */
        case NDTRI: d = tn_mul_scalar(tn_exp(tn_mul_scalar(tn_square(tn_special_ndtri(x)), 0.5)), 2.50662827463100050242); break;
        case LOG_NDTR: d = tn_mul_scalar(tn_exp(tn_sub(tn_mul_scalar(tn_square(x), -0.5), tn_special_log_ndtr(x))), 0.39894228040143267794); break;
        case ERFCX: d = tn_add_scalar(tn_mul_scalar(tn_mul(x, tn_special_erfcx(x)), 2), -1.12837916709551257390); break;   /* 2 x erfcx - 2/sqrt(pi) */
        case ENTR: d = tn_neg(tn_add_scalar(tn_log(x), 1)); break;
        case FREXP_MANTISSA: d = tn_exp2(tn_neg(tn__unary(FREXP_EXPONENT, x, NULL))); break;   /* 1 / 2^exponent */
        case FREXP_EXPONENT: gin[0] = tn_zeros_like(g); return 0;
        case FRAC: gin[0] = g; return 0;
        case NAN_TO_NUM: d = tn__mask_as(tn_isfinite(x), g); break;
        default: return TN__FAIL_INT("autograd: no derivative for %s", tn_unary_op_name((tn_unary_op)n->sub));
        }
        /* complex z: PyTorch's convention, g times the conjugate of f'(z) (a real d is its own) */
        if (d && tn_dtype_is_complex(d->dtype)) d = tn_conj(d);
        gin[0] = d ? tn__grad_binary("tn_mul", MUL, g, d, 1) : NULL;
        return 0;
    }
    case G_BINARY: {
        tn_tensor *a = n->nsaved > 1 ? S[0] : NULL, *b = n->nsaved > 1 ? S[1] : NULL, *ga = NULL, *gb = NULL; /* add/sub save nothing */

        double alpha = n->d[0];
        switch ((tn_binary_op)n->sub) {
        case ADD: ga = g; gb = alpha == 1 ? g : tn_mul_scalar(g, alpha); break;
        case SUB: ga = g; gb = tn_mul_scalar(g, -alpha); break;
        /* tn_conj: the conjugates complex operands take (PyTorch's convention); a real operand is itself */
        case MUL: ga = TN__NEED(0) ? tn_mul(g, tn_conj(b)) : NULL; gb = TN__NEED(1) ? tn_mul(g, tn_conj(a)) : NULL; break;
        case DIV: ga = TN__NEED(0) ? tn_div(g, tn_conj(b)) : NULL; gb = TN__NEED(1) ? tn_neg(tn_div(tn_mul(g, tn_conj(a)), tn_conj(tn_square(b)))) : NULL; break;
        case FLOOR_DIVIDE: ga = tn_zeros_like(g); gb = ga; break;
        case REMAINDER: ga = g; gb = TN__NEED(1) ? tn_neg(tn_mul(g, tn_floor_divide(a, b))) : NULL; break;
        case FMOD: ga = g; gb = TN__NEED(1) ? tn_neg(tn_mul(g, tn_trunc(tn_div(a, b)))) : NULL; break;
        case POW: /* PyTorch masks: d/da is 0 where b == 0; d/db is 0 where a == 0 and b >= 0 (complex: Re b >= 0,
                     and the derivatives conjugated; tn_real and tn_conj of a real tensor are the tensor) */
            if (TN__NEED(0)) ga = tn_where(tn_eq_scalar(b, 0), tn_zeros_like(g), tn_mul(g, tn_conj(tn_mul(b, tn_pow(a, tn_sub_scalar(b, 1))))));
            if (TN__NEED(1)) gb = tn_where(tn_logical_and(tn_eq_scalar(a, 0), tn_ge_scalar(tn_real(b), 0)), tn_zeros_like(g),
                                           tn_mul(g, tn_conj(tn_mul(tn_pow(a, b), tn_log(a)))));
            break;
        case ATAN2: {
            tn_tensor *den = tn_add(tn_square(a), tn_square(b));
            ga = tn_div(tn_mul(g, b), den);
            gb = tn_neg(tn_div(tn_mul(g, a), den));
            break;
        }
        case MAXIMUM: case MINIMUM: { /* where(a == b, g / 2, g) masked to 0 where the other side wins, as PyTorch:
                                          ties split evenly, and a NaN on either side gives g to both */
            tn_tensor *h = tn_where(tn_eq(a, b), tn_mul_scalar(g, 0.5), g), *z = tn_zeros_like(h);
            tn_tensor *la = n->sub == MAXIMUM ? tn_lt(a, b) : tn_gt(a, b), *lb = n->sub == MAXIMUM ? tn_gt(a, b) : tn_lt(a, b);
            ga = tn_where(la, z, h);
            gb = tn_where(lb, z, h);
            break;
        }
        case FMAX: case FMIN: { /* to a where it wins, ties and a NaN b included; else to b */
            tn_tensor *wa = tn__mask_as(tn_logical_or(n->sub == FMAX ? tn_ge(a, b) : tn_le(a, b), tn_isnan(b)), g);
            ga = tn_mul(g, wa);
            gb = tn_mul(g, tn_rsub_scalar(wa, 1));
            break;
        }
        case LOGADDEXP: case LOGADDEXP2: { /* g / (1 + e^(b - a)) and g / (1 + e^(a - b)), base 2 for logaddexp2 */
            tn_tensor *(*ex)(tn_tensor *) = n->sub == LOGADDEXP ? tn_exp : tn_exp2;
            ga = TN__NEED(0) ? tn_div(g, tn_add_scalar(ex(tn_sub(b, a)), 1)) : NULL;
            gb = TN__NEED(1) ? tn_div(g, tn_add_scalar(ex(tn_sub(a, b)), 1)) : NULL;
            break;
        }
        case HYPOT: {
            tn_tensor *r = tn_hypot(a, b);
            ga = TN__NEED(0) ? tn_div(tn_mul(g, a), r) : NULL;
            gb = TN__NEED(1) ? tn_div(tn_mul(g, b), r) : NULL;
            break;
        }
        case XLOGY: case XLOG1PY: { /* g xlogy(a != 0, b) and g a / b (xlog1py: log1p, b + 1) */
            tn_tensor *nz = tn_ne_scalar(a, 0);
            ga = TN__NEED(0) ? tn_mul(g, n->sub == XLOGY ? tn_xlogy(nz, b) : tn_special_xlog1py(nz, b)) : NULL;
            gb = TN__NEED(1) ? tn_div(tn_mul(g, a), n->sub == XLOGY ? b : tn_add_scalar(b, 1)) : NULL;
            break;
        }
        case ZETA: /* d/dq zeta(x, q) = -x zeta(x + 1, q); none for x, as PyTorch */
            if (TN__NEED(0)) return TN__FAIL_INT("autograd: the derivative for 'zeta' is not implemented.");
            gb = tn_mul(g, tn_neg(tn_mul(a, tn_special_zeta(tn_add_scalar(a, 1), b))));
            break;
        case GAMMAINC: case GAMMAINCC: { /* d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) (Q: its negative); none for a */
            if (TN__NEED(0)) return TN__FAIL_INT("autograd: the derivative for '%s: input' is not implemented.", n->sub == GAMMAINC ? "igamma" : "igammac");
            tn_tensor *dp = tn_exp(tn_sub(tn_sub(tn_mul(tn_add_scalar(a, -1), tn_log(b)), b), tn_lgamma(a)));
            gb = tn_mul(g, n->sub == GAMMAINC ? dp : tn_neg(dp));
            break;
        }
        case COPYSIGN: /* copysign(a, b) / a, 0 where a == 0; b gets none */
            ga = TN__NEED(0) ? tn_mul(g, tn_where(tn_eq_scalar(a, 0), tn_zeros_like(g), tn_div(tn_copysign(a, b), a))) : NULL;
            gb = TN__NEED(1) ? tn_zeros_like(g) : NULL;
            break;
        default: return TN__FAIL_INT("autograd: no derivative for %s", tn_binary_op_name((tn_binary_op)n->sub));
        }
        if (TN__NEED(0)) gin[0] = tn__sum_to(ga, &n->in[0]);
        if (TN__NEED(1)) gin[1] = tn__sum_to(gb, &n->in[1]);
        return 0;
    }
    case G_TERNARY: {
        tn_tensor *x = S[0], *y = S[1], *z = S[2], *r[3] = {NULL, NULL, NULL};
        double v = n->d[0];
        switch ((tn_ternary_op)n->sub) {
        case WHERE: {
            tn_tensor *zero = tn_zeros_like(g);
            r[1] = tn_where(x, g, zero);
            r[2] = tn_where(x, zero, g);
            break;
        }
        case LERP: /* start, end, weight (complex: the conjugate derivatives) */
            r[0] = tn_mul(g, tn_conj(tn_rsub_scalar(z, 1)));
            r[1] = tn_mul(g, tn_conj(z));
            r[2] = TN__NEED(2) ? tn_mul(g, tn_conj(tn_sub(y, x))) : NULL;
            break;
        case ADDCMUL:
            r[0] = g;
            r[1] = tn_mul_scalar(tn_mul(g, tn_conj(z)), v);
            r[2] = tn_mul_scalar(tn_mul(g, tn_conj(y)), v);
            break;
        case ADDCDIV:
            r[0] = g;
            r[1] = tn_mul_scalar(tn_div(g, tn_conj(z)), v);
            r[2] = tn_mul_scalar(tn_neg(tn_mul(g, tn_conj(tn_div(y, tn_square(z))))), v);
            break;
        default: return TN__FAIL_INT("autograd: no derivative for ternary op %d", n->sub);
        }
        for (int k = 0; k < 3; k++) if (TN__NEED(k)) gin[k] = tn__sum_to(r[k], &n->in[k]);
        return 0;
    }
    case G_SUM: gin[0] = tn__unreduce(n, g); return 0;
    case G_MEAN: gin[0] = tn_div_scalar(tn__unreduce(n, g), n->d[0]); return 0;
    case G_PROD: { /* product of all the other elements: exclusive cumprods from both ends (exact with zeros) */
        const tn__meta *m = &n->in[0];
        tn_tensor *x = S[0];
        int64_t perm[TN_MAX_DIMS], inv[TN_MAX_DIMS], flat[TN_MAX_DIMS], L = 1;
        int np = 0, nk = 0;
        for (int d = 0; d < m->ndim; d++) if (!n->i[d]) { perm[np++] = d; flat[nk++] = m->shape[d]; }
        for (int d = 0; d < m->ndim; d++) if (n->i[d]) { perm[np++] = d; L = tn__mul_sat(L, m->shape[d]); }
        if (L == 0 || tn__numel(m->shape, m->ndim) == 0) { gin[0] = tn_zeros_like(x); return 0; }   /* (an empty x's L may not fit) */
        flat[nk] = L;
        tn_tensor *xp = tn_reshape(tn_permute(x, perm, m->ndim), flat, nk + 1);
        int64_t one_shape[TN_MAX_DIMS];
        memcpy(one_shape, flat, sizeof one_shape);
        one_shape[nk] = 1;
        int64_t last = -1;
        tn_tensor *ones = tn__own(tn__full_on(one_shape, nk + 1, 1, x->dtype, x->device));
        tn_tensor *lparts[2] = {ones, tn_narrow(tn_cumprod(xp, -1), -1, 0, L - 1)};
        tn_tensor *left = tn_cat(lparts, 2, .dim = -1);
        tn_tensor *rparts[2] = {ones, tn_narrow(tn_cumprod(tn_flip(xp, &last, 1), -1), -1, 0, L - 1)};
        tn_tensor *right = tn_flip(tn_cat(rparts, 2, .dim = -1), &last, 1);
        tn_tensor *gk = tn_reshape(g, one_shape, nk + 1);
        tn_tensor *gp = tn_mul(tn_conj(tn_mul(left, right)), gk);   /* complex: the conjugate derivative */
        int64_t pshape[TN_MAX_DIMS];
        for (int d = 0; d < m->ndim; d++) pshape[d] = m->shape[perm[d]];
        for (int d = 0; d < m->ndim; d++) inv[perm[d]] = d;
        gin[0] = tn_permute(tn_reshape(gp, pshape, m->ndim), inv, m->ndim);
        return 0;
    }
    case G_AMAX: case G_AMIN: { /* evenly over the tied extremes */
        const tn__meta *m = &n->in[0];
        int64_t k[TN_MAX_DIMS];
        for (int d = 0; d < m->ndim; d++) k[d] = n->i[d] ? 1 : m->shape[d];
        tn_tensor *r = tn_reshape(S[1], k, m->ndim), *eq = tn_eq(S[0], r);
        if (n->d[0]) eq = tn_logical_or(eq, tn_logical_and(tn_isnan(S[0]), tn_isnan(r)));   /* max()/min(): over the NaNs */
        tn_tensor *mask = tn__mask_as(eq, g);
        int64_t dims[TN_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < m->ndim; d++) if (n->i[d]) dims[nd++] = d;
        tn_tensor *count = nd ? tn_sum_dims(mask, dims, nd, .keepdim = true) : mask;
        gin[0] = tn_div(tn_mul(tn__unreduce(n, g), mask), count);
        return 0;
    }
    case G_CLAMP: { /* clamp_backward / clamp_backward_min_max: ties go to x, NaN x gets 0, and min > max gives all to max */
        tn_tensor *x = S[0], *lo = S[1], *hi = S[2], *z = tn_zeros_like(g);
        if (TN__NEED(0)) {
            tn_tensor *in = lo && hi ? tn_logical_and(tn_ge(x, lo), tn_le(x, hi)) : lo ? tn_ge(x, lo) : tn_le(x, hi);
            gin[0] = tn__sum_to(tn_where(in, g, z), &n->in[0]);
        }
        if (lo && TN__NEED(1)) {
            tn_tensor *below = tn_lt(x, lo);
            if (hi) below = tn_logical_and(below, tn_lt(lo, hi));
            gin[1] = tn__sum_to(tn_where(below, g, z), &n->in[1]);
        }
        if (hi && TN__NEED(2)) {
            tn_tensor *above = tn_gt(x, hi);
            if (lo) above = tn_logical_or(above, tn_lt(hi, lo));
            gin[2] = tn__sum_to(tn_where(above, g, z), &n->in[2]);
        }
        return 0;
    }
    case G_MEDIAN: { /* evenly over the elements equal to the result, or over the NaNs when it is NaN (evenly_distribute_backward) */
        tn_tensor *x = S[0], *r = S[1];
        tn_tensor *mask = tn__mask_as(tn_logical_or(tn_eq(x, r), tn_logical_and(tn_isnan(x), tn_isnan(r))), g);
        gin[0] = tn_mul(mask, tn_div(g, tn_sum(mask)));
        return 0;
    }
    case G_MAX_DIM: case G_MIN_DIM: case G_SORT: {
        const tn__meta *m = &n->in[0];
        if (m->ndim == 0) { gin[0] = tn_reshape(g, NULL, 0); return 0; }
        int64_t dim = n->i[0];
        tn_tensor *gk = g, *ik = S[0];
        if (n->op != G_SORT && !n->i[1]) { gk = tn_unsqueeze(g, dim); ik = tn_unsqueeze(S[0], dim); }
        gin[0] = tn_scatter_add(tn__zeros_meta(m, g->dtype), dim, ik, gk);
        return 0;
    }
    case G_CUMSUM: {
        int64_t dim = n->i[0];
        if (n->in[0].ndim == 0) { gin[0] = g; return 0; }
        gin[0] = tn_flip(tn_cumsum(tn_flip(g, &dim, 1), dim), &dim, 1);
        return 0;
    }
    case G_CUMPROD: {   /* complex: the conjugates of x and out give conj(d out / d x) */
        int64_t dim = n->i[0];
        const bool cx = tn_is_complex(S[0]);
        tn_tensor *x = cx ? tn_conj(S[0]) : S[0];
        if (n->in[0].ndim == 0) { gin[0] = g; return 0; }
        if (tn_item(tn_any(tn_eq_scalar(x, 0))) == 0) { /* no zeros: reverse cumsum of g*out, over x */
            tn_tensor *out = tn__saved_output(n, S[1]);
            if (cx) out = tn_conj(out);
            gin[0] = tn_div(tn_flip(tn_cumsum(tn_flip(tn_mul(g, out), &dim, 1), dim), &dim, 1), x);
            return 0;
        }
        /* zeros: d out_j / d x_i = prod_{k <= j, k != i} x_k, from the cumprod of x with x_i
           replaced by 1 (an [.., L, L] product per lane; PyTorch also goes quadratic here) */
        int64_t L = n->in[0].shape[dim];
        tn_tensor *xl = tn_transpose(x, dim, -1), *gl = tn_transpose(g, dim, -1);
        tn_tensor *eye = tn_to(tn_eye(L, -1, TN_BOOL), x->device);
        tn_tensor *rep = tn_where(eye, tn_ones(NULL, 0, x->dtype), tn_unsqueeze(xl, -2));
        int64_t LL[2] = {L, L}, last = -1;
        tn_tensor *upper = tn__triu(tn__own(tn__full_on(LL, 2, 1, TN_BOOL, x->device)), 0); /* [i][j]: j >= i */
        tn_tensor *P = tn_mul(tn_cumprod(rep, -1), tn__mask_as(upper, g));
        gin[0] = tn_transpose(tn_sum_dims(tn_mul(P, tn_unsqueeze(gl, -2)), &last, 1), dim, -1);

        return 0;
    }
    case G_LOGCUMSUMEXP: { /* PyTorch's: g's positive and negative parts, each through a reversed logcumsumexp in log space */
        int64_t dim = n->i[0];
        if (n->in[0].ndim == 0 || tn_numel(g) == 0) { gin[0] = g; return 0; }
        tn_tensor *x = S[0], *y = tn__saved_output(n, S[1]);
        tn_tensor *lowest = tn_full_like(g, -tn__finfo_max(g->dtype)), *la = tn_log(tn_abs(g)), *part[2];
        for (int k = 0; k < 2; k++) {
            tn_tensor *lg = tn_where(k ? tn_lt_scalar(g, 0) : tn_gt_scalar(g, 0), la, lowest);
            part[k] = tn_exp(tn_add(tn_flip(tn_logcumsumexp(tn_flip(tn_sub(lg, y), &dim, 1), dim), &dim, 1), x));
        }
        gin[0] = tn_sub(part[0], part[1]);
        return 0;
    }
    case G_SOFTMAX: { /* y (g - sum(g y)), y the saved result */
        int64_t dim = n->i[0];
        tn_tensor *y = tn__saved_output(n, S[0]);
        gin[0] = tn_mul(y, tn_sub(g, tn_sum_dims(tn_mul(g, y), &dim, 1, .keepdim = true)));
        return 0;
    }
    case G_LOG_SOFTMAX: { /* g - softmax * sum(g) */
        int64_t dim = n->i[0];
        tn_tensor *y = tn__saved_output(n, S[0]);
        gin[0] = tn_sub(g, tn_mul(tn_exp(y), tn_sum_dims(g, &dim, 1, .keepdim = true)));
        return 0;
    }
    case G_RESHAPE: gin[0] = tn_reshape(g, n->in[0].shape, n->in[0].ndim); return 0;
    case G_PERMUTE: {
        int64_t inv[TN_MAX_DIMS];
        for (int d = 0; d < n->in[0].ndim; d++) inv[n->i[d]] = d;
        gin[0] = tn_permute(g, inv, n->in[0].ndim);
        return 0;
    }
    case G_EXPAND: gin[0] = tn__sum_to(g, &n->in[0]); return 0;
    case G_SLICE: gin[0] = tn__slice_scatter(g, &n->in[0], n->i[0], n->i[1], n->i[2]); return 0;
    case G_SELECT: gin[0] = tn__slice_scatter(tn_unsqueeze(g, n->i[0]), &n->in[0], n->i[0], n->i[1], 1); return 0;
    case G_DIAGONAL: {   /* the gradient on the diagonal, zeros elsewhere */
        const tn__meta *m = &n->in[0];
        int64_t perm[TN_MAX_DIMS];
        tn__diag_perm(m->ndim, (int)n->i[0], (int)n->i[1], perm);
        gin[0] = tn_permute(tn__diag_place(g, m->shape[n->i[0]], m->shape[n->i[1]], n->i[2]), perm, m->ndim);
        return 0;
    }
    case G_AS_STRIDED: {   /* S[0], S[1]: the input's and the output's storage positions */
        const tn__meta *m = &n->in[0];
        int64_t npos = n->i[0], flat = -1;
        if (tn_numel(g) == 0 || npos <= 0 || n->nsaved < 2) { gin[0] = tn__zeros_meta(m, g->dtype); return 0; }
        tn_tensor *ii = tn_reshape(S[0], &flat, 1), *io = tn_reshape(S[1], &flat, 1);
        tn_tensor *pos = tn_scatter_add(tn__own(tn__full_on(&npos, 1, 0, g->dtype, g->device)), 0, io, tn_reshape(g, &flat, 1));
        tn_tensor *cnt = tn_scatter_add(tn__own(tn__full_on(&npos, 1, 0, g->dtype, g->device)), 0, ii, tn_ones_like(tn_to_dtype(ii, g->dtype)));
        gin[0] = tn_reshape(tn_div(tn_gather(pos, 0, ii), tn_gather(cnt, 0, ii)), m->shape, m->ndim);
        return 0;
    }
    case G_SLICE_SCATTER: {
        int64_t dim = n->i[0], len = n->in[0].shape[dim];
        gin[0] = tn_slice(g, dim, n->i[1], n->i[1] + (len ? (len - 1) * n->i[2] + 1 : 0), n->i[2]);
        return 0;
    }
    case G_UNFOLD: { /* windows add back into the positions they came from */
        const tn__meta *m = &n->in[0];
        if (m->ndim == 0) { gin[0] = tn_reshape(tn_sum(g), NULL, 0); return 0; }
        if (tn_numel(g) == 0) { gin[0] = tn__zeros_meta(m, g->dtype); return 0; }   /* (and nw * size below may not fit) */
        int64_t dim = n->i[0], size = n->i[1], step = n->i[2], nw = g->shape[dim];
        int64_t perm[TN_MAX_DIMS + 1], merged[TN_MAX_DIMS];
        int np = 0, nm = 0;
        for (int d = 0; d < g->ndim - 1; d++) {
            perm[np++] = d;
            if (d == dim) perm[np++] = g->ndim - 1;
        }
        for (int d = 0; d < m->ndim; d++) merged[nm++] = d == dim ? tn__mul_sat(nw, size) : m->shape[d];   /* fits: g's elements */
        tn_tensor *gm = tn_reshape(tn_permute(g, perm, g->ndim), merged, nm);
        int64_t flat = -1;
        tn_tensor *idx = tn_reshape(tn_add(tn_unsqueeze(tn_mul_scalar(tn_arange(0, (double)nw, 1, TN_I64), (double)step), 1),
                                           tn_arange(0, (double)size, 1, TN_I64)), &flat, 1);
        idx = tn_to(idx, g->device);
        tn_tensor *ix[TN_MAX_DIMS] = {NULL};
        ix[dim] = idx;
        gin[0] = tn_index_put(tn__zeros_meta(m, g->dtype), ix, (int)dim + 1, gm, .accumulate = true);
        return 0;
    }
    case G_FLIP: gin[0] = tn_flip(g, n->i, n->ni); return 0;
    case G_PAD: {
        int64_t neg[2 * TN_MAX_DIMS];
        for (int k = 0; k < n->ni; k++) neg[k] = -n->i[k];
        gin[0] = tn_pad(g, neg, n->ni);
        return 0;
    }
    case G_COPY: case G_TO: gin[0] = g; return 0;
    case G_INDEX_SELECT: {
        tn_tensor *ix[TN_MAX_DIMS] = {NULL};
        if (n->in[0].ndim == 0) { gin[0] = tn_reshape(tn_sum(g), NULL, 0); return 0; }
        int64_t flat = -1;
        ix[n->i[0]] = tn_reshape(S[0], &flat, 1); /* a 0-d index kept its dim (size 1) in the result */
        gin[0] = tn_index_put(tn__zeros_meta(&n->in[0], g->dtype), ix, (int)n->i[0] + 1, g, .accumulate = true);

        return 0;
    }
    case G_GATHER: gin[0] = tn_scatter_add(tn__zeros_meta(&n->in[0], g->dtype), n->i[0], S[0], g); return 0;
    case G_SCATTER:
        if (TN__NEED(0)) gin[0] = tn_scatter(g, n->i[0], S[0], tn__zeros_meta(&n->in[1], g->dtype));
        if (TN__NEED(1)) gin[1] = tn_gather(g, n->i[0], S[0]);
        return 0;
    case G_SCATTER_ADD:
        if (TN__NEED(0)) gin[0] = g;
        if (TN__NEED(1)) gin[1] = tn_gather(g, n->i[0], S[0]);
        return 0;
    case G_SCATTER_REDUCE: { /* PyTorch's scatter_reduce_backward; saved: index, self, src, result */
        if (n->i[2]) return TN__FAIL_INT("autograd: the derivative for scatter with reduce='add' or 'multiply' is not implemented (as PyTorch); use scatter_reduce");
        const int64_t dim = n->i[0];
        const bool include_self = n->i[1] != 0;
        tn_tensor *index = S[0], *self = S[1], *src = S[2], *result = tn__saved_output(n, S[3]), *gs = NULL, *gsrc = NULL;
        switch (n->sub) {
        case 0: /* sum */
            gs = g;
            gsrc = tn_gather(g, dim, index);
            break;
        case 1: { /* prod: the product of the others, with zeros handled exactly */
            tn_tensor *one = tn_ones_like(self), *self_zero = tn_eq_scalar(self, 0);
            tn_tensor *masked_self = tn_where(self_zero, one, self);
            gs = tn_div(tn_mul(g, tn_scatter_reduce(masked_self, dim, index, src, "prod", .include_self = include_self)), masked_self);
            tn_tensor *src_zero = tn_eq_scalar(src, 0);
            tn_tensor *src_num_zeros = tn_gather(tn_scatter_add(tn_zeros_like(self), dim, index, tn__mask_as(src_zero, self)), dim, index);
            tn_tensor *src_single_zero = tn_logical_and(src_zero, tn_eq_scalar(src_num_zeros, 1));
            tn_tensor *masked_src_result = tn_scatter_reduce(self, dim, index, tn_where(src_single_zero, tn_ones_like(src), src), "prod", .include_self = include_self);
            gsrc = tn_where(src_single_zero, tn_gather(tn_mul(g, masked_src_result), dim, index),
                            tn_div(tn_gather(tn_mul(g, result), dim, index), tn_where(src_zero, tn_ones_like(src), src)));
            break;
        }
        case 2: { /* mean: over the count of values combined */
            tn_tensor *N = tn_scatter_add(include_self ? tn_ones_like(g) : tn_zeros_like(g), dim, index, tn_ones_like(src));
            N = N ? tn_where(tn_eq_scalar(N, 0), tn_ones_like(N), N) : NULL;
            gs = tn_div(g, N);
            gsrc = tn_div(tn_gather(g, dim, index), tn_gather(N, dim, index));
            break;
        }
        default: { /* amax, amin: evenly over the values equal to the result */
            tn_tensor *value = tn_gather(result, dim, index);
            tn_tensor *self_is = tn__mask_as(tn_eq(self, result), g), *src_is = tn__mask_as(tn_eq(src, value), g);
            tn_tensor *dist = tn_div(g, tn_scatter_add(self_is, dim, index, src_is));
            gs = tn_mul(self_is, dist);
            gsrc = tn_mul(src_is, tn_gather(dist, dim, index));
            break;
        }
        }
        if (!include_self && gs) gs = tn_scatter(gs, dim, index, tn_zeros_like(tn_gather(gs, dim, index)));   /* self's scattered-to values were left out */
        if (TN__NEED(0)) gin[0] = gs;
        if (TN__NEED(1)) gin[1] = gsrc;
        return 0;
    }
    case G_INDEX: case G_INDEX_PUT: {
        tn_tensor *ix[TN_MAX_DIMS] = {NULL};
        int s = 0; /* saved: the non-NULL index tensors, in order */
        for (int k = 0; k < n->ni; k++) ix[k] = n->i[k] ? S[s++] : NULL;
        if (n->op == G_INDEX) { gin[0] = tn_index_put(tn__zeros_meta(&n->in[0], g->dtype), ix, n->ni, g, .accumulate = true); return 0; }
        if (TN__NEED(0)) gin[0] = n->d[0] != 0 ? g : tn_index_put(g, ix, n->ni, tn__own(tn__full_on(NULL, 0, 0, g->dtype, g->device)));
        if (TN__NEED(1)) gin[1] = tn__sum_to(tn_index(g, ix, n->ni), &n->in[1]);
        return 0;
    }
    case G_CAT: {
        int64_t off = 0, dim = n->i[0];
        for (int k = 0; k < n->nin; k++) {
            int64_t len = n->in[k].ndim == 1 && n->in[k].shape[0] == 0 && g->ndim != 1 ? -1 : n->in[k].shape[dim];
            if (len < 0) continue; /* a legacy empty input */
            if (TN__NEED(k)) gin[k] = tn_narrow(g, dim, off, len);
            off += len;
        }
        return 0;
    }
    case G_MM:   /* complex: the conjugate transposes (g b^H, a^H g) */
        if (TN__NEED(0)) gin[0] = tn_mm(g, tn_conj(tn_t(S[1])));
        if (TN__NEED(1)) gin[1] = tn__mm_mat2_grad(tn_conj(S[0]), S[1], g);
        return 0;
    case G_BMM:
        if (TN__NEED(0)) gin[0] = tn_bmm(g, tn_conj(tn_transpose(S[1], 1, 2)));
        if (TN__NEED(1)) gin[1] = tn_bmm(tn_conj(tn_transpose(S[0], 1, 2)), g);
        return 0;
    case G_ADDMM: case G_BADDBMM: {   /* complex: the conjugate transposes, as G_MM */
        double beta = n->d[0], alpha = n->d[1];
        bool b3 = n->op == G_BADDBMM;
        if (!b3 && TN__NEED(0) && TN__NEED(2) && beta == 1 && alpha == 1) {   /* the weight's and the bias's gradients in one product */
            const int rc = tn__addmm_grads_fused(S[0], S[1], g, &n->in[0], &gin[2], &gin[0]);
            if (rc < 0) return -1;
            if (rc == 0) {
                if (TN__NEED(1)) gin[1] = tn_mm(g, tn_conj(tn_t(S[1])));
                return 0;
            }
        }
        if (TN__NEED(0)) gin[0] = tn__sum_to(beta == 1 ? g : tn_mul_scalar(g, beta), &n->in[0]);
        if (TN__NEED(1)) gin[1] = tn__scaled(b3 ? tn_bmm(g, tn_conj(tn_transpose(S[1], 1, 2))) : tn_mm(g, tn_conj(tn_t(S[1]))), alpha);
        if (TN__NEED(2)) gin[2] = tn__scaled(b3 ? tn_bmm(tn_conj(tn_transpose(S[0], 1, 2)), g) : tn__mm_mat2_grad(tn_conj(S[0]), S[1], g), alpha);
        return 0;
    }
    case G_MV:
        if (TN__NEED(0)) gin[0] = tn_outer(g, tn_conj(S[1]));
        if (TN__NEED(1)) gin[1] = tn_mv(tn_conj(tn_t(S[0])), g);
        return 0;
    case G_DOT:
        if (TN__NEED(0)) gin[0] = tn_mul(g, tn_conj(S[1]));
        if (TN__NEED(1)) gin[1] = tn_mul(g, tn_conj(S[0]));
        return 0;
    case G_COPY_SLICES: case G_BASE_VIEW: { /* first order only: the region is cut out with raw views */
        int nd = (int)n->i[0];
        const tn__meta *bm = n->op == G_COPY_SLICES ? &n->out : &n->in[0];
        tn_tensor *gb = n->op == G_COPY_SLICES ? tn_contiguous(g) : tn__own(tn__full_on(bm->shape, bm->ndim, 0, g->dtype, g->device));
        if (!gb) return -1;
        tn_tensor reg = tn__shallow(gb);
        reg.ndim = nd;
        for (int d = 0; d < nd; d++) { reg.shape[d] = n->i[1 + d]; reg.strides[d] = n->i[1 + nd + d]; }
        reg.offset = gb->offset + n->i[1 + 2 * nd];
        if (n->op == G_BASE_VIEW) { gin[0] = gb; return tn__copy(&reg, g); }
        if (TN__NEED(1)) gin[1] = tn__own(tn__copy_as(&reg, g->dtype, g->device));
        if (TN__NEED(0)) {
            tn_tensor *old = tn__own(tn__copy_as(gb, g->dtype, g->device));
            if (!old) return -1;
            reg = tn__shallow(old);
            reg.ndim = nd;
            for (int d = 0; d < nd; d++) { reg.shape[d] = n->i[1 + d]; reg.strides[d] = n->i[1 + nd + d]; }
            reg.offset = old->offset + n->i[1 + 2 * nd];
            if (tn__backend(old->device)->fill(&reg, 0)) return -1;
            gin[0] = old;
        }
        return 0;
    }
    case G_CUSTOM: {
        n->unpacked = S;
        int rc = n->custom_bw(n, g, gin, n->nin, n->custom_user);
        n->unpacked = NULL;
        for (int k = 0; k < n->nin && rc == 0; k++) { /* a gradient must have its input's shape, or broadcast from it (then it is summed, as PyTorch) */
            if (!gin[k] || !TN__NEED(k) || (gin[k]->ndim == n->in[k].ndim && !memcmp(gin[k]->shape, n->in[k].shape, (size_t)gin[k]->ndim * sizeof(int64_t)))) continue;
            int64_t bs[TN_MAX_DIMS];
            int nb = tn__broadcast(gin[k]->shape, gin[k]->ndim, n->in[k].shape, n->in[k].ndim, bs);
            if (nb == gin[k]->ndim && !memcmp(bs, gin[k]->shape, (size_t)nb * sizeof(int64_t))) gin[k] = tn__sum_to(gin[k], &n->in[k]);
            else rc = TN__FAIL_INT("%s: backward returned an invalid gradient at index %d: got %s but expected shape compatible with %s",
                                   n->name ? n->name : "custom op", k, TN__SHAPE(gin[k]), tn__shape_str(n->in[k].shape, n->in[k].ndim));
        }
        return rc;
    }
    default: return TN__FAIL_INT("autograd: no backward for node %s", tn__gop_names[n->op]);
    }
#undef TN__NEED
}
