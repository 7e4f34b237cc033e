/* The default generator is PyTorch's CPU generator (issue 20 item 6): mt19937 against the
   standard's reference values, and tn_manual_seed + the random functions, layers, dropout and
   the loader against numbers PyTorch 1.13 printed for the same seeds (hard-coded here;
   bindings/python/tests/test_rng_matches_torch.py compares with torch live). Also the raw
   draws, PyTorch's state layout, the lock under threads, and the Philox kind. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double el(tn_tensor *t, int64_t i) { return tn_item(tn_select(tn_flatten(t), 0, i)); }

/* float32 results to the bit (the value PyTorch printed with %.9g reads back exactly) */
static void check_f32(tn_tensor *t, const float *want, int n, const char *what) {
    int bad = 0;
    CHECK_MSG(t && tn_get_dtype(t) == TN_F32 && tn_numel(t) >= n, "%s: no float32 result", what);
    for (int i = 0; t && i < n && i < tn_numel(t); i++) {
        float v = (float)el(t, i);
        if (v != want[i] && bad++ == 0) fail_at(__LINE__, "%s[%d] = %.9g, PyTorch %.9g", what, i, v, want[i]);
    }
    CHECK_MSG(bad == 0, "%s: %d values differ from PyTorch's", what, bad);
}
static void check_f64(tn_tensor *t, const double *want, int n, const char *what) {
    int bad = 0;
    for (int i = 0; t && i < n; i++) bad += el(t, i) != want[i];
    CHECK_MSG(t && tn_get_dtype(t) == TN_F64 && bad == 0, "%s: %d values differ from PyTorch's", what, bad);
}
static void check_i64(tn_tensor *t, const int64_t *want, int n, const char *what) {
    int bad = 0;
    for (int i = 0; t && i < n; i++) bad += (int64_t)el(t, i) != want[i];
    CHECK_MSG(t && tn_numel(t) == n && bad == 0, "%s: %d values differ from PyTorch's", what, bad);
}

/* std::mt19937 with the default seed 5489: its first outputs, and the C++ standard's
   check that the 10000th is 4123659995 */
TEST(mt19937_reference) {
    tn_generator *g = tn_generator_new(5489);
    CHECK(g && g->kind == TN_GEN_MT19937 && g->seed == 5489);
    const uint32_t first[5] = {3499211612u, 581869302u, 3890346734u, 3586334585u, 545404204u};
    for (int i = 0; g && i < 5; i++) CHECK_MSG(tn_generator_random(g) == first[i], "output %d", i + 1);
    uint32_t v = 0;
    for (int i = 5; g && i < 10000; i++) v = tn_generator_random(g);
    CHECK_MSG(v == 4123659995u, "10000th output %u, expected 4123659995", v);
    /* random64: two outputs, the first the high half; uniform: its low 53 bits */
    tn_generator_manual_seed(g, 5489);
    CHECK(tn_generator_random64(g) == (((uint64_t)3499211612u << 32) | 581869302u));
    CHECK(tn_generator_uniform(g) == (double)((((uint64_t)3890346734u << 32) | 3586334585u) & ((UINT64_C(1) << 53) - 1)) * 0x1.0p-53);
    /* the seed's low 32 bits seed the state, as PyTorch's; initial_seed keeps all 64 */
    tn_generator *h = tn_generator_new(((uint64_t)77 << 32) | 5489);
    CHECK(h && tn_generator_random(h) == first[0] && h->seed == (((uint64_t)77 << 32) | 5489));
    tn_generator_free(g);
    tn_generator_free(h);
}

