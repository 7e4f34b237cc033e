"""tensor.multiprocessing: Python's multiprocessing, with tensors shared across processes.

As torch.multiprocessing: everything of the standard module (Process, Queue, Pool,
get_context, set_start_method, ...) plus ``spawn``. Importing it registers how tensors
cross a process boundary: a tensor put on a Queue, passed to a Pool or given as a spawned
Process's argument moves its storage into shared memory (``Tensor.share_memory_``) and
travels as a file descriptor — the data is never pickled; the receiver maps the same
memory, so writes on either side are seen by the other (Hogwild training). With the fork
start method a child sees the parent's shared tensors as they are.

The storage lives in a nameless file the kernel frees when the last process holding it
lets go, so nothing leaks in /dev/shm, also when a process is killed. The one sharing
strategy is PyTorch's default, "file_descriptor". A CUDA tensor travels as the CUDA IPC
handle of its allocation (the caching allocator's segment) and the receiver maps the same
device memory (once per segment per process); as in PyTorch, the producer keeps the tensor
alive while consumers use it.
"""
import multiprocessing
import sys

from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__

init_reductions()

_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor"}


def set_sharing_strategy(new_strategy):
    """Only "file_descriptor" exists here (PyTorch's Linux default); "file_system" is refused."""
    if new_strategy not in _all_sharing_strategies:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported: this build shares tensors by "
                         "file descriptor only (get_all_sharing_strategies())")
    global _sharing_strategy
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return set(_all_sharing_strategies)


if sys.platform == "darwin":           # as torch: fork is unsafe there with threads
    pass
