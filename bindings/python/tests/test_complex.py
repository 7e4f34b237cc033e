"""complex64 and complex128 (torch.complex64/cfloat, torch.complex128/cdouble) against
PyTorch: names, creation and inference from Python complex numbers, casts both ways with
every dtype, the promotion table of every pair, printing, item, the real/imag and
view_as_real/view_as_complex views (shared storage, setters, torch's errors), conj,
complex and polar, the elementwise formulas on random non-contiguous and broadcast
inputs, reductions, matmul, and gradients (PyTorch's conjugate Wirtinger convention).
Skipped without torch."""
import cmath
import math

import pytest

import tensor as tn

torch = pytest.importorskip("torch")

CPLX = ("complex64", "complex128")
ALL = ("float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16", "int8", "int16",
       "complex64", "complex128")


def _t(name):
    return getattr(torch, name)


def _n(name):
    return getattr(tn, name)


def _flat(v):
    return [u for w in v for u in _flat(w)] if isinstance(v, list) else [v]


def _close(a, b, rtol=None, atol=None, dtype_check=True):
    """a (tensor.h) equals b (torch) in dtype and shape, values within the dtype's
    tolerance (NaN equal to NaN, infinities exact)."""
    if dtype_check:
        assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    single = b.dtype in (torch.complex64, torch.float32)
    rtol = rtol if rtol is not None else (2e-5 if single else 1e-12)
    atol = atol if atol is not None else (1e-5 if single else 1e-12)
    for u, v in zip(_flat(a.tolist()), _flat(b.tolist())):
        u, v = complex(u), complex(v)
        for x, y in ((u.real, v.real), (u.imag, v.imag)):
            if math.isnan(y):
                assert math.isnan(x), (u, v)
            elif math.isinf(y):
                assert x == y, (u, v)
            else:
                assert abs(x - y) <= atol + rtol * max(abs(y), abs(v) if cmath.isfinite(v) else 0), (u, v)


def _rand(shape, dtype, seed=0, noncontig=False):
    g = torch.Generator().manual_seed(seed)
    b = torch.randn(*shape, dtype=_t(dtype), generator=g)
    if noncontig:   # the transpose of a tensor stored the other way round
        b = torch.randn(*reversed(shape), dtype=_t(dtype), generator=g).permute(*reversed(range(len(shape))))
    a = tn.view_as_complex(tn.tensor(torch.view_as_real(b.contiguous()).tolist(), dtype=_n(dtype).to_real()))
    if noncontig:
        a = tn.view_as_complex(tn.tensor(torch.view_as_real(b.permute(*reversed(range(len(shape)))).contiguous()).tolist(),
                                         dtype=_n(dtype).to_real())).permute(*reversed(range(len(shape))))
        assert not a.is_contiguous()
    return a, b


def test_names_aliases_and_dtype_info():
    assert tn.cfloat is tn.complex64 and tn.cdouble is tn.complex128
    assert repr(tn.complex64) == "torch.complex64" and tn.complex128.itemsize == 16 and tn.complex64.itemsize == 8
    assert tn.complex64.is_complex and not tn.complex64.is_floating_point and not tn.float32.is_complex
    assert tn.complex64.to_real() is tn.float32 and tn.complex128.to_real() is tn.float64
    assert tn.float64.to_complex() is tn.complex128 and tn.float32.to_complex() is tn.complex64
    x = tn.tensor([1 + 2j])
    assert x.is_complex() and tn.is_complex(x) and not tn.is_complex(tn.ones(2))
    assert x.type() == "torch.ComplexFloatTensor" and not hasattr(tn, "ComplexFloatTensor")
    assert x.element_size() == 8


