/* Convolutions with few products per output (K = C kh kw <= 27: first layers on 1- or
   3-channel images), stride 1, undilated, ungrouped, float32, where the CPU has AVX-512 (or
   AVX2 and FMA: the same fused multiply-adds in the same order per output and per lane of
   the weight gradient's 16 sums, so the same bits as with AVX-512):
   im2col + GEMM spends its time copying for so short a K (conv 1 -> 32 at 28x28 ran at a
   third of the GEMM's speed). Directly instead, image by image: the image copied into a
   zero-padded buffer (so every shifted load is a plain load), 16 outputs of a row a
   vector, the K shifted vectors loaded once and shared by every output channel. The
   weight gradient sums per thread in 16 lanes and adds up in thread then lane order (the
   same bits for a given thread count). The input gradient keeps the im2col path. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* 8-lane helpers of the AVX2 rows (here, in the first of the parts that use them: the small-K
   loops, the Winograd and the max pool rows). Lanes [from, to) of a vector to or from memory
   without touching the rest: AMD's Zen 1-3 run a masked store (vmaskmovps) as microcode, tens
   of cycles, so whole vectors go by plain loads and stores and only the ragged ends of rows
   by a masked load or by 4-, 2- and 1-lane stores. */
#define TN__R8 __attribute__((target("avx2")))
TN__R8 static inline __m256i tn__r8_lanes(int64_t from, int64_t to) {   /* the mask of lanes [from, to), clamped */
    const __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    from = TN__MAX(-1, TN__MIN(8, from)); to = TN__MAX(-1, TN__MIN(8, to));
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)from), i), _mm256_cmpgt_epi32(_mm256_set1_epi32((int)to), i));
}
/* p[l] for lanes l in [from, to), zeros elsewhere (nothing else read) */
TN__R8 static inline __m256 tn__r8_load(const float *p, int64_t from, int64_t to) {
    return from <= 0 && to >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tn__r8_lanes(from, to));
}
/* lanes [from, to) of v to p[from ... to) (nothing else written) */
TN__R8 static inline void tn__r8_store(float *p, int64_t from, int64_t to, __m256 v) {
    from = TN__MAX(0, from); to = TN__MIN(8, to);
    if (from == 0 && to == 8) { _mm256_storeu_ps(p, v); return; }
    if (from >= to) return;
    if (from) v = _mm256_permutevar8x32_ps(v, _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)from)));
    __m128 h = _mm256_castps256_ps128(v);
    const int64_t n = to - from;
    p += from;
    if (n & 4) { _mm_storeu_ps(p, h); p += 4; h = _mm256_extractf128_ps(v, 1); }
    if (n & 2) { _mm_storel_pi((__m64 *)(void *)p, h); p += 2; h = _mm_movehl_ps(h, h); }
    if (n & 1) _mm_store_ss(p, h);
}
/* The even (odd) elements of the 16 values lo, hi: [lo0 lo2 ... hi6] ([lo1 lo3 ... hi7]). */
TN__R8 static inline __m256 tn__r8_even(__m256 lo, __m256 hi) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8)); }
TN__R8 static inline __m256 tn__r8_odd(__m256 lo, __m256 hi) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8)); }
/* ReLU as the epilogue's x < 0 ? 0 : x; max_pool2d's take: c where c > m or c is NaN, else m (*t: where) */
TN__R8 static inline __m256 tn__r8_relu(__m256 v) { return _mm256_blendv_ps(v, _mm256_setzero_ps(), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ)); }
TN__R8 static inline __m256 tn__r8_take(__m256 m, __m256 c, __m256 *t) {
    *t = _mm256_or_ps(_mm256_cmp_ps(c, m, _CMP_GT_OQ), _mm256_cmp_ps(c, c, _CMP_UNORD_Q));
    return _mm256_blendv_ps(m, c, *t);
}
TN__R8 static inline __m256 tn__r8_max(__m256 m, __m256 c) { __m256 t; return tn__r8_take(m, c, &t); }
#undef TN__R8
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__SMALLK_MAX 27
#define TN__SMALLK_AVX512 __attribute__((target("avx512f")))
/* The padded image: xn [C, H, W] at rows [ph, ph + H), columns [pw, pw + W) of pad
   [C, H + 2 ph, wp] (zeros around; wp >= ow rounded up to 16, + kw - 1); koff[k] the
   offset of tap k = (c, i, j) from an output's top-left input. */
