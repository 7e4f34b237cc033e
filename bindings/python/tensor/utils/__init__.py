"""tensor.utils: torch.utils's data loading (``utils.data``)."""
from . import data  # noqa: F401

__all__ = ["data"]
