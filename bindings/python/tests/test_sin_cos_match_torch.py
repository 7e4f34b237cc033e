"""float32 sin and cos give PyTorch's CPU bits (issue 20: dynamic_net's trajectory).

torch 1.13 (and 2025 PyTorch) computes float32 sin / cos with SLEEF's Sleef_sinf8_u10 /
Sleef_cosf8_u10 on each 8 elements of an inner loop from its start (a strided loop is
gathered into a buffer first: the same groups; the last few padded with zeros). SLEEF takes
its Cody-Waite reduction only when all 8 lanes of a group are under 125 in magnitude, else
Payne-Hanek on all 8, so a lane's bits depend on its group: the tests mix both kinds.
src/ops/sleef.c writes that in scalar C and in AVX2 intrinsics (tests/test_ops.c checks the
two agree). Every value is compared bit for bit, NaNs included (SLEEF's NaN is 0xffffffff),
against Debian's python3-torch 1.13 on one thread (its split of a long loop over several
threads starts groups elsewhere); skipped without torch.
"""
import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

FUNCS = [("sin", tn.sin, torch.sin), ("cos", tn.cos, torch.cos)]


def same_bits(ours, theirs):
    a = np.ascontiguousarray(ours.numpy(), dtype=np.float32)
    b = np.ascontiguousarray(theirs.numpy(), dtype=np.float32)
    assert a.shape == b.shape, (a.shape, b.shape)
    bad = a.view(np.uint32) != b.view(np.uint32)
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ, e.g. {a[bad][:3]} here, {b[bad][:3]} under torch"


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.pi, -np.pi, np.pi / 2, 124.99, 125.0, -125.0, 125.00001, 1e4, -1e4,
                    12345.678, 1e30, -1e30, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45,
                    1.1754942e-38, 1e-38, 0.7, 0.69999, 8388608.0, 16777216.0, 2.0 ** 90, 2.0 ** 91, 1e20],
                   np.float32)


