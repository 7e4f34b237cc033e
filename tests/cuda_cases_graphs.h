/* cuda_cases_graphs.h — graph replays on the GPU (issue 22): the static memory plan on the
 * device and the CUDA-graph capture of a steady replay. Included by test_cuda_graphs.c (the
 * checking stand-in, whose graph entries record and replay the backend calls) and by
 * test_cuda.c (a real GPU). Include after tn_test.h.
 *
 * For an MLP, a CNN and a transformer encoder layer traced on "cuda": under no_grad a
 * replay equals eager; a steady replay allocates no storage and makes no transfer or host
 * synchronisation; where the backend has graph entries (and TN_CUDA_GRAPHS is not 0) the
 * steady replay is captured once and launched after: the launch equals the uncaptured
 * replay bit for bit, new input values give the new outputs, a held output is never
 * overwritten, a changed batch captures anew. */
#ifndef CUDA_CASES_GRAPHS_H
#define CUDA_CASES_GRAPHS_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>   /* getpid */

/* max |a - b| over a device result and a device or CPU reference; +inf on NULL or shapes */
static double cg_maxdiff(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || tn_ndim(a) != tn_ndim(b) || memcmp(tn_shape(a), tn_shape(b), (size_t)tn_ndim(a) * sizeof(int64_t))) return INFINITY;
    if (tn_numel(a) == 0) return 0;
    tn_tensor *d = tn_sub(tn_to_dtype(tn_to(a, TN_CPU), TN_F64), tn_to_dtype(tn_to(b, TN_CPU), TN_F64));
    return d ? tn_item(tn_max(tn_abs(d))) : INFINITY;
}
static tn_module *cg_model(int which) {
    if (which == 0) return tn_nn_sequential(tn_nn_linear(32, 64), tn_nn_relu(), tn_nn_linear(64, 64), tn_nn_gelu(), tn_nn_linear(64, 10));
    if (which == 1)
        return tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_batch_norm2d(8), tn_nn_relu(), tn_nn_max_pool2d(2),
                                tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_batch_norm2d(16), tn_nn_relu(), tn_nn_avg_pool2d(2),
                                tn_nn_flatten(), tn_nn_dropout(.p = 0.25), tn_nn_linear(16 * 7 * 7, 32), tn_nn_relu(), tn_nn_linear(32, 10));
    return tn_nn_transformer_encoder_layer(32, 4, .dim_feedforward = 64, .batch_first = true);
}
static const int64_t cg_shape[3][4] = {{8, 32}, {4, 1, 28, 28}, {2, 10, 32}};
static const int cg_ndim[3] = {2, 4, 3};
static const char *const cg_name[3] = {"MLP", "CNN", "transformer encoder"};
/* whether replays get captured: graph entries that capture (an empty capture is tried;
   tensor_cuda.cu declines while its kernels run on the legacy stream) and not switched off */
static bool cg_captures(void) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    const char *e = getenv("TN_CUDA_GRAPHS");
    if (!be || !be->graph_begin || (e && !strcmp(e, "0"))) return false;
    void *graph = NULL;
    if (be->graph_begin()) { tn_clear_error(); return false; }
    if (be->graph_end(&graph)) { tn_clear_error(); return false; }
    be->graph_free(graph);
    return true;
}
/* one replay in a scope of its own: the difference from want, and the storages, transfers
   and synchronisations it made (tn_memory_allocations, tn_cuda_stats) */
typedef struct { double diff; int64_t allocs, transfers, syncs, launches, captures, failures; } cg_run;
static cg_run cg_replay(tn_graph *g, tn_tensor *x, tn_tensor *want) {
    cg_run r;
    tn_scope_begin();
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    const int64_t a0 = tn_memory_allocations();
    tn_tensor *y = tn_graph_forward(g, x);
    const int64_t a1 = tn_memory_allocations();
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    /* storages, and the device's allocations (on the stand-in its CPU kernels' own host
       temporaries are storages too: there the device's allocations alone count) */
    r.allocs = tn_cuda_is_available() ? (a1 - a0) + (s1.num_cuda_mallocs - s0.num_cuda_mallocs) : s1.num_allocs - s0.num_allocs;
    r.transfers = (s1.num_h2d - s0.num_h2d) + (s1.num_d2h - s0.num_d2h);
    r.syncs = s1.num_syncs - s0.num_syncs;
    r.launches = s1.num_graph_launches - s0.num_graph_launches;
    r.captures = s1.num_graph_captures - s0.num_graph_captures;
    r.failures = s1.num_graph_capture_failures - s0.num_graph_capture_failures;
    r.diff = y ? cg_maxdiff(y, want) : INFINITY;
    if (!y) printf("  replay failed: %s\n", tn_last_error());
    tn_scope_end();
    return r;
}

