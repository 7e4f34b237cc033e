/* ---- pooling ---- */
/* x [N, C, *] or [C, *] with nsp spatial dims -> [N, C, H, W] (1-d gains a unit height). */
static tn_tensor *tn__pool_input(const char *fn, tn_tensor *x, int nsp) {
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: expected %dD (unbatched) or %dD (batched) input, but got input of size %s", fn, nsp + 1, nsp + 2, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return NULL;
    for (int d = x->ndim == nsp + 2 ? 1 : 0; d < x->ndim; d++)   /* every non-batch dim, channels too (as PyTorch) */
        if (x->shape[d] == 0)
            return (tn_tensor *)tn__error("%s: Expected input's non-batch dimensions to have positive length, but input has a shape of %s and non-batch dimension %d has length zero", fn, TN__SHAPE(x), d);
    tn_tensor *x4 = x->ndim == nsp + 2 ? x : tn_unsqueeze(x, 0);
    return nsp == 1 ? tn_unsqueeze(x4, 2) : x4;
}
/* Undo tn__pool_input on a result. */
static tn_tensor *tn__pool_output(tn_tensor *y, tn_tensor *x, int nsp) {
    if (nsp == 1) y = tn_squeeze_dim(y, 2);
    return x->ndim == nsp + 2 ? y : tn_squeeze_dim(y, 0);
}
/* Kernel, stride, padding, dilation per dim in 2-d form; stride 0 is the kernel size. */
static int tn__pool_geometry(const char *fn, int nsp, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d, int64_t *g) {
    for (int i = 0; i < 2; i++) {
        int j = i - (2 - nsp);
        g[i] = j < 0 ? 1 : k[j];
        g[6 + i] = j < 0 ? 1 : s && s[j] ? s[j] : k[j];
        g[4 + i] = j < 0 ? 0 : p[j];
        g[2 + i] = j < 0 || !d ? 1 : d[j];
        if (g[i] <= 0 || g[6 + i] <= 0 || g[2 + i] <= 0)
            return TN__FAIL_INT("%s: kernel_size, stride and dilation must be greater than zero (got %lld, %lld, %lld)", fn, (long long)g[i], (long long)g[6 + i], (long long)g[2 + i]);
        if (g[i] > INT32_MAX || g[6 + i] > INT32_MAX || g[2 + i] > INT32_MAX || g[4 + i] > INT32_MAX)
            return TN__FAIL_INT("%s: kernel_size, stride, padding and dilation must be below 2^31", fn);

        if (g[4 + i] < 0 || g[4 + i] > (g[2 + i] * (g[i] - 1) + 1) / 2)
            return TN__FAIL_INT("%s: pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld and dilation=%lld", fn,
                                (long long)g[4 + i], (long long)g[i], (long long)g[2 + i]);
    }
    return 0;
}
/* tn_pool_opts -> per-dim kernel, stride (0: the kernel's), padding and dilation, and the
   divisor (0: none), for nsp spatial dims; what: the kind ("MaxPool2d"), whose options
   alone may differ from their defaults. 0, or -1 with an error. */
static const char *const tn__pool_options[2] = {"kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override",
                                                "kernel_size, stride, padding, dilation, return_indices, ceil_mode"};
static int tn__pool_args(const char *fn, const char *what, int nsp, bool max, int64_t ksize, const tn_pool_opts *o,
                         int64_t k[2], int64_t s[2], int64_t p[2], int64_t d[2], int64_t *divisor) {
    const tn_pool_opts def = TN_DEFAULTS(tn_pool_opts);
    if (tn__kw_only(fn, what, tn__kw_pool, TN__KW_N(tn__kw_pool), o, &def, tn__pool_options[max])) return -1;
    const int64_t *hw[4] = {o->kernel_size_hw, o->stride_hw, o->padding_hw, o->dilation_hw};
    const int64_t v[4] = {ksize, o->stride == TN_NONE ? 0 : o->stride, o->padding, o->dilation};
    int64_t *out[4] = {k, s, p, d};
    for (int a = 0; a < 4; a++) {
        const bool pair = hw[a][0] || hw[a][1];
        if (pair && nsp == 1) return TN__FAIL_INT("%s: a 1-d pooling takes ints, not (h, w) pairs", fn);
        out[a][0] = pair ? hw[a][0] : v[a];
        out[a][1] = pair ? hw[a][1] : v[a];
    }
    if (o->stride != TN_NONE && o->stride == 0) return TN__FAIL_INT("%s: stride should be greater than zero (None: the kernel size)", fn);
    /* a negative divisor is PyTorch's too (it only refuses 0) */
    if (o->divisor_override != TN_NONE && o->divisor_override == 0) return TN__FAIL_INT("%s: divisor must be not zero", fn);
    *divisor = o->divisor_override == TN_NONE ? 0 : o->divisor_override;
    return 0;
}
/* The option text of a max (or avg) pooling: only that kind's names are known. */
static int tn__pool_parse(const char *fn, bool max, const char *text, tn_pool_opts *o) {
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_pool, TN__KW_N(tn__kw_pool), tn__pool_options[max], keys);
    *o = (tn_pool_opts)TN_DEFAULTS(tn_pool_opts);
    return tn__kw_parse(fn, text, keys, n, o, NULL);
}
static int tn__pool_counts(const char *fn, tn_tensor *x4, int64_t *g, bool ceil_mode) {
    for (int i = 0; i < 2; i++) g[8 + i] = tn__window_count(x4->shape[2 + i], g[i], g[4 + i], g[6 + i], g[2 + i], ceil_mode);
    if (g[8] <= 0 || g[9] <= 0)   /* both counts first: the message shows them */
        return TN__FAIL_INT("%s: given input size %s, calculated output size (%lldx%lld): output size is too small", fn, TN__SHAPE(x4),
                            (long long)(g[8] > 0 ? g[8] : 0), (long long)(g[9] > 0 ? g[9] : 0));
    return 0;
}
/* Max pooling on the CPU (float dtypes): the values and, per window, a 1-byte code of its
   argmax, (row in the window) * KW + (column in the window), in one pass. KW is the widest
   window's column count; windows of more than 256 positions go the backend's way (int64
   indices, gather) instead. The codes are an eighth of int64 indices, which are made from
   them only when asked for (return_indices, or a backward that records). Rows of 2x2
   stride-2 windows, the common pooling, have row kernels: branch-free (random data would
   mispredict), and for float32 with AVX-512 (masked, as rows are short: 14 windows at 28x28)
   or AVX2 (GCC leaves the portable rows' selects scalar) chosen at run time. As PyTorch: row-major scan of the window, a NaN is always taken (the
   last NaN wins). */
