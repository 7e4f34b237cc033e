"""DataLoader (torch.utils.data.DataLoader): batches from a dataset through a sampler.

``num_workers=0`` loads in the calling thread. ``num_workers > 0`` loads in that many
worker processes (``multiprocessing``, the fork start method on Linux unless
``multiprocessing_context`` says otherwise), as torch 1.13: up to ``prefetch_factor``
batches per worker in flight, batches returned in the sampler's order, ``worker_init_fn``
and ``get_worker_info()`` in the workers, each worker seeded with ``base_seed + id``
(tensor, ``random`` and NumPy generators), an exception in a worker re-raised here with
the worker's traceback, a worker that dies or a ``timeout`` reported as RuntimeError, and
``persistent_workers`` kept across epochs. Batch tensors cross the process boundary as
shared memory (tensor.multiprocessing's reductions: the storage's file descriptor, never
the data; see ``_worker.py``). ``pin_memory`` is accepted (CPU memory).

A ``TensorDataset`` (or ``Subset`` of one) with the default collate is batched by one
``index_select`` per tensor, which gives exactly the stacked samples.
"""
import itertools
import multiprocessing
import os
import queue
import socket
import sys
import time
import weakref
from multiprocessing.reduction import recvfds

from ..._core import int64, tensor
from ..._C import lib
from ...multiprocessing.reductions import loads_with_fds
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from ._collate import default_collate, default_convert
from . import _worker
from ._worker import WorkerInfo, get_worker_info  # noqa: F401

__all__ = ["DataLoader", "get_worker_info"]


def _tensor_source(dataset, indices):
    """(tensors, indices) when dataset is a plain TensorDataset or Subsets of one, else None."""
    while type(dataset) is Subset:
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is TensorDataset:
        return dataset.tensors, indices
    return None


class _MapFetch:
    """One batch of a map-style dataset from its indices (picklable: workers use it)."""

    def __init__(self, dataset, collate):
        self.dataset, self.collate = dataset, collate

    def __call__(self, indices):
        if self.collate is default_collate:
            src = _tensor_source(self.dataset, list(indices))
            if src is not None and len(src[1]) and all(type(i) is int for i in src[1]):
                tensors, idx = src
                sel = tensor(idx, dtype=int64)
                return [t.index_select(0, sel) for t in tensors]
        return self.collate([self.dataset[i] for i in indices])


class _Iter:
    def __init__(self, loader):
        self._loader = loader
        self._base_seed = _base_seed(loader.generator)   # drawn as torch does, though no worker uses it
        self._dataset = loader.dataset
        self._collate = loader.collate_fn
        if isinstance(loader.dataset, IterableDataset):
            self._it = self._iterable()
        elif loader._auto_collation:
            self._it = self._batched()
        else:
            self._it = (self._collate(self._dataset[i]) for i in loader.sampler)

    def _batched(self):
        fetch = _MapFetch(self._dataset, self._collate)
        for indices in self._loader.batch_sampler:
            yield fetch(indices)

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


def _base_seed(generator):
    """torch's _BaseDataLoaderIter draws it as each iterator starts, before the sampler's
    first index: ``torch.empty((), dtype=torch.int64).random_(generator=generator)`` (one
    random64() of the loader's generator, default: the global one, mod 2**63), so the
    default stream, the shuffle and the workers' seeds (base + id) are torch's for a seed."""
    from ..._factories import _gen
    return lib.tn_generator_random64(_gen(generator)) & ((1 << 63) - 1)


