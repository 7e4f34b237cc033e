"""Loose ends of issues 19/20 against PyTorch (1.13 here; 2025's behaviour where it differs,
each case says so): the regression losses with a target of another dtype, linalg.cholesky_ex
on a matrix that is not positive-definite, F.interpolate's align_corners for the
non-interpolating modes, linalg.ldl_factor's hermitian, Module.load_state_dict(assign=True)
(PyTorch 2.1+), nn.TransformerEncoder's enable_nested_tensor / mask_check, and torch.ormqr /
torch.histogramdd through their keyword forms."""
import pytest

import tensor as tn
import tensor.nn as tnn
import tensor.nn.functional as TF

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
F = torch.nn.functional


def _t(a, dtype=None):
    """the package's copy of a torch tensor (its dtype unless given)"""
    return tn.tensor(a.tolist(), dtype=getattr(tn, str(dtype or a.dtype).replace("torch.", "")))


def _same(a, b, tol=1e-12):
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype), (a.shape, b.shape, a.dtype, b.dtype)
    x, y = np.asarray(a.detach().tolist(), dtype=float), b.detach().numpy().astype(float)
    assert np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True), (x, y)


# ---------------------------------------------------------------- 1. losses, mixed dtypes
PAIRS = [(torch.float32, torch.float64), (torch.float32, torch.int64), (torch.float64, torch.float32),
         (torch.float64, torch.int32)]
LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_forward_with_a_target_of_another_dtype(name, reduction):
    """The forward works for every pair, in torch's result dtype (huber: the input's, as its
    empty_like(input) output; the others: the promoted one)."""
    torch.manual_seed(0)
    for xd, td in PAIRS:
        x = torch.randn(2, 5, dtype=xd)[:, ::2]           # non-contiguous
        t = (torch.randn(2, 3) * 3).to(td)
        want = getattr(F, name)(x, t, reduction=reduction)
        got = getattr(TF, name)(_t(x), _t(t), reduction=reduction)
        _same(got, want, 1e-6 if torch.float32 in (xd, td) else 1e-12)


def test_huber_backward_raises_for_mixed_dtypes_as_torch():
    """huber_loss_backward's TensorIterator does not promote (2025 as 1.13): the backward
    raises torch's message; the forward stands. Same dtypes: torch's gradient."""
    for xd, td in PAIRS[:3]:
        for which in ("input", "target") if td.is_floating_point else ("input",):
            x, t = torch.randn(4, dtype=xd), torch.tensor([1, 0, 3, -2]).to(td)
            (x if which == "input" else t).requires_grad_(True)
            with pytest.raises(RuntimeError) as want:
                F.huber_loss(x, t).backward()
            a, b = _t(x.detach()), _t(t.detach())
            (a if which == "input" else b).requires_grad_(True)
            loss = TF.huber_loss(a, b)
            assert loss.requires_grad
            with pytest.raises(RuntimeError, match=str(want.value)):
                loss.backward()
    # 0-d and sum/none reductions with one dtype: the gradient is torch's
    for shape in ((), (3, 0), (2, 3)):
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        t = torch.randn(shape, dtype=torch.float64)
        a = _t(x.detach()).requires_grad_(True)
        for red in ("mean", "sum"):
            x.grad, a.grad = None, None
            F.huber_loss(x, t, reduction=red, delta=0.5).backward()
            TF.huber_loss(a, _t(t), reduction=red, delta=0.5).backward()
            _same(a.grad, x.grad)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss"])
def test_mse_l1_smooth_l1_backward_with_mixed_dtypes(name):
    """2025 PyTorch: mse_loss_backward and smooth_l1_loss_backward promote (mse raised
    "Found dtype Long but expected Float" in 1.13); l1 is a composite. The gradient is the
    one of the promoted computation, in the input's dtype."""
    for xd, td in PAIRS:
        x = torch.randn(5, dtype=xd)
        t = (torch.randn(5) * 2).to(td)
        common = torch.promote_types(xd, td)
        xr = x.to(common).requires_grad_(True)
        getattr(F, name)(xr, t.to(common)).backward()
        a = _t(x).requires_grad_(True)
        getattr(TF, name)(a, _t(t)).backward()
        _same(a.grad, xr.grad.to(xd), 1e-6)


def test_mse_backward_in_1_13_raised():
    """What 1.13 does (the oracle here), for the record: 2025 computes the gradient above."""
    x = torch.randn(3, requires_grad=True)
    if torch.__version__.startswith("1."):
        with pytest.raises(RuntimeError, match="Found dtype Long but expected Float"):
            F.mse_loss(x, torch.tensor([1, 2, 3])).backward()


