/* issue 20's remainders on random streams: torch.multinomial from the default (mt19937)
   generator gives the indices PyTorch 1.13 printed for the same seeds (hard-coded here;
   bindings/python/tests/test_rng_more.py compares with torch live), with and without
   replacement, 1-d and 2-d, float32 and float64, a transposed input, and PyTorch's errors. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static bool same_i64(tn_tensor *t, const int64_t *want, int64_t n) {
    if (!t || tn_get_dtype(t) != TN_I64 || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(t);
    const int64_t *v = (const int64_t *)tn_data_ptr(c);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && v[i] == want[i];
    tn_release(c);
    return ok;
}
/* the next draws of the default stream: both libraries advanced it alike */
static bool next_uniforms(const double *want) {
    tn_tensor *u = tn_rand(TN_SHAPE(2), TN_F64);
    const double *v = u ? (const double *)tn_data_ptr(u) : NULL;
    return v && v[0] == want[0] && v[1] == want[1];
}

TEST(multinomial_matches_pytorch) {
    tn_scope_begin();
    static const float p_[15] = {0.1f, 0.2f, 0.3f, 0.4f, 0, 1, 1, 1, 1, 1, 0, 5, 0, 1, 2};
    tn_tensor *p = tn_from_data(p_, TN_SHAPE(3, 5), TN_F32), *p64 = tn_to_dtype(p, TN_F64);
    /* without replacement: the exponential race, topk of p / E */
    const int64_t race3[9] = {3, 1, 2, 3, 4, 0, 1, 4, 3};
    tn_manual_seed(42);
    tn_tensor *m = tn_multinomial(p, 3, false, NULL);
    CHECK(m && tn_ndim(m) == 2 && tn_shape(m)[0] == 3 && tn_shape(m)[1] == 3);
    CHECK_MSG(same_i64(m, race3, 9), "multinomial(p, 3) seed 42: not PyTorch's indices");
    CHECK_MSG(next_uniforms((const double[]){0.6124365889937913, 0.088109784914571}), "rand(2) after multinomial(p, 3)");
    tn_manual_seed(42);
    CHECK_MSG(same_i64(tn_multinomial(p64, 3, false, NULL), race3, 9), "multinomial(p float64, 3) seed 42");
    tn_manual_seed(42);
    CHECK_MSG(same_i64(tn_multinomial(p, 1, false, NULL), (const int64_t[]){3, 3, 1}, 3), "multinomial(p, 1) seed 42");
    /* with replacement: the inverse CDF row by row, a uniform double per sample */
    static const double q_[5] = {0.2, 0.5, 0.3, 0.0, 1.0};
    tn_tensor *q = tn_from_data(q_, TN_SHAPE(5), TN_F64);
    const int64_t rep12[12] = {4, 4, 2, 4, 4, 4, 1, 2, 4, 1, 2, 1};
    tn_manual_seed(0);
    tn_tensor *r = tn_multinomial(q, 12, true, NULL);
    CHECK(r && tn_ndim(r) == 1 && tn_shape(r)[0] == 12);
    CHECK_MSG(same_i64(r, rep12, 12), "multinomial(q, 12, True) seed 0: not PyTorch's indices");
    CHECK_MSG(next_uniforms((const double[]){0.35526675833930643, 0.6219052486795277}), "rand(2) after multinomial(q, 12, True)");
    tn_manual_seed(0);
    CHECK_MSG(same_i64(tn_multinomial(tn_to_dtype(q, TN_F32), 12, true, NULL), rep12, 12), "multinomial(q float32, 12, True)");
    const int64_t rep6[18] = {3, 1, 2, 2, 1, 3, 2, 3, 4, 2, 1, 1, 4, 1, 1, 1, 1, 1};
    tn_manual_seed(5);
    CHECK_MSG(same_i64(tn_multinomial(p, 6, true, NULL), rep6, 18), "multinomial(p, 6, True) seed 5");
    /* a transposed (column-major) input draws its exponentials in memory order, as empty_like */
    tn_manual_seed(5);
    tn_tensor *pt = tn_transpose(tn_contiguous(tn_transpose(p, 0, 1)), 0, 1);
    CHECK(pt && !tn_is_contiguous(pt));
    CHECK_MSG(same_i64(tn_multinomial(pt, 2, false, NULL), (const int64_t[]){3, 1, 4, 0, 4, 1}, 6), "multinomial(p.t().contiguous().t(), 2)");
    /* a generator of its own */
    tn_generator *g = tn_generator_new(9);
    CHECK_MSG(same_i64(tn_multinomial(q, 3, false, g), (const int64_t[]){4, 2, 0}, 3), "multinomial(q, 3, generator seed 9)");
    tn_generator_free(g);
    tn_scope_end();
}