TEST(gpu_graph_replay) {
    const bool cap = cg_captures();
    const bool must = cap && !tn_cuda_is_available();   /* the stand-in captures every model here; a GPU may decline one (a cuDNN workspace) */
    for (int which = 0; which < 3; which++) {
        if (!tn_test_selected("TN_CASE_FILTER", cg_name[which])) continue;
        tn_scope_begin();
        tn_manual_seed(11);
        tn_module *m = cg_model(which);
        tn_module_eval(m);
        if (tn_module_to(m, TN_CUDA)) { fail_at(__LINE__, "%s to cuda: %s", cg_name[which], tn_last_error()); tn_module_free(m); tn_scope_end(); continue; }
        const int64_t *shape = cg_shape[which];
        const int nd = cg_ndim[which];
        tn_tensor *xs[4];
        for (int r = 0; r < 4; r++) xs[r] = tn_to(tn_randn(shape, nd, TN_F32), TN_CUDA);
        tn_graph *g = tn_jit_trace_module(m, xs[0]);   /* traced on the device: its constants are the module's CUDA tensors */
        if (!g) { fail_at(__LINE__, "trace %s on cuda: %s", cg_name[which], tn_last_error()); tn_module_free(m); tn_scope_end(); continue; }
        tn_no_grad_begin();
        tn_tensor *want[4];
        for (int r = 0; r < 4; r++) want[r] = tn_module_forward(m, xs[r]);
        const double tol = 1e-5;
        /* the planning run (the trace's check ran once), the first served run (the arena's
           allocation), the capture (where the backend has graph entries), a launch */
        int64_t caps = 0, fails = 0;
        cg_run q;
        for (int r = 0; r < 4; r++) {
            q = cg_replay(g, xs[r], want[r]);
            caps += q.captures;
            fails += q.failures;
            CHECK_MSG(q.diff <= tol, "%s run %d: differs from eager by %g", cg_name[which], r, q.diff);
            CHECK_MSG(q.launches == (caps > 0 && r >= 2), "%s run %d: %lld launches", cg_name[which], r, (long long)q.launches);
        }
        CHECK_MSG(tn_graph_arena_bytes(g) > 0, "%s: no device plan after four runs", cg_name[which]);
        CHECK_MSG(caps + fails == (cap ? 1 : 0) && (!must || caps == 1), "%s: %lld captures, %lld failed, in four runs (expected %s)", cg_name[which],
                  (long long)caps, (long long)fails, must ? "one capture" : cap ? "one capture or failure" : "none");
        const bool captured = caps == 1;
        if (cap && !captured) printf("  %s: the capture failed on this device (the replays run uncaptured)\n", cg_name[which]);
        for (int r = 0; r < 4; r++) {   /* new values in the same input buffers: new outputs */
            q = cg_replay(g, xs[r], want[r]);
            CHECK_MSG(q.diff <= tol, "%s steady run on input %d: differs from eager by %g", cg_name[which], r, q.diff);
            CHECK_MSG(q.allocs == 0 && q.transfers == 0 && q.syncs == 0, "%s steady run: %lld storages, %lld transfers, %lld syncs (expected none)",
                      cg_name[which], (long long)q.allocs, (long long)q.transfers, (long long)q.syncs);
            CHECK_MSG(q.launches == (captured ? 1 : 0) && q.captures == 0, "%s steady run: %lld launches, %lld captures", cg_name[which], (long long)q.launches,
                      (long long)q.captures);
        }
        /* the captured replay equals the uncaptured one bit for bit (TN_CUDA_GRAPHS=0: the same plan, run node by node) */
        tn_scope_begin();
        tn_tensor *yc = tn_keep(tn_to(tn_graph_forward(g, xs[2]), TN_CPU));   /* the device output released with the scope */
        tn_scope_end();
        const char *env = getenv("TN_CUDA_GRAPHS");
        char saved[8] = "";
        if (env) snprintf(saved, sizeof saved, "%s", env);
        setenv("TN_CUDA_GRAPHS", "0", 1);
        q = cg_replay(g, xs[2], yc);
        CHECK_MSG(q.diff == 0 && q.launches == 0, "%s: the uncaptured replay differs from the captured one by %g (%lld launches)", cg_name[which], q.diff,
                  (long long)q.launches);
        CHECK_MSG(q.allocs == 0 && q.syncs == 0 && q.transfers == 0, "%s uncaptured steady run: %lld storages, %lld syncs, %lld transfers", cg_name[which],
                  (long long)q.allocs, (long long)q.syncs, (long long)q.transfers);
        if (env) setenv("TN_CUDA_GRAPHS", saved, 1);
        else unsetenv("TN_CUDA_GRAPHS");
        /* a held output is never overwritten: the next run while it is held runs uncaptured */
        tn_tensor *y1 = tn_graph_forward(g, xs[1]);
        tn_tensor *y2 = tn_graph_forward(g, xs[2]);
        tn_tensor *y3 = tn_graph_forward(g, xs[3]);
        CHECK_MSG(cg_maxdiff(y1, want[1]) <= tol && cg_maxdiff(y2, want[2]) <= tol && cg_maxdiff(y3, want[3]) <= tol,
                  "%s: outputs held across runs overwritten (%g, %g, %g)", cg_name[which], cg_maxdiff(y1, want[1]), cg_maxdiff(y2, want[2]),
                  cg_maxdiff(y3, want[3]));
        /* another batch: planned and captured anew; then the first batch again (not the
           transformer: its reshapes to [batch x length, d] do not follow a dynamic batch) */
        if (which == 2) { tn_no_grad_end(); tn_graph_free(g); tn_module_free(m); tn_scope_end(); continue; }
        if (tn_graph_set_dynamic(g, 0, 0)) fail_at(__LINE__, "set_dynamic: %s", tn_last_error());
        int64_t big[4];
        memcpy(big, shape, (size_t)nd * sizeof(int64_t));
        big[0] *= 2;
        tn_tensor *xb = tn_to(tn_randn(big, nd, TN_F32), TN_CUDA), *wb = tn_module_forward(m, xb);
        int64_t launches = 0;
        caps = fails = 0;
        for (int r = 0; r < 6; r++) {
            q = cg_replay(g, xb, wb);
            CHECK_MSG(q.diff <= tol, "%s batch %lld run %d: differs from eager by %g", cg_name[which], (long long)big[0], r, q.diff);
            caps += q.captures;
            fails += q.failures;
            launches += q.launches;
            if (r == 5) CHECK_MSG(q.allocs == 0 && q.syncs == 0, "%s batch %lld: steady run made %lld storages, %lld syncs", cg_name[which], (long long)big[0],
                                  (long long)q.allocs, (long long)q.syncs);
        }
        CHECK_MSG(caps + fails == (cap ? 1 : 0) && (!must || caps == 1) && launches == (caps ? 3 : 0), "%s another batch: %lld captures, %lld failed, %lld launches",
                  cg_name[which], (long long)caps, (long long)fails, (long long)launches);
        for (int r = 0; r < 6; r++) {
            q = cg_replay(g, xs[r % 4], want[r % 4]);
            CHECK_MSG(q.diff <= tol, "%s back to batch %lld run %d: differs by %g", cg_name[which], (long long)shape[0], r, q.diff);
        }
        tn_no_grad_end();
        /* with grad enabled: no plan, no capture, still right */
        q = cg_replay(g, xs[0], want[0]);
        CHECK_MSG(q.diff <= tol && q.launches == 0, "%s with grad: differs by %g, %lld launches", cg_name[which], q.diff, (long long)q.launches);
        tn_graph_free(g);
        tn_module_free(m);
        tn_scope_end();
    }
}

/* A graph whose output is its input's view cannot hand back a captured output of its own:
   its capture fails, without an error, and every run is uncaptured and right. */
static tn_tensor *cg_view_fn(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return tn_reshape(tn_transpose(in[0], 0, 1), TN_SHAPE(-1));
}
static tn_tensor *cg_scaled_fn(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return tn_add(tn_mul_scalar(tn_relu(in[0]), 2.0), in[1]);
}
TEST(gpu_graph_capture_fallback) {
    tn_scope_begin();
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(3, 4), TN_F32), TN_CUDA);
    tn_graph *g = tn_jit_trace(cg_view_fn, NULL, &x, 1, NULL);
    if (!g) fail_at(__LINE__, "trace: %s", tn_last_error());
    tn_no_grad_begin();
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    for (int r = 0; g && r < 6; r++) {
        tn_tensor *xr = tn_to(tn_randn(TN_SHAPE(3, 4), TN_F32), TN_CUDA);
        tn_clear_error();
        tn_tensor *y = tn_graph_forward(g, xr);
        CHECK_MSG(y && cg_maxdiff(y, tn_reshape(tn_transpose(xr, 0, 1), TN_SHAPE(-1))) == 0, "view graph run %d: %s", r, y ? "wrong values" : tn_last_error());
        CHECK_MSG(!tn_last_error()[0], "view graph run %d left an error: %s", r, tn_last_error());
    }
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    CHECK_MSG(s1.num_graph_launches == s0.num_graph_launches && s1.num_graph_captures == s0.num_graph_captures &&
                  s1.num_graph_capture_failures - s0.num_graph_capture_failures <= 1,
              "view graph: %lld captures, %lld launches, %lld failures", (long long)(s1.num_graph_captures - s0.num_graph_captures),
              (long long)(s1.num_graph_launches - s0.num_graph_launches), (long long)(s1.num_graph_capture_failures - s0.num_graph_capture_failures));
    tn_graph_free(g);
    /* outputs held across runs: the capture waits for a run whose outputs are released */
    tn_tensor *xh = tn_to(tn_randn(TN_SHAPE(4, 6), TN_F32), TN_CUDA);
    g = tn_jit_trace(cg_scaled_fn, NULL, (tn_tensor *[]){xh, xh}, 2, NULL);
    if (!g) fail_at(__LINE__, "trace: %s", tn_last_error());
    const tn_cuda_stats h0 = tn_cuda_memory_stats();
    for (int r = 0; g && r < 5; r++) {   /* every output kept by the scope */
        tn_tensor *a[2] = {tn_to(tn_randn(TN_SHAPE(4, 6), TN_F32), TN_CUDA), xh}, *y = NULL;
        CHECK_MSG(tn_graph_run(g, a, 2, &y, 1) == 1 && cg_maxdiff(y, cg_scaled_fn(a, 2, NULL)) == 0, "held outputs, run %d: %s", r, y ? "wrong values" : tn_last_error());
    }
    const tn_cuda_stats h1 = tn_cuda_memory_stats();
    CHECK_MSG(h1.num_graph_captures == h0.num_graph_captures && h1.num_graph_capture_failures == h0.num_graph_capture_failures,
              "held outputs: %lld captures, %lld failures (expected none: it waits)", (long long)(h1.num_graph_captures - h0.num_graph_captures),
              (long long)(h1.num_graph_capture_failures - h0.num_graph_capture_failures));
    tn_graph_free(g);
    /* two inputs, a scalar operand (a host scalar baked into the capture): every launch right */
    tn_tensor *in2[2] = {tn_to(tn_randn(TN_SHAPE(5, 7), TN_F32), TN_CUDA), tn_to(tn_randn(TN_SHAPE(5, 7), TN_F32), TN_CUDA)};
    g = tn_jit_trace(cg_scaled_fn, NULL, in2, 2, NULL);
    if (!g) fail_at(__LINE__, "trace: %s", tn_last_error());
    for (int r = 0; g && r < 8; r++) {
        tn_scope_begin();
        tn_tensor *a[2] = {tn_to(tn_randn(TN_SHAPE(5, 7), TN_F32), TN_CUDA), tn_to(tn_randn(TN_SHAPE(5, 7), TN_F32), TN_CUDA)};
        if (r == 6) a[0] = tn_slice(tn_to(tn_randn(TN_SHAPE(5, 14), TN_F32), TN_CUDA), 1, 0, 14, 2);   /* strided: copied into the buffer */
        tn_tensor *y = NULL;
        CHECK_MSG(tn_graph_run(g, a, 2, &y, 1) == 1 && cg_maxdiff(y, cg_scaled_fn(a, 2, NULL)) == 0, "two-input graph run %d: %s", r, y ? "wrong values" : tn_last_error());
        tn_scope_end();
    }
    tn_no_grad_end();
    /* a graph traced on the GPU saves its constants from the device (read back, never
       through a host pointer), loads on the CPU and exports to ONNX */
    char path[64];
    snprintf(path, sizeof path, "/tmp/tn_cuda_graphs_%d.tng", (int)getpid());
    tn_graph *h = g && tn_graph_save(g, path) == 0 ? tn_graph_load(path) : NULL;
    tn_tensor *c2[2] = {tn_randn(TN_SHAPE(5, 7), TN_F32), tn_randn(TN_SHAPE(5, 7), TN_F32)};
    tn_tensor *yh = NULL;
    CHECK_MSG(h && tn_graph_run(h, c2, 2, &yh, 1) == 1 && cg_maxdiff(yh, cg_scaled_fn(c2, 2, NULL)) == 0, "saved and loaded: %s", tn_last_error());
    remove(path);
    snprintf(path, sizeof path, "/tmp/tn_cuda_graphs_%d.onnx", (int)getpid());
    CHECK_MSG(g && tn_onnx_export(g, path) == 0, "ONNX export of a graph traced on cuda: %s", tn_last_error());
    remove(path);
    tn_graph_free(h);
    tn_graph_free(g);
    tn_scope_end();
}

