"""nn.init's generator= (PyTorch 2.2 on: the last argument of uniform_, normal_, trunc_normal_,
xavier_*, kaiming_*, orthogonal_ and sparse_, positional or keyword).

torch 1.13 (the oracle here) has no generator= in nn.init, so the reference is 2025 PyTorch's
code for each function written with 1.13's Tensor.uniform_ / normal_ / randperm, which take
generator= and draw the same streams. A seeded tensor.Generator gives the same fill twice,
a different one from the default generator, and leaves the default stream where it was.
Skipped without torch.
"""
import math
import warnings

import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def vals(x):
    return np.array(x.detach().flatten().tolist(), dtype=np.float64).reshape(tuple(x.shape))


def bits(a, b):
    x, y = vals(a), vals(b)
    assert x.shape == y.shape, (x.shape, y.shape)
    np.testing.assert_array_equal(x, y)


def gens(s):
    return tn.Generator().manual_seed(s), torch.Generator().manual_seed(s)


# 2025 PyTorch's nn.init bodies over 1.13's generator-taking Tensor methods
def _gain(nl, a):
    return torch.nn.init.calculate_gain(nl, a)


def ref_xavier_uniform_(t, gain=1.0, generator=None):
    fi, fo = torch.nn.init._calculate_fan_in_and_fan_out(t)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fi + fo))
    return t.uniform_(-a, a, generator=generator)


def ref_xavier_normal_(t, gain=1.0, generator=None):
    fi, fo = torch.nn.init._calculate_fan_in_and_fan_out(t)
    return t.normal_(0, gain * math.sqrt(2.0 / float(fi + fo)), generator=generator)


