"""torch.linalg's decompositions (issue 26, item 3): qr, eigh, eigvalsh, svd, svdvals and what
is built on them (pinv, matrix_rank, lstsq, cond) and the old names (torch.qr, torch.svd,
torch.pinverse, torch.geqrf), against PyTorch's own test database and against torch directly.

The OpInfo run reuses test_ops_elementwise_linalg's harness (every sample of the entry for
float64 with gradients and float32, odd samples as non-contiguous views, error inputs). The
eigenvectors and singular vectors are defined up to sign: for eigh and svd both sides' results
go through the same sign fix (each column's sign chosen so that a fixed positive combination of
its entries is positive; sign() has a zero gradient), which is what PyTorch's own tests do
with their gauge-invariant wrappers; full_matrices' extra columns (any basis of the
complement) are compared through their projector.

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_linalg_decomp.py
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
from opinfo_util import np  # noqa: E402

torch = H.torch
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

# entries whose results are unique: values compared as they are
OPS = """
linalg.qr qr geqrf linalg.eigvalsh linalg.svdvals linalg.pinv linalg.pinv:singular linalg.pinv:hermitian pinverse
linalg.matrix_rank linalg.matrix_rank:hermitian linalg.lstsq linalg.lstsq:grad_oriented linalg.cond
""".split()


def _pinv_f32(s):
    """float32 pinv: ours factors in float64 and rounds once, torch's LAPACK works in float32;
    on the samples' ill-conditioned matrices their difference reaches ~2e-5 relative."""
    return (1e-4, 1e-4) if s.input.dtype == torch.float32 else None


if torch is not None:
    H.LOOSE["linalg.pinv"] = _pinv_f32


@needs_torch
@pytest.mark.parametrize("spec", OPS)
def test_opinfo(spec):
    passed, total, failures = H.check_op(spec)
    assert total > 0
    assert not failures, f"{spec}: {passed}/{total} passed\n" + "\n".join(failures[:20])


def _fix(V):
    """V's columns with a sign each: w . column > 0 for w = (1, 2, ..., m) (any fixed positive w)."""
    m = V.shape[-2]
    w = (V.new_ones(m).cumsum(0) if hasattr(V, "new_ones") else None)
    s = (w.unsqueeze(-1) * V).sum(-2, keepdim=True).sign()
    return V * s, s


def _svd_gauge(U, S, Vh):
    """(U[:, :k] signed, S, Vh[:k] signed, the projector onto U's other columns, Vh's other rows'),
    the parts of an SVD that do not depend on the gauge."""
    k = S.shape[-1]
    Uk, s = _fix(U[..., :k])
    Vk = Vh[..., :k, :] * s.mT
    Ur, Vr = U[..., k:], Vh[..., k:, :]
    return Uk, S, Vk, Ur @ Ur.mT, Vr.mT @ Vr


GAUGED = {
    # OpInfo name -> (the function of the op's result both sides compare)
    "linalg.eigh": lambda r: (r[0], _fix(r[1])[0]),
    "linalg.svd": lambda r: _svd_gauge(*r),
    "svd": lambda r: _svd_gauge(r[0], r[1], r[2].mT),
}


@needs_torch
@pytest.mark.parametrize("spec", sorted(GAUGED))
def test_opinfo_gauge_invariant(spec):
    op = H._find(spec)
    g = GAUGED[spec]
    ours_op = H.ours_callable(op)
    ref = types.SimpleNamespace(op=lambda *a, **k: g(op.op(*a, **k)), name=op.name)
    ours = lambda *a, **k: g(ours_op(*a, **k))   # noqa: E731
    total, failures = 0, []
    for k, (s, grad) in enumerate(H._samples(op)):
        total += 1
        f32 = s.input.dtype == torch.float32
        try:
            run_sample(ref, ours, s, f"{spec} sample {k}", noncontig=k % 2 == 1, check_grad=grad,
                       tol=(1e-4, 1e-4) if f32 else (1e-7, 1e-7), grad_tol=(1e-6, 1e-6))
        except Exception as e:   # noqa: BLE001
            failures.append(f"sample {k} {tuple(s.input.shape)} args={s.args!r:.60} kwargs={s.kwargs!r:.60}: {str(e)[:300]}")
    assert total > 0
    assert not failures, f"{spec}: {total - len(failures)}/{total} passed\n" + "\n".join(failures[:20])


def _backward_error(A, *factors):
    return (A - factors[0]).abs().max().item() / max(A.abs().max().item(), 1e-300)


