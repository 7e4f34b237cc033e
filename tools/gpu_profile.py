#!/usr/bin/env python3
"""tools/gpu_profile.py — where the GPU time of a training step goes, ours beside PyTorch's.
Our benchmark's workloads run inside a PyTorch process under torch.profiler, whose CUPTI
tracer records every kernel, memcpy and memset the process launches (ours included: the
tracer sees the CUDA context, not the library); hooks in bench_cuda.c start and stop it
around each workload's timed steps, so set-up is left out. Then PyTorch's own step of the
same workloads (bench/bench_cuda.py) under the same profiler. Per workload and side: GPU
milliseconds and launches per step by kernel, and the step's total GPU time.

    make build/cuda/libbench_cuda.so     (make gpu-check's flags for this GPU)
    TN_BENCH_ONLY=gpt python3 tools/gpu_profile.py [REPS] [ROWS]

Needs PyTorch with CUDA under the interpreter; run from the repository root.
"""
import collections
import contextlib
import ctypes
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def report(side, name, prof, steps, rows):
    """The kernels of `steps` steps, per step, the largest first."""
    tot = collections.defaultdict(float)
    cnt = collections.Counter()
    for e in prof.events():   # the GPU's own events: kernels, memcpy, memset
        if "CUDA" not in str(getattr(e, "device_type", "")):
            continue
        tot[e.name] += e.time_range.elapsed_us()
        cnt[e.name] += 1
    if not tot:   # an older profiler: its averages' self device time
        for e in prof.key_averages():
            us = getattr(e, "self_device_time_total", None)
            us = getattr(e, "self_cuda_time_total", 0) if us is None else us
            if us:
                tot[e.key] += us
                cnt[e.key] += e.count
    total = sum(tot.values()) / 1e3 / steps
    print(f"\n### {side}: {name} — GPU {total:.3f} ms per step, {sum(cnt.values()) / steps:.0f} launches per step ({steps} steps)")
    print(f"{'ms/step':>9} {'n/step':>7}  kernel")
    for k, us in sorted(tot.items(), key=lambda kv: -kv[1])[:rows]:
        print(f"{us / 1e3 / steps:9.3f} {cnt[k] / steps:7.1f}  {k[:110]}")
    return total


def ours(reps, rows, totals):
    os.environ["TN_BENCH_PYTHON"] = "none"   # our side only; PyTorch's runs below
    lib = ctypes.CDLL(os.path.abspath("build/cuda/libbench_cuda.so"))
    hook = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int)
    live = {}

    def begin(name, steps):
        live["p"] = profile(activities=[ProfilerActivity.CUDA])
        live["p"].start()

    def end(name, steps):
        torch.cuda.synchronize()
        p = live.pop("p")
        p.stop()
        totals[("ours", name.decode())] = report("tensor.h", name.decode(), p, steps, rows)
    cb = (hook(begin), hook(end))   # referenced until the run ends
    lib.tn_bench_set_profile_hooks(*cb)
    lib.tn_bench_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    argv_c = (ctypes.c_char_p * 3)(b"bench_cuda", str(reps).encode(), None)
    lib.tn_bench_main(2, argv_c)


def theirs(reps, rows, totals):
    sys.path.insert(0, os.path.abspath("bench"))
    import bench_cuda
    only = [w for w in os.environ.get("TN_BENCH_ONLY", "gpt").split(",") if w]
    for name, bf16 in (("gpt", False), ("gpt", True), ("cnn", False), ("mlp", False)):
        label = name + (" bf16" if bf16 else "")
        if not any(w in label for w in only):
            continue
        torch.manual_seed(0)
        amp = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
        with amp:
            step = bench_cuda.make(name, bf16)
            for _ in range(4):
                step()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                for _ in range(reps):
                    step()
                torch.cuda.synchronize()
        totals[("torch", label)] = report("PyTorch " + torch.__version__, label, p, reps, rows)
        del step
        torch.cuda.empty_cache()


def main(argv):
    reps = int(argv[0]) if argv else 3
    rows = int(argv[1]) if len(argv) > 1 else 25
    os.environ.setdefault("TN_BENCH_ONLY", "gpt")
    torch.cuda.init()
    totals = {}
    ours(reps, rows, totals)
    theirs(reps, rows, totals)
    print("\nGPU busy per step: " + "; ".join(f"{side} {name} {ms:.2f} ms" for (side, name), ms in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
