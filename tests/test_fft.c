/* test_fft.c — issue 26, item 2: the FFT engine (src/ops/fft.c). Every length 1..256 against
 * a long double DFT (c2c both directions, r2c, c2r, float and double); large lengths (powers
 * of 2, 3, 5, primes through Bluestein, up to 2^20) against long double sums at sampled
 * outputs, the engine's own inverse (round trip), Parseval, linearity, the shift theorem
 * and known transforms (an impulse's, a pure tone's); strided, batched and in-place lines.
 * Errors are rms relative, bounded by a small multiple of eps * log2(n) (pocketfft's). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <float.h>

enum { FWD = 0, BWD = 1, R2C = 2, C2R = 3 };
static const long double PI_L = 3.141592653589793238462643383279502884L;

static uint64_t rng_state = 88172645463325252ull;
static double urand(void) {   /* xorshift64*: uniform in [-1, 1) */
    rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}
/* exp(-2 pi i sg (jk mod n) / n) in long double */
static void rootl(int64_t jk, int64_t n, int sg, long double *c, long double *s) {
    long double a = 2 * PI_L * (long double)(jk % n) / (long double)n;
    *c = cosl(a); *s = -sg * sinl(a);
}
/* the n-th roots exp(-2 pi i j / n), j < n, in long double (cos, sin pairs) */
static long double *roots(int64_t n) {
    long double *t = (long double *)malloc((size_t)(2 * n) * sizeof(long double));
    for (int64_t j = 0; j < n; j++) rootl(j, n, 1, &t[2 * j], &t[2 * j + 1]);
    return t;
}
/* the DFT of x (n complex, long double) at output k; sg +1 forward, -1 backward; rt: roots(n) */
static void dft_at(const long double *x, const long double *rt, int64_t n, int64_t k, int sg, long double *re, long double *im) {
    long double r = 0, i = 0;
    int64_t jk = 0;
    for (int64_t j = 0; j < n; j++) {
        long double c = rt[2 * jk], s = sg * rt[2 * jk + 1];
        r += x[2 * j] * c - x[2 * j + 1] * s;
        i += x[2 * j] * s + x[2 * j + 1] * c;
        jk += k; if (jk >= n) jk -= n;
    }
    *re = r; *im = i;
}
static double eps_of(int dbl) { return dbl ? DBL_EPSILON : FLT_EPSILON; }
static double log2n(int64_t n) { return n > 2 ? log2((double)n) : 1.0; }
/* values in and out of the engine's precision */
static void put(void *b, int dbl, int64_t i, double v) { if (dbl) ((double *)b)[i] = v; else ((float *)b)[i] = (float)v; }
static double get(const void *b, int dbl, int64_t i) { return dbl ? ((const double *)b)[i] : (double)((const float *)b)[i]; }
static void *buf(int dbl, int64_t reals) { return calloc((size_t)(reals + 2), dbl ? 8 : 4); }

/* rms relative error of the engine's transform of kind of random data of length n against
   the long double DFT at every output */
static double err_vs_dft(int64_t n, int dbl, int kind) {
    const int64_t h = n / 2 + 1;
    const int64_t nin = kind == R2C ? n : kind == C2R ? 2 * h : 2 * n, nout = kind == C2R ? n : kind == R2C ? 2 * h : 2 * n;
    void *in = buf(dbl, nin), *out = buf(dbl, nout);
    long double *x = (long double *)calloc((size_t)(2 * n + 2), sizeof(long double));
    for (int64_t i = 0; i < nin; i++) put(in, dbl, i, urand());
    /* the long double input as a full complex line */
    if (kind == R2C) for (int64_t i = 0; i < n; i++) { x[2 * i] = get(in, dbl, i); x[2 * i + 1] = 0; }
    else if (kind == C2R) {   /* Hermitian extension; imag of X_0 (and X_(n/2), n even) ignored */
        x[0] = get(in, dbl, 0); x[1] = 0;
        for (int64_t k = 1; k < h; k++) {
            x[2 * k] = get(in, dbl, 2 * k); x[2 * k + 1] = get(in, dbl, 2 * k + 1);
            if (n % 2 == 0 && k == n / 2) x[2 * k + 1] = 0;
            x[2 * (n - k)] = x[2 * k]; x[2 * (n - k) + 1] = -x[2 * k + 1];
        }
    } else for (int64_t i = 0; i < 2 * n; i++) x[i] = get(in, dbl, i);
    if (tn__fft_exec(n, dbl, kind, in, 1, 0, out, 1, 0, 1, 1.0)) { free(in); free(out); free(x); return 1e30; }
    const int sg = kind == FWD || kind == R2C ? 1 : -1;
    long double *rt = roots(n);
    const int64_t kmax = kind == R2C ? h : n;
    long double num = 0, den = 0;
    for (int64_t k = 0; k < kmax; k++) {
        long double re, im;
        dft_at(x, rt, n, k, sg, &re, &im);
        long double er, ei;
        if (kind == C2R) { er = get(out, dbl, k) - re; ei = 0; }
        else { er = get(out, dbl, 2 * k) - re; ei = get(out, dbl, 2 * k + 1) - im; }
        num += er * er + ei * ei;
        den += re * re + im * im;
    }
    free(in); free(out); free(x); free(rt);
    return den > 0 ? (double)sqrtl(num / den) : (double)sqrtl(num);
}