@needs_torch
def test_accuracy_lapack_standard():
    """Backward errors |A - factors| / |A| and orthogonality within a few n eps, as LAPACK's."""
    torch.manual_seed(0)
    eps = 2.220446049250313e-16
    for shape in ((64, 64), (80, 30), (30, 80), (4, 17, 9)):
        A = torch.randn(*shape, dtype=torch.float64)
        a = H.to_tn(A)
        n = max(shape[-2:])
        Q, R = tn.linalg.qr(a)
        assert _backward_error(a, Q @ R) < 4 * n * eps
        assert (Q.mT @ Q - tn.eye(Q.shape[-1], dtype=tn.float64)).abs().max().item() < 4 * n * eps
        U, S, Vh = tn.linalg.svd(a, full_matrices=False)
        assert _backward_error(a, (U * S.unsqueeze(-2)) @ Vh) < 8 * n * eps
        k = S.shape[-1]
        assert (U.mT @ U - tn.eye(k, dtype=tn.float64)).abs().max().item() < 8 * n * eps
        assert (Vh @ Vh.mT - tn.eye(k, dtype=tn.float64)).abs().max().item() < 8 * n * eps
        H.assert_close(S, torch.linalg.svdvals(A), "svdvals", 1e-12, 1e-12)
    X = torch.randn(3, 50, 50, dtype=torch.float64)
    Sy = X + X.mT
    L, V = tn.linalg.eigh(H.to_tn(Sy))
    s = H.to_tn(Sy)
    assert _backward_error(s, (V * L.unsqueeze(-2)) @ V.mT) < 8 * 50 * eps
    H.assert_close(L, torch.linalg.eigvalsh(Sy), "eigvalsh", 1e-12, 1e-12)


@needs_torch
@pytest.mark.parametrize("threads", [1, 2])
def test_eigvalsh_sterf_and_symv(threads):
    """eigvalsh's values-only path (dsterf on sytrd's tridiagonal) against torch's, within n eps
    of the largest eigenvalue, sorted: sizes around the blocking and the symv's four-column
    groups (odd sizes, m >= 160 split over 2 threads), badly scaled (1e+-200: sterf's block
    scaling), graded, zero, rank-one, diagonal and (eigh's vectors path) the same sytrd."""
    eps = 2.220446049250313e-16
    rng = np.random.default_rng(0)
    old = tn.get_num_threads()
    tn.set_num_threads(threads)
    try:
        for n in (1, 2, 3, 5, 33, 67, 161, 230):
            a = rng.standard_normal((n, n))
            a = a + a.T
            g = np.logspace(-6, 6, n)
            for x in (a, a * 1e200, a * 1e-200, a * g[:, None] * g[None, :], np.zeros((n, n)), np.ones((n, n)),
                      np.diag(rng.standard_normal(n))):
                L = torch.linalg.eigvalsh(torch.tensor(x)).numpy()
                l = np.array(tn.linalg.eigvalsh(tn.tensor(x)).tolist())
                scale = max(np.abs(L).max(), 1e-300)
                assert np.abs(l - L).max() <= 4 * n * eps * scale, (n, np.abs(l - L).max() / scale)
                assert np.all(np.diff(l) >= 0)
            lv, V = tn.linalg.eigh(tn.tensor(a))
            r = np.abs(a @ np.array(V.tolist()) - np.array(V.tolist()) * np.array(lv.tolist())).max() / np.abs(a).max()
            assert r < 8 * n * eps, r
    finally:
        tn.set_num_threads(old)


