"""var, std, var_mean, std_mean and norm of complex tensors (issue 19 item 5 group 2): a real
result (the variance of |x - mean|, the norm of |x|) and PyTorch's gradients, checked against
torch on random, non-contiguous inputs, over dims, with keepdim and corrections."""
import pytest

torch_ref = pytest.importorskip("torch")
import numpy as np
import tensor as torch

CASES = [
    ("var", {}), ("var", {"dim": 1}), ("var", {"dim": (0, 2), "keepdim": True}), ("var", {"dim": 1, "correction": 0}),
    ("var", {"unbiased": False}), ("std", {}), ("std", {"dim": -1, "keepdim": True}), ("std", {"dim": 0, "correction": 2}),
    ("norm", {}), ("norm", {"p": 1}), ("norm", {"p": 3, "dim": 1}), ("norm", {"p": float("inf"), "dim": (0, 2)}),
    ("norm", {"p": float("-inf"), "dim": 2, "keepdim": True}), ("norm", {"p": 0, "dim": 1}), ("norm", {"dim": (1, 2), "keepdim": True}),
]


def _pair(dtype, seed, zero=False):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((4, 3, 5)) + 1j * rng.standard_normal((4, 3, 5))).astype(dtype)
    if zero:
        a[0, 0, :] = 0   # a zero element (abs's gradient there) and a zero norm lane
    a = a.transpose(2, 1, 0)   # non-contiguous: shape (5, 3, 4)
    return torch.tensor(a, requires_grad=True), torch_ref.tensor(a, requires_grad=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name,kw", CASES)
def test_complex_reduction_matches_torch(dtype, name, kw):
    ours, ref = _pair(dtype, 7, zero=name == "norm")
    r, e = getattr(torch, name)(ours, **kw), getattr(torch_ref, name)(ref, **kw)
    assert str(r.dtype) == str(e.dtype) and not r.is_complex()
    assert tuple(r.shape) == tuple(e.shape)
    tol = 1e-5 if dtype == np.complex64 else 1e-10
    np.testing.assert_allclose(r.detach().numpy(), e.detach().numpy(), rtol=tol, atol=tol)
    if name == "norm" and kw.get("p") == 0:
        return   # a count: no gradient in either
    w = np.random.default_rng(3).standard_normal(tuple(e.shape)).astype(np.float64 if dtype == np.complex128 else np.float32)
    (r * torch.tensor(w)).sum().backward()
    (e * torch_ref.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_complex_var_mean(name):
    ours, ref = _pair(np.complex128, 11)
    (v, m), (ev, em) = getattr(torch, name)(ours, dim=1, correction=0), getattr(torch_ref, name)(ref, dim=1, correction=0)
    assert str(v.dtype) == "torch.float64" and str(m.dtype) == "torch.complex128"
    np.testing.assert_allclose(v.detach().numpy(), ev.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(m.detach().numpy(), em.detach().numpy(), rtol=1e-10)
    (v.sum() + m.real.sum() * 2).backward()
    (ev.sum() + em.real.sum() * 2).backward()
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_complex_double_backward():
    ours, ref = _pair(np.complex128, 5)
    for x, lib in ((ours, torch), (ref, torch_ref)):
        g, = lib.autograd.grad(lib.var(x, dim=0).sum() + lib.norm(x, dim=1).sum(), x, create_graph=True)
        (g.abs() ** 2).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_unbiased_and_correction_together_is_an_error():
    x = torch.tensor([1.0, 2.0, 4.0])
    with pytest.raises(RuntimeError):
        torch.var(x, unbiased=True, correction=0)
