"""The SVD's LAPACK route (issue 26, speed): Golub-Kahan bidiagonalisation (gebd2), Q and P
formed (org2r), implicit-shift QR on the bidiagonal with each sweep's rotations applied
afterwards, split between threads; and getrf's batch split between threads (linalg.solve).

Checked: backward error |A - U S Vh| / |A| and orthogonality within a few n eps (LAPACK's
standard), S against torch's gesdd, on tall, wide and square inputs at sizes past the thread
split (so both the inline and the split passes run), full_matrices (Q's completion),
float32, batched, non-contiguous, rank-deficient, repeated, graded (1 .. 1e-12), zero and
1 x N / N x 1 matrices; the same bits at 1 and 2 threads (the parallel bodies split items,
not sums)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from opinfo_util import assert_close, tn, to_tn, torch  # noqa: E402

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
EPS = 2.220446049250313e-16
EPS32 = 1.1920928955078125e-07
# Against a TENSOR_LAPACK library (make lapack-check sets TENSOR_TEST_LAPACK=1) the SVD is
# LAPACK's gesdd, whose svdvals (jobz 'N') and svd (jobz 'S') take different paths, as in
# PyTorch: equal to rounding there, not bit for bit as the built-in kernels' (tested here).
LAPACK = os.environ.get("TENSOR_TEST_LAPACK") == "1"


def same_values(Sv, S, tol):
    """svdvals' values against svd's: bit for bit (built-in), within tol (LAPACK)"""
    return (abs(Sv - S) <= tol).all() if LAPACK else (Sv == S).all()


def _same_bits_at_1_and_2_threads(run):
    """run() (a tuple of tensors) at 1 and at 2 threads: the same bits; both results"""
    before = tn.get_num_threads()
    try:
        out = []
        for t in (1, 2):
            tn.set_num_threads(t)
            out.append(run())
        for x, y in zip(out[0], out[1]):
            assert (x.numpy() == y.numpy()).all()
    finally:
        tn.set_num_threads(before)
    return out


def _check(A, full=False, tol=8):
    """A torch float64 (float32) [..., m, n]: ours' U S Vh against the backward error and
    orthogonality bounds at the dtype's eps, S against torch.linalg.svdvals."""
    a = to_tn(A)
    eps = EPS if A.dtype == torch.float64 else EPS32
    m, n = A.shape[-2:]
    k = min(m, n)
    U, S, Vh = tn.linalg.svd(a, full_matrices=full)
    assert tuple(U.shape) == tuple(A.shape[:-2]) + ((m, m) if full else (m, k))
    assert tuple(Vh.shape) == tuple(A.shape[:-2]) + ((n, n) if full else (k, n))
    big = max(m, n, 1)
    scale = max(A.abs().max().item(), 1e-300)
    R = (U[..., :, :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]
    assert (a - R).abs().max().item() / scale < tol * big * eps
    for Q in (U.mT @ U, Vh @ Vh.mT):
        assert (Q - tn.eye(Q.shape[-1], dtype=Q.dtype)).abs().max().item() < tol * big * eps
    assert S.dtype == U.dtype == Vh.dtype == a.dtype
    Sv = S.numpy()
    assert_close(S, torch.linalg.svdvals(A.double()).to(A.dtype), "svdvals", 0, tol * big * eps * scale)
    assert all((Sv[..., :-1] >= Sv[..., 1:]).reshape(-1)), "descending"
    assert same_values(tn.linalg.svdvals(a).numpy(), Sv, tol * big * eps * scale), "svdvals = svd's S"
    return U, S, Vh


@needs_torch
@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (2, 2), (63, 63), (64, 65), (65, 64), (130, 40), (40, 130), (150, 150)])
def test_shapes(shape):
    torch.manual_seed(sum(shape))
    A = torch.randn(*shape, dtype=torch.float64)
    _check(A)
    _check(A, full=True)


@needs_torch
def test_batched_noncontiguous_float32():
    torch.manual_seed(3)
    A = torch.randn(3, 2, 30, 20, dtype=torch.float64)
    _check(A)
    _check(A.mT, full=True)
    At = torch.randn(40, 30, dtype=torch.float64).mT   # non-contiguous input
    _check(At)
    F = torch.randn(2, 50, 33)
    U, S, Vh = tn.linalg.svd(to_tn(F), full_matrices=False)
    assert str(S.dtype).endswith("float32") and str(U.dtype).endswith("float32")
    assert_close(S, torch.linalg.svdvals(F), "svdvals float32", 1e-5, 1e-5)
    R = (U * S.unsqueeze(-2)) @ Vh
    assert (R - to_tn(F)).abs().max().item() < 1e-5


