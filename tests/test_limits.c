/* test_limits.c — sizes, dims and conversions at their limits (issue 18).
 *
 * Every size, byte count and stride product goes through one checked helper: an output
 * whose size overflows int64 (or cannot be allocated) is an error naming the op, never a
 * wrapped byte count that the op then writes past. A shape with a 0 in it is empty and
 * legal whatever its other sizes (PyTorch: torch.zeros(0, 2**62, 2**62)). Ops on 8-d
 * tensors do not need a 9th dim internally. Doubles that become int64 (a size from a
 * scale factor) are range-checked first. Ops refuse dtypes PyTorch refuses (randperm past
 * a dtype's range, softmax of integers).
 *
 * Cases that crashed before their fix run in a forked child (as test_errors.c does), so a
 * crash is one failed check. The empty-but-huge shapes overflowed int64 silently (the
 * wrapped products happened to come out 0): the SANITIZE=1 build (UBSan) is what fails
 * on them without the fix. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdint.h>
#ifdef __unix__
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#endif

/* Under AddressSanitizer a malloc past its maximum size aborts by default; the
   allocation-failure tests need malloc to return NULL as it does without ASan. */
#if defined(__SANITIZE_ADDRESS__)
#define TN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TN_TEST_ASAN 1
#endif
#endif
#ifdef TN_TEST_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

/* expr must give NULL and a message containing both substrings */
#define ERR2(expr, s1, s2) do { tn_clear_error(); tn_tensor *r_ = (expr); const char *m_ = tn_last_error(); \
    CHECK_MSG(!r_ && strstr(m_, s1) && strstr(m_, s2), "%s should fail with \"%s\" + \"%s\", got %s \"%s\"", #expr, s1, s2, \
              r_ ? "success," : "error", m_); } while (0)
#define OK(expr) do { tn_clear_error(); tn_tensor *r_ = (expr); \
    CHECK_MSG(r_ != NULL, "%s should succeed, got \"%s\"", #expr, tn_last_error()); } while (0)

static bool same_shape(const tn_tensor *t, const int64_t *shape, int ndim) {
    return t && tn_ndim(t) == ndim && !memcmp(tn_shape(t), shape, (size_t)ndim * sizeof(int64_t));
}
#define SAME_SHAPE(t, ...) same_shape((t), TN_SHAPE(__VA_ARGS__))


static const int64_t P62 = (int64_t)1 << 62, P40 = (int64_t)1 << 40;

/* the white-box hook (TN_TESTING), bound weakly: a build without it fails its check instead of linking */
#if defined(__GNUC__) || defined(__clang__)
#pragma weak tn__mul_ok_portable
#endif

/* ---------------------------------------------------------------------------------- */
/* the checked product: its portable form (compilers without __builtin_mul_overflow)   */
/* agrees with the exact answer at every edge                                          */
/* ---------------------------------------------------------------------------------- */
TEST(mul_ok_portable_edges) {
    const int64_t v[] = {0, 1, -1, 2, -2, 3, -3, 7, (int64_t)1 << 31, -((int64_t)1 << 31), (int64_t)1 << 32, -((int64_t)1 << 32),
                         3037000499LL, 3037000500LL, -3037000500LL, P62, -P62, INT64_MAX, -INT64_MAX, INT64_MIN, INT64_MAX / 2, INT64_MIN / 2};
    const int n = (int)(sizeof v / sizeof v[0]);
    int wrong = 0;
    bool (*portable)(int64_t, int64_t, int64_t *) = tn__mul_ok_portable;
    CHECK_MSG(portable != NULL, "tn__mul_ok_portable is not in this build");
    if (!portable) return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            /* the exact product through long double (64-bit mantissa: exact for the sign
               and for whether |a*b| passes 2^63, which is all that is compared) */
            long double exact = (long double)v[i] * (long double)v[j];
            bool fits = exact >= -9223372036854775808.0L && exact < 9223372036854775808.0L;
            int64_t r = 12345;
            bool ok = portable(v[i], v[j], &r);
            if (ok != fits || (ok && (long double)r != exact)) {
                if (wrong++ < 5) printf("  tn__mul_ok_portable(%lld, %lld): %d, %lld (expected %d)\n", (long long)v[i], (long long)v[j], ok, (long long)r, fits);
            }
        }
    CHECK_MSG(wrong == 0, "%d of %d products wrong", wrong, n * n);
}

