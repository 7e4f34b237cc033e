"""torch.svd_lowrank and torch.pca_lowrank: randomized low-rank SVD (Halko, Martinsson and
Tropp 2009, algorithms 4.4 and 5.1) composed of the package's ops, as PyTorch composes them
in torch/_lowrank.py. The random test matrix comes from randn, whose stream is torch's for
the same seed, so with the same seed the results are PyTorch's.

This follows 2025 PyTorch, which differs from 1.13: 2025 transposes A only when it is wide
(m < n) and draws an n x q test matrix for a tall A, where 1.13 took the basis of A^T whenever
n > q (an m x q draw). The two agree for inputs of rank <= q (up to the signs of the singular
vectors), and are different random approximations otherwise. Dense inputs only."""
from ._core import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def get_approximate_basis(A, q, niter=2, M=None):
    """Q with q orthonormal columns such that Q Q^T (A - M) approximates A - M (algorithm 4.4)."""
    import tensor as tn
    niter = 2 if niter is None else niter
    R = tn.randn(A.shape[-1], q, dtype=A.dtype if A.dtype.is_floating_point else tn.float32)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = tn.linalg.qr(X).Q
    for _ in range(niter):
        X = A.mT @ Q
        if M is not None:
            X = X - M.mT @ Q
        Q = tn.linalg.qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = tn.linalg.qr(X).Q
    return Q


def _check(A, name):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{name}: A must have at least 2 dimensions (a matrix or a batch of matrices), "
                           f"but got shape {tuple(A.shape)}")


def _svd_lowrank(A, q=6, niter=2, M=None):
    import tensor as tn
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:   # the algorithm wants a tall A
        A = A.mT
        if M is not None:
            M = M.mT
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = Q.mT @ A
    if M is not None:
        B = B - Q.mT @ M
    U, S, Vh = tn.linalg.svd(B, full_matrices=False)
    V = Vh.mT
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^T (M None: A), of rank q; random: set the seed
    (manual_seed) for repeatable results."""
    _check(A, "svd_lowrank")
    if M is not None and not isinstance(M, Tensor):
        raise TypeError(f"svd_lowrank(): argument 'M' must be Tensor or None, not {type(M).__name__}")
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): svd_lowrank of A with its column means subtracted (center=True); q defaults
    to min(6, m, n)."""
    _check(A, "pca_lowrank")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
