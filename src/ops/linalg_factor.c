/* ---- torch.linalg: LU and Cholesky factorisations and what is built on them ----
   float32, float64, complex64, complex128, CPU. The kernels run on a contiguous copy of the
   batch, one [m, n] row-major matrix at a time: float32 in float32 (the LU and Cholesky, as
   LAPACK's sgetrf / spotrf, which PyTorch calls), float64 in float64, complex in complex128
   (tn__cplx pairs; a complex64 input is rounded once, at the end); the complex kernels (tn__la_*_c) are
   the same loops with the conjugates the math needs (A = L L^H). The backward formulas are
   PyTorch's, written in library ops that recompute the forward differentiably, so that
   double backward works; where they transpose, complex inputs take the conjugate transpose
   (mH), which gives PyTorch's conjugate Wirtinger gradients. */

/* cplx: the op takes complex64/complex128 (those with complex kernels; the rest refuse them) */
static int tn__la_check_dt(const char *fn, tn_tensor *A, const char *what, bool square, bool cplx) {
    if (A->ndim < 2)
        return TN__FAIL_INT("%s: The input tensor %s must have at least 2 dimensions.", fn, what);
    if (!cplx && tn_is_complex(A))
        return TN__FAIL_INT("%s: Expected a floating point tensor as input. Got %s (complex dtypes are not supported by this op yet)", fn, tn_dtype_name(A->dtype));
    if (A->dtype != TN_F32 && A->dtype != TN_F64 && A->dtype != TN_C64 && A->dtype != TN_C128)
        return TN__FAIL_INT("%s: Expected a floating point or complex tensor as input. Got %s", fn, tn__torch_type_name(A->dtype));
    if (A->device != TN_CPU) return TN__FAIL_INT("%s: not implemented on %s yet (CPU only)", fn, tn_device_name(A->device));
    if (square && A->shape[A->ndim - 1] != A->shape[A->ndim - 2])
        return TN__FAIL_INT("%s: %s must be batches of square matrices, but they are %lld by %lld matrices", fn, what,
                            (long long)A->shape[A->ndim - 2], (long long)A->shape[A->ndim - 1]);
    return 0;
}
/* A contiguous float64 (complex: complex128) copy, without history: the kernels overwrite it. */
static tn_tensor *tn__la_work(tn_tensor *A) { return tn_clone(tn_to_dtype(tn_detach(A), tn_is_complex(A) ? TN_C128 : TN_F64)); }
/* The conjugate transpose of the last two dims (of a real tensor, its transpose). */
static tn_tensor *tn__mH(tn_tensor *t) { return tn_conj(tn_transpose(t, -2, -1)); }
static tn__cplx tn__cconj(tn__cplx z) { return tn__cx(z.re, -z.im); }
static tn__cplx tn__csub(tn__cplx a, tn__cplx b) { return tn__cx(a.re - b.re, a.im - b.im); }
/* |re| + |im|: LAPACK's izamax (and so PyTorch's complex getrf) pivots on it, not on |z| */
static double tn__cabs1(tn__cplx z) { return fabs(z.re) + fabs(z.im); }
static int64_t tn__la_batch(tn_tensor *A) { return tn__numel(A->shape, A->ndim - 2); }

/* ---- on another device: its backend's linalg entry (tn_backend.linalg, src/api.h), which
   factors batches of column-major matrices in place; what is built on the factors (pivots to
   permutations, det from the LU, the backward formulas) is the library ops below, which run
   there too. A device without the entry refuses these ops, as before: PyTorch runs them on
   the GPU, so no silent copy to the CPU. ---- */
/* tn__la_check_dt for the ops routed to the entry: a device whose backend has one passes */
static int tn__la_check_dev(const char *fn, tn_tensor *A, const char *what, bool square) {
    const tn_backend *be = A->device != TN_CPU ? tn_get_backend(A->device) : NULL;
    if (!be || !be->linalg) return tn__la_check_dt(fn, A, what, square, true);
    tn_tensor v = tn__shallow(A);   /* the same dtype and shape checks */
    v.device = TN_CPU;
    return tn__la_check_dt(fn, &v, what, square, true);
}
static int tn__la_run(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag) {
#ifdef TENSOR_LAPACK
    if (a && a->device == TN_CPU) return tn__la_lapack(op, a, b, c, p, info, flag);   /* (ops/lapack.c) */
#endif
    return a ? tn_get_backend(a->device)->linalg(op, a, b, c, p, info, flag) : -1;
}
/* Where each op family chooses its kernels: whether A's factorization takes this
   column-major route (tn__la_run) rather than the built-in kernels below. On a device,
   always (its backend's entry); on the CPU under TENSOR_LAPACK, LAPACK's routines in A's
   dtype (cplx: the op's route also serves complex A). */
static bool tn__la_routed(tn_tensor *A, bool cplx) {
    if (A->device != TN_CPU) return true;
#ifdef TENSOR_LAPACK
    return cplx || !tn_is_complex(A);
#else
    (void)cplx;
    return false;
#endif
}
/* a new [d[0], ..., d[nd - 1]] tensor of dtype dt on A's device, in the open scope */
static tn_tensor *tn__la_dnew(tn_dtype dt, tn_tensor *A, int64_t d0, int64_t d1, int64_t d2, int nd) {
    const int64_t s[3] = {d0, d1, d2};
    return tn__own(tn__new(dt, A->device, s, nd));
}
/* [B, n, m]: a fresh copy of A's m x n matrices, column-major (no history) */
static tn_tensor *tn__la_cm(tn_tensor *A) {
    const int64_t s[3] = {tn__la_batch(A), A->shape[A->ndim - 1], A->shape[A->ndim - 2]};
    return tn_reshape(tn_clone(tn_transpose(tn_detach(A), -2, -1)), s, 3);
}
/* t [B, ...]'s last `tail` dims behind A's batch dims */
static tn_tensor *tn__la_unbatch(tn_tensor *t, tn_tensor *A, int tail) {
    if (!t) return NULL;
    int64_t s[TN_MAX_DIMS];
    const int nb = A->ndim - 2;
    memcpy(s, A->shape, (size_t)nb * sizeof(int64_t));
    for (int i = 0; i < tail; i++) s[nb + i] = t->shape[t->ndim - tail + i];
    return tn_reshape(t, s, nb + tail);
}
/* [..., rows, cols] (A's batch dims) from column-major matrices cm [B, cols, rows] */
static tn_tensor *tn__la_uncm(tn_tensor *cm, tn_tensor *A, int64_t rows, int64_t cols) {
    if (!cm) return NULL;
    int64_t s[TN_MAX_DIMS];
    memcpy(s, A->shape, (size_t)A->ndim * sizeof(int64_t));
    s[A->ndim - 2] = cols;
    s[A->ndim - 1] = rows;
    return tn_transpose(tn_reshape(cm, s, A->ndim), -2, -1);
}
/* [B, r, c] identities on A's device, A's dtype (the factors of empty matrices) */
static tn_tensor *tn__la_eye_dev(tn_tensor *A, int64_t B, int64_t r, int64_t c) {
    const int64_t s[3] = {B, r, c};
    return tn_contiguous(tn_expand(tn_to(tn_eye(r, c, A->dtype), A->device), s, 3));
}
/* tn__la_lu on the device: LU [..., m, n] in A's dtype, pivots [..., k] and info [...] int32 there */
static tn_tensor *tn__la_lu_dev(tn_tensor *A, tn_tensor **pivots, tn_tensor **info) {
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n, B = tn__la_batch(A);
    tn_tensor *cm = tn__la_cm(A), *p = tn__la_dnew(TN_I32, A, B, k, 0, 2), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1);
    if (!cm || !p || !f || tn__la_run(TN_LA_GETRF, cm, NULL, NULL, p, f, 0)) return NULL;
    *pivots = tn__la_unbatch(p, A, 1);
    *info = tn__la_unbatch(f, A, 0);
    return *pivots && *info ? tn__la_uncm(cm, A, m, n) : NULL;
}
/* tn__la_slogdet_raw on the device: sign prod(sign(diag U)) times the pivots' parity (one
   swap per pivot off its own row), log|det| sum(log|diag U|), float64; complex: the sign
   complex128, the product of the pivots' phases d / |d| (sgn: 0 for a zero pivot) */
static int tn__la_slogdet_dev(tn_tensor *A, tn_tensor **sign, tn_tensor **logabs) {
    tn_tensor *p = NULL, *f = NULL, *w = tn__la_lu_dev(A, &p, &f);
    if (!w) return -1;
    const int64_t n = A->shape[A->ndim - 1], last = -1;
    const bool cplx = tn_is_complex(A);
    tn_tensor *d = tn_to_dtype(tn_diagonal(w, .dim1 = -2, .dim2 = -1), cplx ? TN_C128 : TN_F64), *ad = tn_abs(d);
    tn_tensor *own = tn_to(tn_arange(1, (double)n + 1, 1, TN_I32), A->device);
    tn_tensor *swaps = tn_sum_dims(tn_ne(p, own), &last, 1);
    tn_tensor *parity = tn_to_dtype(tn_rsub_scalar(tn_mul_scalar(tn_remainder_scalar(swaps, 2), 2), 1), TN_F64);   /* 1 - 2 (swaps mod 2) */
    *sign = tn_mul(tn_prod_dims(cplx ? tn_sgn(d) : tn_sign(d), &last, 1), parity);
    *logabs = tn_sum_dims(tn_log(ad), &last, 1);
    return *sign && *logabs ? 0 : -1;
}
/* tn__la_getrs_raw on the device: X [..., n, r] in A's dtype, info [...]. On the CPU (LAPACK)
   a contiguous real A is factored as PyTorch's linalg.solve does: its row-major copy is A^T
   column-major, whose LU solves A^T^T X = B (getrs 'T'): torch's pivots, info and bits. */
