/* Test of tensor.h's packed GEMM kernels (tn__gemm_f32 / tn__gemm_f64, section 9).
 *
 *   make build/test_gemm && ./build/test_gemm
 *
 * Checks every kernel (portable / AVX2 / AVX-512, as far as the CPU has them),
 * default and deliberately tiny cache blocking (so that multiple KC/MC/NC
 * blocks and edge tiles are hit by small shapes), the direct small-size path,
 * all operand layouts (row-/column-major, every-2nd-row/column views, padded
 * leading dimensions, zero strides, C with non-unit strides on both axes)
 * and alpha/beta special cases against a naive triple loop in higher
 * precision.  C is embedded in a sentinel-filled buffer so that writes outside
 * the view are caught, and beta == 0 runs start from a NaN-filled C.
 */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <math.h>

/* malloc hook that can be made to fail, to test the -1 path */
static int test_fail_malloc = 0;
static void *test_malloc(size_t sz) { return test_fail_malloc ? NULL : malloc(sz); }
#define TN_MALLOC(sz) test_malloc(sz)
#define TN_REALLOC(p, sz) realloc(p, sz)
#define TN_FREE(p) free(p)

#define TENSOR_IMPLEMENTATION
#include "tensor.h"

static int n_pass = 0, n_fail = 0;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double rnd_unit(void) { return (double)(rng() >> 11) / 9007199254740992.0 * 2.0 - 1.0; }

static const int64_t dims[] = { 0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 129, 257 };
#define NDIMS ((int)(sizeof(dims) / sizeof(dims[0])))
static const double alphas[] = { 1.0, -0.5, 2.0, 0.0, 0.375 };
static const double betas[] = { 0.0, 1.0, -1.5, 0.5, 0.0 };

/* Operand layouts for an R x Cc matrix: row stride / column stride. */
#define N_IN_LAYOUTS 7
static void in_layout(int lay, int64_t R, int64_t Cc, int64_t *rs, int64_t *cs)
{
    switch (lay) {
    case 0: *rs = Cc; *cs = 1; break;               /* row-major */
    case 1: *rs = 1; *cs = R; break;                /* column-major (transposed) */
    case 2: *rs = 2 * Cc; *cs = 2; break;           /* every 2nd column of a row-major 2R x 2C */
    case 3: *rs = 2; *cs = 2 * R + 1; break;        /* every 2nd row of a padded column-major */
    case 4: *rs = Cc + 3; *cs = 1; break;           /* padded leading dimension */
    case 5: *rs = 3; *cs = 3 * R + 5; break;        /* general, no unit stride */
    default: *rs = 1; *cs = 0; break;               /* broadcast along columns */
    }
}
#define N_OUT_LAYOUTS 6
static void out_layout(int lay, int64_t R, int64_t Cc, int64_t *rs, int64_t *cs)
{
    switch (lay) {
    case 0: *rs = Cc; *cs = 1; break;               /* row-major */
    case 1: *rs = 1; *cs = R; break;                /* column-major */
    case 2: *rs = 2 * Cc + 1; *cs = 2; break;       /* non-unit strides on both axes */
    case 3: *rs = Cc + 5; *cs = 1; break;           /* padded row-major */
    case 4: *rs = 1; *cs = R + 3; break;            /* padded column-major */
    default: *rs = 2; *cs = 2 * R + 1; break;       /* transposed, both strided */
    }
}
/* number of elements a view spans (strides are non-negative here) */
static int64_t span(int64_t R, int64_t Cc, int64_t rs, int64_t cs)
{
    if (R == 0 || Cc == 0) return 1;
    return (R - 1) * rs + (Cc - 1) * cs + 1;
}

/* direct_a: 0 the heuristic, 1 A read in place by the micro-kernels wherever its layout
   allows (rows or columns contiguous: the ragged last panel packed), -1 A always packed */
