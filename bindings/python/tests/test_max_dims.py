"""Tensors of the library's maximum number of dims (TN_MAX_DIMS, 16 by default; PyTorch
allows 64) against PyTorch: view, permute, sum, broadcast add, backward, printing; one dim
more raises a clear error. Skipped without torch."""
import pytest

import tensor as tn
from tensor import _C

torch = pytest.importorskip("torch")

D = _C.MAX_DIMS
BIG = min(D, 12)                      # dims of size 2, the others 1: at most 4096 elements
SHAPE = tuple(2 if k < BIG else 1 for k in range(D))


def _pair():
    b = torch.arange(float(2 ** BIG), dtype=torch.float64).reshape(SHAPE)
    return tn.tensor(b.tolist(), dtype=tn.float64), b


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    assert a.flatten().tolist() == b.flatten().tolist()


def test_limit_is_the_library_s():
    assert D == _C.lib.tn_max_dims() >= 16    # the default (PyTorch allows 64; 16 is the GPU unit's most)


def test_ops_at_the_limit():
    a, b = _pair()
    assert a.dim() == D
    _same(a.view(-1), b.view(-1))
    perm = list(range(D))[::-1]
    _same(a.permute(*perm), b.permute(*perm))
    assert a.permute(*perm).stride() == b.permute(*perm).stride()
    _same(a.permute(*perm).contiguous(), b.permute(*perm).contiguous())
    _same(a.sum(), b.sum())
    _same(a.sum((0, -1), keepdim=True), b.sum((0, -1), keepdim=True))
    _same(a.sum(BIG - 1), b.sum(BIG - 1))
    row = (2,) + (1,) * (D - 1)
    _same(a + tn.arange(2.0, dtype=tn.float64).reshape(row), b + torch.arange(2.0, dtype=torch.float64).reshape(row))
    _same(a + tn.ones(1, dtype=tn.float64), b + torch.ones(1, dtype=torch.float64))
    _same(a[(0,) * (D - 1)], b[(0,) * (D - 1)])


def test_backward_at_the_limit():
    a, b = _pair()
    a.requires_grad_(True)
    b.requires_grad_(True)
    perm = list(range(D))[::-1]
    for x in (a, b):
        z = x.permute(*perm) + 1
        (z * z).sum().backward()
    _same(a.grad, b.grad)


def test_printing_at_the_limit():
    assert repr(tn.full((1,) * D, 3.0)) == repr(torch.full((1,) * D, 3.0))
    assert str(tn.zeros((1,) * (D - 1) + (2,), dtype=tn.int64)) == str(torch.zeros((1,) * (D - 1) + (2,), dtype=torch.int64))


def test_one_more_dim_raises():
    with pytest.raises((RuntimeError, IndexError), match=str(D)):   # the C message: "ndim 17 out of range [0, 16]"
        tn.zeros((1,) * (D + 1))
    x = tn.zeros((1,) * D)
    with pytest.raises(RuntimeError, match="cannot grow"):
        x.unsqueeze(0)
    with pytest.raises((RuntimeError, IndexError), match=str(D)):
        x.view((1,) * (D + 1))
    with pytest.raises((RuntimeError, IndexError)):
        x.expand((1,) * (D + 1))
