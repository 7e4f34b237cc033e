/* Autograd engine overhead: forward+backward of tiny graphs, where the time is all
 * bookkeeping (recording nodes, walking the graph, allocating 1-element tensors).
 *
 *   simple: y = (a*b + c).sum() on 1-element float32 tensors, then backward
 *   chain:  100 alternating y*1.0001 / y+0.5 ops on a 1-element tensor, then backward
 *
 * Prints the median microseconds per step of this library and, in the same run, of
 * PyTorch's eager engine (bench/bench_autograd.py via /usr/bin/python3, one thread)
 * when it is installed, and the ratio.      make bench   (or build/bench_autograd)
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double simple(int steps) {
    tn_tensor *a = tn_ones(TN_SHAPE(1), TN_F32), *b = tn_ones(TN_SHAPE(1), TN_F32), *c = tn_ones(TN_SHAPE(1), TN_F32);
    tn_requires_grad_(a, true); tn_requires_grad_(b, true); tn_requires_grad_(c, true);
    double t0 = now_us();
    for (int s = 0; s < steps; s++) {
        tn_scope_begin();
        tn_backward(tn_sum(tn_add(tn_mul(a, b), c)));
        tn_scope_end();
        tn_set_grad(a, NULL); tn_set_grad(b, NULL); tn_set_grad(c, NULL);
    }
    double dt = (now_us() - t0) / steps;
    tn_release(a); tn_release(b); tn_release(c);
    return dt;
}

static double chain(int steps, int n) {
    tn_tensor *x = tn_ones(TN_SHAPE(1), TN_F32);
    tn_requires_grad_(x, true);
    double t0 = now_us();
    for (int s = 0; s < steps; s++) {
        tn_scope_begin();
        tn_tensor *y = x;
        for (int i = 0; i < n; i++) y = i % 2 ? tn_mul_scalar(y, 1.0001) : tn_add_scalar(y, 0.5);
        tn_backward(tn_sum(y));
        tn_scope_end();
        tn_set_grad(x, NULL);
    }
    double dt = (now_us() - t0) / steps;
    tn_release(x);
    return dt;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    double rs[64], rc[64];
    if (reps < 1 || reps > 64) reps = 5;
    simple(2000); chain(200, 100); /* warm-up */
    for (int r = 0; r < reps; r++) { rs[r] = simple(20000); rc[r] = chain(1000, 100); }
    qsort(rs, (size_t)reps, sizeof rs[0], cmp_double);
    qsort(rc, (size_t)reps, sizeof rc[0], cmp_double);
    double ms = rs[reps / 2], mc = rc[reps / 2], ps = 0, pc = 0;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/bench_autograd.py %d 2>/dev/null", reps);
    FILE *p = popen(cmd, "r");
    int have = p && fscanf(p, "%lf %lf", &ps, &pc) == 2;
    if (p) pclose(p);
    printf("# autograd overhead, 1 thread, median of %d runs (microseconds per forward+backward step)\n\n", reps);
    printf("| graph | nodes | tensor.h us | PyTorch us | PyTorch / tensor.h |\n|---|---:|---:|---:|---:|\n");
    if (have) {
        printf("| (a*b + c).sum() | 3 | %.2f | %.2f | %.1fx |\n", ms, ps, ps / ms);
        printf("| 100-op chain | 101 | %.1f | %.1f | %.1fx |\n", mc, pc, pc / mc);
        printf("\nper node: tensor.h %.3f us, PyTorch %.3f us\n", mc / 101, pc / 101);
    } else {
        printf("| (a*b + c).sum() | 3 | %.2f | (no PyTorch) | |\n| 100-op chain | 101 | %.1f | (no PyTorch) | |\n", ms, mc);
    }
    return 0;
}
