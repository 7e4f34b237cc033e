"""tensor.optim, tensor.optim.lr_scheduler, tensor.utils.data, tensor.save/load.

PyTorch 1.13 is the oracle where it is installed (those tests skip themselves
otherwise): every optimizer runs a few steps on both sides from the same values with
the same gradients, with two parameter groups and a learning-rate change through
``param_groups`` midway; schedulers produce the same learning rates epoch by epoch;
LBFGS follows the same path through the same closure. NAdam is checked against
PyTorch 2's algorithm written out here (torch 1.13's has a bug that 2.x fixed, and the C
library follows 2.x). Data loading, state dicts and files are checked by identities:
round trips, determinism, a file written by the C library read back.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_optim_data.py
"""
import gc
import fractions
import io
import json
import math
import os
import random
import struct
import sys
import warnings
from collections import OrderedDict, namedtuple

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402
from tensor import _C  # noqa: E402

optim, lr_scheduler = tn.optim, tn.optim.lr_scheduler
data = tn.utils.data

try:
    import torch
except ImportError:  # the oracle tests skip themselves
    torch = None


@pytest.fixture
def T():
    return pytest.importorskip("torch")


def _live():
    gc.collect()
    return tn.memory_stats()["live_tensors"]


def flat(x):
    return [v for row in x for v in (flat(row) if isinstance(row, list) else [row])] if isinstance(x, list) else [x]


def close(a, b, rtol=1e-12, atol=1e-14):
    a, b = flat(a), flat(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert abs(x - y) <= atol + rtol * abs(y), (x, y)


# --------------------------------------------------------------------------- optimizers vs torch
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, betas=(0.8, 0.99), amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, amsgrad=True, eps=1e-6)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, alpha=0.9)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adamax", dict(lr=0.1)),
    ("Adamax", dict(lr=0.1, weight_decay=0.1, betas=(0.5, 0.9))),
    ("RAdam", dict(lr=0.1)),
    ("RAdam", dict(lr=0.1, weight_decay=0.1)),
]


PY_ONLY = ("foreach", "fused", "capturable", "differentiable")   # defaults differ between torch versions


def _problem(seed, steps=8):
    rng = random.Random(seed)
    v = lambda n: [rng.uniform(-1, 1) for _ in range(n)]  # noqa: E731
    return v(12), v(4), [(v(12), v(4)) for _ in range(steps)]


def _run(lib, name, kw, w0, b0, grads, dtype="float64", group_lr=None):
    """Two params in two groups (the second with its own lr); lr of group 0 changed
    through param_groups after four steps. Returns the parameter values."""
    dt = getattr(lib, dtype)
    w = lib.tensor(w0, dtype=dt).reshape(3, 4).requires_grad_()
    b = lib.tensor(b0, dtype=dt).requires_grad_()
    groups = [{"params": [w]}, {"params": [b], "lr": group_lr or kw["lr"] * 0.5}]
    opt = getattr(lib.optim, name)(groups, **kw)
    for i, (gw, gb) in enumerate(grads):
        w.grad = lib.tensor(gw, dtype=dt).reshape(3, 4)
        b.grad = lib.tensor(gb, dtype=dt)
        if i == 4:
            opt.param_groups[0]["lr"] = kw["lr"] * 0.3
        opt.step()
    return w.tolist(), b.tolist(), opt


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_optimizer_vs_torch(T, name, kw):
    w0, b0, grads = _problem(sum(map(ord, name)) + len(kw))
    ours = _run(tn, name, kw, w0, b0, grads)
    ref = _run(torch, name, kw, w0, b0, grads)
    close(ours[0], ref[0], rtol=1e-12)
    close(ours[1], ref[1], rtol=1e-12)
    # param_groups read back as torch's (lr changed in group 0, group 1's own lr)
    for g_ours, g_ref in zip(ours[2].param_groups, ref[2].param_groups):
        for k, v in g_ref.items():
            if k == "params":
                assert len(g_ours[k]) == len(v)
            elif k not in PY_ONLY:
                assert g_ours[k] == v, (k, g_ours[k], v)


def test_optimizer_float32_vs_torch(T):
    w0, b0, grads = _problem(7)
    for name, kw in [("Adam", dict(lr=0.01)), ("SGD", dict(lr=0.1, momentum=0.9))]:
        ours = _run(tn, name, kw, w0, b0, grads, dtype="float32")
        ref = _run(torch, name, kw, w0, b0, grads, dtype="float32")
        close(ours[0], ref[0], rtol=1e-5, atol=1e-6)


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _nadam2(p, grads, lr, b1, b2, eps, wd, md, lrs=None):
    """PyTorch 2's _single_tensor_nadam on Python floats (mu_product a float32 tensor)."""
    p = list(p)
    m, v, mu_product = [0.0] * len(p), [0.0] * len(p), 1.0
    for step, g in enumerate(grads, 1):
        if lrs:
            lr = lrs[step - 1]
        g = [gi + wd * pi for gi, pi in zip(g, p)] if wd else list(g)
        bc2 = 1 - b2 ** step
        mu = b1 * (1. - 0.5 * (0.96 ** (step * md)))
        mu_next = b1 * (1. - 0.5 * (0.96 ** ((step + 1) * md)))
        mu_product = _f32(mu_product * _f32(mu))
        mu_product_next = mu_product * mu_next
        for i in range(len(p)):
            m[i] = m[i] + (1 - b1) * (g[i] - m[i])
            v[i] = v[i] * b2 + (1 - b2) * g[i] * g[i]
            den = math.sqrt(v[i] / bc2) + eps
            p[i] = p[i] + (-lr * (1. - mu) / (1. - mu_product)) * g[i] / den
            p[i] = p[i] + ((-lr * mu_next) / (1. - mu_product_next)) * m[i] / den
    return p


