/* ---- torch.linalg: QR, symmetric eigen, SVD and what is built on them ----
   CPU, batched over leading dims, as linalg_factor.c: the kernels run on float64 (complex128)
   copies (float32 is rounded once, at the end), but the SVD of float32 input runs in float32
   (sgesvd) and complex input has a complex SVD (zgesvd's route to a real bidiagonal; complex64's
   in single precision, as cgesdd). They keep the vectors
   they rotate as contiguous rows (the columns of the row-major matrices, transposed), so
   every inner loop runs along memory:
     QR     Householder (LAPACK's dgeqr2 / dorg2r, dlarfg's signs: R's diagonal and Q match
            torch's LAPACK results)
     eigh   blocked Householder tridiagonalisation (LAPACK's dsytrd / dlatrd, the trailing
            updates on the GEMM), dorg2r's Q, implicit QL (EISPACK's tql2)
     SVD    Golub-Kahan bidiagonalisation and implicit-shift QR (LAPACK's dgebrd / dorgbr,
            blocked through the GEMM from order 129 / 96, EISPACK's svd): normwise backward
            stable, orthogonality to eps, as dgesvd; complex:
            zgebrd (zlabrd's panels, zgebd2 for the rest) to a real bidiagonal, its QR on
            real vectors, then zunmbr's blocked reflectors through the GEMM (zgesdd's
            route, QR for divide and conquer)
   The backward formulas are PyTorch's (linalg_qr_backward, linalg_eig_backward for
   Hermitian input, svd_backward, pinv_backward), written in library ops over factors that
   are recomputed differentiably from the saved input: double backward works. A result with
   several outputs records one node per output; each applies the formula with the other
   outputs' gradients absent (the formulas are linear in them). */

/* tn__la_dot's sums as a statement (r = a . b), so that it compiles inline into each copy of
   a TN__LA_JOB body (a call would run the plain copy). float32 keeps 8 partial sums (an AVX2
   register's lanes), float64 4. */
#define TN__LA_DOT(r, a, b, n) do { \
        double s0_ = 0, s1_ = 0, s2_ = 0, s3_ = 0; \
        int64_t i_ = 0; \
        for (; i_ + 4 <= (n); i_ += 4) { s0_ += (a)[i_] * (b)[i_]; s1_ += (a)[i_ + 1] * (b)[i_ + 1]; s2_ += (a)[i_ + 2] * (b)[i_ + 2]; s3_ += (a)[i_ + 3] * (b)[i_ + 3]; } \
        for (; i_ < (n); i_++) s0_ += (a)[i_] * (b)[i_]; \
        (r) = (s0_ + s1_) + (s2_ + s3_); \
    } while (0)
#define TN__LA_DOT_F(r, a, b, n) do { \
        float s_[8] = {0, 0, 0, 0, 0, 0, 0, 0}; \
        int64_t i_ = 0; \
        for (; i_ + 8 <= (n); i_ += 8) for (int q_ = 0; q_ < 8; q_++) s_[q_] += (a)[i_ + q_] * (b)[i_ + q_]; \
        for (; i_ < (n); i_++) s_[0] += (a)[i_] * (b)[i_]; \
        (r) = ((s_[0] + s_[1]) + (s_[2] + s_[3])) + ((s_[4] + s_[5]) + (s_[6] + s_[7])); \
    } while (0)
static double tn__la_dot(const double *a, const double *b, int64_t n) { double r; TN__LA_DOT(r, a, b, n); return r; }
/* The Householder and rotation kernels of QR, eigh and the SVD, for float64 (suffix none)
   and float32 (_f: the SVD of float32 input runs in float32, as LAPACK's sgesvd). */
/* @template TN__LA_HH(T, S, DOT) */
/* sqrt(sum x_i^2) over n values at stride inc, without overflow or underflow in the squares. */
static T tn__la_nrm2##S(const T *x, int64_t n, int64_t inc) {
    T mx = 0, s = 0;
    for (int64_t i = 0; i < n; i++) mx = (T)fmax(mx, fabs(x[i * inc]));
    if (mx == 0 || !isfinite(mx)) return mx;
    for (int64_t i = 0; i < n; i++) { T t = x[i * inc] / mx; s += t * t; }
    return mx * (T)sqrt(s);
}
static void tn__la_axpy##S(T *y, T a, const T *x, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] += a * x[i]; }
/* The reflector H = I - tau v v^T with H x = (beta, 0, ...), as LAPACK's dlarfg: on return
   x[0] = beta, x[1..] = v[1..] (v[0] = 1 implied); returns tau (0: H = I). */
static T tn__la_larfg##S(T *x, int64_t len) {
    if (len <= 1) return 0;
    T alpha = x[0], xn = tn__la_nrm2##S(x + 1, len - 1, 1);
    if (xn == 0) return 0;
    T beta = -(T)copysign(hypot(alpha, xn), alpha), tau = (beta - alpha) / beta, s = 1 / (alpha - beta);
    for (int64_t i = 1; i < len; i++) x[i] *= s;
    x[0] = beta;
    return tau;
}
/* H_j applied to rows j + i0 .. j + i1 - 1 of qt (threads split the rows). */
typedef struct { T *qt; const T *v; T tau; int64_t m, j; } tn__la_h##S##_t;
TN__LA_JOB(tn__la_h_rows##S,
    const tn__la_h##S##_t *h = (const tn__la_h##S##_t *)p;
    const int64_t len = h->m - h->j;
    for (int64_t c = h->j + i0; c < h->j + i1; c++) {
        T *w = h->qt + c * h->m + h->j, dw;
        DOT(dw, h->v, w, len);
        tn__la_axpy##S(w, -h->tau * dw, h->v, len);
    })
/* Q's first qc columns as the rows of qt [qc, m] (dorg2r: H_0 ... H_{k-1} applied to I). */
static void tn__la_org2r_t##S(T *h, int64_t m, int64_t k, const T *tau, T *qt, int64_t qc) {
    memset(qt, 0, (size_t)(qc * m) * sizeof(T));
    for (int64_t c = 0; c < qc; c++) qt[c * m + c] = 1;
    for (int64_t j = k - 1; j >= 0; j--) {
        if (tau[j] == 0 || j >= qc) continue;
        T *v = h + j * m + j;
        const int64_t len = m - j;
        const T beta = v[0];
        v[0] = 1;
        /* e_c for c < j has no entries at j.. yet */
        tn__la_h##S##_t hj = {qt, v, tau[j], m, j};
        tn__parallel_range(tn__par_threads(4 * len * (qc - j), qc - j), qc - j, tn__la_h_rows##S, &hj);
        v[0] = beta;
    }
}
/* Rotate rows x, y (length len): x' = c x + s y, y' = c y - s x. */
static void tn__la_rot##S(T *TN__RESTRICT x, T *TN__RESTRICT y, T c, T s, int64_t len) {
    for (int64_t r = 0; r < len; r++) { const T u = x[r], v = y[r]; x[r] = c * u + s * v; y[r] = c * v - s * u; }
}
/* @end TN__LA_HH */
TN__LA_HH(double, , TN__LA_DOT)
TN__LA_HH(float, _f, TN__LA_DOT_F)

/* ---- Householder QR ---- */
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
/* ---- complex Householder QR: zgeqr2 / zung2r ---- */
/* complex64's element (tn__cplx is complex128's): the complex SVD also runs in single
   precision, as LAPACK's cgesdd, its scalars (tau, the reflectors' scale) in double. */
typedef struct tn__cplxf { float re, im; } tn__cplxf;
/* The reflector kernels for complex128 (S _c: QR, eig and the SVD) and complex64 (_cf: the
   SVD); CT the element, R its real part; the scalars and sums run in double (ld / st:
   to and from tn__cplx, exact for complex128). */
/* @template TN__LA_CHH(CT, R, S) */
static tn__cplx tn__la_ld##S(CT z) { return tn__cx(z.re, z.im); }
static CT tn__la_st##S(tn__cplx z) { CT r; r.re = (R)z.re; r.im = (R)z.im; return r; }
static CT tn__la_cj##S(CT z) { z.im = -z.im; return z; }
/* sqrt(sum |x_i|^2), scaled as tn__la_nrm2. */
static double tn__la_nrm2##S(const CT *x, int64_t n) {
    double mx = 0, s = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fmax(fabs(x[i].re), fabs(x[i].im)));
    if (mx == 0 || !isfinite(mx)) return mx;
    for (int64_t i = 0; i < n; i++) { double a = x[i].re / mx, b = x[i].im / mx; s += a * a + b * b; }
    return mx * sqrt(s);
}
/* zlarfg: H = I - tau v v^H with H^H x = (beta, 0, ...), beta real; x[0] = beta, x[1..] = v[1..];
   returns tau (complex; 0: H = I). A length-1 x with an imaginary part still reflects (R's
   diagonal is real, as LAPACK's). */
static CT tn__la_larfg##S(CT *x, int64_t len) {
    if (len <= 0) return tn__la_st##S(tn__cx(0, 0));
    const tn__cplx alpha = tn__la_ld##S(x[0]);
    const double xn = tn__la_nrm2##S(x + 1, len - 1);
    if (xn == 0 && alpha.im == 0) return tn__la_st##S(tn__cx(0, 0));
    const double beta = -copysign(sqrt(alpha.re * alpha.re + alpha.im * alpha.im + xn * xn), alpha.re);
    const tn__cplx tau = tn__cx((beta - alpha.re) / beta, -alpha.im / beta), s = tn__cdiv(tn__cx(1, 0), tn__cx(alpha.re - beta, alpha.im));
    for (int64_t i = 1; i < len; i++) x[i] = tn__la_st##S(tn__cmul(tn__la_ld##S(x[i]), s));
    x[0] = tn__la_st##S(tn__cx(beta, 0));
    return tn__la_st##S(tau);
}
/* w -= t v (v^H w) over len entries */
static void tn__la_refl##S(CT *w, const CT *v, CT t, int64_t len) {
    tn__cplx d = tn__cx(0, 0);
    for (int64_t i = 0; i < len; i++) d = tn__cadd(d, tn__cmul(tn__cconj(tn__la_ld##S(v[i])), tn__la_ld##S(w[i])));
    d = tn__cmul(tn__la_ld##S(t), d);
    for (int64_t i = 0; i < len; i++) w[i] = tn__la_st##S(tn__csub(tn__la_ld##S(w[i]), tn__cmul(d, tn__la_ld##S(v[i]))));
}
/* @end TN__LA_CHH */
TN__LA_CHH(tn__cplx, double, _c)
TN__LA_CHH(tn__cplxf, float, _cf)
/* tn__la_geqr2_t's complex form: the columns get H_j^H = I - conj(tau) v v^H (zgeqr2). */
static void tn__la_geqr2_t_c(tn__cplx *h, int64_t m, int64_t n, tn__cplx *tau) {
    const int64_t k = m < n ? m : n;
    for (int64_t j = 0; j < k; j++) {
        tn__cplx *v = h + j * m + j;
        const int64_t len = m - j;
        tau[j] = tn__la_larfg_c(v, len);
        if (tau[j].re == 0 && tau[j].im == 0) continue;
        const tn__cplx beta = v[0];
        v[0] = tn__cx(1, 0);
        for (int64_t c = j + 1; c < n; c++) tn__la_refl_c(h + c * m + j, v, tn__cconj(tau[j]), len);
        v[0] = beta;
    }
}
/* Q's first qc columns as the rows of qt [qc, m]: H_0 ... H_{k-1} applied to I (zung2r). */
static void tn__la_org2r_t_c(tn__cplx *h, int64_t m, int64_t k, const tn__cplx *tau, tn__cplx *qt, int64_t qc) {
    for (int64_t i = 0; i < qc * m; i++) qt[i] = tn__cx(0, 0);
    for (int64_t c = 0; c < qc; c++) qt[c * m + c] = tn__cx(1, 0);
    for (int64_t j = k - 1; j >= 0; j--) {
        if (tau[j].re == 0 && tau[j].im == 0) continue;
        tn__cplx *v = h + j * m + j;
        const tn__cplx beta = v[0];
        v[0] = tn__cx(1, 0);
        for (int64_t c = j; c < qc; c++) tn__la_refl_c(qt + c * m + j, v, tau[j], m - j);
        v[0] = beta;
    }
}
/* tn__la_qr_raw's loop over the B matrices of the work copy w (T elements): each one
   transposed into the column-major scratch h, factored there (GEQR2: Householder), written
   out by mode; ORG2R forms Q. */
/* @template TN__LA_QR_LOOP(NAME, T, GEQR2, ORG2R, ZERO) */
static int NAME(tn_tensor *w, int mode, tn_tensor *q, tn_tensor *r, int64_t m, int64_t n, int64_t B) {
    const int64_t k = m < n ? m : n, qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
    T *h = (T *)TN_MALLOC((size_t)(m * n + k + (mode < 2 ? qc * m : 0) + 1) * sizeof(T));
    if (!h) { tn__error("tn_linalg_qr: out of memory"); return -1; }
    T *tau = h + m * n, *qt = tau + k;
    const T *a = (const T *)tn_data_ptr(w);
    T *qv = (T *)tn_data_ptr(q), *rv = (T *)tn_data_ptr(r);
    for (int64_t b = 0; b < B; b++) {
        const T *ab = a + b * m * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) h[j * m + i] = ab[i * n + j];
        GEQR2(h, m, n, tau);
        if (mode == 3) {
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) qv[b * m * n + i * n + j] = h[j * m + i];
            memcpy(rv + b * k, tau, (size_t)k * sizeof(T));
            continue;
        }
        T *rb = rv + b * rr * n;
        for (int64_t i = 0; i < rr; i++)
            for (int64_t j = 0; j < n; j++) rb[i * n + j] = i <= j ? h[j * m + i] : ZERO;
        if (mode == 2) continue;
        ORG2R(h, m, k, tau, qt, qc);
        T *qb = qv + b * m * qc;
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < qc; c++) qb[i * qc + c] = qt[c * m + i];
    }
    TN_FREE(h);
    return 0;
}
/* @end TN__LA_QR_LOOP */
TN__LA_QR_LOOP(tn__la_qr_loop, double, tn__la_geqr2_t, tn__la_org2r_t, 0)
TN__LA_QR_LOOP(tn__la_qr_loop_c, tn__cplx, tn__la_geqr2_t_c, tn__la_org2r_t_c, tn__cx(0, 0))
/* tn__la_qr_raw on the device (A's dtype): geqrf and orgqr by the backend's entry; R is the
   upper triangle of the packed factors' first rows */
static int tn__la_qr_dev(tn_tensor *A, int mode, tn_tensor **Q, tn_tensor **R) {
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n, B = tn__la_batch(A);
    const int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
    tn_tensor *cm = tn__la_cm(A), *tau = tn__la_dnew(A->dtype, A, B, k, 0, 2), *q = mode < 2 ? tn__la_dnew(A->dtype, A, B, qc, m, 3) : NULL;
    if (!cm || !tau || (mode < 2 && !q)) return -1;
    if (k == 0) q = q ? tn__la_eye_dev(A, B, qc, m) : NULL;   /* no reflectors: Q = I */
    else if (tn__la_run(TN_LA_GEQRF, cm, tau, q, NULL, NULL, 0)) return -1;
    tn_tensor *F = tn__la_uncm(cm, A, m, n);
    if (mode == 3) {
        *Q = F;
        *R = tn__la_unbatch(tau, A, 1);
    } else {
        const int64_t none = 0;
        *R = tn__triu(tn_narrow(F, -2, 0, rr), 0);
        *Q = mode == 2 ? tn__own(tn__new(A->dtype, A->device, &none, 1)) : tn__la_uncm(q, A, m, qc);
    }
    return *Q && *R ? 0 : -1;
}
/* The QR of every matrix of A [..., m, n], float64 (complex128) without history. mode: 0 reduced, 1
   complete, 2 r (no Q), 3 geqrf (*Q: the packed factors [..., m, n], *R: tau [..., k]). */
static int tn__la_qr_raw(tn_tensor *A, int mode, tn_tensor **Q, tn_tensor **R) {
    if (tn__la_routed(A, true)) return tn__la_qr_dev(A, mode, Q, R);
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
    const bool cplx = tn_is_complex(w);
    const tn_dtype wt = cplx ? TN_C128 : TN_F64;
    tn_tensor *q = tn__own(tn__new(wt, TN_CPU, qs, mode == 2 ? 1 : nd)), *r = tn__own(tn__new(wt, TN_CPU, rs, mode == 3 ? nd - 1 : nd));
    if (!q || !r || (cplx ? tn__la_qr_loop_c : tn__la_qr_loop)(w, mode, q, r, m, n, B)) return -1;
    *Q = q;
    *R = r;
    return 0;
}

/* ---- symmetric eigen: sytrd + tql2 ---- */
/* sqrt(a^2 + b^2): the plain formula where the squares cannot overflow or lose the larger
   one to underflow, else hypot (several times slower; the SVD's QR takes two per rotation, tql2 one). */
static double tn__la_hypot(double a, double b) {
    const double m = fmax(fabs(a), fabs(b));
    return m < 1e150 && m > 1e-150 ? sqrt(a * a + b * b) : hypot(a, b);
}
/* A QL sweep's rotations (i = m-1 down to l: rows i+1, i of wt [*, n] by (c, s)[i]),
   applied once the sweep is done, the columns split between threads (TN__LA_JOB: an AVX2
   copy too; each element sees the same operations in the same order: the same bits). */
typedef struct { double *wt; const double *c, *s; int64_t l, m, n; } tn__la_qlrots;
TN__LA_JOB(tn__la_qlrots_part,
    const tn__la_qlrots *r = (const tn__la_qlrots *)p;
    for (int64_t i = r->m - 1; i >= r->l; i--) tn__la_rot(r->wt + (i + 1) * r->n + i0, r->wt + i * r->n + i0, r->c[i], r->s[i], i1 - i0);)
/* ---- blocked tridiagonalisation: LAPACK's dsytrd ('L') with dlatrd ----
   Column-major storage (A(r, c) at a[c * ld + r]: a symmetric matrix's row-major array read
   as the same matrix), so that every inner loop runs down a column. Each block of NB columns
   is reduced with its updates deferred (latrd: the reflectors V and W with A - V W^T - W V^T
   the updated matrix), then the trailing matrix gets them as two GEMMs of rank NB; what is
   left unblocked is latrd's symv, as LAPACK's. */