class _MultiProcessIter:
    """Batches loaded by worker processes, in the sampler's order (torch's
    _MultiProcessingDataLoaderIter: round-robin tasks, out-of-order results held until
    their turn)."""

    def __init__(self, loader):
        self._loader = loader
        self._num_workers = loader.num_workers
        self._iterable = isinstance(loader.dataset, IterableDataset)
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor if loader.prefetch_factor is not None else 2
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        base_seed = _base_seed(loader.generator)
        self._data_queue = ctx.Queue()
        self._index_queues, self._workers, self._fd_socks = [], [], []
        fetch = _MapFetch(loader.dataset, loader.collate_fn) if not self._iterable else None
        # The workers and queues are held by a finalizer, not only by this object: when it
        # is collected as part of a reference cycle (a persistent loader holds it), its
        # queues must still be open for the shutdown message.
        self._finalizer = weakref.finalize(self, _shutdown_workers, self._workers, self._index_queues,
                                           self._data_queue, self._fd_socks)
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()              # a dead worker must not block our exit
                mine, theirs = socket.socketpair()   # the worker's batches' descriptors come on it
                self._fd_socks.append(mine)
                w = ctx.Process(target=_worker._worker_loop, daemon=True,
                                args=(loader.dataset, self._iterable, loader._auto_collation, loader.collate_fn,
                                      loader.batch_size, loader.drop_last, fetch, iq, self._data_queue, theirs,
                                      base_seed, i, self._num_workers, loader.worker_init_fn, os.getpid()))
                try:
                    w.start()
                finally:
                    theirs.close()
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(first=True)

    def _reset(self, first=False):
        """A new epoch (persistent workers keep running between epochs)."""
        loader = self._loader
        if self._iterable:
            self._sampler_iter = itertools.repeat(None)
        elif loader._auto_collation:
            self._sampler_iter = iter(loader.batch_sampler)
        else:
            self._sampler_iter = iter(loader.sampler)
        self._send_idx = self._rcvd_idx = 0
        self._task_info = {}                   # idx -> (worker,) or (worker, data)
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:                          # drop what the last epoch left in flight
            for iq in self._index_queues:
                iq.put(_worker._ResumeIteration())
            resumed = 0
            while resumed < self._num_workers:
                _, data = self._get_data()
                if isinstance(data, _worker._ResumeIteration):
                    resumed += 1
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        else:
            return                             # every worker's stream has ended
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._send_idx += 1

    def _get_data(self):
        start = time.monotonic()
        while True:
            wait = 1.0 if not self._timeout else min(1.0, max(0.0, start + self._timeout - time.monotonic()))
            try:
                wid, nfds, payload = self._data_queue.get(timeout=wait)
                fds = []                       # sent ahead of the payload on the worker's socket
                while len(fds) < nfds:
                    fds += recvfds(self._fd_socks[wid], min(nfds - len(fds), _worker._MAX_FDS))
                return loads_with_fds(payload, fds)
            except queue.Empty:
                self._check_workers(0.0)
                if self._timeout and time.monotonic() - start >= self._timeout:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
            except (OSError, EOFError, RuntimeError):
                # A batch's descriptors that cannot be received or mapped: a dead worker's
                # doing is reported as its death.
                self._check_workers(5.0)
                raise

    def _check_workers(self, grace):
        """Raises PyTorch's dead-worker error if a worker has exited (waiting up to grace
        seconds for one that is on its way out)."""
        end = time.monotonic() + grace
        while True:
            dead = [w.pid for w in self._workers if not w.is_alive()]
            if dead:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited "
                                   "unexpectedly") from None
            if time.monotonic() >= end:
                return
            time.sleep(0.05)

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]     # a task of a worker whose stream ended
                self._rcvd_idx += 1
            else:
                if not self._loader.persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process(self._task_info.pop(self._rcvd_idx)[1])
            if self._shutdown:
                raise StopIteration
            idx, data = self._get_data()
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._active[data.worker_id] = False
                self._try_put_index()
                continue
            if idx is None or idx not in self._task_info:
                continue                       # a resume acknowledgement, or a late stray
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._process(data)

    def _process(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker._ExceptionWrapper):
            data.reraise()
        return data

    def __len__(self):
        return len(self._loader)

    @property
    def _shutdown(self):
        return not self._finalizer.alive

    def _shutdown_workers(self):
        self._finalizer()


def _shutdown_workers(workers, index_queues, data_queue, fd_socks):
    """Ask every worker to exit, wait for it (terminate one that does not), close the queues."""
    for iq in index_queues:
        try:
            iq.put(None)
        except (OSError, ValueError):
            pass
    for w in workers:
        w.join(timeout=5.0)
        if w.is_alive():
            w.terminate()
            w.join(timeout=1.0)
    for q in index_queues + [data_queue]:
        q.cancel_join_thread()
        q.close()
    for s in fd_socks:
        s.close()                               # with the descriptors of batches never read


class DataLoader:
    """PyTorch's DataLoader: ``batch_size``, ``shuffle``, ``sampler``, ``batch_sampler``,
    ``collate_fn``, ``drop_last``, ``generator`` (the shuffle's generator; default: the
    default generator, so ``manual_seed`` decides the order), and worker processes:
    ``num_workers``, ``worker_init_fn``, ``prefetch_factor``, ``persistent_workers``,
    ``timeout``, ``multiprocessing_context`` (see the module docstring)."""

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
        if num_workers > 0 and prefetch_factor is not None and prefetch_factor <= 0:
            raise ValueError("prefetch_factor option should be positive")
        if isinstance(multiprocessing_context, str) and multiprocessing_context not in \
                multiprocessing.get_all_start_methods():
            raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                             f"{multiprocessing.get_all_start_methods()!r}, but got "
                             f"multiprocessing_context={multiprocessing_context!r}")
        self._iterator = None
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
        if self.num_workers == 0:
            return _Iter(self)
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        if self._iterator is None or self._iterator._shutdown:
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator._reset()
        return self._iterator

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)
