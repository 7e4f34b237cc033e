"""The LLTM cell of PyTorch's C++-extension tutorial, forward + backward per step, in four
forms side by side:

  ext      tensor.h, the C extension examples/extension/lltm.c (forward and backward in C,
           loaded by tensor.utils.cpp_extension.load) inside an autograd.Function
  fused    tensor.h, lltm.c's lltm_cell: the same C forward and backward as one op of the
           library's autograd (tn_custom_op), no Python between them
  python   tensor.h, the same cell in Python (autograd derives the backward)
  torch    PyTorch, the tutorial's pure-Python LLTM (the reference)

    PYTHONPATH=bindings/python /usr/bin/python3 bench/bench_lltm.py [--reps 7] [--steps 50]
                                                                   [--batch 16] [--features 32] [--state 128]

Each row is run at 1 and 2 threads (set_num_threads on both libraries); every repetition
times --steps steps of forward + backward (grads reset with zero_grad); the table shows
the median milliseconds per step and the ratios fused / python and fused / torch. The libraries
are timed alternately, so a busy machine slows all of them alike.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bindings", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "extension"))
import tensor as tn  # noqa: E402
import lltm  # noqa: E402  (builds or loads the cached extension)

try:
    import torch
except ImportError:
    torch = None


def tn_case(cell_class, a):
    tn.manual_seed(0)
    cell = cell_class(a.features, a.state)
    X, h, C = tn.randn(a.batch, a.features), tn.randn(a.batch, a.state), tn.randn(a.batch, a.state)

    def step():
        cell.zero_grad()
        new_h, new_C = cell(X, (h, C))
        (new_h.sum() + new_C.sum()).backward()
    return step


def torch_case(a):
    import math
    torch.manual_seed(0)

    class LLTM(torch.nn.Module):
        def __init__(self, input_features, state_size):
            super().__init__()
            self.weights = torch.nn.Parameter(torch.empty(3 * state_size, input_features + state_size))
            self.bias = torch.nn.Parameter(torch.empty(3 * state_size))
            stdv = 1.0 / math.sqrt(state_size)
            for weight in self.parameters():
                weight.data.uniform_(-stdv, +stdv)

        def forward(self, input, state):
            old_h, old_cell = state
            X = torch.cat([old_h, input], dim=1)
            gate_weights = torch.nn.functional.linear(X, self.weights, self.bias)
            gates = gate_weights.chunk(3, dim=1)
            input_gate, output_gate = torch.sigmoid(gates[0]), torch.sigmoid(gates[1])
            candidate_cell = torch.nn.functional.elu(gates[2])
            new_cell = old_cell + candidate_cell * input_gate
            return torch.tanh(new_cell) * output_gate, new_cell

    cell = LLTM(a.features, a.state)
    X, h, C = torch.randn(a.batch, a.features), torch.randn(a.batch, a.state), torch.randn(a.batch, a.state)

    def step():
        cell.zero_grad()
        new_h, new_C = cell(X, (h, C))
        (new_h.sum() + new_C.sum()).backward()
    return step


def timed(step, steps):
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--state", type=int, default=128)
    a = ap.parse_args()
    cases = {"ext": tn_case(lltm.LLTM, a), "fused": tn_case(lltm.LLTMFused, a), "python": tn_case(lltm.LLTMPython, a)}
    if torch is not None:
        cases["torch"] = torch_case(a)
    print(f"LLTM batch {a.batch}, {a.features} features, state {a.state}: ms per forward + backward "
          f"(median of {a.reps} x {a.steps} steps)")
    print(f"{'threads':>7} " + " ".join(f"{k:>8}" for k in cases) + f" {'fused/python':>13} {'fused/torch':>12}")
    for threads in (1, 2):
        tn.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        for step in cases.values():
            timed(step, 3)                      # warm-up
        times = {k: [] for k in cases}
        for _ in range(a.reps):
            for k, step in cases.items():
                times[k].append(timed(step, a.steps))
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio_t = f"{med['fused'] / med['torch']:12.2f}" if "torch" in med else f"{'-':>12}"
        print(f"{threads:>7} " + " ".join(f"{med[k]:8.3f}" for k in cases) + f" {med['fused'] / med['python']:13.2f} {ratio_t}")


if __name__ == "__main__":
    main()
