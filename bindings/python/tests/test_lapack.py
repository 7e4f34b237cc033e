"""TENSOR_LAPACK (make lapack-check, which sets TENSOR_TEST_LAPACK=1 and loads
lib/libtensor_lapack.so): the CPU's factorizations are LAPACK's routines, the ones PyTorch's
CPU calls (torch 1.13: OpenBLAS's LAPACK, the same library in this process), so where both
call the same routine on the same column-major matrix the results are torch's bit for bit:
getrf (lu_factor, solve, inv), potrf('L') (cholesky), geqrf + orgqr (qr), syevd('L') (eigh,
eigvalsh), gesdd (svd, svdvals), geev (eig, eigvals), trsm (solve_triangular), ormqr; in
float32, float64, complex64 and complex128, batched and non-contiguous. Where the route
differs from torch's (cholesky's and eigh's upper triangle factored as the lower one of the
transpose; det from the LU's diagonal in float64; householder_product by ormqr on I rather
than orgqr; lstsq's gels as geqrf + ormqr + trsm; solve_triangular with left=False as a left
solve of the transposes) the results agree to rounding. Skipped
against a library built without TENSOR_LAPACK (its kernels are tested by test_linalg*.py)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from opinfo_util import tn, torch  # noqa: E402
from opinfo_util import to_tn as _to_tn  # noqa: E402


def to_tn(x):
    """ours with torch's layout: a transposed (column-major) batch stays one, as the routes
    (like torch's) depend on it (linalg.solve factors a contiguous A as A^T)"""
    if x.dim() >= 2 and not x.is_contiguous() and x.mT.is_contiguous():
        return _to_tn(x.mT.contiguous()).mT
    return _to_tn(x)

pytestmark = [pytest.mark.skipif(torch is None, reason="torch is not installed"),
              pytest.mark.skipif(os.environ.get("TENSOR_TEST_LAPACK") != "1", reason="the library is not a TENSOR_LAPACK build (make lapack-check)")]

DTYPES = ["float32", "float64", "complex64", "complex128"]


def T(x):
    return torch.from_numpy(x.numpy()) if x is not None else None


def rand(shape, dt, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=getattr(torch, dt), generator=g)


def same(ours, theirs, what):
    o = T(ours)
    assert o.dtype == theirs.dtype and o.shape == theirs.shape, f"{what}: {o.dtype} {tuple(o.shape)} vs {theirs.dtype} {tuple(theirs.shape)}"
    assert torch.equal(o, theirs), f"{what}: max |diff| {(o - theirs).abs().max().item()}"


def close(ours, theirs, what, k=50):
    o = T(ours)
    eps = torch.finfo(theirs.dtype).eps
    scale = max(theirs.abs().max().item(), 1.0)
    assert o.shape == theirs.shape, what
    assert (o - theirs).abs().max().item() <= k * eps * scale, f"{what}: max |diff| {(o - theirs).abs().max().item()}"


# square, batched, and a transposed (non-contiguous) batch
SQUARE = [(5, 5), (3, 6, 6), "T"]


def square(dt, case, seed=1):
    if case == "T":
        return rand((2, 7, 7), dt, seed).mT
    return rand(case, dt, seed)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", SQUARE)
def test_getrf_getrs(dt, case):
    A = square(dt, case)
    B = rand(A.shape[:-1] + (3,), dt, 2)
    LU, piv = torch.linalg.lu_factor(A)
    oLU, opiv = tn.linalg.lu_factor(to_tn(A))
    same(oLU, LU, "lu_factor LU")
    same(opiv, piv, "lu_factor pivots")
    same(tn.linalg.solve(to_tn(A), to_tn(B)), torch.linalg.solve(A, B), "solve")
    same(tn.linalg.inv(to_tn(A)), torch.linalg.inv(A), "inv")
    same(tn.linalg.lu_factor(to_tn(rand((4, 6), dt, 3)))[0], torch.linalg.lu_factor(rand((4, 6), dt, 3))[0], "lu_factor wide")
    close(tn.linalg.det(to_tn(A)), torch.linalg.det(A), "det")
    if not A.is_complex():
        s, l = tn.linalg.slogdet(to_tn(A))
        ts, tl = torch.linalg.slogdet(A)
        same(s, ts, "slogdet sign")
        close(l, tl, "slogdet logabsdet")


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", SQUARE)
def test_potrf(dt, case):
    X = square(dt, case)
    A = X @ X.mH + X.shape[-1] * torch.eye(X.shape[-1], dtype=X.dtype)
    same(tn.linalg.cholesky(to_tn(A)), torch.linalg.cholesky(A), "cholesky")
    close(tn.linalg.cholesky(to_tn(A), upper=True), torch.linalg.cholesky(A, upper=True), "cholesky upper")
    # not positive-definite: LAPACK's info, torch's message
    N = A.clone()
    N[..., 2, 2] = -1
    with pytest.raises(RuntimeError, match="leading minor of order 3"):
        tn.linalg.cholesky(to_tn(N))
    L, info = tn.linalg.cholesky_ex(to_tn(N))
    assert (T(info) == 3).all()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5), "T"])
