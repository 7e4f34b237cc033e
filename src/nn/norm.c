/* ---- normalisation: batch and layer norm as one node each (backward differentiable by
   composites of reductions, so double backward works); group and instance norm as
   composites ---- */
/* Batch norm of a float CPU tensor as one node. x [N, C, L] contiguous; the statistics
   (double) are mean, invstd and the biased variance per channel. Threads take blocks of
   channels and walk each block in memory order, n outer: a channel at a time jumps C*L
   elements every L and the prefetchers stall (3-4x slower at [64, 32, 28, 28]). Per channel
   the sums run in the same order whatever the number of threads: n ascending, element l into
   lane l % 8 (8 partial sums vectorise; one would not), the lanes added last. Forward: the
   mean, then the centred squares, then the normalisation (three passes); the plain backward:
   both sums in one pass, the input gradient in a second. Under create_graph the backward is
   the closed form written with differentiable ops, so double backward still works. */
#define TN__BN_CB 64   /* channels per block: their partial sums stay on the stack */
/* @template TN__BN_KERNELS(T, S) */
static void tn__bn_sum_##S(const T *xp, int64_t L, double *acc) { /* the lanes in locals: registers */
    double s8[8]; int64_t l = 0;
    for (int j = 0; j < 8; j++) s8[j] = acc[j];
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) s8[j] += xp[l + j];
    for (int j = 0; j < 8; j++) acc[j] = s8[j];
    for (; l < L; l++) acc[l & 7] += xp[l];
}
static void tn__bn_sq_##S(const T *xp, int64_t L, double m, double *acc) {
    double q8[8]; int64_t l = 0;
    for (int j = 0; j < 8; j++) q8[j] = acc[j];
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) { double d = xp[l + j] - m; q8[j] += d * d; }
    for (int j = 0; j < 8; j++) acc[j] = q8[j];
    for (; l < L; l++) { double d = xp[l] - m; acc[l & 7] += d * d; }
}
static void tn__bn_dot_##S(const T *xp, const T *gp, int64_t L, double m, double *gacc, double *xacc) {
    double g8[8], x8[8]; int64_t l = 0;
    for (int j = 0; j < 8; j++) { g8[j] = gacc[j]; x8[j] = xacc[j]; }
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) { g8[j] += gp[l + j]; x8[j] += gp[l + j] * (xp[l + j] - m); }
    for (int j = 0; j < 8; j++) { gacc[j] = g8[j]; xacc[j] = x8[j]; }
    for (; l < L; l++) { gacc[l & 7] += gp[l]; xacc[l & 7] += gp[l] * (xp[l] - m); }
}
/* the arguments of a threaded batch norm (forward or backward) */
typedef struct { const T *x, *gy, *w, *b; T *y, *gx, *gw, *gb; double *mean, *invstd, *var; int64_t N, C, L; bool flag; double eps; } tn__bn_args_##S;
/* channels [cb, ce) of the forward (flag: compute the statistics) */
static void tn__bn_fwd_part_##S(void *args, int64_t cb, int64_t ce) {
    const tn__bn_args_##S *A = (const tn__bn_args_##S *)args;
    const T *x = A->x, *w = A->w, *b = A->b;
    T *y = A->y;
    double *mean = A->mean, *invstd = A->invstd, *var = A->var, eps = A->eps;
    const int64_t N = A->N, C = A->C, L = A->L;
    const bool stats = A->flag;
    const double M = (double)(N * L);
    {
        for (int64_t c0 = cb, c1 = ce; c0 < c1; c0 += TN__BN_CB) {
            const int64_t nc = c1 - c0 < TN__BN_CB ? c1 - c0 : TN__BN_CB;
            if (stats) {
                double a8[TN__BN_CB][8];
                memset(a8, 0, sizeof a8);
                for (int64_t n = 0; n < N; n++)
                    for (int64_t c = 0; c < nc; c++) tn__bn_sum_##S(x + (n * C + c0 + c) * L, L, a8[c]);
                for (int64_t c = 0; c < nc; c++) {
                    double s = 0;
                    for (int j = 0; j < 8; j++) s += a8[c][j];
                    mean[c0 + c] = s / M;
                }
                memset(a8, 0, sizeof a8);
                for (int64_t n = 0; n < N; n++)
                    for (int64_t c = 0; c < nc; c++) tn__bn_sq_##S(x + (n * C + c0 + c) * L, L, mean[c0 + c], a8[c]);
                for (int64_t c = 0; c < nc; c++) {
                    double q = 0;
                    for (int j = 0; j < 8; j++) q += a8[c][j];
                    var[c0 + c] = q / M;
                    invstd[c0 + c] = 1 / sqrt(var[c0 + c] + eps);
                }
            }
            T sc[TN__BN_CB], sh[TN__BN_CB];
            for (int64_t c = 0; c < nc; c++) {
                sc[c] = (T)invstd[c0 + c] * (w ? w[c0 + c] : (T)1);
                sh[c] = (b ? b[c0 + c] : (T)0) - (T)mean[c0 + c] * sc[c];
            }
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < nc; c++) {
                    const T *xp = x + (n * C + c0 + c) * L; T *yp = y + (n * C + c0 + c) * L;
                    const T scale = sc[c], shift = sh[c];
                    for (int64_t l = 0; l < L; l++) yp[l] = shift + xp[l] * scale;
                }
        }
    }
}
static void tn__bn_fwd_##S(const T *x, T *y, const T *w, const T *b, double *mean, double *invstd, double *var, int64_t N, int64_t C,
                          int64_t L, bool stats, double eps) {
    tn__bn_args_##S A = {x, NULL, w, b, y, NULL, NULL, NULL, mean, invstd, var, N, C, L, stats, eps};
    tn__parallel_range(tn__par_threads(N * C * L, C), C, tn__bn_fwd_part_##S, &A);
}
/* channels [cb, ce) of the backward (flag: training) */
static void tn__bn_bwd_part_##S(void *args, int64_t cb, int64_t ce) {
    const tn__bn_args_##S *A = (const tn__bn_args_##S *)args;
    const T *x = A->x, *gy = A->gy, *w = A->w;
    T *gx = A->gx, *gw = A->gw, *gb = A->gb;
    const double *mean = A->mean, *invstd = A->invstd;
    const int64_t N = A->N, C = A->C, L = A->L;
    const bool training = A->flag;
    const double M = (double)(N * L);
    {
        for (int64_t c0 = cb, c1 = ce; c0 < c1; c0 += TN__BN_CB) {
            const int64_t nc = c1 - c0 < TN__BN_CB ? c1 - c0 : TN__BN_CB;
            double g8[TN__BN_CB][8], x8[TN__BN_CB][8], k[TN__BN_CB], a[TN__BN_CB], bq[TN__BN_CB];
            memset(g8, 0, sizeof g8);
            memset(x8, 0, sizeof x8);
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < nc; c++) {
                    const int64_t o = (n * C + c0 + c) * L;
                    tn__bn_dot_##S(x + o, gy + o, L, mean[c0 + c], g8[c], x8[c]);
                }
            for (int64_t c = 0; c < nc; c++) {
                double sg = 0, sgx = 0;
                const double is = invstd[c0 + c];
                for (int j = 0; j < 8; j++) { sg += g8[c][j]; sgx += x8[c][j]; }
                if (gw) gw[c0 + c] = (T)(sgx * is);
                if (gb) gb[c0 + c] = (T)sg;
                k[c] = is * (w ? (double)w[c0 + c] : 1);
                a[c] = training ? sg / M : 0;
                bq[c] = training ? sgx * is * is / M : 0;
            }
            if (!gx) continue;
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < nc; c++) {
                    const int64_t o = (n * C + c0 + c) * L;
                    const T *xp = x + o, *gp = gy + o; T *op = gx + o;
                    const double m = mean[c0 + c], kc = k[c], ac = a[c], bc = bq[c];
                    for (int64_t l = 0; l < L; l++) op[l] = (T)(kc * ((double)gp[l] - ac - ((double)xp[l] - m) * bc));
                }
        }
    }
}
static void tn__bn_bwd_##S(const T *x, const T *gy, const T *w, const double *mean, const double *invstd, T *gx, T *gw, T *gb,
                          int64_t N, int64_t C, int64_t L, bool training) {
    tn__bn_args_##S A = {x, gy, w, NULL, NULL, gx, gw, gb, (double *)mean, (double *)invstd, NULL, N, C, L, training, 0};
    tn__parallel_range(tn__par_threads(N * C * L, C), C, tn__bn_bwd_part_##S, &A);
}
static void tn__bn_run_##S(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, double *ms, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                          tn_tensor *gb, double eps) {
    const int64_t N = x->shape[0], C = x->shape[1], L = tn_numel(x) / (N * C);
    const T *wp = w ? (const T *)tn_data_ptr(w) : NULL;
    if (mode < 2)
        tn__bn_fwd_##S((const T *)tn_data_ptr(x), (T *)tn_data_ptr(y), wp, b ? (const T *)tn_data_ptr(b) : NULL, ms, ms + C, ms + 2 * C,
                       N, C, L, mode == 0, eps);
    else
        tn__bn_bwd_##S((const T *)tn_data_ptr(x), (const T *)tn_data_ptr(y), wp, ms, ms + C, gx ? (T *)tn_data_ptr(gx) : NULL,
                       gw ? (T *)tn_data_ptr(gw) : NULL, gb ? (T *)tn_data_ptr(gb) : NULL, N, C, L, mode == 2);
}
/* @end TN__BN_KERNELS */
TN__BN_KERNELS(float, f32)
TN__BN_KERNELS(double, f64)
#undef TN__BN_CB
/* Layer norm of x [M, D] on the CPU: threads take rows; per row the mean and the centred
   squares in double (8 lanes, as batch norm's), the normalisation in T. The backward takes
   blocks of TN__LN_RB rows: per row both sums, then the input gradient, and the weight and
   bias gradients' column sums of the block (rows in order) in the same pass; the blocks'
   sums are added in block order after. The blocks do not depend on the number of threads,
   so neither do the bits. The float and double rows are compiled three times, plain,
   AVX2 and AVX-512 (the same operations in the same order: the same bits), and TN__WIDE picks. */
