/* cuda_cases_linalg_cx.h — torch.linalg of complex64/complex128 CUDA tensors (issue 26): the
 * factorizations through tn_backend.linalg (cuSOLVER's C/Z routines, the Hermitian ones, in
 * tensor_cuda.cu; the CPU's complex kernels in the checking stand-in) against the CPU, batched,
 * strided, empty, with gradients through solve and det on the device. Included after
 * cuda_cases_linalg.h and cuda_cases_complex.h (check_cx_op) by test_cuda.c (the real GPU
 * unit) and test_devices.c (the stand-in). Vectors are compared through phase-invariant
 * functions of them (|Q|, U Vh, V diag(L) V^H: a unit factor per vector may differ between
 * cuSOLVER and the CPU). complex64 is factored in single precision on the GPU, in double on
 * the CPU: 1e-3; complex128 1e-8. */
#ifndef CUDA_CASES_LINALG_CX_H
#define CUDA_CASES_LINALG_CX_H
static tn_tensor *lcx_mH(tn_tensor *x) { return tn_conj(tn_transpose(x, -2, -1)); }
/* a Hermitian positive-definite matrix of x (differentiable): x x^H + n I */
static tn_tensor *lcx_hpd(tn_tensor *x) {
    const int64_t n = tn_shape(x)[tn_ndim(x) - 1];
    return tn_add(tn_matmul(x, lcx_mH(x)), tn_mul_scalar(tn_to(tn_eye(n, n, x->dtype), x->device), (double)n));
}
/* x + 3 I: well conditioned (solve, inv, det) */
static tn_tensor *lcx_wc(tn_tensor *x) {
    const int64_t n = tn_shape(x)[tn_ndim(x) - 1];
    return tn_add(x, tn_mul_scalar(tn_to(tn_eye(n, n, x->dtype), x->device), 3));
}
UNARY_FN(lcx_solve, tn_linalg_solve(lcx_wc(x[0]), x[1]))
UNARY_FN(lcx_solve_right, tn_linalg_solve(lcx_wc(x[0]), x[1], .left = false))
UNARY_FN(lcx_inv, tn_linalg_inv(lcx_wc(x[0])))
UNARY_FN(lcx_inv_raw, tn_linalg_inv(x[0]))
UNARY_FN(lcx_det, tn_linalg_det(x[0]))
UNARY_FN(lcx_logabsdet, tn_linalg_slogdet(x[0], NULL))
static tn_tensor *lcx_sign(tn_tensor *const *x) { tn_tensor *s = NULL; return tn_linalg_slogdet(x[0], &s) ? s : NULL; }
static tn_tensor *lcx_lu(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_lu_factor(x[0], &p); }
static tn_tensor *lcx_piv(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_lu_factor(x[0], &p) ? tn_to_dtype(p, TN_F64) : NULL; }
static tn_tensor *lcx_lu_solve(tn_tensor *const *x) { tn_tensor *p = NULL, *lu = tn_linalg_lu_factor(x[0], &p); return lu ? tn_linalg_lu_solve(lu, p, x[1]) : NULL; }
static tn_tensor *lcx_lu_solve_adj(tn_tensor *const *x) { tn_tensor *p = NULL, *lu = tn_linalg_lu_factor(x[0], &p); return lu ? tn_linalg_lu_solve(lu, p, x[1], .adjoint = true) : NULL; }
UNARY_FN(lcx_chol, tn_linalg_cholesky(lcx_hpd(x[0])))
UNARY_FN(lcx_chol_upper, tn_linalg_cholesky(lcx_hpd(x[0]), .upper = true))
/* Q's moduli, |R| and Q R (phase-invariant; LAPACK's reflectors give R a real diagonal on both) */
static tn_tensor *lcx_qr(tn_tensor *const *x) {
    tn_tensor *R = NULL, *Q = tn_linalg_qr(x[0], &R);
    return Q && R ? tn_add(tn_abs(Q), tn_unsqueeze(tn_sum_dims(tn_abs(R), TN_DIMS(-1)), -2)) : NULL;
}
static tn_tensor *lcx_qr_prod(tn_tensor *const *x) { tn_tensor *R = NULL, *Q = tn_linalg_qr(x[0], &R, .mode = 1); return Q && R ? tn_matmul(Q, R) : NULL; }
static tn_tensor *lcx_qr_r(tn_tensor *const *x) { tn_tensor *R = NULL; return tn_linalg_qr(x[0], &R, .mode = 2) ? tn_abs(R) : NULL; }
/* V diag(L) V^H (the Hermitian matrix itself), |V| and L: phase-invariant */
static tn_tensor *lcx_eigh_of(tn_tensor *H, const char *uplo) {
    tn_tensor *V = NULL, *L = tn_linalg_eigh(H, &V, .UPLO = uplo);
    if (!L || !V) return NULL;
    tn_tensor *Lc = tn_to_dtype(L, V->dtype);
    return tn_add(tn_add(tn_matmul(tn_mul(V, tn_unsqueeze(Lc, -2)), lcx_mH(V)), tn_abs(V)), tn_unsqueeze(Lc, -1));
}
UNARY_FN(lcx_eigh, lcx_eigh_of(tn_add(x[0], lcx_mH(x[0])), "L"))
UNARY_FN(lcx_eigh_upper, lcx_eigh_of(x[0], "U"))
UNARY_FN(lcx_eigvalsh, tn_linalg_eigvalsh(x[0]))
UNARY_FN(lcx_eigvalsh_upper, tn_linalg_eigvalsh(x[0], .UPLO = "U"))
/* S, U Vh and |U|, |Vh| (phase-invariant) */
static tn_tensor *lcx_svd(tn_tensor *const *x) {
    tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(x[0], &S, &Vh, .full_matrices = false);
    return U && S && Vh ? tn_add(tn_matmul(U, Vh), tn_to_dtype(tn_add(tn_sum(tn_abs(U)), tn_add(tn_sum(tn_abs(Vh)), tn_sum(S))), U->dtype)) : NULL;
}
static tn_tensor *lcx_svd_full(tn_tensor *const *x) {   /* full: U and Vh unitary, their first k columns' product */
    tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(x[0], &S, &Vh);
    if (!U || !S || !Vh) return NULL;
    const int64_t k = tn_shape(S)[tn_ndim(S) - 1];
    tn_tensor *uu = tn_matmul(lcx_mH(U), U), *vv = tn_matmul(Vh, lcx_mH(Vh));
    return tn_add(tn_matmul(tn_narrow(U, -1, 0, k), tn_narrow(Vh, -2, 0, k)), tn_to_dtype(tn_add(tn_sum(tn_abs(uu)), tn_sum(tn_abs(vv))), U->dtype));
}
UNARY_FN(lcx_svdvals, tn_linalg_svdvals(x[0]))
UNARY_FN(lcx_pinv, tn_linalg_pinv(x[0]))
UNARY_FN(lcx_mexp, tn_linalg_matrix_exp(x[0]))
UNARY_FN(lcx_nuc, tn_linalg_matrix_norm(x[0], .ord = "nuc"))
UNARY_FN(lcx_tsolve, tn_linalg_solve_triangular(lcx_wc(x[0]), x[1], true))
UNARY_FN(lcx_tsolve_lower_right, tn_linalg_solve_triangular(lcx_wc(x[0]), x[1], false, .left = false, .unitriangular = true))
static tn_tensor *lcx_lstsq(tn_tensor *const *x) {
    tn_tensor *res = NULL, *rk = NULL, *sv = NULL, *X = tn_linalg_lstsq(x[0], x[1], &res, &rk, &sv, .driver = "gels");
    return X && res ? tn_add(X, tn_to_dtype(tn_sum(res), X->dtype)) : NULL;
}
UNARY_FN(lcx_ormqr, tn_ormqr(x[0], x[1], x[2]))
UNARY_FN(lcx_ormqr_t_right, tn_ormqr(x[0], x[1], x[2], .left = false, .transpose = true))
UNARY_FN(lcx_hh, tn_linalg_householder_product(x[0], x[1]))

