"""dtype, device, Size, errors, the Tensor class and the conversions between Python
data and C tensors.

Ownership: the wrapper never opens a C scope, so every tn_tensor* a C function returns
is a reference this process owns (inside a C callback, where the engine's scope is open,
``_own`` takes an extra reference instead). ``_wrap`` hands it to exactly one Python
``Tensor``, whose ``__del__`` calls ``tn_release``. Temporaries (wrapped Python scalars,
index lists) are either Tensors too or released in a ``finally``. A pointer is only
passed to C while a Python object holding it is alive (a local, never a temporary).
"""
import atexit
import builtins
import ctypes
import itertools
import numbers
import operator
from ctypes import c_int64, c_void_p

from . import _C
from ._C import lib

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_INT32_MAX = (1 << 31) - 1
_alive = [True]          # cleared at exit: Tensor.__del__ stops calling into C then
atexit.register(lambda: _alive.__setitem__(0, False))


# --------------------------------------------------------------------------- errors
def _torch_class(name, bases, doc):
    """An exception class that is both of ``bases`` and prints as ``name`` (PyTorch's
    class, first of the bases): ``except RuntimeError`` catches it as in PyTorch, and
    ``except IndexError`` / ``except ZeroDivisionError`` as this package documented."""
    cls = type(name, bases, {"__doc__": doc, "__module__": "builtins"})
    cls.__qualname__ = name
    return cls


# gather/scatter out of bounds, float index tensors and random_'s range: PyTorch raises RuntimeError
_RuntimeIndexError = _torch_class("RuntimeError", (RuntimeError, IndexError),
                                  "An index error PyTorch reports as RuntimeError (gather, scatter).")
# integer division by zero: PyTorch's "RuntimeError: ZeroDivisionError"
_RuntimeZeroDivisionError = _torch_class("RuntimeError", (RuntimeError, ZeroDivisionError),
                                         "Integer division by zero (PyTorch: RuntimeError: ZeroDivisionError).")
_RUNTIME_INDEX_FNS = ("tn_gather", "tn_scatter", "tn_random_", "tn_randint")


def _exception_for(msg):
    if "ZeroDivisionError" in msg or "division by zero" in msg:
        return _RuntimeZeroDivisionError
    if ("out of bounds" in msg or "too many indices" in msg or "shape of the mask" in msg
            or "index tensors must be" in msg or "could not be broadcast together" in msg
            or "to have non-zero size" in msg
            or ("out of range" in msg and "selected index k" not in msg and "selected number k" not in msg)):
        if msg.startswith(_RUNTIME_INDEX_FNS) or ("index tensors must be" in msg and not msg.startswith("tn_index:")):
            return _RuntimeIndexError
        return IndexError
    return RuntimeError


# The C library's hints name C functions; a Python user gets PyTorch's words for them.
_PY_HINTS = (
    ("use tn_no_grad_begin() or an out-of-place op", "wrap it in `with torch.no_grad():` or use an out-of-place op"),
    ("use tn_reshape", "Use .reshape(...) instead"),
    ("pass retain_graph = true to the first backward if you need to do this",
     "Specify retain_graph=True when calling .backward() or autograd.grad() the first time"),
    ("call tn_requires_grad_(t, true) first", "call .requires_grad_() first"),
    ("use tn_logical_not or tn_logical_xor", "if you are trying to invert a mask, use the `~` or `logical_not()` operator instead"),
    ("use tn_logical_not", "use the `~` or `logical_not()` operator instead"),
    ("use tn_optim_step_closure", "pass a closure: optimizer.step(closure)"),
    ("use tn_lr_scheduler_step_metric", "call scheduler.step(metric)"),
    ("use tn_lr_scheduler_step)", "call scheduler.step())"),
    ("export tn_detach(t)", "use tensor.detach()"),
)


def _pythonic(msg):
    for c, py in _PY_HINTS:
        msg = msg.replace(c, py)
    return msg


def _raise():
    """Raise the C library's last error (tn_last_error) as a Python exception."""
    msg = lib.tn_last_error().decode("utf-8", "replace") or "tensor.h: a C call failed without a message"
    lib.tn_clear_error()          # read once: a later failure must not report this one again
    msg = _pythonic(msg)
    raise _exception_for(msg)(msg)


def _overflow(v, what):
    return RuntimeError(f"Overflow when unpacking long: {what} {v} does not fit in int64")


def _int(v, fn="", arg="dim", _lo=_INT64_MIN, _hi=_INT64_MAX):
    """A Python int argument that C takes as int64_t: PyTorch's TypeError for a non-int
    (str, float, None), its RuntimeError for one outside int64 (ctypes would wrap it)."""
    if type(v) is not int:
        try:
            v = operator.index(v)
        except TypeError:
            raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(v).__name__}") from None
    if _lo <= v <= _hi:
        return v
    raise _overflow(v, arg)


def _float(v, fn="", arg="value"):
    """A Python number argument that C takes as double (PyTorch's ``double``): its
    TypeError for a non-number (ctypes would raise ArgumentError, float() a ValueError
    for a str)."""
    t = type(v)
    if t is float:
        return v
    if t is int:
        try:
            return float(v)
        except OverflowError:
            raise RuntimeError(f"Overflow when unpacking double: {arg} {v}") from None
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(v.item())
    if _scalar_kind(v) is None:
        raise TypeError(f"{fn}(): argument '{arg}' must be Number, not {type(v).__name__}")
    return float(v)


def _scalar(v, fn="", arg="value"):
    """A number argument PyTorch types as ``Scalar``: as _float, but an int outside int64
    is its RuntimeError (the value is read as an int64 first)."""
    t = type(v)
    if t is float:
        return v
    if t is int:
        if _INT64_MIN <= v <= _INT64_MAX:
            return float(v)
        raise _overflow(v, arg)
    return _float(v, fn, arg)


def _tp(t, fn="", arg="input"):
    """The C handle of a Tensor argument; PyTorch's TypeError for anything else."""
    if isinstance(t, Tensor):
        return t._ptr
    raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(t).__name__}")


def _tensor_arg(t, fn="", arg="input"):
    """t itself when it is a Tensor; PyTorch's TypeError otherwise."""
    if isinstance(t, Tensor):
        return t
    raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(t).__name__}")


def _otp(t, fn="", arg="input"):
    """The C handle of an optional Tensor argument (None -> NULL)."""
    return None if t is None else _tp(t, fn, arg)


def _bool(v, fn="", arg="value"):
    if v is True or v is False:
        return v
    if _numpy() is not None and type(v).__name__ == "bool_":
        return bool(v)
    raise TypeError(f"{fn}(): argument '{arg}' must be bool, not {type(v).__name__}")


def _str_arg(v, fn="", arg="value"):
    """A str argument as the bytes C takes; PyTorch's TypeError for anything else."""
    if isinstance(v, str):
        return v.encode()
    raise TypeError(f"{fn}(): argument '{arg}' must be str, not {type(v).__name__}")


def _check_int(rc):
    if rc < 0:
        _raise()
    return rc


# --------------------------------------------------------------------------- dtypes
class dtype:
    """A tensor element type. ``repr`` is PyTorch's spelling (``torch.float32``) so that
    printed tensors (``dtype=torch.int32`` from the C printer), dtypes and scripts read
    the same as PyTorch's; ``str(tn.float32)`` is the same string."""
    __slots__ = ("name", "_code", "itemsize", "is_floating_point", "is_signed", "_ctype",
                 "_typestr", "_legacy")

    def __init__(self, name, code, ctype, typestr, legacy):
        self.name, self._code, self._ctype, self._typestr, self._legacy = name, code, ctype, typestr, legacy
        self.itemsize = int(lib.tn_dtype_size(code))
        self.is_floating_point = bool(lib.tn_dtype_is_floating(code))
        self.is_signed = name not in ("uint8", "bool")

    @property
    def is_complex(self):
        return self.name.startswith("complex")

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return _DTYPES[lib.tn_dtype_to_real(self._code)]

    def to_complex(self):
        if not (self.is_floating_point or self.is_complex):
            raise RuntimeError(f"to_complex is only supported for floating point types, got {self!r}")
        return _DTYPES[lib.tn_dtype_to_complex(self._code)]


