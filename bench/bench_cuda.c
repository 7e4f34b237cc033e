/* GPU benchmarks of issues 7 and 23, this library beside PyTorch on the same GPU in the same run:
 *
 *   matmul N      f32 (N x N) @ (N x N), N = 1024, 2048, 4096, 8192, TF32 off and on: TFLOP/s
 *   matmul N bf16 the same in bfloat16 (cuBLAS's bf16 GEMM, float32 accumulation), N = 8192
 *                 and 16384: issue 23's target is >= 70 % of the card's dense bf16 peak
 *   conv_fwd      conv2d forward, batch 32, 64 -> 64 channels, 56x56, 3x3, padding 1
 *   conv_fwd_bwd  the same, forward and backward (input and weight gradients)
 *   mlp           bench_train's MLP 784-256-128-10, batch 128, cross-entropy, SGD momentum 0.9: one step
 *   cnn           bench_train's two-conv CNN, batch 64 of 28x28, Adam: one step
 *   gpt           a GPT-style training step: token + learned position embeddings (vocab 8192,
 *                 d 512), 4 pre-norm TransformerEncoderLayers (8 heads, ff 2048, GELU, dropout
 *                 0, batch_first) under the causal mask, final LayerNorm, LM head without
 *                 bias, cross-entropy, AdamW; batch 16 x 256 tokens, float32
 *   gpt composite attention   the same with TN_CUDA_FUSED_ATTENTION=0 on our side (the
 *                 attention through matmul + softmax, its scores in memory; PyTorch's side
 *                 unchanged): what the fused attention kernels gain or lose; a diagnostic,
 *                 its ratio shown and not counted in the "within 10 %" line
 *   gpt bf16      the same under bf16 autocast (torch.autocast("cuda", torch.bfloat16); ours
 *                 between tn_autocast_begin(TN_CUDA, .dtype = TN_BF16) and tn_autocast_end())
 *   graph replay  a table of its own after the comparison: bench_jit's CNN and transformer
 *                 forward at batch 1 and 64, eager beside the traced graph replayed on the
 *                 device plan and captured as a CUDA graph (ours only; issue 22)
 *
 * First all of ours, then all of PyTorch's in ONE process (bench/bench_cuda.py run ...:
 * one CUDA context, one cuBLAS/cuDNN start-up, as a PyTorch program has), with the
 * interpreter from TN_BENCH_PYTHON, else python3 on the PATH. Each side: warm-up, then REPS
 * repetitions of INNER steps between two synchronizes (a single step of the smaller
 * workloads is shorter than a launch-and-wait round trip; INNER is chosen from our first
 * timed step so a repetition lasts about 10 ms, and PyTorch runs the same INNER), the
 * median ms per step, and the ratio ours / PyTorch (below 1: we are faster; the target is
 * at most 1.10). Peak GPU memory over the timed steps, everything resident included:
 * tn_cuda_memory_stats().peak_allocated beside torch.cuda.max_memory_allocated().
 * TF32: matmul rows set both libraries' switches off, then on; every other row keeps
 * PyTorch's defaults on both sides (matmul TF32 off, cuDNN convolution TF32 on). The last
 * column says which path our library entries took per step (tn_cuda_stats: cuDNN, or the
 * fallback: im2col + cuBLAS, the composites).
 *
 * TN_BENCH_ONLY=gpt,cnn runs only the workloads so named; TN_BENCH_PYTHON=none leaves out
 * PyTorch's side. Built as build/cuda/libbench_cuda.so (main as tn_bench_main), it runs
 * inside a profiler's process: tools/gpu_profile.py.
 *
 * Without a GPU it prints why in one line and exits 0. Without PyTorch with CUDA under the
 * interpreter it prints our figures and why the PyTorch column is missing.
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
#define TARGET_REP_MS 10.0

/* the interpreter with PyTorch: TN_BENCH_PYTHON, else python3 on the PATH (popen's shell) */
static const char *python(void) {
    const char *p = getenv("TN_BENCH_PYTHON");
    return p && *p ? p : "python3";
}

/* TN_BENCH_ONLY=gpt,cnn: only the workloads whose names contain one of these (both sides);
   unset: all */
