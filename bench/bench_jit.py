"""Captured-graph replay beside eager, from Python (issue 22).

    python3 bench/bench_jit.py cnn|transformer BATCH THREADS REPS
        PyTorch's side of bench/bench_jit.c: the median ms of PyTorch's eager forward
        (eval, no_grad) of the same architecture.
    python3 bench/bench_jit.py --table [REPS]
        A markdown table: our Python eager forward (tensor.nn), the same model traced
        (tensor.jit.trace) and frozen (tensor.jit.freeze: folded, fused, replayed under its
        static memory plan) and PyTorch's eager forward, at batch 1 and 64, 1 and 2 threads,
        the medians of REPS calls at batch 64 (10x at batch 1), eager and replay alternating."""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))


def build(nn, name, batch, randn):
    if name == "cnn":
        m = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
        x = randn(batch, 1, 28, 28)
    else:
        m = nn.Sequential(nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, batch_first=True),
                          nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, batch_first=True))
        x = randn(batch, 32, 128)
    return m.eval(), x


def medians(fns, reps):
    ts = [[] for _ in fns]
    for it in range(reps + 3):
        for k, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            t1 = time.perf_counter()
            if it >= 3:
                ts[k].append((t1 - t0) * 1e3)
    return [statistics.median(t) for t in ts]


def torch_only(name, batch, threads, reps):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    m, x = build(torch.nn, name, batch, torch.randn)
    with torch.no_grad():
        return medians([lambda: m(x)], reps)[0]


def table(reps64):
    import tensor as tn
    try:
        import torch
    except ImportError:
        torch = None
    print("| model | batch | threads | our Python eager ms | traced + frozen replay ms | PyTorch eager ms | replay / our eager | replay / PyTorch |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("cnn", "transformer"):
        for batch in (1, 64):
            reps = reps64 if batch == 64 else 10 * reps64
            tn.manual_seed(0)
            m, x = build(tn.nn, name, batch, tn.randn)
            frozen = tn.jit.freeze(tn.jit.trace(m, x))
            if torch is not None:
                torch.manual_seed(0)
                tm, tx = build(torch.nn, name, batch, torch.randn)
            for threads in (1, 2):
                tn.set_num_threads(threads)
                fns = [lambda: m(x), lambda: frozen(x)]
                if torch is not None:
                    torch.set_num_threads(threads)
                    fns.append(lambda: tm(tx))
                with tn.no_grad():
                    if torch is not None:
                        with torch.no_grad():
                            r = medians(fns, reps)
                    else:
                        r = medians(fns, reps) + [float("nan")]
                print(f"| {name} | {batch} | {threads} | {r[0]:.3f} | {r[1]:.3f} | {r[2]:.3f} | {r[1] / r[0]:.2f} | {r[1] / r[2]:.2f} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--table":
        table(int(sys.argv[2]) if len(sys.argv) > 2 else 10)
    else:
        print(torch_only(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
