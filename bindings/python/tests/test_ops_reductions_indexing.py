"""Reductions, scans, sorting, indexing and sampling ops against PyTorch's own OpInfo tests.

For every op of issue 20 item 2 (first half) this runs the samples of PyTorch's op_db
(`op.sample_inputs('cpu', float64, requires_grad=True)`, and int64 samples for the
integer-only ops) through the package: the outputs must equal torch's, the gradients of
the differentiable ones (for random output gradients) must equal torch's, a float64
gradcheck must pass on the first samples, and `op.error_inputs('cpu')` must raise the same
exception class. Where PyTorch leaves a result unspecified (the order of torch 1.13's
unique(sorted=False), the index of a repeated mode, random draws) the check is of what it
does specify. The per-op counts are printed by the last test (`pytest -s`).

Needs PyTorch (the oracle): skipped without it. conftest.py provides the `expecttest`
stand-in PyTorch's test database imports.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_ops_reductions_indexing.py
"""
import math
import os
import sys
import warnings

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from opinfo_util import describe, tensors_of  # noqa: E402  (shared with the other OpInfo suites)

# op_db name -> (variant names or None for all, differentiable here)
OPS = {
    "multinomial": False, "median": True, "nanmedian": True, "mode": True, "cummax": True, "cummin": True,
    "logcumsumexp": True, "nansum": True, "nanmean": True, "unique": False, "unique_consecutive": False,
    "searchsorted": False, "bucketize": False, "bincount": False, "histc": False, "index_add": True,
    "index_copy": True, "index_fill": True, "index_put": True, "scatter_reduce": True, "scatter": True,
    "take": True, "put": True, "take_along_dim": True, "masked_scatter": True, "quantile": True,
    "nanquantile": True, "isin": False, "tril_indices": False, "triu_indices": False, "repeat_interleave": True,
    "diff": True, "kthvalue": True, "msort": True, "argwhere": False, "count_nonzero": False, "aminmax": False,
}
INFOS = [op for op in op_db if op.name in OPS]
RESULTS = {}   # "name[.variant]" -> [passed, total]
GRADCHECKS = 3   # samples per op that also get a numerical gradcheck


def _key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


