"""nn.Parameter: a Tensor subclass that Module registers as a parameter.

``Parameter(data)`` is a new leaf sharing ``data``'s storage (tn_detach), with
``requires_grad=True`` unless told otherwise, as torch's ``_make_subclass``. Ops on a
Parameter return plain Tensors, as in torch (its ``__torch_function__`` is disabled).
"""
from .._C import lib
from .._core import Tensor, _own, empty

__all__ = ["Parameter", "is_lazy"]


class Parameter(Tensor):
    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        t = object.__new__(cls)
        t._ptr = _own(lib.tn_detach(data._ptr))
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass                      # everything happens in __new__ (Tensor.__init__ must not run)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach().clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


def is_lazy(param):
    return False
