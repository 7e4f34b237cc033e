/* GPU benchmarks of issue 7, this library beside PyTorch on the same GPU in the same run:
 *
 *   matmul N      f32 (N x N) @ (N x N), N = 1024, 2048, 4096, 8192, TF32 off and on: TFLOP/s
 *   conv_fwd      conv2d forward, batch 32, 64 -> 64 channels, 56x56, 3x3, padding 1
 *   conv_fwd_bwd  the same, forward and backward (input and weight gradients)
 *   mlp           bench_train's MLP 784-256-128-10, batch 128, cross-entropy, SGD momentum 0.9: one step
 *   cnn           bench_train's two-conv CNN, batch 64 of 28x28, Adam: one step
 *
 * For each workload: ours, then PyTorch's (bench/bench_cuda.py under /usr/bin/python3,
 * one process per workload so each peak is its own). Each side: warm-up, then REPS
 * repetitions of INNER steps between two synchronizes (a single step of the smaller
 * workloads is shorter than a launch-and-wait round trip; INNER is chosen from our first
 * timed step so a repetition lasts about 10 ms, and PyTorch runs the same INNER), the
 * median ms per step, and the ratio ours / PyTorch (below 1: we are faster; the target is
 * at most 1.10). Peak GPU memory over the timed steps, everything resident included:
 * tn_cuda_memory_stats().peak_allocated beside torch.cuda.max_memory_allocated().
 * TF32 is set explicitly on both sides: off for conv and the training steps (PyTorch's
 * cuDNN default would be on), off and on for matmul.
 *
 * Without a GPU it prints why in one line and exits 0. Without PyTorch with CUDA under
 * /usr/bin/python3 it prints our figures and why the PyTorch column is missing.
 * Run from the repository root:   make bench-cuda   or   ./build/cuda/bench_cuda [REPS]
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <cuda_runtime_api.h> /* the device's name only */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SCRIPT "bench/bench_cuda.py"
#define PYTHON "/usr/bin/python3"
#define TARGET_REP_MS 10.0

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { MATMUL, CONV_FWD, CONV_FWD_BWD, MLP, CNN };
typedef struct spec { const char *arg; int kind; int64_t n; bool tf32; } spec; /* arg: the workload as bench_cuda.py reads it */
typedef struct workload { spec s; tn_module *model; tn_optim *opt; tn_tensor *x, *y, *w; } workload;

/* floating-point operations of one step (0: not reported) */
static double flops(const spec *s) {
    double conv = 2.0 * 32 * 64 * 56 * 56 * 64 * 3 * 3;
    switch (s->kind) {
    case MATMUL: return 2.0 * (double)s->n * (double)s->n * (double)s->n;
    case CONV_FWD: return conv;
    case CONV_FWD_BWD: return 3 * conv; /* forward, input gradient, weight gradient */
    default: return 0;
    }
}

/* t moved to the GPU; the CPU tensor is released */
static tn_tensor *on_gpu(tn_tensor *t) {
    tn_tensor *g = t ? tn_to(t, TN_CUDA) : NULL;
    tn_release(t);
    return g;
}

static int setup(workload *w, const spec *s) {
    memset(w, 0, sizeof *w);
    w->s = *s;
    tn_manual_seed(0);
    tn_set_tf32(s->tf32);
    if (s->kind == MATMUL) {
        w->x = on_gpu(tn_randn(TN_SHAPE(s->n, s->n), TN_F32));
        w->w = on_gpu(tn_randn(TN_SHAPE(s->n, s->n), TN_F32));
        return w->x && w->w ? 0 : -1;
    }
    if (s->kind == CONV_FWD || s->kind == CONV_FWD_BWD) {
        w->x = on_gpu(tn_randn(TN_SHAPE(32, 64, 56, 56), TN_F32));
        w->w = on_gpu(tn_randn(TN_SHAPE(64, 64, 3, 3), TN_F32));
        if (!w->x || !w->w) return -1;
        return tn_requires_grad_(w->x, true) || tn_requires_grad_(w->w, true) ? -1 : 0;
    }
    bool mlp = s->kind == MLP;
    w->model = mlp ? tn_nn_sequential(tn_nn_linear(784, 256, true), tn_nn_relu(), tn_nn_linear(256, 128, true), tn_nn_relu(),
                                      tn_nn_linear(128, 10, true))
                   : tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_flatten(1, -1), tn_nn_linear(64 * 7 * 7, 128, true), tn_nn_relu(), tn_nn_linear(128, 10, true));
    if (!w->model || tn_module_to(w->model, TN_CUDA) != 0) return -1; /* before the optimizer: its state follows the parameters */
    tn_dict *ps = tn_module_named_parameters(w->model);
    w->opt = mlp ? tn_optim_sgd(tn_dict_values(ps), tn_dict_len(ps), .lr = 0.01, .momentum = 0.9)
                 : tn_optim_adam(tn_dict_values(ps), tn_dict_len(ps), .lr = 1e-3);
    tn_dict_free(ps);
    w->x = on_gpu(mlp ? tn_randn(TN_SHAPE(128, 784), TN_F32) : tn_randn(TN_SHAPE(64, 1, 28, 28), TN_F32));
    w->y = on_gpu(tn_randint(0, 10, TN_SHAPE(mlp ? 128 : 64), TN_I64, NULL));
    return w->opt && w->x && w->y ? 0 : -1;
}

