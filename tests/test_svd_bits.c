/* test_svd_bits.c — issue 26: the SVD's QR on the bidiagonal (tn__la_bdsqr, src/ops/linalg_decomp.c)
 * queues its sweeps' rotations and applies them to U's and V's rows in packed column chunks
 * (AVX-512, AVX2 or plain kernels; two sweeps per pass where a SIMD kernel runs). Every element must see the same multiplications and
 * additions in the same order as rotating whole rows one rotation at a time, right after each
 * sweep (the code before the queue, kept here as the reference): d, U and V are compared bit
 * for bit on random, graded, repeated, zero-diagonal (the cancel branch), diagonal (negations
 * only) and large (the queue fills) bidiagonals, U wider than V and V with 2 n columns (the
 * complex SVD's), float64 and float32, each instruction set this CPU has. The thread count's
 * bits: bindings/python/tests/test_svd_bits.py (this binary's tensor.o has no thread pool). */
#include "tensor.h"
#include "tn_test.h"
#include <float.h>
#include <stdint.h>

/* the reference: the bdsqr before the queue (each sweep's rotations applied at once, row pairs) */
#define REF_BDSQR(T, S, EPS, HYPOT)                                                                        \
    static void ref_rot##S(T *x, T *y, T c, T s, int64_t len) {                                             \
        for (int64_t r = 0; r < len; r++) { const T u = x[r], v = y[r]; x[r] = c * u + s * v; y[r] = c * v - s * u; } \
    }                                                                                                       \
    static int ref_bdsqr##S(T *d, T *rv, int64_t n, T *ut, int64_t m, T *vt, int64_t nv, T *rot) {          \
        T anorm = 0;                                                                                        \
        for (int64_t i = n - 1; i > 0; i--) rv[i] = rv[i - 1];                                              \
        if (n > 0) rv[0] = 0;                                                                               \
        for (int64_t i = 0; i < n; i++) anorm = (T)fmax(anorm, fabs(d[i]) + fabs(rv[i]));                   \
        const T tol0 = EPS * anorm, tolr = (T)fmax(10, fmin(100, pow((double)EPS, -0.125))) * tol0;        \
        for (int64_t k = n - 1; k >= 0; k--) {                                                              \
            for (int its = 0;; its++) {                                                                     \
                int64_t l = k;                                                                              \
                int cancel = 1;                                                                             \
                const T tol = its < 30 ? tol0 : tolr; /* dbdsqr's threshold once the sweeps stall */       \
                for (; l >= 0; l--) {                                                                       \
                    if (l == 0 || fabs(rv[l]) <= tol) { cancel = 0; break; }                                \
                    if (fabs(d[l - 1]) <= tol) break;                                                       \
                }                                                                                           \
                if (cancel) {                                                                               \
                    T c = 0, s = 1;                                                                         \
                    const int64_t nm = l - 1;                                                               \
                    for (int64_t i = l; i <= k; i++) {                                                      \
                        const T f = s * rv[i];                                                              \
                        rv[i] *= c;                                                                         \
                        if (fabs(f) <= tol) break;                                                          \
                        const T g = d[i], h = HYPOT(f, g);                                                  \
                        d[i] = h;                                                                           \
                        c = g / h;                                                                          \
                        s = -f / h;                                                                         \
                        if (ut) ref_rot##S(ut + nm * m, ut + i * m, c, s, m);                               \
                    }                                                                                       \
                }                                                                                           \
                T z = d[k];                                                                                 \
                if (l == k) {                                                                               \
                    if (z < 0) { d[k] = -z; if (vt) for (int64_t r = 0; r < nv; r++) vt[k * nv + r] = -vt[k * nv + r]; } \
                    break;                                                                                  \
                }                                                                                           \
                if (its >= 75) return -1;                                                                   \
                T x = d[l], y = d[k - 1], g = rv[k - 1], h = rv[k];                                         \
                T f = ((y - z) * (y + z) + (g - h) * (g + h)) / (2 * h * y);                                \
                g = HYPOT(f, 1);                                                                            \
                f = ((x - z) * (x + z) + h * ((y / (f + (T)copysign(g, f))) - h)) / x;                      \
                T c = 1, s = 1;                                                                             \
                for (int64_t j = l; j < k; j++) {                                                           \
                    const int64_t i = j + 1;                                                                \
                    g = rv[i]; y = d[i]; h = s * g; g = c * g;                                              \
                    z = HYPOT(f, h); rv[j] = z; c = f / z; s = h / z;                                       \
                    f = x * c + g * s; g = g * c - x * s; h = y * s; y *= c;                                \
                    rot[j] = c; rot[n + j] = s;                                                             \
                    z = HYPOT(f, h); d[j] = z;                                                              \
                    if (z != 0) { c = f / z; s = h / z; }                                                   \
                    f = c * g + s * y; x = c * y - s * g;                                                   \
                    rot[2 * n + j] = c; rot[3 * n + j] = s;                                                 \
                }                                                                                           \
                if (vt)                                                                                     \
                    for (int64_t j = l; j < k; j++) {                                                       \
                        ref_rot##S(vt + j * nv, vt + (j + 1) * nv, rot[j], rot[n + j], nv);                 \
                        ref_rot##S(ut + j * m, ut + (j + 1) * m, rot[2 * n + j], rot[3 * n + j], m);        \
                    }                                                                                       \
                rv[l] = 0; rv[k] = f; d[k] = x;                                                             \
            }                                                                                               \
        }                                                                                                   \
        return 0;                                                                                           \
    }
