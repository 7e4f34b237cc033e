/* The FFT engine under torch.fft: planned 1-d transforms over interleaved complex buffers
   (re, im pairs of float or double), any length, batched over strided lines.

   Algorithm. A plan factors n into radices 4, 2, 3, 5 and odd radices up to
   TN__FFT_GENERIC_MAX (one generic O(r^2) butterfly each), and runs a Stockham autosort:
   one pass per radix from a buffer to the other, each pass reading r strided inputs,
   butterflying them and multiplying by precomputed twiddles, so the output comes out in
   natural order without a bit reversal. In pass k with stride s (the radices before it
   multiplied) the innermost loop runs over s contiguous complex numbers that share one
   twiddle, which the compiler vectorises (the passes are compiled plain, for AVX2 and
   for AVX-512, chosen at run time as the library's other float loops: TN__WIDE). A length with
   a prime factor above TN__FFT_GENERIC_MAX goes through Bluestein's chirp-z algorithm: a
   circular convolution of length m >= 2n - 1 (m 2,3,5-smooth) done with two FFTs of length
   m, the chirp's FFT precomputed in the plan. Real input (r2c, n/2 + 1 outputs) of even n
   packs the n reals as n/2 complex numbers, runs a half-length complex FFT and untangles
   the even and odd halves in a post-pass; its inverse (c2r) does the same backwards. Odd n
   runs the full complex transform. Plans are cached by (n, precision, kind): twiddles are
   computed once. Lines of a batch run on the library's thread pool.

   Accuracy. Twiddles are computed in double from exactly reduced angles (the index k*p
   mod N, then an octant of the circle), so each is within an ulp of the true root; the
   error of a transform grows like eps * log2(n) (rms relative), as pocketfft's and FFTW's:
   tests/test_fft.c checks it against a long double DFT for n = 1..256 and on round trips,
   Parseval and the shift theorem for powers of 2, 3, 5 and primes up to 2^20. */

#define TN__FFT_GENERIC_MAX 64   /* largest radix done by the generic butterfly; above: Bluestein */
#define TN__FFT_MAXF 64          /* radices in one plan at most (2^63 has 32) */

enum { TN__FFT_FWD = 0, TN__FFT_BWD = 1, TN__FFT_R2C = 2, TN__FFT_C2R = 3 };

typedef struct tn__fft_plan tn__fft_plan;
struct tn__fft_plan {
    int64_t n;
    int dbl, kind;        /* double precision; TN__FFT_* */
    int refs;             /* the cache's reference and every running user's */
    /* Stockham (kind FWD/BWD, no Bluestein): the radices, each pass's twiddles */
    int nf, fac[TN__FFT_MAXF];
    int64_t twoff[TN__FFT_MAXF], rtoff[TN__FFT_MAXF];
    void *tw;             /* for pass k, p < m, j in 1..r-1: w^(j p) as (re, im) at twoff[k] + 2 (p (r-1) + j - 1) */
    void *rt;             /* generic radices: cos, sin of 2 pi j / r, j < r, at rtoff[k] */
    /* Bluestein: convolution length, the chirp (n) and its filter's FFT (m, divided by m) */
    int64_t bm;
    void *chirp, *filt;
    tn__fft_plan *sub;    /* Bluestein: the forward plan of bm; r2c/c2r: the complex plan of n/2 (even n) or n (odd) */
    void *rtw;            /* r2c/c2r of even n: w^k = exp(-2 pi i k / n), k < n/2 */
    int64_t work;         /* scratch per line, in complex numbers */
};

/* cos and sin of 2 pi j / n (0 <= j < n) from an angle reduced to the first octant exactly
   (integer arithmetic), so large n loses nothing to the argument's rounding. */
static void tn__fft_root(int64_t j, int64_t n, double *c, double *s) {
    const double pi2 = 1.5707963267948966192313216916397514;   /* pi / 2 */
    /* angle = (pi/2) * (4j / n): quadrant q, remainder r in [0, n) */
    int64_t q, r;
    if (n <= INT64_MAX / 8) { q = 4 * j / n; r = 4 * j - q * n; }
    else { double a = 4.0 * (double)j / (double)n; q = (int64_t)a; r = (int64_t)((a - (double)q) * (double)n); }
    double x, y;   /* cos, sin of (pi/2) r / n */
    if (2 * r <= n) { double t = pi2 * (double)r / (double)n; x = cos(t); y = sin(t); }
    else { double t = pi2 * (double)(n - r) / (double)n; x = sin(t); y = cos(t); }
    switch (q & 3) {
    case 0: *c = x; *s = y; break;
    case 1: *c = -y; *s = x; break;
    case 2: *c = -x; *s = -y; break;
    default: *c = y; *s = -x; break;
    }
}

/* ---- the passes: one Stockham pass of radix r, stride s, m = n / (s r) groups ----
   x[q + s (p + j m)] for j < r butterflied into y[q + s (r p + k)], times w^(k p).
   dir: +1 forward (exp(-i ...)), -1 backward. Complex numbers are (re, im) pairs. */
/* @template TN__FFT_PASSES(T, SFX, ATTR) */
ATTR static void tn__fft_pass2_##SFX(int64_t s, int64_t m, const T *TN__RESTRICT x, T *TN__RESTRICT y, const T *TN__RESTRICT tw) {
    for (int64_t p = 0; p < m; p++) {
        const T wr = tw[2 * p], wi = tw[2 * p + 1];
        const T *a0 = x + 2 * s * p, *a1 = a0 + 2 * s * m;
        T *b0 = y + 2 * s * (2 * p), *b1 = b0 + 2 * s;
        for (int64_t q = 0; q < s; q++) {
            T ar = a0[2 * q], ai = a0[2 * q + 1], br = a1[2 * q], bi = a1[2 * q + 1];
            b0[2 * q] = ar + br; b0[2 * q + 1] = ai + bi;
            T dr = ar - br, di = ai - bi;
            b1[2 * q] = dr * wr - di * wi; b1[2 * q + 1] = dr * wi + di * wr;
        }
    }
}
ATTR static inline void tn__fft_r4_##SFX(int64_t s, int64_t m, int64_t p, const T *TN__RESTRICT x, T *TN__RESTRICT y, const T *TN__RESTRICT tw, T d) {
    const T *w = tw + 6 * p;
    const T w1r = w[0], w1i = w[1], w2r = w[2], w2i = w[3], w3r = w[4], w3i = w[5];
    const T *a0 = x + 2 * s * p, *a1 = a0 + 2 * s * m, *a2 = a1 + 2 * s * m, *a3 = a2 + 2 * s * m;
    T *b0 = y + 2 * s * (4 * p), *b1 = b0 + 2 * s, *b2 = b1 + 2 * s, *b3 = b2 + 2 * s;
    for (int64_t q = 0; q < s; q++) {
        T t0r = a0[2 * q] + a2[2 * q], t0i = a0[2 * q + 1] + a2[2 * q + 1];
        T t1r = a0[2 * q] - a2[2 * q], t1i = a0[2 * q + 1] - a2[2 * q + 1];
        T t2r = a1[2 * q] + a3[2 * q], t2i = a1[2 * q + 1] + a3[2 * q + 1];
        T ur = a1[2 * q] - a3[2 * q], ui = a1[2 * q + 1] - a3[2 * q + 1];
        T t3r = d * ui, t3i = -d * ur;   /* (a1 - a3) (-i d) */
        b0[2 * q] = t0r + t2r; b0[2 * q + 1] = t0i + t2i;
        T c2r = t0r - t2r, c2i = t0i - t2i, c1r = t1r + t3r, c1i = t1i + t3i, c3r = t1r - t3r, c3i = t1i - t3i;
        b1[2 * q] = c1r * w1r - c1i * w1i; b1[2 * q + 1] = c1r * w1i + c1i * w1r;
        b2[2 * q] = c2r * w2r - c2i * w2i; b2[2 * q + 1] = c2r * w2i + c2i * w2r;
        b3[2 * q] = c3r * w3r - c3i * w3i; b3[2 * q + 1] = c3r * w3i + c3i * w3r;
    }
}
ATTR static void tn__fft_pass4_##SFX(int64_t s, int64_t m, const T *TN__RESTRICT x, T *TN__RESTRICT y, const T *TN__RESTRICT tw, T d) {
    if (s == 1) for (int64_t p = 0; p < m; p++) tn__fft_r4_##SFX(1, m, p, x, y, tw, d);
    else for (int64_t p = 0; p < m; p++) tn__fft_r4_##SFX(s, m, p, x, y, tw, d);
}
ATTR static void tn__fft_pass3_##SFX(int64_t s, int64_t m, const T *TN__RESTRICT x, T *TN__RESTRICT y, const T *TN__RESTRICT tw, T d) {
    const T h = (T)0.86602540378443864676372317075293618 * d;   /* sin(2 pi / 3) d */
    for (int64_t p = 0; p < m; p++) {
        const T *w = tw + 4 * p;
        const T w1r = w[0], w1i = w[1], w2r = w[2], w2i = w[3];
        const T *a0 = x + 2 * s * p, *a1 = a0 + 2 * s * m, *a2 = a1 + 2 * s * m;
        T *b0 = y + 2 * s * (3 * p), *b1 = b0 + 2 * s, *b2 = b1 + 2 * s;
        for (int64_t q = 0; q < s; q++) {
            T t1r = a1[2 * q] + a2[2 * q], t1i = a1[2 * q + 1] + a2[2 * q + 1];
            T t2r = a0[2 * q] - (T)0.5 * t1r, t2i = a0[2 * q + 1] - (T)0.5 * t1i;
            T ur = a1[2 * q] - a2[2 * q], ui = a1[2 * q + 1] - a2[2 * q + 1];
            T t3r = h * ui, t3i = -h * ur;
            b0[2 * q] = a0[2 * q] + t1r; b0[2 * q + 1] = a0[2 * q + 1] + t1i;
            T c1r = t2r + t3r, c1i = t2i + t3i, c2r = t2r - t3r, c2i = t2i - t3i;
            b1[2 * q] = c1r * w1r - c1i * w1i; b1[2 * q + 1] = c1r * w1i + c1i * w1r;
            b2[2 * q] = c2r * w2r - c2i * w2i; b2[2 * q + 1] = c2r * w2i + c2i * w2r;
        }
    }
}
ATTR static void tn__fft_pass5_##SFX(int64_t s, int64_t m, const T *TN__RESTRICT x, T *TN__RESTRICT y, const T *TN__RESTRICT tw, T d) {
    const T c1 = (T)0.30901699437494742410229341718281906, c2 = (T)-0.80901699437494742410229341718281906;
    const T s1 = (T)0.95105651629515357211643933337938214 * d, s2 = (T)0.58778525229247312916870595463907277 * d;
    for (int64_t p = 0; p < m; p++) {
        const T *w = tw + 8 * p;
        const T *a0 = x + 2 * s * p, *a1 = a0 + 2 * s * m, *a2 = a1 + 2 * s * m, *a3 = a2 + 2 * s * m, *a4 = a3 + 2 * s * m;
        T *b0 = y + 2 * s * (5 * p), *b1 = b0 + 2 * s, *b2 = b1 + 2 * s, *b3 = b2 + 2 * s, *b4 = b3 + 2 * s;
        const T w1r = w[0], w1i = w[1], w2r = w[2], w2i = w[3], w3r = w[4], w3i = w[5], w4r = w[6], w4i = w[7];
        for (int64_t q = 0; q < s; q++) {
            T x0r = a0[2 * q], x0i = a0[2 * q + 1];
            T t1r = a1[2 * q] + a4[2 * q], t1i = a1[2 * q + 1] + a4[2 * q + 1];
            T t2r = a2[2 * q] + a3[2 * q], t2i = a2[2 * q + 1] + a3[2 * q + 1];
            T t3r = a1[2 * q] - a4[2 * q], t3i = a1[2 * q + 1] - a4[2 * q + 1];
            T t4r = a2[2 * q] - a3[2 * q], t4i = a2[2 * q + 1] - a3[2 * q + 1];
            b0[2 * q] = x0r + t1r + t2r; b0[2 * q + 1] = x0i + t1i + t2i;
            T u1r = x0r + c1 * t1r + c2 * t2r, u1i = x0i + c1 * t1i + c2 * t2i;
            T u2r = x0r + c2 * t1r + c1 * t2r, u2i = x0i + c2 * t1i + c1 * t2i;
            T f1r = s1 * t3r + s2 * t4r, f1i = s1 * t3i + s2 * t4i;   /* v = -i f */
            T f2r = s2 * t3r - s1 * t4r, f2i = s2 * t3i - s1 * t4i;
            T c1r_ = u1r + f1i, c1i_ = u1i - f1r, c4r_ = u1r - f1i, c4i_ = u1i + f1r;
            T c2r_ = u2r + f2i, c2i_ = u2i - f2r, c3r_ = u2r - f2i, c3i_ = u2i + f2r;
            b1[2 * q] = c1r_ * w1r - c1i_ * w1i; b1[2 * q + 1] = c1r_ * w1i + c1i_ * w1r;
            b2[2 * q] = c2r_ * w2r - c2i_ * w2i; b2[2 * q + 1] = c2r_ * w2i + c2i_ * w2r;
            b3[2 * q] = c3r_ * w3r - c3i_ * w3i; b3[2 * q + 1] = c3r_ * w3i + c3i_ * w3r;
            b4[2 * q] = c4r_ * w4r - c4i_ * w4i; b4[2 * q + 1] = c4r_ * w4i + c4i_ * w4r;
        }
    }
}
/* any odd radix r <= TN__FFT_GENERIC_MAX: the sums and differences of the pairs j, r - j */
ATTR static void tn__fft_passg_##SFX(int r, int64_t s, int64_t m, const T *TN__RESTRICT x, T *TN__RESTRICT y, const T *TN__RESTRICT tw, const T *TN__RESTRICT rt, T d) {
    T sr[TN__FFT_GENERIC_MAX / 2 + 1], si[TN__FFT_GENERIC_MAX / 2 + 1], dr[TN__FFT_GENERIC_MAX / 2 + 1], di[TN__FFT_GENERIC_MAX / 2 + 1];
    const int h = r / 2;
    for (int64_t p = 0; p < m; p++) {
        const T *w = tw + 2 * (r - 1) * p;
        for (int64_t q = 0; q < s; q++) {
            const T *a = x + 2 * (q + s * p);
            T *b = y + 2 * (q + s * r * p);
            const T x0r = a[0], x0i = a[1];
            T b0r = x0r, b0i = x0i;
            for (int j = 1; j <= h; j++) {
                const T *u = a + 2 * s * m * j, *v = a + 2 * s * m * (r - j);
                sr[j] = u[0] + v[0]; si[j] = u[1] + v[1]; dr[j] = u[0] - v[0]; di[j] = u[1] - v[1];
                b0r += sr[j]; b0i += si[j];
            }
            b[0] = b0r; b[1] = b0i;
            for (int k = 1; k <= h; k++) {
                T er = x0r, ei = x0i, fr = 0, fi = 0;
                int idx = 0;
                for (int j = 1; j <= h; j++) {
                    idx += k; if (idx >= r) idx -= r;
                    const T c = rt[2 * idx], sn = rt[2 * idx + 1];
                    er += c * sr[j]; ei += c * si[j]; fr += sn * dr[j]; fi += sn * di[j];
                }
                /* b_k = e - i d f, b_(r-k) = e + i d f */
                T pr = er + d * fi, pi_ = ei - d * fr, nr = er - d * fi, ni = ei + d * fr;
                const T *wk = w + 2 * (k - 1), *wn = w + 2 * (r - k - 1);
                T *bk = b + 2 * s * k, *bn = b + 2 * s * (r - k);
                bk[0] = pr * wk[0] - pi_ * wk[1]; bk[1] = pr * wk[1] + pi_ * wk[0];
                bn[0] = nr * wn[0] - ni * wn[1]; bn[1] = nr * wn[1] + ni * wn[0];
            }
        }
    }
}
/* the passes of a Stockham plan over V lines interleaved (element i of line v at i V + v:
   the passes start at stride V, so the innermost loops run over the lines): in (n V complex)
   to out, through the scratch w (2 n V complex); in may be out, or w + 2 n V */
