#ifdef TENSOR_CBLAS
/* A strided matrix as BLAS sees it: row-major (trans = false) or column-major. */
static bool tn__blas_layout(int64_t rs, int64_t cs, int64_t rows, int64_t cols, bool *trans, int64_t *ld) {
    if (cs == 1 && rs >= TN__MAX(1, cols)) { *trans = false; *ld = rs; return true; }
    if (rs == 1 && cs >= TN__MAX(1, rows)) { *trans = true; *ld = cs; return true; }
    return false;
}
#endif

#define TN__DEFINE_NAIVE_MM(T, S, U) \
    static void tn__mm_naive_##S(int64_t M, int64_t N, int64_t K, const T *A, int64_t rsa, int64_t csa, \
                                 const T *B, int64_t rsb, int64_t csb, T *C, int64_t rsc, int64_t csc, double alpha, double beta) { \
        for (int64_t i = 0; i < M; i++) \
            for (int64_t j = 0; j < N; j++) { \
                U acc = 0; \
                for (int64_t k = 0; k < K; k++) acc += (U)A[i * rsa + k * csa] * (U)B[k * rsb + j * csb]; \
                T *c = &C[i * rsc + j * csc]; \
                *c = (T)((U)(int64_t)alpha * acc + (beta == 0 ? (U)0 : (U)(int64_t)beta * (U)*c)); \
            } }
TN__DEFINE_NAIVE_MM(int32_t, i32, uint32_t)
TN__DEFINE_NAIVE_MM(int64_t, i64, uint64_t)
TN__DEFINE_NAIVE_MM(uint8_t, u8, uint8_t)
TN__DEFINE_NAIVE_MM(int8_t, i8, uint32_t)    /* through uint32_t: wraps, where C's int promotion could overflow */
TN__DEFINE_NAIVE_MM(int16_t, i16, uint32_t)

