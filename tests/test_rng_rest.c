/* The last random streams equal to PyTorch's CPU generator (issue 20 item 6): normal_ of
   bfloat16 (normal_fill in the dtype), normal_ of a non-contiguous tensor (the serial
   kernel, in memory order), torch.binomial's BTRS sampler, nn.init.sparse_, and
   F.gumbel_softmax's noise and gradient. Expected numbers: PyTorch 1.13 after the same
   manual_seed (bindings/python/tests/test_rng_rest.py compares with torch live). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double el(tn_tensor *t, int64_t i) { return tn_item(tn_select(tn_flatten(t), 0, i)); }
static int count_diff(tn_tensor *t, const double *want, int n) {
    int bad = 0;
    for (int i = 0; t && i < n; i++) bad += el(t, i) != want[i];
    return t ? bad : n;
}

TEST(bfloat16_normal_fill_matches_pytorch) {
    static const double want[20] = {1.4609375, 0.291015625, 0.9609375, 1.5703125, -0.671875, -0.11083984375, 0.89453125, -1.3359375, -0.875, 0.32421875,
                                    1.3671875, 0.059326171875, 2.03125, 0.5625, 0.2001953125, -0.69921875, 0.283203125, -0.80859375, -0.443359375, -0.44921875};
    tn_scope_begin();
    tn_manual_seed(0);
    tn_tensor *x = tn_randn(TN_SHAPE(20), TN_BF16);
    CHECK(x && tn_get_dtype(x) == TN_BF16);
    CHECK_MSG(count_diff(x, want, 20) == 0, "%d bfloat16 normals differ from PyTorch's", count_diff(x, want, 20));
    /* the in-place form draws the same way */
    tn_manual_seed(0);
    tn_tensor *y = tn_normal_(tn_empty(TN_SHAPE(20), TN_BF16));
    CHECK(y && count_diff(y, want, 20) == 0);
    tn_scope_end();
}

TEST(noncontiguous_normal_is_serial_in_memory_order) {
    /* PyTorch: w = empty(6, 3).t(); w.normal_() -- values listed in w.t()'s order (memory order) */
    static const double want[18] = {-0.48678075071242677, -0.6038215878840039, -0.5580962308236769, 0.6675243015344896, -0.19741509323400558,
                                    1.9427835329161933, -1.4017020125953694, -0.7625571360284942, 0.631213407129647, -0.8991351628864754,
                                    -0.5577934435782607, 0.6907187884258402, 0.22245857875011651, -0.6662252680581671, 0.684642204505353,
                                    0.5740015890649957, -0.5828826934651677, 0.7679415066984489};
    tn_scope_begin();
    tn_manual_seed(5);
    tn_tensor *base = tn_empty(TN_SHAPE(6, 3), TN_F64);
    tn_tensor *w = tn_transpose(base, 0, 1);
    CHECK(tn_normal_(w) == w);
    CHECK_MSG(count_diff(base, want, 18) == 0, "%d values differ from PyTorch's", count_diff(base, want, 18));
    /* the same stream as 18 single normal draws (the cached Box-Muller pair), not normal_fill's */
    tn_manual_seed(5);
    int bad = 0;
    for (int i = 0; i < 18; i++) bad += tn_item(tn_randn(TN_SHAPE(1), TN_F64)) != want[i];
    CHECK(bad == 0);
    /* a contiguous target of 18 takes normal_fill: other numbers */
    tn_manual_seed(5);
    CHECK(count_diff(tn_normal_(tn_empty(TN_SHAPE(6, 3), TN_F64)), want, 18) > 0);
    /* uniform_ of the transposed view: the values of a contiguous draw, in memory order */
    tn_manual_seed(1);
    tn_tensor *u = tn_rand(TN_SHAPE(6, 3), TN_F64);
    tn_manual_seed(1);
    tn_tensor *b2 = tn_empty(TN_SHAPE(6, 3), TN_F64);
    CHECK(tn_uniform_(tn_transpose(b2, 0, 1)));
    CHECK(tn_allclose(b2, u, .rtol = 0, .atol = 0));
    tn_scope_end();
}

