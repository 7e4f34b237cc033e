"""torch.nn.functional over the C library's nn section (tensor.h section 10).

Every op calls its C function: names, signatures, defaults and keyword arguments are
torch 1.13's (``stride=``, ``padding='same'``, ``return_indices=``, ``reduction=``,
``training=``, ...); int-or-tuple arguments are expanded here and handed to the C
``_ex`` forms. Argument errors that torch raises in Python (bad reduction strings, bad
dropout probabilities, mismatched target sizes) are raised here with torch's text and
exception type; everything else is checked in C and surfaces as the C message.
"""
import math
import numbers
import operator
import warnings
from ctypes import c_double, c_int64, c_void_p, byref

from .._C import lib, tn_affine_norm_fn_opts, tn_batch_norm_fn_opts, tn_instance_norm_fn_opts, tn_loss_opts, tn_sdpa_fn_opts
from .._core import Tensor, _float, _i64, _int, _scalar, _to_dtype, _wrap, full, int64, tensor

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "unfold", "fold", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "dropout3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "local_response_norm", "channel_shuffle",
    "native_channel_shuffle", "embedding_bag", "grid_sample", "affine_grid",
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "dropout", "dropout1d", "dropout2d", "alpha_dropout", "feature_alpha_dropout",
    "embedding", "one_hot", "scaled_dot_product_attention", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_",
    "hardtanh", "hardtanh_", "mish", "hardswish", "hardsigmoid", "gelu", "silu", "softplus", "sigmoid", "tanh",
    "softmax", "log_softmax", "softmin", "gumbel_softmax", "logsigmoid", "softsign", "tanhshrink", "threshold", "threshold_", "glu",
    "hardshrink", "softshrink", "prelu", "rrelu", "rrelu_",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "cosine_embedding_loss",
    "margin_ranking_loss", "pairwise_distance", "pdist", "normalize", "pad", "soft_margin_loss", "multilabel_soft_margin_loss",
    "multilabel_margin_loss", "hinge_embedding_loss", "multi_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "gaussian_nll_loss", "poisson_nll_loss", "ctc_loss",
]


# --------------------------------------------------------------------------- argument helpers
def _ntuple(v, n, name):
    """An int or a sequence of ints -> a list of n ints (a 1-sequence is repeated)."""
    if isinstance(v, (list, tuple)):
        try:
            vals = [operator.index(x) for x in v]
        except TypeError:
            raise TypeError(f"{name} must be an int or a tuple of ints, got {v!r}") from None
        if len(vals) == 1:
            vals = vals * n
        if len(vals) != n:
            raise RuntimeError(f"{name} must be an int or a tuple of {n} ints, got {tuple(v)}")
    else:
        try:
            vals = [operator.index(v)] * n
        except TypeError:
            raise TypeError(f"{name} must be an int or a tuple of ints, got {v!r}") from None
    for x in vals:
        _int(x, name, name)       # PyTorch's overflow error (ctypes would wrap the value)
    return vals


def _arr(vals):
    return (c_int64 * len(vals))(*vals)


def _opt(t):
    """A C pointer for an optional tensor argument (None -> NULL)."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"expected an optional Tensor argument, got {type(t).__name__}")
    return t._ptr


def _check(fn, **tensors):
    """PyTorch's TypeError for an argument that must be a Tensor and is not (C would read
    an AttributeError, or NULL as an absent tensor). Called after an inline isinstance
    test failed, which keeps the check off the hot path."""
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")


_REDUCTIONS = {"mean": 0, "sum": 1, "none": 2, "batchmean": 3}
_RED_WORDS = ("mean", "sum", "none", "batchmean")


def _legacy_reduction(size_average, reduce, emit_warning=True):
    """torch's _Reduction.legacy_get_string for the deprecated size_average/reduce."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def _reduction(reduction, size_average=None, reduce=None, batchmean=False):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    code = _REDUCTIONS.get(reduction)
    if code is None or (code == 3 and not batchmean):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return code


def _num_text(**options):
    """The option text of a _str form from floats and bools (repr round-trips a float)."""
    return ", ".join(f"{k}={'True' if v is True else 'False' if v is False else repr(float(v))}"
                     for k, v in options.items()).encode()


def _red_text(reduction, size_average=None, reduce=None, batchmean=False, **options):
    """The option text of a loss's _str form: the reduction, checked as _reduction does, and
    the loss's other options (floats exactly: repr round-trips)."""
    return _loss_text(_RED_WORDS[_reduction(reduction, size_average, reduce, batchmean)], **options)


def _inplace(input, result):
    """The in-place form of an op the C library computes out of place: copy the result
    into input. Under autograd the op must not have saved input itself (the copy bumps
    its version), so callers compute it from a clone then (see _src)."""
    return input.copy_(result)


def _act(cfn, input, inplace, *args):
    """An activation through its C function (or its _str form, args then the option text);
    inplace=True copies the result into input."""
    if not isinstance(input, Tensor):
        _check(cfn.__name__[3:].removesuffix("_str"), input=input)
    src = _src(input) if inplace else input          # a local: alive across the C call
    r = _wrap(cfn(src._ptr, *args))
    return _inplace(input, r) if inplace else r


def _src(input):
    """The operand of an inplace=True activation: a clone when autograd records it, so
    the values the op saves for backward are not the ones the copy overwrites."""
    if input.requires_grad and lib.tn_is_grad_enabled():
        return input.clone()
    return input


# --------------------------------------------------------------------------- activations
def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if not isinstance(input, Tensor):
        _check("softmax", input=input)
    x = input if dtype is None else input.to(_to_dtype(dtype, False))
    return _wrap(lib.tn_softmax(x._ptr, _softmax_dim(x.ndim) if dim is None else _int(dim, "softmax")))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if not isinstance(input, Tensor):
        _check("log_softmax", input=input)
    x = input if dtype is None else input.to(_to_dtype(dtype, False))
    return _wrap(lib.tn_log_softmax(x._ptr, _softmax_dim(x.ndim) if dim is None else _int(dim, "log_softmax")))


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    if not isinstance(logits, Tensor):
        _check("gumbel_softmax", logits=logits)
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    from .._ops import _kw_text
    return _wrap(lib.tn_gumbel_softmax_str(logits._ptr, _kw_text(tau=_float(tau, "gumbel_softmax", "tau"), hard=bool(hard),
                                                                 dim=_int(dim, "gumbel_softmax", "dim"))))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if not isinstance(input, Tensor):
        _check("softmin", input=input)
    x = input if dtype is None else input.to(_to_dtype(dtype, False))
    from .._ops import _kw_text
    return _wrap(lib.tn_softmin_str(x._ptr, _kw_text(dim=None if dim is None else _int(dim, "softmin"))))