# ---------------------------------------------------------------- 2. cholesky_ex
MATS = [
    [[1., 2.], [2., 1.]],
    [[4, 2, 1, 3], [2, 1, 5, 1], [1, 5, 3, 2], [3, 1, 2, 9]],
    [[4, 2, 1, 3], [2, 5, 5, 1], [1, 5, 3, 2], [3, 1, 2, 9]],
    [[4, 2, 1, 3], [2, 5, 1, 1], [1, 1, 3, 2], [3, 1, 2, -9]],
    [[-1, 2], [3, 4]],               # not symmetric: lower reads 3, upper reads 2
    [[0., 0.], [0., 1.]],
    [[4., 2.], [1., 3.]],            # positive-definite, not symmetric
]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_cholesky_ex_partial_factor_as_torch(upper, dtype):
    """Where potrf stops: L's computed columns, the failing pivot's updated value, the rest as
    the input, the other triangle zeroed; upper reads A's upper triangle."""
    for m in MATS:
        A = torch.tensor(m, dtype=dtype)
        L, info = torch.linalg.cholesky_ex(A, upper=upper)
        got = tn.linalg.cholesky_ex(_t(A), upper=upper)
        _same(got.L, L, 1e-6 if dtype == torch.float32 else 1e-12)
        assert got.info.item() == info.item()
    # batched (one fails, one does not), non-contiguous (a transposed view)
    A = torch.tensor([MATS[0], [[4., 1.], [1., 3.]]], dtype=dtype).transpose(-2, -1)
    L, info = torch.linalg.cholesky_ex(A, upper=upper)
    got = tn.linalg.cholesky_ex(_t(A).contiguous().transpose(-2, -1).contiguous().transpose(-2, -1), upper=upper)
    _same(got.L, L, 1e-6)
    assert got.info.tolist() == info.tolist()
    # 0 x 0
    E = torch.zeros(0, 0, dtype=dtype)
    got = tn.linalg.cholesky_ex(tn.zeros(0, 0, dtype=getattr(tn, str(dtype)[6:])), upper=upper)
    assert tuple(got.L.shape) == (0, 0) and got.info.item() == 0


def test_cholesky_ex_check_errors_and_cholesky_upper():
    A = torch.tensor(MATS[0], dtype=torch.float64)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        tn.linalg.cholesky_ex(_t(A), check_errors=True)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        tn.linalg.cholesky(_t(A))
    B = torch.tensor([[4., 2.], [1., 3.]], dtype=torch.float64)
    _same(tn.linalg.cholesky(_t(B), upper=True), torch.linalg.cholesky(B, upper=True))
    # the gradient of upper=True on a non-symmetric input is the one of the upper triangle's factor
    Bg = B.clone().requires_grad_(True)
    torch.linalg.cholesky(Bg, upper=True).sum().backward()
    b = _t(B).requires_grad_(True)
    tn.linalg.cholesky(b, upper=True).sum().backward()
    _same(b.grad, Bg.grad, 1e-12)


# ---------------------------------------------------------------- 3. interpolate
@pytest.mark.parametrize("mode", ["nearest", "area", "nearest-exact"])
def test_interpolate_align_corners_only_for_interpolating_modes(mode):
    x = torch.arange(16.).view(1, 1, 4, 4)
    for ac in (False, True):
        with pytest.raises(ValueError) as want:
            F.interpolate(x, size=2, mode=mode, align_corners=ac)
        with pytest.raises(ValueError, match=str(want.value).replace("|", r"\|")):
            TF.interpolate(_t(x), size=2, mode=mode, align_corners=ac)
        with pytest.raises(ValueError):
            tnn.Upsample(size=2, mode=mode, align_corners=ac)(_t(x))
    _same(TF.interpolate(_t(x), size=3, mode=mode, align_corners=None), F.interpolate(x, size=3, mode=mode, align_corners=None), 1e-6)
    _same(TF.interpolate(_t(x), size=3, mode="bilinear", align_corners=False),
          F.interpolate(x, size=3, mode="bilinear", align_corners=False), 1e-6)


# ---------------------------------------------------------------- 4. ldl_factor hermitian
def test_ldl_factor_hermitian_real_is_the_same_factorisation():
    torch.manual_seed(3)
    R = torch.randn(2, 4, 4, dtype=torch.float64)
    S = R + R.transpose(-2, -1)
    for herm in (False, True):
        LD, piv = torch.linalg.ldl_factor(S, hermitian=herm)
        got = tn.linalg.ldl_factor(_t(S), hermitian=herm)
        _same(got.LD, LD, 1e-10)
        assert got.pivots.tolist() == piv.tolist()
        LD, piv, info = torch.linalg.ldl_factor_ex(S, hermitian=herm, check_errors=True)
        got = tn.linalg.ldl_factor_ex(_t(S), hermitian=herm, check_errors=True)
        _same(got.LD, LD, 1e-10)
        assert got.pivots.tolist() == piv.tolist() and got.info.tolist() == info.tolist()
    # complex: hermitian=True is torch's hetrf (L D L^H), no longer refused (test_linalg_more.py's
    # test_ldl_complex_against_torch checks its values)
    Hc = torch.tensor([[2, 5 + 7j], [1 + 1j, 3]], dtype=torch.complex128)
    LD, piv = torch.linalg.ldl_factor(Hc, hermitian=True)
    got = tn.linalg.ldl_factor(_t(Hc), hermitian=True)
    _same(tn.view_as_real(got.LD), torch.view_as_real(LD), 1e-12)
    assert got.pivots.tolist() == piv.tolist()


