/* The rows of tiles of the Winograd transforms, float32 in AVX-512 (and the output transform
   and rows in AVX2 too; chosen at run time; the portable rows in TN__WINO_DEFINE compute the
   same operations in the same order, so all give the same bits). Rows of tiles are short (7 tiles at 14x14), too short for the
   auto-vectorised loops: here a row is a masked load or two per input row and 8 tiles a
   vector. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__WINO_AVX512 __attribute__((target("avx512f,avx512vl")))
/* Lanes [from, to) of 16, clamped. */
TN__WINO_AVX512 static __mmask16 tn__wino_lanes(int64_t from, int64_t to) {
    from = TN__MAX(0, TN__MIN(16, from)); to = TN__MAX(from, TN__MIN(16, to));
    return (__mmask16)(((1u << to) - 1) & ~((1u << from) - 1));
}
/* Lanes [0, n) of v (n <= 8) to p: 256-bit stores, as Zen 4 stores 512 bits in two halves. */
TN__WINO_AVX512 static void tn__wino_store8(float *p, int64_t n, __m512 v) { _mm256_mask_storeu_ps(p, (__mmask8)tn__wino_lanes(0, n), _mm512_castps512_ps256(v)); }
TN__WINO_AVX512 static __m512 tn__wino_neg(__m512 v) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))); }
/* The 16 values of B^T d B of tiles 0 ... tw - 1 of a row of tiles (tile j: columns
   2j ... 2j + 3 of the input rows d[0..3], which read as zero outside columns [j0, j1)), to
   columns c = cp pn + cr ... of V + xi vx: column c in panel c / pn (panels ps apart) at
   c % pn. E: scratch of the portable rows. */
TN__WINO_AVX512 static void tn__wino_in_row_f32_avx512(const float *const *d, int64_t j0, int64_t j1, int64_t tw, int64_t cp, int64_t cr,
                                                       int64_t pn, int64_t ps, float *V, int64_t vx, float *E) {
    const __m512i i0 = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), one = _mm512_set1_epi32(1);
    const __m512i i1 = _mm512_add_epi32(i0, one), i2 = _mm512_add_epi32(i1, one), i3 = _mm512_add_epi32(i2, one);
    (void)E;
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const int64_t n = TN__MIN(8, tw - t0), b = 2 * t0, s = TN__MAX(j0, b) - b, e = TN__MIN(j1, b + 2 * n + 2) - b;
        const int64_t m = TN__MIN(n, pn - cr);   /* lanes [0, m) in this panel, [m, n) at the next one's start */
        const __mmask16 ml = tn__wino_lanes(s, e), mh = tn__wino_lanes(s - 16, e - 16), m2 = tn__wino_lanes(m, n);
        float *p0 = V + cp * ps + cr, *p1 = V + (cp + 1) * ps - m;
        __m512 lo[4], hi[4], v[16];
        for (cr += 8; cr >= pn; cr -= pn) cp++;
        for (int k = 0; k < 4; k++) {
            lo[k] = _mm512_maskz_loadu_ps(ml, d[k] + b);
            hi[k] = mh ? _mm512_maskz_loadu_ps(mh, d[k] + b + 16) : _mm512_setzero_ps();
        }
        const __m512 el[4] = {_mm512_sub_ps(lo[0], lo[2]), _mm512_add_ps(lo[1], lo[2]), _mm512_sub_ps(lo[2], lo[1]), _mm512_sub_ps(lo[1], lo[3])};
        const __m512 eh[4] = {_mm512_sub_ps(hi[0], hi[2]), _mm512_add_ps(hi[1], hi[2]), _mm512_sub_ps(hi[2], hi[1]), _mm512_sub_ps(hi[1], hi[3])};
        for (int k = 0; k < 4; k++) {
            const __m512 a0 = _mm512_permutex2var_ps(el[k], i0, eh[k]), a1 = _mm512_permutex2var_ps(el[k], i1, eh[k]);
            const __m512 a2 = _mm512_permutex2var_ps(el[k], i2, eh[k]), a3 = _mm512_permutex2var_ps(el[k], i3, eh[k]);
            v[4 * k] = _mm512_sub_ps(a0, a2); v[4 * k + 1] = _mm512_add_ps(a1, a2);
            v[4 * k + 2] = _mm512_sub_ps(a2, a1); v[4 * k + 3] = _mm512_sub_ps(a1, a3);
        }
        for (int xi = 0; xi < 16; xi++) {
            tn__wino_store8(p0 + xi * vx, m, v[xi]);
            if (m < n) _mm512_mask_storeu_ps(p1 + xi * vx, m2, v[xi]);
        }
    }
}
/* A^T m A for the 16 tiles from i (lanes k): m[xi S + i] (xi < 16) to the outputs y00, y01,
   y10, y11 in o[0..3], + b. */
TN__WINO_AVX512 static inline void tn__wino_at16(int64_t S, const float *m, int64_t i, __mmask16 k, __m512 b, __m512 o[4]) {
    __m512 v[16];
    for (int xi = 0; xi < 16; xi++) v[xi] = _mm512_maskz_loadu_ps(k, m + xi * S + i);
    __m512 r[4], u[4];
    for (int c = 0; c < 4; c++) {
        r[c] = _mm512_add_ps(_mm512_add_ps(v[c], v[4 + c]), v[8 + c]);
        u[c] = _mm512_sub_ps(_mm512_sub_ps(v[4 + c], v[8 + c]), v[12 + c]);
    }
    o[0] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(r[0], r[1]), r[2]), b);
    o[1] = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(r[1], r[2]), r[3]), b);
    o[2] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(u[0], u[1]), u[2]), b);
    o[3] = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(u[1], u[2]), u[3]), b);
}
/* A^T m A, 4 outputs per tile, for tiles i < nt: m[xi S + i] (xi < 16) to y00 ... y11, + bv. */
TN__WINO_AVX512 static void tn__wino_at_f32_avx512(int64_t nt, int64_t S, const float *m, float bv, float *y00, float *y01, float *y10, float *y11) {
    const __m512 b = _mm512_set1_ps(bv);
    for (int64_t i = 0; i < nt; i += 16) {
        const __mmask16 k = tn__wino_lanes(0, nt - i);
        __m512 o[4];
        tn__wino_at16(S, m, i, k, b, o);
        _mm512_mask_storeu_ps(y00 + i, k, o[0]);
        _mm512_mask_storeu_ps(y01 + i, k, o[1]);
        _mm512_mask_storeu_ps(y10 + i, k, o[2]);
        _mm512_mask_storeu_ps(y11 + i, k, o[3]);
    }
}
/* tn__wino_at_f32_avx512's four outputs of tiles i < nt, then (the graph replay's pooled
   forward) ReLU when relu (the epilogue's x < 0 ? 0 : x) and their max in max_pool2d's order
   and comparisons (src/nn/pooling.c tn__pool22_fwd_f32_avx512) to y[i]. */
TN__WINO_AVX512 static __m512 tn__wino_relu(__m512 v) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, _mm512_setzero_ps()); }
TN__WINO_AVX512 static __m512 tn__wino_max(__m512 m, __m512 c) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q), m, c); }
TN__WINO_AVX512 static void tn__wino_at_pool_f32_avx512(int64_t nt, int64_t S, const float *m, float bv, float *y, int relu, float *E) {
    const __m512 b = _mm512_set1_ps(bv);
    (void)E;
    for (int64_t i = 0; i < nt; i += 16) {
        const __mmask16 k = tn__wino_lanes(0, nt - i);
        __m512 o[4];
        tn__wino_at16(S, m, i, k, b, o);
        if (relu) for (int c = 0; c < 4; c++) o[c] = tn__wino_relu(o[c]);
        _mm512_mask_storeu_ps(y + i, k, tn__wino_max(tn__wino_max(tn__wino_max(o[0], o[1]), o[2]), o[3]));
    }
}
/* A row of output tiles into the output row yr [ow]: tile j's two values a[j], b[j] at
   columns 2j, 2j + 1. */
