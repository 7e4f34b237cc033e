/* test_linalg_blocked.c — issue 26, item 3: the blocked getrf, getrs and potrf of
 * src/ops/linalg_factor.c (panels by the unblocked kernels, the rest through the GEMM)
 * against the unblocked kernels and LAPACK's standards: backward errors |PA - LU| / (|A| n eps)
 * and |L L^T - A| / (|A| n eps), pivots equal to getf2's (the same choice rule), info as
 * LAPACK's (the first zero pivot; the failing minor, with potf2's partial result), tall and
 * wide, float32 (LU in float32, as sgetrf), batched, and the same bits at 1 and 2
 * threads. The block size and crossover are shrunk (tn__la_nb, tn__la_nx) to reach the block
 * edges (nb - 1, nb, nb + 1, 2 nb + 1) on small matrices, and run at their defaults (panels of
 * 32 from order 96, of 64 from 512) on larger ones. The Python side (bindings/python/tests/test_linalg_blocked.py) compares with torch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <float.h>

#define EPS 2.220446049250313e-16

/* a reproducible m x n matrix, entries in [-1, 1) */
static void fill(double *a, int64_t m, int64_t n, uint64_t seed) {
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int64_t i = 0; i < m * n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
}
static double amax(const double *a, int64_t len) {
    double r = 0;
    for (int64_t i = 0; i < len; i++) r = fabs(a[i]) > r ? fabs(a[i]) : r;
    return r;
}
/* max |P A - L U| / (|A| max(m, n) eps) for getrf's packed lu (m x n) and pivots of a */
static double lu_backward_error(const double *a, const double *lu, const int32_t *piv, int64_t m, int64_t n) {
    const int64_t k = m < n ? m : n;
    double *pa = (double *)malloc((size_t)(m * n) * sizeof(double)), err = 0;
    memcpy(pa, a, (size_t)(m * n) * sizeof(double));
    for (int64_t j = 0; j < k; j++)
        if (piv[j] - 1 != j)
            for (int64_t c = 0; c < n; c++) { double t = pa[j * n + c]; pa[j * n + c] = pa[(piv[j] - 1) * n + c]; pa[(piv[j] - 1) * n + c] = t; }
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < n; c++) {
            double s = 0;
            for (int64_t t = 0; t < k && t <= i && t <= c; t++) s += (t == i ? 1 : lu[i * n + t]) * lu[t * n + c];
            err = fabs(pa[i * n + c] - s) > err ? fabs(pa[i * n + c] - s) : err;
        }
    free(pa);
    const double sc = amax(a, m * n) * (double)(m > n ? m : n) * EPS;
    return sc > 0 ? err / sc : err;
}
/* the blocked getrf beside getf2 on one m x n matrix: pivots and info equal, backward error small */
static void check_lu(int64_t m, int64_t n, uint64_t seed, int line) {
    const int64_t k = m < n ? m : n;
    double *a = (double *)malloc((size_t)(m * n + 1) * sizeof(double)), *b = (double *)malloc((size_t)(m * n + 1) * sizeof(double));
    double *c = (double *)malloc((size_t)(m * n + 1) * sizeof(double));
    int32_t *pb = (int32_t *)malloc((size_t)(k + 1) * sizeof(int32_t)), *pu = (int32_t *)malloc((size_t)(k + 1) * sizeof(int32_t));
    fill(a, m, n, seed);
    memcpy(b, a, (size_t)(m * n) * sizeof(double));
    memcpy(c, a, (size_t)(m * n) * sizeof(double));
    const int64_t ib = tn__la_getrf(b, m, n, pb), iu = tn__la_getf2(c, m, n, 0, k, n, pu);
    const double e = lu_backward_error(a, b, pb, m, n);
    if (ib != iu || memcmp(pb, pu, (size_t)k * sizeof(int32_t)) || !(e < 2))
        fail_at(line, "getrf %lld x %lld (nb %lld, nx %lld): info %lld vs %lld, pivots %s, backward error %.3g n eps",
                (long long)m, (long long)n, (long long)tn__la_nb, (long long)tn__la_nx, (long long)ib, (long long)iu,
                memcmp(pb, pu, (size_t)k * sizeof(int32_t)) ? "differ" : "equal", e);
    else tn_test_passed++;
    free(a); free(b); free(c); free(pb); free(pu);
}