TEST(every_length_to_256_against_the_dft) {
    double worst[2][4] = {{0}};
    for (int dbl = 0; dbl < 2; dbl++)
        for (int kind = 0; kind < 4; kind++)
            for (int64_t n = 1; n <= 256; n++) {
                double e = err_vs_dft(n, dbl, kind) / (eps_of(dbl) * log2n(n));
                if (e > worst[dbl][kind]) worst[dbl][kind] = e;
                if (!(e < 2.0)) fail_at(__LINE__, "n=%lld %s kind %d: rms error %.3g eps log2 n", (long long)n, dbl ? "double" : "float", kind, e);
            }
    printf("  worst rms error / (eps log2 n), n <= 256: float %.2f %.2f %.2f %.2f, double %.2f %.2f %.2f %.2f (c2c fwd, bwd, r2c, c2r)\n",
           worst[0][0], worst[0][1], worst[0][2], worst[0][3], worst[1][0], worst[1][1], worst[1][2], worst[1][3]);
    CHECK(worst[1][0] > 0);   /* the comparison saw rounding at all */
}

/* some lengths above 256 with every path: generic radices (7, 11, 13, 61), Bluestein (67,
   257, 1009), mixed */
TEST(selected_lengths_against_the_dft) {
    const int64_t ns[] = {343, 1331, 2197, 61 * 4, 67, 257, 1009, 2 * 1009, 1000, 1024, 3 * 3 * 5 * 7 * 11, 4099, 7919};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int dbl = 0; dbl < 2; dbl++)
            for (int kind = 0; kind < 4; kind++) {
                double e = err_vs_dft(ns[i], dbl, kind) / (eps_of(dbl) * log2n(ns[i]));
                if (!(e < 2.0)) fail_at(__LINE__, "n=%lld %s kind %d: rms error %.3g eps log2 n", (long long)ns[i], dbl ? "double" : "float", kind, e);
                else tn_test_passed++;
            }
}

/* Large n: sampled outputs against long double sums, the round trip, Parseval, linearity,
   the shift theorem. */
