/* cuda_cases_half.h — float16 and bfloat16 on the GPU: storage, conversions bit for bit
 * with the CPU's (core/half.c), every op staged through float32 (backend/cpu_half.c) with
 * values and gradients against the CPU's half results, matmul through cuBLAS's half GEMM,
 * autocast on CUDA and GradScaler. Included after cuda_cases.h by test_cuda.c (the real
 * GPU unit) and test_devices.c (the checking stand-in on the CPU). */
#ifndef CUDA_CASES_HALF_H
#define CUDA_CASES_HALF_H
/* whether the CPU's kernels serve TN_CUDA (the stand-in): then every value is the CPU's bit
   for bit; on a GPU the float32 kernels of transcendental functions may differ by an ulp
   of float32, which rounding to half keeps within one ulp of half */
static bool half_stand_in(void) { return strstr(tn_get_backend(TN_CUDA)->name, "stand-in") != NULL; }
/* a tensor's bytes equal another's (same dtype and shape; both brought to the CPU) */
static int same_bits_at(int line, const char *what, tn_tensor *gpu, tn_tensor *cpu) {
    if (!gpu || !cpu) { fail_at(line, "%s: %s", what, tn_last_error()); return 1; }
    tn_tensor *h = tn_contiguous(tn_to(gpu, TN_CPU)), *c = tn_contiguous(cpu);
    if (!h || !c || h->dtype != c->dtype || tn_numel(h) != tn_numel(c)) { fail_at(line, "%s: dtype or size differ", what); return 1; }
    const size_t es = tn_dtype_size(h->dtype);
    const unsigned char *a = (const unsigned char *)tn_data_ptr(h), *b = (const unsigned char *)tn_data_ptr(c);
    for (int64_t i = 0; i < tn_numel(h); i++)
        if (memcmp(a + i * es, b + i * es, es)) {
            uint64_t x = 0, y = 0;
            memcpy(&x, a + i * es, es);
            memcpy(&y, b + i * es, es);
            fail_at(line, "%s: element %lld is 0x%llx on the GPU, 0x%llx on the CPU", what, (long long)i, (unsigned long long)x, (unsigned long long)y);
            return 1;
        }
    tn_test_passed++;
    return 0;
}
#define SAME_BITS(what, gpu, cpu) same_bits_at(__LINE__, what, gpu, cpu)

/* float32 bit patterns of every class: each exponent with mantissas at and around the
   float16 and bfloat16 rounding points (ties, subnormals, overflow to inf), inf, NaN */
static tn_tensor *half_f32_patterns(void) {
    static const uint32_t lows[] = {0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x10000, 0x18000,
                                    0x7FFFFF, 0x400000, 0x2AAAAA, 0x555555, 0x7FE000, 0x7FF000};
    const int64_t nl = (int64_t)(sizeof lows / sizeof lows[0]), n = 2 * 256 * 8 * nl;
    uint32_t *w = (uint32_t *)malloc((size_t)n * 4);
    int64_t k = 0;
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t e = 0; e < 256; e++)
            for (uint32_t hi = 0; hi < 8; hi++)     /* a few top mantissa bits: odd and even neighbours */
                for (int64_t l = 0; l < nl; l++) w[k++] = (s << 31) | (e << 23) | ((hi << 20) ^ lows[l]) % 0x800000u;
    tn_tensor *t = tn_from_data(w, &n, 1, TN_F32);
    free(w);
    return t;
}
/* every 16-bit pattern as a half tensor of dtype d */
static tn_tensor *half_all_patterns(tn_dtype d) {
    uint16_t *b = (uint16_t *)malloc(65536 * 2);
    for (int i = 0; i < 65536; i++) b[i] = (uint16_t)i;
    const int64_t n = 65536;
    tn_tensor *t = tn_from_data(b, &n, 1, d);
    free(b);
    return t;
}

/* The conversions of the GPU unit (tensor.h's integer ones) equal the CPU's on every
   half pattern and on the float32 patterns above: checked on the host, so on every machine. */