float32 = dtype("float32", _C.F32, ctypes.c_float, "<f4", "Float")
float64 = dtype("float64", _C.F64, ctypes.c_double, "<f8", "Double")
int32 = dtype("int32", _C.I32, ctypes.c_int32, "<i4", "Int")
int64 = dtype("int64", _C.I64, ctypes.c_int64, "<i8", "Long")
uint8 = dtype("uint8", _C.U8, ctypes.c_uint8, "|u1", "Byte")
bool_ = dtype("bool", _C.BOOL, ctypes.c_bool, "|b1", "Bool")
float16 = dtype("float16", _C.F16, ctypes.c_uint16, "<f2", "Half")
bfloat16 = dtype("bfloat16", _C.BF16, ctypes.c_uint16, "<V2", "BFloat16")
int8 = dtype("int8", _C.I8, ctypes.c_int8, "|i1", "Char")
int16 = dtype("int16", _C.I16, ctypes.c_int16, "<i2", "Short")
complex64 = dtype("complex64", _C.C64, ctypes.c_float * 2, "<c8", "ComplexFloat")      # ctype: (real, imag)
complex128 = dtype("complex128", _C.C128, ctypes.c_double * 2, "<c16", "ComplexDouble")
_DTYPES = [float32, float64, int32, int64, uint8, bool_, float16, bfloat16, int8, int16, complex64, complex128]   # by C code
_BY_NAME = {d.name: d for d in _DTYPES}
_default_dtype = [_DTYPES[lib.tn_get_default_dtype()]]   # a cache of the C setting (tn_set_default_dtype)


def _dtype_by_name(name):
    return _BY_NAME[name]


def _category(dt):
    return 3 if dt.is_complex else 2 if dt.is_floating_point else (0 if dt is bool_ else 1)


def _to_dtype(d, allow_none=True):
    """dtype argument -> dtype object (accepts tn dtypes and the Python types float,
    int, bool as PyTorch does)."""
    if d is None:
        if allow_none:
            return None
        raise TypeError("dtype must not be None")
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d.replace("torch.", "") in _BY_NAME:
        return _BY_NAME[d.replace("torch.", "")]
    name = getattr(d, "name", None) or getattr(d, "__name__", None)   # numpy dtypes / scalar types
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise TypeError(f"dtype must be a tensor dtype (e.g. tensor.float32), got {d!r}")


def get_default_dtype():
    return _default_dtype[0]


def set_default_dtype(d):
    """The dtype of float factories and Python floats (``torch.tensor(1.5)``, ``int_tensor *
    2.5``, ``torch.arange(3) / 2``) and the one the printer leaves unnamed: float32 or
    float64 (the library's kernels refuse half precision)."""
    d = _to_dtype(d, False)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if lib.tn_set_default_dtype(d._code):
        _raise()
    _default_dtype[0] = d


def promote_types(type1, type2):
    return _DTYPES[lib.tn_promote_types(_to_dtype(type1, False)._code, _to_dtype(type2, False)._code)]


def can_cast(from_, to):
    return _category(_to_dtype(from_, False)) <= _category(_to_dtype(to, False))


# --------------------------------------------------------------------------- devices
# The device types torch.device accepts (PyTorch 1.13's list): any of them makes a device
# object, as in torch; tensors live on cpu and cuda only (others fail where used).
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "ort",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "privateuseone")


class device:
    """``device('cpu')``, ``device('cuda')``, ``device('cuda:0')``, ``device('cuda', 0)``."""
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, numbers.Integral) and not isinstance(type, bool):
            type, index = "cuda", type               # device(3): a CUDA ordinal, as torch
        elif not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' must be str or device, not {builtins.type(type).__name__}")
        elif ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
            name, idx = type.split(":", 1)
            if not idx.isdigit() or not idx.isascii():
                raise RuntimeError(f"Invalid device string: '{type}'")
            type, index = name, int(idx)
        if index is not None:
            if not isinstance(index, numbers.Integral) or isinstance(index, bool):
                raise TypeError(f"device(): argument 'index' (position 2) must be int, not {builtins.type(index).__name__}")
            index = int(index)
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        if type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {type}")
        self.type, self.index = type, index

    @property
    def _code(self):
        if self.type == "cpu":
            return _C.CPU
        if self.type == "cuda":
            return _C.CUDA
        raise RuntimeError(f"device type '{self.type}' is not supported by tensor (only cpu and cuda)")

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):          # a str is not a device: device('cpu') == 'cpu' is False, as torch
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def _to_device(d):
    if d is None:
        return None
    if isinstance(d, int):
        return device("cuda", d)
    return d if isinstance(d, device) else device(d)


_CPU = device("cpu")
_CUDA0 = device("cuda", 0)


# --------------------------------------------------------------------------- Size
class Size(tuple):
    """Tensor shapes: a tuple of ints (``x.shape == (2, 3)`` holds) printed as
    ``torch.Size([2, 3])``. Slicing, ``+`` with a tuple and ``*`` give Sizes; a tuple plus
    a Size is a tuple, as in torch."""
    __slots__ = ()

    def __new__(cls, sizes=()):
        items = []
        for i, v in enumerate(sizes):
            if type(v) is not int:
                try:
                    v = operator.index(v)
                except TypeError:
                    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(v).__name__}')") from None
            items.append(v)
        return tuple.__new__(cls, items)

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return tuple.__new__(Size, r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented     # torch: "can only concatenate tuple (not "list") to tuple"
        return Size(tuple.__add__(self, other))

    def __mul__(self, n):
        r = tuple.__mul__(self, n)
        return r if r is NotImplemented else tuple.__new__(Size, r)

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


# --------------------------------------------------------------------------- return types
class _ReturnType(tuple):
    """Structured results such as ``max(dim)``: a tuple with named fields, printed as
    PyTorch's ``torch.return_types.max(values=..., indices=...)``."""
    __slots__ = ()
    _fields = ()

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), tuple(self))


def _return_type(name, fields):
    ns = {"__slots__": (), "_fields": tuple(fields)}
    for i, f in enumerate(fields):
        ns[f] = property(operator.itemgetter(i))
    return type(name, (_ReturnType,), ns)


class return_types:
    max = _return_type("max", ("values", "indices"))
    min = _return_type("min", ("values", "indices"))
    sort = _return_type("sort", ("values", "indices"))
    topk = _return_type("topk", ("values", "indices"))
    kthvalue = _return_type("kthvalue", ("values", "indices"))
    aminmax = _return_type("aminmax", ("min", "max"))
    # what the out= forms return, as torch's (torch.return_types.max_out(values=..., indices=...))
    max_out = _return_type("max_out", ("values", "indices"))
    min_out = _return_type("min_out", ("values", "indices"))
    sort_out = _return_type("sort_out", ("values", "indices"))
    topk_out = _return_type("topk_out", ("values", "indices"))
    kthvalue_out = _return_type("kthvalue_out", ("values", "indices"))
    aminmax_out = _return_type("aminmax_out", ("min", "max"))
    median = _return_type("median", ("values", "indices"))
    nanmedian = _return_type("nanmedian", ("values", "indices"))
    mode = _return_type("mode", ("values", "indices"))
    cummax = _return_type("cummax", ("values", "indices"))
    cummin = _return_type("cummin", ("values", "indices"))
    frexp = _return_type("frexp", ("mantissa", "exponent"))
    histogram = _return_type("histogram", ("hist", "bin_edges"))
    histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))
    # torch.linalg's
    slogdet = _return_type("slogdet", ("sign", "logabsdet"))
    linalg_slogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
    lu_unpack = _return_type("lu_unpack", ("P", "L", "U"))
    linalg_lu = _return_type("linalg_lu", ("P", "L", "U"))
    linalg_lu_factor = _return_type("linalg_lu_factor", ("LU", "pivots"))
    linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
    linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
    linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
    linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
    linalg_qr = _return_type("linalg_qr", ("Q", "R"))
    qr = _return_type("qr", ("Q", "R"))
    geqrf = _return_type("geqrf", ("a", "tau"))
    linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
    linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
    svd = _return_type("svd", ("U", "S", "V"))
    linalg_lstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


# --------------------------------------------------------------------------- helpers
def _own(ptr):
    """Make a returned tn_tensor* a reference this process owns, raising the C error when
    it is NULL. At top level (no C scope open) that is the returned reference itself.
    Inside a C callback (a hook runs inside the engine's scope) the open scope owns the
    returned reference, so we take one of our own."""
    if not ptr:
        _raise()
    if _callback_depth[0] and _scope_depth():   # C scopes are open only while C calls back into Python
        lib.tn_retain(ptr)
    return ptr


_scope_depth = lib.tn_scope_depth
# tensor.jit sets this while it traces: a forward that reads a tensor's values into Python
# (item, bool, tolist) takes a data-dependent path the graph cannot follow.
_data_read_hook = [None]
_callback_depth = [0]


