"""torch.nn.functional names over the C library's nn functional section (section 10).

Ops the C library has (softmax, log_softmax, relu, gelu, silu, softplus, sigmoid, tanh,
pad) call it directly; a few small ones are composed from tensor ops until their C
versions land with the nn issue.
"""

from .._C import lib
from .._core import _i64, _wrap, int64, zeros


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    x = input if dtype is None else input.to(dtype)
    return _wrap(lib.tn_softmax(x._ptr, _softmax_dim(x.ndim) if dim is None else dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    x = input if dtype is None else input.to(dtype)
    return _wrap(lib.tn_log_softmax(x._ptr, _softmax_dim(x.ndim) if dim is None else dim))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


def relu(input, inplace=False):
    return input.relu_() if inplace else _wrap(lib.tn_relu(input._ptr))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate}")
    return _wrap(lib.tn_gelu(input._ptr, approximate == "tanh"))


def silu(input, inplace=False):
    r = _wrap(lib.tn_silu(input._ptr))
    return input.copy_(r) if inplace else r


def softplus(input, beta=1, threshold=20):
    return _wrap(lib.tn_softplus(input._ptr, float(beta), float(threshold)))


def sigmoid(input):
    return _wrap(lib.tn_sigmoid(input._ptr))


def tanh(input):
    return _wrap(lib.tn_tanh(input._ptr))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    r = input.where(input > 0, input * negative_slope)
    return input.copy_(r) if inplace else r


def pad(input, pad, mode="constant", value=None):
    if mode != "constant":
        raise NotImplementedError(f"pad: mode '{mode}' is not supported yet (only 'constant')")
    arr, n = _i64(pad)
    return _wrap(lib.tn_pad(input._ptr, arr, n, 0.0 if value is None else float(value)))


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    out = zeros(tuple(tensor.shape) + (num_classes,), dtype=int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    from .._factories import bernoulli
    mask = bernoulli(input, 1 - p) if p < 1 else input.new_zeros(input.shape)
    r = input * mask / (1 - p) if p < 1 else input * mask
    return input.copy_(r) if inplace else r