/* ---- eager CUDA graphs (tn_cuda_graph_*: torch.cuda.CUDAGraph) ----
   A training step (forward, loss, backward, optimizer step) captured after warm-up and
   replayed with new data copied into the static inputs equals the same steps run eagerly;
   allocations inside come from the capture's pool, whose bytes go when the graph does. */
typedef struct { tn_tensor *w1, *b1, *w2, *b2; } cg_mlp;
static cg_mlp cg_mlp_make(uint64_t seed) {   /* on CUDA, requiring grad; kept (the caller releases) */
    tn_manual_seed(seed);
    cg_mlp m;
    tn_tensor **ps[4] = {&m.w1, &m.b1, &m.w2, &m.b2};
    const int64_t sh[4][2] = {{16, 8}, {16, 1}, {4, 16}, {4, 1}};
    for (int k = 0; k < 4; k++) {
        tn_tensor *c = k % 2 ? tn_randn(TN_SHAPE(sh[k][0]), TN_F32) : tn_randn(TN_SHAPE(sh[k][0], sh[k][1]), TN_F32);
        *ps[k] = tn_keep(tn_to(tn_mul_scalar(c, 0.3), TN_CUDA));
        tn_requires_grad_(*ps[k], true);
    }
    return m;
}
static void cg_mlp_free(cg_mlp *m) { tn_release(m->w1); tn_release(m->b1); tn_release(m->w2); tn_release(m->b2); }
/* one step; the loss (owned by the open scope) or NULL */
static tn_tensor *cg_mlp_step(cg_mlp *m, tn_optim *o, tn_tensor *x, tn_tensor *y) {
    tn_tensor *h = tn_relu(tn_linear(x, m->w1, m->b1));
    tn_tensor *loss = tn_mse_loss(tn_linear(h, m->w2, m->b2), y);
    if (!loss || tn_backward(loss) || tn_optim_step(o)) return NULL;
    return loss;
}
static tn_optim *cg_optim(cg_mlp *m, int kind) {
    tn_tensor *ps[4] = {m->w1, m->b1, m->w2, m->b2};
    if (kind == 0) return tn_optim_sgd(ps, 4, .lr = 0.05);
    if (kind == 1) return tn_optim_sgd(ps, 4, .lr = 0.05, .momentum = 0.9, .weight_decay = 0.01);
    if (kind == 3) return tn_optim_adam(ps, 4, .lr = 0.01, .capturable = true);
    if (kind == 4) return tn_optim_adamw(ps, 4, .lr = 0.01, .amsgrad = true, .capturable = true);
    return tn_optim_adam(ps, 4, .lr = 0.01);
}
/* a captured training step replayed equals eager: SGD, SGD with momentum, Adam and AdamW
   (amsgrad) with capturable=True (kinds 0, 1, 3, 4; 2, Adam without it, is refused below) */