/* ---------------------------------------------------------------------------------- */
/* output sizes that overflow: an error naming the op, before any table or buffer      */
/* ---------------------------------------------------------------------------------- */
TEST(interpolate_huge_size) {
    tn_scope_begin();
    tn_tensor *x = tn_ones(TN_SHAPE(1, 1, 2, 2), TN_F32), *x3 = tn_ones(TN_SHAPE(1, 1, 4), TN_F32);
    const int64_t huge[2] = {P62, P62}, tall[2] = {P62, 2};
    /* the nearest index table was TN_MALLOC(2^62 * 8): 0 bytes, then written */
    ERR2(tn_interpolate(x, .size = TN_INTS(huge[0], huge[1])), "tn_interpolate:", "[1, 1, 4611686018427387904, 4611686018427387904]");
    ERR2(tn_interpolate(x, .size = TN_INTS(tall[0], tall[1])), "tn_interpolate:", "too many elements");
    ERR2(tn_interpolate(x, .size = TN_INTS(huge[0], huge[1]), .mode = "bilinear"), "tn_interpolate:", "too many elements");
    ERR2(tn_interpolate(x3, .size = TN_INTS(P62)), "tn_interpolate:", "[1, 1, 4611686018427387904]");
    ERR2(tn_interpolate(x3, .size = TN_INTS(P62), .mode = "linear", .align_corners = true), "tn_interpolate:", "too many elements");
    /* sizes that fit still work, with PyTorch's values */
    const int64_t four[2] = {4, 4};
    tn_tensor *y = tn_interpolate(tn_reshape(tn_arange(0, 4, 1, TN_F32), TN_SHAPE(1, 1, 2, 2)), .size = TN_INTS(four[0], four[1]));
    CHECK(SAME_SHAPE(y, 1, 1, 4, 4));
    if (y) { const float *p = (const float *)tn_data_ptr(tn_contiguous(y)); CHECK(p[0] == 0 && p[1] == 0 && p[2] == 1 && p[3] == 1 && p[8] == 2 && p[15] == 3); }
    tn_scope_end();
}

TEST(interpolate_scale_factor_out_of_range) {
    tn_scope_begin();
    tn_tensor *x = tn_ones(TN_SHAPE(1, 1, 2, 2), TN_F32);
    /* floor(2 * 1e300) converted to int64 was undefined behaviour (x86: INT64_MIN) */
    const double big[2] = {1e300, 1e300}, inf[2] = {INFINITY, INFINITY}, nan2[2] = {NAN, NAN}, just[2] = {4.7e18, 1};
    ERR2(tn_interpolate(x, .scale_factor = TN_DOUBLES(big[0], big[1])), "tn_interpolate:", "out of the range of int64");
    ERR2(tn_interpolate(x, .scale_factor = TN_DOUBLES(big[0], big[1]), .mode = "bilinear"), "tn_interpolate:", "out of the range of int64");
    ERR2(tn_interpolate(x, .scale_factor = TN_DOUBLES(inf[0], inf[1])), "tn_interpolate:", "out of the range of int64");
    ERR2(tn_interpolate(x, .scale_factor = TN_DOUBLES(nan2[0], nan2[1])), "tn_interpolate:", "scale_factor must be positive");
    /* 2 * 4.7e18 does not fit int64 either; 2 * 2^61 = 2^62 fits but is too large an output */
    ERR2(tn_interpolate(x, .scale_factor = TN_DOUBLES(just[0], just[1])), "tn_interpolate:", "out of the range of int64");
    const double p61[2] = {2305843009213693952.0, 1};
    ERR2(tn_interpolate(x, .scale_factor = TN_DOUBLES(p61[0], p61[1])), "tn_interpolate:", "too many elements");
    const double two[2] = {2, 2};
    tn_tensor *y = tn_interpolate(x, .scale_factor = TN_DOUBLES(two[0], two[1]));
    CHECK(SAME_SHAPE(y, 1, 1, 4, 4));
    tn_scope_end();
}

