/* tests/test_losses.c — loss functions of section 10 (tn_mse_loss ... tn_margin_ranking_loss).
 *
 * Values against naive loops written here (contiguous and strided inputs, broadcasting,
 * batch size 1, [N, C, d1, d2] inputs), every loss and reduction through tn_gradcheck in
 * float64 (and tn_gradgradcheck for several), grad_fn names, hand-computed cases, errors,
 * and PyTorch (/usr/bin/python3 with torch) as an oracle for values, gradients and node
 * names; that part prints "skipped: ..." when torch cannot be imported. */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, fdopen: PyTorch as the oracle */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>

static const tn_reduction REDS[3] = {TN_REDUCTION_MEAN, TN_REDUCTION_SUM, TN_REDUCTION_NONE};
static const char *const RED_PY[4] = {"mean", "sum", "none", "batchmean"};

/* ---- helpers ---- */
static tn_tensor *F64(const double *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_F64); }
static tn_tensor *I64(const int64_t *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_I64); }
static tn_tensor *leaf(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
/* a contiguous float64 copy's data (owned by the current scope), logical order */
static const double *D(tn_tensor *t) {
    tn_tensor *c = t ? tn_contiguous(tn_to_dtype(tn_detach(t), TN_F64)) : NULL;
    return c ? (const double *)tn_data_ptr(c) : NULL;
}
static const int64_t *L(tn_tensor *t) {
    tn_tensor *c = t ? tn_contiguous(tn_to_dtype(t, TN_I64)) : NULL;
    return c ? (const int64_t *)tn_data_ptr(c) : NULL;
}
/* one check per array: |a - b| <= atol + rtol |b| everywhere (NaN equals NaN) */
static int close_arr(const double *a, const double *b, int64_t n, double atol, double rtol, const char *what) {
    if (!a || !b) { CHECK_MSG(0, "%s: missing data (%s)", what, tn_last_error()); return 0; }
    for (int64_t i = 0; i < n; i++) {
        bool both_nan = a[i] != a[i] && b[i] != b[i];
        if (!both_nan && !(fabs(a[i] - b[i]) <= atol + rtol * fabs(b[i])) && a[i] != b[i]) {
            CHECK_MSG(0, "%s: element %lld is %.17g, expected %.17g", what, (long long)i, a[i], b[i]);
            return 0;
        }
    }
    CHECK(1);
    return 1;
}
/* "[2, 3]": a shape for messages (static buffer: one use per printf) */
static const char *shape_str(const int64_t *shape, int nd) {
    static char buf[256];
    int k = snprintf(buf, sizeof buf, "[");
    for (int i = 0; i < nd && k < (int)sizeof buf - 24; i++) k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    snprintf(buf + k, sizeof buf - (size_t)k, "]");
    return buf;
}
static bool same_shape(tn_tensor *t, const int64_t *shape, int nd) {
    if (!t || tn_ndim(t) != nd) return false;
    for (int i = 0; i < nd; i++) if (tn_shape(t)[i] != shape[i]) return false;
    return true;
}
/* flat index into a contiguous tensor of shape ishape broadcast to oshape */
static int64_t bidx(int64_t flat, const int64_t *oshape, int ond, const int64_t *ishape, int ind) {
    int64_t idx = 0, stride = 1;
    for (int d = ond - 1, e = ind - 1; d >= 0; d--, e--) {
        int64_t coord = flat % oshape[d];
        flat /= oshape[d];
        if (e >= 0) {
            if (ishape[e] != 1) idx += coord * stride;
            stride *= ishape[e];
        }
    }
    return idx;
}
static int bshape(tn_tensor *a, tn_tensor *b, int64_t *out) {
    int n = tn_ndim(a) > tn_ndim(b) ? tn_ndim(a) : tn_ndim(b);
    for (int i = 0; i < n; i++) {
        int ia = i - (n - tn_ndim(a)), ib = i - (n - tn_ndim(b));
        int64_t x = ia >= 0 ? tn_shape(a)[ia] : 1, y = ib >= 0 ? tn_shape(b)[ib] : 1;
        out[i] = x == 1 ? y : x;
    }
    return n;
}
static tn_tensor *uniform(const int64_t *shape, int nd, double lo, double hi) { return tn_uniform(lo, hi, shape, nd, TN_F64, NULL); }
/* a non-contiguous [r, c] float64 tensor with the values of a fresh random [c, r] transposed */
static tn_tensor *strided(int64_t r, int64_t c, double lo, double hi) {
    int64_t s[2] = {c, r};
    tn_tensor *t = tn_transpose(uniform(s, 2, lo, hi), 0, 1);
    return t;
}

/* ---- naive references ---- */
enum { K_MSE, K_L1, K_SL1, K_HUBER, K_KL, K_KLLOG, K_BCE, K_BCEL, K_MARGIN };
static const char *const KNAME[] = {"mse", "l1", "smooth_l1", "huber", "kl_div", "kl_div(log_target)", "bce", "bce_with_logits", "margin_ranking"};
static double pw_elem(int k, double x, double y, double p, double w, double pw) {
    double d = x - y, z = fabs(d);
    switch (k) {
    case K_MSE: return d * d;
    case K_L1: return z;
    case K_SL1: return p == 0 ? z : z < p ? 0.5 * d * d / p : z - 0.5 * p;
    case K_HUBER: return z < p ? 0.5 * d * d : p * (z - 0.5 * p);
    case K_KL: return (y == 0 ? 0 : y * log(y)) - y * x;
    case K_KLLOG: return exp(y) * (y - x);
    case K_BCE: return -w * (y * fmax(log(x), -100) + (1 - y) * fmax(log(1 - x), -100));
    case K_BCEL: return w * ((1 - y) * x + (1 + (pw - 1) * y) * (log1p(exp(-fabs(x))) + fmax(-x, 0)));
    case K_MARGIN: return fmax(0, -w * (x - y) + p); /* w is the target here */
    }
    return NAN;
}
static tn_tensor *call_pw(int k, tn_tensor *x, tn_tensor *y, tn_tensor *w, tn_tensor *pw, double p, tn_reduction red) {
    switch (k) {
    case K_MSE: return tn_mse_loss(x, y, .reduction = red);
    case K_L1: return tn_l1_loss(x, y, .reduction = red);
    case K_SL1: return tn_smooth_l1_loss(x, y, .reduction = red, .beta = p);
    case K_HUBER: return tn_huber_loss(x, y, .reduction = red, .delta = p);
    case K_KL: return tn_kl_div(x, y, .reduction = red);
    case K_KLLOG: return tn_kl_div(x, y, .reduction = red, .log_target = true);
    case K_BCE: return tn_binary_cross_entropy(x, y, .weight = w, .reduction = red);
    case K_BCEL: return tn_binary_cross_entropy_with_logits(x, y, .weight = w, .reduction = red, .pos_weight = pw);
    case K_MARGIN: return tn_margin_ranking_loss(x, y, w, .margin = p, .reduction = red);
    }
    return NULL;
}
/* loss k of (x, y, w, pw) against the naive loop, for one reduction */
static void check_pw(int k, tn_tensor *x, tn_tensor *y, tn_tensor *w, tn_tensor *pw, double p, tn_reduction red, const char *what) {
    tn_scope_begin();
    char msg[200];
    snprintf(msg, sizeof msg, "%s %s %s", KNAME[k], RED_PY[red], what);
    tn_tensor *r = call_pw(k, x, y, w, pw, p, red);
    CHECK_MSG(r != NULL, "%s: %s", msg, tn_last_error());
    int64_t os[TN_MAX_DIMS];
    int on = bshape(x, y, os);
    if (w && k == K_MARGIN) {
        int64_t t2[TN_MAX_DIMS];
        memcpy(t2, os, sizeof os);
        tn_tensor *tmp = tn_empty(t2, on, TN_F64);
        on = bshape(tmp, w, os);
    }
    int64_t n = 1;
    for (int i = 0; i < on; i++) n *= os[i];
    const double *xv = D(x), *yv = D(y), *wv = w ? D(w) : NULL, *pv = pw ? D(pw) : NULL;
    double *e = (double *)malloc((size_t)(n + 1) * sizeof(double)), acc = 0;
    for (int64_t i = 0; i < n; i++) {
        double xi = xv[bidx(i, os, on, tn_shape(x), tn_ndim(x))], yi = yv[bidx(i, os, on, tn_shape(y), tn_ndim(y))];
        double wi = wv ? wv[bidx(i, os, on, tn_shape(w), tn_ndim(w))] : 1, pi = pv ? pv[bidx(i, os, on, tn_shape(pw), tn_ndim(pw))] : 1;
        e[i] = pw_elem(k, xi, yi, p, wi, pi);
        acc += e[i];
    }
    if (r) {
        if (red == TN_REDUCTION_NONE) {
            CHECK_MSG(same_shape(r, os, on), "%s: shape %s", msg, shape_str(tn_shape(r), tn_ndim(r)));
            close_arr(D(r), e, n, 1e-12, 1e-10, msg);
        } else {
            double want = red == TN_REDUCTION_SUM ? acc : red == TN_REDUCTION_MEAN ? acc / (double)n : acc / (double)tn_shape(x)[0];
            CHECK_MSG(tn_ndim(r) == 0, "%s: not 0-d", msg);
            close_arr(D(r), &want, 1, 1e-12, 1e-10, msg);
        }
    }
    free(e);
    tn_scope_end();
}

/* Cross entropy / nll reference. Input logically [N, C, S] (S = product of the spatial
   sizes), class targets t [N*S] or probabilities pt [N, C, S]; wt [C] or NULL. */
static void ref_ce(const double *x, int64_t N, int64_t C, int64_t S, const int64_t *t, const double *pt, const double *wt, int64_t ii,
                   double ls, bool logsm, tn_reduction red, double *out) {
    double *lp = (double *)malloc((size_t)(N * C * S + 1) * sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t s = 0; s < S; s++) {
            double m = -INFINITY, z = 0;
            for (int64_t c = 0; c < C; c++) m = fmax(m, x[(n * C + c) * S + s]);
            for (int64_t c = 0; c < C; c++) z += exp(x[(n * C + c) * S + s] - m);
            for (int64_t c = 0; c < C; c++) lp[(n * C + c) * S + s] = logsm ? x[(n * C + c) * S + s] - m - log(z) : x[(n * C + c) * S + s];
        }
    double nll_sum = 0, sm_sum = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t s = 0; s < S; s++) {
            int64_t i = n * S + s;
            double l;
            if (pt) {
                l = 0;
                for (int64_t c = 0; c < C; c++) {
                    double tt = ls > 0 ? pt[(n * C + c) * S + s] * (1 - ls) + ls / (double)C : pt[(n * C + c) * S + s];
                    l -= lp[(n * C + c) * S + s] * tt * (wt ? wt[c] : 1);
                }
                nll_sum += l;
            } else if (t[i] == ii) {
                l = 0;
            } else {
                double w = wt ? wt[t[i]] : 1, sm = 0;
                for (int64_t c = 0; c < C; c++) sm -= (wt ? wt[c] : 1) * lp[(n * C + c) * S + s];
                double nl = -w * lp[(n * C + t[i]) * S + s];
                nll_sum += nl;
                sm_sum += sm;
                wsum += w;
                l = (1 - ls) * nl + ls / (double)C * sm;
            }
            if (red == TN_REDUCTION_NONE) out[i] = l;
        }
    if (red == TN_REDUCTION_SUM) out[0] = pt ? nll_sum : (1 - ls) * nll_sum + ls / (double)C * sm_sum;
    if (red == TN_REDUCTION_MEAN) out[0] = pt ? nll_sum / (double)(N * S) : (1 - ls) * nll_sum / wsum + ls / (double)C * sm_sum / wsum;
    free(lp);
}

