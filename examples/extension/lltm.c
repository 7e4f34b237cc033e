/* lltm.c — the LLTM cell of PyTorch's C++ extension tutorial ("Custom C++ and CUDA
 * Extensions", pytorch/extension-cpp), written against tensor.h: a forward that returns
 * the new state plus what backward needs, and a hand-written backward.
 *
 * Python loads it with no wrapper code (tensor.utils.cpp_extension.load): each function's
 * Python signature comes from its C declaration — tensors in, `tn_tensor *out[K]` out —
 * and lltm.py wraps the pair in an autograd.Function. Every call runs inside a scope, so
 * the temporaries below need no bookkeeping.
 */
#include "tensor.h"

static tn_tensor *d_sigmoid(tn_tensor *z) {                      /* s (1 - s) */
    tn_tensor *s = tn_sigmoid(z);
    return tn_mul(s, tn_rsub_scalar(s, 1));
}

static tn_tensor *d_tanh(tn_tensor *z) {                         /* 1 - tanh(z)^2 */
    return tn_rsub_scalar(tn_square(tn_tanh(z)), 1);
}

static tn_tensor *d_elu(tn_tensor *z) {                          /* 1 for z > 0, else exp(z) (alpha = 1) */
    return tn_where(tn_gt_scalar(z, 0), tn_ones_like(z), tn_exp(z));
}

/* new_h, new_cell, and for backward: input_gate, output_gate, candidate_cell, X, gate_weights */
int lltm_forward(tn_tensor *input, tn_tensor *weights, tn_tensor *bias, tn_tensor *old_h, tn_tensor *old_cell,
                 tn_tensor *out[7]) {
    tn_tensor *cat[2] = {old_h, input};
    tn_tensor *X = tn_cat(cat, 2, .dim = 1);
    tn_tensor *gate_weights = tn_addmm(bias, X, tn_t(weights));
    if (!gate_weights) return -1;                               /* the error names the shapes */
    tn_tensor *gates[3];
    if (tn_chunk(gate_weights, 3, gates, 3, .dim = 1) != 3) return -1;
    tn_tensor *input_gate = tn_sigmoid(gates[0]);
    tn_tensor *output_gate = tn_sigmoid(gates[1]);
    tn_tensor *candidate_cell = tn_elu(gates[2]);
    tn_tensor *new_cell = tn_add(old_cell, tn_mul(candidate_cell, input_gate));
    tn_tensor *new_h = tn_mul(tn_tanh(new_cell), output_gate);
    tn_tensor *all[7] = {new_h, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights};
    for (int i = 0; i < 7; i++) out[i] = all[i];
    return new_h ? 0 : -1;
}

/* d_old_h, d_input, d_weights, d_bias, d_old_cell */
int lltm_backward(tn_tensor *grad_h, tn_tensor *grad_cell, tn_tensor *new_cell, tn_tensor *input_gate,
                  tn_tensor *output_gate, tn_tensor *candidate_cell, tn_tensor *X, tn_tensor *gate_weights,
                  tn_tensor *weights, tn_tensor *out[5]) {
    tn_tensor *d_output_gate = tn_mul(tn_tanh(new_cell), grad_h);
    tn_tensor *d_tanh_new_cell = tn_mul(output_gate, grad_h);
    tn_tensor *d_new_cell = tn_add(tn_mul(d_tanh(new_cell), d_tanh_new_cell), grad_cell);
    tn_tensor *d_old_cell = d_new_cell;
    tn_tensor *d_candidate_cell = tn_mul(input_gate, d_new_cell);
    tn_tensor *d_input_gate = tn_mul(candidate_cell, d_new_cell);
    tn_tensor *gates[3];
    if (tn_chunk(gate_weights, 3, gates, 3, .dim = 1) != 3) return -1;
    tn_tensor *d_gates_parts[3] = {tn_mul(d_input_gate, d_sigmoid(gates[0])), tn_mul(d_output_gate, d_sigmoid(gates[1])),
                                   tn_mul(d_candidate_cell, d_elu(gates[2]))};
    tn_tensor *d_gates = tn_cat(d_gates_parts, 3, .dim = 1);
    tn_tensor *d_weights = tn_mm(tn_t(d_gates), X);
    tn_tensor *d_bias = tn_sum_dims(d_gates, TN_DIMS(0));
    tn_tensor *d_X = tn_mm(d_gates, weights);
    if (!d_X) return -1;
    const int64_t state_size = tn_shape(grad_h)[1];
    out[0] = tn_narrow(d_X, 1, 0, state_size);                  /* d_old_h */
    out[1] = tn_narrow(d_X, 1, state_size, tn_shape(d_X)[1] - state_size);  /* d_input */
    out[2] = d_weights;
    out[3] = d_bias;
    out[4] = d_old_cell;
    return 0;
}

/* The same cell as ONE differentiable op of the library's autograd (tn_custom_op), with its
   elementwise work fused into one loop each way — what an extension is for: the matmuls
   go to the library, everything between them is a single pass over the batch. The result
   is new_h and new_cell stacked, [2, batch, state]; Python takes out[0] and out[1]. The
   backward is raw loops, so first-order only (as the tutorial's). */
#include <math.h>

/* forward: gates G [B, 3S], old_cell c [B, S] -> out [2, B, S] (h, cell) and act [4, B, S]
   (input gate, output gate, candidate cell, tanh(new cell)) for backward */
