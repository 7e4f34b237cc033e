/* cuda_cases.h — the GPU tests that need only a backend registered for TN_CUDA: every op
 * and its gradient against the CPU, the same random numbers, a CNN training step. Included
 * by test_cuda.c (the real GPU unit) and test_devices.c (a checking stand-in on the CPU,
 * so the header's device handling is tested on every machine). Include after tn_test.h. */
#ifndef CUDA_CASES_H
#define CUDA_CASES_H
/* a GPU value against the CPU's: NaN only where NaN is expected, an infinity only where the
   same infinity is (tol * inf would accept any value there), else |a - b| <= tol (1 + |b|) */
static bool same_value(double a, double b, double tol) {
    if (a != a || b != b) return a != a && b != b;
    if (isinf(a) || isinf(b)) return a == b;
    return a == b || fabs(a - b) <= tol * (1 + fabs(b));
}
static int max_diff_at(int line, const char *what, tn_tensor *gpu, tn_tensor *cpu, double tol) {
    if (!gpu || !cpu) { fail_at(line, "%s: %s", what, tn_last_error()); return 1; }
    if (gpu->device != TN_CUDA) { fail_at(line, "%s: result is on %s, expected cuda", what, tn_device_name(gpu->device)); return 1; }
    tn_tensor *h = tn_to_dtype(tn_to(gpu, TN_CPU), TN_F64), *c = tn_to_dtype(cpu, TN_F64);
    if (!h || tn_ndim(h) != tn_ndim(c) || tn_numel(h) != tn_numel(c)) { fail_at(line, "%s: shapes differ", what); return 1; }
    h = tn_contiguous(h);
    c = tn_contiguous(c);
    const double *a = (const double *)tn_data_ptr(h), *b = (const double *)tn_data_ptr(c);
    for (int64_t i = 0; i < tn_numel(h); i++) {
        if (!same_value(a[i], b[i], tol)) { fail_at(line, "%s: element %lld is %.9g on the GPU, %.9g on the CPU", what, (long long)i, a[i], b[i]); return 1; }
    }
    tn_test_passed++;
    return 0;
}
#define SAME(what, gpu, cpu, tol) max_diff_at(__LINE__, what, gpu, cpu, tol)

typedef tn_tensor *(*op_fn)(tn_tensor *const *in);
/* fn on CPU inputs and on their GPU copies: values, and the gradients of
   sum(out * w) for a fixed random w when grad is set */
static void check_op(int line, const char *what, op_fn fn, tn_tensor *const *cpu_in, int n, double tol, bool grad) {
    if (!tn_test_selected("TN_CASE_FILTER", what)) return;   /* TN_CASE_FILTER=conv2d: only the cases so named */
    tn_scope_begin();
    tn_tensor *ci[8], *gi[8];
    for (int i = 0; i < n; i++) {
        ci[i] = tn_detach(cpu_in[i]);
        gi[i] = tn_detach(tn_to(cpu_in[i], TN_CUDA));
        bool fl = tn_dtype_is_floating(ci[i]->dtype);
        tn_requires_grad_(ci[i], grad && fl);
        tn_requires_grad_(gi[i], grad && fl);
    }
    tn_tensor *co = fn(ci), *go = fn(gi);
    if (max_diff_at(line, what, go, co, tol) == 0 && grad) {
        tn_tensor *w = tn_rand_like(tn_to_dtype(co, tn_dtype_is_floating(co->dtype) ? co->dtype : TN_F32));
        if (tn_backward(tn_sum(tn_mul(co, w))) || tn_backward(tn_sum(tn_mul(go, tn_to(w, TN_CUDA))))) fail_at(line, "%s backward: %s", what, tn_last_error());
        else
            for (int i = 0; i < n; i++)
                if (ci[i]->requires_grad) {
                    char name[96];
                    snprintf(name, sizeof name, "%s grad %d", what, i);
                    if (!tn_grad(gi[i]) && !tn_grad(ci[i])) continue;   /* an input the output does not depend on */
                    /* a gradient that sums over repeated indices (gather, cummax, repeat_interleave)
                       adds with atomics on the GPU, in any order: a few float32 ulps apart */
                    max_diff_at(line, name, tn_grad(gi[i]), tn_grad(ci[i]), tol * 10 > 1e-6 ? tol * 10 : 1e-6);
                }
    }
    tn_scope_end();
}
#define CHECK_OP(what, fn, tol, grad, ...) do { tn_tensor *in_[] = {__VA_ARGS__}; check_op(__LINE__, what, fn, in_, (int)(sizeof in_ / sizeof in_[0]), tol, grad); } while (0)

static tn_tensor *randn(const int64_t *shape, int nd) { return tn_randn(shape, nd, TN_F32); }
#define RANDN(...) randn(TN_SHAPE(__VA_ARGS__))