#define TN__LN_RB 64
/* The plain rows' 8-lane sums for the LN template: batch norm's helpers, and the backward's
   sums of g = gy w (w NULL: 1) and g (x - m) */
/* @template TN__LN_SUMS(T, S) */
static void tn__ln_dot_##S(const T *gp, const T *w, const T *xp, int64_t L, double m, double *g8, double *p8) {
    int64_t l = 0;
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) {
        const double g = w ? (double)gp[l + j] * (double)w[l + j] : (double)gp[l + j];
        g8[j] += g; p8[j] += g * ((double)xp[l + j] - m);
    }
    for (; l < L; l++) { const double g = w ? (double)gp[l] * (double)w[l] : (double)gp[l]; g8[l & 7] += g; p8[l & 7] += g * ((double)xp[l] - m); }
}
/* @end TN__LN_SUMS */
TN__LN_SUMS(float, f32)
TN__LN_SUMS(double, f64)
#ifdef TN__AVX512_FN
/* The same sums in one AVX-512 register of 8 doubles (GCC leaves the plain lanes scalar):
   lane j takes elements l + j, the same operations in the same order, the same bits */
/* @template TN__LN_SUMS_X(T, S, LOAD8) */
TN__AVX512_FN static void tn__bn_sum_##S(const T *xp, int64_t L, double *acc) {
    __m512d a = _mm512_loadu_pd(acc);
    int64_t l = 0;
    for (; l + 8 <= L; l += 8) a = _mm512_add_pd(a, LOAD8(xp + l));
    _mm512_storeu_pd(acc, a);
    for (; l < L; l++) acc[l & 7] += xp[l];
}
TN__AVX512_FN static void tn__bn_sq_##S(const T *xp, int64_t L, double m, double *acc) {
    const __m512d mv = _mm512_set1_pd(m);
    __m512d a = _mm512_loadu_pd(acc);
    int64_t l = 0;
    for (; l + 8 <= L; l += 8) { const __m512d d = _mm512_sub_pd(LOAD8(xp + l), mv); a = _mm512_add_pd(a, _mm512_mul_pd(d, d)); }
    _mm512_storeu_pd(acc, a);
    for (; l < L; l++) { double d = xp[l] - m; acc[l & 7] += d * d; }
}
TN__AVX512_FN static void tn__ln_dot_##S(const T *gp, const T *w, const T *xp, int64_t L, double m, double *g8, double *p8) {
    const __m512d mv = _mm512_set1_pd(m);
    __m512d ga = _mm512_loadu_pd(g8), pa = _mm512_loadu_pd(p8);
    int64_t l = 0;
    for (; l + 8 <= L; l += 8) {
        const __m512d g = w ? _mm512_mul_pd(LOAD8(gp + l), LOAD8(w + l)) : LOAD8(gp + l);
        ga = _mm512_add_pd(ga, g);
        pa = _mm512_add_pd(pa, _mm512_mul_pd(g, _mm512_sub_pd(LOAD8(xp + l), mv)));
    }
    _mm512_storeu_pd(g8, ga);
    _mm512_storeu_pd(p8, pa);
    for (; l < L; l++) { const double g = w ? (double)gp[l] * (double)w[l] : (double)gp[l]; g8[l & 7] += g; p8[l & 7] += g * ((double)xp[l] - m); }
}
/* @end TN__LN_SUMS_X */
#define TN__LN_LOAD8_F32(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define TN__LN_LOAD8_F64(p) _mm512_loadu_pd(p)
TN__LN_SUMS_X(float, f32x, TN__LN_LOAD8_F32)
TN__LN_SUMS_X(double, f64x, TN__LN_LOAD8_F64)
#undef TN__LN_LOAD8_F32
#undef TN__LN_LOAD8_F64
/* and in two AVX2 registers of 4 doubles: lanes 0-3 and 4-7 */
/* @template TN__LN_SUMS_Y(T, S, LOAD4) */
TN__AVX2_FN static void tn__bn_sum_##S(const T *xp, int64_t L, double *acc) {
    __m256d a0 = _mm256_loadu_pd(acc), a1 = _mm256_loadu_pd(acc + 4);
    int64_t l = 0;
    for (; l + 8 <= L; l += 8) { a0 = _mm256_add_pd(a0, LOAD4(xp + l)); a1 = _mm256_add_pd(a1, LOAD4(xp + l + 4)); }
    _mm256_storeu_pd(acc, a0);
    _mm256_storeu_pd(acc + 4, a1);
    for (; l < L; l++) acc[l & 7] += xp[l];
}
TN__AVX2_FN static void tn__bn_sq_##S(const T *xp, int64_t L, double m, double *acc) {
    const __m256d mv = _mm256_set1_pd(m);
    __m256d a0 = _mm256_loadu_pd(acc), a1 = _mm256_loadu_pd(acc + 4);
    int64_t l = 0;
    for (; l + 8 <= L; l += 8) {
        const __m256d d0 = _mm256_sub_pd(LOAD4(xp + l), mv), d1 = _mm256_sub_pd(LOAD4(xp + l + 4), mv);
        a0 = _mm256_add_pd(a0, _mm256_mul_pd(d0, d0));
        a1 = _mm256_add_pd(a1, _mm256_mul_pd(d1, d1));
    }
    _mm256_storeu_pd(acc, a0);
    _mm256_storeu_pd(acc + 4, a1);
    for (; l < L; l++) { double d = xp[l] - m; acc[l & 7] += d * d; }
}
TN__AVX2_FN static void tn__ln_dot_##S(const T *gp, const T *w, const T *xp, int64_t L, double m, double *g8, double *p8) {
    const __m256d mv = _mm256_set1_pd(m);
    __m256d ga[2] = {_mm256_loadu_pd(g8), _mm256_loadu_pd(g8 + 4)}, pa[2] = {_mm256_loadu_pd(p8), _mm256_loadu_pd(p8 + 4)};
    int64_t l = 0;
    for (; l + 8 <= L; l += 8)
        for (int h = 0; h < 2; h++) {
            const int64_t o = l + 4 * h;
            const __m256d g = w ? _mm256_mul_pd(LOAD4(gp + o), LOAD4(w + o)) : LOAD4(gp + o);
            ga[h] = _mm256_add_pd(ga[h], g);
            pa[h] = _mm256_add_pd(pa[h], _mm256_mul_pd(g, _mm256_sub_pd(LOAD4(xp + o), mv)));
        }
    for (int h = 0; h < 2; h++) { _mm256_storeu_pd(g8 + 4 * h, ga[h]); _mm256_storeu_pd(p8 + 4 * h, pa[h]); }
    for (; l < L; l++) { const double g = w ? (double)gp[l] * (double)w[l] : (double)gp[l]; g8[l & 7] += g; p8[l & 7] += g * ((double)xp[l] - m); }
}
/* @end TN__LN_SUMS_Y */
#define TN__LN_LOAD4_F32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define TN__LN_LOAD4_F64(p) _mm256_loadu_pd(p)
TN__LN_SUMS_Y(float, f32y, TN__LN_LOAD4_F32)
TN__LN_SUMS_Y(double, f64y, TN__LN_LOAD4_F64)
#undef TN__LN_LOAD4_F32
#undef TN__LN_LOAD4_F64
#endif
/* @template TN__LN_KERNELS(T, S, ATTR) */
/* the arguments of a threaded layer norm (forward or backward) */
typedef struct { const T *x, *gy, *w, *b; T *y, *gx, *gw, *gb; double *st, *colacc; int64_t M, D; double eps; } tn__ln_args_##S;
/* row r of the forward: statistics kept in st when it is not NULL */
ATTR static inline void tn__ln_row_##S(const T *xp, T *yp, const T *w, const T *b, double *st, int64_t r, int64_t M, int64_t D, double eps) {
    double a8[8] = {0}, q8[8] = {0}, s = 0, q = 0;
    tn__bn_sum_##S(xp, D, a8);
    for (int j = 0; j < 8; j++) s += a8[j];
    const double mean = s / (double)D;
    tn__bn_sq_##S(xp, D, mean, q8);
    for (int j = 0; j < 8; j++) q += q8[j];
    const double is = 1 / sqrt(q / (double)D + eps);
    if (st) { st[r] = mean; st[M + r] = is; }
    const T m = (T)mean, sc = (T)is;
    if (w && b) for (int64_t l = 0; l < D; l++) yp[l] = (xp[l] - m) * sc * w[l] + b[l];
    else for (int64_t l = 0; l < D; l++) yp[l] = (xp[l] - m) * sc;
}
/* rows [rb, re) of the forward */
ATTR static void tn__ln_fwd_part_##S(void *args, int64_t rb, int64_t re) {
    const tn__ln_args_##S *A = (const tn__ln_args_##S *)args;
    for (int64_t r = rb; r < re; r++) tn__ln_row_##S(A->x + r * A->D, A->y + r * A->D, A->w, A->b, A->st, r, A->M, A->D, A->eps);
}
/* rows [rb, re) of the norm of x + gy (the graph replay's residual add and layer norm in one
   pass): each sum row written to y, then normalised in place while in L1, by the rows above:
   the add's and the norm's bits; the statistics are not kept */
