"""lltm.py — PyTorch's C++-extension tutorial (pytorch/extension-cpp) with tensor.h.

The LLTM cell three ways: in Python with the tensor API (autograd derives the backward);
as the C extension of lltm.c — compiled on first use by tensor.utils.cpp_extension.load,
cached afterwards — wrapped in an autograd.Function with the C backward (the tutorial's
shape); and as lltm.c's one fused op (tn_custom_op), whose forward and backward run in C
with no Python between them. Both are the
tutorial's code with `import tensor as torch`; this script trains each for a few steps
from the same weights and checks that they agree.

    python3 examples/extension/lltm.py
"""
import math
import os
import sys

import tensor as torch
from tensor.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
lltm_c = load(name="lltm_c", sources=[os.path.join(HERE, "lltm.c")])


class LLTMFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weights, bias, old_h, old_cell):
        outputs = lltm_c.lltm_forward(input, weights, bias, old_h, old_cell)
        new_h, new_cell = outputs[:2]
        ctx.save_for_backward(*(outputs[1:] + (weights,)))
        return new_h, new_cell

    @staticmethod
    def backward(ctx, grad_h, grad_cell):
        d_old_h, d_input, d_weights, d_bias, d_old_cell = lltm_c.lltm_backward(
            grad_h.contiguous(), grad_cell.contiguous(), *ctx.saved_tensors)
        return d_input, d_weights, d_bias, d_old_h, d_old_cell


class LLTM(torch.nn.Module):
    """The C extension's cell."""

    def __init__(self, input_features, state_size):
        super().__init__()
        self.input_features = input_features
        self.state_size = state_size
        self.weights = torch.nn.Parameter(torch.empty(3 * state_size, input_features + state_size))
        self.bias = torch.nn.Parameter(torch.empty(3 * state_size))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.state_size)
        for weight in self.parameters():
            weight.data.uniform_(-stdv, +stdv)

    def forward(self, input, state):
        return LLTMFunction.apply(input, self.weights, self.bias, *state)


class LLTMFused(LLTM):
    """The C cell as one differentiable op of the library (lltm_cell: tn_custom_op with the
    C backward), so no Python runs between its forward and its backward."""

    def forward(self, input, state):
        out = lltm_c.lltm_cell(input, self.weights, self.bias, *state)
        return out[0], out[1]


class LLTMPython(LLTM):
    """The same cell in Python: autograd differentiates the forward."""

    def forward(self, input, state):
        old_h, old_cell = state
        X = torch.cat([old_h, input], dim=1)
        gate_weights = torch.nn.functional.linear(X, self.weights, self.bias)
        gates = gate_weights.chunk(3, dim=1)
        input_gate = torch.sigmoid(gates[0])
        output_gate = torch.sigmoid(gates[1])
        candidate_cell = torch.nn.functional.elu(gates[2])
        new_cell = old_cell + candidate_cell * input_gate
        new_h = torch.tanh(new_cell) * output_gate
        return new_h, new_cell


def train(cell_class, steps=20, batch_size=16, input_features=32, state_size=128, dtype=torch.float32):
    """A few SGD steps that make new_h follow a target; returns the losses and the cell."""
    torch.manual_seed(42)
    cell = cell_class(input_features, state_size).to(dtype)
    X = torch.randn(batch_size, input_features, dtype=dtype)
    h = torch.randn(batch_size, state_size, dtype=dtype)
    C = torch.randn(batch_size, state_size, dtype=dtype)
    target = torch.randn(batch_size, state_size, dtype=dtype)
    opt = torch.optim.SGD(cell.parameters(), lr=0.5)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        new_h, new_C = cell(X, (h, C))
        loss = ((new_h - target) ** 2).mean() + 0.1 * new_C.pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, cell


if __name__ == "__main__":
    c_losses, _ = train(LLTM)
    fused_losses, _ = train(LLTMFused)
    py_losses, _ = train(LLTMPython)
    for i in (0, 1, len(c_losses) - 1):
        print(f"step {i:2d}: loss C extension {c_losses[i]:.6f}   fused {fused_losses[i]:.6f}   Python {py_losses[i]:.6f}")
    worst = max(abs(a - b) for a, b, in zip(c_losses + fused_losses, py_losses + py_losses))
    print(f"largest difference of the losses: {worst:.2e}")
    sys.exit(0 if worst < 1e-4 and c_losses[-1] < c_losses[0] else 1)