#define UNARY_FN(name, expr) static tn_tensor *name(tn_tensor *const *x) { return expr; }
UNARY_FN(f_exp, tn_exp(x[0]))
UNARY_FN(f_log, tn_log(tn_abs(x[0])))
UNARY_FN(f_tanh, tn_tanh(x[0]))
UNARY_FN(f_sigmoid, tn_sigmoid(x[0]))
UNARY_FN(f_relu, tn_relu(x[0]))
UNARY_FN(f_gelu, tn_gelu(x[0]))
UNARY_FN(f_silu, tn_silu(x[0]))
UNARY_FN(f_sqrt, tn_sqrt(tn_abs(x[0])))
UNARY_FN(f_sin, tn_sin(x[0]))
UNARY_FN(f_clamp, tn_clamp(x[0], .min = -0.5, .max = 0.5))
UNARY_FN(f_floor, tn_floor(x[0]))
UNARY_FN(f_isnan, tn_isnan(tn_log(x[0])))
UNARY_FN(f_add, tn_add(x[0], x[1]))
UNARY_FN(f_sub_alpha, tn_sub_alpha(x[0], x[1], 2.5))
UNARY_FN(f_mul, tn_mul(x[0], x[1]))
UNARY_FN(f_div, tn_div(x[0], x[1]))
UNARY_FN(f_pow, tn_pow(tn_abs(x[0]), x[1]))
UNARY_FN(f_maximum, tn_maximum(x[0], x[1]))
UNARY_FN(f_lt, tn_lt(x[0], x[1]))
UNARY_FN(f_remainder, tn_remainder(x[0], x[1]))
UNARY_FN(f_where, tn_where(tn_gt(x[0], x[1]), x[0], x[1]))
UNARY_FN(f_lerp, tn_lerp(x[0], x[1], tn_sigmoid(x[2])))
UNARY_FN(f_addcmul, tn_addcmul(x[0], x[1], x[2], .value = 0.5))
UNARY_FN(f_sum, tn_sum(x[0]))
UNARY_FN(f_sum_dim, tn_sum_dims(x[0], TN_DIMS(1), .keepdim = true))
UNARY_FN(f_mean_dims, tn_mean_dims(x[0], TN_DIMS(0, 2)))
UNARY_FN(f_sum_rows, tn_sum_dims(x[0], TN_DIMS(0)))
UNARY_FN(f_amax_01, tn_amax(x[0], TN_DIMS(0, 1)))
UNARY_FN(f_matmul_strided, tn_matmul(tn_slice(tn_slice(x[0], -2, 0, INT64_MAX, 2), -1, 0, INT64_MAX, 2), x[1]))
UNARY_FN(f_amax, tn_amax(x[0], TN_DIMS(-1)))
UNARY_FN(f_prod, tn_prod_dims(x[0], TN_DIMS(1)))
UNARY_FN(f_var, tn_var_dims(x[0], TN_DIMS(1)))
UNARY_FN(f_norm, tn_norm(x[0]))
UNARY_FN(f_logsumexp, tn_logsumexp(x[0], TN_DIMS(-1)))
UNARY_FN(f_argmax, tn_argmax_dim(x[0], .dim = 1))
UNARY_FN(f_argmax_flat, tn_argmax(x[0]))
UNARY_FN(f_argmin_flat, tn_argmin(x[0]))
UNARY_FN(f_max_flat, tn_amax(x[0], NULL, 0))
UNARY_FN(f_softmax, tn_softmax(x[0], -1))
UNARY_FN(f_log_softmax, tn_log_softmax(x[0], 1))
UNARY_FN(f_cumsum, tn_cumsum(x[0], 1))
/* stable: the GPU's sort always is (a valid order for stable=False too), while the CPU's
   stable=False follows PyTorch's CPU order of ties (std::sort's) */
UNARY_FN(f_sort, tn_sort(x[0], NULL, .descending = true, .stable = true))
UNARY_FN(f_argsort, tn_to_dtype(tn_argsort(x[0], .dim = 0, .stable = true), TN_F64))
UNARY_FN(f_argsort_last, tn_to_dtype(tn_argsort(x[0], .stable = true), TN_F64))
UNARY_FN(f_argsort_desc, tn_to_dtype(tn_argsort(x[0], .descending = true, .stable = true), TN_F64))
UNARY_FN(f_sort_asc, tn_sort(x[0], NULL, .stable = true))
UNARY_FN(f_matmul, tn_matmul(x[0], x[1]))
UNARY_FN(f_lshift, tn_bitwise_left_shift(x[0], x[1]))
UNARY_FN(f_rshift, tn_bitwise_right_shift(x[0], x[1]))
UNARY_FN(f_matmul_tt, tn_matmul(tn_t(x[0]), tn_t(x[1])))
UNARY_FN(f_bmm, tn_bmm(x[0], x[1]))
UNARY_FN(f_addmm, tn_addmm(x[2], x[0], x[1], .beta = 0.5, .alpha = 2.0))
UNARY_FN(f_index_select, tn_index_select(x[0], 1, x[1]))
UNARY_FN(f_gather, tn_gather(x[0], 1, x[1]))
UNARY_FN(f_scatter_add, tn_scatter_add(x[0], 0, x[1], x[2]))
UNARY_FN(f_masked_fill, tn_masked_fill(x[0], tn_gt(x[0], x[1]), -1.0))
UNARY_FN(f_cat, tn_cat(x, 2, .dim = 1))
UNARY_FN(f_cross_entropy, tn_cross_entropy(x[0], x[1]))
UNARY_FN(f_embedding, tn_embedding(x[1], x[0]))
UNARY_FN(f_conv2d, tn_conv2d(x[0], x[1], x[2], .stride_hw = {1, 2}, .padding_hw = {1, 0}))
UNARY_FN(f_max_pool, tn_max_pool2d(x[0], 2, .stride = 2))
UNARY_FN(f_avg_pool, tn_avg_pool2d(x[0], 3, .stride = 2, .padding = 1))
UNARY_FN(f_layer_norm, tn_layer_norm(x[0], TN_SHAPE(5), .weight = x[1], .bias = x[2]))
UNARY_FN(f_batch_norm, tn_batch_norm(x[0], NULL, NULL, .weight = x[1], .bias = x[2], .training = true))
UNARY_FN(f_transpose_contig, tn_contiguous(tn_transpose(x[0], 0, 2)))
UNARY_FN(f_max_pool_pad, tn_max_pool2d(x[0], 3, .stride = 2, .padding = 1))
UNARY_FN(f_max_pool_ceil, tn_max_pool2d(x[0], 2, .stride = 2, .ceil_mode = true))        /* an extra window: the composite */
UNARY_FN(f_max_pool_dil, tn_max_pool2d(x[0], 2, .stride = 1, .dilation = 2))        /* dilation: the composite */
UNARY_FN(f_max_pool1d, tn_max_pool1d(x[0], 3, .stride = 2, .padding = 1))
UNARY_FN(f_avg_pool_excl, tn_avg_pool2d(x[0], 3, .stride = 2, .padding = 1, .count_include_pad = false))
UNARY_FN(f_avg_pool_ceil, tn_avg_pool2d(x[0], 2, .stride = 2, .ceil_mode = true))
UNARY_FN(f_avg_pool_div, tn_avg_pool2d(x[0], 2, .kernel_size_hw = {2, 3}, .stride_hw = {1, 2}, .padding = 1, .divisor_override = 5))
UNARY_FN(f_layer_norm_plain, tn_layer_norm(x[0], TN_SHAPE(4, 6)))
UNARY_FN(f_ce_weighted, tn_cross_entropy(x[0], x[1], .weight = tn_detach(x[2]), .ignore_index = 2))
UNARY_FN(f_ce_none, tn_cross_entropy(x[0], x[1], .reduction = TN_REDUCTION_NONE))
UNARY_FN(f_ce_smoothing, tn_cross_entropy(x[0], x[1], .reduction = TN_REDUCTION_SUM, .label_smoothing = 0.1))   /* the composite */
UNARY_FN(f_convt2d, tn_conv_transpose2d(x[0], x[1], x[2], .stride_hw = {2, 1}, .padding_hw = {1, 0}, .output_padding_hw = {1, 0}, .groups = 2, .dilation_hw = {1, 2}))
UNARY_FN(f_convt2d_op, tn_conv_transpose2d(x[0], x[1], NULL, .output_padding_hw = {1, 0}, .dilation_hw = {2, 1}))   /* output_padding >= stride */
UNARY_FN(f_convt1d, tn_conv_transpose1d(x[0], x[1], x[2], .stride = 3, .padding = 1, .output_padding = 2))
UNARY_FN(f_batch_norm_plain, tn_batch_norm(x[0], NULL, NULL, .training = true))
UNARY_FN(f_batch_norm_eval, tn_batch_norm(x[0], x[1], tn_abs(x[2]), .weight = x[3], .bias = x[4], .eps = 1e-3))

