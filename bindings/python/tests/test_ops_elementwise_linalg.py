"""Elementwise, special-function, linear-algebra-lite and shape ops against PyTorch's own
test database (issue 20, item 2, second half).

For every op of OPS, PyTorch's OpInfo entry (torch.testing._internal's op_db) supplies the
inputs: its sample_inputs for float64 (with requires_grad), float32 and int64, its
reference_inputs where it has them, and its error_inputs. Each sample runs through torch
and through this package; values, shapes and dtypes must agree, and for float64 samples
the gradients of every input (for a random weighting of the outputs) too. Odd-numbered
samples reach our op as non-contiguous views (every other element of a wider buffer), so
strided kernels and gradients to views are exercised. Where PyTorch raises, we must raise.

A handful of samples are skipped, each with its reason in SKIP (behaviour PyTorch 1.13
has that 2025 PyTorch changed, or that this package documents as different).

    make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_ops_elementwise_linalg.py
    python3 bindings/python/tests/test_ops_elementwise_linalg.py     # the per-op pass counts
"""
import sys

import pytest

from opinfo_util import assert_close, load_op_db, ours_callable, run_sample as _run_sample, SampleFailure, tn, to_tn, torch

op_db = load_op_db()

# (OpInfo name, variant) -> None, or a function (sample) -> reason string to skip it
OPS = """
acosh asinh atanh lgamma digamma erfinv erfc i0 special.i0e special.i1 special.i1e sinc logit sgn signbit
deg2rad rad2deg frexp square exp2 expm1 log1p clamp_min clamp_max
polygamma:polygamma_n_0 polygamma:polygamma_n_1 polygamma:polygamma_n_2 polygamma:polygamma_n_3
polygamma:polygamma_n_4 special.polygamma:special_polygamma_n_0
mvlgamma:mvlgamma_p_1 mvlgamma:mvlgamma_p_3 mvlgamma:mvlgamma_p_5
logaddexp logaddexp2 hypot xlogy special.xlog1py copysign nextafter fmax fmin heaviside gcd lcm ldexp
float_power true_divide
einsum diagonal diag diag_embed diagflat meshgrid:variadic_tensors meshgrid:list_of_tensors trace tensordot kron
cross linalg.cross rot90 tensor_split split_with_sizes hsplit vsplit dsplit hstack vstack dstack column_stack
addmv addr addbmm vdot inner block_diag cartesian_prod sum_to_size atleast_1d atleast_2d atleast_3d
flip fliplr flipud movedim transpose broadcast_to addmm baddbmm narrow_copy
cdist nn.functional.pdist cov corrcoef as_strided
""".split()

def _two_floats(s):
    if not isinstance(s.input, torch.Tensor) and s.args and isinstance(s.args[0], float):
        return "two Python floats: PyTorch's float64 here (float32 for float and int) follows no promotion rule"
    return None


SKIP = {"true_divide": _two_floats}

def _cov_mixed(s):
    """cov with float32 weights beside a float64 input: PyTorch forms the weights' sums
    (w_sum - correction * sum(w * aweights) / w_sum, which cancels) in float32, so results
    and gradients agree only to float32's rounding of those sums: (rtol, atol)."""
    ws = [w for w in (s.kwargs.get("fweights"), s.kwargs.get("aweights")) if isinstance(w, torch.Tensor)]
    return (1e-4, 1e-3) if any(w.dtype != s.input.dtype and w.is_floating_point() for w in ws) else None


# (OpInfo name) -> function (sample) -> None or (rtol, atol) for values and gradients
LOOSE = {"cov": _cov_mixed}

# (OpInfo name) -> {error input index: reason}: error inputs PyTorch's own test expects to fail
_SCALAR_RHS = "PyTorch's test_errors is an expected failure here: a Python-number rhs is supported"
ERROR_SKIP = {"clamp_min": {0: _SCALAR_RHS}, "clamp_max": {0: _SCALAR_RHS}}


# ops whose result depends on the input's memory layout (storage strides), not its values
CONTIGUOUS_ONLY = {"as_strided"}


def run_sample(op, ours, s, k, check_grad):
    """One sample (opinfo_util.run_sample): raises AssertionError on a mismatch. Odd-numbered
    samples reach our op as non-contiguous views."""
    noncontig = k % 2 == 1 and op.name not in CONTIGUOUS_ONLY
    loose = LOOSE.get(op.name, lambda s: None)(s)
    f32 = isinstance(s.input, torch.Tensor) and s.input.dtype in (torch.float32, torch.complex64)
    # (a float32 leaf beside float64 inputs, cov's aweights, has float32's rounding: loose;
    # float32 values: this suite's rtol 1.3e-5, products summed in another order)
    return _run_sample(op, ours, s, f"{op.name} sample {k}", noncontig=noncontig, check_grad=check_grad,
                       tol=loose or ((1.3e-5, 1e-5) if f32 else None), grad_tol=loose)


