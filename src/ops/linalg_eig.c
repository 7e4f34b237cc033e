/* ---- torch.linalg.eig, eigvals: the eigen decomposition of a general square matrix ----
   LAPACK's geev path (the one PyTorch calls), written out so that the eigenvalues come in
   LAPACK's order and the eigenvectors with its normalisation:
     gebal   permute off isolated eigenvalues, scale rows and columns by powers of 2
     gehd2   Householder reduction to upper Hessenberg form; Q accumulated (orghr)
     lahqr   real input: Francis double-shift QR -> real Schur form (2x2 blocks: complex
             conjugate pairs, standardised by lanv2); complex input: single-shift complex QR
             -> complex Schur form. (LAPACK's hseqr takes lahqr below n = 75 and its
             aggressive-early-deflation laqr0 above: the values agree, their order there
             may not.)
     trevc   eigenvectors of the (quasi-)triangular Schur form by back-substitution (tiny
             pivots perturbed to eps * |lambda|, as laln2 / latrs), Q applied
     gebak   the balancing undone; then geev's normalisation: Euclidean norm 1, the
             largest-magnitude component real (a real input's real eigenvectors keep their sign)
   The matrices are held column-major (A(i, j) = a[i + j n]), LAPACK's layout, so that the
   loops are LAPACK's. Real input gives complex output, as PyTorch: a conjugate pair's
   vectors are x + i y and x - i y. The backward is PyTorch's linalg_eig_backward. */

/* geev's failure (PyTorch's words), with lahqr's info */
#define TN__EIG_NOCONV "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: %d)."
/* an exceptional shift after this many QR sweeps without a deflation: 10 in the LAPACK that
   Debian's torch calls (OpenBLAS 0.3.21's; LAPACK 3.7's dlahqr had 6): its choice decides the
   Schur form, and so the eigenvalues' order and the vectors' signs */
#define TN__EIG_KEXSH 10
/* the overflow guard of the back-substitution: x is rescaled before it passes this */
#define TN__EIG_BIG 1e150

/* gebal's loops, for real (T double) and complex (T tn__cplx) matrices: ABS(x) |x|, NZ(x) x != 0,
   SCAL(x, s) x times the real s. ilo..ihi (0-based) is the block left after permuting; scale
   holds the permutations outside it and the scale factors inside. */
/* @template TN__EIG_GEBAL(NAME, T, ABS, NZ, SCAL) */
static void NAME(T *a, int64_t n, int64_t *ilo, int64_t *ihi, double *scale) {
#define A_(i, j) a[(i) + (j) * n]
    int64_t k = 0, l = n - 1;
    bool found = true;
    /* rows with no off-diagonal entry in columns 0..l isolate an eigenvalue: to the bottom */
    while (found && l >= 0) {
        found = false;
        for (int64_t j = l; j >= 0 && !found; j--) {
            bool iso = true;
            for (int64_t i = 0; i <= l && iso; i++) if (i != j && NZ(A_(j, i))) iso = false;
            if (!iso) continue;
            scale[l] = (double)j;
            if (j != l) {
                for (int64_t r = 0; r <= l; r++) { T t = A_(r, j); A_(r, j) = A_(r, l); A_(r, l) = t; }
                for (int64_t c = k; c < n; c++) { T t = A_(j, c); A_(j, c) = A_(l, c); A_(l, c) = t; }
            }
            if (l == 0) { scale[0] = 1; *ilo = k; *ihi = 0; return; }   /* (1-based, LAPACK's index 1 there is the scale 1) */
            l--;
            found = true;
        }
    }
    /* columns with no off-diagonal entry in rows k..l: to the left */
    found = true;
    while (found) {
        found = false;
        for (int64_t j = k; j <= l && !found; j++) {
            bool iso = true;
            for (int64_t i = k; i <= l && iso; i++) if (i != j && NZ(A_(i, j))) iso = false;
            if (!iso) continue;
            scale[k] = (double)j;
            if (j != k) {
                for (int64_t r = 0; r <= l; r++) { T t = A_(r, j); A_(r, j) = A_(r, k); A_(r, k) = t; }
                for (int64_t c = k; c < n; c++) { T t = A_(j, c); A_(j, c) = A_(k, c); A_(k, c) = t; }
            }
            k++;
            found = true;
        }
    }
    for (int64_t i = k; i <= l; i++) scale[i] = 1;
    /* scale row and column i by powers of 2 until their norms balance */
    const double sfmin1 = DBL_MIN / DBL_EPSILON, sfmax1 = 1 / sfmin1, sfmin2 = sfmin1 * 2, sfmax2 = 1 / sfmin2;
    bool noconv = true;
    while (noconv) {
        noconv = false;
        for (int64_t i = k; i <= l; i++) {
            double c = 0, r = 0, ca = 0, ra = 0, cm = 0, rm = 0;
            for (int64_t j = k; j <= l; j++) { cm = fmax(cm, ABS(A_(j, i))); rm = fmax(rm, ABS(A_(i, j))); }
            if (cm > 0) for (int64_t j = k; j <= l; j++) { double t = ABS(A_(j, i)) / cm; c += t * t; }
            if (rm > 0) for (int64_t j = k; j <= l; j++) { double t = ABS(A_(i, j)) / rm; r += t * t; }
            c = cm * sqrt(c);
            r = rm * sqrt(r);
            for (int64_t j = 0; j <= l; j++) ca = fmax(ca, ABS(A_(j, i)));
            for (int64_t j = k; j < n; j++) ra = fmax(ra, ABS(A_(i, j)));
            if (c == 0 || r == 0) continue;
            double g = r / 2, f = 1;
            const double s = c + r;
            while (c < g && fmax(f, fmax(c, ca)) < sfmax2 && fmin(r, fmin(g, ra)) > sfmin2) { f *= 2; c *= 2; ca *= 2; r /= 2; g /= 2; ra /= 2; }
            g = c / 2;
            while (g >= r && fmax(r, ra) < sfmax2 && fmin(fmin(f, c), fmin(g, ca)) > sfmin2) { f /= 2; c /= 2; g /= 2; ca /= 2; r *= 2; ra *= 2; }
            if (c + r >= 0.95 * s) continue;
            if (f < 1 && scale[i] < 1 && f * scale[i] <= sfmin1) continue;
            if (f > 1 && scale[i] > 1 && scale[i] >= sfmax1 / f) continue;
            scale[i] *= f;
            noconv = true;
            for (int64_t j = k; j < n; j++) A_(i, j) = SCAL(A_(i, j), 1 / f);
            for (int64_t j = 0; j <= l; j++) A_(j, i) = SCAL(A_(j, i), f);
        }
    }
    *ilo = k;
    *ihi = l;
#undef A_
}
/* @end TN__EIG_GEBAL */
static double tn__eig_abs_r(double x) { return fabs(x); }
static bool tn__eig_nz_r(double x) { return x != 0; }
static double tn__eig_scal_r(double x, double s) { return x * s; }
static bool tn__eig_nz_c(tn__cplx x) { return x.re != 0 || x.im != 0; }
TN__EIG_GEBAL(tn__eig_gebal, double, tn__eig_abs_r, tn__eig_nz_r, tn__eig_scal_r)
TN__EIG_GEBAL(tn__eig_gebal_c, tn__cplx, tn__cabs, tn__eig_nz_c, tn__cscale)

