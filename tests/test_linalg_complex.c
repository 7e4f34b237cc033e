/* Complex linear algebra (issue 26 item 3): complex64/complex128 LU, Cholesky, triangular
   and factored solves, det/slogdet/logdet, inv, QR, matrix_exp, and the ops through the
   real form [[Re, -Im], [Im, Re]] (svdvals, eigvalsh, pinv, matrix_rank), checked by
   identities (A = L L^H, Q^H Q = I, P L U = A, residuals, det(AB) = det(A) det(B), exp(A)
   exp(-A) = I, A pinv(A) A = A), on batched, non-contiguous and empty inputs; tn_gradcheck
   and tn_gradgradcheck in complex128 (real and imaginary parts perturbed); the complex ops
   still refused (singular vectors) refuse with a clear error; eigh's vectors (through the real
   form) diagonalise, and a phase-invariant function of them passes gradcheck.
   bindings/python/tests/test_linalg_complex.py compares the same ops against torch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

/* random complex values in [-1, 1] + i [-1, 1] (fixed seed) */
static tn_tensor *crand(const int64_t *shape, int nd, tn_dtype dtype, unsigned seed) {
    int64_t n = 1, sh[TN_MAX_DIMS];
    for (int d = 0; d < nd; d++) { n *= shape[d]; sh[d] = shape[d]; }
    double *v = (double *)malloc((size_t)(2 * n + 2) * sizeof(double));
    srand(seed);
    for (int64_t i = 0; i < 2 * n; i++) v[i] = 2.0 * rand() / RAND_MAX - 1.0;
    sh[nd] = 2;
    tn_tensor *t = tn_to_dtype(tn_view_as_complex(tn_from_data(v, sh, nd + 1, TN_F64)), dtype);
    free(v);
    return t;
}
static tn_tensor *mH(tn_tensor *t) { return tn_conj(tn_transpose(t, -2, -1)); }
/* svdvals is svd's S bit for bit in the built-in SVD; LAPACK's gesdd (TENSOR_LAPACK) takes
   another path without the vectors (jobz 'N', as in PyTorch): equal to rounding there */
#ifdef TENSOR_LAPACK
#define SVD_SAME(d, tol) ((d) <= 100 * (tol))   /* (S up to ~20 for 150 x 130: n eps |S|) */
#else
#define SVD_SAME(d, tol) ((d) == 0)
#endif
/* max |a - b| (0 for empty tensors) */
static double maxdiff(tn_tensor *a, tn_tensor *b) {
    tn_tensor *d = a && b ? tn_abs(tn_sub(tn_to_dtype(a, TN_C128), tn_to_dtype(b, TN_C128))) : NULL;
    if (!d) return INFINITY;
    return tn_numel(d) ? tn_item(tn_amax(d, NULL, 0)) : 0;
}
/* a well-conditioned [.., n, n]: random + 3 I */
static tn_tensor *square(const int64_t *batch, int nb, int64_t n, tn_dtype dt, unsigned seed) {
    int64_t sh[TN_MAX_DIMS];
    for (int d = 0; d < nb; d++) sh[d] = batch[d];
    sh[nb] = sh[nb + 1] = n;
    return tn_add(crand(sh, nb + 2, dt, seed), tn_mul_scalar(tn_eye(n, n, dt), 3));
}

