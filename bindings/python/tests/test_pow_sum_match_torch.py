"""float32 pow and sum give PyTorch's CPU bits (issue 20: the regression example's trajectory).

pow by a number (pow_tensor_scalar) and by a tensor (pow_tensor_tensor) run SLEEF's
powf_u10 on each 16 elements of a vectorisable loop and a scalar pow on the rest, with
pow_tensor_scalar's special exponents (2, 3, -2 as products, 0.5, -0.5, -1 as sqrt, rsqrt,
reciprocal: src/ops/sleef.c, src/ops/kernels.c); sums add in float in cascade_sum's order
(src/ops/reduce.c).
Each test compares bit for bit (a NaN equals any NaN) against Debian's python3-torch 1.13,
which runs one thread here; skipped without torch.
"""
import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")


def bits_equal(ours, theirs):
    a = np.ascontiguousarray(ours.detach().numpy() if hasattr(ours, "detach") else ours, dtype=np.float32)
    b = np.ascontiguousarray(theirs.detach().numpy(), dtype=np.float32)
    assert a.shape == b.shape, (a.shape, b.shape)
    bad = ~((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b)))
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ, e.g. {a[bad][:3]} here, {b[bad][:3]} under torch"


def values(n, kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return (rng.standard_normal(n) * 3).astype(np.float32)
    if kind == "bits":     # every float32 pattern: NaNs, infinities, subnormals, huge and tiny
        return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.array([0, -0.0, 1, -1, 2, -2, 0.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38,
                     0.999999, 1.000001] * 2, np.float32)[:n]


EXPONENTS = [4.0, 2.0, 3.0, -2.0, 0.5, -0.5, -1.0, 1.5, 0.1, 1 / 3, -3.0, 7.0, 0.0, 1.0, 33.0, -0.75,
             1e10, -1e10, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 34, 1000, 100003])
@pytest.mark.parametrize("kind", ["normal", "bits", "special"])
def test_pow_by_a_number(n, kind):
    x = values(n, kind)
    for e in EXPONENTS:
        bits_equal(tn.from_numpy(x).pow(e), torch.from_numpy(x).pow(e))
    bits_equal(tn.from_numpy(x) ** 4, torch.from_numpy(x) ** 4)      # the regression example's features


@pytest.mark.parametrize("n", [1, 16, 17, 1000, 4099])
def test_pow_by_a_tensor(n):
    """pow_tensor_tensor: no special exponents (2.0 as a 0-d tensor is SLEEF's, not x * x)"""
    x = values(n, "bits", 1)
    for e in [4.0, 2.0, 3.0, 0.5, -1.0, -2.0, 1.5]:
        bits_equal(tn.from_numpy(x).pow(tn.tensor(e)), torch.from_numpy(x).pow(torch.tensor(e)))
        bits_equal(tn.from_numpy(x).pow(tn.full((n,), e)), torch.from_numpy(x).pow(torch.full((n,), e)))
    y = values(n, "normal", 2)
    bits_equal(tn.from_numpy(np.abs(x)).pow(tn.from_numpy(y)), torch.from_numpy(np.abs(x)).pow(torch.from_numpy(y)))
    bits_equal(tn.pow(2.5, tn.from_numpy(y)), torch.pow(2.5, torch.from_numpy(y)))


def test_pow_strided_and_broadcast():
    x = values(40 * 33, "normal", 3).reshape(40, 33)
    for e in [4.0, 0.1, 1.5]:
        # a strided loop is all scalar pow; a broadcast base still SLEEF's
        bits_equal(tn.from_numpy(x)[:, ::2].pow(e), torch.from_numpy(x)[:, ::2].pow(e))
        bits_equal(tn.from_numpy(x)[:1].expand(40, 33).pow(e), torch.from_numpy(x)[:1].expand(40, 33).pow(e))
        bits_equal(tn.from_numpy(x).pow(tn.from_numpy(x[:1] * 0 + e)), torch.from_numpy(x).pow(torch.from_numpy(x[:1] * 0 + e)))
    bits_equal(tn.tensor(3.0).pow(4.0), torch.tensor(3.0).pow(4.0))              # 0-d
    z = tn.from_numpy(x.copy())
    z.pow_(1.5)
    bits_equal(z, torch.from_numpy(x).pow(1.5))                                  # in place


def test_pow_errors_and_float64():
    with pytest.raises(RuntimeError):
        tn.tensor([1, 2]).pow(-1)        # integers to negative integer powers: PyTorch's error
    x = values(1000, "normal", 4).astype(np.float64)
    for e in [2.0, 3.0, 4.0, 0.5]:       # float64: libm's pow (torch: SLEEF's powd), within an ulp
        np.testing.assert_allclose(tn.from_numpy(x).pow(e).numpy(), torch.from_numpy(x).pow(e).numpy(), rtol=3e-16, atol=0)


