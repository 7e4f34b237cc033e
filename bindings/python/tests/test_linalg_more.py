"""torch.linalg without QR, eigen or SVD (issue 26, item 3; src/ops/linalg_more.c):
solve_triangular, triangular_solve, cholesky_solve, cholesky_inverse, lu_solve (both names),
torch.lu, matrix_power, matrix_exp, the norms, multi_dot, vecdot, vander, householder_product
(orgqr), tensorinv, tensorsolve, against PyTorch's own test database and against torch directly.

The OpInfo run reuses test_ops_elementwise_linalg's harness (every sample of the entry's
sample_inputs for float64 with gradients and float32, odd samples as non-contiguous views,
error inputs), the nuclear and spectral norms (ord 'nuc', 2, -2: through linalg.svdvals)
included.

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_linalg_more.py
"""
import math
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ops_elementwise_linalg as H  # noqa: E402  (the OpInfo harness; puts the package on sys.path)
import tensor as tn  # noqa: E402
from opinfo_util import to_torch  # noqa: E402

torch = H.torch

OPS = """
linalg.solve_triangular triangular_solve cholesky_solve cholesky_inverse linalg.lu_solve lu_solve lu
linalg.matrix_power matrix_exp linalg.vector_norm linalg.matrix_norm linalg.norm linalg.norm:subgradients_at_zero
linalg.multi_dot linalg.vecdot linalg.vander linalg.householder_product linalg.tensorinv linalg.tensorsolve
linalg.ldl_factor linalg.ldl_factor_ex linalg.ldl_solve
""".split()

def _matrix_exp_f32(s):
    """float32 matrix_exp: PyTorch evaluates its Taylor polynomials and squarings in float32
    (relative errors near 1e-5 for matrices of norm ~10), this package in float64 rounded once
    (test_matrix_exp_float32_accuracy checks that ours is the closer to the float64 value)."""
    return (5e-5, 1e-3) if s.input.dtype == torch.float32 else None


H.LOOSE["matrix_exp"] = _matrix_exp_f32


def _multi_dot_f32(s):
    """float32 chains: the same multiplication order as torch, but our GEMM's summation order
    differs from OpenBLAS's, and a chain of products with cancellation shows it above the
    default float32 tolerance on some random samples."""
    return (1e-4, 1e-4) if s.input[0].dtype == torch.float32 else None


H.LOOSE["linalg.multi_dot"] = _multi_dot_f32


@pytest.mark.parametrize("spec", OPS)
def test_opinfo(spec):
    if torch is None:
        pytest.skip("torch is not installed")
    passed, total, failures = H.check_op(spec)
    assert total > 0
    assert not failures, f"{spec}: {passed}/{total} passed\n" + "\n".join(failures[:20])


needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _tri(*shape, upper=True):
    x = torch.randn(*shape, dtype=torch.float64)
    x = x.triu() if upper else x.tril()
    return x + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)


