"""tensor.utils: torch.utils's data loading (``utils.data``), DLPack (``utils.dlpack``) and
C extensions (``utils.c_extension``, also as PyTorch's ``utils.cpp_extension``)."""
from . import c_extension, cpp_extension, data, dlpack  # noqa: F401

__all__ = ["data", "dlpack", "c_extension", "cpp_extension"]
