"""Complex tensors and torch.fft on "cuda": from Python, on the checking stand-in GPU (the
CPU's kernels behind a check that no host pointer reaches the device; with
TN_STAND_IN_UNREADABLE=1 the device memory is unreadable from the host between backend
calls), in a subprocess (the stand-in replaces the process's CUDA backend). Values and
gradients against PyTorch 1.13 on the CPU (the oracle), the results on "cuda". The C cases,
including the real GPU's, are tests/cuda_cases_complex.h.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_cuda_complex.py
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
    def cplx(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    def close(a, b, tol=1e-9):
        assert a.device.type == "cuda", a.device
        assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
        got = a.detach().cpu().numpy()
        want = b.detach().resolve_conj().numpy()
        assert got.shape == want.shape, (got.shape, want.shape)
        assert np.allclose(got, want, rtol=tol, atol=tol), (got, want)
    def pair(x, grad=True):
        return tn.tensor(x).cuda().requires_grad_(grad), torch.tensor(x, requires_grad=grad)
    def check(f, *xs, tol=1e-9, grad=True):
        ours, theirs = zip(*(pair(x, grad) for x in xs))
        a, b = f(tn, *ours), f(torch, *theirs)
        close(a, b, tol)
        if grad:
            w = rng.standard_normal(tuple(b.shape))
            lo = (a * tn.tensor(w).cuda()).abs().sum() if a.is_complex() else (a * tn.tensor(w).cuda()).sum()
            lt = (b * torch.tensor(w)).abs().sum() if b.is_complex() else (b * torch.tensor(w)).sum()
            lo.backward()
            lt.backward()
            for o, t in zip(ours, theirs):
                close(o.grad, t.grad, tol * 10)

    # x.cuda() of complex tensors, both dtypes, printing and the views
    z = tn.tensor(cplx(3, 4))
    g = z.cuda()
    assert g.device.type == "cuda" and g.dtype == tn.complex128
    assert "device='cuda:0'" in repr(g) and repr(g).splitlines()[0] == repr(z).splitlines()[0], (repr(g), repr(z))
    g64 = tn.tensor(cplx(5)).to(tn.complex64).cuda()
    assert g64.dtype == tn.complex64 and g64.device.type == "cuda"
    close(g.real, torch.tensor(z.numpy()).real)
    close(tn.view_as_real(g), torch.view_as_real(torch.tensor(z.numpy())))
    assert complex(g[1, 2].item()) == complex(z[1, 2].item())

    # elementwise, reductions, matmul and their gradients
    A, B = cplx(4, 5), cplx(4, 5)
    check(lambda m, a, b: a * b + a / b - 2 * a, A, B)
    check(lambda m, a, b: m.exp(a) * m.sin(b) + m.sqrt(a) - m.log(b), A, B)
    check(lambda m, a: a.abs() + a.angle(), A)
    check(lambda m, a: a.conj() * a.T.T, A)
    check(lambda m, a, b: a ** b, A, B, tol=1e-8)
    check(lambda m, a: a.sum(0) + a.mean(1).sum() + a.prod(1).sum(), A)
    check(lambda m, a, b: a @ b.T, A, B)
    check(lambda m, a, b: m.bmm(a, b), cplx(3, 2, 4), cplx(3, 4, 5))
    check(lambda m, a, b: m.where(a.real > 0, a, b), A, B)
    check(lambda m, a: m.cumprod(a, 1), A)
    close((tn.tensor(A).cuda() == tn.tensor(A).cuda()), torch.ones(4, 5, dtype=torch.bool))
    check(lambda m, a: a.to(m.complex64).to(m.complex128), A, tol=1e-6, grad=False)

    # torch.fft: lengths 1, 7, 64, 1000, batched, the norm modes, n= padding, 2-d and n-d
    for L in (1, 7, 64, 1000):
        for norm in (None, "forward", "ortho"):
            check(lambda m, a: m.fft.fft(a, norm=norm), cplx(3, L))
            check(lambda m, a: m.fft.rfft(a, norm=norm), rng.standard_normal((2, L)))
            check(lambda m, a: m.fft.ifft(m.fft.fft(a), norm=norm), cplx(2, L))
        if L > 1:
            check(lambda m, a: m.fft.irfft(a), cplx(3, L))
    check(lambda m, a: m.fft.fft(a, n=12, dim=0), cplx(5, 3))
    check(lambda m, a: m.fft.fft2(a, norm="ortho"), cplx(2, 6, 5))
    check(lambda m, a: m.fft.rfftn(a), rng.standard_normal((2, 3, 4, 6)))
    check(lambda m, a: m.fft.irfftn(a, s=(3, 4, 6)), cplx(2, 3, 4, 4))
    check(lambda m, a: m.fft.hfft(a), cplx(3, 5))
    check(lambda m, a: m.fft.ihfft(a), rng.standard_normal((3, 8)))
    f32 = tn.fft.fft(tn.tensor(cplx(4, 16)).to(tn.complex64).cuda())
    assert f32.dtype == tn.complex64 and f32.device.type == "cuda"
    try:
        tn.fft.fft(g, norm="bogus")
    except RuntimeError as e:
        assert "Invalid normalization mode" in str(e), str(e)
    else:
        raise AssertionError("a bad norm did not raise")
    print("ok")
""")


@pytest.mark.parametrize("unreadable", ["0", "1"])
def test_complex_and_fft_on_stand_in_cuda(unreadable):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env = dict(os.environ, TN_STAND_IN_UNREADABLE=unreadable)
    r = subprocess.run([sys.executable, "-c", SCRIPT, here], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
