/* test_fft_transforms.c — issue 26, item 2: torch.fft's transforms (tn_fft_fft ... tn_fft_ihfftn)
 * on complex tensors. Values against a direct DFT in long double (every norm, n / s padding
 * and cropping, negative and permuted dims, non-contiguous inputs), the identities between
 * the transforms (rfft is fft's first half, irfft inverts rfft, hfft is irfft of the
 * conjugate times n, ihfft the conjugate of rfft / n), dtypes (float32 -> complex64, float64 ->
 * complex128, int64 -> the default's complex, irfft real), 0-size batches, torch's errors,
 * and gradcheck / gradgradcheck in float64 of every transform type (through the complex
 * tensor's real view: real perturbations of both parts). The values against torch itself
 * and its gradients are bindings/python/tests/test_fft.py's. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <float.h>

static const long double PI_L = 3.141592653589793238462643383279502884L;

/* max |a - b| over two tensors of one shape (complex: both parts) */
static double maxdiff(tn_tensor *a, tn_tensor *b) {
    if (!a || !b) return INFINITY;
    if (tn_is_complex(a)) a = tn_view_as_real(a);
    if (tn_is_complex(b)) b = tn_view_as_real(b);
    if (tn_ndim(a) != tn_ndim(b)) return INFINITY;
    for (int i = 0; i < tn_ndim(a); i++)
        if (tn_shape(a)[i] != tn_shape(b)[i]) return INFINITY;
    if (tn_numel(a) == 0) return 0;
    return tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(a, TN_F64), tn_to_dtype(b, TN_F64)))));
}

/* The 1-d DFT of the complex128 x [B, N] along dim 1, padded / cropped to n, times scale,
   sg +1 forward, -1 inverse: a complex128 [B, n] computed in long double. */
static tn_tensor *dft_ref(tn_tensor *x, int64_t n, int sg, double scale) {
    tn_tensor *c = tn_contiguous(tn_view_as_real(x));
    const double *v = (const double *)tn_data_ptr(c);
    const int64_t B = tn_shape(x)[0], N = tn_shape(x)[1], m = N < n ? N : n;
    tn_tensor *r = tn_empty(TN_SHAPE(B, n, 2), TN_F64);
    double *o = (double *)tn_data_ptr(r);
    for (int64_t b = 0; b < B; b++)
        for (int64_t k = 0; k < n; k++) {
            long double re = 0, im = 0;
            for (int64_t j = 0; j < m; j++) {
                long double a = -sg * 2 * PI_L * (long double)(j * k % n) / (long double)n;
                long double xr = v[2 * (b * N + j)], xi = v[2 * (b * N + j) + 1];
                re += xr * cosl(a) - xi * sinl(a);
                im += xr * sinl(a) + xi * cosl(a);
            }
            o[2 * (b * n + k)] = (double)(re * scale);
            o[2 * (b * n + k) + 1] = (double)(im * scale);
        }
    return tn_view_as_complex(r);
}

static tn_tensor *crandn(int64_t a, int64_t b, tn_dtype dt) {
    return tn_view_as_complex(tn_randn(TN_SHAPE(a, b, 2), tn_dtype_to_real(dt)));
}

