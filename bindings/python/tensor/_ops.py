"""Math on tensors: pointwise ops, operators, reductions, linear algebra, joining.

Each op is a method of ``Tensor`` and, through ``FUNCTIONS``, a function ``tn.<name>``
taking the tensor first (PyTorch's ``torch.<name>(input, ...)``). The one-signature
families (unary, binary) are generated from the name lists in ``_C``; the rest are
written out because their PyTorch keyword arguments differ.
"""
import builtins as _bi
import math
import numbers
import warnings
import ctypes
from ctypes import byref, c_int64, c_void_p

from . import _C
from ._C import lib
from ._core import (Tensor, _check_int, _default_dtype, _dims_list, _float, _i64, _int, _is_operand, _operand, _otp,
                    _ptrs, _raise, _scalar, _scalar_kind, _scalar_ptr, _scalar_tensor, _str_arg, _tensor_arg, _to_dtype,
                    _tp, _unalias, _wrap, _wrap_dim, _DTYPES, bool_, float32, return_types, where)

FUNCTIONS = {}          # name -> plain function, exported as tn.<name>
_NONE = -(1 << 63)      # TN_NONE: an int argument's None
METHOD_FUNCTIONS = {}   # name -> Tensor method, exported as tn.<name>(input, ...)
_SCALAR_FIRST = set()   # functions whose first argument may be a Python number


def _method(name, *aliases, function=True, scalar_first=False):
    def deco(f):
        for n in (name,) + aliases:
            setattr(Tensor, n, f)
            if function:
                METHOD_FUNCTIONS[n] = f
                if scalar_first:
                    _SCALAR_FIRST.add(n)
        return f
    return deco


# --------------------------------------------------------------------------- binary ops
def _binary(f, a, b):
    if isinstance(b, Tensor):
        return _wrap(f(a._ptr, b._ptr))
    if _scalar_kind(b) is None:
        b = _operand(b)                 # a NumPy array
        return _wrap(f(a._ptr, b._ptr))
    s = _scalar_ptr(b)
    try:
        return _wrap(f(a._ptr, s))
    finally:
        lib.tn_release(s)


def _rbinary(f, a, b):
    if _scalar_kind(b) is None:
        b = _operand(b)
        return _wrap(f(b._ptr, a._ptr))
    s = _scalar_ptr(b)
    try:
        return _wrap(f(s, a._ptr))
    finally:
        lib.tn_release(s)


def _binary_inplace(f, a, b):
    if isinstance(b, Tensor) or _scalar_kind(b) is None:
        b = _unalias(a, _operand(b))
        return a._inplace(f(a._ptr, b._ptr))
    s = _scalar_ptr(b)
    try:
        return a._inplace(f(a._ptr, s))
    finally:
        lib.tn_release(s)


# binary ops PyTorch takes a Python number first for (torch.pow(2, t)); the others (torch.eq(2, t),
# torch.atan2(2, t), torch.rsub(2, t)) are its TypeError
_NUMBER_FIRST = {"mul", "floor_divide", "remainder", "pow", "xlogy", "float_power", "bitwise_and", "bitwise_or", "bitwise_xor",
                 "bitwise_left_shift", "bitwise_right_shift"}
# binary ops whose `other` must be a Tensor in PyTorch (torch.maximum(t, 2) is a TypeError)
_TENSOR_OTHER = {"atan2", "maximum", "minimum", "logical_and", "logical_or", "logical_xor"}


