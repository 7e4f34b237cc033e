"""torch.backends.cudnn: the library has no cuDNN (its convolutions are its own kernels), so
is_available() is False and version() None; enabled, benchmark, deterministic and
benchmark_limit are settable attributes that change nothing. allow_tf32 is the library's
one TF32 switch (tn_set_tf32, shared with torch.backends.cuda.matmul.allow_tf32), so it
reads False until one of them enables it; PyTorch keeps two switches and starts this one
at True."""
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
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=None):
    """Set the flags for the block, restoring them after (torch.backends.cudnn.flags).
    allow_tf32=None leaves the TF32 switch alone: it is matmul's too here (torch's default
    True would turn TF32 matmuls on inside the block)."""
    mod = sys.modules[__name__]
    saved = (mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic, mod.allow_tf32)
    mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic = enabled, benchmark, benchmark_limit, deterministic
    if allow_tf32 is not None:
        mod.allow_tf32 = allow_tf32
    try:
        yield
    finally:
        mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic, mod.allow_tf32 = saved


class _CudnnModule(types.ModuleType):
    """This module's class: allow_tf32 is a property over the library's switch."""

    @property
    def allow_tf32(self):
        return builtins.bool(lib.tn_get_tf32())

    @allow_tf32.setter
    def allow_tf32(self, v):
        lib.tn_set_tf32(builtins.bool(v))


sys.modules[__name__].__class__ = _CudnnModule
