"""DataLoader worker processes (torch.utils.data._utils.worker, torch 1.13's protocol).

A worker is a process (fork on Linux) that receives tasks on its own index queue and puts
results on the loader's shared data queue:

- ``(idx, indices)`` for a map-style dataset: the batch ``collate([dataset[i] for i in
  indices])`` (or ``collate(dataset[indices])`` without auto-batching); ``(idx, None)``
  for an iterable dataset: the next batch of the worker's own iterator, or
  ``_IterableDatasetStopIteration`` once it is exhausted (then nothing more until a
  resume);
- ``_ResumeIteration``: a new epoch of a persistent worker (a fresh iterator for an
  iterable dataset), acknowledged with ``_ResumeIteration`` on the data queue;
- ``None``: exit.

Results are pickled in the worker (multiprocessing's ForkingPickler, tensors as
tensor.multiprocessing makes them travel): a batch tensor's storage moves into shared
memory and only its file descriptor and view cross (the data is never pickled or copied
through the queue); the descriptors go ahead of the payload on the worker's own Unix socket
(SCM_RIGHTS) and the loader maps the same pages as it unpickles. An exception in a worker comes
back as an ``_ExceptionWrapper`` holding its class and the worker's formatted traceback,
re-raised in the main process as torch does. A worker exits when its parent is gone.
"""
import os
import pickle
import queue
import random
import sys
import traceback
from multiprocessing.reduction import sendfds

from ... import multiprocessing as _tmp  # noqa: F401  (registers how tensors cross: shared memory)
from ...multiprocessing import reductions

__all__ = ["WorkerInfo", "get_worker_info"]

_POLL = 5.0                 # seconds between checks that the parent is still alive
_MAX_FDS = 253              # descriptors per message (Linux's SCM_MAX_FD)
_worker_info = None


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``,
    ``seed`` and ``dataset`` (the worker's copy)."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """In a DataLoader worker: its ``WorkerInfo`` (id, num_workers, seed, dataset); in the
    main process: None."""
    return _worker_info


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    pass


class _ExceptionWrapper:
    """An exception raised in a worker: its class and the formatted traceback, re-raised
    by the loader with the worker's traceback text in the message (torch's
    ExceptionWrapper)."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_name = self.exc_type.__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)     # KeyError would print the repr of the text
        try:
            exception = self.exc_type(msg)
        except Exception:                    # a class that needs other arguments
            raise RuntimeError(msg) from None
        raise exception

    def __reduce__(self):
        exc_type = self.exc_type
        try:
            pickle.dumps(exc_type)
        except Exception:                    # a class pickle cannot find by name (a local class)
            exc_type = RuntimeError
        return (_rebuild_wrapper, (exc_type, self.exc_name, self.exc_msg, self.where))


def _rebuild_wrapper(exc_type, exc_name, exc_msg, where):
    w = object.__new__(_ExceptionWrapper)
    w.exc_type, w.exc_name, w.exc_msg, w.where = exc_type, exc_name, exc_msg, where
    return w


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