def _callback(f):
    """Wrap a function C calls back (hooks, custom functions, closures...): while one runs,
    a C scope may be open, which _own must then ask about (asking costs 0.1 us a call)."""
    def run(*args):
        _callback_depth[0] += 1
        try:
            return f(*args)
        finally:
            _callback_depth[0] -= 1
    return run


def _borrow(ptr, cls=None):
    """A Python Tensor for a borrowed tn_tensor* (an accessor's result such as tn_grad,
    or a tensor a C callback is handed): it takes exactly one reference of its own,
    whether or not a C scope is open."""
    t = object.__new__(cls or Tensor)
    t._ptr = lib.tn_retain(ptr)
    return t


def _unalias(dst, src):
    """The operand of an in-place op on a graph tensor, as a clone when it shares dst's
    storage (``x[1] += x[0]``, and the ``x[0] = <view of x[0]>`` that ``x[0] *= 2``
    ends with). tensor.h records such an op on a view with the operand saved as an alias
    that the op itself then bumps, so backward could fail with a version error where
    PyTorch succeeds (where/copy_ no longer save it in C; mul still does). The clone is
    differentiable, so the gradients are PyTorch's."""
    if (isinstance(src, Tensor) and src._ptr != dst._ptr and lib.tn_same_storage(dst._ptr, src._ptr)
            and lib.tn_requires_grad(dst._ptr) and not lib.tn_is_leaf(dst._ptr) and lib.tn_is_grad_enabled()):
        return src.clone()
    return src


def _wrap(ptr, cls=None):
    """A Python Tensor owning a returned tn_tensor* (see _own)."""
    t = object.__new__(cls or Tensor)
    t._ptr = _own(ptr)
    return t


def _i64(seq, what="dims"):
    """A C int64_t array from a sequence of ints (PyTorch's errors for a non-int and for
    a value outside int64, which ctypes would wrap silently)."""
    n = len(seq)
    try:
        arr = (_I64_ARRAYS[n] if n < len(_I64_ARRAYS) else c_int64 * n)(*seq)   # ints and __index__ objects
    except TypeError:
        raise TypeError(f"{what} must be a tuple of ints, got {seq!r}") from None
    if n and (min(seq) < _INT64_MIN or max(seq) > _INT64_MAX):  # ctypes would have wrapped it
        raise _overflow(min(seq) if min(seq) < _INT64_MIN else max(seq), what)
    return arr, n


_I64_ARRAYS = [c_int64 * i for i in range(_C.MAX_DIMS + 2)]   # every shape the library takes, and one past it


def _ptrs(tensors, fn="", arg="tensors"):
    """tn_tensor *const * from a sequence of Tensors (None entries become NULL)."""
    return (c_void_p * len(tensors))(*[None if t is None else _tp(t, fn, arg) for t in tensors])


def _shape_args(args, name="size"):
    """zeros(2, 3) / zeros((2, 3)) / zeros([2, 3]) / zeros(Size) -> list of ints."""
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, Tensor)):
        args = args[0]
    try:
        out = [operator.index(s) for s in args]
    except TypeError:
        raise TypeError(f"{name} must be a tuple of ints, got {args!r}") from None
    for i, s in enumerate(out):
        if not _INT64_MIN <= s <= _INT64_MAX:     # PyTorch: TypeError (not an int64 element)
            raise TypeError(f"{name} must be a tuple of ints, but found element {s} (outside int64) at pos {i + 1}")
    return out


def _dims_list(dim, fn="", arg="dim"):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return [_int(d, fn, arg) for d in dim]
    return [_int(dim, fn, arg)]


def _scalar_kind(v):
    """0 bool, 1 int, 2 float for a Python (or NumPy) scalar, None otherwise."""
    t = type(v)
    if t is float:
        return 2
    if t is int:
        return 1
    if t is bool:
        return 0
    if isinstance(v, bool) or t.__name__ == "bool_":
        return 0
    if isinstance(v, numbers.Integral):
        return 1
    if isinstance(v, numbers.Real):
        return 2
    if isinstance(v, numbers.Complex):
        return 3
    return None


def _scalar_ptr(v):
    """A new 0-d "wrapped number" tensor for a Python scalar: Python's int/float/bool
    semantics in type promotion (an int tensor + 2.0 is float32, + 2 stays int)."""
    k = _scalar_kind(v)
    if k == 2:
        p = lib.tn_scalar(float(v))
    elif k == 1:
        v = int(v)
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise RuntimeError(f"Overflow when unpacking long: {v} does not fit in int64")
        p = lib.tn_scalar_int(v)
    elif k == 0:
        p = lib.tn_scalar_bool(bool(v))
    elif k == 3:
        v = complex(v)
        p = lib.tn_scalar_complex(v.real, v.imag)
    else:
        raise TypeError(f"expected a Tensor or a Python number, got {type(v).__name__}")
    return _own(p)


def _scalar_tensor(v):
    return _wrap(_scalar_ptr(v))


def _operand(v):
    """A Tensor for a binary-op operand (Python scalars become wrapped numbers, NumPy
    arrays tensors)."""
    if isinstance(v, Tensor):
        return v
    np = _numpy()
    if np is not None and isinstance(v, np.ndarray):
        return _from_ndarray_copy(v, None)
    return _scalar_tensor(v)


def _is_operand(v):
    if isinstance(v, Tensor) or _scalar_kind(v) is not None:
        return True
    np = _numpy()
    return np is not None and isinstance(v, np.ndarray)


_np_mod = []


def _numpy():
    """numpy, or None when it is not installed (it is optional)."""
    if not _np_mod:
        try:
            import numpy
            _np_mod.append(numpy)
        except ImportError:
            _np_mod.append(None)
    return _np_mod[0]


# --------------------------------------------------------------------------- Python data -> tensor
def _is_seq(o):
    if isinstance(o, (list, tuple, range)):
        return True
    np = _numpy()
    return np is not None and isinstance(o, np.ndarray) and o.ndim > 0


def _parse_nested(data):
    """Nested sequences -> (flat list of scalars, shape), checking they are rectangular."""
    shape = []
    o = data
    while _is_seq(o):
        shape.append(len(o))
        if len(o) == 0:
            break
        o = o[0]
    nd = len(shape)
    if nd == 0:
        return [data], shape
    if isinstance(o, (str, bytes)):          # torch reads a str as one more (endless) dimension
        raise ValueError(f"too many dimensions '{type(o).__name__}'")
    flat = []

    def rec(o, d):
        if not _is_seq(o):
            raise ValueError(f"expected sequence of length {shape[d]} at dim {d} (got {type(o).__name__})")
        if len(o) != shape[d]:
            raise ValueError(f"expected sequence of length {shape[d]} at dim {d} (got {len(o)})")
        if d == nd - 1:
            flat.extend(o)          # elements are checked by _from_flat
        else:
            for e in o:
                rec(e, d + 1)

    rec(data, 0)
    return flat, shape


_PLAIN_KIND = {float: 2, int: 1, bool: 0, complex: 3}


def _bad_leaf(v, flat):
    """PyTorch's error for a value tensor() cannot hold: a sequence among numbers is a
    ValueError; a value whose dtype cannot be inferred (None, dict, object) a
    RuntimeError, found before a str or bytes (a TypeError)."""
    if _is_seq(v):
        raise ValueError(f"expected a number, got a sequence ({type(v).__name__}) among numbers")
    for w in flat:
        if _scalar_kind(w) is None and not isinstance(w, (str, bytes, Tensor)) and not _is_seq(w):
            raise RuntimeError(f"Could not infer dtype of {type(w).__name__}")
    raise TypeError(f"new(): invalid data type '{type(v).__name__}'")