@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 9, 31, 32, 33, 100, 4097, 65549, 300001])
def test_sum_and_mean_of_a_row(n):
    x = (np.random.default_rng(n).standard_normal(n) * 10).astype(np.float32)
    bits_equal(tn.from_numpy(x).sum(), torch.from_numpy(x).sum())
    bits_equal(tn.from_numpy(x).mean(), torch.from_numpy(x).mean())            # n == 0: NaN
    bits_equal(tn.from_numpy(x).sum(0, keepdim=True), torch.from_numpy(x).sum(0, keepdim=True))


SHAPES = [(32, 1), (32, 4), (5, 7), (100, 3), (3, 100), (64, 40), (1000, 37), (37, 1000), (4, 5, 6),
          (2, 3, 50, 9), (17, 8), (8, 17), (300, 8), (2, 300, 33), (0, 5), (5, 0)]


@pytest.mark.parametrize("shape", SHAPES)
def test_sum_and_mean_over_dims(shape):
    x = (np.random.default_rng(len(shape)).standard_normal(shape) * 3).astype(np.float32)
    a, t = tn.from_numpy(x), torch.from_numpy(x)
    dimsets = [(d,) for d in range(len(shape))] + [(-1,), (-2,), (0, len(shape) - 1)]
    for dims in dimsets:
        for kd in (False, True):
            bits_equal(a.sum(dims, keepdim=kd), t.sum(dims, keepdim=kd))
            bits_equal(a.mean(dims, keepdim=kd), t.mean(dims, keepdim=kd))
    bits_equal(a.sum(), t.sum())
    # non-contiguous: transposed, strided
    bits_equal(a.transpose(0, 1).sum(0), t.transpose(0, 1).sum(0))
    bits_equal(a.transpose(0, 1).sum(-1), t.transpose(0, 1).sum(-1))
    bits_equal(a[..., ::2].sum(), t[..., ::2].sum())
    bits_equal(a[..., ::2].sum(0), t[..., ::2].sum(0))


def test_sum_edge_cases():
    bits_equal(tn.tensor(-0.0).sum(), torch.tensor(-0.0).sum())                  # 0-d: 0 + x
    bits_equal(tn.tensor(2.5).mean(), torch.tensor(2.5).mean())
    x = np.array([1e8, 1, -1e8, 1] * 40, np.float32)                              # float, not double: the 1s are lost alike
    bits_equal(tn.from_numpy(x).sum(), torch.from_numpy(x).sum())
    x = np.array([np.inf, -np.inf, 1] * 11, np.float32)
    bits_equal(tn.from_numpy(x).sum(), torch.from_numpy(x).sum())
    with pytest.raises((IndexError, RuntimeError)):
        tn.ones(3, 4).sum(2)


def test_linear_bias_gradient_and_loss():
    """the regression example's step: smooth_l1_loss's mean and the bias gradient's sum"""
    for n in (32, 100):
        torch.manual_seed(n)
        x, y = torch.randn(n, 4), torch.randn(n, 1)
        fc = torch.nn.Linear(4, 1)
        ours = tn.nn.Linear(4, 1)
        with tn.no_grad():
            ours.weight.copy_(tn.from_numpy(fc.weight.detach().numpy()))
            ours.bias.copy_(tn.from_numpy(fc.bias.detach().numpy()))
        lt = torch.nn.functional.smooth_l1_loss(fc(x), y)
        lo = tn.nn.functional.smooth_l1_loss(ours(tn.from_numpy(x.numpy())), tn.from_numpy(y.numpy()))
        bits_equal(lo, lt)
        lt.backward()
        lo.backward()
        bits_equal(ours.bias.grad, fc.bias.grad)


@pytest.mark.parametrize("n", [1, 7, 8, 33, 1003])
def test_add_sub_with_alpha_fused(n):
    """add(a, b, alpha=) is one fused multiply-add in torch's add kernel (vec::fmadd, and the
    scalar a + alpha * b its compiler contracts); sub is add with -alpha"""
    a, b = values(n, "normal", 5), values(n, "normal", 6) * np.float32(1e6)
    for alpha in [-1e-8, 0.1, 3.0, -2.5]:
        bits_equal(tn.add(tn.from_numpy(a), tn.from_numpy(b), alpha=alpha), torch.add(torch.from_numpy(a), torch.from_numpy(b), alpha=alpha))
        bits_equal(tn.sub(tn.from_numpy(a), tn.from_numpy(b), alpha=alpha), torch.sub(torch.from_numpy(a), torch.from_numpy(b), alpha=alpha))
        z = tn.from_numpy(a.copy())
        z.add_(tn.from_numpy(b), alpha=alpha)
        bits_equal(z, torch.from_numpy(a).add(torch.from_numpy(b), alpha=alpha))
    bits_equal(tn.tensor(0.3).add(tn.tensor(7e5), alpha=-1e-8), torch.tensor(0.3).add(torch.tensor(7e5), alpha=-1e-8))   # 0-d


