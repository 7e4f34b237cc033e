/* Half precision (float16, bfloat16) on the CPU and autocast: the conversions bit for bit
   (the 65536 patterns both ways, the rounding boundaries), ops computed in float32 and
   rounded once, float32 accumulation, backward in half dtypes, autocast's op lists, the
   "not on CUDA yet" refusal. tests/bindings test_half.py checks the same against PyTorch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static float bits_f(uint32_t w) { float f; memcpy(&f, &w, 4); return f; }
static uint32_t f_bits(float f) { uint32_t w; memcpy(&w, &f, 4); return w; }

TEST(float16_known_values) {
    CHECK(tn_float_to_half(1.0f) == 0x3C00);
    CHECK(tn_float_to_half(-2.0f) == 0xC000);
    CHECK(tn_float_to_half(65504.0f) == 0x7BFF);
    CHECK(tn_float_to_half(65519.99f) == 0x7BFF);     /* below the halfway point to 65536: max */
    CHECK(tn_float_to_half(65520.0f) == 0x7C00);      /* the halfway point rounds (to even) to inf */
    CHECK(tn_float_to_half(bits_f(0x33800000)) == 0x0001);   /* 2^-24: the smallest subnormal */
    CHECK(tn_float_to_half(bits_f(0x33000000)) == 0x0000);   /* 2^-25: a tie, to even (0) */
    CHECK(tn_float_to_half(bits_f(0x33000001)) == 0x0001);   /* just above the tie */
    CHECK(tn_float_to_half(bits_f(0x33C00000)) == 0x0002);   /* 1.5 * 2^-24: a tie, to even (2) */
    CHECK(tn_float_to_half(-0.0f) == 0x8000);
    CHECK(tn_float_to_half(INFINITY) == 0x7C00 && tn_float_to_half(-INFINITY) == 0xFC00);
    CHECK(tn_float_to_half(NAN) == 0x7E00 && tn_float_to_half(-NAN) == 0xFE00);
    CHECK(tn_float_to_half(1e-10f) == 0 && tn_float_to_half(1e10f) == 0x7C00);
    /* 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even (1); 1 + 3 * 2^-11 goes up */
    CHECK(tn_float_to_half(1.0f + 0x1p-11f) == 0x3C00 && tn_float_to_half(1.0f + 3 * 0x1p-11f) == 0x3C02);
    CHECK(tn_half_to_float(0x0001) == 0x1p-24f && tn_half_to_float(0x03FF) == 0x3FFp-24f && tn_half_to_float(0x7BFF) == 65504.0f);
    CHECK(isinf(tn_half_to_float(0x7C00)) && isnan(tn_half_to_float(0x7E01)) && f_bits(tn_half_to_float(0x8000)) == 0x80000000u);
}

TEST(bfloat16_known_values) {
    CHECK(tn_float_to_bfloat16(1.0f) == 0x3F80);
    CHECK(tn_float_to_bfloat16(bits_f(0x3F808000)) == 0x3F80);   /* tie: to even */
    CHECK(tn_float_to_bfloat16(bits_f(0x3F818000)) == 0x3F82);   /* tie: to even (up) */
    CHECK(tn_float_to_bfloat16(bits_f(0x3F808001)) == 0x3F81);
    CHECK(tn_float_to_bfloat16(bits_f(0x7F7FFFFF)) == 0x7F80);   /* FLT_MAX rounds to inf */
    CHECK(tn_float_to_bfloat16(bits_f(0x00000001)) == 0x0000);   /* float32 subnormals keep their top bits */
    CHECK(tn_float_to_bfloat16(bits_f(0x00018000)) == 0x0002);
    CHECK(tn_float_to_bfloat16(NAN) == 0xFFFF);                  /* PyTorch's tensor conversion */
    CHECK(tn_bfloat16_to_float(0x3F80) == 1.0f && tn_bfloat16_to_float(0xFF80) == -INFINITY);
}

/* Every pattern: half -> float -> half is the identity (NaNs stay NaNs), and the float is the
   exact value (checked against the pattern's definition for float16). */