def relu(input, inplace=False):
    if not isinstance(input, Tensor):
        _check("relu", input=input)
    return input.relu_() if inplace else _wrap(lib.tn_relu(input._ptr))


def relu_(input):
    if not isinstance(input, Tensor):
        _check("relu_", input=input)
    return input.relu_()


def relu6(input, inplace=False):
    return _act(lib.tn_relu6, input, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    lo, hi = _scalar(min_val, "hardtanh", "min_val"), _scalar(max_val, "hardtanh", "max_val")
    return _act(lib.tn_hardtanh_str, input, inplace, _num_text(min_val=lo, max_val=hi))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _act(lib.tn_leaky_relu_str, input, inplace, _num_text(negative_slope=_scalar(negative_slope, "leaky_relu", "negative_slope")))


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def elu(input, alpha=1.0, inplace=False):
    return _act(lib.tn_elu_str, input, inplace, _num_text(alpha=_scalar(alpha, "elu", "alpha")))


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def selu(input, inplace=False):
    return _act(lib.tn_selu, input, inplace)


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    return _act(lib.tn_celu_str, input, inplace, _num_text(alpha=_scalar(alpha, "celu", "alpha")))


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def mish(input, inplace=False):
    return _act(lib.tn_mish, input, inplace)


def hardswish(input, inplace=False):
    return _act(lib.tn_hardswish, input, inplace)


def hardsigmoid(input, inplace=False):
    return _act(lib.tn_hardsigmoid, input, inplace)


def gelu(input, approximate="none"):
    if not isinstance(input, Tensor):
        _check("gelu", input=input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate}")
    return _wrap(lib.tn_gelu_str(input._ptr, f"approximate='{approximate}'".encode()))


def silu(input, inplace=False):
    return _act(lib.tn_silu, input, inplace)


def softplus(input, beta=1, threshold=20):
    if not isinstance(input, Tensor):
        _check("softplus", input=input)
    beta, threshold = _scalar(beta, "softplus", "beta"), _scalar(threshold, "softplus", "threshold")
    return _wrap(lib.tn_softplus_str(input._ptr, _num_text(beta=beta, threshold=threshold)))


def sigmoid(input):
    if not isinstance(input, Tensor):
        _check("sigmoid", input=input)
    warnings.warn("nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.")
    return _wrap(lib.tn_sigmoid(input._ptr))


def tanh(input):
    if not isinstance(input, Tensor):
        _check("tanh", input=input)
    warnings.warn("nn.functional.tanh is deprecated. Use torch.tanh instead.")
    return _wrap(lib.tn_tanh(input._ptr))


def logsigmoid(input):
    if not isinstance(input, Tensor):
        _check("logsigmoid", input=input)
    return _wrap(lib.tn_logsigmoid(input._ptr))


def softsign(input):
    if not isinstance(input, Tensor):
        _check("softsign", input=input)
    return _wrap(lib.tn_softsign(input._ptr))


def tanhshrink(input):
    if not isinstance(input, Tensor):
        _check("tanhshrink", input=input)
    return _wrap(lib.tn_tanhshrink(input._ptr))


def hardshrink(input, lambd=0.5):
    if not isinstance(input, Tensor):
        _check("hardshrink", input=input)
    return _wrap(lib.tn_hardshrink_str(input._ptr, _num_text(lambd=_scalar(lambd, "hardshrink", "lambd"))))


def softshrink(input, lambd=0.5):
    if not isinstance(input, Tensor):
        _check("softshrink", input=input)
    return _wrap(lib.tn_softshrink_str(input._ptr, _num_text(lambd=_scalar(lambd, "softshrink", "lambd"))))


def threshold(input, threshold, value, inplace=False):
    return _act(lib.tn_threshold, input, inplace, _scalar(threshold, "threshold", "threshold"),
                _scalar(value, "threshold", "value"))


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, True)


def glu(input, dim=-1):
    if not isinstance(input, Tensor):
        _check("glu", input=input)
    from .._ops import _kw_text
    return _wrap(lib.tn_glu_str(input._ptr, _kw_text(dim=_int(dim, "glu"))))


def prelu(input, weight):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("prelu", input=input, weight=weight)
    return _wrap(lib.tn_prelu(input._ptr, weight._ptr))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return _act(lib.tn_rrelu_str, input, inplace, _num_text(lower=_float(lower, "rrelu", "lower"), upper=_float(upper, "rrelu", "upper"),
                                                         training=bool(training)))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


# --------------------------------------------------------------------------- linear, convolution
def linear(input, weight, bias=None):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("linear", input=input, weight=weight)
    return _wrap(lib.tn_linear(input._ptr, weight._ptr, _opt(bias)))


def bilinear(input1, input2, weight, bias=None):
    if not (isinstance(input1, Tensor) and isinstance(input2, Tensor) and isinstance(weight, Tensor)):
        _check("bilinear", input1=input1, input2=input2, weight=weight)
    return _wrap(lib.tn_bilinear(input1._ptr, input2._ptr, weight._ptr, _opt(bias)))


def _conv_padding(padding, n):
    """padding as n ints, or "same" (the C option text's 'same')."""
    if isinstance(padding, str):
        if padding == "same":
            return "same"
        if padding == "valid":
            return [0] * n
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    vals = _ntuple(padding, n, "padding")
    if any(v < 0 for v in vals):
        raise RuntimeError("negative padding is not supported")
    return vals