static void large_checks(int64_t n, int dbl, int line) {
    const double tol = 2.0 * eps_of(dbl) * log2n(n);
    void *x = buf(dbl, 2 * n), *y = buf(dbl, 2 * n), *X = buf(dbl, 2 * n), *Y = buf(dbl, 2 * n), *Z = buf(dbl, 2 * n);
    long double *xl = (long double *)malloc((size_t)(2 * n) * sizeof(long double));
    for (int64_t i = 0; i < 2 * n; i++) { put(x, dbl, i, urand()); put(y, dbl, i, urand()); xl[i] = get(x, dbl, i); }
    CHECK(tn__fft_exec(n, dbl, FWD, x, 1, 0, X, 1, 0, 1, 1.0) == 0);
    /* sampled outputs */
    long double num = 0, den = 0, *rt = roots(n);
    for (int t = 0; t < 6; t++) {
        int64_t k = t == 0 ? 0 : t == 1 ? n - 1 : (int64_t)((urand() + 1) * 0.5 * (double)n) % n;
        long double re, im;
        dft_at(xl, rt, n, k, 1, &re, &im);
        long double er = get(X, dbl, 2 * k) - re, ei = get(X, dbl, 2 * k + 1) - im;
        num += er * er + ei * ei; den += re * re + im * im;
    }
    double e = (double)sqrtl(num / den);
    if (!(e < tol)) fail_at(line, "n=%lld %s: sampled outputs' error %.3g > %.3g", (long long)n, dbl ? "double" : "float", e, tol);
    else tn_test_passed++;
    /* Parseval: sum |X|^2 = n sum |x|^2 */
    long double sx = 0, sX = 0;
    for (int64_t i = 0; i < 2 * n; i++) { sx += xl[i] * xl[i]; sX += (long double)get(X, dbl, i) * get(X, dbl, i); }
    e = fabs((double)(sX / ((long double)n * sx) - 1));
    if (!(e < tol)) fail_at(line, "n=%lld: Parseval off by %.3g", (long long)n, e);
    else tn_test_passed++;
    /* round trip: bwd(fwd(x)) / n = x */
    CHECK(tn__fft_exec(n, dbl, BWD, X, 1, 0, Z, 1, 0, 1, 1.0 / (double)n) == 0);
    num = 0;
    for (int64_t i = 0; i < 2 * n; i++) { long double d = get(Z, dbl, i) - xl[i]; num += d * d; }
    e = (double)sqrtl(num / sx);
    if (!(e < tol)) fail_at(line, "n=%lld %s: round trip error %.3g > %.3g", (long long)n, dbl ? "double" : "float", e, tol);
    else tn_test_passed++;
    /* linearity: fft(2x - 3y) = 2X - 3Y */
    CHECK(tn__fft_exec(n, dbl, FWD, y, 1, 0, Y, 1, 0, 1, 1.0) == 0);
    for (int64_t i = 0; i < 2 * n; i++) put(Z, dbl, i, 2 * get(x, dbl, i) - 3 * get(y, dbl, i));
    CHECK(tn__fft_exec(n, dbl, FWD, Z, 1, 0, Z, 1, 0, 1, 1.0) == 0);   /* in place */
    num = 0; den = 0;
    for (int64_t i = 0; i < 2 * n; i++) {
        long double r = 2 * (long double)get(X, dbl, i) - 3 * (long double)get(Y, dbl, i), d = get(Z, dbl, i) - r;
        num += d * d; den += r * r;
    }
    e = (double)sqrtl(num / den);
    if (!(e < 2 * tol)) fail_at(line, "n=%lld: linearity off by %.3g", (long long)n, e);
    else tn_test_passed++;
    /* shift theorem: fft(roll(x, sh))_k = X_k exp(-2 pi i k sh / n) */
    const int64_t sh = n / 3 + 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t src = ((i - sh) % n + n) % n;
        put(Z, dbl, 2 * i, get(x, dbl, 2 * src)); put(Z, dbl, 2 * i + 1, get(x, dbl, 2 * src + 1));
    }
    CHECK(tn__fft_exec(n, dbl, FWD, Z, 1, 0, Y, 1, 0, 1, 1.0) == 0);
    num = 0; den = 0;
    for (int64_t k = 0; k < n; k++) {
        long double c, s;
        c = rt[2 * (k * sh % n)]; s = rt[2 * (k * sh % n) + 1];
        long double xr = get(X, dbl, 2 * k), xi = get(X, dbl, 2 * k + 1);
        long double rr = xr * c - xi * s, ri = xr * s + xi * c;
        long double dr = get(Y, dbl, 2 * k) - rr, di = get(Y, dbl, 2 * k + 1) - ri;
        num += dr * dr + di * di; den += rr * rr + ri * ri;
    }
    e = (double)sqrtl(num / den);
    if (!(e < 2 * tol)) fail_at(line, "n=%lld: shift theorem off by %.3g", (long long)n, e);
    else tn_test_passed++;
    /* an impulse at sh transforms to the roots exp(-2 pi i k sh / n): known exactly */
    memset(Z, 0, (size_t)(2 * n) * (dbl ? 8 : 4));
    put(Z, dbl, 2 * sh, 1.0);
    CHECK(tn__fft_exec(n, dbl, FWD, Z, 1, 0, Y, 1, 0, 1, 1.0) == 0);
    num = 0;
    for (int64_t k = 0; k < n; k++) {
        long double c, s;
        c = rt[2 * (k * sh % n)]; s = rt[2 * (k * sh % n) + 1];
        long double dr = get(Y, dbl, 2 * k) - c, di = get(Y, dbl, 2 * k + 1) - s;
        num += dr * dr + di * di;
    }
    e = (double)sqrtl(num / (long double)n);
    if (!(e < tol)) fail_at(line, "n=%lld: impulse off by %.3g", (long long)n, e);
    else tn_test_passed++;
    /* r2c of the real parts: the first n/2 + 1 outputs of the complex transform of (re, 0) */
    for (int64_t i = 0; i < n; i++) { put(y, dbl, i, get(x, dbl, 2 * i)); put(Z, dbl, 2 * i, get(x, dbl, 2 * i)); put(Z, dbl, 2 * i + 1, 0); }
    CHECK(tn__fft_exec(n, dbl, FWD, Z, 1, 0, Y, 1, 0, 1, 1.0) == 0);
    CHECK(tn__fft_exec(n, dbl, R2C, y, 1, 0, X, 1, 0, 1, 1.0) == 0);
    num = 0; den = 0;
    for (int64_t i = 0; i < 2 * (n / 2 + 1); i++) {
        long double d = (long double)get(X, dbl, i) - get(Y, dbl, i);
        num += d * d; den += (long double)get(Y, dbl, i) * get(Y, dbl, i);
    }
    e = (double)sqrtl(num / den);
    if (!(e < 2 * tol)) fail_at(line, "n=%lld: r2c against c2c off by %.3g", (long long)n, e);
    else tn_test_passed++;
    /* and c2r brings it back (times n) */
    CHECK(tn__fft_exec(n, dbl, C2R, X, 1, 0, Z, 1, 0, 1, 1.0 / (double)n) == 0);
    num = 0; den = 0;
    for (int64_t i = 0; i < n; i++) {
        long double d = (long double)get(Z, dbl, i) - get(y, dbl, i);
        num += d * d; den += (long double)get(y, dbl, i) * get(y, dbl, i);
    }
    e = (double)sqrtl(num / den);
    if (!(e < tol)) fail_at(line, "n=%lld: c2r round trip off by %.3g", (long long)n, e);
    else tn_test_passed++;
    free(x); free(y); free(X); free(Y); free(Z); free(xl); free(rt);
}

