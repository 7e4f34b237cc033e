"""How tensors cross a process boundary (registered with multiprocessing's pickler)."""
import ctypes
import os
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _C
from .._C import lib
from .._core import Tensor, _i64, _raise, _to_dtype

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


def reduce_tensor(t):
    if t.device.type != "cpu":
        raise RuntimeError("tensor.multiprocessing: CUDA tensors cannot cross a process boundary yet (no CUDA IPC); "
                           "move it to the CPU first")
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NON_LEAF)
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
