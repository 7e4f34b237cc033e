"""VonMises: the circular normal on [-pi, pi), sampled by Best and Fisher's (1979) rejection method."""
import math

from . import constraints, Distribution, broadcast_all, _t
from .utils import lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


# Abramowitz and Stegun 9.8.1-9.8.4, torch's approximations of log I0 and log I1
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1."""
    y = (x / 3.75).square()
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return _t().where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    tn = _t()
    done = tn.zeros(tuple(x.shape), dtype=tn.bool)
    while not bool(done.all()):
        u1, u2, u3 = tn.rand((3,) + tuple(x.shape), dtype=loc.dtype).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = tn.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc).remainder(2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        tau = 1 + (1 + 4 * self.concentration.square()).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * self.concentration)
        self._proposal_r = (1 + rho.square()) / (2 * rho)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    def sample(self, sample_shape=()):
        tn = _t()
        with tn.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            x = tn.zeros(shape, dtype=self.loc.dtype)
            return _rejection_sample(self.loc, self.concentration, self._proposal_r, x)

    def expand(self, batch_shape, _instance=None):
        b = tuple(batch_shape)
        return type(self)(self.loc.expand(b), self.concentration.expand(b), validate_args=self.__dict__.get("_validate_args"))

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