static bool selected(const char *name) {
    const char *f = getenv("TN_BENCH_ONLY");
    if (!f || !*f) return true;
    for (const char *p = f; *p;) {
        size_t n = strcspn(p, ",");
        char part[64];
        if (n && n < sizeof part) {
            memcpy(part, p, n);
            part[n] = 0;
            if (strstr(name, part)) return true;
        }
        p += n + (p[n] == ',');
    }
    return false;
}

#include "bench_util.h"

enum { MATMUL, CONV_FWD, CONV_FWD_BWD, MLP, CNN, GPT };
/* arg: the workload as bench_cuda.py reads it; tf32: matmul rows' switches (else PyTorch's
   defaults); bf16: under bf16 autocast; n: matmul's size, gpt's 1 = our fused attention off */
typedef struct spec { const char *arg; int kind; int64_t n; bool tf32, bf16; } spec;
typedef struct workload { spec s; tn_module *model; tn_optim *opt; tn_tensor *x, *y, *w, *pos, *mask; } workload;
enum { GPT_V = 8192, GPT_D = 512, GPT_H = 8, GPT_FF = 2048, GPT_L = 4, GPT_T = 256, GPT_B = 16 };

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
    tn_set_tf32(s->kind == MATMUL && s->tf32);
    tn_set_cudnn_tf32(s->kind != MATMUL || s->tf32);   /* PyTorch's default (on) outside the matmul rows */
    if (s->kind == MATMUL) {   /* bf16: the operands in bfloat16 */
        w->x = on_gpu(tn_randn(TN_SHAPE(s->n, s->n), TN_F32));
        w->w = on_gpu(tn_randn(TN_SHAPE(s->n, s->n), TN_F32));
        if (s->bf16 && w->x && w->w) {
            tn_tensor *x = tn_to_dtype(w->x, TN_BF16), *y = tn_to_dtype(w->w, TN_BF16);
            tn_release(w->x);
            tn_release(w->w);
            w->x = x;
            w->w = y;
        }
        return w->x && w->w ? 0 : -1;
    }
    if (s->kind == CONV_FWD || s->kind == CONV_FWD_BWD) {
        w->x = on_gpu(tn_randn(TN_SHAPE(32, 64, 56, 56), TN_F32));
        w->w = on_gpu(tn_randn(TN_SHAPE(64, 64, 3, 3), TN_F32));
        if (!w->x || !w->w) return -1;
        return tn_requires_grad_(w->x, true) || tn_requires_grad_(w->w, true) ? -1 : 0;
    }
    if (s->kind == GPT) {   /* a Sequential as the container (one parameter list); step() calls the children */
        w->model = tn_nn_sequential(tn_nn_embedding(GPT_V, GPT_D), tn_nn_embedding(GPT_T, GPT_D),
                                    tn_nn_transformer_encoder(tn_nn_transformer_encoder_layer(GPT_D, GPT_H, .dim_feedforward = GPT_FF, .dropout = 0,
                                                                                              .activation = TN_ACTIVATION_GELU, .batch_first = true,
                                                                                              .norm_first = true), GPT_L, .norm = tn_nn_layer_norm(TN_SHAPE(GPT_D))),
                                    tn_nn_linear(GPT_D, GPT_V, .bias = false));
        if (!w->model || tn_module_to(w->model, TN_CUDA) != 0) return -1;
        tn_dict *ps = tn_module_named_parameters(w->model);
        w->opt = tn_optim_adamw(tn_dict_values(ps), tn_dict_len(ps), .lr = 3e-4);
        tn_dict_free(ps);
        w->x = on_gpu(tn_randint(0, GPT_V, TN_SHAPE(GPT_B, GPT_T), TN_I64, NULL));
        w->y = on_gpu(tn_randint(0, GPT_V, TN_SHAPE(GPT_B * GPT_T), TN_I64, NULL));
        w->pos = on_gpu(tn_arange(0, GPT_T, 1, TN_I64));
        w->mask = on_gpu(tn_nn_generate_square_subsequent_mask(GPT_T, TN_F32));
        return w->opt && w->x && w->y && w->pos && w->mask ? 0 : -1;
    }
    bool mlp = s->kind == MLP;
    w->model = mlp ? tn_nn_sequential(tn_nn_linear(784, 256), tn_nn_relu(), tn_nn_linear(256, 128), tn_nn_relu(),
                                      tn_nn_linear(128, 10))
                   : tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_flatten(), tn_nn_linear(64 * 7 * 7, 128), tn_nn_relu(), tn_nn_linear(128, 10));
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
    /* bf16: the step under autocast, as torch.autocast("cuda", dtype=torch.bfloat16) (a
       matmul row's operands are bfloat16 already) */
    const bool amp = w->s.bf16 && w->s.kind != MATMUL;
    if (amp && tn_autocast_begin(TN_CUDA, .dtype = TN_BF16)) { tn_scope_end(); return -1; }
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
    case GPT: {
        tn_optim_zero_grad(w->opt);
        tn_tensor *h = tn_add(tn_module_forward(tn_module_child_at(w->model, 0, NULL), w->x), tn_module_forward(tn_module_child_at(w->model, 1, NULL), w->pos));
        h = h ? tn_nn_transformer_encoder_forward(tn_module_child_at(w->model, 2, NULL), h, .mask = w->mask, .is_causal = true) : NULL;
        tn_tensor *logits = h ? tn_module_forward(tn_module_child_at(w->model, 3, NULL), h) : NULL;
        tn_tensor *loss = logits ? tn_cross_entropy(tn_reshape(logits, TN_SHAPE(-1, GPT_V)), w->y) : NULL;
        rc = loss && tn_backward(loss) == 0 ? tn_optim_step(w->opt) : -1;
        break;
    }
    default: {
        tn_optim_zero_grad(w->opt);
        tn_tensor *out = tn_module_forward(w->model, w->x);
        tn_tensor *loss = out ? tn_cross_entropy(out, w->y) : NULL;
        rc = loss && tn_backward(loss) == 0 ? tn_optim_step(w->opt) : -1;
    }
    }
    if (amp) tn_autocast_end();
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
    tn_release(w->x); tn_release(w->y); tn_release(w->w); tn_release(w->pos); tn_release(w->mask);
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
    if (access(SCRIPT, R_OK) != 0) { snprintf(why, nwhy, "%s not found (run from the repository root)", SCRIPT); return; }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' " SCRIPT " probe 2>&1", python());
    FILE *p = popen(cmd, "r");
    char line[512] = "";
    if (!strcmp(python(), "none")) { snprintf(why, nwhy, "not run (TN_BENCH_PYTHON=none)"); return; }
    bool got = p && fgets(line, sizeof line, p);
    int rc = p ? pclose(p) : -1;
    chomp(line);
    if (!got || !*line || (rc != 0 && strncmp(line, "ok ", 3)))
        snprintf(why, nwhy, "%s could not run %s probe (%s; set TN_BENCH_PYTHON to an interpreter with PyTorch)", python(), SCRIPT, *line ? line : "no output");
    else if (!strncmp(line, "ok ", 3)) snprintf(desc, ndesc, "%s", line + 3);
    else snprintf(why, nwhy, "%s", line);
}

