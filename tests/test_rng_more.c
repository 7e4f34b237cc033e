/* issue 20's remainders on random streams: torch.multinomial and Tensor's in-place samplers
   (exponential_, geometric_, cauchy_, log_normal_, random_), _standard_gamma and
   _sample_dirichlet from the default (mt19937)
   generator give the numbers PyTorch 1.13 printed for the same seeds (hard-coded here;
   bindings/python/tests/test_rng_more.py compares with torch live): with and without
   replacement, 1-d and 2-d, float32 and float64, transposed tensors, and PyTorch's errors. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <float.h>

static bool same_i64(tn_tensor *t, const int64_t *want, int64_t n) {
    if (!t || tn_get_dtype(t) != TN_I64 || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(t);
    const int64_t *v = (const int64_t *)tn_data_ptr(c);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && v[i] == want[i];
    return ok;   /* c belongs to the caller's scope */
}
static bool same_f32(tn_tensor *t, const float *want, int64_t n) {
    if (!t || tn_get_dtype(t) != TN_F32 || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(t);
    const float *v = (const float *)tn_data_ptr(c);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && v[i] == want[i];
    return ok;   /* c belongs to the caller's scope */
}
/* float64 to a relative 1e-15: 2025 PyTorch's log1p(-u) where 1.13 (which printed these) took log(1 - u) */
static bool close_f64(tn_tensor *t, const double *want, int64_t n, double rtol) {
    if (!t || tn_get_dtype(t) != TN_F64 || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(t);
    const double *v = (const double *)tn_data_ptr(c);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && fabs(v[i] - want[i]) <= rtol * fabs(want[i]);
    return ok;   /* c belongs to the caller's scope */
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
    tn_tensor *m = tn_multinomial(p, 3, NULL);
    CHECK(m && tn_ndim(m) == 2 && tn_shape(m)[0] == 3 && tn_shape(m)[1] == 3);
    CHECK_MSG(same_i64(m, race3, 9), "multinomial(p, 3) seed 42: not PyTorch's indices");
    CHECK_MSG(next_uniforms((const double[]){0.6124365889937913, 0.088109784914571}), "rand(2) after multinomial(p, 3)");
    tn_manual_seed(42);
    CHECK_MSG(same_i64(tn_multinomial(p64, 3, NULL), race3, 9), "multinomial(p float64, 3) seed 42");
    tn_manual_seed(42);
    CHECK_MSG(same_i64(tn_multinomial(p, 1, NULL), (const int64_t[]){3, 3, 1}, 3), "multinomial(p, 1) seed 42");
    /* with replacement: the inverse CDF row by row, a uniform double per sample */
    static const double q_[5] = {0.2, 0.5, 0.3, 0.0, 1.0};
    tn_tensor *q = tn_from_data(q_, TN_SHAPE(5), TN_F64);
    const int64_t rep12[12] = {4, 4, 2, 4, 4, 4, 1, 2, 4, 1, 2, 1};
    tn_manual_seed(0);
    tn_tensor *r = tn_multinomial(q, 12, NULL, .replacement = true);
    CHECK(r && tn_ndim(r) == 1 && tn_shape(r)[0] == 12);
    CHECK_MSG(same_i64(r, rep12, 12), "multinomial(q, 12, True) seed 0: not PyTorch's indices");
    CHECK_MSG(next_uniforms((const double[]){0.35526675833930643, 0.6219052486795277}), "rand(2) after multinomial(q, 12, True)");
    tn_manual_seed(0);
    CHECK_MSG(same_i64(tn_multinomial(tn_to_dtype(q, TN_F32), 12, NULL, .replacement = true), rep12, 12), "multinomial(q float32, 12, True)");
    const int64_t rep6[18] = {3, 1, 2, 2, 1, 3, 2, 3, 4, 2, 1, 1, 4, 1, 1, 1, 1, 1};
    tn_manual_seed(5);
    CHECK_MSG(same_i64(tn_multinomial(p, 6, NULL, .replacement = true), rep6, 18), "multinomial(p, 6, True) seed 5");
    /* a transposed (column-major) input draws its exponentials in memory order, as empty_like */
    tn_manual_seed(5);
    tn_tensor *pt = tn_transpose(tn_contiguous(tn_transpose(p, 0, 1)), 0, 1);
    CHECK(pt && !tn_is_contiguous(pt));
    CHECK_MSG(same_i64(tn_multinomial(pt, 2, NULL), (const int64_t[]){3, 1, 4, 0, 4, 1}, 6), "multinomial(p.t().contiguous().t(), 2)");
    /* a generator of its own */
    tn_generator *g = tn_generator_new(9);
    CHECK_MSG(same_i64(tn_multinomial(q, 3, g), (const int64_t[]){4, 2, 0}, 3), "multinomial(q, 3, generator seed 9)");
    tn_generator_free(g);
    tn_scope_end();
}

TEST(multinomial_errors_as_pytorch) {
    tn_scope_begin();
    tn_tensor *neg = tn_from_data((const double[]){1, -1}, TN_SHAPE(2), TN_F64);
    tn_tensor *nan = tn_from_data((const double[]){1, NAN}, TN_SHAPE(2), TN_F64);
    tn_tensor *inf = tn_from_data((const double[]){1, INFINITY}, TN_SHAPE(2), TN_F64);
    /* with replacement the kernel checks each entry as it sums (NaN fails "< 0" first) */
    CHECK_ERR(tn_multinomial(neg, 3, NULL, .replacement = true), "invalid multinomial distribution (encountering probability entry < 0)");
    CHECK_ERR(tn_multinomial(nan, 3, NULL, .replacement = true), "invalid multinomial distribution (encountering probability entry < 0)");
    CHECK_ERR(tn_multinomial(inf, 3, NULL, .replacement = true), "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
    CHECK_ERR(tn_multinomial(tn_zeros(TN_SHAPE(2, 3), TN_F32), 3, NULL, .replacement = true), "invalid multinomial distribution (sum of probabilities <= 0)");
    CHECK_ERR(tn_multinomial(tn_zeros(TN_SHAPE(2, 0), TN_F32), 3, NULL, .replacement = true), "sum of probabilities <= 0");
    /* the race checks first */
    CHECK_ERR(tn_multinomial(inf, 1, NULL), "probability tensor contains either `inf`, `nan` or element < 0");
    CHECK_ERR(tn_multinomial(nan, 2, NULL), "probability tensor contains either `inf`, `nan` or element < 0");
    CHECK_ERR(tn_multinomial(tn_zeros(TN_SHAPE(2), TN_F64), 1, NULL), "sum of probabilities <= 0");
    CHECK_ERR(tn_multinomial(neg, 3, NULL), "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    CHECK_ERR(tn_multinomial(neg, 0, NULL, .replacement = true), "cannot sample n_sample <= 0 samples");
    CHECK_ERR(tn_multinomial(tn_ones(TN_SHAPE(1, 1, 2), TN_F32), 1, NULL, .replacement = true), "prob_dist must be 1 or 2 dim");
    CHECK_ERR(tn_multinomial(tn_ones(TN_SHAPE(2), TN_I64), 1, NULL, .replacement = true), "multinomial only supports floating-point dtypes");
    /* an empty batch draws nothing and checks nothing, as PyTorch */
    tn_tensor *e = tn_multinomial(tn_zeros(TN_SHAPE(0, 3), TN_F32), 2, NULL);
    CHECK(e && tn_ndim(e) == 2 && tn_shape(e)[0] == 0 && tn_shape(e)[1] == 2);
    tn_scope_end();
}

/* a failed draw leaves no lock held: the generator still draws */
TEST(multinomial_error_releases_the_generator) {
    tn_scope_begin();
    tn_tensor *bad = tn_from_data((const float[]){1, 2, -3}, TN_SHAPE(1, 3), TN_F32);
    tn_manual_seed(1);
    CHECK(tn_multinomial(bad, 4, NULL, .replacement = true) == NULL);
    CHECK(tn_rand(TN_SHAPE(3), TN_F32) != NULL);
    tn_scope_end();
}

/* Philox generators keep their own, device-independent numbers (not PyTorch's) */
TEST(multinomial_philox) {
    tn_scope_begin();
    tn_tensor *p = tn_from_data((const double[]){0, 1, 3, 0, 2, 2, 2, 2}, TN_SHAPE(2, 4), TN_F64);
    tn_generator *a = tn_generator_new_philox(3), *b = tn_generator_new_philox(3);
    tn_tensor *x = tn_multinomial(p, 50, a, .replacement = true), *y = tn_multinomial(p, 50, b, .replacement = true);
    CHECK(x && y && tn_equal(x, y));
    tn_tensor *w = tn_multinomial(p, 2, a);
    const int64_t *v = w ? (const int64_t *)tn_data_ptr(w) : NULL;
    CHECK(v && v[0] + v[1] == 3 && v[0] * v[1] == 2 && v[2] != v[3]);
    tn_generator_free(a);
    tn_generator_free(b);
    tn_scope_end();
}

/* Tensor.exponential_ / geometric_ / cauchy_ / log_normal_: PyTorch 1.13's numbers for the seeds */
TEST(samplers_match_pytorch) {
    tn_scope_begin();
    tn_manual_seed(3);
    CHECK_MSG(same_f32(tn_exponential_(tn_empty(TN_SHAPE(6), TN_F32), .lambd = 2.0),
                       (const float[]){0.0173517279f, 0.16895479f, 0.741215348f, 0.0961417258f, 0.70400393f, 0.468566507f}, 6), "exponential_(2) float32");
    tn_manual_seed(3);
    CHECK_MSG(close_f64(tn_exponential_(tn_empty(TN_SHAPE(4), TN_F64), .lambd = 0.5),
                        (const double[]){0.06940690964303482, 0.6758191730473401, 2.9648612741869735, 0.3845668944057265}, 4, 1e-15), "exponential_(0.5) float64");
    /* a transposed tensor fills in memory order, as TensorIterator */
    tn_manual_seed(3);
    tn_tensor *tt = tn_transpose(tn_empty(TN_SHAPE(3, 2), TN_F32), 0, 1);
    CHECK(tn_exponential_(tt) == tt);   /* returned, borrowed */
    CHECK_MSG(same_f32(tn_transpose(tt, 0, 1), (const float[]){0.0347034559f, 0.337909579f, 1.4824307f, 0.192283452f, 1.40800786f, 0.937133014f}, 6),
              "exponential_ of a transposed tensor");
    tn_manual_seed(4);
    CHECK_MSG(same_i64(tn_geometric_(tn_empty(TN_SHAPE(8), TN_I64), 0.2), (const int64_t[]){4, 2, 13, 1, 1, 3, 4, 2}, 8), "geometric_(0.2) int64");
    tn_manual_seed(4);
    CHECK_MSG(same_f32(tn_geometric_(tn_empty(TN_SHAPE(8), TN_F32), 0.2), (const float[]){4, 2, 13, 1, 1, 3, 4, 2}, 8), "geometric_(0.2) float32");
    tn_manual_seed(5);
    CHECK_MSG(close_f64(tn_cauchy_(tn_empty(TN_SHAPE(4), TN_F64), .median = 0.3, .sigma = 1.7),
                        (const double[]){1.1131432283645948, -1.2988410360706677, -0.49456704983055644, -0.8156777452590953}, 4, 0), "cauchy_(0.3, 1.7) float64, to the bit");
    tn_manual_seed(5);
    CHECK_MSG(same_f32(tn_cauchy_(tn_empty(TN_SHAPE(4), TN_F32), .median = 0.3, .sigma = 1.7), (const float[]){1.11314321f, -1.298841f, -0.494567037f, -0.815677762f}, 4), "cauchy_ float32");
    /* log_normal_: normal_distribution<double> with its cached second value, then exp */
    tn_manual_seed(6);
    CHECK_MSG(same_f32(tn_log_normal_(tn_empty(TN_SHAPE(5), TN_F32)), (const float[]){0.0640048012f, 0.372571439f, 11.4379234f, 0.672396064f, 0.143257648f}, 5),
              "log_normal_() float32");
    CHECK_MSG(close_f64(tn_log_normal_(tn_empty(TN_SHAPE(3), TN_F64), .mean = 0.3, .std = 0.7), (const double[]){1.5286578843444099, 3.739574046021722, 2.1132334261854435}, 3, 0),
              "log_normal_(0.3, 0.7) float64 after, to the bit");
    /* 0 elements draw nothing */
    tn_manual_seed(3);
    tn_tensor *e = tn_empty(TN_SHAPE(0, 3), TN_F32);
    CHECK(tn_exponential_(e) == e && tn_cauchy_(e) == e);
    CHECK_MSG(same_f32(tn_exponential_(tn_empty(TN_SHAPE(1), TN_F32), .lambd = 2.0), (const float[]){0.0173517279f}, 1), "exponential_ after empty draws");
    tn_scope_end();
}

TEST(random_matches_pytorch) {
    tn_scope_begin();
    tn_manual_seed(7);
    CHECK_MSG(same_f32(tn_random_(tn_empty(TN_SHAPE(6), TN_F32)),
                       (const float[]){8974492, 3335306, 11059538, 11020709, 3904979, 7131097}, 6), "random_() float32: random() %% (2^24 + 1)");
    tn_manual_seed(7);
    CHECK_MSG(same_i64(tn_random_(tn_empty(TN_SHAPE(4), TN_I64)),
                       (const int64_t[]){1407639518939636932, 5163590386780219894, 8087222774582268115, 4122204982959224423}, 4), "random_() int64: random64() %% 2^63");
    tn_manual_seed(7);
    CHECK_MSG(same_i64(tn_random_(tn_empty(TN_SHAPE(8), TN_I64), .from = -3, .to = 10), (const int64_t[]){3, 9, 1, 1, 0, 2, -1, 2}, 8), "random_(-3, 10)");
    tn_manual_seed(7);
    tn_tensor *u8 = tn_random_(tn_empty(TN_SHAPE(6), TN_U8), .to = 200);
    CHECK_MSG(same_i64(tn_to_dtype(u8, TN_I64), (const int64_t[]){15, 92, 121, 86, 83, 147}, 6), "random_(200) uint8");
    tn_manual_seed(7);
    CHECK_MSG(same_f32(tn_random_(tn_empty(TN_SHAPE(4), TN_F32), .from = -((int64_t)1 << 60), .to = (int64_t)1 << 60),
                       (const float[]){2.54718018e+17f, -6.01016695e+17f, 1.67724486e+16f, 6.63440781e+17f}, 4), "random_(-2^60, 2^60) float32: random64()");
    tn_manual_seed(7);
    CHECK_MSG(same_i64(tn_random_(tn_empty(TN_SHAPE(3), TN_I64), .from = TN_NONE),
                       (const int64_t[]){1407639518939636932, -4059781650074555914, 8087222774582268115}, 3), "random_(-2^63, None): all 64 bits");
    tn_manual_seed(7);
    CHECK_MSG(same_i64(tn_to_dtype(tn_random_(tn_empty(TN_SHAPE(8), TN_BOOL)), TN_I64), (const int64_t[]){1, 0, 1, 0, 1, 1, 1, 1}, 8), "random_() bool");
    /* float from / to moved to what float32 represents (update_from / update_to) */
    tn_manual_seed(7);
    CHECK_MSG(same_f32(tn_random_(tn_empty(TN_SHAPE(6), TN_F32), .from = 16777217, .to = 16777220),
                       (const float[]){16777216, 16777216, 16777216, 16777216, 16777216, 16777216}, 6), "random_(2^24 + 1, 2^24 + 4) float32");
    tn_manual_seed(7);
    tn_tensor *x = tn_transpose(tn_empty(TN_SHAPE(4, 3), TN_I64), 0, 1);
    CHECK(tn_random_(x, .to = 1000) == x);
    CHECK_MSG(same_i64(tn_transpose(x, 0, 1), (const int64_t[]){615, 892, 721, 286, 283, 347, 287, 279, 988, 761, 158, 631}, 12), "random_ of a transposed tensor");
    tn_scope_end();
}

TEST(sampler_errors_as_pytorch) {
    tn_scope_begin();
    tn_tensor *f = tn_empty(TN_SHAPE(3), TN_F32), *l = tn_empty(TN_SHAPE(3), TN_I64);
    CHECK_ERR(tn_exponential_(f, .lambd = 0), "exponential_ expects lambda > 0.0, but found lambda=0");   /* 2025 PyTorch */
    CHECK_ERR(tn_exponential_(f, .lambd = NAN), "exponential_ expects lambda > 0.0");
    CHECK_ERR(tn_exponential_(l), "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Long");
    CHECK_ERR(tn_geometric_(f, 0), "geometric_ expects p to be in (0, 1), but got p=0");
    CHECK_ERR(tn_geometric_(f, 1), "geometric_ expects p to be in (0, 1), but got p=1");
    CHECK_ERR(tn_geometric_(tn_empty(TN_SHAPE(3), TN_BOOL), 0.5), "\"geometric_cpu\" not implemented for 'Bool'");
    CHECK_ERR(tn_cauchy_(f, .sigma = 0), "cauchy_ expects sigma > 0.0, but found sigma=0");   /* 2025 PyTorch */
    CHECK_ERR(tn_cauchy_(l), "Cauchy distribution is a continuous probability distribution");
    CHECK_ERR(tn_log_normal_(f, .mean = 0, .std = 0), "log_normal_ expects std > 0.0, but found std=0");
    CHECK_ERR(tn_log_normal_(l), "LogNormal distribution is a continuous probability distribution");
    CHECK_ERR(tn_random_(f, .from = 5, .to = 2), "random_ expects 'from' to be less than 'to', but got from=5 >= to=2");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(3), TN_U8), .to = 300), "to - 1 is out of bounds for unsigned char");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(3), TN_U8), .from = -1, .to = 3), "from is out of bounds for unsigned char");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(3), TN_I32), .to = (int64_t)1 << 40), "to - 1 is out of bounds for int");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(3), TN_BOOL), .to = 3), "to - 1 is out of bounds for bool");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(3), TN_I32), .from = TN_NONE), "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
    CHECK_ERR(tn_random_(f, .from = 16777217), "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from=16777217 > to_inc=16777216");
    CHECK_ERR(tn_random_(tn_empty(TN_SHAPE(3), TN_F16), .to = 100000), "to - 1 is out of bounds for c10::Half");
    /* a leaf that requires grad refuses in-place writes */
    tn_tensor *w = tn_zeros(TN_SHAPE(3), TN_F32);
    CHECK(tn_requires_grad_(w, true) == 0);
    CHECK_ERR(tn_exponential_(w), "leaf");
    tn_scope_end();
}

