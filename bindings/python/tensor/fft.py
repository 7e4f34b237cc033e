"""torch.fft: fftfreq, rfftfreq, fftshift and ifftshift (src/ops/fft.c). The transforms
(fft, ifft, rfft, irfft, fft2, ...) produce or take complex tensors: they raise
NotImplementedError until complex dtypes exist (the engine under them is src/ops/fft.c's)."""
from ._C import lib
from ._core import Tensor, _dt, _finish, _float, _int, _tp, _wrap

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]


def _freq(cfn, name, n, d, dtype, device, requires_grad):
    text = f"d={_float(d, name, 'd')!r}, dtype={_dt(dtype).name}"
    return _finish(_wrap(cfn(_int(n, name, "n"), text.encode())), device, requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of a length-n transform: [0, 1, ..., -(n//2), ..., -1] / (d n)."""
    return _freq(lib.tn_fft_fftfreq_str, "fftfreq", n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's n // 2 + 1 outputs: [0, 1, ..., n // 2] / (d n)."""
    return _freq(lib.tn_fft_rfftfreq_str, "rfftfreq", n, d, dtype, device, requires_grad)


def _shift(cfn, name, input, dim):
    x = _tp(input, name, "input")
    if dim is None:
        text = ""
    else:
        dims = [_int(d, name, "dim") for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
        if dims and isinstance(input, Tensor) and input.dim() == 0:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        text = "dim=(" + "".join(f"{d}," for d in dims) + ")" if dims else ""
        if not dims:
            raise RuntimeError("`shifts` required")
    return _wrap(cfn(x, text.encode()))


def fftshift(input, dim=None):
    """input rolled by size // 2 along dim (every dim when None): the zero frequency in the middle."""
    return _shift(lib.tn_fft_fftshift_str, "fftshift", input, dim)


def ifftshift(input, dim=None):
    """The inverse of fftshift: rolled by (size + 1) // 2."""
    return _shift(lib.tn_fft_ifftshift_str, "ifftshift", input, dim)


def _needs_complex(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"fft.{name}: the transforms produce complex tensors, and complex dtypes "
                                  "(complex64, complex128) are not supported yet")
    fn.__name__ = fn.__qualname__ = name
    return fn


for _name in __all__[4:]:
    globals()[_name] = _needs_complex(_name)
del _name