#define TN__LA_TRD_NB 32
/* y = A x for the symmetric m x m matrix whose lower triangle a (column-major, leading dim ld)
   holds (dsymv 'L'), each entry read once: column c adds A(c+1:, c) . x into y[c] and
   x[c] A(c+1:, c) into y[c+1:]. Four columns at a time below their 4 x 4 diagonal block, so y
   is loaded and stored once per four columns, the four dots in 4-lane partial sums (plain
   arithmetic in a fixed order, no FMA: the AVX2 copy gives the plain copy's bits). The work is
   split into parts of equal area (column ranges, the first part into y, the others into their
   own partial y [m] each, added after: the parts run on threads, TN__LA_JOB's AVX2 copy). */
typedef struct { const double *a; const double *x; double *y, *yp; int64_t ld, m, nparts; } tn__la_symv;
TN__LA_JOB(tn__la_symv_parts,
    const tn__la_symv *q = (const tn__la_symv *)p;
    const double *TN__RESTRICT x = q->x;
    const int64_t m = q->m, ld = q->ld;
    for (int64_t part = i0; part < i1; part++) {
        /* the columns [c0, c1) of this part: equal shares of the triangle's area m^2 / 2 */
        const int64_t c0 = part == 0 ? 0 : (int64_t)((double)m * (1 - sqrt(1 - (double)part / (double)q->nparts)));
        const int64_t c1 = part + 1 == q->nparts ? m : (int64_t)((double)m * (1 - sqrt(1 - (double)(part + 1) / (double)q->nparts)));
        double *TN__RESTRICT y = part == 0 ? q->y : q->yp + (part - 1) * m;
        for (int64_t r = 0; r < m; r++) y[r] = 0;
        int64_t c = c0;
        for (; c + 4 <= c1; c += 4) {
            const double *TN__RESTRICT a0 = q->a + c * ld, *TN__RESTRICT a1 = a0 + ld, *TN__RESTRICT a2 = a1 + ld, *TN__RESTRICT a3 = a2 + ld;
            const double x0 = x[c], x1 = x[c + 1], x2 = x[c + 2], x3 = x[c + 3];
            double s0[4] = {0, 0, 0, 0}, s1[4] = {0, 0, 0, 0}, s2[4] = {0, 0, 0, 0}, s3[4] = {0, 0, 0, 0};
            /* the diagonal block's lower triangle */
            const double *cols[4] = {a0, a1, a2, a3};
            for (int j = 0; j < 4; j++) {
                const double *col = cols[j], xc = x[c + j];
                double t = col[c + j] * xc;
                for (int64_t r = c + j + 1; r < c + 4; r++) { t += col[r] * x[r]; y[r] += xc * col[r]; }
                y[c + j] += t;
            }
            int64_t r = c + 4;
            for (; r + 4 <= m; r += 4)
                for (int k = 0; k < 4; k++) {
                    const double b0 = a0[r + k], b1 = a1[r + k], b2 = a2[r + k], b3 = a3[r + k], xr = x[r + k];
                    s0[k] += b0 * xr; s1[k] += b1 * xr; s2[k] += b2 * xr; s3[k] += b3 * xr;
                    y[r + k] += (x0 * b0 + x1 * b1) + (x2 * b2 + x3 * b3);
                }
            for (; r < m; r++) {
                const double b0 = a0[r], b1 = a1[r], b2 = a2[r], b3 = a3[r], xr = x[r];
                s0[0] += b0 * xr; s1[0] += b1 * xr; s2[0] += b2 * xr; s3[0] += b3 * xr;
                y[r] += (x0 * b0 + x1 * b1) + (x2 * b2 + x3 * b3);
            }
            y[c] += (s0[0] + s0[1]) + (s0[2] + s0[3]);
            y[c + 1] += (s1[0] + s1[1]) + (s1[2] + s1[3]);
            y[c + 2] += (s2[0] + s2[1]) + (s2[2] + s2[3]);
            y[c + 3] += (s3[0] + s3[1]) + (s3[2] + s3[3]);
        }
        for (; c < c1; c++) {   /* the last (up to 3) columns, one at a time */
            const double *TN__RESTRICT col = q->a + c * ld, xc = x[c];
            double t = 0;
            for (int64_t r = c + 1; r < m; r++) { t += col[r] * x[r]; y[r] += xc * col[r]; }
            y[c] += col[c] * xc + t;
        }
    })
/* ys: m scratch for the second part's partial sums. From m = 160 always two parts, on one
   thread or two: the same bits whatever the thread count. */
static void tn__la_symv_l(const double *a, int64_t ld, int64_t m, const double *x, double *y, double *ys) {
    const int np = m >= 160 && ys ? 2 : 1, nt = np > 1 ? tn__par_threads(2 * m * m, np) : 1;
    tn__la_symv q = {a, x, y, ys, ld, m, np};
    tn__parallel_range(nt, np, tn__la_symv_parts, &q);
    for (int64_t t = 1; t < np; t++)
        for (int64_t r = 0; r < m; r++) y[r] += ys[(t - 1) * m + r];
}
/* dlatrd ('L'): reduces the first nb columns of the m x m trailing matrix a (leading dim ld);
   e, tau: the off-diagonals and reflectors' tau; w [m, nb] column-major; tmp [nb + m]. On return
   a's columns hold the reflectors v_i (A(i + 1, i) = 1 for the update, below it v's tail). */
static void tn__la_latrd_l(double *a, int64_t ld, int64_t m, int64_t nb, double *e, double *tau, double *w, double *tmp) {
#define A_(r, c) a[(c) * ld + (r)]
#define W_(r, c) w[(c) * m + (r)]
    for (int64_t i = 0; i < nb; i++) {
        /* A(i:m, i) -= A(i:m, 0:i) W(i, 0:i)^T + W(i:m, 0:i) A(i, 0:i)^T (two gemv, in LAPACK's order) */
        for (int64_t j = 0; j < i; j++) tn__la_axpy(&A_(i, i), -W_(i, j), &A_(i, j), m - i);
        for (int64_t j = 0; j < i; j++) tn__la_axpy(&A_(i, i), -A_(i, j), &W_(i, j), m - i);
        if (i == m - 1) continue;
        const int64_t len = m - i - 1;
        tau[i] = tn__la_larfg(&A_(i + 1, i), len);   /* H(i) annihilates A(i + 2:m, i) */
        e[i] = A_(i + 1, i);
        A_(i + 1, i) = 1;
        const double *v = &A_(i + 1, i);
        double *wi = &W_(i + 1, i);
        tn__la_symv_l(&A_(i + 1, i + 1), ld, len, v, wi, tmp + nb);
        for (int64_t j = 0; j < i; j++) tmp[j] = tn__la_dot(&W_(i + 1, j), v, len);
        for (int64_t j = 0; j < i; j++) tn__la_axpy(wi, -tmp[j], &A_(i + 1, j), len);
        for (int64_t j = 0; j < i; j++) tmp[j] = tn__la_dot(&A_(i + 1, j), v, len);
        for (int64_t j = 0; j < i; j++) tn__la_axpy(wi, -tmp[j], &W_(i + 1, j), len);
        for (int64_t r = 0; r < len; r++) wi[r] *= tau[i];
        tn__la_axpy(wi, -0.5 * tau[i] * tn__la_dot(wi, v, len), v, len);
    }
#undef W_
#undef A_
}
/* dsytrd ('L') of the n x n symmetric a (column-major; both triangles hold it): the
   tridiagonal's diagonal d [n] and off-diagonal e [n - 1], the reflectors in a's columns below
   the subdiagonal, their tau [n - 1]; w [n * NB + NB + n] scratch. Returns -1 when the GEMM could
   not allocate its buffers. */
static int tn__la_sytrd_l(double *a, int64_t n, double *d, double *e, double *tau, double *w) {
    for (int64_t i = 0; i < n - 1; i += TN__LA_TRD_NB) {
        const int64_t ib = n - 1 - i < TN__LA_TRD_NB ? n - 1 - i : TN__LA_TRD_NB, m = n - i, r = m - ib;
        double *ai = a + i * n + i;
        tn__la_latrd_l(ai, n, m, ib, e + i, tau + i, w, w + m * ib);
        /* the trailing A(ib:m, ib:m) -= V W^T + W V^T, V = A(ib:m, 0:ib) (dsyr2k): its lower
           triangle, a block column of 64 at a time (from here on only it is read) */
        double *c = ai + ib * n + ib;
        for (int64_t c0 = 0; c0 < r; c0 += 64) {
            const int64_t cw = r - c0 < 64 ? r - c0 : 64;
            if (tn__gemm_f64(r - c0, cw, ib, -1.0, ai + ib + c0, 1, n, w + ib + c0, m, 1, 1.0, c + c0 * n + c0, 1, n) ||
                tn__gemm_f64(r - c0, cw, ib, -1.0, w + ib + c0, 1, m, ai + ib + c0, n, 1, 1.0, c + c0 * n + c0, 1, n))
                return -1;
        }
        for (int64_t j = i; j < i + ib; j++) { a[j * n + j + 1] = e[j]; d[j] = a[j * n + j]; }
    }
    d[n - 1] = a[(n - 1) * n + n - 1];
    return 0;
}
/* dlae2: the eigenvalues rt1 (larger in magnitude), rt2 of [a b; b c]. */
static void tn__la_lae2(double a, double b, double c, double *rt1, double *rt2) {
    const double sm = a + c, adf = fabs(a - c), ab = fabs(b + b);
    const double acmx = fabs(a) > fabs(c) ? a : c, acmn = fabs(a) > fabs(c) ? c : a;
    const double rt = adf > ab ? adf * sqrt(1 + (ab / adf) * (ab / adf)) : adf < ab ? ab * sqrt(1 + (adf / ab) * (adf / ab)) : ab * sqrt(2.0);
    if (sm < 0) { *rt1 = 0.5 * (sm - rt); *rt2 = (acmx / *rt1) * acmn - (b / *rt1) * b; }
    else if (sm > 0) { *rt1 = 0.5 * (sm + rt); *rt2 = (acmx / *rt1) * acmn - (b / *rt1) * b; }
    else { *rt1 = 0.5 * rt; *rt2 = -0.5 * rt; }
}
/* dsterf: the eigenvalues alone of the symmetric tridiagonal (d [n], e [n - 1], e[i] coupling
   i and i + 1; both overwritten, d unsorted), by the Pal-Walker-Kahan QL / QR iteration on the
   squared off-diagonals: no square root in the inner loop (tql2's rotations need two per
   entry), QL or QR as the block's ends suggest, blocks scaled into the safe range. Returns 0,
   or -1 when 30 n sweeps did not converge. */
static int tn__la_sterf(double *d, double *e, int64_t n) {
    const double eps = DBL_EPSILON / 2, eps2 = eps * eps, safmin = DBL_MIN;
    const double ssfmax = sqrt(1 / safmin) / 3, ssfmin = sqrt(safmin) / eps2;
    const int64_t nmaxit = 30 * n;
    int64_t jtot = 0, l1 = 0;
    while (l1 < n) {
        if (l1 > 0) e[l1 - 1] = 0;
        int64_t m = l1;
        for (; m < n - 1; m++)
            if (fabs(e[m]) <= (sqrt(fabs(d[m])) * sqrt(fabs(d[m + 1]))) * eps) { e[m] = 0; break; }
        int64_t l = l1, lend = m;
        const int64_t lsv = l, lendsv = lend;
        l1 = m + 1;
        if (lend == l) continue;
        double anorm = 0, scale = 1;   /* dlanst 'M' of the block, and its scaling */
        for (int64_t i = l; i <= lend; i++) anorm = fmax(anorm, fabs(d[i]));
        for (int64_t i = l; i < lend; i++) anorm = fmax(anorm, fabs(e[i]));
        if (anorm == 0) continue;
        if (!(anorm <= DBL_MAX)) return -1;   /* (non-finite) */
        if (anorm > ssfmax) scale = ssfmax / anorm;
        else if (anorm < ssfmin) scale = ssfmin / anorm;
        if (scale != 1) {
            for (int64_t i = l; i <= lend; i++) d[i] *= scale;
            for (int64_t i = l; i < lend; i++) e[i] *= scale;
        }
        for (int64_t i = l; i < lend; i++) e[i] *= e[i];
        if (fabs(d[lend]) < fabs(d[l])) { lend = lsv; l = lendsv; }
        if (lend >= l) {   /* QL */
            while (l <= lend) {
                for (m = l; m < lend; m++) if (fabs(e[m]) <= eps2 * fabs(d[m] * d[m + 1])) break;
                if (m < lend) e[m] = 0;
                double p = d[l];
                if (m == l) { d[l] = p; l++; continue; }
                if (m == l + 1) {
                    tn__la_lae2(d[l], sqrt(e[l]), d[l + 1], &d[l], &d[l + 1]);
                    e[l] = 0;
                    l += 2;
                    continue;
                }
                if (jtot == nmaxit) break;
                jtot++;
                const double rte = sqrt(e[l]);
                double sigma = (d[l + 1] - p) / (2 * rte), r = tn__la_hypot(sigma, 1);
                sigma = p - rte / (sigma + copysign(r, sigma));
                double c = 1, sn = 0, gamma = d[m] - sigma;
                p = gamma * gamma;
                for (int64_t i = m - 1; i >= l; i--) {
                    const double bb = e[i];
                    r = p + bb;
                    if (i != m - 1) e[i + 1] = sn * r;
                    const double oldc = c, oldgam = gamma, alpha = d[i];
                    c = p / r;
                    sn = bb / r;
                    gamma = c * (alpha - sigma) - sn * oldgam;
                    d[i + 1] = oldgam + (alpha - gamma);
                    p = c != 0 ? (gamma * gamma) / c : oldc * bb;
                }
                e[l] = sn * p;
                d[l] = sigma + gamma;
            }
        } else {           /* QR */
            while (l >= lend) {
                for (m = l; m > lend; m--) if (fabs(e[m - 1]) <= eps2 * fabs(d[m] * d[m - 1])) break;
                if (m > lend) e[m - 1] = 0;
                double p = d[l];
                if (m == l) { d[l] = p; l--; continue; }
                if (m == l - 1) {
                    tn__la_lae2(d[l], sqrt(e[l - 1]), d[l - 1], &d[l], &d[l - 1]);
                    e[l - 1] = 0;
                    l -= 2;
                    continue;
                }
                if (jtot == nmaxit) break;
                jtot++;
                const double rte = sqrt(e[l - 1]);
                double sigma = (d[l - 1] - p) / (2 * rte), r = tn__la_hypot(sigma, 1);
                sigma = p - rte / (sigma + copysign(r, sigma));
                double c = 1, sn = 0, gamma = d[m] - sigma;
                p = gamma * gamma;
                for (int64_t i = m; i <= l - 1; i++) {
                    const double bb = e[i];
                    r = p + bb;
                    if (i != m) e[i - 1] = sn * r;
                    const double oldc = c, oldgam = gamma, alpha = d[i + 1];
                    c = p / r;
                    sn = bb / r;
                    gamma = c * (alpha - sigma) - sn * oldgam;
                    d[i] = oldgam + (alpha - gamma);
                    p = c != 0 ? (gamma * gamma) / c : oldc * bb;
                }
                e[l - 1] = sn * p;
                d[l] = sigma + gamma;
            }
        }
        if (scale != 1) {
            const int64_t lo = lsv < lendsv ? lsv : lendsv, hi = lsv < lendsv ? lendsv : lsv;
            for (int64_t i = lo; i <= hi; i++) d[i] /= scale;
        }
        if (jtot >= nmaxit) {
            for (int64_t i = 0; i < n - 1; i++) if (e[i] != 0) return -1;
            return 0;
        }
    }
    return 0;
}
/* v [n, n] row-major holds a symmetric matrix: on return its columns are the eigenvectors
   (with `vectors`) and d the eigenvalues, ascending; e [n], rot [2 n] and wt [n, n] are scratch. Returns
   0, -1 when QL did not converge, -2 out of memory. */
static int tn__la_sytrd_tql2(double *v, double *d, double *e, double *wt, double *rot, int64_t n, bool vectors) {
    if (n == 0) return 0;
    /* tridiagonal (d, e[1..]: e[i] couples i - 1 and i, EISPACK's), Q = H(0) ... H(n-2) */
    if (tn__la_sytrd_l(v, n, d, e + 1, rot, wt)) return -2;
    e[0] = 0;
    if (!vectors) {   /* the values alone: dsterf, as LAPACK's dsyevd / dsyev without vectors */
        if (tn__la_sterf(d, e + 1, n)) return -1;
        for (int64_t i = 1; i < n; i++) {   /* ascending (insertion: nearly sorted already) */
            const double t = d[i];
            int64_t j = i;
            for (; j > 0 && d[j - 1] > t; j--) d[j] = d[j - 1];
            d[j] = t;
        }
        return 0;
    }
    if (vectors) {
        /* Q = diag(1, Q'), Q' the (n-1) x (n-1) orgqr of the reflectors (v's columns 0..n-2 from
           row 1: packed to leading dim n-1 in place, then dorg2r's threaded loop) into wt, as
           its transpose's rows: wt is Q column-major, QL's V^T row-major */
        const int64_t m = n - 1;
        for (int64_t j = 0; j < m; j++) memmove(v + j * m, v + j * n + 1, (size_t)m * sizeof(double));
        tn__la_org2r_t(v, m, m, rot, wt, m);
        for (int64_t c = m - 1; c >= 0; c--) memmove(wt + (c + 1) * n + 1, wt + c * m, (size_t)m * sizeof(double));
        for (int64_t c = 1; c < n; c++) wt[c * n] = 0;
        for (int64_t r = 0; r < n; r++) wt[r] = r == 0;
    }
    /* implicit QL on the tridiagonal (d, e), rotating the rows of wt = V^T (contiguous) */
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
                double g = d[l], p = (d[l + 1] - g) / (2 * e[l]), r = tn__la_hypot(p, 1);
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
                    r = tn__la_hypot(p, e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    rot[i] = c;
                    rot[n + i] = s;
                }
                if (vectors) {
                    tn__la_qlrots r = {wt, rot, rot + n, l, m, n};
                    tn__parallel_range(tn__par_threads(6 * (m - l) * n, n), n, tn__la_qlrots_part, &r);
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
    return status;
}
/* tn__la_eigh_raw on the device (A's dtype; the values real): the entry reads the lower
   triangle of its column-major matrices, which is A's lower one, or (a row-major copy: A^T)
   A's upper one; complex: of conj(A), A^H column-major, whose lower triangle read as
   Hermitian is A's upper one's matrix (A^T's would be its conjugate, the vectors conjugated) */
static int tn__la_eigh_dev(tn_tensor *A, bool upper, bool vectors, tn_tensor **L, tn_tensor **V, const char *fn) {
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A), s[3] = {B, n, n};
    tn_tensor *cm = upper ? tn_reshape(tn_clone(tn_is_complex(A) ? tn_conj(tn_detach(A)) : tn_detach(A)), s, 3) : tn__la_cm(A);
    tn_tensor *w = tn__la_dnew(tn_dtype_to_real(A->dtype), A, B, n, 0, 2), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1);
    if (!cm || !w || !f || tn__la_run(TN_LA_SYEVD, cm, w, NULL, NULL, f, vectors)) return -1;
    if (tn__la_info_error(fn, tn__la_unbatch(f, A, 0), "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: %d)."))
        return -1;
    *L = tn__la_unbatch(w, A, 1);
    if (vectors) *V = tn__la_uncm(cm, A, n, n);
    return *L && (!vectors || *V) ? 0 : -1;
}
/* Eigenvalues L [..., n] and (vectors) V [..., n, n] of the symmetric matrices whose lower
   (upper) triangle A holds; float64 without history. */