TEST(gpu_half_bit_conversions) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = tn_half_to_float((uint16_t)h), g;
        uint32_t w = tn__hd_f16_to_f32((uint16_t)h), v;
        memcpy(&v, &f, 4);
        memcpy(&g, &w, 4);
        if (v != w) { fail_at(__LINE__, "float16 0x%04x: 0x%08x, the CPU 0x%08x", h, w, v); return; }
        if (tn__hd_bf16_to_f32((uint16_t)h) != (uint32_t)h << 16) { fail_at(__LINE__, "bfloat16 0x%04x", h); return; }
        (void)g;
    }
    tn_test_passed++;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < 40000000; i++) {   /* every float32 exponent, random mantissas, and the patterns of half_f32_patterns */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint32_t w = (uint32_t)(x >> 32);
        if (i % 4 == 1) w &= 0xFFFFE000u | (uint32_t)(x & 0x1FFF & -(int64_t)(x >> 63 & 1));   /* ties and near-ties */
        if (i % 4 == 2) w = (w & 0x807FFFFFu) | ((uint32_t)(90 + (x & 31)) << 23);             /* the float16 subnormal range */
        float f;
        memcpy(&f, &w, 4);
        if (tn__hd_f32_to_f16(w) != tn_float_to_half(f)) { fail_at(__LINE__, "float32 0x%08x to float16: 0x%04x, the CPU 0x%04x", w, tn__hd_f32_to_f16(w), tn_float_to_half(f)); return; }
        if (tn__hd_f32_to_bf16(w) != tn_float_to_bfloat16(f)) { fail_at(__LINE__, "float32 0x%08x to bfloat16: 0x%04x, the CPU 0x%04x", w, tn__hd_f32_to_bf16(w), tn_float_to_bfloat16(f)); return; }
    }
    tn_test_passed++;
}

/* Device-to-device copies of contiguous tensors go in packs of 8 elements where both
   pointers are aligned, else one element per thread: every dtype pair, a length that
   leaves a tail (8k + 5), views that start 1 element in (misaligned) and aligned ones, the
   CPU's bits each time. */
TEST(gpu_copy_packs) {
    tn_scope_begin();
    const tn_dtype all[8] = {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL, TN_F16, TN_BF16};
    tn_tensor *src = tn_mul_scalar(tn_randn(TN_SHAPE(8 * 37 + 5 + 16), TN_F64), 50);
    for (int a = 0; a < 8; a++) {
        tn_tensor *cs = tn_to_dtype(src, all[a]), *gs = tn_to(cs, TN_CUDA);
        for (int b = 0; b < 8; b++)
            for (int si = 0; si < 3; si++) {   /* starts 0 and 8 (aligned for every element size) and 1 */
                const int start = si == 0 ? 0 : si == 1 ? 8 : 1;
                tn_tensor *cv = tn_narrow(cs, 0, start, 8 * 37 + 5), *gv = tn_narrow(gs, 0, start, 8 * 37 + 5);
                tn_tensor *want = tn_to_dtype(cv, all[b]), *got = tn_to(tn_to_dtype(gv, all[b]), TN_CPU);
                if (!got || !want || !tn_equal(tn_to_dtype(got, TN_F64), tn_to_dtype(want, TN_F64))) {
                    fail_at(__LINE__, "copy %s -> %s from element %d", tn_dtype_name(all[a]), tn_dtype_name(all[b]), start);
                    tn_scope_end();
                    return;
                }
            }
    }
    tn_test_passed++;
    tn_scope_end();
}

/* Storage on the device: round trips, conversions on the device between every dtype pair
   involving a half dtype, strided and broadcast copies, fills: the CPU's bits. */