ATTR static void tn__ln_add_part_##S(void *args, int64_t rb, int64_t re) {
    const tn__ln_args_##S *A = (const tn__ln_args_##S *)args;
    const int64_t D = A->D;
    for (int64_t r = rb; r < re; r++) {
        const T *ap = A->x + r * D, *bp = A->gy + r * D;
        T *yp = A->y + r * D;
        for (int64_t l = 0; l < D; l++) yp[l] = ap[l] + bp[l];
        tn__ln_row_##S(yp, yp, A->w, A->b, NULL, r, A->M, D, A->eps);
    }
}
static void tn__ln_fwd_##S(const T *x, T *y, const T *w, const T *b, double *st, int64_t M, int64_t D, double eps) {
    tn__ln_args_##S A = {x, NULL, w, b, y, NULL, NULL, NULL, st, NULL, M, D, eps};
    tn__parallel_range(tn__par_threads(M * D, M), M, tn__ln_fwd_part_##S, &A);
}
static void tn__ln_add_##S(const T *a, const T *b, T *y, const T *w, const T *bias, int64_t M, int64_t D, double eps) {
    tn__ln_args_##S A = {a, b, w, bias, y, NULL, NULL, NULL, NULL, NULL, M, D, eps};
    tn__parallel_range(tn__par_threads(M * D, M), M, tn__ln_add_part_##S, &A);
}
/* row blocks [cb, ce) of the backward: per row the sums of g = gy w and g (x - m), the input
   gradient, and the block's column sums of gy xhat and gy into colacc (2 D per block) */
