/* cuda_cases_more_a.h — the GPU cases of the issue-20 reductions, scans, sorting, indexing
 * and sampling ops (tests/test_ops_more_a.c has their values): each op on the device
 * against the CPU, values and gradients, through check_op of cuda_cases.h. Included after
 * cuda_cases.h by test_cuda.c (the real GPU unit) and test_devices.c (the checking stand-in
 * on the CPU, so the ops' device handling is tested on every machine). */
#ifndef CUDA_CASES_MORE_A_H
#define CUDA_CASES_MORE_A_H
static tn_tensor *more_a_i(tn_tensor *t) { return t ? tn_to_dtype(t, TN_F64) : NULL; }   /* an index result, compared as numbers */
UNARY_FN(fa_median, tn_median_dim(x[0], NULL, .dim = 1))
UNARY_FN(fa_median_all, tn_median(x[0]))
static tn_tensor *fa_median_idx(tn_tensor *const *x) { tn_tensor *i = NULL; return tn_median_dim(x[0], &i, .keepdim = true) ? more_a_i(i) : NULL; }
UNARY_FN(fa_nanmedian, tn_nanmedian_dim(x[0], NULL, .dim = 0))
UNARY_FN(fa_kthvalue, tn_kthvalue(x[0], 3, NULL, .dim = 1))
UNARY_FN(fa_mode, tn_mode(x[0], NULL))
static tn_tensor *fa_mode_idx(tn_tensor *const *x) { tn_tensor *i = NULL; return tn_mode(x[0], &i) ? more_a_i(i) : NULL; }
UNARY_FN(fa_msort, tn_msort(x[0]))
UNARY_FN(fa_cummax, tn_cummax(x[0], 1, NULL))
static tn_tensor *fa_cummin_idx(tn_tensor *const *x) { tn_tensor *i = NULL; return tn_cummin(x[0], -1, &i) ? more_a_i(i) : NULL; }
UNARY_FN(fa_cummin, tn_cummin(x[0], 0, NULL))
UNARY_FN(fa_logcumsumexp, tn_logcumsumexp(x[0], -1))
UNARY_FN(fa_nansum, tn_nansum_dims(x[0], (const int64_t[]){1}, 1))
UNARY_FN(fa_nanmean, tn_nanmean_dims(x[0], ((const int64_t[]){0, 2}), 2, .keepdim = true))
static tn_tensor *fa_aminmax(tn_tensor *const *x) { tn_tensor *mx = NULL, *mn = tn_aminmax(x[0], &mx, .dim = 1); return mn ? tn_sub(mx, tn_mul_scalar(mn, 3)) : NULL; }
UNARY_FN(fa_count_nonzero, tn_count_nonzero(tn_floor(x[0]), (const int64_t[]){-1}, 1))
UNARY_FN(fa_quantile, tn_quantile(x[0], x[1], .dim = 1))
UNARY_FN(fa_nanquantile, tn_nanquantile(x[0], x[1], .dim = 0, .interpolation = TN_INTERPOLATION_MIDPOINT))
UNARY_FN(fa_searchsorted, more_a_i(tn_searchsorted(tn_sort(x[0], NULL), x[1], .right = true)))
UNARY_FN(fa_bucketize, more_a_i(tn_bucketize(x[1], tn_sort(x[0], NULL, .dim = 0))))
UNARY_FN(fa_unique, tn_unique(tn_floor(x[0]), NULL, NULL))
static tn_tensor *fa_unique_inv(tn_tensor *const *x) { tn_tensor *i = NULL; return tn_unique(tn_floor(x[0]), &i, NULL, .return_inverse = true, .dim = 1) ? more_a_i(i) : NULL; }
static tn_tensor *fa_unique_consecutive(tn_tensor *const *x) { tn_tensor *c = NULL; return tn_unique_consecutive(tn_floor(x[0]), NULL, &c, .return_counts = true) ? more_a_i(c) : NULL; }
UNARY_FN(fa_bincount, tn_bincount(x[1], .weights = x[0], .minlength = 9))
UNARY_FN(fa_histc, tn_histc(x[0], .bins = 7, .min = -1, .max = 1.5))
UNARY_FN(fa_index_add, tn_index_add(x[0], 1, x[1], x[2], .alpha = 1.5))
UNARY_FN(fa_index_copy, tn_index_copy(x[0], 0, x[1], x[2]))
UNARY_FN(fa_index_fill, tn_index_fill(x[0], -1, x[1], -2))
UNARY_FN(fa_sr_sum, tn_scatter_reduce(x[0], 1, x[1], x[2], "sum"))
UNARY_FN(fa_sr_prod, tn_scatter_reduce(x[0], 1, x[1], x[2], "prod", .include_self = false))
UNARY_FN(fa_sr_mean, tn_scatter_reduce(x[0], 1, x[1], x[2], "mean"))
UNARY_FN(fa_sr_amax, tn_scatter_reduce(x[0], 1, x[1], x[2], "amax", .include_self = false))
UNARY_FN(fa_sr_amin, tn_scatter_reduce(x[0], 1, x[1], x[2], "amin"))
UNARY_FN(fa_sr_amax_int, tn_scatter_reduce(x[0], 0, x[1], x[2], "amax"))
UNARY_FN(fa_scatter_mul, tn_scatter_with_reduce(x[0], 1, x[1], x[2], "multiply"))
UNARY_FN(fa_take, tn_take(x[0], x[1]))
UNARY_FN(fa_put, tn_put(x[0], x[1], x[2], .accumulate = true))
UNARY_FN(fa_take_along_dim, tn_take_along_dim(x[0], x[1], 1))
UNARY_FN(fa_masked_scatter, tn_masked_scatter(x[0], tn_gt(x[0], tn_scalar(0)), x[1]))
UNARY_FN(fa_argwhere, more_a_i(tn_argwhere(tn_gt(x[0], tn_scalar(0.5)))))
UNARY_FN(fa_isin, tn_isin(tn_floor(x[0]), tn_floor(x[1]), .invert = true))
UNARY_FN(fa_repeat_interleave, tn_repeat_interleave(x[0], 3, .dim = 1))
UNARY_FN(fa_repeat_interleave_t, tn_repeat_interleave_tensor(x[0], x[1], .dim = 0))
UNARY_FN(fa_diff, tn_diff(x[0], .n = 2, .prepend = x[1]))

