"""torch.linalg: the factorisations and solvers of src/ops/linalg_factor.c, the triangular
and LU solves, matrix functions, norms and products of src/ops/linalg_more.c and the
decompositions of src/ops/linalg_decomp.c (float32/float64, CPU), eig and eigvals
(src/ops/linalg_eig.c), cross and matmul."""
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


from ._core import _return_type as _rt0  # noqa: E402
_eig_rt = _rt0("linalg_eig", ("eigenvalues", "eigenvectors"))


def eigvals(A):
    return _wrap(lib.tn_linalg_eigvals(_tp(A, "linalg.eigvals", "A")))


def eig(A):
    from ctypes import byref, c_void_p
    V = c_void_p()
    L = _wrap(lib.tn_linalg_eig(_tp(A, "linalg.eig", "A"), byref(V)))
    return _eig_rt(L, _wrap(V.value))


__all__ = ["cross", "matmul", "det", "slogdet", "lu", "lu_factor", "lu_factor_ex", "inv", "inv_ex", "solve", "solve_ex",
           "cholesky", "cholesky_ex", "eig", "eigvals",
           "solve_triangular", "lu_solve", "matrix_power", "matrix_exp", "vector_norm", "matrix_norm", "norm",
           "multi_dot", "vecdot", "vander", "householder_product", "tensorinv", "tensorsolve", "diagonal",
           "ldl_factor", "ldl_factor_ex", "ldl_solve",
           "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "matrix_rank", "lstsq", "cond"]


# ---- src/ops/linalg_more.c: triangular and LU solves, matrix functions, norms, products; and
# the old torch.* names built on them (triangular_solve, cholesky_solve, cholesky_inverse,
# lu_solve, lu, matrix_power, matrix_exp, orgqr), registered as functions and Tensor methods ----
import math as _math  # noqa: E402
import numbers as _numbers  # noqa: E402

from ._core import Tensor as _Tensor, _i64, _int, _ptrs, _return_type, _to_dtype  # noqa: E402
from ._ops import FUNCTIONS as _FUNCTIONS, _kw_text, _method, _tensor_list, diagonal as _diagonal  # noqa: E402

_triangular_solve_rt = _return_type("triangular_solve", ("solution", "cloned_coefficient"))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    return _wrap(lib.tn_linalg_solve_triangular_str(_tp(A, "linalg.solve_triangular", "A"), _tp(B, "linalg.solve_triangular", "B"),
                                                    bool(upper), _kw_text(left=bool(left), unitriangular=bool(unitriangular))))


@_method("triangular_solve")
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    from ctypes import byref, c_void_p
    c = c_void_p()
    x = _wrap(lib.tn_triangular_solve_str(_tp(input, "triangular_solve"), _tp(A, "triangular_solve", "A"), byref(c),
                                          _kw_text(upper=bool(upper), transpose=bool(transpose), unitriangular=bool(unitriangular))))
    return _triangular_solve_rt(x, _wrap(c.value))


@_method("cholesky_solve")
def cholesky_solve(input, input2, upper=False):
    return _wrap(lib.tn_cholesky_solve_str(_tp(input, "cholesky_solve"), _tp(input2, "cholesky_solve", "input2"), _kw_text(upper=bool(upper))))


@_method("cholesky_inverse")
def cholesky_inverse(input, upper=False):
    return _wrap(lib.tn_cholesky_inverse_str(_tp(input, "cholesky_inverse"), _kw_text(upper=bool(upper))))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    return _wrap(lib.tn_linalg_lu_solve_str(_tp(LU, "linalg.lu_solve", "LU"), _tp(pivots, "linalg.lu_solve", "pivots"),
                                            _tp(B, "linalg.lu_solve", "B"), _kw_text(left=bool(left), adjoint=bool(adjoint))))


def _torch_lu_solve(b, LU_data, LU_pivots):
    """torch.lu_solve(b, LU_data, LU_pivots) (deprecated in PyTorch for linalg.lu_solve)."""
    return lu_solve(LU_data, LU_pivots, b)


def _torch_lu(A, pivot=True, get_infos=False):
    """torch.lu (deprecated in PyTorch for linalg.lu_factor): (LU, pivots[, infos])."""
    r = lu_factor_ex(A, pivot=pivot)
    return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)


def matrix_power(A, n):
    return _wrap(lib.tn_linalg_matrix_power(_tp(A, "linalg.matrix_power", "A"), _int(n, "linalg.matrix_power", "n")))


def matrix_exp(A):
    return _wrap(lib.tn_linalg_matrix_exp(_tp(A, "linalg.matrix_exp", "A")))


def _dtype_kw(dtype):
    return {} if dtype is None else {"dtype": _to_dtype(dtype).name if hasattr(_to_dtype(dtype), "name") else str(dtype)}