TEST(factorizations_identities) {
    for (int di = 0; di < 2; di++) {
        const tn_dtype dt = di ? TN_C128 : TN_C64;
        const double tol = di ? 1e-12 : 2e-5;
        tn_scope_begin();
        /* batched and non-contiguous (a transposed view) */
        tn_tensor *A = tn_transpose(square(TN_SHAPE(2, 3), 4, dt, 1), -2, -1);
        tn_tensor *B = crand(TN_SHAPE(2, 3, 4, 2), dt, 2);
        /* Cholesky of a Hermitian positive-definite H: H = L L^H, L lower with a real positive diagonal */
        tn_tensor *H = tn_add(tn_matmul(A, mH(A)), tn_eye(4, 4, dt));
        tn_tensor *L = tn_linalg_cholesky(H), *U = tn_linalg_cholesky(H, .upper = true);
        CHECK(L && tn_get_dtype(L) == dt && maxdiff(tn_matmul(L, mH(L)), H) < 20 * tol);
        CHECK(maxdiff(U, mH(L)) < tol && maxdiff(tn_triu(L, .diagonal = 1), tn_zeros_like(L)) == 0);
        CHECK(maxdiff(tn_imag(tn_diagonal(L, .dim1 = -2, .dim2 = -1)), tn_zeros(TN_SHAPE(2, 3, 4), tn_dtype_to_real(dt))) == 0);
        CHECK(maxdiff(tn_matmul(H, tn_cholesky_solve(B, L)), B) < 20 * tol);
        CHECK(maxdiff(tn_matmul(H, tn_cholesky_solve(B, U, .upper = true)), B) < 20 * tol);
        CHECK(maxdiff(tn_matmul(H, tn_cholesky_inverse(L)), tn_eye(4, 4, dt)) < 20 * tol);
        /* LU: P L U = A; lu_solve (and its adjoint) leaves residuals of rounding size */
        tn_tensor *piv = NULL, *LU = tn_linalg_lu_factor(A, &piv), *Lf = NULL, *Uf = NULL;
        tn_tensor *P = tn_lu_unpack(LU, piv, &Lf, &Uf);
        CHECK(P && maxdiff(tn_matmul(P, tn_matmul(Lf, Uf)), A) < 20 * tol);
        CHECK(maxdiff(tn_matmul(A, tn_linalg_lu_solve(LU, piv, B)), B) < 20 * tol);
        CHECK(maxdiff(tn_matmul(mH(A), tn_linalg_lu_solve(LU, piv, B, .adjoint = true)), B) < 20 * tol);
        tn_tensor *Bt = tn_transpose(B, -2, -1);
        CHECK(maxdiff(tn_matmul(tn_linalg_lu_solve(LU, piv, Bt, .left = false), A), Bt) < 20 * tol);
        /* solve, inv, the triangular solves */
        CHECK(maxdiff(tn_matmul(A, tn_linalg_solve(A, B)), B) < 20 * tol);
        CHECK(maxdiff(tn_matmul(tn_linalg_solve(A, Bt, .left = false), A), Bt) < 20 * tol);
        CHECK(maxdiff(tn_matmul(A, tn_linalg_inv(A)), tn_eye(4, 4, dt)) < 20 * tol);
        tn_tensor *T = tn_triu(A);
        CHECK(maxdiff(tn_matmul(T, tn_linalg_solve_triangular(T, B, true)), B) < 20 * tol);
        CHECK(maxdiff(tn_matmul(tn_linalg_solve_triangular(T, Bt, true, .left = false), T), Bt) < 20 * tol);
        /* det(A B) = det(A) det(B); slogdet's sign on the unit circle; logdet = log(det) */
        tn_tensor *A2 = square(TN_SHAPE(2, 3), 4, dt, 3);
        CHECK(maxdiff(tn_div(tn_linalg_det(tn_matmul(A, A2)), tn_mul(tn_linalg_det(A), tn_linalg_det(A2))), tn_ones_like(tn_linalg_det(A))) < 20 * tol);
        tn_tensor *sg = NULL, *la = tn_linalg_slogdet(A, &sg);
        CHECK(la && tn_get_dtype(la) == tn_dtype_to_real(dt) && tn_get_dtype(sg) == dt);
        CHECK(maxdiff(tn_abs(sg), tn_ones_like(la)) < tol && maxdiff(tn_mul(sg, tn_exp(la)), tn_linalg_det(A)) < 100 * tol);
        CHECK(maxdiff(tn_exp(tn_logdet(A)), tn_linalg_det(A)) < 100 * tol);
        /* QR (reduced and complete, tall and wide): Q^H Q = I, Q R = A, R's diagonal real */
        tn_tensor *M = tn_transpose(crand(TN_SHAPE(2, 3, 5), dt, 4), -2, -1);   /* 5 x 3, non-contiguous */
        for (int wide = 0; wide < 2; wide++) {
            tn_tensor *X = wide ? mH(M) : M, *R = NULL, *Q = tn_linalg_qr(X, &R), *Rc = NULL, *Qc = tn_linalg_qr(X, &Rc, .mode = 1);
            const int64_t k = 3;
            CHECK(Q && maxdiff(tn_matmul(mH(Q), Q), tn_eye(k, k, dt)) < 10 * tol && maxdiff(tn_matmul(Q, R), X) < 10 * tol);
            CHECK(Qc && maxdiff(tn_matmul(Qc, Rc), X) < 10 * tol && maxdiff(tn_imag(tn_diagonal(R, .dim1 = -2, .dim2 = -1)), tn_zeros(TN_SHAPE(2, 3), tn_dtype_to_real(dt))) == 0);
        }
        /* geqrf + householder_product: Q again */
        tn_tensor *tau = NULL, *G = tn_geqrf(M, &tau), *R = NULL, *Q = tn_linalg_qr(M, &R);
        CHECK(G && tn_get_dtype(tau) == dt && maxdiff(tn_linalg_householder_product(G, tau), Q) < 10 * tol);
        /* exp(A) exp(-A) = I; a diagonal matrix's exp is the elementwise exp */
        tn_tensor *S = tn_mul_scalar(crand(TN_SHAPE(3, 3), dt, 5), 2);
        CHECK(maxdiff(tn_matmul(tn_linalg_matrix_exp(S), tn_linalg_matrix_exp(tn_neg(S))), tn_eye(3, 3, dt)) < 100 * tol);
        tn_tensor *dv = crand(TN_SHAPE(3), dt, 6);
        CHECK(maxdiff(tn_linalg_matrix_exp(tn_diag_embed(dv)), tn_diag_embed(tn_exp(dv))) < 10 * tol);
        /* through the real form: the singular values' squares sum to |A|_F^2, eigvalsh's to trace(H), A pinv(A) A = A */
        tn_tensor *sv = tn_linalg_svdvals(M), *fro = tn_linalg_matrix_norm(M);
        CHECK(sv && tn_get_dtype(sv) == tn_dtype_to_real(dt) && tn_size(sv, -1) == 3);
        CHECK(maxdiff(tn_sqrt(tn_sum_dims(tn_square(sv), TN_DIMS(-1))), fro) < 10 * tol);
        CHECK(maxdiff(tn_sum_dims(tn_linalg_eigvalsh(H), TN_DIMS(-1)), tn_sum_dims(tn_real(tn_diagonal(H, .dim1 = -2, .dim2 = -1)), TN_DIMS(-1))) < 100 * tol);
        tn_tensor *Pm = tn_linalg_pinv(M);
        CHECK(Pm && maxdiff(tn_matmul(M, tn_matmul(Pm, M)), M) < 10 * tol);
        CHECK(maxdiff(tn_linalg_matrix_rank(M), tn_full(TN_SHAPE(2), 3, TN_I64)) == 0);
        CHECK(maxdiff(tn_linalg_matrix_rank(tn_matmul(M, tn_zeros(TN_SHAPE(3, 3), dt))), tn_zeros(TN_SHAPE(2), TN_I64)) == 0);
        tn_scope_end();
    }
}

