"""torch.autograd.gradcheck / gradgradcheck over tn_gradcheck / tn_gradgradcheck.

``gradcheck(func, inputs)`` compares the Jacobian that autograd gives with central
finite differences, element by element, for every input that requires grad (use
float64): it passes when ``|analytical - numerical| <= atol + rtol * |numerical|``
everywhere. ``gradgradcheck`` does the same for the gradients of the gradients.

As in PyTorch: ``func`` takes the inputs as positional arguments and returns a Tensor
or a sequence of Tensors (several outputs are checked together, flattened and
concatenated); ``inputs`` is a Tensor or a sequence whose non-tensor entries are passed
through; on failure ``GradcheckError`` (a RuntimeError) carries the worst mismatch, or
``False`` is returned with ``raise_exception=False``; exceptions raised by ``func``
propagate. PyTorch's other switches (``check_batched_grad``, ``fast_mode``, ...) are
accepted and do nothing: the C check is the full backward-mode Jacobian. A
non-contiguous input is checked through a contiguous copy. ``gradgradcheck`` without
``grad_outputs`` uses tensor.h's random ones (seed 1234) and restores the default
generator's state afterwards; with ``grad_outputs`` it builds the check in Python.
"""
import itertools
import sys
import warnings

from .. import _C
from .._C import lib
from .._core import Tensor, _borrow, _ptrs
from .._core import _callback as _core_callback
from . import _call, _fail, _keep, _pending, enable_grad, grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


_calls = {}
_keys = itertools.count(1)
_TORCH_OPTIONS = {"check_sparse_nnz", "nondet_tol", "check_undefined_grad", "check_grad_dtypes",
                  "check_batched_grad", "check_batched_forward_grad", "check_forward_ad", "check_backward_ad",
                  "fast_mode", "gen_non_contig_grad_outputs", "check_fwd_over_rev", "check_rev_over_rev"}


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _one_output(out):
    """func's result as the one tensor C checks: several outputs are flattened and joined."""
    if isinstance(out, Tensor):
        return out
    outs = [o for o in _as_tuple(out) if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if not outs:
        raise TypeError(f"gradcheck: the function must return a Tensor or a sequence of Tensors, got {type(out).__name__}")
    if len(outs) == 1:
        return outs[0]
    from .._ops import cat
    return cat([o.reshape(-1) for o in outs])


class _Call:
    __slots__ = ("func", "args", "positions", "by_ptr")


@_C.GRADCHECK_FN
@_core_callback
def _gradcheck_trampoline(inputs, n, key):
    if _pending():
        return None
    try:
        st = _calls[key]
        args = list(st.args)
        for i in range(n):
            p = inputs[i]
            t = st.by_ptr.get(p)
            args[st.positions[i]] = t if t is not None else _borrow(p)
        out = _one_output(st.func(*args))
        _keep(out)                 # C uses it until gradcheck returns
        return out._ptr
    except BaseException as e:
        _fail(e)
        return None


_C.ctypes.pythonapi.Py_IncRef(_C.ctypes.py_object(_gradcheck_trampoline))


def _check_options(kwargs, fname):
    unknown = set(kwargs) - _TORCH_OPTIONS
    if unknown:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{sorted(unknown)[0]}'")


def _prepare(inputs):
    args = list(_as_tuple(inputs))
    positions, tensors = [], []
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            continue
        if a.requires_grad:
            if a.dtype.is_floating_point and a.dtype.name != "float64":
                warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                              "This check will likely fail if all the inputs are not of double precision "
                              "floating point. ", stacklevel=3)
            if not a.is_contiguous():
                a = args[i] = a.detach().contiguous().requires_grad_()
        positions.append(i)
        tensors.append(a)
    return args, positions, tensors


def _run_check(cfn, fname, func, inputs, eps, atol, rtol, raise_exception):
    args, positions, tensors = _prepare(inputs)
    if not tensors:
        raise ValueError(f"{fname}: inputs must contain at least one Tensor")
    st = _Call()
    st.func, st.args, st.positions = func, args, positions
    st.by_ptr = {t._ptr: t for t in tensors}
    key = next(_keys)
    _calls[key] = st
    tiny = sys.float_info.min              # C reads 0 as "the default"; 0 asked for means 0
    try:
        text = f"eps={float(eps)!r}, atol={float(atol) or tiny!r}, rtol={float(rtol) or tiny!r}"   # the C _str's keywords
        ok = _call(cfn, _gradcheck_trampoline, _ptrs(tensors), len(tensors), key, text.encode())
    finally:
        del _calls[key]
    if ok:
        return True
    if raise_exception:
        raise GradcheckError(lib.tn_last_error().decode("utf-8", "replace") or f"{fname} failed")
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """torch.autograd.gradcheck (see the module docstring)."""
    _check_options(kwargs, "gradcheck")
    return _run_check(lib.tn_gradcheck_str, "gradcheck", func, inputs, eps, atol, rtol, raise_exception)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **kwargs):
    """torch.autograd.gradgradcheck (see the module docstring)."""
    _check_options(kwargs, "gradgradcheck")
    if grad_outputs is None:
        from .._factories import get_rng_state, set_rng_state
        state = get_rng_state()
        try:
            return _run_check(lib.tn_gradgradcheck_str, "gradgradcheck", func, inputs, eps, atol, rtol, raise_exception)
        finally:
            set_rng_state(state)
    ins = _as_tuple(inputs)
    vs = tuple(v.detach().clone().requires_grad_(v.dtype.is_floating_point or v.dtype.is_complex) if isinstance(v, Tensor) else v
               for v in _as_tuple(grad_outputs))
    n_in = len(ins)

    def grads_of(*all_args):
        xs, v = all_args[:n_in], all_args[n_in:]
        with enable_grad():        # the finite-difference evaluations run under no_grad
            outs = [o for o in _as_tuple(func(*xs)) if isinstance(o, Tensor) and o.requires_grad]
            diff = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
            gs = grad(outs, diff, v[:len(outs)], create_graph=True, allow_unused=True)
        return tuple(g if g is not None else x.new_zeros(x.shape) for g, x in zip(gs, diff))

    return _run_check(lib.tn_gradcheck_str, "gradgradcheck", grads_of, ins + vs, eps, atol, rtol, raise_exception)