# --------------------------------------------------------------------------- conversions
def to_tn(x):
    if isinstance(x, torch.Tensor):
        d = x.detach()
        if d.numel() == 0:   # (torch's DLPack gives no data pointer then)
            t = tn.empty(tuple(d.shape), dtype=getattr(tn, str(d.dtype).split(".")[1]))
        elif d.dtype == torch.bool:   # (torch 1.13 has no bool DLPack)
            t = tn.from_dlpack(d.to(torch.uint8)).bool()
        else:
            t = tn.from_dlpack(d)
        if x.requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(x, (list, tuple)):
        return type(x)(to_tn(y) for y in x)
    if isinstance(x, dict):
        return {k: to_tn(v) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(tn, str(x).split(".")[1])
    if isinstance(x, torch.device):
        return str(x)
    return x


def to_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def assert_same(ours, ref, what, exact_int=True):
    assert isinstance(ours, tn.Tensor), f"{what}: expected a tensor, got {type(ours).__name__}"
    assert tuple(ours.shape) == tuple(ref.shape), f"{what}: shape {tuple(ours.shape)} != torch's {tuple(ref.shape)}"
    assert str(ours.dtype) == str(ref.dtype), f"{what}: dtype {ours.dtype} != torch's {ref.dtype}"
    a, b = to_np(ours), to_np(ref)
    if ref.dtype.is_floating_point:
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def compare_outputs(ours, ref, what):
    if isinstance(ref, torch.Tensor):
        assert_same(ours, ref, what)
        return
    assert isinstance(ours, tuple) and len(ours) == len(ref), f"{what}: {type(ours).__name__} of {len(ours)} != torch's {len(ref)}"
    for k, (o, r) in enumerate(zip(ours, ref)):
        compare_outputs(o, r, f"{what}[{k}]")


# --------------------------------------------------------------------------- running a sample
def call(fn_name, mod, sample):
    args, kwargs = sample.args, dict(sample.kwargs)
    inp = sample.input
    if mod is tn:
        inp, args, kwargs = to_tn(inp), to_tn(args), to_tn(kwargs)
    return getattr(mod, fn_name)(inp, *args, **kwargs)


def check_selection(ours, ref, inp, dim, what):
    """values as torch's; the indices may differ where values tie, but must point at them"""
    values, indices = ours
    assert_same(values, ref[0], what + " values")
    assert str(indices.dtype) == "torch.int64" and tuple(indices.shape) == tuple(ref[1].shape), what + " indices"
    x = inp.detach()
    if x.ndim == 0:
        return
    idx = torch.from_numpy(to_np(indices).copy()).reshape(ref[1].shape)
    keep = ref[1].ndim == x.ndim
    got = x.gather(dim, idx if keep else idx.unsqueeze(dim))
    np.testing.assert_array_equal(np.isnan(got.numpy()) | (got.numpy() == to_np(ref[0]).reshape(got.shape)), True, err_msg=what + " indices")


def unique_2025(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique as PyTorch 2 computes it on the CPU: always sorted (1.13's sorted=False
    order is its hash table's), and with dim the slices compared as x.moveaxis(dim, 0)
    flattened (1.13 transposed dim and 0 instead, which orders them differently)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dim is None or x.ndim == 0:
            return torch.unique(x, sorted=True, return_inverse=return_inverse, return_counts=return_counts, dim=dim)
        if x.shape[dim] == 0:   # PyTorch 2: nothing to compare, x's (empty) shape
            empty = torch.zeros(0, dtype=torch.int64)
            out = (x.clone(),) + ((empty,) if return_inverse else ()) + ((empty,) if return_counts else ())
            return out[0] if len(out) == 1 else out
        xm = x.moveaxis(dim, 0)
        rows = xm.reshape(xm.shape[0], -1) if xm.numel() else xm.reshape(xm.shape[0], 0)
        r = torch.unique(rows, sorted=True, return_inverse=True, return_counts=True, dim=0)
    vals = r[0].reshape((r[0].shape[0],) + tuple(xm.shape[1:])).moveaxis(0, dim)
    out = (vals,) + ((r[1],) if return_inverse else ()) + ((r[2],) if return_counts else ())
    return out[0] if len(out) == 1 else out


def run_sample(op, sample):
    name = op.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = call(name, torch, sample)
    ours = call(name, tn, sample)
    what = f"{_key(op)} {describe(sample)}"
    if name == "multinomial":
        p = sample.input.detach().reshape(-1, sample.input.shape[-1])
        got = torch.from_numpy(to_np(ours).copy()).reshape(p.shape[0], -1)
        assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype) == "torch.int64", what
        assert ((got >= 0) & (got < p.shape[1])).all(), what
        assert (p.gather(1, got) > 0).all() or not bool((p > 0).sum(1).min() >= got.shape[1]), what
        replacement = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("replacement", False)
        if not replacement:
            assert all(len(set(r.tolist())) == len(r) for r in got), what + ": repeated category without replacement"
        return
    if name == "unique":
        ref = unique_2025(sample.input, **sample.kwargs)
    if name in ("median", "nanmedian", "kthvalue", "mode") and isinstance(ref, tuple):
        dim = sample.kwargs.get("dim", sample.args[1] if name == "kthvalue" and len(sample.args) > 1 else
                                sample.args[0] if name != "kthvalue" and sample.args else -1)
        check_selection(ours, ref, sample.input, dim, what)
    else:
        compare_outputs(ours, ref, what)
    if not OPS[name]:
        return
    # gradients for random output gradients, against torch's
    leaves = [t for t in tensors_of((sample.input, sample.args, sample.kwargs)) if t.requires_grad]
    routs = [t for t in tensors_of(ref) if t.dtype.is_floating_point and t.requires_grad]
    if not leaves or not routs:
        return
    oouts = [t for t in tensors_of(ours) if t.dtype.is_floating_point]
    gs = [torch.randn_like(t) for t in routs]
    try:
        rg = torch.autograd.grad(routs, leaves, gs, allow_unused=True)
    except RuntimeError as e:   # scatter(reduce=): no derivative in PyTorch; ours must refuse too
        assert "not implemented" in str(e), what
        with pytest.raises(RuntimeError, match="not implemented"):
            tn.autograd.grad(oouts, to_leaves_of(ours, leaves, sample), [to_tn(g) for g in gs], allow_unused=True)
        return
    og = tn.autograd.grad(oouts, to_leaves_of(ours, leaves, sample), [to_tn(g) for g in gs], allow_unused=True)
    for k, (a, b) in enumerate(zip(og, rg)):
        if b is None:
            assert a is None or not to_np(a).any(), f"{what}: grad {k} should be zero"
        else:
            assert a is not None, f"{what}: grad {k} missing"
            assert_same(a, b, f"{what} grad {k}")


_LEAVES = {}   # id(torch leaf) -> its tn twin, per sample


def to_leaves_of(ours, leaves, sample):
    return [_LEAVES[id(t)] for t in leaves]


def call_tracking(sample):
    """to_tn for a sample, remembering which tn leaf stands for which torch leaf"""
    _LEAVES.clear()
    orig = to_tn

    def conv(x):
        t = orig(x)
        if isinstance(x, torch.Tensor) and x.requires_grad:
            _LEAVES[id(x)] = t
        return t
    return conv


def gradcheck_sample(op, sample):
    """a float64 numerical gradcheck of ours, for the inputs that require grad"""
    leaves = [t for t in tensors_of((sample.input, sample.args, sample.kwargs)) if t.requires_grad]
    if not leaves:
        return False
    twins = {id(t): to_tn(t) for t in leaves}

    def rebuild(x, values):
        if isinstance(x, torch.Tensor):
            return values[id(x)] if id(x) in values else to_tn(x)
        if isinstance(x, (list, tuple)):
            return type(x)(rebuild(y, values) for y in x)
        if isinstance(x, dict):
            return {k: rebuild(v, values) for k, v in x.items()}
        return to_tn(x)

    def f(*xs):
        values = {id(t): x for t, x in zip(leaves, xs)}
        out = getattr(tn, op.name)(rebuild(sample.input, values), *rebuild(sample.args, values), **rebuild(sample.kwargs, values))
        outs = [t for t in tensors_of(out) if t.dtype.is_floating_point]
        return outs[0] if len(outs) == 1 else tuple(outs)
    return tn.autograd.gradcheck(f, tuple(twins[id(t)] for t in leaves), eps=1e-6, atol=1e-5, rtol=1e-3)


def duplicate_indices(indices):
    ix = [i for i in indices if i is not None and i.dtype != torch.bool]
    return any(len(set(i.reshape(-1).tolist())) < i.numel() for i in ix)


# Error inputs where the package deliberately differs from PyTorch, with the reason.
KNOWN_ERROR_DIFFERENCES = {}   # (gather/scatter's int32 index is PyTorch's error now, as there)


def known_difference(op, s):
    idx = [t for t in tensors_of((s.input, s.args)) if t.dtype == torch.int32]
    return KNOWN_ERROR_DIFFERENCES.get((op.name, "int32")) if idx else None


# --------------------------------------------------------------------------- the tests
def _samples(op):
    """the samples that require grad (differentiable ops), then those that do not (some
    exist only so: scatter's reduce= ones)"""
    dt = torch.float64 if torch.float64 in op.supported_dtypes("cpu") else torch.int64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grad = OPS[op.name] and dt.is_floating_point
        return (list(op.sample_inputs("cpu", dt, requires_grad=True)) if grad else []) + list(op.sample_inputs("cpu", dt, requires_grad=False))


def _run_samples(op, samples):
    """run_sample on each; the failures, described"""
    global to_tn
    failures = []
    for sample in samples:
        conv = call_tracking(sample)
        saved, to_tn = to_tn, conv
        try:
            run_sample(op, sample)
        except Exception as e:   # noqa: BLE001: collected, reported together
            failures.append(f"{describe(sample)}: {type(e).__name__}: {str(e)[:300]}")
        finally:
            to_tn = saved
    return failures


@pytest.mark.parametrize("op", INFOS, ids=_key)
def test_opinfo_samples(op):
    samples = _samples(op)
    assert samples, _key(op)
    failures, gradchecked = _run_samples(op, samples), 0
    for sample in samples:
        if not OPS[op.name] or gradchecked >= GRADCHECKS or op.name == "scatter" and "reduce" in sample.kwargs:
            continue
        if op.name == "index_put" and not sample.kwargs.get("accumulate") and duplicate_indices(sample.args[0]):
            continue   # which duplicate's value lands is unspecified: no derivative to check numerically

        try:
            if gradcheck_sample(op, sample):
                gradchecked += 1
        except Exception as e:   # noqa: BLE001
            failures.append(f"gradcheck {describe(sample)}: {type(e).__name__}: {str(e)[:300]}")
            gradchecked += 1
    RESULTS[_key(op)] = [len(samples) - len(failures), len(samples)]
    assert not failures, f"{_key(op)}: {len(failures)} of {len(samples)} samples failed:\n" + "\n".join(failures[:8])


@pytest.mark.parametrize("op", [op for op in INFOS if not op.name.endswith("_indices")], ids=_key)   # (no tensor inputs)
def test_opinfo_samples_noncontiguous(op):
    """the same samples with every tensor strided (PyTorch's noncontiguous_like: every other
    element of a bigger buffer), values and gradients against torch's"""
    samples = [s.noncontiguous() for s in _samples(op)]
    assert samples and any(not t.is_contiguous() for s in samples for t in tensors_of((s.input, s.args)) if t.numel() > 1), _key(op)
    failures = _run_samples(op, samples)
    RESULTS[_key(op) + " noncontig"] = [len(samples) - len(failures), len(samples)]
    assert not failures, f"{_key(op)}: {len(failures)} of {len(samples)} samples failed:\n" + "\n".join(failures[:8])


ERROR_OPS = [op for op in INFOS if op.error_inputs_func is not None]


@pytest.mark.parametrize("op", ERROR_OPS, ids=_key)
def test_opinfo_error_inputs(op):
    tried, failures = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errs = list(op.error_inputs("cpu"))
    for e in errs:
        s = e.sample_input
        if "out" in s.kwargs:   # the package has no out= arguments
            continue
        if s.input.numel() > (1 << 22):   # multinomial's 2^24 + 1 categories: the count is checked before any data is read
            continue
        if known_difference(op, s):
            continue
        tried += 1
        try:
            call(op.name, tn, s)
        except e.error_type:
            continue
        except Exception as ex:   # noqa: BLE001
            failures.append(f"{describe(s)}: raised {type(ex).__name__} ({ex}), torch raises {e.error_type.__name__} ({e.error_regex})")
            continue
        failures.append(f"{describe(s)}: no error, torch raises {e.error_type.__name__} ({e.error_regex})")
    RESULTS[_key(op) + " errors"] = [tried - len(failures), tried]
    assert not failures, "\n".join(failures)


# --------------------------------------------------------------------------- beyond the OpInfo samples
def test_aminmax_values():
    """torch 1.13's op_db has error inputs only for aminmax"""
    base = torch.randn(5, 4, 3, dtype=torch.float64)
    x = base.transpose(0, 2)   # not contiguous
    x[1, 2, 0] = float("nan")
    for kw in ({}, {"dim": 1}, {"dim": -1, "keepdim": True}, {"dim": 0}):
        r, o = torch.aminmax(x, **kw), tn.aminmax(to_tn(x), **kw)
        assert_same(o.min, r.min, f"aminmax {kw} min")
        assert_same(o.max, r.max, f"aminmax {kw} max")
        m = to_tn(x).aminmax(**kw)
        assert_same(m[0], r[0], f"Tensor.aminmax {kw}")
    xi = torch.randint(-9, 9, (4, 6))
    assert_same(tn.aminmax(to_tn(xi), dim=1).max, torch.aminmax(xi, dim=1).max, "aminmax int64")
    z = torch.tensor(2.5, dtype=torch.float64)
    assert_same(tn.aminmax(to_tn(z)).min, torch.aminmax(z).min, "aminmax 0-d")
    with pytest.raises(RuntimeError):
        tn.aminmax(tn.zeros(0))


def test_multinomial_generator_and_distribution():
    p = tn.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype=tn.float64)
    g1, g2 = tn.Generator().manual_seed(5), tn.Generator().manual_seed(5)
    a = tn.multinomial(p, 3000, replacement=True, generator=g1)
    b = p.multinomial(3000, True, generator=g2)
    assert a.dtype == tn.int64 and tuple(a.shape) == (2, 3000)
    assert np.array_equal(a.numpy(), b.numpy()), "the same seed draws the same"
    c = np.stack([np.bincount(r, minlength=4) for r in a.numpy()])
    assert c[0, 0] == 0 and c[0, 3] == 0 and 2 < c[0, 2] / c[0, 1] < 4
    assert (np.abs(c[1] - 750) < 150).all()
    w = tn.multinomial(p, 2, generator=g1).numpy()
    assert sorted(w[0].tolist()) == [1, 2] and len(set(w[1].tolist())) == 2
    tn.manual_seed(3)
    d = tn.multinomial(p[1], 4)
    tn.manual_seed(3)
    assert np.array_equal(d.numpy(), tn.multinomial(p[1], 4).numpy()) and sorted(d.tolist()) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="without replacement"):
        tn.multinomial(p, 5)
    with pytest.raises(RuntimeError, match="n_sample <= 0"):
        tn.multinomial(p, 0, True)


