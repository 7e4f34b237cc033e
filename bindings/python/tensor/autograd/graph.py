"""The autograd graph: its nodes as Python objects (``Node``, what ``Tensor.grad_fn``
and ``next_functions`` return, with PyTorch's hooks and metadata), and the debugging
helpers over tensor.h's tn_graph_dot and tn_set_name.

    w = tn.randn(3, requires_grad=True)
    tn.autograd.graph.set_name(w, "w")
    loss = (w * 2).sum()
    print(tn.autograd.graph.to_dot(loss))     # Graphviz: dot -Tpng

Names are tensor.h's debugging labels, shown in the DOT dump. They are not PyTorch's
named tensors (``Tensor.names``), and ``Tensor.name`` is not used for them because
PyTorch's ``Tensor.name`` is a different, read-only attribute.
"""
import ctypes
import weakref
from ctypes import byref, c_void_p

from .. import _C
from .._C import lib
from .._core import Tensor, _borrow, _callback, _check_int, _raise
from . import _fail, _hooks, _hook_keys, _hook_trampoline, _keep, _pending

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


# --------------------------------------------------------------------------- grad_fn objects
# PyTorch's Node (torch.autograd.graph.Node): what ``Tensor.grad_fn`` and
# ``next_functions`` return. Each wraps one C node and holds one reference to it
# (tn_grad_fn / tn_node_next give it; __del__ gives it back), so a node reached from
# Python outlives its tensors, as in PyTorch. A live C node has one Python object at a time
# (a weak registry by address), so ``y.grad_fn is y.grad_fn``; a Tensor keeps the object
# of its grad_fn, and a node the objects of its next_functions, so ``metadata`` set on
# them stays while they are reachable. Leaves get AccumulateGrad objects (one per leaf
# while alive), whose ``variable`` is the leaf.
__all__ += ["Node"]

_live = weakref.WeakValueDictionary()           # C node address -> its Node object
_accumulators = weakref.WeakValueDictionary()   # leaf address -> its AccumulateGrad object
_leaves = weakref.WeakValueDictionary()         # leaf address -> the Python tensor that set requires_grad
_classes = {}                                   # node name -> its Node subclass


class _Handle:
    """What register_hook / register_prehook return (torch.utils.hooks.RemovableHandle)."""

    def __init__(self, remove):
        self._remove = remove

    def remove(self):
        if self._remove is not None:
            self._remove()
            self._remove = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _check_hook_result(fn, r, n, what):
    """A node hook's result as a list of n Tensors or None (PyTorch's errors otherwise)."""
    if r is None:
        return None
    if not isinstance(r, (tuple, list)):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != n:
        raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of values "
                           f"(got {len(r)}, but expected {n})")
    for v in r:
        if v is not None and not isinstance(v, Tensor):
            raise TypeError(f"expected Variable or None (got {type(v).__name__}) from a {what}")
    return list(r)


def _prehook_adapter(fn):
    """A node pre-hook fn(grad_outputs) -> tuple or None, as a tensor hook of the result."""
    def hook(g):
        r = _check_hook_result(fn, fn((g,)), 1, "pre-hook")
        return None if r is None else r[0]
    return hook


@_C.NODE_HOOK
@_callback
def _post_trampoline(grad_inputs, n, grad_output, user):
    """tn_node_hook_fn: calls fn(grad_inputs, grad_outputs) and writes its replacements."""
    if _pending():
        return -1
    try:
        fn = _hooks.get(user)
        if fn is None:
            return 0
        gi = tuple(_borrow(grad_inputs[i]) if grad_inputs[i] else None for i in range(n))
        r = _check_hook_result(fn, fn(gi, (_borrow(grad_output),)), n, "post-hook")
        if r is not None:
            for i, v in enumerate(r):
                if v is not None:
                    _keep(v)               # the engine retains it after we return
                grad_inputs[i] = None if v is None else v._ptr
        return 0
    except BaseException as e:             # re-raised by _call once backward returns
        _fail(e)
        return -1


_C.ctypes.pythonapi.Py_IncRef(_C.ctypes.py_object(_post_trampoline))   # immortal: C may call it at any time