def test_geqrf_orgqr_ormqr(dt, shape):
    A = rand((2, 3, 7), dt, 4).mT if shape == "T" else rand(shape, dt, 4)
    for mode in ("reduced", "complete", "r"):
        Q, R = torch.linalg.qr(A, mode=mode)
        oQ, oR = tn.linalg.qr(to_tn(A), mode=mode)
        same(oR, R, f"qr {mode} R")
        if mode != "r":
            same(oQ, Q, f"qr {mode} Q")
    a, tau = torch.geqrf(A)
    oa, otau = tn.geqrf(to_tn(A))
    same(oa, a, "geqrf")
    same(otau, tau, "geqrf tau")
    m = A.shape[-2]
    C = rand(A.shape[:-2] + (m, 3), dt, 5)
    for tr in (False, True):
        same(tn.ormqr(oa, otau, to_tn(C), left=True, transpose=tr), torch.ormqr(a, tau, C, left=True, transpose=tr), f"ormqr left transpose={tr}")
        Ct = C.mT.contiguous()
        same(tn.ormqr(oa, otau, to_tn(Ct), left=False, transpose=tr), torch.ormqr(a, tau, Ct, left=False, transpose=tr), f"ormqr right transpose={tr}")
    if A.shape[-2] >= A.shape[-1]:
        close(tn.linalg.householder_product(oa, otau), torch.linalg.householder_product(a, tau), "householder_product")


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("case", SQUARE)
def test_syevd(dt, case):
    X = square(dt, case, 6)
    A = X + X.mT
    L, V = torch.linalg.eigh(A)
    oL, oV = tn.linalg.eigh(to_tn(A))
    same(oL, L, "eigh values")
    same(oV, V, "eigh vectors")
    same(tn.linalg.eigvalsh(to_tn(A)), torch.linalg.eigvalsh(A), "eigvalsh")
    Lu, Vu = torch.linalg.eigh(A, UPLO="U")
    oLu, oVu = tn.linalg.eigh(to_tn(A), UPLO="U")
    close(oLu, Lu, "eigh U values")
    close(abs(T(oVu)), Vu.abs(), "eigh U vectors (up to sign)", 500)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5), "T"])