ATTR static void tn__ln_bwd_part_##S(void *args, int64_t cb, int64_t ce) {
    const tn__ln_args_##S *A = (const tn__ln_args_##S *)args;
    const T *x = A->x, *gy = A->gy, *w = A->w;
    T *gx = A->gx;
    const double *st = A->st;
    const int64_t M = A->M, D = A->D;
    const bool cols = A->gw || A->gb;
    for (int64_t c = cb; c < ce; c++) {
        double *aw = A->colacc + c * 2 * D, *ab = aw + D;
        if (cols) for (int64_t l = 0; l < D; l++) aw[l] = ab[l] = 0;
        const int64_t r1 = (c + 1) * TN__LN_RB < M ? (c + 1) * TN__LN_RB : M;
        for (int64_t r = c * TN__LN_RB; r < r1; r++) {
            const T *xp = x + r * D, *gp = gy + r * D;
            const double m = st[r], is = st[M + r];
            if (gx) {
                T *op = gx + r * D;
                double g8[8] = {0}, p8[8] = {0}, sg = 0, sp = 0;
                tn__ln_dot_##S(gp, w, xp, D, m, g8, p8);
                for (int j = 0; j < 8; j++) { sg += g8[j]; sp += p8[j]; }
                const double a = sg / (double)D, k = sp * is * is / (double)D;
                if (w) for (int64_t l = 0; l < D; l++) op[l] = (T)(is * ((double)gp[l] * (double)w[l] - a - ((double)xp[l] - m) * k));
                else for (int64_t l = 0; l < D; l++) op[l] = (T)(is * ((double)gp[l] - a - ((double)xp[l] - m) * k));
            }
            if (cols) for (int64_t l = 0; l < D; l++) { aw[l] += (double)gp[l] * (((double)xp[l] - m) * is); ab[l] += (double)gp[l]; }
        }
    }
}
/* colacc: 2 D doubles per block of TN__LN_RB rows */
static void tn__ln_bwd_##S(const T *x, const T *gy, const T *w, const double *st, T *gx, T *gw, T *gb, int64_t M, int64_t D, double *colacc) {
    tn__ln_args_##S A = {x, gy, w, NULL, NULL, gx, gw, gb, (double *)st, colacc, M, D, 0};
    const int64_t nb = (M + TN__LN_RB - 1) / TN__LN_RB;
    tn__parallel_range(tn__par_threads(M * D, nb), nb, tn__ln_bwd_part_##S, &A);
    if (!gw && !gb) return;
    for (int64_t c = 1; c < nb; c++) {   /* the blocks' sums in block order: 1 / TN__LN_RB of the work */
        const double *aw = colacc + c * 2 * D;
        for (int64_t l = 0; l < 2 * D; l++) colacc[l] += aw[l];
    }
    for (int64_t l = 0; l < D; l++) { if (gw) gw[l] = (T)colacc[l]; if (gb) gb[l] = (T)colacc[D + l]; }
}
/* @end TN__LN_KERNELS */
TN__LN_KERNELS(float, f32, TN__PLAIN_FN)
TN__LN_KERNELS(double, f64, TN__PLAIN_FN)
#ifdef TN__AVX512_FN
TN__LN_KERNELS(float, f32x, TN__AVX512_FN)
TN__LN_KERNELS(double, f64x, TN__AVX512_FN)
TN__LN_KERNELS(float, f32y, TN__AVX2_FN)
TN__LN_KERNELS(double, f64y, TN__AVX2_FN)
#endif
/* The backend entry (tn_backend.layer_norm) over CPU memory. */
static int tn__cpu_layer_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                              tn_tensor *gb, double eps) {
    if ((x->dtype != TN_F32 && x->dtype != TN_F64) || tn_numel(x) == 0 || (mode == 0 && !w != !b)) return 1;
    const int64_t M = x->shape[0], D = x->shape[1];
    double *ms = (double *)tn_data_ptr(st), *colacc = NULL;
    if (mode == 1 && (gw || gb) &&
        !(colacc = (double *)tn__malloc_n("layer_norm backward", tn__mul_sat((M + TN__LN_RB - 1) / TN__LN_RB, tn__mul_sat(D, 2)), sizeof(double))))
        return -1;
#define TN__LN_PTR(T, t) ((t) ? (T *)tn_data_ptr(t) : NULL)
    if (x->dtype == TN_F32) {
        if (mode == 0) TN__WIDE(tn__ln_fwd_f32)(TN__LN_PTR(const float, x), TN__LN_PTR(float, y), TN__LN_PTR(const float, w), TN__LN_PTR(const float, b), ms, M, D, eps);
        else TN__WIDE(tn__ln_bwd_f32)(TN__LN_PTR(const float, x), TN__LN_PTR(const float, y), TN__LN_PTR(const float, w), ms, TN__LN_PTR(float, gx),
                                      TN__LN_PTR(float, gw), TN__LN_PTR(float, gb), M, D, colacc);
    } else {
        if (mode == 0) TN__WIDE(tn__ln_fwd_f64)(TN__LN_PTR(const double, x), TN__LN_PTR(double, y), TN__LN_PTR(const double, w), TN__LN_PTR(const double, b), ms, M, D, eps);
        else TN__WIDE(tn__ln_bwd_f64)(TN__LN_PTR(const double, x), TN__LN_PTR(const double, y), TN__LN_PTR(const double, w), ms, TN__LN_PTR(double, gx),
                                      TN__LN_PTR(double, gw), TN__LN_PTR(double, gb), M, D, colacc);
    }
#undef TN__LN_PTR
    TN_FREE(colacc);
    return 0;
}
/* Cross-entropy rows on the CPU: threads take rows; the max, then the sum of exponentials
   in double, lse = max + log(sum); the backward's softmax from the saved lse. EXP is a
   vectorisable exp for float (tn__expf_v: 2 ulp, as torch's vectorised exp; the float rows are
   compiled plain, for AVX2 and for AVX-512, the same bits, and TN__WIDE picks) and libm's for double; the exponentials go through a
   64-value buffer so the loop computing them has no sum in it and the double sum runs in
   four chains. */
/* @template TN__CE_KERNELS(T, S, EXP, ATTR) */
typedef struct { int mode; const T *x; const int64_t *t; const T *wr; double *lse; T *out, *gx; int64_t N, C; } tn__ce_args_##S;
/* rows [ib, ie) */
ATTR static void tn__ce_part_##S(void *args, int64_t ib, int64_t ie) {
    const tn__ce_args_##S *A = (const tn__ce_args_##S *)args;
    const int mode = A->mode;
    const T *x = A->x, *wr = A->wr;
    const int64_t *t = A->t, C = A->C;
    double *lse = A->lse;
    T *out = A->out, *gx = A->gx;
    T e[64];
    for (int64_t i = ib; i < ie; i++) {
        const T *xp = x + i * C;
        if (mode == 0) {
            /* the max (NaN if any is), in 16 lanes: a loop of elementwise selects vectorises,
               the one-accumulator reduction with its NaN test did not (half the kernel's time) */
            T m = xp[0], ml[16];
            int nan = 0, nl[16];
            int64_t c = 0;
            if (C >= 16) {
                for (int j = 0; j < 16; j++) { ml[j] = xp[j]; nl[j] = 0; }
                for (c = 16; c + 16 <= C; c += 16)
                    for (int j = 0; j < 16; j++) { const T v = xp[c + j]; nl[j] |= v != v; ml[j] = v > ml[j] ? v : ml[j]; }
                for (int j = 0; j < 16; j++) { nan |= nl[j] | (ml[j] != ml[j]); m = ml[j] > m ? ml[j] : m; }
            }
            for (; c < C; c++) { nan |= xp[c] != xp[c]; m = xp[c] > m ? xp[c] : m; }
            if (nan) m = (T)NAN;
            double s[4] = {0, 0, 0, 0};
            for (int64_t c0 = 0; c0 < C; c0 += 64) {
                const int64_t nc = C - c0 < 64 ? C - c0 : 64;
                int64_t j;
                for (j = 0; j < nc; j++) e[j] = EXP(xp[c0 + j] - m);
                /* four chains, element j in chain j % 4, written so that it vectorises */
                for (j = 0; j + 4 <= nc; j += 4) { s[0] += (double)e[j]; s[1] += (double)e[j + 1]; s[2] += (double)e[j + 2]; s[3] += (double)e[j + 3]; }
                for (; j < nc; j++) s[j & 3] += (double)e[j];
            }
            lse[i] = (double)m + log((s[0] + s[1]) + (s[2] + s[3]));
            out[i] = wr[i] == 0 ? (T)0 : (T)((double)wr[i] * (lse[i] - (double)xp[t[i]]));
        } else {
            const T g = (T)((double)out[i] * (double)wr[i]), l = (T)lse[i];
            T *op = gx + i * C;
            for (int64_t c = 0; c < C; c++) op[c] = g * EXP(xp[c] - l);
            op[t[i]] -= g;
        }
    }
}
static void tn__ce_rows_##S(int mode, const T *x, const int64_t *t, const T *wr, double *lse, T *out, T *gx, int64_t N, int64_t C) {
    tn__ce_args_##S A = {mode, x, t, wr, lse, out, gx, N, C};
    tn__parallel_range(tn__par_threads(N * C, N), N, tn__ce_part_##S, &A);
}
/* @end TN__CE_KERNELS */
TN__CE_KERNELS(float, f32, tn__expf_v, TN__PLAIN_FN)
#ifdef TN__AVX512_FN
TN__CE_KERNELS(float, f32x, tn__expf_v, TN__AVX512_FN)
TN__CE_KERNELS(float, f32y, tn__expf_v, TN__AVX2_FN)
#endif
TN__CE_KERNELS(double, f64, exp, TN__PLAIN_FN)
/* The backend entry (tn_backend.cross_entropy) over CPU memory. */
static int tn__cpu_cross_entropy(int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx) {
    if ((x->dtype != TN_F32 && x->dtype != TN_F64) || x->shape[1] == 0) return 1;
    const int64_t N = x->shape[0], C = x->shape[1];
    const int64_t *tp = (const int64_t *)tn_data_ptr(t);
    double *lp = (double *)tn_data_ptr(lse);
    if (x->dtype == TN_F32)
        TN__WIDE(tn__ce_rows_f32)(mode, (const float *)tn_data_ptr(x), tp, (const float *)tn_data_ptr(wr), lp, (float *)tn_data_ptr(out), gx ? (float *)tn_data_ptr(gx) : NULL, N, C);
    else
        tn__ce_rows_f64(mode, (const double *)tn_data_ptr(x), tp, (const double *)tn_data_ptr(wr), lp, (double *)tn_data_ptr(out), gx ? (double *)tn_data_ptr(gx) : NULL, N, C);
    return 0;
}
/* The backend entry (tn_backend.batch_norm) over CPU memory. */
static int tn__cpu_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                              tn_tensor *gb, double eps) {
    if ((x->dtype != TN_F32 && x->dtype != TN_F64) || tn_numel(x) == 0) return 1;
    double *ms = (double *)tn_data_ptr(st);
    if (x->dtype == TN_F32) tn__bn_run_f32(mode, x, w, b, ms, y, gx, gw, gb, eps);
    else tn__bn_run_f64(mode, x, w, b, ms, y, gx, gw, gb, eps);
    return 0;
}

