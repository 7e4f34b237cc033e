#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <float.h>
#include <limits.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef TENSOR_CBLAS
#include <cblas.h>
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
#endif

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
#else
#define TN__ATOMIC_ADD(p, v) (*(p) += (v)) /* TODO(port): MSVC Interlocked */
#define TN__ATOMIC_LOAD(p) (*(p))
#define TN__PRINTF_FMT(a, b)
#endif

#define TN__MIN(a, b) ((a) < (b) ? (a) : (b))
#define TN__MAX(a, b) ((a) > (b) ? (a) : (b))
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

/* OpenMP (built with -fopenmp): CPU kernels split work of at least TN_PARALLEL_MIN
   elements among tn_get_num_threads() threads; below it, waking the team costs more than
   it saves. Elementwise kernels give the same bits for any thread count (each element is
   computed alone); reductions too, as they split only over output elements. */
#ifndef TN_PARALLEL_MIN
#define TN_PARALLEL_MIN 32768
#endif
/* Threads for `work` elements split into at most `parts` independent pieces. */
static int tn__par_threads(int64_t work, int64_t parts) {
#ifdef _OPENMP
    if (work < TN_PARALLEL_MIN || parts < 2 || omp_in_parallel()) return 1;
    int t = omp_get_max_threads();
    return (int64_t)t < parts ? t : (int)parts;
#else
    (void)work; (void)parts;
    return 1;
#endif
}
#ifdef _OPENMP
#define TN__OMP_PARALLEL_FOR(nthr) _Pragma("omp parallel for schedule(static) num_threads(nthr) if(nthr > 1)")
#else
#define TN__OMP_PARALLEL_FOR(nthr) (void)(nthr);
#endif