TEST(empty_and_errors) {
    tn_scope_begin();
    tn_tensor *E = tn_zeros(TN_SHAPE(2, 0, 0), TN_C128);
    tn_tensor *d = tn_linalg_det(E);
    CHECK(d && tn_get_dtype(d) == TN_C128 && maxdiff(d, tn_ones(TN_SHAPE(2), TN_C128)) == 0);   /* the empty product */
    CHECK(tn_linalg_cholesky(E) && tn_linalg_inv(E) && tn_numel(tn_linalg_inv(E)) == 0);
    tn_tensor *R = NULL;
    CHECK(tn_linalg_qr(tn_zeros(TN_SHAPE(0, 3), TN_C64), &R) && tn_get_dtype(R) == TN_C64);
    /* not positive-definite, singular: PyTorch's errors */
    tn_tensor *N = tn_mul_scalar(tn_eye(3, 3, TN_C128), -1);
    CHECK_ERR(tn_linalg_cholesky(N), "not positive-definite");
    CHECK_ERR(tn_linalg_inv(tn_zeros(TN_SHAPE(3, 3), TN_C128)), "singular");
    /* singular vectors of complex matrices: U S Vh = A, U and Vh unitary, S real descending
       (tall, wide, full_matrices) */
    tn_tensor *A = crand(TN_SHAPE(3, 3), TN_C128, 7), *S = NULL, *Vh = NULL, *V = NULL;
    /* (the last two past 128 columns: the back-transformation's blocked path, 64 reflectors a
       block, k off the block; one wide non-contiguous view) */
    tn_tensor *shapes[5] = {A, crand(TN_SHAPE(5, 3), TN_C128, 8), crand(TN_SHAPE(2, 3, 6), TN_C64, 9),
                            crand(TN_SHAPE(150, 130), TN_C128, 10), tn_transpose(crand(TN_SHAPE(2, 200, 131), TN_C64, 11), -2, -1)};
    for (int t = 0; t < 5; t++)
        for (int full = 0; full < 2; full++) {
            tn_tensor *M = shapes[t], *U = tn_linalg_svd(M, &S, &Vh, .full_matrices = full);
            const int64_t m = tn_size(M, -2), n = tn_size(M, -1), k = m < n ? m : n;
            const double tol = tn_get_dtype(M) == TN_C64 ? 1e-5 : 1e-13;
            CHECK(U && tn_get_dtype(U) == tn_get_dtype(M) && tn_get_dtype(Vh) == tn_get_dtype(M) && tn_get_dtype(S) == tn_dtype_to_real(tn_get_dtype(M)));
            CHECK(tn_size(U, -1) == (full ? m : k) && tn_size(Vh, -2) == (full ? n : k));
            tn_tensor *Uk = tn_narrow(U, -1, 0, k), *Vk = tn_narrow(Vh, -2, 0, k);
            CHECK(maxdiff(tn_matmul(tn_mul(Uk, tn_unsqueeze(tn_to_dtype(S, tn_get_dtype(M)), -2)), Vk), M) < tol);
            CHECK(maxdiff(tn_matmul(mH(U), U), tn_eye(tn_size(U, -1), tn_size(U, -1), tn_get_dtype(M))) < tol);
            CHECK(maxdiff(tn_matmul(Vh, mH(Vh)), tn_eye(tn_size(Vh, -2), tn_size(Vh, -2), tn_get_dtype(M))) < tol);
            CHECK(SVD_SAME(maxdiff(S, tn_linalg_svdvals(M)), tol));
        }
    /* eigh's vectors (through the real form): V diag(L) V^H = H, V^H V = I */
    tn_tensor *Hm = tn_add(A, mH(A)), *L = tn_linalg_eigh(Hm, &V);
    CHECK(L && tn_get_dtype(L) == TN_F64 && tn_get_dtype(V) == TN_C128);
    CHECK(maxdiff(tn_matmul(tn_mul(V, tn_unsqueeze(tn_to_dtype(L, TN_C128), -2)), mH(V)), Hm) < 1e-12);
    CHECK(maxdiff(tn_matmul(mH(V), V), tn_eye(3, 3, TN_C128)) < 1e-12);
    /* a complex and a real operand */
    CHECK_ERR(tn_linalg_solve(A, tn_ones(TN_SHAPE(3, 1), TN_F64)), "same dtype");
    tn_scope_end();
}