static int tn__bn_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *st = tn_ctx_saved(n, 1), *w = nin > 1 ? tn_ctx_saved(n, 2) : NULL;
    const bool training = n->i[0] != 0, nx = tn_ctx_needs_grad(n, 0), nw = nin > 1 && tn_ctx_needs_grad(n, 1), nb = nin > 2 && tn_ctx_needs_grad(n, 2);
    if (!x || !st) return -1;
    const int64_t C = x->shape[1];
    if (tn__grad_disabled) {   /* plain gradients from the backend (on the CPU: two passes per channel) */
        tn_tensor *g = tn_contiguous(gy), *wc = w ? tn_contiguous(w) : NULL;
        tn_tensor *gx = nx ? tn__own(tn__new(x->dtype, x->device, x->shape, x->ndim)) : NULL;
        tn_tensor *gw = nw ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(C))) : NULL, *gb = nb ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(C))) : NULL;
        if (!g || (w && !wc) || (nx && !gx) || (nw && !gw) || (nb && !gb)) return -1;
        int r = tn__backend(x->device)->batch_norm(training ? 2 : 3, x, wc, NULL, st, g, gx, gw, gb, n->d[0]);
        if (r < 0) return -1;
        if (r == 0) {
            gin[0] = gx;
            if (nin > 1) { gin[1] = gw ? tn_reshape(gw, w->shape, w->ndim) : NULL; gin[2] = gb; }
            return 0;
        }
        /* declined: the closed form below */
    }
    /* recording (create_graph): the closed form with differentiable ops; in training the
       statistics are recomputed from x so that their dependence on x is differentiated */
    int64_t dims[TN_MAX_DIMS], nd = 0;
    dims[nd++] = 0;
    for (int d = 2; d < x->ndim; d++) dims[nd++] = d;
    tn_tensor *mean, *invstd;
    if (training) {
        mean = tn_mean_dims(x, dims, (int)nd, .keepdim = true);
        invstd = tn_rsqrt(tn_add_scalar(tn_var_dims(x, dims, (int)nd, .correction = 0, .keepdim = true), n->d[0]));
    } else {
        tn_tensor *sv = tn_to_dtype(st, x->dtype);
        mean = tn__per_channel(tn_narrow(sv, 0, 0, C), x->ndim);
        invstd = tn__per_channel(tn_narrow(sv, 0, C, C), x->ndim);
    }
    tn_tensor *xhat = tn_mul(tn_sub(x, mean), invstd), *k = w ? tn_mul(invstd, tn__per_channel(w, x->ndim)) : invstd;
    if (nx) gin[0] = training ? tn_mul(k, tn_sub(tn_sub(gy, tn_mean_dims(gy, dims, (int)nd, .keepdim = true)), tn_mul(xhat, tn_mean_dims(tn_mul(gy, xhat), dims, (int)nd, .keepdim = true))))
                              : tn_mul(gy, k);
    if (nw) gin[1] = tn_reshape(tn_sum_dims(tn_mul(gy, xhat), dims, (int)nd), w->shape, w->ndim);
    if (nb) gin[2] = tn_sum_dims(gy, dims, (int)nd);
    return (nx && !gin[0]) || (nw && !gin[1]) || (nb && !gin[2]) ? -1 : 0;
}
/* The one-node batch norm through the backend's entry (the composite's checks already
   done; inside a scope). NULL with *declined set when the backend declines the case. */
