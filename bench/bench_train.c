/* Training-step benchmarks of issue 8, this library beside PyTorch in the same run:
 *
 *   mlp           MLP 784-256-128-10, batch 128, cross-entropy, SGD momentum 0.9: one step
 *   cnn           conv(1,32,3)-relu-pool-conv(32,64,3)-relu-pool-linear(3136,128)-relu-linear(128,10),
 *                 batch 64 of 28x28, Adam: one step
 *   conv_fwd      conv2d forward, batch 32, 64 -> 64 channels, 56x56, 3x3, padding 1
 *   conv_fwd_bwd  the same, forward and backward (input and weight gradients)
 *   dwconv_fwd_bwd  depthwise conv2d (groups 64, 64 channels, 56x56, 3x3, padding 1, batch
 *                 32), forward and backward
 *   gpt           (issue 25) embedding 256->128, TransformerEncoder of 2 x TransformerEncoderLayer(128,
 *                 4 heads, ff 512, dropout 0, batch_first) under the causal mask
 *                 (generate_square_subsequent_mask), LM head 128->256, cross-entropy, AdamW;
 *                 batch 16 x 64 tokens: one step
 *   lstm          (issue 25) embedding 96->64, LSTM(64, 256, num_layers 2, batch_first), head
 *                 256->96, cross-entropy, Adam, clip_grad_norm_(1.0); batch 32 x 64: one step
 *   attn512       (issue 25) causal attention of [4, 8, 512, 64] float32 q, k, v: forward and
 *                 backward (PyTorch 1.13 has no F.scaled_dot_product_attention: its side is the
 *                 definition in torch ops, as its MultiheadAttention computes it)
 *   attn512_full  the same without the causal mask
 *
 * For each workload and thread count (1, 2): both sides set up and warm up in their own
 * fresh processes (ours: this program with --serve; PyTorch's: bench/bench_train.py
 * --serve under /usr/bin/python3 with the same thread count), then run REPS steps each in
 * 5 alternating rounds; printed: the medians over all steps, the ratio ours / PyTorch
 * (below 1: we are faster) and each round's ratio (the noise). Also our peak tensor
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
#include <sys/types.h>
#include <sys/wait.h>

/* TN_BENCH_CPU=1: the process's CPU time instead of the wall clock (A/B comparisons of one
   thread on a machine others load: waiting for a core is not counted) */
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

typedef struct workload { tn_module *model; tn_optim *opt; tn_tensor *x, *y, *w, *k, *v, *mask; tn_tensor **params; int nparams, kind; } workload;