/* check tn_nll_loss / tn_cross_entropy (their keyword arguments) on input x (any strides, [C] or [N, C, ...])
   against ref_ce for all three reductions */
static void check_ce(bool ce, tn_tensor *x, tn_tensor *t, tn_tensor *w, int64_t ii, double ls, const char *what) {
    for (int ri = 0; ri < 3; ri++) {
        tn_scope_begin();
        tn_reduction red = REDS[ri];
        char msg[200];
        snprintf(msg, sizeof msg, "%s %s %s", ce ? "cross_entropy" : "nll_loss", RED_PY[red], what);
        tn_tensor *r = ce ? tn_cross_entropy(x, t, .weight = w, .ignore_index = ii, .reduction = red, .label_smoothing = ls) : tn_nll_loss(x, t, .weight = w, .ignore_index = ii, .reduction = red);
        CHECK_MSG(r != NULL, "%s: %s", msg, tn_last_error());
        int nd = tn_ndim(x);
        int64_t N = nd == 1 ? 1 : tn_shape(x)[0], C = tn_shape(x)[nd == 1 ? 0 : 1], S = 1;
        for (int i = 2; i < nd; i++) S *= tn_shape(x)[i];
        bool probs = tn_dtype_is_floating(tn_get_dtype(t));
        double *out = (double *)malloc((size_t)(N * S + 1) * sizeof(double));
        ref_ce(D(x), N, C, S, probs ? NULL : L(t), probs ? D(t) : NULL, w ? D(w) : NULL, ii, ls, ce, red, out);
        if (r) {
            if (red == TN_REDUCTION_NONE) {
                int64_t ts[TN_MAX_DIMS];
                int tn = 0;
                for (int i = 0; i < nd; i++) if (i != (nd == 1 ? 0 : 1)) ts[tn++] = tn_shape(x)[i];
                CHECK_MSG(same_shape(r, ts, tn), "%s: shape %s", msg, shape_str(tn_shape(r), tn_ndim(r)));
                close_arr(D(r), out, N * S, 1e-12, 1e-10, msg);
            } else {
                close_arr(D(r), out, 1, 1e-12, 1e-10, msg);
            }
        }
        free(out);
        tn_scope_end();
    }
}

/* ---- hand-computed cases ---- */
TEST(test_hand_cases) {
    tn_scope_begin();
    float zz[] = {0, 0};
    int64_t t0[] = {0};
    tn_tensor *x = tn_from_data(zz, TN_SHAPE(1, 2), TN_F32);
    CHECK_CLOSE(tn_item(tn_cross_entropy(x, I64(t0, TN_SHAPE(1)))), log(2.0), 1e-7);
    /* unbatched: [C] input with a 0-d target */
    double x3[] = {1, 2, 3};
    int64_t two = 2;
    double lse = log(exp(1.0) + exp(2.0) + exp(3.0));
    CHECK_CLOSE(tn_item(tn_cross_entropy(F64(x3, TN_SHAPE(3)), I64(&two, NULL, 0))), lse - 3, 1e-12);
    CHECK_CLOSE(tn_item(tn_nll_loss(F64(x3, TN_SHAPE(3)), I64(&two, NULL, 0))), -3, 1e-12);
    /* nll: mean of -x[i, t_i] with an ignored entry left out of the denominator */
    double xn[] = {1, 2, 3, 4, 5, 6};
    int64_t tn3[] = {1, -100, 0};
    CHECK_CLOSE(tn_item(tn_nll_loss(F64(xn, TN_SHAPE(3, 2)), I64(tn3, TN_SHAPE(3)))), -(2 + 5) / 2.0, 1e-12);
    double wv[] = {3, 1};
    CHECK_CLOSE(tn_item(tn_nll_loss(F64(xn, TN_SHAPE(3, 2)), I64(tn3, TN_SHAPE(3)), .weight = F64(wv, TN_SHAPE(2)))),
                -(1 * 2 + 3 * 5) / 4.0, 1e-12);
    CHECK_CLOSE(tn_item(tn_nll_loss(F64(xn, TN_SHAPE(3, 2)), I64(tn3, TN_SHAPE(3)), .weight = F64(wv, TN_SHAPE(2)), .reduction = TN_REDUCTION_SUM)),
                -(1 * 2 + 3 * 5), 1e-12);
    /* ignore_index that is a valid class */
    int64_t tn4[] = {1, 1, 0};
    CHECK_CLOSE(tn_item(tn_nll_loss(F64(xn, TN_SHAPE(3, 2)), I64(tn4, TN_SHAPE(3)), .ignore_index = 1)), -5, 1e-12);
    /* regression losses */
    double a[] = {1, 2, 3}, b[] = {1.5, 0, 3};
    tn_tensor *ta = F64(a, TN_SHAPE(3)), *tb = F64(b, TN_SHAPE(3));
    CHECK_CLOSE(tn_item(tn_mse_loss(ta, tb)), (0.25 + 4) / 3, 1e-12);
    CHECK_CLOSE(tn_item(tn_l1_loss(ta, tb, .reduction = TN_REDUCTION_SUM)), 2.5, 1e-12);
    CHECK_CLOSE(tn_item(tn_smooth_l1_loss(ta, tb, .reduction = TN_REDUCTION_SUM)), 0.5 * 0.25 + 1.5, 1e-12);
    CHECK_CLOSE(tn_item(tn_huber_loss(ta, tb, .reduction = TN_REDUCTION_SUM)), 0.5 * 0.25 + 1.5, 1e-12);
    /* huber(delta) = delta * smooth_l1(beta = delta) */
    CHECK_CLOSE(tn_item(tn_huber_loss(ta, tb, .reduction = TN_REDUCTION_SUM, .delta = 0.4)), 0.4 * tn_item(tn_smooth_l1_loss(ta, tb, .reduction = TN_REDUCTION_SUM, .beta = 0.4)), 1e-12);
    CHECK_CLOSE(tn_item(tn_smooth_l1_loss(ta, tb, .reduction = TN_REDUCTION_SUM, .beta = 0.0)), 2.5, 1e-12); /* beta 0: l1 */
    /* bce: logs clamped at -100 */
    double p01[] = {0, 1}, t10[] = {1, 0};
    CHECK_CLOSE(tn_item(tn_binary_cross_entropy(F64(p01, TN_SHAPE(2)), F64(t10, TN_SHAPE(2)))), 100, 1e-12);
    CHECK_CLOSE(tn_item(tn_binary_cross_entropy(F64(p01, TN_SHAPE(2)), F64(p01, TN_SHAPE(2)), .reduction = TN_REDUCTION_SUM)), 0, 1e-12);
    double ph[] = {0.3}, th[] = {0.5}, wh[] = {2};
    CHECK_CLOSE(tn_item(tn_binary_cross_entropy(F64(ph, TN_SHAPE(1)), F64(th, TN_SHAPE(1)), .weight = F64(wh, TN_SHAPE(1)))),
                -2 * (0.5 * log(0.3) + 0.5 * log(0.7)), 1e-12);
    /* bce with logits stays finite for large logits */
    float lg[] = {100, -100}, lt[] = {0, 1};
    CHECK_CLOSE(tn_item(tn_binary_cross_entropy_with_logits(tn_from_data(lg, TN_SHAPE(2), TN_F32), tn_from_data(lt, TN_SHAPE(2), TN_F32))), 100, 1e-4);
    double l0[] = {0}, t1[] = {1}, pw3[] = {3};
    CHECK_CLOSE(tn_item(tn_binary_cross_entropy_with_logits(F64(l0, TN_SHAPE(1)), F64(t1, TN_SHAPE(1)), .reduction = TN_REDUCTION_SUM, .pos_weight = F64(pw3, TN_SHAPE(1)))),
                3 * log(2.0), 1e-12);
    /* kl_div: t (log t - x); 0 log 0 = 0 */
    double kx[] = {-1, -2}, kt[] = {0, 0.5};
    CHECK_CLOSE(tn_item(tn_kl_div(F64(kx, TN_SHAPE(1, 2)), F64(kt, TN_SHAPE(1, 2)), .reduction = TN_REDUCTION_SUM)), 0.5 * (log(0.5) + 2), 1e-12);
    CHECK_CLOSE(tn_item(tn_kl_div(F64(kx, TN_SHAPE(1, 2)), F64(kt, TN_SHAPE(1, 2)))), 0.5 * (log(0.5) + 2) / 2, 1e-12);
    CHECK_CLOSE(tn_item(tn_kl_div(F64(kx, TN_SHAPE(1, 2)), F64(kt, TN_SHAPE(1, 2)), .reduction = TN_REDUCTION_BATCHMEAN)), 0.5 * (log(0.5) + 2), 1e-12);
    double k0x = 0.5, k0t = 0.2; /* 0-d batchmean is the sum (torch: -0.4218875...) */
    CHECK_CLOSE(tn_item(tn_kl_div(F64(&k0x, NULL, 0), F64(&k0t, NULL, 0), .reduction = TN_REDUCTION_BATCHMEAN)), 0.2 * log(0.2) - 0.1, 1e-12);
    /* cosine_similarity: torch 1.13 clamps each norm at eps separately */
    double c1[] = {1e-5, 0}, c2[] = {1, 0};
    CHECK_CLOSE(tn_item(tn_cosine_similarity(F64(c1, TN_SHAPE(2)), F64(c1, TN_SHAPE(2)), .dim = 0)), 1, 1e-12);
    CHECK_CLOSE(tn_item(tn_cosine_similarity(F64(c1, TN_SHAPE(2)), F64(c1, TN_SHAPE(2)), .dim = 0, .eps = 1e-4)), 0.01, 1e-12);
    CHECK_CLOSE(tn_item(tn_cosine_similarity(F64(c1, TN_SHAPE(2)), F64(c2, TN_SHAPE(2)), .dim = 0, .eps = 1e-4)), 0.1, 1e-12);
    double s1 = 1, s2 = 2;
    CHECK_CLOSE(tn_item(tn_cosine_similarity(F64(&s1, NULL, 0), F64(&s2, NULL, 0), .dim = 0)), 1, 1e-12);
    /* cosine embedding: 1 - cos for +1, max(0, cos - margin) for -1, 0 otherwise */
    double e1[] = {1, 0, 0, 1, 1, 1}, e2[] = {1, 1, 0, 1, 1, 0}, et[] = {1, -1, 0.5};
    tn_tensor *ce = tn_cosine_embedding_loss(F64(e1, TN_SHAPE(3, 2)), F64(e2, TN_SHAPE(3, 2)), F64(et, TN_SHAPE(3)), .margin = 0.5, .reduction = TN_REDUCTION_NONE);
    double cos0 = 1 / sqrt((1 + 1e-12) * (2 + 1e-12)), cos1 = 1 / sqrt((1 + 1e-12) * (1 + 1e-12)), want[3];
    want[0] = 1 - cos0;
    want[1] = cos1 - 0.5;
    want[2] = 0;
    close_arr(D(ce), want, 3, 1e-12, 1e-10, "cosine_embedding hand");
    /* margin ranking */
    double m1[] = {1, 2}, m2[] = {2, 1}, mt[] = {1, 1};
    CHECK_CLOSE(tn_item(tn_margin_ranking_loss(F64(m1, TN_SHAPE(2)), F64(m2, TN_SHAPE(2)), F64(mt, TN_SHAPE(2)), .margin = 0.5, .reduction = TN_REDUCTION_SUM)), 1.5, 1e-12);
    tn_scope_end();
}

