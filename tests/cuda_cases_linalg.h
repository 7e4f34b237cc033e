/* cuda_cases_linalg.h — torch.linalg on the GPU (issue 26 item 3): the factorizations through
 * tn_backend.linalg (cuSOLVER in tensor_cuda.cu; the CPU's kernels in the checking stand-in)
 * against the CPU, values and gradients, batched, strided, float32 and float64, empty; the
 * errors for singular and non-positive-definite input (the CPU's messages); a table without
 * the entry refuses the ops (no silent copy to the CPU). Included after cuda_cases.h by
 * test_cuda.c (the real GPU unit) and test_devices.c (the stand-in, on every machine).
 * Eigen, singular and QR vectors are compared through sign-invariant functions of them
 * (cuSOLVER's may differ from the CPU's by a sign per vector). Tolerances: float32 is
 * factored in float32 on the GPU, in float64 on the CPU (1e-3, relative); float64 1e-8. */
#ifndef CUDA_CASES_LINALG_H
#define CUDA_CASES_LINALG_H
/* a symmetric positive-definite matrix of x (differentiable): x x^T + n I */
static tn_tensor *la_spd(tn_tensor *x) {
    const int64_t n = tn_shape(x)[tn_ndim(x) - 1];
    return tn_add(tn_matmul(x, tn_transpose(x, -2, -1)), tn_mul_scalar(tn_to(tn_eye(n, n, x->dtype), x->device), (double)n));
}
static tn_tensor *la_f64(tn_tensor *t) { return t ? tn_to_dtype(t, TN_F64) : NULL; }
UNARY_FN(la_solve, tn_linalg_solve(x[0], x[1]))
UNARY_FN(la_solve_right, tn_linalg_solve(x[0], x[1], .left = false))
UNARY_FN(la_inv, tn_linalg_inv(x[0]))
UNARY_FN(la_det, tn_linalg_det(x[0]))
static tn_tensor *la_slogdet(tn_tensor *const *x) { tn_tensor *s = NULL, *l = tn_linalg_slogdet(x[0], &s); return l && s ? tn_add(l, tn_mul_scalar(s, 10)) : NULL; }
static tn_tensor *la_lu_factor(tn_tensor *const *x) { tn_tensor *p = NULL, *lu = tn_linalg_lu_factor(x[0], &p); return lu && p ? tn_add(lu, tn_sum(la_f64(p))) : NULL; }
static tn_tensor *la_lu_pivots(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_lu_factor(x[0], &p) ? la_f64(p) : NULL; }
static tn_tensor *la_lu_solve(tn_tensor *const *x) { tn_tensor *p = NULL, *lu = tn_linalg_lu_factor(x[0], &p); return lu ? tn_linalg_lu_solve(lu, p, x[1]) : NULL; }
static tn_tensor *la_lu_solve_adj(tn_tensor *const *x) { tn_tensor *p = NULL, *lu = tn_linalg_lu_factor(x[0], &p); return lu ? tn_linalg_lu_solve(lu, p, x[1], .adjoint = true) : NULL; }
static tn_tensor *la_lu_unpack(tn_tensor *const *x) {
    tn_tensor *p = NULL, *lu = tn_linalg_lu_factor(x[0], &p), *L = NULL, *U = NULL, *P = lu ? tn_lu_unpack(lu, p, &L, &U) : NULL;
    return P ? tn_add(tn_matmul(P, L), U) : NULL;
}
UNARY_FN(la_chol, tn_linalg_cholesky(la_spd(x[0])))
UNARY_FN(la_chol_upper, tn_linalg_cholesky(la_spd(x[0]), .upper = true))
/* Q and R up to a sign per column of Q and row of R: Q's squares, |R| */
static tn_tensor *la_qr(tn_tensor *const *x) {
    tn_tensor *R = NULL, *Q = tn_linalg_qr(x[0], &R);
    return Q && R ? tn_add(tn_mul(Q, Q), tn_unsqueeze(tn_sum_dims(tn_abs(R), TN_DIMS(-1)), -2)) : NULL;
}
static tn_tensor *la_qr_complete(tn_tensor *const *x) {
    tn_tensor *R = NULL, *Q = tn_linalg_qr(x[0], &R, .mode = 1)   /* complete */;
    return Q && R ? tn_add(tn_sum(tn_matmul(Q, R)), tn_sum(tn_abs(R))) : NULL;
}
static tn_tensor *la_qr_r(tn_tensor *const *x) { tn_tensor *R = NULL; return tn_linalg_qr(x[0], &R, .mode = 2)   /* r */ ? tn_abs(R) : NULL; }
/* eigenvalues, V diag(L) V^T and V's squares (sign-invariant) */
static tn_tensor *la_eigh(tn_tensor *const *x) {
    tn_tensor *S = tn_add(x[0], tn_transpose(x[0], -2, -1)), *V = NULL, *L = tn_linalg_eigh(S, &V);
    return L && V ? tn_add(tn_add(tn_matmul(tn_mul(V, tn_unsqueeze(L, -2)), tn_transpose(V, -2, -1)), tn_mul(V, V)), tn_unsqueeze(L, -1)) : NULL;
}
static tn_tensor *la_eigh_upper(tn_tensor *const *x) { tn_tensor *V = NULL, *L = tn_linalg_eigh(x[0], &V, .UPLO = "U"); return L && V ? tn_add(tn_mul(V, V), tn_unsqueeze(L, -2)) : NULL; }
UNARY_FN(la_eigvalsh, tn_linalg_eigvalsh(x[0]))
/* singular values, and U Vh (sign-invariant) */
static tn_tensor *la_svd(tn_tensor *const *x) {
    tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(x[0], &S, &Vh, .full_matrices = false);
    return U && S && Vh ? tn_add(tn_matmul(U, Vh), tn_sum(S)) : NULL;
}
/* full_matrices: the shapes, S and the first k columns' U Vh (the rest are any basis of the complement) */
static tn_tensor *la_svd_full(tn_tensor *const *x) {
    tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(x[0], &S, &Vh);
    if (!U || !S || !Vh) return NULL;
    const int64_t k = tn_shape(S)[tn_ndim(S) - 1];
    /* (U's and Vh's sizes in the sum's factor: full shapes checked too) */
    return tn_add(tn_matmul(tn_narrow(U, -1, 0, k), tn_narrow(Vh, -2, 0, k)), tn_mul_scalar(tn_sum(S), (double)(tn_numel(U) + 100 * tn_numel(Vh))));
}
UNARY_FN(la_svdvals, tn_linalg_svdvals(x[0]))
UNARY_FN(la_matrix_power_neg, tn_linalg_matrix_power(x[0], -2))
UNARY_FN(la_matrix_power_0, tn_linalg_matrix_power(x[0], 0))

