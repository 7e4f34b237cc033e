"""StudentT and Chi2 (Gamma(df / 2, 1 / 2)); StudentT's rsample is Normal / sqrt(Chi2 / df),
reparameterised through the implicit gamma gradient."""
import math

from . import constraints, Distribution, Gamma, broadcast_all, _t

__all__ = ["StudentT", "Chi2"]


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return Gamma.expand(self, batch_shape, new)

    df = property(lambda self: self.concentration * 2)


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        b = tuple(batch_shape)
        new.df, new.loc, new.scale = self.df.expand(b), self.loc.expand(b), self.scale.expand(b)
        new._chi2 = self._chi2.expand(b)
        Distribution.__init__(new, b, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, math.nan)

    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        tn = _t()
        df = self.df
        v = tn.where(df > 2, self.scale.square() * df / (df - 2), df)
        return v.masked_fill((df <= 2) & (df > 1), math.inf).masked_fill(df <= 1, math.nan)

    def rsample(self, sample_shape=()):
        tn = _t()
        X = tn.randn(tuple(self._extended_shape(sample_shape)), dtype=self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * (Z / self.df).rsqrt())

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + tn.lgamma(0.5 * self.df) - tn.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.square() / self.df).log1p() - Z

    def entropy(self):
        tn = _t()
        lbeta = tn.lgamma(0.5 * self.df) + math.lgamma(0.5) - tn.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (tn.digamma(0.5 * (self.df + 1)) - tn.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