/* c ? a : b through the bits, so the compiler cannot make it a branch */
static float tn__select_f32(int c, float a, float b) {
    uint32_t x, y, m = (uint32_t)0 - (uint32_t)c;
    memcpy(&x, &a, 4); memcpy(&y, &b, 4);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, 4);
    return a;
}
static double tn__select_f64(int c, double a, double b) {
    uint64_t x, y, m = (uint64_t)0 - (uint64_t)c;
    memcpy(&x, &a, 8); memcpy(&y, &b, 8);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, 8);
    return a;
}
/* The max of one window of a plane (row stride s2, column stride s3) and its row *bh and
   column *bw: rows from hs (below 0: padding) to he by dh, columns likewise. The scan of
   max pooling's general windows, for the codes here and the backend's int64 argmax. */
/* @template TN__WINDOW_MAX(T, S) */
static T tn__window_max_##S(const T *plane, int64_t s2, int64_t s3, int64_t hs, int64_t he, int64_t ws, int64_t we, int64_t dh, int64_t dw,
                            int64_t *bh, int64_t *bw) {
    const int64_t h0 = hs >= 0 ? hs : hs + (-hs + dh - 1) / dh * dh, w0 = ws >= 0 ? ws : ws + (-ws + dw - 1) / dw * dw;
    int64_t ih = h0, iw = w0;
    T m = plane[h0 * s2 + w0 * s3];
    for (int64_t h = h0; h < he; h += dh)
        for (int64_t w = w0; w < we; w += dw) {
            const T v = plane[h * s2 + w * s3];
            const bool take = v > m || v != v;   /* branch-free: random data would mispredict */
            m = take ? v : m;
            ih = take ? h : ih;
            iw = take ? w : iw;
        }
    *bh = ih; *bw = iw;
    return m;
}
/* @end TN__WINDOW_MAX */
TN__WINDOW_MAX(float, f32)
TN__WINDOW_MAX(double, f64)
/* @template TN__POOL22_ROWS(T, S) */
static void tn__pool22_fwd_##S(const T *TN__RESTRICT r0, const T *TN__RESTRICT r1, T *TN__RESTRICT y, uint8_t *TN__RESTRICT code, int64_t OW) {
    for (int64_t z = 0; z < OW; z++) {
        const T a = r0[2 * z], b = r0[2 * z + 1], c = r1[2 * z], d = r1[2 * z + 1];
        const int tb = (b > a) | (b != b); T m = tn__select_##S(tb, b, a); int k = tb;
        const int tc = (c > m) | (c != c); m = tn__select_##S(tc, c, m); k += (2 - k) & -tc;
        const int td = (d > m) | (d != d); m = tn__select_##S(td, d, m); k += (3 - k) & -td;
        y[z] = m; code[z] = (uint8_t)k;
    }
}
static void tn__pool22_bwd_##S(const T *TN__RESTRICT gy, const uint8_t *TN__RESTRICT code, T *TN__RESTRICT g0, T *TN__RESTRICT g1, int64_t OW) {
    for (int64_t z = 0; z < OW; z++) {
        const T v = gy[z]; const int k = code[z];
        g0[2 * z] = tn__select_##S(k == 0, v, 0); g0[2 * z + 1] = tn__select_##S(k == 1, v, 0);
        g1[2 * z] = tn__select_##S(k == 2, v, 0); g1[2 * z + 1] = tn__select_##S(k == 3, v, 0);
    }
}
/* @end TN__POOL22_ROWS */
TN__POOL22_ROWS(float, f32)
TN__POOL22_ROWS(double, f64)
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__POOL22_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
/* Lanes of 16 windows: the masks of the 2n inputs (two vectors) and the n outputs of a chunk. */
TN__POOL22_AVX512 static void tn__pool22_masks(int64_t n, __mmask16 *lo, __mmask16 *hi, __mmask16 *out) {
    *lo = (__mmask16)(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1);
    *hi = (__mmask16)(n > 8 ? (1u << (2 * n - 16)) - 1 : 0);
    *out = (__mmask16)((1u << n) - 1);
}
TN__POOL22_AVX512 static void tn__pool22_fwd_f32_avx512(const float *r0, const float *r1, float *y, uint8_t *code, int64_t OW) {
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    for (int64_t z = 0; z < OW; z += 16) {
        __mmask16 ml, mh, mo;
        tn__pool22_masks(TN__MIN(16, OW - z), &ml, &mh, &mo);
        const __m512 l0 = _mm512_maskz_loadu_ps(ml, r0 + 2 * z), h0 = _mm512_maskz_loadu_ps(mh, r0 + 2 * z + 16);
        const __m512 l1 = _mm512_maskz_loadu_ps(ml, r1 + 2 * z), h1 = _mm512_maskz_loadu_ps(mh, r1 + 2 * z + 16);
        const __m512 a = _mm512_permutex2var_ps(l0, ev, h0), b = _mm512_permutex2var_ps(l0, od, h0);
        const __m512 c = _mm512_permutex2var_ps(l1, ev, h1), d = _mm512_permutex2var_ps(l1, od, h1);
        __mmask16 t = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
        __m512 m = _mm512_mask_blend_ps(t, a, b);
        __m512i k = _mm512_maskz_mov_epi32(t, _mm512_set1_epi32(1));
        t = _mm512_cmp_ps_mask(c, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q);
        m = _mm512_mask_blend_ps(t, m, c);
        k = _mm512_mask_mov_epi32(k, t, _mm512_set1_epi32(2));
        t = _mm512_cmp_ps_mask(d, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q);
        m = _mm512_mask_blend_ps(t, m, d);
        k = _mm512_mask_mov_epi32(k, t, _mm512_set1_epi32(3));
        _mm512_mask_storeu_ps(y + z, mo, m);
        _mm512_mask_cvtepi32_storeu_epi8(code + z, mo, k);
    }
}
TN__POOL22_AVX512 static void tn__pool22_bwd_f32_avx512(const float *gy, const uint8_t *code, float *g0, float *g1, int64_t OW) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    for (int64_t z = 0; z < OW; z += 16) {
        __mmask16 ml, mh, mo;
        tn__pool22_masks(TN__MIN(16, OW - z), &ml, &mh, &mo);
        const __m512 v = _mm512_maskz_loadu_ps(mo, gy + z);
        const __m512i k = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mo, code + z));
        const __m512 e0 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_setzero_si512()), v), e1 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(1)), v);
        const __m512 e2 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(2)), v), e3 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(3)), v);
        _mm512_mask_storeu_ps(g0 + 2 * z, ml, _mm512_permutex2var_ps(e0, lo, e1));
        _mm512_mask_storeu_ps(g0 + 2 * z + 16, mh, _mm512_permutex2var_ps(e0, hi, e1));
        _mm512_mask_storeu_ps(g1 + 2 * z, ml, _mm512_permutex2var_ps(e2, lo, e3));
        _mm512_mask_storeu_ps(g1 + 2 * z + 16, mh, _mm512_permutex2var_ps(e2, hi, e3));
    }
}
#undef TN__POOL22_AVX512
/* The same rows in AVX2 (8 windows a vector; CPUs without AVX-512): the same comparisons and
   selects, lane by lane, as the portable rows; the ragged ends by tn__r8_load / tn__r8_store
   (src/nn/conv_smallk.c: lanes off neither read nor written). */
