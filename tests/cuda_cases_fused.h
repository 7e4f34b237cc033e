/* cuda_cases_fused.h — a graph replay's fused elementwise chains on the GPU (issue 22):
 * tn_backend.fused_elementwise runs each chain as one call (one kernel in tensor_cuda.cu,
 * the CPU's fused loop on the checking stand-in). Included by test_cuda_graphs.c (the
 * stand-in, plain and unreadable) and by test_cuda.c (a real GPU). Include after tn_test.h.
 *
 * A traced function with three chains (mul, add, gelu; tanh, pow, div; sigmoid, add) over
 * broadcast constants, a 0-d device constant and a 0-d float64 host constant, float32 and
 * float64, the batch dynamic: under no_grad the replay equals eager and the members run one
 * by one (TN_CUDA_FUSED_ELEMENTWISE=0: the entry declines) bit for bit, one fused call per
 * chain (tn_cuda_stats.num_fused_elementwise), strided inputs; the steady replay captured as
 * a CUDA graph (where the backend captures) gives the same bits. The entry itself: broadcast
 * and strided operands and a host scalar, 0 elements, declined programs (an op it has no
 * kernel for, a half dtype, a bad operand index) and a wrong operand dtype. */
#ifndef CUDA_CASES_FUSED_H
#define CUDA_CASES_FUSED_H
#include <stdio.h>
#include <stdlib.h>

/* max |a - b| over device or CPU tensors (in float64); +inf on NULL or other shapes */
static double cf_maxdiff(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || tn_ndim(a) != tn_ndim(b) || memcmp(tn_shape(a), tn_shape(b), (size_t)tn_ndim(a) * sizeof(int64_t))) return INFINITY;
    if (tn_numel(a) == 0) return 0;
    tn_tensor *d = tn_sub(tn_to_dtype(tn_to(a, TN_CPU), TN_F64), tn_to_dtype(tn_to(b, TN_CPU), TN_F64));
    return d ? tn_item(tn_max(tn_abs(d))) : INFINITY;
}
static tn_tensor *cf_scale, *cf_bias, *cf_two, *cf_one;   /* the traced function's constants */
static tn_tensor *cf_fn(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *a = tn_gelu(tn_add(tn_mul(in[0], cf_scale), cf_bias));   /* read twice: the first chain ends */
    tn_tensor *num = tn_pow(tn_tanh(a), cf_two);
    tn_tensor *den = tn_add(tn_sigmoid(a), cf_one);
    return tn_div(num, den);   /* joins tanh, pow; the sigmoid-add chain is its outside operand */
}
typedef struct { int64_t fused, fallbacks, launches, captures; } cf_counts;
static cf_counts cf_now(void) {
    const tn_cuda_stats s = tn_cuda_memory_stats();
    cf_counts c = {s.num_fused_elementwise, s.num_fused_elementwise_fallbacks, s.num_graph_launches, s.num_graph_captures};
    return c;
}
static void cf_setenv(const char *name, const char *value, char *saved, size_t n, bool *had) {
    const char *e = getenv(name);
    *had = e != NULL;
    if (e) snprintf(saved, n, "%s", e);
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}
static void cf_restore(const char *name, const char *saved, bool had) {
    if (had) setenv(name, saved, 1);
    else unsetenv(name);
}

