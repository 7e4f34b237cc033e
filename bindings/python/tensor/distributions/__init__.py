"""torch.distributions: probability distributions with sampling, densities and KL divergences,
on tensor's ops (differentiable where PyTorch's are: rsample reparameterises; Gamma, Beta and
Dirichlet through the C library's standard-gamma sampler and its implicit gradient)."""
import math
import numbers

from .. import _factories
from .. import _ops  # noqa: F401 - the Tensor methods
from .._core import Tensor
from . import constraints
from .constraints import Constraint

__all__ = ["Distribution", "ExponentialFamily", "Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "Gamma", "Beta",
           "Dirichlet", "Poisson", "Bernoulli", "Categorical", "Binomial", "Geometric", "Gumbel", "LogNormal",
           "Independent", "kl_divergence", "register_kl", "constraints",
           "TransformedDistribution", "HalfNormal", "HalfCauchy", "Pareto", "Weibull", "Kumaraswamy",
           "MultivariateNormal", "LowRankMultivariateNormal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Multinomial", "StudentT", "Chi2", "RelaxedBernoulli", "RelaxedOneHotCategorical", "MixtureSameFamily",
           "LogisticNormal", "NegativeBinomial", "FisherSnedecor", "ContinuousBernoulli", "VonMises", "LKJCholesky", "Wishart",
           "InverseGamma", "GeneralizedPareto",
           "transforms", "biject_to", "transform_to",
           "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform", "identity_transform"]

_tn = None


def _t():
    global _tn
    if _tn is None:
        import tensor as _mod
        _tn = _mod
    return _tn


_EULER = 0.57721566490153286061