static double hyp(double a, double b) {   /* tn__la_hypot */
    const double m = fmax(fabs(a), fabs(b));
    return m < 1e150 && m > 1e-150 ? sqrt(a * a + b * b) : hypot(a, b);
}
static float hyp_f(float a, float b) { return (float)sqrt((double)a * a + (double)b * b); }   /* tn__la_hypot_f */
REF_BDSQR(double, , DBL_EPSILON, hyp)
REF_BDSQR(float, _f, FLT_EPSILON, hyp_f)

static uint64_t rng_state;
static double urand(void) {   /* [-1, 1) */
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
}
enum { RANDOM, GRADED, REPEATED, ZEROS, DIAGONAL, NKINDS };
static const char *kind_name[] = {"random", "graded", "repeated", "zero diagonal entries", "diagonal"};

/* one bidiagonal of order n (d [n], e [n]; e[n-1] unused), U's rows m long, V's nv: the queue against the reference */
#define CASE(T, S)                                                                                          \
    static void run_case##S(int64_t n, int64_t m, int64_t nv, int kind, int isa, int vectors) {                 \
        const int64_t nn = n > 0 ? n : 1;                                                                   \
        T *d[2], *e[2], *u[2], *v[2], *rot = (T *)malloc((size_t)(4 * nn) * sizeof(T));                     \
        int rc[2];                                                                                          \
        rng_state = (uint64_t)(n * 131 + m * 7 + nv + kind);                                                \
        for (int w = 0; w < 2; w++) {                                                                       \
            d[w] = (T *)malloc((size_t)nn * sizeof(T)); e[w] = (T *)malloc((size_t)nn * sizeof(T));         \
            u[w] = (T *)malloc((size_t)(nn * m + 1) * sizeof(T)); v[w] = (T *)malloc((size_t)(nn * nv + 1) * sizeof(T)); \
        }                                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                                   \
            d[0][i] = (T)urand(); e[0][i] = (T)urand();                                                     \
            if (kind == GRADED) { d[0][i] *= (T)pow(10, -(double)i * 12 / (double)nn); e[0][i] *= (T)pow(10, -(double)i * 12 / (double)nn); } \
            if (kind == REPEATED) { d[0][i] = (T)(i % 2 ? -1 : 1); e[0][i] *= (T)1e-3; }                    \
            if (kind == ZEROS && (i % 7 == 3 || i == n - 1)) d[0][i] = 0;                                   \
            if (kind == DIAGONAL) e[0][i] = 0;                                                              \
        }                                                                                                   \
        for (int64_t i = 0; i < n * m; i++) u[0][i] = (T)urand();                                           \
        for (int64_t i = 0; i < n * nv; i++) v[0][i] = (T)urand();                                          \
        memcpy(d[1], d[0], (size_t)nn * sizeof(T)); memcpy(e[1], e[0], (size_t)nn * sizeof(T));             \
        memcpy(u[1], u[0], (size_t)(nn * m + 1) * sizeof(T)); memcpy(v[1], v[0], (size_t)(nn * nv + 1) * sizeof(T)); \
        rc[0] = ref_bdsqr##S(d[0], e[0], n, vectors ? u[0] : NULL, m, vectors ? v[0] : NULL, nv, rot);     \
        tn__gemm_tune.isa = isa;                                                                            \
        rc[1] = tn__la_bdsqr##S(d[1], e[1], n, vectors ? u[1] : NULL, m, vectors ? v[1] : NULL, nv, rot);   \
        tn__gemm_tune.isa = -1;                                                                             \
        const int same = rc[0] == rc[1] && !memcmp(d[0], d[1], (size_t)n * sizeof(T)) &&                   \
                         !memcmp(u[0], u[1], (size_t)(n * m) * sizeof(T)) && !memcmp(v[0], v[1], (size_t)(n * nv) * sizeof(T)); \
        CHECK_MSG(same, "%s n %lld m %lld nv %lld %s isa %d vectors %d: rc %d / %d, not the reference's bits", \
                  #T, (long long)n, (long long)m, (long long)nv, kind_name[kind], isa, vectors, rc[0], rc[1]); \
        CHECK_MSG(rc[1] == 0, "%s n %lld %s: did not converge", #T, (long long)n, kind_name[kind]);         \
        /* and it is an SVD step: d non-negative */                                                         \
        int nonneg = 1;                                                                                     \
        for (int64_t i = 0; i < n; i++) nonneg &= d[1][i] >= 0;                                             \
        CHECK(nonneg);                                                                                      \
        for (int w = 0; w < 2; w++) { free(d[w]); free(e[w]); free(u[w]); free(v[w]); }                     \
        free(rot);                                                                                          \
    }
CASE(double, )
CASE(float, _f)

/* the instruction sets to force (tn__gemm_tune.isa caps tn__gemm_isa): plain, AVX2, AVX-512 where the CPU has them */
static int isa_count(void) { return tn__gemm_isa() + 1; }

TEST(bdsqr_bits_small) {
    static const int64_t ns[] = {0, 1, 2, 3, 5, 17, 33, 70};
    for (int isa = 0; isa < isa_count(); isa++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (int kind = 0; kind < NKINDS; kind++) {
                const int64_t n = ns[i];
                run_case(n, n, n, kind, isa, 1);        /* square */
                run_case(n, n + 13, 2 * n, kind, isa, 1);   /* U's rows longer (tall input); V's 2 n (complex vectors) */
                run_case_f(n, n, n, kind, isa, 1);
                run_case_f(n, n + 45, n, kind, isa, 1);
            }
}
TEST(bdsqr_bits_no_vectors) {
    for (int kind = 0; kind < NKINDS; kind++) { run_case(40, 40, 40, kind, 0, 0); run_case_f(40, 40, 40, kind, 0, 0); }
}
TEST(bdsqr_bits_large) {   /* hundreds of sweeps: the queue fills (128 sweeps or 64 n rotations) and is flushed mid-way */
    for (int isa = 0; isa < isa_count(); isa++)
        for (int kind = 0; kind < NKINDS; kind++) {
            run_case(260, 260, 260, kind, isa, 1);
            run_case_f(200, 263, 200, kind, isa, 1);
        }
    run_case(512, 512, 512, RANDOM, isa_count() - 1, 1);
}

int main(void) {
    RUN(bdsqr_bits_small);
    RUN(bdsqr_bits_no_vectors);
    RUN(bdsqr_bits_large);
    return tn_test_report();
}