static void tn__smallk_pad(const float *xn, int64_t C, int64_t H, int64_t W, const int64_t *g, int64_t wp, float *pad, int64_t *koff) {
    const int64_t hp = H + 2 * g[4];
    memset(pad, 0, (size_t)(C * hp * wp) * sizeof(float));
    for (int64_t c = 0; c < C; c++)
        for (int64_t r = 0; r < H; r++) memcpy(pad + (c * hp + r + g[4]) * wp + g[5], xn + (c * H + r) * W, (size_t)W * sizeof(float));
    for (int64_t c = 0, k = 0; c < C; c++)
        for (int64_t i = 0; i < g[0]; i++)
            for (int64_t j = 0; j < g[1]; j++) koff[k++] = (c * hp + i) * wp + j;
}
static int64_t tn__smallk_wp(const int64_t *g) { return (g[9] + 15) / 16 * 16 + g[1] - 1; }
/* the arguments of the threaded loops */
typedef struct { const float *x, *w, *b, *gy; float *y, *gw, *buf; int64_t N, C, H, W, O; const int64_t *g; int pool; } tn__smallk_args;
/* The rows of the 2x2, stride-2 max pool of rows r0, r1 (ow >= 2 OW) into y [OW], after
   ReLU (relu) in the epilogue's formula: the bits of the ReLU pass then max_pool2d's rows
   (src/nn/pooling.c tn__pool22_fwd_f32_avx512: the same comparisons in the same order). */
TN__SMALLK_AVX512 static __m512 tn__smallk_relu(__m512 v) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, _mm512_setzero_ps());
}
TN__SMALLK_AVX512 static void tn__smallk_pool_row(const float *r0, const float *r1, float *y, int64_t OW, int relu) {
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    for (int64_t z = 0; z < OW; z += 16) {
        const int64_t n = TN__MIN(16, OW - z);
        const __mmask16 ml = (__mmask16)(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1), mh = (__mmask16)(n > 8 ? (1u << (2 * n - 16)) - 1 : 0);
        __m512 l0 = _mm512_maskz_loadu_ps(ml, r0 + 2 * z), h0 = _mm512_maskz_loadu_ps(mh, r0 + 2 * z + 16);
        __m512 l1 = _mm512_maskz_loadu_ps(ml, r1 + 2 * z), h1 = _mm512_maskz_loadu_ps(mh, r1 + 2 * z + 16);
        if (relu) { l0 = tn__smallk_relu(l0); h0 = tn__smallk_relu(h0); l1 = tn__smallk_relu(l1); h1 = tn__smallk_relu(h1); }
        const __m512 a = _mm512_permutex2var_ps(l0, ev, h0), b = _mm512_permutex2var_ps(l0, od, h0);
        const __m512 c = _mm512_permutex2var_ps(l1, ev, h1), d = _mm512_permutex2var_ps(l1, od, h1);
        __m512 m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, a, _CMP_GT_OQ) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), a, b);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q), m, c);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), m, d);
        _mm512_mask_storeu_ps(y + z, (__mmask16)((1u << n) - 1), m);
    }
}
/* The row buffer of the pooled forward: two rows of ow (rounded up to 16) per output channel. */
static int64_t tn__smallk_pool_floats(const int64_t *g, int64_t O) { return 2 * O * ((g[9] + 15) / 16 * 16); }
/* y [N, O, oh, ow] = conv(x [N, C, H, W], w [O, K]) + b (NULL: none), all contiguous;
   buf: nthr C (H + 2 ph) wp floats. Chunk t of nthr: its share of the images, buffer t.
   pool (the graph replay's, src/jit/trace.c): y [N, O, oh / 2, ow / 2] is the 2x2, stride-2
   max pool of that (after ReLU when pool is 2), each pair of rows pooled from a buffer of
   tn__smallk_pool_floats more per thread while it is in L1: the convolution's full result
   never goes to memory. */
