/* The packed, cache-blocked GEMM (tn__gemm_f32 / tn__gemm_f64): any strides, run-time
   AVX-512 / AVX2 micro-kernels. */
/* ============================================================================
 * GEMM: tn__gemm_f32 / tn__gemm_f64
 *
 *   C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C[M,N]
 *
 * Every operand is (base pointer, row stride, column stride), strides in
 * elements, so any strided 2-D view (transposed = swapped strides, every 2nd
 * column, ...) multiplies without a copy.  beta == 0 writes C without reading
 * it (NaN/Inf in C do not propagate), as in BLAS; alpha == 0 or K == 0 does
 * not read A or B.  Returns 0, or -1 if the packing buffers could not be
 * allocated (C is untouched then).
 *
 * Scheme (BLIS / GotoBLAS):
 *
 *   for jc in 0..N step NC            B panel  KC x NC   -> lives in L3
 *     for pc in 0..K step KC            pack B[pc:+KC, jc:+NC] into NR-wide
 *                                       column micro-panels, zero padded
 *       for ic in 0..M step MC          A block  MC x KC   -> lives in L2
 *         pack A[ic:+MC, pc:+KC] into MR-tall row micro-panels, zero padded
 *         for jr in 0..NC step NR       B micro-panel KC x NR -> L1/L2
 *           for ir in 0..MC step MR
 *             micro-kernel: MR x NR tile of C += A micro-panel @ B micro-panel
 *
 * Packing makes the operands' strides irrelevant to the inner loops (and
 * absorbs transposes for free): the micro-kernel always reads Ap[k*MR + i]
 * and Bp[k*NR + j] sequentially.  It keeps the whole MR x NR tile of C in
 * registers for the full KC loop, vectorised along N, and applies alpha/beta
 * only when storing.  beta is used on the first KC slice, 1 afterwards.
 * Edge tiles (M % MR, N % NR) and C without a unit column stride are computed
 * into a small temporary tile and copied out with alpha/beta.  A C with unit
 * *row* stride (column-major) is handled by computing C^T = B^T A^T instead,
 * so the kernel's vector stores still hit contiguous memory; so is a C narrower than
 * half a micro-tile but at least NR tall (a linear layer with 10 outputs, a convolution's
 * weight gradient with C*kh*kw = 9), where the lanes would otherwise idle.  With at most
 * 3 row panels (small M), a row-major B is read in place ("direct B"): a packed panel
 * would be reused too few times to pay for its packing.  Transposed B is packed 16 k at
 * a time, so the panel rows being written stay in L1.
 *
 * Micro-kernels, picked once at run time (the library is built for baseline
 * x86-64, so the fast paths carry their own target attributes):
 *   AVX-512F  f32 12x32, f64 12x16  (24 zmm accumulators)
 *   AVX2+FMA  f32  6x16, f64  6x8   (12 ymm accumulators)
 *   portable  f32  4x8,  f64  4x4   (plain C, auto-vectorisable)
 * Blocking, tuned by measurement on AMD Zen 4 (32 KiB L1d, 1 MiB L2 per
 * core, 32 MiB shared L3); the results are flat within a few percent around
 * these values:
 *            KC    MC    NC     A block MCxKC   B panel KCxNC   B micro-panel
 *   f32     512    96  4096     192 KiB (L2)    8 MiB (L3)      64 KiB (L1/L2)
 *   f64     256    60  4096     120 KiB (L2)    8 MiB (L3)      32 KiB (L1/L2)
 * (MC is a multiple of both 12 and 6.)  Each k step of the kernel does 2*MR
 * FMAs per 2 + MR loads, so streaming the packed panels from L2 keeps up.
 * Tiny products (M*N*K <= 4096) skip packing and use a direct triple loop; one or two
 * rows of A against a B stored by columns (a linear layer at batch 1) are dot products
 * that read B in place (the row path: packing B would cost more than the product).
 * The epilogue (tn__gemm_ep_*, tn__gemm_epi): a bias per row or per column and an
 * activation applied to each tile right after the micro-kernel stores it (still in L1),
 * instead of a broadcast copy of the bias into C before and an activation pass after.
 * The packing buffer is cached between calls (see tn__gemm_buf_get).
 * With threads (core/threads.c's pool) the ic loop is split across them, each
 * packing its own A block; the packed B panel is shared.
 * ========================================================================== */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__GEMM_X86 1
#else
#define TN__GEMM_X86 0
#endif
#if defined(__GNUC__) || defined(__clang__)
#define TN__GEMM_GNUC 1 /* __atomic builtins, __attribute__ */
#define TN__GEMM_MAYBE_UNUSED __attribute__((unused))
#else
#define TN__GEMM_GNUC 0
#define TN__GEMM_MAYBE_UNUSED
#endif

/* micro-kernel: C[0:MR, 0:NR] (row stride rsc, column stride 1)
 *   = alpha * (Ap panel @ Bp panel) + beta * S,  S not read when beta == 0.
 * A[i, k] of the panel is Ap[i*ars + k*aks]: ars = 1, aks = MR for a packed panel; A's own
 * strides when A is read in place (see "direct A" below).
 * S is C itself (S = C, rss = rsc), or the epilogue's bias row (rss = 0: the same row for
 * every row of the tile).
 * Row k of the B panel starts at Bp + k*ldb: ldb = NR for a packed panel, B's own row
 * stride when B is read in place (see "direct B" below). */
typedef void (*tn__gemm_ukr_f32)(int64_t kc, const float *Ap, int64_t ars, int64_t aks, const float *Bp, int64_t ldb,
                                 float *C, int64_t rsc, float alpha, float beta, const float *S, int64_t rss);
typedef void (*tn__gemm_ukr_f64)(int64_t kc, const double *Ap, int64_t ars, int64_t aks, const double *Bp, int64_t ldb,
                                 double *C, int64_t rsc, double alpha, double beta, const double *S, int64_t rss);

enum { TN__GEMM_SCALAR = 0, TN__GEMM_AVX2 = 1, TN__GEMM_AVX512 = 2 };

/* Knobs for tests/benchmarks only (tn__gemm_tune_t: section 17's white-box hooks). */
TN__TESTABLE tn__gemm_tune_t tn__gemm_tune = { -1, 0, 0, 0, -1, 0, 0 };
/* A B packed ahead (the graph replay's constant weights, src/jit/trace.c): the panels of its
   (jc, pc) blocks in the GEMM's loop order, for that B (address, strides, size) and blocking.
   This thread's next GEMMs on that B read them instead of packing B: the same panels, the
   same bits. P NULL: none. over_direct: read also where the GEMM would read B in place (a few
   row panels; the fused RNNs' steps, src/modules/rnn.c: packed once for a whole sequence). */
typedef struct { const void *B, *P; int64_t rsb, csb, K, N, kc, nc, nr; int over_direct; } tn__gemm_bpre;
static TN__TLS tn__gemm_bpre tn__gemm_bpre_on;

static int tn__gemm_detect_isa(void)
{
#if TN__GEMM_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return TN__GEMM_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return TN__GEMM_AVX2;
#endif
    return TN__GEMM_SCALAR;
}

TN__TESTABLE int tn__gemm_isa(void)
{
    static int cached = -1; /* every thread would compute the same value */
#if TN__GEMM_GNUC
    int isa = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (isa < 0) __atomic_store_n(&cached, isa = tn__gemm_detect_isa(), __ATOMIC_RELAXED);
#else
    int isa = cached;
    if (isa < 0) cached = isa = tn__gemm_detect_isa();
#endif
    if (tn__gemm_tune.isa >= 0 && tn__gemm_tune.isa < isa) isa = tn__gemm_tune.isa;
    return isa;
}

/* ---------------------------------------------------------------------------
 * Portable micro-kernels.  Fixed trip counts so compilers vectorise the j loop.
 * ------------------------------------------------------------------------- */
#define TN__GEMM_SC_MR 4
#define TN__GEMM_SC_NR32 8
#define TN__GEMM_SC_NR64 4

/* The portable micro-kernel, one definition for both precisions: an MR x NR tile of C
   accumulated over kc packed columns, then C = alpha * acc + beta * C. */