static tn_tensor *tn__batch_norm_node(const tn_backend *be, tn_tensor *x, tn_tensor *rm, tn_tensor *rv, tn_tensor *w, tn_tensor *b, bool training,
                                      double momentum, double eps, bool *declined) {
    const int64_t C = x->shape[1], M = tn_numel(x) / C;
    tn_tensor *xc = tn_contiguous(x), *wc = w ? tn_contiguous(w) : NULL, *bc = b ? tn_contiguous(b) : NULL, *st;
    if (training) st = tn__own(tn__new(TN_F64, x->device, TN_SHAPE(3 * C)));   /* mean, invstd, variance: the entry's */
    else {   /* the running statistics, in double */
        tn_tensor *v = tn_to_dtype(tn_reshape(rv, TN_SHAPE(C)), TN_F64);
        tn_tensor *parts[3] = {tn_to_dtype(tn_reshape(rm, TN_SHAPE(C)), TN_F64), tn_rsqrt(tn_add_scalar(v, eps)), v};
        st = tn_contiguous(tn_cat(parts, 3));
    }
    tn_tensor *y = xc && st && (!w || wc) && (!b || bc) ? tn__new(x->dtype, x->device, x->shape, x->ndim) : NULL;
    if (!y) return NULL;
    int r = be->batch_norm(training ? 0 : 1, xc, wc, bc, st, y, NULL, NULL, NULL, eps);
    if (r) { tn_release(y); *declined = r > 0; return NULL; }
    if (training && (rm || rv)) { /* running statistics: no history, in place (as the composite) */
        tn_no_grad_begin();
        tn_tensor *mean = tn_narrow(st, 0, 0, C), *var = tn_narrow(st, 0, 2 * C, C);
        if (rm) { tn_mul_scalar_(rm, 1 - momentum); tn_add_(rm, tn_reshape(tn_to_dtype(tn_mul_scalar(mean, momentum), rm->dtype), rm->shape, rm->ndim)); }
        if (rv) { tn_mul_scalar_(rv, 1 - momentum); tn_add_(rv, tn_reshape(tn_to_dtype(tn_mul_scalar(var, momentum * (double)M / (double)(M - 1)), rv->dtype), rv->shape, rv->ndim)); }
        tn_no_grad_end();
    }
    tn_tensor *ins[3] = {x, w, b};
    tn_node *nd = tn__fn_node("NativeBatchNormBackward0", tn__bn_bw, ins, w ? 3 : 1);
    if (nd) {
        nd->i[0] = training;
        nd->ni = 1;
        nd->d[0] = eps;
        tn__node_save(nd, xc);
        tn__node_save(nd, st);
        if (w) tn__node_save(nd, w);
        if (tn__tracing) { tn__node_save(nd, rm); tn__node_save(nd, rv); nd->d[1] = momentum; }   /* tn_trace replays the call */
    }
    return tn__own(tn__node_attach(nd, y));
}
/* y = x * scale + shift, scale and shift broadcast from per-channel or per-group stats. */
static tn_tensor *tn__batch_norm_impl(tn_tensor *x, tn_tensor *rm, tn_tensor *rv, tn_tensor *w, tn_tensor *b, bool training, double momentum, double eps) {
    const char *fn = "tn_batch_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 2 && tn_numel(x) == 0) {   /* PyTorch's empty input: a copy (through weight[0], bias[0] if any) */
        tn_scope_begin();
        return tn__scope_return(tn_add(tn_mul(tn_clone(x), w && tn_numel(w) ? tn_select(w, 0, 0) : tn_ones(NULL, 0, x->dtype)),
                                       b && tn_numel(b) ? tn_select(b, 0, 0) : tn_zeros(NULL, 0, x->dtype)));
    }
    if (x->ndim < 2) return (tn_tensor *)tn__error("%s: expected input with at least 2 dims [N, C, *], got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias") ||
        tn__nn_same(fn, x, rm, "running_mean") || tn__nn_same(fn, x, rv, "running_var")) return NULL;
    if (tn__is_half(x->dtype)) {   /* in float32; the running statistics updated through float32 copies */
        tn_scope_begin();
        tn_tensor *rm32 = rm ? tn_to_dtype(tn_detach(rm), TN_F32) : NULL, *rv32 = rv ? tn_to_dtype(tn_detach(rv), TN_F32) : NULL;
        tn_tensor *r = tn__batch_norm_impl(tn__nn_f32(x), rm32, rv32, tn__nn_f32(w), tn__nn_f32(b), training, momentum, eps);
        if (r && training && rm && rv && (tn_copy_(rm, rm32) || tn_copy_(rv, rv32))) r = NULL;
        return tn__nn_half_return(r, x->dtype);
    }
    const int64_t C = x->shape[1];
    tn_tensor *const vs[4] = {rm, rv, w, b};
    const char *const names[4] = {"running_mean", "running_var", "weight", "bias"};
    for (int k = 0; k < 4; k++)
        if (vs[k] && tn_numel(vs[k]) != C) return (tn_tensor *)tn__error("%s: %s should contain %lld elements not %lld (input %s)", fn, names[k], (long long)C, (long long)tn_numel(vs[k]), TN__SHAPE(x));
    if (!training && (!rm || !rv)) return (tn_tensor *)tn__error("%s: running_mean and running_var must be given when not training", fn);
    int64_t dims[TN_MAX_DIMS], nd = 0, count = x->shape[0];
    dims[nd++] = 0;
    for (int d = 2; d < x->ndim; d++) { dims[nd++] = d; count = tn__mul_sat(count, x->shape[d]); }   /* an empty x's may not fit */
    if (training && count == 1) return (tn_tensor *)tn__error("%s: expected more than 1 value per channel when training, got input size %s", fn, TN__SHAPE(x));
    if (tn_numel(x) == 0) return tn_clone(x);   /* an empty batch: nothing to normalise, running stats untouched (as PyTorch) */
    tn_scope_begin();
    const tn_backend *be = tn__backend(x->device);
    if (be->batch_norm && !w == !b && (!w || (w->dtype == x->dtype && b->dtype == x->dtype))) {
        bool declined = false;
        tn_tensor *y = tn__batch_norm_node(be, x, rm, rv, w, b, training, momentum, eps, &declined);
        if (y || !declined) return tn__scope_return(y);
    }
    tn_tensor *mean, *var;
    if (training) {
        mean = tn_mean_dims(x, dims, (int)nd, .keepdim = true);
        var = tn_var_dims(x, dims, (int)nd, .correction = 0, .keepdim = true);
        if (rm || rv) { /* running statistics: no history, in place; either may be given alone (as PyTorch) */
            tn_no_grad_begin();
            if (rm) {
                tn_mul_scalar_(rm, 1 - momentum);
                tn_add_(rm, tn_to_dtype(tn_mul_scalar(tn_reshape(mean, TN_SHAPE(C)), momentum), rm->dtype));
            }
            if (rv) {
                tn_mul_scalar_(rv, 1 - momentum);
                tn_add_(rv, tn_to_dtype(tn_mul_scalar(tn_reshape(var, TN_SHAPE(C)), momentum * (double)count / (double)(count - 1)), rv->dtype));
            }
            tn_no_grad_end();
        }
    } else {
        mean = tn__per_channel(rm, x->ndim);
        var = tn__per_channel(rv, x->ndim);
    }
    tn_tensor *scale = tn_rsqrt(tn_add_scalar(var, eps));
    if (w) scale = tn_mul(scale, tn__per_channel(w, x->ndim));
    tn_tensor *shift = tn_neg(tn_mul(mean, scale));
    if (b) shift = tn_add(shift, tn__per_channel(b, x->ndim));
    tn_tensor *y = tn_addcmul(shift, x, scale);
    return tn__scope_return(tn__grad_name(y, "NativeBatchNormBackward0"));
}
TNDEF tn_tensor *tn_batch_norm_opts(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, tn_batch_norm_fn_opts o) {
    return TN__AS("tn_batch_norm", tn__batch_norm_impl(x, running_mean, running_var, o.weight, o.bias, o.training, o.momentum, o.eps));
}
TNDEF tn_tensor *tn_batch_norm_str(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, const char *options) {
    TN__KW_STR(tn_batch_norm_fn_opts, batch_norm_fn, "tn_batch_norm", options, tn_batch_norm_opts(x, running_mean, running_var, o));
}
/* Layer norm's node: the backend's plain backward, or (create_graph, or declined) the
   closed form with differentiable ops, statistics recomputed from x so that their
   dependence on x is differentiated: gx = invstd (g - mean(g) - xhat mean(g xhat)) with
   g = gy w over the normalised dims; gw, gb: sums of gy xhat and gy over the others. */