/* gradcheck functions, complex128 inputs */
static tn_tensor *g_det(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_det(in[0]); }
static tn_tensor *g_logdet(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_logdet(in[0]); }
static tn_tensor *g_slogdet(tn_tensor *const *in, int n, void *u) {   /* both outputs: |.| of the sign is 1, so its phase */
    (void)n; (void)u;
    tn_tensor *s = NULL, *l = tn_linalg_slogdet(in[0], &s);
    return l && s ? tn_add(tn_mul(s, tn_full_like(s, 0.5)), l) : NULL;
}
static tn_tensor *g_inv(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_inv(in[0]); }
static tn_tensor *g_solve(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_solve(in[0], in[1]); }
static tn_tensor *g_chol(tn_tensor *const *in, int n, void *u) {   /* of the Hermitian A A^H + I */
    (void)n;
    tn_tensor *H = tn_add(tn_matmul(in[0], mH(in[0])), tn_eye(3, 3, TN_C128));
    return tn_linalg_cholesky(H, .upper = u != NULL);
}
static tn_tensor *g_chol_solve(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_cholesky_solve(in[1], tn_add(tn_tril(in[0]), tn_mul_scalar(tn_eye(3, 3, TN_C128), 3))); }
static tn_tensor *g_chol_inv(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_cholesky_inverse(tn_add(tn_tril(in[0]), tn_mul_scalar(tn_eye(3, 3, TN_C128), 3))); }
static tn_tensor *g_lu(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; tn_tensor *p = NULL; return tn_linalg_lu_factor(in[0], &p); }
static tn_tensor *g_lu_solve(tn_tensor *const *in, int n, void *u) {
    (void)n;
    tn_tensor *p = NULL, *LU = tn_linalg_lu_factor(in[0], &p);
    return tn_linalg_lu_solve(LU, p, in[1], .adjoint = u != NULL);
}
static tn_tensor *g_tri(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_solve_triangular(tn_add(tn_triu(in[0]), tn_mul_scalar(tn_eye(3, 3, TN_C128), 3)), in[1], true); }
static tn_tensor *g_qr(tn_tensor *const *in, int n, void *u) {   /* Q and R together: Q + R's first rows */
    (void)n; (void)u;
    tn_tensor *R = NULL, *Q = tn_linalg_qr(in[0], &R);
    tn_tensor *parts[2] = {Q, R ? tn_transpose(R, 0, 1) : NULL};
    return Q && R ? tn_cat(parts, 2) : NULL;
}
static tn_tensor *g_expm(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_matrix_exp(in[0]); }
static tn_tensor *g_pinv(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_pinv(in[0]); }
static tn_tensor *g_svdvals(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_svdvals(in[0]); }
static tn_tensor *g_svd_inv(tn_tensor *const *in, int n, void *u) {   /* U S Vh, |U|^2, |Vh|^2: invariant under the phases */
    (void)n;
    tn_tensor *S = NULL, *Vh = NULL, *A = u ? tn_transpose(in[0], 0, 1) : in[0], *U = tn_linalg_svd(A, &S, &Vh, .full_matrices = false);
    if (!U) return NULL;
    tn_tensor *R = tn_matmul(tn_mul(U, tn_unsqueeze(tn_to_dtype(S, TN_C128), -2)), Vh);
    tn_tensor *V2 = tn_square(tn_abs(Vh)), *parts[3] = {tn_add(tn_real(R), tn_imag(R)), tn_square(tn_abs(U)), u ? V2 : tn_transpose(V2, 0, 1)};
    return tn_cat(parts, 3, .dim = u ? 1 : 0);   /* (wide: all 3 rows) */
}
static tn_tensor *g_eigh_abs(tn_tensor *const *in, int n, void *u) {   /* |V|^2: invariant under the columns' phases */
    (void)n; (void)u;
    tn_tensor *V = NULL, *L = tn_linalg_eigh(tn_add(in[0], mH(in[0])), &V);
    return L && V ? tn_add(tn_square(tn_abs(V)), tn_unsqueeze(L, -2)) : NULL;
}
static tn_tensor *g_eigvalsh(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_linalg_eigvalsh(tn_add(in[0], mH(in[0]))); }

