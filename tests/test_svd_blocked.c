/* test_svd_blocked.c — issue 26 (speed): the real SVD's blocked bidiagonalisation (gebrd:
 * panels of 32 while more than 128 columns remain, the trailing matrix by two GEMMs) and its
 * blocked Q and P (orgqr_t from 96 reflectors), float64 and float32, run under ASan/UBSan
 * (make build/san/test_svd_blocked SANITIZE=1): backward error and orthogonality within a
 * few n eps, svdvals = svd's S bit for bit, the reduced vectors the full ones' first, the same
 * bits at 1 and 2 threads, 0-size and NaN input. bindings/python/tests/test_linalg_svd_blocked.py
 * compares with torch on more shapes. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double maxabs(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = tn_numel(a) ? tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(a, TN_F64), tn_to_dtype(b, TN_F64))))) : 0;
    tn_scope_end();
    return r;
}
static double amax(tn_tensor *a) {
    tn_scope_begin();
    double r = tn_numel(a) ? tn_item(tn_max(tn_abs(tn_to_dtype(a, TN_F64)))) : 0;
    tn_scope_end();
    return r;
}
static tn_tensor *mT(tn_tensor *t) { return tn_transpose(t, -2, -1); }
static double orth_err(tn_tensor *Q) {
    int64_t c = tn_size(Q, -1);
    return maxabs(tn_matmul(mT(Q), Q), tn_eye(c, c, tn_get_dtype(Q)));
}

TEST(blocked_bounds_and_bits) {
    tn_manual_seed(26);
    /* past the crossovers (k > 128: gebrd's panels, k >= 128: orgqr_t), tall, wide (A^T),
       a transposed (non-contiguous) view, k = 160 = NX + NB (one panel) and 161 (two) */
    const int64_t shapes[][3] = {{1, 200, 161}, {1, 161, 230}, {2, 140, 129}, {1, 160, 160}};
    const tn_dtype dts[2] = {TN_F64, TN_F32};
    for (int d = 0; d < 2; d++)
        for (int c = 0; c < 4; c++) {
            tn_scope_begin();
            const int64_t b = shapes[c][0], m = shapes[c][1], n = shapes[c][2], k = m < n ? m : n;
            const double eps = dts[d] == TN_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
            const double tol = 8.0 * (double)(m > n ? m : n) * eps;
            tn_tensor *A = c == 2 ? mT(tn_randn(TN_SHAPE(b, n, m), dts[d])) : tn_randn(TN_SHAPE(b, m, n), dts[d]);
            tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(A, &S, &Vh, .full_matrices = false);
            CHECK(U && S && Vh && tn_size(U, -1) == k && tn_size(Vh, -2) == k && tn_get_dtype(U) == dts[d]);
            CHECK(maxabs(tn_matmul(tn_mul(U, tn_unsqueeze(S, -2)), Vh), A) / amax(A) < tol);
            CHECK(orth_err(U) < tol && orth_err(mT(Vh)) < tol);
            CHECK(tn_item(tn_min(tn_sub(tn_narrow(S, -1, 0, k - 1), tn_narrow(S, -1, 1, k - 1)))) >= 0);
            CHECK(maxabs(tn_linalg_svdvals(A), S) == 0);
            tn_tensor *Sf = NULL, *Vf = NULL, *Uf = tn_linalg_svd(A, &Sf, &Vf);
            CHECK(Uf && orth_err(Uf) < tol && orth_err(Vf) < tol);
            CHECK(maxabs(tn_narrow(Uf, -1, 0, k), U) == 0 && maxabs(tn_narrow(Vf, -2, 0, k), Vh) == 0);
            /* the same bits at 2 threads */
            const int before = tn_get_num_threads();
            tn_set_num_threads(2);
            tn_tensor *S2 = NULL, *V2 = NULL, *U2 = tn_linalg_svd(A, &S2, &V2, .full_matrices = false);
            tn_set_num_threads(before);
            CHECK(U2 && maxabs(U2, U) == 0 && maxabs(S2, S) == 0 && maxabs(V2, Vh) == 0);
            tn_scope_end();
        }
}
TEST(blocked_degenerate_empty_nan) {
    tn_manual_seed(27);
    tn_scope_begin();
    /* rank 4 in 180 x 150: the trailing singular values ~ 0, U still orthonormal */
    tn_tensor *A = tn_matmul(tn_randn(TN_SHAPE(180, 4), TN_F64), tn_randn(TN_SHAPE(4, 150), TN_F64)), *S = NULL, *Vh = NULL;
    tn_tensor *U = tn_linalg_svd(A, &S, &Vh, .full_matrices = false);
    CHECK(U && orth_err(U) < 8 * 180 * 2.3e-16 && orth_err(mT(Vh)) < 8 * 180 * 2.3e-16);
    CHECK(amax(tn_narrow(S, -1, 4, 146)) < 1e-13 * amax(S));
    /* zero: S = 0, U and Vh orthogonal */
    U = tn_linalg_svd(tn_zeros(TN_SHAPE(150, 140), TN_F32), &S, &Vh);
    CHECK(U && amax(S) == 0 && orth_err(U) < 1e-6 && orth_err(Vh) < 1e-6);
    U = tn_linalg_svd(tn_zeros(TN_SHAPE(0, 300), TN_F64), &S, &Vh);
    CHECK(U && tn_numel(S) == 0 && tn_size(U, -1) == 0 && tn_size(Vh, -1) == 300);
    tn_tensor *N = tn_randn(TN_SHAPE(150, 150), TN_F64);
    tn_tensor *Nn = tn_mul_scalar(N, NAN);
    CHECK_ERR(tn_linalg_svd(Nn, &S, &Vh), "svd");
    tn_scope_end();
}