/* gebak on the eigenvectors v [n, n] (column-major, complex): rows scaled, permutations undone. */
static void tn__eig_gebak(tn__cplx *v, int64_t n, int64_t ilo, int64_t ihi, const double *scale) {
    for (int64_t i = ilo; i <= ihi; i++)
        for (int64_t c = 0; c < n; c++) v[i + c * n] = tn__cscale(v[i + c * n], scale[i]);
    for (int64_t ii = 0; ii < n; ii++) {
        int64_t i = ii;
        if (i >= ilo && i <= ihi) continue;
        if (i < ilo) i = ilo - 1 - ii;
        const int64_t k = (int64_t)scale[i];
        if (k == i) continue;
        for (int64_t c = 0; c < n; c++) { tn__cplx t = v[i + c * n]; v[i + c * n] = v[k + c * n]; v[k + c * n] = t; }
    }
}

/* dlarfg as torch's LAPACK rounds it (tn__la_larfg's reflector, other bits): OpenBLAS's dnrm2
   sums the squares in x87 extended precision (long double here; where that is double, or the
   sum leaves its range, the scaled sum), and dlapy2 is w sqrt(1 + (z/w)^2), not hypot. The
   double-shift QR's deflations, and so the 2x2 blocks of complex pairs (the phase of their
   eigenvectors), change with the last bit of these reflectors: with them lahqr gives
   dlahqr's Schur form of the same Hessenberg matrix. */
static double tn__eig_larfg(double *x, int64_t len) {
    if (len <= 1) return 0;
    long double ss = 0;
    for (int64_t i = 1; i < len; i++) ss += (long double)x[i] * x[i];
    double xn = (double)sqrtl(ss);
    if (!isfinite(xn) || (xn == 0 && ss != 0) || (xn < DBL_MIN && xn > 0)) xn = tn__la_nrm2(x + 1, len - 1, 1);
    else if (xn == 0) for (int64_t i = 1; i < len; i++) if (x[i] != 0) { xn = tn__la_nrm2(x + 1, len - 1, 1); break; }
    if (xn == 0) return 0;
    const double alpha = x[0], w = fmax(fabs(alpha), xn), z = fmin(fabs(alpha), xn);
    const double r = z == 0 || w > DBL_MAX ? w : w * sqrt(1 + (z / w) * (z / w));
    const double beta = -copysign(r, alpha), tau = (beta - alpha) / beta, s = 1 / (alpha - beta);
    for (int64_t i = 1; i < len; i++) x[i] *= s;
    x[0] = beta;
    return tau;
}
/* gehd2 + orghr (real): a [n, n] to upper Hessenberg form in rows/columns ilo..ihi; q (when
   not NULL) gets the orthogonal Q with A = Q H Q^T. tau: n scratch. */
static void tn__eig_gehrd(double *a, int64_t n, int64_t ilo, int64_t ihi, double *q, double *tau) {
#define A_(i, j) a[(i) + (j) * n]
    for (int64_t i = ilo; i < ihi; i++) {
        double *v = &A_(i + 1, i);
        const int64_t len = ihi - i;
        tau[i] = tn__eig_larfg(v, len);
        if (tau[i] == 0) continue;
        const double beta = v[0], t = tau[i];
        v[0] = 1;
        for (int64_t r = 0; r <= ihi; r++) {   /* A (I - t v v^T) on columns i+1..ihi */
            double s = 0;
            for (int64_t j = 0; j < len; j++) s += A_(r, i + 1 + j) * v[j];
            s *= t;
            for (int64_t j = 0; j < len; j++) A_(r, i + 1 + j) -= s * v[j];
        }
        for (int64_t c = i + 1; c < n; c++) {  /* (I - t v v^T) A on rows i+1..ihi */
            double *col = &A_(i + 1, c), s = tn__la_dot(v, col, len) * t;
            tn__la_axpy(col, -s, v, len);
        }
        v[0] = beta;
    }
    if (q) {
        for (int64_t i = 0; i < n * n; i++) q[i] = 0;
        for (int64_t i = 0; i < n; i++) q[i + i * n] = 1;
        for (int64_t i = ihi - 1; i >= ilo; i--) {
            if (tau[i] == 0) continue;
            double *v = &A_(i + 1, i);
            const double beta = v[0];
            const int64_t len = ihi - i;
            v[0] = 1;
            for (int64_t c = i + 1; c <= ihi; c++) {
                double *col = q + (i + 1) + c * n, s = tn__la_dot(v, col, len) * tau[i];
                tn__la_axpy(col, -s, v, len);
            }
            v[0] = beta;
        }
    }
    for (int64_t j = 0; j < n; j++)   /* below the subdiagonal: the reflectors, now zeros */
        for (int64_t i = j + 2; i < n; i++) A_(i, j) = 0;
#undef A_
}
/* The complex form: H_i = I - tau v v^H, applied as A H_i and H_i^H A (zgehd2, zunghr). */
static void tn__eig_gehrd_c(tn__cplx *a, int64_t n, int64_t ilo, int64_t ihi, tn__cplx *q, tn__cplx *tau) {
#define A_(i, j) a[(i) + (j) * n]
    for (int64_t i = ilo; i < ihi; i++) {
        tn__cplx *v = &A_(i + 1, i);
        const int64_t len = ihi - i;
        tau[i] = tn__la_larfg_c(v, len);
        if (tau[i].re == 0 && tau[i].im == 0) continue;
        const tn__cplx beta = v[0], t = tau[i];
        v[0] = tn__cx(1, 0);
        for (int64_t r = 0; r <= ihi; r++) {
            tn__cplx s = tn__cx(0, 0);
            for (int64_t j = 0; j < len; j++) s = tn__cadd(s, tn__cmul(A_(r, i + 1 + j), v[j]));
            s = tn__cmul(s, t);
            for (int64_t j = 0; j < len; j++) A_(r, i + 1 + j) = tn__csub(A_(r, i + 1 + j), tn__cmul(s, tn__cconj(v[j])));
        }
        for (int64_t c = i + 1; c < n; c++) tn__la_refl_c(&A_(i + 1, c), v, tn__cconj(t), len);
        v[0] = beta;
    }
    if (q) {
        for (int64_t i = 0; i < n * n; i++) q[i] = tn__cx(0, 0);
        for (int64_t i = 0; i < n; i++) q[i + i * n] = tn__cx(1, 0);
        for (int64_t i = ihi - 1; i >= ilo; i--) {
            if (tau[i].re == 0 && tau[i].im == 0) continue;
            tn__cplx *v = &A_(i + 1, i);
            const tn__cplx beta = v[0];
            v[0] = tn__cx(1, 0);
            for (int64_t c = i + 1; c <= ihi; c++) tn__la_refl_c(q + (i + 1) + c * n, v, tau[i], ihi - i);
            v[0] = beta;
        }
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = j + 2; i < n; i++) A_(i, j) = tn__cx(0, 0);
#undef A_
}

/* dlanv2: the Schur factorisation of a real 2x2 [a b; c d] (in place) by the rotation
   (cs, sn); complex eigenvalues leave a == d and b c < 0. (rt1r, rt1i), (rt2r, rt2i): its
   eigenvalues, the one with the positive imaginary part first. */
