/* Reduce kernel: x walked in full, out restrided with stride 0 on reduced dims, so one
   loop accumulates whether the reduced dims are inner (register accumulator, double
   for float32 products; float32 sums: tn__sum_f32, PyTorch's order) or outer
   (elementwise accumulate). out holds the identity first. */
#define TN__REDUCE_CASES(T, ACC, MAXV, MINV) \
    switch (op) { \
    case SUM: TN__RED(T, ACC, acc + x); break; \
    case PROD: TN__RED(T, ACC, acc * x); break; \
    case MAX: TN__RED(T, T, (x != x || x > acc) ? x : acc); break; \
    case MIN: TN__RED(T, T, (x != x || x < acc) ? x : acc); break; \
    case ALL: TN__RED(T, T, acc && x); break; \
    case ANY: TN__RED(T, T, acc || x); break; \
    default: break; }
#define TN__RED(T, ACC, EXPR) do { \
    if (s[0] == 0) { ACC acc = (ACC)*(T *)p[0]; \
        for (int64_t i = 0; i < n; i++) { T x = *(const T *)(p[1] + i * s[1]); acc = (ACC)(EXPR); } \
        *(T *)p[0] = (T)acc; \
    } else for (int64_t i = 0; i < n; i++) { T *o = (T *)(p[0] + i * s[0]); ACC acc = (ACC)*o; \
        T x = *(const T *)(p[1] + i * s[1]); *o = (T)(EXPR); } } while (0)
/* integer sums and products wrap (through uint64) as PyTorch's do */
#define TN__DEFINE_REDUCE(T, S, ACC) \
    static void tn__reduce_##S(char **p, const int64_t *s, int64_t n, void *ctx) { \
        tn_reduce_op op = *(const tn_reduce_op *)ctx; TN__REDUCE_CASES(T, ACC, 0, 0) }
TN__DEFINE_REDUCE(float, f32, double)
TN__DEFINE_REDUCE(double, f64, double)
TN__DEFINE_REDUCE(int32_t, i32, int32_t)
TN__DEFINE_REDUCE(uint8_t, u8, uint8_t)
TN__DEFINE_REDUCE(int8_t, i8, int8_t)     /* int8/int16 sums and products fit int, which C promotes them to */
TN__DEFINE_REDUCE(int16_t, i16, int16_t)
static void tn__reduce_i64(char **p, const int64_t *s, int64_t n, void *ctx) {
    tn_reduce_op op = *(const tn_reduce_op *)ctx;
    switch (op) {
    case SUM: TN__RED(int64_t, uint64_t, acc + (uint64_t)x); break;
    case PROD: TN__RED(int64_t, uint64_t, acc * (uint64_t)x); break;
    case MAX: TN__RED(int64_t, int64_t, x > acc ? x : acc); break;
    case MIN: TN__RED(int64_t, int64_t, x < acc ? x : acc); break;
    case ALL: TN__RED(int64_t, int64_t, acc && x); break;
    case ANY: TN__RED(int64_t, int64_t, acc || x); break;
    default: break;
    }
}

/* The float64 sum of a contiguous float32 row: 32 partial sums (one add chain would wait on
   its latency; 32 make four independent 8-lane chains), added pairwise at the end. The
   order depends only on n, never on the thread count; both versions give the same bits. */
TN__TESTABLE double tn__sum_row_f32(const float *x, int64_t n) {
    double a[32] = {0};
    int64_t i;
    for (i = 0; i < n; i++) a[i & 31] += (double)x[i];
    for (int w = 16; w > 0; w /= 2)
        for (int j = 0; j < w; j++) a[j] += a[j + w];
    return a[0];
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same sums in four 8-lane registers (lanes j, 8 + j, 16 + j, 24 + j), the tail masked. */
__attribute__((target("avx512f,avx512vl"))) static double tn__sum_row_f32_avx512(const float *x, int64_t n) {
    __m512d a[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * k)));
    for (int k = 0; k < 4 && i + 8 * k < n; k++) {
        const int64_t r = TN__MIN(8, n - i - 8 * k);
        const __mmask8 m = (__mmask8)((1u << r) - 1);
        a[k] = _mm512_mask_add_pd(a[k], m, a[k], _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i + 8 * k)));
    }
    const __m512d s = _mm512_add_pd(_mm512_add_pd(a[0], a[2]), _mm512_add_pd(a[1], a[3]));
    const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}
#endif
TN__TESTABLE int tn__sum_row_avx512 = 1;   /* test knob: 0 runs the portable loop */
TN__TESTABLE double tn__sum_row(const float *x, int64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (tn__sum_row_avx512 && tn__cpu_avx512()) return tn__sum_row_f32_avx512(x, n);
#endif
    return tn__sum_row_f32(x, n);
}
/* o[i] += x[i], float32 into float64 (a row of x added into the accumulator row: the sum
   over the outer dims of a contiguous tensor). Elementwise, so the AVX-512 loop gives the
   same bits. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"))) static void tn__sum_into_f64_avx512(double *o, const float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_storeu_pd(o + i, _mm512_add_pd(_mm512_loadu_pd(o + i), _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
        _mm512_storeu_pd(o + i + 8, _mm512_add_pd(_mm512_loadu_pd(o + i + 8), _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))));
    }
    for (; i < n; i++) o[i] += (double)x[i];
}
#endif
TN__TESTABLE void tn__sum_into_f64(double *TN__RESTRICT o, const float *TN__RESTRICT x, int64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (tn__sum_row_avx512 && tn__cpu_avx512()) { tn__sum_into_f64_avx512(o, x, n); return; }
#endif
    for (int64_t i = 0; i < n; i++) o[i] += (double)x[i];
}
/* float32 products accumulate in a float64 copy of out, whichever dims are reduced. (Sums
   went this way too, a float32 accumulator drifting by percents over 2^20 additions in one
   chain; they now add as PyTorch does, in float but in cascades: tn__sum_f32. The sum
   branches here remain for tests/test_ops.c's checks of these loops.) */
static void tn__reduce_f32acc(char **p, const int64_t *s, int64_t n, void *ctx) {
    bool sum = *(const tn_reduce_op *)ctx == SUM;
    if (s[0] == 0 && sum && s[1] == (int64_t)sizeof(float) && n >= 64) {   /* a contiguous row */
        *(double *)p[0] += tn__sum_row((const float *)p[1], n);
        return;
    }
    if (s[0] == 0) { /* reducing along this row: keep the accumulator in a register */
        double a = *(double *)p[0];
        for (int64_t i = 0; i < n; i++) { double x = *(const float *)(p[1] + i * s[1]); a = sum ? a + x : a * x; }
        *(double *)p[0] = a;
        return;
    }
    if (sum && s[0] == (int64_t)sizeof(double) && s[1] == (int64_t)sizeof(float)) {   /* rows into a row: bias gradients */
        tn__sum_into_f64((double *)p[0], (const float *)p[1], n);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double *o = (double *)(p[0] + i * s[0]), x = *(const float *)(p[1] + i * s[1]);
        *o = sum ? *o + x : *o * x;
    }
}

/* ---- float32 sums as PyTorch's CPU kernel adds them ----
   aten/src/ATen/native/cpu/SumKernel.cpp (cascade_sum; torch 1.13 and 2025 alike): float
   accumulators, never double. Its TensorIterator puts the reduced dims first, then the kept
   ones by stride, merges neighbours, and hands each (size0 x size1) plane to a loop that
   sums a column in a 4-level cascade (multi_row_sum), a row in 4 interleaved cascades
   (row_sum), and a contiguous row in 8-float vectors (Vectorized<float> of the AVX2 build
   torch runs here; each lane is one of these column sums, written here lane by lane). The
   order of additions depends only on the shapes and strides, never on the thread count
   (PyTorch with several threads splits a full reduction of 32768 or more elements into
   per-thread partial sums: there its last bits follow its thread count). */
#define TN__CASC_COLS 32
/* utils::CeilLog2(n) / 4, at least 4: the cascade's level width (2^lp rows a level step) */
static int tn__casc_lp(int64_t n) {
    int clog = 1;   /* the bits of n - 1, at least 1 */
    while (n > 2 && clog < 63 && ((uint64_t)(n - 1) >> clog) != 0) clog++;
    return clog / 4 > 4 ? clog / 4 : 4;
}
/* multi_row_sum over nc contiguous columns at once (nc a multiple of 32, at most
   TN__CASC_WIDE): res[c] = the cascade sum of x[r * rs + c], r < n. Every column's levels
   move at the same rows, so the rows stream in memory order. Compiled plain, for AVX2
   and for AVX-512 (lane by lane the same additions, so the same bits). */
#define TN__CASC_WIDE 512
#define TN__CASC_ROWS(NAME, ATTR, NC) \
    ATTR static void NAME(float *res, const float *x, int64_t rs, int nc, int64_t n) { \
        float acc[4][TN__CASC_WIDE]; (void)nc; \
        for (int lv = 0; lv < 4; lv++) for (int c = 0; c < (NC); c++) acc[lv][c] = 0; \
        const int lp = tn__casc_lp(n); \
        const int64_t step = (int64_t)1 << lp, mask = step - 1; \
        int64_t i = 0; \
        while (i + step <= n) { \
            for (int64_t e = i + step; i < e; i++) { const float *row = x + i * rs; for (int c = 0; c < (NC); c++) acc[0][c] += row[c]; } \
            for (int lv = 1; lv < 4; lv++) { \
                for (int c = 0; c < (NC); c++) { acc[lv][c] += acc[lv - 1][c]; acc[lv - 1][c] = 0; } \
                if ((i & (mask << (lv * lp))) != 0) break; \
            } \
        } \
        for (; i < n; i++) { const float *row = x + i * rs; for (int c = 0; c < (NC); c++) acc[0][c] += row[c]; } \
        for (int c = 0; c < (NC); c++) res[c] = ((acc[0][c] + acc[1][c]) + acc[2][c]) + acc[3][c]; }
/* nc columns, and 32 (a constant count: the accumulators stay in registers) */
TN__CASC_ROWS(tn__casc_rows, TN__PLAIN_FN, nc)
TN__CASC_ROWS(tn__casc_rows32, TN__PLAIN_FN, TN__CASC_COLS)
#ifdef TN__AVX512_FN
TN__CASC_ROWS(tn__casc_rowsx, TN__AVX512_FN, nc)
TN__CASC_ROWS(tn__casc_rows32x, TN__AVX512_FN, TN__CASC_COLS)
TN__CASC_ROWS(tn__casc_rowsy, TN__AVX2_FN, nc)
TN__CASC_ROWS(tn__casc_rows32y, TN__AVX2_FN, TN__CASC_COLS)
#endif
/* multi_row_sum: res[c] = the sum over r < n of x[r * rs + c * cs], c < nc <= 32, in levels:
   level 0 takes 2^lp rows, then empties into level 1, which empties into level 2 every 2^lp
   of its own steps, and so on; the levels are added last. */