def test_nadam_vs_pytorch2_rule():
    w0, b0, grads = _problem(3)
    for kw in [dict(lr=0.1), dict(lr=0.1, weight_decay=0.1, momentum_decay=0.01, betas=(0.8, 0.9))]:
        w, b, _ = _run(tn, "NAdam", kw, w0, b0, grads, group_lr=kw["lr"])
        full = dict(lr=0.002, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3)
        full.update(kw)
        lrs = [full["lr"]] * 4 + [full["lr"] * 0.3] * 4
        ref_w = _nadam2(w0, [g[0] for g in grads], full["lr"], *full["betas"], full["eps"], full["weight_decay"],
                        full["momentum_decay"], lrs)
        ref_b = _nadam2(b0, [g[1] for g in grads], full["lr"], *full["betas"], full["eps"], full["weight_decay"],
                        full["momentum_decay"])
        close(flat(w), ref_w, rtol=1e-12)
        close(b, ref_b, rtol=1e-12)


def _rosenbrock(lib, x):
    return ((1 - x[0::2]) ** 2 + 100 * (x[1::2] - x[0::2] ** 2) ** 2).sum()


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_vs_torch(T, line_search):
    res, losses, calls = [], [], []
    for lib in (tn, torch):
        x = lib.tensor([-1.2, 1.0, -0.5, 0.8], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=0.5 if line_search is None else 1, max_iter=6, history_size=4,
                              line_search_fn=line_search)
        n = [0]

        def closure():
            n[0] += 1
            opt.zero_grad()
            loss = _rosenbrock(lib, x)
            loss.backward()
            return loss

        ls = [float(opt.step(closure)) for _ in range(3)]
        res.append(x.tolist())
        losses.append(ls)
        calls.append(n[0])
    close(res[0], res[1], rtol=1e-8)
    close(losses[0], losses[1], rtol=1e-8)
    assert calls[0] == calls[1]


def test_lbfgs_closure_exception_propagates():
    x = tn.tensor([1.0, 2.0], dtype=tn.float64, requires_grad=True)
    opt = optim.LBFGS([x], max_iter=5)
    count = [0]

    class Boom(Exception):
        pass

    def closure():
        count[0] += 1
        opt.zero_grad()
        loss = (x ** 2).sum()
        loss.backward()
        if count[0] == 2:
            raise Boom("from the closure")
        return loss

    with pytest.raises(Boom, match="from the closure"):
        opt.step(closure)
    assert count[0] == 2                         # C stopped calling it after the failure
    count[0] = 10
    loss = opt.step(closure)                    # still usable afterwards
    assert isinstance(loss, tn.Tensor) and float(loss) > 0
    with pytest.raises(RuntimeError, match="closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="could not convert"):
        opt.step(lambda: "not a number")


def test_step_closure_non_lbfgs():
    w = tn.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0 and w.tolist() == [0.0, 0.0]
    with tn.no_grad():                           # the closure runs with grad enabled anyway
        opt.step(closure)
    with pytest.raises(ZeroDivisionError):
        opt.step(lambda: 1 // 0)


# --------------------------------------------------------------------------- optimizer API
def test_param_groups_dict_like():
    a = tn.zeros(2, requires_grad=True)
    b = tn.zeros(3, requires_grad=True)
    opt = optim.Adam([{"params": [a]}, {"params": b, "lr": 0.5, "betas": (0.5, 0.6), "name": "head"}],
                     lr=0.01, weight_decay=0.1)
    g0, g1 = opt.param_groups
    assert g0["params"][0] is a and g1["params"][0] is b
    assert g0["lr"] == 0.01 and g1["lr"] == 0.5 and g1["betas"] == (0.5, 0.6) and g0["betas"] == (0.9, 0.999)
    assert g1["weight_decay"] == 0.1 and g1["amsgrad"] is False and g1["name"] == "head"
    assert list(g0)[:3] == ["params", "lr", "betas"] and "name" in g1 and "name" not in g0
    g0["lr"] = 0.02
    g0["betas"] = (0.7, 0.8)
    g0["amsgrad"] = True
    g0["my_key"] = [1, 2]
    assert g0["lr"] == 0.02 and g0["betas"] == (0.7, 0.8) and g0["amsgrad"] is True and g0["my_key"] == [1, 2]
    assert dict(g0)["lr"] == 0.02
    with pytest.raises(KeyError):
        g0["initial_lr"]
    with pytest.raises(RuntimeError):
        g0["params"] = []
    c = tn.zeros(1, requires_grad=True)
    opt.add_param_group({"params": [c], "lr": 3.0})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["lr"] == 3.0
    assert opt.param_groups[2]["weight_decay"] == 0.1           # from the constructor's defaults
    assert opt.defaults["lr"] == 0.01
    import copy
    d = copy.deepcopy(opt.param_groups)
    assert isinstance(d[0], dict) and d[0]["lr"] == 0.02 and d[0]["params"][0] is not a
    assert "Parameter Group 2" in repr(opt)


def test_param_groups_vs_torch_keys(T):
    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "LBFGS"]:
        ours = getattr(optim, name)([tn.zeros(2, requires_grad=True)], lr=0.1)
        ref = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], lr=0.1)
        for k, v in ref.param_groups[0].items():
            if k != "params" and k not in PY_ONLY:
                assert k in ours.param_groups[0], (name, k)
                assert ours.param_groups[0][k] == v, (name, k, ours.param_groups[0][k], v)


def test_zero_grad_and_frozen_params():
    w = tn.ones(3, requires_grad=True)
    frozen = tn.ones(2)                           # torch keeps it and never updates it
    opt = optim.SGD([w, frozen], lr=1.0)
    assert frozen.requires_grad is False
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    (w * 2).sum().backward()
    opt.step()
    assert w.tolist() == [-1.0, -1.0, -1.0] and frozen.tolist() == [1.0, 1.0]


def test_optimizer_keeps_params_alive():
    def make():
        model = tn.nn.Linear(3, 1)
        return optim.SGD(model.parameters(), lr=0.1)

    opt = make()
    gc.collect()
    p = opt.param_groups[0]["params"][0]
    x = tn.ones(2, 3)
    (x @ p.t()).sum().backward()
    before = p.tolist()
    opt.step()
    assert p.tolist() != before


def test_state_property():
    w = tn.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    assert opt.state[w] == {}
    w.sum().backward()
    opt.step()
    st = opt.state[w]
    assert list(st) == ["step", "exp_avg", "exp_avg_sq"] and float(st["step"]) == 1.0
    assert len(opt.state) == 1


