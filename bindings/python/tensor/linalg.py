"""torch.linalg: the factorisations and solvers of src/ops/linalg_factor.c and the
decompositions of src/ops/linalg_decomp.c (float32/float64, CPU), cross and matmul. eig and
eigvals raise NotImplementedError until complex dtypes exist."""
from ._ops import (linalg_cross as cross, matmul, det, linalg_slogdet as slogdet, linalg_lu_factor as lu_factor, linalg_lu as lu,
                   linalg_lu_factor_ex as lu_factor_ex, linalg_inv_ex as inv_ex, linalg_solve as solve,
                   linalg_solve_ex as solve_ex, linalg_cholesky as cholesky, linalg_cholesky_ex as cholesky_ex)
from ._ops import _tp, _wrap, lib
# the decompositions (src/ops/linalg_decomp.c) and what is built on them
from ._ops import (linalg_qr as qr, linalg_eigh as eigh, linalg_eigvalsh as eigvalsh, linalg_svd as svd,
                   linalg_svdvals as svdvals, linalg_pinv as pinv, linalg_matrix_rank as matrix_rank,
                   linalg_lstsq as lstsq, linalg_cond as cond)


def inv(A):
    return _wrap(lib.tn_linalg_inv(_tp(A, "linalg.inv", "A")))


def eigvals(A):
    raise NotImplementedError("linalg.eigvals: the eigenvalues of a general matrix are complex, and complex dtypes "
                              "(complex64, complex128) are not supported yet")


def eig(A):
    raise NotImplementedError("linalg.eig: the eigenvectors of a general matrix are complex, and complex dtypes "
                              "(complex64, complex128) are not supported yet")


__all__ = ["cross", "matmul", "det", "slogdet", "lu", "lu_factor", "lu_factor_ex", "inv", "inv_ex", "solve", "solve_ex",
           "cholesky", "cholesky_ex", "eig", "eigvals",
           "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "matrix_rank", "lstsq", "cond"]