static int tn__cpu_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double alpha, double beta) {
    int64_t B = c->shape[0], M = c->shape[1], N = c->shape[2], K = a->shape[2];
    size_t es = tn_dtype_size(c->dtype);
    char *pa = (char *)tn_data_ptr(a), *pb = (char *)tn_data_ptr(b), *pc = (char *)tn_data_ptr(c);
    for (int64_t i = 0; i < B; i++) {
        char *A = pa + (size_t)(i * a->strides[0]) * es, *Bm = pb + (size_t)(i * b->strides[0]) * es, *C = pc + (size_t)(i * c->strides[0]) * es;
        int rc = 0;
        switch (c->dtype) {
        case TN_F32:
#ifdef TENSOR_CBLAS
        {
            bool ta, tb, tc; int64_t lda, ldb, ldc;
            if (M && N && K && tn__blas_layout(a->strides[1], a->strides[2], M, K, &ta, &lda) && tn__blas_layout(b->strides[1], b->strides[2], K, N, &tb, &ldb) &&
                tn__blas_layout(c->strides[1], c->strides[2], M, N, &tc, &ldc) && !tc) {
                cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                            (float)alpha, (const float *)A, (int)lda, (const float *)Bm, (int)ldb, (float)beta, (float *)C, (int)ldc);
                break;
            }
        }
#endif
            rc = tn__gemm_f32(M, N, K, (float)alpha, (const float *)A, a->strides[1], a->strides[2], (const float *)Bm, b->strides[1], b->strides[2],
                              (float)beta, (float *)C, c->strides[1], c->strides[2]);
            break;
        case TN_F64:
#ifdef TENSOR_CBLAS
        {
            bool ta, tb, tc; int64_t lda, ldb, ldc;
            if (M && N && K && tn__blas_layout(a->strides[1], a->strides[2], M, K, &ta, &lda) && tn__blas_layout(b->strides[1], b->strides[2], K, N, &tb, &ldb) &&
                tn__blas_layout(c->strides[1], c->strides[2], M, N, &tc, &ldc) && !tc) {
                cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                            alpha, (const double *)A, (int)lda, (const double *)Bm, (int)ldb, beta, (double *)C, (int)ldc);
                break;
            }
        }
#endif
            rc = tn__gemm_f64(M, N, K, alpha, (const double *)A, a->strides[1], a->strides[2], (const double *)Bm, b->strides[1], b->strides[2],
                              beta, (double *)C, c->strides[1], c->strides[2]);
            break;
        case TN_I32: tn__mm_naive_i32(M, N, K, (const int32_t *)A, a->strides[1], a->strides[2], (const int32_t *)Bm, b->strides[1], b->strides[2], (int32_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_I64: tn__mm_naive_i64(M, N, K, (const int64_t *)A, a->strides[1], a->strides[2], (const int64_t *)Bm, b->strides[1], b->strides[2], (int64_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_U8: tn__mm_naive_u8(M, N, K, (const uint8_t *)A, a->strides[1], a->strides[2], (const uint8_t *)Bm, b->strides[1], b->strides[2], (uint8_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_I8: tn__mm_naive_i8(M, N, K, (const int8_t *)A, a->strides[1], a->strides[2], (const int8_t *)Bm, b->strides[1], b->strides[2], (int8_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_I16: tn__mm_naive_i16(M, N, K, (const int16_t *)A, a->strides[1], a->strides[2], (const int16_t *)Bm, b->strides[1], b->strides[2], (int16_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_C64: case TN_C128: {
            /* four real GEMMs over the parts (floats 2k and 2k + 1 of element k: strides double):
               Cr = alpha (Ar Br - Ai Bi) + beta Cr, Ci = alpha (Ar Bi + Ai Br) + beta Ci */
            const int64_t ra = 2 * a->strides[1], ca = 2 * a->strides[2], rb = 2 * b->strides[1], cb = 2 * b->strides[2], rc_ = 2 * c->strides[1], cc = 2 * c->strides[2];
            if (c->dtype == TN_C64) {
                const float *ar = (const float *)A, *ai = ar + 1, *br = (const float *)Bm, *bi = br + 1;
                float *cr = (float *)C, *ci = cr + 1;
                rc = tn__gemm_f32(M, N, K, (float)alpha, ar, ra, ca, br, rb, cb, (float)beta, cr, rc_, cc)
                  || tn__gemm_f32(M, N, K, (float)-alpha, ai, ra, ca, bi, rb, cb, 1.0f, cr, rc_, cc)
                  || tn__gemm_f32(M, N, K, (float)alpha, ar, ra, ca, bi, rb, cb, (float)beta, ci, rc_, cc)
                  || tn__gemm_f32(M, N, K, (float)alpha, ai, ra, ca, br, rb, cb, 1.0f, ci, rc_, cc);
            } else {
                const double *ar = (const double *)A, *ai = ar + 1, *br = (const double *)Bm, *bi = br + 1;
                double *cr = (double *)C, *ci = cr + 1;
                rc = tn__gemm_f64(M, N, K, alpha, ar, ra, ca, br, rb, cb, beta, cr, rc_, cc)
                  || tn__gemm_f64(M, N, K, -alpha, ai, ra, ca, bi, rb, cb, 1.0, cr, rc_, cc)
                  || tn__gemm_f64(M, N, K, alpha, ar, ra, ca, bi, rb, cb, beta, ci, rc_, cc)
                  || tn__gemm_f64(M, N, K, alpha, ai, ra, ca, br, rb, cb, 1.0, ci, rc_, cc);
            }
            break;
        }
        default: return TN__FAIL_INT("matmul: not implemented for dtype %s", tn_dtype_name(c->dtype));
        }
        if (rc) return TN__FAIL_INT("matmul: out of memory for the packing buffers");
    }
    return 0;
}

/* A 2-d (or batched 3-d) operand as a transient 3-d view. */
static tn_tensor tn__as3d(tn_tensor *t) {
    tn_tensor v = tn__shallow(t);
    if (t->ndim == 2) {
        v.ndim = 3;
        v.shape[0] = 1; v.shape[1] = t->shape[0]; v.shape[2] = t->shape[1];
        v.strides[0] = 0; v.strides[1] = t->strides[0]; v.strides[2] = t->strides[1];
    }
    return v;
}

/* c (new, [M, N]) = act(alpha * a @ b + beta * bias) in one GEMM, the bias (NULL: none) and
   the activation (TN__EPI_*) applied in its epilogue: 0, -1 on error, 1 when declined (not
   float32/float64 on the CPU, or a bias that is not one row or one column broadcast over c:
   the caller copies it into c first). The bits of the copy-then-GEMM path when alpha is 1.
   On a device, its table's matmul_ep where it has one (cuBLASLt's epilogues on the GPU): an
   activation it has no form of (erf-GELU, SiLU) is left to the caller, *act set to NONE. */
static int tn__gemm_epilogue(tn_tensor *c, const tn_tensor *a, const tn_tensor *b, const tn_tensor *bias, double beta, double alpha, int *act) {
    if (c->device != TN_CPU) {   /* the bias unscaled; the entry declines the rest (tn__matmul_ep_declines), counting them */
        const tn_backend *be = tn__backend(c->device);
        if (*act != TN__EPI_RELU && *act != TN__EPI_GELU_TANH) *act = TN__EPI_NONE;   /* (the bias gradients are derivatives.c's) */
        if (!be->matmul_ep || (bias && beta != 1) || (!bias && !*act)) return 1;
        return be->matmul_ep(c, (tn_tensor *)a, (tn_tensor *)b, (tn_tensor *)bias, alpha, *act);
    }
    const int act_ = *act;
#ifdef TENSOR_CBLAS
    if (bias || act_) return 1;   /* BLAS has no epilogue: the copy path */
#endif
    if (c->device != TN_CPU || (c->dtype != TN_F32 && c->dtype != TN_F64) || a->ndim != 2 || b->ndim != 2 || a->device != TN_CPU || b->device != TN_CPU) return 1;
    const int64_t M = c->shape[0], N = c->shape[1], K = a->shape[1];
    tn__gemm_epi ep = {NULL, 0, beta, 0, act_};
    if (bias) {   /* [N], [1, N], [M, 1], [1, 1], [1], 0-d */
        if (bias->device != TN_CPU || bias->dtype != c->dtype || bias->ndim > 2) return 1;
        const int64_t r = bias->ndim == 2 ? bias->shape[0] : 1, k = bias->ndim >= 1 ? bias->shape[bias->ndim - 1] : 1;
        if (r == 1 && (k == N || k == 1)) { ep.per_row = 0; ep.bias_stride = k == 1 ? 0 : bias->strides[bias->ndim - 1]; }
        else if (r == M && k == 1) { ep.per_row = 1; ep.bias_stride = r == 1 ? 0 : bias->strides[0]; }
        else return 1;
        ep.bias = tn_data_ptr(bias);
    }
    const int rc = c->dtype == TN_F32
        ? tn__gemm_ep_f32(M, N, K, (float)alpha, (const float *)tn_data_ptr(a), a->strides[0], a->strides[1], (const float *)tn_data_ptr(b), b->strides[0], b->strides[1],
                          0.0f, (float *)tn_data_ptr(c), c->strides[0], c->strides[1], &ep)
        : tn__gemm_ep_f64(M, N, K, alpha, (const double *)tn_data_ptr(a), a->strides[0], a->strides[1], (const double *)tn_data_ptr(b), b->strides[0], b->strides[1],
                          0.0, (double *)tn_data_ptr(c), c->strides[0], c->strides[1], &ep);
    return rc ? TN__FAIL_INT("matmul: out of memory for the packing buffers") : 0;
}

/* c = act(alpha * a @ b + beta * (input broadcast)), a/b 2-d or 3-d of one dtype. Untracked.
   act (TN__EPI_*, 0: none) only where *applied comes back true (a 2-d float product on the
   CPU: the GEMM's epilogue); else the caller applies it. */
static tn_tensor *tn__gemm_op_act(const char *fn, tn_tensor *a, tn_tensor *b, tn_tensor *input, double beta, double alpha, int act, bool *applied);
static tn_tensor *tn__gemm_op(const char *fn, tn_tensor *a, tn_tensor *b, tn_tensor *input, double beta, double alpha) {
    return tn__gemm_op_act(fn, a, b, input, beta, alpha, TN__EPI_NONE, NULL);
}
static tn_tensor *tn__gemm_op_act(const char *fn, tn_tensor *a, tn_tensor *b, tn_tensor *input, double beta, double alpha, int act, bool *applied) {
    if (applied) *applied = false;
    if (tn__check_cpu_dtype(fn, a) || tn__check_same_device(fn, a, b)) return NULL;
    if (a->dtype != b->dtype)
        return (tn_tensor *)tn__error("%s: expected both operands to have the same dtype, but got %s and %s", fn, tn_dtype_name(a->dtype), tn_dtype_name(b->dtype));
    if (a->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: not implemented for bool tensors", fn);
    bool batched = a->ndim == 3;
    int64_t k1 = a->shape[a->ndim - 1], k2 = b->shape[b->ndim - 2];
    if (k1 != k2 || (batched && a->shape[0] != b->shape[0]))
        return (tn_tensor *)tn__error("%s: shapes %s and %s cannot be multiplied (%lld != %lld%s)", fn, TN__SHAPE(a), TN__SHAPE(b),
                                      (long long)(k1 != k2 ? k1 : a->shape[0]), (long long)(k1 != k2 ? k2 : b->shape[0]), k1 != k2 ? "" : " in the batch dim");
    int64_t shape[3];
    int nd = 0;
    if (batched) shape[nd++] = a->shape[0];
    shape[nd++] = a->shape[a->ndim - 2];
    shape[nd++] = b->shape[b->ndim - 1];
    tn_tensor *out = tn__new(a->dtype, a->device, shape, nd);
    if (!out) return NULL;
    if (!batched && ((input && beta != 0) || act)) {   /* the bias and activation in the GEMM's epilogue */
        int done = act;   /* the activation the epilogue takes */
        const int rc = tn__gemm_epilogue(out, a, b, input && beta != 0 ? input : NULL, beta, alpha, &done);
        if (rc < 0) { tn_release(out); return NULL; }
        if (rc == 0) { if (applied) *applied = done != TN__EPI_NONE; return out; }
    }
    if (input && beta != 0) {
        if (tn__copy_into(fn, out, input)) { tn_release(out); return NULL; }
    } else beta = 0;
    tn_tensor a3 = tn__as3d(a), b3 = tn__as3d(b), c3 = tn__as3d(out);
    if (tn__backend(out->device)->matmul(&c3, &a3, &b3, alpha, beta)) { tn_release(out); return NULL; }
    return out;
}

static int tn__need_ndim(const char *fn, const char *what, tn_tensor *t, int ndim) {
    if (t->ndim != ndim) return TN__FAIL_INT("%s: %s must be a %d-d tensor, got shape %s", fn, what, ndim, TN__SHAPE(t));
    return 0;
}

/* A product's node: the two operands saved (inputs: [input,] a, b). */
static tn_tensor *tn__gemm_record(tn__gop op, tn_tensor *input, tn_tensor *a, tn_tensor *b, double beta, double alpha, tn_tensor *out) {
    tn_tensor *ins[3] = {input, a, b};
    tn_node *node = out ? (input ? tn__node_new(op, 0, ins, 3) : tn__node_new(op, 0, ins + 1, 2)) : NULL;
    if (node) {
        tn__node_save(node, a);
        tn__node_save(node, b);
        node->d[0] = beta;
        node->d[1] = alpha;
    }
    return tn__node_attach(node, out);
}
static tn_tensor *tn__mm(const char *fn, tn_tensor *a, tn_tensor *b) {
    return tn__own(tn__gemm_record(G_MM, NULL, a, b, 0, 1, tn__gemm_op(fn, a, b, NULL, 0, 1)));
}

TNDEF tn_tensor *tn_mm(tn_tensor *a, tn_tensor *b) {
    TN__AUTOCAST(TN__AC_LOWER, tn_mm(ac_[0], ac_[1]), a, b);
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_mm", "self", a, 2) || tn__need_ndim("tn_mm", "mat2", b, 2)) return NULL;
    return tn__mm("tn_mm", a, b);
}
TNDEF tn_tensor *tn_bmm(tn_tensor *a, tn_tensor *b) {
    TN__AUTOCAST(TN__AC_LOWER, tn_bmm(ac_[0], ac_[1]), a, b);
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_bmm", "batch1", a, 3) || tn__need_ndim("tn_bmm", "batch2", b, 3)) return NULL;
    return tn__own(tn__gemm_record(G_BMM, NULL, a, b, 0, 1, tn__gemm_op("tn_bmm", a, b, NULL, 0, 1)));
}
/* tn_addmm's body, positional for the library's own callers */
static tn_tensor *tn__addmm(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, double beta, double alpha) {
    TN__AUTOCAST(TN__AC_LOWER, tn__addmm(ac_[0], ac_[1], ac_[2], beta, alpha), input, m1, m2);
    TN__CHECK_NULL(input, m1, m2);
    if (tn__need_ndim("tn_addmm", "mat1", m1, 2) || tn__need_ndim("tn_addmm", "mat2", m2, 2)) return NULL;
    if (input->dtype != m1->dtype) return (tn_tensor *)tn__error("tn_addmm: self and mat1 must have the same dtype, got %s and %s", tn_dtype_name(input->dtype), tn_dtype_name(m1->dtype));
    return tn__own(tn__gemm_record(G_ADDMM, input, m1, m2, beta, alpha, tn__gemm_op("tn_addmm", m1, m2, input, beta, alpha)));
}
/* addmm, then activation act (TN__EPI_*) in the GEMM's epilogue where it can (under no_grad,
   no autocast, a 2-d float product on the CPU, or on a device whose matmul_ep takes it:
   *applied true), else plain addmm (the graph replay's linear + activation, src/jit/trace.c). */
static tn_tensor *tn__addmm_act(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, double beta, double alpha, int act, bool *applied) {
    *applied = false;
    if (!tn__grad_disabled || !input || !m1 || !m2 || (!tn__ac_suspended && tn__ac_now[m1->device].enabled) || m1->ndim != 2 || m2->ndim != 2 || input->dtype != m1->dtype)
        return tn__addmm(input, m1, m2, beta, alpha);
    return tn__own(tn__gemm_op_act("tn_addmm", m1, m2, input, beta, alpha, act, applied));
}
TNDEF tn_tensor *tn_addmm_opts(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, tn_addmm_fn_opts o) { return tn__addmm(input, m1, m2, o.beta, o.alpha); }
TNDEF tn_tensor *tn_addmm_str(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, const char *options) {
    TN__KW_STR(tn_addmm_fn_opts, addmm, "tn_addmm", options, tn_addmm_opts(input, m1, m2, o));
}
TNDEF tn_tensor *tn_baddbmm_opts(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, tn_addmm_fn_opts o) {
    const double beta = o.beta, alpha = o.alpha;
    TN__AUTOCAST(TN__AC_LOWER, tn_baddbmm_opts(ac_[0], ac_[1], ac_[2], o), input, b1, b2);
    TN__CHECK_NULL(input, b1, b2);
    if (tn__need_ndim("tn_baddbmm", "batch1", b1, 3) || tn__need_ndim("tn_baddbmm", "batch2", b2, 3)) return NULL;
    if (input->dtype != b1->dtype) return (tn_tensor *)tn__error("tn_baddbmm: self and batch1 must have the same dtype, got %s and %s", tn_dtype_name(input->dtype), tn_dtype_name(b1->dtype));
    return tn__own(tn__gemm_record(G_BADDBMM, input, b1, b2, beta, alpha, tn__gemm_op("tn_baddbmm", b1, b2, input, beta, alpha)));
}
TNDEF tn_tensor *tn_baddbmm_str(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, const char *options) {
    TN__KW_STR(tn_addmm_fn_opts, addmm, "tn_baddbmm", options, tn_baddbmm_opts(input, b1, b2, o));
}

static tn_tensor *tn__mv(const char *fn, tn_tensor *a, tn_tensor *v) {
    TN__CHECK_NULL(a, v);
    if (tn__need_ndim(fn, "self", a, 2) || tn__need_ndim(fn, "vec", v, 1)) return NULL;
    if (a->shape[1] != v->shape[0])
        return (tn_tensor *)tn__error("%s: shapes %s and %s cannot be multiplied (%lld != %lld)", fn, TN__SHAPE(a), TN__SHAPE(v), (long long)a->shape[1], (long long)v->shape[0]);
    tn_tensor col = tn__shallow(v); /* [k] as a [k, 1] column */
    col.ndim = 2; col.shape[1] = 1; col.strides[1] = 1;
    tn_tensor *r = tn__gemm_op(fn, a, &col, NULL, 0, 1);
    if (r) r->ndim = 1;
    return tn__own(tn__gemm_record(G_MV, NULL, a, v, 0, 1, r));
}
TNDEF tn_tensor *tn_mv(tn_tensor *a, tn_tensor *v) { return TN__AS("tn_mv", tn__mv("tn_mv", a, v)); }

static tn_tensor *tn__dot(const char *fn, tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim(fn, "self", a, 1) || tn__need_ndim(fn, "other", b, 1)) return NULL;
    if (a->shape[0] != b->shape[0])
        return (tn_tensor *)tn__error("%s: inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of elements", fn, (long long)a->shape[0], (long long)b->shape[0]);
    tn_tensor row = tn__shallow(a), col = tn__shallow(b);
    row.ndim = 2; row.shape[0] = 1; row.shape[1] = a->shape[0]; row.strides[0] = 0; row.strides[1] = a->strides[0];
    col.ndim = 2; col.shape[1] = 1; col.strides[1] = 0;
    tn_tensor *r = tn__gemm_op(fn, &row, &col, NULL, 0, 1);
    if (r) r->ndim = 0;
    return tn__own(tn__gemm_record(G_DOT, NULL, a, b, 0, 1, r));
}
TNDEF tn_tensor *tn_dot(tn_tensor *a, tn_tensor *b) { return tn__dot("tn_dot", a, b); }

static tn_tensor *tn__outer_impl(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_outer", "self", a, 1) || tn__need_ndim("tn_outer", "vec2", b, 1)) return NULL;
    tn_scope_begin();
    tn_tensor *r = tn_keep(tn_mul(tn_unsqueeze(a, 1), b));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_outer(tn_tensor *a, tn_tensor *b) { return tn__grad_name(TN__AS("tn_outer", tn__outer_impl(a, b)), "OuterBackward0"); }

static tn_tensor *tn__matmul_impl(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (a->ndim == 0 || b->ndim == 0)
        return (tn_tensor *)tn__error("tn_matmul: both arguments need at least 1 dimension, got %d-d and %d-d tensors", a->ndim, b->ndim);
    if (a->ndim == 1 && b->ndim == 1) return tn__dot("tn_matmul", a, b);
    if (a->ndim == 2 && b->ndim == 1) return tn__mv("tn_matmul", a, b);
    if (a->ndim == 2 && b->ndim == 2) return tn__mm("tn_matmul", a, b);
    if (a->ndim >= 3 && b->ndim <= 2) {   /* PyTorch's fold: a's batch dims into its rows, one GEMM (and one per gradient) */
        const int64_t k = a->shape[a->ndim - 1], k2 = b->shape[0];
        if (k != k2) return (tn_tensor *)tn__error("tn_matmul: shapes %s and %s cannot be multiplied (%lld != %lld)", TN__SHAPE(a), TN__SHAPE(b), (long long)k, (long long)k2);
        int64_t rs[TN_MAX_DIMS], a2[2] = {tn__numel(a->shape, a->ndim - 1), k};
        memcpy(rs, a->shape, (size_t)(a->ndim - 1) * sizeof(int64_t));
        if (b->ndim == 2) rs[a->ndim - 1] = b->shape[1];
        tn_scope_begin();
        tn_tensor *a2d = tn_reshape(a, a2, 2), *p = !a2d ? NULL : b->ndim == 2 ? tn__mm("tn_matmul", a2d, b) : tn__mv("tn_matmul", a2d, b);
        tn_tensor *r = p ? tn_reshape(p, rs, a->ndim - (b->ndim == 1)) : NULL;
        return tn__scope_return(tn__grad_name(r, "UnsafeViewBackward0"));
    }
    tn_scope_begin();
    tn_tensor *x = a->ndim == 1 ? tn_unsqueeze(a, 0) : a, *y = b->ndim == 1 ? tn_unsqueeze(b, 1) : b, *r = NULL;
    int64_t n = x->shape[x->ndim - 2], k = x->shape[x->ndim - 1], k2 = y->shape[y->ndim - 2], m = y->shape[y->ndim - 1];
    int64_t bshape[TN_MAX_DIMS], xs[TN_MAX_DIMS], ys[TN_MAX_DIMS], rs[TN_MAX_DIMS];
    int bnd = tn__broadcast(x->shape, x->ndim - 2, y->shape, y->ndim - 2, bshape);
    if (k != k2) tn__error("tn_matmul: shapes %s and %s cannot be multiplied (%lld != %lld)", TN__SHAPE(a), TN__SHAPE(b), (long long)k, (long long)k2);
    else if (bnd < 0) tn__error("tn_matmul: batch dims of %s and %s cannot be broadcast", TN__SHAPE(a), TN__SHAPE(b));
    else if (bnd + 2 > TN_MAX_DIMS) tn__error("tn_matmul: too many dims");
    else {
        int64_t batch = tn__numel(bshape, bnd), x3[3] = {batch, n, k}, y3[3] = {batch, k, m};
        memcpy(xs, bshape, (size_t)bnd * sizeof(int64_t)); xs[bnd] = n; xs[bnd + 1] = k;
        memcpy(ys, bshape, (size_t)bnd * sizeof(int64_t)); ys[bnd] = k; ys[bnd + 1] = m;
        tn_tensor *p = tn_bmm(tn_reshape(tn_expand(x, xs, bnd + 2), x3, 3), tn_reshape(tn_expand(y, ys, bnd + 2), y3, 3));
        int nd = 0;
        for (int i = 0; i < bnd; i++) rs[nd++] = bshape[i];
        if (a->ndim > 1) rs[nd++] = n;
        if (b->ndim > 1) rs[nd++] = m;
        r = p ? tn_reshape(p, rs, nd) : NULL;
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_matmul(tn_tensor *a, tn_tensor *b) {
    TN__AUTOCAST(TN__AC_LOWER, tn_matmul(ac_[0], ac_[1]), a, b);
    return TN__AS("tn_matmul", tn__matmul_impl(a, b));
}

/* ---- composites of the above: their gradients are those of the ops they are made of ---- */
static tn_tensor *tn__trace_impl(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->ndim != 2) return (tn_tensor *)tn__error("tn_trace: expected a matrix, but got tensor with dim %d", t->ndim);
    tn_scope_begin();
    return tn__scope_return(tn_sum(tn__diagonal(t, 0, 0, 1)));
}
TNDEF tn_tensor *tn_trace(tn_tensor *t) { return tn__grad_name(TN__AS("tn_trace", tn__trace_impl(t)), "TraceBackward0"); }

static tn_tensor *tn__addmv_impl(tn_tensor *input, tn_tensor *mat, tn_tensor *vec, double beta, double alpha) {
    TN__CHECK_NULL(input, mat, vec);
    if (tn__need_ndim("tn_addmv", "mat", mat, 2) || tn__need_ndim("tn_addmv", "vec", vec, 1)) return NULL;
    if (input->ndim > 1) return (tn_tensor *)tn__error("tn_addmv: input of shape %s does not broadcast to the result's [%lld]", TN__SHAPE(input), (long long)mat->shape[0]);
    tn_scope_begin();   /* as addmm of the column vec: input [n] broadcasts as [n, 1] */
    return tn__scope_return(tn_squeeze_dim(tn__addmm(input->ndim ? tn_unsqueeze(input, -1) : input, mat, tn_unsqueeze(vec, -1), beta, alpha), -1));
}
TNDEF tn_tensor *tn_addmv_opts(tn_tensor *input, tn_tensor *mat, tn_tensor *vec, tn_addmm_fn_opts o) {
    return tn__grad_name(TN__AS("tn_addmv", tn__addmv_impl(input, mat, vec, o.beta, o.alpha)), "AddmvBackward0");
}
TNDEF tn_tensor *tn_addmv_str(tn_tensor *input, tn_tensor *mat, tn_tensor *vec, const char *options) {
    TN__KW_STR(tn_addmm_fn_opts, addmm, "tn_addmv", options, tn_addmv_opts(input, mat, vec, o));
}
static tn_tensor *tn__addr_impl(tn_tensor *input, tn_tensor *v1, tn_tensor *v2, double beta, double alpha) {
    TN__CHECK_NULL(input, v1, v2);
    if (tn__need_ndim("tn_addr", "vec1", v1, 1) || tn__need_ndim("tn_addr", "vec2", v2, 1)) return NULL;
    int64_t shape[2] = {v1->shape[0], v2->shape[0]}, b[TN_MAX_DIMS];
    if (tn__broadcast(input->shape, input->ndim, shape, 2, b) != 2 || b[0] != shape[0] || b[1] != shape[1])
        return (tn_tensor *)tn__error("tn_addr: input of shape %s does not broadcast to the result's [%lld, %lld]", TN__SHAPE(input), (long long)shape[0], (long long)shape[1]);
    tn_scope_begin();   /* as PyTorch: alpha * outer always (0 * NaN is NaN), input only where beta != 0 */
    tn_tensor *r = tn_mul_scalar(tn_outer(v1, v2), alpha);
    return tn__scope_return(beta == 0 ? r : tn_add(r, tn_mul_scalar(input, beta)));
}
TNDEF tn_tensor *tn_addr_opts(tn_tensor *input, tn_tensor *vec1, tn_tensor *vec2, tn_addmm_fn_opts o) {
    return tn__grad_name(TN__AS("tn_addr", tn__addr_impl(input, vec1, vec2, o.beta, o.alpha)), "AddrBackward0");
}
TNDEF tn_tensor *tn_addr_str(tn_tensor *input, tn_tensor *vec1, tn_tensor *vec2, const char *options) {
    TN__KW_STR(tn_addmm_fn_opts, addmm, "tn_addr", options, tn_addr_opts(input, vec1, vec2, o));
}
static tn_tensor *tn__addbmm_impl(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, double beta, double alpha) {
    TN__CHECK_NULL(input, b1, b2);
    if (tn__need_ndim("tn_addbmm", "batch1", b1, 3) || tn__need_ndim("tn_addbmm", "batch2", b2, 3)) return NULL;
    if (b1->shape[0] != b2->shape[0])
        return (tn_tensor *)tn__error("tn_addbmm: batch1 and batch2 must have same number of batches, got %lld and %lld", (long long)b1->shape[0], (long long)b2->shape[0]);
    if (b1->shape[2] != b2->shape[1])
        return (tn_tensor *)tn__error("tn_addbmm: incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)", (long long)b1->shape[1], (long long)b1->shape[2], (long long)b2->shape[1], (long long)b2->shape[2]);
    int64_t bk, perm[3] = {1, 0, 2}, s1[2], s2[2];
    if (!tn__mul_ok(b1->shape[0], b1->shape[2], &bk)) return (tn_tensor *)tn__error("tn_addbmm: sizes too large");
    s1[0] = b1->shape[1]; s1[1] = bk; s2[0] = bk; s2[1] = b2->shape[2];
    tn_scope_begin();   /* the sum of the batch's products is one product over [n, B*k] @ [B*k, m] */
    return tn__scope_return(tn__addmm(input, tn_reshape(tn_permute(b1, perm, 3), s1, 2), tn_reshape(b2, s2, 2), beta, alpha));
}
TNDEF tn_tensor *tn_addbmm_opts(tn_tensor *input, tn_tensor *batch1, tn_tensor *batch2, tn_addmm_fn_opts o) {
    TN__AUTOCAST(TN__AC_LOWER, tn_addbmm_opts(ac_[0], ac_[1], ac_[2], o), input, batch1, batch2);
    return tn__grad_name(TN__AS("tn_addbmm", tn__addbmm_impl(input, batch1, batch2, o.beta, o.alpha)), "AddbmmBackward0");
}
TNDEF tn_tensor *tn_addbmm_str(tn_tensor *input, tn_tensor *batch1, tn_tensor *batch2, const char *options) {
    TN__KW_STR(tn_addmm_fn_opts, addmm, "tn_addbmm", options, tn_addbmm_opts(input, batch1, batch2, o));
}
TNDEF tn_tensor *tn_vdot(tn_tensor *a, tn_tensor *b) {
    if (a && tn_dtype_is_complex(a->dtype)) {   /* conj(a) . b; the conjugate's gradient is conj's */
        tn_scope_begin();
        return tn__grad_name(tn__scope_return(tn__dot("tn_vdot", tn_conj(a), b)), "VdotBackward0");
    }
    return tn__grad_name(tn__dot("tn_vdot", a, b), "VdotBackward0");
}

static tn_tensor *tn__kron_impl(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    int nd = TN__MAX(a->ndim, b->ndim);
    if (2 * nd > TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_kron: inputs of %d dims would need %d intermediate dims, more than %d", nd, 2 * nd, TN_MAX_DIMS);
    int64_t sa[TN_MAX_DIMS], sb[TN_MAX_DIMS], sr[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) {   /* a as [a0, 1, a1, 1, ...], b as [1, b0, 1, b1, ...] */
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        sa[2 * i] = ia >= 0 ? a->shape[ia] : 1; sa[2 * i + 1] = 1;
        sb[2 * i] = 1; sb[2 * i + 1] = ib >= 0 ? b->shape[ib] : 1;
        if (!tn__mul_ok(sa[2 * i], sb[2 * i + 1], &sr[i])) return (tn_tensor *)tn__error("tn_kron: sizes of %s and %s are too large", TN__SHAPE(a), TN__SHAPE(b));
    }
    tn_scope_begin();
    return tn__scope_return(tn_reshape(tn_mul(tn_reshape(a, sa, 2 * nd), tn_reshape(b, sb, 2 * nd)), sr, nd));
}
TNDEF tn_tensor *tn_kron(tn_tensor *a, tn_tensor *b) { return tn__grad_name(TN__AS("tn_kron", tn__kron_impl(a, b)), "KronBackward0"); }

/* Contract dims_a of a with dims_b of b; ATen's rule: a size-1 dim contracts with any size by first summing the other. */
static tn_tensor *tn__tensordot_impl(tn_tensor *a, tn_tensor *b, const int64_t *dims_a, const int64_t *dims_b, int n) {
    TN__CHECK_NULL(a, b);
    if (n < 0 || n > TN_MAX_DIMS || (n && (!dims_a || !dims_b))) return (tn_tensor *)tn__error("tn_tensordot: invalid number of dims %d", n);
    if (n > a->ndim || n > b->ndim) return (tn_tensor *)tn__error("tn_tensordot: cannot contract %d dims of tensors of %d and %d dims", n, a->ndim, b->ndim);
    int da[TN_MAX_DIMS], db[TN_MAX_DIMS];
    bool used_a[TN_MAX_DIMS] = {false}, used_b[TN_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        da[i] = tn__wrap_dim("tn_tensordot", dims_a[i], a->ndim);
        db[i] = da[i] < 0 ? -1 : tn__wrap_dim("tn_tensordot", dims_b[i], b->ndim);
        if (da[i] < 0 || db[i] < 0) return NULL;
        if (used_a[da[i]]) return (tn_tensor *)tn__error("tn_tensordot: dim %d appears multiple times in the list of dims", da[i]);
        if (used_b[db[i]]) return (tn_tensor *)tn__error("tn_tensordot: dim %d appears multiple times in the list of dims", db[i]);
        used_a[da[i]] = used_b[db[i]] = true;
        int64_t s1 = a->shape[da[i]], s2 = b->shape[db[i]];
        if (s1 != s2 && s1 != 1 && s2 != 1)
            return (tn_tensor *)tn__error("tn_tensordot: contracted dimensions need to match, but first has size %lld in dim %d and second has size %lld in dim %d",
                                          (long long)s1, da[i], (long long)s2, db[i]);
    }
    tn_scope_begin();
    for (int i = 0; i < n; i++) {
        int64_t s1 = a->shape[da[i]], s2 = b->shape[db[i]], d;
        if (s1 == s2) continue;
        if (s1 == 1) { d = db[i]; b = tn_sum_dims(b, &d, 1, .keepdim = true); }
        else { d = da[i]; a = tn_sum_dims(a, &d, 1, .keepdim = true); }
        if (!a || !b) return tn__scope_return(NULL);
    }
    int64_t pa[TN_MAX_DIMS], pb[TN_MAX_DIMS], rs[2 * TN_MAX_DIMS], fa = 1, fb = 1, k = 1;
    int na = 0, nb = 0, nr = 0;
    for (int d = 0; d < a->ndim; d++) if (!used_a[d]) { pa[na++] = d; rs[nr++] = a->shape[d]; fa = tn__mul_sat(fa, a->shape[d]); }
    for (int i = 0; i < n; i++) { pa[na++] = da[i]; pb[nb++] = db[i]; k = tn__mul_sat(k, a->shape[da[i]]); }
    for (int d = 0; d < b->ndim; d++) if (!used_b[d]) { pb[nb++] = d; rs[nr++] = b->shape[d]; fb = tn__mul_sat(fb, b->shape[d]); }
    if (nr > TN_MAX_DIMS) { tn__error("tn_tensordot: the result would have %d dims, more than %d", nr, TN_MAX_DIMS); return tn__scope_return(NULL); }
    int64_t s1[2] = {fa, k}, s2[2] = {k, fb};
    return tn__scope_return(tn_reshape(tn_mm(tn_reshape(tn_permute(a, pa, a->ndim), s1, 2), tn_reshape(tn_permute(b, pb, b->ndim), s2, 2)), rs, nr));
}
TNDEF tn_tensor *tn_tensordot_opts(tn_tensor *a, tn_tensor *b, tn_tensordot_fn_opts o) {
    TN__CHECK_NULL(a, b);
    if (o.dims_a.n || o.dims_b.n) {
        if (o.dims_a.n != o.dims_b.n)
            return (tn_tensor *)tn__error("tn_tensordot: both dimension lists should have same length, got %d and %d", o.dims_a.n, o.dims_b.n);
        return TN__AS("tn_tensordot", tn__tensordot_impl(a, b, o.dims_a.v, o.dims_b.v, o.dims_a.n));
    }
    /* dims=k: the last k of a with the first k of b (PyTorch's messages) */
    if (o.dims < 0) return (tn_tensor *)tn__error("tn_tensordot: tensordot expects dims >= 0, but got dims=%lld", (long long)o.dims);
    if (o.dims > a->ndim || o.dims > b->ndim)
        return (tn_tensor *)tn__error("tn_tensordot: tensordot expects dims < ndim_a or ndim_b, but got dims=%lld", (long long)o.dims);
    int64_t da[TN_MAX_DIMS], db[TN_MAX_DIMS];
    for (int i = 0; i < (int)o.dims; i++) {
        da[i] = a->ndim - o.dims + i;
        db[i] = i;
    }
    return TN__AS("tn_tensordot", tn__tensordot_impl(a, b, da, db, (int)o.dims));
}
TNDEF tn_tensor *tn_tensordot_str(tn_tensor *a, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_tensordot_fn_opts, tensordot, "tn_tensordot", options, tn_tensordot_opts(a, b, o));
}
static tn_tensor *tn__inner_impl(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (a->ndim == 0 || b->ndim == 0) return tn_mul(a, b);
    if (a->shape[a->ndim - 1] != b->shape[b->ndim - 1])
        return (tn_tensor *)tn__error("tn_inner: inner() the last dimension must match on both input tensors but got shapes %s and %s", TN__SHAPE(a), TN__SHAPE(b));
    const int64_t last = -1;
    return tn__tensordot_impl(a, b, &last, &last, 1);
}
TNDEF tn_tensor *tn_inner(tn_tensor *a, tn_tensor *b) { return TN__AS("tn_inner", tn__inner_impl(a, b)); }

static tn_tensor *tn__cross_impl(tn_tensor *a, tn_tensor *b, int64_t dim) {
    TN__CHECK_NULL(a, b);
    if (a->ndim != b->ndim) return (tn_tensor *)tn__error("tn_cross: inputs must have the same number of dimensions (got %s and %s)", TN__SHAPE(a), TN__SHAPE(b));
    if (a->dtype != b->dtype) return (tn_tensor *)tn__error("tn_cross: expected both inputs to have the same dtype, got %s and %s", tn_dtype_name(a->dtype), tn_dtype_name(b->dtype));
    int64_t shape[TN_MAX_DIMS];
    int nd = tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape);
    if (nd < 0) return (tn_tensor *)tn__error("tn_cross: the shapes %s and %s do not broadcast", TN__SHAPE(a), TN__SHAPE(b));
    int d = tn__wrap_dim("tn_cross", dim, nd);
    if (d < 0) return NULL;
    if (a->shape[d] != 3 || b->shape[d] != 3)
        return (tn_tensor *)tn__error("tn_cross: inputs dimension %lld must have length 3. Got %lld and %lld", (long long)dim, (long long)a->shape[d], (long long)b->shape[d]);
    tn_scope_begin();
    a = tn_expand(a, shape, nd);
    b = tn_expand(b, shape, nd);
    tn_tensor *x[3], *y[3], *r[3];
    for (int i = 0; i < 3; i++) { x[i] = tn_narrow(a, d, i, 1); y[i] = tn_narrow(b, d, i, 1); }
    for (int i = 0; i < 3; i++) r[i] = tn_sub(tn_mul(x[(i + 1) % 3], y[(i + 2) % 3]), tn_mul(x[(i + 2) % 3], y[(i + 1) % 3]));
    return tn__scope_return(tn_cat(r, 3, .dim = d));
}
TNDEF tn_tensor *tn_cross_opts(tn_tensor *a, tn_tensor *b, tn_cross_fn_opts o) {
    TN__CHECK_NULL(a, b);
    int64_t dim = o.dim;
    if (dim == TN_NONE) {   /* torch.cross's dim=None: the first dim of size 3 of the broadcast shape */
        int64_t shape[TN_MAX_DIMS];
        int nd = tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape);
        for (int i = 0; i < nd && dim == TN_NONE; i++)
            if (shape[i] == 3) dim = i;
        if (dim == TN_NONE && nd >= 0) return (tn_tensor *)tn__error("tn_cross: no dimension of size 3 in input (shapes %s and %s)", TN__SHAPE(a), TN__SHAPE(b));
        if (dim == TN_NONE) dim = 0;   /* shapes that do not broadcast: the impl's message */
    }
    return tn__grad_name(TN__AS("tn_cross", tn__cross_impl(a, b, dim)), "LinalgCrossBackward0");
}
TNDEF tn_tensor *tn_cross_str(tn_tensor *a, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_cross_fn_opts, cross, "tn_cross", options, tn_cross_opts(a, b, o));
}

/* ---- einsum ---- */
/* Labels: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (so the implicit output lists capitals
   first, as PyTorch's), the ellipsis' dims 52.. (aligned right across operands). */
#define TN__EIN_NL (52 + TN_MAX_DIMS)
typedef struct { tn_tensor *t; int n; int lab[TN_MAX_DIMS]; } tn__ein;

static int tn__ein_letter(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : -1; }
static char tn__ein_char(int l) { return l < 26 ? (char)('A' + l) : l < 52 ? (char)('a' + l - 26) : '.'; }

/* Sum away the dims of e whose labels keep[] does not want. */
static int tn__ein_reduce(tn__ein *e, const bool *keep) {
    int64_t dims[TN_MAX_DIMS];
    int nd = 0, n = 0;
    for (int i = 0; i < e->n; i++) {
        if (keep[e->lab[i]]) e->lab[n++] = e->lab[i];
        else dims[nd++] = i;
    }
    if (!nd) return 0;
    e->t = tn_sum_dims(e->t, dims, nd);
    e->n = n;
    return e->t ? 0 : -1;
}
/* Permute e so its dims read labels order[0..n) (each present in e). */
static int tn__ein_permute(tn__ein *e, const int *order, int n) {
    int64_t perm[TN_MAX_DIMS];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < e->n; j++) if (e->lab[j] == order[i]) perm[i] = j;
    e->t = tn_permute(e->t, perm, n);
    memcpy(e->lab, order, (size_t)n * sizeof *order);
    return e->t ? 0 : -1;
}

/* Parses eq for the n operands: each operand's dims as labels, the output's labels, every
   label's (broadcast) size. Returns 0, or -1 with the error recorded. */
static int tn__ein_parse(const char *eq, tn_tensor *const *ts, int n, tn__ein *ops, int *out, int *nout, bool *in_out, int64_t *size) {
    const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq);
    int sub[TN__EIN_NL], starts[TN__EIN_NL + 1], width[TN__EIN_NL], nsub = 0, k = 0, nl = 0, ell = -1, ell_nd = 0;
    bool seen[TN__EIN_NL] = {false}, any_ell = false;
    starts[0] = 0;
    for (const char *c = eq;; c++) {   /* the operands' subscripts: a letter's label, or -1 for the ellipsis */
        if (c == end || *c == ',') {
            if (k >= n) return TN__FAIL_INT("tn_einsum: more operands were specified in the equation than provided (%d)", n);
            int nd = ts[k]->ndim;
            if (ell >= 0 && nl > nd)
                return TN__FAIL_INT("tn_einsum: the number of subscripts in the equation (%d) is more than the number of dimensions (%d) for operand %d", nl, nd, k);
            if (ell < 0 && nl != nd)
                return TN__FAIL_INT("tn_einsum: the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d and no ellipsis was given", nl, nd, k);
            if (ell >= 0) ell_nd = TN__MAX(ell_nd, nd - nl);
            width[k] = ell >= 0 ? nd - nl : 0;
            starts[++k] = nsub;
            nl = 0; ell = -1;
            if (c == end) break;
            continue;
        }
        if (*c == ' ') continue;
        if (nsub >= TN__EIN_NL || k >= TN__EIN_NL) return TN__FAIL_INT("tn_einsum: too many subscripts or operands in the equation");
        if (*c == '.') {
            if (c[1] != '.' || c[2] != '.') return TN__FAIL_INT("tn_einsum: found '.' for operand %d that is not part of any ellipsis", k);
            if (ell >= 0) return TN__FAIL_INT("tn_einsum: found '.' for operand %d for which an ellipsis was already found", k);
            ell = nsub;
            any_ell = true;
            sub[nsub++] = -1;
            c += 2;
            continue;
        }
        int l = tn__ein_letter(*c);
        if (l < 0) return TN__FAIL_INT("tn_einsum: invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]", (int)(c - eq));
        sub[nsub++] = l;
        nl++;
    }
    if (k < n) return TN__FAIL_INT("tn_einsum: fewer operands were specified in the equation (%d) than provided (%d)", k, n);
    for (int i = 0; i < n; i++) {   /* each operand's dims as labels */
        int w = width[i], m = 0;
        ops[i].t = ts[i];
        for (int s = starts[i]; s < starts[i + 1]; s++) {
            if (sub[s] >= 0) { ops[i].lab[m++] = sub[s]; continue; }
            for (int j = 0; j < w; j++) ops[i].lab[m++] = 52 + ell_nd - w + j;
        }
        ops[i].n = m;
        for (int j = 0; j < m; j++) seen[ops[i].lab[j]] = true;
    }
    *nout = 0;
    if (arrow) {   /* the output's labels */
        bool out_ell = false;
        for (const char *c = arrow + 2; *c; c++) {
            if (*c == ' ') continue;
            if (*c == '.') {
                if (c[1] != '.' || c[2] != '.') return TN__FAIL_INT("tn_einsum: found '.' for output but it is not part of any ellipsis");
                if (out_ell) return TN__FAIL_INT("tn_einsum: found '.' for output for which an ellipsis was already found");
                out_ell = true;
                for (int j = 0; j < ell_nd; j++) { in_out[52 + j] = true; out[(*nout)++] = 52 + j; }
                c += 2;
                continue;
            }
            int l = tn__ein_letter(*c);
            if (l < 0) return TN__FAIL_INT("tn_einsum: invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]", (int)(c - eq));
            if (in_out[l]) return TN__FAIL_INT("tn_einsum: output subscript %c appears more than once in the output", *c);
            if (!seen[l]) return TN__FAIL_INT("tn_einsum: output subscript %c does not appear in the equation for any input operand", *c);
            if (*nout >= TN__EIN_NL) return TN__FAIL_INT("tn_einsum: too many output subscripts");
            in_out[l] = true;
            out[(*nout)++] = l;
        }
    } else {   /* implicit: the ellipsis' dims, then the letters used once, in label order */
        int total[52] = {0};
        if (any_ell) for (int j = 0; j < ell_nd; j++) { in_out[52 + j] = true; out[(*nout)++] = 52 + j; }
        for (int s = 0; s < nsub; s++) if (sub[s] >= 0) total[sub[s]]++;
        for (int l = 0; l < 52; l++) if (total[l] == 1) { in_out[l] = true; out[(*nout)++] = l; }
    }
    if (*nout > TN_MAX_DIMS) return TN__FAIL_INT("tn_einsum: the output would have %d dims, more than %d", *nout, TN_MAX_DIMS);
    for (int l = 0; l < TN__EIN_NL; l++) size[l] = 1;   /* a label's sizes agree or are 1 (broadcast) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ops[i].n; j++) {
            int l = ops[i].lab[j];
            int64_t s = ops[i].t->shape[j];
            for (int j2 = 0; j2 < j; j2++)
                if (ops[i].lab[j2] == l && ops[i].t->shape[j2] != s)
                    return TN__FAIL_INT("tn_einsum: subscript %c is repeated for operand %d but the sizes don't match, %lld != %lld", tn__ein_char(l), i, (long long)ops[i].t->shape[j2], (long long)s);
            if (s != 1 && size[l] != 1 && size[l] != s)
                return TN__FAIL_INT("tn_einsum: operands do not broadcast: subscript %c has sizes %lld and %lld", tn__ein_char(l), (long long)size[l], (long long)s);
            if (s != 1) size[l] = s;
        }
    return 0;
}

static tn_tensor *tn__ein_contract(tn__ein *ops, int n, const int *out, int nout, const bool *in_out, const int64_t *size);
static tn_tensor *tn__einsum_impl(const char *eq, tn_tensor *const *ts, int n) {
    if (!eq) return (tn_tensor *)tn__error("tn_einsum: equation is NULL");
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("tn_einsum: must provide at least one operand");
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    tn__ein *ops = (tn__ein *)TN_MALLOC((size_t)n * sizeof *ops);
    if (!ops) return (tn_tensor *)tn__error("tn_einsum: out of memory");
    int out[TN__EIN_NL], nout = 0;
    bool in_out[TN__EIN_NL] = {false};
    int64_t size[TN__EIN_NL];
    tn_tensor *r = tn__ein_parse(eq, ts, n, ops, out, &nout, in_out, size) ? NULL : tn__ein_contract(ops, n, out, nout, in_out, size);
    TN_FREE(ops);
    return r;
}
/* Diagonals for labels repeated within an operand, then the operands' products left to
   right, each one bmm over (batch, free, contracted) dims as PyTorch's sumproduct_pair. */
static tn_tensor *tn__ein_contract(tn__ein *ops, int n, const int *out, int nout, const bool *in_out, const int64_t *size) {
    tn_tensor *result = NULL;
    tn_scope_begin();
    /* repeated labels within an operand: their diagonal */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ops[i].n; j++)
            for (int j2 = j + 1; j2 < ops[i].n; j2++)
                if (ops[i].lab[j2] == ops[i].lab[j]) {
                    int l = ops[i].lab[j];
                    ops[i].t = tn__diagonal(ops[i].t, 0, j, j2);
                    memmove(&ops[i].lab[j2], &ops[i].lab[j2 + 1], (size_t)(ops[i].n - j2 - 1) * sizeof(int));
                    memmove(&ops[i].lab[j], &ops[i].lab[j + 1], (size_t)(ops[i].n - j - 2) * sizeof(int));
                    ops[i].lab[ops[i].n - 2] = l;
                    ops[i].n--;
                    j = -1;   /* rescan */
                    break;
                }
    /* left to right: A holds the product so far */
    tn__ein A = ops[0];
    bool keep[TN__EIN_NL];
    for (int i = 1; i <= n; i++) {
        /* labels wanted after this step: the output's and those of the operands still to come */
        for (int l = 0; l < TN__EIN_NL; l++) keep[l] = in_out[l];
        for (int j = i + 1; j < n; j++) for (int d = 0; d < ops[j].n; d++) keep[ops[j].lab[d]] = true;
        if (i == n) {   /* the last operand is in: sum what the output drops, order as the output */
            if (!A.t || tn__ein_reduce(&A, keep) || tn__ein_permute(&A, out, nout)) goto fail;
            /* a label all of whose sizes are 1 here but larger elsewhere cannot happen: every operand is in */
            break;
        }
        tn__ein B = ops[i];
        bool inA[TN__EIN_NL] = {false}, inB[TN__EIN_NL] = {false}, want[TN__EIN_NL];
        for (int d = 0; d < B.n; d++) inB[B.lab[d]] = true;
        for (int l = 0; l < TN__EIN_NL; l++) want[l] = keep[l] || inB[l];
        if (!A.t || !B.t || tn__ein_reduce(&A, want)) goto fail;
        for (int d = 0; d < A.n; d++) inA[A.lab[d]] = true;
        for (int l = 0; l < TN__EIN_NL; l++) want[l] = keep[l] || inA[l];
        if (tn__ein_reduce(&B, want)) goto fail;
        for (int l = 0; l < TN__EIN_NL; l++) inB[l] = false;
        for (int d = 0; d < B.n; d++) inB[B.lab[d]] = true;
        /* batch (both, wanted later), contracted (both, not wanted), free A, free B */
        int ob[TN_MAX_DIMS], oc[TN_MAX_DIMS], ofa[TN_MAX_DIMS], ofb[TN_MAX_DIMS], nbt = 0, nc = 0, nfa = 0, nfb = 0;
        int64_t sb[TN_MAX_DIMS], sfa[TN_MAX_DIMS], sfb[TN_MAX_DIMS];
        for (int d = 0; d < A.n; d++) {
            int l = A.lab[d];
            if (!inB[l]) { sfa[nfa] = A.t->shape[d]; ofa[nfa++] = l; }
            else if (keep[l]) ob[nbt++] = l;
            else oc[nc++] = l;
        }
        for (int d = 0; d < B.n; d++) if (!inA[B.lab[d]]) { sfb[nfb] = B.t->shape[d]; ofb[nfb++] = B.lab[d]; }
        if (nbt + nfa + nfb > TN_MAX_DIMS) { tn__error("tn_einsum: an intermediate product would have more than %d dims", TN_MAX_DIMS); goto fail; }
        /* a contracted label of size 1 on one side: sum the other side first; batch labels broadcast */
        for (int c = 0; c < nc; c++) {
            int l = oc[c];
            int64_t dA = 0, dB = 0;
            for (int d = 0; d < A.n; d++) if (A.lab[d] == l) dA = d;
            for (int d = 0; d < B.n; d++) if (B.lab[d] == l) dB = d;
            if (A.t->shape[dA] == B.t->shape[dB]) continue;
            if (A.t->shape[dA] == 1) B.t = tn_sum_dims(B.t, &dB, 1, .keepdim = true);
            else A.t = tn_sum_dims(A.t, &dA, 1, .keepdim = true);
            if (!A.t || !B.t) goto fail;
        }
        int oa[TN_MAX_DIMS], obb[TN_MAX_DIMS], na = 0, nbb = 0;
        for (int j = 0; j < nbt; j++) { oa[na++] = ob[j]; obb[nbb++] = ob[j]; sb[j] = size[ob[j]]; }
        for (int j = 0; j < nfa; j++) oa[na++] = ofa[j];
        for (int j = 0; j < nc; j++) { oa[na++] = oc[j]; obb[nbb++] = oc[j]; }
        for (int j = 0; j < nfb; j++) obb[nbb++] = ofb[j];
        if (tn__ein_permute(&A, oa, na) || tn__ein_permute(&B, obb, nbb)) goto fail;
        int64_t ea[TN_MAX_DIMS], eb[TN_MAX_DIMS], bn = 1, fa = 1, fb = 1, kc = 1;
        for (int j = 0; j < na; j++) ea[j] = j < nbt ? sb[j] : A.t->shape[j];
        for (int j = 0; j < nbb; j++) eb[j] = j < nbt ? sb[j] : B.t->shape[j];
        for (int j = 0; j < nbt; j++) bn = tn__mul_sat(bn, sb[j]);
        for (int j = 0; j < nfa; j++) fa = tn__mul_sat(fa, sfa[j]);
        for (int j = 0; j < nfb; j++) fb = tn__mul_sat(fb, sfb[j]);
        for (int j = 0; j < nc; j++) kc = tn__mul_sat(kc, A.t->shape[nbt + nfa + j]);
        int64_t s3a[3] = {bn, fa, kc}, s3b[3] = {bn, kc, fb}, rs[TN_MAX_DIMS];
        int nr = 0;
        for (int j = 0; j < nbt; j++) rs[nr++] = sb[j];
        for (int j = 0; j < nfa; j++) rs[nr++] = sfa[j];
        for (int j = 0; j < nfb; j++) rs[nr++] = sfb[j];
        A.t = tn_reshape(tn_bmm(tn_reshape(tn_expand(A.t, ea, na), s3a, 3), tn_reshape(tn_expand(B.t, eb, nbb), s3b, 3)), rs, nr);
        A.n = 0;
        for (int j = 0; j < nbt; j++) A.lab[A.n++] = ob[j];
        for (int j = 0; j < nfa; j++) A.lab[A.n++] = ofa[j];
        for (int j = 0; j < nfb; j++) A.lab[A.n++] = ofb[j];
        if (!A.t) goto fail;
    }
    result = A.t;
fail:
    return tn__scope_return(result);
}
TNDEF tn_tensor *tn_einsum(const char *equation, tn_tensor *const *operands, int n) {
    return TN__AS("tn_einsum", tn__einsum_impl(equation, operands, n));
}

/* ---- distances ---- */
/* The p-norm of d's last dim as PyTorch's cdist/pdist compute it (0: the count of nonzeros). */
static tn_tensor *tn__dist_lastdim(tn_tensor *d, double p) {
    const int64_t last = -1;
    if (p == 0 && d) {   /* a count, with PyTorch's zero gradient: plus 0 * d (d's finite entries) */
        tn_tensor *dd = tn_detach(d);
        tn_tensor *zero = tn_mul_scalar(tn_where(tn_isfinite(dd), d, tn_zeros_like(dd)), 0);
        return tn_add(tn_to_dtype(tn_sum_dims(tn_ne_scalar(dd, 0), &last, 1), d->dtype), tn_sum_dims(zero, &last, 1));
    }
    return tn_norm_dims(d, &last, 1, .p = p);
}
static int tn__dist_check(const char *fn, tn_tensor *t, const char *what, double p) {
    if (!tn_dtype_is_floating(t->dtype)) return TN__FAIL_INT("%s: only supports floating-point dtypes, %s got: %s", fn, what, tn_dtype_name(t->dtype));
    if (!(p >= 0)) return TN__FAIL_INT("%s: only supports non-negative p values, got %g", fn, p);
    return 0;
}
static tn_tensor *tn__cdist_impl(tn_tensor *x1, tn_tensor *x2, double p, int compute_mode) {
    TN__CHECK_NULL(x1, x2);
    if (x1->ndim < 2 || x2->ndim < 2) return (tn_tensor *)tn__error("tn_cdist: only supports at least 2D tensors, X%d got: %dD", x1->ndim < 2 ? 1 : 2, x1->ndim < 2 ? x1->ndim : x2->ndim);
    if (tn__dist_check("tn_cdist", x1, "X1", p) || tn__dist_check("tn_cdist", x2, "X2", p)) return NULL;
    if (x1->dtype != x2->dtype) return (tn_tensor *)tn__error("tn_cdist: X1 and X2 must have the same dtype, got %s and %s", tn_dtype_name(x1->dtype), tn_dtype_name(x2->dtype));
    if (compute_mode < 0 || compute_mode > 2) return (tn_tensor *)tn__error("tn_cdist: %d is not a valid value for compute_mode", compute_mode);
    int64_t m = x1->shape[x1->ndim - 1], r1 = x1->shape[x1->ndim - 2], r2 = x2->shape[x2->ndim - 2];
    if (m != x2->shape[x2->ndim - 1]) return (tn_tensor *)tn__error("tn_cdist: X1 and X2 must have the same number of columns. X1: %lld X2: %lld", (long long)m, (long long)x2->shape[x2->ndim - 1]);
    int64_t batch[TN_MAX_DIMS], s1[TN_MAX_DIMS + 1], s2[TN_MAX_DIMS + 1];
    int nb = tn__broadcast(x1->shape, x1->ndim - 2, x2->shape, x2->ndim - 2, batch);
    if (nb < 0) return (tn_tensor *)tn__error("tn_cdist: the batch dims of %s and %s do not broadcast", TN__SHAPE(x1), TN__SHAPE(x2));
    if (nb + 3 > TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_cdist: too many dims");
    memcpy(s1, batch, (size_t)nb * sizeof *batch); memcpy(s2, batch, (size_t)nb * sizeof *batch);
    s1[nb] = r1; s1[nb + 1] = m; s2[nb] = r2; s2[nb + 1] = m;
    tn_scope_begin();
    tn_tensor *a = tn_expand(x1, s1, nb + 2), *b = tn_expand(x2, s2, nb + 2);
    if (p == 2 && (compute_mode == 1 || (compute_mode == 0 && (r1 > 25 || r2 > 25)))) {
        /* PyTorch's _euclidean_dist: |a|^2 + |b|^2 - 2 a.b by one matmul, clamped at 0 */
        const int64_t last = -1;
        tn_tensor *na = tn_sum_dims(tn_square(a), &last, 1, .keepdim = true), *nbb = tn_sum_dims(tn_square(b), &last, 1, .keepdim = true);
        tn_tensor *pa[3] = {tn_mul_scalar(a, -2), na, tn_ones_like(na)}, *pb[3] = {b, tn_ones_like(nbb), nbb};
        tn_tensor *res = tn_matmul(tn_cat(pa, 3, .dim = -1), tn_transpose(tn_cat(pb, 3, .dim = -1), -1, -2));
        return tn__scope_return(tn_sqrt(tn_clamp_min(res, 0)));
    }
    return tn__scope_return(tn__dist_lastdim(tn_sub(tn_unsqueeze(a, -2), tn_unsqueeze(b, -3)), p));
}
TNDEF tn_tensor *tn_cdist_opts(tn_tensor *x1, tn_tensor *x2, tn_cdist_fn_opts o) {
    return tn__grad_name(TN__AS("tn_cdist", tn__cdist_impl(x1, x2, o.p, o.compute_mode)), "CdistBackward0");
}
TNDEF tn_tensor *tn_cdist_str(tn_tensor *x1, tn_tensor *x2, const char *options) {
    TN__KW_STR(tn_cdist_fn_opts, cdist, "tn_cdist", options, tn_cdist_opts(x1, x2, o));
}
static tn_tensor *tn__pdist_impl(tn_tensor *x, double p) {
    TN__CHECK_NULL(x);
    if (x->ndim != 2) return (tn_tensor *)tn__error("tn_pdist: only supports 2D tensors, got: %dD", x->ndim);
    if (tn__dist_check("tn_pdist", x, "input", p)) return NULL;
    int64_t n = x->shape[0], pairs = n > 1 ? n * (n - 1) / 2 : 0, k = 0;
    int64_t *ij = (int64_t *)TN_MALLOC((size_t)(2 * pairs + 1) * sizeof *ij);
    if (!ij) return (tn_tensor *)tn__error("tn_pdist: out of memory");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) { ij[k] = i; ij[pairs + k] = j; k++; }
    tn_scope_begin();   /* rows i < j in PyTorch's order: (0,1), (0,2), ..., (1,2), ... */
    tn_tensor *ii = tn_to(tn_from_data(ij, &pairs, 1, TN_I64), x->device), *jj = tn_to(tn_from_data(ij + pairs, &pairs, 1, TN_I64), x->device);
    TN_FREE(ij);
    return tn__scope_return(tn__dist_lastdim(tn_sub(tn_index_select(x, 0, ii), tn_index_select(x, 0, jj)), p));
}
TNDEF tn_tensor *tn_pdist_opts(tn_tensor *x, tn_pdist_fn_opts o) { return tn__grad_name(TN__AS("tn_pdist", tn__pdist_impl(x, o.p)), "PdistBackward0"); }
TNDEF tn_tensor *tn_pdist_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_pdist_fn_opts, pdist, "tn_pdist", options, tn_pdist_opts(x, o));
}
static tn_tensor *tn__dist_impl(tn_tensor *a, tn_tensor *b, double p) {
    TN__CHECK_NULL(a, b);
    tn_scope_begin();
    return tn__scope_return(tn_norm(tn_sub(a, b), .p = p));
}
TNDEF tn_tensor *tn_dist_opts(tn_tensor *a, tn_tensor *b, tn_pdist_fn_opts o) { return TN__AS("tn_dist", tn__dist_impl(a, b, o.p)); }
TNDEF tn_tensor *tn_dist_str(tn_tensor *a, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_pdist_fn_opts, pdist, "tn_dist", options, tn_dist_opts(a, b, o));
}
static tn_tensor *tn__normalize_impl(tn_tensor *x, tn_normalize_fn_opts o) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *n = tn_clamp_min(tn_norm_dims(x, &o.dim, 1, .p = o.p, .keepdim = true), o.eps);
    return tn__scope_return(n ? tn_div(x, tn_expand(n, x->shape, x->ndim)) : NULL);
}
TNDEF tn_tensor *tn_normalize_opts(tn_tensor *x, tn_normalize_fn_opts o) { return TN__AS("tn_normalize", tn__normalize_impl(x, o)); }
TNDEF tn_tensor *tn_normalize_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_normalize_fn_opts, normalize, "tn_normalize", options, tn_normalize_opts(x, o));
}