static int tn__la_eigh_raw(tn_tensor *A, bool upper, bool vectors, tn_tensor **L, tn_tensor **V, const char *fn) {
    if (A->device != TN_CPU) return tn__la_eigh_dev(A, upper, vectors, L, V, fn);
    tn_tensor *w = tn__la_work(A);
    if (!w) return -1;
    const int nd = A->ndim;
    const int64_t n = A->shape[nd - 1], B = tn__la_batch(A);
    tn_tensor *l = tn__own(tn__new(TN_F64, TN_CPU, A->shape, nd - 1));
    double *s = (double *)TN_MALLOC((size_t)(n * n + 4 * n + 1) * sizeof(double));
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
        bad = tn__la_sytrd_tql2(ab, lv + b * n, e, s, e + 2 * n, n, vectors);
    }
    TN_FREE(s);
    if (bad == -2) return TN__FAIL_INT("%s: out of memory", fn);
    if (bad == -2) return TN__FAIL_INT("%s: out of memory", fn);
    if (bad) return TN__FAIL_INT("%s: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues", fn);
    *L = l;
    if (vectors) *V = w;
    return 0;
}

/* ---- SVD: Golub-Kahan bidiagonalisation + implicit-shift QR (Golub-Reinsch) ---- */
/* float32's squares in float64 can neither overflow nor underflow: tn__la_hypot's plain formula. */
static float tn__la_hypot_f(float a, float b) { return (float)sqrt((double)a * a + (double)b * b); }
/* The QR sweeps' rotations are queued (tn__la_bdsqr) and applied to U's and V's rows a chunk
   of columns at a time: the chunk's rows are copied to a packed buffer (rows of TN__LA_RCB
   bytes, contiguous: a block of columns from rows m apart would sit in a few cache sets
   when m is a power of 2), the queued sweeps run down it two at a time with the rows that
   rotations j and j + 1 share held in registers (each element loaded and stored once per
   two sweeps), and it goes back. Each column sees the multiplications and additions
   that rotating whole rows one rotation at a time does, in the same order: the same bits
   for any chunking, thread count or instruction set. The SIMD kernels use the intrinsics'
   separate multiply and add; the empty asm keeps a compiler that contracts (-std=gnu11's
   -ffp-contract=fast) from fusing them into an FMA. Measured (a 512 bidiagonal's 234 M
   element rotations, float64, one thread, AVX-512): 44 -> 26 ms; the rotation is four
   multiplies an element, and AVX-512 multiplies twice AVX2's lanes on that CPU. */
#define TN__LA_RCB 256
#define TN__LA_RQ 128   /* sweeps queued at most */
typedef struct { int64_t l, k, off; } tn__la_sweep;   /* a queued sweep: rotations [l, k); l == k: negate V's row k */
#ifdef TN__LA_AVX2
/* NV vectors of columns from x [*, TN__LA_RCB / sizeof(T)]: rotv runs rotations 0 .. nr-1
   (rows j, j+1 by c[j], s[j]); rotv2 two sweeps in one pass down rows 0 .. nr, A's
   rotations [la, ka) by ca[j - la], then B's [lb, kb): each stage holds one row, the row
   before its input, so B turns rows j, j+1 right after A's rotation j + 1 has finished row
   j + 1 (half the passes over the chunk). */
/* @template TN__LA_ROTV(T, S, ISA, VT, VW, NV, LDV, STV, SET1, MUL, ADD, SUB) */
__attribute__((target(ISA))) static void tn__la_rotv##S(T *x, int64_t nr, const T *c, const T *s) {
    const int64_t ld = TN__LA_RCB / (int64_t)sizeof(T);
    VT a[NV];
    for (int q = 0; q < NV; q++) a[q] = LDV(x + q * VW);
    for (int64_t j = 0; j < nr; j++) {
        T *xo = x + j * ld;
        const T *y = xo + ld;
        const VT cj = SET1(c[j]), sj = SET1(s[j]);
        for (int q = 0; q < NV; q++) {
            VT v = LDV(y + q * VW), p0 = MUL(cj, a[q]), p1 = MUL(sj, v), p2 = MUL(cj, v), p3 = MUL(sj, a[q]);
            __asm__("" : "+v"(p0), "+v"(p1), "+v"(p2), "+v"(p3));
            STV(xo + q * VW, ADD(p0, p1));
            a[q] = SUB(p2, p3);
        }
    }
    for (int q = 0; q < NV; q++) STV(x + nr * ld + q * VW, a[q]);
}
__attribute__((target(ISA))) static void tn__la_rotv2##S(T *x, int64_t nr, int64_t la, int64_t ka, const T *ca, const T *sa,
                                                         int64_t lb, int64_t kb, const T *cb, const T *sb) {
    const int64_t ld = TN__LA_RCB / (int64_t)sizeof(T);
    VT a[NV], b[NV], o[NV];
    for (int q = 0; q < NV; q++) b[q] = o[q] = a[q] = LDV(x + q * VW);   /* b, o: set at row 1 (for the compiler) */
    for (int64_t r = 1; r <= nr + 1; r++) {
        /* A: input row r (past nr: none), its carry row r - 1 out to o */
        if (r <= nr && r - 1 >= la && r - 1 < ka) {
            const T *y = x + r * ld;
            const VT cj = SET1(ca[r - 1 - la]), sj = SET1(sa[r - 1 - la]);
            for (int q = 0; q < NV; q++) {
                VT v = LDV(y + q * VW), p0 = MUL(cj, a[q]), p1 = MUL(sj, v), p2 = MUL(cj, v), p3 = MUL(sj, a[q]);
                __asm__("" : "+v"(p0), "+v"(p1), "+v"(p2), "+v"(p3));
                o[q] = ADD(p0, p1);
                a[q] = SUB(p2, p3);
            }
        } else
            for (int q = 0; q < NV; q++) { o[q] = a[q]; if (r <= nr) a[q] = LDV(x + r * ld + q * VW); }
        if (r == 1) { for (int q = 0; q < NV; q++) b[q] = o[q]; continue; }
        /* B: input row r - 1 (o), its carry row r - 2 stored */
        T *xo = x + (r - 2) * ld;
        if (r - 2 >= lb && r - 2 < kb) {
            const VT cj = SET1(cb[r - 2 - lb]), sj = SET1(sb[r - 2 - lb]);
            for (int q = 0; q < NV; q++) {
                VT p0 = MUL(cj, b[q]), p1 = MUL(sj, o[q]), p2 = MUL(cj, o[q]), p3 = MUL(sj, b[q]);
                __asm__("" : "+v"(p0), "+v"(p1), "+v"(p2), "+v"(p3));
                STV(xo + q * VW, ADD(p0, p1));
                b[q] = SUB(p2, p3);
            }
        } else
            for (int q = 0; q < NV; q++) { STV(xo + q * VW, b[q]); b[q] = o[q]; }
    }
    for (int q = 0; q < NV; q++) STV(x + nr * ld + q * VW, b[q]);
}
/* @end TN__LA_ROTV */
/* AVX-512: a chunk's row in one call (4 vectors); AVX2: 2 vectors a call (16 registers) */
TN__LA_ROTV(double, _avx512, "avx512f", __m512d, 8, 4, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_mul_pd, _mm512_add_pd, _mm512_sub_pd)
TN__LA_ROTV(float, _f_avx512, "avx512f", __m512, 16, 4, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_mul_ps, _mm512_add_ps, _mm512_sub_ps)
TN__LA_ROTV(double, _avx2, "avx2", __m256d, 4, 2, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd, _mm256_sub_pd)
TN__LA_ROTV(float, _f_avx2, "avx2", __m256, 8, 2, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_mul_ps, _mm256_add_ps, _mm256_sub_ps)
#endif
/* The SVD's kernels for float64 (S none) and float32 (_f); EPS and TMIN are the type's
   epsilon and smallest normal. */
#define TN__LA_BRD_NB 32    /* gebrd's panel: nb columns and rows a block */
#define TN__LA_BRD_NX 128   /* and the unblocked gebd2 for the last NX columns (LAPACK's crossover) */
/* the real SVD's blocks (tests shrink them to reach every block edge on small matrices):
   gebrd's panels of brd_nb while more than brd_nx columns remain; orgqr_t's blocks of
   org_nb reflectors from org_nx reflectors and columns (measured, 1 thread: blocked Q and P
   5-12 % faster from 96 to 160; gebrd about even below 128, LAPACK's crossover kept) */
TN__TESTABLE int64_t tn__la_brd_nb = TN__LA_BRD_NB, tn__la_brd_nx = TN__LA_BRD_NX, tn__la_org_nb = 32, tn__la_org_nx = 96;
/* gebd2's and gebrd's passes over the trailing matrix (2 a step, each a matrix-vector product
   or its rank-1 update) split between threads only from this many elements (rows x columns):
   one job per pass costs more than it saves below (measured: svdvals 512 x 512 at 2 threads
   took 1.5x its 1-thread time with the passes split, the same time without) */
TN__TESTABLE int64_t tn__la_brd_pmin = (int64_t)1 << 20;
/* the real SVD's GEMM by the template's suffix (S none: float64, _f: float32) */
#define tn__la_gemm tn__gemm_f64
#define tn__la_gemm_f tn__gemm_f32
/* @template TN__LA_SVD(T, S, DOT, EPS, TMIN) */
/* The rotations of a packed chunk x [nr + 1, TN__LA_RCB / sizeof(T)] (see TN__LA_ROTV): the
   widest kernel this CPU runs, else the same operations in plain C. */
static void tn__la_rotk##S(T *x, int64_t nr, const T *c, const T *s) {
    enum { CW = TN__LA_RCB / (int)sizeof(T) };
