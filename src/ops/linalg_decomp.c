/* ---- torch.linalg: QR, symmetric eigen, SVD and what is built on them ----
   Real dtypes (float32, float64), CPU, batched over leading dims, as linalg_factor.c: the
   kernels run on float64 copies (float32 is rounded once, at the end). They keep the vectors
   they rotate as contiguous rows (the columns of the row-major matrices, transposed), so
   every inner loop runs along memory:
     QR     Householder (LAPACK's dgeqr2 / dorg2r, dlarfg's signs: R's diagonal and Q match
            torch's LAPACK results)
     eigh   Householder tridiagonalisation and implicit QL (EISPACK's tred2 / tql2)
     SVD    one-sided Jacobi (Hestenes): high relative accuracy, orthogonality to eps
   The backward formulas are PyTorch's (linalg_qr_backward, linalg_eig_backward for
   Hermitian input, svd_backward, pinv_backward), written in library ops over factors that
   are recomputed differentiably from the saved input: double backward works. A result with
   several outputs records one node per output; each applies the formula with the other
   outputs' gradients absent (the formulas are linear in them). */

/* sqrt(sum x_i^2) over n values at stride inc, without overflow or underflow in the squares. */
static double tn__la_nrm2(const double *x, int64_t n, int64_t inc) {
    double mx = 0, s = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(x[i * inc]));
    if (mx == 0 || !isfinite(mx)) return mx;
    for (int64_t i = 0; i < n; i++) { double t = x[i * inc] / mx; s += t * t; }
    return mx * sqrt(s);
}
static double tn__la_dot(const double *a, const double *b, int64_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) { s0 += a[i] * b[i]; s1 += a[i + 1] * b[i + 1]; s2 += a[i + 2] * b[i + 2]; s3 += a[i + 3] * b[i + 3]; }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}
static void tn__la_axpy(double *y, double a, const double *x, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] += a * x[i]; }

/* ---- Householder QR ---- */
/* The reflector H = I - tau v v^T with H x = (beta, 0, ...), as LAPACK's dlarfg: on return
   x[0] = beta, x[1..] = v[1..] (v[0] = 1 implied); returns tau (0: H = I). */
static double tn__la_larfg(double *x, int64_t len) {
    if (len <= 1) return 0;
    double alpha = x[0], xn = tn__la_nrm2(x + 1, len - 1, 1);
    if (xn == 0) return 0;
    double beta = -copysign(hypot(alpha, xn), alpha), tau = (beta - alpha) / beta, s = 1 / (alpha - beta);
    for (int64_t i = 1; i < len; i++) x[i] *= s;
    x[0] = beta;
    return tau;
}
/* Row j of h (an [n, m] matrix: the m x n A transposed) is A's column j: dgeqr2 on it. On
   return row j holds R's column j (entries 0..j) and v_j (entries j+1..). */
static void tn__la_geqr2_t(double *h, int64_t m, int64_t n, double *tau) {
    const int64_t k = m < n ? m : n;
    for (int64_t j = 0; j < k; j++) {
        double *v = h + j * m + j;
        const int64_t len = m - j;
        tau[j] = tn__la_larfg(v, len);
        if (tau[j] == 0) continue;
        const double beta = v[0];
        v[0] = 1;
        for (int64_t c = j + 1; c < n; c++) {
            double *w = h + c * m + j;
            tn__la_axpy(w, -tau[j] * tn__la_dot(v, w, len), v, len);
        }
        v[0] = beta;
    }
}
/* Q's first qc columns as the rows of qt [qc, m] (dorg2r: H_0 ... H_{k-1} applied to I). */
static void tn__la_org2r_t(double *h, int64_t m, int64_t k, const double *tau, double *qt, int64_t qc) {
    memset(qt, 0, (size_t)(qc * m) * sizeof(double));
    for (int64_t c = 0; c < qc; c++) qt[c * m + c] = 1;
    for (int64_t j = k - 1; j >= 0; j--) {
        if (tau[j] == 0) continue;
        double *v = h + j * m + j;
        const int64_t len = m - j;
        const double beta = v[0];
        v[0] = 1;
        for (int64_t c = j; c < qc; c++) {   /* e_c for c < j has no entries at j.. yet */
            double *w = qt + c * m + j;
            tn__la_axpy(w, -tau[j] * tn__la_dot(v, w, len), v, len);
        }
        v[0] = beta;
    }
}
/* The QR of every matrix of A [..., m, n], float64 without history. mode: 0 reduced, 1
   complete, 2 r (no Q), 3 geqrf (*Q: the packed factors [..., m, n], *R: tau [..., k]). */
static int tn__la_qr_raw(tn_tensor *A, int mode, tn_tensor **Q, tn_tensor **R) {
    tn_tensor *w = tn__la_work(A);
    if (!w) return -1;
    const int nd = A->ndim;
    const int64_t m = A->shape[nd - 2], n = A->shape[nd - 1], k = m < n ? m : n, B = tn__la_batch(A);
    const int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
    int64_t qs[TN_MAX_DIMS], rs[TN_MAX_DIMS];
    memcpy(qs, A->shape, sizeof qs);
    memcpy(rs, A->shape, sizeof rs);
    if (mode == 3) rs[nd - 2] = k;
    else { qs[nd - 1] = qc; rs[nd - 2] = rr; }
    if (mode == 2) qs[0] = 0;   /* no Q: torch's is shape [0] */
    tn_tensor *q = tn__own(tn__new(TN_F64, TN_CPU, qs, mode == 2 ? 1 : nd)), *r = tn__own(tn__new(TN_F64, TN_CPU, rs, mode == 3 ? nd - 1 : nd));
    double *h = (double *)TN_MALLOC((size_t)(m * n + k + (mode < 2 ? qc * m : 0) + 1) * sizeof(double));
    if (!q || !r || !h) { TN_FREE(h); if (q && r) tn__error("tn_linalg_qr: out of memory"); return -1; }
    double *tau = h + m * n, *qt = tau + k;
    const double *a = (const double *)tn_data_ptr(w);
    double *qv = (double *)tn_data_ptr(q), *rv = (double *)tn_data_ptr(r);
    for (int64_t b = 0; b < B; b++) {
        const double *ab = a + b * m * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) h[j * m + i] = ab[i * n + j];
        tn__la_geqr2_t(h, m, n, tau);
        if (mode == 3) {
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) qv[b * m * n + i * n + j] = h[j * m + i];
            memcpy(rv + b * k, tau, (size_t)k * sizeof(double));
            continue;
        }
        double *rb = rv + b * rr * n;
        for (int64_t i = 0; i < rr; i++)
            for (int64_t j = 0; j < n; j++) rb[i * n + j] = i <= j ? h[j * m + i] : 0;
        if (mode == 2) continue;
        tn__la_org2r_t(h, m, k, tau, qt, qc);
        double *qb = qv + b * m * qc;
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < qc; c++) qb[i * qc + c] = qt[c * m + i];
    }
    TN_FREE(h);
    *Q = q;
    *R = r;
    return 0;
}

/* ---- symmetric eigen: tred2 + tql2 ---- */
/* v [n, n] row-major holds a symmetric matrix: on return its columns are the eigenvectors
   (with `vectors`) and d the eigenvalues, ascending; e [n] and wt [n, n] are scratch. Returns
   0, or -1 when QL did not converge. */
