#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <float.h>
#include <limits.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>      /* sysconf: the machine's memory (tn__fits_memory) */
#endif
#ifdef TENSOR_CBLAS
#include <cblas.h>       /* OpenBLAS's brings <complex.h>: no identifier here may be I (tests/test_build_config.sh) */
#endif
#if defined(__GLIBC__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TN_NO_LEAK_CHECK)
#include <execinfo.h>    /* TN_LEAK_CHECK's creation backtraces (core/tensor.c) */
#define TN__HAVE_BACKTRACE 1
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>   /* the AVX-512 loops chosen at run time (target attributes) */
/* Whether this CPU runs the AVX-512 loops (F, VL and BW: every AVX-512 core since Skylake-X),
   checked once; every thread would compute the same value. */
static bool tn__cpu_avx512(void) {
    static int has = -1;
    if (has < 0) {
        __builtin_cpu_init();
        has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    }
    return has != 0;
}
/* Whether this CPU has AVX2 and FMA (TN__FMA_FN loops: fma one instruction, not a libm call) */
#define TN__FMA_FN __attribute__((target("avx2,fma")))
static bool tn__cpu_fma(void) {
    static int has = -1;
    if (has < 0) {
        __builtin_cpu_init();
        has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return has != 0;
}
#endif
/* Float loops compiled three times, plain, for AVX2 (TN__AVX2_FN: 8 lanes) and for AVX-512
   (TN__AVX512_FN: 16 lanes instead of SSE's 4); the same IEEE operations, so the same bits.
   TN__WIDE(f) picks per call: f##x on a CPU with AVX-512, f##y on one with AVX2 and FMA,
   else f. tn__wide_loops (tests) caps the choice: 2 any, 1 at most AVX2, 0 the plain ones. */
TN__TESTABLE int tn__wide_loops = 2;
/* GCC keeps a loop with selects scalar under its default -ftrapping-math unless the lanes can
   be masked (AVX-512): these loops are compiled without it. Only exception flags could
   differ, never a value: no contraction, no reassociation. Clang assumes it by default. */
#if defined(__GNUC__) && !defined(__clang__)
#define TN__NO_TRAP __attribute__((optimize("no-trapping-math")))
#else
#define TN__NO_TRAP
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__AVX512_FN __attribute__((target("avx512f"))) TN__NO_TRAP
#define TN__AVX2_FN __attribute__((target("avx2"))) TN__NO_TRAP   /* no "fma": no contraction, the same bits */
#define TN__WIDE(f) (tn__wide_loops >= 2 && tn__cpu_avx512() ? f##x : tn__wide_loops >= 1 && tn__cpu_fma() ? f##y : f)
#else
#define TN__WIDE(f) ((void)tn__wide_loops, f)
#endif
#define TN__PLAIN_FN TN__NO_TRAP

#if defined(TN_MALLOC) && defined(TN_FREE) && defined(TN_REALLOC)
#elif !defined(TN_MALLOC) && !defined(TN_FREE) && !defined(TN_REALLOC)
#define TN_MALLOC(sz) malloc(sz)
#define TN_REALLOC(p, sz) realloc(p, sz)
#define TN_FREE(p) free(p)
#else
#error "tensor.h: define all of TN_MALLOC, TN_REALLOC and TN_FREE, or none"
#endif
#ifndef TN_ASSERT
#include <assert.h>
#define TN_ASSERT(x) assert(x)
#endif

#if defined(__cplusplus)
#define TN__TLS thread_local
#elif defined(_MSC_VER)
#define TN__TLS __declspec(thread)
#else
#define TN__TLS _Thread_local
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TN__ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define TN__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define TN__PRINTF_FMT(a, b) __attribute__((format(printf, a, b)))
/* for small math helpers in vectorised loops: GCC's inliner gives up on a loop body with
   several calls to them, and one call left in keeps the loop scalar */
#define TN__ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define TN__ALWAYS_INLINE static inline
#define TN__ATOMIC_ADD(p, v) (*(p) += (v)) /* TODO(port): MSVC Interlocked */
#define TN__ATOMIC_LOAD(p) (*(p))
#define TN__PRINTF_FMT(a, b)
#endif

#define TN__MIN(a, b) ((a) < (b) ? (a) : (b))
#define TN__MAX(a, b) ((a) > (b) ? (a) : (b))

/* Size arithmetic. Every product of sizes, strides and byte counts goes through tn__mul_ok,
   which reports overflow instead of running into C's undefined behaviour (a byte count that
   wraps to 0 allocates a short buffer that the op then writes past): the product in *r, or
   false (and *r unspecified) when it does not fit in int64. The builtin where the compiler
   has it; the division test (CERT INT32-C) elsewhere. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_mul_overflow) && __has_builtin(__builtin_add_overflow)
#define TN__HAVE_OVERFLOW_BUILTINS 1
#endif
#elif defined(__GNUC__) && __GNUC__ >= 5
#define TN__HAVE_OVERFLOW_BUILTINS 1
#endif
#if defined(TN_TESTING) || !defined(TN__HAVE_OVERFLOW_BUILTINS)
TN__TESTABLE bool tn__mul_ok_portable(int64_t a, int64_t b, int64_t *r) {
    bool over = a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                      : (b > 0 ? a < INT64_MIN / b : a != 0 && b < INT64_MAX / a);
    if (over) return false;
    *r = a * b;
    return true;
}
#endif
static bool tn__mul_ok(int64_t a, int64_t b, int64_t *r) {
#ifdef TN__HAVE_OVERFLOW_BUILTINS
    return !__builtin_mul_overflow(a, b, r);
#else
    return tn__mul_ok_portable(a, b, r);
#endif
}
static bool tn__add_ok(int64_t a, int64_t b, int64_t *r) {
#ifdef TN__HAVE_OVERFLOW_BUILTINS
    return !__builtin_add_overflow(a, b, r);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
    *r = a + b;
    return true;
#endif
}
/* The element count of shape in *n: 0 when a size is 0, whatever the others (PyTorch
   allows torch.zeros(0, 2**62, 2**62)); false when it does not fit in int64. */
static bool tn__numel_ok(const int64_t *shape, int ndim, int64_t *n) {
    int64_t p = 1;
    bool fits = true;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { *n = 0; return true; }
        if (fits) fits = tn__mul_ok(p, shape[i], &p);
    }
    *n = fits ? p : INT64_MAX;
    return fits;
}
/* Saturating forms, for nonnegative sizes that are checked again where they are used (a
   workspace's shape by tn__new: INT64_MAX is refused as too many elements) or need no
   exact value (the work estimate of a thread count): INT64_MAX when they do not fit. */