TEST(gpu_ops_match_cpu) {
    tn_scope_begin();
    tn_manual_seed(7);
    tn_tensor *a = RANDN(4, 5, 6), *b = RANDN(4, 5, 6), *row = RANDN(6), *c = RANDN(4, 5, 6);
    tn_tensor *at = tn_transpose(RANDN(6, 5, 4), 0, 2); /* non-contiguous */
    CHECK_OP("exp", f_exp, 1e-5, true, a);
    /* 16-byte packs and their tails; a view whose data is not on a 16-byte boundary */
    tn_tensor *odd = RANDN(1001), *odd2 = RANDN(1001);
    CHECK_OP("exp, 1001 elements", f_exp, 1e-5, true, odd);
    CHECK_OP("exp, misaligned view", f_exp, 1e-5, true, tn_narrow(odd, 0, 1, 999));
    CHECK_OP("mul, 1001 elements", f_mul, 1e-6, true, odd, odd2);
    CHECK_OP("add, misaligned and aligned", f_add, 1e-6, true, tn_narrow(odd, 0, 3, 998), tn_narrow(odd2, 0, 0, 998));
    CHECK_OP("sub alpha, one broadcast value", f_sub_alpha, 1e-6, true, odd, RANDN(1));
    CHECK_OP("div f64, 1001 elements", f_div, 1e-12, true, tn_randn(TN_SHAPE(1001), TN_F64), tn_add_scalar(tn_rand(TN_SHAPE(1001), TN_F64), 0.5));
    CHECK_OP("log", f_log, 1e-5, true, a);
    CHECK_OP("tanh", f_tanh, 1e-5, true, at);
    CHECK_OP("sigmoid", f_sigmoid, 1e-5, true, a);
    CHECK_OP("relu", f_relu, 1e-6, true, a);
    CHECK_OP("gelu", f_gelu, 1e-5, true, a);
    CHECK_OP("silu", f_silu, 1e-5, true, a);
    CHECK_OP("sqrt", f_sqrt, 1e-5, true, a);
    CHECK_OP("sin", f_sin, 1e-5, true, at);
    CHECK_OP("clamp", f_clamp, 1e-6, true, a);
    CHECK_OP("floor", f_floor, 0, false, a);
    CHECK_OP("isnan", f_isnan, 0, false, a);
    CHECK_OP("add broadcast", f_add, 1e-6, true, a, row);
    CHECK_OP("sub alpha", f_sub_alpha, 1e-6, true, at, b);
    CHECK_OP("mul", f_mul, 1e-6, true, a, at);
    CHECK_OP("div", f_div, 1e-5, true, a, tn_add_scalar(tn_abs(b), 0.5));
    CHECK_OP("pow", f_pow, 1e-5, true, a, row);
    CHECK_OP("maximum", f_maximum, 0, true, a, b);
    CHECK_OP("lt", f_lt, 0, false, a, b);
    CHECK_OP("remainder", f_remainder, 1e-5, false, a, tn_add_scalar(tn_abs(b), 0.5));
    CHECK_OP("where", f_where, 0, true, a, b);
    CHECK_OP("lerp", f_lerp, 1e-5, true, a, b, c);
    CHECK_OP("addcmul", f_addcmul, 1e-5, true, a, b, c);
    CHECK_OP("sum", f_sum, 1e-5, true, a);
    CHECK_OP("sum dim keepdim", f_sum_dim, 1e-5, true, at);
    CHECK_OP("mean dims", f_mean_dims, 1e-5, true, a);
    CHECK_OP("amax", f_amax, 0, true, a);
    CHECK_OP("prod", f_prod, 1e-5, true, a);
    CHECK_OP("var", f_var, 1e-5, true, a);
    CHECK_OP("norm", f_norm, 1e-5, true, a);
    CHECK_OP("logsumexp", f_logsumexp, 1e-5, true, a);
    CHECK_OP("argmax", f_argmax, 0, false, a);
    /* long lanes and few outputs take the block-per-lane and two-pass paths */
    tn_tensor *big = RANDN(300001);
    CHECK_OP("sum of 300001", f_sum, 1e-5, true, big);
    CHECK_OP("amax of 300001", f_max_flat, 0, false, big);
    CHECK_OP("argmax of 300001", f_argmax_flat, 0, false, big);
    CHECK_OP("argmin of 300001", f_argmin_flat, 0, false, big);
    CHECK_OP("sum dims, long rows", f_sum_dim, 1e-5, false, RANDN(3, 70000, 2));
    /* down columns (a bias gradient): split across blocks and folded, or one split */
    CHECK_OP("sum down columns, split", f_sum_rows, 1e-5, true, RANDN(300, 40));
    CHECK_OP("sum down columns, one split", f_sum_rows, 1e-5, true, RANDN(64, 64));
    CHECK_OP("sum down columns, many", f_sum_rows, 1e-5, false, RANDN(70, 33000));
    CHECK_OP("sum down columns, int64", f_sum_rows, 0, false, tn_randint(-9, 9, TN_SHAPE(200, 40), TN_I64, NULL));
    CHECK_OP("amax down two dims", f_amax_01, 0, true, RANDN(3, 100, 50));
    tn_tensor *ties = tn_zeros(TN_SHAPE(5000), TN_F32);  /* all equal: the first index */
    CHECK_OP("argmax of ties", f_argmax_flat, 0, false, ties);
    tn_tensor *nan = tn_where(tn_gt(big, tn_scalar(3.5)), tn_full(TN_SHAPE(1), NAN, TN_F32), big); /* the first NaN wins */
    CHECK_OP("argmax with NaN", f_argmax_flat, 0, false, nan);
    CHECK_OP("argmin with NaN", f_argmin_flat, 0, false, nan);
    CHECK_OP("softmax", f_softmax, 1e-5, true, a);
    CHECK_OP("log_softmax", f_log_softmax, 1e-5, true, at);
    CHECK_OP("cumsum", f_cumsum, 1e-5, true, a);
    CHECK_OP("sort", f_sort, 0, true, a);
    CHECK_OP("argsort", f_argsort, 0, false, a);
    /* lanes of up to 2048 sort in one block (bitonic), longer ones by the merge sort: ties
       in index order (stable), NaN largest, both directions, strided lanes, integers */
    tn_tensor *ties3 = tn_floor(tn_mul_scalar(RANDN(3, 1500), 2)), *nan3 = tn_where(tn_gt(RANDN(3, 700), tn_scalar(1.2)), tn_full(TN_SHAPE(1), NAN, TN_F32), RANDN(3, 700));
    CHECK_OP("argsort ties, 1500", f_argsort_last, 0, false, ties3);
    CHECK_OP("argsort ties descending, 1500", f_argsort_desc, 0, false, ties3);
    CHECK_OP("argsort ties, 2048", f_argsort_last, 0, false, tn_floor(RANDN(2, 2048)));
    CHECK_OP("argsort ties, 3000 (merge)", f_argsort_desc, 0, false, tn_floor(RANDN(2, 3000)));
    CHECK_OP("sort with NaN", f_sort_asc, 0, true, nan3);
    CHECK_OP("argsort with NaN descending", f_argsort_desc, 0, false, nan3);
    CHECK_OP("argsort strided lanes", f_argsort, 0, false, tn_floor(RANDN(900, 3)));
    CHECK_OP("argsort int64", f_argsort_desc, 0, false, tn_randint(-20, 20, TN_SHAPE(4, 333), TN_I64, NULL));
    CHECK_OP("argsort length 1", f_argsort_last, 0, false, RANDN(5, 1));
    CHECK_OP("transpose contiguous", f_transpose_contig, 0, true, a);
    /* matmul: plain, transposed operands (no copies: cuBLAS transposes), batched, addmm */
    CHECK_OP("matmul", f_matmul, 1e-4, true, RANDN(33, 17), RANDN(17, 9));
    CHECK_OP("matmul transposed", f_matmul_tt, 1e-4, true, RANDN(17, 33), RANDN(9, 17));
    /* operands BLAS cannot take (no unit stride): packed first; a broadcast batch stays broadcast */
    CHECK_OP("matmul strided batch", f_matmul_strided, 1e-4, true, RANDN(3, 8, 10), RANDN(3, 5, 6));
    CHECK_OP("matmul strided broadcast", f_matmul_strided, 1e-4, true, RANDN(8, 10), RANDN(3, 5, 6));
    CHECK_OP("matmul 3-d by 2-d (folded)", f_matmul, 1e-4, true, tn_transpose(RANDN(5, 4, 3), 0, 2), RANDN(5, 6));
    CHECK_OP("bmm", f_bmm, 1e-4, true, RANDN(3, 8, 5), RANDN(3, 5, 7));
    CHECK_OP("addmm", f_addmm, 1e-4, true, RANDN(6, 4), RANDN(4, 3), RANDN(6, 3));
    /* shifts: counts past the width and negative ones (2025 PyTorch's 0 and sign), int64 and uint8 */
    tn_tensor *sv = tn_randint(-1000, 1000, TN_SHAPE(300), TN_I64, NULL), *sc = tn_randint(-3, 70, TN_SHAPE(300), TN_I64, NULL);
    CHECK_OP("left shift int64", f_lshift, 0, false, sv, sc);
    CHECK_OP("right shift int64", f_rshift, 0, false, sv, sc);
    CHECK_OP("left shift uint8", f_lshift, 0, false, tn_to_dtype(tn_randint(0, 256, TN_SHAPE(300), TN_I64, NULL), TN_U8),
             tn_to_dtype(tn_randint(0, 12, TN_SHAPE(300), TN_I64, NULL), TN_U8));
    CHECK_OP("right shift uint8", f_rshift, 0, false, tn_to_dtype(tn_randint(0, 256, TN_SHAPE(300), TN_I64, NULL), TN_U8),
             tn_to_dtype(tn_randint(0, 12, TN_SHAPE(300), TN_I64, NULL), TN_U8));
    CHECK_OP("matmul int64", f_matmul, 0, false, tn_randint(-5, 5, TN_SHAPE(4, 3), TN_I64, NULL), tn_randint(-5, 5, TN_SHAPE(3, 2), TN_I64, NULL));
    /* indexing */
    tn_tensor *idx = tn_from_data((int64_t[]){4, 0, 2, 2}, TN_SHAPE(4), TN_I64);
    CHECK_OP("index_select", f_index_select, 0, true, a, idx);
    CHECK_OP("gather", f_gather, 0, true, a, tn_randint(0, 5, TN_SHAPE(4, 3, 6), TN_I64, NULL));
    CHECK_OP("scatter_add (duplicates)", f_scatter_add, 1e-5, true, tn_zeros(TN_SHAPE(3, 6), TN_F32), tn_randint(0, 3, TN_SHAPE(5, 6), TN_I64, NULL), RANDN(5, 6));
    CHECK_OP("masked_fill", f_masked_fill, 0, true, a, b);
    CHECK_OP("cat", f_cat, 0, true, a, RANDN(4, 2, 6));
    /* nn */
    CHECK_OP("cross_entropy", f_cross_entropy, 1e-5, true, RANDN(16, 10), tn_randint(0, 10, TN_SHAPE(16), TN_I64, NULL));
    CHECK_OP("embedding", f_embedding, 0, true, RANDN(10, 4), tn_randint(0, 10, TN_SHAPE(3, 5), TN_I64, NULL));
    CHECK_OP("conv2d", f_conv2d, 1e-4, true, RANDN(2, 3, 9, 8), RANDN(4, 3, 3, 3), RANDN(4));
    CHECK_OP("max_pool2d", f_max_pool, 0, true, RANDN(2, 3, 8, 8));
    CHECK_OP("avg_pool2d", f_avg_pool, 1e-5, true, RANDN(2, 3, 9, 7));
    CHECK_OP("layer_norm", f_layer_norm, 1e-4, true, RANDN(3, 4, 5), RANDN(5), RANDN(5));
    CHECK_OP("batch_norm", f_batch_norm, 1e-4, true, RANDN(8, 3, 4, 4), RANDN(3), RANDN(3));
    /* the library's pooling and batch norm (cuDNN), and the cases it leaves to the composites */
    CHECK_OP("max_pool2d padded", f_max_pool_pad, 0, true, RANDN(2, 3, 9, 7));
    CHECK_OP("max_pool2d ceil_mode", f_max_pool_ceil, 0, true, RANDN(2, 3, 9, 7));
    CHECK_OP("max_pool2d dilated", f_max_pool_dil, 0, true, RANDN(2, 3, 7, 7));
    CHECK_OP("max_pool1d", f_max_pool1d, 0, true, RANDN(2, 3, 11));
    CHECK_OP("max_pool2d strided input", f_max_pool_pad, 0, true, tn_transpose(RANDN(2, 3, 7, 9), 2, 3));
    CHECK_OP("avg_pool2d excluding padding", f_avg_pool_excl, 1e-5, true, RANDN(2, 3, 9, 7));
    CHECK_OP("avg_pool2d ceil_mode", f_avg_pool_ceil, 1e-5, true, RANDN(2, 3, 9, 7));
    CHECK_OP("avg_pool2d divisor_override", f_avg_pool_div, 1e-5, true, RANDN(2, 3, 9, 7));
    CHECK_OP("cross_entropy weight, ignore_index", f_ce_weighted, 1e-5, true, RANDN(16, 10), tn_randint(0, 10, TN_SHAPE(16), TN_I64, NULL), tn_rand(TN_SHAPE(10), TN_F32));
    CHECK_OP("cross_entropy unreduced, wide rows", f_ce_none, 1e-5, true, tn_mul_scalar(RANDN(5, 1000), 4), tn_randint(0, 1000, TN_SHAPE(5), TN_I64, NULL));
    CHECK_OP("cross_entropy unbatched", f_cross_entropy, 1e-5, true, RANDN(7), tn_randint(0, 7, NULL, 0, TN_I64, NULL));
    CHECK_OP("cross_entropy label smoothing", f_ce_smoothing, 1e-5, true, RANDN(6, 5), tn_randint(0, 5, TN_SHAPE(6), TN_I64, NULL));
    CHECK_OP("conv_transpose2d groups, strides, output_padding", f_convt2d, 1e-4, true, RANDN(2, 4, 5, 6), RANDN(4, 3, 3, 2), RANDN(6));
    CHECK_OP("conv_transpose2d output_padding >= stride", f_convt2d_op, 1e-4, true, RANDN(2, 3, 4, 5), RANDN(3, 2, 2, 2));
    CHECK_OP("conv_transpose1d", f_convt1d, 1e-4, true, RANDN(2, 3, 7), RANDN(3, 4, 3), RANDN(4));
    CHECK_OP("layer_norm without affine", f_layer_norm_plain, 1e-4, true, tn_transpose(RANDN(6, 4, 3), 0, 2));
    CHECK_OP("layer_norm, many rows", f_layer_norm, 1e-4, true, RANDN(70, 5), RANDN(5), RANDN(5));
    CHECK_OP("batch_norm without affine", f_batch_norm_plain, 1e-4, true, RANDN(8, 3, 4, 4));
    CHECK_OP("batch_norm 1d", f_batch_norm, 1e-4, true, RANDN(16, 3), RANDN(3), RANDN(3));
    CHECK_OP("batch_norm eval", f_batch_norm_eval, 1e-4, true, RANDN(8, 3, 5), RANDN(3), RANDN(3), RANDN(3), RANDN(3));
    CHECK_OP("batch_norm f64", f_batch_norm, 1e-10, true, tn_randn(TN_SHAPE(6, 4, 3, 3), TN_F64), tn_randn(TN_SHAPE(4), TN_F64), tn_randn(TN_SHAPE(4), TN_F64));
    tn_scope_end();
}