#define TN__POOL22_AVX2 __attribute__((target("avx2")))
TN__POOL22_AVX2 static void tn__pool22_fwd_f32_avx2(const float *r0, const float *r1, float *y, uint8_t *code, int64_t OW) {
    const __m256i bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    for (int64_t z = 0; z < OW; z += 8) {
        const int64_t n = TN__MIN(8, OW - z);
        const __m256 l0 = tn__r8_load(r0 + 2 * z, 0, 2 * n), h0 = tn__r8_load(r0 + 2 * z + 8, 0, 2 * n - 8);
        const __m256 l1 = tn__r8_load(r1 + 2 * z, 0, 2 * n), h1 = tn__r8_load(r1 + 2 * z + 8, 0, 2 * n - 8);
        const __m256 a = tn__r8_even(l0, h0), b = tn__r8_odd(l0, h0), c = tn__r8_even(l1, h1), d = tn__r8_odd(l1, h1);
        __m256 t, m = tn__r8_take(a, b, &t), k = _mm256_and_ps(t, _mm256_castsi256_ps(_mm256_set1_epi32(1)));
        m = tn__r8_take(m, c, &t);
        k = _mm256_blendv_ps(k, _mm256_castsi256_ps(_mm256_set1_epi32(2)), t);
        m = tn__r8_take(m, d, &t);
        k = _mm256_blendv_ps(k, _mm256_castsi256_ps(_mm256_set1_epi32(3)), t);
        tn__r8_store(y + z, 0, n, m);
        const __m256i kb = _mm256_shuffle_epi8(_mm256_castps_si256(k), bytes);   /* the low byte of each lane, 4 per half */
        const uint64_t k8 = (uint64_t)(uint32_t)_mm256_extract_epi32(kb, 0) | (uint64_t)(uint32_t)_mm256_extract_epi32(kb, 4) << 32;
        if (n == 8) memcpy(code + z, &k8, 8);
        else for (int64_t i = 0; i < n; i++) code[z + i] = (uint8_t)(k8 >> (8 * i));
    }
}
TN__POOL22_AVX2 static void tn__pool22_bwd_f32_avx2(const float *gy, const uint8_t *code, float *g0, float *g1, int64_t OW) {
    for (int64_t z = 0; z < OW; z += 8) {
        const int64_t n = TN__MIN(8, OW - z);
        uint64_t k8 = 0;
        if (n == 8) memcpy(&k8, code + z, 8);
        else for (int64_t i = 0; i < n; i++) k8 |= (uint64_t)code[z + i] << (8 * i);
        const __m256 v = tn__r8_load(gy + z, 0, n);
        const __m256i k = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)k8));
        /* v where the code is j, else +0: the portable select */
        const __m256 e0 = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(k, _mm256_setzero_si256())));
        const __m256 e1 = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(k, _mm256_set1_epi32(1))));
        const __m256 e2 = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(k, _mm256_set1_epi32(2))));
        const __m256 e3 = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(k, _mm256_set1_epi32(3))));
        const __m256 u0 = _mm256_unpacklo_ps(e0, e1), w0 = _mm256_unpackhi_ps(e0, e1), u1 = _mm256_unpacklo_ps(e2, e3), w1 = _mm256_unpackhi_ps(e2, e3);
        tn__r8_store(g0 + 2 * z, 0, 2 * n, _mm256_permute2f128_ps(u0, w0, 0x20));
        tn__r8_store(g0 + 2 * z + 8, 0, 2 * n - 8, _mm256_permute2f128_ps(u0, w0, 0x31));
        tn__r8_store(g1 + 2 * z, 0, 2 * n, _mm256_permute2f128_ps(u1, w1, 0x20));
        tn__r8_store(g1 + 2 * z + 8, 0, 2 * n - 8, _mm256_permute2f128_ps(u1, w1, 0x31));
    }
}
#undef TN__POOL22_AVX2
/* Test knob: the widest rows run, 2 AVX-512 where the CPU has it (else AVX2), 1 at most AVX2
   (where the CPU has AVX2 and FMA, as TN__WIDE), 0 the portable rows. */
TN__TESTABLE int tn__pool22_avx512 = 2;
static int tn__pool22_isa(void) {
    return tn__pool22_avx512 >= 2 && tn__cpu_avx512() ? 2 : tn__pool22_avx512 >= 1 && tn__cpu_fma() ? 1 : 0;
}
#define TN__POOL22_FWD_f32 (tn__pool22_isa() == 2 ? tn__pool22_fwd_f32_avx512 : tn__pool22_isa() == 1 ? tn__pool22_fwd_f32_avx2 : tn__pool22_fwd_f32)
#define TN__POOL22_BWD_f32 (tn__pool22_isa() == 2 ? tn__pool22_bwd_f32_avx512 : tn__pool22_isa() == 1 ? tn__pool22_bwd_f32_avx2 : tn__pool22_bwd_f32)
#else
#define TN__POOL22_FWD_f32 tn__pool22_fwd_f32
#define TN__POOL22_BWD_f32 tn__pool22_bwd_f32
#endif
#define TN__POOL22_FWD_f64 tn__pool22_fwd_f64
#define TN__POOL22_BWD_f64 tn__pool22_bwd_f64
/* tab: window rows [hs, he) and columns [ws, we) as tn__max_windows; k22: 2x2 stride-2
   windows at (2y, 2z). Forward: x any strides (k22 needs unit column stride), y and codes
   [N*C, OH, OW] contiguous. Backward: gx from gy and codes, all contiguous. */
