"""The ops whose C forms moved to the keyword convention (issue 19 item 5: the losses with a
reduction, the functional activations, tril/triu_indices, nan_to_num, logit, cross,
tensordot) keep their Python behaviour: the package now calls their _str forms, so the
values that travel as option text (floats by repr, NumPy scalars, None, NaN, lists of dims)
are checked here against PyTorch 1.13 (the tests skip without it)."""
import math

import pytest

import tensor as tn

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")


def _same(a, b, tol=1e-12):
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    x, y = np.asarray(a.detach().tolist(), dtype=float), b.detach().numpy().astype(float)
    assert np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True), (x, y)


def test_nan_to_num_values_through_the_text():
    v = [math.nan, math.inf, -math.inf, 0.5, -2.0]
    x, tx = tn.tensor(v, dtype=tn.float64), torch.tensor(v, dtype=torch.float64)
    for kw in ({}, {"nan": -1.0, "posinf": 1e6, "neginf": -7}, {"posinf": np.float64(3)},
               {"posinf": math.nan}, {"neginf": math.nan}, {"nan": math.inf}, {"posinf": 1e-300}):
        _same(tn.nan_to_num(x, **kw), torch.nan_to_num(tx, **kw))
    _same(tn.nan_to_num(x.float()), torch.nan_to_num(tx.float()))
    _same(tn.nan_to_num(tn.tensor([1, 2]), posinf=math.nan), torch.nan_to_num(torch.tensor([1, 2]), posinf=math.nan))


def test_logit_cross_tensordot_tri_indices():
    z = [0.0, 0.25, 0.5, 0.9, 1.0]
    for eps in (None, 0.1, np.float32(0.2), -1.0, math.nan):
        _same(tn.logit(tn.tensor(z, dtype=tn.float64), eps), torch.logit(torch.tensor(z, dtype=torch.float64), eps))
    a, b = torch.randn(3, 4, 3, dtype=torch.float64), torch.randn(3, 4, 3, dtype=torch.float64)
    ta, tb = tn.tensor(a.tolist(), dtype=tn.float64), tn.tensor(b.tolist(), dtype=tn.float64)
    _same(tn.cross(ta, tb), torch.cross(a, b))
    _same(tn.cross(ta, tb, dim=np.int64(-1)), torch.cross(a, b, dim=-1))
    _same(tn.linalg.cross(ta, tb), torch.linalg.cross(a, b))
    A, D = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(3, 2, 2, dtype=torch.float64)
    tA, tD = tn.tensor(A.tolist(), dtype=tn.float64), tn.tensor(D.tolist(), dtype=tn.float64)
    _same(tn.tensordot(tA, tA.permute(1, 2, 0)), torch.tensordot(A, A.permute(1, 2, 0)), 1e-10)
    _same(tn.tensordot(tA, tD, dims=([1, np.int64(0)], [0, 1])), torch.tensordot(A, D, dims=([1, 0], [0, 1])), 1e-10)
    _same(tn.tensordot(tA, tD, dims=0), torch.tensordot(A, D, dims=0))
    _same(tn.tensordot(tA, tD, dims=([], [])), torch.tensordot(A, D, dims=([], [])))
    for f in ("tril_indices", "triu_indices"):
        for off in (0, -1, np.int64(2)):
            for dt in (None, "int32"):
                kw = {} if dt is None else {"dtype": getattr(tn, dt)}
                tkw = {} if dt is None else {"dtype": getattr(torch, dt)}
                _same(getattr(tn, f)(3, 4, off, **kw), getattr(torch, f)(3, 4, int(off), **tkw))


def test_losses_and_activations_through_the_text():
    x, y = torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)
    tx, ty = tn.tensor(x.tolist(), dtype=tn.float64), tn.tensor(y.tolist(), dtype=tn.float64)
    F, TF = tn.nn.functional, torch.nn.functional
    for red in ("mean", "sum", "none"):
        _same(F.mse_loss(tx, ty, reduction=red), TF.mse_loss(x, y, reduction=red))
        _same(F.smooth_l1_loss(tx, ty, reduction=red, beta=np.float64(0.3)), TF.smooth_l1_loss(x, y, reduction=red, beta=0.3))
        _same(F.huber_loss(tx, ty, reduction=red, delta=0.1), TF.huber_loss(x, y, reduction=red, delta=0.1))
        _same(F.margin_ranking_loss(tx[0], ty[0], tn.tensor([1.0, -1.0, 1.0], dtype=tn.float64), margin=0.5, reduction=red),
              TF.margin_ranking_loss(x[0], y[0], torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64), margin=0.5, reduction=red))
    lx, ly = tn.log_softmax(tx, 1), tn.log_softmax(ty, 1)
    _same(F.kl_div(lx, ly, reduction="batchmean", log_target=True), TF.kl_div(x.log_softmax(1), y.log_softmax(1), reduction="batchmean", log_target=True))
    w = torch.rand(3, dtype=torch.float64)
    tw = tn.tensor(w.tolist(), dtype=tn.float64)
    _same(F.binary_cross_entropy_with_logits(tx, ty.sigmoid(), weight=tw, pos_weight=tw, reduction="sum"),
          TF.binary_cross_entropy_with_logits(x, y.sigmoid(), weight=w, pos_weight=w, reduction="sum"))
    _same(F.binary_cross_entropy(tx.sigmoid(), ty.sigmoid(), weight=tw), TF.binary_cross_entropy(x.sigmoid(), y.sigmoid(), weight=w))
    with pytest.raises(ValueError, match="batchmean is not a valid value for reduction"):
        F.mse_loss(tx, ty, reduction="batchmean")
    _same(F.gelu(tx, approximate="tanh"), TF.gelu(x, approximate="tanh"))
    _same(F.softplus(tx, beta=2, threshold=np.float64(1.5)), TF.softplus(x, beta=2, threshold=1.5))
    _same(F.leaky_relu(tx, 1e-300), TF.leaky_relu(x, 1e-300))
    _same(F.celu(tx, alpha=0.1 + 0.2), TF.celu(x, alpha=0.1 + 0.2))
    _same(F.softshrink(tx, 0.7), TF.softshrink(x, 0.7))
    _same(F.rrelu(tx, 0.1, 0.2), TF.rrelu(x, 0.1, 0.2))
    with pytest.raises(TypeError, match=r"leaky_relu\(\): argument 'input'"):
        F.leaky_relu([1.0])