TN__WINO_AVX512 static void tn__wino_out_row_f32_avx512(const float *a, const float *b, int64_t tw, float *yr, int64_t ow) {
    const __m512i il = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const __mmask16 mn = tn__wino_lanes(0, tw - t0);
        const __m512 z = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(mn, a + t0), il, _mm512_maskz_loadu_ps(mn, b + t0));
        _mm512_mask_storeu_ps(yr + 2 * t0, tn__wino_lanes(0, ow - 2 * t0), z);
    }
}
/* A gy A^T of the 2x2 tiles 0 ... tw - 1 of output rows a, b (columns [0, j1) read, zeros
   past them): value (k, l) of tile j at Y[(4k + l) ys + j]. */
TN__WINO_AVX512 static void tn__wino_gy_row_f32_avx512(const float *a, const float *b, int64_t j1, int64_t tw, float *Y, int64_t ys, float *E) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14), io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    (void)E;
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const int64_t n = TN__MIN(8, tw - t0);
        const __mmask16 ml = tn__wino_lanes(0, j1 - 2 * t0);
        const __m512 av = _mm512_maskz_loadu_ps(ml, a + 2 * t0), bv = _mm512_maskz_loadu_ps(ml, b + 2 * t0);
        const __m512 f[4] = {av, _mm512_add_ps(av, bv), _mm512_sub_ps(av, bv),
                             _mm512_castsi512_ps(_mm512_maskz_xor_epi32(ml, _mm512_castps_si512(bv), _mm512_set1_epi32(INT32_MIN)))};
        for (int k = 0; k < 4; k++) {
            const __m512 u = _mm512_permutexvar_ps(ie, f[k]), w = _mm512_permutexvar_ps(io, f[k]);
            float *y = Y + 4 * k * ys + t0;
            tn__wino_store8(y, n, u);
            tn__wino_store8(y + ys, n, _mm512_add_ps(u, w));
            tn__wino_store8(y + 2 * ys, n, _mm512_sub_ps(u, w));
            tn__wino_store8(y + 3 * ys, n, tn__wino_neg(w));
        }
    }
}
#undef TN__WINO_AVX512
/* The same rows in AVX2, for CPUs without AVX-512: 8 lanes, the same operations in the same
   order lane by lane (the same bits as the portable and the AVX-512 rows); the lanes the
   AVX-512 rows mask off are left out by tn__r8_load (zeros, nothing read) and tn__r8_store. */
#define TN__WINO_AVX2 __attribute__((target("avx2")))
/* tn__wino_at16 in 8 lanes (lanes [0, k)). */
TN__WINO_AVX2 static inline void tn__wino_at8(int64_t S, const float *m, int64_t i, int64_t k, __m256 b, __m256 o[4]) {
    __m256 v[16];
    for (int xi = 0; xi < 16; xi++) v[xi] = tn__r8_load(m + xi * S + i, 0, k);
    __m256 r[4], u[4];
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_add_ps(_mm256_add_ps(v[c], v[4 + c]), v[8 + c]);
        u[c] = _mm256_sub_ps(_mm256_sub_ps(v[4 + c], v[8 + c]), v[12 + c]);
    }
    o[0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(r[0], r[1]), r[2]), b);
    o[1] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(r[1], r[2]), r[3]), b);
    o[2] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(u[0], u[1]), u[2]), b);
    o[3] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(u[1], u[2]), u[3]), b);
}
TN__WINO_AVX2 static void tn__wino_at_f32_avx2(int64_t nt, int64_t S, const float *m, float bv, float *y00, float *y01, float *y10, float *y11) {
    const __m256 b = _mm256_set1_ps(bv);
    for (int64_t i = 0; i < nt; i += 8) {
        const int64_t k = nt - i;
        __m256 o[4];
        tn__wino_at8(S, m, i, k, b, o);
        tn__r8_store(y00 + i, 0, k, o[0]);
        tn__r8_store(y01 + i, 0, k, o[1]);
        tn__r8_store(y10 + i, 0, k, o[2]);
        tn__r8_store(y11 + i, 0, k, o[3]);
    }
}
TN__WINO_AVX2 static void tn__wino_at_pool_f32_avx2(int64_t nt, int64_t S, const float *m, float bv, float *y, int relu, float *E) {
    const __m256 b = _mm256_set1_ps(bv);
    (void)E;
    for (int64_t i = 0; i < nt; i += 8) {
        const int64_t k = nt - i;
        __m256 o[4];
        tn__wino_at8(S, m, i, k, b, o);
        if (relu) for (int c = 0; c < 4; c++) o[c] = tn__r8_relu(o[c]);
        tn__r8_store(y + i, 0, k, tn__r8_max(tn__r8_max(tn__r8_max(o[0], o[1]), o[2]), o[3]));
    }
}
/* tn__wino_out_row_f32_avx512 in 8 lanes: 8 tiles interleaved into 16 columns. */
TN__WINO_AVX2 static void tn__wino_out_row_f32_avx2(const float *a, const float *b, int64_t tw, float *yr, int64_t ow) {
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const __m256 av = tn__r8_load(a + t0, 0, tw - t0), bv = tn__r8_load(b + t0, 0, tw - t0);
        const __m256 lo = _mm256_unpacklo_ps(av, bv), hi = _mm256_unpackhi_ps(av, bv);
        tn__r8_store(yr + 2 * t0, 0, ow - 2 * t0, _mm256_permute2f128_ps(lo, hi, 0x20));
        tn__r8_store(yr + 2 * t0 + 8, 0, ow - 2 * t0 - 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    }
}
#undef TN__WINO_AVX2
/* Test knob: the widest rows run, 2 AVX-512 where the CPU has it (else AVX2), 1 at most AVX2
   (where the CPU has AVX2 and FMA, as TN__WIDE), 0 the portable rows. */
TN__TESTABLE int tn__wino_avx512 = 2;
static int tn__wino_isa(void) {
    return tn__wino_avx512 >= 2 && tn__cpu_avx512() ? 2 : tn__wino_avx512 >= 1 && tn__cpu_fma() ? 1 : 0;
}
/* var = fn's AVX-512 or AVX2 twin where the CPU has it (float32 only). */
#define TN__WINO_PICK_f32(var, fn) do { const int isa_ = tn__wino_isa(); if (isa_) var = isa_ == 2 ? fn##_avx512 : fn##_avx2; } while (0)
/* The input and the gradient rows: AVX-512 only. AVX2 copies (8 tiles from two or four loads
   per input row, even and odd lanes by shuffles, ragged ends stored in pieces) ran slower
   than the portable rows on an AMD EPYC (conv_fwd_bwd: the input row a quarter of the time
   against a sixth, the gradient row 3.8 % against 2.2 %): not kept. */
#define TN__WINO_PICK512_f32(var, fn) do { if (tn__wino_isa() == 2) var = fn##_avx512; } while (0)
#else
#define TN__WINO_PICK_f32(var, fn) ((void)0)
#define TN__WINO_PICK512_f32(var, fn) ((void)0)
#endif
#define TN__WINO_PICK_f64(var, fn) ((void)0)
#define TN__WINO_PICK512_f64(var, fn) ((void)0)

/* Winograd F(2x2, 3x3) (Lavin and Gray, 2016) for 3x3, stride-1, undilated, ungrouped
   convolutions with 8 or more channels on both sides: a 2x2 output tile is
   A^T [(G g G^T) . (B^T d B)] A of its 4x4 input tile d, so the products become 16 GEMMs
   [P, Q] x [Q, tiles] with 2.25x fewer multiply-adds than im2col's, and the transforms are
   additions (and halvings in G). It computes the forward and, as the convolution of gy by
   the turned kernel with padding 2 - p, the input gradient. Rounding differs from
   im2col's by a few ulps. */
