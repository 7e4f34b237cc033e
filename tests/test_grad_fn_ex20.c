/* test_grad_fn_ex20.c — a composite named as PyTorch's node shows its own inputs as its next
 * functions (tn_node_num_next / tn_node_next), as PyTorch's graph has them (issue 20: the
 * blitz's neural_networks_tutorial walks loss.grad_fn.next_functions): MseLossBackward0 ->
 * (the input's node, None for a target without gradient), NllLossBackward0 over
 * cross_entropy's LogSoftmaxBackward0, NativeLayerNormBackward0 -> (input, weight, bias);
 * the inner graph still runs backward; the shown edges hold their nodes and leaves and
 * give them back (run under SANITIZE=1: no leak, no use after free). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#define SH(...) TN_SHAPE(__VA_ARGS__)

static bool named(tn_node *n, const char *want) { return n && !strcmp(tn_node_name(n), want); }

TEST(mse_shows_input_and_target) {
    tn_tensor *w = tn_randn(SH(3, 4), TN_F64), *x = tn_randn(SH(2, 4), TN_F64), *y = tn_randn(SH(2, 3), TN_F64);
    tn_requires_grad_(w, true);
    tn_scope_begin();
    tn_tensor *h = tn_linear(x, w, NULL);
    tn_tensor *loss = tn_retain(tn_mse_loss(h, y));
    tn_scope_end();
    tn_node *top = tn_grad_fn(loss);
    CHECK(named(top, "MseLossBackward0") && tn_node_num_next(top) == 2);
    tn_tensor *leaf = (tn_tensor *)1;
    tn_node *mm = tn_node_next(top, 0, &leaf);
    CHECK(mm && leaf == NULL && strcmp(tn_node_name(mm), "PowBackward0") && strcmp(tn_node_name(mm), "MeanBackward0"));
    leaf = (tn_tensor *)1;
    CHECK(tn_node_next(top, 1, &leaf) == NULL && leaf == NULL);          /* y needs no gradient: None */
    CHECK_ERR(tn_node_next(top, 2, &leaf) != NULL, "edge 2 out of range for MseLossBackward0, which has 2");
    /* backward runs the inner graph: d/dw mean((x w^T - y)^2) = 2/6 (x w^T - y)^T x */
    CHECK(tn_backward(loss) == 0);
    tn_scope_begin();
    tn_tensor *want = tn_mul_scalar(tn_matmul(tn_t(tn_sub(tn_matmul(x, tn_t(w)), y)), x), 2.0 / 6);
    CHECK(tn_allclose(tn_grad(w), want, .rtol = 1e-12, .atol = 1e-12));
    tn_scope_end();
    /* held nodes outlive the tensors */
    tn_release(loss);
    tn_release(w);
    CHECK(named(top, "MseLossBackward0") && tn_node_num_next(top) == 2);
    tn_node_release(mm);
    tn_node_release(top);
    tn_release(x);
    tn_release(y);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(a_leaf_input_shows_as_a_leaf) {
    tn_tensor *a = tn_randn(SH(5), TN_F32), *b = tn_randn(SH(5), TN_F32);
    tn_requires_grad_(a, true);
    tn_requires_grad_(b, true);
    tn_tensor *l = tn_smooth_l1_loss(a, b);
    tn_node *top = tn_grad_fn(l);
    tn_tensor *leaf = NULL;
    CHECK(named(top, "SmoothL1LossBackward0") && tn_node_num_next(top) == 2);
    CHECK(tn_node_next(top, 0, &leaf) == NULL && leaf == a);
    CHECK(tn_node_next(top, 1, &leaf) == NULL && leaf == b);
    tn_release(l);
    tn_release(a);                                                     /* the node holds the leaves */
    tn_release(b);
    CHECK(tn_node_next(top, 0, &leaf) == NULL && leaf && tn_numel(leaf) == 5);
    tn_node_release(top);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(cross_entropy_over_log_softmax) {
    tn_tensor *x = tn_randn(SH(4, 3), TN_F32);
    tn_requires_grad_(x, true);
    const int64_t tv[] = {0, 2, 1, 2};
    tn_scope_begin();
    tn_tensor *t = tn_from_data(tv, SH(4), TN_I64);
    tn_tensor *h = tn_mul_scalar(x, 2);
    tn_node *ce = tn_grad_fn(tn_cross_entropy(h, t));
    tn_node *nll = tn_grad_fn(tn_nll_loss(tn_log_softmax(h, 1), t));
    tn_scope_end();
    CHECK(named(ce, "NllLossBackward0") && tn_node_num_next(ce) == 1);
    CHECK(named(nll, "NllLossBackward0") && tn_node_num_next(nll) == 1);
    tn_node *ls = tn_node_next(ce, 0, NULL), *ls2 = tn_node_next(nll, 0, NULL);
    CHECK(named(ls, "LogSoftmaxBackward0") && named(ls2, "LogSoftmaxBackward0"));
    tn_node *mul = tn_node_next(ls, 0, NULL);
    CHECK(named(mul, "MulBackward0"));
    tn_node_release(mul);
    tn_node_release(ls);
    tn_node_release(ls2);
    tn_node_release(ce);
    tn_node_release(nll);
    tn_release(x);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(layer_norm_shows_three_inputs) {
    tn_tensor *x = tn_randn(SH(2, 3), TN_F64);
    tn_requires_grad_(x, true);
    const int64_t ns[] = {3};
    tn_scope_begin();
    tn_node *plain = tn_grad_fn(tn_layer_norm(x, ns, 1));
    tn_scope_end();
    tn_tensor *leaf = NULL;
    CHECK(named(plain, "NativeLayerNormBackward0") && tn_node_num_next(plain) == 3);
    CHECK(tn_node_next(plain, 0, &leaf) == NULL && leaf == x);
    CHECK(tn_node_next(plain, 1, &leaf) == NULL && leaf == NULL && tn_node_next(plain, 2, &leaf) == NULL && leaf == NULL);
    tn_node_release(plain);
    tn_scope_begin();
    tn_node *ls = tn_grad_fn(tn_logsigmoid(x));
    tn_scope_end();
    CHECK(named(ls, "LogSigmoidBackward0") && tn_node_num_next(ls) == 1 && tn_node_next(ls, 0, &leaf) == NULL && leaf == x);
    tn_node_release(ls);
    tn_release(x);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

int main(void) {
    RUN(mse_shows_input_and_target);
    RUN(a_leaf_input_shows_as_a_leaf);
    RUN(cross_entropy_over_log_softmax);
    RUN(layer_norm_shows_three_inputs);
    return tn_test_report();
}