ATTR static void tn__fft_stockham_##SFX(const tn__fft_plan *pl, const T *in, T *out, T *w, int64_t V) {
    const int64_t n = pl->n, N = n * V;
    const T d = pl->kind == TN__FFT_BWD ? (T)-1 : (T)1;
    if (pl->nf == 0) { if (out != in) memcpy(out, in, (size_t)N * 2 * sizeof(T)); return; }
    T *buf[2] = {w, w + 2 * N};
    if (in == buf[0]) { buf[0] = w + 2 * N; buf[1] = w; }
    int64_t s = V;
    const T *src = in;
    for (int k = 0; k < pl->nf; k++) {
        const int r = pl->fac[k];
        const int64_t m = N / (s * r);
        T *dst = k == pl->nf - 1 && out != in ? out : buf[k & 1];
        if (dst == src) dst = buf[(k + 1) & 1];
        const T *tw = (const T *)pl->tw + pl->twoff[k];
        switch (r) {
        case 2: tn__fft_pass2_##SFX(s, m, src, dst, tw); break;
        case 3: tn__fft_pass3_##SFX(s, m, src, dst, tw, d); break;
        case 4: tn__fft_pass4_##SFX(s, m, src, dst, tw, d); break;
        case 5: tn__fft_pass5_##SFX(s, m, src, dst, tw, d); break;
        default: tn__fft_passg_##SFX(r, s, m, src, dst, tw, (const T *)pl->rt + pl->rtoff[k], d); break;
        }
        src = dst;
        s *= r;
    }
    if (src != out) memcpy(out, src, (size_t)N * 2 * sizeof(T));
}
/* @end TN__FFT_PASSES */

TN__FFT_PASSES(float, f32, TN__PLAIN_FN)
TN__FFT_PASSES(double, f64, TN__PLAIN_FN)
#ifdef TN__AVX512_FN
TN__FFT_PASSES(float, f32x, TN__AVX512_FN)
TN__FFT_PASSES(double, f64x, TN__AVX512_FN)
TN__FFT_PASSES(float, f32y, TN__AVX2_FN)
TN__FFT_PASSES(double, f64y, TN__AVX2_FN)
#endif

/* ---- plans ---- */
static void tn__fft_plan_free(tn__fft_plan *p) {
    if (!p) return;
    TN_FREE(p->tw); TN_FREE(p->rt); TN_FREE(p->chirp); TN_FREE(p->filt); TN_FREE(p->rtw);
    if (p->sub && TN__ATOMIC_ADD(&p->sub->refs, -1) == 0) tn__fft_plan_free(p->sub);
    TN_FREE(p);
}
static tn__fft_plan *tn__fft_plan_fail(tn__fft_plan *p) { tn__fft_plan_free(p); return NULL; }
/* a buffer of cnt complex numbers of the plan's precision, from double values */
static void *tn__fft_cbuf(int dbl, int64_t cnt) {
    int64_t bytes;
    if (!tn__mul_ok(cnt, dbl ? 16 : 8, &bytes)) return NULL;
    return TN_MALLOC((size_t)(bytes ? bytes : 1));
}
static void tn__fft_cset(void *b, int dbl, int64_t i, double re, double im) {
    if (dbl) { ((double *)b)[2 * i] = re; ((double *)b)[2 * i + 1] = im; }
    else { ((float *)b)[2 * i] = (float)re; ((float *)b)[2 * i + 1] = (float)im; }
}
static int64_t tn__fft_good_size(int64_t n) {   /* the smallest 2,3,5-smooth size >= n */
    for (int64_t m = n;; m++) {
        int64_t r = m;
        while (r % 2 == 0) r /= 2;
        while (r % 3 == 0) r /= 3;
        while (r % 5 == 0) r /= 5;
        if (r == 1) return m;
    }
}
static tn__fft_plan *tn__fft_plan_get(int64_t n, int dbl, int kind);
static void tn__fft_plan_release(tn__fft_plan *p) {
    if (p && TN__ATOMIC_ADD(&p->refs, -1) == 0) tn__fft_plan_free(p);
}
static void tn__fft_exec_c2c(const tn__fft_plan *pl, const void *in, void *out, void *w);

/* A new plan, not cached; NULL when out of memory. */
static tn__fft_plan *tn__fft_plan_new(int64_t n, int dbl, int kind) {
    tn__fft_plan *p = (tn__fft_plan *)TN_MALLOC(sizeof *p);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->n = n; p->dbl = dbl; p->kind = kind; p->refs = 1;
    const double d = kind == TN__FFT_BWD ? -1.0 : 1.0;   /* w = exp(-2 pi i d / N) */
    if (kind == TN__FFT_R2C || kind == TN__FFT_C2R) {
        const int even = n % 2 == 0 && n >= 2;
        /* c2r of odd n runs the complex backward transform of the Hermitian-extended input */
        p->sub = tn__fft_plan_get(even ? n / 2 : n, dbl, kind == TN__FFT_C2R ? TN__FFT_BWD : TN__FFT_FWD);
        if (!p->sub) return tn__fft_plan_fail(p);
        if (even) {
            if (!(p->rtw = tn__fft_cbuf(dbl, n / 2))) return tn__fft_plan_fail(p);
            for (int64_t k = 0; k < n / 2; k++) { double c, s; tn__fft_root(k, n, &c, &s); tn__fft_cset(p->rtw, dbl, k, c, -s); }
            p->work = 2 * (n / 2 + 1) + p->sub->work;
        } else {
            p->work = 4 * n + p->sub->work;
        }
        return p;
    }
    /* factor: 4s, a 2, 3s, 5s, then odd primes; a prime above the generic limit: Bluestein */
    int64_t rem = n;
    int nf = 0, bluestein = 0;
    while (rem % 4 == 0) { p->fac[nf++] = 4; rem /= 4; }
    if (rem % 2 == 0) { p->fac[nf++] = 2; rem /= 2; }
    for (int64_t f = 3; rem > 1 && !bluestein; f += 2) {
        if (f * f > rem) f = rem;   /* what remains is prime */
        while (rem % f == 0) {
            if (f > TN__FFT_GENERIC_MAX) { bluestein = 1; break; }
            p->fac[nf++] = (int)f; rem /= f;
        }
    }
    if (bluestein) {
        p->nf = 0;
        p->bm = tn__fft_good_size(2 * n - 1);
        p->sub = tn__fft_plan_get(p->bm, dbl, TN__FFT_FWD);
        if (!p->sub || !(p->chirp = tn__fft_cbuf(dbl, n)) || !(p->filt = tn__fft_cbuf(dbl, p->bm))) return tn__fft_plan_fail(p);
        /* chirp_k = exp(-i pi d k^2 / n): k^2 mod 2n kept exact */
        void *b = tn__fft_cbuf(dbl, p->bm), *w = tn__fft_cbuf(dbl, 2 * p->bm + p->sub->work);
        if (!b || !w) { TN_FREE(b); TN_FREE(w); return tn__fft_plan_fail(p); }
        memset(b, 0, (size_t)p->bm * (dbl ? 16 : 8));
        int64_t k2 = 0;   /* k^2 mod 2n */
        for (int64_t k = 0; k < n; k++) {
            double c, s;
            tn__fft_root(k2, 2 * n, &c, &s);
            tn__fft_cset(p->chirp, dbl, k, c, -d * s);
            /* the filter: conj(chirp) at k and -k, scaled by 1/bm (the inverse FFT's) */
            tn__fft_cset(b, dbl, k, c / (double)p->bm, d * s / (double)p->bm);
            if (k) tn__fft_cset(b, dbl, p->bm - k, c / (double)p->bm, d * s / (double)p->bm);
            k2 += 2 * k + 1;   /* (k+1)^2 = k^2 + 2k + 1 */
            while (k2 >= 2 * n) k2 -= 2 * n;
        }
        tn__fft_exec_c2c(p->sub, b, p->filt, w);
        TN_FREE(b); TN_FREE(w);
        p->work = 2 * p->bm + p->sub->work;
        return p;
    }
    p->nf = nf;
    /* twiddles: pass k of radix r at stride s covers N = n / s, w = exp(-2 pi i d / N) */
    int64_t tot = 0, rtot = 0, s = 1;
    for (int k = 0; k < nf; k++) {
        const int r = p->fac[k];
        p->twoff[k] = 2 * tot; p->rtoff[k] = 2 * rtot;
        tot += (n / (s * r)) * (r - 1);
        if (r > 5) rtot += r;
        s *= r;
    }
    if (!(p->tw = tn__fft_cbuf(dbl, tot)) || !(p->rt = tn__fft_cbuf(dbl, rtot))) return tn__fft_plan_fail(p);
    s = 1;
    for (int k = 0; k < nf; k++) {
        const int r = p->fac[k];
        const int64_t m = n / (s * r), N = n / s;
        int64_t o = p->twoff[k] / 2;
        for (int64_t q = 0; q < m; q++)
            for (int j = 1; j < r; j++) {
                double c, sn;
                tn__fft_root(q * j, N, &c, &sn);
                tn__fft_cset(p->tw, dbl, o++, c, -d * sn);
            }
        if (r > 5)
            for (int j = 0; j < r; j++) { double c, sn; tn__fft_root(j, r, &c, &sn); tn__fft_cset(p->rt, dbl, p->rtoff[k] / 2 + j, c, sn); }
        s *= r;
    }
    p->work = 2 * n;
    return p;
}