/* @template TN__POOL_CODES_DEFINE(T, S) */
/* the arguments of threaded max pooling with codes (forward or backward) */
typedef struct { T *yb, *gxb; const T *gyb; uint8_t *cb; const tn_tensor *x; const int64_t *tab; int64_t H, W, OH, OW, dh, dw, KW; bool k22; } tn__pool_codes_args_##S;
/* planes [p0, p1) of the forward */
static void tn__pool_codes_fwd_part_##S(void *args, int64_t p0, int64_t p1) {
    const tn__pool_codes_args_##S *A = (const tn__pool_codes_args_##S *)args;
    const tn_tensor *x = A->x;
    T *yb = A->yb;
    uint8_t *cb = A->cb;
    const int64_t *tab = A->tab, OH = A->OH, OW = A->OW, dh = A->dh, dw = A->dw, KW = A->KW;
    const bool k22 = A->k22;
    const int64_t C = x->shape[1], *xs = x->strides, *hs = tab, *he = tab + OH, *ws = tab + 2 * OH, *we = ws + OW;
    const T *xb = (const T *)x->storage->data + x->offset;
    void (*row)(const T *, const T *, T *, uint8_t *, int64_t) = TN__POOL22_FWD_##S;
    for (int64_t nc = p0; nc < p1; nc++) {
        const T *plane = xb + nc / C * xs[0] + nc % C * xs[1];
        T *yp = yb + nc * OH * OW;
        uint8_t *cp = cb + nc * OH * OW;
        for (int64_t y = 0; y < OH; y++) {
            if (k22) { row(plane + 2 * y * xs[2], plane + (2 * y + 1) * xs[2], yp + y * OW, cp + y * OW, OW); continue; }
            for (int64_t z = 0; z < OW; z++) {
                int64_t bh, bw;
                yp[y * OW + z] = tn__window_max_##S(plane, xs[2], xs[3], hs[y], he[y], ws[z], we[z], dh, dw, &bh, &bw);
                cp[y * OW + z] = (uint8_t)((bh - hs[y]) / dh * KW + (bw - ws[z]) / dw);
            }
        }
    }
}
static void tn__pool_codes_fwd_##S(T *yb, uint8_t *cb, const tn_tensor *x, const int64_t *tab, int64_t OH, int64_t OW, int64_t dh, int64_t dw, int64_t KW, bool k22) {
    const int64_t NC = x->shape[0] * x->shape[1];
    tn__pool_codes_args_##S A = {yb, NULL, NULL, cb, x, tab, 0, 0, OH, OW, dh, dw, KW, k22};
    tn__parallel_range(tn__par_threads(NC * x->shape[2] * x->shape[3], NC), NC, tn__pool_codes_fwd_part_##S, &A);
}
/* planes [p0, p1) of the backward */
static void tn__pool_codes_bwd_part_##S(void *args, int64_t p0, int64_t p1) {
    const tn__pool_codes_args_##S *A = (const tn__pool_codes_args_##S *)args;
    T *gxb = A->gxb;
    const T *gyb = A->gyb;
    const uint8_t *cb = A->cb;
    const int64_t *tab = A->tab, H = A->H, W = A->W, OH = A->OH, OW = A->OW, dh = A->dh, dw = A->dw, KW = A->KW;
    const bool k22 = A->k22;
    void (*row)(const T *, const uint8_t *, T *, T *, int64_t) = TN__POOL22_BWD_##S;
    for (int64_t nc = p0; nc < p1; nc++) {   /* planes in parallel; within one, in order */
        T *o = gxb + nc * H * W;
        const T *v = gyb + nc * OH * OW;
        const uint8_t *cp = cb + nc * OH * OW;
        if (k22) {   /* every element written once: no clearing first */
            for (int64_t y = 0; y < OH; y++) {
                row(v + y * OW, cp + y * OW, o + 2 * y * W, o + (2 * y + 1) * W, OW);
                for (int64_t w = 2 * OW; w < W; w++) o[2 * y * W + w] = o[(2 * y + 1) * W + w] = 0;
            }
            if (2 * OH < H) memset(o + 2 * OH * W, 0, (size_t)((H - 2 * OH) * W) * sizeof(T));
            continue;
        }
        memset(o, 0, (size_t)(H * W) * sizeof(T));
        for (int64_t y = 0; y < OH; y++)
            for (int64_t z = 0; z < OW; z++) {
                const int64_t k = cp[y * OW + z];
                o[(tab[y] + k / KW * dh) * W + tab[2 * OH + z] + k % KW * dw] += v[y * OW + z];
            }
    }
}
static void tn__pool_codes_bwd_##S(T *gxb, const T *gyb, const uint8_t *cb, int64_t NC, int64_t H, int64_t W, const int64_t *tab, int64_t OH, int64_t OW,
                                   int64_t dh, int64_t dw, int64_t KW, bool k22) {
    tn__pool_codes_args_##S A = {NULL, gxb, gyb, (uint8_t *)cb, NULL, tab, H, W, OH, OW, dh, dw, KW, k22};
    tn__parallel_range(tn__par_threads(NC * (H * W + OH * OW), NC), NC, tn__pool_codes_bwd_part_##S, &A);
}
/* @end TN__POOL_CODES_DEFINE */
TN__POOL_CODES_DEFINE(float, f32)
TN__POOL_CODES_DEFINE(double, f64)
#undef TN__POOL22_FWD_f32
#undef TN__POOL22_BWD_f32
#undef TN__POOL22_FWD_f64
#undef TN__POOL22_BWD_f64
/* The int64 indices (into each H*W plane) of codes [N, C, OH, OW]. */
static tn_tensor *tn__pool_code_index(tn_tensor *codes, const int64_t *tab, int64_t W, int64_t KW, int64_t dh, int64_t dw) {
    const int64_t OH = codes->shape[2], OW = codes->shape[3], NC = codes->shape[0] * codes->shape[1];
    tn_tensor *idx = tn__own(tn__new(TN_I64, TN_CPU, codes->shape, 4));
    if (!idx) return NULL;
    int64_t *ip = (int64_t *)tn_data_ptr(idx);
    const uint8_t *cp = (const uint8_t *)tn_data_ptr(codes);
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t y = 0; y < OH; y++)
            for (int64_t z = 0; z < OW; z++, ip++, cp++) *ip = (tab[y] + *cp / KW * dh) * W + tab[2 * OH + z] + *cp % KW * dw;
    return idx;
}
/* Max pooling's backward on the CPU: gy to each window's argmax, from the codes (saved 0)
   and the window table (saved 1). When autograd records (create_graph), by scatter_add of
   int64 indices, which is differentiable. */
