"""Creation functions beyond tensor/zeros/ones/empty/full, the RNG and memory statistics."""
import ctypes
import numbers
import os

from ._C import lib
from ._core import (Tensor, _check_int, _dt, _finish, _float, _i64, _int, _numpy, _overflow, _raise, _scalar, _scalar_kind,
                    _shape_kw, _shape_args, _tensor_arg, _tensor_from_data, _to_dtype, _tp, _wrap, _default_dtype, empty,
                    float64, from_numpy, full, int64, tensor, uint8, zeros, ones)

_MASK64 = (1 << 64) - 1


# --------------------------------------------------------------------------- ranges
def _num(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """arange(end) | arange(start, end, step=1): int64 when every argument is an int,
    the default dtype (float32) when any is a float, as PyTorch."""
    if end is None:
        start, end = 0, start
    start, end, step = _num(start), _num(end), _num(step)
    dt = _to_dtype(dtype)
    if dt is None:
        dt = _default_dtype[0] if any(_scalar_kind(v) == 2 for v in (start, end, step)) else int64
    return _finish(_wrap(lib.tn_arange(_scalar(start, "arange", "start"), _scalar(end, "arange", "end"),
                                       _scalar(step, "arange", "step"), dt._code)), device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    return _finish(_wrap(lib.tn_linspace(_scalar(start, "linspace", "start"), _scalar(end, "linspace", "end"),
                                         _int(steps, "linspace", "steps"), _dt(dtype)._code)), device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    return _finish(_wrap(lib.tn_logspace_str(_scalar(start, "logspace", "start"), _scalar(end, "logspace", "end"),
                                             _int(steps, "logspace", "steps"), _dt(dtype)._code,
                                             f"base={_float(base, 'logspace', 'base')!r}".encode())), device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    if m is not None and _int(m, "eye", "m") < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _finish(_wrap(lib.tn_eye(_int(n, "eye", "n"), -1 if m is None else _int(m, "eye", "m"), _dt(dtype)._code)),
                   device, requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    dt = int64 if dtype is None else _dt(dtype)
    text = f"offset={_int(offset, 'tril_indices', 'offset')}, dtype={lib.tn_dtype_name(dt._code).decode()}"
    return _finish(_wrap(lib.tn_tril_indices_str(_int(row, "tril_indices", "row"), _int(col, "tril_indices", "col"), text.encode())),
                   device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    dt = int64 if dtype is None else _dt(dtype)
    text = f"offset={_int(offset, 'triu_indices', 'offset')}, dtype={lib.tn_dtype_name(dt._code).decode()}"
    return _finish(_wrap(lib.tn_triu_indices_str(_int(row, "triu_indices", "row"), _int(col, "triu_indices", "col"), text.encode())),
                   device, False)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(_wrap(lib.tn_scalar_tensor(_scalar(s, "scalar_tensor", "s"), _dt(dtype)._code)), device, requires_grad)


# --------------------------------------------------------------------------- *_like
def _like(input, dtype, make_same, make_new):
    dt = _to_dtype(dtype)
    if dt is None or dt is input.dtype:
        return _wrap(make_same(_tp(input, "like")))
    return make_new(tuple(input.shape), dt)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(_like(input, dtype, lib.tn_empty_like, lambda s, d: empty(s, dtype=d, device=input.device)),
                   device or input.device, requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(_like(input, dtype, lib.tn_zeros_like, lambda s, d: zeros(s, dtype=d, device=input.device)),
                   device or input.device, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(_like(input, dtype, lib.tn_ones_like, lambda s, d: ones(s, dtype=d, device=input.device)),
                   device or input.device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    _tp(input, "full_like")
    dt = _to_dtype(dtype) or input.dtype
    dev = device or input.device
    return _finish(full(tuple(input.shape), fill_value, dtype=dt, device=dev), dev, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    _tp(input, "rand_like")
    return rand(tuple(input.shape), dtype=_to_dtype(dtype) or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    _tp(input, "randn_like")
    return randn(tuple(input.shape), dtype=_to_dtype(dtype) or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    _tp(input, "randint_like")
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=_to_dtype(dtype) or input.dtype, device=device or input.device,
                   requires_grad=requires_grad)


def _new_size(fn, size, kw):
    """The size of x.new_zeros(2, 3) / ((2, 3)) / ([2, 3]) / (torch.Size) / (size=...)."""
    if "size" in kw:
        if size:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        size = (kw.pop("size"),)
    if kw:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kw))}'")
    if not size:
        raise TypeError(f"{fn}() missing 1 required positional arguments: \"size\"")
    return _shape_args(size)


def _new_factory(fn, name):
    """Tensor.new_zeros / new_ones / new_empty: self's dtype and device unless given."""
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        shape = _new_size(name, size, kw)
        return fn(shape, dtype=_to_dtype(dtype) or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
    method.__name__ = method.__qualname__ = name
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return full(tuple(_shape_args((size,))), fill_value, dtype=_to_dtype(dtype) or self.dtype,
                device=device or self.device, requires_grad=requires_grad)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    return tensor(data, dtype=_to_dtype(dtype) or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


def _new(self, *args, device=None):
    """The legacy x.new(...): x's dtype; sizes give an uninitialised tensor, data a copy."""
    from ._tensor_types import TENSOR_TYPES, CUDA_TENSOR_TYPES
    cls = next(c for c in (CUDA_TENSOR_TYPES if self.is_cuda else TENSOR_TYPES).values() if c.dtype is self.dtype)
    return cls(*args, device=device)


Tensor.new_zeros = _new_factory(zeros, "new_zeros")
Tensor.new_ones = _new_factory(ones, "new_ones")
Tensor.new_empty = _new_factory(empty, "new_empty")
Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor
Tensor.new = _new


def _resize_(self, *sizes, memory_format=None):
    """Tensor.resize_: self takes the shape in place (contiguous), its storage grown when
    too small (tn_resize_)."""
    arr, n = _i64(_shape_args(sizes))
    if not lib.tn_resize_(self._ptr, arr, n):
        _raise()
    return self


Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, other, memory_format=None: _resize_(self, _tensor_arg(other, "resize_as_", "the_template").shape)


def as_tensor(data, dtype=None, device=None):
    """Shares memory where it can: a Tensor of the right dtype is returned as is, a NumPy
    array of a supported dtype is wrapped without a copy."""
    dt = _to_dtype(dtype)
    if isinstance(data, Tensor):
        return data.to(dtype=dt, device=device)
    np = _numpy()
    if np is not None and isinstance(data, np.ndarray):
        try:
            t = from_numpy(data)
        except (TypeError, ValueError):
            t = _tensor_from_data(data)
        return _finish(t if dt is None else t.to(dt), device, False)
    return tensor(data, dtype=dt, device=device)


asarray = as_tensor


# --------------------------------------------------------------------------- RNG
class Generator:
    """PyTorch's CPU generator (mt19937, as ``torch.Generator()``: the same numbers for the
    same seed); pass it as ``generator=`` to random functions. Its state is PyTorch's
    5056-byte layout, so ``torch.get_rng_state()`` of real PyTorch loads here and back."""

    def __init__(self, device="cpu"):
        self._g = lib.tn_generator_new(67280421310721)
        if not self._g:
            _raise()
        self._owned = True

    @classmethod
    def _default(cls):
        g = object.__new__(cls)
        g._g = lib.tn_default_generator()
        g._owned = False
        return g

    @property
    def device(self):
        from ._core import _CPU
        return _CPU

    def manual_seed(self, seed):
        lib.tn_generator_manual_seed(self._handle(), _seed(seed))
        return self

    def _handle(self):
        g = getattr(self, "_g", None)
        if not g:
            raise RuntimeError("this Generator was released (its __del__ ran) or never initialised")
        return g

    def initial_seed(self):
        return self._handle().contents.seed

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(s)
        return s

    def get_state(self):
        buf = (ctypes.c_uint8 * _STATE_BYTES)()
        n = _check_int(lib.tn_generator_get_state(self._handle(), buf, _STATE_BYTES))
        return tensor(list(buf[:n]), dtype=uint8)

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError("expected a torch.ByteTensor, but got %s" % type(new_state).__name__)
        if new_state.dtype != uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        b = bytes(new_state.tolist())
        buf = (ctypes.c_uint8 * max(len(b), 1)).from_buffer_copy(b or b"\0")
        _check_int(lib.tn_generator_set_state(self._handle(), buf, len(b)))
        return self

    def __del__(self, _free=lib.tn_generator_free):
        if getattr(self, "_owned", False) and self._g:
            _free(self._g)
            self._g = None


_STATE_BYTES = 5056   # TN_GENERATOR_STATE_BYTES


default_generator = Generator._default()


def _seed(seed):
    """A seed as torch reads it (int(seed): '3' and 2.5 work, 'a' is a ValueError) in
    [-2**63, 2**64), negative seeds taken modulo 2**64."""
    s = int(seed)
    if not -(1 << 63) <= s <= _MASK64:
        raise _overflow(s, "seed")
    return s & _MASK64


def manual_seed(seed):
    lib.tn_manual_seed(_seed(seed))
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _gen(generator):
    """The tn_generator * of a generator= argument (None: the default generator)."""
    if generator is None:
        return None
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    return generator._handle()


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **kw):
    arr, n = _shape_kw(size, kw)
    return _finish(_wrap(lib.tn_rand_gen(arr, n, _dt(dtype)._code, _gen(generator))), device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **kw):
    arr, n = _shape_kw(size, kw)
    return _finish(_wrap(lib.tn_randn_gen(arr, n, _dt(dtype)._code, _gen(generator))), device, requires_grad)


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, low=None, high=None):
    """randint(high, size) | randint(low, high, size): integers uniform in [low, high)."""
    args = list(args)
    if size is None and args and not isinstance(args[-1], numbers.Integral):
        size = args.pop()
    if high is None:
        high = args.pop() if args else None
    if low is None:
        low = args.pop() if args else 0
    if high is None or size is None or args:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    arr, n = _i64(_shape_args((size,)))
    dt = _to_dtype(dtype) or int64
    return _finish(_wrap(lib.tn_randint(_int(low, "randint", "low"), _int(high, "randint", "high"), arr, n, dt._code,
                                        _gen(generator))), device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _to_dtype(dtype) or int64
    return _finish(_wrap(lib.tn_randperm(_int(n, "randperm", "n"), dt._code, _gen(generator))), device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """normal(mean, std, size) with numbers, or elementwise with tensor mean and/or std."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal(): with number mean and std, size is required")
        arr, n = _i64(_shape_args((size,)))
        return _finish(_wrap(lib.tn_normal(_float(mean, "normal", "mean"), _float(std, "normal", "std"), arr, n,
                                           _dt(dtype)._code, _gen(generator))), device, requires_grad)
    from ._ops import broadcast_shapes, result_type
    shape = broadcast_shapes(*[t.shape for t in (mean, std) if isinstance(t, Tensor)])
    dt = result_type(mean, std)
    z = randn(shape, generator=generator, dtype=dt)
    return (z * std + mean).to(dt)


def bernoulli(input, p=None, *, generator=None):
    if p is None:
        return _wrap(lib.tn_bernoulli(_tp(input, "bernoulli"), _gen(generator)))
    _tp(input, "bernoulli")
    arr, n = _i64(input.shape)
    return _wrap(lib.tn_bernoulli_p(arr, n, _float(p, "bernoulli", "p"), input.dtype._code, _gen(generator)))


Tensor.bernoulli = bernoulli


# the samplers behind torch.distributions (CPU)
def _standard_gamma(input, generator=None):
    return _wrap(lib.tn_standard_gamma(_tp(input, "_standard_gamma"), _gen(generator)))


def _standard_gamma_grad(input, output):
    return _wrap(lib.tn_standard_gamma_grad(_tp(input, "_standard_gamma_grad"), _tp(output, "_standard_gamma_grad", "output")))


def poisson(input, generator=None):
    return _wrap(lib.tn_poisson(_tp(input, "poisson"), _gen(generator)))


def binomial(count, prob, generator=None):
    return _wrap(lib.tn_binomial(_tp(count, "binomial", "count"), _tp(prob, "binomial", "prob"), _gen(generator)))


def _sample_dirichlet(input, generator=None):
    return _wrap(lib.tn_sample_dirichlet(_tp(input, "_sample_dirichlet"), _gen(generator)))


# --------------------------------------------------------------------------- library state
def memory_stats():
    """The C library's live tensor/storage/byte counts and peak bytes."""
    s = lib.tn_memory_stats_get()
    return {"live_tensors": s.live_tensors, "live_storages": s.live_storages,
            "live_bytes": s.live_bytes, "peak_bytes": s.peak_bytes}


def reset_peak_memory_stats():
    lib.tn_memory_stats_reset_peak()


def set_num_threads(n):
    if not isinstance(n, numbers.Integral):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    n = int(n)
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    lib.tn_set_num_threads(min(n, (1 << 31) - 1))


def get_num_threads():
    return lib.tn_get_num_threads()
