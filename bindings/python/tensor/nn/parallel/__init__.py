"""torch.nn.parallel: DistributedDataParallel (over tensor.distributed)."""
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
