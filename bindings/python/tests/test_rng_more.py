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


# --------------------------------------------------------------------------- in-place samplers
def _vals(x):
    if str(x.dtype).split(".")[-1] in ("float16", "bfloat16"):
        x = x.float()
    return np.array(x.tolist()).reshape(tuple(x.shape))


def same_values(a, b, rtol=0.0):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    x, y = _vals(a), _vals(b)
    assert x.shape == y.shape, (x.shape, y.shape)
    if rtol:
        np.testing.assert_allclose(x, y, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(x, y)


SAMPLERS = [("exponential_", (), {}), ("exponential_", (2.5,), {}), ("geometric_", (0.3,), {}), ("geometric_", (0.01,), {}),
            ("cauchy_", (), {}), ("cauchy_", (0.3, 1.7), {}), ("log_normal_", (), {}), ("log_normal_", (0.2, 0.5), {})]


@pytest.mark.parametrize("s", SEEDS[:3])
@pytest.mark.parametrize("fn,args,kw", SAMPLERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_samplers_match_torch(s, fn, args, kw, dtype):
    seed(s)
    for n in (0, 1, 5, 16, 17, 300):
        a = getattr(tn.empty(n, dtype=getattr(tn, dtype)), fn)(*args, **kw)
        b = getattr(torch.empty(n, dtype=getattr(torch, dtype)), fn)(*args, **kw)
        # exponential_ in float64: 2025 PyTorch's -log1p(-u), 1.13's -log(1 - u) (the last bit)
        same_values(a, b, rtol=1e-15 if fn == "exponential_" and dtype == "float64" else 0)
    # views fill in memory order (a transposed tensor column by column)
    for make in (lambda L: L.empty(5, 7, dtype=getattr(L, dtype)).t(), lambda L: L.empty(4, 9, dtype=getattr(L, dtype))[:, ::2],
                 lambda L: L.empty(2, 3, 4, dtype=getattr(L, dtype)).permute(2, 0, 1)):
        x, y = make(tn), make(torch)
        rx, ry = getattr(x, fn)(*args, **kw), getattr(y, fn)(*args, **kw)
        assert rx is x   # in place, returned
        same_values(rx, ry, rtol=1e-15 if fn == "exponential_" and dtype == "float64" else 0)
    # and an own generator
    ga, gb = tn.Generator().manual_seed(s + 5), torch.Generator().manual_seed(s + 5)
    same_values(getattr(tn.empty(33, dtype=getattr(tn, dtype)), fn)(*args, generator=ga),
                getattr(torch.empty(33, dtype=getattr(torch, dtype)), fn)(*args, generator=gb),
                rtol=1e-15 if fn == "exponential_" and dtype == "float64" else 0)
    in_step()


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_geometric_integer_dtypes(dtype):
    for s in SEEDS[:3]:
        seed(s)
        same_values(tn.empty(200, dtype=getattr(tn, dtype)).geometric_(0.05), torch.empty(200, dtype=getattr(torch, dtype)).geometric_(0.05))
        in_step()


RANDOM_ARGS = [(), (10,), (-3, 10), (0, 2**32), (-2**40, 2**40), (5, None), (-2**63, None)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool", "float16", "bfloat16"])
@pytest.mark.parametrize("args", RANDOM_ARGS, ids=str)
def test_random_matches_torch(dtype, args):
    for s in SEEDS[:3]:
        results = []
        for lib in (tn, torch):
            lib.manual_seed(s)
            try:
                with __import__("warnings").catch_warnings():
                    __import__("warnings").simplefilter("ignore")   # torch's "out of bounds [-(2^24), 2^24]" warning
                    results.append((lib.empty(40, dtype=getattr(lib, dtype)).random_(*args), lib.empty(3, 4, dtype=getattr(lib, dtype)).t().random_(*args)))
            except RuntimeError as e:
                results.append(str(e).split("\n")[0])
        a, b = results
        if isinstance(b, str):
            assert isinstance(a, str) and b.strip('"') in a, (a, b)
            continue
        assert not isinstance(a, str), a
        for x, y in zip(a, b):
            same_values(x, y)
        in_step()


def test_random_keywords_and_errors():
    seed(2)
    same_values(tn.empty(9, dtype=tn.int64).random_(to=7), torch.empty(9, dtype=torch.int64).random_(to=7))
    same_values(tn.empty(9, dtype=tn.int64).random_(-2, to=7), torch.empty(9, dtype=torch.int64).random_(-2, to=7))
    in_step()
    for lib in (tn, torch):
        with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
            lib.empty(3, dtype=lib.uint8).random_(0, 300)
        with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
            lib.empty(3).random_(-5)
        with pytest.raises(RuntimeError, match="geometric_ expects p to be in"):
            lib.empty(3).geometric_(1.0)
        with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
            lib.empty(3).log_normal_(0, 0)
        with pytest.raises(RuntimeError):
            lib.zeros(3, requires_grad=True).exponential_()


def test_distributions_sample_as_torch():
    """Exponential and Cauchy draw through exponential_ / cauchy_, as torch's do"""
    rate, loc, scale = [1.0, 2.5, 0.3], [0.0, 1.0], [1.0, 0.5]
    for s in SEEDS[:3]:
        seed(s)
        same_values(tn.distributions.Exponential(tn.tensor(rate)).sample((4,)), torch.distributions.Exponential(torch.tensor(rate)).sample((4,)))
        same_values(tn.distributions.Cauchy(tn.tensor(loc), tn.tensor(scale)).rsample((3,)),
                    torch.distributions.Cauchy(torch.tensor(loc), torch.tensor(scale)).rsample((3,)))
        in_step()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_family_samples_as_torch(dtype):
    """_standard_gamma (Marsaglia-Tsang on the generator's uniforms and cached normals, float
    steps for float32) and _sample_dirichlet: Gamma, Chi2, StudentT, Beta and Dirichlet draw
    torch's numbers for the same seed"""
    def dists(L):
        t = lambda v: L.tensor(v, dtype=getattr(L, dtype))   # noqa: E731
        D = L.distributions
        return [D.Gamma(t([0.3, 1.0, 2.5, 40.0]), t([1.0, 2.0, 0.5, 1.0])), D.Chi2(t([0.5, 3.0])), D.StudentT(t([2.0, 5.0])),
                D.Beta(t([0.5, 2.0]), t([1.5, 0.3])), D.Dirichlet(t([[0.2, 1.0, 3.0], [5.0, 0.5, 0.5]]))]
    for s in SEEDS[:3]:
        seed(s)
        for a, b in zip(dists(tn), dists(torch)):
            x, y = a.sample((3,)), b.sample((3,))
            # float64 Dirichlet/Beta: the row sum may round differently in the last bit
            same_values(x, y, rtol=1e-15 if dtype == "float64" else 0)
        same_values(tn._standard_gamma(tn.full((50,), 0.7, dtype=getattr(tn, dtype))),
                    torch._standard_gamma(torch.full((50,), 0.7, dtype=getattr(torch, dtype))))
        in_step()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_training_noise_as_torch(dtype):
    """F.rrelu(training=True): a uniform slope drawn only where x <= 0, in x's element order"""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(5, 7, generator=g, dtype=getattr(torch, dtype))
    x[0, 0], x[1, 1] = 0.0, float("nan")
    for s in SEEDS[:3]:
        seed(s)
        a = tn.nn.functional.rrelu(ours(x), 0.1, 0.4, training=True)
        b = torch.nn.functional.rrelu(x, 0.1, 0.4, training=True)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        same_values(tn.nn.RReLU()(ours(x).t()), torch.nn.RReLU()(x.t()))   # a transposed input: its values in order
        in_step()
    # the gradient is the noise
    seed(1)
    xa, xb = ours(x).requires_grad_(), x.clone().requires_grad_()
    tn.nn.functional.rrelu(xa, training=True).sum().backward()
    torch.nn.functional.rrelu(xb, training=True).sum().backward()
    np.testing.assert_array_equal(xa.grad.numpy(), xb.grad.numpy())


# --------------------------------------------------------------------------- moved from Python to C
def _pair(shape, dtype="float64", s=0):
    g = torch.Generator().manual_seed(s)
    x = torch.randn(shape, generator=g, dtype=getattr(torch, dtype))
    return x, ours(x)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (3.0, 0), (float("inf"), 2), (0.5, 1)])
def test_normalize_is_c_and_matches_torch(p, dim):
    x, xt = _pair((3, 4, 5))
    for a, b in ((xt, x), (xt.transpose(0, 2), x.transpose(0, 2)), (xt[:, ::2], x[:, ::2])):
        np.testing.assert_allclose(tn.nn.functional.normalize(a, p, dim).numpy(), torch.nn.functional.normalize(b, p, dim).numpy(),
                                   rtol=1e-12, atol=1e-15)
    z = tn.nn.functional.normalize(tn.zeros(2, 3))
    assert not bool(z.isnan().any())     # eps keeps a zero row zero
    # gradients as torch's (float64)
    a, b = xt.clone().requires_grad_(), x.clone().requires_grad_()
    (tn.nn.functional.normalize(a, p, dim) ** 3).sum().backward()
    (torch.nn.functional.normalize(b, p, dim) ** 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, float("inf"), float("-inf")])
