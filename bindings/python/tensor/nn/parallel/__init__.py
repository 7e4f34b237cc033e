"""torch.nn.parallel: DataParallel on the one device this library drives at a time.

Without a GPU, DataParallel(module) is a wrapper whose forward is the module's (PyTorch's
behaviour without CUDA: ``device_ids`` is [] and only ``module`` is set); with one, the
module moves to cuda:0 and tensor inputs follow it (PyTorch's single-device path; several
device ids are refused, as the library has no multi-GPU scatter/gather). Parameters and the
state dict are the module's under ``module.``, so checkpoints load as PyTorch's.
DistributedDataParallel (in .distributed) averages gradients over tensor.distributed's
process group during backward.
"""
from ..._core import Tensor
from ..module import Module
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def _cuda_available():
    from ... import cuda
    return cuda.is_available()


def _to_device(obj, device):
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_to_device(o, device) for o in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _cuda_available():
            self.module = module
            self.device_ids = []
            return
        ids = [0] if device_ids is None else [d.index if hasattr(d, "index") else int(d) for d in device_ids]
        if len(ids) != 1 or ids[0] != 0:
            raise RuntimeError(f"DataParallel: this library drives one GPU (cuda:0); device_ids={list(device_ids)} "
                               "would need a multi-GPU scatter/gather, which it does not have")
        self.dim = dim
        self.module = module
        self.device_ids = ids
        self.output_device = 0 if output_device is None else (getattr(output_device, "index", None) or 0)
        from ..._core import device
        self.src_device_obj = device("cuda", 0)
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        return self.module(*_to_device(inputs, self.src_device_obj), **_to_device(kwargs, self.src_device_obj))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form: module(*inputs, **module_kwargs) on the device DataParallel uses."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