/* ---- pointwise losses against the naive loop ---- */
TEST(test_pointwise_values) {
    tn_scope_begin();
    tn_manual_seed(11);
    int ks[] = {K_MSE, K_L1, K_SL1, K_HUBER, K_KL, K_KLLOG};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        int k = ks[ki];
        double p = k == K_SL1 || k == K_HUBER ? 0.7 : 0;
        double lo = k == K_KL ? 0 : -2;
        for (int ri = 0; ri < 3; ri++) {
            tn_reduction red = REDS[ri];
            check_pw(k, uniform(TN_SHAPE(3, 4), -2, 2), uniform(TN_SHAPE(3, 4), lo, 2), NULL, NULL, p, red, "[3,4]");
            check_pw(k, strided(3, 4, -2, 2), uniform(TN_SHAPE(3, 4), lo, 2), NULL, NULL, p, red, "strided input");
            check_pw(k, uniform(TN_SHAPE(3, 4), -2, 2), strided(3, 4, lo, 2), NULL, NULL, p, red, "strided target");
            check_pw(k, uniform(TN_SHAPE(3, 4), -2, 2), uniform(TN_SHAPE(4), lo, 2), NULL, NULL, p, red, "target [4] broadcast");
            check_pw(k, uniform(TN_SHAPE(4), -2, 2), uniform(TN_SHAPE(3, 1), lo, 2), NULL, NULL, p, red, "both broadcast");
            check_pw(k, uniform(TN_SHAPE(1, 5), -2, 2), uniform(TN_SHAPE(1, 5), lo, 2), NULL, NULL, p, red, "batch 1");
            check_pw(k, tn_slice(uniform(TN_SHAPE(2, 3, 8), -2, 2), 2, 1, 8, 2), uniform(TN_SHAPE(2, 3, 4), lo, 2), NULL, NULL, p, red, "sliced 3-d");
        }
        if (k == K_KL || k == K_KLLOG) {
            check_pw(k, uniform(TN_SHAPE(3, 4), -2, 2), uniform(TN_SHAPE(3, 4), lo, 2), NULL, NULL, 0, TN_REDUCTION_BATCHMEAN, "batchmean");
            check_pw(k, strided(5, 2, -2, 2), uniform(TN_SHAPE(5, 2), lo, 2), NULL, NULL, 0, TN_REDUCTION_BATCHMEAN, "batchmean strided");
        }
    }
    /* kl with zeros in the target (0 log 0 = 0) */
    double kt[] = {0, 0.3, 0, 0.7};
    check_pw(K_KL, uniform(TN_SHAPE(2, 2), -2, 0), F64(kt, TN_SHAPE(2, 2)), NULL, NULL, 0, TN_REDUCTION_SUM, "zero target");
    /* smooth l1 / huber at |d| == beta, and beta 0 */
    double hx[] = {0, 1, -1, 3}, hy[] = {0, 0, 0, 0};
    for (int ri = 0; ri < 3; ri++) {
        check_pw(K_SL1, F64(hx, TN_SHAPE(4)), F64(hy, TN_SHAPE(4)), NULL, NULL, 1.0, REDS[ri], "|d| == beta");
        check_pw(K_HUBER, F64(hx, TN_SHAPE(4)), F64(hy, TN_SHAPE(4)), NULL, NULL, 1.0, REDS[ri], "|d| == delta");
        check_pw(K_SL1, uniform(TN_SHAPE(3, 4), -2, 2), uniform(TN_SHAPE(3, 4), -2, 2), NULL, NULL, 0.0, REDS[ri], "beta 0");
    }
    /* bce, bce with logits: weights and pos_weight broadcast */
    for (int ri = 0; ri < 3; ri++) {
        tn_reduction red = REDS[ri];
        check_pw(K_BCE, uniform(TN_SHAPE(3, 4), 0.01, 0.99), uniform(TN_SHAPE(3, 4), 0, 1), NULL, NULL, 0, red, "");
        check_pw(K_BCE, strided(3, 4, 0.01, 0.99), uniform(TN_SHAPE(3, 4), 0, 1), uniform(TN_SHAPE(4), 0, 2), NULL, 0, red, "strided, weight [4]");
        check_pw(K_BCE, uniform(TN_SHAPE(1, 4), 0.01, 0.99), strided(1, 4, 0, 1), uniform(TN_SHAPE(1, 1), 0, 2), NULL, 0, red, "batch 1, weight [1,1]");
        check_pw(K_BCEL, uniform(TN_SHAPE(3, 4), -30, 30), uniform(TN_SHAPE(3, 4), 0, 1), NULL, NULL, 0, red, "");
        check_pw(K_BCEL, strided(3, 4, -5, 5), uniform(TN_SHAPE(3, 4), 0, 1), uniform(TN_SHAPE(3, 1), 0, 2), uniform(TN_SHAPE(4), 0, 3), 0, red,
                 "strided, weight [3,1], pos_weight [4]");
        check_pw(K_BCEL, uniform(TN_SHAPE(2, 3, 4), -5, 5), uniform(TN_SHAPE(2, 3, 4), 0, 1), NULL, uniform(TN_SHAPE(4), 0, 3), 0, red, "3-d, pos_weight [4]");
        check_pw(K_MARGIN, uniform(TN_SHAPE(6), -1, 1), uniform(TN_SHAPE(6), -1, 1), tn_sub_scalar(tn_mul_scalar(tn_to_dtype(tn_randint(0, 2, TN_SHAPE(6), TN_I64, NULL), TN_F64), 2), 1),
                 NULL, 0.3, red, "target +-1");
        check_pw(K_MARGIN, strided(2, 3, -1, 1), uniform(TN_SHAPE(1, 3), -1, 1), uniform(TN_SHAPE(2, 1), -1, 1), NULL, 0.0, red, "broadcast");
    }
    /* bce's clamp keeps huge losses finite; bce with logits agrees with bce(sigmoid) */
    double tiny[] = {1e-60, 0.5}, tt[] = {1, 1};
    check_pw(K_BCE, F64(tiny, TN_SHAPE(2)), F64(tt, TN_SHAPE(2)), NULL, NULL, 0, TN_REDUCTION_NONE, "log clamp");
    tn_tensor *z = uniform(TN_SHAPE(4, 3), -3, 3), *y = uniform(TN_SHAPE(4, 3), 0, 1);
    CHECK_CLOSE(tn_item(tn_binary_cross_entropy_with_logits(z, y)),
                tn_item(tn_binary_cross_entropy(tn_sigmoid(z), y)), 1e-12);
    /* float32 */
    tn_tensor *xf = tn_to_dtype(uniform(TN_SHAPE(5, 3), -2, 2), TN_F32), *yf = tn_to_dtype(uniform(TN_SHAPE(5, 3), -2, 2), TN_F32);
    tn_tensor *mf = tn_mse_loss(xf, yf);
    CHECK(tn_get_dtype(mf) == TN_F32);
    CHECK_CLOSE(tn_item(mf), tn_item(tn_mse_loss(tn_to_dtype(xf, TN_F64), tn_to_dtype(yf, TN_F64))), 1e-6);
    /* dtype promotion as PyTorch */
    CHECK(tn_get_dtype(tn_mse_loss(xf, tn_to_dtype(yf, TN_F64))) == TN_F64);
    CHECK(tn_get_dtype(tn_binary_cross_entropy_with_logits(tn_to_dtype(xf, TN_F64), tn_sigmoid(yf))) == TN_F32);
    tn_scope_end();
}

/* ---- nll_loss / cross_entropy against the naive loop ---- */
TEST(test_class_losses_values) {
    tn_scope_begin();
    tn_manual_seed(12);
    for (int ce = 0; ce < 2; ce++) {
        tn_tensor *x = tn_randn(TN_SHAPE(5, 4), TN_F64);
        if (!ce) x = tn_log_softmax(x, 1);
        tn_tensor *t = tn_randint(0, 4, TN_SHAPE(5), TN_I64, NULL), *w = uniform(TN_SHAPE(4), 0.1, 2);
        check_ce(ce, x, t, NULL, -100, 0, "[5,4]");
        check_ce(ce, x, t, w, -100, 0, "[5,4] weight");
        int64_t tig[] = {1, -100, 3, 0, -100};
        check_ce(ce, x, I64(tig, TN_SHAPE(5)), w, -100, 0, "ignored entries, weight");
        int64_t tig3[] = {1, 3, 3, 0, 2};
        check_ce(ce, x, I64(tig3, TN_SHAPE(5)), NULL, 3, 0, "ignore_index 3");
        check_ce(ce, tn_transpose(tn_randn(TN_SHAPE(4, 5), TN_F64), 0, 1), t, w, -100, 0, "strided [5,4]");
        check_ce(ce, tn_randn(TN_SHAPE(1, 4), TN_F64), tn_randint(0, 4, TN_SHAPE(1), TN_I64, NULL), NULL, -100, 0, "batch 1");
        check_ce(ce, tn_randn(TN_SHAPE(4), TN_F64), tn_randint(0, 4, NULL, 0, TN_I64, NULL), w, -100, 0, "unbatched [4]");
        /* [N, C, d1, d2]; a permuted (non-contiguous) one too */
        tn_tensor *x4 = tn_randn(TN_SHAPE(2, 3, 4, 5), TN_F64), *t4 = tn_randint(0, 3, TN_SHAPE(2, 4, 5), TN_I64, NULL);
        tn_tensor *w3 = uniform(TN_SHAPE(3), 0.1, 2);
        check_ce(ce, x4, t4, NULL, -100, 0, "[2,3,4,5]");
        check_ce(ce, x4, t4, w3, 1, 0, "[2,3,4,5] weight ignore 1");
        int64_t perm[] = {0, 3, 1, 2};
        tn_tensor *xp = tn_permute(tn_randn(TN_SHAPE(2, 4, 5, 3), TN_F64), perm, 4);
        check_ce(ce, xp, t4, w3, -100, 0, "permuted [2,3,4,5]");
        check_ce(ce, tn_randn(TN_SHAPE(3, 2, 7), TN_F64), tn_randint(0, 2, TN_SHAPE(3, 7), TN_I64, NULL), NULL, -100, 0, "[3,2,7]");
        if (ce) {
            check_ce(ce, x, t, NULL, -100, 0.1, "label smoothing");
            check_ce(ce, x, I64(tig, TN_SHAPE(5)), w, -100, 0.25, "label smoothing, weight, ignored");
            check_ce(ce, x4, t4, w3, 2, 1.0, "label smoothing 1, [2,3,4,5]");
            check_ce(ce, tn_randn(TN_SHAPE(4), TN_F64), tn_randint(0, 4, NULL, 0, TN_I64, NULL), w, -100, 0.3, "label smoothing unbatched");
            /* class probabilities */
            tn_tensor *pt = tn_softmax(tn_randn(TN_SHAPE(5, 4), TN_F64), 1);
            check_ce(ce, x, pt, NULL, -100, 0, "probabilities");
            check_ce(ce, x, pt, w, -100, 0, "probabilities weight");
            check_ce(ce, x, pt, w, -100, 0.2, "probabilities weight smoothing");
            check_ce(ce, tn_transpose(tn_randn(TN_SHAPE(4, 5), TN_F64), 0, 1), tn_transpose(tn_softmax(tn_randn(TN_SHAPE(4, 5), TN_F64), 0), 0, 1), NULL, -100, 0,
                     "probabilities strided");
            check_ce(ce, x4, tn_softmax(tn_randn(TN_SHAPE(2, 3, 4, 5), TN_F64), 1), w3, -100, 0.1, "probabilities [2,3,4,5]");
            check_ce(ce, tn_randn(TN_SHAPE(4), TN_F64), tn_softmax(tn_randn(TN_SHAPE(4), TN_F64), 0), w, -100, 0, "probabilities unbatched");
            /* negative label smoothing is no smoothing, as PyTorch */
            CHECK_CLOSE(tn_item(tn_cross_entropy(x, t, .label_smoothing = -0.1)), tn_item(tn_cross_entropy(x, t)), 0);
        }
    }
    /* float32 cross entropy agrees with float64 */
    tn_tensor *x = tn_randn(TN_SHAPE(6, 5), TN_F64), *t = tn_randint(0, 5, TN_SHAPE(6), TN_I64, NULL);
    tn_tensor *r32 = tn_cross_entropy(tn_to_dtype(x, TN_F32), t);
    CHECK(tn_get_dtype(r32) == TN_F32);
    CHECK_CLOSE(tn_item(r32), tn_item(tn_cross_entropy(x, t)), 1e-6);
    /* cross_entropy == nll_loss(log_softmax) */
    CHECK_CLOSE(tn_item(tn_cross_entropy(x, t)), tn_item(tn_nll_loss(tn_log_softmax(x, 1), t)), 1e-12);
    tn_scope_end();
}

