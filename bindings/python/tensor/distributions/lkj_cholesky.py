"""LKJCholesky: the LKJ distribution over Cholesky factors of correlation matrices, sampled by the
onion method (Lewandowski, Kurowicka and Joe 2009)."""
import math

from . import constraints, Distribution, Beta, broadcast_all, _t

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        tn = _t()
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the onion method: row k (k = 1 .. dim-1) takes y ~ Beta(k / 2, eta + (dim - 2) / 2 - (k - 1) / 2);
        # row 0 gets a dummy Beta(1/2, .) that the (zero) row ignores. torch 1.13 uses k - 1/2 for the
        # first parameter, which skews rows 2.. (their correlations come out more spread than LKJ's,
        # whose off-diagonal elements are exchangeable); this uses the method's k / 2 (NumPyro's)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = 0.5 * tn.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = tn.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        b = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(b)
        new._beta = self._beta.expand(b + (self.dim,))
        Distribution.__init__(new, b, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        tn = _t()
        with tn.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = tn.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype).tril(-1)
            norm = u_normal.square().sum(-1, keepdim=True).sqrt()
            # row 0 is all zeros (0 / 0 in torch, then zeroed): keep it zero
            u_hypersphere = tn.where(norm > 0, u_normal / norm.clamp(min=tn.finfo(y.dtype).tiny), tn.zeros_like(u_normal))
            w = y.sqrt() * u_hypersphere
            diag_elems = (1 - w.square().sum(-1)).clamp(min=tn.finfo(w.dtype).tiny).sqrt()
            return w + diag_elems.diag_embed()

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tn.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = tn.lgamma(alpha) * dm1
        numerator = tn.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