static int tn__ln_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *st = tn_ctx_saved(n, 1), *w = nin > 1 ? tn_ctx_saved(n, 2) : NULL;
    const bool nx = tn_ctx_needs_grad(n, 0), nw = nin > 1 && tn_ctx_needs_grad(n, 1), nb = nin > 2 && tn_ctx_needs_grad(n, 2);
    if (!x || !st) return -1;
    const int nn = (int)n->i[0], lead = x->ndim - nn;
    const int64_t D = n->i[1], M = tn_numel(x) / D;
    if (tn__grad_disabled) {
        tn_tensor *g = tn_reshape(tn_contiguous(gy), TN_SHAPE(M, D)), *x2 = tn_reshape(x, TN_SHAPE(M, D)), *wc = w ? tn_reshape(tn_contiguous(w), TN_SHAPE(D)) : NULL;
        tn_tensor *gx = nx ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(M, D))) : NULL;
        tn_tensor *gw = nw ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(D))) : NULL, *gb = nb ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(D))) : NULL;
        if (!g || !x2 || (w && !wc) || (nx && !gx) || (nw && !gw) || (nb && !gb)) return -1;
        int r = tn__backend(x->device)->layer_norm(1, x2, wc, NULL, st, g, gx, gw, gb, n->d[0]);
        if (r < 0) return -1;
        if (r == 0) {
            gin[0] = gx ? tn_reshape(gx, x->shape, x->ndim) : NULL;
            if (nin > 1) { gin[1] = gw ? tn_reshape(gw, w->shape, w->ndim) : NULL; gin[2] = gb ? tn_reshape(gb, w->shape, w->ndim) : NULL; }
            return (nx && !gin[0]) || (nw && !gin[1]) || (nb && !gin[2]) ? -1 : 0;
        }
    }
    int64_t nd[TN_MAX_DIMS], ld[TN_MAX_DIMS];
    for (int k = 0; k < nn; k++) nd[k] = lead + k;
    for (int k = 0; k < lead; k++) ld[k] = k;
    tn_tensor *invstd = tn_rsqrt(tn_add_scalar(tn_var_dims(x, nd, nn, .correction = 0, .keepdim = true), n->d[0]));
    tn_tensor *xhat = tn_mul(tn_sub(x, tn_mean_dims(x, nd, nn, .keepdim = true)), invstd);
    if (nx) {
        tn_tensor *g = w ? tn_mul(gy, w) : gy;
        gin[0] = tn_mul(invstd, tn_sub(tn_sub(g, tn_mean_dims(g, nd, nn, .keepdim = true)), tn_mul(xhat, tn_mean_dims(tn_mul(g, xhat), nd, nn, .keepdim = true))));
    }
    if (nw) gin[1] = lead ? tn_sum_dims(tn_mul(gy, xhat), ld, lead) : tn_mul(gy, xhat);
    if (nb) gin[2] = lead ? tn_sum_dims(gy, ld, lead) : gy;
    return (nx && !gin[0]) || (nw && !gin[1]) || (nb && !gin[2]) ? -1 : 0;
}
/* The one-node layer norm over the last n dims through the backend's entry (checks done;
   inside a scope). NULL with *declined set when the backend declines the case. */
static tn_tensor *tn__layer_norm_node(const tn_backend *be, tn_tensor *x, int n, tn_tensor *w, tn_tensor *b, double eps, bool *declined) {
    int64_t D = tn__numel(x->shape + x->ndim - n, n);   /* x has elements here: D > 0 and fits */
    const int64_t M = tn_numel(x) / D;
    tn_tensor *xc = tn_contiguous(x), *wc = w ? tn_reshape(tn_contiguous(w), TN_SHAPE(D)) : NULL, *bc = b ? tn_reshape(tn_contiguous(b), TN_SHAPE(D)) : NULL;
    tn_tensor *st = tn__own(tn__new(TN_F64, x->device, TN_SHAPE(2 * M)));   /* mean, invstd per row: the entry's */
    tn_tensor *y = xc && st && (!w || wc) && (!b || bc) ? tn__new(x->dtype, x->device, x->shape, x->ndim) : NULL;
    if (!y) return NULL;
    tn_tensor *x2 = tn_reshape(xc, TN_SHAPE(M, D)), *y2 = tn_reshape(y, TN_SHAPE(M, D));
    int r = x2 && y2 ? be->layer_norm(0, x2, wc, bc, st, y2, NULL, NULL, NULL, eps) : -1;
    if (r) { tn_release(y); *declined = r > 0; return NULL; }
    tn_tensor *ins[3] = {x, w, b};
    tn_node *nd = tn__fn_node("NativeLayerNormBackward0", tn__ln_bw, ins, w ? 3 : 1);
    if (nd) {
        nd->i[0] = n;
        nd->i[1] = D;
        nd->ni = 2;
        nd->d[0] = eps;
        tn__node_save(nd, xc);
        tn__node_save(nd, st);
        if (w) tn__node_save(nd, w);
    }
    return tn__own(tn__node_attach(nd, y));
}
/* Layer norm over the last n dims of a + b, in one pass (the graph replay's residual add and
   norm, src/jit/trace.c; no autograd node: its callers run under no_grad): a and b contiguous,
   of one shape and float dtype on the CPU, w and bias contiguous of that dtype with the
   normalized numel, or both NULL. NULL with *declined for other arguments (the caller runs
   the add and the norm). */
static tn_tensor *tn__layer_norm_add(tn_tensor *a, tn_tensor *b, int n, tn_tensor *w, tn_tensor *bias, double eps, bool *declined) {
    *declined = true;
    if (!a || !b || a->device != TN_CPU || b->device != TN_CPU || (a->dtype != TN_F32 && a->dtype != TN_F64) || b->dtype != a->dtype ||
        a->ndim != b->ndim || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) || n < 1 || n > a->ndim || !tn_is_contiguous(a) ||
        !tn_is_contiguous(b) || tn_numel(a) == 0 || !w != !bias)
        return NULL;
    const int64_t D = tn__numel(a->shape + a->ndim - n, n), M = tn_numel(a) / D;
    tn_tensor *const wb[2] = {w, bias};
    for (int k = 0; k < 2; k++)
        if (wb[k] && (wb[k]->device != TN_CPU || wb[k]->dtype != a->dtype || tn_numel(wb[k]) != D || !tn_is_contiguous(wb[k]))) return NULL;
    *declined = false;
    tn_tensor *y = tn__new(a->dtype, TN_CPU, a->shape, a->ndim);
    if (!y) return NULL;
#define TN__LN_PTR(T, t) ((t) ? (T *)tn_data_ptr(t) : NULL)
    if (a->dtype == TN_F32)
        TN__WIDE(tn__ln_add_f32)(TN__LN_PTR(const float, a), TN__LN_PTR(const float, b), TN__LN_PTR(float, y), TN__LN_PTR(const float, w),
                                 TN__LN_PTR(const float, bias), M, D, eps);
    else
        TN__WIDE(tn__ln_add_f64)(TN__LN_PTR(const double, a), TN__LN_PTR(const double, b), TN__LN_PTR(double, y), TN__LN_PTR(const double, w),
                                 TN__LN_PTR(const double, bias), M, D, eps);
