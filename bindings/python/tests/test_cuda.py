"""tensor.cuda: the GPU unit from Python.

Without a GPU (or with lib/libtensor.so, built without the unit) every CUDA call must
fail with a RuntimeError that says why, and the queries answer "nothing there". With
a GPU (lib/libtensor_cuda.so from `make cuda`), a small model trains on it and its
results match the CPU's.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_cuda.py
"""
import os
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

GPU = tn.cuda.is_available()


def test_reason_and_queries():
    reason = tn.cuda.unavailable_reason()
    if GPU:
        assert reason == ""
        assert tn.cuda.device_count() >= 1 and tn.cuda.current_device() >= 0
    else:
        assert len(reason) > 10
        assert tn.cuda.device_count() == 0
        assert tn.cuda.current_device() == -1
        assert tn.cuda.memory_allocated() == 0 and tn.cuda.memory_reserved() == 0
        assert tn.cuda.max_memory_allocated() == 0
        assert set(tn.cuda.memory_stats()) >= {"allocated", "reserved", "peak_allocated", "num_ooms"}
        tn.cuda.empty_cache()
        tn.cuda.reset_peak_memory_stats()


def test_tf32_flag():
    m = tn.backends.cuda.matmul
    assert m.allow_tf32 is False
    m.allow_tf32 = True
    assert m.allow_tf32 is True
    m.allow_tf32 = False
    assert m.allow_tf32 is False


@pytest.mark.skipif(GPU, reason="checks the errors of a machine without a GPU")
def test_errors_without_gpu():
    x = tn.ones(2, 3)
    reason = tn.cuda.unavailable_reason()
    for move in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: x.to("cuda:0"), lambda: x.cuda(non_blocking=True),
                 lambda: x.pin_memory(), lambda: tn.cuda.synchronize(), lambda: tn.cuda.set_device(0)):
        with pytest.raises(RuntimeError) as e:
            move()
        assert reason in str(e.value)
    assert x.is_pinned() is False
    assert x.cpu() is x and x.to("cpu") is x


@pytest.mark.skipif(not GPU, reason="no GPU: " + tn.cuda.unavailable_reason())
def test_gpu_matches_cpu_and_trains():
    tn.manual_seed(0)
    x, y = tn.randn(64, 20), tn.randint(0, 5, (64,))
    cpu = tn.nn.Sequential(tn.nn.Linear(20, 32), tn.nn.ReLU(), tn.nn.Linear(32, 5))
    gpu = tn.nn.Sequential(tn.nn.Linear(20, 32), tn.nn.ReLU(), tn.nn.Linear(32, 5))
    gpu.load_state_dict(cpu.state_dict())
    gpu.to("cuda")
    assert next(gpu.parameters()).is_cuda
    oc, og = tn.optim.Adam(cpu.parameters(), lr=1e-2), tn.optim.Adam(gpu.parameters(), lr=1e-2)
    xg, yg = x.cuda(), y.cuda()
    for _ in range(5):
        lc = tn.nn.functional.cross_entropy(cpu(x), y)
        lg = tn.nn.functional.cross_entropy(gpu(xg), yg)
        assert lg.device.type == "cuda"
        assert abs(lc.item() - lg.item()) < 1e-4
        oc.zero_grad(), og.zero_grad()
        lc.backward(), lg.backward()
        oc.step(), og.step()
    for (k, a), (_, b) in zip(cpu.state_dict().items(), gpu.state_dict().items()):
        assert (a - b.cpu()).abs().max().item() < 1e-3, k
    p = x.pin_memory()
    assert p.is_pinned()
    assert (p.cuda(non_blocking=True).cpu() - x).abs().max().item() == 0
    assert tn.cuda.memory_allocated() > 0


