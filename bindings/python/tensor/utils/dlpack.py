"""torch.utils.dlpack: zero-copy exchange with NumPy, PyTorch, JAX, CuPy, ... through DLPack.

    t = tensor.from_dlpack(numpy_array)          # shares numpy_array's memory
    a = numpy.from_dlpack(t)                      # shares t's memory
    cap = tensor.utils.dlpack.to_dlpack(t)        # a "dltensor" capsule (legacy interface)

A capsule holds a DLManagedTensor made by tn_to_dlpack; the consumer renames it
"used_dltensor" and takes over its deleter, and an unconsumed capsule frees it when it dies.
"""
import ctypes

from .._C import lib
from .._core import Tensor, _raise, _wrap

__all__ = ["to_dlpack", "from_dlpack"]

_NAME, _USED = b"dltensor", b"used_dltensor"   # kept alive: capsules point at these bytes
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """An unconsumed capsule gives its DLManagedTensor back (a consumed one is renamed)."""
    try:
        obj = ctypes.cast(capsule, ctypes.py_object)
        if _api.PyCapsule_IsValid(obj, _NAME):
            lib.tn_dlpack_delete(_api.PyCapsule_GetPointer(obj, _NAME))
    except Exception:   # interpreter shutdown: nothing left to call
        pass


def to_dlpack(tensor):
    """A "dltensor" capsule sharing tensor's memory (tensor stays alive until it is consumed)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    m = lib.tn_to_dlpack(tensor._ptr)
    if not m:
        _raise()
    return _api.PyCapsule_New(m, _NAME, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def from_dlpack(ext_tensor):
    """A Tensor sharing the memory of anything with __dlpack__ (a NumPy array, a PyTorch
    tensor, ...) or of a "dltensor" capsule."""
    if hasattr(ext_tensor, "__dlpack__"):
        if hasattr(ext_tensor, "__dlpack_device__"):
            kind, _ = ext_tensor.__dlpack_device__()
            if kind not in (1, 3):   # kDLCPU, kDLCUDAHost (a CUDA producer needs a stream first)
                ext_tensor = ext_tensor.__dlpack__(stream=None)
            else:
                ext_tensor = ext_tensor.__dlpack__()
        else:
            ext_tensor = ext_tensor.__dlpack__()
    if not _api.PyCapsule_IsValid(ext_tensor, _NAME):
        raise ValueError("from_dlpack: expected an object with __dlpack__ or a 'dltensor' capsule "
                         "(a capsule can be consumed only once)")
    m = _api.PyCapsule_GetPointer(ext_tensor, _NAME)
    _api.PyCapsule_SetName(ext_tensor, _USED)    # tn_from_dlpack owns it from here, also on error
    return _wrap(lib.tn_from_dlpack(m))


def _dlpack(self, stream=None):
    """Tensor.__dlpack__: a capsule for another library's from_dlpack."""
    del stream   # CPU tensors need no synchronisation; GPU work is ordered on the default stream
    return to_dlpack(self)


def _dlpack_device(self):
    """Tensor.__dlpack_device__: (kDLCPU, 0) or (kDLCUDA, index)."""
    return (2, lib.tn_cuda_current_device()) if self.device.type == "cuda" else (1, 0)


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
