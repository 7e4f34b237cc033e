/* ---- TENSOR_LAPACK: the CPU's factorizations through the system's Fortran LAPACK ----
   Built with -DTENSOR_LAPACK and linked with a LAPACK (Debian's OpenBLAS exports the Fortran
   symbols: -lopenblas; or -llapack -lblas), torch.linalg's factorizations of CPU tensors go
   to LAPACK, as PyTorch's CPU ones do: getrf/getrs, potrf, geqrf + orgqr/ungqr, ormqr/unmqr,
   trsm, syevd, gesdd and geev. tn__la_lapack is the contract of tn_backend.linalg (src/api.h)
   served on the CPU, in the input's dtype (float32, float64, complex64, complex128; for
   complex input the eigen- and singular values are the real dtype, and the transposes in
   ORMQR are conjugate transposes; GETRS's flag 1 solves A^T x = b), so the ops reach it through the same column-major route
   a device's entry takes (tn__la_routed in linalg_factor.c). The prototypes are declared
   here (the Fortran ABI: every argument by pointer, each character argument's hidden length
   a size_t at the end), so no LAPACKE is needed; the arrays are void * (one declaration
   serves the four precisions). LAPACK's integers are 32-bit (LP64): a larger size raises. */
#ifdef TENSOR_LAPACK
#ifdef __cplusplus
extern "C" {
#endif
typedef void tn__lp_getrf_fn(const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info);
typedef void tn__lp_getrs_fn(const char *trans, const int *n, const int *nrhs, const void *a, const int *lda, const int *ipiv, void *b, const int *ldb, int *info, size_t);
typedef void tn__lp_potrf_fn(const char *uplo, const int *n, void *a, const int *lda, int *info, size_t);
typedef void tn__lp_geqrf_fn(const int *m, const int *n, void *a, const int *lda, void *tau, void *work, const int *lwork, int *info);
typedef void tn__lp_orgqr_fn(const int *m, const int *n, const int *k, void *a, const int *lda, const void *tau, void *work, const int *lwork, int *info);
typedef void tn__lp_ormqr_fn(const char *side, const char *trans, const int *m, const int *n, const int *k, const void *a, const int *lda, const void *tau, void *c,
                             const int *ldc, void *work, const int *lwork, int *info, size_t, size_t);
typedef void tn__lp_trsm_fn(const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n, const void *alpha, const void *a,
                            const int *lda, void *b, const int *ldb, size_t, size_t, size_t, size_t);
typedef void tn__lp_syevd_fn(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work, const int *lwork, int *iwork,
                             const int *liwork, int *info, size_t, size_t);
typedef void tn__lp_heevd_fn(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w, void *work, const int *lwork, void *rwork,
                             const int *lrwork, int *iwork, const int *liwork, int *info, size_t, size_t);
typedef void tn__lp_gesdd_fn(const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, void *u, const int *ldu, void *vt, const int *ldvt,
                             void *work, const int *lwork, int *iwork, int *info, size_t);
typedef void tn__lp_cgesdd_fn(const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, void *u, const int *ldu, void *vt, const int *ldvt,
                              void *work, const int *lwork, void *rwork, int *iwork, int *info, size_t);
typedef void tn__lp_geev_fn(const char *jobvl, const char *jobvr, const int *n, void *a, const int *lda, void *wr, void *wi, void *vl, const int *ldvl, void *vr,
                            const int *ldvr, void *work, const int *lwork, int *info, size_t, size_t);
typedef void tn__lp_cgeev_fn(const char *jobvl, const char *jobvr, const int *n, void *a, const int *lda, void *w, void *vl, const int *ldvl, void *vr,
                             const int *ldvr, void *work, const int *lwork, void *rwork, int *info, size_t, size_t);
extern tn__lp_getrf_fn sgetrf_, dgetrf_, cgetrf_, zgetrf_;
extern tn__lp_getrs_fn sgetrs_, dgetrs_, cgetrs_, zgetrs_;
extern tn__lp_potrf_fn spotrf_, dpotrf_, cpotrf_, zpotrf_;
extern tn__lp_geqrf_fn sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_;
extern tn__lp_orgqr_fn sorgqr_, dorgqr_, cungqr_, zungqr_;
extern tn__lp_ormqr_fn sormqr_, dormqr_, cunmqr_, zunmqr_;
extern tn__lp_trsm_fn strsm_, dtrsm_, ctrsm_, ztrsm_;
extern tn__lp_syevd_fn ssyevd_, dsyevd_;
extern tn__lp_heevd_fn cheevd_, zheevd_;
extern tn__lp_gesdd_fn sgesdd_, dgesdd_;
extern tn__lp_cgesdd_fn cgesdd_, zgesdd_;
extern tn__lp_geev_fn sgeev_, dgeev_;
extern tn__lp_cgeev_fn cgeev_, zgeev_;
#ifdef __cplusplus
}
#endif