/* all targets ignored, zero weights, empty batches: NaN exactly where PyTorch has it */
TEST(test_class_losses_edges) {
    tn_scope_begin();
    tn_manual_seed(13);
    int64_t ign[] = {-100, -100, -100}, t3[] = {0, 1, 2};
    tn_tensor *x = leaf(tn_randn(TN_SHAPE(3, 4), TN_F64));
    tn_tensor *l = tn_nll_loss(x, I64(ign, TN_SHAPE(3)));
    CHECK(isnan(tn_item(l)));
    CHECK(tn_backward(l) == 0);
    const double *g = D(tn_grad(x));
    int zeros = 1;
    for (int i = 0; i < 12; i++) zeros &= g[i] == 0;
    CHECK_MSG(zeros, "all ignored: zero gradient (PyTorch's)");
    tn_set_grad(x, NULL);
    l = tn_cross_entropy(x, I64(ign, TN_SHAPE(3)), .label_smoothing = 0.1);
    CHECK(isnan(tn_item(l)));
    CHECK(tn_backward(l) == 0);
    g = D(tn_grad(x));
    zeros = 1;
    for (int i = 0; i < 12; i++) zeros &= g[i] == 0;
    CHECK_MSG(zeros, "all ignored with smoothing: zero gradient");
    tn_set_grad(x, NULL);
    CHECK(tn_item(tn_nll_loss(x, I64(ign, TN_SHAPE(3)), .reduction = TN_REDUCTION_SUM)) == 0);
    /* weights zero on every present class: NaN loss, NaN gradient at the targets only (PyTorch) */
    double w0[] = {0, 0, 0, 1};
    l = tn_nll_loss(x, I64(t3, TN_SHAPE(3)), .weight = F64(w0, TN_SHAPE(4)));
    CHECK(isnan(tn_item(l)));
    CHECK(tn_backward(l) == 0);
    g = D(tn_grad(x));
    int ok = 1;
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 4; c++) ok &= c == t3[i] ? isnan(g[i * 4 + c]) : g[i * 4 + c] == 0;
    CHECK_MSG(ok, "zero weights: NaN gradient at the targets, 0 elsewhere");
    tn_set_grad(x, NULL);
    /* empty batch: mean NaN, sum 0 */
    tn_tensor *e = tn_randn(TN_SHAPE(0, 4), TN_F64), *et = tn_zeros(TN_SHAPE(0), TN_I64);
    CHECK(isnan(tn_item(tn_nll_loss(e, et))));
    CHECK(tn_item(tn_nll_loss(e, et, .reduction = TN_REDUCTION_SUM)) == 0);
    CHECK(isnan(tn_item(tn_cross_entropy(e, et))));
    CHECK(isnan(tn_item(tn_cross_entropy(e, tn_zeros(TN_SHAPE(0, 4), TN_F64)))));
    tn_tensor *en = tn_cross_entropy(e, et, .reduction = TN_REDUCTION_NONE);
    CHECK(en && tn_ndim(en) == 1 && tn_shape(en)[0] == 0);
    CHECK(isnan(tn_item(tn_mse_loss(e, e))));
    tn_scope_end();
}

TEST(test_cosine_values) {
    tn_scope_begin();
    tn_manual_seed(14);
    struct { int64_t s1[3]; int n1; int64_t s2[3]; int n2; int64_t dim; } cs[] = {
        {{3, 4}, 2, {3, 4}, 2, 1}, {{3, 4}, 2, {4}, 1, 1}, {{3, 4}, 2, {4}, 1, -1}, {{3, 4}, 2, {3, 1}, 2, 1},
        {{3, 4}, 2, {3, 4}, 2, 0}, {{2, 3, 4}, 3, {3, 4}, 2, 1}, {{5}, 1, {5}, 1, 0}, {{1, 6}, 2, {1, 6}, 2, 1}};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        tn_tensor *a = tn_randn(cs[k].s1, cs[k].n1, TN_F64), *b = tn_randn(cs[k].s2, cs[k].n2, TN_F64);
        if (k == 0) a = tn_transpose(tn_randn(TN_SHAPE(4, 3), TN_F64), 0, 1);
        tn_tensor *r = tn_cosine_similarity(a, b, .dim = cs[k].dim);
        CHECK_MSG(r != NULL, "cosine %zu: %s", k, tn_last_error());
        if (!r) continue;
        int64_t os[TN_MAX_DIMS];
        int on = bshape(a, b, os);
        int d = (int)(cs[k].dim < 0 ? cs[k].dim + on : cs[k].dim);
        int64_t n = 1, len = os[d], inner = 1;
        for (int i = 0; i < on; i++) n *= os[i];
        for (int i = d + 1; i < on; i++) inner *= os[i];
        const double *av = D(a), *bv = D(b);
        double *want = (double *)calloc((size_t)(n / len + 1), sizeof(double));
        for (int64_t o = 0; o < n / len; o++) {
            int64_t base = (o / inner) * len * inner + o % inner;
            double dot = 0, na = 0, nb = 0;
            for (int64_t j = 0; j < len; j++) {
                int64_t f = base + j * inner;
                double x = av[bidx(f, os, on, tn_shape(a), tn_ndim(a))], y = bv[bidx(f, os, on, tn_shape(b), tn_ndim(b))];
                dot += x * y;
                na += x * x;
                nb += y * y;
            }
            want[o] = dot / (fmax(sqrt(na), 1e-8) * fmax(sqrt(nb), 1e-8));
        }
        CHECK_MSG(tn_numel(r) == n / len && tn_ndim(r) == on - 1, "cosine %zu: shape %s", k, shape_str(tn_shape(r), tn_ndim(r)));
        close_arr(D(r), want, n / len, 1e-12, 1e-10, "cosine_similarity");
        free(want);
    }
    /* cosine embedding against the naive loop, [N, D] and [D] */
    for (int ri = 0; ri < 3; ri++) {
        for (int unb = 0; unb < 2; unb++) {
            int64_t N = unb ? 1 : 5, Dm = 4;
            tn_tensor *a = unb ? tn_randn(TN_SHAPE(4), TN_F64) : tn_transpose(tn_randn(TN_SHAPE(4, 5), TN_F64), 0, 1);
            tn_tensor *b = unb ? tn_randn(TN_SHAPE(4), TN_F64) : tn_randn(TN_SHAPE(5, 4), TN_F64);
            double tv[] = {1, -1, -1, 1, 0.5};
            tn_tensor *t = unb ? F64(tv + 1, NULL, 0) : F64(tv, TN_SHAPE(5));
            tn_tensor *r = tn_cosine_embedding_loss(a, b, t, .margin = 0.1, .reduction = REDS[ri]);
            CHECK_MSG(r != NULL, "cosine_embedding: %s", tn_last_error());
            const double *av = D(a), *bv = D(b);
            double e[5], acc = 0;
            for (int64_t i = 0; i < N; i++) {
                double dot = 0, na = 0, nb = 0;
                for (int64_t j = 0; j < Dm; j++) {
                    dot += av[i * Dm + j] * bv[i * Dm + j];
                    na += av[i * Dm + j] * av[i * Dm + j];
                    nb += bv[i * Dm + j] * bv[i * Dm + j];
                }
                double c = dot / sqrt((na + 1e-12) * (nb + 1e-12)), ti = unb ? tv[1] : tv[i];
                e[i] = ti == 1 ? 1 - c : ti == -1 ? fmax(0, c - 0.1) : 0;
                acc += e[i];
            }
            if (REDS[ri] == TN_REDUCTION_NONE) close_arr(D(r), e, N, 1e-12, 1e-10, "cosine_embedding none");
            else {
                double want = REDS[ri] == TN_REDUCTION_SUM ? acc : acc / (double)N;
                close_arr(D(r), &want, 1, 1e-12, 1e-10, "cosine_embedding");
            }
        }
    }
    tn_scope_end();
}

/* ---- one table of cases for gradcheck, grad_fn names and the PyTorch oracle ---- */
enum { LC_MSE, LC_L1, LC_SL1, LC_HUBER, LC_NLL, LC_CE, LC_BCE, LC_BCEL, LC_KL, LC_COS, LC_COSEMB, LC_MARGIN };
typedef struct lcase {
    int kind;
    tn_reduction red;
    double p;                 /* beta, delta, label_smoothing, eps, margin */
    int64_t ii;               /* ignore_index; dim for cosine_similarity */
    bool flag;                /* log_target */
    tn_tensor *slot[4];       /* in the API's order; NULL = absent */
    unsigned grad;            /* slots that require grad */
    char py[240];             /* the same call in PyTorch, slots named s0..s3 */
    const char *name;         /* PyTorch 1.13's grad_fn name */
} lcase;