/* a table cell: the message with the characters that would break a markdown row replaced */
static const char *cell(char *s) {
    for (char *c = s; *c; c++)
        if (*c == '|' || *c == '\n') *c = '/';
    return s;
}

/* one workload's figures on each side */
typedef struct row {
    char name[40], err[600], terr[400], paths[240];
    int inner;
    double ours, peak, theirs, tpeak;   /* ms per step (-1: none) and peak bytes */
} row;

/* the per-step path counts of our library entries between two snapshots, as "conv 3 cuDNN, 2 fallback; ..." */
static void paths_cell(char *out, size_t n, const tn_cuda_stats *a, const tn_cuda_stats *b, double steps) {
    const struct { const char *name, *lib; int64_t ran, fell; } e[5] = {
        {"conv", "cuDNN", b->num_cudnn_conv - a->num_cudnn_conv, b->num_conv_fallbacks - a->num_conv_fallbacks},
        {"pool", "cuDNN", b->num_cudnn_pool - a->num_cudnn_pool, b->num_pool_fallbacks - a->num_pool_fallbacks},
        {"batch norm", "cuDNN", b->num_cudnn_batch_norm - a->num_cudnn_batch_norm, b->num_batch_norm_fallbacks - a->num_batch_norm_fallbacks},
        {"attention", "fused", b->num_fused_attention - a->num_fused_attention, b->num_attention_fallbacks - a->num_attention_fallbacks},
        {"gemm", "cuBLASLt epilogue", b->num_gemm_epilogue - a->num_gemm_epilogue, b->num_gemm_epilogue_fallbacks - a->num_gemm_epilogue_fallbacks},
    };
    size_t k = 0;
    *out = 0;
    for (int i = 0; i < 5; i++) {
        if (!e[i].ran && !e[i].fell) continue;
        k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s%s %.3g %s", k ? "; " : "", e[i].name, (double)e[i].ran / steps, e[i].lib);
        if (e[i].fell) k += (size_t)snprintf(out + k, k < n ? n - k : 0, ", %.3g fallback", (double)e[i].fell / steps);
    }
    int64_t retries = b->num_cudnn_algo_retries - a->num_cudnn_algo_retries;
    if (retries && k < n) snprintf(out + k, n - k, "; %lld failed algorithms", (long long)retries);
    if (!*out) snprintf(out, n, "-");
}