static void tn__casc_f32(float *res, const char *x, int64_t rs, int64_t cs, int nc, int64_t n) {
    if (cs == (int64_t)sizeof(float) && nc == TN__CASC_COLS && rs % (int64_t)sizeof(float) == 0) {
        TN__WIDE(tn__casc_rows32)(res, (const float *)x, rs / (int64_t)sizeof(float), nc, n);
        return;
    }
    float acc[4][TN__CASC_COLS];
    memset(acc, 0, sizeof acc);
    const int lp = tn__casc_lp(n);
    const int64_t step = (int64_t)1 << lp, mask = step - 1;
    int64_t i = 0;
    while (i + step <= n) {
        for (int64_t j = 0; j < step; j++, i++) for (int c = 0; c < nc; c++) acc[0][c] += *(const float *)(x + i * rs + c * cs);
        for (int lv = 1; lv < 4; lv++) {
            for (int c = 0; c < nc; c++) { acc[lv][c] += acc[lv - 1][c]; acc[lv - 1][c] = 0; }
            if ((i & (mask << (lv * lp))) != 0) break;
        }
    }
    for (; i < n; i++) for (int c = 0; c < nc; c++) acc[0][c] += *(const float *)(x + i * rs + c * cs);
    for (int c = 0; c < nc; c++) res[c] = ((acc[0][c] + acc[1][c]) + acc[2][c]) + acc[3][c];
}
/* row_sum: the rows as (n / 4, 4): four cascades over rows 4i + k, the rows left over added
   to the first, then the four added in order */
static void tn__rowsum_f32(float *res, const char *x, int64_t rs, int64_t cs, int nc, int64_t n) {
    float p[4][TN__CASC_COLS];
    const int64_t m = n / 4;
    for (int k = 0; k < 4; k++) tn__casc_f32(p[k], x + k * rs, 4 * rs, cs, nc, m);
    for (int c = 0; c < nc; c++) {
        float a = p[0][c];
        for (int64_t r = 4 * m; r < n; r++) a += *(const float *)(x + r * rs + c * cs);
        res[c] = ((a + p[1][c]) + p[2][c]) + p[3][c];
    }
}
/* vectorized_inner_sum's row: n >= 8 contiguous floats as n / 8 vectors summed by row_sum
   (one 32-column cascade: vector 4i + k's lane l is column 8k + l), the scalar tail, then
   the 8 lanes */
static float tn__sum_inner_f32(const float *x, int64_t n) {
    const int64_t nv = n / 8, m = nv / 4;
    float p[TN__CASC_COLS], v[8];
    tn__casc_f32(p, (const char *)x, 32 * (int64_t)sizeof(float), sizeof(float), TN__CASC_COLS, m);
    for (int l = 0; l < 8; l++) {
        float a = p[l];
        for (int64_t r = 4 * m; r < nv; r++) a += x[r * 8 + l];
        v[l] = ((a + p[8 + l]) + p[16 + l]) + p[24 + l];
    }
    float acc = 0;
    for (int64_t i = nv * 8; i < n; i++) acc += x[i];
    for (int l = 0; l < 8; l++) acc += v[l];
    return acc;
}
/* cascade_sum's loop over one plane, its columns [j0, j1) (size0 rows reduced, size1
   columns kept, after the swap below); the column blocks start at multiples of 32 */
typedef struct { char *out; const char *in; int64_t in_s[2], out_s[2], size0, size1; } tn__sum_plane;
static void tn__sum_cols_f32(void *args, int64_t j0, int64_t j1) {
    const tn__sum_plane *P = (const tn__sum_plane *)args;
    char *out = P->out;
    const char *in = P->in;
    const int64_t *in_s = P->in_s, size0 = P->size0, size1 = P->size1, os = P->out_s[1], fs = (int64_t)sizeof(float);
    float r[TN__CASC_COLS];
    int64_t j = j0;
    if (P->out_s[0] != 0) {   /* nothing reduced here: added in place */
        for (; j < j1; j++)
            for (int64_t i = 0; i < size0; i++) *(float *)(out + i * P->out_s[0] + j * os) += *(const float *)(in + i * in_s[0] + j * in_s[1]);
    } else if (in_s[0] == fs && size0 >= 8) {   /* vectorized_inner_sum */
        for (; j < j1; j++) *(float *)(out + j * os) += tn__sum_inner_f32((const float *)(in + j * in_s[1]), size0);
    } else if (in_s[1] == fs && size1 >= 8) {   /* vectorized_outer_sum: 4 vectors, 1 vector, then single columns */
        if (in_s[0] % fs == 0)   /* up to 512 columns at a time, the rows streamed */
            for (float w[TN__CASC_WIDE]; j + 32 <= j1;) {
                const int nc = (int)TN__MIN((j1 - j) / 32 * 32, TN__CASC_WIDE);
                TN__WIDE(tn__casc_rows)(w, (const float *)(in + j * fs), in_s[0] / fs, nc, size0);
                for (int c = 0; c < nc; c++) *(float *)(out + (j + c) * os) += w[c];
                j += nc;
            }
        for (; j + 32 <= j1; j += 32) {
            tn__casc_f32(r, in + j * fs, in_s[0], fs, 32, size0);
            for (int c = 0; c < 32; c++) *(float *)(out + (j + c) * os) += r[c];
        }
        for (; j + 8 <= j1; j += 8) {
            tn__rowsum_f32(r, in + j * fs, in_s[0], fs, 8, size0);
            for (int c = 0; c < 8; c++) *(float *)(out + (j + c) * os) += r[c];
        }
        for (; j < j1; j++) { tn__rowsum_f32(r, in + j * fs, in_s[0], fs, 1, size0); *(float *)(out + j * os) += r[0]; }
    } else if (in_s[0] < in_s[1]) {   /* scalar_inner_sum */
        for (; j < j1; j++) { tn__rowsum_f32(r, in + j * in_s[1], in_s[0], 0, 1, size0); *(float *)(out + j * os) += r[0]; }
    } else {   /* scalar_outer_sum: 4 columns at a time, then single ones */
        for (; j + 4 <= j1; j += 4) {
            tn__casc_f32(r, in + j * in_s[1], in_s[0], in_s[1], 4, size0);
            for (int c = 0; c < 4; c++) *(float *)(out + (j + c) * os) += r[c];
        }
        for (; j < j1; j++) { tn__rowsum_f32(r, in + j * in_s[1], in_s[0], 0, 1, size0); *(float *)(out + j * os) += r[0]; }
    }
}
static void tn__sum_blocks_f32(void *args, int64_t b0, int64_t b1) {
    const tn__sum_plane *P = (const tn__sum_plane *)args;
    tn__sum_cols_f32(args, b0 * 32, TN__MIN(b1 * 32, P->size1));
}
static void tn__sum_plane_f32(char *out, const char *in, const int64_t in_s[2], const int64_t out_s[2], int64_t size0, int64_t size1) {
    tn__sum_plane P = {out, in, {in_s[0], in_s[1]}, {out_s[0], out_s[1]}, size0, size1};
    if (out_s[0] != 0 && out_s[1] == 0)   /* the reduced dim first */
        P = (tn__sum_plane){out, in, {in_s[1], in_s[0]}, {out_s[1], out_s[0]}, size1, size0};
    /* threads take blocks of 32 columns: each column's sum is one thread's, in the same
       order, and the blocks keep vectorized_outer_sum's 32 / 8 / 1 split */
    const int64_t blocks = (P.size1 + 31) / 32;
    const int nt = blocks > 1 ? tn__par_threads(P.size0 * P.size1, blocks) : 1;
    if (nt > 1) tn__parallel_range(nt, blocks, tn__sum_blocks_f32, &P);
    else tn__sum_cols_f32(&P, 0, P.size1);
}
/* The float32 sum of x into out (its shape with the reduced dims kept as 1, zero-filled):
   TensorIterator's dim order and merging, then a plane at a time. */
static void tn__sum_f32(tn_tensor *out, tn_tensor *x) {
    if (tn_numel(x) == 0) return;   /* first: an empty tensor's other dims may be huge (2^62) */
    int nd = 0, perm[TN_MAX_DIMS];
    int64_t shape[TN_MAX_DIMS], is[TN_MAX_DIMS], os[TN_MAX_DIMS], ostr = sizeof(float);
    int64_t ostrides[TN_MAX_DIMS];
    for (int d = x->ndim - 1; d >= 0; d--) { ostrides[d] = ostr; ostr *= out->shape[d]; }
    for (int d = x->ndim - 1; d >= 0; d--) {   /* innermost first; size-1 dims merge away */
        if (x->shape[d] == 1) continue;
        shape[nd] = x->shape[d];
        is[nd] = x->strides[d] * (int64_t)sizeof(float);
        os[nd] = out->shape[d] == 1 ? 0 : ostrides[d];
        perm[nd] = nd;
        nd++;
    }
    /* reorder_dimensions: reduced dims first, then by stride (output's, then input's; equal
       strides: the smaller size first); an insertion sort that passes over ties */
    for (int i = 1; i < nd; i++) {
        int d1 = i;
        for (int d0 = i - 1; d0 >= 0; d0--) {
            const int a = perm[d0], b = perm[d1];
            int cmp = 0;
            if ((os[a] == 0) != (os[b] == 0)) cmp = os[b] == 0 ? 1 : -1;
            else if (os[a] != 0 && os[b] != 0 && os[a] != os[b]) cmp = os[a] < os[b] ? -1 : 1;
            else if (os[a] != 0 && os[b] != 0 && shape[a] > shape[b]) cmp = 1;
            else if (is[a] != 0 && is[b] != 0 && is[a] != is[b]) cmp = is[a] < is[b] ? -1 : 1;
            else if (is[a] != 0 && is[b] != 0 && shape[a] > shape[b]) cmp = 1;
            if (cmp > 0) { perm[d0] = b; perm[d1] = a; d1 = d0; }
            else if (cmp < 0) break;
        }
    }
    int64_t sh[TN_MAX_DIMS], ps[2][TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) { sh[i] = shape[perm[i]]; ps[0][i] = os[perm[i]]; ps[1][i] = is[perm[i]]; }
    int m = nd ? 1 : 0;   /* coalesce_dimensions */
    for (int d = 1; d < nd; d++) {
        if (sh[m - 1] * ps[0][m - 1] == ps[0][d] && sh[m - 1] * ps[1][m - 1] == ps[1][d]) { sh[m - 1] *= sh[d]; continue; }
        sh[m] = sh[d]; ps[0][m] = ps[0][d]; ps[1][m] = ps[1][d]; m++;
    }
    for (int d = m; d < 2; d++) { sh[d] = 1; ps[0][d] = ps[1][d] = 0; }
    char *ob = (char *)tn_data_ptr(out);
    const char *ib = (const char *)tn_data_ptr(x);
    int64_t idx[TN_MAX_DIMS] = {0}, planes = 1;
    for (int d = 2; d < m; d++) planes *= sh[d];
    for (int64_t k = 0; k < planes; k++) {
        int64_t o = 0, in = 0;
        for (int d = 2; d < m; d++) { o += idx[d] * ps[0][d]; in += idx[d] * ps[1][d]; }
        const int64_t in_s[2] = {ps[1][0], ps[1][1]}, out_s[2] = {ps[0][0], ps[0][1]};
        tn__sum_plane_f32(ob + o, ib + in, in_s, out_s, sh[0], sh[1]);
        for (int d = 2; d < m; d++) { if (++idx[d] < sh[d]) break; idx[d] = 0; }
    }
}

