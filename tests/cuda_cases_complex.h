/* cuda_cases_complex.h — complex64/complex128 on the GPU: copies and conversions, views,
 * the elementwise ops, reductions, matmul and their gradients against the CPU, the cases
 * the unit declines (one predicate, src/api.h, so the stand-in declines the same). Included
 * after cuda_cases.h by test_cuda.c (the real GPU unit) and test_devices.c (the checking
 * stand-in, plain and with TN_STAND_IN_UNREADABLE=1). */
#ifndef CUDA_CASES_COMPLEX_H
#define CUDA_CASES_COMPLEX_H
/* a GPU result against the CPU's: complex ones part by part (view_as_real), real ones as SAME */
static int cx_diff_at(int line, const char *what, tn_tensor *gpu, tn_tensor *cpu, double tol) {
    if (!gpu || !cpu) { fail_at(line, "%s: %s", what, tn_last_error()); return 1; }
    if (gpu->dtype != cpu->dtype) { fail_at(line, "%s: dtype %s on the GPU, %s on the CPU", what, tn_dtype_name(gpu->dtype), tn_dtype_name(cpu->dtype)); return 1; }
    if (!tn_is_complex(cpu)) return max_diff_at(line, what, gpu, cpu, tol);
    if (gpu->device != TN_CUDA) { fail_at(line, "%s: result is on %s, expected cuda", what, tn_device_name(gpu->device)); return 1; }
    return max_diff_at(line, what, tn_view_as_real(tn_contiguous(gpu)), tn_view_as_real(tn_contiguous(cpu)), tol);
}
#define CX_SAME(what, gpu, cpu, tol) cx_diff_at(__LINE__, what, gpu, cpu, tol)

/* fn on CPU inputs and on their GPU copies: values, then the gradients of the real loss
   sum(Re(out * w)) (w fixed, complex where out is) for the complex and float inputs */
static void check_cx_op(int line, const char *what, op_fn fn, tn_tensor *const *cpu_in, int n, double tol, bool grad) {
    if (!tn_test_selected("TN_CASE_FILTER", what)) return;
    tn_scope_begin();
    tn_tensor *ci[8], *gi[8];
    for (int i = 0; i < n; i++) {
        ci[i] = tn_detach(cpu_in[i]);
        gi[i] = tn_detach(tn_to(cpu_in[i], TN_CUDA));
        const bool diff = grad && (tn_is_complex(ci[i]) || tn_dtype_is_floating(ci[i]->dtype));
        tn_requires_grad_(ci[i], diff);
        tn_requires_grad_(gi[i], diff);
    }
    tn_tensor *co = fn(ci), *go = fn(gi);
    if (cx_diff_at(line, what, go, co, tol) == 0 && grad) {
        tn_tensor *w = tn_randn(co->shape, co->ndim, co->dtype);
        tn_tensor *lc = tn_sum(tn_real(tn_mul(co, w))), *lg = tn_sum(tn_real(tn_mul(go, tn_to(w, TN_CUDA))));
        if (tn_backward(lc) || tn_backward(lg)) fail_at(line, "%s backward: %s", what, tn_last_error());
        else
            for (int i = 0; i < n; i++) {
                if (!ci[i]->requires_grad || (!tn_grad(gi[i]) && !tn_grad(ci[i]))) continue;
                char name[96];
                snprintf(name, sizeof name, "%s grad %d", what, i);
                cx_diff_at(line, name, tn_grad(gi[i]), tn_grad(ci[i]), tol * 10 > 1e-6 ? tol * 10 : 1e-6);
            }
    }
    tn_scope_end();
}
#define CHECK_CX(what, fn, tol, grad, ...) do { tn_tensor *in_[] = {__VA_ARGS__}; check_cx_op(__LINE__, what, fn, in_, (int)(sizeof in_ / sizeof in_[0]), tol, grad); } while (0)

