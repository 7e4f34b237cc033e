"""Sparse CSR and the C kernels under torch.sparse (issue 26, item 6) against PyTorch 1.13:
sparse_csr_tensor / to_sparse_csr / crow_indices / col_indices / values / to_dense, CSR and COO
@ dense through torch.sparse.mm, torch.mm, torch.spmm, torch.matmul and @, gradients for the
dense operand and the values (torch.sparse.mm's, which 1.13 gives for COO; for CSR values we
compare with the dense product's gradient at the nonzeros, 1.13 giving none), torch.sparse.sum,
torch.sparse.softmax / log_softmax, safetensors round trips, errors (torch's messages): bad
crow_indices, columns out of range, mismatched lengths and dtypes. 0 nnz, empty rows,
duplicate COO entries, non-contiguous dense operands.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_sparse_csr.py
"""
import warnings

import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*Sparse CSR tensor support is in beta.*")


def both(a):
    """The same array as a tensor.h tensor and a torch tensor."""
    a = np.ascontiguousarray(a)
    return tn.from_numpy(a.copy()), torch.from_numpy(a.copy())


def close(a, b, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def rand_sparse(rng, n, m, density, dtype=np.float64, empty_rows=()):
    x = rng.standard_normal((n, m)).astype(dtype)
    x[rng.random((n, m)) >= density] = 0
    for r in empty_rows:
        x[r] = 0
    return x


# --------------------------------------------------------------------------- construction
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_to_sparse_csr_matches_torch(dtype):
    rng = np.random.default_rng(0)
    x = rand_sparse(rng, 7, 5, 0.4, dtype, empty_rows=(0, 3))
    a, b = both(x)
    sa, sb = a.to_sparse_csr(), b.to_sparse_csr()
    assert sa.layout is tn.sparse_csr and str(sa.layout) == str(sb.layout) == "torch.sparse_csr"
    assert sa.is_sparse_csr and not sa.is_sparse and not a.is_sparse_csr
    assert tuple(sa.shape) == tuple(sb.shape) and sa._nnz() == sb._nnz() and str(sa.dtype) == str(sb.dtype)
    assert (sa.sparse_dim(), sa.dense_dim()) == (sb.sparse_dim(), sb.dense_dim())
    np.testing.assert_array_equal(sa.crow_indices().numpy(), sb.crow_indices().numpy())
    np.testing.assert_array_equal(sa.col_indices().numpy(), sb.col_indices().numpy())
    np.testing.assert_array_equal(sa.values().numpy(), sb.values().numpy())
    np.testing.assert_array_equal(sa.to_dense().numpy(), sb.to_dense().numpy())
    # 2025's to_sparse(layout=torch.sparse_csr) is to_sparse_csr()
    np.testing.assert_array_equal(a.to_sparse(layout=tn.sparse_csr).col_indices().numpy(), sb.col_indices().numpy())
    # CSR -> COO
    ca, cb = sa.to_sparse(), sb.to_sparse()
    np.testing.assert_array_equal(ca.indices().numpy(), cb.indices().numpy())
    np.testing.assert_array_equal(ca.values().numpy(), cb.values().numpy())
    # repr as torch's (for values that fit on one line: long ones wrap at a different column)
    small = tn.tensor([[0, 1.5], [2, 0]]).to(a.dtype).to_sparse_csr()
    assert repr(small) == repr(torch.tensor([[0, 1.5], [2, 0]]).to(b.dtype).to_sparse_csr())


def test_sparse_csr_tensor_matches_torch():
    crow, col, val = [0, 2, 2, 3], [0, 2, 1], [1., 2., 3.]
    a = tn.sparse_csr_tensor(tn.tensor(crow), tn.tensor(col), tn.tensor(val), (3, 3))
    b = torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(val), (3, 3))
    np.testing.assert_array_equal(a.to_dense().numpy(), b.to_dense().numpy())
    assert repr(a) == repr(b)
    # size inferred; int32 indices kept as int32; dtype=
    a = tn.sparse_csr_tensor(tn.tensor(crow, dtype=tn.int32), tn.tensor(col, dtype=tn.int32), tn.tensor(val), dtype=tn.float64)
    b = torch.sparse_csr_tensor(torch.tensor(crow, dtype=torch.int32), torch.tensor(col, dtype=torch.int32), torch.tensor(val),
                                dtype=torch.float64)
    assert tuple(a.shape) == tuple(b.shape) == (3, 3)
    assert str(a.crow_indices().dtype) == str(b.crow_indices().dtype) == "torch.int32" and a.dtype == tn.float64
    np.testing.assert_array_equal(a.to_dense().numpy(), b.to_dense().numpy())
    # 0 nnz
    a = tn.sparse_csr_tensor(tn.tensor([0, 0, 0]), tn.tensor([], dtype=tn.int64), tn.tensor([]), (2, 4))
    b = torch.sparse_csr_tensor(torch.tensor([0, 0, 0]), torch.tensor([], dtype=torch.int64), torch.tensor([]), (2, 4))
    np.testing.assert_array_equal(a.to_dense().numpy(), b.to_dense().numpy())
    # (1.13 closes an empty matrix's repr with one parenthesis too many)
    assert a._nnz() == 0 and repr(a) == (repr(b)[:-1] if repr(b).endswith(")))") or repr(b).endswith("csr))") else repr(b))
    # an empty matrix
    ea, eb = tn.zeros(0, 3).to_sparse_csr(), torch.zeros(0, 3).to_sparse_csr()
    assert repr(ea) == repr(eb)


