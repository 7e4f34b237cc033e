"""int8 and int16 (torch.int8/char, torch.int16/short) against PyTorch: casts from every
dtype (float overflow wraps through int32 as PyTorch's CPU casts; NaN/inf give 0), type
promotion with every dtype, arithmetic (wrapping), integer division/remainder/bitwise,
reductions (sum/prod give int64), comparisons, sort/indexing/cat, printing, the typed
classes and iinfo, NumPy, DLPack, safetensors and .pt files both ways. Skipped without torch."""
import math

import pytest

import tensor as tn

torch = pytest.importorskip("torch")

NARROW = ("int8", "int16")
ALL = ("float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16", "int8", "int16")


def _t(name):
    return getattr(torch, name)


def _n(name):
    return getattr(tn, name)


def _same(a, b):
    """a (tensor.h) equals b (torch): shape, dtype, values (NaN equal)."""
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    x, y = a.tolist(), b.tolist()
    flat = lambda v: [u for w in v for u in flat(w)] if isinstance(v, list) else [v]
    for u, v in zip(flat(x), flat(y)):
        assert u == v or (u != u and v != v), (x, y)


def _pair(values, dtype):
    return tn.tensor(values, dtype=_n(dtype)), torch.tensor(values, dtype=_t(dtype))


def test_names_aliases_and_info():
    assert tn.int8 is tn.char and tn.int16 is tn.short
    assert repr(tn.int8) == "torch.int8" and tn.int16.itemsize == 2 and tn.int8.is_signed
    assert not tn.int8.is_floating_point
    for d in NARROW:
        i, j = tn.iinfo(_n(d)), torch.iinfo(_t(d))
        assert (i.bits, i.min, i.max) == (j.bits, j.min, j.max)
    x = tn.tensor([1.7, -2.2])
    assert x.char().dtype is tn.int8 and x.short().dtype is tn.int16
    assert tn.CharTensor([1, 2]).dtype is tn.int8 and tn.ShortTensor(2, 3).shape == (2, 3)
    assert isinstance(tn.tensor([1], dtype=tn.int8), tn.CharTensor)
    assert not isinstance(tn.tensor([1], dtype=tn.int8), tn.ShortTensor)
    assert tn.tensor([1], dtype=tn.int16).type() == "torch.ShortTensor"


