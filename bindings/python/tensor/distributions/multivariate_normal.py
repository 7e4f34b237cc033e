"""MultivariateNormal (loc + one of covariance_matrix / precision_matrix / scale_tril) and
LowRankMultivariateNormal (covariance W W^T + diag(D)), on a Cholesky factor and triangular solves."""
import math

from . import constraints, Distribution, _t, _size
from .utils import lazy_property

__all__ = ["MultivariateNormal", "LowRankMultivariateNormal"]


def _solve_tril(L, B, upper=False):
    """L^-1 B for lower-triangular L (upper=True: upper-triangular), batched and broadcast.
    linalg.solve_triangular when the library has it; otherwise linalg.solve on L.tril() / L.triu()
    (which keeps the gradient on that triangle, as solve_triangular's)."""
    linalg = _t().linalg
    if hasattr(linalg, "solve_triangular"):
        return linalg.solve_triangular(L, B, upper=upper)
    if B.dim() < L.dim():
        # B as matrices: linalg.solve would read a (n, k) B beside a batched (b, n, n) L as b vectors when k == b
        B = B.expand(tuple(L.shape[:L.dim() - B.dim()]) + tuple(B.shape))
    return linalg.solve(L.triu() if upper else L.tril(), B)


def _cholesky_solve(B, L):
    """(L L^T)^-1 B from the lower factor L (torch.cholesky_solve(B, L))."""
    return _solve_tril(L.transpose(-2, -1), _solve_tril(L, B), upper=True)


def _batch_mv(bmat, bvec):
    """bmat @ bvec over the last dims, broadcast; one GEMM when bmat is a single matrix."""
    if bmat.dim() == 2:
        return bvec @ bmat.transpose(-2, -1)
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """|L^-1 x|^2 over the last dim, bL (..., n, n) broadcast against bx (..., n). Sample dims in front
    of L's batch dims become columns of one solve per factor instead of copies of L."""
    n = bx.size(-1)
    lb = tuple(bL.shape[:-2])
    outer = bx.dim() - 1 - len(lb)
    if outer > 0 and tuple(bx.shape[outer:-1]) == lb:
        xs = tuple(bx.shape[:-1])
        x = bx.reshape((-1,) + lb + (n,)).movedim(0, -1)           # (*lb, n, S)
        m = _solve_tril(bL, x).square().sum(-2)                      # (*lb, S)
        return m.movedim(-1, 0).reshape(xs)
    return _solve_tril(bL, bx.unsqueeze(-1)).squeeze(-1).square().sum(-1)


def _precision_to_scale_tril(P):
    # the flipped Cholesky factor of P gives an upper factor U of P^-1 = ... without inverting P itself
    tn = _t()
    Lf = tn.linalg.cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    return _solve_tril(L_inv, tn.eye(P.shape[-1], dtype=P.dtype))


def _cholesky_inverse(L):
    """(L L^T)^-1 from the lower factor L: L^-T L^-1."""
    Linv = _solve_tril(L, _t().eye(L.shape[-1], dtype=L.dtype).expand(tuple(L.shape)))
    return Linv.transpose(-2, -1) @ Linv


class MultivariateNormal(Distribution):
    """N(loc, Sigma), Sigma given by exactly one of covariance_matrix, precision_matrix or scale_tril."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        tn = _t()
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        for name, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix)):
            if m is None:
                continue
            if m.dim() < 2:
                what = "scale_tril matrix" if name == "scale_tril" else name
                raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
            batch_shape = tuple(tn.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1])))
            setattr(self, name, m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tn.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        ev = tuple(self.event_shape)
        new.loc = self.loc.expand(batch_shape + ev)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + ev + ev))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _mat_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._mat_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._mat_shape())

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._mat_shape())

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    variance = property(lambda self: self._unbroadcasted_scale_tril.square().sum(-1).expand(
        tuple(self._batch_shape) + tuple(self._event_shape)))

    def rsample(self, sample_shape=()):
        eps = _t().randn(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))


def _batch_capacitance_tril(W, D):
    """Cholesky factor of I + W^T D^-1 W (m x m)."""
    tn = _t()
    m = W.size(-1)
    K = (W.transpose(-2, -1) / D.unsqueeze(-2)) @ W
    return tn.linalg.cholesky(K + tn.eye(m, dtype=K.dtype))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    # matrix determinant lemma: log det(W W^T + D) = log det(C) + log det(D)
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    # Woodbury: x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    return (x.square() / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(Wt_Dinv, x))


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor cov_factor^T + diag(cov_diag)): O(n m^2) log_prob and sampling."""
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        tn = _t()
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {_size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = tn.broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {_size(loc.shape)}, cov_factor {_size(cov_factor.shape)}, "
                             f"cov_diag {_size(cov_diag.shape)}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc, new.cov_diag = self.loc.expand(loc_shape), self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _mat_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.square().sum(-1) + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        # D^1/2 chol(I + D^-1/2 W W^T D^-1/2): the Cholesky factor of the covariance, stably
        tn = _t()
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / d_sqrt
        K = Dinvsqrt_W @ Dinvsqrt_W.transpose(-2, -1) + tn.eye(n, dtype=d_sqrt.dtype)
        return (d_sqrt * tn.linalg.cholesky(K)).expand(self._mat_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (W @ W.transpose(-2, -1) + self._unbroadcasted_cov_diag.diag_embed()).expand(self._mat_shape())

    @lazy_property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.transpose(-2, -1) / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = _solve_tril(self._capacitance_tril, Wt_Dinv)
        return (self._unbroadcasted_cov_diag.reciprocal().diag_embed() - A.transpose(-2, -1) @ A).expand(self._mat_shape())

    def rsample(self, sample_shape=()):
        tn = _t()
        shape = tuple(self._extended_shape(sample_shape))
        eps_W = tn.randn(shape[:-1] + tuple(self.cov_factor.shape[-1:]), dtype=self.loc.dtype)
        eps_D = tn.randn(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W) + self._unbroadcasted_cov_diag.sqrt() * eps_D

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _batch_lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _batch_lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