BAD = [  # crow, col, values, size: torch's message
    ([0, 2, 1], [0, 1], [1., 2.], (2, 2), "`crow_indices[..., -1] == nnz` is not satisfied."),
    ([0, 1, 2], [0, 5], [1., 2.], (2, 2), "`0 <= col_indices < ncols` is not satisfied."),
    ([0, 1, 2], [0, -1], [1., 2.], (2, 2), "`0 <= col_indices < ncols` is not satisfied."),
    ([0, 1, 2], [0, 1], [1., 2.], (3, 2), "crow_indices.shape[-1] must be equal to the number of rows + 1 (=4), but got 3"),
    ([1, 1, 2], [0, 1], [1., 2.], (2, 2), "`crow_indices[..., 0] == 0` is not satisfied."),
    ([0, 1, 3], [0, 1], [1., 2.], (2, 2), "`crow_indices[..., -1] == nnz` is not satisfied."),
    ([0, 1, 2], [0, 1], [1., 2., 3.], (2, 2), "col_indices.shape[-1] must be equal to nnz (=3) as defined by values.shape[0], but got 2"),
    ([0, 2, 1, 2], [0, 1], [1., 2.], (3, 2), "`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied."),
]


@pytest.mark.parametrize("crow,col,val,size,msg", BAD)
def test_sparse_csr_tensor_errors_as_torch(crow, col, val, size, msg):
    with pytest.raises(RuntimeError) as eb:
        torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(val), size)
    with pytest.raises(RuntimeError, match=msg.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.").replace("*", r"\*").replace("+", r"\+")):
        tn.sparse_csr_tensor(tn.tensor(crow), tn.tensor(col), tn.tensor(val), size)
    assert msg in str(eb.value) or "crow_indices[..., 1:]" in msg   # torch 1.13 reports the last one as nnz's


def test_sparse_csr_tensor_dtype_errors():
    with pytest.raises(RuntimeError, match="must have the same dtype, bot got Float and Long"):
        tn.sparse_csr_tensor(tn.tensor([0., 1, 2]), tn.tensor([0, 1]), tn.tensor([1., 2]), (2, 2))
    with pytest.raises(RuntimeError, match="must have the same dtype, bot got Int and Long"):
        tn.sparse_csr_tensor(tn.tensor([0, 1, 2], dtype=tn.int32), tn.tensor([0, 1]), tn.tensor([1., 2]), (2, 2))
    with pytest.raises(RuntimeError, match="batched CSR"):
        tn.randn(2, 3, 4).to_sparse_csr()


# --------------------------------------------------------------------------- products
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-12)])
@pytest.mark.parametrize("layout", ["csr", "coo"])
def test_mm_matches_torch(dtype, tol, layout):
    rng = np.random.default_rng(1)
    x = rand_sparse(rng, 60, 45, 0.2, dtype, empty_rows=(0, 7, 59))
    a, b = both(x)
    sa, sb = (a.to_sparse_csr(), b.to_sparse_csr()) if layout == "csr" else (a.to_sparse(), b.to_sparse())
    # a non-contiguous dense operand (transposed), every entry point
    d = rng.standard_normal((9, 45)).astype(dtype)
    da, db = both(d)
    da, db = da.t(), db.t()
    ref = torch.sparse.mm(sb, db)
    for f in (tn.sparse.mm, tn.mm, tn.spmm, tn.matmul, lambda s, m: s @ m):
        close(f(sa, da), ref, tol)
    # a vector: torch.mv's result
    v = rng.standard_normal(45).astype(dtype)
    close(sa @ tn.from_numpy(v), x @ v, tol)
    # dense + sparse
    close(tn.zeros(60, 45, dtype=a.dtype) + sa, x, 0)


