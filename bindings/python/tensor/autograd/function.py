"""torch.autograd.Function over tn_custom_op ("extending torch.autograd").

    class Exp(tn.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)            # y.grad_fn is <ExpBackward>, as in PyTorch

As in PyTorch: ``forward`` runs under no_grad and gets the arguments of ``apply`` as
they are (tensor or not); ``ctx.save_for_backward``, ``ctx.saved_tensors``,
``ctx.needs_input_grad``, ``ctx.mark_non_differentiable`` and any attribute set on ctx
work; ``backward`` gets the output's gradient and returns one gradient (or None) per
argument of ``forward``, and runs with grad mode on under ``create_graph``, so a
backward written with tensor ops is itself differentiable.

Several outputs: ``forward`` may return a tuple; its floating tensors (those not marked
non-differentiable) travel through the one C node packed into one flat tensor, and
``apply`` returns views of it, so ``backward`` gets one gradient per output (zeros for
the non-differentiable tensors, None for values that are not tensors), as in PyTorch;
the outputs' grad_fn is then the view's node, behind which ``<Class>Backward`` sits.

Differences, from the C op: ``ctx.mark_dirty`` (in-place Functions)
is not supported; gradients are always materialized (``set_materialize_grads`` is
accepted and has no effect). A tensor saved with ``save_for_backward`` is detached
from the result when it is the output itself, so a backward that reads the saved
output is first-order only; save the input instead when double backward matters.

Lifetime: only tensor arguments go to C; the per-call Python ``ctx`` lives in
``_contexts`` under the ``user`` key C hands back to the callbacks. The node also
keeps an empty sentinel tensor from ``tn_from_blob`` whose deleter fires when C frees
the node's saved tensors (after a backward without retain_graph, or when the graph
dies), which is exactly when the backward can no longer run: then ctx is dropped, so
nothing leaks. ``apply`` pins the class's node name (``<Class>Backward``) for the
process, as C keeps the pointer.
"""
import ctypes
import itertools

from .. import _C
from .._C import lib
from .._core import Tensor, _borrow, _i64, _ptrs, _raise, _wrap
from .._core import _callback as _core_callback
from . import _call, _fail, _graveyard, _keep, _pending, _purge

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_contexts = {}            # apply's key (C's `user`) -> FunctionCtx, while the node can run
_keys = itertools.count(1)
_names = {}               # Function subclass -> bytes kept for the process (C keeps the pointer)
_SENTINEL_DATA = ctypes.c_double(0.0)

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
          "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
          "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
          "or if you need to access saved tensors after calling backward.")


@_C.DELETER
def _node_released(data, key):
    """The sentinel's storage is gone: C freed the node's saved tensors. Drop ctx later
    (not here, inside C's release loop)."""
    try:
        ctx = _contexts.pop(key, None)
        if ctx is not None:
            ctx._ptr = None
            ctx._freed = True
            _graveyard.append(ctx)
    except Exception:  # interpreter shutdown
        pass


ctypes.pythonapi.Py_IncRef(ctypes.py_object(_node_released))     # immortal: C may call it at any time


class FunctionCtx:
    """The ``ctx`` of a Function call. Arbitrary attributes may be set on it."""

    def __init__(self):
        self._ptr = None            # the C node (tn_ctx *) while forward/backward run
        self._freed = False
        self._saved = ()
        self._non_diff = []
        self._in_forward = False
        self.needs_input_grad = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        if not self._in_forward:
            raise RuntimeError("save_for_backward can only be called from the forward of a Function")
        idx = []
        for i, t in enumerate(tensors):
            if t is None:
                idx.append(None)
                continue
            if not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
            if lib.tn_ctx_save(self._ptr, t._ptr) < 0:
                _raise()
            idx.append(lib.tn_ctx_nsaved(self._ptr) - 1)
        self._saved = tuple(idx)

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(_FREED)
        if self._ptr is None:
            return tuple(None for _ in self._saved)
        out = []
        for i in self._saved:
            if i is None:
                out.append(None)
                continue
            p = lib.tn_ctx_saved(self._ptr, i)       # borrowed
            if not p:
                _raise()
            out.append(_borrow(p))
        return tuple(out)

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *outputs):
        self._non_diff.extend(outputs)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors):
        raise NotImplementedError("ctx.mark_dirty: in-place autograd.Functions are not supported by tn_custom_op")