static tn_tensor *lcase_call(const lcase *c, tn_tensor *const *s) {
    switch (c->kind) {
    case LC_MSE: return tn_mse_loss(s[0], s[1], .reduction = c->red);
    case LC_L1: return tn_l1_loss(s[0], s[1], .reduction = c->red);
    case LC_SL1: return tn_smooth_l1_loss(s[0], s[1], .reduction = c->red, .beta = c->p);
    case LC_HUBER: return tn_huber_loss(s[0], s[1], .reduction = c->red, .delta = c->p);
    case LC_NLL: return tn_nll_loss(s[0], s[1], .weight = s[2], .ignore_index = c->ii, .reduction = c->red);
    case LC_CE: return tn_cross_entropy(s[0], s[1], .weight = s[2], .ignore_index = c->ii, .reduction = c->red, .label_smoothing = c->p);
    case LC_BCE: return tn_binary_cross_entropy(s[0], s[1], .weight = s[2], .reduction = c->red);
    case LC_BCEL: return tn_binary_cross_entropy_with_logits(s[0], s[1], .weight = s[2], .reduction = c->red, .pos_weight = s[3]);
    case LC_KL: return tn_kl_div(s[0], s[1], .reduction = c->red, .log_target = c->flag);
    case LC_COS: return tn_cosine_similarity(s[0], s[1], .dim = c->ii, .eps = c->p);
    case LC_COSEMB: return tn_cosine_embedding_loss(s[0], s[1], s[2], .margin = c->p, .reduction = c->red);
    case LC_MARGIN: return tn_margin_ranking_loss(s[0], s[1], s[2], .margin = c->p, .reduction = c->red);
    }
    return NULL;
}
/* gradcheck's view: the non-NULL slots in order */
static tn_tensor *lcase_fn(tn_tensor *const *in, int n, void *user) {
    const lcase *c = (const lcase *)user;
    tn_tensor *s[4] = {NULL, NULL, NULL, NULL};
    int k = 0;
    for (int i = 0; i < 4; i++) if (c->slot[i] && k < n) s[i] = in[k++];
    return lcase_call(c, s);
}
static int lcase_inputs(const lcase *c, tn_tensor **in) {
    int n = 0;
    for (int i = 0; i < 4; i++) if (c->slot[i]) in[n++] = c->slot[i];
    return n;
}

#define MAXCASES 160
static lcase cases[MAXCASES];
static int ncases;
static lcase *add_case(int kind, tn_reduction red, const char *name) {
    lcase *c = &cases[ncases++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->red = red;
    c->name = name;
    return c;
}
static tn_tensor *rnd(const int64_t *shape, int nd) { return tn_randn(shape, nd, TN_F64); }
static tn_tensor *pm1(const int64_t *shape, int nd) { /* random +-1 float64 */
    return tn_sub_scalar(tn_mul_scalar(tn_to_dtype(tn_randint(0, 2, shape, nd, TN_I64, NULL), TN_F64), 2), 1);
}

/* Build the table (tensors kept by the caller's scope). Every slot that requires grad is
   a contiguous float64 leaf. Names are PyTorch 1.13's, as printed by grad_fn.name(). */
static void build_cases(void) {
    ncases = 0;
    tn_manual_seed(21);
    static const char *const mse_n[] = {"MseLossBackward0", "MseLossBackward0", "MseLossBackward0"};
    static const char *const l1_n[] = {"MeanBackward0", "SumBackward0", "AbsBackward0"};
    static const char *const kl_n[] = {"MeanBackward0", "SumBackward0", "SubBackward0"};
    static const char *const kll_n[] = {"MeanBackward0", "SumBackward0", "MulBackward0"};
    static const char *const prob_n[] = {"DivBackward1", "NegBackward0", "NegBackward0"};
    static const char *const emb_n[] = {"MeanBackward0", "SumBackward0", "AddBackward0"};
    static const char *const mr_n[] = {"MeanBackward0", "SumBackward0", "ClampMinBackward0"};
    for (int ri = 0; ri < 3; ri++) {
        tn_reduction r = REDS[ri];
        const char *R = RED_PY[r];
        lcase *c;
        c = add_case(LC_MSE, r, mse_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = rnd(TN_SHAPE(3, 4)); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.mse_loss(s0, s1, reduction='%s')", R);
        c = add_case(LC_MSE, r, mse_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = rnd(TN_SHAPE(4)); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.mse_loss(s0, s1, reduction='%s')", R);
        c = add_case(LC_L1, r, l1_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(2, 5)); c->slot[1] = rnd(TN_SHAPE(2, 1)); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.l1_loss(s0, s1, reduction='%s')", R);
        c = add_case(LC_SL1, r, "SmoothL1LossBackward0");
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = rnd(TN_SHAPE(3, 4)); c->grad = 3; c->p = 0.8;
        snprintf(c->py, sizeof c->py, "F.smooth_l1_loss(s0, s1, reduction='%s', beta=0.8)", R);
        c = add_case(LC_SL1, r, "SmoothL1LossBackward0");
        c->slot[0] = rnd(TN_SHAPE(6)); c->slot[1] = rnd(TN_SHAPE(6)); c->grad = 3; c->p = 0;
        snprintf(c->py, sizeof c->py, "F.smooth_l1_loss(s0, s1, reduction='%s', beta=0.0)", R);
        c = add_case(LC_HUBER, r, "HuberLossBackward0");
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = rnd(TN_SHAPE(4)); c->grad = 3; c->p = 0.6;
        snprintf(c->py, sizeof c->py, "F.huber_loss(s0, s1, reduction='%s', delta=0.6)", R);
        /* nll / cross entropy */
        c = add_case(LC_NLL, r, "NllLossBackward0");
        c->slot[0] = tn_log_softmax(rnd(TN_SHAPE(5, 4)), 1); c->slot[1] = tn_randint(0, 4, TN_SHAPE(5), TN_I64, NULL); c->grad = 1; c->ii = -100;
        snprintf(c->py, sizeof c->py, "F.nll_loss(s0, s1, reduction='%s')", R);
        int64_t tv[] = {2, -100, 0, 3, 3}, tv3[] = {2, 3, 0, 3, 1};
        c = add_case(LC_NLL, r, "NllLossBackward0");
        c->slot[0] = rnd(TN_SHAPE(5, 4)); c->slot[1] = I64(tv, TN_SHAPE(5)); c->slot[2] = tn_uniform(0.2, 2, TN_SHAPE(4), TN_F64, NULL);
        c->grad = 1; c->ii = -100;
        snprintf(c->py, sizeof c->py, "F.nll_loss(s0, s1, weight=s2, reduction='%s')", R);
        c = add_case(LC_CE, r, "NllLossBackward0");
        c->slot[0] = rnd(TN_SHAPE(5, 4)); c->slot[1] = I64(tv3, TN_SHAPE(5)); c->grad = 1; c->ii = 3;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, ignore_index=3, reduction='%s')", R);
        c = add_case(LC_CE, r, "NllLoss2DBackward0");
        c->slot[0] = rnd(TN_SHAPE(2, 3, 2, 3)); c->slot[1] = tn_randint(0, 3, TN_SHAPE(2, 2, 3), TN_I64, NULL);
        c->slot[2] = tn_uniform(0.2, 2, TN_SHAPE(3), TN_F64, NULL); c->grad = 1; c->ii = -100;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, weight=s2, reduction='%s')", R);
        static const char *const nd_n[] = {"NllLoss2DBackward0", "NllLoss2DBackward0", "ViewBackward0"}; /* nll_loss_nd views 3-d as 4-d */
        c = add_case(LC_NLL, r, nd_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(2, 3, 4)); c->slot[1] = tn_randint(0, 3, TN_SHAPE(2, 4), TN_I64, NULL); c->grad = 1; c->ii = -100;
        snprintf(c->py, sizeof c->py, "F.nll_loss(s0, s1, reduction='%s')", R);
        c = add_case(LC_CE, r, "NllLossBackward0");
        c->slot[0] = rnd(TN_SHAPE(4)); c->slot[1] = tn_randint(0, 4, NULL, 0, TN_I64, NULL); c->grad = 1; c->ii = -100;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, reduction='%s')", R);
        c = add_case(LC_CE, r, "AddBackward0");
        c->slot[0] = rnd(TN_SHAPE(5, 4)); c->slot[1] = I64(tv, TN_SHAPE(5)); c->slot[2] = tn_uniform(0.2, 2, TN_SHAPE(4), TN_F64, NULL);
        c->grad = 1; c->ii = -100; c->p = 0.15;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, weight=s2, reduction='%s', label_smoothing=0.15)", R);
        c = add_case(LC_CE, r, "AddBackward0");
        c->slot[0] = rnd(TN_SHAPE(2, 3, 4)); c->slot[1] = tn_randint(0, 3, TN_SHAPE(2, 4), TN_I64, NULL); c->grad = 1; c->ii = 1; c->p = 0.3;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, ignore_index=1, reduction='%s', label_smoothing=0.3)", R);
        c = add_case(LC_CE, r, prob_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = tn_softmax(rnd(TN_SHAPE(3, 4)), 1); c->grad = 3; c->ii = -100;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, reduction='%s')", R);
        c = add_case(LC_CE, r, prob_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(2, 3, 2)); c->slot[1] = tn_softmax(rnd(TN_SHAPE(2, 3, 2)), 1); c->slot[2] = tn_uniform(0.2, 2, TN_SHAPE(3), TN_F64, NULL);
        c->grad = 3; c->ii = -100; c->p = 0.2;
        snprintf(c->py, sizeof c->py, "F.cross_entropy(s0, s1, weight=s2, reduction='%s', label_smoothing=0.2)", R);
        /* bce */
        c = add_case(LC_BCE, r, "BinaryCrossEntropyBackward0");
        c->slot[0] = tn_uniform(0.05, 0.95, TN_SHAPE(3, 4), TN_F64, NULL); c->slot[1] = tn_uniform(0, 1, TN_SHAPE(3, 4), TN_F64, NULL); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.binary_cross_entropy(s0, s1, reduction='%s')", R);
        c = add_case(LC_BCE, r, "BinaryCrossEntropyBackward0");
        c->slot[0] = tn_uniform(0.05, 0.95, TN_SHAPE(3, 4), TN_F64, NULL); c->slot[1] = tn_uniform(0, 1, TN_SHAPE(3, 4), TN_F64, NULL);
        c->slot[2] = tn_uniform(0, 2, TN_SHAPE(4), TN_F64, NULL); c->grad = 1;
        snprintf(c->py, sizeof c->py, "F.binary_cross_entropy(s0, s1, weight=s2, reduction='%s')", R);
        c = add_case(LC_BCEL, r, "BinaryCrossEntropyWithLogitsBackward0");
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = tn_uniform(0, 1, TN_SHAPE(3, 4), TN_F64, NULL); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.binary_cross_entropy_with_logits(s0, s1, reduction='%s')", R);
        c = add_case(LC_BCEL, r, "BinaryCrossEntropyWithLogitsBackward0");
        c->slot[0] = tn_mul_scalar(rnd(TN_SHAPE(2, 3, 4)), 4); c->slot[1] = tn_uniform(0, 1, TN_SHAPE(2, 3, 4), TN_F64, NULL);
        c->slot[2] = tn_uniform(0, 2, TN_SHAPE(3, 1), TN_F64, NULL); c->slot[3] = tn_uniform(0.5, 3, TN_SHAPE(4), TN_F64, NULL); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.binary_cross_entropy_with_logits(s0, s1, weight=s2, pos_weight=s3, reduction='%s')", R);
        /* kl */
        c = add_case(LC_KL, r, kl_n[ri]);
        c->slot[0] = tn_log_softmax(rnd(TN_SHAPE(3, 4)), 1); c->slot[1] = tn_softmax(rnd(TN_SHAPE(3, 4)), 1); c->grad = 3;
        snprintf(c->py, sizeof c->py, "F.kl_div(s0, s1, reduction='%s')", R);
        c = add_case(LC_KL, r, kll_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(3, 4)); c->slot[1] = rnd(TN_SHAPE(4)); c->grad = 3; c->flag = true;
        snprintf(c->py, sizeof c->py, "F.kl_div(s0, s1, reduction='%s', log_target=True)", R);
        /* cosine embedding, margin ranking */
        c = add_case(LC_COSEMB, r, emb_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(4, 3)); c->slot[1] = rnd(TN_SHAPE(4, 3)); c->slot[2] = pm1(TN_SHAPE(4)); c->grad = 3; c->p = 0.2;
        snprintf(c->py, sizeof c->py, "F.cosine_embedding_loss(s0, s1, s2, margin=0.2, reduction='%s')", R);
        c = add_case(LC_COSEMB, r, emb_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(5)); c->slot[1] = rnd(TN_SHAPE(5)); c->slot[2] = pm1(NULL, 0); c->grad = 3; c->p = -0.5;
        snprintf(c->py, sizeof c->py, "F.cosine_embedding_loss(s0, s1, s2, margin=-0.5, reduction='%s')", R);
        c = add_case(LC_MARGIN, r, mr_n[ri]);
        c->slot[0] = rnd(TN_SHAPE(6)); c->slot[1] = rnd(TN_SHAPE(6)); c->slot[2] = pm1(TN_SHAPE(6)); c->grad = 3; c->p = 0.25;
        snprintf(c->py, sizeof c->py, "F.margin_ranking_loss(s0, s1, s2, margin=0.25, reduction='%s')", R);
    }
    lcase *c = add_case(LC_KL, TN_REDUCTION_BATCHMEAN, "DivBackward0");
    c->slot[0] = tn_log_softmax(rnd(TN_SHAPE(3, 4)), 1); c->slot[1] = tn_softmax(rnd(TN_SHAPE(3, 4)), 1); c->grad = 3;
    snprintf(c->py, sizeof c->py, "F.kl_div(s0, s1, reduction='batchmean')");
    c = add_case(LC_KL, TN_REDUCTION_BATCHMEAN, "DivBackward0");
    c->slot[0] = rnd(TN_SHAPE(2, 3)); c->slot[1] = rnd(TN_SHAPE(2, 3)); c->grad = 3; c->flag = true;
    snprintf(c->py, sizeof c->py, "F.kl_div(s0, s1, reduction='batchmean', log_target=True)");
    struct { int64_t s1[3]; int n1; int64_t s2[3]; int n2; int64_t dim; double eps; double scale; } cs[] = {
        {{3, 4}, 2, {3, 4}, 2, 1, 1e-8, 1}, {{3, 4}, 2, {4}, 1, -1, 1e-8, 1}, {{3, 4}, 2, {3, 1}, 2, 1, 1e-8, 1},
        {{2, 3, 4}, 3, {3, 4}, 2, 0, 1e-8, 1}, {{5}, 1, {5}, 1, 0, 1e-8, 1},
        {{3, 4}, 2, {3, 4}, 2, 1, 0.5, 0.2} /* norms below eps: torch 1.13's clamped-norm gradient */};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        c = add_case(LC_COS, TN_REDUCTION_NONE, "SumBackward1");
        c->slot[0] = tn_mul_scalar(rnd(cs[k].s1, cs[k].n1), cs[k].scale); c->slot[1] = rnd(cs[k].s2, cs[k].n2); c->grad = 3;
        c->ii = cs[k].dim; c->p = cs[k].eps;
        snprintf(c->py, sizeof c->py, "F.cosine_similarity(s0, s1, dim=%lld, eps=%.17g)", (long long)cs[k].dim, cs[k].eps);
    }
    for (int i = 0; i < ncases; i++)
        for (int s = 0; s < 4; s++)
            if (cases[i].slot[s]) {
                cases[i].slot[s] = tn_contiguous(tn_detach(cases[i].slot[s]));
                if (cases[i].grad >> s & 1) cases[i].slot[s] = leaf(tn_clone(cases[i].slot[s]));
            }
}