static tn_tensor *tn__la_getrs_dev(tn_tensor *A, tn_tensor *Bm, tn_tensor **info) {
    const int64_t n = A->shape[A->ndim - 1], r = Bm->shape[Bm->ndim - 1], B = tn__la_batch(A), s[3] = {B, n, n};
    const bool at = A->device == TN_CPU && !tn_is_complex(A) && tn_is_contiguous(A);
    tn_tensor *cm = at ? tn_reshape(tn_clone(tn_detach(A)), s, 3) : tn__la_cm(A), *x = tn__la_cm(Bm), *p = tn__la_dnew(TN_I32, A, B, n, 0, 2), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1);
    if (!cm || !x || !p || !f || tn__la_run(TN_LA_GETRF, cm, NULL, NULL, p, f, 0) || tn__la_run(TN_LA_GETRS, cm, x, NULL, p, NULL, at ? 1 : 0)) return NULL;
    *info = tn__la_unbatch(f, A, 0);
    return *info ? tn__la_uncm(x, Bm, n, r) : NULL;
}

/* TN__LA_JOB(name, body): a parallel_range body (void *p, int64_t i0, int64_t i1), compiled
   twice on x86 as getf2 is (the helpers it calls inline into each copy). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__LA_AVX2 1
#define TN__LA_JOB(name, ...) \
    __attribute__((target("avx2"))) static void name##_avx2(void *p, int64_t i0, int64_t i1) { __VA_ARGS__ } \
    static void name##_plain(void *p, int64_t i0, int64_t i1) { __VA_ARGS__ } \
    static void name(void *p, int64_t i0, int64_t i1) { if (tn__gemm_isa() >= TN__GEMM_AVX2) name##_avx2(p, i0, i1); else name##_plain(p, i0, i1); }
#else
#define TN__LA_JOB(name, ...) static void name(void *p, int64_t i0, int64_t i1) { __VA_ARGS__ }
#endif
/* The blocked getrf and potrf (LAPACK's dgetrf, dpotrf): panels of nb columns by the
   unblocked kernels, the rest through the GEMM, for matrices of order tn__la_nx and more
   (below it the unblocked kernels alone, and their bits). Measured (one thread, AVX-512):
   blocked is ahead from order 96 (getrf 0.026 ms vs 0.037 at 96, 0.75 vs 2.4 at 384); panels
   of 32 beat 64 up to 384 (the panel work grows with nb), 64 halves the trailing updates'
   passes over a large matrix: tn__la_nb 0 picks 32 below order 512, 64 from it. Variables,
   not constants: the tests (tests/test_linalg_blocked.c) set them to reach the block edges
   on small matrices. */
TN__TESTABLE int64_t tn__la_nb = 0, tn__la_nx = 96;
static int64_t tn__la_block(int64_t k) { return tn__la_nb > 0 ? tn__la_nb : k < 512 ? 32 : 64; }
/* The real LU and Cholesky kernels, for float64 (suffix none) and float32 (_f: a float32 input
   is factored and solved in float32, as LAPACK's sgetrf / sgetrs / spotrf, which PyTorch calls;
   twice the values per SIMD register and no conversions). G names the GEMM (tn__gemm_f64 /
   tn__gemm_f32). */
/* @template TN__LA_LU(T, S, G) */
/* LU with partial pivoting of a row-major m x n matrix in place, as LAPACK's getrf:
   piv 1-based; returns info (0, or the first zero pivot's 1-based index; elimination
   goes on past it). Right-looking, row-oriented: the updates run along contiguous rows. On
   x86 the same loops are also compiled for AVX2 (no FMA: the same bits), picked at run time:
   a batch of small systems (linalg.solve, inv, det) spends its time in the row updates.
   tn__la_getf2 is the unblocked kernel over columns [j0, j1): pivot rows are swapped whole
   (all n columns), the eliminations update columns up to ce; the whole matrix is
   (0, min(m, n), n), a panel of the blocked getrf (j0, j0 + jb, j0 + jb). The body is an
   always-inline function, so that each copy compiles it for its own ISA. */
TN__ALWAYS_INLINE int64_t tn__la_getf2_body##S(T *a, int64_t m, int64_t n, int64_t j0, int64_t j1, int64_t ce, int32_t *piv) {
    int64_t info = 0;
    for (int64_t j = j0; j < j1; j++) {
        int64_t p = j;
        T best = (T)fabs(a[j * n + j]);
        for (int64_t i = j + 1; i < m; i++)
            if ((T)fabs(a[i * n + j]) > best) { best = (T)fabs(a[i * n + j]); p = i; }
        piv[j] = (int32_t)(p + 1);
        if (best == 0) { if (!info) info = j + 1; continue; }
        if (p != j)
            for (int64_t c = 0; c < n; c++) { T t = a[j * n + c]; a[j * n + c] = a[p * n + c]; a[p * n + c] = t; }
        const T inv = 1 / a[j * n + j], *rj = a + j * n;
        for (int64_t i = j + 1; i < m; i++) {
            T *ri = a + i * n, l = ri[j] *= inv;
            if (l != 0)
                for (int64_t c = j + 1; c < ce; c++) ri[c] -= l * rj[c];
        }
    }
    return info;
}
#ifdef TN__LA_AVX2
__attribute__((target("avx2"))) static int64_t tn__la_getf2_avx2##S(T *a, int64_t m, int64_t n, int64_t j0, int64_t j1, int64_t ce, int32_t *piv) { return tn__la_getf2_body##S(a, m, n, j0, j1, ce, piv); }
#endif
TN__TESTABLE int64_t tn__la_getf2##S(T *a, int64_t m, int64_t n, int64_t j0, int64_t j1, int64_t ce, int32_t *piv) {
#ifdef TN__LA_AVX2
    if (tn__gemm_isa() >= TN__GEMM_AVX2) return tn__la_getf2_avx2##S(a, m, n, j0, j1, ce, piv);
#endif
    return tn__la_getf2_body##S(a, m, n, j0, j1, ce, piv);
}
/* Solves T X = B in place by substitution: T n x n triangular (row stride lda), B n x k (row
   stride ldb). Row-oriented: the updates run along contiguous rows of B. */
static void tn__la_trsm_small##S(const T *a, int64_t lda, T *b, int64_t ldb, int64_t n, int64_t k, bool upper, bool unit) {
    for (int64_t s = 0; s < n; s++) {
        const int64_t i = upper ? n - 1 - s : s;
        T *bi = b + i * ldb;
        const int64_t c0 = upper ? i + 1 : 0, c1 = upper ? n : i;
        for (int64_t j = c0; j < c1; j++) {
            const T t = a[i * lda + j], *bj = b + j * ldb;
            if (t != 0)
                for (int64_t c = 0; c < k; c++) bi[c] -= t * bj[c];
        }
        if (!unit) {
            const T d = 1 / a[i * lda + i];
            for (int64_t c = 0; c < k; c++) bi[c] *= d;
        }
    }
}
/* C -= sign A B (M x N, K inner; strides in elements) through the GEMM; where it cannot allocate
   its buffers, the same product by plain loops (slower, never a failure mid-factorisation).
   The GEMM splits C's rows between threads and sums each entry in one order, so the result
   does not depend on the thread count. */
static void tn__la_gemm_sub##S(int64_t M, int64_t N, int64_t K, const T *A, int64_t rsa, int64_t csa,
                               const T *B, int64_t rsb, int64_t csb, T *C, int64_t rsc, int64_t csc, T sign) {
    if (M <= 0 || N <= 0 || K <= 0) return;
    if (!tn__gemm_##G(M, N, K, -sign, A, rsa, csa, B, rsb, csb, 1, C, rsc, csc)) return;
    for (int64_t i = 0; i < M; i++)
        for (int64_t t = 0; t < K; t++) {
            const T l = sign * A[i * rsa + t * csa];
            for (int64_t c = 0; c < N; c++) C[i * rsc + c * csc] -= l * B[t * rsb + c * csb];
        }
}
/* getrf: right-looking, as dgetrf: the panel [j0:m, j0:j0+jb] by getf2 (its row swaps span
   the whole rows, so dlaswp's are done), U's block row by the unit-lower triangular solve,
   the trailing matrix less L21 U12 by the GEMM. Pivots by the same rule as getf2's (the
   largest |a|, the first on ties). */
TN__TESTABLE int64_t tn__la_getrf##S(T *a, int64_t m, int64_t n, int32_t *piv) {
    const int64_t k = m < n ? m : n, nb = tn__la_block(k);
    if (k < tn__la_nx) return tn__la_getf2##S(a, m, n, 0, k, n, piv);
    int64_t info = 0;
    for (int64_t j0 = 0; j0 < k; j0 += nb) {
        const int64_t jb = k - j0 < nb ? k - j0 : nb, j1 = j0 + jb;
        const int64_t f = tn__la_getf2##S(a, m, n, j0, j1, j1, piv);
        if (f && !info) info = f;
        if (j1 >= n) continue;
        tn__la_trsm_small##S(a + j0 * n + j0, n, a + j0 * n + j1, n, jb, n - j1, false, true);
        tn__la_gemm_sub##S(m - j1, n - j1, jb, a + j1 * n + j0, n, 1, a + j0 * n + j1, n, 1, a + j1 * n + j1, n, 1, 1);
    }
    return info;
}
/* Solves A X = B (n x n factored by getrf, B n x k row-major, in place), as getrs. From
   order tn__la_nx the two triangular solves are blocked as trsm's (substitution on the
   diagonal blocks, the rest of B updated by the GEMM). */