static tn_tensor *leaf(const int64_t *shape, int nd, unsigned seed, double diag) {
    tn_tensor *t = crand(shape, nd, TN_C128, seed);
    if (diag != 0) t = tn_add(t, tn_mul_scalar(tn_eye(shape[nd - 2], shape[nd - 1], TN_C128), diag));
    t = tn_contiguous(t);
    if (t) tn_requires_grad_(t, true);
    return t;
}

TEST(gradcheck_complex128) {
    tn_scope_begin();
    const struct { const char *name; tn_gradcheck_fn f; int nin; bool gg; void *u; } fs[] = {
        {"det", g_det, 1, true, NULL}, {"logdet", g_logdet, 1, true, NULL}, {"slogdet", g_slogdet, 1, true, NULL},
        {"inv", g_inv, 1, true, NULL}, {"solve", g_solve, 2, true, NULL}, {"cholesky", g_chol, 1, true, NULL},
        {"cholesky upper", g_chol, 1, false, (void *)1}, {"cholesky_solve", g_chol_solve, 2, true, NULL},
        {"cholesky_inverse", g_chol_inv, 1, true, NULL}, {"lu_factor", g_lu, 1, true, NULL}, {"lu_solve", g_lu_solve, 2, false, NULL},
        {"lu_solve adjoint", g_lu_solve, 2, false, (void *)1}, {"solve_triangular", g_tri, 2, true, NULL}, {"qr", g_qr, 1, true, NULL},
        {"matrix_exp", g_expm, 1, false, NULL}, {"pinv", g_pinv, 1, false, NULL}, {"svdvals", g_svdvals, 1, false, NULL},
        {"eigvalsh", g_eigvalsh, 1, false, NULL}, {"eigh |V|^2", g_eigh_abs, 1, false, NULL},
        {"svd U S Vh, |U|^2, |Vh|^2", g_svd_inv, 1, true, NULL}, {"svd of the wide A^T", g_svd_inv, 1, false, (void *)1}};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        const bool tall = fs[k].f == g_qr || fs[k].f == g_pinv || fs[k].f == g_svdvals || fs[k].f == g_svd_inv;
        tn_tensor *in[2] = {tall ? leaf(TN_SHAPE(4, 3), 20 + (unsigned)k, 0) : leaf(TN_SHAPE(3, 3), 20 + (unsigned)k, fs[k].f == g_expm ? 0 : 2),
                            leaf(TN_SHAPE(3, 2), 40 + (unsigned)k, 0)};
        CHECK_MSG(tn_gradcheck(fs[k].f, in, fs[k].nin, fs[k].u, .atol = 1e-6, .rtol = 1e-4), "gradcheck %s: %s", fs[k].name, tn_last_error());
        if (fs[k].gg)
            CHECK_MSG(tn_gradgradcheck(fs[k].f, in, fs[k].nin, fs[k].u, .rtol = 1e-4), "gradgradcheck %s: %s", fs[k].name, tn_last_error());
    }
    tn_scope_end();
}