def test_optimizer_errors(T):
    w = tn.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid momentum value"):
        optim.SGD([w], lr=0.1, momentum=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(RuntimeError, match="capturable=True is not supported"):
        optim.RMSprop([w], capturable=True)
    assert optim.Adam([w], capturable=True).param_groups[0]["capturable"] is True   # its step needs a GPU
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [w]}, {"params": [tn.zeros(1, requires_grad=True)]}])
    with pytest.raises(TypeError):
        optim.SGD([w], lr=0.1, betas=(0.9, 0.99))
    with pytest.raises(RuntimeError, match="tn_optim_lbfgs: .*integer"):
        optim.LBFGS([w], max_iter=2.5)
    lb = optim.LBFGS([w])
    with pytest.raises(ValueError, match="strong_wolfe"):
        lb.param_groups[0]["line_search_fn"] = "backtracking"
    with pytest.warns(UserWarning, match="duplicate parameters"):
        opt2 = optim.SGD([w, w], lr=0.1)
    assert len(opt2.param_groups[0]["params"]) == 1
    # torch raises the same kinds
    with pytest.raises(ValueError):
        torch.optim.Adam([torch.zeros(2, requires_grad=True)], lr=-1)


def test_python_optimizer_subclass():
    class MySGD(optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.0):
            super().__init__(params, dict(lr=lr, momentum=momentum))

        @tn.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    if "momentum_buffer" not in st:
                        st["momentum_buffer"] = p.grad.clone()
                    else:
                        st["momentum_buffer"].mul_(group["momentum"]).add_(p.grad)
                    p.add_(st["momentum_buffer"], alpha=-group["lr"])

    def make(cls, vals):
        ps = [tn.tensor(v, dtype=tn.float64).requires_grad_() for v in vals]
        return ps, cls([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}], lr=0.1, momentum=0.9)

    vals = [[1.0, 2.0, 3.0], [0.5, -0.5]]
    pa, a = make(MySGD, vals)
    pc, c = make(optim.SGD, vals)
    assert type(a.param_groups[1]) is dict and a.param_groups[1] == {"params": pa[1:], "lr": 0.05, "momentum": 0.9}
    _train(a, pa, 3, 1)
    _train(c, pc, 3, 1)
    close([p.tolist() for p in pa], [p.tolist() for p in pc], rtol=1e-15)
    sd = a.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][1]["params"] == [1]
    pb, b = make(MySGD, [p.tolist() for p in pa])
    b.load_state_dict(sd)
    assert b.param_groups[1]["params"][0] is pb[1] and set(b.state) == set(pb)
    _train(a, pa, 2, 2)
    _train(b, pb, 2, 2)
    assert [p.tolist() for p in pa] == [p.tolist() for p in pb]
    a.zero_grad()
    assert all(p.grad is None for p in pa)
    with pytest.raises(NotImplementedError, match="Python optimizer"):
        lr_scheduler.StepLR(a, 2)
    with pytest.raises(NotImplementedError):
        optim.Optimizer(pa, {}).step()


# --------------------------------------------------------------------------- state dicts
def _train(opt, params, steps, seed):
    rng = random.Random(seed)
    for _ in range(steps):
        for p in params:
            p.grad = tn.tensor([rng.uniform(-1, 1) for _ in range(p.numel())], dtype=p.dtype).reshape(tuple(p.shape))
        opt.step()


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1, amsgrad=True)),
                                     ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1)), ("NAdam", dict(lr=0.1)), ("Adadelta", {}),
                                     ("Adamax", {}), ("RAdam", {}), ("AdamW", {})])
def test_state_dict_round_trip(name, kw, tmp_path):
    def make(vals):
        ps = [tn.tensor(v, dtype=tn.float64).requires_grad_() for v in vals]
        return ps, getattr(optim, name)([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}], **kw)

    pa, a = make([[1.0, 2.0, 3.0], [0.5, -0.5]])
    _train(a, pa, 3, 1)
    sd = a.state_dict()
    assert set(sd) == {"state", "param_groups"} and sorted(sd["state"]) == [0, 1]
    assert sd["param_groups"][0]["params"] == [0] and sd["param_groups"][1]["params"] == [1]
    assert sd["param_groups"][1]["lr"] == 0.05
    pb, b = make([p.tolist() for p in pa])
    b.load_state_dict(sd)
    path = str(tmp_path / "opt.safetensors")
    tn.save(sd, path)
    pc, c = make([p.tolist() for p in pa])
    c.load_state_dict(tn.load(path))
    for opt, ps in ((a, pa), (b, pb), (c, pc)):
        _train(opt, ps, 3, 2)
    for x, y, z in zip(pa, pb, pc):
        assert x.tolist() == y.tolist() == z.tolist()


def test_state_dict_vs_torch_layout(T):
    ours_p = tn.tensor([1.0, 2.0], requires_grad=True)
    ref_p = torch.tensor([1.0, 2.0], requires_grad=True)
    ours, ref = optim.Adam([ours_p], lr=0.1), torch.optim.Adam([ref_p], lr=0.1)
    for p, o in ((ours_p, ours), (ref_p, ref)):
        p.grad = (p * 0 + 1).detach()
        o.step()
    a, b = ours.state_dict(), ref.state_dict()
    assert list(a["state"][0]) == list(b["state"][0])
    for k in b["state"][0]:
        assert a["state"][0][k].tolist() == b["state"][0][k].tolist()
    assert a["param_groups"][0]["params"] == b["param_groups"][0]["params"]
    for k, v in b["param_groups"][0].items():
        if k not in PY_ONLY:
            assert a["param_groups"][0][k] == v, k
    # torch's state dict loads into ours
    c = optim.Adam([tn.tensor([1.0, 2.0], requires_grad=True)], lr=0.3)
    tsd = {"state": {i: {k: tn.tensor(v.tolist()) for k, v in s.items()} for i, s in b["state"].items()},
           "param_groups": b["param_groups"]}
    c.load_state_dict(tsd)
    assert c.param_groups[0]["lr"] == 0.1 and c.state_dict()["state"][0]["exp_avg"].tolist() == \
        b["state"][0]["exp_avg"].tolist()