TEST(all_bit_patterns_round_trip) {
    int bad16 = 0, bad_bf = 0, bad_val = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float f = tn_half_to_float((uint16_t)h), b = tn_bfloat16_to_float((uint16_t)h);
        const bool nan16 = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
        if (nan16 ? !isnan(f) || (tn_float_to_half(f) & 0x7E00) != 0x7E00 : tn_float_to_half(f) != h) bad16++;
        if (isnan(b) ? tn_float_to_bfloat16(b) != 0xFFFF : tn_float_to_bfloat16(b) != h) bad_bf++;
        const int e = (int)(h >> 10 & 0x1F), m = (int)(h & 0x3FF);
        const double want = (h & 0x8000 ? -1 : 1) * (e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25));
        if (!(f == want || (isnan(f) && isnan(want)))) bad_val++;
    }
    CHECK_MSG(bad16 == 0, "%d float16 patterns do not round-trip", bad16);
    CHECK_MSG(bad_bf == 0, "%d bfloat16 patterns do not round-trip", bad_bf);
    CHECK_MSG(bad_val == 0, "%d float16 patterns convert to the wrong float", bad_val);
    /* the tensor conversions are the scalar ones, for every pattern and strided */
    static uint16_t bits[65536];
    for (uint32_t h = 0; h < 65536; h++) bits[h] = (uint16_t)h;
    tn_scope_begin();
    for (int bf = 0; bf < 2; bf++) {
        tn_tensor *t = tn_from_data(bits, TN_SHAPE(256, 256), bf ? TN_BF16 : TN_F16);
        tn_tensor *f = tn_to_dtype(tn_t(t), TN_F32), *back = tn_to_dtype(f, bf ? TN_BF16 : TN_F16);
        const float *fp = (const float *)tn_data_ptr(f);
        const uint16_t *bp = (const uint16_t *)tn_data_ptr(back);
        int bad = 0;
        for (int i = 0; i < 256; i++) for (int j = 0; j < 256; j++) {
            const uint16_t h = bits[j * 256 + i];
            const float want = bf ? tn_bfloat16_to_float(h) : tn_half_to_float(h);
            const uint16_t want_back = bf ? tn_float_to_bfloat16(want) : tn_float_to_half(want);
            if (f_bits(fp[i * 256 + j]) != f_bits(want) && !(isnan(want) && isnan(fp[i * 256 + j]))) bad++;
            if (bp[i * 256 + j] != want_back) bad++;
        }
        CHECK_MSG(bad == 0, "%s: %d strided tensor conversions differ from the scalar ones", bf ? "bfloat16" : "float16", bad);
    }
    tn_scope_end();
}

/* float64 and integers convert through float32, as c10 does */
TEST(conversions_through_float) {
    tn_scope_begin();
    const double v[4] = {1.0 + 0x1p-11 + 0x1p-40, 300.7, -2.5, 1e6};
    tn_tensor *d = tn_from_data(v, TN_SHAPE(4), TN_F64), *h = tn_to_dtype(d, TN_F16);
    const uint16_t *hp = (const uint16_t *)tn_data_ptr(h);
    for (int i = 0; i < 4; i++) CHECK(hp[i] == tn_float_to_half((float)v[i]));
    tn_tensor *i64 = tn_to_dtype(h, TN_I64);
    CHECK(((const int64_t *)tn_data_ptr(i64))[1] == 300 && ((const int64_t *)tn_data_ptr(i64))[2] == -2);
    CHECK(tn_item(tn_select(tn_to_dtype(tn_arange(2049, 2050, 1, TN_I64), TN_F16), 0, 0)) == 2048);   /* 2049 rounds to even */
    tn_scope_end();
}

/* an op in half precision is the float32 op on the converted inputs, rounded once */
static bool same_as_float32(tn_tensor *got, tn_tensor *want32) {
    tn_tensor *w = tn_to_dtype(want32, got->dtype);
    return w && tn_equal(got, w);
}