def test_gesdd(dt, shape):
    A = rand((2, 3, 7), dt, 7).mT if shape == "T" else rand(shape, dt, 7)
    for full in (False, True):
        U, S, Vh = torch.linalg.svd(A, full_matrices=full)
        oU, oS, oVh = tn.linalg.svd(to_tn(A), full_matrices=full)
        same(oS, S, f"svd S full={full}")
        same(oU, U, f"svd U full={full}")
        same(oVh, Vh, f"svd Vh full={full}")
    same(tn.linalg.svdvals(to_tn(A)), torch.linalg.svdvals(A), "svdvals")


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", SQUARE)
def test_geev(dt, case):
    A = square(dt, case, 8)
    L, V = torch.linalg.eig(A)
    oL, oV = tn.linalg.eig(to_tn(A))
    same(oL, L, "eig values")
    same(oV, V, "eig vectors")
    same(tn.linalg.eigvals(to_tn(A)), torch.linalg.eigvals(A), "eigvals")


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_trsm(dt, upper):
    A = rand((2, 6, 6), dt, 9) + 6 * torch.eye(6, dtype=getattr(torch, dt))
    B = rand((2, 6, 3), dt, 10)
    # left: trsm('L') on the same column-major copies as torch's; left=False is solved as
    # A^T X^T = B^T (torch calls trsm('R') on B as it lies): equal to rounding
    for left in (True, False):
        b = B if left else B.mT
        check = same if left else close
        check(tn.linalg.solve_triangular(to_tn(A), to_tn(b), upper=upper, left=left),
              torch.linalg.solve_triangular(A, b, upper=upper, left=left), f"solve_triangular left={left}")
        check(tn.linalg.solve_triangular(to_tn(A), to_tn(b), upper=upper, left=left, unitriangular=True),
              torch.linalg.solve_triangular(A, b, upper=upper, left=left, unitriangular=True), "solve_triangular unitriangular")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_lstsq_gels(dt):
    for shape in [(7, 4), (4, 7)]:
        A, B = rand(shape, dt, 11), rand((shape[0], 2), dt, 12)
        X, res, rank, sv = tn.linalg.lstsq(to_tn(A), to_tn(B), driver="gels")
        tX, tres, _, _ = torch.linalg.lstsq(A, B, driver="gels")
        close(X, tX, f"lstsq gels {shape}", 200)
        assert T(rank).numel() == 0 and T(sv).numel() == 0
        if shape[0] > shape[1]:
            close(res, tres, "lstsq residuals", 200)


def test_errors_and_empty():
    # singular: LAPACK's info, torch's messages (batch element named)
    S = torch.ones(2, 3, 3, dtype=torch.float64)
    S[0] = torch.eye(3)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element 2 is zero"):
        tn.linalg.inv(to_tn(S))
    _, info = tn.linalg.inv_ex(to_tn(S))
    assert T(info).tolist() == torch.linalg.inv_ex(S)[1].tolist()
    assert T(tn.linalg.det(to_tn(S))).tolist() == [1.0, 0.0]
    # 0 x 0 and empty batches
    for shape in [(0, 0), (0, 3, 3), (2, 0, 0)]:
        E = torch.zeros(shape, dtype=torch.float64)
        same(tn.linalg.inv(to_tn(E)), torch.linalg.inv(E), f"inv {shape}")
        same(tn.linalg.cholesky(to_tn(E)), torch.linalg.cholesky(E), f"cholesky {shape}")
        same(tn.linalg.eigvalsh(to_tn(E)), torch.linalg.eigvalsh(E), f"eigvalsh {shape}")
        same(tn.linalg.svdvals(to_tn(E)), torch.linalg.svdvals(E), f"svdvals {shape}")
        same(tn.linalg.eigvals(to_tn(E)), torch.linalg.eigvals(E), f"eigvals {shape}")
    for shape in [(3, 0), (0, 4)]:
        E = torch.zeros(shape, dtype=torch.float64)
        Q, R = tn.linalg.qr(to_tn(E))
        tQ, tR = torch.linalg.qr(E)
        same(Q, tQ, f"qr Q {shape}")
        same(R, tR, f"qr R {shape}")
        same(tn.linalg.svdvals(to_tn(E)), torch.linalg.svdvals(E), f"svdvals {shape}")
    # integer input: torch's error, not LAPACK's
    with pytest.raises(RuntimeError):
        tn.linalg.inv(tn.ones(3, 3, dtype=tn.int64))
    # non-finite input to the eigen and singular value drivers: torch's errors
    with pytest.raises(RuntimeError):
        tn.linalg.eig(to_tn(torch.full((3, 3), float("nan"), dtype=torch.float64)))


def test_gradients():
    # the backward formulas run on LAPACK's factors (gradcheck in float64)
    A = rand((4, 4), "float64", 13) + 4 * torch.eye(4, dtype=torch.float64)
    for f in (lambda a: tn.linalg.inv(a), lambda a: tn.linalg.det(a), lambda a: tn.linalg.svdvals(a),
              lambda a: tn.linalg.eigvalsh(a + a.mT), lambda a: tn.linalg.qr(a)[1], lambda a: tn.linalg.cholesky(a @ a.mT)):
        a = to_tn(A).requires_grad_(True)
        assert tn.autograd.gradcheck(f, (a,))