def _pack(ctx, name, outs):
    """Several outputs through tn_custom_op's one result: the differentiable ones (floating,
    not marked non-differentiable) flattened into one 1-d tensor that C makes the node's
    result; apply hands out views of it, so each output's gradient reaches the node as a
    slice of one gradient, which backward cuts back into one per output. ctx._multi
    describes each output: ("pack", offset, numel, shape, dtype), ("zeros", shape, dtype)
    for a non-differentiable tensor, ("none",) for a value that is not a tensor."""
    from .._core import zeros
    from .._ops import cat
    non_diff = ctx._non_diff
    diff = [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point
            and not any(o is n for n in non_diff)]
    common = max((o.dtype for o in diff), key=lambda d: d.itemsize, default=None)
    meta, vals, parts, offset = [], [], [], 0
    for o in outs:
        if any(o is d for d in diff):
            n = o.numel()
            meta.append(("pack", offset, n, tuple(o.shape), o.dtype))
            parts.append(o.reshape(-1) if o.dtype == common else o.reshape(-1).to(common))
            offset += n
            vals.append(None)
        elif isinstance(o, Tensor):
            meta.append(("zeros", tuple(o.shape), o.dtype, o.device))
            vals.append(o.detach())
        else:
            meta.append(("none",))
            vals.append(o)
    ctx._multi, ctx._multi_values = meta, vals
    if not parts:
        return zeros(0)
    return parts[0].contiguous() if len(parts) == 1 else cat(parts)


def _unpack(ctx, grad):
    """The gradient of _pack's result, as one gradient per output of forward."""
    from .._core import zeros
    grads = []
    for m in ctx._multi:
        if m[0] == "pack":
            g = grad.narrow(0, m[1], m[2]).view(m[3])
            grads.append(g if g.dtype == m[4] else g.to(m[4]))
        elif m[0] == "zeros":
            grads.append(zeros(m[1], dtype=m[2], device=m[3]))
        else:
            grads.append(None)
    return grads


@_C.CUSTOM_FORWARD
@_core_callback
def _forward_trampoline(ctx_ptr, inputs, n, key):
    if _pending():
        return None
    try:
        ctx = _contexts[key]
        ctx._ptr = ctx_ptr
        # the sentinel whose release tells us the node let go of its saved tensors
        shp, nd = _i64([0])
        st, _ = _i64([1])
        s = _wrap(lib.tn_from_blob(ctypes.addressof(_SENTINEL_DATA), shp, nd, st, _C.F64, _node_released, key))
        if lib.tn_ctx_save(ctx_ptr, s._ptr) < 0:
            _raise()
        del s
        ctx._armed = True
        index = ctx._tensor_index
        ctx.needs_input_grad = tuple(bool(lib.tn_ctx_needs_grad(ctx_ptr, index[i])) if i in index else False
                                     for i in range(ctx._nargs))
        cls, args = ctx._cls, ctx._args
        ctx._args = None            # ctx outlives forward: it must not pin the inputs
        ctx._in_forward = True
        try:
            out = cls.forward(ctx, *args)
        finally:
            ctx._in_forward = False
        if isinstance(out, (tuple, list)) and len(out) != 1:
            out = _pack(ctx, cls.__name__, out)
        elif isinstance(out, (tuple, list)):
            ctx._tuple_out = True
            out = out[0]
        if not isinstance(out, Tensor):
            raise TypeError(f"{cls.__name__}.forward must return a Tensor, got {type(out).__name__}")
        ctx._out_non_diff = any(o is out for o in ctx._non_diff)
        ctx._non_diff = []
        _keep(out)                  # C makes its result from it before we let it go
        return out._ptr
    except BaseException as e:
        _fail(e)
        return None


