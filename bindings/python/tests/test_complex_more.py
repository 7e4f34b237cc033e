"""complex64/complex128, the pieces after the first increment (issue 26 item 1), against
PyTorch 1.13: the inverse trigonometric and hyperbolic functions, sinc and silu, cumprod,
randn/rand/normal_/uniform_ (the same stream as torch's), lerp and addcdiv, the addmm family
with complex alpha/beta, complex fill values (index_fill, pad), complex convolutions,
unfold/fold, linspace/logspace, float_power, cov/corrcoef: values on random, non-contiguous,
broadcast, 0-d and empty inputs, gradients against torch's, gradcheck/gradgradcheck in
complex128, and the ops torch refuses on complex raising here too. Skipped without torch."""
import numpy as np
import pytest

import tensor as tn

torch = pytest.importorskip("torch")

CPLX = ("complex64", "complex128")


def _tol(dtype):
    return (2e-5, 1e-5) if "64" in str(dtype) and "128" not in str(dtype) else (1e-10, 1e-12)


def to_tn(t, requires_grad=False):
    """a tn copy of torch tensor t (any layout: the copy keeps t's strides through a permute)"""
    r = tn.from_numpy(np.array(t.detach().numpy(), copy=True)) if t.numel() else \
        tn.zeros(tuple(t.shape), dtype=getattr(tn, str(t.dtype).split(".")[1]))
    return r.requires_grad_(requires_grad) if requires_grad else r


def to_torch(a):
    return torch.from_numpy(np.array(a.detach().numpy(), copy=True))


def close(ours, ref, rtol=None, atol=None):
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1], (ours.dtype, ref.dtype)
    assert tuple(ours.shape) == tuple(ref.shape), (ours.shape, ref.shape)
    r, a = _tol(ref.dtype)
    torch.testing.assert_close(to_torch(ours), ref.detach(), rtol=rtol or r, atol=atol or a, equal_nan=True)


def crand(shape, dtype, seed, scale=1.0, noncontig=False):
    g = torch.Generator().manual_seed(seed)
    if noncontig:   # every other column of a wider tensor
        shape = shape[:-1] + (2 * shape[-1],)
    t = torch.randn(*shape, dtype=getattr(torch, dtype), generator=g) * scale
    return t[..., ::2] if noncontig else t


def ours_view(t, noncontig):
    """t's values as a tn tensor with the same (non-)contiguity"""
    if not noncontig:
        return to_tn(t)
    wide = torch.stack([t, torch.zeros_like(t)], -1)
    return to_tn(wide).select(-1, 0)


UNARY = ["asin", "acos", "atan", "asinh", "acosh", "atanh", "sinc"]


@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("name", UNARY + ["silu"])
@pytest.mark.parametrize("noncontig", [False, True])
def test_unary_values(name, dtype, noncontig):
    tf = getattr(torch.nn.functional, name) if name == "silu" else getattr(torch, name)
    of = getattr(tn.nn.functional, name) if name == "silu" else getattr(tn, name)
    for k, scale in enumerate((0.3, 2.0, 8.0)):
        x = crand((4, 6), dtype, 10 + k, scale)
        close(of(ours_view(x, noncontig)), tf(x))
    x0 = torch.tensor(0.25 - 0.5j, dtype=getattr(torch, dtype))
    close(of(to_tn(x0)), tf(x0))
    e = torch.zeros(0, 3, dtype=getattr(torch, dtype))
    close(of(to_tn(e)), tf(e))


def test_silu_complex_not_differentiable():
    """torch: silu's complex outputs have no gradient formula (an error, not a wrong gradient)"""
    x = crand((3,), "complex128", 2)
    with pytest.raises(RuntimeError, match="silu"):
        torch.nn.functional.silu(x.clone().requires_grad_())
    with pytest.raises(RuntimeError, match="silu"):
        tn.nn.functional.silu(to_tn(x, True))
    close(tn.nn.functional.silu(to_tn(x)), torch.nn.functional.silu(x))


