"""torch.fft (issue 26, item 2): the real-valued functions fftfreq, rfftfreq, fftshift and
ifftshift against torch 1.13: PyTorch's OpInfo entries for fft.fftshift / fft.ifftshift
(the harness of test_ops_elementwise_linalg), values bit for bit over lengths, spacings and
dtypes, dims (None, int, tuples, negative, repeated), non-contiguous and 0-size inputs,
gradients, and the errors PyTorch raises. The transforms (fft ... ihfftn): PyTorch's OpInfo
entries fft.* in float64, complex128 (with first and second gradients), float32, complex64,
int64, int8 and bool; n/s, dim and norm variants on contiguous and strided inputs; 0-size
inputs, promotion, errors, out=.

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


# --------------------------------------------------------------------------- the transforms
TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
              "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _tn(t, noncontig=False, requires_grad=False):
    """A tn copy of the torch tensor t (complex too); noncontig: a strided view of the same
    values (every other element of the last dim of a wider buffer)."""
    a = t.detach().resolve_conj()
    if noncontig and a.dim() >= 1 and a.numel() > 1:
        wide = torch.stack([a, torch.zeros_like(a)], dim=-1)
        leaf = tn.from_numpy(wide.numpy().copy()).requires_grad_(requires_grad)
        return leaf, leaf.select(-1, 0)
    leaf = tn.from_numpy(a.numpy().copy()).requires_grad_(requires_grad)
    return leaf, leaf


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    import numpy as np
    return np.asarray(t.detach().numpy())


def _close(ours, theirs, what, rtol, atol):
    import numpy as np
    assert tuple(ours.shape) == tuple(theirs.shape), (what, tuple(ours.shape), tuple(theirs.shape))
    assert ours.dtype.name == str(theirs.dtype).split(".")[1], (what, ours.dtype, theirs.dtype)
    a, b = _np(ours), _np(theirs)
    assert np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True), (what, float(np.abs(a - b).max()))


def _tol(dt):
    return (1e-7, 1e-7) if dt in (torch.float64, torch.complex128) else (1.3e-5, 1e-4)


def _run_fft_sample(name, x, args, kwargs, k, grad):
    """One sample of torch.fft.<name>: _run_sample."""
    _run_sample(getattr(torch.fft, name), getattr(tn.fft, name), name, x, args, kwargs, k, grad)


def _tn_args(v):
    """tn copies of the torch tensors among arguments (a window)."""
    if isinstance(v, torch.Tensor):
        return _tn(v)[1]
    if isinstance(v, dict):
        return {key: _tn_args(e) for key, e in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_tn_args(e) for e in v)
    return v


def _run_sample(fn_t, fn_o, name, x, args, kwargs, k, grad):
    """One sample: values (dtype, shape) against torch's; odd k: a strided input. With grad,
    the input's gradient for a random complex weighting of the output (loss = Re sum(out w),
    squared), and the gradient's own gradient (double backward)."""
    try:
        xt = x.detach().clone().requires_grad_(grad)
        ref = fn_t(xt, *args, **kwargs)
    except Exception:   # noqa: BLE001  torch raises: so must we
        with pytest.raises(Exception):
            fn_o(_tn(x, k % 2 == 1)[1], *_tn_args(args), **_tn_args(kwargs))
        return
    args, kwargs = _tn_args(args), _tn_args(kwargs)
    leaf, xo = _tn(x, k % 2 == 1, grad)
    got = fn_o(xo, *args, **kwargs)
    _close(got, ref, f"{name} sample {k}", *_tol(ref.dtype))
    if not grad:
        return
    g = torch.Generator().manual_seed(k)
    w = torch.randn(ref.shape, dtype=ref.dtype, generator=g)
    lt = (ref * w).real.sum() if ref.is_complex() else (ref * w).sum()
    lo = (got * _tn(w)[1]).real.sum() if got.is_complex() else (got * _tn(w)[1]).sum()
    gt, = torch.autograd.grad(lt * lt, xt, create_graph=True)   # squared: the gradient depends on x
    go, = tn.autograd.grad(lo * lo, leaf, create_graph=True)
    if leaf is not xo:
        go = go.select(-1, 0)
    _close(go, gt, f"{name} sample {k} grad", 1e-6, 1e-6)
    ggt, = torch.autograd.grad((gt.real if gt.is_complex() else gt).sum() * lt, xt)
    ggo, = tn.autograd.grad((go.real if go.is_complex() else go).sum() * lo, leaf)
    if leaf is not xo:
        ggo = ggo.select(-1, 0)
    _close(ggo, ggt, f"{name} sample {k} grad of grad", 1e-6, 1e-6)


