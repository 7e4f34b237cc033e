"""Sparse tensors: COO (``torch.sparse_coo_tensor``, ``Tensor.to_sparse()``) and CSR
(``torch.sparse_csr_tensor``, ``Tensor.to_sparse_csr()``), with ``to_dense``, ``coalesce``,
``indices``/``values``, ``crow_indices``/``col_indices``, a sparse matrix times a dense one
(``@``, ``torch.sparse.mm``, ``torch.mm``, ``torch.spmm``, ``torch.matmul``) differentiable in
the dense operand and in the values, ``torch.sparse.sum``, ``torch.sparse.softmax``, a
dense tensor plus a sparse one, and ``torch.layout`` (``strided``, ``sparse_coo``,
``sparse_csr``).

A sparse tensor here is a ``SparseTensor`` (COO: int64 indices [sparse_dim, nnz] and values
[nnz, ...dense dims] held as ordinary tensors) or a ``SparseCsrTensor`` (crow_indices,
col_indices, values: a 2-D matrix), not a ``Tensor``: ``isinstance(s, torch.Tensor)`` is
False where PyTorch says True, and the dense ops other than those above do not take one
(convert with ``to_dense()``). The products, conversions and validation of 2-D matrices run
in C (tn_sparse_csr_mm, tn_sparse_coo_mm, tn_sparse_coo_to_csr, ...: src/ops/sparse.c).
Gradients reach the values tensor a sparse tensor was built from (``values.requires_grad``,
or ``requires_grad=True``, which makes the sparse tensor's values a leaf: its gradient is in
``s.values().grad``, and ``s.grad`` is that gradient as a sparse tensor of s's pattern); as
2025 PyTorch, ``sparse @ dense`` and ``torch.mm`` differentiate the values too (1.13 only
through torch.sparse.mm). CPU only."""
import re
from ctypes import byref, c_void_p

from . import _core
from ._C import lib
from ._core import Tensor, int64, _check_int, _wrap
from ._factories import as_tensor
from ._ops import cat, stack

__all__ = ["SparseTensor", "SparseCsrTensor", "sparse_coo_tensor", "sparse_csr_tensor", "mm", "sum", "softmax",
           "log_softmax", "layout", "strided", "sparse_coo", "sparse_csr"]