TEST(gpu_eager_graph_training) {
    enum { W = 3, N = 6 };   /* warm-up steps, replays */
    static const char *const names[5] = {"SGD", "SGD+momentum", "Adam", "Adam capturable", "AdamW amsgrad capturable"};
    for (int kind = 0; kind < 5; kind++) {
        if (kind == 2) continue;
        tn_scope_begin();
        const tn_cuda_stats s0 = tn_cuda_memory_stats();
        tn_tensor *xs[W + N], *ys[W + N];
        tn_manual_seed(7);
        for (int i = 0; i < W + N; i++) { xs[i] = tn_randn(TN_SHAPE(5, 8), TN_F32); ys[i] = tn_randn(TN_SHAPE(5, 4), TN_F32); }
        cg_mlp a = cg_mlp_make(1), b = cg_mlp_make(1);
        tn_optim *oa = cg_optim(&a, kind), *ob = cg_optim(&b, kind);
        double want[N];
        for (int i = 0; i < W + N; i++) {   /* eager */
            tn_scope_begin();
            tn_optim_zero_grad(oa);
            tn_tensor *l = cg_mlp_step(&a, oa, tn_to(xs[i], TN_CUDA), tn_to(ys[i], TN_CUDA));
            if (i >= W) want[i - W] = l ? tn_item(l) : NAN;
            tn_scope_end();
        }
        for (int i = 0; i < W; i++) {   /* warm-up (as PyTorch asks: the optimizer's state made, cuDNN's algorithms cached) */
            tn_scope_begin();
            tn_optim_zero_grad(ob);
            CHECK(cg_mlp_step(&b, ob, tn_to(xs[i], TN_CUDA), tn_to(ys[i], TN_CUDA)) != NULL);
            tn_scope_end();
        }
        tn_tensor *sx = tn_to(tn_zeros(TN_SHAPE(5, 8), TN_F32), TN_CUDA), *sy = tn_to(tn_zeros(TN_SHAPE(5, 4), TN_F32), TN_CUDA);
        tn_optim_zero_grad(ob);   /* set_to_none: the grads are made inside the capture, from its pool */
        const tn_cuda_stats s1 = tn_cuda_memory_stats();
        CHECK_MSG(tn_cuda_graph_begin(NULL) == 0, "begin: %s", tn_last_error());
        CHECK(tn_cuda_graph_capturing());
        tn_scope_begin();
        tn_tensor *sl = cg_mlp_step(&b, ob, sx, sy);
        if (!sl) fail_at(__LINE__, "captured step: %s", tn_last_error());
        tn_retain(sl);   /* ours past the scope (tn_keep would hand it to the enclosing one) */
        tn_scope_end();   /* the step's temporaries back to the capture's pool */
        tn_cuda_graph *g = tn_cuda_graph_end();
        if (!g) fail_at(__LINE__, "end: %s", tn_last_error());
        CHECK(!tn_cuda_graph_capturing());
        const tn_cuda_stats s2 = tn_cuda_memory_stats();
        CHECK_MSG(s2.reserved > s1.reserved, "the capture's pool holds memory (%zu -> %zu)", s1.reserved, s2.reserved);
        for (int i = 0; g && sl && i < N; i++) {
            tn_scope_begin();
            CHECK_MSG(tn_copy_(sx, tn_to(xs[W + i], TN_CUDA)) == 0 && tn_copy_(sy, tn_to(ys[W + i], TN_CUDA)) == 0, "copy: %s", tn_last_error());
            CHECK(tn_cuda_graph_replay(g) == 0);
            const double l = tn_item(sl);
            CHECK_MSG(fabs(l - want[i]) <= 1e-5 * (1 + fabs(want[i])), "%s replay %d: loss %.9g, eager %.9g", names[kind], i, l, want[i]);
            tn_scope_end();
        }
        tn_tensor *pa[4] = {a.w1, a.b1, a.w2, a.b2}, *pb[4] = {b.w1, b.b1, b.w2, b.b2};
        for (int k = 0; k < 4; k++) CHECK_MSG(cg_maxdiff(pb[k], pa[k]) <= 1e-5, "%s: parameter %d after %d replays: %g from eager", names[kind], k, N, cg_maxdiff(pb[k], pa[k]));
        if (kind >= 3) {   /* the step count: a device tensor the replays advanced */
            tn_tensor *st = tn_optim_state(ob, 0, "step");
            CHECK_MSG(st && st->device == TN_CUDA && tn_item(st) == W + N, "%s: step on %s = %g", names[kind], st ? tn_device_name(st->device) : "-", st ? tn_item(st) : NAN);
        }
        tn_release(sl);
        tn_optim_zero_grad(ob);   /* the static grads freed: back to the live pool */
        tn_cuda_graph_free(g);    /* the pool's last reference: its memory goes */
        const tn_cuda_stats s3 = tn_cuda_memory_stats();
        CHECK_MSG(s3.allocated == s1.allocated, "allocated %zu after the graph, %zu before", s3.allocated, s1.allocated);
        CHECK_MSG(s3.reserved == s1.reserved, "reserved %zu after the graph, %zu before", s3.reserved, s1.reserved);
        tn_optim_free(oa);
        tn_optim_free(ob);
        cg_mlp_free(&a);
        cg_mlp_free(&b);
        tn_scope_end();
        const tn_cuda_stats s4 = tn_cuda_memory_stats();
        CHECK_MSG(s4.allocated == s0.allocated && s4.reserved == s0.reserved, "allocated %zu, reserved %zu at the end; %zu, %zu at the start", s4.allocated,
                  s4.reserved, s0.allocated, s0.reserved);
    }
}
/* Adam's step is refused inside a capture (PyTorch: capturable=False); the capture fails
   cleanly and the library goes on. */
TEST(gpu_eager_graph_adam_refused) {
    tn_scope_begin();
    cg_mlp m = cg_mlp_make(2);
    tn_optim *o = cg_optim(&m, 2);
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(5, 8), TN_F32), TN_CUDA), *y = tn_to(tn_randn(TN_SHAPE(5, 4), TN_F32), TN_CUDA);
    CHECK(cg_mlp_step(&m, o, x, y) != NULL);
    tn_optim_zero_grad(o);
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    tn_scope_begin();
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    CHECK_ERR(cg_mlp_step(&m, o, x, y) != NULL, "capturable=False");
    CHECK_ERR(tn_cuda_graph_end() != NULL, "the capture failed: Adam");
    CHECK(!tn_cuda_graph_capturing());
    tn_optim_zero_grad(o);   /* the grads the failed capture made */
    tn_scope_end();
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    CHECK_MSG(s1.reserved == s0.reserved && s1.allocated == s0.allocated, "the failed capture's pool released (reserved %zu -> %zu, allocated %zu -> %zu)",
              s0.reserved, s1.reserved, s0.allocated, s1.allocated);
    tn_scope_begin();
    CHECK(cg_mlp_step(&m, o, x, y) != NULL);   /* eager again */
    tn_scope_end();
    tn_optim_free(o);
    cg_mlp_free(&m);
    tn_scope_end();
}
/* a CNN forward (convolution through the library entry: cuDNN on a GPU, with its workspace
   from the capture's pool) captured after warm-up; new inputs give eager's outputs */
TEST(gpu_eager_graph_cnn) {
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *w1 = tn_to(tn_mul_scalar(tn_randn(TN_SHAPE(8, 3, 3, 3), TN_F32), 0.2), TN_CUDA), *w2 = tn_to(tn_mul_scalar(tn_randn(TN_SHAPE(4, 8, 3, 3), TN_F32), 0.2), TN_CUDA);
    tn_tensor *bias = tn_to(tn_randn(TN_SHAPE(8), TN_F32), TN_CUDA);
    tn_tensor *sx = tn_to(tn_randn(TN_SHAPE(2, 3, 12, 12), TN_F32), TN_CUDA);
    const tn_cuda_stats c0 = tn_cuda_memory_stats();
    for (int i = 0; i < 2; i++) tn_conv2d(tn_relu(tn_conv2d(sx, w1, bias, .padding = 1)), w2, NULL, .stride = 2);   /* warm-up */
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *sy = tn_keep(tn_conv2d(tn_relu(tn_conv2d(sx, w1, bias, .padding = 1)), w2, NULL, .stride = 2));
    tn_cuda_graph *g = tn_cuda_graph_end();
    if (!g || !sy) fail_at(__LINE__, "CNN capture: %s", tn_last_error());
    for (int r = 0; g && sy && r < 3; r++) {
        tn_tensor *x = tn_randn(TN_SHAPE(2, 3, 12, 12), TN_F32);
        CHECK(tn_copy_(sx, tn_to(x, TN_CUDA)) == 0 && tn_cuda_graph_replay(g) == 0);
        tn_tensor *want = tn_conv2d(tn_relu(tn_conv2d(tn_to(x, TN_CUDA), w1, bias, .padding = 1)), w2, NULL, .stride = 2);
        CHECK_MSG(cg_maxdiff(sy, want) <= 1e-5, "CNN replay %d: %g from eager", r, cg_maxdiff(sy, want));
    }
    const tn_cuda_stats c1 = tn_cuda_memory_stats();
    CHECK_MSG(c1.num_conv_fallbacks == c0.num_conv_fallbacks, "a convolution fell back (%lld)", (long long)(c1.num_conv_fallbacks - c0.num_conv_fallbacks));
    tn_release(sy);
    tn_cuda_graph_free(g);
    tn_no_grad_end();
    tn_scope_end();
}
/* two graphs sharing one pool (torch.cuda.graph_pool_handle), replayed in capture order;
   the bytes go when the last of graphs and handle goes */