TEST(fft_ifft_against_the_dft) {
    tn_scope_begin();
    const char *norms[] = {NULL, "backward", "forward", "ortho"};
    const int64_t ns[] = {TN_NONE, 1, 4, 7, 9, 12, 17};
    tn_tensor *x = crandn(3, 9, TN_C128);
    for (int inv = 0; inv < 2; inv++)
        for (int ni = 0; ni < 4; ni++)
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                const int64_t n = ns[k] == TN_NONE ? 9 : ns[k];
                const char *nm = norms[ni] ? norms[ni] : "backward";
                const double sc = !strcmp(nm, "ortho") ? 1 / sqrt((double)n) : (!strcmp(nm, "forward")) != inv ? 1.0 / (double)n : 1.0;
                tn_tensor *r = inv ? tn_fft_ifft(x, .n = ns[k], .norm = norms[ni]) : tn_fft_fft(x, .n = ns[k], .norm = norms[ni]);
                double e = maxdiff(r, dft_ref(x, n, inv ? -1 : 1, sc));
                if (!(e < 1e-13)) fail_at(__LINE__, "inv %d norm %s n %lld: error %g (%s)", inv, nm, (long long)n, e, tn_last_error());
                else tn_test_passed++;
                CHECK(r && tn_get_dtype(r) == TN_C128);
            }
    /* dim 0 of a transposed (non-contiguous) input; dim -2 the same */
    tn_tensor *xt = tn_transpose(x, 0, 1);   /* [9, 3] */
    CHECK(maxdiff(tn_fft_fft(xt, .dim = 0), tn_transpose(tn_fft_fft(x), 0, 1)) < 1e-12);
    CHECK(maxdiff(tn_fft_fft(xt, .dim = -2, .n = 5), tn_transpose(tn_fft_fft(x, .n = 5), 0, 1)) < 1e-12);
    /* float32 -> complex64 (single precision), int64 -> the default dtype's complex */
    tn_tensor *xf = tn_randn(TN_SHAPE(4, 10), TN_F32);
    tn_tensor *rf = tn_fft_fft(xf);
    CHECK(rf && tn_get_dtype(rf) == TN_C64);
    CHECK(maxdiff(rf, tn_fft_fft(tn_to_dtype(xf, TN_F64))) < 1e-4);
    tn_tensor *ri = tn_fft_fft(tn_arange(0, 6, 1, TN_I64));
    CHECK(ri && tn_get_dtype(ri) == TN_C64);
    CHECK(maxdiff(tn_view(ri, TN_SHAPE(1, 6)), dft_ref(tn_to_dtype(tn_view(tn_arange(0, 6, 1, TN_F64), TN_SHAPE(1, 6)), TN_C128), 6, 1, 1.0)) < 1e-5);
    tn_set_default_dtype(TN_F64);
    CHECK(tn_get_dtype(tn_fft_ifft(tn_ones(TN_SHAPE(3), TN_BOOL))) == TN_C128);
    tn_set_default_dtype(TN_F32);
    tn_scope_end();
}

TEST(real_transforms) {
    tn_scope_begin();
    const char *norms[] = {NULL, "forward", "ortho"};
    for (int ni = 0; ni < 3; ni++)
        for (int64_t len = 1; len <= 12; len++) {
            tn_tensor *x = tn_randn(TN_SHAPE(3, len), TN_F64);
            const char *nm = norms[ni];
            /* rfft: fft's first n/2 + 1 points (n = len, and padded to 2 len + 1, cropped to len / 2 + 1) */
            const int64_t sizes[] = {len, 2 * len + 1, len / 2 + 1};
            for (int si = 0; si < 3; si++) {
                const int64_t n = sizes[si];
                tn_tensor *r = tn_fft_rfft(x, .n = n, .norm = nm);
                CHECK(r && tn_get_dtype(r) == TN_C128 && tn_shape(r)[1] == n / 2 + 1);
                CHECK(maxdiff(r, tn_narrow(tn_fft_fft(x, .n = n, .norm = nm), 1, 0, n / 2 + 1)) < 1e-12);
                /* irfft inverts it (n given: the length back) */
                tn_tensor *back = tn_fft_irfft(r, .n = n, .norm = nm);
                tn_tensor *want = n >= len ? tn_pad(x, TN_SHAPE(0, n - len)) : tn_narrow(x, 1, 0, n);
                CHECK(back && tn_get_dtype(back) == TN_F64 && maxdiff(back, want) < 1e-12);
                /* ihfft = conj(rfft) scaled as the inverse; hfft inverts ihfft */
                tn_tensor *ih = tn_fft_ihfft(x, .n = n, .norm = nm);
                double sc = !nm ? 1.0 / (double)n : !strcmp(nm, "forward") ? 1.0 : 1.0 / sqrt((double)n);
                double sr = !nm ? 1.0 : !strcmp(nm, "forward") ? 1.0 / (double)n : 1.0 / sqrt((double)n);
                CHECK(maxdiff(ih, tn_mul_scalar(tn_conj(r), sc / sr)) < 1e-12);
                CHECK(maxdiff(tn_fft_hfft(ih, .n = n, .norm = nm), want) < 1e-12);
            }
            /* irfft's default n: 2 (m - 1) */
            tn_tensor *c = tn_fft_rfft(x);
            if (tn_shape(c)[1] >= 2) CHECK(tn_shape(tn_fft_irfft(c))[1] == 2 * (tn_shape(c)[1] - 1));
        }
    /* the half spectrum's first (and, n even, last) imaginary parts are ignored, as pocketfft */
    tn_tensor *h = crandn(2, 5, TN_C128);
    tn_tensor *hr = tn_complex(tn_real(h), tn_mul(tn_imag(h), tn_view(tn_from_data((double[]){0, 1, 1, 1, 0}, TN_SHAPE(5), TN_F64), TN_SHAPE(1, 5))));
    CHECK(maxdiff(tn_fft_irfft(h), tn_fft_irfft(hr)) < 1e-13);
    /* float32 gives float32 / complex64 */
    tn_tensor *xf = tn_randn(TN_SHAPE(2, 6), TN_F32);
    CHECK(tn_get_dtype(tn_fft_rfft(xf)) == TN_C64 && tn_get_dtype(tn_fft_irfft(tn_fft_rfft(xf))) == TN_F32);
    CHECK(tn_get_dtype(tn_fft_hfft(tn_fft_rfft(xf))) == TN_F32 && tn_get_dtype(tn_fft_ihfft(xf)) == TN_C64);
    tn_scope_end();
}

