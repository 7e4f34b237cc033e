"""Issue 20's Python-only composites moved into C, against PyTorch: torch.fill (a number
or a 0-d tensor value, with their gradients), isreal, nn.init.trunc_normal_ of a
non-contiguous tensor (drawn in memory order, as uniform_). Skipped without torch."""
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def _t(x):
    return torch.tensor(x.tolist(), dtype=getattr(torch, str(x.dtype).split(".")[1]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "bool"])
def test_fill_values_dtypes(dtype):
    for shape in [(2, 3), (), (0, 4), (3, 1, 2)]:
        x, tx = tn.zeros(shape, dtype=getattr(tn, dtype)), torch.zeros(shape, dtype=getattr(torch, dtype))
        for v in (1, 2.5, True, 0):
            r, tr = tn.fill(x, v), torch.fill(tx, v)
            assert str(r.dtype) == str(tr.dtype) and tuple(r.shape) == tuple(tr.shape)
            assert r.tolist() == tr.tolist()
        # a 0-d tensor value of another dtype is converted
        r, tr = tn.fill(x, tn.tensor(3.75)), torch.fill(tx, torch.tensor(3.75))
        assert str(r.dtype) == str(tr.dtype) and r.tolist() == tr.tolist()
    # a non-contiguous input: its values are not read, its shape kept
    x = tn.zeros(3, 4).t()
    assert tn.fill(x, 7).tolist() == torch.fill(torch.zeros(3, 4).t(), 7).tolist()


def test_fill_gradients():
    x, tx = tn.randn(3, 2, dtype=tn.float64, requires_grad=True), torch.zeros(3, 2, dtype=torch.float64, requires_grad=True)
    v, tv = tn.tensor(2.0, dtype=tn.float64, requires_grad=True), torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 2, dtype=torch.float64)
    for ours, theirs in ((tn.fill(x, v), torch.fill(tx, tv)), (tn.fill(x, 1.5), torch.fill(tx, 1.5))):
        assert ours.grad_fn.name() == theirs.grad_fn.name()
        (ours * tn.tensor(w.tolist(), dtype=tn.float64)).sum().backward()
        (theirs * w).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist() == [[0.0, 0.0]] * 3
    assert abs(v.grad.item() - tv.grad.item()) < 1e-12
    assert tn.autograd.gradcheck(lambda a: tn.fill(x.detach(), a), (v,))


def test_fill_errors():
    with pytest.raises(RuntimeError, match="0-dimension"):
        torch.fill(torch.zeros(2), torch.ones(2))
    with pytest.raises(RuntimeError, match="0-dimension"):
        tn.fill(tn.zeros(2), tn.ones(2))
    with pytest.raises(TypeError):
        tn.fill(tn.zeros(2), "a")
    with pytest.raises((TypeError, RuntimeError)):
        tn.fill(None, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "bool"])
def test_isreal(dtype):
    x = tn.tensor([[1, 0, 2]], dtype=getattr(tn, dtype))
    assert tn.isreal(x).tolist() == torch.isreal(_t(x)).tolist()
    assert x.isreal().dtype == tn.bool
    assert tn.isreal(tn.tensor(float("nan"))).item() is True
    assert tuple(tn.isreal(tn.zeros(0, 3)).shape) == (0, 3)
    assert tn.isreal(tn.zeros(3, 4).t()).tolist() == [[True] * 3] * 4


@pytest.mark.parametrize("make", [lambda m, d: m.empty(4, 3, dtype=d).t(), lambda m, d: m.empty(2, 6, dtype=d)[:, ::2],
                                  lambda m, d: m.empty(3, 4, dtype=d), lambda m, d: m.empty(2, 3, 4, dtype=d).permute(2, 0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_non_contiguous_matches_torch(make, dtype):
    a, b = make(torch, getattr(torch, dtype)), make(tn, getattr(tn, dtype))
    for args in ((), (0.5, 2.0, -1.0, 3.0)):
        torch.manual_seed(5)
        torch.nn.init.trunc_normal_(a, *args)
        tn.manual_seed(5)
        tn.nn.init.trunc_normal_(b, *args)
        torch.testing.assert_close(_t(b), a, atol=1e-6, rtol=1e-6)
