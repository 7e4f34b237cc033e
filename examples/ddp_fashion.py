"""ddp_fashion.py — data-parallel training of a Fashion-MNIST CNN, PyTorch's DDP tutorial
pattern: init_process_group, a DistributedSampler that gives each rank its share of one
shuffled order, DistributedDataParallel averaging the gradients during backward, and a
DataLoader (optionally with worker processes) per rank.

    make DIST=mpi lib/libtensor_mpi.so
    mpirun -np 2 python3 examples/ddp_fashion.py [--epochs 1] [--batch 64] [--workers 0]
                                                 [--max-steps N] [--expect 0.85] [--threads 1]
                                                 [--backend mpi|gloo|nccl]

--backend nccl trains on the GPU (CUDA tensors, NCCL's collectives; make cuda, with
TENSOR_LIB=lib/libtensor_cuda.so, the default here when it exists), one process per GPU,
launched as torchrun launches PyTorch's (env:// rendezvous: RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT; LOCAL_RANK picks the GPU):

    torchrun --nproc-per-node 1 examples/ddp_fashion.py --backend nccl
    RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 python3 examples/ddp_fashion.py --backend nccl

Without CUDA, --backend nccl says so and exits 1.

With --torch the same script runs under PyTorch (gloo backend; the rank and world size
come from mpirun's environment, as torchrun would set RANK / WORLD_SIZE), which is how
bench/bench_ddp.sh measures PyTorch's DDP beside ours.
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
p.add_argument("--data", default=os.path.join(REPO, "data", "fashion-mnist"))
p.add_argument("--epochs", type=int, default=1)
p.add_argument("--batch", type=int, default=64, help="global batch size, split across the ranks")
p.add_argument("--lr", type=float, default=0.05)
p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes per rank")
p.add_argument("--threads", type=int, default=1, help="threads per rank")
p.add_argument("--max-steps", type=int, default=0, help="stop each epoch after this many steps (0: all)")
p.add_argument("--expect", type=float, default=0.0, help="exit 1 below this test accuracy")
p.add_argument("--torch", action="store_true", help="run under PyTorch (gloo, or nccl with --backend nccl) instead")
p.add_argument("--backend", default=None, choices=["mpi", "gloo", "nccl"],
               help="the process group's backend (default: mpi; gloo under --torch); nccl: CUDA tensors on the GPU")
args = p.parse_args()

if args.torch:
    import torch
    # mpirun's environment, as torchrun would set it
    os.environ.setdefault("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    os.environ.setdefault("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    backend = args.backend or "gloo"
else:
    backend = args.backend or "mpi"
    lib = "libtensor_cuda.so" if backend == "nccl" else "libtensor_mpi.so"   # the GPU unit's build, the MPI build
    if not os.environ.get("TENSOR_LIB") and os.path.exists(os.path.join(REPO, "lib", lib)):
        os.environ["TENSOR_LIB"] = os.path.join(REPO, "lib", lib)
    sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
    import tensor as torch
if backend == "nccl" and not torch.cuda.is_available():
    raise SystemExit("--backend nccl needs CUDA (a GPU and the GPU unit: make cuda, TENSOR_LIB=lib/libtensor_cuda.so); "
                     "use --backend mpi (or gloo) on the CPU")
device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if backend == "nccl" else torch.device("cpu")

import_dist = torch.distributed
nn, F = torch.nn, torch.nn.functional
DDP = torch.nn.parallel.DistributedDataParallel
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
DistributedSampler = torch.utils.data.distributed.DistributedSampler


def read_idx(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return torch.from_numpy(np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape).copy())


def fashion_mnist(train):
    split = "train" if train else "t10k"
    x = read_idx(os.path.join(args.data, f"{split}-images-idx3-ubyte"))
    y = read_idx(os.path.join(args.data, f"{split}-labels-idx1-ubyte"))
    return TensorDataset(x.unsqueeze(1).float() / 255, y.long())


class Net(nn.Module):
    """The CNN of bench/bench_ddp.sh (examples/ddp_fashion.c --model cnn builds the same)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def main():
    torch.set_num_threads(args.threads)
    import_dist.init_process_group(backend=backend)
    rank, world = import_dist.get_rank(), import_dist.get_world_size()
    if args.batch % world:
        raise SystemExit(f"--batch {args.batch} must be a multiple of the {world} ranks")
    train, test = fashion_mnist(True), fashion_mnist(False)
    torch.manual_seed(rank)                       # different on each rank: DDP broadcasts rank 0's
    if device.type == "cuda":
        torch.cuda.set_device(device.index)
    model = DDP(Net().to(device))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=42)
    loader = DataLoader(train, batch_size=args.batch // world, sampler=sampler, drop_last=True,
                        num_workers=args.workers, persistent_workers=args.workers > 0)
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        t0, wait, steps, loss_sum = time.perf_counter(), 0.0, 0, 0.0
        it = iter(loader)
        while True:
            t = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            x, y = x.to(device), y.to(device)
            wait += time.perf_counter() - t
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            steps += 1
            if args.max_steps and steps >= args.max_steps:
                break
        del it
        elapsed = time.perf_counter() - t0
        mean = torch.tensor([loss_sum / max(steps, 1)], dtype=torch.float64, device=device)
        import_dist.all_reduce(mean)
        if rank == 0:
            print(f"epoch {epoch}/{args.epochs}  loss {mean.item() / world:.4f}  {steps} steps in {elapsed:.2f} s "
                  f"({steps * args.batch / elapsed:.0f} samples/s) over {world} ranks; waited {wait:.3f} s on data",
                  flush=True)
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in DataLoader(test, batch_size=1000):
            correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    acc = correct / len(test)
    if rank == 0:
        print(f"test accuracy {100 * acc:.2f} % (rank 0's model; every rank holds the same)", flush=True)
    import_dist.destroy_process_group()
    return 0 if acc >= args.expect else 1


if __name__ == "__main__":
    sys.exit(main())
