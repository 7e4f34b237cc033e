/* test_linalg_decomp.c — issue 26, item 3: torch.linalg's QR, eigh, SVD and what is built on
 * them (src/ops/linalg_decomp.c). Backward errors |A - factors| / |A| and orthogonality
 * within a small multiple of n eps (LAPACK's standard), values known in closed form or that
 * LAPACK gives (QR's signs), batched, non-contiguous, 0-size, rank-deficient inputs and
 * repeated eigen/singular values, float64 gradcheck and gradgradcheck (gauge-invariant
 * functions of the vectors), and PyTorch's errors. The Python side
 * (bindings/python/tests/test_linalg_decomp.py) compares the package with torch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#define EPS 2.220446049250313e-16
/* The built-in SVD computes the singular values one way whether or not it forms the vectors,
   and the reduced vectors as the full ones' first columns: bit for bit. LAPACK's gesdd
   (TENSOR_LAPACK) takes another path for jobz 'N', 'S' and 'A' (as in PyTorch): there they
   agree to rounding (the vectors up to sign) */
#ifdef TENSOR_LAPACK
#define SVD_SAME(d, tol) ((d) <= (tol))
#define SVD_VEC(x) tn_abs(x)
#else
#define SVD_SAME(d, tol) ((d) == 0)
#define SVD_VEC(x) (x)
#endif

static double maxabs(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = tn_numel(a) ? tn_item(tn_max(tn_abs(tn_sub(a, b)))) : 0;
    tn_scope_end();
    return r;
}
static double amax(tn_tensor *a) {
    tn_scope_begin();
    double r = tn_numel(a) ? tn_item(tn_max(tn_abs(a))) : 0;
    tn_scope_end();
    return r;
}
static tn_tensor *mT(tn_tensor *t) { return tn_transpose(t, -2, -1); }
/* |Q^T Q - I| for the columns of Q [..., m, c] */
static double orth_err(tn_tensor *Q) {
    int64_t c = tn_size(Q, -1);
    return maxabs(tn_matmul(mT(Q), Q), tn_eye(c, c, tn_get_dtype(Q)));
}
static tn_tensor *sym(tn_tensor *x) { return tn_add(x, mT(x)); }

