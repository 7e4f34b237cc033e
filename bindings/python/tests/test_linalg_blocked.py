"""The blocked LU and Cholesky (issue 26, item 3; src/ops/linalg_factor.c: panels of 32 columns
over the GEMM from order 96, of 64 from 512) against torch 1.13's LAPACK: pivots equal to torch's, the backward
errors |P A - L U| / (|A| n eps) and |L L^H - A| / (|A| n eps) within LAPACK's standard, and
solve / det / inv / cholesky close to torch's, on sizes around the block edges, tall and wide,
float32, batched and non-contiguous; singular and non-positive-definite inputs give torch's
info and message. (tests/test_linalg_blocked.c checks the kernels against the unblocked ones
with small blocks, and 1 vs 2 threads bitwise.)

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_linalg_blocked.py
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ops_elementwise_linalg as H  # noqa: E402  (the harness; puts the package on sys.path)
import tensor as tn  # noqa: E402

torch = H.torch
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
EPS = 2.220446049250313e-16


def _t(x):
    return torch.from_numpy(x.numpy().copy())


@needs_torch
@pytest.mark.parametrize("m,n", [(95, 95), (96, 96), (97, 97), (129, 129), (161, 161), (257, 257),
                                 (300, 300), (300, 150), (150, 300), (129, 200), (513, 513)])
def test_lu_factor_pivots_and_backward_error(m, n):
    torch.manual_seed(m * 1000 + n)
    A = torch.randn(m, n, dtype=torch.float64)
    LU, piv = tn.linalg.lu_factor(H.to_tn(A))
    LUt, pivt = torch.linalg.lu_factor(A)
    assert torch.equal(_t(piv), pivt)   # the same pivots as LAPACK's
    P, L, U = torch.lu_unpack(_t(LU), pivt)
    assert ((P @ L @ U - A).abs().max() / (A.abs().max() * max(m, n) * EPS)).item() < 2
    assert torch.allclose(_t(LU), LUt, rtol=1e-9, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("n", [128, 200, 300])
def test_solve_det_inv_cholesky_against_torch(n):
    torch.manual_seed(n)
    A = torch.randn(2, n, n, dtype=torch.float64).mT   # batched, non-contiguous
    B = torch.randn(2, n, 3, dtype=torch.float64)
    S = A @ A.mT / n + torch.eye(n, dtype=torch.float64)
    a, b, s = H.to_tn(A), H.to_tn(B), H.to_tn(S)
    H.assert_close(tn.linalg.solve(a, b), torch.linalg.solve(A, B), "solve", 1e-9, 1e-9)
    H.assert_close(tn.linalg.inv(a), torch.linalg.inv(A), "inv", 1e-9, 1e-9)
    H.assert_close(tuple(tn.linalg.slogdet(a)), tuple(torch.linalg.slogdet(A)), "slogdet", 1e-9, 1e-9)
    for upper in (False, True):
        L = tn.linalg.cholesky(s, upper=upper)
        H.assert_close(L, torch.linalg.cholesky(S, upper=upper), "cholesky", 1e-10, 1e-10)
        Lt = _t(L)
        R = Lt.mT @ Lt if upper else Lt @ Lt.mT
        assert ((R - S).abs().max() / (S.abs().max() * n * EPS)).item() < 2
    # float32 (factored in float32, as sgetrf; spotrf: float64 work rounded)
    A32, S32 = A.float(), S.float()
    H.assert_close(tn.linalg.inv(H.to_tn(A32)), torch.linalg.inv(A32), "inv float32", 1e-3, 1e-4)
    H.assert_close(tn.linalg.cholesky(H.to_tn(S32)), torch.linalg.cholesky(S32), "cholesky float32", 1e-4, 1e-5)


@needs_torch
def test_singular_and_not_positive_definite():
    torch.manual_seed(5)
    A = torch.randn(200, 200, dtype=torch.float64)
    A[:, 150] = 0
    r, rt = tn.linalg.lu_factor_ex(H.to_tn(A)), torch.linalg.lu_factor_ex(A)
    assert r.info.item() == rt.info.item() == 151
    assert torch.equal(_t(r.pivots), rt.pivots)
    # the first zero pivot, as getrf's info (torch 1.13's inv names another element here: its
    # message comes from a later step of its own path, not from the factorisation)
    with pytest.raises(RuntimeError, match="The diagonal element 151 is zero, the inversion could not be completed"):
        tn.linalg.inv(H.to_tn(A))
    G = torch.randn(300, 300, dtype=torch.float64)
    S = G @ G.mT / 300 + torch.eye(300, dtype=torch.float64)
    S[170, 170] = -1
    c, ct = tn.linalg.cholesky_ex(H.to_tn(S)), torch.linalg.cholesky_ex(S)
    assert c.info.item() == ct.info.item() == 171
    # the factor of the leading positive-definite minor as torch's (what is left around it
    # depends on the LAPACK's blocking: OpenBLAS's leaves the failing block's rows below unsolved)
    assert torch.allclose(_t(c.L)[:170, :170], ct.L[:170, :170], rtol=1e-10, atol=1e-10)
    with pytest.raises(RuntimeError) as e:
        tn.linalg.cholesky(H.to_tn(S))
    with pytest.raises(RuntimeError) as et:
        torch.linalg.cholesky(S)
    assert str(et.value).split(": ", 1)[-1] in str(e.value)


@needs_torch
@pytest.mark.parametrize("dt", ["complex128", "complex64"])
def test_complex_against_torch(dt):
    torch.manual_seed(7)
    tdt = getattr(torch, dt)
    n = 200
    A = torch.randn(n, n, dtype=torch.complex128)
    S = A @ A.mH / n + torch.eye(n, dtype=torch.complex128)
    A, S = A.to(tdt), S.to(tdt)
    tol = 1e-9 if dt == "complex128" else 1e-3
    LU, piv = tn.linalg.lu_factor(H.to_tn(A))
    LUt, pivt = torch.linalg.lu_factor(A)
    assert torch.equal(_t(piv), pivt)
    H.assert_close(LU, LUt, "lu_factor complex", tol, tol)
    H.assert_close(tn.linalg.cholesky(H.to_tn(S)), torch.linalg.cholesky(S), "cholesky complex", tol, tol)
    H.assert_close(tn.linalg.cholesky(H.to_tn(S), upper=True), torch.linalg.cholesky(S, upper=True), "cholesky upper complex", tol, tol)
    H.assert_close(tuple(tn.linalg.slogdet(H.to_tn(A))), tuple(torch.linalg.slogdet(A)), "slogdet complex", tol, tol)
