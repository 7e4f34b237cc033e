"""torch.bitwise_left_shift / bitwise_right_shift, the << and >> operators (reflected and in
place), Tensor methods and out=, against torch 1.13 on counts inside the width; past the
width and negative counts follow 2025 PyTorch (<< gives 0, >> the sign; 1.13 shifted by the
count modulo the width there), checked against that rule. C twin: tests/test_bitwise_shifts.c."""
import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")

DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def _pair(dt, seed):
    g = np.random.default_rng(seed)
    info = np.iinfo(dt)
    a = g.integers(info.min, info.max, size=(5, 7), endpoint=True).astype(dt)
    s = g.integers(0, info.bits, size=(7,)).astype(dt)        # inside the width: 1.13 and 2025 agree
    return a, s


@pytest.mark.parametrize("dt", DTYPES)
def test_values_against_torch(dt):
    a, s = _pair(dt, 1)
    for name in ["bitwise_left_shift", "bitwise_right_shift"]:
        ours = getattr(tn, name)(tn.from_numpy(a), tn.from_numpy(s)).numpy()
        ref = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(s)).numpy()
        assert ours.dtype == ref.dtype and np.array_equal(ours, ref), name
    # non-contiguous left operand, the operators and a Python number on either side
    at, tt = tn.from_numpy(a).t(), torch.from_numpy(a).t()
    assert np.array_equal((at << 3).numpy(), (tt << 3).numpy())
    assert np.array_equal((at >> 2).numpy(), (tt >> 2).numpy())
    assert np.array_equal((3 << tn.from_numpy(s)).numpy(), (3 << torch.from_numpy(s)).numpy())
    assert np.array_equal((1000 >> tn.from_numpy(s)).numpy(), (1000 >> torch.from_numpy(s)).numpy())


def test_past_the_width_follows_2025():
    a = tn.tensor([-5, 3, 1, -1, 7])
    s = tn.tensor([1, 63, 64, 65, -1])
    assert tn.bitwise_left_shift(a, s).tolist() == [-10, -9223372036854775808, 0, 0, 0]
    assert tn.bitwise_right_shift(a, s).tolist() == [-3, 0, 0, -1, 0]
    u = tn.tensor([200, 3, 255], dtype=tn.uint8)
    assert tn.bitwise_left_shift(u, tn.tensor([1, 8, 9], dtype=tn.uint8)).tolist() == [144, 0, 0]
    assert tn.bitwise_right_shift(u, tn.tensor([1, 8, 200], dtype=tn.uint8)).tolist() == [100, 0, 0]
    i8 = tn.tensor([-128, 64], dtype=tn.int8)
    assert tn.bitwise_right_shift(i8, tn.tensor([7, 9], dtype=tn.int8)).tolist() == [-1, 0]


def test_in_place_out_and_methods():
    x, t = tn.tensor([5, -6, 7]), torch.tensor([5, -6, 7])
    x <<= 2
    t <<= 2
    assert x.tolist() == t.tolist()
    x >>= 1
    t >>= 1
    assert x.tolist() == t.tolist()
    y = tn.tensor([1, 2, 3])
    assert y.bitwise_left_shift_(tn.tensor([1, 1, 1])) is y and y.tolist() == [2, 4, 6]
    assert tn.tensor([8]).bitwise_right_shift(2).tolist() == [2]
    out = tn.empty(3, dtype=tn.int64)
    r = tn.bitwise_left_shift(tn.tensor([1, 2, 3]), tn.tensor([3, 2, 1]), out=out)
    assert r is out and out.tolist() == [8, 8, 6]
    # promotion: int16 << int8 is int16, a bool left operand with an int count is int64 (as torch)
    assert (tn.tensor([5], dtype=tn.int16) << tn.tensor([2], dtype=tn.int8)).dtype == tn.int16
    assert tn.bitwise_left_shift(tn.tensor([True]), 1).tolist() == torch.bitwise_left_shift(torch.tensor([True]), 1).tolist()


def test_errors_as_torch():
    for f, g in [(lambda m: m.bitwise_left_shift(m.tensor([1.5]), 1), "Float"),
                 (lambda m: m.tensor([3.0]) >> 1, "Float"),
                 (lambda m: m.bitwise_right_shift(m.tensor([3]), 1.5), "Float"),
                 (lambda m: m.bitwise_left_shift(m.tensor([True]), m.tensor([True])), "Bool")]:
        with pytest.raises(RuntimeError):
            f(torch)
        with pytest.raises(RuntimeError):
            f(tn)