TEST(gpu_linalg_complex_match_cpu) {
    for (int w = 0; w < 2; w++) {
        tn_scope_begin();
        tn_manual_seed(2626);
        const tn_dtype dt = w ? TN_C128 : TN_C64;
        const double tol = w ? 1e-8 : 1e-3;
        tn_tensor *a = CRANDN(dt, 3, 4, 4), *at = tn_transpose(CRANDN(dt, 3, 4, 4), -2, -1), *b = CRANDN(dt, 3, 4, 2), *bt = tn_transpose(CRANDN(dt, 3, 2, 4), -2, -1);
        tn_tensor *tall = CRANDN(dt, 2, 6, 4), *wide = CRANDN(dt, 2, 3, 5), *none = CRANDN(dt, 0, 3, 3);
        /* solve, inv, det, slogdet: values and (solve, det) gradients on the device */
        CHECK_CX("complex solve", lcx_solve, tol, true, a, b);
        CHECK_CX("complex solve strided", lcx_solve, tol, true, at, bt);
        CHECK_CX("complex solve left=False", lcx_solve_right, tol, false, a, tn_transpose(b, -2, -1));
        CHECK_CX("complex solve empty batch", lcx_solve, tol, false, none, CRANDN(dt, 0, 3, 2));
        CHECK_CX("complex inv", lcx_inv, tol, false, at);
        CHECK_CX("complex det", lcx_det, tol, true, a);
        CHECK_CX("complex det strided", lcx_det, tol, true, at);
        CHECK_CX("complex det 0x0", lcx_det, tol, false, CRANDN(dt, 2, 0, 0));
        CHECK_CX("complex slogdet logabs", lcx_logabsdet, tol, false, at);
        CHECK_CX("complex slogdet sign", lcx_sign, tol, false, at);
        /* LU: factors and pivots (cabs1 pivoting on both), lu_solve */
        CHECK_CX("complex lu_factor", lcx_lu, tol, false, at);
        CHECK_CX("complex lu_factor wide", lcx_lu, tol, false, wide);
        CHECK_CX("complex lu pivots", lcx_piv, 0, false, at);
        CHECK_CX("complex lu_solve", lcx_lu_solve, tol, false, at, b);
        CHECK_CX("complex lu_solve adjoint", lcx_lu_solve_adj, tol, false, a, bt);
        /* Cholesky (A = L L^H), both triangles */
        CHECK_CX("complex cholesky", lcx_chol, tol, false, at);
        CHECK_CX("complex cholesky upper", lcx_chol_upper, tol, false, a);
        /* QR (geqrf + ungqr), eigh (heevd), SVD (gesvdj) */
        CHECK_CX("complex qr", lcx_qr, tol, false, tall);
        CHECK_CX("complex qr wide strided", lcx_qr, tol, false, tn_transpose(tall, -2, -1));
        CHECK_CX("complex qr complete", lcx_qr_prod, tol, false, tall);
        CHECK_CX("complex qr r", lcx_qr_r, tol, false, wide);
        CHECK_CX("complex qr empty batch", lcx_qr, tol, false, none);
        CHECK_CX("complex eigh", lcx_eigh, tol, false, at);
        CHECK_CX("complex eigh upper", lcx_eigh_upper, tol, false, tn_add(a, lcx_mH(a)));
        CHECK_CX("complex eigvalsh", lcx_eigvalsh, tol, false, tn_add(a, lcx_mH(a)));
        CHECK_CX("complex eigvalsh upper (lower triangle ignored)", lcx_eigvalsh_upper, tol, false, a);
        CHECK_CX("complex eigh empty batch", lcx_eigvalsh, tol, false, none);
        CHECK_CX("complex svd tall", lcx_svd, tol, false, tall);
        CHECK_CX("complex svd wide strided", lcx_svd, tol, false, tn_transpose(tall, -2, -1));
        CHECK_CX("complex svd full", lcx_svd_full, tol, false, wide);
        CHECK_CX("complex svdvals", lcx_svdvals, tol, false, at);
        CHECK_CX("complex svd empty batch", lcx_svdvals, tol, false, none);
        CHECK_CX("complex pinv", lcx_pinv, tol, false, tall);
        CHECK_CX("complex nuclear norm", lcx_nuc, tol, false, wide);
        CHECK_CX("complex matrix_exp (the real form on the device too)", lcx_mexp, tol, false, at);
        /* triangular solves (trsm), lstsq (gels: unmqr with Q^H, trsm; wide: A^H's QR) */
        CHECK_CX("complex solve_triangular", lcx_tsolve, tol, false, at, b);
        CHECK_CX("complex solve_triangular lower right unit", lcx_tsolve_lower_right, tol, false, a, tn_transpose(b, -2, -1));
        CHECK_CX("complex lstsq tall", lcx_lstsq, tol, false, tall, CRANDN(dt, 2, 6, 3));
        CHECK_CX("complex lstsq wide", lcx_lstsq, tol, false, wide, CRANDN(dt, 2, 3, 2));
        /* ormqr (unmqr; transpose: Q^H) and householder_product (ungqr) on the CPU's geqrf */
        tn_tensor *tau = NULL, *qf = tn_geqrf(tall, &tau);
        CHECK(qf && tau);
        CHECK_CX("complex ormqr", lcx_ormqr, tol, false, qf, tau, CRANDN(dt, 2, 6, 3));
        CHECK_CX("complex ormqr right transpose", lcx_ormqr_t_right, tol, false, qf, tau, CRANDN(dt, 2, 3, 6));
        CHECK_CX("complex householder_product", lcx_hh, tol, false, qf, tau);
        /* errors as the CPU's: singular, not positive-definite */
        tn_tensor *sing = tn_mul(CRANDN(dt, 3, 3), tn_to_dtype(tn_from_data((double[]){1, 1, 0, 2, 2, 0, 1, 1, 0}, TN_SHAPE(3, 3), TN_F64), dt));
        la_same_error(__LINE__, "complex inv of a singular matrix", lcx_inv_raw, sing, "singular");
        la_same_error(__LINE__, "complex cholesky of a non-Hermitian-positive-definite matrix", la_chol_raw, tn_mul_scalar(lcx_hpd(CRANDN(dt, 3, 3)), -1), "positive-definite");
        tn_scope_end();
    }
}