/* Running statistics and second derivatives through the one-node batch norm and the
   library pooling, both devices side by side. */
TEST(gpu_norm_pool_state) {
    tn_scope_begin();
    tn_manual_seed(11);
    tn_tensor *x = RANDN(6, 4, 5, 5), *rm = RANDN(4), *rv = tn_add_scalar(tn_rand(TN_SHAPE(4), TN_F32), 0.5);
    tn_tensor *rmg = tn_to(rm, TN_CUDA), *rvg = tn_to(rv, TN_CUDA), *xg = tn_to(x, TN_CUDA);
    for (int i = 0; i < 2; i++) {
        CHECK(tn_batch_norm(x, rm, rv, .training = true) && tn_batch_norm(xg, rmg, rvg, .training = true));
        SAME("running_mean", rmg, rm, 1e-5);
        SAME("running_var (unbiased)", rvg, rv, 1e-5);
    }
    /* d/dx of sum(grad . v) where grad = d sum(f(x) * w)/dx: double backward on each device */
    tn_tensor *ct_w = RANDN(4, 2, 3, 3);
    for (int k = 0; k < 6; k++) {
        tn_tensor *xs[2] = {tn_detach(x), tn_detach(xg)}, *r[2];
        tn_tensor *w = k == 5 ? RANDN(6, 2, 10, 10) : k == 4 ? RANDN(120) : RANDN(6, 4, k >= 2 ? 5 : 3, k >= 2 ? 5 : 3), *v = RANDN(6, 4, 5, 5);
        for (int d = 0; d < 2; d++) {
            tn_requires_grad_(xs[d], true);
            tn_tensor *in = tn_mul(xs[d], xs[d]);   /* so that the first derivative depends on x */
            tn_tensor *y = k == 0 ? tn_max_pool2d(in, 3, .stride = 2, .padding = 1) : k == 1 ? tn_avg_pool2d(in, 3, .stride = 2, .padding = 1, .count_include_pad = false)
                         : k == 2 ? tn_batch_norm(in, NULL, NULL, .training = true) : k == 3 ? tn_layer_norm(in, TN_SHAPE(5))
                         : k == 4 ? tn_cross_entropy(tn_reshape(in, TN_SHAPE(120, 5)), tn_to(tn_remainder_scalar(tn_arange(0, 120, 1, TN_I64), 5), in->device), .reduction = TN_REDUCTION_NONE)
                                  : tn_conv_transpose2d(in, d ? tn_to(ct_w, TN_CUDA) : ct_w, NULL, .stride = 2, .padding = 1, .output_padding = 1);
            tn_tensor *wd = d ? tn_to(w, TN_CUDA) : w, *vd = d ? tn_to(v, TN_CUDA) : v;
            tn_tensor *gr = NULL;
            tn_tensor *o1 = y ? tn_sum(tn_mul(y, wd)) : NULL, *o2;
            CHECK_MSG(o1 && tn_autograd_grad(&o1, 1, &xs[d], 1, NULL, &gr, .create_graph = true) == 0, "first derivative: %s", tn_last_error());
            r[d] = NULL;
            o2 = gr ? tn_sum(tn_mul(gr, vd)) : NULL;
            CHECK_MSG(o2 && tn_autograd_grad(&o2, 1, &xs[d], 1, NULL, &r[d]) == 0, "second derivative: %s", tn_last_error());
        }
        const char *names[6] = {"max_pool2d double backward", "avg_pool2d double backward", "batch_norm double backward", "layer_norm double backward",
                                "cross_entropy double backward", "conv_transpose2d double backward"};
        SAME(names[k], r[1], r[0], 1e-3);
    }
    tn_scope_end();
}