@pytest.mark.parametrize("name", UNARY)
def test_unary_gradients(name):
    tf = getattr(torch.nn.functional, name) if name == "silu" else getattr(torch, name)
    of = getattr(tn.nn.functional, name) if name == "silu" else getattr(tn, name)
    x = crand((3, 4), "complex128", 3, 0.7)
    if name == "acosh":
        x = x + 3
    w = crand((3, 4), "complex128", 4)
    xt = x.clone().requires_grad_()
    (tf(xt) * w).real.sum().backward()
    xo = to_tn(x, True)
    (of(xo) * to_tn(w)).real.sum().backward()
    close(xo.grad, xt.grad, 1e-9, 1e-9)
    assert tn.autograd.gradcheck(of, (to_tn(x, True),))
    assert tn.autograd.gradgradcheck(of, (to_tn(x, True),))


@pytest.mark.parametrize("dtype", CPLX)
def test_cumprod(dtype):
    x = crand((4, 5), dtype, 5, 1.2)
    for dim in (0, 1, -1, -2):
        close(to_tn(x).cumprod(dim), x.cumprod(dim))
        close(ours_view(x, True).cumprod(dim), x.cumprod(dim))
    x0 = torch.tensor(2 + 1j, dtype=getattr(torch, dtype))
    close(tn.cumprod(to_tn(x0), 0), torch.cumprod(x0, 0))
    e = torch.zeros(0, 3, dtype=getattr(torch, dtype))
    close(tn.cumprod(to_tn(e), 1), torch.cumprod(e, 1))
    with pytest.raises(IndexError):
        torch.cumprod(x, 2)
    with pytest.raises((IndexError, RuntimeError)):
        tn.cumprod(to_tn(x), 2)


@pytest.mark.parametrize("zeros", [False, True])
def test_cumprod_gradients(zeros):
    x = crand((3, 5), "complex128", 6, 1.1)
    if zeros:
        x[1, 2] = 0
        x[2, 0] = 0
    w = crand((3, 5), "complex128", 7)
    xt = x.clone().requires_grad_()
    (xt.cumprod(1) * w).real.sum().backward()
    xo = to_tn(x, True)
    (xo.cumprod(1) * to_tn(w)).real.sum().backward()
    close(xo.grad, xt.grad, 1e-9, 1e-9)
    assert tn.autograd.gradcheck(lambda t: t.cumprod(1), (to_tn(x, True),))
    assert tn.autograd.gradgradcheck(lambda t: t.cumprod(1), (to_tn(x, True),))
    # prod's gradient (through cumprod) too
    xt = x.clone().requires_grad_()
    (xt.prod(0) * w[0]).real.sum().backward()
    xo = to_tn(x, True)
    (xo.prod(0) * to_tn(w[0])).real.sum().backward()
    close(xo.grad, xt.grad, 1e-9, 1e-9)


@pytest.mark.parametrize("dtype", CPLX)
def test_random_matches_torch(dtype):
    td, nd = getattr(torch, dtype), getattr(tn, dtype)
    for shape in ((7,), (3, 6), (0, 2)):
        torch.manual_seed(5)
        tn.manual_seed(5)
        close(tn.randn(*shape, dtype=nd), torch.randn(*shape, dtype=td), 1e-6, 0)
        close(tn.rand(*shape, dtype=nd), torch.rand(*shape, dtype=td), 1e-6, 0)
        close(tn.empty(*shape, dtype=nd).normal_(1, 3), torch.empty(*shape, dtype=td).normal_(1, 3), 1e-6, 1e-7)
        close(tn.empty(*shape, dtype=nd).uniform_(-2, 5), torch.empty(*shape, dtype=td).uniform_(-2, 5), 1e-6, 1e-7)
        z = torch.zeros(*shape, dtype=td)
        close(tn.randn_like(to_tn(z)), torch.randn_like(z), 1e-6, 0)
        close(tn.rand_like(to_tn(z)), torch.rand_like(z), 1e-6, 0)
    torch.manual_seed(6)
    big = tn.randn(100000, dtype=nd)
    assert abs(big.real.pow(2).mean().item() - 0.5) < 0.01 and abs(big.imag.pow(2).mean().item() - 0.5) < 0.01
    with pytest.raises(RuntimeError):
        tn.empty(3, dtype=nd).uniform_(2, 1)


