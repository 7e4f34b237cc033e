"""The legacy typed tensor classes: ``torch.FloatTensor``, ``torch.LongTensor``, ...

As in torch they are not subclasses of Tensor: calling one makes a plain Tensor of its
dtype (``torch.LongTensor([1, 2])`` is int64 data, ``torch.FloatTensor(2, 3)`` an
uninitialised float32 tensor of that shape, a ``torch.Size`` a shape, another Tensor of the
same dtype an alias), and ``isinstance(x, torch.LongTensor)`` is true exactly when x is a
CPU int64 tensor (``torch.cuda.LongTensor``: a CUDA one). ``x.type()`` names them and
``x.type(torch.FloatTensor)`` converts.
"""
import numbers

from ._core import (Size, Tensor, _DTYPES, _to_device, _tensor_from_data, bfloat16, bool_, empty, float16,
                    float32, float64, int32, int64, int8, int16, uint8, complex64, complex128)

__all__ = ["tensor_type", "TENSOR_TYPES", "CUDA_TENSOR_TYPES", "set_default_tensor_type"]


class tensor_type(type):
    """The metaclass of the typed classes: constructing, isinstance, repr."""

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
        dt = cls.dtype
        dev = _to_device(device) or _to_device("cuda" if cls.is_cuda else "cpu")
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not dt or t.device.type != dev.type:
                raise TypeError(f"expected {cls._legacy} ({dt}, {dev.type}) (got {t.dtype}, {t.device.type})")
            return t.detach()                   # torch: an alias sharing the data
        if len(args) == 1 and isinstance(args[0], Size) or all(
                isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
            if any(s < 0 for s in shape):
                raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
            t = empty(shape if shape else (0,), dtype=dt)
        elif len(args) == 1:
            data = args[0]
            if isinstance(data, (numbers.Number, str, bytes)):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
            t = _tensor_from_data(data, dt)
        else:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({', '.join(type(a).__name__ for a in args)}), but expected one of: (*, torch.device "
                            "device), (Tensor other), (tuple of ints size, *, torch.device device), "
                            "(object data, *, torch.device device)")
        return t if dev.type == "cpu" else t.to(dev)

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.is_cuda == cls.is_cuda)

    def __subclasscheck__(cls, sub):
        return sub is cls

    def __repr__(cls):
        return f"<class '{cls._legacy}'>"

    __str__ = __repr__


def _make(name, dt, cuda):
    prefix = "torch.cuda." if cuda else "torch."
    cls = tensor_type(name, (), {"dtype": dt, "is_cuda": cuda, "is_sparse": False,
                                 "_legacy": prefix + name, "__module__": prefix[:-1],
                                 "__doc__": f"{prefix}{name}: constructs {dt} tensors (see tensor._tensor_types)."})
    return cls


_SPECS = [("FloatTensor", float32), ("DoubleTensor", float64), ("HalfTensor", float16), ("BFloat16Tensor", bfloat16),
          ("ByteTensor", uint8), ("CharTensor", int8), ("ShortTensor", int16),
          ("IntTensor", int32), ("LongTensor", int64), ("BoolTensor", bool_)]
TENSOR_TYPES = {name: _make(name, dt, False) for name, dt in _SPECS}
CUDA_TENSOR_TYPES = {name: _make(name, dt, True) for name, dt in _SPECS}
# complex tensors' types: named by x.type() but, as in PyTorch, no torch.ComplexFloatTensor
_UNEXPORTED = [_make(name, dt, cuda) for name, dt in (("ComplexFloatTensor", complex64), ("ComplexDoubleTensor", complex128))
               for cuda in (False, True)]
_BY_DTYPE = {(c.dtype, c.is_cuda): c for c in list(TENSOR_TYPES.values()) + list(CUDA_TENSOR_TYPES.values()) + _UNEXPORTED}


def _type_name(t):
    """x.type(): 'torch.LongTensor', 'torch.cuda.FloatTensor'."""
    return _BY_DTYPE[(t.dtype, t.is_cuda)]._legacy


def _resolve(spec):
    """The (dtype, device) of x.type(spec)'s spec: a typed class, its name, or a dtype."""
    if isinstance(spec, tensor_type):
        return spec.dtype, "cuda" if spec.is_cuda else "cpu"
    if isinstance(spec, str):
        for cls in _BY_DTYPE.values():
            if spec == cls._legacy:
                return cls.dtype, "cuda" if cls.is_cuda else "cpu"
        raise ValueError(f"invalid type: '{spec}'")
    return spec, None


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return _type_name(self)
    dt, dev = _resolve(dtype)
    return self.to(dt) if dev is None else self.to(dev, dt)


Tensor.type = _type


def set_default_tensor_type(t):
    """torch.set_default_tensor_type(torch.DoubleTensor) (or its name): the default dtype;
    CUDA types are refused (the default device stays the CPU)."""
    from ._core import set_default_dtype
    if isinstance(t, str):
        t = next((c for c in _BY_DTYPE.values() if c._legacy == t), None) or t
    if not isinstance(t, tensor_type):
        raise TypeError(f"invalid type: '{t}'")
    if t.is_cuda:
        raise TypeError("set_default_tensor_type: CUDA tensor types are not supported (tensors are made on the CPU)")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(t.dtype)


assert len({d for d, _ in _BY_DTYPE}) == len(_DTYPES)