@needs_torch
def test_degenerate():
    torch.manual_seed(4)
    Q1, _ = torch.linalg.qr(torch.randn(70, 70, dtype=torch.float64))
    Q2, _ = torch.linalg.qr(torch.randn(70, 70, dtype=torch.float64))
    cases = {
        "rank 3": torch.randn(70, 3, dtype=torch.float64) @ torch.randn(3, 50, dtype=torch.float64),
        "repeated": 3 * Q1,   # every singular value 3
        "two clusters": Q1 @ torch.diag(torch.tensor([2.0] * 35 + [1e-3] * 35, dtype=torch.float64)) @ Q2.mT,
        "graded": Q1 @ torch.diag(torch.logspace(0, -12, 70, dtype=torch.float64)) @ Q2.mT,
        "zero": torch.zeros(20, 30, dtype=torch.float64),
        "identity": torch.eye(40, dtype=torch.float64),
        "diagonal": torch.diag(torch.tensor([0.0, 5.0, -2.0, 0.0, 1.0], dtype=torch.float64)),
        "one column nonzero": torch.cat([torch.zeros(25, 4, dtype=torch.float64), torch.randn(25, 1, dtype=torch.float64)], 1),
    }
    for name, A in cases.items():
        for full in (False, True):
            try:
                _check(A, full)
            except AssertionError as e:
                raise AssertionError(f"{name} full={full}: {e}") from e
    _, S, _ = tn.linalg.svd(to_tn(cases["rank 3"]))
    assert (S.numpy()[3:] < 1e-13 * S.numpy()[0]).all()
    for shape in ((0, 0), (3, 0), (0, 4)):
        E = torch.zeros(*shape, dtype=torch.float64)
        for full in (False, True):
            got, ref = tn.linalg.svd(to_tn(E), full_matrices=full), torch.linalg.svd(E, full_matrices=full)
            for g, r in zip(got, ref):
                assert tuple(g.shape) == tuple(r.shape)
            if full:   # torch's U, Vh are identities for an empty factor
                assert_close(got[0], ref[0], "U empty", 0, 0)
                assert_close(got[2], ref[2], "Vh empty", 0, 0)


@needs_torch
def test_bad_input():
    with pytest.raises(Exception, match="svd"):
        tn.linalg.svd(tn.full((4, 4), float("nan")))
    with pytest.raises(Exception, match="svd"):
        tn.linalg.svd(tn.ones(5))


@needs_torch
def test_threads_same_bits():
    """The parallel passes split rows, columns or matrices (never a sum): 1 and 2 threads agree
    (svd, solve, and eigh's deferred QL rotations)."""
    torch.manual_seed(5)
    A = to_tn(torch.randn(300, 260, dtype=torch.float64))
    As = to_tn(torch.randn(64, 64, 64, dtype=torch.float64) + 8 * torch.eye(64, dtype=torch.float64))
    Bs = to_tn(torch.randn(64, 64, 1, dtype=torch.float64))
    X = torch.randn(300, 300, dtype=torch.float64)
    Sym = to_tn(X + X.mT)   # eigh's QL rotations: columns split the same way
    _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(A)) + (tn.linalg.solve(As, Bs),) + tuple(tn.linalg.eigh(Sym)))


@needs_torch
def test_batched_solve():
    torch.manual_seed(6)
    A = torch.randn(64, 64, 64, dtype=torch.float64) + 8 * torch.eye(64, dtype=torch.float64)
    B = torch.randn(64, 64, 1, dtype=torch.float64)
    assert_close(tn.linalg.solve(to_tn(A), to_tn(B)), torch.linalg.solve(A, B), "solve", 1e-10, 1e-12)
    assert_close(tn.linalg.solve(to_tn(A.float()), to_tn(B.float())), torch.linalg.solve(A.float(), B.float()), "solve f32", 1e-4, 1e-5)
    assert_close(tn.linalg.solve(to_tn(A.mT), to_tn(B)), torch.linalg.solve(A.mT, B), "solve A^T", 1e-10, 1e-12)
    S = A.clone()
    S[5] = 0
    with pytest.raises(Exception, match=r"Batch element 5"):
        tn.linalg.solve(to_tn(S), to_tn(B))