static void setup(workload *w, const char *name) {
    memset(w, 0, sizeof *w);
    tn_manual_seed(0);
    if (!strcmp(name, "mlp") || !strcmp(name, "cnn")) {
        bool mlp = !strcmp(name, "mlp");
        w->model = mlp ? tn_nn_sequential(tn_nn_linear(784, 256), tn_nn_relu(), tn_nn_linear(256, 128), tn_nn_relu(),
                                          tn_nn_linear(128, 10))
                       : tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                          tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                          tn_nn_flatten(), tn_nn_linear(64 * 7 * 7, 128), tn_nn_relu(), tn_nn_linear(128, 10));
        tn_dict *ps = tn_module_named_parameters(w->model);
        w->opt = mlp ? tn_optim_sgd(tn_dict_values(ps), tn_dict_len(ps), .lr = 0.01, .momentum = 0.9)
                     : tn_optim_adam(tn_dict_values(ps), tn_dict_len(ps), .lr = 1e-3);
        tn_dict_free(ps);
        w->x = mlp ? tn_randn(TN_SHAPE(128, 784), TN_F32) : tn_randn(TN_SHAPE(64, 1, 28, 28), TN_F32);
        w->y = tn_randint(0, 10, TN_SHAPE(mlp ? 128 : 64), TN_I64, NULL);
        w->kind = 0;
    } else if (!strcmp(name, "gpt") || !strcmp(name, "lstm")) {
        const bool gpt = !strcmp(name, "gpt");
        /* a Sequential as the container (one parameter list); step() calls the children */
        w->model = gpt ? tn_nn_sequential(tn_nn_embedding(256, 128),
                                          tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(128, 4, .dim_feedforward = 512, .dropout = 0,
                                                                                                    .batch_first = true), 2),
                                          tn_nn_linear(128, 256))
                       : tn_nn_sequential(tn_nn_embedding(96, 64), tn_nn_lstm(64, 256, .num_layers = 2, .batch_first = true), tn_nn_linear(256, 96));
        tn_dict *ps = tn_module_named_parameters(w->model);
        w->nparams = (int)tn_dict_len(ps);
        w->params = (tn_tensor **)malloc((size_t)w->nparams * sizeof(tn_tensor *));
        for (int i = 0; i < w->nparams; i++) w->params[i] = tn_retain(tn_dict_values(ps)[i]);
        w->opt = gpt ? tn_optim_adamw(tn_dict_values(ps), tn_dict_len(ps), .lr = 1e-3) : tn_optim_adam(tn_dict_values(ps), tn_dict_len(ps), .lr = 1e-3);
        tn_dict_free(ps);
        const int64_t V = gpt ? 256 : 96, N = gpt ? 16 : 32;
        w->x = tn_randint(0, V, TN_SHAPE(N, 64), TN_I64, NULL);
        w->y = tn_randint(0, V, TN_SHAPE(N * 64), TN_I64, NULL);
        w->mask = gpt ? tn_nn_generate_square_subsequent_mask(64, TN_F32) : NULL;
        w->kind = gpt ? 4 : 5;
    } else if (!strncmp(name, "attn512", 7)) {
        w->x = tn_randn(TN_SHAPE(4, 8, 512, 64), TN_F32);
        w->k = tn_randn(TN_SHAPE(4, 8, 512, 64), TN_F32);
        w->v = tn_randn(TN_SHAPE(4, 8, 512, 64), TN_F32);
        tn_requires_grad_(w->x, true); tn_requires_grad_(w->k, true); tn_requires_grad_(w->v, true);
        w->kind = strcmp(name, "attn512") ? 7 : 6;
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
        tn_conv2d(w->x, w->w, NULL, .padding = 1);
        tn_no_grad_end();
    } else if (w->kind == 4 || w->kind == 5) {
        tn_optim_zero_grad(w->opt);
        tn_tensor *h = tn_module_forward(tn_module_child_at(w->model, 0, NULL), w->x);
        h = w->kind == 4 ? tn_nn_transformer_encoder_forward(tn_module_child_at(w->model, 1, NULL), h, .mask = w->mask)
                         : tn_nn_lstm_forward(tn_module_child_at(w->model, 1, NULL), h, NULL, NULL, NULL, NULL);
        tn_tensor *logits = tn_module_forward(tn_module_child_at(w->model, 2, NULL), h);
        tn_backward(tn_cross_entropy(tn_reshape(logits, TN_SHAPE(-1, tn_shape(logits)[2])), w->y));
        if (w->kind == 5) tn_clip_grad_norm_(w->params, w->nparams, 1.0);
        tn_optim_step(w->opt);
    } else if (w->kind == 6 || w->kind == 7) {
        tn_set_grad(w->x, NULL); tn_set_grad(w->k, NULL); tn_set_grad(w->v, NULL);
        tn_backward(tn_sum(tn_scaled_dot_product_attention(w->x, w->k, w->v, .is_causal = w->kind == 6)));
    } else {
        tn_set_grad(w->x, NULL);
        tn_set_grad(w->w, NULL);
        tn_backward(tn_sum(tn_conv2d(w->x, w->w, NULL, .padding = 1, .groups = w->kind == 3 ? 64 : 1)));
    }
    tn_scope_end();
}
static void teardown(workload *w) {
    tn_optim_free(w->opt);
    tn_module_free(w->model);
    tn_release(w->x); tn_release(w->y); tn_release(w->w); tn_release(w->k); tn_release(w->v); tn_release(w->mask);
    for (int i = 0; i < w->nparams; i++) tn_release(w->params[i]);
    free(w->params);
}