def test_lerp_addcdiv():
    a, b = crand((3, 4), "complex128", 20), crand((4,), "complex128", 21)
    w = crand((3, 1), "complex128", 22)
    close(tn.lerp(to_tn(a), to_tn(b), to_tn(w)), torch.lerp(a, b, w))
    close(tn.lerp(to_tn(a), to_tn(b), 0.3), torch.lerp(a, b, 0.3))
    close(tn.lerp(to_tn(a), to_tn(b), 0.4j), torch.lerp(a, b, 0.4j))
    close(tn.addcdiv(to_tn(a), to_tn(b), to_tn(w), value=0.5), torch.addcdiv(a, b, w, value=0.5))
    ins = [a, b, w]
    ts = [t.clone().requires_grad_() for t in ins]
    os = [to_tn(t, True) for t in ins]
    g = crand((3, 4), "complex128", 23)
    (torch.lerp(*ts) * g + torch.addcdiv(*ts) * g.conj().resolve_conj()).real.sum().backward()
    (tn.lerp(*os) * to_tn(g) + tn.addcdiv(*os) * to_tn(g.conj().resolve_conj())).real.sum().backward()
    for o, t in zip(os, ts):
        close(o.grad, t.grad, 1e-9, 1e-9)
    assert tn.autograd.gradgradcheck(tn.lerp, tuple(to_tn(t, True) for t in ins))
    assert tn.autograd.gradgradcheck(tn.addcdiv, tuple(to_tn(t, True) for t in ins))


@pytest.mark.parametrize("name,shapes", [("addmm", ((2, 3), (2, 4), (4, 3))), ("addmv", ((2,), (2, 4), (4,))),
                                         ("addr", ((2, 3), (2,), (3,))), ("baddbmm", ((2, 2, 3), (2, 2, 4), (2, 4, 3))),
                                         ("addbmm", ((2, 3), (2, 2, 4), (2, 4, 3)))])
def test_addmm_family(name, shapes):
    ins = [crand(s, "complex128", 30 + k) for k, s in enumerate(shapes)]
    for beta, alpha in ((1, 1), (0.5, 2), (1 + 2j, 0.5 - 1j), (0, 1j)):
        close(getattr(tn, name)(*[to_tn(t) for t in ins], beta=beta, alpha=alpha), getattr(torch, name)(*ins, beta=beta, alpha=alpha))
        ts = [t.clone().requires_grad_() for t in ins]
        os = [to_tn(t, True) for t in ins]
        getattr(torch, name)(*ts, beta=beta, alpha=alpha).abs().sum().backward()
        getattr(tn, name)(*os, beta=beta, alpha=alpha).abs().sum().backward()
        for o, t in zip(os, ts):
            if t.grad is None or o.grad is None:   # (beta == 0: torch's zeros, our None: self takes no part)
                assert (o.grad is None or not to_torch(o.grad).any()) and (t.grad is None or not t.grad.any())
            else:
                close(o.grad, t.grad, 1e-9, 1e-9)
    with pytest.raises(RuntimeError):   # a complex scalar for a real tensor
        getattr(tn, name)(*[to_tn(t.real) for t in ins], alpha=1j)


def test_complex_fill_values():
    x = crand((3, 4), "complex128", 40)
    idx = torch.tensor([0, 2])
    close(to_tn(x).index_fill(1, to_tn(idx), 2 - 3j), x.index_fill(1, idx, 2 - 3j))
    close(to_tn(x).index_fill_(0, to_tn(idx), 1j), x.clone().index_fill_(0, idx, 1j))
    close(tn.constant_pad_nd(to_tn(x), (1, 0, 0, 1), 0.5j), torch.constant_pad_nd(x, (1, 0, 0, 1), 0.5j))
    close(tn.constant_pad_nd(to_tn(x), (2, 1), 1 - 1j), torch.constant_pad_nd(x, (2, 1), 1 - 1j))
    with pytest.raises(TypeError):   # F.pad's value is a float (constant_pad_nd's a Scalar), as torch
        torch.nn.functional.pad(x, (1, 2), value=1 + 1j)
    with pytest.raises(TypeError):
        tn.nn.functional.pad(to_tn(x), (1, 2), value=1 + 1j)
    with pytest.raises(RuntimeError):
        tn.zeros(3).index_fill(0, tn.tensor([1]), 1j)


