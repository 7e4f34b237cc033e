"""GeneralizedPareto (later PyTorch's, after TensorFlow Probability's): loc, scale and concentration
xi; Exponential at xi = 0, Uniform at xi = -1, Pareto for xi > 0 with loc = scale / xi. rsample by
the inverse CDF."""
import math
import numbers

from . import constraints, Distribution, broadcast_all, _t

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if scalar else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        b = tuple(batch_shape)
        new.loc, new.scale, new.concentration = self.loc.expand(b), self.scale.expand(b), self.concentration.expand(b)
        Distribution.__init__(new, b, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _safe(self):
        """(xi == 0 mask, xi with the zeros replaced by 1): the xi -> 0 limit is taken separately."""
        tn = _t()
        c = self.concentration
        eq_zero = c.isclose(tn.zeros_like(c))
        return eq_zero, tn.where(eq_zero, tn.ones_like(c), c)

    def rsample(self, sample_shape=()):
        return self.icdf(_t().rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe()
        y = 1 / safe + tn.ones_like(z)
        nonzero = tn.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - tn.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe()
        return tn.where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        tn = _t()
        eq_zero, safe = self._safe()
        logu = (-value).log1p()
        return tn.where(eq_zero, self.loc - self.scale * logu, self.loc + self.scale / safe * (-safe * logu).expm1())

    @property
    def mean(self):
        tn = _t()
        c = self.concentration
        valid = c < 1
        safe = tn.where(valid, c, tn.full_like(c, 0.5))
        return tn.where(valid, self.loc + self.scale / (1 - safe), tn.full_like(c, math.nan))

    @property
    def variance(self):
        tn = _t()
        c = self.concentration
        valid = c < 0.5
        safe = tn.where(valid, c, tn.full_like(c, 0.25))
        return tn.where(valid, self.scale.square() / ((1 - safe).square() * (1 - 2 * safe)), tn.full_like(c, math.nan))

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).broadcast_to(tuple(self._batch_shape))

    mode = property(lambda self: self.loc)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        tn = _t()
        lower = self.loc
        upper = tn.where(self.concentration < 0, lower - self.scale / self.concentration, tn.full_like(lower, math.inf))
        return constraints.interval(lower, upper)
