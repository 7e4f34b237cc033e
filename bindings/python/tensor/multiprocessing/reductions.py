"""How tensors cross a process boundary (registered with multiprocessing's pickler)."""
import ctypes
import io
import os
import pickle
import threading
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _C
from .._C import lib
from .._core import Tensor, _i64, _raise, _to_dtype, empty

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
             "support crossing process boundaries.  If you just want to transfer the data, call detach() "
             "on the tensor before serializing (e.g., putting it on the queue).")


def _wrap(cls, p, requires_grad):
    """A tensor of class cls owning the library tensor p (NULL: the library's error raised)."""
    if not p:
        _raise()
    t = object.__new__(cls)
    t._ptr = p
    if requires_grad:
        t.requires_grad_(True)
    return t


def _from_fd(cls, fd, storage_start, storage_nbytes, dtype_name, shape, strides, offset, requires_grad):
    """A tensor on the shared storage behind fd (mapped here; fd stays the caller's)."""
    sh, n = _i64(shape)
    st, _ = _i64(strides)
    p = lib.tn_from_shared_fd(fd, storage_start, storage_nbytes, _to_dtype(dtype_name)._code, sh, n, st, offset)
    return _wrap(cls, p, requires_grad)


def rebuild_tensor(cls, dupfd, *args):
    """The receiving side: the same storage, mapped in this process."""
    fd = dupfd.detach()
    try:
        return _from_fd(cls, fd, *args)
    finally:
        os.close(fd)


class _Inbox(threading.local):
    fds = ()


_inbox = _Inbox()


def rebuild_tensor_inbox(cls, k, *args):
    """The receiving side of reduce_tensor_outbox: the k-th descriptor of the message being
    unpickled (received beforehand with it: see loads_with_fds)."""
    return _from_fd(cls, _inbox.fds[k], *args)


def loads_with_fds(payload, fds):
    """Unpickles a payload whose tensors came as descriptors beside it (dumps_with_fds); the
    descriptors are closed afterwards, used or not."""
    _inbox.fds = fds
    try:
        return pickle.loads(payload)
    finally:
        _inbox.fds = ()
        for fd in fds:
            os.close(fd)


def rebuild_cuda_tensor(cls, handle, segment_size, storage_start, storage_nbytes, dtype_name, shape, strides, offset,
                        requires_grad):
    """The receiving side of a CUDA tensor: the producer's device memory, mapped here by its
    CUDA IPC handle (once per segment per process; unmapped with the last tensor on it)."""
    sh, n = _i64(shape)
    st, _ = _i64(strides)
    buf = ctypes.create_string_buffer(bytes(handle), len(handle))
    p = lib.tn_from_cuda_ipc(buf, segment_size, storage_start, storage_nbytes, _to_dtype(dtype_name)._code, sh, n, st, offset)
    return _wrap(cls, p, requires_grad)


def rebuild_empty_cuda_tensor(cls, dtype_name, shape, requires_grad):
    """No memory to share (0 elements): a new empty CUDA tensor of the shape (as PyTorch)."""
    e = empty(shape, dtype=_to_dtype(dtype_name), device="cuda")
    t = object.__new__(cls)
    t._ptr = lib.tn_retain(e._ptr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_cuda_tensor(t):
    """PyTorch's CUDA reduction: the handle of the allocation holding t (the caching
    allocator's segment) and where t's storage lies in it; the producer keeps t alive while
    consumers use it (its memory is freed and reused otherwise, and gone when it exits)."""
    if t.numel() == 0:
        return (rebuild_empty_cuda_tensor, (type(t), t.dtype.name, tuple(t.shape), bool(t.requires_grad)))
    h = ctypes.create_string_buffer(_HANDLE_BYTES)
    seg, start, nbytes = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    if lib.tn_cuda_ipc_handle(t._ptr, h, ctypes.byref(seg), ctypes.byref(start), ctypes.byref(nbytes)) < 0:
        _raise()
    nd = t.ndim
    strides = tuple(lib.tn_strides(t._ptr)[i] for i in range(nd)) if nd else ()
    return (rebuild_cuda_tensor, (type(t), h.raw, seg.value, start.value, nbytes.value, t.dtype.name, tuple(t.shape), strides,
                                  lib.tn_storage_offset(t._ptr), bool(t.requires_grad)))


_HANDLE_BYTES = 64   # TN_CUDA_IPC_HANDLE_BYTES (cudaIpcMemHandle_t)


def _share(t):
    """(fd, the rebuild arguments after it) of t's storage (a CPU tensor), moved into shared memory."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NON_LEAF)
    if t.device.type != "cpu":
        raise RuntimeError(f"tensor.multiprocessing: a tensor on {t.device.type} cannot cross a process boundary "
                           "(CPU tensors go by shared memory, CUDA tensors by CUDA IPC)")
    t.share_memory_()
    start, nbytes = ctypes.c_int64(), ctypes.c_int64()
    fd = lib.tn_shared_fd(t._ptr, ctypes.byref(start), ctypes.byref(nbytes))
    if fd < 0:
        _raise()
    nd = t.ndim
    strides = tuple(lib.tn_strides(t._ptr)[i] for i in range(nd)) if nd else ()
    return fd, (start.value, nbytes.value, t.dtype.name, tuple(t.shape), strides, lib.tn_storage_offset(t._ptr),
                bool(t.requires_grad))


def reduce_tensor(t):
    if t.device.type == "cuda":
        if t.requires_grad and not t.is_leaf:
            raise RuntimeError(_NON_LEAF)
        return _reduce_cuda_tensor(t)
    fd, args = _share(t)
    return (rebuild_tensor, (type(t), DupFd(fd)) + args)


class _OutboxPickler(ForkingPickler):
    """Tensors as indices into a list of descriptors sent beside the payload, instead of
    DupFd's per-tensor connection back to the sender at unpickling time."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.fds = []

    def reducer_override(self, obj):
        if isinstance(obj, Tensor) and obj.device.type == "cpu":
            fd, args = _share(obj)
            self.fds.append(fd)
            return (rebuild_tensor_inbox, (type(obj), len(self.fds) - 1) + args)
        return NotImplemented


def dumps_with_fds(obj):
    """(payload, fds): obj pickled with its CPU tensors' storages as descriptors (still owned
    by the storages: send them before obj's tensors are freed), for loads_with_fds."""
    buf = io.BytesIO()
    p = _OutboxPickler(buf, pickle.HIGHEST_PROTOCOL)
    p.dump(obj)
    return buf.getvalue(), p.fds


def _classes(cls):
    yield cls
    for sub in cls.__subclasses__():
        yield from _classes(sub)


def init_reductions():
    """Registers reduce_tensor for Tensor and every subclass (Parameter, ...) defined so far."""
    for cls in set(_classes(Tensor)):
        ForkingPickler.register(cls, reduce_tensor)


del _C