TEST(gpu_linalg_match_cpu) {
    tn_scope_begin();
    tn_manual_seed(26);
    tn_tensor *a = RANDN(3, 4, 4), *b = RANDN(3, 4, 2), *at = tn_transpose(RANDN(2, 5, 5), -2, -1);
    tn_tensor *a64 = tn_randn(TN_SHAPE(2, 3, 5, 5), TN_F64), *b64 = tn_randn(TN_SHAPE(2, 3, 5, 3), TN_F64);
    CHECK_OP("linalg.solve", la_solve, 1e-3, true, a, b);
    CHECK_OP("linalg.solve f64 batched", la_solve, 1e-8, true, a64, b64);
    CHECK_OP("linalg.solve vector", la_solve, 1e-3, true, a, RANDN(3, 4));
    CHECK_OP("linalg.solve left=False", la_solve_right, 1e-3, true, a, RANDN(3, 2, 4));
    CHECK_OP("linalg.solve strided", la_solve, 1e-3, true, at, tn_transpose(RANDN(2, 3, 5), -2, -1));
    CHECK_OP("linalg.inv", la_inv, 1e-3, true, a);
    CHECK_OP("linalg.inv f64", la_inv, 1e-8, true, a64);
    CHECK_OP("linalg.det", la_det, 1e-3, true, a);
    CHECK_OP("linalg.det f64 strided", la_det, 1e-8, true, tn_transpose(a64, -2, -1));
    CHECK_OP("linalg.slogdet", la_slogdet, 1e-3, true, a);
    CHECK_OP("linalg.slogdet f64", la_slogdet, 1e-8, true, a64);
    CHECK_OP("linalg.lu_factor", la_lu_factor, 1e-3, true, a);
    CHECK_OP("linalg.lu_factor pivots", la_lu_pivots, 0, false, a64);
    CHECK_OP("linalg.lu_factor wide", la_lu_factor, 1e-3, true, RANDN(2, 3, 5));
    CHECK_OP("linalg.lu_factor tall", la_lu_factor, 1e-3, true, RANDN(5, 3));
    CHECK_OP("lu_unpack", la_lu_unpack, 1e-3, true, a);
    CHECK_OP("linalg.lu_solve", la_lu_solve, 1e-3, true, a, b);
    CHECK_OP("linalg.lu_solve adjoint f64", la_lu_solve_adj, 1e-8, true, a64, b64);
    CHECK_OP("linalg.cholesky", la_chol, 1e-3, true, a);
    CHECK_OP("linalg.cholesky upper f64", la_chol_upper, 1e-8, true, a64);
    CHECK_OP("linalg.cholesky strided", la_chol, 1e-3, true, at);
    CHECK_OP("linalg.qr", la_qr, 1e-3, true, RANDN(2, 6, 4));
    CHECK_OP("linalg.qr wide f64", la_qr, 1e-8, true, tn_randn(TN_SHAPE(3, 5), TN_F64));
    CHECK_OP("linalg.qr complete", la_qr_complete, 1e-3, false, RANDN(6, 4));   /* (not differentiable for m > n, as torch) */
    CHECK_OP("linalg.qr complete wide", la_qr_complete, 1e-3, true, RANDN(2, 3, 5));
    CHECK_OP("linalg.qr r", la_qr_r, 1e-3, false, RANDN(2, 4, 6));
    CHECK_OP("linalg.eigh", la_eigh, 1e-3, true, a);
    CHECK_OP("linalg.eigh f64", la_eigh, 1e-8, true, a64);
    CHECK_OP("linalg.eigh upper", la_eigh_upper, 1e-3, false, at);
    CHECK_OP("linalg.eigvalsh", la_eigvalsh, 1e-3, true, tn_add(a, tn_transpose(a, -2, -1)));
    CHECK_OP("linalg.svd", la_svd, 1e-3, true, RANDN(2, 6, 4));
    CHECK_OP("linalg.svd wide f64", la_svd, 1e-8, true, tn_randn(TN_SHAPE(3, 7), TN_F64));
    CHECK_OP("linalg.svd full_matrices", la_svd_full, 1e-3, false, RANDN(2, 5, 3));
    CHECK_OP("linalg.svd full_matrices wide", la_svd_full, 1e-3, false, RANDN(3, 5));
    CHECK_OP("linalg.svdvals", la_svdvals, 1e-3, true, at);
    CHECK_OP("linalg.matrix_power -2", la_matrix_power_neg, 1e-3, true, a);
    CHECK_OP("linalg.matrix_power 0", la_matrix_power_0, 0, true, a);
    /* empty: batches of none, 0 x 0 matrices (det 1), a 3 x 0 one (complete Q = I) */
    CHECK_OP("linalg.solve empty batch", la_solve, 0, false, RANDN(0, 3, 3), RANDN(0, 3, 2));
    CHECK_OP("linalg.det 0 x 0", la_det, 0, false, RANDN(2, 0, 0));
    CHECK_OP("linalg.inv 0 x 0", la_inv, 0, false, RANDN(2, 0, 0));
    CHECK_OP("linalg.cholesky 0 x 0", la_chol, 0, false, RANDN(0, 0));
    CHECK_OP("linalg.qr complete 3 x 0", la_qr_complete, 0, false, RANDN(3, 0));
    CHECK_OP("linalg.eigvalsh empty", la_eigvalsh, 0, false, RANDN(0, 2, 2));
    CHECK_OP("linalg.svd full 0 x 3", la_svd_full, 0, false, RANDN(0, 3));
    CHECK_OP("linalg.svdvals 2 x 0", la_svdvals, 0, false, RANDN(2, 0));
    tn_scope_end();
}

