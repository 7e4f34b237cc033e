"""PyTorch's side of bench_cuda.c: the same GPU workloads, all in one process.

    python3 bench/bench_cuda.py probe
        -> "ok <PyTorch version and GPU>", or one line saying why PyTorch cannot run on a GPU
    python3 bench/bench_cuda.py run REPS WORKLOAD:TF32:BF16:INNER ...
        -> per workload, in order (I = its position): "result I <median ms per step> <peak bytes>"
           or "error I <why>"

WORKLOAD: matmul_N, conv_fwd, conv_fwd_bwd, mlp, cnn, gpt (as bench_cuda.c). TF32 1: matmul's
and cuDNN's TF32 on, 0: both off (matmul rows); other workloads keep PyTorch's defaults
(matmul off, cuDNN on) whatever TF32 says. BF16 1: the step under torch.autocast("cuda",
torch.bfloat16); a matmul row's operands in torch.bfloat16. Each repetition times INNER steps between two synchronizes. One process
for all workloads, as a PyTorch program runs: one CUDA context and library start-up; each
workload's tensors are freed (and the cache emptied) before the next, so each peak is its own.
bench_cuda.c runs it with TN_BENCH_PYTHON, else python3 on the PATH.
"""
import contextlib
import gc
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


def matmul(n, dtype=None):
    a, b = torch.randn(n, n, device=DEV, dtype=dtype), torch.randn(n, n, device=DEV, dtype=dtype)

    def step():
        torch.matmul(a, b)
    return step


# GPT-style training step: the sizes of bench_cuda.c's GPT_* constants
GPT_V, GPT_D, GPT_H, GPT_FF, GPT_L, GPT_T, GPT_B = 8192, 512, 8, 2048, 4, 256, 16


def gpt():
    nn, F = torch.nn, torch.nn.functional
    layer = nn.TransformerEncoderLayer(GPT_D, GPT_H, GPT_FF, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
    model = nn.ModuleList([nn.Embedding(GPT_V, GPT_D), nn.Embedding(GPT_T, GPT_D),
                           nn.TransformerEncoder(layer, GPT_L, norm=nn.LayerNorm(GPT_D), enable_nested_tensor=False),
                           nn.Linear(GPT_D, GPT_V, bias=False)]).to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x, y = torch.randint(0, GPT_V, (GPT_B, GPT_T), device=DEV), torch.randint(0, GPT_V, (GPT_B * GPT_T,), device=DEV)
    pos = torch.arange(GPT_T, device=DEV)
    mask = nn.Transformer.generate_square_subsequent_mask(GPT_T).to(DEV)
    tok, posemb, enc, head = model
    try:  # is_causal: PyTorch >= 2.0 (ours: the same mask with is_causal true)
        enc(tok(x[:1]) + posemb(pos), mask=mask, is_causal=True)
        kw = {"is_causal": True}
    except TypeError:
        kw = {}

    def step():
        opt.zero_grad()
        h = enc(tok(x) + posemb(pos), mask=mask, **kw)
        F.cross_entropy(head(h).reshape(-1, GPT_V), y).backward()
        opt.step()
    return step


def make(name, bf16=False):
    if name.startswith("matmul_"):  # bf16: both operands in torch.bfloat16 (cuBLAS's bf16 GEMM)
        return matmul(int(name[len("matmul_"):]), torch.bfloat16 if bf16 else None)
    b = bench_train
    return {"conv_fwd": b.conv_fwd, "conv_fwd_bwd": b.conv_fwd_bwd, "mlp": b.mlp, "cnn": b.cnn, "gpt": gpt}[name]()


def run(name, tf32, bf16, reps, inner):
    matmul_row = name.startswith("matmul_")
    torch.backends.cuda.matmul.allow_tf32 = matmul_row and tf32
    torch.backends.cudnn.allow_tf32 = tf32 or not matmul_row  # PyTorch's default (on) outside matmul rows
    torch.manual_seed(0)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 and not matmul_row else contextlib.nullcontext()
    with amp:
        step = make(name, bf16)
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
    if len(argv) < 2 or argv[0] != "run":
        print(f"error usage: {sys.argv[0]} probe | run REPS WORKLOAD:TF32:BF16:INNER ...")
        return 2
    why = probe()
    reps = int(argv[1])
    for i, w in enumerate(argv[2:]):
        if not why.startswith("ok "):
            print(f"error {i} {why}", flush=True)
            continue
        try:
            name, tf32, bf16, inner = w.split(":")
            if inner == "0":  # not selected (TN_BENCH_ONLY)
                continue
            ms, peak = run(name, tf32 == "1", bf16 == "1", reps, int(inner))
            print(f"result {i} {ms:.6f} {peak}", flush=True)
        except Exception as e:  # out of memory, an unknown workload: one line for the table
            msg = str(e).strip().splitlines()
            print(f"error {i} {type(e).__name__}: {msg[0] if msg else ''}", flush=True)
        gc.collect()  # this workload's tensors, before the next one's peak
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