def test_mm_threads_large():
    """A size that runs on the thread pool: 1 and 2 threads give torch's result."""
    rng = np.random.default_rng(2)
    n, m, nnz = 3000, 2500, 40000
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, m, nnz)
    vals = rng.standard_normal(nnz).astype(np.float32)
    ib, vb = torch.from_numpy(np.stack([rows, cols])), torch.from_numpy(vals)
    sb = torch.sparse_coo_tensor(ib, vb, (n, m)).coalesce()
    sa = tn.sparse_coo_tensor(tn.from_numpy(np.stack([rows, cols])), tn.from_numpy(vals), (n, m)).coalesce()
    np.testing.assert_array_equal(sa.indices().numpy(), sb.indices().numpy())
    np.testing.assert_allclose(sa.values().numpy(), sb.values().numpy(), rtol=1e-6, atol=1e-6)
    d = rng.standard_normal((m, 64)).astype(np.float32)
    ref = torch.sparse.mm(sb.to_sparse_csr(), torch.from_numpy(d))
    csr = sa.to_sparse_csr()
    old = tn.get_num_threads()
    try:
        for th in (1, 2):
            tn.set_num_threads(th)
            close(tn.sparse.mm(csr, tn.from_numpy(d)), ref, 1e-4)
            close(tn.sparse.mm(sa, tn.from_numpy(d)), ref, 1e-4)
    finally:
        tn.set_num_threads(old)


def test_mm_zero_nnz_and_empty_sides():
    for n, m, p in [(3, 4, 2), (0, 4, 2), (3, 0, 2), (3, 4, 0)]:
        za, zb = tn.zeros(n, m).to_sparse_csr(), torch.zeros(n, m).to_sparse_csr()
        close(tn.sparse.mm(za, tn.ones(m, p)), torch.sparse.mm(zb, torch.ones(m, p)), 0)
        ca = tn.sparse_coo_tensor(tn.zeros(2, 0, dtype=tn.int64), tn.zeros(0), (n, m))
        close(tn.sparse.mm(ca, tn.ones(m, p)), np.zeros((n, p), np.float32), 0)


