"""The real SVD's blocked bidiagonalisation (issue 26, speed): from order 129 (k = min(m, n) >
tn__la_brd_nx = 128) gebrd reduces tn__la_brd_nb = 32 columns and rows a panel (LAPACK's
dlabrd) with the trailing matrix updated by two GEMMs, gebd2 the last 128 columns; Q and P
are formed from k >= tn__la_org_nx = 96 reflectors (and columns) 32 at a time (dorgqr's
larft / larfb through the GEMM). Smaller matrices keep the unblocked gebd2 / org2r.

Checked against LAPACK-grade bounds at the dtype's eps (backward error |A - U S Vh| / (|A| n),
|U^T U - I|, |Vh Vh^T - I|, S against torch's float64 svdvals to n eps |A|) on sizes around
the block and the crossovers (nb - 1, nb, nb + 1, 2 nb + 1, 96 +- 1, NX - 1, NX, NX + 1, NX + nb, NX +
nb + 1, 300, 513), square, tall, wide, full and reduced, float32 and float64, batched,
non-contiguous, rank-deficient, repeated, graded and zero matrices, 1 x N / N x 1 and 0-size;
NaN input (a clear error); the same bits at 1 and 2 threads (the GEMM splits C's rows, the
panels' passes split rows or columns, never a sum); the gradients against torch's."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from opinfo_util import tn, to_tn, torch  # noqa: E402
from test_linalg_svd_fast import _check, _same_bits_at_1_and_2_threads  # noqa: E402

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
NB, NX, ONX = 32, 128, 96
SQUARE = [NB - 1, NB, NB + 1, 2 * NB + 1, ONX - 1, ONX, ONX + 1, NX - 1, NX, NX + 1, NX + NB, NX + NB + 1, 300, 513]
RECT = [(300, NX + 1), (NX + 1, 300), (513, 200), (200, 513), (400, NX), (NX, 400), (1, 300), (300, 1), (2, 150, 140)]


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", SQUARE)
def test_square_around_the_block(n, dtype):
    torch.manual_seed(n)
    A = torch.randn(n, n, dtype=getattr(torch, dtype))
    _check(A, full=n % 2 == 1)


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", RECT)
def test_tall_wide_batched(shape, dtype):
    torch.manual_seed(sum(shape))
    A = torch.randn(*shape, dtype=getattr(torch, dtype))
    _check(A)
    _check(A, full=True)


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_noncontiguous_equals_contiguous(dtype):
    """a transpose and a strided slice past the crossover: the contiguous copy's bits"""
    torch.manual_seed(2)
    base = torch.randn(2, 330, 300, dtype=getattr(torch, dtype))
    a = to_tn(base)
    for view, tv in ((base.mT, a.transpose(-2, -1)), (base[:, ::2, 1:], a[:, ::2, 1:])):
        assert not tv.is_contiguous()
        for x, y in zip(tn.linalg.svd(tv), tn.linalg.svd(tv.contiguous())):
            assert (x.numpy() == y.numpy()).all()
        _check(view)


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_degenerate_blocked(dtype):
    torch.manual_seed(9)
    n = 200
    Q1, _ = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64))
    Q2, _ = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64))
    lo = -12 if dtype == "float64" else -6
    cases = {
        "rank 5": torch.randn(n, 5, dtype=torch.float64) @ torch.randn(5, 170, dtype=torch.float64),
        "repeated": 3 * Q1,
        "two clusters": Q1[:, :140] @ torch.diag(torch.tensor([2.0] * 70 + [1e-3] * 70, dtype=torch.float64)) @ Q2.mT[:140],
        "graded": Q1 @ torch.diag(torch.logspace(0, lo, n, dtype=torch.float64)) @ Q2.mT,
        "graded columns": torch.randn(n, 150, dtype=torch.float64) * torch.logspace(0, lo, 150, dtype=torch.float64),
        "zero": torch.zeros(150, 160, dtype=torch.float64),
        "identity": torch.eye(140, dtype=torch.float64),
        "zero columns": torch.cat([torch.randn(n, 70, dtype=torch.float64), torch.zeros(n, 80, dtype=torch.float64)], 1),
    }
    for name, A in cases.items():
        A = A.to(getattr(torch, dtype))
        for full in (False, True):
            try:
                _check(A, full)
            except AssertionError as e:
                raise AssertionError(f"{name} full={full}: {e}") from e
    _, S, _ = tn.linalg.svd(to_tn(cases["rank 5"].to(getattr(torch, dtype))))
    assert (S.numpy()[5:] < (1e-13 if dtype == "float64" else 1e-5) * S.numpy()[0]).all()