TEST(getrf_blocked_small_blocks) {
    tn__la_nb = 8; tn__la_nx = 16;   /* blocks of 8 from order 16: every block edge below 40 */
    for (int64_t n = 1; n <= 40; n++) check_lu(n, n, (uint64_t)n, __LINE__);
    const int64_t mn[][2] = {{40, 17}, {17, 40}, {33, 16}, {16, 33}, {100, 25}, {25, 100}, {64, 63}, {63, 64}};
    for (int i = 0; i < 8; i++) check_lu(mn[i][0], mn[i][1], 100 + (uint64_t)i, __LINE__);
    tn__la_nb = 0; tn__la_nx = 96;
}
TEST(getrf_blocked_default_blocks) {
    CHECK(tn__la_nb == 0 && tn__la_nx == 96);   /* panels of 32 from order 96, 64 from 512 */
    const int64_t ns[] = {95, 96, 97, 127, 128, 129, 160, 161, 300, 513};
    for (int i = 0; i < 10; i++) check_lu(ns[i], ns[i], 200 + (uint64_t)i, __LINE__);
    check_lu(300, 150, 7, __LINE__);
    check_lu(150, 300, 8, __LINE__);
}
/* exact zero pivots: a zero column (info its index + 1, elimination going on past it) and
   trailing zero rows (rank deficient: info the rank + 1), blocked and unblocked alike */
TEST(getrf_blocked_singular) {
    tn__la_nb = 8; tn__la_nx = 16;
    const int64_t n = 50, zc[] = {0, 7, 8, 16, 20, 49};
    double *a = (double *)malloc((size_t)(n * n) * sizeof(double)), *b = (double *)malloc((size_t)(n * n) * sizeof(double));
    int32_t pb[50], pu[50];
    for (int z = 0; z < 6; z++) {
        fill(a, n, n, 300 + (uint64_t)z);
        for (int64_t i = 0; i < n; i++) a[i * n + zc[z]] = 0;
        memcpy(b, a, sizeof(double) * (size_t)(n * n));
        const int64_t ib = tn__la_getrf(b, n, n, pb), iu = tn__la_getf2(a, n, n, 0, n, n, pu);
        CHECK(ib == zc[z] + 1 && iu == ib && !memcmp(pb, pu, sizeof pb));
    }
    fill(a, n, n, 400);
    for (int64_t i = 30; i < n; i++)
        for (int64_t c = 0; c < n; c++) a[i * n + c] = 0;
    memcpy(b, a, sizeof(double) * (size_t)(n * n));
    CHECK(tn__la_getrf(b, n, n, pb) == 31 && tn__la_getf2(a, n, n, 0, n, n, pu) == 31 && !memcmp(pb, pu, sizeof pb));
    free(a); free(b);
    tn__la_nb = 0; tn__la_nx = 96;
    /* through the op: the first zero pivot of a 200 x 200 with column 150 zero */
    tn_scope_begin();
    tn_tensor *A = tn_randn(TN_SHAPE(200, 200), TN_F64);
    tn_tensor *Z = tn_index_fill(A, 1, tn_from_data((int64_t[]){150}, TN_SHAPE(1), TN_I64), 0.0), *piv = NULL, *info = NULL;
    CHECK(tn_linalg_lu_factor_ex(Z, &piv, &info) && tn_item(info) == 151);
    CHECK_ERR(tn_linalg_inv(Z), "The diagonal element 151 is zero, the inversion could not be completed because the input matrix is singular.");
    tn_scope_end();
}
/* getrs blocked (n >= nx) against the equation: |A X - B| / (|A| |X| n eps) */
TEST(getrs_blocked) {
    const int64_t n = 300, ks[] = {1, 5, 300};
    double *a = (double *)malloc((size_t)(n * n) * sizeof(double)), *lu = (double *)malloc((size_t)(n * n) * sizeof(double));
    double *x = (double *)malloc((size_t)(n * n) * sizeof(double)), *bb = (double *)malloc((size_t)(n * n) * sizeof(double));
    int32_t piv[300];
    fill(a, n, n, 500);
    for (int64_t i = 0; i < n; i++) a[i * n + i] += 4;
    memcpy(lu, a, (size_t)(n * n) * sizeof(double));
    CHECK(tn__la_getrf(lu, n, n, piv) == 0);
    for (int t = 0; t < 3; t++) {
        const int64_t k = ks[t];
        fill(bb, n, k, 600 + (uint64_t)t);
        memcpy(x, bb, (size_t)(n * k) * sizeof(double));
        tn__la_getrs(lu, piv, n, x, k);
        double err = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < k; c++) {
                double s = 0;
                for (int64_t j = 0; j < n; j++) s += a[i * n + j] * x[j * k + c];
                err = fabs(s - bb[i * k + c]) > err ? fabs(s - bb[i * k + c]) : err;
            }
        CHECK(err / (amax(a, n * n) * amax(x, n * k) * (double)n * EPS) < 4);
    }
    free(a); free(lu); free(x); free(bb);
}
/* float32 (tn__la_getrf_f / getf2_f / getrs_f, sgetrf's arithmetic): the blocked kernel beside
   the unblocked one (shrunk blocks and the defaults), pivots and info equal, backward error in
   float32's eps; getrs with one right-hand side (its own loops) gives the bits of the general
   loops, in float32 and float64 alike */