TEST(gpu_eager_graph_pool_sharing) {
    tn_scope_begin();
    tn_no_grad_begin();
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(64, 64), TN_F32), TN_CUDA);
    tn_cuda_graph_pool *pool = tn_cuda_graph_pool_handle();
    CHECK(pool != NULL);
    CHECK(tn_cuda_graph_begin(pool) == 0);
    tn_tensor *y1 = tn_keep(tn_relu(tn_mul_scalar(x, 2.0)));
    tn_cuda_graph *g1 = tn_cuda_graph_end();
    CHECK(g1 != NULL);
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    tn_cuda_graph_pool *p1 = tn_cuda_graph_pool_of(g1);
    CHECK(tn_cuda_graph_begin(p1) == 0);
    tn_tensor *y2 = tn_keep(tn_add_scalar(tn_matmul(y1, y1), 1.0));
    tn_cuda_graph *g2 = tn_cuda_graph_end();
    CHECK(g2 != NULL);
    tn_cuda_graph_pool_release(p1);
    const tn_cuda_stats s2 = tn_cuda_memory_stats();
    CHECK_MSG(s2.reserved >= s1.reserved && s1.reserved > s0.reserved, "reserved %zu, %zu, %zu", s0.reserved, s1.reserved, s2.reserved);
    for (int r = 0; r < 2 && g1 && g2; r++) {
        tn_tensor *xn = tn_randn(TN_SHAPE(64, 64), TN_F32);
        CHECK(tn_copy_(x, tn_to(xn, TN_CUDA)) == 0 && tn_cuda_graph_replay(g1) == 0 && tn_cuda_graph_replay(g2) == 0);
        tn_tensor *e1 = tn_relu(tn_mul_scalar(xn, 2.0));
        CHECK(cg_maxdiff(y1, e1) == 0);
        CHECK_MSG(cg_maxdiff(y2, tn_add_scalar(tn_matmul(e1, e1), 1.0)) <= 1e-3, "shared pool replay %d", r);
    }
    tn_release(y1);
    tn_release(y2);
    tn_cuda_graph_free(g1);
    CHECK(tn_cuda_memory_stats().reserved > s0.reserved);   /* g2 and the handle hold it */
    tn_cuda_graph_free(g2);
    CHECK(tn_cuda_memory_stats().reserved > s0.reserved);   /* the handle still does */
    tn_cuda_graph_pool_release(pool);
    tn_no_grad_end();
    tn_scope_end();
    const tn_cuda_stats s3 = tn_cuda_memory_stats();   /* nothing held: back to the start */
    CHECK_MSG(s3.reserved == s0.reserved && s3.allocated == s0.allocated, "reserved %zu, allocated %zu after; %zu, %zu before", s3.reserved, s3.allocated,
              s0.reserved, s0.allocated);
}
/* the errors: each clear, none leaving the library capturing or the pool held */
TEST(gpu_eager_graph_errors) {
    tn_scope_begin();
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(4, 4), TN_F32), TN_CUDA);
    CHECK_ERR(tn_cuda_graph_end() != NULL, "without tn_cuda_graph_begin");
    CHECK_ERR(tn_cuda_graph_replay(NULL) == 0, "no graph");
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *y = tn_keep(tn_exp(x));
    CHECK_ERR(tn_cuda_graph_begin(NULL) == 0, "capturing already");
    tn_cuda_graph *g = tn_cuda_graph_end();
    CHECK(g != NULL);
    /* a replay inside a capture */
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    CHECK_ERR(tn_cuda_graph_replay(g) == 0, "inside a capture");
    tn_cuda_graph *g2 = tn_cuda_graph_end();   /* the refused replay queued nothing */
    CHECK(g2 != NULL);
    tn_cuda_graph_free(g2);
    /* .item(), a host copy, a synchronisation inside: named, and the capture fails */
    const char *what[3] = {".item()", "from the host to the GPU", "synchronisation"};
    for (int k = 0; k < 3; k++) {
        CHECK(tn_cuda_graph_begin(NULL) == 0);
        tn_tensor *s = tn_sum(x);
        if (k == 0) CHECK_ERR(!isnan(tn_item(s)), what[k]);
        if (k == 1) CHECK_ERR(tn_to(tn_ones(TN_SHAPE(2), TN_F32), TN_CUDA) != NULL, what[k]);
        if (k == 2) CHECK_ERR(tn_cuda_synchronize() == 0, what[k]);
        CHECK_ERR(tn_cuda_graph_end() != NULL, what[k]);
        CHECK(!tn_cuda_graph_capturing());
    }
    /* the library goes on: eager work and a new capture */
    CHECK(cg_maxdiff(tn_exp(x), tn_exp(tn_to(x, TN_CPU))) <= 1e-6);
    CHECK(tn_cuda_graph_replay(g) == 0 && cg_maxdiff(y, tn_exp(x)) == 0);
    tn_release(y);
    tn_cuda_graph_free(g);
    tn_cuda_graph_free(NULL);
    tn_cuda_graph_pool_release(NULL);
    tn_scope_end();
    const tn_cuda_stats s1 = tn_cuda_memory_stats();
    CHECK_MSG(s1.reserved == s0.reserved && s1.allocated == s0.allocated, "reserved %zu, allocated %zu after; %zu, %zu before", s1.reserved, s1.allocated,
              s0.reserved, s0.allocated);
}
/* What a capture cannot hold is refused on the GPU as on the stand-in, by name, and the
   capture fails (graph_end): nonzero (its shape is the data's), a factorization (cuSOLVER runs on the legacy stream, outside the capture), a transform
   whose cuFFT plan is not made yet (making one allocates and uploads). Warmed up first, the
   transforms (r2c, and c2r, which reads a copy of its input) are captured and each replay
   equals the CPU's; a product captured after the first capture keeps cuBLAS's fixed
   workspace (cublasSetStream resets it to cuBLAS's own pool, which a capture cannot hold). */