/* The optional library entries themselves (cuDNN on the GPU), each against the CPU. */
TEST(gpu_library_entries) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    tn_scope_begin();
    if (be->pool2d) {   /* max pooling unpadded (a window of -inf gives -inf); averages padded */
        tn_tensor *x = tn_contiguous(RANDN(2, 3, 9, 8));
        for (int h = 0; h < 3; h++) for (int w = 0; w < 2; w++) ((float *)tn_data_ptr(x))[h * 8 + w] = -INFINITY;
        for (int mode = 0; mode < 3; mode++) {
            const int64_t p = mode ? 1 : 0, geom[7] = {3, 2, 2, 2, p, p, mode};
            tn_tensor *xc = tn_detach(x);
            tn_requires_grad_(xc, true);
            tn_tensor *yc = mode == 0 ? tn_max_pool2d(xc, 3, .kernel_size_hw = {3, 2}, .stride = 2)
                                      : tn_avg_pool2d(xc, 3, .kernel_size_hw = {3, 2}, .stride = 2, .padding = 1, .count_include_pad = mode == 1);
            tn_tensor *gy = yc ? tn_randn_like(yc) : NULL;
            CHECK(gy && tn_backward(tn_sum(tn_mul(yc, gy))) == 0);
            tn_tensor *xg = tn_to(x, TN_CUDA), *yg = tn_to(tn_zeros_like(yc), TN_CUDA), *gx = tn_to(tn_zeros_like(x), TN_CUDA);
            int r = be->pool2d(xg, yg, NULL, NULL, geom);
            CHECK_MSG(r == 0, "pool2d mode %d forward: %s", mode, tn_last_error());
            if (r) continue;
            SAME("pool2d forward", yg, tn_detach(yc), 1e-6);
            r = be->pool2d(xg, yg, tn_to(gy, TN_CUDA), gx, geom);
            CHECK_MSG(r == 0 || (r == 1 && mode == 0), "pool2d mode %d backward: %s", mode, tn_last_error());   /* max may leave it to argmax */
            if (r == 0) SAME("pool2d backward", gx, tn_grad(xc), 1e-5);
        }
    }
    if (be->batch_norm) {
        tn_tensor *x = RANDN(5, 3, 7), *w = RANDN(3), *b = RANDN(3), *gy = RANDN(5, 3, 7);
        tn_tensor *xc = tn_detach(x), *wc = tn_detach(w), *bc = tn_detach(b);
        tn_requires_grad_(xc, true); tn_requires_grad_(wc, true); tn_requires_grad_(bc, true);
        tn_tensor *yc = tn_batch_norm(xc, NULL, NULL, .weight = wc, .bias = bc, .training = true);
        CHECK(yc && tn_backward(tn_sum(tn_mul(yc, gy))) == 0);
        tn_tensor *xg = tn_to(x, TN_CUDA), *wg = tn_to(w, TN_CUDA), *bg = tn_to(b, TN_CUDA), *st = tn_to(tn_zeros(TN_SHAPE(9), TN_F64), TN_CUDA);
        tn_tensor *yg = tn_to(tn_zeros_like(x), TN_CUDA), *gx = tn_to(tn_zeros_like(x), TN_CUDA), *gw = tn_to(tn_zeros_like(w), TN_CUDA), *gb = tn_to(tn_zeros_like(b), TN_CUDA);
        CHECK_MSG(be->batch_norm(0, xg, wg, bg, st, yg, NULL, NULL, NULL, 1e-5) == 0, "batch_norm forward: %s", tn_last_error());
        SAME("batch_norm forward", yg, tn_detach(yc), 1e-5);
        SAME("batch_norm mean", tn_narrow(st, 0, 0, 3), tn_mean_dims(x, TN_SHAPE(0, 2)), 1e-6);
        SAME("batch_norm biased var", tn_narrow(st, 0, 6, 3), tn_var_dims(x, TN_SHAPE(0, 2), .correction = 0), 1e-5);
        CHECK_MSG(be->batch_norm(2, xg, wg, NULL, st, tn_to(gy, TN_CUDA), gx, gw, gb, 1e-5) == 0, "batch_norm backward: %s", tn_last_error());
        SAME("batch_norm gx", gx, tn_grad(xc), 1e-4);
        SAME("batch_norm gw", gw, tn_grad(wc), 1e-4);
        SAME("batch_norm gb", gb, tn_grad(bc), 1e-4);
    }
    if (be->cross_entropy) {
        tn_tensor *x = tn_mul_scalar(RANDN(6, 300), 3), *t = tn_randint(0, 300, TN_SHAPE(6), TN_I64, NULL), *wr = tn_rand(TN_SHAPE(6), TN_F32), *g = RANDN(6);
        tn_tensor *xc = tn_detach(x);
        tn_requires_grad_(xc, true);
        tn_tensor *lossc = tn_mul(tn_cross_entropy(xc, t, .reduction = TN_REDUCTION_NONE), wr);
        CHECK(lossc && tn_backward(tn_sum(tn_mul(lossc, g))) == 0);
        tn_tensor *lse = tn_to(tn_zeros(TN_SHAPE(6), TN_F64), TN_CUDA), *out = tn_to(tn_zeros(TN_SHAPE(6), TN_F32), TN_CUDA), *gx = tn_to(tn_zeros_like(x), TN_CUDA);
        tn_tensor *xg = tn_to(x, TN_CUDA), *tg = tn_to(t, TN_CUDA), *wg = tn_to(wr, TN_CUDA);
        CHECK_MSG(be->cross_entropy(0, xg, tg, wg, lse, out, NULL) == 0, "cross_entropy forward: %s", tn_last_error());
        SAME("cross_entropy rows", out, tn_detach(lossc), 1e-5);
        SAME("cross_entropy logsumexp", lse, tn_logsumexp(tn_to_dtype(x, TN_F64), TN_SHAPE(1)), 1e-6);
        CHECK_MSG(be->cross_entropy(1, xg, tg, wg, lse, tn_to(g, TN_CUDA), gx) == 0, "cross_entropy backward: %s", tn_last_error());
        SAME("cross_entropy gx", gx, tn_grad(xc), 1e-5);
    }
    if (be->layer_norm) {
        tn_tensor *x = RANDN(9, 37), *w = RANDN(37), *b = RANDN(37), *gy = RANDN(9, 37);
        tn_tensor *xc = tn_detach(x), *wc = tn_detach(w), *bc = tn_detach(b);
        tn_requires_grad_(xc, true); tn_requires_grad_(wc, true); tn_requires_grad_(bc, true);
        tn_tensor *yc = tn_layer_norm(xc, TN_SHAPE(37), .weight = wc, .bias = bc);
        CHECK(yc && tn_backward(tn_sum(tn_mul(yc, gy))) == 0);
        tn_tensor *xg = tn_to(x, TN_CUDA), *wg = tn_to(w, TN_CUDA), *bg = tn_to(b, TN_CUDA), *st = tn_to(tn_zeros(TN_SHAPE(18), TN_F64), TN_CUDA);
        tn_tensor *yg = tn_to(tn_zeros_like(x), TN_CUDA), *gx = tn_to(tn_zeros_like(x), TN_CUDA), *gw = tn_to(tn_zeros_like(w), TN_CUDA), *gb = tn_to(tn_zeros_like(b), TN_CUDA);
        CHECK_MSG(be->layer_norm(0, xg, wg, bg, st, yg, NULL, NULL, NULL, 1e-5) == 0, "layer_norm forward: %s", tn_last_error());
        SAME("layer_norm forward", yg, tn_detach(yc), 1e-5);
        SAME("layer_norm mean", tn_narrow(st, 0, 0, 9), tn_mean_dims(x, TN_SHAPE(1)), 1e-6);
        SAME("layer_norm invstd", tn_narrow(st, 0, 9, 9), tn_rsqrt(tn_add_scalar(tn_var_dims(x, TN_SHAPE(1), .correction = 0), 1e-5)), 1e-5);
        CHECK_MSG(be->layer_norm(1, xg, wg, NULL, st, tn_to(gy, TN_CUDA), gx, gw, gb, 1e-5) == 0, "layer_norm backward: %s", tn_last_error());
        SAME("layer_norm gx", gx, tn_grad(xc), 1e-4);
        SAME("layer_norm gw", gw, tn_grad(wc), 1e-4);
        SAME("layer_norm gb", gb, tn_grad(bc), 1e-4);
    }
    tn_scope_end();
}

