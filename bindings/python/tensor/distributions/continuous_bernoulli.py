"""ContinuousBernoulli: the density proportional to p^x (1 - p)^(1 - x) on [0, 1] (Loaiza-Ganem and
Cunningham 2019), with Taylor expansions inside the unstable region around p = 1/2 (`lims`)."""
import math
import numbers

from . import constraints, Distribution, ExponentialFamily, broadcast_all, probs_to_logits, logits_to_probs, _t
from .utils import clamp_probs, lazy_property

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            # torch checks here (before clamping) only when validate_args is given explicitly
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if is_scalar else self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        b = tuple(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(b))
                new._param = getattr(new, name)
        Distribution.__init__(new, b, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return _t().where(self._outside_unstable_region(), self.probs, self._lims[0] * _t().ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log of the normalising constant, as a function of probs."""
        tn = _t()
        cut_probs = self._cut_probs()
        below = tn.where(cut_probs <= 0.5, cut_probs, tn.zeros_like(cut_probs))
        above = tn.where(cut_probs >= 0.5, cut_probs, tn.ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - tn.where(
            cut_probs <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).square()
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tn.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / ((-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x
        return _t().where(self._outside_unstable_region(), mus, taylor)

    stddev = property(lambda self: self.variance.sqrt())

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vs = (cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).square()
              + 1.0 / ((-cut_probs).log1p() - cut_probs.log()).square())
        x = (self.probs - 0.5).square()
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _t().where(self._outside_unstable_region(), vs, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    param_shape = property(lambda self: self._param.shape)

    def sample(self, sample_shape=()):
        u = _t().rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype)
        with _t().no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        return self.icdf(_t().rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = _t().nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded = tn.where(self._outside_unstable_region(), cdfs, value)
        return tn.where(value <= 0.0, tn.zeros_like(value), tn.where(value >= 1.0, tn.ones_like(value), unbounded))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        inside = ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p() - (-cut_probs).log1p()) / (cut_probs.log() - (-cut_probs).log1p())
        return _t().where(self._outside_unstable_region(), inside, value)

    def entropy(self):
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        tn = _t()
        out = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = tn.where(out, x, (self._lims[0] - 0.5) * tn.ones_like(x))
        log_norm = (cut.exp() - 1.0).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.square() / 24.0 - x.pow(4) / 2880.0
        return tn.where(out, log_norm, taylor)
