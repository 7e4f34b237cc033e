"""tensor.nn's 3-d layers, padding modes, interpolation modes, grid_sample/affine_grid,
EmbeddingBag, the remaining activations, pooling, normalisation and loss layers, CTC loss,
Lazy modules, weight_norm/spectral_norm and WeightedRandomSampler.

PyTorch 1.13 is the oracle (the tests skip without it): the functional forms run
PyTorch's OpInfo samples (common_methods_invocations.op_db), the modules PyTorch's
ModuleInfo samples (common_modules.module_db) where it has them and hand-written cases
otherwise; outputs, input gradients and parameter gradients must match, in float64.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_nn_more.py
"""
import math
import os
import sys
import warnings

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

nn = tn.nn
F = tn.nn.functional
torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
TF = torch.nn.functional


# --------------------------------------------------------------------------- conversion helpers
def ours(x, requires_grad=None):
    """tn values (tensors converted, containers recursed) for torch values."""
    if isinstance(x, torch.Tensor):
        a = x.detach().cpu().numpy().copy()
        t = tn.tensor(a)
        if a.ndim == 0:           # tn.tensor(0-d ndarray) gives shape [1] (not ours to fix here)
            t = t.reshape(())
        if (x.requires_grad if requires_grad is None else requires_grad) and x.is_floating_point():
            t.requires_grad_()
        return t
    if isinstance(x, (list, tuple)):
        return type(x)(ours(v, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: ours(v, requires_grad) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(tn, str(x).split(".")[1])
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


def flat_tensors(x):
    if isinstance(x, (torch.Tensor, tn.Tensor)):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in flat_tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in flat_tensors(v)]
    return []


def compare_call(tfn, ofn, targs, tkwargs, rtol=1e-7, atol=1e-9, what="", grad=True):
    """Run tfn (torch) and ofn (ours) on the same values; compare the outputs and the
    gradients of sum(out * w) with respect to every floating input that requires grad."""
    oargs, okwargs = ours(targs), ours(tkwargs)
    tout = tfn(*targs, **tkwargs)
    oout = ofn(*oargs, **okwargs)
    touts, oouts = flat_tensors(tout), flat_tensors(oout)
    assert len(touts) == len(oouts), f"{what}: {len(touts)} outputs, ours {len(oouts)}"
    for i, (a, b) in enumerate(zip(touts, oouts)):
        close(b, a, rtol, atol, f"{what} output {i}")
    if not grad:
        return
    tin = [t for t in flat_tensors((targs, tkwargs)) if t.requires_grad]
    oin = [t for t in flat_tensors((oargs, okwargs)) if t.requires_grad]
    tdiff = [(i, t) for i, t in enumerate(touts) if t.requires_grad and t.is_floating_point()]
    if not tin or not tdiff:
        return
    gen = torch.Generator().manual_seed(1)
    ws = [torch.rand(t.shape, generator=gen, dtype=t.dtype) for _, t in tdiff]
    tl = sum((t * w).sum() for (_, t), w in zip(tdiff, ws))
    tg = torch.autograd.grad(tl, tin, allow_unused=True)
    ol = None
    for (i, _), w in zip(tdiff, ws):
        term = (oouts[i] * ours(w)).sum()
        ol = term if ol is None else ol + term
    og = tn.autograd.grad(ol, oin, allow_unused=True)
    for j, (a, b) in enumerate(zip(tg, og)):
        if a is None:
            assert b is None or not npy(b).any(), f"{what}: gradient {j} should be None/zero"
            continue
        assert b is not None, f"{what}: gradient {j} missing"
        close(b, a, rtol, atol, f"{what} grad {j}")


# --------------------------------------------------------------------------- OpInfo: the functional forms
OPINFO_OPS = [
    "pad", "interpolate", "grid_sample", "adaptive_avg_pool3d", "adaptive_max_pool3d", "avg_pool3d", "max_pool3d",
    "conv_transpose3d", "ctc_loss", "embedding_bag", "gaussian_nll_loss", "glu", "hardshrink",
    "hinge_embedding_loss", "local_response_norm", "logsigmoid", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "pairwise_distance",
    "poisson_nll_loss", "prelu", "rrelu", "soft_margin_loss", "softmin", "softshrink", "softsign", "tanhshrink",
    "threshold", "triplet_margin_loss", "triplet_margin_with_distance_loss", "upsample_nearest", "upsample_bilinear",
]
_OPINFO_COUNTS = {}


def _op_db():
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def _opinfos():
    try:
        db = _op_db()
    except Exception:  # noqa: BLE001 - the database's imports vary; the tests skip
        return []
    return [op for op in db if op.name.startswith("nn.functional.") and op.name.split(".")[-1] in OPINFO_OPS]


def _our_callable(v):
    """Ours for a torch function or module handed as an argument (distance_function)."""
    if isinstance(v, torch.nn.PairwiseDistance):
        return nn.PairwiseDistance(v.norm, v.eps, v.keepdim)
    return {TF.pairwise_distance: F.pairwise_distance, TF.cosine_similarity: F.cosine_similarity}.get(v)


def _ourfn(name):
    fn = getattr(F, name)

    def call(*args, **kwargs):
        kwargs = {k: (_our_callable(v) if callable(v) else v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    return call


@pytest.mark.parametrize("op", _opinfos(), ids=lambda op: op.name.split(".")[-1] + (
    "_" + op.variant_test_name if op.variant_test_name else ""))
def test_opinfo_samples(op):
    name = op.name.split(".")[-1]
    passed = 0
    for s in op.sample_inputs("cpu", torch.float64, requires_grad=True):
        if name == "rrelu":       # random slopes in training mode: the same samples in eval mode
            s.kwargs["training"] = False
        if name == "grid_sample" and s.kwargs.get("mode") == "bicubic":
            continue              # not implemented (bilinear and nearest are)
        if any(callable(v) and _our_callable(v) is None for v in s.kwargs.values()):
            continue              # a Python lambda over torch ops
        args = (s.input, *s.args)
        what = f"{op.name} {op.variant_test_name} {[tuple(t.shape) for t in flat_tensors(args)]} {s.kwargs}"
        compare_call(op.op, _ourfn(name), args, s.kwargs, rtol=1e-6, atol=1e-8, what=what)
        passed += 1
    _OPINFO_COUNTS[op.name + op.variant_test_name] = passed
    assert passed > 0, f"{op.name}: no sample ran"
