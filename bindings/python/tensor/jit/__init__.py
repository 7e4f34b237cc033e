"""torch.jit's tracing front: a module or function captured as a graph, replayed, saved.

``trace(module_or_fn, example_inputs)`` runs the forward once through C's ``tn_jit_trace``
(the C library records every op where autograd records it, so Python layers, which call
the C ops, are captured like C ones) and returns a :class:`ScriptModule`: callable,
with ``.graph`` (printable, torch.jit's form), ``.save(path)``; ``load(path)`` reads one
back (a safetensors file: the constants plus the graph text; loading runs no code).

As torch.jit.trace, control flow is frozen as traced. A forward that reads a tensor's
values into Python (``.item()``, ``bool(t)``, ``.tolist()``) takes a data-dependent path:
``trace`` warns (torch's TracerWarning), ``script`` refuses with an error. ``script``
is trace on the first call's inputs (one graph per input signature), since there is no
TorchScript compiler here. ``ignore`` and ``unused`` are accepted and do nothing (the
decorated methods run as Python).
"""
import ctypes
import os
import warnings

from .. import _C
from .._C import lib
from .. import _core
from .._core import Tensor, _borrow, _ptrs, _raise, _wrap
from .._core import _callback as _core_callback
from ..autograd import _call, _fail, _keep, _pending

__all__ = ["trace", "script", "load", "save", "freeze", "optimize_for_inference", "ScriptModule", "ignore", "unused",
           "TracerWarning", "Error"]


class TracerWarning(Warning):
    """torch.jit.TracerWarning: the trace may not generalise to other inputs."""


class Error(RuntimeError):
    """torch.jit.Error."""


class _Trace:
    __slots__ = ("func", "args", "positions", "strict", "what")


_traces = {}
_next_key = [0]


def _reading(state):
    def hook(what):
        if state.strict:
            raise Error(f"tensor.jit.script: the forward reads a tensor's value into Python ({what}): data-dependent "
                        "control flow cannot be captured by tracing, and there is no TorchScript compiler here; "
                        "use tensor.jit.trace (which freezes the path taken) or write the forward without it")
        warnings.warn(f"tensor.jit.trace: the forward reads a tensor's value into Python ({what}); the graph "
                      "follows the path taken for the example inputs and may be wrong for other inputs", TracerWarning,
                      stacklevel=3)
    return hook


@_C.GRADCHECK_FN   # tn_jit_trace_fn has gradcheck's prototype: tn_tensor *(*)(tn_tensor *const *, int, void *)
@_core_callback
def _trace_trampoline(inputs, n, key):
    if _pending():
        return None
    st = _traces[key]
    previous = _core._data_read_hook[0]
    _core._data_read_hook[0] = _reading(st)
    try:
        args = list(st.args)
        for i in range(n):
            args[st.positions[i]] = _borrow(inputs[i])
        out = st.func(*args)
        if isinstance(out, (tuple, list)) and len(out) == 1:
            out = out[0]
        if not isinstance(out, Tensor):
            raise TypeError(f"{st.what}: the forward must return one Tensor, got {type(out).__name__} "
                            "(several outputs are not captured yet)")
        _keep(out)
        return out._ptr
    except BaseException as e:
        _fail(e)
        return None
    finally:
        _core._data_read_hook[0] = previous


_C.ctypes.pythonapi.Py_IncRef(_C.ctypes.py_object(_trace_trampoline))


def _names_dict(module):
    """A C dict of the module's parameters and buffers by name (the graph's constant names)."""
    d = lib.tn_dict_new()
    if not d:
        _raise()
    if module is not None:
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if isinstance(t, Tensor) and lib.tn_dict_set(d, name.encode(), t._ptr) != 0:
                lib.tn_dict_free(d)
                _raise()
    return d


class _Graph:
    """ScriptModule.graph: prints as torch.jit's graph (``print(traced.graph)``)."""
    __slots__ = ("_owner",)

    def __init__(self, owner):
        self._owner = owner

    def __str__(self):
        p = lib.tn_graph_str(self._owner._handle())
        if not p:
            _raise()
        try:
            return ctypes.string_at(p).decode()
        finally:
            lib.tn_string_free(p)

    __repr__ = __str__

    def nodes(self):
        """The op names of the nodes, in order ("aten::conv2d", ...)."""
        g = self._owner._handle()
        return [lib.tn_graph_node_op(g, i).decode() for i in range(lib.tn_graph_num_nodes(g))]