TEST(adaptive_pool_huge_output) {
    tn_scope_begin();
    tn_tensor *x = tn_ones(TN_SHAPE(1, 1, 2, 2), TN_F32), *idx = NULL;
    /* the window table was TN_MALLOC(2 * (2^62 + 2) * 8): 32 bytes, then written */
    ERR2(tn_adaptive_max_pool2d(x, P62, 2, NULL), "tn_adaptive_max_pool2d:", "[1, 1, 4611686018427387904, 2]");
    ERR2(tn_adaptive_max_pool2d(x, P62, 2, &idx), "tn_adaptive_max_pool2d:", "too many elements");
    CHECK(idx == NULL);
    ERR2(tn_adaptive_max_pool2d(x, 2, P62, NULL), "tn_adaptive_max_pool2d:", "too many elements");
    /* adaptive_max_pool1d(x, 2**62) is the 2-d one with a unit height */
    ERR2(tn_adaptive_max_pool2d(tn_ones(TN_SHAPE(1, 1, 1, 4), TN_F32), 1, P62, NULL), "tn_adaptive_max_pool2d:", "too many elements");
    ERR2(tn_adaptive_avg_pool2d(x, P62, 2), "tn_adaptive_avg_pool2d:", "too many elements");
    /* 2^40 outputs of 1 x 1 fit int64 but not (out + 1) * in of the window table */
    ERR2(tn_adaptive_max_pool2d(tn_ones(TN_SHAPE(1, 1, 1 << 24, 1), TN_F32), P40, 1, NULL), "tn_adaptive_max_pool2d:", "too large");
    /* ordinary sizes: PyTorch's windows */
    tn_tensor *v = tn_reshape(tn_arange(0, 16, 1, TN_F32), TN_SHAPE(1, 1, 4, 4));
    tn_tensor *y = tn_adaptive_max_pool2d(v, 3, 2, &idx);
    CHECK(SAME_SHAPE(y, 1, 1, 3, 2));
    if (y && idx) {
        const float *p = (const float *)tn_data_ptr(tn_contiguous(y));
        const int64_t *q = (const int64_t *)tn_data_ptr(tn_contiguous(idx));
        CHECK(p[0] == 5 && p[1] == 7 && p[2] == 9 && p[3] == 11 && p[4] == 13 && p[5] == 15);
        CHECK(q[0] == 5 && q[5] == 15);
    }
    tn_scope_end();
}

/* im2col's column count C * kh * kw and col2im's window count were unchecked products */
TEST(im2col_col2im_overflow) {
    tn_scope_begin();
    const int64_t big = INT32_MAX, k[2] = {big, 1}, d[2] = {1, 1}, p[2] = {big / 2, 0}, s[2] = {1, 1};
    /* C = 2^33 channels (an expanded view: no memory) times a 2^31 - 1 kernel: 2^64 rows */
    tn_tensor *x = tn_expand(tn_ones(TN_SHAPE(1, 1, 1, 1), TN_F32), TN_SHAPE(1, (int64_t)1 << 33, 1, 1));
    ERR2(tn_im2col(x, k, d, p, s), "tn_im2col:", "overflow");
    const int64_t os[2] = {INT64_MAX, 1}, k1[2] = {1, 1}, p0[2] = {0, 0};
    ERR2(tn_col2im(tn_ones(TN_SHAPE(1, 1, 1), TN_F32), os, k1, d, p0, s), "tn_col2im:", "is too large");
    /* ordinary sizes still work */
    const int64_t k2[2] = {2, 2};
    tn_tensor *c = tn_im2col(tn_reshape(tn_arange(0, 9, 1, TN_F32), TN_SHAPE(1, 1, 3, 3)), k2, d, p0, s);
    CHECK(SAME_SHAPE(c, 1, 4, 4));
    if (c) { const float *q = (const float *)tn_data_ptr(tn_contiguous(c)); CHECK(q[0] == 0 && q[1] == 1 && q[3] == 4 && q[15] == 8); }
    tn_scope_end();
}