TEST(gpu_half_storage) {
    tn_scope_begin();
    const tn_dtype halfs[2] = {TN_F16, TN_BF16}, all[8] = {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL, TN_F16, TN_BF16};
    tn_tensor *f32 = half_f32_patterns();
    for (int hk = 0; hk < 2; hk++) {
        const tn_dtype d = halfs[hk];
        tn_tensor *every = half_all_patterns(d), *g = tn_to(every, TN_CUDA);
        CHECK(g && g->device == TN_CUDA && g->dtype == d);
        SAME_BITS("round trip of every pattern", g, every);
        for (int k = 0; k < 8; k++) {   /* every pattern to each dtype, on the device */
            char what[96];
            snprintf(what, sizeof what, "%s -> %s on the device", tn_dtype_name(d), tn_dtype_name(all[k]));
            SAME_BITS(what, tn_to_dtype(g, all[k]), tn_to_dtype(every, all[k]));
        }
        SAME_BITS("float32 patterns -> half on the device", tn_to_dtype(tn_to(f32, TN_CUDA), d), tn_to_dtype(f32, d));
        tn_tensor *f64 = tn_mul_scalar(tn_to_dtype(f32, TN_F64), 1.0000001);   /* doubles off the float32 grid: rounded twice, as c10 */
        SAME_BITS("float64 -> half on the device", tn_to_dtype(tn_to(f64, TN_CUDA), d), tn_to_dtype(f64, d));
        tn_tensor *i64 = tn_arange(-70000, 70000, 7, TN_I64);
        SAME_BITS("int64 -> half on the device", tn_to_dtype(tn_to(i64, TN_CUDA), d), tn_to_dtype(i64, d));
        SAME_BITS("upload with conversion", tn_to(tn_to_dtype(f32, d), TN_CUDA), tn_to_dtype(f32, d));
        SAME_BITS("download of a conversion", tn_to_dtype(tn_to(tn_to_dtype(f32, d), TN_CUDA), TN_F32), tn_to_dtype(tn_to_dtype(f32, d), TN_F32));
        /* strided and broadcast copies on the device */
        tn_tensor *m = tn_to_dtype(tn_randn(TN_SHAPE(6, 5), TN_F32), d), *gm = tn_to(m, TN_CUDA);
        SAME_BITS("transposed contiguous()", tn_contiguous(tn_transpose(gm, 0, 1)), tn_contiguous(tn_transpose(m, 0, 1)));
        tn_tensor *dst = tn_zeros(TN_SHAPE(4, 6, 5), d), *gdst = tn_to(dst, TN_CUDA);
        CHECK(tn_copy_(gdst, gm) == 0 && tn_copy_(dst, m) == 0);
        SAME_BITS("broadcast copy_", gdst, dst);
        tn_tensor *f = tn_to(tn_zeros(TN_SHAPE(3, 4), TN_F32), TN_CUDA);
        CHECK(tn_copy_(f, tn_narrow(tn_narrow(tn_transpose(gm, 0, 1), 1, 1, 4), 0, 0, 3)) == 0);
        SAME_BITS("half view -> float32 copy_", f, tn_to_dtype(tn_narrow(tn_narrow(tn_transpose(m, 0, 1), 1, 1, 4), 0, 0, 3), TN_F32));
        /* fills: the value rounded once from float (65520 overflows, NaN is the CPU's) */
        const double vals[] = {0, -0.0, 1.0 / 3, 65504, 65519.99, 65520, -1e6, 1e-8, 5.9604644775390625e-08, 1e38, INFINITY, NAN};
        for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
            tn_tensor *c = tn_zeros(TN_SHAPE(3, 2), d), *gc = tn_to(c, TN_CUDA);
            CHECK(tn_fill_(c, vals[v]) && tn_fill_(gc, vals[v]));
            char what[64];
            snprintf(what, sizeof what, "fill_(%g)", vals[v]);
            SAME_BITS(what, gc, c);
            SAME_BITS("full_like", tn_full_like(gc, vals[v]), tn_full_like(c, vals[v]));
        }
        SAME_BITS("zeros_like", tn_zeros_like(gm), tn_zeros_like(m));
        SAME_BITS("ones_like", tn_ones_like(gm), tn_ones_like(m));
        tn_tensor *r = tn_rand_like(gm);
        CHECK(r && r->device == TN_CUDA && r->dtype == d);
        tn_tensor *rc = r ? tn_to_dtype(tn_to(r, TN_CPU), TN_F32) : NULL;
        CHECK(rc && tn_item(tn_min(rc)) >= 0 && tn_item(tn_max(rc)) <= 1);
        tn_tensor *rn = tn_randn_like(gm);
        CHECK(rn && rn->dtype == d && tn_item(tn_to(tn_std(tn_to_dtype(rn, TN_F32)), TN_CPU)) > 0.1);
    }
    tn_scope_end();
}

/* ops on half operands: values and gradients against the CPU's half results (the CPU
   rounds once from float32; so must the GPU) */
