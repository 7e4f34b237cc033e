"""Per-call overhead of the Python package (bindings/python/tensor) against PyTorch's eager
mode, on tensors so small that the arithmetic costs nothing: what is measured is the
Python wrapper, ctypes and the C dispatch (ours) against PyTorch's C++ bindings and
dispatcher.

    PYTHONPATH=bindings/python /usr/bin/python3 bench/bench_overhead.py [--reps 7] [--time 0.2]

Rows:
  a + b            two 1-element float32 tensors, the result dropped
  fwd+bwd          a tiny MLP step: relu(x @ w + b).sum().backward(), x [1, 4],
                   w [4, 4] and b [4] leaves, grads reset to None each step
  (ours only, for a profile:)
  ctypes floor     lib.tn_add(pa, pb) + lib.tn_release(r): the bare C call through ctypes
                   with the same 1-element tensors, no Python wrapper at all

Both libraries run on one thread (set_num_threads(1), OMP_NUM_THREADS=1). The two are
timed alternately, each repetition a loop sized to take about --time seconds, after a
warm-up; the table shows the medians in microseconds per call and ours / PyTorch.
Without PyTorch the torch column says "-" and the ratio is left out.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")       # before either library loads OpenMP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import tensor as tn  # noqa: E402
from tensor import _C  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def add_case(mod):
    a, b = mod.ones(1), mod.ones(1)

    def run(n):
        t0 = time.perf_counter()
        for _ in range(n):
            a + b
        return time.perf_counter() - t0
    return run


def mlp_case(mod):
    x = mod.ones(1, 4)
    w = mod.full((4, 4), 0.1).requires_grad_()
    b = mod.zeros(4).requires_grad_()

    def run(n):
        t0 = time.perf_counter()
        for _ in range(n):
            (x @ w + b).relu().sum().backward()
            w.grad = None
            b.grad = None
        return time.perf_counter() - t0
    return run


def ctypes_floor_case():
    a, b = tn.ones(1), tn.ones(1)
    pa, pb = a._ptr, b._ptr
    add, release = _C.lib.tn_add, _C.lib.tn_release

    def run(n):
        t0 = time.perf_counter()
        for _ in range(n):
            release(add(pa, pb))
        return time.perf_counter() - t0
    return run


def calibrate(run, seconds):
    """Loop count for about ``seconds`` per repetition."""
    n = 16
    while True:
        t = run(n)
        if t > seconds / 4 or n > 1 << 24:
            return max(16, int(n * seconds / max(t, 1e-9)))
        n *= 4


def measure(runs, reps, seconds):
    """runs: {column: run}. Alternates the columns rep by rep; returns median us per call."""
    for run in runs.values():                 # warm-up (and JIT-free steady state for both)
        run(200)
    counts = {k: calibrate(r, seconds) for k, r in runs.items()}
    samples = {k: [] for k in runs}
    order = list(runs)
    for rep in range(reps):
        for k in (order if rep % 2 == 0 else order[::-1]):
            samples[k].append(runs[k](counts[k]) / counts[k] * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions per column (default 7)")
    ap.add_argument("--time", type=float, default=0.2, help="seconds per repetition (default 0.2)")
    args = ap.parse_args()

    tn.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)

    rows = []
    for name, make in (("a + b (1 element)", add_case), ("fwd+bwd relu(x@w+b).sum()", mlp_case)):
        runs = {"ours": make(tn)}
        if torch is not None:
            runs["torch"] = make(torch)
        rows.append((name, measure(runs, args.reps, args.time)))
    rows.append(("ctypes floor: tn_add+tn_release", measure({"ours": ctypes_floor_case()}, args.reps, args.time)))

    ver = f"torch {torch.__version__}" if torch is not None else "torch not installed"
    print(f"per-call overhead, us (median of {args.reps}), one thread; Python {sys.version.split()[0]}, {ver}")
    print(f"{'':34s} {'tensor':>9s} {'torch':>9s} {'ratio':>7s}")
    for name, m in rows:
        ours, th = m["ours"], m.get("torch")
        ts = f"{th:9.2f}" if th is not None else f"{'-':>9s}"
        ratio = f"{ours / th:6.2f}x" if th is not None else ""
        print(f"{name:34s} {ours:9.2f} {ts} {ratio:>7s}")


if __name__ == "__main__":
    main()