def test_creation_and_inference():
    for data in ([1 + 2j, 3 - 1j], [[1, 2j], [0.5, True]], 2j, [1.5, 2 + 0j], []):
        if data == []:
            continue
        a, b = tn.tensor(data), torch.tensor(data)
        _close(a, b)
    _close(tn.tensor([1 + 2j], dtype=tn.complex128), torch.tensor([1 + 2j], dtype=torch.complex128))
    _close(tn.tensor([1, 2], dtype=tn.complex64), torch.tensor([1, 2], dtype=torch.complex64))
    for f in ("zeros", "ones", "empty"):
        for d in CPLX:
            a, b = getattr(tn, f)(2, 3, dtype=_n(d)), getattr(torch, f)(2, 3, dtype=_t(d))
            assert str(a.dtype) == str(b.dtype) and a.shape == b.shape
            if f != "empty":
                _close(a, b)
    _close(tn.full((2,), 2.5, dtype=tn.complex64), torch.full((2,), 2.5, dtype=torch.complex64))
    _close(tn.zeros(0, 3, dtype=tn.complex128), torch.zeros(0, 3, dtype=torch.complex128))
    tn.set_default_dtype(tn.float64)
    torch.set_default_dtype(torch.float64)
    try:
        _close(tn.tensor([1 + 2j]), torch.tensor([1 + 2j]))     # the default float's complex
        assert repr(tn.tensor([1 + 2j])) == repr(torch.tensor([1 + 2j]))
        assert (tn.ones(2, dtype=tn.float32) + 1j).dtype is tn.complex64
    finally:
        tn.set_default_dtype(tn.float32)
        torch.set_default_dtype(torch.float32)