UNARY_FN(h_add, tn_add(x[0], x[1]))
UNARY_FN(h_mul, tn_mul(x[0], x[1]))
UNARY_FN(h_div, tn_div(x[0], x[1]))
UNARY_FN(h_exp, tn_exp(x[0]))
UNARY_FN(h_tanh, tn_tanh(x[0]))
UNARY_FN(h_gelu, tn_gelu(x[0]))
UNARY_FN(h_relu, tn_relu(x[0]))
UNARY_FN(h_where, tn_where(tn_gt(x[0], x[1]), x[0], x[1]))
UNARY_FN(h_sum, tn_sum_dims(x[0], (const int64_t[]){1}, 1))
UNARY_FN(h_mean, tn_mean(x[0]))
UNARY_FN(h_max, tn_max_dim(x[0], -1, NULL))
UNARY_FN(h_cumsum, tn_cumsum(x[0], 0))
UNARY_FN(h_softmax, tn_softmax(x[0], -1))
UNARY_FN(h_log_softmax, tn_log_softmax(x[0], 1))
UNARY_FN(h_sort, tn_sort(x[0], NULL, .descending = true))
UNARY_FN(h_layer_norm, tn_layer_norm(x[0], (const int64_t[]){5}, 1, .weight = x[1], .bias = x[2]))
UNARY_FN(h_index_select, tn_index_select(x[0], 0, tn_to(tn_from_data((const int64_t[]){2, 0, 2, 1}, TN_SHAPE(4), TN_I64), x[0]->device)))
UNARY_FN(h_gather, tn_gather(x[0], 1, tn_to(tn_from_data((const int64_t[]){4, 0, 1, 1, 3, 2}, TN_SHAPE(3, 2), TN_I64), x[0]->device)))
UNARY_FN(h_scatter_add, tn_scatter_add(x[0], 0, tn_to(tn_from_data((const int64_t[]){1, 1, 0, 2, 1}, TN_SHAPE(1, 5), TN_I64), x[0]->device), x[1]))
UNARY_FN(h_mixed, tn_add(x[0], x[1]))   /* half + float32: float32 */
UNARY_FN(h_matmul, tn_matmul(x[0], x[1]))
UNARY_FN(h_matmul_t, tn_matmul(tn_transpose(x[0], -1, -2), x[1]))
UNARY_FN(h_linear, tn_linear(x[0], x[1], x[2]))
UNARY_FN(h_conv2d, tn_conv2d(x[0], x[1], x[2], .padding_hw = {1, 1}))
UNARY_FN(h_embedding, tn_embedding(tn_to(tn_from_data((const int64_t[]){3, 0, 3, 1}, TN_SHAPE(2, 2), TN_I64), x[0]->device), x[0]))
UNARY_FN(h_cross_entropy, tn_cross_entropy(x[0], tn_to(tn_from_data((const int64_t[]){1, 0, 4, 2}, TN_SHAPE(4), TN_I64), x[0]->device)))
static tn_tensor *hr(tn_dtype d, const int64_t *shape, int nd) { return tn_to_dtype(tn_randn(shape, nd, TN_F32), d); }
#define HR(d, ...) hr(d, TN_SHAPE(__VA_ARGS__))
TEST(gpu_half_ops_match_cpu) {
    const tn_dtype ds[2] = {TN_F16, TN_BF16};
    const bool exact = half_stand_in();
    for (int k = 0; k < 2; k++) {
        tn_scope_begin();
        const tn_dtype d = ds[k];
        /* elementwise arithmetic is exact in float32 then rounded once: the same bits anywhere;
           transcendental functions and reductions within an ulp of half (2^-10, 2^-7) */
        const double ulp = d == TN_F16 ? 1.0 / 1024 : 1.0 / 128, t1 = exact ? 0 : ulp, tr = exact ? 0 : 4 * ulp;
        tn_tensor *nc = tn_transpose(HR(d, 5, 4), 0, 1);   /* non-contiguous */
        CHECK_OP("half add (broadcast)", h_add, 0, true, HR(d, 4, 5), HR(d, 5));
        CHECK_OP("half mul", h_mul, 0, true, nc, HR(d, 4, 5));
        CHECK_OP("half div", h_div, t1, true, HR(d, 4, 5), tn_add_scalar(tn_abs(HR(d, 4, 5)), 0.5));
        CHECK_OP("half exp", h_exp, t1, true, nc);
        CHECK_OP("half tanh", h_tanh, t1, true, HR(d, 3, 7));
        CHECK_OP("half gelu", h_gelu, t1, true, HR(d, 3, 7));
        CHECK_OP("half relu", h_relu, 0, true, nc);
        CHECK_OP("half where", h_where, 0, true, HR(d, 4, 5), HR(d, 4, 5));
        CHECK_OP("half sum", h_sum, tr, true, HR(d, 3, 50, 2));
        CHECK_OP("half mean (0-d)", h_mean, tr, true, HR(d, 6, 7));
        CHECK_OP("half max dim", h_max, 0, true, nc);
        CHECK_OP("half cumsum", h_cumsum, tr, true, HR(d, 9, 3));
        CHECK_OP("half softmax", h_softmax, tr, true, HR(d, 4, 9));
        CHECK_OP("half log_softmax", h_log_softmax, tr, true, HR(d, 4, 9));
        CHECK_OP("half sort", h_sort, 0, true, HR(d, 3, 8));
        CHECK_OP("half layer_norm", h_layer_norm, tr, true, HR(d, 4, 5), HR(d, 5), HR(d, 5));
        CHECK_OP("half index_select", h_index_select, 0, true, HR(d, 3, 4));
        CHECK_OP("half gather", h_gather, 0, true, HR(d, 3, 5));
        CHECK_OP("half scatter_add", h_scatter_add, tr, true, HR(d, 3, 5), HR(d, 1, 5));
        CHECK_OP("half + float32", h_mixed, 0, true, HR(d, 4, 5), RANDN(4, 5));
        CHECK_OP("half embedding", h_embedding, 0, true, HR(d, 5, 3));
        CHECK_OP("half cross_entropy", h_cross_entropy, tr, true, HR(d, 4, 6));
        CHECK_OP("half empty sum", h_sum, 0, true, HR(d, 2, 0, 3));
        /* matmul: cuBLAS accumulates in float32 in its own order (tensor cores): a few ulps of
           half in the result on a GPU; the stand-in is the CPU's half matmul */
        const double tm = exact ? 0 : 8 * ulp;
        CHECK_OP("half matmul", h_matmul, tm, true, HR(d, 7, 33), HR(d, 33, 5));
        CHECK_OP("half matmul batched, broadcast", h_matmul, tm, true, HR(d, 3, 6, 16), HR(d, 16, 4));
        CHECK_OP("half matmul transposed", h_matmul_t, tm, true, HR(d, 2, 16, 6), HR(d, 2, 16, 3));
        CHECK_OP("half matmul K = 0", h_matmul, 0, true, HR(d, 3, 0), HR(d, 0, 4));
        CHECK_OP("half linear", h_linear, tm, true, HR(d, 5, 12), HR(d, 7, 12), HR(d, 7));
        CHECK_OP("half conv2d (im2col and matmul)", h_conv2d, tm, true, HR(d, 2, 3, 6, 5), HR(d, 4, 3, 3, 3), HR(d, 4));
        tn_scope_end();
    }
}