TEST(powers_of_2_3_5) {
    for (int dbl = 0; dbl < 2; dbl++) {
        for (int64_t n = 512; n <= (1 << 20); n *= 8) large_checks(n, dbl, __LINE__);
        large_checks(1 << 20, dbl, __LINE__);
        large_checks(531441, dbl, __LINE__);   /* 3^12 */
        large_checks(390625, dbl, __LINE__);   /* 5^8 */
        large_checks(2 * 3 * 5 * 7 * 11 * 13 * 17, dbl, __LINE__);
    }
}
TEST(primes_through_bluestein) {
    for (int dbl = 0; dbl < 2; dbl++) {
        large_checks(65537, dbl, __LINE__);
        large_checks(1000003, dbl, __LINE__);
        large_checks(2 * 10007, dbl, __LINE__);
        large_checks(786433, dbl, __LINE__);   /* 3 * 2^18 + 1: m = 2^21 * 3 / 4... a smooth convolution */
    }
}

/* batches: strided input and output lines, threaded, against line-by-line contiguous runs */
TEST(strided_batches) {
    for (int dbl = 0; dbl < 2; dbl++)
        for (int kind = 0; kind < 4; kind++) {
            const int64_t n = kind == C2R ? 30 : 24, B = 700, h = n / 2 + 1;
            const int64_t nin = kind == R2C ? n : kind == C2R ? h : n, nout = kind == C2R ? n : kind == R2C ? h : n;
            const int cin = kind != R2C, cout = kind != C2R;
            /* input: element i of line b at (i * B + b) (transposed); output at (b * (nout + 3) + i) */
            void *in = buf(dbl, (cin ? 2 : 1) * nin * B), *out = buf(dbl, (cout ? 2 : 1) * (nout + 3) * B);
            void *l = buf(dbl, 2 * n + 2), *o = buf(dbl, 2 * n + 2);
            for (int64_t i = 0; i < (cin ? 2 : 1) * nin * B; i++) put(in, dbl, i, urand());
            CHECK(tn__fft_exec(n, dbl, kind, in, B, 1, out, 1, nout + 3, B, 0.5) == 0);
            double worst = 0;
            for (int64_t b = 0; b < B; b += 37) {
                for (int64_t i = 0; i < nin; i++)
                    for (int c = 0; c < (cin ? 2 : 1); c++) put(l, dbl, (cin ? 2 : 1) * i + c, get(in, dbl, (cin ? 2 : 1) * (i * B + b) + c));
                CHECK(tn__fft_exec(n, dbl, kind, l, 1, 0, o, 1, 0, 1, 0.5) == 0);
                for (int64_t i = 0; i < (cout ? 2 : 1) * nout; i++) {
                    double d = fabs(get(out, dbl, (cout ? 2 : 1) * b * (nout + 3) + i) - get(o, dbl, i));
                    if (d > worst) worst = d;
                }
            }
            if (worst != 0) fail_at(__LINE__, "kind %d %s: strided batch differs from single lines by %g", kind, dbl ? "double" : "float", worst);
            else tn_test_passed++;
            free(in); free(out); free(l); free(o);
        }
}

