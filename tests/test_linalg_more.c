/* test_linalg_more.c — issue 26, item 3: the rest of torch.linalg that needs no QR, eigen or
 * SVD (src/ops/linalg_more.c): solve_triangular (blocked: sizes past the 64-row block),
 * triangular_solve, cholesky_solve / cholesky_inverse, lu_solve, matrix_power, matrix_exp,
 * the norms, multi_dot, vecdot, vander, householder_product, tensorinv / tensorsolve. Values
 * against their defining equations and values PyTorch 1.13 computed, batched, broadcast,
 * non-contiguous and 0-size inputs, float64 gradcheck and gradgradcheck, PyTorch's errors.
 * bindings/python/tests/test_linalg_more.py compares the package with torch directly. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double maxabs(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = tn_item(tn_max(tn_abs(tn_sub(a, b))));
    tn_scope_end();
    return r;
}
/* A well-conditioned triangular batch: randn's triangle with n + |d| on the diagonal. */
static tn_tensor *tri(const int64_t *shape, int nd, bool upper, tn_dtype dt) {
    const int64_t n = shape[nd - 1];
    tn_tensor *x = tn_randn(shape, nd, dt);
    x = upper ? tn_triu(x) : tn_tril(x);
    return tn_add(x, tn_mul_scalar(tn_eye(n, n, dt), (double)n));
}