OPINFO_DTYPES = [("float64", True), ("complex128", True), ("float32", False), ("complex64", False), ("int64", False),
                 ("int8", False), ("bool", False)]


def _opinfo_fft(name):
    """PyTorch's OpInfo entry fft.<name>: its sample inputs in every dtype above that the entry
    lists (complex ones included), float64/complex128 with gradients; its error inputs raise."""
    op = next(o for o in H.op_db if o.name == "fft." + name and not o.variant_test_name)
    passed, failures = 0, []
    for dt, grad in OPINFO_DTYPES:
        dtype = getattr(torch, dt)
        if dtype not in op.dtypes:
            continue
        for k, s in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
            try:
                _run_fft_sample(name, s.input, s.args, s.kwargs, k, grad)
                passed += 1
            except BaseException as e:   # noqa: BLE001 (pytest.raises fails with an outcome exception)
                failures.append(f"{dt} sample {k} {tuple(s.input.shape)} args={s.args} kwargs={s.kwargs}: {e!s:.300}")
    if op.error_inputs_func is not None:
        for e in op.error_inputs("cpu"):
            try:
                with pytest.raises(Exception):
                    getattr(tn.fft, name)(_tn(e.sample_input.input)[1], *e.sample_input.args, **e.sample_input.kwargs)
                passed += 1
            except BaseException as x:   # noqa: BLE001
                failures.append(f"error input: {x!s:.200}")
    return passed, failures


@needs_torch
@pytest.mark.parametrize("name", TRANSFORMS)
def test_opinfo_transforms(name):
    passed, failures = _opinfo_fft(name)
    assert passed > 0
    assert not failures, f"fft.{name}: {passed} passed\n" + "\n".join(failures[:20])


def _cases_1d():
    return [{}, {"n": 1}, {"n": 5}, {"n": 12}, {"dim": 0}, {"dim": -2, "n": 7}, {"norm": "ortho"}, {"norm": "forward"},
            {"norm": "backward", "n": 9, "dim": 1}]


def _cases_nd(two):
    cases = [{}, {"s": (3, 8)}, {"s": (-1, 4)}, {"dim": (0, 2)}, {"dim": (2, 0)}, {"s": (2, 5), "dim": (-1, 0)},
             {"norm": "ortho"}, {"norm": "forward", "s": (5, 3)}]
    if not two:
        cases += [{"s": (7,)}, {"dim": (1,)}, {"s": (2, 3, 4)}, {"dim": -1}, {"s": 6, "dim": 0}]
    return cases


@needs_torch
@pytest.mark.parametrize("name", TRANSFORMS)
def test_values_against_torch(name):
    """Every transform over n/s, dim and norm variants, contiguous and not, float64 and
    complex128 (float32/complex64: single precision), against torch.fft."""
    g = torch.Generator().manual_seed(len(name))
    cases = _cases_1d() if name[-1] not in "2n" else _cases_nd(name.endswith("2"))
    dtypes = [torch.float64, torch.float32] + ([] if name in REAL_ONLY else [torch.complex128, torch.complex64])
    for dt in dtypes:
        x = torch.randn(4, 6, 5, dtype=dt, generator=g)
        for k, kw in enumerate(cases):
            for nc in (False, True):
                ref = getattr(torch.fft, name)(x, **kw)
                got = getattr(tn.fft, name)(_tn(x, nc)[1], **kw)
                _close(got, ref, f"{name} {dt} {kw} noncontig={nc}", *_tol(ref.dtype))


