"""torch.linalg.eig and eigvals (issue 26): general square matrices, complex results, against
PyTorch's own test database (OpInfo's linalg.eig / linalg.eigvals samples) and torch directly.

The eigenvalues follow LAPACK geev's order (its dlahqr path: n <= 75), so they are compared as
they are. An eigenvector is defined up to a factor e^{i phi}: OpInfo's samples go through
abs(), its own gauge-invariant wrapper for linalg.eig (and gradients through it); the vectors
themselves are compared with torch's directly (Hessenberg input) and up to their sign.

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_linalg_eig.py
"""
import os
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ops_elementwise_linalg as H  # noqa: E402  (the OpInfo harness; puts the package on sys.path)
from opinfo_util import run_sample  # noqa: E402
import tensor as tn  # noqa: E402

torch = H.torch
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
from opinfo_util import np  # noqa: E402


@needs_torch
@pytest.mark.parametrize("cplx", [False, True])
def test_opinfo_eigvals(cplx):
    passed, total, failures = H.check_op("linalg.eigvals", cplx=cplx)
    assert total > 0
    assert not failures, f"linalg.eigvals: {passed}/{total} passed\n" + "\n".join(failures[:20])


@needs_torch
@pytest.mark.parametrize("cplx", [False, True])
def test_opinfo_eig_gauge_invariant(cplx):
    op = H._find("linalg.eig")
    g = lambda r: (r[0], r[1].abs())   # noqa: E731  (OpInfo's output_process_fn_grad for linalg.eig)
    ours_op = H.ours_callable(op)
    ref = types.SimpleNamespace(op=lambda *a, **k: g(op.op(*a, **k)), name=op.name)
    ours = lambda *a, **k: g(ours_op(*a, **k))   # noqa: E731
    total, failures = 0, []
    for k, (s, grad) in enumerate(H._samples(op, cplx=cplx)):
        total += 1
        f32 = s.input.dtype in (torch.float32, torch.complex64)
        try:
            run_sample(ref, ours, s, f"linalg.eig sample {k}", noncontig=k % 2 == 1, check_grad=grad,
                       tol=(1e-4, 1e-4) if f32 else (1e-7, 1e-7), grad_tol=(1e-6, 1e-6))
        except Exception as e:   # noqa: BLE001
            failures.append(f"sample {k} {tuple(s.input.shape)}: {str(e)[:300]}")
    assert total > 0
    assert not failures, f"linalg.eig: {total - len(failures)}/{total} passed\n" + "\n".join(failures[:20])


def _np(t):
    return np.array(t.tolist())


