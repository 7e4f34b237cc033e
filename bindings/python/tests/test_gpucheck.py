"""Issue 23's review fixes seen from Python: PyTorch's two TF32 switches, the cuDNN path
counters in torch.cuda.memory_stats(), and the GPU scenario of test_cuda.py against the
stand-in with unreadable device memory (TN_STAND_IN_UNREADABLE=1: a host read of a CUDA
tensor's data from the bindings would fault in the child, where a GPU would hand back garbage)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402
import test_cuda  # noqa: E402  (its STAND_IN scenario)


def test_tf32_switches_are_two():
    m, cudnn = tn.backends.cuda.matmul, tn.backends.cudnn
    assert m.allow_tf32 is False and cudnn.allow_tf32 is True      # PyTorch's defaults
    try:
        cudnn.allow_tf32 = False
        assert m.allow_tf32 is False and not tn._C.lib.tn_get_cudnn_tf32()
        m.allow_tf32 = True
        assert cudnn.allow_tf32 is False and tn._C.lib.tn_get_tf32()
    finally:
        m.allow_tf32, cudnn.allow_tf32 = False, True


def test_path_counters_in_memory_stats():
    s = tn.cuda.memory_stats()
    for k in ("num_cudnn_conv", "num_conv_fallbacks", "num_cudnn_algo_retries", "num_cudnn_pool", "num_pool_fallbacks",
              "num_cudnn_batch_norm", "num_batch_norm_fallbacks", "num_fused_attention", "num_attention_fallbacks",
              "num_multi_tensor_optim", "num_gemm_epilogue", "num_gemm_epilogue_fallbacks"):
        assert k in s and s[k] >= 0
    if not tn.cuda.is_available():
        assert s["num_cudnn_conv"] == 0 and s["num_conv_fallbacks"] == 0


def test_stand_in_with_unreadable_memory():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env = dict(os.environ, TN_STAND_IN_UNREADABLE="1")
    r = subprocess.run([sys.executable, "-c", test_cuda.STAND_IN, here], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    # and the mode does fault on a host read of device memory (the bindings' data pointer)
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import ctypes, tensor as tn\n"
             "tn._C.lib.tn_debug_cuda_stand_in_unreadable()\n"
             "g = tn.ones(100).to('cuda')\n"
             "print('ready', flush=True)\n"
             "print(ctypes.c_float.from_address(g.data_ptr()).value)\n")
    r = subprocess.run([sys.executable, "-c", probe, here], capture_output=True, text=True, timeout=60)
    assert r.stdout.startswith("ready") and r.returncode != 0, (r.returncode, r.stdout, r.stderr)