def _kw(**options):
    """Keyword arguments as the C _str functions' text: ints, bools, None, 'same', and tuples
    ("stride=(2, 1)")."""
    def fmt(v):
        if v is None or isinstance(v, bool):
            return str(v)
        if isinstance(v, str):
            return f"'{v}'"
        if isinstance(v, (list, tuple)):
            return "(" + ", ".join(fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        return str(int(v))
    return ", ".join(f"{k}={fmt(v)}" for k, v in options.items()).encode()


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("conv1d", input=input, weight=weight)
    (s,), p, (d,) = _ntuple(stride, 1, "stride"), _conv_padding(padding, 1), _ntuple(dilation, 1, "dilation")
    p = p if p == "same" else p[0]
    return _wrap(lib.tn_conv1d_str(input._ptr, weight._ptr, _opt(bias),
                                   _kw(stride=s, padding=p, dilation=d, groups=_int(groups, "conv1d", "groups"))))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("conv2d", input=input, weight=weight)
    s, p, d = _ntuple(stride, 2, "stride"), _conv_padding(padding, 2), _ntuple(dilation, 2, "dilation")
    return _wrap(lib.tn_conv2d_str(input._ptr, weight._ptr, _opt(bias),
                                   _kw(stride=s, padding=p, dilation=d, groups=_int(groups, "conv2d", "groups"))))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("conv_transpose1d", input=input, weight=weight)
    (s,), (p,) = _ntuple(stride, 1, "stride"), _ntuple(padding, 1, "padding")
    (o,), (d,) = _ntuple(output_padding, 1, "output_padding"), _ntuple(dilation, 1, "dilation")
    return _wrap(lib.tn_conv_transpose1d_str(input._ptr, weight._ptr, _opt(bias),
                                             _kw(stride=s, padding=p, output_padding=o,
                                                 groups=_int(groups, "conv_transpose1d", "groups"), dilation=d)))


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("conv_transpose2d", input=input, weight=weight)
    s, p = _ntuple(stride, 2, "stride"), _ntuple(padding, 2, "padding")
    o, d = _ntuple(output_padding, 2, "output_padding"), _ntuple(dilation, 2, "dilation")
    return _wrap(lib.tn_conv_transpose2d_str(input._ptr, weight._ptr, _opt(bias),
                                             _kw(stride=s, padding=p, output_padding=o,
                                                 groups=_int(groups, "conv_transpose2d", "groups"), dilation=d)))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("conv3d", input=input, weight=weight)
    s, p, d = _ntuple(stride, 3, "stride"), _conv_padding(padding, 3), _ntuple(dilation, 3, "dilation")
    return _wrap(lib.tn_conv3d_str(input._ptr, weight._ptr, _opt(bias),
                                   _kw(stride=s, padding=p, dilation=d, groups=_int(groups, "conv3d", "groups"))))


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("conv_transpose3d", input=input, weight=weight)
    s, p = _ntuple(stride, 3, "stride"), _ntuple(padding, 3, "padding")
    o, d = _ntuple(output_padding, 3, "output_padding"), _ntuple(dilation, 3, "dilation")
    return _wrap(lib.tn_conv_transpose3d_str(input._ptr, weight._ptr, _opt(bias),
                                             _kw(stride=s, padding=p, output_padding=o,
                                                 groups=_int(groups, "conv_transpose3d", "groups"), dilation=d)))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if not isinstance(input, Tensor):
        _check("unfold", input=input)
    k, d = _ntuple(kernel_size, 2, "kernel_size"), _ntuple(dilation, 2, "dilation")
    p, s = _ntuple(padding, 2, "padding"), _ntuple(stride, 2, "stride")
    return _wrap(lib.tn_im2col(input._ptr, _arr(k), _arr(d), _arr(p), _arr(s)))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if not isinstance(input, Tensor):
        _check("fold", input=input)
    o, k = _ntuple(output_size, 2, "output_size"), _ntuple(kernel_size, 2, "kernel_size")
    d, p, s = _ntuple(dilation, 2, "dilation"), _ntuple(padding, 2, "padding"), _ntuple(stride, 2, "stride")
    return _wrap(lib.tn_col2im(input._ptr, _arr(o), _arr(k), _arr(d), _arr(p), _arr(s)))


# --------------------------------------------------------------------------- pooling
def _pool_stride(stride, kernel, n):
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return list(kernel)
    vals = _ntuple(stride, n, "stride")
    if any(v == 0 for v in vals):         # C reads 0 as "the kernel size"
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in vals):
        raise RuntimeError("stride should be greater than zero")
    return vals


def _with_indices(call, want):
    """Run a C pooling call that takes a tn_tensor ** for the argmax positions."""
    idx = c_void_p()
    out = _wrap(call(byref(idx) if want else None))
    if not want:
        return out
    return out, _wrap(idx.value)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    if not isinstance(input, Tensor):
        _check("max_pool1d", input=input)
    (k,) = _ntuple(kernel_size, 1, "kernel_size")
    (s,), (p,), (d,) = _pool_stride(stride, [k], 1), _ntuple(padding, 1, "padding"), _ntuple(dilation, 1, "dilation")
    return _with_indices(lambda ip: lib.tn_max_pool1d_str(input._ptr, ip, k, _kw(stride=s, padding=p, dilation=d,
                                                                               ceil_mode=bool(ceil_mode))), return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    if not isinstance(input, Tensor):
        _check("max_pool2d", input=input)
    k = _ntuple(kernel_size, 2, "kernel_size")
    s, p, d = _pool_stride(stride, k, 2), _ntuple(padding, 2, "padding"), _ntuple(dilation, 2, "dilation")
    return _with_indices(lambda ip: lib.tn_max_pool2d_str(input._ptr, ip, k[0], _kw(kernel_size=k, stride=s, padding=p, dilation=d,
                                                                                  ceil_mode=bool(ceil_mode))), return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool_long(pool, input, divisor_override):
    """Average pooling of an int64 input as PyTorch's CPU kernel: the window's integer sum
    divided by the divisor, truncating (sums exact in float64 up to 2^53)."""
    from .. import float64, full_like, ones_like, where
    x = input.to(float64)
    sums = pool(x, 1)                                   # divisor_override=1: the sums
    if divisor_override is not None:
        div = full_like(sums, float(divisor_override))
    else:                                               # the divisor per window, from pooling ones
        ones = ones_like(x)
        count, mean = pool(ones, 1), pool(ones, None)
        div = where(count > 0, (count / where(mean > 0, mean, ones_like(mean))).round(), ones_like(count))
    return sums.to(int64).div(div.to(int64), rounding_mode="trunc")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if not isinstance(input, Tensor):
        _check("avg_pool1d", input=input)
    if input.dtype is int64 and input.ndim in (2, 3):   # PyTorch pools int64 (and no other integral dtype)
        return avg_pool2d(input.unsqueeze(-2), (1, kernel_size if isinstance(kernel_size, int) else kernel_size[0]),
                          None if stride is None else (1, stride if isinstance(stride, int) else stride[0]),
                          (0, padding if isinstance(padding, int) else padding[0]), ceil_mode, count_include_pad).squeeze(-2)
    (k,) = _ntuple(kernel_size, 1, "kernel_size")
    (s,), (p,) = _pool_stride(stride, [k], 1), _ntuple(padding, 1, "padding")
    return _wrap(lib.tn_avg_pool1d_str(input._ptr, k, _kw(stride=s, padding=p, ceil_mode=bool(ceil_mode),
                                                          count_include_pad=bool(count_include_pad))))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if not isinstance(input, Tensor):
        _check("avg_pool2d", input=input)
    k = _ntuple(kernel_size, 2, "kernel_size")
    s, p = _pool_stride(stride, k, 2), _ntuple(padding, 2, "padding")
    if divisor_override is not None and _int(divisor_override, "avg_pool2d", "divisor_override") == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype is int64:
        return _avg_pool_long(lambda x, d: avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, d),
                              input, divisor_override)
    return _wrap(lib.tn_avg_pool2d_str(input._ptr, k[0], _kw(kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode),
                                                             count_include_pad=bool(count_include_pad),
                                                             divisor_override=None if divisor_override is None else int(divisor_override))))


