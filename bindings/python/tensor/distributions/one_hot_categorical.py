"""OneHotCategorical (+ the straight-through rsample) and Multinomial, on Categorical."""
import math

from . import constraints, Distribution, Categorical, Binomial, broadcast_all, _t

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough", "Multinomial"]


class OneHotCategorical(Distribution):
    """Categorical with one-hot vectors of length K as values."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)
    mean = property(lambda self: self._categorical.probs)
    variance = property(lambda self: self._categorical.probs * (1 - self._categorical.probs))

    @property
    def mode(self):
        probs = self._categorical.probs
        return _t().nn.functional.one_hot(probs.argmax(-1), num_classes=probs.shape[-1]).to(probs.dtype)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return _t().nn.functional.one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _t().eye(n, dtype=self.probs.dtype).view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """rsample: the one-hot sample in the forward pass, the gradient of probs in the backward pass."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Multinomial(Distribution):
    """Counts of total_count draws from a Categorical (one total_count for the whole batch, as torch)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    logits = property(lambda self: self._categorical.logits)
    probs = property(lambda self: self._categorical.probs)
    param_shape = property(lambda self: self._categorical.param_shape)
    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        tn = _t()
        sample_shape = tuple(sample_shape)
        with tn.no_grad():
            samples = self._categorical.sample((self.total_count,) + sample_shape)
            samples = samples.movedim(0, -1)    # the draws last: (sample, batch, total_count)
            counts = tn.zeros(tuple(self._extended_shape(sample_shape)), dtype=samples.dtype)
            counts.scatter_add_(-1, samples, tn.ones_like(samples))
            return counts.type_as(self.probs)

    def entropy(self):
        tn = _t()
        n = tn.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - tn.lgamma(n + 1)
        # sum_i E[lgamma(x_i + 1)] with x_i ~ Binomial(n, p_i), over the support 1..n
        support = tn.arange(1, self.total_count + 1, dtype=self.probs.dtype).view((-1,) + (1,) * self.probs.dim())
        weights = tn.lgamma(support + 1)
        binomial_probs = self._binomial.log_prob(support).exp()
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = tn.lgamma(value.sum(-1) + 1)
        log_factorial_xs = tn.lgamma(value + 1).sum(-1)
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0)   # 0 * -inf counts as 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