def test_inplace_forms_return_self():
    """the in-place forms change and return their tensor, as torch's"""
    x = torch.randn(3, 4, dtype=torch.float64)
    idx = torch.tensor([2, 0])
    src = torch.randn(3, 2, dtype=torch.float64)
    cases = [("index_add_", (1, idx, src), {"alpha": 2}), ("index_copy_", (1, idx, src), {}), ("index_fill_", (1, idx, -1.5), {}),
             ("scatter_reduce_", (1, torch.tensor([[0, 0], [3, 1], [2, 2]]), src, "amax"), {"include_self": False}),
             ("scatter_", (1, torch.tensor([[0, 0], [3, 1], [2, 2]]), src), {"reduce": "multiply"}),
             ("put_", (torch.tensor([0, 5, 5]), torch.tensor([1.0, 2, 3], dtype=torch.float64)), {"accumulate": True}),
             ("masked_scatter_", (x > 0, torch.randn(12, dtype=torch.float64)), {}),
             ("index_put_", ((torch.tensor([0, 0]), torch.tensor([1, 1])), torch.tensor([1.0, 2], dtype=torch.float64)), {"accumulate": True})]
    for name, args, kw in cases:
        r, o = x.clone(), to_tn(x.clone())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rr = getattr(r, name)(*args, **kw)
        oo = getattr(o, name)(*to_tn(args), **to_tn(kw))
        assert oo is o and rr is r, name
        assert_same(o, r, name)


def test_summary():
    """the per-op counts (run with -s to see them)"""
    for k in sorted(RESULTS):
        print(f"  {k:32s} {RESULTS[k][0]:4d} / {RESULTS[k][1]}")