UNARY_FN(cx_add, tn_add(x[0], x[1]))
UNARY_FN(cx_add_alpha, tn_add_alpha(x[0], x[1], 2.5))
UNARY_FN(cx_sub_alpha, tn_sub_alpha(x[0], x[1], -0.5))
UNARY_FN(cx_mul, tn_mul(x[0], x[1]))
UNARY_FN(cx_div, tn_div(x[0], x[1]))
UNARY_FN(cx_neg, tn_neg(x[0]))
UNARY_FN(cx_abs, tn_abs(x[0]))
UNARY_FN(cx_angle, tn_angle(x[0]))
UNARY_FN(cx_exp, tn_exp(x[0]))
UNARY_FN(cx_log, tn_log(x[0]))
UNARY_FN(cx_sqrt, tn_sqrt(x[0]))
UNARY_FN(cx_sin, tn_sin(x[0]))
UNARY_FN(cx_cos, tn_cos(x[0]))
UNARY_FN(cx_tanh, tn_tanh(x[0]))
UNARY_FN(cx_asinh, tn_asinh(x[0]))
UNARY_FN(cx_sigmoid, tn_sigmoid(x[0]))
UNARY_FN(cx_reciprocal, tn_reciprocal(x[0]))
UNARY_FN(cx_pow, tn_pow(x[0], x[1]))
UNARY_FN(cx_pow_scalar, tn_pow_scalar(x[0], 3))
UNARY_FN(cx_conj, tn_conj(x[0]))
UNARY_FN(cx_conj_mul, tn_mul(tn_conj(x[0]), x[0]))
UNARY_FN(cx_real, tn_real(x[0]))
UNARY_FN(cx_imag, tn_imag(x[0]))
UNARY_FN(cx_view_as_real, tn_view_as_real(x[0]))
UNARY_FN(cx_view_as_complex, tn_view_as_complex(x[0]))
UNARY_FN(cx_complex, tn_complex(x[0], x[1]))
UNARY_FN(cx_polar, tn_polar(x[0], x[1]))
UNARY_FN(cx_eq, tn_eq(x[0], x[1]))
UNARY_FN(cx_ne, tn_ne(x[0], x[0]))
UNARY_FN(cx_isnan, tn_isnan(tn_div(x[0], x[1])))
UNARY_FN(cx_where, tn_where(tn_gt(tn_real(x[0]), tn_imag(x[0])), x[0], x[1]))
UNARY_FN(cx_addcmul, tn_addcmul(x[0], x[1], x[0], .value = 0.5))
UNARY_FN(cx_lerp, tn_lerp_scalar(x[0], x[1], 0.25))
UNARY_FN(cx_sum, tn_sum(x[0]))
UNARY_FN(cx_sum_dim, tn_sum_dims(x[0], TN_DIMS(1), .keepdim = true))
UNARY_FN(cx_sum_rows, tn_sum_dims(x[0], TN_DIMS(0)))
UNARY_FN(cx_mean, tn_mean_dims(x[0], TN_DIMS(0)))
UNARY_FN(cx_prod, tn_prod_dims(x[0], TN_DIMS(1)))
UNARY_FN(cx_prod_all, tn_prod(x[0]))
UNARY_FN(cx_cumsum, tn_cumsum(x[0], 1))
UNARY_FN(cx_matmul, tn_matmul(x[0], x[1]))
UNARY_FN(cx_matmul_t, tn_matmul(tn_t(x[0]), tn_t(x[1])))
UNARY_FN(cx_bmm, tn_bmm(x[0], x[1]))
UNARY_FN(cx_matmul_expand, tn_matmul(x[0], tn_expand(x[1], TN_SHAPE(3, 5, 2))))
UNARY_FN(cx_index_select, tn_index_select(x[0], 1, x[1]))
UNARY_FN(cx_to_c128, tn_to_dtype(x[0], TN_C128))
UNARY_FN(cx_to_c64, tn_to_dtype(x[0], TN_C64))
UNARY_FN(cx_mul_real, tn_mul(x[0], x[1]))
UNARY_FN(cx_mul_scalar, tn_mul(x[0], tn_scalar_complex(0.5, -2)))
UNARY_FN(cx_mse, tn_mean(tn_abs(tn_sub(x[0], x[1]))))