/* the message of fn on the CPU input and on its device copy: the same */
static void la_same_error(int line, const char *what, op_fn fn, tn_tensor *cpu, const char *needle) {
    tn_scope_begin();
    tn_tensor *in[2] = {cpu, tn_to(cpu, TN_CUDA)};
    char msg[2][512];
    for (int k = 0; k < 2; k++) {
        tn_clear_error();
        tn_tensor *r = fn(&in[k]);
        snprintf(msg[k], sizeof msg[k], "%s", r ? "(no error)" : tn_last_error());
    }
    if (!strstr(msg[0], needle)) fail_at(line, "%s on the CPU: %s", what, msg[0]);
    else if (strcmp(msg[0], msg[1])) fail_at(line, "%s: the CPU says \"%s\", the GPU \"%s\"", what, msg[0], msg[1]);
    else tn_test_passed++;
    tn_clear_error();
    tn_scope_end();
}
UNARY_FN(la_chol_raw, tn_linalg_cholesky(x[0]))
UNARY_FN(la_eigh_nan, tn_linalg_eigvalsh(tn_log(x[0])))
static tn_tensor *la_chol_info(tn_tensor *const *x) { tn_tensor *info = NULL; return tn_linalg_cholesky_ex(x[0], &info) ? la_f64(info) : NULL; }
static tn_tensor *la_inv_info(tn_tensor *const *x) { tn_tensor *info = NULL; return tn_linalg_inv_ex(x[0], &info) ? la_f64(info) : NULL; }

static tn_tensor *la_no_entry_solve(tn_tensor *a) { return tn_linalg_solve(a, a); }
TEST(gpu_linalg_errors) {
    tn_scope_begin();
    /* singular (row 1 = 2 row 0: the second pivot exactly 0), in the second matrix of a batch; not positive-definite */
    tn_tensor *sing = tn_from_data((double[]){2, 1, 0, 0, 3, 1, 1, 0, 4,   1, 2, 3, 2, 4, 6, 0, 0, 1}, TN_SHAPE(2, 3, 3), TN_F64);
    tn_tensor *npd = tn_from_data((float[]){4, 2, 0, 2, 1, 0, 0, 0, 1}, TN_SHAPE(3, 3), TN_F32);
    la_same_error(__LINE__, "linalg.inv singular", la_inv, sing, "(Batch element 1): The diagonal element 2 is zero");
    tn_tensor *sb[2] = {sing, tn_ones(TN_SHAPE(2, 3, 1), TN_F64)};
    tn_scope_begin();
    tn_tensor *gs[2] = {tn_to(sb[0], TN_CUDA), tn_to(sb[1], TN_CUDA)};
    tn_clear_error();
    CHECK_MSG(!la_solve(gs) && strstr(tn_last_error(), "tn_linalg_solve: (Batch element 1): The diagonal element 2 is zero"), "solve singular: %s", tn_last_error());
    tn_clear_error();
    tn_scope_end();
    la_same_error(__LINE__, "linalg.cholesky not positive-definite", la_chol_raw, npd, "the leading minor of order 2 is not positive-definite");
    la_same_error(__LINE__, "linalg.cholesky not square", la_chol_raw, RANDN(3, 4), "must be batches of square matrices");
    la_same_error(__LINE__, "linalg.eigvalsh NaN", la_eigh_nan, tn_neg(tn_ones(TN_SHAPE(2, 2), TN_F32)), "failed to converge");
    la_same_error(__LINE__, "linalg.det 1-d", la_det, RANDN(3), "at least 2 dimensions");
    /* the _ex variants: info per batch element, no error */
    CHECK_OP("linalg.cholesky_ex info", la_chol_info, 0, false, tn_stack(((tn_tensor *[]){npd, tn_eye(3, 3, TN_F32)}), 2));
    CHECK_OP("linalg.inv_ex info", la_inv_info, 0, false, sing);
    /* a table without the entry: PyTorch's GPU runs these, so an error, not a copy to the CPU */
    const tn_backend *be = tn_get_backend(TN_CUDA);
    static tn_backend none;
    none = *be;
    none.name = "cuda (no linalg entry)";
    none.linalg = NULL;
    tn_tensor *g = tn_to(RANDN(3, 3), TN_CUDA);
    tn_register_backend(TN_CUDA, &none);
    tn_clear_error();
    CHECK_MSG(!la_no_entry_solve(g) && strstr(tn_last_error(), "not implemented on cuda yet (CPU only)"), "no entry: %s", tn_last_error());
    tn_clear_error();
    CHECK_MSG(!tn_linalg_svdvals(g) && strstr(tn_last_error(), "not implemented on cuda yet (CPU only)"), "no entry: %s", tn_last_error());
    tn_clear_error();
    tn_register_backend(TN_CUDA, be);
    tn_scope_end();
}

/* ---- the rest of torch.linalg on the device (trsm and ormqr entries; pinv, matrix_rank, cond,
   matrix_exp as composites of the device's svd, eigh, LU and matmul) ---- */