TEST(ops_compute_in_float32) {
    tn_scope_begin();
    tn_manual_seed(0);
    for (int bf = 0; bf < 2; bf++) {
        const tn_dtype dt = bf ? TN_BF16 : TN_F16;
        tn_tensor *a = tn_to_dtype(tn_randn(TN_SHAPE(4, 6), TN_F32), dt), *b = tn_to_dtype(tn_randn(TN_SHAPE(6), TN_F32), dt);
        tn_tensor *at = tn_t(tn_to_dtype(tn_randn(TN_SHAPE(6, 4), TN_F32), dt));   /* non-contiguous */
        tn_tensor *a32 = tn_to_dtype(a, TN_F32), *b32 = tn_to_dtype(b, TN_F32), *at32 = tn_to_dtype(at, TN_F32);
        tn_tensor *r = tn_add(a, b);                                   /* broadcast */
        CHECK(r->dtype == dt && same_as_float32(r, tn_add(a32, b32)));
        CHECK(same_as_float32(tn_mul(at, a), tn_mul(at32, a32)));
        CHECK(same_as_float32(tn_exp(at), tn_exp(at32)));
        CHECK(same_as_float32(tn_tanh(a), tn_tanh(a32)));
        CHECK(same_as_float32(tn_div_scalar(a, 3), tn_div_scalar(a32, 3)));
        CHECK(same_as_float32(tn_softmax(a, -1), tn_softmax(a32, -1)));
        CHECK(same_as_float32(tn_sum_dims(a, TN_DIMS(1)), tn_sum_dims(a32, TN_DIMS(1))));
        CHECK(same_as_float32(tn_mean(a), tn_mean(a32)));             /* sum and divide in float32, rounded once */
        CHECK(same_as_float32(tn_matmul(a, tn_t(a)), tn_matmul(a32, tn_t(a32))));
        CHECK(same_as_float32(tn_amax(at, TN_DIMS(0)), tn_amax(at32, TN_DIMS(0))));
        tn_tensor *g = tn_gt_scalar(a, 0);
        CHECK(g->dtype == TN_BOOL && tn_equal(g, tn_gt_scalar(a32, 0)));
        /* promotion: half with float32 is float32, with an integer or a Python float it stays half */
        CHECK(tn_add(a, a32)->dtype == TN_F32 && tn_add(a, tn_ones(TN_SHAPE(6), TN_I64))->dtype == dt);
        CHECK(tn_mul_scalar(a, 2.5)->dtype == dt && tn_add(tn_to_dtype(a, TN_F16), tn_to_dtype(a, TN_BF16))->dtype == TN_F32);
        CHECK(tn_promote_types(dt, TN_I64) == dt && tn_promote_types(dt, TN_F64) == TN_F64);
        /* float32 accumulation: 4096 ones sum exactly (a float16 accumulator stops at 2048) */
        CHECK(tn_item(tn_sum(tn_ones(TN_SHAPE(4096), dt))) == 4096);
        /* 0-d and empty */
        CHECK(tn_item(tn_mul_scalar(tn_full(NULL, 0, 1.5, dt), 2)) == 3);
        CHECK(tn_numel(tn_exp(tn_zeros(TN_SHAPE(0, 3), dt))) == 0);
    }
    tn_scope_end();
}

TEST(backward_in_half) {
    tn_scope_begin();
    tn_manual_seed(1);
    tn_tensor *x = tn_to_dtype(tn_randn(TN_SHAPE(3, 5), TN_F32), TN_F16), *w = tn_to_dtype(tn_randn(TN_SHAPE(4, 5), TN_F32), TN_F16);
    tn_requires_grad_(x, true);
    tn_requires_grad_(w, true);
    tn_tensor *y = tn_linear(x, w, NULL);
    CHECK(y->dtype == TN_F16);
    CHECK(tn_backward(tn_sum(tn_exp(y))) == 0);
    tn_tensor *gx = tn_grad(x), *gw = tn_grad(w);
    CHECK(gx && gx->dtype == TN_F16 && gw && gw->dtype == TN_F16);
    /* the same chain in float32 on the same values, rounded: within a few half ulps */
    tn_tensor *x32 = tn_to_dtype(tn_detach(x), TN_F32), *w32 = tn_to_dtype(tn_detach(w), TN_F32);
    tn_tensor *gy = tn_exp(tn_to_dtype(tn_detach(y), TN_F32));
    tn_tensor *want = tn_matmul(gy, w32);
    CHECK(tn_allclose(tn_to_dtype(gx, TN_F32), want, .rtol = 1e-2, .atol = 1e-2));
    CHECK(tn_allclose(tn_to_dtype(gw, TN_F32), tn_matmul(tn_t(gy), x32), .rtol = 1e-2, .atol = 1e-2));
    tn_scope_end();
}

TEST(layers_in_half) {
    tn_scope_begin();
    tn_manual_seed(2);
    for (int bf = 0; bf < 2; bf++) {
        const tn_dtype dt = bf ? TN_BF16 : TN_F16;
        tn_tensor *x = tn_to_dtype(tn_randn(TN_SHAPE(2, 3, 6, 6), TN_F32), dt), *w = tn_to_dtype(tn_randn(TN_SHAPE(4, 3, 3, 3), TN_F32), dt);
        tn_tensor *x32 = tn_to_dtype(x, TN_F32), *w32 = tn_to_dtype(w, TN_F32);
        tn_tensor *y = tn_conv2d(x, w, NULL);
        CHECK(y && y->dtype == dt && same_as_float32(y, tn_conv2d(x32, w32, NULL)));
        tn_tensor *ln = tn_layer_norm(x, TN_SHAPE(6));
        CHECK(ln && ln->dtype == dt && same_as_float32(ln, tn_layer_norm(x32, TN_SHAPE(6))));
        tn_tensor *rm = tn_zeros(TN_SHAPE(3), dt), *rv = tn_ones(TN_SHAPE(3), dt);
        tn_tensor *bn = tn_batch_norm(x, rm, rv, .training = true);
        CHECK(bn && bn->dtype == dt && rm->dtype == dt);
        CHECK(tn_item(tn_sum(tn_abs(rm))) > 0);                        /* the running statistics moved */
        CHECK_ERR(tn_conv2d(x, w32, NULL), "same dtype");
    }
    tn_scope_end();
}

