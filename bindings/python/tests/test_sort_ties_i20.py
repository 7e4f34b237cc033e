"""sort/argsort's order of equal values against PyTorch's CPU (issue 20): stable=False is
libstdc++'s std::sort order (introsort: median-of-3, unguarded partition, heapsort past
the depth limit, insertion sort of runs of 16), stable=True input order; every dtype,
ascending and descending, NaN, non-contiguous lanes, sizes around the 16-element runs and
large enough for deep recursion. Skipped without torch."""
import pytest

import tensor as tn

torch = pytest.importorskip("torch")

SIZES = [0, 1, 2, 3, 15, 16, 17, 18, 31, 33, 100, 257, 1000, 8000]


def _ours(t):
    return tn.tensor(t.tolist(), dtype=getattr(tn, str(t.dtype).split(".")[1])).reshape(tuple(t.shape))


def _check(t, **kw):
    ours = _ours(t)
    for stable in (False, True):
        for desc in (False, True):
            v, i = ours.sort(stable=stable, descending=desc, **kw)
            tv, ti = t.sort(stable=stable, descending=desc, **kw)
            assert i.tolist() == ti.tolist(), (t.dtype, tuple(t.shape), stable, desc, kw)
            assert str(v.dtype) == str(tv.dtype)
            torch.testing.assert_close(torch.tensor(v.tolist(), dtype=tv.dtype), tv, equal_nan=True)
            ai = ours.argsort(stable=stable, descending=desc, **kw)
            assert ai.tolist() == t.argsort(stable=stable, descending=desc, **kw).tolist()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool])
def test_integer_ties_as_pytorch(n, dtype):
    g = torch.Generator().manual_seed(n)
    for hi in (2, 5, 20):
        t = torch.randint(0, hi, (n,), generator=g).to(dtype)
        _check(t)


@pytest.mark.parametrize("n", [17, 100, 1000])
def test_float_ties_nan_inf(n):
    g = torch.Generator().manual_seed(1)
    t = torch.randint(-3, 4, (n,), generator=g).double()
    t[torch.randint(0, n, (n // 5,), generator=g)] = float("nan")
    t[torch.randint(0, n, (n // 7,), generator=g)] = float("inf")
    t[torch.randint(0, n, (n // 7,), generator=g)] = -0.0
    _check(t)
    _check(t.float())


def test_sorted_reversed_constant_inputs():
    # the adversarial shapes of quicksort: already sorted, reversed, all equal, organ pipe
    for n in (16, 17, 64, 1000, 5000):
        a = torch.arange(n)
        for t in (a, a.flip(0), torch.zeros(n, dtype=torch.int64), torch.cat([a[: n // 2], a[: n - n // 2].flip(0)]),
                  a % 3, (a * 7919) % 13):
            _check(t)


def test_lanes_of_other_dims_and_views():
    g = torch.Generator().manual_seed(2)
    t = torch.randint(0, 4, (5, 40, 3), generator=g)
    for d in (0, 1, 2, -1, -2):
        _check(t, dim=d)
    # a non-contiguous lane: the permuted view sorts as torch's
    p = t.permute(2, 0, 1)
    ours = _ours(t).permute(2, 0, 1)
    assert not ours.is_contiguous()
    for d in (0, 1, 2):
        assert ours.sort(dim=d)[1].tolist() == p.sort(dim=d)[1].tolist()
        assert ours.argsort(dim=d, descending=True).tolist() == p.argsort(dim=d, descending=True).tolist()
    # 0-d
    _check(torch.tensor(3))


def test_functions_and_errors():
    t = torch.randint(0, 3, (50,), generator=torch.Generator().manual_seed(3))
    x = _ours(t)
    assert tn.sort(x)[1].tolist() == torch.sort(t)[1].tolist()
    assert tn.sort(x, stable=True)[1].tolist() == torch.sort(t, stable=True)[1].tolist()
    assert tn.argsort(x, descending=True).tolist() == torch.argsort(t, descending=True).tolist()
    with pytest.raises(IndexError):
        t.sort(dim=1)
    with pytest.raises(IndexError):
        x.sort(dim=1)
    with pytest.raises(IndexError):
        x.sort(dim=1, stable=True)
