/* test_ops_more_a.c — the reductions, scans, sorting, indexing and sampling ops of issue 20
 * item 2 (first half): median/nanmedian, kthvalue, mode, msort, cummax/cummin,
 * logcumsumexp, nansum/nanmean, aminmax, count_nonzero, quantile/nanquantile,
 * searchsorted/bucketize, unique/unique_consecutive, bincount/histc, index_add/copy/fill,
 * scatter_reduce and scatter(reduce=), take/put, take_along_dim, masked_scatter, argwhere,
 * isin, tril/triu_indices, repeat_interleave, diff, multinomial.
 *
 * Values on non-contiguous float64 inputs (ties, NaN, infinities, negative dims) against
 * PyTorch 1.13's results (the E_ arrays, printed by torch once and pasted here; the Python
 * test bindings/python/tests/test_ops_reductions_indexing.py runs PyTorch's own OpInfo
 * samples live), float64 tn_gradcheck for every differentiable op, in-place forms returning
 * their argument, 0-size and 0-d inputs, errors, and no leaks. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

static int64_t live_tensors(void) { return tn_memory_stats_get().live_tensors; }
/* each test runs in a scope and must give back every tensor it made */
#define BEGIN int64_t live0_ = live_tensors(); tn_scope_begin()
#define END do { tn_scope_end(); int64_t live1_ = live_tensors(); \
    CHECK_MSG(live1_ == live0_, "leak: %lld live tensors, expected %lld", (long long)live1_, (long long)live0_); } while (0)
#define NE(a) (int64_t)(sizeof(a) / sizeof((a)[0]))
#define SH(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define SH0 NULL, 0

