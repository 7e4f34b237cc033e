"""Sparse COO tensors, the part that ordinary programs use: ``torch.sparse_coo_tensor``,
``Tensor.to_sparse()``, ``to_dense``, ``coalesce``, ``indices``/``values``, a sparse
matrix times a dense one (``@``, ``torch.sparse.mm``), a dense tensor plus a sparse one,
and ``torch.layout`` (``strided``, ``sparse_coo``).

A sparse tensor here is a ``SparseTensor`` (int64 indices [sparse_dim, nnz] and values
[nnz, ...dense dims] held as ordinary tensors), not a ``Tensor``: ``isinstance(s,
torch.Tensor)`` is False where PyTorch says True, and the dense ops other than those above
do not take one (convert with ``to_dense()``). CPU only; no autograd through the sparse
operand (the dense operand of ``@`` and ``+`` is differentiable)."""
from . import _core
from ._core import Tensor, int64
from ._factories import as_tensor
from ._ops import cat, stack

__all__ = ["SparseTensor", "sparse_coo_tensor", "mm", "layout", "strided", "sparse_coo"]


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


def _layout_named(name):
    return {"strided": strided, "sparse_coo": sparse_coo}[name]


class SparseTensor:
    """A sparse COO tensor: ``_indices()`` int64 [sparse_dim, nnz], ``_values()``
    [nnz, *dense_shape], ``shape`` = sparse sizes + dense sizes."""
    is_sparse = True
    layout = sparse_coo
    is_cuda = False
    is_cpu = True
    requires_grad = False

    def __init__(self, indices, values, size, coalesced=False):
        self._idx, self._vals, self._size, self._coalesced = indices, values, _core.Size(size), coalesced

    # -- what it is
    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return self._vals.device

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

    def to(self, *args, **kwargs):
        """Device moves (CPU only) and dtype conversions of the values."""
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _core.dtype):
                dtype = a
        dev = kwargs.get("device", next((a for a in args if isinstance(a, (str, _core.device))), None))
        if dev is not None and _core.device(dev).type != "cpu":
            raise RuntimeError("sparse tensors: only the CPU is supported")
        return self if dtype is None or dtype == self.dtype else \
            SparseTensor(self._idx, self._vals.to(dtype), self._size, self._coalesced)

    def cpu(self):
        return self

    def float(self):
        return self.to(_core.float32)

    def double(self):
        return self.to(_core.float64)

    def long(self):
        return self.to(int64)

    # -- arithmetic
    def __matmul__(self, other):
        return mm(self, other)

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
    if requires_grad:
        raise RuntimeError("sparse_coo_tensor: requires_grad=True is not supported (no autograd through sparse "
                           "tensors here)")
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
    return SparseTensor(idx, vals, size, bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1)


def mm(mat1, mat2):
    """sparse [n, m] @ dense [m, p] (or [m]) -> dense [n, p]: out[i] += v * mat2[j] for each
    stored (i, j, v), values promoted with mat2 as PyTorch's."""
    if not isinstance(mat1, SparseTensor):
        raise TypeError(f"sparse.mm: the first operand must be a sparse tensor, got {type(mat1).__name__}")
    if isinstance(mat2, SparseTensor):
        mat2 = mat2.to_dense()
    if mat1.dim() != 2 or mat1.sparse_dim() != 2 or mat2.dim() not in (1, 2):
        raise RuntimeError(f"sparse @ dense: expected a 2-D sparse matrix and a 1-D or 2-D dense one, got "
                           f"{list(mat1.shape)} and {list(mat2.shape)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{'x'.join(str(s) for s in mat2.shape)})")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {mat1.dtype} != {mat2.dtype}")
    rows, cols = mat1._idx[0], mat1._idx[1]
    vals = mat1._vals if mat2.dim() == 1 else mat1._vals.unsqueeze(1)
    out = _core.zeros((mat1.shape[0],) + tuple(mat2.shape[1:]), dtype=mat2.dtype)
    return out.index_add(0, rows, vals * mat2.index_select(0, cols))


def _to_sparse(self, sparse_dim=None):
    """Tensor.to_sparse(sparse_dim=None): a coalesced sparse COO tensor of the non-zero
    elements, or (sparse_dim=k) of the index tuples over the first k dimensions whose
    slice has a non-zero, each with its slice as a dense value."""
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