static int tn__cpu_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) {
    /* bool reduces as uint8: same bytes, and all/any/max/min agree */
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__reduce_f32, tn__reduce_f64, tn__reduce_i32, tn__reduce_i64, tn__reduce_u8, tn__reduce_u8, tn__reduce_i8, tn__reduce_i16);
    if (tn_dtype_is_complex(x->dtype)) fn = op != SUM && op != PROD ? NULL : x->dtype == TN_C64 ? tn__reduce_c64 : tn__reduce_c128;
    if (!fn || out->dtype != x->dtype) return TN__FAIL_INT("reduce: dtype %s is not supported on the CPU", tn_dtype_name(x->dtype));
    if (x->dtype == TN_F32 && op == SUM) { tn__sum_f32(out, x); return 0; }
    tn_tensor *acc = NULL;
    if (x->dtype == TN_F32 && op == PROD) {
        acc = tn__copy_as(out, TN_F64, TN_CPU);
        if (!acc) return -1;
        fn = tn__reduce_f32acc;
    }
    tn__iter it;
    tn__iter_init(&it, x->shape, x->ndim);
    tn__iter_add(&it, acc ? acc : out);
    tn__iter_add(&it, x);
    tn__iter_run_reduce(&it, fn, &op);
    int rc = acc ? tn__cpu_copy(out, acc) : 0;
    tn_release(acc);
    return rc;
}


/* Parse a dim list into a mask; n == 0 means every dim. Returns 0 or -1. */
static int tn__dims_mask(const char *fn, tn_tensor *x, const int64_t *dims, int n, bool *mask) {
    memset(mask, 0, TN_MAX_DIMS * sizeof(bool));
    if (n < 0 || n > TN_MAX_DIMS || (n && !dims)) return TN__FAIL_INT("%s: invalid dim list (n = %d)", fn, n);
    if (n == 0) { for (int i = 0; i < x->ndim; i++) mask[i] = true; return 0; }
    for (int i = 0; i < n; i++) {
        int d = tn__wrap_dim(fn, dims[i], x->ndim);
        if (d < 0) return -1;
        if (x->ndim == 0) continue;
        if (mask[d]) return TN__FAIL_INT("%s: dim %d appears multiple times in the list of dims", fn, d);
        mask[d] = true;
    }
    return 0;
}

/* out shape with reduced dims kept as 1 (keepdim) or dropped. */
static int tn__reduced_shape(tn_tensor *x, const bool *mask, bool keepdim, int64_t *shape) {
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (!mask[i]) shape[nd++] = x->shape[i];
        else if (keepdim) shape[nd++] = 1;
    }
    return nd;
}

static double tn__reduce_identity(tn_reduce_op op) { return (op == PROD || op == ALL) ? 1 : 0; }

static tn_tensor *tn__reduce_raw(const char *fn, tn_reduce_op op, tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype(fn, x) || tn__dims_mask(fn, x, dims, n, mask)) return NULL;
    if ((op == MAX || op == MIN) && n == 0 && tn_numel(x) == 0)   /* PyTorch's RuntimeError, not the IndexError of an empty dim named */
        return (tn_tensor *)tn__error("%s: Expected reduction dim to be specified for input.numel() == 0 (input shape %s); specify the reduction dim", fn, TN__SHAPE(x));
    if ((op == MAX || op == MIN) && tn_dtype_is_complex(x->dtype))
        return (tn_tensor *)tn__error("%s: \"%s_all\" not implemented for '%s'", fn, op == MAX ? "max" : "min", tn__torch_type_name(x->dtype));
    if (op == MAX || op == MIN) {
        for (int i = 0; i < x->ndim; i++)
            if (mask[i] && x->shape[i] == 0)
                return (tn_tensor *)tn__error("%s: expected reduction dim %d to have non-zero size (input shape %s)", fn, i, TN__SHAPE(x));
    }
    tn_dtype od = x->dtype;
    if ((op == SUM || op == PROD) && !tn_dtype_is_floating(od) && !tn_dtype_is_complex(od)) od = TN_I64;
    if (op == ALL || op == ANY) od = TN_BOOL;
    int64_t kshape[TN_MAX_DIMS], shape[TN_MAX_DIMS];
    int knd = tn__reduced_shape(x, mask, true, kshape), nd = tn__reduced_shape(x, mask, keepdim, shape);
    tn_tensor *xc = tn__as_dtype(x, od);
    tn_tensor *out = xc ? tn__new(od, x->device, kshape, knd) : NULL;
    const tn_backend *be = tn__backend(x->device);
    /* max/min start from the first slice (exact for every dtype), the others from their identity */
    tn_tensor first = xc ? tn__restrided(xc, kshape, xc->strides, knd) : *x;
    int rc = !out ? -1 : (op == MAX || op == MIN) ? tn__copy(out, &first) : be->fill(out, tn__reduce_identity(op));
    if (out && (rc || be->reduce(op, out, xc))) { tn_release(out); out = NULL; }
    tn_release(xc);
    if (out && !keepdim) { /* drop the reduced dims: a plain reshape of a contiguous tensor */
        out->ndim = nd;
        memcpy(out->shape, shape, sizeof shape);
        tn__contiguous_strides(shape, nd, out->strides);
    }
    if (out && (op == ALL || op == ANY) && x->dtype == TN_U8) { /* uint8 in, uint8 out: PyTorch keeps this (2025 too) */
        tn_tensor *u = tn__copy_as(out, TN_U8, out->device);
        tn_release(out);
        out = u;
    }
    return out;
}

/* Record a reduction's node: the reduced dims as a mask in i[] (SUM, MEAN, PROD, AMAX, AMIN). */
static tn_tensor *tn__reduce_record(const char *fn, tn__gop g, tn_tensor *x, const int64_t *dims, int n, tn_tensor *out) {
    tn_node *node = out ? tn__node_new(g, 0, &x, 1) : NULL;
    bool mask[TN_MAX_DIMS];
    if (node && tn__dims_mask(fn, x, dims, n, mask) == 0) {
        for (int d = 0; d < x->ndim; d++) node->i[d] = mask[d];
        if (g == G_PROD || g == G_AMAX || g == G_AMIN) tn__node_save(node, x);
        if (g == G_AMAX || g == G_AMIN) tn__node_save_result(node, out);
    }
    return tn__node_attach(node, out);
}

static tn_tensor *tn__reduce(const char *fn, tn_reduce_op op, tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    tn_tensor *out = tn__reduce_raw(fn, op, x, dims, n, keepdim);
    if (op == SUM || op == PROD || op == MAX || op == MIN)
        out = tn__reduce_record(fn, op == SUM ? G_SUM : op == PROD ? G_PROD : op == MAX ? G_AMAX : G_AMIN, x, dims, n, out);
    return tn__own(out);
}

TNDEF tn_tensor *tn_sum(tn_tensor *x) { return tn__reduce("tn_sum", SUM, x, NULL, 0, false); }
static tn_tensor *tn__sum_dims_kd(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return tn__grad_name(tn__reduce("tn_sum_dims", SUM, x, dims, n, keepdim), n ? "SumBackward1" : "SumBackward0"); }
TNDEF tn_tensor *tn_prod(tn_tensor *x) {
    TN__AUTOCAST(TN__AC_F32, tn_prod(ac_[0]), x);
    return tn__reduce("tn_prod", PROD, x, NULL, 0, false);
}
static tn_tensor *tn__prod_dims_kd(tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__AUTOCAST(TN__AC_F32, tn__prod_dims_kd(ac_[0], dims, n, keepdim), x);
    return tn__reduce("tn_prod_dims", PROD, x, dims, n, keepdim);
}
TNDEF tn_tensor *tn_amax_opts(tn_tensor *x, const int64_t *dims, int n, tn_keepdim_fn_opts o) { return tn__reduce("tn_amax", MAX, x, dims, n, o.keepdim); }
TNDEF tn_tensor *tn_amin_opts(tn_tensor *x, const int64_t *dims, int n, tn_keepdim_fn_opts o) { return tn__reduce("tn_amin", MIN, x, dims, n, o.keepdim); }
TNDEF tn_tensor *tn_amax_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_amax", options, tn_amax_opts(x, dims, n, o)); }
TNDEF tn_tensor *tn_amin_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_amin", options, tn_amin_opts(x, dims, n, o)); }
/* max()/min() of the whole tensor: evenly_distribute_backward (d[0] = 1), which spreads over the
   NaNs when the result is NaN (amax's backward gives NaN everywhere then) */