/* a well-conditioned triangle of x: its lower (upper) part plus n on the diagonal */
static tn_tensor *la_tri(tn_tensor *x, bool upper) {
    const int64_t n = tn_shape(x)[tn_ndim(x) - 1];
    tn_tensor *t = upper ? tn_triu(x) : tn_tril(x);
    return tn_add(t, tn_mul_scalar(tn_to(tn_eye(n, n, x->dtype), x->device), (double)n));
}
UNARY_FN(la_st_lower, tn_linalg_solve_triangular(la_tri(x[0], false), x[1], false))
UNARY_FN(la_st_upper_right, tn_linalg_solve_triangular(la_tri(x[0], true), x[1], true, .left = false))
UNARY_FN(la_st_unit, tn_linalg_solve_triangular(la_tri(x[0], true), x[1], true, .unitriangular = true))
/* triangular_solve reads only the named triangle of A (here a full matrix), transposed or not */
static tn_tensor *la_tsolve(tn_tensor *const *x) {
    tn_tensor *c = NULL, *X = tn_triangular_solve(x[1], la_tri(x[0], false), &c, .upper = false, .transpose = true);
    return X && c ? tn_add(X, tn_sum(c)) : NULL;
}
static tn_tensor *la_chol_factor(tn_tensor *x, bool upper) { return tn_linalg_cholesky(la_spd(x), .upper = upper); }
UNARY_FN(la_chol_solve, tn_cholesky_solve(x[1], la_chol_factor(x[0], false)))
UNARY_FN(la_chol_solve_upper, tn_cholesky_solve(x[1], la_chol_factor(x[0], true), .upper = true))
UNARY_FN(la_chol_inverse, tn_cholesky_inverse(la_chol_factor(x[0], false)))
UNARY_FN(la_chol_inverse_upper, tn_cholesky_inverse(la_chol_factor(x[0], true), .upper = true))
/* lstsq by gels (the CPU with driver "gels" too): X, plus the residuals' sum (m > n) */
static tn_tensor *la_lstsq(tn_tensor *const *x) {
    tn_tensor *res = NULL, *rank = NULL, *sv = NULL, *X = tn_linalg_lstsq(x[0], x[1], &res, &rank, &sv, .driver = "gels");
    if (!X || !res || !rank || !sv) return NULL;
    if (tn_numel(rank) != 0 || tn_numel(sv) != 0 || rank->device != X->device) return (tn_tensor *)NULL;   /* gels: no rank, no singular values */
    return tn_numel(res) ? tn_add(X, tn_sum(res)) : X;
}
UNARY_FN(la_lstsq_default, tn_linalg_lstsq_opts(x[0], x[1], (tn_tensor *[1]){NULL}, (tn_tensor *[1]){NULL}, (tn_tensor *[1]){NULL}, (tn_linalg_lstsq_fn_opts){.rcond = NAN, .driver = x[0]->device == TN_CPU ? "gels" : NULL}))
/* geqrf's reflectors and tau (no history) into householder_product and ormqr */
static tn_tensor *la_hh(tn_tensor *const *x) {
    tn_tensor *tau = NULL, *a = tn_geqrf(x[0], &tau);
    return a ? tn_linalg_householder_product(a, tau) : NULL;
}
/* with a gradient: the reflectors as given (differentiable composite on the device too) */
static tn_tensor *la_hh_grad(tn_tensor *const *x) { return tn_linalg_householder_product(x[0], tn_mul_scalar(tn_tanh(x[1]), 0.5)); }
static tn_tensor *la_ormqr_fn(tn_tensor *const *x, bool left, bool tr) {
    tn_tensor *tau = NULL, *a = tn_geqrf(x[0], &tau);
    return a ? tn_ormqr(a, tau, x[1], .left = left, .transpose = tr) : NULL;
}
UNARY_FN(la_ormqr, la_ormqr_fn(x, true, false))
UNARY_FN(la_ormqr_t, la_ormqr_fn(x, true, true))
UNARY_FN(la_ormqr_right, la_ormqr_fn(x, false, false))
UNARY_FN(la_ormqr_right_t, la_ormqr_fn(x, false, true))
UNARY_FN(la_ormqr_grad, tn_ormqr(x[0], tn_mul_scalar(tn_tanh(x[1]), 0.5), x[2]))
UNARY_FN(la_pinv, tn_linalg_pinv(x[0]))
UNARY_FN(la_pinv_herm, tn_linalg_pinv(la_spd(x[0]), .hermitian = true))
UNARY_FN(la_pinverse, tn_pinverse(x[0]))
UNARY_FN(la_rank, tn_linalg_matrix_rank(x[0]))
/* (a rank-deficient matrix's zero singular values are eps-sized, gesvdj's and LAPACK's alike:
   a tolerance well above them, so that the GPU's count is the CPU's) */
UNARY_FN(la_rank_tol, tn_linalg_matrix_rank(x[0], .rtol = 1e-9))
UNARY_FN(la_rank_herm, tn_linalg_matrix_rank(x[0], .rtol = 1e-9, .hermitian = true))
UNARY_FN(la_cond, tn_linalg_cond(x[0], NULL))
UNARY_FN(la_cond_fro, tn_linalg_cond(x[0], "fro"))
UNARY_FN(la_mexp, tn_linalg_matrix_exp(x[0]))
UNARY_FN(la_mexp_big, tn_linalg_matrix_exp(tn_mul_scalar(x[0], 8)))

