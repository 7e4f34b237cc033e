"""Half precision (float16, bfloat16) and autocast against PyTorch on the CPU: conversions bit
for bit over every bit pattern, elementwise ops, reductions, matmul, layers forward and backward,
type promotion, autocast op dtypes, GradScaler."""
import ctypes
import itertools
import pickle

import pytest

import tensor as tt
import tensor.nn.functional as TF

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
F = torch.nn.functional

HALVES = [("float16", tt.float16, torch.float16), ("bfloat16", tt.bfloat16, torch.bfloat16)]
# torch's own test tolerances for reduced precision (torch.testing defaults)
TOL = {"float16": dict(rtol=1e-3, atol=1e-5), "bfloat16": dict(rtol=1.6e-2, atol=1e-5)}


def from_bits(bits_u16, dt):
    """A half tensor of ours holding the given raw 16-bit patterns."""
    t = tt.empty(len(bits_u16), dtype=dt)
    ctypes.memmove(t.data_ptr(), bits_u16.ctypes.data, 2 * len(bits_u16))
    return t


def bits_of(t):
    t = t.contiguous()
    out = np.empty(t.numel(), dtype=np.uint16)
    ctypes.memmove(out.ctypes.data, t.data_ptr(), 2 * t.numel())
    return out


def ours(x, dt=None):
    """torch tensor -> ours (values through float32/float64 numpy), cast to dt."""
    x = x.detach().to(torch.float64 if x.dtype == torch.float64 else torch.float32)
    r = tt.tensor(x.numpy()) if x.dim() else tt.tensor(x.item(), dtype=tt.float64 if x.dtype == torch.float64 else tt.float32)
    return r if dt is None else r.to(dt)