/* fftn = fft along each dim in turn; the real n-d transforms from the 1-d ones */
TEST(nd_transforms) {
    tn_scope_begin();
    tn_tensor *x = tn_permute(tn_view_as_complex(tn_randn(TN_SHAPE(5, 4, 3, 2), TN_F64)), TN_SHAPE(2, 1, 0));   /* [3, 4, 5] */
    tn_tensor *xr = tn_transpose(tn_randn(TN_SHAPE(5, 4, 3), TN_F64), 0, 2);                                    /* [3, 4, 5] */
    const char *norms[] = {NULL, "forward", "ortho"};
    for (int ni = 0; ni < 3; ni++) {
        const char *nm = norms[ni];
        tn_tensor *a = tn_fft_fftn(x, .norm = nm);
        tn_tensor *b = tn_fft_fft(tn_fft_fft(tn_fft_fft(x, .dim = 0, .norm = nm), .dim = 1, .norm = nm), .dim = 2, .norm = nm);
        CHECK(maxdiff(a, b) < 1e-12);
        /* s with -1 and dims out of order */
        a = tn_fft_ifftn(x, .s = TN_INTS(-1, 7), .dim = TN_INTS(1, -1), .norm = nm);
        b = tn_fft_ifft(tn_fft_ifft(x, .dim = 1, .norm = nm), .n = 7, .dim = 2, .norm = nm);
        CHECK(maxdiff(a, b) < 1e-12);
        /* fft2: the last two dims; s alone: the last len(s) dims */
        CHECK(maxdiff(tn_fft_fft2(x, .norm = nm), tn_fft_fftn(x, .dim = TN_INTS(1, 2), .norm = nm)) < 1e-12);
        CHECK(maxdiff(tn_fft_fftn(x, .s = TN_INTS(2, 6)), tn_fft_fftn(x, .s = TN_INTS(2, 6), .dim = TN_INTS(1, 2))) < 1e-12);
        /* rfftn: fftn's first half along the last dim; irfftn inverts it */
        tn_tensor *r = tn_fft_rfftn(xr, .dim = TN_INTS(0, 2), .norm = nm);
        CHECK(maxdiff(r, tn_narrow(tn_fft_fftn(xr, .dim = TN_INTS(0, 2), .norm = nm), 2, 0, 3)) < 1e-12);
        CHECK(maxdiff(tn_fft_irfftn(r, .s = TN_INTS(3, 5), .dim = TN_INTS(0, 2), .norm = nm), xr) < 1e-12);
        CHECK(maxdiff(tn_fft_irfft2(tn_fft_rfft2(xr, .norm = nm), .s = TN_INTS(4, 5), .norm = nm), xr) < 1e-12);
        /* the last dim of the list is the half one: dims (2, 0) halves dim 0 */
        r = tn_fft_rfftn(xr, .dim = TN_INTS(2, 0), .norm = nm);
        CHECK(r && tn_shape(r)[0] == 2 && tn_shape(r)[2] == 5);
        CHECK(maxdiff(r, tn_narrow(tn_fft_fftn(xr, .dim = TN_INTS(2, 0), .norm = nm), 0, 0, 2)) < 1e-12);
        /* hfftn / ihfftn invert each other; ihfftn is conj(rfftn) scaled as the inverse */
        tn_tensor *ih = tn_fft_ihfftn(xr, .norm = nm);
        CHECK(maxdiff(tn_fft_hfftn(ih, .s = TN_INTS(3, 4, 5), .norm = nm), xr) < 1e-12);
        CHECK(maxdiff(tn_fft_hfft2(tn_fft_ihfft2(xr, .norm = nm), .s = TN_INTS(4, 5), .norm = nm), xr) < 1e-12);
        const double sc = !nm ? 1.0 / 60 : !strcmp(nm, "forward") ? 1.0 : 1.0;
        const double sr = !nm ? 1.0 : !strcmp(nm, "forward") ? 1.0 / 60 : 1.0;
        CHECK(maxdiff(ih, tn_mul_scalar(tn_conj(tn_fft_rfftn(xr, .norm = nm)), sc / sr)) < 1e-12);
    }
    tn_scope_end();
}