TEST(errors) {
    float x[4] = {0};
    CHECK(tn__fft_exec(0, 0, FWD, x, 1, 0, x, 1, 0, 1, 1.0) == -1);
    CHECK(strstr(tn_last_error(), "invalid number of data points (0)") != NULL);
    CHECK(tn__fft_exec(-3, 1, FWD, x, 1, 0, x, 1, 0, 1, 1.0) == -1);
    CHECK(tn__fft_exec(2, 0, FWD, x, 1, 0, x, 1, 0, 0, 1.0) == 0);   /* no lines: nothing to do */
}

/* ---- the tensor layer (tn__fft_c2c over a complex tensor's real view) ---- */

/* the reference: x [A, B, C] complex (real view [A, B, C, 2], float64) transformed along dims
   0 and 2 after padding / cropping them to n0, n2, in long double, times scale */
static double layer_err(tn_tensor *xr, tn_tensor *got, int64_t n0, int64_t n2, int sg, double scale) {
    tn_tensor *c = tn_contiguous(xr);
    const double *x = (const double *)tn_data_ptr(c), *g = (const double *)tn_data_ptr(got);
    const int64_t A = tn_shape(xr)[0], B = tn_shape(xr)[1], C = tn_shape(xr)[2];
    long double num = 0, den = 0;
    for (int64_t a = 0; a < n0; a++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t cc = 0; cc < n2; cc++) {
                long double re = 0, im = 0;
                for (int64_t j = 0; j < (A < n0 ? A : n0); j++)
                    for (int64_t l = 0; l < (C < n2 ? C : n2); l++) {
                        long double ang = -sg * 2 * PI_L * ((long double)(a * j % n0) / n0 + (long double)(cc * l % n2) / n2);
                        long double xr_ = x[2 * ((j * B + b) * C + l)], xi = x[2 * ((j * B + b) * C + l) + 1];
                        re += xr_ * cosl(ang) - xi * sinl(ang);
                        im += xr_ * sinl(ang) + xi * cosl(ang);
                    }
                re *= scale; im *= scale;
                const double *o = g + 2 * ((a * B + b) * n2 + cc);
                num += (o[0] - re) * (o[0] - re) + (o[1] - im) * (o[1] - im);
                den += re * re + im * im;
            }
    return (double)sqrtl(num / den);
}

TEST(layer_fftn_against_the_dft) {
    tn_scope_begin();
    /* non-contiguous input: a transposed [6, 5, 3, 2] made [3, 5, 6, 2] */
    tn_tensor *xr = tn_permute(tn_randn(TN_SHAPE(6, 5, 3, 2), TN_F64), TN_SHAPE(2, 1, 0, 3));
    const char *norms[] = {NULL, "backward", "forward", "ortho"};
    const int64_t sizes[][2] = {{3, 6}, {4, 8}, {2, 5}, {7, 4}};
    for (int fwd = 0; fwd < 2; fwd++)
        for (int ni = 0; ni < 4; ni++)
            for (int si = 0; si < 4; si++) {
                const int64_t n0 = sizes[si][0], n2 = sizes[si][1], cnt = n0 * n2;
                tn_tensor *r = tn__fft_c2c(xr, 2, (const int64_t[]){0, -1}, 2, sizes[si], norms[ni], fwd);
                if (!r) { fail_at(__LINE__, "%s", tn_last_error()); continue; }
                CHECK(tn_ndim(r) == 4 && tn_shape(r)[0] == n0 && tn_shape(r)[1] == 5 && tn_shape(r)[2] == n2 && tn_shape(r)[3] == 2);
                const char *nm = norms[ni] ? norms[ni] : "backward";
                double scale = !strcmp(nm, "ortho") ? 1 / sqrt((double)cnt) : (!strcmp(nm, "forward")) == fwd ? 1.0 / (double)cnt : 1.0;
                double e = layer_err(xr, r, n0, n2, fwd ? 1 : -1, scale);
                if (!(e < 8 * DBL_EPSILON)) fail_at(__LINE__, "fwd %d norm %s n (%lld, %lld): error %.3g", fwd, nm, (long long)n0, (long long)n2, e);
                else tn_test_passed++;
            }
    /* float32 too, and every dim by default; ortho round trip */
    tn_tensor *xf = tn_randn(TN_SHAPE(4, 9, 2), TN_F32);
    tn_tensor *rt = tn__fft_c2c(tn__fft_c2c(xf, 0, NULL, 0, NULL, "ortho", true), 0, NULL, 0, NULL, "ortho", false);
    CHECK(rt && tn_get_dtype(rt) == TN_F32 && tn_item(tn_max(tn_abs(tn_sub(rt, xf)))) < 1e-5);
    /* the last nn dims when only sizes are given: n = (12,) pads dim 1 (9 -> 12) */
    tn_tensor *p = tn__fft_c2c(xf, 0, NULL, 1, (const int64_t[]){12}, NULL, true);
    CHECK(p && tn_shape(p)[0] == 4 && tn_shape(p)[1] == 12);
    tn_tensor *q = tn__fft_c2c(xf, 1, (const int64_t[]){-1}, 1, (const int64_t[]){12}, NULL, true);
    CHECK(q && tn_item(tn_max(tn_abs(tn_sub(p, q)))) == 0);
    tn_scope_end();
}