TEST(autocast_lists) {
    tn_scope_begin();
    tn_tensor *a = tn_ones(TN_SHAPE(2, 3), TN_F32), *b = tn_ones(TN_SHAPE(3, 2), TN_F32), *d = tn_ones(TN_SHAPE(2, 3), TN_F64);
    CHECK(!tn_autocast_is_enabled(TN_CPU) && tn_autocast_get_dtype(TN_CPU) == TN_BF16 && tn_autocast_get_dtype(TN_CUDA) == TN_F16);
    CHECK(tn_autocast_begin(TN_CPU, .dtype = TN_BF16) == 0);
    CHECK(tn_autocast_is_enabled(TN_CPU) && !tn_autocast_is_enabled(TN_CUDA));
    CHECK(tn_mm(a, b)->dtype == TN_BF16);
    CHECK(tn_matmul(a, b)->dtype == TN_BF16);
    CHECK(tn_linear(a, tn_t(b), NULL)->dtype == TN_BF16);
    CHECK(tn_matmul(d, tn_t(d))->dtype == TN_F64);                   /* float64 is not cast */
    tn_tensor *h = tn_to_dtype(a, TN_BF16);
    CHECK(tn_mse_loss(h, h)->dtype == TN_F32);    /* losses in float32 */
    CHECK(tn_prod(h)->dtype == TN_F32);
    CHECK(tn_softmax(h, 1)->dtype == TN_BF16 && tn_exp(h)->dtype == TN_BF16);   /* CPU: not listed, run as given */
    CHECK(tn_cat(((tn_tensor *[]){h, a}), 2)->dtype == TN_F32);     /* promote: the widest */
    CHECK(tn_add(h, a)->dtype == TN_F32);
    CHECK(tn_autocast_begin(TN_CPU, .dtype = TN_BF16, .enabled = false) == 0);           /* a region with autocast off */
    CHECK(tn_mm(a, b)->dtype == TN_F32);
    CHECK(tn_autocast_end() == 0);
    CHECK(tn_autocast_begin(TN_CPU, .dtype = TN_F16) == 0);
    CHECK(tn_mm(a, b)->dtype == TN_F16);
    CHECK(tn_autocast_end() == 0);
    /* backward: float32 leaves get float32 gradients through the casts */
    tn_tensor *w = tn_ones(TN_SHAPE(4, 3), TN_F32);
    tn_requires_grad_(w, true);
    tn_tensor *y = tn_linear(a, w, NULL);
    CHECK(y->dtype == TN_BF16);
    CHECK(tn_backward(tn_sum(tn_to_dtype(y, TN_F32))) == 0);
    CHECK(tn_grad(w) && tn_grad(w)->dtype == TN_F32 && tn_item(tn_sum(tn_grad(w))) == 24);
    CHECK(tn_autocast_end() == 0);
    CHECK(!tn_autocast_is_enabled(TN_CPU) && tn_mm(a, b)->dtype == TN_F32);
    CHECK_ERR(tn_autocast_end() == 0, "no autocast region");
    CHECK_ERR(tn_autocast_begin(TN_CPU, .dtype = TN_F64) == 0, "float16 or bfloat16");
    tn_scope_end();
}

/* half precision on CUDA (tests/test_cuda_half.c holds the values): moved and converted there */
TEST(on_cuda_too) {
    tn_scope_begin();
    tn_debug_cuda_stand_in();
    tn_tensor *h = tn_to(tn_ones(TN_SHAPE(2), TN_F16), TN_CUDA);
    CHECK(h && h->device == TN_CUDA && h->dtype == TN_F16);
    tn_tensor *b = tn_to_dtype(tn_to(tn_ones(TN_SHAPE(2), TN_F32), TN_CUDA), TN_BF16);
    CHECK(b && b->device == TN_CUDA && b->dtype == TN_BF16);
    tn_scope_end();
}

int main(void) {
    RUN(float16_known_values);
    RUN(bfloat16_known_values);
    RUN(all_bit_patterns_round_trip);
    RUN(conversions_through_float);
    RUN(ops_compute_in_float32);
    RUN(backward_in_half);
    RUN(layers_in_half);
    RUN(autocast_lists);
    RUN(on_cuda_too);
    return tn_test_report();
}