TEST(empty_and_zero_size) {
    tn_scope_begin();
    tn_tensor *e = tn_zeros(TN_SHAPE(0, 6), TN_F32);
    tn_tensor *r = tn_fft_rfft(e);
    CHECK(r && tn_shape(r)[0] == 0 && tn_shape(r)[1] == 4 && tn_get_dtype(r) == TN_C64);
    r = tn_fft_fft2(tn_zeros(TN_SHAPE(0, 3, 4), TN_C128));
    CHECK(r && tn_shape(r)[0] == 0 && tn_shape(r)[2] == 4);
    r = tn_fft_irfft(tn_zeros(TN_SHAPE(0, 4), TN_C64));
    CHECK(r && tn_shape(r)[0] == 0 && tn_shape(r)[1] == 6 && tn_get_dtype(r) == TN_F32);
    /* one point: the identity (scaled) */
    tn_tensor *one = tn_full(TN_SHAPE(2, 1), 3.0, TN_F64);
    CHECK(maxdiff(tn_fft_rfft(one), tn_to_dtype(one, TN_C128)) == 0);
    CHECK(maxdiff(tn_fft_irfft(tn_fft_rfft(one), .n = 1), one) == 0);
    tn_scope_end();
}

TEST(errors) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(4, 5), TN_F32), *c = crandn(4, 5, TN_C64);
    CHECK_ERR(tn_fft_rfft(c), "rfft expects a real input tensor, but got complex64");
    CHECK_ERR(tn_fft_ihfft2(c), "ihfft2 expects a real input tensor");
    CHECK_ERR(tn_fft_fft(x, .n = 0), "Invalid number of data points (0) specified");
    CHECK_ERR(tn_fft_fft(x, .n = -1), "Invalid number of data points (-1) specified");
    CHECK_ERR(tn_fft_fft(x, .dim = 2), "out of range");
    CHECK_ERR(tn_fft_fft(tn_scalar_tensor(1, TN_F32)), "tensor has no dimensions");
    CHECK_ERR(tn_fft_fft(x, .norm = "bad"), "Invalid normalization mode: \"bad\"");
    CHECK_ERR(tn_fft_fft2(x, .dim = TN_INTS(0, -2)), "FFT dims must be unique");
    CHECK_ERR(tn_fft_fftn(x, .s = TN_INTS(1, 2, 3)), "Got shape with 3 values but input tensor only has 2 dimensions.");
    CHECK_ERR(tn_fft_fftn(x, .s = TN_INTS(1, 2), .dim = TN_INTS(0)), "When given, dim and shape arguments must have the same length");
    CHECK_ERR(tn_fft_irfft(crandn(3, 1, TN_C64)), "Invalid number of data points (0) specified");
    CHECK_ERR(tn_fft_fft(tn_to_dtype(x, TN_F16)), "Unsupported dtype float16");
    CHECK_ERR(tn_fft_rfft(tn_to_dtype(x, TN_BF16)), "Unsupported dtype bfloat16");
    CHECK_ERR(tn_fft_fft(tn_zeros(TN_SHAPE(0), TN_F32)), "Invalid number of data points (0) specified");
    CHECK_ERR(tn_fft_fft2(tn_zeros(TN_SHAPE(3), TN_F32)), "out of range");
    CHECK_ERR(tn_fft_rfftn(tn_scalar_tensor(3, TN_F32)), "rfftn must transform at least one axis");
    CHECK_ERR(tn_fft_fftn_str(x, "norm='sideways'"), "Invalid normalization mode");
    CHECK_ERR(tn_fft_fft_str(x, "bogus=1"), "bogus");
    CHECK(maxdiff(tn_fft_fft_str(x, "n=7, dim=0, norm='ortho'"), tn_fft_fft(x, .n = 7, .dim = 0, .norm = "ortho")) == 0);
    CHECK(maxdiff(tn_fft_irfftn_str(c, "s=(4, 6), norm=None"), tn_fft_irfftn(c, .s = TN_INTS(4, 6))) == 0);
    if (tn_cuda_is_available()) {   /* CUDA tensors run through tn_backend.fft (cuFFT): tests/cuda_cases_complex.h */
        tn_tensor *g = tn_fft_fft(tn_to(x, TN_CUDA));
        CHECK(g && g->device == TN_CUDA);
    }
    tn_scope_end();
}

