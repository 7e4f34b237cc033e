/* custom_op.c — a differentiable op of your own, PyTorch's autograd.Function in C.
 *
 * "softclip": y = x / (1 + |x|), with a hand-written backward dy/dx = 1 / (1 + |x|)^2.
 * forward saves what backward needs with tn_ctx_save; backward uses library ops, so
 * gradients of gradients (create_graph) work through it too. tn_gradcheck and
 * tn_gradgradcheck compare it with finite differences; tn_graph_dot shows the graph.
 *
 *     make build/custom_op && ./build/custom_op
 */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include <stdio.h>
#include <string.h>

static tn_tensor *softclip_forward(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_ctx_save(ctx, in[0]);                                  /* backward needs x */
    return tn_div(in[0], tn_add_scalar(tn_abs(in[0]), 1));
}

static int softclip_backward(tn_ctx *ctx, tn_tensor *grad, tn_tensor **grad_in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *x = tn_ctx_saved(ctx, 0);
    if (tn_ctx_needs_grad(ctx, 0))                            /* g / (1 + |x|)^2 */
        grad_in[0] = tn_div(grad, tn_square(tn_add_scalar(tn_abs(x), 1)));
    return 0;
}

static tn_tensor *softclip(tn_tensor *x) {
    return tn_custom_op("SoftclipBackward", softclip_forward, softclip_backward, &x, 1, NULL);
}

/* the function gradcheck differentiates: sum(softclip(x) * w) */
static tn_tensor *loss_fn(tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    return tn_sum(tn_mul(softclip(in[0]), in[1]));
}

int main(int argc, char **argv) {
    if (argc > 1) {                      /* no flags: --help says so, anything else is an error */
        fprintf(stderr, "usage: %s (no arguments)\n", argv[0]);
        return strcmp(argv[1], "--help") ? 2 : 0;
    }
    tn_manual_seed(0);
    tn_scope_begin();
    tn_tensor *x = tn_randn(TN_SHAPE(2, 3), TN_F64), *w = tn_randn(TN_SHAPE(3), TN_F64);
    tn_requires_grad_(x, true);
    tn_requires_grad_(w, true);
    tn_set_name(x, "x");
    tn_set_name(w, "w");

    tn_tensor *inputs[2] = {x, w};
    tn_tensor *loss = loss_fn(inputs, 2, NULL);
    printf("loss %.6f, grad_fn %s\n", tn_item(loss), tn_grad_fn_name(loss));
    tn_backward(loss);
    printf("d loss / d x =\n");
    tn_print(tn_grad(x));

    bool ok1 = tn_gradcheck(loss_fn, inputs, 2, NULL, .atol = 1e-6, .rtol = 1e-4);
    bool ok2 = tn_gradgradcheck(loss_fn, inputs, 2, NULL, .atol = 1e-6, .rtol = 1e-4);
    printf("gradcheck: %s, gradgradcheck: %s %s\n", ok1 ? "ok" : "FAILED", ok2 ? "ok" : "FAILED", tn_last_error());

    char *dot = tn_graph_dot(loss_fn(inputs, 2, NULL));       /* pipe into `dot -Tpng` to draw it */
    printf("%s", dot);
    tn_string_free(dot);
    tn_scope_end();
    return ok1 && ok2 ? 0 : 1;
}
