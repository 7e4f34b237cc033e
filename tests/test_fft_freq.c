/* test_fft_freq.c — issue 26, item 2: torch.fft's real-valued functions (src/ops/fft.c):
 * fftfreq, rfftfreq (values PyTorch 1.13 printed, dtypes, the keyword defaults, n = 0 and
 * negative n, errors), fftshift / ifftshift (against rolls, every dim or the given ones,
 * negative and repeated dims, 0-size, non-contiguous input, gradients, errors). The Python
 * side (bindings/python/tests/test_fft.py) compares the package with torch.fft. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double at(tn_tensor *t, int64_t i) { return tn_item(tn_select(t, 0, i)); }

TEST(fftfreq_values) {
    tn_scope_begin();
    tn_tensor *f = tn_fft_fftfreq(5);   /* torch: [0.0, 0.2, 0.4, -0.4, -0.2] float32 */
    CHECK(tn_get_dtype(f) == TN_F32 && tn_numel(f) == 5);
    const float want[5] = {0.0f, 0.2f, 0.4f, -0.4f, -0.2f};
    for (int i = 0; i < 5; i++) CHECK(at(f, i) == (double)want[i]);
    f = tn_fft_fftfreq(4, .d = 0.1, .dtype = TN_F64);   /* [0, 2.5, -5, -2.5] */
    CHECK(tn_get_dtype(f) == TN_F64);
    CHECK(at(f, 0) == 0 && at(f, 1) == 2.5 && at(f, 2) == -5 && at(f, 3) == -2.5);
    f = tn_fft_fftfreq(7, .d = 1 / 3.0, .dtype = TN_F64);   /* k / (7/3) */
    for (int i = 0; i < 7; i++) CHECK(at(f, i) == (double)(i < 4 ? i : i - 7) * (1.0 / (7 * (1 / 3.0))));
    f = tn_fft_rfftfreq(7, .d = 2.0);   /* [0, 1/14, 2/14, 3/14] */
    CHECK(tn_numel(f) == 4);
    for (int i = 0; i < 4; i++) CHECK(at(f, i) == (double)((float)i * (float)(1.0 / 14)));
    f = tn_fft_rfftfreq(8);
    CHECK(tn_numel(f) == 5 && at(f, 4) == 0.5);
    /* float16: computed in float, rounded after (torch: 0.6665 for 2/3) */
    f = tn_fft_fftfreq(6, .d = 0.5, .dtype = TN_F16);
    CHECK(tn_get_dtype(f) == TN_F16 && fabs(at(f, 2) - 0.66650390625) < 1e-12 && at(f, 3) == -1.0);
    f = tn_fft_fftfreq_str(6, "d=0.5, dtype=bfloat16");
    CHECK(f && tn_get_dtype(f) == TN_BF16 && fabs(at(f, 1) - 0.333984375) < 1e-12);
    /* the default dtype follows torch.set_default_dtype */
    tn_set_default_dtype(TN_F64);
    CHECK(tn_get_dtype(tn_fft_fftfreq(3)) == TN_F64);
    tn_set_default_dtype(TN_F32);
    /* edges: n = 0 is empty; d = 0 divides by zero; rfftfreq(0) is [nan], rfftfreq(-1) is [-0.] */
    CHECK(tn_numel(tn_fft_fftfreq(0)) == 0);
    f = tn_fft_fftfreq(3, .d = 0.0);
    CHECK(isnan(at(f, 0)) && isinf(at(f, 1)) && at(f, 1) > 0 && at(f, 2) < 0);
    f = tn_fft_rfftfreq(0);
    CHECK(tn_numel(f) == 1 && isnan(at(f, 0)));
    f = tn_fft_rfftfreq(-1);
    CHECK(tn_numel(f) == 1 && at(f, 0) == 0 && signbit(at(f, 0)));
    tn_scope_end();
}

TEST(fftfreq_errors) {
    CHECK_ERR(tn_fft_fftfreq(-1), "negative dimension -1");
    CHECK_ERR(tn_fft_rfftfreq(-4), "negative dimension -1");
    CHECK_ERR(tn_fft_fftfreq(4, .dtype = TN_I64), "fftfreq requires a floating point or complex dtype");
    CHECK_ERR(tn_fft_rfftfreq(4, .dtype = TN_BOOL), "tn_fft_rfftfreq: fftfreq requires a floating point");
    CHECK_ERR(tn_fft_fftfreq_str(4, "dtype=int32"), "floating point");
    CHECK_ERR(tn_fft_fftfreq_str(4, "n=3"), "n");
}

