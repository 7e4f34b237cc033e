"""torch.optim's optimizers over tn_optim (C section 13).

An ``Optimizer`` owns one ``tn_optim``: the C side holds the parameter groups' options
(a table of named numbers per group) and the per-parameter state, and runs the update.
The Python side keeps what C cannot hold: the parameter objects themselves (so they
stay alive and ``param_groups[g]["params"]`` returns them), options that change nothing
in C (``foreach``, ``fused``, ``capturable``, ``differentiable``) and any extra keys a
script stores in a group. ``param_groups`` is a list of dict-like ``_ParamGroup``
objects whose C options read and write through ``tn_optim_get`` / ``tn_optim_set``, so
``opt.param_groups[0]["lr"] = 0.01`` is seen by the next step, as in PyTorch.

Constructor keyword arguments become C option text ("lr=0.001, betas=(0.9, 0.999)");
PyTorch's argument checks ("Invalid learning rate: -1") run here first with PyTorch's
text and exception type, everything else is checked by C.

``state_dict()`` is PyTorch's nested form, converted from the flat C layout
(``state.<i>.<name>``, ``param_groups.<g>.<option>``); ``load_state_dict`` takes the
nested form, or the flat C layout itself (a dict of tensors read from a checkpoint the
C library wrote).
"""
import collections
import copy
import math
import numbers
import warnings
from collections.abc import MutableMapping

from .. import _C
from .._C import lib
from .._core import Tensor, _borrow, _check_int, _ptrs, _raise, _alive, tensor, float64, int64
from .._core import _callback as _core_callback
from ..autograd import _call, _fail, _pending, enable_grad

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "required"]


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# Keys schedulers add to a group; C keeps them with the group's options.
_SCHED_KEYS = ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum")
# Options C accepts and ignores (or accepts only as False): kept on the Python side.
_PY_ONLY = ("foreach", "fused", "capturable", "differentiable")
# How a C number reads back: bools, ints, the betas pair, line_search_fn.
_BOOL = {"nesterov", "maximize", "amsgrad", "centered", "decoupled_weight_decay", "capturable"}
_INT = {"max_iter", "max_eval", "history_size"}

# PyTorch's constructor checks: (key, message, low, high, high_open).
_CHECKS = [("lr", "Invalid learning rate", 0.0, math.inf, False),
           ("eps", "Invalid epsilon value", 0.0, math.inf, False),
           ("betas0", "Invalid beta parameter at index 0", 0.0, 1.0, True),
           ("betas1", "Invalid beta parameter at index 1", 0.0, 1.0, True),
           ("weight_decay", "Invalid weight_decay value", 0.0, math.inf, False),
           ("momentum", "Invalid momentum value", 0.0, math.inf, False),
           ("alpha", "Invalid alpha value", 0.0, math.inf, False),
           ("rho", "Invalid rho value", 0.0, 1.0, False),
           ("lr_decay", "Invalid lr_decay value", 0.0, math.inf, False),
           ("initial_accumulator_value", "Invalid initial_accumulator_value value", 0.0, math.inf, False),
           ("momentum_decay", "Invalid momentum_decay value", 0.0, math.inf, False)]


def _num(v):
    return v.item() if isinstance(v, Tensor) else v


def _fmt(v):
    """A Python value as option text (the C parser reads Python's spelling)."""
    v = _num(v)
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        return "inf" if f == math.inf else "-inf" if f == -math.inf else repr(f)
    if isinstance(v, str):
        return "'" + v + "'"
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    raise TypeError(f"optimizer option of type {type(v).__name__} is not supported: {v!r}")


def _options_text(opts):
    return ", ".join(f"{k}={_fmt(v)}" for k, v in opts.items())


def _validate(defaults):
    vals = dict(defaults)
    if "betas" in vals:
        b = tuple(_num(x) for x in vals["betas"])
        if len(b) != 2:
            raise ValueError(f"betas must be a pair of floats, got {vals['betas']!r}")
        vals["betas0"], vals["betas1"] = b
    for key, what, lo, hi, open_hi in _CHECKS:
        if key not in vals or vals[key] is None:
            continue
        v = _num(vals[key])
        if not (lo <= v and (v < hi if open_hi else v <= hi)):
            raise ValueError(f"{what}: {v}")


