"""torch.nn.utils: gradient clipping, flat parameter vectors, and ``rnn`` (PackedSequence).

clip_grad_norm_ / clip_grad_value_ call tn_clip_grad_norm_ / tn_clip_grad_value_ (C
section 13); clip_grad_norm_ with error_if_nonfinite=True, which must check the norm
before clipping, runs torch 1.13's code over tensor ops.
"""
import math

from ..._C import lib
from ..._core import Tensor, _check_int, _ptrs, _raise, tensor
from ..._ops import FUNCTIONS as _F
from ...autograd import no_grad
from . import rnn  # noqa: F401
from . import parametrize, parametrizations  # noqa: F401
from .weight_norms import weight_norm, remove_weight_norm, spectral_norm, remove_spectral_norm  # noqa: F401

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "rnn", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
           "parametrize", "parametrizations"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    # foreach only picks PyTorch's kernels (same results): accepted, as the C library's .foreach
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    params = [p for p in parameters if p.grad is not None]
    grads = [p.grad for p in params]
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if len(grads) == 0:
        return tensor(0.0)
    if not error_if_nonfinite:
        lib.tn_clear_error()
        total = lib.tn_clip_grad_norm__str(_ptrs(params), len(params), max_norm, f"norm_type={norm_type!r}".encode())
        if total != total and lib.tn_last_error():
            _raise()
        return tensor(total, dtype=grads[0].dtype)
    with no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max() for g in grads]
            total_norm = norms[0] if len(norms) == 1 else _F["stack"](norms).max()
        else:
            total_norm = _F["stack"]([g.detach().norm(norm_type) for g in grads]).norm(norm_type)
        if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot "
                "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`")
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for g in grads:
            g.detach().mul_(clip_coef_clamped.to(g.dtype))
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    import warnings
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.",
                  stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    params = list(parameters)
    _check_int(lib.tn_clip_grad_value_(_ptrs(params), len(params), clip_value))


def parameters_to_vector(parameters):
    return _F["cat"]([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    with no_grad():
        for param in parameters:
            n = param.numel()
            param.copy_(vec[pointer:pointer + n].view_as(param))
            pointer += n