#ifdef TN__LA_AVX2
    const int isa = tn__gemm_isa();
    if (isa >= TN__GEMM_AVX512) { tn__la_rotv##S##_avx512(x, nr, c, s); return; }
    if (isa >= TN__GEMM_AVX2) { for (int o = 0; o < CW; o += CW / 4) tn__la_rotv##S##_avx2(x + o, nr, c, s); return; }
#endif
    T a[CW];
    memcpy(a, x, sizeof a);
    for (int64_t j = 0; j < nr; j++) {
        T *xo = x + j * CW;
        const T *y = xo + CW, cj = c[j], sj = s[j];
        for (int q = 0; q < CW; q++) { const T u = a[q], v = y[q]; xo[q] = cj * u + sj * v; a[q] = cj * v - sj * u; }
    }
    memcpy(x + nr * CW, a, sizeof a);
}
/* Two sweeps, A's rotations [la, ka) then B's [lb, kb), on rows 0 .. nr of the chunk: in one
   pass where there is a SIMD kernel, else one after the other. */
static void tn__la_rotk2##S(T *x, int64_t nr, int64_t la, int64_t ka, const T *ca, const T *sa, int64_t lb, int64_t kb, const T *cb, const T *sb) {
    enum { CW = TN__LA_RCB / (int)sizeof(T) };
#ifdef TN__LA_AVX2
    const int isa = tn__gemm_isa();
    if (isa >= TN__GEMM_AVX512) { tn__la_rotv2##S##_avx512(x, nr, la, ka, ca, sa, lb, kb, cb, sb); return; }
    if (isa >= TN__GEMM_AVX2) { for (int o = 0; o < CW; o += CW / 4) tn__la_rotv2##S##_avx2(x + o, nr, la, ka, ca, sa, lb, kb, cb, sb); return; }
#endif
    (void)nr;
    tn__la_rotk##S(x + la * CW, ka - la, ca, sa);
    tn__la_rotk##S(x + lb * CW, kb - lb, cb, sb);
}
/* The queued sweeps q [ns] (rows r0 .. r1 in all), applied to the chunks of columns: V's
   (vt [*, n]) nvc chunks, then U's (ut [*, m]). Sweep t's values at cs + off: V's c, s
   then U's c, s, (k - l) each (LAPACK's dbdsqr also applies a sweep's rotations after it,
   with dlasr). Each thread packs its own chunks; without the buffer it rotates them in
   place, row pair by row pair (slower, the same bits). */
typedef struct { T *ut, *vt; const T *cs; const tn__la_sweep *q; int64_t ns, r0, r1, m, n, nvc; } tn__la_rots##S##_t;
static void tn__la_rots_part##S(void *p, int64_t i0, int64_t i1) {
    const tn__la_rots##S##_t *r = (const tn__la_rots##S##_t *)p;
    const int64_t cw = TN__LA_RCB / (int64_t)sizeof(T), r0 = r->r0, rows = r->r1 - r0 + 1;
    T *pk = (T *)TN_MALLOC((size_t)(rows * cw) * sizeof(T));
    for (int64_t i = i0; i < i1; i++) {
        const bool isv = i < r->nvc;
        T *x = isv ? r->vt : r->ut;
        const int64_t ld = isv ? r->n : r->m, c0 = (isv ? i : i - r->nvc) * cw, w = ld - c0 < cw ? ld - c0 : cw;
        if (pk)
            for (int64_t j = 0; j < rows; j++) {
                memcpy(pk + j * cw, x + (r0 + j) * ld + c0, (size_t)w * sizeof(T));
                for (int64_t q = w; q < cw; q++) pk[j * cw + q] = 0;   /* padding: rotated, never stored */
            }
        for (int64_t t = 0; t < r->ns; t++) {
            const int64_t l = r->q[t].l, k = r->q[t].k;
            if (l == k) {   /* d[k] < 0: V's row k negated, after the rotations queued before */
                T *z = pk ? pk + (k - r0) * cw : x + k * ld + c0;
                if (isv) for (int64_t q = 0; q < w; q++) z[q] = -z[q];
                continue;
            }
            const T *c = r->cs + r->q[t].off + (isv ? 0 : 2 * (k - l)), *s = c + (k - l);
            if (!pk) {
                for (int64_t j = l; j < k; j++) tn__la_rot##S(x + j * ld + c0, x + (j + 1) * ld + c0, c[j - l], s[j - l], w);
                continue;
            }
            const int64_t l2 = t + 1 < r->ns ? r->q[t + 1].l : 0, k2 = t + 1 < r->ns ? r->q[t + 1].k : 0;
            if (l2 == k2) { tn__la_rotk##S(pk + (l - r0) * cw, k - l, c, s); continue; }
            /* the next is a sweep too: both in one pass over their rows */
            const T *c2 = r->cs + r->q[t + 1].off + (isv ? 0 : 2 * (k2 - l2)), *s2 = c2 + (k2 - l2);
            const int64_t lo = l < l2 ? l : l2, hi = k > k2 ? k : k2;
            tn__la_rotk2##S(pk + (lo - r0) * cw, hi - lo, l - lo, k - lo, c, s, l2 - lo, k2 - lo, c2, s2);
            t++;
        }
        if (pk) for (int64_t j = 0; j < rows; j++) memcpy(x + (r0 + j) * ld + c0, pk + j * cw, (size_t)w * sizeof(T));
    }
    TN_FREE(pk);
}
/* Applies and empties the queue q [*ns] (*used values in cs), the chunks split between threads. */
static void tn__la_rots_flush##S(T *ut, int64_t m, T *vt, int64_t nv, const T *cs, const tn__la_sweep *q, int64_t *ns, int64_t *used) {
    if (*ns == 0) return;
    const int64_t cw = TN__LA_RCB / (int64_t)sizeof(T), nvc = (nv + cw - 1) / cw, items = nvc + (m + cw - 1) / cw;
    int64_t r0 = q[0].l, r1 = q[0].k;
    for (int64_t t = 1; t < *ns; t++) { r0 = q[t].l < r0 ? q[t].l : r0; r1 = q[t].k > r1 ? q[t].k : r1; }
    tn__la_rots##S##_t r = {ut, vt, cs, q, *ns, r0, r1, m, nv, nvc};
    tn__parallel_range(tn__par_threads(tn__mul_sat(6 * (*used / 4) + 2 * (r1 - r0 + 1), m + nv), items), items, tn__la_rots_part##S, &r);
    *ns = *used = 0;
}
/* gebd2's passes over the trailing rows, split between threads: w[c0, c1) += v_i a_i (rows
   i0.., columns split), and each row's updates (rows split). */
typedef struct { T *a, *w; const T *v, *u; T tq, tp; int64_t n, j, nc, m; } tn__la_bd##S##_t;
TN__LA_JOB(tn__la_bd_w##S,   /* columns i0..i1-1 */
    const tn__la_bd##S##_t *q = (const tn__la_bd##S##_t *)p;
    memset(q->w + i0, 0, (size_t)(i1 - i0) * sizeof(T));
    for (int64_t i = q->j; i < q->m; i++) tn__la_axpy##S(q->w + i0, q->v[i - q->j], q->a + i * q->n + q->j + 1 + i0, i1 - i0);)
TN__LA_JOB(tn__la_bd_rows##S,
    const tn__la_bd##S##_t *q = (const tn__la_bd##S##_t *)p;
    const T tq = q->tq, tp = q->tp, *v = q->v, *u = q->u, *w = q->w;
    const int64_t nc = q->nc;
    for (int64_t i = q->j + 1 + i0; i < q->j + 1 + i1; i++) {
        T *row = q->a + i * q->n + q->j + 1;
        if (tq != 0) tn__la_axpy##S(row, -tq * v[i - q->j], w, nc);
        if (tp != 0) {
            T du;
            DOT(du, row, u, nc);
            tn__la_axpy##S(row, -tp * du, u, nc);
        }
    })
/* a [m, n] row-major, m >= n >= 1, is reduced to the upper bidiagonal (d [n], e [n-1]):
   a = Q B P^T. The reflectors of Q are kept as the rows of hl [n, m] (row j from entry j, as
   geqr2_t's) with tauq, those of P (acting on coordinates 1..n-1) as the rows of hr [n-1,
   n-1] with taup. w [n] is scratch. Two passes over the trailing matrix per step, both
   along its rows: the left reflector's w = v^T A, then one pass that applies it and the
   right reflector (A u and the rank-1 update) to each row while the row is in cache. Starts
   at column j0 (the columns before it reduced: gebrd##S's panels). */
static void tn__la_gebd2##S(T *a, int64_t m, int64_t n, T *d, T *e, T *hl, T *tauq, T *hr, T *taup, T *w, int64_t j0) {
    for (int64_t j = j0; j < n; j++) {
        T *v = hl + j * m + j, *u = j + 1 < n ? hr + j * (n - 1) + j : NULL;
        const int64_t len = m - j, nc = n - j - 1;
        for (int64_t i = j; i < m; i++) v[i - j] = a[i * n + j];
        const T tq = tn__la_larfg##S(v, len);
        d[j] = v[0];
        tauq[j] = tq;
        v[0] = 1;
        if (nc == 0) break;
        tn__la_bd##S##_t q = {a, w, v, u, tq, 0, n, j, nc, m};
        const int nt = (m - j) * nc < tn__la_brd_pmin ? 1 : tn__par_threads(4 * (m - j) * nc, nc < m - j - 1 ? nc : m - j - 1);
        if (tq != 0) {
            tn__parallel_range(nt, nc, tn__la_bd_w##S, &q);
            tn__la_axpy##S(a + j * n + j + 1, -tq, w, nc);
        }
        memcpy(u, a + j * n + j + 1, (size_t)nc * sizeof(T));
        q.tp = tn__la_larfg##S(u, nc);
        e[j] = u[0];
        taup[j] = q.tp;
        u[0] = 1;
        tn__parallel_range(nt, m - j - 1, tn__la_bd_rows##S, &q);
    }
}
/* gebrd's second pass: w[r - j - 1] = sum_c a[r, c] u[c] (rows j+1.., columns j+1..; rows
   split), A u read-only (the updates wait for the panel's GEMMs) */
TN__LA_JOB(tn__la_bd_au##S,
    const tn__la_bd##S##_t *q = (const tn__la_bd##S##_t *)p;
    for (int64_t i = q->j + 1 + i0; i < q->j + 1 + i1; i++) {
        T t;
        DOT(t, q->a + i * q->n + q->j + 1, q->u, q->nc);
        q->w[i - q->j - 1] = t;
    })
/* gebd2##S blocked (dgebrd / dlabrd), the real form of the complex gebrd (tn__la_gebrd_c, see
   there for the panel's formulas; no conjugates here): a panel of NB steps reads the trailing
   matrix A0 as it was at the panel's start, each step's column and row brought up to date
   from the panel's vectors (yh_i = tq v^T A, x_i = tp A u), then A0 -= V Yh + X U^T for the
   rest by two GEMMs. The last NX columns, and matrices of no more: gebd2##S (the same bits as
   before for those). NB, NX: tn__la_brd_nb, tn__la_brd_nx. w [m] scratch; returns -1 when
   out of memory. */
typedef struct { T *a, *hl, *tauq, *hr, *taup, *w, *yh, *xs, *cs, *d, *e; int64_t m, n, j0, nb; } tn__la_brd##S##_t;
TN__LA_JOB(tn__la_brd_panel##S,
    (void)i0; (void)i1;
    const tn__la_brd##S##_t *bp = (const tn__la_brd##S##_t *)p;
    T *a = bp->a, *hl = bp->hl, *hr = bp->hr, *w = bp->w, *yh = bp->yh, *xs = bp->xs, *cs = bp->cs;
    const int64_t m = bp->m, n = bp->n, j0 = bp->j0, nb = bp->nb;
    for (int64_t l = 0; l < nb; l++) {
        const int64_t i = j0 + l, len = m - i, nc = n - i - 1;
        T *v = hl + i * m + i, *u = hr + i * (n - 1) + i, *y = yh + l * n + i + 1, *x = xs + l * m + i + 1;
        /* column i as it stands: A0's less the panel's earlier v_q yh_q and x_q u_q^T */
        for (int64_t r = i; r < m; r++) v[r - i] = a[r * n + i];
        for (int64_t q = 0; q < l; q++) {
            tn__la_axpy##S(v, -yh[q * n + i], hl + (j0 + q) * m + i, len);
            tn__la_axpy##S(v, -hr[(j0 + q) * (n - 1) + i - 1], xs + q * m + i, len);
        }
        const T tq = tn__la_larfg##S(v, len);
        bp->d[i] = v[0];
        bp->tauq[i] = tq;
        v[0] = 1;
        const int nt = len * nc < tn__la_brd_pmin ? 1 : tn__par_threads(4 * len * nc, nc < len - 1 ? nc : len - 1);
        tn__la_bd##S##_t pq = {a, w, v, u, tq, 0, n, i, nc, m};
        if (tq != 0) {   /* yh_i = tq (v^T A0 - sum_q (v^T v_q) yh_q - (v^T x_q) u_q^T) */
            tn__parallel_range(nt, nc, tn__la_bd_w##S, &pq);
            for (int64_t q = 0; q < l; q++) {
                DOT(cs[q], v, hl + (j0 + q) * m + i, len);
                DOT(cs[nb + q], v, xs + q * m + i, len);
            }
            memcpy(y, w, (size_t)nc * sizeof(T));
            for (int64_t q = 0; q < l; q++) {
                tn__la_axpy##S(y, -cs[q], yh + q * n + i + 1, nc);
                tn__la_axpy##S(y, -cs[nb + q], hr + (j0 + q) * (n - 1) + i, nc);
            }
            for (int64_t c = 0; c < nc; c++) y[c] *= tq;
        } else memset(y, 0, (size_t)nc * sizeof(T));
        /* row i as it stands (v_i's entry i is 1) */
        memcpy(u, a + i * n + i + 1, (size_t)nc * sizeof(T));
        for (int64_t q = 0; q <= l; q++) {
            tn__la_axpy##S(u, -hl[(j0 + q) * m + i], yh + q * n + i + 1, nc);
            if (q < l) tn__la_axpy##S(u, -xs[q * m + i], hr + (j0 + q) * (n - 1) + i, nc);
        }
        const T tp = tn__la_larfg##S(u, nc);
        bp->e[i] = u[0];
        bp->taup[i] = tp;
        u[0] = 1;
        if (tp != 0) {   /* x_i = tp (A0 u - sum_q v_q (yh_q u) - x_q (u_q^T u)), rows i+1.. */
            tn__parallel_range(nt, len - 1, tn__la_bd_au##S, &pq);
            for (int64_t q = 0; q <= l; q++) {
                DOT(cs[q], yh + q * n + i + 1, u, nc);
                if (q < l) DOT(cs[nb + q], hr + (j0 + q) * (n - 1) + i, u, nc);
            }
            memcpy(x, w, (size_t)(len - 1) * sizeof(T));
            for (int64_t q = 0; q <= l; q++) {
                tn__la_axpy##S(x, -cs[q], hl + (j0 + q) * m + i + 1, len - 1);
                if (q < l) tn__la_axpy##S(x, -cs[nb + q], xs + q * m + i + 1, len - 1);
            }
            for (int64_t r = 0; r < len - 1; r++) x[r] *= tp;
        } else memset(x, 0, (size_t)(len - 1) * sizeof(T));
    })
static int tn__la_gebrd##S(T *a, int64_t m, int64_t n, T *d, T *e, T *hl, T *tauq, T *hr, T *taup, T *w) {
    const int64_t nb = tn__la_brd_nb, nx = tn__la_brd_nx > nb ? tn__la_brd_nx : nb;   /* a panel's steps need a column past them */
    int64_t j0 = 0;
    if (n > nx) {
        /* yh [nb, n] (absolute columns), xs [nb, m] (absolute rows), cs [2 nb] */
        T *yh = (T *)TN_MALLOC((size_t)(nb * n + nb * m + 2 * nb) * sizeof(T));
        if (!yh) return -1;
        T *xs = yh + nb * n, *cs = xs + nb * m;
        for (; n - j0 > nx; j0 += nb) {
            tn__la_brd##S##_t bp = {a, hl, tauq, hr, taup, w, yh, xs, cs, d, e, m, n, j0, nb};
            tn__la_brd_panel##S(&bp, 0, 1);
            /* the rest: A0 -= V Yh + X U^T (rows and columns t0..); the GEMM splits C's rows
               between threads, never the sums: the same bits for any count */
            const int64_t t0 = j0 + nb;
            T *C = a + t0 * n + t0;
            if (tn__la_gemm##S(m - t0, n - t0, nb, -1, hl + j0 * m + t0, 1, m, yh + t0, n, 1, 1, C, n, 1)
                || tn__la_gemm##S(m - t0, n - t0, nb, -1, xs + t0, 1, m, hr + j0 * (n - 1) + t0 - 1, n - 1, 1, 1, C, n, 1)) {
                TN_FREE(yh);
                return -1;
            }
        }
        TN_FREE(yh);
    }
    tn__la_gebd2##S(a, m, n, d, e, hl, tauq, hr, taup, w, j0);
    return 0;
}
/* org2r_t##S blocked (dorgqr: dlarft's forward T, dlarfb through the GEMM): Q's first qc
   columns as the rows of qt [qc, m], NB reflectors at a time, last block first, each block
   I - V T V^T applied to Q^T's rows c0 = j0.. (the rows before are still e_c on the block's
   coordinates) by three GEMMs: W = Q^T V, W := W T^T, Q^T -= W V^T. Few reflectors or
   columns: org2r_t##S (the same bits as before). NB: tn__la_org_nb, from tn__la_org_nx.
   Returns -1 when out of memory. */
static int tn__la_orgqr_t##S(T *h, int64_t m, int64_t k, const T *tau, T *qt, int64_t qc) {
    const int64_t nb = tn__la_org_nb;
    if (k < tn__la_org_nx || qc < tn__la_org_nx || k < 2) {
        tn__la_org2r_t##S(h, m, k, tau, qt, qc);
        return 0;
    }
    /* V [nb, len] (row i: reflector i from the block's first coordinate, explicit zeros and
       1), T and G [nb, nb], W, W2 [qc, nb] */
    T *v = (T *)TN_MALLOC((size_t)(nb * m + 2 * nb * nb + 2 * nb * qc) * sizeof(T));
    if (!v) return -1;
    T *t = v + nb * m, *g = t + nb * nb, *w = g + nb * nb, *w2 = w + nb * qc;
    memset(qt, 0, (size_t)(qc * m) * sizeof(T));
    for (int64_t c = 0; c < qc; c++) qt[c * m + c] = 1;
    int rc = 0;
    for (int64_t j0 = (k - 1) / nb * nb; j0 >= 0 && !rc; j0 -= nb) {
        const int64_t ib = k - j0 < nb ? k - j0 : nb, len = m - j0, nc = qc - j0;
        if (nc <= 0) continue;
        for (int64_t i = 0; i < ib; i++) {
            T *vi = v + i * len;
            memset(vi, 0, (size_t)i * sizeof(T));
            vi[i] = 1;
            memcpy(vi + i + 1, h + (j0 + i) * m + j0 + i + 1, (size_t)(len - i - 1) * sizeof(T));
        }
        /* T(i, i) = tau_i, T(0:i, i) = -tau_i T(0:i, 0:i) G(0:i, i), G = V V^T by the GEMM
           (v_i is 0 before entry i: the full products are dlarft's) */
        rc = tn__la_gemm##S(ib, ib, len, 1, v, len, 1, v, 1, len, 0, g, nb, 1);
        if (rc) break;
        for (int64_t i = 0; i < ib; i++) {
            for (int64_t l = 0; l < i; l++) {
                T s = 0;
                for (int64_t q = l; q < i; q++) s += t[l * nb + q] * g[q * nb + i];
                t[l * nb + i] = -tau[j0 + i] * s;
            }
            t[i * nb + i] = tau[j0 + i];
            for (int64_t l = i + 1; l < ib; l++) t[l * nb + i] = 0;
        }
        T *qs = qt + j0 * m + j0;   /* Q^T's rows j0.., entries j0.. */
        rc = tn__la_gemm##S(nc, ib, len, 1, qs, m, 1, v, 1, len, 0, w, ib, 1)
          || tn__la_gemm##S(nc, ib, ib, 1, w, ib, 1, t, 1, nb, 0, w2, ib, 1)
          || tn__la_gemm##S(nc, len, ib, -1, w2, ib, 1, v, len, 1, 1, qs, m, 1);
    }
    TN_FREE(v);
    return rc ? -1 : 0;
}
/* The SVD of the bidiagonal (d [n], e [n-1]; e is destroyed): implicit-shift QR with
   the rotations applied to the rows of ut [*, m] (U's columns) and vt [n, nv] (V's; nv is n,
   or 2 n for complex vectors: a real rotation turns re and im alike), both or neither NULL;
   rot [4 n] is scratch. d ends non-negative, unsorted. The sweeps' rotations are queued
   (up to TN__LA_RQ sweeps, 64 n rotations) and applied together (tn__la_rots_flush).
   Returns 0, or -1 when an iteration did not converge. (The Golub-Reinsch algorithm as in EISPACK's svd; rv[i] = e[i-1] the
   superdiagonal above d[i], rv[0] = 0.) */
/* ord[0..k): the indices of d[0..k) by descending value (insertion sort: stable, so equal
   singular values keep the QR's order) */
static void tn__la_order_desc##S(const T *d, int64_t k, int64_t *ord) {
    for (int64_t i = 0; i < k; i++) ord[i] = i;
    for (int64_t i = 1; i < k; i++) {
        int64_t o = ord[i], j = i;
        for (; j > 0 && d[ord[j - 1]] < d[o]; j--) ord[j] = ord[j - 1];
        ord[j] = o;
    }
}
TN__TESTABLE int tn__la_bdsqr##S(T *d, T *rv, int64_t n, T *ut, int64_t m, T *vt, int64_t nv, T *rot) {
    /* the queue: the sweeps' values in cs (cap of them; without memory for it, rot: one sweep) */
    tn__la_sweep q[TN__LA_RQ];
    int64_t ns = 0, used = 0, cap = vt && n > 1 ? 256 * n : 0;
    T *cs = cap ? (T *)TN_MALLOC((size_t)cap * sizeof(T)) : NULL;
    if (!cs) { cs = rot; cap = 4 * n; }
    T anorm = 0;
    for (int64_t i = n - 1; i > 0; i--) rv[i] = rv[i - 1];
    rv[0] = 0;
    for (int64_t i = 0; i < n; i++) anorm = (T)fmax(anorm, fabs(d[i]) + fabs(rv[i]));
    /* negligible: at most eps |B|; after 30 sweeps for one value, LAPACK's dbdsqr's absolute
       threshold, tolmul eps |B| (tolmul = max(10, min(100, eps^(-1/8))): 90.5 in float64, 10 in
       float32), as the sweeps stall where the off-diagonal sits at the rounding noise of a
       cluster of larger values (two clusters of 100 equal values, strongly graded rows) */
    const T tol0 = EPS * anorm, tolr = (T)fmax(10, fmin(100, pow((double)EPS, -0.125))) * tol0;
    for (int64_t k = n - 1; k >= 0; k--) {
        for (int its = 0;; its++) {
            int64_t l = k;
            bool cancel = true;
            const T tol = its < 30 ? tol0 : tolr;
            for (; l >= 0; l--) {   /* split: rv[l] negligible (rv[0] = 0), or d[l-1] */
                if (l == 0 || fabs(rv[l]) <= tol) { cancel = false; break; }
                if (fabs(d[l - 1]) <= tol) break;
            }
            if (cancel) {   /* d[l-1] ~ 0: chase rv[l] out with rotations from the left */
                tn__la_rots_flush##S(ut, m, vt, nv, cs, q, &ns, &used);   /* they rotate ut's rows now */
                T c = 0, s = 1;
                const int64_t nm = l - 1;
                for (int64_t i = l; i <= k; i++) {
                    const T f = s * rv[i];
                    rv[i] *= c;
                    if (fabs(f) <= tol) break;
                    const T g = d[i], h = tn__la_hypot##S(f, g);
                    d[i] = h;
                    c = g / h;
                    s = -f / h;
                    if (ut) tn__la_rot##S(ut + nm * m, ut + i * m, c, s, m);
                }
            }
            T z = d[k];
            if (l == k) {
                if (z < 0 && vt) {   /* queued: after the rotations queued before it */
                    if (ns == TN__LA_RQ) tn__la_rots_flush##S(ut, m, vt, nv, cs, q, &ns, &used);
                    q[ns].l = q[ns].k = k;
                    q[ns++].off = 0;
                }
                if (z < 0) d[k] = -z;
                break;
            }
            if (its >= 75) {
                if (cs != rot) TN_FREE(cs);
                return -1;
            }
            /* the shift from the trailing 2 x 2, then one QR sweep over l..k */
            T x = d[l], y = d[k - 1], g = rv[k - 1], h = rv[k];
            T f = ((y - z) * (y + z) + (g - h) * (g + h)) / (2 * h * y);
            g = tn__la_hypot##S(f, 1);
            f = ((x - z) * (x + z) + h * ((y / (f + (T)copysign(g, f))) - h)) / x;
            T c = 1, s = 1;
            if (vt && (ns == TN__LA_RQ || used + 4 * (k - l) > cap)) tn__la_rots_flush##S(ut, m, vt, nv, cs, q, &ns, &used);
            /* V's c, s then U's c, s at rc (scratch when there are no vectors) */
            T *rc = vt ? cs + used : rot, *rs = rc + (k - l), *uc = rs + (k - l), *us = uc + (k - l);
            for (int64_t j = l; j < k; j++) {
                const int64_t i = j + 1;
                g = rv[i];
                y = d[i];
                h = s * g;
                g = c * g;
                z = tn__la_hypot##S(f, h);
                rv[j] = z;
                c = f / z;
                s = h / z;
                f = x * c + g * s;
                g = g * c - x * s;
                h = y * s;
                y *= c;
                rc[j - l] = c;
                rs[j - l] = s;
                z = tn__la_hypot##S(f, h);
                d[j] = z;
                if (z != 0) { c = f / z; s = h / z; }
                f = c * g + s * y;
                x = c * y - s * g;
                uc[j - l] = c;
                us[j - l] = s;
            }
            if (vt) {
                q[ns].l = l;
                q[ns].k = k;
                q[ns++].off = used;
                used += 4 * (k - l);
            }
            rv[l] = 0;
            rv[k] = f;
            d[k] = x;
        }
    }
    tn__la_rots_flush##S(ut, m, vt, nv, cs, q, &ns, &used);
    if (cs != rot) TN_FREE(cs);
    return 0;
}
/* tn__la_svd_raw's loop over the B matrices at a [B, m, n] (see there); x is the scratch,
   ord [k + 1]. gebrd and orgqr_t (blocked: their own scratch) from order tn__la_brd_nx + 1 /
   tn__la_org_nx. Returns 0, -1 when the QR did not converge or -2 when out of memory. */
static int tn__la_svd_loop##S(const T *a, int64_t B, int64_t m, int64_t n, bool uv, bool full, T *x, int64_t *ord, T *sv, T *uvv, T *vhv) {
    const int64_t k = m < n ? m : n, M = m < n ? n : m, uc = full ? m : k, vr = full ? n : k;
    const bool tall = m >= n;
    const int64_t qc = uv ? (tall ? uc : vr) : 0;
    T *hl = x + M * k, *hr = hl + k * M, *ut = hr + k * k, *vt = ut + qc * M, *d = vt + k * k, *e = d + k, *tq = e + k, *tp = tq + k, *rot = tp + k, *row = rot + 4 * k;
    for (int64_t b = 0; b < B; b++) {
        const T *ab = a + b * m * n;
        if (tall) memcpy(x, ab, (size_t)(m * n) * sizeof(T));
        else for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < n; j++) x[j * m + i] = ab[i * n + j];
        /* as LAPACK's gesvd: a matrix whose largest entry is outside [sqrt(TMIN) / EPS, its
           reciprocal] is scaled by a power of 2 (exact) to one near 1, so that the QR's
           squares neither overflow nor underflow; S is scaled back */
        T anrm = 0, sc = 1;
        for (int64_t i = 0; i < m * n; i++) { const T t = (T)fabs(x[i]); if (t > anrm) anrm = t; }   /* fmax's: NaN skipped */
        const double small = sqrt((double)TMIN) / (double)EPS;
        if (anrm > 0 && (anrm < small || anrm > 1 / small)) {
            int ex;
            frexp(anrm, &ex);
            const T down = (T)ldexp(1, -ex);
            sc = (T)ldexp(1, ex);
            for (int64_t i = 0; i < m * n; i++) x[i] *= down;
        }
        if (tn__la_gebrd##S(x, M, k, d, e, hl, tq, hr, tp, row)) return -2;
        if (uv) {
            if (tn__la_orgqr_t##S(hl, M, k, tq, ut, qc)) return -2;
            /* P = diag(1, P'): P' from the k-1 reflectors on coordinates 1.. (x as scratch) */
            memset(vt, 0, (size_t)(k * k) * sizeof(T));
            if (k > 0) vt[0] = 1;
            if (k > 1) {
                if (tn__la_orgqr_t##S(hr, k - 1, k - 1, tp, x, k - 1)) return -2;
                for (int64_t c = 0; c < k - 1; c++) memcpy(vt + (c + 1) * k + 1, x + c * (k - 1), (size_t)(k - 1) * sizeof(T));
            }
        }
        if (tn__la_bdsqr##S(d, e, k, uv ? ut : NULL, M, uv ? vt : NULL, k, rot)) return -1;
        tn__la_order_desc##S(d, k, ord);
        for (int64_t i = 0; i < k; i++) sv[b * k + i] = d[ord[i]] * sc;
        if (!uv) continue;
        /* row r of ut / vt is the r-th vector of the tall / short side (past k: Q's completion) */
        T *ub = uvv + b * m * uc, *vb = vhv + b * vr * n;
        if (tall) {   /* U = ut^T, Vh = vt */
            for (int64_t c = 0; c < uc; c++) {
                const T *src = ut + (c < k ? ord[c] : c) * M;
                for (int64_t i = 0; i < m; i++) ub[i * uc + c] = src[i];
            }
            for (int64_t r = 0; r < k; r++) memcpy(vb + r * n, vt + ord[r] * k, (size_t)k * sizeof(T));
        } else {      /* A^T = U' S V'^T: U = V' = vt^T, Vh = U'^T = ut */
            for (int64_t c = 0; c < k; c++) {
                const T *src = vt + ord[c] * k;
                for (int64_t i = 0; i < m; i++) ub[i * uc + c] = src[i];
            }
            for (int64_t r = 0; r < vr; r++) memcpy(vb + r * n, ut + (r < k ? ord[r] : r) * M, (size_t)n * sizeof(T));
        }
    }
    return 0;
}
/* @end TN__LA_SVD */
TN__LA_SVD(double, , TN__LA_DOT, DBL_EPSILON, DBL_MIN)
TN__LA_SVD(float, _f, TN__LA_DOT_F, FLT_EPSILON, FLT_MIN)
/* ---- complex SVD: zgebd2 / zungbr, then the real bidiagonal's QR ---- */
/* The complex passes as statements on the interleaved (re, im) reals R (double or float), so
   that they compile inline into both copies of a TN__LA_JOB body. y -= (fr + i fi) x: */
#define TN__LA_CAXPY(R, y, fr, fi, x, n) do { \
        R *y_ = (R *)(y); const R *x_ = (const R *)(x); const R fr_ = (R)(fr), fi_ = (R)(fi); \
        for (int64_t c_ = 0; c_ < (n); c_++) { \
            const R xr_ = x_[2 * c_], xi_ = x_[2 * c_ + 1]; \
            y_[2 * c_] -= fr_ * xr_ - fi_ * xi_; \
            y_[2 * c_ + 1] -= fr_ * xi_ + fi_ * xr_; \
        } \
    } while (0)
/* y -= (fr + i fi) conj(x) */
#define TN__LA_CAXPY_CJ(R, y, fr, fi, x, n) do { \
        R *y_ = (R *)(y); const R *x_ = (const R *)(x); const R fr_ = (R)(fr), fi_ = (R)(fi); \
        for (int64_t c_ = 0; c_ < (n); c_++) { \
            const R xr_ = x_[2 * c_], xi_ = x_[2 * c_ + 1]; \
            y_[2 * c_] -= fr_ * xr_ + fi_ * xi_; \
            y_[2 * c_ + 1] -= fi_ * xr_ - fr_ * xi_; \
        } \
    } while (0)
/* (rr + i ri) = sum x_c y_c (no conjugate), 4 partial sums (float: 8, an AVX2 register's
   lanes either way) */
#define TN__LA_CDOTU(R, NP, rr, ri, x, y, n) do { \
        const R *x_ = (const R *)(x), *y_ = (const R *)(y); \
        R s_[2 * NP]; \
        for (int q_ = 0; q_ < 2 * NP; q_++) s_[q_] = 0; \
        int64_t c_ = 0; \
        for (; c_ + NP <= (n); c_ += NP) for (int q_ = 0; q_ < NP; q_++) { \
            const R a_ = x_[2 * (c_ + q_)], b_ = x_[2 * (c_ + q_) + 1], u_ = y_[2 * (c_ + q_)], v_ = y_[2 * (c_ + q_) + 1]; \
            s_[2 * q_] += a_ * u_ - b_ * v_; \
            s_[2 * q_ + 1] += a_ * v_ + b_ * u_; \
        } \
        for (; c_ < (n); c_++) { \
            const R a_ = x_[2 * c_], b_ = x_[2 * c_ + 1], u_ = y_[2 * c_], v_ = y_[2 * c_ + 1]; \
            s_[0] += a_ * u_ - b_ * v_; \
            s_[1] += a_ * v_ + b_ * u_; \
        } \
        for (int h_ = 1; h_ < NP; h_ *= 2) for (int q_ = 0; q_ + h_ < NP; q_ += 2 * h_) { \
            s_[2 * q_] += s_[2 * (q_ + h_)]; s_[2 * q_ + 1] += s_[2 * (q_ + h_) + 1]; \
        } \
        (rr) = s_[0]; \
        (ri) = s_[1]; \
    } while (0)
/* (rr + i ri) = sum conj(x_c) y_c: the same sums as CDOTU with x's imaginary part negated */
#define TN__LA_CDOTC(R, NP, rr, ri, x, y, n) do { \
        const R *x_ = (const R *)(x), *y_ = (const R *)(y); \
        R s_[2 * NP]; \
        for (int q_ = 0; q_ < 2 * NP; q_++) s_[q_] = 0; \
        int64_t c_ = 0; \
        for (; c_ + NP <= (n); c_ += NP) for (int q_ = 0; q_ < NP; q_++) { \
            const R a_ = x_[2 * (c_ + q_)], b_ = x_[2 * (c_ + q_) + 1], u_ = y_[2 * (c_ + q_)], v_ = y_[2 * (c_ + q_) + 1]; \
            s_[2 * q_] += a_ * u_ + b_ * v_; \
            s_[2 * q_ + 1] += a_ * v_ - b_ * u_; \
        } \
        for (; c_ < (n); c_++) { \
            const R a_ = x_[2 * c_], b_ = x_[2 * c_ + 1], u_ = y_[2 * c_], v_ = y_[2 * c_ + 1]; \
            s_[0] += a_ * u_ + b_ * v_; \
            s_[1] += a_ * v_ - b_ * u_; \
        } \
        for (int h_ = 1; h_ < NP; h_ *= 2) for (int q_ = 0; q_ + h_ < NP; q_ += 2 * h_) { \
            s_[2 * q_] += s_[2 * (q_ + h_)]; s_[2 * q_ + 1] += s_[2 * (q_ + h_) + 1]; \
        } \
        (rr) = s_[0]; \
        (ri) = s_[1]; \
    } while (0)
