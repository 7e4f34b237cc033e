"""torch.autograd's Python surface over tensor.h's engine (section 11).

Laid out as torch.autograd: this module has grad mode, ``backward``, ``grad``, hooks and
the autograd attributes of ``Tensor``; ``function`` has ``Function`` (over
``tn_custom_op``), ``gradcheck`` has ``gradcheck``/``gradgradcheck``, ``anomaly_mode``
has ``detect_anomaly``/``set_detect_anomaly``, and ``graph`` has the debugging helpers
(``to_dot``, ``set_name``, ``get_name``).

Grad mode lives in C (per thread, nesting): no_grad / enable_grad / set_grad_enabled
push and pop it with tn_no_grad_begin/end and tn_enable_grad_begin/end.

C calls Python back (tensor hooks, Function.forward/backward, gradcheck's function).
Every such callback goes through an immortal ctypes trampoline, and every C call that
can reach one goes through ``_call``, which enforces two rules:

- An exception cannot cross C. The trampoline stores it in the thread-local
  ``_tls.error`` and returns NULL or -1 to C; ``_call`` re-raises it once the C call
  has returned. While an error is pending, later callbacks of the same call return at
  once.
- The engine runs callbacks inside a C scope. Tensors C hands a callback are borrowed
  (``_borrow`` takes one reference for the Python object). A tensor a callback hands
  back must outlive the callback until C has taken its own reference, so the
  trampoline appends it to the thread's keep list, which ``_call`` trims when the C
  call returns.
"""
import functools
import itertools
import threading

from .. import _C
from .._C import lib
from .._core import Tensor, _bool, _borrow, _check_int, _ptrs, _raise, _scope_depth, _wrap
from .._core import _callback as _core_callback

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_inference_mode_enabled",
           "is_grad_enabled", "grad",
           "backward", "Function", "Variable", "gradcheck", "gradgradcheck", "GradcheckError", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled"]


# --------------------------------------------------------------------------- C calls that run Python
_tls = threading.local()
_graveyard = []     # Function contexts whose C node let go of them, dropped at the next safe point


def _keep(t):
    """Hold t until the current C call returns (a tensor a callback hands back to C)."""
    k = getattr(_tls, "keep", None)
    if k is None:
        k = _tls.keep = []
    k.append(t)


def _pending():
    """True when a callback of the current C call has already failed."""
    return getattr(_tls, "error", None) is not None


def _fail(exc):
    """Record an exception raised inside a callback (the first one wins)."""
    if getattr(_tls, "error", None) is None:
        _tls.error = exc


def _purge():
    if _graveyard and not _scope_depth():
        _graveyard.clear()


def _call(f, *args):
    """Call a C function that may run Python callbacks; re-raise what they raised."""
    keep = getattr(_tls, "keep", None)
    if keep is None:
        keep = _tls.keep = []
    mark = len(keep)
    outer, _tls.error = getattr(_tls, "error", None), None
    try:
        r = f(*args)
    finally:
        err, _tls.error = _tls.error, outer
        del keep[mark:]
    if err is not None:
        raise err
    _purge()
    return r


# --------------------------------------------------------------------------- grad mode
def is_grad_enabled():
    return bool(lib.tn_is_grad_enabled())


class _GradMode:
    """Context manager and decorator; enters ``enabled`` for its body."""

    def __init__(self, enabled):
        self._enabled = bool(enabled)
        self._depth = 0

    def __enter__(self):
        (lib.tn_enable_grad_begin if self._enabled else lib.tn_no_grad_begin)()
        self._depth += 1
        return self

    def __exit__(self, *exc):
        self._depth -= 1
        (lib.tn_enable_grad_end if self._enabled else lib.tn_no_grad_end)()
        return False

    def __call__(self, fn):
        mode = self.clone

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with mode():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return _GradMode(self._enabled)