/* @template TN__GEMM_DEFINE_UKR_SCALAR(T, SFX, NR) */
static void tn__gemm_ukr_scalar_##SFX(int64_t kc, const T *Ap, int64_t ars, int64_t aks, const T *Bp, int64_t ldb,
                                      T *C, int64_t rsc, T alpha, T beta, const T *S, int64_t rss)
{
    T acc[TN__GEMM_SC_MR * NR];
    int64_t k;
    int i, j;
    for (i = 0; i < TN__GEMM_SC_MR * NR; i++) acc[i] = 0;
    for (k = 0; k < kc; k++, Ap += aks, Bp += ldb)
        for (i = 0; i < TN__GEMM_SC_MR; i++)
            for (j = 0; j < NR; j++) acc[i * NR + j] += Ap[i * ars] * Bp[j];
    for (i = 0; i < TN__GEMM_SC_MR; i++)
        for (j = 0; j < NR; j++) {
            T *c = C + i * rsc + j;
            *c = beta == 0 ? alpha * acc[i * NR + j] : alpha * acc[i * NR + j] + beta * S[i * rss + j];
        }
}
/* @end TN__GEMM_DEFINE_UKR_SCALAR */
TN__GEMM_DEFINE_UKR_SCALAR(float, f32, TN__GEMM_SC_NR32)
TN__GEMM_DEFINE_UKR_SCALAR(double, f64, TN__GEMM_SC_NR64)

#if TN__GEMM_X86
/* ---------------------------------------------------------------------------
 * SIMD micro-kernels: one template (TN__GEMM_SIMD_KERNEL) instantiated for
 * AVX-512 and AVX2 x f32/f64, parameterised by these per-instance macros:
 *   TN__GEMM_VT vector type, TN__GEMM_ET element type, TN__GEMM_V lanes,
 *   TN__GEMM_LD / TN__GEMM_ST unaligned load / store, TN__GEMM_SET1 broadcast,
 *   TN__GEMM_ZERO, TN__GEMM_MUL, TN__GEMM_FMA(a, b, c) = a*b + c.
 * Tile row r lives in two accumulators, c<r>a (columns 0..V-1) and c<r>b
 * (columns V..2V-1): named variables, not an array, and rows unrolled by
 * macros, so the tile stays in registers at any optimisation level.  One k
 * step = 2 vector loads of B, MR broadcasts of A, 2*MR independent FMAs
 * (24 for MR = 12: enough to cover FMA latency x throughput).
 * ------------------------------------------------------------------------- */
#define TN__GEMM_ROWS2(X) X(0) X(1)
#define TN__GEMM_ROWS4(X) X(0) X(1) X(2) X(3)
#define TN__GEMM_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define TN__GEMM_ROWS8(X) TN__GEMM_ROWS6(X) X(6) X(7)
#define TN__GEMM_ROWS12(X) TN__GEMM_ROWS6(X) X(6) X(7) X(8) X(9) X(10) X(11)

#define TN__GEMM_ROW_ZERO(r) TN__GEMM_VT c##r##a = TN__GEMM_ZERO(), c##r##b = c##r##a;
/* touch both ends of the C row so it is in L1 by the time it is stored */
#define TN__GEMM_ROW_PREFETCH(r)                                                   \
    _mm_prefetch((const char *)(C + (r) * rsc), _MM_HINT_T0);                      \
    _mm_prefetch((const char *)(C + (r) * rsc + 2 * TN__GEMM_V - 1), _MM_HINT_T0);
#define TN__GEMM_ROW_FMA(r)                                                        \
    {                                                                              \
        TN__GEMM_VT a_ = TN__GEMM_SET1(Ap[(r) * ars]);                             \
        c##r##a = TN__GEMM_FMA(a_, b0, c##r##a);                                   \
        c##r##b = TN__GEMM_FMA(a_, b1, c##r##b);                                   \
    }
#define TN__GEMM_ROW_STORE(r)                                                      \
    {                                                                              \
        TN__GEMM_ET *c_ = C + (r) * rsc;                                           \
        if (beta == 0) { /* C must not be read */                                  \
            TN__GEMM_ST(c_, TN__GEMM_MUL(va, c##r##a));                            \
            TN__GEMM_ST(c_ + TN__GEMM_V, TN__GEMM_MUL(va, c##r##b));               \
        } else {                                                                   \
            const TN__GEMM_ET *s_ = S + (r) * rss;                                 \
            TN__GEMM_VT o0_ = TN__GEMM_LD(s_), o1_ = TN__GEMM_LD(s_ + TN__GEMM_V); \
            TN__GEMM_ST(c_, TN__GEMM_FMA(va, c##r##a, TN__GEMM_MUL(vb, o0_)));     \
            TN__GEMM_ST(c_ + TN__GEMM_V, TN__GEMM_FMA(va, c##r##b, TN__GEMM_MUL(vb, o1_))); \
        }                                                                          \
    }

/* @template TN__GEMM_SIMD_KERNEL(name, isa_str, MR, ROWS) */
__attribute__((target(isa_str)))
static void name(int64_t kc, const TN__GEMM_ET *Ap, int64_t ars, int64_t aks, const TN__GEMM_ET *Bp,
                 int64_t ldb, TN__GEMM_ET *C, int64_t rsc, TN__GEMM_ET alpha,
                 TN__GEMM_ET beta, const TN__GEMM_ET *S, int64_t rss)
{
    ROWS(TN__GEMM_ROW_ZERO)
    TN__GEMM_VT va, vb;
    int64_t k;
    ROWS(TN__GEMM_ROW_PREFETCH)
    for (k = 0; k < kc; k++) {
        TN__GEMM_VT b0 = TN__GEMM_LD(Bp), b1 = TN__GEMM_LD(Bp + TN__GEMM_V);
        /* B panel a few steps ahead (the hardware prefetcher does the rest) */
        _mm_prefetch((const char *)(Bp + 16 * ldb), _MM_HINT_T0);
        ROWS(TN__GEMM_ROW_FMA)
        Ap += aks;
        Bp += ldb;
    }
    va = TN__GEMM_SET1(alpha);
    vb = TN__GEMM_SET1(beta);
    ROWS(TN__GEMM_ROW_STORE)
}
/* @end TN__GEMM_SIMD_KERNEL */

/* AVX-512F, f32: 12 x 32 */
#define TN__GEMM_VT __m512
#define TN__GEMM_ET float
#define TN__GEMM_V 16
#define TN__GEMM_LD _mm512_loadu_ps
#define TN__GEMM_ST _mm512_storeu_ps
#define TN__GEMM_SET1 _mm512_set1_ps
#define TN__GEMM_ZERO _mm512_setzero_ps
#define TN__GEMM_MUL _mm512_mul_ps
#define TN__GEMM_FMA _mm512_fmadd_ps
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512_f32, "avx512f", 12, TN__GEMM_ROWS12)
/* 8 x 32 for M a multiple of 8 but not of 12 (64 channels: 8 panels, not 6 with 8 wasted rows) */
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512x8_f32, "avx512f", 8, TN__GEMM_ROWS8)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512r4_f32, "avx512f", 4, TN__GEMM_ROWS4)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512r2_f32, "avx512f", 2, TN__GEMM_ROWS2)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA
/* AVX-512F, f64: 12 x 16 */
#define TN__GEMM_VT __m512d
#define TN__GEMM_ET double
#define TN__GEMM_V 8
#define TN__GEMM_LD _mm512_loadu_pd
#define TN__GEMM_ST _mm512_storeu_pd
#define TN__GEMM_SET1 _mm512_set1_pd
#define TN__GEMM_ZERO _mm512_setzero_pd
#define TN__GEMM_MUL _mm512_mul_pd
#define TN__GEMM_FMA _mm512_fmadd_pd
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512_f64, "avx512f", 12, TN__GEMM_ROWS12)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512r4_f64, "avx512f", 4, TN__GEMM_ROWS4)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512r2_f64, "avx512f", 2, TN__GEMM_ROWS2)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA
/* AVX2 + FMA, f32: 6 x 16 */
#define TN__GEMM_VT __m256
#define TN__GEMM_ET float
#define TN__GEMM_V 8
#define TN__GEMM_LD _mm256_loadu_ps
#define TN__GEMM_ST _mm256_storeu_ps
#define TN__GEMM_SET1 _mm256_set1_ps
#define TN__GEMM_ZERO _mm256_setzero_ps
#define TN__GEMM_MUL _mm256_mul_ps
#define TN__GEMM_FMA _mm256_fmadd_ps
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2_f32, "avx2,fma", 6, TN__GEMM_ROWS6)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2r4_f32, "avx2,fma", 4, TN__GEMM_ROWS4)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2r2_f32, "avx2,fma", 2, TN__GEMM_ROWS2)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA
/* AVX2 + FMA, f64: 6 x 8 */
#define TN__GEMM_VT __m256d
#define TN__GEMM_ET double
#define TN__GEMM_V 4
#define TN__GEMM_LD _mm256_loadu_pd
#define TN__GEMM_ST _mm256_storeu_pd
#define TN__GEMM_SET1 _mm256_set1_pd
#define TN__GEMM_ZERO _mm256_setzero_pd
#define TN__GEMM_MUL _mm256_mul_pd
#define TN__GEMM_FMA _mm256_fmadd_pd
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2_f64, "avx2,fma", 6, TN__GEMM_ROWS6)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2r4_f64, "avx2,fma", 4, TN__GEMM_ROWS4)
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2r2_f64, "avx2,fma", 2, TN__GEMM_ROWS2)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA

#undef TN__GEMM_ROW_ZERO
#undef TN__GEMM_ROW_PREFETCH
#undef TN__GEMM_ROW_FMA
#undef TN__GEMM_ROW_STORE
#undef TN__GEMM_ROWS6
#undef TN__GEMM_ROWS8
#undef TN__GEMM_ROWS12
#endif /* TN__GEMM_X86 */

/* ---------------------------------------------------------------------------
 * Kernel table.  kc/mc/nc: cache blocking (mc a multiple of mr, nc of nr).
 * ukr2/ukr4 (NULL: ukr): the same kernel for the first 2 / 4 rows of a panel, for
 * the last, ragged panel (M = 32 on the 6-row kernel: 6 panels, the last of 2 rows
 * computed as 6); each output element gets the same operations, so the same bits.
 * ------------------------------------------------------------------------- */
typedef struct tn__gemm_kern_f32 {
    int mr, nr;
    int64_t kc, mc, nc;
    tn__gemm_ukr_f32 ukr, ukr2, ukr4;
} tn__gemm_kern_f32;
typedef struct tn__gemm_kern_f64 {
    int mr, nr;
    int64_t kc, mc, nc;
    tn__gemm_ukr_f64 ukr, ukr2, ukr4;
} tn__gemm_kern_f64;

#define TN__GEMM_MAX_TILE 512 /* >= mr*nr of every kernel (12*32 = 384) */

static tn__gemm_kern_f32 tn__gemm_kern_select_f32(void)
{
    tn__gemm_kern_f32 k = { TN__GEMM_SC_MR, TN__GEMM_SC_NR32, 256, 128, 4096, tn__gemm_ukr_scalar_f32, NULL, NULL };
#if TN__GEMM_X86
    int isa = tn__gemm_isa();
    if (isa == TN__GEMM_AVX512) {
        tn__gemm_kern_f32 k5 = { 12, 32, 512, 96, 4096, tn__gemm_ukr_avx512_f32, tn__gemm_ukr_avx512r2_f32, tn__gemm_ukr_avx512r4_f32 };
        k = k5;
    } else if (isa == TN__GEMM_AVX2) {
        tn__gemm_kern_f32 k2 = { 6, 16, 512, 96, 4096, tn__gemm_ukr_avx2_f32, tn__gemm_ukr_avx2r2_f32, tn__gemm_ukr_avx2r4_f32 };
        k = k2;
    }
#endif
    return k;
}

static tn__gemm_kern_f64 tn__gemm_kern_select_f64(void)
{
    tn__gemm_kern_f64 k = { TN__GEMM_SC_MR, TN__GEMM_SC_NR64, 256, 64, 2048, tn__gemm_ukr_scalar_f64, NULL, NULL };
#if TN__GEMM_X86
    int isa = tn__gemm_isa();
    if (isa == TN__GEMM_AVX512) {
        tn__gemm_kern_f64 k5 = { 12, 16, 256, 60, 4096, tn__gemm_ukr_avx512_f64, tn__gemm_ukr_avx512r2_f64, tn__gemm_ukr_avx512r4_f64 };
        k = k5;
    } else if (isa == TN__GEMM_AVX2) {
        tn__gemm_kern_f64 k2 = { 6, 8, 256, 60, 4096, tn__gemm_ukr_avx2_f64, tn__gemm_ukr_avx2r2_f64, tn__gemm_ukr_avx2r4_f64 };
        k = k2;
    }
#endif
    return k;
}

/* round x up to a multiple of m */
static int64_t tn__gemm_roundup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The kernel for a product of M rows: the 8-row AVX-512 f32 kernel where its panels waste
   fewer rows than the 12-row one's (M = 64: 64 rows computed instead of 72). */
static tn__gemm_kern_f32 tn__gemm_kern_for_f32(int64_t M)
{
    tn__gemm_kern_f32 k = tn__gemm_kern_select_f32();
#if TN__GEMM_X86
    if (k.mr == 12 && k.ukr == tn__gemm_ukr_avx512_f32 && tn__gemm_roundup(M, 8) < tn__gemm_roundup(M, 12)) {
        k.mr = 8;
        k.ukr = tn__gemm_ukr_avx512x8_f32;
    }
#endif
    return k;
}
static tn__gemm_kern_f64 tn__gemm_kern_for_f64(int64_t M) { (void)M; return tn__gemm_kern_select_f64(); }


/* ---------------------------------------------------------------------------
 * Packing buffer.  Allocating it per call makes glibc map/unmap and page-fault
 * fresh memory every time for mid sizes (measured: -15% single-threaded at
 * n = 200..400, -40% with 2 threads at n = 256), so one buffer is kept and
 * reused, grow-only (at most ~8.5 MiB + 200 KiB per extra OpenMP thread with
 * the blocking below).  It is claimed with an atomic flag; a caller that finds
 * it in use (another thread multiplying concurrently) allocates its own for
 * the call.  Without GCC/Clang atomics every call allocates.
 * tn__gemm_free_cache() hands the cached buffer back to TN_FREE.
 * ------------------------------------------------------------------------- */
static void *tn__gemm_cache_ptr = NULL;
static size_t tn__gemm_cache_cap = 0;
TN__TESTABLE int tn__gemm_cache_busy = 0;

static void *tn__gemm_buf_get(size_t need, int *cached)
{
#if TN__GEMM_GNUC
    if (__atomic_exchange_n(&tn__gemm_cache_busy, 1, __ATOMIC_ACQUIRE) == 0) {
        if (tn__gemm_cache_cap < need) {
            if (tn__gemm_cache_ptr) TN_FREE(tn__gemm_cache_ptr); /* free first: lower peak */
            tn__gemm_cache_ptr = TN_MALLOC(need);
            tn__gemm_cache_cap = tn__gemm_cache_ptr ? need : 0;
            if (!tn__gemm_cache_ptr) {
                __atomic_store_n(&tn__gemm_cache_busy, 0, __ATOMIC_RELEASE);
                return NULL;
            }
        }
        *cached = 1;
        return tn__gemm_cache_ptr;
    }
#else
    (void)tn__gemm_cache_busy;
#endif
    *cached = 0;
    return TN_MALLOC(need);
}

static void tn__gemm_buf_put(void *p, int cached)
{
#if TN__GEMM_GNUC
    if (cached) {
        __atomic_store_n(&tn__gemm_cache_busy, 0, __ATOMIC_RELEASE);
        return;
    }
#else
    (void)cached;
#endif
    TN_FREE(p);
}

/* Free the cached packing buffer (no-op while another thread is using it). */
TN__GEMM_MAYBE_UNUSED TN__TESTABLE void tn__gemm_free_cache(void)
{
#if TN__GEMM_GNUC
    if (__atomic_exchange_n(&tn__gemm_cache_busy, 1, __ATOMIC_ACQUIRE) != 0) return;
#endif
    if (tn__gemm_cache_ptr) TN_FREE(tn__gemm_cache_ptr);
    tn__gemm_cache_ptr = NULL;
    tn__gemm_cache_cap = 0;
#if TN__GEMM_GNUC
    __atomic_store_n(&tn__gemm_cache_busy, 0, __ATOMIC_RELEASE);
#endif
}

/* The driver's loop over the M blocks (its locals by name): pack the A block of
 * thread TID, multiply it by the current B panel. */
/* M blocks [b0, b1) (of mstep rows) of one (jc, pc) step, packing A into Apt */
#define TN__GEMM_IC_LOOP(T, SFX, b0, b1, Apt)                                             \
    for (ic = (b0) * mstep; ic < M && ic < (b1) * mstep; ic += mstep) {                   \
        int64_t mcb = M - ic < mstep ? M - ic : mstep;                                    \
        const int64_t mfull = adirect ? mcb / kn.mr * kn.mr : 0;                          \
        if (mfull < mcb) /* all of the block, or (direct A) its ragged last panel only */  \
            tn__gemm_packA_##SFX(mcb - mfull, kcb, A + (ic + mfull) * rsa + pc * csa, rsa, \
                                 csa, kn.mr, Apt + mfull * kcb);                          \
        tn__gemm_macro_##SFX(&kn, mcb, ncb, kcb, alpha, Apt,                              \
                             adirect ? A + ic * rsa + pc * csa : NULL, rsa, csa,          \
                             Bp, Bd, rsb, beta_p,                                         \
                             C + ic * rsc + jc * csc, rsc, csc, ep, ic, jc, first, last); \
    }