/* ---------------------------------------------------------------------------------- */
/* empty tensors with huge sizes: legal, numel 0, no int64 overflow anywhere           */
/* ---------------------------------------------------------------------------------- */
TEST(empty_with_huge_sizes) {
    tn_scope_begin();
    const int64_t shapes[3][3] = {{P40, P40, 0}, {0, P62, P62}, {P62, 0, P62}};
    for (int i = 0; i < 3; i++) {
        tn_tensor *z = tn_zeros(shapes[i], 3, TN_F32);
        CHECK_MSG(z != NULL, "tn_zeros(%s): %s", i == 0 ? "[2^40, 2^40, 0]" : i == 1 ? "[0, 2^62, 2^62]" : "[2^62, 0, 2^62]", tn_last_error());
        if (!z) continue;
        CHECK(tn_numel(z) == 0 && tn_is_contiguous(z));
        tn_tensor *c = tn_clone(z), *e = tn_empty(shapes[i], 3, TN_F64);
        CHECK(c && tn_numel(c) == 0 && tn_is_contiguous(c) && e && tn_numel(e) == 0);
        tn_tensor *s = tn_sum(z);
        CHECK(s && tn_item(s) == 0);
        tn_tensor *f = tn_reshape(z, TN_SHAPE(-1));
        CHECK(SAME_SHAPE(f, 0));
        tn_tensor *a = tn_add(z, z);
        CHECK(a && tn_numel(a) == 0 && same_shape(a, shapes[i], 3));
        tn_tensor *t = tn_contiguous(tn_transpose(z, 0, 2));
        CHECK(t && tn_numel(t) == 0);
    }
    /* reductions over a kept huge dim and reshapes between empty shapes */
    tn_tensor *z = tn_zeros(shapes[1], 3, TN_F32);
    CHECK(SAME_SHAPE(tn_sum_dims(z, TN_SHAPE(1)), 0, P62));
    CHECK(SAME_SHAPE(tn_reshape(z, TN_SHAPE(P62, 0, P62)), P62, 0, P62));
    CHECK(SAME_SHAPE(tn_unsqueeze(z, 3), 0, P62, P62, 1));
    CHECK(SAME_SHAPE(tn_select(tn_zeros(shapes[2], 3, TN_F32), 0, P62 - 1), 0, P62));
    /* saving writes numel * 8 = 0 bytes; loading gives the shape back */
    tn_dict *d = tn_dict_new();
    tn_dict_set(d, "z", z);
    const char *path = "build/test_limits_empty.safetensors";
    CHECK(tn_safetensors_save(path, d) == 0);
    tn_dict_free(d);
    tn_dict *back = tn_safetensors_load(path);
    tn_tensor *zb = back ? tn_dict_get(back, "z") : NULL;
    CHECK(zb && same_shape(zb, shapes[1], 3) && tn_numel(zb) == 0 && tn_is_contiguous(zb));
    tn_dict_free(back);
    remove(path);
    /* non-empty shapes whose element count overflows stay errors */
    ERR2(tn_zeros(TN_SHAPE(P40, P40, 1), TN_F32), "tn_zeros:", "too many elements");
    ERR2(tn_zeros(TN_SHAPE(3, P62, P62), TN_F32), "tn_zeros:", "too many elements");
    tn_scope_end();
}

/* ---------------------------------------------------------------------------------- */
/* 8-d tensors: ops that grew a 9th dim internally                                     */
/* ---------------------------------------------------------------------------------- */
TEST(repeat_8d) {
    tn_scope_begin();
    /* a failed unsqueeze (9 dims) was dereferenced: a crash */
    tn_tensor *r = tn_repeat(tn_ones(TN_SHAPE(1, 1, 1, 1, 1, 1, 1, 1), TN_F32), TN_SHAPE(1, 1, 1, 1, 1, 1, 2, 2));
    CHECK_MSG(SAME_SHAPE(r, 1, 1, 1, 1, 1, 1, 2, 2), "repeat: %s", tn_last_error());
    CHECK(r && tn_item(tn_sum(r)) == 4);
    /* values: x[a, 0, 0, 0, 0, 0, 0, c] = 3a + c, repeated (2, 1, .., 1, 2, 1) */
    tn_tensor *x = tn_reshape(tn_arange(0, 6, 1, TN_I64), TN_SHAPE(2, 1, 1, 1, 1, 1, 1, 3));
    r = tn_repeat(x, TN_SHAPE(2, 1, 1, 1, 1, 1, 2, 1));
    CHECK(SAME_SHAPE(r, 4, 1, 1, 1, 1, 1, 2, 3));
    if (r) {
        const int64_t *p = (const int64_t *)tn_data_ptr(tn_contiguous(r));
        int bad = 0;
        for (int a = 0; a < 4; a++) for (int b = 0; b < 2; b++) for (int c = 0; c < 3; c++)
            bad += p[(a * 2 + b) * 3 + c] != (a % 2) * 3 + c;
        CHECK_MSG(bad == 0, "%d repeated values wrong", bad);
    }
    /* a leading new dim on a 7-d tensor makes 8 */
    r = tn_repeat(tn_ones(TN_SHAPE(1, 1, 1, 1, 1, 1, 2), TN_F32), TN_SHAPE(3, 1, 1, 1, 1, 1, 1, 2));
    CHECK(SAME_SHAPE(r, 3, 1, 1, 1, 1, 1, 1, 4) && tn_item(tn_sum(r)) == 12);
    /* gradients: each input element receives the number of its copies */
    tn_tensor *w = tn_ones(TN_SHAPE(1, 1, 1, 1, 1, 1, 1, 2), TN_F64);
    tn_requires_grad_(w, true);
    tn_tensor *rw = tn_repeat(w, TN_SHAPE(1, 1, 1, 1, 1, 1, 3, 2));
    CHECK(rw && tn_backward(tn_sum(rw)) == 0 && tn_grad(w) && tn_item(tn_sum(tn_grad(w))) == 12 && tn_item(tn_amax(tn_grad(w), NULL, 0)) == 6);
    /* empty results and the repeat of an empty tensor */
    CHECK(SAME_SHAPE(tn_repeat(x, TN_SHAPE(1, 1, 1, 1, 1, 1, 0, 1)), 2, 1, 1, 1, 1, 1, 0, 3));
    CHECK(SAME_SHAPE(tn_repeat(tn_zeros(TN_SHAPE(0, P62), TN_F32), TN_SHAPE(P62, 0, 1)), P62, 0, P62));
    tn_scope_end();
}