static void tn__eig_lanv2(double *a, double *b, double *c, double *d, double *rt1r, double *rt1i, double *rt2r, double *rt2i, double *cs, double *sn) {
    const double eps = DBL_EPSILON;
    double A = *a, B = *b, C = *c, D = *d;
    if (C == 0) { *cs = 1; *sn = 0; }
    else if (B == 0) {   /* swap rows and columns */
        *cs = 0; *sn = 1;
        const double t = D; D = A; A = t; B = -C; C = 0;
    } else if (A - D == 0 && copysign(1, B) != copysign(1, C)) { *cs = 1; *sn = 0; }
    else {
        double temp = A - D, p = 0.5 * temp;
        const double bcmax = fmax(fabs(B), fabs(C)), bcmis = fmin(fabs(B), fabs(C)) * copysign(1, B) * copysign(1, C);
        double scale = fmax(fabs(p), bcmax), z = (p / scale) * p + (bcmax / scale) * bcmis;
        if (z >= 4 * eps) {   /* real eigenvalues */
            z = p + copysign(sqrt(scale) * sqrt(z), p);
            A = D + z;
            D = D - (bcmax / z) * bcmis;
            const double tau = hypot(C, z);
            *cs = z / tau; *sn = C / tau;
            B = B - C; C = 0;
        } else {              /* complex or nearly equal real eigenvalues: equal diagonal */
            const double sigma = B + C, tau = hypot(sigma, temp);
            *cs = sqrt(0.5 * (1 + fabs(sigma) / tau));
            *sn = -(p / (tau * *cs)) * copysign(1, sigma);
            const double aa = A * *cs + B * *sn, bb = -A * *sn + B * *cs, cc = C * *cs + D * *sn, dd = -C * *sn + D * *cs;
            A = aa * *cs + cc * *sn; B = bb * *cs + dd * *sn; C = -aa * *sn + cc * *cs; D = -bb * *sn + dd * *cs;
            temp = 0.5 * (A + D);
            A = temp; D = temp;
            if (C != 0) {
                if (B != 0) {
                    if (copysign(1, B) == copysign(1, C)) {   /* real after all: triangular */
                        const double sab = sqrt(fabs(B)), sac = sqrt(fabs(C));
                        p = copysign(sab * sac, C);
                        const double t1 = 1 / sqrt(fabs(B + C));
                        A = temp + p; D = temp - p;
                        B = B - C; C = 0;
                        const double cs1 = sab * t1, sn1 = sac * t1, t2 = *cs * cs1 - *sn * sn1;
                        *sn = *cs * sn1 + *sn * cs1;
                        *cs = t2;
                    }
                } else {
                    B = -C; C = 0;
                    const double t = *cs; *cs = -*sn; *sn = t;
                }
            }
        }
    }
    *a = A; *b = B; *c = C; *d = D;
    *rt1r = A; *rt2r = D;
    if (C == 0) { *rt1i = 0; *rt2i = 0; }
    else { *rt1i = sqrt(fabs(B)) * sqrt(fabs(C)); *rt2i = -*rt1i; }
}
/* rows (stride inc) x, y of len entries: x' = c x + s y, y' = c y - s x (drot) */
static void tn__eig_rot(double *x, double *y, int64_t len, int64_t inc, double c, double s) {
    for (int64_t i = 0; i < len; i++) {
        const double a = x[i * inc], b = y[i * inc];
        x[i * inc] = c * a + s * b;
        y[i * inc] = c * b - s * a;
    }
}

/* dlahqr: the real Schur form of the Hessenberg h (rows/columns ilo..ihi active), its
   eigenvalues in (wr, wi); wantt: the whole T and the Schur vectors accumulated into z.
   Returns 0, or 1 + the row that did not converge. */
