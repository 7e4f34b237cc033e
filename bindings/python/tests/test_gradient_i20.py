"""torch.gradient in C (tn_gradient, tn_gradient_coords) against PyTorch: spacing as a
number, one per dim, or coordinates; dim as an int or a list; edge_order 1 and 2; integer
inputs; non-contiguous inputs; gradients through it (float64); PyTorch's errors.
Skipped without torch."""
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def _pair(shape, dtype=torch.float64, seed=0, nc=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64) if dtype.is_floating_point else torch.randint(-9, 10, shape, generator=g)
    t = t.to(dtype)
    ours = tn.tensor(t.tolist(), dtype=getattr(tn, str(dtype).split(".")[1])).reshape(tuple(t.shape))
    if nc:
        return ours.t(), t.t()
    return ours, t


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)
        torch.testing.assert_close(torch.tensor(x.tolist(), dtype=y.dtype), y)


def _coords(ts):
    return tuple(tn.tensor(c.tolist(), dtype=getattr(tn, str(c.dtype).split(".")[1])) for c in ts)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int64])
@pytest.mark.parametrize("nc", [False, True])
def test_gradient_matches_torch(edge_order, dtype, nc):
    x, t = _pair((5, 4), dtype, nc=nc)
    for kw in (dict(), dict(spacing=2.0), dict(spacing=[2.0, 0.5]), dict(dim=1), dict(dim=-1, spacing=3),
               dict(dim=[1, 0], spacing=[1.5, 0.25]), dict(spacing=None)):
        _same(tn.gradient(x, edge_order=edge_order, **kw), torch.gradient(t, edge_order=edge_order, **kw))
    g = torch.Generator().manual_seed(3)
    c0, c1 = torch.rand(t.shape[0], generator=g).cumsum(0).double(), torch.arange(t.shape[1], dtype=torch.float64) ** 2
    for dims, cs in (((0, 1), (c0, c1)), ((1,), (c1,)), ((0,), (torch.arange(t.shape[0]) * 3,))):
        _same(tn.gradient(x, spacing=_coords(cs), dim=list(dims), edge_order=edge_order),
              torch.gradient(t, spacing=cs, dim=list(dims), edge_order=edge_order))
    _same(tn.gradient(x, spacing=_coords((c0, c1)), edge_order=edge_order), torch.gradient(t, spacing=(c0, c1), edge_order=edge_order))


def test_gradient_shapes():
    for shape in [(3,), (2, 3, 4), (3, 0)]:
        x, t = _pair(shape)
        if 0 in shape:
            _same(tn.gradient(x, dim=0), torch.gradient(t, dim=0))
            continue
        _same(tn.gradient(x), torch.gradient(t))
    assert tn.gradient(tn.tensor(2.0)) == torch.gradient(torch.tensor(2.0)) == ()


def test_gradient_backward():
    x, t = _pair((4, 3))
    x.requires_grad_(True)
    t.requires_grad_(True)
    w = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for ours, theirs in ((tn.gradient(x, spacing=0.5, edge_order=2)[0], torch.gradient(t, spacing=0.5, edge_order=2)[0]),
                         (tn.gradient(x, dim=1)[0], torch.gradient(t, dim=1)[0])):
        (ours * tn.tensor(w.tolist(), dtype=tn.float64)).sum().backward()
        (theirs * w).sum().backward()
        torch.testing.assert_close(torch.tensor(x.grad.tolist(), dtype=torch.float64), t.grad)
    assert tn.autograd.gradcheck(lambda a: tn.gradient(a, spacing=[0.5, 2.0], edge_order=2)[1], (x.detach().requires_grad_(),))


def test_gradient_errors():
    x, t = _pair((3, 4))
    for kw, exc in ((dict(edge_order=3), RuntimeError), (dict(dim=2), IndexError), (dict(dim=[0, 0]), RuntimeError),
                    (dict(spacing=[1.0, 2.0, 3.0]), RuntimeError)):
        with pytest.raises(exc):
            torch.gradient(t, **kw)
        with pytest.raises(exc):
            tn.gradient(x, **kw)
    x2, t2 = _pair((2, 4))
    with pytest.raises(RuntimeError, match="edge_order"):
        torch.gradient(t2, edge_order=2)
    with pytest.raises(RuntimeError, match="edge_order"):
        tn.gradient(x2, edge_order=2)
    with pytest.raises(RuntimeError, match="same length"):   # a list of one number for two dims
        tn.gradient(x, spacing=[2.0])