TEST(solve_triangular_values) {
    tn_manual_seed(1);
    tn_scope_begin();
    /* 150 rows: three blocks of the blocked solve, both triangles, both sides, unit diagonal */
    const int64_t sizes[3] = {5, 64, 150};
    for (int si = 0; si < 3; si++) {
        const int64_t n = sizes[si];
        for (int up = 0; up < 2; up++) {
            tn_tensor *T = tri(TN_SHAPE(2, n, n), up, TN_F64), *B = tn_randn(TN_SHAPE(2, n, 3), TN_F64);
            tn_tensor *X = tn_linalg_solve_triangular(T, B, up);
            CHECK(X && maxabs(tn_matmul(T, X), B) < 1e-12);
            /* the other triangle is never read */
            tn_tensor *junk = up ? tn_tril(tn_randn(TN_SHAPE(2, n, n), TN_F64), .diagonal = -1) : tn_triu(tn_randn(TN_SHAPE(2, n, n), TN_F64), .diagonal = 1);
            CHECK(maxabs(tn_linalg_solve_triangular(tn_add(T, junk), B, up), X) == 0);
            tn_tensor *Br = tn_randn(TN_SHAPE(2, 3, n), TN_F64), *Xr = tn_linalg_solve_triangular(T, Br, up, .left = false);
            CHECK(Xr && maxabs(tn_matmul(Xr, T), Br) < 1e-12);
            /* unit diagonal: the diagonal is taken as ones */
            tn_tensor *Tu = up ? tn_triu(T, .diagonal = 1) : tn_tril(T, .diagonal = -1);
            Tu = tn_div_scalar(Tu, (double)n);
            tn_tensor *Xu = tn_linalg_solve_triangular(tn_add(Tu, tn_mul_scalar(tn_eye(n, n, TN_F64), 7)), B, up, .unitriangular = true);
            CHECK(Xu && maxabs(tn_matmul(tn_add(Tu, tn_eye(n, n, TN_F64)), Xu), B) < 1e-10);
        }
    }
    /* non-contiguous A (transposed upper is lower), broadcast batch, float32, 0-size */
    tn_tensor *U = tri(TN_SHAPE(3, 6, 6), true, TN_F64), *L = tn_transpose(U, -2, -1), *B = tn_randn(TN_SHAPE(4, 1, 6, 2), TN_F64);
    tn_tensor *X = tn_linalg_solve_triangular(L, B, false);
    CHECK(X && tn_ndim(X) == 4 && tn_size(X, 0) == 4 && tn_size(X, 1) == 3 && maxabs(tn_matmul(L, X), tn_expand(B, TN_SHAPE(4, 3, 6, 2))) < 1e-12);
    tn_tensor *Uf = tri(TN_SHAPE(5, 5), true, TN_F32), *Bf = tn_randn(TN_SHAPE(5, 2), TN_F32), *Xf = tn_linalg_solve_triangular(Uf, Bf, true);
    CHECK(tn_get_dtype(Xf) == TN_F32 && maxabs(tn_matmul(Uf, Xf), Bf) < 1e-5);
    tn_tensor *E = tn_linalg_solve_triangular(tn_zeros(TN_SHAPE(2, 0, 0), TN_F64), tn_zeros(TN_SHAPE(2, 0, 3), TN_F64), true);
    CHECK(E && tn_numel(E) == 0 && tn_size(E, 2) == 3);
    /* the _str form */
    tn_tensor *Xs = tn_linalg_solve_triangular_str(U, tn_transpose(B, -2, -1), true, "left=False");
    CHECK(Xs && maxabs(tn_matmul(Xs, U), tn_expand(tn_transpose(B, -2, -1), TN_SHAPE(4, 3, 2, 6))) < 1e-12);
    CHECK_ERR(tn_linalg_solve_triangular(U, tn_ones(TN_SHAPE(6), TN_F64), true), "The input tensor B must have at least 2 dimensions");
    CHECK_ERR(tn_linalg_solve_triangular(U, tn_ones(TN_SHAPE(5, 2), TN_F64), true), "Incompatible shapes of A and B for the equation AX = B (6x6 and 5x2)");
    CHECK_ERR(tn_linalg_solve_triangular(U, tn_ones(TN_SHAPE(6, 2), TN_F32), true), "Expected A and B to have the same dtype, but found A of type Double and B of type Float instead");
    CHECK_ERR(tn_linalg_solve_triangular(tn_ones(TN_SHAPE(2, 3), TN_F64), tn_ones(TN_SHAPE(2, 2), TN_F64), true), "square matrices");
    tn_scope_end();
}
TEST(triangular_cholesky_lu_solves) {
    tn_manual_seed(2);
    tn_scope_begin();
    tn_tensor *U = tri(TN_SHAPE(2, 5, 5), true, TN_F64), *b = tn_randn(TN_SHAPE(2, 5, 3), TN_F64), *C = NULL;
    tn_tensor *X = tn_triangular_solve(b, U, &C);
    CHECK(X && C && maxabs(tn_matmul(U, X), b) < 1e-12 && maxabs(C, U) == 0 && !tn_same_storage(C, U));
    X = tn_triangular_solve(b, U, NULL, .transpose = true);
    CHECK(X && maxabs(tn_matmul(tn_transpose(U, -2, -1), X), b) < 1e-12);
    X = tn_triangular_solve(b, tn_transpose(U, -2, -1), NULL, .upper = false);
    CHECK(X && maxabs(tn_matmul(tn_transpose(U, -2, -1), X), b) < 1e-12);
    /* cholesky_solve and cholesky_inverse against solve and inv of A = L L^T */
    tn_tensor *R = tn_randn(TN_SHAPE(3, 6, 6), TN_F64), *A = tn_add(tn_matmul(R, tn_transpose(R, -2, -1)), tn_eye(6, 6, TN_F64));
    tn_tensor *L = tn_linalg_cholesky(A), *Uc = tn_linalg_cholesky(A, .upper = true), *B = tn_randn(TN_SHAPE(6, 2), TN_F64);
    tn_tensor *ref = tn_linalg_solve(A, tn_expand(B, TN_SHAPE(3, 6, 2)));
    CHECK(maxabs(tn_cholesky_solve(B, L), ref) < 1e-11);
    CHECK(maxabs(tn_cholesky_solve(B, Uc, .upper = true), ref) < 1e-11);
    CHECK(maxabs(tn_cholesky_inverse(L), tn_linalg_inv(A)) < 1e-11);
    CHECK(maxabs(tn_cholesky_inverse(Uc, .upper = true), tn_linalg_inv(A)) < 1e-11);
    CHECK(tn_numel(tn_cholesky_inverse(tn_zeros(TN_SHAPE(0, 0), TN_F64))) == 0);
    /* lu_solve: all four equations, broadcast B */
    tn_tensor *M = tn_add(tn_randn(TN_SHAPE(2, 5, 5), TN_F64), tn_mul_scalar(tn_eye(5, 5, TN_F64), 5)), *piv = NULL;
    tn_tensor *LU = tn_linalg_lu_factor(M, &piv), *Bl = tn_randn(TN_SHAPE(5, 3), TN_F64), *Br = tn_randn(TN_SHAPE(3, 5), TN_F64);
    tn_tensor *MT = tn_transpose(M, -2, -1);
    CHECK(maxabs(tn_matmul(M, tn_linalg_lu_solve(LU, piv, Bl)), tn_expand(Bl, TN_SHAPE(2, 5, 3))) < 1e-12);
    CHECK(maxabs(tn_matmul(MT, tn_linalg_lu_solve(LU, piv, Bl, .adjoint = true)), tn_expand(Bl, TN_SHAPE(2, 5, 3))) < 1e-12);
    CHECK(maxabs(tn_matmul(tn_linalg_lu_solve(LU, piv, Br, .left = false), M), tn_expand(Br, TN_SHAPE(2, 3, 5))) < 1e-12);
    CHECK(maxabs(tn_matmul(tn_linalg_lu_solve(LU, piv, Br, .left = false, .adjoint = true), MT), tn_expand(Br, TN_SHAPE(2, 3, 5))) < 1e-12);
    CHECK(maxabs(tn_linalg_lu_solve_str(LU, piv, Br, "left=False, adjoint=True"), tn_linalg_lu_solve(LU, piv, Br, .left = false, .adjoint = true)) == 0);
    tn_lu_solve_fn_opts lo = TN_DEFAULTS(tn_lu_solve_fn_opts);
    lo.adjoint = true;
    CHECK(maxabs(tn_linalg_lu_solve_opts(LU, piv, Bl, lo), tn_linalg_lu_solve(LU, piv, Bl, .adjoint = true)) == 0);
    tn_tensor *C2 = NULL;
    CHECK(maxabs(tn_triangular_solve_str(b, U, &C2, "transpose=True"), tn_triangular_solve(b, U, NULL, .transpose = true)) == 0 && C2);
    CHECK_ERR(tn_triangular_solve_str(b, U, NULL, "lower=True"), "unknown option 'lower'");
    CHECK_ERR(tn_linalg_lu_solve(LU, tn_to_dtype(piv, TN_I64), Bl), "pivots should be a Tensor of scalar type int32");
    CHECK_ERR(tn_cholesky_solve(tn_ones(TN_SHAPE(3), TN_F64), L), "b should have at least 2 dimensions");
    tn_scope_end();
}
TEST(matrix_power_exp) {
    tn_manual_seed(3);
    tn_scope_begin();
    tn_tensor *A = tn_div_scalar(tn_randn(TN_SHAPE(2, 4, 4), TN_F64), 2), *I = tn_eye(4, 4, TN_F64);
    tn_tensor *A3 = tn_matmul(A, tn_matmul(A, A));
    CHECK(maxabs(tn_linalg_matrix_power(A, 3), A3) < 1e-13);
    CHECK(maxabs(tn_linalg_matrix_power(A, 0), tn_expand(I, TN_SHAPE(2, 4, 4))) == 0);
    CHECK(maxabs(tn_linalg_matrix_power(A, -3), tn_linalg_inv(A3)) < 1e-8 * tn_item(tn_max(tn_abs(tn_linalg_inv(A3)))));
    CHECK(maxabs(tn_linalg_matrix_power(A, 6), tn_matmul(A3, A3)) < 1e-12);
    tn_tensor *Ai = tn_to_dtype(tn_full(TN_SHAPE(2, 2), 1, TN_I64), TN_I64);
    CHECK(tn_get_dtype(tn_linalg_matrix_power(Ai, 3)) == TN_I64 && tn_item(tn_sum(tn_linalg_matrix_power(Ai, 3))) == 16);
    CHECK_ERR(tn_linalg_matrix_power(tn_ones(TN_SHAPE(2, 3), TN_F64), 2), "square matrices");
    /* matrix_exp: exp of a diagonal, of a nilpotent, of a rotation generator; every Pade degree */
    const double d[3] = {-1, 0.5, 3};
    tn_tensor *D = tn_diag_embed(tn_from_data(d, TN_SHAPE(3), TN_F64));
    CHECK(maxabs(tn_linalg_matrix_exp(D), tn_diag_embed(tn_exp(tn_from_data(d, TN_SHAPE(3), TN_F64)))) < 1e-13 * 20.1);
    const double nil[9] = {0, 1, 2, 0, 0, 3, 0, 0, 0}, ref[9] = {1, 1, 3.5, 0, 1, 3, 0, 0, 1};
    CHECK(maxabs(tn_linalg_matrix_exp(tn_from_data(nil, TN_SHAPE(3, 3), TN_F64)), tn_from_data(ref, TN_SHAPE(3, 3), TN_F64)) < 1e-13);
    const double scales[6] = {0.01, 0.2, 0.9, 2, 5, 40};
    for (int i = 0; i < 6; i++) {
        const double t = scales[i], g[4] = {0, -t, t, 0}, e[4] = {cos(t), -sin(t), sin(t), cos(t)};
        double err = maxabs(tn_linalg_matrix_exp(tn_from_data(g, TN_SHAPE(2, 2), TN_F64)), tn_from_data(e, TN_SHAPE(2, 2), TN_F64));
        CHECK(err < 1e-13 * (1 + t));
    }
    /* exp(A) exp(-A) = I, batched, transposed input; float32 */
    tn_tensor *B = tn_randn(TN_SHAPE(3, 5, 5), TN_F64), *Bt = tn_transpose(B, -2, -1);
    CHECK(maxabs(tn_matmul(tn_linalg_matrix_exp(Bt), tn_linalg_matrix_exp(tn_neg(Bt))), tn_eye(5, 5, TN_F64)) < 1e-10);
    CHECK(tn_get_dtype(tn_linalg_matrix_exp(tn_to_dtype(B, TN_F32))) == TN_F32);
    CHECK(tn_numel(tn_linalg_matrix_exp(tn_zeros(TN_SHAPE(2, 0, 0), TN_F64))) == 0);
    tn_scope_end();
}
TEST(norms) {
    tn_scope_begin();
    const double a[6] = {1, -2, 3, -4, 5, -6};
    tn_tensor *A = tn_from_data(a, TN_SHAPE(2, 3), TN_F64);
    CHECK(fabs(tn_item(tn_linalg_vector_norm(A)) - sqrt(91.0)) < 1e-13);
    CHECK(tn_item(tn_linalg_vector_norm(A, .ord = INFINITY)) == 6 && tn_item(tn_linalg_vector_norm(A, .ord = -INFINITY)) == 1);
    CHECK(tn_item(tn_linalg_vector_norm(A, .ord = 0)) == 6 && tn_item(tn_linalg_vector_norm(A, .ord = 1)) == 21);
    tn_tensor *v = tn_linalg_vector_norm(A, .ord = 1, .dim = TN_INTS(-1), .keepdim = true);
    CHECK(v && tn_ndim(v) == 2 && tn_size(v, 1) == 1 && tn_item(tn_sum(v)) == 21);
    tn_tensor *k = tn_linalg_vector_norm(A, .keepdim = true);
    CHECK(k && tn_ndim(k) == 2 && tn_size(k, 0) == 1 && tn_size(k, 1) == 1);
    CHECK(tn_get_dtype(tn_linalg_vector_norm(tn_to_dtype(A, TN_F32), .dtype = TN_F64)) == TN_F64);
    /* matrix norms: 1 = max column sum (9), inf = max row sum (15), -1 = 5, -inf = 6, fro */
    CHECK(tn_item(tn_linalg_matrix_norm(A, .ord = "1")) == 9 && tn_item(tn_linalg_matrix_norm(A, .ord = "inf")) == 15);
    CHECK(tn_item(tn_linalg_matrix_norm(A, .ord = "-1")) == 5 && tn_item(tn_linalg_matrix_norm(A, .ord = "-inf")) == 6);
    CHECK(fabs(tn_item(tn_linalg_matrix_norm(A)) - sqrt(91.0)) < 1e-13);
    tn_tensor *mk = tn_linalg_matrix_norm(tn_expand(A, TN_SHAPE(4, 2, 3)), .ord = "inf", .keepdim = true);
    CHECK(mk && tn_ndim(mk) == 3 && tn_size(mk, 1) == 1 && tn_size(mk, 2) == 1 && tn_item(tn_max(mk)) == 15);
    CHECK(tn_item(tn_linalg_matrix_norm(A, .ord = "1", .dim = TN_INTS(1, 0))) == 15);   /* dims swapped: the transpose's */
    CHECK(tn_item(tn_linalg_matrix_norm_str(A, "ord=inf")) == 15);
    tn_tensor *Dg = tn_diag(tn_from_data((double[]){3, -4}, TN_SHAPE(2), TN_F64));   /* singular values 4, 3 */
    CHECK(fabs(tn_item(tn_linalg_matrix_norm(Dg, .ord = "nuc")) - 7) < 1e-12 && fabs(tn_item(tn_linalg_matrix_norm(Dg, .ord = "2")) - 4) < 1e-12);
    CHECK(fabs(tn_item(tn_linalg_matrix_norm(Dg, .ord = "-2")) - 3) < 1e-12);
    tn_tensor *nk = tn_linalg_matrix_norm(tn_expand(A, TN_SHAPE(4, 2, 3)), .ord = "nuc", .dim = TN_INTS(2, 0), .keepdim = true);
    CHECK(nk && tn_ndim(nk) == 3 && tn_size(nk, 0) == 1 && tn_size(nk, 1) == 2 && tn_size(nk, 2) == 1);
    CHECK_ERR(tn_linalg_matrix_norm(A, .ord = "3"), "Order 3 not supported");
    CHECK_ERR(tn_linalg_matrix_norm(tn_ones(TN_SHAPE(3), TN_F64)), "at least 2 dimensions");
    CHECK_ERR(tn_linalg_matrix_norm(A, .dim = TN_INTS(1, -1)), "dims must be different");
    CHECK_ERR(tn_linalg_vector_norm(tn_ones(TN_SHAPE(3), TN_I64)), "Expected a floating point or complex tensor as input. Got Long");
    CHECK_ERR(tn_linalg_vector_norm(tn_zeros(TN_SHAPE(0), TN_F64), .ord = INFINITY), "cannot compute the inf norm on an empty tensor");
    CHECK(tn_item(tn_linalg_vector_norm(tn_zeros(TN_SHAPE(0), TN_F64))) == 0);
    /* linalg.norm's dispatch */
    CHECK(fabs(tn_item(tn_linalg_norm(tn_expand(A, TN_SHAPE(2, 2, 3)))) - sqrt(182.0)) < 1e-12);   /* ord None: all elements */
    CHECK(tn_item(tn_linalg_norm(A, .ord = "inf")) == 15);                                          /* 2-d: matrix */
    CHECK(tn_item(tn_linalg_norm(tn_flatten(A), .ord = "inf")) == 6);                        /* 1-d: vector */
    CHECK(tn_item(tn_sum(tn_linalg_norm(A, .ord = "inf", .dim = TN_INTS(1)))) == 9);                /* one dim: vector */
    CHECK_ERR(tn_linalg_norm(tn_expand(A, TN_SHAPE(2, 2, 3)), .ord = "2"), "the input must be 1D or 2D. Got 3D");
    /* the three forms of the keyword convention: macro, _opts with TN_DEFAULTS, _str */
    tn_vector_norm_fn_opts vo = TN_DEFAULTS(tn_vector_norm_fn_opts);
    vo.ord = 1; vo.keepdim = true;
    tn_tensor *v1 = tn_linalg_vector_norm_opts(A, vo), *v2 = tn_linalg_vector_norm_str(A, "ord=1, dim=(0, 1), keepdim=True");
    CHECK(v1 && v2 && tn_ndim(v1) == 2 && tn_ndim(v2) == 2 && tn_item(v1) == 21 && tn_item(v2) == 21);
    CHECK(tn_get_dtype(tn_linalg_vector_norm_str(tn_to_dtype(A, TN_F32), "dtype=float64")) == TN_F64);
    CHECK(tn_item(tn_linalg_norm_str(A, "ord='fro'")) == tn_item(tn_linalg_matrix_norm(A)));
    tn_tensor *nv = tn_linalg_norm_str(A, "ord=-inf, dim=1");
    CHECK(nv && tn_item(tn_min(nv)) == 1 && tn_item(tn_max(nv)) == 4);
    CHECK_ERR(tn_linalg_vector_norm_str(A, "p=2"), "unknown option 'p'");
    CHECK_ERR(tn_linalg_matrix_norm_str(A, "dtype=int64"), "dtype");
    CHECK_ERR(tn_linalg_vector_norm(A, .dtype = TN_F32), "should be convertible without narrowing");
    tn_scope_end();
}
TEST(products_and_friends) {
    tn_manual_seed(5);
    tn_scope_begin();
    tn_tensor *a = tn_randn(TN_SHAPE(10), TN_F64), *B = tn_randn(TN_SHAPE(10, 3), TN_F64), *C = tn_randn(TN_SHAPE(3, 20), TN_F64), *d = tn_randn(TN_SHAPE(20), TN_F64);
    tn_tensor *ts[4] = {a, B, C, d};
    tn_tensor *r = tn_linalg_multi_dot(ts, 4);
    CHECK(r && tn_ndim(r) == 0 && fabs(tn_item(r) - tn_item(tn_matmul(tn_matmul(tn_matmul(a, B), C), d))) < 1e-12);
    tn_tensor *ts2[3] = {tn_transpose(C, 0, 1), tn_transpose(B, 0, 1), B};
    tn_tensor *r2 = tn_linalg_multi_dot(ts2, 3);
    CHECK(r2 && tn_size(r2, 0) == 20 && tn_size(r2, 1) == 3 && maxabs(r2, tn_matmul(tn_matmul(ts2[0], ts2[1]), B)) < 1e-12);
    CHECK_ERR(tn_linalg_multi_dot(ts, 1), "expected at least 2 tensors but got 1");
    tn_tensor *bad[2] = {B, B};
    CHECK_ERR(tn_linalg_multi_dot(bad, 2), "cannot be multiplied");
    /* vecdot broadcasts */
    tn_tensor *x = tn_randn(TN_SHAPE(4, 1, 5), TN_F64), *y = tn_randn(TN_SHAPE(3, 5), TN_F64), *vd = tn_linalg_vecdot(x, y);
    CHECK(vd && tn_ndim(vd) == 2 && maxabs(vd, tn_sum_dims(tn_mul(x, y), TN_DIMS(-1))) < 1e-14);
    /* vander */
    const double xv[3] = {2, 0, -1}, vref[12] = {1, 2, 4, 8, 1, 0, 0, 0, 1, -1, 1, -1};
    tn_tensor *V = tn_linalg_vander(tn_from_data(xv, TN_SHAPE(3), TN_F64), .N = 4);
    CHECK(V && maxabs(V, tn_from_data(vref, TN_SHAPE(3, 4), TN_F64)) == 0);
    CHECK(tn_size(tn_linalg_vander(tn_from_data(xv, TN_SHAPE(3), TN_F64)), 1) == 3);
    tn_tensor *V0 = tn_linalg_vander(tn_scalar_tensor(3, TN_F64), .N = 2);   /* 0-d: one value, [1, N] (torch's) */
    CHECK(V0 && tn_ndim(V0) == 2 && tn_size(V0, 0) == 1 && tn_item(tn_sum(V0)) == 4);
    CHECK_ERR(tn_linalg_vander(tn_from_data(xv, TN_SHAPE(3), TN_F64), .N = 1), "N must be greater than 1.");
    /* householder_product: Q^T Q = I, and the Householder vectors reproduce Q H_i */
    tn_tensor *H = tn_randn(TN_SHAPE(2, 5, 3), TN_F64), *tau = tn_full(TN_SHAPE(2, 3), 0, TN_F64);
    tn_tensor *vv = tn_add(tn_tril(H, .diagonal = -1), tn_eye(5, 3, TN_F64));
    tau = tn_div(tn_full(TN_SHAPE(2, 3), 2, TN_F64), tn_sum_dims(tn_square(vv), TN_DIMS(-2)));   /* reflections */
    tn_tensor *Q = tn_linalg_householder_product(H, tau);
    CHECK(Q && tn_size(Q, 1) == 5 && tn_size(Q, 2) == 3 && maxabs(tn_matmul(tn_transpose(Q, -2, -1), Q), tn_eye(3, 3, TN_F64)) < 1e-13);
    CHECK_ERR(tn_linalg_householder_product(tn_ones(TN_SHAPE(2, 3), TN_F64), tn_ones(TN_SHAPE(1), TN_F64)), "input.shape[-2] must be greater than or equal to input.shape[-1]");
    /* tensorinv, tensorsolve */
    tn_tensor *T = tn_add(tn_randn(TN_SHAPE(4, 6, 8, 3), TN_F64), tn_mul_scalar(tn_reshape(tn_eye(24, 24, TN_F64), TN_SHAPE(4, 6, 8, 3)), 5));
    tn_tensor *Ti = tn_linalg_tensorinv(T);
    CHECK(Ti && tn_ndim(Ti) == 4 && tn_size(Ti, 0) == 8 && tn_size(Ti, 3) == 6);
    CHECK(maxabs(tn_tensordot(T, Ti, .dims_a = TN_INTS(2, 3), .dims_b = TN_INTS(0, 1)), tn_reshape(tn_eye(24, 24, TN_F64), TN_SHAPE(4, 6, 4, 6))) < 1e-12);
    CHECK_ERR(tn_linalg_tensorinv(T, .ind = 1), "prod(self.shape[ind:]) == prod(self.shape[:ind])");
    tn_tensor *Bs = tn_randn(TN_SHAPE(4, 6), TN_F64), *Xs = tn_linalg_tensorsolve(T, Bs, NULL, 0);
    CHECK(Xs && tn_ndim(Xs) == 2 && maxabs(tn_tensordot(T, Xs, .dims_a = TN_INTS(2, 3), .dims_b = TN_INTS(0, 1)), Bs) < 1e-12);
    tn_tensor *Tp = tn_permute(T, TN_DIMS(2, 0, 1, 3)), *Xd = tn_linalg_tensorsolve(Tp, Bs, TN_DIMS(0, 3));   /* dims (0, 3) move back to the end */
    CHECK(Xd && maxabs(Xd, Xs) < 1e-12);
    tn_scope_end();
}