/* PyTorch's side: every workload in one process, one "result NAME MS PEAK" or "error NAME WHY"
   line each; rows without one get the process's last line as the reason */
static void torch_run_all(const spec *specs, row *rows, int n, int reps) {
    size_t cap = 256 + (size_t)n * 64, len;
    char *cmd = (char *)malloc(cap), line[1024], last[400] = "no output";
    if (!cmd) return;
    len = (size_t)snprintf(cmd, cap, "'%s' " SCRIPT " run %d", python(), reps);
    for (int k = 0; k < n; k++)
        len += (size_t)snprintf(cmd + len, cap - len, " %s:%d:%d:%d", specs[k].arg, specs[k].tf32 ? 1 : 0, specs[k].bf16 ? 1 : 0, rows[k].inner);
    snprintf(cmd + len, cap - len, " 2>&1");
    FILE *p = popen(cmd, "r");
    while (p && fgets(line, sizeof line, p)) {
        chomp(line);
        char name[64];
        double ms, peak;
        int at = -1, used = 0;
        if (sscanf(line, "result %63s %lf %lf", name, &ms, &peak) == 3) {
            at = atoi(name);
            if (at >= 0 && at < n) { rows[at].theirs = ms; rows[at].tpeak = peak; }
        } else if (sscanf(line, "error %63s %n", name, &used) == 1 && used > 0) {
            at = atoi(name);
            if (at >= 0 && at < n) snprintf(rows[at].terr, sizeof rows[at].terr, "%s", line + used);
        } else if (*line) snprintf(last, sizeof last, "%s", line);
    }
    if (p) pclose(p);
    free(cmd);
    for (int k = 0; k < n; k++)
        if (rows[k].inner && rows[k].theirs < 0 && !*rows[k].terr) snprintf(rows[k].terr, sizeof rows[k].terr, "%s", last);
}

/* tools/gpu_profile.py's hooks (libbench_cuda.so): called around each workload's timed
   repetitions, so its profiler sees the steps and nothing of the set-up */
typedef void (*tn_bench_hook)(const char *workload, int steps);
/* ---- graph replays on the GPU (issue 22): bench_jit's CNN and transformer forward under
   no_grad in eval mode at batch 1 and 64: eager, the traced graph replayed uncaptured (its
   device plan: TN_CUDA_GRAPHS=0) and replayed captured (a CUDA graph launched, where the
   capture held: the row counts launches, captures and failed captures). ms per forward, the
   median of REPS repetitions of INNER calls between two synchronizes. */
