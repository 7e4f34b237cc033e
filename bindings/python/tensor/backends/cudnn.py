"""torch.backends.cudnn: enabled, benchmark, deterministic and benchmark_limit are settable
attributes that change nothing (the GPU unit always takes cuDNN's heuristics; TN_CUDNN=0 in
the environment turns cuDNN off). allow_tf32 is the library's cuDNN TF32 switch
(tn_set_cudnn_tf32: TF32 in float32 convolutions), on by default as in PyTorch and apart
from torch.backends.cuda.matmul.allow_tf32 (tn_set_tf32, off by default). is_available()
and version() stay False and None: the CPU library has no cuDNN."""
import builtins
import contextlib
import sys
import types

from .._C import lib

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit", "is_acceptable"]

enabled = True
benchmark = False
deterministic = False
benchmark_limit = 10


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags for the block, restoring them after (torch.backends.cudnn.flags)."""
    mod = sys.modules[__name__]
    saved = (mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic, mod.allow_tf32)
    mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic = enabled, benchmark, benchmark_limit, deterministic
    mod.allow_tf32 = allow_tf32
    try:
        yield
    finally:
        mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic, mod.allow_tf32 = saved


class _CudnnModule(types.ModuleType):
    """This module's class: allow_tf32 is a property over the library's cuDNN switch."""

    @property
    def allow_tf32(self):
        return builtins.bool(lib.tn_get_cudnn_tf32())

    @allow_tf32.setter
    def allow_tf32(self, v):
        lib.tn_set_cudnn_tf32(builtins.bool(v))


sys.modules[__name__].__class__ = _CudnnModule