static int64_t tn__eig_lahqr(double *h, int64_t n, int64_t ilo, int64_t ihi, double *wr, double *wi, double *z, bool wantt) {
#define H_(i, j) h[(i) + (j) * n]
#define Z_(i, j) z[(i) + (j) * n]
    for (int64_t i = 0; i < n; i++) if (i < ilo || i > ihi) { wr[i] = H_(i, i); wi[i] = 0; }
    if (n == 0) return 0;
    if (ilo == ihi) { wr[ilo] = H_(ilo, ilo); wi[ilo] = 0; return 0; }
    const int64_t nh = ihi - ilo + 1, itmax = 30 * (nh > 10 ? nh : 10);
    const double ulp = DBL_EPSILON, smlnum = DBL_MIN * ((double)nh / ulp);
    int64_t i1 = 0, i2 = n - 1, kdefl = 0, i = ihi;
    while (i >= ilo) {
        int64_t l = ilo, its, k = 0;
        bool conv = false;
        for (its = 0; its <= itmax; its++) {
            for (k = i; k > l; k--) {   /* a negligible subdiagonal entry (Ahues & Tisseur) */
                if (fabs(H_(k, k - 1)) <= smlnum) break;
                double tst = fabs(H_(k - 1, k - 1)) + fabs(H_(k, k));
                if (tst == 0) {
                    if (k - 2 >= ilo) tst += fabs(H_(k - 1, k - 2));
                    if (k + 1 <= ihi) tst += fabs(H_(k + 1, k));
                }
                if (fabs(H_(k, k - 1)) <= ulp * tst) {
                    const double ab = fmax(fabs(H_(k, k - 1)), fabs(H_(k - 1, k))), ba = fmin(fabs(H_(k, k - 1)), fabs(H_(k - 1, k)));
                    const double aa = fmax(fabs(H_(k, k)), fabs(H_(k - 1, k - 1) - H_(k, k))), bb = fmin(fabs(H_(k, k)), fabs(H_(k - 1, k - 1) - H_(k, k)));
                    const double s = aa + ab;
                    if (ba * (ab / s) <= fmax(smlnum, ulp * (bb * (aa / s)))) break;
                }
            }
            l = k;
            if (l > ilo) H_(l, l - 1) = 0;
            if (l >= i - 1) { conv = true; break; }
            kdefl++;
            if (!wantt) { i1 = l; i2 = i; }
            double h11, h12, h21, h22, s;
            if (kdefl % (2 * TN__EIG_KEXSH) == 0) {   /* exceptional shifts */
                s = fabs(H_(i, i - 1)) + fabs(H_(i - 1, i - 2));
                h11 = 0.75 * s + H_(i, i); h12 = -0.4375 * s; h21 = s; h22 = h11;
            } else if (kdefl % TN__EIG_KEXSH == 0) {
                s = fabs(H_(l + 1, l)) + fabs(H_(l + 2, l + 1));
                h11 = 0.75 * s + H_(l, l); h12 = -0.4375 * s; h21 = s; h22 = h11;
            } else { h11 = H_(i - 1, i - 1); h21 = H_(i, i - 1); h12 = H_(i - 1, i); h22 = H_(i, i); }
            double rt1r, rt1i, rt2r, rt2i;   /* Francis' double shift */
            s = fabs(h11) + fabs(h12) + fabs(h21) + fabs(h22);
            if (s == 0) { rt1r = rt1i = rt2r = rt2i = 0; }
            else {
                h11 /= s; h21 /= s; h12 /= s; h22 /= s;
                const double tr = (h11 + h22) / 2, det = (h11 - tr) * (h22 - tr) - h12 * h21, rtdisc = sqrt(fabs(det));
                if (det >= 0) { rt1r = tr * s; rt2r = rt1r; rt1i = rtdisc * s; rt2i = -rt1i; }
                else {   /* real shifts: the one nearer h22, twice */
                    rt1r = tr + rtdisc; rt2r = tr - rtdisc;
                    if (fabs(rt1r - h22) <= fabs(rt2r - h22)) { rt1r *= s; rt2r = rt1r; }
                    else { rt2r *= s; rt1r = rt2r; }
                    rt1i = rt2i = 0;
                }
            }
            double v[3] = {0, 0, 0};
            int64_t m;
            for (m = i - 2; m >= l; m--) {   /* two consecutive small subdiagonals */
                double h21s = H_(m + 1, m);
                s = fabs(H_(m, m) - rt2r) + fabs(rt2i) + fabs(h21s);
                h21s = H_(m + 1, m) / s;
                v[0] = h21s * H_(m, m + 1) + (H_(m, m) - rt1r) * ((H_(m, m) - rt2r) / s) - rt1i * (rt2i / s);
                v[1] = h21s * (H_(m, m) + H_(m + 1, m + 1) - rt1r - rt2r);
                v[2] = h21s * H_(m + 2, m + 1);
                s = fabs(v[0]) + fabs(v[1]) + fabs(v[2]);
                v[0] /= s; v[1] /= s; v[2] /= s;
                if (m == l) break;
                if (fabs(H_(m, m - 1)) * (fabs(v[1]) + fabs(v[2])) <= ulp * fabs(v[0]) * (fabs(H_(m - 1, m - 1)) + fabs(H_(m, m)) + fabs(H_(m + 1, m + 1)))) break;
            }
            for (k = m; k <= i - 1; k++) {   /* the double-shift QR step: chase the bulge */
                const int64_t nr = i - k + 1 < 3 ? i - k + 1 : 3;
                if (k > m) for (int64_t j = 0; j < nr; j++) v[j] = H_(k + j, k - 1);
                const double t1 = tn__eig_larfg(v, nr);
                if (k > m) {
                    H_(k, k - 1) = v[0];
                    H_(k + 1, k - 1) = 0;
                    if (k < i - 1) H_(k + 2, k - 1) = 0;
                } else if (m > l) H_(k, k - 1) *= 1 - t1;
                const double v2 = v[1], t2 = t1 * v2;
                if (nr == 3) {
                    const double v3 = v[2], t3 = t1 * v3;
                    for (int64_t j = k; j <= i2; j++) {
                        const double sum = H_(k, j) + v2 * H_(k + 1, j) + v3 * H_(k + 2, j);
                        H_(k, j) -= sum * t1; H_(k + 1, j) -= sum * t2; H_(k + 2, j) -= sum * t3;
                    }
                    for (int64_t j = i1; j <= (k + 3 < i ? k + 3 : i); j++) {
                        const double sum = H_(j, k) + v2 * H_(j, k + 1) + v3 * H_(j, k + 2);
                        H_(j, k) -= sum * t1; H_(j, k + 1) -= sum * t2; H_(j, k + 2) -= sum * t3;
                    }
                    if (wantt)
                        for (int64_t j = ilo; j <= ihi; j++) {
                            const double sum = Z_(j, k) + v2 * Z_(j, k + 1) + v3 * Z_(j, k + 2);
                            Z_(j, k) -= sum * t1; Z_(j, k + 1) -= sum * t2; Z_(j, k + 2) -= sum * t3;
                        }
                } else if (nr == 2) {
                    for (int64_t j = k; j <= i2; j++) {
                        const double sum = H_(k, j) + v2 * H_(k + 1, j);
                        H_(k, j) -= sum * t1; H_(k + 1, j) -= sum * t2;
                    }
                    for (int64_t j = i1; j <= i; j++) {
                        const double sum = H_(j, k) + v2 * H_(j, k + 1);
                        H_(j, k) -= sum * t1; H_(j, k + 1) -= sum * t2;
                    }
                    if (wantt)
                        for (int64_t j = ilo; j <= ihi; j++) {
                            const double sum = Z_(j, k) + v2 * Z_(j, k + 1);
                            Z_(j, k) -= sum * t1; Z_(j, k + 1) -= sum * t2;
                        }
                }
            }
        }
        if (!conv) return i + 1;
        if (l == i) { wr[i] = H_(i, i); wi[i] = 0; }
        else {   /* a 2x2 block split off: to standard form */
            double cs, sn;
            tn__eig_lanv2(&H_(i - 1, i - 1), &H_(i - 1, i), &H_(i, i - 1), &H_(i, i), &wr[i - 1], &wi[i - 1], &wr[i], &wi[i], &cs, &sn);
            if (wantt) {
                if (i2 > i) tn__eig_rot(&H_(i - 1, i + 1), &H_(i, i + 1), i2 - i, n, cs, sn);
                tn__eig_rot(&H_(i1, i - 1), &H_(i1, i), i - i1 - 1, 1, cs, sn);
                tn__eig_rot(&Z_(ilo, i - 1), &Z_(ilo, i), ihi - ilo + 1, 1, cs, sn);
            }
        }
        kdefl = 0;
        i = l - 1;
    }
    return 0;
#undef H_
#undef Z_
}

/* zlahqr: the complex Schur form of the Hessenberg h, its eigenvalues in w; wantt: the whole
   T and the Schur vectors accumulated into z. Returns 0, or 1 + the row that did not converge. */
