"""tensor.distributions against torch.distributions (PyTorch 1.13 is the oracle; the tests skip
without it): log_prob / entropy / mean / variance / cdf / icdf on random batched parameters,
sample shapes and moments (within statistical tolerance), rsample gradients, the implicit
gamma gradient against torch._standard_gamma_grad, KL pairs, validate_args errors.
Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_distributions.py
"""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
TD, D = torch.distributions, tn.distributions


def T(a):
    return tn.tensor(np.asarray(a.detach().numpy() if isinstance(a, torch.Tensor) else a))


def close(a, b, rtol=1e-10, atol=1e-12, what=""):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, f"{what}: {a.shape} vs {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


g = torch.Generator().manual_seed(0)


def pos(*shape):
    return torch.rand(*shape, generator=g, dtype=torch.float64) * 2 + 0.2


def real(*shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def unit(*shape):
    return torch.rand(*shape, generator=g, dtype=torch.float64) * 0.9 + 0.05


# (name, torch params, value sampler over the support)
CASES = [
    ("Normal", lambda: (real(3, 4), pos(4)), lambda s: real(*s)),
    ("LogNormal", lambda: (real(3, 4), pos(4)), lambda s: pos(*s)),
    ("Uniform", lambda: (real(3, 4) - 3, real(3, 4) + 3), lambda s: torch.rand(*s, generator=g, dtype=torch.float64) - 0.5),
    ("Exponential", lambda: (pos(3, 4),), lambda s: pos(*s)),
    ("Laplace", lambda: (real(3, 4), pos(3, 4)), lambda s: real(*s)),
    ("Cauchy", lambda: (real(3, 4), pos(3, 4)), lambda s: real(*s)),
    ("Gumbel", lambda: (real(3, 4), pos(3, 4)), lambda s: real(*s)),
    ("Gamma", lambda: (pos(3, 4), pos(3, 4)), lambda s: pos(*s)),
    ("Beta", lambda: (pos(3, 4), pos(3, 4)), lambda s: unit(*s)),
    ("Poisson", lambda: (pos(3, 4) * 3,), lambda s: torch.randint(0, 8, s, generator=g).double()),
    ("Bernoulli", lambda: (unit(3, 4),), lambda s: torch.randint(0, 2, s, generator=g).double()),
    ("Geometric", lambda: (unit(3, 4),), lambda s: torch.randint(0, 6, s, generator=g).double()),
    ("Binomial", lambda: (torch.full((3, 4), 7.0, dtype=torch.float64), unit(3, 4)), lambda s: torch.randint(0, 8, s, generator=g).double()),
]
METHODS = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]


@pytest.mark.parametrize("name,params,values", CASES, ids=[c[0] for c in CASES])
def test_against_torch(name, params, values):
    p = params()
    if name == "Binomial":
        td, od = TD.Binomial(p[0], p[1]), D.Binomial(T(p[0]), T(p[1]))
    else:
        td, od = getattr(TD, name)(*p), getattr(D, name)(*[T(a) for a in p])
    assert tuple(od.batch_shape) == tuple(td.batch_shape) and tuple(od.event_shape) == tuple(td.event_shape)
    ran = 0
    for m in METHODS:
        try:
            if m in ("log_prob", "cdf"):
                v = values((2, 3, 4))
                ref = getattr(td, m)(v)
                got = getattr(od, m)(T(v))
            elif m == "icdf":
                v = unit(2, 3, 4)
                ref = td.icdf(v)
                got = od.icdf(T(v))
            elif m == "entropy":
                ref, got = td.entropy(), od.entropy()
            else:
                ref, got = getattr(td, m), getattr(od, m)
        except NotImplementedError:
            continue
        close(got, ref, 1e-9, 1e-12, f"{name}.{m}")
        ran += 1
    assert ran >= 4, f"{name}: only {ran} methods compared"
    # expand keeps the values
    e = od.expand((5, 3, 4))
    assert tuple(e.batch_shape) == (5, 3, 4)
    v = values((3, 4))
    close(e.log_prob(T(v)), td.expand((5, 3, 4)).log_prob(v), 1e-9, 1e-12, f"{name}.expand")