/* The complex SVD's kernels for complex128 (S _c, RS none: float64's real bidiagonal QR) and
   complex64 (_cf, RS _f: all of it in single precision, as cgesdd); GEMM the real GEMM, NP
   CDOTU's partial sums. */
#define TN__LA_UNG_NB 64
/* @template TN__LA_CSVD(CT, R, S, RS, GEMM, NP, EPS, TMIN) */
/* gebd2_c's passes over the trailing rows, split between threads as the real gebd2's: w[c0,
   c1) = sum_i conj(v_i) a_i (rows j.., columns split), then each row's two updates while it
   is in cache (rows split). */
typedef struct { CT *a, *w; const CT *v, *u; CT ctq, tp; int64_t n, j, nc, m; CT *au; } tn__la_bdc##S##_t;
TN__LA_JOB(tn__la_bdc_w##S,   /* columns i0..i1-1 */
    const tn__la_bdc##S##_t *q = (const tn__la_bdc##S##_t *)p;
    memset(q->w + i0, 0, (size_t)(i1 - i0) * sizeof(CT));
    for (int64_t i = q->j; i < q->m; i++) {
        const CT cv = q->v[i - q->j];
        TN__LA_CAXPY(R, q->w + i0, -cv.re, cv.im, q->a + i * q->n + q->j + 1 + i0, i1 - i0);   /* += conj(v_i) a_i */
    })