TEST(gpu_more_a_ops_match_cpu) {
    tn_scope_begin();
    tn_manual_seed(11);
    tn_tensor *a = RANDN(4, 7, 5), *at = tn_transpose(RANDN(5, 7, 4), 0, 2);   /* distinct values; a strided one */
    tn_tensor *nan = tn_where(tn_gt(a, tn_scalar(1.0)), tn_full(TN_SHAPE(1), NAN, TN_F32), a);
    tn_tensor *ints = tn_mul_scalar(RANDN(4, 9), 2);   /* floored inside the ops: ties */
    CHECK_OP("median dim", fa_median, 0, true, a);
    CHECK_OP("median dim strided", fa_median, 0, true, at);
    CHECK_OP("median", fa_median_all, 0, true, a);
    CHECK_OP("median indices", fa_median_idx, 0, false, at);
    CHECK_OP("nanmedian with NaN", fa_nanmedian, 0, true, nan);
    CHECK_OP("kthvalue", fa_kthvalue, 0, true, a);
    CHECK_OP("mode", fa_mode, 0, true, tn_floor(ints));
    CHECK_OP("mode indices", fa_mode_idx, 0, false, tn_floor(ints));
    CHECK_OP("msort", fa_msort, 0, true, at);
    CHECK_OP("cummax", fa_cummax, 0, true, a);
    CHECK_OP("cummax with NaN", fa_cummax, 0, true, nan);
    CHECK_OP("cummin", fa_cummin, 0, true, at);
    CHECK_OP("cummin indices of ties", fa_cummin_idx, 0, false, tn_floor(ints));
    CHECK_OP("cummax int64", fa_cummax, 0, false, tn_to_dtype(ints, TN_I64));
    CHECK_OP("logcumsumexp", fa_logcumsumexp, 1e-5, true, at);
    CHECK_OP("logcumsumexp f64", fa_logcumsumexp, 1e-12, true, tn_randn(TN_SHAPE(3, 200), TN_F64));
    CHECK_OP("nansum", fa_nansum, 1e-5, true, nan);
    CHECK_OP("nanmean", fa_nanmean, 1e-5, true, nan);
    CHECK_OP("aminmax", fa_aminmax, 0, true, at);
    CHECK_OP("count_nonzero", fa_count_nonzero, 0, false, ints);
    tn_tensor *q = tn_from_data((float[]){0.1f, 0.5f, 0.95f}, TN_SHAPE(3), TN_F32);
    CHECK_OP("quantile", fa_quantile, 1e-5, true, a, q);
    CHECK_OP("nanquantile", fa_nanquantile, 1e-5, true, nan, q);
    CHECK_OP("searchsorted", fa_searchsorted, 0, false, a, RANDN(4, 7, 3));
    CHECK_OP("bucketize", fa_bucketize, 0, false, RANDN(10), RANDN(3, 4));
    CHECK_OP("unique", fa_unique, 0, false, ints);
    CHECK_OP("unique dim, inverse", fa_unique_inv, 0, false, tn_narrow(ints, 0, 0, 1));
    CHECK_OP("unique_consecutive counts", fa_unique_consecutive, 0, false, tn_sort(ints, NULL));
    CHECK_OP("bincount weights", fa_bincount, 1e-5, false, tn_rand(TN_SHAPE(20), TN_F32), tn_randint(0, 6, TN_SHAPE(20), TN_I64, NULL));
    CHECK_OP("histc", fa_histc, 0, false, RANDN(200));
    tn_tensor *i3 = tn_from_data((int64_t[]){4, 0, 4}, TN_SHAPE(3), TN_I64), *i2 = tn_from_data((int64_t[]){3, 1}, TN_SHAPE(2), TN_I64);
    CHECK_OP("index_add", fa_index_add, 1e-5, true, a, i3, RANDN(4, 3, 5));
    CHECK_OP("index_copy", fa_index_copy, 0, true, a, i2, RANDN(2, 7, 5));
    CHECK_OP("index_fill", fa_index_fill, 0, true, at, i2);
    tn_tensor *si = tn_randint(0, 7, TN_SHAPE(4, 9, 5), TN_I64, NULL), *ss = RANDN(4, 9, 5);   /* duplicates */
    CHECK_OP("scatter_reduce sum", fa_sr_sum, 1e-5, true, a, si, ss);
    CHECK_OP("scatter_reduce prod", fa_sr_prod, 1e-4, true, a, si, ss);
    CHECK_OP("scatter_reduce mean", fa_sr_mean, 1e-5, true, a, si, ss);
    CHECK_OP("scatter_reduce amax", fa_sr_amax, 0, true, a, si, ss);
    CHECK_OP("scatter_reduce amin", fa_sr_amin, 0, true, at, si, ss);
    CHECK_OP("scatter_reduce amax f64", fa_sr_amax, 0, true, tn_to_dtype(a, TN_F64), si, tn_to_dtype(ss, TN_F64));
    CHECK_OP("scatter_reduce amax int64", fa_sr_amax_int, 0, false, tn_to_dtype(ints, TN_I64), tn_randint(0, 4, TN_SHAPE(6, 9), TN_I64, NULL), tn_randint(-9, 9, TN_SHAPE(6, 9), TN_I64, NULL));
    CHECK_OP("scatter_reduce amax int32", fa_sr_amax_int, 0, false, tn_to_dtype(ints, TN_I32), tn_randint(0, 4, TN_SHAPE(6, 9), TN_I64, NULL), tn_randint(-9, 9, TN_SHAPE(6, 9), TN_I32, NULL));
    CHECK_OP("scatter_reduce amin uint8", fa_sr_amax_int, 0, false, tn_randint(0, 200, TN_SHAPE(4, 9), TN_U8, NULL), tn_randint(0, 4, TN_SHAPE(6, 9), TN_I64, NULL), tn_randint(0, 250, TN_SHAPE(6, 9), TN_U8, NULL));
    CHECK_OP("scatter multiply", fa_scatter_mul, 1e-5, false, a, si, ss);
    tn_tensor *ti = tn_randint(-140, 140, TN_SHAPE(3, 8), TN_I64, NULL);
    CHECK_OP("take", fa_take, 0, true, at, ti);
    CHECK_OP("put accumulate", fa_put, 1e-5, true, a, ti, RANDN(3, 8));
    CHECK_OP("take_along_dim", fa_take_along_dim, 0, true, a, tn_randint(0, 7, TN_SHAPE(1, 3, 5), TN_I64, NULL));
    CHECK_OP("masked_scatter", fa_masked_scatter, 0, true, a, RANDN(200));
    CHECK_OP("argwhere", fa_argwhere, 0, false, at);
    CHECK_OP("isin invert", fa_isin, 0, false, ints, RANDN(5));
    CHECK_OP("repeat_interleave", fa_repeat_interleave, 0, true, at);
    CHECK_OP("repeat_interleave tensor", fa_repeat_interleave_t, 0, true, a, tn_from_data((int64_t[]){2, 0, 1, 3}, TN_SHAPE(4), TN_I64));
    CHECK_OP("diff", fa_diff, 1e-5, true, at, RANDN(4, 7, 2));
    /* multinomial on the device: the shape, the range, distinct draws without replacement */
    tn_tensor *p = tn_to(tn_rand(TN_SHAPE(3, 6), TN_F32), TN_CUDA);
    tn_tensor *m = p ? tn_multinomial(p, 6, NULL) : NULL;
    if (!m || m->device != TN_CUDA || tn_ndim(m) != 2 || tn_shape(m)[1] != 6) fail_at(__LINE__, "multinomial: %s", m ? "shape or device" : tn_last_error());
    else {
        tn_tensor *srt = tn_sort(tn_to(m, TN_CPU), NULL), *want = tn_expand(tn_arange(0, 6, 1, TN_I64), TN_SHAPE(3, 6));
        if (tn_equal(srt, want)) tn_test_passed++;
        else fail_at(__LINE__, "multinomial without replacement: not a permutation of the categories");
    }
    tn_tensor *mr = p ? tn_multinomial(p, 50, NULL, .replacement = true) : NULL;
    if (!mr || mr->device != TN_CUDA || tn_item(tn_amax(tn_to(mr, TN_CPU), NULL, 0)) > 5) fail_at(__LINE__, "multinomial with replacement: %s", tn_last_error());
    else tn_test_passed++;
    tn_scope_end();
}
#endif