TEST(qr_backward_error_and_orthogonality) {
    tn_manual_seed(1);
    const int64_t shapes[][3] = {{1, 1, 1}, {1, 6, 6}, {3, 9, 4}, {2, 4, 9}, {1, 40, 40}, {2, 33, 17}};
    for (int c = 0; c < 6; c++) {
        tn_scope_begin();
        const int64_t b = shapes[c][0], m = shapes[c][1], n = shapes[c][2], k = m < n ? m : n;
        /* a transposed view: non-contiguous input */
        tn_tensor *A = mT(tn_randn(TN_SHAPE(b, n, m), TN_F64)), *R = NULL;
        tn_tensor *Q = tn_linalg_qr(A, &R);
        CHECK(Q && R && tn_size(Q, -1) == k && tn_size(R, -2) == k && tn_size(R, -1) == n);
        double scale = (double)(m > n ? m : n) * EPS;
        CHECK(maxabs(tn_matmul(Q, R), A) / amax(A) < 4 * scale);
        CHECK(orth_err(Q) < 4 * scale);
        CHECK(maxabs(tn_tril(R, .diagonal = -1), tn_zeros_like(R)) == 0);
        /* complete: Q square and orthogonal, R [m, n] */
        tn_tensor *Rc = NULL, *Qc = tn_linalg_qr(A, &Rc, .mode = 1);
        CHECK(Qc && tn_size(Qc, -1) == m && tn_size(Rc, -2) == m && orth_err(Qc) < 4 * scale);
        CHECK(maxabs(tn_matmul(Qc, Rc), A) / amax(A) < 4 * scale);
        /* r: Q empty, R the reduced one */
        tn_tensor *Rr = NULL, *Qr = tn_linalg_qr_str(A, &Rr, "mode='r'");
        CHECK(Qr && tn_numel(Qr) == 0 && maxabs(Rr, R) == 0);
        /* torch.qr(some=False) is complete */
        tn_tensor *Ro = NULL, *Qo = tn_qr(A, &Ro, .some = false);
        CHECK(Qo && maxabs(Qo, Qc) == 0 && maxabs(Ro, Rc) == 0);
        tn_scope_end();
    }
}
TEST(qr_lapack_signs_geqrf_float32_empty) {
    tn_scope_begin();
    /* dlarfg: beta = -sign(alpha) |x|: R = -5, Q = -(0.6, 0.8), as torch's LAPACK */
    const double a[2] = {3, 4};
    tn_tensor *R = NULL, *Q = tn_linalg_qr(tn_from_data(a, TN_SHAPE(2, 1), TN_F64), &R);
    CHECK(fabs(tn_item(R) + 5) < 1e-15 && fabs(tn_item(tn_select(tn_select(Q, 0, 1), 0, 0)) + 0.8) < 1e-15);
    /* an already upper-triangular column: H = I (tau 0), R keeps its sign */
    const double u[4] = {-2, 1, 0, 3};
    tn_tensor *tau = NULL, *g = tn_geqrf(tn_from_data(u, TN_SHAPE(2, 2), TN_F64), &tau);
    CHECK(g && tau && tn_size(tau, 0) == 2 && tn_item(tn_select(tau, 0, 0)) == 0 && tn_item(tn_select(tn_select(g, 0, 0), 0, 0)) == -2);
    /* geqrf's packing: Q from the reflectors below the diagonal reproduces linalg.qr's */
    tn_manual_seed(2);
    tn_tensor *A = tn_randn(TN_SHAPE(5, 3), TN_F64);
    g = tn_geqrf(A, &tau);
    tn_tensor *R2 = NULL;
    tn_linalg_qr(A, &R2);
    CHECK(g && maxabs(tn_triu(tn_narrow(g, 0, 0, 3)), R2) < 1e-15);
    /* float32 */
    tn_tensor *Af = tn_randn(TN_SHAPE(6, 4), TN_F32), *Rf = NULL, *Qf = tn_linalg_qr(Af, &Rf);
    CHECK(tn_get_dtype(Qf) == TN_F32 && tn_get_dtype(Rf) == TN_F32 && maxabs(tn_matmul(Qf, Rf), Af) < 1e-5);
    /* 0-size: Q [3, 0, 0]... as torch */
    tn_tensor *E = tn_zeros(TN_SHAPE(3, 4, 0), TN_F64), *Re = NULL, *Qe = tn_linalg_qr(E, &Re);
    CHECK(Qe && tn_size(Qe, 1) == 4 && tn_size(Qe, 2) == 0 && tn_size(Re, 1) == 0 && tn_size(Re, 2) == 0);
    Qe = tn_linalg_qr(E, &Re, .mode = 1);
    CHECK(Qe && tn_size(Qe, 2) == 4 && maxabs(Qe, tn_eye(4, 4, TN_F64)) == 0);
    tn_scope_end();
}
/* eigvalsh of a 300 x 300 symmetric matrix (sytrd's symv in two parts from m = 160, dsterf):
   the same bits at 1 and 2 threads; in the plain (non-AVX2) copies (the GEMM's too, whose
   bits differ) the same values to n eps; the sum and the sum of squares of the eigenvalues
   are the trace and |A|_F^2 (to n eps). */