TN__LA_JOB(tn__la_bdc_rows##S,
    const tn__la_bdc##S##_t *q = (const tn__la_bdc##S##_t *)p;
    const CT ctq = q->ctq, tp = q->tp, *v = q->v, *u = q->u, *w = q->w;
    const int64_t nc = q->nc;
    for (int64_t i = q->j + 1 + i0; i < q->j + 1 + i1; i++) {
        CT *row = q->a + i * q->n + q->j + 1;
        if (ctq.re != 0 || ctq.im != 0) {   /* -= conj(tq) v_i w */
            const tn__cplx f = tn__cmul(tn__la_ld##S(ctq), tn__la_ld##S(v[i - q->j]));
            TN__LA_CAXPY(R, row, f.re, f.im, w, nc);
        }
        if (tp.re != 0 || tp.im != 0) {     /* -= tp (row . u) conj(u) */
            R tr, ti;
            TN__LA_CDOTU(R, NP, tr, ti, row, u, nc);
            const tn__cplx t = tn__cmul(tn__la_ld##S(tp), tn__cx(tr, ti));
            TN__LA_CAXPY_CJ(R, row, t.re, t.im, u, nc);
        }
    })
/* gebrd's second pass: au[r - j - 1] = sum_c a[r, c] u[c] (rows j+1.., columns j+1..; rows
   split), A u read-only (the updates wait for the panel's GEMMs) */
TN__LA_JOB(tn__la_bdc_au##S,
    const tn__la_bdc##S##_t *q = (const tn__la_bdc##S##_t *)p;
    for (int64_t i = q->j + 1 + i0; i < q->j + 1 + i1; i++) {
        R tr, ti;
        TN__LA_CDOTU(R, NP, tr, ti, q->a + i * q->n + q->j + 1, q->u, q->nc);
        q->au[i - q->j - 1].re = tr;
        q->au[i - q->j - 1].im = ti;
    })
/* a [m, n] complex row-major, m >= n >= 1, is reduced to the REAL upper bidiagonal (d, e):
   a = Q B P^H, as zgebd2: each reflector's beta is real (zlarfg), so the phases go into the
   reflectors. Q's reflectors are the rows of hl [n, m] with tauq (H_j = I - tauq v v^H, A :=
   H_j^H A, as zgeqr2's), P's the rows of hr [n-1, n-1] with taup (G_j = I - taup u u^H on
   coordinates j+1.., A := A G_j, u from the conjugated row); w [n] is scratch. Two threaded
   passes per step, as the real gebd2's. Starts at column j0 (the columns before it reduced). */
static void tn__la_gebd2##S(CT *a, int64_t m, int64_t n, R *d, R *e, CT *hl, CT *tauq, CT *hr, CT *taup, CT *w, int64_t j0) {
    const CT one = tn__la_st##S(tn__cx(1, 0));
    for (int64_t j = j0; j < n; j++) {
        CT *v = hl + j * m + j, *u = j + 1 < n ? hr + j * (n - 1) + j : NULL;
        const int64_t len = m - j, nc = n - j - 1;
        for (int64_t i = j; i < m; i++) v[i - j] = a[i * n + j];
        const CT tq = tn__la_larfg##S(v, len), ctq = tn__la_cj##S(tq);
        d[j] = v[0].re;
        tauq[j] = tq;
        v[0] = one;
        if (nc == 0) break;
        tn__la_bdc##S##_t q = {a, w, v, u, ctq, tn__la_st##S(tn__cx(0, 0)), n, j, nc, m, NULL};
        /* 8 real flops per complex multiply-add */
        const int nt = tn__par_threads(16 * (m - j) * nc, nc < m - j - 1 ? nc : m - j - 1);
        if (tq.re != 0 || tq.im != 0) {   /* w = v^H A; row j -= conj(tq) w (v_0 = 1) */
            tn__parallel_range(nt, nc, tn__la_bdc_w##S, &q);
            TN__LA_CAXPY(R, a + j * n + j + 1, ctq.re, ctq.im, w, nc);
        }
        for (int64_t c = 0; c < nc; c++) u[c] = tn__la_cj##S(a[j * n + j + 1 + c]);
        q.tp = tn__la_larfg##S(u, nc);
        e[j] = u[0].re;
        taup[j] = q.tp;
        u[0] = one;
        if (m - j - 1 > 0) tn__parallel_range(nt, m - j - 1, tn__la_bdc_rows##S, &q);
    }
}
/* C = alpha op(A) op(B) + beta C for complex matrices at element strides (rs, cs; C's rows
   contiguous), op: the matrix or its conjugate (cj*; a transpose is a swap of the strides).
   B (K x N, small here) is copied as the real K x 2N matrices of B's and i B's interleaved parts,
   so that C's interleaved rows are one real M x 2N matrix: C = alpha (Ar B + Ai (i B)) + beta C
   in two real GEMMs, C and the copies at unit stride (a conjugated A: Ai negated). Returns -1
   when out of memory. */
static int tn__la_cgemm##S(int64_t M, int64_t N, int64_t K, R alpha, const CT *A, int64_t rsa, int64_t csa, bool cja,
                          const CT *B, int64_t rsb, int64_t csb, bool cjb, R beta, CT *C, int64_t rsc) {
    R *bb = (R *)TN_MALLOC((size_t)(4 * K * N + 1) * sizeof(R));
    if (!bb) return -1;
    R *bi = bb + 2 * K * N;
    for (int64_t r = 0; r < K; r++)
        for (int64_t c = 0; c < N; c++) {
            const CT x = B[r * rsb + c * csb];
            const R xi = cjb ? -x.im : x.im;
            bb[r * 2 * N + 2 * c] = x.re; bb[r * 2 * N + 2 * c + 1] = xi;
            bi[r * 2 * N + 2 * c] = -xi; bi[r * 2 * N + 2 * c + 1] = x.re;
        }
    const R *ar = (const R *)A;
    const int rc = GEMM(M, 2 * N, K, alpha, ar, 2 * rsa, 2 * csa, bb, 2 * N, 1, beta, (R *)C, 2 * rsc, 1)
                || GEMM(M, 2 * N, K, cja ? -alpha : alpha, ar + 1, 2 * rsa, 2 * csa, bi, 2 * N, 1, (R)1, (R *)C, 2 * rsc, 1);
    TN_FREE(bb);
    return rc ? -1 : 0;
}
/* gebd2##S's reduction blocked (zgebrd / zlabrd): a panel of NB steps reads the trailing
   matrix A0 (as it was at the panel's start) without writing it, each step's column and row
   brought up to date from the panel's vectors, then A0 -= V Yh + X U^H for the rest by two
   complex GEMMs (half the flops in the GEMM, one write of A per panel, not per step). Step
   i's left reflector makes yh_i = conj(tq) v^H A (row vectors: A := A - v yh), its right
   one x_i = tp A u (A := A - x u^H), both of A as it stands: A0 less the panel's earlier
   terms, so
     column i     = A0[:, i] - sum_p v_p yh_p[i] - x_p conj(u_p[i])
     yh_i         = conj(tq) (v^H A0 - sum_p (v^H v_p) yh_p - (v^H x_p) u_p^H)
     row i        = A0[i, :] - sum_{p <= i} v_p[i] yh_p - sum_p x_p[i] u_p^H
     x_i          = tp (A0 u - sum_{p <= i} v_p (yh_p u) - sum_p x_p (u_p^H u))
   (v_p, u_p: hl's and hr's rows, zero before their first coordinate). The last NX columns,
   and matrices of no more: gebd2##S. w [M] scratch as gebd2's; returns -1 when out of memory. */
/* One panel of gebrd##S (steps j0 .. j0 + NB - 1), a TN__LA_JOB so that the panel's
   vector updates compile for AVX2 too (called directly, i0 and i1 unused). */
typedef struct { CT *a, *hl, *tauq, *hr, *taup, *w, *yh, *xs, *au, *cs; R *d, *e; int64_t m, n, j0; } tn__la_brd##S##_t;
TN__LA_JOB(tn__la_brd_panel##S,
    (void)i0; (void)i1;
    const tn__la_brd##S##_t *bp = (const tn__la_brd##S##_t *)p;
    CT *a = bp->a, *hl = bp->hl, *hr = bp->hr, *w = bp->w, *yh = bp->yh, *xs = bp->xs, *au = bp->au, *cs = bp->cs;
    const int64_t m = bp->m, n = bp->n, j0 = bp->j0, nb = TN__LA_BRD_NB;
    const CT one = tn__la_st##S(tn__cx(1, 0)), zero = tn__la_st##S(tn__cx(0, 0));
    for (int64_t l = 0; l < nb; l++) {
        const int64_t i = j0 + l, len = m - i, nc = n - i - 1;
        CT *v = hl + i * m + i, *u = hr + i * (n - 1) + i, *yl = yh + l * n, *xl = xs + l * m;
        for (int64_t r = i; r < m; r++) v[r - i] = a[r * n + i];
        for (int64_t q = 0; q < l; q++) {
            const CT cy = yh[q * n + i], cu = hr[(j0 + q) * (n - 1) + i - 1];
            TN__LA_CAXPY(R, v, cy.re, cy.im, hl + (j0 + q) * m + i, len);
            TN__LA_CAXPY(R, v, cu.re, -cu.im, xs + q * m + i, len);
        }
        const CT tq = tn__la_larfg##S(v, len);
        bp->d[i] = v[0].re;
        bp->tauq[i] = tq;
        v[0] = one;
        const int nt = tn__par_threads(8 * len * nc, nc < len - 1 ? nc : len - 1);
        tn__la_bdc##S##_t pq = {a, w, v, u, zero, zero, n, i, nc, m, au};
        if (tq.re != 0 || tq.im != 0) {
            tn__parallel_range(nt, nc, tn__la_bdc_w##S, &pq);   /* w = v^H A0 (columns i+1..) */
            for (int64_t q = 0; q < l; q++) {
                TN__LA_CDOTC(R, NP, cs[q].re, cs[q].im, v, hl + (j0 + q) * m + i, len);
                TN__LA_CDOTC(R, NP, cs[nb + q].re, cs[nb + q].im, v, xs + q * m + i, len);
            }
            CT *y = yl + i + 1;
            memcpy(y, w, (size_t)nc * sizeof(CT));
            for (int64_t q = 0; q < l; q++) {
                TN__LA_CAXPY(R, y, cs[q].re, cs[q].im, yh + q * n + i + 1, nc);
                TN__LA_CAXPY_CJ(R, y, cs[nb + q].re, cs[nb + q].im, hr + (j0 + q) * (n - 1) + i, nc);
            }
            const tn__cplx ctq = tn__cconj(tn__la_ld##S(tq));
            for (int64_t c = 0; c < nc; c++) y[c] = tn__la_st##S(tn__cmul(ctq, tn__la_ld##S(y[c])));
        } else for (int64_t c = i + 1; c < n; c++) yl[c] = zero;
        /* row i as it stands, conjugated into u */
        memcpy(u, a + i * n + i + 1, (size_t)nc * sizeof(CT));
        for (int64_t q = 0; q <= l; q++) {
            const CT cv = hl[(j0 + q) * m + i];
            TN__LA_CAXPY(R, u, cv.re, cv.im, yh + q * n + i + 1, nc);
            if (q < l) { const CT cx = xs[q * m + i]; TN__LA_CAXPY_CJ(R, u, cx.re, cx.im, hr + (j0 + q) * (n - 1) + i, nc); }
        }
        for (int64_t c = 0; c < nc; c++) u[c].im = -u[c].im;
        const CT tp = tn__la_larfg##S(u, nc);
        bp->e[i] = u[0].re;
        bp->taup[i] = tp;
        u[0] = one;
        CT *x = xl + i + 1;
        if (tp.re != 0 || tp.im != 0) {
            if (len > 1) tn__parallel_range(nt, len - 1, tn__la_bdc_au##S, &pq);   /* A0 u (rows i+1..) */
            for (int64_t q = 0; q <= l; q++) {
                TN__LA_CDOTU(R, NP, cs[q].re, cs[q].im, yh + q * n + i + 1, u, nc);
                if (q < l) TN__LA_CDOTC(R, NP, cs[nb + q].re, cs[nb + q].im, hr + (j0 + q) * (n - 1) + i, u, nc);
            }
            memcpy(x, au, (size_t)(len - 1) * sizeof(CT));
            for (int64_t q = 0; q <= l; q++) {
                TN__LA_CAXPY(R, x, cs[q].re, cs[q].im, hl + (j0 + q) * m + i + 1, len - 1);
                if (q < l) TN__LA_CAXPY(R, x, cs[nb + q].re, cs[nb + q].im, xs + q * m + i + 1, len - 1);
            }
            const tn__cplx ctp = tn__la_ld##S(tp);
            for (int64_t r = 0; r < len - 1; r++) x[r] = tn__la_st##S(tn__cmul(ctp, tn__la_ld##S(x[r])));
        } else for (int64_t r = 0; r < len - 1; r++) x[r] = zero;
    })
static int tn__la_gebrd##S(CT *a, int64_t m, int64_t n, R *d, R *e, CT *hl, CT *tauq, CT *hr, CT *taup, CT *w) {
    const int64_t nb = TN__LA_BRD_NB;
    int64_t j0 = 0;
    if (n > TN__LA_BRD_NX) {
        /* yh [nb, n] (absolute columns), xs [nb, m] (absolute rows), au [m], cs [2 nb] */
        CT *yh = (CT *)TN_MALLOC((size_t)(nb * n + nb * m + m + 2 * nb) * sizeof(CT));
        if (!yh) return -1;
        CT *xs = yh + nb * n, *au = xs + nb * m, *cs = au + m;
        for (; n - j0 > TN__LA_BRD_NX; j0 += nb) {
            tn__la_brd##S##_t bp = {a, hl, tauq, hr, taup, w, yh, xs, au, cs, d, e, m, n, j0};
            tn__la_brd_panel##S(&bp, 0, 1);
            /* the rest: A0 -= V Yh + X U^H (rows and columns t0..) */
            const int64_t t0 = j0 + nb;
            CT *C = a + t0 * n + t0;
            if (tn__la_cgemm##S(m - t0, n - t0, nb, -1, hl + j0 * m + t0, 1, m, false, yh + t0, n, 1, false, 1, C, n)
                || tn__la_cgemm##S(m - t0, n - t0, nb, -1, xs + t0, 1, m, false, hr + j0 * (n - 1) + t0 - 1, n - 1, 1, true, 1, C, n)) {
                TN_FREE(yh);
                return -1;
            }
        }
        TN_FREE(yh);
    }
    tn__la_gebd2##S(a, m, n, d, e, hl, tauq, hr, taup, w, j0);
    return 0;
}
/* qt's rows (qc vectors of length m at stride ldq, Q's columns when formed) := Q qt_r, Q = H_0
   ... H_{k-1} the reflectors of h (rows as geqr2_t_c's: row j from entry j, H_j = I - tau_j v
   v^H). form: qt := I first (zung2r/zungqr: row c, entry c; ldq = m), and the reflectors of
   block j0 only reach rows j0.. (the rows before are still e_c there); else every row
   (zunm2r/zunmqr). Blocked (zungqr/zunmqr): NB reflectors at a time, last block first, each
   as I - V T V^H (zlarft's forward T, in double) by three complex GEMMs (zlarfb): W = V^H Q,
   W = T W, Q -= V W (transposed: Q^T's rows are qt's); few reflectors or rows: one at a time.
   Returns -1 when out of memory. */
static int tn__la_ungqr_t##S(CT *h, int64_t m, int64_t k, const CT *tau, CT *qt, int64_t ldq, int64_t qc, bool form) {
    const CT zero = tn__la_st##S(tn__cx(0, 0)), one = tn__la_st##S(tn__cx(1, 0));
    if (form) {
        for (int64_t c = 0; c < qc; c++) {
            for (int64_t i = 0; i < m; i++) qt[c * ldq + i] = zero;
            qt[c * ldq + c] = one;
        }
    }
    const int64_t nb = TN__LA_UNG_NB;
    if (k < 2 * nb || qc < 2 * nb) {
        for (int64_t j = k - 1; j >= 0; j--) {
            if (tau[j].re == 0 && tau[j].im == 0) continue;
            CT *v = h + j * m + j;
            const CT beta = v[0];
            v[0] = one;
            for (int64_t c = form ? j : 0; c < qc; c++) tn__la_refl##S(qt + c * ldq + j, v, tau[j], m - j);
            v[0] = beta;
        }
        return 0;
    }
    /* V [nb, m] (row i: reflector i from the block's first coordinate, explicit zeros and 1),
       T [nb, nb], W^T, W2^T [qc, nb] */
    CT *v = (CT *)TN_MALLOC((size_t)(nb * m + nb * nb + 2 * nb * qc) * sizeof(CT));
    tn__cplx *ti = (tn__cplx *)TN_MALLOC((size_t)nb * sizeof(tn__cplx));
    if (!v || !ti) { TN_FREE(v); TN_FREE(ti); return -1; }
    CT *t = v + nb * m, *w = t + nb * nb, *w2 = w + nb * qc;
    int rc = 0;
    for (int64_t j0 = (k - 1) / nb * nb; j0 >= 0 && !rc; j0 -= nb) {
        const int64_t ib = k - j0 < nb ? k - j0 : nb, len = m - j0, c0 = form ? j0 : 0, nc = qc - c0;
        if (nc <= 0) continue;
        for (int64_t i = 0; i < ib; i++) {
            CT *vi = v + i * len;
            for (int64_t r = 0; r < i; r++) vi[r] = zero;
            vi[i] = one;
            memcpy(vi + i + 1, h + (j0 + i) * m + j0 + i + 1, (size_t)(len - i - 1) * sizeof(CT));
        }
        /* T(i, i) = tau_i, T(0:i, i) = -tau_i T(0:i, 0:i) (V(:, 0:i)^H v_i): ti the
           products, in double */
        for (int64_t i = 0; i < ib; i++) {
            for (int64_t l = 0; l < i; l++) {
                tn__cplx d = tn__cx(0, 0);
                for (int64_t r = i; r < len; r++) d = tn__cadd(d, tn__cmul(tn__cconj(tn__la_ld##S(v[l * len + r])), tn__la_ld##S(v[i * len + r])));
                ti[l] = d;
            }
            const tn__cplx mtau = tn__cx(-tau[j0 + i].re, -tau[j0 + i].im);
            for (int64_t l = 0; l < i; l++) {
                tn__cplx d = tn__cx(0, 0);
                for (int64_t q = l; q < i; q++) d = tn__cadd(d, tn__cmul(tn__la_ld##S(t[l * nb + q]), ti[q]));
                t[l * nb + i] = tn__la_st##S(tn__cmul(mtau, d));
            }
            t[i * nb + i] = tau[j0 + i];
            for (int64_t l = i + 1; l < ib; l++) t[l * nb + i] = zero;
        }
        /* on Q^T's rows (entry r of row c at qs[c ldq + r]): W^T = Q^T conj(V), W^T := W^T T^T,
           Q^T -= W^T V^T */
        CT *qs = qt + c0 * ldq + j0;
        rc = tn__la_cgemm##S(nc, ib, len, 1, qs, ldq, 1, false, v, 1, len, true, 0, w, ib)
          || tn__la_cgemm##S(nc, ib, ib, 1, w, ib, 1, false, t, 1, nb, false, 0, w2, ib)
          || tn__la_cgemm##S(nc, len, ib, -1, w2, ib, 1, false, v, len, 1, false, 1, qs, ldq);
    }
    TN_FREE(v);
    TN_FREE(ti);
    return rc ? -1 : 0;
}
/* tn__la_svd_loop for complex: gebd2_c, tn__la_bdsqr's real rotations of the bidiagonal's
   vectors, then Q and P applied to them (ungqr_t_c).
   A wide matrix is worked on as A^H: A = V' S U'^H. Returns 0, -1 (no convergence) or -2 (out
   of memory). */
static int tn__la_svd_loop##S(const CT *a, int64_t B, int64_t m, int64_t n, bool uv, bool full, CT *x, int64_t *ord, R *sv, CT *uvv, CT *vhv) {
    const int64_t k = m < n ? m : n, M = m < n ? n : m, uc = full ? m : k, vr = full ? n : k;
    const bool tall = m >= n;
    const int64_t qc = uv ? (tall ? uc : vr) : 0;
    CT *hl = x + M * k, *hr = hl + k * M, *ut = hr + k * k, *vt = ut + qc * M, *tq = vt + k * k, *tp = tq + k, *row = tp + k;
    R *d = (R *)(row + M), *e = d + k, *rot = e + k;
    for (int64_t b = 0; b < B; b++) {
        const CT *ab = a + b * m * n;
        if (tall) memcpy(x, ab, (size_t)(m * n) * sizeof(CT));
        else for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < n; j++) x[j * m + i] = tn__la_cj##S(ab[i * n + j]);
        R anrm = 0, sc = 1;   /* scaled as the real loop's */
        for (int64_t i = 0; i < m * n; i++) anrm = (R)fmax(anrm, fmax(fabs(x[i].re), fabs(x[i].im)));
        const double small = sqrt((double)TMIN) / (double)EPS;
        if (anrm > 0 && (anrm < small || anrm > 1 / small)) {
            int ex;
            frexp(anrm, &ex);
            const R down = (R)ldexp(1, -ex);
            sc = (R)ldexp(1, ex);
            for (int64_t i = 0; i < m * n; i++) { x[i].re *= down; x[i].im *= down; }
        }
        if (tn__la_gebrd##S(x, M, k, d, e, hl, tq, hr, tp, row)) return -2;
        /* as zgesdd: the bidiagonal's (real) singular vectors first, rotated as the rows of ub
           and vb [k, k] (x as their storage: half the data of rotating complex rows), then
           U = Q Ub and V = P Vb by the reflectors (zunmbr) */
        R *ubr = (R *)x, *vbr = ubr + k * k;
        if (uv) {
            memset(ubr, 0, (size_t)(2 * k * k) * sizeof(R));
            for (int64_t i = 0; i < k; i++) ubr[i * k + i] = vbr[i * k + i] = 1;
        }
        if (tn__la_bdsqr##RS(d, e, k, uv ? ubr : NULL, k, uv ? vbr : NULL, k, rot)) return -1;
        if (uv) {
            for (int64_t r = 0; r < qc; r++)
                for (int64_t i = 0; i < M; i++) ut[r * M + i] = tn__la_st##S(r < k ? tn__cx(i < k ? ubr[r * k + i] : 0, 0) : tn__cx(i == r, 0));
            for (int64_t i = 0; i < k * k; i++) vt[i] = tn__la_st##S(tn__cx(vbr[i], 0));
            /* P = diag(1, P'): P' acts on entries 1.. of vt's rows */
            if (tn__la_ungqr_t##S(hl, M, k, tq, ut, M, qc, false) || (k > 1 && tn__la_ungqr_t##S(hr, k - 1, k - 1, tp, vt + 1, k, k, false))) return -2;
        }
        tn__la_order_desc##RS(d, k, ord);
        for (int64_t i = 0; i < k; i++) sv[b * k + i] = d[ord[i]] * sc;
        if (!uv) continue;
        CT *ub = uvv + b * m * uc, *vb = vhv + b * vr * n;
        if (tall) {   /* U = ut^T, Vh = conj(vt) */
            for (int64_t c = 0; c < uc; c++) {
                const CT *src = ut + (c < k ? ord[c] : c) * M;
                for (int64_t i = 0; i < m; i++) ub[i * uc + c] = src[i];
            }
            for (int64_t r = 0; r < k; r++)
                for (int64_t i = 0; i < k; i++) vb[r * n + i] = tn__la_cj##S(vt[ord[r] * k + i]);
        } else {      /* A^H = U' S V'^H: U = V' = vt^T, Vh = U'^H = conj(ut) */
            for (int64_t c = 0; c < k; c++) {
                const CT *src = vt + ord[c] * k;
                for (int64_t i = 0; i < m; i++) ub[i * uc + c] = src[i];
            }
            for (int64_t r = 0; r < vr; r++) {
                const CT *src = ut + (r < k ? ord[r] : r) * M;
                for (int64_t i = 0; i < n; i++) vb[r * n + i] = tn__la_cj##S(src[i]);
            }
        }
    }
    return 0;
}
/* @end TN__LA_CSVD */
TN__LA_CSVD(tn__cplx, double, _c, , tn__gemm_f64, 4, DBL_EPSILON, DBL_MIN)
TN__LA_CSVD(tn__cplxf, float, _cf, _f, tn__gemm_f32, 8, FLT_EPSILON, FLT_MIN)
/* tn__la_svd_raw on the device (A's dtype, the values real): U from the entry's column-major
   [B, uc, m], V^H as it writes it ([B, vr, n] row-major); empty matrices: no values,
   identities for full vectors */
static int tn__la_svd_dev(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **S, tn_tensor **Vh, const char *fn) {
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n, B = tn__la_batch(A);
    const int64_t uc = full ? m : k, vr = full ? n : k;
    tn_tensor *s = tn__la_dnew(tn_dtype_to_real(A->dtype), A, B, k, 0, 2), *u = NULL, *v = NULL;
    if (uv && k == 0) {
        u = tn__la_eye_dev(A, B, uc, m);
        v = tn__la_eye_dev(A, B, vr, n);
    } else if (uv) {
        u = tn__la_dnew(A->dtype, A, B, uc, m, 3);
        v = tn__la_dnew(A->dtype, A, B, vr, n, 3);
    }
    if (!s || (uv && (!u || !v))) return -1;
    if (k > 0) {
        tn_tensor *cm = tn__la_cm(A), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1);
        if (!cm || !f || tn__la_run(TN_LA_GESVD, cm, s, u, v, f, 0)) return -1;
        if (tn__la_info_error(fn, tn__la_unbatch(f, A, 0), "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values (error code: %d)."))
            return -1;
    }
    *S = tn__la_unbatch(s, A, 1);
    if (uv) { *U = tn__la_uncm(u, A, m, uc); *Vh = tn__la_unbatch(v, A, 2); }
    return *S && (!uv || (*U && *Vh)) ? 0 : -1;
}
/* The SVD of every matrix of A [..., m, n] without history, in float64, or float32 for
   float32 input (LAPACK's sgesvd: the same algorithm, float32's accuracy, half the data per
   SIMD lane; complex64 likewise in single precision, complex128 in double): S [..., k] descending; with uv, U [..., m, uc] and Vh [..., vr, n] (uc = vr =
   k, or m and n: full). LAPACK's dgesvd route: a wide matrix is worked on as A^T (tall: M x
   N, M >= N), reduced to the bidiagonal Q B P^T (gebd2), Q's first uc columns and P formed
   as the rows of ut and vt (org2r_t), then the bidiagonal's QR rotates them into the
   singular vectors. With threads, gebd2's passes, org2r_t's and the QR's rotations split
   their rows or columns. */
static int tn__la_svd_raw(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **S, tn_tensor **Vh, const char *fn) {
    if (A->device != TN_CPU) return tn__la_svd_dev(A, uv, full, U, S, Vh, fn);
    const bool f32 = A->dtype == TN_F32, c64 = A->dtype == TN_C64, cplx = tn_is_complex(A);
    tn_tensor *w = f32 || c64 ? tn_contiguous(tn_detach(A)) : tn__la_work(A);
    if (!w) return -1;
    const tn_dtype dt = f32 || c64 ? TN_F32 : TN_F64, vdt = c64 ? TN_C64 : cplx ? TN_C128 : dt;
    const size_t es = f32 ? sizeof(float) : c64 ? sizeof(tn__cplxf) : cplx ? sizeof(tn__cplx) : sizeof(double);
    const int nd = A->ndim;
    const int64_t m = A->shape[nd - 2], n = A->shape[nd - 1], k = m < n ? m : n, M = m < n ? n : m, B = tn__la_batch(A);
    const int64_t uc = full ? m : k, vr = full ? n : k;
    const int64_t qc = uv ? (m >= n ? uc : vr) : 0;   /* the columns of Q (the tall side's vectors) */
    int64_t ss[TN_MAX_DIMS], us[TN_MAX_DIMS], vs[TN_MAX_DIMS];
    memcpy(ss, A->shape, sizeof ss);
    memcpy(us, A->shape, sizeof us);
    memcpy(vs, A->shape, sizeof vs);
    ss[nd - 2] = k;
    us[nd - 1] = uc;
    vs[nd - 2] = vr;
    tn_tensor *s = tn__own(tn__new(dt, TN_CPU, ss, nd - 1));
    tn_tensor *u = uv ? tn__own(tn__new(vdt, TN_CPU, us, nd)) : NULL, *vh = uv ? tn__own(tn__new(vdt, TN_CPU, vs, nd)) : NULL;
    /* x [M, N] (A or A^T; after gebd2 the scratch for P's rows, complex: the bidiagonal's
       real vectors), hl [N, M], hr [N, N], ut
       [qc, M], vt [N, N], then d, e, tauq, taup [N] and a row [M]; complex: as many complex
       elements, d, e and rot (6 N reals) in the last 8 N + 1 */
    const size_t need = (size_t)(2 * M * k + (qc + 2) * M + 2 * k * k + 8 * k + 1);
    void *x = TN_MALLOC(need * es);
    int64_t *ord = (int64_t *)TN_MALLOC((size_t)(k + 1) * sizeof(int64_t));
    if (!s || (uv && (!u || !vh)) || !x || !ord) {
        TN_FREE(x); TN_FREE(ord);
        return s && (!uv || (u && vh)) ? TN__FAIL_INT("%s: out of memory", fn) : -1;
    }
    const void *a = tn_data_ptr(w);
    void *sv = tn_data_ptr(s), *uvv = uv ? tn_data_ptr(u) : NULL, *vhv = uv ? tn_data_ptr(vh) : NULL;
    const int bad = c64 ? tn__la_svd_loop_cf((const tn__cplxf *)a, B, m, n, uv, full, (tn__cplxf *)x, ord, (float *)sv, (tn__cplxf *)uvv, (tn__cplxf *)vhv)
                  : cplx ? tn__la_svd_loop_c((const tn__cplx *)a, B, m, n, uv, full, (tn__cplx *)x, ord, (double *)sv, (tn__cplx *)uvv, (tn__cplx *)vhv)
                  : f32 ? tn__la_svd_loop_f((const float *)a, B, m, n, uv, full, (float *)x, ord, (float *)sv, (float *)uvv, (float *)vhv)
                        : tn__la_svd_loop((const double *)a, B, m, n, uv, full, (double *)x, ord, (double *)sv, (double *)uvv, (double *)vhv);
    TN_FREE(x); TN_FREE(ord);
    if (bad == -2) return TN__FAIL_INT("%s: out of memory", fn);
    if (bad) return TN__FAIL_INT("%s: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values", fn);
    *S = s;
    if (uv) { *U = u; *Vh = vh; }
    return 0;
}

/* ---- complex matrices through their real form ----
   R(A) = [[Re A, -Im A], [Im A, Re A]] (2m x 2n) is a *-algebra homomorphism (R(AB) = R(A) R(B),
   R(A^H) = R(A)^T): its singular values are A's, each twice, its eigenvalues (A Hermitian)
   A's, each twice, and pinv(R(A)) = R(pinv(A)). The ops without complex kernels of their
   own (eigvalsh, pinv, matrix_rank) run on it; built of differentiable library ops,
   the gradient reaching A is the conjugate Wirtinger one. (Singular and eigen vectors are
   not taken from it: each value's pair spans a plane there, whose gradients divide by 0.) */
static tn_tensor *tn__la_realform(tn_tensor *A) {
    tn_tensor *re = tn_real(A), *im = tn_imag(A);
    tn_tensor *top[2] = {re, tn_neg(im)}, *bot[2] = {im, re};
    tn_tensor *rows[2] = {tn_cat(top, 2, .dim = -1), tn_cat(bot, 2, .dim = -1)};
    return rows[0] && rows[1] ? tn_cat(rows, 2, .dim = -2) : NULL;
}
/* The Hermitian matrix of D's lower (upper) triangle, the diagonal's real part: what LAPACK's
   Hermitian drivers read (D without history). */
static tn_tensor *tn__la_herm_of(tn_tensor *D, bool upper) {
    const int64_t n = D->shape[D->ndim - 1];
    tn_tensor *T = upper ? tn__triu(D, 1) : tn__tril(D, -1);
    return tn_add(tn_add(T, tn__mH(T)), tn_mul(tn_real(D), tn_to(tn_eye(n, n, tn_dtype_to_real(D->dtype)), D->device)));
}
/* The complex matrix whose real form E [..., 2m, 2n] is: its left block column. */
static tn_tensor *tn__la_from_realform(tn_tensor *E, int64_t m, int64_t n) {
    tn_tensor *L = E ? tn_narrow(E, -1, 0, n) : NULL;
    return L ? tn_complex(tn_narrow(L, -2, 0, m), tn_narrow(L, -2, m, m)) : NULL;
}
/* [..., 2k] sorted values of a real form, equal in pairs -> [..., k]: each pair's mean (the
   gradient splits evenly over the pair: the same whichever vectors span its plane). */
static tn_tensor *tn__la_pairs(tn_tensor *s) {
    if (!s) return NULL;
    int64_t sh[TN_MAX_DIMS + 1], dl = -1;
    memcpy(sh, s->shape, (size_t)s->ndim * sizeof(int64_t));
    sh[s->ndim - 1] /= 2;
    sh[s->ndim] = 2;
    return tn_mean_dims(tn_reshape(s, sh, s->ndim + 1), &dl, 1);
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
/* PyTorch's linalg_qr_backward. m >= n (reduced): gA = [gQ + Q copyltu(M)] R^{-H} with
   M = R gR^H - gQ^H Q (copyltu: the Hermitian matrix of M's lower triangle, the diagonal's
   real part); m < n: A = [X | Y], Q R = Q [U | V]: the square formula for X with
   gQ + Y gV^H, and Q gV for Y. */
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
        tn_tensor *t = tn_matmul(Y, tn__mH(gV));
        gQ = gQ ? tn_add(gQ, t) : t;
    }
    tn_tensor *M = gU ? tn_matmul(U, tn__mH(gU)) : NULL;
    if (gQ) { tn_tensor *t = tn_matmul(tn__mH(gQ), Q); M = M ? tn_sub(M, t) : tn_neg(t); }
    tn_tensor *cl;
    if (tn_is_complex(A)) {   /* copyltu for complex M: the Hermitian matrix of M's lower triangle, Re on the diagonal */
        tn_tensor *T = tn__tril(M, 0), *e = tn_to(tn_eye(k, k, TN_F64), A->device);   /* (on A's device: a complex QR there) */
        cl = tn_mul(tn_add(T, tn__mH(T)), tn_sub(tn_ones_like(e), tn_mul_scalar(e, 0.5)));
    } else cl = tn_add(tn__tril(M, 0), tn__mT(tn__tril(M, -1)));
    tn_tensor *b = tn_matmul(Q, cl);
    if (gQ) b = tn_add(b, gQ);
    /* b R^{-H}: X U^H = b */
    tn_tensor *gX = tn_linalg_solve(tn__mH(U), b, .left = false);
    if (m < n) {
        tn_tensor *parts[2] = {gX, gY ? gY : tn_zeros_like(tn_narrow(A, -1, k, n - k))};
        gX = tn_cat(parts, 2, .dim = -1);
    }
    gin[0] = gX;
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__qr_impl(tn_tensor *A, int mode, tn_tensor **R, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", false)) return NULL;
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
    if (tn__la_check_dev("tn_geqrf", A, "input", false)) return NULL;
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
        tn_tensor *K = tn_matmul(tn__mH(V), g);   /* (complex: V^H gV's skew-Hermitian part) */
        K = tn_mul_scalar(tn_sub(K, tn__mH(K)), 0.5);
        tn_tensor *E = tn_add(tn_sub(tn_unsqueeze(L, -2), tn_unsqueeze(L, -1)), tn_to(tn_eye(n, n, tn_dtype_to_real(A->dtype)), A->device));
        mid = tn_div(K, E);
    }
    if (mid && tn_is_complex(V) && !tn_is_complex(mid)) mid = tn_to_dtype(mid, V->dtype);   /* (the eigenvalues' real gradient) */
    gin[0] = tn_matmul(V, tn_matmul(mid, tn__mH(V)));
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__eigh_impl(tn_tensor *A, bool upper, bool vectors, tn_tensor **V, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    if (tn__la_finite(fn, A, "is ill-conditioned or has too many repeated eigenvalues (it holds non-finite values)")) return NULL;
    /* complex on a device: its entry's Hermitian eigh (heevd) directly, below */
    const bool realform = tn_is_complex(A) && A->device == TN_CPU;
    if (realform && vectors) {
        /* eigenvectors: the real form's come in planes {[x; y], [-y; x]} per eigenvalue, each
           vector of which is the real form of an eigenvector x + i y of A: one per pair (their
           phase is arbitrary, as LAPACK's). Values without history; one node per output,
           PyTorch's Hermitian backward (tn__eigh_bw, conjugate transposes). */
        const int64_t n = A->shape[A->ndim - 1];
        tn_scope_begin();
        tn_no_grad_begin();
        tn_tensor *W = NULL, *E = tn__la_realform(tn__la_herm_of(tn_detach(A), upper));
        tn_tensor *L2 = E ? tn__eigh_impl(E, false, true, &W, fn) : NULL, *L = NULL, *Vc = NULL;
        if (L2 && W) {
            int64_t sh[TN_MAX_DIMS + 1];
            memcpy(sh, W->shape, (size_t)W->ndim * sizeof(int64_t));
            sh[W->ndim - 1] = n;
            sh[W->ndim] = 2;
            tn_tensor *Wc = tn_select(tn_reshape(W, sh, W->ndim + 1), -1, 0);   /* columns 0, 2, 4, ... */
            L = tn_keep(tn__la_pairs(L2));
            Vc = tn_keep(tn_contiguous(tn__la_from_realform(Wc, n, n)));   /* [x; y] -> x + i y */
        }
        tn_no_grad_end();
        tn_scope_end();
        if (!L || !Vc) { tn_release(L); tn_release(Vc); return NULL; }
        *V = tn__la_record("LinalgEighBackward0", tn__eigh_bw, A, Vc, 1, upper);
        L = tn__la_record("LinalgEighBackward0", tn__eigh_bw, A, L, 0, upper);
        if (!L || !*V) { tn_release(L); tn_release(*V); *V = NULL; return NULL; }
        return L;
    }
    if (realform) {
        /* the eigenvalues only, through the real form of the Hermitian matrix of A's triangle
           (its values; the gradient, as torch's, reaches all of A: R(A) + (R(Ah) - R(A)) detached) */
        tn_scope_begin();
        tn_tensor *Ah = tn__la_herm_of(tn_detach(A), upper);
        tn_tensor *E = tn__la_realform(A), *Eh = tn__la_realform(Ah);
        E = E && Eh ? tn_add(E, tn_sub(Eh, tn_detach(E))) : NULL;
        return tn__scope_return(tn__la_pairs(E ? tn__eigh_impl(E, false, false, NULL, fn) : NULL));
    }
    tn_scope_begin();
    tn_tensor *l = NULL, *v = NULL, *L = NULL;
    if (!(tn__la_routed(A, false) ? tn__la_eigh_dev : tn__la_eigh_raw)(A, upper, vectors, &l, &v, fn)) {
        L = tn_keep(tn_to_dtype(l, tn_dtype_to_real(A->dtype)));
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
static tn_tensor *tn__svd_rec(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **Vh, const char *fn, bool gauge);
static tn_tensor *tn__svd_impl(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **Vh, const char *fn) { return tn__svd_rec(A, uv, full, U, Vh, fn, true); }
/* The complex gauge check (PyTorch's svd_backward: Im diag(skew(U^H gU)) must be close to
   -Im diag(skew(Vh gVh^H)), else the loss depends on the vectors' phases). Each output
   records its own node, so the check sits in one more node, G, between A and the three:
   the U and Vh nodes add their halves into G's saved accumulator acc [..., 2, k] (float64),
   and G's backward, which runs after all of its consumers, checks and clears it and passes
   the gradient on. */
static int tn__svd_gauge_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *acc = nd->nsaved > 0 ? tn_ctx_saved(nd, 0) : NULL;
    if (acc) {
        double *a = (double *)tn_data_ptr(acc);
        const int64_t k = acc->shape[acc->ndim - 1], B = tn_numel(acc) / (2 * (k ? k : 1));
        bool bad = false;
        for (int64_t b = 0; b < B && k; b++)
            for (int64_t i = 0; i < k; i++) {
                const double u = a[(2 * b) * k + i], v = a[(2 * b + 1) * k + i];
                if (!(fabs(u + v) <= 1e-2 + 1e-2 * fabs(v))) bad = true;
            }
        memset(a, 0, (size_t)tn_numel(acc) * sizeof(double));
        if (bad) return TN__FAIL_INT("svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.");
    }
    gin[0] = g;
    return 0;
}
/* G over A (A itself when no gradient is recorded). */
static tn_tensor *tn__svd_gauge(tn_tensor *A, int64_t k) {
    tn_node *nd = tn__fn_node("LinalgSvdBackward0", tn__svd_gauge_bw, &A, 1);
    if (!nd) return A;
    int64_t sh[TN_MAX_DIMS];
    memcpy(sh, A->shape, (size_t)A->ndim * sizeof(int64_t));
    sh[A->ndim - 2] = 2;
    sh[A->ndim - 1] = k;
    tn_tensor *acc = tn_zeros(sh, A->ndim, TN_F64);
    if (acc) tn__node_save(nd, acc);
    else nd->save_failed = true;
    return tn__node_attach(nd, tn_detach(A));
}
/* A U / Vh node's half (row 0 / 1) of the check: the imaginary diagonal of K (skew), into G's acc. */
static void tn__svd_gauge_add(tn_ctx *nd, tn_tensor *K, int row) {
    tn_node *c = nd->nin > 0 ? nd->next[0].fn : NULL;
    if (!c || c->custom_bw != tn__svd_gauge_bw || c->nsaved < 1 || !K) return;
    tn_tensor *acc = c->saved[0];
    tn_no_grad_begin();
    tn_tensor *im = tn_contiguous(tn_to_dtype(tn_imag(tn__diagonal(tn_detach(K), 0, -2, -1)), TN_F64));
    tn_no_grad_end();
    if (!im || tn_numel(im) * 2 != tn_numel(acc)) return;
    const int64_t k = acc->shape[acc->ndim - 1], B = k ? tn_numel(im) / k : 0;
    double *a = (double *)tn_data_ptr(acc);
    const double *x = (const double *)tn_data_ptr(im);
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < k; i++) a[(2 * b + row) * k + i] += x[b * k + i];
}
/* PyTorch's svd_backward (for full_matrices the extra columns of U / rows of Vh get no
   gradient, as torch narrows them). Complex: conjugate transposes, and U's node adds the
   diagonal term i Im(U^H gU)_ii / S_i. */
static int tn__svd_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    const int which = (int)nd->i[0];
    /* (the factors without the gauge check: each output's node recomputes its own, and the
       second-order gradient through one node's factors alone is phase-dependent; their sum,
       linear in the nodes' gradients, is not) */
    tn_tensor *A = tn_ctx_saved(nd, 0), *U = NULL, *Vh = NULL, *S = tn__svd_rec(A, true, false, &U, &Vh, "tn_linalg_svd", false);
    if (!S) return -1;
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n;
    const bool cplx = tn_is_complex(A);
    if (which == 1) {
        if (cplx) g = tn_to_dtype(g, A->dtype);
        gin[0] = m >= n ? tn_matmul(U, tn_mul(tn_unsqueeze(g, -1), Vh)) : tn_matmul(tn_mul(U, tn_unsqueeze(g, -2)), Vh);
        return gin[0] ? 0 : -1;
    }
    tn_tensor *gU = which == 0 ? (nd->i[1] ? tn_narrow(g, -1, 0, k) : g) : NULL;
    tn_tensor *gVh = which == 2 ? (nd->i[1] ? tn_narrow(g, -2, 0, k) : g) : NULL;
    tn_tensor *S2 = tn_mul(S, S);
    tn_tensor *E = tn_add(tn_sub(tn_unsqueeze(S2, -2), tn_unsqueeze(S2, -1)), tn_to(tn_eye(k, k, S->dtype), S->device)), *ret, *gA;
    if (gU) {
        tn_tensor *K = tn_matmul(tn__mH(U), gU);
        K = tn_sub(K, tn__mH(K));
        if (cplx) tn__svd_gauge_add(nd, K, 0);
        ret = tn_mul(K, tn_div(tn_unsqueeze(S, -2), E));
        if (cplx) ret = tn_add(ret, tn_diag_embed(tn_div(tn__diagonal(K, 0, -2, -1), tn_mul_scalar(S, 2))));
    } else {
        tn_tensor *K = tn_matmul(Vh, tn__mH(gVh));
        K = tn_sub(K, tn__mH(K));
        if (cplx) tn__svd_gauge_add(nd, K, 1);
        ret = tn_mul(tn_unsqueeze(S, -1), tn_div(K, E));
    }
    if (m > n && gU) {
        gA = tn_matmul(U, ret);
        tn_tensor *gUSinv = tn_div(gU, tn_unsqueeze(S, -2));
        gA = tn_sub(tn_add(gA, gUSinv), tn_matmul(U, tn_matmul(tn__mH(U), gUSinv)));
        gA = tn_matmul(gA, Vh);
    } else if (m < n && gVh) {
        gA = tn_matmul(ret, Vh);
        tn_tensor *SinvgVh = tn_div(gVh, tn_unsqueeze(S, -1));
        gA = tn_sub(tn_add(gA, SinvgVh), tn_matmul(tn_matmul(SinvgVh, tn__mH(Vh)), Vh));
        gA = tn_matmul(U, gA);
    } else gA = tn_matmul(U, tn_matmul(ret, Vh));
    gin[0] = gA;
    return gin[0] ? 0 : -1;
}
/* S (returned) and, with uv, U and Vh; gauge: complex U and Vh record the gauge check. */
static tn_tensor *tn__svd_rec(tn_tensor *A, bool uv, bool full, tn_tensor **U, tn_tensor **Vh, const char *fn, bool gauge) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", false)) return NULL;
    if (tn__la_finite(fn, A, "contained non-finite values")) return NULL;
    tn_scope_begin();
    tn_tensor *u = NULL, *s = NULL, *vh = NULL, *S = NULL;
    if (!(tn__la_routed(A, true) ? tn__la_svd_dev : tn__la_svd_raw)(A, uv, full, &u, &s, &vh, fn)) {
        S = tn_keep(tn_to_dtype(s, tn_dtype_to_real(A->dtype)));
        if (uv) {
            *U = tn_keep(tn_to_dtype(u, A->dtype));
            *Vh = tn_keep(tn_to_dtype(vh, A->dtype));
            if (!*U || !*Vh) { tn_release(S); tn_release(*U); tn_release(*Vh); S = *U = *Vh = NULL; }
        }
    }
    tn_scope_end();
    if (!S) return NULL;
    const char *name = uv ? "LinalgSvdBackward0" : "LinalgSvdvalsBackward0";
    tn_scope_begin();   /* (G's result: the nodes keep it) */
    tn_tensor *src = uv && gauge && tn_is_complex(A) ? tn__svd_gauge(A, S->shape[S->ndim - 1]) : A;
    if (!src) {   /* (out of memory for G's accumulator: no result without its history) */
        tn_scope_end();
        tn_release(S);
        if (uv) { tn_release(*U); tn_release(*Vh); *U = *Vh = NULL; }
        return NULL;
    }
    if (uv) {
        *U = tn__la_record(name, tn__svd_bw, src, *U, 0, full);
        *Vh = tn__la_record(name, tn__svd_bw, src, *Vh, 2, full);
    }
    S = tn__la_record(name, tn__svd_bw, src, S, 1, full);
    tn_scope_end();
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
/* torch.svd: V (= Vh^H), not Vh; compute_uv = false gives zero U [..., m, m] and V [..., n, n]. */
static tn_tensor *tn__svd_old_impl(tn_tensor *A, bool some, bool compute_uv, tn_tensor **S, tn_tensor **V) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev("tn_svd", A, "input", false)) return NULL;
    tn_scope_begin();
    tn_tensor *U = NULL, *Vh = NULL;
    const int nd = A->ndim;
    if (compute_uv) {
        *S = tn_keep(tn__svd_impl(A, true, !some, &U, &Vh, "tn_svd"));
        *V = *S ? tn_keep(tn__mH(Vh)) : NULL;
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
    const double eps = A->dtype == TN_F32 || A->dtype == TN_C64 ? (double)FLT_EPSILON : DBL_EPSILON;
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
/* PyTorch's pinv_backward: A's gradient for pinv(A)'s gradient g, in terms of P = pinv(A). */
static tn_tensor *tn__pinv_grad(tn_tensor *A, tn_tensor *P, tn_tensor *g) {
    if (!P || !g) return NULL;
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    tn_tensor *Ph = tn__mH(P), *gh = tn__mH(g), *r;
    if (m <= n) {
        tn_tensor *K = tn_matmul(gh, P), *KPh = tn_matmul(K, Ph);
        r = tn_add(tn_sub(tn_sub(KPh, tn__mH(tn_matmul(P, K))), tn_matmul(tn_matmul(A, P), KPh)),
                   tn_matmul(tn_matmul(Ph, P), tn_sub(gh, tn_matmul(K, A))));
    } else {
        tn_tensor *K = tn_matmul(P, gh), *PhK = tn_matmul(Ph, K);
        r = tn_sub(tn_add(tn_sub(tn_matmul(tn_matmul(tn_sub(gh, tn_matmul(A, K)), P), Ph), tn__mH(tn_matmul(K, P))), PhK),
                   tn_matmul(tn_matmul(PhK, P), A));
    }
    return r;
}
/* (pinv(A) recomputed differentiably: double backward) */
static int tn__pinv_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(nd, 0);
    gin[0] = tn__pinv_grad(A, tn__pinv_impl(A, nd->d[0], nd->d[1], nd->i[0] != 0, "tn_linalg_pinv"), g);
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__pinv_impl(tn_tensor *A, double atol, double rtol, bool herm, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", herm)) return NULL;   /* (on a device: its svd or eigh) */
    tn__la_tols(A, &atol, &rtol);   /* (A's: the real form's shape would double the default rtol) */
    tn_scope_begin();
    tn_tensor *keep = NULL, *s = NULL, *U = NULL, *Vh = NULL, *r = NULL;
    tn_no_grad_begin();
    if (tn_is_complex(A)) {   /* pinv(R(A)) = R(pinv(A)); hermitian: of the Hermitian matrix of A's lower triangle */
        tn_tensor *E = tn__la_realform(herm ? tn__la_herm_of(tn_detach(A), false) : tn_detach(A));
        E = E ? tn__pinv_impl(E, atol, rtol, herm, fn) : NULL;
        r = tn_keep(tn__la_from_realform(E, A->shape[A->ndim - 1], A->shape[A->ndim - 2]));
    } else if (!tn__la_kept(A, atol, rtol, herm, &keep, &s, &U, &Vh, fn)) {
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
    if (tn__la_check_dev(fn, A, "A", herm)) return NULL;
    tn__la_tols(A, &atol, &rtol);
    tn_scope_begin();
    if (tn_is_complex(A)) {   /* each singular value twice in the real form */
        tn_tensor *E = tn__la_realform(herm ? tn__la_herm_of(tn_detach(A), false) : tn_detach(A)), *r2 = E ? tn__rank_impl(E, atol, rtol, herm, fn) : NULL;
        return tn__scope_return(r2 ? tn_to_dtype(tn_round(tn_mul_scalar(tn_to_dtype(r2, TN_F64), 0.5)), TN_I64) : NULL);
    }
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
/* PyTorch's linalg_lstsq_backward: through P = pinv(A) (recomputed differentiably),
   gA = pinv_backward(g B^H), gB = P^H g. */
static int tn__lstsq_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(nd, 0), *Bm = tn_ctx_saved(nd, 1), *P = tn__pinv_impl(A, NAN, NAN, false, "tn_linalg_lstsq");
    if (!P) return -1;
    if (tn_ctx_needs_grad(nd, 0) && !(gin[0] = tn__pinv_grad(A, P, tn_matmul(g, tn__mH(Bm))))) return -1;
    if (tn_ctx_needs_grad(nd, 1) && !(gin[1] = tn_matmul(tn__mH(P), g))) return -1;
    return 0;
}
/* lstsq on a device: PyTorch's CUDA driver, gels, by the entry's QR (A of full rank is assumed,
   unchecked, as LAPACK's and cuSOLVER's gels). a [..., m, n] and b [..., m, r] of one batch
   shape. m >= n: A = Q R, X = R^-1 (Q^T B)[:n]; the residuals (m > n) are |(Q^T B)[n:]|^2 per
   column. m < n (the minimum-norm solution): A^T = Q R, R^T Z = B, X = Q [Z; 0]. Complex: the
   same with conjugate transposes (Q^H B, A^H = Q R, R^H Z = B), residuals |.|^2, real. */
static tn_tensor *tn__lstsq_dev(tn_tensor *a, tn_tensor *b, tn_tensor **res) {
    const int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], r = b->shape[b->ndim - 1], B = tn__la_batch(a), k = m < n ? m : n;
    const bool tall = m >= n;
    tn_tensor *cm = tn__la_cm(tall ? a : tn__mH(a)), *tau = tn__la_dnew(a->dtype, a, B, k, 0, 2), *x = tn__la_cm(b);
    if (!cm || !tau || !x || tn__la_run(TN_LA_GEQRF, cm, tau, NULL, NULL, NULL, 0)) return NULL;
    tn_tensor *R = tn_narrow(cm, -1, 0, k), *X;   /* R k x k, column-major */
    if (tall) {
        tn_tensor *top = tn__la_run(TN_LA_ORMQR, cm, tau, x, NULL, NULL, 3) ? NULL : tn_contiguous(tn_narrow(x, -1, 0, n));   /* Q^T B's first n rows */
        R = R ? tn_contiguous(R) : NULL;
        if (!top || !R || tn__la_run(TN_LA_TRSM, R, top, NULL, NULL, NULL, 1)) return NULL;
        X = tn__la_uncm(top, b, n, r);
        int64_t dl = -1;
        tn_tensor *rest = m > n ? tn_narrow(x, -1, n, m - n) : NULL;
        *res = rest ? tn__la_unbatch(tn_sum_dims(tn_square(tn_is_complex(rest) ? tn_abs(rest) : rest), &dl, 1), b, 1)
                    : tn_to(tn_empty(TN_SHAPE(0), tn_dtype_to_real(a->dtype)), a->device);
    } else {
        tn_tensor *Rt = R ? tn_contiguous(tn__mH(R)) : NULL;   /* R^H, lower, column-major */
        if (!Rt || tn__la_run(TN_LA_TRSM, Rt, x, NULL, NULL, NULL, 0)) return NULL;
        tn_tensor *parts[2] = {x, tn_zeros_like(tn__la_dnew(a->dtype, a, B, r, n - m, 3))};
        tn_tensor *z = parts[1] ? tn_contiguous(tn_cat(parts, 2, .dim = -1)) : NULL;   /* [Z; 0], column-major n x r */
        if (!z || tn__la_run(TN_LA_ORMQR, cm, tau, z, NULL, NULL, 1)) return NULL;
        X = tn__la_uncm(z, b, n, r);
        *res = tn_to(tn_empty(TN_SHAPE(0), tn_dtype_to_real(a->dtype)), a->device);
    }
    tn_tensor *ins[2] = {a, b};
    tn_node *nd = X && *res ? tn__fn_node("LinalgLstsqBackward0", tn__lstsq_bw, ins, 2) : NULL;
    if (nd) { tn__node_save(nd, a); tn__node_save(nd, b); }
    return X && *res ? tn__node_attach(nd, tn_contiguous(X)) : NULL;
}
static tn_tensor *tn__lstsq_impl(tn_tensor *A, tn_tensor *Bm, double rcond, const char *driver, tn_tensor **res, tn_tensor **rank, tn_tensor **sv) {
    TN__CHECK_NULL(A, Bm);
    const char *fn = "tn_linalg_lstsq";
    if (tn__la_check_dev(fn, A, "A", false) || tn__check_same_device(fn, A, Bm)) return NULL;
    if (Bm->ndim < 1) return (tn_tensor *)tn__error("%s: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1", fn);
    if (Bm->dtype != A->dtype)
        return (tn_tensor *)tn__error("%s: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s", fn, tn_dtype_name(A->dtype), tn_dtype_name(Bm->dtype));
    int drv = 1;   /* gels, gelsy (the CPU default), gelsd, gelss */
    static const char *const drivers[] = {"gels", "gelsy", "gelsd", "gelss"};
    if (driver) {
        for (drv = 0; drv < 4 && strcmp(driver, drivers[drv]); drv++) {}
        if (drv == 4) return (tn_tensor *)tn__error("%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)", fn);
        if (drv != 0 && A->device != TN_CPU) return (tn_tensor *)tn__error("%s: torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA", fn);
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
    if (A->device != TN_CPU || (drv == 0 && tn__la_routed(A, false))) {   /* gels (CUDA's only driver; the CPU's under TENSOR_LAPACK): rank and singular values empty, as torch's */
        memcpy(sa + bnd, b->shape + b->ndim - 2, 2 * sizeof(int64_t));
        X = tn__lstsq_dev(a, tn_expand(b, sa, bnd + 2), res);
        if (X && vec) X = tn_squeeze_dim(X, -1);
        *rank = X ? tn_to(tn_empty(TN_SHAPE(0), TN_I64), A->device) : NULL;
        *sv = X ? tn_to(tn_empty(TN_SHAPE(0), tn_dtype_to_real(A->dtype)), A->device) : NULL;
        if (!X || !*res || !*rank || !*sv) { *res = *rank = *sv = NULL; return tn__scope_return(NULL); }
        *res = tn_keep(*res); *rank = tn_keep(*rank); *sv = tn_keep(*sv);
        return tn__scope_return(X);
    }
    double atol = 0, rtol = isnan(rcond) ? (A->dtype == TN_F32 || A->dtype == TN_C64 ? (double)FLT_EPSILON : DBL_EPSILON) * (double)(m > n ? m : n) : rcond;
    tn_tensor *P = tn__pinv_impl(a, atol, rtol, false, fn);
    X = P ? tn_matmul(P, b) : NULL;
    if (X && vec) X = tn_squeeze_dim(X, -1);
    /* rank (gelsy, gelsd, gelss), singular values (gelsd, gelss), residuals (not gelsy:
       m > n and every matrix of full rank) */
    tn_tensor *keep = NULL, *s = NULL, *rk = NULL, *empty = X ? tn_empty(TN_SHAPE(0), tn_dtype_to_real(A->dtype)) : NULL;
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
            tn_tensor *d = tn_sub(tn_matmul(a, Xd), b), *r = tn_sum_dims(tn_square(tn_is_complex(d) ? tn_abs(d) : d), &dr, 1);
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
    if (!strcmp(p, "fro")) return tn_sqrt(tn_sum_dims(tn_square(tn_is_complex(A) ? tn_abs(A) : A), d2, 2));
    if (!strcmp(p, "nuc")) return tn__la_svd_norm(A, 0);
    const bool rows = !strcmp(p, "inf") || !strcmp(p, "-inf"), neg = p[0] == '-';
    tn_tensor *sums = tn_sum_dims(tn_abs(A), rows ? &d2[1] : &d2[0], 1);
    return neg ? tn_amin(sums, &dl, 1) : tn_amax(sums, &dl, 1);
}
static tn_tensor *tn__cond_impl(tn_tensor *A, const char *p) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_cond";
    if (tn__la_check_dev(fn, A, "A", false)) return NULL;
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
        if (s && k == 0) r = tn_to(tn_zeros(s->shape, s->ndim - 1, tn_dtype_to_real(A->dtype)), A->device);
        else if (s) {
            tn_tensor *mx = tn_select(s, -1, 0), *mn = tn_select(s, -1, k - 1);
            r = o == 0 ? tn_div(mx, mn) : tn_div(mn, mx);
        }
    } else if (A->shape[A->ndim - 1] != A->shape[A->ndim - 2]) {
        tn__error("%s: linalg.cond(ord=%s): A must be batches of square matrices, but they are %lld by %lld matrices", fn, p,
                  (long long)A->shape[A->ndim - 2], (long long)A->shape[A->ndim - 1]);
    } else if (tn_numel(A) == 0) {
        r = tn_to(tn_zeros(A->shape, A->ndim - 2, tn_dtype_to_real(A->dtype)), A->device);
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
