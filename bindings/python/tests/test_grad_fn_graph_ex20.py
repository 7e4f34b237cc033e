"""grad_fn.next_functions against PyTorch's: the graph a program walks (the 60-minute blitz's
neural_networks_tutorial prints loss.grad_fn.next_functions[0][0], PyTorch's
AddmmBackward0). Each case builds the op on an input with history (x * 1, so the edge
leads to MulBackward0) and compares the node's name and its next_functions' names with
torch's.

Known difference, one class (KNOWN_COMPOSITE, each a strict xfail, so a fix fails the suite
until its entry goes): an op the C library composes of other ops and names as PyTorch's
node (tn__grad_name: MseLossBackward0, NllLossBackward0, ...) exposes its last inner node's
edges (MseLossBackward0 -> PowBackward0) instead of its own inputs (-> the input's and the
target's nodes). What a fix needs (src/autograd): a composite's outer edges recorded when
it is named (its inputs' nodes, or the frontier of the nodes made since the composite
began), which tn_node_next then returns for that node."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

CASES = {
    "mse_loss": lambda m, F, x, y, t: F.mse_loss(x, y),
    "l1_loss": lambda m, F, x, y, t: F.l1_loss(x, y),
    "smooth_l1_loss": lambda m, F, x, y, t: F.smooth_l1_loss(x, y),
    "huber_loss": lambda m, F, x, y, t: F.huber_loss(x, y),
    "cross_entropy": lambda m, F, x, y, t: F.cross_entropy(x, t),
    "nll_loss": lambda m, F, x, y, t: F.nll_loss(x, t),
    "binary_cross_entropy": lambda m, F, x, y, t: F.binary_cross_entropy(m.sigmoid(x), m.sigmoid(y)),
    "binary_cross_entropy_with_logits": lambda m, F, x, y, t: F.binary_cross_entropy_with_logits(x, m.sigmoid(y)),
    "kl_div": lambda m, F, x, y, t: F.kl_div(x, y.softmax(1), reduction="batchmean"),
    "soft_margin_loss": lambda m, F, x, y, t: F.soft_margin_loss(x, y.detach()),
    "log_softmax": lambda m, F, x, y, t: F.log_softmax(x, 1),
    "softmax": lambda m, F, x, y, t: F.softmax(x, 1),
    "gelu": lambda m, F, x, y, t: F.gelu(x),
    "layer_norm": lambda m, F, x, y, t: F.layer_norm(x, (3,)),
    "linear": lambda m, F, x, y, t: F.linear(x, y),
    "linear_bias": lambda m, F, x, y, t: F.linear(x, y, y[0]),
    "silu": lambda m, F, x, y, t: F.silu(x),
    "mish": lambda m, F, x, y, t: F.mish(x),
    "logsigmoid": lambda m, F, x, y, t: F.logsigmoid(x),
    "hardswish": lambda m, F, x, y, t: F.hardswish(x),
    "relu": lambda m, F, x, y, t: F.relu(x),
    "sum": lambda m, F, x, y, t: x.sum(),
    "matmul": lambda m, F, x, y, t: x @ y,
}

_COMPOSITE = "a composite named as PyTorch's node exposes its last inner node's edges, not its inputs'"
KNOWN_COMPOSITE = {k: _COMPOSITE for k in (
    "mse_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "soft_margin_loss", "layer_norm", "logsigmoid")}


def graph(mod, case):
    """(node name, names of its next_functions) for the case built with mod (tensor or torch)"""
    a = np.random.RandomState(0).randn(2, 3)
    b = np.random.RandomState(1).randn(3, 3)
    x = mod.tensor(a, requires_grad=True) * 1
    y = mod.tensor(b if case.startswith("linear") or case == "matmul" else b[:2], requires_grad=True) * 1
    r = CASES[case](mod, mod.nn.functional, x, y, mod.tensor([0, 2]))
    return r.grad_fn.name(), tuple(n.name() if n is not None else None for n, _ in r.grad_fn.next_functions)


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
@pytest.mark.parametrize("case", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=KNOWN_COMPOSITE[k]))
                                  if k in KNOWN_COMPOSITE else k for k in CASES])
def test_next_functions_like_torch(case):
    assert graph(tn, case) == graph(torch, case)


def test_next_functions_reach_the_leaves():
    """the blitz's walk: Linear's node, then AccumulateGrad at the parameters (no torch needed)"""
    lin = tn.nn.Linear(4, 3)
    out = lin(tn.randn(2, 4)).sum()
    node = out.grad_fn.next_functions[0][0]
    assert node.name() == "AddmmBackward0"
    kinds = [n.name() for n, _ in node.next_functions if n is not None]
    assert "torch::autograd::AccumulateGrad" in kinds
    acc = next(n for n, _ in node.next_functions if n is not None and n.name().endswith("AccumulateGrad"))
    assert acc.variable is lin.bias and acc.next_functions == ()