static int tn__la_tred2_tql2(double *v, double *d, double *e, double *wt, int64_t n, bool vectors) {
    /* v read column-major (A is symmetric: the same matrix), so that tred2's loops over k
       in V(k, j) run along memory */
#define V_(i, j) v[(j) * n + (i)]
    if (n == 0) return 0;
    for (int64_t j = 0; j < n; j++) d[j] = V_(n - 1, j);
    for (int64_t i = n - 1; i > 0; i--) {   /* Householder reduction to tridiagonal form */
        double scale = 0, h = 0;
        for (int64_t k = 0; k < i; k++) scale += fabs(d[k]);
        if (scale == 0) {
            e[i] = d[i - 1];
            for (int64_t j = 0; j < i; j++) { d[j] = V_(i - 1, j); V_(i, j) = 0; V_(j, i) = 0; }
        } else {
            for (int64_t k = 0; k < i; k++) { d[k] /= scale; h += d[k] * d[k]; }
            double f = d[i - 1], g = sqrt(h);
            if (f > 0) g = -g;
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for (int64_t j = 0; j < i; j++) e[j] = 0;
            for (int64_t j = 0; j < i; j++) {
                f = d[j];
                V_(j, i) = f;
                g = e[j] + V_(j, j) * f;
                for (int64_t k = j + 1; k <= i - 1; k++) { g += V_(k, j) * d[k]; e[k] += V_(k, j) * f; }
                e[j] = g;
            }
            f = 0;
            for (int64_t j = 0; j < i; j++) { e[j] /= h; f += e[j] * d[j]; }
            const double hh = f / (h + h);
            for (int64_t j = 0; j < i; j++) e[j] -= hh * d[j];
            for (int64_t j = 0; j < i; j++) {
                f = d[j];
                g = e[j];
                for (int64_t k = j; k <= i - 1; k++) V_(k, j) -= (f * e[k] + g * d[k]);
                d[j] = V_(i - 1, j);
                V_(i, j) = 0;
            }
        }
        d[i] = h;
    }
    if (!vectors) {   /* the tridiagonal's diagonal is on v's (see the accumulation below) */
        for (int64_t j = 0; j < n; j++) d[j] = V_(j, j);
        e[0] = 0;
        goto ql;
    }
    for (int64_t i = 0; i < n - 1; i++) {   /* accumulate the transformations */
        V_(n - 1, i) = V_(i, i);
        V_(i, i) = 1;
        const double h = d[i + 1];
        if (h != 0) {
            for (int64_t k = 0; k <= i; k++) d[k] = V_(k, i + 1) / h;
            for (int64_t j = 0; j <= i; j++) {
                double g = 0;
                for (int64_t k = 0; k <= i; k++) g += V_(k, i + 1) * V_(k, j);
                for (int64_t k = 0; k <= i; k++) V_(k, j) -= g * d[k];
            }
        }
        for (int64_t k = 0; k <= i; k++) V_(k, i + 1) = 0;
    }
    for (int64_t j = 0; j < n; j++) { d[j] = V_(n - 1, j); V_(n - 1, j) = 0; }
    V_(n - 1, n - 1) = 1;
    e[0] = 0;
    /* implicit QL on the tridiagonal (d, e), rotating the rows of wt = V^T (contiguous) */
    memcpy(wt, v, (size_t)(n * n) * sizeof(double));   /* wt = V^T row-major: V's column-major storage */
ql:
    for (int64_t i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0;
    double f = 0, tst1 = 0;
    const double eps = DBL_EPSILON;
    int status = 0;
    for (int64_t l = 0; l < n; l++) {
        tst1 = fmax(tst1, fabs(d[l]) + fabs(e[l]));
        int64_t m = l;
        while (m < n && !(fabs(e[m]) <= eps * tst1)) m++;
        if (m == n) m = n - 1;   /* nan: no split found */
        if (m > l) {
            int iter = 0;
            do {
                if (++iter > 60) { status = -1; break; }
                double g = d[l], p = (d[l + 1] - g) / (2 * e[l]), r = hypot(p, 1);
                if (p < 0) r = -r;
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                const double dl1 = d[l + 1];
                double h = g - d[l];
                for (int64_t i = l + 2; i < n; i++) d[i] -= h;
                f += h;
                p = d[m];
                double c = 1, c2 = 1, c3 = 1, s = 0, s2 = 0;
                const double el1 = e[l + 1];
                for (int64_t i = m - 1; i >= l; i--) {
                    c3 = c2; c2 = c; s2 = s;
                    g = c * e[i];
                    h = c * p;
                    r = hypot(p, e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    if (vectors) {
                        double *wi = wt + i * n, *wj = wi + n;
                        for (int64_t k = 0; k < n; k++) { h = wj[k]; wj[k] = s * wi[k] + c * h; wi[k] = c * wi[k] - s * h; }
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
            } while (fabs(e[l]) > eps * tst1);
            if (status) break;
        }
        d[l] += f;
        e[l] = 0;
    }
    for (int64_t i = 0; i < n - 1; i++) {   /* ascending, the vectors with them */
        int64_t k = i;
        double p = d[i];
        for (int64_t j = i + 1; j < n; j++) if (d[j] < p) { k = j; p = d[j]; }
        if (k != i) {
            d[k] = d[i];
            d[i] = p;
            if (vectors)
                for (int64_t j = 0; j < n; j++) { double t = wt[i * n + j]; wt[i * n + j] = wt[k * n + j]; wt[k * n + j] = t; }
        }
    }
    if (vectors)   /* row-major V: V[i][j] = wt[j][i] */
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) v[i * n + j] = wt[j * n + i];
#undef V_
    return status;
}
/* Eigenvalues L [..., n] and (vectors) V [..., n, n] of the symmetric matrices whose lower
   (upper) triangle A holds; float64 without history. */
static int tn__la_eigh_raw(tn_tensor *A, bool upper, bool vectors, tn_tensor **L, tn_tensor **V, const char *fn) {
    tn_tensor *w = tn__la_work(A);
    if (!w) return -1;
    const int nd = A->ndim;
    const int64_t n = A->shape[nd - 1], B = tn__la_batch(A);
    tn_tensor *l = tn__own(tn__new(TN_F64, TN_CPU, A->shape, nd - 1));
    double *s = (double *)TN_MALLOC((size_t)(n * n + 2 * n + 1) * sizeof(double));
    if (!l || !s) { TN_FREE(s); if (l) tn__error("%s: out of memory", fn); return -1; }
    double *a = (double *)tn_data_ptr(w), *lv = (double *)tn_data_ptr(l), *e = s + n * n;
    int bad = 0;
    for (int64_t b = 0; b < B && !bad; b++) {
        double *ab = a + b * n * n;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < i; j++) {
                if (upper) ab[i * n + j] = ab[j * n + i];
                else ab[j * n + i] = ab[i * n + j];
            }
        if (tn__la_tred2_tql2(ab, lv + b * n, e, s, n, vectors)) bad = 1;
    }
    TN_FREE(s);
    if (bad) return TN__FAIL_INT("%s: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues", fn);
    *L = l;
    if (vectors) *V = w;
    return 0;
}

/* ---- SVD: one-sided Jacobi ---- */
/* x [q, p] (q <= p): its rows are rotated until mutually orthogonal to eps; y [q, q] (or
   NULL) takes the same rotations. Returns 0, or -1 when the sweeps did not converge. */
static int tn__la_jacobi(double *x, int64_t p, int64_t q, double *y) {
    const double tol = DBL_EPSILON * 2;
    double *nrm = (double *)TN_MALLOC((size_t)(q + 1) * sizeof(double));
    if (!nrm) return -2;
    int status = -1;
    for (int sweep = 0; sweep < 80; sweep++) {
        int64_t rot = 0;
        /* the squared norms, exact at each sweep's start and updated by the rotations
           (a' = a - t c, b' = b + t c): one dot product per pair */
        for (int64_t i = 0; i < q; i++) nrm[i] = tn__la_dot(x + i * p, x + i * p, p);
        for (int64_t i = 0; i < q - 1; i++)
            for (int64_t j = i + 1; j < q; j++) {
                double *xi = x + i * p, *xj = x + j * p;
                const double a = nrm[i], b = nrm[j];
                if (a == 0 || b == 0) continue;
                const double c = tn__la_dot(xi, xj, p);
                if (!(fabs(c) > tol * sqrt(a) * sqrt(b))) continue;
                rot++;
                const double zeta = (b - a) / (2 * c), t = copysign(1, zeta) / (fabs(zeta) + hypot(1, zeta));
                const double cs = 1 / sqrt(1 + t * t), sn = cs * t;
                for (int64_t r = 0; r < p; r++) { double u = xi[r], v = xj[r]; xi[r] = cs * u - sn * v; xj[r] = sn * u + cs * v; }
                nrm[i] = fmax(a - t * c, 0);
                nrm[j] = b + t * c;
                if (y) {
                    double *yi = y + i * q, *yj = y + j * q;
                    for (int64_t r = 0; r < q; r++) { double u = yi[r], v = yj[r]; yi[r] = cs * u - sn * v; yj[r] = sn * u + cs * v; }
                }
            }
        if (!rot) { status = 0; break; }
    }
    TN_FREE(nrm);
    return status;
}
/* Rows from..to-1 of x [*, p] made unit vectors orthogonal to rows 0..to-1 (those before
   `from` orthonormal already; rows flagged in `fill` are replaced): Gram-Schmidt, twice,
   on the standard basis vectors. */
static void tn__la_complete(double *x, int64_t p, int64_t to, const unsigned char *fill) {
    int64_t next = 0;
    for (int64_t i = 0; i < to; i++) {
        if (!fill[i]) continue;
        double *xi = x + i * p;
        for (; next < p; next++) {
            memset(xi, 0, (size_t)p * sizeof(double));
            xi[next] = 1;
            for (int pass = 0; pass < 2; pass++)
                for (int64_t j = 0; j < to; j++)
                    if (j != i && (!fill[j] || j < i)) tn__la_axpy(xi, -tn__la_dot(xi, x + j * p, p), x + j * p, p);
            double nr = tn__la_nrm2(xi, p, 1);
            if (nr > 0.5) { for (int64_t r = 0; r < p; r++) xi[r] /= nr; next++; break; }
        }
    }
}
/* The SVD of every matrix of A [..., m, n], float64 without history: S [..., k] descending;
   with uv, U [..., m, uc] and Vh [..., vr, n] (uc = vr = k, or m and n: full). */
static int tn__la_svd_raw(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **S, tn_tensor **Vh, const char *fn) {
    tn_tensor *w = tn__la_work(A);
    if (!w) return -1;
    const int nd = A->ndim;
    const int64_t m = A->shape[nd - 2], n = A->shape[nd - 1], k = m < n ? m : n, p = m < n ? n : m, B = tn__la_batch(A);
    const int64_t uc = full ? m : k, vr = full ? n : k;
    const bool tall = m >= n;   /* x: A's columns (tall) or rows (wide) as rows */
    int64_t ss[TN_MAX_DIMS], us[TN_MAX_DIMS], vs[TN_MAX_DIMS];
    memcpy(ss, A->shape, sizeof ss);
    memcpy(us, A->shape, sizeof us);
    memcpy(vs, A->shape, sizeof vs);
    ss[nd - 2] = k;
    us[nd - 1] = uc;
    vs[nd - 2] = vr;
    tn_tensor *s = tn__own(tn__new(TN_F64, TN_CPU, ss, nd - 1));
    tn_tensor *u = uv ? tn__own(tn__new(TN_F64, TN_CPU, us, nd)) : NULL, *vh = uv ? tn__own(tn__new(TN_F64, TN_CPU, vs, nd)) : NULL;
    /* x [p, p] (k rows used, the rest for completion), y [k, k], the norms, the order */
    double *x = (double *)TN_MALLOC((size_t)(p * p + k * k + k + 1) * sizeof(double));
    int64_t *ord = (int64_t *)TN_MALLOC((size_t)(p + 1) * sizeof(int64_t));
    unsigned char *fill = (unsigned char *)TN_MALLOC((size_t)(p + 1));
    if (!s || (uv && (!u || !vh)) || !x || !ord || !fill) {
        TN_FREE(x); TN_FREE(ord); TN_FREE(fill);
        return s && (!uv || (u && vh)) ? TN__FAIL_INT("%s: out of memory", fn) : -1;
    }
    double *y = x + p * p, *nr = y + k * k;
    const double *a = (const double *)tn_data_ptr(w);
    double *sv = (double *)tn_data_ptr(s), *uvv = uv ? (double *)tn_data_ptr(u) : NULL, *vhv = uv ? (double *)tn_data_ptr(vh) : NULL;
    int bad = 0;
    for (int64_t b = 0; b < B && !bad; b++) {
        const double *ab = a + b * m * n;
        if (tall) { for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < n; j++) x[j * m + i] = ab[i * n + j]; }
        else memcpy(x, ab, (size_t)(m * n) * sizeof(double));
        if (uv) { memset(y, 0, (size_t)(k * k) * sizeof(double)); for (int64_t i = 0; i < k; i++) y[i * k + i] = 1; }
        const int js = tn__la_jacobi(x, p, k, uv ? y : NULL);
        if (js) { bad = js == -2 ? 2 : 1; break; }
        for (int64_t i = 0; i < k; i++) { nr[i] = tn__la_nrm2(x + i * p, p, 1); ord[i] = i; }
        for (int64_t i = 1; i < k; i++) {   /* descending (insertion sort: stable) */
            int64_t o = ord[i], j = i;
            for (; j > 0 && nr[ord[j - 1]] < nr[o]; j--) ord[j] = ord[j - 1];
            ord[j] = o;
        }
        for (int64_t i = 0; i < k; i++) sv[b * k + i] = nr[ord[i]];
        if (!uv) continue;
        /* P: the normalised rows of x, in order, completed to pc rows; Y's rows in order */
        const int64_t pc = tall ? uc : vr;
        double *P = (double *)TN_MALLOC((size_t)(pc * p + k * k + 1) * sizeof(double)), *Y = P ? P + pc * p : NULL;
        if (!P) { bad = 2; break; }
        memset(fill, 0, (size_t)p);
        for (int64_t i = 0; i < k; i++) {
            const double *xi = x + ord[i] * p, sn = nr[ord[i]];
            if (sn > 0 && isfinite(1 / sn)) for (int64_t r = 0; r < p; r++) P[i * p + r] = xi[r] / sn;
            else fill[i] = 1;
            memcpy(Y + i * k, y + ord[i] * k, (size_t)k * sizeof(double));
        }
        for (int64_t i = k; i < pc; i++) fill[i] = 1;
        tn__la_complete(P, p, pc, fill);
        double *ub = uvv + b * m * uc, *vb = vhv + b * vr * n;
        if (tall) {   /* U = P^T, Vh = Y */
            for (int64_t i = 0; i < m; i++)
                for (int64_t c = 0; c < uc; c++) ub[i * uc + c] = P[c * p + i];
            memcpy(vb, Y, (size_t)(k * k) * sizeof(double));
        } else {      /* U = Y^T, Vh = P */
            for (int64_t i = 0; i < k; i++)
                for (int64_t c = 0; c < k; c++) ub[i * uc + c] = Y[c * k + i];
            memcpy(vb, P, (size_t)(vr * n) * sizeof(double));
        }
        TN_FREE(P);
    }
    TN_FREE(x); TN_FREE(ord); TN_FREE(fill);
    if (bad == 2) return TN__FAIL_INT("%s: out of memory", fn);
    if (bad) return TN__FAIL_INT("%s: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values", fn);
    *S = s;
    if (uv) { *U = u; *Vh = vh; }
    return 0;
}

/* ---- autograd: one node per output ---- */
/* Records out (output number `which` of a decomposition of A) with backward bw; i[1] is the
   op's flag (mode, upper, full_matrices). */
static tn_tensor *tn__la_record(const char *name, tn_custom_backward bw, tn_tensor *A, tn_tensor *out, int which, int64_t flag) {
    tn_node *nd = out ? tn__fn_node(name, bw, &A, 1) : NULL;
    if (nd) { nd->i[0] = which; nd->i[1] = flag; nd->ni = 2; tn__node_save(nd, A); }
    return tn__node_attach(nd, out);
}
static tn_tensor *tn__mT(tn_tensor *t) { return tn_transpose(t, -2, -1); }

/* ---- qr ---- */
static tn_tensor *tn__qr_impl(tn_tensor *A, int mode, tn_tensor **R, const char *fn);
/* PyTorch's linalg_qr_backward. m >= n (reduced): gA = [gQ + Q copyltu(M)] R^{-T} with
   M = R gR^T - gQ^T Q; m < n: A = [X | Y], Q R = Q [U | V]: the square formula for X with
   gQ + Y gV^T, and Q gV for Y. */
static int tn__qr_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    const int which = (int)nd->i[0], mode = (int)nd->i[1];
    tn_tensor *A = tn_ctx_saved(nd, 0);
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    if (mode == 2)
        return TN__FAIL_INT("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
    if (mode == 1 && m > n) return TN__FAIL_INT("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
    tn_tensor *R = NULL, *Q = tn__qr_impl(A, 0, &R, "tn_linalg_qr");
    if (!Q) return -1;
    tn_tensor *gQ = which == 0 ? g : NULL, *gR = which == 1 ? g : NULL;
    const int64_t k = m < n ? m : n;
    tn_tensor *U = m < n ? tn_narrow(R, -1, 0, k) : R, *gU = gR, *gY = NULL;
    if (m < n && gR) {
        tn_tensor *gV = tn_narrow(gR, -1, k, n - k), *Y = tn_narrow(A, -1, k, n - k);
        gU = tn_narrow(gR, -1, 0, k);
        gY = tn_matmul(Q, gV);
        tn_tensor *t = tn_matmul(Y, tn__mT(gV));
        gQ = gQ ? tn_add(gQ, t) : t;
    }
    tn_tensor *M = gU ? tn_matmul(U, tn__mT(gU)) : NULL;
    if (gQ) { tn_tensor *t = tn_matmul(tn__mT(gQ), Q); M = M ? tn_sub(M, t) : tn_neg(t); }
    tn_tensor *cl = tn_add(tn__tril(M, 0), tn__mT(tn__tril(M, -1)));
    tn_tensor *b = tn_matmul(Q, cl);
    if (gQ) b = tn_add(b, gQ);
    /* b R^{-T}: X U^T = b is U X^T = b^T */
    tn_tensor *gX = tn_linalg_solve(tn__mT(U), b, .left = false);
    if (m < n) {
        tn_tensor *parts[2] = {gX, gY ? gY : tn_zeros_like(tn_narrow(A, -1, k, n - k))};
        gX = tn_cat(parts, 2, -1);
    }
    gin[0] = gX;
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__qr_impl(tn_tensor *A, int mode, tn_tensor **R, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check(fn, A, "A", false)) return NULL;
    tn_scope_begin();
    tn_tensor *q = NULL, *r = NULL, *Q = NULL;
    if (!tn__la_qr_raw(A, mode, &q, &r)) {
        Q = tn_keep(tn_to_dtype(q, A->dtype));
        *R = tn_keep(tn_to_dtype(r, A->dtype));
        if (!Q || !*R) { tn_release(Q); tn_release(*R); Q = *R = NULL; }
    }
    tn_scope_end();
    if (!Q) return NULL;
    *R = tn__la_record("LinalgQrBackward0", tn__qr_bw, A, *R, 1, mode);
    Q = tn__la_record("LinalgQrBackward0", tn__qr_bw, A, Q, 0, mode);
    if (!Q || !*R) { tn_release(Q); tn_release(*R); *R = NULL; return NULL; }
    return Q;
}
TNDEF tn_tensor *tn_linalg_qr_opts(tn_tensor *A, tn_tensor **R, tn_linalg_qr_fn_opts o) {
    if (!R) return (tn_tensor *)tn__error("tn_linalg_qr: R must not be NULL");
    *R = NULL;
    if (o.mode < 0 || o.mode > 2) return (tn_tensor *)tn__error("tn_linalg_qr: mode %d is not 0 (reduced), 1 (complete) or 2 (r)", o.mode);
    return TN__AS("tn_linalg_qr", tn__qr_impl(A, o.mode, R, "tn_linalg_qr"));
}
TNDEF tn_tensor *tn_linalg_qr_str(tn_tensor *A, tn_tensor **R, const char *options) {
    TN__KW_STR(tn_linalg_qr_fn_opts, linalg_qr, "tn_linalg_qr", options, tn_linalg_qr_opts(A, R, o));
}
TNDEF tn_tensor *tn_qr_opts(tn_tensor *A, tn_tensor **R, tn_qr_fn_opts o) {
    const bool some = o.some;
    if (!R) return (tn_tensor *)tn__error("tn_qr: R must not be NULL");
    *R = NULL;
    return TN__AS("tn_qr", tn__qr_impl(A, some ? 0 : 1, R, "tn_qr"));
}
TNDEF tn_tensor *tn_qr_str(tn_tensor *A, tn_tensor **R, const char *options) { if (R) *R = NULL; TN__KW_STR(tn_qr_fn_opts, qr, "tn_qr", options, tn_qr_opts(A, R, o)); }
TNDEF tn_tensor *tn_geqrf(tn_tensor *A, tn_tensor **tau) {
    if (!tau) return (tn_tensor *)tn__error("tn_geqrf: tau must not be NULL");
    *tau = NULL;
    TN__CHECK_NULL(A);
    if (tn__la_check("tn_geqrf", A, "input", false)) return NULL;
    tn_scope_begin();
    tn_tensor *a = NULL, *t = NULL, *r = NULL;
    if (!tn__la_qr_raw(A, 3, &a, &t)) {
        r = tn_keep(tn_to_dtype(a, A->dtype));
        *tau = tn_keep(tn_to_dtype(t, A->dtype));
    }
    tn_scope_end();
    return r;   /* torch: "the derivative for 'geqrf' is not implemented": no history */
}

/* Non-finite input: LAPACK's drivers fail on it, and so do ours (PyTorch's messages). */
static int tn__la_finite(const char *fn, tn_tensor *A, const char *what) {
    tn_scope_begin();
    tn_tensor *f = tn_all(tn_isfinite(A));
    int ok = f ? tn_item(f) != 0 : -1;
    tn_scope_end();
    if (ok < 0) return -1;
    return ok ? 0 : TN__FAIL_INT("%s: The algorithm failed to converge because the input matrix %s", fn, what);
}

/* ---- eigh, eigvalsh ---- */
static tn_tensor *tn__eigh_impl(tn_tensor *A, bool upper, bool vectors, tn_tensor **V, const char *fn);
/* PyTorch's linalg_eig_backward for Hermitian input: gA = V (diag(gL) + skew(V^T gV) / E) V^T
   with E_ij = L_j - L_i (skew(X) = (X - X^T) / 2). */
static int tn__eigh_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(nd, 0), *V = NULL, *L = tn__eigh_impl(A, nd->i[1] != 0, true, &V, "tn_linalg_eigh");
    if (!L) return -1;
    const int64_t n = A->shape[A->ndim - 1];
    tn_tensor *mid;
    if (nd->i[0] == 0) mid = tn_diag_embed(g);
    else {
        tn_tensor *K = tn_matmul(tn__mT(V), g);
        K = tn_mul_scalar(tn_sub(K, tn__mT(K)), 0.5);
        tn_tensor *E = tn_add(tn_sub(tn_unsqueeze(L, -2), tn_unsqueeze(L, -1)), tn_eye(n, n, A->dtype));
        mid = tn_div(K, E);
    }
    gin[0] = tn_matmul(V, tn_matmul(mid, tn__mT(V)));
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__eigh_impl(tn_tensor *A, bool upper, bool vectors, tn_tensor **V, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check(fn, A, "A", true)) return NULL;
    if (tn__la_finite(fn, A, "is ill-conditioned or has too many repeated eigenvalues (it holds non-finite values)")) return NULL;
    tn_scope_begin();
    tn_tensor *l = NULL, *v = NULL, *L = NULL;
    if (!tn__la_eigh_raw(A, upper, vectors, &l, &v, fn)) {
        L = tn_keep(tn_to_dtype(l, A->dtype));
        if (vectors) {
            *V = tn_keep(tn_to_dtype(v, A->dtype));
            if (!*V) { tn_release(L); L = NULL; }
        }
    }
    tn_scope_end();
    if (!L) return NULL;
    if (vectors) *V = tn__la_record("LinalgEighBackward0", tn__eigh_bw, A, *V, 1, upper);
    L = tn__la_record(vectors ? "LinalgEighBackward0" : "LinalgEigvalshBackward0", tn__eigh_bw, A, L, 0, upper);
    if (!L || (vectors && !*V)) { tn_release(L); if (vectors) { tn_release(*V); *V = NULL; } return NULL; }
    return L;
}
static int tn__uplo(const char *fn, const char *uplo, bool *upper) {
    if (uplo && (!strcmp(uplo, "L") || !strcmp(uplo, "l"))) { *upper = false; return 0; }
    if (uplo && (!strcmp(uplo, "U") || !strcmp(uplo, "u"))) { *upper = true; return 0; }
    return TN__FAIL_INT("%s: Expected UPLO argument to be 'L' or 'U', but got %s", fn, uplo ? uplo : "(null)");
}
TNDEF tn_tensor *tn_linalg_eigh_opts(tn_tensor *A, tn_tensor **eigenvectors, tn_linalg_eigh_fn_opts o) {
    if (!eigenvectors) return (tn_tensor *)tn__error("tn_linalg_eigh: eigenvectors must not be NULL");
    *eigenvectors = NULL;
    bool upper;
    if (tn__uplo("tn_linalg_eigh", o.UPLO, &upper)) return NULL;
    return TN__AS("tn_linalg_eigh", tn__eigh_impl(A, upper, true, eigenvectors, "tn_linalg_eigh"));
}
/* The _str forms of eigh, eigvalsh and lstsq: their S options (UPLO, driver) are copies the
   parser made, freed after the call. */
#define TN__KW_STR_S(T, table, fn, text, call) do { \
        T o = TN_DEFAULTS(T); \
        uint64_t seen_; \
        if (tn__kw_parse(fn, text, tn__kw_##table, TN__KW_N(tn__kw_##table), &o, &seen_)) return NULL; \
        tn_tensor *r_ = call; \
        tn__kw_release(tn__kw_##table, TN__KW_N(tn__kw_##table), &o, seen_); \
        return r_; \
    } while (0)
TNDEF tn_tensor *tn_linalg_eigh_str(tn_tensor *A, tn_tensor **eigenvectors, const char *options) {
    TN__KW_STR_S(tn_linalg_eigh_fn_opts, linalg_eigh, "tn_linalg_eigh", options, tn_linalg_eigh_opts(A, eigenvectors, o));
}
TNDEF tn_tensor *tn_linalg_eigvalsh_opts(tn_tensor *A, tn_linalg_eigh_fn_opts o) {
    bool upper;
    if (tn__uplo("tn_linalg_eigvalsh", o.UPLO, &upper)) return NULL;
    return TN__AS("tn_linalg_eigvalsh", tn__eigh_impl(A, upper, false, NULL, "tn_linalg_eigvalsh"));
}
TNDEF tn_tensor *tn_linalg_eigvalsh_str(tn_tensor *A, const char *options) {
    TN__KW_STR_S(tn_linalg_eigh_fn_opts, linalg_eigh, "tn_linalg_eigvalsh", options, tn_linalg_eigvalsh_opts(A, o));
}

/* ---- svd, svdvals ---- */
static tn_tensor *tn__svd_impl(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **Vh, const char *fn);
/* PyTorch's svd_backward (real case: no gauge check applies; for full_matrices the extra
   columns of U / rows of Vh get no gradient, as torch narrows them). */
static int tn__svd_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    const int which = (int)nd->i[0];
    tn_tensor *A = tn_ctx_saved(nd, 0), *U = NULL, *Vh = NULL, *S = tn__svd_impl(A, true, false, &U, &Vh, "tn_linalg_svd");
    if (!S) return -1;
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n;
    if (which == 1) {
        gin[0] = m >= n ? tn_matmul(U, tn_mul(tn_unsqueeze(g, -1), Vh)) : tn_matmul(tn_mul(U, tn_unsqueeze(g, -2)), Vh);
        return gin[0] ? 0 : -1;
    }
    tn_tensor *gU = which == 0 ? (nd->i[1] ? tn_narrow(g, -1, 0, k) : g) : NULL;
    tn_tensor *gVh = which == 2 ? (nd->i[1] ? tn_narrow(g, -2, 0, k) : g) : NULL;
    tn_tensor *S2 = tn_mul(S, S);
    tn_tensor *E = tn_add(tn_sub(tn_unsqueeze(S2, -2), tn_unsqueeze(S2, -1)), tn_eye(k, k, A->dtype)), *ret, *gA;
    if (gU) {
        tn_tensor *K = tn_matmul(tn__mT(U), gU);
        ret = tn_mul(tn_sub(K, tn__mT(K)), tn_div(tn_unsqueeze(S, -2), E));
    } else {
        tn_tensor *K = tn_matmul(Vh, tn__mT(gVh));
        ret = tn_mul(tn_unsqueeze(S, -1), tn_div(tn_sub(K, tn__mT(K)), E));
    }
    if (m > n && gU) {
        gA = tn_matmul(U, ret);
        tn_tensor *gUSinv = tn_div(gU, tn_unsqueeze(S, -2));
        gA = tn_sub(tn_add(gA, gUSinv), tn_matmul(U, tn_matmul(tn__mT(U), gUSinv)));
        gA = tn_matmul(gA, Vh);
    } else if (m < n && gVh) {
        gA = tn_matmul(ret, Vh);
        tn_tensor *SinvgVh = tn_div(gVh, tn_unsqueeze(S, -1));
        gA = tn_sub(tn_add(gA, SinvgVh), tn_matmul(tn_matmul(SinvgVh, tn__mT(Vh)), Vh));
        gA = tn_matmul(U, gA);
    } else gA = tn_matmul(U, tn_matmul(ret, Vh));
    gin[0] = gA;
    return gin[0] ? 0 : -1;
}
/* S (returned) and, with uv, U and Vh. */
static tn_tensor *tn__svd_impl(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **Vh, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check(fn, A, "A", false)) return NULL;
    if (tn__la_finite(fn, A, "contained non-finite values")) return NULL;
    tn_scope_begin();
    tn_tensor *u = NULL, *s = NULL, *vh = NULL, *S = NULL;
    if (!tn__la_svd_raw(A, uv, full, &u, &s, &vh, fn)) {
        S = tn_keep(tn_to_dtype(s, A->dtype));
        if (uv) {
            *U = tn_keep(tn_to_dtype(u, A->dtype));
            *Vh = tn_keep(tn_to_dtype(vh, A->dtype));
            if (!*U || !*Vh) { tn_release(S); tn_release(*U); tn_release(*Vh); S = *U = *Vh = NULL; }
        }
    }
    tn_scope_end();
    if (!S) return NULL;
    const char *name = uv ? "LinalgSvdBackward0" : "LinalgSvdvalsBackward0";
    if (uv) {
        *U = tn__la_record(name, tn__svd_bw, A, *U, 0, full);
        *Vh = tn__la_record(name, tn__svd_bw, A, *Vh, 2, full);
    }
    S = tn__la_record(name, tn__svd_bw, A, S, 1, full);
    if (!S || (uv && (!*U || !*Vh))) {
        tn_release(S);
        if (uv) { tn_release(*U); tn_release(*Vh); *U = *Vh = NULL; }
        return NULL;
    }
    return S;
}
TNDEF tn_tensor *tn_linalg_svd_opts(tn_tensor *A, tn_tensor **S, tn_tensor **Vh, tn_linalg_svd_fn_opts o) {
    if (!S || !Vh) return (tn_tensor *)tn__error("tn_linalg_svd: S and Vh must not be NULL");
    *S = *Vh = NULL;
    tn_tensor *U = NULL;
    *S = TN__AS("tn_linalg_svd", tn__svd_impl(A, true, o.full_matrices, &U, Vh, "tn_linalg_svd"));
    return *S ? U : NULL;
}
TNDEF tn_tensor *tn_linalg_svd_str(tn_tensor *A, tn_tensor **S, tn_tensor **Vh, const char *options) {
    TN__KW_STR(tn_linalg_svd_fn_opts, linalg_svd, "tn_linalg_svd", options, tn_linalg_svd_opts(A, S, Vh, o));
}
TNDEF tn_tensor *tn_linalg_svdvals(tn_tensor *A) {
    return TN__AS("tn_linalg_svdvals", tn__svd_impl(A, false, false, NULL, NULL, "tn_linalg_svdvals"));
}
/* torch.svd: V, not Vh; compute_uv = false gives zero U [..., m, m] and V [..., n, n]. */
static tn_tensor *tn__svd_old_impl(tn_tensor *A, bool some, bool compute_uv, tn_tensor **S, tn_tensor **V) {
    TN__CHECK_NULL(A);
    if (tn__la_check("tn_svd", A, "input", false)) return NULL;
    tn_scope_begin();
    tn_tensor *U = NULL, *Vh = NULL;
    const int nd = A->ndim;
    if (compute_uv) {
        *S = tn_keep(tn__svd_impl(A, true, !some, &U, &Vh, "tn_svd"));
        *V = *S ? tn_keep(tn__mT(Vh)) : NULL;
    } else {
        int64_t us[TN_MAX_DIMS];
        memcpy(us, A->shape, sizeof us);
        *S = tn_keep(tn__svd_impl(A, false, false, NULL, NULL, "tn_svd"));
        us[nd - 1] = A->shape[nd - 2];
        U = tn_zeros(us, nd, A->dtype);
        us[nd - 2] = us[nd - 1] = A->shape[nd - 1];
        *V = tn_keep(tn_zeros(us, nd, A->dtype));
    }
    if (!*S || !*V) { tn_release(*S); tn_release(*V); *S = *V = NULL; U = NULL; }
    return tn__scope_return(U);
}
TNDEF tn_tensor *tn_svd_opts(tn_tensor *A, tn_tensor **S, tn_tensor **V, tn_svd_fn_opts o) {
    const bool some = o.some;
    const bool compute_uv = o.compute_uv;
    if (!S || !V) return (tn_tensor *)tn__error("tn_svd: S and V must not be NULL");
    *S = *V = NULL;
    return TN__AS("tn_svd", tn__svd_old_impl(A, some, compute_uv, S, V));
}
TNDEF tn_tensor *tn_svd_str(tn_tensor *A, tn_tensor **S, tn_tensor **V, const char *options) { if (S) *S = NULL; if (V) *V = NULL; TN__KW_STR(tn_svd_fn_opts, svd, "tn_svd", options, tn_svd_opts(A, S, V, o)); }

/* ---- pinv, matrix_rank: the singular values above max(atol, rtol * sigma_max) ---- */
/* PyTorch's defaults: atol None is 0; rtol None is eps * max(m, n), or 0 when atol > 0. */
static void tn__la_tols(tn_tensor *A, double *atol, double *rtol) {
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    const double eps = A->dtype == TN_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    if (isnan(*rtol)) *rtol = !isnan(*atol) && *atol > 0 ? 0 : eps * (double)(m > n ? m : n);
    if (isnan(*atol)) *atol = 0;
}
/* The singular values (|eigenvalues| for hermitian) kept: a float mask [..., k] of the
   values above the tolerance, and the values themselves (signed eigenvalues for hermitian),
   with U, Vh (hermitian: V, V^T) of the reduced decomposition. Everything without history. */
static int tn__la_kept(tn_tensor *A, double atol, double rtol, bool herm, tn_tensor **keep, tn_tensor **vals, tn_tensor **U, tn_tensor **Vh, const char *fn) {
    tn_tensor *s = NULL, *u = NULL, *vh = NULL, *mag;
    tn_no_grad_begin();
    if (herm) {
        s = tn__eigh_impl(A, false, U != NULL, U ? &u : NULL, fn);
        if (s && U) vh = tn__mT(u);
        mag = tn_abs(s);
    } else {
        s = tn__svd_impl(A, U != NULL, false, U ? &u : NULL, U ? &vh : NULL, fn);
        mag = s;
    }
    tn_no_grad_end();
    if (!s || !mag) return -1;
    const int64_t k = tn_size(mag, -1);
    int64_t dl = -1;
    tn_tensor *mx = k ? tn_amax(mag, &dl, 1, .keepdim = true) : tn_zeros_like(mag);
    tn_tensor *tol = tn_clamp_min(tn_mul_scalar(mx, rtol), atol);
    *keep = tn_to_dtype(tn_gt(mag, tol), A->dtype);
    *vals = s;
    if (U) { *U = u; *Vh = vh; }
    return *keep ? 0 : -1;
}
static tn_tensor *tn__pinv_impl(tn_tensor *A, double atol, double rtol, bool herm, const char *fn);
/* PyTorch's pinv_backward (in terms of pinv(A), recomputed differentiably). */
static int tn__pinv_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(nd, 0), *P = tn__pinv_impl(A, nd->d[0], nd->d[1], nd->i[0] != 0, "tn_linalg_pinv");
    if (!P) return -1;
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    tn_tensor *Ph = tn__mT(P), *gh = tn__mT(g), *r;
    if (m <= n) {
        tn_tensor *K = tn_matmul(gh, P), *KPh = tn_matmul(K, Ph);
        r = tn_add(tn_sub(tn_sub(KPh, tn__mT(tn_matmul(P, K))), tn_matmul(tn_matmul(A, P), KPh)),
                   tn_matmul(tn_matmul(Ph, P), tn_sub(gh, tn_matmul(K, A))));
    } else {
        tn_tensor *K = tn_matmul(P, gh), *PhK = tn_matmul(Ph, K);
        r = tn_sub(tn_add(tn_sub(tn_matmul(tn_matmul(tn_sub(gh, tn_matmul(A, K)), P), Ph), tn__mT(tn_matmul(K, P))), PhK),
                   tn_matmul(tn_matmul(PhK, P), A));
    }
    gin[0] = r;
    return r ? 0 : -1;
}
static tn_tensor *tn__pinv_impl(tn_tensor *A, double atol, double rtol, bool herm, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check(fn, A, "A", herm)) return NULL;
    tn__la_tols(A, &atol, &rtol);
    tn_scope_begin();
    tn_tensor *keep = NULL, *s = NULL, *U = NULL, *Vh = NULL, *r = NULL;
    tn_no_grad_begin();
    if (!tn__la_kept(A, atol, rtol, herm, &keep, &s, &U, &Vh, fn)) {
        /* 1/s where kept, 0 elsewhere (no 1/0: the dropped values become 1 first) */
        tn_tensor *sinv = tn_mul(keep, tn_reciprocal(tn_where(tn_gt_scalar(keep, 0.5), s, tn_ones_like(s))));
        r = tn_keep(tn_matmul(tn_mul(tn__mT(Vh), tn_unsqueeze(sinv, -2)), tn__mT(U)));
    }
    tn_no_grad_end();
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("LinalgPinvBackward0", tn__pinv_bw, &A, 1) : NULL;
    if (nd) { nd->d[0] = atol; nd->d[1] = rtol; nd->i[0] = herm; nd->ni = 1; tn__node_save(nd, A); }
    return tn__node_attach(nd, r);
}
TNDEF tn_tensor *tn_linalg_pinv_opts(tn_tensor *A, tn_linalg_pinv_fn_opts o) {
    return TN__AS("tn_linalg_pinv", tn__pinv_impl(A, o.atol, o.rtol, o.hermitian, "tn_linalg_pinv"));
}
TNDEF tn_tensor *tn_linalg_pinv_str(tn_tensor *A, const char *options) {
    TN__KW_STR(tn_linalg_pinv_fn_opts, linalg_pinv, "tn_linalg_pinv", options, tn_linalg_pinv_opts(A, o));
}
TNDEF tn_tensor *tn_pinverse_str(tn_tensor *A, const char *options) { TN__KW_STR(tn_pinverse_fn_opts, pinverse, "tn_pinverse", options, tn_pinverse_opts(A, o)); }
TNDEF tn_tensor *tn_pinverse_opts(tn_tensor *A, tn_pinverse_fn_opts o) {
    return TN__AS("tn_pinverse", tn__pinv_impl(A, NAN, o.rcond, false, "tn_pinverse"));
}
static tn_tensor *tn__rank_impl(tn_tensor *A, double atol, double rtol, bool herm, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check(fn, A, "A", herm)) return NULL;
    tn__la_tols(A, &atol, &rtol);
    tn_scope_begin();
    tn_tensor *keep = NULL, *s = NULL, *r = NULL;
    int64_t dl = -1;
    if (!tn__la_kept(A, atol, rtol, herm, &keep, &s, NULL, NULL, fn)) r = tn_to_dtype(tn_sum_dims(keep, &dl, 1), TN_I64);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_matrix_rank_opts(tn_tensor *A, tn_linalg_matrix_rank_fn_opts o) {
    return TN__AS("tn_linalg_matrix_rank", tn__rank_impl(A, o.atol, o.rtol, o.hermitian, "tn_linalg_matrix_rank"));
}
TNDEF tn_tensor *tn_linalg_matrix_rank_str(tn_tensor *A, const char *options) {
    TN__KW_STR(tn_linalg_matrix_rank_fn_opts, linalg_matrix_rank, "tn_linalg_matrix_rank", options, tn_linalg_matrix_rank_opts(A, o));
}