static tn_tensor *cx_randn(const int64_t *shape, int nd, tn_dtype dt) { return tn_randn(shape, nd, dt); }
#define CRANDN(dt, ...) cx_randn(TN_SHAPE(__VA_ARGS__), dt)

TEST(gpu_complex_ops_match_cpu) {
    for (int w = 0; w < 2; w++) {
        tn_scope_begin();
        tn_manual_seed(26);
        const tn_dtype dt = w ? TN_C128 : TN_C64, rt = w ? TN_F64 : TN_F32;
        const double tol = w ? 1e-12 : 2e-5;
        tn_tensor *a = CRANDN(dt, 4, 5), *b = CRANDN(dt, 4, 5), *at = tn_t(CRANDN(dt, 5, 4)), *row = CRANDN(dt, 5), *zero = CRANDN(dt, 0, 5);
        tn_tensor *s0 = tn_sum(CRANDN(dt, 3));   /* 0-d */
        tn_tensor *ra = tn_randn(TN_SHAPE(4, 5), rt), *rb = tn_randn(TN_SHAPE(4, 5), rt);
        /* copies both ways are exact, strided too; the result's dtype and device */
        tn_tensor *g = tn_to(a, TN_CUDA);
        CHECK(g && g->device == TN_CUDA && g->dtype == dt);
        CX_SAME("upload", g, a, 0);
        CX_SAME("strided upload", tn_to(at, TN_CUDA), at, 0);
        CX_SAME("device strided copy", tn_contiguous(tn_t(tn_to(tn_t(at), TN_CUDA))), tn_contiguous(at), 0);
        CX_SAME("zeros", tn_to(tn_zeros(TN_SHAPE(3, 2), dt), TN_CUDA), tn_zeros(TN_SHAPE(3, 2), dt), 0);
        tn_tensor *f = tn_to(tn_empty(TN_SHAPE(2, 3), dt), TN_CUDA);
        CHECK(tn_fill_(f, 2.5) != NULL);
        CX_SAME("fill", f, tn_full(TN_SHAPE(2, 3), 2.5, dt), 0);
        /* conversions on the device: between the complex dtypes, from real ones, to real ones */
        CHECK_CX("to complex128", cx_to_c128, 0, false, a);
        CHECK_CX("to complex64", cx_to_c64, 0, false, a);
        CHECK_CX("float to complex", w ? cx_to_c128 : cx_to_c64, 0, false, ra);
        CHECK_CX("int64 to complex", w ? cx_to_c128 : cx_to_c64, 0, false, tn_arange(-3, 9, 1, TN_I64));
        CHECK_CX("bool to complex", w ? cx_to_c128 : cx_to_c64, 0, false, tn_gt(ra, tn_scalar(0)));
        SAME("complex to bool", tn_to_dtype(tn_to(tn_mul(a, tn_gt(ra, tn_scalar(0))), TN_CUDA), TN_BOOL), tn_to_dtype(tn_mul(a, tn_gt(ra, tn_scalar(0))), TN_BOOL), 0);
        /* printing: the CPU's text plus the device */
        char *pc = tn_to_string(a), *pg = tn_to_string(g);
        CHECK(pc && pg && strstr(pg, "device='cuda:0'") && strrchr(pc, ']') && !strncmp(pc, pg, (size_t)(strrchr(pc, ']') - pc) + 1));   /* the values as the CPU's */
        tn_string_free(pc);
        tn_string_free(pg);
        double re = 0, im = 0, cre = 0, cim = 0;
        CHECK(tn_item_complex(tn_to(s0, TN_CUDA), &re, &im) == 0 && tn_item_complex(s0, &cre, &cim) == 0 && re == cre && im == cim);
        /* views: real/imag/view_as_real are views of the device tensor (writes reach it) */
        tn_tensor *gr = tn_real(g), *gi = tn_imag(g);
        CHECK(gr && gi && gr->device == TN_CUDA && gr->storage == g->storage && gi->storage == g->storage);
        tn_tensor *h = tn_clone(g);
        CHECK(tn_mul_scalar_(tn_imag(h), 0) != NULL);
        CX_SAME("write through imag", h, tn_complex(tn_real(a), tn_zeros_like(tn_real(a))), 0);
        CHECK_CX("real", cx_real, 0, true, a);
        CHECK_CX("imag of strided", cx_imag, 0, true, at);
        CHECK_CX("view_as_real", cx_view_as_real, 0, true, a);
        CHECK_CX("view_as_complex", cx_view_as_complex, 0, true, tn_randn(TN_SHAPE(3, 4, 2), rt));
        CHECK_CX("complex", cx_complex, 0, true, ra, rb);
        CHECK_CX("polar", cx_polar, tol, true, tn_abs(ra), rb);
        CHECK_CX("conj", cx_conj, 0, true, at);
        CHECK_CX("conj * x", cx_conj_mul, tol, true, a);
        CHECK_CX("conj 0-size", cx_conj, 0, true, zero);
        /* elementwise: contiguous, strided, broadcast, 0-size, 0-d */
        CHECK_CX("add", cx_add, tol, true, a, b);
        CHECK_CX("add broadcast", cx_add, tol, true, at, row);
        CHECK_CX("add 0-d", cx_add, tol, true, s0, a);
        CHECK_CX("add 0-size", cx_add, tol, true, zero, row);
        CHECK_CX("add alpha", cx_add_alpha, tol, true, a, at);
        CHECK_CX("sub alpha", cx_sub_alpha, tol, true, at, b);
        CHECK_CX("mul", cx_mul, tol, true, at, b);
        CHECK_CX("mul by real", cx_mul_real, tol, true, a, ra);
        CHECK_CX("mul by complex scalar", cx_mul_scalar, tol, true, at);
        CHECK_CX("div", cx_div, tol, true, a, row);
        CHECK_CX("neg", cx_neg, 0, true, at);
        CHECK_CX("abs", cx_abs, tol, true, a);
        CHECK_CX("angle", cx_angle, tol, true, at);
        CHECK_CX("exp", cx_exp, tol, true, a);
        CHECK_CX("log", cx_log, tol, true, at);
        CHECK_CX("sqrt", cx_sqrt, tol, true, a);
        CHECK_CX("sin", cx_sin, tol, true, a);
        CHECK_CX("cos", cx_cos, tol, true, at);
        CHECK_CX("tanh", cx_tanh, tol, true, a);
        CHECK_CX("asinh", cx_asinh, tol, true, a);
        CHECK_CX("sigmoid", cx_sigmoid, tol, true, at);
        CHECK_CX("reciprocal", cx_reciprocal, tol, true, a);
        CHECK_CX("pow", cx_pow, tol * 10, true, a, b);
        CHECK_CX("pow scalar", cx_pow_scalar, tol * 10, true, at);
        CHECK_CX("eq", cx_eq, 0, false, a, tn_where(tn_gt(ra, tn_scalar(0)), a, b));
        CHECK_CX("ne", cx_ne, 0, false, at);
        CHECK_CX("isnan of 0/0", cx_isnan, 0, false, a, tn_mul(a, tn_gt(ra, tn_scalar(0))));
        CHECK_CX("where", cx_where, 0, true, a, at);
        CHECK_CX("addcmul", cx_addcmul, tol, true, a, at);
        CHECK_CX("lerp", cx_lerp, tol, true, a, b);
        /* reductions */
        CHECK_CX("sum", cx_sum, tol, true, a);
        CHECK_CX("sum of many", cx_sum, tol * 10, true, CRANDN(dt, 3000));
        CHECK_CX("sum dim strided", cx_sum_dim, tol, true, at);
        CHECK_CX("sum rows", cx_sum_rows, tol, true, CRANDN(dt, 300, 7));
        CHECK_CX("sum 0-size", cx_sum, 0, true, zero);
        CHECK_CX("mean", cx_mean, tol, true, at);
        CHECK_CX("prod", cx_prod, tol, true, a);
        CHECK_CX("prod all", cx_prod_all, tol * 10, true, tn_div(CRANDN(dt, 100), tn_scalar(1.2)));
        CHECK_CX("cumsum (through the parts)", cx_cumsum, tol, true, at);
        CHECK_CX("mean abs difference", cx_mse, tol, true, a, b);
        CHECK_CX("index_select", cx_index_select, 0, true, a, tn_from_data((int64_t[]){4, 0, 0, 2}, TN_SHAPE(4), TN_I64));
        /* matmul (cuBLAS's C/Zgemm): plain, transposed, batched, an expanded batch, K = 0 */
        CHECK_CX("matmul", cx_matmul, tol * 10, true, a, tn_t(b));
        CHECK_CX("matmul transposed", cx_matmul_t, tol * 10, true, tn_t(a), b);
        CHECK_CX("bmm", cx_bmm, tol * 10, true, CRANDN(dt, 3, 4, 5), CRANDN(dt, 3, 5, 2));
        CHECK_CX("matmul expanded batch", cx_matmul_expand, tol * 10, true, CRANDN(dt, 3, 4, 5), CRANDN(dt, 5, 2));
        CHECK_CX("matmul K = 0", cx_matmul, 0, false, CRANDN(dt, 3, 0), CRANDN(dt, 0, 2));
        CHECK_CX("matmul with real", cx_matmul, tol * 10, false, a, tn_to_dtype(tn_t(rb), dt));
        tn_scope_end();
    }
}