TEST(gpu_eager_graph_uncapturable) {
    tn_scope_begin();
    tn_no_grad_begin();
    const tn_cuda_stats s0 = tn_cuda_memory_stats();
    static int64_t runs;   /* plans stay cached for the process: a signal length no earlier run (or case) planned */
    const int64_t n = 37 + 2 * runs++;
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(3, n), TN_F32), TN_CUDA);
    /* the linalg entry itself (tn_linalg_* upload host values first, which the header refuses before it) */
    const tn_backend *be = tn_get_backend(TN_CUDA);
    tn_tensor *a = tn_to(tn_reshape(tn_add(tn_zeros(TN_SHAPE(4, 4), TN_F32), tn_mul_scalar(tn_eye(4, TN_NONE, TN_F32), 4.0)), TN_SHAPE(1, 4, 4)), TN_CUDA);
    tn_tensor *info = tn_to(tn_zeros(TN_SHAPE(1), TN_I32), TN_CUDA);
    const char *what[3] = {"nonzero (it reads the count back) while capturing", "a factorization (linalg) while capturing", "a cuFFT plan made"};
    for (int k = 0; k < 3; k++) {
        CHECK(tn_cuda_graph_begin(NULL) == 0);
        if (k == 0) CHECK_ERR(tn_nonzero(x) != NULL, what[k]);
        if (k == 1) CHECK_ERR(be->linalg && be->linalg(TN_LA_POTRF, a, NULL, NULL, NULL, info, 0) == 0, what[k]);
        if (k == 2) CHECK_ERR(tn_fft_rfft(x) != NULL, what[k]);
        tn_cuda_graph *bad = NULL;
        CHECK_ERR((bad = tn_cuda_graph_end()) != NULL, "capture failed");
        tn_cuda_graph_free(bad);
        CHECK(!tn_cuda_graph_capturing());
    }
    /* after one eager run of each, the transforms capture */
    tn_tensor *spec = tn_fft_irfft(tn_fft_rfft(x), .n = n);
    CHECK(spec && cg_maxdiff(spec, x) <= 1e-5);
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *f = tn_keep(tn_fft_rfft(x));
    tn_tensor *back = tn_keep(tn_fft_irfft(f, .n = n));
    tn_cuda_graph *g = tn_cuda_graph_end();
    if (!g || !f || !back) fail_at(__LINE__, "fft capture: %s", tn_last_error());
    for (int r = 0; g && f && back && r < 2; r++) {
        tn_tensor *xn = tn_randn(TN_SHAPE(3, n), TN_F32);
        CHECK(tn_copy_(x, tn_to(xn, TN_CUDA)) == 0 && tn_cuda_graph_replay(g) == 0);
        CHECK_MSG(cg_maxdiff(f, tn_fft_rfft(xn)) <= 1e-4, "rfft replay %d: %g from the CPU", r, cg_maxdiff(f, tn_fft_rfft(xn)));
        CHECK_MSG(cg_maxdiff(back, xn) <= 1e-5, "irfft replay %d: %g from its input", r, cg_maxdiff(back, xn));
    }
    /* a product captured after a capture: cuBLAS on the capture's stream with its fixed workspace */
    tn_tensor *p = tn_to(tn_randn(TN_SHAPE(64, 128), TN_F32), TN_CUDA), *q = tn_to(tn_randn(TN_SHAPE(128, 96), TN_F32), TN_CUDA);
    CHECK(tn_matmul(p, q) != NULL);   /* eager, between the captures */
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *pq = tn_keep(tn_matmul(p, q));
    tn_release(f);   /* the fft graph and its pool's last tensors freed inside this capture: no cudaFree inside it */
    tn_release(back);
    f = back = NULL;
    tn_cuda_graph_free(g);
    g = NULL;
    tn_cuda_graph *g2 = tn_cuda_graph_end();
    if (!g2 || !pq) fail_at(__LINE__, "matmul capture: %s", tn_last_error());
    if (g2 && pq) {
        tn_tensor *pn = tn_randn(TN_SHAPE(64, 128), TN_F32);
        CHECK(tn_copy_(p, tn_to(pn, TN_CUDA)) == 0 && tn_cuda_graph_replay(g2) == 0);
        tn_tensor *want = tn_matmul(tn_to(pn, TN_CUDA), q);   /* eager on the device: the same product */
        CHECK_MSG(cg_maxdiff(pq, want) <= 1e-4, "matmul replay: %g from eager", cg_maxdiff(pq, want));
    }
    tn_release(f);
    tn_release(back);
    tn_release(pq);
    tn_cuda_graph_free(g);
    tn_cuda_graph_free(g2);
    tn_no_grad_end();
    tn_scope_end();
    const tn_cuda_stats s1 = tn_cuda_memory_stats();   /* (reserved: the pool freed inside a capture stays in the unit's cache) */
    CHECK_MSG(s1.allocated == s0.allocated, "allocated %zu after, %zu before", s1.allocated, s0.allocated);
}
/* ---- random draws, index checks and whole language-model steps in one eager graph ----
   Draws inside a capture take the default generator's counters at each replay (PyTorch's
   graph-safe Philox): a replay draws what an eager step from the same generator state
   draws, the next replay draws anew, and capture + N replays advance the generator as N
   eager steps; torch.manual_seed before a replay repeats it. */
TEST(gpu_eager_graph_random) {
    tn_scope_begin();
    tn_tensor *x = tn_to(tn_ones(TN_SHAPE(4, 64), TN_F32), TN_CUDA);
    tn_generator *gen = tn_default_generator();
    tn_manual_seed(5);
    const uint64_t off0 = gen->offset;
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *y = tn_keep(tn_dropout(x, .p = 0.5)), *u = tn_keep(tn_rand_like(x));
    tn_cuda_graph *g = tn_cuda_graph_end();
    if (!g || !y || !u) fail_at(__LINE__, "dropout capture: %s", tn_last_error());
    CHECK_MSG(gen->offset == off0, "the capture took counters (%llu -> %llu)", (unsigned long long)off0, (unsigned long long)gen->offset);
    tn_tensor *r[2][2] = {{NULL, NULL}, {NULL, NULL}};   /* the replays' numbers, on the host */
    tn_manual_seed(21);
    for (int k = 0; g && k < 2; k++) {
        CHECK(tn_cuda_graph_replay(g) == 0);
        r[k][0] = tn_to(y, TN_CPU);
        r[k][1] = tn_to(u, TN_CPU);
    }
    const uint64_t off_replays = gen->offset;
    tn_manual_seed(21);   /* two eager steps from the same generator state */
    for (int k = 0; g && k < 2; k++) {
        tn_tensor *ey = tn_dropout(x, .p = 0.5), *eu = tn_rand_like(x);
        CHECK_MSG(cg_maxdiff(ey, r[k][0]) == 0 && cg_maxdiff(eu, r[k][1]) == 0, "replay %d: dropout %g, rand %g from eager", k, cg_maxdiff(ey, r[k][0]),
                  cg_maxdiff(eu, r[k][1]));
    }
    CHECK_MSG(gen->offset == off_replays, "2 replays took %llu counters, 2 eager steps %llu", (unsigned long long)off_replays, (unsigned long long)gen->offset);
    CHECK_MSG(g && cg_maxdiff(r[0][0], r[1][0]) > 0 && cg_maxdiff(r[0][1], r[1][1]) > 0, "two replays drew the same numbers");
    tn_manual_seed(21);   /* reseeded: the replay repeats */
    CHECK(g && tn_cuda_graph_replay(g) == 0 && cg_maxdiff(y, r[0][0]) == 0 && cg_maxdiff(u, r[0][1]) == 0);
    /* a draw from another generator is refused (PyTorch captures the default one) */
    tn_generator *other = tn_generator_new_philox(3);
    tn_tensor *z = tn_to(tn_zeros(TN_SHAPE(8), TN_F32), TN_CUDA);
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    CHECK_ERR(tn_uniform_(z, .generator = other) != NULL, "a generator other than the default one");
    CHECK_ERR(tn_cuda_graph_end() != NULL, "capture failed");
    tn_generator_free(other);
    tn_release(y);
    tn_release(u);
    tn_cuda_graph_free(g);
    tn_scope_end();
}
enum { CG_V = 40, CG_B = 3, CG_T = 8 };
/* 0: GPT-style (embedding, a transformer encoder layer with dropout, LM head); 1: LSTM LM */
static tn_module *cg_lm(int which) {
    tn_manual_seed(11);
    tn_module *m = which == 0 ? tn_nn_sequential(tn_nn_embedding(CG_V, 32), tn_nn_transformer_encoder_layer(32, 4, .dim_feedforward = 64, .dropout = 0.1, .batch_first = true),
                                                 tn_nn_linear(32, CG_V))
                              : tn_nn_sequential(tn_nn_embedding(CG_V, 16), tn_nn_lstm(16, 32, .batch_first = true), tn_nn_linear(32, CG_V));
    if (m && tn_module_to(m, TN_CUDA)) { tn_module_free(m); return NULL; }
    return m;
}
static tn_tensor *cg_lm_step(tn_module *m, tn_optim *o, tn_tensor *ids, tn_tensor *tgt) {
    tn_tensor *logits = tn_module_forward(m, ids);
    tn_tensor *loss = tn_cross_entropy(tn_reshape(logits, TN_SHAPE(CG_B * CG_T, CG_V)), tn_reshape(tgt, TN_SHAPE(CG_B * CG_T)));
    if (!loss || tn_backward(loss) || tn_optim_step(o)) return NULL;
    return loss;
}
/* A GPT-style and an LSTM language-model step (embedding lookups and cross-entropy targets
   checked on the device, dropout, Adam capturable=True) captured whole; replays fed new
   tokens equal eager steps from the same generator states; a bad token fed to a replay is
   reported at the next synchronisation with eager's message, and the graph goes on. */