/* ---- lstsq: X = pinv(A) B (its gradient is PyTorch's linalg_lstsq_backward, which is
   pinv's); the rank and residuals as the driver reports them ---- */
static tn_tensor *tn__lstsq_impl(tn_tensor *A, tn_tensor *Bm, double rcond, const char *driver, tn_tensor **res, tn_tensor **rank, tn_tensor **sv) {
    TN__CHECK_NULL(A, Bm);
    const char *fn = "tn_linalg_lstsq";
    if (tn__la_check(fn, A, "A", false)) return NULL;
    if (Bm->ndim < 1) return (tn_tensor *)tn__error("%s: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1", fn);
    if (Bm->dtype != A->dtype)
        return (tn_tensor *)tn__error("%s: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s", fn, tn_dtype_name(A->dtype), tn_dtype_name(Bm->dtype));
    int drv = 1;   /* gels, gelsy (the CPU default), gelsd, gelss */
    static const char *const drivers[] = {"gels", "gelsy", "gelsd", "gelss"};
    if (driver) {
        for (drv = 0; drv < 4 && strcmp(driver, drivers[drv]); drv++) {}
        if (drv == 4) return (tn_tensor *)tn__error("%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)", fn);
    }
    const bool vec = A->ndim - 1 == Bm->ndim;
    if (!vec && A->ndim != Bm->ndim)
        return (tn_tensor *)tn__error("%s: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1", fn);
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    if (Bm->shape[Bm->ndim - (vec ? 1 : 2)] != m)
        return (tn_tensor *)tn__error("%s: input.size(-2) should match other.size(-%d)", fn, vec ? 1 : 2);
    tn_scope_begin();
    tn_tensor *b = vec ? tn_unsqueeze(Bm, -1) : Bm, *X = NULL;
    int64_t bs[TN_MAX_DIMS], sa[TN_MAX_DIMS];
    int bnd = tn__broadcast(A->shape, A->ndim - 2, b->shape, b->ndim - 2, bs);
    if (bnd < 0) { tn__error("%s: the batch dims of A %s and B %s do not broadcast", fn, TN__SHAPE(A), TN__SHAPE(Bm)); return tn__scope_return(NULL); }
    memcpy(sa, bs, (size_t)bnd * sizeof(int64_t));
    sa[bnd] = m;
    sa[bnd + 1] = n;
    tn_tensor *a = tn_expand(A, sa, bnd + 2);
    double atol = 0, rtol = isnan(rcond) ? (A->dtype == TN_F32 ? (double)FLT_EPSILON : DBL_EPSILON) * (double)(m > n ? m : n) : rcond;
    tn_tensor *P = tn__pinv_impl(a, atol, rtol, false, fn);
    X = P ? tn_matmul(P, b) : NULL;
    if (X && vec) X = tn_squeeze_dim(X, -1);
    /* rank (gelsy, gelsd, gelss), singular values (gelsd, gelss), residuals (not gelsy:
       m > n and every matrix of full rank) */
    tn_tensor *keep = NULL, *s = NULL, *rk = NULL, *empty = X ? tn_empty(TN_SHAPE(0), A->dtype) : NULL;
    int64_t dl = -1;
    if (X && !tn__la_kept(a, atol, rtol, false, &keep, &s, NULL, NULL, fn)) {
        rk = tn_to_dtype(tn_sum_dims(keep, &dl, 1), TN_I64);
        *rank = tn_keep(drv == 0 ? tn_empty(TN_SHAPE(0), TN_I64) : rk);
        *sv = tn_keep(drv >= 2 ? s : empty);
        bool full = drv == 0 || (rk && tn_numel(rk) > 0 ? tn_item(tn_amin(rk, NULL, 0)) == (double)n : true);
        if (drv != 1 && m > n && full && tn_numel(a) > 0) {
            tn_no_grad_begin();
            tn_tensor *Xd = vec ? tn_unsqueeze(X, -1) : X;
            int64_t dr = -2;
            tn_tensor *r = tn_sum_dims(tn_square(tn_sub(tn_matmul(a, Xd), b)), &dr, 1);
            tn_no_grad_end();
            *res = tn_keep(r);   /* [..., 1] for vectors too, as torch */
        } else *res = tn_keep(empty);
        if (!*rank || !*sv || !*res) X = NULL;
    } else X = NULL;
    if (!X) { tn_release(*rank); tn_release(*sv); tn_release(*res); *rank = *sv = *res = NULL; }
    return tn__scope_return(X);
}
TNDEF tn_tensor *tn_linalg_lstsq_opts(tn_tensor *A, tn_tensor *B, tn_tensor **residuals, tn_tensor **rank, tn_tensor **singular_values, tn_linalg_lstsq_fn_opts o) {
    if (!residuals || !rank || !singular_values) return (tn_tensor *)tn__error("tn_linalg_lstsq: residuals, rank and singular_values must not be NULL");
    *residuals = *rank = *singular_values = NULL;
    return TN__AS("tn_linalg_lstsq", tn__lstsq_impl(A, B, o.rcond, o.driver, residuals, rank, singular_values));
}
TNDEF tn_tensor *tn_linalg_lstsq_str(tn_tensor *A, tn_tensor *B, tn_tensor **residuals, tn_tensor **rank, tn_tensor **singular_values, const char *options) {
    TN__KW_STR_S(tn_linalg_lstsq_fn_opts, linalg_lstsq, "tn_linalg_lstsq", options, tn_linalg_lstsq_opts(A, B, residuals, rank, singular_values, o));
}