TN__SMALLK_AVX512 static void tn__smallk_fwd_part(void *args, int t, int nthr) {
    const tn__smallk_args *a_ = (const tn__smallk_args *)args;
    const float *x = a_->x, *w = a_->w, *b = a_->b;
    float *y = a_->y, *buf = a_->buf;
    const int64_t N = a_->N, C = a_->C, H = a_->H, W = a_->W, O = a_->O, *g = a_->g;
    const int pool = a_->pool;
    const int64_t K = C * g[0] * g[1], oh = g[8], ow = g[9], wp = tn__smallk_wp(g), pb = pool ? tn__smallk_pool_floats(g, O) : 0;
    const int64_t per = C * (H + 2 * g[4]) * wp + pb, wq = (ow + 15) / 16 * 16, OH = oh / 2, OW = ow / 2;
    {
        float *pad = buf + t * per, *rows = pad + per - pb;
        int64_t koff[TN__SMALLK_MAX];
        for (int64_t n = tn__split_at(N, t, nthr); n < tn__split_at(N, t + 1, nthr); n++) {
            tn__smallk_pad(x + n * C * H * W, C, H, W, g, wp, pad, koff);
            for (int64_t oy = 0; oy < (pool ? 2 * OH : oh); oy++) {   /* (pooled: an odd last row is not read) */
                const int64_t cs = pool ? 2 * wq : oh * ow;   /* between output channels */
                for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                    __m512 X[TN__SMALLK_MAX];
                    const __mmask16 m = (__mmask16)((1u << TN__MIN(16, ow - ox0)) - 1);
                    const float *p = pad + oy * wp + ox0;
                    float *yp = pool ? rows + (oy & 1) * wq + ox0 : y + (n * O * oh + oy) * ow + ox0;
                    int64_t o = 0;
                    for (int64_t k = 0; k < K; k++) X[k] = _mm512_loadu_ps(p + koff[k]);
                    for (; o + 4 <= O; o += 4) {   /* four output channels: four independent chains */
                        __m512 a0 = _mm512_set1_ps(b ? b[o] : 0.0f), a1 = _mm512_set1_ps(b ? b[o + 1] : 0.0f);
                        __m512 a2 = _mm512_set1_ps(b ? b[o + 2] : 0.0f), a3 = _mm512_set1_ps(b ? b[o + 3] : 0.0f);
                        const float *w0 = w + o * K;
                        for (int64_t k = 0; k < K; k++) {
                            a0 = _mm512_fmadd_ps(_mm512_set1_ps(w0[k]), X[k], a0);
                            a1 = _mm512_fmadd_ps(_mm512_set1_ps(w0[K + k]), X[k], a1);
                            a2 = _mm512_fmadd_ps(_mm512_set1_ps(w0[2 * K + k]), X[k], a2);
                            a3 = _mm512_fmadd_ps(_mm512_set1_ps(w0[3 * K + k]), X[k], a3);
                        }
                        _mm512_mask_storeu_ps(yp + o * cs, m, a0);
                        _mm512_mask_storeu_ps(yp + (o + 1) * cs, m, a1);
                        _mm512_mask_storeu_ps(yp + (o + 2) * cs, m, a2);
                        _mm512_mask_storeu_ps(yp + (o + 3) * cs, m, a3);
                    }
                    for (; o < O; o++) {
                        __m512 a = _mm512_set1_ps(b ? b[o] : 0.0f);
                        for (int64_t k = 0; k < K; k++) a = _mm512_fmadd_ps(_mm512_set1_ps(w[o * K + k]), X[k], a);
                        _mm512_mask_storeu_ps(yp + o * cs, m, a);
                    }
                }
                if (pool && (oy & 1))
                    for (int64_t o = 0; o < O; o++) tn__smallk_pool_row(rows + o * cs, rows + o * cs + wq, y + ((n * O + o) * OH + oy / 2) * OW, OW, pool == 2);
            }
        }
    }
}
/* tn__smallk_pool_row and tn__smallk_fwd_part in AVX2 and FMA: 8 outputs of a row a vector,
   eight output channels at a time (the shifted vectors loaded per group: AVX2 has 16
   registers, not 32); each output the same chain of fused multiply-adds, in tap order. */
