"""default_collate / default_convert (torch.utils.data._utils.collate, torch 1.13)."""
import collections.abc
import re

from ..._core import Tensor, float64, tensor, _numpy
from ..._ops import FUNCTIONS as _F

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _is_ndarray(x):
    np = _numpy()
    return np is not None and isinstance(x, (np.ndarray, np.generic))


def default_convert(data):
    """NumPy arrays to tensors, recursively (what the loader applies when batch_size=None)."""
    from ..._factories import as_tensor
    if isinstance(data, Tensor):
        return data
    if _is_ndarray(data):
        np = _numpy()
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks a list of samples into a batch, as torch's: tensors are stacked along a new
    dim 0, Python floats become a float64 tensor, ints an int64 tensor (bools a bool
    tensor), strings stay a list, and dicts, named tuples, tuples and lists are collated
    field by field (a tuple of fields comes back as a list, as in torch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _F["stack"](list(batch), 0)
    if _is_ndarray(elem):
        np = _numpy()
        if isinstance(elem, np.ndarray) or elem.shape == ():
            if isinstance(elem, np.ndarray) and _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(_ERR.format(elem.dtype))
            return default_collate([default_convert(b) for b in batch])
    if isinstance(elem, bool):
        return tensor(list(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(elem, int):
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))