TEST(ldl_factor_solve) {
    tn_manual_seed(7);
    tn_scope_begin();
    const int64_t sizes[4] = {1, 4, 9, 70};
    for (int i = 0; i < 4; i++) {   /* symmetric indefinite: 1x1 and 2x2 pivots */
        const int64_t n = sizes[i];
        tn_tensor *R = tn_randn(TN_SHAPE(2, n, n), TN_F64), *S = tn_add(R, tn_transpose(R, -2, -1)), *piv = NULL;
        tn_tensor *LD = tn_linalg_ldl_factor(S, &piv), *B = tn_randn(TN_SHAPE(n, 3), TN_F64);
        CHECK(LD && piv && tn_get_dtype(piv) == TN_I32 && tn_size(piv, -1) == n);
        tn_tensor *X = tn_linalg_ldl_solve(LD, piv, B);
        CHECK(X && maxabs(tn_matmul(S, X), tn_expand(B, TN_SHAPE(2, n, 3))) < 1e-9 * (double)n);
        /* only the lower triangle is read */
        tn_tensor *piv2 = NULL, *LD2 = tn_linalg_ldl_factor(tn_add(S, tn_triu(R, .diagonal = 1)), &piv2);
        CHECK(LD2 && maxabs(LD2, LD) == 0 && maxabs(piv2, piv) == 0);
    }
    /* PyTorch 1.13's (LAPACK's) factors of [[0, 1, 2], [1, 0, 3], [2, 3, 0]]: a 2x2 block first */
    const double z[9] = {0, 1, 2, 1, 0, 3, 2, 3, 0}, ldref[9] = {0, 0, 0, 2, 0, 0, 1.5, 0.5, -3};
    const int32_t pref[3] = {-3, -3, 3};
    tn_tensor *piv = NULL, *info = NULL, *LD = tn_linalg_ldl_factor(tn_from_data(z, TN_SHAPE(3, 3), TN_F64), &piv);
    CHECK(LD && maxabs(LD, tn_from_data(ldref, TN_SHAPE(3, 3), TN_F64)) < 1e-15);
    CHECK(piv && maxabs(tn_to_dtype(piv, TN_F64), tn_to_dtype(tn_from_data(pref, TN_SHAPE(3), TN_I32), TN_F64)) == 0);
    tn_tensor *Z = tn_zeros(TN_SHAPE(2, 2), TN_F64);
    CHECK(tn_linalg_ldl_factor_ex(Z, &piv, &info) && tn_item(info) == 1);
    CHECK_ERR(tn_linalg_ldl_factor(Z, &piv), "could not be completed");
    CHECK_ERR(tn_linalg_ldl_solve(LD, tn_ones(TN_SHAPE(3), TN_I64), tn_ones(TN_SHAPE(3, 1), TN_F64)), "Expected pivots to be integers");
    /* complex: symmetric (sytrf / sytrs, A = A^T) and Hermitian (hetrf / hetrs, A = A^H) */
    for (int i = 0; i < 4; i++)
        for (int herm = 0; herm < 2; herm++) {
            const int64_t n = sizes[i];
            tn_tensor *R = tn_randn(TN_SHAPE(2, n, n), TN_C128), *Rt = tn_transpose(R, -2, -1);
            tn_tensor *S = tn_add(R, herm ? tn_conj(Rt) : Rt), *pc = NULL;
            tn_tensor *LDc = tn_linalg_ldl_factor(S, &pc, .hermitian = herm), *B = tn_randn(TN_SHAPE(n, 3), TN_C128);
            CHECK(LDc && tn_get_dtype(LDc) == TN_C128 && pc && tn_get_dtype(pc) == TN_I32);
            tn_tensor *X = tn_linalg_ldl_solve(LDc, pc, B, .hermitian = herm);
            CHECK(X && maxabs(tn_matmul(S, X), tn_expand(B, TN_SHAPE(2, n, 3))) < 1e-9 * (double)n);
            /* hetrf reads only the lower triangle and the diagonal's real part; D's diagonal is real */
            tn_tensor *U = tn_triu(R, .diagonal = herm ? 0 : 1), *pc2 = NULL;
            if (herm) U = tn_sub(U, tn_real(U));   /* (i times the upper triangle's imaginary parts: the diagonal's too) */
            tn_tensor *LD2 = tn_linalg_ldl_factor(tn_add(S, U), &pc2, .hermitian = herm);
            CHECK(LD2 && maxabs(LD2, LDc) == 0 && maxabs(pc2, pc) == 0);
            if (herm) CHECK(tn_item(tn_max(tn_abs(tn_imag(tn_diagonal(LDc, .dim1 = -2, .dim2 = -1))))) == 0);
        }
    tn_tensor *Zc = tn_zeros(TN_SHAPE(3, 3), TN_C64);
    CHECK(tn_linalg_ldl_factor_ex(Zc, &piv, &info, .hermitian = true) && tn_item(info) == 1 && tn_get_dtype(LD = tn_linalg_ldl_factor_ex(Zc, &piv, &info)) == TN_C64);
    CHECK_ERR(tn_linalg_ldl_solve(LD, piv, tn_ones(TN_SHAPE(3, 1), TN_F32)), "Expected A and B to have the same dtype");
    tn_scope_end();
}

