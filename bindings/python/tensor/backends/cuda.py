"""torch.backends.cuda: ``matmul.allow_tf32`` is the library's matmul TF32 switch
(tn_set_tf32: cuBLAS float32 GEMMs, off by default as in PyTorch since 1.12);
torch.backends.cudnn.allow_tf32 is cuDNN's own (tn_set_cudnn_tf32, on by default)."""
import builtins

from .. import _C
from .._C import lib

__all__ = ["is_built", "matmul", "cufft_plan_cache", "preferred_linalg_library"]


def is_built():
    """Whether the loaded library has its GPU unit (lib/libtensor_cuda.so, `make cuda`);
    a GPU may still be missing: see torch.cuda.is_available()."""
    return builtins.bool(lib.tn_cuda_is_available()) or not lib.tn_cuda_unavailable_reason().decode().startswith(
        "tensor.h was built without the GPU unit")


class _Matmul:
    """torch.backends.cuda.matmul: allow_tf32 (the library's switch), and the reduced
    precision reductions of half types, kept as attributes (no half matmul here)."""
    __slots__ = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return builtins.bool(lib.tn_get_tf32())

    @allow_tf32.setter
    def allow_tf32(self, v):
        lib.tn_set_tf32(builtins.bool(v))


matmul = _Matmul()


class _PlanCache:
    size = 0
    max_size = 0

    def clear(self):
        pass


cufft_plan_cache = _PlanCache()


def preferred_linalg_library(backend=None):
    return "default"


del _C
