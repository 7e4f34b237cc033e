"""PyTorch side of bench/bench_sparse.c: torch.sparse.mm of the same CSR matrix (read from the
files the C side wrote) by dense float32 feature matrices of P columns.
Usage: bench_sparse.py DIR THREADS REPS P... Prints two lines, the median and the fastest
milliseconds, one per P."""
import statistics, sys, time
import numpy as np
import torch

d, threads, reps, ps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(p) for p in sys.argv[4:]]
torch.set_num_threads(threads)
crow = torch.from_numpy(np.fromfile(f"{d}/crow.bin", dtype=np.int64))
col = torch.from_numpy(np.fromfile(f"{d}/col.bin", dtype=np.int64))
val = torch.from_numpy(np.fromfile(f"{d}/val.bin", dtype=np.float32))
n = crow.numel() - 1
A = torch.sparse_csr_tensor(crow, col, val, (n, n))
med, best = [], []
for p in ps:
    X = torch.from_numpy(np.fromfile(f"{d}/x{p}.bin", dtype=np.float32).reshape(n, p))
    torch.sparse.mm(A, X)  # warm-up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.sparse.mm(A, X)
        ts.append((time.perf_counter() - t0) * 1e3)
    med.append(statistics.median(ts))
    best.append(min(ts))
print(" ".join(f"{t:.4f}" for t in med))
print(" ".join(f"{t:.4f}" for t in best))