/* Threads for an M x N x K product: the work model (a multiply-add in the packed kernels
   counts 1/TN__GEMM_UNIT of a work unit; 2 threads from about 4e6) and whole MR panels
   per thread; tn__gemm_tune.threads (tests) overrides the count, not the nesting rule. */
#define TN__GEMM_UNIT 64
static int64_t tn__gemm_threads(int64_t M, int64_t N, int64_t K, int64_t mr) {
    int max = tn__max_threads();
    if (tn__gemm_tune.threads > 0 && max > 1) max = tn__gemm_tune.threads;
    return tn__threads_for((double)M * (double)N * (double)K / TN__GEMM_UNIT, (M + mr - 1) / mr, max);
}

/* The transposing copy of packing: P[k*ld + i] = a[i*rsa + k] for i < rows, k < kc (rows of
 * A along K, or columns of a transposed B). In 4x4 (float) or 2x2 (double) SSE transposes,
 * in blocks of 64 k so the panel rows being written stay in L1; 3x faster than the scalar
 * loop on the training steps' shapes. */
#if TN__GEMM_X86
/* Rows [0, rows rounded down to 8) of tn__gemm_packT_f32 in 8x8 AVX transposes (half the
   loads, stores and shuffles per element of the 4x4 SSE ones); returns the rows done. */
