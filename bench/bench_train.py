"""PyTorch's side of bench_train.c: the same workloads, one thread count per run.

    /usr/bin/python3 bench/bench_train.py WORKLOAD THREADS REPS   -> prints the median ms and
    the peak memory in MB the workload added to the process (VmHWM - VmRSS before its setup)
    and the process's own peak (VmHWM: interpreter, libraries and all)
    /usr/bin/python3 bench/bench_train.py --serve WORKLOAD THREADS   -> bench_train.c's side
    process: steps on request, so the two libraries' runs alternate (see serve)
"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


# The workloads, on DEV (bench_cuda.py sets it to "cuda" and reuses them).
DEV = "cpu"


def train(model, opt, x, y):
    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def mlp():
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return train(model, opt, torch.randn(128, 784, device=DEV), torch.randint(0, 10, (128,), device=DEV))


def cnn():
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)).to(DEV)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return train(model, opt, torch.randn(64, 1, 28, 28, device=DEV), torch.randint(0, 10, (64,), device=DEV))


def conv_setup():
    x = torch.randn(32, 64, 56, 56, device=DEV, requires_grad=True)
    w = torch.randn(64, 64, 3, 3, device=DEV, requires_grad=True)
    return x, w


def conv_fwd():
    x, w = conv_setup()

    def step():
        with torch.no_grad():
            F.conv2d(x, w, padding=1)
    return step


def conv_fwd_bwd():
    x, w = conv_setup()

    def step():
        x.grad = w.grad = None
        F.conv2d(x, w, padding=1).sum().backward()
    return step


def dwconv_fwd_bwd():
    x = torch.randn(32, 64, 56, 56, device=DEV, requires_grad=True)
    w = torch.randn(64, 1, 3, 3, device=DEV, requires_grad=True)

    def step():
        x.grad = w.grad = None
        F.conv2d(x, w, padding=1, groups=64).sum().backward()
    return step


def gpt():
    """issue 25's GPT-style step: see bench_train.c (dropout 0: both sides' attention fused or not alike)."""
    layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    model = nn.Sequential(nn.Embedding(256, 128), nn.TransformerEncoder(layer, 2), nn.Linear(128, 256)).to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randint(0, 256, (16, 64), device=DEV), torch.randint(0, 256, (16 * 64,), device=DEV)
    mask = nn.Transformer.generate_square_subsequent_mask(64).to(DEV)

    def step():
        opt.zero_grad()
        h = model[1](model[0](x), mask=mask)
        F.cross_entropy(model[2](h).reshape(-1, 256), y).backward()
        opt.step()
    return step


def lstm():
    """issue 25's character-LSTM step: see bench_train.c."""
    model = nn.Sequential(nn.Embedding(96, 64), nn.LSTM(64, 256, 2, batch_first=True), nn.Linear(256, 96)).to(DEV)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randint(0, 96, (32, 64), device=DEV), torch.randint(0, 96, (32 * 64,), device=DEV)

    def step():
        opt.zero_grad()
        h, _ = model[1](model[0](x))
        F.cross_entropy(model[2](h).reshape(-1, 96), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def sdpa(q, k, v, causal):
    """F.scaled_dot_product_attention where it exists (torch >= 2.0), else its definition."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    s = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    if causal:
        L = q.shape[-2]
        s = s.masked_fill(~torch.ones(L, L, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return torch.softmax(s, -1) @ v


def attn(causal):
    q, k, v = (torch.randn(4, 8, 512, 64, device=DEV, requires_grad=True) for _ in range(3))

    def step():
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v, causal).sum().backward()
    return step


def rss_mb(field):
    """VmRSS / VmHWM of this process in MB (Linux), 0 elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


WORKLOADS = {"mlp": mlp, "cnn": cnn, "conv_fwd": conv_fwd, "conv_fwd_bwd": conv_fwd_bwd, "dwconv_fwd_bwd": dwconv_fwd_bwd,
             "gpt": gpt, "lstm": lstm, "attn512": lambda: attn(True), "attn512_full": lambda: attn(False)}


def setup(name, threads):
    """The workload's step after the warm-up, and the VmRSS before its setup."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    try:                                    # reset the high-water mark: the peak of this workload only
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    base = rss_mb("VmRSS")
    step = WORKLOADS[name]()
    for _ in range(2):
        step()
    return step, base


# TN_BENCH_CPU=1 (as bench_train.c): the process's CPU time instead of the wall clock
CLOCK = time.process_time if os.environ.get("TN_BENCH_CPU", "0") not in ("", "0") else time.perf_counter


def timed(step, n):
    times = []
    for _ in range(n):
        t0 = CLOCK()
        step()
        times.append((CLOCK() - t0) * 1e3)
    return times


def serve(name, threads):
    """bench_train.c's protocol: "ready", then "run N" -> N step times in ms, "end" -> memory."""
    step, base = setup(name, threads)
    print("ready", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 2 or parts[0] != "run":
            break
        print(" ".join(f"{t:.4f}" for t in timed(step, int(parts[1]))), flush=True)
    print(f"{rss_mb('VmHWM') - base:.1f} {rss_mb('VmHWM'):.1f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    name, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    step, base = setup(name, threads)
    times = timed(step, reps)
    print(f"{statistics.median(times):.3f} {rss_mb('VmHWM') - base:.1f} {rss_mb('VmHWM'):.1f}")