class ScriptModule:
    """What trace/script/load return: call it like the module it was traced from."""

    def __init__(self, graph=None, original=None, name="ScriptModule"):
        self._g = graph
        self._original = original   # keeps the traced module's parameters alive (the graph shares them)
        self._name = name
        self._by_signature = None   # script: graphs per input signature, traced on first call
        self.training = False

    def _handle(self):
        if not self._g:
            raise Error("tensor.jit: this scripted module has not been called yet: its graph is traced on the first call")
        return self._g

    def __del__(self):
        by_sig = getattr(self, "_by_signature", None)
        graphs = list(by_sig.values()) if by_sig is not None else [getattr(self, "_g", None)]   # script: _g is one of them
        self._g = None
        for h in graphs:
            if h and lib is not None:
                lib.tn_graph_free(h)

    @property
    def graph(self):
        return _Graph(self)

    @property
    def inlined_graph(self):
        return self.graph

    @property
    def code(self):
        return str(self.graph)

    def __call__(self, *inputs):
        if self._by_signature is not None:
            sig = tuple((tuple(x.shape), str(x.dtype)) if isinstance(x, Tensor) else repr(x) for x in inputs)
            g = self._by_signature.get(sig)
            if g is None:
                g = self._by_signature[sig] = _trace_handle(self._original, inputs, strict=True, what="tensor.jit.script")
            self._g = g
        g = self._handle()
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise TypeError(f"{self._name}: input {i} is {type(x).__name__}; a traced graph takes Tensors")
        n = lib.tn_graph_num_outputs(g)
        outs = (ctypes.c_void_p * max(n, 1))()
        if lib.tn_graph_run(g, _ptrs(list(inputs)), len(inputs), outs, n) < 0:
            _raise()
        res = [_wrap(outs[i]) for i in range(n)]
        return res[0] if n == 1 else tuple(res)

    forward = __call__

    def save(self, f):
        """Write the graph and its constants to path f (atomically: a failed save keeps an old file)."""
        path = os.fspath(f)
        if lib.tn_graph_save(self._handle(), path.encode()) != 0:
            _raise()

    def eval(self):
        return self

    def train(self, mode=True):
        if mode:
            raise Error("tensor.jit: a traced graph is captured in eval mode; training mode is not captured")
        return self

    def __repr__(self):
        return f"{self._name}(original_name={self._name})"


def _trace_handle(func, example_inputs, strict, what):
    from ..nn import Module
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    args = list(example_inputs)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not positions:
        raise ValueError(f"{what}: example_inputs must contain at least one Tensor")
    module = func if isinstance(func, Module) else getattr(func, "__self__", None)
    module = module if isinstance(module, Module) else None
    st = _Trace()
    st.func, st.args, st.positions, st.strict, st.what = func, args, positions, strict, what
    _next_key[0] += 1
    key = _next_key[0]
    _traces[key] = st
    names = _names_dict(module)
    try:
        g = _call(lib.tn_jit_trace, _trace_trampoline, key, _ptrs([args[i] for i in positions]), len(positions), names)
    finally:
        del _traces[key]
        lib.tn_dict_free(names)
    if not g:
        _raise()
    return g


def trace(func, example_inputs=None, *args, check_trace=True, strict=True, example_kwarg_inputs=None, **kwargs):
    """torch.jit.trace: run func (a Module or a function) on example_inputs and capture its ops.
    A Module should be in eval mode (batch norm in training mode is refused)."""
    from ..nn import Module
    if example_kwarg_inputs is not None:
        raise NotImplementedError("tensor.jit.trace: example_kwarg_inputs is not supported; pass example_inputs")
    if example_inputs is None:
        raise ValueError("tensor.jit.trace: example_inputs is required")
    g = _trace_handle(func, example_inputs, strict=False, what="tensor.jit.trace")
    name = type(func).__name__ if isinstance(func, Module) else getattr(func, "__name__", "function")
    return ScriptModule(g, original=func, name=name)


def script(obj, *args, **kwargs):
    """torch.jit.script for modules and functions without data-dependent control flow: the
    forward is traced on each new input signature at its first call; a forward that reads
    tensor values into Python raises tensor.jit.Error."""
    from ..nn import Module
    if isinstance(obj, ScriptModule):
        return obj
    if not callable(obj):
        raise TypeError(f"tensor.jit.script: expected a Module or a function, got {type(obj).__name__}")
    sm = ScriptModule(None, original=obj, name=type(obj).__name__ if isinstance(obj, Module) else getattr(obj, "__name__", "function"))
    sm._by_signature = {}
    return sm


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze: the graph's parameters become constants and it is optimised
    (tn_graph_optimize: constant folding, eval batch norm folded into conv / linear, dead
    code). Here the ScriptModule's graph is rewritten in place and returned: later changes
    to the original module's parameters no longer reach it."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if lib.tn_graph_optimize(mod._handle()) < 0:
        _raise()
    return mod


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: freeze (above); replays under no_grad also run
    activations in place and free intermediates after their last use."""
    return freeze(mod)


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: a ScriptModule from a file tensor.jit's save wrote."""
    if map_location not in (None, "cpu") and str(map_location) != "cpu":
        raise NotImplementedError("tensor.jit.load: graphs load on the CPU")
    path = os.fspath(f)
    g = lib.tn_graph_load(path.encode())
    if not g:
        _raise()
    return ScriptModule(g, name="RecursiveScriptModule")


def save(m, f, _extra_files=None):
    """torch.jit.save(m, f)."""
    if not isinstance(m, ScriptModule):
        raise TypeError(f"tensor.jit.save: expected a ScriptModule, got {type(m).__name__}")
    m.save(f)


def ignore(drop=False, **kwargs):
    """torch.jit.ignore: accepted; the function runs as Python (as everything here)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """torch.jit.unused: accepted, a no-op."""
    return fn


def is_scripting():
    return False


def is_tracing():
    return _core._data_read_hook[0] is not None