/* blocks shrunk (panels of 4 from 9 columns, Q and P 3 reflectors a block from 5) to reach
   every block edge on small matrices: the blocked factors within the bounds, S within n eps
   |A| of the unblocked route's (the default blocks: these sizes are unblocked) */
TEST(shrunk_blocks_every_edge) {
    tn_manual_seed(28);
    const int64_t sizes[][2] = {{9, 9}, {10, 10}, {12, 12}, {13, 13}, {17, 11}, {11, 17}, {25, 25}, {40, 23}, {23, 40}, {33, 33}, {1, 20}, {20, 1}};
    for (int d = 0; d < 2; d++)
        for (int c = 0; c < 12; c++) {
            tn_scope_begin();
            const int failed = tn_test_failed;
            const tn_dtype dt = d ? TN_F32 : TN_F64;
            const int64_t m = sizes[c][0], n = sizes[c][1], k = m < n ? m : n;
            const double tol = 8.0 * (double)(m > n ? m : n) * (d ? 1.1920928955078125e-07 : 2.220446049250313e-16);
            tn_tensor *A = tn_randn(TN_SHAPE(m, n), dt), *S0 = tn_linalg_svdvals(A);
            const int64_t saved[4] = {tn__la_brd_nb, tn__la_brd_nx, tn__la_org_nb, tn__la_org_nx};
            tn__la_brd_nb = 4; tn__la_brd_nx = 8; tn__la_org_nb = 3; tn__la_org_nx = 5;
            tn_tensor *S = NULL, *Vh = NULL, *U = tn_linalg_svd(A, &S, &Vh);
            tn_tensor *Sv = tn_linalg_svdvals(A);
            tn__la_brd_nb = saved[0]; tn__la_brd_nx = saved[1]; tn__la_org_nb = saved[2]; tn__la_org_nx = saved[3];
            CHECK(U && S && Vh && tn_size(U, -1) == m && tn_size(Vh, -1) == n);
            CHECK(maxabs(tn_matmul(tn_mul(tn_narrow(U, -1, 0, k), tn_unsqueeze(S, -2)), tn_narrow(Vh, -2, 0, k)), A) / amax(A) < tol);
            CHECK(orth_err(U) < tol && orth_err(mT(Vh)) < tol);
            CHECK(maxabs(S, S0) < tol * amax(A) && maxabs(Sv, S) == 0);
            if (tn_test_failed > failed) printf("  m %lld n %lld %s\n", (long long)m, (long long)n, d ? "float32" : "float64");
            tn_scope_end();
        }
}

int main(void) {
    RUN(blocked_bounds_and_bits);
    RUN(blocked_degenerate_empty_nan);
    RUN(shrunk_blocks_every_edge);
    return tn_test_report();
}