def _samples(op, cplx=False):
    """(sample, check_grad) for float64 (with grad), float32 and int64, and the reference inputs;
    cplx: complex128 (with grad) and complex64 instead (sample inputs only)."""
    out = []
    dts = ((torch.complex128, True), (torch.complex64, False)) if cplx else ((torch.float64, True), (torch.float32, False), (torch.int64, False))
    for dt, grad in dts:
        if dt not in op.dtypes:
            continue
        out += [(s, grad and op.supports_autograd) for s in op.sample_inputs("cpu", dt, requires_grad=grad and op.supports_autograd)]
        if op.reference_inputs_func is not None and dt != torch.float32 and not cplx:
            out += [(s, False) for s in op.reference_inputs("cpu", dt)]
    return out


def _find(spec):
    name, _, variant = spec.partition(":")
    for op in op_db:
        if op.name == name and op.variant_test_name == variant:
            return op
    raise LookupError(spec)


def check_op(spec, cplx=False):
    """Runs every sample of one op; returns (passed, total, failures). cplx: its complex
    samples (complex128 with gradients, complex64), without the error inputs."""
    op = _find(spec)
    ours = ours_callable(op)
    torch.manual_seed(1234)   # PyTorch's test seed (common_utils SEED); the samples' values (make_tensor draws from torch's generator): the same in any test order
    passed, total, failures = 0, 0, []
    for k, (s, grad) in enumerate(_samples(op, cplx)):
        total += 1
        reason = SKIP.get(spec, lambda s: None)(s)
        if reason:
            passed += 1
            continue
        try:
            run_sample(op, ours, s, k, grad)
            passed += 1
        except (SampleFailure, Exception) as e:   # noqa: BLE001 (collected, reported together)
            failures.append(f"sample {k} {s.input.shape if isinstance(s.input, torch.Tensor) else type(s.input).__name__} "
                            f"args={s.args!r:.120} kwargs={s.kwargs!r:.80}: {type(e).__name__}: {str(e)[:300]}")
    if op.error_inputs_func is not None and not cplx:
        for k, e in enumerate(op.error_inputs("cpu")):
            s = e.sample_input
            total += 1
            if k in ERROR_SKIP.get(spec, {}):
                passed += 1
                continue
            try:
                with pytest.raises(Exception):
                    ours(to_tn(s.input), *to_tn(s.args), **to_tn(s.kwargs))
                passed += 1
            except BaseException as x:   # noqa: BLE001 (pytest.raises fails with an outcome exception)
                failures.append(f"error input {k}: PyTorch raises {e.error_type.__name__} ({e.error_regex}); we: {x!s:.200}")
    return passed, total, failures


@pytest.mark.parametrize("spec", OPS)
def test_opinfo(spec):
    if torch is None:
        pytest.skip("torch is not installed")
    passed, total, failures = check_op(spec)
    assert not failures, f"{spec}: {passed}/{total} passed\n" + "\n".join(failures[:20])


# --------------------------------------------------------------------------- beyond OpInfo
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _pair(shape, dtype="float64"):
    t = torch.randn(*shape, dtype=getattr(torch, dtype))
    return t, to_tn(t)


@needs_torch
def test_inplace_view_ops():
    for name, args in (("transpose_", (0, 2)), ("swapaxes_", (1, -1)), ("t_", ()), ("squeeze_", ()), ("squeeze_", (1,)),
                       ("unsqueeze_", (-1,)), ("as_strided_", ((2, 2), (1, 2), 1))):
        t = torch.randn(2, 1, 3, dtype=torch.float64) if name != "t_" else torch.randn(2, 3, dtype=torch.float64)
        ours = to_tn(t)
        r = getattr(ours, name)(*args)
        assert r is ours, name
        assert_close(ours, getattr(t, name)(*args), name)


@needs_torch
def test_resize():
    t = torch.arange(6.)
    ours = tn.arange(6.)
    ours.resize_(2, 2)
    t.resize_(2, 2)
    assert_close(ours, t, "resize_ smaller")
    assert ours.resize_as_(tn.ones(4)).shape == (4,)
    big = tn.arange(3.).resize_(2, 3)
    assert big.shape == (2, 3) and big.tolist()[0] == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError):
        tn.ones(2, requires_grad=True).resize_(3)


@needs_torch
def test_inplace_products():
    for name, shapes in (("addmm_", ((3, 4), (3, 2), (2, 4))), ("baddbmm_", ((2, 3, 4), (2, 3, 5), (2, 5, 4))),
                         ("addmv_", ((3,), (3, 2), (2,))), ("addr_", ((3, 2), (3,), (2,))),
                         ("addbmm_", ((3, 4), (2, 3, 5), (2, 5, 4)))):
        ts = [torch.randn(*sh, dtype=torch.float64) for sh in shapes]
        ours = [to_tn(t) for t in ts]
        r = getattr(ours[0], name)(ours[1], ours[2], beta=0.5, alpha=2)
        assert r is ours[0]
        assert_close(ours[0], getattr(ts[0], name)(ts[1], ts[2], beta=0.5, alpha=2), name)