/* Philox: the same transformations of the generator's counters, reproducible */
TEST(samplers_philox) {
    tn_scope_begin();
    tn_generator *a = tn_generator_new_philox(11), *b = tn_generator_new_philox(11);
    tn_tensor *x = tn_exponential_(tn_empty(TN_SHAPE(50), TN_F64), .lambd = 2.0, .generator = a), *y = tn_rand_gen(TN_SHAPE(50), TN_F64, b);
    CHECK(x && y && tn_allclose(x, tn_div_scalar(tn_neg(tn_log1p(tn_neg(y))), 2.0), .rtol = 0, .atol = 0));
    tn_tensor *r = tn_random_(tn_empty(TN_SHAPE(100), TN_I64), .from = -4, .to = 4, .generator = a);
    CHECK(r && tn_item(tn_amin(r, NULL, 0)) >= -4 && tn_item(tn_amax(r, NULL, 0)) <= 3);
    tn_tensor *ln = tn_log_normal_(tn_empty(TN_SHAPE(10), TN_F32), .mean = 0, .std = 1, .generator = a);
    CHECK(ln && tn_item(tn_amin(ln, NULL, 0)) > 0);
    tn_generator_free(a);
    tn_generator_free(b);
    tn_scope_end();
}

/* torch._standard_gamma and torch._sample_dirichlet (Gamma, Beta, Chi2, StudentT, Dirichlet
   sample through them): PyTorch 1.13's numbers, float32 with the kernel's float steps */