TEST(eigvalsh_bits_threads_isa) {
    tn_manual_seed(3);
    tn_scope_begin();
    const int64_t n = 300;
    tn_tensor *X = tn_randn(TN_SHAPE(n, n), TN_F64), *A = tn_contiguous(tn_add(X, tn_transpose(X, 0, 1)));
    const int old = tn_get_num_threads();
    tn_set_num_threads(1);
    tn_tensor *L1 = tn_contiguous(tn_linalg_eigvalsh(A));
    tn_set_num_threads(2);
    tn_tensor *L2 = tn_contiguous(tn_linalg_eigvalsh(A));
    tn__gemm_tune.isa = 0;   /* the plain copies */
    tn_tensor *L0 = tn_contiguous(tn_linalg_eigvalsh(A));
    tn__gemm_tune.isa = -1;
    tn_set_num_threads(old);
    CHECK(L1 && L2 && L0);
    if (L1 && L2 && L0) {
        CHECK(memcmp(tn_data_ptr(L1), tn_data_ptr(L2), (size_t)n * sizeof(double)) == 0);
        const double *l = (const double *)tn_data_ptr(L1), *l0 = (const double *)tn_data_ptr(L0);
        double d0 = 0, m0 = 0;
        for (int64_t i = 0; i < n; i++) { d0 = fmax(d0, fabs(l[i] - l0[i])); m0 = fmax(m0, fabs(l[i])); }
        CHECK(d0 <= 4 * n * EPS * m0);
        double s = 0, s2 = 0, mx = 0;
        bool sorted = true;
        for (int64_t i = 0; i < n; i++) { s += l[i]; s2 += l[i] * l[i]; mx = fmax(mx, fabs(l[i])); if (i && l[i] < l[i - 1]) sorted = false; }
        CHECK(sorted);
        CHECK(fabs(s - tn_item(tn_trace(A))) < 4 * n * EPS * mx);
        const double f2 = tn_item(tn_sum(tn_mul(A, A)));
        CHECK(fabs(s2 - f2) < 8 * n * EPS * f2);
    }
    tn_scope_end();
}
TEST(eigh_values_vectors) {
    tn_manual_seed(3);
    const int64_t ns[] = {1, 2, 5, 40, 97};   /* 97: three of sytrd's 32-column blocks and a partial one */
    for (int c = 0; c < 5; c++) {
        tn_scope_begin();
        const int64_t n = ns[c];
        tn_tensor *A = sym(tn_randn(TN_SHAPE(3, n, n), TN_F64)), *V = NULL;
        tn_tensor *L = tn_linalg_eigh(A, &V);
        CHECK(L && V && tn_size(L, -1) == n);
        /* A V = V diag(L), V orthogonal, L ascending */
        CHECK(maxabs(tn_matmul(A, V), tn_mul(V, tn_unsqueeze(L, -2))) / amax(A) < 8 * (double)n * EPS);
        CHECK(orth_err(V) < 8 * (double)n * EPS);
        if (n > 1) CHECK(tn_item(tn_min(tn_sub(tn_narrow(L, -1, 1, n - 1), tn_narrow(L, -1, 0, n - 1)))) >= 0);
        /* eigvalsh: the same values, to n eps (its dsterf rounds otherwise than eigh's QL with
           vectors, as LAPACK's dsyevd 'N' and 'V' do) */
        CHECK(maxabs(tn_linalg_eigvalsh(A), L) <= 4 * (double)n * EPS * (amax(A) > 0 ? amax(A) : 1));
        /* UPLO: only the named triangle is read */
        tn_tensor *junkL = tn_add(tn_triu(A), tn_tril(tn_full_like(A, 7), .diagonal = -1));
        tn_tensor *Vu = NULL, *Lu = tn_linalg_eigh(junkL, &Vu, .UPLO = "U");
        CHECK(Lu && maxabs(Lu, L) < 8 * (double)n * EPS * amax(A));
        CHECK(maxabs(tn_linalg_eigvalsh_str(junkL, "UPLO='U'"), L) < 8 * (double)n * EPS * amax(A));
        tn_scope_end();
    }
    tn_scope_begin();
    const double a[4] = {2, 1, 1, 2}, d[9] = {2, 0, 0, 0, 1, 0, 0, 0, 1};
    tn_tensor *V = NULL, *L = tn_linalg_eigh(tn_from_data(a, TN_SHAPE(2, 2), TN_F64), &V);
    CHECK(fabs(tn_item(tn_select(L, 0, 0)) - 1) < 1e-15 && fabs(tn_item(tn_select(L, 0, 1)) - 3) < 1e-15);
    /* repeated eigenvalues: still an orthonormal basis */
    tn_tensor *D = tn_from_data(d, TN_SHAPE(3, 3), TN_F64);
    L = tn_linalg_eigh(D, &V);
    CHECK(L && fabs(tn_item(tn_select(L, 0, 0)) - 1) < 1e-15 && orth_err(V) < 1e-15 && maxabs(tn_matmul(tn_mul(V, tn_unsqueeze(L, -2)), mT(V)), D) < 1e-15);
    L = tn_linalg_eigh(tn_eye(4, 4, TN_F32), &V);
    CHECK(L && tn_get_dtype(L) == TN_F32 && maxabs(L, tn_ones(TN_SHAPE(4), TN_F32)) == 0);
    L = tn_linalg_eigh(tn_zeros(TN_SHAPE(2, 0, 0), TN_F64), &V);
    CHECK(L && tn_size(L, 0) == 2 && tn_size(L, 1) == 0 && tn_size(V, 2) == 0);
    tn_scope_end();
}
TEST(svd_factors) {
    tn_manual_seed(4);
    const int64_t shapes[][3] = {{1, 1, 1}, {2, 5, 5}, {3, 9, 4}, {2, 4, 9}, {1, 40, 40}, {1, 30, 12}};
    for (int c = 0; c < 6; c++) {
        tn_scope_begin();
        const int64_t b = shapes[c][0], m = shapes[c][1], n = shapes[c][2], k = m < n ? m : n;
        tn_tensor *A = mT(tn_randn(TN_SHAPE(b, n, m), TN_F64)), *S = NULL, *Vh = NULL;
        tn_tensor *U = tn_linalg_svd(A, &S, &Vh, .full_matrices = false);
        CHECK(U && S && Vh && tn_size(U, -1) == k && tn_size(Vh, -2) == k);
        const double scale = (double)(m > n ? m : n) * EPS;
        CHECK(maxabs(tn_matmul(tn_mul(U, tn_unsqueeze(S, -2)), Vh), A) / amax(A) < 8 * scale);
        CHECK(orth_err(U) < 8 * scale && orth_err(mT(Vh)) < 8 * scale);
        if (k > 1) CHECK(tn_item(tn_min(tn_sub(tn_narrow(S, -1, 0, k - 1), tn_narrow(S, -1, 1, k - 1)))) >= 0);
        CHECK(SVD_SAME(maxabs(tn_linalg_svdvals(A), S), 8 * scale * amax(S)));
        /* full matrices: square orthogonal U and Vh; the first k columns / rows are the reduced ones */
        tn_tensor *Sf = NULL, *Vf = NULL, *Uf = tn_linalg_svd(A, &Sf, &Vf);
        CHECK(Uf && tn_size(Uf, -1) == m && tn_size(Vf, -1) == n && orth_err(Uf) < 8 * scale && orth_err(Vf) < 8 * scale);
        CHECK(SVD_SAME(maxabs(SVD_VEC(tn_narrow(Uf, -1, 0, k)), SVD_VEC(U)), 64 * scale) && SVD_SAME(maxabs(SVD_VEC(tn_narrow(Vf, -2, 0, k)), SVD_VEC(Vh)), 64 * scale));
        /* torch.svd: V = Vh^T */
        tn_tensor *So = NULL, *Vo = NULL, *Uo = tn_svd(A, &So, &Vo);
        CHECK(Uo && maxabs(Uo, U) == 0 && maxabs(mT(Vo), Vh) == 0);
        Uo = tn_svd(A, &So, &Vo, .compute_uv = false);
        CHECK(Uo && tn_size(Uo, -1) == m && tn_size(Vo, -1) == n && amax(Uo) == 0 && amax(Vo) == 0 && SVD_SAME(maxabs(So, S), 8 * scale * amax(S)));
        tn_scope_end();
    }
}
TEST(svd_rank_deficient_repeated_zero) {
    tn_manual_seed(5);
    tn_scope_begin();
    /* rank 2 in 6 x 5: three (near-)zero singular values, U still orthonormal */
    tn_tensor *A = tn_matmul(tn_randn(TN_SHAPE(6, 2), TN_F64), tn_randn(TN_SHAPE(2, 5), TN_F64)), *S = NULL, *Vh = NULL;
    tn_tensor *U = tn_linalg_svd(A, &S, &Vh);
    CHECK(U && orth_err(U) < 1e-14 && orth_err(mT(Vh)) < 1e-14);
    CHECK(tn_item(tn_select(S, 0, 2)) < 1e-14 * tn_item(tn_select(S, 0, 0)));
    CHECK(maxabs(tn_matmul(tn_mul(tn_narrow(U, -1, 0, 5), tn_unsqueeze(S, -2)), Vh), A) < 1e-14 * amax(A) * 10);
    CHECK(tn_item(tn_linalg_matrix_rank(A)) == 2);
    /* the zero matrix: S = 0, U and Vh completed to orthonormal bases */
    tn_tensor *Z = tn_zeros(TN_SHAPE(4, 3), TN_F64);
    U = tn_linalg_svd(Z, &S, &Vh);
    CHECK(U && amax(S) == 0 && orth_err(U) < 1e-15 && orth_err(Vh) < 1e-15);
    CHECK(tn_item(tn_linalg_matrix_rank(Z)) == 0);
    /* repeated singular values: an orthogonal matrix times 3 */
    tn_tensor *R = NULL, *Q = tn_linalg_qr(tn_randn(TN_SHAPE(5, 5), TN_F64), &R);
    U = tn_linalg_svd(tn_mul_scalar(Q, 3), &S, &Vh);
    CHECK(maxabs(S, tn_full(TN_SHAPE(5), 3, TN_F64)) < 1e-14 && orth_err(U) < 1e-14);
    /* 0-size */
    U = tn_linalg_svd(tn_zeros(TN_SHAPE(2, 3, 0), TN_F64), &S, &Vh);
    CHECK(U && tn_size(U, -1) == 3 && tn_size(S, -1) == 0 && tn_size(Vh, -1) == 0 && maxabs(U, tn_eye(3, 3, TN_F64)) == 0);
    U = tn_linalg_svd(tn_zeros(TN_SHAPE(0, 3, 2), TN_F64), &S, &Vh, .full_matrices = false);
    CHECK(U && tn_size(U, 0) == 0 && tn_size(S, -1) == 2);
    /* float32 */
    tn_tensor *Af = tn_randn(TN_SHAPE(7, 5), TN_F32);
    U = tn_linalg_svd(Af, &S, &Vh, .full_matrices = false);
    CHECK(tn_get_dtype(U) == TN_F32 && maxabs(tn_matmul(tn_mul(U, tn_unsqueeze(S, -2)), Vh), Af) < 1e-5);
    tn_scope_end();
}
TEST(pinv_rank_lstsq_cond) {
    tn_manual_seed(6);
    tn_scope_begin();
    /* Moore-Penrose conditions, rank-deficient and wide/tall */
    const int64_t shapes[][2] = {{5, 3}, {3, 5}, {4, 4}};
    for (int c = 0; c < 3; c++) {
        const int64_t m = shapes[c][0], n = shapes[c][1];
        tn_tensor *A = tn_matmul(tn_randn(TN_SHAPE(2, m, 2), TN_F64), tn_randn(TN_SHAPE(2, 2, n), TN_F64));
        tn_tensor *P = tn_linalg_pinv(A);
        CHECK(P && tn_size(P, -2) == n && tn_size(P, -1) == m);
        CHECK(maxabs(tn_matmul(A, tn_matmul(P, A)), A) < 1e-12 && maxabs(tn_matmul(P, tn_matmul(A, P)), P) < 1e-12);
        tn_tensor *AP = tn_matmul(A, P), *PA = tn_matmul(P, A);
        CHECK(maxabs(AP, mT(AP)) < 1e-12 && maxabs(PA, mT(PA)) < 1e-12);
        tn_tensor *rk = tn_linalg_matrix_rank(A);
        CHECK(rk && tn_get_dtype(rk) == TN_I64 && tn_item(tn_min(rk)) == 2 && tn_item(tn_max(rk)) == 2);
    }
    /* full rank: pinv = inv; hermitian through eigh, an indefinite matrix */
    tn_tensor *S = sym(tn_randn(TN_SHAPE(5, 5), TN_F64));
    CHECK(maxabs(tn_linalg_pinv(S), tn_linalg_inv(S)) < 1e-10);
    CHECK(maxabs(tn_linalg_pinv(S, .hermitian = true), tn_linalg_inv(S)) < 1e-10);
    CHECK(tn_item(tn_linalg_matrix_rank(S, .hermitian = true)) == 5);
    /* tolerances: diag(1, 1e-3, 1e-9) */
    const double d[9] = {1, 0, 0, 0, 1e-3, 0, 0, 0, 1e-9};
    tn_tensor *D = tn_from_data(d, TN_SHAPE(3, 3), TN_F64);
    CHECK(tn_item(tn_linalg_matrix_rank(D)) == 3);
    CHECK(tn_item(tn_linalg_matrix_rank(D, .atol = 1e-6)) == 2);
    CHECK(tn_item(tn_linalg_matrix_rank(D, .rtol = 1e-2)) == 1);
    CHECK(tn_item(tn_linalg_matrix_rank_str(D, "atol=1e-6, rtol=0.1")) == 1);
    CHECK(fabs(tn_item(tn_select(tn_select(tn_linalg_pinv(D, .atol = 1e-6), 0, 2), 0, 2))) == 0);
    CHECK(fabs(tn_item(tn_select(tn_select(tn_pinverse(D), 0, 2), 0, 2)) - 1e9) < 1e-3);
    /* lstsq: a tall full-rank system against the normal equations; the drivers' outputs */
    tn_tensor *A = tn_randn(TN_SHAPE(3, 8, 4), TN_F64), *B = tn_randn(TN_SHAPE(3, 8, 2), TN_F64), *res = NULL, *rank = NULL, *sv = NULL;
    tn_tensor *X = tn_linalg_lstsq(A, B, &res, &rank, &sv);
    tn_tensor *Xn = tn_linalg_solve(tn_matmul(mT(A), A), tn_matmul(mT(A), B));
    CHECK(X && maxabs(X, Xn) < 1e-12 && tn_numel(res) == 0 && tn_item(tn_min(rank)) == 4 && tn_numel(sv) == 0);
    X = tn_linalg_lstsq(A, B, &res, &rank, &sv, .driver = "gelsd");
    CHECK(X && tn_size(res, 0) == 3 && tn_size(res, 1) == 2 && tn_size(sv, 1) == 4);
    CHECK(maxabs(res, tn_sum_dims(tn_square(tn_sub(tn_matmul(A, X), B)), TN_DIMS(-2))) < 1e-12);
    X = tn_linalg_lstsq_str(A, B, &res, &rank, &sv, "driver='gels'");
    CHECK(X && tn_numel(rank) == 0 && tn_size(res, 1) == 2);
    /* vectors; rank-deficient: the minimum-norm solution (pinv's) */
    tn_tensor *Ar = tn_matmul(tn_randn(TN_SHAPE(6, 2), TN_F64), tn_randn(TN_SHAPE(2, 4), TN_F64)), *b = tn_randn(TN_SHAPE(6), TN_F64);
    X = tn_linalg_lstsq(Ar, b, &res, &rank, &sv);
    CHECK(X && tn_ndim(X) == 1 && tn_item(rank) == 2);
    CHECK(maxabs(X, tn_squeeze_dim(tn_matmul(tn_linalg_pinv(Ar), tn_unsqueeze(b, -1)), -1)) < 1e-12);
    /* cond */
    const double c2[4] = {2, 0, 0, 0.5}, s2[4] = {1, 2, 2, 4};
    tn_tensor *C = tn_from_data(c2, TN_SHAPE(2, 2), TN_F64), *Cs = tn_from_data(s2, TN_SHAPE(2, 2), TN_F64);
    CHECK(fabs(tn_item(tn_linalg_cond(C, NULL)) - 4) < 1e-14 && fabs(tn_item(tn_linalg_cond(C, "-2")) - 0.25) < 1e-15);
    CHECK(fabs(tn_item(tn_linalg_cond(C, "fro")) - 4.25) < 1e-13);   /* |C|_F |C^-1|_F = sqrt(4.25)^2 */
    CHECK(fabs(tn_item(tn_linalg_cond(C, "nuc")) - 2.5 * 2.5) < 1e-13 && fabs(tn_item(tn_linalg_cond(C, "inf")) - 4) < 1e-14);
    CHECK(fabs(tn_item(tn_linalg_cond(C, "-1")) - 0.25) < 1e-15);
    CHECK(isinf(tn_item(tn_linalg_cond(Cs, "1"))));
    tn_scope_end();
}
TEST(errors_as_torch) {
    tn_scope_begin();
    tn_tensor *R = NULL, *V = NULL, *S = NULL, *Vh = NULL, *r1 = NULL, *r2 = NULL, *r3 = NULL;
    CHECK_ERR(tn_linalg_qr(tn_zeros(TN_SHAPE(3), TN_F64), &R), "must have at least 2 dimensions");
    CHECK_ERR(tn_linalg_qr(tn_zeros(TN_SHAPE(2, 2), TN_I64), &R), "Expected a floating point or complex tensor as input. Got Long");
    CHECK_ERR(tn_linalg_qr_str(tn_eye(2, 2, TN_F64), &R, "mode='x'"), "mode");
    CHECK_ERR(tn_linalg_eigh(tn_zeros(TN_SHAPE(2, 3), TN_F64), &V), "square matrices, but they are 2 by 3 matrices");
    CHECK_ERR(tn_linalg_eigh(tn_eye(2, 2, TN_F64), &V, .UPLO = "X"), "Expected UPLO argument to be 'L' or 'U', but got X");
    CHECK_ERR(tn_linalg_eigh(tn_full(TN_SHAPE(3, 3), NAN, TN_F64), &V), "The algorithm failed to converge");
    CHECK_ERR(tn_linalg_svd(tn_full(TN_SHAPE(3, 3), NAN, TN_F64), &S, &Vh), "The algorithm failed to converge because the input matrix contained non-finite values");
    CHECK_ERR(tn_linalg_lstsq(tn_eye(3, 3, TN_F64), tn_ones(TN_SHAPE(3, 1), TN_F64), &r1, &r2, &r3, .driver = "gelsx"), "parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
    CHECK_ERR(tn_linalg_lstsq(tn_eye(3, 3, TN_F64), tn_ones(TN_SHAPE(4, 1), TN_F64), &r1, &r2, &r3), "input.size(-2) should match other.size(-2)");
    CHECK_ERR(tn_linalg_cond(tn_ones(TN_SHAPE(2, 3), TN_F64), "fro"), "square matrices, but they are 2 by 3");
    CHECK_ERR(tn_linalg_pinv(tn_ones(TN_SHAPE(2, 3), TN_F64), .hermitian = true), "square matrices");
    /* QR backward: mode 'r', and 'complete' with more rows than columns */
    tn_tensor *A = tn_randn(TN_SHAPE(4, 3), TN_F64);
    tn_requires_grad_(A, true);
    tn_tensor *Q = tn_linalg_qr(A, &R, .mode = 2);
    CHECK(Q && tn_backward(tn_sum(R)) != 0 && strstr(tn_last_error(), "The derivative of linalg.qr depends on Q, which is not computed when mode='r'"));
    Q = tn_linalg_qr(A, &R, .mode = 1);
    CHECK(Q && tn_backward(tn_sum(Q)) != 0 && strstr(tn_last_error(), "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."));
    CHECK(strcmp(tn_grad_fn_name(Q), "LinalgQrBackward0") == 0);
    tn_tensor *U = tn_linalg_svd(A, &S, &Vh);
    CHECK(U && strcmp(tn_grad_fn_name(S), "LinalgSvdBackward0") == 0);
    tn_scope_end();
}

/* gradcheck's leaves are contiguous: the ops get transposed (non-contiguous) views. The
   vectors' signs are fixed (by the first row: sign() has a zero gradient) so the functions
   are gauge-invariant, as PyTorch's OpInfo tests do. */
static tn_tensor *T_(tn_tensor *x) { return mT(x); }
static tn_tensor *fix(tn_tensor *V) { return tn_mul(V, tn_sign(tn_narrow(V, -2, 0, 1))); }
static tn_tensor *f_qr(tn_tensor *const *x, int n, void *u) {
    (void)n;
    tn_tensor *R = NULL, *Q = tn_linalg_qr(T_(x[0]), &R);
    return u ? R : Q;
}
static tn_tensor *f_eigh(tn_tensor *const *x, int n, void *u) {
    (void)n;
    tn_tensor *V = NULL, *L = tn_linalg_eigh(sym(x[0]), &V, .UPLO = u == (void *)2 ? "U" : "L");
    return u ? fix(V) : L;
}
static tn_tensor *f_eigvalsh(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_eigvalsh(sym(x[0])); }
static tn_tensor *f_svd(tn_tensor *const *x, int n, void *u) {
    (void)n;
    tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(T_(x[0]), &S, &Vh, .full_matrices = false);
    tn_tensor *sg = tn_sign(tn_narrow(U, -2, 0, 1));
    if (u == (void *)1) return tn_mul(U, sg);
    if (u == (void *)2) return tn_mul(Vh, mT(sg));
    return S;
}
static tn_tensor *f_svdvals(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_svdvals(T_(x[0])); }
static tn_tensor *f_pinv(tn_tensor *const *x, int n, void *u) {
    (void)n;
    return u ? tn_linalg_pinv(sym(x[0]), .hermitian = true) : tn_linalg_pinv(T_(x[0]));
}
static tn_tensor *f_lstsq(tn_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    tn_tensor *r = NULL, *k = NULL, *s = NULL;
    return tn_linalg_lstsq(T_(x[0]), x[1], &r, &k, &s);
}
static tn_tensor *f_cond(tn_tensor *const *x, int n, void *u) { (void)n; return tn_linalg_cond(T_(x[0]), (const char *)u); }
static bool gc(tn_gradcheck_fn f, tn_tensor *const *in, int n, void *u) {
    return tn_gradcheck(f, in, n, u, .rtol = 1e-4) && tn_gradgradcheck(f, in, n, u, .rtol = 1e-4);
}
static tn_tensor *leaf(const int64_t *shape, int nd) {
    tn_tensor *t = tn_randn(shape, nd, TN_F64);
    tn_requires_grad_(t, true);
    return t;
}
TEST(gradcheck_all) {
    tn_manual_seed(7);
    tn_scope_begin();
    /* QR: square, tall and wide (T_ transposes the leaves), both outputs */
    tn_tensor *sq = leaf(TN_SHAPE(2, 4, 4)), *tall = leaf(TN_SHAPE(3, 5)), *wide = leaf(TN_SHAPE(2, 5, 3));
    for (int o = 0; o < 2; o++) {
        void *u = o ? (void *)1 : NULL;
        CHECK(gc(f_qr, &sq, 1, u));
        CHECK(gc(f_qr, &tall, 1, u));
        CHECK(gc(f_qr, &wide, 1, u));
    }
    tn_tensor *s4 = leaf(TN_SHAPE(2, 4, 4));
    CHECK(gc(f_eigh, &s4, 1, NULL));
    CHECK(gc(f_eigh, &s4, 1, (void *)1));
    CHECK(gc(f_eigh, &s4, 1, (void *)2));
    CHECK(gc(f_eigvalsh, &s4, 1, NULL));
    for (int o = 0; o < 3; o++) {
        void *u = (void *)(intptr_t)o;
        CHECK(gc(f_svd, &sq, 1, u));
        CHECK(gc(f_svd, &tall, 1, u));
        CHECK(gc(f_svd, &wide, 1, u));
    }
    CHECK(gc(f_svdvals, &tall, 1, NULL));
    CHECK(gc(f_pinv, &tall, 1, NULL));
    CHECK(gc(f_pinv, &wide, 1, NULL));
    CHECK(gc(f_pinv, &s4, 1, (void *)1));
    tn_tensor *ls[2] = {leaf(TN_SHAPE(3, 6)), leaf(TN_SHAPE(6, 2))};
    CHECK(gc(f_lstsq, ls, 2, NULL));
    CHECK(gc(f_cond, &sq, 1, NULL));
    CHECK(gc(f_cond, &sq, 1, (void *)"fro"));
    CHECK(gc(f_cond, &sq, 1, (void *)"nuc"));
    tn_scope_end();
}

int main(void) {
    RUN(qr_backward_error_and_orthogonality);
    RUN(qr_lapack_signs_geqrf_float32_empty);
    RUN(eigvalsh_bits_threads_isa);
    RUN(eigh_values_vectors);
    RUN(svd_factors);
    RUN(svd_rank_deficient_repeated_zero);
    RUN(pinv_rank_lstsq_cond);
    RUN(errors_as_torch);
    RUN(gradcheck_all);
    return tn_test_report();
}