/* ---- PyTorch 1.13's results for the inputs below ---- */
static const double E_median_all[] = {0.5}; /* () float64 */
static const double E_median_d1[] = {0.5, 0.0, -0.75}; /* (3,) float64 */
static const int64_t E_median_d1_i[] = {0, 3, 3}; /* (3,) int64 */
static const double E_median_d0k[] = {0.5, -1.25, 3.0, 0.0}; /* (1, 4) float64 */
static const int64_t E_median_d0k_i[] = {0, 0, 0, 1}; /* (1, 4) int64 */
static const double E_median_nan_all[] = {NAN}; /* () float64 */
static const double E_nanmedian_all[] = {0.5}; /* () float64 */
static const double E_median_nan_d1[] = {NAN, NAN, -0.75}; /* (3,) float64 */
static const int64_t E_median_nan_d1_i[] = {1, 2, 3}; /* (3,) int64 */
static const double E_nanmedian_d1[] = {2.0, 0.0, -0.75}; /* (3,) float64 */
static const int64_t E_nanmedian_d1_i[] = {3, 3, 3}; /* (3,) int64 */
static const double E_kth2_d0[] = {0.5, -1.25, 3.0, 0.0}; /* (4,) float64 */
static const int64_t E_kth2_d0_i[] = {0, 0, 0, 1}; /* (4,) int64 */
static const double E_kth3[] = {2.0, 1.5, 4.25}; /* (3,) float64 */
static const int64_t E_kth3_i[] = {3, 2, 2}; /* (3,) int64 */
static const double E_mode_d1[] = {1.0, 2.0, 5.0}; /* (3,) float64 */
static const int64_t E_mode_d1_i[] = {3, 2, 2}; /* (3,) int64 */
static const double E_mode_d0[] = {5.0, 1.0, 2.0, 1.0}; /* (4,) float64 */
static const int64_t E_mode_d0_i[] = {2, 0, 1, 0}; /* (4,) int64 */
static const double E_msort[] = {3.0, 1.0, 2.0, 1.0, 5.0, 3.0, 4.0, 6.0, 5.0, 9.0, 5.0, 8.0}; /* (3, 4) float64 */
static const double E_cummax[] = {0.5, NAN, NAN, NAN, 7.0, 7.0, NAN, NAN, -2.5, 6.0, 6.0, 6.0}; /* (3, 4) float64 */
static const int64_t E_cummax_i[] = {0, 1, 1, 1, 0, 0, 2, 2, 0, 1, 1, 1}; /* (3, 4) int64 */
static const double E_cummin[] = {3.0, 1.0, 4.0, 1.0, 3.0, 1.0, 2.0, 1.0, 3.0, 1.0, 2.0, 1.0}; /* (3, 4) float64 */
static const int64_t E_cummin_i[] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0}; /* (3, 4) int64 */
static const double E_lcse[] = {0.5, 0.6602241504380872, 3.0919857805919686, 3.3813286012269783, 7.0, 7.000016701561319, 7.0040950768548, 7.005002820105574, -2.5, 6.0002034476721295, 6.160397480862592, 6.161394345113942}; /* (3, 4) float64 */
static const double E_lcse_inf[] = {-INFINITY, -INFINITY, 0.0, 1000.0, 1000.6931471805599, INFINITY, INFINITY}; /* (7,) float64 */
static const double E_nansum_all[] = {15.5}; /* () float64 */
static const double E_nansum_d1k[] = {5.5, 3.0, 7.0}; /* (3, 1) float64 */
static const double E_nanmean_d0[] = {1.6666666666666667, 1.0, 3.625, 0.4166666666666667}; /* (4,) float64 */
static const double E_aminmax_min[] = {-1.25, -4.0, -2.5}; /* (3,) float64 */
static const double E_aminmax_max[] = {3.0, 7.0, 6.0}; /* (3,) float64 */
static const int64_t E_cnz_d0[] = {1, 1, 0}; /* (3,) int64 */
static const int64_t E_cnz_d01[] = {2}; /* () int64 */
static const double E_q_linear[] = {-0.7249999999999999, -2.8, -1.9749999999999999, 1.25, 0.75, 1.75, 2.7, 5.350000000000001, 5.4750000000000005}; /* (3, 3) float64 */
static const double E_q_lower[] = {-1.25, -4.0, -2.5, 0.5, 0.0, -0.75, 2.0, 1.5, 4.25}; /* (3, 3) float64 */
static const double E_q_higher[] = {0.5, 0.0, -0.75, 2.0, 1.5, 4.25, 3.0, 7.0, 6.0}; /* (3, 3) float64 */
static const double E_q_midpoint[] = {-0.375, -2.0, -1.625, 1.25, 0.75, 1.75, 2.5, 4.25, 5.125}; /* (3, 3) float64 */
static const double E_q_nearest[] = {-1.25, -4.0, -2.5, 2.0, 1.5, 4.25, 3.0, 7.0, 6.0}; /* (3, 3) float64 */
static const double E_q_scalar[] = {-0.5250000000000001}; /* () float64 */
static const double E_q_keep[] = {-1.9, -3.45, 1.8, -0.6, 0.5, -1.25, 3.0, 0.0, 5.7, 4.550000000000001, 4.0, 1.6}; /* (3, 1, 4) float64 */
static const double E_nq[] = {-1.0, -1.5, 3.3125, -0.375, 3.75, 3.5, 3.9375, 1.0}; /* (2, 4) float64 */
static const double E_q_nan[] = {-1.0, NAN, NAN, -0.375, 3.75, NAN, NAN, 1.0}; /* (2, 4) float64 */
static const int64_t E_ss_left[] = {1, 3, 4, 0, 5, 1}; /* (2, 3) int64 */
static const int64_t E_ss_right[] = {2, 3, 5, 0, 5, 2}; /* (2, 3) int64 */
static const int64_t E_ss_sorter[] = {2, 2, 5, 0, 5}; /* (5,) int64 */
static const int64_t E_bucket[] = {2, 3, 5, 1, 5, 2}; /* (2, 3) int64 */
static const int64_t E_bucket_l[] = {1, 3, 4, 0, 5, 2}; /* (2, 3) int64 */
static const double E_uniq[] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 9.0}; /* (8,) float64 */
static const int64_t E_uniq_inv[] = {2, 0, 3, 0, 4, 7, 1, 5, 4, 2, 4, 6}; /* (3, 4) int64 */
static const int64_t E_uniq_cnt[] = {2, 1, 2, 1, 3, 1, 1, 1}; /* (8,) int64 */
static const double E_uniqd[] = {0.0, 5.0, 1.0, 2.0, 3.0, 4.0}; /* (3, 2) float64 */
static const int64_t E_uniqd_inv[] = {1, 2, 1, 0}; /* (4,) int64 */
static const int64_t E_uniqd_cnt[] = {1, 2, 1}; /* (3,) int64 */
static const int64_t E_uc[] = {1, 2, 3, 1, 2}; /* (5,) int64 */
static const int64_t E_uc_inv[] = {0, 0, 1, 1, 2, 3, 3, 4}; /* (8,) int64 */
static const int64_t E_uc_cnt[] = {2, 2, 1, 2, 1}; /* (5,) int64 */
static const double E_binc_w[] = {3.0, 1.5, 0.0, 2.0, 0.0, 4.0, 0.0, 0.0}; /* (8,) float64 */
static const int64_t E_binc[] = {1, 2, 0, 1, 0, 1}; /* (6,) int64 */
static const double E_histc[] = {2.0, 3.0, 2.0, 2.0}; /* (4,) float64 */
static const double E_histc0[] = {2.0, 3.0, 3.0, 2.0, 2.0}; /* (5,) float64 */
static const double E_index_add[] = {4.5, -1.25, 3.0, 10.0, 17.0, -4.0, 1.5, 20.0, 13.5, 6.0, 4.25, 31.25}; /* (3, 4) float64 */
static const double E_index_copy[] = {4.0, 5.0, 6.0, 7.0, 7.0, -4.0, 1.5, 0.0, 0.0, 1.0, 2.0, 3.0}; /* (3, 4) float64 */
static const double E_index_fill[] = {0.5, -7.5, 3.0, -7.5, 7.0, -7.5, 1.5, -7.5, -2.5, -7.5, 4.25, -7.5}; /* (3, 4) float64 */
static const double E_sr_sum_1[] = {3.5, -1.25, 6.0, 2.0, 7.0, -4.0, 1.5, 15.0, 5.5, 22.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_sum_0[] = {3.0, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 15.0, 8.0, 16.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_prod_1[] = {1.0, -1.25, 9.0, 2.0, 7.0, -4.0, 1.5, 0.0, -20.0, 378.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_prod_0[] = {2.0, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 120.0, 8.0, 63.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_mean_1[] = {1.1666666666666667, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 3.75, 2.75, 7.333333333333333, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_mean_0[] = {1.5, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 5.0, 8.0, 8.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_amax_1[] = {2.0, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 6.0, 8.0, 9.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_amax_0[] = {2.0, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 6.0, 8.0, 9.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_amin_1[] = {0.5, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 0.0, -2.5, 6.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sr_amin_0[] = {1.0, -1.25, 3.0, 2.0, 7.0, -4.0, 1.5, 4.0, 8.0, 7.0, 4.25, -0.75}; /* (3, 4) float64 */
static const double E_sc_add[] = {6.0, 1.0, 7.0, 1.0, 5.0, 9.0, 2.0, 21.0, 13.0, 19.0, 5.0, 8.0}; /* (3, 4) float64 */
static const double E_sc_mul[] = {6.0, 1.0, 12.0, 1.0, 5.0, 9.0, 2.0, 720.0, 40.0, 189.0, 5.0, 8.0}; /* (3, 4) float64 */
static const double E_take[] = {0.5, -0.75, -4.0, -0.75}; /* (2, 2) float64 */
static const double E_put_acc[] = {10.5, -1.25, 3.0, 2.0, 7.0, 46.0, 1.5, 0.0, -2.5, 6.0, 4.25, 39.25}; /* (3, 4) float64 */
static const double E_put[] = {0.5, 10.0, 3.0, 2.0, 7.0, -4.0, 1.5, 0.0, -2.5, 6.0, 20.0, -0.75}; /* (3, 4) float64 */
static const double E_tad[] = {-1.25, 0.5, 2.0, 3.0, -4.0, 0.0, 1.5, 7.0, -2.5, -0.75, 4.25, 6.0}; /* (3, 4) float64 */
static const double E_tad_none[] = {-0.75, 0.5, 7.0}; /* (3,) float64 */
static const double E_tad_bc[] = {3.0, 7.0, 6.0}; /* (3, 1) float64 */
static const double E_mscat[] = {0.0, -1.25, 10.0, 2.0, 20.0, -4.0, 30.0, 0.0, 40.0, 6.0, 50.0, -0.75}; /* (3, 4) float64 */
static const int64_t E_argwhere[] = {0, 1, 1, 0}; /* (2, 2) int64 */
static const int64_t E_isin[] = {0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1}; /* (3, 4) int64 */
static const int64_t E_isin_inv[] = {1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0}; /* (3, 4) int64 */
static const int64_t E_tril[] = {1, 2, 2, 3, 3, 3, 0, 0, 1, 0, 1, 2}; /* (2, 6) int64 */
static const int64_t E_triu[] = {0, 0, 0, 1, 1, 2, 1, 2, 3, 2, 3, 3}; /* (2, 6) int64 */
static const double E_ri[] = {1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0}; /* (4, 2) float64 */
static const double E_ri_t[] = {0.0, 2.0, 2.0, 3.0, 5.0, 5.0}; /* (2, 3) float64 */
static const double E_ri_flat[] = {1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0}; /* (12,) float64 */
static const int64_t E_ri_idx[] = {0, 0, 2, 2, 2}; /* (5,) int64 */
static const double E_diff[] = {-1.25, 6.0, -5.25, 0.0, 1.0, -16.0, 16.5, -7.0, 2.5, -1.0, 14.0, -10.25, -3.25, 6.75, -1.75}; /* (3, 5) float64 */
static const double E_diff0[] = {6.5, -2.75, -1.5, -2.0, -9.5, 10.0, 2.75, -0.75}; /* (2, 4) float64 */
static const int64_t E_diff_bool[] = {1, 0, 1}; /* (3,) int64 */

/* ---- inputs (as in the generator): A has ties, B distinct values, Bn B with two NaNs ---- */
static const double A_[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
static const double B_[] = {0.5, -1.25, 3, 2, 7, -4, 1.5, 0, -2.5, 6, 4.25, -0.75};
static const double BN_[] = {0.5, NAN, 3, 2, 7, -4, NAN, 0, -2.5, 6, 4.25, -0.75};
static const double S3_[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const int64_t IDX_[] = {0, 0, 2, 3, 3, 3, 1, 0, 1};

/* an r x c float64 tensor holding v (row-major) with transposed strides: not contiguous */
static tn_tensor *nc(const double *v, int64_t r, int64_t c) {
    double *t = malloc((size_t)(r * c) * sizeof *t);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) t[j * r + i] = v[i * c + j];
    tn_tensor *x = tn_transpose(tn_from_data(t, (const int64_t[]){c, r}, 2, TN_F64), 0, 1);
    free(t);
    return x;
}
static tn_tensor *I64(const int64_t *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_I64); }
static tn_tensor *F64(const double *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_F64); }
static tn_tensor *leaf(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
/* a gradcheck leaf (which must be contiguous): c x r holding v's transpose, which gfn
   transposes back into a non-contiguous r x c input */
static tn_tensor *lt(const double *v, int64_t r, int64_t c) { return leaf(tn_contiguous(nc(v, c, r))); }

static bool shape_is(tn_tensor *t, const int64_t *shape, int nd) {
    if (!t || tn_ndim(t) != nd) return false;
    for (int i = 0; i < nd; i++) if (tn_shape(t)[i] != shape[i]) return false;
    return true;
}
/* t has the shape and dtype, and values e (NaN matches NaN; floats within 1e-12 relative) */
static void check_vals(tn_tensor *t, tn_dtype dt, const double *e, int64_t n, const int64_t *shape, int nd, const char *what) {
    if (!t) { CHECK_MSG(0, "%s: failed: %s", what, tn_last_error()); return; }
    CHECK_MSG(shape_is(t, shape, nd) && tn_numel(t) == n, "%s: wrong shape (ndim %d, numel %lld)", what, tn_ndim(t), (long long)tn_numel(t));
    CHECK_MSG(tn_get_dtype(t) == dt, "%s: dtype %s, expected %s", what, tn_dtype_name(tn_get_dtype(t)), tn_dtype_name(dt));
    if (tn_numel(t) != n) return;
    tn_tensor *c = tn_contiguous(tn_to_dtype(tn_detach(t), TN_F64));
    const double *p = c ? (const double *)tn_data_ptr(c) : NULL;
    for (int64_t i = 0; p && i < n; i++) {
        bool ok = (p[i] != p[i] && e[i] != e[i]) || p[i] == e[i] || fabs(p[i] - e[i]) <= 1e-12 * (1 + fabs(e[i]));
        if (!ok) { CHECK_MSG(0, "%s: element %lld is %.17g, expected %.17g", what, (long long)i, p[i], e[i]); return; }
    }
    CHECK(p != NULL);
}
static void check_ints(tn_tensor *t, tn_dtype dt, const int64_t *e, int64_t n, const int64_t *shape, int nd, const char *what) {
    double d[64];
    for (int64_t i = 0; i < n && i < 64; i++) d[i] = (double)e[i];
    check_vals(t, dt, d, n, shape, nd, what);
}
#define CHK(t, E, ...) check_vals(t, TN_F64, E, NE(E), __VA_ARGS__, #t)
#define CHKI(t, E, ...) check_ints(t, TN_I64, E, NE(E), __VA_ARGS__, #t)
#define CHKB(t, E, ...) check_ints(t, TN_BOOL, E, NE(E), __VA_ARGS__, #t)

/* ---------------------------------------------------------------- selections */
TEST(test_median_kthvalue_mode) {
    BEGIN;
    tn_tensor *a = nc(A_, 3, 4), *b = nc(B_, 3, 4), *bn = nc(BN_, 3, 4), *i = NULL;
    CHK(tn_median(b), E_median_all, SH0);
    CHK(tn_median_dim(b, &i, .dim = 1), E_median_d1, SH(3));
    CHKI(i, E_median_d1_i, SH(3));
    CHK(tn_median_dim(b, &i, .dim = -2, .keepdim = true), E_median_d0k, SH(1, 4));
    CHKI(i, E_median_d0k_i, SH(1, 4));
    CHK(tn_median(bn), E_median_nan_all, SH0);
    CHK(tn_nanmedian(bn), E_nanmedian_all, SH0);
    CHK(tn_median_dim(bn, &i, .dim = 1), E_median_nan_d1, SH(3));
    CHKI(i, E_median_nan_d1_i, SH(3));
    CHK(tn_nanmedian_dim(bn, &i), E_nanmedian_d1, SH(3));
    CHKI(i, E_nanmedian_d1_i, SH(3));
    CHK(tn_kthvalue(b, 2, &i, .dim = 0), E_kth2_d0, SH(4));
    CHKI(i, E_kth2_d0_i, SH(4));
    CHK(tn_kthvalue(b, 3, &i), E_kth3, SH(3));
    CHKI(i, E_kth3_i, SH(3));
    CHK(tn_mode(a, &i, .dim = 1), E_mode_d1, SH(3));
    CHKI(i, E_mode_d1_i, SH(3));
    CHK(tn_mode(a, &i, .dim = -2), E_mode_d0, SH(4));
    CHKI(i, E_mode_d0_i, SH(4));
    CHK(tn_msort(a), E_msort, SH(3, 4));
    /* integer input keeps its dtype; a median without indices */
    tn_tensor *ai = tn_to_dtype(a, TN_I64);
    CHECK(tn_get_dtype(tn_median_dim(ai, NULL, .dim = 1)) == TN_I64);
    CHECK(tn_item(tn_median(ai)) == 4);
    /* 0-d: itself, index 0; empty: NaN globally, an error along an empty dim */
    tn_tensor *z = tn_scalar_tensor(2.5, TN_F64);
    CHECK(tn_item(tn_median_dim(z, &i, .dim = 0)) == 2.5 && tn_item(i) == 0 && tn_ndim(i) == 0);
    CHECK(tn_item(tn_mode(z, &i)) == 2.5 && tn_item(i) == 0);
    CHECK(tn_item(tn_kthvalue(z, 1, &i, .dim = 0)) == 2.5);
    tn_tensor *e = tn_zeros(SH(0), TN_F64), *e2 = tn_zeros(SH(2, 0), TN_F64);
    CHECK(isnan(tn_item(tn_median(e))));
    CHECK(isnan(tn_item(tn_nanmedian(e))));
    CHECK(shape_is(tn_median_dim(e2, &i, .dim = 0), SH(0)) && shape_is(i, SH(0)));
    CHECK(shape_is(tn_msort(e2), SH(2, 0)));
    CHECK_ERR(tn_median_dim(e2, &i, .dim = 1), "tn_median");
    CHECK_ERR(tn_median_dim(b, &i, .dim = 2), "dim");
    CHECK_ERR(tn_kthvalue(b, 5, &i, .dim = 1), "out of range");
    CHECK_ERR(tn_kthvalue(b, 0, &i, .dim = 1), "out of range");
    CHECK_ERR(tn_median(tn_to_dtype(a, TN_BOOL)), "Bool");
    END;
}

/* ---------------------------------------------------------------- scans */
TEST(test_cum_extremes_logcumsumexp) {
    BEGIN;
    tn_tensor *a = nc(A_, 3, 4), *bn = nc(BN_, 3, 4), *b = nc(B_, 3, 4), *i = NULL;
    CHK(tn_cummax(bn, 1, &i), E_cummax, SH(3, 4));
    CHKI(i, E_cummax_i, SH(3, 4));
    CHK(tn_cummin(a, -2, &i), E_cummin, SH(3, 4));
    CHKI(i, E_cummin_i, SH(3, 4));
    /* integers keep their dtype */
    tn_tensor *ci = tn_cummin(tn_to_dtype(a, TN_I64), 0, &i);
    CHECK(ci && tn_get_dtype(ci) == TN_I64);
    CHKI(i, E_cummin_i, SH(3, 4));
    CHK(tn_logcumsumexp(b, -1), E_lcse, SH(3, 4));
    static const double inf_in[] = {-INFINITY, -INFINITY, 0, 1000, 1000, INFINITY, -INFINITY};
    CHK(tn_logcumsumexp(F64(inf_in, SH(7)), 0), E_lcse_inf, SH(7));
    tn_tensor *z = tn_scalar_tensor(2.5, TN_F64), *e = tn_zeros(SH(0, 3), TN_F64);
    CHECK(tn_item(tn_logcumsumexp(z, 0)) == 2.5 && tn_item(tn_cummax(z, -1, &i)) == 2.5 && tn_item(i) == 0);
    CHECK(shape_is(tn_cummax(e, 0, &i), SH(0, 3)) && shape_is(i, SH(0, 3)));
    CHECK(shape_is(tn_logcumsumexp(e, 1), SH(0, 3)));
    CHECK_ERR(tn_logcumsumexp(tn_to_dtype(a, TN_I64), 0), "tn_logcumsumexp");
    CHECK_ERR(tn_cummax(a, 2, &i), "dim");
    END;
}

/* ---------------------------------------------------------------- reductions */
TEST(test_nan_reductions_aminmax_count) {
    BEGIN;
    tn_tensor *bn = nc(BN_, 3, 4), *b = nc(B_, 3, 4), *mx = NULL;
    CHK(tn_nansum(bn), E_nansum_all, SH0);
    CHK(tn_nansum_dims(bn, (const int64_t[]){-1}, 1, .keepdim = true), E_nansum_d1k, SH(3, 1));
    CHK(tn_nanmean_dims(bn, (const int64_t[]){0}, 1), E_nanmean_d0, SH(4));
    CHECK(isnan(tn_item(tn_nanmean(tn_full(SH(2), NAN, TN_F64)))));
    CHECK(tn_item(tn_nansum(tn_zeros(SH(0), TN_F64))) == 0);
    CHECK(isnan(tn_item(tn_nanmean(tn_zeros(SH(0), TN_F64)))));
    tn_tensor *si = tn_nansum(tn_to_dtype(nc(A_, 3, 4), TN_I32));   /* integers sum as int64, as sum */
    CHECK(si && tn_get_dtype(si) == TN_I64 && tn_item(si) == 52);
    CHECK_ERR(tn_nanmean(tn_to_dtype(b, TN_I64)), "tn_nanmean");
    CHK(tn_aminmax(b, &mx, .dim = 1), E_aminmax_min, SH(3));
    CHK(mx, E_aminmax_max, SH(3));
    CHECK(tn_item(tn_aminmax(b, &mx)) == -4 && tn_item(mx) == 7);
    CHECK(isnan(tn_item(tn_aminmax(bn, &mx))) && isnan(tn_item(mx)));
    CHECK(shape_is(tn_aminmax(b, &mx, .dim = 0, .keepdim = true), SH(1, 4)) && shape_is(mx, SH(1, 4)));
    CHECK_ERR(tn_aminmax(tn_zeros(SH(0), TN_F64), &mx), "empty");
    static const double c_[] = {0, 1, 0, 2, 0, 0};
    tn_tensor *c = F64(c_, SH(2, 3));
    CHKI(tn_count_nonzero(c, (const int64_t[]){0}, 1), E_cnz_d0, SH(3));
    CHKI(tn_count_nonzero(c, (const int64_t[]){0, -1}, 2), E_cnz_d01, SH0);
    CHECK(tn_item(tn_count_nonzero(c, NULL, 0)) == 2);
    CHECK_ERR(tn_count_nonzero(c, (const int64_t[]){0, -2}, 2), "multiple times");
    END;
}

TEST(test_quantile) {
    BEGIN;
    tn_tensor *b = nc(B_, 3, 4), *bn = nc(BN_, 3, 4);
    static const double qv[] = {0.1, 0.5, 0.9}, q2v[] = {0.25, 0.75};
    tn_tensor *q = F64(qv, SH(3)), *q2 = F64(q2v, SH(2));
    CHK(tn_quantile(b, q, .dim = 1), E_q_linear, SH(3, 3));
    CHK(tn_quantile_str(b, q, "dim=1, interpolation='lower'"), E_q_lower, SH(3, 3));
    CHK(tn_quantile(b, q, .dim = -1, .interpolation = TN_INTERPOLATION_HIGHER), E_q_higher, SH(3, 3));
    CHK(tn_quantile(b, q, .dim = 1, .interpolation = TN_INTERPOLATION_MIDPOINT), E_q_midpoint, SH(3, 3));
    CHK(tn_quantile(b, q, .dim = 1, .interpolation = TN_INTERPOLATION_NEAREST), E_q_nearest, SH(3, 3));
    CHK(tn_quantile(b, tn_scalar_tensor(0.3, TN_F64)), E_q_scalar, SH0);
    CHK(tn_quantile(b, q, .dim = 0, .keepdim = true), E_q_keep, SH(3, 1, 4));
    CHK(tn_nanquantile(bn, q2, .dim = 0), E_nq, SH(2, 4));
    CHK(tn_quantile(bn, q2, .dim = 0), E_q_nan, SH(2, 4));
    CHECK_ERR(tn_quantile(tn_zeros(SH(0), TN_F64), q), "non-empty");
    CHECK_ERR(tn_quantile(b, tn_scalar_tensor(1.5, TN_F64)), "range [0, 1]");
    CHECK_ERR(tn_quantile(b, tn_scalar_tensor(0.5, TN_F32)), "dtype");
    CHECK_ERR(tn_quantile(tn_to_dtype(b, TN_I64), tn_scalar_tensor(0.5, TN_I64)), "tn_quantile");
    CHECK_ERR(tn_quantile_str(b, q, "interpolation='foo'"), "interpolation");
    END;
}

/* ---------------------------------------------------------------- searching */
TEST(test_searchsorted_bucketize) {
    BEGIN;
    static const double seq_[] = {1, 3, 5, 7, 9, 2, 4, 6, 8, 10}, val_[] = {3, 6, 9, 1, 11, 4};
    static const double s1_[] = {5, 1, 9, 3, 7}, v1_[] = {3, 4, 9, 0, 10}, bnd_[] = {1, 3, 5, 7, 9};
    tn_tensor *seq = nc(seq_, 2, 5), *val = nc(val_, 2, 3), *s1 = F64(s1_, SH(5));
    CHKI(tn_searchsorted(seq, val), E_ss_left, SH(2, 3));
    CHKI(tn_searchsorted(seq, val, .right = true), E_ss_right, SH(2, 3));
    CHKI(tn_searchsorted_str(seq, val, "side='right'"), E_ss_right, SH(2, 3));
    CHKI(tn_searchsorted(s1, F64(v1_, SH(5)), .side = "right", .sorter = tn_argsort(s1, .dim = 0)), E_ss_sorter, SH(5));
    check_ints(tn_searchsorted(seq, val, .out_int32 = true), TN_I32, E_ss_left, NE(E_ss_left), SH(2, 3), "out_int32");
    CHKI(tn_bucketize(val, F64(bnd_, SH(5)), .right = true), E_bucket, SH(2, 3));
    CHKI(tn_bucketize(val, F64(bnd_, SH(5))), E_bucket_l, SH(2, 3));
    CHECK(tn_item(tn_bucketize(tn_scalar_tensor(4, TN_F64), F64(bnd_, SH(5)))) == 2);
    CHECK(shape_is(tn_searchsorted(seq, tn_zeros(SH(2, 0), TN_F64)), SH(2, 0)));
    CHECK_ERR(tn_searchsorted(seq, val, .side = "left", .right = true), "opposites");
    CHECK_ERR(tn_searchsorted(seq, F64(val_, SH(3, 2))), "tn_searchsorted");
    CHECK_ERR(tn_bucketize(val, seq), "must be 1 dimension");
    END;
}

TEST(test_unique) {
    BEGIN;
    tn_tensor *a = nc(A_, 3, 4), *inv = NULL, *cnt = NULL;
    CHK(tn_unique(a, &inv, &cnt, .return_inverse = true, .return_counts = true), E_uniq, SH(8));
    CHKI(inv, E_uniq_inv, SH(3, 4));
    CHKI(cnt, E_uniq_cnt, SH(8));
    static const double d_[] = {1, 2, 3, 4, 1, 2, 0, 5};
    CHK(tn_unique_str(nc(d_, 4, 2), &inv, &cnt, "dim=0, return_inverse=True, return_counts=True"), E_uniqd, SH(3, 2));
    CHKI(inv, E_uniqd_inv, SH(4));
    CHKI(cnt, E_uniqd_cnt, SH(3));
    static const int64_t uc_[] = {1, 1, 2, 2, 3, 1, 1, 2};
    check_ints(tn_unique_consecutive(I64(uc_, SH(8)), &inv, &cnt, .return_inverse = true, .return_counts = true), TN_I64, E_uc, NE(E_uc), SH(5), "unique_consecutive");
    CHKI(inv, E_uc_inv, SH(8));
    CHKI(cnt, E_uc_cnt, SH(5));
    /* without inverse/counts asked, the pointers stay NULL */
    inv = cnt = NULL;
    CHECK(shape_is(tn_unique(a, &inv, &cnt), SH(8)) && !inv && !cnt);
    CHECK(shape_is(tn_unique(tn_zeros(SH(0), TN_F64), NULL, NULL), SH(0)));
    CHECK(shape_is(tn_unique(tn_scalar_tensor(3, TN_F64), &inv, NULL, .return_inverse = true), SH(1)) && shape_is(inv, SH0));
    CHECK_ERR(tn_unique_consecutive(I64(uc_, SH(8)), NULL, NULL, .dim = 1), "dim");
    END;
}

TEST(test_bincount_histc) {
    BEGIN;
    static const int64_t x_[] = {1, 1, 3, 0, 5};
    static const double w_[] = {0.5, 1, 2, 3, 4};
    tn_tensor *x = I64(x_, SH(5));
    CHK(tn_bincount(x, .weights = F64(w_, SH(5)), .minlength = 8), E_binc_w, SH(8));
    CHKI(tn_bincount(x), E_binc, SH(6));
    CHECK(tn_get_dtype(tn_bincount(x, .weights = tn_to_dtype(F64(w_, SH(5)), TN_F32))) == TN_F32);
    CHECK(shape_is(tn_bincount(tn_zeros(SH(0), TN_I64), .minlength = 3), SH(3)));
    static const int64_t neg_[] = {-1, 2};
    CHECK_ERR(tn_bincount(I64(neg_, SH(2))), "non-negative");
    CHECK_ERR(tn_bincount(tn_zeros(SH(1, 2), TN_I64)), "1-d");
    CHECK_ERR(tn_bincount(tn_zeros(SH(2), TN_F64)), "tn_bincount");
    CHECK_ERR(tn_bincount(x, .minlength = -1), "minlength");
    tn_tensor *b = nc(B_, 3, 4);
    CHK(tn_histc(b, .bins = 4, .min = -2, .max = 6), E_histc, SH(4));
    CHK(tn_histc(b, .bins = 5), E_histc0, SH(5));
    CHECK_ERR(tn_histc(tn_to_dtype(b, TN_I64), .bins = 3), "tn_histc");
    CHECK_ERR(tn_histc(b, .bins = 0), "bins");
    CHECK_ERR(tn_histc(b, .bins = 3, .min = 2, .max = 1), "max");
    END;
}

/* ---------------------------------------------------------------- indexing */
TEST(test_index_add_copy_fill) {
    BEGIN;
    static const int64_t i3_[] = {3, 0, 3}, i2_[] = {2, 0}, i13_[] = {1, 3};
    tn_tensor *b = nc(B_, 3, 4), *s3 = nc(S3_, 3, 3);
    tn_tensor *src8 = tn_reshape(tn_arange(0, 8, 1, TN_F64), SH(2, 4));
    CHK(tn_index_add(b, 1, I64(i3_, SH(3)), s3, .alpha = 2), E_index_add, SH(3, 4));
    CHK(tn_index_add(b, -1, tn_to_dtype(I64(i3_, SH(3)), TN_I32), s3, .alpha = 2), E_index_add, SH(3, 4));
    CHK(tn_index_copy(b, 0, I64(i2_, SH(2)), src8), E_index_copy, SH(3, 4));
    CHK(tn_index_fill(b, -1, I64(i13_, SH(2)), -7.5), E_index_fill, SH(3, 4));
    CHK(b, B_, SH(3, 4));   /* the out-of-place forms left b alone */
    /* in place: the argument back, changed */
    tn_tensor *c = tn_clone(b);
    CHECK(tn_index_add_(c, 1, I64(i3_, SH(3)), s3, .alpha = 2) == c);
    CHK(c, E_index_add, SH(3, 4));
    c = tn_clone(b);
    CHECK(tn_index_copy_(c, 0, I64(i2_, SH(2)), src8) == c);
    CHK(c, E_index_copy, SH(3, 4));
    c = tn_clone(b);
    CHECK(tn_index_fill_(c, 1, I64(i13_, SH(2)), -7.5) == c);
    CHK(c, E_index_fill, SH(3, 4));
    /* 0-d self and index */
    tn_tensor *z = tn_scalar_tensor(1, TN_F64), *iz = tn_scalar_tensor(0, TN_I64);
    CHECK(tn_item(tn_index_add(z, 0, iz, tn_scalar_tensor(2, TN_F64), .alpha = 3)) == 7);
    CHECK(tn_item(tn_index_fill(z, 0, iz, -1)) == -1);
    /* an empty index changes nothing */
    CHK(tn_index_add(b, 1, tn_zeros(SH(0), TN_I64), tn_zeros(SH(3, 0), TN_F64)), B_, SH(3, 4));
    static const int64_t bad_[] = {4};
    CHECK_ERR(tn_index_add(b, 1, I64(bad_, SH(1)), tn_ones(SH(3, 1), TN_F64)), "index 4 is out of bounds");
    CHECK_ERR(tn_index_fill(b, 1, tn_zeros(SH(1), TN_F64), 1), "int64");
    CHECK_ERR(tn_index_copy(b, 0, I64(i2_, SH(2)), tn_ones(SH(2, 3), TN_F64)), "tn_index_copy");
    CHECK_ERR(tn_index_add(b, 2, I64(i2_, SH(2)), s3), "dim");
    END;
}

TEST(test_scatter_reduce) {
    BEGIN;
    tn_tensor *b = nc(B_, 3, 4), *s3 = nc(S3_, 3, 3), *a = nc(A_, 3, 4);
    tn_tensor *idx = tn_transpose(tn_contiguous(tn_transpose(I64(IDX_, SH(3, 3)), 0, 1)), 0, 1);
    static const char *red[] = {"sum", "prod", "mean", "amax", "amin"};
    const double *exp_[5][2] = {{E_sr_sum_0, E_sr_sum_1}, {E_sr_prod_0, E_sr_prod_1}, {E_sr_mean_0, E_sr_mean_1},
                                {E_sr_amax_0, E_sr_amax_1}, {E_sr_amin_0, E_sr_amin_1}};
    for (int r = 0; r < 5; r++)
        for (int inc = 0; inc < 2; inc++) {
            char what[64];
            snprintf(what, sizeof what, "scatter_reduce %s include_self=%d", red[r], inc);
            check_vals(tn_scatter_reduce(b, -1, idx, s3, red[r], .include_self = inc), TN_F64, exp_[r][inc], 12, SH(3, 4), what);
            tn_tensor *c = tn_clone(b);
            CHECK(tn_scatter_reduce_(c, 1, idx, s3, red[r], .include_self = inc) == c);
            check_vals(c, TN_F64, exp_[r][inc], 12, SH(3, 4), what);
        }
    CHK(tn_scatter_with_reduce(a, 1, idx, s3, "add"), E_sc_add, SH(3, 4));
    CHK(tn_scatter_with_reduce(a, 1, idx, s3, "multiply"), E_sc_mul, SH(3, 4));
    tn_tensor *c = tn_clone(a);
    CHECK(tn_scatter_with_reduce_(c, 1, idx, s3, "multiply") == c);
    CHK(c, E_sc_mul, SH(3, 4));
    /* integer mean divides with floor, as PyTorch */
    tn_tensor *im = tn_scatter_reduce(tn_zeros(SH(2), TN_I64), 0, tn_zeros(SH(2), TN_I64), tn_to_dtype(F64((const double[]){3, 4}, SH(2)), TN_I64), "mean", .include_self = false);
    CHECK(im && tn_item(tn_narrow(im, 0, 0, 1)) == 3);
    CHECK_ERR(tn_scatter_reduce(b, 1, idx, s3, "foo"), "reduce argument");
    CHECK_ERR(tn_scatter_with_reduce(b, 1, idx, s3, "mean"), "reduce");
    CHECK_ERR(tn_scatter_reduce(b, 1, idx, tn_to_dtype(s3, TN_F32), "sum"), "dtype");
    END;
}

TEST(test_take_put_along_masked) {
    BEGIN;
    tn_tensor *b = nc(B_, 3, 4);
    static const int64_t ti_[] = {0, 11, 5, -1}, pi_[] = {0, 5, 5, -1}, pn_[] = {1, -2}, ni_[] = {11, 0, 4}, bc_[] = {2, 0, 1};
    static const double pv_[] = {10, 20, 30, 40}, pnv_[] = {10, 20};
    CHK(tn_take(b, I64(ti_, SH(2, 2))), E_take, SH(2, 2));
    CHK(tn_put(b, I64(pi_, SH(4)), F64(pv_, SH(4)), .accumulate = true), E_put_acc, SH(3, 4));
    CHK(tn_put(b, I64(pn_, SH(2)), F64(pnv_, SH(2))), E_put, SH(3, 4));
    tn_tensor *c = tn_clone(b);
    CHECK(tn_put_(c, I64(pi_, SH(2, 2)), F64(pv_, SH(4)), .accumulate = true) == c);
    CHK(c, E_put_acc, SH(3, 4));
    CHECK(shape_is(tn_take(b, tn_zeros(SH(0, 2), TN_I64)), SH(0, 2)));
    CHECK(tn_item(tn_take(tn_scalar_tensor(4, TN_F64), tn_scalar_tensor(-1, TN_I64))) == 4);
    CHECK_ERR(tn_take(b, I64((const int64_t[]){12}, SH(1))), "index 12 is out of bounds");
    CHECK_ERR(tn_take(b, tn_zeros(SH(1), TN_F64)), "tn_take");
    CHECK_ERR(tn_put(b, I64(pn_, SH(2)), F64(pv_, SH(4))), "same number of elements");
    CHECK_ERR(tn_take(tn_zeros(SH(0), TN_F64), I64((const int64_t[]){0}, SH(1))), "index 0");

    CHK(tn_take_along_dim(b, tn_argsort(b, .dim = 1), 1), E_tad, SH(3, 4));
    CHK(tn_take_along_dim(b, I64(ni_, SH(3)), TN_NONE), E_tad_none, SH(3));
    CHK(tn_take_along_dim(b, I64(bc_, SH(3, 1)), -1), E_tad_bc, SH(3, 1));
    CHECK(shape_is(tn_take_along_dim(b, tn_zeros(SH(1, 2), TN_I64), 1), SH(3, 2)));   /* indices broadcast over dim 0 */
    CHECK_ERR(tn_take_along_dim(b, I64(ni_, SH(3)), 1), "same number of dimensions");

    tn_tensor *mask = tn_to_dtype(F64((const double[]){1, 0, 1, 0}, SH(1, 4)), TN_BOOL);
    tn_tensor *src = tn_mul_scalar(tn_reshape(tn_arange(0, 12, 1, TN_F64), SH(3, 4)), 10);
    CHK(tn_masked_scatter(b, mask, src), E_mscat, SH(3, 4));
    c = tn_clone(b);
    CHECK(tn_masked_scatter_(c, mask, src) == c);
    CHK(c, E_mscat, SH(3, 4));
    CHECK_ERR(tn_masked_scatter(b, mask, tn_ones(SH(5), TN_F64)), "Number of elements of source");
    CHECK_ERR(tn_masked_scatter(b, tn_to_dtype(mask, TN_I64), src), "boolean");
    CHECK_ERR(tn_masked_scatter(b, mask, tn_to_dtype(src, TN_F32)), "same dtypes");
    END;
}

TEST(test_argwhere_isin_tri_indices) {
    BEGIN;
    static const double c_[] = {0, 1, 0, 2, 0, 0}, t_[] = {1, 5, 8};
    CHKI(tn_argwhere(nc(c_, 2, 3)), E_argwhere, SH(2, 2));
    CHECK(shape_is(tn_argwhere(tn_scalar_tensor(1, TN_F64)), SH(1, 0)));
    CHECK(shape_is(tn_argwhere(tn_zeros(SH(0, 3), TN_F64)), SH(0, 2)));
    tn_tensor *a = nc(A_, 3, 4), *t = F64(t_, SH(3));
    CHKB(tn_isin(a, t), E_isin, SH(3, 4));
    CHKB(tn_isin(a, t, .invert = true), E_isin_inv, SH(3, 4));
    CHKB(tn_isin_str(tn_to_dtype(a, TN_I64), t, "assume_unique=True"), E_isin, SH(3, 4));   /* mixed dtypes promote */
    CHECK(shape_is(tn_isin(tn_zeros(SH(0), TN_F64), t), SH(0)));
    CHECK(tn_item(tn_isin(tn_scalar_tensor(5, TN_F64), t)) == 1);
    CHKI(tn_tril_indices(4, 3, .offset = -1), E_tril, SH(2, 6));
    CHKI(tn_triu_indices(3, 4, .offset = 1), E_triu, SH(2, 6));
    check_ints(tn_tril_indices(4, 3, .offset = -1, .dtype = TN_I32), TN_I32, E_tril, NE(E_tril), SH(2, 6), "tril int32");
    CHECK(shape_is(tn_tril_indices(0, 3), SH(2, 0)));
    CHECK(shape_is(tn_triu_indices(3, 3, .offset = 5), SH(2, 0)));
    CHECK_ERR(tn_tril_indices(-1, 3), "row must be non-negative");
    CHECK_ERR(tn_triu_indices(3, 3, .dtype = TN_F32), "tn_triu_indices");
    END;
}

TEST(test_repeat_interleave_diff) {
    BEGIN;
    static const double m_[] = {1, 2, 3, 4};
    static const int64_t r_[] = {1, 0, 2}, ri_[] = {2, 0, 3};
    tn_tensor *m = nc(m_, 2, 2), *x6 = tn_reshape(tn_arange(0, 6, 1, TN_F64), SH(2, 3));
    CHK(tn_repeat_interleave(m, 2, .dim = 0), E_ri, SH(4, 2));
    CHK(tn_repeat_interleave(m, 2, .dim = -2, .output_size = 4), E_ri, SH(4, 2));
    CHK(tn_repeat_interleave_tensor(x6, I64(r_, SH(3)), .dim = 1), E_ri_t, SH(2, 3));
    CHK(tn_repeat_interleave_tensor(x6, tn_to_dtype(I64(r_, SH(3)), TN_I32), .dim = -1, .output_size = 3), E_ri_t, SH(2, 3));
    CHK(tn_repeat_interleave(m, 3), E_ri_flat, SH(12));
    CHK(tn_repeat_interleave_tensor(m, tn_scalar_tensor(3, TN_I64)), E_ri_flat, SH(12));
    CHKI(tn_repeat_interleave_indices(I64(ri_, SH(3))), E_ri_idx, SH(5));
    CHECK(shape_is(tn_repeat_interleave(m, 0, .dim = 1), SH(2, 0)));
    CHECK(shape_is(tn_repeat_interleave(tn_scalar_tensor(1, TN_F64), 2), SH(2)));
    CHECK_ERR(tn_repeat_interleave(m, 2, .dim = 0, .output_size = 5), "output_size");
    CHECK_ERR(tn_repeat_interleave(m, -1, .dim = 0), "negative");
    CHECK_ERR(tn_repeat_interleave_tensor(x6, I64(ri_, SH(2)), .dim = 1), "tn_repeat_interleave");
    CHECK_ERR(tn_repeat_interleave_indices(tn_neg(I64(ri_, SH(3)))), "negative");

    tn_tensor *b = nc(B_, 3, 4);
    static const double pre_[] = {1, 2, 3};
    CHK(tn_diff(b, .n = 2, .dim = 1, .prepend = F64(pre_, SH(3, 1)), .append = tn_ones(SH(3, 2), TN_F64)), E_diff, SH(3, 5));
    CHK(tn_diff(b, .dim = -2), E_diff0, SH(2, 4));
    CHKB(tn_diff(tn_to_dtype(F64((const double[]){1, 0, 0, 1}, SH(4)), TN_BOOL)), E_diff_bool, SH(3));
    CHECK(shape_is(tn_diff(b, .n = 5, .dim = 1), SH(3, 0)));   /* n past the length: empty */
    CHK(tn_diff(b, .n = 0, .dim = 1), B_, SH(3, 4));
    CHECK_ERR(tn_diff(tn_scalar_tensor(1, TN_F64)), "at least one-dimensional");
    CHECK_ERR(tn_diff(b, .n = -1, .dim = 1), "non-negative");   /* 2025 PyTorch; 1.13 returned the input */
    CHECK_ERR(tn_diff(b, .dim = 1, .prepend = tn_ones(SH(2, 1), TN_F64)), "tn_diff");
    END;
}

/* ---------------------------------------------------------------- sampling */
TEST(test_multinomial) {
    BEGIN;
    static const double p_[] = {0, 1, 3, 0, 2, 2, 2, 2};
    tn_tensor *p = F64(p_, SH(2, 4));
    tn_generator *g1 = tn_generator_new(7), *g2 = tn_generator_new(7);
    tn_tensor *s = tn_multinomial(p, 4000, g1, .replacement = true), *s2 = tn_multinomial(p, 4000, g2, .replacement = true);
    CHECK(shape_is(s, SH(2, 4000)) && tn_get_dtype(s) == TN_I64);
    CHECK(s && s2 && tn_equal(s, s2));   /* same seed, same draws */
    if (s) {
        const int64_t *v = (const int64_t *)tn_data_ptr(tn_contiguous(s));
        int64_t cnt[2][4] = {{0}};
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 4000; j++) cnt[r][v[r * 4000 + j]]++;
        CHECK(cnt[0][0] == 0 && cnt[0][3] == 0);   /* zero weight: never drawn */
        CHECK(cnt[0][2] > 2 * cnt[0][1] && cnt[0][2] < 4 * cnt[0][1]);   /* 3 : 1 */
        for (int k = 0; k < 4; k++) CHECK(cnt[1][k] > 800 && cnt[1][k] < 1200);
    }
    /* without replacement: distinct categories, the positive ones first */
    for (int rep = 0; rep < 20; rep++) {
        tn_tensor *w = tn_multinomial(p, 2, g1);
        const int64_t *v = w ? (const int64_t *)tn_data_ptr(tn_contiguous(w)) : NULL;
        CHECK(v && ((v[0] == 1 && v[1] == 2) || (v[0] == 2 && v[1] == 1)) && v[2] != v[3]);
    }
    tn_tensor *all = tn_multinomial(p, 4, NULL);
    CHECK(all && tn_equal(tn_sort(all, NULL), tn_expand(tn_arange(0, 4, 1, TN_I64), SH(2, 4))));
    CHECK(shape_is(tn_multinomial(F64(p_ + 4, SH(4)), 3, NULL), SH(3)));   /* 1-d */
    CHECK_ERR(tn_multinomial(p, 0, NULL, .replacement = true), "n_sample <= 0");
    tn_generator_free(g1);
    tn_generator_free(g2);
    CHECK_ERR(tn_multinomial(F64(p_, SH(2)), 3, NULL), "without replacement");
    CHECK_ERR(tn_multinomial(F64((const double[]){-1, 2}, SH(2)), 1, NULL, .replacement = true), "element < 0");
    CHECK_ERR(tn_multinomial(tn_zeros(SH(2), TN_F64), 1, NULL, .replacement = true), "sum of probabilities");
    CHECK_ERR(tn_multinomial(tn_zeros(SH(1, 1, 2), TN_F64), 1, NULL, .replacement = true), "tn_multinomial");
    CHECK_ERR(tn_multinomial(p, -1, NULL, .replacement = true), "tn_multinomial");
    CHECK_ERR(tn_multinomial(tn_ones(SH(2), TN_I64), 1, NULL, .replacement = true), "tn_multinomial");
    END;
}

/* ---------------------------------------------------------------- gradients */
enum { G_MEDIAN, G_NANMEDIAN, G_MEDIAN_ALL, G_KTH, G_MODE, G_MSORT, G_CUMMAX, G_CUMMIN, G_LCSE, G_NANSUM, G_NANMEAN,
       G_QUANT, G_NANQUANT, G_INDEX_ADD, G_INDEX_COPY, G_INDEX_FILL, G_SR_SUM, G_SR_PROD, G_SR_MEAN, G_SR_AMAX, G_SR_AMIN,
       G_TAKE, G_PUT, G_TAD, G_MSCAT, G_RI, G_RI_T, G_DIFF, G_COUNT };
static const char *const G_NAMES[G_COUNT] = {"median", "nanmedian", "median_all", "kthvalue", "mode", "msort", "cummax", "cummin",
    "logcumsumexp", "nansum", "nanmean", "quantile", "nanquantile", "index_add", "index_copy", "index_fill", "scatter_reduce sum",
    "scatter_reduce prod", "scatter_reduce mean", "scatter_reduce amax", "scatter_reduce amin", "take", "put", "take_along_dim",
    "masked_scatter", "repeat_interleave", "repeat_interleave tensor", "diff"};
static tn_tensor *gfn(tn_tensor *const *in, int n, void *user) {
    const int op = *(const int *)user;
    tn_tensor *t[2] = {NULL, NULL}, *i = NULL;
    for (int k = 0; k < n; k++) t[k] = tn_ndim(in[k]) == 2 ? tn_transpose(in[k], 0, 1) : in[k];   /* not contiguous */
    tn_tensor *x = t[0];
    in = t;
    static const int64_t i3_[] = {3, 0, 3}, i2_[] = {2, 0}, ti_[] = {0, 11, 5, -1, 5};
    static const double q_[] = {0.2, 0.5, 0.9};
    switch (op) {
    case G_MEDIAN: return tn_median_dim(x, &i, .dim = 1);
    case G_NANMEDIAN: return tn_nanmedian_dim(x, &i, .dim = 0, .keepdim = true);
    case G_MEDIAN_ALL: return tn_median(x);
    case G_KTH: return tn_kthvalue(x, 2, &i);
    case G_MODE: return tn_mode(x, &i, .dim = 0);
    case G_MSORT: return tn_msort(x);
    case G_CUMMAX: return tn_cummax(x, 1, &i);
    case G_CUMMIN: return tn_cummin(x, 0, &i);
    case G_LCSE: return tn_logcumsumexp(x, -1);
    case G_NANSUM: return tn_nansum_dims(x, (const int64_t[]){1}, 1);
    case G_NANMEAN: return tn_nanmean_dims(x, (const int64_t[]){0}, 1, .keepdim = true);
    case G_QUANT: return tn_quantile(x, F64(q_, SH(3)), .dim = 1);
    case G_NANQUANT: return tn_nanquantile(x, F64(q_, SH(3)), .dim = 0, .interpolation = TN_INTERPOLATION_MIDPOINT);
    case G_INDEX_ADD: return tn_index_add(x, 1, I64(i3_, SH(3)), in[1], .alpha = -1.5);
    case G_INDEX_COPY: return tn_index_copy(x, 0, I64(i2_, SH(2)), in[1]);
    case G_INDEX_FILL: return tn_index_fill(x, 1, I64(i2_, SH(2)), 4);
    case G_SR_SUM: case G_SR_PROD: case G_SR_MEAN: case G_SR_AMAX: case G_SR_AMIN: {
        static const char *red[] = {"sum", "prod", "mean", "amax", "amin"};
        tn_tensor *idx = I64(IDX_, SH(3, 3));
        return tn_add(tn_scatter_reduce(x, 1, idx, in[1], red[op - G_SR_SUM]), tn_scatter_reduce(x, 1, idx, in[1], red[op - G_SR_SUM], .include_self = false));
    }
    case G_TAKE: return tn_take(x, I64(ti_, SH(5)));
    case G_PUT: return tn_put(x, I64(ti_, SH(5)), in[1], .accumulate = true);
    case G_TAD: return tn_take_along_dim(x, I64(IDX_, SH(3, 3)), 1);
    case G_MSCAT: return tn_masked_scatter(x, tn_to_dtype(F64((const double[]){1, 0, 1, 1}, SH(4)), TN_BOOL), in[1]);
    case G_RI: return tn_repeat_interleave(x, 2, .dim = -1);
    case G_RI_T: return tn_repeat_interleave_tensor(x, I64((const int64_t[]){2, 0, 1}, SH(3)), .dim = 0);
    case G_DIFF: return tn_diff(x, .n = 2, .dim = 1, .prepend = in[1]);
    }
    return NULL;
}
TEST(test_gradcheck) {
    BEGIN;
    /* distinct values: the selections' gradients are defined */
    static const double S3P_[] = {1.125, 2.125, 3.125, 4.125, 5.125, 6.125, 7.125, 8.125, 9.125};
    static const double bn_[] = {0.5, NAN, 3, 2, 7, -4, 1.5, 0, -2.5, 6, 4.25, -0.75};
    for (int op = 0; op < G_COUNT; op++) {
        tn_scope_begin();
        tn_tensor *in[2] = {lt(op == G_NANMEDIAN || op == G_NANSUM || op == G_NANMEAN || op == G_NANQUANT ? bn_ : B_, 3, 4), NULL};
        int n = 1;
        if (op == G_INDEX_ADD || (op >= G_SR_SUM && op <= G_SR_AMIN)) in[n++] = lt(S3_, 3, 3);
        if (op == G_INDEX_COPY) in[n++] = leaf(tn_reshape(tn_arange(0, 8, 1, TN_F64), SH(4, 2)));
        if (op == G_PUT) in[n++] = leaf(F64(S3_, SH(5)));
        if (op == G_MSCAT) in[n++] = lt(S3_, 3, 3);
        if (op == G_DIFF) in[n++] = leaf(F64((const double[]){1, 2, 3}, SH(1, 3)));
        if (op == G_RI_T) in[0] = lt(S3_, 3, 3);
        /* the amax/amin ties between self and src split the gradient evenly, which finite
           differences do not see: shift src off self's values */
        if (op == G_SR_AMAX || op == G_SR_AMIN) in[1] = lt(S3P_, 3, 3);
        bool ok = tn_gradcheck(gfn, in, n, &op, .atol = 1e-7, .rtol = 1e-5);
        CHECK_MSG(ok, "gradcheck %s: %s", G_NAMES[op], tn_last_error());
        if (op == G_LCSE || op == G_CUMMAX || op == G_DIFF || op == G_QUANT || op == G_SR_SUM || op == G_TAKE || op == G_INDEX_ADD || op == G_MSCAT) {
            ok = tn_gradgradcheck(gfn, in, n, &op, .atol = 1e-6, .rtol = 1e-4);
            CHECK_MSG(ok, "gradgradcheck %s: %s", G_NAMES[op], tn_last_error());
        }
        tn_scope_end();
    }
    /* PyTorch has no derivative for scatter(reduce=): backward through it is an error */
    tn_tensor *x = leaf(nc(A_, 3, 4));
    tn_tensor *y = tn_sum(tn_scatter_with_reduce(x, 1, I64(IDX_, SH(3, 3)), nc(S3_, 3, 3), "add"));
    CHECK(y && tn_backward(y) != 0);
    /* the indices outputs never require grad */
    tn_tensor *i = NULL;
    tn_tensor *v = tn_median_dim(x, &i, .dim = 1);
    CHECK(v && tn_requires_grad(v) && i && !tn_requires_grad(i));
    END;
}

int main(void) {
    RUN(test_median_kthvalue_mode);
    RUN(test_cum_extremes_logcumsumexp);
    RUN(test_nan_reductions_aminmax_count);
    RUN(test_quantile);
    RUN(test_searchsorted_bucketize);
    RUN(test_unique);
    RUN(test_bincount_histc);
    RUN(test_index_add_copy_fill);
    RUN(test_scatter_reduce);
    RUN(test_take_put_along_masked);
    RUN(test_argwhere_isin_tri_indices);
    RUN(test_repeat_interleave_diff);
    RUN(test_multinomial);
    RUN(test_gradcheck);
    return tn_test_report();
}