TEST(gpu_linalg_more_match_cpu) {
    tn_scope_begin();
    tn_manual_seed(261);
    tn_tensor *a = RANDN(3, 4, 4), *b = RANDN(3, 4, 2), *a64 = tn_randn(TN_SHAPE(2, 3, 5, 5), TN_F64), *b64 = tn_randn(TN_SHAPE(2, 3, 5, 3), TN_F64);
    tn_tensor *big = RANDN(2, 70, 70), *bigb = RANDN(2, 70, 3);   /* past trsmBatched's sizes: a loop of trsm */
    CHECK_OP("linalg.solve_triangular", la_st_lower, 1e-3, true, a, b);
    CHECK_OP("linalg.solve_triangular f64 broadcast", la_st_lower, 1e-8, true, tn_randn(TN_SHAPE(3, 5, 5), TN_F64), b64);
    CHECK_OP("linalg.solve_triangular upper left=False", la_st_upper_right, 1e-3, true, a, RANDN(3, 2, 4));
    CHECK_OP("linalg.solve_triangular unitriangular", la_st_unit, 1e-3, true, a, b);
    CHECK_OP("linalg.solve_triangular strided", la_st_lower, 1e-3, true, tn_transpose(a, -2, -1), tn_transpose(RANDN(3, 2, 4), -2, -1));
    CHECK_OP("linalg.solve_triangular 70 x 70", la_st_lower, 1e-3, true, big, bigb);
    CHECK_OP("triangular_solve transpose", la_tsolve, 1e-3, true, a, b);
    CHECK_OP("cholesky_solve", la_chol_solve, 1e-3, true, a, b);
    CHECK_OP("cholesky_solve upper f64", la_chol_solve_upper, 1e-8, true, a64, b64);
    CHECK_OP("cholesky_inverse", la_chol_inverse, 1e-3, true, a);
    CHECK_OP("cholesky_inverse upper f64", la_chol_inverse_upper, 1e-8, true, a64);
    CHECK_OP("linalg.lu_solve (triangular solves)", la_lu_solve, 1e-3, true, a, b);
    CHECK_OP("linalg.lstsq tall", la_lstsq, 1e-3, true, RANDN(2, 6, 3), RANDN(2, 6, 2));
    CHECK_OP("linalg.lstsq tall f64 broadcast", la_lstsq, 1e-8, true, tn_randn(TN_SHAPE(3, 1, 7, 4), TN_F64), tn_randn(TN_SHAPE(1, 2, 7, 2), TN_F64));
    CHECK_OP("linalg.lstsq square", la_lstsq, 1e-3, true, a, b);
    CHECK_OP("linalg.lstsq wide (minimum norm)", la_lstsq, 1e-3, true, RANDN(2, 3, 6), RANDN(2, 3, 2));
    CHECK_OP("linalg.lstsq vector", la_lstsq, 1e-3, true, RANDN(5, 3), RANDN(5));
    CHECK_OP("linalg.lstsq driver None (gels on the GPU)", la_lstsq_default, 1e-3, false, RANDN(6, 3), RANDN(6, 2));
    CHECK_OP("linalg.householder_product", la_hh, 1e-3, false, RANDN(2, 5, 3));
    CHECK_OP("linalg.householder_product f64", la_hh, 1e-8, false, tn_randn(TN_SHAPE(4, 4), TN_F64));
    CHECK_OP("linalg.householder_product grad", la_hh_grad, 1e-3, true, RANDN(2, 5, 3), RANDN(2, 2));
    CHECK_OP("ormqr", la_ormqr, 1e-3, false, RANDN(2, 5, 3), RANDN(2, 5, 2));
    CHECK_OP("ormqr transpose f64", la_ormqr_t, 1e-8, false, tn_randn(TN_SHAPE(5, 5), TN_F64), tn_randn(TN_SHAPE(5, 4), TN_F64));
    CHECK_OP("ormqr right", la_ormqr_right, 1e-3, false, RANDN(2, 4, 6), RANDN(2, 3, 4));
    CHECK_OP("ormqr right transpose", la_ormqr_right_t, 1e-3, false, RANDN(5, 3), RANDN(2, 5));
    CHECK_OP("ormqr grad", la_ormqr_grad, 1e-3, true, RANDN(5, 3), RANDN(3), RANDN(5, 2));
    CHECK_OP("linalg.pinv", la_pinv, 1e-3, true, RANDN(2, 5, 3));
    CHECK_OP("linalg.pinv wide f64", la_pinv, 1e-8, true, tn_randn(TN_SHAPE(3, 6), TN_F64));
    CHECK_OP("linalg.pinv hermitian", la_pinv_herm, 1e-3, true, a);
    CHECK_OP("pinverse", la_pinverse, 1e-3, true, RANDN(4, 2));
    /* rank 2 of 4 (a product through 2 dims), and full rank */
    tn_tensor *low = tn_matmul(tn_randn(TN_SHAPE(3, 4, 2), TN_F64), tn_randn(TN_SHAPE(3, 2, 5), TN_F64));
    CHECK_OP("linalg.matrix_rank", la_rank_tol, 0, false, low);
    CHECK_OP("linalg.matrix_rank full", la_rank, 0, false, a);
    CHECK_OP("linalg.matrix_rank hermitian", la_rank_herm, 0, false, tn_matmul(low, tn_transpose(low, -2, -1)));
    CHECK_OP("linalg.cond", la_cond, 1e-3, true, a);
    CHECK_OP("linalg.cond fro f64", la_cond_fro, 1e-8, true, a64);
    CHECK_OP("linalg.matrix_exp", la_mexp, 1e-3, true, tn_mul_scalar(a, 0.3));
    CHECK_OP("linalg.matrix_exp f64", la_mexp, 1e-8, true, a64);
    CHECK_OP("linalg.matrix_exp scaled f64", la_mexp_big, 1e-8, true, tn_mul_scalar(a64, 0.5));
    CHECK_OP("linalg.matrix_exp small norm", la_mexp, 1e-8, true, tn_mul_scalar(a64, 1e-3));
    /* empty */
    CHECK_OP("linalg.solve_triangular 0 x 0", la_st_lower, 0, false, RANDN(2, 0, 0), RANDN(2, 0, 3));
    CHECK_OP("linalg.solve_triangular no columns", la_st_lower, 0, false, a, RANDN(3, 4, 0));
    CHECK_OP("cholesky_inverse empty batch", la_chol_inverse, 0, false, RANDN(0, 3, 3));
    CHECK_OP("linalg.lstsq 0 columns", la_lstsq, 0, false, RANDN(4, 0), RANDN(4, 2));
    CHECK_OP("linalg.lstsq 0 rows (X = 0)", la_lstsq, 0, false, RANDN(0, 3), RANDN(0, 2));
    CHECK_OP("linalg.householder_product no reflectors", la_hh_grad, 0, false, RANDN(4, 2), RANDN(0));
    CHECK_OP("linalg.pinv 0 x 3", la_pinv, 0, false, RANDN(0, 3));
    CHECK_OP("linalg.matrix_exp 0 x 0", la_mexp, 0, false, RANDN(2, 0, 0));
    tn_scope_end();
}
UNARY_FN(la_st_raw, tn_linalg_solve_triangular(x[0], x[0], true))
UNARY_FN(la_eigvals, tn_linalg_eigvals(x[0]))
UNARY_FN(la_mexp_raw, tn_linalg_matrix_exp(x[0]))
TEST(gpu_linalg_more_errors) {
    tn_scope_begin();
    la_same_error(__LINE__, "solve_triangular not square", la_st_raw, RANDN(3, 4), "must be batches of square matrices");
    la_same_error(__LINE__, "matrix_exp 1-d", la_mexp_raw, RANDN(3), "at least 2 dimensions");
    /* a matrix with a non-finite entry: NaN, the rest of the batch as usual */
    tn_tensor *nf = tn_stack(((tn_tensor *[]){tn_full(TN_SHAPE(2, 2), INFINITY, TN_F64), tn_eye(2, 2, TN_F64)}), 2);
    CHECK_OP("linalg.matrix_exp non-finite", la_mexp, 1e-12, false, nf);
    tn_tensor *g = tn_to(RANDN(3, 3), TN_CUDA), *gb = tn_to(RANDN(3, 2), TN_CUDA), *res = NULL, *rank = NULL, *sv = NULL;
    tn_clear_error();
    CHECK_MSG(!tn_linalg_lstsq(g, gb, &res, &rank, &sv, .driver = "gelsd") && strstr(tn_last_error(), "`driver` other than `gels` is not supported on CUDA"), "lstsq gelsd: %s",
              tn_last_error());
    tn_clear_error();
    CHECK_MSG(!tn_linalg_solve_triangular(g, RANDN(3, 2), false) && strstr(tn_last_error(), "same device"), "mixed devices: %s", tn_last_error());
    tn_clear_error();
    /* ldl_factor and ldl_solve run there now (TN_LA_SYTRF / SYTRS: cuda_cases_linalg_cx.h);
       mixed devices are refused */
    tn_tensor *piv = NULL, *pc = tn_ones(TN_SHAPE(3), TN_I32), *ld = tn_linalg_ldl_factor(g, &piv);
    CHECK_MSG(ld && piv && piv->device == TN_CUDA, "ldl_factor: %s", tn_last_error());
    tn_clear_error();
    CHECK_MSG(!tn_linalg_ldl_solve(g, pc, gb) && strstr(tn_last_error(), "same device"), "ldl_solve with CPU pivots: %s", tn_last_error());
    tn_clear_error();
    /* a table without the entry refuses the new ops too */
    const tn_backend *be = tn_get_backend(TN_CUDA);
    static tn_backend none;
    none = *be;
    none.linalg = NULL;
    tn_register_backend(TN_CUDA, &none);
    CHECK_MSG(!tn_linalg_solve_triangular(g, gb, false) && strstr(tn_last_error(), "not implemented on cuda yet (CPU only)"), "no entry: %s", tn_last_error());
    tn_clear_error();
    CHECK_MSG(!tn_linalg_matrix_exp(g) && strstr(tn_last_error(), "not implemented on cuda yet (CPU only)"), "no entry: %s", tn_last_error());
    tn_clear_error();
    CHECK_MSG(!la_eigvals(&g) && strstr(tn_last_error(), "tn_linalg_eigvals: not implemented on cuda yet (CPU only)"), "no entry: %s", tn_last_error());
    tn_clear_error();
    tn_register_backend(TN_CUDA, be);
    tn_scope_end();
}