def test_lbfgs_state_dict_round_trip():
    def make():
        x = tn.tensor([-1.2, 1.0], dtype=tn.float64, requires_grad=True)
        return x, optim.LBFGS([x], max_iter=3, line_search_fn="strong_wolfe")

    def closure_for(x, opt):
        def closure():
            opt.zero_grad()
            loss = _rosenbrock(tn, x)
            loss.backward()
            return loss
        return closure

    x, a = make()
    a.step(closure_for(x, a))
    sd = a.state_dict()
    assert sd["param_groups"][0]["line_search_fn"] == "strong_wolfe" and "old_dirs" in sd["state"][0]
    y, b = make()
    with tn.no_grad():
        y.copy_(x)
    b.load_state_dict(sd)
    a.step(closure_for(x, a))
    b.step(closure_for(y, b))
    assert x.tolist() == y.tolist()


def test_load_state_dict_errors():
    w, v = tn.zeros(2, requires_grad=True), tn.zeros(3, requires_grad=True)
    a = optim.SGD([w], lr=0.1, momentum=0.9)
    b = optim.SGD([{"params": [w]}, {"params": [v]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        a.load_state_dict(b.state_dict())
    c = optim.SGD([w, v], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        a.load_state_dict(c.state_dict())
    sd = a.state_dict()
    sd["state"] = {0: {"momentum_buffer": tn.zeros(5)}}
    with pytest.raises(RuntimeError, match="tn_optim_load_state_dict: .*shape"):
        a.load_state_dict(sd)
    assert a.state_dict()["state"] == {}                      # nothing changed


def test_optimizer_state_from_c_checkpoint(tmp_path):
    """An optimizer state dict the C library flattened and saved (tn_optim_state_dict +
    tn_safetensors_save) loads through tensor.load and load_state_dict (flat layout)."""
    w = tn.tensor([1.0, 2.0], dtype=tn.float64, requires_grad=True)
    a = optim.Adam([w], lr=0.1)
    _train(a, [w], 2, 5)
    d = _C.lib.tn_optim_state_dict(a._o)
    path = str(tmp_path / "c_opt.safetensors").encode()
    try:
        assert _C.lib.tn_safetensors_save(path, d) == 0
    finally:
        _C.lib.tn_dict_free(d)
    loaded = tn.load(path.decode())
    assert isinstance(loaded, OrderedDict) and "state.0.exp_avg" in loaded and "param_groups.0.lr" in loaded
    w2 = tn.tensor(w.tolist(), dtype=tn.float64, requires_grad=True)
    b = optim.Adam([w2], lr=0.7)
    b.load_state_dict(loaded)
    assert b.param_groups[0]["lr"] == 0.1
    _train(a, [w], 2, 6)
    _train(b, [w2], 2, 6)
    assert w.tolist() == w2.tolist()


# --------------------------------------------------------------------------- schedulers
SCHEDS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.01)),
    ("LinearLR", dict(start_factor=0.2, total_iters=6)),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], total_steps=25)),
    ("OneCycleLR", dict(max_lr=0.8, epochs=5, steps_per_epoch=5, anneal_strategy="linear", three_phase=True)),
]


def _sched_run(lib, name, kw, opt_name="SGD", epochs=20):
    p, q = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
    okw = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.1)
    opt = getattr(lib.optim, opt_name)([{"params": [p]}, {"params": [q], "lr": 0.01}], **okw)
    s = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
    out = [(s.get_last_lr(), [g["lr"] for g in opt.param_groups],
            [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups])]
    for _ in range(epochs):
        opt.step()
        s.step()
        out.append((s.get_last_lr(), [g["lr"] for g in opt.param_groups],
                    [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups]))
    return out, s


@pytest.mark.parametrize("name,kw", SCHEDS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDS)])
def test_scheduler_vs_torch(T, name, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        epochs = 24 if name == "OneCycleLR" else 20
        for opt_name in (["SGD", "Adam"] if name == "OneCycleLR" else ["SGD"]):
            ours, s = _sched_run(tn, name, kw, opt_name, epochs)
            ref, r = _sched_run(torch, name, kw, opt_name, epochs)
            for (a1, a2, a3), (b1, b2, b3) in zip(ours, ref):
                close(a1, b1, rtol=1e-12)
                close(a2, b2, rtol=1e-12)
                close(a3, b3, rtol=1e-12)
            assert s.last_epoch == r.last_epoch and s.base_lrs == r.base_lrs


def test_lambda_and_sequential_vs_torch(T):
    def run(lib):
        p = lib.zeros(1, requires_grad=True)
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.5}], lr=1.0)
        lam = lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 0.9 ** e, lambda e: 1.0 / (e + 1)])
        lrs = [lam.get_last_lr()]
        for _ in range(5):
            opt.step()
            lam.step()
            lrs.append(lam.get_last_lr())
        opt2 = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        warm = lib.optim.lr_scheduler.LinearLR(opt2, start_factor=0.1, total_iters=3)
        decay = lib.optim.lr_scheduler.ExponentialLR(opt2, gamma=0.5)
        seq = lib.optim.lr_scheduler.SequentialLR(opt2, [warm, decay], milestones=[3])
        for _ in range(8):
            opt2.step()
            seq.step()
            lrs.append(seq.get_last_lr() + [opt2.param_groups[0]["lr"]])
        opt3 = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        chain = lib.optim.lr_scheduler.ChainedScheduler([lib.optim.lr_scheduler.ConstantLR(opt3, factor=0.5,
                                                                                            total_iters=2),
                                                         lib.optim.lr_scheduler.ExponentialLR(opt3, gamma=0.9)])
        for _ in range(4):
            opt3.step()
            chain.step()
            lrs.append(chain.get_last_lr())
        return lrs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, ref = run(tn), run(torch)
    for a, b in zip(ours, ref):
        close(a, b, rtol=1e-12)


