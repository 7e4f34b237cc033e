"""Wishart: distributions over positive-definite matrices, df and one of covariance_matrix /
precision_matrix / scale_tril; rsample by the Bartlett decomposition (chi-squared diagonal through
the implicit gamma gradient)."""
import math
import numbers
import warnings

from . import constraints, ExponentialFamily, Distribution, _t
from .multivariate_normal import _precision_to_scale_tril, _cholesky_solve
from .studentT import Chi2
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    tn = _t()
    if not bool((x > (p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    return tn.digamma(x.unsqueeze(-1) - tn.arange(p, dtype=x.dtype).div(2).expand(tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=_t().finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    arg_constraints = {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        tn = _t()
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = tn.tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = tuple(tn.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        # df's bound depends on the dimension (torch writes it into the class's dict; here the instance's)
        self.arg_constraints = dict(Wishart.arg_constraints, df=constraints.greater_than(event_shape[-1] - 1))
        if bool((self.df < event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tn.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        tn = _t()
        p = self._event_shape[-1]
        return Chi2(df=self.df.unsqueeze(-1) - tn.arange(p, dtype=self._unbroadcasted_scale_tril.dtype).expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        b = tuple(batch_shape)
        cov_shape = b + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(b)
        new._batch_dims = [-(x + 1) for x in range(len(b))]
        new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, b, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(b)
        new._validate_args = self._validate_args
        return new

    def _mat_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._mat_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._mat_shape())

    @lazy_property
    def precision_matrix(self):
        eye = _t().eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return _cholesky_solve(eye, self._unbroadcasted_scale_tril).expand(self._mat_shape())

    @property
    def mean(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (V.square() + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        tn = _t()
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed()
        below = tn.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,), dtype=diag.dtype)
        noise = diag + vec_to_tril_matrix(below, diag=-1)     # row-major, as torch's tril_indices
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None):
        # redraws the samples that are not positive definite (torch 1.13 tests the opposite condition,
        # a bug later torch fixes: it redraws valid samples and warns on every call)
        tn = _t()
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        bad = ~self.support.check(sample)
        if self._batch_shape:
            bad = bad.reshape(tuple(bad.shape[:len(sample_shape)]) + (-1,)).any(-1)
        if bool(bad.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                new = self._bartlett_sampling(sample_shape)
                sample = tn.where(bad.reshape(tuple(bad.shape) + (1,) * (sample.dim() - bad.dim())), new, sample)
                bad = ~self.support.check(sample)
                if self._batch_shape:
                    bad = bad.reshape(tuple(bad.shape[:len(sample_shape)]) + (-1,)).any(-1)
                if not bool(bad.any()):
                    break
        return sample

    def log_prob(self, value):
        tn = _t()
        if self._validate_args:
            self._validate_sample(value)
        nu, p, L = self.df, self._event_shape[-1], self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - tn.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * tn.linalg.slogdet(value)[1]
                - _cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        tn = _t()
        nu, p, L = self.df, self._event_shape[-1], self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + tn.mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        tn = _t()
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-tn.linalg.slogdet(-2 * x)[1] + _log_2 * p) + tn.mvlgamma(y + (p + 1) / 2, p)