static tn_module *graph_model(bool cnn) {
    tn_manual_seed(0);
    if (cnn)
        return tn_nn_sequential(tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_batch_norm2d(32), tn_nn_relu(), tn_nn_max_pool2d(2),
                                tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_batch_norm2d(64), tn_nn_relu(), tn_nn_max_pool2d(2),
                                tn_nn_flatten(), tn_nn_linear(64 * 7 * 7, 128), tn_nn_relu(), tn_nn_linear(128, 10));
    return tn_nn_sequential(tn_nn_transformer_encoder_layer(128, 4, .dim_feedforward = 512, .batch_first = true),
                            tn_nn_transformer_encoder_layer(128, 4, .dim_feedforward = 512, .batch_first = true));
}
/* median ms per call of mode 0 (eager), 1 (replay) on x; -1 on failure */
static double graph_time(tn_module *m, tn_graph *g, tn_tensor *x, int mode, int reps, int inner) {
    double *v = (double *)malloc((size_t)reps * sizeof(double)), med = -1;
    if (!v) return -1;
    int rc = 0;
    for (int r = -2; r < reps && rc == 0; r++) {   /* two warm-up repetitions: the plan, the capture */
        if (tn_cuda_synchronize()) { rc = -1; break; }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < inner && rc == 0; i++) {
            tn_scope_begin();
            if (!(mode ? tn_graph_forward(g, x) : tn_module_forward(m, x))) rc = -1;
            tn_scope_end();
        }
        if (tn_cuda_synchronize()) rc = -1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (r >= 0) v[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6) / inner;
    }
    if (rc == 0) { qsort(v, (size_t)reps, sizeof(double), cmp_double); med = v[reps / 2]; }
    free(v);
    return med;
}
static void graph_rows(int reps) {
    printf("\n## graph replay on the GPU (tn_graph_run: eager, replay on the device plan, captured replay)\n\n"
           "| forward | batch | eager ms | replay ms | captured ms | captured: launches / captures / failures | steady replay storages | fused chains per replay (kernels) |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < 2; c++)
        for (int b = 0; b < 2; b++) {
            const int64_t batch = b ? 64 : 1;
            const int inner = b ? 10 : 50;
            tn_scope_begin();
            tn_module *m = graph_model(c == 0);
            tn_module_eval(m);
            tn_tensor *x = tn_module_to(m, TN_CUDA) ? NULL
                           : tn_to(c == 0 ? tn_randn(TN_SHAPE(batch, 1, 28, 28), TN_F32) : tn_randn(TN_SHAPE(batch, 32, 128), TN_F32), TN_CUDA);
            tn_graph *g = x ? tn_jit_trace_module(m, x) : NULL;
            if (!g) {
                printf("| %s | %lld | failed: %s | | | | | |\n", c == 0 ? "cnn" : "transformer", (long long)batch, cell((char *)tn_last_error()));
                tn_module_free(m);
                tn_scope_end();
                continue;
            }
            tn_no_grad_begin();
            const double eager = graph_time(m, g, x, 0, reps, inner);
            setenv("TN_CUDA_GRAPHS", "0", 1);
            const double replay = graph_time(m, g, x, 1, reps, inner);
            unsetenv("TN_CUDA_GRAPHS");
            const tn_cuda_stats s0 = tn_cuda_memory_stats();
            const double captured = graph_time(m, g, x, 1, reps, inner);
            const tn_cuda_stats s1 = tn_cuda_memory_stats();
            tn_scope_begin();
            const int64_t a0 = tn_memory_allocations();
            tn_graph_forward(g, x);
            const int64_t allocs = tn_memory_allocations() - a0;
            tn_scope_end();
            setenv("TN_CUDA_GRAPHS", "0", 1);   /* an uncaptured replay: its elementwise chains run as one kernel each (tn_backend.fused_elementwise) */
            const tn_cuda_stats f0 = tn_cuda_memory_stats();
            tn_scope_begin();
            tn_graph_forward(g, x);
            tn_scope_end();
            const tn_cuda_stats f1 = tn_cuda_memory_stats();
            unsetenv("TN_CUDA_GRAPHS");
            tn_no_grad_end();
            printf("| %s | %lld | %.3f | %.3f | %.3f | %lld / %lld / %lld | %lld | %lld |\n", c == 0 ? "cnn" : "transformer", (long long)batch, eager, replay, captured,
                   (long long)(s1.num_graph_launches - s0.num_graph_launches), (long long)(s1.num_graph_captures - s0.num_graph_captures),
                   (long long)(s1.num_graph_capture_failures - s0.num_graph_capture_failures), (long long)allocs,
                   (long long)(f1.num_fused_elementwise - f0.num_fused_elementwise));
            tn_graph_free(g);
            tn_module_free(m);
            tn_scope_end();
        }
}

static tn_bench_hook hook_begin, hook_end;
void tn_bench_set_profile_hooks(tn_bench_hook begin, tn_bench_hook end);
void tn_bench_set_profile_hooks(tn_bench_hook begin, tn_bench_hook end) { hook_begin = begin; hook_end = end; }

#ifndef TN_BENCH_MAIN
#define TN_BENCH_MAIN main
#endif
int TN_BENCH_MAIN(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    if (reps < 1) reps = 1;
    if (!tn_cuda_is_available()) {
        printf("bench_cuda: skipped, no usable GPU: %s\n", tn_cuda_unavailable_reason());
        return 0;
    }
    char dev[300], why[700], desc[512];
    struct cudaDeviceProp prop;
    int d = tn_cuda_current_device();
    if (d >= 0 && cudaGetDeviceProperties(&prop, d) == cudaSuccess)
        snprintf(dev, sizeof dev, "%s (sm_%d%d, %.0f GB)", prop.name, prop.major, prop.minor, (double)prop.totalGlobalMem / 1e9);
    else snprintf(dev, sizeof dev, "CUDA device %d", d);
    probe_torch(why, sizeof why, desc, sizeof desc);

    static const spec specs[] = {
        {"matmul_1024", MATMUL, 1024, false, false}, {"matmul_1024", MATMUL, 1024, true, false},
        {"matmul_2048", MATMUL, 2048, false, false}, {"matmul_2048", MATMUL, 2048, true, false},
        {"matmul_4096", MATMUL, 4096, false, false}, {"matmul_4096", MATMUL, 4096, true, false},
        {"matmul_8192", MATMUL, 8192, false, false}, {"matmul_8192", MATMUL, 8192, true, false},
        {"matmul_8192", MATMUL, 8192, false, true},  {"matmul_16384", MATMUL, 16384, false, true},
        {"conv_fwd", CONV_FWD, 0, false, false},     {"conv_fwd_bwd", CONV_FWD_BWD, 0, false, false},
        {"mlp", MLP, 0, false, false},               {"cnn", CNN, 0, false, false},
        {"gpt", GPT, 0, false, false},               {"gpt", GPT, 0, false, true},
        {"gpt", GPT, 1, false, false},   /* after bf16, whose INNER is the row before's */
    };
    enum { NSPECS = (int)(sizeof specs / sizeof specs[0]) };
    row rows[NSPECS];
    int failed = 0, compared = 0, within = 0;
    char over[512] = "";
    double *ms = (double *)malloc((size_t)reps * sizeof(double));
    if (!ms) return 1;
    /* ours, every workload: warm-up (cuBLAS handle, allocator cache, optimizer state), one
       timed step to choose INNER, then the timed repetitions */
    for (int k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        row *r = &rows[k];
        memset(r, 0, sizeof *r);
        r->ours = r->theirs = -1;
        r->inner = 1;
        if (s->kind == MATMUL) snprintf(r->name, sizeof r->name, "matmul %lld%s", (long long)s->n, s->bf16 ? " bf16" : "");
        else snprintf(r->name, sizeof r->name, "%s%s%s", s->arg, s->bf16 ? " bf16" : "", s->kind == GPT && s->n == 1 ? " composite attention" : "");
        if (!selected(r->name)) { r->inner = 0; continue; }   /* PyTorch's side skips INNER 0 */
        if (s->kind == GPT && s->n == 1) setenv("TN_CUDA_FUSED_ATTENTION", "0", 1);   /* tensor_cuda.cu's switch, read per call */
        workload w;
        int rc = setup(&w, s);
        for (int i = 0; i < 3 && rc == 0; i++) rc = step(&w);
        if (rc == 0) {
            double one = timed(&w, 1, &rc);
            r->inner = one > 0 ? (int)ceil(TARGET_REP_MS / one) : 1000;
            if (r->inner > 1000) r->inner = 1000;
        }
        if (rc == 0) {
            tn_cuda_reset_peak_memory_stats();
            tn_cuda_stats a = tn_cuda_memory_stats();
            if (hook_begin) hook_begin(r->name, reps * r->inner);
            for (int i = 0; i < reps && rc == 0; i++) ms[i] = timed(&w, r->inner, &rc);
            if (hook_end) hook_end(r->name, reps * r->inner);
            tn_cuda_stats b = tn_cuda_memory_stats();
            qsort(ms, (size_t)reps, sizeof(double), cmp_double);
            r->ours = ms[reps / 2];
            r->peak = (double)b.peak_allocated;
            if (s->kind == MATMUL) snprintf(r->paths, sizeof r->paths, "cuBLAS");
            else paths_cell(r->paths, sizeof r->paths, &a, &b, (double)reps * r->inner);
        }
        if (rc != 0) {
            snprintf(r->err, sizeof r->err, "%s", tn_last_error());
            r->ours = -1;
            failed++;
        }
        teardown(&w);   /* returns our cached blocks: PyTorch's process runs next on the same GPU */
        unsetenv("TN_CUDA_FUSED_ATTENTION");
    }
    free(ms);
    if (!*why) torch_run_all(specs, rows, NSPECS, reps);

    printf("## bench_cuda on %s\n\n", dev);
    if (*why) printf("PyTorch column missing: %s\n\n", why);
    else printf("beside %s, all its workloads in one process; median of %d repetitions; ratio = ours / PyTorch (target <= 1.10); "
                "TF32: matmul rows as marked on both sides, other rows PyTorch's defaults (matmul off, cuDNN on)\n\n", desc, reps);
    printf("| workload | TF32 | tensor.h ms | PyTorch ms | ratio | tensor.h TFLOP/s | PyTorch TFLOP/s | tensor.h peak MB | PyTorch peak MB | our path per step |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < NSPECS; k++) {
        const spec *s = &specs[k];
        row *r = &rows[k];
        if (!r->inner) continue;   /* not selected (TN_BENCH_ONLY) */
        double f = flops(s);
        char c_ours[700], c_theirs[500], c_ratio[32] = "", f_ours[32] = "", f_theirs[32] = "", m_ours[32] = "", m_theirs[32] = "";
        if (r->ours >= 0) {
            snprintf(c_ours, sizeof c_ours, "%.3f", r->ours);
            snprintf(m_ours, sizeof m_ours, "%.1f", r->peak / 1e6);
            if (f > 0) snprintf(f_ours, sizeof f_ours, "%.1f", f / (r->ours * 1e-3) / 1e12);
        } else snprintf(c_ours, sizeof c_ours, "failed: %s", cell(r->err));
        if (r->theirs >= 0) {
            snprintf(c_theirs, sizeof c_theirs, "%.3f", r->theirs);
            snprintf(m_theirs, sizeof m_theirs, "%.1f", r->tpeak / 1e6);
            if (f > 0) snprintf(f_theirs, sizeof f_theirs, "%.1f", f / (r->theirs * 1e-3) / 1e12);
        } else if (*why) snprintf(c_theirs, sizeof c_theirs, "(no torch)");
        else snprintf(c_theirs, sizeof c_theirs, "failed: %s", cell(r->terr));
        /* the composite-attention row measures what our fused kernels gain, beside PyTorch's
           fused ones: its ratio is shown, not counted against the target */
        const bool diagnostic = s->kind == GPT && s->n == 1;
        if (r->ours >= 0 && r->theirs > 0) {
            double ratio = r->ours / r->theirs;
            snprintf(c_ratio, sizeof c_ratio, "%.2f%s", ratio, diagnostic ? " (diagnostic)" : "");
            if (!diagnostic) {
                compared++;
                if (ratio <= 1.10) within++;
                else {
                    size_t n = strlen(over);
                    snprintf(over + n, sizeof over - n, "%s%.39s%s", n ? ", " : "", r->name, s->kind == MATMUL && !s->bf16 ? (s->tf32 ? " (TF32)" : " (f32)") : "");
                }
            }
        }
        printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->name, s->kind == MATMUL && !s->bf16 ? (s->tf32 ? "on" : "off") : "default", c_ours,
               c_theirs, c_ratio, f_ours, f_theirs, m_ours, m_theirs, r->paths[0] ? r->paths : "");
    }
    if (compared) printf("\nwithin 10 %% of PyTorch: %d of %d workloads%s%s (gpt composite attention: a diagnostic, not counted)\n", within, compared,
                         *over ? "; over: " : "", over);
    if (failed) printf("\n%d workload(s) failed on our side (the error is in the row)\n", failed);
    if (selected("graph replay")) graph_rows(reps);
    return failed ? 1 : 0;
}