def test_reduce_lr_on_plateau_vs_torch(T):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.7, 0.7, 0.7]

    def run(lib, **kw):
        opt = lib.optim.SGD([{"params": [lib.zeros(1, requires_grad=True)]},
                             {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.05}], lr=0.1)
        s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        out = []
        for m in metrics:
            s.step(lib.tensor(m) if kw.get("mode") == "max" else m)
            out.append([g["lr"] for g in opt.param_groups])
        return out

    for kw in [dict(patience=1, factor=0.5), dict(mode="max", patience=0, cooldown=1, min_lr=[0.02, 0.04]),
               dict(threshold_mode="abs", threshold=0.06, patience=1)]:
        close(run(tn, **kw), run(torch, **kw), rtol=1e-12)


def test_lambda_exception_propagates():
    opt = optim.SGD([tn.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ZeroDivisionError):
        lr_scheduler.LambdaLR(opt, lambda e: 1 / 0)
    assert opt.param_groups[0]["lr"] == 1.0

    def lam(e):
        if e == 2:
            raise KeyError("epoch 2")
        return 0.5 ** e

    s = lr_scheduler.LambdaLR(opt, lam)
    s.step()
    assert s.get_last_lr() == [0.5]
    with pytest.raises(KeyError, match="epoch 2"):
        s.step()
    assert opt.param_groups[0]["lr"] == 0.5                  # left as it was


def test_scheduler_errors_and_resume():
    opt = optim.SGD([tn.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR("nope", 1)
    with pytest.raises(RuntimeError, match="step_size"):
        lr_scheduler.StepLR(opt, 0)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        lr_scheduler.SequentialLR(opt, [lr_scheduler.ExponentialLR(opt, 0.5)], milestones=[3])
    with pytest.raises(NotImplementedError):
        lr_scheduler.StepLR(opt, 2).step(3)
    with pytest.raises(RuntimeError, match="Tried to step"):
        s = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
        for _ in range(4):
            s.step()
    # state_dict: replayed into a new scheduler on an optimizer that resumed
    opt = optim.SGD([tn.zeros(1, requires_grad=True)], lr=1.0)
    s = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(5):
        s.step()
    opt2 = optim.SGD([tn.zeros(1, requires_grad=True)], lr=1.0)
    s2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    s2.load_state_dict(s.state_dict())
    assert s2.last_epoch == 5 and s2.get_last_lr() == s.get_last_lr() == [0.25]


def test_clip_grad(T):
    vals = [[3.0, -4.0], [1.0, 2.0, -2.0]]
    for norm_type in (2.0, 1.0, math.inf):
        res = []
        for lib in (tn, torch):
            ps = [lib.tensor(v, requires_grad=True) for v in vals]
            for p in ps:
                p.grad = (p * 2).detach()
            total = lib.nn.utils.clip_grad_norm_(ps, 1.5, norm_type=norm_type)
            res.append((float(total), [p.grad.tolist() for p in ps]))
        assert abs(res[0][0] - res[1][0]) < 1e-5
        close(flat(res[0][1]), flat(res[1][1]), rtol=1e-5, atol=1e-6)
    ps = [tn.tensor(v, requires_grad=True) for v in vals]
    for p in ps:
        p.grad = (p * 2).detach()
    tn.nn.utils.clip_grad_value_(ps, 3.0)
    assert ps[0].grad.tolist() == [3.0, -3.0] and ps[1].grad.tolist() == [2.0, 3.0, -3.0]


def test_training_loop_memory_is_flat():
    model = tn.nn.Sequential(tn.nn.Linear(4, 8), tn.nn.ReLU(), tn.nn.Linear(8, 2))
    opt = optim.Adam(model.parameters(), lr=0.01)
    sched = lr_scheduler.StepLR(opt, 5)
    x, y = tn.randn(16, 4), tn.randint(0, 2, (16,))
    counts = []
    for i in range(30):
        opt.zero_grad()
        loss = tn.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        if i in (9, 29):
            del loss
            counts.append(_live())
    assert counts[0] == counts[1]
    before = _live()
    del opt, sched
    gc.collect()
    assert _live() <= before


# --------------------------------------------------------------------------- data
def test_tensor_dataset_and_dataloader():
    x = tn.arange(10 * 3, dtype=tn.float32).reshape(10, 3)
    y = tn.arange(10)
    ds = data.TensorDataset(x, y)
    assert len(ds) == 10 and ds[2][0].tolist() == [6.0, 7.0, 8.0] and ds[2][1].item() == 2
    dl = data.DataLoader(ds, batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert isinstance(batches[0], list) and len(batches[0]) == 2
    assert [tuple(b[0].shape) for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert batches[2][1].tolist() == [8, 9] and batches[0][1].dtype == tn.int64
    dl = data.DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [len(b[1]) for b in dl] == [4, 4]
    with pytest.raises(AssertionError, match="Size mismatch"):
        data.TensorDataset(x, tn.arange(9))


class _Squares(data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": tn.tensor([float(i), float(i * i)]), "i": i, "f": i / 2, "name": f"s{i}", "pair": (i, -i)}


def test_collate_structures_vs_torch(T):
    from torch.utils.data import default_collate as tdc
    batch = [_Squares(5)[i] for i in range(3)]
    ours = data.default_collate(batch)
    tbatch = [{k: (torch.tensor(v.tolist()) if isinstance(v, tn.Tensor) else v) for k, v in b.items()} for b in batch]
    ref = tdc(tbatch)
    assert list(ours) == list(ref)
    assert ours["x"].tolist() == ref["x"].tolist() and str(ours["x"].dtype) == str(ref["x"].dtype)
    assert ours["i"].tolist() == ref["i"].tolist() and str(ours["i"].dtype) == str(ref["i"].dtype)
    assert ours["f"].tolist() == ref["f"].tolist() and str(ours["f"].dtype) == str(ref["f"].dtype)
    assert ours["name"] == ref["name"]
    assert type(ours["pair"]) is type(ref["pair"]) is list
    assert [p.tolist() for p in ours["pair"]] == [p.tolist() for p in ref["pair"]]
    P = namedtuple("P", "a b")
    nt = data.default_collate([P(1, True), P(2, False)])
    assert type(nt) is P and nt.a.tolist() == [1, 2] and nt.b.dtype == tn.bool
    lists = data.default_collate([[1.0, 2], [3.0, 4]])
    assert type(lists) is list and lists[0].dtype == tn.float64
    with pytest.raises(RuntimeError, match="equal size"):
        data.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate"):
        data.default_collate([object(), object()])


def test_dataloader_python_dataset_and_options():
    ds = _Squares(7)
    dl = data.DataLoader(ds, batch_size=3, collate_fn=lambda b: [s["i"] for s in b], num_workers=2)
    assert list(dl) == [[0, 1, 2], [3, 4, 5], [6]]
    one = list(data.DataLoader(ds, batch_size=None))
    assert len(one) == 7 and one[3]["i"] == 3 and isinstance(one[3]["x"], tn.Tensor)
    b = next(iter(data.DataLoader(ds, batch_size=2)))
    assert b["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]] and b["i"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="mutually exclusive"):
        data.DataLoader(ds, sampler=data.SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        data.DataLoader(ds, batch_sampler=[[0, 1]], batch_size=2)
    with pytest.raises(ValueError, match="drop_last"):
        data.DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers"):
        data.DataLoader(ds, num_workers=-1)
    bs = data.DataLoader(ds, batch_sampler=[[6, 0], [3]], collate_fn=lambda b: [s["i"] for s in b])
    assert list(bs) == [[6, 0], [3]] and len(bs) == 2
    assert data.get_worker_info() is None

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in data.DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in data.DataLoader(Stream(), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="IterableDataset"):
        data.DataLoader(Stream(), shuffle=True)


# --------------------------------------------------------------------------- DataLoader worker processes
class _WorkerError(Exception):
    pass


class _Probe(data.Dataset):
    """Sample i: (x[i], the worker's id, its seed, what worker_init_fn left, a random draw)."""

    def __init__(self, n=12, fail_at=None, exc=ValueError, die_at=None, sleep=0.0):
        self.x = tn.arange(float(n * 2)).reshape(n, 2)
        self.n, self.fail_at, self.exc, self.die_at, self.sleep = n, fail_at, exc, die_at, sleep

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise self.exc(f"sample {i} is broken")
        if i == self.die_at:
            os._exit(3)
        if self.sleep:
            import time
            time.sleep(self.sleep)
        info = data.get_worker_info()
        return (self.x[i], -1 if info is None else info.id, -1 if info is None else info.seed,
                _init_marks.get("id", -1), tn.rand(1).item())


_init_marks = {}


def _init_fn(worker_id):
    _init_marks["id"] = worker_id * 10


def _batches(dl):
    return [[t.tolist() if isinstance(t, tn.Tensor) else t for t in b] for b in dl]


def test_dataloader_workers_same_batches_as_in_process():
    x, y = tn.arange(40.0).reshape(20, 2), tn.arange(20)
    for kw in (dict(batch_size=3), dict(batch_size=4, shuffle=True, drop_last=True), dict(batch_size=None),
               dict(batch_size=5, sampler=data.SubsetRandomSampler(list(range(0, 20, 3))))):
        for ds in (data.TensorDataset(x, y), data.Subset(data.TensorDataset(x, y), list(range(19, -1, -1))),
                   _Probe(20)):
            got = {}
            for nw in (0, 1, 3):
                tn.manual_seed(5)
                b = _batches(data.DataLoader(ds, num_workers=nw, **kw))
                got[nw] = [[v for j, v in enumerate(t) if not isinstance(ds, _Probe) or j == 0] for t in b]
            assert got[0] == got[1] == got[3], (kw, type(ds).__name__)
    # a second epoch, and a shuffled one, agree too (the workers draw nothing from the sampler's generator)
    dl0 = data.DataLoader(data.TensorDataset(x), batch_size=6, shuffle=True)
    dl2 = data.DataLoader(data.TensorDataset(x), batch_size=6, shuffle=True, num_workers=2, prefetch_factor=1)
    tn.manual_seed(9)
    a = [_batches(dl0), _batches(dl0)]
    tn.manual_seed(9)
    assert [_batches(dl2), _batches(dl2)] == a


def test_dataloader_worker_info_init_fn_and_seeds():
    assert data.get_worker_info() is None
    tn.manual_seed(0)
    rows = [r for b in data.DataLoader(_Probe(12), batch_size=2, num_workers=3, worker_init_fn=_init_fn)
            for r in zip(*[t.tolist() if isinstance(t, tn.Tensor) else t for t in b])]
    ids = [r[1] for r in rows]
    assert ids == [0, 0, 1, 1, 2, 2] * 2                      # round-robin, one batch per task
    seeds = {r[1]: r[2] for r in rows}
    assert seeds[1] == seeds[0] + 1 and seeds[2] == seeds[0] + 2  # base_seed + id
    assert [r[3] for r in rows] == [i * 10 for i in ids]         # worker_init_fn ran in each worker
    draws = [r[4] for r in rows]
    assert len(set(draws)) == len(draws)                         # the workers' generators differ
    tn.manual_seed(0)
    again = [r[4] for b in data.DataLoader(_Probe(12), batch_size=2, num_workers=3)
             for r in zip(*[t.tolist() if isinstance(t, tn.Tensor) else t for t in b])]
    assert again == draws                                        # and manual_seed decides them
    assert "_init_marks" not in globals() or _init_marks.get("id") is None   # set in the workers only

    class Shards(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            assert info.dataset is self                    # the worker's (forked) copy
            with pytest.raises(RuntimeError, match="Cannot assign"):
                info.id = 5
            return iter(range(info.id, 11, info.num_workers))

    got = [b.tolist() for b in data.DataLoader(Shards(), batch_size=3, num_workers=2)]
    assert got == [[0, 2, 4], [1, 3, 5], [6, 8, 10], [7, 9]]     # torch's interleaving of the streams
    got = list(data.DataLoader(Shards(), batch_size=None, num_workers=3))
    assert got == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert repr(data.WorkerInfo(id=1, num_workers=2, seed=3, dataset=None)) == \
        "WorkerInfo(id=1, num_workers=2, seed=3, dataset=None)"


def test_dataloader_worker_errors_surface_with_their_traceback():
    dl = data.DataLoader(_Probe(8, fail_at=5), batch_size=2, num_workers=2)
    it = iter(dl)
    assert next(it)[0].tolist() == [[0.0, 1.0], [2.0, 3.0]] and next(it)[0].shape == (2, 2)
    with pytest.raises(ValueError) as e:
        next(it)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):")
    assert "raise self.exc(f\"sample {i} is broken\")" in msg and msg.rstrip().endswith("ValueError: sample 5 is broken")
    assert next(it)[0].shape == (2, 2)                           # the loader goes on, as torch's
    del it
    with pytest.raises(_WorkerError, match="Caught _WorkerError in DataLoader worker process 1"):
        list(data.DataLoader(_Probe(8, fail_at=3, exc=_WorkerError), batch_size=1, num_workers=2))
    with pytest.raises(KeyError) as e:
        list(data.DataLoader(_Probe(8, fail_at=1, exc=KeyError), batch_size=None, num_workers=2))
    assert str(e.value).startswith("Caught KeyError")             # printed as text, not a repr

    class Local(Exception):                                      # cannot be pickled back by name
        pass

    with pytest.raises(RuntimeError, match="Caught Local in DataLoader worker process"):
        list(data.DataLoader(_Probe(4, fail_at=0, exc=Local), batch_size=1, num_workers=2))

    def bad_init(worker_id):
        raise ValueError(f"init of {worker_id}")

    with pytest.raises(ValueError, match="init of 0"):
        list(data.DataLoader(_Probe(4), batch_size=1, num_workers=2, worker_init_fn=bad_init))
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(data.DataLoader(_Probe(8, die_at=2), batch_size=2, num_workers=2))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        list(data.DataLoader(_Probe(4, sleep=1.0), batch_size=1, num_workers=1, timeout=0.2))
    with pytest.raises(ValueError, match="prefetch_factor option should be positive"):
        data.DataLoader(_Probe(4), num_workers=1, prefetch_factor=0)
    with pytest.raises(ValueError, match="multiprocessing_context"):
        data.DataLoader(_Probe(4), num_workers=1, multiprocessing_context="nope")


def test_dataloader_workers_persistent_and_shut_down():
    import multiprocessing as mp
    x = tn.arange(30.0)
    ds = data.TensorDataset(x)
    dl = data.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)
    first = _batches(dl)
    pids = [w.pid for w in dl._iterator._workers]
    it = iter(dl)
    next(it)                                   # leave an epoch in the middle ...
    assert _batches(dl) == first               # ... the next one starts clean
    assert [w.pid for w in dl._iterator._workers] == pids and all(w.is_alive() for w in dl._iterator._workers)
    del dl, it
    gc.collect()
    it = iter(data.DataLoader(ds, batch_size=2, num_workers=3))
    next(it)
    workers = it._workers
    del it                                     # breaking out of a loop stops the workers
    gc.collect()
    assert not any(w.is_alive() for w in workers)
    assert [c for c in mp.active_children() if c in workers] == []
    assert len(data.DataLoader(ds, batch_size=4, num_workers=2)) == 8
    # a spawned worker imports the package itself; tensors come back through pickling
    got = _batches(data.DataLoader(ds, batch_size=8, num_workers=1, multiprocessing_context="spawn"))
    assert got == [[x[i:i + 8].tolist()] for i in range(0, 30, 8)]


def test_shuffle_determinism():
    x = tn.arange(20)
    ds = data.TensorDataset(x)

    def epoch(dl):
        return [v for b in dl for v in b[0].tolist()]

    tn.manual_seed(1)
    dl = data.DataLoader(ds, batch_size=6, shuffle=True)
    e1, e2 = epoch(dl), epoch(dl)
    assert sorted(e1) == list(range(20)) and e1 != e2 and e1 != list(range(20))
    tn.manual_seed(1)
    assert epoch(dl) == e1 and epoch(dl) == e2
    g = tn.Generator().manual_seed(3)
    a = epoch(data.DataLoader(ds, batch_size=6, shuffle=True, generator=g))
    g.manual_seed(3)
    assert epoch(data.DataLoader(ds, batch_size=6, shuffle=True, generator=g)) == a
    # the TensorDataset fast path and a plain Python dataset give the same batches
    class Same(data.Dataset):
        def __len__(self):
            return 20

        def __getitem__(self, i):
            return (x[i],)

    tn.manual_seed(4)
    fast = [b[0].tolist() for b in data.DataLoader(ds, batch_size=6, shuffle=True)]
    tn.manual_seed(4)
    slow = [b[0].tolist() for b in data.DataLoader(Same(), batch_size=6, shuffle=True)]
    assert fast == slow
    rs = list(data.RandomSampler(ds, replacement=True, num_samples=50, generator=g))
    assert len(rs) == 50 and all(0 <= i < 20 for i in rs)
    assert sorted(data.SubsetRandomSampler([3, 5, 7])) == [3, 5, 7]


def test_random_split(T):
    ds = data.TensorDataset(tn.arange(10))
    a, b = data.random_split(ds, [7, 3], generator=tn.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3
    ids = sorted(a.indices + b.indices)
    assert ids == list(range(10))
    a2, _ = data.random_split(ds, [7, 3], generator=tn.Generator().manual_seed(0))
    assert a2.indices == a.indices
    assert a[0][0].item() == a.indices[0]
    for fr in ([0.5, 0.3, 0.2], [0.33, 0.33, 0.34], [0.1, 0.9], [1 / 3] * 3):
        ours = [len(s) for s in data.random_split(range(11), fr)]
        ref = [len(s) for s in torch.utils.data.random_split(range(11), fr)]
        assert ours == ref, fr
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(ds, [5, 6])
    with pytest.raises(ValueError, match="not between 0 and 1"):
        data.random_split(ds, [1.5, -0.5])
    sub = data.Subset(ds, [4, 2])
    dl = data.DataLoader(data.Subset(sub, [1, 0]), batch_size=2)
    assert next(iter(dl))[0].tolist() == [2, 4]
    cat = data.ConcatDataset([sub, ds])
    assert len(cat) == 12 and cat[1][0].item() == 2 and cat[2][0].item() == 0 and cat[-1][0].item() == 9
    assert len(sub + ds) == 12


# --------------------------------------------------------------------------- save / load
def test_save_load_round_trip(tmp_path):
    model = tn.nn.Sequential(tn.nn.Linear(3, 4), tn.nn.BatchNorm1d(4))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(tn.randn(5, 3)).sum().backward()
    opt.step()
    ckpt = {"epoch": 3, "loss": 0.25, "model": model.state_dict(), "optimizer": opt.state_dict(),
            "tags": ("a", None, True, float("inf")), "hist": [tn.ones(2), 1.5]}
    path = str(tmp_path / "ckpt.pt")
    tn.save(ckpt, path)
    back = tn.load(path)
    assert back["epoch"] == 3 and back["loss"] == 0.25 and back["tags"] == ("a", None, True, math.inf)
    assert isinstance(back["model"], OrderedDict) and list(back["model"]) == list(model.state_dict())
    for k, v in model.state_dict().items():
        assert back["model"][k].tolist() == v.tolist() and back["model"][k].dtype == v.dtype
    assert back["optimizer"]["param_groups"] == opt.state_dict()["param_groups"]
    assert back["hist"][0].tolist() == [1.0, 1.0] and back["hist"][1] == 1.5
    m2 = tn.nn.Sequential(tn.nn.Linear(3, 4), tn.nn.BatchNorm1d(4))
    m2.load_state_dict(back["model"])
    opt2 = optim.SGD(m2.parameters(), lr=0.5, momentum=0.9)
    opt2.load_state_dict(back["optimizer"])
    assert opt2.param_groups[0]["lr"] == 0.1
    # file objects, a bare tensor, and pickled leftovers (refused with weights_only=True)
    buf = io.BytesIO()
    tn.save(tn.arange(4), buf)
    buf.seek(0)
    assert tn.load(buf).tolist() == [0, 1, 2, 3]
    buf = io.BytesIO()
    tn.save({"obj": fractions.Fraction(1, 3)}, buf)   # a class outside the weights-only allow-list
    buf.seek(0)
    assert tn.load(buf, weights_only=False)["obj"] == fractions.Fraction(1, 3)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="weights_only"):
        tn.load(buf, weights_only=True)


def test_save_flat_dict_is_plain_safetensors(tmp_path):
    sd = OrderedDict([("w", tn.ones(2, 3)), ("b", tn.zeros(3, dtype=tn.float64)), ("n", tn.tensor(7))])
    path = str(tmp_path / "m.safetensors")
    tn.save(sd, path)
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    assert header["w"]["dtype"] == "F32" and header["w"]["shape"] == [2, 3]
    assert header["b"]["dtype"] == "F64" and header["n"]["dtype"] == "I64"
    assert "tensor.h/structure" in header["__metadata__"]
    back = tn.load(path)
    assert list(back) == ["w", "b", "n"] and back["n"].item() == 7


def test_load_file_written_by_c(tmp_path):
    d = _C.lib.tn_dict_new()
    w, b = tn.arange(6, dtype=tn.float32).reshape(2, 3), tn.tensor([1, 2], dtype=tn.int32)
    _C.lib.tn_dict_set(d, b"layer.weight", w._ptr)
    _C.lib.tn_dict_set(d, b"layer.bias", b._ptr)
    _C.lib.tn_dict_set_meta(d, b"note", b"from C")
    path = str(tmp_path / "c.safetensors")
    try:
        assert _C.lib.tn_safetensors_save(path.encode(), d) == 0
    finally:
        _C.lib.tn_dict_free(d)
    back = tn.load(path)
    assert isinstance(back, OrderedDict) and set(back) == {"layer.weight", "layer.bias"}
    assert back["layer.weight"].tolist() == w.tolist() and back["layer.bias"].dtype == tn.int32
    back["layer.weight"].add_(1)                 # copy-on-write mapping: the file is untouched
    assert tn.load(path)["layer.weight"].tolist() == w.tolist()
    lin = tn.nn.Linear(3, 2)
    lin.load_state_dict({"weight": back["layer.weight"], "bias": back["layer.bias"].float()})
    assert lin.weight.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] and lin.bias.tolist() == [1.0, 2.0]


def test_load_errors(tmp_path):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}......")
    with pytest.raises(RuntimeError, match="tn_safetensors_load"):
        tn.load(str(p))
    with pytest.raises(FileNotFoundError):                 # PyTorch's class (an OSError)
        tn.load(str(tmp_path / "missing.safetensors"))
    with pytest.raises(IsADirectoryError):
        tn.load(str(tmp_path))
    with pytest.raises(RuntimeError):
        tn.load(io.BytesIO(b"short"))


def test_threads():
    n = tn.get_num_threads()
    assert n >= 1
    tn.set_num_threads(1)
    assert tn.get_num_threads() == 1
    tn.set_num_threads(n)


# --------------------------------------------------------------------------- the example
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "data", "fashion-mnist")


def test_fashion_mnist_example_pieces():
    """The example's model trains a step, and its IDX reader agrees with the C one."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    try:
        import fashion_mnist as ex
    finally:
        sys.path.pop(0)
    tn.manual_seed(0)
    model = ex.Net()
    opt = optim.Adam(model.parameters(), lr=1e-3)
    x, y = tn.rand(8, 1, 28, 28), tn.randint(0, 10, (8,))
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = tn.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] and tuple(model(x).shape) == (8, 10)
    labels = os.path.join(DATA, "t10k-labels-idx1-ubyte")
    if not (os.path.exists(labels) or os.path.exists(labels + ".gz")):
        pytest.skip("Fashion-MNIST is not in data/fashion-mnist")
    ours = ex.read_idx(labels)
    path = labels if os.path.exists(labels) else labels + ".gz"
    c = tn._core._wrap(_C.lib.tn_read_idx(path.encode()))
    assert ours.dtype == tn.uint8 and ours.shape == (10000,) and ours.tolist() == c.tolist()