static int64_t tn__eig_lahqr_c(tn__cplx *h, int64_t n, int64_t ilo, int64_t ihi, tn__cplx *w, tn__cplx *z, bool wantt) {
#define H_(i, j) h[(i) + (j) * n]
#define Z_(i, j) z[(i) + (j) * n]
    for (int64_t i = 0; i < n; i++) if (i < ilo || i > ihi) w[i] = H_(i, i);
    if (n == 0) return 0;
    if (ilo == ihi) { w[ilo] = H_(ilo, ilo); return 0; }
    const int64_t jlo = wantt ? 0 : ilo, jhi = wantt ? n - 1 : ihi;
    for (int64_t i = ilo + 1; i <= ihi; i++)   /* real subdiagonal entries */
        if (H_(i, i - 1).im != 0) {
            tn__cplx sc = tn__cscale(H_(i, i - 1), 1 / tn__cabs1(H_(i, i - 1)));
            sc = tn__cscale(tn__cconj(sc), 1 / tn__cabs(sc));
            H_(i, i - 1) = tn__cx(tn__cabs(H_(i, i - 1)), 0);
            for (int64_t j = i; j <= jhi; j++) H_(i, j) = tn__cmul(sc, H_(i, j));
            for (int64_t j = jlo; j <= (jhi < i + 1 ? jhi : i + 1); j++) H_(j, i) = tn__cmul(tn__cconj(sc), H_(j, i));
            if (wantt) for (int64_t j = ilo; j <= ihi; j++) Z_(j, i) = tn__cmul(tn__cconj(sc), Z_(j, i));
        }
    const int64_t nh = ihi - ilo + 1, itmax = 30 * (nh > 10 ? nh : 10);
    const double ulp = DBL_EPSILON, smlnum = DBL_MIN * ((double)nh / ulp);
    int64_t i1 = 0, i2 = n - 1, kdefl = 0, i = ihi;
    while (i >= ilo) {
        int64_t l = ilo, k = 0;
        bool conv = false;
        for (int64_t its = 0; its <= itmax; its++) {
            for (k = i; k > l; k--) {
                if (tn__cabs1(H_(k, k - 1)) <= smlnum) break;
                double tst = tn__cabs1(H_(k - 1, k - 1)) + tn__cabs1(H_(k, k));
                if (tst == 0) {
                    if (k - 2 >= ilo) tst += fabs(H_(k - 1, k - 2).re);
                    if (k + 1 <= ihi) tst += fabs(H_(k + 1, k).re);
                }
                if (fabs(H_(k, k - 1).re) <= ulp * tst) {
                    const double ab = fmax(tn__cabs1(H_(k, k - 1)), tn__cabs1(H_(k - 1, k))), ba = fmin(tn__cabs1(H_(k, k - 1)), tn__cabs1(H_(k - 1, k)));
                    const tn__cplx dd = tn__csub(H_(k - 1, k - 1), H_(k, k));
                    const double aa = fmax(tn__cabs1(H_(k, k)), tn__cabs1(dd)), bb = fmin(tn__cabs1(H_(k, k)), tn__cabs1(dd));
                    const double s = aa + ab;
                    if (ba * (ab / s) <= fmax(smlnum, ulp * (bb * (aa / s)))) break;
                }
            }
            l = k;
            if (l > ilo) H_(l, l - 1) = tn__cx(0, 0);
            if (l >= i) { conv = true; break; }
            kdefl++;
            if (!wantt) { i1 = l; i2 = i; }
            tn__cplx t;
            if (kdefl % (2 * TN__EIG_KEXSH) == 0) t = tn__cadd(tn__cx(0.75 * fabs(H_(i, i - 1).re), 0), H_(i, i));   /* exceptional shifts */
            else if (kdefl % TN__EIG_KEXSH == 0) t = tn__cadd(tn__cx(0.75 * fabs(H_(l + 1, l).re), 0), H_(l, l));
            else {   /* Wilkinson's shift */
                t = H_(i, i);
                const tn__cplx u = tn__cmul(tn__csqrt(H_(i - 1, i)), tn__csqrt(H_(i, i - 1)));
                double s = tn__cabs1(u);
                if (s != 0) {
                    const tn__cplx x = tn__cscale(tn__csub(H_(i - 1, i - 1), t), 0.5);
                    const double sx = tn__cabs1(x);
                    s = fmax(s, sx);
                    const tn__cplx xs = tn__cscale(x, 1 / s), us = tn__cscale(u, 1 / s);
                    tn__cplx y = tn__cscale(tn__csqrt(tn__cadd(tn__cmul(xs, xs), tn__cmul(us, us))), s);
                    if (sx > 0 && (x.re / sx) * y.re + (x.im / sx) * y.im < 0) y = tn__cx(-y.re, -y.im);
                    t = tn__csub(t, tn__cmul(u, tn__cdiv(u, tn__cadd(x, y))));
                }
            }
            tn__cplx v[2] = {{0, 0}, {0, 0}};
            int64_t m;
            for (m = i - 1; m >= l; m--) {   /* two consecutive small subdiagonals */
                const tn__cplx h11 = H_(m, m), h22 = H_(m + 1, m + 1);
                tn__cplx h11s = tn__csub(h11, t);
                double h21 = H_(m + 1, m).re;
                const double s = tn__cabs1(h11s) + fabs(h21);
                h11s = tn__cscale(h11s, 1 / s);
                h21 /= s;
                v[0] = h11s;
                v[1] = tn__cx(h21, 0);
                if (m == l) break;
                const double h10 = H_(m, m - 1).re;
                if (fabs(h10) * fabs(h21) <= ulp * (tn__cabs1(h11s) * (tn__cabs1(h11) + tn__cabs1(h22)))) break;
            }
            for (k = m; k <= i - 1; k++) {   /* the single-shift QR step */
                if (k > m) { v[0] = H_(k, k - 1); v[1] = H_(k + 1, k - 1); }
                const tn__cplx t1 = tn__la_larfg_c(v, 2);
                if (k > m) { H_(k, k - 1) = v[0]; H_(k + 1, k - 1) = tn__cx(0, 0); }
                const tn__cplx v2 = v[1];
                const double t2 = tn__cmul(t1, v2).re;
                for (int64_t j = k; j <= i2; j++) {
                    const tn__cplx sum = tn__cadd(tn__cmul(tn__cconj(t1), H_(k, j)), tn__cscale(H_(k + 1, j), t2));
                    H_(k, j) = tn__csub(H_(k, j), sum);
                    H_(k + 1, j) = tn__csub(H_(k + 1, j), tn__cmul(sum, v2));
                }
                for (int64_t j = i1; j <= (k + 2 < i ? k + 2 : i); j++) {
                    const tn__cplx sum = tn__cadd(tn__cmul(t1, H_(j, k)), tn__cscale(H_(j, k + 1), t2));
                    H_(j, k) = tn__csub(H_(j, k), sum);
                    H_(j, k + 1) = tn__csub(H_(j, k + 1), tn__cmul(sum, tn__cconj(v2)));
                }
                if (wantt)
                    for (int64_t j = ilo; j <= ihi; j++) {
                        const tn__cplx sum = tn__cadd(tn__cmul(t1, Z_(j, k)), tn__cscale(Z_(j, k + 1), t2));
                        Z_(j, k) = tn__csub(Z_(j, k), sum);
                        Z_(j, k + 1) = tn__csub(Z_(j, k + 1), tn__cmul(sum, tn__cconj(v2)));
                    }
                if (k == m && m > l) {   /* keep H(m, m-1) real */
                    tn__cplx temp = tn__csub(tn__cx(1, 0), t1);
                    temp = tn__cscale(temp, 1 / tn__cabs(temp));
                    H_(m + 1, m) = tn__cmul(H_(m + 1, m), tn__cconj(temp));
                    if (m + 2 <= i) H_(m + 2, m + 1) = tn__cmul(H_(m + 2, m + 1), temp);
                    for (int64_t j = m; j <= i; j++) {
                        if (j == m + 1) continue;
                        for (int64_t c = j + 1; c <= i2; c++) H_(j, c) = tn__cmul(temp, H_(j, c));
                        for (int64_t r = i1; r < j; r++) H_(r, j) = tn__cmul(tn__cconj(temp), H_(r, j));
                        if (wantt) for (int64_t r = ilo; r <= ihi; r++) Z_(r, j) = tn__cmul(tn__cconj(temp), Z_(r, j));
                    }
                }
            }
            tn__cplx temp = H_(i, i - 1);   /* keep H(i, i-1) real */
            if (temp.im != 0) {
                const double rtemp = tn__cabs(temp);
                H_(i, i - 1) = tn__cx(rtemp, 0);
                temp = tn__cscale(temp, 1 / rtemp);
                for (int64_t c = i + 1; c <= i2; c++) H_(i, c) = tn__cmul(tn__cconj(temp), H_(i, c));
                for (int64_t r = i1; r < i; r++) H_(r, i) = tn__cmul(temp, H_(r, i));
                if (wantt) for (int64_t r = ilo; r <= ihi; r++) Z_(r, i) = tn__cmul(temp, Z_(r, i));
            }
        }
        if (!conv) return i + 1;
        w[i] = H_(i, i);
        kdefl = 0;
        i = l - 1;
    }
    return 0;
#undef H_
#undef Z_
}

/* x [2] = M^{-1} x for M = [m00 m01; m10 m11], complete pivoting; pivots under smin are
   raised to it (laln2's perturbation: a nearly singular block gives a large, finite x). */
