"""``out=``: one wrapper for every torch.<name> that takes it in PyTorch.

    torch.add(x, y, out=result)
    torch.max(x, 1, out=(values, indices))
    torch.zeros(3, out=torch.empty(0, dtype=torch.long))

The op computes its result as usual, then the result goes into ``out`` with PyTorch's
rules (at::native::resize_output and the out= checks of its codegen):

- no autograd: when grad mode is on and an argument (``out`` included) requires grad,
  RuntimeError "<name>(): functions with out=... arguments don't support automatic
  differentiation, but one of the arguments requires grad."
- the result's dtype must be castable to out's (a float result into an int64 out is
  refused); a few ops want one dtype exactly (argmax's int64, all/any's bool, the indices
  of sort/topk/max...);
- an out of another shape is resized in place (Tensor.resize_): silently when it is empty,
  with PyTorch's deprecation UserWarning when it had elements;
- factories (zeros, arange, rand, ...) make their values in out's dtype unless dtype= is
  given, as PyTorch's;
- an out with internal overlap (expanded: a stride-0 dim of more than one element) is
  refused, and for the ops of _NO_OVERLAP an out sharing memory with an input;
- the call returns out itself (a tuple out: torch.return_types.<name>_out of the out tensors).

The names below are those whose PyTorch 1.13 Python signature has ``out`` (checked by
calling torch with out=); a name the package does not have is skipped.
"""
import functools
import warnings

from ._C import lib
from ._core import Tensor, _check_int, can_cast, int64, return_types

__all__ = ["install", "PLAIN", "DIM_REQUIRED", "TUPLE", "FACTORIES"]

PLAIN = frozenset("""
abs absolute acos add addcdiv addcmul addmm all amax amin any arccos arcsin arctan arctan2 argmax argmin asin atan
atan2 baddbmm bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm cat ceil clamp clamp_max clamp_min clip
concat concatenate cos cosh cumprod cumsum div divide dot eq erf erfc exp exp2 expm1 fix floor floor_divide fmod frac
gather ge ger greater greater_equal gt hstack index_select inner le lerp less less_equal log log10 log1p log2
log_softmax logical_and logical_not logical_or logical_xor logsumexp lt masked_select matmul maximum minimum mm msort
mul multinomial multiply mv nan_to_num ne neg negative nonzero norm normal not_equal outer pow reciprocal remainder round rsqrt
scatter scatter_add sigmoid sign sin sinh softmax sqrt square stack sub subtract take tan tanh tril triu true_divide trunc
vstack where
""".split())
DIM_REQUIRED = frozenset("sum mean prod std var".split())      # out= only with a dim, as torch's overloads
TUPLE = frozenset("sort topk kthvalue aminmax".split())          # out=(values, indices) / (min, max)
FACTORIES = frozenset("arange empty eye full linspace logspace ones zeros rand randn randint randperm".split())
_EXACT = {"argmax": (int64,), "argmin": (int64,), "nonzero": (int64,), "multinomial": (int64,)}
_INDICES = frozenset("sort topk kthvalue max min".split())       # their second output is int64 exactly
# out must have the result's dtype exactly (PyTorch 1.13's structured kernels: "Expected out tensor to have
# dtype float, but got double instead"), not just one it can be cast to
_SAME_DTYPE = frozenset("""
addcmul addmm all amax amin aminmax any baddbmm bmm clamp dot gather index_select inner log_softmax masked_select matmul
mm msort mv nan_to_num normal pow scatter scatter_add tril triu where
""".split())
# out may share no memory with an input (PyTorch's assert_no_overlap: "unsupported operation: ...")
_NO_OVERLAP = frozenset("bernoulli cat concat concatenate gather index_select kthvalue masked_select stack take".split())
_SCALAR_TYPE = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char",
                "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _span(t):
    """The bytes t's elements occupy, [lo, hi) (None when empty)."""
    if t.numel() == 0:
        return None
    lo = hi = t.data_ptr()
    for n, s in zip(t.shape, t.stride()):
        (lo, hi) = (lo + (n - 1) * s * t.element_size(), hi) if s < 0 else (lo, hi + (n - 1) * s * t.element_size())
    return lo, hi + t.element_size()


def _check_no_overlap(inputs, outs):
    for o in outs:
        so = _span(o)
        for t in inputs:
            st = _span(t)
            if so and st and o._same_storage(t) and so[0] < st[1] and st[0] < so[1]:
                raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                                   "refer to a single memory location. Please clone() the tensor before performing the "
                                   "operation.")