/* Same seed, same numbers on either device from a Philox default generator (the
   device-independent stream; GPU draws are always Philox, CPU draws of the default
   mt19937 generator are PyTorch's). */
TEST(gpu_random_matches_cpu) {
    tn_scope_begin();
    tn_tensor *cpu = tn_zeros(TN_SHAPE(1000), TN_F32), *gpu = tn_to(cpu, TN_CUDA);
    tn_default_generator()->kind = TN_GEN_PHILOX;
    tn_manual_seed(42);
    tn_tensor *rc = tn_rand_like(cpu), *nc = tn_randn_like(cpu), *dc = tn_dropout(tn_ones_like(cpu), .p = 0.3);
    tn_manual_seed(42);
    tn_tensor *rg = tn_rand_like(gpu), *ng = tn_randn_like(gpu), *dg = tn_dropout(tn_ones_like(gpu), .p = 0.3);
    SAME("rand_like", rg, rc, 0);
    SAME("randn_like", ng, nc, 1e-6);
    SAME("dropout mask", dg, dc, 1e-6);
    tn_default_generator()->kind = TN_GEN_MT19937;
    tn_manual_seed(42);
    CHECK(tn_equal(tn_to(tn_rand_like(gpu), TN_CPU), tn_to(rg, TN_CPU)));   /* the GPU's numbers whatever the kind */
    tn_scope_end();
}

