/* test_linalg.c — issue 26, item 3: torch.linalg's LU, Cholesky, det, slogdet, logdet, inv,
 * solve (src/ops/linalg_factor.c). Backward errors of the factorisations (|A - P L U| / |A|
 * within a few n eps), solutions against their equations, values PyTorch 1.13 computed,
 * batched, broadcast, 0-size and non-contiguous inputs, float64 gradcheck and
 * gradgradcheck, and PyTorch's errors. The Python side (bindings/python/tests/test_linalg.py)
 * compares the package with torch.linalg. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <limits.h>
#include <stdlib.h>

static double maxabs(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = tn_item(tn_max(tn_abs(tn_sub(a, b))));
    tn_scope_end();
    return r;
}
/* A well-conditioned random batch: randn + n I. */
static tn_tensor *wellcond(const int64_t *shape, int nd, tn_dtype dt) {
    return tn_add(tn_randn(shape, nd, dt), tn_mul_scalar(tn_eye(shape[nd - 1], shape[nd - 1], dt), (double)shape[nd - 1]));
}
/* P from LAPACK pivots (1-based row swaps), as torch.lu_unpack: A = P L U. */
static tn_tensor *perm_from_pivots(tn_tensor *piv, int64_t m) {
    const int32_t *p = (const int32_t *)tn_data_ptr(piv);
    int64_t k = tn_size(piv, -1), order[64];
    for (int64_t i = 0; i < m; i++) order[i] = i;
    for (int64_t i = 0; i < k; i++) { int64_t j = p[i] - 1, t = order[i]; order[i] = order[j]; order[j] = t; }
    double P[64 * 64] = {0};
    for (int64_t i = 0; i < m; i++) P[order[i] * m + i] = 1;   /* row i of P^T A is row order[i] of A */
    return tn_from_data(P, TN_SHAPE(m, m), TN_F64);
}