# float32 runs the same algorithm in float32 (sgesvd's accuracy, not float64's rounded): the
# bounds are float32 eps's, on the shapes around the thread split and the degenerate cases.
@needs_torch
@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (2, 2), (63, 63), (64, 65), (65, 64), (130, 40), (40, 130), (150, 150), (2, 3, 17, 9)])
def test_float32_shapes(shape):
    torch.manual_seed(sum(shape) + 1)
    A = torch.randn(*shape)
    _check(A)
    _check(A, full=True)
    _check(A.mT)   # non-contiguous


@needs_torch
def test_float32_degenerate():
    torch.manual_seed(7)
    Q1, _ = torch.linalg.qr(torch.randn(70, 70, dtype=torch.float64))
    Q2, _ = torch.linalg.qr(torch.randn(70, 70, dtype=torch.float64))
    cases = {
        "rank 3": torch.randn(70, 3) @ torch.randn(3, 50),
        "repeated": (3 * Q1).float(),
        "two clusters": (Q1 @ torch.diag(torch.tensor([2.0] * 35 + [1e-3] * 35, dtype=torch.float64)) @ Q2.mT).float(),
        "graded": (Q1 @ torch.diag(torch.logspace(0, -6, 70, dtype=torch.float64)) @ Q2.mT).float(),
        "zero": torch.zeros(20, 30),
        "identity": torch.eye(40),
        "tiny": torch.randn(30, 20) * 1e-30,
        "huge": torch.randn(20, 30) * 1e30,
    }
    for name, A in cases.items():
        for full in (False, True):
            try:
                _check(A, full)
            except AssertionError as e:
                raise AssertionError(f"{name} full={full}: {e}") from e
    _, S, _ = tn.linalg.svd(to_tn(cases["rank 3"]))
    assert (S.numpy()[3:] < 1e-5 * S.numpy()[0]).all()
    # S of float32 input is float32's own: within float32 rounding of torch's (sgesdd)
    A = torch.randn(200, 120)
    assert_close(tn.linalg.svdvals(to_tn(A)), torch.linalg.svdvals(A), "svdvals f32", 0, 200 * EPS32 * 30)


@needs_torch
def test_float32_threads_same_bits():
    torch.manual_seed(8)
    A, W = to_tn(torch.randn(300, 260)), to_tn(torch.randn(100, 240))
    _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(A)) + tuple(tn.linalg.svd(W, full_matrices=False)))


@needs_torch
def test_complex_threads_same_bits_and_bounds():
    """complex SVD (gebd2_c, then the real QR's rotations split by columns): the same bits at
    1 and 2 threads; backward error and unitarity within a few n eps past the thread split"""
    torch.manual_seed(9)
    A = torch.randn(140, 90, dtype=torch.complex128)
    out = _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(to_tn(A))) + tuple(tn.linalg.svd(to_tn(A.mH), full_matrices=False)))
    U, S, Vh = (torch.from_numpy(x.numpy()) for x in out[0][:3])
    R = (U[:, :90] * S) @ Vh
    assert (R - A).abs().max() < 8 * 140 * EPS * A.abs().max()
    assert (U.mH @ U - torch.eye(140, dtype=U.dtype)).abs().max() < 8 * 140 * EPS
    assert (S - torch.linalg.svdvals(A)).abs().max() < 8 * 140 * EPS * S[0]
    # extreme scales: scaled by a power of 2 first, as the real path
    for sc in (1e-200, 1e200):
        S2 = tn.linalg.svdvals(to_tn(A[:20, :10] * sc)).numpy()
        ref = torch.linalg.svdvals(A[:20, :10]).numpy() * sc
        assert abs(S2 / ref - 1).max() < 1e-13


