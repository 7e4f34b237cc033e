"""torch.special: the special functions, on the C kernels tensor.<name> uses."""
from . import _ops
from . import _C
from ._C import lib
from ._core import Tensor, _operand, _scalar_kind, _tp, _wrap

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]


def _unary(cname, name):
    f = getattr(lib, cname)

    def fn(input):
        return _wrap(f(_tp(input, name)))
    fn.__name__ = fn.__qualname__ = name
    return fn


i0 = _unary("tn_i0", "i0")
i0e = _unary("tn_special_i0e", "i0e")
i1 = _unary("tn_special_i1", "i1")
i1e = _unary("tn_special_i1e", "i1e")
erf = _unary("tn_erf", "erf")
erfc = _unary("tn_erfc", "erfc")
erfinv = _unary("tn_erfinv", "erfinv")
expm1 = _unary("tn_expm1", "expm1")
exp2 = _unary("tn_exp2", "exp2")
log1p = _unary("tn_log1p", "log1p")
digamma = psi = _unary("tn_digamma", "digamma")
gammaln = _unary("tn_lgamma", "gammaln")
sinc = _unary("tn_sinc", "sinc")
_C_NAME = "tn_special_%s"   # the C names of _C.SPECIAL_UNARY and SPECIAL_BINARY (rows in _C.py)
expit = _unary("tn_sigmoid", "expit")
for _n in _C.SPECIAL_UNARY:
    if _n not in ("i0e", "i1", "i1e"):
        globals()[_n] = _unary(_C_NAME % _n, _n)
polygamma = _ops.polygamma


def multigammaln(input, p):
    return _ops.mvlgamma(input, p)


def logit(input, eps=None):
    return _ops.logit(input, eps)


def _either_scalar(f, name, input, other):
    """PyTorch's special.xlogy(self, other): either operand may be a Python number."""
    if not isinstance(input, Tensor):
        if _scalar_kind(input) is None or not isinstance(other, Tensor):
            raise TypeError(f"special_{name}(): argument 'self' must be Tensor or Number, not {type(input).__name__}")
        input = _operand(input)
    return _ops._binary(f, input, other)


def xlogy(input, other):
    return _either_scalar(lib.tn_xlogy, "xlogy", input, other)


def _binary_fn(name, scalars=True):
    f = getattr(lib, _C_NAME % name)

    def fn(input, other):
        if not scalars:   # igamma's operands are tensors only
            _tp(input, "special_" + name, "input")
            _tp(other, "special_" + name, "other")
        return _either_scalar(f, name, input, other)
    fn.__name__ = fn.__qualname__ = name
    return fn


for _n in _C.SPECIAL_BINARY:
    globals()[_n] = _binary_fn(_n, _n not in ("gammainc", "gammaincc"))


def _poly(name):
    f = getattr(lib, _C_NAME % name)

    def fn(input, n):
        return _either_scalar(f, name, input, n)
    fn.__name__ = fn.__qualname__ = name
    return fn


for _n in _C.SPECIAL_BINARY:
    if "polynomial" in _n:
        globals()[_n] = _poly(_n)


def logsumexp(input, dim, keepdim=False):
    return _ops.logsumexp(input, dim, keepdim)


def softmax(input, dim, *, dtype=None):
    return _ops.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _ops.log_softmax(input, dim, dtype)


def round(input, *, decimals=0):
    return _ops.round(input, decimals=decimals)
