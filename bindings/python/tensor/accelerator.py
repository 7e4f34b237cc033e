"""torch.accelerator (PyTorch 2.6): the current accelerator, here the GPU unit's CUDA
device when one is usable, else none (programs then fall back to the CPU)."""
import builtins

from ._C import lib
from ._core import _raise, device as _device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def is_available():
    return builtins.bool(lib.tn_cuda_is_available())


def current_accelerator(check_available=False):
    """device('cuda') when the GPU unit has a GPU, else None."""
    return _device("cuda") if is_available() else None


def device_count():
    return lib.tn_cuda_device_count() if is_available() else 0


def current_device_index():
    return lib.tn_cuda_current_device() if is_available() else -1


def set_device_index(device):
    if lib.tn_cuda_set_device(device.index or 0 if isinstance(device, _device) else int(device)):
        _raise()


def synchronize(device=None):
    if is_available() and lib.tn_cuda_synchronize():
        _raise()