/* The plan cache: the last TN__FFT_CACHE plans used, by (n, precision, kind). A plan
   handed out holds a reference (tn__fft_plan_release drops it), so one pushed out of the
   cache while another thread runs it lives until that thread is done. */
#define TN__FFT_CACHE 32
static tn__fft_plan *tn__fft_cache[TN__FFT_CACHE];
static volatile char tn__fft_cache_lock;
static void tn__fft_lock(void) { while (__atomic_test_and_set(&tn__fft_cache_lock, __ATOMIC_ACQUIRE)) { } }
static void tn__fft_unlock(void) { __atomic_clear(&tn__fft_cache_lock, __ATOMIC_RELEASE); }
static tn__fft_plan *tn__fft_plan_get(int64_t n, int dbl, int kind) {
    if (n < 1) return NULL;
    tn__fft_lock();
    for (int i = 0; i < TN__FFT_CACHE; i++) {
        tn__fft_plan *p = tn__fft_cache[i];
        if (p && p->n == n && p->dbl == dbl && p->kind == kind) {
            TN__ATOMIC_ADD(&p->refs, 1);
            for (int j = i; j > 0; j--) tn__fft_cache[j] = tn__fft_cache[j - 1];   /* most recent first */
            tn__fft_cache[0] = p;
            tn__fft_unlock();
            return p;
        }
    }
    tn__fft_unlock();
    tn__fft_plan *p = tn__fft_plan_new(n, dbl, kind);   /* built outside the lock: sub-plans take it */
    if (!p) return NULL;
    TN__ATOMIC_ADD(&p->refs, 1);   /* the caller's */
    tn__fft_lock();
    tn__fft_plan *old = tn__fft_cache[TN__FFT_CACHE - 1];
    for (int j = TN__FFT_CACHE - 1; j > 0; j--) tn__fft_cache[j] = tn__fft_cache[j - 1];
    tn__fft_cache[0] = p;
    tn__fft_unlock();
    tn__fft_plan_release(old);
    return p;
}

/* ---- one line ---- */
static void tn__fft_stockham(const tn__fft_plan *pl, const void *in, void *out, void *w, int64_t V) {
#ifdef TN__AVX512_FN
    if (pl->dbl) TN__WIDE(tn__fft_stockham_f64)(pl, (const double *)in, (double *)out, (double *)w, V);
    else TN__WIDE(tn__fft_stockham_f32)(pl, (const float *)in, (float *)out, (float *)w, V);
#else
    if (pl->dbl) tn__fft_stockham_f64(pl, (const double *)in, (double *)out, (double *)w, V);
    else tn__fft_stockham_f32(pl, (const float *)in, (float *)out, (float *)w, V);
#endif
}

/* @template TN__FFT_LINES(T, SFX) */
/* Bluestein: out = chirp . conv(in . chirp, conj chirp), the convolution by FFTs of length m
   (the inverse one as conj(FFT(conj(.)))); w: 2 m + the sub-plan's scratch */
static void tn__fft_bluestein_##SFX(const tn__fft_plan *pl, const T *in, T *out, T *w) {
    const int64_t n = pl->n, m = pl->bm;
    const T *ch = (const T *)pl->chirp, *f = (const T *)pl->filt;
    T *a = w, *b = w + 2 * m, *sw = w + 4 * m;
    for (int64_t k = 0; k < n; k++) {
        T xr = in[2 * k], xi = in[2 * k + 1], cr = ch[2 * k], ci = ch[2 * k + 1];
        a[2 * k] = xr * cr - xi * ci; a[2 * k + 1] = xr * ci + xi * cr;
    }
    memset(a + 2 * n, 0, (size_t)(m - n) * 2 * sizeof(T));
    tn__fft_exec_c2c(pl->sub, a, b, sw);
    for (int64_t k = 0; k < m; k++) {   /* times the filter, conjugated for the inverse */
        T xr = b[2 * k], xi = b[2 * k + 1], fr = f[2 * k], fi = f[2 * k + 1];
        b[2 * k] = xr * fr - xi * fi; b[2 * k + 1] = -(xr * fi + xi * fr);
    }
    tn__fft_exec_c2c(pl->sub, b, a, sw);
    for (int64_t k = 0; k < n; k++) {   /* conj(a) . chirp */
        T xr = a[2 * k], xi = -a[2 * k + 1], cr = ch[2 * k], ci = ch[2 * k + 1];
        out[2 * k] = xr * cr - xi * ci; out[2 * k + 1] = xr * ci + xi * cr;
    }
}
/* r2c of even n: in (n reals, contiguous) as n/2 complex numbers, their FFT Z, then
   X_k = (Z_k + conj Z_(h-k)) / 2 - i w^k (Z_k - conj Z_(h-k)) / 2, h = n/2; out: h + 1 */
static void tn__fft_r2c_even_##SFX(const tn__fft_plan *pl, const T *in, T *out, T *w) {
    const int64_t h = pl->n / 2;
    T *z = w, *sw = w + 2 * (h + 1);
    tn__fft_exec_c2c(pl->sub, in, z, sw);
    const T *tw = (const T *)pl->rtw;
    const T z0r = z[0], z0i = z[1];
    for (int64_t k = 1; k <= h / 2; k++) {   /* k and h - k together (z may be out's storage: no) */
        const int64_t j = h - k;
        T ar = z[2 * k], ai = z[2 * k + 1], br = z[2 * j], bi = z[2 * j + 1];
        T er = (T)0.5 * (ar + br), ei = (T)0.5 * (ai - bi);    /* (Z_k + conj Z_j) / 2 */
        T orr = (T)0.5 * (ai + bi), oi = (T)0.5 * (br - ar);   /* (Z_k - conj Z_j) / (2i) */
        T wr = tw[2 * k], wi = tw[2 * k + 1];
        T tr = orr * wr - oi * wi, ti = orr * wi + oi * wr;
        out[2 * k] = er + tr; out[2 * k + 1] = ei + ti;
        /* X_j = conj(E_k) + w^j conj(O_k), w^j = -conj(w^k) */
        out[2 * j] = er - tr; out[2 * j + 1] = -ei + ti;
    }
    out[0] = z0r + z0i; out[1] = 0;
    out[2 * h] = z0r - z0i; out[2 * h + 1] = 0;
}
/* c2r of even n: Z_k = (X_k + conj X_(h-k)) + i conj(w^k) (X_k - conj X_(h-k)), z = IFFT(Z):
   z_j = x_2j + i x_2j+1 (unnormalised: n x). The imaginary parts of X_0, X_h are ignored. */
static void tn__fft_c2r_even_##SFX(const tn__fft_plan *pl, const T *in, T *out, T *w) {
    const int64_t h = pl->n / 2;
    T *z = w, *sw = w + 2 * (h + 1);
    const T *tw = (const T *)pl->rtw;
    for (int64_t k = 0; k <= h / 2; k++) {
        const int64_t j = h - k;
        T ar = in[2 * k], ai = in[2 * k + 1], br = in[2 * j], bi = in[2 * j + 1];
        if (k == 0) { ai = 0; bi = 0; }
        T er = ar + br, ei = ai - bi;        /* X_k + conj X_j */
        T dr = ar - br, di = ai + bi;        /* X_k - conj X_j */
        T wr = tw[2 * k], wi = -tw[2 * k + 1];   /* conj w^k */
        T tr = dr * wr - di * wi, ti = dr * wi + di * wr;
        z[2 * k] = er - ti; z[2 * k + 1] = ei + tr;   /* E + i t */
        if (j != k && k != 0) {   /* Z_j = conj(e) + i w^k conj(d) (conj w^j = -w^k, X_j - conj X_k = -conj d) */
            const T pr = wr * dr - wi * di, pim = -wi * dr - wr * di;
            z[2 * j] = er - pim; z[2 * j + 1] = -ei + pr;
        }
    }
    tn__fft_exec_c2c(pl->sub, z, out, sw);
}
/* @end TN__FFT_LINES */

TN__FFT_LINES(float, f32)
TN__FFT_LINES(double, f64)

/* One complex line of a c2c plan: in (contiguous) to out (contiguous; may be in); w: the
   plan's scratch. */
static void tn__fft_exec_c2c(const tn__fft_plan *pl, const void *in, void *out, void *w) {
    if (pl->bm) {
        if (pl->dbl) tn__fft_bluestein_f64(pl, (const double *)in, (double *)out, (double *)w);
        else tn__fft_bluestein_f32(pl, (const float *)in, (float *)out, (float *)w);
    } else {
        tn__fft_stockham(pl, in, out, w, 1);
    }
}

/* ---- batches of strided lines ----
   howmany lines; line b's element i at in + b idist + i is (out likewise); strides and
   distances count elements: complex numbers on a complex side, reals on a real side. c2c:
   n complex in and out; r2c: n reals in, n/2 + 1 complex out; c2r: n/2 + 1 complex in (the
   imaginary parts of the first and, for even n, the last ignored), n reals out. Every output
   is multiplied by scale. In and out may be the same memory when each line's output covers
   exactly its input (in place). */
#define TN__FFT_GROUP 16            /* lines transformed together, interleaved */
#define TN__FFT_GROUP_ELEMS 16384   /* complex numbers in such a group at most (4 buffers of them in L2) */
typedef struct {
    const tn__fft_plan *pl;
    const char *in; char *out;
    int64_t is, idist, os, odist;
    double scale;
    int failed;
} tn__fft_job;

