"""torch.linalg on "cuda" tensors through tn_backend.linalg (cuSOLVER on a GPU): from Python,
on the checking stand-in GPU (the CPU's kernels behind a check that no host pointer reaches
the device), in a subprocess (the stand-in replaces the process's CUDA backend). Values and
gradients against PyTorch 1.13 on the CPU (the oracle), the results on "cuda", the CPU
path's errors. The C cases, including the real GPU's, are tests/cuda_cases_linalg.h.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_cuda_linalg.py
"""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    rng = np.random.default_rng(26)
    A = rng.standard_normal((2, 4, 4))
    B = rng.standard_normal((2, 4, 3))
    T = rng.standard_normal((5, 3))
    def ours(x, grad=True):
        t = tn.tensor(x).cuda()
        t.requires_grad_(grad)
        return t
    def theirs(x, grad=True):
        return torch.tensor(x, requires_grad=grad)
    def close(a, b, tol=1e-9):
        assert a.device.type == "cuda", a.device
        got = a.detach().cpu().numpy()
        want = b.detach().numpy()
        assert got.shape == want.shape, (got.shape, want.shape)
        assert np.allclose(got, want, rtol=tol, atol=tol), (got, want)
    cases = {
        "solve": lambda m, x, y: m.linalg.solve(x(A), x(B)),
        "inv": lambda m, x, y: m.linalg.inv(x(A)),
        "det": lambda m, x, y: m.linalg.det(x(A)),
        "slogdet": lambda m, x, y: m.linalg.slogdet(x(A))[1],
        "cholesky": lambda m, x, y: m.linalg.cholesky(y(x(A))),
        "cholesky upper": lambda m, x, y: m.linalg.cholesky(y(x(A)), upper=True),
        "qr R": lambda m, x, y: m.linalg.qr(x(T))[1].abs(),
        "eigvalsh": lambda m, x, y: m.linalg.eigvalsh(y(x(A))),
        "eigh vectors": lambda m, x, y: m.linalg.eigh(y(x(A)))[1] ** 2,
        "svdvals": lambda m, x, y: m.linalg.svdvals(x(T)),
        "svd U Vh": lambda m, x, y: (lambda u, s, vh: u @ vh)(*m.linalg.svd(x(T), full_matrices=False)),
        "lu_factor": lambda m, x, y: m.linalg.lu_factor(x(A))[0],
        "lu_solve": lambda m, x, y: m.linalg.lu_solve(*m.linalg.lu_factor(x(A)), x(B)),
        # the rest of torch.linalg (the entry's trsm and ormqr, device composites)
        "solve_triangular": lambda m, x, y: m.linalg.solve_triangular(y(x(A)).tril(), x(B), upper=False),
        "solve_triangular upper right": lambda m, x, y: m.linalg.solve_triangular(y(x(A)).triu(), x(B).mT, upper=True, left=False),
        "triangular_solve": lambda m, x, y: m.triangular_solve(x(B), y(x(A)), upper=False, transpose=True)[0],
        "cholesky_solve": lambda m, x, y: m.cholesky_solve(x(B), m.linalg.cholesky(y(x(A)))),
        "cholesky_inverse": lambda m, x, y: m.cholesky_inverse(m.linalg.cholesky(y(x(A))), upper=False),
        "lstsq tall": lambda m, x, y: m.linalg.lstsq(x(T), x(T[:, :2])).solution,
        "lstsq wide": lambda m, x, y: m.linalg.lstsq(x(T.T), x(B[0, :3])).solution,
        "householder_product": lambda m, x, y: m.linalg.householder_product(x(T), x(T[0, :2])),
        "pinv": lambda m, x, y: m.linalg.pinv(x(T)),
        "pinv hermitian": lambda m, x, y: m.linalg.pinv(y(x(A)), hermitian=True),
        "matrix_exp": lambda m, x, y: m.linalg.matrix_exp(x(A)),
        "cond": lambda m, x, y: m.linalg.cond(x(A)),
    }
    def spd(m):   # a symmetric positive-definite matrix of t, differentiably
        return lambda t: t @ t.mT + 4 * m.eye(4, dtype=t.dtype).to(t.device)
    for name, f in cases.items():
        ins = []
        def mk_o(x):
            t = ours(x); ins.append(t); return t
        def mk_t(x):
            t = theirs(x); ins.append(t); return t
        o = f(tn, mk_o, spd(tn))
        oi, ins = ins, []
        w = f(torch, mk_t, spd(torch))
        ti = ins
        close(o, w)
        g = np.random.default_rng(1).standard_normal(tuple(w.shape))
        (o * tn.tensor(g).cuda()).sum().backward()
        (w * torch.tensor(g)).sum().backward()
        for a, b in zip(oi, ti):
            close(a.grad, b.grad, 1e-7)
    # the CPU path's errors, on the device
    sing = tn.tensor([[1.0, 2.0], [2.0, 4.0]]).cuda()
    try:
        tn.linalg.inv(sing)
    except RuntimeError as e:
        assert "The diagonal element 2 is zero" in str(e), str(e)
    else:
        raise AssertionError("singular inv did not raise")
    try:
        tn.linalg.cholesky(-tn.eye(2, dtype=tn.float64).cuda())
    except RuntimeError as e:
        assert "leading minor of order 1 is not positive-definite" in str(e), str(e)
    else:
        raise AssertionError("cholesky of a negative matrix did not raise")
    L, info = tn.linalg.cholesky_ex(tn.stack([-tn.eye(2), tn.eye(2)]).cuda())
    assert info.is_cuda and info.tolist() == [1, 0], info
    low = rng.standard_normal((3, 4, 2)) @ rng.standard_normal((3, 2, 5))
    r = tn.linalg.matrix_rank(tn.tensor(low).cuda())
    assert r.is_cuda and r.tolist() == torch.linalg.matrix_rank(torch.tensor(low)).tolist() == [2, 2, 2], r
    # gels, CUDA's only driver: no rank, no singular values; the residuals for m > n
    res = tn.linalg.lstsq(tn.tensor(T).cuda(), tn.tensor(T[:, :1] + 1).cuda())
    assert res.rank.numel() == 0 and res.singular_values.numel() == 0 and res.residuals.is_cuda
    want = torch.linalg.lstsq(torch.tensor(T), torch.tensor(T[:, :1] + 1), driver="gels").residuals
    assert np.allclose(res.residuals.cpu().numpy(), want.numpy()), (res.residuals, want)
    try:
        tn.linalg.lstsq(tn.tensor(T).cuda(), tn.tensor(T).cuda(), driver="gelsd")
    except RuntimeError as e:
        assert "`driver` other than `gels` is not supported on CUDA" in str(e), str(e)
    else:
        raise AssertionError("lstsq gelsd on cuda did not raise")
    # eig / eigvals (TN_LA_GEEV; the stand-in runs the CPU's geev: LAPACK's order, torch's values)
    C = A + 1j * rng.standard_normal((2, 4, 4))
    for x in (A, C, A.astype(np.float32)):
        l, v = tn.linalg.eig(tn.tensor(x).cuda())
        L, V = torch.linalg.eig(torch.tensor(x))
        assert l.is_cuda and v.is_cuda and str(l.dtype) == str(L.dtype), (l.dtype, L.dtype)
        tol = 1e-5 if x.dtype == np.float32 else 1e-9
        close(l, L, tol)
        # each vector torch's up to a unit factor; A v = lambda v
        vv = v.cpu().numpy()
        assert np.abs(np.abs((vv.conj() * V.numpy()).sum(-2)) - 1).max() < 10 * tol
        assert np.abs(x @ vv - vv * l.cpu().numpy()[..., None, :]).max() < 10 * tol
        close(tn.linalg.eigvals(tn.tensor(x).cuda()), torch.linalg.eigvals(torch.tensor(x)), tol)
    # a gradient through eigenvalues and |V| (phase-invariant), float64 and complex128
    for x in (A, C):
        t, u = ours(x), theirs(x)
        lt, vt = tn.linalg.eig(t)
        lu, vu = torch.linalg.eig(u)
        (lt.real ** 3).sum().add(vt.abs().pow(4).sum()).backward()
        (lu.real ** 3).sum().add(vu.abs().pow(4).sum()).backward()
        close(t.grad, u.grad, 1e-7)
    e = tn.linalg.eigvals(tn.zeros(0, 3, 3).cuda())
    assert e.is_cuda and tuple(e.shape) == (0, 3) and str(e.dtype) == "torch.complex64", e
    try:
        tn.linalg.eig(tn.tensor(np.full((2, 2), np.nan)).cuda())
    except RuntimeError as e:
        assert "should not contain infs or NaNs" in str(e), str(e)
    else:
        raise AssertionError("eig of NaN on cuda did not raise")
    print("ok")