static void check_lu_f(int64_t m, int64_t n, uint64_t seed, int line) {
    const int64_t k = m < n ? m : n, mn = m * n;
    double *a = (double *)malloc((size_t)(mn + 1) * sizeof(double)), *l = (double *)malloc((size_t)(mn + 1) * sizeof(double));
    float *b = (float *)malloc((size_t)(mn + 1) * sizeof(float)), *c = (float *)malloc((size_t)(mn + 1) * sizeof(float));
    int32_t *pb = (int32_t *)malloc((size_t)(k + 1) * sizeof(int32_t)), *pu = (int32_t *)malloc((size_t)(k + 1) * sizeof(int32_t));
    fill(a, m, n, seed);
    for (int64_t i = 0; i < mn; i++) b[i] = c[i] = (float)a[i], a[i] = (double)b[i];
    const int64_t ib = tn__la_getrf_f(b, m, n, pb), iu = tn__la_getf2_f(c, m, n, 0, k, n, pu);
    for (int64_t i = 0; i < mn; i++) l[i] = b[i];
    const double e = lu_backward_error(a, l, pb, m, n) * EPS / FLT_EPSILON;
    if (ib != iu || memcmp(pb, pu, (size_t)k * sizeof(int32_t)) || !(e < 2))
        fail_at(line, "getrf_f %lld x %lld (nb %lld, nx %lld): info %lld vs %lld, pivots %s, backward error %.3g n eps",
                (long long)m, (long long)n, (long long)tn__la_nb, (long long)tn__la_nx, (long long)ib, (long long)iu,
                memcmp(pb, pu, (size_t)k * sizeof(int32_t)) ? "differ" : "equal", e);
    free(a); free(l); free(b); free(c); free(pb); free(pu);
}
TEST(float32_kernels) {
    const int64_t sm[][2] = {{7, 7}, {8, 8}, {9, 9}, {17, 17}, {33, 33}, {40, 24}, {24, 40}};
    tn__la_nb = 8; tn__la_nx = 16;
    for (int i = 0; i < 7; i++) check_lu_f(sm[i][0], sm[i][1], 1000 + (uint64_t)i, __LINE__);
    tn__la_nb = 0; tn__la_nx = 96;
    const int64_t df[][2] = {{1, 1}, {95, 95}, {96, 96}, {97, 97}, {130, 130}, {200, 97}, {97, 200}};
    for (int i = 0; i < 7; i++) check_lu_f(df[i][0], df[i][1], 1100 + (uint64_t)i, __LINE__);
    /* a zero column: info is its 1-based index, as getf2's */
    float z[16] = {1, 0, 2, 3, 4, 0, 5, 6, 7, 0, 8, 9, 1, 0, 1, 2};
    int32_t zp[4];
    CHECK(tn__la_getrf_f(z, 4, 4, zp) == 2);
    /* getrs, one right-hand side against two equal ones (the general loops), below the crossover */
    const int64_t n = 50;
    double a[50 * 50], x1[50], x2[100];
    float af[50 * 50], y1[50], y2[100];
    int32_t piv[50], pivf[50];
    fill(a, n, n, 1200);
    for (int64_t i = 0; i < n * n; i++) af[i] = (float)a[i];
    CHECK(tn__la_getrf(a, n, n, piv) == 0 && tn__la_getrf_f(af, n, n, pivf) == 0);
    fill(x1, n, 1, 1201);
    for (int64_t i = 0; i < n; i++) x2[2 * i] = x2[2 * i + 1] = x1[i], y1[i] = y2[2 * i] = y2[2 * i + 1] = (float)x1[i];
    tn__la_getrs(a, piv, n, x1, 1); tn__la_getrs(a, piv, n, x2, 2);
    tn__la_getrs_f(af, pivf, n, y1, 1); tn__la_getrs_f(af, pivf, n, y2, 2);
    bool same = true;
    for (int64_t i = 0; i < n; i++) same = same && x1[i] == x2[2 * i] && y1[i] == y2[2 * i] && isfinite(x1[i]) && isfinite(y1[i]);
    CHECK(same);
}
/* an n x n SPD matrix G G^T / n + I (row-major, both triangles) */
static void spd(double *s, int64_t n, uint64_t seed) {
    double *g = (double *)malloc((size_t)(n * n) * sizeof(double));
    fill(g, n, n, seed);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            double t = 0;
            for (int64_t c = 0; c < n; c++) t += g[i * n + c] * g[j * n + c];
            s[i * n + j] = s[j * n + i] = t / (double)n + (i == j);
        }
    free(g);
}
/* the blocked potrf beside potf2: info equal, factors alike, backward error small */
static void check_chol(int64_t n, int64_t neg, uint64_t seed, int line) {
    double *s = (double *)malloc((size_t)(n * n + 1) * sizeof(double)), *b = (double *)malloc((size_t)(n * n + 1) * sizeof(double));
    double *c = (double *)malloc((size_t)(n * n + 1) * sizeof(double));
    spd(s, n, seed);
    if (neg >= 0) s[neg * n + neg] = -1;   /* the leading minor of order neg + 1 fails */
    memcpy(b, s, (size_t)(n * n) * sizeof(double));
    memcpy(c, s, (size_t)(n * n) * sizeof(double));
    const int64_t ib = tn__la_potrf(b, n), iu = tn__la_potf2(c, n, 0, n, n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) c[i * n + j] = 0;
    double diff = 0, err = 0;
    for (int64_t i = 0; i < n * n; i++) diff = fabs(b[i] - c[i]) > diff ? fabs(b[i] - c[i]) : diff;
    if (neg < 0)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j <= i; j++) {
                double t = 0;
                for (int64_t k = 0; k <= j; k++) t += b[i * n + k] * b[j * n + k];
                err = fabs(t - s[i * n + j]) > err ? fabs(t - s[i * n + j]) : err;
            }
    err /= amax(s, n * n) * (double)n * EPS;
    /* where it fails: the columns after the failing one are the input, bit for bit */
    bool kept = true;
    for (int64_t i = 0; neg >= 0 && i < n; i++)
        for (int64_t j = neg; j <= i; j++)
            if (!(i == neg && j == neg) && b[i * n + j] != s[i * n + j]) kept = false;
    if (ib != (neg >= 0 ? neg + 1 : 0) || iu != ib || !(diff < 1e-12) || !(err < 2) || !kept)
        fail_at(line, "potrf %lld (nb %lld, nx %lld, minor %lld): info %lld vs %lld, |L - potf2's| %.3g, backward error %.3g n eps, input kept %d",
                (long long)n, (long long)tn__la_nb, (long long)tn__la_nx, (long long)neg + 1, (long long)ib, (long long)iu, diff, err, (int)kept);
    else tn_test_passed++;
    free(s); free(b); free(c);
}
TEST(potrf_blocked) {
    tn__la_nb = 8; tn__la_nx = 16;
    for (int64_t n = 1; n <= 40; n++) check_chol(n, -1, (uint64_t)n, __LINE__);
    const int64_t negs[] = {0, 7, 8, 9, 15, 16, 17, 39};
    for (int i = 0; i < 8; i++) check_chol(40, negs[i], 700 + (uint64_t)i, __LINE__);
    tn__la_nb = 0; tn__la_nx = 96;
    const int64_t ns[] = {95, 96, 97, 129, 193, 300, 513};
    for (int i = 0; i < 7; i++) check_chol(ns[i], -1, 800 + (uint64_t)i, __LINE__);
    check_chol(300, 150, 900, __LINE__);
    check_chol(300, 64, 901, __LINE__);
    check_chol(300, 96, 902, __LINE__);
    /* through the op: PyTorch's message, the failing minor's order */
    tn_scope_begin();
    tn_tensor *X = tn_randn(TN_SHAPE(200, 200), TN_F64);
    tn_tensor *S = tn_add(tn_div_scalar(tn_matmul(X, tn_transpose(X, 0, 1)), 200), tn_eye(200, 200, TN_F64));
    double *sp = (double *)tn_data_ptr(S);
    sp[170 * 200 + 170] = -1;
    tn_tensor *info = NULL;
    CHECK_ERR(tn_linalg_cholesky(S), "tn_linalg_cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 171 is not positive-definite).");
    CHECK(tn_linalg_cholesky_ex(S, &info) && tn_item(info) == 171);
    tn_scope_end();
}
/* float32: LU and Cholesky in float32 (sgetrf's, spotrf's; close to the float64 factors of the
   same input); a batch: each matrix as alone; threads: the same bits */
