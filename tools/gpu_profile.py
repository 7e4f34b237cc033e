#!/usr/bin/env python3
"""tools/gpu_profile.py — where our GPU time goes: the benchmark's workloads run inside a
PyTorch process under torch.profiler, whose CUPTI tracer records every kernel, memcpy and
memset the process launches (ours included: the tracer sees the CUDA context, not the
library). Prints, per workload, the GPU time per step by kernel and the share of the step's
wall time the GPU was busy (low: the host is the bottleneck — launches, waits, allocation).

    make build/cuda/libbench_cuda.so     (make gpu-check's flags for this GPU)
    TN_BENCH_ONLY=gpt python3 tools/gpu_profile.py [STEPS] [ROWS]

Needs PyTorch with CUDA under the interpreter; run from the repository root.
"""
import ctypes
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main(argv):
    steps = int(argv[0]) if argv else 3
    rows = int(argv[1]) if len(argv) > 1 else 30
    os.environ.setdefault("TN_BENCH_ONLY", "gpt")
    os.environ["TN_BENCH_PYTHON"] = "none"   # our side only: PyTorch's runs in another process
    torch.cuda.init()
    lib = ctypes.CDLL(os.path.abspath("build/cuda/libbench_cuda.so"))
    lib.tn_bench_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    argv_c = (ctypes.c_char_p * 3)(b"bench_cuda", str(steps).encode(), None)
    lib.tn_bench_main(2, argv_c)   # warm-up run: cuBLAS/cuDNN handles, algorithm choice
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        lib.tn_bench_main(2, argv_c)
    events = prof.key_averages()
    key = "self_device_time_total" if hasattr(events[0], "self_device_time_total") else "self_cuda_time_total"
    print(events.table(sort_by=key, row_limit=rows, max_name_column_width=90))
    gpu_us = sum(getattr(e, key) for e in events)
    print(f"GPU busy: {gpu_us / 1e3:.1f} ms over the profiled run (TN_BENCH_ONLY={os.environ['TN_BENCH_ONLY']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