/* bilinear and pixel_shuffle grew 1 and 2 dims internally: 8-d inputs failed */
TEST(bilinear_pixel_shuffle_8d) {
    tn_scope_begin();
    const int64_t s8[8] = {2, 1, 1, 1, 1, 1, 3, 4}, s8b[8] = {2, 1, 1, 1, 1, 1, 3, 5};
    tn_tensor *x1 = tn_randn(s8, 8, TN_F64), *x2 = tn_randn(s8b, 8, TN_F64), *w = tn_randn(TN_SHAPE(6, 4, 5), TN_F64), *b = tn_randn(TN_SHAPE(6), TN_F64);
    tn_tensor *y = tn_bilinear(x1, x2, w, b);
    CHECK_MSG(SAME_SHAPE(y, 2, 1, 1, 1, 1, 1, 3, 6), "bilinear: %s", tn_last_error());
    /* the same as the 2-d form of the same rows */
    tn_tensor *y2 = tn_bilinear(tn_reshape(x1, TN_SHAPE(6, 4)), tn_reshape(x2, TN_SHAPE(6, 5)), w, b);
    CHECK(y && y2 && tn_item(tn_amax(tn_abs(tn_sub(tn_reshape(y, TN_SHAPE(6, 6)), y2)), NULL, 0)) < 1e-12);
    /* pixel_shuffle of a 7-d and an 8-d input: the 4-d result per leading index */
    tn_tensor *p4 = tn_reshape(tn_arange(0, 2 * 8 * 9, 1, TN_F32), TN_SHAPE(2, 8, 3, 3));
    tn_tensor *p8 = tn_reshape(p4, (const int64_t[]){2, 1, 1, 1, 1, 8, 3, 3}, 8);
    tn_tensor *q8 = tn_pixel_shuffle(p8, 2), *q4 = tn_pixel_shuffle(p4, 2);
    CHECK_MSG(SAME_SHAPE(q8, 2, 1, 1, 1, 1, 2, 6, 6), "pixel_shuffle: %s", tn_last_error());
    CHECK(q8 && q4 && tn_item(tn_sum(tn_abs(tn_sub(tn_reshape(q8, TN_SHAPE(2, 2, 6, 6)), q4)))) == 0);
    tn_tensor *u7 = tn_pixel_unshuffle(tn_reshape(q4, (const int64_t[]){2, 1, 1, 1, 2, 6, 6}, 7), 2);
    CHECK_MSG(SAME_SHAPE(u7, 2, 1, 1, 1, 8, 3, 3), "pixel_unshuffle: %s", tn_last_error());
    CHECK(u7 && tn_item(tn_sum(tn_abs(tn_sub(tn_reshape(u7, TN_SHAPE(2, 8, 3, 3)), p4)))) == 0);
    tn_scope_end();
}