@needs_torch
def test_complex_degenerate():
    """complex: repeated, rank-deficient, zero, i I and graded inputs keep the bounds"""
    torch.manual_seed(2)
    Q, _ = torch.linalg.qr(torch.randn(50, 50, dtype=torch.complex128))
    cases = {"repeated": 3 * Q,
             "rank 3": torch.randn(50, 3, dtype=torch.complex128) @ torch.randn(3, 40, dtype=torch.complex128),
             "zero": torch.zeros(10, 7, dtype=torch.complex128), "i I": 1j * torch.eye(6, dtype=torch.complex128),
             "graded": Q @ torch.diag(torch.logspace(0, -12, 50, dtype=torch.float64)).to(torch.complex128) @ Q.mH}
    known = {"repeated": torch.full((50,), 3.0, dtype=torch.float64), "zero": torch.zeros(7, dtype=torch.float64),
             "i I": torch.ones(6, dtype=torch.float64), "graded": torch.logspace(0, -12, 50, dtype=torch.float64)}
    for name, A in cases.items():
        for full in (False, True):
            U, S, Vh = (torch.from_numpy(x.numpy()) for x in tn.linalg.svd(to_tn(A), full_matrices=full))
            k, big = S.shape[-1], max(A.shape)
            scale = max(A.abs().max().item(), 1e-300)
            assert ((U[:, :k] * S) @ Vh[:k] - A).abs().max() <= 8 * big * EPS * scale, name
            assert (U.mH @ U - torch.eye(U.shape[1])).abs().max() <= 8 * big * EPS, name
            assert (Vh @ Vh.mH - torch.eye(Vh.shape[0])).abs().max() <= 8 * big * EPS, name
            # S: nonnegative, descending, and the cases' known values (with U, Vh orthonormal and
            # U S Vh = A above, that is the SVD; torch's own svdvals is not called here: under
            # the sanitizer suite's preloaded ASan it crashed intermittently inside torch)
            assert (S >= 0).all() and (S[:-1] >= S[1:]).all(), name
            if name in known:
                assert (S - known[name]).abs().max() <= 8 * big * EPS * scale, name


def _complex_svd_bounds(A, full, tol=8):
    """ours' complex U S Vh of the torch complex A [..., m, n]: shapes, backward error and
    unitarity within tol max(m, n) eps, S against torch.linalg.svdvals"""
    eps = EPS if A.dtype == torch.complex128 else EPS32
    m, n = A.shape[-2:]
    k, big = min(m, n), max(m, n, 1)
    U, S, Vh = (torch.from_numpy(x.numpy()) for x in tn.linalg.svd(to_tn(A), full_matrices=full))
    assert U.dtype == A.dtype and Vh.dtype == A.dtype and S.dtype == A.real.dtype
    assert U.shape == A.shape[:-2] + ((m, m) if full else (m, k)) and Vh.shape == A.shape[:-2] + ((n, n) if full else (k, n))
    if A.numel() == 0:
        return
    scale = A.abs().max().item()
    R = (U[..., :, :k] * S.unsqueeze(-2).to(A.dtype)) @ Vh[..., :k, :]
    assert (R - A).abs().max().item() <= tol * big * eps * scale
    for Q in (U.mH @ U, Vh @ Vh.mH):
        assert (Q - torch.eye(Q.shape[-1], dtype=Q.dtype)).abs().max().item() <= tol * big * eps
    assert (S.double() - torch.linalg.svdvals(A.to(torch.complex128))).abs().max().item() <= tol * big * eps * S.max().item()
    Sv = torch.from_numpy(tn.linalg.svdvals(to_tn(A)).numpy())
    assert same_values(Sv, S, tol * big * eps * S.max().item()), "svdvals = svd's S"


@needs_torch
@pytest.mark.parametrize("shape", [(200, 150), (150, 260), (129, 129), (64 * 3, 64 * 2), (2, 130, 140), (300, 1), (1, 300)])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_blocked_edges(shape, dtype):
    """the complex SVD's blocked back-transformation (ungqr_t_c, 64 reflectors a block through
    the GEMM, taken once k >= 128): k not a multiple of the block, exactly a multiple, tall,
    wide, batched, a single row or column; reduced and full"""
    torch.manual_seed(sum(shape))
    A = torch.randn(*shape, dtype=getattr(torch, dtype))
    for full in (False, True):
        _complex_svd_bounds(A, full)


