/* bench_util.h: the timing helpers the C benchmarks share (include after <time.h>). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H
#include <time.h>

/* wall-clock milliseconds (CLOCK_MONOTONIC) */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
/* qsort's comparison of doubles (medians) */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#endif