/* ---- linalg.eig / eigvals on the device (TN_LA_GEEV: cuSOLVER's Xgeev; the stand-in runs
   the CPU's geev). The GPU's order may differ from LAPACK's (cuSOLVER's Schur form), so the
   values are compared as multisets (each GPU eigenvalue matched to the nearest unmatched CPU
   one, greedily), the vectors through that match: A v = lambda v, norm 1, the largest
   component real (geev's normalisation), and the CPU's vector up to a real sign (that
   normalisation fixes the phase; a real input's vectors keep trevc's sign). On the stand-in
   (the CPU's kernels) the order is the CPU's too, and the values are compared as they are. */
static tn_tensor *la_c128(tn_tensor *t) { return t ? tn_contiguous(tn_to_dtype(tn_to(t, TN_CPU), TN_C128)) : NULL; }
static bool la_stand_in(void) { return strstr(tn_get_backend(TN_CUDA)->name, "stand-in") != NULL; }
static void la_eig_check(int line, const char *what, tn_tensor *A, double tol, bool vectors) {
    if (!tn_test_selected("TN_CASE_FILTER", what)) return;
    tn_scope_begin();
    tn_tensor *G = tn_to(A, TN_CUDA), *Vc = NULL, *Vg = NULL;
    tn_clear_error();
    tn_tensor *Lc = vectors ? tn_linalg_eig(A, &Vc) : tn_linalg_eigvals(A), *Lg = vectors ? tn_linalg_eig(G, &Vg) : tn_linalg_eigvals(G);
    const tn_dtype cdt = tn_dtype_to_complex(A->dtype);
    if (!Lc || !Lg) { fail_at(line, "%s: %s", what, tn_last_error()); tn_scope_end(); return; }
    if (Lg->device != TN_CUDA || Lg->dtype != cdt || tn_ndim(Lg) != tn_ndim(Lc) || tn_numel(Lg) != tn_numel(Lc) || (vectors && (Vg->device != TN_CUDA || Vg->dtype != cdt || tn_numel(Vg) != tn_numel(Vc)))) {
        fail_at(line, "%s: the GPU's results are %s (%lld elements) on %s, expected %s on cuda", what, tn_dtype_name(Lg->dtype), (long long)tn_numel(Lg), tn_device_name(Lg->device),
                tn_dtype_name(cdt));
        tn_scope_end();
        return;
    }
    if (la_stand_in()) {   /* the CPU's kernels: the CPU's order and phases */
        if (max_diff_at(line, what, tn_view_as_real(tn_contiguous(Lg)), tn_view_as_real(tn_contiguous(Lc)), tol)) { tn_scope_end(); return; }
        if (vectors && max_diff_at(line, what, tn_view_as_real(tn_contiguous(Vg)), tn_view_as_real(tn_contiguous(Vc)), tol)) { tn_scope_end(); return; }
    }
    const int64_t n = tn_numel(Lc) ? tn_shape(Lc)[tn_ndim(Lc) - 1] : 0, B = n ? tn_numel(Lc) / n : 0;
    tn_tensor *lc = la_c128(Lc), *lg = la_c128(Lg), *a = la_c128(A), *vc = vectors ? la_c128(Vc) : NULL, *vg = vectors ? la_c128(Vg) : NULL;
    const double *pc = (const double *)tn_data_ptr(lc), *pg = (const double *)tn_data_ptr(lg), *pa = (const double *)tn_data_ptr(a);
    int64_t *match = (int64_t *)calloc((size_t)(n ? n : 1), sizeof(int64_t));
    bool *used = (bool *)calloc((size_t)(n ? n : 1), 1), ok = match && used;
    for (int64_t b = 0; b < B && ok; b++) {
        double anorm = 0;   /* |A|_F */
        for (int64_t i = 0; i < 2 * n * n; i++) anorm += pa[2 * b * n * n + i] * pa[2 * b * n * n + i];
        anorm = sqrt(anorm);
        memset(used, 0, (size_t)n);
        for (int64_t j = 0; j < n && ok; j++) {   /* eigenvalue j of the GPU: the nearest unused of the CPU */
            const double *zg = pg + 2 * (b * n + j);
            int64_t best = -1;
            double bd = INFINITY;
            for (int64_t k = 0; k < n; k++) {
                const double *zc = pc + 2 * (b * n + k), d = hypot(zg[0] - zc[0], zg[1] - zc[1]);
                if (!used[k] && d < bd) { bd = d; best = k; }
            }
            used[best] = true;
            match[j] = best;
            if (!(bd <= tol * (1 + anorm))) { fail_at(line, "%s: matrix %lld: eigenvalue %lld (%.9g%+.9gi) of the GPU is %.3g from the CPU's nearest", what, (long long)b, (long long)j, zg[0], zg[1], bd); ok = false; }
        }
        for (int64_t j = 0; j < n && ok && vectors; j++) {
            const double *V = (const double *)tn_data_ptr(vg) + 2 * b * n * n, *C = (const double *)tn_data_ptr(vc) + 2 * b * n * n, *A_ = pa + 2 * b * n * n;
            const double lr = pg[2 * (b * n + j)], li = pg[2 * (b * n + j) + 1];
            double res = 0, nrm = 0, big = -1, bigim = 0, dp = 0, dm = 0;
            for (int64_t r = 0; r < n; r++) {   /* (A v - lambda v)_r; row-major A, V [n, n]: column j */
                double sr = -(lr * V[2 * (r * n + j)] - li * V[2 * (r * n + j) + 1]), si = -(lr * V[2 * (r * n + j) + 1] + li * V[2 * (r * n + j)]);
                for (int64_t k = 0; k < n; k++) {
                    const double ar = A_[2 * (r * n + k)], ai = A_[2 * (r * n + k) + 1], xr = V[2 * (k * n + j)], xi = V[2 * (k * n + j) + 1];
                    sr += ar * xr - ai * xi;
                    si += ar * xi + ai * xr;
                }
                res += sr * sr + si * si;
                const double xr = V[2 * (r * n + j)], xi = V[2 * (r * n + j) + 1], cr = C[2 * (r * n + match[j])], ci = C[2 * (r * n + match[j]) + 1];
                nrm += xr * xr + xi * xi;
                if (xr * xr + xi * xi > big) { big = xr * xr + xi * xi; bigim = xi; }   /* (geev: the first of equals) */
                dp += (xr - cr) * (xr - cr) + (xi - ci) * (xi - ci);
                dm += (xr + cr) * (xr + cr) + (xi + ci) * (xi + ci);
            }
            if (!(sqrt(res) <= tol * (1 + anorm)) || !(fabs(sqrt(nrm) - 1) <= tol) || !(fabs(bigim) <= tol) || !(sqrt(fmin(dp, dm)) <= 10 * tol)) {
                fail_at(line, "%s: matrix %lld, vector %lld: |A v - lambda v| %.3g, |v| %.9g, its largest component's imaginary part %.3g, %.3g from the CPU's (up to sign)", what,
                        (long long)b, (long long)j, sqrt(res), sqrt(nrm), bigim, sqrt(fmin(dp, dm)));
                ok = false;
            }
        }
    }
    if (ok) tn_test_passed++;
    free(match);
    free(used);
    tn_scope_end();
}
#define LA_EIG(what, A, tol, vectors) la_eig_check(__LINE__, what, A, tol, vectors)