/* autocast on CUDA: the op lists' casts on the device, the results the CPU gets under the
   CPU's autocast where PyTorch's lists agree (linear, matmul, losses) */
TEST(gpu_half_autocast) {
    tn_scope_begin();
    tn_tensor *x = RANDN(6, 12), *w = RANDN(5, 12), *b = RANDN(5);
    tn_tensor *gx = tn_to(x, TN_CUDA), *gw = tn_to(w, TN_CUDA), *gb = tn_to(b, TN_CUDA);
    CHECK(tn_autocast_begin(TN_CUDA, .dtype = TN_BF16) == 0);
    CHECK(tn_autocast_is_enabled(TN_CUDA) && !tn_autocast_is_enabled(TN_CPU) && tn_autocast_get_dtype(TN_CUDA) == TN_BF16);
    tn_tensor *gy = tn_linear(gx, gw, gb);
    CHECK(gy && gy->dtype == TN_BF16 && gy->device == TN_CUDA);
    tn_tensor *cy_off = tn_linear(x, w, b);   /* CPU ops are untouched by CUDA's autocast */
    CHECK(cy_off && cy_off->dtype == TN_F32);
    tn_tensor *gl = gy ? tn_mse_loss(gy, tn_zeros_like(gy)) : NULL;
    CHECK(gl && gl->dtype == TN_F32);
    tn_tensor *gs = gy ? tn_softmax(gy, -1) : NULL;   /* CUDA's list: softmax in float32 (the CPU's list leaves it) */
    CHECK(gs && gs->dtype == TN_F32);
    CHECK(tn_autocast_end() == 0);
    CHECK(tn_autocast_begin(TN_CPU, .dtype = TN_BF16) == 0);
    tn_tensor *cy = tn_linear(x, w, b);
    tn_tensor *cs = cy ? tn_softmax(cy, -1) : NULL;
    CHECK(cs && cs->dtype == TN_BF16);
    CHECK(tn_autocast_end() == 0);
    SAME("linear under autocast", gy, cy, half_stand_in() ? 0 : 8.0 / 128);
    CHECK(tn_autocast_begin(TN_CUDA, .dtype = TN_F16) == 0);
    tn_tensor *gm = tn_matmul(gx, tn_transpose(gw, 0, 1));
    CHECK(gm && gm->dtype == TN_F16);
    tn_tensor *gd = tn_matmul(tn_to_dtype(gx, TN_F64), tn_transpose(tn_to_dtype(gw, TN_F64), 0, 1));   /* float64 is left alone */
    CHECK(gd && gd->dtype == TN_F64);
    CHECK(tn_autocast_end() == 0);
    CHECK(!tn_autocast_is_enabled(TN_CUDA));
    tn_scope_end();
}