static void tn__eig_solve2(tn__cplx m00, tn__cplx m01, tn__cplx m10, tn__cplx m11, tn__cplx *x, double smin) {
    tn__cplx M[4] = {m00, m01, m10, m11};
    int p = 0;
    for (int q = 1; q < 4; q++) if (tn__cabs1(M[q]) > tn__cabs1(M[p])) p = q;
    if (tn__cabs1(M[p]) < smin) { M[0] = M[3] = tn__cx(smin, 0); M[1] = M[2] = tn__cx(0, 0); p = 0; }
    const int r = p / 2, c = p % 2;   /* the pivot's row and column */
    const tn__cplx piv = M[p], mr = M[r * 2 + 1 - c], mc = M[(1 - r) * 2 + c], mo = M[(1 - r) * 2 + 1 - c];
    const tn__cplx l = tn__cdiv(mc, piv);
    tn__cplx u22 = tn__csub(mo, tn__cmul(l, mr));
    if (tn__cabs1(u22) < smin) u22 = tn__cx(smin, 0);
    const tn__cplx b1 = x[r], b2 = tn__csub(x[1 - r], tn__cmul(l, x[r]));
    const tn__cplx y2 = tn__cdiv(b2, u22), y1 = tn__cdiv(tn__csub(b1, tn__cmul(mr, y2)), piv);
    x[c] = y1;
    x[1 - c] = y2;
}
/* Rescales x[0..top] so that its largest entry is 1 where it passed TN__EIG_BIG. */
static void tn__eig_guard(tn__cplx *x, int64_t top) {
    double mx = 0;
    for (int64_t i = 0; i <= top; i++) mx = fmax(mx, tn__cabs1(x[i]));
    if (mx > TN__EIG_BIG) for (int64_t i = 0; i <= top; i++) x[i] = tn__cscale(x[i], 1 / mx);
}
/* The back-substitution (T - lambda) x = 0 over rows top-1 .. 0 of the upper quasi-triangular
   T (n x n, column-major; T real: tr, blocks where the subdiagonal is non-zero; else tc), x[top]
   and (pair) x[top-1] set by the caller. */
static void tn__eig_backsub(const double *tr, const tn__cplx *tc, int64_t n, int64_t j0, tn__cplx lam, double smin, tn__cplx *x) {
#define T_(i, j) (tr ? tn__cx(tr[(i) + (j) * n], 0) : tc[(i) + (j) * n])
    for (int64_t j = j0; j >= 0; j--) {
        if (tr && j > 0 && tr[j + (j - 1) * n] != 0) {   /* a 2x2 block, rows j-1, j */
            tn__cplx b[2] = {x[j - 1], x[j]};
            tn__eig_solve2(tn__csub(T_(j - 1, j - 1), lam), T_(j - 1, j), T_(j, j - 1), tn__csub(T_(j, j), lam), b, smin);
            if (fmax(tn__cabs1(b[0]), tn__cabs1(b[1])) > TN__EIG_BIG) {
                const double s = 1 / fmax(tn__cabs1(b[0]), tn__cabs1(b[1]));
                for (int64_t i = 0; i <= j0 + 2 && i < n; i++) x[i] = tn__cscale(x[i], s);
                b[0] = tn__cscale(b[0], s); b[1] = tn__cscale(b[1], s);
            }
            x[j - 1] = b[0]; x[j] = b[1];
            for (int64_t i = 0; i < j - 1; i++) x[i] = tn__csub(x[i], tn__cadd(tn__cmul(T_(i, j - 1), b[0]), tn__cmul(T_(i, j), b[1])));
            tn__eig_guard(x, j0 + 2 < n ? j0 + 2 : n - 1);
            j--;
            continue;
        }
        tn__cplx d = tn__csub(T_(j, j), lam);
        if (tn__cabs1(d) < smin) d = tn__cx(smin, 0);
        const double ad = tn__cabs1(d), ax = tn__cabs1(x[j]);
        if (ad < 1 && ax > ad * TN__EIG_BIG) {
            const double s = ad * TN__EIG_BIG / ax;
            for (int64_t i = 0; i <= j0 + 2 && i < n; i++) x[i] = tn__cscale(x[i], s);
        }
        x[j] = tn__cdiv(x[j], d);
        for (int64_t i = 0; i < j; i++) x[i] = tn__csub(x[i], tn__cmul(T_(i, j), x[j]));
        tn__eig_guard(x, j0 + 2 < n ? j0 + 2 : n - 1);
    }
#undef T_
}
/* geev's normalisation of the vector v [n]: norm 1, its largest-magnitude entry (the first of
   equals) real. pos: that entry made positive (zgeev); else it keeps the sign of its real part
   (dgeev's rotation: dlartg's r has the sign of f). */
static void tn__eig_normalise(tn__cplx *v, int64_t n, bool pos) {
    double mx = 0, s = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fmax(fabs(v[i].re), fabs(v[i].im)));
    if (mx == 0) return;
    for (int64_t i = 0; i < n; i++) { const double a = v[i].re / mx, b = v[i].im / mx; s += a * a + b * b; }
    const double nrm = mx * sqrt(s);
    int64_t k = 0;
    double best = -1;
    for (int64_t i = 0; i < n; i++) {
        v[i] = tn__cscale(v[i], 1 / nrm);
        const double m2 = v[i].re * v[i].re + v[i].im * v[i].im;
        if (m2 > best) { best = m2; k = i; }
    }
    const double a = tn__cabs(v[k]);
    tn__cplx ph = tn__cscale(tn__cconj(v[k]), 1 / a);
    if (!pos && v[k].re < 0) ph = tn__cx(-ph.re, -ph.im);
    for (int64_t i = 0; i < n; i++) v[i] = tn__cmul(v[i], ph);
    v[k] = tn__cx(v[k].re, 0);
}

/* The eigen decomposition of one n x n matrix a (column-major, real: ar, complex: ac; both
   overwritten): eigenvalues w [n]; vectors: v [n, n] column-major. s: scratch of
   4 n^2 + 8 n doubles. Returns 0, or lahqr's failure. */
