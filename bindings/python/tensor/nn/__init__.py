"""tensor.nn: the functional ops now; Module, layers and losses come with the nn issue."""
from . import functional  # noqa: F401
