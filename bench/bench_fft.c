/* The FFT engine (src/ops/fft.c) beside PyTorch's torch.fft (pocketfft), single precision:
 *
 *   c2c 2^20        one forward complex transform of 2^20 points
 *   r2c 2^20        one real-input transform of 2^20 points (2^19 + 1 outputs)
 *   batch 1000x1024 1000 contiguous complex transforms of 1024 points
 *   prime 1000003   one complex transform of a prime length (Bluestein)
 *   fft2 512x512    a 2-d complex transform: the rows, then the columns (strided lines)
 *
 * Out of place, the output buffer allocated once (PyTorch allocates its result each call).
 * Median (and fastest) milliseconds of REPS runs at 1 and 2 threads; PyTorch in a child process
 * (bench/bench_fft.py, /usr/bin/python3, OPENBLAS_CORETYPE unset) with the same count.
 *
 *   make build/bench_fft && ./build/bench_fft [REPS]
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
enum { NCASE = 5 };
static const char *names[NCASE] = {"c2c 2^20", "r2c 2^20", "batch 1000x1024", "prime 1000003", "fft2 512x512"};

static int run_case(int c, float *in, float *out) {
    switch (c) {
    case 0: return tn__fft_exec(1 << 20, 0, TN__FFT_FWD, in, 1, 0, out, 1, 0, 1, 1.0);
    case 1: return tn__fft_exec(1 << 20, 0, TN__FFT_R2C, in, 1, 0, out, 1, 0, 1, 1.0);
    case 2: return tn__fft_exec(1024, 0, TN__FFT_FWD, in, 1, 1024, out, 1, 1024, 1000, 1.0);
    case 3: return tn__fft_exec(1000003, 0, TN__FFT_FWD, in, 1, 0, out, 1, 0, 1, 1.0);
    default:   /* rows into out, then the columns of out in place */
        if (tn__fft_exec(512, 0, TN__FFT_FWD, in, 1, 512, out, 1, 512, 512, 1.0)) return -1;
        return tn__fft_exec(512, 0, TN__FFT_FWD, out, 512, 1, out, 512, 1, 512, 1.0);
    }
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1 || reps > 1000) reps = 21;
    const size_t cap = 2u * 1024u * 1024u + 64;   /* 2^20 complex, 1000x1024 complex, 1000003 complex */
    float *in = (float *)malloc(cap * sizeof(float)), *out = (float *)malloc(cap * sizeof(float));
    double *ts = (double *)malloc((size_t)reps * sizeof(double));
    if (!in || !out || !ts) return 1;
    srand(1);
    for (size_t i = 0; i < cap; i++) in[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    printf("# FFT beside PyTorch (torch.fft, pocketfft), complex64/float32, median (fastest) ms of %d runs\n\n", reps);
    printf("| transform | threads | tensor.h ms | PyTorch ms | ratio | fastest: tensor.h | PyTorch | ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int threads = 1; threads <= 2; threads++) {
        tn_set_num_threads(threads);
        double ours[NCASE], theirs[NCASE], ob[NCASE], tb[NCASE];
        for (int c = 0; c < NCASE; c++) {
            if (run_case(c, in, out) || run_case(c, in, out)) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }   /* plans */
            for (int r = 0; r < reps; r++) {
                double t0 = now_ms();
                run_case(c, in, out);
                ts[r] = now_ms() - t0;
            }
            qsort(ts, (size_t)reps, sizeof ts[0], cmp_double);
            ours[c] = ts[reps / 2];
            ob[c] = ts[0];
        }
        char cmd[256];
        snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/bench_fft.py %d %d 2>/dev/null", threads, reps);
        FILE *p = popen(cmd, "r");
        int have = p != NULL;
        for (int c = 0; c < NCASE && have; c++) have = fscanf(p, "%lf", &theirs[c]) == 1;
        for (int c = 0; c < NCASE && have; c++) have = fscanf(p, "%lf", &tb[c]) == 1;
        if (p) pclose(p);
        for (int c = 0; c < NCASE; c++) {
            if (have) printf("| %s | %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |\n", names[c], threads, ours[c], theirs[c], ours[c] / theirs[c], ob[c], tb[c], ob[c] / tb[c]);
            else printf("| %s | %d | %.3f | (no PyTorch) | | %.3f | | |\n", names[c], threads, ours[c], ob[c]);
        }
        fflush(stdout);
    }
    free(in); free(out); free(ts);
    return 0;
}
