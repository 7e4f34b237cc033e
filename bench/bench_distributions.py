"""torch.distributions workloads, tensor.distributions against PyTorch's, one thread.

    PYTHONPATH=bindings/python /usr/bin/python3 bench/bench_distributions.py [--reps 7]

Rows (ms per call, medians of --reps alternating repetitions after a warm-up):
  Normal.log_prob            1e6 float32 values, 0-d parameters
  MVN construct              MultivariateNormal(loc [256, 16], covariance [256, 16, 16]) (Cholesky)
  MVN.log_prob               64 x 256 values of dimension 16 (float64)
  LowRankMVN.log_prob        256 values of dimension 1000, rank 8 (float64)
  OneHotCategorical.sample   (10,) samples of a [1000, 10] batch
  RelaxedOneHot.rsample      (10,) reparameterised samples of a [1000, 10] batch
  Gamma.rsample + backward   1e5 samples, gradient through the implicit reparameterisation
Without PyTorch the torch column says "-".
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import tensor as tn  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def cases(M):
    Dd = M.distributions
    x = M.randn(1000000)
    nrm = Dd.Normal(M.zeros(()), M.ones(()))
    A = M.randn(256, 16, 16, dtype=M.float64)
    C = A @ A.mT + 16 * M.eye(16, dtype=M.float64)
    mvn = Dd.MultivariateNormal(M.zeros(256, 16, dtype=M.float64), C)
    v = M.randn(64, 256, 16, dtype=M.float64)
    lr = Dd.LowRankMultivariateNormal(M.zeros(1000, dtype=M.float64), M.randn(1000, 8, dtype=M.float64),
                                      M.ones(1000, dtype=M.float64))
    vl = M.randn(256, 1000, dtype=M.float64)
    ohc = Dd.OneHotCategorical(M.ones(1000, 10) / 10)
    conc = M.full((100000,), 2.5, requires_grad=True)

    def gamma_step():
        Dd.Gamma(conc, M.ones(())).rsample().sum().backward()
        conc.grad = None
    return [("Normal.log_prob", lambda: nrm.log_prob(x)),
            ("MVN construct", lambda: Dd.MultivariateNormal(M.zeros(256, 16, dtype=M.float64), C)),
            ("MVN.log_prob", lambda: mvn.log_prob(v)),
            ("LowRankMVN.log_prob", lambda: lr.log_prob(vl)),
            ("OneHotCategorical.sample", lambda: ohc.sample((10,))),
            ("RelaxedOneHot.rsample", lambda: Dd.RelaxedOneHotCategorical(M.tensor(0.5), logits=M.zeros(1000, 10)).rsample((10,))),
            ("Gamma.rsample + backward", gamma_step)]


def timed(fn, n=3):
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    tn.set_num_threads(1)
    ours = cases(tn)
    theirs = None
    if torch is not None:
        torch.set_num_threads(1)
        theirs = cases(torch)
    print("| workload | tensor ms | torch ms | ours / torch |\n|---|---|---|---|")
    for i, (name, fn) in enumerate(ours):
        fn()
        ref = theirs[i][1] if theirs else None
        if ref:
            ref()
        a, b = [], []
        for _ in range(args.reps):       # alternate, so a change in the machine's load hits both
            a.append(timed(fn))
            if ref:
                b.append(timed(ref))
        ma = statistics.median(a)
        if ref:
            mb = statistics.median(b)
            print(f"| {name} | {ma:.2f} | {mb:.2f} | {ma / mb:.2f} |")
        else:
            print(f"| {name} | {ma:.2f} | - | |")


if __name__ == "__main__":
    main()
