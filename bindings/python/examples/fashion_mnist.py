"""fashion_mnist.py — a small CNN on Fashion-MNIST, written as an ordinary PyTorch script.

The same network as examples/fashion_cnn.c (two conv blocks with batch norm, max
pooling, dropout, two linear layers), Adam at 1e-3 with StepLR(step_size=2, gamma=0.3),
3 epochs of batches of 64: about 91-92 % test accuracy. Change the first import to
``import torch`` and it runs unchanged under PyTorch (NumPy reads the IDX files).

    make lib/libtensor.so
    python3 bindings/python/examples/fashion_mnist.py [--epochs 3] [--data data/fashion-mnist]
                                                      [--save cnn.safetensors] [--expect 0.91]
                                                      [--max-steps N]
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as torch  # noqa: E402   (or: import torch)

nn = torch.nn
F = torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset


def read_idx(path):
    """An IDX file (MNIST's format: magic, big-endian dims, then the bytes) as a uint8 tensor."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    zero, kind, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes")
    shape = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return torch.from_numpy(np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape).copy())


def fashion_mnist(root, train):
    split = "train" if train else "t10k"
    images = read_idx(os.path.join(root, f"{split}-images-idx3-ubyte"))
    labels = read_idx(os.path.join(root, f"{split}-labels-idx1-ubyte"))
    # [N, 1, 28, 28] in [0, 1], as torchvision's ToTensor; int64 labels
    return TensorDataset(images.unsqueeze(1).float() / 255, labels.long())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)      # 32 x 14 x 14
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)      # 64 x 7 x 7
        x = self.dropout(torch.flatten(x, 1))
        return self.fc2(F.relu(self.fc1(x)))


def train_epoch(model, loader, optimizer, epoch, epochs, max_steps=None, device="cpu"):
    model.train()
    t0, seen, loss_sum = time.time(), 0, 0.0
    total = min(len(loader), max_steps or len(loader))
    for step, (x, y) in enumerate(loader, 1):
        if step > total:
            break
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        seen += x.shape[0]
        loss_sum += loss.item()
        if step % 100 == 0 or step == total:
            dt = time.time() - t0
            eta = dt / step * (total - step)
            print(f"\repoch {epoch}/{epochs}  {step:4d}/{total}  loss {loss_sum / step:.4f}  "
                  f"{seen / dt:5.0f} samples/s  ETA {int(eta) // 60}:{int(eta) % 60:02d}", end="", flush=True)
    print(f"  ({time.time() - t0:.1f} s)")
    return loss_sum / total


def accuracy(model, loader, device="cpu"):
    model.eval()
    right = total = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            right += (model(x).argmax(dim=1) == y).sum().item()
            total += y.shape[0]
    return right / total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                                   "data", "fashion-mnist"))
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--save", default=None, help="write the model's state dict here")
    ap.add_argument("--expect", type=float, default=0.0, help="exit 1 below this test accuracy")
    ap.add_argument("--max-steps", type=int, default=None, help="at most this many batches per epoch (smoke tests)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (needs lib/libtensor_cuda.so from `make cuda` and a GPU)")
    args = ap.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit(f"--device {args.device}: {torch.cuda.unavailable_reason()}")

    torch.manual_seed(0)
    try:
        train_set, test_set = fashion_mnist(args.data, True), fashion_mnist(args.data, False)
    except OSError as e:
        sys.exit(f"{e}\n(`make demo` fetches the data into data/fashion-mnist)")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=1000)

    model = Net().to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.3)
    print(model)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, {len(train_set)} training images")

    t0 = time.time()
    for epoch in range(1, args.epochs + 1):
        train_epoch(model, train_loader, optimizer, epoch, args.epochs, args.max_steps, args.device)
        scheduler.step()
    acc = accuracy(model, test_loader, args.device)
    print(f"test accuracy {100 * acc:.2f} %  ({time.time() - t0:.0f} s)")
    if args.save:
        torch.save(model.state_dict(), args.save)
        print(f"saved {args.save}")
    if acc < args.expect:
        sys.exit(f"accuracy {acc:.4f} is below the expected {args.expect:.4f}")


if __name__ == "__main__":
    main()