@needs_torch
def test_call_forms():
    a, ta = _pair((3, 4))
    b, tb = _pair((4, 5))
    assert_close(tn.einsum(ta, [0, 1], tb, [1, 2], [0, 2]), torch.einsum(a, [0, 1], b, [1, 2], [0, 2]), "einsum sublists")
    assert_close(tn.einsum("ij,jk", [ta, tb]), torch.einsum("ij,jk", [a, b]), "einsum operand list")
    e, te = _pair((4, 3))
    assert_close(tn.einsum(ta, [Ellipsis, 1], te, [1, Ellipsis]), torch.einsum(a, [Ellipsis, 1], e, [1, Ellipsis]), "einsum ellipsis sublist")
    assert_close(tn.tensordot(ta, tb, dims=1), torch.tensordot(a, b, dims=1), "tensordot int")
    assert_close(tn.tensordot(ta, tb, dims=tn.tensor(1)), torch.tensordot(a, b, dims=torch.tensor(1)), "tensordot 0-d tensor")
    assert_close(tn.tensordot(ta, tb, dims=([1], [0])), torch.tensordot(a, b, dims=([1], [0])), "tensordot lists")
    c, tc = _pair((4, 3, 3))
    d, td = _pair((4, 3, 3))
    assert_close(tn.cross(tc, td), torch.cross(c, d), "cross dim=None: the first dim of size 3")
    assert_close(tn.linalg.cross(tc, td), torch.linalg.cross(c, d), "linalg.cross: dim=-1")
    assert_close(tc.cross(td, dim=1), c.cross(d, dim=1), "cross method")
    x, tx = _pair((2,))
    y, ty = _pair((3,))
    for kw in ({}, {"indexing": "xy"}, {"indexing": "ij"}):
        assert_close(tn.meshgrid(tx, ty, **kw), torch.meshgrid(x, y, **kw), f"meshgrid {kw}")
    assert_close(tn.meshgrid([tx, ty]), torch.meshgrid([x, y]), "meshgrid list")
    assert_close(tx.flip(dims=[0]), x.flip(dims=[0]), "flip(dims=)")
    assert_close(ta.swapaxes(0, 1), a.swapaxes(0, 1), "swapaxes")
    assert_close(ta.moveaxis(0, 1), a.moveaxis(0, 1), "moveaxis")
    assert_close(tn.atleast_2d(tx, ty), torch.atleast_2d(x, y), "atleast_2d of several")
    assert_close(tn.atleast_3d([tx, ty]), torch.atleast_3d([x, y]), "atleast_3d of a list")
    assert_close(tn.row_stack([tx, tx]), torch.row_stack([x, x]), "row_stack")
    assert_close(ta.sum_to_size(1, 4), a.sum_to_size(1, 4), "sum_to_size")
    assert_close(ta.diagonal(offset=1, dim1=1, dim2=0), a.diagonal(offset=1, dim1=1, dim2=0), "diagonal keywords")
    assert_close(tn.cdist(ta, tn.ones(2, 4, dtype=tn.float64), compute_mode="donot_use_mm_for_euclid_dist"),
                 torch.cdist(a, torch.ones(2, 4, dtype=torch.float64), compute_mode="donot_use_mm_for_euclid_dist"), "cdist mode")
    assert_close(tn.nn.functional.pdist(ta), torch.nn.functional.pdist(a), "F.pdist")
    with pytest.raises(ValueError):
        tn.cdist(ta, ta, compute_mode="fast")
    with pytest.raises(RuntimeError):
        tn.einsum("ij,jk->ik", ta, ta)
    with pytest.raises(RuntimeError):
        tn.cross(tn.ones(2, 2), tn.ones(2, 2))


if __name__ == "__main__":
    if torch is None:
        sys.exit("torch is not installed")
    for spec in sys.argv[1:] or OPS:
        p, t, f = check_op(spec)
        print(f"{spec:40s} {p:4d} / {t:4d}")
        for line in f[:8]:
            print("    " + line)


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_special_exponents_like_torch(dtype):
    # exponents 2, 3, 0.5, -0.5, -1, -2 take PyTorch's special cases (x*x, sqrt, 1/x, ...):
    # the same bits as torch's, signed zeros, infinities and NaN included
    import numpy as np
    a = np.concatenate([np.random.RandomState(0).randn(500) * 10, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e30]])
    a = a.astype(dtype)
    for e in (2, 3, 0.5, -0.5, -1, -2, 1, 0):
        ours, theirs = (tn.tensor(a) ** e).numpy(), (torch.tensor(a) ** e).numpy()
        same = (ours == theirs) & (np.signbit(ours) == np.signbit(theirs)) | (np.isnan(ours) & np.isnan(theirs))
        assert same.all(), (e, a[~same][:3], ours[~same][:3], theirs[~same][:3])