TN__TESTABLE void tn__la_getrs##S(const T *lu, const int32_t *piv, int64_t n, T *b, int64_t k) {
    for (int64_t j = 0; j < n; j++) {
        int64_t p = piv[j] - 1;
        if (p != j)
            for (int64_t c = 0; c < k; c++) { T t = b[j * k + c]; b[j * k + c] = b[p * k + c]; b[p * k + c] = t; }
    }
    const int64_t nb = tn__la_block(n);
    if (n >= tn__la_nx) {
        for (int64_t j0 = 0; j0 < n; j0 += nb) {   /* L y = P b: the rows below each block lose L[below, block] y[block] */
            const int64_t jb = n - j0 < nb ? n - j0 : nb, j1 = j0 + jb;
            tn__la_trsm_small##S(lu + j0 * n + j0, n, b + j0 * k, k, jb, k, false, true);
            tn__la_gemm_sub##S(n - j1, k, jb, lu + j1 * n + j0, n, 1, b + j0 * k, k, 1, b + j1 * k, k, 1, 1);
        }
        for (int64_t j0 = (n - 1) / nb * nb; j0 >= 0; j0 -= nb) {   /* U x = y: the rows above lose U[above, block] x[block] */
            const int64_t jb = n - j0 < nb ? n - j0 : nb;
            tn__la_trsm_small##S(lu + j0 * n + j0, n, b + j0 * k, k, jb, k, true, false);
            tn__la_gemm_sub##S(j0, k, jb, lu + j0, n, 1, b + j0 * k, k, 1, b, k, 1, 1);
        }
        return;
    }
    if (k == 1) {   /* one right-hand side (a batch of small systems): the same operations in the
                       same order as the loops below, without their inner loop's overhead per entry */
        for (int64_t j = 0; j < n; j++) {   /* L y = P b by columns: b[i] still loses l_ij y_j in ascending j */
            const T y = b[j];
            for (int64_t i = j + 1; i < n; i++) { const T l = lu[i * n + j]; if (l != 0) b[i] -= l * y; }
        }
        for (int64_t i = n - 1; i >= 0; i--) {   /* U x = y */
            T s = b[i];
            for (int64_t j = i + 1; j < n; j++) { const T u = lu[i * n + j]; if (u != 0) s -= u * b[j]; }
            const T d = 1 / lu[i * n + i];
            b[i] = s * d;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++)   /* L y = P b (unit lower) */
        for (int64_t j = 0; j < i; j++) {
            T l = lu[i * n + j];
            if (l != 0)
                for (int64_t c = 0; c < k; c++) b[i * k + c] -= l * b[j * k + c];
        }
    for (int64_t i = n - 1; i >= 0; i--) {   /* U x = y */
        for (int64_t j = i + 1; j < n; j++) {
            T u = lu[i * n + j];
            if (u != 0)
                for (int64_t c = 0; c < k; c++) b[i * k + c] -= u * b[j * k + c];
        }
        T d = 1 / lu[i * n + i];
        for (int64_t c = 0; c < k; c++) b[i * k + c] *= d;
    }
}
/* potf2 on columns [j0, j1) of the row-major n x n lower triangle, rows up to r1: the
   columns before j0 already subtracted (the whole matrix: 0, n, n). Left-looking (Crout):
   column j reads only the input and the finished columns, so where it stops (returning the
   1-based order of the minor that is not positive-definite, with its updated pivot on the
   diagonal) the columns after it are untouched. */
TN__TESTABLE int64_t tn__la_potf2##S(T *a, int64_t n, int64_t j0, int64_t j1, int64_t r1) {
    for (int64_t j = j0; j < j1; j++) {
        T d = a[j * n + j];
        for (int64_t c = j0; c < j; c++) d -= a[j * n + c] * a[j * n + c];
        if (!(d > 0)) {
            a[j * n + j] = d;
            return j + 1;
        }
        d = (T)sqrt(d);
        a[j * n + j] = d;
        for (int64_t i = j + 1; i < r1; i++) {
            T s = a[i * n + j];
            for (int64_t c = j0; c < j; c++) s -= a[i * n + c] * a[j * n + c];
            a[i * n + j] = s / d;
        }
    }
    return 0;
}
/* Cholesky A = L L^T of the lower triangle (row-major n x n, in place; the strict upper
   triangle is zeroed), as potrf: returns info (0, or the order of the leading minor that
   is not positive-definite). Where it stops, potf2 (the unblocked potrf, which torch's
   LAPACK runs at these sizes) leaves the failing pivot's updated value on the diagonal and
   the columns after it as the input: torch's cholesky_ex returns that, its upper triangle
   zeroed. From order tn__la_nx it is blocked and left-looking, as dpotrf('U') on the
   column-major transpose: a block column of tn__la_nb less L[cols, 0:j0] L[block, 0:j0]^T
   (the GEMM), its diagonal block by potf2, the rows below by the triangular solve
   X L11^T = A21. Where it stops the same is left as potf2 leaves: the finished columns,
   the pivot, the input after it (the block's copy put back). */
TN__TESTABLE int64_t tn__la_potrf##S(T *a, int64_t n) {
    const int64_t nb = tn__la_block(n);
    int64_t info = 0;
    T *keep = n >= tn__la_nx ? (T *)TN_MALLOC((size_t)(nb * nb) * sizeof(T)) : NULL;
    if (!keep) info = tn__la_potf2##S(a, n, 0, n, n);   /* (small, or no memory for the copy) */
    for (int64_t j0 = 0; keep && j0 < n; j0 += nb) {
        const int64_t jb = n - j0 < nb ? n - j0 : nb, j1 = j0 + jb;
        for (int64_t i = 0; i < jb; i++) memcpy(keep + i * jb, a + (j0 + i) * n + j0, (size_t)jb * sizeof(T));
        /* the diagonal block less L[block, 0:j0] L[block, 0:j0]^T (its upper half too: not read) */
        tn__la_gemm_sub##S(jb, jb, j0, a + j0 * n, n, 1, a + j0 * n, 1, n, a + j0 * n + j0, n, 1, 1);
        const int64_t f = tn__la_potf2##S(a, n, j0, j1, j1), done = f ? f - 1 - j0 : jb;
        /* the rows below, the block's finished columns: less L[below, 0:j0] L[block, 0:j0]^T, then X L11^T = A21 */
        tn__la_gemm_sub##S(n - j1, done, j0, a + j1 * n, n, 1, a + j0 * n, 1, n, a + j1 * n + j0, n, 1, 1);
        for (int64_t i = j1; i < n; i++) {
            T *ri = a + i * n + j0;
            for (int64_t c = 0; c < done; c++) {
                const T *lc = a + (j0 + c) * n + j0;
                T s = ri[c];
                for (int64_t t = 0; t < c; t++) s -= ri[t] * lc[t];
                ri[c] = s / lc[c];
            }
        }
        if (f) {   /* the block's columns from the failing one as they came in, but its pivot */
            for (int64_t i = 0; i < jb; i++)
                for (int64_t c = done; c < jb; c++)
                    if (i != done || c != done) a[(j0 + i) * n + j0 + c] = keep[i * jb + c];
            info = f;
            break;
        }
    }
    TN_FREE(keep);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0;
    return info;
}
/* B matrices n x n: potrf of each (upper: of the mirror of its upper triangle, potrf('U')'s
   input, the lower one of A^T), info into fv; the matrices split between threads. */
typedef struct { T *a; int32_t *fv; int64_t n; bool upper; } tn__la_chol##S##_t;
static void tn__la_chol_part##S(void *p, int64_t b0, int64_t b1) {
    const tn__la_chol##S##_t *c = (const tn__la_chol##S##_t *)p;
    const int64_t n = c->n;
    for (int64_t b = b0; b < b1; b++) {
        T *a = c->a + b * n * n;
        if (c->upper)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) a[j * n + i] = a[i * n + j];
        c->fv[b] = (int32_t)tn__la_potrf##S(a, n);
    }
}
/* @end TN__LA_LU */
TN__LA_LU(double, , f64)
TN__LA_LU(float, _f, f32)
/* The complex getf2 over columns [j0, j1), eliminations up to column ce (tn__la_getf2's
   arguments): pivots on |re| + |im| (zgetrf's izamax). */
static int64_t tn__la_getf2_c(tn__cplx *a, int64_t m, int64_t n, int64_t j0, int64_t j1, int64_t ce, int32_t *piv) {
    int64_t info = 0;
    for (int64_t j = j0; j < j1; j++) {
        int64_t p = j;
        double best = tn__cabs1(a[j * n + j]);
        for (int64_t i = j + 1; i < m; i++)
            if (tn__cabs1(a[i * n + j]) > best) { best = tn__cabs1(a[i * n + j]); p = i; }
        piv[j] = (int32_t)(p + 1);
        if (best == 0) { if (!info) info = j + 1; continue; }
        if (p != j)
            for (int64_t c = 0; c < n; c++) { tn__cplx t = a[j * n + c]; a[j * n + c] = a[p * n + c]; a[p * n + c] = t; }
        const tn__cplx inv = tn__cdiv(tn__cx(1, 0), a[j * n + j]), *rj = a + j * n;
        for (int64_t i = j + 1; i < m; i++) {
            tn__cplx *ri = a + i * n, l = ri[j] = tn__cmul(ri[j], inv);
            if (l.re != 0 || l.im != 0)
                for (int64_t c = j + 1; c < ce; c++) ri[c] = tn__csub(ri[c], tn__cmul(l, rj[c]));
        }
    }
    return info;
}
/* C -= A B, or A conj(B) (complex, strides in complex elements), as four real products through
   tn__la_gemm_sub on the interleaved parts (the complex GEMM LAPACK's zgetrf / zpotrf call). */
