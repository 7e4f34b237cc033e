"""float16 and bfloat16 on CUDA from Python: .half()/.bfloat16()/.to on the device, ops
staged through float32 with the CPU's half results, torch.autocast("cuda") and
torch.cuda.amp (autocast, GradScaler) on CUDA tensors.

Without a GPU the cases run on the checking stand-in (the CPU's kernels behind the GPU
unit's operand checks) in a subprocess, as test_cuda.py does; with one
(lib/libtensor_cuda.so) they run on the GPU unit.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_cuda_half.py
"""
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SCRIPT = textwrap.dedent("""
    import math, sys, warnings
    sys.path.insert(0, sys.argv[1])
    import tensor as tn
    exact = not tn.cuda.is_available()   # the stand-in: the CPU's kernels, the CPU's bits
    if exact:
        tn._C.lib.tn_debug_cuda_stand_in()
        tn._C.lib.tn_cuda_is_available = lambda: True   # autocast("cuda") and GradScaler take the stand-in for a GPU
    tn.manual_seed(0)

    def same(g, c, tol=0.0):
        assert g.is_cuda and g.dtype == c.dtype, (g.device, g.dtype, c.dtype)
        a, b = g.cpu().double().flatten().tolist(), c.double().flatten().tolist()
        for u, v in zip(a, b):
            if math.isnan(u) or math.isnan(v):
                assert math.isnan(u) and math.isnan(v), (u, v)
            elif math.isinf(u) or math.isinf(v):
                assert u == v, (u, v)
            else:
                assert abs(u - v) <= tol * (1 + abs(v)), (u, v)

    special = tn.tensor([0.0, -0.0, 1 / 3, 65504.0, 65519.0, 65520.0, 1e-8, 6e-8, 3e38, 1e39,
                         float("inf"), -float("inf"), float("nan"), -2.5, 1e-40])
    for dt, conv in ((tn.float16, "half"), (tn.bfloat16, "bfloat16")):
        ulp = 2.0 ** -10 if dt == tn.float16 else 2.0 ** -7
        c = getattr(special, conv)()
        g = getattr(special.cuda(), conv)()                       # converted on the device
        same(g, c)
        same(special.to("cuda", dtype=dt), c)                       # converted on the way up
        same(c.cuda(), c)
        assert g.float().cpu().dtype == tn.float32
        same(g.float(), c.float())
        same(g.to(tn.int64), c.to(tn.int64)) if dt == tn.bfloat16 else None
        x = tn.randn(6, 9).to(dt)
        y = tn.randn(9).to(dt)
        xg, yg = x.cuda(), y.cuda()
        same(xg + yg, x + y)
        same((xg * 2 - yg).exp(), (x * 2 - y).exp(), 0 if exact else ulp)
        same(xg.t().contiguous(), x.t().contiguous())
        same(xg.sum(1), x.sum(1), 0 if exact else 4 * ulp)
        same(tn.softmax(xg, -1), tn.softmax(x, -1), 0 if exact else 4 * ulp)
        same(xg @ xg.t(), x @ x.t(), 0 if exact else 8 * ulp)
        same(tn.zeros(3, 2, dtype=dt, device="cuda"), tn.zeros(3, 2, dtype=dt))
        same(tn.full((2, 2), 65520.0, dtype=dt, device="cuda"), tn.full((2, 2), 65520.0, dtype=dt))
        z = (xg + 0).requires_grad_()
        zc = (x + 0).requires_grad_()
        (z.tanh() * yg).sum().backward()
        (zc.tanh() * y).sum().backward()
        same(z.grad, zc.grad, 0 if exact else 4 * ulp)
        assert (xg + tn.randn(6, 9, device="cuda")).dtype == tn.float32   # promotion as PyTorch

    # autocast on CUDA: PyTorch's CUDA lists
    lin = tn.nn.Linear(16, 8).cuda()
    inp = tn.randn(4, 16, device="cuda")
    with tn.autocast("cuda", dtype=tn.bfloat16):
        assert tn.is_autocast_enabled("cuda") and tn.get_autocast_dtype("cuda") == tn.bfloat16
        out = lin(inp)
        assert out.dtype == tn.bfloat16 and out.is_cuda
        assert tn.softmax(out, -1).dtype == tn.float32          # CUDA's fp32 list (not the CPU's)
        assert tn.nn.functional.layer_norm(out, (8,)).dtype == tn.float32
        assert tn.nn.functional.mse_loss(out, tn.zeros_like(out)).dtype == tn.float32
        try:
            tn.nn.functional.binary_cross_entropy(tn.sigmoid(out.float()), tn.rand(4, 8, device="cuda"))
        except RuntimeError as e:
            assert "unsafe to autocast" in str(e)
        else:
            raise AssertionError("binary_cross_entropy under CUDA autocast should fail")
    assert not tn.is_autocast_enabled("cuda")
    with tn.cuda.amp.autocast():                                   # float16 by default on CUDA
        assert lin(inp).dtype == tn.float16
    with tn.autocast("cpu", dtype=tn.bfloat16):                    # the CPU's region leaves CUDA alone
        assert lin(inp).dtype == tn.float32

    # GradScaler on CUDA tensors: scale, unscale, skip the step on inf, update the scale
    model = tn.nn.Linear(16, 4).cuda()
    opt = tn.optim.SGD(model.parameters(), lr=0.1)
    scaler = tn.cuda.amp.GradScaler(init_scale=1024.0, growth_interval=1)
    assert scaler.is_enabled()
    w0 = model.weight.detach().clone()
    with tn.autocast("cuda", dtype=tn.float16):
        loss = model(inp).float().pow(2).mean()
    sl = scaler.scale(loss)
    assert sl.is_cuda and abs(sl.item() - loss.item() * 1024) < 1e-3 * abs(sl.item())
    sl.backward()
    assert model.weight.grad.dtype == tn.float32 and model.weight.grad.is_cuda
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2048.0                            # grew: growth_interval 1
    assert (model.weight.detach() - w0).abs().max().item() > 0     # stepped
    w1 = model.weight.detach().clone()
    opt.zero_grad()
    with tn.autocast("cuda", dtype=tn.float16):
        loss = model(inp * float("inf")).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)                                               # inf gradients: skipped
    scaler.update()
    assert scaler.get_scale() == 1024.0                            # backed off
    assert (model.weight.detach() - w1).abs().max().item() == 0
    print("ok")
""")


def test_cuda_half_with_stand_in_or_gpu():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", SCRIPT, here], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