def theirs(t):
    return torch.tensor(t.detach().float().numpy())


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_half_to_float_all_bit_patterns(name, dt, tdt):
    bits = np.arange(65536, dtype=np.uint16)
    got = ours_f32 = from_bits(bits, dt).float().numpy().view(np.uint32)
    want = torch.from_numpy(bits.view(np.int16).copy()).view(tdt).float().numpy().view(np.uint32)
    assert (got == want).all(), np.nonzero(ours_f32 != want)[0][:10]


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_float_to_half_all_patterns_and_rounding_boundaries(name, dt, tdt):
    bits = np.arange(65536, dtype=np.uint16)
    exact = torch.from_numpy(bits.view(np.int16).copy()).view(tdt).float().numpy().view(np.uint32).astype(np.int64)
    # every half value as float32, one float32 ulp either side, and the midpoints between neighbours
    # (ties to even) with one ulp either side: the rounding boundaries
    mids = (exact[:-1] + exact[1:]) // 2
    cand = np.concatenate([exact, exact - 1, exact + 1, mids, mids - 1, mids + 1,
                           np.random.RandomState(0).randint(0, 2 ** 32, 200000)])
    cand = (cand % 2 ** 32).astype(np.uint32)
    f = cand.view(np.float32)
    want = torch.from_numpy(f.copy()).to(tdt).view(torch.int16).numpy().view(np.uint16)
    got = bits_of(tt.from_numpy(f.copy()).to(dt))
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, [(hex(cand[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]
    # the C scalar functions agree
    lib = tt._C.lib
    conv = lib.tn_float_to_half if dt is tt.float16 else lib.tn_float_to_bfloat16
    for i in range(0, len(f), 997):
        assert conv(float(f[i])) == want[i] or np.isnan(f[i]) and conv(float(f[i])) & 0x7FFF == want[i] & 0x7FFF


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_conversions_other_dtypes(name, dt, tdt):
    x = torch.tensor([0.5, -1.5, 2.5, 1e5, -7.9, 300.2, float("nan"), float("inf"), 65520.0, 1e-8], dtype=torch.float64)
    h = ours(x).double().to(dt)          # float64 -> half goes through float32, as c10
    assert bits_of(h).tolist() == x.to(tdt).view(torch.int16).numpy().view(np.uint16).tolist()
    for odt, todt in [(tt.float64, torch.float64), (tt.int64, torch.int64), (tt.int32, torch.int32), (tt.bool, torch.bool)]:
        fin = x[:6]
        a = ours(fin).to(dt).to(odt)
        b = fin.to(tdt).to(todt)
        assert a.tolist() == b.tolist(), (odt, a.tolist(), b.tolist())
    i = torch.tensor([3, -7, 2049, 100000])
    assert ours(i).to(dt).float().tolist() == i.to(tdt).float().tolist()


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_print_item_tolist_numpy(name, dt, tdt):
    x = torch.randn(3, 4) * 100
    x[0, 0] = 1e-6
    assert str(ours(x, dt)) == str(x.to(tdt))
    assert str(ours(x[0, 1], dt)) == str(x[0, 1].to(tdt))
    assert ours(x, dt).tolist() == x.to(tdt).tolist()
    assert ours(x[1, 2], dt).item() == x[1, 2].to(tdt).item()
    assert repr(tt.zeros(2, dtype=dt)) == repr(torch.zeros(2, dtype=tdt))
    if dt is tt.float16:
        a = np.random.RandomState(1).randn(5).astype(np.float16)
        assert tt.from_numpy(a).dtype is tt.float16 and (tt.from_numpy(a).numpy() == a).all()
        assert tt.tensor(a).numpy().dtype == np.float16
    else:
        with pytest.raises(TypeError, match="BFloat16"):
            ours(x, dt).numpy()


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_factories_and_methods(name, dt, tdt):
    assert tt.ones(2, 3, dtype=dt).dtype is dt
    assert tt.full((2,), 1.3, dtype=dt).tolist() == torch.full((2,), 1.3, dtype=tdt).tolist()
    assert tt.arange(0, 5, 0.5, dtype=dt).tolist() == torch.arange(0, 5, 0.5, dtype=tdt).tolist()
    assert tt.tensor([1.1, 2.2], dtype=dt).tolist() == torch.tensor([1.1, 2.2], dtype=tdt).tolist()
    assert tt.randn(4, dtype=dt).dtype is dt and tt.rand(3, dtype=dt).dtype is dt
    x = tt.randn(3)
    assert x.half().dtype is tt.float16 and x.bfloat16().dtype is tt.bfloat16 and x.to(dt).dtype is dt
    assert tt.finfo(dt).eps == torch.finfo(tdt).eps and tt.finfo(dt).max == torch.finfo(tdt).max
    assert tt.finfo(dt).tiny == torch.finfo(tdt).tiny and tt.finfo(dt).bits == 16


UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "round", "reciprocal",
         "erf", "expm1", "log1p", "rsqrt", "atan", "sign"]
BINARY = [("add", lambda m, a, b: m.add(a, b, alpha=2)), ("sub", lambda m, a, b: a - b), ("mul", lambda m, a, b: a * b),
          ("div", lambda m, a, b: a / b), ("pow", lambda m, a, b: m.pow(a.abs(), b)), ("maximum", lambda m, a, b: m.maximum(a, b)),
          ("atan2", lambda m, a, b: m.atan2(a, b)), ("where", lambda m, a, b: m.where(a > b, a, b)),
          ("lerp", lambda m, a, b: m.lerp(a, b, 0.3)), ("addcmul", lambda m, a, b: m.addcmul(a, a, b, value=0.5))]


def _ref(tdt, f, *xs, lerp_like=False):
    """PyTorch's result: its half kernel where 1.13 has one on the CPU, else float32 rounded
    once (what PyTorch 2's CPU kernels compute)."""
    try:
        if lerp_like:
            raise RuntimeError("1.13's half lerp rounds the weight first")
        return f(*[x.to(tdt) for x in xs])
    except RuntimeError:
        return f(*[x.to(tdt).float() for x in xs]).to(tdt)


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_elementwise_against_torch(name, dt, tdt):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(6, 1, 5, generator=g).abs() + 0.1          # broadcast against b
    b = torch.randn(4, 5, generator=g)[::2].transpose(0, 1)    # non-contiguous [5, 2]
    b = torch.randn(6, 2, 5, generator=g)
    for op in UNARY:
        want = _ref(tdt, lambda x: getattr(torch, op)(x), a)
        got = getattr(tt, op)(ours(a, dt))
        assert got.dtype is dt, op
        torch.testing.assert_close(theirs(got), want.float(), **TOL[name], msg=op)
    for op, f in BINARY:
        want = _ref(tdt, lambda x, y: f(torch, x, y), a, b, lerp_like=op == "lerp")
        got = f(tt, ours(a, dt), ours(b, dt))
        assert got.dtype is dt, op
        # lerp: our float32 formula differs from PyTorch's by an ulp, visible after cancellation
        tol = dict(rtol=TOL[name]["rtol"], atol=1e-2) if op == "lerp" else TOL[name]
        torch.testing.assert_close(theirs(got), want.float(), **tol, msg=op, equal_nan=True)
    # 0-d and empty
    assert (ours(torch.tensor(2.5), dt) * 2).item() == 5.0
    assert tt.exp(tt.zeros(0, 3, dtype=dt)).shape == (0, 3)


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_reductions_accumulate_in_float32(name, dt, tdt):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(300, 41, generator=g)
    xh = x.to(tdt)
    a = ours(x, dt)
    for f in [lambda m, v: v.sum(), lambda m, v: v.sum(0), lambda m, v: v.sum(-1, keepdim=True), lambda m, v: v.mean(1),
              lambda m, v: v.mean(), lambda m, v: v.amax(0), lambda m, v: v.cumsum(1)]:
        want = f(torch, xh.float()).to(tdt)          # float32 accumulation, one rounding
        got = f(tt, a)
        assert got.dtype is dt
        torch.testing.assert_close(theirs(got), want.float(), **TOL[name])
    # a sum of 4096 ones stays exact (a float16 accumulator would stop at 2048)
    assert tt.ones(4096, dtype=dt).sum().item() == 4096
    assert tt.ones(0, dtype=dt).sum().item() == 0


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_matmul_linear_float32_accumulation(name, dt, tdt):
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(3, 17, 300, generator=g), torch.randn(300, 9, generator=g)
    want = (a.to(tdt).float() @ b.to(tdt).float()).to(tdt)
    got = ours(a, dt) @ ours(b, dt)
    assert got.dtype is dt
    torch.testing.assert_close(theirs(got), want.float(), rtol=2e-3 if name == "float16" else 1.6e-2, atol=1e-3)
    w, bias = torch.randn(9, 300, generator=g), torch.randn(9, generator=g)
    want = F.linear(a.to(tdt).float(), w.to(tdt).float(), bias.to(tdt).float()).to(tdt)
    got = TF.linear(ours(a, dt), ours(w, dt), ours(bias, dt))
    torch.testing.assert_close(theirs(got), want.float(), rtol=2e-3 if name == "float16" else 1.6e-2, atol=1e-3)


LAYERS = {
    "linear": (lambda m, x, w: m.nn.functional.linear(x, w[:5]), (4, 8)),
    "softmax": (lambda m, x, w: m.softmax(x, 1), (4, 8)),
    "log_softmax": (lambda m, x, w: m.log_softmax(x, -1), (4, 8)),
    "layer_norm": (lambda m, x, w: m.nn.functional.layer_norm(x, (8,), w[0], w[1]), (4, 8)),
    "gelu": (lambda m, x, w: m.nn.functional.gelu(x), (4, 8)),
    "cross_entropy": (lambda m, x, w: m.nn.functional.cross_entropy(x, m.tensor([1, 2, 3, 0])), (4, 8)),
    "mse": (lambda m, x, w: m.nn.functional.mse_loss(x, w[:4]), (4, 8)),
    "embedding": (lambda m, x, w: m.nn.functional.embedding(m.tensor([0, 3, 1, 3]), x), (4, 8)),
    "conv2d": (lambda m, x, w: m.nn.functional.conv2d(x, w.reshape(8, 8, 1, 1)[:4, :2].expand(4, 2, 3, 3).contiguous(), padding=1), (2, 2, 5, 5)),
    "max_pool2d": (lambda m, x, w: m.nn.functional.max_pool2d(x, 2), (2, 2, 6, 6)),
    "avg_pool2d": (lambda m, x, w: m.nn.functional.avg_pool2d(x, 2), (2, 2, 6, 6)),
    "batch_norm": (lambda m, x, w: m.nn.functional.batch_norm(x, None, None, w[0, :2], w[1, :2], training=True), (3, 2, 4)),
    "group_norm": (lambda m, x, w: m.nn.functional.group_norm(x, 2, w[0, :4], w[1, :4]), (3, 4, 5)),
}


@pytest.mark.parametrize("name,dt,tdt", HALVES)
@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layers_forward_backward(layer, name, dt, tdt):
    f, shape = LAYERS[layer]
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(*shape, generator=g), torch.randn(8, 8, generator=g)
    # reference: float32 on the half-rounded values, result and gradients rounded once
    xt = x.to(tdt).float().requires_grad_()
    wt = w.to(tdt).float().requires_grad_()
    rt = f(torch, xt, wt)
    gy = torch.randn(rt.shape, generator=g).to(tdt).float()
    rt.backward(gy)
    xa = ours(x, dt).requires_grad_()
    wa = ours(w, dt).requires_grad_()
    ra = f(tt, xa, wa)
    assert ra.dtype is dt
    ra.backward(ours(gy, dt))
    tol = dict(rtol=1e-2, atol=1e-2) if name == "float16" else dict(rtol=5e-2, atol=5e-2)
    torch.testing.assert_close(theirs(ra), rt.detach().to(tdt).float(), **tol)
    assert xa.grad.dtype is dt
    torch.testing.assert_close(theirs(xa.grad), xt.grad.to(tdt).float(), **tol)
    if wt.grad is not None and wa.grad is not None:
        torch.testing.assert_close(theirs(wa.grad), wt.grad.to(tdt).float(), **tol)


def test_module_half_training_step():
    torch.manual_seed(0)
    m = tt.nn.Sequential(tt.nn.Linear(6, 5), tt.nn.ReLU(), tt.nn.Linear(5, 3)).bfloat16()
    opt = tt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = tt.randn(8, 6).bfloat16()
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = TF.cross_entropy(m(x), tt.tensor([0, 1, 2, 0, 1, 2, 0, 1]))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype is tt.bfloat16 for p in m.parameters())
    assert losses[-1] < losses[0]


DTYPES = [("float32", tt.float32, torch.float32), ("float64", tt.float64, torch.float64), ("int32", tt.int32, torch.int32),
          ("int64", tt.int64, torch.int64), ("uint8", tt.uint8, torch.uint8), ("bool", tt.bool, torch.bool)] + HALVES


def test_promotion_table_against_torch():
    for (na, a, ta), (nb, b, tb) in itertools.product(DTYPES, DTYPES):
        assert tt.promote_types(a, b).name == str(torch.promote_types(ta, tb)).split(".")[1], (na, nb)
        x, y = tt.ones(2, dtype=a), tt.ones(2, dtype=b)
        tx, ty = torch.ones(2, dtype=ta), torch.ones(2, dtype=tb)
        assert (x * y).dtype.name == str((tx * ty).dtype).split(".")[1], (na, nb)
        # a 0-d tensor, and a Python scalar, weigh less than a dimensioned one
        assert (x * tt.ones((), dtype=b)).dtype.name == str((tx * torch.ones((), dtype=tb)).dtype).split(".")[1], (na, nb, "0-d")
    for n, a, ta in DTYPES:
        if n == "bool":
            continue
        for s in (2, 2.5):
            assert (tt.ones(2, dtype=a) + s).dtype.name == str((torch.ones(2, dtype=ta) + s).dtype).split(".")[1], (n, s)


def _autocast_dtypes(m, x, w, b, img, wc, t):
    F_ = m.nn.functional
    xb = x.bfloat16()
    out = {
        "linear": F_.linear(x, w, b), "mm": x @ w.t(), "matmul64": x.double() @ w.t().double(),
        "bmm": m.bmm(x[None], w.t()[None]), "addmm": m.addmm(b, x, w.t()), "conv2d": F_.conv2d(img, wc),
        "softmax": F_.softmax(x, 1), "softmax_bf16": F_.softmax(xb, 1), "layer_norm_bf16": F_.layer_norm(xb, (8,)),
        "mse_bf16": F_.mse_loss(xb, xb), "cross_entropy_bf16": F_.cross_entropy(xb, t), "nll_bf16": F_.nll_loss(xb, t),
        "l1_bf16": F_.l1_loss(xb, xb), "prod_bf16": xb.prod(), "add_mixed": xb + x, "cat_mixed": m.cat([xb, x]),
        "stack_mixed": m.stack([xb, x]), "relu_bf16": F_.relu(xb), "sum_bf16": xb.sum(), "embedding": F_.embedding(t, x),
        "exp_bf16": m.exp(xb),
    }
    return {k: str(v.dtype) for k, v in out.items()}


def test_autocast_op_dtypes_against_torch():
    g = torch.Generator().manual_seed(4)
    args = [torch.randn(4, 8, generator=g), torch.randn(5, 8, generator=g), torch.randn(5, generator=g),
            torch.randn(2, 3, 8, 8, generator=g), torch.randn(4, 3, 3, 3, generator=g)]
    t = [1, 2, 3, 0]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = _autocast_dtypes(torch, *args, torch.tensor(t))
    with tt.autocast("cpu", dtype=tt.bfloat16):
        assert tt.is_autocast_cpu_enabled() and tt.get_autocast_cpu_dtype() is tt.bfloat16
        got = _autocast_dtypes(tt, *[ours(a) for a in args], tt.tensor(t))
    assert got == want
    assert not tt.is_autocast_cpu_enabled()
    # nested enabled=False, the torch.cpu.amp form, and the decorator
    with tt.autocast("cpu", dtype=tt.bfloat16):
        with tt.autocast("cpu", enabled=False):
            assert (tt.ones(2, 3) @ tt.ones(3, 2)).dtype is tt.float32
        assert (tt.ones(2, 3) @ tt.ones(3, 2)).dtype is tt.bfloat16
    with tt.cpu.amp.autocast():
        assert (tt.ones(2, 3) @ tt.ones(3, 2)).dtype is tt.bfloat16
    with tt.autocast("cpu", dtype=tt.float16):
        assert (tt.ones(2, 3) @ tt.ones(3, 2)).dtype is tt.float16

    @tt.autocast("cpu")
    def f(a):
        return a @ a.t()
    assert f(tt.ones(2, 3)).dtype is tt.bfloat16 and (tt.ones(2, 3) @ tt.ones(3, 2)).dtype is tt.float32
    with pytest.warns(UserWarning, match="not supported"):
        with tt.autocast("cpu", dtype=tt.float64):
            assert (tt.ones(2, 3) @ tt.ones(3, 2)).dtype is tt.float32
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        tt.autocast("xpu")


def test_autocast_small_model_forward_backward_against_torch():
    torch.manual_seed(5)
    # (no LayerNorm: PyTorch 1.13 refuses its float32 weight with a bfloat16 input under CPU autocast)
    tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    om = tt.nn.Sequential(tt.nn.Linear(8, 16), tt.nn.ReLU(), tt.nn.Linear(16, 16), tt.nn.Tanh(), tt.nn.Linear(16, 4))
    om.load_state_dict({k: ours(v) for k, v in tm.state_dict().items()})
    x, t = torch.randn(6, 8), torch.tensor([0, 1, 2, 3, 0, 1])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ty = tm(x)
        tl = F.cross_entropy(ty, t)
    with tt.autocast("cpu", dtype=tt.bfloat16):
        oy = om(ours(x))
        ol = TF.cross_entropy(oy, tt.tensor(t.tolist()))
    assert str(oy.dtype) == str(ty.dtype) and str(ol.dtype) == str(tl.dtype)
    tl.backward()
    ol.backward()
    torch.testing.assert_close(theirs(oy), ty.float(), rtol=2e-2, atol=2e-2)
    for (n, tp), op in zip(tm.named_parameters(), om.parameters()):
        assert str(op.grad.dtype) == str(tp.grad.dtype), n     # float32 leaves get float32 gradients
        torch.testing.assert_close(theirs(op.grad), tp.grad, rtol=5e-2, atol=5e-2, msg=n)


def _scaler_run(scaler, grads_seq, lr=0.1):
    p = tt.nn.Parameter(tt.ones(3))
    opt = tt.optim.SGD([p], lr=lr)
    scales, params = [], []
    for gs in grads_seq:
        opt.zero_grad()
        loss = scaler.scale((p * tt.tensor(gs)).sum())
        loss.backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        params.append(p.detach().tolist())
    return scales, params


def test_grad_scaler():
    inf = float("inf")
    seq = [[1.0, 2.0, 3.0], [1.0, inf, 3.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [float("nan"), 0.0, 0.0], [2.0, 2.0, 2.0]]
    s = tt.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
    scales, params = _scaler_run(s, seq)
    # PyTorch's rules: an inf/NaN step is skipped and the scale halves; growth_interval clean
    # steps in a row double it
    assert scales == [1024.0, 512.0, 512.0, 1024.0, 512.0, 512.0]
    p1 = [1 - 0.1 * 1, 1 - 0.1 * 2, 1 - 0.1 * 3]
    assert params[1] == params[0] and params[4] == params[3]
    np.testing.assert_allclose(params[0], p1, rtol=1e-6)
    # steps 2 and 3 (gradient 1) and 5 (gradient 2) applied, 1 and 4 skipped
    np.testing.assert_allclose(params[5], [v - 0.1 - 0.1 - 0.2 for v in p1], rtol=1e-5)
    sd = s.state_dict()
    assert sd == {"scale": 512.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2, "_growth_tracker": 1}
    s2 = tt.amp.GradScaler("cpu")
    s2.load_state_dict(sd)
    assert s2.get_scale() == 512.0 and s2.state_dict() == sd
    s3 = pickle.loads(pickle.dumps(s))
    assert s3.state_dict() == sd
    # misuse raises as PyTorch
    p = tt.nn.Parameter(tt.ones(2))
    opt = tt.optim.SGD([p], lr=0.1)
    s.scale(p.sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    s.update()
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(opt, closure=lambda: 0)
    # a disabled scaler passes through; torch.cuda.amp's without a GPU disables itself
    d = tt.amp.GradScaler("cpu", enabled=False)
    assert d.scale(tt.ones(1)).item() == 1 and d.get_scale() == 1.0 and d.state_dict() == {}
    if not tt.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not tt.cuda.amp.GradScaler().is_enabled()


def test_grad_scaler_unscale_matches_torch_math():
    # unscale_ multiplies by float32(1 / float64(scale)) as PyTorch
    s = tt.amp.GradScaler("cpu", init_scale=3.0)
    p = tt.nn.Parameter(tt.tensor([1.0, 2.0]))
    opt = tt.optim.SGD([p], lr=1.0)
    s.scale((p * tt.tensor([5.0, 7.0])).sum()).backward()
    s.unscale_(opt)
    inv = torch.tensor(3.0).double().reciprocal().float()
    want = (torch.tensor([5.0, 7.0]) * 3.0) * inv
    assert p.grad.tolist() == want.tolist()


def test_half_errors():
    with pytest.raises(RuntimeError, match="same dtype"):
        TF.linear(tt.ones(2, 3, dtype=tt.float16), tt.ones(4, 3)) if False else TF.conv2d(tt.ones(1, 1, 3, 3, dtype=tt.float16), tt.ones(1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="float16 or bfloat16"):
        tt._C.lib.tn_autocast_begin_str(tt._C.CPU, b"dtype=float64, enabled=True") == 0 or tt._core._raise()
    with pytest.raises(RuntimeError, match="no autocast region"):
        tt._C.lib.tn_autocast_end() == 0 or tt._core._raise()


@pytest.mark.parametrize("name,dt,tdt", HALVES)
def test_paths_with_their_own_loops(name, dt, tdt):
    # nan_to_num's default bounds are the half dtype's finfo.max, not float64's (which rounds to inf)
    v = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    assert ours(v, dt).nan_to_num().tolist() == torch.nan_to_num(v.to(tdt)).tolist()
    # LBFGS reads and writes half parameters through float32
    p = tt.nn.Parameter(tt.tensor([1.0, -2.0]).to(dt))
    opt = tt.optim.LBFGS([p], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p.float() ** 2).sum()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    assert p.dtype is dt and max(abs(x) for x in p.tolist()) < 1e-3
    # gradient clipping over half gradients (the composite), init in place
    q = tt.nn.Parameter(tt.ones(4, dtype=dt))
    q.grad = tt.full((4,), 3.0, dtype=dt)
    total = tt.nn.utils.clip_grad_norm_([q], 1.0)
    assert abs(float(total) - 6.0) < 1e-2 and abs(q.grad.float().norm().item() - 1.0) < 1e-2
    w = tt.empty(50, 40, dtype=dt)
    tt.nn.init.trunc_normal_(w, std=0.02)
    tt.nn.init.kaiming_uniform_(w)
    assert w.dtype is dt and bool(w.isfinite().all()) and 0 < w.float().std().item() < 1
    # logcumsumexp's backward uses the dtype's lowest finite value
    x = ours(torch.randn(5), dt).requires_grad_()
    x.logcumsumexp(0).float().sum().backward()
    assert bool(x.grad.isfinite().all())


@pytest.mark.parametrize("name,dt,tdt", HALVES)
@pytest.mark.parametrize("fn,kw", [("gelu", {}), ("gelu", {"approximate": "tanh"}), ("relu", {})])
def test_activation_grads_round_once(fn, kw, name, dt, tdt):
    """relu's and gelu's gradients of half tensors in one pass: computed in float32 from the
    half values and rounded once, as PyTorch 2's kernels (1.13's bfloat16 gelu 'tanh' backward
    rounded inside; the composite formula we used before rounded at each of its ops). At most
    one half ulp from torch's float32 gradient rounded once (the float32 formulas differ in
    the last bits)."""
    g = torch.Generator().manual_seed(5)
    x, gy = torch.randn(4000, generator=g) * 3, torch.randn(4000, generator=g)
    xt = x.to(tdt).float().requires_grad_()
    getattr(F, fn)(xt, **kw).backward(gy.to(tdt).float())
    want = xt.grad.to(tdt)
    xa = ours(x, dt).requires_grad_()
    getattr(TF, fn)(xa, **kw).backward(ours(gy, dt))
    got, ref = theirs(xa.grad), want.float()
    assert xa.grad.dtype is dt
    ulp = 2.0 ** -7 if name == "bfloat16" else 2.0 ** -10
    torch.testing.assert_close(got, ref, rtol=ulp, atol=1e-5)   # within one half ulp (tiny gradients: float32's)
    assert int((got != ref).sum()) <= 400   # 10 %: where float32 rounding differs (the composite missed on ~50 %)