/* What the unit has no complex kernel for fails with one message, on the unit and the
   stand-in alike (tn__cuda_complex_has / tn__cuda_complex_decline, src/api.h). */
TEST(gpu_complex_declines) {
    tn_scope_begin();
    const tn_backend *be = tn_get_backend(TN_CUDA);
    tn_tensor *g = tn_to(tn_randn(TN_SHAPE(3, 4), TN_C64), TN_CUDA), *r = tn_to(tn_zeros(TN_SHAPE(3, 4), TN_F32), TN_CUDA);
    tn_tensor *i = tn_to(tn_zeros(TN_SHAPE(3, 4), TN_I64), TN_CUDA), *e = tn_to(tn_randn(TN_SHAPE(0), TN_C128), TN_CUDA);
    const int64_t is[1] = {1};
    CHECK_ERR(be->unary(FLOOR, g, g, NULL) == 0, "unary op FLOOR: dtype complex64 has no kernel for this op on CUDA yet");
    CHECK_ERR(be->binary(MAXIMUM, g, g, g, 1) == 0, "binary op MAXIMUM: dtype complex64 has no kernel");
    CHECK_ERR(be->binary(LT, r, g, g, 1) == 0, "binary op LT: dtype complex64 has no kernel");
    CHECK_ERR(be->reduce(MAX, g, g) == 0, "reduce op MAX: dtype complex64 has no kernel");
    CHECK_ERR(be->lane(SORT, g, i, g, 1, 0) == 0, "lane op SORT: dtype complex64 has no kernel");
    CHECK_ERR(be->index(SCATTER_MUL, g, g, &i, is, 1) == 0, "index op SCATTER_MUL: dtype complex64 has no kernel");
    CHECK_ERR(be->unary(FLOOR, e, e, NULL) == 0, "unary op FLOOR: dtype complex128 has no kernel");   /* empty: declined all the same */
    CHECK(be->unary(EXP, e, e, NULL) == 0 && be->lane(CUMPROD, g, NULL, g, 1, 0) == 0);   /* what the unit has */
    CHECK(tn__cuda_complex_has(TN__CX_UNARY, EXP) && !tn__cuda_complex_has(TN__CX_UNARY, FLOOR));
    CHECK(tn__cuda_complex_has(TN__CX_REDUCE, PROD) && !tn__cuda_complex_has(TN__CX_REDUCE, MAX) && tn__cuda_complex_has(TN__CX_LANE, CUMPROD));
    /* through the ops: what PyTorch refuses for complex anywhere, the same here */
    CHECK_ERR(tn_clamp(g, .min = 0), "clamp is not supported for complex types");
    CHECK_ERR(tn_sort(g, NULL), "");
    tn_scope_end();
}
/* ---- torch.fft on the GPU (tn_backend.fft: cuFFT on the unit, the CPU's engine on the
   stand-in) ---- */