def _from_flat(flat, shape, dt):
    """Pack Python scalars and hand them to tn_from_data; the dtype conversion (float ->
    int truncation, int -> uint8 wrap, ...) is the C library's, as for any tensor."""
    import array
    types = set(map(type, flat))
    if types <= _PLAIN_KIND.keys():                     # the common case: plain Python numbers
        kind = max((_PLAIN_KIND[t] for t in types), default=2)
    else:
        kinds = set()
        for i, v in enumerate(flat):
            if isinstance(v, Tensor):
                if v.numel() != 1:
                    raise ValueError("only one element tensors can be converted to Python scalars")
                flat[i] = v = v.item()
            k = _scalar_kind(v)
            if k is None:
                _bad_leaf(v, flat)
            kinds.add(k)
        kind = max(kinds) if kinds else 2
        flat = [complex(v) if kind == 3 else float(v) if kind == 2 else (int(v) if kind == 1 else bool(v)) for v in flat]
    if kind == 3 and dt is not None and not dt.is_complex:
        raise TypeError("must be real number, not complex")
    if dt is None:   # a Python complex: the complex dtype of the default float dtype
        dt = _default_dtype[0].to_complex() if kind == 3 else _default_dtype[0] if kind == 2 else (int64 if kind == 1 else bool_)
    try:
        if kind == 3:   # (real, imag) pairs as complex128
            buf, src = array.array("d", [x for v in flat for x in (complex(v).real, complex(v).imag)]), complex128
        elif kind == 2:
            buf, src = array.array("d", flat), float64
        elif kind == 1:
            buf, src = array.array("q", flat), int64
        else:
            buf, src = array.array("B", flat), bool_
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long: a value does not fit in int64") from None
    arr, n = _i64(shape)
    if not len(buf):
        return _wrap(lib.tn_empty(arr, n, dt._code))
    t = _wrap(lib.tn_from_data(buf.buffer_info()[0], arr, n, src._code))
    return t if src is dt else _wrap(lib.tn_to_dtype(t._ptr, dt._code))


_NP_TO_DTYPE = {"float32": float32, "float64": float64, "float16": float16, "int32": int32, "int64": int64,
                "int16": int16, "int8": int8, "uint8": uint8, "bool": bool_, "complex64": complex64, "complex128": complex128}


