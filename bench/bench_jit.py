"""PyTorch's side of bench/bench_jit.c: the median ms of the eager forward (eval, no_grad)
of the same architecture.   python3 bench/bench_jit.py cnn|transformer BATCH THREADS REPS"""
import statistics
import sys
import time

import torch
import torch.nn as nn

name, batch, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(0)
if name == "cnn":
    m = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    x = torch.randn(batch, 1, 28, 28)
else:
    m = nn.Sequential(nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, batch_first=True),
                      nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, batch_first=True))
    x = torch.randn(batch, 32, 128)
m.eval()
ts = []
with torch.no_grad():
    for it in range(reps + 3):
        t0 = time.perf_counter()
        m(x)
        t1 = time.perf_counter()
        if it >= 3:
            ts.append((t1 - t0) * 1e3)
print(statistics.median(ts))