__attribute__((target("avx"))) static int64_t tn__gemm_packT8_f32(int64_t rows, int64_t kc, const float *a, int64_t rsa, int64_t ld, float *P)
{
    int64_t i = 0, k, k0;
    for (k0 = 0; k0 < kc; k0 += 64) {
        const int64_t k1 = kc - k0 < 64 ? kc : k0 + 64, k8 = k0 + (k1 - k0) / 8 * 8;
        for (i = 0; i + 8 <= rows; i += 8) {
            const float *r = a + i * rsa;
            for (k = k0; k < k8; k += 8) {
                __m256 t[8], s[8];
                for (int j = 0; j < 8; j += 2) {
                    const __m256 x0 = _mm256_loadu_ps(r + j * rsa + k), x1 = _mm256_loadu_ps(r + (j + 1) * rsa + k);
                    t[j] = _mm256_unpacklo_ps(x0, x1); t[j + 1] = _mm256_unpackhi_ps(x0, x1);
                }
                for (int j = 0; j < 8; j += 4) {
                    s[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44); s[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
                    s[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44); s[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
                }
                for (int j = 0; j < 4; j++) {   /* column k + j: rows 0-3 from s[j], 4-7 from s[4 + j] */
                    _mm256_storeu_ps(P + (k + j) * ld + i, _mm256_permute2f128_ps(s[j], s[4 + j], 0x20));
                    _mm256_storeu_ps(P + (k + 4 + j) * ld + i, _mm256_permute2f128_ps(s[j], s[4 + j], 0x31));
                }
            }
            for (; k < k1; k++)
                for (int j = 0; j < 8; j++) P[k * ld + i + j] = r[j * rsa + k];
        }
    }
    return i;
}
#endif
static void tn__gemm_packT_f32(int64_t rows, int64_t kc, const float *a, int64_t rsa, int64_t ld, float *P)
{
    int64_t i = 0, i0 = 0, k, k0;
#if TN__GEMM_X86
    if (rows >= 8 && tn__gemm_isa() != TN__GEMM_SCALAR) i0 = tn__gemm_packT8_f32(rows, kc, a, rsa, ld, P);
    i = i0;
    for (k0 = 0; k0 < kc; k0 += 64) {
        const int64_t k1 = kc - k0 < 64 ? kc : k0 + 64, k4 = k0 + (k1 - k0) / 4 * 4;
        for (i = i0; i + 4 <= rows; i += 4) {
            const float *a0 = a + i * rsa, *a1 = a0 + rsa, *a2 = a1 + rsa, *a3 = a2 + rsa;
            for (k = k0; k < k4; k += 4) {
                __m128 r0 = _mm_loadu_ps(a0 + k), r1 = _mm_loadu_ps(a1 + k), r2 = _mm_loadu_ps(a2 + k), r3 = _mm_loadu_ps(a3 + k);
                _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                _mm_storeu_ps(P + k * ld + i, r0); _mm_storeu_ps(P + (k + 1) * ld + i, r1);
                _mm_storeu_ps(P + (k + 2) * ld + i, r2); _mm_storeu_ps(P + (k + 3) * ld + i, r3);
            }
            for (; k < k1; k++) { P[k * ld + i] = a0[k]; P[k * ld + i + 1] = a1[k]; P[k * ld + i + 2] = a2[k]; P[k * ld + i + 3] = a3[k]; }
        }
    }
#endif
    for (; i < rows; i++)
        for (k = 0; k < kc; k++) P[k * ld + i] = a[i * rsa + k];
}
static void tn__gemm_packT_f64(int64_t rows, int64_t kc, const double *a, int64_t rsa, int64_t ld, double *P)
{
    int64_t i = 0, k, k0;
#if TN__GEMM_X86
    for (k0 = 0; k0 < kc; k0 += 64) {
        const int64_t k1 = kc - k0 < 64 ? kc : k0 + 64, k2 = k0 + (k1 - k0) / 2 * 2;
        for (i = 0; i + 2 <= rows; i += 2) {
            const double *a0 = a + i * rsa, *a1 = a0 + rsa;
            for (k = k0; k < k2; k += 2) {
                const __m128d r0 = _mm_loadu_pd(a0 + k), r1 = _mm_loadu_pd(a1 + k);
                _mm_storeu_pd(P + k * ld + i, _mm_unpacklo_pd(r0, r1));
                _mm_storeu_pd(P + (k + 1) * ld + i, _mm_unpackhi_pd(r0, r1));
            }
            for (; k < k1; k++) { P[k * ld + i] = a0[k]; P[k * ld + i + 1] = a1[k]; }
        }
    }
#endif
    for (; i < rows; i++)
        for (k = 0; k < kc; k++) P[k * ld + i] = a[i * rsa + k];
}

/* The dot kernels of the row path (tn__gemm_rows_*): s[j] = a . (column j of B) for nn
   columns at stride csb, each K long and contiguous, four columns at a time (four
   independent accumulators hide the FMA latency; a row of A is loaded once per four).
   One template for both precisions: V the 256-bit vector type, W its lanes, X the
   intrinsics' suffix (ps, pd). */
#if TN__GEMM_X86
__attribute__((target("avx2,fma"))) static float tn__gemm_hsum_ps(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
__attribute__((target("avx2,fma"))) static double tn__gemm_hsum_pd(__m256d v) {
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
/* @template TN__GEMM_DOTS(T, SFX, V, W, X) */
__attribute__((target("avx2,fma"))) static void tn__gemm_dots_avx2_##SFX(int64_t K, const T *a, const T *B, int64_t csb, int64_t nn, T *s) {
    int64_t j = 0, k;
    for (; j + 4 <= nn; j += 4) {
        const T *b0 = B + j * csb, *b1 = b0 + csb, *b2 = b1 + csb, *b3 = b2 + csb;
        V c0 = _mm256_setzero_##X(), c1 = c0, c2 = c0, c3 = c0;
        for (k = 0; k + W <= K; k += W) {
            const V x = _mm256_loadu_##X(a + k);
            c0 = _mm256_fmadd_##X(x, _mm256_loadu_##X(b0 + k), c0); c1 = _mm256_fmadd_##X(x, _mm256_loadu_##X(b1 + k), c1);
            c2 = _mm256_fmadd_##X(x, _mm256_loadu_##X(b2 + k), c2); c3 = _mm256_fmadd_##X(x, _mm256_loadu_##X(b3 + k), c3);
        }
        T r0 = tn__gemm_hsum_##X(c0), r1 = tn__gemm_hsum_##X(c1), r2 = tn__gemm_hsum_##X(c2), r3 = tn__gemm_hsum_##X(c3);
        for (; k < K; k++) { r0 += a[k] * b0[k]; r1 += a[k] * b1[k]; r2 += a[k] * b2[k]; r3 += a[k] * b3[k]; }
        s[j] = r0; s[j + 1] = r1; s[j + 2] = r2; s[j + 3] = r3;
    }
    for (; j < nn; j++) {
        const T *b = B + j * csb;
        V c = _mm256_setzero_##X();
        for (k = 0; k + W <= K; k += W) c = _mm256_fmadd_##X(_mm256_loadu_##X(a + k), _mm256_loadu_##X(b + k), c);
        T r = tn__gemm_hsum_##X(c);
        for (; k < K; k++) r += a[k] * b[k];
        s[j] = r;
    }
}
/* @end TN__GEMM_DOTS */
TN__GEMM_DOTS(float, f32, __m256, 8, ps)
TN__GEMM_DOTS(double, f64, __m256d, 4, pd)
#endif

/* ---------------------------------------------------------------------------
 * Type-generic part (packing, direct loop, driver), instantiated for float
 * and double.
 * ------------------------------------------------------------------------- */
#define TN__GEMM_FMA_f32 fmaf
#define TN__GEMM_FMA_f64 fma
/* The direct loop's body (tn__gemm_naive_*). On x86 it is also compiled for AVX2 + FMA, where
   fma/fmaf are one instruction inline instead of a call into libm (the same exact rounding,
   so the same bits; the call was 1.7 % of a batch-1 CNN forward). */
#define TN__GEMM_NAIVE_BODY(T, FMA) \
    int64_t i, j, k; \
    for (i = 0; i < M; i++) \
        for (j = 0; j < N; j++) { \
            T s = (T)0, *c = C + i * rsc + j * csc; \
            for (k = 0; k < K; k++) s = FMA(A[i * rsa + k * csa], B[k * rsb + j * csb], s); \
            *c = beta == (T)0 ? alpha * s : alpha * s + beta * *c; \
        }
/* @template TN__GEMM_DEFINE(T, SFX) */
/* one (jc, pc) step of the driver, for the pool: chunk t of nthr takes its share of the
   M blocks and packs into A block t */
typedef struct {
    const tn__gemm_kern_##SFX *kn; const T *A, *Bp, *Bd; T *C, *Ap; T alpha, beta_p;
    int64_t M, mstep, kcb, ncb, rsa, csa, rsb, rsc, csc, pc, jc; size_t szA;
    const tn__gemm_epi *ep; int first, last, adirect;
} tn__gemm_step_##SFX;
static void tn__gemm_step_part_##SFX(void *args, int t, int nthr);
/* the whole product split by columns, for the pool: chunk t takes its share of whole NR
   panels and runs the serial driver's loops on them with its own A and B buffers */
typedef struct {
    const tn__gemm_kern_##SFX *kn; const T *A, *B; T *C; char *buf; T alpha, beta;
    int64_t M, N, K, rsa, csa, rsb, csb, rsc, csc, nc; size_t szA, szB;
    const tn__gemm_epi *ep; int direct, adirect;
} tn__gemm_cols_##SFX;
static void tn__gemm_cols_part_##SFX(void *args, int t, int nthr);

/* Pack A[0:mc, 0:kc] into mr-row micro-panels: Ap[p][k*mr + i], rows >= mc zeroed. */
static void tn__gemm_packA_##SFX(int64_t mc, int64_t kc, const T *A, int64_t rsa,
                                 int64_t csa, int64_t mr, T *Ap)
{
    int64_t i0, i, k;
    if (csa != 1 && rsa == 1) {
        /* columns contiguous (transposed A: the weight gradients' dY^T): k outer, each column's
           mc-long run read once whole into all the panels. Panel by panel, every k read mr
           elements of another line (a column stride of 4 KiB: 512 k in one L1 set, and 512
           pages) and each line came twice; this ran the LSTM's dW packing ~3x faster. */
        for (k = 0; k < kc; k++) {
            const T *a = A + k * csa;
#if TN__GEMM_GNUC
            if (k + 8 < kc) /* the run 8 columns on: another page each column, which the hardware prefetcher does not enter */
                for (i = 0; i < mc; i += 64 / (int64_t)sizeof(T)) __builtin_prefetch(a + 8 * csa + i);
#endif
            /* whole panels' runs with constant counts (register moves, not a loop of a
               run-time count per panel), the ragged one after */
#define TN__PACKA_RUNS(MR) for (i0 = 0; i0 + (MR) <= mc; i0 += (MR)) for (i = 0; i < (MR); i++) Ap[i0 * kc + k * (MR) + i] = a[i0 + i]
            i0 = 0;
            if (mr == 6) TN__PACKA_RUNS(6);
            else if (mr == 8) TN__PACKA_RUNS(8);
            else if (mr == 12) TN__PACKA_RUNS(12);
#undef TN__PACKA_RUNS
            for (; i0 < mc; i0 += mr) {
                const int64_t mb = mc - i0 < mr ? mc - i0 : mr;
                T *p = Ap + i0 * kc + k * mr;
                for (i = 0; i < mb; i++) p[i] = a[i0 + i];
                for (; i < mr; i++) p[i] = (T)0;
            }
        }
        return;
    }
    for (i0 = 0; i0 < mc; i0 += mr, Ap += mr * kc) {
        int64_t mb = mc - i0 < mr ? mc - i0 : mr;
        const T *a = A + i0 * rsa;
        if (csa == 1) { /* rows contiguous: a transposing copy */
            tn__gemm_packT_##SFX(mb, kc, a, rsa, mr, Ap);
        } else { /* general strides */
            for (k = 0; k < kc; k++)
                for (i = 0; i < mb; i++) Ap[k * mr + i] = a[i * rsa + k * csa];
        }
        if (mb < mr)
            for (k = 0; k < kc; k++)
                for (i = mb; i < mr; i++) Ap[k * mr + i] = (T)0;
    }
}

/* Pack B[0:kc, 0:nc] into nr-column micro-panels: Bp[p][k*nr + j], cols >= nc zeroed. */
static void tn__gemm_packB_##SFX(int64_t kc, int64_t nc, const T *B, int64_t rsb,
                                 int64_t csb, int64_t nr, T *Bp)
{
    int64_t j0, j, k;
    for (j0 = 0; j0 < nc; j0 += nr, Bp += nr * kc) {
        int64_t nb = nc - j0 < nr ? nc - j0 : nr;
        const T *b = B + j0 * csb;
        if (csb == 1) { /* rows contiguous: copy nb-long runs; a whole panel's rows of the
                           kernels' widths as constant-count loops (register moves: memcpy's
                           call per 64-byte row was 5 % of a GPT step) */
#define TN__PACKB_ROWS(NR) for (k = 0; k < kc; k++) for (j = 0; j < (NR); j++) Bp[k * (NR) + j] = b[k * rsb + j]
            if (nb == nr && nr == 8) TN__PACKB_ROWS(8);
            else if (nb == nr && nr == 16) TN__PACKB_ROWS(16);
            else if (nb == nr && nr == 32) TN__PACKB_ROWS(32);
            else
                for (k = 0; k < kc; k++) {
                    memcpy(Bp + k * nr, b + k * rsb, (size_t)nb * sizeof(T));
                    for (j = nb; j < nr; j++) Bp[k * nr + j] = (T)0;
                }
#undef TN__PACKB_ROWS
        } else if (rsb == 1) { /* columns contiguous (transposed B): a transposing copy */
            tn__gemm_packT_##SFX(nb, kc, b, csb, nr, Bp);
            for (k = 0; k < kc; k++)
                for (j = nb; j < nr; j++) Bp[k * nr + j] = (T)0;
        } else {
            for (k = 0; k < kc; k++) {
                for (j = 0; j < nb; j++) Bp[k * nr + j] = b[k * rsb + j * csb];
                for (j = nb; j < nr; j++) Bp[k * nr + j] = (T)0;
            }
        }
    }
}

/* The epilogue on the mb x nb block of C at c (its first element C[i0, j0]): the bias after
   the first K slice (where the copy of the bias into C was added: the same order of
   additions), the activation after the last. */
static void tn__gemm_epi_##SFX(const tn__gemm_epi *ep, int first, int last, T *c, int64_t mb, int64_t nb,
                               int64_t rsc, int64_t csc, int64_t i0, int64_t j0)
{
    int64_t i, j;
    if (first && ep->bias) {
        const T *b = (const T *)ep->bias, bb = (T)ep->bias_beta;
        const int64_t bs = ep->bias_stride;
        for (i = 0; i < mb; i++) {
            T *r = c + i * rsc;
            if (ep->per_row) {
                const T v = bb * b[(i0 + i) * bs];
                for (j = 0; j < nb; j++) r[j * csc] += v;
            } else if (csc == 1 && bs == 1) {
                const T *bj = b + j0;
                for (j = 0; j < nb; j++) r[j] += bb * bj[j];
            } else {
                for (j = 0; j < nb; j++) r[j * csc] += bb * b[(j0 + j) * bs];
            }
        }
    }
    if (!last || ep->act == TN__EPI_NONE) return;
    for (i = 0; i < mb; i++) {
        T *r = c + i * rsc;
        switch (ep->act) {
        case TN__EPI_RELU: for (j = 0; j < nb; j++) { const T x = r[j * csc]; r[j * csc] = x < 0 ? (T)0 : x; } break;
        case TN__EPI_GELU: for (j = 0; j < nb; j++) r[j * csc] = tn_gelu_##SFX(r[j * csc]); break;
        case TN__EPI_GELU_TANH: for (j = 0; j < nb; j++) r[j * csc] = tn_gelu_tanh_##SFX(r[j * csc]); break;
        default: for (j = 0; j < nb; j++) r[j * csc] = tn_silu_##SFX(r[j * csc]); break;
        }
    }
}