@needs_torch
@pytest.mark.parametrize("cplx", [False, True])
def test_values_and_order_against_torch(cplx):
    """Random matrices n = 1..40: eigenvalues equal torch's in order; each vector torch's up to
    a unit factor (|v^H w| = 1), with norm 1 and its largest entry real."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 5, 8, 13, 20, 40):
        for _ in range(6):
            a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0)
            L, V = torch.linalg.eig(torch.tensor(a))
            l, v = tn.linalg.eig(tn.tensor(a))
            l, v = _np(l), _np(v)
            assert np.abs(l - L.numpy()).max() < 1e-10 * max(1, np.abs(l).max()), (n, l, L)
            assert np.abs(np.abs((v.conj() * V.numpy()).sum(0)) - 1).max() < 1e-8
            assert np.abs(np.linalg.norm(v, axis=0) - 1).max() < 1e-12
            k = np.abs(v).argmax(0)
            assert np.abs(v[k, np.arange(n)].imag).max() == 0
            if cplx:   # zgeev's normalisation leaves no freedom: the vectors are torch's
                assert np.abs(v - V.numpy()).max() < 1e-8
            assert np.abs(_np(tn.linalg.eigvals(tn.tensor(a))) - l).max() == 0


@needs_torch
def test_structured_matrices():
    """Permuted (triangular), repeated, defective, conjugate pairs, 0x0, 1x1, batched, badly scaled."""
    rng = np.random.default_rng(1)
    mats = [np.triu(rng.standard_normal((5, 5))), np.tril(rng.standard_normal((5, 5))), np.eye(4), np.zeros((3, 3)),
            np.array([[0, 1.], [-1, 0]]), np.array([[1, 1.], [0, 1]]), np.array([[2, 1, 0], [0, 2, 1], [0, 0, 2.]]),
            np.diag([3., 1, 2]), rng.standard_normal((6, 6)) * np.logspace(-5, 5, 6)[:, None], np.array([[7.]])]
    for a in mats:
        for x in (a, a + 0j):
            L, V = torch.linalg.eig(torch.tensor(x))
            l, v = tn.linalg.eig(tn.tensor(x))
            H.assert_close(l, L, "eigenvalues", 1e-9, 1e-9)
            # A V = V diag(L) (a defective matrix's vectors are parallel, the residual still small)
            r = np.abs(x @ _np(v) - _np(v) * _np(l)).max() / max(np.abs(x).max(), 1e-300)
            assert r < 1e-12 * len(a), (a, r)
    e = tn.linalg.eig(tn.zeros(2, 0, 0))
    assert tuple(e.eigenvalues.shape) == (2, 0) and tuple(e.eigenvectors.shape) == (2, 0, 0)
    assert e.eigenvalues.dtype == tn.complex64
    A = torch.randn(2, 3, 6, 6, dtype=torch.float64)
    l, v = tn.linalg.eig(H.to_tn(A))
    H.assert_close(l, torch.linalg.eigvals(A), "batched eigenvalues")
    At = A.mT   # non-contiguous
    H.assert_close(tn.linalg.eigvals(H.to_tn(A).mT), torch.linalg.eigvals(At), "non-contiguous")
    assert tn.linalg.eig(tn.ones(3, 3, dtype=tn.float32)).eigenvectors.dtype == tn.complex64
    assert tn.linalg.eigvals(tn.ones(3, 3, dtype=tn.complex128)).dtype == tn.complex128


def test_errors():
    with pytest.raises(RuntimeError, match="square matrices"):
        tn.linalg.eig(tn.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tn.linalg.eigvals(tn.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        tn.linalg.eig(tn.ones(2, 2, dtype=tn.int64))
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        tn.linalg.eig(tn.tensor([[1., float("nan")], [0., 1.]]))
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        tn.linalg.eigvals(tn.tensor([[1., float("inf")], [0., 1.]]))
    assert not hasattr(tn, "eig")   # torch.eig is gone in 2025 PyTorch (AttributeError there too)


@needs_torch
def test_gradients():
    """Gauge-invariant losses: gradients equal torch's (float64, complex128); a loss that depends on
    the phase raises PyTorch's error; gradcheck of the eigenvalues and |V|."""
    rng = np.random.default_rng(2)
    for cplx in (False, True):
        a = rng.standard_normal((2, 4, 4)) + (1j * rng.standard_normal((2, 4, 4)) if cplx else 0)
        grads = []
        for mod in (torch, tn):
            x = mod.tensor(a, requires_grad=True)
            L, V = mod.linalg.eig(x)
            loss = (L * L.conj()).real.sum() + (V.abs() ** 3).sum() + mod.linalg.eigvals(x).imag.sum()
            loss.backward()
            grads.append(x.grad)
        H.assert_close(grads[1], grads[0], "eig gradient", 1e-9, 1e-9)
    x = tn.tensor([[0., 1, 0.3], [-1, 0, 0.2], [0.1, 0.4, 1]], requires_grad=True)   # a complex pair
    with pytest.raises(RuntimeError, match=r"specified up to multiplication by e\^\{i phi\}"):
        tn.linalg.eig(x).eigenvectors.real.sum().backward()
    x = tn.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    assert tn.autograd.gradcheck(lambda t: tn.linalg.eigvals(t).real, (x,))
    xc = tn.tensor(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)), requires_grad=True)
    assert tn.autograd.gradcheck(lambda t: tn.linalg.eig(t).eigenvectors.abs(), (xc,))