/* A workspace query's answer (work[0]'s real part) as a count, at least 1; its float32 form
   may round below the exact count: one more ulp's worth */
static int64_t tn__lp_count(const void *w, bool single) {
    const double v = single ? (double)*(const float *)w * (1 + 2 * (double)FLT_EPSILON) : *(const double *)w;
    return v < 1 ? 1 : (int64_t)v + (single ? 1 : 0);
}
static bool tn__lp_int(int64_t v) { return v >= 0 && v <= INT_MAX; }
/* a complex column from a real one (the real and imaginary parts' columns, sign of the imaginary one) */
static void tn__lp_pair(void *dst, const void *re, const void *im, int64_t n, double sg, bool single) {
    for (int64_t i = 0; i < n; i++)
        if (single) {
            float *d = (float *)dst + 2 * i;
            d[0] = ((const float *)re)[i];
            d[1] = im ? (float)sg * ((const float *)im)[i] : 0.0f;
        } else {
            double *d = (double *)dst + 2 * i;
            d[0] = ((const double *)re)[i];
            d[1] = im ? sg * ((const double *)im)[i] : 0.0;
        }
}

/* tn_backend.linalg's contract on CPU tensors, by LAPACK, one matrix of the batch at a time
   (as PyTorch's CPU loops): returns 0, or -1 with the error recorded. */