/* ---- gradients: every transform type, through the real view so gradcheck perturbs both
   parts of a complex input; the outputs made nonlinear so gradgradcheck sees second
   derivatives ---- */
static tn_tensor *grad_fn(tn_tensor *const *in, int n, void *ctx) {
    (void)n;
    const int which = *(const int *)ctx;
    tn_tensor *c = tn_view_as_complex(in[0]), *re = tn_select(in[0], -1, 0), *r = NULL;
    switch (which) {
    case 0: r = tn_fft_fft(c, .n = 5, .norm = "ortho"); break;
    case 1: r = tn_fft_ifftn(c, .s = TN_INTS(2, 6)); break;
    case 2: r = tn_fft_rfft(re, .n = 7); break;
    case 3: r = tn_fft_rfft2(re, .norm = "forward"); break;
    case 4: r = tn_fft_irfft(c, .n = 6); break;
    case 5: r = tn_fft_irfftn(c, .s = TN_INTS(3, 7)); break;
    case 6: r = tn_fft_hfft(c, .dim = 0, .norm = "ortho"); break;
    case 7: r = tn_fft_ihfftn(re, .s = TN_INTS(4, 5)); break;
    case 8: r = tn_fft_hfft2(c); break;
    default: r = tn_fft_fft(re); break;
    }
    if (r && tn_is_complex(r)) r = tn_view_as_real(r);
    return tn_mul(r, tn_sin(r));
}
TEST(gradients) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(3, 4, 2), TN_F64);
    tn_requires_grad_(x, true);
    for (int which = 0; which < 10; which++) {
        if (!tn_gradcheck(grad_fn, &x, 1, &which, .rtol = 1e-4)) fail_at(__LINE__, "gradcheck %d: %s", which, tn_last_error());
        else tn_test_passed++;
        if (!tn_gradgradcheck(grad_fn, &x, 1, &which, .rtol = 1e-4)) fail_at(__LINE__, "gradgradcheck %d: %s", which, tn_last_error());
        else tn_test_passed++;
    }
    /* PyTorch's node names */
    tn_tensor *c = tn_view_as_complex(x);
    CHECK(!strcmp(tn_grad_fn_name(tn_fft_fft(c)), "FftC2CBackward0"));
    CHECK(!strcmp(tn_grad_fn_name(tn_fft_rfft(tn_real(c))), "FftR2CBackward0"));
    tn_tensor *r = tn_fft_irfft(c);
    CHECK(r && !strcmp(tn_grad_fn_name(r), "FftC2RBackward0"));
    tn_scope_end();
}