typedef struct { int isa; int64_t kc, mc, nc, naive_max; int direct_a; const char *name; } cfg_t;
static const cfg_t cfgs[] = {
    { -1, 0, 0, 0, -1, 0, "best kernel, default blocking" },
    { -1, 0, 0, 0, 0, 0, "best kernel, no direct path" },
    { -1, 0, 0, 0, 0, 1, "best kernel, A in place" },
    { -1, 0, 0, 0, 0, -1, "best kernel, A packed" },
    { -1, 7, 1, 1, 0, 0, "best kernel, tiny blocks" },
    { -1, 7, 1, 1, 0, 1, "best kernel, tiny blocks, A in place" },
    { -1, 64, 25, 40, 0, 0, "best kernel, small blocks" },
    { -1, 64, 25, 40, 0, 1, "best kernel, small blocks, A in place" },
    { 1, 0, 0, 0, 0, 0, "avx2 kernel" },
    { 1, 5, 13, 17, 0, 0, "avx2 kernel, tiny blocks" },
    { 1, 5, 13, 17, 0, 1, "avx2 kernel, tiny blocks, A in place" },
    { 0, 0, 0, 0, 0, 0, "portable kernel" },
    { 0, 3, 5, 9, 0, 0, "portable kernel, tiny blocks" },
    { 0, 3, 5, 9, 0, 1, "portable kernel, tiny blocks, A in place" },
};
#define NCFGS ((int)(sizeof(cfgs) / sizeof(cfgs[0])))

static void set_cfg(const cfg_t *c)
{
    tn__gemm_tune.isa = c->isa;
    tn__gemm_tune.kc = c->kc;
    tn__gemm_tune.mc = c->mc;
    tn__gemm_tune.nc = c->nc;
    tn__gemm_tune.naive_max = c->naive_max;
    tn__gemm_tune.direct_a = c->direct_a;
}

/* One test case, instantiated for float (reference in double) and double
 * (reference in long double). */