def ref_kaiming_uniform_(t, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _gain(nonlinearity, a) / math.sqrt(torch.nn.init._calculate_correct_fan(t, mode))
    bound = math.sqrt(3.0) * std
    return t.uniform_(-bound, bound, generator=generator)


def ref_kaiming_normal_(t, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _gain(nonlinearity, a) / math.sqrt(torch.nn.init._calculate_correct_fan(t, mode))
    return t.normal_(0, std, generator=generator)


def ref_trunc_normal_(t, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    t.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
    return t.erfinv_().mul_(std * math.sqrt(2.0)).add_(mean).clamp_(min=a, max=b)


def ref_sparse_(t, sparsity, std=0.01, generator=None):
    rows, cols = t.shape
    nz = int(math.ceil(sparsity * rows))
    t.normal_(0, std, generator=generator)
    for c in range(cols):
        t[torch.randperm(rows, generator=generator)[:nz], c] = 0
    return t


def ref_orthogonal_(t, gain=1, generator=None):
    rows, cols = t.shape[0], t.numel() // t.shape[0]
    flat = t.new(rows, cols).normal_(0, 1, generator=generator)
    if rows < cols:
        flat.t_()
    q, r = torch.linalg.qr(flat)
    q *= torch.diag(r, 0).sign()
    if rows < cols:
        q.t_()
    t.view_as(q).copy_(q)
    return t.mul_(gain)


# name, every argument between the tensor and generator (positional), shape, the reference,
# exact (bit for bit)
CASES = [
    ("uniform_", (-0.5, 2.0), (7, 5), lambda t, g: t.uniform_(-0.5, 2.0, generator=g), True),
    ("normal_", (0.3, 2.0), (40, 3), lambda t, g: t.normal_(0.3, 2.0, generator=g), True),    # normal_fill (>= 16)
    ("normal_", (0.3, 2.0), (3, 4), lambda t, g: t.normal_(0.3, 2.0, generator=g), True),     # the scalar path
    ("xavier_uniform_", (0.7,), (6, 4, 3), lambda t, g: ref_xavier_uniform_(t, 0.7, g), True),
    ("xavier_normal_", (1.5,), (20, 9), lambda t, g: ref_xavier_normal_(t, 1.5, g), True),
    ("kaiming_uniform_", (math.sqrt(5), "fan_in", "leaky_relu"), (8, 3, 2, 2), lambda t, g: ref_kaiming_uniform_(t, math.sqrt(5), generator=g), True),
    ("kaiming_normal_", (0, "fan_out", "relu"), (12, 5), lambda t, g: ref_kaiming_normal_(t, 0, "fan_out", "relu", g), True),
    ("trunc_normal_", (0.2, 0.5, -0.4, 1.0), (30, 4), lambda t, g: ref_trunc_normal_(t, 0.2, 0.5, -0.4, 1.0, g), False),
    ("sparse_", (0.3, 0.2), (10, 6), lambda t, g: ref_sparse_(t, 0.3, 0.2, g), True),
    ("orthogonal_", (1.5,), (4, 3, 2), lambda t, g: ref_orthogonal_(t, 1.5, g), False),
    ("orthogonal_", (1,), (9, 4), lambda t, g: ref_orthogonal_(t, 1, g), False),
]
IDS = ["%s%s" % (c[0], "x".join(map(str, c[2]))) for c in CASES]


@pytest.mark.parametrize("name,args,shape,ref,exact", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s", [0, 42, 2**40 + 7])
def test_init_generator_matches_torch(name, args, shape, ref, exact, dtype, s):
    tg, pg = gens(s)
    tn.manual_seed(s + 1)
    torch.manual_seed(s + 1)
    a = getattr(tn.nn.init, name)(tn.empty(shape, dtype=getattr(tn, dtype)), *args, generator=tg)
    with torch.no_grad():
        b = ref(torch.empty(shape, dtype=getattr(torch, dtype)), pg)
    if exact:
        bits(a, b)
    else:   # trunc_normal_'s erfinv, orthogonal_'s Gram-Schmidt for torch's Householder QR
        np.testing.assert_allclose(vals(a), vals(b), rtol=1e-5 if dtype == "float32" else 1e-12,
                                   atol=1e-6 if dtype == "float32" else 1e-13)
    # the generators went on alike, and the default stream was not touched
    np.testing.assert_array_equal(tn.rand(4, dtype=tn.float64, generator=tg).numpy(),
                                  torch.rand(4, dtype=torch.float64, generator=pg).numpy())
    np.testing.assert_array_equal(tn.rand(4, dtype=tn.float64).numpy(), torch.rand(4, dtype=torch.float64).numpy())


@pytest.mark.parametrize("name,args,shape,ref,exact", CASES, ids=IDS)
def test_init_generator_repeats_and_differs_from_default(name, args, shape, ref, exact):
    fn = getattr(tn.nn.init, name)
    a = fn(tn.empty(shape, dtype=tn.float64), *args, generator=tn.Generator().manual_seed(5))
    b = fn(tn.empty(shape, dtype=tn.float64), *args, tn.Generator().manual_seed(5))   # positional, as 2.2's signature
    bits(a, b)
    tn.manual_seed(5)      # the default generator at the same seed is the same stream ...
    c = fn(tn.empty(shape, dtype=tn.float64), *args)
    bits(a, c)
    tn.manual_seed(6)      # ... and a different state draws different numbers
    d = fn(tn.empty(shape, dtype=tn.float64), *args)
    assert not np.array_equal(vals(a), vals(d))
    e = fn(tn.empty(shape, dtype=tn.float64), *args, generator=tn.Generator().manual_seed(6))
    bits(d, e)


def test_init_generator_default_matches_torch_global():
    """generator=None is the default generator: torch 1.13's nn.init after manual_seed."""
    for s in (0, 3):
        tn.manual_seed(s)
        torch.manual_seed(s)
        bits(tn.nn.init.kaiming_uniform_(tn.empty(6, 5), a=math.sqrt(5), generator=None),
             torch.nn.init.kaiming_uniform_(torch.empty(6, 5), a=math.sqrt(5)))
        bits(tn.nn.init.xavier_normal_(tn.empty(20, 8)), torch.nn.init.xavier_normal_(torch.empty(20, 8)))
        bits(tn.nn.init.normal_(tn.empty(3), 1.0, 0.5, None), torch.nn.init.normal_(torch.empty(3), 1.0, 0.5))
        np.testing.assert_array_equal(tn.rand(4, dtype=tn.float64).numpy(), torch.rand(4, dtype=torch.float64).numpy())


def test_init_generator_non_contiguous_and_empty():
    tg, pg = gens(11)
    a = tn.empty(5, 8).t()
    b = torch.empty(5, 8).t()
    tn.nn.init.uniform_(a, -1.0, 1.0, generator=tg)
    with torch.no_grad():
        b.uniform_(-1.0, 1.0, generator=pg)
    bits(a, b)
    a = tn.empty(40, 2)[:, 1]
    b = torch.empty(40, 2)[:, 1]
    tn.nn.init.normal_(a, generator=tg)
    b.normal_(generator=pg)
    bits(a, b)
    # 0-size: nothing drawn, the generator unmoved
    assert tn.nn.init.uniform_(tn.empty(0, 3), generator=tg).shape == (0, 3)
    assert tn.nn.init.normal_(tn.empty(0), generator=tg).shape == (0,)
    assert tn.nn.init.orthogonal_(tn.empty(0, 3), generator=tg).shape == (0, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tn.nn.init.kaiming_uniform_(tn.empty(0, 3), generator=tg)
    assert any("zero-element" in str(x.message) for x in w)
    # 0-d
    a = tn.nn.init.uniform_(tn.empty(()), 2.0, 3.0, generator=tg)
    with torch.no_grad():
        b = torch.empty(()).uniform_(2.0, 3.0, generator=pg)
    bits(a, b)
    np.testing.assert_array_equal(tn.rand(3, generator=tg).numpy(), torch.rand(3, generator=pg).numpy())


def test_init_generator_bad():
    for fn, args in [("uniform_", ()), ("normal_", ()), ("xavier_uniform_", ()), ("xavier_normal_", ()),
                     ("kaiming_uniform_", ()), ("kaiming_normal_", ()), ("trunc_normal_", ()),
                     ("orthogonal_", ()), ("sparse_", (0.1,))]:
        with pytest.raises(TypeError, match="generator"):
            getattr(tn.nn.init, fn)(tn.empty(3, 4), *args, generator=5)
    with pytest.raises(TypeError):
        tn.nn.init.uniform_(tn.empty(3), 0.0, 1.0, tn.Generator(), 7)      # one argument too many
    # the other checks still come first, with torch's text
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        tn.nn.init.xavier_uniform_(tn.empty(3), generator=tn.Generator())
    with pytest.raises(ValueError, match="Mode fan_sideways not supported"):
        tn.nn.init.kaiming_normal_(tn.empty(3, 4), mode="fan_sideways", generator=tn.Generator())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        tn.nn.init.sparse_(tn.empty(3, 4, 5), 0.1, generator=tn.Generator())
    with pytest.raises(RuntimeError):
        tn.nn.init.uniform_(tn.empty(3, dtype=tn.int64), generator=tn.Generator())