static int64_t tn__eig_one(double *ar, tn__cplx *ac, int64_t n, tn__cplx *w, tn__cplx *v, bool vectors, double *s) {
    int64_t ilo = 0, ihi = n - 1, info;
    double *scale = s, *rest = s + n;
    const double ulp = DBL_EPSILON, smlnum = DBL_MIN * ((double)n / ulp);
    tn__cplx *x = (tn__cplx *)(void *)rest;   /* n (+2) entries */
    if (ar) {
        double *q = rest + 2 * n + 4, *tau = q + n * n, *wr = tau + n, *wi = wr + n;
        tn__eig_gebal(ar, n, &ilo, &ihi, scale);
        tn__eig_gehrd(ar, n, ilo, ihi, vectors ? q : NULL, tau);
        info = tn__eig_lahqr(ar, n, ilo, ihi, wr, wi, q, vectors);
        if (info) return info;
        for (int64_t i = 0; i < n; i++) w[i] = tn__cx(wr[i], wi[i]);
        if (!vectors) return 0;
        for (int64_t ki = n - 1; ki >= 0; ki--) {
            const double smin = fmax(ulp * (fabs(wr[ki]) + fabs(wi[ki])), smlnum);
            int64_t top = ki;
            for (int64_t i = 0; i < n + 2; i++) x[i] = tn__cx(0, 0);
            if (wi[ki] == 0) {
                x[ki] = tn__cx(1, 0);
                for (int64_t k = 0; k < ki; k++) x[k] = tn__cx(-ar[k + ki * n], 0);
                tn__eig_backsub(ar, NULL, n, ki - 1, tn__cx(wr[ki], 0), smin, x);
            } else {   /* the pair ki-1 (wi > 0), ki: dtrevc's start on the 2x2 block */
                const int64_t j = ki - 1;
                const double b = ar[j + ki * n], c = ar[ki + j * n], wpos = sqrt(fabs(b)) * sqrt(fabs(c));
                if (fabs(b) >= fabs(c)) { x[j] = tn__cx(1, 0); x[ki] = tn__cx(0, wpos / b); }
                else { x[j] = tn__cx(-wpos / c, 0); x[ki] = tn__cx(0, 1); }
                for (int64_t k = 0; k < j; k++) x[k] = tn__csub(tn__cx(0, 0), tn__cadd(tn__cscale(x[j], ar[k + j * n]), tn__cscale(x[ki], ar[k + ki * n])));
                tn__eig_backsub(ar, NULL, n, j - 1, tn__cx(wr[j], wpos), smin, x);
            }
            tn__cplx *col = v + (wi[ki] == 0 ? ki : ki - 1) * n;
            for (int64_t r = 0; r < n; r++) {   /* Q x */
                double re = 0, im = 0;
                for (int64_t k = 0; k <= top; k++) { re += q[r + k * n] * x[k].re; im += q[r + k * n] * x[k].im; }
                col[r] = tn__cx(re, im);
            }
            if (wi[ki] != 0) ki--;
        }
    } else {
        tn__cplx *q = (tn__cplx *)(void *)(rest + 2 * n + 4), *tau = q + n * n;
        tn__eig_gebal_c(ac, n, &ilo, &ihi, scale);
        tn__eig_gehrd_c(ac, n, ilo, ihi, vectors ? q : NULL, tau);
        info = tn__eig_lahqr_c(ac, n, ilo, ihi, w, q, vectors);
        if (info) return info;
        if (!vectors) return 0;
        for (int64_t ki = n - 1; ki >= 0; ki--) {
            const double smin = fmax(ulp * tn__cabs1(ac[ki + ki * n]), smlnum);
            for (int64_t i = 0; i < n + 2; i++) x[i] = tn__cx(0, 0);
            x[ki] = tn__cx(1, 0);
            for (int64_t k = 0; k < ki; k++) x[k] = tn__csub(tn__cx(0, 0), ac[k + ki * n]);
            tn__eig_backsub(NULL, ac, n, ki - 1, ac[ki + ki * n], smin, x);
            tn__cplx *col = v + ki * n;
            for (int64_t r = 0; r < n; r++) {
                tn__cplx acc = tn__cx(0, 0);
                for (int64_t k = 0; k <= ki; k++) acc = tn__cadd(acc, tn__cmul(q[r + k * n], x[k]));
                col[r] = acc;
            }
        }
    }
    tn__eig_gebak(v, n, ilo, ihi, scale);
    for (int64_t c = 0; c < n; c++) {
        if (ar && w[c].im < 0) {   /* the conjugate of the previous column */
            for (int64_t r = 0; r < n; r++) v[r + c * n] = tn__cconj(v[r + (c - 1) * n]);
            continue;
        }
        if (ar && w[c].im > 0) tn__eig_normalise(v + c * n, n, false);
        else if (ar) {   /* a real vector: norm 1, its sign kept */
            double nrm = 0, mx = 0;
            for (int64_t r = 0; r < n; r++) mx = fmax(mx, fabs(v[r + c * n].re));
            if (mx > 0) {
                for (int64_t r = 0; r < n; r++) { const double t = v[r + c * n].re / mx; nrm += t * t; }
                nrm = mx * sqrt(nrm);
                for (int64_t r = 0; r < n; r++) v[r + c * n] = tn__cx(v[r + c * n].re / nrm, 0);
            }
        } else tn__eig_normalise(v + c * n, n, true);
    }
    return 0;
}

/* Eigenvalues L [..., n] and (vectors) V [..., n, n], complex128, of every matrix of A (on the
   CPU); without history. info NULL: a matrix that fails to converge is an error; else
   info[b] <- its failure (0: none) for every matrix b, and no error (the stand-in's entry). */
static int tn__la_eig_raw(tn_tensor *A, bool vectors, tn_tensor **L, tn_tensor **V, const char *fn, int32_t *info_out) {
    tn_tensor *w = tn__la_work(A);
    if (!w) return -1;
    const int nd = A->ndim;
    const int64_t n = A->shape[nd - 1], B = tn__la_batch(A);
    const bool cplx = tn_is_complex(w);
    tn_tensor *l = tn__own(tn__new(TN_C128, TN_CPU, A->shape, nd - 1)), *v = vectors ? tn__own(tn__new(TN_C128, TN_CPU, A->shape, nd)) : NULL;
    /* scratch: the matrix (column-major, 2 n^2), tn__eig_one's (2 n^2 + 6 n + 4: balancing, x,
       Q, tau, the values), the vectors (column-major, 2 n^2) */
    double *s = (double *)TN_MALLOC((size_t)(6 * n * n + 12 * n + 8) * sizeof(double));
    if (!l || (vectors && !v) || !s) { TN_FREE(s); if (l && (!vectors || v)) tn__error("%s: out of memory", fn); return -1; }
    double *a = s, *sc = s + 2 * n * n;
    tn__cplx *vc = (tn__cplx *)(void *)(sc + 2 * n * n + 12 * n + 8), *lv = (tn__cplx *)tn_data_ptr(l);
    int64_t info = 0;
    for (int64_t b = 0; b < B && (!info || info_out); b++) {
        if (cplx) {
            const tn__cplx *src = (const tn__cplx *)tn_data_ptr(w) + b * n * n;
            tn__cplx *ac = (tn__cplx *)(void *)a;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) ac[i + j * n] = src[i * n + j];
            info = tn__eig_one(NULL, ac, n, lv + b * n, vc, vectors, sc);
        } else {
            const double *src = (const double *)tn_data_ptr(w) + b * n * n;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) a[i + j * n] = src[i * n + j];
            info = tn__eig_one(a, NULL, n, lv + b * n, vc, vectors, sc);
        }
        if (info_out) {
            info_out[b] = (int32_t)(info > INT32_MAX ? INT32_MAX : info);
            if (info) {   /* (that matrix's results: zeros, not what the iteration left) */
                memset(lv + b * n, 0, (size_t)n * sizeof *lv);
                if (vectors) memset((tn__cplx *)tn_data_ptr(v) + b * n * n, 0, (size_t)(n * n) * sizeof(tn__cplx));
                continue;
            }
        }
        if (vectors && !info) {
            tn__cplx *vb = (tn__cplx *)tn_data_ptr(v) + b * n * n;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) vb[i * n + j] = vc[i + j * n];
        }
    }
    TN_FREE(s);
    if (info && !info_out) return TN__FAIL_INT("%s: " TN__EIG_NOCONV, fn, (int)info);
    *L = l;
    if (vectors) *V = v;
    return 0;
}

/* ---- on another device: its backend's linalg entry (TN_LA_GEEV: cuSOLVER's Xgeev on the GPU)
   on a column-major copy of the batch in A's dtype; results in A's complex dtype there. The
   values come in the backend's order: cuSOLVER's QR iteration need not deflate as LAPACK's,
   so the order (and the phase of a vector, as always fixed by geev's normalisation: norm 1,
   the largest component real) may differ from the CPU's, as PyTorch's CUDA eig from its CPU
   one. Non-convergence: the CPU's message, with the batch element. ---- */