TEST(gpu_eager_graph_lm) {
    enum { W = 2, N = 4 };
    static const char *const names[2] = {"GPT", "LSTM LM"};
    for (int which = 0; which < 2; which++) {
        tn_scope_begin();
        const tn_cuda_stats s0 = tn_cuda_memory_stats();
        tn_tensor *ids[W + N], *tg[W + N];
        tn_manual_seed(3);
        for (int i = 0; i < W + N; i++) { ids[i] = tn_randint(0, CG_V, TN_SHAPE(CG_B, CG_T), TN_I64, NULL); tg[i] = tn_randint(0, CG_V, TN_SHAPE(CG_B, CG_T), TN_I64, NULL); }
        tn_module *A = cg_lm(which), *B = cg_lm(which);
        CHECK(A && B);
        if (!A || !B) { tn_module_free(A); tn_module_free(B); tn_scope_end(); continue; }
        tn_dict *pa = tn_module_named_parameters(A), *pb = tn_module_named_parameters(B);
        tn_optim *oa = tn_optim_adam((tn_tensor **)tn_dict_values(pa), tn_dict_len(pa), .lr = 0.01, .capturable = true);
        tn_optim *ob = tn_optim_adam((tn_tensor **)tn_dict_values(pb), tn_dict_len(pb), .lr = 0.01, .capturable = true);
        double want[N];
        for (int i = 0; i < W + N; i++) {   /* eager, each step from generator state (1000 + i, 0) */
            tn_scope_begin();
            tn_manual_seed(1000 + (uint64_t)i);
            tn_optim_zero_grad(oa);
            tn_tensor *l = cg_lm_step(A, oa, tn_to(ids[i], TN_CUDA), tn_to(tg[i], TN_CUDA));
            if (!l) fail_at(__LINE__, "%s eager step: %s", names[which], tn_last_error());
            if (i >= W) want[i - W] = l ? tn_item(l) : NAN;
            tn_scope_end();
        }
        for (int i = 0; i < W; i++) {   /* warm-up */
            tn_scope_begin();
            tn_manual_seed(1000 + (uint64_t)i);
            tn_optim_zero_grad(ob);
            CHECK(cg_lm_step(B, ob, tn_to(ids[i], TN_CUDA), tn_to(tg[i], TN_CUDA)) != NULL);
            tn_scope_end();
        }
        tn_tensor *sx = tn_to(tn_zeros(TN_SHAPE(CG_B, CG_T), TN_I64), TN_CUDA), *sy = tn_to(tn_zeros(TN_SHAPE(CG_B, CG_T), TN_I64), TN_CUDA);
        tn_optim_zero_grad(ob);
        const tn_cuda_stats s1 = tn_cuda_memory_stats();
        CHECK_MSG(tn_cuda_graph_begin(NULL) == 0, "begin: %s", tn_last_error());
        tn_scope_begin();
        tn_tensor *sl = cg_lm_step(B, ob, sx, sy);
        if (!sl) fail_at(__LINE__, "%s captured step: %s", names[which], tn_last_error());
        tn_retain(sl);
        tn_scope_end();
        tn_cuda_graph *g = tn_cuda_graph_end();
        if (!g) fail_at(__LINE__, "%s capture: %s", names[which], tn_last_error());
        for (int i = 0; g && sl && i < N; i++) {
            tn_scope_begin();
            CHECK(tn_copy_(sx, tn_to(ids[W + i], TN_CUDA)) == 0 && tn_copy_(sy, tn_to(tg[W + i], TN_CUDA)) == 0);
            tn_manual_seed(1000 + (uint64_t)(W + i));
            CHECK(tn_cuda_graph_replay(g) == 0);
            const double l = tn_item(sl);
            CHECK_MSG(fabs(l - want[i]) <= 1e-4 * (1 + fabs(want[i])), "%s replay %d: loss %.9g, eager %.9g", names[which], i, l, want[i]);
            tn_scope_end();
        }
        double worst = 0;
        for (int k = 0; k < tn_dict_len(pa); k++) worst = fmax(worst, cg_maxdiff(tn_dict_value(pb, k), tn_dict_value(pa, k)));
        CHECK_MSG(g && worst <= 1e-4, "%s: parameters %g from eager after %d replays", names[which], worst, N);
        if (g && sl) {   /* a bad token: eager's message at the next synchronisation, then good tokens work again */
            tn_scope_begin();
            tn_tensor *bad = tn_clone(ids[W]);
            ((int64_t *)tn_data_ptr(bad))[5] = CG_V + 3;
            char msg[512] = "";
            CHECK(tn_module_forward(tn_module_child_at(A, 0, NULL), tn_to(bad, TN_CUDA)) != NULL);   /* eager: the embedding */
            CHECK_ERR(tn_cuda_synchronize() == 0, "out of bounds");
            snprintf(msg, sizeof msg, "%s", tn_last_error());
            CHECK(tn_copy_(sx, tn_to(bad, TN_CUDA)) == 0 && tn_cuda_graph_replay(g) == 0);
            CHECK(tn_cuda_synchronize() != 0);
            CHECK_MSG(strcmp(tn_last_error(), msg) == 0, "%s: the replay's error \"%s\", eager's \"%s\"", names[which], tn_last_error(), msg);
            tn_clear_error();
            CHECK(tn_copy_(sx, tn_to(ids[W], TN_CUDA)) == 0 && tn_cuda_graph_replay(g) == 0);
            CHECK_MSG(tn_cuda_synchronize() == 0, "%s: after a bad replay: %s", names[which], tn_last_error());
            CHECK(isfinite(tn_item(sl)));
            tn_scope_end();
        }
        tn_release(sl);
        tn_optim_zero_grad(ob);
        tn_cuda_graph_free(g);
        const tn_cuda_stats s3 = tn_cuda_memory_stats();
        CHECK_MSG(s3.allocated == s1.allocated && s3.reserved == s1.reserved, "%s: allocated %zu, reserved %zu after the graph; %zu, %zu before", names[which],
                  s3.allocated, s3.reserved, s1.allocated, s1.reserved);
        tn_optim_free(oa);
        tn_optim_free(ob);
        tn_dict_free(pa);
        tn_dict_free(pb);
        tn_module_free(A);
        tn_module_free(B);
        tn_scope_end();
        const tn_cuda_stats s4 = tn_cuda_memory_stats();
        CHECK_MSG(s4.allocated == s0.allocated && s4.reserved == s0.reserved, "%s: allocated %zu, reserved %zu at the end; %zu, %zu at the start", names[which],
                  s4.allocated, s4.reserved, s0.allocated, s0.reserved);
    }
}
/* the graph's check slots: a 0-size index and a negative dim capture; a bad index (negative:
   index_select does not wrap, as PyTorch's) reported once (the scan clears it), good ones
   work after it; past 64 distinct checks in one graph the capture is refused */