TEST(gamma_dirichlet_match_pytorch) {
    tn_scope_begin();
    tn_tensor *a = tn_from_data((const float[]){0.3f, 1.0f, 2.5f, 7.0f, 0.05f, 40.0f}, TN_SHAPE(6), TN_F32);
    tn_manual_seed(8);
    CHECK_MSG(same_f32(tn_standard_gamma(a, NULL), (const float[]){0.00364979147f, 0.509834588f, 1.23018098f, 10.0003309f, 9.04324833e-14f, 49.3787079f}, 6),
              "_standard_gamma float32 seed 8");
    CHECK_MSG(close_f64(tn_standard_gamma(tn_to_dtype(a, TN_F64), NULL), (const double[]){0.5628818833746596, 0.535907921037244, 4.870564950121049, 9.781480832490907,
                                                                                         3.5935617014093866e-12, 45.358392394913785}, 6, 0),
              "_standard_gamma float64 after, to the bit");
    CHECK_MSG(next_uniforms((const double[]){0.5053809516769739, 0.7668557747400309}), "rand(2) after the gammas");
    tn_manual_seed(1);
    CHECK_MSG(same_f32(tn_standard_gamma(tn_from_data((const float[]){0, 1e-30f}, TN_SHAPE(2), TN_F32), NULL), (const float[]){FLT_MIN, FLT_MIN}, 2),
              "_standard_gamma of 0 and 1e-30: float32's smallest normal");
    tn_tensor *c = tn_from_data((const float[]){0.5f, 1.0f, 2.0f, 3.0f, 0.2f, 1.0f}, TN_SHAPE(2, 3), TN_F32);
    tn_manual_seed(9);
    CHECK_MSG(same_f32(tn_sample_dirichlet(c, NULL), (const float[]){0.41049844f, 0.0862338766f, 0.503267705f, 0.828372777f, 0.00158403022f, 0.1700432f}, 6),
              "_sample_dirichlet float32 seed 9");
    tn_manual_seed(9);
    CHECK_MSG(close_f64(tn_sample_dirichlet(tn_to_dtype(c, TN_F64), NULL), (const double[]){0.4104984458026845, 0.0862338759328442, 0.5032676782644712,
                                                                                           0.8283727660980051, 0.0015840302397073544, 0.1700432036622875}, 6, 1e-15),
              "_sample_dirichlet float64 seed 9");
    tn_scope_end();
}