/* Each side runs as a server in its own fresh process (so neither inherits the other's heap
   and the memory columns compare like with like): it sets the workload up, warms up, says
   "ready", then answers "run N" with the N step times in ms on one line and "end" with its
   memory figures. The parent alternates blocks of steps between the two, so a change in
   the machine's load hits both sides alike. */
typedef struct side { pid_t pid; FILE *to, *from; } side;
static int side_start(side *c, const char *cmd) {
    int in[2], out[2];
    c->to = c->from = NULL;
    if (pipe(in) || pipe(out)) return -1;
    c->pid = fork();
    if (c->pid < 0) return -1;
    if (c->pid == 0) {
        dup2(in[0], 0); dup2(out[1], 1);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(in[0]); close(out[1]);
    c->to = fdopen(in[1], "w");
    c->from = fdopen(out[0], "r");
    char buf[64];
    if (!c->to || !c->from || !fgets(buf, sizeof buf, c->from) || strncmp(buf, "ready", 5)) return -1;
    return 0;
}
/* n step times from the side into t; 0 or -1 */
static int side_run(side *c, int n, double *t) {
    static char line[1 << 16];
    fprintf(c->to, "run %d\n", n);
    fflush(c->to);
    if (!fgets(line, sizeof line, c->from)) return -1;
    char *p = line, *e;
    for (int i = 0; i < n; i++, p = e) {
        t[i] = strtod(p, &e);
        if (e == p) return -1;
    }
    return 0;
}
/* "end": the side's memory line into buf, then wait for it */
static void side_end(side *c, char *buf, int size) {
    buf[0] = 0;
    if (c->to) { fputs("end\n", c->to); fflush(c->to); }
    if (c->from && !fgets(buf, size, c->from)) buf[0] = 0;
    if (c->to) fclose(c->to);
    if (c->from) fclose(c->from);
    if (c->pid > 0) waitpid(c->pid, NULL, 0);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
/* Idle OpenMP workers of the side that just ran keep spinning for a while (libgomp, and
   OpenBLAS's ~0.1 s) and would take a core from the other side: pause between blocks. */
static void settle(void) {
    struct timespec ts = {0, 150000000L};
    nanosleep(&ts, NULL);
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

/* One workload at one thread count, in this process, as a server (see side_start): at
   "end", prints the peak tensor MB, the peak RSS MB the workload added (VmHWM over its run
   minus VmRSS before its setup) and the process's peak. */
static void serve(const char *name, int threads) {
    tn_set_num_threads(threads);
    reset_hwm();
    double rss0 = rss_mb("VmRSS");
    workload w;
    setup(&w, name);
    step(&w); step(&w);                       /* warm-up (allocator cache, state) */
    tn_memory_stats_reset_peak();
    int64_t base = tn_memory_stats_get().live_bytes;
    printf("ready\n");
    fflush(stdout);
    char cmd[64];
    int n;
    while (fgets(cmd, sizeof cmd, stdin) && sscanf(cmd, "run %d", &n) == 1 && n > 0) {
        for (int r = 0; r < n; r++) { double t0 = now_ms(); step(&w); printf("%s%.4f", r ? " " : "", now_ms() - t0); }
        printf("\n");
        fflush(stdout);
    }
    printf("%.2f %.2f %.2f\n", (double)(tn_memory_stats_get().peak_bytes - base) / 1e6, rss_mb("VmHWM") - rss0, rss_mb("VmHWM"));
    fflush(stdout);
    teardown(&w);
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--serve")) {   /* a child: our side of one workload */
        serve(argv[2], atoi(argv[3]));
        return 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    const char *only = argc > 2 && strcmp(argv[2], "all") ? argv[2] : NULL;
    int only_threads = argc > 3 ? atoi(argv[3]) : 0, with_torch = !(argc > 4 && !strcmp(argv[4], "notorch"));
    if (reps < 1) reps = 1;
    const char *names[] = {"mlp", "cnn", "conv_fwd", "conv_fwd_bwd", "dwconv_fwd_bwd", "gpt", "lstm", "attn512", "attn512_full"};
    char self[400] = {0};   /* this program, run again per workload */
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) snprintf(self, sizeof self, "%s", argv[0]);
    printf("| workload | threads | tensor.h ms | PyTorch ms | ratio | ratio per round | tensor.h peak tensor MB | tensor.h peak RSS MB | PyTorch peak RSS MB "
           "| RSS ratio | tensor.h process MB | PyTorch process MB | process ratio |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const int rounds = reps < 5 ? reps : 5;
    double *mine = (double *)malloc((size_t)reps * sizeof(double)), *theirs = (double *)malloc((size_t)reps * sizeof(double));
    for (int t = 1; t <= 2; t++) {
        if (only_threads > 0 && t != only_threads) continue;
        for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
            if (only && strcmp(only, names[k])) continue;
            char cmd[600], mem[2][128], rr[160] = "";
            side s[2];   /* 0: ours, 1: PyTorch */
            snprintf(cmd, sizeof cmd, "exec '%s' --serve %s %d", self, names[k], t);
            int ok0 = side_start(&s[0], cmd) == 0, ok1 = 0;
            if (ok0 && with_torch) {
                snprintf(cmd, sizeof cmd, "exec env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=%d /usr/bin/python3 bench/bench_train.py --serve %s %d 2>/dev/null", t, names[k], t);
                ok1 = side_start(&s[1], cmd) == 0;
            }
            /* rounds of blocks, the order alternating: ours first in even rounds */
            for (int r = 0, done = 0; ok0 && r < rounds; r++) {
                int n = reps * (r + 1) / rounds - done;
                for (int j = 0; j < 2; j++) {
                    int who = (r + j) % 2;
                    if (who == 1 && !ok1) continue;
                    settle();
                    if (side_run(&s[who], n, (who ? theirs : mine) + done)) { if (who) ok1 = 0; else ok0 = 0; }
                }
                if (ok0 && ok1) {   /* this round's ratio of medians */
                    double a[4096], b[4096];
                    int m = n < 4096 ? n : 4096;
                    memcpy(a, mine + done, (size_t)m * sizeof(double));
                    memcpy(b, theirs + done, (size_t)m * sizeof(double));
                    snprintf(rr + strlen(rr), sizeof rr - strlen(rr), "%s%.2f", r ? " " : "", median(a, m) / median(b, m));
                }
                done += n;
            }
            side_end(&s[0], mem[0], sizeof mem[0]);
            if (with_torch) side_end(&s[1], mem[1], sizeof mem[1]);
            double peak = 0, rss = 0, proc = 0, tmb = -1, tproc = -1;
            if (!ok0 || sscanf(mem[0], "%lf %lf %lf", &peak, &rss, &proc) != 3) {
                printf("| %s | %d | (failed) | | | | | | | | | | |\n", names[k], t);
                continue;
            }
            double ours = median(mine, reps);
            if (ok1 && sscanf(mem[1], "%lf %lf", &tmb, &tproc) == 2) {
                double th = median(theirs, reps);
                printf("| %s | %d | %.2f | %.2f | %.2f | %s | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", names[k], t, ours, th, ours / th, rr, peak, rss,
                       tmb, tmb > 0 ? rss / tmb : 0, proc, tproc, tproc > 0 ? proc / tproc : 0);
            } else
                printf("| %s | %d | %.2f | (no torch) | | | %.1f | %.1f | | | %.1f | | |\n", names[k], t, ours, peak, rss, proc);
            fflush(stdout);
        }
    }
    free(mine);
    free(theirs);
    return 0;
}
