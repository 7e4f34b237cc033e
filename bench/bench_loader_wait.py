"""How long next() of a DataLoader with worker processes takes when the batch is ready:
tensor's Python DataLoader beside torch's, in one run (issue 21: "the step never waits on
data"). Fashion-MNIST-shaped TensorDataset (60000 x 1 x 28 x 28 float32), batch 64,
shuffled, 2 persistent workers; the "step" sleeps STEP_MS so the workers have the cores and
every batch is ready: what is measured is the handing over (queue, descriptors, mapping).

Usage: /usr/bin/python3 bench/bench_loader_wait.py [ROUNDS] [STEPS] [STEP_MS]
"""
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(which, steps, step_ms):
    if which == "torch":
        import torch
    else:
        sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
        import tensor as torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    n = 60000
    x = (torch.rand(n, 28, 28) * 255).to(torch.uint8)
    ds = torch.utils.data.TensorDataset(x.unsqueeze(1).float() / 255, torch.randint(0, 10, (n,)))
    dl = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, drop_last=True, num_workers=2,
                                     persistent_workers=True)
    it = iter(dl)
    next(it)                                   # the workers started
    waits = []
    for _ in range(steps):
        t = time.perf_counter()
        next(it)
        waits.append(time.perf_counter() - t)
        time.sleep(step_ms / 1e3)
    waits.sort()
    print(sum(waits), waits[len(waits) // 2], waits[len(waits) * 9 // 10])


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    step_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    res = {"tensor": [], "torch": []}
    for _ in range(rounds):
        for which in res:                      # alternating
            out = subprocess.run([sys.executable, __file__, "--child", which, str(steps), str(step_ms)],
                                 capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"{which} failed:\n{out.stderr[-2000:]}")
            res[which].append([float(v) for v in out.stdout.split()])

    def med(which, k):
        v = sorted(r[k] for r in res[which])
        return v[len(v) // 2]
    print(f"DataLoader, 2 workers, batch 64 of 1x28x28, {steps} ready batches, {rounds} rounds (medians), "
          f"load {os.getloadavg()[0]:.1f}")
    print("| | tensor | torch | tensor / torch |")
    print("|---|---|---|---|")
    for k, name, unit in ((1, "next() median", 1e6), (2, "next() p90", 1e6), (0, "total wait", 1e3)):
        a, b = med("tensor", k), med("torch", k)
        u = "us" if unit == 1e6 else "ms"
        print(f"| {name}, {u} | {a * unit:.0f} | {b * unit:.0f} | {a / b:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        main()