/* @template TN__FFT_BATCH(T, SFX) */
/* V lines (element i of line v at src + 2 (v dist + i stride)) into g interleaved (i V + v) and
   back: element by element across the lines when the lines are closer than their elements
   (columns), else 16 elements of a line at a time (lines a power of 2 apart share cache sets) */
static void tn__fft_gather_##SFX(T *TN__RESTRICT g, const T *TN__RESTRICT src, int64_t n, int64_t V, int64_t stride, int64_t dist) {
    if (dist < stride && dist > -stride) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t v = 0; v < V; v++) {
                const T *e = src + 2 * (v * dist + i * stride);
                g[2 * (i * V + v)] = e[0]; g[2 * (i * V + v) + 1] = e[1];
            }
        return;
    }
    for (int64_t i0 = 0; i0 < n; i0 += 16) {
        const int64_t i1 = TN__MIN(i0 + 16, n);
        for (int64_t v = 0; v < V; v++)
            for (int64_t i = i0; i < i1; i++) {
                const T *e = src + 2 * (v * dist + i * stride);
                g[2 * (i * V + v)] = e[0]; g[2 * (i * V + v) + 1] = e[1];
            }
    }
}
static void tn__fft_scatter_##SFX(T *TN__RESTRICT dst, const T *TN__RESTRICT g, int64_t n, int64_t V, int64_t stride, int64_t dist, T sc) {
    if (dist < stride && dist > -stride) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t v = 0; v < V; v++) {
                T *e = dst + 2 * (v * dist + i * stride);
                e[0] = g[2 * (i * V + v)] * sc; e[1] = g[2 * (i * V + v) + 1] * sc;
            }
        return;
    }
    for (int64_t i0 = 0; i0 < n; i0 += 16) {
        const int64_t i1 = TN__MIN(i0 + 16, n);
        for (int64_t v = 0; v < V; v++)
            for (int64_t i = i0; i < i1; i++) {
                T *e = dst + 2 * (v * dist + i * stride);
                e[0] = g[2 * (i * V + v)] * sc; e[1] = g[2 * (i * V + v) + 1] * sc;
            }
    }
}
static void tn__fft_lines_##SFX(void *args, int64_t b0, int64_t b1) {
    tn__fft_job *j = (tn__fft_job *)args;
    const tn__fft_plan *pl = j->pl;
    const int64_t n = pl->n, h = n / 2 + 1;
    const int cin = pl->kind != TN__FFT_R2C, cout = pl->kind != TN__FFT_C2R;   /* complex sides */
    const int64_t nin = pl->kind == TN__FFT_C2R ? h : n, nout = pl->kind == TN__FFT_R2C ? h : n;
    /* scratch: the plan's, a gathered input, an output line, and an odd-length real's complex line */
    if (pl->kind <= TN__FFT_BWD && !pl->bm && b1 - b0 >= 2 && n <= TN__FFT_GROUP_ELEMS / 2) {
        /* complex lines in groups of V, interleaved: the passes vectorise over the lines */
        const int64_t V = TN__MIN(TN__FFT_GROUP, TN__FFT_GROUP_ELEMS / n);
        const size_t gbytes = (size_t)(4 * V * n) * 2 * sizeof(T);
        T *g = (T *)tn__cpu_alloc(gbytes);   /* the caching allocator's: no page faults per call */
        if (!g) { TN__STORE_RELAXED(&j->failed, 1); return; }
        T *gin = g, *gout = g + 2 * V * n, *gw = g + 4 * V * n;
        const T sc = (T)j->scale;
        for (int64_t b = b0; b < b1; b += V) {
            const int64_t vb = TN__MIN(V, b1 - b);
            const T *src = (const T *)j->in + 2 * b * j->idist;
            T *dst = (T *)j->out + 2 * b * j->odist;
            tn__fft_gather_##SFX(gin, src, n, vb, j->is, j->idist);
            tn__fft_stockham(pl, gin, gout, gw, vb);
            tn__fft_scatter_##SFX(dst, gout, n, vb, j->os, j->odist, sc);
        }
        tn__cpu_free(g, gbytes);
        return;
    }
    const size_t wbytes = (size_t)(pl->work + 3 * n + 4) * 2 * sizeof(T);   /* work checked at planning */
    T *w = (T *)tn__cpu_alloc(wbytes);
    if (!w) { TN__STORE_RELAXED(&j->failed, 1); return; }
    T *gin = w + 2 * pl->work, *gout = gin + 2 * (n + 1), *full = gout + 2 * (n + 1);
    for (int64_t b = b0; b < b1; b++) {
        const T *src = (const T *)j->in + (cin ? 2 : 1) * b * j->idist;
        T *dst = (T *)j->out + (cout ? 2 : 1) * b * j->odist;
        const T *x = src;
        if (j->is != 1) {
            for (int64_t i = 0; i < nin; i++)
                if (cin) { gin[2 * i] = src[2 * i * j->is]; gin[2 * i + 1] = src[2 * i * j->is + 1]; }
                else gin[i] = src[i * j->is];
            x = gin;
        }
        T *y = j->os == 1 ? dst : gout;
        const int64_t even = n % 2 == 0;
        switch (pl->kind) {
        case TN__FFT_R2C:
            if (even) { tn__fft_r2c_even_##SFX(pl, x, y, w); break; }
            for (int64_t i = 0; i < n; i++) { full[2 * i] = x[i]; full[2 * i + 1] = 0; }
            tn__fft_exec_c2c(pl->sub, full, full, w);
            memcpy(y, full, (size_t)h * 2 * sizeof(T));
            break;
        case TN__FFT_C2R:
            if (even) { tn__fft_c2r_even_##SFX(pl, x, y, w); break; }
            full[0] = x[0]; full[1] = 0;   /* the Hermitian extension, X_0 real */
            for (int64_t k = 1; k < h; k++) {
                full[2 * k] = x[2 * k]; full[2 * k + 1] = x[2 * k + 1];
                full[2 * (n - k)] = x[2 * k]; full[2 * (n - k) + 1] = -x[2 * k + 1];
            }
            tn__fft_exec_c2c(pl->sub, full, full, w);
            for (int64_t i = 0; i < n; i++) y[i] = full[2 * i];
            break;
        default:
            tn__fft_exec_c2c(pl, x, y, w);
        }
        const int64_t len = (cout ? 2 : 1) * nout;
        if (j->scale != 1.0) {
            const T sc = (T)j->scale;
            for (int64_t i = 0; i < len; i++) y[i] *= sc;
        }
        if (j->os != 1) {
            for (int64_t i = 0; i < nout; i++)
                if (cout) { dst[2 * i * j->os] = y[2 * i]; dst[2 * i * j->os + 1] = y[2 * i + 1]; }
                else dst[i * j->os] = y[i];
        }
    }
    tn__cpu_free(w, wbytes);
}
/* @end TN__FFT_BATCH */
TN__FFT_BATCH(float, f32)
TN__FFT_BATCH(double, f64)

/* Run plan pl over howmany strided lines (the layout above); 0, or -1 out of memory. */
static int tn__fft_run(const tn__fft_plan *pl, const void *in, int64_t is, int64_t idist, void *out, int64_t os,
                       int64_t odist, int64_t howmany, double scale) {
    if (howmany <= 0) return 0;
    tn__fft_job j = {pl, (const char *)in, (char *)out, is, idist, os, odist, scale, 0};
    double lg = 1;
    for (int64_t m = pl->n; m > 1; m >>= 1) lg += 1;
    /* about 5 simple operations per element per level */
    const double work = 5.0 * lg * (double)pl->n * (double)howmany;
    const int nt = tn__par_threads(work > 9e18 ? INT64_MAX : (int64_t)work, howmany);
    tn__parallel_range(nt, howmany, pl->dbl ? tn__fft_lines_f64 : tn__fft_lines_f32, &j);
    return j.failed ? -1 : 0;
}

/* The engine's one call (the tests' and the benchmark's): a plan of (n, precision, kind)
   from the cache, run over the lines; 0, or -1 with the error recorded. */
#if defined(TN_TESTING) || !(defined(__GNUC__) || defined(__clang__))
#define TN__FFT_MAYBE_UNUSED
#else
#define TN__FFT_MAYBE_UNUSED __attribute__((unused))   /* tn__fft_c2c: the tests' entry to the layer */
#endif
TN__FFT_MAYBE_UNUSED TN__TESTABLE int tn__fft_exec(int64_t n, int dbl, int kind, const void *in, int64_t is, int64_t idist, void *out,
                              int64_t os, int64_t odist, int64_t howmany, double scale) {
    if (n < 1 || kind < TN__FFT_FWD || kind > TN__FFT_C2R) {
        tn__error("fft: invalid number of data points (%lld) specified", (long long)n);
        return -1;
    }
    tn__fft_plan *pl = tn__fft_plan_get(n, dbl != 0, kind);
    if (!pl) { tn__error("fft: out of memory planning a transform of %lld points", (long long)n); return -1; }
    int rc = tn__fft_run(pl, in, is, idist, out, os, odist, howmany, scale);
    tn__fft_plan_release(pl);
    if (rc) tn__error("fft: out of memory running a transform of %lld points", (long long)n);
    return rc;
}

/* ---- torch.fft's real-valued functions ---- */

/* fftfreq (rfft = false) and rfftfreq: ATen's arange(count) (the upper half of fftfreq's
   counting down from -(n/2)) times 1.0 / (n d), computed as ATen's mul_ does: in float for
   float32 and the half types (with the scalar rounded to the half type first, and the
   product after), in double for float64. */
static tn_tensor *tn__fftfreq(const char *fn, int64_t n, tn_fftfreq_fn_opts o, bool rfft) {
    const tn_dtype dt = o.dtype < 0 ? tn_get_default_dtype() : (tn_dtype)o.dtype;
    if ((int)dt >= TN_NUM_DTYPES || !tn_dtype_is_floating(dt)) return (tn_tensor *)tn__error("%s: fftfreq requires a floating point or complex dtype", fn);
    if (o.device != TN_CPU && o.device != TN_CUDA) return (tn_tensor *)tn__error("%s: unknown device %d", fn, o.device);
    const int64_t count = rfft ? n / 2 + 1 : n;   /* C's division, as ATen's (rfftfreq(-1) has one element) */
    if (count < 0) return (tn_tensor *)tn__error("%s: Trying to create tensor with negative dimension %lld: [%lld]", fn, (long long)count, (long long)count);
    const double scale = 1.0 / ((double)n * o.d);
    tn_scope_begin();
    tn_tensor *r = tn_empty(&count, 1, dt == TN_F64 ? TN_F64 : TN_F32);
    if (r && count > 0) {
        const int64_t half = (n + 1) / 2;
        if (dt == TN_F64) {
            double *v = (double *)tn_data_ptr(r);
            for (int64_t i = 0; i < count; i++) v[i] = (double)(rfft || i < half ? i : i - n) * scale;
        } else {
            float *v = (float *)tn_data_ptr(r);
            float s = (float)scale;
            if (dt != TN_F32) {   /* the half types: ATen's kernel takes the scalar in the tensor's dtype (float -> half) */
                tn_tensor *h = tn_to_dtype(tn_scalar_tensor(s, TN_F32), dt);
                s = h ? (float)tn_item(h) : s;
            }
            for (int64_t i = 0; i < count; i++) v[i] = (float)(rfft || i < half ? i : i - n) * s;
        }
    }
    if (r) r = tn_to(tn_to_dtype(r, dt), (tn_device)o.device);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_fft_fftfreq_opts(int64_t n, tn_fftfreq_fn_opts o) { return TN__AS("tn_fft_fftfreq", tn__fftfreq("tn_fft_fftfreq", n, o, false)); }
TNDEF tn_tensor *tn_fft_fftfreq_str(int64_t n, const char *options) {
    TN__KW_STR(tn_fftfreq_fn_opts, fftfreq, "tn_fft_fftfreq", options, tn_fft_fftfreq_opts(n, o));
}
TNDEF tn_tensor *tn_fft_rfftfreq_opts(int64_t n, tn_fftfreq_fn_opts o) { return TN__AS("tn_fft_rfftfreq", tn__fftfreq("tn_fft_rfftfreq", n, o, true)); }
TNDEF tn_tensor *tn_fft_rfftfreq_str(int64_t n, const char *options) {
    TN__KW_STR(tn_fftfreq_fn_opts, fftfreq, "tn_fft_rfftfreq", options, tn_fft_rfftfreq_opts(n, o));
}

/* fftshift / ifftshift: roll by size / 2 (size + 1) / 2 along the dims (every dim when none
   are given; a dim given twice rolls twice, as ATen's roll). */
static tn_tensor *tn__fftshift(const char *fn, tn_tensor *x, tn_fftshift_fn_opts o, bool inverse) {
    TN__CHECK_NULL(x);
    int64_t dims[TN_LIST_MAX], shifts[TN_LIST_MAX];
    const int nd = o.dim.n > 0 ? o.dim.n : x->ndim;
    if (nd == 0) return (tn_tensor *)tn__error("%s: `shifts` required", fn);   /* a 0-d tensor: ATen's roll */
    if (nd > TN_LIST_MAX) return (tn_tensor *)tn__error("%s: at most %d dims", fn, TN_LIST_MAX);
    if (x->ndim == 0) return (tn_tensor *)tn__error("%s: Dimension specified as %lld but tensor has no dimensions", fn, (long long)o.dim.v[0]);
    for (int i = 0; i < nd; i++) {
        int d = o.dim.n > 0 ? tn__wrap_dim(fn, o.dim.v[i], x->ndim) : i;
        if (d < 0) return NULL;
        dims[i] = d;
        shifts[i] = (x->shape[d] + (inverse ? 1 : 0)) / 2;
    }
    return tn_roll(x, shifts, dims, nd);
}
TNDEF tn_tensor *tn_fft_fftshift_opts(tn_tensor *x, tn_fftshift_fn_opts o) { return TN__AS("tn_fft_fftshift", tn__fftshift("tn_fft_fftshift", x, o, false)); }
TNDEF tn_tensor *tn_fft_fftshift_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_fftshift_fn_opts, fftshift, "tn_fft_fftshift", options, tn_fft_fftshift_opts(x, o));
}
TNDEF tn_tensor *tn_fft_ifftshift_opts(tn_tensor *x, tn_fftshift_fn_opts o) { return TN__AS("tn_fft_ifftshift", tn__fftshift("tn_fft_ifftshift", x, o, true)); }
TNDEF tn_tensor *tn_fft_ifftshift_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_fftshift_fn_opts, fftshift, "tn_fft_ifftshift", options, tn_fft_ifftshift_opts(x, o));
}

