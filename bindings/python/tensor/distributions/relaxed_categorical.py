"""ExpRelaxedCategorical and RelaxedOneHotCategorical: the Concrete / Gumbel-softmax relaxation of
a Categorical (reparameterised samples on the simplex at a temperature)."""
from . import constraints, Distribution, Categorical, broadcast_all, _t
from .relaxed_bernoulli import _as_tensor
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample: log_softmax((logits + Gumbel) / temperature)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector   # the true support is a submanifold of this
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    param_shape = property(lambda self: self._categorical.param_shape)
    logits = property(lambda self: self._categorical.logits)
    probs = property(lambda self: self._categorical.probs)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        uniforms = clamp_probs(_t().rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        tn = _t()
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = _as_tensor(self.temperature, logits)
        log_scale = tn.full_like(temperature, float(K)).lgamma() - temperature.log().mul(-(K - 1))
        score = logits - value.mul(temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """exp of an ExpRelaxedCategorical: Gumbel-softmax samples on the simplex."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)