@needs_torch
def test_values_batched_broadcast_noncontiguous():
    torch.manual_seed(0)
    U = _tri(2, 1, 70, 70)                                   # past one 64-row block: the blocked solve
    B = torch.randn(3, 70, 4, dtype=torch.float64)           # batch broadcasts against (2, 1)
    u, b = H.to_tn(U), H.to_tn(B)
    for upper in (True, False):
        A = U if upper else U.mT                              # the lower one is a transposed view
        a = u if upper else u.mT
        H.assert_close(tn.linalg.solve_triangular(a, b, upper=upper), torch.linalg.solve_triangular(A, B, upper=upper), "solve_triangular")
        H.assert_close(tn.linalg.solve_triangular(a, b.mT, upper=upper, left=False),
                       torch.linalg.solve_triangular(A, B.mT, upper=upper, left=False), "solve_triangular right")
        H.assert_close(tn.linalg.solve_triangular(a, b, upper=upper, unitriangular=True),
                       torch.linalg.solve_triangular(A, B, upper=upper, unitriangular=True), "unitriangular", 1e-6, 1e-9)
    r, t = tn.triangular_solve(b, u, transpose=True), torch.triangular_solve(B, U, transpose=True)
    H.assert_close(tuple(r), tuple(t), "triangular_solve")
    assert type(r).__name__ == "triangular_solve" and r.solution.shape == t.solution.shape
    H.assert_close(b.triangular_solve(u, upper=True)[0], B.triangular_solve(U, upper=True)[0], "Tensor.triangular_solve")
    P = torch.randn(3, 5, 5, dtype=torch.float64)
    P = P @ P.mT + torch.eye(5, dtype=torch.float64)
    for upper in (False, True):
        L = torch.linalg.cholesky(P, upper=upper)
        Bc = torch.randn(5, 2, dtype=torch.float64)
        H.assert_close(tn.cholesky_solve(H.to_tn(Bc), H.to_tn(L), upper), torch.cholesky_solve(Bc, L, upper), "cholesky_solve")
        H.assert_close(tn.cholesky_inverse(H.to_tn(L), upper), torch.cholesky_inverse(L, upper), "cholesky_inverse")
    A = torch.randn(2, 6, 6, dtype=torch.float64)
    LU, piv = torch.linalg.lu_factor(A)
    Bl = torch.randn(6, 3, dtype=torch.float64)
    for left in (True, False):
        for adjoint in (False, True):
            Bx = Bl if left else Bl.mT
            H.assert_close(tn.linalg.lu_solve(H.to_tn(LU), H.to_tn(piv), H.to_tn(Bx), left=left, adjoint=adjoint),
                           torch.linalg.lu_solve(LU, piv, Bx, left=left, adjoint=adjoint), f"lu_solve {left} {adjoint}")
    Bb = torch.randn(2, 6, 3, dtype=torch.float64)
    H.assert_close(tn.lu_solve(H.to_tn(Bb), H.to_tn(LU), H.to_tn(piv)), torch.lu_solve(Bb, LU, piv), "torch.lu_solve")
    H.assert_close(tuple(tn.lu(H.to_tn(A), get_infos=True)), tuple(torch.lu(A, get_infos=True)), "torch.lu")
    # matrix functions
    M = torch.randn(3, 4, 4, dtype=torch.float64).mT
    for n in (-3, -1, 0, 1, 2, 5):
        H.assert_close(tn.linalg.matrix_power(H.to_tn(M), n), torch.linalg.matrix_power(M, n), f"matrix_power {n}")
    for scale in (1e-3, 0.1, 1, 4, 30):
        H.assert_close(tn.linalg.matrix_exp(H.to_tn(M * scale)), torch.linalg.matrix_exp(M * scale), f"matrix_exp {scale}", 1e-10, 1e-12)
    H.assert_close(tn.matrix_exp(H.to_tn(M.float())), torch.matrix_exp(M.float()), "matrix_exp float32", 1e-5, 1e-6)
    H.assert_close(H.to_tn(M).matrix_power(3), M.matrix_power(3), "Tensor.matrix_power")
    # 0-size
    E = torch.zeros(2, 0, 0, dtype=torch.float64)
    H.assert_close(tn.linalg.matrix_exp(H.to_tn(E)), torch.linalg.matrix_exp(E), "matrix_exp 0x0")
    H.assert_close(tn.linalg.solve_triangular(H.to_tn(E), tn.zeros(2, 0, 3, dtype=tn.float64), upper=True),
                   torch.linalg.solve_triangular(E, torch.zeros(2, 0, 3, dtype=torch.float64), upper=True), "solve_triangular 0x0")