TEST(inplace_random_errors) {
    tn_scope_begin();
    tn_tensor *x = tn_empty(TN_SHAPE(3), TN_F32);
    CHECK_ERR(tn_normal_(x, .std = -1), "normal expects std >= 0.0");
    CHECK_ERR(tn_uniform_(x, .from = 5, .to = 2), "uniform_ expects to return a [from, to) range, but found from=5 > to=2");
    CHECK_ERR(tn_uniform_(x, .from = -3e38, .to = 3e38), "std::numeric_limits<Float>::max()");
    CHECK_ERR(tn_normal_(tn_empty(TN_SHAPE(3), TN_I64)), "\"normal_kernel_cpu\" not implemented for 'Long'");
    CHECK_ERR(tn_uniform_(tn_empty(TN_SHAPE(3), TN_I64)), "not implemented for 'Long'");
    CHECK(tn_normal_(tn_empty(TN_SHAPE(0, 4), TN_F32)) != NULL);
    tn_scope_end();
}

TEST(binomial_matches_pytorch) {
    static const double w64[5] = {18, 965, 13, 4, 1}, w32[5] = {18, 965, 14, 5, 0};
    tn_scope_begin();
    for (int f = 0; f < 2; f++) {
        const tn_dtype dt = f ? TN_F32 : TN_F64;
        tn_manual_seed(3);
        tn_tensor *n = tn_to_dtype(tn_from_data((double[]){100, 1000, 25, 10, 3}, TN_SHAPE(5), TN_F64), dt);
        tn_tensor *p = tn_to_dtype(tn_from_data((double[]){0.3, 0.97, 0.6, 0.5, 0.2}, TN_SHAPE(5), TN_F64), dt);
        tn_tensor *b = tn_binomial(n, p, NULL);
        CHECK(b && tn_get_dtype(b) == dt);
        CHECK_MSG(count_diff(b, f ? w32 : w64, 5) == 0, "%s: %d binomial draws differ from PyTorch's", tn_dtype_name(dt), count_diff(b, f ? w32 : w64, 5));
    }
    /* count <= 0 or p <= 0: 0; p >= 1: count; a NaN p: NaN; a NaN count: NaN (PyTorch hangs) */
    tn_tensor *b = tn_binomial(tn_from_data((double[]){-2, 7, 7, 4, NAN}, TN_SHAPE(5), TN_F64),
                               tn_from_data((double[]){0.5, 0, 1, NAN, 0.5}, TN_SHAPE(5), TN_F64), NULL);
    CHECK(b && el(b, 0) == 0 && el(b, 1) == 0 && el(b, 2) == 7 && isnan(el(b, 3)) && isnan(el(b, 4)));
    /* the mean of large draws (the BTRS branch) */
    tn_manual_seed(4);
    tn_tensor *big = tn_binomial(tn_full(TN_SHAPE(4000), 500, TN_F64), tn_full(TN_SHAPE(4000), 0.3, TN_F64), NULL);
    const double m = tn_item(tn_mean(big));
    CHECK_MSG(fabs(m - 150) < 0.5, "mean %g, expected 150", m);
    tn_scope_end();
}

TEST(init_sparse_matches_pytorch) {
    static const int zeros[8][3] = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, {0, 0, 0}, {1, 0, 0}, {0, 0, 0}, {1, 1, 1}, {0, 0, 1}};
    tn_scope_begin();
    tn_manual_seed(9);
    tn_tensor *w = tn_empty(TN_SHAPE(8, 3), TN_F64);
    CHECK(tn_init_sparse_(w, 0.25) == 0);
    int bad = 0;
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 3; c++) bad += (el(w, r * 3 + c) == 0) != zeros[r][c];
    CHECK_MSG(bad == 0, "%d zero positions differ from PyTorch's", bad);
    CHECK(tn_init_sparse_(tn_empty(TN_SHAPE(3), TN_F32), 0.1) == -1);
    CHECK(strstr(tn_last_error(), "Only tensors with 2 dimensions are supported") != NULL);
    CHECK(tn_init_sparse_(w, NAN) == -1);
    /* sparsity above 1: every entry zero */
    CHECK(tn_init_sparse_(w, 3.0) == 0 && tn_item(tn_count_nonzero(w, NULL, 0)) == 0);
    tn_scope_end();
}

/* gumbel_softmax with the noise of seed 0 each call (so finite differences see one function) */
static tn_tensor *gumbel_fn(tn_tensor *const *in, int n, void *user) {
    (void)n;
    tn_manual_seed(0);
    return tn_gumbel_softmax(in[0], .tau = 0.5, .hard = user != NULL, .dim = 0);
}

