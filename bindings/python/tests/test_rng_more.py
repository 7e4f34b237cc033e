"""torch.multinomial after manual_seed gives torch's indices (issue 20 item 6), compared live.

Without replacement the CPU code races p / E with E = empty_like(p).exponential_() (doubles
from mt19937, in p's memory order) and takes topk; with replacement it inverts the running
sum of each row with a uniform double per sample. Two known differences from torch 1.13,
both 2025 PyTorch's behaviour: one sample with replacement takes the race (1.13 the inverse
CDF), and half probabilities are accepted on the CPU (1.13 refuses them). Skipped without torch.
"""
import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")

SEEDS = [0, 1, 42, 2**40 + 7]


def seed(s):
    tn.manual_seed(s)
    torch.manual_seed(s)


def ours(p):
    return tn.tensor(p.tolist(), dtype=getattr(tn, str(p.dtype).split(".")[-1]))


def in_step():
    """Both default streams advanced alike: the next draws agree."""
    np.testing.assert_array_equal(tn.rand(5, dtype=tn.float64).numpy(), torch.rand(5, dtype=torch.float64).numpy())


def same(a, b):
    assert str(a.dtype) == "tensor.int64" or str(a.dtype).endswith("int64"), a.dtype
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("s", SEEDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5,), (3, 7), (1, 40), (4, 1000)])
@pytest.mark.parametrize("n,replacement", [(1, False), (3, False), (5, True), (100, True), (2, True)])
def test_multinomial_matches_torch(s, dtype, shape, n, replacement):
    g = torch.Generator().manual_seed(123 + s % 7)
    p = torch.rand(shape, generator=g, dtype=getattr(torch, dtype))
    p[..., 1] = 0          # a category never drawn (with replacement) or drawn last
    if n > shape[-1] and not replacement:
        pytest.skip("more samples than categories")
    seed(s)
    same(tn.multinomial(ours(p), n, replacement), torch.multinomial(p, n, replacement))
    # the method and an own generator
    ga, gb = tn.Generator().manual_seed(s + 1), torch.Generator().manual_seed(s + 1)
    same(ours(p).multinomial(n, replacement, generator=ga), p.multinomial(n, replacement, generator=gb))
    in_step()


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_strided_inputs(replacement):
    """empty_like(p) keeps a transposed layout, so the exponentials fill it in memory order;
    a sliced (not dense) input gets a contiguous one"""
    g = torch.Generator().manual_seed(5)
    p = torch.rand(6, 4, generator=g, dtype=torch.float64)
    n = 12 if replacement else 3
    for s in SEEDS[:3]:
        for view in (lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[::2], lambda x: x[1]):
            a, b = view(ours(p)), view(p)
            seed(s)
            same(tn.multinomial(a, min(n, a.shape[-1]) if not replacement else n, replacement),
                 torch.multinomial(b, min(n, b.shape[-1]) if not replacement else n, replacement))
            in_step()


def test_multinomial_all_categories_and_zero_weights():
    """every category without replacement: the positive ones first, in torch's order"""
    g = torch.Generator().manual_seed(8)
    p = torch.rand(3, 6, generator=g)
    p[:, 2] = 0
    for s in SEEDS:
        seed(s)
        same(tn.multinomial(ours(p), 5), torch.multinomial(p, 5))
        in_step()


def test_multinomial_one_sample_with_replacement_is_2025s():
    """2025 PyTorch draws one sample with replacement by the race, as without (1.13 used the
    inverse CDF): the same indices as replacement=False and the same stream position"""
    p = torch.rand(4, 9, generator=torch.Generator().manual_seed(2))
    for s in SEEDS:
        seed(s)
        same(tn.multinomial(ours(p), 1, True), torch.multinomial(p, 1, False))
        in_step()


def test_multinomial_errors_match_torch():
    cases = [([1.0, -1.0], 3, True), ([1.0, float("nan")], 3, True), ([1.0, float("inf")], 3, True),
             ([0.0, 0.0], 3, True), ([1.0, float("inf")], 1, False), ([0.0, 0.0], 1, False), ([1.0, -1.0], 3, False),
             ([1.0, 2.0], 0, True), ([[[1.0]]], 1, True)]
    for p, n, rep in cases:
        with pytest.raises(RuntimeError) as want:
            torch.multinomial(torch.tensor(p), n, rep)
        with pytest.raises(RuntimeError) as got:
            tn.multinomial(tn.tensor(p), n, rep)
        assert str(want.value).split("\n")[0] in str(got.value), (p, n, rep, str(got.value))
    e = tn.multinomial(tn.zeros(0, 3), 2)
    assert tuple(e.shape) == (0, 2) and e.dtype == tn.int64