# The same GPU scenario against the checking stand-in (CPU kernels behind the GPU unit's
# operand checks, tn_debug_cuda_stand_in): the Python side of devices on every machine.
# In a child process, so the stand-in stays out of the other tests.
STAND_IN = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    tn.manual_seed(0)
    x, y = tn.randn(64, 20), tn.randint(0, 5, (64,))
    cpu = tn.nn.Sequential(tn.nn.Linear(20, 32), tn.nn.ReLU(), tn.nn.Dropout(0.0), tn.nn.Linear(32, 5))
    gpu = tn.nn.Sequential(tn.nn.Linear(20, 32), tn.nn.ReLU(), tn.nn.Dropout(0.0), tn.nn.Linear(32, 5))
    gpu.load_state_dict(cpu.state_dict())
    gpu.to("cuda")
    assert all(p.is_cuda for p in gpu.parameters())
    oc, og = tn.optim.Adam(cpu.parameters(), lr=1e-2), tn.optim.Adam(gpu.parameters(), lr=1e-2)
    xg, yg = x.cuda(), y.to("cuda")
    for _ in range(3):
        lc = tn.nn.functional.cross_entropy(cpu(x), y)
        lg = tn.nn.functional.cross_entropy(gpu(xg), yg)
        assert lg.device.type == "cuda" and abs(lc.item() - lg.item()) < 1e-5
        oc.zero_grad(), og.zero_grad()
        lc.backward(), lg.backward()
        oc.step(), og.step()
    for (k, a), (_, b) in zip(cpu.state_dict().items(), gpu.state_dict().items()):
        assert b.is_cuda and (a - b.cpu()).abs().max().item() < 1e-5, k
    # a steady-state step neither copies nor waits (counted as the GPU unit counts); .item() does once
    s0 = tn.cuda.memory_stats()
    lg = tn.nn.functional.cross_entropy(gpu(xg), yg)
    og.zero_grad(), lg.backward(), og.step()
    s1 = tn.cuda.memory_stats()
    assert all(s1[k] == s0[k] for k in ("num_h2d", "num_d2h", "num_syncs")), (s0, s1)
    lg.item()
    s2 = tn.cuda.memory_stats()
    assert (s2["num_d2h"], s2["num_syncs"]) == (s1["num_d2h"] + 1, s1["num_syncs"] + 1), (s1, s2)
    # a bad index on the device is reported by the next synchronisation, naming the op
    bad = xg[tn.tensor([70]).cuda()]
    try:
        bad.sum().item()
    except (RuntimeError, IndexError) as e:
        assert "index 70 is out of bounds for dimension 0 with size 64" in str(e), str(e)
    else:
        raise AssertionError("the bad index was not reported")
    tn.cuda.synchronize()
    assert "device='cuda:0'" in repr(xg[:1, :2])
    z = xg[tn.tensor([0, 3])] * 2 + 1          # CPU indices move to the device; scalars ride along
    assert z.is_cuda and (z.cpu() - (x[tn.tensor([0, 3])] * 2 + 1)).abs().max().item() == 0
    try:
        xg + x
    except RuntimeError as e:
        assert "same device" in str(e)
    else:
        raise AssertionError("cuda + cpu should fail")
    # copy_ across devices, as PyTorch's: the source moves first (broadcast, dtype, views, gradient)
    d = tn.zeros(3, 4, device="cuda")
    d.copy_(tn.arange(4.0))                    # a CPU source, broadcast
    assert d.is_cuda and d.cpu().tolist() == [[0.0, 1.0, 2.0, 3.0]] * 3
    d[1:, ::2].copy_(tn.tensor([[7, 8]], dtype=tn.int64))   # into a strided view, another dtype
    assert d.cpu().tolist() == [[0, 1, 2, 3], [7, 1, 8, 3], [7, 1, 8, 3]]
    h = tn.empty(3, 4, dtype=tn.float64)
    h.copy_(d)                                 # and back
    assert h.dtype == tn.float64 and h.tolist() == d.cpu().tolist()
    src = tn.ones(4, requires_grad=True)       # the gradient reaches the CPU leaf
    e = tn.zeros(2, 4, device="cuda")
    e.copy_(src * 3)
    (e * tn.arange(2.0).cuda()[:, None]).sum().backward()
    assert src.grad.tolist() == [3.0] * 4
    try:
        d.copy_(tn.ones(5))
    except RuntimeError as e2:
        assert "cannot be broadcast" in str(e2), str(e2)
    else:
        raise AssertionError("a bad shape should fail")
    print("ok")
""")


def test_devices_with_stand_in():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", STAND_IN, here], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
