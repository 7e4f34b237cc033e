"""Shared machinery for running PyTorch's own test databases against the package.

PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db) and
ModuleInfo database (common_modules.module_db) supply the inputs; this module turns them
into the package's values, runs the same call on both sides and compares values, shapes,
dtypes and gradients. Used by test_opinfo.py (the whole databases), and by the per-area
suites test_ops_elementwise_linalg.py and test_nn_more.py.

Not a test module itself (pytest collects test_*.py only). Importing it does not need torch:
`torch` is None then, and the suites skip themselves.
"""
import os
import sys
import types
import warnings

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import conftest  # noqa: E402,F401  (the expecttest stand-in, also when a suite runs as a script)
import tensor as tn  # noqa: E402

try:
    import numpy as np
    import torch
except ImportError:  # the oracle suites skip themselves
    np = torch = None


def load_op_db():
    """PyTorch's op_db, or [] where torch (or its test database) cannot be imported."""
    if torch is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db
    except Exception:  # noqa: BLE001 - the database's imports vary between builds: the suites skip
        return []
    return op_db


def load_module_db():
    if torch is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_modules import module_db
    except Exception:  # noqa: BLE001
        return []
    return module_db


def op_key(op):
    """'name' or 'name.variant': the id of one OpInfo entry."""
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


# --------------------------------------------------------------------------- conversions
def tn_dtype(d):
    return getattr(tn, str(d).split(".")[1])


def torch_dtype(d):
    return getattr(torch, d.name)


def _tn_copy(data):
    """A contiguous tn tensor with data's values, sharing nothing with torch."""
    dt = tn_dtype(data.dtype)
    if data.numel() == 0:   # (torch's DLPack gives no data pointer then)
        return tn.empty(tuple(data.shape), dtype=dt)
    if data.dtype == torch.bool:   # (torch 1.13 has no bool DLPack)
        return tn.from_dlpack(data.to(torch.uint8).contiguous()).to(tn.bool)
    return tn.from_dlpack(data.contiguous().clone())


def _tn_aliased(x, memo):
    """x as a view of a tn copy of its whole storage, one copy per storage in memo: tensors
    that share memory in torch (an out= that is an input, an expanded out) share it here."""
    st = x.storage()
    key = (st.data_ptr(), x.dtype)
    if key not in memo:
        whole = torch.empty(0, dtype=x.dtype).set_(st, 0, (st.size(),), (1,))
        memo[key] = _tn_copy(whole)
    return memo[key].as_strided(tuple(x.shape), tuple(x.stride()), x.storage_offset())


def to_tn(x, noncontig=False, grads=None, memo=None):
    """A tn value for a torch one (tensors, dtypes, devices, lists, tuples, dicts). A tensor
    that requires grad becomes a tn leaf (or, noncontig, a strided view of one: every other
    element of a wider buffer), recorded in grads as (torch tensor, tn leaf, strided). With
    memo (a dict), tensors keep torch's memory sharing (_tn_aliased)."""
    if memo is not None and isinstance(x, torch.Tensor) and not x.requires_grad:
        if id(x) not in memo:   # the same tensor twice (an input passed as out=) is one tensor here
            memo[id(x)] = _tn_aliased(x, memo) if x.numel() > 0 else to_tn(x)
        return memo[id(x)]
    if isinstance(x, torch.Tensor):
        data = x.detach()
        if noncontig and data.ndim >= 1 and data.numel() > 1:
            wide = torch.stack([data, torch.zeros_like(data)], dim=-1)     # [..., n, 2]
            leaf = _tn_copy(wide)
            if x.requires_grad:
                leaf.requires_grad_(True)
            v = leaf.select(-1, 0)
        else:
            leaf = v = _tn_copy(data)
            if x.requires_grad:
                leaf.requires_grad_(True)
        if x.requires_grad and grads is not None:
            grads.append((x, leaf, v is not leaf))
        return v
    if isinstance(x, torch.dtype):
        return tn_dtype(x)
    if callable(x) and not isinstance(x, type):
        return ours_function(x)
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        r = [to_tn(e, noncontig, grads, memo) for e in x]
        return r if isinstance(x, list) else tuple(r)
    if isinstance(x, dict):
        return {k: to_tn(v, noncontig, grads, memo) for k, v in x.items()}
    return x