static int tn__max_pool_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *codes = tn_ctx_saved(n, 0), *tabt = tn_ctx_saved(n, 1);
    if (!codes || !tabt) return -1;
    const int64_t N = n->i[0], C = n->i[1], H = n->i[2], W = n->i[3], KW = n->i[4], dh = n->i[5], dw = n->i[6];
    const int64_t OH = codes->shape[2], OW = codes->shape[3], *tab = (const int64_t *)tn_data_ptr(tabt);
    if (!tn__grad_disabled) {
        tn_tensor *idx = tn__pool_code_index(codes, tab, W, KW, dh, dw);
        tn_tensor *z = idx ? tn_zeros(TN_SHAPE(N, C, H * W), gy->dtype) : NULL;
        gin[0] = tn_reshape(tn_scatter_add(z, 2, tn_reshape(idx, TN_SHAPE(N, C, OH * OW)), tn_reshape(gy, TN_SHAPE(N, C, OH * OW))), TN_SHAPE(N, C, H, W));
        return gin[0] ? 0 : -1;
    }
    tn_tensor *gx = tn__own(tn__new(gy->dtype, TN_CPU, TN_SHAPE(N, C, H, W))), *g = tn_contiguous(gy);
    if (!gx || !g) return -1;
    const bool k22 = n->i[7] != 0;
    if (gy->dtype == TN_F32) tn__pool_codes_bwd_f32((float *)tn_data_ptr(gx), (const float *)tn_data_ptr(g), (const uint8_t *)tn_data_ptr(codes), N * C, H, W, tab, OH, OW, dh, dw, KW, k22);
    else tn__pool_codes_bwd_f64((double *)tn_data_ptr(gx), (const double *)tn_data_ptr(g), (const uint8_t *)tn_data_ptr(codes), N * C, H, W, tab, OH, OW, dh, dw, KW, k22);
    gin[0] = gx;
    return 0;
}
/* Max over windows given by row tables hs/he and column tables ws/we (tab: hs, he, ws, we),
   dilations dh, dw. On the CPU for float dtypes with windows of up to 256 positions: values
   and codes as above, under one node (tn__max_pool_bw). Otherwise the argmax from the
   backend and the values by gather (so the backward is gather's, twice differentiable too).
   *idx_out (when not NULL): the int64 indices into each H*W plane. */
static tn_tensor *tn__max_windows(tn_tensor *x4, int64_t OH, int64_t OW, const int64_t *tab, int64_t dh, int64_t dw, tn_tensor **idx_out) {
    const int64_t N = x4->shape[0], C = x4->shape[1], H = x4->shape[2], W = x4->shape[3];
    int64_t ishape[4] = {N, C, OH, OW}, KH = 0, KW = 0;
    for (int64_t y = 0; y < OH; y++) KH = TN__MAX(KH, (tab[OH + y] - tab[y] + dh - 1) / dh);
    for (int64_t z = 0; z < OW; z++) KW = TN__MAX(KW, (tab[2 * OH + OW + z] - tab[2 * OH + z] + dw - 1) / dw);
    if (x4->device == TN_CPU && (x4->dtype == TN_F32 || x4->dtype == TN_F64) && KH * KW <= 256) {
        bool k22 = dh == 1 && dw == 1 && x4->strides[3] == 1;
        for (int64_t y = 0; y < OH && k22; y++) k22 = tab[y] == 2 * y && tab[OH + y] == 2 * y + 2;
        for (int64_t z = 0; z < OW && k22; z++) k22 = tab[2 * OH + z] == 2 * z && tab[2 * OH + OW + z] == 2 * z + 2;
        tn_tensor *v = tn__new(x4->dtype, TN_CPU, ishape, 4), *codes = tn__own(tn__new(TN_U8, TN_CPU, ishape, 4));
        tn_tensor *tabt = tn__own(tn__new(TN_I64, TN_CPU, TN_SHAPE(2 * (OH + OW))));
        if (!v || !codes || !tabt) { tn_release(v); return NULL; }
        memcpy(tn_data_ptr(tabt), tab, (size_t)(2 * (OH + OW)) * sizeof(int64_t));
        if (x4->dtype == TN_F32) tn__pool_codes_fwd_f32((float *)tn_data_ptr(v), (uint8_t *)tn_data_ptr(codes), x4, tab, OH, OW, dh, dw, KW, k22);
        else tn__pool_codes_fwd_f64((double *)tn_data_ptr(v), (uint8_t *)tn_data_ptr(codes), x4, tab, OH, OW, dh, dw, KW, k22);
        tn_node *nd = tn__fn_node("MaxPool2DWithIndicesBackward0", tn__max_pool_bw, &x4, 1);
        if (nd) {
            const int64_t at[8] = {N, C, H, W, KW, dh, dw, k22};
            memcpy(nd->i, at, sizeof at);
            nd->ni = 8;
            tn__node_save(nd, codes);
            tn__node_save(nd, tabt);
        }
        if (idx_out && !(*idx_out = tn__pool_code_index(codes, tab, W, KW, dh, dw))) { tn__node_release(nd); tn_release(v); return NULL; }
        return tn__own(tn__node_attach(nd, v));
    }
    tn_tensor *idx = tn__own(tn__new(TN_I64, x4->device, ishape, 4));
    if (!idx || tn__backend(x4->device)->pool_argmax(idx, x4, tab, tab + OH, tab + 2 * OH, tab + 2 * OH + OW, dh, dw)) return NULL;
    tn_tensor *v = tn_gather(tn_reshape(x4, TN_SHAPE(N, C, H * W)), 2, tn_reshape(idx, TN_SHAPE(N, C, OH * OW)));
    if (idx_out) *idx_out = idx;
    return tn_reshape(v, ishape, 4);
}
/* The window tables of a pooling geometry g (after tn__pool_counts) over H x W: hs, he
   (rows [hs, he) clipped to the image), ws, we; TN_FREE them. NULL when out of memory. */
/* The 2 (OH + OW) entries of a window table, checked (tn__malloc_n). */
static int64_t *tn__window_table(const char *fn, int64_t OH, int64_t OW) {
    int64_t n;
    bool ok = tn__add_ok(OH, OW, &n) && tn__mul_ok(n, 2, &n);
    return (int64_t *)tn__malloc_n(fn, ok ? n : -1, sizeof(int64_t));
}
static int64_t *tn__pool_table(const char *fn, const int64_t *g, int64_t H, int64_t W) {
    const int64_t OH = g[8], OW = g[9];
    int64_t *tab = tn__window_table(fn, OH, OW);
    if (!tab) return NULL;
    for (int64_t o = 0; o < OH; o++) { tab[o] = o * g[6] - g[4]; tab[OH + o] = TN__MIN(tab[o] + g[2] * (g[0] - 1) + 1, H); }
    for (int64_t o = 0; o < OW; o++) { tab[2 * OH + o] = o * g[7] - g[5]; tab[2 * OH + OW + o] = TN__MIN(tab[2 * OH + o] + g[3] * (g[1] - 1) + 1, W); }
    return tab;
}
/* Average pooling's divisor per output position, as PyTorch's: [OH * OW] of like's dtype,
   on its device. */