TEST(blocked_float32_batched_threads) {
    tn_manual_seed(11);
    tn_scope_begin();
    tn_tensor *A = tn_randn(TN_SHAPE(3, 200, 200), TN_F64), *p1 = NULL, *p2 = NULL;
    tn_tensor *A32 = tn_to_dtype(A, TN_F32);
    tn_tensor *L32 = tn_linalg_lu_factor(A32, &p1), *L64 = tn_linalg_lu_factor(tn_to_dtype(A32, TN_F64), &p2);
    CHECK(L32 && tn_get_dtype(L32) == TN_F32 && tn_equal(p1, p2));
    const double d = tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(L32, TN_F64), L64)))), big = tn_item(tn_max(tn_abs(L64)));
    CHECK(d > 0 && d < 1e-4 * big);   /* float32's rounding, not float64's rounded once */
    for (int64_t b = 0; b < 3; b++) {
        tn_tensor *pb = NULL, *Lb = tn_linalg_lu_factor(tn_select(tn_to_dtype(A32, TN_F64), 0, b), &pb);
        CHECK(Lb && tn_equal(Lb, tn_select(L64, 0, b)) && tn_equal(pb, tn_select(p2, 0, b)));
        tn_tensor *qb = NULL, *Mb = tn_linalg_lu_factor(tn_select(A32, 0, b), &qb);
        CHECK(Mb && tn_equal(Mb, tn_select(L32, 0, b)) && tn_equal(qb, tn_select(p1, 0, b)));
    }
    tn_tensor *S = tn_add(tn_div_scalar(tn_matmul(A, tn_transpose(A, 1, 2)), 200), tn_eye(200, 200, TN_F64));
    tn_tensor *S1 = tn_to_dtype(S, TN_F32), *C32 = tn_linalg_cholesky(S1), *C64 = tn_linalg_cholesky(tn_to_dtype(S1, TN_F64));
    const double dc = C32 ? tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(C32, TN_F64), C64)))) : -1;
    CHECK(C32 && tn_get_dtype(C32) == TN_F32 && dc > 0 && dc < 1e-5 * tn_item(tn_max(tn_abs(C64))));   /* spotrf's rounding */
    /* non-contiguous: the transposed view factors as its contiguous copy */
    tn_tensor *pt = NULL, *pc = NULL;
    CHECK(tn_equal(tn_linalg_lu_factor(tn_transpose(A, 1, 2), &pt), tn_linalg_lu_factor(tn_contiguous(tn_transpose(A, 1, 2)), &pc)) && tn_equal(pt, pc));
    const int nt = tn_get_num_threads();
    tn_tensor *B = tn_randn(TN_SHAPE(300, 300), TN_F64), *r[2][9];
    tn_tensor *SB = tn_add(tn_div_scalar(tn_matmul(B, tn_transpose(B, 0, 1)), 300), tn_eye(300, 300, TN_F64));
    for (int t = 0; t < 2; t++) {
        tn_set_num_threads(t + 1);
        tn_tensor *pv = NULL;
        r[t][0] = tn_linalg_lu_factor(B, &pv);
        r[t][1] = tn_linalg_cholesky(SB);
        r[t][2] = tn_linalg_inv(B);
        r[t][3] = tn_linalg_solve(B, tn_narrow(SB, 1, 0, 7));
        /* float32: the blocked LU, and a batch of small systems split between threads */
        tn_tensor *B32 = tn_to_dtype(B, TN_F32), *q = NULL;
        r[t][4] = tn_linalg_lu_factor(B32, &q);
        tn_tensor *As = tn_reshape(tn_narrow(tn_narrow(B32, 0, 0, 256), 1, 0, 256), TN_SHAPE(64, 32, 32));
        r[t][5] = tn_linalg_solve(As, tn_reshape(tn_narrow(tn_narrow(B32, 0, 0, 64), 1, 0, 32), TN_SHAPE(64, 32, 1)));
        r[t][6] = tn_linalg_det(As);
        r[t][7] = q;
        r[t][8] = tn_linalg_cholesky(tn_to_dtype(SB, TN_F32), .upper = true);
    }
    tn_set_num_threads(nt);
    for (int i = 0; i < 9; i++) CHECK(r[0][i] && r[1][i] && tn_equal(r[0][i], r[1][i]));
    /* 0-size and 0 x n pass through (the unblocked kernels) */
    tn_tensor *pe = NULL, *E = tn_linalg_lu_factor(tn_zeros(TN_SHAPE(2, 0, 0), TN_F64), &pe);
    CHECK(E && tn_numel(E) == 0 && tn_numel(pe) == 0);
    tn_scope_end();
}