class _NoParamMode(_GradMode):
    """no_grad / enable_grad: also a decorator without parentheses (``@torch.no_grad``),
    as PyTorch 2's (1.13 needs ``@torch.no_grad()``)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments (got {type(orig_func).__name__})")
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        super().__init__(self._mode)

    def clone(self):
        return type(self)()


class no_grad(_NoParamMode):
    _mode = False


class enable_grad(_NoParamMode):
    _mode = True


_inference = threading.local()      # per thread, as grad mode: the stack of inference_mode(mode) blocks


def is_inference_mode_enabled():
    stack = getattr(_inference, "stack", None)
    return bool(stack and stack[-1])


class inference_mode(_GradMode):
    """``with torch.inference_mode():`` / ``@torch.inference_mode()`` / ``@torch.inference_mode``:
    no graph is recorded (as no_grad) and is_inference_mode_enabled() is True in the body.
    inference_mode(False) turns the mode off and grad mode on for its body, as PyTorch's
    (c10::InferenceMode(false) is AutoGradMode(true)). The tensors made inside are ordinary
    tensors: PyTorch's inference tensors refuse later autograd use and in-place updates
    outside the mode; these do not."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)
        super().__init__(not self.mode)

    def __enter__(self):
        super().__enter__()
        stack = getattr(_inference, "stack", None)
        if stack is None:
            stack = _inference.stack = []
        stack.append(self.mode)
        return self

    def __exit__(self, *exc):
        _inference.stack.pop()
        return super().__exit__(*exc)

    def clone(self):
        return inference_mode(self.mode)


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` as a call switches grad mode for this thread until a
    matching ``set_grad_enabled`` call; as a ``with`` block it restores the mode on exit."""

    def __init__(self, mode):
        if mode is not True and mode is not False:
            raise TypeError(f"enabled must be a bool (got {type(mode).__name__})")
        super().__init__(mode)
        self._prev = is_grad_enabled()
        super().__enter__()          # takes effect immediately, as PyTorch's

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return super().__exit__(*exc)

    def __call__(self, fn):
        super().__exit__()           # the decorator form must not leave the mode switched
        return _GradMode(self._enabled)(fn)


# --------------------------------------------------------------------------- Variable
class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """The deprecated torch.autograd.Variable: ``Variable(t, requires_grad=True)`` is a new
    leaf sharing t's data (every Tensor is a Variable, as in PyTorch since 0.4)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from .._core import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            _requires_grad_(t, True)
        return t


# --------------------------------------------------------------------------- backward
def _tensor_seq(ts, what):
    """A Tensor or a sequence of Tensors as a list (PyTorch's RuntimeError otherwise)."""
    if isinstance(ts, Tensor):
        return [ts]
    try:
        ts = list(ts)
    except TypeError:
        raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(ts).__name__}") from None
    for t in ts:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all {what} have to be Tensors, but got {type(t).__name__}")
    return ts


def _grad_seq(gs):
    if isinstance(gs, (str, bytes)) or not hasattr(gs, "__iter__"):
        raise TypeError(f"gradients can be either Tensors or None, but got {type(gs).__name__}")
    gs = list(gs)
    for g in gs:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return gs


def _opts(retain_graph, create_graph, allow_unused=False, gradient=None):
    """A tn_autograd_opts (retain_graph None: -1, which C reads as create_graph's value)."""
    rg = -1 if retain_graph is None else int(bool(retain_graph))
    return _C.tn_autograd_opts(None if gradient is None else gradient._ptr, rg, bool(create_graph), bool(allow_unused))


def _run(call):
    """Run a C backward call (re-raising what a Python callback raised in it)."""
    rc = _call(call)
    if rc < 0:
        _raise()
    return rc


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: accumulate d(sum tensors . grad_tensors) into leaves' .grad."""
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported")
    tensors = _tensor_seq(tensors, "tensors")
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors] * len(tensors)
    _grad_seq(grad_tensors)
    for t, g in zip(tensors, grad_tensors):
        _run(lambda: lib.tn_backward_opts(t._ptr, _opts(retain_graph, create_graph, gradient=g)))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """torch.autograd.grad: the gradients of outputs with respect to inputs, as a tuple
    (None for an unused input with allow_unused=True); .grad is not touched."""
    outs = _tensor_seq(outputs, "outputs")
    ins = _tensor_seq(inputs, "inputs")
    if grad_outputs is None:
        gos = None
    else:
        gl = _grad_seq([grad_outputs] if isinstance(grad_outputs, Tensor) else grad_outputs)
        if any(g is None for g in gl):
            gl = [g if g is not None else o.new_ones(o.shape) for g, o in zip(gl, outs)]
        gos = _ptrs(gl)
    results = (_C.ctypes.c_void_p * len(ins))()
    op, ip = _ptrs(outs), _ptrs(ins)
    _run(lambda: lib.tn_autograd_grad_opts(op, len(outs), ip, len(ins), gos, results,
                                      _opts(retain_graph, create_graph, allow_unused)))
    return tuple(_wrap(results[i]) if results[i] else None for i in range(len(ins)))


# --------------------------------------------------------------------------- hooks
_hooks = {}
_hook_keys = itertools.count(1)


@_C.HOOK
@_core_callback
def _hook_trampoline(grad_ptr, user):
    if _pending():
        return None
    try:
        fn = _hooks.get(user)
        if fn is None:
            return None
        r = fn(_borrow(grad_ptr))
        if r is None:
            return None
        if not isinstance(r, Tensor):
            raise TypeError(f"a tensor hook must return a Tensor or None, got {type(r).__name__}")
        _keep(r)               # the engine retains the result after we return; hold it till then
        return r._ptr
    except BaseException as e:  # re-raised by _call once the C call returns
        _fail(e)
        return None


_C.ctypes.pythonapi.Py_IncRef(_C.ctypes.py_object(_hook_trampoline))   # immortal: C may call it at any time


class RemovableHandle:
    def __init__(self, tensor, handle, key):
        self._tensor, self._handle, self._key = tensor, handle, key

    def remove(self):
        if self._key in _hooks:
            lib.tn_remove_hook(self._tensor._ptr, self._handle)
            del _hooks[self._key]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _register_hook(t, fn):
    key = next(_hook_keys)
    _hooks[key] = fn
    h = lib.tn_register_hook(t._ptr, _hook_trampoline, key)
    if h < 0:
        del _hooks[key]
        _raise()
    return RemovableHandle(t, h, key)


# --------------------------------------------------------------------------- Tensor methods
def _requires_grad_(self, requires_grad=True):
    _check_int(lib.tn_requires_grad_(self._ptr, _bool(requires_grad, "requires_grad_", "requires_grad")))
    if requires_grad:
        graph._note_leaf(self)      # AccumulateGrad.variable is this object
    return self


def _requires_grad_set(self, value):
    if value is not True and value is not False:
        raise RuntimeError("requires_grad must be a bool")
    _requires_grad_(self, value)


def _grad_get(self):
    g = lib.tn_grad(self._ptr)      # borrowed: take our own reference
    return _borrow(g) if g else None


def _grad_set(self, value):
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
    _check_int(lib.tn_set_grad(self._ptr, None if value is None else value._ptr))


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    backward(self, gradient, retain_graph, create_graph, inputs)


Tensor.requires_grad_ = _requires_grad_
Tensor.requires_grad = property(lambda self: bool(lib.tn_requires_grad(self._ptr)),
                                _requires_grad_set)
Tensor.grad = property(_grad_get, _grad_set)
Tensor.is_leaf = property(lambda self: bool(lib.tn_is_leaf(self._ptr)))
Tensor.retain_grad = lambda self: _check_int(lib.tn_retain_grad(self._ptr)) and None
Tensor.retains_grad = property(lambda self: bool(lib.tn_retains_grad(self._ptr)))
Tensor.detach_ = lambda self: (_check_int(lib.tn_detach_(self._ptr)), self)[1]
Tensor.backward = _tensor_backward
Tensor.register_hook = _register_hook


# --------------------------------------------------------------------------- the rest of torch.autograd
from . import anomaly_mode, function, graph  # noqa: E402  (they use the plumbing above)
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: E402
from .function import Function  # noqa: E402
from .graph import Node  # noqa: E402

Tensor.grad_fn = property(graph._grad_fn)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402  (the function shadows the module, as in torch)