static tn_tensor *tn__avg_divisors(const char *fn, const int64_t *g, int64_t H, int64_t W, bool count_include_pad, int64_t divisor_override, tn_tensor *like) {
    const int64_t OH = g[8], OW = g[9];
    double *div = (double *)tn__malloc_n(fn, tn__mul_or(OH, OW, -1), sizeof(double));
    if (!div) return NULL;
    for (int64_t a = 0; a < OH; a++) for (int64_t b = 0; b < OW; b++) {
        int64_t h0 = a * g[6] - g[4], w0 = b * g[7] - g[5];
        int64_t h1 = h0 + g[0] < H + g[4] ? h0 + g[0] : H + g[4], w1 = w0 + g[1] < W + g[5] ? w0 + g[1] : W + g[5];
        int64_t pool = (h1 - h0) * (w1 - w0);
        h0 = h0 < 0 ? 0 : h0; w0 = w0 < 0 ? 0 : w0; h1 = h1 > H ? H : h1; w1 = w1 > W ? W : w1;
        div[a * OW + b] = divisor_override ? (double)divisor_override : count_include_pad ? (double)pool : (double)((h1 - h0) * (w1 - w0));
    }
    tn_tensor *dv = tn_to(tn_to_dtype(tn_from_data(div, TN_SHAPE(OH * OW), TN_F64), like->dtype), like->device);
    TN_FREE(div);
    return dv;
}
/* The backward of library pooling: the backend's, or (create_graph, or declined) the
   composites' own backward with differentiable ops: gather's for max, col2im's for average. */
static int tn__pool_lib_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *y = tn_ctx_saved(n, 1);
    if (!x || !y) return -1;
    const int64_t *g = n->i, mode = n->i[10], N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], OH = g[8], OW = g[9];
    const tn_backend *be = tn__backend(x->device);
    if (tn__grad_disabled && be->pool2d) {
        const int64_t geom[7] = {g[0], g[1], g[6], g[7], g[4], g[5], mode};
        tn_tensor *gc = tn_contiguous(gy), *gx = tn__own(tn__new(x->dtype, x->device, x->shape, 4));
        int r = gc && gx ? be->pool2d(x, y, gc, gx, geom) : -1;
        if (r <= 0) return r ? -1 : ((gin[0] = gx), 0);
    }
    if (mode == 0) {
        int64_t *tab = tn__pool_table("max_pool2d backward", g, H, W);
        tn_tensor *idx = tab ? tn__own(tn__new(TN_I64, x->device, TN_SHAPE(N, C, OH, OW))) : NULL;
        int bad = !idx || be->pool_argmax(idx, x, tab, tab + OH, tab + 2 * OH, tab + 2 * OH + OW, 1, 1);
        TN_FREE(tab);
        if (bad) return -1;
        tn_tensor *z = tn_reshape(tn_zeros_like(x), TN_SHAPE(N, C, H * W));
        gin[0] = tn_reshape(tn_scatter_add(z, 2, tn_reshape(idx, TN_SHAPE(N, C, OH * OW)), tn_reshape(gy, TN_SHAPE(N, C, OH * OW))), x->shape, 4);
    } else {
        tn_tensor *dv = tn__avg_divisors("avg_pool2d backward", g, H, W, mode == 1, 0, x);
        tn_tensor *gc = tn_expand(tn_reshape(tn_div(tn_reshape(gy, TN_SHAPE(N * C, OH * OW)), dv), TN_SHAPE(N * C, 1, OH * OW)), TN_SHAPE(N * C, g[0] * g[1], OH * OW));
        gin[0] = gc ? tn_reshape(tn__col2im(gc, H, W, g), x->shape, 4) : NULL;
    }
    return gin[0] ? 0 : -1;
}
/* Pooling of x4 by the backend's library as one node (mode: tn_backend.pool2d's); NULL
   with *declined set when there is no library pooling for the case. */