/* sizes computed from the caller's factors: checked products, errors naming the op */
TEST(factor_products_overflow) {
    tn_scope_begin();
    tn_tensor *x = tn_ones(TN_SHAPE(1, 4, 2, 2), TN_F32);
    /* r * r wrapped to 0 for r = 2^32: C % 0 divided by zero */
    ERR2(tn_pixel_shuffle(x, (int64_t)1 << 32), "tn_pixel_shuffle:", "too large");
    ERR2(tn_pixel_unshuffle(x, (int64_t)1 << 32), "tn_pixel_unshuffle:", "");
    ERR2(tn_pixel_shuffle(x, (int64_t)1 << 62), "tn_pixel_shuffle:", "too large");
    /* a transposed convolution's (in - 1) * stride: 2^40 positions (an expanded view) times 2^30 */
    tn_tensor *big = tn_expand(tn_ones(TN_SHAPE(1, 1, 1), TN_F32), TN_SHAPE(1, 1, P40));
    ERR2(tn_conv_transpose1d(big, tn_ones(TN_SHAPE(1, 1, 1), TN_F32), NULL, .stride = (int64_t)1 << 30), "tn_conv_transpose1d:", "past int64");
    /* overlapping windows of an expanded view outnumber int64 */
    tn_tensor *line = tn_expand(tn_ones(TN_SHAPE(1), TN_F32), TN_SHAPE(P40));
    ERR2(tn_unfold(line, 0, (int64_t)1 << 39, 1), "tn_unfold:", "too many elements");
    CHECK(SAME_SHAPE(tn_unfold(line, 0, 4, 1 << 20), (int64_t)1 << 20, 4));   /* (2^40 - 4) / 2^20 + 1 windows */
    /* groups times in_channels/groups in a convolution's check */
    ERR2(tn_conv2d(x, tn_ones(TN_SHAPE(0, (int64_t)1 << 40, 1, 1), TN_F32), NULL, .groups = (int64_t)1 << 40), "tn_conv2d:", "channels");
    tn_scope_end();
}

/* views and nn ops on empty tensors whose other sizes are huge: offsets, strides and
   grouped sizes stayed in int64 only by luck (UBSan reported them) */
TEST(empty_huge_views_and_layers) {
    tn_scope_begin();
    tn_tensor *z = tn_zeros(TN_SHAPE(P40, 0, P40), TN_F32);
    CHECK(SAME_SHAPE(tn_select(z, 0, P40 - 1), 0, P40));          /* (2^40 - 1) * 2^40 was the offset */
    CHECK(SAME_SHAPE(tn_narrow(z, 2, P40 - 2, 2), P40, 0, 2));
    CHECK(SAME_SHAPE(tn_slice(z, 0, 1, P40, (int64_t)1 << 30), 1 << 10, 0, P40));
    CHECK(SAME_SHAPE(tn_unsqueeze(z, 1), P40, 1, 0, P40));
    CHECK(SAME_SHAPE(tn_flip(z, TN_SHAPE(0, 2)), P40, 0, P40));
    CHECK(SAME_SHAPE(tn_cat(((tn_tensor *[]){z, z}), 2), 2 * P40, 0, P40));
    CHECK(SAME_SHAPE(tn_pad(z, TN_SHAPE(1, 1)), P40, 0, P40 + 2));
    CHECK(SAME_SHAPE(tn_cumsum(z, 2), P40, 0, P40));
    CHECK(SAME_SHAPE(tn_mean_dims(z, TN_SHAPE(0, 2)), 0));
    CHECK(SAME_SHAPE(tn_flatten(z, .end_dim = 1), 0, P40));
    /* 2^80 as one size (PyTorch wraps it to 0) */
    ERR2(tn_flatten(tn_zeros(TN_SHAPE(0, P40, P40), TN_F32), .start_dim = 1, .end_dim = 2), "tn_flatten:", "overflows int64");
    /* the layers multiply sizes in groups: refused, never overflowed */
    tn_tensor *img = tn_zeros(TN_SHAPE(0, 1, P40, P40), TN_F32);
    ERR2(tn_max_pool2d(img, 2, .stride = 2), "tn_max_pool2d:", "multiply past int64");
    ERR2(tn_conv2d(img, tn_ones(TN_SHAPE(1, 1, 1, 1), TN_F32), NULL), "tn_conv2d:", "multiply past int64");
    /* and an ordinary empty batch still works */
    CHECK(SAME_SHAPE(tn_max_pool2d(tn_zeros(TN_SHAPE(0, 1, 4, 4), TN_F32), 2, .stride = 2), 0, 1, 2, 2));
    tn_scope_end();
}