@needs_torch
def test_empty_and_bad_input():
    for shape in ((0, 300), (300, 0), (0, 0), (2, 0, 200)):
        E = torch.zeros(*shape, dtype=torch.float64)
        for full in (False, True):
            got, ref = tn.linalg.svd(to_tn(E), full_matrices=full), torch.linalg.svd(E, full_matrices=full)
            for g, r in zip(got, ref):
                assert tuple(g.shape) == tuple(r.shape)
                assert (torch.from_numpy(g.numpy()) == r).all()
    for dt in (tn.float64, tn.float32):
        bad = tn.randn(200, 180, dtype=dt)
        bad[150, 170] = float("nan")
        with pytest.raises(Exception, match="svd"):
            tn.linalg.svd(bad)
        with pytest.raises(Exception, match="svd"):
            tn.linalg.svdvals(tn.full((160, 160), float("inf"), dtype=dt))


@needs_torch
def test_threads_same_bits_blocked():
    """panels, their GEMM updates and the blocked Q and P: 1 and 2 threads agree bit for bit"""
    torch.manual_seed(10)
    A, W = to_tn(torch.randn(513, 300, dtype=torch.float64)), to_tn(torch.randn(170, 400, dtype=torch.float64))
    F, G = to_tn(torch.randn(512, 512)), to_tn(torch.randn(200, 330))
    _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(A)) + tuple(tn.linalg.svd(W, full_matrices=True))
                                  + tuple(tn.linalg.svd(F)) + tuple(tn.linalg.svd(G)) + (tn.linalg.svdvals(F),))


@needs_torch
def test_gradients_blocked():
    """svd_backward on blocked factors: svdvals' gradient (U V^T) and a gauge-invariant loss
    of U and Vh (|U S Vh|^2 through the factors, |U_1 ⊗ U_1| the sign-free outer product)"""
    torch.manual_seed(11)
    A = torch.randn(170, 150, dtype=torch.float64)
    a = to_tn(A).requires_grad_()
    tn.linalg.svdvals(a).sum().backward()
    At = A.clone().requires_grad_()
    torch.linalg.svdvals(At).sum().backward()
    assert (torch.from_numpy(a.grad.numpy()) - At.grad).abs().max().item() < 1e-10

    def loss(lib, x):
        U, S, Vh = lib.linalg.svd(x, full_matrices=False)
        u, v = U[:, 0], Vh[0]
        return (lib.outer(u, u) ** 2).sum() + (lib.outer(v, v) * 0.5).sum() + (S ** 3).sum()
    b = to_tn(A).requires_grad_()
    loss(tn, b).backward()
    Bt = A.clone().requires_grad_()
    loss(torch, Bt).backward()
    assert (torch.from_numpy(b.grad.numpy()) - Bt.grad).abs().max().item() < 1e-8 * Bt.grad.abs().max().item()


@needs_torch
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32] if torch else [])
def test_two_large_clusters(dtype):
    """two clusters of 100 equal values: the bidiagonal QR's off-diagonal stalls at the big
    cluster's rounding noise, just above eps |B|; after 30 sweeps the threshold is dbdsqr's
    (before: 'failed to converge', torch's gesdd returns)"""
    torch.manual_seed(9)
    n = 200
    Q1, _ = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64))
    Q2, _ = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64))
    A = (Q1 @ torch.diag(torch.tensor([2.0] * 100 + [1e-3] * 100, dtype=torch.float64)) @ Q2.mT).to(dtype)
    _check(A)
    s = tn.linalg.svdvals(tn.tensor(A.numpy()))
    want = torch.linalg.svdvals(A)
    assert (torch.from_numpy(s.numpy()) - want).abs().max().item() <= 50 * torch.finfo(dtype).eps * 2


@needs_torch
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64] if torch else [])
def test_graded_rows_converge(dtype):
    """rows scaled down to 1e-15 (float32 once stalled the same way)"""
    torch.manual_seed(3)
    for n in (60, 90, 130):
        A = (torch.randn(n, n, dtype=torch.float64) * torch.logspace(0, -15, n, dtype=torch.float64)[:, None]).to(dtype)
        s = tn.linalg.svdvals(tn.tensor(A.numpy()))
        want = torch.linalg.svdvals(A.double())
        assert (torch.from_numpy(s.numpy()).double() - want).abs().max().item() <= 100 * torch.finfo(dtype).eps * want[0].item(), n
        _check(A)