class Node:
    """A node of the autograd graph: ``name()``, ``next_functions`` ((node, 0) per input,
    None for an input without gradient), ``metadata`` (a dict), ``register_hook(fn)``
    (fn(grad_inputs, grad_outputs) after the node ran; may return new grad_inputs) and
    ``register_prehook(fn)`` (fn(grad_outputs) before it runs; may return new ones)."""
    __slots__ = ("_p", "_next", "_metadata", "__weakref__")

    def __init__(self):
        raise TypeError("Node objects come from Tensor.grad_fn and next_functions")

    def name(self):
        return lib.tn_node_name(self._p).decode()

    @property
    def next_functions(self):
        nxt = self._next
        if nxt is None:
            leaf = c_void_p()
            items = []
            for i in range(lib.tn_node_num_next(self._p)):
                child = lib.tn_node_next(self._p, i, byref(leaf))
                items.append((_node(child) if child else _accumulator(leaf.value) if leaf.value else None, 0))
            nxt = self._next = tuple(items)
        return nxt

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        key = next(_hook_keys)
        _hooks[key] = fn
        p = self._p
        h = lib.tn_node_register_hook(p, _post_trampoline, key)
        if h < 0:
            del _hooks[key]
            _raise()
        return _Handle(lambda: (lib.tn_node_remove_hook(p, h), _hooks.pop(key, None)) if self._p else None)

    def register_prehook(self, fn):
        key = next(_hook_keys)
        _hooks[key] = _prehook_adapter(fn)
        p = self._p
        h = lib.tn_node_register_prehook(p, _hook_trampoline, key)
        if h < 0:
            del _hooks[key]
            _raise()
        return _Handle(lambda: (lib.tn_node_remove_prehook(p, h), _hooks.pop(key, None)) if self._p else None)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def __del__(self, _release=lib.tn_node_release):
        p = getattr(self, "_p", None)
        if p:
            self._p = None
            try:
                _release(p)
            except Exception:          # interpreter shutdown
                pass


class AccumulateGrad(Node):
    """The node that accumulates a leaf's gradient into ``.grad`` (``variable``: the leaf).
    Its hooks are hooks of the leaf: a pre-hook sees (and may replace) the gradient before
    it is accumulated; a post-hook gets ((), (grad,)), as PyTorch's."""
    __slots__ = ("variable",)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    def register_prehook(self, fn):
        return self.variable.register_hook(_prehook_adapter(fn))

    def register_hook(self, fn):
        def post(g):
            _check_hook_result(fn, fn((), (g,)), 0, "post-hook")
        return self.variable.register_hook(post)

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"


def _node_class(name):
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (Node,), {"__slots__": (), "__module__": "builtins"})
    return cls


def _node(p):
    """The Node object of the C node p, taking the reference p carries."""
    n = _live.get(p)
    if n is not None and n._p == p:
        lib.tn_node_release(p)         # the object holds one already
        return n
    n = object.__new__(_node_class(lib.tn_node_name(p).decode()))
    n._p, n._next, n._metadata = p, None, None
    _live[p] = n
    return n


def _accumulator(leaf_ptr):
    a = _accumulators.get(leaf_ptr)
    if a is not None and a.variable._ptr == leaf_ptr:
        return a
    a = object.__new__(AccumulateGrad)
    a._p, a._next, a._metadata = None, (), None
    t = _leaves.get(leaf_ptr)
    a.variable = t if t is not None and t.__dict__.get("_ptr") == leaf_ptr else _borrow(leaf_ptr)
    _accumulators[leaf_ptr] = a
    return a


def _note_leaf(t):
    """Remember the Python object of a leaf that requires grad (AccumulateGrad.variable)."""
    _leaves[t._ptr] = t


def _grad_fn(self):
    """Tensor.grad_fn: None for a leaf, else the Node of its C node (kept on the tensor)."""
    ptr = self._ptr
    if lib.tn_is_leaf(ptr):
        return None
    p = lib.tn_grad_fn(ptr)
    cached = self.__dict__.get("_grad_fn_node")
    if cached is not None and cached._p == p:
        lib.tn_node_release(p)
        return cached
    n = _node(p)
    self.__dict__["_grad_fn_node"] = n
    return n