def _adaptive_size(input, output_size, n):
    """output_size as n ints; None entries keep the input's size (torch's _list_with_default)."""
    if not isinstance(input, Tensor):
        _check("adaptive_pool", input=input)
    if isinstance(output_size, (list, tuple)):
        sizes = list(output_size)
        if len(sizes) == 1:
            sizes = sizes * n
        if len(sizes) != n:
            raise ValueError(f"Input dimension should be at least {n + 1}")
    else:
        sizes = [output_size] * n
    shape = input.shape
    return [shape[len(shape) - n + i] if v is None else _int(v, "adaptive_pool", "output_size")
            for i, v in enumerate(sizes)]


def adaptive_avg_pool2d(input, output_size):
    if not isinstance(input, Tensor):
        _check("adaptive_avg_pool2d", input=input)
    oh, ow = _adaptive_size(input, output_size, 2)
    return _wrap(lib.tn_adaptive_avg_pool2d(input._ptr, oh, ow))


def adaptive_avg_pool1d(input, output_size):
    (o,) = _adaptive_size(input, output_size, 1)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    x = input.unsqueeze(-2)
    return _wrap(lib.tn_adaptive_avg_pool2d(x._ptr, 1, o)).squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    if not isinstance(input, Tensor):
        _check("adaptive_max_pool2d", input=input)
    oh, ow = _adaptive_size(input, output_size, 2)
    return _with_indices(lambda ip: lib.tn_adaptive_max_pool2d(input._ptr, oh, ow, ip), return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return adaptive_max_pool2d_with_indices(input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    if not isinstance(input, Tensor):
        _check("adaptive_max_pool1d", input=input)
    (o,) = _adaptive_size(input, output_size, 1)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    x = input.unsqueeze(-2)
    r = _with_indices(lambda ip: lib.tn_adaptive_max_pool2d(x._ptr, 1, o, ip), return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return adaptive_max_pool1d_with_indices(input, output_size, return_indices)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    if not isinstance(input, Tensor):
        _check("max_pool3d", input=input)
    k = _ntuple(kernel_size, 3, "kernel_size")
    s, p, d = _pool_stride(stride, k, 3), _ntuple(padding, 3, "padding"), _ntuple(dilation, 3, "dilation")
    return _with_indices(lambda ip: lib.tn_max_pool3d_str(input._ptr, ip, k[0], _kw(kernel_size=k, stride=s, padding=p, dilation=d,
                                                                                  ceil_mode=bool(ceil_mode))), return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if not isinstance(input, Tensor):
        _check("avg_pool3d", input=input)
    k = _ntuple(kernel_size, 3, "kernel_size")
    s, p = _pool_stride(stride, k, 3), _ntuple(padding, 3, "padding")
    if divisor_override is not None and _int(divisor_override, "avg_pool3d", "divisor_override") == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype is int64:
        return _avg_pool_long(lambda x, d: avg_pool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, d),
                              input, divisor_override)
    return _wrap(lib.tn_avg_pool3d_str(input._ptr, k[0], _kw(kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode),
                                                             count_include_pad=bool(count_include_pad),
                                                             divisor_override=None if divisor_override is None else int(divisor_override))))


def adaptive_avg_pool3d(input, output_size):
    if not isinstance(input, Tensor):
        _check("adaptive_avg_pool3d", input=input)
    od, oh, ow = _adaptive_size(input, output_size, 3)
    return _wrap(lib.tn_adaptive_avg_pool3d(input._ptr, od, oh, ow))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    if not isinstance(input, Tensor):
        _check("adaptive_max_pool3d", input=input)
    od, oh, ow = _adaptive_size(input, output_size, 3)
    return _with_indices(lambda ip: lib.tn_adaptive_max_pool3d(input._ptr, od, oh, ow, ip), return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return adaptive_max_pool3d_with_indices(input, output_size, return_indices)


def _lp_text(stride, kernel, n, ceil_mode):
    s = None if stride is None else _ntuple(stride, n, "stride")
    opts = {"kernel_size": kernel} if n > 1 else {}
    if s is not None:
        opts["stride"] = s if n > 1 else s[0]
    opts["ceil_mode"] = bool(ceil_mode)
    return _kw(**opts)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if not isinstance(input, Tensor):
        _check("lp_pool1d", input=input)
    (k,) = _ntuple(kernel_size, 1, "kernel_size")
    return _wrap(lib.tn_lp_pool1d_str(input._ptr, _float(norm_type, "lp_pool1d", "norm_type"), k,
                                      _lp_text(stride, [k], 1, ceil_mode)))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if not isinstance(input, Tensor):
        _check("lp_pool2d", input=input)
    k = _ntuple(kernel_size, 2, "kernel_size")
    return _wrap(lib.tn_lp_pool2d_str(input._ptr, _float(norm_type, "lp_pool2d", "norm_type"), k[0],
                                      _lp_text(stride, k, 2, ceil_mode)))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if not isinstance(input, Tensor):
        _check("lp_pool3d", input=input)
    k = _ntuple(kernel_size, 3, "kernel_size")
    return _wrap(lib.tn_lp_pool3d_str(input._ptr, _float(norm_type, "lp_pool3d", "norm_type"), k[0],
                                      _lp_text(stride, k, 3, ceil_mode)))


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    n = len(kernel_size)
    default_size = [(input_size[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default_size
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length of "
                         f"'{len(output_size)}'")
    for d in range(n):
        min_size, max_size = default_size[d] - stride[d], default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and {max_size})')
    return output_size


def _max_unpool(n, input, indices, kernel_size, stride, padding, output_size):
    if not (isinstance(input, Tensor) and isinstance(indices, Tensor)):
        _check(f"max_unpool{n}d", input=input, indices=indices)
    k = _ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None else _ntuple(stride, n, "stride")
    p = _ntuple(padding, n, "padding")
    size = [_int(v, f"max_unpool{n}d", "output_size") for v in _unpool_output_size(input, k, s, p, output_size)]
    return _wrap(lib.tn_max_unpool(input._ptr, indices._ptr, _arr(size), n))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _fractional(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    fn = f"fractional_max_pool{n}d"
    if not isinstance(input, Tensor):
        _check(fn, input=input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    k = _ntuple(kernel_size, n, "kernel_size")
    if output_size is None:
        if isinstance(output_ratio, (list, tuple)) and len(output_ratio) > n:
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = list(output_ratio) if isinstance(output_ratio, (list, tuple)) else [output_ratio] * n
        if len(ratio) == 1:
            ratio = ratio * n
        output_size = [int(input.size(-n + i) * float(ratio[i])) for i in range(n)]
    o = _ntuple(output_size, n, "output_size")
    if _random_samples is not None and not isinstance(_random_samples, Tensor):
        _check(fn, _random_samples=_random_samples)
    cfn = lib.tn_fractional_max_pool2d if n == 2 else lib.tn_fractional_max_pool3d
    return _with_indices(lambda ip: cfn(input._ptr, _arr(k), _arr(o), _opt(_random_samples), ip), return_indices)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


# --------------------------------------------------------------------------- normalisation
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if not isinstance(input, Tensor):
        _check("batch_norm", input=input)
    if training:                  # torch's _verify_batch_size, a ValueError raised in Python
        size = list(input.shape)
        n = size[0] if size else 1
        for v in size[2:]:
            n *= v
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return _wrap(lib.tn_batch_norm_opts(input._ptr, _opt(running_mean), _opt(running_var),
                                        tn_batch_norm_fn_opts(_opt(weight), _opt(bias), bool(training),
                                                              _float(momentum, "batch_norm", "momentum"),
                                                              _float(eps, "batch_norm", "eps"))))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if not isinstance(input, Tensor):
        _check("layer_norm", input=input)
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    arr, n = _i64(normalized_shape)
    return _wrap(lib.tn_layer_norm_opts(input._ptr, arr, n, tn_affine_norm_fn_opts(_opt(weight), _opt(bias), _float(eps, "layer_norm", "eps"))))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if not isinstance(input, Tensor):
        _check("group_norm", input=input)
    return _wrap(lib.tn_group_norm_opts(input._ptr, _int(num_groups, "group_norm", "num_groups"),
                                        tn_affine_norm_fn_opts(_opt(weight), _opt(bias), _float(eps, "group_norm", "eps"))))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if not isinstance(input, Tensor):
        _check("instance_norm", input=input)
    if use_input_stats and input.ndim >= 2:
        n = 1
        for s in input.shape[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    return _wrap(lib.tn_instance_norm_opts(input._ptr, tn_instance_norm_fn_opts(
        _opt(running_mean), _opt(running_var), _opt(weight), _opt(bias), bool(use_input_stats),
        _float(momentum, "instance_norm", "momentum"), _float(eps, "instance_norm", "eps"))))


def _lrn_text(alpha, beta, k, fn):
    return ", ".join(f"{n}={_float(v, fn, n)!r}" for n, v in (("alpha", alpha), ("beta", beta), ("k", k))).encode()


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    if not isinstance(input, Tensor):
        _check("local_response_norm", input=input)
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    return _wrap(lib.tn_local_response_norm_str(input._ptr, _int(size, "local_response_norm", "size"),
                                                _lrn_text(alpha, beta, k, "local_response_norm")))


def channel_shuffle(input, groups):
    if not isinstance(input, Tensor):
        _check("channel_shuffle", input=input)
    return _wrap(lib.tn_channel_shuffle(input._ptr, _int(groups, "channel_shuffle", "groups")))


native_channel_shuffle = channel_shuffle


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if not isinstance(input, Tensor):
        _check("normalize", input=input)
    from .._ops import _kw_text
    r = _wrap(lib.tn_normalize_str(input._ptr, _kw_text(p=_float(p, "normalize", "p"), dim=_int(dim, "normalize", "dim"),
                                                       eps=_float(eps, "normalize", "eps"))))
    return r if out is None else out.copy_(r)


# --------------------------------------------------------------------------- dropout
def _check_p(p):
    p = _float(p, "dropout", "p")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    if not isinstance(input, Tensor):
        _check("dropout", input=input)
    _check_p(p)
    if inplace:
        if not training or p == 0:
            return input
        src = _src(input)
        return _inplace(input, _wrap(lib.tn_dropout_str(src._ptr, _num_text(p=_float(p, "dropout", "p"), training=True))))
    return _wrap(lib.tn_dropout_str(input._ptr, _num_text(p=_float(p, "dropout", "p"), training=bool(training))))


def _channel_dropout(input, p, training, inplace, batched):
    """Channel-wise dropout of [N, C, L] ([C, L] when not batched) through dropout2d of
    [N, C, L, 1]: torch 1.13's dropout1d (and its dropout2d of 3-D input)."""
    x = input if batched else input.unsqueeze(0)
    src = (_src(x) if inplace else x).unsqueeze(-1)
    r = _wrap(lib.tn_dropout2d_str(src._ptr, _num_text(p=_float(p, "dropout1d", "p"), training=bool(training)))).squeeze(-1)
    if not batched:
        r = r.squeeze(0)
    if inplace:
        return input if not training or p == 0 else _inplace(input, r)
    return r


def dropout1d(input, p=0.5, training=True, inplace=False):
    if not isinstance(input, Tensor):
        _check("dropout1d", input=input)
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
                           "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, input.ndim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if not isinstance(input, Tensor):
        _check("dropout2d", input=input)
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).")
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        # torch's feature dropout: whole [N, C] feature maps (single elements for 2-D input)
        shape = list(input.shape)
        src = (_src(input) if inplace else input).reshape(shape[0], shape[1], -1, 1)
        r = _wrap(lib.tn_dropout2d_str(src._ptr, _num_text(p=_float(p, "dropout2d", "p"), training=bool(training)))).reshape(shape)
        if inplace:
            return input if not training or p == 0 else _inplace(input, r)
        return r
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.")
        return _channel_dropout(input, p, training, inplace, True)
    src = _src(input) if inplace else input
    r = _wrap(lib.tn_dropout2d_str(src._ptr, _num_text(p=_float(p, "dropout2d", "p"), training=bool(training))))
    if inplace:
        return input if not training or p == 0 else _inplace(input, r)
    return r


def dropout3d(input, p=0.5, training=True, inplace=False):
    if not isinstance(input, Tensor):
        _check("dropout3d", input=input)
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).")
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = list(input.shape)   # torch's feature dropout over [N, C] feature maps
        src = (_src(input) if inplace else input).reshape(shape[0], shape[1], -1, 1, 1)
        r = _wrap(lib.tn_dropout3d_str(src._ptr, _num_text(p=_float(p, "dropout3d", "p"), training=bool(training)))).reshape(shape)
    else:
        src = _src(input) if inplace else input
        r = _wrap(lib.tn_dropout3d_str(src._ptr, _num_text(p=_float(p, "dropout3d", "p"), training=bool(training))))
    if inplace:
        return input if not training or p == 0 else _inplace(input, r)
    return r


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """SELU-preserving dropout: PyTorch's _dropout_impl with alpha noise, a bernoulli(1 - p)
    draw per element (so the same seed drops torch's elements)"""
    if not isinstance(input, Tensor):
        _check("alpha_dropout", input=input)
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        r = input * 0
    else:
        from .._core import empty as _empty
        from .._factories import bernoulli as _bernoulli
        alpha = 1.7580993408473766
        a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        noise = _bernoulli(_empty(tuple(input.shape), dtype=input.dtype), 1 - p)
        b = (noise - 1) * (alpha * a) + alpha * a * p
        r = input * (noise * a) + b
    return _inplace(input, r) if inplace else r


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha dropout of whole feature maps ([N, C] channels): PyTorch's _dropout_impl with
    feature and alpha noise, a bernoulli(1 - p) draw per channel."""
    if not isinstance(input, Tensor):
        _check("feature_alpha_dropout", input=input)
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        r = input * 0
    else:
        from .._core import empty as _empty
        from .._factories import bernoulli as _bernoulli
        alpha = 1.7580993408473766
        a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        noise = _bernoulli(_empty(tuple(input.shape[:2]) + (1,) * (input.ndim - 2), dtype=input.dtype), 1 - p)
        b = (noise - 1) * (alpha * a) + alpha * a * p
        r = input * (noise * a) + b
    return _inplace(input, r) if inplace else r


# --------------------------------------------------------------------------- embedding, one_hot
def _embedding_renorm_(weight, input, max_norm, norm_type):
    """torch.embedding_renorm_: rows looked up by input rescaled to norm <= max_norm, in place."""
    from ..autograd import no_grad
    rows = sorted(set(input.reshape(-1).tolist()))
    if not rows:
        return
    with no_grad():
        idx = tensor(rows, dtype=int64)
        w = weight.detach()
        sub = w.index_select(0, idx)
        norms = sub.norm(norm_type, 1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, 1.0)
        w.index_put_((idx,), sub * scale)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("embedding", input=input, weight=weight)
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not supported")
    if padding_idx is not None:
        padding_idx = _int(padding_idx, "embedding", "padding_idx")
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        input = input.contiguous()
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if padding_idx is None:
        return _wrap(lib.tn_embedding(input._ptr, weight._ptr))
    return _wrap(lib.tn_embedding_padded(input._ptr, weight._ptr, _int(padding_idx, "embedding", "padding_idx")))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        _check("embedding_bag", input=input, weight=weight)
    if weight.dtype == int64 and input.is_floating_point():   # torch's legacy argument order (weight, input)
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, "
                      "...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
                         f"have the same shape as the input ({input.shape})")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse gradients are not supported")
    if input.dim() == 2 and offsets is not None:
        raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                         "length sequences. However, found offsets of type {}".format(type(offsets).__name__))
    if input.dim() == 1 and offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if input.dim() not in (1, 2):
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    text = f"mode='{mode}', include_last_offset={bool(include_last_offset)}"
    if padding_idx is not None:
        text += f", padding_idx={_int(padding_idx, 'embedding_bag', 'padding_idx')}"
    return _wrap(lib.tn_embedding_bag_str(input._ptr, weight._ptr, _opt(offsets), _opt(per_sample_weights), text.encode()))


def one_hot(tensor, num_classes=-1):
    if not isinstance(tensor, Tensor):
        _check("one_hot", tensor=tensor)
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    return _wrap(lib.tn_one_hot_str(tensor._ptr, f"num_classes={_int(num_classes, 'one_hot', 'num_classes')}".encode()))


# --------------------------------------------------------------------------- attention, resizing
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(q k^T * scale + mask) v (torch 2.x's signature; scale None: 1/sqrt(E))."""
    if not (isinstance(query, Tensor) and isinstance(key, Tensor) and isinstance(value, Tensor)):
        _check("scaled_dot_product_attention", query=query, key=key, value=value)
    if scale is not None and not _float(scale, "scaled_dot_product_attention", "scale") > 0:
        raise RuntimeError(f"scaled_dot_product_attention: scale must be positive, got {scale}")
    return _wrap(lib.tn_scaled_dot_product_attention_opts(
        query._ptr, key._ptr, value._ptr,
        tn_sdpa_fn_opts(_opt(attn_mask), _float(dropout_p, "scaled_dot_product_attention", "dropout_p"), bool(is_causal),
                        float("nan") if scale is None else float(scale))))


_INTERP_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if not isinstance(input, Tensor):
        _check("interpolate", input=input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            output_size = [operator.index(s) for s in size]
        else:
            output_size = [operator.index(size)] * dim
        scale_factors = None
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [_float(scale_factor, "interpolate", "scale_factor")] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(math.floor(float(input.size(i + 2)) * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if mode not in _INTERP_MODES or dim < 1 or dim > 3:
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
            f" (got {mode})")
    need = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
    if need is not None and need != dim:
        names = {1: "3D", 2: "4D", 3: "5D"}
        raise NotImplementedError(f"Got {names[dim]} input, but {mode} mode needs {names[need]} input")
    kw = [f"mode={mode!r}", f"align_corners={None if align_corners is None else bool(align_corners)}"]
    if output_size is not None:
        kw.append("size=(" + ", ".join(str(int(s)) for s in output_size) + ")")
    if scale_factors is not None:
        kw.append("scale_factor=(" + ", ".join(repr(float(s)) for s in scale_factors) + ")")
    return _wrap(lib.tn_interpolate_str(input._ptr, ", ".join(kw).encode()))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if not (isinstance(input, Tensor) and isinstance(grid, Tensor)):
        _check("grid_sample", input=input, grid=grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    text = f"mode='{mode}', padding_mode='{padding_mode}', align_corners={bool(align_corners)}"
    return _wrap(lib.tn_grid_sample_str(input._ptr, grid._ptr, text.encode()))


def affine_grid(theta, size, align_corners=None):
    if not isinstance(theta, Tensor):
        _check("affine_grid", theta=theta)
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {list(theta.shape)}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {list(theta.shape)}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an issue for standard upsampling, but it could be for "
                      "some applications of affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    arr, n = _i64(size, "size")
    return _wrap(lib.tn_affine_grid_str(theta._ptr, arr, n, f"align_corners={None if align_corners is None else bool(align_corners)}".encode()))


def pixel_shuffle(input, upscale_factor):
    if not isinstance(input, Tensor):
        _check("pixel_shuffle", input=input)
    return _wrap(lib.tn_pixel_shuffle(input._ptr, _int(upscale_factor, "pixel_shuffle", "upscale_factor")))


def pixel_unshuffle(input, downscale_factor):
    if not isinstance(input, Tensor):
        _check("pixel_unshuffle", input=input)
    return _wrap(lib.tn_pixel_unshuffle(input._ptr, _int(downscale_factor, "pixel_unshuffle", "downscale_factor")))


_PAD_MODES = {"reflect": 1, "replicate": 2, "circular": 3}


def pad(input, pad, mode="constant", value=None):
    if not isinstance(input, Tensor):
        _check("pad", input=input)
    arr, n = _i64(pad, "pad")
    if mode == "constant":
        if type(value) is complex:   # a float argument in torch (constant_pad_nd takes complex values)
            raise TypeError("pad(): argument 'value' must be float, not complex")
        return _wrap(lib.tn_pad_str(input._ptr, arr, n, _num_text(value=0.0 if value is None else _float(value, "pad", "value"))))
    code = _PAD_MODES.get(mode)
    if code is None:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    r = lib.tn_pad_str(input._ptr, arr, n, f"mode='{mode}'".encode())
    if not r and "supported for now" in lib.tn_last_error().decode():
        msg = lib.tn_last_error().decode()
        lib.tn_clear_error()
        raise NotImplementedError(msg)
    return _wrap(r)


# --------------------------------------------------------------------------- losses
def _size_warning(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("mse_loss", input=input, target=target)
    _size_warning(input, target)
    return _wrap(lib.tn_mse_loss_str(input._ptr, target._ptr, _red_text(reduction, size_average, reduce)))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("l1_loss", input=input, target=target)
    _size_warning(input, target)
    return _wrap(lib.tn_l1_loss_str(input._ptr, target._ptr, _red_text(reduction, size_average, reduce)))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("smooth_l1_loss", input=input, target=target)
    _size_warning(input, target)
    return _wrap(lib.tn_smooth_l1_loss_str(input._ptr, target._ptr, _red_text(reduction, size_average, reduce,
                                                                              beta=_float(beta, "smooth_l1_loss", "beta"))))


def huber_loss(input, target, reduction="mean", delta=1.0):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("huber_loss", input=input, target=target)
    _size_warning(input, target)
    return _wrap(lib.tn_huber_loss_str(input._ptr, target._ptr, _red_text(reduction, delta=_float(delta, "huber_loss", "delta"))))


def _check_batch(input, target):
    """torch's Python-side check of nll_loss/cross_entropy (a ValueError)."""
    if input.ndim >= 1 and target.ndim >= 1 and input.ndim != target.ndim and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("nll_loss", input=input, target=target)
    _check_batch(input, target)
    ignore_index = _int(ignore_index, "nll_loss", "ignore_index")
    return _wrap(lib.tn_nll_loss_opts(input._ptr, target._ptr,
                                      tn_loss_opts(_opt(weight), ignore_index, _reduction(reduction, size_average, reduce), 0.0)))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("cross_entropy", input=input, target=target)
    if input.ndim >= 1 and target.ndim >= 1 and not target.dtype.is_floating_point:
        _check_batch(input, target)           # class-index targets (probabilities: C checks the shape)
    return _wrap(lib.tn_cross_entropy_opts(input._ptr, target._ptr,
                                           tn_loss_opts(_opt(weight), _int(ignore_index, "cross_entropy", "ignore_index"),
                                                        _reduction(reduction, size_average, reduce),
                                                        _float(label_smoothing, "cross_entropy", "label_smoothing"))))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("binary_cross_entropy", input=input, target=target)
    red = _red_text(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    return _wrap(lib.tn_binary_cross_entropy_str(input._ptr, target._ptr, _opt(weight), red))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("binary_cross_entropy_with_logits", input=input, target=target)
    red = _red_text(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _wrap(lib.tn_binary_cross_entropy_with_logits_str(input._ptr, target._ptr, _opt(weight), _opt(pos_weight), red))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("kl_div", input=input, target=target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    return _wrap(lib.tn_kl_div_str(input._ptr, target._ptr, _red_text(reduction, batchmean=True, log_target=bool(log_target))))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    if not (isinstance(x1, Tensor) and isinstance(x2, Tensor)):
        _check("cosine_similarity", x1=x1, x2=x2)
    from .._ops import _kw_text
    return _wrap(lib.tn_cosine_similarity_str(x1._ptr, x2._ptr, _kw_text(dim=_int(dim, "cosine_similarity"), eps=_float(eps, "cosine_similarity", "eps"))))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if not (isinstance(x1, Tensor) and isinstance(x2, Tensor)):
        _check("pairwise_distance", x1=x1, x2=x2)
    from .._ops import _kw_text
    return _wrap(lib.tn_pairwise_distance_str(x1._ptr, x2._ptr, _kw_text(p=_float(p, "pairwise_distance", "p"), eps=_float(eps, "pairwise_distance", "eps"),
                                                                          keepdim=bool(keepdim))))


def pdist(input, p=2):
    from .._ops import pdist as _pdist
    return _pdist(input, p)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input1, Tensor) and isinstance(input2, Tensor) and isinstance(target, Tensor)):
        _check("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    margin = _float(margin, "cosine_embedding_loss", "margin")
    return _wrap(lib.tn_cosine_embedding_loss_str(input1._ptr, input2._ptr, target._ptr,
                                                  _red_text(reduction, size_average, reduce, margin=margin)))


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input1, Tensor) and isinstance(input2, Tensor) and isinstance(target, Tensor)):
        _check("margin_ranking_loss", input1=input1, input2=input2, target=target)
    red = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    margin = _float(margin, "margin_ranking_loss", "margin")
    return _wrap(lib.tn_margin_ranking_loss_str(input1._ptr, input2._ptr, target._ptr, _red_text(_RED_WORDS[red], margin=margin)))


def _loss_text(reduction, **options):
    """The option text of the tn_loss_fn_opts losses' _str forms: reduction and numbers."""
    red = f"reduction='{reduction}'".encode()
    return red + b", " + _num_text(**options) if options else red


def _red_word(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("soft_margin_loss", input=input, target=target)
    red = _red_word(reduction, size_average, reduce)
    return _wrap(lib.tn_soft_margin_loss_str(input._ptr, target._ptr, _loss_text(red)))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("multilabel_soft_margin_loss", input=input, target=target)
    red = _red_word(reduction, size_average, reduce)
    return _wrap(lib.tn_multilabel_soft_margin_loss_str(input._ptr, target._ptr, _opt(weight), _loss_text(red)))


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("multilabel_margin_loss", input=input, target=target)
    red = _red_word(reduction, size_average, reduce)
    return _wrap(lib.tn_multilabel_margin_loss_str(input._ptr, target._ptr, _loss_text(red)))


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("hinge_embedding_loss", input=input, target=target)
    red = _red_word(reduction, size_average, reduce)
    margin = _float(margin, "hinge_embedding_loss", "margin")
    return _wrap(lib.tn_hinge_embedding_loss_str(input._ptr, target._ptr, _loss_text(red, margin=margin)))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("multi_margin_loss", input=input, target=target)
    red = _red_word(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    margin = _float(margin, "multi_margin_loss", "margin")
    return _wrap(lib.tn_multi_margin_loss_str(input._ptr, target._ptr, _opt(weight), _loss_text(red, p=p, margin=margin)))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if not (isinstance(anchor, Tensor) and isinstance(positive, Tensor) and isinstance(negative, Tensor)):
        _check("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    red = _red_word(reduction, size_average, reduce)
    text = _loss_text(red, margin=_float(margin, "triplet_margin_loss", "margin"), p=_float(p, "triplet_margin_loss", "p"),
                      eps=_float(eps, "triplet_margin_loss", "eps"), swap=bool(swap))
    return _wrap(lib.tn_triplet_margin_loss_str(anchor._ptr, positive._ptr, negative._ptr, text))


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """PyTorch 2.x's Python composite (the distance is any Python callable); the C library's
    tn_triplet_margin_with_distance_loss is its C form."""
    if not (isinstance(anchor, Tensor) and isinstance(positive, Tensor) and isinstance(negative, Tensor)):
        _check("triplet_margin_with_distance_loss", anchor=anchor, positive=positive, negative=negative)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    distance_function = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(distance_function(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("gaussian_nll_loss", input=input, target=target)
    if isinstance(var, numbers.Real) and not isinstance(var, bool):   # a float var (PyTorch 2.x)
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = full(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    elif not isinstance(var, Tensor):
        _check("gaussian_nll_loss", var=var)
    if tuple(var.shape) != tuple(input.shape):
        if not (tuple(input.shape[:-1]) == tuple(var.shape)
                or (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.ndim and var.shape[-1] == 1)):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if var.numel() and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    return _wrap(lib.tn_gaussian_nll_loss_str(input._ptr, target._ptr, var._ptr,
                                              _loss_text(reduction, full=bool(full), eps=_float(eps, "gaussian_nll_loss", "eps"))))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        _check("poisson_nll_loss", input=input, target=target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _wrap(lib.tn_poisson_nll_loss_str(input._ptr, target._ptr,
                                             _loss_text(reduction, log_input=bool(log_input), full=bool(full),
                                                        eps=_float(eps, "poisson_nll_loss", "eps"))))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    if not (isinstance(log_probs, Tensor) and isinstance(targets, Tensor)):
        _check("ctc_loss", log_probs=log_probs, targets=targets)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")

    def lengths(v, arg):
        if isinstance(v, Tensor):
            return v
        if isinstance(v, (list, tuple)):
            return tensor([_int(x, "ctc_loss", arg) for x in v], dtype=int64)
        return tensor(_int(v, "ctc_loss", arg), dtype=int64)
    il, tl = lengths(input_lengths, "input_lengths"), lengths(target_lengths, "target_lengths")
    text = f"blank={_int(blank, 'ctc_loss', 'blank')}, reduction='{reduction}', zero_infinity={bool(zero_infinity)}"
    return _wrap(lib.tn_ctc_loss_str(log_probs._ptr, targets._ptr, il._ptr, tl._ptr, text.encode()))


# --------------------------------------------------------------------------- multi-head attention
# Written with nn.MultiheadAttention (rnn_modules.py), which also uses it; imported last, as
# that module imports this one.
from .rnn_modules import multi_head_attention_forward  # noqa: E402,F401
__all__.append("multi_head_attention_forward")