@needs_torch
@pytest.mark.parametrize("name", TRANSFORMS)
def test_gradients_against_torch(name):
    g = torch.Generator().manual_seed(7)
    cases = _cases_1d()[:6] if name[-1] not in "2n" else _cases_nd(name.endswith("2"))[:6]
    dtypes = [torch.float64] + ([] if name in REAL_ONLY else [torch.complex128])
    k = 0
    for dt in dtypes:
        x = torch.randn(3, 6, 5, dtype=dt, generator=g)
        for kw in cases:
            _run_fft_sample(name, x, (), kw, k, True)
            k += 1


@needs_torch
def test_zero_size_and_promotion():
    for name in TRANSFORMS:
        for shape, kw in [((0, 6), {}), ((0, 4), {"n": 6} if name[-1] not in "2n" else {"s": (3, 6)}), ((2, 0, 5), {"dim": -1} if name[-1] not in "2n" else {"dim": (0, 2)})]:
            # torch 1.13 refuses to pad a tensor with an empty dim (constant_pad_nd's new_dim > 0;
            # 2025's checks >= 0 and transforms it): the reference is the transform of one row,
            # narrowed back to the empty dims that were not transformed
            try:
                getattr(torch.fft, name)(torch.zeros(shape), **kw)
            except RuntimeError as e:
                if "negative output size" not in str(e):   # an empty transformed dim: an error for both
                    with pytest.raises(RuntimeError, match="Invalid number of data points"):
                        getattr(tn.fft, name)(_tn(torch.zeros(shape))[1], **kw)
                    continue
            ref = getattr(torch.fft, name)(torch.zeros([d or 1 for d in shape]), **kw)
            for i, d in enumerate(shape):
                if d == 0 and ref.shape[i] == 1:
                    ref = ref.narrow(i, 0, 0)
            _close(getattr(tn.fft, name)(_tn(torch.zeros(shape))[1], **kw), ref, f"{name} {shape} {kw}", 1e-6, 1e-6)
        for dt in ("int64", "int32", "uint8", "bool"):
            x = torch.arange(12).reshape(3, 4).to(getattr(torch, dt)) if dt != "bool" else torch.arange(12).reshape(3, 4) % 3 == 0
            ref = getattr(torch.fft, name)(x)
            _close(getattr(tn.fft, name)(tn.from_numpy(x.numpy().copy())), ref, f"{name} {dt}", 1e-5, 1e-4)
    old = tn.get_default_dtype()
    try:
        tn.set_default_dtype(tn.float64)
        assert tn.fft.fft(tn.arange(4)).dtype == tn.complex128 and tn.fft.irfft(tn.arange(4)).dtype == tn.float64
    finally:
        tn.set_default_dtype(old)


@needs_torch
def test_transform_errors():
    x, c = torch.randn(4, 5), torch.randn(4, 5, dtype=torch.complex64)
    cases = [("rfft", c, {}), ("ihfft", c, {}), ("rfftn", c, {}), ("fft", x, {"n": 0}), ("fft", x, {"n": -1}),
             ("fft", x, {"dim": 2}), ("fft", x, {"norm": "bad"}), ("fft2", x, {"dim": (0, 0)}),
             ("fftn", x, {"s": (1, 2, 3)}), ("fftn", x, {"s": (1, 2), "dim": (0,)}), ("irfft", torch.randn(3, 1, dtype=torch.complex64), {}),
             ("fft", x.half(), {}), ("rfft", x.bfloat16(), {}), ("rfftn", x, {"dim": ()}), ("fft", torch.randn(0), {}),
             ("fft2", torch.randn(3), {}), ("irfftn", c, {"dim": ()}), ("hfft", c, {"n": 0}), ("rfft2", x, {"s": (0, 3)}),
             ("fft", torch.tensor(1.0), {}), ("fftn", c, {"dim": (0, 5)})]
    for name, t, kw in cases:
        with pytest.raises(Exception) as theirs:
            getattr(torch.fft, name)(t, **kw)
        with pytest.raises(Exception) as ours:
            getattr(tn.fft, name)(_tn(t.float())[1].to(tn.float16) if t.dtype == torch.float16 else
                                  _tn(t.float())[1].to(tn.bfloat16) if t.dtype == torch.bfloat16 else _tn(t)[1], **kw)
        want = (IndexError,) if isinstance(theirs.value, IndexError) else (RuntimeError, IndexError)
        assert isinstance(ours.value, want), (name, kw, ours.value, theirs.value)
    with pytest.raises(TypeError):
        tn.fft.fft(_tn(x)[1], norm=3)


