"""Debugging helpers for the autograd graph (tensor.h's tn_graph_dot, tn_set_name).

    w = tn.randn(3, requires_grad=True)
    tn.autograd.graph.set_name(w, "w")
    loss = (w * 2).sum()
    print(tn.autograd.graph.to_dot(loss))     # Graphviz: dot -Tpng

Names are tensor.h's debugging labels, shown in the DOT dump. They are not PyTorch's
named tensors (``Tensor.names``), and ``Tensor.name`` is not used for them because
PyTorch's ``Tensor.name`` is a different, read-only attribute.
"""
import ctypes

from .._C import lib
from .._core import Tensor, _check_int, _raise

__all__ = ["to_dot", "set_name", "get_name"]


def _tensor(t):
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    return t


def set_name(tensor, name):
    """Label ``tensor`` (None removes the label); returns the tensor."""
    _check_int(lib.tn_set_name(_tensor(tensor)._ptr, None if name is None else str(name).encode()))
    return tensor


def get_name(tensor):
    s = lib.tn_get_name(_tensor(tensor)._ptr)
    return None if s is None else s.decode()


def to_dot(tensor):
    """The graph behind ``tensor`` in Graphviz DOT: one box per node (its grad_fn name),
    one ellipse per leaf (its name and shape), edges in data-flow direction."""
    p = lib.tn_graph_dot(_tensor(tensor)._ptr)
    if not p:
        _raise()
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.tn_string_free(p)