UNARY_FN(ft_fft, tn_fft_fft(x[0]))
UNARY_FN(ft_fft_n, tn_fft_fft(x[0], .n = 12, .dim = 0, .norm = "ortho"))
UNARY_FN(ft_ifft, tn_fft_ifft(x[0], .norm = "forward"))
UNARY_FN(ft_rfft, tn_fft_rfft(x[0]))
UNARY_FN(ft_irfft, tn_fft_irfft(x[0]))
UNARY_FN(ft_irfft_odd, tn_fft_irfft(x[0], .n = 9, .norm = "ortho"))
UNARY_FN(ft_hfft, tn_fft_hfft(x[0]))
UNARY_FN(ft_ihfft, tn_fft_ihfft(x[0]))
UNARY_FN(ft_fft2, tn_fft_fft2(x[0]))
UNARY_FN(ft_ifft2, tn_fft_ifft2(x[0], .norm = "ortho"))
UNARY_FN(ft_rfft2, tn_fft_rfft2(x[0]))
UNARY_FN(ft_irfft2, tn_fft_irfft2(x[0], .s = TN_INTS(4, 6)))
UNARY_FN(ft_fftn_dims, tn_fft_fftn(x[0], .dim = TN_INTS(2, 0)))
UNARY_FN(ft_fftn_all, tn_fft_fftn(x[0], .norm = "forward"))   /* 4 dims: two calls of the entry */
UNARY_FN(ft_rfftn_all, tn_fft_rfftn(x[0]))
UNARY_FN(ft_irfftn_all, tn_fft_irfftn(x[0], .norm = "ortho"))
UNARY_FN(ft_roundtrip, tn_fft_ifft(tn_fft_fft(x[0])))
UNARY_FN(ft_rroundtrip, tn_fft_irfft(tn_fft_rfft(x[0]), .n = x[0]->shape[x[0]->ndim - 1]))
UNARY_FN(ft_shift, tn_fft_fftshift(tn_fft_fft(x[0])))
UNARY_FN(ft_stft, tn_stft(x[0], 16, x[1], .hop_length = 4, .return_complex = true))
UNARY_FN(ft_istft, tn_istft(tn_stft(x[0], 16, x[1], .hop_length = 4, .return_complex = true), 16, x[1], .hop_length = 4, .length = 90))