TEST(multinomial_errors_as_pytorch) {
    tn_scope_begin();
    tn_tensor *neg = tn_from_data((const double[]){1, -1}, TN_SHAPE(2), TN_F64);
    tn_tensor *nan = tn_from_data((const double[]){1, NAN}, TN_SHAPE(2), TN_F64);
    tn_tensor *inf = tn_from_data((const double[]){1, INFINITY}, TN_SHAPE(2), TN_F64);
    /* with replacement the kernel checks each entry as it sums (NaN fails "< 0" first) */
    CHECK_ERR(tn_multinomial(neg, 3, true, NULL), "invalid multinomial distribution (encountering probability entry < 0)");
    CHECK_ERR(tn_multinomial(nan, 3, true, NULL), "invalid multinomial distribution (encountering probability entry < 0)");
    CHECK_ERR(tn_multinomial(inf, 3, true, NULL), "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
    CHECK_ERR(tn_multinomial(tn_zeros(TN_SHAPE(2, 3), TN_F32), 3, true, NULL), "invalid multinomial distribution (sum of probabilities <= 0)");
    CHECK_ERR(tn_multinomial(tn_zeros(TN_SHAPE(2, 0), TN_F32), 3, true, NULL), "sum of probabilities <= 0");
    /* the race checks first */
    CHECK_ERR(tn_multinomial(inf, 1, false, NULL), "probability tensor contains either `inf`, `nan` or element < 0");
    CHECK_ERR(tn_multinomial(nan, 2, false, NULL), "probability tensor contains either `inf`, `nan` or element < 0");
    CHECK_ERR(tn_multinomial(tn_zeros(TN_SHAPE(2), TN_F64), 1, false, NULL), "sum of probabilities <= 0");
    CHECK_ERR(tn_multinomial(neg, 3, false, NULL), "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    CHECK_ERR(tn_multinomial(neg, 0, true, NULL), "cannot sample n_sample <= 0 samples");
    CHECK_ERR(tn_multinomial(tn_ones(TN_SHAPE(1, 1, 2), TN_F32), 1, true, NULL), "prob_dist must be 1 or 2 dim");
    CHECK_ERR(tn_multinomial(tn_ones(TN_SHAPE(2), TN_I64), 1, true, NULL), "multinomial only supports floating-point dtypes");
    /* an empty batch draws nothing and checks nothing, as PyTorch */
    tn_tensor *e = tn_multinomial(tn_zeros(TN_SHAPE(0, 3), TN_F32), 2, false, NULL);
    CHECK(e && tn_ndim(e) == 2 && tn_shape(e)[0] == 0 && tn_shape(e)[1] == 2);
    tn_scope_end();
}

/* a failed draw leaves no lock held: the generator still draws */
TEST(multinomial_error_releases_the_generator) {
    tn_scope_begin();
    tn_tensor *bad = tn_from_data((const float[]){1, 2, -3}, TN_SHAPE(1, 3), TN_F32);
    tn_manual_seed(1);
    CHECK(tn_multinomial(bad, 4, true, NULL) == NULL);
    CHECK(tn_rand(TN_SHAPE(3), TN_F32) != NULL);
    tn_scope_end();
}

/* Philox generators keep their own, device-independent numbers (not PyTorch's) */
TEST(multinomial_philox) {
    tn_scope_begin();
    tn_tensor *p = tn_from_data((const double[]){0, 1, 3, 0, 2, 2, 2, 2}, TN_SHAPE(2, 4), TN_F64);
    tn_generator *a = tn_generator_new_philox(3), *b = tn_generator_new_philox(3);
    tn_tensor *x = tn_multinomial(p, 50, true, a), *y = tn_multinomial(p, 50, true, b);
    CHECK(x && y && tn_equal(x, y));
    tn_tensor *w = tn_multinomial(p, 2, false, a);
    const int64_t *v = w ? (const int64_t *)tn_data_ptr(w) : NULL;
    CHECK(v && v[0] + v[1] == 3 && v[0] * v[1] == 2 && v[2] != v[3]);
    tn_generator_free(a);
    tn_generator_free(b);
    tn_scope_end();
}

int main(void) {
    RUN(multinomial_matches_pytorch);
    RUN(multinomial_errors_as_pytorch);
    RUN(multinomial_error_releases_the_generator);
    RUN(multinomial_philox);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