TEST(gpu_fused_elementwise_replay) {
    const tn_dtype dts[2] = {TN_F32, TN_F64};
    for (int di = 0; di < 2; di++) {
        const tn_dtype dt = dts[di];
        tn_scope_begin();
        tn_manual_seed(22);
        cf_scale = tn_to(tn_to_dtype(tn_rand(TN_SHAPE(1, 24), TN_F32), dt), TN_CUDA);   /* broadcast over the batch */
        cf_bias = tn_to(tn_to_dtype(tn_randn(TN_SHAPE(24), TN_F32), dt), TN_CUDA);
        cf_two = tn_to(tn_scalar_tensor(2.0, dt), TN_CUDA);   /* 0-d on the device */
        cf_one = tn_scalar_tensor(1.0, TN_F64);                /* 0-d on the host, float64 (converted as the op converts it) */
        tn_tensor *x0 = tn_to(tn_to_dtype(tn_randn(TN_SHAPE(6, 24), TN_F32), dt), TN_CUDA);
        tn_graph *g = tn_jit_trace(cf_fn, NULL, &x0, 1, NULL);
        if (!g) { fail_at(__LINE__, "trace (%s): %s", tn_dtype_name(dt), tn_last_error()); tn_scope_end(); continue; }
        CHECK_MSG(tn_graph_fused_nodes(g) == 8, "%s: %d nodes fused, expected 8 (three chains)", tn_dtype_name(dt), tn_graph_fused_nodes(g));
        CHECK(tn_graph_set_dynamic(g, 0, 0) == 0);
        tn_no_grad_begin();
        /* the planning run, the first served, the capture (where the backend captures), launches; then another batch */
        const int64_t batch[7] = {6, 6, 6, 6, 6, 11, 11};
        int64_t launches = 0;
        for (int r = 0; r < 7; r++) {
            tn_scope_begin();
            tn_tensor *x = tn_to(tn_to_dtype(tn_randn(TN_SHAPE(batch[r], 24), TN_F32), dt), TN_CUDA);
            tn_tensor *want = cf_fn(&x, 1, NULL);
            const cf_counts c0 = cf_now();
            tn_tensor *y = tn_graph_forward(g, x);
            const cf_counts c1 = cf_now();
            const double d = y ? cf_maxdiff(y, want) : INFINITY;
            CHECK_MSG(d == 0, "%s run %d (batch %lld): the fused replay differs from eager by %g (%s)", tn_dtype_name(dt), r, (long long)batch[r], d,
                      y ? "" : tn_last_error());
            const int64_t launched = c1.launches - c0.launches, captured = c1.captures - c0.captures, fused = c1.fused - c0.fused;
            /* a launched replay calls no entry on the host; every other (a capture too: it records the calls): one call per chain */
            CHECK_MSG(launched && !captured ? fused == 0 : fused == 3, "%s run %d: %lld fused calls, %lld launches, %lld captures (expected 3 calls or a launch)",
                      tn_dtype_name(dt), r, (long long)fused, (long long)launched, (long long)captured);
            launches += launched;
            CHECK_MSG(c1.fallbacks == c0.fallbacks, "%s run %d: %lld chains declined", tn_dtype_name(dt), r, (long long)(c1.fallbacks - c0.fallbacks));
            tn_scope_end();
        }
        const char *ge = getenv("TN_CUDA_GRAPHS");
        const bool must_capture = !tn_cuda_is_available() && !(ge && !strcmp(ge, "0"));   /* the stand-in captures this replay; a GPU may decline */
        CHECK_MSG(!must_capture || launches >= 2, "%s: %lld captured replays launched (expected the steady runs)", tn_dtype_name(dt), (long long)launches);
        /* the members one by one (the entry declines: the same bits), and a strided input; graphs off */
        char sg[16] = "", sf[16] = "";
        bool hg, hf;
        cf_setenv("TN_CUDA_GRAPHS", "0", sg, sizeof sg, &hg);
        tn_scope_begin();
        tn_tensor *x = tn_to(tn_to_dtype(tn_randn(TN_SHAPE(6, 24), TN_F32), dt), TN_CUDA);
        tn_tensor *fused = tn_to(tn_graph_forward(g, x), TN_CPU);
        cf_setenv("TN_CUDA_FUSED_ELEMENTWISE", "0", sf, sizeof sf, &hf);
        const cf_counts c0 = cf_now();
        tn_tensor *each = tn_graph_forward(g, x);
        const cf_counts c1 = cf_now();
        cf_restore("TN_CUDA_FUSED_ELEMENTWISE", sf, hf);
        CHECK_MSG(cf_maxdiff(each, fused) == 0, "%s: the fused replay differs from the members one by one by %g", tn_dtype_name(dt), cf_maxdiff(each, fused));
        CHECK_MSG(c1.fused == c0.fused && c1.fallbacks - c0.fallbacks == 3, "%s declined: %lld fused, %lld declined (expected 0, 3)", tn_dtype_name(dt),
                  (long long)(c1.fused - c0.fused), (long long)(c1.fallbacks - c0.fallbacks));
        tn_tensor *wide = tn_to(tn_to_dtype(tn_randn(TN_SHAPE(6, 48), TN_F32), dt), TN_CUDA);
        tn_tensor *xs = tn_slice(wide, 1, 1, 48, 2);   /* [6, 24], stride 2 */
        tn_tensor *ys = tn_graph_forward(g, xs);
        CHECK_MSG(ys && cf_maxdiff(ys, cf_fn(&xs, 1, NULL)) == 0, "%s strided input: differs from eager by %g", tn_dtype_name(dt),
                  ys ? cf_maxdiff(ys, cf_fn(&xs, 1, NULL)) : INFINITY);
        tn_scope_end();
        cf_restore("TN_CUDA_GRAPHS", sg, hg);
        tn_no_grad_end();
        /* with grad enabled the members run one by one (autograd needs each node) */
        tn_tensor *xg = tn_to(tn_to_dtype(tn_randn(TN_SHAPE(3, 24), TN_F32), dt), TN_CUDA);
        tn_requires_grad_(xg, true);
        const cf_counts g0 = cf_now();
        tn_tensor *yg = tn_graph_forward(g, xg);
        CHECK(yg && tn_backward(tn_sum(yg)) == 0 && tn_grad(xg));
        CHECK(cf_now().fused == g0.fused);
        tn_graph_free(g);
        cf_scale = cf_bias = cf_two = cf_one = NULL;
        tn_scope_end();
    }
}