@needs_torch
def test_complex_blocked_noncontiguous_and_empty():
    """non-contiguous complex input (a transpose and a strided slice) equals its contiguous
    copy's SVD bit for bit; 0-size batches and matrices give empty factors of the right shape"""
    torch.manual_seed(4)
    base = torch.randn(2, 300, 280, dtype=torch.complex128)
    a = to_tn(base)
    for view, tv in ((base.mT, a.transpose(-2, -1)), (base[:, ::2, 1:], a[:, ::2, 1:])):
        assert not tv.is_contiguous()
        got = tn.linalg.svd(tv)
        ref = tn.linalg.svd(tv.contiguous())
        for x, y in zip(got, ref):
            assert (x.numpy() == y.numpy()).all()
        _complex_svd_bounds(view, False)
    for shape in ((0, 5, 4), (3, 0, 4), (3, 4, 0), (0, 0)):
        _complex_svd_bounds(torch.zeros(*shape, dtype=torch.complex128), True)
        _complex_svd_bounds(torch.zeros(*shape, dtype=torch.complex64), False)


@needs_torch
def test_complex_blocked_threads_same_bits():
    """past the block size (k = 160): the same bits at 1 and 2 threads (the GEMM and the row
    passes split items, not sums), and the gradient of svdvals matches torch's"""
    torch.manual_seed(12)
    A = torch.randn(170, 160, dtype=torch.complex128)
    _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(to_tn(A))) + (tn.linalg.svdvals(to_tn(A.mH)),))
    a = to_tn(A).requires_grad_()
    tn.linalg.svdvals(a).sum().backward()
    At = A.clone().requires_grad_()
    torch.linalg.svdvals(At).sum().backward()
    assert (torch.from_numpy(a.grad.numpy()) - At.grad).abs().max().item() < 1e-10


# complex64 runs the complex SVD in single precision (cgesdd's precision: gebd2, the QR and
# the blocked reflectors in float32; the reflectors' scalars in double), not in complex128
# rounded at the end: the bounds are float32 eps's.
@needs_torch
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (1, 9), (9, 1), (63, 63), (64, 65), (65, 64), (127, 130), (129, 128),
                                   (200, 64), (64, 200), (2, 3, 17, 9), (3, 140, 129)])
def test_complex64_shapes(shape):
    """n not a multiple of the 64-reflector block, exactly a multiple, tall, wide, batched; the
    non-contiguous transpose; reduced and full"""
    torch.manual_seed(sum(shape) + 3)
    A = torch.randn(*shape, dtype=torch.complex64)
    for full in (False, True):
        _complex_svd_bounds(A, full)
    _complex_svd_bounds(A.mT, False)
    _complex_svd_bounds(A.conj().mT, True)


@needs_torch
def test_complex64_single_precision():
    """S is float32's own (within a few n float32 eps of torch's cgesdd), and the factors
    are complex64; the result is not complex128's rounded (the loop runs in float32)"""
    torch.manual_seed(21)
    A = torch.randn(180, 150, dtype=torch.complex64)
    U, S, Vh = tn.linalg.svd(to_tn(A), full_matrices=False)
    assert str(U.dtype).endswith("complex64") and str(S.dtype).endswith("float32")
    assert_close(S, torch.linalg.svdvals(A), "svdvals c64 vs cgesdd", 0, 8 * 180 * EPS32 * 30)
    S128 = tn.linalg.svdvals(to_tn(A.to(torch.complex128))).numpy().astype("float32")
    assert (S.numpy() != S128).any(), "complex64 computed in complex128"