# ---------------------------------------------------------------- 5. load_state_dict(assign=True)
def test_load_state_dict_assign():
    """PyTorch 2.1+ (not in 1.13): the state dict's tensors become the module's; parameters
    stay Parameters with the module's requires_grad; dtype comes from the state dict."""
    m = tnn.Sequential(tnn.Linear(3, 2), tnn.BatchNorm1d(2))
    m[0].bias.requires_grad_(False)
    sd = {k: tn.randn(*v.shape, dtype=tn.float64) if v.is_floating_point() else v.clone() for k, v in m.state_dict().items()}
    res = m.load_state_dict(sd, assign=True)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert isinstance(m[0].weight, tnn.Parameter) and m[0].weight.dtype == tn.float64
    assert m[0].weight.requires_grad and not m[0].bias.requires_grad
    assert m[1].running_mean is sd["1.running_mean"]          # a buffer: the tensor itself
    sd["0.weight"].add_(1)                                     # shares storage
    assert m[0].weight.tolist() == sd["0.weight"].tolist()
    assert not sd["0.weight"].requires_grad
    # the default copies (the module's dtype stays)
    m2 = tnn.Linear(3, 2)
    m2.load_state_dict({"weight": tn.ones(2, 3, dtype=tn.float64), "bias": tn.zeros(2)})
    assert m2.weight.dtype == tn.float32 and m2.weight.sum().item() == 6
    # errors as without assign
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        tnn.Linear(3, 2).load_state_dict({"weight": tn.ones(3, 3), "bias": tn.zeros(2)}, assign=True)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        tnn.Linear(3, 2).load_state_dict({"weight": tn.ones(2, 3)}, assign=True)


# ---------------------------------------------------------------- 7. TransformerEncoder keywords
def test_transformer_encoder_nested_tensor_keywords_change_nothing():
    tn.manual_seed(0)
    layer = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    a = tnn.TransformerEncoder(layer, 2)
    b = tnn.TransformerEncoder(layer, 2, enable_nested_tensor=False, mask_check=False)
    b.load_state_dict(a.state_dict())
    x = tn.randn(5, 3, 8)
    assert a.enable_nested_tensor and a.mask_check and not b.enable_nested_tensor
    _same(b(x), torch.tensor(a(x).tolist()), 0)


# ---------------------------------------------------------------- 8. ormqr, histogramdd
def test_ormqr_keywords_through_the_text():
    torch.manual_seed(1)
    A, C = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)
    a, tau = torch.geqrf(A)
    for left, tr in ((True, False), (True, True), (False, False), (False, True)):
        CC = C if left else C.T.contiguous()
        want = torch.ormqr(a, tau, CC, left, tr)
        _same(tn.ormqr(_t(a), _t(tau), _t(CC), left=left, transpose=tr), want, 1e-12)
        _same(tn.ormqr(_t(a), _t(tau), _t(CC), left, tr), want, 1e-12)


def test_histogramdd_keywords():
    torch.manual_seed(2)
    x = torch.randn(50, 2, dtype=torch.float64)
    w = torch.rand(50, dtype=torch.float64)
    for kw in ({}, {"range": [-1., 1., -2., 2.]}, {"weight": w, "density": True}, {"range": [0., 1., 0., 1.], "density": True}):
        want = torch.histogramdd(x, bins=[3, 4], **kw)
        got = tn.histogramdd(_t(x), bins=[3, 4], **{k: _t(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()})
        _same(got.hist, want.hist)
        for e, f in zip(got.bin_edges, want.bin_edges):
            _same(e, f)
    edges = [torch.tensor([-3., 0., 3.], dtype=torch.float64), torch.tensor([-1., 0.5, 1.], dtype=torch.float64)]
    want = torch.histogramdd(x, bins=edges, weight=w)
    _same(tn.histogramdd(_t(x), bins=[_t(e) for e in edges], weight=_t(w)).hist, want.hist)
    with pytest.raises(RuntimeError, match="range should have 4 elements"):
        tn.histogramdd(_t(x), bins=[3, 4], range=[0., 1.])