/* The multi-tensor optimizer step (tn_backend.optim_multi): 25 float32 parameters (more than
   one launch's 20; one of them empty) and 3 float64 ones take it, a strided parameter and
   two on one storage keep the step per parameter; every kind's parameters after two steps
   equal the CPU's, and each step is one multi-tensor call per dtype. */
TEST(gpu_multi_tensor_optim) {
    const char *kinds[5] = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad"};
    for (int kd = 0; kd < 5; kd++) {
        tn_scope_begin();
        tn_manual_seed(7 + kd);
        enum { NP = 31 };
        tn_tensor *cp[NP], *gp[NP], *cg[NP];
        for (int i = 0; i < NP; i++) {
            const tn_dtype dt = i >= 25 && i < 28 ? TN_F64 : TN_F32;
            tn_tensor *x = i == 24 ? tn_randn(TN_SHAPE(0, 3), dt) : tn_randn(TN_SHAPE(1 + i % 5, 3 + i), dt);
            if (i == 28) x = tn_detach(tn_t(tn_randn(TN_SHAPE(6, 4), dt)));   /* strided */
            cp[i] = tn_detach(x);
            gp[i] = tn_detach(tn_to(x, TN_CUDA));
        }
        cp[29] = tn_detach(cp[0]); cp[30] = tn_detach(cp[0]);   /* three parameters on one storage */
        gp[29] = tn_detach(gp[0]); gp[30] = tn_detach(gp[0]);
        for (int i = 0; i < NP; i++) cg[i] = tn_randn(tn_shape(cp[i]), tn_ndim(cp[i]), cp[i]->dtype);
        for (int i = 0; i < NP; i++) { tn_requires_grad_(cp[i], true); tn_requires_grad_(gp[i], true); }
        tn_optim *oc, *og;
#define MT_OPTIMS(ps) (kd == 0 ? tn_optim_sgd(ps, NP, .lr = 0.01, .momentum = 0.9, .weight_decay = 0.01) \
                       : kd == 1 ? tn_optim_adam(ps, NP, .lr = 0.01, .weight_decay = 0.01) \
                       : kd == 2 ? tn_optim_adamw(ps, NP, .lr = 0.01) \
                       : kd == 3 ? tn_optim_rmsprop(ps, NP, .lr = 0.01, .momentum = 0.5) : tn_optim_adagrad(ps, NP, .lr = 0.01))
        oc = MT_OPTIMS(cp);
        og = MT_OPTIMS(gp);
#undef MT_OPTIMS
        CHECK(oc && og);
        if (!oc || !og) { tn_scope_end(); continue; }
        const tn_cuda_stats s0 = tn_cuda_memory_stats();
        for (int step = 0; step < 2; step++) {
            for (int i = 0; i < NP; i++) {
                tn_tensor *g = tn_mul_scalar(cg[i], step + 1.0);
                if (tn_set_grad(cp[i], g) || tn_set_grad(gp[i], tn_to(g, TN_CUDA))) fail_at(__LINE__, "set_grad %d: %s", i, tn_last_error());
            }
            CHECK(tn_optim_step(oc) == 0 && tn_optim_step(og) == 0);
        }
        const tn_cuda_stats s1 = tn_cuda_memory_stats();
        CHECK(s1.num_multi_tensor_optim - s0.num_multi_tensor_optim == 4);   /* float32 and float64, two steps */
        for (int i = 0; i < NP; i++) {
            char what[64];
            snprintf(what, sizeof what, "%s parameter %d", kinds[kd], i);
            SAME(what, gp[i], cp[i], 1e-5);
        }
        tn_optim_free(oc);
        tn_optim_free(og);
        tn_scope_end();
    }
}

