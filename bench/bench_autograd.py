"""PyTorch side of bench/bench_autograd.c: the same two graphs, eager mode, one thread.
Prints "<simple_us> <chain_us>": median microseconds per forward+backward step."""
import statistics, sys, time
import torch

torch.set_num_threads(1)

def simple(steps):
    a, b, c = (torch.ones(1, requires_grad=True) for _ in range(3))
    t0 = time.perf_counter()
    for _ in range(steps):
        y = (a * b + c).sum()
        y.backward()
        a.grad = b.grad = c.grad = None
    return (time.perf_counter() - t0) / steps * 1e6

def chain(steps, n=100):
    x = torch.ones(1, requires_grad=True)
    t0 = time.perf_counter()
    for _ in range(steps):
        y = x
        for i in range(n):
            y = y * 1.0001 if i % 2 else y + 0.5
        y.sum().backward()
        x.grad = None
    return (time.perf_counter() - t0) / steps * 1e6

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
simple(200); chain(20)  # warm-up
s = statistics.median(simple(2000) for _ in range(reps))
c = statistics.median(chain(200) for _ in range(reps))
print(f"{s:.3f} {c:.3f}")