def _np_dtype(arr):
    dt = _NP_TO_DTYPE.get(arr.dtype.name)
    if dt is None or not arr.dtype.isnative:
        raise TypeError(f"can't convert np.ndarray of type numpy.{arr.dtype.name}. The only supported "
                        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    return dt


def _from_ndarray_copy(arr, dt):
    np = _numpy()
    src = _np_dtype(arr)
    a = np.ascontiguousarray(arr).reshape(arr.shape)   # ascontiguousarray makes a 0-d array 1-d
    shp, n = _i64(a.shape)
    if a.size == 0:
        t = _wrap(lib.tn_empty(shp, n, src._code))
    else:
        t = _wrap(lib.tn_from_data(a.ctypes.data, shp, n, src._code))
    return t if dt is None or dt is src else _wrap(lib.tn_to_dtype(t._ptr, dt._code))


def _tensor_from_data(data, dt=None):
    np = _numpy()
    if isinstance(data, Tensor):
        t = data.detach().clone()
        return t if dt is None else t.to(dt)
    if np is not None and isinstance(data, np.ndarray):
        return _from_ndarray_copy(data, dt)
    if np is not None and isinstance(data, np.generic) and not isinstance(data, np.bool_):
        return _from_ndarray_copy(np.asarray(data), dt)
    if not _is_seq(data) and _scalar_kind(data) is None:
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    flat, shape = _parse_nested(data)
    return _from_flat(flat, shape, dt)


# numpy zero-copy: tn_from_blob with a deleter that drops our reference to the array.
_keepalive = {}
_keep_ids = itertools.count(1)


@_C.DELETER
def _numpy_deleter(data, ctx):
    try:
        _keepalive.pop(ctx, None)
    except Exception:  # interpreter shutdown
        pass


# The thunk must outlive every tensor made by from_numpy, including ones freed during
# interpreter teardown: keep one extra reference forever.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_numpy_deleter))


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes show on both sides); the array
    stays alive until the last view of the tensor dies."""
    np = _numpy()
    if np is None or not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = _np_dtype(ndarray)
    item = ndarray.itemsize
    for s in ndarray.strides:
        if s < 0:
            raise ValueError("At least one stride in the given numpy array is negative, and tensors with "
                             "negative strides are not currently supported. (You can probably work around "
                             "this by making a copy of your array  with array.copy().) ")
        if s % item:
            raise ValueError("given numpy array strides not a multiple of the element byte size. "
                             "Copy the numpy array to reallocate the memory.")
    shp, n = _i64(ndarray.shape)
    st, _ = _i64([s // item for s in ndarray.strides])
    key = next(_keep_ids)
    _keepalive[key] = ndarray
    p = lib.tn_from_blob(ndarray.ctypes.data or 1, shp, n, st, dt._code, _numpy_deleter, key)
    if not p:
        _keepalive.pop(key, None)
        _raise()
    return _wrap(p)


class _ArrayView:
    """Exposes a CPU tensor's memory through the array interface; the ndarray NumPy makes
    from it keeps this object (and so the tensor) alive as its base."""
    __slots__ = ("__array_interface__", "_tensor")

    def __init__(self, t):
        dt = t.dtype
        if dt is bfloat16:   # NumPy has no bfloat16: torch's message
            raise TypeError("Got unsupported ScalarType BFloat16")
        self._tensor = t
        self.__array_interface__ = {
            "shape": tuple(t.shape), "typestr": dt._typestr, "version": 3,
            "data": (lib.tn_data_ptr(t._ptr) or 0, False),
            "strides": tuple(s * dt.itemsize for s in t.stride()),
        }


# --------------------------------------------------------------------------- indexing helpers
def _seq_as_tuple(index):
    """PyTorch's treatSequenceAsTuple: a short non-tuple sequence holding a slice,
    Ellipsis, None, a Tensor or a sequence is read as a tuple of indices."""
    if isinstance(index, tuple):
        return True
    if isinstance(index, Tensor) or not _is_seq(index) or isinstance(index, range):
        return False
    if len(index) >= 32:
        return False
    for o in index:
        if isinstance(o, (Tensor, slice)) or o is None or o is Ellipsis or _is_seq(o) or isinstance(o, str):
            return True
    return False


def _index_tensor(seq):
    np = _numpy()
    if np is not None and isinstance(seq, np.ndarray):
        t = _from_ndarray_copy(seq, None)
    else:
        try:
            flat, shape = _parse_nested(seq)
        except ValueError as e:
            if "too many dimensions" not in str(e):
                raise
            raise TypeError(f"new(): invalid data type '{str(e).split(chr(39))[1]}' in an index") from None
        t = _from_flat(flat, shape, None) if flat else _wrap(lib.tn_empty(*_i64(shape), int64._code))
    return t


def _wrap_dim(d, nd, fn=""):
    """A dim in [-nd, nd) as a non-negative index (PyTorch's IndexError otherwise)."""
    n = max(nd, 1)
    if not -n <= d < n:
        raise IndexError(f"{fn + ': ' if fn else ''}Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n if nd else 0


def _clamp64(v):
    v = operator.index(v)
    return _INT64_MIN if v < _INT64_MIN else (_INT64_MAX if v > _INT64_MAX else v)


# --------------------------------------------------------------------------- Tensor
class _NoHandle:
    """Tensor._ptr when the instance holds none (after its __del__, or made by __new__
    alone): reading it raises, so such a tensor never reaches C as NULL, which C reads
    as "absent". A non-data descriptor: an instance's own _ptr takes precedence (a class
    __getattr__ would slow every attribute lookup of Tensor)."""

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        raise RuntimeError("this Tensor has no C tensor: it was released (its __del__ ran) or never initialised")


class Tensor:
    """A strided tensor held by the C library (one C reference per Python object)."""
    __array_priority__ = 1000
    _ptr = _NoHandle()

    # -- construction / destruction
    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, dtype=None, device=None):
        """``Tensor(2, 3)`` (uninitialised float32), ``Tensor([1, 2])`` (data as float32),
        ``Tensor()`` (empty)."""
        if "_ptr" in self.__dict__:
            return
        dt = _to_dtype(dtype) or _default_dtype[0]
        if not args:
            t = empty(0, dtype=dt)
        elif len(args) == 1 and not isinstance(args[0], numbers.Integral):
            t = _tensor_from_data(args[0], dt)
        else:
            t = empty(*args, dtype=dt)
        self._ptr = lib.tn_retain(t._ptr)

    def __del__(self, _release=lib.tn_release, _alive=_alive):
        try:
            p = self._ptr
        except RuntimeError:             # no handle (released already, or never set)
            return
        del self._ptr
        if p and _alive[0]:
            _release(p)


    # -- metadata (all through accessors; the C struct is never mirrored)
    @property
    def shape(self):
        p = self._ptr
        return tuple.__new__(Size, lib.tn_shape(p)[:lib.tn_ndim(p)])   # ints already: no checks

    def size(self, dim=None):
        if dim is None:
            return self.shape
        s = lib.tn_size(self._ptr, _int(dim, "size"))
        if s < 0:
            nd = self.ndim
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], but got {dim})")
        return s

    def stride(self, dim=None):
        p = self._ptr
        st = tuple(lib.tn_strides(p)[:lib.tn_ndim(p)])
        if dim is None:
            return st
        nd = len(st)
        d = _int(dim, "stride")
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], but got {dim})")
        return st[d]

    def dim(self):
        return lib.tn_ndim(self._ptr)

    ndimension = dim

    @property
    def ndim(self):
        return lib.tn_ndim(self._ptr)

    def numel(self):
        return lib.tn_numel(self._ptr)

    nelement = numel

    @property
    def dtype(self):
        return _DTYPES[lib.tn_get_dtype(self._ptr)]

    @property
    def device(self):
        return _CPU if lib.tn_get_device(self._ptr) == _C.CPU else _CUDA0

    @property
    def is_cuda(self):
        return lib.tn_get_device(self._ptr) == _C.CUDA

    @property
    def is_cpu(self):
        return lib.tn_get_device(self._ptr) == _C.CPU

    # the other accelerators PyTorch names (programs test them to pick a path): never here
    is_xpu = is_mps = is_meta = is_hpu = is_ipu = is_mkldnn = is_vulkan = property(lambda self: False)

    def is_contiguous(self, memory_format=None):
        return bool(lib.tn_is_contiguous(self._ptr))

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_signed(self):
        return self.dtype.is_signed

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def storage_offset(self):
        return lib.tn_storage_offset(self._ptr)

    def data_ptr(self):
        return lib.tn_data_ptr(self._ptr) or 0

    @property
    def _version(self):
        return lib.tn_version(self._ptr)

    def _same_storage(self, other):
        return bool(lib.tn_same_storage(self._ptr, other._ptr))

    # type(): torch's names of the typed classes, in _tensor_types

    # -- autograd: requires_grad, grad, grad_fn, is_leaf, backward, register_hook,
    #    retain_grad, detach_ are attached by tensor/autograd.py (C section 11)
    @property
    def data(self):
        return self.detach()

    # -- printing and conversion to Python
    def __repr__(self):
        s = lib.tn_to_string(self._ptr)
        if not s:
            _raise()
        try:
            text = ctypes.string_at(s).decode("utf-8")
        finally:
            lib.tn_string_free(s)
        return text          # the C printer writes PyTorch's suffixes (dtype, requires_grad, grad_fn)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0:          # torch formats a 0-d tensor as its number, spec or not: f"{t}" is "1.0"
            return format(self.item(), spec)
        return object.__format__(self, spec) if spec else repr(self)

    def _host(self):
        """A CPU view or copy (the same tensor when already on the CPU)."""
        if lib.tn_get_device(self._ptr) == _C.CPU:
            return self
        return _wrap(lib.tn_to(self._ptr, _C.CPU))

    def tolist(self):
        if _data_read_hook[0] is not None:
            _data_read_hook[0]("Tensor.tolist()")
        t = self._host().contiguous()
        if t.dtype in (float16, bfloat16):   # exact in float32, read as Python floats
            t = t.float()
        n = t.numel()
        shape = list(t.shape)
        if n == 0:
            def build(shp):
                return [] if shp[0] == 0 else [build(shp[1:]) for _ in range(shp[0])]
            return build(shape)
        flat = (t.dtype._ctype * n).from_address(lib.tn_data_ptr(t._ptr))[:]
        if t.dtype.is_complex:
            flat = [complex(v[0], v[1]) for v in flat]
        if not shape:
            return flat[0]
        for d in reversed(shape[1:]):
            flat = [flat[i:i + d] for i in range(0, len(flat), d)]
        return flat

    def item(self):
        if _data_read_hook[0] is not None:
            _data_read_hook[0]("Tensor.item() (or bool/int/float of a tensor)")
        if lib.tn_numel(self._ptr) != 1:
            lib.tn_item(self._ptr)        # records the C message
            raise ValueError(lib.tn_last_error().decode())
        t = self._host()
        if t.dtype in (float16, bfloat16):
            t = t.float()
        if t.dtype.is_complex:
            v = t.dtype._ctype.from_address(lib.tn_data_ptr(t._ptr))
            return complex(v[0], v[1])
        return t.dtype._ctype.from_address(lib.tn_data_ptr(t._ptr)).value

    def __float__(self):
        return float(self._scalar_value("float"))

    def __int__(self):
        return int(self._scalar_value("int"))

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def _scalar_value(self, what):
        if lib.tn_numel(self._ptr) != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __bool__(self):
        n = lib.tn_numel(self._ptr)
        if n != 1:
            raise RuntimeError("Boolean value of Tensor with " + ("no values" if n == 0 else "more than one value") + " is ambiguous")
        return bool(self.item())

    def __len__(self):
        if lib.tn_ndim(self._ptr) == 0:
            raise TypeError("len() of a 0-d tensor")
        return lib.tn_shape(self._ptr)[0]

    def __iter__(self):
        if lib.tn_ndim(self._ptr) == 0:
            raise TypeError("iteration over a 0-d tensor")
        p = self._ptr
        return iter([_wrap(lib.tn_select(p, 0, i)) for i in range(lib.tn_shape(p)[0])])

    def __contains__(self, element):
        if isinstance(element, Tensor) or _scalar_kind(element) is not None:
            return bool((self == element).any())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def __hash__(self):
        return id(self)

    def numpy(self, *, force=False):
        np = _numpy()
        if np is None:
            raise RuntimeError("numpy() needs NumPy, which is not installed")
        t = self
        if force:
            t = t.detach()._host()
        elif not self.is_cpu:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.")
        if t.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return np.asarray(_ArrayView(t))

    def __array__(self, dtype=None):
        a = self.numpy(force=True)
        return a if dtype is None else a.astype(dtype, copy=False)

    def __reduce_ex__(self, proto):
        """Pickled as raw bytes (shape, dtype, the contiguous data): what crosses a
        process boundary (DataLoader workers, multiprocessing); requires_grad of a leaf
        is kept, as in torch."""
        t = self.detach()._host().contiguous()
        n = lib.tn_numel(t._ptr) * t.dtype.itemsize
        data = ctypes.string_at(lib.tn_data_ptr(t._ptr), n) if n else b""
        return (_rebuild_tensor_bytes, (data, t.dtype.name, tuple(t.shape),
                                        bool(lib.tn_requires_grad(self._ptr) and lib.tn_is_leaf(self._ptr))))

    def __deepcopy__(self, memo):
        r = self.clone()
        memo[id(self)] = r
        return r

    # -- copies, dtype and device
    def clone(self, *, memory_format=None):
        return _wrap(lib.tn_clone(self._ptr))

    def contiguous(self, memory_format=None):
        return self if lib.tn_is_contiguous(self._ptr) else _wrap(lib.tn_contiguous(self._ptr))

    def detach(self):
        return _wrap(lib.tn_detach(self._ptr))

    def detach_(self):
        return self

    def to(self, *args, **kwargs):
        """to(dtype) | to(device, dtype=None) | to(other) | kwargs dtype=, device=, copy=."""
        dt = _to_dtype(kwargs.pop("dtype", None))
        dev = _to_device(kwargs.pop("device", None))
        copy = kwargs.pop("copy", False)
        non_blocking = kwargs.pop("non_blocking", False)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dt, dev = a.dtype, a.device
            elif isinstance(a, (device, str, int)) and not isinstance(a, bool):
                dev = _to_device(a)
            elif a is not None and not isinstance(a, bool):
                dt = _to_dtype(a)
        r = self
        if dev is not None and dev.type != self.device.type:
            r = _wrap((lib.tn_to_non_blocking if non_blocking else lib.tn_to)(r._ptr, dev._code))
        if dt is not None and dt is not r.dtype:
            if r.dtype.is_complex and not dt.is_complex:   # torch's warning (1.13 and 2025)
                import warnings
                warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
            r = _wrap(lib.tn_to_dtype(r._ptr, dt._code))
        if copy and r is self:
            r = self.clone()
        return r

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda", non_blocking=non_blocking)

    def pin_memory(self):
        return _wrap(lib.tn_pin_memory(self._ptr))

    def share_memory_(self):
        """Moves the storage (every view of it) into shared memory; a no-op on CUDA and when
        already shared. Returns self."""
        if not lib.tn_share_memory_(self._ptr):
            _raise()
        return self

    def is_shared(self):
        return bool(lib.tn_is_shared(self._ptr))

    def is_pinned(self):
        return bool(lib.tn_is_pinned(self._ptr))

    # the conversions take PyTorch's memory_format= as to() does (a layout hint: ours are strided)
    def float(self, memory_format=None):
        return self.to(float32, memory_format=memory_format)

    def double(self, memory_format=None):
        return self.to(float64, memory_format=memory_format)

    def long(self, memory_format=None):
        return self.to(int64, memory_format=memory_format)

    def int(self, memory_format=None):
        return self.to(int32, memory_format=memory_format)

    def byte(self, memory_format=None):
        return self.to(uint8, memory_format=memory_format)

    def cfloat(self, memory_format=None):
        return self.to(complex64, memory_format=memory_format)

    def cdouble(self, memory_format=None):
        return self.to(complex128, memory_format=memory_format)

    def char(self, memory_format=None):
        return self.to(int8, memory_format=memory_format)

    def short(self, memory_format=None):
        return self.to(int16, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(bool_, memory_format=memory_format)

    def half(self, memory_format=None):
        return self.to(float16, memory_format=memory_format)

    def bfloat16(self, memory_format=None):
        return self.to(bfloat16, memory_format=memory_format)

    def type_as(self, other):
        return self.to(_tensor_arg(other, "type_as", "other").dtype)

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, Tensor):
            if _scalar_kind(src) is None:
                raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
            src = _scalar_tensor(src)       # PyTorch reads a number as a 0-d tensor
        s = _unalias(self, src)
        _check_int(lib.tn_copy_(self._ptr, s._ptr))
        return self

    def _store(self, result):
        """In-place result of an op the C library has no `_` form for: PyTorch's
        cast rule, then tn_copy_ (which checks the shape)."""
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {result.dtype._legacy} can't be cast to the desired output type {self.dtype._legacy}")
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}")
        _check_int(lib.tn_copy_(self._ptr, result._ptr))
        return self

    def _inplace(self, ptr):
        """Result of a C in-place op: self's tensor, borrowed (NULL: raise the C error)."""
        if not ptr:
            _raise()
        return self

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
            return self.copy_(value)
        if _scalar_kind(value) == 1 and abs(int(value)) > 2 ** 53:
            return self.copy_(_scalar_tensor(value))      # exact for large int64 (and the overflow check)
        if _scalar_kind(value) == 3:                      # a Python complex: into complex tensors only, as torch
            if not self.dtype.is_complex:
                raise RuntimeError(f"value cannot be converted to type {self.dtype.name} without overflow")
            return self.copy_(_scalar_tensor(value))
        return self._inplace(lib.tn_fill_(self._ptr, _scalar(value, "fill_", "value")))

    def zero_(self):
        return self._inplace(lib.tn_zero_(self._ptr))

    # -- views
    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], dtype):
            raise NotImplementedError("view(dtype) is not supported")
        arr, n = _i64(_shape_args(shape))
        return _wrap(lib.tn_view(self._ptr, arr, n))

    def view_as(self, other):
        return self.view(_tensor_arg(other, "view_as", "other").shape)

    def reshape(self, *shape):
        arr, n = _i64(_shape_args(shape))
        return _wrap(lib.tn_reshape(self._ptr, arr, n))

    def reshape_as(self, other):
        return self.reshape(_tensor_arg(other, "reshape_as", "other").shape)

    def flatten(self, start_dim=0, end_dim=-1):
        return _wrap(lib.tn_flatten_str(self._ptr, f"start_dim={_int(start_dim, 'flatten', 'start_dim')}, end_dim={_int(end_dim, 'flatten', 'end_dim')}".encode()))

    def ravel(self):
        return self.reshape(-1)

    def unflatten(self, dim, sizes):
        arr, n = _i64(_shape_args((sizes,), "sizes"))
        return _wrap(lib.tn_unflatten(self._ptr, _int(dim, "unflatten"), arr, n))

    def permute(self, *dims):
        arr, n = _i64(_shape_args(dims, "dims"))
        return _wrap(lib.tn_permute(self._ptr, arr, n))

    def transpose(self, dim0, dim1):
        return _wrap(lib.tn_transpose(self._ptr, _int(dim0, "transpose", "dim0"), _int(dim1, "transpose", "dim1")))

    swapaxes = swapdims = transpose

    def transpose_(self, dim0, dim1):
        raise NotImplementedError("transpose_: in-place metadata changes are not supported; use transpose")

    def t(self):
        return _wrap(lib.tn_t(self._ptr))

    @property
    def T(self):
        return self.permute(*range(self.ndim - 1, -1, -1))     # PyTorch's: PermuteBackward0 even for 2-d

    def _matrix_t(self, what):
        # a 0-d tensor is its own transpose (PyTorch: deprecated, still allowed in 2025); 1-d raises
        if self.ndim == 0:
            return self.view(())
        if self.ndim < 2:
            raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    mT = property(lambda self: self._matrix_t("mT"))
    mH = property(lambda self: self._matrix_t("mH").conj())     # conj: a real tensor's is itself

    @property
    def H(self):
        if self.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return self.T.conj()

    def adjoint(self):
        return self._matrix_t("adjoint()").conj()

    def movedim(self, source, destination):
        src, dst = _dims_list(source, "movedim", "source"), _dims_list(destination, "movedim", "destination")
        nd = self.ndim
        if len(src) != len(dst):
            raise RuntimeError("movedim: Invalid source or destination dims: source and destination must have the same number of dims")
        src = [_wrap_dim(s, nd) for s in src]
        dst = [_wrap_dim(d, nd) for d in dst]
        if nd == 0:   # dims 0 / -1 of a 0-d tensor: itself (a view), as PyTorch
            return self.view(())
        if len(set(src)) != len(src):
            raise RuntimeError(f"movedim: repeated dim in `source` ({list(source) if isinstance(source, (list, tuple)) else source})")
        if len(set(dst)) != len(dst):
            raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination) if isinstance(destination, (list, tuple)) else destination})")
        order = [None] * nd
        for s, d in zip(src, dst):
            order[d] = s
        rest = iter(i for i in range(nd) if i not in src)
        order = [o if o is not None else next(rest) for o in order]
        return self.permute(*order)

    moveaxis = movedim

    def narrow(self, dim, start, length):
        return _wrap(lib.tn_narrow(self._ptr, _int(dim, "narrow"), _int(start, "narrow", "start"),
                                   _int(length, "narrow", "length")))

    def select(self, dim, index):
        return _wrap(lib.tn_select(self._ptr, _int(dim, "select"), _int(index, "select", "index")))

    def expand(self, *sizes):
        arr, n = _i64(_shape_args(sizes))
        return _wrap(lib.tn_expand(self._ptr, arr, n))

    def expand_as(self, other):
        return _wrap(lib.tn_expand_as(self._ptr, _tp(other, "expand_as", "other")))

    def broadcast_to(self, size):
        arr, n = _i64(_shape_args((size,)))
        return _wrap(lib.tn_broadcast_to(self._ptr, arr, n))

    def squeeze(self, dim=None):
        if dim is None:
            return _wrap(lib.tn_squeeze(self._ptr))
        if isinstance(dim, (tuple, list)):
            nd, r = self.ndim, self
            for d in sorted({_wrap_dim(d, nd) for d in _dims_list(dim, "squeeze")}, reverse=True):
                r = _wrap(lib.tn_squeeze_dim(r._ptr, d))
            return r
        return _wrap(lib.tn_squeeze_dim(self._ptr, _int(dim, "squeeze")))

    def unsqueeze(self, dim):
        return _wrap(lib.tn_unsqueeze(self._ptr, _int(dim, "unsqueeze")))

    def unfold(self, dimension, size, step):
        return _wrap(lib.tn_unfold(self._ptr, _int(dimension, "unfold", "dimension"), _int(size, "unfold", "size"),
                                   _int(step, "unfold", "step")))

    def as_strided(self, size, stride, storage_offset=None):
        shp, n = _i64(size)
        st, m = _i64(stride)
        if n != m:
            raise RuntimeError(f"mismatch in length of strides and shape ({m} vs {n})")
        off = self.storage_offset() if storage_offset is None else _int(storage_offset, "as_strided", "storage_offset")
        return _wrap(lib.tn_as_strided(self._ptr, shp, n, st, off))

    def unbind(self, dim=0):
        dim = _int(dim, "unbind")
        n = self.size(dim)
        return tuple(_wrap(lib.tn_select(self._ptr, dim, i)) for i in range(n))

    def split(self, split_size, dim=0):
        dim = _int(dim, "split")
        if isinstance(split_size, (list, tuple)):
            arr, n = _i64(split_size, "split_sizes")
            return self._pieces(lambda out, cap: lib.tn_split_sizes_str(self._ptr, arr, n, out, cap, b"dim=%d" % dim))
        s = _int(split_size, "split", "split_size")
        return self._pieces(lambda out, cap: lib.tn_split_str(self._ptr, s, out, cap, b"dim=%d" % dim))

    def chunk(self, chunks, dim=0):
        chunks, dim = _int(chunks, "chunk", "chunks"), _int(dim, "chunk")
        return self._pieces(lambda out, cap: lib.tn_chunk_str(self._ptr, chunks, out, cap, b"dim=%d" % dim))

    @staticmethod
    def _pieces(call):
        """The views of tn_split_str/tn_chunk_str: counted first (out = NULL), then made."""
        k = _check_int(call(None, 0))
        out = (c_void_p * max(k, 1))()
        k = _check_int(call(out, k))
        return tuple(_wrap(out[i]) for i in range(k))

    def flip(self, *dims, **kw):
        if kw:   # flip(dims=...) as PyTorch's keyword
            if dims or set(kw) != {"dims"}:
                raise TypeError(f"flip() got an unexpected keyword argument {sorted(set(kw) - {'dims'}) or ['dims']}")
            dims = (kw["dims"],)
        arr, n = _i64(_shape_args(dims, "dims"))
        return _wrap(lib.tn_flip(self._ptr, arr, n))

    def fliplr(self):
        if self.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self):
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def roll(self, shifts, dims=None):
        sh = _dims_list(shifts)
        if dims is None:
            if len(sh) != 1:
                raise RuntimeError("roll: shifts must be a single int when dims is not given")
            a, _ = _i64(sh)
            return _wrap(lib.tn_roll(self._ptr, a, None, 0))
        dm = _dims_list(dims)
        if len(sh) != len(dm):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dm)}")
        a, n = _i64(sh)
        b, _ = _i64(dm)
        return _wrap(lib.tn_roll(self._ptr, a, b, n))

    def repeat(self, *sizes):
        arr, n = _i64(_shape_args(sizes, "repeats"))
        return _wrap(lib.tn_repeat(self._ptr, arr, n))

    def tile(self, *dims):
        d = _shape_args(dims, "dims")
        d = [1] * (self.ndim - len(d)) + d
        return self.repeat(*d)

    def tril(self, diagonal=0):
        return _wrap(lib.tn_tril_str(self._matrix("tril")._ptr, f"diagonal={_int(diagonal, 'tril', 'diagonal')}".encode()))

    def triu(self, diagonal=0):
        return _wrap(lib.tn_triu_str(self._matrix("triu")._ptr, f"diagonal={_int(diagonal, 'triu', 'diagonal')}".encode()))

    def _matrix(self, fn):
        if self.ndim < 2:      # PyTorch checks the dim -2 first: IndexError
            raise IndexError(f"{fn}: Dimension out of range (expected to be in range of "
                             f"[{-max(self.ndim, 1)}, {max(self.ndim, 1) - 1}], but got -2)")
        return self

    def tril_(self, diagonal=0):
        return self._store(self.tril(diagonal))

    def triu_(self, diagonal=0):
        return self._store(self.triu(diagonal))

    # -- gathering, scattering, masks
    def index_select(self, dim, index):
        i = _index_arg(index)        # a local: the C call must not outlive a temporary
        return _wrap(lib.tn_index_select(self._ptr, _int(dim, "index_select"), i._ptr))

    def gather(self, dim, index):
        i = _index_arg(index)
        return _wrap(lib.tn_gather(self._ptr, _int(dim, "gather"), i._ptr))

    def _scatter_src(self, index, src, value, fn):
        if src is None:
            src = value
        _tp(index, fn, "index")
        if not isinstance(src, Tensor):
            if _scalar_kind(src) is None:
                raise TypeError(f"{fn}(): argument 'src' must be Tensor or Number, not {type(src).__name__}")
            src = full(tuple(index.shape), src, dtype=self.dtype)
        return src

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        s = self._scatter_src(index, src, value, "scatter")
        if reduce is not None:     # 'add' | 'multiply': no derivative, as PyTorch
            return _wrap(lib.tn_scatter_with_reduce(self._ptr, _int(dim, "scatter"), index._ptr, s._ptr, _str_arg(reduce, "scatter", "reduce")))
        return _wrap(lib.tn_scatter(self._ptr, _int(dim, "scatter"), index._ptr, s._ptr))

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        s = self._scatter_src(index, src, value, "scatter_")
        if reduce is not None:
            return self._inplace(lib.tn_scatter_with_reduce_(self._ptr, _int(dim, "scatter_"), index._ptr, s._ptr,
                                                             _str_arg(reduce, "scatter_", "reduce")))
        return self._inplace(lib.tn_scatter_(self._ptr, _int(dim, "scatter_"), index._ptr, s._ptr))

    def scatter_add(self, dim, index, src):
        return _wrap(lib.tn_scatter_add(self._ptr, _int(dim, "scatter_add"), _tp(index, "scatter_add", "index"),
                                        _tp(src, "scatter_add", "src")))

    def scatter_add_(self, dim, index, src):
        return self._inplace(lib.tn_scatter_add_(self._ptr, _int(dim, "scatter_add_"),
                                                 _tp(index, "scatter_add_", "index"), _tp(src, "scatter_add_", "src")))

    def index_put_(self, indices, values, accumulate=False):
        idx = [None if i is None else _index_arg(i) for i in indices]
        v = _setitem_value(self, values)
        return self._inplace(lib.tn_index_put__str(self._ptr, _ptrs(idx), len(idx), v._ptr, b"accumulate=True" if accumulate else None))

    def index_put(self, indices, values, accumulate=False):
        idx = [None if i is None else _index_arg(i) for i in indices]
        v = _setitem_value(self, values)
        return _wrap(lib.tn_index_put_str(self._ptr, _ptrs(idx), len(idx), v._ptr, b"accumulate=True" if accumulate else None))

    def masked_fill(self, mask, value):
        if isinstance(value, Tensor):  # the tensor overload: value gets its gradient
            return _wrap(lib.tn_masked_fill_tensor(self._ptr, _tp(mask, "masked_fill", "mask"), value._ptr))
        return _wrap(lib.tn_masked_fill(self._ptr, _tp(mask, "masked_fill", "mask"),
                                        _scalar(value, "masked_fill", "value")))

    def masked_fill_(self, mask, value):
        if isinstance(value, Tensor):
            return self._inplace(lib.tn_masked_fill_tensor_(self._ptr, _tp(mask, "masked_fill_", "mask"), value._ptr))
        return self._inplace(lib.tn_masked_fill_(self._ptr, _tp(mask, "masked_fill_", "mask"),
                                                 _scalar(value, "masked_fill_", "value")))

    def masked_select(self, mask):
        return _wrap(lib.tn_masked_select(self._ptr, _tp(mask, "masked_select", "mask")))

    def nonzero(self, *, as_tuple=False):
        nz = _wrap(lib.tn_nonzero(self._ptr))
        if not as_tuple:
            return nz
        if self.ndim == 0:   # nz is [n, 0]: n = 1 when the value is nonzero
            return (_wrap(lib.tn_zeros(*_i64([nz.shape[0]]), int64._code)),)
        return tuple(nz.select(1, d) for d in range(self.ndim))

    def argwhere(self):
        return _wrap(lib.tn_argwhere(self._ptr))

    def where(self, condition, y):
        return where(condition, self, y)

    # -- indexing
    def __getitem__(self, index):
        ti = type(index)
        if ti is int and _INT64_MIN <= index <= _INT64_MAX:
            return _wrap(lib.tn_select(self._ptr, 0, index))
        if ti is slice and (index.step is None or type(index.step) is int and index.step > 0) \
                and type(index.start) in (int, type(None)) and type(index.stop) in (int, type(None)):
            return _wrap(lib.tn_slice(self._ptr, 0, 0 if index.start is None else _clamp64(index.start),
                                      _INT64_MAX if index.stop is None else _clamp64(index.stop), index.step or 1))
        result, out = self._apply_slicing(index)
        if not out:
            return result if result is not self else self._alias()
        return _wrap(lib.tn_index(result._ptr, _ptrs(out), len(out)))

    def _alias(self):
        arr, n = _i64(self.shape)
        return _wrap(lib.tn_expand(self._ptr, arr, n))

    def _apply_slicing(self, index):
        """PyTorch's applySlicing: basic indices become views of self, advanced ones
        (tensors, sequences, bools) are collected per result dim for tn_index (None = ':')."""
        if not _seq_as_tuple(index):
            index = (index,)
        nd = self.ndim
        specified = 0
        for o in index:
            if isinstance(o, Tensor):
                specified += o.ndim if o.dtype is bool_ or o.dtype is uint8 else 1
            elif o is not None and o is not Ellipsis and o is not True and o is not False:
                specified += 1
        if specified > nd:
            raise IndexError(f"too many indices for tensor of dimension {nd}")
        result, dim, out = self, 0, []

        def record(t):
            nonlocal dim
            out.extend([None] * (dim + 1 - len(out)))
            out[dim] = t
            dim += 1

        def bool_index(b):
            return _wrap(lib.tn_zeros(*_i64([1 if b else 0]), int64._code))

        for o in index:
            if isinstance(o, Tensor):
                if o.ndim == 0 and not o.dtype.is_floating_point:
                    if o.dtype is bool_ or o.dtype is uint8:
                        result = result.unsqueeze(dim)
                        record(bool_index(bool(o.item())))
                    else:
                        result = _wrap(lib.tn_select(result._ptr, dim, _int(o.item(), "index", "index")))
                    continue
                record(o)
            elif o is None:
                result = _wrap(lib.tn_unsqueeze(result._ptr, dim))
                dim += 1
            elif o is Ellipsis:
                dim += nd - specified
            elif o is True or o is False:
                result = _wrap(lib.tn_unsqueeze(result._ptr, dim))
                record(bool_index(o))
            elif isinstance(o, slice):
                step = 1 if o.step is None else operator.index(o.step)
                if step <= 0:
                    raise ValueError("step must be greater than zero")
                start = 0 if o.start is None else _clamp64(o.start)
                stop = _INT64_MAX if o.stop is None else _clamp64(o.stop)
                result = _wrap(lib.tn_slice(result._ptr, dim, start, stop, step))
                dim += 1
            elif _is_seq(o):
                record(_index_tensor(o))
            else:
                if isinstance(o, (str, bytes)):       # PyTorch: TypeError
                    raise TypeError(f"new(): invalid data type '{type(o).__name__}' as an index")
                try:
                    i = operator.index(o)
                except TypeError:
                    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                     f"Variables are valid indices (got {type(o).__name__})") from None
                result = _wrap(lib.tn_select(result._ptr, dim, _int(i, "index", "index")))
        return result, out

    def __setitem__(self, index, value):
        v = _setitem_value(self, value)
        if index is False:
            return
        result, out = self._apply_slicing(index)
        if not out:
            _copy_to(result, v)
            return
        shp = list(v.shape)
        k = 0
        while k < len(shp) and shp[k] == 1:
            k += 1
        if k:
            v = v.view(shp[k:])
        v = _unalias(result, v)
        self_ = result
        self_._inplace(lib.tn_index_put__str(self_._ptr, _ptrs(out), len(out), v._ptr, None))

    def __delitem__(self, index):
        raise TypeError("Tensor does not support deleting items")

    # -- pointwise / reductions / operators are attached below by _install_ops()


