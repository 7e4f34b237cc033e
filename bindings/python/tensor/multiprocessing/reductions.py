"""How tensors cross a process boundary (registered with multiprocessing's pickler)."""
import ctypes
import os
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _C
from .._C import lib
from .._core import Tensor, _i64, _raise, _to_dtype, empty

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
             "support crossing process boundaries.  If you just want to transfer the data, call detach() "
             "on the tensor before serializing (e.g., putting it on the queue).")


def rebuild_tensor(cls, dupfd, storage_start, storage_nbytes, dtype_name, shape, strides, offset, requires_grad):
    """The receiving side: the same storage, mapped in this process."""
    fd = dupfd.detach()
    try:
        sh, n = _i64(shape)
        st, _ = _i64(strides)
        p = lib.tn_from_shared_fd(fd, storage_start, storage_nbytes, _to_dtype(dtype_name)._code, sh, n, st, offset)
    finally:
        os.close(fd)
    if not p:
        _raise()
    t = object.__new__(cls)
    t._ptr = p
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_cuda_tensor(cls, handle, segment_size, storage_start, storage_nbytes, dtype_name, shape, strides, offset,
                        requires_grad):
    """The receiving side of a CUDA tensor: the producer's device memory, mapped here by its
    CUDA IPC handle (once per segment per process; unmapped with the last tensor on it)."""
    sh, n = _i64(shape)
    st, _ = _i64(strides)
    buf = ctypes.create_string_buffer(bytes(handle), len(handle))
    p = lib.tn_from_cuda_ipc(buf, segment_size, storage_start, storage_nbytes, _to_dtype(dtype_name)._code, sh, n, st, offset)
    if not p:
        _raise()
    t = object.__new__(cls)
    t._ptr = p
    if requires_grad:
        t.requires_grad_(True)
    return t


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


def reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NON_LEAF)
    if t.device.type == "cuda":
        return _reduce_cuda_tensor(t)
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
    return (rebuild_tensor, (type(t), DupFd(fd), start.value, nbytes.value, t.dtype.name, tuple(t.shape), strides,
                             lib.tn_storage_offset(t._ptr), bool(t.requires_grad)))


def _classes(cls):
    yield cls
    for sub in cls.__subclasses__():
        yield from _classes(sub)


def init_reductions():
    """Registers reduce_tensor for Tensor and every subclass (Parameter, ...) defined so far."""
    for cls in set(_classes(Tensor)):
        ForkingPickler.register(cls, reduce_tensor)


del _C