MOMENT_CASES = [
    ("Normal", (torch.tensor([0.5, -2.0]), torch.tensor([1.5, 0.3]))),
    ("Exponential", (torch.tensor([0.5, 3.0]),)),
    ("Laplace", (torch.tensor([0.5, -2.0]), torch.tensor([1.5, 0.3]))),
    ("Gumbel", (torch.tensor([0.5, -2.0]), torch.tensor([1.5, 0.3]))),
    ("Uniform", (torch.tensor([0.5, -2.0]), torch.tensor([1.5, 0.3]))),
    ("Gamma", (torch.tensor([0.3, 2.0, 50.0]), torch.tensor([1.0, 0.5, 3.0]))),
    ("Beta", (torch.tensor([0.3, 2.0, 50.0]), torch.tensor([1.0, 0.5, 3.0]))),
    ("Poisson", (torch.tensor([0.3, 4.0, 25.0, 300.0]),)),
    ("Bernoulli", (torch.tensor([0.1, 0.5, 0.9]),)),
    ("Geometric", (torch.tensor([0.1, 0.5, 0.9]),)),
    ("LogNormal", (torch.tensor([0.1, -0.5]), torch.tensor([0.3, 0.5]))),
]


@pytest.mark.parametrize("name,params", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_sample_moments(name, params):
    tn.manual_seed(0)
    od = getattr(D, name)(*[T(a.double()) for a in params])
    n = 200000
    s = od.sample((n,))
    assert tuple(s.shape) == (n,) + tuple(od.batch_shape)
    x = s.numpy()
    mean, var = od.mean.numpy(), od.variance.numpy()
    se = np.sqrt(var / n)
    assert (np.abs(x.mean(0) - mean) < 5 * se + 1e-12).all(), f"{name}: mean {x.mean(0)} vs {mean}"
    assert (np.abs(x.var(0) - var) < 0.05 * var + 1e-12).all(), f"{name}: var {x.var(0)} vs {var}"
    if od.support is not None:
        assert bool(od.support.check(s).all())


@pytest.mark.parametrize("n,p", [(10, 0.3), (1000, 0.7), (10 ** 6, 0.01), (50, 0.999)])
def test_binomial_sampler_moments(n, p):
    tn.manual_seed(1)
    s = D.Binomial(tn.tensor([float(n)], dtype=tn.float64), tn.tensor([p], dtype=tn.float64)).sample((100000,)).numpy()
    assert (s == np.floor(s)).all() and s.min() >= 0 and s.max() <= n
    se = math.sqrt(n * p * (1 - p) / 100000)
    assert abs(s.mean() - n * p) < 5 * se
    assert abs(s.var() - n * p * (1 - p)) < 0.05 * n * p * (1 - p)


def test_dirichlet_and_categorical():
    c = pos(3, 5)
    td, od = TD.Dirichlet(c), D.Dirichlet(T(c))
    v = td.sample((2,))
    close(od.log_prob(T(v)), td.log_prob(v), 1e-9, 1e-12, "Dirichlet.log_prob")
    close(od.entropy(), td.entropy(), 1e-9, 1e-12)
    close(od.mean, td.mean)
    close(od.variance, td.variance)
    tn.manual_seed(2)
    s = od.sample((100000,))
    np.testing.assert_allclose(s.numpy().sum(-1), 1, rtol=1e-12)
    np.testing.assert_allclose(s.numpy().mean(0), td.mean.numpy(), atol=5e-3)
    pr = unit(4, 6)
    for kw in ("probs", "logits"):
        tdc, odc = TD.Categorical(**{kw: pr}), D.Categorical(**{kw: T(pr)})
        v = torch.randint(0, 6, (2, 4), generator=g)
        close(odc.log_prob(T(v)), tdc.log_prob(v), 1e-10, 1e-12, kw)
        close(odc.entropy(), tdc.entropy(), 1e-10, 1e-12, kw)
        close(odc.probs, tdc.probs)
    s = D.Categorical(probs=T(pr)).sample((50000,)).numpy()
    freq = np.stack([(s == k).mean(0) for k in range(6)], -1)
    np.testing.assert_allclose(freq, (pr / pr.sum(-1, keepdim=True)).numpy(), atol=0.015)


def test_independent():
    loc, scale = real(3, 4), pos(3, 4)
    td = TD.Independent(TD.Normal(loc, scale), 1)
    od = D.Independent(D.Normal(T(loc), T(scale)), 1)
    assert tuple(od.batch_shape) == (3,) and tuple(od.event_shape) == (4,)
    v = real(2, 3, 4)
    close(od.log_prob(T(v)), td.log_prob(v))
    close(od.entropy(), td.entropy())


def test_rsample_gradients():
    # Normal: x = loc + eps scale, d/dloc = 1, d/dscale = eps
    loc = tn.tensor([0.5, -1.0], dtype=tn.float64, requires_grad=True)
    scale = tn.tensor([2.0, 0.5], dtype=tn.float64, requires_grad=True)
    x = D.Normal(loc, scale).rsample()
    x.sum().backward()
    close(loc.grad, np.ones(2))
    close(scale.grad, ((x - loc) / scale).detach())
    # the implicit gamma gradient against PyTorch's on the same (alpha, x)
    alpha = torch.tensor([0.05, 0.3, 1.0, 2.5, 10.0, 100.0, 1000.0], dtype=torch.float64)
    xs = torch.stack([torch._standard_gamma(alpha) for _ in range(4)])
    a2 = alpha.expand_as(xs)
    ref = torch._standard_gamma_grad(a2, xs)
    got = tn._standard_gamma_grad(T(a2), T(xs))
    close(got, ref, 1e-12, 1e-300, "_standard_gamma_grad")
    # PyTorch's approximations over a wide range, float32 and float64 (the same algorithm:
    # float32 to the bit, float64 to rounding)
    for dt, rtol in ((torch.float32, 0), (torch.float64, 1e-12)):
        g = torch.Generator().manual_seed(5)
        a = torch.exp(torch.rand(20000, generator=g, dtype=dt) * 12 - 5)
        x = torch._standard_gamma(a, generator=g).clamp_min(1e-30)
        close(tn._standard_gamma_grad(T(a), T(x)), torch._standard_gamma_grad(a, x), rtol, 0, f"_standard_gamma_grad {dt}")
    # and d E[x] / d alpha = 1 from the samples (Gamma(alpha, 1) has mean alpha)
    a = tn.tensor([0.5, 3.0], dtype=tn.float64, requires_grad=True)
    tn.manual_seed(3)
    D.Gamma(a, tn.tensor(1.0, dtype=tn.float64)).rsample((100000,)).mean(0).sum().backward()
    close(a.grad, np.ones(2), 0, 0.02, "dE/dalpha")
    # Beta and Dirichlet: d E[x1] / d c1 = c0 / (c1 + c0)^2
    c1 = tn.tensor([2.0], dtype=tn.float64, requires_grad=True)
    D.Beta(c1, tn.tensor([3.0], dtype=tn.float64)).rsample((100000,)).mean().backward()
    assert abs(c1.grad.item() - 3 / 25) < 0.01


KL_PAIRS = [
    ("Normal", lambda: (real(3), pos(3)), lambda: (real(3), pos(3))),
    ("Exponential", lambda: (pos(3),), lambda: (pos(3),)),
    ("Gamma", lambda: (pos(3), pos(3)), lambda: (pos(3), pos(3))),
    ("Beta", lambda: (pos(3), pos(3)), lambda: (pos(3), pos(3))),
    ("Poisson", lambda: (pos(3),), lambda: (pos(3),)),
    ("Bernoulli", lambda: (unit(3),), lambda: (unit(3),)),
    ("Laplace", lambda: (real(3), pos(3)), lambda: (real(3), pos(3))),
    ("Uniform", lambda: (torch.tensor([0.0, 0.5]).double(), torch.tensor([1.0, 0.8]).double()), lambda: (torch.tensor([-1.0, 0.6]).double(), torch.tensor([2.0, 0.9]).double())),
]


@pytest.mark.parametrize("name,pp,qp", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_pairs(name, pp, qp):
    a, b = pp(), qp()
    ref = TD.kl_divergence(getattr(TD, name)(*a), getattr(TD, name)(*b))
    got = D.kl_divergence(getattr(D, name)(*[T(x) for x in a]), getattr(D, name)(*[T(x) for x in b]))
    close(got, ref, 1e-9, 1e-12, name)


def test_kl_categorical_dirichlet_independent_and_registry():
    p, q = unit(2, 5), unit(2, 5)
    close(D.kl_divergence(D.Categorical(T(p)), D.Categorical(T(q))), TD.kl_divergence(TD.Categorical(p), TD.Categorical(q)))
    close(D.kl_divergence(D.Dirichlet(T(p)), D.Dirichlet(T(q))), TD.kl_divergence(TD.Dirichlet(p), TD.Dirichlet(q)))
    ip = D.Independent(D.Normal(T(p), T(q)), 1)
    close(D.kl_divergence(ip, ip), np.zeros(2))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Cauchy(0.0, 1.0))   # no such pair in torch either

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return tn.tensor(42.0)
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 2.0)).item() == pytest.approx(
        TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Normal(0.0, 2.0)).item())
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_validate_args():
    for ours, theirs in [(lambda: D.Normal(tn.tensor([0.0]), tn.tensor([-1.0])), lambda: TD.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))),
                         (lambda: D.Gamma(tn.tensor([0.0]), tn.tensor([1.0])), lambda: TD.Gamma(torch.tensor([0.0]), torch.tensor([1.0]))),
                         (lambda: D.Bernoulli(tn.tensor([1.5])), lambda: TD.Bernoulli(torch.tensor([1.5]))),
                         (lambda: D.Exponential(tn.tensor([float("nan")])), lambda: TD.Exponential(torch.tensor([float("nan")])))]:
        with pytest.raises(ValueError):
            theirs()
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            ours()
    with pytest.raises(ValueError, match="support"):
        D.Exponential(tn.tensor([1.0])).log_prob(tn.tensor([-1.0]))
    with pytest.raises(ValueError):
        D.Bernoulli(probs=tn.tensor([0.5]), logits=tn.tensor([0.0]))
    with pytest.raises(ValueError):
        D.Uniform(tn.tensor([1.0]), tn.tensor([0.0]))
    # validate_args=False lets the value through, as torch
    D.Normal(tn.tensor([0.0]), tn.tensor([-1.0]), validate_args=False)
    assert repr(D.constraints.positive) == repr(TD.constraints.positive)
    assert repr(D.constraints.interval(0.0, 1.0)) == repr(TD.constraints.interval(0.0, 1.0))


def test_samplers_errors_and_dtypes():
    with pytest.raises(RuntimeError, match="floating"):
        tn._standard_gamma(tn.tensor([1, 2]))
    r = tn.poisson(tn.tensor([1.0, 20.0]))
    assert r.dtype == tn.float32 and tuple(r.shape) == (2,)
    assert tn._standard_gamma(tn.ones(2, 3, dtype=tn.float64)).dtype == tn.float64
    assert tn._sample_dirichlet(tn.ones(4, 3)).shape == (4, 3)
    tn.manual_seed(5)
    a = tn._standard_gamma(tn.full((1000,), 2.0))
    tn.manual_seed(5)
    b = tn._standard_gamma(tn.full((1000,), 2.0))
    assert (a.numpy() == b.numpy()).all()     # seeded from the library's generator
    gen = tn.Generator().manual_seed(7)
    c = tn.poisson(tn.full((100,), 3.0), generator=gen)
    gen = tn.Generator().manual_seed(7)
    assert (c.numpy() == tn.poisson(tn.full((100,), 3.0), generator=gen).numpy()).all()
