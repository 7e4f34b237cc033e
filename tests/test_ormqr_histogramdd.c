/* test_ormqr_histogramdd.c — issue 20's last op_db names in C: tn_ormqr (src/ops/linalg_more.c)
 * against Q built naively from the reflectors (all four sides/transposes, batched, non-contiguous,
 * 0-size), its float64 gradcheck in all three inputs, PyTorch's errors; tn_histogramdd
 * (src/ops/reduce.c) against a naive loop over the points (counts, weights, density, range,
 * given edges, NaN and out-of-range points, float32, 0 points), and its errors.
 * bindings/python/tests/test_lowrank_ormqr_histogramdd.py compares both with torch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double maxabs(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = tn_item(tn_max(tn_abs(tn_sub(a, b))));
    tn_scope_end();
    return r;
}
static const double *f64(tn_tensor *t) { return (const double *)tn_data_ptr(t); }   /* t contiguous float64 */
static tn_tensor *c64(tn_tensor *t) { return tn_contiguous(tn_to_dtype(t, TN_F64)); }

/* op(Q) C (left) or C op(Q), Q = H_0 ... H_{k-1} (mn x mn) formed explicitly, one matrix. */
static void naive_ormqr(const double *a, int64_t mn, int64_t ka, const double *tau, int64_t k, const double *c, int64_t m, int64_t n,
                        bool left, bool tr, double *out) {
    double *Q = (double *)calloc((size_t)(mn * mn), sizeof(double)), *T = (double *)calloc((size_t)(mn * mn), sizeof(double));
    double *v = (double *)calloc((size_t)mn, sizeof(double));
    for (int64_t i = 0; i < mn; i++) Q[i * mn + i] = 1;
    for (int64_t h = 0; h < k; h++) {   /* Q = Q H_h */
        for (int64_t i = 0; i < mn; i++) v[i] = i < h ? 0 : i == h ? 1 : a[i * ka + h];
        for (int64_t i = 0; i < mn; i++)
            for (int64_t j = 0; j < mn; j++) {
                double s = 0;
                for (int64_t l = 0; l < mn; l++) s += Q[i * mn + l] * ((l == j) - tau[h] * v[l] * v[j]);
                T[i * mn + j] = s;
            }
        memcpy(Q, T, (size_t)(mn * mn) * sizeof(double));
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t l = 0; l < mn; l++)
                s += left ? (tr ? Q[l * mn + i] : Q[i * mn + l]) * c[l * n + j] : c[i * n + l] * (tr ? Q[j * mn + l] : Q[l * mn + j]);
            out[i * n + j] = s;
        }
    free(Q); free(T); free(v);
}