/* ---- ldl_factor / ldl_solve on the device (TN_LA_SYTRF / TN_LA_SYTRS: cuSOLVER's sytrf and
   Xsytrs, PyTorch's CUDA route; the stand-in runs the CPU's sytf2 / sytrs): the same LD and
   pivots as the CPU (LAPACK's Bunch-Kaufman either way), every dtype; complex Hermitian refused
   there, as PyTorch without MAGMA ---- */
static tn_tensor *lcx_sym(tn_tensor *x) { return tn_add(x, tn_transpose(x, -2, -1)); }
static tn_tensor *lcx_ldl(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_ldl_factor(lcx_sym(x[0]), &p); }
static tn_tensor *lcx_ldl_piv(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_ldl_factor(lcx_sym(x[0]), &p) ? tn_to_dtype(p, TN_F64) : NULL; }
static tn_tensor *lcx_ldl_solve(tn_tensor *const *x) { tn_tensor *p = NULL, *ld = tn_linalg_ldl_factor(lcx_sym(x[0]), &p); return ld ? tn_linalg_ldl_solve(ld, p, x[1]) : NULL; }
static tn_tensor *lcx_ldl_info(tn_tensor *const *x) { tn_tensor *p = NULL, *f = NULL; return tn_linalg_ldl_factor_ex(x[0], &p, &f) ? tn_to_dtype(f, TN_F64) : NULL; }
static tn_tensor *lcx_ldl_raw(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_ldl_factor(x[0], &p); }
static tn_tensor *lcx_ldl_herm(tn_tensor *const *x) { tn_tensor *p = NULL; return tn_linalg_ldl_factor(x[0], &p, .hermitian = true); }
TEST(gpu_ldl_match_cpu) {
    static const tn_dtype dts[4] = {TN_F32, TN_F64, TN_C64, TN_C128};
    for (int w = 0; w < 4; w++) {
        tn_scope_begin();
        tn_manual_seed(2627);
        const tn_dtype dt = dts[w];
        const double tol = dt == TN_F64 || dt == TN_C128 ? 1e-8 : 1e-3;
        tn_tensor *a = CRANDN(dt, 3, 5, 5), *b = CRANDN(dt, 3, 5, 2);
        CHECK_CX("ldl_factor", lcx_ldl, tol, false, a);
        CHECK_CX("ldl_factor strided", lcx_ldl, tol, false, tn_transpose(a, -2, -1));
        CHECK_CX("ldl_factor pivots", lcx_ldl_piv, 0, false, a);
        CHECK_CX("ldl_factor empty batch", lcx_ldl, tol, false, CRANDN(dt, 0, 4, 4));
        CHECK_CX("ldl_solve", lcx_ldl_solve, tol, false, a, b);
        CHECK_CX("ldl_solve broadcast B", lcx_ldl_solve, tol, false, a, CRANDN(dt, 2, 1, 5, 3));
        CHECK_CX("ldl_solve strided B", lcx_ldl_solve, tol, false, a, tn_transpose(CRANDN(dt, 3, 2, 5), -2, -1));
        /* a zero D[1, 1] (the first row and column zero): info 1, and the CPU's message */
        tn_tensor *sing = tn_mul(lcx_sym(CRANDN(dt, 4, 4)), tn_to_dtype(tn_from_data((double[]){0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1}, TN_SHAPE(4, 4), TN_F64), dt));
        CHECK_CX("ldl_factor_ex info", lcx_ldl_info, 0, false, sing);
        la_same_error(__LINE__, "ldl_factor of a singular matrix", lcx_ldl_raw, sing, "singular");
        tn_tensor *g = tn_to(lcx_sym(a), TN_CUDA), *p = NULL, *ld = g ? tn_linalg_ldl_factor(g, &p) : NULL;
        CHECK(ld && p && p->device == TN_CUDA && p->dtype == TN_I32);
        if (tn_is_complex(a)) {   /* Hermitian: the CPU's hetrf; on the device refused (no cuSOLVER hetrf / hetrs) */
            tn_tensor *cp = NULL;
            CHECK(tn_linalg_ldl_factor(tn_add(a, lcx_mH(a)), &cp, .hermitian = true) != NULL);
            CHECK_ERR(lcx_ldl_herm(&g), "hermitian=True flag are not supported on cuda");
            CHECK_ERR(tn_linalg_ldl_solve(ld, p, tn_to(b, TN_CUDA), .hermitian = true), "hermitian=True flag are not supported on cuda");
        }
        /* bad pivots (out of range, 0): the CPU's message, checked on the device */
        tn_tensor *bad = tn_to(tn_zeros(TN_SHAPE(3, 5), TN_I32), TN_CUDA);
        CHECK_ERR(tn_linalg_ldl_solve(ld, bad, tn_to(b, TN_CUDA)), "pivots holds a value outside");
        tn_scope_end();
    }
}
#endif
