"""PyTorch side of bench/bench_fft.c: the same transforms through torch.fft (pocketfft in
Debian's 1.13), complex64/float32. Usage: bench_fft.py THREADS REPS. Prints two lines, the
median and the fastest milliseconds: c2c_2^20 r2c_2^20 batch_1000x1024 prime_1000003 fft2_512x512."""
import statistics, sys, time
import torch

threads, reps = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(0)
cases = [
    lambda x=torch.randn(1 << 20, dtype=torch.complex64): torch.fft.fft(x),
    lambda x=torch.randn(1 << 20): torch.fft.rfft(x),
    lambda x=torch.randn(1000, 1024, dtype=torch.complex64): torch.fft.fft(x),
    lambda x=torch.randn(1000003, dtype=torch.complex64): torch.fft.fft(x),
    lambda x=torch.randn(512, 512, dtype=torch.complex64): torch.fft.fft2(x),
]
out, best = [], []
for f in cases:
    f(); f()  # warm-up: plans
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
    out.append(statistics.median(ts))
    best.append(min(ts))
print(" ".join(f"{t:.4f}" for t in out))
print(" ".join(f"{t:.4f}" for t in best))