class layout:
    """torch.layout: how a tensor's elements are stored."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_layout_named, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")


def _layout_named(name):
    return {"strided": strided, "sparse_coo": sparse_coo, "sparse_csr": sparse_csr}[name]


class _Sparse:
    """What COO and CSR tensors share: their values tensor carries the dtype, device and
    autograd state; a new tensor with other values keeps the structure (``_with_values``)."""
    is_cuda = False
    is_cpu = True

    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    @property
    def ndim(self):
        return self.dim()

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return self._vals.device

    @property
    def requires_grad(self):
        return self._vals.requires_grad

    @property
    def grad(self):
        g = self._vals.grad
        return None if g is None else self._with_values(g)

    def detach(self):
        return self._with_values(self._vals.detach())

    def to(self, *args, **kwargs):
        """Dtype conversions of the values (CPU only)."""
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _core.dtype):
                dtype = a
        dev = kwargs.get("device", next((a for a in args if isinstance(a, (str, _core.device))), None))
        if dev is not None and _core.device(dev).type != "cpu":
            raise RuntimeError("sparse tensors: only the CPU is supported (not on CUDA yet)")
        return self if dtype is None or dtype == self.dtype else self._with_values(self._vals.to(dtype))

    def cpu(self):
        return self

    def float(self):
        return self.to(_core.float32)

    def double(self):
        return self.to(_core.float64)

    def __matmul__(self, other):
        return mm(self, other)


class SparseTensor(_Sparse):
    """A sparse COO tensor: ``_indices()`` int64 [sparse_dim, nnz], ``_values()``
    [nnz, *dense_shape], ``shape`` = sparse sizes + dense sizes."""
    is_sparse = True
    is_sparse_csr = False
    layout = sparse_coo

    def __init__(self, indices, values, size, coalesced=False):
        self._idx, self._vals, self._size, self._coalesced = indices, values, _core.Size(size), coalesced

    def _with_values(self, values):
        return SparseTensor(self._idx, values, self._size, self._coalesced)

    # -- what it is
    def dim(self):
        return len(self._size)

    def sparse_dim(self):
        return int(self._idx.shape[0])

    def dense_dim(self):
        return self.dim() - self.sparse_dim()

    def _nnz(self):
        return int(self._idx.shape[1])

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._idx

    def _values(self):
        return self._vals

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._idx

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._vals

    # -- conversions
    def coalesce(self):
        """Indices sorted (row-major), duplicates summed."""
        if self._coalesced:
            return self
        nnz, sd = self._nnz(), self.sparse_dim()
        if nnz == 0:
            return SparseTensor(self._idx, self._vals, self._size, True)
        if sd == 2:   # the C conversion: sorted by row then column, duplicates summed
            crow, col, vals = _coo_to_csr(self._idx, self._vals, self._size[0], self._size[1])
            idx = _wrap(lib.tn_sparse_csr_to_coo(crow._ptr, col._ptr, self._size[0], self._size[1]))
            return SparseTensor(idx, vals, self._size, True)
        lin = _core.zeros(nnz, dtype=int64)
        for d in range(sd):
            lin = lin * self._size[d] + self._idx[d]
        uniq, inverse = lin.unique(sorted=True, return_inverse=True)
        vals = _core.zeros((len(uniq),) + tuple(self._vals.shape[1:]), dtype=self.dtype)
        vals = vals.index_add(0, inverse, self._vals)
        idx, rest = [], uniq
        for d in reversed(range(sd)):
            idx.append(rest % self._size[d])
            rest = rest // self._size[d]
        return SparseTensor(stack(idx[::-1]) if sd else self._idx[:, :len(uniq)], vals, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = _core.zeros(tuple(self._size), dtype=dtype or self.dtype)
        if self._nnz():
            out.index_put_(tuple(self._idx), self._vals.to(out.dtype), accumulate=True)
        return out

    def to_sparse(self, sparse_dim=None):
        return self

    def to_sparse_csr(self, dense_dim=None):
        """A 2-D COO matrix as CSR (coalesced: duplicates summed)."""
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"to_sparse_csr: only 2-D sparse matrices without dense dimensions are supported here, got "
                               f"sparse_dim {self.sparse_dim()} and dense_dim {self.dense_dim()}")
        crow, col, vals = _coo_to_csr(self._idx, self._vals, self._size[0], self._size[1])
        return SparseCsrTensor(crow, col, vals, self._size)

    def long(self):
        return self.to(int64)

    # -- arithmetic
    def __add__(self, other):
        if isinstance(other, SparseTensor):
            if other.shape != self.shape:
                raise RuntimeError(f"add: expected sizes to match, got {list(self.shape)} and {list(other.shape)}")
            dt = _core.promote_types(self.dtype, other.dtype)
            return SparseTensor(cat([self._idx, other._idx], 1),
                                cat([self._vals.to(dt), other._vals.to(dt)]), self._size)
        if isinstance(other, Tensor):           # dense + sparse is dense, as PyTorch's
            return other + self.to_dense()
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, (int, float, bool)) or (isinstance(other, Tensor) and other.dim() == 0):
            return SparseTensor(self._idx, self._vals * other, self._size, self._coalesced)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return SparseTensor(self._idx, -self._vals, self._size, self._coalesced)

    def __repr__(self):
        pad = " " * 7
        idx = repr(self._idx).replace("\n", "\n" + pad)
        vals = repr(self._vals).replace("\n", "\n" + pad)
        extra = "" if self.dtype in (_core.float32,) else f", dtype={self.dtype}"
        return (f"tensor(indices={idx},\n{pad}values={vals},\n{pad}size={tuple(self._size)}, nnz={self._nnz()}"
                f"{extra}, layout=torch.sparse_coo)")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: indices [sparse_dim, nnz] (converted to int64), values
    [nnz, ...]; size inferred from the largest index when absent."""
    idx = as_tensor(indices)
    if idx.is_floating_point() or idx.dtype == _core.bool_:
        raise RuntimeError(f"indices must be an int64 tensor, got {idx.dtype}")
    idx = idx.to(int64)
    vals = as_tensor(values, dtype=dtype)
    if device is not None and _core.device(device).type != "cpu":
        raise RuntimeError("sparse_coo_tensor: only the CPU is supported")
    if idx.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.dim() < 1 or vals.shape[0] != idx.shape[1]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
                           f"nnz from values: {vals.shape[0] if vals.dim() else 'a 0-d tensor'}")
    sd = idx.shape[0]
    if size is None:
        if idx.shape[1] == 0:
            raise RuntimeError("sparse_coo_tensor: the size cannot be inferred from no indices; pass size")
        size = tuple(int(v) + 1 for v in idx.max(1).values) + tuple(vals.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sd + vals.dim() - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sd}) + dense_dim ({vals.dim() - 1}), but got "
                           f"{len(size)}")
    if tuple(vals.shape[1:]) != size[sd:]:
        raise RuntimeError(f"values has incorrect size, expected {[idx.shape[1]] + list(size[sd:])}, got "
                           f"{list(vals.shape)}")
    if idx.shape[1]:
        lo, hi = idx.min(1).values, idx.max(1).values
        for d in range(sd):
            if int(lo[d]) < 0:
                raise RuntimeError(f"found negative index {int(lo[d])} for dim {d}")
            if int(hi[d]) >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(hi[d])}")
    if requires_grad:
        vals = vals.detach().requires_grad_()
    return SparseTensor(idx, vals, size, bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1)