static tn_tensor *tn__evenly(tn_tensor *r, const char *name) {
    if (r && r->grad_fn) r->grad_fn->d[0] = 1;
    return tn__grad_name(r, name);
}
TNDEF tn_tensor *tn_max(tn_tensor *x) { return tn__evenly(tn__reduce("tn_max", MAX, x, NULL, 0, false), "MaxBackward1"); }
TNDEF tn_tensor *tn_min(tn_tensor *x) { return tn__evenly(tn__reduce("tn_min", MIN, x, NULL, 0, false), "MinBackward1"); }
TNDEF tn_tensor *tn_all(tn_tensor *x) { return tn__reduce("tn_all", ALL, x, NULL, 0, false); }
TNDEF tn_tensor *tn_any(tn_tensor *x) { return tn__reduce("tn_any", ANY, x, NULL, 0, false); }
TNDEF tn_tensor *tn_all_dim_opts(tn_tensor *x, int64_t dim, tn_keepdim_fn_opts o) { return tn__reduce("tn_all_dim", ALL, x, &dim, 1, o.keepdim); }
TNDEF tn_tensor *tn_any_dim_opts(tn_tensor *x, int64_t dim, tn_keepdim_fn_opts o) { return tn__reduce("tn_any_dim", ANY, x, &dim, 1, o.keepdim); }
TNDEF tn_tensor *tn_all_dim_str(tn_tensor *x, int64_t dim, const char *options) { TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_all_dim", options, tn_all_dim_opts(x, dim, o)); }
TNDEF tn_tensor *tn_any_dim_str(tn_tensor *x, int64_t dim, const char *options) { TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_any_dim", options, tn_any_dim_opts(x, dim, o)); }

static int64_t tn__reduced_count(const char *fn, tn_tensor *x, const int64_t *dims, int n) {
    bool mask[TN_MAX_DIMS];
    if (tn__dims_mask(fn, x, dims, n, mask)) return -1;
    int64_t c = 1;   /* saturates: a count that overflows belongs to an empty input's kept dims (the result is empty) */
    for (int i = 0; i < x->ndim; i++) if (mask[i]) c = tn__mul_or(c, x->shape[i], INT64_MAX);
    return c;
}

static int tn__need_float(const char *fn, tn_tensor *x) {
    if (!tn_dtype_is_floating(x->dtype))
        return TN__FAIL_INT("%s: could not infer output dtype; input dtype must be floating point, got %s", fn, tn_dtype_name(x->dtype));
    return 0;
}

static tn_tensor *tn__mean_dims_kd(tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_mean_dims", x) || (!tn_dtype_is_complex(x->dtype) && tn__need_float("tn_mean_dims", x))) return NULL;
    int64_t count = tn__reduced_count("tn_mean_dims", x, dims, n);
    /* half precision: sum and divide in float32, rounded once (PyTorch 2's CPU mean; 1.13 rounds the sum first) */
    tn_tensor *xs = count < 0 ? NULL : tn__is_half(x->dtype) ? tn__copy_as(x, TN_F32, x->device) : tn_retain(x);
    tn_tensor *s = xs ? tn__reduce_raw("tn_mean", SUM, xs, dims, n, keepdim) : NULL;
    tn_release(xs);
    if (!s) return NULL;
    /* sum.div_(count) as PyTorch's CPU mean (0 / 0: an empty mean is NaN) */
    tn_tensor *inv = tn__scalar_new((double)count, TN_F64, true);
    tn_tensor *r = inv ? tn__binary_raw("tn_mean", DIV, s, inv, 1, s) : NULL;
    tn_release(inv);
    tn_release(s);
    if (r && r->dtype != x->dtype) { tn_tensor *h = tn__copy_as(r, x->dtype, r->device); tn_release(r); r = h; }
    r = tn__reduce_record("tn_mean", G_MEAN, x, dims, n, r);
    if (r && r->grad_fn) { r->grad_fn->d[0] = (double)count; r->grad_fn->name = n ? "MeanBackward1" : "MeanBackward0"; }
    return tn__own(r);
}
TNDEF tn_tensor *tn_mean(tn_tensor *x) { return TN__AS("tn_mean", tn__mean_dims_kd(x, NULL, 0, false)); }

static tn_tensor *tn__var_dims_kd(tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim) {
    TN__CHECK_NULL(x);
    if (tn_dtype_is_complex(x->dtype)) {   /* var(re) + var(im): the mean of |x - mean|^2, real, as PyTorch's */
        tn_scope_begin();
        tn_tensor *re = tn_real(x), *im = re ? tn_imag(x) : NULL;
        return tn__scope_return(im ? tn_add(tn__var_dims_kd(re, dims, n, correction, keepdim), tn__var_dims_kd(im, dims, n, correction, keepdim)) : NULL);
    }
    if (tn__check_cpu_dtype("tn_var_dims", x) || tn__need_float("tn_var_dims", x)) return NULL;
    int64_t count = tn__reduced_count("tn_var_dims", x, dims, n);
    if (count < 0) return NULL;
    tn_scope_begin();
    tn_tensor *m = tn_mean_dims(x, dims, n, .keepdim = true);
    tn_tensor *ss = tn_sum_dims(tn_square(tn_sub(x, m)), dims, n, .keepdim = keepdim);
    /* the degrees of freedom in double, as PyTorch: count - correction may not fit in int64 */
    tn_tensor *r = tn_keep(tn_div_scalar(ss, TN__MAX(0.0, (double)count - (double)correction)));
    tn_scope_end();
    return r;
}
static tn_tensor *tn__std_dims_kd(tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim) {
    TN__CHECK_NULL(x);
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_std_dims", x) || (!tn_dtype_is_complex(x->dtype) && tn__need_float("tn_std_dims", x)) || tn__dims_mask("tn_std_dims", x, dims, n, mask)) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn__var_dims_kd(x, dims, n, correction, keepdim), *zero = v ? tn_eq_scalar(v, 0) : NULL;
    /* sqrt with a zero gradient at 0 (PyTorch masks it): the double where keeps inf * 0 out */
    tn_tensor *r = tn_keep(zero ? tn_where(zero, tn_zeros_like(v), tn_sqrt(tn_where(zero, tn_ones_like(v), v))) : NULL);
    tn_scope_end();
    return r;
}
/* torch's unbiased, the older spelling of correction 1 (True) or 0 (False) */
static int tn__var_correction(const char *fn, tn_var_fn_opts o, int64_t *correction) {
    *correction = o.correction;
    if (o.unbiased == -1) return 0;
    if (o.correction != 1) return TN__FAIL_INT("%s: cannot specify both unbiased and correction (unbiased=%s, correction=%lld)", fn, o.unbiased ? "True" : "False", (long long)o.correction);
    *correction = o.unbiased ? 1 : 0;
    return 0;
}
TNDEF tn_tensor *tn_var_opts(tn_tensor *x, tn_var_fn_opts o) {
    int64_t c;
    if (tn__var_correction("tn_var", o, &c)) return NULL;
    return tn__grad_name(TN__AS("tn_var", tn__var_dims_kd(x, NULL, 0, c, o.keepdim)), "VarBackward0");
}
TNDEF tn_tensor *tn_var_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_var_fn_opts o) {
    int64_t c;
    return tn__var_correction("tn_var_dims", o, &c) ? NULL : tn__var_dims_kd(x, dims, n, c, o.keepdim);
}
TNDEF tn_tensor *tn_std_opts(tn_tensor *x, tn_var_fn_opts o) {
    int64_t c;
    if (tn__var_correction("tn_std", o, &c)) return NULL;
    return tn__grad_name(TN__AS("tn_std", tn__std_dims_kd(x, NULL, 0, c, o.keepdim)), "StdBackward0");
}
TNDEF tn_tensor *tn_std_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_var_fn_opts o) {
    int64_t c;
    return tn__var_correction("tn_std_dims", o, &c) ? NULL : tn__std_dims_kd(x, dims, n, c, o.keepdim);
}
TNDEF tn_tensor *tn_var_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_var_fn_opts, var, "tn_var", options, tn_var_opts(x, o)); }
TNDEF tn_tensor *tn_var_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_var_fn_opts, var, "tn_var_dims", options, tn_var_dims_opts(x, dims, n, o)); }
TNDEF tn_tensor *tn_std_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_var_fn_opts, var, "tn_std", options, tn_std_opts(x, o)); }
TNDEF tn_tensor *tn_std_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_var_fn_opts, var, "tn_std_dims", options, tn_std_dims_opts(x, dims, n, o)); }
static tn_tensor *tn__var_mean_impl(bool sd, tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim, tn_tensor **mean) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype)) return (tn_tensor *)tn__error("%s only support floating point and complex dtypes (got %s)", sd ? "std_mean" : "var_mean", tn__torch_type_name(x->dtype));
    tn_scope_begin();
    tn_tensor *v = sd ? tn__std_dims_kd(x, dims, n, correction, keepdim) : tn__var_dims_kd(x, dims, n, correction, keepdim);
    tn_tensor *m = v ? tn_mean_dims(x, dims, n, .keepdim = keepdim) : NULL;
    v = m ? tn_keep(v) : NULL;
    m = v && mean ? tn_keep(m) : NULL;
    tn_scope_end();
    if (mean) *mean = m;
    return v;
}
TNDEF tn_tensor *tn_var_mean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, tn_var_fn_opts o) {
    int64_t c;
    if (mean) *mean = NULL;
    if (tn__var_correction("tn_var_mean", o, &c)) return NULL;
    return TN__AS("tn_var_mean", tn__var_mean_impl(false, x, dims, n, c, o.keepdim, mean));
}
TNDEF tn_tensor *tn_var_mean_opts(tn_tensor *x, tn_tensor **mean, tn_var_fn_opts o) { return tn_var_mean_dims_opts(x, NULL, 0, mean, o); }
TNDEF tn_tensor *tn_std_mean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, tn_var_fn_opts o) {
    int64_t c;
    if (mean) *mean = NULL;
    if (tn__var_correction("tn_std_mean", o, &c)) return NULL;
    return TN__AS("tn_std_mean", tn__var_mean_impl(true, x, dims, n, c, o.keepdim, mean));
}
TNDEF tn_tensor *tn_std_mean_opts(tn_tensor *x, tn_tensor **mean, tn_var_fn_opts o) { return tn_std_mean_dims_opts(x, NULL, 0, mean, o); }
TNDEF tn_tensor *tn_var_mean_str(tn_tensor *x, tn_tensor **mean, const char *options) {
    if (mean) *mean = NULL;
    TN__KW_STR(tn_var_fn_opts, var, "tn_var_mean", options, tn_var_mean_opts(x, mean, o));
}
TNDEF tn_tensor *tn_var_mean_dims_str(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, const char *options) {
    if (mean) *mean = NULL;
    TN__KW_STR(tn_var_fn_opts, var, "tn_var_mean", options, tn_var_mean_dims_opts(x, dims, n, mean, o));
}
TNDEF tn_tensor *tn_std_mean_str(tn_tensor *x, tn_tensor **mean, const char *options) {
    if (mean) *mean = NULL;
    TN__KW_STR(tn_var_fn_opts, var, "tn_std_mean", options, tn_std_mean_opts(x, mean, o));
}
TNDEF tn_tensor *tn_std_mean_dims_str(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, const char *options) {
    if (mean) *mean = NULL;
    TN__KW_STR(tn_var_fn_opts, var, "tn_std_mean", options, tn_std_mean_dims_opts(x, dims, n, mean, o));
}