/* @template TN__WINO_DEFINE(T, SFX) */
/* U [16][P][Q] = G g G^T for each 3x3 kernel g: w[p][q] (flip = 0), or w[q][p] turned by
   180 degrees (flip = 1: the input gradient's kernel); w [O, C, 3, 3] contiguous. */
static void tn__wino_weights_##SFX(const T *w, int64_t O, int64_t C, int flip, T *U,
                                   const tn__gemm_kern_##SFX *kn, T *Up)
{
    const int64_t P = flip ? C : O, Q = flip ? O : C;
    int64_t p, q0, q, r;
    /* 64 kernels at a time: their taps gathered as g[9][64], then G g G^T along q in
       vectorisable loops into u[16][64], copied out as rows of U's 16 planes (which lie P Q
       apart, often a multiple of 4 KiB: 16 direct write streams would share one L1 set) */
    T g[9 * 64], a[12 * 64], u[16 * 64];
    for (p = 0; p < P; p++)
        for (q0 = 0; q0 < Q; q0 += 64) {
            const int64_t nq = Q - q0 < 64 ? Q - q0 : 64;
            for (q = 0; q < nq; q++) {
                const T *k = flip ? w + ((q0 + q) * C + p) * 9 : w + (p * C + q0 + q) * 9;
                for (r = 0; r < 9; r++) g[r * 64 + q] = flip ? k[8 - r] : k[r];
            }
            for (r = 0; r < 3; r++) /* G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2 (of taps r, 3 + r, 6 + r) */
                for (q = 0; q < nq; q++) {
                    const T g0 = g[r * 64 + q], g1 = g[(3 + r) * 64 + q], g2 = g[(6 + r) * 64 + q];
                    a[r * 64 + q] = g0;
                    a[(3 + r) * 64 + q] = (T)0.5 * (g0 + g1 + g2);
                    a[(6 + r) * 64 + q] = (T)0.5 * (g0 - g1 + g2);
                    a[(9 + r) * 64 + q] = g2;
                }
            for (r = 0; r < 4; r++) /* (G g) G^T, row by row */
                for (q = 0; q < nq; q++) {
                    const T b0 = a[3 * r * 64 + q], b1 = a[(3 * r + 1) * 64 + q], b2 = a[(3 * r + 2) * 64 + q];
                    u[4 * r * 64 + q] = b0;
                    u[(4 * r + 1) * 64 + q] = (T)0.5 * (b0 + b1 + b2);
                    u[(4 * r + 2) * 64 + q] = (T)0.5 * (b0 - b1 + b2);
                    u[(4 * r + 3) * 64 + q] = b2;
                }
            for (r = 0; r < 16; r++)   /* a loop, not memcpy: rows this short pay memcpy's start-up */
                for (q = 0; q < nq; q++) U[(r * P + p) * Q + q0 + q] = u[r * 64 + q];
        }
    for (r = 0; r < 16; r++) /* as the GEMM's packed A: 16 blocks of [P rounded to mr, Q] */
        tn__gemm_packA_##SFX(P, Q, U + r * P * Q, Q, 1, kn->mr, Up + r * tn__gemm_roundup(P, kn->mr) * Q);
}

/* The transforms' inner loops, over the tiles of a block (restrict: they vectorise). */
static void tn__wino_bt_cols_##SFX(int64_t n, const T *TN__RESTRICT d0, const T *TN__RESTRICT d1,
                                   const T *TN__RESTRICT d2, const T *TN__RESTRICT d3, T *TN__RESTRICT e0,
                                   T *TN__RESTRICT e1, T *TN__RESTRICT e2, T *TN__RESTRICT e3)
{
    int64_t j;
    for (j = 0; j < n; j++) {
        const T a0 = d0[j], a1 = d1[j], a2 = d2[j], a3 = d3[j];
        e0[j] = a0 - a2; e1[j] = a1 + a2; e2[j] = a2 - a1; e3[j] = a1 - a3;
    }
}
static void tn__wino_bt_rows_##SFX(int64_t nt, int64_t cp, int64_t cr, int64_t pn, int64_t ps, const T *TN__RESTRICT ek,
                                   T *TN__RESTRICT v0, T *TN__RESTRICT v1, T *TN__RESTRICT v2, T *TN__RESTRICT v3)
{ /* tiles i < nt (at column 2i of ek) to columns c + i of the GEMM's packed B, c = cp pn + cr:
     column c in panel c / pn (panels ps apart) at c % pn */
    int64_t i, j;
    for (i = 0; i < nt; i += j, cp++, cr = 0) {
        const int64_t o = cp * ps + cr, n = TN__MIN(pn - cr, nt - i);
        const T *e = ek + 2 * i;
        for (j = 0; j < n; j++) {
            const T a0 = e[2 * j], a1 = e[2 * j + 1], a2 = e[2 * j + 2], a3 = e[2 * j + 3];
            v0[o + j] = a0 - a2; v1[o + j] = a1 + a2; v2[o + j] = a2 - a1; v3[o + j] = a1 - a3;
        }
    }
}
static void tn__wino_at_##SFX(int64_t nt, int64_t S, const T *TN__RESTRICT m, T bv, T *TN__RESTRICT y00,
                              T *TN__RESTRICT y01, T *TN__RESTRICT y10, T *TN__RESTRICT y11)
{
    int64_t i;
    for (i = 0; i < nt; i++) {
        const T r0 = m[i] + m[4 * S + i] + m[8 * S + i], u0 = m[4 * S + i] - m[8 * S + i] - m[12 * S + i];
        const T r1 = m[S + i] + m[5 * S + i] + m[9 * S + i], u1 = m[5 * S + i] - m[9 * S + i] - m[13 * S + i];
        const T r2 = m[2 * S + i] + m[6 * S + i] + m[10 * S + i], u2 = m[6 * S + i] - m[10 * S + i] - m[14 * S + i];
        const T r3 = m[3 * S + i] + m[7 * S + i] + m[11 * S + i], u3 = m[7 * S + i] - m[11 * S + i] - m[15 * S + i];
        y00[i] = r0 + r1 + r2 + bv; y01[i] = r1 - r2 - r3 + bv;
        y10[i] = u0 + u1 + u2 + bv; y11[i] = u1 - u2 - u3 + bv;
    }
}

/* The four outputs of tiles i < nt (tn__wino_at), then ReLU when relu (the epilogue's
   formula) and the 2x2 max pool of each tile, in the comparisons of max_pool2d's rows in
   their order (src/nn/pooling.c tn__pool22_fwd_f32), to y[i]: the bits of the ReLU pass
   then the pool. E: 4 nt of scratch. */
static void tn__wino_at_pool_##SFX(int64_t nt, int64_t S, const T *TN__RESTRICT m, T bv, T *TN__RESTRICT y, int relu, T *TN__RESTRICT E)
{
    int64_t i;
    tn__wino_at_##SFX(nt, S, m, bv, E, E + nt, E + 2 * nt, E + 3 * nt);
    if (relu)
        for (i = 0; i < 4 * nt; i++) E[i] = E[i] < 0 ? (T)0 : E[i];
    for (i = 0; i < nt; i++) {
        const T a = E[i], b = E[nt + i], c = E[2 * nt + i], d = E[3 * nt + i];
        T mx = ((b > a) | (b != b)) ? b : a;
        mx = ((c > mx) | (c != c)) ? c : mx;
        y[i] = ((d > mx) | (d != d)) ? d : mx;
    }
}
static void tn__wino_a_cols_##SFX(int64_t n, const T *TN__RESTRICT a, const T *TN__RESTRICT c, T *TN__RESTRICT f0,
                                  T *TN__RESTRICT f1, T *TN__RESTRICT f2, T *TN__RESTRICT f3)
{ /* A g for the rows a, c of 2x2 tiles of g */
    int64_t j;
    for (j = 0; j < n; j++) { f0[j] = a[j]; f1[j] = a[j] + c[j]; f2[j] = a[j] - c[j]; f3[j] = -c[j]; }
}
static void tn__wino_a_rows_##SFX(int64_t nt, const T *TN__RESTRICT fk, T *TN__RESTRICT y0, T *TN__RESTRICT y1,
                                  T *TN__RESTRICT y2, T *TN__RESTRICT y3)
{ /* (A g) A^T, tile i at column 2i */
    int64_t i;
    for (i = 0; i < nt; i++) {
        const T u = fk[2 * i], v = fk[2 * i + 1];
        y0[i] = u; y1[i] = u + v; y2[i] = u - v; y3[i] = -v;
    }
}