/* one step, queued on the GPU (no synchronize); 0 or -1 with tn_last_error() */
static int step(workload *w) {
    int rc = 0;
    tn_scope_begin();
    switch (w->s.kind) {
    case MATMUL:
        rc = tn_matmul(w->x, w->w) ? 0 : -1;
        break;
    case CONV_FWD:
        tn_no_grad_begin();
        rc = tn_conv2d(w->x, w->w, NULL, .padding = 1) ? 0 : -1;
        tn_no_grad_end();
        break;
    case CONV_FWD_BWD: {
        tn_set_grad(w->x, NULL);
        tn_set_grad(w->w, NULL);
        tn_tensor *out = tn_conv2d(w->x, w->w, NULL, .padding = 1);
        rc = out ? tn_backward(tn_sum(out)) : -1;
        break;
    }
    default: {
        tn_optim_zero_grad(w->opt);
        tn_tensor *out = tn_module_forward(w->model, w->x);
        tn_tensor *loss = out ? tn_cross_entropy(out, w->y) : NULL;
        rc = loss && tn_backward(loss) == 0 ? tn_optim_step(w->opt) : -1;
    }
    }
    tn_scope_end();
    return rc;
}

/* ms per step of `inner` steps between two synchronizes */
static double timed(workload *w, int inner, int *rc) {
    if (tn_cuda_synchronize() != 0) *rc = -1;
    double t0 = now_ms();
    for (int i = 0; i < inner && *rc == 0; i++) *rc = step(w);
    if (tn_cuda_synchronize() != 0) *rc = -1;
    return (now_ms() - t0) / inner;
}

static void teardown(workload *w) {
    tn_optim_free(w->opt);
    tn_module_free(w->model);
    tn_release(w->x); tn_release(w->y); tn_release(w->w);
    tn_cuda_synchronize();
    tn_cuda_empty_cache(); /* PyTorch's process runs next on the same GPU */
}

static void chomp(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
}

/* Can bench_cuda.py run PyTorch on a GPU? "" into why when it can (what into desc), else why not. */
static void probe_torch(char *why, size_t nwhy, char *desc, size_t ndesc) {
    *why = *desc = 0;
    if (access(PYTHON, X_OK) != 0) { snprintf(why, nwhy, "no %s", PYTHON); return; }
    if (access(SCRIPT, R_OK) != 0) { snprintf(why, nwhy, "%s not found (run from the repository root)", SCRIPT); return; }
    FILE *p = popen(PYTHON " " SCRIPT " probe 2>/dev/null", "r");
    char line[512] = "";
    bool got = p && fgets(line, sizeof line, p);
    if (p) pclose(p);
    chomp(line);
    if (!got || !*line) snprintf(why, nwhy, "%s %s probe printed nothing", PYTHON, SCRIPT);
    else if (!strncmp(line, "ok ", 3)) snprintf(desc, ndesc, "%s", line + 3);
    else snprintf(why, nwhy, "%s", line);
}

/* PyTorch's median ms per step and peak bytes; 0, or -1 with the reason in err */
static int torch_run(const spec *s, int reps, int inner, double *ms, double *peak, char *err, size_t nerr) {
    char cmd[256], line[512];
    snprintf(cmd, sizeof cmd, PYTHON " " SCRIPT " %s %d %d %d 2>&1", s->arg, s->tf32 ? 1 : 0, reps, inner);
    FILE *p = popen(cmd, "r");
    int rc = -1;
    snprintf(err, nerr, "no output");
    while (p && fgets(line, sizeof line, p)) {
        chomp(line);
        if (sscanf(line, "result %lf %lf", ms, peak) == 2 && *ms > 0) rc = 0;
        else if (*line) snprintf(err, nerr, "%s", !strncmp(line, "error ", 6) ? line + 6 : line); /* else the last line (a traceback's) */
    }
    if (p) pclose(p);
    return rc;
}