@pytest.mark.parametrize("dtype", CPLX)
def test_convolutions(dtype):
    F, G = torch.nn.functional, tn.nn.functional
    x, w, b = crand((2, 3, 9), dtype, 50), crand((4, 3, 3), dtype, 51), crand((4,), dtype, 52)
    for kw in ({}, {"stride": 2, "padding": 1}, {"dilation": 2}):
        close(G.conv1d(to_tn(x), to_tn(w), to_tn(b), **kw), F.conv1d(x, w, b, **kw), 1e-4, 1e-4)
    x2, w2 = crand((1, 2, 5, 6), dtype, 53), crand((3, 2, 2, 3), dtype, 54)
    close(G.conv2d(to_tn(x2), to_tn(w2), None, padding=1), F.conv2d(x2, w2, None, padding=1), 1e-4, 1e-4)
    wt = crand((3, 2, 3), dtype, 56)
    close(G.conv_transpose1d(to_tn(x[:, :3]), to_tn(wt)), F.conv_transpose1d(x[:, :3], wt), 1e-4, 1e-4)
    if dtype == "complex128":   # gradients against torch's
        ts = [t.clone().requires_grad_() for t in (x, w, b)]
        os = [to_tn(t, True) for t in (x, w, b)]
        F.conv1d(*ts, padding=1).abs().sum().backward()
        G.conv1d(*os, padding=1).abs().sum().backward()
        for o, t in zip(os, ts):
            close(o.grad, t.grad, 1e-9, 1e-9)
    with pytest.raises(RuntimeError):
        G.conv1d(to_tn(x), to_tn(w.real), None)


def test_unfold_fold_linspace_logspace():
    x = crand((1, 2, 4, 5), "complex128", 60)
    u = torch.nn.functional.unfold(x, 2, padding=1)
    close(tn.nn.functional.unfold(to_tn(x), 2, padding=1), u)
    close(tn.nn.functional.fold(to_tn(u), (4, 5), 2, padding=1), torch.nn.functional.fold(u, (4, 5), 2, padding=1))
    for dtype in CPLX:
        for args in ((-3, 4.5, 7), (2, 2, 1), (0, 1, 0)):
            close(tn.linspace(*args, dtype=getattr(tn, dtype)), torch.linspace(*args, dtype=getattr(torch, dtype)))
            close(tn.logspace(*args, dtype=getattr(tn, dtype)), torch.logspace(*args, dtype=getattr(torch, dtype)))


def test_float_power_cov_corrcoef():
    a, b = crand((3, 4), "complex64", 70), crand((4,), "complex128", 71)
    close(tn.float_power(to_tn(a), to_tn(b)), torch.float_power(a, b))
    close(tn.float_power(to_tn(a.real), 2j), torch.float_power(a.real, 2j))
    with pytest.raises(RuntimeError):
        to_tn(a).float_power_(to_tn(b))
    x = crand((3, 6), "complex128", 72)
    close(tn.cov(to_tn(x)), torch.cov(x))
    close(tn.cov(to_tn(x), correction=0), torch.cov(x, correction=0))
    close(tn.corrcoef(to_tn(x)), torch.corrcoef(x))
    xt = x.clone().requires_grad_()
    xo = to_tn(x, True)
    torch.cov(xt).abs().sum().backward()
    tn.cov(xo).abs().sum().backward()
    close(xo.grad, xt.grad, 1e-9, 1e-9)