TEST(gumbel_softmax) {
    tn_scope_begin();
    tn_manual_seed(2);
    tn_tensor *x = tn_randn(TN_SHAPE(4, 6), TN_F64);
    /* the noise is -log of empty_like(x).exponential_() */
    tn_manual_seed(0);
    tn_tensor *e = tn_exponential_(tn_empty(TN_SHAPE(4, 6), TN_F64));
    tn_tensor *want = tn_softmax(tn_div_scalar(tn_sub(x, tn_log(e)), 0.5), 0);
    tn_manual_seed(0);
    tn_tensor *y = tn_gumbel_softmax(x, .tau = 0.5, .dim = 0);
    CHECK(y && tn_allclose(y, want, .rtol = 0, .atol = 0));
    tn_manual_seed(0);
    tn_tensor *h = tn_gumbel_softmax_str(x, "tau=0.5, hard=True, dim=0");
    CHECK(h && tn_allclose(tn_sum_dims(h, (int64_t[]){0}, 1), tn_ones(TN_SHAPE(6), TN_F64), .rtol = 0, .atol = 1e-12));
    CHECK(h && tn_equal(tn_argmax_dim(h, .dim = 0), tn_argmax_dim(want, .dim = 0)));
    CHECK(h && tn_item(tn_count_nonzero(tn_gt_scalar(h, 0.5), NULL, 0)) == 6);
    /* a non-contiguous input */
    tn_manual_seed(0);
    tn_tensor *yt = tn_gumbel_softmax(tn_transpose(tn_contiguous(tn_transpose(x, 0, 1)), 0, 1), .tau = 0.5, .dim = 0);
    CHECK(yt && tn_allclose(yt, want, .rtol = 0, .atol = 0));
    /* gradients: the soft one's, and the straight-through one's (y_soft's) */
    tn_tensor *xg = tn_clone(x);
    CHECK(tn_requires_grad_(xg, true) == 0);
    CHECK(tn_gradcheck(gumbel_fn, &xg, 1, NULL, .rtol = 1e-4));
    /* hard: the forward is piecewise constant (finite differences see 0), the backward y_soft's */
    tn_tensor *gs = NULL, *gh = NULL;
    for (int hard = 0; hard < 2; hard++) {
        tn_tensor *xh = tn_clone(x);
        CHECK(tn_requires_grad_(xh, true) == 0);
        tn_tensor *out = gumbel_fn(&xh, 1, hard ? (void *)1 : NULL);
        CHECK(out && tn_backward(tn_sum(tn_mul(out, tn_reshape(tn_arange(0, 24, 1, TN_F64), TN_SHAPE(4, 6))))) == 0);
        *(hard ? &gh : &gs) = tn_grad(xh);
    }
    CHECK(gs && gh && tn_allclose(gs, gh, .rtol = 1e-12, .atol = 1e-12) && !tn_allclose(gs, tn_zeros_like(gs), .rtol = 0, .atol = 1e-6));
    CHECK(tn_gradgradcheck(gumbel_fn, &xg, 1, NULL, .rtol = 1e-4));
    /* 0-size, 0-d */
    tn_tensor *z = tn_gumbel_softmax(tn_empty(TN_SHAPE(2, 0, 3), TN_F32), .hard = true);
    CHECK(z && tn_numel(z) == 0 && tn_ndim(z) == 3);
    tn_tensor *s = tn_gumbel_softmax(tn_scalar(1.5));
    CHECK(s && tn_ndim(s) == 0 && tn_item(s) == 1);
    /* errors */
    CHECK_ERR(tn_gumbel_softmax(x, .dim = 2), "out of range");
    CHECK_ERR(tn_gumbel_softmax(tn_ones(TN_SHAPE(3), TN_I64)), "dtype must be a floating point but you specified Long");
    CHECK_ERR(tn_gumbel_softmax_str(x, "temperature=2"), "temperature");
    tn_scope_end();
}

int main(void) {
    RUN(bfloat16_normal_fill_matches_pytorch);
    RUN(noncontiguous_normal_is_serial_in_memory_order);
    RUN(inplace_random_errors);
    RUN(binomial_matches_pytorch);
    RUN(init_sparse_matches_pytorch);
    RUN(gumbel_softmax);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