static tn_tensor *tn__pool_lib(tn_tensor *x4, const int64_t *g, int64_t mode, const char *name, bool *declined) {
    const tn_backend *be = tn__backend(x4->device);
    *declined = true;
    if (!be->pool2d || g[2] != 1 || g[3] != 1) return NULL;   /* no dilation in the libraries */
    for (int i = 0; i < 2; i++)   /* windows as the floor formula counts them (ceil_mode may add one) */
        if (x4->shape[2 + i] + 2 * g[4 + i] < g[i] || g[8 + i] != (x4->shape[2 + i] + 2 * g[4 + i] - g[i]) / g[6 + i] + 1) return NULL;
    const int64_t geom[7] = {g[0], g[1], g[6], g[7], g[4], g[5], mode};
    tn_tensor *xc = tn_contiguous(x4), *y = xc ? tn__new(x4->dtype, x4->device, TN_SHAPE(x4->shape[0], x4->shape[1], g[8], g[9])) : NULL;
    int r = y ? be->pool2d(xc, y, NULL, NULL, geom) : -1;
    if (r) { tn_release(y); *declined = r > 0; return NULL; }
    *declined = false;
    tn_node *nd = tn__fn_node(name, tn__pool_lib_bw, &x4, 1);
    if (nd) {
        tn__node_geom(nd, g, 1, mode, 0);
        tn__node_save(nd, xc);
        tn__node_save_result(nd, y);
    }
    return tn__own(tn__node_attach(nd, y));
}
static tn_tensor *tn__max_pool(const char *fn, tn_tensor *x, int nsp, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d,
                               bool ceil_mode, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    int64_t g[10];
    if (tn__pool_geometry(fn, nsp, k, s, p, d, g)) return NULL;
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, nsp), *idx = NULL, *y = NULL;
    int64_t *tab = NULL;
    bool declined = true;
    if (x4 && tn__pool_counts(fn, x4, g, ceil_mode)) x4 = NULL;
    if (x4 && !indices) y = tn__pool_lib(x4, g, 0, "MaxPool2DWithIndicesBackward0", &declined);
    if (x4 && declined && (tab = tn__pool_table(fn, g, x4->shape[2], x4->shape[3]))) {
        y = tn__grad_name(tn__max_windows(x4, g[8], g[9], tab, g[2], g[3], indices ? &idx : NULL), "MaxPool2DWithIndicesBackward0");
        TN_FREE(tab);
        if (y && tn__tracing && y->grad_fn && y->grad_fn->custom_bw == tn__max_pool_bw) {   /* tn_trace replays the call: the geometry */
            memcpy(y->grad_fn->i + 8, g, 10 * sizeof(int64_t));
            y->grad_fn->i[18] = ceil_mode;
            y->grad_fn->ni = 19;
        }
    }
    if (y && indices) *indices = tn_keep(tn__pool_output(idx, x, nsp));
    y = y ? tn__pool_output(y, x, nsp) : NULL;
    return tn__scope_return(nsp == 2 ? tn__grad_name(y, "MaxPool2DWithIndicesBackward0") : y);   /* 1-d: SqueezeBackward1, as PyTorch */
}
/* F.max_pool: indices NULL, or return_indices=True */
static tn_tensor *tn__max_pool_kw(const char *fn, const char *what, tn_tensor *x, int nsp, tn_tensor **indices, int64_t ksize, const tn_pool_opts *o) {
    if (indices) *indices = NULL;
    int64_t k[2], st[2], pd[2], dl[2], divisor;
    if (tn__pool_args(fn, what, nsp, true, ksize, o, k, st, pd, dl, &divisor)) return NULL;
    if (o->return_indices && !indices) return (tn_tensor *)tn__error("%s: return_indices: call tn_max_pool%dd_with_indices", fn, nsp);
    return TN__AS(fn, tn__max_pool(fn, x, nsp, k, st, pd, dl, o->ceil_mode, indices));
}
TNDEF tn_tensor *tn_max_pool1d_opts(tn_tensor *x, tn_tensor **indices, int64_t k, tn_pool_opts o) { return tn__max_pool_kw("tn_max_pool1d", "max_pool1d", x, 1, indices, k, &o); }
TNDEF tn_tensor *tn_max_pool2d_opts(tn_tensor *x, tn_tensor **indices, int64_t k, tn_pool_opts o) { return tn__max_pool_kw("tn_max_pool2d", "max_pool2d", x, 2, indices, k, &o); }
TNDEF tn_tensor *tn_max_pool1d_str(tn_tensor *x, tn_tensor **indices, int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_max_pool1d", true, options, &o) ? NULL : tn_max_pool1d_opts(x, indices, k, o);
}
TNDEF tn_tensor *tn_max_pool2d_str(tn_tensor *x, tn_tensor **indices, int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_max_pool2d", true, options, &o) ? NULL : tn_max_pool2d_opts(x, indices, k, o);
}
/* Adaptive windows: [floor(i*in/out), ceil((i+1)*in/out)). The caller checks that
   (out + 1) * in fits (tn__adaptive_fits). */
static int tn__adaptive_fits(const char *fn, int64_t in, int64_t out) {
    int64_t r;
    if (!tn__mul_ok(in, out, &r) || !tn__add_ok(r, in, &r))
        return TN__FAIL_INT("%s: output size %lld is too large for an input size of %lld", fn, (long long)out, (long long)in);
    return 0;
}
static void tn__adaptive_table(int64_t in, int64_t out, int64_t *start, int64_t *end) {
    for (int64_t i = 0; i < out; i++) { start[i] = i * in / out; end[i] = ((i + 1) * in + out - 1) / out; }
}
static tn_tensor *tn__adaptive_max_pool(const char *fn, tn_tensor *x, int64_t OH, int64_t OW, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (OH <= 0 || OW <= 0) return (tn_tensor *)tn__error("%s: output size (%lld, %lld) must be positive", fn, (long long)OH, (long long)OW);
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, 2), *idx = NULL, *y = NULL;
    /* the output's size first: the window tables are sized by it */
    if (x4 && (tn__check_shape(fn, TN_SHAPE(x4->shape[0], x4->shape[1], OH, OW)) || tn__adaptive_fits(fn, x4->shape[2], OH) ||
               tn__adaptive_fits(fn, x4->shape[3], OW))) x4 = NULL;
    int64_t *tab = x4 ? tn__window_table(fn, OH, OW) : NULL;
    if (tab) {
        tn__adaptive_table(x4->shape[2], OH, tab, tab + OH);
        tn__adaptive_table(x4->shape[3], OW, tab + 2 * OH, tab + 2 * OH + OW);
        y = tn__grad_name(tn__max_windows(x4, OH, OW, tab, 1, 1, indices ? &idx : NULL), "AdaptiveMaxPool2DBackward0");
        TN_FREE(tab);
    }
    if (y && indices) *indices = tn_keep(tn__pool_output(idx, x, 2));
    return tn__scope_return(y ? tn__grad_name(tn__pool_output(y, x, 2), "AdaptiveMaxPool2DBackward0") : NULL);
}
TNDEF tn_tensor *tn_adaptive_max_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w, tn_tensor **indices) {
    return TN__AS("tn_adaptive_max_pool2d", tn__adaptive_max_pool("tn_adaptive_max_pool2d", x, out_h, out_w, indices));
}
/* Average pooling: window sums by im2col of each plane, divided per window as PyTorch. */
static tn_tensor *tn__avg_pool(const char *fn, tn_tensor *x, int nsp, const int64_t *k, const int64_t *s, const int64_t *p,
                               bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
    TN__CHECK_NULL(x);
    int64_t g[10];
    if (tn__pool_geometry(fn, nsp, k, s, p, NULL, g)) return NULL;
    for (int i = 0; i < 2; i++)
        if (g[4 + i] > g[i] / 2) return (tn_tensor *)tn__error("%s: pad should be smaller than or equal to half of kernel size, but got pad=%lld, kernel_size=%lld", fn, (long long)g[4 + i], (long long)g[i]);
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, nsp), *y = NULL;
    bool declined = true;
    if (x4 && tn__pool_counts(fn, x4, g, ceil_mode)) x4 = NULL;
    if (x4 && !divisor_override) y = tn__pool_lib(x4, g, count_include_pad ? 1 : 2, "AvgPool2DBackward0", &declined);
    /* tn_trace records the call as one node (the geometry and ceil_mode, replayed and
       exported as avg_pool2d / AveragePool), not the composite's im2col below */
    const bool one_node = x4 && declined && tn__tracing && !divisor_override && x4->requires_grad;
    if (x4 && declined) {
        int64_t N = x4->shape[0], C = x4->shape[1], H = x4->shape[2], W = x4->shape[3], OH = g[8], OW = g[9];
        if (one_node) tn_no_grad_begin();
        tn_tensor *dv = tn__avg_divisors(fn, g, H, W, count_include_pad, divisor_override, x4);
        tn_tensor *planes = tn_reshape(x4, TN_SHAPE(N * C, 1, H, W));
        tn_tensor *sums = planes && dv ? tn_sum_dims(tn__im2col(planes, g), TN_SHAPE(1)) : NULL;
        y = tn_reshape(tn_div(sums, dv), TN_SHAPE(N, C, OH, OW));
        if (one_node) {
            tn_no_grad_end();
            tn_node *nd = y ? tn__fn_node("AvgPool2DBackward0", tn__pool_lib_bw, &x4, 1) : NULL;
            if (nd) {
                tn__node_geom(nd, g, 2, count_include_pad ? 1 : 2, ceil_mode);
                tn__node_save(nd, x4);
                tn__node_save_result(nd, y);
                y = tn__own(tn__node_attach(nd, tn__view_of(y, y->shape, y->strides, y->ndim, y->offset)));
            }
        }
    }
    y = y ? tn__pool_output(y, x, nsp) : NULL;
    return tn__scope_return(nsp == 2 ? tn__grad_name(y, "AvgPool2DBackward0") : y);   /* 1-d: SqueezeBackward1, as PyTorch */
}
static tn_tensor *tn__avg_pool_kw(const char *fn, const char *what, tn_tensor *x, int nsp, int64_t ksize, const tn_pool_opts *o) {
    int64_t k[2], st[2], pd[2], dl[2], divisor;
    if (tn__pool_args(fn, what, nsp, false, ksize, o, k, st, pd, dl, &divisor)) return NULL;
    return TN__AS(fn, tn__avg_pool(fn, x, nsp, k, st, pd, o->ceil_mode, o->count_include_pad, divisor));
}
TNDEF tn_tensor *tn_avg_pool1d_opts(tn_tensor *x, int64_t k, tn_pool_opts o) { return tn__avg_pool_kw("tn_avg_pool1d", "avg_pool1d", x, 1, k, &o); }
TNDEF tn_tensor *tn_avg_pool2d_opts(tn_tensor *x, int64_t k, tn_pool_opts o) { return tn__avg_pool_kw("tn_avg_pool2d", "avg_pool2d", x, 2, k, &o); }
TNDEF tn_tensor *tn_avg_pool1d_str(tn_tensor *x, int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_avg_pool1d", false, options, &o) ? NULL : tn_avg_pool1d_opts(x, k, o);
}
TNDEF tn_tensor *tn_avg_pool2d_str(tn_tensor *x, int64_t k, const char *options) {
    tn_pool_opts o;
    return tn__pool_parse("tn_avg_pool2d", false, options, &o) ? NULL : tn_avg_pool2d_opts(x, k, o);
}
/* A [out, in] matrix that averages (adaptive pooling) or interpolates (linear resizing)
   along one dim; applied on both sides it resizes a plane: M_h @ x @ M_w^T. */