/* The rows of tiles, portable (tn__wino_in_row_f32_avx512 and its neighbours say what they
   compute); E: 4 (2 tw + 2) elements of scratch. */
static void tn__wino_in_row_##SFX(const T *const *d, int64_t j0, int64_t j1, int64_t tw, int64_t cp, int64_t cr, int64_t pn, int64_t ps,
                                  T *V, int64_t vx, T *E)
{
    const int64_t wp = 2 * tw + 2;
    T *e0 = E, *e1 = E + wp, *e2 = E + 2 * wp, *e3 = E + 3 * wp;
    int64_t j;
    int k;
    for (j = 0; j < j0; j++) e0[j] = e1[j] = e2[j] = e3[j] = (T)0;
    tn__wino_bt_cols_##SFX(j1 - j0, d[0] + j0, d[1] + j0, d[2] + j0, d[3] + j0, e0 + j0, e1 + j0, e2 + j0, e3 + j0);
    for (j = j1; j < wp; j++) e0[j] = e1[j] = e2[j] = e3[j] = (T)0;
    for (k = 0; k < 4; k++) { /* (B^T d) B: along the row, tile j at column 2j */
        T *v0 = V + 4 * k * vx;
        tn__wino_bt_rows_##SFX(tw, cp, cr, pn, ps, E + k * wp, v0, v0 + vx, v0 + 2 * vx, v0 + 3 * vx);
    }
}
static void tn__wino_out_row_##SFX(const T *a, const T *b, int64_t tw, T *yr, int64_t ow)
{
    int64_t j;
    (void)tw;
    for (j = 0; j < ow / 2; j++) { yr[2 * j] = a[j]; yr[2 * j + 1] = b[j]; }
    if (ow & 1) yr[ow - 1] = a[ow / 2];
}
static void tn__wino_gy_row_##SFX(const T *a, const T *b, int64_t j1, int64_t tw, T *Y, int64_t ys, T *E)
{
    const int64_t wp = 2 * tw + 2;
    T *f0 = E, *f1 = E + wp, *f2 = E + 2 * wp, *f3 = E + 3 * wp;
    int64_t j;
    int k;
    tn__wino_a_cols_##SFX(j1, a, b, f0, f1, f2, f3);
    for (j = j1; j < 2 * tw; j++) f0[j] = f1[j] = f2[j] = f3[j] = (T)0;
    for (k = 0; k < 4; k++) { /* (A gy) A^T: along the row, tile j at column 2j */
        T *y0 = Y + 4 * k * ys;
        tn__wino_a_rows_##SFX(tw, E + k * wp, y0, y0 + ys, y0 + 2 * ys, y0 + 3 * ys);
    }
}

/* V = B^T d B of the input tiles of tile rows [r0, r0 + nrow) of x [N, Q, H, W] (contiguous,
   padded by ph, pw; th rows of tw tiles per image): element (xi, q, tile i) at
   V + xi * vx + q * vq + (i / pn) * ps + i % pn (the GEMM's packed panels, or rows), tile i
   of the block being tile i % tw of its row i / tw. E: scratch for a row. */
static void tn__wino_input_##SFX(const T *x, int64_t Q, int64_t H, int64_t W, int64_t ph, int64_t pw,
                                 int64_t th, int64_t tw, int64_t r0, int64_t nrow, const T *zero,
                                 T *E, T *V, int64_t vx, int64_t vq, int64_t pn, int64_t ps)
{
    const int64_t wp = 2 * tw + 2, j0 = TN__MIN(pw, wp), j1 = TN__MAX(j0, TN__MIN(pw + W, wp));
    void (*row)(const T *const *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, T *, int64_t, T *) = tn__wino_in_row_##SFX;
    int64_t q, lr;
    TN__WINO_PICK512_##SFX(row, tn__wino_in_row_##SFX);
    for (q = 0; q < Q; q++) { /* channel by channel: the rows of V written stay in L1 */
        int64_t n = r0 / th, ty = r0 % th, cp = 0, cr = 0; /* tile row r0 + lr: row ty of image n; its tiles from column cp pn + cr */
        for (lr = 0; lr < nrow; lr++) {
            const T *d[4];
            int k;
            for (k = 0; k < 4; k++) {
                const int64_t iy = 2 * ty - ph + k;
                d[k] = (iy >= 0 && iy < H ? x + ((n * Q + q) * H + iy) * W : zero) - pw;
            }
            row(d, j0, j1, tw, cp, cr, pn, ps, V + q * vq, vx, E);
            if (++ty == th) { ty = 0; n++; }
            for (cr += tw; cr >= pn; cr -= pn) cp++;
        }
    }
}
/* y [N, P, oh, ow] (contiguous) = the 3x3 convolution of x [N, Q, H, W] (contiguous)
   padded by ph, pw, + b[p] when b, with Up from tn__wino_weights. Each thread takes a share
   of the batch's rows of 2x2 output tiles and goes through it in blocks of br rows: the
   input transform straight into the GEMM's packed B (V: 16 x [Q, tb] in panels of nr
   tiles), the 16 products M[xi] = U[xi] V[xi] [P, tb] by the GEMM's macro kernel, the
   output transform into y. Per thread buf holds 16 Q tbp + 16 P tb + 8 tb + 2 elements
   (tb = br t1 >= the br tw tiles of a block, tbp = tb rounded up to nr), and zero W zeros. Every tile is computed alike
   in whichever block it falls: the same result for any thread count. */