static tn_tensor *tn__norm_dims_kd(tn_tensor *x, double p, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    if (tn_dtype_is_complex(x->dtype)) {   /* the norm of |x|, real, as PyTorch's */
        tn_scope_begin();
        return tn__scope_return(tn__norm_dims_kd(tn_abs(x), p, dims, n, keepdim));
    }
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_norm_dims", x) || tn__need_float("tn_norm_dims", x) || tn__dims_mask("tn_norm_dims", x, dims, n, mask)) return NULL;
    tn_scope_begin();
    tn_tensor *a = tn_abs(x), *r;
    if (p == INFINITY) r = tn_numel(x) ? tn_amax(a, dims, n, .keepdim = keepdim) : tn_sum_dims(a, dims, n, .keepdim = keepdim);
    else if (p == -INFINITY) r = tn_amin(a, dims, n, .keepdim = keepdim);
    else if (p == 0) /* the count of nonzeros: recorded, with no gradient (x.grad stays None), as PyTorch */
        r = tn__zero_grad_node(tn_to_dtype(tn_sum_dims(tn_ne_scalar(x, 0), dims, n, .keepdim = keepdim), x->dtype), x, "NormBackward1", false);
    else if (p == 1) r = tn_sum_dims(a, dims, n, .keepdim = keepdim);
    else { /* (sum |x|^p)^(1/p), with a zero gradient where the norm is 0 (as PyTorch), not inf * 0 */
        tn_tensor *sp = tn_sum_dims(p == 2 ? tn_square(a) : tn_pow_scalar(a, p), dims, n, .keepdim = keepdim);
        tn_tensor *zero = sp ? tn_eq_scalar(sp, 0) : NULL;
        tn_tensor *safe = zero ? tn_where(zero, tn_ones_like(sp), sp) : NULL;
        r = safe ? tn_where(zero, tn_zeros_like(sp), p == 2 ? tn_sqrt(safe) : tn_pow_scalar(safe, 1.0 / p)) : NULL;
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
/* torch.norm's dtype: x cast to it first */
static tn_tensor *tn__norm_fn(const char *fn, tn_tensor *x, const int64_t *dims, int n, tn_norm_fn_opts o) {
    if (o.dtype == -1) return tn__norm_dims_kd(x, o.p, dims, n, o.keepdim);
    TN__CHECK_NULL(x);
    if (o.dtype < 0 || o.dtype >= TN_NUM_DTYPES) return (tn_tensor *)tn__error("%s: dtype %d is not a tn_dtype", fn, o.dtype);
    tn_scope_begin();
    return tn__scope_return(tn__norm_dims_kd(tn_to_dtype(x, (tn_dtype)o.dtype), o.p, dims, n, o.keepdim));
}
TNDEF tn_tensor *tn_norm_opts(tn_tensor *x, tn_norm_fn_opts o) { return tn__grad_name(TN__AS("tn_norm", tn__norm_fn("tn_norm", x, NULL, 0, o)), "NormBackward1"); }
TNDEF tn_tensor *tn_norm_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_norm_fn_opts o) { return tn__norm_fn("tn_norm_dims", x, dims, n, o); }
TNDEF tn_tensor *tn_norm_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_norm_fn_opts, norm, "tn_norm", options, tn_norm_opts(x, o)); }
TNDEF tn_tensor *tn_norm_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_norm_fn_opts, norm, "tn_norm_dims", options, tn_norm_dims_opts(x, dims, n, o)); }
/* renorm as PyTorch's kernel: the norm over the other dims (keepdim), the factor
   norm > maxnorm ? maxnorm / (norm + 1e-7) : 1, x times it (differentiable through the norm) */
static tn_tensor *tn__renorm_impl(tn_tensor *x, double p, int64_t dim, double maxnorm) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_renorm";
    if (!(p > 0)) return (tn_tensor *)tn__error("%s: renorm: non-positive-norm not supported", fn);
    if (!(maxnorm >= 0)) return (tn_tensor *)tn__error("%s: renorm: expected maxnorm to be >= 0 but got %g", fn, maxnorm);
    if (x->ndim <= 1) return (tn_tensor *)tn__error("%s: renorm: input needs at least 2 dimensions, got %d dimensions", fn, x->ndim);
    const int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype))
        return (tn_tensor *)tn__error("%s: linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s", fn, tn__torch_type_name(x->dtype));
    int64_t others[TN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != d) others[n++] = i;
    tn_scope_begin();
    tn_tensor *norm = tn_norm_dims(x, others, n, .p = p, .keepdim = true);
    tn_tensor *factor = norm ? tn_where(tn_gt_scalar(norm, maxnorm), tn_div(tn_full_like(norm, maxnorm), tn_add_scalar(norm, 1e-7)), tn_ones_like(norm)) : NULL;
    return tn__scope_return(factor ? tn_mul(x, tn_to_dtype(factor, x->dtype)) : NULL);
}
TNDEF tn_tensor *tn_renorm(tn_tensor *x, double p, int64_t dim, double maxnorm) { return TN__AS("tn_renorm", tn__renorm_impl(x, p, dim, maxnorm)); }
/* sum_to_size: the leading dims x has beyond shape, and those where shape has 1 and x not,
   summed (keepdim), then the leading ones dropped */