/* ---- cond, and the matrix norms cond needs ----
   The ords 'nuc', 2 and -2 come from svdvals; linalg.matrix_norm (another part) can call
   tn__la_svd_norm for them. */
static tn_tensor *tn__la_svd_norm(tn_tensor *A, int ord) {   /* ord: 0 nuc, 2, -2 */
    tn_tensor *s = tn_linalg_svdvals(A);
    if (!s) return NULL;
    int64_t dl = -1;
    if (ord == 0) return tn_sum_dims(s, &dl, 1);
    if (tn_size(s, -1) == 0) return tn_zeros(s->shape, s->ndim - 1, s->dtype);
    return tn_select(s, -1, ord == 2 ? 0 : -1);
}
/* The other ords, as composites: fro, inf / -inf (row sums), 1 / -1 (column sums). */
static tn_tensor *tn__la_plain_norm(tn_tensor *A, const char *p) {
    int64_t d2[2] = {-2, -1}, dl = -1;
    if (!strcmp(p, "fro")) return tn_sqrt(tn_sum_dims(tn_square(A), d2, 2));
    if (!strcmp(p, "nuc")) return tn__la_svd_norm(A, 0);
    const bool rows = !strcmp(p, "inf") || !strcmp(p, "-inf"), neg = p[0] == '-';
    tn_tensor *sums = tn_sum_dims(tn_abs(A), rows ? &d2[1] : &d2[0], 1);
    return neg ? tn_amin(sums, &dl, 1) : tn_amax(sums, &dl, 1);
}
static tn_tensor *tn__cond_impl(tn_tensor *A, const char *p) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_cond";
    if (tn__la_check(fn, A, "A", false)) return NULL;
    static const char *const ords[] = {"2", "-2", "fro", "nuc", "inf", "-inf", "1", "-1"};
    int o = 0;
    if (p) {
        for (o = 0; o < 8 && strcmp(p, ords[o]); o++) {}
        if (o == 8) return (tn_tensor *)tn__error("%s: linalg.cond got an invalid norm type: %s", fn, p);
    }
    tn_scope_begin();
    tn_tensor *r = NULL;
    if (o < 2) {
        tn_tensor *s = tn_linalg_svdvals(A);
        const int64_t k = s ? tn_size(s, -1) : 0;
        if (s && k == 0) r = tn_zeros(s->shape, s->ndim - 1, A->dtype);
        else if (s) {
            tn_tensor *mx = tn_select(s, -1, 0), *mn = tn_select(s, -1, k - 1);
            r = o == 0 ? tn_div(mx, mn) : tn_div(mn, mx);
        }
    } else if (A->shape[A->ndim - 1] != A->shape[A->ndim - 2]) {
        tn__error("%s: linalg.cond(ord=%s): A must be batches of square matrices, but they are %lld by %lld matrices", fn, p,
                  (long long)A->shape[A->ndim - 2], (long long)A->shape[A->ndim - 1]);
    } else if (tn_numel(A) == 0) {
        r = tn_zeros(A->shape, A->ndim - 2, A->dtype);
    } else {   /* norm(A) norm(A^{-1}); a singular matrix's inverse is inf (PyTorch's _linalg_cond_helper) */
        tn_tensor *info = NULL, *inv = tn_linalg_inv_ex(A, &info);
        if (inv) {
            tn_tensor *bad = tn_gt_scalar(tn_unsqueeze(tn_unsqueeze(info, -1), -1), 0);
            inv = tn_masked_fill(inv, bad, INFINITY);
            r = tn_mul(tn__la_plain_norm(A, p), tn__la_plain_norm(inv, p));
            r = r ? tn_masked_fill(r, tn_isnan(r), INFINITY) : NULL;   /* 0 * inf: a singular matrix */
        }
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_cond(tn_tensor *A, const char *p) { return TN__AS("tn_linalg_cond", tn__cond_impl(A, p)); }