def _index_arg(i):
    if isinstance(i, Tensor):
        return i
    return _index_tensor(i) if _is_seq(i) else _tensor_from_data(i)


def _setitem_value(self, value):
    """The value of ``x[i] = value`` as a tensor: a Tensor as is, a Python number as a
    0-d tensor of x's dtype (PyTorch's valueToTensor), a sequence converted to x's dtype."""
    if isinstance(value, Tensor):
        return value
    if _scalar_kind(value) is not None:
        s = _scalar_tensor(value)
        return s if s.dtype is self.dtype else _wrap(lib.tn_to_dtype(s._ptr, self.dtype._code))
    if _is_seq(value):
        return _tensor_from_data(value, self.dtype)
    raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}")


def _copy_to(dst, src):
    """PyTorch's copy_to of basic-index assignment: src's leading 1-dims are dropped,
    then it broadcasts into dst."""
    if src.ndim > dst.ndim or (src.ndim and tuple(src.shape) != tuple(dst.shape)):
        shp = list(src.shape)
        k = 0
        while k < len(shp) and shp[k] == 1:
            k += 1
        if k:
            src = src.view(shp[k:])
    src = _unalias(dst, src)
    _check_int(lib.tn_copy_(dst._ptr, src._ptr))


def _rebuild_tensor_bytes(data, dtype_name, shape, requires_grad=False):
    dt = _BY_NAME[dtype_name]
    arr, n = _i64(shape)
    count = 1
    for v in shape:
        count *= v
    if len(data) != count * dt.itemsize:
        raise RuntimeError(f"unpickling a tensor: {len(data)} bytes for shape {list(shape)} of {dt}")
    if not data:
        t = _wrap(lib.tn_empty(arr, n, dt._code))
    else:
        t = _wrap(lib.tn_from_data(bytes(data), arr, n, dt._code))      # ctypes passes the bytes' buffer
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(data, dtype_name, shape):       # pickles of earlier versions (nested lists)
    t = _tensor_from_data(data, _BY_NAME[dtype_name])
    return t.reshape(shape)


