/* custom_module.c — writing your own layer in C, the way a PyTorch user subclasses
 * nn.Module: a struct that embeds tn_module first, a forward function, an extra_repr, and
 * a constructor that registers parameters, buffers and child modules by name. The
 * names become state-dict keys ("2.0.fc.weight", "2.0.scale"), so weights move
 * to and from PyTorch unchanged. It trains a residual MLP on Fashion-MNIST.
 *
 *     ./build/custom_module --epochs 2
 */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "train_util.h"

/* y = x + scale * fc(gelu(norm(x))): a pre-norm residual block with a learned scale. */
typedef struct residual_block {
    tn_module base;                 /* first member: a residual_block * is a tn_module * */
    int64_t width;
    tn_module *norm, *fc;           /* children (owned by base; these are shortcuts) */
} residual_block;

static tn_tensor *residual_forward(tn_module *m, tn_tensor *x) {
    residual_block *b = (residual_block *)m;
    tn_tensor *h = tn_module_forward(b->fc, tn_gelu(tn_module_forward(b->norm, x)));
    return tn_add(x, tn_mul(tn_module_get(m, "scale"), h));     /* parameters by name, as self.scale */
}
static void residual_repr(tn_module *m, char *buf, size_t cap) { snprintf(buf, cap, "width=%lld", (long long)((residual_block *)m)->width); }
static const tn_module_type residual_type = {"ResidualBlock", residual_forward, NULL, residual_repr};

static tn_module *residual_block_new(int64_t width) {
    residual_block *b = (residual_block *)tn_module_new(&residual_type, sizeof *b);
    if (!b) return NULL;
    b->width = width;
    b->norm = tn_module_add(&b->base, "norm", tn_nn_layer_norm(TN_SHAPE(width)));
    b->fc = tn_module_add(&b->base, "fc", tn_nn_linear(width, width));
    tn_tensor *scale = tn_full(TN_SHAPE(1), 0.1, TN_F32);       /* registering retains it */
    tn_module_register_parameter(&b->base, "scale", scale);
    tn_release(scale);
    if (!b->norm || !b->fc || !tn_module_get(&b->base, "scale")) { tn_module_free(&b->base); return NULL; }
    return &b->base;
}

int main(int argc, char **argv) {
    tu_fashion_job job = tu_fashion_flags(argc, argv, "A custom residual module in C trained on Fashion-MNIST with AdamW.",
                                         1, "custom_module.safetensors");
    tn_manual_seed(0);
    tn_module *blocks = tn_nn_sequential_n(NULL, 0);
    for (int i = 0; i < 3; i++) tn_nn_sequential_append(blocks, residual_block_new(256));
    tn_module *model = tn_nn_sequential(tn_nn_flatten(), tn_nn_linear(784, 256), blocks, tn_nn_linear(256, 10));
    tn_dict *params = tn_module_named_parameters(model);
    printf("state-dict names of the parameters:\n");
    for (int i = 0; i < tn_dict_len(params); i++) printf("  %s\n", tn_dict_key(params, i));
    tn_optim *opt = tn_optim_adamw(tn_dict_values(params), tn_dict_len(params), .lr = 1e-3, .weight_decay = 0.01);
    int rc = tu_fit_fashion(&job, model, opt, NULL);
    tn_dict_free(params);
    tn_module_free(model);
    return rc;
}
