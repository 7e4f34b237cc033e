/* ---- torch.linalg beyond the factorisations: triangular and factored solves, matrix
   functions, norms, products ----
   float32, float64, complex64, complex128 (the triangular, Cholesky and LU solves; the
   matrix exponential is real only so far), CPU, as linalg_factor.c (whose checks, work
   copies and kernels these reuse). Ops with their own kernel (the triangular solve, the matrix
   exponential) record PyTorch's backward formula written in library ops that recompute the
   forward differentiably (double backward works); the rest are composites of differentiable
   library ops, whose gradients are PyTorch's (the same derivative). */

/* ---- the triangular solve (trsm) ---- */
#define TN__LA_NB 64   /* rows of a diagonal block: below it substitution, above it GEMM updates */
/* (tn__la_trsm_small, substitution on one diagonal block: linalg_factor.c, for float64 and float32) */
/* Solves T X = B in place (T n x n row-major, triangular; B n x k row-major), as LAPACK's
   trsm: blocks of TN__LA_NB rows by substitution, the rest of B updated by the GEMM. */
static int tn__la_trsm(const double *a, int64_t n, double *b, int64_t k, bool upper, bool unit) {
    if (n <= TN__LA_NB || k == 0) { tn__la_trsm_small(a, n, b, k, n, k, upper, unit); return 0; }
    const int64_t nblocks = (n + TN__LA_NB - 1) / TN__LA_NB;
    for (int64_t s = 0; s < nblocks; s++) {
        const int64_t blk = upper ? nblocks - 1 - s : s, j0 = blk * TN__LA_NB, nb = TN__MIN(TN__LA_NB, n - j0);
        tn__la_trsm_small(a + j0 * n + j0, n, b + j0 * k, k, nb, k, upper, unit);
        /* lower: the rows below the block lose A[below, block] X_block; upper: the rows above */
        const int64_t r0 = upper ? 0 : j0 + nb, rows = upper ? j0 : n - j0 - nb;
        if (rows > 0 && tn__gemm_f64(rows, k, nb, -1.0, a + r0 * n + j0, n, 1, b + j0 * k, k, 1, 1.0, b + r0 * k, k, 1))
            return -1;
    }
    return 0;
}
/* X with T X = B for T [..., n, n], B [..., n, k] of one batch shape: a float64 (complex:
   complex128) work tensor, no history. */
static tn_tensor *tn__la_trsm_raw(tn_tensor *T, tn_tensor *Bm, bool upper, bool unit) {
    if (T->device != TN_CPU || (tn__la_routed(T, true) && T->dtype == Bm->dtype)) {   /* the entry's TRSM on column-major copies: X in T's dtype */
        tn_tensor *a = tn__la_cm(T), *x = tn__la_cm(Bm);
        if (!a || !x || tn__la_run(TN_LA_TRSM, a, x, NULL, NULL, NULL, (upper ? 1 : 0) | (unit ? 2 : 0))) return NULL;
        return tn__la_uncm(x, Bm, T->shape[T->ndim - 1], Bm->shape[Bm->ndim - 1]);
    }
    const bool cplx = tn_is_complex(T) || tn_is_complex(Bm);
    /* T is only read: a contiguous float64 T is used in place (no copy) */
    tn_tensor *a = tn_contiguous(tn_to_dtype(tn_detach(T), cplx ? TN_C128 : TN_F64));
    tn_tensor *x = a ? tn_clone(tn_to_dtype(tn_detach(Bm), cplx ? TN_C128 : TN_F64)) : NULL;
    if (!x) return NULL;
    const int64_t n = T->shape[T->ndim - 1], k = Bm->shape[Bm->ndim - 1], B = tn__la_batch(T);
    for (int64_t b = 0; b < B; b++)
        if (cplx) tn__la_trsm_small_c((const tn__cplx *)tn_data_ptr(a) + b * n * n, n, (tn__cplx *)tn_data_ptr(x) + b * n * k, k, n, k, upper, unit);   /* substitution only */
        else if (tn__la_trsm((const double *)tn_data_ptr(a) + b * n * n, n, (double *)tn_data_ptr(x) + b * n * k, k, upper, unit))
            return (tn_tensor *)tn__error("tn_linalg_solve_triangular: out of memory");
    return x;
}
static tn_tensor *tn__st_core(tn_tensor *A, tn_tensor *Bm, bool upper, bool left, bool unit);
/* PyTorch's linalg_solve_triangular backward: gB = solve_triangular(A^H, g, !upper), gA =
   -gB X^H (left) or -X^H gB (right), restricted to A's triangle (without the diagonal when
   unitriangular). */
static int tn__st_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(n, 0), *Bm = tn_ctx_saved(n, 1);
    const bool upper = n->i[0], left = n->i[1], unit = n->i[2];
    tn_tensor *gB = tn__st_core(tn__mH(A), g, !upper, left, unit);
    if (!gB) return -1;
    if (tn_ctx_needs_grad(n, 1)) gin[1] = gB;
    if (tn_ctx_needs_grad(n, 0)) {
        tn_tensor *X = tn__st_core(A, Bm, upper, left, unit), *XH = X ? tn__mH(X) : NULL;
        tn_tensor *gA = XH ? tn_neg(left ? tn_matmul(gB, XH) : tn_matmul(XH, gB)) : NULL;
        if (!(gin[0] = upper ? tn__triu(gA, unit) : tn__tril(gA, -(int64_t)unit))) return -1;
    }
    return 0;
}
/* A [..., n, n] and B [..., n, k] (left) or [..., k, n] (right), one batch shape. */
static tn_tensor *tn__st_core(tn_tensor *A, tn_tensor *Bm, bool upper, bool left, bool unit) {
    if (!A || !Bm) return NULL;
    tn_scope_begin();
    /* X A = B is A^T X^T = B^T: the kernel solves from the left only */
    tn_tensor *x = left ? tn__la_trsm_raw(A, Bm, upper, unit)
                        : tn__la_trsm_raw(tn_transpose(A, -2, -1), tn_transpose(Bm, -2, -1), !upper, unit);
    tn_tensor *r = x ? tn_keep(tn_contiguous(tn_to_dtype(left ? x : tn_transpose(x, -2, -1), A->dtype))) : NULL;
    tn_scope_end();
    tn_tensor *ins[2] = {A, Bm};
    tn_node *nd = r ? tn__fn_node("LinalgSolveTriangularBackward0", tn__st_bw, ins, 2) : NULL;
    if (nd) {
        nd->i[0] = upper; nd->i[1] = left; nd->i[2] = unit; nd->ni = 3;
        tn__node_save(nd, A); tn__node_save(nd, Bm);
    }
    return tn__node_attach(nd, r);
}
/* Broadcasts the batch dims of A [..., n, n] and B (at least 2-d) and checks the equation's
   shapes; *a, *b: the expanded pair (views). */