static tn_tensor *tn__sum_to_size_impl(tn_tensor *x, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_sum_to_size";
    if (ndim < 0 || ndim > TN_MAX_DIMS || (ndim && !shape)) return (tn_tensor *)tn__error("%s: invalid size (%d dims)", fn, ndim);
    const int lead = x->ndim - ndim;
    bool ok = lead >= 0;
    for (int i = 0; ok && i < ndim; i++) ok = shape[i] == 1 || shape[i] == x->shape[lead + i];
    if (!ok) return (tn_tensor *)tn__error("%s: size {%s} is not expandable to size {%s}.", fn, tn__shape_str(shape, ndim), TN__SHAPE(x));
    if (ndim == 0) return tn_sum(x);   /* PyTorch's sum_to of (): a full sum (int64 for integers), even of a 0-d tensor */
    int64_t dims[TN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i < lead || (shape[i - lead] == 1 && x->shape[i] != 1)) dims[n++] = i;
    if (n == 0) return tn__own(tn_retain(x));   /* PyTorch returns self */
    tn_scope_begin();
    tn_tensor *r = tn_sum_dims(x, dims, n, .keepdim = true);
    return tn__scope_return(r && lead ? tn_reshape(r, shape, ndim) : r);
}
TNDEF tn_tensor *tn_sum_to_size(tn_tensor *x, const int64_t *shape, int ndim) { return TN__AS("tn_sum_to_size", tn__sum_to_size_impl(x, shape, ndim)); }
/* trapezoid and cumulative_trapezoid as ATen's Integration.cpp computes them */
static tn_tensor *tn__trapezoid(const char *fn, bool cum, tn_tensor *y, tn_trapezoid_fn_opts o) {
    TN__CHECK_NULL(y);
    const char *name = cum ? "cumulative_trapezoid" : "trapezoid";
    if (o.x && !isnan(o.dx)) return (tn_tensor *)tn__error("%s: x and dx cannot both be given", fn);
    const int d = tn__wrap_dim(fn, o.dim, y->ndim);
    if (d < 0) return NULL;
    if (y->ndim == 0) return (tn_tensor *)tn__error("%s: Dimension specified as %lld but tensor has no dimensions", fn, (long long)o.dim);
    if (y->dtype == TN_BOOL || (o.x && o.x->dtype == TN_BOOL))
        return (tn_tensor *)tn__error("%s: %s: received a bool input for `%s`, but bool is not supported", fn, name, o.x ? "x` or `y" : "y");
    const int64_t n = y->shape[d], dim64 = d;
    tn_scope_begin();
    if (!cum && n == 0) {   /* numpy's 0: zeros of y's shape without dim */
        int64_t shape[TN_MAX_DIMS];
        int k = 0;
        for (int i = 0; i < y->ndim; i++)
            if (i != d) shape[k++] = y->shape[i];
        tn_tensor *z = tn_zeros(shape, k, y->dtype);
        return tn__scope_return(z && y->device != TN_CPU ? tn_to(z, y->device) : z);
    }
    tn_tensor *left = tn_slice(y, d, 0, -1, 1), *right = tn_slice(y, d, 1, TN_END, 1), *r = NULL;
    if (o.x) {
        tn_tensor *xv = o.x;
        if (o.x->ndim == 1) {
            if (o.x->shape[0] != n) { tn_scope_end(); return (tn_tensor *)tn__error("%s: %s: There must be one `x` value for each sample point", fn, name); }
            int64_t shape[TN_MAX_DIMS];
            for (int i = 0; i < y->ndim; i++) shape[i] = i == d ? n : 1;
            xv = tn_view(o.x, shape, y->ndim);
        } else if (o.x->ndim < y->ndim) {   /* leading 1s up to y's dims */
            int64_t shape[TN_MAX_DIMS];
            const int pad = y->ndim - o.x->ndim;
            for (int i = 0; i < y->ndim; i++) shape[i] = i < pad ? 1 : o.x->shape[i - pad];
            xv = tn_view(o.x, shape, y->ndim);
        }
        tn_tensor *dx = xv ? tn_sub(tn_slice(xv, d, 1, TN_END, 1), tn_slice(xv, d, 0, -1, 1)) : NULL;
        if (cum) r = dx ? tn_cumsum(tn_div_scalar(tn_mul(dx, tn_add(left, right)), 2.0), d) : NULL;   /* ATen's order: integers wrap where its do */
        else r = dx ? tn_div_scalar(tn_sum_dims(tn_mul(tn_add(left, right), dx), &dim64, 1), 2.0) : NULL;
    } else {
        const double dx = isnan(o.dx) ? 1.0 : o.dx;
        /* dx / 2 a Python float: integer samples give the default float dtype, whatever its value */
        tn_tensor *half = tn__own(tn__scalar_new(dx / 2.0, TN_F64, true));
        if (cum) r = half ? tn_cumsum(tn_mul(half, tn_add(left, right)), d) : NULL;
        else r = tn_mul_scalar(tn_sub(tn_sum_dims(y, &dim64, 1), tn_mul_scalar(tn_add(tn_select(y, d, 0), tn_select(y, d, -1)), 0.5)), dx);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_trapezoid_opts(tn_tensor *y, tn_trapezoid_fn_opts o) { return TN__AS("tn_trapezoid", tn__trapezoid("tn_trapezoid", false, y, o)); }
TNDEF tn_tensor *tn_trapezoid_str(tn_tensor *y, const char *options) {
    TN__KW_STR(tn_trapezoid_fn_opts, trapezoid, "tn_trapezoid", options, tn_trapezoid_opts(y, o));
}
TNDEF tn_tensor *tn_cumulative_trapezoid_opts(tn_tensor *y, tn_trapezoid_fn_opts o) {
    return TN__AS("tn_cumulative_trapezoid", tn__trapezoid("tn_cumulative_trapezoid", true, y, o));
}
TNDEF tn_tensor *tn_cumulative_trapezoid_str(tn_tensor *y, const char *options) {
    TN__KW_STR(tn_trapezoid_fn_opts, trapezoid, "tn_cumulative_trapezoid", options, tn_cumulative_trapezoid_opts(y, o));
}

TNDEF tn_tensor *tn_logsumexp_opts(tn_tensor *x, const int64_t *dims, int n, tn_keepdim_fn_opts o) {
    const bool keepdim = o.keepdim;
    TN__CHECK_NULL(x);
    TN__AUTOCAST(TN__AC_F32_CUDA, tn_logsumexp_opts(ac_[0], dims, n, o), x);
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_logsumexp", x) || tn__dims_mask("tn_logsumexp", x, dims, n, mask)) return NULL;
    tn_scope_begin();
    tn_tensor *xf = tn_dtype_is_floating(x->dtype) ? x : tn_to_dtype(x, TN_F32), *r;
    if (tn_numel(xf) == 0) {
        r = tn_log(tn_sum_dims(tn_exp(xf), dims, n, .keepdim = keepdim));
    } else { /* shift by the max (0 where the max is infinite, so inf - inf never happens) */
        tn_tensor *m = tn_amax(xf, dims, n, .keepdim = true);
        if (m) m = tn_where(tn_isinf(m), tn_zeros_like(m), m);
        tn_tensor *s = tn_log(tn_sum_dims(tn_exp(tn_sub(xf, m)), dims, n, .keepdim = true));
        r = tn_add(s, m);
        if (r && !keepdim) {
            int64_t shape[TN_MAX_DIMS];
            bool mask[TN_MAX_DIMS];
            tn__dims_mask("tn_logsumexp", xf, dims, n, mask);
            int nd = tn__reduced_shape(xf, mask, false, shape);
            r = tn_reshape(r, shape, nd);
        }
    }
    r = tn_keep(tn__grad_name(r, "LogsumexpBackward0"));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_logsumexp_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_logsumexp", options, tn_logsumexp_opts(x, dims, n, o)); }

/* ---- NaN-skipping sums and means, counts, aminmax ---- */
static tn_tensor *tn__nansum_impl(tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    if (tn_is_complex(x)) return (tn_tensor *)tn__error("nansum does not support complex inputs");
    if (!tn_dtype_is_floating(x->dtype)) return tn_sum_dims(x, dims, n, .keepdim = keepdim);   /* nothing is NaN */
    tn_scope_begin();
    /* the NaNs read as 0: where's gradient is g where x is not NaN, 0 at the NaNs, as PyTorch's */
    tn_tensor *r = tn_sum_dims(tn_where(tn_isnan(x), tn_zeros_like(x), x), dims, n, .keepdim = keepdim);
    r = tn_keep(tn__grad_name(r, "NansumBackward0"));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_nansum(tn_tensor *x) { return TN__AS("tn_nansum", tn__nansum_impl(x, NULL, 0, false)); }
static tn_tensor *tn__nansum_dims_kd(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return TN__AS("tn_nansum_dims", tn__nansum_impl(x, dims, n, keepdim)); }
static tn_tensor *tn__nanmean_impl(tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_floating(x->dtype))
        return (tn_tensor *)tn__error("tn_nanmean: expected input to have floating point dtype but got %s", tn_dtype_name(x->dtype));
    tn_scope_begin();
    tn_tensor *r = tn_div(tn__nansum_impl(x, dims, n, keepdim), tn_sum_dims(tn_logical_not(tn_isnan(x)), dims, n, .keepdim = keepdim));
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_nanmean(tn_tensor *x) { return TN__AS("tn_nanmean", tn__nanmean_impl(x, NULL, 0, false)); }
static tn_tensor *tn__nanmean_dims_kd(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return TN__AS("tn_nanmean_dims", tn__nanmean_impl(x, dims, n, keepdim)); }

/* The keyword forms of the dims reductions: dtype casts x first (and a sum's or product's
   result: PyTorch computes in that dtype, so an integer result wraps to it). */
static tn_tensor *tn__dims_reduce(const char *fn, tn_tensor *(*f)(tn_tensor *, const int64_t *, int, bool), bool cast_result,
                                  tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts o) {
    if (o.dtype == -1) return f(x, dims, n, o.keepdim);
    TN__CHECK_NULL(x);
    if (o.dtype < 0 || o.dtype >= TN_NUM_DTYPES) return (tn_tensor *)tn__error("%s: dtype %d is not a tn_dtype", fn, o.dtype);
    tn_scope_begin();
    tn_tensor *r = f(tn_to_dtype(x, (tn_dtype)o.dtype), dims, n, o.keepdim);
    if (r && cast_result && r->dtype != (tn_dtype)o.dtype) r = tn_to_dtype(r, (tn_dtype)o.dtype);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sum_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts o) { return tn__dims_reduce("tn_sum_dims", tn__sum_dims_kd, true, x, dims, n, o); }
TNDEF tn_tensor *tn_mean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts o) { return tn__dims_reduce("tn_mean_dims", tn__mean_dims_kd, false, x, dims, n, o); }
TNDEF tn_tensor *tn_nansum_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts o) { return tn__dims_reduce("tn_nansum_dims", tn__nansum_dims_kd, true, x, dims, n, o); }
TNDEF tn_tensor *tn_nanmean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts o) { return tn__dims_reduce("tn_nanmean_dims", tn__nanmean_dims_kd, false, x, dims, n, o); }
TNDEF tn_tensor *tn_prod_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts o) { return tn__dims_reduce("tn_prod_dims", tn__prod_dims_kd, true, x, dims, n, o); }
TNDEF tn_tensor *tn_sum_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_sum_fn_opts, sum, "tn_sum_dims", options, tn_sum_dims_opts(x, dims, n, o)); }
TNDEF tn_tensor *tn_mean_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_sum_fn_opts, sum, "tn_mean_dims", options, tn_mean_dims_opts(x, dims, n, o)); }
TNDEF tn_tensor *tn_nansum_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_sum_fn_opts, sum, "tn_nansum_dims", options, tn_nansum_dims_opts(x, dims, n, o)); }
TNDEF tn_tensor *tn_nanmean_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_sum_fn_opts, sum, "tn_nanmean_dims", options, tn_nanmean_dims_opts(x, dims, n, o)); }
TNDEF tn_tensor *tn_prod_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options) { TN__KW_STR(tn_sum_fn_opts, sum, "tn_prod_dims", options, tn_prod_dims_opts(x, dims, n, o)); }

static tn_tensor *tn__count_nonzero_impl(tn_tensor *x, const int64_t *dims, int n) {
    TN__CHECK_NULL(x);
    tn_scope_begin();
    tn_tensor *r = tn_keep(tn_sum_dims(tn_ne_scalar(x, 0), dims, n));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_count_nonzero(tn_tensor *x, const int64_t *dims, int n) { return TN__AS("tn_count_nonzero", tn__count_nonzero_impl(x, dims, n)); }

static tn_tensor *tn__aminmax_impl(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **max) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_aminmax";
    const bool all = dim == TN_NONE;
    if (all && tn_numel(x) == 0)
        return (tn_tensor *)tn__error("%s: cannot compute aminmax over an empty dimension as the operation has no identity (input %s)", fn, TN__SHAPE(x));
    if (!all && tn__wrap_dim(fn, dim, x->ndim) < 0) return NULL;
    tn_scope_begin();
    tn_tensor *lo = all ? tn_amin(x, NULL, 0, .keepdim = keepdim) : tn_amin(x, &dim, 1, .keepdim = keepdim);
    tn_tensor *hi = lo ? (all ? tn_amax(x, NULL, 0, .keepdim = keepdim) : tn_amax(x, &dim, 1, .keepdim = keepdim)) : NULL;
    if (hi && x->ndim == 0 && keepdim && !all) {   /* PyTorch keeps a dim of 1 for a 0-d input */
        lo = tn_reshape(lo, tn__one, 1);
        hi = tn_reshape(hi, tn__one, 1);
    }
    lo = hi ? tn_keep(lo) : NULL;
    hi = lo && max ? tn_keep(hi) : NULL;
    tn_scope_end();
    if (max) *max = hi;
    return lo;
}
TNDEF tn_tensor *tn_aminmax_opts(tn_tensor *x, tn_tensor **max, tn_argmax_fn_opts o) {
    if (max) *max = NULL;
    return TN__AS("tn_aminmax", tn__aminmax_impl(x, o.dim, o.keepdim, max));
}
TNDEF tn_tensor *tn_aminmax_str(tn_tensor *x, tn_tensor **max, const char *options) {
    if (max) *max = NULL;
    TN__KW_STR(tn_argmax_fn_opts, argmax, "tn_aminmax", options, tn_aminmax_opts(x, max, o));
}

