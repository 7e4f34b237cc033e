/* Matrix-multiply benchmark: tn__gemm_f32 vs OpenBLAS cblas_sgemm.
 *
 *   gcc -std=c11 -O2 -I. bench/bench_matmul.c -o bench_matmul -lopenblas -lm -pthread
 *   ./bench_matmul [--threads N] [--sizes 256,512,...]
 *
 * Square row-major f32 matrices, C = A @ B.  For each size: one warm-up call
 * of each (also checks that the results agree), then several repetitions that
 * alternate between the two implementations (so frequency/thermal drift hits
 * both alike); prints the median GFLOP/s of each and the ratio ours/OpenBLAS
 * as a markdown table.  Single-threaded by default; --threads N sets
 * OpenBLAS's thread count and, when built with -fopenmp, ours (then each
 * library is timed in its own block, see settle()).
 *
 * OPENBLAS_CORETYPE (if set in the environment) forces OpenBLAS onto an older
 * kernel set; it is read when the library loads, so we re-exec ourselves
 * without it to let the reference use its best kernels.
 *
 * `make bench` builds and runs it (needs libopenblas-dev).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <cblas.h>

#define TENSOR_IMPLEMENTATION
#include "../tensor.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* With several threads, each library's idle workers keep spinning for a while
 * after a call (OpenBLAS ~0.1 s) and would steal cores from the other one, so
 * multi-threaded runs time each library in its own block, after a pause. */
static void settle(void)
{
    struct timespec ts = { 0, 300000000L };
    nanosleep(&ts, NULL);
}

static double time_ours(int n, const float *A, const float *B, float *C)
{
    double t0 = now();
    tn__gemm_f32(n, n, n, 1.0f, A, n, 1, B, n, 1, 0.0f, C, n, 1);
    return now() - t0;
}

static double time_blas(int n, const float *A, const float *B, float *C)
{
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
    return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The products a training step is made of: the MLP 784-256-128-10 at batch 128 (forward
 * x @ W^T, backward gy @ W and gy^T @ x) and the CNN's first convolution (K = 9) and its
 * weight gradient (a [32, N*L] by [N*L, 9] product). ta/tb: the operand is a transposed
 * view (column-major), as the layers pass them. */
static void skinny_table(void)
{
    static const int S[][6] = {
        { 128, 256, 784, 0, 1, 0 }, { 128, 128, 256, 0, 1, 0 }, { 128, 10, 128, 0, 1, 0 },
        { 256, 784, 128, 1, 0, 0 }, { 128, 256, 128, 0, 0, 0 }, { 10, 128, 128, 1, 0, 0 },
        { 128, 128, 10, 0, 0, 0 }, { 32, 3136, 9, 0, 0, 0 }, { 32, 9, 50176, 0, 1, 0 },
    };
    int s, r, i;
    printf("\n# the training steps' shapes (C[M,N] = A[M,K] @ B[K,N]), median of 15 x 20 calls\n\n");
    printf("| M | N | K | A | B | ours GFLOP/s | OpenBLAS GFLOP/s | ours/OpenBLAS |\n|---:|---:|---:|---|---|---:|---:|---:|\n");
    for (s = 0; s < (int)(sizeof S / sizeof S[0]); s++) {
        int M = S[s][0], N = S[s][1], K = S[s][2], ta = S[s][3], tb = S[s][4];
        float *A = (float *)malloc((size_t)M * K * sizeof(float)), *B = (float *)malloc((size_t)K * N * sizeof(float));
        float *C = (float *)malloc((size_t)M * N * sizeof(float));
        double to[15], tb_[15], fl = 2.0 * M * N * K;
        int64_t ar = ta ? 1 : K, ac = ta ? M : 1, br = tb ? 1 : N, bc = tb ? K : 1;
        if (!A || !B || !C) { fprintf(stderr, "out of memory\n"); exit(1); }
        for (i = 0; i < M * K; i++) A[i] = (float)(i % 13) * 0.1f - 0.6f;
        for (i = 0; i < K * N; i++) B[i] = (float)(i % 7) * 0.1f - 0.3f;
        for (r = 0; r < 15; r++) {
            double t0 = now();
            for (i = 0; i < 20; i++) tn__gemm_f32(M, N, K, 1.0f, A, ar, ac, B, br, bc, 0.0f, C, N, 1);
            to[r] = (now() - t0) / 20;
            t0 = now();
            for (i = 0; i < 20; i++)
                cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, ta ? M : K,
                            B, tb ? K : N, 0.0f, C, N);
            tb_[r] = (now() - t0) / 20;
        }
        {
            double go = fl / median(to, 15) * 1e-9, gb = fl / median(tb_, 15) * 1e-9;
            printf("| %d | %d | %d | %s | %s | %.1f | %.1f | %.0f%% |\n", M, N, K, ta ? "T" : "N", tb ? "T" : "N", go, gb, 100.0 * go / gb);
            fflush(stdout);
        }
        free(A); free(B); free(C);
    }
}