class _ParamGroup(MutableMapping):
    """``optimizer.param_groups[g]``: a dict-like view of C group g plus the Python-side
    keys. Reading and writing a C option goes through tn_optim_get/tn_optim_set."""
    __slots__ = ("_opt", "_index", "_params", "_extra")

    def __init__(self, opt, index, params, extra):
        self._opt, self._index, self._params, self._extra = opt, index, params, extra

    def _c_get(self, name):
        lib.tn_clear_error()              # NaN is also a value: only a new message means "absent"
        v = lib.tn_optim_get(self._opt._h, self._index, name.encode())
        if v != v and lib.tn_last_error():
            lib.tn_clear_error()
            raise KeyError(name)
        return v

    def _has_c(self, key):
        if key in self._opt._C_OPTIONS:
            return True
        if key in _SCHED_KEYS:
            try:
                self._c_get(key)
                return True
            except KeyError:
                return False
        return False

    def __getitem__(self, key):
        if key == "params":
            return self._params
        if key in self._extra:
            return self._extra[key]
        if key == "betas" and "betas" in self._opt._C_OPTIONS:
            return (self._c_get("betas[0]"), self._c_get("betas[1]"))
        if not self._has_c(key):
            raise KeyError(key)
        v = self._c_get(key)
        if key in _BOOL:
            return bool(v)
        if key in _INT:
            return int(v)
        if key == "line_search_fn":
            return "strong_wolfe" if v else None
        return v

    def __setitem__(self, key, value):
        if key == "params":
            raise RuntimeError("param_groups[g]['params'] cannot be replaced: the C optimizer holds its parameters "
                               "(use add_param_group, or make a new optimizer)")
        o, g = self._opt._h, self._index
        if key == "betas" and "betas" in self._opt._C_OPTIONS:
            b0, b1 = (float(_num(x)) for x in value)
            _check_int(lib.tn_optim_set(o, g, b"betas[0]", b0))
            _check_int(lib.tn_optim_set(o, g, b"betas[1]", b1))
            return
        if key in self._opt._C_OPTIONS or key in _SCHED_KEYS:
            if key == "line_search_fn":
                if value not in (None, "strong_wolfe"):
                    raise ValueError(f"only 'strong_wolfe' is supported, got {value!r}")
                value = 1.0 if value else 0.0
            _check_int(lib.tn_optim_set(o, g, key.encode(), float(_num(value))))
            return
        self._extra[key] = value

    def __delitem__(self, key):
        if key in self._extra:
            del self._extra[key]
        else:
            raise KeyError(f"{key!r} is held by the C optimizer and cannot be deleted")

    def _keys(self):
        keys = ["params"]
        for k in self._opt._DEFAULT_ORDER:
            if k in self._opt._C_OPTIONS or k in self._extra:
                keys.append(k)
        keys += [k for k in _SCHED_KEYS if k not in keys and self._has_c(k)]
        keys += [k for k in self._extra if k not in keys]
        return keys

    def __iter__(self):
        return iter(self._keys())

    def __len__(self):
        return len(self._keys())

    def __contains__(self, key):
        return key == "params" or key in self._extra or self._has_c(key) or (
            key == "betas" and "betas" in self._opt._C_OPTIONS)

    def __repr__(self):
        return repr(dict(self))

    def __copy__(self):
        return dict(self)

    def __deepcopy__(self, memo):
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self):
        return (dict, (dict(self),))


class _State(MutableMapping):
    """``optimizer.state``: parameter -> {name: state tensor}, live views of C's state
    (a parameter without state maps to an empty dict, as PyTorch's defaultdict)."""

    def __init__(self, opt):
        self._opt = opt

    def _index(self, p):
        for i, q in enumerate(self._opt._all_params()):
            if q is p:
                return i
        return None

    def __getitem__(self, p):
        i = self._index(p)
        out = {}
        if i is None:
            return out
        for name in self._opt._STATE_NAMES:
            ptr = lib.tn_optim_state(self._opt._h, i, name.encode())
            if ptr:
                out[name] = _borrow(ptr)
        return out

    def __setitem__(self, p, value):
        raise RuntimeError("optimizer.state is held by the C optimizer: use load_state_dict to replace it")

    __delitem__ = __setitem__

    def __iter__(self):
        return iter([p for p in self._opt._all_params() if self[p]])

    def __len__(self):
        return len(list(iter(self)))

    def __repr__(self):
        return repr({f"<param {i}>": self[p] for i, p in enumerate(self._opt._all_params()) if self[p]})