static int64_t tn__mul_sat(int64_t a, int64_t b) {
    int64_t r;
    return tn__mul_ok(a, b, &r) ? r : INT64_MAX;
}
static int64_t tn__add_sat(int64_t a, int64_t b) {
    int64_t r;
    return tn__add_ok(a, b, &r) ? r : INT64_MAX;
}
/* The start of part t of n items split into parts pieces: n * t / parts without the
   product (which may not fit for a huge n). */
static int64_t tn__split_at(int64_t n, int64_t t, int64_t parts) { return n / parts * t + n % parts * t / parts; }
/* a * b where a wrong value does no harm but undefined behaviour would (the stride of a
   size-1 dim, strides and offsets of an empty tensor): the product, or `otherwise`. */
static int64_t tn__mul_or(int64_t a, int64_t b, int64_t otherwise) {
    int64_t r;
    return tn__mul_ok(a, b, &r) ? r : otherwise;
}
/* Whether `bytes` (>= 0) fit in this machine's physical memory; true where the system does
   not say. For what is built piece by piece from a user's count (an RNN's layers): a count
   that cannot fit fails up front, instead of allocating small pieces until memory runs out. */
static bool tn__fits_memory(int64_t bytes) {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return bytes / page < pages;
#endif
    return bytes >= 0;
}
/* restrict in C and C++ (kernels' inner loops: no aliasing, so they vectorise) */
#if defined(__cplusplus) && defined(_MSC_VER)
#define TN__RESTRICT __restrict
#elif defined(__cplusplus)
#define TN__RESTRICT __restrict__
#else
#define TN__RESTRICT restrict
#endif
#if defined(__GNUC__) || defined(__clang__)
#define TN__STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)  /* flags kernel threads may all set */
#else
#define TN__STORE_RELAXED(p, v) (*(p) = (v))
#endif