/* C = beta*C (the whole result when K == 0 or alpha == 0). */
static void tn__gemm_scale_##SFX(int64_t M, int64_t N, T beta, T *C, int64_t rsc,
                                 int64_t csc)
{
    int64_t i, j;
    if (beta == (T)1) return;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            T *c = C + i * rsc + j * csc;
            *c = beta == (T)0 ? (T)0 : beta * *c;
        }
}

/* Direct triple loop for tiny products, where packing would cost more than it saves. Each
   sum is one FMA chain in k order from 0, as the micro-kernels' (and OpenBLAS's, PyTorch's
   CPU BLAS: a linear layer's tiny output matches it to the bit). */
#if TN__GEMM_X86
__attribute__((target("avx2,fma"))) static void tn__gemm_naive_fma_##SFX(int64_t M, int64_t N, int64_t K, T alpha, const T *A,
                                 int64_t rsa, int64_t csa, const T *B, int64_t rsb,
                                 int64_t csb, T beta, T *C, int64_t rsc, int64_t csc)
{
    TN__GEMM_NAIVE_BODY(T, TN__GEMM_FMA_##SFX)
}
#endif
static void tn__gemm_naive_##SFX(int64_t M, int64_t N, int64_t K, T alpha, const T *A,
                                 int64_t rsa, int64_t csa, const T *B, int64_t rsb,
                                 int64_t csb, T beta, T *C, int64_t rsc, int64_t csc)
{
#if TN__GEMM_X86
    if (tn__gemm_isa() != TN__GEMM_SCALAR) { tn__gemm_naive_fma_##SFX(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc); return; }
#endif
    TN__GEMM_NAIVE_BODY(T, TN__GEMM_FMA_##SFX)
}

/* The row path: C = alpha * A @ B + beta * C for M <= TN__GEMM_ROWS_MAX rows of A (unit
   column stride) and a B stored by columns (unit row stride: a linear layer's weight as W^T),
   as dot products that read B in place. With one input row, packing B (a 3136 x 128 weight)
   cost more than the whole product; this reads B once per row of A, at memory speed.
   Threads split the columns. */
#define TN__GEMM_ROWS_MAX 2
typedef struct { int64_t M, N, K; T alpha, beta; const T *A; int64_t rsa; const T *B; int64_t csb; T *C; int64_t rsc, csc; } tn__gemm_rows_args_##SFX;
static void tn__gemm_rows_part_##SFX(void *args, int t, int nthr) {
    const tn__gemm_rows_args_##SFX *r = (const tn__gemm_rows_args_##SFX *)args;
    const int64_t j0 = tn__split_at(r->N / 4, t, nthr) * 4, j1 = t == nthr - 1 ? r->N : tn__split_at(r->N / 4, t + 1, nthr) * 4;
    T s[64];
    for (int64_t m = 0; m < r->M; m++)
        for (int64_t jb = j0; jb < j1; jb += 64) {
            const int64_t nn = j1 - jb < 64 ? j1 - jb : 64;
            const T *a = r->A + m * r->rsa, *B = r->B + jb * r->csb;
#if TN__GEMM_X86
            if (tn__gemm_isa() != TN__GEMM_SCALAR) tn__gemm_dots_avx2_##SFX(r->K, a, B, r->csb, nn, s);
            else
#endif
            for (int64_t j = 0; j < nn; j++) {
                T acc = (T)0;
                for (int64_t k = 0; k < r->K; k++) acc += a[k] * B[j * r->csb + k];
                s[j] = acc;
            }
            T *c = r->C + m * r->rsc + jb * r->csc;
            for (int64_t j = 0; j < nn; j++) c[j * r->csc] = r->beta == (T)0 ? r->alpha * s[j] : r->alpha * s[j] + r->beta * c[j * r->csc];
        }
}
static void tn__gemm_rows_##SFX(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t rsa, const T *B, int64_t csb,
                                T beta, T *C, int64_t rsc, int64_t csc) {
    tn__gemm_rows_args_##SFX r = {M, N, K, alpha, beta, A, rsa, B, csb, C, rsc, csc};
    int max = tn__max_threads();
    if (tn__gemm_tune.threads > 0 && max > 1) max = tn__gemm_tune.threads;
    const int nthr = tn__threads_for((double)M * (double)N * (double)K / TN__GEMM_UNIT, N / 4, max);
    if (nthr > 1) tn__parallel(nthr, tn__gemm_rows_part_##SFX, &r);
    else tn__gemm_rows_part_##SFX(&r, 0, 1);
}

/* Multiply the packed mc x kc A block by the packed kc x nc B panel into C; with Bd,
   full-width panels are read in place from Bd (row stride ldbd), only a ragged last
   panel comes packed; with Ad, full-height panels of A are read in place from Ad (strides
   rsad, csad), only a ragged last one comes packed (in Ap, at its place). */
static void tn__gemm_macro_##SFX(const tn__gemm_kern_##SFX *kn, int64_t mc, int64_t nc,
                                 int64_t kc, T alpha, const T *Ap, const T *Ad, int64_t rsad, int64_t csad, const T *Bp,
                                 const T *Bd, int64_t ldbd, T beta,
                                 T *C, int64_t rsc, int64_t csc,
                                 const tn__gemm_epi *ep, int64_t i0, int64_t j0, int first, int last)
{
    T tile[TN__GEMM_MAX_TILE];
    int64_t ir, jr, i, j, mr = kn->mr, nr = kn->nr;
    for (jr = 0; jr < nc; jr += nr) {
        int64_t nb = nc - jr < nr ? nc - jr : nr;
        const T *b = Bd && nb == nr ? Bd + jr : Bp + jr * kc;
        int64_t ldb = Bd && nb == nr ? ldbd : nr;
        for (ir = 0; ir < mc; ir += mr) {
            int64_t mb = mc - ir < mr ? mc - ir : mr;
            T *c = C + ir * rsc + jr * csc;
            /* A's whole panels read in place from Ad (direct A), a ragged one packed */
            const T *a = Ad && mb == mr ? Ad + ir * rsad : Ap + ir * kc;
            const int64_t ars = Ad && mb == mr ? rsad : 1, aks = Ad && mb == mr ? csad : mr;
            int bias_done = 0;
            if (mb == mr && nb == nr && csc == 1) {
                /* a column bias in the first K slice: read by the kernel's store in place of C */
                bias_done = ep && first && beta == (T)0 && ep->bias && !ep->per_row && ep->bias_stride == 1;
                if (bias_done) kn->ukr(kc, a, ars, aks, b, ldb, c, rsc, alpha, (T)ep->bias_beta, (const T *)ep->bias + j0 + jr, 0);
                else kn->ukr(kc, a, ars, aks, b, ldb, c, rsc, alpha, beta, c, rsc);
            } else { /* edge tile or strided C: via a temporary tile (a ragged panel's rows only) */
                const tn__gemm_ukr_##SFX u = mb <= 2 && kn->ukr2 ? kn->ukr2 : mb <= 4 && kn->ukr4 ? kn->ukr4 : kn->ukr;
                u(kc, a, ars, aks, b, ldb, tile, nr, (T)1, (T)0, tile, nr);
                for (i = 0; i < mb; i++)
                    for (j = 0; j < nb; j++) {
                        T *cij = c + i * rsc + j * csc;
                        *cij = beta == (T)0 ? alpha * tile[i * nr + j]
                                            : alpha * tile[i * nr + j] + beta * *cij;
                    }
            }
            if (ep) tn__gemm_epi_##SFX(ep, first && !bias_done, last, c, mb, nb, rsc, csc, i0 + ir, j0 + jr);
        }
    }
}