static double maxdiff(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = tn_numel(a) ? tn_item(tn_max(tn_abs(tn_sub(a, b)))) : 0;
    tn_scope_end();
    return r;
}

TEST(fftshift_values) {
    tn_scope_begin();
    tn_tensor *x = tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4));
    /* torch.fft.fftshift(arange(12).reshape(3, 4)) */
    const float want[12] = {10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5};
    tn_tensor *y = tn_contiguous(tn_fft_fftshift(x));
    CHECK(memcmp(tn_data_ptr(y), want, sizeof want) == 0);
    CHECK(maxdiff(tn_fft_fftshift(x, .dim = TN_INTS(-1, 0)), y) == 0);
    /* ifftshift(dim=1): rows rolled by 2 */
    const float want1[12] = {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9};
    CHECK(memcmp(tn_data_ptr(tn_contiguous(tn_fft_ifftshift(x, .dim = TN_INTS(1)))), want1, sizeof want1) == 0);
    /* a dim given twice rolls twice (torch: fftshift(x, dim=(0, 0)) rolls dim 0 by 2) */
    CHECK(maxdiff(tn_fft_fftshift(x, .dim = TN_INTS(0, 0)), tn_roll(x, (int64_t[]){2}, (int64_t[]){0}, 1)) == 0);
    /* odd sizes: ifftshift undoes fftshift, and they differ; non-contiguous input */
    tn_tensor *z = tn_transpose(tn_reshape(tn_randn(TN_SHAPE(5, 7, 3), TN_F64), TN_SHAPE(5, 21)), 0, 1);
    CHECK(!tn_is_contiguous(z));
    CHECK(maxdiff(tn_fft_ifftshift(tn_fft_fftshift(z)), z) == 0);
    CHECK(maxdiff(tn_fft_fftshift(z), tn_fft_ifftshift(z)) > 0);
    CHECK(maxdiff(tn_fft_fftshift(z, .dim = TN_INTS(-2)), tn_roll(z, (int64_t[]){10}, (int64_t[]){0}, 1)) == 0);
    CHECK(maxdiff(tn_fft_ifftshift(z, .dim = TN_INTS(-2)), tn_roll(z, (int64_t[]){11}, (int64_t[]){0}, 1)) == 0);
    CHECK(maxdiff(tn_fft_fftshift_str(z, "dim=(1,)"), tn_roll(z, (int64_t[]){2}, (int64_t[]){1}, 1)) == 0);
    /* 0-size */
    tn_tensor *e = tn_fft_fftshift(tn_zeros(TN_SHAPE(0, 3), TN_F32));
    CHECK(e && tn_numel(e) == 0 && tn_shape(e)[1] == 3);
    tn_scope_end();
}

static tn_tensor *shift_fn(tn_tensor *const *in, int n, void *ctx) { (void)n; (void)ctx; return tn_mul(tn_fft_fftshift(in[0], .dim = TN_INTS(0)), tn_arange(1, 8, 1, TN_F64)); }
TEST(fftshift_gradients) {
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(7), TN_F64);
    tn_requires_grad_(x, true);
    CHECK(tn_gradcheck(shift_fn, &x, 1, NULL, .rtol = 1e-4));
    CHECK(tn_gradgradcheck(shift_fn, &x, 1, NULL, .rtol = 1e-4));
    tn_scope_end();
}

TEST(fftshift_errors) {
    tn_scope_begin();
    tn_tensor *x = tn_zeros(TN_SHAPE(3, 4), TN_F32);
    CHECK_ERR(tn_fft_fftshift(x, .dim = TN_INTS(2)), "out of range");
    CHECK_ERR(tn_fft_ifftshift(x, .dim = TN_INTS(-3)), "out of range");
    CHECK_ERR(tn_fft_fftshift(tn_scalar_tensor(3.0, TN_F32)), "`shifts` required");
    CHECK_ERR(tn_fft_fftshift(tn_scalar_tensor(3.0, TN_F32), .dim = TN_INTS(0)), "tensor has no dimensions");
    CHECK_ERR(tn_fft_fftshift(NULL), "");
    tn_scope_end();
}

int main(void) {
    RUN(fftfreq_values);
    RUN(fftfreq_errors);
    RUN(fftshift_values);
    RUN(fftshift_gradients);
    RUN(fftshift_errors);
    return tn_test_report();
}