#define TN__SMALLK_AVX2 __attribute__((target("avx2,fma")))
TN__SMALLK_AVX2 static void tn__smallk_pool_row_avx2(const float *r0, const float *r1, float *y, int64_t OW, int relu) {
    for (int64_t z = 0; z < OW; z += 8) {   /* rows of wq (a multiple of 16) >= 2 OW: whole vectors readable */
        __m256 l0 = _mm256_loadu_ps(r0 + 2 * z), h0 = _mm256_loadu_ps(r0 + 2 * z + 8), l1 = _mm256_loadu_ps(r1 + 2 * z), h1 = _mm256_loadu_ps(r1 + 2 * z + 8);
        if (relu) { l0 = tn__r8_relu(l0); h0 = tn__r8_relu(h0); l1 = tn__r8_relu(l1); h1 = tn__r8_relu(h1); }
        const __m256 a = tn__r8_even(l0, h0), b = tn__r8_odd(l0, h0), c = tn__r8_even(l1, h1), d = tn__r8_odd(l1, h1);
        tn__r8_store(y + z, 0, OW - z, tn__r8_max(tn__r8_max(tn__r8_max(a, b), c), d));
    }
}
TN__SMALLK_AVX2 static void tn__smallk_fwd_part_avx2(void *args, int t, int nthr) {
    const tn__smallk_args *a_ = (const tn__smallk_args *)args;
    const float *x = a_->x, *w = a_->w, *b = a_->b;
    float *y = a_->y, *buf = a_->buf;
    const int64_t N = a_->N, C = a_->C, H = a_->H, W = a_->W, O = a_->O, *g = a_->g;
    const int pool = a_->pool;
    const int64_t K = C * g[0] * g[1], oh = g[8], ow = g[9], wp = tn__smallk_wp(g), pb = pool ? tn__smallk_pool_floats(g, O) : 0;
    const int64_t per = C * (H + 2 * g[4]) * wp + pb, wq = (ow + 15) / 16 * 16, OH = oh / 2, OW = ow / 2;
    float *pad = buf + t * per, *rows = pad + per - pb;
    int64_t koff[TN__SMALLK_MAX];
    for (int64_t n = tn__split_at(N, t, nthr); n < tn__split_at(N, t + 1, nthr); n++) {
        tn__smallk_pad(x + n * C * H * W, C, H, W, g, wp, pad, koff);
        for (int64_t oy = 0; oy < (pool ? 2 * OH : oh); oy++) {
            const int64_t cs = pool ? 2 * wq : oh * ow;
            for (int64_t ox0 = 0; ox0 < ow; ox0 += 8) {
                const int64_t nl = pool ? 8 : ow - ox0;   /* lanes stored (the pool's rows are wq wide) */
                const float *p = pad + oy * wp + ox0;
                float *yp = pool ? rows + (oy & 1) * wq + ox0 : y + (n * O * oh + oy) * ow + ox0;
                int64_t o = 0;
                for (; o + 8 <= O; o += 8) {
                    __m256 a[8];
                    for (int c = 0; c < 8; c++) a[c] = _mm256_set1_ps(b ? b[o + c] : 0.0f);
                    for (int64_t k = 0; k < K; k++) {
                        const __m256 xv = _mm256_loadu_ps(p + koff[k]);
                        for (int c = 0; c < 8; c++) a[c] = _mm256_fmadd_ps(_mm256_set1_ps(w[(o + c) * K + k]), xv, a[c]);
                    }
                    for (int c = 0; c < 8; c++) tn__r8_store(yp + (o + c) * cs, 0, nl, a[c]);
                }
                for (; o < O; o++) {
                    __m256 a = _mm256_set1_ps(b ? b[o] : 0.0f);
                    for (int64_t k = 0; k < K; k++) a = _mm256_fmadd_ps(_mm256_set1_ps(w[o * K + k]), _mm256_loadu_ps(p + koff[k]), a);
                    tn__r8_store(yp + o * cs, 0, nl, a);
                }
            }
            if (pool && (oy & 1))
                for (int64_t o = 0; o < O; o++) tn__smallk_pool_row_avx2(rows + o * cs, rows + o * cs + wq, y + ((n * O + o) * OH + oy / 2) * OW, OW, pool == 2);
        }
    }
}
/* tn__smallk_wgrad_part in AVX2 and FMA: each channel's 16 lanes of sums as two halves of 8,
   nine taps at a time (each sum the same chain of fused multiply-adds as with AVX-512). */