int main(int argc, char **argv)
{
    static const char *isa_names[] = { "portable C", "AVX2+FMA", "AVX-512F" };
    int sizes[16] = { 256, 512, 1024, 1536, 2048 }, nsizes = 5, threads = 1, s, i;
    uint64_t seed = 12345;

    if (getenv("OPENBLAS_CORETYPE")) {
        unsetenv("OPENBLAS_CORETYPE");
        execv("/proc/self/exe", argv);
        perror("execv /proc/self/exe (continuing with OPENBLAS_CORETYPE unset too late)");
    }
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
            if (threads < 1) threads = 1;
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *p = argv[++i];
            nsizes = 0;
            while (*p && nsizes < 16) {
                sizes[nsizes++] = (int)strtol(p, &p, 10);
                if (*p == ',') p++;
            }
        } else {
            fprintf(stderr, "usage: %s [--threads N] [--sizes n1,n2,...]\n", argv[0]);
            return 2;
        }
    }
    (void)tn__gemm_f64; /* only f32 is benchmarked */
    openblas_set_num_threads(threads);
#ifdef _OPENMP
    tn__gemm_tune.threads = threads;
#endif

    printf("# sgemm, square row-major f32, C = A @ B, median GFLOP/s\n");
    printf("# threads: %d (OpenBLAS %d; ours %s), our kernel: %s, OpenBLAS core: %s\n", threads,
           threads,
#ifdef _OPENMP
           "OpenMP",
#else
           "single-threaded build",
#endif
           isa_names[tn__gemm_isa()], openblas_get_corename());
    printf("# OpenBLAS config: %s\n\n", openblas_get_config());
    printf("| n | reps | ours GFLOP/s | OpenBLAS GFLOP/s | ours/OpenBLAS |\n");
    printf("|---:|---:|---:|---:|---:|\n");
    fflush(stdout);

    for (s = 0; s < nsizes; s++) {
        int n = sizes[s], reps = n <= 1024 ? 7 : n <= 1536 ? 5 : 3, r;
        size_t nn = (size_t)n * (size_t)n;
        float *A = (float *)malloc(nn * sizeof(float)), *B = (float *)malloc(nn * sizeof(float));
        float *C1 = (float *)malloc(nn * sizeof(float)), *C2 = (float *)malloc(nn * sizeof(float));
        double t_ours[16], t_blas[16], flops = 2.0 * n * (double)n * n, maxdiff = 0, maxref = 0;
        if (!A || !B || !C1 || !C2) { fprintf(stderr, "out of memory\n"); return 1; }
        for (i = 0; i < (int)nn; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            A[i] = (float)((double)(seed >> 40) / 16777216.0 - 0.5);
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            B[i] = (float)((double)(seed >> 40) / 16777216.0 - 0.5);
        }
        /* warm-up (page faults, caches, OpenBLAS thread start-up) */
        if (tn__gemm_f32(n, n, n, 1.0f, A, n, 1, B, n, 1, 0.0f, C1, n, 1) != 0) {
            fprintf(stderr, "tn__gemm_f32 failed\n");
            return 1;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C2, n);
        for (i = 0; i < (int)nn; i++) {
            double d = fabs((double)C1[i] - (double)C2[i]), m = fabs((double)C2[i]);
            if (d > maxdiff) maxdiff = d;
            if (m > maxref) maxref = m;
        }
        if (maxdiff > 1e-4 * (maxref + 1.0) * sqrt((double)n)) {
            fprintf(stderr, "n=%d: results differ (max |diff| %g, max |C| %g)\n", n, maxdiff, maxref);
            return 1;
        }
        if (threads == 1) { /* alternate, so drift hits both alike */
            for (r = 0; r < reps; r++) {
                t_ours[r] = time_ours(n, A, B, C1);
                t_blas[r] = time_blas(n, A, B, C2);
            }
        } else { /* one library at a time, its threads hot, the other's asleep */
            settle();
            time_ours(n, A, B, C1);
            for (r = 0; r < reps; r++) t_ours[r] = time_ours(n, A, B, C1);
            settle();
            time_blas(n, A, B, C2);
            for (r = 0; r < reps; r++) t_blas[r] = time_blas(n, A, B, C2);
        }
        {
            double go = flops / median(t_ours, reps) * 1e-9, gb = flops / median(t_blas, reps) * 1e-9;
            printf("| %d | %d | %.1f | %.1f | %.0f%% |\n", n, reps, go, gb, 100.0 * go / gb);
            fflush(stdout);
        }
        free(A); free(B); free(C1); free(C2);
    }
    if (threads == 1) skinny_table();
    return 0;
}