static tn_tensor *tn__resize_matrix(const char *fn, int kind, int64_t in, int64_t out, double scale, bool align_corners, const tn_tensor *like) {
    int64_t n;
    if (!tn__mul_ok(in, out, &n)) return (tn_tensor *)tn__error("%s: resizing %lld to %lld is too large", fn, (long long)in, (long long)out);
    double *m = (double *)tn__malloc_n(fn, n, sizeof(double));
    if (!m) return NULL;
    memset(m, 0, (size_t)n * sizeof(double));
    for (int64_t i = 0; i < out; i++) {
        if (kind == 0) { /* adaptive average */
            int64_t a = i * in / out, b = ((i + 1) * in + out - 1) / out;
            for (int64_t j = a; j < b; j++) m[i * in + j] = 1.0 / (double)(b - a);
        } else {          /* linear interpolation, PyTorch's source index */
            double src = align_corners ? (double)i * scale : ((double)i + 0.5) * scale - 0.5;
            if (src < 0) src = 0;
            if (src > (double)(in - 1)) src = (double)(in - 1);   /* before converting: the same weights, no undefined cast */
            int64_t j0 = (int64_t)src;
            int64_t j1 = j0 + (j0 < in - 1 ? 1 : 0);
            double l1 = src - (double)j0;
            m[i * in + j0] += 1 - l1;
            m[i * in + j1] += l1;
        }
    }
    tn_tensor *t = tn_to(tn_to_dtype(tn_from_data(m, TN_SHAPE(out, in), TN_F64), like->dtype), like->device);
    TN_FREE(m);
    return t;
}
static tn_tensor *tn__adaptive_avg_pool(const char *fn, tn_tensor *x, int64_t OH, int64_t OW) {
    TN__CHECK_NULL(x);
    if (OH <= 0 || OW <= 0) return (tn_tensor *)tn__error("%s: output size (%lld, %lld) must be positive", fn, (long long)OH, (long long)OW);
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, 2), *y = NULL;
    if (x4 && (tn__check_shape(fn, TN_SHAPE(x4->shape[0], x4->shape[1], OH, OW)) || tn__adaptive_fits(fn, x4->shape[2], OH) ||
               tn__adaptive_fits(fn, x4->shape[3], OW))) x4 = NULL;   /* the output's size first */
    if (x4 && OH == 1 && OW == 1) y = tn_mean_dims(x4, TN_SHAPE(2, 3), .keepdim = true);   /* global pooling */
    else if (x4) {
        tn_tensor *mh = x4->shape[2] == OH ? NULL : tn__resize_matrix(fn, 0, x4->shape[2], OH, 0, false, x4);
        tn_tensor *mw = x4->shape[3] == OW ? NULL : tn__resize_matrix(fn, 0, x4->shape[3], OW, 0, false, x4);
        if ((x4->shape[2] != OH && !mh) || (x4->shape[3] != OW && !mw)) y = NULL;   /* a matrix could not be made */
        else {
            y = mh ? tn_matmul(mh, x4) : x4;
            y = mw ? tn_matmul(y, tn_t(mw)) : y == x4 ? tn_clone(y) : y;   /* never the caller's tensor: it gets renamed below */
        }
    }
    y = y ? tn__pool_output(y, x, 2) : NULL;
    return tn__scope_return(OH == 1 && OW == 1 ? y : tn__grad_name(y, "AdaptiveAvgPool2DBackward0"));   /* 1x1: MeanBackward1, as PyTorch */
}
TNDEF tn_tensor *tn_adaptive_avg_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w) {
    return TN__AS("tn_adaptive_avg_pool2d", tn__adaptive_avg_pool("tn_adaptive_avg_pool2d", x, out_h, out_w));
}
