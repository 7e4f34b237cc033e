"""torch.fft (src/ops/fft.c): the transforms fft/ifft, rfft/irfft, hfft/ihfft and their 2-d
and n-d forms (n/s, dim, norm as PyTorch's; differentiable; CPU only: a CUDA tensor raises
"not on CUDA yet"), and fftfreq, rfftfreq, fftshift, ifftshift. torch.stft / istft (and the
Tensor methods) are defined here too, on top of the transforms."""
from ._C import lib
from ._core import Tensor, _dt, _finish, _float, _int, _tp, _wrap
from ._ops import _method

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


def _norm(norm, name):
    if norm is None:
        return "None"
    if not isinstance(norm, str):
        raise TypeError(f"{name}(): argument 'norm' must be str, not {type(norm).__name__}")
    return repr(norm)


def _ints(v, name, what):
    """An int or a sequence of ints as option text: None, or (a,b,)."""
    if v is None:
        return "None"
    vals = [_int(e, name, what) for e in (v if isinstance(v, (list, tuple)) else [v])]
    return "(" + "".join(f"{e}," for e in vals) + ")"


def _finish_out(r, out):
    return r if out is None else out.copy_(r)


def _fft1(cfn, name, input, n, dim, norm, out):
    x = _tp(input, name, "input")
    text = f"n={'None' if n is None else _int(n, name, 'n')}, dim={_int(dim, name, 'dim')}, norm={_norm(norm, name)}"
    return _finish_out(_wrap(cfn(x, text.encode())), out)


def _fftn(cfn, name, input, s, dim, norm, out):
    x = _tp(input, name, "input")
    text = f"s={_ints(s, name, 's')}, dim={_ints(dim, name, 'dim')}, norm={_norm(norm, name)}"
    return _finish_out(_wrap(cfn(x, text.encode())), out)


def _one(cname, name, doc):
    cfn = getattr(lib, cname)

    def fn(input, n=None, dim=-1, norm=None, *, out=None):
        return _fft1(cfn, name, input, n, dim, norm, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _many(cname, name, default_dim, doc):
    cfn = getattr(lib, cname)

    def fn(input, s=None, dim=default_dim, norm=None, *, out=None):
        return _fftn(cfn, name, input, s, dim, norm, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


_DOCS = {
    "fft": "The 1-d discrete Fourier transform (complex; a real input is promoted).",
    "ifft": "The 1-d inverse discrete Fourier transform.",
    "rfft": "The 1-d transform of a real input: its n // 2 + 1 non-negative frequencies.",
    "irfft": "The inverse of rfft: a real signal of n points (default 2 (m - 1)).",
    "hfft": "The transform of a Hermitian signal given by its first half: a real result.",
    "ihfft": "The inverse of hfft: a real input's n // 2 + 1 points.",
}
for _n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    globals()[_n] = _one(f"tn_fft_{_n}_str", _n, _DOCS[_n])
    globals()[_n + "2"] = _many(f"tn_fft_{_n}2_str", _n + "2", (-2, -1), _DOCS[_n].replace("1-d", "2-d") + " Over dim=(-2, -1).")
    globals()[_n + "n"] = _many(f"tn_fft_{_n}n_str", _n + "n", None, _DOCS[_n].replace("1-d", "n-d") +
                                " Over dim (None: the last len(s) dims, or every dim).")
del _n


# --------------------------------------------------------------------------- torch.stft / istft
def _opt(v, name, what, conv):
    return "None" if v is None else conv(v, name, what)


def _flag(v):
    return "None" if v is None else ("True" if v else "False")


@_method("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """torch.stft: the short-time Fourier transform (frames of n_fft points every hop_length,
    windowed, transformed): [B?, n_fft // 2 + 1 or n_fft, frames]."""
    x = _tp(input, "stft", "input")
    w = None if window is None else _tp(window, "stft", "window")
    if not isinstance(pad_mode, str):
        raise TypeError(f"stft(): argument 'pad_mode' must be str, not {type(pad_mode).__name__}")
    text = (f"hop_length={_opt(hop_length, 'stft', 'hop_length', _int)}, win_length={_opt(win_length, 'stft', 'win_length', _int)}, "
            f"center={_flag(center)}, pad_mode={pad_mode!r}, normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
            f"return_complex={_flag(return_complex)}")
    return _wrap(lib.tn_stft_str(x, _int(n_fft, "stft", "n_fft"), w, text.encode()))


@_method("istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
          length=None, return_complex=False):
    """torch.istft: stft's inverse by overlap-add (the summed squared window divided out)."""
    x = _tp(input, "istft", "input")
    w = None if window is None else _tp(window, "istft", "window")
    text = (f"hop_length={_opt(hop_length, 'istft', 'hop_length', _int)}, win_length={_opt(win_length, 'istft', 'win_length', _int)}, "
            f"center={_flag(center)}, normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
            f"length={_opt(length, 'istft', 'length', _int)}, return_complex={_flag(return_complex)}")
    return _wrap(lib.tn_istft_str(x, _int(n_fft, "istft", "n_fft"), w, text.encode()))