/* One Adam step of a small CNN on both devices: same loss, same parameters after. */
TEST(gpu_cnn_training_step) {
    tn_scope_begin();
    tn_manual_seed(3);
    tn_module *cpu = tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_flatten(), tn_nn_linear(16 * 7 * 7, 10, .bias = NULL));
    tn_module *gpu = tn_nn_sequential(tn_nn_conv2d(1, 8, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_conv2d(8, 16, 3, .padding = 1), tn_nn_relu(), tn_nn_max_pool2d(2),
                                      tn_nn_flatten(), tn_nn_linear(16 * 7 * 7, 10, .bias = NULL));
    tn_dict *sd = tn_module_state_dict(cpu);
    CHECK(tn_module_load_state_dict(gpu, sd, NULL, NULL) == 0);
    CHECK(tn_module_to(gpu, TN_CUDA) == 0);
    tn_dict *pc = tn_module_named_parameters(cpu), *pg = tn_module_named_parameters(gpu);
    tn_optim *oc = tn_optim_adam(tn_dict_values(pc), tn_dict_len(pc), .lr = 1e-3), *og = tn_optim_adam(tn_dict_values(pg), tn_dict_len(pg), .lr = 1e-3);
    tn_tensor *x = tn_rand(TN_SHAPE(64, 1, 28, 28), TN_F32), *y = tn_randint(0, 10, TN_SHAPE(64), TN_I64, NULL);
    for (int step = 0; step < 3; step++) {
        tn_tensor *lc = tn_cross_entropy(tn_module_forward(cpu, x), y);
        tn_tensor *lg = tn_cross_entropy(tn_module_forward(gpu, tn_to(x, TN_CUDA)), tn_to(y, TN_CUDA));
        SAME("loss", lg, lc, 1e-4);
        tn_optim_zero_grad(oc);
        tn_optim_zero_grad(og);
        CHECK(tn_backward(lc) == 0 && tn_backward(lg) == 0);
        CHECK(tn_optim_step(oc) == 0 && tn_optim_step(og) == 0);
    }
    tn_dict *a = tn_module_state_dict(cpu), *b = tn_module_state_dict(gpu);
    for (int i = 0; i < tn_dict_len(a); i++) SAME(tn_dict_key(a, i), tn_dict_value(b, i), tn_dict_value(a, i), 1e-3);
    tn_dict_free(sd);
    tn_dict_free(pc);
    tn_dict_free(pg);
    tn_dict_free(a);
    tn_dict_free(b);
    tn_optim_free(oc);
    tn_optim_free(og);
    tn_module_free(cpu);
    tn_module_free(gpu);
    tn_scope_end();
}

#endif