TN__SMALLK_AVX2 static void tn__smallk_wgrad_part_avx2(void *args, int t, int nthr) {
    const tn__smallk_args *a_ = (const tn__smallk_args *)args;
    const float *x = a_->x, *gy = a_->gy;
    float *buf = a_->buf;
    const int64_t N = a_->N, C = a_->C, H = a_->H, W = a_->W, O = a_->O, *g = a_->g;
    const int64_t K = C * g[0] * g[1], oh = g[8], ow = g[9], wp = tn__smallk_wp(g), per = C * (H + 2 * g[4]) * wp + O * K * 16;
    float *pad = buf + t * per, *A = pad + per - O * K * 16;
    int64_t koff[TN__SMALLK_MAX];
    memset(A, 0, (size_t)(O * K * 16) * sizeof(float));
    for (int64_t n = tn__split_at(N, t, nthr); n < tn__split_at(N, t + 1, nthr); n++) {
        tn__smallk_pad(x + n * C * H * W, C, H, W, g, wp, pad, koff);
        for (int64_t o = 0; o < O; o++)
            for (int h = 0; h < 2; h++) {
                const float *go = gy + (n * O + o) * oh * ow + 8 * h;
                for (int64_t k0 = 0; k0 < K; k0 += 9) {
                    const int64_t nk = TN__MIN(9, K - k0);
                    float *Ak = A + (o * K + k0) * 16 + 8 * h;
                    __m256 a[9];
                    for (int64_t i = 0; i < nk; i++) a[i] = _mm256_loadu_ps(Ak + 16 * i);
                    for (int64_t oy = 0; oy < oh; oy++)
                        for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                            const __m256 gv = tn__r8_load(go + oy * ow + ox0, 0, ow - ox0 - 8 * h);
                            const float *p = pad + oy * wp + ox0 + 8 * h;
                            if (nk == 9) {   /* constant count: the sums stay in registers */
                                for (int i = 0; i < 9; i++) a[i] = _mm256_fmadd_ps(gv, _mm256_loadu_ps(p + koff[k0 + i]), a[i]);
                            } else {
                                for (int64_t i = 0; i < nk; i++) a[i] = _mm256_fmadd_ps(gv, _mm256_loadu_ps(p + koff[k0 + i]), a[i]);
                            }
                        }
                    for (int64_t i = 0; i < nk; i++) _mm256_storeu_ps(Ak + 16 * i, a[i]);
                }
            }
    }
}
#undef TN__SMALLK_AVX2
/* Test knob: 2 the AVX-512 loops where the CPU has them (else AVX2), 1 at most the AVX2 and
   FMA ones, 0 none (the im2col path). */
TN__TESTABLE int tn__smallk_wide = 2;
static int tn__smallk_isa(void) {
    return tn__smallk_wide >= 2 && tn__cpu_avx512() ? 2 : tn__smallk_wide >= 1 && tn__cpu_fma() ? 1 : 0;
}
static void tn__smallk_fwd_f32(const float *x, const float *w, const float *b, float *y, int64_t N, int64_t C, int64_t H,
                               int64_t W, int64_t O, const int64_t *g, int nthr, float *buf, int pool) {
    tn__smallk_args a = {x, w, b, NULL, y, NULL, buf, N, C, H, W, O, g, pool};
    tn__parallel(nthr, tn__smallk_isa() == 2 ? tn__smallk_fwd_part : tn__smallk_fwd_part_avx2, &a);
}
/* gw [O, K] (written) = the weight gradient from gy [N, O, oh, ow] and x; buf: nthr
   (C (H + 2 ph) wp + O K 16) floats. */
