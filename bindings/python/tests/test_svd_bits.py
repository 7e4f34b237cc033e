"""Issue 26: the SVD's QR sweeps queue their rotations and apply them to U's and V's rows in
packed column chunks split between threads (src/ops/linalg_decomp.c, tn__la_bdsqr). Each
column sees the same operations in the same order for any thread count: U, S and Vh must be
the same bits at 1 and 2 threads (and are the old row-by-row code's bits: tests/test_svd_bits.c
keeps it as the reference). The factors are checked against torch too."""
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def _bits(ts):
    return [t.tolist() for t in ts]


def _cases():
    tn.manual_seed(11)
    out = []
    for dt in (tn.float64, tn.float32):
        out += [
            ("tall", tn.randn(150, 90, dtype=dt)),
            ("wide", tn.randn(70, 133, dtype=dt)),
            ("square", tn.randn(256, 256, dtype=dt)),
            ("1x1", tn.randn(1, 1, dtype=dt)),
            ("0x4", tn.randn(0, 4, dtype=dt)),
            ("rank 4", tn.randn(60, 4, dtype=dt) @ tn.randn(4, 50, dtype=dt)),
            ("repeated", tn.eye(30, dtype=dt) * 2),
            ("batched", tn.randn(2, 3, 40, 25, dtype=dt)),
            ("non-contiguous", tn.randn(80, 120, dtype=dt).transpose(0, 1)[::2]),
        ]
    out.append(("complex", tn.randn(40, 30, dtype=tn.complex128)))
    return out


def test_svd_same_bits_one_and_two_threads():
    saved = tn.get_num_threads()
    try:
        for name, a in _cases():
            res = []
            for t in (1, 2):
                tn.set_num_threads(t)
                u, s, vh = tn.linalg.svd(a, full_matrices=False)
                uf, sf, vhf = tn.linalg.svd(a)
                res.append(_bits([u, s, vh, uf, sf, vhf, tn.linalg.svdvals(a)]))
            assert res[0] == res[1], f"{name} {a.dtype}: bits differ between 1 and 2 threads"
    finally:
        tn.set_num_threads(saved)


@pytest.mark.parametrize("dt", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(200, 120), (120, 200), (257, 257)])
def test_svd_against_torch(dt, shape):
    tn.manual_seed(5)
    a = tn.randn(*shape, dtype=getattr(tn, dt))
    ta = torch.tensor(a.tolist(), dtype=getattr(torch, dt))
    u, s, vh = tn.linalg.svd(a, full_matrices=False)
    ts = torch.linalg.svdvals(ta)
    tol = 1e-10 if dt == "float64" else 2e-4
    k = min(shape)
    assert u.shape == (shape[0], k) and s.shape == (k,) and vh.shape == (k, shape[1])
    tu, tsv, tvh = (torch.tensor(x.tolist(), dtype=getattr(torch, dt)) for x in (u, s, vh))
    assert torch.allclose(tsv, ts, rtol=tol, atol=tol * float(ts[0]))
    assert torch.allclose(tu @ torch.diag(tsv) @ tvh, ta, atol=tol * 10 * float(ts[0]))
    eye = torch.eye(k, dtype=getattr(torch, dt))
    assert torch.allclose(tu.T @ tu, eye, atol=tol * 10) and torch.allclose(tvh @ tvh.T, eye, atol=tol * 10)


def test_svd_bad_input():
    with pytest.raises(RuntimeError):
        tn.linalg.svd(tn.randn(5))          # 1-d: torch's error too
    with pytest.raises(RuntimeError):
        tn.linalg.svd(tn.ones(3, 3, dtype=tn.int64))
