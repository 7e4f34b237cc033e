/* Captured-graph replay beside eager (issue 22), in one run:
 *
 *   cnn          conv(1,32,3,p1)-bn-relu-pool-conv(32,64,3,p1)-bn-relu-pool-flatten-linear(3136,128)-relu-linear(128,10), 28x28
 *   transformer  two TransformerEncoderLayer(d_model 128, 4 heads, feedforward 512, batch_first), 32 tokens
 *
 * at batch 1 and 64, 1 and 2 threads, all forward under no_grad in eval mode: our eager
 * forward (tn_module_forward), the traced graph replayed (tn_jit_trace_module), the same
 * graph optimised (tn_graph_optimize) and replayed, and PyTorch 1.13's eager forward of the
 * same architecture (bench/bench_jit.py, run from here with the same thread count). Each
 * figure is the median of REPS timed calls after warm-up, eager and replay alternating.
 * Also eager's peak tensor memory per forward (tn_memory_stats), the optimised graph's arena
 * (its static memory plan: tn_graph_arena_bytes), the storages one steady optimised replay
 * allocates (tn_memory_allocations: 0 under the plan) and how many nodes it runs fused.
 * Build: make build/bench_jit.
 *     ./build/bench_jit [REPS]        (REPS for batch 64; batch 1 runs 10x as many)
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* TN_BENCH_CPU=1: the process's CPU time instead of the wall clock (1-thread rows on a machine
   others load; the PyTorch column stays wall clock) */
static double now_ms(void) {
    static int cpu = -1;
    if (cpu < 0) cpu = getenv("TN_BENCH_CPU") && atoi(getenv("TN_BENCH_CPU")) > 0;
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static tn_module *make(const char *name) {
    tn_manual_seed(0);
    if (!strcmp(name, "cnn"))
        return tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_batch_norm2d(32), tn_nn_relu(), tn_nn_max_pool2d(2),
                                tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_batch_norm2d(64), tn_nn_relu(), tn_nn_max_pool2d(2),
                                tn_nn_flatten(), tn_nn_linear(64 * 7 * 7, 128), tn_nn_relu(), tn_nn_linear(128, 10));
    return tn_nn_sequential(tn_nn_transformer_encoder_layer(128, 4, .dim_feedforward = 512, .batch_first = true),
                            tn_nn_transformer_encoder_layer(128, 4, .dim_feedforward = 512, .batch_first = true));
}
static tn_tensor *input(const char *name, int64_t batch) {
    return !strcmp(name, "cnn") ? tn_randn(TN_SHAPE(batch, 1, 28, 28), TN_F32) : tn_randn(TN_SHAPE(batch, 32, 128), TN_F32);
}
/* PyTorch's median ms for the same workload (NAN without PyTorch) */
static double torch_ms(const char *name, int64_t batch, int threads, int reps) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/bench_jit.py %s %lld %d %d 2>/dev/null", name, (long long)batch, threads, reps);
    FILE *p = popen(cmd, "r");
    double ms = NAN;
    if (p) { if (fscanf(p, "%lf", &ms) != 1) ms = NAN; pclose(p); }
    return ms;
}

int main(int argc, char **argv) {
    const int reps64 = argc > 1 ? atoi(argv[1]) : 20;
    const char *names[2] = {"cnn", "transformer"};
    printf("| model | batch | threads | eager ms | replay ms | optimised replay ms | PyTorch eager ms | optimised / eager | eager peak MB | arena MB | allocs / replay | fused nodes |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int w = 0; w < 2; w++) {
        tn_module *m = make(names[w]);
        tn_module_eval(m);
        for (int bi = 0; bi < 2; bi++) {
            const int64_t batch = bi ? 64 : 1;
            const int reps = bi ? reps64 : 10 * reps64;
            tn_scope_begin();
            tn_tensor *x = input(names[w], batch);
            tn_graph *g = tn_jit_trace_module(m, x), *o = tn_jit_trace_module(m, x);
            if (!g || !o || tn_graph_optimize(o) < 0) { fprintf(stderr, "%s: %s\n", names[w], tn_last_error()); return 1; }
            for (int threads = 1; threads <= 2; threads++) {
                tn_set_num_threads(threads);
                double *t[3];
                int64_t peak[3] = {0, 0, 0}, allocs = -1;
                for (int k = 0; k < 3; k++) t[k] = (double *)malloc((size_t)reps * sizeof(double));
                tn_no_grad_begin();
                for (int it = -3; it < reps; it++) {
                    for (int k = 0; k < 3; k++) {
                        tn_scope_begin();
                        tn_memory_stats_reset_peak();
                        const int64_t base = tn_memory_stats_get().live_bytes, a0 = tn_memory_allocations();
                        double t0 = now_ms();
                        tn_tensor *y = k == 0 ? tn_module_forward(m, x) : tn_graph_forward(k == 1 ? g : o, x);
                        double t1 = now_ms();
                        if (k == 2 && it == reps - 1) allocs = tn_memory_allocations() - a0;
                        if (!y) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
                        const int64_t p = tn_memory_stats_get().peak_bytes - base;
                        if (p > peak[k]) peak[k] = p;
                        tn_scope_end();
                        if (it >= 0) t[k][it] = t1 - t0;
                    }
                }
                tn_no_grad_end();
                double e = median(t[0], reps), r = median(t[1], reps), ro = median(t[2], reps);
                double pt = torch_ms(names[w], batch, threads, reps);
                printf("| %s | %lld | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f | %.1f | %lld | %d |\n", names[w], (long long)batch, threads, e, r, ro, pt, ro / e,
                       peak[0] / 1048576.0, tn_graph_arena_bytes(o) / 1048576.0, (long long)allocs, tn_graph_fused_nodes(o));
                fflush(stdout);
                for (int k = 0; k < 3; k++) free(t[k]);
            }
            tn_graph_free(g);
            tn_graph_free(o);
            tn_scope_end();
        }
        tn_module_free(m);
    }
    return 0;
}