@needs_torch
def test_norms_against_torch():
    torch.manual_seed(1)
    X = torch.randn(3, 4, 5, dtype=torch.float64).transpose(0, 2)    # non-contiguous [5, 4, 3]
    x = H.to_tn(X)
    for ord in (2, 1, 0, 3.5, -1.5, math.inf, -math.inf):
        for dim in (None, -1, (0, 2)):
            for keepdim in (False, True):
                H.assert_close(tn.linalg.vector_norm(x, ord, dim, keepdim), torch.linalg.vector_norm(X, ord, dim, keepdim),
                               f"vector_norm {ord} {dim} {keepdim}")
    H.assert_close(tn.linalg.vector_norm(H.to_tn(X.float()), dtype=tn.float64), torch.linalg.vector_norm(X.float(), dtype=torch.float64), "dtype")
    for ord in ("fro", 1, -1, math.inf, -math.inf):
        for dim in ((-2, -1), (0, 2), (2, 0)):
            for keepdim in (False, True):
                H.assert_close(tn.linalg.matrix_norm(x, ord, dim, keepdim), torch.linalg.matrix_norm(X, ord, dim, keepdim),
                               f"matrix_norm {ord} {dim} {keepdim}")
    for ord, dim in ((None, None), (None, 1), (3, 1), ("fro", (0, 1)), (math.inf, (1, 2)), (-1, (2, 0))):
        H.assert_close(tn.linalg.norm(x, ord, dim), torch.linalg.norm(X, ord, dim), f"norm {ord} {dim}")
    for ord in (None, math.inf, 1, "fro"):
        H.assert_close(tn.linalg.norm(x[0], ord), torch.linalg.norm(X[0], ord), f"norm 2-d {ord}")
    H.assert_close(tn.linalg.norm(x[0, 0], 3), torch.linalg.norm(X[0, 0], 3), "norm 1-d")
    # the old torch.norm keeps working
    H.assert_close(tn.norm(x), torch.norm(X), "torch.norm")
    H.assert_close(x.norm(p=1, dim=1), X.norm(p=1, dim=1), "Tensor.norm")
    # gradients, with zeros in the input (the subgradient at 0)
    Z = X.clone()
    Z[0] = 0
    for f in (lambda m, t: m.linalg.vector_norm(t, 2, -1), lambda m, t: m.linalg.vector_norm(t, math.inf),
              lambda m, t: m.linalg.matrix_norm(t, 1), lambda m, t: m.linalg.matrix_norm(t, -math.inf),
              lambda m, t: m.linalg.norm(t, dim=(0, 1))):
        T = Z.clone().requires_grad_()
        ours = H.to_tn(Z).requires_grad_()
        ref, got = f(torch, T), f(tn, ours)
        w = torch.randn(ref.shape, dtype=torch.float64)
        (g,) = torch.autograd.grad((ref * w).sum(), T)
        (og,) = tn.autograd.grad((got * H.to_tn(w)).sum(), ours)
        H.assert_close(og, g, "norm grad")


@needs_torch
def test_spectral_norms_against_torch():
    # 'nuc', 2, -2: the sum and extremes of the singular values (linalg.svdvals), any dims, keepdim
    torch.manual_seed(0)
    A = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    a = tn.tensor(A.detach().numpy(), requires_grad=True)
    for ord in ("nuc", 2, -2):
        for dim, keepdim in (((-2, -1), False), ((2, 0), True), ((0, 1), False)):
            r, t = tn.linalg.matrix_norm(a, ord, dim, keepdim), torch.linalg.matrix_norm(A, ord, dim, keepdim)
            H.assert_close(r, t, f"matrix_norm {ord} {dim}")
            g, = tn.autograd.grad(r.sum(), a)
            gt, = torch.autograd.grad(t.sum(), A)
            H.assert_close(g, gt, f"matrix_norm {ord} {dim} grad")
        H.assert_close(tn.linalg.norm(a[0], ord), torch.linalg.norm(A[0], ord), f"norm {ord}")
    assert tn.linalg.norm(tn.ones(4), 2).item() == 2.0   # a vector's 2-norm


@needs_torch
def test_products_against_torch():
    torch.manual_seed(2)
    ts = [torch.randn(7, dtype=torch.float64), torch.randn(7, 30, dtype=torch.float64), torch.randn(30, 2, dtype=torch.float64),
          torch.randn(2, 40, dtype=torch.float64).mT.mT, torch.randn(40, 3, dtype=torch.float64)]
    for k in (2, 3, 5):
        ref = torch.linalg.multi_dot(ts[5 - k:] if k < 5 else ts)
        got = tn.linalg.multi_dot([H.to_tn(t) for t in (ts[5 - k:] if k < 5 else ts)])
        H.assert_close(got, ref, f"multi_dot {k}")
    X, Y = torch.randn(4, 1, 5, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64)
    H.assert_close(tn.linalg.vecdot(H.to_tn(X), H.to_tn(Y)), torch.linalg.vecdot(X, Y), "vecdot")
    H.assert_close(tn.linalg.vecdot(H.to_tn(X), H.to_tn(Y.mT.mT), dim=0), torch.linalg.vecdot(X, Y, dim=0), "vecdot dim 0")
    v = torch.tensor([2., 0., -1.5], dtype=torch.float64)
    for N in (None, 2, 5):
        H.assert_close(tn.linalg.vander(H.to_tn(v), N=N), torch.linalg.vander(v, N=N), f"vander {N}")
    H.assert_close(tn.linalg.vander(tn.tensor([1, 2, 3])), torch.linalg.vander(torch.tensor([1, 2, 3])), "vander int")
    A, tau = torch.randn(2, 5, 3, dtype=torch.float64), torch.randn(2, 2, dtype=torch.float64)
    H.assert_close(tn.linalg.householder_product(H.to_tn(A), H.to_tn(tau)), torch.linalg.householder_product(A, tau), "householder_product")
    H.assert_close(tn.orgqr(H.to_tn(A), H.to_tn(tau)), torch.orgqr(A, tau), "orgqr")
    T1 = torch.randn(24, 4, 2, 3, dtype=torch.float64)
    H.assert_close(tn.linalg.tensorinv(H.to_tn(T1), ind=1), torch.linalg.tensorinv(T1, ind=1), "tensorinv")
    T = torch.randn(6, 4, 2, 3, 4, dtype=torch.float64)
    B = torch.randn(6, 4, dtype=torch.float64)
    H.assert_close(tn.linalg.tensorsolve(H.to_tn(T), H.to_tn(B)), torch.linalg.tensorsolve(T, B), "tensorsolve")
    Tp = T.permute(2, 0, 1, 3, 4)
    H.assert_close(tn.linalg.tensorsolve(H.to_tn(Tp), H.to_tn(B), dims=(0,)), torch.linalg.tensorsolve(Tp, B, dims=(0,)), "tensorsolve dims")
    D = torch.randn(2, 3, 4, dtype=torch.float64)
    H.assert_close(tn.linalg.diagonal(H.to_tn(D), offset=1), torch.linalg.diagonal(D, offset=1), "linalg.diagonal")
    H.assert_close(tn.linalg.matmul(H.to_tn(D), H.to_tn(D.mT)), torch.linalg.matmul(D, D.mT), "linalg.matmul")