/* ---- the layer torch.fft's transforms attach to ----
   The transforms run on a complex tensor's view_as_real: a float32/float64 tensor whose last
   dim (2) holds (re, im). Three differentiable kernels on such views, each a contiguous copy
   transformed one dim at a time by the engine, with torch's backward formulas (ATen's
   _fft_c2c, _fft_r2c and _fft_c2r): tn__fft_c2c_raw (complex to complex), tn__fft_r2c_raw
   (real to the onesided half along the last transformed dim, complex along the others) and
   tn__fft_c2r_raw (its inverse direction). The public functions below promote, check and
   resize their input as torch.fft does, then call one of them. */

/* The scale a transform of `count` signal points (the product of the transformed sizes)
   applies, by torch's norm: NULL or "backward": none forward, 1/count inverse; "forward":
   the reverse; "ortho": 1/sqrt(count) both ways. -1 on another mode (torch's message). */
static int tn__fft_norm_scale(const char *fn, const char *norm, double count, bool forward, double *scale) {
    if (!norm || !strcmp(norm, "backward")) *scale = forward ? 1.0 : 1.0 / count;
    else if (!strcmp(norm, "forward")) *scale = forward ? 1.0 / count : 1.0;
    else if (!strcmp(norm, "ortho")) *scale = 1.0 / sqrt(count);
    else { tn__error("%s: Invalid normalization mode: \"%s\"", fn, norm); return -1; }
    return 0;
}
/* x with dim `dim` zero-padded at its end or cropped to n points (torch's n= / s=);
   differentiable (tn_pad: a negative pad crops). x itself (borrowed) when it has n points
   already; call it inside a scope. */
static tn_tensor *tn__fft_resize(const char *fn, tn_tensor *x, int dim, int64_t n) {
    TN__CHECK_NULL(x);
    if (n < 1) return (tn_tensor *)tn__error("%s: Invalid number of data points (%lld) specified", fn, (long long)n);
    if (dim < 0 || dim >= x->ndim) return (tn_tensor *)tn__error("%s: dim %d out of range for a %d-d tensor", fn, dim, x->ndim);
    if (x->shape[dim] == n) return x;
    int64_t pad[2 * TN_MAX_DIMS] = {0};
    const int np = 2 * (x->ndim - dim);
    pad[np - 1] = n - x->shape[dim];
    return tn_pad(x, pad, np);
}

/* The transforms' autograd records: i[0] (direction or length), i[1] the count of dims,
   i[2...] the dims, d[0] the scale. tn__fft_record attaches node `name` to r (inside the
   caller's scope) and returns r kept; tn__fft_node_dims reads the dims back. */
static tn_tensor *tn__fft_record(const char *name, tn_custom_backward bw, tn_tensor *x, tn_tensor *r, int64_t i0, int ndims,
                                 const int64_t *dims, double scale) {
    tn_node *nd = r ? tn__fn_node(name, bw, &x, 1) : NULL;
    if (nd) {
        nd->i[0] = i0; nd->i[1] = ndims;
        for (int k = 0; k < ndims; k++) nd->i[2 + k] = dims[k];
        nd->ni = 2 + ndims;
        nd->d[0] = scale;
    }
    return tn_keep(tn__node_attach(nd, r));
}
static int tn__fft_node_dims(const tn_ctx *n, int64_t *dims) {
    const int nd = (int)n->i[1];
    for (int k = 0; k < nd; k++) dims[k] = n->i[2 + k];
    return nd;
}
/* The device path (tn_backend.fft): the transform kind (TN__FFT_FWD/BWD: c2c; R2C; C2R) over
   dims[0..ndims) (1 or more) of xr, the real view [..., 2] of complex data (real data for
   R2C), as a new tensor in the CPU path's layout: a real view, or C2R's real signal of nlast
   points along the last of dims. The transformed dims move to the end (copies on the device)
   for the entry, at most 3 per call: c2c in groups, R2C's and C2R's onesided dim in the
   last group. Scope-owned, untracked (the callers record the node). */
static tn_tensor *tn__fft_dev(int kind, tn_tensor *xr, int ndims, const int64_t *dims, int64_t nlast, double scale) {
    const tn_backend *be = tn__backend(xr->device);
    if (!be->fft) return (tn_tensor *)tn__error("fft: not implemented on %s (its backend has no fft entry)", tn_device_name(xr->device));
    if (ndims > 3) {
        const int64_t *tail = dims + ndims - 3;
        tn_tensor *a;
        if (kind == TN__FFT_R2C) return (a = tn__fft_dev(kind, xr, 3, tail, 0, 1.0)) ? tn__fft_dev(TN__FFT_FWD, a, ndims - 3, dims, 0, scale) : NULL;
        if (kind == TN__FFT_C2R) return (a = tn__fft_dev(TN__FFT_BWD, xr, ndims - 3, dims, 0, 1.0)) ? tn__fft_dev(kind, a, 3, tail, nlast, scale) : NULL;
        return (a = tn__fft_dev(kind, xr, ndims - 3, dims, 0, 1.0)) ? tn__fft_dev(kind, a, 3, tail, 0, scale) : NULL;
    }
    tn_no_grad_begin();
    tn_tensor *x = kind == TN__FFT_R2C ? xr : tn_view_as_complex(tn_contiguous(xr)), *r = NULL;
    if (x) {
        const int nd = x->ndim;
        int64_t perm[TN_MAX_DIMS] = {0}, inv[TN_MAX_DIMS] = {0}, shp[TN_MAX_DIMS] = {0}, n[3] = {1, 1, 1};
        int p = 0;
        for (int d = 0; d < nd; d++) {   /* the batch dims in order, then the transformed ones */
            bool t = false;
            for (int k = 0; k < ndims; k++) t = t || dims[k] == d;
            if (!t) perm[p++] = d;
        }
        for (int k = 0; k < ndims; k++) perm[p++] = dims[k];
        for (int d = 0; d < nd; d++) inv[perm[d]] = d;
        tn_tensor *xp = tn_contiguous(tn_permute(x, perm, nd)), *y = NULL;
        if (xp) {
            for (int d = 0; d < nd; d++) shp[d] = xp->shape[d];
            for (int k = 0; k < ndims; k++) n[k] = xp->shape[nd - ndims + k];
            if (kind == TN__FFT_R2C) shp[nd - 1] = n[ndims - 1] / 2 + 1;
            if (kind == TN__FFT_C2R) shp[nd - 1] = n[ndims - 1] = nlast;
            const tn_dtype rt = tn_dtype_is_complex(x->dtype) ? tn_dtype_to_real(x->dtype) : x->dtype;
            y = tn__own(tn__new(kind == TN__FFT_C2R ? rt : tn_dtype_to_complex(rt), x->device, shp, nd));
        }
        if (y && be->fft(kind, y, xp, ndims, n, scale) == 0) r = tn_contiguous(tn_permute(y, inv, nd));
        if (r && kind != TN__FFT_C2R) r = tn_view_as_real(r);
    }
    tn_no_grad_end();
    return r;
}
/* The transform itself over the real view xr (its dims all < ndim - 1, distinct), scaled:
   a contiguous copy transformed in place one dim at a time; records its gradient, the
   adjoint transform (the other direction, the same scale). */
static tn_tensor *tn__fft_c2c_raw(tn_tensor *xr, int ndims, const int64_t *dims, bool forward, double scale);
static int tn__fft_c2c_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    int64_t dims[TN_MAX_DIMS];
    const int nd = tn__fft_node_dims(n, dims);
    gin[0] = tn__fft_c2c_raw(g, nd, dims, !n->i[0], n->d[0]);
    return gin[0] ? 0 : -1;
}
/* The engine's kind along dim d of contiguous buffers, in -> out (may be the same memory for
   c2c): the dims before d multiply to outer, those after to inner (complex dims: a real
   view's last dim of 2 not counted); lines of nin input and nout output points. 0 or -1. */
static int tn__fft_along(int kind, int64_t n, int dbl, const void *in, int64_t nin, void *out, int64_t nout,
                         int64_t outer, int64_t inner, double scale) {
    if (outer * inner == 0) return 0;
    if (inner == 1) return tn__fft_exec(n, dbl, kind, in, 1, nin, out, 1, nout, outer, scale);
    const size_t real = dbl ? 8 : 4, ib = (kind == TN__FFT_R2C ? 1 : 2) * real, ob = (kind == TN__FFT_C2R ? 1 : 2) * real;
    for (int64_t o = 0; o < outer; o++)
        if (tn__fft_exec(n, dbl, kind, (const char *)in + (size_t)(o * nin * inner) * ib, inner, 1,
                         (char *)out + (size_t)(o * nout * inner) * ob, inner, 1, inner, scale)) return -1;
    return 0;
}
/* The c2c passes over dims[0..ndims) of the contiguous real view r (in place), the last one
   scaled. */