/* the arguments of the threaded Winograd loops (the convolution or the weight gradient) */
typedef struct {
    const T *x, *gy, *Up, *b, *zero; T *y, *gw, *buf; const tn__gemm_kern_##SFX *kn;
    int64_t N, Q, H, W, ph, pw, P, oh, ow, br; int failed, pool;
} tn__wino_args_##SFX;
/* chunk t of nthr: a share of the tile rows, with buffer t */
static void tn__wino_conv_part_##SFX(void *args, int t, int nthr) {
    tn__wino_args_##SFX *A = (tn__wino_args_##SFX *)args;
    const T *x = A->x, *Up = A->Up, *b = A->b, *zero = A->zero;
    T *y = A->y, *buf = A->buf;
    const tn__gemm_kern_##SFX *kn = A->kn;
    const int64_t N = A->N, Q = A->Q, H = A->H, W = A->W, ph = A->ph, pw = A->pw, P = A->P, oh = A->oh, ow = A->ow, br = A->br;
    const int64_t th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1, R = N * th;
    const int64_t tb = br * t1, tbp = tn__gemm_roundup(tb, kn->nr), nr = kn->nr;
    const int64_t vx = Q * tbp + 16, S = P * tb + 16; /* the 16 V and M a line off 4 KiB multiples: no set conflicts */
    const int64_t per = 16 * vx + 16 * S + 8 * tb + 2, ups = tn__gemm_roundup(P, kn->mr) * Q;
    {
        T *V = buf + t * per, *M = V + 16 * vx, *E = M + 16 * S, *O4 = E; /* E is done by then */
        const int64_t r1 = tn__split_at(R, t + 1, nthr);
        int64_t r0, lr, p, xi;
        void (*out_row)(const T *, const T *, int64_t, T *, int64_t) = tn__wino_out_row_##SFX;
        void (*at)(int64_t, int64_t, const T *, T, T *, T *, T *, T *) = tn__wino_at_##SFX;
        void (*at_pool)(int64_t, int64_t, const T *, T, T *, int, T *) = tn__wino_at_pool_##SFX;
        TN__WINO_PICK_##SFX(out_row, tn__wino_out_row_##SFX);
        TN__WINO_PICK_##SFX(at, tn__wino_at_##SFX);
        TN__WINO_PICK_##SFX(at_pool, tn__wino_at_pool_##SFX);
        for (r0 = tn__split_at(R, t, nthr); r0 < r1; r0 += br) {
            const int64_t nrow = TN__MIN(br, r1 - r0), nt = nrow * (t1 - 1);
            tn__wino_input_##SFX(x, Q, H, W, ph, pw, th, t1 - 1, r0, nrow, zero, E, V, vx, nr, nr, Q * nr);
            for (xi = 0; xi < 16; xi++)
                tn__gemm_macro_##SFX(kn, P, nt, Q, (T)1, Up + xi * ups, NULL, 0, 0, V + xi * vx, NULL, 0, (T)0, M + xi * S, tb, 1, NULL, 0, 0, 1, 1);
            for (p = 0; p < P; p++) { /* A^T m A: four outputs per tile, then into y */
                T *y00 = O4, *y01 = O4 + tb, *y10 = O4 + 2 * tb, *y11 = O4 + 3 * tb;
                if (A->pool) { /* the graph replay's 2x2 max pool: a tile is a window; y [N, P, oh / 2, ow / 2] */
                    at_pool(nt, S, M + p * tb, b ? b[p] : (T)0, y00 + 4 * tb, A->pool == 2, y00);
                    for (lr = 0; lr < nrow; lr++) {
                        const int64_t n = (r0 + lr) / th, ty = (r0 + lr) % th;
                        if (ty < oh / 2) memcpy(y + ((n * P + p) * (oh / 2) + ty) * (ow / 2), y00 + 4 * tb + lr * (t1 - 1), (size_t)(ow / 2) * sizeof(T));
                    }
                    continue;
                }
                at(nt, S, M + p * tb, b ? b[p] : (T)0, y00, y01, y10, y11);
                for (lr = 0; lr < nrow; lr++) {
                    const int64_t n = (r0 + lr) / th, ty = (r0 + lr) % th, o = lr * (t1 - 1);
                    T *yr = y + ((n * P + p) * oh + 2 * ty) * ow;
                    out_row(y00 + o, y01 + o, t1 - 1, yr, ow);
                    if (2 * ty + 1 < oh) out_row(y10 + o, y11 + o, t1 - 1, yr + ow, ow);
                }
            }
        }
    }
}
static void tn__wino_conv_##SFX(const T *x, int64_t N, int64_t Q, int64_t H, int64_t W,
                                int64_t ph, int64_t pw, const tn__gemm_kern_##SFX *kn,
                                const T *Up, int64_t P, const T *b, T *y, int64_t oh, int64_t ow,
                                int64_t br, T *buf, const T *zero, int nthr, int pool)
{
    tn__wino_args_##SFX A = {x, NULL, Up, b, zero, y, NULL, buf, kn, N, Q, H, W, ph, pw, P, oh, ow, br, 0, pool};
    tn__parallel(nthr, tn__wino_conv_part_##SFX, &A);
}

/* The weight gradient gw [P, Q, 3, 3] (contiguous) of y = conv3x3(x, w) padded by ph, pw,
   from gy [N, P, oh, ow] and x [N, Q, H, W] (both contiguous): with the forward's tiles,
   gw = G^T [sum over tiles of (A gy A^T) . (B^T d B)] G (the forward's bilinear form turned
   around), so per block the 16 products Z[xi] += Y[xi] V[xi]^T [P, Q] over the block's
   tiles (Y: 16 x [P, tb], V: 16 x [Q, tb], rows). Each thread sums its own Z (buf: per
   thread 16 Q tb + 16 P tb + 8 tb + 2 + 16 P Q elements); the threads' sums are added in
   thread order: the same bits for a given thread count. */
/* chunk t of nthr: its share of the tile rows into its own sums Z */
static void tn__wino_wgrad_part_##SFX(void *args, int t, int nthr) {
    tn__wino_args_##SFX *A = (tn__wino_args_##SFX *)args;
    const T *x = A->x, *gy = A->gy, *zero = A->zero;
    T *buf = A->buf;
    const int64_t N = A->N, Q = A->Q, H = A->H, W = A->W, ph = A->ph, pw = A->pw, P = A->P, oh = A->oh, ow = A->ow, br = A->br;
    const int64_t th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1, R = N * th, tb = br * t1;
    const int64_t vx = Q * tb + 16, ys = P * tb + 16, zo = 16 * (vx + ys) + 8 * tb + 2, per = zo + 16 * P * Q; /* as in conv */
    {
        T *V = buf + t * per, *Y = V + 16 * vx, *E = Y + 16 * ys, *Z = buf + t * per + zo;
        const int64_t r1 = tn__split_at(R, t + 1, nthr);
        int64_t r0, lr, pp, xi;
        void (*gy_row)(const T *, const T *, int64_t, int64_t, T *, int64_t, T *) = tn__wino_gy_row_##SFX;
        TN__WINO_PICK512_##SFX(gy_row, tn__wino_gy_row_##SFX);
        for (r0 = tn__split_at(R, t, nthr); r0 < r1; r0 += br) {
            const int64_t nrow = TN__MIN(br, r1 - r0), nt = nrow * (t1 - 1);
            tn__wino_input_##SFX(x, Q, H, W, ph, pw, th, t1 - 1, r0, nrow, zero, E, V, vx, tb, tb, 0);
            for (pp = 0; pp < P; pp++) /* Y[.][pp] = A gy A^T of the block's 2x2 tiles of gy */
                for (lr = 0; lr < nrow; lr++) {
                    const int64_t n = (r0 + lr) / th, ty = (r0 + lr) % th;
                    const T *a = gy + ((n * P + pp) * oh + 2 * ty) * ow, *c = 2 * ty + 1 < oh ? a + ow : zero;
                    gy_row(a, c, ow, t1 - 1, Y + pp * tb + lr * (t1 - 1), ys, E);
                }
            for (xi = 0; xi < 16; xi++)
                if (tn__gemm_##SFX(P, Q, nt, (T)1, Y + xi * ys, tb, 1, V + xi * vx, 1, tb, (T)1, Z + xi * P * Q, Q, 1))
                    TN__STORE_RELAXED(&A->failed, 1);
        }
    }
}
static int tn__wino_wgrad_##SFX(const T *x, const T *gy, int64_t N, int64_t Q, int64_t H, int64_t W,
                                int64_t ph, int64_t pw, int64_t P, int64_t oh, int64_t ow, T *gw,
                                int64_t br, T *buf, const T *zero, int nthr)
{
    const int64_t t1 = (ow + 1) / 2 + 1, tb = br * t1;
    const int64_t vx = Q * tb + 16, ys = P * tb + 16, zo = 16 * (vx + ys) + 8 * tb + 2, per = zo + 16 * P * Q; /* as in conv */
    int64_t p, q;
    int t;
    tn__wino_args_##SFX A = {x, gy, NULL, NULL, zero, NULL, gw, buf, NULL, N, Q, H, W, ph, pw, P, oh, ow, br, 0, 0};
    tn__parallel(nthr, tn__wino_wgrad_part_##SFX, &A);
    const int failed = A.failed;
    for (t = 1; t < nthr; t++) { /* the threads' sums, in thread order */
        const T *zt = buf + t * per + zo;
        T *z0 = buf + zo;
        for (p = 0; p < 16 * P * Q; p++) z0[p] += zt[p];
    }
    for (p = 0; p < P; p++) /* G^T z G: 4x4 -> 3x3 */
        for (q = 0; q < Q; q++) {
            const T *z = buf + zo + p * Q + q;
            T s[12], *o = gw + (p * Q + q) * 9;
            int c;
            for (c = 0; c < 4; c++) { /* G^T z: along the columns */
                const T z0 = z[c * P * Q], z1 = z[(4 + c) * P * Q], z2 = z[(8 + c) * P * Q], z3 = z[(12 + c) * P * Q];
                s[c] = z0 + (T)0.5 * (z1 + z2); s[4 + c] = (T)0.5 * (z1 - z2); s[8 + c] = (T)0.5 * (z1 + z2) + z3;
            }
            for (c = 0; c < 3; c++) { /* (G^T z) G: along the rows */
                const T *r = s + 4 * c;
                o[3 * c] = r[0] + (T)0.5 * (r[1] + r[2]);
                o[3 * c + 1] = (T)0.5 * (r[1] - r[2]);
                o[3 * c + 2] = (T)0.5 * (r[1] + r[2]) + r[3];
            }
        }
    return failed ? -1 : 0;
}
/* @end TN__WINO_DEFINE */

TN__WINO_DEFINE(float, f32)
TN__WINO_DEFINE(double, f64)
/* Tile rows per block (of R): a block's transforms (16 (P + Q) values per tile, t1 tiles a
   row) within TN_CONV_BLOCK_BYTES; where the GEMM takes the block's t1 - 1 tiles a row in
   panels of nr columns (nr > 1), the count between half and all of that whose last panel
   is fullest (at 14x14, 18 rows: 126 tiles in 128 columns, not 147 in 160). */
static int64_t tn__wino_block_rows(int64_t R, int64_t PQ, int64_t t1, size_t es, int64_t nr) {
    const int64_t most = tn__block_units((size_t)(16 * PQ * t1) * es, R);
    int64_t best = most;
    for (int64_t br = (most + 1) / 2; nr > 1 && br < most; br++)   /* padded columns per tile: smaller is better */
        if (tn__gemm_roundup(br * (t1 - 1), nr) * best < tn__gemm_roundup(best * (t1 - 1), nr) * br) best = br;
    return best;
}
static bool tn__conv_wino_ok(const tn_tensor *x, const tn_tensor *w, const int64_t *g, int64_t G, bool input_grad) {
    return tn__conv_fast_paths && G == 1 && g[0] == 3 && g[1] == 3 && g[2] == 1 && g[3] == 1 && g[6] == 1 && g[7] == 1 &&
           (x->dtype == TN_F32 || x->dtype == TN_F64) && w->shape[0] >= 8 && w->shape[1] >= 8 && (!input_grad || (g[4] <= 2 && g[5] <= 2));
}
/* A kernel's transform packed ahead (the graph replay's constant convolution weights,
   src/jit/trace.c): the packed half of U for w (its address and sizes) and the GEMM's rows
   per panel. This thread's next forward Winograd convolutions with that w read it instead
   of transforming w again: the same values. P NULL: none. */
typedef struct { const void *w, *P; int64_t O, C, mr; } tn__wino_pre;
static TN__TLS tn__wino_pre tn__wino_pre_on;
/* y (new, contiguous) = conv(x, w) + b (flip = 0: y [N, O, oh, ow]), or the input gradient
   y [N, C, H, W] of x = gy [N, O, oh, ow] (flip = 1), by Winograd; w, b contiguous. flip 2, 3:
   y [N, O, oh / 2, ow / 2] = the 2x2, stride-2 max pool of the forward's (3: after ReLU). */
static int tn__conv_wino_cpu(tn_tensor *y, tn_tensor *x, const tn_tensor *w, const tn_tensor *b, const int64_t *g, int flip) {
    const int pool = flip >= 2 ? flip - 1 : 0;
    flip = flip == 1;
    const int64_t N = x->shape[0], Q = x->shape[1], H = x->shape[2], W = x->shape[3], P = y->shape[1], oh = pool ? g[8] : y->shape[2], ow = pool ? g[9] : y->shape[3];
    const int64_t ph = flip ? 2 - g[4] : g[4], pw = flip ? 2 - g[5] : g[5], th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1;
    const bool f32 = x->dtype == TN_F32;
    const size_t es = tn_dtype_size(x->dtype);
    tn__gemm_kern_f32 k32 = tn__gemm_kern_for_f32(P);   /* the macro kernel's panels: P rows, tiles as columns */
    tn__gemm_kern_f64 k64 = tn__gemm_kern_for_f64(P);
    const int64_t mr = f32 ? k32.mr : k64.mr, nr = f32 ? k32.nr : k64.nr;
    if (tn_numel(y) == 0) return 0;
    const int64_t br = tn__wino_block_rows(N * th, P + Q, t1, es, nr), tb = br * t1;
    const int64_t vx = Q * tn__gemm_roundup(tb, nr) + 16, per = 16 * vx + 16 * (P * tb + 16) + 8 * tb + 2;   /* as tn__wino_conv */
    const int nthr = tn__par_threads(tn__mul_sat(tn__mul_sat(N * oh * ow, P), Q), N * th);   /* N oh ow: y's numel */
    tn_tensor *xc = tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    /* workspace sizes through the checked product: too large is tn__new's error, never a short buffer */
    const tn__wino_pre *wpk = &tn__wino_pre_on;
    const bool pre = !flip && wpk->P && wpk->w == tn_data_ptr(w) && wpk->O == P && wpk->C == Q && wpk->mr == mr;
    tn_tensor *U = pre ? NULL : tn__new(x->dtype, TN_CPU, TN_SHAPE(tn__add_sat(tn__mul_sat(16 * P, Q), tn__mul_sat(16 * tn__gemm_roundup(P, mr), Q))));
    tn_tensor *buf = tn__new(x->dtype, TN_CPU, TN_SHAPE(tn__add_sat(tn__mul_sat(nthr, per), W)));
    int failed = !xc || (!pre && !U) || !buf;
    if (!failed) {
        char *bp = (char *)tn_data_ptr(buf), *up = pre ? NULL : (char *)tn_data_ptr(U), *zero = bp + (size_t)(nthr * per) * es;
        for (int t = 0; t < nthr; t++) {   /* per thread V (its packed columns past the last tile) and E; M is written first */
            memset(bp + (size_t)(t * per) * es, 0, (size_t)(16 * vx) * es);
            memset(bp + (size_t)(t * per + per - (8 * tb + 2)) * es, 0, (size_t)(8 * tb + 2) * es);
        }
        memset(zero, 0, (size_t)W * es);
        if (f32) {
            if (!pre) tn__wino_weights_f32((const float *)tn_data_ptr(w), w->shape[0], w->shape[1], flip, (float *)up, &k32, (float *)up + 16 * P * Q);
            tn__wino_conv_f32((const float *)tn_data_ptr(xc), N, Q, H, W, ph, pw, &k32, pre ? (const float *)wpk->P : (const float *)up + 16 * P * Q, P,
                              b ? (const float *)tn_data_ptr(b) : NULL, (float *)tn_data_ptr(y), oh, ow, br, (float *)bp, (const float *)zero, nthr, pool);
        } else {
            if (!pre) tn__wino_weights_f64((const double *)tn_data_ptr(w), w->shape[0], w->shape[1], flip, (double *)up, &k64, (double *)up + 16 * P * Q);
            tn__wino_conv_f64((const double *)tn_data_ptr(xc), N, Q, H, W, ph, pw, &k64, pre ? (const double *)wpk->P : (const double *)up + 16 * P * Q, P,
                              b ? (const double *)tn_data_ptr(b) : NULL, (double *)tn_data_ptr(y), oh, ow, br, (double *)bp, (const double *)zero, nthr, pool);
        }
    }
    tn_release(xc); tn_release(U); tn_release(buf);
    return failed ? TN__FAIL_INT(flip ? "conv2d backward: out of memory" : "conv2d: out of memory") : 0;
}
/* The forward transform of a contiguous float w [O, C, 3, 3] (O, C >= 8) on the CPU packed
   ahead: the tensor holding it, *pre describing it; NULL (no error) for other weights. */
static tn_tensor *tn__wino_prepack(const tn_tensor *w, tn__wino_pre *pre) {
    if (!w || w->ndim != 4 || w->device != TN_CPU || (w->dtype != TN_F32 && w->dtype != TN_F64) || w->shape[2] != 3 || w->shape[3] != 3 ||
        w->shape[0] < 8 || w->shape[1] < 8 || !tn_is_contiguous(w))
        return NULL;
    const int64_t P = w->shape[0], Q = w->shape[1];
    tn__gemm_kern_f32 k32 = tn__gemm_kern_for_f32(P);
    tn__gemm_kern_f64 k64 = tn__gemm_kern_for_f64(P);
    const int64_t mr = w->dtype == TN_F32 ? k32.mr : k64.mr;
    tn_tensor *U = tn__new(w->dtype, TN_CPU, TN_SHAPE(tn__add_sat(tn__mul_sat(16 * P, Q), tn__mul_sat(16 * tn__gemm_roundup(P, mr), Q))));
    if (!U) return NULL;
    char *up = (char *)tn_data_ptr(U);
    const size_t es = tn_dtype_size(w->dtype);
    if (w->dtype == TN_F32) tn__wino_weights_f32((const float *)tn_data_ptr(w), P, Q, 0, (float *)up, &k32, (float *)up + 16 * P * Q);
    else tn__wino_weights_f64((const double *)tn_data_ptr(w), P, Q, 0, (double *)up, &k64, (double *)up + 16 * P * Q);
    pre->w = tn_data_ptr(w); pre->P = up + (size_t)(16 * P * Q) * es; pre->O = P; pre->C = Q; pre->mr = mr;
    return U;
}
/* gw [O, C, 3, 3] (new, contiguous) = the weight gradient of y = conv(x, w) from gy, by Winograd. */
static int tn__conv_wino_wgrad_cpu(tn_tensor *gw, tn_tensor *x, tn_tensor *gy, const int64_t *g) {
    const int64_t N = x->shape[0], Q = x->shape[1], H = x->shape[2], W = x->shape[3], P = gy->shape[1], oh = gy->shape[2], ow = gy->shape[3];
    const int64_t th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1;
    const size_t es = tn_dtype_size(x->dtype);
    const int64_t br = tn__wino_block_rows(N * th, P + Q, t1, es, 1), tb = br * t1, zo = 16 * (Q + P) * tb + 512 + 8 * tb + 2, per = zo + 16 * P * Q;   /* as tn__wino_wgrad */
    const int nthr = tn__par_threads(tn__mul_sat(tn__mul_sat(N * oh * ow, P), Q), N * th);
    if (tn_numel(gy) == 0 || tn_numel(x) == 0) return tn__backend(TN_CPU)->fill(gw, 0);
    tn_tensor *xc = tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    tn_tensor *gyc = tn_is_contiguous(gy) ? tn_retain(gy) : tn__copy_as(gy, gy->dtype, TN_CPU);
    tn_tensor *buf = tn__new(x->dtype, TN_CPU, TN_SHAPE(tn__add_sat(tn__mul_sat(nthr, per), W + ow)));
    int failed = !xc || !gyc || !buf;
    if (!failed) {
        char *bp = (char *)tn_data_ptr(buf), *zero = bp + (size_t)(nthr * per) * es;
        for (int t = 0; t < nthr; t++)   /* per thread E and the sums Z; V and Y are written first */
            memset(bp + (size_t)(t * per + zo - (8 * tb + 2)) * es, 0, (size_t)(8 * tb + 2 + 16 * P * Q) * es);
        memset(zero, 0, (size_t)(W + ow) * es);
        failed = x->dtype == TN_F32
                     ? tn__wino_wgrad_f32((const float *)tn_data_ptr(xc), (const float *)tn_data_ptr(gyc), N, Q, H, W, g[4], g[5], P, oh, ow,
                                          (float *)tn_data_ptr(gw), br, (float *)bp, (const float *)zero, nthr)
                     : tn__wino_wgrad_f64((const double *)tn_data_ptr(xc), (const double *)tn_data_ptr(gyc), N, Q, H, W, g[4], g[5], P, oh, ow,
                                          (double *)tn_data_ptr(gw), br, (double *)bp, (const double *)zero, nthr);
    }
    tn_release(xc); tn_release(gyc); tn_release(buf);
    return failed ? TN__FAIL_INT("conv2d backward: out of memory") : 0;
}
/* the arguments of a threaded im2col convolution: the operands, the block geometry, the per-thread buffers */
typedef struct { tn_tensor *y, *x, *w, *b; const int64_t *g; int64_t G; tn_tensor *buf, *ybuf; bool direct; int64_t R, IB, LB; int act, failed; } tn__conv_fwd_args;
/* The activation act (TN__EPI_*) over n values at p (float or double by es), in place: the GEMM epilogue's loop. */
static void tn__conv_act(int act, void *p, int64_t n, size_t es) {
    tn__gemm_epi ep = {NULL, 0, 1, 0, act};
    if (!act || n <= 0) return;
    if (es == 4) tn__gemm_epi_f32(&ep, 0, 1, (float *)p, 1, n, n, 1, 0, 0);
    else tn__gemm_epi_f64(&ep, 0, 1, (double *)p, 1, n, n, 1, 0, 0);
}
/* Cm = A @ B (3-d matrix views on the CPU) + the per-row bias (NULL: none), then act: the bias
   and the activation in the GEMM's epilogue (the bits of filling Cm with the bias first). */
static int tn__conv_gemm(tn_tensor *Cm, tn_tensor *A, tn_tensor *B, const void *bias, int act) {
    tn__gemm_epi ep = {bias, 1, 1, 1, act};
    const int64_t M = Cm->shape[1], N = Cm->shape[2], K = A->shape[2];
    return Cm->dtype == TN_F32
        ? tn__gemm_ep_f32(M, N, K, 1.0f, (const float *)tn_data_ptr(A), A->strides[1], A->strides[2], (const float *)tn_data_ptr(B), B->strides[1], B->strides[2],
                          0.0f, (float *)tn_data_ptr(Cm), Cm->strides[1], Cm->strides[2], &ep)
        : tn__gemm_ep_f64(M, N, K, 1.0, (const double *)tn_data_ptr(A), A->strides[1], A->strides[2], (const double *)tn_data_ptr(B), B->strides[1], B->strides[2],
                          0.0, (double *)tn_data_ptr(Cm), Cm->strides[1], Cm->strides[2], &ep);
}
#ifdef TENSOR_CBLAS
#define TN__CONV_EPI 0   /* the backend's matmul (BLAS) has no epilogue: the bias filled first */
#else
#define TN__CONV_EPI 1
#endif
/* chunk t of nthr: its share of the images, with buffer t */
static void tn__conv_forward_part(void *args, int t, int nthr) {
    tn__conv_fwd_args *a_ = (tn__conv_fwd_args *)args;
    tn_tensor *y = a_->y, *x = a_->x, *w = a_->w, *buf = a_->buf, *ybuf = a_->ybuf;
    const int64_t *g = a_->g, G = a_->G, R = a_->R, IB = a_->IB, LB = a_->LB;
    const bool direct = a_->direct;
    const int act = a_->act;
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], K = C * g[0] * g[1], Kg = K / G, Og = O / G, Cg = C / G, L = g[8] * g[9];
    const size_t es = tn_dtype_size(x->dtype);
    const tn_backend *be = tn__backend(TN_CPU);
    const char *bp = a_->b ? (const char *)tn_data_ptr(a_->b) : NULL;
    char *yp = (char *)tn_data_ptr(y);
    {
    {
        const int64_t n1 = tn__split_at(N, t + 1, nthr);
        for (int64_t n = tn__split_at(N, t, nthr); n < n1 && IB > 1; n += IB) {   /* several whole images per block */
            const int64_t ni = TN__MIN(IB, n1 - n), Lc = ni * L;
            const int64_t cb = buf->offset + t * K * LB, yb = ybuf->offset + t * O * LB;
            for (int64_t i = 0; i < ni; i++) {
                tn_tensor img = tn__image_view(x, n + i), cols = tn__mat_view(buf, cb + i * L, K, L, Lc, 1);
                if (be->im2col(0, &cols, &img, g)) TN__STORE_RELAXED(&a_->failed, 1);
            }
            for (int64_t gi = 0; gi < G; gi++) {
                tn_tensor A = tn__mat_view(w, w->offset + gi * Og * Kg, Og, Kg, Kg, 1), B = tn__mat_view(buf, cb + gi * Kg * Lc, Kg, Lc, Lc, 1);
                tn_tensor Cm = tn__mat_view(ybuf, yb + gi * Og * Lc, Og, Lc, Lc, 1);
                if (be->matmul(&Cm, &A, &B, 1, 0)) TN__STORE_RELAXED(&a_->failed, 1);
            }
            for (int64_t i = 0; i < ni; i++) for (int64_t o = 0; o < O; o++) {   /* [O, ni*L] -> y[n + i], + bias */
                if (es == 4) {
                    const float *src = (const float *)tn_data_ptr(ybuf) + t * O * LB + o * Lc + i * L, v = bp ? ((const float *)bp)[o] : 0.0f;
                    float *dst = (float *)yp + ((n + i) * O + o) * L;
                    for (int64_t l = 0; l < L; l++) dst[l] = src[l] + v;
                    tn__conv_act(act, dst, L, es);
                } else {
                    const double *src = (const double *)tn_data_ptr(ybuf) + t * O * LB + o * Lc + i * L, v = bp ? ((const double *)bp)[o] : 0.0;
                    double *dst = (double *)yp + ((n + i) * O + o) * L;
                    for (int64_t l = 0; l < L; l++) dst[l] = src[l] + v;
                    tn__conv_act(act, dst, L, es);
                }
            }
        }
        for (int64_t n = tn__split_at(N, t, nthr); n < n1 && IB == 1; n++) {   /* one image, in blocks of rows */
            tn_tensor img = tn__image_view(x, n);
            char *yn = yp + (size_t)(n * O * L) * es;
            for (int64_t o = 0; bp && !TN__CONV_EPI && o < O; o++) {   /* the bias first, then the GEMMs add to it */
                if (es == 4) { float v = ((const float *)bp)[o], *r = (float *)yn + o * L; for (int64_t l = 0; l < L; l++) r[l] = v; }
                else { double v = ((const double *)bp)[o], *r = (double *)yn + o * L; for (int64_t l = 0; l < L; l++) r[l] = v; }
            }
            for (int64_t y0 = 0; y0 < g[8]; y0 += R) {
                const int64_t rows = TN__MIN(R, g[8] - y0), Lc = rows * g[9];
                int64_t gb[10];
                tn__conv_block_geom(g, y0, rows, gb);
                tn_tensor cols = direct ? img : tn__mat_view(buf, buf->offset + t * K * LB, K, Lc, Lc, 1);
                if (!direct && be->im2col(0, &cols, &img, gb)) { TN__STORE_RELAXED(&a_->failed, 1); break; }
                for (int64_t gi = 0; gi < G; gi++) {
                    tn_tensor A = tn__mat_view(w, w->offset + gi * Og * Kg, Og, Kg, Kg, 1);
                    tn_tensor B = direct ? tn__mat_view(x, img.offset + gi * Cg * x->strides[1], Cg, L, x->strides[1], x->strides[3])
                                         : tn__mat_view(buf, cols.offset + gi * Kg * Lc, Kg, Lc, Lc, 1);
                    tn_tensor Cm = tn__mat_view(y, y->offset + n * O * L + gi * Og * L + y0 * g[9], Og, Lc, L, 1);
                    if (TN__CONV_EPI ? tn__conv_gemm(&Cm, &A, &B, bp ? bp + (size_t)(gi * Og) * es : NULL, act) : be->matmul(&Cm, &A, &B, 1, bp ? 1 : 0))
                        TN__STORE_RELAXED(&a_->failed, 1);
                }
            }
            if (!TN__CONV_EPI) tn__conv_act(act, yn, O * L, es);
        }
    }
    }
}
/* y [N, O, oh, ow] (new, contiguous) = act(conv(x [N, C, H, W], w [O, C/G, kh, kw] contiguous) + b) (b contiguous or NULL,
   act TN__EPI_*: in the im2col GEMM's epilogue, after the special paths a pass over y). */
