/* Depthwise convolutions (groups = input channels, any multiplier): direct loops over the
   planes, one multiply-add per kernel tap and output, instead of one tiny GEMM per group. */
/* @template TN__DW_DEFINE(T, SFX) */
/* y[i] += a x[i] (restrict: vectorises) */
static void tn__dw_axpy_##SFX(int64_t n, T a, const T *TN__RESTRICT x, T *TN__RESTRICT y)
{
    int64_t i;
    for (i = 0; i < n; i++) y[i] += a * x[i];
}
static T tn__dw_dot_##SFX(int64_t n, const T *TN__RESTRICT x, const T *TN__RESTRICT y)
{ /* in 4 partial sums, so it vectorises */
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i;
    for (i = 0; i + 4 <= n; i += 4) { s0 += x[i] * y[i]; s1 += x[i + 1] * y[i + 1]; s2 += x[i + 2] * y[i + 2]; s3 += x[i + 3] * y[i + 3]; }
    for (; i < n; i++) s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}
/* Output columns [*o0, *o1) whose input column ox * sw + off lies in [0, W). */
static void tn__dw_cols_##SFX(int64_t off, int64_t sw, int64_t W, int64_t ow, int64_t *o0, int64_t *o1)
{
    *o0 = off < 0 ? (-off + sw - 1) / sw : 0;
    *o1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
    if (*o1 > ow) *o1 = ow;
    if (*o1 < *o0) *o1 = *o0;
}
/* Depthwise (one input channel per group): plane p = (n, o) of y [N, O, oh, ow] reads plane
   (n, o / (O / C)) of x [N, C, H, W]; w [O, 1, kh, kw]; all contiguous. mode 0: y = conv(x) + b;
   1: the input gradient gx (= x, written) from gy (= y); 2: the weight gradient gw (= w,
   written) from gy and x. Threads take planes (0, 2) or input planes (1); every sum runs in
   one order, so the result is the same for any thread count. */