def test_mm_errors():
    sa = tn.eye(3).to_sparse_csr()
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x3 and 4x2\)"):
        tn.sparse.mm(sa, tn.ones(4, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        tn.sparse.mm(sa, tn.ones(3, 2, dtype=tn.float64))
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        tn.sparse.mm(tn.eye(3).to_sparse(), tn.ones(4, 2))
    with pytest.raises(TypeError):
        tn.sparse.mm(tn.eye(3), tn.ones(3, 2))


# --------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_coo_gradients_match_torch(dtype):
    """torch.sparse.mm's gradients for the dense operand and for the values (duplicates
    included: each entry gets its own)."""
    idx = np.array([[0, 1, 1, 0, 2], [2, 0, 2, 2, 3]])
    rng = np.random.default_rng(3)
    v, d, g = (rng.standard_normal(s).astype(dtype) for s in (5, (4, 6), (3, 6)))
    va, vb = both(v)
    da, db = both(d)
    for t in (va, vb, da, db):
        t.requires_grad_()
    sa = tn.sparse_coo_tensor(tn.from_numpy(idx), va, (3, 4))
    sb = torch.sparse_coo_tensor(torch.from_numpy(idx), vb, (3, 4))
    oa, ob = tn.sparse.mm(sa, da), torch.sparse.mm(sb, db)
    close(oa, ob, 1e-5)
    oa.backward(tn.from_numpy(g))
    ob.backward(torch.from_numpy(g))
    close(va.grad, vb.grad, 1e-5)
    close(da.grad, db.grad, 1e-5)
    assert sa.requires_grad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_csr_gradients(dtype):
    """CSR: the dense operand's gradient as torch's; the values' as the dense product's
    gradient at the stored entries (2025 PyTorch's; 1.13 gives none)."""
    rng = np.random.default_rng(4)
    x = rand_sparse(rng, 20, 15, 0.3, dtype, empty_rows=(2,))
    d, g = rng.standard_normal((15, 5)).astype(dtype), rng.standard_normal((20, 5)).astype(dtype)
    csr_t = torch.from_numpy(x).to_sparse_csr()
    vals_t = csr_t.values().clone().requires_grad_()
    da, db = both(d)
    da.requires_grad_()
    db.requires_grad_()
    sa = tn.sparse_csr_tensor(tn.from_numpy(csr_t.crow_indices().numpy()), tn.from_numpy(csr_t.col_indices().numpy()),
                              tn.from_numpy(vals_t.detach().numpy().copy()), (20, 15), requires_grad=True)
    sb = torch.sparse_csr_tensor(csr_t.crow_indices(), csr_t.col_indices(), vals_t.detach(), (20, 15))
    oa, ob = sa @ da, torch.sparse.mm(sb, db)
    close(oa, ob, 1e-5)
    oa.backward(tn.from_numpy(g))
    ob.backward(torch.from_numpy(g))
    close(da.grad, db.grad, 1e-5)
    # the values' gradient: the dense product's, sampled at the nonzeros
    xt = torch.from_numpy(x).requires_grad_()
    (xt @ torch.from_numpy(d)).backward(torch.from_numpy(g))
    rows = np.repeat(np.arange(20), np.diff(csr_t.crow_indices().numpy()))
    close(sa.values().grad, xt.grad.numpy()[rows, csr_t.col_indices().numpy()], 1e-5)
    assert isinstance(sa.grad, tn.sparse.SparseCsrTensor) and sa.grad._nnz() == sa._nnz()


def test_csr_gradcheck_float64():
    """Finite differences (torch.autograd.gradcheck's method) through the package, with
    double backward: the values' gradient is itself a recorded product."""
    rng = np.random.default_rng(5)
    x = rand_sparse(rng, 6, 5, 0.5, np.float64, empty_rows=(1,))
    s = tn.from_numpy(x).to_sparse_csr()
    vals = s.values().detach().clone().requires_grad_()
    d = tn.from_numpy(rng.standard_normal((5, 3))).requires_grad_()

    def f(v, m):
        return tn.sparse.mm(tn.sparse_csr_tensor(s.crow_indices(), s.col_indices(), v, (6, 5)), m)

    assert tn.autograd.gradcheck(f, (vals, d))
    assert tn.autograd.gradgradcheck(f, (vals, d))


def test_to_dense_and_to_sparse_csr_are_differentiable():
    x = tn.tensor([[0., 2., 0.], [1., 0., 3.]], requires_grad=True)
    s = x.to_sparse_csr()
    (s.to_dense() * tn.tensor([[1., 2., 3.], [4., 5., 6.]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0., 2., 0.], [4., 0., 6.]])   # only the stored entries


# --------------------------------------------------------------------------- sum, softmax
def _coo_pair(idx, vals, size):
    return (tn.sparse_coo_tensor(tn.from_numpy(idx), tn.from_numpy(vals), size),
            torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(vals), size))


def _same_sparse(a, b, tol=1e-6):
    if isinstance(b, torch.Tensor) and not b.is_sparse:
        close(a, b, tol)
        return
    b = b.coalesce()
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    close(a.values(), b.values(), tol)
    assert tuple(a.shape) == tuple(b.shape)


def test_sparse_sum_matches_torch():
    idx = np.array([[0, 1, 1, 0, 1], [2, 0, 2, 2, 0]])
    a, b = _coo_pair(idx, np.array([1., 2., 3., 4., 5.], np.float32), (2, 3))
    close(tn.sparse.sum(a), torch.sparse.sum(b))
    for dim in (0, 1, -1, (0, 1), (1, 0)):
        _same_sparse(tn.sparse.sum(a, dim), torch.sparse.sum(b, dim))
    assert tn.sparse.sum(a, dtype=tn.float64).dtype == tn.float64
    # hybrid: a dense dim
    rng = np.random.default_rng(6)
    h, hb = _coo_pair(idx, rng.standard_normal((5, 4)).astype(np.float32), (2, 3, 4))
    for dim in (0, 1, 2, (0, 2), (0, 1), (0, 1, 2)):
        _same_sparse(tn.sparse.sum(h, dim), torch.sparse.sum(hb, dim))
    # gradients reach the values
    v = tn.tensor([1., 2., 3., 4., 5.], requires_grad=True)
    tn.sparse.sum(tn.sparse_coo_tensor(tn.from_numpy(idx), v, (2, 3))).backward()
    np.testing.assert_array_equal(v.grad.numpy(), np.ones(5))
    # CSR summed whole
    close(tn.sparse.sum(tn.eye(3).to_sparse_csr()), torch.tensor(3.))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_sparse_softmax_matches_torch(fn):
    rng = np.random.default_rng(7)
    idx = np.array([[0, 1, 1, 0, 1, 2, 2], [2, 0, 2, 2, 3, 1, 3]])
    vals = rng.standard_normal(7).astype(np.float64)
    a, b = _coo_pair(idx, vals, (3, 4))
    for dim in (0, 1, -1):   # 1.13 refuses a negative dim (": dim must be non-negative"); ours wraps it as softmax does
        _same_sparse(getattr(tn.sparse, fn)(a, dim), getattr(torch.sparse, fn)(b, dim % 2), 1e-12)
    # hybrid: along a dense dim and a sparse dim
    hv = rng.standard_normal((7, 3))
    h, hb = _coo_pair(idx, hv, (3, 4, 3))
    for dim in (0, 1, 2):
        _same_sparse(getattr(tn.sparse, fn)(h, dim), getattr(torch.sparse, fn)(hb, dim), 1e-12)
    # gradients as torch's
    va, vb = both(vals)
    va.requires_grad_()
    vb.requires_grad_()
    ga = getattr(tn.sparse, fn)(tn.sparse_coo_tensor(tn.from_numpy(idx), va, (3, 4)).coalesce(), 1)
    gb = getattr(torch.sparse, fn)(torch.sparse_coo_tensor(torch.from_numpy(idx), vb, (3, 4)).coalesce(), 1)
    w = rng.standard_normal(6)
    (ga.values() * tn.from_numpy(w)).sum().backward()
    (gb.values() * torch.from_numpy(w)).sum().backward()
    close(va.grad, vb.grad, 1e-12)
    # 0 nnz
    z = tn.sparse_coo_tensor(tn.zeros(2, 0, dtype=tn.int64), tn.zeros(0), (2, 2))
    assert getattr(tn.sparse, fn)(z, 0)._nnz() == 0


# --------------------------------------------------------------------------- coalescing, safetensors
def test_coalesce_duplicates_matches_torch():
    rng = np.random.default_rng(8)
    idx = np.stack([rng.integers(0, 5, 40), rng.integers(0, 4, 40)])
    a, b = _coo_pair(idx, rng.standard_normal(40), (5, 4))
    _same_sparse(a.coalesce(), b.coalesce(), 1e-12)
    ca, cb = a.to_sparse_csr(), b.coalesce().to_sparse_csr()
    np.testing.assert_array_equal(ca.crow_indices().numpy(), cb.crow_indices().numpy())
    np.testing.assert_array_equal(ca.col_indices().numpy(), cb.col_indices().numpy())
    close(ca.values(), cb.values(), 1e-12)


def test_safetensors_round_trip(tmp_path):
    rng = np.random.default_rng(9)
    x = rand_sparse(rng, 6, 5, 0.4, np.float32)
    csr, coo = tn.from_numpy(x).to_sparse_csr(), tn.from_numpy(x).to_sparse()
    path = str(tmp_path / "g.safetensors")
    tn.save({"adj": csr, "coo": coo, "w": tn.ones(2)}, path)
    back = tn.load(path)
    assert back["adj"].layout is tn.sparse_csr and back["coo"].layout is tn.sparse_coo
    np.testing.assert_array_equal(back["adj"].to_dense().numpy(), x)
    np.testing.assert_array_equal(back["coo"].to_dense().numpy(), x)
    assert _raw_names(path) == {"adj.crow_indices", "adj.col_indices", "adj.values", "coo.indices", "coo.values", "w"}


def test_safetensors_keys(tmp_path):
    """The key naming the docs state: <name>.crow_indices / .col_indices / .values (CSR),
    <name>.indices / .values (COO), each an ordinary tensor."""
    x = tn.tensor([[0., 1.], [2., 0.]])
    path = str(tmp_path / "k.safetensors")
    tn.save({"adj": x.to_sparse_csr(), "e": x.to_sparse()}, path)
    d = tn.load(path)
    assert set(d) == {"adj", "e"}
    raw = _raw_names(path)
    assert raw == {"adj.crow_indices", "adj.col_indices", "adj.values", "e.indices", "e.values"}


def _raw_names(path):
    import json
    import struct
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return {k for k in header if k != "__metadata__"}


def test_hostile_indices_raise():
    """Indices far out of range, a crow that runs backwards or past nnz: errors, never a bad
    read (the C checks run before any index is used)."""
    v = tn.ones(2)
    for crow, col in [([0, 1, 2], [0, 2 ** 62]), ([0, 1, 2], [-(2 ** 63), 0]), ([0, -(2 ** 62), 2], [0, 1]),
                      ([0, 2 ** 62, 2], [0, 1]), ([0, 3, 2], [0, 1])]:
        with pytest.raises(RuntimeError, match="is not satisfied"):
            tn.sparse_csr_tensor(tn.tensor(crow), tn.tensor(col), v, (2, 2))
    # COO built unchecked (SparseTensor directly): the C product checks the indices itself
    for idx, msg in (([[0, 2 ** 62], [0, 0]], "for dim 0, size is 2 but found index"), ([[0, 0], [-(2 ** 63), 0]], "found negative index")):
        with pytest.raises(RuntimeError, match=msg):
            tn.sparse.mm(tn.sparse.SparseTensor(tn.tensor(idx), v, (2, 2)), tn.ones(2, 3))


def test_grad_for_one_operand_only():
    x = tn.tensor([[0., 2., 0.], [1., 0., 3.]])
    s = x.to_sparse_csr()
    d = tn.randn(3, 2, requires_grad=True)
    (s @ d).sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), x.numpy().T @ np.ones((2, 2)), rtol=1e-6)
    assert s.values().grad is None and not s.requires_grad
    # only the values
    s2 = tn.sparse_csr_tensor(s.crow_indices(), s.col_indices(), s.values(), (2, 3), requires_grad=True)
    dd = tn.randn(3, 2)
    (s2 @ dd).sum().backward()
    np.testing.assert_allclose(s2.values().grad.numpy(), dd.sum(1).numpy()[s.col_indices().numpy()], rtol=1e-6)