/* F.rrelu(training=True): a uniform slope in [lower, upper) for each x <= 0 only, in order */
TEST(rrelu_noise_matches_pytorch) {
    tn_scope_begin();
    tn_tensor *x = tn_from_data((const float[]){-1, 2, -0.5f, 0, 3, -2}, TN_SHAPE(6), TN_F32);
    tn_manual_seed(12);
    CHECK_MSG(same_f32(tn_rrelu(x, .lower = 0.1, .upper = 0.4, .training = true), (const float[]){-0.317649961f, 2, -0.143265262f, 0, 3, -0.258961022f}, 6), "rrelu(training) seed 12");
    CHECK_MSG(next_uniforms((const double[]){0.8495237114325871, 0.5938825769253581}), "rand(2) after rrelu: four draws, for the four x <= 0");
    tn_scope_end();
}

/* ---- ops that lived only in the Python package, now in C: isclose, dist, F.normalize ---- */
static tn_tensor *f_normalize(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_normalize(tn_transpose(in[0], 0, 1), .dim = -1); }   /* strided */
static tn_tensor *f_normalize_p3(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_normalize(in[0], .p = 3, .dim = 0); }
static tn_tensor *f_dist(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_dist(in[0], in[1]); }
static tn_tensor *f_dist_p3(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_dist(in[0], in[1], .p = 3); }