/* functions of eig that depend neither on the order of the eigenvalues nor on the phases of the
   vectors: their values and gradients (PyTorch's backward, complex ops on the device) match the CPU's */
static tn_tensor *la_eigvals_sym(tn_tensor *x) {   /* sum (Re l)^3 + |l| */
    tn_tensor *L = tn_linalg_eigvals(x);
    return L ? tn_sum(tn_add(tn_pow_scalar(tn_real(L), 3), tn_abs(L))) : NULL;
}
static tn_tensor *la_eig_sym(tn_tensor *x) {   /* sum_ij |V_ij|^4 Re(l_j) + sum Im(l)^2 */
    tn_tensor *V = NULL, *L = tn_linalg_eig(x, &V);
    if (!L) return NULL;
    tn_tensor *a2 = tn_square(tn_abs(V));
    return tn_add(tn_sum(tn_mul(tn_square(a2), tn_unsqueeze(tn_real(L), -2))), tn_sum(tn_square(tn_imag(L))));
}
static void la_eig_grad(int line, const char *what, tn_tensor *(*fn)(tn_tensor *), tn_tensor *A, double tol) {
    if (!tn_test_selected("TN_CASE_FILTER", what)) return;
    tn_scope_begin();
    tn_tensor *ci = tn_detach(A), *gi = tn_detach(tn_to(A, TN_CUDA));
    tn_requires_grad_(ci, true);
    tn_requires_grad_(gi, true);
    tn_tensor *co = fn(ci), *go = fn(gi);
    if (max_diff_at(line, what, go, co, tol) == 0) {
        if (tn_backward(co) || tn_backward(go)) fail_at(line, "%s backward: %s", what, tn_last_error());
        else {
            char name[96];
            snprintf(name, sizeof name, "%s grad", what);
            tn_tensor *gc = tn_grad(ci), *gg = tn_grad(gi);
            if (!gc || !gg || gg->device != TN_CUDA || gg->dtype != gc->dtype) fail_at(line, "%s: no gradient, or not the CPU's dtype on cuda", name);
            else if (tn_is_complex(gc)) max_diff_at(line, name, tn_view_as_real(tn_contiguous(gg)), tn_view_as_real(tn_contiguous(gc)), tol * 10);
            else max_diff_at(line, name, gg, gc, tol * 10);
        }
    }
    tn_scope_end();
}
/* a loss that depends on the vectors' phases: PyTorch's gauge check refuses it, on the device too */
static tn_tensor *la_eig_phase(tn_tensor *const *x) {
    tn_tensor *A = tn_detach(x[0]), *V = NULL;
    tn_requires_grad_(A, true);
    tn_tensor *L = tn_linalg_eig(A, &V);
    if (!L || tn_backward(tn_sum(tn_real(V)))) return NULL;
    return L;
}
UNARY_FN(la_eig_raw, tn_linalg_eig(x[0], (tn_tensor *[1]){NULL}))