/* ---- stft / istft ---- */
static tn_tensor *hann(int64_t n) {   /* the periodic Hann window, as torch.hann_window */
    tn_tensor *w = tn_empty(&n, 1, TN_F64);
    for (int64_t k = 0; k < n; k++) ((double *)tn_data_ptr(w))[k] = 0.5 - 0.5 * cos(2 * 3.14159265358979323846 * (double)k / (double)n);
    return w;
}
static tn_tensor *stft_fn(tn_tensor *const *in, int n, void *ctx) {
    (void)n;
    const int which = *(const int *)ctx;
    tn_tensor *w = hann(8), *r;
    if (which == 0) r = tn_view_as_real(tn_stft(in[0], 8, w, .hop_length = 2, .return_complex = 1));
    else if (which == 1) r = tn_view_as_real(tn_stft(in[0], 8, NULL, .hop_length = 3, .win_length = 8, .center = false, .onesided = 0, .return_complex = 1, .normalized = true));
    else r = tn_istft(tn_view_as_complex(tn_view(in[0], TN_SHAPE(5, 9, 2))), 8, w, .hop_length = 2, .length = 14);
    return tn_mul(r, tn_sin(r));
}
TEST(stft_istft) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(2, 40), TN_F64), *w = hann(16);
    tn_tensor *spec = tn_stft(x, 16, w, .hop_length = 4, .return_complex = 1);
    CHECK(spec && tn_get_dtype(spec) == TN_C128 && tn_ndim(spec) == 3 && tn_shape(spec)[1] == 9 && tn_shape(spec)[2] == 11);
    /* frame 5 of the centred signal is x[12:28], windowed */
    CHECK(maxdiff(tn_select(spec, 2, 5), tn_fft_rfft(tn_mul(tn_narrow(x, 1, 12, 16), w))) < 1e-12);
    /* reflect padding: frame 0 is x[8:1:-1] ++ x[0:8] */
    tn_tensor *left = tn_flip(tn_narrow(x, 1, 1, 8), TN_SHAPE(1));
    CHECK(maxdiff(tn_select(spec, 2, 0), tn_fft_rfft(tn_mul(tn_cat(((tn_tensor *[]){left, tn_narrow(x, 1, 0, 8)}), 2, .dim = 1), w))) < 1e-12);
    /* the round trip */
    CHECK(maxdiff(tn_istft(spec, 16, w, .hop_length = 4, .length = 40), x) < 1e-12);
    CHECK(maxdiff(tn_istft(spec, 16, w, .hop_length = 4), x) < 1e-12);   /* center: 11 frames give the 40 points back */
    CHECK(maxdiff(tn_istft(spec, 16, w, .hop_length = 4, .length = 30), tn_narrow(x, 1, 0, 30)) < 1e-12);
    /* 1-d input; return_complex = false gives the real view */
    tn_tensor *s1 = tn_stft(tn_select(x, 0, 1), 16, w, .hop_length = 4, .return_complex = 0);
    CHECK(s1 && tn_ndim(s1) == 3 && tn_get_dtype(s1) == TN_F64 && maxdiff(s1, tn_view_as_real(tn_select(spec, 0, 1))) == 0);
    /* errors */
    CHECK_ERR(tn_stft(x, 16, w), "return_complex parameter be given for real inputs");
    CHECK_ERR(tn_stft(x, 0, NULL, .return_complex = 1), "expected 0 < n_fft");
    CHECK_ERR(tn_stft(x, 8, w, .return_complex = 1), "window tensor of size equal to win_length=8");
    CHECK_ERR(tn_stft(x, 16, w, .pad_mode = "mirror", .return_complex = 1), "Unrecognised padding mode mirror");
    CHECK_ERR(tn_istft(x, 16, w), "complex-valued input");
    CHECK_ERR(tn_istft(spec, 16, tn_zeros(TN_SHAPE(16), TN_F64), .hop_length = 4), "window overlap add min");
    CHECK_ERR(tn_istft(spec, 14, NULL, .hop_length = 4), "n_fft / 2 + 1 when onesided=True");
    CHECK(maxdiff(tn_stft_str(x, 16, w, "hop_length=4, return_complex=True"), spec) == 0);
    /* gradients */
    tn_tensor *xg = tn_randn(TN_SHAPE(2, 12), TN_F64), *sg = tn_randn(TN_SHAPE(5, 9, 2), TN_F64);
    tn_requires_grad_(xg, true);
    tn_requires_grad_(sg, true);
    for (int which = 0; which < 3; which++) {
        tn_tensor *in = which == 2 ? sg : xg;
        if (!tn_gradcheck(stft_fn, &in, 1, &which, .rtol = 1e-4)) fail_at(__LINE__, "stft gradcheck %d: %s", which, tn_last_error());
        else tn_test_passed++;
        if (!tn_gradgradcheck(stft_fn, &in, 1, &which, .rtol = 1e-4)) fail_at(__LINE__, "stft gradgradcheck %d: %s", which, tn_last_error());
        else tn_test_passed++;
    }
    tn_scope_end();
}

int main(void) {
    RUN(fft_ifft_against_the_dft);
    RUN(real_transforms);
    RUN(nd_transforms);
    RUN(empty_and_zero_size);
    RUN(errors);
    RUN(gradients);
    RUN(stft_istft);
    return tn_test_report();
}
