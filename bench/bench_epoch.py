"""PyTorch's side of bench_epoch.c: one training epoch of examples/fashion_cnn.c's CNN.

    /usr/bin/python3 bench/bench_epoch.py DATA_DIR THREADS [cnn|mlp [STEPS]]
        -> prints "seconds <s> loss <mean loss> peak <the process's VmHWM in MB>"

Same model, batch 64, shuffled, Adam lr 1e-3; the images are held as uint8 (as
tn_mnist_dataset and torchvision's MNIST hold them) and scaled to [0, 1] per batch as
tn_mnist_dataset does; only the training loop is timed (the data is in memory first).
"""
import gzip
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path, opener = path + ".gz", gzip.open
    with opener(path, "rb") as f:
        data = f.read()
    nd = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * nd).reshape(shape)


def main():
    folder, threads = sys.argv[1], int(sys.argv[2])
    mlp = len(sys.argv) > 3 and sys.argv[3] == "mlp"   # examples/fashion_mlp.c's MLP instead
    max_steps = int(sys.argv[4]) if len(sys.argv) > 4 else 0   # > 0: only the first steps
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x = torch.from_numpy(idx(os.path.join(folder, "train-images-idx3-ubyte")).copy()).unsqueeze(1)
    y = torch.from_numpy(idx(os.path.join(folder, "train-labels-idx1-ubyte")).astype(np.int64))
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10)) if mlp else nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    t0 = time.perf_counter()
    perm = torch.randperm(len(x))
    total, steps = 0.0, 0
    for i in range(0, len(x), 64):
        if max_steps > 0 and steps >= max_steps:
            break
        b = perm[i:i + 64]
        loss = F.cross_entropy(model(x[b].float() / 255.0), y[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
        steps += 1
    seconds = time.perf_counter() - t0
    print(f"seconds {seconds:.3f} loss {total / steps:.4f} peak {peak_mb():.1f}")


def peak_mb():
    """VmHWM of this process in MB (Linux), 0 elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


if __name__ == "__main__":
    main()