TEST(gpu_linalg_eig) {
    tn_scope_begin();
    tn_manual_seed(2603);
    tn_tensor *a = RANDN(3, 5, 5), *a64 = tn_randn(TN_SHAPE(2, 3, 6, 6), TN_F64);
    tn_tensor *c64 = tn_complex(RANDN(2, 4, 4), RANDN(2, 4, 4)), *c128 = tn_complex(tn_randn(TN_SHAPE(3, 5, 5), TN_F64), tn_randn(TN_SHAPE(3, 5, 5), TN_F64));
    /* real input: complex pairs (random real matrices have them) and real eigenvalues */
    LA_EIG("linalg.eig float32 batched", a, 1e-3, true);
    LA_EIG("linalg.eig float64 batched", a64, 1e-8, true);
    LA_EIG("linalg.eigvals float32", a, 1e-3, false);
    LA_EIG("linalg.eigvals float64", a64, 1e-8, false);
    LA_EIG("linalg.eig rotation (+-i)", tn_from_data((double[]){0, -1, 1, 0}, TN_SHAPE(2, 2), TN_F64), 1e-8, true);
    LA_EIG("linalg.eig triangular (real eigenvalues)", tn_add(tn_triu(tn_randn(TN_SHAPE(6, 6), TN_F64)), tn_diag_embed(tn_arange(1, 7, 1, TN_F64))), 1e-8, true);
    LA_EIG("linalg.eig strided", tn_transpose(a, -2, -1), 1e-3, true);
    LA_EIG("linalg.eig 1 x 1", tn_randn(TN_SHAPE(4, 1, 1), TN_F64), 1e-8, true);
    LA_EIG("linalg.eig 80 x 80 float64", tn_randn(TN_SHAPE(80, 80), TN_F64), 1e-8, true);
    /* complex input */
    LA_EIG("linalg.eig complex64", c64, 1e-3, true);
    LA_EIG("linalg.eig complex128 batched", c128, 1e-8, true);
    LA_EIG("linalg.eigvals complex128", c128, 1e-8, false);
    LA_EIG("linalg.eig complex128 strided", tn_transpose(c128, -2, -1), 1e-8, true);
    /* empty: a batch of none, 0 x 0 matrices */
    LA_EIG("linalg.eig empty batch", RANDN(0, 3, 3), 0, true);
    LA_EIG("linalg.eig 0 x 0", tn_randn(TN_SHAPE(2, 0, 0), TN_F64), 0, true);
    LA_EIG("linalg.eigvals 0 x 0 complex", tn_complex(RANDN(0, 0), RANDN(0, 0)), 0, false);
    /* gradients of order- and phase-invariant functions (float64: the GPU's factorisation is float64 too) */
    la_eig_grad(__LINE__, "linalg.eigvals grad float64", la_eigvals_sym, tn_randn(TN_SHAPE(2, 4, 4), TN_F64), 1e-7);
    la_eig_grad(__LINE__, "linalg.eig grad float64", la_eig_sym, tn_randn(TN_SHAPE(2, 4, 4), TN_F64), 1e-7);
    la_eig_grad(__LINE__, "linalg.eig grad complex128", la_eig_sym, tn_complex(tn_randn(TN_SHAPE(3, 3), TN_F64), tn_randn(TN_SHAPE(3, 3), TN_F64)), 1e-7);
    la_eig_grad(__LINE__, "linalg.eig grad float32", la_eig_sym, RANDN(4, 4), 1e-2);
    /* errors: the CPU's messages */
    la_same_error(__LINE__, "linalg.eig not square", la_eig_raw, RANDN(3, 4), "must be batches of square matrices");
    la_same_error(__LINE__, "linalg.eig 1-d", la_eig_raw, RANDN(3), "at least 2 dimensions");
    la_same_error(__LINE__, "linalg.eig non-finite", la_eig_raw, tn_full(TN_SHAPE(2, 2), NAN, TN_F64), "should not contain infs or NaNs");
    la_same_error(__LINE__, "linalg.eigvals integer", la_eigvals, tn_ones(TN_SHAPE(2, 2), TN_I64), "Expected a floating point or complex tensor");
    la_same_error(__LINE__, "linalg.eig gauge", la_eig_phase, tn_from_data((float[]){1, -2, 3, 1}, TN_SHAPE(2, 2), TN_F32), "ill-defined");   /* (1 +- i sqrt 6) */
    tn_scope_end();
}
#endif
