"""tensor.utils: torch.utils's data loading (``utils.data``) and DLPack (``utils.dlpack``)."""
from . import data, dlpack  # noqa: F401

__all__ = ["data", "dlpack"]
