/* What TN_MAX_DIMS costs a small op: every tensor (and autograd node) carries TN_MAX_DIMS
 * shape and stride slots, so a larger limit makes each tensor struct, and each stack copy
 * of one, larger. Times, on one thread, in nanoseconds per call (the fastest of 15 runs: the least disturbed by other load):
 *
 *   add      tn_add of two 4-element float32 tensors, the result released
 *   create   tn_zeros of 4 elements, released
 *   fwd+bwd  (a * b + c).sum() on 4-element leaves, then backward
 *
 * Build it once per limit and compare (tools: bench/bench_max_dims.sh does the four the
 * README quotes, alternating the binaries so a busy machine loads them alike):
 *   cc -O2 -DTN_MAX_DIMS=16 -Ibench bench/bench_max_dims.c -o build/bench_max_dims_16 -lm -pthread
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define RUNS 15
static double best_ns(void (*body)(int), int n) {
    double t[RUNS];
    body(n / 10);   /* warm-up: the caching allocator's free lists filled */
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ns();
        body(n);
        t[r] = (now_ns() - t0) / n;
    }
    qsort(t, RUNS, sizeof *t, cmp_double);
    return t[0];
}

static tn_tensor *A, *B, *C;
static void add(int n) { for (int i = 0; i < n; i++) tn_release(tn_add(A, B)); }
static void create(int n) { for (int i = 0; i < n; i++) tn_release(tn_zeros(TN_SHAPE(4), TN_F32)); }
static void fwd_bwd(int n) {
    for (int i = 0; i < n; i++) {
        tn_scope_begin();
        tn_backward(tn_sum(tn_add(tn_mul(A, B), C)));
        tn_scope_end();
        tn_set_grad(A, NULL); tn_set_grad(B, NULL); tn_set_grad(C, NULL);
    }
}

int main(void) {
    tn_set_num_threads(1);
    A = tn_ones(TN_SHAPE(4), TN_F32); B = tn_ones(TN_SHAPE(4), TN_F32); C = tn_ones(TN_SHAPE(4), TN_F32);
    double a = best_ns(add, 200000), c = best_ns(create, 200000);
    tn_requires_grad_(A, true); tn_requires_grad_(B, true); tn_requires_grad_(C, true);
    double f = best_ns(fwd_bwd, 20000);
    printf("TN_MAX_DIMS %2d  sizeof(tn_tensor) %5zu  add %7.1f ns  create %7.1f ns  fwd+bwd %8.1f ns\n", TN_MAX_DIMS, sizeof(tn_tensor), a, c, f);
    tn_release(A); tn_release(B); tn_release(C);
    return 0;
}