static void tn__la_zgemm_sub(int64_t M, int64_t N, int64_t K, const tn__cplx *A, int64_t rsa, int64_t csa,
                             const tn__cplx *B, int64_t rsb, int64_t csb, bool conjb, tn__cplx *C, int64_t rsc, int64_t csc) {
    const double *ar = &A->re, *ai = &A->im, *br = &B->re, *bi = &B->im;
    double *cr = &C->re, *ci = &C->im;
    rsa *= 2; csa *= 2; rsb *= 2; csb *= 2; rsc *= 2; csc *= 2;
    /* re: Ar Br - Ai Bi (conj: + Ai Bi); im: Ar Bi + Ai Br (conj: Ai Br - Ar Bi) */
    tn__la_gemm_sub(M, N, K, ar, rsa, csa, br, rsb, csb, cr, rsc, csc, 1);
    tn__la_gemm_sub(M, N, K, ai, rsa, csa, bi, rsb, csb, cr, rsc, csc, conjb ? 1 : -1);
    tn__la_gemm_sub(M, N, K, ar, rsa, csa, bi, rsb, csb, ci, rsc, csc, conjb ? -1 : 1);
    tn__la_gemm_sub(M, N, K, ai, rsa, csa, br, rsb, csb, ci, rsc, csc, 1);
}
/* The complex getrf: tn__la_getrf's blocking, the complex GEMM. */
static int64_t tn__la_getrf_c(tn__cplx *a, int64_t m, int64_t n, int32_t *piv) {
    const int64_t k = m < n ? m : n, nb = tn__la_block(k);
    if (k < tn__la_nx) return tn__la_getf2_c(a, m, n, 0, k, n, piv);
    int64_t info = 0;
    for (int64_t j0 = 0; j0 < k; j0 += nb) {
        const int64_t jb = k - j0 < nb ? k - j0 : nb, j1 = j0 + jb;
        const int64_t f = tn__la_getf2_c(a, m, n, j0, j1, j1, piv);
        if (f && !info) info = f;
        if (j1 >= n) continue;
        for (int64_t i = j0 + 1; i < j1; i++)   /* U12 = L11^-1 A12 (unit lower) */
            for (int64_t t = j0; t < i; t++) {
                const tn__cplx l = a[i * n + t];
                for (int64_t c = j1; c < n; c++) a[i * n + c] = tn__csub(a[i * n + c], tn__cmul(l, a[t * n + c]));
            }
        tn__la_zgemm_sub(m - j1, n - j1, jb, a + j1 * n + j0, n, 1, a + j0 * n + j1, n, 1, false, a + j1 * n + j1, n, 1);
    }
    return info;
}
/* The complex tn__la_trsm_small: T X = B by substitution on one diagonal block (row strides
   lda, ldb), the loops of the unblocked complex getrs (and of linalg_more.c's complex
   triangular solves). A zero entry of T is skipped, as the real loops do. */
static void tn__la_trsm_small_c(const tn__cplx *a, int64_t lda, tn__cplx *b, int64_t ldb, int64_t n, int64_t k, bool upper, bool unit) {
    for (int64_t s = 0; s < n; s++) {
        const int64_t i = upper ? n - 1 - s : s;
        tn__cplx *bi = b + i * ldb;
        const int64_t c0 = upper ? i + 1 : 0, c1 = upper ? n : i;
        for (int64_t j = c0; j < c1; j++) {
            const tn__cplx t = a[i * lda + j], *bj = b + j * ldb;
            if (t.re != 0 || t.im != 0)
                for (int64_t c = 0; c < k; c++) bi[c] = tn__csub(bi[c], tn__cmul(t, bj[c]));
        }
        if (!unit)
            for (int64_t c = 0; c < k; c++) bi[c] = tn__cdiv(bi[c], a[i * lda + i]);
    }
}
/* The complex getrs: tn__la_getrs's blocking from order tn__la_nx (substitution on the
   diagonal blocks, the rest of B through the complex GEMM), the plain loops below it. */
static void tn__la_getrs_c(const tn__cplx *lu, const int32_t *piv, int64_t n, tn__cplx *b, int64_t k) {
    for (int64_t j = 0; j < n; j++) {
        int64_t p = piv[j] - 1;
        if (p != j)
            for (int64_t c = 0; c < k; c++) { tn__cplx t = b[j * k + c]; b[j * k + c] = b[p * k + c]; b[p * k + c] = t; }
    }
    if (n >= tn__la_nx) {
        const int64_t nb = tn__la_block(n);
        for (int64_t j0 = 0; j0 < n; j0 += nb) {   /* L y = P b */
            const int64_t jb = n - j0 < nb ? n - j0 : nb, j1 = j0 + jb;
            tn__la_trsm_small_c(lu + j0 * n + j0, n, b + j0 * k, k, jb, k, false, true);
            tn__la_zgemm_sub(n - j1, k, jb, lu + j1 * n + j0, n, 1, b + j0 * k, k, 1, false, b + j1 * k, k, 1);
        }
        for (int64_t j0 = (n - 1) / nb * nb; j0 >= 0; j0 -= nb) {   /* U x = y */
            const int64_t jb = n - j0 < nb ? n - j0 : nb;
            tn__la_trsm_small_c(lu + j0 * n + j0, n, b + j0 * k, k, jb, k, true, false);
            tn__la_zgemm_sub(j0, k, jb, lu + j0, n, 1, b + j0 * k, k, 1, false, b, k, 1);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++) {
            tn__cplx l = lu[i * n + j];
            for (int64_t c = 0; c < k; c++) b[i * k + c] = tn__csub(b[i * k + c], tn__cmul(l, b[j * k + c]));
        }
    for (int64_t i = n - 1; i >= 0; i--) {
        for (int64_t j = i + 1; j < n; j++) {
            tn__cplx u = lu[i * n + j];
            for (int64_t c = 0; c < k; c++) b[i * k + c] = tn__csub(b[i * k + c], tn__cmul(u, b[j * k + c]));
        }
        tn__cplx d = lu[i * n + i];
        for (int64_t c = 0; c < k; c++) b[i * k + c] = tn__cdiv(b[i * k + c], d);
    }
}
/* The complex potf2 over columns [j0, j1), rows up to r1 (tn__la_potf2's arguments): A = L L^H
   from the lower triangle; the diagonal's imaginary parts are not read (zpotrf's), L's diagonal
   is real and positive. Returns the failing minor's order, the diagonal left as it came in. */
static int64_t tn__la_potf2_c(tn__cplx *a, int64_t n, int64_t j0, int64_t j1, int64_t r1) {
    for (int64_t j = j0; j < j1; j++) {
        double d = a[j * n + j].re;
        for (int64_t c = j0; c < j; c++) d -= a[j * n + c].re * a[j * n + c].re + a[j * n + c].im * a[j * n + c].im;
        if (!(d > 0)) return j + 1;
        d = sqrt(d);
        a[j * n + j] = tn__cx(d, 0);
        for (int64_t i = j + 1; i < r1; i++) {
            tn__cplx s = a[i * n + j];
            for (int64_t c = j0; c < j; c++) s = tn__csub(s, tn__cmul(a[i * n + c], tn__cconj(a[j * n + c])));
            a[i * n + j] = tn__cscale(s, 1 / d);
        }
    }
    return 0;
}
/* The complex potrf: unblocked below order tn__la_nx (where it fails, the rest is left as it
   is: the upper triangle too); from it tn__la_potrf's blocking with L[block, 0:j0]^H, and where
   it fails the failing block's columns from the failing one as they came in, the upper
   triangle zeroed. */
static int64_t tn__la_potrf_c(tn__cplx *a, int64_t n) {
    const int64_t nb = tn__la_block(n);
    tn__cplx *keep = n >= tn__la_nx ? (tn__cplx *)TN_MALLOC((size_t)(nb * nb) * sizeof(tn__cplx)) : NULL;
    int64_t info = 0;
    if (!keep && (info = tn__la_potf2_c(a, n, 0, n, n))) return info;
    for (int64_t j0 = 0; keep && j0 < n; j0 += nb) {
        const int64_t jb = n - j0 < nb ? n - j0 : nb, j1 = j0 + jb;
        for (int64_t i = 0; i < jb; i++) memcpy(keep + i * jb, a + (j0 + i) * n + j0, (size_t)jb * sizeof(tn__cplx));
        tn__la_zgemm_sub(jb, jb, j0, a + j0 * n, n, 1, a + j0 * n, 1, n, true, a + j0 * n + j0, n, 1);
        const int64_t f = tn__la_potf2_c(a, n, j0, j1, j1), done = f ? f - 1 - j0 : jb;
        tn__la_zgemm_sub(n - j1, done, j0, a + j1 * n, n, 1, a + j0 * n, 1, n, true, a + j1 * n + j0, n, 1);
        for (int64_t i = j1; i < n; i++) {   /* X L11^H = A21 */
            tn__cplx *ri = a + i * n + j0;
            for (int64_t c = 0; c < done; c++) {
                const tn__cplx *lc = a + (j0 + c) * n + j0;
                tn__cplx s = ri[c];
                for (int64_t t = 0; t < c; t++) s = tn__csub(s, tn__cmul(ri[t], tn__cconj(lc[t])));
                ri[c] = tn__cscale(s, 1 / lc[c].re);
            }
        }
        if (f) {
            for (int64_t i = 0; i < jb; i++)
                for (int64_t c = done; c < jb; c++) a[(j0 + i) * n + j0 + c] = keep[i * jb + c];
            info = f;
            break;
        }
    }
    TN_FREE(keep);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) a[i * n + j] = tn__cx(0, 0);
    return info;
}

