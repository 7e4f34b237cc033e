"""tensor.distributed with backend="nccl" on "cuda" tensors, one process, through the checking
stand-in GPU's nccl entry (in a subprocess: the stand-in replaces the process's CUDA backend).
Values against PyTorch 1.13's own process group of one (gloo on the CPU: the oracle), then
PyTorch's errors for what the nccl backend refuses, async work, and DDP against the model
trained alone. The multi-rank cases are tests/test_dist_nccl.c under mpirun (tests/test_dist.sh).

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_dist_nccl.py
"""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

SCRIPT = textwrap.dedent("""
    import os, socket, sys
    sys.path.insert(0, sys.argv[1])
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        os.environ.pop(k, None)
    import numpy as np
    import torch
    import torch.distributed as tdist
    import tensor as tn
    import tensor.distributed as dist

    # before the stand-in: no CUDA backend, so no nccl (this library has no GPU unit)
    assert not dist.is_nccl_available()
    try:
        dist.init_process_group("nccl")
        raise SystemExit("nccl without CUDA: no error")
    except RuntimeError as e:
        assert "backend 'nccl' needs CUDA" in str(e), e
    tn._C.lib.tn_debug_cuda_stand_in()
    assert dist.is_nccl_available() and dist.is_available()
    # env:// rendezvous as PyTorch 2025's: each variable it needs, in its order, a ValueError
    # (1.13's message lacks "using env:// rendezvous"; 2025's words are followed)
    need = ("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")
    for k, v in need:
        try:
            dist.init_process_group("nccl")
            raise SystemExit(f"{k} unset: no error")
        except ValueError as e:
            assert str(e) == ("Error initializing torch.distributed using env:// rendezvous: environment variable "
                              f"{k} expected, but not set"), e
        os.environ[k] = v
    assert not dist.is_initialized()
    for k, _ in need[:2]:
        os.environ.pop(k)
    try:
        dist.init_process_group("nccl", init_method="file:///tmp/x")
        raise SystemExit("file:// accepted")
    except ValueError as e:
        assert "not supported" in str(e), e
    dist.init_process_group(backend="nccl", rank=0, world_size=1)   # the arguments stand in for RANK / WORLD_SIZE
    dist.destroy_process_group()
    os.environ.update(need)
    dist.init_process_group(backend="nccl")
    assert dist.is_initialized() and dist.get_backend() == "nccl"
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    try:
        dist.init_process_group("nccl")
        raise SystemExit("twice: no error")
    except RuntimeError as e:
        assert "already initialized" in str(e), e

    # the oracle: PyTorch's process group of one
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    rng = np.random.default_rng(21)
    ops = [("SUM", dist.ReduceOp.SUM, tdist.ReduceOp.SUM), ("PRODUCT", dist.ReduceOp.PRODUCT, tdist.ReduceOp.PRODUCT),
           ("MIN", dist.ReduceOp.MIN, tdist.ReduceOp.MIN), ("MAX", dist.ReduceOp.MAX, tdist.ReduceOp.MAX)]
    checked = 0
    for name in ("float32", "float64", "int32", "int64", "uint8", "float16"):
        x = (rng.standard_normal((3, 5)) * 4).astype(name) if "float" in name else rng.integers(0, 9, (3, 5)).astype(name)
        for label, ours_op, their_op in ops:
            want = torch.tensor(x)
            tdist.all_reduce(want, op=their_op)
            got = tn.tensor(x).cuda()
            dist.all_reduce(got, op=ours_op)
            assert got.device.type == "cuda" and str(got.dtype) == str(want.dtype), (got.device, got.dtype, want.dtype)
            assert np.array_equal(got.cpu().numpy(), want.numpy()), (name, label)
            checked += 1
        # broadcast and all_gather, also of a non-contiguous view
        want = torch.tensor(x).t()
        tdist.broadcast(want, 0)
        got = tn.tensor(x).cuda().t()
        dist.broadcast(got, 0)
        assert not got.is_contiguous() and np.array_equal(got.cpu().numpy(), want.numpy())
        wl = [torch.zeros(3, 5, dtype=want.dtype)]
        tdist.all_gather(wl, torch.tensor(x))
        gl = [tn.zeros(3, 5, dtype=getattr(tn, name)).cuda()]
        dist.all_gather(gl, tn.tensor(x).cuda())
        assert np.array_equal(gl[0].cpu().numpy(), wl[0].numpy())
        checked += 2
    # AVG (gloo has none: over one rank it is the tensor itself), reduce_scatter, scatter, gather, 0-d, 0 elements
    x = rng.standard_normal(4)
    t = tn.tensor(x).cuda()
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert np.allclose(t.cpu().numpy(), x)
    out = tn.zeros(4, dtype=tn.float64).cuda()
    dist.reduce_scatter(out, [tn.tensor(x).cuda()])
    assert np.array_equal(out.cpu().numpy(), x)
    out = tn.zeros(4, dtype=tn.float64).cuda()
    dist.scatter(out, [tn.tensor(x).cuda()], src=0)
    assert np.array_equal(out.cpu().numpy(), x)
    gl = [tn.zeros(4, dtype=tn.float64).cuda()]
    dist.gather(tn.tensor(x).cuda(), gl, dst=0)
    assert np.array_equal(gl[0].cpu().numpy(), x)
    z = tn.tensor(3.5).cuda()
    dist.all_reduce(z)
    assert z.item() == 3.5 and z.dim() == 0
    dist.all_reduce(tn.zeros(0).cuda())
    b = tn.tensor([True, False]).cuda()
    dist.all_reduce(b, op=dist.ReduceOp.MIN)
    assert b.cpu().tolist() == [True, False]
    work = dist.all_reduce(tn.ones(3).cuda(), async_op=True)
    assert work.wait() and work.is_completed()
    dist.barrier()

    # what the nccl backend refuses, with PyTorch's words
    def raises(fn, text):
        try:
            fn()
        except (RuntimeError, ValueError) as e:
            assert text in str(e), (text, str(e))
            return
        raise SystemExit(f"no error: {text}")
    raises(lambda: dist.all_reduce(tn.ones(3)), "Tensors must be CUDA and dense")
    raises(lambda: dist.all_reduce(tn.ones(3, dtype=tn.int64).cuda(), op=dist.ReduceOp.AVG), "AVG needs a floating-point")
    raises(lambda: dist.send(tn.ones(3).cuda(), 0), "Invalid destination rank")
    raises(lambda: dist.recv(tn.ones(3).cuda()), "cannot receive from any source")
    raises(lambda: dist.broadcast(tn.ones(3).cuda(), 1), "rank 1 is not in the world of 1")
    g = dist.new_group([0])
    t = tn.ones(2).cuda()
    dist.all_reduce(t, group=g)
    assert t.cpu().tolist() == [1.0, 1.0] and g.size() == 1 and g.rank() == 0

    # DDP over nccl on the device: the same step as the model alone
    tn.manual_seed(0)
    model = tn.nn.Sequential(tn.nn.Linear(4, 8), tn.nn.ReLU(), tn.nn.Linear(8, 2))
    alone = tn.nn.Sequential(tn.nn.Linear(4, 8), tn.nn.ReLU(), tn.nn.Linear(8, 2))
    alone.load_state_dict(model.state_dict())
    ddp = tn.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[0])
    xb, yb = tn.randn(6, 4), tn.randn(6, 2)
    tn.nn.functional.mse_loss(ddp(xb.cuda()), yb.cuda()).backward()
    tn.nn.functional.mse_loss(alone(xb), yb).backward()
    for p, q in zip(model.parameters(), alone.parameters()):
        assert p.grad.device.type == "cuda" and np.allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print("ok", checked)
""")


def test_nccl_backend_on_stand_in():
    root = os.path.join(os.path.dirname(__file__), "..")
    r = subprocess.run([sys.executable, "-c", SCRIPT, root], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "ok 36", r.stdout