TEST(test_grad_names) {
    tn_scope_begin();
    build_cases();
    for (int i = 0; i < ncases; i++) {
        tn_scope_begin();
        tn_tensor *r = lcase_call(&cases[i], cases[i].slot);
        const char *got = r ? tn_grad_fn_name(r) : NULL;
        CHECK_MSG(got && strcmp(got, cases[i].name) == 0, "case %d (%s): grad_fn %s, expected %s (%s)", i, cases[i].py, got ? got : "NULL",
                  cases[i].name, tn_last_error());
        tn_scope_end();
    }
    /* no grad_fn when nothing requires grad, and under no_grad */
    tn_tensor *a = rnd(TN_SHAPE(3)), *b = leaf(rnd(TN_SHAPE(3)));
    CHECK(tn_grad_fn_name(tn_mse_loss(a, a)) == NULL);
    tn_no_grad_begin();
    CHECK(tn_grad_fn_name(tn_mse_loss(b, a)) == NULL);
    tn_no_grad_end();
    tn_scope_end();
}

TEST(test_gradcheck_all) {
    tn_scope_begin();
    build_cases();
    for (int i = 0; i < ncases; i++) {
        tn_tensor *in[4];
        int n = lcase_inputs(&cases[i], in);
        /* cosine_similarity with norms below eps: torch 1.13's gradient (which the torch
           test compares) is not the derivative of the clamped value */
        if (cases[i].kind == LC_COS && cases[i].p > 0.1) continue;
        bool ok = tn_gradcheck(lcase_fn, in, n, &cases[i], .atol = 1e-7, .rtol = 1e-5);
        CHECK_MSG(ok, "gradcheck case %d (%s): %s", i, cases[i].py, tn_last_error());
    }
    /* gradients through the weights too (PyTorch refuses weight.requires_grad for nll) */
    tn_manual_seed(22);
    int64_t tv[] = {2, -100, 0, 3, 3};
    lcase w;
    memset(&w, 0, sizeof w);
    w.kind = LC_NLL; w.red = TN_REDUCTION_MEAN; w.ii = -100;
    w.slot[0] = leaf(rnd(TN_SHAPE(5, 4))); w.slot[1] = I64(tv, TN_SHAPE(5)); w.slot[2] = leaf(tn_uniform(0.2, 2, TN_SHAPE(4), TN_F64, NULL));
    tn_tensor *in[4];
    int n = lcase_inputs(&w, in);
    CHECK_MSG(tn_gradcheck(lcase_fn, in, n, &w, .atol = 1e-7, .rtol = 1e-5), "nll weight grad: %s", tn_last_error());
    w.kind = LC_CE; w.p = 0.2;
    CHECK_MSG(tn_gradcheck(lcase_fn, in, n, &w, .atol = 1e-7, .rtol = 1e-5), "ce smoothing weight grad: %s", tn_last_error());
    lcase b;
    memset(&b, 0, sizeof b);
    b.kind = LC_BCEL; b.red = TN_REDUCTION_SUM;
    b.slot[0] = leaf(rnd(TN_SHAPE(3, 4))); b.slot[1] = leaf(tn_uniform(0, 1, TN_SHAPE(3, 4), TN_F64, NULL));
    b.slot[2] = leaf(tn_uniform(0.1, 2, TN_SHAPE(4), TN_F64, NULL)); b.slot[3] = leaf(tn_uniform(0.5, 3, TN_SHAPE(3, 4), TN_F64, NULL));
    n = lcase_inputs(&b, in);
    CHECK_MSG(tn_gradcheck(lcase_fn, in, n, &b, .atol = 1e-7, .rtol = 1e-5), "bce_with_logits weight and pos_weight grads: %s", tn_last_error());
    b.kind = LC_BCE; b.slot[3] = NULL;
    b.slot[0] = leaf(tn_uniform(0.1, 0.9, TN_SHAPE(3, 4), TN_F64, NULL));
    n = lcase_inputs(&b, in);
    CHECK_MSG(tn_gradcheck(lcase_fn, in, n, &b, .atol = 1e-7, .rtol = 1e-5), "bce weight grad: %s", tn_last_error());
    tn_scope_end();
}

TEST(test_gradgradcheck_some) {
    tn_scope_begin();
    build_cases();
    /* one of each kind at some reduction (the loop runs through the table in order) */
    bool seen[LC_MARGIN + 1] = {false};
    for (int i = 0; i < ncases; i++) {
        lcase *c = &cases[i];
        if (seen[c->kind] && !(c->kind == LC_CE && c->p > 0 && c->red == TN_REDUCTION_MEAN)) continue;
        if (c->kind == LC_COS && c->p > 0.1) continue; /* the clamped-norm branch is first-order only, as torch's */
        seen[c->kind] = true;
        tn_tensor *in[4];
        int n = lcase_inputs(c, in);
        bool ok = tn_gradgradcheck(lcase_fn, in, n, c, .atol = 1e-6, .rtol = 1e-4);
        CHECK_MSG(ok, "gradgradcheck case %d (%s): %s", i, c->py, tn_last_error());
    }
    tn_scope_end();
}

/* strided inputs give the gradient of their contiguous copies */
TEST(test_strided_grads) {
    tn_scope_begin();
    tn_manual_seed(23);
    tn_tensor *base = leaf(rnd(TN_SHAPE(4, 5))), *copy = leaf(tn_contiguous(tn_transpose(tn_detach(base), 0, 1)));
    tn_tensor *t = tn_randint(0, 4, TN_SHAPE(5), TN_I64, NULL), *w = tn_uniform(0.5, 2, TN_SHAPE(4), TN_F64, NULL);
    CHECK(tn_backward(tn_cross_entropy(tn_transpose(base, 0, 1), t, .weight = w, .ignore_index = 1, .label_smoothing = 0.1)) == 0);
    CHECK(tn_backward(tn_cross_entropy(copy, t, .weight = w, .ignore_index = 1, .label_smoothing = 0.1)) == 0);
    close_arr(D(tn_transpose(tn_grad(base), 0, 1)), D(tn_grad(copy)), 20, 1e-14, 1e-12, "strided cross_entropy grad");
    tn_tensor *b2 = leaf(rnd(TN_SHAPE(4, 5))), *c2 = leaf(tn_contiguous(tn_transpose(tn_detach(b2), 0, 1)));
    tn_tensor *tt = tn_uniform(0, 1, TN_SHAPE(5, 4), TN_F64, NULL);
    CHECK(tn_backward(tn_binary_cross_entropy_with_logits(tn_transpose(b2, 0, 1), tt, .reduction = TN_REDUCTION_SUM)) == 0);
    CHECK(tn_backward(tn_binary_cross_entropy_with_logits(c2, tt, .reduction = TN_REDUCTION_SUM)) == 0);
    close_arr(D(tn_transpose(tn_grad(b2), 0, 1)), D(tn_grad(c2)), 20, 1e-14, 1e-12, "strided bce_with_logits grad");
    /* a sliced [N, C, d] input */
    tn_tensor *b3 = leaf(rnd(TN_SHAPE(2, 3, 8))), *c3 = leaf(tn_contiguous(tn_slice(tn_detach(b3), 2, 0, 8, 2)));
    tn_tensor *t3 = tn_randint(0, 3, TN_SHAPE(2, 4), TN_I64, NULL);
    CHECK(tn_backward(tn_cross_entropy(tn_slice(b3, 2, 0, 8, 2), t3)) == 0);
    CHECK(tn_backward(tn_cross_entropy(c3, t3)) == 0);
    close_arr(D(tn_slice(tn_grad(b3), 2, 0, 8, 2)), D(tn_grad(c3)), 24, 1e-14, 1e-12, "sliced cross_entropy grad");
    tn_scope_end();
}