/* gradcheck's leaves are contiguous: the ops get transposed (non-contiguous) views of them */
static tn_tensor *T_(tn_tensor *x) { return tn_transpose(x, -2, -1); }
static int mode_;
static tn_tensor *f_st(tn_tensor *const *x, int n, void *u) {
    (void)n; (void)u;   /* mode_: bit 0 upper, bit 1 right, bit 2 unitriangular */
    tn_tensor *A = T_(x[0]);
    return tn_linalg_solve_triangular(A, (mode_ & 2) ? T_(x[1]) : x[1], mode_ & 1, .left = !(mode_ & 2), .unitriangular = (mode_ & 4) != 0);
}
static tn_tensor *f_trs(tn_tensor *const *x, int n, void *u) {
    (void)n; (void)u; tn_tensor *c = NULL;
    tn_tensor *r = tn_triangular_solve(x[1], x[0], &c, .upper = false, .transpose = true);
    return tn_add(r, tn_sum(c));   /* the cloned coefficient's gradient as well */
}
/* the factor's triangle only (as PyTorch's gradcheck_wrapper_triangular_input): the op reads
   no other element, while its gradient (PyTorch's formula) is a full matrix */
static tn_tensor *tri_(tn_tensor *x, void *u) { return u ? tn_triu(x) : tn_tril(x); }
static tn_tensor *f_chs(tn_tensor *const *x, int n, void *u) { (void)n; return tn_cholesky_solve(x[1], tri_(x[0], u), .upper = u != NULL); }
static tn_tensor *f_chi(tn_tensor *const *x, int n, void *u) { (void)n; return tn_cholesky_inverse(tri_(x[0], u), .upper = u != NULL); }
static tn_tensor *f_lus(tn_tensor *const *x, int n, void *u) {
    (void)n; (void)u; tn_tensor *piv = NULL;
    tn_tensor *LU = tn_linalg_lu_factor(x[0], &piv);
    return tn_linalg_lu_solve(LU, piv, (mode_ & 1) ? T_(x[1]) : x[1], .left = !(mode_ & 1), .adjoint = (mode_ & 2) != 0);
}
static tn_tensor *f_pow(tn_tensor *const *x, int n, void *u) { (void)n; return tn_linalg_matrix_power(T_(x[0]), (int64_t)(intptr_t)u - 3); }
static tn_tensor *f_exp(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_matrix_exp(T_(x[0])); }
static tn_tensor *f_mnorm(tn_tensor *const *x, int n, void *u) { (void)n; return tn_linalg_matrix_norm(x[0], .ord = (const char *)u); }
static tn_tensor *f_vnorm(tn_tensor *const *x, int n, void *u) { (void)n; return tn_linalg_vector_norm(x[0], .ord = *(const double *)u, .dim = TN_INTS(-1)); }
static tn_tensor *f_md(tn_tensor *const *x, int n, void *u) { (void)u; return tn_linalg_multi_dot(x, n); }
static tn_tensor *f_hh(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_householder_product(x[0], x[1]); }
static tn_tensor *f_vander(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_linalg_vander(x[0], .N = 4); }
static bool gc(tn_gradcheck_fn f, tn_tensor *const *in, int n, void *u) {
    return tn_gradcheck(f, in, n, u, .rtol = 1e-4) && tn_gradgradcheck(f, in, n, u, .rtol = 1e-4);
}
static tn_tensor *leaf(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
TEST(gradcheck_all) {
    tn_manual_seed(6);
    tn_scope_begin();
    for (mode_ = 0; mode_ < 8; mode_++) {
        tn_tensor *in[2] = {leaf(tri(TN_SHAPE(2, 4, 4), !(mode_ & 1), TN_F64)), leaf(tn_randn(TN_SHAPE(4, 3), TN_F64))};
        CHECK(gc(f_st, in, 2, NULL));
    }
    tn_tensor *inT[2] = {leaf(tri(TN_SHAPE(2, 3, 3), true, TN_F64)), leaf(tn_randn(TN_SHAPE(2, 3, 2), TN_F64))};
    CHECK(gc(f_trs, inT, 2, NULL));
    tn_tensor *R = tn_randn(TN_SHAPE(2, 4, 4), TN_F64), *Apd = tn_add(tn_matmul(R, T_(R)), tn_eye(4, 4, TN_F64));
    tn_tensor *inC[2] = {leaf(tn_detach(tn_linalg_cholesky(Apd))), leaf(tn_randn(TN_SHAPE(4, 2), TN_F64))};
    CHECK(gc(f_chs, inC, 2, NULL));
    CHECK(gc(f_chi, inC, 1, NULL));
    tn_tensor *inCu[2] = {leaf(tn_detach(tn_linalg_cholesky(Apd, .upper = true))), inC[1]};
    CHECK(gc(f_chs, inCu, 2, (void *)1));
    CHECK(gc(f_chi, inCu, 1, (void *)1));
    for (mode_ = 0; mode_ < 4; mode_++) {
        tn_tensor *inL[2] = {leaf(tn_add(tn_randn(TN_SHAPE(2, 4, 4), TN_F64), tn_mul_scalar(tn_eye(4, 4, TN_F64), 4))), leaf(tn_randn(TN_SHAPE(4, 2), TN_F64))};
        CHECK(gc(f_lus, inL, 2, NULL));
    }
    tn_tensor *P = leaf(tn_add(tn_randn(TN_SHAPE(2, 3, 3), TN_F64), tn_mul_scalar(tn_eye(3, 3, TN_F64), 3)));
    CHECK(gc(f_pow, &P, 1, (void *)(intptr_t)(3 + 3)));
    CHECK(gc(f_pow, &P, 1, (void *)(intptr_t)(3 - 2)));
    /* n = 0: I, with a zero gradient (whose own gradient is undefined: gradcheck only) */
    CHECK(tn_gradcheck(f_pow, &P, 1, (void *)(intptr_t)(3 + 0), .rtol = 1e-4));
    tn_tensor *E = leaf(tn_randn(TN_SHAPE(2, 3, 3), TN_F64)), *E2 = leaf(tn_mul_scalar(tn_randn(TN_SHAPE(3, 3), TN_F64), 3));
    CHECK(gc(f_exp, &E, 1, NULL));
    CHECK(gc(f_exp, &E2, 1, NULL));   /* past the squaring threshold */
    tn_tensor *M = leaf(tn_randn(TN_SHAPE(2, 3, 4), TN_F64));
    CHECK(gc(f_mnorm, &M, 1, (void *)"fro") && gc(f_mnorm, &M, 1, (void *)"1") && gc(f_mnorm, &M, 1, (void *)"-inf"));
    const double ords[4] = {2, 3.5, 1, INFINITY};
    for (int i = 0; i < 4; i++) CHECK(gc(f_vnorm, &M, 1, (void *)&ords[i]));
    tn_tensor *md[3] = {leaf(tn_randn(TN_SHAPE(4), TN_F64)), leaf(tn_randn(TN_SHAPE(4, 2), TN_F64)), leaf(tn_randn(TN_SHAPE(2, 5), TN_F64))};
    CHECK(gc(f_md, md, 3, NULL));
    tn_tensor *hh[2] = {leaf(tn_randn(TN_SHAPE(2, 4, 3), TN_F64)), leaf(tn_randn(TN_SHAPE(2, 2), TN_F64))};
    CHECK(gc(f_hh, hh, 2, NULL));
    tn_tensor *xv = leaf(tn_randn(TN_SHAPE(2, 3), TN_F64));
    CHECK(gc(f_vander, &xv, 1, NULL));
    /* grad_fn names as PyTorch's */
    CHECK(strcmp(tn_grad_fn_name(tn_linalg_solve_triangular(inT[0], inT[1], true)), "LinalgSolveTriangularBackward0") == 0);
    CHECK(strcmp(tn_grad_fn_name(tn_linalg_matrix_exp(E)), "LinalgMatrixExpBackward0") == 0);
    CHECK(strcmp(tn_grad_fn_name(tn_cholesky_solve(inC[1], inC[0])), "CholeskySolveBackward0") == 0);
    tn_scope_end();
}

int main(void) {
    RUN(solve_triangular_values);
    RUN(triangular_cholesky_lu_solves);
    RUN(matrix_power_exp);
    RUN(norms);
    RUN(products_and_friends);
    RUN(ldl_factor_solve);
    RUN(gradcheck_all);
    return tn_test_report();
}
