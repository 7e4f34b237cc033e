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
    tn_tensor *X = tn_cat(cat, 2, 1);
    tn_tensor *gate_weights = tn_addmm(bias, X, tn_t(weights), 1, 1);
    if (!gate_weights) return -1;                               /* the error names the shapes */
    tn_tensor *gates[3];
    if (tn_chunk(gate_weights, 3, 1, gates, 3) != 3) return -1;
    tn_tensor *input_gate = tn_sigmoid(gates[0]);
    tn_tensor *output_gate = tn_sigmoid(gates[1]);
    tn_tensor *candidate_cell = tn_elu(gates[2], 1.0);
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
    if (tn_chunk(gate_weights, 3, 1, gates, 3) != 3) return -1;
    tn_tensor *d_gates_parts[3] = {tn_mul(d_input_gate, d_sigmoid(gates[0])), tn_mul(d_output_gate, d_sigmoid(gates[1])),
                                   tn_mul(d_candidate_cell, d_elu(gates[2]))};
    tn_tensor *d_gates = tn_cat(d_gates_parts, 3, 1);
    tn_tensor *d_weights = tn_mm(tn_t(d_gates), X);
    tn_tensor *d_bias = tn_sum_dims(d_gates, TN_DIMS(0), false);
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
