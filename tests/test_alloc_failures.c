/* test_alloc_failures.c — every allocation an op makes may fail, and the op must fail
 * cleanly: NULL (or -1) with a message, no crash, no leak (issue 18: "any internal call
 * that can fail is checked").
 *
 * Each op below runs once to count its allocations (TN_MALLOC / TN_REALLOC, hooked here),
 * then once per allocation k with the k-th one failing, each run in a forked child: a
 * crash (a NULL dereferenced, a saved tensor missing in a backward) is a failed check,
 * and under AddressSanitizer (make test SANITIZE=1) so is a leak on the error path. The
 * ops cover the op families with their backwards: GEMM, convolutions, pooling, resizing,
 * norms, losses, joins, indexing, lanes, reductions, attention, im2col, views.
 *
 * Compiles the header itself with the hooks (tests/tsan.mk's rule, as test_gemm); linked
 * against an implementation without them it would inject nothing, which fails the check
 * that each op allocates. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
static long fi_count, fi_fail_at = -1;   /* allocation fi_fail_at (counted from 1) fails; -1: none */
static void *fi_malloc(size_t n) { return fi_fail_at > 0 && ++fi_count == fi_fail_at ? NULL : malloc(n); }
static void *fi_realloc(void *p, size_t n) { return fi_fail_at > 0 && ++fi_count == fi_fail_at ? NULL : realloc(p, n); }
#define TN_MALLOC(sz) fi_malloc(sz)
#define TN_REALLOC(p, sz) fi_realloc(p, sz)
#define TN_FREE(p) free(p)
#define TN_TESTING
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