TEST(gpu_eager_graph_check_slots) {
    tn_scope_begin();
    tn_tensor *x = tn_to(tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4)), TN_CUDA);
    tn_tensor *idx = tn_to(tn_from_data((const int64_t[]){3, 1}, TN_SHAPE(2), TN_I64), TN_CUDA), *none = tn_to(tn_zeros(TN_SHAPE(0), TN_I64), TN_CUDA);
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *y = tn_keep(tn_index_select(x, -1, idx)), *z = tn_keep(tn_index_select(x, 0, none));
    tn_cuda_graph *g = tn_cuda_graph_end();
    if (!g || !y || !z) fail_at(__LINE__, "index_select capture: %s", tn_last_error());
    if (g) {
        CHECK(tn_cuda_graph_replay(g) == 0 && tn_cuda_synchronize() == 0);
        CHECK(cg_maxdiff(y, tn_index_select(tn_to(x, TN_CPU), 1, tn_to(idx, TN_CPU))) == 0 && tn_numel(z) == 0);
        CHECK(tn_fill_(idx, -5.0) != NULL && tn_cuda_graph_replay(g) == 0);
        CHECK_ERR(tn_cuda_synchronize() == 0, "index -5 is out of bounds for dimension 1 with size 4 (found on the device");
        CHECK(tn_cuda_synchronize() == 0);   /* reported once */
        CHECK(tn_fill_(idx, 2.0) != NULL && tn_cuda_graph_replay(g) == 0 && tn_cuda_synchronize() == 0);   /* good indices again */
        CHECK(cg_maxdiff(y, tn_index_select(tn_to(x, TN_CPU), 1, tn_from_data((const int64_t[]){2, 2}, TN_SHAPE(2), TN_I64))) == 0);
    }
    tn_release(y);
    tn_release(z);
    tn_cuda_graph_free(g);
    tn_tensor *xs[65];
    for (int k = 0; k < 65; k++) xs[k] = tn_to(tn_zeros(TN_SHAPE(k + 2), TN_F32), TN_CUDA);
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    for (int k = 0; k < 64; k++) CHECK(tn_index_select(xs[k], 0, idx) != NULL);   /* sizes differ: 64 messages */
    CHECK_ERR(tn_index_select(xs[64], 0, idx) != NULL, "more than 64 different device-side index checks");
    CHECK_ERR(tn_cuda_graph_end() != NULL, "capture failed");
    CHECK(!tn_cuda_graph_capturing());
    tn_scope_end();
}
/* max pooling's argmax (its window table) inside a capture: max_pool2d with indices, and a
   CNN training step with max pooling and dropout, captured and replayed, equal eager */
TEST(gpu_eager_graph_pool_argmax) {
    tn_scope_begin();
    tn_tensor *x = tn_to(tn_randn(TN_SHAPE(2, 3, 9, 9), TN_F32), TN_CUDA);
    tn_tensor *idx = NULL;
    CHECK(tn_max_pool2d_with_indices(x, &idx, 3, .stride = 2, .padding = 1) != NULL);   /* warm-up */
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_tensor *y = tn_keep(tn_max_pool2d_with_indices(x, &idx, 3, .stride = 2, .padding = 1));
    tn_keep(idx);
    tn_cuda_graph *g = tn_cuda_graph_end();
    if (!g || !y) fail_at(__LINE__, "max pooling capture: %s", tn_last_error());
    for (int r = 0; g && y && r < 2; r++) {
        tn_tensor *xn = tn_randn(TN_SHAPE(2, 3, 9, 9), TN_F32), *wi = NULL;
        CHECK(tn_copy_(x, tn_to(xn, TN_CUDA)) == 0 && tn_cuda_graph_replay(g) == 0);
        tn_tensor *want = tn_max_pool2d_with_indices(xn, &wi, 3, .stride = 2, .padding = 1);
        CHECK_MSG(cg_maxdiff(y, want) == 0 && cg_maxdiff(idx, wi) == 0, "max pooling replay %d: %g, indices %g from the CPU", r, cg_maxdiff(y, want), cg_maxdiff(idx, wi));
    }
    tn_release(y);
    tn_release(idx);
    tn_cuda_graph_free(g);
    /* a CNN training step (max pooling, dropout, SGD with momentum) captured: replays equal eager steps */
    enum { W = 2, N = 3 };
    tn_module *ma = cg_model(1), *mb = cg_model(1);
    tn_dict *pa = tn_module_named_parameters(ma), *pb = tn_module_named_parameters(mb);
    CHECK(tn_dict_len(pa) == tn_dict_len(pb));
    tn_no_grad_begin();   /* the same weights */
    for (int k = 0; k < tn_dict_len(pa); k++) CHECK(tn_copy_(tn_dict_value(pb, k), tn_dict_value(pa, k)) == 0);
    tn_no_grad_end();
    tn_module_to(ma, TN_CUDA);
    tn_module_to(mb, TN_CUDA);
    tn_optim *oa = tn_optim_sgd((tn_tensor **)tn_dict_values(pa), tn_dict_len(pa), .lr = 0.05, .momentum = 0.9);
    tn_optim *ob = tn_optim_sgd((tn_tensor **)tn_dict_values(pb), tn_dict_len(pb), .lr = 0.05, .momentum = 0.9);
    tn_tensor *xs[W + N], *ys[W + N];
    tn_manual_seed(4);
    for (int i = 0; i < W + N; i++) { xs[i] = tn_randn(TN_SHAPE(4, 1, 28, 28), TN_F32); ys[i] = tn_randint(0, 10, TN_SHAPE(4), TN_I64, NULL); }
    double want[N];
    for (int i = 0; i < W + N; i++) {
        tn_scope_begin();
        tn_manual_seed(500 + (uint64_t)i);
        tn_optim_zero_grad(oa);
        tn_tensor *l = tn_cross_entropy(tn_module_forward(ma, tn_to(xs[i], TN_CUDA)), tn_to(ys[i], TN_CUDA));
        CHECK(l && tn_backward(l) == 0 && tn_optim_step(oa) == 0);
        if (i >= W) want[i - W] = l ? tn_item(l) : NAN;
        if (i < W) {
            tn_manual_seed(500 + (uint64_t)i);
            tn_optim_zero_grad(ob);
            tn_tensor *lb = tn_cross_entropy(tn_module_forward(mb, tn_to(xs[i], TN_CUDA)), tn_to(ys[i], TN_CUDA));
            CHECK(lb && tn_backward(lb) == 0 && tn_optim_step(ob) == 0);
        }
        tn_scope_end();
    }
    tn_tensor *sx = tn_to(tn_zeros(TN_SHAPE(4, 1, 28, 28), TN_F32), TN_CUDA), *sy = tn_to(tn_zeros(TN_SHAPE(4), TN_I64), TN_CUDA);
    tn_optim_zero_grad(ob);
    CHECK(tn_cuda_graph_begin(NULL) == 0);
    tn_scope_begin();
    tn_tensor *sl = tn_cross_entropy(tn_module_forward(mb, sx), sy);
    if (!sl || tn_backward(sl) || tn_optim_step(ob)) fail_at(__LINE__, "CNN step capture: %s", tn_last_error());
    tn_retain(sl);
    tn_scope_end();
    tn_cuda_graph *gs = tn_cuda_graph_end();
    if (!gs) fail_at(__LINE__, "CNN step capture: %s", tn_last_error());
    for (int i = 0; gs && sl && i < N; i++) {
        CHECK(tn_copy_(sx, tn_to(xs[W + i], TN_CUDA)) == 0 && tn_copy_(sy, tn_to(ys[W + i], TN_CUDA)) == 0);
        tn_manual_seed(500 + (uint64_t)(W + i));
        CHECK(tn_cuda_graph_replay(gs) == 0);
        CHECK_MSG(fabs(tn_item(sl) - want[i]) <= 1e-4 * (1 + fabs(want[i])), "CNN step replay %d: loss %.9g, eager %.9g", i, tn_item(sl), want[i]);
    }
    double worst = 0;
    for (int k = 0; k < tn_dict_len(pa); k++) worst = fmax(worst, cg_maxdiff(tn_dict_value(pb, k), tn_dict_value(pa, k)));
    CHECK_MSG(gs && worst <= 1e-4, "CNN step: parameters %g from eager after %d replays", worst, N);
    tn_release(sl);
    tn_optim_zero_grad(ob);
    tn_cuda_graph_free(gs);
    tn_optim_free(oa);
    tn_optim_free(ob);
    tn_dict_free(pa);
    tn_dict_free(pb);
    tn_module_free(ma);
    tn_module_free(mb);
    tn_scope_end();
}
#endif