@needs_torch
def test_values_against_torch():
    torch.manual_seed(1)
    # QR follows LAPACK's reflector signs: Q and R equal torch's, every mode, batched, transposed
    A = torch.randn(2, 3, 7, 5, dtype=torch.float64).mT
    a = H.to_tn(A)
    for mode in ("reduced", "complete", "r"):
        H.assert_close(tuple(tn.linalg.qr(a, mode)), tuple(torch.linalg.qr(A, mode)), f"qr {mode}")
    H.assert_close(tuple(tn.qr(a, some=False)), tuple(torch.qr(A, some=False)), "torch.qr")
    H.assert_close(tuple(tn.geqrf(a)), tuple(torch.geqrf(A)), "geqrf")
    H.assert_close(tuple(a.qr()), tuple(A.qr()), "Tensor.qr")
    # repeated eigenvalues / singular values: the values, and the invariant subspaces
    D = torch.diag(torch.tensor([1., 1., 2., 2., 2.], dtype=torch.float64))
    Qr, _ = torch.linalg.qr(torch.randn(5, 5, dtype=torch.float64))
    M = Qr @ D @ Qr.mT
    L, V = tn.linalg.eigh(H.to_tn(M))
    H.assert_close(L, torch.linalg.eigvalsh(M), "eigh repeated", 1e-13, 1e-13)
    P1 = V[:, :2] @ V[:, :2].mT
    Pt = Qr[:, :2] @ Qr[:, :2].mT
    H.assert_close(P1, Pt, "eigenspace projector", 1e-12, 1e-12)
    H.assert_close(tn.linalg.svdvals(H.to_tn(M)), torch.linalg.svdvals(M), "svdvals repeated", 1e-13, 1e-13)
    # rank-deficient, 0-size, float32, UPLO
    R = torch.randn(6, 2, dtype=torch.float64) @ torch.randn(2, 5, dtype=torch.float64)
    assert tn.linalg.matrix_rank(H.to_tn(R)).item() == torch.linalg.matrix_rank(R).item() == 2
    H.assert_close(tn.linalg.pinv(H.to_tn(R)), torch.linalg.pinv(R), "pinv rank 2", 1e-10, 1e-10)
    for shape in ((0, 0), (3, 0), (0, 4), (2, 0, 0)):
        E = torch.zeros(*shape, dtype=torch.float64)
        H.assert_close(tn.linalg.svdvals(H.to_tn(E)), torch.linalg.svdvals(E), f"svdvals {shape}")
        H.assert_close(tn.linalg.pinv(H.to_tn(E)), torch.linalg.pinv(E), f"pinv {shape}")
        H.assert_close(tuple(tn.linalg.qr(H.to_tn(E))), tuple(torch.linalg.qr(E)), f"qr {shape}")
    F = torch.randn(6, 6)
    H.assert_close(tn.linalg.eigvalsh(H.to_tn(F), UPLO="U"), torch.linalg.eigvalsh(F, UPLO="U"), "eigvalsh U float32", 1e-5, 1e-5)
    H.assert_close(tn.linalg.svdvals(H.to_tn(F)), torch.linalg.svdvals(F), "svdvals float32", 1e-5, 1e-5)
    # lstsq's drivers: what each reports
    A = torch.randn(2, 6, 3, dtype=torch.float64)
    B = torch.randn(2, 6, 2, dtype=torch.float64)
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        got, ref = tn.linalg.lstsq(H.to_tn(A), H.to_tn(B), driver=driver), torch.linalg.lstsq(A, B, driver=driver)
        H.assert_close(tuple(got), tuple(ref), f"lstsq driver={driver}", 1e-10, 1e-10)
    # B as a batch of vectors (B.ndim == A.ndim - 1): residuals keep their [..., 1]
    v = torch.randn(2, 6, dtype=torch.float64)
    for driver in (None, "gelsd"):
        got, ref = tn.linalg.lstsq(H.to_tn(A), H.to_tn(v), driver=driver), torch.linalg.lstsq(A, v, driver=driver)
        H.assert_close(tuple(got), tuple(ref), f"lstsq vectors driver={driver}", 1e-10, 1e-10)
    # cond's ords
    C = torch.randn(3, 4, 4, dtype=torch.float64)
    for p in (None, 2, -2, 1, -1, float("inf"), float("-inf"), "fro", "nuc"):
        H.assert_close(tn.linalg.cond(H.to_tn(C), p), torch.linalg.cond(C, p), f"cond {p}", 1e-10, 1e-10)
    Sg = torch.tensor([[1., 2.], [2., 4.]], dtype=torch.float64)
    for p in (1, "fro"):
        H.assert_close(tn.linalg.cond(H.to_tn(Sg), p), torch.linalg.cond(Sg, p), f"cond singular {p}")