static bool close_vals(tn_tensor *t, const double *want, int64_t n) {
    return t && tn_numel(t) == n && close_f64(tn_to_dtype(t, TN_F64), want, n, 1e-15);
}

TEST(isclose_dist_normalize_as_pytorch) {
    tn_scope_begin();
    tn_tensor *x = tn_from_data((const double[]){3, -4, 0.5, 0, 0, 0}, TN_SHAPE(2, 3), TN_F64);
    /* F.normalize: the norm clamped at eps, so a zero row stays zero */
    CHECK_MSG(close_vals(tn_normalize(x), (const double[]){0.5970223141259935, -0.7960297521679913, 0.09950371902099892, 0, 0, 0}, 6), "normalize(x)");
    tn_tensor *n1 = tn_normalize(x, .p = 1, .dim = 0);
    const double n1w[6] = {1, -1, 1, 0, 0, 0};
    CHECK_MSG(n1 && tn_numel(n1) == 6 && close_f64(n1, n1w, 6, 0), "normalize(x, p=1, dim=0)");
    CHECK(tn_normalize_str(x, "p=1, dim=0") && tn_equal(tn_normalize_str(x, "p=1, dim=0"), n1));
    CHECK_ERR(tn_normalize_str(x, "q=1"), "tn_normalize: unknown option 'q'");
    CHECK_ERR(tn_normalize(x, .dim = 5), "tn_normalize");
    /* dist: the p-norm of the broadcast difference */
    tn_tensor *y = tn_from_data((const double[]){1, 2, -1}, TN_SHAPE(3), TN_F64);
    CHECK_MSG(close_vals(tn_dist(x, y), (const double[]){6.946221994724902}, 1), "dist(x, y)");
    CHECK_MSG(close_vals(tn_dist(x, y, .p = 1), (const double[]){13.5}, 1), "dist(x, y, 1)");
    CHECK_MSG(close_vals(tn_dist_str(x, y, "p=inf"), (const double[]){6}, 1), "dist(x, y, inf)");
    CHECK(tn_ndim(tn_dist(x, y)) == 0);
    CHECK_ERR(tn_dist(x, tn_ones(TN_SHAPE(4), TN_F64)), "tn_dist");
    /* isclose: equal, or finite within atol + |rtol b|; NaN only with equal_nan; ints with tolerances */
    tn_tensor *a = tn_from_data((const float[]){1, 1.0001f, NAN, INFINITY, 2}, TN_SHAPE(5), TN_F32);
    tn_tensor *b = tn_from_data((const float[]){1, 1, NAN, INFINITY, INFINITY}, TN_SHAPE(5), TN_F32);
    tn_tensor *c = tn_isclose(a, b);
    CHECK(c && tn_get_dtype(c) == TN_BOOL && same_i64(tn_to_dtype(c, TN_I64), (const int64_t[]){1, 0, 0, 1, 0}, 5));
    CHECK(same_i64(tn_to_dtype(tn_isclose(a, b, .equal_nan = true), TN_I64), (const int64_t[]){1, 0, 1, 1, 0}, 5));
    tn_tensor *i1 = tn_from_data((const int64_t[]){1, 100, 1000}, TN_SHAPE(3), TN_I64), *i2 = tn_from_data((const int64_t[]){1, 101, 1001}, TN_SHAPE(3), TN_I64);
    CHECK(same_i64(tn_to_dtype(tn_isclose(i1, i2, .rtol = 0.001, .atol = 0), TN_I64), (const int64_t[]){1, 0, 1}, 3));
    tn_tensor *bc = tn_isclose(tn_zeros(TN_SHAPE(2, 1), TN_F32), tn_full(TN_SHAPE(3), 1e-9, TN_F32));
    CHECK(bc && tn_ndim(bc) == 2 && tn_shape(bc)[0] == 2 && tn_shape(bc)[1] == 3 && tn_item(tn_all(bc)) == 1);
    CHECK_ERR(tn_isclose(a, tn_to_dtype(b, TN_F64)), "Float did not match Double");
    CHECK_ERR(tn_isclose(a, b, .rtol = -1), "rtol must be greater than or equal to zero, but got -1");
    CHECK_ERR(tn_isclose(a, b, .atol = -1), "atol must be greater than or equal to zero, but got -1");
    /* gradients in float64 on random inputs (normalize's through a transposed view) */
    tn_manual_seed(0);
    tn_tensor *r = tn_randn(TN_SHAPE(3, 4), TN_F64), *s2 = tn_randn(TN_SHAPE(4), TN_F64);
    CHECK(tn_requires_grad_(r, true) == 0 && tn_requires_grad_(s2, true) == 0);
    tn_tensor *ins[2] = {r, s2};
    CHECK(tn_gradcheck(f_normalize, ins, 1, NULL));
    CHECK(tn_gradcheck(f_normalize_p3, ins, 1, NULL));
    tn_clear_error();
    CHECK_MSG(tn_gradgradcheck(f_normalize, ins, 1, NULL), "gradgradcheck normalize: %s", tn_last_error());
    CHECK(tn_gradcheck(f_dist, ins, 2, NULL));
    CHECK(tn_gradcheck(f_dist_p3, ins, 2, NULL));
    CHECK(tn_gradgradcheck(f_dist, ins, 2, NULL));
    tn_scope_end();
}