/* complex128 (zgetrf / zpotrf's blocking, the complex GEMM as four real ones): blocks of 8
   beside the unblocked kernels through the ops, pivots equal, factors alike */
TEST(complex_blocked) {
    tn_manual_seed(13);
    tn_scope_begin();
    const int64_t ns[] = {16, 17, 24, 33, 40};
    for (int i = 0; i < 5; i++) {
        const int64_t n = ns[i];
        tn_tensor *A = tn_complex(tn_randn(TN_SHAPE(2, n, n), TN_F64), tn_randn(TN_SHAPE(2, n, n), TN_F64));
        tn_tensor *S = tn_add(tn_div_scalar(tn_matmul(A, tn_conj(tn_transpose(A, 1, 2))), (double)n), tn_eye(n, n, TN_C128));
        tn_tensor *pb = NULL, *pu = NULL, *LUb, *LUu, *Cb, *Cu, *Cub, *Cuu, *Xb, *Xu;
        tn__la_nb = 8; tn__la_nx = 16;
        LUb = tn_linalg_lu_factor(A, &pb); Cb = tn_linalg_cholesky(S); Cub = tn_linalg_cholesky(S, .upper = true);
        Xb = tn_linalg_solve(A, tn_narrow(S, 2, 0, 3));
        tn__la_nb = 0; tn__la_nx = 96;
        LUu = tn_linalg_lu_factor(A, &pu); Cu = tn_linalg_cholesky(S); Cuu = tn_linalg_cholesky(S, .upper = true);
        Xu = tn_linalg_solve(A, tn_narrow(S, 2, 0, 3));
        CHECK(LUb && LUu && tn_equal(pb, pu));
        CHECK(tn_item(tn_max(tn_abs(tn_sub(LUb, LUu)))) < 1e-12 * (double)n);
        CHECK(Cb && Cu && tn_item(tn_max(tn_abs(tn_sub(Cb, Cu)))) < 1e-13 * (double)n);
        CHECK(tn_item(tn_max(tn_abs(tn_sub(Cub, Cuu)))) < 1e-13 * (double)n);
        CHECK(tn_item(tn_max(tn_abs(tn_sub(tn_matmul(Cb, tn_conj(tn_transpose(Cb, 1, 2))), S)))) < 4 * (double)n * EPS * tn_item(tn_max(tn_abs(S))));
        CHECK(Xb && Xu && tn_item(tn_max(tn_abs(tn_sub(Xb, Xu)))) < 1e-11);
    }
    /* not positive-definite: the failing minor's order, blocked or not */
    tn_tensor *A = tn_complex(tn_randn(TN_SHAPE(30, 30), TN_F64), tn_randn(TN_SHAPE(30, 30), TN_F64)), *i1 = NULL, *i2 = NULL;
    tn_tensor *S = tn_add(tn_div_scalar(tn_matmul(A, tn_conj(tn_transpose(A, 0, 1))), 30), tn_eye(30, 30, TN_C128));
    ((double *)tn_data_ptr(S))[2 * (20 * 30 + 20)] = -1;
    tn__la_nb = 8; tn__la_nx = 16;
    tn_tensor *Lb = tn_linalg_cholesky_ex(S, &i1);
    tn__la_nb = 0; tn__la_nx = 96;
    tn_tensor *Lu = tn_linalg_cholesky_ex(S, &i2);
    CHECK(Lb && Lu && tn_item(i1) == 21 && tn_item(i2) == 21);
    tn_scope_end();
}

int main(void) {
    RUN(getrf_blocked_small_blocks);
    RUN(getrf_blocked_default_blocks);
    RUN(getrf_blocked_singular);
    RUN(getrs_blocked);
    RUN(float32_kernels);
    RUN(potrf_blocked);
    RUN(blocked_float32_batched_threads);
    RUN(complex_blocked);
    return tn_test_report();
}