static tn_tensor *layer_fn(tn_tensor *const *in, int n, void *ctx) {
    (void)n;
    const int which = *(const int *)ctx;
    const int64_t sizes[2] = {4, 3};
    tn_tensor *r = tn__fft_c2c(in[0], 2, (const int64_t[]){0, 1}, 2, sizes, which ? "ortho" : NULL, which == 0);
    return tn_mul(r, tn_cos(r));   /* nonlinear, so gradgradcheck sees second derivatives */
}
TEST(layer_gradients) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(3, 5, 2), TN_F64);
    tn_requires_grad_(x, true);
    for (int which = 0; which < 2; which++) {
        CHECK(tn_gradcheck(layer_fn, &x, 1, &which, .rtol = 1e-4));
        CHECK(tn_gradgradcheck(layer_fn, &x, 1, &which, .rtol = 1e-4));
    }
    tn_tensor *r = tn__fft_c2c(x, 0, NULL, 0, NULL, NULL, true);
    CHECK(r && tn_grad_fn_name(r) && !strcmp(tn_grad_fn_name(r), "FftC2CBackward0"));
    tn_scope_end();
}

TEST(layer_errors) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(3, 4, 2), TN_F32);
    CHECK_ERR(tn__fft_c2c(x, 0, NULL, 0, NULL, "bogus", true), "Invalid normalization mode: \"bogus\"");
    CHECK_ERR(tn__fft_c2c(x, 2, (const int64_t[]){0, -2}, 0, NULL, NULL, true), "FFT dims must be unique");
    CHECK_ERR(tn__fft_c2c(x, 1, (const int64_t[]){2}, 0, NULL, NULL, false), "out of range");
    CHECK_ERR(tn__fft_c2c(x, 1, (const int64_t[]){0}, 1, (const int64_t[]){0}, NULL, true), "Invalid number of data points (0) specified");
    CHECK_ERR(tn__fft_c2c(tn_randn(TN_SHAPE(3, 4), TN_F32), 0, NULL, 0, NULL, NULL, true), "real view of a complex tensor");
    CHECK_ERR(tn__fft_c2c(tn_ones(TN_SHAPE(3, 2), TN_I64), 0, NULL, 0, NULL, NULL, true), "real view of a complex tensor");
    CHECK_ERR(tn__fft_c2c(x, 3, (const int64_t[]){0, 1, 0}, 0, NULL, NULL, true), "3 dims");
    if (tn_cuda_is_available()) {   /* CUDA tensors run through tn_backend.fft (cuFFT): tests/cuda_cases_complex.h */
        tn_tensor *g = tn__fft_c2c(tn_to(x, TN_CUDA), 0, NULL, 0, NULL, NULL, true);
        CHECK(g && g->device == TN_CUDA);
    }
    tn_scope_end();
}

int main(void) {
    RUN(every_length_to_256_against_the_dft);
    RUN(selected_lengths_against_the_dft);
    RUN(powers_of_2_3_5);
    RUN(primes_through_bluestein);
    RUN(strided_batches);
    RUN(errors);
    RUN(layer_fftn_against_the_dft);
    RUN(layer_gradients);
    RUN(layer_errors);
    return tn_test_report();
}