@needs_torch
def test_gradients_against_torch():
    torch.manual_seed(3)
    U, B = _tri(2, 4, 4), torch.randn(2, 4, 3, dtype=torch.float64)
    M = torch.randn(2, 4, 4, dtype=torch.float64)
    cases = [
        (lambda m, u, b, a: m.linalg.solve_triangular(u, b, upper=True), "solve_triangular"),
        (lambda m, u, b, a: m.linalg.solve_triangular(u.mT, b.mT, upper=False, left=False, unitriangular=True), "solve_triangular right unit"),
        (lambda m, u, b, a: m.triangular_solve(b, u, transpose=True)[0], "triangular_solve"),
        (lambda m, u, b, a: m.linalg.matrix_exp(a), "matrix_exp"),
        (lambda m, u, b, a: m.linalg.matrix_exp(3 * a), "matrix_exp scaled"),
        (lambda m, u, b, a: m.linalg.matrix_power(u, -2), "matrix_power"),
        (lambda m, u, b, a: m.linalg.lu_solve(*m.linalg.lu_factor(a + 4 * m.eye(4, dtype=a.dtype)), b, adjoint=True), "lu_solve"),
        (lambda m, u, b, a: m.cholesky_solve(b, m.linalg.cholesky(a @ a.mT + m.eye(4, dtype=a.dtype))), "cholesky_solve"),
        (lambda m, u, b, a: m.cholesky_inverse(m.linalg.cholesky(a @ a.mT + m.eye(4, dtype=a.dtype)), True), "cholesky_inverse"),
        (lambda m, u, b, a: m.linalg.multi_dot([a[0], b[0], b[1].mT]), "multi_dot"),
    ]
    for f, what in cases:
        ts = [t.clone().requires_grad_() for t in (U, B, M)]
        ours = [H.to_tn(t.detach()).requires_grad_() for t in ts]
        ref, got = f(torch, *ts), f(tn, *ours)
        w = torch.randn(ref.shape, dtype=torch.float64)
        g = torch.autograd.grad((ref * w).sum(), ts, create_graph=True, allow_unused=True)
        og = tn.autograd.grad((got * H.to_tn(w)).sum(), ours, create_graph=True, allow_unused=True)
        for i, (x, y) in enumerate(zip(og, g)):
            if y is not None:
                H.assert_close(x, y.detach(), f"{what} grad {i}", 1e-8, 1e-8)
        k = next(i for i, y in enumerate(g) if y is not None)
        gg = torch.autograd.grad(g[k].pow(2).sum(), ts, allow_unused=True)
        ogg = tn.autograd.grad(og[k].pow(2).sum(), ours, allow_unused=True)
        for i, (x, y) in enumerate(zip(ogg, gg)):
            if y is not None:
                H.assert_close(x, y, f"{what} double grad {i}", 1e-7, 1e-7)