/* The GEMM with an epilogue (ep NULL: none): C = act(alpha * A @ B + beta * C + bias_beta * bias). */
TN__TESTABLE int tn__gemm_ep_##SFX(int64_t M, int64_t N, int64_t K, T alpha,
                          const T *A, int64_t rsa, int64_t csa,
                          const T *B, int64_t rsb, int64_t csb,
                          T beta, T *C, int64_t rsc, int64_t csc, const tn__gemm_epi *ep)
{
    tn__gemm_epi ept;
    tn__gemm_kern_##SFX kn;
    int64_t kc, mc, nc, mstep, naive_max, jc, pc, nthr = 1;
    int direct, adirect;
    void *buf;
    int cached;
    T *Ap, *Bp;
    const T *Bpre = NULL;
    size_t szA, szB;
    if (M <= 0 || N <= 0) return 0;
    if (ep && !ep->bias && ep->act == TN__EPI_NONE) ep = NULL;
    if (K <= 0 || alpha == (T)0) {
        tn__gemm_scale_##SFX(M, N, beta, C, rsc, csc);
        if (ep) tn__gemm_epi_##SFX(ep, 1, 1, C, M, N, rsc, csc, 0, 0);
        return 0;
    }
    kn = tn__gemm_kern_select_##SFX();
    /* column-major C, or a C narrower than half a micro-tile but tall (a linear layer
       with 10 outputs): compute C^T = B^T A^T instead, so the vector lanes run along
       the long side */
    if ((csc != 1 && rsc == 1) || (N < kn.nr / 2 && M >= kn.nr && csc == 1)) {
        const T *tp = A;
        int64_t t = M, ra = rsa, ca = csa;
        M = N; N = t;
        A = B; B = tp;
        rsa = csb; csa = rsb; /* A' = B^T: A'[n,k] = B[k,n] */
        rsb = ca; csb = ra;   /* B' = A^T: B'[k,m] = A[m,k] */
        t = rsc; rsc = csc; csc = t;
        if (ep) { ept = *ep; ept.per_row = !ept.per_row; ep = &ept; }   /* C's rows are C^T's columns */
    }
    kn = tn__gemm_kern_for_##SFX(M); /* by the final M (after the swap) */
    naive_max = tn__gemm_tune.naive_max >= 0 ? tn__gemm_tune.naive_max : 4096;
    if ((double)M * (double)N * (double)K <= (double)naive_max) {
        tn__gemm_naive_##SFX(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc);
        if (ep) tn__gemm_epi_##SFX(ep, 1, 1, C, M, N, rsc, csc, 0, 0);
        return 0;
    }
    if (M <= TN__GEMM_ROWS_MAX && csa == 1 && rsb == 1 && tn__gemm_tune.kc <= 0) {   /* a few rows against B by columns */
        tn__gemm_rows_##SFX(M, N, K, alpha, A, rsa, B, csb, beta, C, rsc, csc);
        if (ep) tn__gemm_epi_##SFX(ep, 1, 1, C, M, N, rsc, csc, 0, 0);
        return 0;
    }
    if (tn__gemm_tune.kc > 0) kn.kc = tn__gemm_tune.kc;
    if (tn__gemm_tune.mc > 0) kn.mc = tn__gemm_roundup(tn__gemm_tune.mc, kn.mr);
    if (tn__gemm_tune.nc > 0) kn.nc = tn__gemm_roundup(tn__gemm_tune.nc, kn.nr);
    kc = K < kn.kc ? K : kn.kc;
    nc = tn__gemm_roundup(N < kn.nc ? N : kn.nc, kn.nr);
    TN__GEMM_NTHREADS(nthr, M, N, K, kn.mr)
    mstep = kn.mc;
    /* direct B: with few row panels a packed B panel is reused too little to pay for
       its packing, so row-major B is read in place (measured: M = 10, N = K = 128 runs
       1.9x faster; from 4 panels up packing wins) */
    direct = csb == 1 && (M + kn.mr - 1) / kn.mr <= 3 && N >= kn.nr;
    {
        const tn__gemm_bpre *pb = &tn__gemm_bpre_on;
        if (pb->P && (!direct || pb->over_direct) && pb->B == (const void *)B && pb->rsb == rsb && pb->csb == csb && pb->K == K && pb->N == N && pb->kc == kn.kc &&
            pb->nc == kn.nc && pb->nr == kn.nr) {
            Bpre = (const T *)pb->P;
            direct = 0;   /* over_direct: the packed panels, not B in place */
        }
    }
    /* direct A: A read in place by the micro-kernel (rows or columns contiguous) instead of
       packed. Packing costs O(M K) against the O(M N K) product: with N <= 512 (the training
       steps' linear layers: N = 128..512) it was 6-10 % of the GEMM, and both the forward's
       x and the weight gradients' dY^T read in place ran 5-15 % faster (bench/RESULTS.md,
       issue 25 third round). Not with a direct B (a few panels: two in-place streams thrash
       L1), nor where the stride along the panel is a multiple of 4 KiB (every row or k step
       in the same L1 set: 1024 x 1024 x 1024 with a transposed A ran 10 % slower). */
    adirect = (rsa == 1 || csa == 1) && tn__gemm_tune.direct_a >= 0 &&
              (tn__gemm_tune.direct_a > 0 ||
               (!direct && N <= 512 && ((rsa == 1 ? csa : rsa) * (int64_t)sizeof(T)) % 4096 != 0));
    /* Few rows (at most two M blocks: a training step's linear layers at batch 64-128): split
       the columns instead of the rows, so that each thread packs its own share of B. Split
       by rows, every (jc, pc) step's B panel is packed by one thread while the others wait
       (the forward's W^T is a transposing copy: at batch 64 about 40 % of the product's
       time), and each step is a job of its own. A B packed ahead (the replay's weights)
       costs nothing to share: rows then. */
    if (!Bpre && M <= 2 * kn.mc) {
        int max = tn__max_threads();
        if (tn__gemm_tune.threads > 0 && max > 1) max = tn__gemm_tune.threads;
        const int64_t nt = tn__threads_for((double)M * (double)N * (double)K / TN__GEMM_UNIT, N / (2 * kn.nr), max);
        if (nt > 1) {
            kc = K < kn.kc ? K : kn.kc;
            mc = tn__gemm_roundup(M < kn.mc ? M : kn.mc, kn.mr);
            nc = tn__gemm_roundup((N + nt - 1) / nt + kn.nr, kn.nr);   /* a share's columns at most */
            if (nc > kn.nc) nc = kn.nc;
            szA = (size_t)tn__gemm_roundup(mc * kc * (int64_t)sizeof(T), 64);
            szB = (size_t)tn__gemm_roundup(kc * nc * (int64_t)sizeof(T), 64);
            buf = tn__gemm_buf_get((size_t)nt * (szA + szB) + 64, &cached);
            if (!buf) return -1;
            tn__gemm_cols_##SFX cj = {&kn, A, B, C, (char *)(((uintptr_t)buf + 63) & ~(uintptr_t)63), alpha, beta,
                                      M, N, K, rsa, csa, rsb, csb, rsc, csc, nc, szA, szB, ep, direct, adirect};
            tn__parallel((int)nt, tn__gemm_cols_part_##SFX, &cj);
            tn__gemm_buf_put(buf, cached);
            return 0;
        }
    }
    if (nthr > 1) { /* equal shares: #M blocks a multiple of nthr, whole MR panels each */
        int64_t nblk = tn__gemm_roundup((M + kn.mc - 1) / kn.mc, nthr);
        mstep = ((M + kn.mr - 1) / kn.mr + nblk - 1) / nblk * kn.mr;
    }
    mc = tn__gemm_roundup(M < mstep ? M : mstep, kn.mr);
    /* one A block per thread, one shared B panel; +64 for manual alignment */
    szA = (size_t)tn__gemm_roundup(mc * kc * (int64_t)sizeof(T), 64);
    /* no B panel with B packed ahead (a thread of the fused RNNs' steps, which does not hold
       the cached buffer, then allocates only its A block) */
    szB = Bpre ? 0 : (size_t)tn__gemm_roundup(kc * nc * (int64_t)sizeof(T), 64);
    buf = tn__gemm_buf_get(szB + (size_t)nthr * szA + 64, &cached);
    if (!buf) return -1;
    Bp = (T *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
    Ap = (T *)((char *)Bp + szB);
    for (jc = 0; jc < N; jc += kn.nc) {
        int64_t ncb = N - jc < kn.nc ? N - jc : kn.nc;
        for (pc = 0; pc < K; pc += kn.kc) {
            int64_t kcb = K - pc < kn.kc ? K - pc : kn.kc, ic, full = ncb / kn.nr * kn.nr;
            const int first = pc == 0, last = pc + kcb >= K;
            T beta_p = pc == 0 ? beta : (T)1; /* later K slices accumulate */
            const T *Bd = direct ? B + pc * rsb + jc : NULL;
            if (Bpre) { Bp = (T *)(uintptr_t)Bpre; Bpre += tn__gemm_roundup(ncb, kn.nr) * kcb; }   /* packed ahead */
            else if (!direct) tn__gemm_packB_##SFX(kcb, ncb, B + pc * rsb + jc * csb, rsb, csb, kn.nr, Bp);
            else if (full < ncb) /* only the ragged last panel, where the macro looks */
                tn__gemm_packB_##SFX(kcb, ncb - full, B + pc * rsb + jc + full, rsb, 1, kn.nr, Bp + full * kcb);
            if (nthr > 1) {
                tn__gemm_step_##SFX st = {&kn, A, Bp, Bd, C, Ap, alpha, beta_p, M, mstep, kcb, ncb, rsa, csa, rsb, rsc, csc, pc, jc, szA, ep, first, last, adirect};
                tn__parallel((int)nthr, tn__gemm_step_part_##SFX, &st);
            } else {
                TN__GEMM_IC_LOOP(T, SFX, 0, (M + mstep - 1) / mstep, Ap)
            }
        }
    }
    tn__gemm_buf_put(buf, cached);
    return 0;
}
TN__TESTABLE int tn__gemm_##SFX(int64_t M, int64_t N, int64_t K, T alpha,
                          const T *A, int64_t rsa, int64_t csa,
                          const T *B, int64_t rsb, int64_t csb,
                          T beta, T *C, int64_t rsc, int64_t csc)
{
    return tn__gemm_ep_##SFX(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc, NULL);
}
static void tn__gemm_step_part_##SFX(void *args, int t, int nthr) {
    const tn__gemm_step_##SFX *s_ = (const tn__gemm_step_##SFX *)args;
    const tn__gemm_kern_##SFX kn = *s_->kn;
    const T *A = s_->A, *Bp = s_->Bp, *Bd = s_->Bd, alpha = s_->alpha, beta_p = s_->beta_p;
    T *C = s_->C, *Apt = (T *)((char *)s_->Ap + (size_t)t * s_->szA);
    const int64_t M = s_->M, mstep = s_->mstep, kcb = s_->kcb, ncb = s_->ncb, rsa = s_->rsa, csa = s_->csa, rsb = s_->rsb, rsc = s_->rsc,
                  csc = s_->csc, pc = s_->pc, jc = s_->jc, nb = (M + mstep - 1) / mstep;
    const tn__gemm_epi *ep = s_->ep;
    const int first = s_->first, last = s_->last, adirect = s_->adirect;
    int64_t ic;
    TN__GEMM_IC_LOOP(T, SFX, tn__split_at(nb, t, nthr), tn__split_at(nb, t + 1, nthr), Apt)
}
static void tn__gemm_cols_part_##SFX(void *args, int t, int nthr) {
    const tn__gemm_cols_##SFX *s_ = (const tn__gemm_cols_##SFX *)args;
    const tn__gemm_kern_##SFX kn = *s_->kn;
    const T *A = s_->A, *B = s_->B, alpha = s_->alpha;
    T *C = s_->C, *Bp = (T *)(void *)(s_->buf + (size_t)t * (s_->szA + s_->szB)), *Ap = (T *)(void *)((char *)Bp + s_->szB);
    const int64_t M = s_->M, K = s_->K, rsa = s_->rsa, csa = s_->csa, rsb = s_->rsb, csb = s_->csb, rsc = s_->rsc, csc = s_->csc,
                  mstep = kn.mc, np = (s_->N + kn.nr - 1) / kn.nr, ncmax = s_->nc;
    const int64_t j0 = tn__split_at(np, t, nthr) * kn.nr, j1e = tn__split_at(np, t + 1, nthr) * kn.nr, j1 = j1e < s_->N ? j1e : s_->N;
    const tn__gemm_epi *ep = s_->ep;
    const int direct = s_->direct, adirect = s_->adirect;
    int64_t jc, pc, ic;
    for (jc = j0; jc < j1; jc += ncmax) {
        const int64_t ncb = j1 - jc < ncmax ? j1 - jc : ncmax;
        for (pc = 0; pc < K; pc += kn.kc) {
            const int64_t kcb = K - pc < kn.kc ? K - pc : kn.kc, full = ncb / kn.nr * kn.nr;
            const int first = pc == 0, last = pc + kcb >= K;
            const T beta_p = pc == 0 ? s_->beta : (T)1;
            const T *Bd = direct ? B + pc * rsb + jc : NULL;
            if (!direct) tn__gemm_packB_##SFX(kcb, ncb, B + pc * rsb + jc * csb, rsb, csb, kn.nr, Bp);
            else if (full < ncb) tn__gemm_packB_##SFX(kcb, ncb - full, B + pc * rsb + jc + full, rsb, 1, kn.nr, Bp + full * kcb);
            TN__GEMM_IC_LOOP(T, SFX, 0, (M + mstep - 1) / mstep, Ap)
        }
    }
}
/* B [K, N] (strides rsb, csb) packed ahead as tn__gemm_ep packs it, block by block, into P
   (NULL: only the size); fills *pre but its P. Returns the elements of P. */