/* ---------------------------------------------------------------------------------- */
/* dtype ranges PyTorch enforces                                                       */
/* ---------------------------------------------------------------------------------- */
TEST(randperm_dtype_range) {
    tn_scope_begin();
    /* 300 values cannot be distinct in uint8: PyTorch raises */
    ERR2(tn_randperm(300, TN_U8, NULL), "tn_randperm:", "uint8_t without overflow");
    ERR2(tn_randperm(257, TN_U8, NULL), "tn_randperm:", "n = 257");
    ERR2(tn_randperm(3, TN_BOOL, NULL), "tn_randperm:", "not implemented for 'Bool'");
    ERR2(tn_randperm(((int64_t)1 << 24) + 2, TN_F32, NULL), "tn_randperm:", "2^24+1 for Float");
    /* 256 fits: every value once */
    tn_tensor *p = tn_randperm(256, TN_U8, NULL);
    CHECK(p && tn_numel(p) == 256 && tn_get_dtype(p) == TN_U8);
    if (p) {
        int seen[256] = {0}, dup = 0;
        const uint8_t *v = (const uint8_t *)tn_data_ptr(p);
        for (int i = 0; i < 256; i++) dup += seen[v[i]]++ != 0;
        CHECK(dup == 0);
    }
    tn_tensor *q = tn_randperm(300, TN_I32, NULL);
    CHECK(q && tn_item(tn_sum(q)) == 300 * 299 / 2);
    tn_scope_end();
}

TEST(softmax_integer_input) {
    tn_scope_begin();
    /* PyTorch has no integer softmax kernel (the result was float32 before) */
    tn_tensor *i1 = tn_ones(TN_SHAPE(3), TN_I64), *i2 = tn_ones(TN_SHAPE(3, 2), TN_I64);
    ERR2(tn_softmax(i1, 0), "tn_softmax:", "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
    ERR2(tn_log_softmax(i1, -1), "tn_log_softmax:", "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'");
    ERR2(tn_softmax(i2, 0), "tn_softmax:", "\"softmax_kernel_impl\" not implemented for 'Long'");
    ERR2(tn_softmax(i2, 1), "tn_softmax:", "softmax_lastdim_kernel_impl");
    ERR2(tn_softmax(tn_ones(TN_SHAPE(3), TN_I32), 0), "tn_softmax:", "'Int'");
    ERR2(tn_softmax(tn_ones(TN_SHAPE(3), TN_U8), 0), "tn_softmax:", "'Byte'");
    ERR2(tn_softmax(tn_ones(TN_SHAPE(3), TN_BOOL), 0), "tn_softmax:", "'Bool'");
    ERR2(tn_softmax(tn_ones(NULL, 0, TN_I64), 0), "tn_softmax:", "lastdim");
    ERR2(tn_softmax(i2, 2), "tn_softmax:", "dim 2 out of range");   /* the dim is checked first, as PyTorch */
    /* an empty integer input returns before the kernel: empty, of its dtype */
    tn_tensor *e = tn_softmax(tn_ones(TN_SHAPE(0), TN_I64), 0);
    CHECK(e && tn_numel(e) == 0 && tn_get_dtype(e) == TN_I64);
    /* converted first (softmax(x, dtype=...)) it works */
    tn_tensor *s = tn_softmax(tn_to_dtype(i1, TN_F32), 0);
    CHECK(s && fabs(tn_item(tn_sum(s)) - 1) < 1e-6);
    tn_scope_end();
}

int main(void) {
    RUN(mul_ok_portable_edges);
    RUN_ISOLATED(interpolate_huge_size, 60);
    RUN_ISOLATED(interpolate_scale_factor_out_of_range, 60);
    RUN_ISOLATED(adaptive_pool_huge_output, 60);
    RUN_ISOLATED(im2col_col2im_overflow, 60);
    RUN_ISOLATED(empty_with_huge_sizes, 60);
    RUN_ISOLATED(repeat_8d, 60);
    RUN_ISOLATED(bilinear_pixel_shuffle_8d, 60);
    RUN_ISOLATED(factor_products_overflow, 60);
    RUN_ISOLATED(empty_huge_views_and_layers, 60);
    RUN(randperm_dtype_range);
    RUN(softmax_integer_input);
    return tn_test_report();
}
