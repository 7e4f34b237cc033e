/* test_fuzz_findings.c — regression tests for what the fuzzers found (issue 18) and that
 * was fixed on this branch; the findings fixed on main are in test_limits.c.
 *
 *   - fuzz_options (libFuzzer) and test_fuzz_api.py 1:4414: an RNN, LSTM or GRU with
 *     num_layers=27777777777 (or 2**31) allocated layer after layer for as long as memory
 *     lasted (PyTorch 1.13 loops the same way): a count whose parameters cannot fit in the
 *     machine's memory, or whose size overflows int64, now fails at once with an error.
 *   - test_fuzz_api.py 1:2244 (UBSan): std/var with correction=-2**63 computed
 *     count - correction in int64 (signed overflow); now in double, as PyTorch.
 *
 *   - test_fuzz_api.py 3:3967 (UBSan): CosineAnnealingWarmRestarts(T_0=2, T_mult=2**62) stepped
 *     past its first restart multiplied the period T_i * T_mult in int64 (signed overflow);
 *     it saturates now (PyTorch's Python int grows; the lr is the same).
 *   - the fixed-size buffers of issue 18's grep: a module repr's tuple ("(4611686018427387904,
 *     ...)" of 8 sizes, Unflatten) overflowed its 64-byte buffer (snprintf at buf + k past
 *     the end); tn_graph_dot cut a tensor's name at 256 bytes; tn_mnist_dataset cut its
 *     directory at 4096 bytes; a shape in a message was cut after 140 characters.
 *
 * Each case runs in a forked child with an alarm, so a hang or crash is one failed check. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, alarm, clock_gettime */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __unix__
#include <unistd.h>
#include <sys/wait.h>
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* expr must give NULL and a message containing both substrings */
#define ERR2(expr, s1, s2) do { tn_clear_error(); void *r_ = (void *)(expr); const char *m_ = tn_last_error(); \
    CHECK_MSG(!r_ && strstr(m_, s1) && strstr(m_, s2), "%s should fail with \"%s\" + \"%s\", got %s \"%s\"", #expr, s1, s2, \
              r_ ? "success," : "error", m_); } while (0)


/* Layer counts whose parameters cannot fit: refused before the first layer is allocated. */
TEST(rnn_num_layers_beyond_memory) {
    const int64_t counts[] = {27777777777LL, (int64_t)1 << 31, (int64_t)1 << 40, (int64_t)1 << 62, INT64_MAX};
    double t0 = now_s();
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        ERR2(tn_nn_rnn(3, 4, .num_layers = counts[i]), "tn_nn_rnn:", "cannot fit in memory");
        ERR2(tn_nn_lstm(3, 4, .num_layers = counts[i], .proj_size = 2), "tn_nn_lstm:", "cannot fit in memory");
        ERR2(tn_nn_gru(3, 4, .num_layers = counts[i], .bidirectional = true), "tn_nn_gru:", "cannot fit in memory");
    }
    /* the libFuzzer input that timed out (fuzz_options, the RNN target) */
    ERR2(tn_nn_rnn_str(3, 4, "num_layers=27777777777, nonlinearity='relu'"), "tn_nn_rnn:", "num_layers=27777777777");
    /* sizes whose product overflows int64: the gate rows (4 * hidden), a layer's weights */
    ERR2(tn_nn_lstm(3, (int64_t)1 << 62), "tn_nn_lstm:", "overflows int64");
    ERR2(tn_nn_gru((int64_t)1 << 62, 4), "tn_nn_gru:", "overflows int64");
    ERR2(tn_nn_rnn(3, (int64_t)1 << 31, .num_layers = (int64_t)1 << 31), "tn_nn_rnn:", "cannot fit in memory");
    ERR2(tn_nn_lstm_cell(3, (int64_t)1 << 62), "tn_nn_lstm_cell:", "overflows int64");
    ERR2(tn_nn_gru_cell(INT64_MAX, 2), "tn_nn_gru_cell:", "overflows int64");
    double dt = now_s() - t0;
    CHECK_MSG(dt < 2, "refusing %d layer counts took %.1f s", 20, dt);
    /* counts that fit still build, with every layer's parameters */
    tn_module *m = tn_nn_gru(3, 4, .num_layers = 3, .bidirectional = true);
    CHECK_MSG(m != NULL, "GRU(3, 4, num_layers=3): %s", tn_last_error());
    if (m) {
        tn_dict *p = tn_module_named_parameters(m);
        CHECK(p && tn_dict_len(p) == 3 * 2 * 4);
        tn_tensor *w = p ? tn_dict_get(p, "weight_ih_l2_reverse") : NULL;
        CHECK(w && tn_shape(w)[0] == 12 && tn_shape(w)[1] == 8);
        tn_dict_free(p);
        tn_module_free(m);
    }
    m = tn_nn_lstm(0, 2, .num_layers = 2);   /* input_size 0 is legal (PyTorch too) */
    CHECK_MSG(m != NULL, "LSTM(0, 2, num_layers=2): %s", tn_last_error());
    tn_module_free(m);
}

/* The degrees of freedom n - correction in double: PyTorch's values for corrections whose
   difference does not fit in int64 (torch 1.13: x.std(0, correction=-2**63) of
   arange(12.).reshape(3, 4) is 1.8626e-09 in each column; correction=2**63-1: inf). */
