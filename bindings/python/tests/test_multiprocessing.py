"""tensor.multiprocessing: shared-memory tensors across fork, spawn and forkserver (writes
seen both ways, views, Parameters, requires_grad), PyTorch's refusal of non-leaf tensors,
spawn() and its errors, Pool, no /dev/shm leak after a killed process, and the Hogwild
example learning with two processes."""
import os
import signal
import subprocess
import sys
import time

import pytest

import tensor as torch
import tensor.multiprocessing as mp

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
METHODS = [m for m in ("fork", "spawn", "forkserver") if m in mp.get_all_start_methods()]


def _shm_entries():
    try:
        return [e for e in os.listdir("/dev/shm") if e.startswith("tensor_h.")]
    except FileNotFoundError:
        return []


def test_share_memory_in_place():
    base = torch.arange(12.0).reshape(3, 4)
    view = base.t()[1:3]
    before = base.clone()
    assert not base.is_shared()
    assert base.share_memory_() is base
    assert base.is_shared() and view.is_shared() and torch.equal(base, before)
    view.fill_(-1)                                  # the old views still write into the shared storage
    assert base[:, 1:3].eq(-1).all()
    m = torch.nn.Linear(3, 2)
    m.weight.grad = torch.ones(2, 3)
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters()) and m.weight.grad.is_shared()
    e = torch.zeros(0, 5).share_memory_()
    assert e.is_shared() and e.shape == (0, 5)


def _child(q, out, done):
    t = q.get()
    t += 1                                          # seen by the parent
    p = q.get()
    out.put((t.sum().item(), type(p).__name__, p.requires_grad, p.is_shared(), t.stride()))
    out.put(torch.full((3,), 5.0, dtype=torch.float64))
    done.wait(60)                                   # a sender must outlive the receipt of its tensors


@pytest.mark.parametrize("method", METHODS)
def test_queue_shares_memory(method):
    ctx = mp.get_context(method)
    q, out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    x = torch.zeros(4, 4)[1:, ::2]                   # a strided view with an offset
    p = ctx.Process(target=_child, args=(q, out, done))
    p.start()
    q.put(x)
    q.put(torch.nn.Parameter(torch.ones(2)))
    total, kind, requires_grad, shared, stride = out.get(timeout=120)
    back = out.get(timeout=120)
    done.set()
    p.join(60)
    assert p.exitcode == 0
    assert (total, kind, requires_grad, shared, stride) == (6.0, "Parameter", True, True, (4, 2))
    assert x.is_shared() and torch.equal(x, torch.ones(3, 2))       # the child's += is the parent's
    assert back.dtype == torch.float64 and back.tolist() == [5.0] * 3 and back.is_shared()


def test_non_leaf_that_requires_grad_is_refused():
    q = mp.get_context("spawn").SimpleQueue()
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        q.put(x * 2)
    q.put((x * 2).detach())                         # the data alone travels
    assert q.get().tolist() == [2.0, 2.0]


def _spawned(i, shared, fail_at):
    if i == fail_at:
        raise ValueError(f"process {i} fails on purpose")
    shared[i] = i + 1


def _exits(i):
    os._exit(3 if i == 1 else 0)


def test_spawn_runs_and_reports_failures():
    shared = torch.zeros(3).share_memory_()
    mp.spawn(_spawned, args=(shared, -1), nprocs=3)
    assert shared.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(mp.ProcessRaisedException, match="process 1 fails on purpose") as e:
        mp.spawn(_spawned, args=(shared, 1), nprocs=2)
    assert e.value.error_index == 1 and "Traceback" in str(e.value)
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with exit code 3"):
        mp.spawn(_exits, nprocs=2)
    ctx = mp.spawn(_spawned, args=(shared, -1), nprocs=1, join=False)
    while not ctx.join():
        pass
    assert len(ctx.pids()) == 1


def _square(t):
    return t * t


def test_pool_map():
    with mp.get_context("fork").Pool(2) as pool:
        out = pool.map(_square, [torch.full((2,), float(i)) for i in range(4)])
    assert [o.tolist() for o in out] == [[float(i * i)] * 2 for i in range(4)]


def _hold_and_die(q):
    ts = [torch.ones(1 << 16).share_memory_() for _ in range(10)]
    q.put(len(ts))
    os.kill(os.getpid(), signal.SIGKILL)


def test_no_dev_shm_leak_after_a_killed_process():
    ctx = mp.get_context("fork")
    q = ctx.SimpleQueue()                           # written synchronously, before the kill
    p = ctx.Process(target=_hold_and_die, args=(q,))
    p.start()
    assert q.get() == 10
    p.join(60)
    assert p.exitcode == -signal.SIGKILL
    assert _shm_entries() == []


def test_sharing_strategy():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    with pytest.raises(ValueError, match="not supported"):
        mp.set_sharing_strategy("file_system")
    assert torch.multiprocessing is mp


@pytest.mark.skipif(not os.path.exists(os.path.join(REPO, "data", "fashion-mnist", "train-labels-idx1-ubyte"))
                    and not os.path.exists(os.path.join(REPO, "data", "fashion-mnist", "train-labels-idx1-ubyte.gz")),
                    reason="Fashion-MNIST not fetched (make demo)")
def test_hogwild_example_learns():
    pytest.importorskip("numpy")
    t0 = time.time()
    r = subprocess.run([sys.executable, os.path.join(REPO, "bindings", "python", "examples", "mnist_hogwild.py"),
                        "--num-processes", "2", "--train-size", "12000", "--test-size", "2000", "--lr", "0.05",
                        "--log-interval", "1000", "--expect", "0.55"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "bindings", "python")))
    assert r.returncode == 0, r.stdout
    assert "Test set: Average loss" in r.stdout and r.stdout.count("Train Epoch: 1 [0/12000") == 2
    assert time.time() - t0 < 600