static int tn__fft_c2c_dims(tn_tensor *r, int ndims, const int64_t *dims, bool forward, double scale) {
    const int cd = r->ndim - 1;
    for (int k = 0; k < ndims; k++) {
        const int d = (int)dims[k];
        const int64_t len = r->shape[d];
        if (tn__fft_along(forward ? TN__FFT_FWD : TN__FFT_BWD, len, r->dtype == TN_F64, tn_data_ptr(r), len, tn_data_ptr(r), len,
                          tn__numel(r->shape, d), tn__numel(r->shape + d + 1, cd - d - 1), k == ndims - 1 ? scale : 1.0)) return -1;
    }
    return 0;
}
static tn_tensor *tn__fft_c2c_raw(tn_tensor *xr, int ndims, const int64_t *dims, bool forward, double scale) {
    tn_scope_begin();
    const bool dev = xr->device != TN_CPU && ndims > 0;
    tn_tensor *r = dev ? tn__fft_dev(forward ? TN__FFT_FWD : TN__FFT_BWD, xr, ndims, dims, 0, scale) : tn_clone(xr);   /* contiguous */
    if (r && !dev && tn__fft_c2c_dims(r, ndims, dims, forward, scale)) r = NULL;
    if (r && ndims == 0 && scale != 1.0) r = tn_mul_scalar(r, scale);
    r = tn__fft_record("FftC2CBackward0", tn__fft_c2c_bw, xr, r, forward, ndims, dims, scale);
    tn_scope_end();
    return r;
}

/* r2c: the real x (float32/float64) to the real view of its transform over dims (ndims of
   them), onesided (n/2 + 1 points) along the last, scaled. Its gradient is ATen's
   fft_r2c_backward: the gradient zero-padded to the full n points, the adjoint c2c
   transform (the inverse direction, the same scale), its real part. */
static tn_tensor *tn__fft_r2c_raw(tn_tensor *x, int ndims, const int64_t *dims, double scale);
static int tn__fft_r2c_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    int64_t dims[TN_MAX_DIMS];
    const int nd = tn__fft_node_dims(n, dims);
    tn_scope_begin();
    tn_tensor *gp = tn__fft_resize("FftR2CBackward0", g, (int)dims[nd - 1], n->i[0]);
    tn_tensor *c = gp ? tn__fft_c2c_raw(gp, nd, dims, false, n->d[0]) : NULL;
    gin[0] = c ? tn_keep(tn_select(c, -1, 0)) : NULL;
    tn_scope_end();
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__fft_r2c_raw(tn_tensor *x, int ndims, const int64_t *dims, double scale) {
    const int dl = (int)dims[ndims - 1], dbl = x->dtype == TN_F64;
    const int64_t n = x->shape[dl], h = n / 2 + 1;
    int64_t shp[TN_MAX_DIMS + 1];
    memcpy(shp, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shp[dl] = h; shp[x->ndim] = 2;
    tn_scope_begin();
    if (x->device != TN_CPU) {
        tn_tensor *r = tn__fft_record("FftR2CBackward0", tn__fft_r2c_bw, x, tn__fft_dev(TN__FFT_R2C, x, ndims, dims, 0, scale), n, ndims, dims, scale);
        tn_scope_end();
        return r;
    }
    tn_tensor *c = tn_contiguous(x), *r = c ? tn_empty(shp, x->ndim + 1, x->dtype) : NULL;
    if (r && tn__fft_along(TN__FFT_R2C, n, dbl, tn_data_ptr(c), n, tn_data_ptr(r), h, tn__numel(x->shape, dl),
                           tn__numel(x->shape + dl + 1, x->ndim - dl - 1), ndims == 1 ? scale : 1.0)) r = NULL;
    if (r && tn__fft_c2c_dims(r, ndims - 1, dims, true, scale)) r = NULL;
    r = tn__fft_record("FftR2CBackward0", tn__fft_r2c_bw, x, r, n, ndims, dims, scale);
    tn_scope_end();
    return r;
}

/* c2r: the real view xr (n/2 + 1 points along the last of dims) to the real signal of n
   points there: the inverse c2c over the other dims, then the engine's c2r, scaled. Its
   gradient is ATen's fft_c2r_backward: the r2c transform of the gradient (the same scale),
   the points 1 .. n - (n/2 + 1) doubled (each stands for itself and its mirror image). */
static tn_tensor *tn__fft_c2r_raw(tn_tensor *xr, int ndims, const int64_t *dims, int64_t n, double scale);
static int tn__fft_c2r_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    int64_t dims[TN_MAX_DIMS];
    const int nd = tn__fft_node_dims(n, dims), dl = (int)dims[nd - 1];
    const int64_t len = n->i[0], h = len / 2 + 1;
    tn_scope_begin();
    tn_tensor *r = tn__fft_r2c_raw(g, nd, dims, n->d[0]);
    if (r && len - h > 0) {
        int64_t shp[TN_MAX_DIMS + 1];
        for (int k = 0; k < r->ndim; k++) shp[k] = k == dl ? h : 1;
        tn_tensor *w = tn_empty(shp, r->ndim, r->dtype);
        for (int64_t k = 0; w && k < h; k++) {
            const double v = k >= 1 && k <= len - h ? 2.0 : 1.0;
            if (r->dtype == TN_F64) ((double *)tn_data_ptr(w))[k] = v;
            else ((float *)tn_data_ptr(w))[k] = (float)v;
        }
        r = w ? tn_mul(r, tn_to(w, r->device)) : NULL;   /* the weights made on the host */
    }
    gin[0] = tn_keep(r);
    tn_scope_end();
    return gin[0] ? 0 : -1;
}
static tn_tensor *tn__fft_c2r_raw(tn_tensor *xr, int ndims, const int64_t *dims, int64_t n, double scale) {
    const int dl = (int)dims[ndims - 1], cd = xr->ndim - 1, dbl = xr->dtype == TN_F64;
    int64_t shp[TN_MAX_DIMS];
    memcpy(shp, xr->shape, sizeof(int64_t) * (size_t)cd);
    shp[dl] = n;
    tn_scope_begin();
    if (xr->device != TN_CPU) {
        tn_tensor *r = tn__fft_record("FftC2RBackward0", tn__fft_c2r_bw, xr, tn__fft_dev(TN__FFT_C2R, xr, ndims, dims, n, scale), n, ndims, dims, scale);
        tn_scope_end();
        return r;
    }
    tn_tensor *c = tn_clone(xr), *r = c ? tn_empty(shp, cd, xr->dtype) : NULL;
    if (r && tn__fft_c2c_dims(c, ndims - 1, dims, false, 1.0)) r = NULL;
    if (r && tn__fft_along(TN__FFT_C2R, n, dbl, tn_data_ptr(c), xr->shape[dl], tn_data_ptr(r), n, tn__numel(shp, dl),
                           tn__numel(shp + dl + 1, cd - dl - 1), scale)) r = NULL;
    r = tn__fft_record("FftC2RBackward0", tn__fft_c2r_bw, xr, r, n, ndims, dims, scale);
    tn_scope_end();
    return r;
}

/* torch.fft.fftn / ifftn over the real view xr [..., 2] (float32 or float64): dims (ndims of
   them; ndims = 0: every dim of the complex tensor, or the last len(n) when n is given), n
   the signal sizes (NULL: the input's; a size pads with zeros or crops), norm NULL,
   "backward", "forward" or "ortho". A new tensor in the same layout; differentiable. */
TN__FFT_MAYBE_UNUSED TN__TESTABLE tn_tensor *tn__fft_c2c(tn_tensor *xr, int ndims, const int64_t *dims, int nn, const int64_t *n,
                                                          const char *norm, bool forward) {
    const char *fn = forward ? "tn_fft_fftn" : "tn_fft_ifftn";
    TN__CHECK_NULL(xr);
    if ((xr->dtype != TN_F32 && xr->dtype != TN_F64) || xr->ndim < 1 || xr->shape[xr->ndim - 1] != 2)
        return (tn_tensor *)tn__error("%s: expected the real view of a complex tensor (float32 or float64, last dim 2), got %s %s", fn,
                                      tn_dtype_name(xr->dtype), TN__SHAPE(xr));
    const int cd = xr->ndim - 1;   /* the complex tensor's dims */
    if (ndims > cd || nn > cd || (ndims && nn && ndims != nn))
        return (tn_tensor *)tn__error("%s: got %d dims and %d sizes for a %d-d tensor", fn, ndims, nn, cd);
    int64_t d[TN_MAX_DIMS], s[TN_MAX_DIMS];
    const int k = ndims ? ndims : nn ? nn : cd;
    for (int i = 0; i < k; i++) {
        if (ndims) {
            int w = tn__wrap_dim(fn, dims[i], cd);
            if (w < 0) return NULL;
            d[i] = w;
        } else d[i] = cd - k + i;
        for (int j = 0; j < i; j++)
            if (d[j] == d[i]) return (tn_tensor *)tn__error("%s: FFT dims must be unique", fn);
        s[i] = nn ? n[i] : xr->shape[d[i]];
        if (s[i] < 1) return (tn_tensor *)tn__error("%s: Invalid number of data points (%lld) specified", fn, (long long)s[i]);
    }
    double count = 1, scale;
    for (int i = 0; i < k; i++) count *= (double)s[i];
    if (tn__fft_norm_scale(fn, norm, count, forward, &scale)) return NULL;
    tn_scope_begin();
    tn_tensor *x = xr;
    for (int i = 0; i < k && x; i++) x = tn__fft_resize(fn, x, (int)d[i], s[i]);
    tn_tensor *r = x ? tn_keep(tn__fft_c2c_raw(x, k, d, forward, scale)) : NULL;
    tn_scope_end();
    return r;
}

/* ---- torch.fft's transforms ---- */
enum { TN__FFT_T_C2C, TN__FFT_T_R2C, TN__FFT_T_C2R, TN__FFT_T_HFFT, TN__FFT_T_IHFFT };

/* torch's canonicalize_fft_shape_and_dim_args: dims (wrapped, unique) and the signal size of
   each (s given: its values, -1 meaning the input's size, the dims defaulting to the last
   len(s); else the input's sizes, of every dim when no dims are given). one: a 1-d function,
   whose n = -1 is no default. k dims; 0 or -1. */
static int tn__fft_canon(const char *fn, const tn_tensor *x, int ns, const int64_t *s, int nd, const int64_t *dim, bool one,
                         int *k, int64_t *d, int64_t *n) {
    const int xd = x->ndim;
    if (ns > TN_MAX_DIMS || nd > TN_MAX_DIMS) return TN__FAIL_INT("%s: at most %d dims", fn, TN_MAX_DIMS);
    if (nd && xd == 0) return TN__FAIL_INT("%s: Dimension specified as %lld but tensor has no dimensions", fn, (long long)dim[0]);
    for (int i = 0; i < nd; i++) {
        const int w = tn__wrap_dim(fn, dim[i], xd);
        if (w < 0) return -1;
        d[i] = w;
        for (int j = 0; j < i; j++)
            if (d[j] == w) return TN__FAIL_INT("%s: FFT dims must be unique", fn);
    }
    if (ns) {
        if (nd && nd != ns) return TN__FAIL_INT("%s: When given, dim and shape arguments must have the same length", fn);
        if (ns > xd) return TN__FAIL_INT("%s: Got shape with %d values but input tensor only has %d dimensions.", fn, ns, xd);
        for (int i = 0; i < ns; i++) {
            if (!nd) d[i] = xd - ns + i;
            n[i] = s[i] == -1 && !one ? x->shape[d[i]] : s[i];
        }
        *k = ns;
    } else {
        *k = nd ? nd : xd;
        for (int i = 0; i < *k; i++) {
            if (!nd) d[i] = i;
            n[i] = x->shape[d[i]];
        }
    }
    for (int i = 0; i < *k; i++)
        if (n[i] < 1) return TN__FAIL_INT("%s: Invalid number of data points (%lld) specified", fn, (long long)n[i]);
    return 0;
}