TEST(std_var_extreme_correction) {
    tn_scope_begin();
    tn_tensor *x = tn_reshape(tn_arange(0, 12, 1, TN_F64), TN_SHAPE(3, 4));
    const int64_t dim0[1] = {0};
    tn_tensor *s = tn_std_dims(x, dim0, 1, .correction = INT64_MIN);
    CHECK_MSG(s && tn_numel(s) == 4, "std: %s", tn_last_error());
    /* each column: deviations -4, 0, 4 from the mean, sum of squares 32 */
    const double expect = sqrt(32.0 / (3.0 + 9223372036854775808.0));
    for (int j = 0; s && j < 4; j++) CHECK_CLOSE(tn_item(tn_select(s, 0, j)), expect, 1e-20);
    tn_tensor *v = tn_var_dims(x, dim0, 1, .correction = INT64_MAX, .keepdim = true);
    CHECK(v && tn_ndim(v) == 2 && isinf(tn_item(tn_select(tn_select(v, 0, 0), 0, 0))));
    tn_tensor *all = tn_var(x, .correction = INT64_MIN);   /* 12 + 2^63 degrees of freedom */
    CHECK(all && tn_item(all) > 0 && tn_item(all) < 1e-15);
    CHECK_CLOSE(tn_item(tn_std(x, .correction = -5)), sqrt(143.0 / 17.0), 1e-12);   /* var of 0..11 times 11, over 12 + 5 */
    tn_scope_end();
}

/* Reprs and dumps hold user sizes and names whole. */
TEST(no_cut_or_overflowed_strings) {
    const int64_t P62 = (int64_t)1 << 62;
    const int64_t sizes[8] = {P62, P62, P62, P62, P62, P62, P62, -1};
    tn_module *u = tn_nn_unflatten(1, sizes, 8);
    CHECK_MSG(u != NULL, "Unflatten: %s", tn_last_error());
    char *r = u ? tn_module_repr(u) : NULL;
    CHECK_MSG(r && strstr(r, "unflattened_size=(4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387904, "
                             "4611686018427387904, 4611686018427387904, 4611686018427387904, -1))"),
              "Unflatten repr: %s", r ? r : "(null)");
    tn_string_free(r);
    tn_module_free(u);
    /* Hardtanh's two widest floats (24 characters each): its repr was cut at 63 bytes */
    tn_module *h = tn_nn_activation("Hardtanh", .min_val = -1.7976931348623157e308, .max_val = -2.2250738585072014e-308);
    r = h ? tn_module_repr(h) : NULL;
    CHECK_MSG(r && !strcmp(r, "Hardtanh(min_val=-1.7976931348623157e+308, max_val=-2.2250738585072014e-308)"), "Hardtanh repr: %s (%s)",
              r ? r : "(null)", tn_last_error());
    tn_string_free(r);
    tn_module_free(h);
    /* a leaf's name of 5000 bytes, whole in the graph */
    tn_scope_begin();
    tn_tensor *x = tn_ones(TN_SHAPE(2), TN_F32);
    CHECK(tn_requires_grad_(x, true) == 0);
    char *name = (char *)malloc(5001);
    memset(name, 'n', 5000);
    name[5000] = 0;
    CHECK(tn_set_name(x, name) == 0);
    char *dot = tn_graph_dot(tn_sum(tn_mul(x, x)));
    char *label = (char *)malloc(5010);
    snprintf(label, 5010, "\"%s [2]\"", name);
    CHECK_MSG(dot && strstr(dot, label), "tn_graph_dot cut the leaf's name");
    free(dot);
    free(label);
    tn_scope_end();
    /* a directory of 5000 bytes: tried under its whole name (not found), not a cut one */
    memset(name, 'd', 5000);
    name[0] = '/';
    tn_clear_error();
    CHECK(tn_mnist_dataset(name) == NULL);
    CHECK_MSG(strstr(tn_last_error(), "tn_mnist_dataset: no /ddd") != NULL, "%s", tn_last_error());
    free(name);
    /* a shape of 8 sizes of 20 characters, whole in a message */
    tn_scope_begin();
    tn_tensor *e = tn_zeros(TN_SHAPE(0, P62, P62, P62, P62, P62, P62, P62), TN_F32);
    CHECK(e != NULL);
    tn_clear_error();
    CHECK(tn_add(e, tn_ones(TN_SHAPE(3), TN_F32)) == NULL);   /* "the size of tensor a [...] must match ..." */
    CHECK_MSG(strstr(tn_last_error(), "[0, 4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387904, "
                                      "4611686018427387904, 4611686018427387904, 4611686018427387904]"), "%s", tn_last_error());
    tn_scope_end();
}

/* torch 1.13: SGD(lr=0.1), CosineAnnealingWarmRestarts(T_0=2, T_mult=2**62), five steps:
   lr 0.05, then 0.1 (T_i = 2**63, which no int64 holds) */
TEST(warm_restarts_period_past_int64) {
    tn_tensor *w = tn_zeros(TN_SHAPE(2), TN_F32);
    CHECK(tn_requires_grad_(w, true) == 0);
    tn_optim *o = tn_optim_sgd(&w, 1, .lr = 0.1);
    tn_lr_scheduler *s = o ? tn_lr_scheduler_cosine_annealing_warm_restarts(o, .T_0 = 2, .T_mult = (int64_t)1 << 62) : NULL;
    CHECK_MSG(s != NULL, "%s", tn_last_error());
    const double expect[5] = {0.05, 0.1, 0.1, 0.1, 0.1};
    for (int i = 0; s && i < 5; i++) {
        CHECK(tn_lr_scheduler_step(s) == 0);
        CHECK_CLOSE(tn_lr_scheduler_get_last_lr(s, 0), expect[i], 1e-15);
    }
    tn_lr_scheduler_free(s);
    tn_optim_free(o);
    tn_release(w);
}

int main(void) {
    RUN_ISOLATED(rnn_num_layers_beyond_memory, 30);
    RUN_ISOLATED(std_var_extreme_correction, 30);
    RUN_ISOLATED(no_cut_or_overflowed_strings, 30);
    RUN_ISOLATED(warm_restarts_period_past_int64, 30);
    return tn_test_report();
}