SPECIAL = [0.0, -0.0, 1.5, -1.5, 127.9, -128.9, 300.0, -129.0, 40000.0, 70000.5, -70000.5, 3e9, -3e9, 1e20,
           float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("dst", NARROW)
@pytest.mark.parametrize("src", ALL)
def test_casts_from_every_dtype(src, dst):
    if src in ("float32", "float64", "float16", "bfloat16"):
        vals = SPECIAL
    elif src == "bool":
        vals = [True, False]
    elif src == "uint8":
        vals = [0, 1, 127, 128, 255]
    else:
        lo, hi = torch.iinfo(_t(src)).min, torch.iinfo(_t(src)).max
        vals = [0, 1, -1, 127, 128, -129, 255, 300, 32767, 32768, -32769, 70000, lo, hi]
        vals = [v for v in vals if lo <= v <= hi]
    a, b = _pair(vals, src)
    _same(a.to(_n(dst)), b.to(_t(dst)))
    # and back to every dtype (from the narrow values)
    c, d = a.to(_n(dst)), b.to(_t(dst))
    _same(c.to(_n(src)), d.to(_t(src)))
    # non-contiguous source
    _same(a[::2].to(_n(dst)), b[::2].to(_t(dst)))


@pytest.mark.parametrize("x", ALL)
@pytest.mark.parametrize("y", NARROW)
def test_promotion_with_every_dtype(x, y):
    assert str(tn.promote_types(_n(x), _n(y))) == str(torch.promote_types(_t(x), _t(y)))
    assert str(tn.promote_types(_n(y), _n(x))) == str(torch.promote_types(_t(y), _t(x)))
    a, b = _pair([1, 0, 1], x)
    c, d = _pair([3, -2, 5], y)
    _same(a + c, b + d)
    _same(c * a, d * b)
    # a 0-d operand or a Python number does not lift an int8 tensor's dtype within its category
    _same(c + 1000, d + 1000)
    _same(c + 2.5, d + 2.5)
    _same(c + tn.tensor(7, dtype=tn.int64), d + torch.tensor(7, dtype=torch.int64))


@pytest.mark.parametrize("dt", NARROW)
def test_arithmetic_wraps(dt):
    lo, hi = torch.iinfo(_t(dt)).min, torch.iinfo(_t(dt)).max
    vals = [lo, lo + 1, -7, -1, 0, 1, 7, hi - 1, hi]
    a, b = _pair(vals, dt)
    c, d = _pair(list(reversed(vals)), dt)
    for f in (lambda u, v: u + v, lambda u, v: u - v, lambda u, v: u * v, lambda u, v: u.maximum(v),
              lambda u, v: u.minimum(v), lambda u, v: u & v, lambda u, v: u | v, lambda u, v: u ^ v,
              lambda u, v: u == v, lambda u, v: u < v, lambda u, v: u >= v, lambda u, v: u != v):
        _same(f(a, c), f(b, d))
    for f in (lambda u: -u, lambda u: u.abs(), lambda u: ~u, lambda u: u.sign(), lambda u: u * 3, lambda u: u - 200,
              lambda u: u.square() if hasattr(u, "square") else u * u, lambda u: u.clamp(-5, 5), lambda u: u.float(),
              lambda u: u.to(torch.float64 if isinstance(u, torch.Tensor) else tn.float64)):
        _same(f(a), f(b))
    nz = [v if v else 3 for v in reversed(vals)]
    e, g = _pair(nz, dt)
    _same(a // e, b // g)
    _same(a % e, b % g)
    _same(torch_fmod(a, e, tn), torch_fmod(b, g, torch))
    _same(a / e, b / g)        # true division: float32
    _same(a.pow(2), b.pow(2))


def torch_fmod(u, v, lib):
    return lib.fmod(u, v)


@pytest.mark.parametrize("dt", NARROW)
def test_division_by_zero_raises(dt):
    a = tn.tensor([1, 2], dtype=_n(dt))
    with pytest.raises(RuntimeError, match="ZeroDivisionError|division by zero"):
        a // tn.tensor([1, 0], dtype=_n(dt))
    with pytest.raises(RuntimeError):
        a % tn.tensor([0, 1], dtype=_n(dt))


@pytest.mark.parametrize("dt", NARROW)
def test_reductions(dt):
    torch.manual_seed(0)
    b = torch.randint(-100, 100, (4, 5, 3), dtype=_t(dt)).transpose(0, 2)     # non-contiguous
    a = tn.tensor(b.tolist(), dtype=_n(dt))
    _same(a.sum(), b.sum())
    _same(a.sum(1), b.sum(1))
    _same(a.sum(-1, keepdim=True), b.sum(-1, keepdim=True))
    _same(a.prod(0), b.prod(0))
    _same(a.max(), b.max())
    _same(a.amin(1), b.amin(1))
    _same(a.max(1).values, b.max(1).values)
    _same(a.max(1).indices, b.max(1).indices)
    _same(a.argmin(), b.argmin())
    _same(a.cumsum(2), b.cumsum(2))
    _same(a.cumprod(0), b.cumprod(0))
    _same(a.sort(1).values, b.sort(1).values)
    _same(a.sort(1, descending=True).values, b.sort(1, descending=True).values)
    _same(a.topk(2, dim=0).values, b.topk(2, dim=0).values)
    _same(a.all(), b.all())
    _same(a.any(0), b.any(0))
    _same(a.sum(dtype=_n(dt)), b.sum(dtype=_t(dt)))
    e, f = _pair([], dt)
    _same(e.sum(), f.sum())
    _same(e.prod(), f.prod())
    u, v = a.unique(), b.unique()
    _same(u, v)


@pytest.mark.parametrize("dt", NARROW)
def test_indexing_join_and_shape(dt):
    torch.manual_seed(1)
    b = torch.randint(-50, 50, (3, 4), dtype=_t(dt))
    a = tn.tensor(b.tolist(), dtype=_n(dt))
    idx, tidx = tn.tensor([2, 0]), torch.tensor([2, 0])
    _same(a[idx], b[tidx])
    _same(a[:, 1:3], b[:, 1:3])
    _same(a[a > 0], b[b > 0])
    _same(a.index_select(1, idx), b.index_select(1, tidx))
    _same(a.gather(1, tn.tensor([[0], [1], [3]])), b.gather(1, torch.tensor([[0], [1], [3]])))
    _same(tn.cat([a, a.t().reshape(3, 4)]), torch.cat([b, b.t().reshape(3, 4)]))
    _same(tn.stack([a, a]), torch.stack([b, b]))
    _same(a.flip(0), b.flip(0))
    _same(tn.where(a > 0, a, tn.tensor(0, dtype=_n(dt))), torch.where(b > 0, b, torch.tensor(0, dtype=_t(dt))))
    c, d = a.clone(), b.clone()
    c[0, 0] = 5
    d[0, 0] = 5
    c.index_put_((tn.tensor([1, 1]), tn.tensor([2, 2])), tn.tensor([3, 4], dtype=_n(dt)), accumulate=True)
    d.index_put_((torch.tensor([1, 1]), torch.tensor([2, 2])), torch.tensor([3, 4], dtype=_t(dt)), accumulate=True)
    _same(c, d)
    c.scatter_add_(0, tn.tensor([[0, 1, 2, 0]]), tn.ones(1, 4, dtype=_n(dt)))
    d.scatter_add_(0, torch.tensor([[0, 1, 2, 0]]), torch.ones(1, 4, dtype=_t(dt)))
    _same(c, d)
    _same(a @ a.t(), b @ b.t())
    _same(tn.full((2,), -7, dtype=_n(dt)), torch.full((2,), -7, dtype=_t(dt)))
    _same(tn.arange(-5, 5, 3, dtype=_n(dt)), torch.arange(-5, 5, 3, dtype=_t(dt)))
    _same(tn.linspace(-100, 100, 7, dtype=_n(dt)), torch.linspace(-100, 100, 7, dtype=_t(dt)))
    assert tn.randint(-5, 5, (20,), dtype=_n(dt)).dtype is _n(dt)


def test_range_errors_as_pytorch():
    with pytest.raises(RuntimeError, match="overflow"):
        tn.full((2,), 200, dtype=tn.int8)
    with pytest.raises(RuntimeError, match="overflow"):
        tn.linspace(0, 300, 3, dtype=tn.int8)
    with pytest.raises(RuntimeError, match="overflow"):
        tn.tensor([1, 2], dtype=tn.int8).clamp(max=1000)
    with pytest.raises(RuntimeError, match="out of bounds"):
        tn.randint(-200, 0, (3,), dtype=tn.int8)
    with pytest.raises(RuntimeError, match="overflow"):
        tn.randperm(200, dtype=tn.int8)
    assert sorted(tn.randperm(128, dtype=tn.int8).tolist()) == list(range(128))


@pytest.mark.parametrize("dt", NARROW)
def test_printing(dt):
    for vals in ([1, -2, 3], [[-128, 0], [5, 127]], [], 7):
        a, b = _pair(vals, dt)
        assert repr(a) == repr(b)
        assert str(a) == str(b)


@pytest.mark.parametrize("dt", NARROW)
def test_numpy_and_dlpack_round_trip(dt):
    np = pytest.importorskip("numpy")
    arr = np.array([[-3, 100], [7, -128 if dt == "int8" else -30000]], dtype=dt)
    t = tn.from_numpy(arr)
    assert t.dtype is _n(dt) and t.tolist() == arr.tolist()
    arr[0, 0] = 9                              # zero-copy
    assert t[0, 0].item() == 9
    back = t.t().numpy()
    assert back.dtype == np.dtype(dt) and back.tolist() == arr.T.tolist()
    assert tn.tensor(arr).dtype is _n(dt)
    u = tn.from_dlpack(torch.tensor(arr))
    assert u.dtype is _n(dt) and u.tolist() == arr.tolist()
    w = torch.from_dlpack(t)
    assert w.dtype == _t(dt) and w.tolist() == arr.tolist()
    assert np.from_dlpack(t).dtype == np.dtype(dt)


def test_files_both_ways(tmp_path):
    b = {"c": torch.tensor([-128, 0, 127], dtype=torch.int8), "s": torch.arange(-6, 6, dtype=torch.int16).reshape(3, 4).t(),
         "f": torch.ones(2)}
    torch.save(b, str(tmp_path / "t.pt"))
    a = tn.load(str(tmp_path / "t.pt"))
    for k in b:
        _same(a[k], b[k])
        assert a[k].stride() == b[k].stride()
    tn.save(a, str(tmp_path / "back.pt"))
    again = torch.load(str(tmp_path / "back.pt"))
    for k in b:
        assert again[k].dtype == b[k].dtype and torch.equal(again[k], b[k])
    # C reader too
    from tensor import _C
    from tensor._core import _borrow
    d = _C.lib.tn_load_pt(str(tmp_path / "t.pt").encode())
    try:
        _same(_borrow(_C.lib.tn_dict_value(d, 0)), b["c"])
        _same(_borrow(_C.lib.tn_dict_value(d, 1)), b["s"])
    finally:
        _C.lib.tn_dict_free(d)
    # safetensors: I8 / I16
    tn.save(a, str(tmp_path / "t.safetensors"))
    st = tn.load(str(tmp_path / "t.safetensors"))
    for k in b:
        _same(st[k], b[k])
    raw = open(str(tmp_path / "t.safetensors"), "rb").read()
    assert b'"dtype":"I8"' in raw and b'"dtype":"I16"' in raw


def test_cuda_refused_clearly():
    if not tn.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(RuntimeError, match="not supported on CUDA"):
        tn.tensor([1], dtype=tn.int8).cuda()
