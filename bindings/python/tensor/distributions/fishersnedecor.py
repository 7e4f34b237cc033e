"""FisherSnedecor: the F distribution, (X1 / df1) / (X2 / df2) for chi-squared X1, X2 (rsample through
the implicit gamma gradient)."""
import math
import numbers

from . import constraints, Distribution, Gamma, broadcast_all, _t

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if scalar else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        b = tuple(batch_shape)
        new.df1, new.df2 = self.df1.expand(b), self.df2.expand(b)
        new._gamma1, new._gamma2 = self._gamma1.expand(b), self._gamma2.expand(b)
        Distribution.__init__(new, b, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2.masked_fill(self.df2 <= 2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return mode.masked_fill(self.df1 <= 2, math.nan)

    @property
    def variance(self):
        df2 = self.df2.masked_fill(self.df2 <= 4, math.nan)
        return 2 * df2.square() * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).square() * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = _t().finfo(self.df1.dtype).tiny
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (X1 / X2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