def _check_no_internal_overlap(o):
    """PyTorch's assert_no_internal_overlap on a written-to tensor: a dim of stride 0 and more
    than one element (an expanded tensor) writes one location twice."""
    if any(st == 0 and n > 1 for n, st in zip(o.shape, o.stride())):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def _tensors(obj, seen):
    if isinstance(obj, Tensor):
        seen.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, seen)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors(o, seen)
    return seen


def _has_dim(args, kwargs):
    return len(args) >= 2 or kwargs.get("dim") is not None


def _copy_out(name, o, r, exact, inputs=()):
    if exact is not None and o.dtype is not exact:
        raise RuntimeError(f"{name}(): Expected out tensor to have dtype {_SCALAR_TYPE.get(exact.name, exact.name)}, "
                           f"but got {_SCALAR_TYPE.get(o.dtype.name, o.dtype.name)} instead")
    if not can_cast(r.dtype, o.dtype):
        raise RuntimeError(f"result type {r.dtype._legacy} can't be cast to the desired output type {o.dtype._legacy}")
    if o.device != r.device:
        raise RuntimeError(f"{name}(): expected out tensor to be on device {r.device}, but got {o.device} instead")
    if tuple(o.shape) != tuple(r.shape):
        if o.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(o.shape)}, which "
                          f"does not match the required output shape {list(r.shape)}. This behavior is deprecated, and "
                          "in a future PyTorch release outputs will not be resized unless they have zero elements. You "
                          "can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                          "t.resize_(0).", UserWarning, stacklevel=4)
        o.resize_(r.shape)
    if name in _NO_OVERLAP:   # after the resize, as PyTorch's: a grown out may now reach an input
        _check_no_overlap(inputs, (o,))
    lib.tn_no_grad_begin()
    try:
        _check_int(lib.tn_copy_(o._ptr, r._ptr))
    finally:
        lib.tn_no_grad_end()


def _call_with_out(name, fn, args, kwargs, out):
    if name in DIM_REQUIRED and not _has_dim(args, kwargs):
        raise TypeError(f"{name}() received an invalid combination of arguments: out= needs the dim form "
                        f"{name}(input, dim, keepdim=False, *, out=None)")
    tuple_out = name in TUPLE
    if name in ("max", "min"):
        binary = len(args) >= 2 and isinstance(args[1], Tensor) or isinstance(kwargs.get("other"), Tensor)
        if not binary and not _has_dim(args, kwargs):
            raise TypeError(f"{name}() received an invalid combination of arguments: out= needs {name}(input, dim, "
                            f"keepdim=False, *, out=(values, indices)) or {name}(input, other, *, out=None)")
        tuple_out = not binary
    outs = tuple(out) if tuple_out and isinstance(out, (tuple, list)) else None
    if tuple_out and (outs is None or len(outs) != 2 or not all(isinstance(o, Tensor) for o in outs)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if not tuple_out and not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if lib.tn_is_grad_enabled() and any(t.requires_grad for t in _tensors((args, kwargs, out), [])):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    for o in (outs if tuple_out else (out,)):
        _check_no_internal_overlap(o)
    inputs = _tensors((args, kwargs), [])
    if name in _NO_OVERLAP:
        _check_no_overlap(inputs, outs if tuple_out else (out,))
    if name in FACTORIES and kwargs.get("dtype") is None:
        kwargs["dtype"] = out.dtype
    result = fn(*args, **kwargs)
    same = name in _SAME_DTYPE or (name not in FACTORIES and kwargs.get("dtype") is not None)   # sum(..., dtype=)
    if not tuple_out:
        exact = _EXACT.get(name, (result.dtype if same else None,))[0]
        _copy_out(name, out, result, exact, inputs)
        return out
    for k, (o, r) in enumerate(zip(outs, result)):
        _copy_out(name, o, r, int64 if k == 1 and name in _INDICES else r.dtype if same else None, inputs)
    return getattr(return_types, name + "_out")(*outs)


def _with_out(name, fn):
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return _call_with_out(name, fn, args, kwargs, out)
    return call


def install(namespace):
    """Wrap every function of namespace (the package's globals) that takes out= in PyTorch."""
    for name in sorted(PLAIN | DIM_REQUIRED | TUPLE | FACTORIES | {"max", "min"}):
        fn = namespace.get(name)
        if callable(fn) and not isinstance(fn, type):
            namespace[name] = _with_out(name, fn)