@pytest.mark.parametrize("opts", [dict(momentum=0.9), dict(momentum=0.9, dampening=0.3, weight_decay=0.01),
                                  dict(momentum=0.8, nesterov=True), dict(weight_decay=0.1), dict(momentum=0.9, maximize=True)])
def test_sgd_steps_fused(opts):
    """SGD's update as torch's _single_tensor_sgd, each add(alpha=) fused: 20 steps bit for bit"""
    w0 = values(37, "normal", 7)
    g = [values(37, "normal", 8 + k) * np.float32(1e3) for k in range(20)]
    pt, pn = torch.nn.Parameter(torch.from_numpy(w0.copy())), tn.nn.Parameter(tn.from_numpy(w0.copy()))
    ot, on = torch.optim.SGD([pt], lr=1e-3, **opts), tn.optim.SGD([pn], lr=1e-3, **opts)
    for k in range(20):
        pt.grad, pn.grad = torch.from_numpy(g[k].copy()), tn.from_numpy(g[k].copy())
        ot.step()
        on.step()
        bits_equal(pn, pt)


def _adam2(w0, grads, lr, betas, eps, wd, amsgrad=False, maximize=False, decoupled=False):
    """PyTorch 2's _single_tensor_adam (AdamW: param.mul_(1 - lr * weight_decay) first) in
    torch 1.13's ops: 1.13's Adam decays exp_avg by mul_ and add_, 2.0 on by lerp_"""
    import math
    p = torch.from_numpy(w0.copy())
    m, v, vmax = torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p)
    out = []
    for step, g in enumerate(grads, 1):
        g = torch.from_numpy(-g if maximize else g.copy())
        if decoupled:
            p.mul_(1 - lr * wd)
        elif wd != 0:
            g = g.add(p, alpha=wd)
        m.lerp_(g, 1 - betas[0])
        v.mul_(betas[1]).addcmul_(g, g, value=1 - betas[1])
        bc2_sqrt = math.sqrt(1 - betas[1] ** step)
        if amsgrad:
            torch.maximum(vmax, v, out=vmax)
        den = ((vmax if amsgrad else v).sqrt() / bc2_sqrt).add_(eps)
        p.addcdiv_(m, den, value=-(lr / (1 - betas[0] ** step)))
        out.append(p.clone())
    return out


@pytest.mark.parametrize("name,opts", [("Adam", dict(weight_decay=0.1)), ("Adam", dict(weight_decay=0.37, amsgrad=True)),
                                       ("Adam", dict(weight_decay=0.05, maximize=True, betas=(0.8, 0.99))), ("Adam", {}),
                                       ("AdamW", {}), ("AdamW", dict(weight_decay=0.3, amsgrad=True))])
@pytest.mark.parametrize("n", [7, 1003])
def test_adam_steps_fused(name, opts, n):
    """Adam's grad.add(param, alpha=weight_decay), exp_avg.lerp_ and exp_avg_sq.mul_().addcmul_()
    are each one fused multiply-add in torch's kernels: 12 steps bit for bit with PyTorch 2's
    rule (the plain loop of 7 elements, the threaded and vectorised one of 1003)"""
    w0 = values(n, "normal", 7)
    g = [values(n, "normal", 8 + k) for k in range(12)]
    full = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01 if name == "AdamW" else 0.0)
    full.update(opts)
    ref = _adam2(w0, g, full["lr"], full["betas"], full["eps"], full["weight_decay"], full.get("amsgrad", False),
                 full.get("maximize", False), name == "AdamW")
    pn = tn.nn.Parameter(tn.from_numpy(w0.copy()))
    on = getattr(tn.optim, name)([pn], **full)
    for k in range(12):
        pn.grad = tn.from_numpy(g[k].copy())
        on.step()
        bits_equal(pn, ref[k])
    # torch 1.13's own Adam (foreach=False and the default) agrees on the first step, before
    # its exp_avg's mul_ and add_ part from lerp_
    for foreach in (False, None):
        pt = torch.nn.Parameter(torch.from_numpy(w0.copy()))
        ot = getattr(torch.optim, name)([pt], foreach=foreach, **full)
        pt.grad = torch.from_numpy(g[0].copy())
        ot.step()
        bits_equal(pt, ref[0])