#define DEFINE_CASE(T, R, SFX, EPS)                                                        \
static int case_##SFX(int64_t M, int64_t N, int64_t K, double alpha, double beta,          \
                      int la, int lb, int lc, const char *cfgname)                         \
{                                                                                          \
    int64_t rsa, csa, rsb, csb, rsc, csc, i, j, k, na, nb, ncc;                            \
    T *A, *B, *C, *C0;                                                                     \
    unsigned char *inview;                                                                 \
    int ok = 1, rc;                                                                        \
    double worst = 0;                                                                      \
    in_layout(la, M, K, &rsa, &csa);                                                       \
    in_layout(lb, K, N, &rsb, &csb);                                                       \
    out_layout(lc, M, N, &rsc, &csc);                                                      \
    na = span(M, K, rsa, csa); nb = span(K, N, rsb, csb); ncc = span(M, N, rsc, csc) + 7;  \
    A = (T *)malloc((size_t)na * sizeof(T));                                               \
    B = (T *)malloc((size_t)nb * sizeof(T));                                               \
    C = (T *)malloc((size_t)ncc * sizeof(T));                                              \
    C0 = (T *)malloc((size_t)ncc * sizeof(T));                                             \
    inview = (unsigned char *)calloc((size_t)ncc, 1);                                      \
    for (i = 0; i < na; i++) A[i] = (T)rnd_unit();                                         \
    for (i = 0; i < nb; i++) B[i] = (T)rnd_unit();                                         \
    if (alpha == 0) { /* A and B must not be read */                                      \
        for (i = 0; i < na; i++) A[i] = (T)NAN;                                            \
        for (i = 0; i < nb; i++) B[i] = (T)NAN;                                            \
    }                                                                                      \
    for (i = 0; i < ncc; i++) C[i] = (T)(1000.0 + (double)i); /* sentinel */               \
    for (i = 0; i < M; i++)                                                                \
        for (j = 0; j < N; j++) {                                                          \
            C[i * rsc + j * csc] = beta == 0 ? (T)NAN : (T)rnd_unit();                     \
            inview[i * rsc + j * csc] = 1;                                                 \
        }                                                                                  \
    memcpy(C0, C, (size_t)ncc * sizeof(T));                                                \
    rc = tn__gemm_##SFX(M, N, K, (T)alpha, A, rsa, csa, B, rsb, csb, (T)beta, C, rsc, csc);\
    if (rc != 0) ok = 0;                                                                   \
    for (i = 0; i < ncc && ok; i++)                                                        \
        if (!inview[i] && memcmp(&C[i], &C0[i], sizeof(T)) != 0) ok = 0;                   \
    for (i = 0; i < M && ok; i++)                                                          \
        for (j = 0; j < N && ok; j++) {                                                    \
            R s = 0, mag = 0, ref, got = C[i * rsc + j * csc];                             \
            R c0 = C0[i * rsc + j * csc];                                                  \
            if (alpha != 0)                                                                \
                for (k = 0; k < K; k++) {                                                  \
                    R p = (R)A[i * rsa + k * csa] * (R)B[k * rsb + j * csb];               \
                    s += p; mag += p < 0 ? -p : p;                                         \
                }                                                                          \
            ref = (R)alpha * s;                                                            \
            mag = (R)fabs(alpha) * mag;                                                    \
            if (beta != 0) { ref += (R)beta * c0; mag += (R)fabs(beta * (double)c0); }     \
            if (!(fabs((double)(got - ref)) <= 2.0 * (double)(K + 4) * EPS * (double)mag   \
                                                 + 1e-30)) {                               \
                ok = 0; worst = (double)(got - ref);                                       \
            }                                                                              \
        }                                                                                  \
    if (ok) n_pass++;                                                                      \
    else {                                                                                 \
        n_fail++;                                                                          \
        if (n_fail <= 20)                                                                  \
            printf("FAIL " #SFX " M=%lld N=%lld K=%lld alpha=%g beta=%g layouts A%d B%d C%d"  \
                   " [%s] rc=%d err=%g\n", (long long)M, (long long)N, (long long)K, alpha, \
                   beta, la, lb, lc, cfgname, rc, worst);                                  \
    }                                                                                      \
    free(A); free(B); free(C); free(C0); free(inview);                                     \
    return ok;                                                                             \
}                                                                                          \
                                                                                           \