@needs_torch
def test_out_and_names():
    x = torch.randn(3, 8, dtype=torch.float64)
    out = tn.empty(3, 5, dtype=tn.complex128)
    r = tn.fft.rfft(_tn(x)[1], out=out)
    assert r is out
    _close(out, torch.fft.rfft(x), "rfft out=", 1e-12, 1e-12)
    xo = _tn(x, requires_grad=True)[1]
    assert tn.fft.fft(xo).grad_fn.name() == torch.fft.fft(x.requires_grad_()).grad_fn.name()
    assert tn.fft.irfft(tn.fft.rfft(xo)).grad_fn.name() == "FftC2RBackward0"


# --------------------------------------------------------------------------- stft / istft
def _opinfo_generic(name, fn_o):
    op = next(o for o in H.op_db if o.name == name and not o.variant_test_name)
    passed, failures = 0, []
    for dt, grad in OPINFO_DTYPES:
        dtype = getattr(torch, dt)
        if dtype not in op.dtypes:
            continue
        for k, s in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
            try:
                kwargs = s.kwargs
                if name == "stft" and not s.input.is_complex() and "return_complex" not in kwargs:
                    # 2025 PyTorch requires return_complex for a real input (1.13 warns and
                    # returns the real view): we raise, and run the sample with return_complex=False
                    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
                        fn_o(_tn(s.input)[1], *_tn_args(s.args), **_tn_args(kwargs))
                    kwargs = dict(kwargs, return_complex=False)
                x = s.input
                if name == "istft" and not x.is_complex():
                    # 2025 PyTorch takes only a complex spectrum (1.13 also a real view [..., 2]):
                    # we raise, and run the sample on its complex form
                    with pytest.raises(RuntimeError, match="requires a complex-valued input"):
                        fn_o(_tn(x)[1], *_tn_args(s.args), **_tn_args(kwargs))
                    x = torch.view_as_complex(x.contiguous())
                _run_sample(op.op, fn_o, name, x, s.args, kwargs, k, grad)
                passed += 1
            except BaseException as e:   # noqa: BLE001
                failures.append(f"{dt} sample {k} {tuple(s.input.shape)} args={s.args} kwargs={s.kwargs}: {e!s:.300}")
    return passed, failures


@needs_torch
@pytest.mark.parametrize("name", ["stft", "istft"])
def test_opinfo_stft(name):
    """PyTorch's OpInfo entries stft / istft in float64/complex128 (with gradients and
    double backward) and float32/complex64."""
    passed, failures = _opinfo_generic(name, getattr(tn, name))
    assert passed > 0
    assert not failures, f"{name}: {passed} passed\n" + "\n".join(failures[:20])