SPECIAL = [0.0, -0.0, 1.5, -1.5, 300.0, -129.0, 3e9, float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("dst", ALL)
@pytest.mark.parametrize("src", CPLX)
def test_casts_from_complex(src, dst):
    vals = [complex(r, i) for r, i in zip(SPECIAL, reversed(SPECIAL))] + [0j, 1j, 2 + 0j]
    if dst not in ("float32", "float64", "complex64", "complex128", "float16", "bfloat16", "bool"):
        vals = [v for v in vals if math.isfinite(v.real) and abs(v.real) < 1e9] + [-0.0 + 5j]   # C's undefined casts aside
    a, b = tn.tensor(vals, dtype=_n(src)), torch.tensor(vals, dtype=_t(src))
    # complex -> bool is "nonzero" as PyTorch 2 (c10's bool cast); torch 1.13 looked at the real part only
    want = (lambda t: t != 0) if dst == "bool" else (lambda t: t.to(_t(dst)))
    _close(a.to(_n(dst)), want(b), rtol=0, atol=0)
    _close(a[::2].to(_n(dst)), want(b[::2]), rtol=0, atol=0)   # non-contiguous


@pytest.mark.parametrize("dst", CPLX)
@pytest.mark.parametrize("src", ALL)
def test_casts_to_complex(src, dst):
    vals = [0, 1, 0, 1] if src == "bool" else [0, 1, 7, 100, 3, 2]
    if src in ("float32", "float64", "float16", "bfloat16"):
        vals = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf")]
    if src in CPLX:
        vals = [1 + 2j, -0.5j, complex(float("nan"), 1)]
    if src in ("int8", "int16", "int32", "int64"):
        vals = vals + [-5, -100]
    a, b = tn.tensor(vals, dtype=_n(src)), torch.tensor(vals, dtype=_t(src))
    _close(a.to(_n(dst)), b.to(_t(dst)), rtol=0, atol=0)
    _close(a[1::2].to(_n(dst)), b[1::2].to(_t(dst)), rtol=0, atol=0)


@pytest.mark.parametrize("x", ALL)
@pytest.mark.parametrize("y", CPLX)
def test_promotion_with_every_dtype(x, y):
    assert str(tn.promote_types(_n(x), _n(y))) == str(torch.promote_types(_t(x), _t(y)))
    assert str(tn.promote_types(_n(y), _n(x))) == str(torch.promote_types(_t(y), _t(x)))
    vx = [1, 0, 1] if x == "bool" else [1, 2, 3]
    a, b = tn.tensor(vx, dtype=_n(x)), torch.tensor(vx, dtype=_t(x))
    c, d = tn.tensor([1 + 1j, -2j, 3], dtype=_n(y)), torch.tensor([1 + 1j, -2j, 3], dtype=_t(y))
    if x not in ("float16", "bfloat16"):      # torch's float16 + complex64 on CPU is complex32 territory
        _close(a + c, b + d)
        _close(c * a, d * b)
    # a 0-d complex tensor and a Python complex: c10's category rules
    z, w = tn.tensor(2j, dtype=_n(y)), torch.tensor(2j, dtype=_t(y))
    if x not in ("float16", "bfloat16"):
        _close(a + z, b + w)
        _close(a * 1j, b * 1j)
    assert str(tn.result_type(a, z)) == str(torch.result_type(b, w)) or x in ("float16", "bfloat16")
    assert tn.can_cast(_n(y), _n(x)) == torch.can_cast(_t(y), _t(x))
    assert tn.can_cast(_n(x), _n(y)) == torch.can_cast(_t(x), _t(y))


@pytest.mark.parametrize("vals", [[1 + 2j, 3 - 1j], [[1.5 + 2j, 3 - 1j], [0, -1e-3j]], [1e10 + 2j, 3 - 1j], 1 + 2j, [],
                                  [[0.25 - 1j, float("nan")], [complex(float("inf"), -2), 1e-5j]], [1j] * 30,
                                  [-0.0 - 0.0j, 5j]])
@pytest.mark.parametrize("dt", CPLX)
def test_printing(vals, dt):
    a, b = tn.tensor(vals, dtype=_n(dt)), torch.tensor(vals, dtype=_t(dt))
    assert repr(a) == repr(b)
    assert str(a.conj()) == str(b.conj().resolve_conj())


def test_item_and_tolist():
    a = tn.tensor([[1 + 2j, -3.5j]])
    assert a[0, 0].item() == 1 + 2j and isinstance(a[0, 1].item(), complex)
    assert a.tolist() == torch.tensor([[1 + 2j, -3.5j]]).tolist()
    with pytest.raises((ValueError, RuntimeError)):
        a.item()
    with pytest.raises(TypeError):
        float(tn.tensor(1 + 2j))
    assert complex(tn.tensor(1 - 1j)) == 1 - 1j


@pytest.mark.parametrize("dt", CPLX)
def test_real_imag_views(dt):
    a, b = _rand((3, 4), dt, seed=1, noncontig=True)
    _close(a.real, b.real, rtol=0, atol=0)
    _close(a.imag, b.imag, rtol=0, atol=0)
    assert a.real.stride() == b.real.stride() and a.imag.stride() == b.imag.stride()
    assert a.imag.storage_offset() == b.imag.storage_offset()
    assert a[1:, 2:].imag.storage_offset() == b[1:, 2:].imag.storage_offset()
    # views: writes show in the complex tensor
    a.real[0, 0] = 5
    b.real[0, 0] = 5
    a.imag = tn.zeros(3, 4)
    b.imag = torch.zeros(3, 4)
    a.real.mul_(2)
    b.real.mul_(2)
    _close(a, b, rtol=0, atol=0)
    r = tn.ones(3)
    assert tn.real(r) is r or tn.real(r).data_ptr() == r.data_ptr()
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        r.imag


@pytest.mark.parametrize("dt", CPLX)
def test_view_as_real_complex(dt):
    a, b = _rand((2, 3), dt, seed=2, noncontig=True)
    ra, rb = tn.view_as_real(a), torch.view_as_real(b)
    _close(ra, rb, rtol=0, atol=0)
    assert ra.stride() == rb.stride() and ra.storage_offset() == rb.storage_offset()
    _close(tn.view_as_real(a[1]), torch.view_as_real(b[1]), rtol=0, atol=0)
    ca, cb = tn.view_as_complex(ra), torch.view_as_complex(rb)
    _close(ca, cb, rtol=0, atol=0)
    x, y = tn.arange(24.).reshape(3, 4, 2), torch.arange(24.).reshape(3, 4, 2)
    _close(tn.view_as_complex(x[1:, ::2]), torch.view_as_complex(y[1:, ::2]), rtol=0, atol=0)
    assert tn.view_as_complex(x[1:]).storage_offset() == torch.view_as_complex(y[1:]).storage_offset()
    for bad in (lambda m: m.view_as_complex(m.ones(2, 3)), lambda m: m.view_as_complex(m.ones(2, 2).t()),
                lambda m: m.view_as_complex(m.ones(3, 5)[:, 1:3]), lambda m: m.view_as_complex(m.ones(5)[1:3]),
                lambda m: m.view_as_complex(m.tensor(1.)), lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int32)),
                lambda m: m.view_as_real(m.ones(2))):
        with pytest.raises(RuntimeError) as e1:
            bad(torch)
        with pytest.raises(RuntimeError) as e2:
            bad(tn)
        assert str(e1.value).split("(")[0].strip() in str(e2.value), (e1.value, e2.value)