/* One pass over the batch: each matrix factored (getrf) and, where x is given and it is not
   singular, its k right-hand sides solved (getrs) while the factor is in cache; the matrices
   split between threads. Each matrix's arithmetic is the same at any thread count. */
typedef struct { void *a, *x; int32_t *pv, *fv; int64_t m, n, k; tn_dtype dt; } tn__la_lu_job;
static void tn__la_lu_part(void *p, int64_t b0, int64_t b1) {
    const tn__la_lu_job *j = (const tn__la_lu_job *)p;
    const int64_t m = j->m, n = j->n, mn = m < n ? m : n, k = j->k;
    for (int64_t b = b0; b < b1; b++) {
        int32_t *pv = j->pv + b * mn;
        if (j->dt == TN_F32) {
            float *a = (float *)j->a + b * m * n;
            j->fv[b] = (int32_t)tn__la_getrf_f(a, m, n, pv);
            if (j->x && !j->fv[b]) tn__la_getrs_f(a, pv, n, (float *)j->x + b * n * k, k);
        } else if (j->dt == TN_F64) {
            double *a = (double *)j->a + b * m * n;
            j->fv[b] = (int32_t)tn__la_getrf(a, m, n, pv);
            if (j->x && !j->fv[b]) tn__la_getrs(a, pv, n, (double *)j->x + b * n * k, k);
        } else {
            tn__cplx *a = (tn__cplx *)j->a + b * m * n;
            j->fv[b] = (int32_t)tn__la_getrf_c(a, m, n, pv);
            if (j->x && !j->fv[b]) tn__la_getrs_c(a, pv, n, (tn__cplx *)j->x + b * n * k, k);
        }
    }
}
/* The dtype the built-in kernels run in: float32 for float32 (sgetrf's), else float64 or
   complex128 (tn__la_work's; cplx: a complex operand beside A). */
static tn_dtype tn__la_kdt(tn_tensor *A, bool f32, bool cplx) { return A->dtype == TN_F32 && f32 ? TN_F32 : cplx || tn_is_complex(A) ? TN_C128 : TN_F64; }
/* The [..., m, n] LU of A (a contiguous copy in dtype dt, tn__la_kdt's, factored), pivots
   [..., min(m, n)] int32 and info [...] int32. With X (a contiguous copy of the right-hand
   sides [..., n, k] in dt), also solves A X = B in place. */
static tn_tensor *tn__la_lu_solve_cpu(tn_tensor *A, tn_dtype dt, tn_tensor *X, tn_tensor **pivots, tn_tensor **info) {
    tn_tensor *w = tn_clone(tn_to_dtype(tn_detach(A), dt));
    if (!w) return NULL;
    const int nd = A->ndim;
    const int64_t m = A->shape[nd - 2], n = A->shape[nd - 1], k = m < n ? m : n, B = tn__la_batch(A);
    const int64_t r = X ? X->shape[X->ndim - 1] : 0;
    int64_t ps[TN_MAX_DIMS];
    memcpy(ps, A->shape, sizeof ps);
    ps[nd - 2] = k;
    tn_tensor *p = tn__own(tn__new(TN_I32, TN_CPU, ps, nd - 1)), *f = tn__own(tn__new(TN_I32, TN_CPU, A->shape, nd - 2));
    if (!p || !f) return NULL;
    tn__la_lu_job j = {tn_data_ptr(w), X ? tn_data_ptr(X) : NULL, (int32_t *)tn_data_ptr(p), (int32_t *)tn_data_ptr(f), m, n, r, w->dtype};
    tn__parallel_range(tn__par_threads(tn__mul_sat(B, m * n * (k + 2 * r)), B), B, tn__la_lu_part, &j);   /* the matrices split between threads */
    *pivots = p;
    *info = f;
    return w;
}
static tn_tensor *tn__la_lu(tn_tensor *A, tn_tensor **pivots, tn_tensor **info) {
    if (tn__la_routed(A, true)) return tn__la_lu_dev(A, pivots, info);   /* (A's dtype there) */
    return tn__la_lu_solve_cpu(A, tn__la_kdt(A, true, false), NULL, pivots, info);
}
/* The first nonzero info of a batch as PyTorch's message ("(Batch element 3): " in front
   for a batch), or 0. */
static int tn__la_info_error(const char *fn, tn_tensor *info, const char *fmt) {
    if (info->device != TN_CPU && !(info = tn_to(info, TN_CPU))) return -1;   /* (a device's: read back, one synchronisation) */
    const int32_t *v = (const int32_t *)tn_data_ptr(info);
    int64_t B = tn_numel(info);
    for (int64_t b = 0; b < B; b++)
        if (v[b] > 0) {
            char msg[256];
            snprintf(msg, sizeof msg, fmt, (int)v[b], (int)v[b]);   /* (twice: "U[%d, %d]" names the index twice; an extra argument is ignored) */
            if (info->ndim > 0) return TN__FAIL_INT("%s: (Batch element %lld): %s", fn, (long long)b, msg);
            return TN__FAIL_INT("%s: %s", fn, msg);
        }
    return 0;
}
#define TN__LA_SINGULAR "The diagonal element %d is zero, the inversion could not be completed because the input matrix is singular."
#define TN__LA_NOT_PD "The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite)."

/* ---- lu_factor ---- */
/* P [..., m, m] (dtype dt) with A = P L U, from getrf's 1-based row swaps. */
static tn_tensor *tn__la_perm(tn_tensor *piv, int64_t m, tn_dtype dt) {
    if (piv->device != TN_CPU) return tn_to(tn__la_perm(tn_to(piv, TN_CPU), m, dt), piv->device);   /* the pivots read back, P built here */
    const int nd = piv->ndim;
    int64_t shape[TN_MAX_DIMS], k = piv->shape[nd - 1], B = tn__numel(piv->shape, nd - 1);
    memcpy(shape, piv->shape, sizeof shape);
    shape[nd - 1] = m; shape[nd] = m;
    tn_tensor *P = tn__own(tn__new(TN_F64, TN_CPU, shape, nd + 1));
    int64_t *order = (int64_t *)TN_MALLOC((size_t)(m ? m : 1) * sizeof(int64_t));
    if (!P || !order) { TN_FREE(order); return P ? (tn_tensor *)tn__error("tn_linalg_lu_factor: out of memory") : NULL; }
    const int32_t *pv = (const int32_t *)tn_data_ptr(piv);
    double *p = (double *)tn_data_ptr(P);
    memset(p, 0, (size_t)(B * m * m) * sizeof(double));
    for (int64_t b = 0; b < B; b++) {
        for (int64_t i = 0; i < m; i++) order[i] = i;
        for (int64_t i = 0; i < k; i++) { int64_t j = pv[b * k + i] - 1, t = order[i]; order[i] = order[j]; order[j] = t; }
        for (int64_t i = 0; i < m; i++) p[b * m * m + order[i] * m + i] = 1;   /* row i of P^T A is row order[i] of A */
    }
    TN_FREE(order);
    return tn_to_dtype(P, dt);
}
/* PyTorch's linalg_lu_backward (square, wide and tall) for the packed LU: gL = tril(gLU, -1),
   gU = triu(gLU); the triangular solves go through linalg.solve. LU is recomputed from A. */