def broadcast_all(*values):
    """The values as tensors of one broadcast shape (numbers take the dtype of the tensors)."""
    tn = _t()
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors and not all(isinstance(v, numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or torch.tensor.")
    dtype = tensors[0].dtype if tensors else tn.get_default_dtype()
    vals = [v if isinstance(v, Tensor) else tn.tensor(float(v), dtype=dtype) for v in values]
    return tuple(tn.broadcast_tensors(*vals))


def probs_to_logits(probs, is_binary=False):
    eps = _t().finfo(probs.dtype).eps
    p = probs.clamp(min=eps, max=1 - eps)
    return (p.log() - (-p).log1p()) if is_binary else p.log()


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def _size(shape):
    tn = _t()
    return tn.Size(tuple(int(s) for s in shape))


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @property
    def arg_constraints(self):
        """{parameter name: Constraint} for the tensor parameters (subclasses define it)."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint the values lie in (subclasses define it)."""
        raise NotImplementedError

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = _size(batch_shape), _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            import warnings
            from .utils import lazy_property
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or "
                              "initialize the distribution with `validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                # a lazy parameter not computed yet (the other of probs / logits) is not checked, as torch
                if constraints.is_dependent(constraint) or (param not in self.__dict__
                                                            and isinstance(getattr(type(self), param, None), lazy_property)):
                    continue
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                     f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    def sample(self, sample_shape=()):
        with _t().no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        import warnings
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        return _size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        ev = len(self._event_shape)
        if tuple(value.shape[len(value.shape) - ev:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {tuple(value.shape)} vs {tuple(self._event_shape)}.")
        actual, expected = tuple(value.shape), tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            import warnings
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.")
            return
        if not constraints.is_dependent(support) and not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {actual}) to be within the support "
                             f"({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom __init__ method "
                                      "must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].shape}" for p in names)
        return type(self).__name__ + "(" + args + ")"


class ExponentialFamily(Distribution):
    """p(x) = exp(<t(x), theta> - F(theta) + k(x)): subclasses give the natural parameters theta
    (_natural_params), the log normaliser F and E[k(x)] (_mean_carrier_measure); the entropy and the
    KL divergence between two members of one family follow from F's Bregman divergence."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        tn = _t()
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = tn.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for nat, g in zip(nparams, gradients):
            result = result - (nat * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result


def _expand_params(self, cls, batch_shape, _instance, names, **extra):
    new = self._get_checked_instance(cls, _instance)
    for n in names:
        setattr(new, n, getattr(self, n).expand(tuple(batch_shape)))
    for k, v in extra.items():
        setattr(new, k, v)
    Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


class Normal(ExponentialFamily):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Normal, batch_shape, _instance, ("loc", "scale"))

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.square())

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _t().randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def sample(self, sample_shape=()):
        with _t().no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale.square()
        return -(value - self.loc).square() / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _t().erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * _t().erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.loc / self.scale.square(), -0.5 * self.scale.square().reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.square() / y + 0.5 * (-math.pi / y).log()


class Uniform(Distribution):
    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Uniform, batch_shape, _instance, ("low", "high"))

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: self.high * float("nan"))
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).square() / 12)

    def rsample(self, sample_shape=()):
        u = _t().rand(tuple(self._extended_shape(sample_shape)), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).type_as(self.low)
        ub = (self.high > value).type_as(self.low)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Exponential, batch_shape, _instance, ("rate",))

    mean = property(lambda self: self.rate.reciprocal())
    mode = property(lambda self: _t().zeros_like(self.rate))
    stddev = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))

    def rsample(self, sample_shape=()):
        # torch's: exponential_ of a new tensor (the same draws for the same seed), over the rate
        return _t().empty(tuple(self._extended_shape(sample_shape)), dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


class Laplace(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: 2 ** 0.5 * self.scale)
    variance = property(lambda self: 2 * self.scale.square())

    def rsample(self, sample_shape=()):
        tn = _t()
        eps = tn.finfo(self.loc.dtype).eps
        u = tn.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype) * (2 - 2 * eps) - (1 - eps)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    mean = property(lambda self: _t().full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype))
    mode = property(lambda self: self.loc)
    variance = property(lambda self: _t().full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype))

    def rsample(self, sample_shape=()):
        eps = _t().empty(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype).cauchy_()   # torch's draws
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).square().log1p()

    def cdf(self, value):
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.square())

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x = _factories._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return x.clamp(min=_t().finfo(x.dtype).tiny)

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        value = value if isinstance(value, Tensor) else tn.tensor(value, dtype=self.rate.dtype)
        return (tn.xlogy(self.concentration, self.rate) + tn.xlogy(self.concentration - 1, value)
                - self.rate * value - tn.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _t().special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        tn = _t()
        c = self.concentration
        return c - self.rate.log() + tn.lgamma(c) + (1.0 - c) * tn.digamma(c)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return _t().lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return _factories._sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return tn.xlogy(c - 1.0, value).sum(-1) + tn.lgamma(c.sum(-1)) - tn.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        return cm1 / cm1.sum(-1, True)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, True)
        return self.concentration * (c0 - self.concentration) / (c0.square() * (c0 + 1))

    def entropy(self):
        tn = _t()
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (tn.lgamma(self.concentration).sum(-1) - tn.lgamma(a0) - (k - a0) * tn.digamma(a0)
                - ((self.concentration - 1.0) * tn.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        tn = _t()
        c1, c0 = broadcast_all(concentration1, concentration0)
        self.concentration1, self.concentration0 = c1, c0
        self._dirichlet = Dirichlet(tn.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return Beta(self.concentration1.expand(tuple(batch_shape)), self.concentration0.expand(tuple(batch_shape)), validate_args=False)

    mean = property(lambda self: self.concentration1 / (self.concentration1 + self.concentration0))
    mode = property(lambda self: self._dirichlet.mode[..., 0])

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.square() * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(tn.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Poisson, batch_shape, _instance, ("rate",))

    mean = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=()):
        with _t().no_grad():
            return _factories.poisson(self.rate.expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return tn.xlogy(value, rate) - rate - tn.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


class Bernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self.logits = probs_to_logits(self.probs, is_binary=True)
            self._param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            self.probs = logits_to_probs(self.logits, is_binary=True)
            self._param = self.logits
        self._given = "probs" if probs is not None else "logits"
        super().__init__(self._param.shape, validate_args=validate_args)

    arg_constraints = property(lambda self: {self._given: Bernoulli._constraints[self._given]})
    _constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def expand(self, batch_shape, _instance=None):
        p = getattr(self, self._given).expand(tuple(batch_shape))
        return Bernoulli(**{self._given: p}, validate_args=False)

    mean = property(lambda self: self.probs)
    mode = property(lambda self: (self.probs >= 0.5).to(self.probs.dtype).masked_fill(self.probs == 0.5, math.nan))
    variance = property(lambda self: self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        with _t().no_grad():
            return _t().bernoulli(self.probs.expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -tn.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return _t().nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        tn = _t()
        values = tn.arange(2, dtype=self._param.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return ((self.probs / (1 - self.probs)).log(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()


class Geometric(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self.logits = probs_to_logits(self.probs, is_binary=True)
        else:
            (self.logits,) = broadcast_all(logits)
            self.probs = logits_to_probs(self.logits, is_binary=True)
        self._given = "probs" if probs is not None else "logits"
        super().__init__(self.probs.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape {tuple(self.probs.shape)}) "
                             f"of distribution {self!r} to satisfy the constraint Interval(lower_bound=0.0, upper_bound=1.0), "
                             f"but found invalid values:\n{self.probs}")

    arg_constraints = property(lambda self: {self._given: Geometric._constraints[self._given]})
    _constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def expand(self, batch_shape, _instance=None):
        return Geometric(**{self._given: getattr(self, self._given).expand(tuple(batch_shape))}, validate_args=False)

    mean = property(lambda self: 1.0 / self.probs - 1.0)
    mode = property(lambda self: _t().zeros_like(self.probs))
    variance = property(lambda self: (1.0 / self.probs - 1.0) / self.probs)

    def sample(self, sample_shape=()):
        tn = _t()
        with tn.no_grad():
            u = tn.rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype).clamp(min=tn.finfo(self.probs.dtype).tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone().masked_fill((probs == 1) & (value == 0), 0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        tn = _t()
        return tn.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class Categorical(Distribution):
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = probs_to_logits(self.probs)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self.probs = logits_to_probs(self.logits)
        self._given = "probs" if probs is not None else "logits"
        self._raw = probs if probs is not None else logits
        self._num_events = self.probs.size(-1)
        super().__init__(self.probs.shape[:-1], validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {self._given: constraints.simplex if self._given == "probs" else constraints.independent(constraints.real, 1)}

    def expand(self, batch_shape, _instance=None):
        return type(self)(**{self._given: getattr(self, self._given).expand(tuple(batch_shape) + (self._num_events,))}, validate_args=False)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    param_shape = property(lambda self: self.probs.shape)
    mean = property(lambda self: _t().full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype))
    mode = property(lambda self: self.probs.argmax(-1))
    variance = property(lambda self: _t().full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype))

    def sample(self, sample_shape=()):
        tn = _t()
        sample_shape = tuple(sample_shape)
        with tn.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            n = int(math.prod(sample_shape)) if sample_shape else 1
            s = tn.multinomial(probs_2d, n, True).t()
            return s.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = tn.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        tn = _t()
        min_real = tn.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        tn = _t()
        values = tn.arange(self._num_events, dtype=tn.int64).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Binomial(Distribution):
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self.logits = probs_to_logits(self.probs, is_binary=True)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self.probs = logits_to_probs(self.logits, is_binary=True)
        self._given = "probs" if probs is not None else "logits"
        super().__init__(self.probs.shape, validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"total_count": constraints.nonnegative_integer,
                self._given: constraints.unit_interval if self._given == "probs" else constraints.real}

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    def expand(self, batch_shape, _instance=None):
        b = tuple(batch_shape)
        return Binomial(self.total_count.expand(b), **{self._given: getattr(self, self._given).expand(b)}, validate_args=False)

    mean = property(lambda self: self.total_count * self.probs)
    mode = property(lambda self: ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count))
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with _t().no_grad():
            return _factories.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = tn.lgamma(n + 1)
        log_factorial_k = tn.lgamma(value + 1)
        log_factorial_nmk = tn.lgamma(n - value + 1)
        # value log p + (n - value) log(1 - p) = value logits - n softplus(logits), stable in the logits
        normalize = n * tn.nn.functional.softplus(self.logits)
        return log_factorial_n - log_factorial_k - log_factorial_nmk + value * self.logits - normalize

    def entropy(self):
        tn = _t()
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        values = tn.arange(1 + total, dtype=self.probs.dtype).view((-1,) + (1,) * len(self._batch_shape))
        lp = self.log_prob(values.expand((-1,) + tuple(self._batch_shape)))
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand=True):
        tn = _t()
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = tn.arange(1 + total, dtype=self.probs.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Independent(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape, event_shape = shape[:len(shape) - event_dim], shape[len(shape) - event_dim:]
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    # enumerating the product of reinterpreted dims is not supported (torch neither)
    has_enumerate_support = property(lambda self: self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    @constraints.dependent_property
    def support(self):
        s = self.base_dist.support
        return constraints.independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else s

    def expand(self, batch_shape, _instance=None):
        b = tuple(batch_shape) + tuple(self.event_shape[:self.reinterpreted_batch_ndims])
        return Independent(self.base_dist.expand(b), self.reinterpreted_batch_ndims, validate_args=False)

    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def _sum_rightmost(self, x):
        n = self.reinterpreted_batch_ndims
        return x.reshape(tuple(x.shape[:x.dim() - n]) + (-1,)).sum(-1) if n else x

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


# --------------------------------------------------------------------------- KL divergence
_KL_REGISTRY = {}   # (type_p, type_q) -> function, as registered
_KL_MEMOIZE = {}    # the dispatch result for each concrete pair of types


def register_kl(type_p, type_q):
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)) or not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError("Expected type_p and type_q to be subclasses of Distribution")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()     # the most specific match may have changed
        return fun
    return decorator


class _Match:
    """A registered pair, ordered lexicographically by subclass (torch's dispatch order)."""
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True

    def __lt__(self, other):
        return self <= other and self != other


def _dispatch_kl(type_p, type_q):
    """The most specific registered pair for (type_p, type_q); a RuntimeWarning when the order by p
    first and the order by q first disagree (register the more specific pair to settle it)."""
    import warnings
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun, right_fun = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) by the most specific registered pair of p's and q's types."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).square()
    t1 = ((p.loc - q.loc) / q.scale).square()
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    sp = _t().nn.functional.softplus
    t1 = p.probs * (sp(-q.logits) - sp(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (sp(q.logits) - sp(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    return t.sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    tn = _t()
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = tn.lgamma(q.concentration) - tn.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * tn.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    tn = _t()
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = tn.lgamma(sp) - tn.lgamma(sq)
    t2 = (tn.lgamma(p.concentration) - tn.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = tn.digamma(p.concentration) - tn.digamma(sp).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


# the rest of the namespace, in modules of their own (they build on the classes above)
from . import utils, transforms  # noqa: E402,F401
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,  # noqa: E402
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform, SoftplusTransform, TanhTransform,
                         SoftmaxTransform, StackTransform, StickBreakingTransform, Transform, identity_transform)
from .constraint_registry import biject_to, transform_to  # noqa: E402
from .transformed_distribution import (TransformedDistribution, LogNormal, Gumbel, HalfNormal, HalfCauchy, Pareto,  # noqa: E402
                                       Weibull, Kumaraswamy, LogisticNormal, InverseGamma)
from .generalized_pareto import GeneralizedPareto  # noqa: E402
from .negative_binomial import NegativeBinomial  # noqa: E402
from .fishersnedecor import FisherSnedecor  # noqa: E402
from .continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from .von_mises import VonMises  # noqa: E402
from .lkj_cholesky import LKJCholesky  # noqa: E402
from .wishart import Wishart  # noqa: E402
from .multivariate_normal import MultivariateNormal, LowRankMultivariateNormal  # noqa: E402
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough, Multinomial  # noqa: E402
from .studentT import StudentT, Chi2  # noqa: E402
# LogitRelaxedBernoulli and ExpRelaxedCategorical stay in their modules, as in torch
from .relaxed_bernoulli import RelaxedBernoulli  # noqa: E402
from .relaxed_categorical import RelaxedOneHotCategorical  # noqa: E402
from .mixture_same_family import MixtureSameFamily  # noqa: E402
from . import kl  # noqa: E402,F401 - registers the remaining KL pairs


def _module_aliases():
    """torch's per-class module paths (tensor.distributions.normal.Normal, ...) for the classes that do
    not live in a module of that name here."""
    import sys
    import types
    paths = {"distribution": "Distribution", "exp_family": "ExponentialFamily", "normal": "Normal", "uniform": "Uniform",
             "exponential": "Exponential", "laplace": "Laplace", "cauchy": "Cauchy", "gamma": "Gamma", "beta": "Beta",
             "dirichlet": "Dirichlet", "poisson": "Poisson", "bernoulli": "Bernoulli", "categorical": "Categorical",
             "binomial": "Binomial", "geometric": "Geometric", "independent": "Independent", "gumbel": "Gumbel",
             "log_normal": "LogNormal", "half_normal": "HalfNormal", "half_cauchy": "HalfCauchy", "pareto": "Pareto",
             "weibull": "Weibull", "kumaraswamy": "Kumaraswamy", "multinomial": "Multinomial", "chi2": "Chi2",
             "logistic_normal": "LogisticNormal", "inverse_gamma": "InverseGamma"}
    g = globals()
    for mod, cls in paths.items():
        m = types.ModuleType(f"{__name__}.{mod}", f"torch.distributions.{mod}")
        setattr(m, cls, g[cls])
        m.__all__ = [cls]
        sys.modules[m.__name__] = m
        g[mod] = m


_module_aliases()