TEST(ormqr_values) {
    tn_manual_seed(3);
    tn_scope_begin();
    /* (mn, ka): tall, square, wide reflector matrices; every side and transpose; batch of 2 */
    const int64_t dims[4][2] = {{5, 3}, {4, 4}, {3, 5}, {6, 1}};
    for (int d = 0; d < 4; d++)
        for (int side = 0; side < 2; side++)
            for (int tr = 0; tr < 2; tr++) {
                const int64_t mn = dims[d][0], ka = dims[d][1], k = mn < ka ? mn : ka, other = 3;
                tn_tensor *tau = NULL, *A = tn_geqrf(tn_randn(TN_SHAPE(2, mn, ka), TN_F64), &tau);
                /* other non-contiguous: a transposed view */
                tn_tensor *C = side == 0 ? tn_transpose(tn_randn(TN_SHAPE(2, other, mn), TN_F64), -2, -1)
                                         : tn_transpose(tn_randn(TN_SHAPE(2, mn, other), TN_F64), -2, -1);
                tn_tensor *R = tn_ormqr(A, tau, C, .left = side == 0, .transpose = tr == 1);
                CHECK(R && tn_size(R, 1) == tn_size(C, 1) && tn_size(R, 2) == tn_size(C, 2));
                if (!R) continue;
                tn_tensor *a = c64(A), *t = c64(tau), *c = c64(C), *r = c64(R);
                const int64_t m = tn_size(C, 1), n = tn_size(C, 2);
                double *ref = (double *)calloc((size_t)(m * n), sizeof(double));
                double worst = 0;
                for (int b = 0; b < 2; b++) {
                    naive_ormqr(f64(a) + b * mn * ka, mn, ka, f64(t) + b * k, k, f64(c) + b * m * n, m, n, side == 0, tr == 1, ref);
                    for (int64_t i = 0; i < m * n; i++) worst = fmax(worst, fabs(ref[i] - f64(r)[b * m * n + i]));
                }
                free(ref);
                CHECK_MSG(worst < 1e-12, "ormqr mn %lld ka %lld left %d transpose %d: off by %g", (long long)mn, (long long)ka, side == 0, tr, worst);
            }
    /* Q^T (Q C) = C; float32 */
    tn_tensor *tau = NULL, *A = tn_geqrf(tn_randn(TN_SHAPE(6, 4), TN_F32), &tau), *C = tn_randn(TN_SHAPE(6, 2), TN_F32);
    tn_tensor *QC = tn_ormqr(A, tau, C);
    CHECK(QC && tn_get_dtype(QC) == TN_F32 && maxabs(tn_ormqr(A, tau, QC, .transpose = true), C) < 1e-5);
    /* the first k columns of Q C = Q [I; 0] are householder_product's Q */
    tn_tensor *E = tn_eye(6, 4, TN_F32);
    CHECK(maxabs(tn_ormqr(A, tau, E), tn_linalg_householder_product(A, tau)) < 1e-6);
    /* 0-size: no reflectors (other unchanged), a 0 batch, 0 columns of other */
    tn_tensor *A0 = tn_randn(TN_SHAPE(4, 0), TN_F64), *t0 = tn_zeros(TN_SHAPE(0), TN_F64), *C0 = tn_randn(TN_SHAPE(4, 3), TN_F64);
    tn_tensor *R0 = tn_ormqr(A0, t0, C0);
    CHECK(R0 && maxabs(R0, C0) == 0);
    tn_tensor *Rb = tn_ormqr(tn_randn(TN_SHAPE(0, 4, 2), TN_F64), tn_randn(TN_SHAPE(0, 2), TN_F64), tn_randn(TN_SHAPE(0, 4, 3), TN_F64), .transpose = true);
    CHECK(Rb && tn_numel(Rb) == 0 && tn_size(Rb, 2) == 3);
    tn_tensor *Rc = tn_ormqr(tn_randn(TN_SHAPE(4, 2), TN_F64), tn_randn(TN_SHAPE(2), TN_F64), tn_randn(TN_SHAPE(4, 0), TN_F64));
    CHECK(Rc && tn_numel(Rc) == 0 && tn_size(Rc, 0) == 4);
    tn_scope_end();
}