/* complex64's SVD runs in single precision (cgesdd's): backward error and unitarity within
   a few n float32 eps (|A| <= sqrt 2 here), S within that of complex128's S of the same input
   but not its rounding; k past the 64-reflector block and not a multiple of it, tall and
   wide (a conjugate transpose), rank-deficient, 0-size, scaled far from 1, and NaN refused. */
TEST(complex64_svd_single_precision) {
    tn_scope_begin();
    const double e32 = 1.1920928955078125e-07;
    tn_tensor *P = tn_matmul(crand(TN_SHAPE(90, 2), TN_C64, 21), crand(TN_SHAPE(2, 70), TN_C64, 22));
    tn_tensor *cases[4] = {crand(TN_SHAPE(140, 129), TN_C64, 20), mH(crand(TN_SHAPE(140, 129), TN_C64, 23)), P,
                           tn_mul_scalar(crand(TN_SHAPE(3, 20, 17), TN_C64, 24), 1e30)};
    for (int t = 0; t < 4; t++) {
        tn_tensor *M = cases[t], *S = NULL, *Vh = NULL, *U = tn_linalg_svd(M, &S, &Vh, .full_matrices = t == 1);
        const int64_t m = tn_size(M, -2), n = tn_size(M, -1), k = m < n ? m : n, big = m > n ? m : n;
        const double sc = t == 3 ? 1e30 : 1, tol = 8 * big * e32;
        CHECK(U && tn_get_dtype(U) == TN_C64 && tn_get_dtype(Vh) == TN_C64 && tn_get_dtype(S) == TN_F32);
        tn_tensor *Uk = tn_narrow(U, -1, 0, k), *Vk = tn_narrow(Vh, -2, 0, k);
        CHECK(maxdiff(tn_matmul(tn_mul(Uk, tn_unsqueeze(tn_to_dtype(S, TN_C64), -2)), Vk), M) < tol * 2 * sc);
        CHECK(maxdiff(tn_matmul(mH(U), U), tn_eye(tn_size(U, -1), tn_size(U, -1), TN_C64)) < tol);
        CHECK(maxdiff(tn_matmul(Vh, mH(Vh)), tn_eye(tn_size(Vh, -2), tn_size(Vh, -2), TN_C64)) < tol);
        tn_tensor *S128 = tn_linalg_svdvals(tn_to_dtype(M, TN_C128));
        const double s0 = tn_item(tn_amax(S128, NULL, 0));
        CHECK(maxdiff(S, S128) < tol * s0);
        if (t == 0) CHECK(maxdiff(S, tn_to_dtype(S128, TN_F32)) > 0);   /* not complex128's, rounded */
        if (t == 2) CHECK(tn_item(tn_amax(tn_narrow(S, -1, 2, k - 2), NULL, 0)) < 1e-5 * s0);   /* rank 2 */
    }
    tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(tn_zeros(TN_SHAPE(2, 0, 3), TN_C64), &S, &Vh);
    CHECK(U && tn_get_dtype(U) == TN_C64 && tn_size(U, -1) == 0 && tn_size(Vh, -1) == 3 && tn_numel(S) == 0);
    tn_tensor *bad = tn_div(crand(TN_SHAPE(4, 3), TN_C64, 25), tn_zeros(TN_SHAPE(4, 3), TN_C64));   /* NaN (c10's 0 division) */
    CHECK_ERR(tn_linalg_svd(bad, &S, &Vh), "non-finite");
    CHECK_ERR(tn_linalg_svdvals(bad), "non-finite");
    tn_scope_end();
}

