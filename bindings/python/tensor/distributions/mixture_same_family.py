"""MixtureSameFamily: a Categorical over the rightmost batch dim of one component distribution."""
from . import Distribution, Categorical, _t

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution, self._component_distribution = mixture_distribution, component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distribtutions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for s1, s2 in zip(reversed(mdbs), reversed(cdbs)):
            if s1 != 1 and s2 != 1 and s1 != s2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_distribution.batch_shape}) is not compatible "
                                 f"with `component_distribution.batch_shape`({_t().Size(cdbs)})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(batch_shape=cdbs, event_shape=component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        b = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(b + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(b)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, b, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return self._component_distribution.support

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).square()).sum(-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))         # [S, B, k]
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)           # [B, k]
        return (log_prob_x + log_mix_prob).logsumexp(-1)                        # [S, B]

    def sample(self, sample_shape=()):
        tn = _t()
        sample_shape = tuple(sample_shape)
        with tn.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            idx = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1)).repeat((1,) * len(mix_shape) + (1,) + es)
            return comp_samples.gather(gather_dim, idx).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        # probs (*mix_batch, k) -> (*mix_batch, k, 1 per event dim): right-aligned broadcasting does the
        # rest. torch 1.13 also inserts ones in front of k, sized by batch_shape.numel() (a bug that
        # breaks a mixture batch of lower rank than the component's); not reproduced.
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
