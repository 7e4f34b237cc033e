"""Issue 20's last op_db names: torch.ormqr, torch.histogramdd, torch.svd_lowrank,
torch.pca_lowrank and torch.symeig (removed in 2025 PyTorch), against torch 1.13.

ormqr: values for every side/transpose, batched, non-contiguous, 0-size, float32/float64;
gradients (2025 PyTorch differentiates ormqr, 1.13 did not) against torch's gradients of the
same product through householder_product, and float64 gradcheck. histogramdd: counts,
weights, density, range, given (also unsorted) edges, NaN and out-of-range points, 0 points.
The low-rank SVDs: with the same seed our randn is torch's, so for inputs of rank <= q the
results are torch's (up to the signs of the singular vectors); otherwise identities
(orthonormality, reconstruction, singular values against the full SVD). C twin:
tests/test_ormqr_histogramdd.c."""
import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def T(t):
    """torch -> ours (a copy, same strides where the source is a transposed view)"""
    return tn.from_numpy(np.ascontiguousarray(t.detach().numpy()))


def P(x):
    return torch.from_numpy(np.array(x.detach().numpy()))


def close(ours, ref, rtol=1e-7, atol=1e-9):
    r = P(ours)
    assert r.shape == ref.shape and r.dtype == ref.dtype, (r.shape, ref.shape, r.dtype, ref.dtype)
    torch.testing.assert_close(r, ref.detach(), rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------- ormqr
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("batch", [(), (3,), (2, 1)])
def test_ormqr_values(dtype, left, transpose, batch):
    g = torch.Generator().manual_seed(1)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    for mn, ka in [(5, 3), (4, 4), (3, 5), (5, 0)]:
        A = torch.randn(*batch, mn, ka, generator=g, dtype=dtype)
        a, tau = torch.geqrf(A)
        oth = 4
        C = torch.randn(*batch, oth, mn, generator=g, dtype=dtype).mT if left else \
            torch.randn(*batch, mn, oth, generator=g, dtype=dtype).mT   # non-contiguous views
        ref = torch.ormqr(a, tau, C, left, transpose)
        c = tn.from_numpy(C.numpy().swapaxes(-1, -2).copy()).mT   # ours non-contiguous too
        assert not c.is_contiguous()
        close(tn.ormqr(T(a), T(tau), c, left, transpose), ref, **tol)
        close(T(a).ormqr(T(tau), c, left=left, transpose=transpose), ref, **tol)


@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
def test_ormqr_complex(dtype):
    """complex reflectors: H_i = I - tau_i v_i v_i^H, transpose=True is Q^H (LAPACK's unmqr)"""
    g = torch.Generator().manual_seed(12)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.complex64 else dict(rtol=1e-10, atol=1e-12)
    a = torch.randn(2, 5, 3, generator=g, dtype=dtype)
    tau = torch.randn(2, 3, generator=g, dtype=dtype)
    for left in (True, False):
        for transpose in (False, True):
            C = torch.randn(*((2, 5, 4) if left else (2, 4, 5)), generator=g, dtype=dtype)
            close(tn.ormqr(T(a), T(tau), T(C), left, transpose), torch.ormqr(a, tau, C, left, transpose), **tol)


def test_ormqr_zero_size_and_identities():
    for shape_a, shape_t, shape_c in [((0, 4, 2), (0, 2), (0, 4, 3)), ((4, 2), (2,), (4, 0)), ((4, 0), (0,), (4, 3))]:
        a, t, c = (torch.randn(s, dtype=torch.float64) for s in (shape_a, shape_t, shape_c))
        close(tn.ormqr(T(a), T(t), T(c)), torch.ormqr(a, t, c))
    # Q^T (Q C) = C
    a, tau = torch.geqrf(torch.randn(6, 4, dtype=torch.float64))
    C = torch.randn(6, 3, dtype=torch.float64)
    QC = tn.ormqr(T(a), T(tau), T(C))
    close(tn.ormqr(T(a), T(tau), QC, transpose=True), C, rtol=1e-12, atol=1e-12)


def _ormqr_via_householder(a, tau, C, left, transpose):
    """op(Q) C / C op(Q) with Q = householder_product of a padded to mn x mn (a different path)"""
    mn, k = a.shape[-2], tau.shape[-1]
    pad = torch.zeros(*a.shape[:-1], mn - k, dtype=a.dtype)
    Q = torch.linalg.householder_product(torch.cat([a[..., :k], pad], -1), tau)
    Q = Q.mH if transpose else Q   # (conjugate transpose: torch.ormqr's transpose=True)
    return Q @ C if left else C @ Q


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_ormqr_gradients(dtype, left, transpose):
    """2025 PyTorch differentiates ormqr in all three inputs (1.13: no derivative); the
    reference is torch's gradient of the same product through householder_product"""
    g = torch.Generator().manual_seed(2)
    a = torch.randn(2, 5, 3, generator=g, dtype=dtype, requires_grad=True)
    tau = torch.randn(2, 3, generator=g, dtype=dtype, requires_grad=True)
    C = torch.randn(*((2, 5, 4) if left else (2, 4, 5)), generator=g, dtype=dtype, requires_grad=True)
    W = torch.randn(C.shape, generator=g, dtype=dtype)
    ref = _ormqr_via_householder(a, tau, C, left, transpose)
    ref_grads = torch.autograd.grad((ref * W).sum().real, (a, tau, C))
    oa, ot, oc = (T(x).requires_grad_() for x in (a, tau, C))
    out = tn.ormqr(oa, ot, oc, left, transpose)
    close(out, ref.detach(), rtol=1e-10, atol=1e-12)
    assert out.grad_fn.name() == "OrmqrBackward0"
    (out * T(W)).sum().real.backward()
    # a's strict upper triangle and the columns past k do not enter: zero gradients, as torch's
    for got, want in zip((oa.grad, ot.grad, oc.grad), ref_grads):
        close(got, want, rtol=1e-9, atol=1e-10)
    if dtype == torch.float64:
        assert tn.autograd.gradcheck(lambda x, y, z: tn.ormqr(x, y, z, left, transpose), (oa, ot, oc))


def test_ormqr_errors():
    z = torch.randn(())
    bad = [
        (z, z, z, {}),
        (torch.ones(5, 0), torch.ones(5), torch.ones(5, 5), dict(left=True, transpose=True)),   # torch issue 85218
        (torch.randn(2, 5, 3), torch.randn(2, 3), torch.randn(2, 4, 3), {}),
        (torch.randn(2, 5, 3), torch.randn(2, 3), torch.randn(2, 3, 4), dict(left=False)),
        (torch.randn(2, 5, 3), torch.randn(3), torch.randn(2, 5, 2), {}),
        (torch.randn(2, 5, 3), torch.randn(2, 3), torch.randn(5, 2), {}),
        (torch.randn(2, 5, 3), torch.randn(2, 3), torch.randn(3, 5, 2), {}),
        (torch.randn(2, 5, 3), torch.randn(2, 3, dtype=torch.float64), torch.randn(2, 5, 2), {}),
        (torch.ones(5, 3, dtype=torch.int64), torch.ones(3, dtype=torch.int64), torch.ones(5, 2, dtype=torch.int64), {}),
    ]
    for a, t, c, kw in bad:
        with pytest.raises(RuntimeError):
            torch.ormqr(a, t, c, **kw)
        with pytest.raises(RuntimeError):
            tn.ormqr(T(a), T(t), T(c), **kw)


# --------------------------------------------------------------------------- histogramdd
def _okw(kw):
    """histogramdd's keyword arguments with the tensors (weight, edge lists) as ours"""
    def conv(k, v):
        if k == "bins" and isinstance(v, list) and v and isinstance(v[0], torch.Tensor):
            return [T(b) for b in v]
        return T(v) if k == "weight" else v
    return {k: conv(k, v) for k, v in kw.items()}


def _ours(t):
    """a transposed view where t is one (non-contiguous points)"""
    return T(t.mT.contiguous()).mT if t.ndim == 2 and not t.is_contiguous() else T(t)


def _hist_close(ours, ref, rtol=1e-7, atol=1e-9):
    close(ours.hist, ref.hist, rtol, atol)
    assert isinstance(ours.bin_edges, tuple) and len(ours.bin_edges) == len(ref.bin_edges)
    for o, r in zip(ours.bin_edges, ref.bin_edges):
        close(o, r, rtol, atol)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_histogramdd_against_torch(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, 200, generator=g, dtype=dtype).mT   # non-contiguous points
    assert not _ours(x).is_contiguous()
    w = torch.rand(200, generator=g, dtype=dtype)
    e = [torch.tensor([-3., -0.5, 0.1, 3.], dtype=dtype), torch.tensor([-1., 0., 2.], dtype=dtype),
         torch.tensor([-2., 2.], dtype=dtype)]
    cases = [
        (x[:, [0, 2]], dict(bins=4)),
        (x[:, [0, 2]], dict(bins=[3, 5], range=[-1., 1., -2., 0.5])),
        (x, dict(bins=[2, 3, 4], range=[-1, 1, -2, 0.5, 0, 3], weight=w)),
        (x, dict(bins=[2, 3, 4], range=[-1, 1, -2, 0.5, 0, 3], weight=w, density=True)),
        (x, dict(bins=e)),
        (x, dict(bins=e, weight=w, density=True)),
        (x.reshape(10, 20, 3), dict(bins=[1, 2, 3], range=[-1, 1, -1, 1, -1, 1])),   # batched points
        (torch.randn(0, 2, dtype=dtype), dict(bins=[2, 3])),                           # no points: [0, 1]
        (torch.randn(4, 2, 0, dtype=dtype), dict(bins=[])),                            # no dims
        (torch.full((5, 2), 2., dtype=dtype), dict(bins=3)),                           # a degenerate range
    ]
    for inp, kw in cases:
        ref = torch.histogramdd(inp, **kw)
        tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == torch.float32 else {}
        _hist_close(tn.histogramdd(_ours(inp), **_okw(kw)), ref, **tol)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_histogramdd_nan_points_not_counted(dtype):
    """a point with a NaN coordinate is counted nowhere: 2025 PyTorch's kernel skips it (1.13's
    binned NaN somewhere), so the reference is torch's histogram of the other points"""
    g = torch.Generator().manual_seed(11)
    x = torch.randn(200, 3, generator=g, dtype=dtype)
    x[::17, 1] = float("nan")
    keep = ~x.isnan().any(-1)
    for kw in (dict(bins=[2, 3, 4], range=[-1, 1, -2, 0.5, 0, 3]),
               dict(bins=[torch.tensor([-3., 0., 3.], dtype=dtype)] * 3, weight=torch.rand(200, generator=g, dtype=dtype))):
        ref_kw = dict(kw, weight=kw["weight"][keep]) if "weight" in kw else kw
        ref = torch.histogramdd(x[keep], **ref_kw)
        _hist_close(tn.histogramdd(T(x), **_okw(kw)), ref)
    with pytest.raises(RuntimeError, match="is not finite"):   # no range: the data's min/max are NaN
        tn.histogramdd(T(x), bins=2)


def test_histogramdd_unsorted_edges_as_torch():
    """PyTorch's kernel bins by std::upper_bound, whatever the edges' order (op_db's samples
    give random edges): ours bins the same way"""
    g = torch.Generator().manual_seed(4)
    for _ in range(5):
        x = torch.randn(60, 3, generator=g, dtype=torch.float64) * 3
        edges = [torch.randn(n, generator=g, dtype=torch.float64) * 3 for n in (4, 2, 5)]
        ref = torch.histogramdd(x, bins=edges)
        _hist_close(tn.histogramdd(T(x), bins=[T(e) for e in edges]), ref)


def test_histogramdd_density_integrates_to_one():
    x = tn.randn(500, 2, dtype=tn.float64)
    h = tn.histogramdd(x, bins=[4, 6], density=True)
    widths = [e[1:] - e[:-1] for e in h.bin_edges]
    total = (h.hist * widths[0].unsqueeze(1) * widths[1].unsqueeze(0)).sum().item()
    assert abs(total - 1) < 1e-12


def test_histogramdd_errors():
    x = torch.randn(10, 2)
    bad = [
        (x, dict(bins=0)), (x, dict(bins=[2, -1])),
        (x, dict(bins=2, range=[0., float("nan"), 0., 1.])), (x, dict(bins=2, range=[1., 0., 0., 1.])),
        (x, dict(bins=2, range=[0., 1.])),
        (x, dict(bins=2, weight=torch.ones(9))), (x, dict(bins=2, weight=torch.ones(10, dtype=torch.float64))),
        (x[0], dict(bins=2)), (x.long(), dict(bins=2)),
        (x, dict(bins=[torch.ones(2, 2), torch.linspace(0, 1, 3)])), (x, dict(bins=[torch.linspace(0, 1, 3), torch.ones(0)])),
        (x, dict(bins=[torch.linspace(0, 1, 3)])),
        (torch.tensor([[float("nan"), 1.], [0., 2.]]), dict(bins=2)),   # the data's range is NaN
    ]
    for inp, kw in bad:
        with pytest.raises(RuntimeError):
            torch.histogramdd(inp, **kw)
        with pytest.raises(RuntimeError):
            tn.histogramdd(T(inp), **_okw(kw))
    # bin counts for more dims than the points have: 2025 raises (1.13 read the first D counts)
    with pytest.raises(RuntimeError, match="The size of bins must be equal to the innermost dimension"):
        tn.histogramdd(T(x), bins=[2, 3, 4])
    with pytest.raises(TypeError):
        tn.histogramdd(T(x), bins="auto")
    with pytest.raises(TypeError):   # bins is required, as torch's
        tn.histogramdd(T(x))
    # range positionally, as torch's parser takes it
    _hist_close(tn.histogramdd(T(x), 3, [0., 1., 0., 1.]), torch.histogramdd(x, 3, [0., 1., 0., 1.]))


# --------------------------------------------------------------------------- svd_lowrank, pca_lowrank
def _gauge(U, S, V):
    s = ((torch.arange(1., U.shape[-2] + 1).to(U.dtype).unsqueeze(-1) * U).sum(-2, keepdim=True)).sign()
    return U * s, S, V * s


@pytest.mark.parametrize("shape,k", [((7, 6), 3), ((4, 9), 2), ((2, 8, 5), 4), ((6, 6), 6)])
def test_svd_lowrank_exact_rank_matches_torch(shape, k):
    """rank-k input, q = k: the result is the SVD, and (same seed, same randn stream) torch's"""
    *b, m, n = shape
    g = torch.Generator().manual_seed(5)
    A = torch.randn(*b, m, k, generator=g, dtype=torch.float64) @ torch.randn(*b, k, n, generator=g, dtype=torch.float64)
    torch.manual_seed(7)
    ref = _gauge(*torch.svd_lowrank(A, q=k))
    tn.manual_seed(7)
    got = tn.svd_lowrank(T(A), q=k)
    for o, r in zip(_gauge(*(P(t) for t in got)), ref):
        torch.testing.assert_close(o, r, rtol=1e-8, atol=1e-10)
    torch.testing.assert_close(P(got[1]), torch.linalg.svdvals(A)[..., :k], rtol=1e-9, atol=1e-10)


def test_svd_lowrank_follows_2025_stream():
    """full-rank tall input with M: 2025's algorithm (A's basis from randn(n, q)) step by step
    in torch, against ours with the same seed; and the identities"""
    g = torch.Generator().manual_seed(6)
    A = torch.randn(9, 6, generator=g, dtype=torch.float64)
    M = torch.randn(9, 6, generator=g, dtype=torch.float64)
    torch.manual_seed(3)
    R = torch.randn(6, 3, dtype=torch.float64)
    X = A - M
    Q = torch.linalg.qr(X @ R).Q
    for _ in range(2):
        Q = torch.linalg.qr(X.mT @ Q).Q
        Q = torch.linalg.qr(X @ Q).Q
    U, S, Vh = torch.linalg.svd(Q.mT @ X, full_matrices=False)
    ref = _gauge(Q @ U, S, Vh.mT)
    tn.manual_seed(3)
    got = tn.svd_lowrank(T(A), q=3, M=T(M))
    for o, r in zip(_gauge(*(P(t) for t in got)), ref):
        torch.testing.assert_close(o, r, rtol=1e-9, atol=1e-10)
    Uo, So, Vo = (P(t) for t in got)
    torch.testing.assert_close(Uo.mT @ Uo, torch.eye(3, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(Vo.mT @ Vo, torch.eye(3, dtype=torch.float64), rtol=0, atol=1e-12)
    full = torch.linalg.svdvals(X)
    assert (So <= full[:3] * (1 + 1e-12)).all() and (So >= 0.5 * full[:3]).all()   # a rank-3 approximation's


def test_svd_lowrank_gradients_match_torch():
    g = torch.Generator().manual_seed(8)
    a = torch.randn(6, 2, generator=g, dtype=torch.float64)
    b = torch.randn(5, 2, generator=g, dtype=torch.float64)
    A = (a @ b.mT).requires_grad_()
    torch.manual_seed(1)
    ref = _gauge(*torch.svd_lowrank(A, q=2))
    W = [torch.randn(r.shape, generator=g, dtype=torch.float64) for r in ref]
    gref, = torch.autograd.grad(sum((r * w).sum() for r, w in zip(ref, W)), A)
    oA = T(A).requires_grad_()
    tn.manual_seed(1)
    U, S, V = tn.svd_lowrank(oA, q=2)
    s = ((tn.arange(1., 7., dtype=tn.float64).unsqueeze(-1) * U).sum(-2, keepdim=True)).sign()
    loss = (U * s * T(W[0])).sum() + (S * T(W[1])).sum() + (V * s * T(W[2])).sum()
    loss.backward()
    torch.testing.assert_close(P(oA.grad), gref, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank(center):
    g = torch.Generator().manual_seed(9)
    A = torch.randn(3, 20, 2, generator=g, dtype=torch.float64) @ torch.randn(3, 2, 6, generator=g, dtype=torch.float64)
    A = A + torch.randn(3, 1, 6, generator=g, dtype=torch.float64)   # a mean row: rank 3, 2 once centered
    q = 2 if center else 3
    torch.manual_seed(2)
    ref = _gauge(*torch.pca_lowrank(A, q=q, center=center))
    tn.manual_seed(2)
    got = tn.pca_lowrank(T(A), q=q, center=center)
    for o, r in zip(_gauge(*(P(t) for t in got)), ref):
        torch.testing.assert_close(o, r, rtol=1e-8, atol=1e-9)
    # defaults: q = min(6, m, n); the errors
    tn.manual_seed(0)
    assert tn.pca_lowrank(T(A))[1].shape == (3, 6)
    with pytest.raises(ValueError, match="must be non-negative integer"):
        tn.pca_lowrank(T(A), q=7)
    with pytest.raises(ValueError, match="niter"):
        tn.pca_lowrank(T(A), niter=-1)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tn.svd_lowrank(tn.ones(3))


def test_lowrank_float32_and_random_stream():
    """float32, and the results change with the seed (the test matrix is random) while the
    singular values of a rank-q input do not"""
    g = torch.Generator().manual_seed(10)
    A = torch.randn(8, 2, generator=g) @ torch.randn(2, 7, generator=g)
    tn.manual_seed(1)
    U1, S1, V1 = tn.svd_lowrank(T(A), q=2)
    tn.manual_seed(2)
    U2, S2, V2 = tn.svd_lowrank(T(A), q=2)
    assert U1.dtype == tn.float32 and S1.shape == (2,)
    torch.testing.assert_close(P(S1), P(S2), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(P(S1), torch.linalg.svdvals(A)[:2], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(P((U1 * S1) @ V1.mT), A, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------- symeig
def test_symeig_is_removed_as_in_2025():
    """2025 PyTorch's torch.symeig (and Tensor.symeig) raise this RuntimeError (removed after
    its 1.9 deprecation), pointing to linalg.eigh / eigvalsh"""
    A = tn.eye(3)
    for call in (lambda: tn.symeig(A), lambda: tn.symeig(A, eigenvectors=True, upper=False), lambda: A.symeig()):
        with pytest.raises(RuntimeError, match=r"deprecated since version 1\.9 and is now removed") as e:
            call()
        assert "torch.linalg.eigh(A, UPLO='U' if upper else 'L')" in str(e.value)
