"""torch.distributions.utils: the helpers the distributions and transforms share."""
from functools import update_wrapper

from . import broadcast_all, probs_to_logits, logits_to_probs, _t, _EULER

__all__ = ["broadcast_all", "probs_to_logits", "logits_to_probs", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = _EULER


def _sum_rightmost(value, dim):
    """value summed over its `dim` rightmost dimensions (dim 0: value itself)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def clamp_probs(probs):
    eps = _t().finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


class lazy_property:
    """A property computed on first read (with grad enabled, as torch) and then stored on the instance."""
    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with _t().enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class attribute reads as: a property, so that argument validation skips it."""
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag):
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    a = _t().arange(n)
    return a < a.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (at and below diagonal `diag`) of D x D matrices, in row order."""
    return mat[..., _tril_mask(mat.shape[-1], diag)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a D x D lower-triangular matrix from its row-ordered entries."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = _t().finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mask = _tril_mask(n, diag)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., mask] = vec
    return mat
