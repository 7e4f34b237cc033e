/* The reference BLAS's complex matrix-vector product (zgemv_, cgemv_: netlib's loops), preloaded
   with the sanitizer runtimes into the Python suite's interpreter (make test SANITIZE=1) in
   front of OpenBLAS. Debian's OpenBLAS 0.3.21 zgemv_n kernels (HASWELL, SANDYBRIDGE) read a few
   elements past a vector's end: harmless under glibc's malloc, a SEGV under ASan's allocator
   when the buffer ends a mapped region. torch's complex LAPACK calls (zgesdd's zlarf) reach it:
   the oracle, not the library under test, crashed the sanitizer run now and then. */
#include <tgmath.h>   /* conj of either precision */
#include <stddef.h>

#define GEMV(NAME, T)                                                                                          \
    void NAME(const char *trans, const int *m, const int *n, const T *alpha, const T *a, const int *lda,       \
              const T *x, const int *incx, const T *beta, T *y, const int *incy);                              \
    void NAME(const char *trans, const int *m, const int *n, const T *alpha, const T *a, const int *lda,       \
              const T *x, const int *incx, const T *beta, T *y, const int *incy) {                             \
        const int M = *m, N = *n, LDA = *lda, IX = *incx, IY = *incy;                                           \
        const char t = (char)(*trans | 0x20);                                                                   \
        if (M <= 0 || N <= 0) return;                                                                           \
        const int lx = t == 'n' ? N : M, ly = t == 'n' ? M : N;                                                 \
        const ptrdiff_t kx = IX > 0 ? 0 : (ptrdiff_t)(1 - lx) * IX, ky = IY > 0 ? 0 : (ptrdiff_t)(1 - ly) * IY;  \
        for (int i = 0; i < ly; i++) {                                                                          \
            T *yi = y + ky + (ptrdiff_t)i * IY;                                                                 \
            *yi = *beta == 0 ? 0 : *beta * *yi;                                                                 \
        }                                                                                                       \
        if (*alpha == 0) return;                                                                                \
        for (int j = 0; j < N; j++) {                                                                           \
            const T *col = a + (ptrdiff_t)j * LDA;                                                              \
            if (t == 'n') {                                                                                     \
                const T tmp = *alpha * x[kx + (ptrdiff_t)j * IX];                                               \
                for (int i = 0; i < M; i++) y[ky + (ptrdiff_t)i * IY] += tmp * col[i];                          \
            } else {                                                                                            \
                T s = 0;                                                                                        \
                for (int i = 0; i < M; i++) s += (t == 'c' ? conj(col[i]) : col[i]) * x[kx + (ptrdiff_t)i * IX]; \
                y[ky + (ptrdiff_t)j * IY] += *alpha * s;                                                        \
            }                                                                                                   \
        }                                                                                                       \
    }
GEMV(zgemv_, double complex)
GEMV(cgemv_, float complex)