static int64_t tn__gemm_prepack_##SFX(int64_t K, int64_t N, const T *B, int64_t rsb, int64_t csb, T *P, tn__gemm_bpre *pre)
{
    tn__gemm_kern_##SFX kn = tn__gemm_kern_select_##SFX();
    int64_t n = 0, jc, pc;
    if (tn__gemm_tune.kc > 0) kn.kc = tn__gemm_tune.kc;
    if (tn__gemm_tune.nc > 0) kn.nc = tn__gemm_roundup(tn__gemm_tune.nc, kn.nr);
    for (jc = 0; jc < N; jc += kn.nc) {
        const int64_t ncb = N - jc < kn.nc ? N - jc : kn.nc;
        for (pc = 0; pc < K; pc += kn.kc) {
            const int64_t kcb = K - pc < kn.kc ? K - pc : kn.kc;
            if (P) tn__gemm_packB_##SFX(kcb, ncb, B + pc * rsb + jc * csb, rsb, csb, kn.nr, P + n);
            n += tn__gemm_roundup(ncb, kn.nr) * kcb;
        }
    }
    pre->B = B; pre->P = NULL; pre->rsb = rsb; pre->csb = csb; pre->K = K; pre->N = N; pre->kc = kn.kc; pre->nc = kn.nc; pre->nr = kn.nr;
    pre->over_direct = 0;
    return n;
}
/* @end TN__GEMM_DEFINE */

/* the ic loop (M blocks) splits among the pool's threads when there is enough work; each
   packs into its own A block */
#define TN__GEMM_NTHREADS(nthr, M, N, K, mr) nthr = tn__gemm_threads(M, N, K, mr);

TN__GEMM_DEFINE(float, f32)
TN__GEMM_DEFINE(double, f64)
/* A 2-d float32/float64 CPU matrix b (the B of later products) packed ahead: a 1-d tensor
   holding its panels (from a 64-byte boundary in it, as the GEMM's own) and *pre describing
   them, or NULL (with no error) where b is not such a matrix or is empty. */
static tn_tensor *tn__gemm_prepack(const tn_tensor *b, tn__gemm_bpre *pre)
{
    if (!b || b->ndim != 2 || b->device != TN_CPU || (b->dtype != TN_F32 && b->dtype != TN_F64) || b->shape[0] <= 0 || b->shape[1] <= 0) return NULL;
    const bool f = b->dtype == TN_F32;
    const void *B = tn_data_ptr(b);
    const int64_t K = b->shape[0], N = b->shape[1], rs = b->strides[0], cs = b->strides[1], es = f ? 4 : 8;
    const int64_t n = (f ? tn__gemm_prepack_f32(K, N, (const float *)B, rs, cs, NULL, pre) : tn__gemm_prepack_f64(K, N, (const double *)B, rs, cs, NULL, pre)) + 64 / es;
    tn_tensor *p = tn__new(b->dtype, TN_CPU, &n, 1);
    if (!p) return NULL;
    char *P = (char *)(((uintptr_t)tn_data_ptr(p) + 63) & ~(uintptr_t)63);
    if (f) tn__gemm_prepack_f32(K, N, (const float *)B, rs, cs, (float *)(void *)P, pre);
    else tn__gemm_prepack_f64(K, N, (const double *)B, rs, cs, (double *)(void *)P, pre);
    pre->P = P;
    return p;
}

#undef TN__GEMM_IC_LOOP
#undef TN__GEMM_NTHREADS
#undef TN__GEMM_MAX_TILE
#undef TN__GEMM_SC_MR
#undef TN__GEMM_SC_NR32
#undef TN__GEMM_SC_NR64
#undef TN__GEMM_GNUC
#undef TN__GEMM_MAYBE_UNUSED
#undef TN__GEMM_X86