/* The entry itself, on the table registered for "cuda". */
TEST(gpu_fused_elementwise_entry) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    if (!be || !be->fused_elementwise) { CHECK(be != NULL); return; }
    tn_scope_begin();
    tn_manual_seed(5);
    for (int di = 0; di < 2; di++) {
        const tn_dtype dt = di ? TN_F64 : TN_F32;
        /* x transposed (strided), b broadcast [5], s a 0-d host scalar:
           out = hardtanh(sigmoid(x * b) - 0.5 s, -0.3, 0.4) ^ b ... as four members */
        tn_tensor *x = tn_transpose(tn_to(tn_to_dtype(tn_randn(TN_SHAPE(5, 4), TN_F32), dt), TN_CUDA), 0, 1);
        tn_tensor *b = tn_to(tn_to_dtype(tn_add_scalar(tn_rand(TN_SHAPE(5), TN_F32), 0.5), dt), TN_CUDA);
        tn_tensor *s = tn_scalar_tensor(3.0, dt);
        tn_tensor *ext[3] = {x, b, s};
        tn__fused_prog p;
        memset(&p, 0, sizeof p);
        p.n = 4;
        p.m[0].binary = true, p.m[0].op = MUL, p.m[0].src[0] = 0, p.m[0].src[1] = 1;
        p.m[1].binary = false, p.m[1].op = SIGMOID, p.m[1].src[0] = -1;
        p.m[2].binary = true, p.m[2].op = SUB, p.m[2].src[0] = -1, p.m[2].src[1] = 2, p.m[2].params[0] = 0.5;   /* alpha */
        p.m[3].binary = false, p.m[3].op = HARDTANH, p.m[3].src[0] = -1, p.m[3].params[0] = -0.3, p.m[3].params[1] = 0.4;
        tn_tensor *out = tn_to(tn_zeros(TN_SHAPE(4, 5), dt), TN_CUDA);
        CHECK(be->fused_elementwise(out, ext, 3, &p) == 0);
        tn_tensor *want = tn_hardtanh(tn_sub_alpha(tn_sigmoid(tn_mul(x, b)), tn_to(s, TN_CUDA), 0.5), .min_val = -0.3, .max_val = 0.4);
        CHECK_MSG(cf_maxdiff(out, want) == 0, "%s: the entry differs from the ops by %g", tn_dtype_name(dt), cf_maxdiff(out, want));
        /* 0 elements: nothing to do */
        tn_tensor *e0 = tn_to(tn_zeros(TN_SHAPE(0, 5), dt), TN_CUDA), *x0 = tn_to(tn_zeros(TN_SHAPE(0, 5), dt), TN_CUDA);
        tn_tensor *ext0[3] = {x0, b, s};
        CHECK(be->fused_elementwise(e0, ext0, 3, &p) == 0);
        /* declined (1, no error, nothing written): an op with no kernel, a half result, an operand out of range, too many members */
        tn_tensor *before = tn_keep(tn_to(out, TN_CPU));
        tn__fused_prog q = p;
        q.m[1].binary = false, q.m[1].op = LOGICAL_NOT;
        CHECK(be->fused_elementwise(out, ext, 3, &q) == 1);
        q = p;
        q.m[0].binary = true, q.m[0].op = ATAN2;
        CHECK(be->fused_elementwise(out, ext, 3, &q) == 1);
        q = p;
        q.m[2].src[1] = 3;
        CHECK(be->fused_elementwise(out, ext, 3, &q) == 1);
        q = p;
        q.m[0].src[0] = -1;   /* the first member has no previous result */
        CHECK(be->fused_elementwise(out, ext, 3, &q) == 1);
        q = p;
        q.n = TN__FUSED_MAX + 1;
        CHECK(be->fused_elementwise(out, ext, 3, &q) == 1);
        tn_tensor *h = tn_to(tn_zeros(TN_SHAPE(4, 5), TN_F16), TN_CUDA);
        CHECK(be->fused_elementwise(h, ext, 3, &p) == 1);
        CHECK_MSG(cf_maxdiff(out, before) == 0, "a declined call wrote its result");
        tn_release(before);
        /* an operand of another dtype: an error that names it */
        tn_tensor *bi = tn_to(tn_ones(TN_SHAPE(5), TN_I64), TN_CUDA);
        tn_tensor *extb[3] = {x, bi, s};
        CHECK_ERR(be->fused_elementwise(out, extb, 3, &p) == 0, "operand 1");
    }
    tn_scope_end();
}
#endif