#define LLTM_FWD(T, EXP, TANH, EXPM1)                                                        \
    for (int64_t b = 0; b < B; b++)                                                           \
        for (int64_t j = 0; j < S; j++) {                                                     \
            const T *g = (const T *)G + b * 3 * S;                                            \
            T ig = 1 / (1 + EXP(-g[j])), og = 1 / (1 + EXP(-g[S + j])), z = g[2 * S + j];     \
            T cc = z > 0 ? z : EXPM1(z);                                                      \
            T nc = ((const T *)cp)[b * S + j] + cc * ig, th = TANH(nc);                        \
            ((T *)out)[b * S + j] = th * og;                                                  \
            ((T *)out)[BS + b * S + j] = nc;                                                  \
            ((T *)act)[b * S + j] = ig; ((T *)act)[BS + b * S + j] = og;                      \
            ((T *)act)[2 * BS + b * S + j] = cc; ((T *)act)[3 * BS + b * S + j] = th;         \
        }
/* backward: grad [2, B, S] (of h, of cell), act -> d_gates [B, 3S], d_old_cell [B, S] */
#define LLTM_BWD(T)                                                                           \
    for (int64_t b = 0; b < B; b++)                                                           \
        for (int64_t j = 0; j < S; j++) {                                                     \
            const int64_t k = b * S + j;                                                      \
            const T *A = (const T *)act, gh = ((const T *)gr)[k], gc = ((const T *)gr)[BS + k]; \
            T ig = A[k], og = A[BS + k], cc = A[2 * BS + k], th = A[3 * BS + k];              \
            T dnc = (1 - th * th) * og * gh + gc;                                             \
            T *dg = (T *)dG + b * 3 * S;                                                      \
            dg[j] = cc * dnc * ig * (1 - ig);                                                 \
            dg[S + j] = th * gh * og * (1 - og);                                              \
            dg[2 * S + j] = ig * dnc * (cc > 0 ? 1 : cc + 1);                                 \
            ((T *)dc)[k] = dnc;                                                               \
        }

static tn_tensor *lltm_cell_forward(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *cat[2] = {in[3], in[0]};
    tn_tensor *X = tn_contiguous(tn_cat(cat, 2, .dim = 1));
    tn_tensor *gw = tn_contiguous(tn_addmm(in[2], X, tn_t(in[1]))), *c = tn_contiguous(in[4]);
    if (!gw || !c) return NULL;
    tn_dtype dt = tn_get_dtype(gw);
    if (tn_get_device(gw) != TN_CPU || (dt != TN_F32 && dt != TN_F64) || tn_get_dtype(c) != dt) {
        tn_error("lltm_cell: float32 or float64 CPU tensors of one dtype expected");
        return NULL;
    }
    const int64_t B = tn_shape(gw)[0], S = tn_shape(gw)[1] / 3, BS = B * S;
    tn_tensor *result = tn_empty(TN_SHAPE(2, B, S), dt), *acts = tn_empty(TN_SHAPE(4, B, S), dt);
    if (!result || !acts) return NULL;
    const void *G = tn_data_ptr(gw);
    const void *cp = tn_data_ptr(c);
    void *out = tn_data_ptr(result), *act = tn_data_ptr(acts);
    if (dt == TN_F32) { LLTM_FWD(float, expf, tanhf, expm1f) } else { LLTM_FWD(double, exp, tanh, expm1) }
    tn_ctx_save(ctx, acts);
    tn_ctx_save(ctx, X);
    tn_ctx_save(ctx, in[1]);
    return result;
}

static int lltm_cell_backward(tn_ctx *ctx, tn_tensor *grad, tn_tensor **grad_in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *acts = tn_ctx_saved(ctx, 0), *X = tn_ctx_saved(ctx, 1), *W = tn_ctx_saved(ctx, 2);
    tn_tensor *g = tn_contiguous(tn_to_dtype(grad, tn_get_dtype(acts)));
    if (!g) return -1;
    const int64_t B = tn_shape(acts)[1], S = tn_shape(acts)[2], BS = B * S;
    tn_dtype dt = tn_get_dtype(acts);
    tn_tensor *d_gates = tn_empty(TN_SHAPE(B, 3 * S), dt), *d_old_cell = tn_empty(TN_SHAPE(B, S), dt);
    if (!d_gates || !d_old_cell) return -1;
    const void *act = tn_data_ptr(acts), *gr = tn_data_ptr(g);
    void *dG = tn_data_ptr(d_gates), *dc = tn_data_ptr(d_old_cell);
    if (dt == TN_F32) { LLTM_BWD(float) } else { LLTM_BWD(double) }
    tn_tensor *d_X = tn_mm(d_gates, W);
    if (!d_X) return -1;
    if (tn_ctx_needs_grad(ctx, 0)) grad_in[0] = tn_narrow(d_X, 1, S, tn_shape(d_X)[1] - S);   /* input */
    if (tn_ctx_needs_grad(ctx, 1)) grad_in[1] = tn_mm(tn_t(d_gates), X);                     /* weights */
    if (tn_ctx_needs_grad(ctx, 2)) grad_in[2] = tn_sum_dims(d_gates, TN_DIMS(0));     /* bias */
    if (tn_ctx_needs_grad(ctx, 3)) grad_in[3] = tn_narrow(d_X, 1, 0, S);                     /* old_h */
    if (tn_ctx_needs_grad(ctx, 4)) grad_in[4] = d_old_cell;                                  /* old_cell */
    return 0;
}

tn_tensor *lltm_cell(tn_tensor *input, tn_tensor *weights, tn_tensor *bias, tn_tensor *old_h, tn_tensor *old_cell) {
    tn_tensor *in[5] = {input, weights, bias, old_h, old_cell};
    return tn_custom_op("LLTMBackward", lltm_cell_forward, lltm_cell_backward, in, 5, NULL);
}