@needs_torch
def test_errors_as_torch():
    A = tn.eye(3, dtype=tn.float64)
    with pytest.raises(TypeError):
        tn.linalg.solve_triangular(A, A)                      # upper is required
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B for the equation AX = B"):
        tn.linalg.solve_triangular(A, tn.ones(4, 2, dtype=tn.float64), upper=True)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        tn.linalg.solve_triangular(A, tn.ones(3, dtype=tn.float64), upper=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        tn.linalg.solve_triangular(A, tn.ones(3, 2), upper=True)
    with pytest.raises(RuntimeError, match="square matrices"):
        tn.linalg.matrix_exp(tn.ones(2, 3))
    with pytest.raises(RuntimeError, match="square matrices"):
        tn.linalg.matrix_power(tn.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        tn.linalg.vector_norm(tn.ones(3, dtype=tn.int64))
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        tn.linalg.vector_norm(tn.ones(0), math.inf)
    with pytest.raises(RuntimeError, match="dims must be different"):
        tn.linalg.matrix_norm(A, dim=(0, 0))
    with pytest.raises(RuntimeError, match="Order 3.0 not supported|Order 3 not supported"):
        tn.linalg.matrix_norm(A, 3)
    with pytest.raises(RuntimeError, match="input must be 1D or 2D"):
        tn.linalg.norm(tn.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 1"):
        tn.linalg.multi_dot([A])
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        tn.linalg.multi_dot([A, tn.ones(2, 2, dtype=tn.float64)])
    for N in (-1, 0, 1):
        with pytest.raises(RuntimeError, match="N must be greater than 1."):
            tn.linalg.vander(tn.ones(3), N=N)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\)"):
        tn.linalg.tensorinv(tn.ones(2, 3), ind=1)
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type int32"):
        tn.linalg.lu_solve(A, tn.ones(3, dtype=tn.int64), A)


@needs_torch
def test_matrix_exp_float32_accuracy():
    torch.manual_seed(4)
    A = torch.randn(8, 5, 5) * 2
    exact = torch.linalg.matrix_exp(A.double())
    ours = to_torch(tn.linalg.matrix_exp(H.to_tn(A))).double()
    theirs = torch.linalg.matrix_exp(A).double()
    assert (ours - exact).abs().max() <= (theirs - exact).abs().max()


@needs_torch
def test_ldl_against_torch():
    torch.manual_seed(5)
    for n in (1, 2, 5, 9):
        S = torch.randn(3, n, n, dtype=torch.float64)
        S = S + S.mT                       # symmetric indefinite: 2x2 pivots appear
        LD, piv = torch.linalg.ldl_factor(S)
        r = tn.linalg.ldl_factor(H.to_tn(S))
        H.assert_close(tuple(r), (LD, piv), f"ldl_factor {n}")
        assert type(r).__name__ == "linalg_ldl_factor"
        B = torch.randn(n, 2, dtype=torch.float64)
        H.assert_close(tn.linalg.ldl_solve(r.LD, r.pivots, H.to_tn(B)), torch.linalg.ldl_solve(LD, piv, B), f"ldl_solve {n}")
        H.assert_close(tn.linalg.ldl_solve(r.LD, r.pivots, H.to_tn(B)), torch.linalg.solve(S, B), f"ldl_solve = solve {n}")
    # a 2x2 pivot for sure: [[0, 1], [1, 0]]
    Z = torch.tensor([[0., 1., 2.], [1., 0., 3.], [2., 3., 0.]], dtype=torch.float64)
    H.assert_close(tuple(tn.linalg.ldl_factor(H.to_tn(Z))), tuple(torch.linalg.ldl_factor(Z)), "ldl_factor 2x2 block")
    H.assert_close(tuple(tn.linalg.ldl_factor_ex(H.to_tn(torch.zeros(2, 2)))), tuple(torch.linalg.ldl_factor_ex(torch.zeros(2, 2))), "ldl_factor_ex singular")


@needs_torch
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_complex_against_torch(dtype, hermitian):
    """complex LDL: hermitian=False is zsytrf / zsytrs (A = A^T), True zhetrf / zhetrs (A = A^H):
    LD and the pivots equal torch's (LAPACK's); solves batched and broadcast, non-contiguous."""
    dt = getattr(torch, dtype)
    tol = 1e-10 if dtype == "complex128" else 2e-4
    torch.manual_seed(11)
    for n in (0, 1, 2, 3, 6, 13):
        R = torch.randn(2, 3, n, n, dtype=dt)
        S = R + (R.mH if hermitian else R.mT)
        LD, piv = torch.linalg.ldl_factor(S, hermitian=hermitian)
        r = tn.linalg.ldl_factor(H.to_tn(S, noncontig=True), hermitian=hermitian)
        assert r.pivots.tolist() == piv.tolist(), n
        H.assert_close(r.LD, LD, f"ldl_factor {dtype} {n}", rtol=tol, atol=tol)
        LDx, pivx, info = torch.linalg.ldl_factor_ex(S, hermitian=hermitian)
        rx = tn.linalg.ldl_factor_ex(H.to_tn(S), hermitian=hermitian)
        assert rx.pivots.tolist() == pivx.tolist() and rx.info.tolist() == info.tolist()
        B = torch.randn(3, n, 2, dtype=dt)            # broadcast against LD's batch dims (2, 3)
        X = torch.linalg.ldl_solve(LD, piv, B, hermitian=hermitian)
        ours = tn.linalg.ldl_solve(r.LD, r.pivots, H.to_tn(B, noncontig=True), hermitian=hermitian)
        H.assert_close(ours, X, f"ldl_solve {dtype} {n}", rtol=tol, atol=tol)
        if n:
            H.assert_close(tn.matmul(H.to_tn(S), ours), B.expand(2, 3, n, 2), f"S X = B {dtype} {n}", rtol=tol * 10, atol=tol * 10)
    # a 2x2 block for sure (a zero diagonal), and a singular matrix (info, as torch's)
    Z = torch.tensor([[0, 1 - 2j, 2], [1 + 2j, 0, 3j], [2, -3j, 0]], dtype=dt)
    Z = Z if hermitian else Z.tril() + Z.tril(-1).mT
    LD, piv = torch.linalg.ldl_factor(Z, hermitian=hermitian)
    r = tn.linalg.ldl_factor(H.to_tn(Z), hermitian=hermitian)
    assert r.pivots.tolist() == piv.tolist() and min(piv.tolist()) < 0
    H.assert_close(r.LD, LD, "ldl_factor 2x2 block", rtol=tol, atol=tol)
    Zs = torch.zeros(2, 2, dtype=dt)
    LD, piv, info = torch.linalg.ldl_factor_ex(Zs, hermitian=hermitian)
    r = tn.linalg.ldl_factor_ex(H.to_tn(Zs), hermitian=hermitian)
    assert r.info.tolist() == info.tolist() == 1 and r.pivots.tolist() == piv.tolist()
    H.assert_close(r.LD, LD, "ldl_factor_ex singular")
    with pytest.raises(RuntimeError, match="could not be completed"):   # torch 1.13: an internal assert
        tn.linalg.ldl_factor(H.to_tn(Zs), hermitian=hermitian)
    with pytest.raises(RuntimeError, match="square"):
        tn.linalg.ldl_factor(H.to_tn(torch.ones(2, 3, dtype=dt)), hermitian=hermitian)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tn.linalg.ldl_factor(H.to_tn(torch.ones(3, dtype=dt)), hermitian=hermitian)
    LD, piv = torch.linalg.ldl_factor(torch.eye(3, dtype=dt), hermitian=hermitian)
    with pytest.raises(RuntimeError, match="same dtype"):
        tn.linalg.ldl_solve(H.to_tn(LD), H.to_tn(piv), H.to_tn(torch.ones(3, 1)), hermitian=hermitian)


def test_ldl_hermitian_reads_the_lower_triangle_and_real_diagonal():
    """hetrf reads A's lower triangle and the real parts of its diagonal (torch's too); D's
    diagonal comes out real."""
    torch.manual_seed(12)
    R = torch.randn(5, 5, dtype=torch.complex128)
    Hm = R + R.mH
    LD, piv = torch.linalg.ldl_factor(Hm, hermitian=True)
    junk = Hm.tril() + torch.randn(5, 5, dtype=torch.complex128).triu(1) + 1j * torch.diag(torch.randn(5)).to(torch.complex128)
    r = tn.linalg.ldl_factor(H.to_tn(junk), hermitian=True)
    assert r.pivots.tolist() == piv.tolist()
    H.assert_close(r.LD, LD, "ldl_factor hermitian junk triangle")
    assert tn.linalg.diagonal(r.LD).imag.abs().max().item() == 0