/* the blocked bidiagonalisation (32-step panels while more than 128 columns remain, the
   trailing update by GEMMs): 3 panels tall (complex128) and wide (complex64), and a matrix
   with a block of zero columns (tau = 0 inside a panel) */
TEST(complex_gebrd_panels) {
    tn_scope_begin();
    tn_tensor *Z = crand(TN_SHAPE(260, 200), TN_C128, 30);
    tn_tensor *mask[3] = {tn_ones(TN_SHAPE(40), TN_C128), tn_zeros(TN_SHAPE(60), TN_C128), tn_ones(TN_SHAPE(100), TN_C128)};
    Z = tn_mul(Z, tn_cat(mask, 3));   /* columns 40..99 zero */
    tn_tensor *cases[3] = {crand(TN_SHAPE(300, 200), TN_C128, 31), mH(crand(TN_SHAPE(300, 170), TN_C64, 32)), Z};
    for (int t = 0; t < 3; t++) {
        tn_tensor *M = cases[t], *S = NULL, *Vh = NULL, *U = tn_linalg_svd(M, &S, &Vh, .full_matrices = t == 1);
        const tn_dtype dt = tn_get_dtype(M);
        const int64_t m = tn_size(M, -2), n = tn_size(M, -1), k = m < n ? m : n, big = m > n ? m : n;
        const double tol = 8 * big * (dt == TN_C64 ? 1.1920928955078125e-07 : 2.220446049250313e-16);
        CHECK(U && tn_get_dtype(U) == dt);
        tn_tensor *Uk = tn_narrow(U, -1, 0, k), *Vk = tn_narrow(Vh, -2, 0, k);
        CHECK(maxdiff(tn_matmul(tn_mul(Uk, tn_unsqueeze(tn_to_dtype(S, dt), -2)), Vk), M) < 2 * tol);
        CHECK(maxdiff(tn_matmul(mH(U), U), tn_eye(tn_size(U, -1), tn_size(U, -1), dt)) < tol);
        CHECK(maxdiff(tn_matmul(Vh, mH(Vh)), tn_eye(tn_size(Vh, -2), tn_size(Vh, -2), dt)) < tol);
        CHECK(SVD_SAME(maxdiff(S, tn_linalg_svdvals(M)), tol));
    }
    tn_scope_end();
}

int main(void) {
    RUN(factorizations_identities);
    RUN(empty_and_errors);
    RUN(complex64_svd_single_precision);
    RUN(complex_gebrd_panels);
    RUN(gradcheck_complex128);
    return tn_test_report();
}