static int tn__lu_factor_bw(tn_ctx *nd, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(nd, 0), *piv = NULL, *LU = tn_linalg_lu_factor(A, &piv);
    if (!LU) return -1;
    const int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n;
    tn_tensor *L = tn_add(tn__tril(tn_narrow(LU, -1, 0, k), -1), tn_to(tn_eye(m, k, A->dtype), A->device));
    tn_tensor *U = tn__triu(tn_narrow(LU, -2, 0, k), 0);
    tn_tensor *gL = tn__tril(tn_narrow(g, -1, 0, k), -1), *gU = tn__triu(tn_narrow(g, -2, 0, k), 0);
    tn_tensor *LH = tn__mH(L), *UH = tn__mH(U), *X;
    if (m == n) {
        X = tn_add(tn__tril(tn_matmul(LH, gL), -1), tn__triu(tn_matmul(gU, UH), 0));
        X = tn_linalg_solve(LH, tn_linalg_solve(UH, X, .left = false));
    } else if (m < n) {   /* wide: U = [U1 U2] */
        X = tn__tril(tn_sub(tn_matmul(LH, gL), tn_matmul(gU, UH)), -1);
        X = tn_linalg_solve(tn__mH(tn_narrow(U, -1, 0, k)), X, .left = false);
        tn_tensor *parts[2] = {tn_add(X, tn_narrow(gU, -1, 0, k)), tn_narrow(gU, -1, k, n - k)};
        X = tn_linalg_solve(LH, tn_cat(parts, 2, .dim = -1));
    } else {              /* tall: L = [L1; L2] */
        X = tn__triu(tn_sub(tn_matmul(gU, UH), tn_matmul(LH, gL)), 0);
        X = tn_linalg_solve(tn__mH(tn_narrow(L, -2, 0, k)), X);
        tn_tensor *parts[2] = {tn_add(X, tn_narrow(gL, -2, 0, k)), tn_narrow(gL, -2, k, m - k)};
        X = tn_linalg_solve(UH, tn_cat(parts, 2, .dim = -2), .left = false);
    }
    tn_tensor *P = X ? tn__la_perm(piv, m, A->dtype) : NULL;
    gin[0] = P ? tn_matmul(P, X) : NULL;
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__lu_factor_ex_impl(tn_tensor *A, bool pivot, bool check_errors, tn_tensor **pivots, tn_tensor **info) {
    TN__CHECK_NULL(A);
    const char *fn = "tn_linalg_lu_factor_ex";
    if (tn__la_check_dev(fn, A, "A", false)) return NULL;
    if (!pivot) return (tn_tensor *)tn__error("%s: LU without pivoting is not implemented on the CPU", fn);
    tn_scope_begin();
    tn_tensor *p = NULL, *f = NULL, *w = tn__la_lu(A, &p, &f), *r = NULL;
    if (w && !(check_errors && tn__la_info_error(fn, f, "The factorization could not be completed because the input is singular (U[%d, %d] is zero)")))
        r = tn_keep(tn_to_dtype(w, A->dtype));
    if (r) { *pivots = tn_keep(p); if (info) *info = tn_keep(f); }
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("LinalgLuFactorExBackward0", tn__lu_factor_bw, &A, 1) : NULL;
    if (nd) tn__node_save(nd, A);
    return tn__node_attach(nd, r);
}
TNDEF tn_tensor *tn_linalg_lu_factor_ex_opts(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, tn_lu_factor_ex_fn_opts o) {
    if (pivots) *pivots = NULL;
    if (info) *info = NULL;
    if (!pivots) return (tn_tensor *)tn__error("tn_linalg_lu_factor_ex: pivots must not be NULL");
    return TN__AS("tn_linalg_lu_factor_ex", tn__lu_factor_ex_impl(A, o.pivot, o.check_errors, pivots, info));
}
TNDEF tn_tensor *tn_linalg_lu_factor_ex_str(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, const char *options) { if (pivots) *pivots = NULL; if (info) *info = NULL; TN__KW_STR(tn_lu_factor_ex_fn_opts, lu_factor_ex, "tn_linalg_lu_factor_ex", options, tn_linalg_lu_factor_ex_opts(A, pivots, info, o)); }
TNDEF tn_tensor *tn_linalg_lu_factor_opts(tn_tensor *A, tn_tensor **pivots, tn_lu_factor_fn_opts o) {
    const bool pivot = o.pivot;
    if (pivots) *pivots = NULL;
    if (!pivots) return (tn_tensor *)tn__error("tn_linalg_lu_factor: pivots must not be NULL");
    /* torch.linalg.lu_factor has no check for singular input: it returns the factors */
    return TN__AS("tn_linalg_lu_factor", tn__lu_factor_ex_impl(A, pivot, false, pivots, NULL));
}
TNDEF tn_tensor *tn_linalg_lu_factor_str(tn_tensor *A, tn_tensor **pivots, const char *options) { if (pivots) *pivots = NULL; TN__KW_STR(tn_lu_factor_fn_opts, lu_factor, "tn_linalg_lu_factor", options, tn_linalg_lu_factor_opts(A, pivots, o)); }

/* torch.lu_unpack: P, L, U from the packed LU and its pivots (a composite of tril/triu: the
   gradient reaches LU through them). */
static tn_tensor *tn__lu_unpack_impl(tn_tensor *LU, tn_tensor *pivots, tn_tensor **L, tn_tensor **U) {
    TN__CHECK_NULL(LU, pivots);
    const char *fn = "tn_lu_unpack";
    if (tn__la_check_dev(fn, LU, "LU_data", false)) return NULL;
    const int64_t m = LU->shape[LU->ndim - 2], n = LU->shape[LU->ndim - 1], k = m < n ? m : n;
    if (pivots->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Got %s", fn, tn_dtype_name(pivots->dtype));
    if (pivots->ndim != LU->ndim - 1 || pivots->shape[pivots->ndim - 1] != k || memcmp(pivots->shape, LU->shape, (size_t)(LU->ndim - 2) * sizeof(int64_t)))
        return (tn_tensor *)tn__error("%s: LU_pivots %s does not match LU_data %s (expected [..., %lld])", fn, TN__SHAPE(pivots), TN__SHAPE(LU), (long long)k);
    tn_scope_begin();
    tn_tensor *pc = tn_contiguous(tn_to(pivots, TN_CPU));   /* (a device's pivots read back) */
    const int32_t *pv = pc ? (const int32_t *)tn_data_ptr(pc) : NULL;
    for (int64_t i = 0, N = tn_numel(pc); pv && i < N; i++)
        if (pv[i] < 1 || pv[i] > m) { tn__error("%s: LU_pivots holds %d, outside [1, %lld]", fn, (int)pv[i], (long long)m); pv = NULL; }
    tn_tensor *P = pv ? tn_to(tn__la_perm(pc, m, LU->dtype), LU->device) : NULL;
    if (P) {
        *L = tn_keep(tn_add(tn__tril(tn_narrow(LU, -1, 0, k), -1), tn_to(tn_eye(m, k, LU->dtype), LU->device)));
        *U = tn_keep(tn__triu(tn_narrow(LU, -2, 0, k), 0));
    }
    return tn__scope_return(P && *L && *U ? P : NULL);
}
TNDEF tn_tensor *tn_lu_unpack(tn_tensor *LU, tn_tensor *pivots, tn_tensor **L, tn_tensor **U) {
    if (!L || !U) return (tn_tensor *)tn__error("tn_lu_unpack: L and U must not be NULL");
    *L = *U = NULL;
    return TN__AS("tn_lu_unpack", tn__lu_unpack_impl(LU, pivots, L, U));
}

/* ---- det, slogdet: from the LU's diagonal and the pivots' parity ---- */
/* sign and log|det| of each matrix of the batch (work tensors of the batch shape: sign
   float64, or complex128 for a complex A (the product of the pivots' phases); log|det| float64,
   also from a float32 A's float32 LU: the sum of the logs in float64). */
static int tn__la_slogdet_raw(tn_tensor *A, tn_tensor **sign, tn_tensor **logabs) {
    if (tn__la_routed(A, false)) return tn__la_slogdet_dev(A, sign, logabs);   /* (complex: the phases' product below) */
    tn_tensor *p = NULL, *f = NULL, *w = tn__la_lu(A, &p, &f);
    if (w && tn__la_routed(A, true)) w = tn__la_work(w);   /* (LAPACK's LU of a complex A, in A's dtype) */
    if (!w) return -1;
    const bool cplx = tn_is_complex(w);
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A);
    tn_tensor *s = tn__own(tn__new(cplx ? TN_C128 : TN_F64, TN_CPU, A->shape, A->ndim - 2)), *l = tn__own(tn__new(TN_F64, TN_CPU, A->shape, A->ndim - 2));
    if (!s || !l) return -1;
    const int32_t *pv = (const int32_t *)tn_data_ptr(p);
    double *lv = (double *)tn_data_ptr(l);
    for (int64_t b = 0; b < B; b++) {
        double la = 0, par = 1;
        tn__cplx sg = tn__cx(1, 0);
        for (int64_t i = 0; i < n; i++) {
            if (pv[b * n + i] != i + 1) par = -par;
            if (cplx) {
                tn__cplx d = ((const tn__cplx *)tn_data_ptr(w))[b * n * n + i * n + i];
                double m = tn__cabs(d);
                sg = m == 0 ? tn__cx(0, 0) : tn__cmul(sg, tn__cscale(d, 1 / m));
                la += log(m);
            } else {
                const int64_t at = b * n * n + i * n + i;   /* (a float32 LU's pivots, summed in float64) */
                double d = w->dtype == TN_F32 ? (double)((const float *)tn_data_ptr(w))[at] : ((const double *)tn_data_ptr(w))[at];
                if (d < 0) sg.re = -sg.re;
                if (d == 0) sg.re = 0;
                la += log(fabs(d));
            }
        }
        if (cplx) ((tn__cplx *)tn_data_ptr(s))[b] = tn__cscale(sg, par);
        else ((double *)tn_data_ptr(s))[b] = sg.re * par;
        lv[b] = la;
    }
    *sign = s;
    *logabs = l;
    return 0;
}
/* PyTorch's formulas for invertible A, with G = A^{-H}: d det(A): g conj(det) G; d log|det|
   (and complex logdet, i[0] = 0): g G; slogdet's sign (i[0] = 2): zero for real A, for
   complex A i Im(g conj(sign)) G (the sign's phase moves with Im tr(A^{-1} dA)). */
static int tn__det_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(n, 0);
    if (n->i[0] == 2) {
        if (!tn_is_complex(A)) return (gin[0] = tn_zeros_like(A)) ? 0 : -1;
        tn_tensor *s = NULL;
        tn_tensor *l = tn_linalg_slogdet(A, &s);
        if (!l || !s) return -1;
        g = tn_complex(tn_zeros_like(tn_real(g)), tn_imag(tn_mul(g, tn_conj(s))));
    }
    if (n->i[0] == 1) g = tn_mul(g, tn_conj(tn_linalg_det(A)));
    gin[0] = tn_mul(tn_unsqueeze(tn_unsqueeze(g, -1), -1), tn__mH(tn_linalg_inv(A)));
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__det_record(tn_tensor *A, tn_tensor *out, int det) {
    tn_node *nd = out ? tn__fn_node(det == 1 ? "LinalgDetBackward0" : "LinalgSlogdetBackward0", tn__det_bw, &A, 1) : NULL;
    if (nd) { nd->i[0] = det; nd->ni = 1; tn__node_save(nd, A); }
    return tn__node_attach(nd, out);
}
static tn_tensor *tn__det_impl(tn_tensor *A) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev("tn_linalg_det", A, "A", true)) return NULL;
    tn_scope_begin();
    tn_tensor *s = NULL, *l = NULL, *r = NULL;
    if (!tn__la_slogdet_raw(A, &s, &l)) r = tn_keep(tn_to_dtype(tn_mul(s, tn_exp(l)), A->dtype));
    tn_scope_end();
    return tn__det_record(A, r, 1);
}
TNDEF tn_tensor *tn_linalg_det(tn_tensor *A) { return TN__AS("tn_linalg_det", tn__det_impl(A)); }
/* sign (A's dtype) and log|det| (returned; real: float for complex64, double for complex128). */
static tn_tensor *tn__slogdet_impl(tn_tensor *A, tn_tensor **sign, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    tn_scope_begin();
    tn_tensor *s = NULL, *l = NULL, *r = NULL;
    if (!tn__la_slogdet_raw(A, &s, &l)) {
        r = tn_keep(tn_to_dtype(l, tn_dtype_to_real(A->dtype)));
        if (sign) *sign = tn_keep(tn_to_dtype(s, A->dtype));
    }
    tn_scope_end();
    if (r && sign && *sign && !tn__det_record(A, *sign, 2)) { tn_release(r); return NULL; }
    return tn__det_record(A, r, 0);
}
TNDEF tn_tensor *tn_linalg_slogdet(tn_tensor *A, tn_tensor **sign) {
    if (sign) *sign = NULL;
    return TN__AS("tn_linalg_slogdet", tn__slogdet_impl(A, sign, "tn_linalg_slogdet"));
}
/* log(det(A)): real A: nan for a negative determinant, -inf for a singular matrix; complex
   A: log|det| + i angle(det), A's dtype (its gradient g A^{-H}, recorded as log|det|'s). */