/* double backward through cross entropy with create_graph (a gradient penalty) */
TEST(test_create_graph) {
    tn_scope_begin();
    tn_manual_seed(24);
    tn_tensor *x = leaf(rnd(TN_SHAPE(3, 4))), *t = tn_randint(0, 4, TN_SHAPE(3), TN_I64, NULL), *g = NULL;
    tn_tensor *l = tn_cross_entropy(x, t);
    CHECK(tn_autograd_grad(&l, 1, &x, 1, NULL, &g, .create_graph = true) == 0);
    CHECK(g && tn_requires_grad(g));
    /* d/dx of sum(g^2): g = (softmax(x) - onehot) / N, so this is finite and nonzero */
    tn_tensor *pen = tn_sum(tn_square(g));
    CHECK(tn_backward(pen) == 0);
    CHECK(tn_grad(x) != NULL);
    tn_scope_end();
}

/* ---- errors ---- */
TEST(test_errors) {
    tn_scope_begin();
    tn_tensor *x = rnd(TN_SHAPE(3, 4)), *y = rnd(TN_SHAPE(3, 4)), *f = tn_to_dtype(x, TN_F32);
    int64_t tv[] = {0, 2, 1};
    tn_tensor *t = I64(tv, TN_SHAPE(3));
    /* reductions */
    CHECK_ERR(tn_mse_loss(x, y, .reduction = (tn_reduction)7), "tn_mse_loss: invalid reduction 7");
    CHECK_ERR(tn_l1_loss(x, y, .reduction = (tn_reduction)-1), "tn_l1_loss: invalid reduction -1");
    CHECK_ERR(tn_cross_entropy(x, t, .reduction = TN_REDUCTION_BATCHMEAN), "tn_cross_entropy: reduction TN_REDUCTION_BATCHMEAN is only valid for tn_kl_div");
    CHECK_ERR(tn_kl_div(x, y, .reduction = (tn_reduction)4), "tn_kl_div: invalid reduction 4");
    CHECK_ERR(tn_nll_loss(x, t, .reduction = (tn_reduction)9), "tn_nll_loss: invalid reduction 9");
    CHECK_ERR(tn_binary_cross_entropy(x, y, .reduction = (tn_reduction)3), "only valid for tn_kl_div");
    CHECK_ERR(tn_cosine_embedding_loss(x, y, t, .reduction = (tn_reduction)5), "tn_cosine_embedding_loss: invalid reduction 5");
    CHECK_ERR(tn_margin_ranking_loss(x, y, y, .reduction = (tn_reduction)5), "tn_margin_ranking_loss: invalid reduction 5");
    /* shapes and dtypes of the regression losses */
    CHECK_ERR(tn_mse_loss(x, rnd(TN_SHAPE(5))), "tn_mse_loss: input [3, 4] and target [5] are not broadcastable");
    CHECK_ERR(tn_l1_loss(x, rnd(TN_SHAPE(2, 4))), "tn_l1_loss: input [3, 4] and target [2, 4] are not broadcastable");
    CHECK_ERR(tn_mse_loss(t, t), "tn_mse_loss: expected floating point input and target, got int64 and int64");
    CHECK_ERR(tn_smooth_l1_loss(x, y, .beta = -1), "tn_smooth_l1_loss: beta must be non-negative, got -1");
    CHECK_ERR(tn_huber_loss(x, y, .delta = 0), "tn_huber_loss: delta must be positive, got 0");
    CHECK_ERR(tn_huber_loss(x, rnd(TN_SHAPE(3))), "not broadcastable");
    CHECK_ERR(tn_kl_div(x, rnd(TN_SHAPE(5)), .reduction = TN_REDUCTION_SUM), "tn_kl_div: input [3, 4] and target [5] are not broadcastable");
    /* nll / cross entropy */
    CHECK_ERR(tn_nll_loss(x, tn_to_dtype(t, TN_F32)), "tn_nll_loss: expected target dtype int64 (Long), got float32");
    CHECK_ERR(tn_nll_loss(x, tn_to_dtype(t, TN_I32)), "expected target dtype int64 (Long), got int32");
    CHECK_ERR(tn_cross_entropy(x, tn_to_dtype(t, TN_F32)), "tn_cross_entropy: expected target dtype int64 (Long), got float32");
    int64_t bad[] = {0, 4, 1}, neg[] = {0, -1, 1};
    CHECK_ERR(tn_nll_loss(x, I64(bad, TN_SHAPE(3))), "tn_nll_loss: target 4 is out of bounds for 4 classes (input [3, 4], target [3])");
    CHECK_ERR(tn_cross_entropy(x, I64(neg, TN_SHAPE(3))), "tn_cross_entropy: target -1 is out of bounds for 4 classes");
    CHECK(tn_nll_loss(x, I64(bad, TN_SHAPE(3)), .ignore_index = 4) != NULL); /* an ignored out-of-range value is fine */
    CHECK_ERR(tn_nll_loss(x, I64(tv, TN_SHAPE(2))), "tn_nll_loss: input batch size 3 does not match target batch size 2 (input [3, 4], target [2])");
    CHECK_ERR(tn_nll_loss(x, I64(tv, TN_SHAPE(1, 3))), "tn_nll_loss: expected a 1-d target [3] for input [3, 4], got target [1, 3]");
    CHECK_ERR(tn_nll_loss(rnd(TN_SHAPE(4)), I64(tv, TN_SHAPE(1))), "tn_nll_loss: an unbatched input [4] expects a 0-d target, got target [1]");
    CHECK_ERR(tn_cross_entropy(rnd(TN_SHAPE(2, 3, 4, 5)), tn_zeros(TN_SHAPE(2, 4, 6), TN_I64)),
              "tn_cross_entropy: size mismatch: input [2, 3, 4, 5] expects target [2, 4, 5], got target [2, 4, 6]");
    CHECK_ERR(tn_cross_entropy(rnd(TN_SHAPE(2, 3, 4, 5)), tn_zeros(TN_SHAPE(2, 4), TN_I64)), "expected a 3-d target [2, 4, 5]");
    CHECK_ERR(tn_nll_loss(rnd(TN_SHAPE(2, 3, 4)), tn_full(TN_SHAPE(2, 4), 5, TN_I64)), "target 5 is out of bounds for 3 classes");
    CHECK_ERR(tn_nll_loss(tn_scalar_tensor(1, TN_F64), tn_zeros(NULL, 0, TN_I64)), "tn_nll_loss: expected an input of 1 or more dimensions");
    CHECK_ERR(tn_nll_loss(x, t, .weight = rnd(TN_SHAPE(3))),
              "tn_nll_loss: weight should be defined for all 4 classes or no classes, got weight [3]");
    CHECK_ERR(tn_cross_entropy(x, t, .weight = rnd(TN_SHAPE(4, 1))), "got weight [4, 1]");
    CHECK_ERR(tn_nll_loss(f, t, .weight = rnd(TN_SHAPE(4))), "tn_nll_loss: expected weight dtype float32 (as input), got float64");
    CHECK_ERR(tn_nll_loss(t, t), "tn_nll_loss: expected a floating point input, got int64");
    CHECK_ERR(tn_cross_entropy(tn_zeros(TN_SHAPE(3, 4), TN_I64), t), "tn_cross_entropy: expected a floating point input, got int64");
    CHECK_ERR(tn_cross_entropy(x, t, .label_smoothing = 1.5), "tn_cross_entropy: label_smoothing must be between 0.0 and 1.0, got 1.5");
    CHECK_ERR(tn_cross_entropy(x, y, .ignore_index = 1), "tn_cross_entropy: ignore_index is not supported for class-probability targets");
    CHECK_ERR(tn_cross_entropy(x, tn_zeros(TN_SHAPE(3, 4), TN_I64)), "tn_cross_entropy: expected a floating point target for class probabilities");
    CHECK_ERR(tn_cross_entropy(x, y, .weight = rnd(TN_SHAPE(3))), "tn_cross_entropy: weight should be defined for all 4 classes");
    /* bce */
    double out_of_range[] = {0.5, 1.5}, nanv[] = {0.5, NAN}, half[] = {0.5, 0.5};
    CHECK_ERR(tn_binary_cross_entropy(F64(out_of_range, TN_SHAPE(2)), F64(half, TN_SHAPE(2))),
              "tn_binary_cross_entropy: all elements of input should be between 0 and 1 (input [2])");
    CHECK_ERR(tn_binary_cross_entropy(tn_neg(F64(half, TN_SHAPE(2))), F64(half, TN_SHAPE(2))), "between 0 and 1");
    CHECK_ERR(tn_binary_cross_entropy(F64(nanv, TN_SHAPE(2)), F64(half, TN_SHAPE(2))), "between 0 and 1");
    CHECK_ERR(tn_binary_cross_entropy(F64(half, TN_SHAPE(2)), F64(half, TN_SHAPE(2, 1))),
              "tn_binary_cross_entropy: target [2, 1] must have the same shape as input [2]");
    float halff[] = {0.5f, 0.5f};
    CHECK_ERR(tn_binary_cross_entropy(F64(half, TN_SHAPE(2)), tn_from_data(halff, TN_SHAPE(2), TN_F32)),
              "tn_binary_cross_entropy: expected target dtype float64 (as input), got float32");
    tn_tensor *p = tn_uniform(0.1, 0.9, TN_SHAPE(3, 4), TN_F64, NULL);
    CHECK_ERR(tn_binary_cross_entropy(p, p, .weight = rnd(TN_SHAPE(3))), "tn_binary_cross_entropy: weight [3] is not broadcastable to the loss's shape [3, 4]");
    CHECK_ERR(tn_binary_cross_entropy(p, p, .weight = rnd(TN_SHAPE(1, 3, 4))), "weight [1, 3, 4] is not broadcastable");
    CHECK_ERR(tn_binary_cross_entropy_with_logits(x, rnd(TN_SHAPE(3))),
              "tn_binary_cross_entropy_with_logits: target [3] must have the same shape as input [3, 4]");
    CHECK_ERR(tn_binary_cross_entropy_with_logits(x, y, .pos_weight = rnd(TN_SHAPE(3))),
              "tn_binary_cross_entropy_with_logits: pos_weight [3] is not broadcastable");
    CHECK_ERR(tn_binary_cross_entropy_with_logits(x, tn_zeros(TN_SHAPE(3, 4), TN_I64)), "expected floating point input and target");
    /* cosine */
    CHECK_ERR(tn_cosine_similarity(t, t, .dim = 0), "tn_cosine_similarity: expected a floating point common dtype, got int64");
    CHECK_ERR(tn_cosine_similarity(x, y, .dim = 2), "tn_cosine_similarity: dim 2 out of range");
    CHECK_ERR(tn_cosine_similarity(x, rnd(TN_SHAPE(5))), "tn_cosine_similarity: x1 [3, 4] and x2 [5] are not broadcastable");
    CHECK_ERR(tn_cosine_embedding_loss(x, y, I64(tv, TN_SHAPE(1, 3))), "tn_cosine_embedding_loss: expected a 0-d or 1-d target, got target [1, 3]");
    CHECK_ERR(tn_cosine_embedding_loss(rnd(TN_SHAPE(4)), rnd(TN_SHAPE(4)), I64(tv, TN_SHAPE(1))),
              "tn_cosine_embedding_loss: a 1-d target [1] expects 2-d inputs, got x1 [4] and x2 [4]");
    CHECK_ERR(tn_cosine_embedding_loss(x, rnd(TN_SHAPE(2, 4)), t), "x1 [3, 4] and x2 [2, 4] are not broadcastable");
    CHECK_ERR(tn_cosine_embedding_loss(x, y, I64(tv, TN_SHAPE(2))), "tn_cosine_embedding_loss:");
    CHECK_ERR(tn_margin_ranking_loss(x, rnd(TN_SHAPE(3)), rnd(TN_SHAPE(2))),
              "tn_margin_ranking_loss: x1, x2 and target should have the same number of dimensions, got x1 [3, 4], x2 [3], target [2]");
    CHECK_ERR(tn_margin_ranking_loss(rnd(TN_SHAPE(3)), rnd(TN_SHAPE(3)), rnd(TN_SHAPE(2))), "tn_margin_ranking_loss:");
    /* NULL passes through silently */
    tn_clear_error();
    CHECK(tn_mse_loss(NULL, y) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_cross_entropy(x, NULL) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_nll_loss(NULL, t, .reduction = TN_REDUCTION_SUM) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_binary_cross_entropy_with_logits(NULL, y, .reduction = TN_REDUCTION_SUM) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_cosine_similarity(x, NULL) == NULL && tn_last_error()[0] == 0);
    CHECK(tn_margin_ranking_loss(x, y, NULL, .reduction = TN_REDUCTION_SUM) == NULL && tn_last_error()[0] == 0);
    tn_scope_end();
}