def mm(mat1, mat2):
    """sparse [n, m] @ dense [m, p] (or [m]) -> dense [n, p]: out[i] += v * mat2[j] for each
    stored (i, j, v). Float32/float64 matrices run the C kernels (CSR: tn_sparse_csr_mm; COO:
    tn_sparse_coo_mm), differentiable in mat2 and in the values; other dtypes (COO) a
    composite of index_select and index_add."""
    if not isinstance(mat1, (SparseTensor, SparseCsrTensor)):
        raise TypeError(f"sparse.mm: the first operand must be a sparse tensor, got {type(mat1).__name__}")
    if isinstance(mat2, (SparseTensor, SparseCsrTensor)):
        mat2 = mat2.to_dense()
    if not isinstance(mat2, Tensor):
        raise TypeError(f"sparse.mm: the second operand must be a tensor, got {type(mat2).__name__}")
    if mat1.dim() != 2 or mat1.sparse_dim() != 2 or mat2.dim() not in (1, 2):
        raise RuntimeError(f"sparse @ dense: expected a 2-D sparse matrix and a 1-D or 2-D dense one, got "
                           f"{list(mat1.shape)} and {list(mat2.shape)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{'x'.join(str(s) for s in mat2.shape)})")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    if mat2.device.type != "cpu":
        raise RuntimeError("sparse.mm: sparse tensors are CPU only (not on CUDA yet)")
    vec = mat2.dim() == 1
    d = mat2.unsqueeze(1) if vec else mat2
    n, m = mat1.shape
    if isinstance(mat1, SparseCsrTensor):
        if mat1.dtype not in (_core.float32, _core.float64):
            mat1 = mat1.to(_core.float64)
            out = mm(mat1, d.to(_core.float64)).to(mat2.dtype)
            return out.squeeze(1) if vec else out
        crow, col = mat1._crow64(), mat1._col64()   # locals: a temporary's handle would die before the call
        out = _wrap(lib.tn_sparse_csr_mm(crow._ptr, col._ptr, mat1._vals._ptr, n, m, d._ptr))
    elif mat1.dtype in (_core.float32, _core.float64) and mat1.dense_dim() == 0:
        out = _wrap(lib.tn_sparse_coo_mm(mat1._idx._ptr, mat1._vals._ptr, n, m, d._ptr))
    else:
        rows, cols = mat1._idx[0], mat1._idx[1]
        vals = mat1._vals if vec else mat1._vals.unsqueeze(1)
        out = _core.zeros((n,) + tuple(mat2.shape[1:]), dtype=mat2.dtype)
        return out.index_add(0, rows, vals * mat2.index_select(0, cols))
    return out.squeeze(1) if vec else out


def _coo_to_csr(idx, vals, n, m):
    crow, col = c_void_p(), c_void_p()
    v = _wrap(lib.tn_sparse_coo_to_csr(idx._ptr, vals._ptr, n, m, byref(crow), byref(col)))
    return _wrap(crow.value), _wrap(col.value), v