/* ---- covariance ---- */
static tn_tensor *tn__cov_impl(tn_tensor *t, int64_t correction, tn_tensor *fweights, tn_tensor *aweights) {
    TN__CHECK_NULL(t);
    if (t->ndim > 2) return (tn_tensor *)tn__error("tn_cov: expected input to have two or fewer dimensions but got an input with %d dimensions", t->ndim);
    int64_t nobs = t->ndim ? t->shape[t->ndim - 1] : 1;
    tn_tensor *const ws[2] = {fweights, aweights};
    for (int k = 0; k < 2; k++) {
        tn_tensor *w = ws[k];
        const char *name = k ? "aweights" : "fweights";
        if (!w) continue;
        if (w->ndim > 1) return (tn_tensor *)tn__error("tn_cov: expected %s to have one or fewer dimensions but got %s with %d dimensions", name, name, w->ndim);
        if (k == 0 && (tn_dtype_is_floating(w->dtype) || w->dtype == TN_BOOL)) return (tn_tensor *)tn__error("tn_cov: expected fweights to have integral dtype but got fweights with %s dtype", tn_dtype_name(w->dtype));
        if (k == 1 && !tn_dtype_is_floating(w->dtype)) return (tn_tensor *)tn__error("tn_cov: expected aweights to have floating point dtype but got aweights with %s dtype", tn_dtype_name(w->dtype));
        if (tn_numel(w) != nobs) return (tn_tensor *)tn__error("tn_cov: expected %s to have the same numel as there are observations in the input but got %lld != %lld", name, (long long)tn_numel(w), (long long)nobs);
        if (tn__check_same_device("tn_cov", t, w)) return NULL;
        tn_scope_begin();
        tn_tensor *neg = tn_any(tn_lt_scalar(w, 0));
        bool bad = neg && tn_item(neg) != 0;
        tn_scope_end();
        if (bad) return (tn_tensor *)tn__error("tn_cov: %s cannot be negative", name);
    }
    const int64_t row[2] = {1, -1}, obs = 1;
    tn_scope_begin();
    tn_tensor *x = t->ndim < 2 ? tn_reshape(t, row, 2) : t, *w = NULL;
    if (x && !tn_dtype_is_floating(x->dtype) && !tn_is_complex(x)) x = tn_to_dtype(x, TN_F32);   /* the default float */
    if (fweights) w = tn_reshape(fweights, &nobs, 1);
    if (aweights) { tn_tensor *aw = tn_reshape(aweights, &nobs, 1); w = w ? tn_mul(w, aw) : aw; }
    tn_tensor *wsum = w ? tn_sum(w) : tn_scalar_int(nobs);
    tn_tensor *avg = w ? tn_div(tn_sum_dims(tn_mul(x, w), &obs, 1), wsum) : tn_mean_dims(x, &obs, 1);
    tn_tensor *norm;
    if (w && aweights && correction != 0)
        norm = tn_sub(wsum, tn_div(tn_mul_scalar(tn_sum(tn_mul(w, aweights)), (double)correction), wsum));
    else norm = tn_add_scalar(wsum, -(double)correction);
    tn_tensor *neg = norm ? tn_le_scalar(norm, 0) : NULL;   /* PyTorch warns and divides by 0 */
    if (neg) norm = tn_where(neg, tn_zeros_like(norm), norm);
    tn_tensor *xc = tn_sub(x, tn_unsqueeze(avg, 1));
    tn_tensor *c = tn_mm(xc, tn_conj(tn_t(w ? tn_mul(xc, w) : xc)));   /* complex: x x^H */
    c = c ? tn_div(c, tn_to_dtype(norm, c->dtype)) : NULL;
    return tn__scope_return(tn_squeeze(c));
}
TNDEF tn_tensor *tn_cov_opts(tn_tensor *t, tn_cov_fn_opts o) { return TN__AS("tn_cov", tn__cov_impl(t, o.correction, o.fweights, o.aweights)); }
TNDEF tn_tensor *tn_cov_str(tn_tensor *t, const char *options) {
    TN__KW_STR(tn_cov_fn_opts, cov, "tn_cov", options, tn_cov_opts(t, o));
}
static tn_tensor *tn__corrcoef_impl(tn_tensor *t) {
    TN__CHECK_NULL(t);
    tn_scope_begin();
    tn_tensor *c = tn_cov_opts(t, (tn_cov_fn_opts)TN_DEFAULTS(tn_cov_fn_opts));
    if (!c || c->ndim == 0) return tn__scope_return(c ? tn_div(c, c) : NULL);   /* one variable: NaN, or 1 */
    tn_tensor *sd = tn_sqrt(tn_real(tn__diagonal(c, 0, 0, 1)));   /* (complex: the variances are real) */
    c = tn_div(tn_div(c, tn_unsqueeze(sd, 1)), tn_unsqueeze(sd, 0));
    if (c && tn_is_complex(c))   /* each part clipped, as PyTorch */
        return tn__scope_return(tn_complex(tn_clamp(tn_real(c), .min = -1, .max = 1), tn_clamp(tn_imag(c), .min = -1, .max = 1)));
    return tn__scope_return(tn_clamp(c, .min = -1, .max = 1));   /* rounding can leave |c| just past 1 */
}
TNDEF tn_tensor *tn_corrcoef(tn_tensor *t) { return TN__AS("tn_corrcoef", tn__corrcoef_impl(t)); }