@needs_torch
def test_gradients_against_torch():
    """First and second derivatives against torch's, through gauge-invariant functions of
    the vectors (torch's formulas: linalg_qr_backward, linalg_eig_backward, svd_backward,
    pinv_backward; lstsq's is pinv's)."""
    torch.manual_seed(2)
    A = torch.randn(2, 5, 3, dtype=torch.float64)
    W = torch.randn(2, 3, 5, dtype=torch.float64)
    Sq = torch.randn(4, 4, dtype=torch.float64)
    B = torch.randn(2, 5, 2, dtype=torch.float64)
    sym = lambda x: x + x.mT   # noqa: E731
    cases = [
        (lambda m, a, w, s, b: m.linalg.qr(a)[0], "qr Q tall"),
        (lambda m, a, w, s, b: m.linalg.qr(a)[1], "qr R tall"),
        (lambda m, a, w, s, b: m.linalg.qr(w)[0], "qr Q wide"),
        (lambda m, a, w, s, b: m.linalg.qr(w)[1], "qr R wide"),
        (lambda m, a, w, s, b: m.linalg.qr(s, mode="complete")[0], "qr complete square"),
        (lambda m, a, w, s, b: m.linalg.eigh(sym(s))[0], "eigh L"),
        (lambda m, a, w, s, b: _fix(m.linalg.eigh(sym(s), UPLO="U")[1])[0], "eigh V"),
        (lambda m, a, w, s, b: m.linalg.eigvalsh(sym(s)), "eigvalsh"),
        (lambda m, a, w, s, b: _svd_gauge(*m.linalg.svd(a, full_matrices=False))[0], "svd U tall"),
        (lambda m, a, w, s, b: _svd_gauge(*m.linalg.svd(w, full_matrices=False))[2], "svd Vh wide"),
        (lambda m, a, w, s, b: _svd_gauge(*m.linalg.svd(a))[0], "svd U full"),
        (lambda m, a, w, s, b: m.linalg.svd(w)[1], "svd S"),
        (lambda m, a, w, s, b: m.linalg.svdvals(a), "svdvals"),
        (lambda m, a, w, s, b: m.svd(a)[1], "torch.svd S"),
        (lambda m, a, w, s, b: m.linalg.pinv(a), "pinv tall"),
        (lambda m, a, w, s, b: m.linalg.pinv(w), "pinv wide"),
        (lambda m, a, w, s, b: m.linalg.pinv(sym(s), hermitian=True), "pinv hermitian"),
        (lambda m, a, w, s, b: m.linalg.lstsq(a, b).solution, "lstsq"),
        (lambda m, a, w, s, b: m.linalg.cond(s), "cond"),
        (lambda m, a, w, s, b: m.linalg.cond(s, "nuc"), "cond nuc"),
    ]
    for f, what in cases:
        ts = [t.clone().requires_grad_() for t in (A, W, Sq, B)]
        ours = [H.to_tn(t.detach()).requires_grad_() for t in ts]
        ref = f(torch, *ts)
        got = f(tn, *ours)
        H.assert_close(got, ref.detach(), f"{what} value", 1e-10, 1e-10)
        w = torch.randn(ref.shape, dtype=torch.float64)
        g = torch.autograd.grad((ref * w).sum(), ts, create_graph=True, allow_unused=True)
        og = tn.autograd.grad((got * H.to_tn(w)).sum(), ours, create_graph=True, allow_unused=True)
        for i, (x, y) in enumerate(zip(og, g)):
            if y is not None:
                H.assert_close(x, y.detach(), f"{what} grad {i}", 1e-8, 1e-8)
        k = next(i for i, y in enumerate(g) if y is not None)
        gg = torch.autograd.grad(g[k].pow(2).sum(), ts[k])
        ogg = tn.autograd.grad(og[k].pow(2).sum(), ours[k])
        H.assert_close(ogg[0], gg[0], f"{what} double grad", 1e-6, 1e-6)


@needs_torch
def test_errors_as_torch():
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        tn.linalg.qr(tn.eye(2), mode="x")
    x = tn.randn(4, 3, dtype=tn.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q, which is not computed when mode='r'"):
        tn.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="The QR decomposition is not differentiable when mode='complete' and nrows > ncols"):
        tn.linalg.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        tn.linalg.eigh(tn.eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        tn.linalg.eigh(tn.zeros(2, 3))
    with pytest.raises(RuntimeError, match="failed to converge"):
        tn.linalg.eigh(tn.full((3, 3), float("nan")))
    with pytest.raises(RuntimeError, match="The algorithm failed to converge because the input matrix contained non-finite values"):
        tn.linalg.svd(tn.full((3, 3), float("inf")))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        tn.linalg.svd(tn.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        tn.linalg.svdvals(tn.ones(3, 3, dtype=tn.int64))
    with pytest.raises(RuntimeError, match=r"parameter `driver` should be one of \(gels, gelsy, gelsd, gelss\)"):
        tn.linalg.lstsq(tn.eye(3), tn.ones(3, 1), driver="gelsx")
    with pytest.raises(RuntimeError, match="only supported on CUDA"):
        tn.linalg.svd(tn.eye(3), driver="gesvd")
    with pytest.raises(RuntimeError, match="square matrices"):
        tn.linalg.cond(tn.ones(2, 3), "fro")
    # the return types as torch's
    r = tn.linalg.svd(tn.eye(3))
    assert type(r).__name__ == "linalg_svd" and r.Vh.shape == (3, 3)
    assert type(tn.svd(tn.eye(3))).__name__ == "svd" and tn.svd(tn.eye(3)).V.shape == (3, 3)
    assert tn.linalg.eigh(tn.eye(2)).eigenvectors.shape == (2, 2)
    assert tn.linalg.lstsq(tn.eye(3), tn.ones(3, 1)).rank.dtype == tn.int64