# --------------------------------------------------------------------------- creation (used by Tensor methods)
_default_device = [None]          # torch.set_default_device: None is the CPU


def set_default_device(device):
    """torch.set_default_device (PyTorch 2): the device of factories called without
    device= (tensor, zeros, rand, arange, ...); None or 'cpu' restores the CPU. The *_like
    factories keep their input's device, as PyTorch's."""
    d = None if device is None else _to_device(device)
    if d is not None:
        d._code                   # a device type tensors cannot live on is refused here
    _default_device[0] = None if d is None or d.type == "cpu" else d


def get_default_device():
    return _default_device[0] or _CPU


def _finish(t, dev, requires_grad):
    dev = _to_device(dev) or _default_device[0]
    if dev is not None and dev.type != t.device.type:
        t = _wrap(lib.tn_to(t._ptr, dev._code))
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists/tuples of numbers, a NumPy array, a
    scalar or a Tensor). dtype inference as PyTorch: bools -> bool, ints -> int64,
    floats -> the default dtype (float32); NumPy arrays keep their dtype."""
    return _finish(_tensor_from_data(data, _to_dtype(dtype)), device, requires_grad)


def _shape_kw(size, kw):
    if "size" in kw:
        if size:
            raise TypeError("size given both positionally and as a keyword")
        size = (kw.pop("size"),)
    return _i64(_shape_args(size))


def _dt(d):
    return _to_dtype(d) or _default_dtype[0]


def empty(*size, dtype=None, device=None, requires_grad=False, **kw):
    arr, n = _shape_kw(size, kw)
    return _finish(_wrap(lib.tn_empty(arr, n, _dt(dtype)._code)), device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, **kw):
    arr, n = _shape_kw(size, kw)
    return _finish(_wrap(lib.tn_zeros(arr, n, _dt(dtype)._code)), device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, **kw):
    arr, n = _shape_kw(size, kw)
    return _finish(_wrap(lib.tn_ones(arr, n, _dt(dtype)._code)), device, requires_grad)


def _fill_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype
    k = _scalar_kind(value)
    if k is None:
        raise TypeError(f"fill_value must be a number, got {type(value).__name__}")
    return (bool_, int64, _default_dtype[0], _default_dtype[0].to_complex())[k]


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    dt = _to_dtype(dtype) or _fill_dtype(fill_value)
    arr, n = _i64(_shape_args((size,)))
    if isinstance(fill_value, Tensor) or _scalar_kind(fill_value) == 3 or (_scalar_kind(fill_value) == 1 and abs(int(fill_value)) > 2 ** 53):
        t = _wrap(lib.tn_empty(arr, n, dt._code)).fill_(fill_value)
    else:
        t = _wrap(lib.tn_full(arr, n, _scalar(fill_value, "full", "fill_value"), dt._code))
    return _finish(t, device, requires_grad)


def where(condition, input=None, other=None):
    """where(condition, input, other): elementwise choice; where(condition) is
    nonzero(as_tuple=True). Python scalars act as wrapped numbers; two scalars give the
    default dtype (as PyTorch)."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        kinds = (_scalar_kind(input), _scalar_kind(other))
        dt = (bool_, int64, _default_dtype[0])[max(kinds)]
        input, other = tensor(input, dtype=dt), tensor(other, dtype=dt)
    a, b = _operand(input), _operand(other)
    return _wrap(lib.tn_where(_tp(condition, "where", "condition"), a._ptr, b._ptr))