@needs_torch
def test_complex64_degenerate():
    """rank-deficient, repeated, clustered, graded, zero, i I, tiny and huge (scaled by a
    power of 2 first: float32's thresholds) keep float32's bounds"""
    torch.manual_seed(22)
    Q1, _ = torch.linalg.qr(torch.randn(70, 70, dtype=torch.complex128))
    Q2, _ = torch.linalg.qr(torch.randn(70, 70, dtype=torch.complex128))
    dg = lambda v: torch.diag(torch.tensor(v, dtype=torch.float64)).to(torch.complex128)  # noqa: E731
    cases = {
        "rank 3": torch.randn(70, 3, dtype=torch.complex64) @ torch.randn(3, 50, dtype=torch.complex64),
        "repeated": (3 * Q1).to(torch.complex64),
        "two clusters": (Q1 @ dg([2.0] * 35 + [1e-3] * 35) @ Q2.mH).to(torch.complex64),
        "graded": (Q1 @ dg(torch.logspace(0, -6, 70).tolist()) @ Q2.mH).to(torch.complex64),
        "zero": torch.zeros(20, 30, dtype=torch.complex64),
        "i I": 1j * torch.eye(40, dtype=torch.complex64),
        "tiny": torch.randn(30, 20, dtype=torch.complex64) * 1e-30,
        "huge": torch.randn(20, 30, dtype=torch.complex64) * 1e30,
    }
    for name, A in cases.items():
        for full in (False, True):
            try:
                _complex_svd_bounds(A, full)
            except AssertionError as e:
                raise AssertionError(f"{name} full={full}: {e}") from e
    S = tn.linalg.svdvals(to_tn(cases["rank 3"])).numpy()
    assert (S[3:] < 1e-5 * S[0]).all()
    for name in ("repeated", "i I"):
        S = tn.linalg.svdvals(to_tn(cases[name])).numpy()
        assert abs(S - S[0]).max() < 8 * 70 * EPS32 * S[0] and abs(S[0] - (3 if name == "repeated" else 1)) < 1e-5


@needs_torch
def test_complex64_threads_same_bits_and_grads():
    """past the block size: the same bits at 1 and 2 threads; the gradients of svdvals and of
    a gauge-invariant loss of U, S, Vh against torch's (complex64)"""
    torch.manual_seed(23)
    A = torch.randn(170, 160, dtype=torch.complex64)
    _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(to_tn(A))) + (tn.linalg.svdvals(to_tn(A.mH)),))
    B = torch.randn(12, 9, dtype=torch.complex64)
    for f in (lambda M, x: M.linalg.svdvals(x).sum(),
              lambda M, x: (lambda u, s, vh: (u @ vh).real.sum() + (u * s).abs().sum())(*M.linalg.svd(x, full_matrices=False))):
        a = to_tn(B).requires_grad_()
        f(tn, a).backward()
        b = B.clone().requires_grad_()
        f(torch, b).backward()
        assert_close(a.grad, b.grad, "complex64 grad", 1e-3, 1e-3)


@needs_torch
def test_complex64_bad_input():
    """NaN: torch's error (LAPACK fails on it); inf: an error too (torch 1.13's cgesdd returns
    NaN after LAPACK's 'SLASCL parameter 4 had an illegal value': ours refuses it cleanly);
    a 1-d input: a clear error, not a crash"""
    for v in (float("nan"), float("inf"), float("-inf")):
        A = torch.randn(5, 4, dtype=torch.complex64)
        A[2, 1] = complex(0, v) if v != v else complex(v, 0)
        for f in (tn.linalg.svd, tn.linalg.svdvals):
            with pytest.raises(RuntimeError, match="non-finite"):
                f(to_tn(A))
    with pytest.raises(RuntimeError):
        tn.linalg.svd(to_tn(torch.randn(5, dtype=torch.complex64)))


@needs_torch
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_gebrd_panels(dtype):
    """the blocked bidiagonalisation (zgebrd: 32-step panels while more than 128 columns
    remain, the trailing update by GEMMs, gebd2 for the rest): several panels, tall and wide,
    reduced and full; exactly zero columns and an all-zero matrix (reflectors with tau = 0
    inside a panel); low rank; the same bits at 1 and 2 threads"""
    torch.manual_seed(31)
    dt = getattr(torch, dtype)
    A = torch.randn(400, 300, dtype=dt)
    for M in (A, A.mH, torch.randn(2, 161, 170, dtype=dt)):
        for full in (False, True):
            _complex_svd_bounds(M, full)
    Z = A.clone()
    Z[:, 40:200] = 0   # columns of zeros: H = I inside the first panels
    _complex_svd_bounds(Z, False)
    _complex_svd_bounds(torch.zeros(300, 260, dtype=dt), True)
    L = torch.randn(300, 7, dtype=dt) @ torch.randn(7, 290, dtype=dt)
    _complex_svd_bounds(L, False)
    S = tn.linalg.svdvals(to_tn(L)).numpy()
    assert (S[7:] < 1e-5 * S[0]).all()
    _same_bits_at_1_and_2_threads(lambda: tuple(tn.linalg.svd(to_tn(A), full_matrices=False)) + (tn.linalg.svdvals(to_tn(A.mH)),))