def _to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse(sparse_dim=None): a coalesced sparse COO tensor of the non-zero
    elements, or (sparse_dim=k) of the index tuples over the first k dimensions whose
    slice has a non-zero, each with its slice as a dense value. layout=torch.sparse_csr
    (2025 PyTorch's keyword): to_sparse_csr()."""
    if layout is not None and layout is not sparse_coo:
        if layout is sparse_csr and sparse_dim is None and blocksize is None:
            return _to_sparse_csr(self, dense_dim)
        raise RuntimeError(f"to_sparse: layout {layout} is not supported here (torch.sparse_coo and torch.sparse_csr are)")
    k = self.dim() if sparse_dim is None else int(sparse_dim)
    if not 0 <= k <= self.dim():
        raise RuntimeError(f"sparse_dim argument must be in [0, {self.dim()}] range, but {k} is given")
    if k == 0:
        return SparseTensor(_core.zeros((0, 1), dtype=int64), self.unsqueeze(0), self.shape, True)
    lead = self.reshape(tuple(self.shape[:k]) + (-1,)) if k < self.dim() else self
    mask = (lead != 0).any(-1) if k < self.dim() else lead != 0
    idx = mask.nonzero().t().contiguous()
    vals = self[tuple(idx)] if self.dim() else self.reshape(1)[:idx.shape[1]]
    return SparseTensor(idx, vals, self.shape, True)


Tensor.to_sparse = _to_sparse
Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype)
Tensor.is_sparse = False
Tensor.layout = strided


# --------------------------------------------------------------------------- CSR
class SparseCsrTensor(_Sparse):
    """A sparse CSR matrix [nrows, ncols]: ``crow_indices()`` [nrows + 1], ``col_indices()``
    [nnz] (int64 or int32, as given), ``values()`` [nnz]. Built by ``torch.sparse_csr_tensor``
    or ``Tensor.to_sparse_csr()``; the C kernels take the indices as int64."""
    is_sparse = False
    is_sparse_csr = True
    layout = sparse_csr

    def __init__(self, crow, col, values, size):
        self._crow, self._col, self._vals, self._size = crow, col, values, _core.Size(size)

    def _with_values(self, values):
        return SparseCsrTensor(self._crow, self._col, values, self._size)

    def _crow64(self):
        return self._crow if self._crow.dtype == int64 else self._crow.to(int64)

    def _col64(self):
        return self._col if self._col.dtype == int64 else self._col.to(int64)

    # -- what it is
    def dim(self):
        return 2

    def requires_grad_(self, requires_grad=True):
        self._vals.requires_grad_(requires_grad)
        return self

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def _nnz(self):
        return int(self._col.shape[0])

    def crow_indices(self):
        return self._crow

    def col_indices(self):
        return self._col

    def values(self):
        return self._vals

    def numel(self):
        return self._size[0] * self._size[1]

    # -- conversions
    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense matrix (differentiable in the values)."""
        crow, col = self._crow64(), self._col64()   # locals: a temporary's handle would die before the call
        out = _wrap(lib.tn_sparse_csr_to_dense(crow._ptr, col._ptr, self._vals._ptr, *self._size))
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None):
        """COO: the rows expanded (coalesced, as a CSR matrix's entries are sorted)."""
        if sparse_dim is not None and int(sparse_dim) != 2:
            raise RuntimeError(f"to_sparse: a sparse CSR matrix converts to sparse_dim 2, got {sparse_dim}")
        crow, col = self._crow64(), self._col64()
        idx = _wrap(lib.tn_sparse_csr_to_coo(crow._ptr, col._ptr, *self._size))
        return SparseTensor(idx.to(self._crow.dtype) if self._crow.dtype != int64 else idx, self._vals, self._size, True)

    def to_sparse_csr(self, dense_dim=None):
        return self

    # -- arithmetic
    def matmul(self, other):
        return mm(self, other)

    def mm(self, other):
        return mm(self, other)

    def __add__(self, other):
        if isinstance(other, Tensor):             # dense + sparse is dense, as PyTorch's
            return other + self.to_dense()
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, (int, float, bool)) or (isinstance(other, Tensor) and other.dim() == 0):
            return SparseCsrTensor(self._crow, self._col, self._vals * other, self._size)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return SparseCsrTensor(self._crow, self._col, -self._vals, self._size)

    def __repr__(self):
        """As torch's _tensor_str: the parts without their dtypes, then size, nnz, dtype
        (when not the default) and layout, each wrapped onto a new line past 80 columns."""
        pad = " " * 7
        body = (f"tensor(crow_indices={_body(self._crow)},\n{pad}col_indices={_body(self._col)},\n"
                f"{pad}values={_body(self._vals)}")
        suffixes = [f"size={tuple(self._size)}", f"nnz={self._nnz()}"]
        if self.dtype not in (_core.get_default_dtype(), int64, _core.bool_):   # torch's has_default_dtype
            suffixes.append(f"dtype={self.dtype}")
        suffixes.append("layout=torch.sparse_csr")
        out, last = [body], len(body) - body.rfind("\n") + 1
        for suf in suffixes:
            if last + len(suf) + 2 > 80:
                out.append(",\n" + pad + suf)
                last = len(pad) + len(suf)
            else:
                out.append(", " + suf)
                last += len(suf) + 2
        return "".join(out) + ")"