static int tn__conv_forward_cpu_act(tn_tensor *y, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *g, int64_t G, int act);
static int tn__conv_forward_cpu(tn_tensor *y, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *g, int64_t G) {
    return tn__conv_forward_cpu_act(y, x, w, b, g, G, TN__EPI_NONE);
}
static int tn__conv_forward_cpu_act(tn_tensor *y, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *g, int64_t G, int act) {
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], K = C * g[0] * g[1], L = g[8] * g[9];
    const bool direct = tn__conv_direct(x, g);
    const size_t es = tn_dtype_size(x->dtype);
    const int64_t R = direct ? g[8] : tn__conv_block_rows(K, g, es, 1), IB = tn__conv_block_images(K, g, es, 1, R, direct);
    const int64_t LB = IB > 1 ? IB * L : R * g[9];   /* columns of a block */
    int special = tn__conv_smallk_ok(x, g, G) ? 1 : tn__conv_wino_ok(x, w, g, G, false) ? 2 : tn__conv_dw_ok(x, G) ? 3 : 0;
    if (special) {
        const int rc = special == 1 ? tn__conv_smallk_cpu(0, x, w, b, y, g) : special == 2 ? tn__conv_wino_cpu(y, x, w, b, g, 0) : tn__conv_dw_cpu(0, x, w, b, y, g);
        if (rc == 0) tn__conv_act(act, tn_data_ptr(y), tn_numel(y), es);
        return rc;
    }
    const int nthr = tn__par_threads(tn__mul_sat(tn__mul_sat(N, K), L), N);
    tn_tensor *buf = direct ? NULL : tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, K, LB));
    tn_tensor *ybuf = IB > 1 ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, O, LB)) : NULL;   /* [O, images*L]: then into y */
    int failed = (!direct && !buf) || (IB > 1 && !ybuf);
    if (!failed) {
        tn__conv_fwd_args a = {y, x, w, b, g, G, buf, ybuf, direct, R, IB, LB, act, 0};
        tn__parallel(nthr, tn__conv_forward_part, &a);
        failed = a.failed;
    }
    tn_release(buf); tn_release(ybuf);
    return failed ? TN__FAIL_INT("conv2d: out of memory") : 0;
}
/* The graph replay's conv2d, activation act and 2x2, stride-2 max pool in one pass (src/jit/trace.c):
   where the convolution takes the small-K or the Winograd path (float, no padding of the
   pool, act none or ReLU, a result of at least 2x2), each window pooled while its values
   are in L1 (the full result is neither written nor read back, nor the ReLU's pass). */
static bool tn__conv_pool_ok(const tn_tensor *x, const tn_tensor *w, const int64_t *g, int64_t G, int act) {
    return (act == TN__EPI_NONE || act == TN__EPI_RELU) && g[8] >= 2 && g[9] >= 2 && tn_numel(x) > 0 && w->shape[0] > 0 &&
           (tn__conv_smallk_ok(x, g, G) || tn__conv_wino_ok(x, w, g, G, false));
}
/* y [N, O, oh / 2, ow / 2] (new, contiguous) = the 2x2 max pool of act(conv(x, w) + b), w and b contiguous; tn__conv_pool_ok. */
static int tn__conv_forward_pool_cpu(tn_tensor *y, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *g, int64_t G, int act) {
    const int relu = act == TN__EPI_RELU;
    return tn__conv_smallk_ok(x, g, G) ? tn__conv_smallk_cpu(3 + relu, x, w, b, y, g) : tn__conv_wino_cpu(y, x, w, b, g, 2 + relu);
}
