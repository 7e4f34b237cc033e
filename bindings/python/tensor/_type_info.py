"""torch.finfo and torch.iinfo: the numerical properties of the floating and integer dtypes,
with PyTorch's fields and values (bits, eps, max, min, tiny, smallest_normal, resolution,
dtype) and repr."""
from ._core import _default_dtype, _to_dtype, bool_

__all__ = ["finfo", "iinfo"]

# bits, eps, max, tiny (= smallest_normal), resolution: IEEE 754 binary32/64/16 and bfloat16
_FLOAT = {
    "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38, 1e-06),
    "float64": (64, 2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308, 1e-15),
    "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
    "bfloat16": (16, 0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 0.01),
}
_INT = {"uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -(1 << 15), (1 << 15) - 1), "int32": (32, -(1 << 31), (1 << 31) - 1), "int64": (64, -(1 << 63), (1 << 63) - 1)}


class finfo:
    """finfo(dtype=None): dtype's properties; the default dtype's without one."""
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):
        dt = _default_dtype[0] if type is None else _to_dtype(type, False)
        dt = dt.to_real()                      # a complex dtype: its parts' (torch.finfo(torch.cfloat) is float32's)
        if dt.name not in _FLOAT:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOAT[dt.name]
        self.min, self.smallest_normal, self.dtype = -self.max, self.tiny, dt.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """iinfo(dtype): an integer dtype's bits, min and max."""
    __slots__ = ("bits", "min", "max", "dtype")

    def __init__(self, type):
        dt = _to_dtype(type, False)
        if dt is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.name not in _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        self.bits, self.min, self.max = _INT[dt.name]
        self.dtype = dt.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
