"""torch.fft's real-valued functions (issue 26, item 2): fftfreq, rfftfreq, fftshift and
ifftshift against torch 1.13: PyTorch's OpInfo entries for fft.fftshift / fft.ifftshift
(the harness of test_ops_elementwise_linalg), values bit for bit over lengths, spacings and
dtypes, dims (None, int, tuples, negative, repeated), non-contiguous and 0-size inputs,
gradients, and the errors PyTorch raises. The transforms raise NotImplementedError until
complex dtypes exist.

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_fft.py
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ops_elementwise_linalg as H  # noqa: E402  (the OpInfo harness; puts the package on sys.path)
import tensor as tn  # noqa: E402

torch = H.torch
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.mark.parametrize("spec", ["fft.fftshift", "fft.ifftshift"])
def test_opinfo(spec):
    if torch is None:
        pytest.skip("torch is not installed")
    passed, total, failures = H.check_op(spec)
    assert total > 0
    assert not failures, f"{spec}: {passed}/{total} passed\n" + "\n".join(failures[:20])


def _same(ours, theirs):
    assert str(ours.dtype).replace("tensor.", "torch.") == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = ours.tolist(), theirs.tolist()
    assert repr(a) == repr(b), (a, b)   # bit for bit, nan, inf and -0.0 included


@needs_torch
@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
def test_freq_values(fn):
    for n in [0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 100, 1001]:
        for d in [1.0, 0.5, 0.1, 1 / 3, 2.0, 7, 1e-300, 0.0, -0.25]:
            _same(getattr(tn.fft, fn)(n, d), getattr(torch.fft, fn)(n, d))
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        for n, d in [(6, 0.5), (9, 0.3), (10, 1 / 7)]:
            _same(getattr(tn.fft, fn)(n, d=d, dtype=getattr(tn, dt)), getattr(torch.fft, fn)(n, d=d, dtype=getattr(torch, dt)))
    _same(getattr(tn.fft, fn)(-1 if fn == "rfftfreq" else 2), getattr(torch.fft, fn)(-1 if fn == "rfftfreq" else 2))


@needs_torch
def test_freq_keywords():
    r = tn.fft.fftfreq(4, requires_grad=True, device="cpu")
    assert r.requires_grad and r.device.type == "cpu" and r.dtype == tn.float32
    old = tn.get_default_dtype()
    try:
        tn.set_default_dtype(tn.float64)
        torch.set_default_dtype(torch.float64)
        _same(tn.fft.fftfreq(5, 0.2), torch.fft.fftfreq(5, 0.2))
        _same(tn.fft.rfftfreq(5, 0.2), torch.fft.rfftfreq(5, 0.2))
    finally:
        tn.set_default_dtype(old)
        torch.set_default_dtype(torch.float32)


@needs_torch
@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
def test_freq_errors(fn):
    for kw in [dict(n=-4), dict(n=4, dtype="int64"), dict(n=4, dtype="int32"), dict(n=4, dtype="bool")]:
        kw_t = {k: (getattr(torch, v) if k == "dtype" else v) for k, v in kw.items()}
        kw_o = {k: (getattr(tn, v) if k == "dtype" else v) for k, v in kw.items()}
        with pytest.raises(Exception) as theirs:
            getattr(torch.fft, fn)(**kw_t)
        with pytest.raises(type(theirs.value)) as ours:
            getattr(tn.fft, fn)(**kw_o)
        msg = str(theirs.value).split(":")[0][:30]
        assert msg.split()[0] in str(ours.value), (str(ours.value), str(theirs.value))


def _pair(shape, seed, noncontig=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    if noncontig and t.dim() >= 2:
        t = t.transpose(0, -1)
    return tn.tensor(t.contiguous().numpy()) if not noncontig else tn.tensor(t.transpose(0, -1).contiguous().numpy()).transpose(0, -1), t


@needs_torch
@pytest.mark.parametrize("fn", ["fftshift", "ifftshift"])
def test_shift_values(fn):
    cases = [((5,), None), ((4, 7), None), ((4, 7), 0), ((4, 7), -1), ((3, 5, 6), (0, 2)), ((3, 5, 6), [-1, -3]),
             ((3, 5, 6), (1, 1)), ((0, 3), None), ((2, 0, 3), 1), ((1,), None), ((6, 1, 9), (2, 0, 1))]
    for i, (shape, dim) in enumerate(cases):
        for nc in (False, True):
            o, t = _pair(shape, i, nc)
            _same(getattr(tn.fft, fn)(o, dim), getattr(torch.fft, fn)(t, dim))
            _same(getattr(tn.fft, fn)(o, dim=dim), getattr(torch.fft, fn)(t, dim=dim))


@needs_torch
@pytest.mark.parametrize("fn", ["fftshift", "ifftshift"])
def test_shift_gradients(fn):
    o, t = _pair((5, 6), 3)
    w = torch.randn(5, 6, dtype=torch.float64)
    o.requires_grad_(True)
    t.requires_grad_(True)
    (getattr(tn.fft, fn)(o, (0, 1)) * tn.tensor(w.numpy())).sum().backward()
    (getattr(torch.fft, fn)(t, (0, 1)) * w).sum().backward()
    assert o.grad.tolist() == t.grad.tolist()
    assert getattr(tn.fft, fn)(o).grad_fn is not None


@needs_torch
@pytest.mark.parametrize("fn", ["fftshift", "ifftshift"])
def test_shift_errors(fn):
    x_o, x_t = _pair((3, 4), 0)
    for args in [(x_o, 2), (x_o, (0, -3)), (tn.tensor(3.0), None), (tn.tensor(3.0), 0), (x_o, ())]:
        targs = (x_t if args[0] is x_o else torch.tensor(3.0), args[1])
        with pytest.raises(Exception) as theirs:
            getattr(torch.fft, fn)(*targs)
        with pytest.raises(type(theirs.value)):
            getattr(tn.fft, fn)(*args)


def test_transforms_wait_for_complex():
    for name in ["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "hfft", "ihfft"]:
        with pytest.raises(NotImplementedError, match="complex dtypes"):
            getattr(tn.fft, name)(tn.ones(4))