TEST(ormqr_errors) {
    tn_scope_begin();
    tn_tensor *z = tn_randn(NULL, 0, TN_F64);
    CHECK_ERR(tn_ormqr(z, z, z), "input must have at least 2 dimensions");
    /* PyTorch's issue 85218 case: tau longer than input has columns */
    CHECK_ERR(tn_ormqr(tn_ones(TN_SHAPE(5, 0), TN_F64), tn_ones(TN_SHAPE(5), TN_F64), tn_ones(TN_SHAPE(5, 5), TN_F64), .transpose = true),
              "tau.shape[-1] must be less than or equal to input.shape[-1]");
    tn_tensor *A = tn_randn(TN_SHAPE(2, 5, 3), TN_F64), *tau = tn_randn(TN_SHAPE(2, 3), TN_F64);
    CHECK_ERR(tn_ormqr(A, tau, tn_randn(TN_SHAPE(2, 4, 3), TN_F64)), "other.shape[-2] must be equal to input.shape[-2]");
    CHECK_ERR(tn_ormqr(A, tau, tn_randn(TN_SHAPE(2, 3, 4), TN_F64), .left = false), "other.shape[-1] must be equal to input.shape[-2]");
    CHECK_ERR(tn_ormqr(A, tau, tn_randn(TN_SHAPE(2, 2, 2), TN_F64)), "other.shape[-2] must be greater than or equal to tau.shape[-1]");
    CHECK_ERR(tn_ormqr(A, tn_randn(TN_SHAPE(3), TN_F64), tn_randn(TN_SHAPE(2, 5, 2), TN_F64)), "Expected tau to have one dimension less than input");
    CHECK_ERR(tn_ormqr(A, tau, tn_randn(TN_SHAPE(5, 2), TN_F64)), "Expected other to have the same number of dimensions as input");
    CHECK_ERR(tn_ormqr(A, tau, tn_randn(TN_SHAPE(3, 5, 2), TN_F64)), "Expected batch dimensions");
    CHECK_ERR(tn_ormqr(A, tn_randn(TN_SHAPE(2, 3), TN_F32), tn_randn(TN_SHAPE(2, 5, 2), TN_F64)), "to have the same dtype");
    CHECK_ERR(tn_ormqr(tn_ones(TN_SHAPE(5, 3), TN_I64), tn_ones(TN_SHAPE(3), TN_I64), tn_ones(TN_SHAPE(5, 2), TN_I64)), "floating point or complex");
    CHECK(tn_ormqr(NULL, tau, A) == NULL);   /* a failed input propagates (its error stands) */
    tn_scope_end();
}