def values(n, kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "normal":                     # dynamic_net's range and a bit beyond
        return (rng.standard_normal(n) * 3).astype(np.float32)
    if kind == "bits":                       # every float32 pattern: NaNs (any payload), infinities, subnormals
        return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    if kind == "large":                      # |x| from 1e2 to 1e38: Payne-Hanek
        return (rng.choice([-1, 1], n) * 10.0 ** rng.uniform(2, 38, n)).astype(np.float32)
    if kind == "mixed":                      # groups of 8 with one big lane among small ones
        x = (rng.standard_normal(n) * 3).astype(np.float32)
        x[rng.random(n) < 0.03] = np.float32(1e5)
        return x
    return np.resize(SPECIAL, n)


@pytest.mark.parametrize("name,ours,theirs", FUNCS)
@pytest.mark.parametrize("kind", ["normal", "bits", "large", "mixed", "special"])
def test_contiguous_all_lengths(name, ours, theirs, kind):
    x = values(100003, kind)
    same_bits(ours(tn.from_numpy(x)), theirs(torch.from_numpy(x)))
    for n in list(range(1, 18)) + [31, 33, 1000]:                 # tails of 1 .. 15 after full groups
        same_bits(ours(tn.from_numpy(x[:n].copy())), theirs(torch.from_numpy(x[:n].copy())))
        same_bits(ours(tn.from_numpy(x[5:5 + n].copy())), theirs(torch.from_numpy(x[5:5 + n].copy())))


@pytest.mark.parametrize("name,ours,theirs", FUNCS)
def test_special_values(name, ours, theirs):
    """each special value alone (its group all small or all big) and among small ones"""
    for v in SPECIAL:
        same_bits(ours(tn.tensor(float(v))), theirs(torch.tensor(float(v))))          # 0-d
        x = np.full(11, v, np.float32)
        x[3:] = np.linspace(-3, 3, 8, dtype=np.float32)
        same_bits(ours(tn.from_numpy(x)), theirs(torch.from_numpy(x)))
    r = ours(tn.from_numpy(np.array([np.nan, np.inf, -np.inf], np.float32))).numpy()
    assert (r.view(np.uint32) == 0xffffffff).all()                  # SLEEF's NaN
    r = tn.sin(tn.from_numpy(np.array([-0.0, 0.0], np.float32))).numpy()
    assert list(np.signbit(r)) == [True, False] and tn.cos(tn.tensor(-0.0)).item() == 1.0


@pytest.mark.parametrize("name,ours,theirs", FUNCS)
@pytest.mark.parametrize("kind", ["normal", "mixed", "bits"])
def test_strided_and_in_place(name, ours, theirs, kind):
    x = values(60 * 37, kind, 1).reshape(60, 37)
    tx, ox = torch.from_numpy(x), tn.from_numpy(x)
    same_bits(ours(ox[:, ::3]), theirs(tx[:, ::3]))                  # rows of 13, groups from each row's start
    same_bits(ours(ox[:, 5]), theirs(tx[:, 5]))                      # a column: stride 37
    same_bits(ours(ox[::2]), theirs(tx[::2]))
    same_bits(ours(ox[:1].expand(60, 37)), theirs(tx[:1].expand(60, 37)))    # a broadcast input
    same_bits(getattr(ox, name)(), getattr(tx, name)())
    z = tn.from_numpy(x.copy())
    getattr(z, name + "_")()
    same_bits(z, theirs(tx))                                         # in place
    out = tn.empty(60, 37)
    ours(ox, out=out)
    same_bits(out, theirs(tx))


@pytest.mark.parametrize("name,ours,theirs", FUNCS)
@pytest.mark.parametrize("kind", ["normal", "large", "mixed", "bits"])
def test_permuted(name, ours, theirs, kind):
    """torch keeps a permuted input's layout and runs SLEEF's groups along its memory;
    tensor computes in that order too (then writes its row-major result)"""
    x = values(40 * 24 * 3, kind, 2).reshape(40, 24, 3)
    tx, ox = torch.from_numpy(x), tn.from_numpy(x)
    same_bits(ours(ox[:, :, 0].t()), theirs(tx[:, :, 0].t()))
    same_bits(ours(ox.permute(2, 0, 1)), theirs(tx.permute(2, 0, 1)))
    same_bits(ours(ox[::2].transpose(0, 1)), theirs(tx[::2].transpose(0, 1)))      # not dense
    z, tz = tn.from_numpy(x[:, :, 1].copy()).t(), torch.from_numpy(x[:, :, 1].copy()).t()
    getattr(z, name + "_")()
    getattr(tz, name + "_")()
    same_bits(z, tz)                                                                # in place


@pytest.mark.parametrize("name,ours,theirs", FUNCS)
def test_edge_cases_and_other_dtypes(name, ours, theirs):
    assert ours(tn.empty(0)).shape == (0,) and ours(tn.empty(3, 0)).shape == (3, 0)
    same_bits(ours(tn.tensor([1, 2, 300, -7])), theirs(torch.tensor([1, 2, 300, -7])))     # integers -> float32
    x = values(1000, "normal", 3).astype(np.float64)                 # float64: libm's (torch: SLEEF's u10 double)
    np.testing.assert_allclose(ours(tn.from_numpy(x)).numpy(), theirs(torch.from_numpy(x)).numpy(), rtol=0, atol=3e-16)
    with pytest.raises((TypeError, RuntimeError)):
        ours("not a tensor")


def test_autograd_uses_the_same_kernels():
    """sin's gradient is cos(x) * grad: PyTorch's bits too"""
    x = values(1001, "normal", 4)
    a = tn.from_numpy(x.copy()).requires_grad_()
    b = torch.from_numpy(x.copy()).requires_grad_()
    tn.sin(a).sum().backward()
    torch.sin(b).sum().backward()
    same_bits(a.grad, b.grad)
    a.grad = None
    b.grad = None
    tn.cos(a).backward(tn.ones(1001))
    torch.cos(b).backward(torch.ones(1001))
    same_bits(a.grad, b.grad)
