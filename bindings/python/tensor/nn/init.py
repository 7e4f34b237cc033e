"""torch.nn.init over tensor.h's tn_init_* (section 12).

Each function fills its tensor in place without autograd, from generator= (PyTorch 2.2's
argument, last of each random init's; None: the default generator), and returns it, exactly as the C layers initialise themselves; torch's argument checks
(fewer than 2 dims, unknown nonlinearity, zero-element tensors) raise or warn here with
torch's text.
"""
import warnings

from .. import _C
from .._C import lib
from .._core import _check_int, _float, _scalar, _tp
from .._factories import _gen

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_", "dirac_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "trunc_normal_", "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu")


def calculate_gain(nonlinearity, param=None):
    if nonlinearity not in _LINEAR_FNS:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    if nonlinearity == "leaky_relu":
        if param is None:
            param = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            pass
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
    else:
        param = 0.0
    return lib.tn_init_calculate_gain_str(nonlinearity.encode(), _kw(param=float(param)))


def _fans(tensor):
    _tp(tensor, "init", "tensor")
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    rf = 1
    for s in tensor.shape[2:]:
        rf *= s
    return tensor.shape[1] * rf, tensor.shape[0] * rf


_calculate_fan_in_and_fan_out = _fans


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _nums(fn, **values):
    """The number arguments as floats (PyTorch's TypeError for a non-number)."""
    return [_float(v, fn, k) for k, v in values.items()]


def _kw(**values):
    """PyTorch's keyword text for the C _str functions: floats as repr ('inf', 'nan' too),
    strings quoted (checked against their valid words before)."""
    return ", ".join(f"{k}={v!r}" for k, v in values.items()).encode()


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    p = _tp(tensor, "uniform_", "tensor")
    a, b = _nums("uniform_", a=a, b=b)
    _check_int(lib.tn_init_uniform__opts(p, _C.tn_init_uniform_fn_opts(a, b, _gen(generator))))
    return tensor


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    p = _tp(tensor, "normal_", "tensor")
    mean, std = _nums("normal_", mean=mean, std=std)
    _check_int(lib.tn_init_normal__opts(p, _C.tn_init_normal_fn_opts(mean, std, _gen(generator))))
    return tensor


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    p = _tp(tensor, "trunc_normal_", "tensor")
    mean, std, a, b = _nums("trunc_normal_", mean=mean, std=std, a=a, b=b)
    g = _gen(generator)
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    _check_int(lib.tn_init_trunc_normal__opts(p, _C.tn_init_trunc_normal_fn_opts(mean, std, a, b, g)))
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    p = _tp(tensor, "sparse_", "tensor")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    sparsity, std = _nums("sparse_", sparsity=sparsity, std=std)
    _check_int(lib.tn_init_sparse__opts(p, sparsity, _C.tn_init_sparse_fn_opts(std, _gen(generator))))
    return tensor


def constant_(tensor, val):
    _check_int(lib.tn_init_constant_(_tp(tensor, "constant_", "tensor"), _scalar(val, "constant_", "val")))
    return tensor


def zeros_(tensor):
    _check_int(lib.tn_init_zeros_(_tp(tensor, "zeros_", "tensor")))
    return tensor


def ones_(tensor):
    _check_int(lib.tn_init_ones_(_tp(tensor, "ones_", "tensor")))
    return tensor


def eye_(tensor):
    _tp(tensor, "eye_", "tensor")
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._factories import eye
    from ..autograd import no_grad
    with no_grad():
        tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    _tp(tensor, "dirac_", "tensor")
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    from ..autograd import no_grad
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                idx = (g * out_chans_per_grp + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[idx] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    _fans(tensor)
    o = _C.tn_init_xavier_fn_opts(_float(gain, "xavier_uniform_", "gain"), _gen(generator))
    _check_int(lib.tn_init_xavier_uniform__opts(tensor._ptr, o))
    return tensor


def xavier_normal_(tensor, gain=1.0, generator=None):
    _fans(tensor)
    o = _C.tn_init_xavier_fn_opts(_float(gain, "xavier_normal_", "gain"), _gen(generator))
    _check_int(lib.tn_init_xavier_normal__opts(tensor._ptr, o))
    return tensor


def _kaiming(cfn, name, tensor, a, mode, nonlinearity, generator):
    _tp(tensor, name, "tensor")
    g = _gen(generator)
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    _calculate_correct_fan(tensor, mode)
    calculate_gain(nonlinearity, a)
    o = _C.tn_init_kaiming_fn_opts(_float(a, name, "a"), mode.lower().encode(), nonlinearity.encode(), g)
    _check_int(cfn(tensor._ptr, o))
    return tensor


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _kaiming(lib.tn_init_kaiming_uniform__opts, "kaiming_uniform_", tensor, a, mode, nonlinearity, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return _kaiming(lib.tn_init_kaiming_normal__opts, "kaiming_normal_", tensor, a, mode, nonlinearity, generator)


def orthogonal_(tensor, gain=1, generator=None):
    _tp(tensor, "orthogonal_", "tensor")
    gain = _float(gain, "orthogonal_", "gain")
    g = _gen(generator)
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    # tn_init_orthogonal_ scales each column by gain inside its Gram-Schmidt loop, so later
    # columns are projected on scaled ones and come out non-orthogonal for gain != 1:
    # draw with gain 1 (the same random numbers) and scale after.
    _check_int(lib.tn_init_orthogonal__opts(tensor._ptr, _C.tn_init_xavier_fn_opts(1.0, g)))
    if gain != 1:
        from ..autograd import no_grad
        with no_grad():
            tensor.mul_(gain)
    return tensor


def _deprecated(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"nn.init.{old_name} is now deprecated in favor of nn.init.{new_name}.", stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