TEST(lu_factor_backward_error) {
    tn_manual_seed(1);
    for (int64_t n = 1; n <= 40; n += 13) {
        tn_scope_begin();
        tn_tensor *A = tn_randn(TN_SHAPE(n, n), TN_F64), *piv = NULL;
        tn_tensor *LU = tn_linalg_lu_factor(A, &piv);
        CHECK(LU && piv && tn_get_dtype(piv) == TN_I32 && tn_size(piv, 0) == n);
        tn_tensor *L = tn_add(tn_tril(LU, .diagonal = -1), tn_eye(n, n, TN_F64)), *U = tn_triu(LU);
        tn_tensor *P = perm_from_pivots(piv, n);
        double err = maxabs(tn_matmul(P, tn_matmul(L, U)), A) / tn_item(tn_max(tn_abs(A)));
        CHECK(err < 4 * (double)n * 2.2e-16);
        /* partial pivoting: |L| <= 1 */
        CHECK(tn_item(tn_max(tn_abs(L))) <= 1.0);
        tn_scope_end();
    }
}
TEST(lu_factor_rectangular_and_info) {
    tn_scope_begin();
    tn_tensor *A = tn_randn(TN_SHAPE(2, 5, 3), TN_F64), *piv = NULL, *info = NULL;
    tn_tensor *LU = tn_linalg_lu_factor_ex(A, &piv, &info);
    CHECK(LU && tn_size(LU, 1) == 5 && tn_size(piv, -1) == 3 && tn_ndim(info) == 1 && tn_item(tn_max(tn_abs(info))) == 0);
    const double s[9] = {1, 2, 3, 2, 4, 6, 1, 1, 1};
    tn_tensor *S = tn_from_data(s, TN_SHAPE(3, 3), TN_F64);
    LU = tn_linalg_lu_factor_ex(S, &piv, &info);
    CHECK(LU && tn_item(info) == 3);   /* LAPACK's info: U[2, 2] is the zero pivot */
    CHECK_ERR(tn_linalg_lu_factor_ex(S, &piv, &info, .check_errors = true), "singular");
    tn_scope_end();
}
TEST(lu_unpack_reconstructs) {
    tn_manual_seed(5);
    tn_scope_begin();
    const int64_t shapes[3][2] = {{4, 4}, {3, 5}, {5, 3}};
    for (int c = 0; c < 3; c++) {
        tn_tensor *A = tn_randn(TN_SHAPE(2, shapes[c][0], shapes[c][1]), TN_F64), *piv = NULL, *L = NULL, *U = NULL;
        tn_tensor *LU = tn_linalg_lu_factor(A, &piv), *P = tn_lu_unpack(LU, piv, &L, &U);
        CHECK(P && L && U && maxabs(tn_matmul(P, tn_matmul(L, U)), A) < 1e-13);
    }
    tn_tensor *piv = NULL, *L = NULL, *U = NULL, *LU = tn_linalg_lu_factor(tn_eye(3, 3, TN_F64), &piv);
    CHECK_ERR(tn_lu_unpack(LU, tn_to_dtype(piv, TN_I64), &L, &U), "LU_pivots is expected to be a contiguous tensor of torch.int32 dtype");
    CHECK_ERR(tn_lu_unpack(LU, tn_full(TN_SHAPE(3), 7, TN_I32), &L, &U), "outside [1, 3]");
    tn_scope_end();
}
TEST(det_slogdet_values) {
    tn_scope_begin();
    const double a[9] = {2, -1, 0, -1, 2, -1, 0, -1, 2}, b[4] = {0, 1, 1, 0}, c[4] = {1, 2, 2, 4};
    tn_tensor *A = tn_from_data(a, TN_SHAPE(3, 3), TN_F64), *B = tn_to_dtype(tn_from_data(b, TN_SHAPE(2, 2), TN_F64), TN_F32);
    CHECK(fabs(tn_item(tn_linalg_det(A)) - 4) < 1e-13);
    CHECK(fabs(tn_item(tn_linalg_det(B)) + 1) < 1e-6 && tn_get_dtype(tn_linalg_det(B)) == TN_F32);
    tn_tensor *sign = NULL, *la = tn_linalg_slogdet(B, &sign);
    CHECK(tn_item(sign) == -1 && fabs(tn_item(la)) < 1e-7);
    CHECK(isnan(tn_item(tn_logdet(B))));                     /* det < 0: nan, as torch.logdet */
    tn_tensor *C = tn_from_data(c, TN_SHAPE(2, 2), TN_F64);
    CHECK(tn_item(tn_linalg_det(C)) == 0);
    la = tn_linalg_slogdet(C, &sign);
    CHECK(tn_item(sign) == 0 && isinf(tn_item(la)) && tn_item(la) < 0);
    CHECK(isinf(tn_item(tn_logdet(C))));
    /* batched, non-contiguous: det(X^T) = det(X), det(XY) = det X det Y */
    tn_tensor *X = tn_randn(TN_SHAPE(4, 5, 5), TN_F64), *Y = tn_randn(TN_SHAPE(4, 5, 5), TN_F64);
    tn_tensor *dX = tn_linalg_det(X);
    CHECK(tn_ndim(dX) == 1 && tn_size(dX, 0) == 4);
    CHECK(maxabs(tn_linalg_det(tn_transpose(X, 1, 2)), dX) < 1e-12);
    CHECK(maxabs(tn_linalg_det(tn_matmul(X, Y)), tn_mul(dX, tn_linalg_det(Y))) < 1e-10);
    /* 0 x 0 matrices: det 1 */
    tn_tensor *E = tn_zeros(TN_SHAPE(3, 0, 0), TN_F64), *dE = tn_linalg_det(E);
    CHECK(dE && tn_size(dE, 0) == 3 && tn_item(tn_min(dE)) == 1);
    tn_scope_end();
}
TEST(inv_solve_values) {
    tn_manual_seed(2);
    tn_scope_begin();
    tn_tensor *A = wellcond(TN_SHAPE(3, 6, 6), TN_F64), *I = tn_eye(6, 6, TN_F64);
    tn_tensor *Ai = tn_linalg_inv(A);
    CHECK(maxabs(tn_matmul(A, Ai), I) < 1e-13 && maxabs(tn_matmul(Ai, A), I) < 1e-13);
    /* non-contiguous A (a transposed view) and broadcast B [6, 2] against batch 3 */
    tn_tensor *At = tn_transpose(A, -2, -1), *B = tn_randn(TN_SHAPE(6, 2), TN_F64);
    tn_tensor *X = tn_linalg_solve(At, B);
    CHECK(X && tn_ndim(X) == 3 && tn_size(X, 0) == 3 && maxabs(tn_matmul(At, X), B) < 1e-13);
    /* a batch of vectors: B's shape is A's without its last dim */
    tn_tensor *v = tn_randn(TN_SHAPE(3, 6), TN_F64), *xv = tn_linalg_solve(A, v);
    CHECK(xv && tn_ndim(xv) == 2 && maxabs(tn_squeeze_dim(tn_matmul(A, tn_unsqueeze(xv, -1)), -1), v) < 1e-13);
    /* left = false: X A = B */
    tn_tensor *Br = tn_randn(TN_SHAPE(3, 4, 6), TN_F64), *Xr = tn_linalg_solve(A, Br, .left = false);
    CHECK(Xr && tn_size(Xr, 1) == 4 && maxabs(tn_matmul(Xr, A), Br) < 1e-13);
    /* float32 */
    tn_tensor *Af = wellcond(TN_SHAPE(5, 5), TN_F32), *Aif = tn_linalg_inv(Af);
    CHECK(tn_get_dtype(Aif) == TN_F32 && maxabs(tn_matmul(Af, Aif), tn_eye(5, 5, TN_F32)) < 1e-5);
    /* 0-size */
    tn_tensor *E = tn_linalg_inv(tn_zeros(TN_SHAPE(2, 0, 0), TN_F64));
    CHECK(E && tn_numel(E) == 0 && tn_size(E, 0) == 2);
    tn_scope_end();
}
/* The zero pivot singular S reports: torch (and TENSOR_LAPACK's route) factors a contiguous A
   as A^T (linalg.solve's use_A_T), whose LU meets it at 2; the built-in kernels factor A: 3 */
