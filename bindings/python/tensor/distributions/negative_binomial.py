"""NegativeBinomial: the number of successes before total_count failures (a Gamma-Poisson mixture)."""
from . import constraints, Distribution, Gamma, broadcast_all, probs_to_logits, logits_to_probs, _t, _factories
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        b = tuple(batch_shape)
        new.total_count = self.total_count.expand(b)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(b))
                new._param = getattr(new, name)
        Distribution.__init__(new, b, validate_args=False)
        new._validate_args = self._validate_args
        return new

    mean = property(lambda self: self.total_count * self.logits.exp())
    mode = property(lambda self: ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0))
    variance = property(lambda self: self.mean / (-self.logits).sigmoid())

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    param_shape = property(lambda self: self._param.shape)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        with _t().no_grad():
            return _factories.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        F = tn.nn.functional
        log_unnormalized_prob = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -tn.lgamma(self.total_count + value) + tn.lgamma(1.0 + value) + tn.lgamma(self.total_count)
        # total_count + value == 0: the probability of 0 from a point mass, log 1
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