/* rand / uniform_ in float16 and bfloat16: 11 (8) bits of random() over half-rounded bounds */
TEST(half_uniform_matches_pytorch) {
    tn_scope_begin();
    tn_manual_seed(3);
    CHECK_MSG(close_vals(tn_rand(TN_SHAPE(5), TN_F16), (const double[]){0.9267578125, 0.82421875, 0.62158203125, 0.81396484375, 0.46484375}, 5), "rand(5, float16) seed 3");
    tn_tensor *u = tn_uniform(-2.3, 7.1, TN_SHAPE(4), TN_BF16, NULL);
    CHECK_MSG(u && tn_get_dtype(u) == TN_BF16 && close_vals(u, (const double[]){5.03125, -2.296875, -1.53125, 6.96875}, 4), "uniform_(-2.3, 7.1) bfloat16 after");
    tn_scope_end();
}

int main(void) {
    RUN(multinomial_matches_pytorch);
    RUN(multinomial_errors_as_pytorch);
    RUN(multinomial_error_releases_the_generator);
    RUN(multinomial_philox);
    RUN(samplers_match_pytorch);
    RUN(random_matches_pytorch);
    RUN(sampler_errors_as_pytorch);
    RUN(samplers_philox);
    RUN(gamma_dirichlet_match_pytorch);
    RUN(rrelu_noise_matches_pytorch);
    RUN(isclose_dist_normalize_as_pytorch);
    RUN(half_uniform_matches_pytorch);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