TEST(random_functions_match_pytorch) {
    tn_scope_begin();
    tn_manual_seed(42);
    const float rand42[5] = {0.882269263f, 0.915003955f, 0.38286376f, 0.959305644f, 0.390448213f};
    check_f32(tn_rand(TN_SHAPE(5), TN_F32), rand42, 5, "rand(5) seed 42");
    const double randnext[3] = {0.80716304715084375, 0.34913070488864828, 0.065487459180127994};
    check_f64(tn_rand(TN_SHAPE(3), TN_F64), randnext, 3, "rand(3, float64) after");
    /* randn below 16 elements: Box-Muller over two uniform doubles, cached sine half */
    tn_manual_seed(42);
    const float randn5[5] = {0.336690366f, 0.128809407f, 0.234462366f, 0.23033303f, -1.12285638f};
    check_f32(tn_randn(TN_SHAPE(5), TN_F32), randn5, 5, "randn(5)");
    tn_manual_seed(42);
    const double randn3[3] = {0.33669035438385886, 0.1288094051365897, 0.23446236336153173};
    check_f64(tn_randn(TN_SHAPE(3), TN_F64), randn3, 3, "randn(3, float64)");
    /* 16 and more: normal_fill (uniforms, 8 pairs per 16, the last 16 redrawn) */
    tn_manual_seed(42);
    const float randn20[20] = {1.92691529f, 1.48728406f, 0.900717199f, -2.10552096f, -0.758131146f, 1.07831764f, 0.800800562f,
                               1.68062055f, 0.355859905f, -0.686622977f, -0.493356347f, 0.241487786f, -0.23162432f, 0.041759491f,
                               -0.251575291f, 0.859858513f, -0.309726775f, -0.395710498f, 0.803409338f, -0.621595383f};
    check_f32(tn_randn(TN_SHAPE(4, 5), TN_F32), randn20, 20, "randn(4, 5)");
    tn_manual_seed(42);
    const double randn17[17] = {0.29955628775026372, 1.504572275678796, 1.2715909667771088, 0.61866999388561705, -0.037203007270524932,
                                1.0352472972512925, -0.010085521702337353, 0.089480160465603573, 0.038435238263354446,
                                0.39000348360357029, -0.57984145547421084, 0.87589388464802198, 0.39238484373268534,
                                1.1084611814514329, 0.86517346471190737, 0.85521596147228696, 0.24941187969157649};
    check_f64(tn_randn(TN_SHAPE(17), TN_F64), randn17, 17, "randn(17, float64)");
    tn_manual_seed(7);
    const double normal4[4] = {1.5596147075450144, 4.3584238961706072, 4.8404648270118695, -1.3430320637830921};
    check_f64(tn_normal(2, 3, TN_SHAPE(4), TN_F64, NULL), normal4, 4, "normal_(2, 3)");
    tn_manual_seed(7);
    const float unif4[4] = {1.13969016f, -0.204787254f, 1.63684678f, 1.62756109f};
    check_f32(tn_uniform(-1, 3, TN_SHAPE(4), TN_F32, NULL), unif4, 4, "uniform_(-1, 3)");
    /* randint: random() % range below 2^32, random64() from there */
    tn_manual_seed(0);
    const int64_t ri[10] = {-1, 4, -2, -5, -2, 4, 2, -2, 2, -2};
    check_i64(tn_randint(-5, 5, TN_SHAPE(10), TN_I64, NULL), ri, 10, "randint(-5, 5)");
    tn_manual_seed(0);
    const int64_t rbig[4] = {-358231004625, -593374360384, 291447657211, -258354086553};
    check_i64(tn_randint(-((int64_t)1 << 40), (int64_t)1 << 40, TN_SHAPE(4), TN_I64, NULL), rbig, 4, "randint(-2^40, 2^40)");
    tn_manual_seed(0);
    const int64_t perm[10] = {4, 1, 7, 5, 3, 9, 0, 8, 6, 2};
    check_i64(tn_randperm(10, TN_I64, NULL), perm, 10, "randperm(10)");
    tn_manual_seed(0);
    check_i64(tn_randperm(10, TN_I32, NULL), perm, 10, "randperm(10, int32)");
    tn_manual_seed(3);
    const int64_t bern[16] = {1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    check_i64(tn_bernoulli_p(TN_SHAPE(16), 0.3, TN_F32, NULL), bern, 16, "bernoulli_(0.3)");
    tn_manual_seed(3);
    const float drop[20] = {2, 2, 0, 2, 0, 0, 2, 2, 2, 0, 2, 0, 2, 2, 0, 2, 2, 0, 0, 2};
    check_f32(tn_dropout(tn_ones(TN_SHAPE(20), TN_F32)), drop, 20, "dropout(ones(20), 0.5)");
    /* 0-size draws take nothing */
    tn_manual_seed(42);
    tn_tensor *e = tn_randn(TN_SHAPE(0), TN_F32), *e2 = tn_rand(TN_SHAPE(3, 0), TN_F64);
    CHECK(e && e2 && tn_numel(e) == 0 && tn_numel(e2) == 0 && tn_randperm(0, TN_I64, NULL));
    check_f32(tn_rand(TN_SHAPE(5), TN_F32), rand42, 5, "rand(5) after empty draws");
    tn_scope_end();
}

/* float32 normal_ of 16 or more: normal_fill_16_AVX2's Cephes log / sincos (src/core/rng.c),
   to the bit, in both copies (AVX2 + FMA and plain C). The old libm-based version was one ulp
   off at [11], [20], [23], [31], [32] and [40] of the first. */
TEST(normal_fill_f32_bits) {
    tn_scope_begin();
    const float n48[48] = {-1.14026904f, 1.29126239f, 2.29781699f, -2.27680779f, 0.166007966f, 1.07029986f, -0.782183051f,
        -1.28731084f, 2.35308599f, -0.571024418f, -1.8194406f, -0.420314312f, 1.91707814f, 2.52551079f, 0.960793734f,
        2.68033028f, -2.66532922f, -0.149133265f, 4.35273647f, -0.160023451f, 0.896890104f, 2.06414533f, 2.57821536f,
        -0.949021459f, 0.0813191533f, 0.0693169534f, -3.13145733f, -0.190483928f, -3.6229558f, 1.84820139f, -2.14669156f,
        -2.21953797f, 0.332943559f, 0.453044146f, 0.84875071f, 5.09668541f, 2.41420436f, -0.823735118f, -1.1569041f,
        -0.711360574f, -2.30250168f, 3.09467173f, 3.78186655f, -1.61336827f, -0.0231734514f, -0.000265240669f, 1.50224292f,
        1.02007246f};
    /* 37: two blocks, then the last 16 redrawn */
    const float n37[37] = {-3.20503354f, -2.90109229f, -2.77527285f, -3.34710097f, -3.041749f, -2.92871261f, -3.16027284f,
        -3.22341394f, -2.76836419f, -3.13387799f, -3.28993011f, -3.11503935f, -2.82286525f, -2.74681115f, -2.94240069f,
        -2.72745872f, -3.39566612f, -3.08114171f, -2.51840806f, -3.08250284f, -2.95038867f, -3.16546679f, -3.20711303f,
        -3.15142012f, -3.03385925f, -2.8132205f, -2.84704614f, -2.53305411f, -2.3720994f, -3.06253314f, -2.87471962f,
        -2.93499088f, -3.40925527f, -2.960572f, -2.90106487f, -3.34193492f, -3.02518368f};
    for (int plain = 0; plain < 2; plain++) {
        tn__normal_fma_loop = !plain;
        tn_manual_seed(7);
        check_f32(tn_normal(0.5, 2.0, TN_SHAPE(48), TN_F32, NULL), n48, 48, plain ? "normal_(0.5, 2), plain" : "normal_(0.5, 2)");
        tn_manual_seed(7);
        check_f32(tn_normal(-3, 0.25, TN_SHAPE(37), TN_F32, NULL), n37, 37, plain ? "normal_(-3, 0.25), plain" : "normal_(-3, 0.25)");
    }
    /* the two copies agree over many blocks (every lane's range reduction and log branch) */
    tn_manual_seed(1);
    tn__normal_fma_loop = 0;
    tn_tensor *a = tn_randn(TN_SHAPE(100000), TN_F32);
    tn_manual_seed(1);
    tn__normal_fma_loop = 1;
    tn_tensor *b = tn_randn(TN_SHAPE(100000), TN_F32);
    CHECK(a && b && tn_equal(a, b));
    tn_scope_end();
}

/* layers initialise in reset_parameters' order with PyTorch's bounds */
TEST(layer_init_matches_pytorch) {
    tn_scope_begin();
    tn_manual_seed(0);
    tn_module *lin = tn_nn_linear(7, 5);
    const float lw[4] = {-0.00282975193f, 0.202756613f, -0.311081827f, -0.278158814f};
    const float lb[5] = {-0.35398677f, -0.220633149f, 0.324897528f, 0.168654695f, 0.183189005f};
    check_f32(tn_module_get(lin, "weight"), lw, 4, "Linear(7, 5).weight");
    check_f32(tn_module_get(lin, "bias"), lb, 5, "Linear(7, 5).bias");
    tn_manual_seed(0);
    tn_module *conv = tn_nn_conv2d(3, 4, 3);
    const float cw[4] = {-0.00144083926f, 0.10323862f, -0.158395112f, -0.141631529f};
    const float cb[4] = {-0.0106039243f, 0.0288954284f, -0.0788141415f, 0.11419557f};
    check_f32(tn_module_get(conv, "weight"), cw, 4, "Conv2d(3, 4, 3).weight");
    check_f32(tn_module_get(conv, "bias"), cb, 4, "Conv2d(3, 4, 3).bias");
    tn_manual_seed(0);
    tn_module *emb = tn_nn_embedding(10, 4);
    const float ew[6] = {-1.12583983f, -1.1523602f, -0.250578582f, -0.433878809f, 0.848710358f, 0.692009151f};
    check_f32(tn_module_get(emb, "weight"), ew, 6, "Embedding(10, 4).weight");   /* normal_fill */
    tn_manual_seed(0);
    tn_module *lstm = tn_nn_lstm(3, 4);
    const float l_ih[2] = {-0.00374341011f, 0.268221796f}, l_hh[2] = {-0.221747518f, -0.0180411935f};
    const float l_bi[2] = {-0.304269552f, 0.453685045f}, l_bh[2] = {-0.174916685f, -0.409810841f};
    check_f32(tn_module_get(lstm, "weight_ih_l0"), l_ih, 2, "LSTM weight_ih_l0");
    check_f32(tn_module_get(lstm, "weight_hh_l0"), l_hh, 2, "LSTM weight_hh_l0");
    check_f32(tn_module_get(lstm, "bias_ih_l0"), l_bi, 2, "LSTM bias_ih_l0");
    check_f32(tn_module_get(lstm, "bias_hh_l0"), l_bh, 2, "LSTM bias_hh_l0");
    /* MultiheadAttention: out_proj (a Linear) draws first, then the in-projection */
    tn_manual_seed(0);
    tn_module *mha = tn_nn_multihead_attention(8, 2);
    const float in_w[3] = {0.170178279f, 0.358772397f, 0.376810819f}, out_w[3] = {-0.00264699059f, 0.189661443f, -0.290990382f};
    const float after[2] = {0.681361556f, 0.333020151f};
    check_f32(tn_module_get(mha, "in_proj_weight"), in_w, 3, "MultiheadAttention in_proj_weight");
    check_f32(tn_module_get(mha, "out_proj.weight"), out_w, 3, "MultiheadAttention out_proj.weight");
    check_f32(tn_rand(TN_SHAPE(2), TN_F32), after, 2, "rand(2) after MultiheadAttention(8, 2)");
    tn_module_free(lin); tn_module_free(conv); tn_module_free(emb); tn_module_free(lstm); tn_module_free(mha);
    tn_scope_end();
}

/* DataLoader(shuffle=True): the iterator's base seed, then RandomSampler's seed and randperm */
TEST(loader_order_matches_pytorch) {
    tn_scope_begin();
    tn_tensor *y = tn_arange(0, 10, 1, TN_I64);
    tn_dataset *ds = tn_tensor_dataset(&y, 1);
    const int64_t want[2][10] = {{6, 7, 1, 4, 2, 0, 9, 8, 3, 5}, {2, 4, 7, 0, 8, 9, 5, 3, 6, 1}};
    const int64_t want_g[2][10] = {{0, 9, 3, 6, 1, 5, 7, 4, 8, 2}, {8, 5, 4, 7, 1, 3, 6, 9, 2, 0}};
    for (int own = 0; own < 2; own++) {
        tn_manual_seed(0);
        tn_loader *l = own ? tn_loader_new(ds, .batch_size = 4, .shuffle = true, .seed = 11)
                           : tn_loader_new(ds, .batch_size = 4, .shuffle = true, .num_workers = 2);
        for (int ep = 0; l && ep < 2; ep++) {
            int64_t got[10], n = 0;
            tn_tensor *b[1];
            while (tn_loader_next(l, b) == 1) {
                for (int64_t i = 0; i < tn_numel(b[0]) && n < 10; i++) got[n++] = (int64_t)el(b[0], i);
            }
            bool same = n == 10;
            for (int i = 0; same && i < 10; i++) same = got[i] == (own ? want_g : want)[ep][i];
            CHECK_MSG(same, "%s loader, epoch %d: not PyTorch's order (%lld %lld %lld %lld ...)", own ? "seeded" : "default-generator", ep,
                      (long long)got[0], (long long)got[1], (long long)got[2], (long long)got[3]);
        }
        tn_loader_free(l);
    }
    /* random_split: randperm from the generator */
    tn_manual_seed(0);
    double lengths[2] = {3, 7};
    tn_dataset *parts[2];
    CHECK(tn_random_split(ds, lengths, 2, NULL, parts) == 0);
    const int64_t split[10] = {4, 1, 7, 5, 3, 9, 0, 8, 6, 2};
    bool same = true;
    for (int p = 0, k = 0; p < 2; p++) {
        for (int64_t i = 0; i < tn_dataset_len(parts[p]); i++, k++) {
            tn_tensor *s[1];
            same = same && tn_dataset_get(parts[p], i, s) == 0 && (int64_t)tn_item(s[0]) == split[k];
        }
        tn_dataset_free(parts[p]);
    }
    CHECK_MSG(same, "random_split: not PyTorch's permutation");
    tn_dataset_free(ds);
    tn_scope_end();
}

/* get_state: PyTorch's 5056 bytes (seed, left, seeded, next, state as uint64, normal_y and
   its flag); set_state restores it, cached normal included */
TEST(state_roundtrip) {
    tn_scope_begin();
    uint8_t st[TN_GENERATOR_STATE_BYTES], st2[TN_GENERATOR_STATE_BYTES];
    tn_manual_seed(42);
    tn_tensor *a0 = tn_randn(TN_SHAPE(3), TN_F64);        /* leaves the sine half cached */
    CHECK(a0 && tn_default_generator()->has_normal);
    CHECK(tn_generator_get_state(NULL, st, sizeof st) == TN_GENERATOR_STATE_BYTES);
    uint64_t seed = 0;
    for (int i = 0; i < 8; i++) seed |= (uint64_t)st[i] << (8 * i);
    CHECK(seed == 42 && st[8] == (625 - 8) % 256 && st[12] == 1 && st[16] == 8 && st[5040] == 1);
    tn_tensor *a = tn_randn(TN_SHAPE(5), TN_F64), *b = tn_randn(TN_SHAPE(20), TN_F32);
    tn_manual_seed(1);
    CHECK(tn_generator_set_state(NULL, st, sizeof st) == 0);
    CHECK(tn_equal(tn_randn(TN_SHAPE(5), TN_F64), a) && tn_equal(tn_randn(TN_SHAPE(20), TN_F32), b));
    /* into another generator, and back out the same */
    tn_generator *g = tn_generator_new_philox(3);
    CHECK(tn_generator_set_state(g, st, sizeof st) == 0 && g->kind == TN_GEN_MT19937);
    CHECK(tn_generator_get_state(g, st2, sizeof st2) == TN_GENERATOR_STATE_BYTES && memcmp(st, st2, sizeof st) == 0);
    /* Philox: 16 bytes (seed, offset) */
    tn_generator *p = tn_generator_new_philox(9);
    tn_rand_gen(TN_SHAPE(7), TN_F32, p);
    uint8_t ps[16];
    CHECK(tn_generator_get_state(p, ps, 16) == 16 && ps[0] == 9 && ps[8] == 7);
    CHECK(tn_generator_set_state(g, ps, 16) == 0 && g->kind == TN_GEN_PHILOX && g->seed == 9 && g->offset == 7);
    /* errors */
    CHECK_ERR(tn_generator_get_state(NULL, st, 100) >= 0, "need a buffer of 5056 bytes");
    CHECK_ERR(tn_generator_set_state(NULL, st, 100) == 0, "Expected either a CPUGeneratorImplStateLegacy of size 5048 or a "
                                                          "CPUGeneratorImplState of size 5056 (or a Philox state of 16 bytes) but found the input RNG state size to be 100");
    CHECK(tn_generator_set_state(g, st, 5048) == 0 && tn_generator_get_state(g, st2, sizeof st2) == TN_GENERATOR_STATE_BYTES &&
          memcmp(st, st2, 5048) == 0);   /* PyTorch's legacy layout: the same fields */
    st[8] = 0; st[9] = 0; st[10] = 0; st[11] = 0;         /* left 0 */
    CHECK_ERR(tn_generator_set_state(NULL, st, sizeof st) == 0, "invalid mt19937 state");
    tn_generator_free(g);
    tn_generator_free(p);
    tn_scope_end();
}

/* The Philox kind stays: counter-based, the same numbers however a draw is split */
TEST(philox_kind) {
    tn_scope_begin();
    tn_generator *g = tn_generator_new_philox(1234);
    CHECK(g && g->kind == TN_GEN_PHILOX && g->offset == 0);
    tn_tensor *u = tn_rand_gen(TN_SHAPE(9), TN_F64, g);
    CHECK(g->offset == 9);
    for (int64_t i = 0; u && i < 9; i++) {
        int64_t iv;
        CHECK(el(u, i) == tn_philox_draw(0, false, 1234, (uint64_t)i, 0, 1, 0, 0, &iv));
    }
    tn_generator_manual_seed(g, 1234);
    CHECK(g->kind == TN_GEN_PHILOX && g->offset == 0);
    tn_tensor *p = tn_randperm(50, TN_I64, g), *q = tn_randperm(50, TN_I64, g);
    CHECK(p && q && !tn_equal(p, q) && tn_item(tn_sum(p)) == 49 * 50 / 2);
    /* the default generator switched to Philox for device-independent streams */
    tn_manual_seed(5);
    tn_default_generator()->kind = TN_GEN_PHILOX;
    tn_tensor *d = tn_rand(TN_SHAPE(4), TN_F64);
    CHECK(tn_default_generator()->offset == 4);
    tn_generator *h = tn_generator_new_philox(5);
    CHECK(tn_equal(d, tn_rand_gen(TN_SHAPE(4), TN_F64, h)));
    tn_default_generator()->kind = TN_GEN_MT19937;
    tn_manual_seed(5);
    CHECK(tn_default_generator()->kind == TN_GEN_MT19937);
    tn_generator_free(g);
    tn_generator_free(h);
    tn_scope_end();
}

/* Threads drawing from one generator: the lock gives each draw whole, so together they
   take exactly the sequence one thread would (in some interleaving) */
TEST(draws_from_threads) {
    enum { T = 4, N = 2000 };
    static uint64_t got[T * N], want[T * N];
    tn_generator *g = tn_generator_new(77);
    for (int i = 0; i < T * N; i++) want[i] = tn_generator_random64(g);
    tn_generator_manual_seed(g, 77);
#ifdef _OPENMP
#pragma omp parallel for num_threads(T)
#endif
    for (int t = 0; t < T; t++)
        for (int i = 0; i < N; i++) got[t * N + i] = tn_generator_random64(g);
    /* each value of the sequential stream turns up among the threads' draws */
    int64_t matched = 0;
    for (int i = 0; i < T * N; i++)
        for (int j = 0; j < T * N; j++)
            if (got[j] == want[i]) { matched++; break; }
    CHECK_MSG(matched == T * N, "%lld of %d draws are the sequential stream's", (long long)matched, T * N);
    CHECK(g->mt_left + g->mt_next == 625);   /* PyTorch's bookkeeping once drawn from */
    tn_generator_free(g);
}

int main(void) {
    RUN(mt19937_reference);
    RUN(random_functions_match_pytorch);
    RUN(normal_fill_f32_bits);
    RUN(layer_init_matches_pytorch);
    RUN(loader_order_matches_pytorch);
    RUN(state_roundtrip);
    RUN(philox_kind);
    RUN(draws_from_threads);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