static int tn__la_lapack(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag) {
    const tn_dtype dt = a->dtype;
    const int t = dt == TN_F32 ? 0 : dt == TN_F64 ? 1 : dt == TN_C64 ? 2 : dt == TN_C128 ? 3 : -1;
    if (t < 0) return TN__FAIL_INT("linalg (TENSOR_LAPACK): %s is not a LAPACK dtype", tn_dtype_name(dt));
    const bool single = t == 0 || t == 2, cplx = t >= 2;
    const size_t es = tn_dtype_size(dt), rs = single ? sizeof(float) : sizeof(double);
    const int64_t B = a->shape[0], n64 = a->shape[1], m64 = a->shape[2], k64 = m64 < n64 ? m64 : n64;
    /* every dimension LAPACK is handed must fit its 32-bit integers */
    tn_tensor *ts[4] = {a, b, c, p};
    for (int i = 0; i < 4; i++)
        for (int d = 1; ts[i] && d < ts[i]->ndim; d++)
            if (!tn__lp_int(ts[i]->shape[d]))
                return TN__FAIL_INT("linalg (TENSOR_LAPACK): a matrix dimension of %lld is past LAPACK's 32-bit integers (at most %d)", (long long)ts[i]->shape[d], INT_MAX);
    const int m = (int)m64, n = (int)n64, k = (int)k64, lda = m > 1 ? m : 1;
    char *A = (char *)tn_data_ptr(a);
    int32_t *fv = info ? (int32_t *)tn_data_ptr(info) : NULL;
    int inf = 0, lw = -1;
    void *work = NULL, *rwork = NULL;
    int *iwork = NULL;
    int rc = 0;
    double q[4] = {0};   /* a workspace query's answer (room for a complex128; aligned for either precision) */
    switch (op) {
    case TN_LA_GETRF: {
        static tn__lp_getrf_fn *const f[4] = {sgetrf_, dgetrf_, cgetrf_, zgetrf_};
        int32_t *pv = (int32_t *)tn_data_ptr(p);
        for (int64_t i = 0; i < B; i++) {
            if (m && n) f[t](&m, &n, A + i * m64 * n64 * (int64_t)es, &lda, pv + i * k64, &inf);
            else inf = 0;
            fv[i] = inf;
        }
        return 0;
    }
    case TN_LA_GETRS: {
        static tn__lp_getrs_fn *const f[4] = {sgetrs_, dgetrs_, cgetrs_, zgetrs_};
        const int nr = (int)b->shape[1];
        const int32_t *pv = (const int32_t *)tn_data_ptr(p);
        char *X = (char *)tn_data_ptr(b);
        if (n && nr)
            for (int64_t i = 0; i < B; i++) f[t](flag & 1 ? "T" : "N", &n, &nr, A + i * n64 * n64 * (int64_t)es, &lda, pv + i * n64, X + i * n64 * nr * (int64_t)es, &lda, &inf, 1);
        return 0;
    }
    case TN_LA_POTRF: {
        static tn__lp_potrf_fn *const f[4] = {spotrf_, dpotrf_, cpotrf_, zpotrf_};
        for (int64_t i = 0; i < B; i++) {
            if (n) f[t]("L", &n, A + i * n64 * n64 * (int64_t)es, &lda, &inf, 1);
            else inf = 0;
            fv[i] = inf;
        }
        return 0;
    }
    case TN_LA_GEQRF: {   /* geqrf, then Q's first qc columns by orgqr/ungqr on a copy */
        static tn__lp_geqrf_fn *const f[4] = {sgeqrf_, dgeqrf_, cgeqrf_, zgeqrf_};
        static tn__lp_orgqr_fn *const g[4] = {sorgqr_, dorgqr_, cungqr_, zungqr_};
        const int qc = c ? (int)c->shape[1] : 0;
        char *T = (char *)tn_data_ptr(b), *Q = c ? (char *)tn_data_ptr(c) : NULL;
        if (!m || !n) return 0;
        f[t](&m, &n, A, &lda, T, q, &lw, &inf);
        int64_t w1 = tn__lp_count(q, single), w2 = 1;
        if (Q && qc) { g[t](&m, &qc, &k, Q, &lda, T, q, &lw, &inf); w2 = tn__lp_count(q, single); }
        const int64_t wn = w1 > w2 ? w1 : w2;
        if (!tn__lp_int(wn) || !(work = TN_MALLOC((size_t)wn * es))) return TN__FAIL_INT("linalg (TENSOR_LAPACK): out of memory for geqrf's workspace");
        const int lwn = (int)wn;
        for (int64_t i = 0; i < B; i++) {
            char *Ai = A + i * m64 * n64 * (int64_t)es, *Ti = T + i * k64 * (int64_t)es;
            f[t](&m, &n, Ai, &lda, Ti, work, &lwn, &inf);
            if (Q && qc) {
                char *Qi = Q + i * m64 * qc * (int64_t)es;
                const int64_t cols = qc < n ? qc : n;
                memcpy(Qi, Ai, (size_t)(cols * m64) * es);   /* the reflectors; orgqr sets the rest */
                g[t](&m, &qc, &k, Qi, &lda, Ti, work, &lwn, &inf);
            }
        }
        break;
    }
    case TN_LA_ORMQR: {   /* c: [B, N, M] = M x N, Q's order (M left, N right) from the side */
        static tn__lp_ormqr_fn *const f[4] = {sormqr_, dormqr_, cunmqr_, zunmqr_};
        const int M = (int)c->shape[2], N = (int)c->shape[1], ka = (int)a->shape[1], qa = (int)a->shape[2], lq = qa > 1 ? qa : 1, ldc = M > 1 ? M : 1;
        const char *side = flag & 1 ? "L" : "R", *tr = flag & 2 ? (cplx ? "C" : "T") : "N";
        char *C = (char *)tn_data_ptr(c);
        const char *T = (const char *)tn_data_ptr(b);
        if (!M || !N || !ka) return 0;
        f[t](side, tr, &M, &N, &ka, A, &lq, T, C, &ldc, q, &lw, &inf, 1, 1);
        const int64_t wn = tn__lp_count(q, single);
        if (!tn__lp_int(wn) || !(work = TN_MALLOC((size_t)wn * es))) return TN__FAIL_INT("linalg (TENSOR_LAPACK): out of memory for ormqr's workspace");
        const int lwn = (int)wn;
        for (int64_t i = 0; i < B; i++)
            f[t](side, tr, &M, &N, &ka, A + i * (int64_t)ka * qa * (int64_t)es, &lq, T + i * (int64_t)ka * (int64_t)es, C + i * (int64_t)M * N * (int64_t)es, &ldc,
                 work, &lwn, &inf, 1, 1);
        break;
    }
    case TN_LA_TRSM: {
        static tn__lp_trsm_fn *const f[4] = {strsm_, dtrsm_, ctrsm_, ztrsm_};
        static const float one_s[2] = {1, 0};
        static const double one_d[2] = {1, 0};
        const int nr = (int)b->shape[1];
        char *X = (char *)tn_data_ptr(b);
        if (n && nr)
            for (int64_t i = 0; i < B; i++)
                f[t]("L", flag & 1 ? "U" : "L", "N", flag & 2 ? "U" : "N", &n, &nr, single ? (const void *)one_s : (const void *)one_d, A + i * n64 * n64 * (int64_t)es,
                     &lda, X + i * n64 * nr * (int64_t)es, &lda, 1, 1, 1, 1);
        return 0;
    }
    case TN_LA_SYEVD: {   /* the lower triangle (a's column-major lower one); eigenvalues real */
        const char *jobz = flag ? "V" : "N";
        char *W = (char *)tn_data_ptr(b);
        int li = -1, lr = -1, iq = 0;
        if (!n) { for (int64_t i = 0; i < B; i++) fv[i] = 0; return 0; }
        double rq[2] = {0};
        if (cplx) (t == 2 ? cheevd_ : zheevd_)(jobz, "L", &n, A, &lda, W, q, &lw, rq, &lr, &iq, &li, &inf, 1, 1);
        else (t == 0 ? ssyevd_ : dsyevd_)(jobz, "L", &n, A, &lda, W, q, &lw, &iq, &li, &inf, 1, 1);
        const int64_t wn = tn__lp_count(q, single), rn = cplx ? tn__lp_count(rq, single) : 1, in = iq > 1 ? iq : 1;
        if (!tn__lp_int(wn) || !tn__lp_int(rn) || !(work = TN_MALLOC((size_t)wn * es)) || !(rwork = TN_MALLOC((size_t)rn * rs)) ||
            !(iwork = (int *)TN_MALLOC((size_t)in * sizeof(int))))
            { rc = TN__FAIL_INT("linalg (TENSOR_LAPACK): out of memory for syevd's workspace"); break; }
        const int lwn = (int)wn, lrn = (int)rn, lin = (int)in;
        for (int64_t i = 0; i < B; i++) {
            char *Ai = A + i * n64 * n64 * (int64_t)es, *Wi = W + i * n64 * (int64_t)rs;
            if (cplx) (t == 2 ? cheevd_ : zheevd_)(jobz, "L", &n, Ai, &lda, Wi, work, &lwn, rwork, &lrn, iwork, &lin, &inf, 1, 1);
            else (t == 0 ? ssyevd_ : dsyevd_)(jobz, "L", &n, Ai, &lda, Wi, work, &lwn, iwork, &lin, &inf, 1, 1);
            fv[i] = inf;
        }
        break;
    }
    case TN_LA_GESVD: {   /* gesdd (PyTorch's CPU default); V^H from vt (vr x n) into p [B, vr, n] row-major */
        const int uc = c ? (int)c->shape[1] : 0, vr = p ? (int)p->shape[1] : 0;
        const char *jobz = !c ? "N" : uc == k && vr == k ? "S" : "A";
        const int ldu = c ? lda : 1, ldvt = vr > 1 ? vr : 1;
        char *S = (char *)tn_data_ptr(b), *U = c ? (char *)tn_data_ptr(c) : NULL, *P = p ? (char *)tn_data_ptr(p) : NULL;
        if (!k) { for (int64_t i = 0; i < B; i++) fv[i] = 0; return 0; }
        const int64_t mx = m64 > n64 ? m64 : n64;
        const int64_t rn = !cplx ? 1 : !c ? 7 * k64 : (5 * k64 * k64 + 5 * k64 > 2 * mx * k64 + 2 * k64 * k64 + k64 ? 5 * k64 * k64 + 5 * k64 : 2 * mx * k64 + 2 * k64 * k64 + k64);
        void *vt = c && vr ? TN_MALLOC((size_t)vr * (size_t)n * es) : NULL;
        iwork = (int *)TN_MALLOC((size_t)(8 * k64) * sizeof(int));
        if ((c && vr && !vt) || !iwork || !tn__lp_int(rn) || !(rwork = TN_MALLOC((size_t)rn * rs)))
            { TN_FREE(vt); rc = TN__FAIL_INT("linalg (TENSOR_LAPACK): gesdd's workspace for a %lld x %lld matrix is out of reach", (long long)m64, (long long)n64); break; }
        if (cplx) (t == 2 ? cgesdd_ : zgesdd_)(jobz, &m, &n, A, &lda, S, U, &ldu, vt, &ldvt, q, &lw, rwork, iwork, &inf, 1);
        else (t == 0 ? sgesdd_ : dgesdd_)(jobz, &m, &n, A, &lda, S, U, &ldu, vt, &ldvt, q, &lw, iwork, &inf, 1);
        const int64_t wn = tn__lp_count(q, single);
        if (!tn__lp_int(wn) || !(work = TN_MALLOC((size_t)wn * es))) { TN_FREE(vt); rc = TN__FAIL_INT("linalg (TENSOR_LAPACK): out of memory for gesdd's workspace"); break; }
        const int lwn = (int)wn;
        for (int64_t i = 0; i < B; i++) {
            char *Ai = A + i * m64 * n64 * (int64_t)es, *Si = S + i * k64 * (int64_t)rs, *Ui = U ? U + i * m64 * uc * (int64_t)es : NULL;
            if (cplx) (t == 2 ? cgesdd_ : zgesdd_)(jobz, &m, &n, Ai, &lda, Si, Ui, &ldu, vt, &ldvt, work, &lwn, rwork, iwork, &inf, 1);
            else (t == 0 ? sgesdd_ : dgesdd_)(jobz, &m, &n, Ai, &lda, Si, Ui, &ldu, vt, &ldvt, work, &lwn, iwork, &inf, 1);
            fv[i] = inf;
            if (vt)
                for (int64_t r = 0; r < vr; r++)
                    for (int64_t j = 0; j < n64; j++) memcpy(P + ((i * vr + r) * n64 + j) * (int64_t)es, (char *)vt + (r + j * vr) * (int64_t)es, es);
        }
        TN_FREE(vt);
        break;
    }
    case TN_LA_GEEV: {   /* right vectors only; a real a's pairs unpacked into x + iy, x - iy */
        const char *jobvr = flag ? "V" : "N";
        const int ldv = flag && n > 1 ? n : 1;
        char *W = (char *)tn_data_ptr(b), *V = flag ? (char *)tn_data_ptr(c) : NULL;
        if (!n) { for (int64_t i = 0; i < B; i++) fv[i] = 0; return 0; }
        /* real: wr, wi and the real vectors in one scratch block */
        void *scr = TN_MALLOC((size_t)(cplx ? 2 * n64 : 2 * n64 + (flag ? n64 * n64 : 0)) * rs);
        if (!scr) { rc = TN__FAIL_INT("linalg (TENSOR_LAPACK): out of memory for geev"); break; }
        rwork = scr;
        char *wr = (char *)scr, *wi = wr + n64 * (int64_t)rs, *vr = wi + n64 * (int64_t)rs;
        if (cplx) (t == 2 ? cgeev_ : zgeev_)("N", jobvr, &n, A, &lda, W, NULL, &ldv, V, &ldv, q, &lw, rwork, &inf, 1, 1);
        else (t == 0 ? sgeev_ : dgeev_)("N", jobvr, &n, A, &lda, wr, wi, NULL, &ldv, flag ? vr : NULL, &ldv, q, &lw, &inf, 1, 1);
        const int64_t wn = tn__lp_count(q, single);
        if (!tn__lp_int(wn) || !(work = TN_MALLOC((size_t)wn * es))) { rc = TN__FAIL_INT("linalg (TENSOR_LAPACK): out of memory for geev's workspace"); break; }
        const int lwn = (int)wn;
        for (int64_t i = 0; i < B; i++) {
            char *Ai = A + i * n64 * n64 * (int64_t)es, *Wi = W + i * n64 * 2 * (int64_t)rs, *Vi = V ? V + i * n64 * n64 * 2 * (int64_t)rs : NULL;
            if (cplx) {
                (t == 2 ? cgeev_ : zgeev_)("N", jobvr, &n, Ai, &lda, Wi, NULL, &ldv, Vi, &ldv, work, &lwn, rwork, &inf, 1, 1);
                fv[i] = inf;
                continue;
            }
            (t == 0 ? sgeev_ : dgeev_)("N", jobvr, &n, Ai, &lda, wr, wi, NULL, &ldv, flag ? vr : NULL, &ldv, work, &lwn, &inf, 1, 1);
            fv[i] = inf;
            tn__lp_pair(Wi, wr, wi, n64, 1, single);   /* the eigenvalues wr + i wi */
            for (int64_t j = 0; Vi && j < n64; j++) {
                const size_t col = (size_t)(j * n64) * rs;
                const double wij = single ? (double)((const float *)wi)[j] : ((const double *)wi)[j];
                if (wij == 0 || j + 1 == n64) tn__lp_pair(Vi + 2 * col, vr + col, NULL, n64, 1, single);
                else {   /* the pair's columns j, j + 1 hold x and y */
                    tn__lp_pair(Vi + 2 * col, vr + col, vr + col + (size_t)n64 * rs, n64, 1, single);
                    tn__lp_pair(Vi + 2 * col + 2 * (size_t)n64 * rs, vr + col, vr + col + (size_t)n64 * rs, n64, -1, single);
                    j++;
                }
            }
        }
        break;
    }
    }
    TN_FREE(work);
    TN_FREE(rwork);
    TN_FREE(iwork);
    return rc;
}
#endif