@pytest.mark.parametrize("name,opts", [("RMSprop", dict(lr=1e-2, weight_decay=0.1)),
                                       ("RMSprop", dict(lr=1e-2, weight_decay=0.1, momentum=0.9)),
                                       ("RMSprop", dict(lr=1e-2, momentum=0.5, alpha=0.9)),
                                       ("Adagrad", dict(lr=1e-2, weight_decay=0.1)),
                                       ("Adagrad", dict(lr=1e-1, lr_decay=0.01, weight_decay=0.3, initial_accumulator_value=0.2)),
                                       ("Adadelta", dict(weight_decay=0.1)), ("Adadelta", dict(lr=0.5, rho=0.8))])
@pytest.mark.parametrize("foreach", [False, None])
def test_rmsprop_adagrad_adadelta_steps_fused(name, opts, foreach):
    """weight decay's add(alpha=), addcmul_ and param.add_(alpha=) fused as torch's kernels:
    12 steps of torch 1.13's own optimizer bit for bit (the same rule as PyTorch 2's)"""
    w0 = values(1003, "normal", 7)
    g = [values(1003, "normal", 30 + k) for k in range(12)]
    pt, pn = torch.nn.Parameter(torch.from_numpy(w0.copy())), tn.nn.Parameter(tn.from_numpy(w0.copy()))
    ot, on = getattr(torch.optim, name)([pt], foreach=foreach, **opts), getattr(tn.optim, name)([pn], **opts)
    for k in range(12):
        pt.grad, pn.grad = torch.from_numpy(g[k].copy()), tn.from_numpy(g[k].copy())
        ot.step()
        on.step()
        bits_equal(pn, pt)


def _rmsprop_centered2(w0, grads, lr, alpha, eps, wd, momentum):
    """PyTorch 2's _single_tensor_rmsprop, centered (1.13 decayed grad_avg by mul_ and add_)"""
    p = torch.from_numpy(w0.copy())
    sq, ga, buf = torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p)
    out = []
    for g in grads:
        g = torch.from_numpy(g.copy()).add(p, alpha=wd)
        sq.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        ga.lerp_(g, 1 - alpha)
        avg = sq.addcmul(ga, ga, value=-1).sqrt_().add_(eps)
        if momentum > 0:
            buf.mul_(momentum).addcdiv_(g, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(g, avg, value=-lr)
        out.append(p.clone())
    return out


def _adamax2(w0, grads, lr, betas, eps, wd):
    """PyTorch 2's _single_tensor_adamax (1.13 decayed exp_avg by mul_ and add_)"""
    p = torch.from_numpy(w0.copy())
    m, u = torch.zeros_like(p), torch.zeros_like(p)
    out = []
    for step, g in enumerate(grads, 1):
        g = torch.from_numpy(g.copy()).add(p, alpha=wd)
        m.lerp_(g, 1 - betas[0])
        torch.maximum(u.mul_(betas[1]), g.abs().add_(eps), out=u)
        p.addcdiv_(m, u, value=-(lr / (1 - betas[0] ** step)))
        out.append(p.clone())
    return out


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_rmsprop_centered_and_adamax_steps_fused(momentum):
    """RMSprop(centered=True) and Adamax with weight decay: 12 steps bit for bit with PyTorch 2's
    rules in 1.13's ops (lerp_, addcmul and add(alpha=) fused)"""
    w0 = values(1003, "normal", 3)
    g = [values(1003, "normal", 50 + k) for k in range(12)]
    pn = tn.nn.Parameter(tn.from_numpy(w0.copy()))
    on = tn.optim.RMSprop([pn], lr=1e-2, alpha=0.9, weight_decay=0.1, momentum=momentum, centered=True)
    ref = _rmsprop_centered2(w0, g, 1e-2, 0.9, 1e-8, 0.1, momentum)
    for k in range(12):
        pn.grad = tn.from_numpy(g[k].copy())
        on.step()
        bits_equal(pn, ref[k])
    pn = tn.nn.Parameter(tn.from_numpy(w0.copy()))
    on = tn.optim.Adamax([pn], lr=2e-2, betas=(0.8, 0.99), weight_decay=0.2)
    ref = _adamax2(w0, g, 2e-2, (0.8, 0.99), 1e-8, 0.2)
    for k in range(12):
        pn.grad = tn.from_numpy(g[k].copy())
        on.step()
        bits_equal(pn, ref[k])
