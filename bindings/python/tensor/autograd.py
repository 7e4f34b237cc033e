"""Autograd entry points. The engine lives in tensor.h (section 11, issue: autograd);
until it lands these are the PyTorch names with no-op behaviour, and requires_grad=True
raises. They call tn_no_grad_begin/tn_no_grad_end when the library exports them."""
import functools

from . import _C
from ._C import lib

_enabled = [True]


class _GradMode:
    def __init__(self, enabled):
        self._target = enabled

    def __enter__(self):
        self._prev = _enabled[0]
        _set(self._target)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        target = self._target

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with _GradMode(target):
                return fn(*a, **k)
        return wrapper


def _set(enabled):
    if enabled == _enabled[0]:
        return
    if _C.has("tn_no_grad_begin") and _C.has("tn_no_grad_end"):
        (lib.tn_no_grad_end if enabled else lib.tn_no_grad_begin)()
    _enabled[0] = enabled


class no_grad(_GradMode):
    def __init__(self):
        super().__init__(False)


class enable_grad(_GradMode):
    def __init__(self):
        super().__init__(True)


class set_grad_enabled(_GradMode):
    def __init__(self, mode):
        super().__init__(bool(mode))


def is_grad_enabled():
    return _enabled[0]