typedef struct { int mode; T *x, *w; const T *b; T *y; int64_t N, C, H, W, O; const int64_t *g; } tn__dw_args_##SFX;
/* planes [p0, p1) */
static void tn__dw_part_##SFX(void *args, int64_t p0, int64_t p1)
{
    const tn__dw_args_##SFX *a_ = (const tn__dw_args_##SFX *)args;
    const int mode = a_->mode;
    T *x = a_->x, *w = a_->w, *y = a_->y;
    const T *b = a_->b;
    const int64_t N = a_->N, C = a_->C, H = a_->H, W = a_->W, O = a_->O, *g = a_->g;
    const int64_t kh = g[0], kw = g[1], dh = g[2], dw = g[3], ph = g[4], pw = g[5], sh = g[6], sw = g[7];
    const int64_t oh = g[8], ow = g[9], Og = O / C;
    int64_t p;
    for (p = p0; p < p1; p++) {
        const int64_t nb = mode == 1 ? p / C : mode == 2 ? 0 : p / O, ne = mode == 2 ? N : nb + 1;
        const int64_t oa = mode == 1 ? p % C * Og : p % O, ob = mode == 1 ? oa + Og : oa + 1;
        int64_t oy, i, j, o0, o1, n, o;
        if (mode == 1) memset(x + p * H * W, 0, (size_t)(H * W) * sizeof(T));
        if (mode == 2) for (i = 0; i < kh * kw; i++) w[p * kh * kw + i] = (T)0;
        for (n = nb; n < ne; n++)
            for (o = oa; o < ob; o++) {
                T *xp = x + (n * C + o / Og) * H * W, *yp = y + (n * O + o) * oh * ow, *wp = w + o * kh * kw;
                for (oy = 0; oy < oh; oy++) {
                    T *yr = yp + oy * ow;
                    if (mode == 0) { const T bv = b ? b[o] : (T)0; for (j = 0; j < ow; j++) yr[j] = bv; }
                    for (i = 0; i < kh; i++) {
                        const int64_t iy = oy * sh - ph + i * dh;
                        T *xr;
                        if (iy < 0 || iy >= H) continue;
                        xr = xp + iy * W;
                        for (j = 0; j < kw; j++) {
                            const int64_t off = j * dw - pw;
                            tn__dw_cols_##SFX(off, sw, W, ow, &o0, &o1);
                            if (o1 == o0) continue;
                            if (sw == 1) {
                                if (mode == 0) tn__dw_axpy_##SFX(o1 - o0, wp[i * kw + j], xr + o0 + off, yr + o0);
                                else if (mode == 1) tn__dw_axpy_##SFX(o1 - o0, wp[i * kw + j], yr + o0, xr + o0 + off);
                                else wp[i * kw + j] += tn__dw_dot_##SFX(o1 - o0, yr + o0, xr + o0 + off);
                            } else {
                                int64_t ox;
                                if (mode == 0) for (ox = o0; ox < o1; ox++) yr[ox] += wp[i * kw + j] * xr[ox * sw + off];
                                else if (mode == 1) for (ox = o0; ox < o1; ox++) xr[ox * sw + off] += wp[i * kw + j] * yr[ox];
                                else { T s = 0; for (ox = o0; ox < o1; ox++) s += yr[ox] * xr[ox * sw + off]; wp[i * kw + j] += s; }
                            }
                        }
                    }
                }
            }
    }
}
static void tn__dw_conv_##SFX(int mode, T *x, T *w, const T *b, T *y, int64_t N, int64_t C, int64_t H,
                              int64_t W, int64_t O, const int64_t *g, int nthr)
{
    tn__dw_args_##SFX a = {mode, x, w, b, y, N, C, H, W, O, g};
    tn__parallel_range(nthr, mode == 1 ? N * C : mode == 2 ? O : N * O, tn__dw_part_##SFX, &a);
}
/* @end TN__DW_DEFINE */

TN__DW_DEFINE(float, f32)
TN__DW_DEFINE(double, f64)
/* mode 0: y = conv(x, w) + b; 1: x = the input gradient from y = gy; 2: w = the weight
   gradient from y = gy and x; by the depthwise loops. The written tensor is new and
   contiguous, w and gy contiguous. */
static int tn__conv_dw_cpu(int mode, tn_tensor *x, tn_tensor *w, const tn_tensor *b, tn_tensor *y, const int64_t *g) {
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], kk = g[0] * g[1];
    const int64_t np = mode == 1 ? N * C : mode == 2 ? O : N * O;
    const int nthr = tn__par_threads(tn__mul_sat(N * O * g[8] * g[9], kk), np);   /* N O oh ow: y's numel */
    tn_tensor *xc = mode == 1 || tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    if (!xc) return TN__FAIL_INT(mode ? "conv2d backward: out of memory" : "conv2d: out of memory");
    if (x->dtype == TN_F32)
        tn__dw_conv_f32(mode, (float *)tn_data_ptr(xc), (float *)tn_data_ptr(w), b ? (const float *)tn_data_ptr(b) : NULL,
                        (float *)tn_data_ptr(y), N, C, x->shape[2], x->shape[3], O, g, nthr);
    else
        tn__dw_conv_f64(mode, (double *)tn_data_ptr(xc), (double *)tn_data_ptr(w), b ? (const double *)tn_data_ptr(b) : NULL,
                        (double *)tn_data_ptr(y), N, C, x->shape[2], x->shape[3], O, g, nthr);
    tn_release(xc);
    return 0;
}
/* Depthwise: one input channel per group, more than one group. */
static bool tn__conv_dw_ok(const tn_tensor *x, int64_t G) {
    return tn__conv_fast_paths && G > 1 && x->shape[1] == G && (x->dtype == TN_F32 || x->dtype == TN_F64);
}