def ours_function(f):
    """Ours for a torch function or module handed as an argument (an activation=,
    distance_function=): looked up by name; f itself where the package has none."""
    if isinstance(f, torch.nn.PairwiseDistance):
        return tn.nn.PairwiseDistance(f.norm, f.eps, f.keepdim)
    name = getattr(f, "__name__", None) or ""
    if name and getattr(torch.nn.functional, name, None) is f:
        return getattr(tn.nn.functional, name, f)
    if name and getattr(torch, name, None) is f:
        return getattr(tn, name, f)
    return f


def to_torch(x):
    if isinstance(x, tn.Tensor):
        half = x.dtype == tn.bfloat16   # (NumPy has no bfloat16: through float32, which holds it exactly)
        a = np.array((x.detach().float() if half else x.detach()).numpy(), copy=True)
        return torch.from_numpy(a).reshape(tuple(x.shape)).to(torch_dtype(x.dtype))
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(e) for e in x) if not hasattr(x, "_fields") else tuple(to_torch(e) for e in x)
    return x


def tensors_of(x):
    if isinstance(x, (torch.Tensor, tn.Tensor)):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for y in x for t in tensors_of(y)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in tensors_of(v)]
    return []


def describe(x):
    """a sample, short: shapes, dtypes and layouts instead of values"""
    if torch is not None and isinstance(x, torch.Tensor):
        return "T%s%s%s" % (tuple(x.shape), str(x.dtype)[6:], "" if x.is_contiguous() else "nc")
    if isinstance(x, (list, tuple)):
        return "(" + ", ".join(describe(y) for y in x) + ")"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}={describe(v)}" for k, v in x.items()) + "}"
    if hasattr(x, "input") and hasattr(x, "args"):
        return f"{describe(x.input)} {describe(x.args)} {describe(x.kwargs)}"
    r = repr(x)
    return r if len(r) < 40 else r[:37] + "..."


# --------------------------------------------------------------------------- comparisons
def default_tol(dtype):
    """torch.testing.assert_close's defaults"""
    return {torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7),
            torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5),
            torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7)}.get(dtype, (0, 0))


