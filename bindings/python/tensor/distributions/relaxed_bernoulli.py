"""LogitRelaxedBernoulli and RelaxedBernoulli: the binary Concrete relaxation (reparameterised
samples in (0, 1) at a temperature)."""
import numbers

from . import constraints, Distribution, broadcast_all, probs_to_logits, logits_to_probs, _t
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import clamp_probs, lazy_property

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _as_tensor(x, like):
    return x if isinstance(x, _t().Tensor) else _t().tensor(float(x), dtype=like.dtype)


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample: (logit(U) + logits) / temperature."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if is_scalar else self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        b = tuple(batch_shape)
        new.temperature = self.temperature
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(b))
                new._param = getattr(new, name)
        Distribution.__init__(new, b, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    param_shape = property(lambda self: self._param.shape)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(_t().rand(shape, dtype=probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return _as_tensor(self.temperature, logits).log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: a reparameterisable sample in (0, 1) that tends to a
    Bernoulli sample as the temperature goes to 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)