/* Every transform: x promoted (torch's promote_tensor_fft), its dims canonicalised and
   resized, then the kernel of its type. c2r types (irfft, hfft): the output's size along
   the last dim is s's last (not -1) or 2 (m - 1), the input resized to half of it plus one. */
static tn_tensor *tn__fft_transform(const char *fn, int type, bool forward, tn_tensor *x, int ns, const int64_t *s, int nd,
                                    const int64_t *dim, bool one, const char *norm) {
    TN__CHECK_NULL(x);
    const bool real_in = type == TN__FFT_T_R2C || type == TN__FFT_T_IHFFT;
    if (real_in && tn_dtype_is_complex(x->dtype))
        return (tn_tensor *)tn__error("%s expects a real input tensor, but got %s", fn + 7, tn_dtype_name(x->dtype));
    tn_dtype rt = tn_dtype_is_complex(x->dtype) ? tn_dtype_to_real(x->dtype) : x->dtype;
    if (rt == TN_F16 || rt == TN_BF16) return (tn_tensor *)tn__error("%s: Unsupported dtype %s", fn, tn_dtype_name(rt));
    if (rt != TN_F32 && rt != TN_F64) rt = tn_get_default_dtype();
    int k;
    int64_t d[TN_MAX_DIMS], n[TN_MAX_DIMS], last = 0;
    if (tn__fft_canon(fn, x, ns, s, nd, dim, one, &k, d, n)) return NULL;
    if (k == 0) return (tn_tensor *)tn__error("%s must transform at least one axis", fn + 7);
    const bool c2r = type == TN__FFT_T_C2R || type == TN__FFT_T_HFFT;
    if (c2r) {
        last = ns && (one || s[ns - 1] != -1) ? n[k - 1] : 2 * (x->shape[d[k - 1]] - 1);
        if (last < 1) return (tn_tensor *)tn__error("%s: Invalid number of data points (%lld) specified", fn, (long long)last);
        n[k - 1] = last / 2 + 1;
    }
    double count = 1, scale;
    for (int i = 0; i < k; i++) count *= (double)(c2r && i == k - 1 ? last : n[i]);
    const bool fnorm = type == TN__FFT_T_C2C ? forward : type == TN__FFT_T_R2C || type == TN__FFT_T_HFFT;
    if (tn__fft_norm_scale(fn, norm, count, fnorm, &scale)) return NULL;
    tn_scope_begin();
    tn_tensor *r = tn_to_dtype(x, real_in ? rt : tn_dtype_to_complex(rt));
    if (r && type == TN__FFT_T_HFFT) r = tn_conj(r);
    if (r && !real_in) r = tn_view_as_real(r);
    for (int i = 0; i < k && r; i++) r = tn__fft_resize(fn, r, (int)d[i], n[i]);
    if (r) switch (type) {
    case TN__FFT_T_C2C:   /* torch's 1-d transform of a real input is an r2c (ifft's conjugated): its node's name */
        r = tn__grad_name(tn_view_as_complex(tn__fft_c2c_raw(r, k, d, forward, scale)),
                          tn_dtype_is_complex(x->dtype) || k > 1 ? "FftC2CBackward0" : forward ? "FftR2CBackward0" : "ConjBackward0");
        break;
    case TN__FFT_T_R2C: r = tn__grad_name(tn_view_as_complex(tn__fft_r2c_raw(r, k, d, scale)), "FftR2CBackward0"); break;
    case TN__FFT_T_IHFFT: r = tn_conj(tn_view_as_complex(tn__fft_r2c_raw(r, k, d, scale))); break;
    default: r = tn__fft_c2r_raw(r, k, d, last, scale);
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
/* The 1-d, 2-d and n-d forms over tn__fft_transform. */
static tn_tensor *tn__fft1(const char *fn, int type, bool forward, tn_tensor *x, tn_fft_fn_opts o) {
    return TN__AS(fn, tn__fft_transform(fn, type, forward, x, o.n != TN_NONE, &o.n, 1, &o.dim, true, o.norm));
}
static tn_tensor *tn__fft2(const char *fn, int type, bool forward, tn_tensor *x, tn_fft2_fn_opts o) {
    return TN__AS(fn, tn__fft_transform(fn, type, forward, x, o.s.n, o.s.v, o.dim.n, o.dim.v, false, o.norm));
}
static tn_tensor *tn__fftn(const char *fn, int type, bool forward, tn_tensor *x, tn_fftn_fn_opts o) {
    return TN__AS(fn, tn__fft_transform(fn, type, forward, x, o.s.n, o.s.v, o.dim.n, o.dim.v, false, o.norm));
}
TNDEF tn_tensor *tn_fft_fft_opts(tn_tensor *x, tn_fft_fn_opts o) { return tn__fft1("tn_fft_fft", TN__FFT_T_C2C, true, x, o); }
TNDEF tn_tensor *tn_fft_fft_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft_fn_opts, fft, "tn_fft_fft", options, tn_fft_fft_opts(x, o)); }
TNDEF tn_tensor *tn_fft_ifft_opts(tn_tensor *x, tn_fft_fn_opts o) { return tn__fft1("tn_fft_ifft", TN__FFT_T_C2C, false, x, o); }
TNDEF tn_tensor *tn_fft_ifft_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft_fn_opts, fft, "tn_fft_ifft", options, tn_fft_ifft_opts(x, o)); }
TNDEF tn_tensor *tn_fft_rfft_opts(tn_tensor *x, tn_fft_fn_opts o) { return tn__fft1("tn_fft_rfft", TN__FFT_T_R2C, true, x, o); }
TNDEF tn_tensor *tn_fft_rfft_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft_fn_opts, fft, "tn_fft_rfft", options, tn_fft_rfft_opts(x, o)); }
TNDEF tn_tensor *tn_fft_irfft_opts(tn_tensor *x, tn_fft_fn_opts o) { return tn__fft1("tn_fft_irfft", TN__FFT_T_C2R, false, x, o); }
TNDEF tn_tensor *tn_fft_irfft_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft_fn_opts, fft, "tn_fft_irfft", options, tn_fft_irfft_opts(x, o)); }
TNDEF tn_tensor *tn_fft_hfft_opts(tn_tensor *x, tn_fft_fn_opts o) { return tn__fft1("tn_fft_hfft", TN__FFT_T_HFFT, true, x, o); }
TNDEF tn_tensor *tn_fft_hfft_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft_fn_opts, fft, "tn_fft_hfft", options, tn_fft_hfft_opts(x, o)); }
TNDEF tn_tensor *tn_fft_ihfft_opts(tn_tensor *x, tn_fft_fn_opts o) { return tn__fft1("tn_fft_ihfft", TN__FFT_T_IHFFT, false, x, o); }
TNDEF tn_tensor *tn_fft_ihfft_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft_fn_opts, fft, "tn_fft_ihfft", options, tn_fft_ihfft_opts(x, o)); }
TNDEF tn_tensor *tn_fft_fft2_opts(tn_tensor *x, tn_fft2_fn_opts o) { return tn__fft2("tn_fft_fft2", TN__FFT_T_C2C, true, x, o); }
TNDEF tn_tensor *tn_fft_fft2_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft2_fn_opts, fft2, "tn_fft_fft2", options, tn_fft_fft2_opts(x, o)); }
TNDEF tn_tensor *tn_fft_ifft2_opts(tn_tensor *x, tn_fft2_fn_opts o) { return tn__fft2("tn_fft_ifft2", TN__FFT_T_C2C, false, x, o); }
TNDEF tn_tensor *tn_fft_ifft2_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft2_fn_opts, fft2, "tn_fft_ifft2", options, tn_fft_ifft2_opts(x, o)); }
TNDEF tn_tensor *tn_fft_rfft2_opts(tn_tensor *x, tn_fft2_fn_opts o) { return tn__fft2("tn_fft_rfft2", TN__FFT_T_R2C, true, x, o); }
TNDEF tn_tensor *tn_fft_rfft2_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft2_fn_opts, fft2, "tn_fft_rfft2", options, tn_fft_rfft2_opts(x, o)); }
TNDEF tn_tensor *tn_fft_irfft2_opts(tn_tensor *x, tn_fft2_fn_opts o) { return tn__fft2("tn_fft_irfft2", TN__FFT_T_C2R, false, x, o); }
TNDEF tn_tensor *tn_fft_irfft2_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft2_fn_opts, fft2, "tn_fft_irfft2", options, tn_fft_irfft2_opts(x, o)); }
TNDEF tn_tensor *tn_fft_hfft2_opts(tn_tensor *x, tn_fft2_fn_opts o) { return tn__fft2("tn_fft_hfft2", TN__FFT_T_HFFT, true, x, o); }
TNDEF tn_tensor *tn_fft_hfft2_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft2_fn_opts, fft2, "tn_fft_hfft2", options, tn_fft_hfft2_opts(x, o)); }
TNDEF tn_tensor *tn_fft_ihfft2_opts(tn_tensor *x, tn_fft2_fn_opts o) { return tn__fft2("tn_fft_ihfft2", TN__FFT_T_IHFFT, false, x, o); }
TNDEF tn_tensor *tn_fft_ihfft2_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fft2_fn_opts, fft2, "tn_fft_ihfft2", options, tn_fft_ihfft2_opts(x, o)); }
TNDEF tn_tensor *tn_fft_fftn_opts(tn_tensor *x, tn_fftn_fn_opts o) { return tn__fftn("tn_fft_fftn", TN__FFT_T_C2C, true, x, o); }
TNDEF tn_tensor *tn_fft_fftn_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fftn_fn_opts, fftn, "tn_fft_fftn", options, tn_fft_fftn_opts(x, o)); }
TNDEF tn_tensor *tn_fft_ifftn_opts(tn_tensor *x, tn_fftn_fn_opts o) { return tn__fftn("tn_fft_ifftn", TN__FFT_T_C2C, false, x, o); }
TNDEF tn_tensor *tn_fft_ifftn_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fftn_fn_opts, fftn, "tn_fft_ifftn", options, tn_fft_ifftn_opts(x, o)); }
TNDEF tn_tensor *tn_fft_rfftn_opts(tn_tensor *x, tn_fftn_fn_opts o) { return tn__fftn("tn_fft_rfftn", TN__FFT_T_R2C, true, x, o); }
TNDEF tn_tensor *tn_fft_rfftn_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fftn_fn_opts, fftn, "tn_fft_rfftn", options, tn_fft_rfftn_opts(x, o)); }
TNDEF tn_tensor *tn_fft_irfftn_opts(tn_tensor *x, tn_fftn_fn_opts o) { return tn__fftn("tn_fft_irfftn", TN__FFT_T_C2R, false, x, o); }
TNDEF tn_tensor *tn_fft_irfftn_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fftn_fn_opts, fftn, "tn_fft_irfftn", options, tn_fft_irfftn_opts(x, o)); }
TNDEF tn_tensor *tn_fft_hfftn_opts(tn_tensor *x, tn_fftn_fn_opts o) { return tn__fftn("tn_fft_hfftn", TN__FFT_T_HFFT, true, x, o); }
TNDEF tn_tensor *tn_fft_hfftn_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fftn_fn_opts, fftn, "tn_fft_hfftn", options, tn_fft_hfftn_opts(x, o)); }
TNDEF tn_tensor *tn_fft_ihfftn_opts(tn_tensor *x, tn_fftn_fn_opts o) { return tn__fftn("tn_fft_ihfftn", TN__FFT_T_IHFFT, false, x, o); }
TNDEF tn_tensor *tn_fft_ihfftn_str(tn_tensor *x, const char *options) { TN__KW_STR_S(tn_fftn_fn_opts, fftn, "tn_fft_ihfftn", options, tn_fft_ihfftn_opts(x, o)); }

