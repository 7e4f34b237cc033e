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

/* c = alpha * a @ b + beta * (input broadcast), a/b 2-d or 3-d of one dtype. Untracked. */
static tn_tensor *tn__gemm_op(const char *fn, tn_tensor *a, tn_tensor *b, tn_tensor *input, double beta, double alpha) {
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
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_mm", "self", a, 2) || tn__need_ndim("tn_mm", "mat2", b, 2)) return NULL;
    return tn__mm("tn_mm", a, b);
}
TNDEF tn_tensor *tn_bmm(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_bmm", "batch1", a, 3) || tn__need_ndim("tn_bmm", "batch2", b, 3)) return NULL;
    return tn__own(tn__gemm_record(G_BMM, NULL, a, b, 0, 1, tn__gemm_op("tn_bmm", a, b, NULL, 0, 1)));
}
TNDEF tn_tensor *tn_addmm(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, double beta, double alpha) {
    TN__CHECK_NULL(input, m1, m2);
    if (tn__need_ndim("tn_addmm", "mat1", m1, 2) || tn__need_ndim("tn_addmm", "mat2", m2, 2)) return NULL;
    if (input->dtype != m1->dtype) return (tn_tensor *)tn__error("tn_addmm: self and mat1 must have the same dtype, got %s and %s", tn_dtype_name(input->dtype), tn_dtype_name(m1->dtype));
    return tn__own(tn__gemm_record(G_ADDMM, input, m1, m2, beta, alpha, tn__gemm_op("tn_addmm", m1, m2, input, beta, alpha)));
}
TNDEF tn_tensor *tn_baddbmm(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, double beta, double alpha) {
    TN__CHECK_NULL(input, b1, b2);
    if (tn__need_ndim("tn_baddbmm", "batch1", b1, 3) || tn__need_ndim("tn_baddbmm", "batch2", b2, 3)) return NULL;
    if (input->dtype != b1->dtype) return (tn_tensor *)tn__error("tn_baddbmm: self and batch1 must have the same dtype, got %s and %s", tn_dtype_name(input->dtype), tn_dtype_name(b1->dtype));
    return tn__own(tn__gemm_record(G_BADDBMM, input, b1, b2, beta, alpha, tn__gemm_op("tn_baddbmm", b1, b2, input, beta, alpha)));
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
TNDEF tn_tensor *tn_matmul(tn_tensor *a, tn_tensor *b) { return TN__AS("tn_matmul", tn__matmul_impl(a, b)); }