def test_dist_is_c_and_matches_torch(p):
    x, xt = _pair((3, 4))
    y, yt = _pair((4,), s=1)
    np.testing.assert_allclose(tn.dist(xt, yt, p).numpy(), torch.dist(x, y, p).numpy(), rtol=1e-12)
    np.testing.assert_allclose(xt.t().dist(yt[:, None], p).numpy(), x.t().dist(y[:, None], p).numpy(), rtol=1e-12)
    assert tn.dist(xt, yt, p).ndim == 0
    if p not in (0, float("inf"), float("-inf")):
        a, b = xt.clone().requires_grad_(), x.clone().requires_grad_()
        tn.dist(a, yt, p).backward()
        torch.dist(b, y, p).backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    with pytest.raises(RuntimeError):
        tn.dist(xt, tn.ones(5, dtype=tn.float64))


def test_isclose_is_c_and_matches_torch():
    nan, inf = float("nan"), float("inf")
    cases = [([1.0, 1.0001, nan, inf, 2.0, -inf], [1.0, 1.0, nan, inf, inf, -inf], {}),
             ([1.0, 1.0001, nan, inf], [1.0, 1.0, nan, inf], dict(equal_nan=True)),
             ([1.0, 1.1, 1e-9], [1.0, 1.0, 0.0], dict(rtol=0.2, atol=0)),
             ([1.0, 1.1], [1.0, 1.0], dict(rtol=0, atol=0))]
    for a, b, kw in cases:
        for dt in ("float32", "float64"):
            np.testing.assert_array_equal(tn.isclose(tn.tensor(a, dtype=getattr(tn, dt)), tn.tensor(b, dtype=getattr(tn, dt)), **kw).numpy(),
                                          torch.isclose(torch.tensor(a, dtype=getattr(torch, dt)), torch.tensor(b, dtype=getattr(torch, dt)), **kw).numpy())
    ints = ([1, 100, 1000], [1, 101, 1001])
    np.testing.assert_array_equal(tn.isclose(tn.tensor(ints[0]), tn.tensor(ints[1]), rtol=0.001, atol=0).numpy(),
                                  torch.isclose(torch.tensor(ints[0]), torch.tensor(ints[1]), rtol=0.001, atol=0).numpy())
    np.testing.assert_array_equal(tn.tensor([True, False]).isclose(tn.tensor([True, True])).numpy(),
                                  torch.tensor([True, False]).isclose(torch.tensor([True, True])).numpy())
    x, xt = _pair((3, 1))
    y, yt = _pair((4,), s=2)
    np.testing.assert_array_equal(tn.isclose(xt, yt, rtol=2.0).numpy(), torch.isclose(x, y, rtol=2.0).numpy())   # broadcast
    for bad in (dict(rtol=-1), dict(atol=-1)):
        with pytest.raises(RuntimeError, match="must be greater than or equal to zero"):
            tn.isclose(xt, xt, **bad)
    with pytest.raises(RuntimeError, match="Double did not match Float"):
        tn.isclose(xt, xt.float())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_rand_and_uniform_match_torch(dtype):
    """uniform_real_distribution<Half>: 11 (bfloat16: 8) bits of random(), to - from rounded to the dtype"""
    for s in SEEDS[:3]:
        seed(s)
        for n in (1, 17, 500):
            same_values(tn.rand(n, dtype=getattr(tn, dtype)), torch.rand(n, dtype=getattr(torch, dtype)))
        for lo, hi in ((-2.3, 7.1), (1000.3, 1000.9), (0.0, 1e-3)):
            same_values(tn.empty(300, dtype=getattr(tn, dtype)).uniform_(lo, hi), torch.empty(300, dtype=getattr(torch, dtype)).uniform_(lo, hi))
        in_step()


def test_alpha_dropout_modules_match_torch():
    """F.alpha_dropout, nn.AlphaDropout and nn.FeatureAlphaDropout: PyTorch's _dropout_impl
    (a bernoulli_(1 - p) noise per element / per channel), the same values for a seed"""
    x = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(0))
    xt = ours(x)
    for s in SEEDS[:3]:
        seed(s)
        for p in (0.0, 0.3, 1.0):
            same_values(tn.nn.functional.alpha_dropout(xt, p, True), torch.nn.functional.alpha_dropout(x, p, True))
        same_values(tn.nn.AlphaDropout(0.2)(xt), torch.nn.AlphaDropout(0.2)(x))
        same_values(tn.nn.FeatureAlphaDropout(0.4)(xt), torch.nn.FeatureAlphaDropout(0.4)(x))
        in_step()
    m = tn.nn.AlphaDropout(0.5).eval()
    assert bool((m(xt) == xt).all()) and repr(m) == repr(torch.nn.AlphaDropout(0.5))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        tn.nn.AlphaDropout(1.5)