TEST(gpu_fft_match_cpu) {
    for (int w = 0; w < 2; w++) {
        tn_scope_begin();
        tn_manual_seed(261);
        const tn_dtype ct = w ? TN_C128 : TN_C64, rt = w ? TN_F64 : TN_F32;
        const double tol = w ? 1e-11 : 2e-5;
        static const int64_t lens[] = {1, 7, 64, 1000};
        for (int i = 0; i < 4; i++) {   /* lengths: trivial, prime (Bluestein on the CPU), a power of 2, 2^3 5^3 */
            char what[64];
            const int64_t L = lens[i];
            tn_tensor *c = CRANDN(ct, 3, L), *r = tn_randn(TN_SHAPE(3, L), rt);
            const double t = tol * (L > 100 ? 10 : 1);
            snprintf(what, sizeof what, "fft %lld", (long long)L); CHECK_CX(what, ft_fft, t, true, c);
            snprintf(what, sizeof what, "ifft %lld", (long long)L); CHECK_CX(what, ft_ifft, t, true, c);
            snprintf(what, sizeof what, "rfft %lld", (long long)L); CHECK_CX(what, ft_rfft, t, true, r);
            snprintf(what, sizeof what, "fft of real %lld", (long long)L); CHECK_CX(what, ft_fft, t, true, r);
            snprintf(what, sizeof what, "fft round trip %lld", (long long)L); CHECK_CX(what, ft_roundtrip, t, true, c);
            snprintf(what, sizeof what, "rfft round trip %lld", (long long)L); CHECK_CX(what, ft_rroundtrip, t, true, r);
            if (L > 1) { snprintf(what, sizeof what, "irfft %lld", (long long)L); CHECK_CX(what, ft_irfft, t, true, c); }
        }
        tn_tensor *c = CRANDN(ct, 4, 6, 5), *r = tn_randn(TN_SHAPE(4, 6, 5), rt), *ct_ = tn_transpose(CRANDN(ct, 6, 4, 5), 0, 1);
        CHECK_CX("fft n= dim=0 ortho (padded)", ft_fft_n, tol, true, c);
        CHECK_CX("fft n= cropping", ft_fft_n, tol, true, CRANDN(ct, 20, 3));
        CHECK_CX("fft strided", ft_fft, tol, true, ct_);
        CHECK_CX("irfft odd n ortho", ft_irfft_odd, tol, true, c);
        CHECK_CX("hfft", ft_hfft, tol, true, c);
        CHECK_CX("ihfft", ft_ihfft, tol, true, r);
        CHECK_CX("fft2", ft_fft2, tol, true, c);
        CHECK_CX("ifft2 ortho strided", ft_ifft2, tol, true, ct_);
        CHECK_CX("rfft2", ft_rfft2, tol, true, r);
        CHECK_CX("irfft2 s=", ft_irfft2, tol, true, c);
        CHECK_CX("fftn dims (2, 0)", ft_fftn_dims, tol, true, c);
        CHECK_CX("fftn 4 dims", ft_fftn_all, tol, true, CRANDN(ct, 2, 3, 4, 5));
        CHECK_CX("rfftn 4 dims", ft_rfftn_all, tol, true, tn_randn(TN_SHAPE(2, 3, 4, 6), rt));
        CHECK_CX("irfftn 4 dims", ft_irfftn_all, tol, true, CRANDN(ct, 2, 3, 4, 4));
        CHECK_CX("fftshift of fft", ft_shift, tol, true, c);
        CHECK_CX("fft 0-size batch", ft_fft, 0, true, CRANDN(ct, 0, 8));
        CHECK_CX("rfft 0-size batch", ft_rfft, 0, true, tn_randn(TN_SHAPE(2, 0, 8), rt));
        CHECK_CX("fft of a 1-d signal", ft_fft, tol, true, CRANDN(ct, 16));
        tn_tensor *win = tn_add_scalar(tn_mul_scalar(tn_cos(tn_mul_scalar(tn_arange(0, 16, 1, rt), 2 * 3.14159265358979323846 / 16)), -0.5), 0.5);   /* Hann */
        CHECK_CX("stft", ft_stft, tol, true, tn_randn(TN_SHAPE(2, 90), rt), win);
        CHECK_CX("istft of stft", ft_istft, tol, true, tn_randn(TN_SHAPE(2, 90), rt), win);
        /* the same errors as the CPU's */
        tn_tensor *g = tn_to(c, TN_CUDA);
        CHECK_ERR(tn_fft_fft(g, .norm = "bogus"), "Invalid normalization mode");
        CHECK_ERR(tn_fft_rfft(g), "expects a real input tensor");
        CHECK_ERR(tn_fft_fft(g, .n = 0), "Invalid number of data points");
        CHECK_ERR(tn_fft_fft(tn_to(tn_zeros(TN_SHAPE(4), TN_F16), TN_CUDA)), "Unsupported dtype");
        tn_scope_end();
    }
}

#endif
