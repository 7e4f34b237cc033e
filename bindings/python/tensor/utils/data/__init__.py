"""tensor.utils.data: torch.utils.data over tensor.h.

Datasets, samplers, ``random_split``, ``DataLoader`` and ``default_collate`` with
PyTorch's behaviour. Batches load in the calling thread (``num_workers=0``) or in
``num_workers`` worker processes, as torch's loader.
Batches of a ``TensorDataset`` (or a ``Subset`` of one) with the default collate are
gathered with one ``index_select`` per tensor instead of a stack of samples: the same
values, one C call. Shuffling draws ``randperm`` from the generator given, or the
default one, so ``tensor.manual_seed`` makes it reproducible.
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, ConcatDataset, Subset,  # noqa: F401
                      random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler, BatchSampler)
from ._collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, get_worker_info  # noqa: F401
from ._worker import WorkerInfo  # noqa: F401
from . import distributed  # noqa: F401

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "default_collate",
           "default_convert", "DataLoader", "get_worker_info"]
