"""DataLoader (torch.utils.data.DataLoader): batches from a dataset through a sampler.

Everything runs in the calling thread; ``num_workers``, ``pin_memory``, ``timeout``,
``worker_init_fn``, ``prefetch_factor`` and ``persistent_workers`` are accepted (and
checked as PyTorch checks them) but no worker processes start: the per-batch work is
C kernels either way. A ``TensorDataset`` (or ``Subset`` of one) with the default
collate is batched by one ``index_select`` per tensor, which gives exactly the stacked
samples.
"""
from ..._core import int64, tensor
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from ._collate import default_collate, default_convert

__all__ = ["DataLoader", "get_worker_info"]


def get_worker_info():
    """None: batches are loaded in the main process (no workers run)."""
    return None


def _tensor_source(dataset, indices):
    """(tensors, indices) when dataset is a plain TensorDataset or Subsets of one, else None."""
    while type(dataset) is Subset:
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is TensorDataset:
        return dataset.tensors, indices
    return None


class _Iter:
    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._collate = loader.collate_fn
        if isinstance(loader.dataset, IterableDataset):
            self._it = self._iterable()
        elif loader._auto_collation:
            self._it = self._batched()
        else:
            self._it = (self._collate(self._dataset[i]) for i in loader.sampler)

    def _batched(self):
        fast = self._collate is default_collate
        for indices in self._loader.batch_sampler:
            src = _tensor_source(self._dataset, list(indices)) if fast else None
            if src is not None and len(src[1]) and all(type(i) is int for i in src[1]):
                tensors, idx = src
                sel = tensor(idx, dtype=int64)
                yield [t.index_select(0, sel) for t in tensors]
            else:
                yield self._collate([self._dataset[i] for i in indices])

    def _iterable(self):
        loader = self._loader
        if not loader._auto_collation:
            for sample in self._dataset:
                yield self._collate(sample)
            return
        batch = []
        for sample in self._dataset:
            batch.append(sample)
            if len(batch) == loader.batch_size:
                yield self._collate(batch)
                batch = []
        if batch and not loader.drop_last:
            yield self._collate(batch)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def __len__(self):
        return len(self._loader)


class DataLoader:
    """PyTorch's DataLoader: ``batch_size``, ``shuffle``, ``sampler``, ``batch_sampler``,
    ``collate_fn``, ``drop_last``, ``generator`` (the shuffle's generator; default: the
    default generator, so ``manual_seed`` decides the order)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor not in (None, 2):     # 2: torch 1.13's default
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.pin_memory, self.timeout = dataset, num_workers, pin_memory, timeout
        self.worker_init_fn, self.multiprocessing_context, self.generator = (worker_init_fn, multiprocessing_context,
                                                                             generator)
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers

        if isinstance(dataset, IterableDataset):
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None and not isinstance(dataset, IterableDataset):
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and sampler is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if batch_size is not None and isinstance(dataset, IterableDataset) and (
                not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (isinstance(self.dataset, IterableDataset)
                                                  and self.batch_size is not None)

    def __iter__(self):
        return _Iter(self)

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)