/* ---- torch.stft / istft: composites of the transforms (ATen's stft and istft) ---- */
/* The window as n_fft points: w (NULL: ones of win_length points, dtype dt) centred between
   zeros; NULL window and win_length == n_fft: NULL (no multiplication). */
static tn_tensor *tn__stft_window(tn_tensor *w, int64_t n_fft, int64_t win, tn_dtype dt, bool needed) {
    if (!w && win == n_fft && !needed) return NULL;
    if (!w) w = tn_ones(&win, 1, dt);
    const int64_t pads[2] = {(n_fft - win) / 2, n_fft - win - (n_fft - win) / 2};
    return w && win < n_fft ? tn_pad(w, pads, 2) : w;
}
static tn_tensor *tn__stft(const char *fn, tn_tensor *x, int64_t n_fft, tn_tensor *window, tn_stft_fn_opts o) {
    TN__CHECK_NULL(x);
    const bool cplx = tn_dtype_is_complex(x->dtype) || (window && tn_dtype_is_complex(window->dtype));
    const int64_t hop = o.hop_length == TN_NONE ? n_fft / 4 : o.hop_length, win = o.win_length == TN_NONE ? n_fft : o.win_length;
    if (o.return_complex < 0 && !cplx)   /* 2025 PyTorch's error (1.13 warned and returned the real view) */
        return (tn_tensor *)tn__error("%s: stft requires the return_complex parameter be given for real inputs, and will further require "
                                      "that return_complex=True in a future PyTorch release.", fn);
    if (x->ndim != 1 && x->ndim != 2) return (tn_tensor *)tn__error("%s: stft: expected a 1D or 2D tensor, but got %s", fn, TN__SHAPE(x));
    int mode = -1;
    const char *modes[] = {"constant", "reflect", "replicate", "circular"};
    const int codes[] = {TN_PADDING_ZEROS, TN_PADDING_REFLECT, TN_PADDING_REPLICATE, TN_PADDING_CIRCULAR};
    for (int i = 0; i < 4; i++)
        if (o.pad_mode && !strcmp(o.pad_mode, modes[i])) mode = codes[i];
    if (mode < 0) return (tn_tensor *)tn__error("%s: Unrecognised padding mode %s", fn, o.pad_mode ? o.pad_mode : "None");
    const bool onesided = o.onesided < 0 ? !cplx : o.onesided;
    tn_scope_begin();
    tn_tensor *s = x->ndim == 1 ? tn_unsqueeze(x, 0) : x, *r = NULL;
    if (s && o.center) {
        const int64_t pads[2] = {n_fft / 2, n_fft / 2};
        tn_pad_fn_opts po = TN_DEFAULTS(tn_pad_fn_opts);
        po.mode = mode;
        s = tn_pad_opts(s, pads, 2, po);
    }
    const int64_t len = s ? s->shape[1] : 0;
    if (!s) {
    } else if (n_fft <= 0 || n_fft > len) tn__error("%s: stft: expected 0 < n_fft < %lld, but got n_fft=%lld", fn, (long long)len, (long long)n_fft);
    else if (hop <= 0) tn__error("%s: stft: expected hop_length > 0, but got hop_length=%lld", fn, (long long)hop);
    else if (win <= 0 || win > n_fft) tn__error("%s: stft: expected 0 < win_length <= n_fft, but got win_length=%lld", fn, (long long)win);
    else if (window && (window->ndim != 1 || window->shape[0] != win))
        tn__error("%s: stft: expected a 1D window tensor of size equal to win_length=%lld, but got window with size %s", fn, (long long)win, TN__SHAPE(window));
    else if (cplx && onesided) tn__error("%s: Cannot have onesided output if window or input is complex", fn);
    else {
        const tn_dtype rt = tn_dtype_is_complex(x->dtype) ? tn_dtype_to_real(x->dtype) : x->dtype;
        tn_tensor *w = tn__stft_window(window, n_fft, win, tn_dtype_is_floating(rt) ? rt : tn_get_default_dtype(), false);
        r = tn_unfold(s, 1, n_fft, hop);   /* [B, frames, n_fft] */
        if (r && w) r = tn_mul(r, w);
        tn_fft_fn_opts fo = TN_DEFAULTS(tn_fft_fn_opts);
        fo.norm = o.normalized ? "ortho" : "backward";
        if (r) r = onesided ? tn_fft_rfft_opts(r, fo) : tn_fft_fft_opts(r, fo);
        if (r) r = tn_transpose(r, 1, 2);
        if (r && x->ndim == 1) r = tn_squeeze_dim(r, 0);
        if (r && !o.return_complex) r = tn_view_as_real(r);
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_stft_opts(tn_tensor *x, int64_t n_fft, tn_tensor *window, tn_stft_fn_opts o) {
    return TN__AS("tn_stft", tn__stft("tn_stft", x, n_fft, window, o));
}
TNDEF tn_tensor *tn_stft_str(tn_tensor *x, int64_t n_fft, tn_tensor *window, const char *options) {
    TN__KW_STR_S(tn_stft_fn_opts, stft, "tn_stft", options, tn_stft_opts(x, n_fft, window, o));
}

/* Overlap-add of frames y [C, frames, n] every hop into [C, L] (ATen's unfold_backward): F.fold
   over one row; a complex y by its parts. */
static tn_tensor *tn__ola(tn_tensor *y, int64_t hop, int64_t L) {
    if (y && tn_dtype_is_complex(y->dtype)) return tn_complex(tn__ola(tn_real(y), hop, L), tn__ola(tn_imag(y), hop, L));
    if (!y) return NULL;
    const int64_t n = y->shape[2];
    const int64_t size[2] = {1, L}, kernel[2] = {1, n}, one[2] = {1, 1}, zero[2] = {0, 0}, stride[2] = {1, hop}, shape[2] = {y->shape[0], L};
    tn_tensor *r = tn_col2im(tn_transpose(y, 1, 2), size, kernel, one, zero, stride);
    return r ? tn_reshape(r, shape, 2) : NULL;
}
static tn_tensor *tn__istft(const char *fn, tn_tensor *x, int64_t n_fft, tn_tensor *window, tn_istft_fn_opts o) {
    TN__CHECK_NULL(x);
    const int64_t hop = o.hop_length == TN_NONE ? n_fft / 4 : o.hop_length, win = o.win_length == TN_NONE ? n_fft : o.win_length;
    if (!tn_dtype_is_complex(x->dtype))
        return (tn_tensor *)tn__error("%s: istft requires a complex-valued input tensor matching the output from stft with return_complex=True.", fn);
    if (x->ndim != 2 && x->ndim != 3)
        return (tn_tensor *)tn__error("%s: istft: expected a complex tensor of 2 or 3 dims ([channel,] freq, frames), but got %s", fn, TN__SHAPE(x));
    const int64_t frames = x->shape[x->ndim - 1], fsize = x->shape[x->ndim - 2];
    const bool onesided = o.onesided < 0 ? fsize != n_fft : o.onesided;
    if (onesided && n_fft / 2 + 1 != fsize)
        return (tn_tensor *)tn__error("%s: istft expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                                      "when onesided=True, but got %lld", fn, (long long)fsize);
    if (!onesided && n_fft != fsize)
        return (tn_tensor *)tn__error("%s: istft expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                                      "onesided=False, but got %lld", fn, (long long)fsize);
    if (!(0 < hop && hop <= win)) return (tn_tensor *)tn__error("%s: istft expected 0 < hop_length <= win_length", fn);
    if (!(0 < win && win <= n_fft)) return (tn_tensor *)tn__error("%s: istft expected 0 < win_length <= n_fft", fn);
    if (window && window->ndim != 1) return (tn_tensor *)tn__error("%s: istft expected window to be a 1D tensor", fn);
    if (window && window->shape[0] != win) return (tn_tensor *)tn__error("%s: istft expected window of size equal to win_length", fn);
    if (o.return_complex && onesided) return (tn_tensor *)tn__error("%s: Cannot have onesided output if window or input is complex", fn);
    if (!o.return_complex && window && tn_dtype_is_complex(window->dtype))
        return (tn_tensor *)tn__error("%s: Complex windows are incompatible with return_complex=False", fn);
    if (frames == 0 || n_fft < 1) return (tn_tensor *)tn__error("%s: istft: the input has no frames (%s)", fn, TN__SHAPE(x));
    const int64_t L = n_fft + hop * (frames - 1), start = o.center ? n_fft / 2 : 0;
    const int64_t end = o.length != TN_NONE ? start + o.length : o.center ? L - n_fft / 2 : L;
    tn_scope_begin();
    tn_tensor *w = tn__stft_window(window, n_fft, win, tn_dtype_to_real(x->dtype), true);
    tn_tensor *s = tn_transpose(x->ndim == 2 ? tn_unsqueeze(x, 0) : x, 1, 2), *y;   /* [C, frames, freq] */
    tn_fft_fn_opts fo = TN_DEFAULTS(tn_fft_fn_opts);
    fo.norm = o.normalized ? "ortho" : "backward";
    if (o.return_complex) y = tn_fft_ifft_opts(s, fo);
    else {
        fo.n = n_fft;
        y = tn_fft_irfft_opts(onesided ? s : tn_narrow(s, -1, 0, n_fft / 2 + 1), fo);
    }
    y = tn__ola(tn_mul(y, w), hop, L);
    const int64_t wshape[3] = {1, 1, n_fft}, eshape[3] = {1, frames, n_fft};
    tn_tensor *env = w ? tn__ola(tn_expand(tn_view(tn_mul(w, w), wshape, 3), eshape, 3), hop, L) : NULL;
    const int64_t stop = TN__MIN(end, L), keep = stop > start ? stop - start : 0;
    if (y && env) {
        y = tn_narrow(y, 1, start, keep);
        env = tn_narrow(env, 1, start, keep);
        if (keep > 0 && tn_item(tn_min(tn_abs(env))) < 1e-11) {
            tn__error("%s: window overlap add min: the squared window sums to below 1e-11 at some sample (not invertible)", fn);
            y = NULL;
        } else y = tn_div(y, env);
    } else y = NULL;
    if (y && x->ndim == 2) y = tn_squeeze_dim(y, 0);
    const int64_t tail[2] = {0, end - L};
    if (y && end > L) y = tn_pad(y, tail, 2);   /* PyTorch warns: the signal is shorter than length */
    y = tn_keep(y);
    tn_scope_end();
    return y;
}
TNDEF tn_tensor *tn_istft_opts(tn_tensor *x, int64_t n_fft, tn_tensor *window, tn_istft_fn_opts o) {
    return TN__AS("tn_istft", tn__istft("tn_istft", x, n_fft, window, o));
}
TNDEF tn_tensor *tn_istft_str(tn_tensor *x, int64_t n_fft, tn_tensor *window, const char *options) {
    TN__KW_STR_S(tn_istft_fn_opts, istft, "tn_istft", options, tn_istft_opts(x, n_fft, window, o));
}
