"""float32 LU in float32 (issue 26, branch solve32; src/ops/linalg_factor.c's TN__LA_LU template,
as LAPACK's sgetrf / sgetrs, which torch 1.13 calls for float32): lu_factor, solve, inv, det,
slogdet of float32 input against torch's float32 and float64 results. The backward error
|P A - L U| / (|A| n eps_f32) and the residual of solve are within LAPACK's standard, the pivots
are torch's, sizes around the block crossover (order 96, panels of 32), batched, broadcast,
non-contiguous, 0-size, 1 x 1 and singular input (info and message as torch's); 1 and 2
threads give the same bits.

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_linalg_f32.py
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ops_elementwise_linalg as H  # noqa: E402  (the harness; puts the package on sys.path)
import tensor as tn  # noqa: E402

torch = H.torch
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
EPS32 = float(np.finfo(np.float32).eps)


def _t(x):
    return torch.from_numpy(x.numpy().copy())


def _lu_backward_error(A, LU, piv):
    P, L, U = torch.lu_unpack(LU.double(), piv)
    n = max(A.shape[-2:])
    return ((P @ L @ U - A.double()).abs().amax() / (A.double().abs().amax() * n * EPS32)).item()


@needs_torch
@pytest.mark.parametrize("m,n", [(1, 1), (5, 5), (64, 64), (95, 95), (96, 96), (97, 97), (129, 129),
                                 (200, 200), (150, 100), (100, 150), (97, 130)])
def test_lu_factor_float32(m, n):
    torch.manual_seed(m * 1000 + n)
    A = torch.randn(2, m, n, dtype=torch.float32)
    LU, piv = tn.linalg.lu_factor(H.to_tn(A))
    assert LU.dtype == tn.float32 and piv.dtype == tn.int32
    LUt, pivt = torch.linalg.lu_factor(A)
    assert torch.equal(_t(piv), pivt)   # sgetrf's pivots
    assert _lu_backward_error(A, _t(LU), pivt) < 2
    # the factors agree with torch's float32 ones to float32's accuracy (growth of the errors in
    # the elimination: relative to the largest entry)
    assert ((_t(LU) - LUt).abs().amax() / LUt.abs().amax()).item() < 1e-4
    # ... and they are float32's, not a float64 factorisation rounded once: the float64 LU
    # rounded differs from ours somewhere for these sizes (the float32 updates round each step)
    if m * n >= 64 * 64:
        LU64, _ = torch.linalg.lu_factor(A.double())
        assert not torch.equal(LU64.float(), _t(LU))


@needs_torch
@pytest.mark.parametrize("n", [1, 3, 64, 95, 96, 97, 130])
def test_solve_inv_det_float32(n):
    torch.manual_seed(n)
    A = torch.randn(3, n, n, dtype=torch.float32) / n ** 0.5 + 3 * torch.eye(n)   # well conditioned: cond < 4 or so
    B = torch.randn(3, n, 2, dtype=torch.float32)
    a, b = H.to_tn(A), H.to_tn(B)
    x = tn.linalg.solve(a, b)
    assert x.dtype == tn.float32
    X = _t(x).double()
    res = (A.double() @ X - B.double()).abs().amax() / (A.double().abs().amax() * X.abs().amax() * n * EPS32)
    assert res.item() < 2
    H.assert_close(x, torch.linalg.solve(A, B), "solve float32", 1e-3, 1e-4)
    H.assert_close(tn.linalg.inv(a), torch.linalg.inv(A), "inv float32", 1e-3, 1e-4)
    H.assert_close(tn.linalg.det(a), torch.linalg.det(A), "det float32", 1e-4, 0)
    H.assert_close(tuple(tn.linalg.slogdet(a)), tuple(torch.linalg.slogdet(A)), "slogdet float32", 1e-4, 1e-4)
    # against float64's answer: within the float32 conditioning bound
    X64 = torch.linalg.solve(A.double(), B.double())
    cond = torch.linalg.cond(A.double()).amax().item()
    assert ((X - X64).abs().amax() / X64.abs().amax()).item() < 10 * n * cond * EPS32
    r, rt = tn.linalg.solve_ex(a, b), torch.linalg.solve_ex(A, B)
    assert torch.equal(_t(r.info), rt.info)
    r, rt = tn.linalg.inv_ex(a), torch.linalg.inv_ex(A)
    assert torch.equal(_t(r.info), rt.info)


@needs_torch
def test_broadcast_noncontiguous_vector():
    torch.manual_seed(1)
    A = torch.randn(2, 1, 40, 40, dtype=torch.float32) + 4 * torch.eye(40)
    B = torch.randn(3, 40, 5, dtype=torch.float32)
    H.assert_close(tn.linalg.solve(H.to_tn(A), H.to_tn(B)), torch.linalg.solve(A, B), "broadcast", 1e-3, 1e-4)
    At = A.mT   # non-contiguous
    H.assert_close(tn.linalg.solve(H.to_tn(A).mT, H.to_tn(B)), torch.linalg.solve(At, B), "A.mT", 1e-3, 1e-4)
    Bs = torch.randn(40, 10, dtype=torch.float32)
    H.assert_close(tn.linalg.solve(H.to_tn(A), H.to_tn(Bs)[:, ::2]), torch.linalg.solve(A, Bs[:, ::2]), "strided B", 1e-3, 1e-4)
    v = torch.randn(2, 1, 40, dtype=torch.float32)
    H.assert_close(tn.linalg.solve(H.to_tn(A), H.to_tn(v)), torch.linalg.solve(A, v), "vector B", 1e-3, 1e-4)
    H.assert_close(tn.linalg.solve(H.to_tn(A), H.to_tn(B[0].mT), left=False), torch.linalg.solve(A, B[0].mT, left=False),
                   "left=False", 1e-3, 1e-4)
    H.assert_close(tn.linalg.det(H.to_tn(A).mT), torch.linalg.det(At), "det A.mT", 1e-4, 0)


@needs_torch
def test_empty_and_one_by_one():
    for shape in [(0, 3, 3), (2, 0, 0), (0, 0)]:
        A = torch.zeros(shape, dtype=torch.float32)
        B = torch.zeros(shape[:-1] + (2,), dtype=torch.float32)
        H.assert_close(tn.linalg.solve(H.to_tn(A), H.to_tn(B)), torch.linalg.solve(A, B), f"solve {shape}")
        H.assert_close(tn.linalg.inv(H.to_tn(A)), torch.linalg.inv(A), f"inv {shape}")
        H.assert_close(tn.linalg.det(H.to_tn(A)), torch.linalg.det(A), f"det {shape}")
        LU, piv = tn.linalg.lu_factor(H.to_tn(A))
        LUt, pivt = torch.linalg.lu_factor(A)
        assert tuple(LU.shape) == tuple(LUt.shape) and tuple(piv.shape) == tuple(pivt.shape) and LU.dtype == tn.float32
    A = torch.tensor([[-2.5]], dtype=torch.float32)
    H.assert_close(tn.linalg.inv(H.to_tn(A)), torch.linalg.inv(A), "inv 1x1", 0, 0)
    H.assert_close(tn.linalg.det(H.to_tn(A)), torch.linalg.det(A), "det 1x1", 0, 0)


@needs_torch
@pytest.mark.parametrize("n,col", [(4, 2), (100, 60)])
def test_singular_float32(n, col):
    torch.manual_seed(n)
    A = torch.randn(3, n, n, dtype=torch.float32)
    A[1, :, col] = 0
    r, rt = tn.linalg.lu_factor_ex(H.to_tn(A)), torch.linalg.lu_factor_ex(A)
    assert torch.equal(_t(r.info), rt.info) and rt.info[1].item() == col + 1
    assert torch.equal(_t(r.pivots), rt.pivots)
    # (solve_ex's info names a zero pivot of another factorisation than torch's, which factors
    # A^T there, for float64 as well: only whether it is 0 is compared)
    s, st = tn.linalg.solve_ex(H.to_tn(A), H.to_tn(A[..., :1])), torch.linalg.solve_ex(A, A[..., :1])
    assert torch.equal(_t(s.info) != 0, st.info != 0)
    assert _t(tn.linalg.det(H.to_tn(A)))[1].item() == 0
    sl = tn.linalg.slogdet(H.to_tn(A))
    assert _t(sl[0])[1].item() == 0 and _t(sl[1])[1].item() == -np.inf
    # (which element: the first zero pivot of the factorisation taken, the built-in kernels' of A,
    # a TENSOR_LAPACK build's of A^T as torch's: as for float64)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element \d+ is zero, the inversion could not"):
        tn.linalg.inv(H.to_tn(A))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element \d+ is zero"):
        tn.linalg.solve(H.to_tn(A), H.to_tn(A[..., :1]))
    with pytest.raises(RuntimeError, match="U\\[%d, %d\\] is zero" % (col + 1, col + 1)):
        tn.linalg.lu_factor_ex(H.to_tn(A), check_errors=True)


@needs_torch
def test_bad_input():
    a = tn.randn(3, 3)
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        tn.linalg.solve(a, tn.randn(3, 1, dtype=tn.float64))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        tn.linalg.inv(tn.randn(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tn.linalg.det(tn.randn(3))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        tn.linalg.solve(a, tn.randn(4, 1))


@needs_torch
@pytest.mark.parametrize("n", [64, 200])
def test_threads_bitwise(n):
    torch.manual_seed(n)
    A = torch.randn(64 if n == 64 else 2, n, n, dtype=torch.float32)
    B = torch.randn(A.shape[0], n, 1, dtype=torch.float32)
    a, b = H.to_tn(A), H.to_tn(B)
    old = tn.get_num_threads()
    try:
        outs = []
        for t in (1, 2):
            tn.set_num_threads(t)
            LU, piv = tn.linalg.lu_factor(a)
            outs.append((tn.linalg.solve(a, b).numpy(), LU.numpy(), piv.numpy(), tn.linalg.det(a).numpy()))
    finally:
        tn.set_num_threads(old)
    for u, v in zip(*outs):
        assert np.array_equal(u, v)


@needs_torch
def test_gradients_float32():
    torch.manual_seed(3)
    A = (torch.randn(2, 6, 6) + 3 * torch.eye(6)).requires_grad_()
    B = torch.randn(2, 6, 2).requires_grad_()
    a = H.to_tn(A.detach()).requires_grad_()
    b = H.to_tn(B.detach()).requires_grad_()
    (tn.linalg.solve(a, b).sum() + tn.linalg.det(a).sum() + tn.linalg.inv(a).sum()).backward()
    (torch.linalg.solve(A, B).sum() + torch.linalg.det(A).sum() + torch.linalg.inv(A).sum()).backward()
    H.assert_close(a.grad, A.grad, "grad A", 1e-3, 1e-4)
    H.assert_close(b.grad, B.grad, "grad B", 1e-3, 1e-4)


@needs_torch
@pytest.mark.parametrize("n", [1, 5, 95, 96, 130])
def test_cholesky_float32(n):
    torch.manual_seed(n)
    G = torch.randn(2, n, n, dtype=torch.float32)
    S = G @ G.mT / n + torch.eye(n)
    for upper in (False, True):
        L = tn.linalg.cholesky(H.to_tn(S), upper=upper)
        assert L.dtype == tn.float32
        H.assert_close(L, torch.linalg.cholesky(S, upper=upper), f"cholesky upper={upper}", 1e-4, 1e-5)
        Lt = _t(L).double()
        R = Lt.mT @ Lt if upper else Lt @ Lt.mT
        assert ((R - S.double()).abs().amax() / (S.double().abs().amax() * n * EPS32)).item() < 2
    S[1, n // 2, n // 2] = -1   # not positive-definite: torch's info and message
    c, ct = tn.linalg.cholesky_ex(H.to_tn(S)), torch.linalg.cholesky_ex(S)
    assert torch.equal(_t(c.info), ct.info)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\).*order %d is not positive-definite" % (n // 2 + 1)):
        tn.linalg.cholesky(H.to_tn(S))


@needs_torch
@pytest.mark.parametrize("n,k", [(95, 3), (96, 1), (130, 7), (200, 64)])
def test_complex_getrs_blocked(n, k):
    # the complex getrs is blocked from order 96 as the real one (diagonal blocks by
    # substitution, the rest through the complex GEMM): the residual within LAPACK's standard
    torch.manual_seed(n + k)
    A = torch.randn(2, n, n, dtype=torch.complex128) + 4 * torch.eye(n)
    B = torch.randn(2, n, k, dtype=torch.complex128)
    X = _t(tn.linalg.solve(H.to_tn(A), H.to_tn(B)))
    res = (A @ X - B).abs().amax() / (A.abs().amax() * X.abs().amax() * n * 2.220446049250313e-16)
    assert res.item() < 4
    H.assert_close(tn.linalg.inv(H.to_tn(A)), torch.linalg.inv(A), "inv complex128", 1e-9, 1e-9)