def _dim_kw(dim, fn):
    if dim is None:
        return {}
    dims = [_int(d, fn, "dim") for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
    return {"dim": "(" + ", ".join(str(d) for d in dims) + ")"} if dims else {}


def _ord_text(ord, fn):
    if isinstance(ord, str):
        return ord
    if isinstance(ord, bool) or not isinstance(ord, _numbers.Real):
        raise TypeError(f"{fn}(): argument 'ord' must be a number or a string, not {type(ord).__name__}")
    return "inf" if ord == _math.inf else "-inf" if ord == -_math.inf else repr(float(ord))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    fn = "linalg.vector_norm"
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, _numbers.Real):
        raise TypeError(f"{fn}(): argument 'ord' must be Number, not {type(ord).__name__}")
    kw = dict(ord=_ord_text(ord, fn), **_dim_kw(dim, fn), keepdim=bool(keepdim), **_dtype_kw(dtype))
    return _wrap(lib.tn_linalg_vector_norm_str(_tp(x, fn, "x"), ", ".join(f"{k}={v}" for k, v in kw.items()).encode()))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    fn = "linalg.matrix_norm"
    kw = dict(ord=repr(_ord_text(ord, fn)), **_dim_kw(dim, fn), keepdim=bool(keepdim), **_dtype_kw(dtype))
    return _wrap(lib.tn_linalg_matrix_norm_str(_tp(A, fn, "A"), ", ".join(f"{k}={v}" for k, v in kw.items()).encode()))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    fn = "linalg.norm"
    kw = _dim_kw(dim, fn)
    if ord is not None:
        kw["ord"] = repr(_ord_text(ord, fn))
    kw.update(keepdim=bool(keepdim), **_dtype_kw(dtype))
    return _wrap(lib.tn_linalg_norm_str(_tp(A, fn, "A"), ", ".join(f"{k}={v}" for k, v in kw.items()).encode()))


def multi_dot(tensors):
    ts = _tensor_list(tensors, "linalg.multi_dot")
    return _wrap(lib.tn_linalg_multi_dot(_ptrs(ts, "linalg.multi_dot"), len(ts)))


def vecdot(x, y, *, dim=-1):
    return _wrap(lib.tn_linalg_vecdot_str(_tp(x, "linalg.vecdot", "x"), _tp(y, "linalg.vecdot", "y"), _kw_text(dim=_int(dim, "linalg.vecdot"))))


def vander(x, *, N=None):
    return _wrap(lib.tn_linalg_vander_str(_tp(x, "linalg.vander", "x"), _kw_text(N=None if N is None else _int(N, "linalg.vander", "N"))))


@_method("orgqr")
def _orgqr(input, tau):
    return householder_product(input, tau)


def householder_product(A, tau):
    return _wrap(lib.tn_linalg_householder_product(_tp(A, "linalg.householder_product", "A"), _tp(tau, "linalg.householder_product", "tau")))


def tensorinv(A, ind=2):
    return _wrap(lib.tn_linalg_tensorinv_str(_tp(A, "linalg.tensorinv", "A"), _kw_text(ind=_int(ind, "linalg.tensorinv", "ind"))))


def tensorsolve(A, B, dims=None):
    arr, n = _i64([] if dims is None else [_int(d, "linalg.tensorsolve", "dims") for d in (dims if isinstance(dims, (list, tuple)) else [dims])])
    return _wrap(lib.tn_linalg_tensorsolve(_tp(A, "linalg.tensorsolve", "A"), _tp(B, "linalg.tensorsolve", "B"), arr, n))


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return _diagonal(A, offset, dim1, dim2)


_ldl_factor_rt = _return_type("linalg_ldl_factor", ("LD", "pivots"))
_ldl_factor_ex_rt = _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """hermitian: complex A is Hermitian, A = P L D L^H P^T (LAPACK's hetrf); the same factorisation for real dtypes."""
    from ctypes import byref, c_void_p
    piv, info = c_void_p(), c_void_p()
    LD = _wrap(lib.tn_linalg_ldl_factor_ex_str(_tp(A, "linalg.ldl_factor_ex", "A"), byref(piv), byref(info),
                                               _kw_text(hermitian=bool(hermitian), check_errors=bool(check_errors))))
    return _ldl_factor_ex_rt(LD, _wrap(piv.value), _wrap(info.value))


def ldl_factor(A, *, hermitian=False):
    from ctypes import byref, c_void_p
    piv = c_void_p()
    LD = _wrap(lib.tn_linalg_ldl_factor_str(_tp(A, "linalg.ldl_factor", "A"), byref(piv), _kw_text(hermitian=bool(hermitian))))
    return _ldl_factor_rt(LD, _wrap(piv.value))


def ldl_solve(LD, pivots, B, *, hermitian=False):
    return _wrap(lib.tn_linalg_ldl_solve_str(_tp(LD, "linalg.ldl_solve", "LD"), _tp(pivots, "linalg.ldl_solve", "pivots"),
                                             _tp(B, "linalg.ldl_solve", "B"), _kw_text(hermitian=bool(hermitian))))


_Tensor.lu_solve = lambda self, LU_data, LU_pivots: _torch_lu_solve(self, LU_data, LU_pivots)
_Tensor.lu = lambda self, pivot=True, get_infos=False: _torch_lu(self, pivot, get_infos)
_Tensor.matrix_power = lambda self, n: matrix_power(self, n)
_Tensor.matrix_exp = lambda self: matrix_exp(self)
_FUNCTIONS.update(triangular_solve=triangular_solve, cholesky_solve=cholesky_solve, cholesky_inverse=cholesky_inverse,
                  lu_solve=_torch_lu_solve, lu=_torch_lu, matrix_power=matrix_power, matrix_exp=matrix_exp, orgqr=householder_product)