static int side_;
static tn_tensor *f_ormqr(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_ormqr(x[0], x[1], x[2], .left = side_ < 2, .transpose = side_ & 1); }
static tn_tensor *leaf(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
TEST(ormqr_gradcheck) {
    tn_manual_seed(5);
    tn_scope_begin();
    for (side_ = 0; side_ < 4; side_++) {
        const bool left = side_ < 2;
        tn_tensor *in[3] = {leaf(tn_randn(TN_SHAPE(2, 4, 3), TN_F64)), leaf(tn_randn(TN_SHAPE(2, 3), TN_F64)),
                            leaf(left ? tn_randn(TN_SHAPE(2, 4, 2), TN_F64) : tn_randn(TN_SHAPE(2, 2, 4), TN_F64))};
        CHECK_MSG(tn_gradcheck(f_ormqr, in, 3, NULL, .rtol = 1e-4), "ormqr gradcheck left %d transpose %d", left, side_ & 1);
        CHECK_MSG(tn_gradgradcheck(f_ormqr, in, 3, NULL, .rtol = 1e-4), "ormqr gradgradcheck left %d transpose %d", left, side_ & 1);
    }
    tn_tensor *in[3] = {leaf(tn_randn(TN_SHAPE(3, 3), TN_F64)), leaf(tn_randn(TN_SHAPE(3), TN_F64)), leaf(tn_randn(TN_SHAPE(3, 2), TN_F64))};
    side_ = 0;
    tn_tensor *r = f_ormqr(in, 3, NULL);
    CHECK(r && strcmp(tn_grad_fn_name(r), "OrmqrBackward0") == 0);
    tn_scope_end();
}

/* the bin of v in sorted edges e[0..ne-1] by a linear scan: -1 outside or NaN, the last closed */
static int64_t naive_bin(const double *e, int64_t ne, double v) {
    if (!(v >= e[0] && v <= e[ne - 1])) return -1;
    for (int64_t j = 0; j < ne - 2; j++)
        if (v < e[j + 1]) return j;
    return ne - 2;
}
/* counts (or weight sums) of the points p [M, D] in the bins of the edges, row-major hist */
static void naive_hist(const double *p, int64_t M, int64_t D, tn_tensor *const *edges, const double *w, double *hist) {
    int64_t size = 1;
    for (int64_t d = 0; d < D; d++) size *= tn_numel(edges[d]) - 1;
    memset(hist, 0, (size_t)size * sizeof(double));
    for (int64_t i = 0; i < M; i++) {
        int64_t at = 0;
        bool in = true;
        for (int64_t d = 0; d < D && in; d++) {
            tn_tensor *e = c64(edges[d]);
            const int64_t ne = tn_numel(e), b = naive_bin(f64(e), ne, p[i * D + d]);
            in = b >= 0;
            at = at * (ne - 1) + b;
        }
        if (in) hist[at] += w ? w[i] : 1;
    }
}

TEST(histogramdd_values) {
    tn_manual_seed(9);
    tn_scope_begin();
    /* 300 points in 3 dims, non-contiguous (a transposed [3, 300]); a few NaN */
    tn_tensor *P = tn_transpose(tn_randn(TN_SHAPE(3, 300), TN_F64), 0, 1);
    tn_tensor *mask = tn_lt_scalar(tn_rand(TN_SHAPE(300, 3), TN_F64), 0.02);
    P = tn_where(mask, tn_full(TN_SHAPE(300, 3), NAN, TN_F64), P);
    const int64_t bins[3] = {4, 3, 5};
    tn_tensor *edges[3] = {NULL, NULL, NULL}, *w = tn_rand(TN_SHAPE(300), TN_F64);
    tn_tensor *H = tn_histogramdd(P, bins, 3, edges, .range = TN_DOUBLES(-1, 1, -2, 0.5, 0, 3));   /* many points outside */
    CHECK(H && tn_ndim(H) == 3 && tn_size(H, 0) == 4 && tn_size(H, 1) == 3 && tn_size(H, 2) == 5 && edges[0] && edges[2]);
    if (!H) { tn_scope_end(); return; }
    CHECK(tn_numel(edges[1]) == 4 && tn_item(tn_select(edges[1], 0, 0)) == -2 && tn_item(tn_select(edges[1], 0, 3)) == 0.5);
    tn_tensor *p = c64(P);
    double ref[60], refw[60];
    naive_hist(f64(p), 300, 3, edges, NULL, ref);
    CHECK(maxabs(H, tn_from_data(ref, TN_SHAPE(4, 3, 5), TN_F64)) == 0);
    CHECK(tn_item(tn_sum(H)) > 10 && tn_item(tn_sum(H)) < 290);   /* some in, some out */
    tn_tensor *wc = c64(w);
    naive_hist(f64(p), 300, 3, edges, f64(wc), refw);
    tn_tensor *Hw = tn_histogramdd(P, bins, 3, NULL, .range = TN_DOUBLES(-1, 1, -2, 0.5, 0, 3), .weight = w);
    CHECK(Hw && maxabs(Hw, tn_from_data(refw, TN_SHAPE(4, 3, 5), TN_F64)) < 1e-12);
    /* density: the weighted counts over their total and each bin's volume: integrates to 1 */
    tn_tensor *Hd = tn_histogramdd(P, bins, 3, NULL, .range = TN_DOUBLES(-1, 1, -2, 0.5, 0, 3), .weight = w, .density = true);
    const double vol = (2.0 / 4) * (2.5 / 3) * (3.0 / 5);
    CHECK(Hd && fabs(tn_item(tn_sum(Hd)) * vol - 1) < 1e-12);
    /* the data's range (NaN-free points), every point counted, the extremes in the edges */
    tn_tensor *Q = tn_randn(TN_SHAPE(100, 2), TN_F64), *qe[2] = {NULL, NULL};
    tn_tensor *Hq = tn_histogramdd(Q, bins, 2, qe);
    const int64_t d0 = 0;
    CHECK(Hq && tn_item(tn_sum(Hq)) == 100 && tn_item(tn_select(qe[1], 0, 3)) == tn_item(tn_select(tn_amax(Q, &d0, 1), 0, 1)));
    /* given edges (uneven) reproduce the counts-form with the same edges */
    const double e0[4] = {-3, -0.5, 0.1, 3}, e1[3] = {-1, 0, 2};
    tn_tensor *ge[2] = {tn_from_data(e0, TN_SHAPE(4), TN_F64), tn_from_data(e1, TN_SHAPE(3), TN_F64)}, *oe[2] = {NULL, NULL};
    tn_tensor *Hg = tn_histogramdd_edges(Q, ge, 2, oe);
    double refg[6];
    tn_tensor *q = c64(Q);
    naive_hist(f64(q), 100, 2, ge, NULL, refg);
    CHECK(Hg && maxabs(Hg, tn_from_data(refg, TN_SHAPE(3, 2), TN_F64)) == 0 && oe[0] && maxabs(oe[0], ge[0]) == 0);
    /* a point on the rightmost edge is in the last bin; one on an inner edge in the bin it opens */
    const double pts[4] = {3, 2, -0.5, 0};
    tn_tensor *He = tn_histogramdd_edges(tn_from_data(pts, TN_SHAPE(2, 2), TN_F64), ge, 2, NULL);
    CHECK(He && tn_item(tn_select(tn_select(He, 0, 2), 0, 1)) == 1 && tn_item(tn_select(tn_select(He, 0, 1), 0, 1)) == 1 && tn_item(tn_sum(He)) == 2);
    /* float32: counts in float32, edges of float32's linspace */
    tn_tensor *P32 = tn_to_dtype(Q, TN_F32), *e32[2] = {NULL, NULL};
    tn_tensor *H32 = tn_histogramdd(P32, bins, 2, e32);
    CHECK(H32 && tn_get_dtype(H32) == TN_F32 && tn_get_dtype(e32[0]) == TN_F32 && tn_item(tn_sum(H32)) == 100);
    /* bins of one count for every dim; batched points [..., D] */
    const int64_t one[2] = {1, 1};
    tn_tensor *Hb = tn_histogramdd(tn_reshape(Q, TN_SHAPE(5, 20, 2)), one, 2, NULL);
    CHECK(Hb && tn_ndim(Hb) == 2 && tn_item(tn_sum(Hb)) == 100);
    /* 0 points: zeros, numpy's [0, 1] range */
    tn_tensor *z[2] = {NULL, NULL}, *Hz = tn_histogramdd(tn_zeros(TN_SHAPE(0, 2), TN_F64), bins, 2, z);
    CHECK(Hz && tn_numel(Hz) == 12 && tn_item(tn_sum(Hz)) == 0 && tn_item(tn_select(z[0], 0, 4)) == 1);
    /* a degenerate range widens by 0.5 each side */
    tn_tensor *w2[2] = {NULL, NULL}, *H2 = tn_histogramdd(Q, one, 2, w2, .range = TN_DOUBLES(2, 2, 0, 1));
    CHECK(H2 && tn_item(tn_select(w2[0], 0, 0)) == 1.5 && tn_item(tn_select(w2[0], 0, 1)) == 2.5);
    tn_scope_end();
}

TEST(histogramdd_errors) {
    tn_scope_begin();
    tn_tensor *P = tn_randn(TN_SHAPE(10, 2), TN_F64);
    const int64_t b2[2] = {2, 3}, b0[2] = {2, 0}, bn[2] = {-1, 2};
    CHECK_ERR(tn_histogramdd(P, b0, 2, NULL), "bins must be > 0, but got 0 for dimension 1");
    CHECK_ERR(tn_histogramdd(P, bn, 2, NULL), "bins must be > 0");
    CHECK_ERR(tn_histogramdd(P, b2, 1, NULL), "The size of bins must be equal to the innermost dimension");
    CHECK_ERR(tn_histogramdd(tn_randn(TN_SHAPE(10), TN_F64), b2, 1, NULL), "at least 2 dimensions");
    CHECK_ERR(tn_histogramdd(tn_ones(TN_SHAPE(10, 2), TN_I64), b2, 2, NULL), "not implemented for 'Long'");
    CHECK_ERR(tn_histogramdd(P, b2, 2, NULL, .range = TN_DOUBLES(0, NAN, 0, 1)), "dimension 0's range [0, nan] is not finite");
    CHECK_ERR(tn_histogramdd(P, b2, 2, NULL, .range = TN_DOUBLES(-INFINITY, 0, 0, 1)), "is not finite");
    CHECK_ERR(tn_histogramdd(P, b2, 2, NULL, .range = TN_DOUBLES(0, 1, 1, 0)), "min should not exceed max");
    /* NaN data with no range: its min/max are NaN */
    tn_tensor *Pn = tn_where(tn_gt_scalar(P, 1e9), P, tn_full(TN_SHAPE(10, 2), NAN, TN_F64));
    CHECK_ERR(tn_histogramdd(Pn, b2, 2, NULL), "is not finite");
    CHECK_ERR(tn_histogramdd(P, b2, 2, NULL, .weight = tn_ones(TN_SHAPE(9), TN_F64)), "excluding its innermost dimension");
    CHECK_ERR(tn_histogramdd(P, b2, 2, NULL, .weight = tn_ones(TN_SHAPE(10), TN_F32)), "same dtype as the input");
    tn_tensor *good = tn_linspace(0, 1, 3, TN_F64);
    tn_tensor *e2d[2] = {tn_ones(TN_SHAPE(2, 2), TN_F64), good}, *e0[2] = {good, tn_zeros(TN_SHAPE(0), TN_F64)}, *ef[2] = {good, tn_linspace(0, 1, 3, TN_F32)};
    CHECK_ERR(tn_histogramdd_edges(P, e2d, 2, NULL), "one dimension and at least 1 element");
    CHECK_ERR(tn_histogramdd_edges(P, e0, 2, NULL), "for dimension 1");
    CHECK_ERR(tn_histogramdd_edges(P, ef, 2, NULL), "should have the same dtype");
    CHECK_ERR(tn_histogramdd_edges(P, e0, 1, NULL), "expected 2 sequences");
    CHECK_ERR(tn_histogramdd_edges(P, NULL, 2, NULL), "NULL");
    CHECK(tn_histogramdd(NULL, b2, 2, NULL) == NULL);
    /* the keyword convention: range=None, weight=None, density=False; range has 2 D values */
    const tn_histogramdd_fn_opts hd = TN_DEFAULTS(tn_histogramdd_fn_opts);
    CHECK(hd.range.n == 0 && hd.weight == NULL && !hd.density);
    CHECK_ERR(tn_histogramdd(P, b2, 2, NULL, .range = TN_DOUBLES(0, 1)), "for a 2-dimensional histogram range should have 4 elements, but got 2");
    tn_tensor *eg[2] = {good, good};
    CHECK_ERR(tn_histogramdd_edges(P, eg, 2, NULL, .range = TN_DOUBLES(0, 1, 0, 1)), "range is not allowed with bin edges");
    CHECK_ERR(tn_histogramdd_str(P, b2, 2, NULL, "range=(0, 1, 0, 1), bins=3"), "tn_histogramdd: unknown option 'bins'");
    /* the text form: the same counts as the struct form */
    tn_tensor *Hs = tn_histogramdd_str(P, b2, 2, NULL, "range=(-1, 1, -2, 2), density=True");
    tn_tensor *Hk = tn_histogramdd(P, b2, 2, NULL, .range = TN_DOUBLES(-1, 1, -2, 2), .density = true);
    CHECK(Hs && Hk && maxabs(Hs, Hk) == 0);
    tn_scope_end();
}

int main(void) {
    RUN(ormqr_values);
    RUN(ormqr_errors);
    RUN(ormqr_gradcheck);
    RUN(histogramdd_values);
    RUN(histogramdd_errors);
    return tn_test_report();
}