/* ---- histograms: bincount and histc, accumulated by index_put ---- */
static tn_tensor *tn__bincount_impl(tn_tensor *x, tn_tensor *weights, int64_t minlength) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_bincount";
    if (!tn__is_int(x->dtype))
        return (tn_tensor *)tn__error("%s: \"bincount_cpu\" not implemented for '%s' (integer inputs only)", fn, tn__torch_type_name(x->dtype));
    if (minlength < 0) return (tn_tensor *)tn__error("%s: minlength should be >= 0, got %lld", fn, (long long)minlength);
    if (x->ndim != 1) return (tn_tensor *)tn__error("%s: bincount only supports 1-d non-negative integral inputs (got shape %s)", fn, TN__SHAPE(x));
    if (weights && (weights->ndim != 1 || weights->shape[0] != x->shape[0]))
        return (tn_tensor *)tn__error("%s: weights should be 1-d and have the same length as input (weights %s, input %s)", fn, TN__SHAPE(weights), TN__SHAPE(x));
    if (weights && tn__check_same_device(fn, x, weights)) return NULL;
    const tn_dtype od = !weights ? TN_I64 : weights->dtype == TN_F32 ? TN_F32 : TN_F64;
    int64_t size = minlength;
    tn_scope_begin();
    if (tn_numel(x) > 0) {
        tn_tensor *lo = tn_amin(x, NULL, 0), *hi = lo ? tn_amax(x, NULL, 0) : NULL;
        if (!hi) { tn_scope_end(); return NULL; }
        const double lov = tn_item(lo);
        if (lov < 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: bincount only supports 1-d non-negative integral inputs (got %g)", fn, lov); }
        int64_t need;   /* exact below 2^53; a larger maximum fails to allocate anyway */
        if (tn__double_to_int64(fn, "the largest value plus one", tn_item(hi) + 1, &need)) { tn_scope_end(); return NULL; }
        if (need > size) size = need;
    }
    tn_tensor *out = tn__own(tn__full_on(&size, 1, 0, od, x->device)), *xi = tn_to_dtype(x, TN_I64);
    tn_tensor *w = weights ? tn_to_dtype(tn_detach(weights), od) : tn_ones_like(xi);
    tn_tensor *r = out && w && xi ? tn_index_put_(out, &xi, 1, w, .accumulate = true) : NULL;
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bincount_opts(tn_tensor *x, tn_bincount_fn_opts o) { return TN__AS("tn_bincount", tn__bincount_impl(x, o.weights, o.minlength)); }
TNDEF tn_tensor *tn_bincount_str(tn_tensor *x, tn_tensor *weights, const char *options) { TN__KW_STR(tn_bincount_fn_opts, bincount, "tn_bincount", options, (o.weights = weights, tn_bincount_opts(x, o))); }

static tn_tensor *tn__histc_impl(tn_tensor *x, int64_t bins, double lo, double hi) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_histc";
    if (!tn_dtype_is_floating(x->dtype) || tn__check_cpu_dtype(fn, x))
        return (tn_tensor *)tn__error("%s: \"histogram_cpu\" not implemented for '%s' (floating inputs only)", fn, tn__torch_type_name(x->dtype));
    if (bins <= 0) return (tn_tensor *)tn__error("%s: bins must be > 0, but got %lld", fn, (long long)bins);
    tn_scope_begin();
    if (lo == hi && tn_numel(x) > 0) {   /* the data's range */
        tn_tensor *a = tn_amin(x, NULL, 0), *b = a ? tn_amax(x, NULL, 0) : NULL;
        if (!b) { tn_scope_end(); return NULL; }
        lo = tn_item(a);
        hi = tn_item(b);
    }
    if (lo == hi) { lo -= 1; hi += 1; }
    if (!(isfinite(lo) && isfinite(hi))) { tn_scope_end(); return (tn_tensor *)tn__error("%s: range of [%g, %g] is not finite", fn, lo, hi); }
    if (!(lo < hi)) { tn_scope_end(); return (tn_tensor *)tn__error("%s: max must be larger than min (min %g, max %g)", fn, lo, hi); }
    /* the edges in x's dtype, as PyTorch's bin edges; the bin (x - lo) * bins / (hi - lo)
       truncated, the right edge in the last bin, elements outside [lo, hi] (and NaN) nowhere */
    const bool f32 = x->dtype == TN_F32;
    const double l = f32 ? (double)(float)lo : lo, h = f32 ? (double)(float)hi : hi, span = f32 ? (double)((float)h - (float)l) : h - l;
    tn_tensor *xd = tn_detach(x), *in = tn_logical_and(tn_ge_scalar(xd, l), tn_le_scalar(xd, h));
    tn_tensor *xs = tn_where(in, xd, tn_full_like(xd, l));   /* out of range: a safe value, weighed 0 */
    tn_tensor *pos = tn_clamp(tn_to_dtype(tn_div_scalar(tn_mul_scalar(tn_sub_scalar(xs, l), (double)bins), span), TN_I64), .min = 0, .max = (double)(bins - 1));
    int64_t m1 = -1;
    pos = tn_reshape(pos, &m1, 1);
    tn_tensor *out = tn__own(tn__full_on(&bins, 1, 0, x->dtype, x->device));
    tn_tensor *r = pos && out ? tn_index_put_(out, &pos, 1, tn_reshape(tn_to_dtype(in, x->dtype), &m1, 1), .accumulate = true) : NULL;
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_histc_opts(tn_tensor *x, tn_histc_fn_opts o) { return TN__AS("tn_histc", tn__histc_impl(x, o.bins, o.min, o.max)); }
/* torch.histogram: numpy.histogram's bins (linspace of the range in x's dtype, or the edges
   given), each value's bin by bucketize against the edges (right=True, minus one; the last
   edge in the last bin); the weights summed by index_add; density divides by the total
   and the bin widths. NaN is not counted, as 2025 PyTorch (1.13's kernel counted it). */
static tn_tensor *tn__histogram_impl(tn_tensor *x, int64_t bins, tn_tensor *bt, tn_tensor **bin_edges, const tn_histogram_fn_opts *o) {
    const char *fn = "tn_histogram";
    if (bin_edges) *bin_edges = NULL;
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_floating(x->dtype))
        return (tn_tensor *)tn__error("%s: torch.histogram: input tensor and bins tensors should have the same dtype, but got input %s and bins float", fn,
                                      tn_dtype_name(x->dtype));
    if (bt && (bt->ndim != 1 || tn_numel(bt) < 1)) return (tn_tensor *)tn__error("%s: torch.histogram(): bins tensor should have one dimension and at least 1 element", fn);
    if (!bt && bins <= 0) return (tn_tensor *)tn__error("%s: torch.histogram(): bins must be > 0, but got %lld", fn, (long long)bins);
    const int64_t N = tn_numel(x), m1 = -1;
    if (o->weight && tn_numel(o->weight) != N)
        return (tn_tensor *)tn__error("%s: torch.histogram(): if weight tensor is provided it should have the same shape as the input tensor (input %s, weight %s)", fn,
                                      TN__SHAPE(x), TN__SHAPE(o->weight));
    tn_scope_begin();
    tn_tensor *xf = tn_reshape(tn_detach(x), &m1, 1), *edges;
    if (bt) edges = tn_to(tn_to_dtype(tn_detach(bt), x->dtype), x->device);
    else {
        double lo = o->range[0], hi = o->range[1];
        if (lo != lo || hi != hi) {   /* None: the data's range (numpy's [0, 1] of no values) */
            lo = 0; hi = 1;
            if (N) { lo = tn_item(tn_amin(xf, NULL, 0)); hi = tn_item(tn_amax(xf, NULL, 0)); }
        }
        if (!(isfinite(lo) && isfinite(hi))) { tn_scope_end(); return (tn_tensor *)tn__error("%s: torch.histogram(): range [%g, %g] is not finite", fn, lo, hi); }
        if (lo > hi) { tn_scope_end(); return (tn_tensor *)tn__error("%s: torch.histogram(): min should not exceed max, but got min %g max %g", fn, lo, hi); }
        if (lo == hi) { lo -= 0.5; hi += 0.5; }   /* numpy's widening of an empty range */
        edges = tn_to(tn_linspace(lo, hi, bins + 1, x->dtype), x->device);
    }
    const int64_t n = edges ? tn_numel(edges) - 1 : 0, nbins = n > 0 ? n : 0;
    tn_tensor *hist = tn__own(tn__full_on(&nbins, 1, 0, x->dtype, x->device));
    if (edges && hist && n > 0 && N) {
        tn_tensor *inside = tn_logical_and(tn_ge(xf, tn_select(edges, 0, 0)), tn_le(xf, tn_select(edges, 0, n)));
        tn_searchsorted_fn_opts so = TN_DEFAULTS(tn_searchsorted_fn_opts);
        so.right = true;
        tn_tensor *sel = tn_masked_select(xf, inside);
        tn_tensor *idx = tn_clamp(tn_sub_scalar(tn_bucketize_opts(sel, edges, so), 1), .min = 0, .max = (double)(n - 1));
        tn_tensor *w = o->weight ? tn_masked_select(tn_reshape(tn_to_dtype(tn_detach(o->weight), x->dtype), &m1, 1), inside) : tn_ones_like(sel);
        hist = idx && w ? tn_index_add(hist, 0, idx, w) : NULL;
    }
    if (hist && o->density && n > 0) hist = tn_div(hist, tn_mul(tn_sum(hist), tn_diff(edges)));
    if (!hist || !edges) { tn_scope_end(); return NULL; }
    hist = tn_keep(hist);
    if (bin_edges) *bin_edges = tn_keep(edges);   /* else the scope frees them */
    tn_scope_end();
    return hist;
}
TNDEF tn_tensor *tn_histogram_opts(tn_tensor *x, int64_t bins, tn_tensor **bin_edges, tn_histogram_fn_opts o) {
    return TN__AS("tn_histogram", tn__histogram_impl(x, bins, NULL, bin_edges, &o));
}
TNDEF tn_tensor *tn_histogram_str(tn_tensor *x, int64_t bins, tn_tensor **bin_edges, const char *options) {
    TN__KW_STR(tn_histogram_fn_opts, histogram, "tn_histogram", options, tn_histogram_opts(x, bins, bin_edges, o));
}
TNDEF tn_tensor *tn_histogram_edges_opts(tn_tensor *x, tn_tensor *bins, tn_tensor **bin_edges, tn_histogram_fn_opts o) {
    TN__CHECK_NULL(bins);
    return TN__AS("tn_histogram", tn__histogram_impl(x, 0, bins, bin_edges, &o));
}
/* torch.histogramdd: x [..., D] is points of D coordinates. Each dim's edges come from
   bins[d] counts (linspace of range[2d], range[2d + 1], or of the data's min and max in that
   dim, in x's dtype) or are given (edges[d]). A point's bin in each dim is std::upper_bound's
   in the edges minus one (the last edge in the last bin), as PyTorch's kernel, so unsorted
   given edges bin as torch's; a point outside [edges[0], edges[-1]] in any dim, or NaN, is
   counted nowhere. Sums in x's dtype, in the points' order (PyTorch's). */
