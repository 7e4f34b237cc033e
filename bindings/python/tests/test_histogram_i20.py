"""torch.histogram in C (tn_histogram, tn_histogram_edges) against PyTorch: bin counts,
range, weights, density, explicit edges, NaN/outside values, empty and non-contiguous
inputs, float32 and float64, PyTorch's errors. Skipped without torch."""
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def _ours(t):
    return tn.tensor(t.tolist(), dtype=getattr(tn, str(t.dtype).split(".")[1])).reshape(tuple(t.shape))


def _same(a, b):
    for x, y in zip(a, b):
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)
        torch.testing.assert_close(torch.tensor(x.tolist(), dtype=y.dtype), y, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histogram_matches_torch(dtype):
    g = torch.Generator().manual_seed(0)
    t = (torch.randn(7, 9, generator=g) * 3).to(dtype)
    t[0, 0], t[1, 1], t[2, 2] = float("nan"), 100.0, -100.0
    w = torch.rand(7, 9, generator=g).to(dtype)
    x, xw = _ours(t), _ours(w)
    for bins in (1, 5, 10):
        # rows 1: without the NaN at [0, 0], which 1.13's kernel counts and 2025's skips (as ours)
        for kw in (dict(range=(-2.0, 3.0)), dict(range=(1.0, 1.0)), dict(range=(-4.0, 4.0), density=True), dict(), dict(density=True)):
            _same(tn.histogram(x[1:], bins, **kw), torch.histogram(t[1:], bins, **kw))
            _same(tn.histogram(x[1:], bins, weight=xw[1:], **kw), torch.histogram(t[1:], bins, weight=w[1:], **kw))
        h_nan, h = tn.histogram(x, bins, range=(-2.0, 3.0))[0], tn.histogram(x[1:], bins, range=(-2.0, 3.0))[0]
        assert h_nan.sum().item() == h.sum().item() + ((x[0] >= -2) & (x[0] <= 3)).sum().item()   # the NaN not counted
        with pytest.raises(RuntimeError, match="not finite"):
            torch.histogram(t, bins)
        with pytest.raises(RuntimeError, match="not finite"):
            tn.histogram(x, bins)
    e = torch.tensor([-3.0, -1.0, 0.0, 0.5, 4.0], dtype=dtype)
    _same(tn.histogram(x[1:], _ours(e)), torch.histogram(t[1:], e))
    _same(tn.histogram(x[1:], _ours(e), weight=xw[1:], density=True), torch.histogram(t[1:], e, weight=w[1:], density=True))
    # non-contiguous input, method form
    _same(x[1:].t().histogram(4, range=(-1.0, 1.0)), t[1:].t().histogram(4, range=(-1.0, 1.0)))
    # no values: numpy's range [0, 1]; values all equal: widened by 0.5
    _same(tn.histogram(tn.zeros(0, dtype=x.dtype), 3), torch.histogram(torch.zeros(0, dtype=dtype), 3))
    _same(tn.histogram(tn.full((4,), 2.0, dtype=x.dtype), 3), torch.histogram(torch.full((4,), 2.0, dtype=dtype), 3))


def test_histogram_not_differentiable_and_errors():
    t = torch.randn(10, dtype=torch.float64)
    x = _ours(t).requires_grad_()
    h, e = tn.histogram(x, 3)
    assert h.grad_fn is None and not h.requires_grad
    for args, kw in (((0,), {}), ((3,), dict(range=(2.0, 1.0))), ((torch.ones(2, 2, dtype=torch.float64),), {}),
                     ((3,), dict(weight=torch.ones(4, dtype=torch.float64)))):
        with pytest.raises(RuntimeError):
            torch.histogram(t, *args, **kw)
        ours_args = tuple(_ours(a) if isinstance(a, torch.Tensor) else a for a in args)
        ours_kw = {k: (_ours(v) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        with pytest.raises(RuntimeError):
            tn.histogram(_ours(t), *ours_args, **ours_kw)
    with pytest.raises(RuntimeError):
        torch.histogram(torch.arange(4), 2)
    with pytest.raises(RuntimeError, match="same dtype"):
        tn.histogram(tn.arange(4), 2)
