"""tensor.nn's 3-d layers, padding modes, interpolation modes, grid_sample/affine_grid,
EmbeddingBag, the remaining activations, pooling, normalisation and loss layers, CTC loss,
Lazy modules, weight_norm/spectral_norm and WeightedRandomSampler.

PyTorch 1.13 is the oracle (the tests skip without it): the functional forms run
PyTorch's OpInfo samples (common_methods_invocations.op_db), the modules PyTorch's
ModuleInfo samples (common_modules.module_db, in test_opinfo.py) and hand-written cases
here; outputs, input gradients and parameter gradients must match, in float64.

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


# --------------------------------------------------------------------------- conversion helpers (shared)
from opinfo_util import close, compare_module, npy, ours_value as ours, tensors_of as flat_tensors  # noqa: E402


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
        if any(callable(v) and _our_callable(v) is None for v in s.kwargs.values()):
            continue              # a Python lambda over torch ops
        args = (s.input, *s.args)
        what = f"{op.name} {op.variant_test_name} {[tuple(t.shape) for t in flat_tensors(args)]} {s.kwargs}"
        compare_call(op.op, _ourfn(name), args, s.kwargs, rtol=1e-6, atol=1e-8, what=what)
        passed += 1
    _OPINFO_COUNTS[op.name + op.variant_test_name] = passed
    assert passed > 0, f"{op.name}: no sample ran"


# --------------------------------------------------------------------------- modules
# (PyTorch's ModuleInfo samples of every module run in test_opinfo.py's test_module)


def _r(*shape, grad=True, seed=None, low=None):
    g = torch.Generator().manual_seed(seed if seed is not None else sum(shape) * 7 + len(shape))
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    if low is not None:
        t = t.abs() + low
    return t.requires_grad_(grad)


def _nc(*shape):
    """A non-contiguous float64 input (a transposed view) of the given shape."""
    t = _r(*reversed(shape), grad=False).permute(*reversed(range(len(shape)))).contiguous()
    t = _r(*shape[:-1], shape[-1] * 2, grad=False)[..., ::2]
    return t.requires_grad_()


def _ilong(high, *shape, seed=3):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


# (name, constructor arguments, constructor keyword arguments, forward inputs made by a function)
MODULE_CASES = [
    ("Conv3d", (2, 4, 3), dict(stride=2, padding=1, bias=False), lambda: (_nc(2, 2, 5, 6, 5),)),
    ("Conv3d", (4, 4, (1, 2, 3)), dict(groups=2, dilation=(1, 2, 1), padding="same"), lambda: (_r(1, 4, 4, 5, 6),)),
    ("Conv3d", (2, 3, 2), dict(padding=1, padding_mode="circular"), lambda: (_r(2, 2, 3, 4, 3),)),
    ("Conv2d", (2, 3, 3), dict(padding=(1, 2), padding_mode="reflect"), lambda: (_r(2, 2, 5, 6),)),
    ("Conv1d", (2, 3, 3), dict(padding=2, padding_mode="replicate"), lambda: (_r(2, 2, 5),)),
    ("Conv2d", (2, 3, 3), dict(padding="same", padding_mode="reflect"), lambda: (_r(2, 2, 5, 6),)),
    ("ConvTranspose3d", (2, 4, 3), dict(stride=2, padding=1, output_padding=1, groups=2), lambda: (_r(2, 2, 3, 2, 3),)),
    ("ConvTranspose3d", (3, 2, (2, 1, 3)), dict(dilation=2), lambda: (_r(3, 3, 2, 3),)),
    ("MaxPool3d", (2,), dict(stride=1, padding=1, ceil_mode=True), lambda: (_nc(2, 3, 4, 5, 4),)),
    ("MaxPool3d", ((2, 3, 2),), dict(dilation=(1, 1, 2), return_indices=True), lambda: (_r(3, 5, 6, 6),)),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, count_include_pad=False), lambda: (_r(2, 2, 5, 5, 6),)),
    ("AvgPool3d", ((2, 2, 3),), dict(ceil_mode=True, divisor_override=3), lambda: (_r(2, 5, 5, 7),)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, lambda: (_r(2, 3, 5, 4, 7),)),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True), lambda: (_r(2, 3, 5, 4, 7),)),
    ("BatchNorm3d", (3,), dict(momentum=None), lambda: (_r(2, 3, 2, 3, 4),)),
    ("BatchNorm3d", (3,), dict(affine=False, track_running_stats=False), lambda: (_r(2, 3, 2, 3, 4),)),
    ("InstanceNorm3d", (3,), dict(affine=True), lambda: (_r(2, 3, 2, 3, 4),)),
    ("InstanceNorm3d", (3,), {}, lambda: (_r(3, 2, 3, 4),)),
    ("PReLU", (), {}, lambda: (_nc(3, 4),)),
    ("PReLU", (3,), dict(init=0.1), lambda: (_r(2, 3, 4, 5),)),
    ("Hardshrink", (), {}, lambda: (_r(4, 5),)),
    ("Softshrink", (0.3,), {}, lambda: (_r(4, 5),)),
    ("Tanhshrink", (), {}, lambda: (_r(4, 5),)),
    ("Softsign", (), {}, lambda: (_r(4, 5),)),
    ("LogSigmoid", (), {}, lambda: (_r(4, 5),)),
    ("Threshold", (0.1, -2.0), {}, lambda: (_r(4, 5),)),
    ("GLU", (), {}, lambda: (_r(3, 4, 6),)),
    ("GLU", (1,), {}, lambda: (_r(3, 4, 6),)),
    ("Softmin", (1,), {}, lambda: (_r(3, 4, 6),)),
    ("Softmax2d", (), {}, lambda: (_r(2, 3, 4, 5),)),
    ("Softmax2d", (), {}, lambda: (_r(3, 4, 5),)),
    ("ChannelShuffle", (2,), {}, lambda: (_r(2, 4, 3, 3),)),
    ("PixelShuffle", (2,), {}, lambda: (_r(2, 8, 3, 3),)),
    ("PixelUnshuffle", (2,), {}, lambda: (_r(2, 2, 4, 6),)),
    ("LocalResponseNorm", (3,), dict(alpha=0.1, beta=0.5, k=2.0), lambda: (_r(2, 5, 3, 4),)),
    ("LocalResponseNorm", (2,), {}, lambda: (_r(2, 5, 3, 4, 2),)),
    ("CrossMapLRN2d", (3,), dict(alpha=0.1, beta=0.5, k=2.0), lambda: (_r(2, 5, 3, 4),)),
    ("LPPool1d", (2, 3), dict(stride=2), lambda: (_r(2, 3, 8, low=0.1),)),
    ("LPPool2d", (3, (2, 3)), dict(ceil_mode=False), lambda: (_r(2, 3, 6, 7, low=0.1),)),
    ("Dropout3d", (0.5,), {}, lambda: (_r(2, 3, 2, 3, 4),)),  # eval only (random in training)
    ("RReLU", (0.1, 0.3), {}, lambda: (_r(4, 5),)),            # eval only
    ("EmbeddingBag", (10, 3), dict(mode="sum"), lambda: (_ilong(10, 4, 3),)),
    ("EmbeddingBag", (10, 3), dict(mode="max", padding_idx=2), lambda: (_ilong(10, 8), torch.tensor([0, 3, 3, 5]))),
    ("EmbeddingBag", (10, 3), dict(mode="mean", include_last_offset=True),
     lambda: (_ilong(10, 8), torch.tensor([0, 2, 2, 8]))),
    ("EmbeddingBag", (10, 3), dict(mode="sum"),
     lambda: (_ilong(10, 6), torch.tensor([0, 2]), None)),
    ("ReflectionPad1d", (2,), {}, lambda: (_r(2, 3, 4),)),
    ("ReflectionPad2d", ((1, 0, 2, 1),), {}, lambda: (_nc(2, 3, 4, 5),)),
    ("ReflectionPad3d", (1,), {}, lambda: (_r(1, 2, 3, 4, 2),)),
    ("ReplicationPad1d", ((3, 1),), {}, lambda: (_r(3, 4),)),
    ("ReplicationPad2d", (2,), {}, lambda: (_r(2, 3, 4, 5),)),
    ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),), {}, lambda: (_r(1, 2, 3, 4, 2),)),
    ("ConstantPad1d", (2, 3.5), {}, lambda: (_r(2, 3, 4),)),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.0), {}, lambda: (_r(3, 4, 5),)),
    ("ConstantPad3d", (1, 0.5), {}, lambda: (_r(1, 2, 3, 4, 2),)),
    ("ZeroPad2d", ((1, 2, 0, 1),), {}, lambda: (_r(2, 3, 4, 5),)),
    ("MaxUnpool1d", (2,), {}, None),
    ("MaxUnpool2d", (2,), dict(stride=2), None),
    ("MaxUnpool3d", (2,), {}, None),
    ("FractionalMaxPool2d", (2,), dict(output_size=(3, 4)), None),
    ("FractionalMaxPool2d", (3,), dict(output_ratio=0.5, return_indices=True), None),
    ("FractionalMaxPool3d", (2,), dict(output_size=3), None),
    ("TripletMarginLoss", (), dict(margin=0.5, p=1.0, swap=True), lambda: (_r(4, 5), _r(4, 5, seed=1), _r(4, 5, seed=2))),
    ("TripletMarginLoss", (), dict(reduction="none"), lambda: (_r(4, 5), _r(4, 5, seed=1), _r(4, 5, seed=2))),
    ("TripletMarginWithDistanceLoss", (), dict(swap=True, margin=2.0),
     lambda: (_r(4, 5), _r(4, 5, seed=1), _r(4, 5, seed=2))),
    ("GaussianNLLLoss", (), dict(full=True, reduction="sum"),
     lambda: (_r(4, 5), _r(4, 5, seed=1), _r(4, 1, seed=2, low=0.1))),
    ("PoissonNLLLoss", (), dict(log_input=False, full=True), lambda: (_r(4, 5, low=0.1), _r(4, 5, seed=1, low=0.5))),
    ("PoissonNLLLoss", (), dict(reduction="none"), lambda: (_r(4, 5), _r(4, 5, seed=1, low=0.0))),
    ("HingeEmbeddingLoss", (), dict(margin=0.5), lambda: (_r(4, 5), torch.randint(0, 2, (4, 5)).double() * 2 - 1)),
    ("MultiMarginLoss", (), dict(p=2, margin=0.7), lambda: (_r(4, 5), _ilong(5, 4))),
    ("MultiMarginLoss", (), dict(weight=torch.rand(5, dtype=torch.float64), reduction="sum"),
     lambda: (_r(4, 5), _ilong(5, 4))),
    ("MultiLabelMarginLoss", (), {}, lambda: (_r(3, 4), torch.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 2, 1, 0]]))),
    ("MultiLabelSoftMarginLoss", (), dict(weight=torch.rand(5, dtype=torch.float64)),
     lambda: (_r(4, 5), torch.randint(0, 2, (4, 5)).double())),
    ("SoftMarginLoss", (), dict(reduction="none"), lambda: (_r(4, 5), torch.randint(0, 2, (4, 5)).double() * 2 - 1)),
    ("CTCLoss", (), dict(blank=1, zero_infinity=True),
     lambda: (_r(12, 3, 6).log_softmax(2).detach().requires_grad_(), torch.tensor([[2, 3, 3, 4], [5, 0, 2, 2], [4, 4, 4, 4]]),
              torch.tensor([12, 9, 3]), torch.tensor([4, 2, 3]))),
]


def _pool_inputs(name, tm):
    """(input, indices) of the MaxPool with tm's geometry for MaxUnpool; a fixed
    _random_samples for FractionalMaxPool (its randomness is compared elsewhere)."""
    if name.startswith("MaxUnpool"):
        n = int(name[-2])
        x = _r(2, 3, *[6, 4, 6][:n])
        y, idx = getattr(TF, f"max_pool{n}d")(x, tm.kernel_size, tm.stride, tm.padding, return_indices=True)
        return (y.detach().requires_grad_(), idx)
    n = int(name[-2])
    x = _r(2, 3, *[9, 10, 9][:n])
    return (x,)


@pytest.mark.parametrize("case", MODULE_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[2]}"[:60])
def test_module_cases(case):
    name, cargs, ckwargs, make = case
    tcls, ocls = getattr(torch.nn, name), getattr(nn, name)
    if name == "ChannelShuffle":     # torch 1.13's has no derivative: the same permutation by views
        class tcls(torch.nn.ChannelShuffle):
            def forward(self, x):
                n, c = x.shape[:2]
                return x.reshape(n, self.groups, c // self.groups, *x.shape[2:]).transpose(1, 2).reshape(x.shape)
        tcls.__name__ = "ChannelShuffle"
    if name.startswith("FractionalMaxPool"):
        n = int(name[-2])
        samples = torch.rand(2, 3, n, dtype=torch.float64)
        ckwargs = dict(ckwargs, _random_samples=samples)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = tcls(*cargs, **ckwargs)
    om = ocls(*ours(cargs, False), **ours(ckwargs, False))
    inputs = make() if make else _pool_inputs(name, tm)
    random = name in ("Dropout3d", "RReLU")
    for train in ((False,) if random else (True, False)):
        inputs = tuple(t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t for t in inputs)
        compare_module(tm, om, inputs, train=train, what=f"{name}{cargs}{ckwargs} train={train}")
        for p in list(tm.parameters()) + list(om.parameters()):
            p.grad = None


# --------------------------------------------------------------------------- Lazy modules
@pytest.mark.parametrize("lazy,eager,cargs,shape", [
    ("LazyLinear", "Linear", (3,), (2, 5)),
    ("LazyConv2d", "Conv2d", (4, 3), (2, 3, 6, 6)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (4, 3), (2, 3, 6)),
    ("LazyBatchNorm2d", "BatchNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", "InstanceNorm3d", (), (2, 3, 2, 2, 2)),
])
def test_lazy_modules(lazy, eager, cargs, shape):
    x = tn.randn(*shape)
    m = getattr(nn, lazy)(*cargs)
    assert m.has_uninitialized_params()
    tn.manual_seed(5)
    y = m(x)
    assert type(m) is getattr(nn, eager)
    in_size = shape[-1] if eager == "Linear" else shape[1]
    tn.manual_seed(5)
    e = getattr(nn, eager)(in_size, *cargs, **({"affine": True, "track_running_stats": True} if "Instance" in lazy else {}))
    assert repr(m) == repr(e)
    assert list(m.state_dict()) == list(e.state_dict())
    for (k, a), (k2, b) in zip(m.named_parameters(), e.named_parameters()):
        close(a, b, 0, 0, k)                 # the eager class's draws from the same seed
    close(y, e(x), 1e-6, 1e-6, lazy)
    # torch agrees on the inferred sizes
    tm = getattr(torch.nn, lazy)(*cargs)
    tm(torch.randn(*shape))
    assert [tuple(p.shape) for p in tm.parameters()] == [tuple(p.shape) for p in m.parameters()]


# --------------------------------------------------------------------------- weight_norm, spectral_norm
@pytest.mark.parametrize("make,dim", [
    (lambda ns: ns.Linear(3, 4), 0), (lambda ns: ns.Linear(3, 4), None), (lambda ns: ns.Conv2d(2, 3, 2), 1),
    (lambda ns: ns.ConvTranspose2d(2, 3, 2), 0)])
def test_weight_norm(make, dim):
    tm = torch.nn.utils.weight_norm(make(torch.nn), dim=dim)
    om = nn.utils.weight_norm(make(nn), dim=dim)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in om.named_parameters()]
    x = _r(2, 3) if isinstance(tm, torch.nn.Linear) else _r(2, 2, 4, 4)
    compare_module(tm, om, (x,), what=f"weight_norm dim={dim}")
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(om, dim=dim)
    torch.nn.utils.remove_weight_norm(tm)
    nn.utils.remove_weight_norm(om)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in om.named_parameters()]
    close(om.weight, tm.weight, 1e-12, 1e-12, "weight after remove_weight_norm")
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(om)


@pytest.mark.parametrize("make,iters", [
    (lambda ns: ns.Linear(5, 4), 1), (lambda ns: ns.Conv2d(2, 3, 2), 3), (lambda ns: ns.ConvTranspose2d(2, 3, 2), 2)])
def test_spectral_norm(make, iters):
    tm = torch.nn.utils.spectral_norm(make(torch.nn), n_power_iterations=iters)
    om = nn.utils.spectral_norm(make(nn), n_power_iterations=iters)
    assert list(tm.state_dict()) == list(om.state_dict())
    x = _r(2, 5) if isinstance(tm, torch.nn.Linear) else _r(2, 2, 4, 4)
    # training: each forward runs the power iteration and updates u and v (compared with the state)
    compare_module(tm, om, (x,), what="spectral_norm train")
    for _ in range(2):
        close(om(ours(x)), tm(x), 1e-6, 1e-8, "spectral_norm again")
    for (k, a), (_, b) in zip(tm.state_dict().items(), om.state_dict().items()):
        close(b, a, 1e-6, 1e-8, k)
    tm.eval()
    om.eval()
    close(om(ours(x)), tm(x), 1e-6, 1e-8, "spectral_norm eval")
    torch.nn.utils.remove_spectral_norm(tm)
    nn.utils.remove_spectral_norm(om)
    assert list(tm.state_dict()) == list(om.state_dict())
    close(om.weight, tm.weight, 1e-6, 1e-8, "weight after remove_spectral_norm")


# --------------------------------------------------------------------------- WeightedRandomSampler
def test_weighted_random_sampler():
    from tensor.utils.data import WeightedRandomSampler, DataLoader, TensorDataset
    w = [0.1, 0.0, 0.6, 0.3]
    tn.manual_seed(0)
    draws = list(WeightedRandomSampler(w, 20000))
    counts = [draws.count(i) for i in range(4)]
    assert counts[1] == 0
    for c, p in zip(counts, w):                    # within 5 standard deviations
        assert abs(c - 20000 * p) <= 5 * math.sqrt(20000 * p * (1 - p)) + 1, counts
    s = WeightedRandomSampler(tn.tensor(w), 3, replacement=False)
    for _ in range(20):
        d = list(s)
        assert len(d) == 3 and len(set(d)) == 3 and 1 not in d
    assert len(s) == 3
    g = tn.Generator().manual_seed(3)
    a = list(WeightedRandomSampler(w, 7, generator=g))
    g.manual_seed(3)
    assert a == list(WeightedRandomSampler(w, 7, generator=g))
    ds = TensorDataset(tn.arange(4))
    batches = [b[0].tolist() for b in DataLoader(ds, batch_size=2, sampler=WeightedRandomSampler(w, 6))]
    assert len(batches) == 3 and all(1 not in b for b in batches)
    for bad, err in [(dict(weights=w, num_samples=0), "num_samples should be a positive integer value, but got num_samples=0"),
                     (dict(weights=w, num_samples=True), "num_samples should be a positive integer value"),
                     (dict(weights=w, num_samples=2, replacement=1), "replacement should be a boolean value, but got replacement=1"),
                     (dict(weights=[[1.0, 2.0]], num_samples=2), r"weights should be a 1d sequence but given weights have shape \(1, 2\)")]:
        with pytest.raises(ValueError, match=err):
            WeightedRandomSampler(**bad)
        with pytest.raises(ValueError, match=err):
            torch.utils.data.WeightedRandomSampler(**bad)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        list(WeightedRandomSampler(w, 5, replacement=False))
    # torch.multinomial of the weights: torch's indices for the same seed (a zero weight last)
    for n, rep in [(4, False), (2, False), (50, True)]:
        tn.manual_seed(7)
        torch.manual_seed(7)
        assert list(WeightedRandomSampler(w, n, rep)) == list(torch.utils.data.WeightedRandomSampler(w, n, rep))
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        list(WeightedRandomSampler([1.0, -1.0], 2))


# --------------------------------------------------------------------------- parametrize
def _symmetric(ns):
    class Symmetric(ns.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def test_parametrize_custom():
    P, tP = nn.utils.parametrize, torch.nn.utils.parametrize
    tm, om = torch.nn.Linear(3, 3), nn.Linear(3, 3)
    tP.register_parametrization(tm, "weight", _symmetric(torch.nn))
    P.register_parametrization(om, "weight", _symmetric(nn))
    assert type(om).__name__ == "ParametrizedLinear" and P.is_parametrized(om) and P.is_parametrized(om, "weight")
    assert not P.is_parametrized(om, "bias")
    assert P.type_before_parametrizations(om) is nn.Linear
    assert list(om.state_dict()) == list(tm.state_dict()) == ["bias", "parametrizations.weight.original"]
    compare_module(tm, om, (_r(2, 3),), what="parametrized Linear")
    w = npy(om.weight)
    assert (w == w.T).all()
    # assignment goes through right_inverse
    a = _r(3, 3, grad=False)
    with torch.no_grad():
        tm.weight = a
    om.weight = ours(a)
    close(om.parametrizations.weight.original, tm.parametrizations.weight.original, 0, 0, "right_inverse")
    with P.cached():
        assert om.weight is om.weight
    assert om.weight is not om.weight
    # a second parametrization chains after the first
    class Double(nn.Module):
        def forward(self, X):
            return 2 * X
    P.register_parametrization(om, "weight", Double())
    close(om.weight, 2 * (tm.weight.detach()), 1e-12, 1e-12, "chained")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name"):
        P.register_parametrization(om, "nope", Double())

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:2]
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(nn.Linear(3, 3), "weight", Shrink())
    P.remove_parametrizations(om, "weight")
    assert type(om) is nn.Linear and list(om.state_dict()) == ["bias", "weight"]   # re-registered last, as torch
    close(om.weight, 2 * tm.weight.detach(), 1e-12, 1e-12, "left parametrized")
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(om, "weight")
    tm2, om2 = torch.nn.Linear(3, 3), nn.Linear(3, 3)
    om2.load_state_dict({k: ours(v, False) for k, v in tm2.state_dict().items()})
    P.register_parametrization(om2, "weight", _symmetric(nn))
    P.remove_parametrizations(om2, "weight", leave_parametrized=False)
    close(om2.weight, tm2.weight.detach().triu(), 0, 0, "original kept (right_inverse applied)")


def test_parametrizations_spectral_and_weight_norm():
    torch.manual_seed(0)
    tm = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Conv2d(2, 3, 2))
    om = nn.utils.parametrizations.spectral_norm(nn.Conv2d(2, 3, 2))
    assert list(om.state_dict()) == list(tm.state_dict())
    x = _r(2, 2, 4, 4)
    compare_module(tm, om, (x,), what="parametrizations.spectral_norm")
    for (k, a), (_, b) in zip(tm.state_dict().items(), om.state_dict().items()):
        close(b, a, 1e-6, 1e-8, k)
    tm.eval()
    om.eval()
    close(om(ours(x)), tm(x), 1e-6, 1e-8, "eval")
    # weight_norm (torch 2.x's parametrization; 1.13 has only the hook form, whose values it shares)
    th = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4)).double()
    om = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4))
    assert list(om.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    om.load_state_dict({"bias": ours(th.bias, False), "parametrizations.weight.original0": ours(th.weight_g, False),
                        "parametrizations.weight.original1": ours(th.weight_v, False)})
    om.double()
    x = _r(2, 3)
    close(om(ours(x)), th(x), 1e-12, 1e-12, "weight_norm parametrization")
    nn.utils.parametrize.remove_parametrizations(om, "weight")
    close(om.weight, th.weight, 1e-12, 1e-12, "weight after removal")