/* Allocation failure: -1 and C untouched, both when the cached packing buffer    */    \
/* must be (re)allocated and when it is busy (another thread) so the call mallocs. */    \
static void alloc_fail_##SFX(int busy)                                                     \
{                                                                                          \
    int64_t n = 100, i;                                                                    \
    T *A = (T *)malloc((size_t)(n * n) * sizeof(T)), *B = (T *)malloc((size_t)(n * n) * sizeof(T)); \
    T *C = (T *)malloc((size_t)(n * n) * sizeof(T)), *C0 = (T *)malloc((size_t)(n * n) * sizeof(T)); \
    int rc;                                                                                \
    for (i = 0; i < n * n; i++) { A[i] = (T)rnd_unit(); B[i] = (T)rnd_unit(); C[i] = (T)rnd_unit(); } \
    memcpy(C0, C, (size_t)(n * n) * sizeof(T));                                            \
    tn__gemm_free_cache();                                                                 \
    tn__gemm_cache_busy = busy;                                                            \
    test_fail_malloc = 1;                                                                  \
    rc = tn__gemm_##SFX(n, n, n, (T)1, A, n, 1, B, n, 1, (T)0, C, n, 1);                   \
    test_fail_malloc = 0;                                                                  \
    tn__gemm_cache_busy = 0;                                                               \
    if (rc == -1 && memcmp(C, C0, (size_t)(n * n) * sizeof(T)) == 0) n_pass++;             \
    else { n_fail++; printf("FAIL " #SFX " allocation failure: rc=%d or C modified\n", rc); } \
    free(A); free(B); free(C); free(C0);                                                   \
}

DEFINE_CASE(float, double, f32, 5.96e-8)
DEFINE_CASE(double, long double, f64, 1.12e-16)

static void run_suite(int is64, const char *label)
{
    int c, a, b, d, before_fail = n_fail, before_pass = n_pass;
    set_cfg(&cfgs[0]);
    /* every (M, N, K) triple, random layouts and alpha/beta, default config */
    for (a = 0; a < NDIMS; a++)
        for (b = 0; b < NDIMS; b++)
            for (d = 0; d < NDIMS; d++) {
                int la = (int)(rng() % N_IN_LAYOUTS), lb = (int)(rng() % N_IN_LAYOUTS);
                int lc = (int)(rng() % N_OUT_LAYOUTS);
                double al = alphas[rng() % 5], be = betas[rng() % 5];
                if (is64) case_f64(dims[a], dims[b], dims[d], al, be, la, lb, lc, cfgs[0].name);
                else case_f32(dims[a], dims[b], dims[d], al, be, la, lb, lc, cfgs[0].name);
            }
    /* every layout combination at a few awkward shapes, every config */
    for (c = 0; c < NCFGS; c++) {
        /* ... including the driver's special cases: few row panels (B read in place, with a
           ragged last panel), a narrow C computed transposed (N < NR/2, M >= NR) */
        static const int64_t shapes[][3] = { { 33, 17, 31 }, { 129, 100, 7 }, { 16, 64, 257 }, { 1, 33, 15 },
                                             { 40, 9, 70 }, { 10, 70, 600 }, { 36, 96, 5 }, { 2, 70, 601 } };
        int s, la, lb, lc;
        set_cfg(&cfgs[c]);
        for (s = 0; s < 8; s++)
            for (la = 0; la < N_IN_LAYOUTS; la++)
                for (lb = 0; lb < N_IN_LAYOUTS; lb++)
                    for (lc = 0; lc < N_OUT_LAYOUTS; lc++) {
                        double al = alphas[rng() % 5], be = betas[rng() % 5];
                        if (is64) case_f64(shapes[s][0], shapes[s][1], shapes[s][2], al, be, la, lb, lc, cfgs[c].name);
                        else case_f32(shapes[s][0], shapes[s][1], shapes[s][2], al, be, la, lb, lc, cfgs[c].name);
                    }
        /* plus random shapes */
        for (s = 0; s < 300; s++) {
            int64_t M = dims[rng() % NDIMS], N = dims[rng() % NDIMS], K = dims[rng() % NDIMS];
            la = (int)(rng() % N_IN_LAYOUTS); lb = (int)(rng() % N_IN_LAYOUTS);
            lc = (int)(rng() % N_OUT_LAYOUTS);
            if (is64) case_f64(M, N, K, alphas[rng() % 5], betas[rng() % 5], la, lb, lc, cfgs[c].name);
            else case_f32(M, N, K, alphas[rng() % 5], betas[rng() % 5], la, lb, lc, cfgs[c].name);
        }
    }
    /* the row path (M <= 2, B by columns: a linear layer at batch 1) split over 2 threads */
    set_cfg(&cfgs[0]);
    tn__gemm_tune.threads = 2;
    for (c = 0; c < 4; c++) {
        const int64_t M = 1 + c % 2, N = c < 2 ? 1030 : 4097, K = c < 2 ? 4100 : 1031;
        if (is64) case_f64(M, N, K, alphas[c], betas[c], 0, 1, c % 2 ? 2 : 0, "row path, 2 threads");
        else case_f32(M, N, K, alphas[c], betas[c], 0, 1, c % 2 ? 2 : 0, "row path, 2 threads");
    }
    tn__gemm_tune.threads = 0;
    /* the per-call allocation path, taken when another thread holds the cache */
    tn__gemm_cache_busy = 1;
    for (c = 0; c < 200; c++) {
        int64_t M = dims[rng() % NDIMS], N = dims[rng() % NDIMS], K = dims[rng() % NDIMS];
        int la = (int)(rng() % N_IN_LAYOUTS), lb = (int)(rng() % N_IN_LAYOUTS);
        int lc = (int)(rng() % N_OUT_LAYOUTS);
        if (is64) case_f64(M, N, K, alphas[rng() % 5], betas[rng() % 5], la, lb, lc, "cache busy");
        else case_f32(M, N, K, alphas[rng() % 5], betas[rng() % 5], la, lb, lc, "cache busy");
    }
    tn__gemm_cache_busy = 0;
    set_cfg(&cfgs[1]);
    if (is64) { alloc_fail_f64(0); alloc_fail_f64(1); } else { alloc_fail_f32(0); alloc_fail_f32(1); }
    set_cfg(&cfgs[0]);
    printf("%s: %d passed, %d failed\n", label, n_pass - before_pass, n_fail - before_fail);
}

/* A read in place (direct A) gives the packed path's bits: the same products summed in the
   same order. The training steps' shapes (x @ W^T, dY @ W, dY^T @ X at 1024 tokens, scaled
   down), a ragged last panel, K over several slices, 1 and 2 threads, both precisions. */
static void direct_a_bits(void)
{
    static const int64_t sh[][3] = { { 96, 48, 40 }, { 100, 37, 600 }, { 64, 128, 300 }, { 37, 33, 1030 }, { 13, 64, 9 }, { 384, 128, 1024 } };
    const int th0 = tn__gemm_tune.threads;
    int s, la, th, bad = 0, n = 0;
    for (th = 1; th <= 2; th++) {
        tn__gemm_tune.threads = th;
        for (s = 0; s < 6; s++)
            for (la = 0; la < 2; la++) {
                const int64_t M = sh[s][0], N = sh[s][1], K = sh[s][2], rsa = la ? 1 : K + 3, csa = la ? M : 1;
                float *A = (float *)malloc((size_t)(M * (K + 3)) * sizeof(float)), *B = (float *)malloc((size_t)(K * N) * sizeof(float));
                float *C0 = (float *)malloc((size_t)(M * N) * sizeof(float)), *C1 = (float *)malloc((size_t)(M * N) * sizeof(float));
                double *Ad = (double *)malloc((size_t)(M * (K + 3)) * sizeof(double)), *Bd = (double *)malloc((size_t)(K * N) * sizeof(double));
                double *D0 = (double *)malloc((size_t)(M * N) * sizeof(double)), *D1 = (double *)malloc((size_t)(M * N) * sizeof(double));
                int64_t i;
                for (i = 0; i < M * (K + 3); i++) Ad[i] = A[i] = (float)rnd_unit();
                for (i = 0; i < K * N; i++) Bd[i] = B[i] = (float)rnd_unit();
                for (i = 0; i < M * N; i++) { C0[i] = C1[i] = (float)rnd_unit(); D0[i] = D1[i] = C0[i]; }
                tn__gemm_tune.direct_a = -1;
                tn__gemm_f32(M, N, K, 0.5f, A, rsa, csa, B, N, 1, 1.5f, C0, N, 1);
                tn__gemm_f64(M, N, K, 0.5, Ad, rsa, csa, Bd, N, 1, 1.5, D0, N, 1);
                tn__gemm_tune.direct_a = 1;
                tn__gemm_f32(M, N, K, 0.5f, A, rsa, csa, B, N, 1, 1.5f, C1, N, 1);
                tn__gemm_f64(M, N, K, 0.5, Ad, rsa, csa, Bd, N, 1, 1.5, D1, N, 1);
                bad += memcmp(C0, C1, (size_t)(M * N) * sizeof(float)) != 0;
                bad += memcmp(D0, D1, (size_t)(M * N) * sizeof(double)) != 0;
                n += 2;
                free(A); free(B); free(C0); free(C1); free(Ad); free(Bd); free(D0); free(D1);
            }
    }
    tn__gemm_tune.direct_a = 0;
    tn__gemm_tune.threads = th0;
    if (bad) { n_fail++; printf("FAIL direct A: %d of %d products differ from the packed path's bits\n", bad, n); }
    else n_pass++;
    printf("direct A: %d products equal the packed path's bits\n", n - bad);
}

/* B packed ahead (tn__gemm_prepack_*, read through tn__gemm_bpre_on: the graph replay's
   weights, the fused RNNs' W_hh): B is changed after packing, so the result tells which B
   was read. The packed one wherever the GEMM would pack B, and with over_direct also where
   it would read B in place (few row panels), giving the bits of the product by B as
   packed; else B as it is now. B by rows and by columns, K over several slices, a ragged
   last panel, 1 and 2 threads, both precisions. */
#define PREPACK_CASE(T, SFX)                                                                                          \
    {                                                                                                                 \
        T *A = (T *)malloc((size_t)(M * K) * sizeof(T)), *B = (T *)malloc((size_t)(K * N) * sizeof(T));              \
        T *C0 = (T *)malloc((size_t)(M * N) * sizeof(T)), *C1 = (T *)malloc((size_t)(M * N) * sizeof(T));            \
        T *C2 = (T *)malloc((size_t)(M * N) * sizeof(T));                                                            \
        tn__gemm_bpre pre;                                                                                            \
        const int64_t np = tn__gemm_prepack_##SFX(K, N, B, rsb, csb, NULL, &pre);                                     \
        T *P = (T *)malloc((size_t)np * sizeof(T));                                                                   \
        const tn__gemm_kern_##SFX kn = tn__gemm_kern_for_##SFX(M);                                                    \
        const int in_place = csb == 1 && (M + kn.mr - 1) / kn.mr <= 3 && N >= kn.nr, packed = over || !in_place;     \
        int64_t i;                                                                                                    \
        for (i = 0; i < M * K; i++) A[i] = (T)rnd_unit();                                                             \
        for (i = 0; i < K * N; i++) B[i] = (T)rnd_unit();                                                             \
        for (i = 0; i < M * N; i++) C0[i] = C1[i] = C2[i] = (T)rnd_unit();                                            \
        tn__gemm_##SFX(M, N, K, (T)0.5, A, K, 1, B, rsb, csb, (T)1.5, C0, N, 1);   /* by B as packed */               \
        tn__gemm_prepack_##SFX(K, N, B, rsb, csb, P, &pre);                                                           \
        for (i = 0; i < K * N; i++) B[i] += (T)1;                                                                     \
        tn__gemm_##SFX(M, N, K, (T)0.5, A, K, 1, B, rsb, csb, (T)1.5, C2, N, 1);   /* by B as it is now */            \
        pre.P = P;                                                                                                    \
        pre.over_direct = over;                                                                                       \
        tn__gemm_bpre_on = pre;                                                                                       \
        tn__gemm_##SFX(M, N, K, (T)0.5, A, K, 1, B, rsb, csb, (T)1.5, C1, N, 1);                                      \
        tn__gemm_bpre_on.P = NULL;                                                                                    \
        bad += memcmp(C1, packed ? C0 : C2, (size_t)(M * N) * sizeof(T)) != 0;                                        \
        n++;                                                                                                          \
        free(A); free(B); free(C0); free(C1); free(C2); free(P);                                                      \
    }
static void prepack_bits(void)
{
    static const int64_t sh[][3] = { { 5, 96, 40 }, { 32, 1024, 256 }, { 37, 33, 1030 }, { 13, 64, 600 }, { 24, 200, 7 } };
    const int th0 = tn__gemm_tune.threads;
    int s, lb, th, over, bad = 0, n = 0;
    for (th = 1; th <= 2; th++) {
        tn__gemm_tune.threads = th;
        for (s = 0; s < 5; s++)
            for (lb = 0; lb < 2; lb++)
                for (over = 0; over < 2; over++) {
                    const int64_t M = sh[s][0], N = sh[s][1], K = sh[s][2], rsb = lb ? 1 : N, csb = lb ? K : 1;
                    PREPACK_CASE(float, f32)
                    PREPACK_CASE(double, f64)
                }
    }
    tn__gemm_tune.threads = th0;
    if (bad) { n_fail++; printf("FAIL prepacked B: %d of %d products read the wrong B\n", bad, n); }
    else n_pass++;
    printf("prepacked B: %d products read the packed B where they should, with its bits\n", n - bad);
}

#if defined(__unix__) && !defined(TEST_NO_THREADS)
/* Several threads multiplying at once: one gets the cached packing buffer,
 * the others must fall back to their own allocation without interfering. */
#include <pthread.h>
#define N_THREADS 4
static void *thread_body(void *arg)
{
    int t = (int)(intptr_t)arg, it, bad = 0;
    uint64_t st = 0x1234567ull + (uint64_t)t * 0x9E3779B97F4A7C15ull;
    for (it = 0; it < 12; it++) {
        int64_t M = 60 + 37 * ((t + it) % 4), N = 150 + 11 * it, K = 90 + 23 * t, i, j, k;
        float *A = (float *)malloc((size_t)(M * K) * sizeof(float));
        float *B = (float *)malloc((size_t)(K * N) * sizeof(float));
        float *C = (float *)malloc((size_t)(M * N) * sizeof(float));
        for (i = 0; i < M * K; i++) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; A[i] = (float)(st % 1000) / 500.0f - 1.0f; }
        for (i = 0; i < K * N; i++) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; B[i] = (float)(st % 1000) / 500.0f - 1.0f; }
        /* B is read transposed on odd iterations */
        if (tn__gemm_f32(M, N, K, 1.0f, A, K, 1, B, (it & 1) ? 1 : N, (it & 1) ? K : 1, 0.0f, C, N, 1) != 0) bad++;
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                double r = 0, mag = 0;
                for (k = 0; k < K; k++) {
                    double p = (double)A[i * K + k] * (double)((it & 1) ? B[j * K + k] : B[k * N + j]);
                    r += p; mag += fabs(p);
                }
                if (fabs((double)C[i * N + j] - r) > 2.0 * (double)(K + 4) * 5.96e-8 * mag + 1e-30) bad++;
            }
        free(A); free(B); free(C);
    }
    return (void *)(intptr_t)bad;
}
static void thread_test(void)
{
    pthread_t th[N_THREADS];
    int t, started[N_THREADS];
    for (t = 0; t < N_THREADS; t++) started[t] = pthread_create(&th[t], NULL, thread_body, (void *)(intptr_t)t) == 0;
    for (t = 0; t < N_THREADS; t++) {
        void *ret = NULL;
        if (!started[t]) { n_fail++; printf("FAIL could not start thread %d\n", t); continue; }
        pthread_join(th[t], &ret);
        if (ret == NULL) n_pass++;
        else { n_fail++; printf("FAIL thread %d: %d wrong elements\n", t, (int)(intptr_t)ret); }
    }
    printf("threads: %d threads calling concurrently checked\n", N_THREADS);
}
#else
static void thread_test(void) {}
#endif

int main(void)
{
    static const char *isa_names[] = { "portable", "AVX2+FMA", "AVX-512F" };
    printf("best kernel on this CPU: %s\n", isa_names[tn__gemm_isa()]);
    run_suite(0, "f32");
    run_suite(1, "f64");
    set_cfg(&cfgs[0]);
    direct_a_bits();
    prepack_bits();
    thread_test();
    tn__gemm_free_cache(); /* so LeakSanitizer sees nothing outstanding */
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