TN__SMALLK_AVX512 static void tn__smallk_wgrad_part(void *args, int t, int nthr) {
    const tn__smallk_args *a_ = (const tn__smallk_args *)args;
    const float *x = a_->x, *gy = a_->gy;
    float *buf = a_->buf;
    const int64_t N = a_->N, C = a_->C, H = a_->H, W = a_->W, O = a_->O, *g = a_->g;
    const int64_t K = C * g[0] * g[1], oh = g[8], ow = g[9], wp = tn__smallk_wp(g), per = C * (H + 2 * g[4]) * wp + O * K * 16;
    {
        float *pad = buf + t * per, *A = pad + per - O * K * 16;
        int64_t koff[TN__SMALLK_MAX];
        memset(A, 0, (size_t)(O * K * 16) * sizeof(float));
        for (int64_t n = tn__split_at(N, t, nthr); n < tn__split_at(N, t + 1, nthr); n++) {
            tn__smallk_pad(x + n * C * H * W, C, H, W, g, wp, pad, koff);
            int64_t o = 0;
            for (; o < O; o++) {
                const float *go = gy + (n * O + o) * oh * ow;
                int64_t k0 = 0;
                if (o + 1 < O)   /* two output channels with 9 taps each: 18 sums in registers, the 9 inputs loaded once */
                    for (; k0 + 9 <= K; k0 += 9) {
                        const int64_t *ko = koff + k0;
                        float *Ak = A + (o * K + k0) * 16, *Bk = Ak + K * 16;
#define TN__SMALLK_9(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8)
#define TN__SMALLK_LD(i) __m512 a##i = _mm512_loadu_ps(Ak + 16 * i), b##i = _mm512_loadu_ps(Bk + 16 * i);
#define TN__SMALLK_FMA(i) { const __m512 v = _mm512_loadu_ps(p + ko[i]); a##i = _mm512_fmadd_ps(ga, v, a##i); b##i = _mm512_fmadd_ps(gb, v, b##i); }
#define TN__SMALLK_ST(i) _mm512_storeu_ps(Ak + 16 * i, a##i); _mm512_storeu_ps(Bk + 16 * i, b##i);
                        TN__SMALLK_9(TN__SMALLK_LD)
                        for (int64_t oy = 0; oy < oh; oy++)
                            for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                                const __mmask16 m = (__mmask16)((1u << TN__MIN(16, ow - ox0)) - 1);
                                const __m512 ga = _mm512_maskz_loadu_ps(m, go + oy * ow + ox0), gb = _mm512_maskz_loadu_ps(m, go + (oh + oy) * ow + ox0);
                                const float *p = pad + oy * wp + ox0;
                                TN__SMALLK_9(TN__SMALLK_FMA)
                            }
                        TN__SMALLK_9(TN__SMALLK_ST)
#undef TN__SMALLK_9
#undef TN__SMALLK_LD
#undef TN__SMALLK_FMA
#undef TN__SMALLK_ST
                    }
                for (int64_t k = k0; k < K; k++)   /* the rest one tap (and channel) at a time */
                    for (int64_t c = o; c < (k0 > 0 ? o + 2 : o + 1); c++) {
                        const float *gc = gy + (n * O + c) * oh * ow;
                        __m512 a = _mm512_loadu_ps(A + (c * K + k) * 16);
                        for (int64_t oy = 0; oy < oh; oy++)
                            for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                                const __m512 gv = _mm512_maskz_loadu_ps((__mmask16)((1u << TN__MIN(16, ow - ox0)) - 1), gc + oy * ow + ox0);
                                a = _mm512_fmadd_ps(gv, _mm512_loadu_ps(pad + oy * wp + ox0 + koff[k]), a);
                            }
                        _mm512_storeu_ps(A + (c * K + k) * 16, a);
                    }
                if (k0 > 0) o++;   /* channel o + 1 done with o */
            }
        }
    }
}
static void tn__smallk_wgrad_f32(const float *x, const float *gy, float *gw, int64_t N, int64_t C, int64_t H, int64_t W,
                                 int64_t O, const int64_t *g, int nthr, float *buf) {
    const int64_t K = C * g[0] * g[1], per = C * (H + 2 * g[4]) * tn__smallk_wp(g) + O * K * 16;
    tn__smallk_args a = {x, NULL, NULL, gy, NULL, gw, buf, N, C, H, W, O, g, 0};
    tn__parallel(nthr, tn__smallk_isa() == 2 ? tn__smallk_wgrad_part : tn__smallk_wgrad_part_avx2, &a);
    for (int64_t q = 0; q < O * K; q++) {   /* threads, then lanes, in order */
        float s = 0;
        for (int u = 0; u < nthr; u++)
            for (int l = 0; l < 16; l++) s += buf[u * per + per - O * K * 16 + q * 16 + l];
        gw[q] = s;
    }
}
#undef TN__SMALLK_AVX512
static bool tn__conv_smallk_ok(const tn_tensor *x, const int64_t *g, int64_t G) {
    if (!tn__conv_fast_paths || G != 1 || x->dtype != TN_F32 || g[2] != 1 || g[3] != 1 || g[6] != 1 || g[7] != 1 || x->shape[1] * g[0] * g[1] > TN__SMALLK_MAX)
        return false;
    return tn__smallk_isa() > 0;
}
/* mode 0: y = conv(x, w) + b; 2: w = the weight gradient from y = gy and x (new, contiguous);
   3, 4: y = the 2x2, stride-2 max pool of conv(x, w) + b, 4 after ReLU (tn__smallk_fwd_part). */
