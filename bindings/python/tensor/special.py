"""torch.special: the special functions, on the C kernels tensor.<name> uses."""
from . import _ops
from ._C import lib
from ._core import Tensor, _operand, _scalar_kind, _tp, _wrap

__all__ = ["i0", "i0e", "i1", "i1e", "erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "digamma", "psi",
           "gammaln", "polygamma", "multigammaln", "sinc", "logit", "xlogy", "xlog1py", "logsumexp"]


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


def xlog1py(input, other):
    return _either_scalar(lib.tn_special_xlog1py, "xlog1py", input, other)


def logsumexp(input, dim, keepdim=False):
    return _ops.logsumexp(input, dim, keepdim)