""")


def test_linalg_on_stand_in_cuda():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", SCRIPT, here], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


SCRIPT_COMPLEX = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    rng = np.random.default_rng(2626)
    def cx(*s):
        return rng.standard_normal(s) + 1j * rng.standard_normal(s)
    A = cx(2, 4, 4) + 3 * np.eye(4)
    B = cx(2, 4, 3)
    T = cx(5, 3)
    def ours(x, grad=True):
        t = tn.tensor(x).cuda()
        t.requires_grad_(grad)
        return t
    def theirs(x, grad=True):
        return torch.tensor(x, requires_grad=grad)
    def close(a, b, tol=1e-9):
        assert a.device.type == "cuda", a.device
        assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
        got = a.detach().cpu().numpy()
        want = b.detach().numpy()
        assert got.shape == want.shape, (got.shape, want.shape)
        assert np.allclose(got, want, rtol=tol, atol=tol), (got, want)
    # complex128 on "cuda" (the entry's complex ops) against PyTorch on the CPU, with gradients
    cases = {
        "solve": lambda m, x, y: m.linalg.solve(x(A), x(B)),
        "solve strided": lambda m, x, y: m.linalg.solve(x(A).mT, x(B)),
        "inv": lambda m, x, y: m.linalg.inv(x(A)),
        "det": lambda m, x, y: m.linalg.det(x(A)),
        "slogdet sign": lambda m, x, y: m.linalg.slogdet(x(A))[0],
        "slogdet logabsdet": lambda m, x, y: m.linalg.slogdet(x(A))[1],
        "cholesky": lambda m, x, y: m.linalg.cholesky(y(x(A))),
        "cholesky upper": lambda m, x, y: m.linalg.cholesky(y(x(A)), upper=True),
        "lu_factor": lambda m, x, y: m.linalg.lu_factor(x(A))[0],
        "lu_solve": lambda m, x, y: m.linalg.lu_solve(*m.linalg.lu_factor(x(A)), x(B)),
        "qr R": lambda m, x, y: m.linalg.qr(x(T))[1].abs(),
        "eigvalsh": lambda m, x, y: m.linalg.eigvalsh(y(x(A))),
        "eigh |V|": lambda m, x, y: m.linalg.eigh(y(x(A)))[1].abs(),
        "svdvals": lambda m, x, y: m.linalg.svdvals(x(T)),
        "svd U Vh": lambda m, x, y: (lambda u, s, vh: u @ vh)(*m.linalg.svd(x(T), full_matrices=False)),
        "solve_triangular": lambda m, x, y: m.linalg.solve_triangular(x(A).triu(), x(B), upper=True),
        "pinv": lambda m, x, y: m.linalg.pinv(x(T)),
        "pinv hermitian": lambda m, x, y: m.linalg.pinv(y(x(A)), hermitian=True),
        "matrix_exp": lambda m, x, y: m.linalg.matrix_exp(x(A) * 0.3),
        "matrix_rank hermitian": lambda m, x, y: m.linalg.matrix_rank(y(x(A)), hermitian=True).double(),
        "lstsq tall": lambda m, x, y: m.linalg.lstsq(x(T), x(T[:, :2] + 1j), driver="gels").solution,
        "lstsq wide": lambda m, x, y: m.linalg.lstsq(x(T.T), x(B[0, :3]), driver="gels").solution,
    }
    def hpd(m):   # a Hermitian positive-definite matrix of t, differentiably
        return lambda t: t @ t.mT.conj() + 4 * m.eye(4, dtype=t.dtype).to(t.device)
    for name, f in cases.items():
        ins = []
        def mk_o(x):
            t = ours(x); ins.append(t); return t
        def mk_t(x):
            t = theirs(x); ins.append(t); return t
        o = f(tn, mk_o, hpd(tn))
        oi, ins = ins, []
        w = f(torch, mk_t, hpd(torch))
        ti = ins
        try:
            close(o, w)
        except AssertionError as e:
            raise AssertionError(name + ": " + str(e)[:300])
        if not w.requires_grad:   # (matrix_rank: no gradient, on either)
            assert not o.requires_grad, name
            continue
        g = np.random.default_rng(1).standard_normal(tuple(w.shape))
        if w.is_complex():
            g = g + 1j * np.random.default_rng(2).standard_normal(tuple(w.shape))
        try:
            (o * tn.tensor(g).cuda()).real.sum().backward() if o.is_complex() else (o * tn.tensor(g).cuda()).sum().backward()
        except RuntimeError as e:
            raise RuntimeError(name + " backward: " + str(e))
        (w * torch.tensor(g)).real.sum().backward() if w.is_complex() else (w * torch.tensor(g)).sum().backward()
        for a, b in zip(oi, ti):
            try:
                close(a.grad, b.grad, 1e-7)
            except AssertionError as e:
                raise AssertionError(name + " grad: " + str(e)[:300])
    # ldl_factor / ldl_solve on "cuda" (sytrf, sytrs): float64 and complex128 (symmetric)
    for S in (np.real(A) + np.real(A).swapaxes(-1, -2), A + A.swapaxes(-1, -2)):
        ld, piv = tn.linalg.ldl_factor(tn.tensor(S).cuda())
        LD, PIV = torch.linalg.ldl_factor(torch.tensor(S))
        close(ld, LD)
        assert piv.is_cuda and piv.cpu().tolist() == PIV.tolist(), (piv, PIV)
        Bs = B if np.iscomplexobj(S) else np.real(B)
        close(tn.linalg.ldl_solve(ld, piv, tn.tensor(Bs).cuda()), torch.linalg.ldl_solve(LD, PIV, torch.tensor(Bs)))
    try:
        tn.linalg.ldl_factor(tn.tensor(A).cuda(), hermitian=True)
    except RuntimeError as e:
        assert "hermitian=True flag are not supported on cuda" in str(e), str(e)
    else:
        raise AssertionError("complex hermitian ldl_factor on cuda did not raise")
    print("ok")
""")


def test_complex_linalg_on_stand_in_cuda():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", SCRIPT_COMPLEX, here], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