# --------------------------------------------------------------------------- LBFGS closures
_closures = {}
_closure_ids = iter(range(1, 1 << 62))


class _ClosureCall:
    __slots__ = ("fn", "first", "called")

    def __init__(self, fn):
        self.fn, self.first, self.called = fn, None, False


@_C.CLOSURE
@_core_callback
def _closure_trampoline(user):
    if _pending():
        return math.nan
    try:
        call = _closures[user]
        r = call.fn()
        if not call.called:
            call.first, call.called = r, True
        return float(_num(r))
    except BaseException as e:       # re-raised by _call once the C call returns
        _fail(e)
        return math.nan


_C.ctypes.pythonapi.Py_IncRef(_C.ctypes.py_object(_closure_trampoline))   # immortal


# --------------------------------------------------------------------------- Optimizer
class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` as PyTorch's. The classes below name
    their C kind (``_KIND``) and options. A user's subclass (no ``_KIND``) is a Python
    optimizer as in PyTorch: plain dict param groups, ``state`` a defaultdict, its own
    ``step``; zero_grad and the state dicts follow torch's Python code."""
    _KIND = None
    _C_OPTIONS = ()          # options the C optimizer holds (in defaults order)
    _STATE_NAMES = ()        # optimizer.state[p] names, PyTorch's order
    _o = None

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self._DEFAULT_ORDER = list(self.defaults)
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + params.type())
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        if self._KIND is None:
            self._py_state = collections.defaultdict(dict)
        self.param_groups = []
        for group in param_groups:
            self.add_param_group(group)

    def __del__(self, _free=lib.tn_optim_free, _alive=_alive):
        o = self._o
        if o and _alive[0]:
            self._o = None
            _free(o)

    @property
    def _h(self):
        """The C optimizer, checked (NULL would fail in C without a message of its own)."""
        if not self._o:
            raise RuntimeError(f"{type(self).__name__}: this optimizer was released (its __del__ ran) "
                               "or has no C optimizer")
        return self._o

    # -- groups
    def _all_params(self):
        return [p for g in self.param_groups for p in g._params]

    def _split(self, param_group):
        """A group dict -> (params list, C options, Python-side extras), checked as torch."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        unique = []
        for p in params:
            if not any(p is q for q in unique):
                unique.append(p)
        if len(unique) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for p in unique:
            if any(p is q for q in self._all_params()):
                raise ValueError("some parameters appear in more than one parameter group")
        copts, extra = {}, {}
        for k, v in param_group.items():
            if k == "params":
                continue
            if k in self._C_OPTIONS or k in _SCHED_KEYS:
                copts[k] = v
            elif k in _PY_ONLY and k in self.defaults:
                copts[k] = v          # C checks the value (capturable=True: Adam/AdamW only)
                extra[k] = v
            else:
                extra[k] = v
        for k, v in self.defaults.items():
            if k in _PY_ONLY and k not in extra and k not in self._C_OPTIONS:
                extra[k] = v
            if v is required and k not in copts:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
        return unique, copts, extra

    def add_param_group(self, param_group):
        if self._KIND is None:
            return self._py_add_param_group(param_group)
        params, copts, extra = self._split(param_group)
        sched = {k: copts.pop(k) for k in list(copts) if k in _SCHED_KEYS}
        # C refuses parameters that do not require grad; PyTorch keeps them (they never get
        # a grad, so the step skips them): switch it on while C checks the group.
        frozen = [p for p in params if not p.requires_grad]
        for p in frozen:
            p.requires_grad_(True)
        try:
            arr = _ptrs(params)
            if self._o is None:
                text = _options_text({k: v for k, v in self.defaults.items() if v is not required})
                o = lib.tn_optim_create_str(self._KIND.encode(), arr, len(params), text.encode())
                if not o:
                    _raise()
                self._o = o
                group = _ParamGroup(self, 0, params, extra)
                self.param_groups.append(group)
                try:
                    for k, v in copts.items():
                        if k not in _PY_ONLY and _fmt(v) != _fmt(self.defaults.get(k)):
                            group[k] = v
                except BaseException:
                    self.param_groups.pop()
                    lib.tn_optim_free(self._o)
                    self._o = None
                    raise
            else:
                _check_int(lib.tn_optim_add_param_group_str(self._o, arr, len(params), _options_text(copts).encode()))
                self.param_groups.append(_ParamGroup(self, len(self.param_groups), params, extra))
            for k, v in sched.items():
                self.param_groups[-1][k] = v
        finally:
            for p in frozen:
                p.requires_grad_(False)

    @property
    def state(self):
        return self._py_state if self._KIND is None else _State(self)

    @state.setter
    def state(self, value):
        if self._KIND is not None:
            raise AttributeError("optimizer.state is held by the C optimizer: use load_state_dict")
        self._py_state = value

    # -- the update
    def zero_grad(self, set_to_none=True):
        if self._KIND is not None:
            _check_int(lib.tn_optim_zero_grad_str(self._h, b"set_to_none=True" if set_to_none else b"set_to_none=False"))
            return
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """One update; ``closure`` (re-evaluating the model) runs first with grad enabled,
        and its result is returned."""
        if self._KIND is None:
            raise NotImplementedError(f"{type(self).__name__}.step: a Python optimizer implements step()")
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        _check_int(lib.tn_optim_step(self._h))
        return loss

    # -- state dicts
    def state_dict(self):
        if self._KIND is None:
            return self._py_state_dict()
        d = lib.tn_optim_state_dict(self._h)
        if not d:
            _raise()
        state, ids = {}, {}
        try:
            for i in range(lib.tn_dict_len(d)):
                key = lib.tn_dict_key(d, i).decode()
                t = _borrow(lib.tn_dict_value(d, i))
                if key.startswith("state."):
                    _, idx, name = key.split(".", 2)
                    state.setdefault(int(idx), {})[name] = t
                elif key.startswith("param_groups.") and key.endswith(".params"):
                    ids[int(key.split(".")[1])] = [int(v) for v in t.tolist()]
        finally:
            lib.tn_dict_free(d)
        groups = []
        for g, group in enumerate(self.param_groups):
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = ids[g]
            groups.append(packed)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        if self._KIND is None:
            return self._py_load_state_dict(state_dict)
        if _is_flat(state_dict):
            return self._load_flat(state_dict, {})
        state_dict = dict(state_dict)
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        flat, meta, extras = {}, {}, []
        for g, group in enumerate(groups):
            extra = {}
            for k, v in group.items():
                key = f"param_groups.{g}.{k}"
                if k == "params":
                    flat[key] = tensor([int(i) for i in v], dtype=int64)
                elif k == "line_search_fn" and k in self._C_OPTIONS:
                    meta[key] = "None" if v is None else str(v)
                elif k == "betas" and k in self._C_OPTIONS:
                    flat[key + ".0"] = tensor(float(_num(v[0])), dtype=float64)
                    flat[key + ".1"] = tensor(float(_num(v[1])), dtype=float64)
                elif (k in self._C_OPTIONS or k in _SCHED_KEYS) and isinstance(_num(v), numbers.Real):
                    flat[key] = tensor(float(_num(v)), dtype=float64)
                else:
                    extra[k] = v
            extras.append(extra)
        for idx, st in state_dict["state"].items():
            for name, v in st.items():
                if isinstance(v, (list, tuple)):          # LBFGS's lists in PyTorch's form
                    if name == "al" or not v:
                        continue
                    from .._ops import FUNCTIONS
                    v = FUNCTIONS["stack"]([x if isinstance(x, Tensor) else tensor(float(x), dtype=float64)
                                            for x in v])
                elif not isinstance(v, Tensor):
                    if v is None:
                        continue
                    v = tensor(v, dtype=int64 if isinstance(v, numbers.Integral) and not isinstance(v, bool)
                               else float64)
                flat[f"state.{idx}.{name}"] = v
        self._load_flat(flat, meta)
        for group, extra in zip(self.param_groups, extras):
            for k, v in extra.items():
                if k not in _SCHED_KEYS:
                    group._extra[k] = v

    def _load_flat(self, flat, meta):
        d = lib.tn_dict_new()
        if not d:
            _raise()
        try:
            for k, v in flat.items():
                if not isinstance(v, Tensor):
                    v = tensor(float(_num(v)), dtype=float64)
                _check_int(lib.tn_dict_set(d, k.encode(), v._ptr))
            for k, v in meta.items():
                _check_int(lib.tn_dict_set_meta(d, k.encode(), v.encode()))
            _check_int(lib.tn_optim_load_state_dict(self._h, d))
        finally:
            lib.tn_dict_free(d)

    # -- Python optimizers (torch's code)
    def _py_add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError("param group must be a dict")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in param_group["params"]}) != len(param_group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def _py_state_dict(self):
        mapping, start = {}, 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self._py_state.items()}
        return {"state": state, "param_groups": groups}

    def _py_load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(dict(state_dict))
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old: p for g, s in zip(groups, saved) for old, p in zip(s["params"], g["params"])}

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                return value.to(param.dtype) if key != "step" and param.is_floating_point() else value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = collections.defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved):
            s["params"] = g["params"]
            new_groups.append(s)
        self._py_state, self.param_groups = state, new_groups

    def __getstate__(self):
        if self._KIND is None:
            return {"defaults": self.defaults, "state": self._py_state, "param_groups": self.param_groups}
        raise TypeError(f"cannot pickle {type(self).__name__}: save optimizer.state_dict() instead")

    def __setstate__(self, state):
        self.defaults, self._py_state, self.param_groups = state["defaults"], state["state"], state["param_groups"]
        self._DEFAULT_ORDER = list(self.defaults)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        s += ")"
        return s


def _is_flat(sd):
    """The flat C layout: every key 'state.<i>.<name>' or 'param_groups.<g>.<option>'."""
    return (isinstance(sd, dict) and "state" not in sd and len(sd) > 0
            and all(isinstance(k, str) and (k.startswith("state.") or k.startswith("param_groups.")) for k in sd))


class SGD(Optimizer):
    _KIND = "SGD"
    _C_OPTIONS = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize")
    _STATE_NAMES = ("momentum_buffer",)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        _validate(defaults)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)


class Adam(Optimizer):
    _KIND = "Adam"
    _C_OPTIONS = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "capturable")
    _STATE_NAMES = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)
        _validate(defaults)
        super().__init__(params, defaults)


class AdamW(Optimizer):
    _KIND = "AdamW"
    _C_OPTIONS = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "capturable")
    _STATE_NAMES = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)
        _validate(defaults)
        super().__init__(params, defaults)


class RMSprop(Optimizer):
    _KIND = "RMSprop"
    _C_OPTIONS = ("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize")
    _STATE_NAMES = ("step", "square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        _validate(defaults)
        super().__init__(params, defaults)


class Adagrad(Optimizer):
    _KIND = "Adagrad"
    _C_OPTIONS = ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize")
    _STATE_NAMES = ("step", "sum")

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        _validate(defaults)
        super().__init__(params, defaults)


class Adadelta(Optimizer):
    _KIND = "Adadelta"
    _C_OPTIONS = ("lr", "rho", "eps", "weight_decay", "maximize")
    _STATE_NAMES = ("step", "square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        _validate(defaults)
        super().__init__(params, defaults)


class Adamax(Optimizer):
    _KIND = "Adamax"
    _C_OPTIONS = ("lr", "betas", "eps", "weight_decay", "maximize")
    _STATE_NAMES = ("step", "exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        _validate(defaults)
        super().__init__(params, defaults)


class NAdam(Optimizer):
    _KIND = "NAdam"
    _C_OPTIONS = ("lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize")
    _STATE_NAMES = ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        _validate(defaults)
        super().__init__(params, defaults)


class RAdam(Optimizer):
    _KIND = "RAdam"
    _C_OPTIONS = ("lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "maximize")
    _STATE_NAMES = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        _validate(defaults)
        super().__init__(params, defaults)


class LBFGS(Optimizer):
    """LBFGS (torch/optim/lbfgs.py in C, computing in float64). ``step(closure)`` needs
    the closure; C calls it as often as the line search wants, and an exception in it
    comes out of ``step``."""
    _KIND = "LBFGS"
    _C_OPTIONS = ("lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size", "line_search_fn")
    _STATE_NAMES = ()

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        _validate({"lr": lr})
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    @property
    def state(self):
        """LBFGS keeps its state under the first parameter (as PyTorch): a copy, from the
        state dict (old_dirs/old_stps as [k, N] matrices, ro as a [k] vector)."""
        st = self.state_dict()["state"].get(0, {})
        p = self._all_params()[0]
        return {p: st} if st else {}

    def step(self, closure):
        if closure is None:
            raise RuntimeError("LBFGS requires a closure (step(closure))")
        key = next(_closure_ids)
        call = _closures[key] = _ClosureCall(closure)
        try:
            r = _call(lib.tn_optim_step_closure, self._h, _closure_trampoline, key)
        finally:
            del _closures[key]
        if r != r:
            _raise()
        return call.first