@pytest.mark.parametrize("dt", ("float32", "float64"))
def test_complex_and_polar(dt):
    g = torch.Generator().manual_seed(3)
    re, im = torch.randn(3, 1, dtype=_t(dt), generator=g), torch.randn(4, dtype=_t(dt), generator=g)
    r, i = tn.tensor(re.tolist(), dtype=_n(dt)), tn.tensor(im.tolist(), dtype=_n(dt))
    _close(tn.complex(r, i), torch.complex(re, im), rtol=0, atol=0)
    _close(tn.polar(r.abs(), i), torch.polar(re.abs(), im), rtol=1e-6 if dt == "float32" else 1e-14)
    for bad in (lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
                lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
                lambda m: m.polar(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
                lambda m: m.complex(m.ones(2), m.ones(3))):
        with pytest.raises(RuntimeError) as e1:
            bad(torch)
        with pytest.raises(RuntimeError) as e2:
            bad(tn)
        assert str(e1.value).split("(")[0].strip() in str(e2.value), (e1.value, e2.value)


UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid",
         "square", "log2", "log10", "abs", "angle", "sgn", "conj", "isnan", "isinf", "isfinite", "logical_not"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dt", CPLX)
def test_unary(op, dt):
    a, b = _rand((4, 5), dt, seed=4, noncontig=True)
    a, b = a * 2, b * 2
    _close(getattr(a, op)(), getattr(b, op)())
    _close(getattr(tn, op)(a[0]), getattr(torch, op)(b[0]))          # a row: strided
    _close(getattr(a[:0], op)(), getattr(b[:0], op)())                # empty
    _close(getattr(a[1, 2], op)(), getattr(b[1, 2], op)())            # 0-d
    special = [0j, -0.0 + 0j, 1j, -1 + 0j, complex(float("inf"), 0), complex(0, float("nan")), complex(1e3, 2)]
    if op not in ("tan", "tanh", "sin", "cos", "sinh", "cosh", "exp", "sigmoid", "rsqrt", "reciprocal", "sgn"):
        c, d = tn.tensor(special, dtype=_n(dt)), torch.tensor(special, dtype=_t(dt))
        _close(getattr(c, op)(), getattr(d, op)())


BINARY = ["add", "sub", "mul", "div", "pow", "eq", "ne", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dt", CPLX)
def test_binary_broadcast(op, dt):
    a, b = _rand((3, 4), dt, seed=5, noncontig=True)
    c, d = _rand((4,), dt, seed=6)
    _close(getattr(a, op)(c), getattr(b, op)(d), rtol=1e-4 if dt == "complex64" else 1e-11)
    _close(getattr(c, op)(a), getattr(d, op)(b), rtol=1e-4 if dt == "complex64" else 1e-11)
    _close(getattr(a, op)(c[1]), getattr(b, op)(d[1]), rtol=1e-4 if dt == "complex64" else 1e-11)   # 0-d
    if not op.startswith("logical"):
        _close(getattr(a, op)(2 - 1j), getattr(b, op)(2 - 1j), rtol=1e-4 if dt == "complex64" else 1e-11)   # Python complex
    _close(getattr(a, op)(tn.ones(4)), getattr(b, op)(torch.ones(4)), rtol=1e-4 if dt == "complex64" else 1e-11)   # real operand
    _close(getattr(a[:0], op)(c), getattr(b[:0], op)(d))
    if op in ("add", "sub"):
        _close(getattr(a, op)(c, alpha=2.5), getattr(b, op)(d, alpha=2.5))
    if op == "div":   # by zero: c10's complex division
        z, w = tn.tensor([0j, 1 + 0j, 0j], dtype=_n(dt)), torch.tensor([0j, 1 + 0j, 0j], dtype=_t(dt))
        _close(z / tn.zeros(3, dtype=_n(dt)), w / torch.zeros(3, dtype=_t(dt)))


@pytest.mark.parametrize("dt", CPLX)
def test_ordering_and_unsupported_refused(dt):
    a = tn.tensor([1 + 2j], dtype=_n(dt))
    for f in (lambda x: x < 1, lambda x: x >= x, lambda x: x.max(), lambda x: x.sign(), lambda x: x.abs_(),
              lambda x: x.exp2(), lambda x: x.maximum(x), lambda x: x.floor()):
        with pytest.raises(RuntimeError):
            f(a)
        with pytest.raises(RuntimeError):
            f(torch.tensor([1 + 2j], dtype=_t(dt)))


@pytest.mark.parametrize("dt", CPLX)
def test_where_cat_stack_index_clone(dt):
    a, b = _rand((3, 4), dt, seed=7, noncontig=True)
    c, d = _rand((3, 4), dt, seed=8)
    m = tn.tensor([[True, False, True, False]] * 3)
    _close(tn.where(m, a, c), torch.where(torch.tensor(m.tolist()), b, d), rtol=0, atol=0)
    _close(tn.cat([a, c]), torch.cat([b, d]), rtol=0, atol=0)
    _close(tn.stack([a, c], 1), torch.stack([b, d], 1), rtol=0, atol=0)
    _close(a[tn.tensor([2, 0])], b[torch.tensor([2, 0])], rtol=0, atol=0)
    _close(a[:, 1:3], b[:, 1:3], rtol=0, atol=0)
    _close(a.clone(), b.clone(), rtol=0, atol=0)
    _close(a.contiguous(), b.contiguous(), rtol=0, atol=0)
    _close(a.t().reshape(-1), b.t().reshape(-1), rtol=0, atol=0)
    _close(a.flip(0), b.flip(0), rtol=0, atol=0)
    _close(a.index_select(1, tn.tensor([3, 1])), b.index_select(1, torch.tensor([3, 1])), rtol=0, atol=0)


@pytest.mark.parametrize("dt", CPLX)
def test_reductions(dt):
    a, b = _rand((3, 4, 5), dt, seed=9, noncontig=True)
    tol = dict(rtol=1e-5, atol=1e-5) if dt == "complex64" else {}
    _close(a.sum(), b.sum(), **tol)
    _close(a.sum(1), b.sum(1), **tol)
    _close(a.sum((0, 2), keepdim=True), b.sum((0, 2), keepdim=True), **tol)
    _close(a.mean(), b.mean(), **tol)
    _close(a.mean(-1), b.mean(-1), **tol)
    _close(a.prod(1), b.prod(1), **tol)
    _close(a[:0].sum(), b[:0].sum())
    _close(a[:0].prod(), b[:0].prod())


@pytest.mark.parametrize("dt", CPLX)
def test_matmul(dt):
    a, b = _rand((5, 7), dt, seed=10, noncontig=True)
    c, d = _rand((7, 3), dt, seed=11)
    tol = dict(rtol=1e-4, atol=1e-5) if dt == "complex64" else {}
    _close(a @ c, b @ d, **tol)
    _close(tn.mm(a, c), torch.mm(b, d), **tol)
    e, f = _rand((2, 3, 4), dt, seed=12)
    g, h = _rand((2, 4, 6), dt, seed=13, noncontig=True)
    _close(tn.bmm(e, g), torch.bmm(f, h), **tol)
    _close(e @ g, f @ h, **tol)
    _close(a[0] @ c, b[0] @ d, **tol)                     # vector @ matrix
    _close(tn.matmul(a[:, :0], c[:0]), torch.matmul(b[:, :0], d[:0]))


def _leaf(shape, seed, noncontig=False):
    a, b = _rand(shape, "complex128", seed=seed, noncontig=noncontig)
    return a.detach().requires_grad_(), b.detach().requires_grad_()


def _real_loss(lib, z):
    """A real loss of a complex tensor that weighs every part differently."""
    w = lib.arange(z.numel(), dtype=lib.float64).reshape(z.shape) * 0.37 + 1
    return (lib.view_as_real(z)[..., 0] * w).sum() + (lib.view_as_real(z)[..., 1] * w * w).sum()


GRAD_CASES = {
    "add": lambda m, x, y: x + y * 2, "sub": lambda m, x, y: x - y, "mul": lambda m, x, y: x * y,
    "div": lambda m, x, y: x / (y + 3), "mm": lambda m, x, y: m.mm(x, y.t()), "matmul": lambda m, x, y: x @ y.t(),
    "abs": lambda m, x, y: m.complex(x.abs(), y.abs()), "real": lambda m, x, y: m.complex(x.real, y.imag),
    "imag": lambda m, x, y: m.complex(x.imag * y.real, x.real), "conj": lambda m, x, y: x.conj() * y,
    "view_as_real": lambda m, x, y: m.view_as_complex(m.view_as_real(x) * 2) + y,
    "sum": lambda m, x, y: (x * y).sum(0, keepdim=True), "mean": lambda m, x, y: (x - y).mean(1, keepdim=True),
    "exp": lambda m, x, y: x.exp() * y, "log": lambda m, x, y: (x + 3).log() + y, "sqrt": lambda m, x, y: (x + 3).sqrt() * y,
    "sin": lambda m, x, y: x.sin() + y.cos(), "tanh": lambda m, x, y: x.tanh() * y.sigmoid(),
    "reciprocal": lambda m, x, y: (x + 3).reciprocal() - y.square(),
    "angle": lambda m, x, y: m.complex(x.angle(), y.real), "sgn": lambda m, x, y: x.sgn() * y,
    "polar": lambda m, x, y: m.polar(x.abs(), y.real),
    "real_mul": lambda m, x, y: x.real * y,          # a real operand: its gradient is real
    "pow": lambda m, x, y: (x + 3).pow(y * 0.5), "pow_scalar": lambda m, x, y: x.pow(2) + y.pow(3),
    "vdot_cumsum": lambda m, x, y: x.cumsum(1) * y.sum(),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_against_torch(case):
    f = GRAD_CASES[case]
    a, b = _leaf((3, 4), 20, noncontig=True)
    c, d = _leaf((3, 4), 21)
    _real_loss(tn, f(tn, a, c)).backward()
    _real_loss(torch, f(torch, b, d)).backward()
    _close(a.grad, b.grad, rtol=1e-10, atol=1e-10)
    _close(c.grad, d.grad, rtol=1e-10, atol=1e-10)


def test_backward_of_complex_output_needs_a_gradient():
    a, _ = _leaf((2,), 22)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        a.sum().backward()
    s = (a * a).sum()
    s.backward(tn.tensor(1 + 0j, dtype=tn.complex128))
    assert a.grad.dtype is tn.complex128


@pytest.mark.parametrize("dt", CPLX)
def test_numpy_and_dlpack_round_trip(dt):
    np = pytest.importorskip("numpy")
    arr = np.array([[1 + 2j, -3j], [0.5, 7 - 1j]], dtype=dt)
    t = tn.from_numpy(arr)
    assert t.dtype is _n(dt) and t.tolist() == arr.tolist()
    arr[0, 0] = 9 + 1j                          # zero-copy
    assert t[0, 0].item() == 9 + 1j
    back = t.t().numpy()
    assert back.dtype == np.dtype(dt) and back.tolist() == arr.T.tolist()
    assert tn.tensor(arr).dtype is _n(dt)
    u = tn.from_dlpack(torch.tensor(arr))
    assert u.dtype is _n(dt) and u.tolist() == arr.tolist()
    w = torch.from_dlpack(t)
    assert w.dtype == _t(dt) and w.tolist() == arr.tolist()
    assert np.from_dlpack(t).dtype == np.dtype(dt)
    assert np.asarray(t.real).tolist() == arr.real.tolist()


def test_files_both_ways(tmp_path):
    b = {"c": torch.tensor([1 + 2j, -3j, 0.5], dtype=torch.complex64),
         "z": (torch.arange(12, dtype=torch.float64).reshape(3, 4) * (1 - 2j)).t(), "f": torch.ones(2)}
    torch.save(b, str(tmp_path / "t.pt"))
    a = tn.load(str(tmp_path / "t.pt"))
    for k in b:
        _close(a[k], b[k], rtol=0, atol=0)
        assert a[k].stride() == b[k].stride()
    tn.save(a, str(tmp_path / "back.pt"))
    again = torch.load(str(tmp_path / "back.pt"))
    for k in b:
        assert again[k].dtype == b[k].dtype and torch.equal(again[k], b[k])
    tn.save(a, str(tmp_path / "t.safetensors"))
    st = tn.load(str(tmp_path / "t.safetensors"))
    for k in b:
        _close(st[k], b[k], rtol=0, atol=0)


@pytest.mark.parametrize("dt", CPLX)
def test_dot_vdot_cumsum_fill(dt):
    a, b = _rand((5,), dt, seed=30)
    c, d = _rand((5,), dt, seed=31)
    x, y = a.tolist(), c.tolist()
    tol = 1e-5 if dt == "complex64" else 1e-12
    # Debian's torch 1.13 returns 0 for complex dot/vdot (its BLAS cdotu/zdotc call): the sums by hand
    want_dot, want_vdot = sum(u * v for u, v in zip(x, y)), sum(u.conjugate() * v for u, v in zip(x, y))
    assert cmath.isclose(tn.dot(a, c).item(), want_dot, rel_tol=tol) and cmath.isclose(tn.vdot(a, c).item(), want_vdot, rel_tol=tol)
    e, f = _rand((3, 4), dt, seed=32, noncontig=True)
    _close(e.cumsum(1), f.cumsum(1), rtol=tol, atol=tol)
    _close(e.cumsum(0), f.cumsum(0), rtol=tol, atol=tol)
    _close(tn.full((2, 3), 1 - 2j, dtype=_n(dt)), torch.full((2, 3), 1 - 2j, dtype=_t(dt)), rtol=0, atol=0)
    _close(tn.full((2,), 1 - 2j), torch.full((2,), 1 - 2j), rtol=0, atol=0)
    _close(e.clone().fill_(3j), f.clone().fill_(3j), rtol=0, atol=0)
    with pytest.raises(RuntimeError):
        tn.ones(2).fill_(2j)
    with pytest.raises(RuntimeError, match="arange_cpu"):
        tn.arange(3, dtype=_n(dt))
    with pytest.raises(TypeError):
        tn.tensor([1 + 2j], dtype=tn.float32)
    _close(e.cumprod(0), f.cumprod(0), rtol=tol, atol=tol)   # (test_complex_more.py: more of it)


def test_cumsum_and_vdot_gradients():
    a, b = _leaf((4,), 40)
    c, d = _leaf((4,), 41)
    _real_loss(tn, tn.vdot(a, c).reshape(1) + a.cumsum(0)).backward()
    _real_loss(torch, torch.view_as_complex(torch.view_as_real(torch.vdot(b, d)).reshape(1, 2)) * 0
               + (b.conj() * d).sum().reshape(1) + b.cumsum(0)).backward()   # torch's own vdot: see above
    _close(a.grad, b.grad, rtol=1e-10, atol=1e-10)
    _close(c.grad, d.grad, rtol=1e-10, atol=1e-10)


def test_conjugate_transposes_finfo_and_methods():
    a, b = _rand((2, 3), "complex64", seed=50, noncontig=True)
    for f in (lambda t: t.mH, lambda t: t.H, lambda t: t.adjoint(), lambda t: t.T, lambda t: t.mT):
        _close(f(a), f(b), rtol=0, atol=0)
    assert tn.finfo(tn.complex64).eps == torch.finfo(torch.complex64).eps and tn.finfo(tn.cdouble).bits == 64
    _close(tn.ones(2).cfloat(), torch.ones(2).cfloat(), rtol=0, atol=0)
    _close(tn.ones(2).cdouble(), torch.ones(2).cdouble(), rtol=0, atol=0)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        a.float()
    r = tn.ones(2, 2)
    _close(r.mH, torch.ones(2, 2).mH, rtol=0, atol=0)


def test_isreal_and_builtin_names():
    a, b = tn.tensor([1 + 0j, 2j, -0.0 + 0j]), torch.tensor([1 + 0j, 2j, -0.0 + 0j])
    _close(tn.isreal(a), torch.isreal(b), rtol=0, atol=0)
    _close(tn.isreal(tn.ones(2)), torch.isreal(torch.ones(2)), rtol=0, atol=0)
    # the package's own code still sees Python's complex (cumulative_trapezoid checks dx against it)
    with pytest.raises(RuntimeError):
        tn.cumulative_trapezoid(tn.ones(3), dx=1j)
    _close(tn.cumulative_trapezoid(tn.ones(3), dx=2.0), torch.cumulative_trapezoid(torch.ones(3), dx=2.0))


@pytest.mark.parametrize("dt", CPLX)
def test_accumulating_index_ops(dt):
    a, b = tn.tensor([1 + 2j, 3 - 1j, 5j], dtype=_n(dt)), torch.tensor([1 + 2j, 3 - 1j, 5j], dtype=_t(dt))
    v, w = tn.tensor([1j, 2 - 1j], dtype=_n(dt)), torch.tensor([1j, 2 - 1j], dtype=_t(dt))
    i, j = tn.tensor([0, 0]), torch.tensor([0, 0])
    _close(a.clone().index_put_((i,), v, accumulate=True), b.clone().index_put_((j,), w, accumulate=True), rtol=0, atol=0)
    _close(a.clone().index_add_(0, i, v), b.clone().index_add_(0, j, w), rtol=0, atol=0)
    _close(a.clone().scatter_add_(0, i, v), b.clone().scatter_add_(0, j, w), rtol=0, atol=0)
    _close(a.gather(0, tn.tensor([2, 0])), b.gather(0, torch.tensor([2, 0])), rtol=0, atol=0)
    with pytest.raises(RuntimeError):
        a.clone().scatter_reduce_(0, i, v, "amax")