@needs_torch
def test_vectors_equal_torch_hessenberg():
    """Upper Hessenberg input (gehrd then has nothing to do, so both start lahqr from the same
    bits): eigenvalues and eigenvectors equal torch's directly, complex pairs' signs included
    (lahqr's reflectors round as torch's LAPACK's dlarfg: tn__eig_larfg), on many seeds."""
    for seed in range(120):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 60))
        a = np.triu(rng.standard_normal((n, n)), -1)
        L, V = torch.linalg.eig(torch.tensor(a))
        l, v = tn.linalg.eig(tn.tensor(a))
        assert np.abs(_np(l) - L.numpy()).max() < 1e-10 * max(1, np.abs(L.numpy()).max()), seed
        assert np.abs(_np(v) - V.numpy()).max() < 1e-8, seed


@needs_torch
def test_vectors_equal_torch_up_to_sign():
    """General real input: each eigenvector is torch's V column itself or -1 times it (the
    normalisation leaves no other freedom). Which sign a complex pair gets depends on how many
    QR sweeps its 2x2 block saw, which torch's own LAPACK changes for a 1-ulp change of one
    entry of A (about 1 matrix in 4 of these): the Hessenberg reduction's last bits (OpenBLAS's
    gemv/ger kernels) decide it, so the sign is not compared here."""
    for seed in range(120):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 40))
        a = rng.standard_normal((n, n))
        L, V = torch.linalg.eig(torch.tensor(a))
        v, V = _np(tn.linalg.eig(tn.tensor(a)).eigenvectors), V.numpy()
        d = np.minimum(np.abs(v - V).max(0), np.abs(v + V).max(0))
        assert d.max() < 1e-8, (seed, d.max())
        real = np.abs(L.numpy().imag) == 0   # real eigenvalues: real vectors, torch's sign
        assert np.abs(v[:, real] - V[:, real]).max(initial=0) < 1e-8, seed


@needs_torch
def test_double_backward():
    """gradgradcheck through the eigenvectors with a gauge-invariant function (|V|), real and
    complex, as torch's (whose gradgradcheck passes too); and the second-order gradient of a
    gauge-invariant loss equals torch's."""
    rng = np.random.default_rng(5)
    for cplx in (False, True):
        a = rng.standard_normal((4, 4)) + (1j * rng.standard_normal((4, 4)) if cplx else 0)
        x = tn.tensor(a, requires_grad=True)
        assert tn.autograd.gradgradcheck(lambda t: tn.linalg.eig(t).eigenvectors.abs(), (x,))
        assert tn.autograd.gradgradcheck(lambda t: tn.linalg.eig(t).eigenvalues, (x,))
        grads = []
        for mod in (torch, tn):
            x = mod.tensor(a, requires_grad=True)
            L, V = mod.linalg.eig(x)
            loss = (V.abs() ** 3).sum() + (L * L.conj()).real.sum()
            (g,) = mod.autograd.grad(loss, (x,), create_graph=True)
            (g.abs() ** 2).sum().backward()
            grads.append(x.grad)
        H.assert_close(grads[1], grads[0], "eig second-order gradient", 1e-8, 1e-8)


def test_accuracy_200():
    """200 x 200 random: backward error |A V - V diag(L)| / (|A| |V|) at LAPACK's level (a few n eps)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((200, 200))
    for x in (a, a + 1j * rng.standard_normal((200, 200))):
        l, v = tn.linalg.eig(tn.tensor(x))
        l, v = _np(l), _np(v)
        r = np.abs(x @ v - v * l).max() / np.abs(x).max()
        assert r < 200 * 2.3e-16 * 10, r