def _make_binary(cname):
    f = getattr(lib, "tn_" + cname)
    if cname in _TENSOR_OTHER:
        def method(self, other):
            if not isinstance(other, Tensor):
                raise TypeError(f"{cname}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
            return _wrap(f(self._ptr, other._ptr))
        method.__name__ = cname
        return method

    def method(self, other):
        return _binary(f, self, other)
    method.__name__ = cname
    return method


def _make_binary_inplace(cname):
    f = getattr(lib, "tn_" + cname + "_", None) if cname in _C.BINARY_INPLACE else None
    out = getattr(Tensor, cname)

    def method(self, other):
        if f is not None:
            return _binary_inplace(f, self, other)
        return self._store(out(self, other))
    method.__name__ = cname + "_"
    return method


_BINARY_ALIASES = {"sub": ("subtract",), "mul": ("multiply",), "div": ("divide", "true_divide"),
                   "atan2": ("arctan2",), "eq": (), "ne": ("not_equal",), "lt": ("less",),
                   "le": ("less_equal",), "gt": ("greater",), "ge": ("greater_equal",)}

for _n in _C.BINARY:
    if _n in ("add", "sub", "div"):
        continue          # written out below: alpha= / rounding_mode=
    _m = _make_binary(_n)
    _method(_n, *_BINARY_ALIASES.get(_n, ()), scalar_first=_n in _NUMBER_FIRST)(_m)
for _n in _C.BINARY:
    if _n in ("add", "sub", "div"):
        continue
    _mi = _make_binary_inplace(_n)
    for _a in (_n,) + _BINARY_ALIASES.get(_n, ()):
        setattr(Tensor, _a + "_", _mi)


@_method("add", scalar_first=True)
def add(self, other, *, alpha=1):
    if alpha == 1:
        return _binary(lib.tn_add, self, other)
    o = _operand(other)          # keep the temporary alive across the C call
    return _wrap(lib.tn_add_alpha(self._ptr, o._ptr, _scalar(alpha, "add", "alpha")))


@_method("sub", "subtract", scalar_first=True)
def sub(self, other, *, alpha=1):
    if alpha == 1:
        return _binary(lib.tn_sub, self, other)
    o = _operand(other)
    return _wrap(lib.tn_sub_alpha(self._ptr, o._ptr, _scalar(alpha, "sub", "alpha")))


@_method("rsub")
def rsub(self, other, *, alpha=1):
    if alpha == 1 and not isinstance(other, Tensor) and self.dtype.is_floating_point and _scalar_kind(other) in (1, 2):
        return _wrap(lib.tn_rsub_scalar(self._ptr, _scalar(other, "rsub", "other")))
    return sub(_operand(other), self, alpha=alpha)


def result_type(tensor1, tensor2):
    a, b = _operand(tensor1), _operand(tensor2)
    return _DTYPES[lib.tn_result_type(_ptrs([a, b]), 2)]


@_method("div", "divide", "true_divide", scalar_first=True)
def div(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _binary(lib.tn_div, self, other)
    if rounding_mode == "floor":
        return _binary(lib.tn_floor_divide, self, other)
    if rounding_mode != "trunc":
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    o = _operand(other)
    if result_type(self, o).is_floating_point:
        return self.div(o).trunc()
    q = self.floor_divide(o)
    fix = self.remainder(o).ne(0).logical_and(self.lt(0).logical_xor(o.lt(0)))
    return q.add(fix.to(q.dtype))


def _add_(self, other, *, alpha=1):
    if alpha == 1:
        return _binary_inplace(lib.tn_add_, self, other)
    o = _operand(other)
    return self._inplace(lib.tn_add_alpha_(self._ptr, o._ptr, _scalar(alpha, "add_", "alpha")))


def _sub_(self, other, *, alpha=1):
    if alpha == 1:
        return _binary_inplace(lib.tn_sub_, self, other)
    o = _operand(other)
    return self._inplace(lib.tn_add_alpha_(self._ptr, o._ptr, -_scalar(alpha, "sub_", "alpha")))


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _binary_inplace(lib.tn_div_, self, other)
    return self._store(div(self, other, rounding_mode=rounding_mode))


Tensor.add_ = _add_
Tensor.sub_ = Tensor.subtract_ = _sub_
Tensor.div_ = Tensor.divide_ = Tensor.true_divide_ = _div_


# operators: NotImplemented for operands we do not know, so Python can try the other side
def _op(f, reflected=False, name=""):
    if reflected:
        def op(self, other):
            if not isinstance(self, Tensor):   # Tensor.__radd__(2, t): torch's C methods refuse a non-Tensor self
                raise TypeError(f"descriptor '{name}' for 'Tensor' objects doesn't apply to a "
                                f"'{type(self).__name__}' object")
            if not _is_operand(other):
                return NotImplemented
            if isinstance(other, Tensor):
                return _wrap(f(other._ptr, self._ptr))
            return _rbinary(f, self, other)
    else:
        def op(self, other):
            if not _is_operand(other):
                return NotImplemented
            return _binary(f, self, other)
    return op


def _iop(name):
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        return getattr(self, name)(other)
    return op


for _dunder, _cname in [("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                        ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
                        ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                        ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")]:
    _f = getattr(lib, "tn_" + _cname)
    setattr(Tensor, f"__{_dunder}__", _op(_f))
    setattr(Tensor, f"__r{_dunder}__", _op(_f, reflected=True, name=f"__r{_dunder}__"))
    setattr(Tensor, f"__i{_dunder}__", _iop(_cname + "_"))
for _dunder, _cname in [("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge")]:
    setattr(Tensor, f"__{_dunder}__", _op(getattr(lib, "tn_" + _cname)))
Tensor.__hash__ = lambda self: id(self)
Tensor.__matmul__ = lambda self, other: matmul(self, other) if isinstance(other, Tensor) else NotImplemented
Tensor.__rmatmul__ = lambda self, other: matmul(other, self) if isinstance(other, Tensor) else NotImplemented
Tensor.__neg__ = lambda self: _wrap(lib.tn_neg(self._ptr))
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: _wrap(lib.tn_abs(self._ptr))
def _invert(self):
    if self.dtype.is_floating_point:      # PyTorch's class for this one is TypeError
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _wrap(lib.tn_bitwise_not(self._ptr))


Tensor.__invert__ = _invert


# A floating tensor with a Python-number exponent or minuend goes through tn_pow_scalar /
# tn_rsub_scalar, whose nodes carry PyTorch's names (PowBackward0, RsubBackward1); the
# values are those of the wrapped-number path, which other dtypes keep (int ** 2 stays int).
def _scalar_form(self, other):
    return self.dtype.is_floating_point and _scalar_kind(other) in (1, 2)


_pow_tensor = Tensor.pow


@_method("pow", scalar_first=True)
def pow(self, exponent):
    if _scalar_form(self, exponent):
        return _wrap(lib.tn_pow_scalar(self._ptr, _scalar(exponent, "pow", "exponent")))
    return _pow_tensor(self, exponent)


def _rsub_op(self, other):
    if not _is_operand(other):
        return NotImplemented
    if isinstance(other, Tensor):
        return _wrap(lib.tn_sub(other._ptr, self._ptr))
    if _scalar_form(self, other):
        return _wrap(lib.tn_rsub_scalar(self._ptr, _scalar(other, "rsub", "other")))
    return _rbinary(lib.tn_sub, self, other)


Tensor.__pow__ = lambda self, other: pow(self, other) if _is_operand(other) else NotImplemented
Tensor.__rsub__ = _rsub_op


# --------------------------------------------------------------------------- unary ops
_UNARY_ALIASES = {"abs": ("absolute",), "neg": ("negative",), "asin": ("arcsin",), "acos": ("arccos",),
                  "atan": ("arctan",), "trunc": ("fix",), "sinh": (), "exp2": (), "sign": (),
                  "asinh": ("arcsinh",), "acosh": ("arccosh",), "atanh": ("arctanh",)}
_NO_INPLACE = {"isnan", "isinf", "isfinite", "signbit"}


def _make_unary(cname):
    f = getattr(lib, "tn_" + cname)

    def method(self):
        return _wrap(f(self._ptr))
    method.__name__ = cname
    return method


def _make_unary_inplace(cname, out):
    f = getattr(lib, "tn_" + cname + "_") if cname in _C.UNARY_INPLACE else None

    def method(self):
        if f is not None:
            return self._inplace(f(self._ptr))
        if cname == "abs" and self.dtype.is_complex:   # its real result would land in the complex tensor
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return self._store(out(self))
    method.__name__ = cname + "_"
    return method


for _n in _C.UNARY:
    _m = _make_unary(_n)
    names = (_n,) + _UNARY_ALIASES.get(_n, ())
    if _n == "round":
        continue
    _method(*names)(_m)
    if _n not in _NO_INPLACE:
        _mi = _make_unary_inplace(_n, _m)
        for _a in names:
            setattr(Tensor, _a + "_", _mi)


@_method("round")
def round(self, *, decimals=0):
    r = _wrap(lib.tn_round(self._ptr))if decimals == 0 else None
    if r is None:
        scale = 10.0 ** decimals
        r = self.mul(scale).round().div(scale)
    return r


Tensor.round_ = lambda self, *, decimals=0: self._store(round(self, decimals=decimals))


@_method("clamp", "clip")
def clamp(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = None if min is None else _operand(min)
        hi = None if max is None else _operand(max)
        return _wrap(lib.tn_clamp_tensor(self._ptr, None if lo is None else lo._ptr, None if hi is None else hi._ptr))
    text = _clamp_text("clamp", min, max)
    if text is None:   # a NaN bound: every element NaN, as PyTorch (tn_clamp_min keeps it)
        return _wrap(lib.tn_clamp_min(self._ptr, math.nan))
    return _wrap(lib.tn_clamp_str(self._ptr, text))


def _clamp_text(fn, min, max):
    """The option text of tn_clamp_str: None, or the bound as a float (str round-trips);
    None for a NaN bound, which the text cannot give (its NaN is None)."""
    lo = None if min is None else float(_scalar(min, fn, "min"))
    hi = None if max is None else float(_scalar(max, fn, "max"))
    return None if lo != lo or hi != hi else _kw_text(min=lo, max=hi)


def _clamp_(self, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor) or min is None and max is None:
        return self._store(clamp(self, min, max))
    text = _clamp_text("clamp_", min, max)
    return self._store(clamp(self, min, max)) if text is None else self._inplace(lib.tn_clamp__str(self._ptr, text))


Tensor.clamp_ = Tensor.clip_ = _clamp_


@_method("clamp_min")
def clamp_min(self, min):
    if isinstance(min, Tensor):
        return clamp(self, min=min)
    return _wrap(lib.tn_clamp_min(self._ptr, _scalar(min, "clamp_min", "min")))


@_method("clamp_max")
def clamp_max(self, max):
    if isinstance(max, Tensor):
        return clamp(self, max=max)
    return _wrap(lib.tn_clamp_max(self._ptr, _scalar(max, "clamp_max", "max")))


Tensor.clamp_min_ = lambda self, min: _clamp_(self, min=min)
Tensor.clamp_max_ = lambda self, max: _clamp_(self, max=max)


# --------------------------------------------------------------------------- special functions
def polygamma(n, input):
    return _wrap(lib.tn_polygamma(_int(n, "polygamma", "n"), _tp(input, "polygamma", "input")))


FUNCTIONS["polygamma"] = polygamma
Tensor.polygamma = lambda self, n: polygamma(n, self)
Tensor.polygamma_ = lambda self, n: self._store(polygamma(n, self))


@_method("mvlgamma")
def mvlgamma(self, p):
    return _wrap(lib.tn_mvlgamma(self._ptr, _int(p, "mvlgamma", "p")))


Tensor.mvlgamma_ = lambda self, p: self._store(mvlgamma(self, p))


@_method("logit")
def logit(self, eps=None):
    return _wrap(lib.tn_logit_str(self._ptr, b"eps=None" if eps is None else f"eps={_float(eps, 'logit', 'eps')!r}".encode()))


Tensor.logit_ = lambda self, eps=None: self._store(logit(self, eps))


@_method("frexp")
def frexp(self):
    e = c_void_p()
    m = _wrap(lib.tn_frexp(self._ptr, byref(e)))
    return return_types.frexp(m, _wrap(e.value))


def _make_binary_tensor(cname):
    f = getattr(lib, "tn_" + cname)

    def method(self, other):
        return _wrap(f(self._ptr, _tp(other, cname, "other")))
    method.__name__ = cname
    return method


for _n in _C.BINARY_TENSOR:
    _m = _make_binary_tensor(_n)
    _method(_n)(_m)
    setattr(Tensor, _n + "_", (lambda m: lambda self, other: self._store(m(self, other)))(_m))
@_method("nan_to_num")
def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    nan = _float(nan, "nan_to_num", "nan")
    posinf = None if posinf is None else _float(posinf, "nan_to_num", "posinf")
    neginf = None if neginf is None else _float(neginf, "nan_to_num", "neginf")
    r = _wrap(lib.tn_nan_to_num_str(self._ptr, f"nan={nan!r}, posinf={posinf!r}, neginf={neginf!r}".encode()))
    # the C options read a NaN posinf / neginf as None (the dtype's limit); torch puts the NaN in
    if posinf is not None and math.isnan(posinf) and self.is_floating_point():
        r = r.masked_fill(self.isposinf(), math.nan)
    if neginf is not None and math.isnan(neginf) and self.is_floating_point():
        r = r.masked_fill(self.isneginf(), math.nan)
    return r


Tensor.nan_to_num_ = lambda self, nan=0.0, posinf=None, neginf=None: self._store(nan_to_num(self, nan, posinf, neginf))


@_method("lerp")
def lerp(self, end, weight):
    e = _tp(end, "lerp", "end")
    if isinstance(weight, Tensor):
        return _wrap(lib.tn_lerp(self._ptr, e, weight._ptr))
    if type(weight) is _bi.complex:   # a wrapped number: the tensors' dtype wins
        w = _scalar_tensor(weight)   # (held: the call reads its handle)
        return _wrap(lib.tn_lerp(self._ptr, e, w._ptr))
    return _wrap(lib.tn_lerp_scalar(self._ptr, e, _scalar(weight, "lerp", "weight")))


def _lerp_(self, end, weight):
    if isinstance(weight, (Tensor, _bi.complex)):
        return self._store(lerp(self, end, weight))
    return self._inplace(lib.tn_lerp_(self._ptr, _tp(end, "lerp_", "end"), _scalar(weight, "lerp_", "weight")))


Tensor.lerp_ = _lerp_


def _addc(f, fn, self, tensor1, tensor2, value):
    return f(self._ptr, _tp(tensor1, fn, "tensor1"), _tp(tensor2, fn, "tensor2"), _kw_text(value=float(_scalar(value, fn, "value"))))


@_method("addcmul")
def addcmul(self, tensor1, tensor2, *, value=1):
    return _wrap(_addc(lib.tn_addcmul_str, "addcmul", self, tensor1, tensor2, value))


@_method("addcdiv")
def addcdiv(self, tensor1, tensor2, *, value=1):
    return _wrap(_addc(lib.tn_addcdiv_str, "addcdiv", self, tensor1, tensor2, value))


Tensor.addcmul_ = lambda self, tensor1, tensor2, *, value=1: self._inplace(
    _addc(lib.tn_addcmul__str, "addcmul_", self, tensor1, tensor2, value))
Tensor.addcdiv_ = lambda self, tensor1, tensor2, *, value=1: self._inplace(
    _addc(lib.tn_addcdiv__str, "addcdiv_", self, tensor1, tensor2, value))


@_method("softmax")
def softmax(self, dim, dtype=None):
    x = _cast(self, dtype)
    return _wrap(lib.tn_softmax(x._ptr, _int(dim, "softmax")))


@_method("log_softmax")
def log_softmax(self, dim, dtype=None):
    x = _cast(self, dtype)
    return _wrap(lib.tn_log_softmax(x._ptr, _int(dim, "log_softmax")))


@_method("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    lib.tn_clear_error()
    r = bool(lib.tn_allclose_str(self._ptr, _tp(other, "allclose", "other"),
                                 _kw_text(rtol=_float(rtol, "allclose", "rtol"), atol=_float(atol, "allclose", "atol"), equal_nan=bool(equal_nan))))
    if not r and lib.tn_last_error():
        _raise()
    return r


@_method("isclose")
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    o = _tensor_arg(other, "isclose", "other")
    return _wrap(lib.tn_isclose_str(self._ptr, o._ptr, _kw_text(rtol=_float(rtol, "isclose", "rtol"), atol=_float(atol, "isclose", "atol"),
                                                               equal_nan=bool(equal_nan))))


@_method("equal")
def equal(self, other):
    lib.tn_clear_error()
    r = bool(lib.tn_equal(self._ptr, _tp(other, "equal", "other")))
    if not r and lib.tn_last_error():
        _raise()
    return r


# --------------------------------------------------------------------------- reductions
def _all_dims(x, dim):
    d = _dims_list(dim)
    return list(range(x.ndim)) if not d else d


def _reduce(x, dim, keepdim, f_all, f_dims):
    if (dim is None or dim == () or dim == []) and not keepdim:
        return _wrap(f_all(x._ptr))
    dims = _all_dims(x, dim)
    if not dims:            # a 0-d tensor
        return _wrap(f_all(x._ptr))
    arr, n = _i64(dims)
    return _wrap(f_dims(x._ptr, arr, n, b"keepdim=True" if keepdim else None))


def _cast(x, dtype):
    return x if dtype is None else x.to(_to_dtype(dtype, False))


def _in_dtype(r, dtype):
    """A sum/prod/cumsum/cumprod result in the dtype= asked for: an integral one is what
    PyTorch's wrapping arithmetic in that dtype gives (the int64 accumulation taken modulo
    its range: sum(x, dtype=torch.uint8) is uint8)."""
    if dtype is None:
        return r
    dt = _to_dtype(dtype, False)
    return r if r.dtype is dt else r.to(dt)


@_method("sum")
def sum(self, dim=None, keepdim=False, *, dtype=None):
    return _in_dtype(_reduce(_cast(self, dtype), dim, keepdim, lib.tn_sum, lib.tn_sum_dims_str), dtype)


@_method("mean")
def mean(self, dim=None, keepdim=False, *, dtype=None):
    return _reduce(_cast(self, dtype), dim, keepdim, lib.tn_mean, lib.tn_mean_dims_str)


@_method("prod")
def prod(self, dim=None, keepdim=False, *, dtype=None):
    return _in_dtype(_reduce(_cast(self, dtype), dim, keepdim, lib.tn_prod, lib.tn_prod_dims_str), dtype)


@_method("amax")
def amax(self, dim=(), keepdim=False):
    arr, n = _i64(_dims_list(dim) or [])
    return _wrap(lib.tn_amax_str(self._ptr, arr, n, _kw_text(keepdim=bool(keepdim))))


@_method("amin")
def amin(self, dim=(), keepdim=False):
    arr, n = _i64(_dims_list(dim) or [])
    return _wrap(lib.tn_amin_str(self._ptr, arr, n, _kw_text(keepdim=bool(keepdim))))


@_method("aminmax")
def aminmax(self, *, dim=None, keepdim=False):
    mx = c_void_p()
    lo = _wrap(lib.tn_aminmax_str(self._ptr, byref(mx), _kw_text(dim=None if dim is None else _int(dim, "aminmax"), keepdim=bool(keepdim))))
    return return_types.aminmax(lo, _wrap(mx.value))


def _extreme(self, dim, keepdim, f_all, f_dim, f_binary, rtype):
    if isinstance(dim, Tensor):
        return _wrap(f_binary(self._ptr, dim._ptr))
    if dim is None:
        return _wrap(f_all(self._ptr))
    idx = c_void_p()
    v = f_dim(self._ptr, _int(dim, rtype.__name__), byref(idx), _kw_text(keepdim=bool(keepdim)))
    values = _wrap(v)
    return rtype(values, _wrap(idx.value))


@_method("max")
def max(self, dim=None, keepdim=False):
    return _extreme(self, dim, keepdim, lib.tn_max, lib.tn_max_dim_str, lib.tn_maximum, return_types.max)


@_method("min")
def min(self, dim=None, keepdim=False):
    return _extreme(self, dim, keepdim, lib.tn_min, lib.tn_min_dim_str, lib.tn_minimum, return_types.min)


def _arg(self, dim, keepdim, f_all, f_dim):
    if dim is None:
        r = _wrap(f_all(self._ptr))
        return r.reshape([1] * self.ndim) if keepdim else r
    return _wrap(f_dim(self._ptr, _kw_text(dim=_int(dim, "argmax"), keepdim=bool(keepdim))))


@_method("argmax")
def argmax(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, lib.tn_argmax, lib.tn_argmax_dim_str)


@_method("argmin")
def argmin(self, dim=None, keepdim=False):
    return _arg(self, dim, keepdim, lib.tn_argmin, lib.tn_argmin_dim_str)


def _correction(dim, unbiased, correction):
    if isinstance(dim, bool):                 # the old var(unbiased) signature
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    elif unbiased is not None:
        raise RuntimeError("var/std: cannot specify both unbiased and correction")
    return dim, _int(correction, "var", "correction")


def _var_std(self, dim, unbiased, keepdim, correction, f_all, f_dims):
    dim, corr = _correction(dim, unbiased, correction)
    if (dim is None or dim == ()) and not keepdim or self.ndim == 0:
        return _wrap(f_all(self._ptr, _kw_text(correction=corr)))
    arr, n = _i64(_all_dims(self, dim))
    return _wrap(f_dims(self._ptr, arr, n, _kw_text(correction=corr, keepdim=bool(keepdim))))


@_method("var")
def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std(self, dim, unbiased, keepdim, correction, lib.tn_var_str, lib.tn_var_dims_str)


@_method("std")
def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std(self, dim, unbiased, keepdim, correction, lib.tn_std_str, lib.tn_std_dims_str)


def _var_std_mean(input, dim, unbiased, keepdim, correction, name, f_all, f_dims):
    _tensor_arg(input, name)
    dim, corr = _correction(dim, unbiased, correction)
    m = c_void_p()
    if (dim is None or dim == ()) and not keepdim or input.ndim == 0:
        v = _wrap(f_all(input._ptr, byref(m), _kw_text(correction=corr)))
    else:
        arr, n = _i64(_all_dims(input, dim))
        v = _wrap(f_dims(input._ptr, arr, n, byref(m), _kw_text(correction=corr, keepdim=bool(keepdim))))
    return v, _wrap(m.value)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std_mean(input, dim, unbiased, keepdim, correction, "var_mean", lib.tn_var_mean_str, lib.tn_var_mean_dims_str)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_std_mean(input, dim, unbiased, keepdim, correction, "std_mean", lib.tn_std_mean_str, lib.tn_std_mean_dims_str)


FUNCTIONS["var_mean"] = var_mean
FUNCTIONS["std_mean"] = std_mean


@_method("norm")
def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    x = _cast(self, dtype)
    if p == "nuc":   # the sum of the singular values of the matrices over two dims
        if dim is None:
            if x.ndim != 2:
                raise RuntimeError(f"norm: p='nuc' expects a tensor with 2 dimensions, got {x.ndim} (or pass dim=(d0, d1))")
            dim = (-2, -1)
        if isinstance(dim, int) or len(dim) != 2:
            raise RuntimeError("norm: the nuclear norm requires a 'dim' argument of size 2")
        from . import linalg
        return linalg.matrix_norm(x, "nuc", dim=tuple(dim), keepdim=keepdim)
    if p is None or p == "fro":
        p = 2.0
    elif isinstance(p, str):
        raise RuntimeError(f"norm: only valid string values are 'fro' and 'nuc', found {p}")
    p = _scalar(p, "norm", "p")
    if dim is None and not keepdim:
        return _wrap(lib.tn_norm_str(x._ptr, _kw_text(p=p)))
    arr, n = _i64(_all_dims(x, dim))
    return _wrap(lib.tn_norm_dims_str(x._ptr, arr, n, _kw_text(p=p, keepdim=bool(keepdim))))


@_method("logsumexp")
def logsumexp(self, dim, keepdim=False):
    arr, n = _i64(_dims_list(dim, "logsumexp"))
    return _wrap(lib.tn_logsumexp_str(self._ptr, arr, n, _kw_text(keepdim=bool(keepdim))))


@_method("cumsum")
def cumsum(self, dim, *, dtype=None):
    x = _cast(self, dtype)
    return _in_dtype(_wrap(lib.tn_cumsum(x._ptr, _int(dim, "cumsum"))), dtype)


@_method("cumprod")
def cumprod(self, dim, *, dtype=None):
    x = _cast(self, dtype)
    return _in_dtype(_wrap(lib.tn_cumprod(x._ptr, _int(dim, "cumprod"))), dtype)


Tensor.cumsum_ = lambda self, dim, *, dtype=None: self._store(cumsum(self, dim, dtype=dtype))
Tensor.cumprod_ = lambda self, dim, *, dtype=None: self._store(cumprod(self, dim, dtype=dtype))


def _all_any(self, dim, keepdim, f_all, f_dim):
    if dim is None:
        r = _wrap(f_all(self._ptr))
        return r.reshape([1] * self.ndim) if keepdim else r
    dims = _dims_list(dim, "all")
    nd = self.ndim
    r = self
    for d in sorted({_wrap_dim(d, nd) for d in dims}, reverse=True) if len(dims) > 1 else dims:
        r = _wrap(f_dim(r._ptr, d, _kw_text(keepdim=bool(keepdim))))
    return r


@_method("all")
def all(self, dim=None, keepdim=False):
    return _all_any(self, dim, keepdim, lib.tn_all, lib.tn_all_dim_str)


@_method("any")
def any(self, dim=None, keepdim=False):
    return _all_any(self, dim, keepdim, lib.tn_any, lib.tn_any_dim_str)


@_method("count_nonzero")
def count_nonzero(self, dim=None):
    arr, n = _i64(_dims_list(dim, "count_nonzero") or [])
    return _wrap(lib.tn_count_nonzero(self._ptr, arr, n))


@_method("nansum")
def nansum(self, dim=None, keepdim=False, *, dtype=None):
    return _in_dtype(_reduce(_cast(self, dtype), dim, keepdim, lib.tn_nansum, lib.tn_nansum_dims_str), dtype)


@_method("nanmean")
def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    return _reduce(_cast(self, dtype), dim, keepdim, lib.tn_nanmean, lib.tn_nanmean_dims_str)


@_method("sort")
def sort(self, dim=-1, descending=False, stable=False):
    if isinstance(dim, bool):
        raise TypeError("sort(): dim must be an int; use descending=")
    idx = c_void_p()
    v = _wrap(lib.tn_sort_str(self._ptr, byref(idx), _kw_text(dim=_int(dim, "sort"), descending=bool(descending), stable=bool(stable))))
    return return_types.sort(v, _wrap(idx.value))


@_method("argsort")
def argsort(self, dim=-1, descending=False, stable=False):
    return _wrap(lib.tn_argsort_str(self._ptr, _kw_text(dim=_int(dim, "argsort"), descending=bool(descending), stable=bool(stable))))


@_method("msort")
def msort(self):
    return _wrap(lib.tn_msort(self._ptr))


@_method("topk")
def topk(self, k, dim=-1, largest=True, sorted=True):
    idx = c_void_p()
    v = _wrap(lib.tn_topk_str(self._ptr, _int(k, "topk", "k"), byref(idx), _kw_text(dim=_int(dim, "topk"), largest=bool(largest), sorted=bool(sorted))))
    return return_types.topk(v, _wrap(idx.value))


def _values_indices(rtype, f, *args, kw=None):
    idx = c_void_p()
    v = _wrap(f(*args, byref(idx)) if kw is None else f(*args, byref(idx), kw))
    return rtype(v, _wrap(idx.value))


@_method("kthvalue")
def kthvalue(self, k, dim=-1, keepdim=False):
    return _values_indices(return_types.kthvalue, lib.tn_kthvalue_str, self._ptr, _int(k, "kthvalue", "k"), kw=_kw_text(dim=_int(dim, "kthvalue"), keepdim=bool(keepdim)))


@_method("median")
def median(self, dim=None, keepdim=False):
    if dim is None:
        return _wrap(lib.tn_median(self._ptr))
    return _values_indices(return_types.median, lib.tn_median_dim_str, self._ptr, kw=_kw_text(dim=_int(dim, "median"), keepdim=bool(keepdim)))


@_method("nanmedian")
def nanmedian(self, dim=None, keepdim=False):
    if dim is None:
        return _wrap(lib.tn_nanmedian(self._ptr))
    return _values_indices(return_types.nanmedian, lib.tn_nanmedian_dim_str, self._ptr, kw=_kw_text(dim=_int(dim, "nanmedian"), keepdim=bool(keepdim)))


@_method("mode")
def mode(self, dim=-1, keepdim=False):
    return _values_indices(return_types.mode, lib.tn_mode_str, self._ptr, kw=_kw_text(dim=_int(dim, "mode"), keepdim=bool(keepdim)))


@_method("cummax")
def cummax(self, dim):
    return _values_indices(return_types.cummax, lib.tn_cummax, self._ptr, _int(dim, "cummax"))


@_method("cummin")
def cummin(self, dim):
    return _values_indices(return_types.cummin, lib.tn_cummin, self._ptr, _int(dim, "cummin"))


@_method("logcumsumexp")
def logcumsumexp(self, dim):
    return _wrap(lib.tn_logcumsumexp(self._ptr, _int(dim, "logcumsumexp")))


def _py_kw(v):
    """A Python value as the C option text writes it (None, True, 3, 'linear')."""
    return repr(v) if isinstance(v, str) else str(v)


def _kw_text(**kw):
    return ", ".join(f"{k}={_py_kw(v)}" for k, v in kw.items()).encode()


def _quantile(cfn, name, self, q, dim, keepdim, interpolation):
    qt = q if isinstance(q, Tensor) else _scalar_tensor(_float(q, name, "q"))
    if not isinstance(interpolation, str):
        raise TypeError(f"{name}(): argument 'interpolation' must be str, not {type(interpolation).__name__}")
    d = None if dim is None else _int(dim, name)
    return _wrap(cfn(self._ptr, qt._ptr, _kw_text(dim=d, keepdim=bool(keepdim), interpolation=interpolation)))


@_method("quantile")
def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(lib.tn_quantile_str, "quantile", self, q, dim, keepdim, interpolation)


@_method("nanquantile")
def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(lib.tn_nanquantile_str, "nanquantile", self, q, dim, keepdim, interpolation)


def _unique(cfn, self, text, return_inverse, return_counts):
    inv, cnt = c_void_p(), c_void_p()
    v = _wrap(cfn(self._ptr, byref(inv), byref(cnt), text))
    out = (v,) + ((_wrap(inv.value),) if return_inverse else ()) + ((_wrap(cnt.value),) if return_counts else ())
    return out[0] if len(out) == 1 else out


@_method("unique")
def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    text = _kw_text(sorted=bool(sorted), return_inverse=bool(return_inverse), return_counts=bool(return_counts),
                    dim=None if dim is None else _int(dim, "unique"))
    return _unique(lib.tn_unique_str, self, text, return_inverse, return_counts)


@_method("unique_consecutive")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    text = _kw_text(return_inverse=bool(return_inverse), return_counts=bool(return_counts),
                    dim=None if dim is None else _int(dim, "unique_consecutive"))
    return _unique(lib.tn_unique_consecutive_str, self, text, return_inverse, return_counts)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    seq = _tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    v = _operand(input)
    if side is not None and not isinstance(side, str):
        raise TypeError(f"searchsorted(): argument 'side' must be str, not {type(side).__name__}")
    srt = None if sorter is None else _tensor_arg(sorter, "searchsorted", "sorter")
    o = _C.tn_searchsorted_fn_opts(bool(out_int32), bool(right), None if side is None else side.encode(), None if srt is None else srt._ptr)
    return _wrap(lib.tn_searchsorted_opts(seq._ptr, v._ptr, o))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    b = _tensor_arg(boundaries, "bucketize", "boundaries")
    v = _operand(input)
    return _wrap(lib.tn_bucketize_str(v._ptr, b._ptr, _kw_text(out_int32=bool(out_int32), right=bool(right))))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    e, t = _operand(elements), _operand(test_elements)
    return _wrap(lib.tn_isin_str(e._ptr, t._ptr, _kw_text(assume_unique=bool(assume_unique), invert=bool(invert))))


FUNCTIONS.update(searchsorted=searchsorted, bucketize=bucketize, isin=isin)


@_method("bincount")
def bincount(self, weights=None, minlength=0):
    w = None if weights is None else _tensor_arg(weights, "bincount", "weights")
    return _wrap(lib.tn_bincount_str(self._ptr, None if w is None else w._ptr, _kw_text(minlength=_int(minlength, "bincount", "minlength"))))


@_method("histc")
def histc(self, bins=100, min=0, max=0):
    return _wrap(lib.tn_histc_str(self._ptr, _kw_text(bins=_int(bins, "histc", "bins"), min=_scalar(min, "histc", "min"), max=_scalar(max, "histc", "max"))))


# --------------------------------------------------------------------------- indexed updates
@_method("index_add")
def index_add(self, dim, index, source, *, alpha=1):
    return _wrap(lib.tn_index_add_str(self._ptr, _int(dim, "index_add"), _tp(index, "index_add", "index"), _tp(source, "index_add", "source"),
                                      _kw_text(alpha=float(_scalar(alpha, "index_add", "alpha")))))


def _index_add_(self, dim, index, source, *, alpha=1):
    source = _unalias(self, source)
    return self._inplace(lib.tn_index_add__str(self._ptr, _int(dim, "index_add_"), _tp(index, "index_add_", "index"),
                                               _tp(source, "index_add_", "source"), _kw_text(alpha=float(_scalar(alpha, "index_add_", "alpha")))))


@_method("index_copy")
def index_copy(self, dim, index, source):
    return _wrap(lib.tn_index_copy(self._ptr, _int(dim, "index_copy"), _tp(index, "index_copy", "index"), _tp(source, "index_copy", "source")))


def _index_copy_(self, dim, index, source):
    source = _unalias(self, source)
    return self._inplace(lib.tn_index_copy_(self._ptr, _int(dim, "index_copy_"), _tp(index, "index_copy_", "index"),
                                            _tp(source, "index_copy_", "source")))


def _complex_value(value):
    """value as a Python complex where it is one (or a complex 0-d tensor), else None"""
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.is_complex:
        return _bi.complex(value.item())
    return value if type(value) is _bi.complex else None


def _fill_by_parts(fn, self, value, f):
    """f(t, v) for a complex fill value v (the C entries take real ones): part by part on a
    complex tensor; a real tensor takes a value without an imaginary part only, as torch"""
    if not self.dtype.is_complex:
        if value.imag != 0:
            raise RuntimeError(f"{fn}: value cannot be converted to type {self.dtype.name} without overflow")
        return f(self, value.real)
    return _complex(f(self.real, value.real), f(self.imag, value.imag))


def _fill_value(value, fn):
    if isinstance(value, Tensor):      # a 0-d tensor's value (its gradient is not propagated)
        if value.ndim != 0:
            raise RuntimeError(f"{fn} only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s).")
        return float(value.item())
    return _scalar(value, fn, "value")


@_method("index_fill")
def index_fill(self, dim, index, value):
    if _complex_value(value) is not None:
        return _fill_by_parts("index_fill", self, _complex_value(value), lambda t, v: index_fill(t, dim, index, v))
    return _wrap(lib.tn_index_fill(self._ptr, _int(dim, "index_fill"), _tp(index, "index_fill", "index"), _fill_value(value, "index_fill")))


def _index_fill_(self, dim, index, value):
    if _complex_value(value) is not None:
        return self._store(index_fill(self, dim, index, value))
    return self._inplace(lib.tn_index_fill_(self._ptr, _int(dim, "index_fill_"), _tp(index, "index_fill_", "index"),
                                            _fill_value(value, "index_fill_")))


@_method("scatter_reduce")
def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    return _wrap(lib.tn_scatter_reduce_str(self._ptr, _int(dim, "scatter_reduce"), _tp(index, "scatter_reduce", "index"),
                                           _tp(src, "scatter_reduce", "src"), _str_arg(reduce, "scatter_reduce", "reduce"),
                                           _kw_text(include_self=bool(include_self))))


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    src = _unalias(self, src)
    return self._inplace(lib.tn_scatter_reduce__str(self._ptr, _int(dim, "scatter_reduce_"), _tp(index, "scatter_reduce_", "index"),
                                                    _tp(src, "scatter_reduce_", "src"), _str_arg(reduce, "scatter_reduce_", "reduce"),
                                                    _kw_text(include_self=bool(include_self))))


@_method("take")
def take(self, index):
    return _wrap(lib.tn_take(self._ptr, _tp(index, "take", "index")))


@_method("put")
def put(self, index, source, accumulate=False):
    return _wrap(lib.tn_put_str(self._ptr, _tp(index, "put", "index"), _tp(source, "put", "source"), _kw_text(accumulate=bool(accumulate))))


def _put_(self, index, source, accumulate=False):
    source = _unalias(self, source)
    return self._inplace(lib.tn_put__str(self._ptr, _tp(index, "put_", "index"), _tp(source, "put_", "source"), _kw_text(accumulate=bool(accumulate))))


@_method("take_along_dim")
def take_along_dim(self, indices, dim=None):
    return _wrap(lib.tn_take_along_dim(self._ptr, _tp(indices, "take_along_dim", "indices"), _NONE if dim is None else _int(dim, "take_along_dim")))


@_method("masked_scatter")
def masked_scatter(self, mask, source):
    return _wrap(lib.tn_masked_scatter(self._ptr, _tp(mask, "masked_scatter", "mask"), _tp(source, "masked_scatter", "source")))


def _masked_scatter_(self, mask, source):
    source = _unalias(self, source)
    return self._inplace(lib.tn_masked_scatter_(self._ptr, _tp(mask, "masked_scatter_", "mask"), _tp(source, "masked_scatter_", "source")))


Tensor.index_add_ = _index_add_
Tensor.index_copy_ = _index_copy_
Tensor.index_fill_ = _index_fill_
Tensor.scatter_reduce_ = _scatter_reduce_
Tensor.put_ = _put_
Tensor.masked_scatter_ = _masked_scatter_


# --------------------------------------------------------------------------- repeats and differences
@_method("repeat_interleave")
def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    d = None if dim is None else _int(dim, "repeat_interleave")
    osz = None if output_size is None else _int(output_size, "repeat_interleave", "output_size")
    if repeats is None:                # torch.repeat_interleave(repeats): self holds the counts
        return _wrap(lib.tn_repeat_interleave_indices_str(self._ptr, _kw_text(output_size=osz)))
    if isinstance(repeats, Tensor):
        return _wrap(lib.tn_repeat_interleave_tensor_str(self._ptr, repeats._ptr, _kw_text(dim=d, output_size=osz)))
    return _wrap(lib.tn_repeat_interleave_str(self._ptr, _int(repeats, "repeat_interleave", "repeats"), _kw_text(dim=d, output_size=osz)))


@_method("diff")
def diff(self, n=1, dim=-1, prepend=None, append=None):
    o = _C.tn_diff_fn_opts(_int(n, "diff", "n"), _int(dim, "diff"), _otp(prepend, "diff", "prepend"), _otp(append, "diff", "append"))
    return _wrap(lib.tn_diff_opts(self._ptr, o))


# --------------------------------------------------------------------------- sampling
@_method("multinomial")
def multinomial(self, num_samples, replacement=False, *, generator=None):
    return _wrap(lib.tn_multinomial_str(self._ptr, _int(num_samples, "multinomial", "num_samples"), _gen(generator),
                                        _kw_text(replacement=bool(replacement))))


# --------------------------------------------------------------------------- linear algebra
def _lin(name, cname=None):
    f = getattr(lib, "tn_" + (cname or name))

    def method(self, other):
        return _wrap(f(self._ptr, _tp(other, name, "other")))
    method.__name__ = name
    return method


matmul = _method("matmul")(_lin("matmul"))
_method("mm")(_lin("mm"))
_method("bmm")(_lin("bmm"))
_method("mv")(_lin("mv"))
_method("dot")(_lin("dot"))
_method("outer", "ger")(_lin("outer"))


def _add_scaled_product(fn, self, product, beta, alpha):
    """beta self + alpha product() for a Python complex beta or alpha (the C entries take real
    scalars): complex tensors only, as torch; beta == 0 ignores self (its NaN too)"""
    if not self.dtype.is_complex:
        raise RuntimeError(f"{fn}: value cannot be converted to type {self.dtype.name} without overflow")
    r = product() * alpha
    return r if beta == 0 else r + self * beta


@_method("addmm")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    if type(beta) is _bi.complex or type(alpha) is _bi.complex:
        return _add_scaled_product("addmm", self, lambda: mat1.mm(mat2), beta, alpha)
    return _wrap(lib.tn_addmm_str(self._ptr, _tp(mat1, "addmm", "mat1"), _tp(mat2, "addmm", "mat2"),
                                  _kw_text(beta=_scalar(beta, "addmm", "beta"), alpha=_scalar(alpha, "addmm", "alpha"))))


@_method("baddbmm")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    if type(beta) is _bi.complex or type(alpha) is _bi.complex:
        return _add_scaled_product("baddbmm", self, lambda: batch1.bmm(batch2), beta, alpha)
    return _wrap(lib.tn_baddbmm_str(self._ptr, _tp(batch1, "baddbmm", "batch1"), _tp(batch2, "baddbmm", "batch2"),
                                    _kw_text(beta=_scalar(beta, "baddbmm", "beta"), alpha=_scalar(alpha, "baddbmm", "alpha"))))


@_method("addmv")
def addmv(self, mat, vec, *, beta=1, alpha=1):
    if type(beta) is _bi.complex or type(alpha) is _bi.complex:
        return _add_scaled_product("addmv", self, lambda: mat.mv(vec), beta, alpha)
    return _wrap(lib.tn_addmv_str(self._ptr, _tp(mat, "addmv", "mat"), _tp(vec, "addmv", "vec"),
                                  _kw_text(beta=_scalar(beta, "addmv", "beta"), alpha=_scalar(alpha, "addmv", "alpha"))))


@_method("addr")
def addr(self, vec1, vec2, *, beta=1, alpha=1):
    if type(beta) is _bi.complex or type(alpha) is _bi.complex:
        return _add_scaled_product("addr", self, lambda: vec1.outer(vec2), beta, alpha)
    return _wrap(lib.tn_addr_str(self._ptr, _tp(vec1, "addr", "vec1"), _tp(vec2, "addr", "vec2"),
                                 _kw_text(beta=_scalar(beta, "addr", "beta"), alpha=_scalar(alpha, "addr", "alpha"))))


@_method("addbmm")
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    if type(beta) is _bi.complex or type(alpha) is _bi.complex:
        return _add_scaled_product("addbmm", self, lambda: batch1.bmm(batch2).sum(0), beta, alpha)
    return _wrap(lib.tn_addbmm_str(self._ptr, _tp(batch1, "addbmm", "batch1"), _tp(batch2, "addbmm", "batch2"),
                                   _kw_text(beta=_scalar(beta, "addbmm", "beta"), alpha=_scalar(alpha, "addbmm", "alpha"))))


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return self._store(addmm(self, mat1, mat2, beta=beta, alpha=alpha))


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return self._store(baddbmm(self, batch1, batch2, beta=beta, alpha=alpha))


Tensor.addmm_, Tensor.baddbmm_ = _addmm_, _baddbmm_
Tensor.addmv_ = lambda self, mat, vec, *, beta=1, alpha=1: self._store(addmv(self, mat, vec, beta=beta, alpha=alpha))
Tensor.addr_ = lambda self, vec1, vec2, *, beta=1, alpha=1: self._store(addr(self, vec1, vec2, beta=beta, alpha=alpha))
Tensor.addbmm_ = lambda self, b1, b2, *, beta=1, alpha=1: self._store(addbmm(self, b1, b2, beta=beta, alpha=alpha))
_method("vdot")(_lin("vdot"))
_method("kron")(_lin("kron"))


@_method("inner")
def inner(self, other):
    other = _tensor_arg(other, "inner", "other")
    return _wrap(lib.tn_inner(self._ptr, other._ptr))


@_method("trace")
def trace(self):
    return _wrap(lib.tn_trace(self._ptr))


def tensordot(a, b, dims=2, out=None):
    a, b = _tensor_arg(a, "tensordot", "a"), _tensor_arg(b, "tensordot", "b")
    if out is not None:
        raise TypeError("tensordot(): out= is not supported")
    if isinstance(dims, Tensor):
        dims = int(dims.item()) if dims.numel() == 1 else dims.tolist()
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > _bi.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        try:
            da, db = dims
        except (TypeError, ValueError):
            raise TypeError("tensordot(): dims must be an int or a pair of lists of dims") from None
        da, db = _dims_list(da, "tensordot", "dims"), _dims_list(db, "tensordot", "dims")
        if len(da) != len(db):
            raise RuntimeError(f"both dimension lists should have same length, got {len(da)} and {len(db)}")
    text = f"dims_a={list(da)}, dims_b={list(db)}" if len(da) else "dims=0"
    return _wrap(lib.tn_tensordot_str(a._ptr, b._ptr, text.encode()))


@_method("cross")
def cross(self, other, dim=None):
    other = _tensor_arg(other, "cross", "other")
    if dim is None:   # PyTorch's rule (deprecated there): the first dim of size 3 in the broadcast shape
        shape = broadcast_shapes(self.shape, other.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {list(self.shape)} and {list(other.shape)})")
    return _wrap(lib.tn_cross_str(self._ptr, other._ptr, f"dim={_int(dim, 'cross')}".encode()))


def linalg_cross(input, other, *, dim=-1):
    return _wrap(lib.tn_cross_str(_tp(input, "linalg.cross"), _tp(other, "linalg.cross", "other"), f"dim={_int(dim, 'linalg.cross')}".encode()))


# ---- torch.linalg's factorisations (src/ops/linalg_factor.c); tensor.linalg wraps them ----
def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    piv, info = c_void_p(), c_void_p()
    LU = _wrap(lib.tn_linalg_lu_factor_ex_str(_tp(A, "linalg.lu_factor_ex", "A"), byref(piv), byref(info),
                                              _kw_text(pivot=bool(pivot), check_errors=bool(check_errors))))
    return return_types.linalg_lu_factor_ex(LU, _wrap(piv.value), _wrap(info.value))


def linalg_lu_factor(A, *, pivot=True):
    piv = c_void_p()
    LU = _wrap(lib.tn_linalg_lu_factor_str(_tp(A, "linalg.lu_factor", "A"), byref(piv), _kw_text(pivot=bool(pivot))))
    return return_types.linalg_lu_factor(LU, _wrap(piv.value))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    L, U = c_void_p(), c_void_p()
    P = _wrap(lib.tn_lu_unpack(_tp(LU_data, "lu_unpack", "LU_data"), _tp(LU_pivots, "lu_unpack", "LU_pivots"), byref(L), byref(U)))
    L, U = _wrap(L.value), _wrap(U.value)
    empty = LU_data.new_empty(0)   # what torch returns for a part not unpacked
    return return_types.lu_unpack(P if unpack_pivots else empty, L if unpack_data else empty, U if unpack_data else empty)


FUNCTIONS["lu_unpack"] = lu_unpack


def linalg_lu(A, *, pivot=True):
    LU, piv = linalg_lu_factor(A, pivot=pivot)
    return return_types.linalg_lu(*lu_unpack(LU, piv))


@_method("det")
def det(A):
    return _wrap(lib.tn_linalg_det(_tp(A, "det", "A")))


def _slogdet(A, fn, rt):
    sign = c_void_p()
    la = _wrap(lib.tn_linalg_slogdet(_tp(A, fn, "A"), byref(sign)))
    return rt(_wrap(sign.value), la)


@_method("slogdet")
def slogdet(A):
    return _slogdet(A, "slogdet", return_types.slogdet)


def linalg_slogdet(A):
    return _slogdet(A, "linalg.slogdet", return_types.linalg_slogdet)


@_method("logdet")
def logdet(A):
    return _wrap(lib.tn_logdet(_tp(A, "logdet")))


@_method("inverse")
def inverse(A):
    return _wrap(lib.tn_linalg_inv(_tp(A, "inverse")))


def linalg_inv_ex(A, *, check_errors=False):
    info = c_void_p()
    r = _wrap(lib.tn_linalg_inv_ex_str(_tp(A, "linalg.inv_ex", "A"), byref(info), _kw_text(check_errors=bool(check_errors))))
    return return_types.linalg_inv_ex(r, _wrap(info.value))


def linalg_solve(A, B, *, left=True):
    return _wrap(lib.tn_linalg_solve_str(_tp(A, "linalg.solve", "A"), _tp(B, "linalg.solve", "B"), _kw_text(left=bool(left))))


def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    info = c_void_p()
    r = _wrap(lib.tn_linalg_solve_ex_str(_tp(A, "linalg.solve_ex", "A"), _tp(B, "linalg.solve_ex", "B"), byref(info),
                                         _kw_text(left=bool(left), check_errors=bool(check_errors))))
    return return_types.linalg_solve_ex(r, _wrap(info.value))


def linalg_cholesky(A, *, upper=False):
    return _wrap(lib.tn_linalg_cholesky_str(_tp(A, "linalg.cholesky", "A"), _kw_text(upper=bool(upper))))


def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    info = c_void_p()
    L = _wrap(lib.tn_linalg_cholesky_ex_str(_tp(A, "linalg.cholesky_ex", "A"), byref(info), _kw_text(upper=bool(upper), check_errors=bool(check_errors))))
    return return_types.linalg_cholesky_ex(L, _wrap(info.value))


@_method("cholesky")
def cholesky(A, upper=False):
    """torch.cholesky (deprecated in PyTorch for linalg.cholesky): upper is positional."""
    return _wrap(lib.tn_linalg_cholesky_str(_tp(A, "cholesky"), _kw_text(upper=bool(upper))))


# ---- torch.linalg's decompositions (src/ops/linalg_decomp.c); tensor.linalg wraps them ----
def linalg_qr(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")
    R = c_void_p()
    Q = _wrap(lib.tn_linalg_qr_str(_tp(A, "linalg.qr", "A"), byref(R), _kw_text(mode=mode)))
    return return_types.linalg_qr(Q, _wrap(R.value))


@_method("qr")
def qr(A, some=True):
    """torch.qr (deprecated in PyTorch for linalg.qr): some=True is mode='reduced', else 'complete'."""
    R = c_void_p()
    Q = _wrap(lib.tn_qr_str(_tp(A, "qr"), byref(R), _kw_text(some=bool(some))))
    return return_types.qr(Q, _wrap(R.value))


@_method("geqrf")
def geqrf(A):
    tau = c_void_p()
    a = _wrap(lib.tn_geqrf(_tp(A, "geqrf"), byref(tau)))
    return return_types.geqrf(a, _wrap(tau.value))


@_method("ormqr")
def ormqr(input, input2, input3, left=True, transpose=False):
    """op(Q) @ input3 (left) or input3 @ op(Q), Q = H_1 ... H_k of geqrf's (input, input2 = tau),
    op(Q) = Q^H (Q^T for real dtypes) where transpose (tn_ormqr): the reflectors applied in turn, Q never formed.
    Differentiable in all three inputs, as 2025 PyTorch (1.13 had no derivative)."""
    return _wrap(lib.tn_ormqr_str(_tp(input, "ormqr", "input"), _tp(input2, "ormqr", "input2"), _tp(input3, "ormqr", "input3"),
                                  _kw_text(left=bool(left), transpose=bool(transpose))))


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from PyTorch (deprecated in 1.9, gone in 2.x): 2025's torch.symeig raises
    this RuntimeError, pointing to torch.linalg.eigh."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed. "
                       "The default behavior has changed from using the upper triangular portion of the matrix by "
                       "default to using the lower triangular portion.\n\n"
                       "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
                       "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
                       "and\n\n"
                       "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
                       "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def _uplo(UPLO, fn):
    if not isinstance(UPLO, str):
        raise TypeError(f"{fn}(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    return _kw_text(UPLO=UPLO)


def linalg_eigh(A, UPLO="L"):
    V = c_void_p()
    L = _wrap(lib.tn_linalg_eigh_str(_tp(A, "linalg.eigh", "A"), byref(V), _uplo(UPLO, "linalg.eigh")))
    return return_types.linalg_eigh(L, _wrap(V.value))


def linalg_eigvalsh(A, UPLO="L"):
    return _wrap(lib.tn_linalg_eigvalsh_str(_tp(A, "linalg.eigvalsh", "A"), _uplo(UPLO, "linalg.eigvalsh")))


def linalg_svd(A, full_matrices=True, *, driver=None):
    """driver: cuSOLVER's choice on CUDA in PyTorch; only None is accepted on the CPU, as there."""
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.")
    S, Vh = c_void_p(), c_void_p()
    U = _wrap(lib.tn_linalg_svd_str(_tp(A, "linalg.svd", "A"), byref(S), byref(Vh), _kw_text(full_matrices=bool(full_matrices))))
    return return_types.linalg_svd(U, _wrap(S.value), _wrap(Vh.value))


def linalg_svdvals(A, *, driver=None):
    if driver is not None:
        raise RuntimeError("torch.linalg.svdvals: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.")
    return _wrap(lib.tn_linalg_svdvals(_tp(A, "linalg.svdvals", "A")))


@_method("svd")
def svd(A, some=True, compute_uv=True):
    S, V = c_void_p(), c_void_p()
    U = _wrap(lib.tn_svd_str(_tp(A, "svd"), byref(S), byref(V), _kw_text(some=bool(some), compute_uv=bool(compute_uv))))
    return return_types.svd(U, _wrap(S.value), _wrap(V.value))


def _tols_text(fn, atol, rtol, hermitian):
    a = float("nan") if atol is None else _float(atol, fn, "atol")
    r = float("nan") if rtol is None else _float(rtol, fn, "rtol")
    return _kw_text(atol=a, rtol=r, hermitian=bool(hermitian))


def _tensor_tols(A, atol, rtol, hermitian, fn, S=None):
    """PyTorch's tolerances as tensors that broadcast over the batch (one per matrix): the
    singular values (|eigenvalues|, hermitian; or S as given: the decomposition's own, whose
    last bits may differ from svdvals' under LAPACK's gesdd) and max(atol, rtol * largest) [..., 1]."""
    from ._core import complex64, complex128, float64, full, zeros
    m, n = A.shape[-2], A.shape[-1]
    if hermitian and m != n:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {m} by {n} matrices")
    rd = {complex64: float32, complex128: float64}.get(A.dtype, A.dtype)   # complex A: real tolerances
    eps = 1.1920928955078125e-07 if rd == float32 else 2.220446049250313e-16
    default = eps * _bi.max(m, n)
    as_t = lambda v: v if isinstance(v, Tensor) else full((), 0.0 if v is None else _float(v, fn, "tol"), dtype=rd)
    a = as_t(atol)
    if rtol is None:
        r = full((), default, dtype=rd) if atol is None else where(a > 0, full((), 0.0, dtype=rd), full((), default, dtype=rd))
    else:
        r = as_t(rtol)
    if S is None:
        S = linalg_eigvalsh(A).abs() if hermitian else linalg_svdvals(A)
    smax = S.amax(-1) if S.shape[-1] else zeros(S.shape[:-1], dtype=rd)
    tol = a.to(rd).maximum(r.to(rd) * smax)
    return S, tol.unsqueeze(-1)


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """linalg.pinv(A, *, atol=None, rtol=None, hermitian=False), and the older
    pinv(A, rcond, hermitian=False) (rcond is rtol)."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments: rcond cannot be given with atol or rtol")
        rtol = rcond
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):   # per-matrix tolerances: a composite over svd / eigh
        _tp(A, "linalg.pinv", "A")
        S, tol = _tensor_tols(A, atol, rtol, hermitian, "linalg.pinv")
        if A.is_complex():
            # (no complex singular vectors) each matrix through the C pinv with an atol halfway
            # between its smallest value kept and its largest dropped: the same choice as torch's
            # S > tol, whatever the rounding of the C path's own singular values
            if A.numel() == 0:
                return linalg_pinv(A, hermitian=hermitian)
            k = A.shape[-1] if hermitian else _bi.min(A.shape[-2], A.shape[-1])
            S = S.sort(-1, descending=True).values.reshape(-1, k).tolist()
            tols = tol.expand(*A.shape[:-2], 1).reshape(-1).tolist()
            keep = [[v > t for v in row] for row, t in zip(S, tols)]
            mats = A.reshape(-1, *A.shape[-2:])
            ps = []
            for i in range(mats.shape[0]):
                kept = [v for v, kp in zip(S[i], keep[i]) if kp]
                dropped = [v for v, kp in zip(S[i], keep[i]) if not kp]
                at = float("inf") if not kept else 0.0 if not dropped else (_bi.min(kept) + _bi.max(dropped)) / 2
                ps.append(linalg_pinv(mats[i], hermitian=hermitian, atol=at, rtol=0.0))
            return stack(ps).reshape(*A.shape[:-2], A.shape[-1], A.shape[-2])
        if hermitian:   # (torch's: the tolerance from the decomposition's own values)
            L, V = linalg_eigh(A)
            tol = _tensor_tols(A, atol, rtol, hermitian, "linalg.pinv", L.abs())[1]
            Linv = where(L.abs() > tol, 1 / L, L.new_zeros(()))
            return (V * Linv.unsqueeze(-2)) @ V.mT
        U, S, Vh = linalg_svd(A, full_matrices=False)
        tol = _tensor_tols(A, atol, rtol, hermitian, "linalg.pinv", S)[1]
        Sinv = where(S > tol, 1 / S, S.new_zeros(()))
        return (Vh.mT * Sinv.unsqueeze(-2)) @ U.mT
    return _wrap(lib.tn_linalg_pinv_str(_tp(A, "linalg.pinv", "A"), _tols_text("linalg.pinv", atol, rtol, hermitian)))


@_method("pinverse")
def pinverse(A, rcond=1e-15):
    return _wrap(lib.tn_pinverse_str(_tp(A, "pinverse"), _kw_text(rcond=_float(rcond, "pinverse", "rcond"))))


def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """linalg.matrix_rank(A, *, atol=None, rtol=None, hermitian=False), and the older
    matrix_rank(A, tol=None, hermitian=False) (tol is atol, with rtol 0)."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments: tol cannot be given with atol or rtol")
        atol, rtol = tol, 0.0
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):   # per-matrix tolerances
        _tp(A, "linalg.matrix_rank", "A")
        S, tol = _tensor_tols(A, atol, rtol, hermitian, "linalg.matrix_rank")
        return (S > tol).sum(-1)
    return _wrap(lib.tn_linalg_matrix_rank_str(_tp(A, "linalg.matrix_rank", "A"), _tols_text("linalg.matrix_rank", atol, rtol, hermitian)))


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"linalg.lstsq(): argument 'driver' must be str, not {type(driver).__name__}")
    res, rank, sv = c_void_p(), c_void_p(), c_void_p()
    kw = {"rcond": float("nan") if rcond is None else _float(rcond, "linalg.lstsq", "rcond")}
    if driver is not None:
        kw["driver"] = driver
    X = _wrap(lib.tn_linalg_lstsq_str(_tp(A, "linalg.lstsq", "A"), _tp(B, "linalg.lstsq", "B"), byref(res), byref(rank), byref(sv), _kw_text(**kw)))
    return return_types.linalg_lstsq(X, _wrap(res.value), _wrap(rank.value), _wrap(sv.value))


_COND_ORDS = {2: "2", -2: "-2", 1: "1", -1: "-1", float("inf"): "inf", float("-inf"): "-inf", "fro": "fro", "nuc": "nuc"}


def linalg_cond(A, p=None):
    if p is not None and (isinstance(p, bool) or p not in _COND_ORDS):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    return _wrap(lib.tn_linalg_cond(_tp(A, "linalg.cond", "A"), None if p is None else _COND_ORDS[p].encode()))


def _einsum_sublist(args):
    """einsum(op1, sub1, op2, sub2, ..., [out]) as an equation: ints 0..51 are letters, Ellipsis is '...'."""
    def letters(sub):
        out = []
        for v in sub:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, numbers.Integral) and 0 <= v < 52:
                out.append(chr(ord("A") + v) if v < 26 else chr(ord("a") + v - 26))
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52), got {v}")
        return "".join(out)
    n = len(args) // 2
    ops, subs = [args[2 * i] for i in range(n)], [letters(args[2 * i + 1]) for i in range(n)]
    eq = ",".join(subs) + ("->" + letters(args[-1]) if len(args) % 2 else "")
    return eq, ops


def einsum(*args):
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        eq, ops = _einsum_sublist(args)
    ops = _tensor_list(ops, "einsum")
    return _wrap(lib.tn_einsum(eq.encode(), _ptrs(ops), len(ops)))


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode=None):
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _wrap(lib.tn_cdist_str(_tp(x1, "cdist", "x1"), _tp(x2, "cdist", "x2"),
                                  _kw_text(p=_float(p, "cdist", "p"), compute_mode=compute_mode or "use_mm_for_euclid_dist_if_necessary")))


def pdist(input, p=2):
    return _wrap(lib.tn_pdist_str(_tp(input, "pdist"), _kw_text(p=_float(p, "pdist", "p"))))


@_method("cov")
def cov(self, *, correction=1, fweights=None, aweights=None):
    o = _C.tn_cov_fn_opts(_int(correction, "cov", "correction"), _otp(fweights, "cov", "fweights"), _otp(aweights, "cov", "aweights"))
    return _wrap(lib.tn_cov_opts(self._ptr, o))


@_method("corrcoef")
def corrcoef(self):
    return _wrap(lib.tn_corrcoef(self._ptr))


@_method("diagonal")
def diagonal(self, offset=0, dim1=0, dim2=1):
    return _wrap(lib.tn_diagonal_str(self._ptr, _kw_text(offset=_int(offset, "diagonal", "offset"), dim1=_int(dim1, "diagonal", "dim1"),
                                                       dim2=_int(dim2, "diagonal", "dim2"))))


@_method("diag_embed")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    return _wrap(lib.tn_diag_embed_str(self._ptr, _kw_text(offset=_int(offset, "diag_embed", "offset"), dim1=_int(dim1, "diag_embed", "dim1"),
                                                         dim2=_int(dim2, "diag_embed", "dim2"))))


@_method("diag")
def diag(self, diagonal=0):
    return _wrap(lib.tn_diag_str(self._ptr, _kw_text(diagonal=_int(diagonal, "diag", "diagonal"))))


@_method("diagflat")
def diagflat(self, offset=0):
    return _wrap(lib.tn_diagflat_str(self._ptr, _kw_text(offset=_int(offset, "diagflat", "offset"))))


@_method("rot90")
def rot90(self, k=1, dims=(0, 1)):
    dims = _dims_list(dims, "rot90", "dims")
    if len(dims) != 2:   # before the text, which has no empty tuple
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    return _wrap(lib.tn_rot90_str(self._ptr, _kw_text(k=_int(k, "rot90", "k"), dims=tuple(dims))))


# --------------------------------------------------------------------------- in-place random fills
def _gen(generator):
    from ._factories import _gen
    return _gen(generator)


def _uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    if kw:
        raise TypeError(f"uniform_() got unexpected keyword arguments {sorted(kw)}")
    return self._inplace(lib.tn_uniform__opts(self._ptr, _C.tn_uniform_fill_opts(_float(from_, "uniform_", "from"), _float(to, "uniform_", "to"), _gen(generator))))


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    return self._inplace(lib.tn_normal__opts(self._ptr, _C.tn_normal_fill_opts(_float(mean, "normal_", "mean"), _float(std, "normal_", "std"), _gen(generator))))


def _bernoulli_(self, p=0.5, *, generator=None):
    if self.dtype.is_complex:   # (the draw is copied into self: refused first, as torch's kernel)
        raise RuntimeError(f"\"bernoulli_scalar_cpu_\" not implemented for '{self.dtype._legacy.replace('Tensor', '')}'")
    if isinstance(p, Tensor):
        pc = p.expand_as(self).contiguous()
        r = _wrap(lib.tn_bernoulli(pc._ptr, _gen(generator)))
    else:
        arr, n = _i64(self.shape)
        r = _wrap(lib.tn_bernoulli_p(arr, n, _float(p, "bernoulli_", "p"), float32._code, _gen(generator)))
    return self.copy_(r)


Tensor.uniform_ = _uniform_
Tensor.normal_ = _normal_
Tensor.bernoulli_ = _bernoulli_


def _exponential_(self, lambd=1.0, *, generator=None):
    return self._inplace(lib.tn_exponential__opts(self._ptr, _C.tn_exponential_fill_opts(_float(lambd, "exponential_", "lambd"), _gen(generator))))


def _geometric_(self, p, *, generator=None):
    return self._inplace(lib.tn_geometric__opts(self._ptr, _float(p, "geometric_", "p"), _C.tn_generator_fill_opts(_gen(generator))))


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    return self._inplace(lib.tn_cauchy__opts(self._ptr, _C.tn_cauchy_fill_opts(_float(median, "cauchy_", "median"),
                                                                          _float(sigma, "cauchy_", "sigma"), _gen(generator))))


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    return self._inplace(lib.tn_log_normal__opts(self._ptr, _C.tn_log_normal_fill_opts(_float(mean, "log_normal_", "mean"),
                                                                                  _float(std, "log_normal_", "std"), _gen(generator))))


_NONE64 = -(1 << 63)   # TN_NONE


def _random_(self, *args, generator=None, **kw):
    """random_(), random_(to), random_(from, to) (to None: up to the dtype's largest value)"""
    if "from" in kw:
        args = (kw.pop("from"),) + args
    if "to" in kw:
        args = (args[0] if args else 0, kw.pop("to"))
    if kw or len(args) > 2:
        raise TypeError(f"random_() received an invalid combination of arguments: {len(args)} positional, keywords {sorted(kw)}")
    if len(args) == 1:
        args = (0, args[0])
    from_, to = args if args else (0, None)
    from_ = _int(from_, "random_", "from")
    to = _NONE64 if to is None else _int(to, "random_", "to")
    return self._inplace(lib.tn_random__opts(self._ptr, _C.tn_random_fill_opts(from_, to, _gen(generator))))


Tensor.exponential_ = _exponential_
Tensor.geometric_ = _geometric_
Tensor.cauchy_ = _cauchy_
Tensor.log_normal_ = _log_normal_
Tensor.random_ = _random_


# --------------------------------------------------------------------------- joining and splitting
def _tensor_list(tensors, fn):
    if isinstance(tensors, Tensor):   # a tuple or list of tensors, not a tensor to iterate (PyTorch's TypeError)
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    ts = list(tensors)
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): expected a sequence of Tensors, got {type(t).__name__}")
    return ts


def cat(tensors, dim=0):
    ts = _tensor_list(tensors, "cat")
    return _wrap(lib.tn_cat_str(_ptrs(ts), len(ts), _kw_text(dim=_int(dim, "cat"))))


def stack(tensors, dim=0):
    ts = _tensor_list(tensors, "stack")
    return _wrap(lib.tn_stack_str(_ptrs(ts), len(ts), _kw_text(dim=_int(dim, "stack"))))


def _npstack(name, f):
    def fn(tensors):
        ts = _tensor_list(tensors, name)
        return _wrap(f(_ptrs(ts), len(ts)))
    fn.__name__ = fn.__qualname__ = name
    return fn


hstack = _npstack("hstack", lib.tn_hstack)
vstack = _npstack("vstack", lib.tn_vstack)
dstack = _npstack("dstack", lib.tn_dstack)
column_stack = _npstack("column_stack", lib.tn_column_stack)


def _atleast(name, one):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return one(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return tuple(one(t) for t in _tensor_list(tensors, name))
    fn.__name__ = fn.__qualname__ = name
    return fn


atleast_1d = _atleast("atleast_1d", lambda t: t if t.ndim >= 1 else _wrap(lib.tn_atleast_1d(t._ptr)))
atleast_2d = _atleast("atleast_2d", lambda t: t if t.ndim >= 2 else _wrap(lib.tn_atleast_2d(t._ptr)))
atleast_3d = _atleast("atleast_3d", lambda t: t if t.ndim >= 3 else _wrap(lib.tn_atleast_3d(t._ptr)))


def block_diag(*tensors):
    ts = _tensor_list(tensors, "block_diag")
    return _wrap(lib.tn_block_diag(_ptrs(ts), len(ts)))


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    ts = _tensor_list(tensors, "meshgrid")
    if indexing is not None and not isinstance(indexing, str):
        raise TypeError(f"meshgrid(): argument 'indexing' must be str, not {type(indexing).__name__}")
    if indexing is None:   # as PyTorch (1.13 and 2.x)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.", UserWarning, stacklevel=2)
    if indexing not in (None, "ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    out = (c_void_p * _bi.max(len(ts), 1))()
    k = _check_int(lib.tn_meshgrid_str(_ptrs(ts), len(ts), out, _kw_text(indexing=indexing or "ij")))
    return tuple(_wrap(out[i]) for i in range(k))


def cartesian_prod(*tensors):
    ts = _tensor_list(tensors, "cartesian_prod")
    return _wrap(lib.tn_cartesian_prod(_ptrs(ts), len(ts)))


@_method("tensor_split")
def tensor_split(self, indices_or_sections, dim=0):
    dim = _int(dim, "tensor_split")
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype.name != "int64":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got {t.dtype}")
        if t.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with {t.ndim} dims")
        indices_or_sections = int(t.item()) if t.ndim == 0 else t.tolist()
    if isinstance(indices_or_sections, (list, tuple)):
        arr, n = _i64([_int(i, "tensor_split", "indices") for i in indices_or_sections], "indices")
        return self._pieces(lambda out, cap: lib.tn_tensor_split_indices_str(self._ptr, arr, n, out, cap, _kw_text(dim=dim)))
    sections = _int(indices_or_sections, "tensor_split", "sections")
    return self._pieces(lambda out, cap: lib.tn_tensor_split_str(self._ptr, sections, out, cap, _kw_text(dim=dim)))


def _split_fn(name, dim_of, min_ndim):
    def fn(self, indices_or_sections):
        if self.ndim < min_ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension{'s' if min_ndim > 1 else ''}, "
                               f"but got a tensor with {self.ndim} dimensions!")
        dim = dim_of(self)
        if not isinstance(indices_or_sections, (list, tuple, Tensor)):
            n = _int(indices_or_sections, name, "sections")
            if n == 0 or self.shape[dim] % n:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                                   f"{self.shape[dim]} is not divisible by the split_size {n}!")
        return tensor_split(self, indices_or_sections, dim)
    fn.__name__ = fn.__qualname__ = name
    return fn


_method("hsplit")(_split_fn("hsplit", lambda t: 1 if t.ndim > 1 else 0, 1))
_method("vsplit")(_split_fn("vsplit", lambda t: 0, 2))
_method("dsplit")(_split_fn("dsplit", lambda t: 2, 3))


@_method("split_with_sizes")
def split_with_sizes(self, split_sizes, dim=0):
    sizes = _dims_list(list(split_sizes), "split_with_sizes", "split_sizes")
    d = _wrap_dim(_int(dim, "split_with_sizes"), self.ndim) if self.ndim else 0
    if self.ndim and _bi.sum(sizes) != self.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's size at dimension {d}), but got split_sizes={sizes}")
    return self.split(sizes, dim)


@_method("narrow_copy")
def narrow_copy(self, dim, start, length):
    return _wrap(lib.tn_narrow_copy(self._ptr, _int(dim, "narrow_copy", "dim"), _int(start, "narrow_copy", "start"), _int(length, "narrow_copy", "length")))


@_method("sum_to_size", function=False)
def sum_to_size(self, *size):
    from ._core import _shape_args
    size = _shape_args(size, "size")
    arr, n = _i64(size)
    return _wrap(lib.tn_sum_to_size(self._ptr, arr, n))


def _become(self, view):
    """An in-place view op: self's handle becomes the view's (the Python object stays the same)."""
    self._ptr, view._ptr = view._ptr, self._ptr
    return self


Tensor.transpose_ = lambda self, dim0, dim1: _become(self, self.transpose(dim0, dim1))
Tensor.swapaxes_ = Tensor.swapdims_ = Tensor.transpose_
Tensor.t_ = lambda self: _become(self, self.t())
Tensor.squeeze_ = lambda self, *dim: _become(self, self.squeeze(*dim))
Tensor.unsqueeze_ = lambda self, dim: _become(self, self.unsqueeze(dim))
Tensor.as_strided_ = lambda self, size, stride, storage_offset=None: _become(self, self.as_strided(size, stride, storage_offset))


def _resize_(self, *sizes, memory_format=None):
    """Tensor.resize_: a contiguous view of the same storage where it holds enough elements
    (as PyTorch); otherwise a new, larger storage holding the old elements first (other
    views of the old storage do not see it; the added elements are zeros, PyTorch's are
    uninitialised)."""
    from ._core import _shape_args
    size = _shape_args(sizes, "size")
    if _bi.any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {_bi.min(size)}: {size}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    n = math.prod(size)
    strides, acc = [], 1
    for s in reversed(size):
        strides.append(acc)
        acc *= _bi.max(s, 1)
    strides.reverse()
    if self.is_contiguous() and n <= self.numel():
        return _become(self, self.as_strided(size, strides, self.storage_offset()))
    new = self.new_zeros(size) if hasattr(self, "new_zeros") else (self.flatten()[:0].sum() * 0).expand(size).clone()
    k = _bi.min(n, self.numel())
    if k:
        new.view(-1)[:k] = self.reshape(-1)[:k]
    return _become(self, new)


Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, other, memory_format=None: _resize_(self, _tensor_arg(other, "resize_as_", "the_template").shape)


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        s = [s] if isinstance(s, numbers.Integral) else list(s)
        a, na = _i64(out)
        b, nb = _i64(s)
        res, _ = _i64([0] * _C.MAX_DIMS)   # TN_MAX_DIMS entries: what the C side may write
        nd = _check_int(lib.tn_broadcast_shapes(a, na, b, nb, res))
        out = list(res[:nd])
    from ._core import Size
    return Size(out)


def broadcast_tensors(*tensors):
    _tensor_list(tensors, "broadcast_tensors")
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


def split(tensor, split_size_or_sections, dim=0):
    return _tensor_arg(tensor, "split", "tensor").split(split_size_or_sections, dim)


FUNCTIONS.update(cat=cat, concat=cat, concatenate=cat, stack=stack, hstack=hstack, vstack=vstack, row_stack=vstack,
                 dstack=dstack, column_stack=column_stack, block_diag=block_diag, meshgrid=meshgrid,
                 cartesian_prod=cartesian_prod, tensordot=tensordot, einsum=einsum, cdist=cdist, pdist=pdist,
                 atleast_1d=atleast_1d, atleast_2d=atleast_2d, atleast_3d=atleast_3d, broadcast_shapes=broadcast_shapes,
                 broadcast_tensors=broadcast_tensors, split=split, result_type=result_type, where=where)

# Methods of _core.Tensor that are also torch.<name>(input, ...) functions.
for _n in ("clone contiguous detach flatten unflatten permute transpose swapaxes swapdims t narrow select "
           "squeeze unsqueeze unfold as_strided unbind chunk flip fliplr flipud roll repeat_interleave tile tril triu "
           "index_select gather scatter scatter_add index_put index_put_ masked_fill masked_select nonzero argwhere "
           "movedim moveaxis broadcast_to reshape ravel numel is_floating_point is_complex is_nonzero "
           "fill_ zero_ resize_as_").split():
    if hasattr(Tensor, _n):
        METHOD_FUNCTIONS[_n] = getattr(Tensor, _n)


# --------------------------------------------------------------------------- op_db names (issue 20 item 5)
# Composites of the library's differentiable ops: their gradients are those ops' gradients.
def _like(kind, t, value=None, dtype=None):
    from . import _factories
    if kind == "full":
        return _factories.full_like(t, value)
    return getattr(_factories, kind + "_like")(t, dtype=dtype)


@_method("positive")
def positive(self):
    if self.dtype == bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


# no negative bit here: resolve_neg is the tensor (conj and the complex views: below)
_method("resolve_neg")(lambda self: self)


@_method("isreal")
def isreal(self):
    return _wrap(lib.tn_isreal(self._ptr))


@_method("isposinf")
def isposinf(self):
    return _wrap(lib.tn_isposinf(self._ptr))


@_method("isneginf")
def isneginf(self):
    return _wrap(lib.tn_isneginf(self._ptr))


@_method("angle")
def angle(self):
    return _wrap(lib.tn_angle(self._ptr))


# ---- complex tensors (issue 26 item 1): views of the parts, conj, complex, polar
@_method("conj")
def conj(self):
    return _wrap(lib.tn_conj(self._ptr))


@_method("conj_physical")
def conj_physical(self):
    return _wrap(lib.tn_conj_physical(self._ptr))


@_method("resolve_conj")
def resolve_conj(self):
    return self          # conj is a copy here: there is no conjugate bit to resolve


@_method("is_conj")
def is_conj(self):
    return False


@_method("view_as_real", function=False)
def _view_as_real_method(self):
    return _wrap(lib.tn_view_as_real(self._ptr))


def view_as_real(input):
    return _wrap(lib.tn_view_as_real(_tensor_arg(input, "view_as_real", "input")._ptr))


def view_as_complex(input):
    return _wrap(lib.tn_view_as_complex(_tensor_arg(input, "view_as_complex", "input")._ptr))


def _part_setter(which):
    def setter(self, value):
        getattr(self, which).copy_(value if isinstance(value, Tensor) else _operand(value))
    return setter


Tensor.real = property(lambda self: _wrap(lib.tn_real(self._ptr)), _part_setter("real"))
Tensor.imag = property(lambda self: _wrap(lib.tn_imag(self._ptr)), _part_setter("imag"))


def real(input):
    return _wrap(lib.tn_real(_tensor_arg(input, "real", "input")._ptr))


def imag(input):
    return _wrap(lib.tn_imag(_tensor_arg(input, "imag", "input")._ptr))


def _complex(real, imag, *, out=None):   # torch.complex (not named complex: the builtin stays usable here)
    r = _wrap(lib.tn_complex(_tensor_arg(real, "complex", "real")._ptr, _tensor_arg(imag, "complex", "imag")._ptr))
    return r if out is None else out.copy_(r)


def polar(abs, angle, *, out=None):
    r = _wrap(lib.tn_polar(_tensor_arg(abs, "polar", "abs")._ptr, _tensor_arg(angle, "polar", "angle")._ptr))
    return r if out is None else out.copy_(r)


FUNCTIONS.update(view_as_real=view_as_real, view_as_complex=view_as_complex, real=real, imag=imag,
                 complex=_complex, polar=polar)


Tensor.__rdiv__ = Tensor.__rtruediv__


@_method("dist")
def dist(self, other, p=2):
    return _wrap(lib.tn_dist_str(self._ptr, _tensor_arg(other, "dist", "other")._ptr, _kw_text(p=_float(p, "dist", "p"))))


@_method("renorm")
def renorm(self, p, dim, maxnorm):
    """each slice along dim scaled to norm maxnorm where its p-norm exceeds it (PyTorch's
    factor maxnorm / (norm + 1e-7))"""
    return _wrap(lib.tn_renorm(self._ptr, _float(p, "renorm", "p"), _int(dim, "renorm", "dim"), _float(maxnorm, "renorm", "maxnorm")))


def _trapezoid(cfn, name, y, x, dx, dim):
    y = _tensor_arg(y, name, "y")
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None            # trapezoid(y, 0.5): a number is the spacing
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    o = _C.tn_trapezoid_fn_opts(None if x is None else _tensor_arg(x, name, "x")._ptr,
                                math.nan if dx is None else _float(dx, name, "dx"), _int(dim, name, "dim"))
    return _wrap(cfn(y._ptr, o))


@_method("trapezoid", function=False)
def _trapezoid_m(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(lib.tn_trapezoid_opts, "trapezoid", y, x, dx, dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid_m(y, x, dx=dx, dim=dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    return _trapezoid_m(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(lib.tn_cumulative_trapezoid_opts, "cumulative_trapezoid", y, x, dx, dim)


def constant_pad_nd(input, pad, value=0):
    from .nn.functional import pad as _pad
    if type(value) is _bi.complex:   # part by part (the C entry takes a real value)
        return _fill_by_parts("constant_pad_nd", input, value, lambda t, v: _pad(t, pad, mode="constant", value=v))
    return _pad(input, pad, mode="constant", value=value)


def fill(input, value):
    """out of place fill_: a new tensor of input's shape and dtype holding value (a 0-d
    tensor value keeps its gradient)"""
    input = _tensor_arg(input, "fill", "input")
    if isinstance(value, Tensor):
        return _wrap(lib.tn_fill_tensor(input._ptr, value._ptr))
    if _scalar_kind(value) == 1 and abs(int(value)) > 2 ** 53:
        return fill(input, _scalar_tensor(value))      # exact for large int64 (and the overflow check), as fill_
    return _wrap(lib.tn_fill(input._ptr, _scalar(value, "fill", "value")))


@_method("combinations", function=True)
def combinations(self, r=2, with_replacement=False):
    return _wrap(lib.tn_combinations_str(self._ptr, _kw_text(r=_int(r, "combinations", "r"), with_replacement=bool(with_replacement))))


def _scatter_args(name, self, src):
    return _tensor_arg(self, name, "input"), _tensor_arg(src, name, "src")


@_method("select_scatter")
def select_scatter(self, src, dim, index):
    self, src = _scatter_args("select_scatter", self, src)
    return _wrap(lib.tn_select_scatter(self._ptr, src._ptr, _int(dim, "select_scatter", "dim"), _int(index, "select_scatter", "index")))


@_method("slice_scatter")
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    self, src = _scatter_args("slice_scatter", self, src)
    return _wrap(lib.tn_slice_scatter_str(self._ptr, src._ptr, _kw_text(
        dim=_int(dim, "slice_scatter", "dim"), start=None if start is None else _int(start, "slice_scatter", "start"),
        end=None if end is None else _int(end, "slice_scatter", "end"), step=_int(step, "slice_scatter", "step"))))


@_method("diagonal_scatter")
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    self, src = _scatter_args("diagonal_scatter", self, src)
    return _wrap(lib.tn_diagonal_scatter_str(self._ptr, src._ptr, _kw_text(
        offset=_int(offset, "diagonal_scatter", "offset"), dim1=_int(dim1, "diagonal_scatter", "dim1"), dim2=_int(dim2, "diagonal_scatter", "dim2"))))


@_method("as_strided_scatter")
def as_strided_scatter(self, src, size, stride, storage_offset=None):
    self, src = _scatter_args("as_strided_scatter", self, src)
    sa, n = _i64(size)
    st, m = _i64(stride)
    if n != m:
        raise RuntimeError(f"mismatch in length of strides and shape")
    off = _NONE if storage_offset is None else _int(storage_offset, "as_strided_scatter", "storage_offset")
    return _wrap(lib.tn_as_strided_scatter(self._ptr, src._ptr, sa, n, st, off))


@_method("index_reduce")
def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    source = _tensor_arg(source, "index_reduce", "source")
    index = _tensor_arg(index, "index_reduce", "index")
    if not isinstance(reduce, str):
        raise TypeError(f"index_reduce(): argument 'reduce' must be str, not {type(reduce).__name__}")
    return _wrap(lib.tn_index_reduce_str(self._ptr, _int(dim, "index_reduce", "dim"), index._ptr, source._ptr, reduce.encode(),
                                         _kw_text(include_self=bool(include_self))))


FUNCTIONS.update(trapezoid=trapezoid, trapz=trapz, cumulative_trapezoid=cumulative_trapezoid,
                 constant_pad_nd=constant_pad_nd, fill=fill)


def _new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False):
    """uninitialised values in a storage just large enough for size and stride"""
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    need = 1 + _bi.sum((n - 1) * st for n, st in zip(size, stride)) if _bi.all(n > 0 for n in size) else 0
    r = self.new_empty((need,), dtype=dtype).as_strided(size, stride)
    return r.requires_grad_() if requires_grad else r


Tensor.new_empty_strided = _new_empty_strided


@_method("histogram")
def histogram(self, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges) as numpy.histogram (tn_histogram): bins of [edge_i, edge_i+1), the
    last one closed; values outside the edges (and NaN) are not counted. Not differentiable."""
    nan = float("nan")
    lo, hi = (nan, nan) if range is None else (_float(range[0], "histogram", "range"), _float(range[1], "histogram", "range"))
    o = _C.tn_histogram_fn_opts((lo, hi), _otp(weight, "histogram", "weight"), bool(density))
    edges = c_void_p()
    if isinstance(bins, Tensor):
        hist = _wrap(lib.tn_histogram_edges_opts(self._ptr, bins._ptr, byref(edges), o))
    else:
        hist = _wrap(lib.tn_histogram_opts(self._ptr, _int(bins, "histogram", "bins"), byref(edges), o))
    return return_types.histogram(hist, _wrap(edges.value))


def histogramdd(input, bins, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points input[..., D] (tn_histogramdd): bins an int (every dim),
    D ints or D edge tensors; range None (the data's min and max per dim) or 2 * D floats.
    bin_edges is a tuple of D tensors, as PyTorch's. Not differentiable."""
    x = _tp(input, "histogramdd", "input")
    if not isinstance(input, Tensor) or input.dim() < 1:
        D = 0
    else:
        D = input.shape[-1]
    w = _otp(weight, "histogramdd", "weight")
    if isinstance(bins, Tensor) or isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        es = list(bins) if isinstance(bins, (list, tuple)) else [bins]
        if not _bi.all(isinstance(e, Tensor) for e in es):
            raise TypeError("histogramdd(): bins must be an int, a sequence of ints or a sequence of tensors")
        if range is not None:
            raise TypeError("histogramdd(): range is not allowed with bin edges (the edges fix the range)")
        n = len(es)
        outs = (c_void_p * _bi.max(D, n, 1))()
        o = _C.tn_histogramdd_fn_opts(_C.tn_doubles(0), w, bool(density))
        hist = _wrap(lib.tn_histogramdd_edges_opts(x, _ptrs(es), n, outs, o))
    else:
        cts = [bins] * D if isinstance(bins, int) and not isinstance(bins, bool) else list(bins) \
            if isinstance(bins, (list, tuple)) else None
        if cts is None:
            raise TypeError(f"histogramdd(): bins must be an int, a sequence of ints or a sequence of tensors, not {type(bins).__name__}")
        cts = [_int(c, "histogramdd", "bins") for c in cts]
        rng = []
        if range is not None:
            rng = [_float(r, "histogramdd", "range") for r in range]
            if len(rng) != 2 * D:
                raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should have {2 * D} elements, "
                                   f"but got {len(rng)}")
        if len(rng) > _C.LIST_MAX:
            raise RuntimeError(f"histogramdd(): range of {len(rng)} values: at most {_C.LIST_MAX} (TN_LIST_MAX) are supported")
        outs = (c_void_p * _bi.max(D, len(cts), 1))()
        o = _C.tn_histogramdd_fn_opts(_C.tn_doubles(len(rng), (ctypes.c_double * _C.LIST_MAX)(*rng)), w, bool(density))
        hist = _wrap(lib.tn_histogramdd_opts(x, (c_int64 * _bi.max(len(cts), 1))(*cts), len(cts), outs, o))
    return return_types.histogramdd(hist, tuple(_wrap(outs[i]) for i in _bi.range(D)))


FUNCTIONS.update(histogramdd=histogramdd, symeig=symeig)
Tensor.symeig = symeig   # (2.x kept the method as the same error)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """numpy.gradient as torch.gradient (tn_gradient): central differences inside, one-sided
    ones of edge_order at the ends; spacing a number, one number per dim, or coordinates per dim."""
    input = _tensor_arg(input, "gradient", "input")
    kw = {"edge_order": _int(edge_order, "gradient", "edge_order")}
    if dim is not None:
        dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
        if not dims:
            return ()
        kw["dim"] = tuple(_int(d, "gradient", "dim") for d in dims)
    out = (c_void_p * _C.MAX_DIMS)()
    if isinstance(spacing, (list, tuple)) and spacing and _bi.all(isinstance(s, Tensor) for s in spacing):
        n = lib.tn_gradient_coords_str(input._ptr, _ptrs(spacing, "gradient", "spacing"), len(spacing), out, _kw_text(**kw))
    else:
        if isinstance(spacing, (list, tuple)):   # one number per dim (a list of one is a list, not a scalar)
            nd = len(kw["dim"]) if "dim" in kw else input.ndim
            if len(spacing) != nd:
                raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                                   f"arguments to have the same length, but got a spacing argument of length "
                                   f"{len(spacing)} and a dim argument of length {nd}.")
            sp = tuple(_float(s, "gradient", "spacing") for s in spacing)
        else:
            sp = (_float(1 if spacing is None else spacing, "gradient", "spacing"),)
        n = lib.tn_gradient_str(input._ptr, out, _kw_text(spacing=sp, **kw))
    if n < 0:
        _raise()
    return tuple(_wrap(out[i]) for i in range(n))


FUNCTIONS.update(gradient=gradient)