static int tn__la_broadcast_pair(const char *fn, tn_tensor *A, tn_tensor *Bm, bool left, tn_tensor **a, tn_tensor **b) {
    if (tn__la_check_dev(fn, A, "A", true) || tn__check_same_device(fn, A, Bm)) return -1;
    if (Bm->ndim < 2) return TN__FAIL_INT("%s: The input tensor B must have at least 2 dimensions.", fn);
    if (Bm->dtype != A->dtype)
        return TN__FAIL_INT("%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead", fn,
                            tn__torch_type_name(A->dtype), tn__torch_type_name(Bm->dtype));
    const int64_t n = A->shape[A->ndim - 1];
    if (Bm->shape[Bm->ndim - (left ? 2 : 1)] != n)
        return TN__FAIL_INT("%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)", fn, left ? "AX = B" : "XA = B",
                            (long long)n, (long long)n, (long long)Bm->shape[Bm->ndim - 2], (long long)Bm->shape[Bm->ndim - 1]);
    int64_t bs[TN_MAX_DIMS], sa[TN_MAX_DIMS], sb[TN_MAX_DIMS];
    int bnd = tn__broadcast(A->shape, A->ndim - 2, Bm->shape, Bm->ndim - 2, bs);
    if (bnd < 0 || bnd + 2 > TN_MAX_DIMS) return TN__FAIL_INT("%s: the batch dims of A %s and B %s do not broadcast", fn, TN__SHAPE(A), TN__SHAPE(Bm));
    memcpy(sa, bs, (size_t)bnd * sizeof(int64_t)); sa[bnd] = n; sa[bnd + 1] = n;
    memcpy(sb, bs, (size_t)bnd * sizeof(int64_t)); sb[bnd] = Bm->shape[Bm->ndim - 2]; sb[bnd + 1] = Bm->shape[Bm->ndim - 1];
    *a = tn_expand(A, sa, bnd + 2);
    *b = tn_expand(Bm, sb, bnd + 2);
    return *a && *b ? 0 : -1;
}
static tn_tensor *tn__solve_triangular_impl(tn_tensor *A, tn_tensor *Bm, bool upper, bool left, bool unit, const char *fn) {
    TN__CHECK_NULL(A, Bm);
    tn_scope_begin();
    tn_tensor *a = NULL, *b = NULL, *r = NULL;
    if (!tn__la_broadcast_pair(fn, A, Bm, left, &a, &b)) r = tn__st_core(a, b, upper, left, unit);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_solve_triangular_opts(tn_tensor *A, tn_tensor *B, bool upper, tn_solve_triangular_fn_opts o) {
    return tn__grad_name(TN__AS("tn_linalg_solve_triangular", tn__solve_triangular_impl(A, B, upper, o.left, o.unitriangular, "tn_linalg_solve_triangular")),
                         "LinalgSolveTriangularBackward0");
}
TNDEF tn_tensor *tn_linalg_solve_triangular_str(tn_tensor *A, tn_tensor *B, bool upper, const char *options) {
    TN__KW_STR(tn_solve_triangular_fn_opts, solve_triangular, "tn_linalg_solve_triangular", options, tn_linalg_solve_triangular_opts(A, B, upper, o));
}

/* torch.triangular_solve(b, A): solve_triangular(op(A), b) with A's triangle read as upper
   (transposed: the other triangle), and a clone of A (broadcast to the batch shape, as torch). */
static tn_tensor *tn__triangular_solve_impl(tn_tensor *b, tn_tensor *A, tn_tensor **cloned, tn_triangular_solve_fn_opts o) {
    TN__CHECK_NULL(b, A);
    const char *fn = "tn_triangular_solve";
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    if (b->ndim < 2) return (tn_tensor *)tn__error("%s: The input tensor b must have at least 2 dimensions.", fn);
    if (b->dtype != A->dtype)
        return (tn_tensor *)tn__error("%s: Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.", fn,
                                      tn__torch_type_name(b->dtype), tn__torch_type_name(A->dtype));
    tn_scope_begin();
    tn_tensor *a = NULL, *bb = NULL, *r = NULL;
    if (!tn__la_broadcast_pair(fn, A, b, true, &a, &bb)) {
        r = tn__st_core(o.transpose ? tn_transpose(a, -2, -1) : a, bb, o.upper != o.transpose, true, o.unitriangular);
        tn_tensor *c = r ? tn_clone(a) : NULL;
        if (!c) r = NULL;
        else if (cloned) *cloned = tn_keep(c);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_triangular_solve_opts(tn_tensor *b, tn_tensor *A, tn_tensor **cloned_coefficient, tn_triangular_solve_fn_opts o) {
    if (cloned_coefficient) *cloned_coefficient = NULL;
    return tn__grad_name(TN__AS("tn_triangular_solve", tn__triangular_solve_impl(b, A, cloned_coefficient, o)), "TriangularSolveBackward0");
}
TNDEF tn_tensor *tn_triangular_solve_str(tn_tensor *b, tn_tensor *A, tn_tensor **cloned_coefficient, const char *options) {
    if (cloned_coefficient) *cloned_coefficient = NULL;
    TN__KW_STR(tn_triangular_solve_fn_opts, triangular_solve, "tn_triangular_solve", options, tn_triangular_solve_opts(b, A, cloned_coefficient, o));
}

/* ---- cholesky_solve, cholesky_inverse: two triangular solves on the factor ---- */
static tn_tensor *tn__cholesky_solve_core(tn_tensor *Bm, tn_tensor *L, bool upper);
/* PyTorch's cholesky_solve_backward: gB = cholesky_solve(g, L), C = gB X^H + X gB^H,
   gL = -C L (lower) or -L C (upper): a full matrix, as torch's (not restricted to the triangle). */
static int tn__cholesky_solve_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *Bm = tn_ctx_saved(n, 0), *L = tn_ctx_saved(n, 1);
    const bool upper = n->i[0];
    tn_tensor *gB = tn__cholesky_solve_core(g, L, upper);
    if (!gB) return -1;
    if (tn_ctx_needs_grad(n, 0)) gin[0] = gB;
    if (tn_ctx_needs_grad(n, 1)) {
        tn_tensor *X = tn__cholesky_solve_core(Bm, L, upper), *C = X ? tn_matmul(gB, tn__mH(X)) : NULL;
        C = C ? tn_add(C, tn__mH(C)) : NULL;
        if (!C || !(gin[1] = tn_neg(upper ? tn_matmul(L, C) : tn_matmul(C, L)))) return -1;
    }
    return 0;
}
/* B [..., n, k], L [..., n, n] of one batch shape: X = (L L^H)^{-1} B (U^H U for upper). */
static tn_tensor *tn__cholesky_solve_core(tn_tensor *Bm, tn_tensor *L, bool upper) {
    if (!Bm || !L) return NULL;
    tn_scope_begin();
    tn_tensor *Lt = tn__mH(L);
    tn_tensor *y = tn__la_trsm_raw(upper ? Lt : L, Bm, false, false);       /* L y = B */
    tn_tensor *x = y ? tn__la_trsm_raw(upper ? L : Lt, y, true, false) : NULL; /* L^H x = y */
    tn_tensor *r = x ? tn_keep(tn_to_dtype(x, L->dtype)) : NULL;
    tn_scope_end();
    tn_tensor *ins[2] = {Bm, L};
    tn_node *nd = r ? tn__fn_node("CholeskySolveBackward0", tn__cholesky_solve_bw, ins, 2) : NULL;
    if (nd) { nd->i[0] = upper; nd->ni = 1; tn__node_save(nd, Bm); tn__node_save(nd, L); }
    return tn__node_attach(nd, r);
}
static tn_tensor *tn__cholesky_solve_impl(tn_tensor *Bm, tn_tensor *L, bool upper) {
    TN__CHECK_NULL(Bm, L);
    const char *fn = "tn_cholesky_solve";
    if (Bm->ndim < 2) return (tn_tensor *)tn__error("%s: b should have at least 2 dimensions, but has %d dimensions instead", fn, Bm->ndim);
    if (L->ndim < 2) return (tn_tensor *)tn__error("%s: u should have at least 2 dimensions, but has %d dimensions instead", fn, L->ndim);
    if (Bm->dtype != L->dtype)
        return (tn_tensor *)tn__error("%s: Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.", fn,
                                      tn__torch_type_name(Bm->dtype), tn__torch_type_name(L->dtype));
    tn_scope_begin();
    tn_tensor *a = NULL, *b = NULL, *r = NULL;
    if (!tn__la_broadcast_pair(fn, L, Bm, true, &a, &b)) r = tn__cholesky_solve_core(b, a, upper);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_cholesky_solve_opts(tn_tensor *B, tn_tensor *L, tn_cholesky_fn_opts o) {
    return TN__AS("tn_cholesky_solve", tn__cholesky_solve_impl(B, L, o.upper));
}
TNDEF tn_tensor *tn_cholesky_solve_str(tn_tensor *B, tn_tensor *L, const char *options) { TN__KW_STR(tn_cholesky_fn_opts, cholesky, "tn_cholesky_solve", options, tn_cholesky_solve_opts(B, L, o)); }
/* PyTorch's cholesky_inverse_backward: C = X (g + g^H) X, gL = -C L (lower) or -L C (upper). */
static int tn__cholesky_inverse_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *L = tn_ctx_saved(n, 0), *X = tn_cholesky_inverse(L, .upper = n->i[0] != 0);
    tn_tensor *C = X ? tn_matmul(X, tn_matmul(tn_add(g, tn__mH(g)), X)) : NULL;
    gin[0] = C ? tn_neg(n->i[0] ? tn_matmul(L, C) : tn_matmul(C, L)) : NULL;
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__cholesky_inverse_impl(tn_tensor *L, bool upper) {
    TN__CHECK_NULL(L);
    const char *fn = "tn_cholesky_inverse";
    if (tn__la_check_dev(fn, L, "input", true)) return NULL;
    tn_scope_begin();
    const int64_t n = L->shape[L->ndim - 1];
    tn_tensor *D = tn_detach(L), *eye = tn_contiguous(tn_expand(tn_to(tn_eye(n, n, L->dtype), L->device), L->shape, L->ndim));
    tn_tensor *x = tn__cholesky_solve_core(eye, D, upper);
    tn_tensor *r = x ? tn_keep(tn_detach(x)) : NULL;
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("CholeskyInverseBackward0", tn__cholesky_inverse_bw, &L, 1) : NULL;
    if (nd) { nd->i[0] = upper; nd->ni = 1; tn__node_save(nd, L); }
    return tn__node_attach(nd, r);
}
TNDEF tn_tensor *tn_cholesky_inverse_opts(tn_tensor *L, tn_cholesky_fn_opts o) {
    return TN__AS("tn_cholesky_inverse", tn__cholesky_inverse_impl(L, o.upper));
}
TNDEF tn_tensor *tn_cholesky_inverse_str(tn_tensor *L, const char *options) { TN__KW_STR(tn_cholesky_fn_opts, cholesky, "tn_cholesky_inverse", options, tn_cholesky_inverse_opts(L, o)); }

/* ---- lu_solve: P L U X = B as a composite of the unpacked factors and two triangular
   solves: its gradient in LU is PyTorch's linalg_lu_solve_LU (the same derivative, restricted
   to the strict lower triangle through L and to the upper one through U). ---- */
static tn_tensor *tn__lu_solve_impl(tn_tensor *LU, tn_tensor *pivots, tn_tensor *Bm, bool left, bool adjoint) {
    TN__CHECK_NULL(LU, pivots, Bm);
    const char *fn = "tn_linalg_lu_solve";
    if (tn__la_check_dev(fn, LU, "LU", true)) return NULL;
    if (pivots->ndim != LU->ndim - 1 || pivots->shape[pivots->ndim - 1] != LU->shape[LU->ndim - 1])
        return (tn_tensor *)tn__error("%s: Expected LU.shape[:-1] == pivots.shape, got LU %s and pivots %s", fn, TN__SHAPE(LU), TN__SHAPE(pivots));
    if (memcmp(pivots->shape, LU->shape, (size_t)(LU->ndim - 2) * sizeof(int64_t)))
        return (tn_tensor *)tn__error("%s: Expected LU.shape[:-2] == pivots.shape[:-1], got LU %s and pivots %s", fn, TN__SHAPE(LU), TN__SHAPE(pivots));
    if (pivots->dtype != TN_I32) return (tn_tensor *)tn__error("%s: pivots should be a Tensor of scalar type int32, got %s", fn, tn_dtype_name(pivots->dtype));
    tn_scope_begin();
    /* (on a device too: the triangular solves are its entry's TN_LA_TRSM) */
    tn_tensor *L = NULL, *U = NULL, *P = tn_lu_unpack(LU, pivots, &L, &U), *a = NULL, *b = NULL, *r = NULL;
    if (P && !tn__la_broadcast_pair(fn, LU, Bm, left, &a, &b)) {
        /* left = false, X A = B, is A^H X^H = B^H: the adjoint flips */
        tn_tensor *rhs = left ? b : tn__mH(b);
        bool adj = left ? adjoint : !adjoint;
        /* the batch of P, L, U broadcast as A's */
        int64_t sa[TN_MAX_DIMS];
        memcpy(sa, a->shape, sizeof sa);
        P = tn_expand(P, sa, a->ndim); L = tn_expand(L, sa, a->ndim); U = tn_expand(U, sa, a->ndim);
        tn_tensor *X;
        if (!adj)   /* A = P L U: X = U^{-1} L^{-1} P^T B */
            X = tn__st_core(U, tn__st_core(L, tn_matmul(tn_transpose(P, -2, -1), rhs), false, true, true), true, true, false);
        else        /* A^H = U^H L^H P^T: X = P L^{-H} U^{-H} B */
            X = tn_matmul(P, tn__st_core(tn__mH(L), tn__st_core(tn__mH(U), rhs, false, true, false), true, true, true));
        r = X && !left ? tn__mH(X) : X;
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_lu_solve_opts(tn_tensor *LU, tn_tensor *pivots, tn_tensor *B, tn_lu_solve_fn_opts o) {
    return tn__grad_name(TN__AS("tn_linalg_lu_solve", tn__lu_solve_impl(LU, pivots, B, o.left, o.adjoint)), "LinalgLuSolveBackward0");
}
TNDEF tn_tensor *tn_linalg_lu_solve_str(tn_tensor *LU, tn_tensor *pivots, tn_tensor *B, const char *options) {
    TN__KW_STR(tn_lu_solve_fn_opts, lu_solve, "tn_linalg_lu_solve", options, tn_linalg_lu_solve_opts(LU, pivots, B, o));
}

/* ---- matrix_power: repeated squaring (matmul), inv for negative n ---- */
static tn_tensor *tn__matrix_power_impl(tn_tensor *A, int64_t n) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_matrix_power";
    if (A->ndim < 2) return (tn_tensor *)tn__error("%s: The input tensor A must have at least 2 dimensions.", fn);
    if (A->shape[A->ndim - 1] != A->shape[A->ndim - 2])
        return (tn_tensor *)tn__error("%s: A must be batches of square matrices, but they are %lld by %lld matrices", fn,
                                      (long long)A->shape[A->ndim - 2], (long long)A->shape[A->ndim - 1]);
    if (n < 0 && tn__la_check_dev(fn, A, "A", true)) return NULL;   /* (inv: on a device too) */
    tn_scope_begin();
    const int64_t m = A->shape[A->ndim - 1];
    tn_tensor *r = NULL;
    if (n == 0)   /* I, in the graph with a zero gradient (as torch: a copy of I into A's clone) */
        r = tn__zero_grad_node(tn_contiguous(tn_expand(tn_to(tn_eye(m, m, A->dtype), A->device), A->shape, A->ndim)), A, "LinalgMatrixPowerBackward0", true);
    else if (n == 1) r = tn_clone(A);
    else {
        tn_tensor *base = n < 0 ? tn_linalg_inv(A) : A;
        uint64_t e = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;   /* -INT64_MIN as well */
        bool ok = base != NULL;
        while (ok) {   /* r = the product of base^(2^j) over the bits j of e */
            if (e & 1) ok = (r = r ? tn_matmul(r, base) : base) != NULL;
            e >>= 1;
            if (!e) break;
            if (ok) ok = (base = tn_matmul(base, base)) != NULL;
        }
        if (!ok) r = NULL;
        if (r == A) r = tn_clone(A);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_matrix_power(tn_tensor *A, int64_t n) { return TN__AS("tn_linalg_matrix_power", tn__matrix_power_impl(A, n)); }

/* ---- matrix_exp: scaling and squaring with Pade approximants (Higham 2005: degrees 3, 5,
   7, 9, 13), on float64 work copies, one matrix at a time ---- */
static int tn__la_mm(int64_t n, const double *a, const double *b, double *c) {
    return tn__gemm_f64(n, n, n, 1.0, a, n, 1, b, n, 1, 0.0, c, n, 1);
}
/* the Pade coefficients and the 1-norm bounds of degrees 3, 5, 7, 9 (Higham 2005) */
static const double tn__expm_theta[4] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068e0};
static const double tn__expm_b3[4] = {120, 60, 12, 1}, tn__expm_b5[6] = {30240, 15120, 3360, 420, 30, 1},
    tn__expm_b7[8] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1},
    tn__expm_b9[10] = {17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.},
    tn__expm_b13[14] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000., 10559470521600.,
                        670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.};
/* exp(a) into a (n x n row-major); w: 7 n^2 doubles of scratch, piv n ints. */
static int tn__la_expm(double *a, int64_t n, double *w, int32_t *piv) {
    const int64_t nn = n * n;
    double norm = 0;
    for (int64_t j = 0; j < n; j++) {   /* the 1-norm: the largest column sum */
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += fabs(a[i * n + j]);
        if (s > norm || s != s) norm = s;
    }
    if (!isfinite(norm)) { for (int64_t i = 0; i < nn; i++) a[i] = NAN; return 0; }
    int deg = 13, s = 0;
    const double *b = tn__expm_b13;
    for (int i = 0; i < 4; i++)
        if (norm <= tn__expm_theta[i]) { deg = 3 + 2 * i; b = i == 0 ? tn__expm_b3 : i == 1 ? tn__expm_b5 : i == 2 ? tn__expm_b7 : tn__expm_b9; break; }
    if (deg == 13 && norm > 5.371920351148152) {
        s = (int)ceil(log2(norm / 5.371920351148152));
        const double sc = ldexp(1.0, -s);
        for (int64_t i = 0; i < nn; i++) a[i] *= sc;
    }
    double *A2 = w, *A4 = w + nn, *A6 = w + 2 * nn, *U = w + 3 * nn, *V = w + 4 * nn, *T = w + 5 * nn, *P = w + 6 * nn;
    if (tn__la_mm(n, a, a, A2)) return -1;
    if (deg >= 5 && tn__la_mm(n, A2, A2, A4)) return -1;
    if (deg >= 7 && tn__la_mm(n, A4, A2, A6)) return -1;
    if (deg <= 9) {   /* T = sum b_odd A^(j-1), V = sum b_even A^j over the powers A2, A4, A6, A8 = A4^2 */
        if (deg == 9 && tn__la_mm(n, A4, A4, P)) return -1;
        const double *pw[5] = {NULL, A2, A4, A6, P};
        for (int64_t i = 0; i < nn; i++) {
            double t = 0, v = 0;
            for (int j = 1; 2 * j <= deg; j++) { t += b[2 * j + 1] * pw[j][i]; v += b[2 * j] * pw[j][i]; }
            T[i] = t; V[i] = v;
        }
        for (int64_t i = 0; i < n; i++) { T[i * n + i] += b[1]; V[i * n + i] += b[0]; }
    } else {          /* degree 13 */
        for (int64_t i = 0; i < nn; i++) P[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
        if (tn__la_mm(n, A6, P, T)) return -1;
        for (int64_t i = 0; i < nn; i++) T[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
        for (int64_t i = 0; i < nn; i++) P[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
        if (tn__la_mm(n, A6, P, V)) return -1;
        for (int64_t i = 0; i < nn; i++) V[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
        for (int64_t i = 0; i < n; i++) { T[i * n + i] += b[1]; V[i * n + i] += b[0]; }
    }
    if (tn__la_mm(n, a, T, U)) return -1;   /* U = A T */
    /* (V - U) R = (V + U) */
    for (int64_t i = 0; i < nn; i++) { P[i] = V[i] - U[i]; a[i] = V[i] + U[i]; }
    tn__la_getrf(P, n, n, piv);
    tn__la_getrs(P, piv, n, a, n);
    for (int k = 0; k < s; k++) {   /* undo the scaling: R^(2^s) */
        if (tn__la_mm(n, a, a, T)) return -1;
        memcpy(a, T, (size_t)nn * sizeof(double));
    }
    return 0;
}
/* c0 x + c1 y + c2 z (library ops) */
static tn_tensor *tn__lin3(tn_tensor *x, double c0, tn_tensor *y, double c1, tn_tensor *z, double c2) {
    return tn_add(tn_add(tn_mul_scalar(x, c0), tn_mul_scalar(y, c1)), tn_mul_scalar(z, c2));
}
/* exp(A) on a device: tn__la_expm's scaling and squaring in library ops over the whole batch,
   in float64 (the solve is the device's LU), no history. The degree and scaling come from the
   batch's largest finite 1-norm (read back: one synchronisation): every matrix is within that
   degree's bound after the scaling (smaller ones squared a few times more than they need). A
   matrix whose norm is not finite is all NaN, as on the CPU. */
static tn_tensor *tn__la_expm_dev(tn_tensor *A) {
    const int64_t n = A->shape[A->ndim - 1];
    tn_tensor *a = tn_to_dtype(tn_detach(A), TN_F64);
    if (!a || tn_numel(a) == 0) return a;
    int64_t d2 = -2, d1 = -1;
    tn_tensor *norm = tn_amax(tn_sum_dims(tn_abs(a), &d2, 1), &d1, 1);   /* the largest column sum */
    tn_tensor *bad = norm ? tn_logical_not(tn_isfinite(norm)) : NULL, *fin = bad ? tn_where(bad, tn_zeros_like(norm), norm) : NULL;
    tn_tensor *mx = fin ? tn_amax(fin, NULL, 0) : NULL;
    if (!mx) return NULL;
    const double nmax = tn_item(mx);
    int deg = 13, s = 0;
    const double *b = tn__expm_b13;
    for (int i = 0; i < 4; i++)
        if (nmax <= tn__expm_theta[i]) { deg = 3 + 2 * i; b = i == 0 ? tn__expm_b3 : i == 1 ? tn__expm_b5 : i == 2 ? tn__expm_b7 : tn__expm_b9; break; }
    if (deg == 13 && nmax > 5.371920351148152) {
        s = (int)ceil(log2(nmax / 5.371920351148152));
        a = tn_mul_scalar(a, ldexp(1.0, -s));
    }
    tn_tensor *eye = tn_to(tn_eye(n, n, TN_F64), A->device), *A2 = tn_matmul(a, a), *A4 = deg >= 5 ? tn_matmul(A2, A2) : NULL;   /* not I: <complex.h>'s macro under TENSOR_CBLAS */
    tn_tensor *A6 = deg >= 7 ? tn_matmul(A4, A2) : NULL, *T, *V;
    if (deg <= 9) {   /* T = sum b_odd A^(j-1), V = sum b_even A^j over A2, A4, A6, A8 */
        tn_tensor *pw[5] = {eye, A2, A4, A6, deg == 9 ? tn_matmul(A4, A4) : NULL};
        T = tn_mul_scalar(eye, b[1]);
        V = tn_mul_scalar(eye, b[0]);
        for (int j = 1; 2 * j <= deg; j++) { T = tn_add(T, tn_mul_scalar(pw[j], b[2 * j + 1])); V = tn_add(V, tn_mul_scalar(pw[j], b[2 * j])); }
    } else {          /* degree 13 */
        T = tn_add(tn_matmul(A6, tn__lin3(A6, b[13], A4, b[11], A2, b[9])), tn_add(tn__lin3(A6, b[7], A4, b[5], A2, b[3]), tn_mul_scalar(eye, b[1])));
        V = tn_add(tn_matmul(A6, tn__lin3(A6, b[12], A4, b[10], A2, b[8])), tn_add(tn__lin3(A6, b[6], A4, b[4], A2, b[2]), tn_mul_scalar(eye, b[0])));
    }
    tn_tensor *U = tn_matmul(a, T), *info = NULL;
    tn_tensor *R = tn_linalg_solve_ex(tn_sub(V, U), tn_add(V, U), &info);   /* (V - U) R = V + U */
    for (int k = 0; k < s && R; k++) R = tn_matmul(R, R);                  /* undo the scaling: R^(2^s) */
    return R ? tn_to_dtype(tn_masked_fill(R, tn_unsqueeze(tn_unsqueeze(bad, -1), -1), NAN), A->dtype) : NULL;
}
/* PyTorch's backward: exp([[A^H, G], [0, A^H]])'s top-right block (Najfeld and Havel), a
   matrix_exp of library ops: differentiable again. */
static int tn__matrix_exp_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(n, 0), *AH = tn__mH(A);
    const int64_t m = A->shape[A->ndim - 1];
    tn_tensor *top[2] = {AH, g}, *bot[2] = {tn_zeros_like(A), AH};
    tn_tensor *rows[2] = {tn_cat(top, 2, .dim = -1), tn_cat(bot, 2, .dim = -1)};
    tn_tensor *E = rows[0] && rows[1] ? tn_linalg_matrix_exp(tn_cat(rows, 2, .dim = -2)) : NULL;
    gin[0] = E ? tn_narrow(tn_narrow(E, -2, 0, m), -1, m, m) : NULL;
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__matrix_exp_impl(tn_tensor *A) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_matrix_exp";
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    tn_scope_begin();
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A);
    int64_t ws = 0;
    tn_tensor *w = NULL, *r = NULL;
    if (tn_is_complex(A)) {
        /* exp of the real 2n x 2n form [[Re, -Im], [Im, Re]] (an algebra homomorphism: it is
           the real form of exp(A)); its left column of blocks holds Re and Im of exp(A). On a
           device too (library ops; the real exp there is tn__la_expm_dev, which would drop Im) */
        tn_tensor *D = tn_detach(A), *re = tn_to_dtype(tn_real(D), TN_F64), *im = tn_to_dtype(tn_imag(D), TN_F64);
        tn_tensor *top[2] = {re, tn_neg(im)}, *bot[2] = {im, re};
        tn_tensor *rows[2] = {tn_cat(top, 2, .dim = -1), tn_cat(bot, 2, .dim = -1)};
        tn_tensor *X = rows[0] && rows[1] ? tn_linalg_matrix_exp(tn_cat(rows, 2, .dim = -2)) : NULL;
        X = X ? tn_narrow(X, -1, 0, n) : NULL;
        if (X) r = tn_keep(tn_to_dtype(tn_complex(tn_narrow(X, -2, 0, n), tn_narrow(X, -2, n, n)), A->dtype));
    } else if (A->device != TN_CPU) r = tn_keep(tn__la_expm_dev(A));
    else w = tn__la_work(A);
    double *scratch = w && tn__mul_ok(n * n, 7, &ws) ? (double *)TN_MALLOC((size_t)(ws ? ws : 1) * sizeof(double)) : NULL;
    int32_t *piv = scratch ? (int32_t *)TN_MALLOC((size_t)(n ? n : 1) * sizeof(int32_t)) : NULL;
    if (w && !piv) tn__error("%s: out of memory", fn);
    else if (w && !r) {
        double *a = (double *)tn_data_ptr(w);
        int rc = 0;
        for (int64_t b = 0; b < B && !rc; b++) rc = tn__la_expm(a + b * n * n, n, scratch, piv);
        if (rc) tn__error("%s: out of memory", fn);
        else r = tn_keep(tn_to_dtype(w, A->dtype));
    }
    TN_FREE(scratch);
    TN_FREE(piv);
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("LinalgMatrixExpBackward0", tn__matrix_exp_bw, &A, 1) : NULL;
    if (nd) tn__node_save(nd, A);
    return tn__node_attach(nd, r);
}
TNDEF tn_tensor *tn_linalg_matrix_exp(tn_tensor *A) { return TN__AS("tn_linalg_matrix_exp", tn__matrix_exp_impl(A)); }

/* ---- norms: vector_norm over the reduction of reduce.c (tn_norm_dims); matrix_norm from
   it, amax/amin, and svdvals for the spectral orders; linalg.norm's dispatch ---- */
static int tn__la_norm_dtype(const char *fn, tn_tensor *x, int dtype, tn_tensor **out) {
    const bool cplx = tn_is_complex(x);
    if (!cplx && (!tn_dtype_is_floating(x->dtype) || x->dtype == TN_F16 || x->dtype == TN_BF16))
        return TN__FAIL_INT("%s: Expected a floating point or complex tensor as input. Got %s", fn, tn__torch_type_name(x->dtype));
    if (dtype >= 0 && dtype != TN_F32 && dtype != TN_F64 && dtype != TN_C64 && dtype != TN_C128)
        return TN__FAIL_INT("%s: dtype should be floating point or complex. Got %s", fn, tn__torch_type_name((tn_dtype)dtype));
    if (dtype >= 0 && cplx != tn_dtype_is_complex((tn_dtype)dtype))   /* torch: a complex input needs a complex dtype, and a real one a real dtype */
        return TN__FAIL_INT("%s: dtype should be %s for %s inputs, but got %s", fn, cplx ? "complex" : "real", cplx ? "complex" : "real", tn__torch_type_name((tn_dtype)dtype));
    if ((dtype == TN_F32 && x->dtype == TN_F64) || (dtype == TN_C64 && x->dtype == TN_C128))
        return TN__FAIL_INT("%s: the dtype of the input (%s) should be convertible without narrowing to the specified dtype (%s)", fn,
                            tn__torch_type_name(x->dtype), tn__torch_type_name((tn_dtype)dtype));
    *out = dtype >= 0 ? tn_to_dtype(x, (tn_dtype)dtype) : x;
    return *out ? 0 : -1;
}
/* PyTorch's norm_backward for an ord other than 0, 1, 2, inf, -inf, in library ops: x |x|^(p-2)
   g / |x|_p^(p-1), with the zero subgradient where x = 0 (p < 1) or where the norm is 0
   (p > 1), as torch's (reduce.c's composite would give 0 * inf there). The dims in i[], the
   number of them in i[TN_MAX_DIMS] (0: all), keepdim in i[TN_MAX_DIMS + 1]; ord in d[0]. */
static tn_tensor *tn__safe_pow(tn_tensor *t, tn_tensor *zero, double e) { return tn_where(zero, tn_zeros_like(t), tn_pow_scalar(tn_where(zero, tn_ones_like(t), t), e)); }
static tn_tensor *tn__vnorm_p(tn_tensor *x, double p, const int64_t *dims, int n, bool keepdim);
static int tn__vnorm_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *x = tn_ctx_saved(nd, 0);
    const double p = nd->d[0];
    const int n = (int)nd->i[TN_MAX_DIMS];
    tn_tensor *N = tn__vnorm_p(x, p, nd->i, n, true), *a = tn_abs(x);
    tn_tensor *gk = N ? tn_reshape(g, N->shape, N->ndim) : NULL;
    if (!gk || !a) return -1;
    if (p < 1) {
        tn_tensor *xs = tn_mul(tn_sgn(x), tn__safe_pow(a, tn_eq_scalar(x, 0), p - 1));
        gin[0] = tn_mul(tn_mul(xs, gk), tn__safe_pow(N, tn_eq_scalar(N, 0), 1 - p));
    } else {
        tn_tensor *xs = p < 2 ? tn_mul(tn_sgn(x), tn_pow_scalar(a, p - 1)) : tn_mul(x, tn_pow_scalar(a, p - 2));
        tn_tensor *z = tn_eq_scalar(N, 0), *scale = tn_where(z, tn_zeros_like(N), tn_div(gk, tn_pow_scalar(tn_where(z, tn_ones_like(N), N), p - 1)));
        gin[0] = tn_mul(xs, scale);
    }
    return gin[0] ? 0 : -1;
}
/* |x|_p over dims (n = 0: all), a float x: reduce.c's value, torch's gradient for the general p. */
static tn_tensor *tn__vnorm_p(tn_tensor *x, double p, const int64_t *dims, int n, bool keepdim) {
    if (!x) return NULL;
    if (p == 0 || p == 1 || p == 2 || isinf(p) || n > TN_MAX_DIMS) return tn_norm_dims(x, n ? dims : NULL, n, .p = p, .keepdim = keepdim);
    tn_scope_begin();
    tn_tensor *r = tn_keep(tn_norm_dims(tn_detach(x), n ? dims : NULL, n, .p = p, .keepdim = keepdim));
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("LinalgVectorNormBackward0", tn__vnorm_bw, &x, 1) : NULL;
    if (nd) {
        for (int i = 0; i < n; i++) nd->i[i] = dims[i];
        nd->i[TN_MAX_DIMS] = n; nd->i[TN_MAX_DIMS + 1] = keepdim; nd->ni = TN_MAX_DIMS + 2;
        nd->d[0] = p;
        tn__node_save(nd, x);
    }
    return tn__node_attach(nd, r);
}
static tn_tensor *tn__vector_norm_impl(tn_tensor *x, double ord, const tn_ints *dim, bool keepdim, int dtype) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_linalg_vector_norm";
    bool mask[TN_MAX_DIMS];
    if (dim->n && tn__dims_mask(fn, x, dim->v, dim->n, mask)) return NULL;
    if (ord != ord) return (tn_tensor *)tn__error("%s: ord is nan", fn);
    if (tn_numel(x) == 0 && (ord < 0 || ord == INFINITY)) {
        if (!dim->n)
            return (tn_tensor *)tn__error("%s: linalg.vector_norm cannot compute the %g norm on an empty tensor because the operation does not have an identity", fn, ord);
        for (int i = 0; i < dim->n; i++) {
            int d = tn__wrap_dim(fn, dim->v[i], x->ndim);
            if (x->shape[d] == 0)
                return (tn_tensor *)tn__error("%s: linalg.vector_norm cannot compute the %g norm on the dimension %lld because this dimension is empty and the operation does not have an identity",
                                              fn, ord, (long long)dim->v[i]);
        }
    }
    tn_scope_begin();
    tn_tensor *xc = NULL, *r = NULL;
    if (!tn__la_norm_dtype(fn, x, dtype, &xc)) {
        int64_t all[TN_MAX_DIMS];
        for (int i = 0; i < x->ndim; i++) all[i] = i;
        /* dim None with keepdim: every dim kept, as size 1 */
        r = dim->n ? tn__vnorm_p(xc, ord, dim->v, dim->n, keepdim) : tn__vnorm_p(xc, ord, all, keepdim ? x->ndim : 0, keepdim);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_vector_norm_opts(tn_tensor *x, tn_vector_norm_fn_opts o) {
    return tn__grad_name(TN__AS("tn_linalg_vector_norm", tn__vector_norm_impl(x, o.ord, &o.dim, o.keepdim, o.dtype)), "LinalgVectorNormBackward0");
}
TNDEF tn_tensor *tn_linalg_vector_norm_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_vector_norm_fn_opts, vector_norm, "tn_linalg_vector_norm", options, tn_linalg_vector_norm_opts(x, o));
}
/* An ord given as text: "fro", "nuc", or a number ("inf", "-inf", "2", "-1", "0.5"). */
static int tn__la_ord(const char *fn, const char *ord, double *num, int *word) {
    *word = 0;
    if (!strcmp(ord, "fro")) { *word = 1; return 0; }
    if (!strcmp(ord, "nuc")) { *word = 2; return 0; }
    char *end;
    if (!strcmp(ord, "inf")) *num = INFINITY;
    else if (!strcmp(ord, "-inf")) *num = -INFINITY;
    else if ((*num = strtod(ord, &end)), end == ord || *end) return TN__FAIL_INT("%s: Order %s not supported.", fn, ord);
    return 0;
}
static tn_tensor *tn__matrix_norm_impl(tn_tensor *A, const char *ord, const tn_ints *dim, bool keepdim, int dtype, const char *fn) {
    TN__CHECK_NULL(A);
    if (A->ndim < 2) return (tn_tensor *)tn__error("%s: The input tensor A must have at least 2 dimensions.", fn);
    int64_t d[2] = {-2, -1};
    if (dim->n) {
        if (dim->n != 2) return (tn_tensor *)tn__error("%s: dim must be a 2-tuple. Got %d dims", fn, dim->n);
        d[0] = dim->v[0]; d[1] = dim->v[1];
    }
    int d0 = tn__wrap_dim(fn, d[0], A->ndim), d1 = d0 < 0 ? -1 : tn__wrap_dim(fn, d[1], A->ndim);
    if (d1 < 0) return NULL;
    if (d0 == d1) return (tn_tensor *)tn__error("%s: dims must be different. Got (%d, %d)", fn, d0, d1);
    double num = 0;
    int word = 0;
    if (tn__la_ord(fn, ord ? ord : "fro", &num, &word)) return NULL;
    if (!word && !(fabs(num) == 1 || fabs(num) == 2 || isinf(num))) return (tn_tensor *)tn__error("%s: Order %s not supported.", fn, ord);
    tn_tensor *xc = NULL;
    if (tn__la_norm_dtype(fn, A, dtype, &xc)) return NULL;
    tn_scope_begin();
    tn_tensor *r = NULL;
    if (word == 1) {
        const int64_t dd[2] = {d0, d1};
        r = tn_norm_dims(xc, dd, 2, .keepdim = keepdim);
    } else if (word == 2 || fabs(num) == 2) {
        /* the nuclear and spectral norms: the sum and the extremes of the singular values of
           the matrices over (d0, d1), moved last */
        int64_t perm[TN_MAX_DIMS];
        int k = 0;
        for (int i = 0; i < A->ndim; i++) if (i != d0 && i != d1) perm[k++] = i;
        perm[k++] = d0;
        perm[k++] = d1;
        const int64_t last[1] = {-1};
        tn_tensor *sv = tn_linalg_svdvals(tn_permute(xc, perm, k));
        r = !sv ? NULL : word == 2 ? tn_sum_dims(sv, last, 1) : num > 0 ? tn_amax(sv, last, 1) : tn_amin(sv, last, 1);
        if (r && keepdim) r = tn_unsqueeze(tn_unsqueeze(r, d0 < d1 ? d0 : d1), d0 < d1 ? d1 : d0);
    } else {   /* 1, -1: the extreme column sum; inf, -inf: the extreme row sum */
        int s0 = d0, s1 = d1;
        if (isinf(num)) { s0 = d1; s1 = d0; }
        if (!keepdim && s0 < s1) s1--;
        const int64_t ds[1] = {s0}, dm[1] = {s1};
        tn_tensor *cs = tn_sum_dims(tn_abs(xc), ds, 1, .keepdim = keepdim);
        r = cs ? (num > 0 ? tn_amax(cs, dm, 1, .keepdim = keepdim) : tn_amin(cs, dm, 1, .keepdim = keepdim)) : NULL;
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_matrix_norm_opts(tn_tensor *A, tn_matrix_norm_fn_opts o) {
    return TN__AS("tn_linalg_matrix_norm", tn__matrix_norm_impl(A, o.ord, &o.dim, o.keepdim, o.dtype, "tn_linalg_matrix_norm"));
}
TNDEF tn_tensor *tn_linalg_matrix_norm_str(tn_tensor *A, const char *options) {
    tn_matrix_norm_fn_opts o = TN_DEFAULTS(tn_matrix_norm_fn_opts);
    uint64_t seen;
    if (tn__kw_parse("tn_linalg_matrix_norm", options, tn__kw_matrix_norm, TN__KW_N(tn__kw_matrix_norm), &o, &seen)) return NULL;
    tn_tensor *r = tn_linalg_matrix_norm_opts(A, o);
    tn__kw_release(tn__kw_matrix_norm, TN__KW_N(tn__kw_matrix_norm), &o, seen);
    return r;
}
/* linalg.norm: a matrix norm when ord is given and dim has 2 dims (or is None for a 2-d A),
   else a vector norm (ord None: 2, over every element when dim is None). */
static tn_tensor *tn__linalg_norm_impl(tn_tensor *A, const char *ord, const tn_ints *dim, bool keepdim, int dtype) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_norm";
    if (dim->n && dim->n > 2) return (tn_tensor *)tn__error("%s: If dim is specified, it must be of length 1 or 2. Got %d dims", fn, dim->n);
    if (!dim->n && ord && A->ndim != 1 && A->ndim != 2)
        return (tn_tensor *)tn__error("%s: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD", fn, A->ndim);
    if (ord && (dim->n == 2 || (!dim->n && A->ndim == 2))) {
        tn_ints d = {2, {0, 1}};
        return tn__matrix_norm_impl(A, ord, dim->n ? dim : &d, keepdim, dtype, fn);
    }
    double num = 2;
    int word = 0;
    if (ord && tn__la_ord(fn, ord, &num, &word)) return NULL;
    if (word) return (tn_tensor *)tn__error("%s: Order %s not supported for a vector norm (dim has one dim, or the input is 1-d).", fn, ord);
    return tn__vector_norm_impl(A, num, dim, keepdim, dtype);
}
TNDEF tn_tensor *tn_linalg_norm_opts(tn_tensor *A, tn_linalg_norm_fn_opts o) {
    return TN__AS("tn_linalg_norm", tn__linalg_norm_impl(A, o.ord, &o.dim, o.keepdim, o.dtype));
}
TNDEF tn_tensor *tn_linalg_norm_str(tn_tensor *A, const char *options) {
    tn_linalg_norm_fn_opts o = TN_DEFAULTS(tn_linalg_norm_fn_opts);
    uint64_t seen;
    if (tn__kw_parse("tn_linalg_norm", options, tn__kw_linalg_norm, TN__KW_N(tn__kw_linalg_norm), &o, &seen)) return NULL;
    tn_tensor *r = tn_linalg_norm_opts(A, o);
    tn__kw_release(tn__kw_linalg_norm, TN__KW_N(tn__kw_linalg_norm), &o, seen);
    return r;
}

/* ---- products: multi_dot (optimal parenthesisation), vecdot ---- */
/* The product of ts[i..j] by the split table of the chain-order dynamic programme. */
static tn_tensor *tn__multi_dot_rec(tn_tensor *const *ts, const int64_t *split, int n, int i, int j) {
    if (i == j) return ts[i];
    int k = (int)split[i * n + j];
    return tn_mm(tn__multi_dot_rec(ts, split, n, i, k), tn__multi_dot_rec(ts, split, n, k + 1, j));
}
static tn_tensor *tn__multi_dot_impl(tn_tensor *const *tensors, int n) {
    const char *fn = "tn_linalg_multi_dot";
    if (n < 2) return (tn_tensor *)tn__error("%s: multi_dot(): expected at least 2 tensors but got %d", fn, n);
    for (int i = 0; i < n; i++) {
        if (!tensors[i]) return (tn_tensor *)tn__error("%s: tensor %d is NULL", fn, i);
        const int nd = tensors[i]->ndim;
        if (i == 0 && nd != 1 && nd != 2) return (tn_tensor *)tn__error("%s: multi_dot(): the first tensor must be 1D or 2D but got %dD", fn, nd);
        if (i == n - 1 && nd != 1 && nd != 2) return (tn_tensor *)tn__error("%s: multi_dot(): the last tensor must be 1D or 2D but got %dD", fn, nd);
        if (i > 0 && i < n - 1 && nd != 2) return (tn_tensor *)tn__error("%s: multi_dot(): tensor %d must be 2D but got %dD", fn, i, nd);
        if (tensors[i]->dtype != tensors[0]->dtype)
            return (tn_tensor *)tn__error("%s: multi_dot(): all tensors must have be the same dtype but tensor 0 is %s and tensor %d is %s", fn,
                                          tn__torch_type_name(tensors[0]->dtype), i, tn__torch_type_name(tensors[i]->dtype));
    }
    tn_scope_begin();
    tn_tensor **ts = (tn_tensor **)TN_MALLOC((size_t)n * sizeof(tn_tensor *));
    int64_t *p = (int64_t *)TN_MALLOC((size_t)(n + 1) * sizeof(int64_t));
    double *cost = (double *)TN_MALLOC((size_t)n * (size_t)n * sizeof(double));
    int64_t *split = (int64_t *)TN_MALLOC((size_t)n * (size_t)n * sizeof(int64_t));
    tn_tensor *r = NULL;
    const bool first1 = tensors[0]->ndim == 1, last1 = tensors[n - 1]->ndim == 1;
    if (!ts || !p || !cost || !split) tn__error("%s: out of memory", fn);
    else {
        bool ok = true;
        for (int i = 0; i < n && ok; i++) {
            ts[i] = tensors[i];
            if (i == 0 && first1) ts[i] = tn_unsqueeze(ts[i], 0);
            if (i == n - 1 && last1) ts[i] = tn_unsqueeze(ts[i], -1);
            ok = ts[i] != NULL;
            if (ok && i > 0 && ts[i - 1]->shape[1] != ts[i]->shape[0]) {
                tn__error("%s: multi_dot(): tensors %d and %d with shapes %s and %s cannot be multiplied", fn, i - 1, i, TN__SHAPE(ts[i - 1]), TN__SHAPE(ts[i]));
                ok = false;
            }
        }
        if (ok) {
            for (int i = 0; i < n; i++) p[i] = ts[i]->shape[0];
            p[n] = ts[n - 1]->shape[1];
            /* cost[i, j]: the fewest scalar products for ts[i..j] (in double: no overflow) */
            for (int i = 0; i < n; i++) cost[i * n + i] = 0;
            for (int len = 1; len < n; len++)
                for (int i = 0; i + len < n; i++) {
                    const int j = i + len;
                    cost[i * n + j] = INFINITY;
                    for (int k = i; k < j; k++) {
                        double c = cost[i * n + k] + cost[(k + 1) * n + j] + (double)p[i] * (double)p[k + 1] * (double)p[j + 1];
                        if (c < cost[i * n + j]) { cost[i * n + j] = c; split[i * n + j] = k; }
                    }
                }
            r = tn__multi_dot_rec(ts, split, n, 0, n - 1);
            if (r && first1) r = tn_squeeze_dim(r, 0);
            if (r && last1) r = tn_squeeze_dim(r, -1);
        }
    }
    TN_FREE(ts); TN_FREE(p); TN_FREE(cost); TN_FREE(split);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_multi_dot(tn_tensor *const *tensors, int n) { return TN__AS("tn_linalg_multi_dot", tn__multi_dot_impl(tensors, n)); }

static tn_tensor *tn__vecdot_impl(tn_tensor *x, tn_tensor *y, int64_t dim) {
    TN__CHECK_NULL(x, y);
    const char *fn = "tn_linalg_vecdot";
    if (x->dtype != y->dtype)
        return (tn_tensor *)tn__error("%s: Expected x and y to have the same dtype, but found x of type %s and y of type %s instead", fn,
                                      tn__torch_type_name(x->dtype), tn__torch_type_name(y->dtype));
    tn_scope_begin();
    tn_tensor *p = tn_mul(tn_conj(x), y), *r = NULL;   /* sum(conj(x) y); of a real x, conj is x */
    if (p) {
        const int64_t d[1] = {dim};
        r = tn__wrap_dim(fn, dim, p->ndim) < 0 ? NULL : tn_sum_dims(p, d, 1);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_vecdot_opts(tn_tensor *x, tn_tensor *y, tn_vecdot_fn_opts o) { return TN__AS("tn_linalg_vecdot", tn__vecdot_impl(x, y, o.dim)); }
TNDEF tn_tensor *tn_linalg_vecdot_str(tn_tensor *x, tn_tensor *y, const char *options) { TN__KW_STR(tn_vecdot_fn_opts, vecdot, "tn_linalg_vecdot", options, tn_linalg_vecdot_opts(x, y, o)); }

/* ---- vander: the powers x^0 .. x^(N-1) along a new last dim, by cumprod (as torch: a
   gradient without pow's 0 * inf at x = 0) ---- */
static tn_tensor *tn__vander_impl(tn_tensor *x, int64_t N) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_linalg_vander";
    if (x->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: bool tensors are not supported", fn);
    const int64_t n = x->ndim ? x->shape[x->ndim - 1] : 1;   /* a 0-d x is one value (torch's [1, N]) */
    if (N == TN_NONE) N = n;
    if (N <= 1) return (tn_tensor *)tn__error("%s: N must be greater than 1.", fn);   /* torch's check (N = 0, 1 too) */
    tn_scope_begin();
    if (x->ndim == 0) x = tn_unsqueeze(x, 0);
    int64_t shape[TN_MAX_DIMS];
    if (x) memcpy(shape, x->shape, (size_t)x->ndim * sizeof(int64_t));
    tn_tensor *u = x ? tn_unsqueeze(x, -1) : NULL, *r = NULL;
    if (u) {
        shape[x->ndim] = 1;
        tn_tensor *ones = tn_ones(shape, x->ndim + 1, x->dtype);
        shape[x->ndim] = N - 1;
        tn_tensor *parts[2] = {ones, tn_expand(u, shape, x->ndim + 1)};
        r = tn_cumprod(tn_cat(parts, 2, .dim = -1), -1);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_vander_opts(tn_tensor *x, tn_vander_fn_opts o) { return TN__AS("tn_linalg_vander", tn__vander_impl(x, o.N)); }
TNDEF tn_tensor *tn_linalg_vander_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_vander_fn_opts, vander, "tn_linalg_vander", options, tn_linalg_vander_opts(x, o)); }

/* ---- householder_product: Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column of
   A below the diagonal with a 1 on it (LAPACK's orgqr), first n columns; applied from the
   right end to an m x n identity, in library ops (differentiable) ---- */
static int tn__zeros2_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)g; (void)user;
    for (int i = 0; i < nin; i++)
        if (tn_ctx_needs_grad(n, i) && !(gin[i] = tn_zeros_like(tn_ctx_saved(n, i)))) return -1;
    return 0;
}
/* whether autograd records a node on these inputs (NULL: none) */
static bool tn__la_wants_grad(tn_tensor *a, tn_tensor *b, tn_tensor *c) {
    return tn_is_grad_enabled() && ((a && a->requires_grad) || (b && b->requires_grad) || (c && c->requires_grad));
}
/* ormqr by the device's entry (TN_LA_ORMQR), no history: A [..., q, >= k] holds the reflectors,
   tau [..., k], C [..., q, r] (left) or [..., r, q], one batch shape; the result in C's dtype there */
static tn_tensor *tn__ormqr_dev(tn_tensor *A, tn_tensor *tau, tn_tensor *C, bool left, bool transpose) {
    const int64_t k = tau->shape[tau->ndim - 1], s2[2] = {tn__la_batch(A), k};
    tn_tensor *a = tn__la_cm(tn_narrow(A, -1, 0, k)), *t = tn_reshape(tn_contiguous(tn_detach(tau)), s2, 2), *c = tn__la_cm(C);
    if (!a || !t || !c || tn__la_run(TN_LA_ORMQR, a, t, c, NULL, NULL, (left ? 1 : 0) | (transpose ? 2 : 0))) return NULL;
    return tn__la_uncm(c, C, C->shape[C->ndim - 2], C->shape[C->ndim - 1]);
}
static tn_tensor *tn__householder_impl(tn_tensor *A, tn_tensor *tau) {
    TN__CHECK_NULL(A, tau);
    const char *fn = "tn_linalg_householder_product";
    if (A->ndim < 2) return (tn_tensor *)tn__error("%s: input must have at least 2 dimensions.", fn);
    if (tn__la_check_dev(fn, A, "input", false) || tn__check_same_device(fn, A, tau)) return NULL;
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    if (m < n) return (tn_tensor *)tn__error("%s: input.shape[-2] must be greater than or equal to input.shape[-1]", fn);
    if (tau->ndim != A->ndim - 1) return (tn_tensor *)tn__error("%s: input.dim() must be greater than tau.dim() by 1", fn);
    const int64_t k = tau->shape[tau->ndim - 1];
    if (k > n) return (tn_tensor *)tn__error("%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", fn);
    if (memcmp(tau->shape, A->shape, (size_t)(A->ndim - 2) * sizeof(int64_t)))
        return (tn_tensor *)tn__error("%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got tau %s and input %s", fn, TN__SHAPE(tau), TN__SHAPE(A));
    if (tau->dtype != A->dtype)
        return (tn_tensor *)tn__error("%s: tau dtype %s does not match input dtype %s", fn, tn__torch_type_name(tau->dtype), tn__torch_type_name(A->dtype));
    tn_scope_begin();
    tn_tensor *eye = tn_to(tn_eye(m, n, A->dtype), A->device);
    tn_tensor *V = tn_add(tn__tril(A, -1), eye), *Q = tn_contiguous(tn_expand(eye, A->shape, A->ndim));
    /* on a device without a gradient to record: orgqr's product, Q I by the entry's ormqr;
       with one, the composite below (its gradient), whose library ops run there too */
    if (Q && tn__la_routed(A, true) && !tn__la_wants_grad(A, tau, NULL)) return tn__scope_return(tn__ormqr_dev(A, tau, Q, true, false));
    if (k == 0 && Q) {   /* no reflection: I, in the graph of both inputs with zero gradients (as torch's) */
        tn_tensor *ins[2] = {A, tau};
        tn_node *nd = tn__fn_node("LinalgHouseholderProductBackward0", tn__zeros2_bw, ins, 2);
        if (nd) { tn__node_save(nd, A); tn__node_save(nd, tau); }
        Q = tn__node_attach(nd, tn_clone(Q));
    }
    for (int64_t i = k - 1; i >= 0 && Q; i--) {
        tn_tensor *v = tn_narrow(V, -1, i, 1), *t = tn_unsqueeze(tn_narrow(tau, -1, i, 1), -1);
        Q = tn_sub(Q, tn_mul(t, tn_matmul(v, tn_matmul(tn__mH(v), Q))));   /* H_i = I - tau_i v_i v_i^H */
    }
    return tn__scope_return(V ? Q : NULL);
}
TNDEF tn_tensor *tn_linalg_householder_product(tn_tensor *A, tn_tensor *tau) {
    return tn__grad_name(TN__AS("tn_linalg_householder_product", tn__householder_impl(A, tau)), "LinalgHouseholderProductBackward0");
}

/* ---- ormqr: op(Q) C or C op(Q), Q = H_1 ... H_k from geqrf's packed reflectors (LAPACK's
   ormqr), without forming Q: each H_i = I - tau_i v_i v_i^T applied to C in turn (O(m n k)),
   in library ops, so differentiable in all three inputs (2025 PyTorch's ormqr_backward; 1.13
   had none) ---- */
static tn_tensor *tn__ormqr_impl(tn_tensor *A, tn_tensor *tau, tn_tensor *C, bool left, bool transpose) {
    TN__CHECK_NULL(A, tau, C);
    const char *fn = "tn_ormqr";
    if (A->ndim < 2) return (tn_tensor *)tn__error("%s: torch.ormqr: input must have at least 2 dimensions.", fn);
    if (C->ndim < 2) return (tn_tensor *)tn__error("%s: torch.ormqr: other must have at least 2 dimensions.", fn);
    if (A->dtype != TN_F32 && A->dtype != TN_F64 && !tn_dtype_is_complex(A->dtype))
        return (tn_tensor *)tn__error("%s: torch.ormqr: Expected a floating point or complex tensor as input. Got %s", fn, tn_dtype_name(A->dtype));
    if (tn__la_check_dev(fn, A, "input", false)) return NULL;
    const int nd = A->ndim, cond = left ? -2 : -1;
    const int64_t k = tau->ndim ? tau->shape[tau->ndim - 1] : 0, mn = C->shape[C->ndim + cond];
    if (tau->ndim == 0 || mn < k)
        return (tn_tensor *)tn__error("%s: torch.ormqr: other.shape[%d] must be greater than or equal to tau.shape[-1] (other %s, tau %s)", fn, cond,
                                      TN__SHAPE(C), TN__SHAPE(tau));
    if (mn != A->shape[nd - 2])
        return (tn_tensor *)tn__error("%s: torch.ormqr: other.shape[%d] must be equal to input.shape[-2] (other %s, input %s)", fn, cond, TN__SHAPE(C), TN__SHAPE(A));
    if (k > A->shape[nd - 1])
        return (tn_tensor *)tn__error("%s: torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1] (tau %s, input %s)", fn, TN__SHAPE(tau), TN__SHAPE(A));
    if (tau->ndim != nd - 1)
        return (tn_tensor *)tn__error("%s: torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and input.ndim is equal to %d", fn,
                                      tau->ndim, nd);
    if (C->ndim != nd)
        return (tn_tensor *)tn__error("%s: torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim equal to %d and input.ndim is equal to %d", fn,
                                      C->ndim, nd);
    if (memcmp(tau->shape, A->shape, (size_t)(nd - 2) * sizeof(int64_t)) || memcmp(C->shape, A->shape, (size_t)(nd - 2) * sizeof(int64_t)))
        return (tn_tensor *)tn__error("%s: torch.ormqr: Expected batch dimensions of tau and other to be equal to input.shape[:-2], but got input %s, tau %s, other %s", fn,
                                      TN__SHAPE(A), TN__SHAPE(tau), TN__SHAPE(C));
    if (tau->dtype != A->dtype || C->dtype != A->dtype)
        return (tn_tensor *)tn__error("%s: torch.ormqr: Expected input, tau and other to have the same dtype, but got input %s, tau %s, other %s", fn,
                                      tn__torch_type_name(A->dtype), tn__torch_type_name(tau->dtype), tn__torch_type_name(C->dtype));
    if (tn__check_same_device(fn, A, tau) || tn__check_same_device(fn, A, C)) return NULL;
    /* on a device without a gradient to record: the entry's ormqr; with one, the composite */
    tn_scope_begin();
    if (tn__la_routed(A, true) && !tn__la_wants_grad(A, tau, C)) return tn__scope_return(tn__ormqr_dev(A, tau, C, left, transpose));
    /* v_i: column i of A below the diagonal, 1 on it */
    tn_tensor *V = tn_add(tn__tril(A, -1), tn_to(tn_eye(mn, A->shape[nd - 1], A->dtype), A->device)), *R = tn_clone(C);
    /* Q C = H_1 (... (H_k C)): the last reflector first; Q^H C and C Q the first first.
       Complex: H_i = I - tau_i v_i v_i^H, H_i^H = I - conj(tau_i) v_i v_i^H (LAPACK's unmqr) */
    const bool rev = left != transpose, cplx = tn_dtype_is_complex(A->dtype);
    for (int64_t j = 0; j < k && R && V; j++) {
        const int64_t i = rev ? k - 1 - j : j;
        tn_tensor *v = tn_narrow(V, -1, i, 1), *t = tn_unsqueeze(tn_narrow(tau, -1, i, 1), -1);
        tn_tensor *vh = tn_transpose(cplx ? tn_conj(v) : v, -2, -1);
        if (transpose && cplx) t = tn_conj(t);
        R = left ? tn_sub(R, tn_mul(t, tn_matmul(v, tn_matmul(vh, R)))) : tn_sub(R, tn_mul(t, tn_matmul(tn_matmul(R, v), vh)));
    }
    return tn__scope_return(V ? R : NULL);
}
TNDEF tn_tensor *tn_ormqr_opts(tn_tensor *input, tn_tensor *tau, tn_tensor *other, tn_ormqr_fn_opts o) {
    return tn__grad_name(TN__AS("tn_ormqr", tn__ormqr_impl(input, tau, other, o.left, o.transpose)), "OrmqrBackward0");
}
TNDEF tn_tensor *tn_ormqr_str(tn_tensor *input, tn_tensor *tau, tn_tensor *other, const char *options) {
    TN__KW_STR(tn_ormqr_fn_opts, ormqr, "tn_ormqr", options, tn_ormqr_opts(input, tau, other, o));
}

/* ---- tensorinv, tensorsolve: inv and solve of the reshaped matrix ---- */
static tn_tensor *tn__tensorinv_impl(tn_tensor *A, int64_t ind) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_tensorinv";
    if (ind <= 0) return (tn_tensor *)tn__error("%s: Expected a strictly positive integer for 'ind', but got %lld", fn, (long long)ind);
    if (ind > A->ndim) return (tn_tensor *)tn__error("%s: 'ind' %lld is larger than the number of dims %d", fn, (long long)ind, A->ndim);
    int64_t p1 = 1, p2 = 1;
    for (int i = 0; i < A->ndim; i++)
        if (!tn__mul_ok(i < ind ? p1 : p2, A->shape[i], i < ind ? &p1 : &p2)) return (tn_tensor *)tn__error("%s: sizes overflow", fn);
    if (p1 != p2)
        return (tn_tensor *)tn__error("%s: Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got %lld != %lld", fn,
                                      (long long)p2, (long long)p1);
    tn_scope_begin();
    int64_t shape[TN_MAX_DIMS];
    int r_nd = 0;
    for (int i = (int)ind; i < A->ndim; i++) shape[r_nd++] = A->shape[i];
    for (int i = 0; i < (int)ind; i++) shape[r_nd++] = A->shape[i];
    tn_tensor *r = tn_reshape(tn_linalg_inv(tn_reshape(A, TN_SHAPE(p1, p2))), shape, r_nd);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_tensorinv_opts(tn_tensor *A, tn_tensorinv_fn_opts o) { return TN__AS("tn_linalg_tensorinv", tn__tensorinv_impl(A, o.ind)); }
TNDEF tn_tensor *tn_linalg_tensorinv_str(tn_tensor *A, const char *options) { TN__KW_STR(tn_tensorinv_fn_opts, tensorinv, "tn_linalg_tensorinv", options, tn_linalg_tensorinv_opts(A, o)); }

static tn_tensor *tn__tensorsolve_impl(tn_tensor *A, tn_tensor *Bm, const int64_t *dims, int nd) {
    TN__CHECK_NULL(A, Bm);
    const char *fn = "tn_linalg_tensorsolve";
    tn_scope_begin();
    tn_tensor *a = A, *r = NULL;
    if (nd > 0) {   /* the given dims of A move to the end, in order (torch's movedim) */
        bool moved[TN_MAX_DIMS] = {false};
        int64_t perm[TN_MAX_DIMS];
        int np = 0;
        for (int i = 0; i < nd; i++) {
            int d = tn__wrap_dim(fn, dims[i], A->ndim);
            if (d < 0) return tn__scope_return(NULL);
            moved[d] = true;
        }
        for (int i = 0; i < A->ndim; i++) if (!moved[i]) perm[np++] = i;
        for (int i = 0; i < nd; i++) perm[np++] = tn__wrap_dim(fn, dims[i], A->ndim);
        a = np == A->ndim ? tn_permute(A, perm, np) : NULL;
        if (!a) tn__error("%s: dims holds a repeated dim", fn);
    }
    if (a) {
        /* torch compares the products only: prod(A.shape[B.ndim:]) == B.numel() */
        const int bn = Bm->ndim;
        int64_t pb = tn_numel(Bm), pr = 1, shape[TN_MAX_DIMS];
        bool ok = bn <= a->ndim && tn_numel(a) / (pb ? pb : 1) == pb;
        int rn = 0;
        for (int i = bn; ok && i < a->ndim; i++) { shape[rn++] = a->shape[i]; if (!tn__mul_ok(pr, a->shape[i], &pr)) ok = false; }
        if (!ok || pr != pb)
            tn__error("%s: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got A %s and B %s", fn,
                      TN__SHAPE(a), TN__SHAPE(Bm));
        else
            r = tn_reshape(tn_linalg_solve(tn_reshape(a, TN_SHAPE(pb, pr)), tn_reshape(Bm, TN_SHAPE(pb))), shape, rn);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_tensorsolve(tn_tensor *A, tn_tensor *B, const int64_t *dims, int n) {
    return TN__AS("tn_linalg_tensorsolve", tn__tensorsolve_impl(A, B, dims, n));
}

/* ---- ldl_factor, ldl_solve: LAPACK's sytrf / sytrs and hetrf / hetrs (lower), Bunch-Kaufman ----
   Not differentiable (as torch's). LD holds L below the diagonal and the 1x1 / 2x2 blocks of
   D on it (and the first subdiagonal for a 2x2 block); pivots are LAPACK's, 1-based: k for a
   1x1 block that swapped rows k and kp (kp > 0), -kp on both rows of a 2x2 block. One
   template over the scalar: P is the prefix of its arithmetic (P##mul, P##div, ...: tn__c for
   complex128, tn__r, the plain operators, for float64). HERM: A = L D L^H (hetf2 / hetrs: D's diagonal is
   real, the conjugates where L^H has them); else A = L D L^T (real A: the same either way). */
static double tn__radd(double a, double b) { return a + b; }
static double tn__rsub(double a, double b) { return a - b; }
static double tn__rmul(double a, double b) { return a * b; }
static double tn__rdiv(double a, double b) { return a / b; }
static double tn__rconj(double a) { return a; }
static double tn__rabs(double a) { return fabs(a); }
static double tn__rabs1(double a) { return fabs(a); }
static double tn__rreal(double a) { return a; }
static double tn__rof(double a) { return a; }
static double tn__rscale(double a, double s) { return a * s; }
static double tn__creal(tn__cplx z) { return z.re; }
static tn__cplx tn__cof(double a) { return tn__cx(a, 0); }   /* (the real number as a complex one) */
/* sytf2 / hetf2 ('L') on a row-major n x n (the lower triangle read and written): info, as
   LAPACK's. Pivots are chosen on |re| + |im| (izamax's; |x| for real), the diagonal's on
   |re| where HERM. The updates keep LAPACK's order of operations. */
/* @template TN__LA_SYTF2(NAME, T, P, HERM) */
static int64_t NAME(T *a, int64_t n, int32_t *piv) {
#define A_(i, j) a[(i) * n + (j)]
#define G_(x) (HERM ? P##conj(x) : (x))                   /* the conjugate where L^H has it */
#define D_(x) (HERM ? P##of(P##real(x)) : (x))            /* a diagonal entry of a Hermitian matrix */
#define DABS_(x) (HERM ? fabs(P##real(x)) : P##abs1(x))
    const double alpha = (1 + sqrt(17.0)) / 8;
    int64_t info = 0;
    for (int64_t k = 0; k < n;) {
        int64_t kstep = 1, kp = k, imax = k;
        const double absakk = DABS_(A_(k, k));
        double colmax = 0;
        for (int64_t i = k + 1; i < n; i++)
            if (P##abs1(A_(i, k)) > colmax) { colmax = P##abs1(A_(i, k)); imax = i; }
        if ((absakk > colmax ? absakk : colmax) == 0 || absakk != absakk) {
            if (!info) info = k + 1;
            kp = k;
            A_(k, k) = D_(A_(k, k));
        } else {
            if (absakk >= alpha * colmax) kp = k;
            else {   /* the largest off-diagonal of row / column imax */
                double rowmax = 0;
                for (int64_t j = k; j < imax; j++) rowmax = P##abs1(A_(imax, j)) > rowmax ? P##abs1(A_(imax, j)) : rowmax;
                for (int64_t j = imax + 1; j < n; j++) rowmax = P##abs1(A_(j, imax)) > rowmax ? P##abs1(A_(j, imax)) : rowmax;
                if (absakk >= alpha * colmax * (colmax / rowmax)) kp = k;
                else if (DABS_(A_(imax, imax)) >= alpha * rowmax) kp = imax;
                else { kp = imax; kstep = 2; }
            }
            const int64_t kk = k + kstep - 1;
            if (kp != kk) {   /* rows and columns kk and kp of the trailing matrix */
                T t;
                for (int64_t i = kp + 1; i < n; i++) { t = A_(i, kk); A_(i, kk) = A_(i, kp); A_(i, kp) = t; }
                for (int64_t j = kk + 1; j < kp; j++) { t = G_(A_(j, kk)); A_(j, kk) = G_(A_(kp, j)); A_(kp, j) = t; }
                if (HERM) A_(kp, kk) = G_(A_(kp, kk));
                t = A_(kk, kk); A_(kk, kk) = A_(kp, kp); A_(kp, kp) = D_(t);
                if (kstep == 2) { t = A_(k + 1, k); A_(k + 1, k) = A_(kp, k); A_(kp, k) = t; }
            }
            A_(k, k) = D_(A_(k, k));
            if (kstep == 2) A_(k + 1, k + 1) = D_(A_(k + 1, k + 1));
            if (kstep == 1) {   /* A22 -= x d11 x^T (syr / her), x /= d */
                const T d11 = P##div(P##of(1), A_(k, k));
                for (int64_t j = k + 1; j < n; j++) {
                    const T xj = P##mul(G_(A_(j, k)), d11);
                    for (int64_t i = j; i < n; i++) A_(i, j) = P##sub(A_(i, j), P##mul(A_(i, k), xj));
                    A_(j, j) = D_(A_(j, j));
                }
                for (int64_t i = k + 1; i < n; i++) A_(i, k) = P##mul(A_(i, k), d11);
            } else if (k < n - 2) {
                /* sytf2: s = d21; hetf2: s = |d21| and u = d21 / s, a unit, where sytf2 has 1 */
                const T d21 = A_(k + 1, k);
                T d11, d22, dd, u = P##of(1);
                if (HERM) {
                    const double s = P##abs(d21), r11 = P##real(A_(k + 1, k + 1)) / s, r22 = P##real(A_(k, k)) / s;
                    d11 = P##of(r11); d22 = P##of(r22);
                    u = P##scale(d21, 1 / s);
                    dd = P##of(1 / (r11 * r22 - 1) / s);
                } else {
                    d11 = P##div(A_(k + 1, k + 1), d21); d22 = P##div(A_(k, k), d21);
                    dd = P##div(P##div(P##of(1), P##sub(P##mul(d11, d22), P##of(1))), d21);
                }
                for (int64_t j = k + 2; j < n; j++) {
                    const T wk = P##mul(dd, P##sub(P##mul(d11, A_(j, k)), HERM ? P##mul(u, A_(j, k + 1)) : A_(j, k + 1)));
                    const T wkp1 = P##mul(dd, P##sub(P##mul(d22, A_(j, k + 1)), HERM ? P##mul(G_(u), A_(j, k)) : A_(j, k)));
                    for (int64_t i = j; i < n; i++) A_(i, j) = P##sub(P##sub(A_(i, j), P##mul(A_(i, k), G_(wk))), P##mul(A_(i, k + 1), G_(wkp1)));
                    A_(j, k) = wk;
                    A_(j, k + 1) = wkp1;
                    A_(j, j) = D_(A_(j, j));
                }
            }
        }
        if (kstep == 1) piv[k] = (int32_t)(kp + 1);
        else piv[k] = piv[k + 1] = (int32_t)-(kp + 1);
        k += kstep;
    }
    return info;
#undef DABS_
#undef D_
#undef G_
#undef A_
}
/* @end TN__LA_SYTF2 */
/* sytrs / hetrs ('L'): solves A X = B in place (B n x m row-major) from the factors above. */
/* @template TN__LA_SYTRS(NAME, T, P, HERM) */
static void NAME(const T *a, const int32_t *piv, int64_t n, T *b, int64_t m) {
#define A_(i, j) a[(i) * n + (j)]
#define G_(x) (HERM ? P##conj(x) : (x))
#define SWAP_ROWS(r, s) do { if ((r) != (s)) for (int64_t c = 0; c < m; c++) { T t_ = b[(r) * m + c]; b[(r) * m + c] = b[(s) * m + c]; b[(s) * m + c] = t_; } } while (0)
    for (int64_t k = 0; k < n;) {   /* L D y = P b */
        if (piv[k] > 0) {
            SWAP_ROWS(k, (int64_t)piv[k] - 1);
            for (int64_t i = k + 1; i < n; i++)
                for (int64_t c = 0; c < m; c++) b[i * m + c] = P##sub(b[i * m + c], P##mul(A_(i, k), b[k * m + c]));
            const T d = P##div(P##of(1), HERM ? P##of(P##real(A_(k, k))) : A_(k, k));
            for (int64_t c = 0; c < m; c++) b[k * m + c] = P##mul(b[k * m + c], d);
            k++;
        } else {
            SWAP_ROWS(k + 1, (int64_t)-piv[k] - 1);
            for (int64_t i = k + 2; i < n; i++)
                for (int64_t c = 0; c < m; c++)
                    b[i * m + c] = P##sub(P##sub(b[i * m + c], P##mul(A_(i, k), b[k * m + c])), P##mul(A_(i, k + 1), b[(k + 1) * m + c]));
            const T akm1k = A_(k + 1, k), akm1 = P##div(A_(k, k), G_(akm1k)), ak = P##div(A_(k + 1, k + 1), akm1k);
            const T denom = P##sub(P##mul(akm1, ak), P##of(1));
            for (int64_t c = 0; c < m; c++) {
                const T bkm1 = P##div(b[k * m + c], G_(akm1k)), bk = P##div(b[(k + 1) * m + c], akm1k);
                b[k * m + c] = P##div(P##sub(P##mul(ak, bkm1), bk), denom);
                b[(k + 1) * m + c] = P##div(P##sub(P##mul(akm1, bk), bkm1), denom);
            }
            k += 2;
        }
    }
    for (int64_t k = n - 1; k >= 0;) {   /* L^T P^T x = y (L^H: hetrs) */
        const int64_t k0 = piv[k] > 0 ? k : k - 1;   /* the block's first row */
        for (int64_t r = k; r >= k0; r--)   /* gemv: the dot product first, then subtracted */
            for (int64_t c = 0; c < m && k + 1 < n; c++) {
                T s = P##mul(G_(A_(k + 1, r)), b[(k + 1) * m + c]);
                for (int64_t i = k + 2; i < n; i++) s = P##add(s, P##mul(G_(A_(i, r)), b[i * m + c]));
                b[r * m + c] = P##sub(b[r * m + c], s);
            }
        SWAP_ROWS(k, (int64_t)(piv[k] > 0 ? piv[k] : -piv[k]) - 1);
        k = k0 - 1;
    }
#undef SWAP_ROWS
#undef G_
#undef A_
}
/* @end TN__LA_SYTRS */
TN__LA_SYTF2(tn__la_sytf2, double, tn__r, 0)
TN__LA_SYTF2(tn__la_sytf2_c, tn__cplx, tn__c, 0)
TN__LA_SYTF2(tn__la_hetf2_c, tn__cplx, tn__c, 1)
TN__LA_SYTRS(tn__la_sytrs, double, tn__r, 0)
TN__LA_SYTRS(tn__la_sytrs_c, tn__cplx, tn__c, 0)
TN__LA_SYTRS(tn__la_hetrs_c, tn__cplx, tn__c, 1)
#define TN__LA_LDL_SINGULAR "The factorization could not be completed because the input is singular (D[%d, %d] is zero)"
/* on a device: its entry's sytrf (PyTorch's cuSOLVER route) on the column-major lower triangle
   (the upper one zero, as the CPU's); complex Hermitian has no cuSOLVER routine (PyTorch takes
   MAGMA's hetrf there, or refuses with cuSOLVER alone, as here) */
static tn_tensor *tn__ldl_factor_dev(const char *fn, tn_tensor *A, bool hermitian, bool check_errors, tn_tensor **pivots, tn_tensor **info) {
    if (hermitian && tn_is_complex(A))
        return (tn_tensor *)tn__error("%s: complex tensors with hermitian=True flag are not supported on %s (cuSOLVER's sytrf is symmetric only)", fn, tn_device_name(A->device));
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A);
    tn_scope_begin();
    tn_tensor *cm = tn__la_cm(tn__tril(tn_detach(A), 0)), *p = tn__la_dnew(TN_I32, A, B, n, 0, 2), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1), *r = NULL;
    if (cm && p && f && !tn__la_run(TN_LA_SYTRF, cm, NULL, NULL, p, f, 0)) {
        tn_tensor *fi = tn__la_unbatch(f, A, 0), *pi = tn__la_unbatch(p, A, 1);
        if (fi && pi && !(check_errors && tn__la_info_error(fn, fi, TN__LA_LDL_SINGULAR))) {
            r = tn_keep(tn_contiguous(tn__la_uncm(cm, A, n, n)));
            *pivots = tn_keep(pi);
            if (info) *info = tn_keep(fi);
        }
    }
    tn_scope_end();
    return r;
}
static tn_tensor *tn__ldl_factor_impl(const char *fn, tn_tensor *A, bool hermitian, bool check_errors, tn_tensor **pivots, tn_tensor **info) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    if (A->device != TN_CPU) return tn__ldl_factor_dev(fn, A, hermitian, check_errors, pivots, info);
    tn_scope_begin();
    const int nd = A->ndim;
    const int64_t n = A->shape[nd - 1], B = tn__la_batch(A);
    tn_tensor *w = tn__la_work(tn__tril(tn_detach(A), 0));
    tn_tensor *p = tn__own(tn__new(TN_I32, TN_CPU, A->shape, nd - 1)), *f = tn__own(tn__new(TN_I32, TN_CPU, A->shape, nd - 2)), *r = NULL;
    if (w && p && f) {
        int32_t *pv = (int32_t *)tn_data_ptr(p), *fv = (int32_t *)tn_data_ptr(f);
        /* real A: sytrf either way; complex: sytrf (L D L^T) or hetrf (L D L^H) */
        const bool cplx = tn_is_complex(w);
        for (int64_t b = 0; b < B; b++)
            fv[b] = (int32_t)(!cplx      ? tn__la_sytf2((double *)tn_data_ptr(w) + b * n * n, n, pv + b * n)
                              : hermitian ? tn__la_hetf2_c((tn__cplx *)tn_data_ptr(w) + b * n * n, n, pv + b * n)
                                          : tn__la_sytf2_c((tn__cplx *)tn_data_ptr(w) + b * n * n, n, pv + b * n));
        if (!(check_errors && tn__la_info_error(fn, f, TN__LA_LDL_SINGULAR))) {
            r = tn_keep(tn_to_dtype(w, A->dtype));
            *pivots = tn_keep(p);
            if (info) *info = tn_keep(f);
        }
    }
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_linalg_ldl_factor_ex_opts(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, tn_ldl_factor_ex_fn_opts o) {
    if (pivots) *pivots = NULL;
    if (info) *info = NULL;
    if (!pivots) return (tn_tensor *)tn__error("tn_linalg_ldl_factor_ex: pivots must not be NULL");
    return TN__AS("tn_linalg_ldl_factor_ex", tn__ldl_factor_impl("tn_linalg_ldl_factor_ex", A, o.hermitian, o.check_errors, pivots, info));
}
TNDEF tn_tensor *tn_linalg_ldl_factor_ex_str(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, const char *options) { if (pivots) *pivots = NULL; if (info) *info = NULL; TN__KW_STR(tn_ldl_factor_ex_fn_opts, ldl_factor_ex, "tn_linalg_ldl_factor_ex", options, tn_linalg_ldl_factor_ex_opts(A, pivots, info, o)); }
TNDEF tn_tensor *tn_linalg_ldl_factor_opts(tn_tensor *A, tn_tensor **pivots, tn_ldl_factor_fn_opts o) {
    if (pivots) *pivots = NULL;
    if (!pivots) return (tn_tensor *)tn__error("tn_linalg_ldl_factor: pivots must not be NULL");
    return TN__AS("tn_linalg_ldl_factor", tn__ldl_factor_impl("tn_linalg_ldl_factor", A, o.hermitian, true, pivots, NULL));
}
TNDEF tn_tensor *tn_linalg_ldl_factor_str(tn_tensor *A, tn_tensor **pivots, const char *options) { if (pivots) *pivots = NULL; TN__KW_STR(tn_ldl_factor_fn_opts, ldl_factor, "tn_linalg_ldl_factor", options, tn_linalg_ldl_factor_opts(A, pivots, o)); }
static tn_tensor *tn__ldl_solve_impl(tn_tensor *LD, tn_tensor *pivots, tn_tensor *Bm, bool hermitian) {
    TN__CHECK_NULL(LD, pivots, Bm);
    const char *fn = "tn_linalg_ldl_solve";
    if (tn__check_same_device(fn, LD, pivots)) return NULL;
    /* (PyTorch's CUDA message: no Hermitian sytrs for complex in cuSOLVER) */
    if (LD->device != TN_CPU && hermitian && tn_is_complex(LD))
        return (tn_tensor *)tn__error("%s: complex tensors with hermitian=True flag are not supported on %s.", fn, tn_device_name(LD->device));
    if (pivots->dtype != TN_I32) return (tn_tensor *)tn__error("%s: Expected pivots to be integers. Got %s", fn, tn__torch_type_name(pivots->dtype));
    if (LD->ndim >= 2 && (pivots->ndim != LD->ndim - 1 || memcmp(pivots->shape, LD->shape, (size_t)(LD->ndim - 1) * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape %s instead", fn, TN__SHAPE(pivots));
    tn_scope_begin();
    tn_tensor *a = NULL, *b = NULL, *r = NULL;
    if (!tn__la_broadcast_pair(fn, LD, Bm, true, &a, &b)) {
        const int64_t n = a->shape[a->ndim - 1], k = b->shape[b->ndim - 1], nb = tn__la_batch(a);
        int64_t ps[TN_MAX_DIMS];
        memcpy(ps, a->shape, sizeof ps);
        tn_tensor *pc = tn_contiguous(tn_expand(pivots, ps, a->ndim - 1));
        if (pc && a->device != TN_CPU) {   /* the entry's sytrs (cuSOLVER's Xsytrs), the pivots checked there first (one read back) */
            const int64_t s2[2] = {nb, n};
            tn_tensor *bad = tn_any(tn_logical_or(tn_eq_scalar(pc, 0), tn_gt_scalar(tn_abs(pc), (double)n)));
            tn_tensor *cm = tn__la_cm(a), *x = tn__la_cm(b), *p2 = tn_reshape(pc, s2, 2);
            if (!bad || !cm || !x || !p2) return tn__scope_return(NULL);
            if (tn_item(bad) != 0) {
                tn__error("%s: pivots holds a value outside [-%lld, %lld] or 0", fn, (long long)n, (long long)n);
                return tn__scope_return(NULL);
            }
            return tn__scope_return(tn__la_run(TN_LA_SYTRS, cm, x, NULL, p2, NULL, 0) ? NULL : tn_contiguous(tn__la_uncm(x, b, n, k)));
        }
        tn_tensor *ld = pc ? tn__la_work(a) : NULL, *x = pc ? tn__la_work(b) : NULL;
        if (pc && ld && x) {
            const int32_t *pv = (const int32_t *)tn_data_ptr(pc);
            bool ok = true;
            for (int64_t i = 0, N = tn_numel(pc); ok && i < N; i++) ok = pv[i] != 0 && pv[i] >= -n && pv[i] <= n;
            if (!ok) tn__error("%s: pivots holds a value outside [-%lld, %lld] or 0", fn, (long long)n, (long long)n);
            else {
                for (int64_t bi = 0; bi < nb; bi++) {
                    if (!tn_is_complex(ld)) tn__la_sytrs((const double *)tn_data_ptr(ld) + bi * n * n, pv + bi * n, n, (double *)tn_data_ptr(x) + bi * n * k, k);
                    else (hermitian ? tn__la_hetrs_c : tn__la_sytrs_c)((const tn__cplx *)tn_data_ptr(ld) + bi * n * n, pv + bi * n, n,
                                                                       (tn__cplx *)tn_data_ptr(x) + bi * n * k, k);
                }
                r = tn_to_dtype(x, LD->dtype);
            }
        }
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_ldl_solve_opts(tn_tensor *LD, tn_tensor *pivots, tn_tensor *B, tn_ldl_solve_fn_opts o) {
    return TN__AS("tn_linalg_ldl_solve", tn__ldl_solve_impl(LD, pivots, B, o.hermitian));
}
TNDEF tn_tensor *tn_linalg_ldl_solve_str(tn_tensor *LD, tn_tensor *pivots, tn_tensor *B, const char *options) {
    TN__KW_STR(tn_ldl_solve_fn_opts, ldl_solve, "tn_linalg_ldl_solve", options, tn_linalg_ldl_solve_opts(LD, pivots, B, o));
}