static int64_t tn__upper_bound(const double *e, int64_t n, double v) {
    int64_t first = 0, count = n;
    while (count > 0) {
        const int64_t step = count / 2;
        if (!(v < e[first + step])) { first += step + 1; count -= step + 1; }
        else count = step;
    }
    return first;
}
static tn_tensor *tn__histogramdd_impl(tn_tensor *x, const int64_t *bins, tn_tensor *const *given, int nbins, const double *range, tn_tensor *weight,
                                       bool density, tn_tensor **bin_edges) {
    const char *fn = "tn_histogramdd";
    TN__CHECK_NULL(x);
    if (x->dtype != TN_F32 && x->dtype != TN_F64)
        return (tn_tensor *)tn__error("%s: \"histogramdd\" not implemented for '%s' (float32 and float64 inputs only)", fn, tn__torch_type_name(x->dtype));
    if (x->device != TN_CPU) return (tn_tensor *)tn__error("%s: not implemented on %s (CPU only, as PyTorch's)", fn, tn_device_name(x->device));
    if (x->ndim < 2) return (tn_tensor *)tn__error("%s: torch.histogramdd: input tensor should have at least 2 dimensions, but got %d", fn, x->ndim);
    const int64_t D = x->shape[x->ndim - 1];
    if (D > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: a %lld-dimensional histogram has more dims than a tensor can (%d)", fn, (long long)D, TN_MAX_DIMS);
    if (nbins != D && !given)   /* 2025's check (1.13 read the first D counts) */
        return (tn_tensor *)tn__error("%s: histogramdd: The size of bins must be equal to the innermost dimension of the input (%d bin counts, input %s)", fn, nbins,
                                      TN__SHAPE(x));
    if (nbins != D)
        return (tn_tensor *)tn__error("%s: torch.histogramdd: expected %lld sequences of bin edges for each of the %lld dimensions of the input %s, but got %d",
                                      fn, (long long)D, (long long)D, TN__SHAPE(x), nbins);
    if (!bins && !given) return (tn_tensor *)tn__error("%s: bins must not be NULL", fn);
    for (int d = 0; d < nbins; d++) {
        if (bins && bins[d] <= 0) return (tn_tensor *)tn__error("%s: torch.histogramdd: bins must be > 0, but got %lld for dimension %d", fn, (long long)bins[d], d);
        if (given) {
            TN__CHECK_NULL(given[d]);
            if (given[d]->dtype != x->dtype)
                return (tn_tensor *)tn__error("%s: torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype %s and bins for dimension %d with dtype %s",
                                              fn, tn__torch_type_name(x->dtype), d, tn__torch_type_name(given[d]->dtype));
            if (given[d]->ndim != 1 || tn_numel(given[d]) < 1)
                return (tn_tensor *)tn__error("%s: torch.histogramdd: bins tensor should have one dimension and at least 1 element, but got shape %s for dimension %d", fn,
                                              TN__SHAPE(given[d]), d);
            if (tn__check_same_device(fn, x, given[d])) return NULL;
        }
    }
    if (weight) {
        if (weight->dtype != x->dtype)
            return (tn_tensor *)tn__error("%s: torch.histogramdd: if weight tensor is provided, it should have the same dtype as the input tensor, but got weight with dtype %s and input with dtype %s",
                                          fn, tn__torch_type_name(weight->dtype), tn__torch_type_name(x->dtype));
        if (weight->ndim != x->ndim - 1 || memcmp(weight->shape, x->shape, (size_t)weight->ndim * sizeof(int64_t)))
            return (tn_tensor *)tn__error("%s: torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape %s and weight with shape %s",
                                          fn, TN__SHAPE(x), TN__SHAPE(weight));
        if (tn__check_same_device(fn, x, weight)) return NULL;
    }
    const int64_t M = D ? tn_numel(x) / D : 0;
    int64_t hshape[TN_MAX_DIMS] = {0}, total = 1;
    tn_scope_begin();
    tn_tensor *edges[TN_MAX_DIMS], *pts = tn_contiguous(tn_to_dtype(tn_detach(tn_reshape(x, TN_SHAPE(M, D))), TN_F64)), *lohi = NULL;
    if (!pts) return tn__scope_return(NULL);
    if (!given && !range && M > 0) {   /* the data's range, per dim ({min, max} rows) */
        const int64_t d0 = 0;
        tn_tensor *mm[2] = {tn_amin(pts, &d0, 1), tn_amax(pts, &d0, 1)};
        lohi = mm[0] && mm[1] ? tn_contiguous(tn_stack(mm, 2)) : NULL;
        if (!lohi) return tn__scope_return(NULL);
    }
    for (int64_t d = 0; d < D; d++) {
        if (given) edges[d] = tn_detach(given[d]);
        else {
            double lo = 0, hi = 1;   /* no points: numpy's [0, 1] */
            if (range) { lo = range[2 * d]; hi = range[2 * d + 1]; }
            else if (lohi) { lo = ((const double *)tn_data_ptr(lohi))[d]; hi = ((const double *)tn_data_ptr(lohi))[D + d]; }
            if (!(isfinite(lo) && isfinite(hi))) {
                tn__error("%s: torch.histogramdd: dimension %lld's range [%g, %g] is not finite", fn, (long long)d, lo, hi);
                return tn__scope_return(NULL);
            }
            if (lo > hi) {
                tn__error("%s: torch.histogramdd: min should not exceed max, but got min %g max %g for dimension %lld", fn, lo, hi, (long long)d);
                return tn__scope_return(NULL);
            }
            if (lo == hi) { lo -= 0.5; hi += 0.5; }   /* numpy's widening of an empty range */
            edges[d] = tn_linspace(lo, hi, bins[d] + 1, x->dtype);
        }
        if (!edges[d]) return tn__scope_return(NULL);
        hshape[d] = tn_numel(edges[d]) - 1;
        if (!tn__mul_ok(total, hshape[d] > 0 ? hshape[d] : 1, &total)) {
            tn__error("%s: the histogram's size overflows", fn);
            return tn__scope_return(NULL);
        }
    }
    tn_tensor *hist = tn_zeros(hshape, (int)D, x->dtype);
    tn_tensor *wd = weight ? tn_contiguous(tn_to_dtype(tn_detach(tn_reshape(weight, &M, 1)), TN_F64)) : NULL;
    const double *ev[TN_MAX_DIMS];
    int64_t hstride[TN_MAX_DIMS];
    for (int64_t d = D - 1, st = 1; d >= 0; d--) {
        tn_tensor *e = tn_contiguous(tn_to_dtype(edges[d], TN_F64));
        if (!e) return tn__scope_return(NULL);
        ev[d] = (const double *)tn_data_ptr(e);
        hstride[d] = st;
        st *= hshape[d];
    }
    if (!hist || (weight && !wd)) return tn__scope_return(NULL);
    const double *p = (const double *)tn_data_ptr(pts), *w = wd ? (const double *)tn_data_ptr(wd) : NULL;
    float *h32 = x->dtype == TN_F32 ? (float *)tn_data_ptr(hist) : NULL;
    double *h64 = x->dtype == TN_F64 ? (double *)tn_data_ptr(hist) : NULL;
    for (int64_t i = 0; i < M && D > 0 && total > 0; i++) {
        int64_t at = 0;
        bool skip = false;
        for (int64_t d = 0; d < D && !skip; d++) {
            const double v = p[i * D + d], *e = ev[d];
            const int64_t ne = hshape[d] + 1;
            if (!(v >= e[0] && v <= e[ne - 1])) { skip = true; break; }   /* outside, or NaN */
            int64_t pos = tn__upper_bound(e, ne, v) - 1;
            if (pos == ne - 1) pos--;   /* the rightmost edge closes the last bin */
            if (pos < 0) pos = 0;       /* (unsorted edges only) */
            at += pos * hstride[d];
        }
        if (skip) continue;
        if (h32) h32[at] += w ? (float)w[i] : 1.0f;
        else h64[at] += w ? w[i] : 1.0;
    }
    if (density) {   /* PyTorch's order: by the total, then by each dim's bin widths */
        hist = tn_div(hist, tn_sum(hist));
        for (int64_t d = 0; d < D && hist; d++) {
            int64_t s1[TN_MAX_DIMS];
            for (int64_t j = 0; j < D; j++) s1[j] = j == d ? hshape[d] : 1;
            hist = tn_div(hist, tn_reshape(tn_diff(edges[d]), s1, (int)D));
        }
    }
    if (!hist) return tn__scope_return(NULL);
    hist = tn_keep(hist);
    for (int64_t d = 0; d < D && bin_edges; d++) bin_edges[d] = tn_keep(given ? tn_clone(edges[d]) : edges[d]);
    tn_scope_end();
    return hist;
}
TNDEF tn_tensor *tn_histogramdd_opts(tn_tensor *x, const int64_t *bins, int nbins, tn_tensor **bin_edges, tn_histogramdd_fn_opts o) {
    TN__CHECK_NULL(x);
    const int64_t D = x->ndim ? x->shape[x->ndim - 1] : 0;
    if (o.range.n && o.range.n != 2 * D)
        return (tn_tensor *)tn__error("tn_histogramdd: torch.histogramdd: for a %lld-dimensional histogram range should have %lld elements, but got %d", (long long)D,
                                      (long long)(2 * D), o.range.n);
    return TN__AS("tn_histogramdd", tn__histogramdd_impl(x, bins, NULL, nbins, o.range.n ? o.range.v : NULL, o.weight, o.density, bin_edges));
}
TNDEF tn_tensor *tn_histogramdd_str(tn_tensor *x, const int64_t *bins, int nbins, tn_tensor **bin_edges, const char *options) {
    TN__KW_STR(tn_histogramdd_fn_opts, histogramdd, "tn_histogramdd", options, tn_histogramdd_opts(x, bins, nbins, bin_edges, o));
}
TNDEF tn_tensor *tn_histogramdd_edges_opts(tn_tensor *x, tn_tensor *const *bins, int nbins, tn_tensor **bin_edges, tn_histogramdd_fn_opts o) {
    if (!bins) return (tn_tensor *)tn__error("tn_histogramdd: bins must not be NULL");
    if (o.range.n) return (tn_tensor *)tn__error("tn_histogramdd: range is not allowed with bin edges (the edges fix the range)");
    return TN__AS("tn_histogramdd", tn__histogramdd_impl(x, NULL, bins, nbins, NULL, o.weight, o.density, bin_edges));
}
TNDEF tn_tensor *tn_histc_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_histc_fn_opts, histc, "tn_histc", options, tn_histc_opts(x, o)); }
