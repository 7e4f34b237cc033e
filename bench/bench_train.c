/* Training-step benchmarks of issue 8, this library beside PyTorch in the same run:
 *
 *   mlp           MLP 784-256-128-10, batch 128, cross-entropy, SGD momentum 0.9: one step
 *   cnn           conv(1,32,3)-relu-pool-conv(32,64,3)-relu-pool-linear(3136,128)-relu-linear(128,10),
 *                 batch 64 of 28x28, Adam: one step
 *   conv_fwd      conv2d forward, batch 32, 64 -> 64 channels, 56x56, 3x3, padding 1
 *   conv_fwd_bwd  the same, forward and backward (input and weight gradients)
 *   dwconv_fwd_bwd  depthwise conv2d (groups 64, 64 channels, 56x56, 3x3, padding 1, batch
 *                 32), forward and backward
 *
 * For each workload and thread count (1, 2): warm-up, then the median of REPS steps of
 * ours, then PyTorch's (bench/bench_train.py under /usr/bin/python3 with the same thread
 * count), and the ratio ours / PyTorch (below 1: we are faster). Also our peak tensor
 * memory per step, and both sides' peak memory as the process sees it (VmHWM over the
 * workload minus VmRSS before its setup; each side runs each workload in a fresh process),
 * and each process's own peak (VmHWM: what the program needs to run the workload at all).
 * Build with -O3 -fopenmp (make bench).
 *     ./build/bench_train [REPS [WORKLOAD|all [THREADS [notorch]]]]   (defaults: 10 all, 1 and 2 threads)
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct workload { tn_module *model; tn_optim *opt; tn_tensor *x, *y, *w; int kind; } workload;

static void setup(workload *w, const char *name) {
    memset(w, 0, sizeof *w);
    tn_manual_seed(0);
    if (!strcmp(name, "mlp") || !strcmp(name, "cnn")) {
        bool mlp = !strcmp(name, "mlp");
        w->model = mlp ? tn_nn_sequential(tn_nn_linear(784, 256, true), tn_nn_relu(), tn_nn_linear(256, 128, true), tn_nn_relu(),
                                          tn_nn_linear(128, 10, true))
                       : tn_nn_sequential(tn_nn_conv2d(1, 32, 3, "padding=1"), tn_nn_relu(), tn_nn_max_pool2d(2, NULL),
                                          tn_nn_conv2d(32, 64, 3, "padding=1"), tn_nn_relu(), tn_nn_max_pool2d(2, NULL),
                                          tn_nn_flatten(1, -1), tn_nn_linear(64 * 7 * 7, 128, true), tn_nn_relu(), tn_nn_linear(128, 10, true));
        tn_dict *ps = tn_module_named_parameters(w->model);
        w->opt = mlp ? tn_optim_sgd(tn_dict_values(ps), tn_dict_len(ps), 0.01, 0.9, 0)
                     : tn_optim_adam(tn_dict_values(ps), tn_dict_len(ps), 1e-3);
        tn_dict_free(ps);
        w->x = mlp ? tn_randn(TN_SHAPE(128, 784), TN_F32) : tn_randn(TN_SHAPE(64, 1, 28, 28), TN_F32);
        w->y = tn_randint(0, 10, TN_SHAPE(mlp ? 128 : 64), TN_I64, NULL);
        w->kind = 0;
    } else {
        w->x = tn_randn(TN_SHAPE(32, 64, 56, 56), TN_F32);
        w->w = !strcmp(name, "dwconv_fwd_bwd") ? tn_randn(TN_SHAPE(64, 1, 3, 3), TN_F32) : tn_randn(TN_SHAPE(64, 64, 3, 3), TN_F32);
        tn_requires_grad_(w->x, true);
        tn_requires_grad_(w->w, true);
        w->kind = !strcmp(name, "conv_fwd") ? 1 : !strcmp(name, "conv_fwd_bwd") ? 2 : 3;
    }
}
static void step(workload *w) {
    tn_scope_begin();
    if (w->kind == 0) {
        tn_optim_zero_grad(w->opt);
        tn_backward(tn_cross_entropy(tn_module_forward(w->model, w->x), w->y));
        tn_optim_step(w->opt);
    } else if (w->kind == 1) {
        tn_no_grad_begin();
        tn_conv2d(w->x, w->w, NULL, 1, 1, 1, 1);
        tn_no_grad_end();
    } else {
        tn_set_grad(w->x, NULL);
        tn_set_grad(w->w, NULL);
        tn_backward(tn_sum(tn_conv2d(w->x, w->w, NULL, 1, 1, 1, w->kind == 3 ? 64 : 1)));
    }
    tn_scope_end();
}
static void teardown(workload *w) {
    tn_optim_free(w->opt);
    tn_module_free(w->model);
    tn_release(w->x); tn_release(w->y); tn_release(w->w);
}

/* PyTorch's median ms (and in *mb the peak memory the workload added, in *proc the process's
   peak) for the workload, -1 without torch */