#ifdef TENSOR_LAPACK
#define SING_AT "2"
#else
#define SING_AT "3"
#endif
TEST(inv_solve_errors) {
    tn_scope_begin();
    const double s[9] = {1, 2, 3, 2, 4, 6, 1, 1, 1};
    tn_tensor *S = tn_from_data(s, TN_SHAPE(3, 3), TN_F64), *info = NULL;
    CHECK_ERR(tn_linalg_inv(S), "tn_linalg_inv: The diagonal element " SING_AT " is zero, the inversion could not be completed because the input matrix is singular.");
    tn_tensor *r = tn_linalg_inv_ex(S, &info);
    CHECK(r && info && tn_item(info) == atoi(SING_AT));
    CHECK_ERR(tn_linalg_inv(tn_stack(((tn_tensor *[]){tn_eye(3, 3, TN_F64), S}), 2)), "(Batch element 1): The diagonal element " SING_AT " is zero");
    CHECK_ERR(tn_linalg_solve(S, tn_ones(TN_SHAPE(3, 1), TN_F64)), "tn_linalg_solve: The diagonal element " SING_AT " is zero");
    CHECK_ERR(tn_linalg_inv(tn_zeros(TN_SHAPE(2, 3), TN_F64)), "must be batches of square matrices, but they are 2 by 3 matrices");
    CHECK_ERR(tn_linalg_det(tn_zeros(TN_SHAPE(3), TN_F64)), "must have at least 2 dimensions");
    CHECK_ERR(tn_linalg_inv(tn_zeros(TN_SHAPE(2, 2), TN_I64)), "Expected a floating point or complex tensor as input. Got Long");
    CHECK_ERR(tn_linalg_solve(tn_eye(3, 3, TN_F64), tn_ones(TN_SHAPE(4, 1), TN_F64)), "Incompatible shapes of A and B");
    CHECK_ERR(tn_linalg_solve(tn_eye(3, 3, TN_F64), tn_ones(TN_SHAPE(3, 1), TN_F32)), "same dtype");
    tn_scope_end();
}
TEST(cholesky_values_and_errors) {
    tn_manual_seed(3);
    tn_scope_begin();
    tn_tensor *X = tn_randn(TN_SHAPE(2, 7, 7), TN_F64);
    tn_tensor *A = tn_add(tn_matmul(X, tn_transpose(X, 1, 2)), tn_eye(7, 7, TN_F64));
    tn_tensor *L = tn_linalg_cholesky(A), *U = tn_linalg_cholesky(A, .upper = true);
    CHECK(maxabs(tn_triu(L, .diagonal = 1), tn_zeros_like(L)) == 0 && maxabs(tn_tril(U, .diagonal = -1), tn_zeros_like(U)) == 0);
    CHECK(maxabs(tn_matmul(L, tn_transpose(L, 1, 2)), A) / tn_item(tn_max(tn_abs(A))) < 7 * 4 * 2.2e-16);
    CHECK(maxabs(tn_matmul(tn_transpose(U, 1, 2), U), A) / tn_item(tn_max(tn_abs(A))) < 7 * 4 * 2.2e-16);
    const double np[4] = {1, 2, 2, 1};
    tn_tensor *N = tn_from_data(np, TN_SHAPE(2, 2), TN_F64), *info = NULL;
    CHECK_ERR(tn_linalg_cholesky(N), "tn_linalg_cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite).");
    CHECK(tn_linalg_cholesky_ex(N, &info) && tn_item(info) == 2);
    tn_scope_end();
}