static int tn__conv_smallk_cpu(int mode, tn_tensor *x, tn_tensor *w, const tn_tensor *b, tn_tensor *y, const int64_t *g) {
    const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], O = w->shape[0], K = C * g[0] * g[1];
    const int nthr = tn__par_threads(tn__mul_sat(N * O * g[8] * g[9], K), N);   /* N O oh ow: the convolution's numel */
    const int64_t per = C * (H + 2 * g[4]) * tn__smallk_wp(g) + (mode == 2 ? O * K * 16 : mode >= 3 ? tn__smallk_pool_floats(g, O) : 0);
    tn_tensor *xc = tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    tn_tensor *yc = tn_is_contiguous(y) ? tn_retain(y) : tn__copy_as(y, y->dtype, TN_CPU);
    tn_tensor *buf = tn__new(TN_F32, TN_CPU, TN_SHAPE(tn__mul_sat(nthr, per)));
    int failed = !xc || !yc || !buf;
    if (!failed && mode != 2)
        tn__smallk_fwd_f32((const float *)tn_data_ptr(xc), (const float *)tn_data_ptr(w), b ? (const float *)tn_data_ptr(b) : NULL,
                           (float *)tn_data_ptr(yc), N, C, H, x->shape[3], O, g, nthr, (float *)tn_data_ptr(buf), mode >= 3 ? mode - 2 : 0);
    else if (!failed)
        tn__smallk_wgrad_f32((const float *)tn_data_ptr(xc), (const float *)tn_data_ptr(yc), (float *)tn_data_ptr(w), N, C, H, x->shape[3], O, g,
                             nthr, (float *)tn_data_ptr(buf));
    tn_release(xc); tn_release(yc); tn_release(buf);
    return failed ? TN__FAIL_INT(mode ? "conv2d backward: out of memory" : "conv2d: out of memory") : 0;
}
#else
TN__TESTABLE int tn__smallk_wide = 2;   /* (no direct loops here) */
static bool tn__conv_smallk_ok(const tn_tensor *x, const int64_t *g, int64_t G) { (void)x; (void)g; (void)G; return false; }
static int tn__conv_smallk_cpu(int mode, tn_tensor *x, tn_tensor *w, const tn_tensor *b, tn_tensor *y, const int64_t *g) {
    (void)mode; (void)x; (void)w; (void)b; (void)y; (void)g;
    return -1;
}
#endif