def _body(t):
    """repr(t) without its dtype suffix, as torch prints a sparse tensor's parts (an empty
    one with its size)."""
    r = re.sub(r",\s*dtype=torch\.\w+\)$", ")", repr(t.detach()))
    if t.numel() == 0 and ", size=" not in r:
        r = r[:-1] + f", size={tuple(t.shape)})"
    return r.replace("\n", "\n" + " " * 7)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_csr_tensor: a 2-D CSR matrix; size (nrows, ncols) inferred as
    (len(crow_indices) - 1, max(col_indices) + 1) when absent. The invariants are checked
    (torch's messages): crow from 0 to nnz, never decreasing, columns in range."""
    crow, col = as_tensor(crow_indices), as_tensor(col_indices)
    if crow.dtype != col.dtype:
        raise RuntimeError(f"crow_indices and col_indices must have the same dtype, bot got {crow.dtype._legacy} and "
                           f"{col.dtype._legacy}, respectively")
    if crow.dtype not in (_core.int32, int64):
        raise RuntimeError(f"crow_indices and col_indices must be an int32 or int64 type, but got: {crow.dtype._legacy}")
    vals = as_tensor(values, dtype=dtype)
    if device is not None and _core.device(device).type != "cpu":
        raise RuntimeError("sparse_csr_tensor: sparse tensors are CPU only (not on CUDA yet)")
    if crow.dim() != 1 or col.dim() != 1 or vals.dim() != 1:
        raise RuntimeError(f"sparse_csr_tensor: only 2-D matrices (1-D crow_indices, col_indices and values) are supported "
                           f"here, got {list(crow.shape)}, {list(col.shape)} and {list(vals.shape)} (batched CSR is not)")
    if size is None:
        size = (crow.shape[0] - 1, int(col.max()) + 1 if col.numel() else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise RuntimeError(f"sparse_csr_tensor: only 2-D matrices are supported here, got size {size}")
    if vals.shape[0] != col.shape[0]:
        raise RuntimeError(f"col_indices.shape[-1] must be equal to nnz (={vals.shape[0]}) as defined by values.shape[0], "
                           f"but got {col.shape[0]}")
    c64, k64 = crow.to(int64), col.to(int64)
    _check_int(lib.tn_sparse_csr_check(c64._ptr, k64._ptr, vals._ptr, size[0], size[1]))
    if requires_grad:
        vals = vals.detach().requires_grad_()
    return SparseCsrTensor(crow, col, vals, size)


def _to_sparse_csr(self, dense_dim=None):
    """Tensor.to_sparse_csr(): the nonzeros of a 2-D tensor, row by row (the values keep
    their gradient)."""
    if dense_dim is not None:
        raise RuntimeError("to_sparse_csr: dense_dim is not supported here (hybrid CSR)")
    if self.dim() != 2:
        raise RuntimeError(f"to_sparse_csr: only 2-D tensors are supported here, got {self.dim()}-D (batched CSR is not)")
    crow, col = c_void_p(), c_void_p()
    vals = _wrap(lib.tn_sparse_dense_to_csr(self._ptr, byref(crow), byref(col)))
    return SparseCsrTensor(_wrap(crow.value), _wrap(col.value), vals, self.shape)


# --------------------------------------------------------------------------- reductions, softmax
_sum = sum


def _as_coo(input, fn):
    if isinstance(input, SparseCsrTensor):
        return input.to_sparse()
    if not isinstance(input, SparseTensor):
        raise TypeError(f"torch.sparse.{fn}: expected a sparse tensor, got {type(input).__name__}")
    return input


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: every element (a 0-d tensor), or over dims: a dense tensor when every
    sparse dim is summed, else a coalesced sparse tensor over the sparse dims left.
    Differentiable in the values. CSR (summed whole or by dims) as its COO form."""
    s = _as_coo(input, "sum")
    vals = s._vals if dtype is None else s._vals.to(dtype)
    if dim is None:
        return vals.sum()
    dims = [dim] if isinstance(dim, int) else list(dim)
    nd, sd = s.dim(), s.sparse_dim()
    dims = [_core._wrap_dim(d, nd, "sparse.sum") for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"torch.sparse.sum: dim {dims} has a repeated dim")
    sparse_red = sorted(d for d in dims if d < sd)
    dense_red = sorted(d - sd + 1 for d in dims if d >= sd)
    if dense_red:
        vals = vals.sum(dense_red)
    keep = [d for d in range(sd) if d not in sparse_red]
    dense_shape = tuple(vals.shape[1:])
    if not keep:
        return vals.sum(0) if s._nnz() else _core.zeros(dense_shape, dtype=vals.dtype)
    idx = s._idx[keep] if s._nnz() else _core.zeros((len(keep), 0), dtype=int64)
    return SparseTensor(idx, vals, tuple(s._size[d] for d in keep) + dense_shape).coalesce()


def _softmax(input, dim, dtype, log, fn):
    s = _as_coo(input, fn)
    if not isinstance(s, SparseTensor):
        raise TypeError(f"torch.sparse.{fn}: expected a sparse tensor")
    s = s.coalesce()
    vals = s._vals if dtype is None else s._vals.to(dtype)
    if not vals.is_floating_point():
        raise RuntimeError(f"torch.sparse.{fn}: expected a floating point tensor, got {vals.dtype}")
    nd, sd = s.dim(), s.sparse_dim()
    d = _core._wrap_dim(dim, nd, "sparse." + fn)
    if d >= sd:                     # a dense dim: the values' own softmax
        out = vals.log_softmax(d - sd + 1) if log else vals.softmax(d - sd + 1)
        return SparseTensor(s._idx, out, s._size, True)
    if s._nnz() == 0:
        return SparseTensor(s._idx, vals, s._size, True)
    # the entries of one line share every sparse index but dim's: softmax among them only
    # (the unstored entries count as -inf)
    others = [k for k in range(sd) if k != d]
    key = _core.zeros(s._nnz(), dtype=int64)
    for k in others:
        key = key * s._size[k] + s._idx[k]
    _, group = key.unique(return_inverse=True)
    ng = int(group.max()) + 1
    gshape = (ng,) + tuple(vals.shape[1:])
    gidx = group.reshape((-1,) + (1,) * (vals.dim() - 1)).expand(vals.shape)
    m = _core.full(gshape, float("-inf"), dtype=vals.dtype).scatter_reduce(0, gidx, vals.detach(), "amax")
    shifted = vals - m.index_select(0, group)       # the max is a constant of the softmax: no gradient through it
    e = shifted.exp()
    tot = _core.zeros(gshape, dtype=vals.dtype).index_add(0, group, e).index_select(0, group)
    out = shifted - tot.log() if log else e / tot
    return SparseTensor(s._idx, out, s._size, True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: softmax along dim among the stored entries of each line (the
    unstored ones count as -inf, so they stay unstored); a coalesced COO result of the
    input's pattern. Differentiable in the values."""
    return _softmax(input, dim, dtype, False, "softmax")


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax: as softmax, the logarithm."""
    return _softmax(input, dim, dtype, True, "log_softmax")


def _install(ns):
    """torch.mm / torch.matmul / torch.spmm (and Tensor.mm) with a sparse first operand."""
    for name in ("mm", "matmul"):
        dense = ns[name]

        def f(input, other, *args, _dense=dense, **kwargs):
            if isinstance(input, (SparseTensor, SparseCsrTensor)):
                return mm(input, other)
            return _dense(input, other, *args, **kwargs)
        f.__name__ = f.__qualname__ = name
        f.__doc__ = dense.__doc__
        ns[name] = f

    def spmm(input, mat2):
        """torch.spmm: sparse @ dense (torch.mm with a sparse first operand)."""
        return ns["mm"](input, mat2)
    ns["spmm"] = spmm


Tensor.to_sparse_csr = _to_sparse_csr
Tensor.is_sparse_csr = False