/* inputs: a random [a, b, c, d] of nd dims; a leaf that requires grad; a backward */
static tn_tensor *R(int64_t a, int64_t b, int64_t c, int64_t d, int nd) { int64_t s[4] = {a, b, c, d}; return tn_randn(s, nd, TN_F32); }
static tn_tensor *RG(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
static int bw(tn_tensor *y) { return y ? tn_backward(tn_sum(y)) : -1; }
/* the ops, each X(name, { body }) */
#define OPS(X) \
 X(add, { tn_add(R(4,5,0,0,2), R(5,0,0,0,1)); }) \
 X(matmul, { tn_matmul(R(64,64,0,0,2), R(64,64,0,0,2)); }) \
 X(matmul_bw, { tn_tensor *a = RG(R(8,9,0,0,2)); bw(tn_matmul(a, R(9,3,0,0,2))); }) \
 X(bmm_bcast, { tn_matmul(R(2,3,4,5,4), R(5,6,0,0,2)); }) \
 X(conv_bw, { tn_tensor *x = RG(R(2,3,8,8,4)), *w = RG(R(4,3,3,3,4)); bw(tn_conv2d(x, w, RG(R(4,0,0,0,1)), .padding = 1)); }) \
 X(conv_g_bw, { tn_tensor *x = RG(R(2,4,8,8,4)), *w = RG(R(4,2,3,3,4)); bw(tn_conv2d(x, w, NULL, .stride = 2, .padding = 1, .groups = 2)); }) \
 X(convt_bw, { tn_tensor *x = RG(R(2,3,5,5,4)), *w = RG(R(3,2,3,3,4)); bw(tn_conv_transpose2d(x, w, NULL, .stride = 2, .padding = 1, .output_padding = 1)); }) \
 X(conv1d, { tn_conv1d(R(2,3,9,0,3), R(4,3,3,0,3), NULL); }) \
 X(maxpool_bw, { tn_tensor *x = RG(R(2,3,8,8,4)), *i = NULL; bw(tn_max_pool2d_with_indices(x, &i, 3, .stride = 2, .padding = 1)); }) \
 X(avgpool_bw, { tn_tensor *x = RG(R(2,3,8,8,4)); bw(tn_avg_pool2d(x, 3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false)); }) \
 X(adamax_bw, { tn_tensor *x = RG(R(2,3,8,8,4)), *i = NULL; bw(tn_adaptive_max_pool2d(x, 3, 5, &i)); }) \
 X(adaavg_bw, { tn_tensor *x = RG(R(2,3,8,8,4)); bw(tn_adaptive_avg_pool2d(x, 3, 5)); }) \
 X(interp_n, { tn_tensor *x = RG(R(1,2,4,4,4)); bw(tn_interpolate(x, .size = TN_INTS(7, 9, 5))); }) \
 X(interp_b, { tn_tensor *x = RG(R(1,2,4,4,4)); bw(tn_interpolate(x, .size = TN_INTS(7, 9), .mode = "bilinear", .align_corners = true)); }) \
 X(bn_bw, { tn_tensor *x = RG(R(4,3,5,5,4)); bw(tn_batch_norm(x, tn_zeros(TN_SHAPE(3), TN_F32), tn_ones(TN_SHAPE(3), TN_F32), .weight = RG(tn_ones(TN_SHAPE(3), TN_F32)), .bias = RG(tn_zeros(TN_SHAPE(3), TN_F32)), .training = true)); }) \
 X(ln_bw, { tn_tensor *x = RG(R(4,3,5,0,3)); bw(tn_layer_norm(x, TN_SHAPE(3, 5), .weight = RG(tn_ones(TN_SHAPE(3, 5), TN_F32)), .bias = RG(tn_zeros(TN_SHAPE(3, 5), TN_F32)))); }) \
 X(gn_bw, { tn_tensor *x = RG(R(4,6,5,0,3)); bw(tn_group_norm(x, 3)); }) \
 X(in_bw, { tn_tensor *x = RG(R(4,6,5,0,3)); bw(tn_instance_norm(x)); }) \
 X(softmax_bw, { tn_tensor *x = RG(R(4,6,5,0,3)); bw(tn_log_softmax(x, 1)); bw(tn_softmax(tn_detach(x), 0)); }) \
 X(ce_bw, { tn_tensor *x = RG(R(8,5,0,0,2)); bw(tn_cross_entropy(x, tn_randint(0, 5, TN_SHAPE(8), TN_I64, NULL))); }) \
 X(ce_ex, { tn_tensor *x = RG(R(8,5,3,0,3)); bw(tn_cross_entropy(x, tn_randint(0, 5, TN_SHAPE(8, 3), TN_I64, NULL), .weight = tn_ones(TN_SHAPE(5), TN_F32), .ignore_index = 1, .label_smoothing = 0.1)); }) \
 X(nll, { tn_tensor *x = RG(R(8,5,0,0,2)); bw(tn_nll_loss(x, tn_randint(0, 5, TN_SHAPE(8), TN_I64, NULL))); }) \
 X(mse, { tn_tensor *x = RG(R(8,5,0,0,2)); bw(tn_mse_loss(x, R(8,5,0,0,2))); }) \
 X(cat_stack, { tn_tensor *a = RG(R(2,3,0,0,2)); bw(tn_cat(((tn_tensor *[]){a, a, a}), 3, .dim = 1)); bw(tn_stack(((tn_tensor *[]){a, a}), 2)); }) \
 X(repeat_roll_flip, { tn_tensor *a = RG(R(2,3,4,0,3)); bw(tn_repeat(a, TN_SHAPE(2, 1, 3, 1))); bw(tn_roll(a, (const int64_t[]){1, 2}, (const int64_t[]){0, 2}, 2)); bw(tn_flip(a, TN_SHAPE(0, 2))); }) \
 X(pad_tril, { tn_tensor *a = RG(R(3,4,0,0,2)); bw(tn_pad(a, TN_SHAPE(1, 2, -1, 1), .value = 0.5)); bw(tn_tril(a)); }) \
 X(index, { tn_tensor *a = RG(R(5,4,3,0,3)); tn_tensor *i = tn_from_data((const int64_t[]){0, 4, 2}, TN_SHAPE(3), TN_I64); bw(tn_index(a, (tn_tensor *[]){i, NULL, tn_from_data((const int64_t[]){1, 0, 2}, TN_SHAPE(3), TN_I64)}, 3)); }) \
 X(index_mask, { tn_tensor *a = RG(R(5,4,0,0,2)); bw(tn_index(a, (tn_tensor *[]){tn_gt_scalar(tn_detach(a), 0)}, 1)); }) \
 X(index_put, { tn_tensor *a = RG(R(5,4,0,0,2)); tn_tensor *i = tn_from_data((const int64_t[]){0, 4, 0}, TN_SHAPE(3), TN_I64); bw(tn_index_put(a, &i, 1, RG(R(3,4,0,0,2)), .accumulate = true)); }) \
 X(gather_scatter, { tn_tensor *a = RG(R(5,4,0,0,2)); tn_tensor *i = tn_randint(0, 4, TN_SHAPE(5, 2), TN_I64, NULL); bw(tn_gather(a, 1, i)); bw(tn_scatter_add(a, 1, i, R(5,2,0,0,2))); bw(tn_index_select(a, 0, tn_randint(0, 5, TN_SHAPE(7), TN_I64, NULL))); }) \
 X(sort_topk, { tn_tensor *a = RG(R(5,40,0,0,2)), *i = NULL; bw(tn_sort(a, &i, .dim = 1, .descending = true)); bw(tn_topk(a, 3, &i, .dim = 1)); bw(tn_max_dim(a, 0, &i)); tn_argmax(a); }) \
 X(scans, { tn_tensor *a = RG(R(5,4,0,0,2)); bw(tn_cumsum(a, 1)); bw(tn_cumprod(a, 0)); bw(tn_logsumexp(a, TN_SHAPE(1))); }) \
 X(reduce, { tn_tensor *a = RG(R(5,4,3,0,3)); bw(tn_var_dims(a, TN_SHAPE(0, 2), .keepdim = true)); bw(tn_norm_dims(a, TN_SHAPE(1))); bw(tn_mean(a)); bw(tn_prod(a)); bw(tn_amax(a, TN_SHAPE(1))); }) \
 X(embedding, { tn_tensor *w = RG(R(10,4,0,0,2)); bw(tn_embedding_padded(tn_randint(0, 10, TN_SHAPE(3, 5), TN_I64, NULL), w, 2)); tn_one_hot(tn_randint(0, 4, TN_SHAPE(6), TN_I64, NULL)); }) \
 X(dropout, { tn_tensor *x = RG(R(4,6,5,5,4)); bw(tn_dropout(x, .p = 0.3)); bw(tn_dropout2d(x, .p = 0.3)); }) \
 X(sdpa, { tn_tensor *q = RG(R(2,5,8,0,3)); bw(tn_scaled_dot_product_attention(q, R(2,6,8,0,3), R(2,6,4,0,3), .is_causal = true)); }) \
 X(linear_3d, { tn_tensor *x = RG(R(2,3,5,0,3)); bw(tn_linear(x, RG(R(4,5,0,0,2)), RG(R(4,0,0,0,1)))); bw(tn_matmul(x, R(5,0,0,0,1))); }) \
 X(linear_bil, { tn_tensor *x = RG(R(4,5,0,0,2)); bw(tn_linear(x, RG(R(3,5,0,0,2)), RG(R(3,0,0,0,1)))); bw(tn_bilinear(x, R(4,6,0,0,2), R(2,5,6,0,3), NULL)); }) \
 X(im2col, { tn_tensor *x = RG(R(2,3,6,6,4)); tn_tensor *c = tn_im2col(x, (const int64_t[]){2,2}, (const int64_t[]){1,1}, (const int64_t[]){1,1}, (const int64_t[]){2,2}); bw(c); if (c) bw(tn_col2im(tn_detach(c), (const int64_t[]){6,6}, (const int64_t[]){2,2}, (const int64_t[]){1,1}, (const int64_t[]){1,1}, (const int64_t[]){2,2})); }) \
 X(pixel, { tn_tensor *x = RG(R(1,8,3,3,4)); bw(tn_pixel_shuffle(x, 2)); bw(tn_pixel_unshuffle(R(1,2,4,4,4), 2)); }) \
 X(unfold_views, { tn_tensor *a = RG(R(4,9,0,0,2)); bw(tn_unfold(a, 1, 3, 2)); bw(tn_contiguous(tn_transpose(a, 0, 1))); bw(tn_reshape(tn_transpose(a, 0, 1), TN_SHAPE(-1))); }) \
 X(elementwise, { tn_tensor *a = RG(R(4,9,0,0,2)); bw(tn_where(tn_gt_scalar(tn_detach(a), 0), a, tn_pow(a, tn_scalar(2.0)))); bw(tn_clamp(a, .min = -0.5, .max = 0.5)); }) \
 X(inplace, { tn_tensor *a = RG(R(4,9,0,0,2)); tn_tensor *b = tn_mul_scalar(a, 2); tn_mul_scalar_(tn_narrow(b, 0, 1, 2), 3); bw(b); }) \
 X(randoms, { tn_randperm(50, TN_I64, NULL); tn_rand(TN_SHAPE(100000), TN_F32); tn_bernoulli(tn_rand(TN_SHAPE(30), TN_F32), NULL); tn_arange(0, 100, 1, TN_I32); tn_linspace(0, 1, 30, TN_F64); tn_eye(5, 7, TN_F32); })

#define DEF(name, ...) static void op_##name(void) __VA_ARGS__
OPS(DEF)
typedef struct { const char *name; void (*fn)(void); } op_t;
#define ENTRY(name, ...) {#name, op_##name},
static const op_t ops[] = {OPS(ENTRY)};

/* Run op in a child with allocation k failing (k = 0: none; the child then reports its
   allocation count through fd). Exit status 0: clean; 7: leaks (LSan); else a crash. */
static int run_child(const op_t *op, long k, int fd) {
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        alarm(60);
        tn_scope_begin();
        tn_manual_seed(1);
        fi_count = 0;
        fi_fail_at = k ? k : 1L << 60;
        op->fn();
        long count = fi_count;
        fi_fail_at = -1;
        tn_scope_end();
        if (fd >= 0 && write(fd, &count, sizeof count) != (ssize_t)sizeof count) _exit(3);
#ifdef TN_TEST_LSAN
        tn_cpu_empty_cache();    /* cached blocks are not leaks */
        tn__gemm_free_cache();
        if (__lsan_do_recoverable_leak_check()) _exit(7);
#endif
        _exit(0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void sweep(const op_t *op) {
    long total = -1;
    int fd[2];
    if (pipe(fd) != 0) { CHECK_MSG(0, "pipe failed"); return; }
    int st = run_child(op, 0, fd[1]);
    close(fd[1]);
    if (read(fd[0], &total, sizeof total) != (ssize_t)sizeof total) total = -1;
    close(fd[0]);
    CHECK_MSG(st == 0 && total > 0, "%s: the run without failures %s (status %d, %ld allocations)", op->name,
              total == 0 ? "allocated nothing through TN_MALLOC: the hooks are not in this build" : "failed", st, total);
    int bad = 0;
    for (long k = 1; k <= total; k++) {
        st = run_child(op, k, -1);
        if (st != 0 && bad++ < 3)
            printf("  %s: with allocation %ld of %ld failing: %s %d\n", op->name, k, total, st == 7 ? "a leak, status" : st > 128 ? "signal" : "exit status", st > 128 ? st - 128 : st);
    }
    CHECK_MSG(bad == 0, "%s: %d of its %ld allocations failing crash or leak", op->name, bad, total);
}

int main(void) {
    tn_test_current = "alloc_failures";
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) sweep(&ops[o]);
    return tn_test_report();
}