/* a table cell: the message with the characters that would break a markdown row replaced */
static const char *cell(char *s) {
    for (char *c = s; *c; c++)
        if (*c == '|' || *c == '\n') *c = '/';
    return s;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    if (reps < 1) reps = 1;
    if (!tn_cuda_is_available()) {
        printf("bench_cuda: skipped, no usable GPU: %s\n", tn_cuda_unavailable_reason());
        return 0;
    }
    char dev[300], why[512], desc[512];
    struct cudaDeviceProp prop;
    int d = tn_cuda_current_device();
    if (d >= 0 && cudaGetDeviceProperties(&prop, d) == cudaSuccess)
        snprintf(dev, sizeof dev, "%s (sm_%d%d, %.0f GB)", prop.name, prop.major, prop.minor, (double)prop.totalGlobalMem / 1e9);
    else snprintf(dev, sizeof dev, "CUDA device %d", d);
    probe_torch(why, sizeof why, desc, sizeof desc);

    printf("## bench_cuda on %s\n\n", dev);
    if (*why) printf("PyTorch column missing: %s\n\n", why);
    else printf("beside %s; median of %d repetitions; ratio = ours / PyTorch (target <= 1.10)\n\n", desc, reps);
    printf("| workload | TF32 | tensor.h ms | PyTorch ms | ratio | tensor.h TFLOP/s | PyTorch TFLOP/s | tensor.h peak MB | PyTorch peak MB |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);

    static const spec specs[] = {
        {"matmul_1024", MATMUL, 1024, false}, {"matmul_1024", MATMUL, 1024, true},
        {"matmul_2048", MATMUL, 2048, false}, {"matmul_2048", MATMUL, 2048, true},
        {"matmul_4096", MATMUL, 4096, false}, {"matmul_4096", MATMUL, 4096, true},
        {"matmul_8192", MATMUL, 8192, false}, {"matmul_8192", MATMUL, 8192, true},
        {"conv_fwd", CONV_FWD, 0, false},     {"conv_fwd_bwd", CONV_FWD_BWD, 0, false},
        {"mlp", MLP, 0, false},               {"cnn", CNN, 0, false},
    };
    int nspecs = (int)(sizeof specs / sizeof specs[0]), failed = 0, compared = 0, within = 0;
    char over[512] = "";
    double *ms = (double *)malloc((size_t)reps * sizeof(double));
    if (!ms) return 1;
    for (int k = 0; k < nspecs; k++) {
        const spec *s = &specs[k];
        char name[32], err[1024] = "", terr[512] = "";
        if (s->kind == MATMUL) snprintf(name, sizeof name, "matmul %lld", (long long)s->n);
        else snprintf(name, sizeof name, "%s", s->arg);

        /* ours: warm-up (cuBLAS handle, allocator cache, optimizer state), one timed step
           to choose INNER, then the timed repetitions */
        workload w;
        int rc = setup(&w, s), inner = 1;
        for (int i = 0; i < 3 && rc == 0; i++) rc = step(&w);
        if (rc == 0) {
            double one = timed(&w, 1, &rc);
            inner = one > 0 ? (int)ceil(TARGET_REP_MS / one) : 1000;
            if (inner > 1000) inner = 1000;
        }
        double ours = -1, peak = 0;
        if (rc == 0) {
            tn_cuda_reset_peak_memory_stats();
            for (int r = 0; r < reps && rc == 0; r++) ms[r] = timed(&w, inner, &rc);
            qsort(ms, (size_t)reps, sizeof(double), cmp_double);
            ours = ms[reps / 2];
            peak = (double)tn_cuda_memory_stats().peak_allocated / 1e6;
        }
        if (rc != 0) { snprintf(err, sizeof err, "%s", tn_last_error()); failed++; }
        teardown(&w);

        double theirs = -1, tpeak = 0;
        bool have = !*why && torch_run(s, reps, inner, &theirs, &tpeak, terr, sizeof terr) == 0;
        double f = flops(s);
        char c_ours[1100], c_theirs[600], c_ratio[32] = "", f_ours[32] = "", f_theirs[32] = "", m_ours[32] = "", m_theirs[32] = "";
        if (rc == 0) {
            snprintf(c_ours, sizeof c_ours, "%.3f", ours);
            snprintf(m_ours, sizeof m_ours, "%.1f", peak);
            if (f > 0) snprintf(f_ours, sizeof f_ours, "%.1f", f / (ours * 1e-3) / 1e12);
        } else snprintf(c_ours, sizeof c_ours, "failed: %s", cell(err));
        if (have) {
            snprintf(c_theirs, sizeof c_theirs, "%.3f", theirs);
            snprintf(m_theirs, sizeof m_theirs, "%.1f", tpeak / 1e6);
            if (f > 0) snprintf(f_theirs, sizeof f_theirs, "%.1f", f / (theirs * 1e-3) / 1e12);
        } else if (*why) snprintf(c_theirs, sizeof c_theirs, "(no torch)");
        else snprintf(c_theirs, sizeof c_theirs, "failed: %s", cell(terr));
        if (rc == 0 && have) {
            double ratio = ours / theirs;
            snprintf(c_ratio, sizeof c_ratio, "%.2f", ratio);
            compared++;
            if (ratio <= 1.10) within++;
            else {
                size_t n = strlen(over);
                snprintf(over + n, sizeof over - n, "%s%s%s", n ? ", " : "", name, s->kind == MATMUL ? (s->tf32 ? " (TF32)" : " (f32)") : "");
            }
        }
        printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, s->tf32 ? "on" : "off", c_ours, c_theirs, c_ratio,
               f_ours, f_theirs, m_ours, m_theirs);
        fflush(stdout);
    }
    free(ms);
    if (compared) printf("\nwithin 10 %% of PyTorch: %d of %d workloads%s%s\n", within, compared, *over ? "; over: " : "", over);
    if (failed) printf("\n%d workload(s) failed on our side (the error is in the row)\n", failed);
    return failed ? 1 : 0;
}
