"""torch.backends: the switches PyTorch programs set at start-up.

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    device = "mps" if torch.backends.mps.is_available() else "cpu"

Each submodule is a module, as in torch, so ``import torch.backends.cudnn as cudnn`` and
attribute assignment work. Settings the library has are wired to it (TF32: tn_set_tf32 for matmul, tn_set_cudnn_tf32 for cuDNN);
the others are kept as plain attributes and change nothing: the library has no cuDNN,
MKL or MPS backend, so their is_available() is False.
"""
from . import cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