def _put(data_queue, item, worker_id, fd_sock):
    """Pickle here (in the worker's thread, not the queue's feeder thread) so that a batch
    that cannot be pickled comes back as that error. Tensors go by shared memory: their
    storages' descriptors are sent on this worker's socket before the payload is queued, so
    the loader finds them there when it unpickles (no connection back to this process, which
    may not be running then: a busy machine's scheduler would make the step wait)."""
    fds = []
    try:
        payload, fds = reductions.dumps_with_fds(item)
    except Exception:
        idx = item[0] if isinstance(item, tuple) else None
        payload = pickle.dumps((idx, _ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")))
    try:
        for i in range(0, len(fds), _MAX_FDS):
            sendfds(fd_sock, fds[i:i + _MAX_FDS])
    except OSError:                       # the loader is gone
        return
    data_queue.put((worker_id, len(fds), payload))


def _generate_state(base_seed, worker_id):
    """NumPy's seed for a worker: torch's _generate_state (a SeedSequence-like hash of the
    worker id and base seed into four 32-bit words), so np.random in a worker draws what it
    draws under torch."""
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43b0d7e5, 0x931e8875, 0x8b51f9dd, 0x58f38ded
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xca01f9dd, 0x4973f715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    hash_const_a = INIT_A

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & MASK32
        hash_const_a = (hash_const_a * MULT_A) & MASK32
        value = (value * hash_const_a) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)
        result &= MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b, state = INIT_B, []
    for v in pool:
        v = (v ^ hash_const_b) & MASK32
        hash_const_b = (hash_const_b * MULT_B) & MASK32
        v = (v * hash_const_b) & MASK32
        state.append((v ^ (v >> XSHIFT)) & MASK32)
    return state


class _Fetcher:
    """Batches of one worker: from the dataset by index, or from the worker's iterator."""

    def __init__(self, dataset, iterable, auto_collation, collate_fn, batch_size, drop_last, fetch_indices):
        self.dataset, self.iterable, self.auto_collation = dataset, iterable, auto_collation
        self.collate_fn, self.batch_size, self.drop_last = collate_fn, batch_size, drop_last
        self.fetch_indices = fetch_indices
        self.it = iter(dataset) if iterable else None

    def reset(self):
        if self.iterable:
            self.it = iter(self.dataset)

    def fetch(self, indices):
        if not self.iterable:
            if self.auto_collation:
                return self.fetch_indices(indices)
            return self.collate_fn(self.dataset[indices])
        if not self.auto_collation:
            return self.collate_fn(next(self.it))      # StopIteration ends this worker's stream
        batch = []
        for sample in self.it:
            batch.append(sample)
            if len(batch) == self.batch_size:
                break
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate_fn(batch)


def _worker_loop(dataset, iterable, auto_collation, collate_fn, batch_size, drop_last, fetch_indices, index_queue,
                 data_queue, fd_sock, base_seed, worker_id, num_workers, worker_init_fn, parent_pid):
    global _worker_info
    try:
        import signal
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the main process's to handle
    except (ImportError, ValueError, OSError):
        pass
    from ... import _factories
    _factories.set_num_threads(1)       # as torch: no OpenMP pool per worker (and none inherited over fork)
    seed = base_seed + worker_id           # torch's seeding: random and torch by the seed, NumPy by a hash
    random.seed(seed)
    _factories.manual_seed(seed)
    try:
        import numpy
        numpy.random.seed(_generate_state(base_seed, worker_id))
    except ImportError:
        pass
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_error = None
    fetcher = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        fetcher = _Fetcher(dataset, iterable, auto_collation, collate_fn, batch_size, drop_last, fetch_indices)
    except Exception:
        init_error = _ExceptionWrapper(sys.exc_info(), where)
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=_POLL)
        except queue.Empty:
            if os.getppid() != parent_pid:          # the loader's process is gone
                break
            continue
        if task is None:
            break
        if isinstance(task, _ResumeIteration):
            exhausted = False
            if fetcher is not None:
                try:
                    fetcher.reset()
                except Exception:
                    init_error = _ExceptionWrapper(sys.exc_info(), where)
            _put(data_queue, (None, _ResumeIteration()), worker_id, fd_sock)
            continue
        if exhausted:
            continue
        idx, indices = task
        if init_error is not None:
            data, init_error = init_error, None
        else:
            try:
                data = fetcher.fetch(indices)
            except StopIteration:
                if iterable:
                    data, exhausted = _IterableDatasetStopIteration(worker_id), True
                else:
                    data = _ExceptionWrapper(sys.exc_info(), where)
            except Exception:
                data = _ExceptionWrapper(sys.exc_info(), where)
        _put(data_queue, (idx, data), worker_id, fd_sock)
        del data
    data_queue.cancel_join_thread()             # results nobody will read must not block the exit
    data_queue.close()