static double torch_ms(const char *name, int threads, int reps, double *mb, double *proc) {
    char cmd[256], buf[96];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/bench_train.py %s %d %d 2>/dev/null", name, threads, reps);
    FILE *p = popen(cmd, "r");
    double v = -1;
    *mb = *proc = -1;
    if (p && fgets(buf, sizeof buf, p) && sscanf(buf, "%lf %lf %lf", &v, mb, proc) < 1) v = -1;
    if (p) pclose(p);
    return v > 0 ? v : -1;
}
/* VmRSS / VmHWM of this process in MB (Linux; 0 elsewhere). Both sides measure the peak a
   workload adds to the process the same way: VmHWM after its steps minus VmRSS before its
   setup, with the high-water mark reset first (parameters, caches and all). */
static double rss_mb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = 0;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') { v = atof(line + n + 1) / 1024; break; }
    if (f) fclose(f);
    return v;
}
static void reset_hwm(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) { fputs("5", f); fclose(f); }
}

/* One workload at one thread count, in this process: median ms, peak tensor MB, peak RSS
   MB (VmHWM over its run minus VmRSS before its setup). */
static void run_one(const char *name, int threads, int reps, double *ms_out, double *peak, double *rss, double *proc) {
    tn_set_num_threads(threads);
    reset_hwm();
    double rss0 = rss_mb("VmRSS");
    workload w;
    setup(&w, name);
    step(&w); step(&w);                       /* warm-up (allocator cache, state) */
    tn_memory_stats_reset_peak();
    int64_t base = tn_memory_stats_get().live_bytes;
    double *ms = (double *)malloc((size_t)reps * sizeof(double));
    for (int r = 0; r < reps; r++) { double t0 = now_ms(); step(&w); ms[r] = now_ms() - t0; }
    qsort(ms, (size_t)reps, sizeof(double), cmp_double);
    *ms_out = ms[reps / 2];
    *peak = (double)(tn_memory_stats_get().peak_bytes - base) / 1e6;
    *rss = rss_mb("VmHWM") - rss0;
    *proc = rss_mb("VmHWM");
    free(ms);
    teardown(&w);
}

int main(int argc, char **argv) {
    if (argc == 5 && !strcmp(argv[1], "--one")) {   /* a child: one workload in a fresh process, as PyTorch's side */
        double ms, peak, rss, proc;
        run_one(argv[2], atoi(argv[3]), atoi(argv[4]), &ms, &peak, &rss, &proc);
        printf("%.4f %.2f %.2f %.2f\n", ms, peak, rss, proc);
        return 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    const char *only = argc > 2 && strcmp(argv[2], "all") ? argv[2] : NULL;
    int only_threads = argc > 3 ? atoi(argv[3]) : 0, with_torch = !(argc > 4 && !strcmp(argv[4], "notorch"));
    if (reps < 1) reps = 1;
    const char *names[] = {"mlp", "cnn", "conv_fwd", "conv_fwd_bwd", "dwconv_fwd_bwd"};
    char self[400] = {0};   /* this program, run again per workload */
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) snprintf(self, sizeof self, "%s", argv[0]);
    printf("| workload | threads | tensor.h ms | PyTorch ms | ratio | tensor.h peak tensor MB | tensor.h peak RSS MB | PyTorch peak RSS MB | RSS ratio "
           "| tensor.h process MB | PyTorch process MB | process ratio |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int t = 1; t <= 2; t++) {
        if (only_threads > 0 && t != only_threads) continue;
        for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
            if (only && strcmp(only, names[k])) continue;
            /* each side in a fresh process, so neither inherits the other's (or an earlier
               workload's) heap: the memory columns compare like with like */
            char cmd[512], buf[128];
            double ours = -1, peak = 0, rss = 0, proc = 0;
            snprintf(cmd, sizeof cmd, "'%s' --one %s %d %d", self, names[k], t, reps);
            FILE *p = popen(cmd, "r");
            if (!p || !fgets(buf, sizeof buf, p) || sscanf(buf, "%lf %lf %lf %lf", &ours, &peak, &rss, &proc) != 4) ours = -1;
            if (p) pclose(p);
            if (ours < 0) { printf("| %s | %d | (failed) | | | | | | | | | |\n", names[k], t); continue; }
            double tmb, tproc, theirs = with_torch ? torch_ms(names[k], t, reps, &tmb, &tproc) : -1;
            if (theirs > 0)
                printf("| %s | %d | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", names[k], t, ours, theirs, ours / theirs, peak, rss,
                       tmb, tmb > 0 ? rss / tmb : 0, proc, tproc, tproc > 0 ? proc / tproc : 0);
            else printf("| %s | %d | %.2f | (no torch) | | %.1f | %.1f | | | %.1f | | |\n", names[k], t, ours, peak, rss, proc);
            fflush(stdout);
        }
    }
    return 0;
}