def test_gradcheck_convention():
    """complex inputs and outputs count as two real coordinates each (torch's gradcheck)"""
    z = to_tn(crand((3,), "complex128", 80), True)
    assert tn.autograd.gradcheck(lambda t: t * t.conj(), (z,))          # not holomorphic
    assert tn.autograd.gradcheck(lambda t: t.abs(), (z,))               # complex -> real
    r = tn.randn(3, dtype=tn.float64, requires_grad=True)
    assert tn.autograd.gradcheck(lambda a: tn.exp(tn.complex(a, 2 * a)), (r,))   # real -> complex
    assert tn.autograd.gradgradcheck(lambda t: (t * t).sin(), (z,))
    # a wrong gradient (a detached factor) fails, in torch too
    assert not tn.autograd.gradcheck(lambda t: t * t.detach(), (z,), raise_exception=False)
    zt = torch.randn(3, dtype=torch.complex128, requires_grad=True)
    assert not torch.autograd.gradcheck(lambda t: t * t.detach(), (zt,), raise_exception=False)


REFUSED = {
    "sort": lambda m, a, b: m.sort(a), "argsort": lambda m, a, b: m.argsort(a), "topk": lambda m, a, b: m.topk(a, 2),
    "clamp": lambda m, a, b: m.clamp(a, 0, 1), "lt": lambda m, a, b: a < b, "ge": lambda m, a, b: a >= b,
    "floor": lambda m, a, b: m.floor(a), "ceil": lambda m, a, b: m.ceil(a), "round": lambda m, a, b: m.round(a),
    "trunc": lambda m, a, b: m.trunc(a), "sign": lambda m, a, b: m.sign(a), "maximum": lambda m, a, b: m.maximum(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b), "atan2": lambda m, a, b: m.atan2(a, b), "relu": lambda m, a, b: m.relu(a),
    "cummax": lambda m, a, b: m.cummax(a, 0), "unique": lambda m, a, b: m.unique(a), "isin": lambda m, a, b: m.isin(a, b),
    "nansum": lambda m, a, b: m.nansum(a), "isposinf": lambda m, a, b: m.isposinf(a), "isneginf": lambda m, a, b: m.isneginf(a),
    "deg2rad": lambda m, a, b: m.deg2rad(a), "rad2deg": lambda m, a, b: m.rad2deg(a), "log1p": lambda m, a, b: m.log1p(a),
    "expm1": lambda m, a, b: m.expm1(a), "erf": lambda m, a, b: m.erf(a), "heaviside": lambda m, a, b: m.heaviside(a, b),
    "logcumsumexp": lambda m, a, b: m.logcumsumexp(a, 0), "max_pool1d": lambda m, a, b: m.nn.functional.max_pool1d(a.reshape(1, 1, 3), 2),
    "layer_norm": lambda m, a, b: m.nn.functional.layer_norm(a, (3,)), "mse_loss": lambda m, a, b: m.nn.functional.mse_loss(a, b),
    "histc": lambda m, a, b: m.histc(a), "bucketize": lambda m, a, b: m.bucketize(a, m.tensor([0.0, 1.0])),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_torch(name):
    """what torch refuses on complex raises here too (never a wrong value)"""
    x, y = crand((3,), "complex64", 90), crand((3,), "complex64", 91)
    with pytest.raises(Exception):
        REFUSED[name](torch, x, y)
    with pytest.raises(Exception):
        REFUSED[name](tn, to_tn(x), to_tn(y))


def test_sum_dtype_names_complex():
    x = crand((2, 3), "complex64", 95)
    close(tn.sum(to_tn(x), 1, dtype=tn.complex128), torch.sum(x, 1, dtype=torch.complex128))
    close(to_tn(x.real).sum(0, dtype=tn.complex64), x.real.sum(0, dtype=torch.complex64))


OPTIMS = [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True)), ("Adam", dict(lr=0.1)),
          ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.01)), ("AdamW", dict(lr=0.1)), ("RMSprop", dict(lr=0.01)),
          ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)), ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5)),
          ("Adadelta", dict(lr=0.5)), ("Adamax", dict(lr=0.1)), ("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1))]


@pytest.mark.parametrize("name,kw", OPTIMS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMS)])
@pytest.mark.parametrize("noncontig", [False, True])
def test_optimizers_complex_params(name, kw, noncontig):
    """2025 PyTorch updates a complex parameter as view_as_real of it (1.13 refused amsgrad and
    ran NAdam in complex arithmetic): the reference is torch's optimizer on the real view"""
    start = crand((3, 2), "complex64", 99)
    c = torch.tensor([1j, 2, -1 + 1j], dtype=torch.complex64).reshape(3, 1)

    def loss_of(m, z):
        return (z * z.conj()).real.sum() + (z * (c if m is torch else to_tn(c))).real.sum() + (z * z).abs().sum()

    # (NAdam: tensor.h's real-parameter NAdam is not 1.13's, which its own tests review: the
    # reference is tensor.h's NAdam on the real view, the complex semantics being what is tested)
    ref = tn if name == "NAdam" else torch
    pr = torch.view_as_real(start.clone()).clone()
    pr = (to_tn(pr) if ref is tn else pr).requires_grad_()
    opt = getattr(ref.optim, name)([pr], **kw)
    p = tn.nn.Parameter(to_tn(start))
    if noncontig:   # a strided complex parameter: every other element of a leaf's storage
        leaf = to_tn(torch.stack([start, torch.zeros_like(start)], -1).permute(2, 0, 1).contiguous())
        p = leaf[0]
        p.requires_grad_(True)
    ours = getattr(tn.optim, name)([p], **kw)
    for _ in range(4):
        opt.zero_grad()
        loss_of(ref, ref.view_as_complex(pr)).backward()
        opt.step()
        ours.zero_grad()
        loss_of(tn, p).backward()
        ours.step()
    close(p, torch.view_as_complex(to_torch(pr) if ref is tn else pr.detach()), 1e-5, 1e-6)