/* gradcheck's leaves are contiguous: the ops get transposed (non-contiguous) views of them */
static tn_tensor *T_(tn_tensor *x) { return tn_transpose(x, -2, -1); }
static tn_tensor *f_det(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_det(T_(x[0])); }
static tn_tensor *f_slogdet(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_slogdet(T_(x[0]), NULL); }
static tn_tensor *f_inv(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_inv(T_(x[0])); }
static tn_tensor *f_solve(tn_tensor *const *x, int n, void *u) { (void)n; return tn_linalg_solve(T_(x[0]), x[1], .left = u != NULL); }
static tn_tensor *f_chol(tn_tensor *const *x, int n, void *u) {
    (void)n;   /* a symmetric positive-definite function of the free input */
    tn_tensor *A = tn_add(tn_matmul(x[0], tn_transpose(x[0], -2, -1)), tn_eye(tn_size(x[0], -1), -1, TN_F64));
    return tn_linalg_cholesky(A, .upper = u != NULL);
}
static tn_tensor *f_lu(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; tn_tensor *p = NULL; return tn_linalg_lu_factor(T_(x[0]), &p); }
static bool gc(tn_gradcheck_fn f, tn_tensor *const *in, int n, void *u) {
    return tn_gradcheck(f, in, n, u, .rtol = 1e-4) && tn_gradgradcheck(f, in, n, u, .rtol = 1e-4);
}
TEST(gradcheck_all) {
    tn_manual_seed(4);
    tn_scope_begin();
    /* non-contiguous leaves: transposed views of well-conditioned batches */
    tn_tensor *B = tn_randn(TN_SHAPE(3, 4), TN_F64);
    tn_tensor *A0 = wellcond(TN_SHAPE(2, 4, 4), TN_F64);
    tn_requires_grad_(A0, true);
    tn_requires_grad_(B, true);
    tn_tensor *Bv = tn_randn(TN_SHAPE(2, 4), TN_F64);
    tn_requires_grad_(Bv, true);
    CHECK(gc(f_det, &A0, 1, NULL));
    CHECK(gc(f_slogdet, &A0, 1, NULL));
    CHECK(gc(f_inv, &A0, 1, NULL));
    tn_tensor *Bt = tn_randn(TN_SHAPE(4, 3), TN_F64);   /* [4, 3] broadcast over the batch */
    tn_requires_grad_(Bt, true);
    tn_tensor *in[2] = {A0, Bt};
    tn_tensor *inr[2] = {A0, B};                       /* X A = B, B [3, 4] */
    tn_tensor *inv[2] = {A0, Bv};                      /* vectors */
    CHECK(gc(f_solve, in, 2, (void *)1));
    CHECK(gc(f_solve, inr, 2, NULL));
    CHECK(gc(f_solve, inv, 2, (void *)1));
    tn_tensor *X = tn_randn(TN_SHAPE(3, 3), TN_F64);
    tn_requires_grad_(X, true);
    CHECK(gc(f_chol, &X, 1, NULL));
    CHECK(gc(f_chol, &X, 1, (void *)1));
    /* LU: square, wide (m < n) and tall (m > n), batched */
    tn_tensor *Ls = tn_randn(TN_SHAPE(2, 4, 4), TN_F64), *Lw = tn_randn(TN_SHAPE(5, 3), TN_F64), *Lt = tn_randn(TN_SHAPE(2, 3, 5), TN_F64);
    tn_requires_grad_(Ls, true); tn_requires_grad_(Lw, true); tn_requires_grad_(Lt, true);
    CHECK(gc(f_lu, &Ls, 1, NULL));
    CHECK(gc(f_lu, &Lw, 1, NULL));   /* f_lu transposes: A is 3 x 5 (wide) */
    CHECK(gc(f_lu, &Lt, 1, NULL));   /* A is [2, 5, 3] (tall) */
    /* slogdet's sign is recorded (as PyTorch's), with a zero gradient */
    tn_tensor *sg = NULL;
    tn_linalg_slogdet(A0, &sg);
    CHECK(sg && tn_requires_grad(sg) && strcmp(tn_grad_fn_name(sg), "LinalgSlogdetBackward0") == 0);
    /* grad_fn names as PyTorch's */
    tn_tensor *d = tn_linalg_det(A0);
    CHECK(d && strcmp(tn_grad_fn_name(d), "LinalgDetBackward0") == 0);
    CHECK(strcmp(tn_grad_fn_name(tn_linalg_inv(A0)), "LinalgInvExBackward0") == 0);
    tn_scope_end();
}
/* LAPACK's integers are 32-bit: under TENSOR_LAPACK a larger dimension (here an empty
   2^31 x 0 matrix) raises a clear error; the built-in kernels take 64-bit sizes */