static int tn__la_eig_dev(tn_tensor *A, bool vectors, tn_tensor **L, tn_tensor **V, const char *fn) {
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A);
    const tn_dtype cdt = tn_dtype_to_complex(A->dtype);
    tn_tensor *cm = tn__la_cm(A), *w = tn__la_dnew(cdt, A, B, n, 0, 2), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1);
    tn_tensor *vc = vectors ? tn__la_dnew(cdt, A, B, n, n, 3) : NULL;
    if (!cm || !w || !f || (vectors && !vc) || tn__la_run(TN_LA_GEEV, cm, w, vc, NULL, f, vectors ? 1 : 0)) return -1;
    if (tn__la_info_error(fn, tn__la_unbatch(f, A, 0), TN__EIG_NOCONV)) return -1;
    *L = tn__la_unbatch(w, A, 1);
    if (vectors) *V = tn_contiguous(tn__la_uncm(vc, A, n, n));   /* (row-major, as the CPU's) */
    return *L && (!vectors || *V) ? 0 : -1;
}

/* Z^-1 Y for complex Z, Y: on a device too, its entry's complex LU (once through Z's real
   form, when the entry took real matrices only) */
static tn_tensor *tn__eig_solve(tn_tensor *Z, tn_tensor *Y) { return tn_linalg_solve(Z, Y); }

/* ---- eig, eigvals ---- */
static tn_tensor *tn__eig_impl(tn_tensor *A, bool vectors, tn_tensor **V, const char *fn, bool gauge);
/* PyTorch's linalg_eig_backward: gA = V^{-H} (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / E^*) V^H
   with E_ij = L_j - L_i (1 on the diagonal); the eigenvalues' node takes the diag(gL) term, the
   eigenvectors' node the rest (its diagonal, i Im(V^H gV)_ii, is what the gauge check bounds:
   dropped, as PyTorch's copy of gL there). A real input gets the real part. */
static int tn__eig_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    /* The vectors' node uses its own output V, saved (PyTorch's saved outputs): the second
       order's gradient for V, through this formula and through g (a function of V), adds up in
       that one node, whose gauge check sees the phase-invariant sum, as torch's. L (and the
       values' node's V, whose formula is phase-invariant) are recomputed, without the check. */
    tn_tensor *A = tn_ctx_saved(nd, 0), *V = NULL, *L = tn__eig_impl(A, true, &V, "tn_linalg_eig", false);
    if (!L) return -1;
    if (nd->i[0] == 1 && tn_ctx_nsaved(nd) > 1) V = tn_ctx_saved(nd, 1);   /* the forward's V, a saved output */
    const int64_t n = A->shape[A->ndim - 1];
    tn_tensor *Vh = tn__mH(V), *mid;
    if (nd->i[0] == 0) mid = tn_diag_embed(tn_to_dtype(g, V->dtype));
    else {
        tn_tensor *VhgV = tn_matmul(Vh, g), *dg = VhgV ? tn_diagonal(VhgV, .dim1 = -2, .dim2 = -1) : NULL;
        if (!dg) return -1;
        tn_tensor *im = tn_numel(dg) ? tn_max(tn_abs(tn_imag(dg))) : NULL;   /* (allclose(Im, 0, 1e-2, 1e-2)) */
        if (tn_numel(dg) && !im) return -1;
        const double bad = im ? tn_item(im) : 0;
        if (nd->i[1] && !(bad <= 1e-2))
            return TN__FAIL_INT("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. "
                                "The specified loss function depends on this quantity, so it is ill-defined.");
        tn_tensor *Lc = tn_conj(L);
        tn_tensor *eye = tn_to(tn_eye(n, n, L->dtype), L->device);   /* (on A's device; not named I: <complex.h>'s macro) */
        tn_tensor *E = tn_add(tn_sub(tn_unsqueeze(Lc, -2), tn_unsqueeze(Lc, -1)), eye);
        mid = tn_sub(VhgV, tn_matmul(Vh, tn_mul(V, tn_unsqueeze(tn_real(dg), -2))));
        mid = tn_mul(tn_div(mid, E), tn_sub(tn_ones_like(E), eye));
    }
    tn_tensor *gA = mid ? tn__eig_solve(Vh, tn_matmul(mid, Vh)) : NULL;
    gin[0] = gA && !tn_is_complex(A) ? tn_real(gA) : gA;
    return gin[0] ? 0 : -1;
}
/* gauge: the vectors' node checks that the loss does not depend on their phases. */
static tn_tensor *tn__eig_impl(tn_tensor *A, bool vectors, tn_tensor **V, const char *fn, bool gauge) {
    TN__CHECK_NULL(A);
    /* on a device: its linalg entry's GEEV (PyTorch's GPU runs geev too: no copy to the CPU);
       a device without the entry refuses */
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    {
        tn_scope_begin();
        tn_tensor *f = tn_all(tn_isfinite(A));
        const int ok = f ? tn_item(f) != 0 : -1;
        tn_scope_end();
        if (ok < 0) return NULL;
        if (!ok) return (tn_tensor *)tn__error("%s: input tensor should not contain infs or NaNs", fn);
    }
    const tn_dtype cdt = tn_dtype_to_complex(A->dtype);
    tn_scope_begin();
    tn_tensor *l = NULL, *v = NULL, *L = NULL;
    if (!(tn__la_routed(A, true) ? tn__la_eig_dev(A, vectors, &l, &v, fn) : tn__la_eig_raw(A, vectors, &l, &v, fn, NULL))) {
        L = tn_keep(tn_to_dtype(l, cdt));
        if (vectors) {
            *V = tn_keep(tn_to_dtype(v, cdt));
            if (!*V) { tn_release(L); L = NULL; }
        }
    }
    tn_scope_end();
    if (!L) return NULL;
    if (vectors) {   /* (tn__la_record's node, with V saved as its output: a view, no cycle) */
        tn_node *nd = tn__fn_node("LinalgEigBackward0", tn__eig_bw, &A, 1);
        if (nd) {
            nd->i[0] = 1; nd->i[1] = gauge; nd->ni = 2;
            tn__node_save(nd, A);
            tn__node_save_result(nd, *V);
            nd->saved_output_mask |= 2u;
        }
        *V = tn__node_attach(nd, *V);
    }
    L = tn__la_record("LinalgEigBackward0", tn__eig_bw, A, L, 0, gauge);
    if (!L || (vectors && !*V)) { tn_release(L); if (vectors) { tn_release(*V); *V = NULL; } return NULL; }
    return L;
}
TNDEF tn_tensor *tn_linalg_eig(tn_tensor *A, tn_tensor **eigenvectors) {
    if (!eigenvectors) return (tn_tensor *)tn__error("tn_linalg_eig: eigenvectors must not be NULL");
    *eigenvectors = NULL;
    return TN__AS("tn_linalg_eig", tn__eig_impl(A, true, eigenvectors, "tn_linalg_eig", true));
}
TNDEF tn_tensor *tn_linalg_eigvals(tn_tensor *A) {
    return TN__AS("tn_linalg_eigvals", tn__eig_impl(A, false, NULL, "tn_linalg_eigvals", true));
}