def test_lbfgs_refuses_complex():
    p = tn.nn.Parameter(tn.zeros(3, dtype=tn.complex64))
    with pytest.raises(Exception, match="complex"):
        tn.optim.LBFGS([p])


def test_onnx_export_refuses_complex(tmp_path):
    """ONNX's complex types have almost no operators: a graph with complex values is refused
    clearly (an input, or a complex intermediate of real inputs), never written mistyped"""
    class Rot(tn.nn.Module):
        def forward(self, x):
            return tn.view_as_real(tn.view_as_complex(x) * (1 + 1j))

    class Id(tn.nn.Module):
        def forward(self, z):
            return z * 2

    with pytest.raises(Exception, match="complex"):
        tn.onnx.export(Id(), (tn.randn(3, dtype=tn.complex64),), str(tmp_path / "a.onnx"))
    with pytest.raises(Exception, match="(?i)complex"):   # (the trace itself refuses the complex views for now)
        tn.onnx.export(Rot(), (tn.randn(3, 2),), str(tmp_path / "b.onnx"))


RNG_REFUSED = {
    "geometric_": lambda m, t: t.geometric_(0.5), "bernoulli_": lambda m, t: t.bernoulli_(0.5),
    "exponential_": lambda m, t: t.exponential_(), "cauchy_": lambda m, t: t.cauchy_(), "log_normal_": lambda m, t: t.log_normal_(),
    "random_": lambda m, t: t.random_(0, 5), "bernoulli": lambda m, t: m.bernoulli(t), "poisson": lambda m, t: m.poisson(t),
    "randint": lambda m, t: m.randint(0, 5, (3,), dtype=t.dtype), "randperm": lambda m, t: m.randperm(3, dtype=t.dtype),
    "randint_like": lambda m, t: m.randint_like(t, 5), "dropout": lambda m, t: m.nn.functional.dropout(t, 0.5),
}


@pytest.mark.parametrize("name", sorted(RNG_REFUSED))
def test_random_refused_as_torch(name):
    with pytest.raises(RuntimeError):
        RNG_REFUSED[name](torch, torch.full((3,), 0.5, dtype=torch.complex64))
    with pytest.raises(RuntimeError):
        RNG_REFUSED[name](tn, tn.full((3,), 0.5, dtype=tn.complex64))


def test_normal_of_complex_means():
    m = torch.tensor([1 + 1j, 2 - 1j, 0j, 3j] * 5)
    torch.manual_seed(3)
    tn.manual_seed(3)
    close(tn.normal(to_tn(m), 2.0), torch.normal(m, 2.0), 1e-6, 1e-6)