def assert_close(ours, ref, what, rtol=None, atol=None):
    """ours (tn values) equal to ref (torch values): same structure, shapes, dtypes; floats
    within (rtol, atol) (torch.testing's defaults unless given), NaN where ref has NaN."""
    if isinstance(ref, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(ref), \
            f"{what}: {type(ours).__name__} of {len(ours) if isinstance(ours, (list, tuple)) else '-'}, want {len(ref)}"
        for i, (a, b) in enumerate(zip(ours, ref)):
            assert_close(a, b, f"{what}[{i}]", rtol, atol)
        return
    if not isinstance(ref, torch.Tensor):
        if isinstance(ours, tn.Tensor) and ours.dim() == 0:
            ours = ours.item()
        assert ours == ref or (ours != ours and ref != ref), f"{what}: {ours!r} != {ref!r}"
        return
    if ref.is_sparse:        # a sparse COO result: its coalesced indices and values
        assert isinstance(ours, tn.sparse.SparseTensor), f"{what}: got {type(ours).__name__}, want a sparse tensor"
        assert tuple(ours.shape) == tuple(ref.shape), f"{what}: shape {tuple(ours.shape)} != {tuple(ref.shape)}"
        assert ours.sparse_dim() == ref.sparse_dim(), f"{what}: sparse_dim {ours.sparse_dim()} != {ref.sparse_dim()}"
        ours, ref = ours.coalesce(), ref.coalesce()
        assert_close(ours.indices(), ref.indices(), what + " indices", rtol, atol)
        assert_close(ours.values(), ref.values(), what + " values", rtol, atol)
        return
    assert isinstance(ours, tn.Tensor), f"{what}: got {type(ours).__name__}, want a tensor"
    assert tuple(ours.shape) == tuple(ref.shape), f"{what}: shape {tuple(ours.shape)} != {tuple(ref.shape)}"
    assert ours.dtype.name == str(ref.dtype).split(".")[1], f"{what}: dtype {ours.dtype} != {ref.dtype}"
    got = to_torch(ours)
    r, a = default_tol(ref.dtype)
    r, a = rtol if rtol is not None else r, atol if atol is not None else a
    inexact = ref.dtype.is_floating_point or ref.dtype.is_complex
    if inexact:
        ok = torch.allclose(got, ref, rtol=r, atol=a, equal_nan=True)
    else:
        ok = torch.equal(got, ref)
    if not ok:
        if got.numel() > 16:
            bad = ~torch.isclose(got, ref, rtol=r, atol=a, equal_nan=True) if inexact else got != ref
            idx = bad.nonzero()[:4].tolist()
            raise AssertionError(f"{what}: {int(bad.sum())} of {got.numel()} differ, e.g. at {idx}: "
                                 f"ours {[got[tuple(i)].item() for i in idx]} torch {[ref[tuple(i)].item() for i in idx]}")
        raise AssertionError(f"{what}:\nours  {got}\ntorch {ref}")


# --------------------------------------------------------------------------- op.op, rebound
def resolve(mod, name):
    obj = mod
    for part in name.split("."):
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


def _wrapper_set_seed(op, *args, **kwargs):
    """the database's wrapper_set_seed (torch.manual_seed(42) before a random op), for ours"""
    tn.manual_seed(42)
    return op(*args, **kwargs)


def ours_callable(op):
    """Our counterpart of op.op, or None where the package lacks it. The lambdas and helper
    functions of PyTorch's test database are rebound to this package (their `torch.` becomes
    `tn.`); torch's own functions are looked up by the op's name, in tn (tn.nn.functional
    for 'nn.functional.x') and then as a Tensor method."""
    obj = resolve(tn, op.name)
    function = callable(obj) and not isinstance(obj, type(tn.float32))
    method = op.name.split(".")[-1]
    # (a lambda over x.uniform_ is named 'uniform')
    method = method if "." not in op.name and hasattr(tn.Tensor, method) else \
        method + "_" if "." not in op.name and hasattr(tn.Tensor, method + "_") else None
    if not function and not method:
        return None
    f = op.op
    if isinstance(f, types.FunctionType) and (f.__module__ or "").startswith("torch.testing"):
        glb = {**f.__globals__, "torch": tn, "wrapper_set_seed": _wrapper_set_seed}
        return types.FunctionType(f.__code__, glb, f.__name__, f.__defaults__, f.__closure__)
    if function:
        return obj
    if method == op.name and getattr(torch.Tensor, method, None) is f:   # torch.Tensor.__radd__ itself: unbound
        return getattr(tn.Tensor, method)
    return lambda x, *a, **k: getattr(x, method)(*a, **k)


def _float_outputs(r, ours):
    cls = tn.Tensor if ours else torch.Tensor
    # a sparse result's gradient through its dense form (torch has no sparse sum.dim_IntList)
    if ours and isinstance(r, (tn.sparse.SparseTensor, tn.sparse.SparseCsrTensor)):
        r = r.to_dense()
    elif not ours and isinstance(r, torch.Tensor) and r.layout != torch.strided:
        r = r.to_dense()
    if isinstance(r, cls):
        return [r] if r.dtype.is_floating_point or r.dtype.is_complex else []
    if isinstance(r, (list, tuple)):
        return [t for e in r for t in _float_outputs(e, ours)]
    return []


class SampleFailure(AssertionError):
    """A mismatch in one phase of a sample: 'values' or 'grad'."""

    def __init__(self, phase, msg):
        super().__init__(msg)
        self.phase = phase


def run_sample(op, ours, s, what, noncontig=False, check_grad=False, values=True, tol=None, grad_tol=None,
               compare=None):
    """Runs one SampleInput through op.op and through ours. Where torch raises, ours must raise;
    otherwise the outputs must agree (values=False: shapes and dtypes only, for random ops),
    (or compare(got, ref, sample, what) says so), and with check_grad the gradients of every input that requires grad, for a random
    weighting of the floating outputs. Raises SampleFailure (phase 'values' or 'grad')."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = op.op(s.input, *s.args, **s.kwargs)
    except Exception as e:   # noqa: BLE001 - PyTorch raises: so must we
        try:
            ours(to_tn(s.input, noncontig), *to_tn(s.args), **to_tn(s.kwargs))
        except Exception:   # noqa: BLE001
            return "raises"
        raise SampleFailure("values", f"{what}: torch raises {type(e).__name__} ({str(e)[:120]}), ours does not")
    grads = []
    try:
        got = ours(to_tn(s.input, noncontig, grads), *to_tn(s.args, noncontig, grads), **to_tn(s.kwargs, noncontig, grads))
        refd = ref.detach() if isinstance(ref, torch.Tensor) else ref
        if compare is not None:
            compare(got, refd, s, what)
        elif values:
            assert_close(got, refd, what, *(tol or (None, None)))
        else:
            assert_close(_shape_dtype(got), _shape_dtype(refd), what + " (shape, dtype)")
    except SampleFailure:
        raise
    except Exception as e:   # noqa: BLE001
        raise SampleFailure("values", f"{what}: {type(e).__name__}: {str(e)[:400]}") from None
    if not check_grad or not grads or not values:
        return "ok"
    outs = [o for o in _float_outputs(ref, False) if o.requires_grad]
    if not outs:
        return "ok"
    try:
        _compare_grads(outs, _float_outputs(got, True), grads, what, grad_tol)
    except Exception as e:   # noqa: BLE001
        raise SampleFailure("grad", f"{what} grad: {type(e).__name__}: {str(e)[:400]}") from None
    return "ok"


def _shape_dtype(x):
    if isinstance(x, (tn.Tensor, torch.Tensor)):
        return (tuple(x.shape), str(x.dtype))
    if isinstance(x, (list, tuple)):
        return tuple(_shape_dtype(e) for e in x)
    return x


def _real_part(t):
    return t.real if t.is_complex() else t


def _compare_grads(outs, our_outs, grads, what, tol):
    g = torch.Generator().manual_seed(len(what))
    weights = [torch.randn(o.shape, dtype=o.dtype, generator=g) for o in outs]
    inputs = [t for t, _, _ in grads]
    # a complex output contributes Re(o * w): the loss stays real (PyTorch's convention)
    loss = sum(_real_part((o * w).sum()) for o, w in zip(outs, weights))
    want = torch.autograd.grad(loss, inputs, allow_unused=True)
    our_outs = [o for o in our_outs if o.requires_grad]
    assert len(our_outs) == len(outs), f"{len(our_outs)} outputs require grad, torch's {len(outs)}"
    our_loss = None
    for o, w in zip(our_outs, weights):
        term = _real_part((o * to_tn(w)).sum())
        our_loss = term if our_loss is None else our_loss + term
    leaves = [leaf for _, leaf, _ in grads]
    got = tn.autograd.grad(our_loss, leaves, allow_unused=True)
    for k, ((t, leaf, strided), w, lg) in enumerate(zip(grads, want, got)):
        if w is None:
            assert lg is None or not to_torch(lg).any(), f"input {k}: a gradient where torch has none"
            continue
        assert lg is not None, f"input {k}: no gradient, torch has one"
        if strided:
            lg = lg.select(-1, 0)
        r, a = tol or ((1e-6, 1e-6) if w.dtype in (torch.float64, torch.complex128) else default_tol(w.dtype))
        assert_close(lg, w, f"input {k}", rtol=r, atol=a)


# --------------------------------------------------------------------------- modules
def ours_value(x, requires_grad=None):
    """tn values for torch values (tensors copied, containers recursed); floating tensors
    require grad where x does (or as requires_grad says)."""
    if isinstance(x, torch.Tensor):
        t = _tn_copy(x.detach())
        if (x.requires_grad if requires_grad is None else requires_grad) and x.is_floating_point():
            t.requires_grad_()
        return t
    if isinstance(x, (list, tuple)):
        return type(x)(ours_value(v, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: ours_value(v, requires_grad) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return tn_dtype(x)
    if callable(x) and not isinstance(x, type):
        return ours_function(x)
    return x


def npy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x.detach().numpy())


def close(a, b, rtol=1e-7, atol=1e-9, what=""):
    a, b = npy(a), npy(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if a.dtype.kind in "biu":
        assert (a == b).all(), f"{what}: {a} != {b}"
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def compare_module(tm, om, targs, tkwargs=None, rtol=1e-6, atol=1e-8, what="", train=True, check_repr=True):
    """Copy tm's state into om, run both on the same inputs and compare the outputs, the
    running state, the input gradients and the parameter gradients (and the reprs)."""
    tkwargs = tkwargs or {}
    what = what or type(tm).__name__
    tm.double()
    om.load_state_dict({k: ours_value(v, False) for k, v in tm.state_dict().items()})
    om.double()
    tm.train(train)
    om.train(train)
    oargs, okwargs = ours_value(targs), ours_value(tkwargs)
    tout = tm(*targs, **tkwargs)
    oout = om(*oargs, **okwargs)
    touts, oouts = tensors_of(tout), tensors_of(oout)
    assert len(touts) == len(oouts), f"{what}: {len(oouts)} outputs, torch's {len(touts)}"
    for i, (a, b) in enumerate(zip(touts, oouts)):
        close(b, a, rtol, atol, f"{what} output {i}")
    for (k, a), (k2, b) in zip(tm.state_dict().items(), om.state_dict().items()):   # running stats
        assert k == k2, f"{what}: state {k2}, torch's {k}"
        close(b, a, rtol, atol, f"{what} state {k}")
    tdiff = [(i, t) for i, t in enumerate(touts) if t.requires_grad]
    if tdiff:
        gen = torch.Generator().manual_seed(2)
        ws = [torch.rand(t.shape, generator=gen, dtype=t.dtype) for _, t in tdiff]
        sum((t * w).sum() for (_, t), w in zip(tdiff, ws)).backward()
        ol = None
        for (i, _), w in zip(tdiff, ws):
            term = (oouts[i] * ours_value(w)).sum()
            ol = term if ol is None else ol + term
        ol.backward()
        tin = [t for t in tensors_of((targs, tkwargs)) if t.requires_grad]
        oin = [t for t in tensors_of((oargs, okwargs)) if t.requires_grad]
        for j, (a, b) in enumerate(zip(tin, oin)):
            if a.grad is not None:
                assert b.grad is not None, f"{what}: no gradient for input {j}"
                close(b.grad, a.grad, rtol, atol, f"{what} input grad {j}")
        for (n, a), (n2, b) in zip(tm.named_parameters(), om.named_parameters()):
            assert n == n2, f"{what}: parameter {n2}, torch's {n}"
            if a.grad is not None:
                assert b.grad is not None, f"{what}: no gradient for {n}"
                close(b.grad, a.grad, rtol, atol, f"{what} grad of {n}")
    if check_repr:
        assert repr(om) == repr(tm), f"{repr(om)} != {repr(tm)}"


def _fresh(x):
    """x with every tensor a new leaf (requiring grad as before)"""
    if isinstance(x, torch.Tensor):
        return x.detach().requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_fresh(e) for e in x)
    if isinstance(x, dict):
        return {k: _fresh(v) for k, v in x.items()}
    return x


def run_module_info(info, max_inputs=None):
    """Every (or the first max_inputs) ModuleInput of a ModuleInfo in float64, in training and
    eval mode, through torch's module and ours with the same state. Returns the number run."""
    name = info.module_cls.__name__
    ran = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = list(info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True, training=True))
    for mi in inputs[:max_inputs]:
        if mi.forward_input is None:
            continue
        cargs, ckwargs = mi.constructor_input.args, mi.constructor_input.kwargs
        fargs, fkwargs = mi.forward_input.args, mi.forward_input.kwargs
        # fresh leaves (for each mode too): the database hands the same tensors to several ModuleInputs
        fargs, fkwargs = _fresh(fargs), _fresh(fkwargs)
        if name.startswith("Lazy"):
            ckwargs = dict(ckwargs, dtype=torch.float64)
        torch.manual_seed(0)
        tm = info.module_cls(*cargs, **ckwargs)
        om = getattr(tn.nn, name)(*ours_value(cargs), **ours_value(ckwargs))
        if name.startswith("Lazy"):
            with torch.no_grad():
                tm(*fargs, **fkwargs)       # materialise both; then compare as the eager modules
            om(*ours_value(fargs, False), **ours_value(fkwargs, False))
            assert type(om).__name__ == type(tm).__name__
        for train in (True, False):
            compare_module(tm, om, fargs, fkwargs, what=f"{name}{cargs}{ckwargs}", train=train)
            for p in list(tm.parameters()):
                p.grad = None
            for p in list(om.parameters()):
                p.grad = None
            fargs, fkwargs = _fresh(fargs), _fresh(fkwargs)
        ran += 1
    return ran


needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