static tn_tensor *tn__logdet_impl(tn_tensor *A) {
    TN__CHECK_NULL(A);
    if (tn_is_complex(A)) {
        if (tn__la_check_dt("tn_logdet", A, "A", true, true)) return NULL;
        tn_scope_begin();
        tn_tensor *s = NULL, *l = NULL, *r = NULL;
        if (!tn__la_slogdet_raw(A, &s, &l)) r = tn_keep(tn_to_dtype(tn_complex(l, tn_angle(s)), A->dtype));
        tn_scope_end();
        return tn__det_record(A, r, 0);
    }
    tn_scope_begin();
    tn_tensor *s = NULL, *l = tn__slogdet_impl(A, &s, "tn_logdet"), *r = NULL;
    if (l && s) {   /* sign -1 -> nan, as log of a negative number; sign 0 -> -inf already */
        tn_tensor *nan = tn_full_like(l, NAN);
        r = tn_where(tn_lt(s, tn_zeros_like(s)), nan, l);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_logdet(tn_tensor *A) { return tn__grad_name(TN__AS("tn_logdet", tn__logdet_impl(A)), "LogdetBackward0"); }

/* ---- solve, inv: getrs on the LU ---- */
/* X = A^{-1} B for A [..., n, n], B [..., n, k] of one batch shape (no broadcasting here);
   info [...] (first zero pivot). Raw: no history. */
static tn_tensor *tn__la_getrs_raw(tn_tensor *A, tn_tensor *Bm, tn_tensor **info) {
    if (A->device != TN_CPU || (tn__la_routed(A, true) && A->dtype == Bm->dtype)) return tn__la_getrs_dev(A, Bm, info);
    tn_tensor *p = NULL, *f = NULL;
    if (!tn__la_routed(A, true)) {   /* the built-in kernels: factor and solve in one pass */
        const tn_dtype dt = tn__la_kdt(A, Bm->dtype == TN_F32, tn_is_complex(Bm));
        tn_tensor *x = tn_clone(tn_to_dtype(tn_detach(Bm), dt));
        if (!x || !tn__la_lu_solve_cpu(A, dt, x, &p, &f)) return NULL;
        *info = f;
        return x;
    }
    tn_tensor *w = tn__la_lu(A, &p, &f), *x = w ? tn__la_work(Bm) : NULL;
    if (w && x) w = tn__la_work(tn_to_dtype(w, tn_is_complex(x) ? TN_C128 : TN_F64));   /* (LAPACK's LU, for a B of another dtype) */
    if (!x || !w) return NULL;
    const int64_t n = A->shape[A->ndim - 1], k = Bm->shape[Bm->ndim - 1], B = tn__la_batch(A);
    const int32_t *pv = (const int32_t *)tn_data_ptr(p), *fv = (const int32_t *)tn_data_ptr(f);
    for (int64_t b = 0; b < B; b++)
        if (fv[b]) continue;
        else if (tn_is_complex(w)) tn__la_getrs_c((const tn__cplx *)tn_data_ptr(w) + b * n * n, pv + b * n, n, (tn__cplx *)tn_data_ptr(x) + b * n * k, k);
        else tn__la_getrs((const double *)tn_data_ptr(w) + b * n * n, pv + b * n, n, (double *)tn_data_ptr(x) + b * n * k, k);
    *info = f;
    return x;
}
static tn_tensor *tn__solve_core(tn_tensor *A, tn_tensor *Bm, bool check_errors, tn_tensor **info, const char *fn);
/* X = A^{-1} B: gB = A^{-H} g, gA = -gB X^H (PyTorch's linalg_solve backward). */
static int tn__solve_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(n, 0), *Bm = tn_ctx_saved(n, 1);
    tn_tensor *gB = tn__solve_core(tn__mH(A), g, false, NULL, "tn_linalg_solve");
    if (!gB) return -1;
    if (tn_ctx_needs_grad(n, 1)) gin[1] = gB;
    if (tn_ctx_needs_grad(n, 0)) {
        tn_tensor *X = tn__solve_core(A, Bm, false, NULL, "tn_linalg_solve");
        if (!(gin[0] = tn_neg(tn_matmul(gB, tn__mH(X))))) return -1;
    }
    return 0;
}
/* A [..., n, n], Bm [..., n, k] of one batch shape; the result joins the open scope. */
static tn_tensor *tn__solve_core(tn_tensor *A, tn_tensor *Bm, bool check_errors, tn_tensor **info, const char *fn) {
    if (!A || !Bm) return NULL;
    tn_scope_begin();
    tn_tensor *f = NULL, *x = tn__la_getrs_raw(A, Bm, &f), *r = NULL;
    if (x && !(check_errors && tn__la_info_error(fn, f, TN__LA_SINGULAR))) {
        r = tn_keep(tn_to_dtype(x, A->dtype));
        if (info) *info = tn_keep(f);
    }
    tn_scope_end();
    tn_tensor *ins[2] = {A, Bm};
    tn_node *nd = r ? tn__fn_node("LinalgSolveExBackward0", tn__solve_bw, ins, 2) : NULL;
    if (nd) { tn__node_save(nd, A); tn__node_save(nd, Bm); }
    return tn__node_attach(nd, r);
}
/* linalg.solve's broadcasting: B is a batch of vectors when B.ndim == 1 or B's shape is
   A's without its last dim; batch dims broadcast. left = false solves X A = B. */
static tn_tensor *tn__solve_ex_impl(tn_tensor *A, tn_tensor *Bm, bool left, bool check_errors, tn_tensor **info, const char *fn) {
    TN__CHECK_NULL(A, Bm);
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    if (Bm->dtype != A->dtype)
        return (tn_tensor *)tn__error("%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead", fn, tn_dtype_name(A->dtype), tn_dtype_name(Bm->dtype));
    const int64_t n = A->shape[A->ndim - 1];
    bool vec = Bm->ndim == 1 || (Bm->ndim == A->ndim - 1 && !memcmp(Bm->shape, A->shape, (size_t)(A->ndim - 1) * sizeof(int64_t)));
    if (vec && !left) return (tn_tensor *)tn__error("%s: Vector broadcasting of the left hand side is not supported for left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)", fn);
    tn_scope_begin();
    tn_tensor *b = vec ? tn_unsqueeze(Bm, -1) : Bm, *r = NULL;
    if (b && b->ndim < 2) tn__error("%s: The input tensor B must have at least 2 dimensions.", fn);
    else if (b) {
        int64_t rows = b->shape[b->ndim - (left ? 2 : 1)];
        int64_t bs[TN_MAX_DIMS], sa[TN_MAX_DIMS], sb[TN_MAX_DIMS];
        int bnd = tn__broadcast(A->shape, A->ndim - 2, b->shape, b->ndim - 2, bs);
        if (rows != n)
            tn__error("%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)", fn, left ? "AX = B" : "XA = B",
                      (long long)n, (long long)n, (long long)b->shape[b->ndim - 2], (long long)b->shape[b->ndim - 1]);
        else if (bnd < 0) tn__error("%s: the batch dims of A %s and B %s do not broadcast", fn, TN__SHAPE(A), TN__SHAPE(Bm));
        else {
            memcpy(sa, bs, (size_t)bnd * sizeof(int64_t)); sa[bnd] = n; sa[bnd + 1] = n;
            memcpy(sb, bs, (size_t)bnd * sizeof(int64_t)); sb[bnd] = b->shape[b->ndim - 2]; sb[bnd + 1] = b->shape[b->ndim - 1];
            tn_tensor *a = tn_expand(A, sa, bnd + 2), *bb = tn_expand(b, sb, bnd + 2);
            /* X A = B is A^T X^T = B^T */
            r = left ? tn__solve_core(a, bb, check_errors, info, fn)
                     : tn_transpose(tn__solve_core(tn_transpose(a, -2, -1), tn_transpose(bb, -2, -1), check_errors, info, fn), -2, -1);
            if (r && vec) r = tn_squeeze_dim(r, -1);
            if (r && info && *info) *info = tn_keep(*info);
        }
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_solve_ex_opts(tn_tensor *A, tn_tensor *B, tn_tensor **info, tn_solve_ex_fn_opts o) {
    if (info) *info = NULL;
    return tn__grad_name(TN__AS("tn_linalg_solve_ex", tn__solve_ex_impl(A, B, o.left, o.check_errors, info, "tn_linalg_solve_ex")), "LinalgSolveExBackward0");
}
TNDEF tn_tensor *tn_linalg_solve_ex_str(tn_tensor *A, tn_tensor *B, tn_tensor **info, const char *options) { if (info) *info = NULL; TN__KW_STR(tn_solve_ex_fn_opts, solve_ex, "tn_linalg_solve_ex", options, tn_linalg_solve_ex_opts(A, B, info, o)); }
TNDEF tn_tensor *tn_linalg_solve_opts(tn_tensor *A, tn_tensor *B, tn_solve_fn_opts o) {
    return tn__grad_name(TN__AS("tn_linalg_solve", tn__solve_ex_impl(A, B, o.left, true, NULL, "tn_linalg_solve")), "LinalgSolveExBackward0");
}
TNDEF tn_tensor *tn_linalg_solve_str(tn_tensor *A, tn_tensor *B, const char *options) { TN__KW_STR(tn_solve_fn_opts, solve, "tn_linalg_solve", options, tn_linalg_solve_opts(A, B, o)); }
/* inv(A) = solve(A, I): its gradient is solve's (-A^{-T} g A^{-T}). */
static tn_tensor *tn__inv_ex_impl(tn_tensor *A, bool check_errors, tn_tensor **info, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    tn_scope_begin();
    const int64_t n = A->shape[A->ndim - 1];
    tn_tensor *eye = tn_expand(tn_to(tn_eye(n, n, A->dtype), A->device), A->shape, A->ndim);   /* not I: <complex.h>'s macro under TENSOR_CBLAS */
    tn_tensor *r = tn__solve_core(A, eye, check_errors, info, fn);
    if (r && info && *info) *info = tn_keep(*info);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_linalg_inv_ex_opts(tn_tensor *A, tn_tensor **info, tn_linalg_ex_fn_opts o) {
    if (info) *info = NULL;
    return tn__grad_name(TN__AS("tn_linalg_inv_ex", tn__inv_ex_impl(A, o.check_errors, info, "tn_linalg_inv_ex")), "LinalgInvExBackward0");
}
TNDEF tn_tensor *tn_linalg_inv_ex_str(tn_tensor *A, tn_tensor **info, const char *options) { if (info) *info = NULL; TN__KW_STR(tn_linalg_ex_fn_opts, linalg_ex, "tn_linalg_inv_ex", options, tn_linalg_inv_ex_opts(A, info, o)); }
TNDEF tn_tensor *tn_linalg_inv(tn_tensor *A) {
    return tn__grad_name(TN__AS("tn_linalg_inv", tn__inv_ex_impl(A, true, NULL, "tn_linalg_inv")), "LinalgInvExBackward0");
}

/* ---- cholesky ---- */
/* PyTorch's cholesky_backward: gA = L^{-H} Phi(L^H gL) L^{-1}, Phi: the lower triangle with
   the diagonal halved, symmetrised. L is recomputed from A (double backward). */
static int tn__cholesky_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *A = tn_ctx_saved(n, 0), *L = n->i[0] ? tn__mH(tn_linalg_cholesky(A, .upper = true)) : tn_linalg_cholesky(A);
    if (n->i[0]) g = tn__mH(g);
    tn_tensor *LH = tn__mH(L);
    tn_tensor *gA = tn__tril(tn_matmul(LH, g), 0);
    gA = tn_mul_scalar(tn_add(gA, tn__mH(tn__tril(gA, -1))), 0.5);
    gA = tn_linalg_solve(LH, gA);
    gin[0] = tn_linalg_solve(L, gA, .left = false);
    return gin[0] ? 0 : -1;
}
/* Cholesky on the device: the lower triangle's L (column-major, so the buffer read row-major is
   L^T); upper factors A^T's (a row-major copy of A is A^T column-major), U = that L^T. */
static tn_tensor *tn__cholesky_dev(tn_tensor *A, bool upper, bool check_errors, tn_tensor **info, const char *fn) {
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A), s[3] = {B, n, n};
    tn_scope_begin();
    tn_tensor *cm = upper ? tn_reshape(tn_clone(tn_detach(A)), s, 3) : tn__la_cm(A), *f = tn__la_dnew(TN_I32, A, B, 0, 0, 1), *r = NULL;
    if (cm && f && !tn__la_run(TN_LA_POTRF, cm, NULL, NULL, NULL, f, 0)) {
        tn_tensor *fi = tn__la_unbatch(f, A, 0), *Lt = tn_reshape(cm, A->shape, A->ndim);
        if (fi && Lt && !(check_errors && tn__la_info_error(fn, fi, TN__LA_NOT_PD))) {
            r = tn_keep(tn_contiguous(upper ? tn__triu(Lt, 0) : tn__tril(tn_transpose(Lt, -2, -1), 0)));
            if (info) *info = tn_keep(fi);
        }
    }
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("LinalgCholeskyExBackward0", tn__cholesky_bw, &A, 1) : NULL;
    if (nd) { nd->i[0] = upper; nd->ni = 1; tn__node_save(nd, A); }
    return tn__node_attach(nd, r);
}
static tn_tensor *tn__cholesky_ex_impl(tn_tensor *A, bool upper, bool check_errors, tn_tensor **info, const char *fn) {
    TN__CHECK_NULL(A);
    if (tn__la_check_dev(fn, A, "A", true)) return NULL;
    if (tn__la_routed(A, true)) return tn__cholesky_dev(A, upper, check_errors, info, fn);
    tn_scope_begin();
    const int64_t n = A->shape[A->ndim - 1], B = tn__la_batch(A);
    tn_tensor *w = tn_clone(tn_to_dtype(tn_detach(A), tn__la_kdt(A, true, false))), *f = tn__own(tn__new(TN_I32, TN_CPU, A->shape, A->ndim - 2)), *r = NULL;
    if (w && f) {
        int32_t *fv = (int32_t *)tn_data_ptr(f);
        /* upper: potrf('U') reads A's upper triangle, the lower one of A^H (they differ for
           a non-Hermitian A): factor the mirror, U = L^H below */
        if (tn_is_complex(w)) {
            tn__cplx *a = (tn__cplx *)tn_data_ptr(w);
            if (upper)
                for (int64_t b = 0; b < B; b++)
                    for (int64_t i = 0; i < n; i++)
                        for (int64_t j = i + 1; j < n; j++) a[b * n * n + j * n + i] = tn__cconj(a[b * n * n + i * n + j]);
            for (int64_t b = 0; b < B; b++) fv[b] = (int32_t)tn__la_potrf_c(a + b * n * n, n);
        } else if (w->dtype == TN_F32) {   /* float32 in float32, as spotrf */
            tn__la_chol_f_t c = {(float *)tn_data_ptr(w), fv, n, upper};
            tn__parallel_range(tn__par_threads(tn__mul_sat(B, n * n * n / 3 + 1), B), B, tn__la_chol_part_f, &c);
        } else {
            tn__la_chol_t c = {(double *)tn_data_ptr(w), fv, n, upper};
            tn__parallel_range(tn__par_threads(tn__mul_sat(B, n * n * n / 3 + 1), B), B, tn__la_chol_part, &c);
        }
        if (!(check_errors && tn__la_info_error(fn, f, TN__LA_NOT_PD))) {
            r = tn_keep(tn_contiguous(tn_to_dtype(upper ? tn__mH(w) : w, A->dtype)));
            if (info) *info = tn_keep(f);
        }
    }
    tn_scope_end();
    tn_node *nd = r ? tn__fn_node("LinalgCholeskyExBackward0", tn__cholesky_bw, &A, 1) : NULL;
    if (nd) { nd->i[0] = upper; nd->ni = 1; tn__node_save(nd, A); }
    return tn__node_attach(nd, r);
}
TNDEF tn_tensor *tn_linalg_cholesky_ex_opts(tn_tensor *A, tn_tensor **info, tn_cholesky_ex_fn_opts o) {
    if (info) *info = NULL;
    return TN__AS("tn_linalg_cholesky_ex", tn__cholesky_ex_impl(A, o.upper, o.check_errors, info, "tn_linalg_cholesky_ex"));
}
TNDEF tn_tensor *tn_linalg_cholesky_ex_str(tn_tensor *A, tn_tensor **info, const char *options) { if (info) *info = NULL; TN__KW_STR(tn_cholesky_ex_fn_opts, cholesky_ex, "tn_linalg_cholesky_ex", options, tn_linalg_cholesky_ex_opts(A, info, o)); }
TNDEF tn_tensor *tn_linalg_cholesky_opts(tn_tensor *A, tn_cholesky_fn_opts o) {
    return TN__AS("tn_linalg_cholesky", tn__cholesky_ex_impl(A, o.upper, true, NULL, "tn_linalg_cholesky"));
}
TNDEF tn_tensor *tn_linalg_cholesky_str(tn_tensor *A, const char *options) { TN__KW_STR(tn_cholesky_fn_opts, cholesky, "tn_linalg_cholesky", options, tn_linalg_cholesky_opts(A, o)); }