@needs_torch
def test_stft_against_torch():
    g = torch.Generator().manual_seed(3)
    k = 0
    for dt in (torch.float64, torch.float32, torch.complex128):
        for shape in ((40,), (3, 37)):
            x = torch.randn(*shape, dtype=dt, generator=g)
            for n_fft, hop, win, window in ((16, None, None, None), (15, 3, 10, "hann"), (8, 2, None, "hann"), (12, 5, 7, None)):
                w = None if window is None else torch.hann_window(win or n_fft, dtype=torch.float64 if dt != torch.float32 else dt)
                for center, pad_mode in ((True, "reflect"), (False, "reflect"), (True, "constant"), (True, "replicate"),
                                         (True, "circular")):
                    for normalized, onesided, rc in ((False, None, True), (True, None, True), (False, False, True), (False, None, False)):
                        kw = dict(hop_length=hop, win_length=win, window=w, center=center, pad_mode=pad_mode,
                                  normalized=normalized, onesided=onesided, return_complex=rc)
                        _run_sample(torch.stft, tn.stft, "stft", x, (n_fft,), kw, k, dt == torch.float64 and k % 7 == 0)
                        k += 1
    assert k > 100
    # the method, and the errors PyTorch raises
    x = torch.randn(30, dtype=torch.float64)
    _close(_tn(x)[1].stft(8, return_complex=True), x.stft(8, return_complex=True), "Tensor.stft", 1e-12, 1e-12)
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):   # 2025's error (1.13 warned)
        tn.stft(_tn(x)[1], 8)
    for kw in [dict(n_fft=0, return_complex=True), dict(n_fft=40, center=False, return_complex=True),
               dict(n_fft=8, hop_length=0, return_complex=True), dict(n_fft=8, win_length=9, return_complex=True),
               dict(n_fft=8, window=torch.ones(5, dtype=torch.float64), return_complex=True),
               dict(n_fft=8, pad_mode="bogus", return_complex=True), dict(n_fft=8, onesided=True, return_complex=True,
                                                                          window=torch.ones(8, dtype=torch.complex128))]:
        with pytest.raises(Exception):
            torch.stft(x, **kw)
        with pytest.raises(Exception):
            tn.stft(_tn(x)[1], **_tn_args(kw))
    with pytest.raises(Exception):
        tn.stft(_tn(torch.randn(2, 3, 20))[1], 8, return_complex=True)


@needs_torch
def test_istft_against_torch():
    g = torch.Generator().manual_seed(5)
    k = 0
    for dt in (torch.float64, torch.float32):
        for shape in ((64,), (2, 61)):
            x = torch.randn(*shape, dtype=dt, generator=g)
            for n_fft, hop, win in ((16, 4, None), (15, 3, 12), (8, 2, 8)):
                w = torch.hann_window(win or n_fft, dtype=dt)
                for center, normalized, onesided, length in ((True, False, True, None), (True, True, True, 50),
                                                             (True, False, False, None), (False, False, True, None),
                                                             (True, False, True, 80)):
                    spec = torch.stft(x, n_fft, hop, win, w, center=center, normalized=normalized, onesided=onesided,
                                      return_complex=True)
                    kw = dict(hop_length=hop, win_length=win, window=w, center=center, normalized=normalized,
                              onesided=onesided, length=length)
                    _run_sample(torch.istft, tn.istft, "istft", spec, (n_fft,), kw, k, dt == torch.float64 and k % 3 == 0)
                    k += 1
    # the round trip gives the signal back; a complex result from a two-sided spectrum
    x = torch.randn(2, 50, dtype=torch.float64)
    w = torch.hann_window(16, dtype=torch.float64)
    spec = tn.stft(_tn(x)[1], 16, 4, window=_tn(w)[1], return_complex=True)
    _close(tn.istft(spec, 16, 4, window=_tn(w)[1], length=50), x, "round trip", 1e-10, 1e-10)
    c = torch.randn(50, dtype=torch.complex128)
    sc = torch.stft(c, 16, 4, window=w, return_complex=True)
    _run_sample(torch.istft, tn.istft, "istft", sc, (16, 4), dict(window=w, return_complex=True), 1, True)
    # errors: a real input, frequency size, hop, window, a window that cannot be inverted
    spec_t = torch.stft(x, 16, 4, window=w, return_complex=True)
    for args, kw in [((16,), dict(window=w, hop_length=0)), ((15,), dict(window=w[:15])), ((16,), dict(window=w[:8])),
                     ((16,), dict(window=torch.zeros(16, dtype=torch.float64))), ((16,), dict(return_complex=True)),
                     ((16,), dict(win_length=17))]:
        with pytest.raises(Exception):
            torch.istft(spec_t, *args, **kw)
        with pytest.raises(Exception):
            tn.istft(_tn(spec_t)[1], *args, **_tn_args(kw))
    with pytest.raises(Exception):
        tn.istft(_tn(x)[1], 16)