#undef TN__LN_PTR
    return tn__own(y);
}
static tn_tensor *tn__layer_norm_impl(tn_tensor *x, const int64_t *ns, int n, tn_tensor *w, tn_tensor *b, double eps) {
    const char *fn = "tn_layer_norm";
    TN__CHECK_NULL(x);
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    if (tn__is_half(x->dtype)) {
        tn_scope_begin();
        return tn__nn_half_return(tn__layer_norm_impl(tn__nn_f32(x), ns, n, tn__nn_f32(w), tn__nn_f32(b), eps), x->dtype);
    }
    bool ok = n >= 1 && n <= x->ndim && ns;
    for (int k = 0; ok && k < n; k++) ok = x->shape[x->ndim - n + k] == ns[k];
    if (!ok) return (tn_tensor *)tn__error("%s: given normalized_shape=%s, expected input with shape [*, %s, but got input of size %s", fn,
                                           ns && n > 0 ? tn__shape_str(ns, n) : "[]", ns && n > 0 ? tn__shape_str(ns, n) + 1 : "]", TN__SHAPE(x));
    tn_tensor *const vs[2] = {w, b};
    for (int k = 0; k < 2; k++)
        if (vs[k] && (vs[k]->ndim != n || memcmp(vs[k]->shape, ns, (size_t)n * sizeof(int64_t))))
            return (tn_tensor *)tn__error("%s: %s of shape %s must have normalized_shape %s", fn, k ? "bias" : "weight", TN__SHAPE(vs[k]), tn__shape_str(ns, n));
    int64_t dims[TN_MAX_DIMS];
    for (int k = 0; k < n; k++) dims[k] = x->ndim - n + k;
    tn_scope_begin();
    tn_tensor *ins[3] = {x, w, b};
    const tn_backend *be = tn__backend(x->device);
    if (be->layer_norm && tn_numel(x) > 0 && !w == !b && (!w || (w->dtype == x->dtype && b->dtype == x->dtype))) {
        bool declined = false;
        tn_tensor *y = tn__layer_norm_node(be, x, n, w, b, eps, &declined);
        if (y || !declined) return tn__scope_return(tn__grad_name_over(y, "NativeLayerNormBackward0", ins, 3));
    }
    tn_tensor *mean = tn_mean_dims(x, dims, n, .keepdim = true), *var = tn_var_dims(x, dims, n, .correction = 0, .keepdim = true);
    tn_tensor *xhat = tn_mul(tn_sub(x, mean), tn_rsqrt(tn_add_scalar(var, eps))), *y = xhat;
    if (w && b) y = tn_addcmul(b, xhat, w);
    else if (w) y = tn_mul(xhat, w);
    else if (b) y = tn_add(xhat, b);
    return tn__scope_return(tn__grad_name_over(y, "NativeLayerNormBackward0", ins, 3));   /* PyTorch's (input, weight, bias) */
}
TNDEF tn_tensor *tn_layer_norm_opts(tn_tensor *x, const int64_t *normalized_shape, int n, tn_affine_norm_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32_CUDA, tn_layer_norm(ac_[0], normalized_shape, n, .weight = ac_[1], .bias = ac_[2], .eps = o.eps), x, o.weight, o.bias);
    return TN__AS("tn_layer_norm", tn__layer_norm_impl(x, normalized_shape, n, o.weight, o.bias, o.eps));
}
TNDEF tn_tensor *tn_layer_norm_str(tn_tensor *x, const int64_t *normalized_shape, int n, const char *options) {
    TN__KW_STR(tn_affine_norm_fn_opts, affine_norm, "tn_layer_norm", options, tn_layer_norm_opts(x, normalized_shape, n, o));
}
static tn_tensor *tn__group_norm_impl(tn_tensor *x, int64_t G, tn_tensor *w, tn_tensor *b, double eps) {
    const char *fn = "tn_group_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 2) return (tn_tensor *)tn__error("%s: expected input with at least 2 dims [N, C, *], got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    if (tn__is_half(x->dtype)) {
        tn_scope_begin();
        return tn__nn_half_return(tn__group_norm_impl(tn__nn_f32(x), G, tn__nn_f32(w), tn__nn_f32(b), eps), x->dtype);
    }
    const int64_t N = x->shape[0], C = x->shape[1];
    if (G <= 0 || C % G) return (tn_tensor *)tn__error("%s: expected number of channels in input to be divisible by num_groups, but got input of shape %s and num_groups=%lld", fn, TN__SHAPE(x), (long long)G);
    if ((w && tn_numel(w) != C) || (b && tn_numel(b) != C)) return (tn_tensor *)tn__error("%s: weight and bias must have %lld elements (input %s)", fn, (long long)C, TN__SHAPE(x));
    tn_scope_begin();
    int64_t M = C / G;   /* elements per group (explicit: -1 cannot be inferred for an empty batch) */
    for (int d = 2; d < x->ndim; d++) M = tn__mul_sat(M, x->shape[d]);   /* an empty x's may not fit: then reshape refuses */
    tn_tensor *xg = tn_reshape(x, TN_SHAPE(N, G, M));
    tn_tensor *mean = tn_mean_dims(xg, TN_SHAPE(2), .keepdim = true), *var = tn_var_dims(xg, TN_SHAPE(2), .correction = 0, .keepdim = true);
    tn_tensor *y = tn_reshape(tn_mul(tn_sub(xg, mean), tn_rsqrt(tn_add_scalar(var, eps))), x->shape, x->ndim);
    if (w && b) y = tn_addcmul(tn__per_channel(b, x->ndim), y, tn__per_channel(w, x->ndim));
    else if (w) y = tn_mul(y, tn__per_channel(w, x->ndim));
    else if (b) y = tn_add(y, tn__per_channel(b, x->ndim));
    return tn__scope_return(tn__grad_name(y, "NativeGroupNormBackward0"));
}
TNDEF tn_tensor *tn_group_norm_opts(tn_tensor *x, int64_t num_groups, tn_affine_norm_fn_opts o) {
    TN__AUTOCAST(TN__AC_F32_CUDA, tn_group_norm(ac_[0], num_groups, .weight = ac_[1], .bias = ac_[2], .eps = o.eps), x, o.weight, o.bias);
    return TN__AS("tn_group_norm", tn__group_norm_impl(x, num_groups, o.weight, o.bias, o.eps));
}
TNDEF tn_tensor *tn_group_norm_str(tn_tensor *x, int64_t num_groups, const char *options) {
    TN__KW_STR(tn_affine_norm_fn_opts, affine_norm, "tn_group_norm", options, tn_group_norm_opts(x, num_groups, o));
}
/* Instance norm is batch norm of [1, N*C, *] with statistics repeated per sample, as ATen. */
static tn_tensor *tn__instance_norm_impl(tn_tensor *x, tn_tensor *rm, tn_tensor *rv, tn_tensor *w, tn_tensor *b, bool use_input_stats, double momentum, double eps) {
    const char *fn = "tn_instance_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 3) return (tn_tensor *)tn__error("%s: expected input with at least 3 dims [N, C, *], got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return NULL;
    const int64_t N = x->shape[0], C = x->shape[1];
    tn_tensor *const vs[4] = {rm, rv, w, b};
    for (int k = 0; k < 4; k++)
        if (vs[k] && tn_numel(vs[k]) != C) return (tn_tensor *)tn__error("%s: running stats, weight and bias must have %lld elements (input %s)", fn, (long long)C, TN__SHAPE(x));
    tn_scope_begin();
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof(int64_t));
    shape[0] = 1;
    shape[1] = tn__mul_sat(N, C);   /* an empty x's may not fit: then reshape refuses */
    tn_tensor *xr = tn_reshape(x, shape, x->ndim);
    tn_tensor *rm_r = rm ? tn_repeat(rm, TN_SHAPE(N)) : NULL, *rv_r = rv ? tn_repeat(rv, TN_SHAPE(N)) : NULL;
    tn_tensor *w_r = w ? tn_repeat(w, TN_SHAPE(N)) : NULL, *b_r = b ? tn_repeat(b, TN_SHAPE(N)) : NULL;
    tn_tensor *y = tn_batch_norm(xr, rm_r, rv_r, .weight = w_r, .bias = b_r, .training = use_input_stats, .momentum = momentum, .eps = eps);
    if (y && use_input_stats && (rm || rv)) { /* fold the per-sample running stats back: their mean over the batch */
        tn_no_grad_begin();
        if (rm) tn_copy_(rm, tn_mean_dims(tn_reshape(rm_r, TN_SHAPE(N, C)), TN_SHAPE(0)));
        if (rv) tn_copy_(rv, tn_mean_dims(tn_reshape(rv_r, TN_SHAPE(N, C)), TN_SHAPE(0)));
        tn_no_grad_end();
    }
    y = tn_reshape(y, x->shape, x->ndim);
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_instance_norm_opts(tn_tensor *x, tn_instance_norm_fn_opts o) {
    return TN__AS("tn_instance_norm", tn__instance_norm_impl(x, o.running_mean, o.running_var, o.weight, o.bias, o.use_input_stats, o.momentum, o.eps));
}
TNDEF tn_tensor *tn_instance_norm_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_instance_norm_fn_opts, instance_norm_fn, "tn_instance_norm", options, tn_instance_norm_opts(x, o));
}