/* A small MLP trained a few steps in bfloat16 autocast on the device with the loss scaled
   and unscaled by hand as GradScaler does: the same losses as on the CPU (same lists for
   linear and the loss), gradients finite, and the step skipped on an inf. */
TEST(gpu_half_autocast_training) {
    tn_scope_begin();
    tn_tensor *w1 = tn_mul_scalar(RANDN(16, 8), 0.3), *w2 = tn_mul_scalar(RANDN(3, 16), 0.3), *xin = RANDN(10, 8);
    tn_tensor *tgt = tn_from_data((const int64_t[]){0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, TN_SHAPE(10), TN_I64);
    double losses[2][3];
    for (int dev = 0; dev < 2; dev++) {
        const tn_device D = dev ? TN_CUDA : TN_CPU;
        tn_tensor *a = tn_clone(tn_to(w1, D)), *b = tn_clone(tn_to(w2, D))   /* copies: trained in place */, *xi = tn_to(xin, D), *t = tn_to(tgt, D);
        tn_requires_grad_(a, true);
        tn_requires_grad_(b, true);
        for (int step = 0; step < 3; step++) {
            tn_scope_begin();
            CHECK(tn_autocast_begin(D, .dtype = TN_BF16) == 0);
            tn_tensor *h = tn_relu(tn_linear(xi, a, NULL));
            tn_tensor *loss = tn_cross_entropy(tn_linear(h, b, NULL), t);
            CHECK(tn_autocast_end() == 0);
            CHECK(loss && loss->dtype == TN_F32);
            losses[dev][step] = loss ? tn_item(tn_to(loss, TN_CPU)) : NAN;
            CHECK(loss && tn_backward(tn_mul_scalar(loss, 1024)) == 0);   /* scaled */
            tn_tensor *ga = tn_div_scalar(tn_grad(a), 1024), *gb = tn_div_scalar(tn_grad(b), 1024);
            CHECK(ga && ga->device == D && tn_item(tn_to(tn_all(tn_isfinite(ga)), TN_CPU)) == 1);
            CHECK(tn_sub_(tn_detach(a), tn_mul_scalar(ga, 0.5)) && tn_sub_(tn_detach(b), tn_mul_scalar(gb, 0.5)));   /* SGD, untracked */
            tn_set_grad(a, NULL);
            tn_set_grad(b, NULL);
            tn_scope_end();
        }
    }
    for (int s = 0; s < 3; s++)
        if (!same_value(losses[1][s], losses[0][s], half_stand_in() ? 0 : 2e-2)) fail_at(__LINE__, "step %d: loss %.9g on the GPU, %.9g on the CPU", s, losses[1][s], losses[0][s]);
    CHECK(losses[0][2] < losses[0][0]);
    tn_scope_end();
}
#endif