TEST(lapack_sizes) {
    tn_scope_begin();
    tn_tensor *E = tn_empty(TN_SHAPE((int64_t)INT_MAX + 1, 0), TN_F64), *piv = NULL;
#ifdef TENSOR_LAPACK
    CHECK_ERR(tn_linalg_lu_factor(E, &piv), "tn_linalg_lu_factor: linalg (TENSOR_LAPACK): a matrix dimension of 2147483648 is past LAPACK's 32-bit integers");
    CHECK(tn_linalg_lu_factor(tn_empty(TN_SHAPE(5, 0), TN_F64), &piv) && tn_numel(piv) == 0);
#else
    tn_tensor *LU = tn_linalg_lu_factor(E, &piv);
    CHECK(LU && tn_size(LU, 0) == (int64_t)INT_MAX + 1 && tn_numel(piv) == 0);
#endif
    tn_scope_end();
}

int main(void) {
    RUN(lu_factor_backward_error);
    RUN(lu_factor_rectangular_and_info);
    RUN(lu_unpack_reconstructs);
    RUN(det_slogdet_values);
    RUN(inv_solve_values);
    RUN(inv_solve_errors);
    RUN(cholesky_values_and_errors);
    RUN(gradcheck_all);
    RUN(lapack_sizes);
    return tn_test_report();
}