/* ---- PyTorch as the oracle: values, gradients (through a fixed weighting of the
   output) and grad_fn names of every case in the table ---- */
static void py_tensor(FILE *f, const char *name, tn_tensor *t, bool rg) {
    fprintf(f, "%s = T([", name);
    int64_t n = tn_numel(t);
    if (tn_dtype_is_floating(tn_get_dtype(t))) {
        const double *v = D(t);
        for (int64_t i = 0; i < n; i++) fprintf(f, "%s%.17g", i ? "," : "", v[i]);
    } else {
        const int64_t *v = L(t);
        for (int64_t i = 0; i < n; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)v[i]);
    }
    fprintf(f, "], [");
    for (int i = 0; i < tn_ndim(t); i++) fprintf(f, "%s%lld", i ? "," : "", (long long)tn_shape(t)[i]);
    fprintf(f, "], %s, %s)\n", tn_dtype_is_floating(tn_get_dtype(t)) ? "torch.float64" : "torch.int64", rg ? "True" : "False");
}
/* the output weighting both sides use: 1 + 0.5 sin(i + 1) */
static tn_tensor *out_weights(tn_tensor *out) {
    int64_t n = tn_numel(out);
    tn_tensor *w = tn_add_scalar(tn_mul_scalar(tn_sin(tn_arange(1, (double)n + 1, 1, TN_F64)), 0.5), 1);
    return tn_reshape(w, tn_shape(out), tn_ndim(out));
}

TEST(test_against_torch) {
    if (access("/usr/bin/python3", X_OK) != 0) { printf("skipped: /usr/bin/python3 not found\n"); return; }
    tn_scope_begin();
    build_cases();
    char path[] = "/tmp/tn_test_losses_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) { printf("skipped: cannot write a temporary file\n"); tn_scope_end(); return; }
    fprintf(f, "import sys, warnings\nwarnings.simplefilter('ignore')\n"
               "try:\n    import torch, torch.nn.functional as F\nexcept Exception:\n    print('NOTORCH'); sys.exit(0)\n"
               "def T(v, shape, dt, rg):\n    t = torch.tensor(v, dtype=dt).reshape(shape)\n    return t.requires_grad_() if rg else t\n"
               "def run(k, fn, ins):\n"
               "    try:\n        out = fn()\n    except Exception as e:\n        print('case', k, 'ERROR'); return\n"
               "    n = out.numel()\n"
               "    w = (1 + 0.5 * torch.sin(torch.arange(1, n + 1, dtype=torch.float64))).reshape(out.shape)\n"
               "    (out * w).sum().backward()\n"
               "    print('case', k, out.grad_fn.name() if out.grad_fn is not None else 'None')\n"
               "    print('v', n, *['%%.17g' %% v for v in out.detach().flatten().tolist()])\n"
               "    for t in ins:\n"
               "        g = t.grad if t.grad is not None else torch.zeros_like(t)\n"
               "        print('g', g.numel(), *['%%.17g' %% v for v in g.flatten().tolist()])\n");
    for (int i = 0; i < ncases; i++) {
        lcase *c = &cases[i];
        char ins[64] = "";
        for (int s = 0; s < 4; s++) {
            if (!c->slot[s]) continue;
            char nm[16];
            snprintf(nm, sizeof nm, "s%d", s);
            py_tensor(f, nm, c->slot[s], c->grad >> s & 1);
            if (c->grad >> s & 1) { strcat(ins, nm); strcat(ins, ","); }
        }
        fprintf(f, "run(%d, lambda: %s, [%s])\n", i, c->py, ins);
    }
    fclose(f);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s 2>&1", path);
    FILE *p = popen(cmd, "r");
    char word[64];
    int compared = 0;
    if (!p || fscanf(p, "%63s", word) != 1 || strcmp(word, "NOTORCH") == 0) {
        printf("skipped: torch is not importable by /usr/bin/python3\n");
    } else {
        for (int i = 0; i < ncases; i++) {
            lcase *c = &cases[i];
            int k = -1;
            char name[80];
            if ((i > 0 && fscanf(p, "%63s", word) != 1) || strcmp(word, "case") != 0 || fscanf(p, "%d %79s", &k, name) != 2 || k != i) {
                CHECK_MSG(0, "torch output out of step at case %d (%s)", i, c->py);
                break;
            }
            if (strcmp(name, "ERROR") == 0) { CHECK_MSG(0, "torch failed on case %d: %s", i, c->py); continue; }
            tn_scope_begin();
            for (int s = 0; s < 4; s++) if (c->slot[s] && tn_requires_grad(c->slot[s])) tn_set_grad(c->slot[s], NULL);
            tn_tensor *out = lcase_call(c, c->slot);
            CHECK_MSG(out != NULL, "case %d (%s): %s", i, c->py, tn_last_error());
            CHECK_MSG(!out || strcmp(tn_grad_fn_name(out) ? tn_grad_fn_name(out) : "None", name) == 0, "case %d (%s): grad_fn %s, torch %s", i, c->py,
                      out && tn_grad_fn_name(out) ? tn_grad_fn_name(out) : "None", name);
            long n = 0;
            if (fscanf(p, "%63s %ld", word, &n) != 2) { tn_scope_end(); break; }
            double *want = (double *)malloc((size_t)(n + 1) * sizeof(double));
            for (long j = 0; j < n; j++) if (fscanf(p, "%lf", &want[j]) != 1) want[j] = NAN;
            char what[300];
            snprintf(what, sizeof what, "torch value, case %d (%s)", i, c->py);
            if (out) {
                CHECK_MSG(tn_numel(out) == n, "%s: %lld elements, torch %ld", what, (long long)tn_numel(out), n);
                if (tn_numel(out) == n) close_arr(D(out), want, n, 1e-12, 1e-9, what);
                CHECK(tn_backward(tn_sum(tn_mul(out, out_weights(out)))) == 0);
            }
            free(want);
            for (int s = 0; s < 4; s++) {
                if (!(c->grad >> s & 1)) continue;
                if (fscanf(p, "%63s %ld", word, &n) != 2) break;
                double *g = (double *)malloc((size_t)(n + 1) * sizeof(double));
                for (long j = 0; j < n; j++) if (fscanf(p, "%lf", &g[j]) != 1) g[j] = NAN;
                snprintf(what, sizeof what, "torch grad of s%d, case %d (%s)", s, i, c->py);
                tn_tensor *mine = tn_grad(c->slot[s]);
                if (mine && tn_numel(mine) == n) close_arr(D(mine), g, n, 1e-12, 1e-9, what);
                else CHECK_MSG(0, "%s: missing or wrong size", what);
                free(g);
            }
            compared++;
            tn_scope_end();
        }
        CHECK_MSG(compared == ncases, "compared %d of %d cases with torch", compared, ncases);
    }
    if (p) pclose(p);
    remove(path);
    tn_scope_end();
}

/* memory: a training-style loop leaves nothing behind */
TEST(test_no_leaks_loop) {
    tn_memory_stats before = tn_memory_stats_get();
    tn_manual_seed(25);
    tn_scope_begin();
    tn_tensor *w = leaf(rnd(TN_SHAPE(4, 3)));
    tn_scope_begin();
    for (int step = 0; step < 20; step++) {
        tn_scope_begin();
        tn_tensor *x = rnd(TN_SHAPE(5, 4)), *t = tn_randint(0, 3, TN_SHAPE(5), TN_I64, NULL);
        tn_tensor *logits = tn_matmul(x, w);
        tn_tensor *l = tn_add(tn_cross_entropy(logits, t, .label_smoothing = 0.1),
                              tn_binary_cross_entropy_with_logits(logits, tn_sigmoid(logits)));
        CHECK(tn_backward(l) == 0);
        tn_set_grad(w, NULL);
        /* an error path inside a loss leaks nothing either */
        int64_t bad[] = {0, 9, 0, 0, 0};
        CHECK(tn_cross_entropy(logits, I64(bad, TN_SHAPE(5))) == NULL);
        tn_scope_end();
    }
    tn_scope_end();
    tn_scope_end();
    tn_memory_stats after = tn_memory_stats_get();
    CHECK_MSG(after.live_tensors == before.live_tensors, "live tensors %lld -> %lld", (long long)before.live_tensors, (long long)after.live_tensors);
    CHECK_MSG(after.live_bytes == before.live_bytes, "live bytes %lld -> %lld", (long long)before.live_bytes, (long long)after.live_bytes);
}

int main(void) {
    tn_memory_stats start = tn_memory_stats_get();
    RUN(test_hand_cases);
    RUN(test_pointwise_values);
    RUN(test_class_losses_values);
    RUN(test_class_losses_edges);
    RUN(test_cosine_values);
    RUN(test_grad_names);
    RUN(test_gradcheck_all);
    RUN(test_gradgradcheck_some);
    RUN(test_strided_grads);
    RUN(test_create_graph);
    RUN(test_errors);
    RUN(test_against_torch);
    RUN(test_no_leaks_loop);
    tn_memory_stats end = tn_memory_stats_get();
    tn_test_current = "main";
    CHECK_MSG(end.live_tensors == start.live_tensors, "leak: %lld live tensors at start, %lld at end", (long long)start.live_tensors,
              (long long)end.live_tensors);
    return tn_test_report();
}
