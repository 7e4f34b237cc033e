"""TransformedDistribution and the distributions torch builds on it (LogNormal, Gumbel, HalfNormal,
HalfCauchy, Pareto, Weibull, Kumaraswamy): a base distribution pushed through Transforms, with
log_prob by the change of variables and rsample reparameterised when the base's is."""
import math
import numbers

from . import (constraints, Distribution, Independent, Normal, Cauchy, Exponential, Gamma, Uniform, broadcast_all, _t,
               _size, _EULER)
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, PowerTransform, StickBreakingTransform,
                         Transform)
from .utils import _sum_rightmost

__all__ = ["TransformedDistribution", "LogNormal", "Gumbel", "HalfNormal", "HalfCauchy", "Pareto", "Weibull", "Kumaraswamy",
           "LogisticNormal", "InverseGamma"]


class TransformedDistribution(Distribution):
    """Y = f(X), X ~ base_distribution, f the composition of `transforms`:
    log p(Y) = log p(X) - log |det dY/dX|. The event shape is the larger of the base's and the transforms'."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        domain_event_dim = transform.domain.event_dim
        if len(base_shape) < domain_event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {domain_event_dim}, "
                             f"but got {_size(base_shape)}.")
        shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(shape))
        if base_shape != expanded_base_shape:
            base_distribution = base_distribution.expand(expanded_base_shape[:len(expanded_base_shape) - base_event_dim])
        reinterpreted_batch_ndims = domain_event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(base_event_dim - domain_event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = tuple(batch_shape)
        shape = batch_shape + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    def sample(self, sample_shape=()):
        with _t().no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim, log_prob, y = len(self.event_shape), 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        # flips value -> 1 - value where the composed map is decreasing
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value


def _expand_td(self, cls, batch_shape, _instance, names=()):
    new = self._get_checked_instance(cls, _instance)
    for n in names:
        setattr(new, n, getattr(self, n).expand(tuple(batch_shape)))
    return TransformedDistribution.expand(self, batch_shape, _instance=new)


class LogNormal(TransformedDistribution):
    """exp(X), X ~ Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, LogNormal, batch_shape, _instance)

    loc = property(lambda self: self.base_dist.loc)
    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: (self.loc + self.scale.square() / 2).exp())
    mode = property(lambda self: (self.loc - self.scale.square()).exp())
    variance = property(lambda self: (self.scale.square().exp() - 1) * (2 * self.loc + self.scale.square()).exp())

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class Gumbel(TransformedDistribution):
    """loc - scale log(-log U), U ~ Uniform(tiny, 1 - eps)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        tn = _t()
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = tn.finfo(self.loc.dtype)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base_dist = Uniform(fi.tiny, 1 - fi.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(tn.full_like(self.loc, fi.tiny), tn.full_like(self.loc, 1 - fi.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-tn.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, Gumbel, batch_shape, _instance, ("loc", "scale"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    mean = property(lambda self: self.loc + self.scale * _EULER)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: self.stddev.square())

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


class HalfNormal(TransformedDistribution):
    """|X|, X ~ Normal(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, HalfNormal, batch_shape, _instance)

    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    mode = property(lambda self: _t().zeros_like(self.scale))
    variance = property(lambda self: self.scale.square() * (1 - 2 / math.pi))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _t().where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfCauchy(TransformedDistribution):
    """|X|, X ~ Cauchy(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, HalfCauchy, batch_shape, _instance)

    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: _t().full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype))
    mode = property(lambda self: _t().zeros_like(self.scale))
    variance = property(lambda self: self.base_dist.variance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _t().as_tensor(value, dtype=self.scale.dtype)
        return _t().where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class Pareto(TransformedDistribution):
    """scale exp(X), X ~ Exponential(alpha)."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, Pareto, batch_shape, _instance, ("scale", "alpha"))

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.square() * a / ((a - 1).square() * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """scale X^(1/concentration), X ~ Exponential(1)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_t().ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        b = tuple(batch_shape)
        new.scale, new.concentration = self.scale.expand(b), self.concentration.expand(b)
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(new, self.base_dist.expand(b), [PowerTransform(exponent=new.concentration_reciprocal),
                                         AffineTransform(loc=0, scale=new.scale)], validate_args=False)
        new._validate_args = self._validate_args
        return new

    mean = property(lambda self: self.scale * _t().lgamma(1 + self.concentration_reciprocal).exp())
    mode = property(lambda self: self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal())

    @property
    def variance(self):
        tn = _t()
        return self.scale.square() * (tn.lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - (2 * tn.lgamma(1 + self.concentration_reciprocal)).exp())

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1


def _kumaraswamy_moments(a, b, n):
    """E[X^n] for Kumaraswamy(a, b): b B(1 + n / a, b)."""
    tn = _t()
    arg1 = 1 + n / a
    return b * (tn.lgamma(arg1) + tn.lgamma(b) - tn.lgamma(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1/concentration0))^(1/concentration1), U ~ Uniform(0, 1)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        tn = _t()
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(tn.full_like(self.concentration0, 0), tn.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, Kumaraswamy, batch_shape, _instance, ("concentration1", "concentration0"))

    mean = property(lambda self: _kumaraswamy_moments(self.concentration1, self.concentration0, 1))

    @property
    def mode(self):
        c1, c0 = self.concentration1, self.concentration0
        log_mode = c0.reciprocal() * (-c0).log1p() - (-c0 * c1).log1p()
        return log_mode.masked_fill((c0 < 1) | (c1 < 1), math.nan).exp()

    variance = property(lambda self: _kumaraswamy_moments(self.concentration1, self.concentration0, 2) - self.mean.square())

    def entropy(self):
        tn = _t()
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = tn.digamma(self.concentration0 + 1) + _EULER
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of Normal(loc, scale): a distribution on the simplex of one more dimension."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, LogisticNormal, batch_shape, _instance)

    loc = property(lambda self: self.base_dist.base_dist.loc)
    scale = property(lambda self: self.base_dist.base_dist.scale)


class InverseGamma(TransformedDistribution):
    """1 / X, X ~ Gamma(concentration, rate) (later PyTorch's)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_td(self, InverseGamma, batch_shape, _instance)

    concentration = property(lambda self: self.base_dist.concentration)
    rate = property(lambda self: self.base_dist.rate)

    @property
    def mean(self):
        c = self.concentration
        return _t().where(c > 1, self.rate / (c - 1), _t().full_like(c, math.inf))

    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def variance(self):
        c = self.concentration
        return _t().where(c > 2, self.rate.square() / ((c - 1).square() * (c - 2)), _t().full_like(c, math.inf))

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