@_C.CUSTOM_BACKWARD
@_core_callback
def _backward_trampoline(ctx_ptr, grad_ptr, grad_inputs, n, key):
    if _pending():
        return -1
    try:
        ctx = _contexts.get(key)
        if ctx is None:
            raise RuntimeError(_FREED)
        ctx._ptr = ctx_ptr
        name = ctx._cls.__name__ + "Backward"
        grad = _borrow(grad_ptr)
        res = ctx._cls.backward(ctx, *(_unpack(ctx, grad) if ctx._multi else (grad,)))
        if not isinstance(res, tuple):
            res = (res,)
        nargs = ctx._nargs
        if len(res) != nargs:
            if len(res) > nargs and all(r is None for r in res[nargs:]):
                res = res[:nargs]
            else:
                raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                                   f"(expected {nargs}, got {len(res)})")
        for i, r in enumerate(res):
            k = ctx._tensor_index.get(i)
            if k is None:
                if r is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if r is None:
                continue
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__}): function {name} "
                                   f"returned it as the gradient at position {i + 1}")
            _keep(r)                # the engine retains it after we return
            grad_inputs[k] = r._ptr
        return 0
    except BaseException as e:
        _fail(e)
        return -1


ctypes.pythonapi.Py_IncRef(ctypes.py_object(_forward_trampoline))
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_backward_trampoline))


class Function:
    """Base class of custom differentiable operations (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. "
                           "Please use new-style autograd function with static forward method. "
                           "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def vjp(cls, ctx, *grad_outputs):
        return cls.backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args):
        _purge()
        name = _names.get(cls)
        if name is None:
            name = _names[cls] = (cls.__name__ + "Backward").encode()
        tensors, index = [], {}
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                index[i] = len(tensors)
                tensors.append(a)
        ctx = FunctionCtx()
        ctx._cls, ctx._args, ctx._nargs, ctx._tensor_index = cls, args, len(args), index
        ctx._armed = ctx._tuple_out = ctx._out_non_diff = False
        ctx._multi = ctx._multi_values = None
        key = next(_keys)
        _contexts[key] = ctx
        ptrs = _ptrs(tensors)
        try:
            p = _call(lib.tn_custom_op, name, _forward_trampoline, _backward_trampoline, ptrs, len(tensors), key)
        finally:
            ctx._args = None
            if not ctx._armed:      # forward never ran: no sentinel will ever release ctx
                _contexts.pop(key, None)
        out = _wrap(p)
        if ctx._multi:
            vals, ctx._multi_values = ctx._multi_values, None        # ctx must not pin the outputs
            return tuple(v if m[0] != "pack" else _view_of(out, m) for m, v in zip(ctx._multi, vals))
        if ctx._out_non_diff:
            out = out.detach()
        return (out,) if ctx._tuple_out else out


def _view_of(packed, m):
    v = packed.narrow(0, m[1], m[2]).view(m[3])
    return v if v.dtype == m[4] else v.to(m[4])


class _DelayedError(Function):
    """Identity whose backward raises: what once_differentiable puts after a backward
    that ran without recording, so a double backward fails instead of being wrong."""

    @staticmethod
    def forward(ctx, x, msg):
        ctx.msg = msg
        return x

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError(ctx.msg)


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable: run backward under no_grad; a double
    backward through it raises."""
    import functools
    from . import no_grad, is_grad_enabled

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        record = is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            outputs = fn(ctx, *args)
        if not record:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        msg = "trying to differentiate twice a function that was marked with @once_differentiable"
        # as PyTorch: each output becomes a fresh leaf that requires grad, behind a node that raises
        outs = tuple(_DelayedError.apply(o.detach().requires_grad_(), msg)
                     if isinstance(o, Tensor) and o.dtype.is_floating_point else o for o in outs)
        return outs[0] if single else outs
    return wrapper
