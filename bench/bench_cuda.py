"""PyTorch's side of bench_cuda.c: the same GPU workloads, one per run.

    /usr/bin/python3 bench/bench_cuda.py probe
        -> "ok <PyTorch version and GPU>", or one line saying why PyTorch cannot run on a GPU
    /usr/bin/python3 bench/bench_cuda.py WORKLOAD TF32 REPS INNER
        -> "result <median ms per step> <peak bytes>", or "error <why>"

WORKLOAD: matmul_N, conv_fwd, conv_fwd_bwd, mlp, cnn (as bench_cuda.c). TF32: 0 or 1, for
cuBLAS and cuDNN alike. Each repetition times INNER steps between two synchronizes.
"""
import statistics
import sys
import time

try:
    import torch
    import bench_train                 # the same workloads, built on the GPU
    bench_train.DEV = DEV = "cuda"
    IMPORT_ERROR = None
except Exception as e:  # not installed, or a broken install
    torch = None
    IMPORT_ERROR = e


def probe():
    if torch is None:
        return f"no torch under {sys.executable}: {type(IMPORT_ERROR).__name__}: {IMPORT_ERROR}"
    if not torch.cuda.is_available():
        if torch.version.cuda is None:
            return f"PyTorch {torch.__version__} under {sys.executable} is built without CUDA"
        return (f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}) under {sys.executable} "
                f"sees no usable GPU (torch.cuda.is_available() is False)")
    return f"ok PyTorch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name()}"


def matmul(n):
    a, b = torch.randn(n, n, device=DEV), torch.randn(n, n, device=DEV)

    def step():
        torch.matmul(a, b)
    return step


def make(name):
    if name.startswith("matmul_"):
        return matmul(int(name[len("matmul_"):]))
    b = bench_train
    return {"conv_fwd": b.conv_fwd, "conv_fwd_bwd": b.conv_fwd_bwd, "mlp": b.mlp, "cnn": b.cnn}[name]()


def run(name, tf32, reps, inner):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32  # on by default in PyTorch; set as ours
    torch.manual_seed(0)
    step = make(name)
    for _ in range(4):  # as bench_cuda.c: 3 warm-up steps and the one that chose INNER
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(inner):
            step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3 / inner)
    return statistics.median(times), torch.cuda.max_memory_allocated()


def main(argv):
    if argv == ["probe"]:
        print(probe())
        return 0
    if len(argv) != 4:
        print(f"error usage: {sys.argv[0]} probe | WORKLOAD TF32 REPS INNER")
        return 2
    why = probe()
    if not why.startswith("ok "):
        print(f"error {why}")
        return 1
    try:
        ms, peak = run(argv[0], argv[1] == "1", int(argv[2]), int(argv[3]))
    except Exception as e:  # out of memory, an unknown workload: one line for the table
        msg = str(e).strip().splitlines()
        print(f"error {type(e).__name__}: {msg[0] if msg else ''}")
        return 1
    print(f"result {ms:.6f} {peak}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
