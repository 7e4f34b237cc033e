"""tensor.multiprocessing with CUDA tensors (CUDA IPC), as torch.multiprocessing: a CUDA
tensor put on a Queue travels as the handle of its allocation and the receiver maps the same
device memory (writes seen both ways, a strided view, one mapping per segment per process,
closed with the last tensor), share_memory_() is a no-op and is_shared() is True on CUDA,
an empty tensor arrives empty, a handle whose producer exited is a clear error. On the
checking stand-in (its device memory is host memory, exported into a memfd the receiver maps
through /proc/<pid>/fd), in child processes so the stand-in stays out of the other tests; the
same handles on a real GPU are tests/cuda_cases_ipc.h under make gpu-check. PyTorch 1.13 here
has no CUDA, so the oracle is the identity: what one process writes, the other reads."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numpy")

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, sys.argv[1])
    import tensor as tn
    import tensor.multiprocessing as mp
    from multiprocessing.reduction import ForkingPickler


    def stand_in():
        if os.environ.get("TN_STAND_IN_UNREADABLE") == "1":
            tn._C.lib.tn_debug_cuda_stand_in_unreadable()
        else:
            tn._C.lib.tn_debug_cuda_stand_in()


    def child(q, out, done):
        stand_in()                                   # before the first CUDA tensor arrives
        t = q.get()
        v = q.get()
        out.put((t.device.type, t.is_shared(), t.cpu().tolist(), v.cpu().tolist(), v.stride(), v.storage_offset(),
                 tn._C.lib.tn_cuda_ipc_open_count()))
        t.mul_(-1)                                   # seen by the parent
        v.add_(100)
        tn.cuda.synchronize()
        del t, v
        out.put(tn._C.lib.tn_cuda_ipc_open_count())  # closed with the last tensor
        e = q.get()
        p = q.get()
        out.put((e.device.type, tuple(e.shape), type(p).__name__, p.requires_grad, p.cpu().tolist()))
        done.wait(60)                                # the producer outlives what it sent (PyTorch's rule, on its side)


    def exporter(out):
        stand_in()
        out.put(bytes(ForkingPickler.dumps(tn.arange(6.0).cuda())))   # then this process exits: the handle is dead


    def run(method):
        ctx = mp.get_context(method)
        q, out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
        p = ctx.Process(target=child, args=(q, out, done))
        p.start()
        base = tn.arange(12.0).reshape(3, 4).cuda()
        assert base.is_shared() and base.share_memory_() is base    # a no-op on CUDA, as PyTorch
        q.put(base)
        q.put(base.t()[1:3])
        dev, shared, vals, vvals, vstride, voff, nopen = out.get(timeout=120)
        want = tn.arange(12.0).reshape(3, 4)
        assert (dev, shared, vals, vvals, vstride, voff, nopen) == (
            "cuda", True, want.tolist(), want.t()[1:3].tolist(), (1, 4), 1, 1), (dev, shared, vals, vvals, vstride, voff, nopen)
        assert out.get(timeout=120) == 0
        q.put(tn.zeros(0, 3).cuda())
        par = tn.nn.Parameter(tn.ones(2).cuda())     # kept alive (a temporary would be freed once pickled)
        q.put(par)
        assert out.get(timeout=120) == ("cuda", (0, 3), "Parameter", True, [1.0, 1.0])
        done.set()
        p.join(60)
        assert p.exitcode == 0
        want = -want
        want.t()[1:3] += 100
        assert base.cpu().tolist() == want.tolist(), base.cpu().tolist()

        # a handle whose producer exited: a clear error, not a crash
        p = ctx.Process(target=exporter, args=(out,))
        p.start()
        blob = out.get(timeout=120)
        p.join(60)
        try:
            ForkingPickler.loads(blob)
            raise SystemExit("a dead producer's handle: no error")
        except RuntimeError as e:
            assert "has exited" in str(e), e
        assert tn._C.lib.tn_cuda_ipc_open_count() == 0


    if __name__ == "__main__":
        stand_in()
        x = tn.ones(2, requires_grad=True).cuda()
        try:
            mp.get_context("spawn").SimpleQueue().put(x * 2)
            raise SystemExit("a non-leaf: no error")
        except RuntimeError as e:
            assert "Cowardly refusing to serialize non-leaf tensor" in str(e), e
        run(sys.argv[2])
        print("ok")
""")


@pytest.mark.parametrize("unreadable", ["0", "1"])
@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_cuda_tensor_across_processes(tmp_path, method, unreadable):
    script = tmp_path / "ipc_child.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TN_STAND_IN_UNREADABLE=unreadable)
    r = subprocess.run([sys.executable, str(script), os.path.join(REPO, "bindings", "python"), method],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_without_cuda_the_handle_is_an_error():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import tensor as tn\n"
            "try:\n"
            "    tn.multiprocessing.reductions.rebuild_cuda_tensor(tn.Tensor, bytes(64), 64, 0, 4, 'float32', (1,), (1,), 0, False)\n"
            "    raise SystemExit('no error')\n"
            "except RuntimeError as e:\n"
            "    assert 'CUDA IPC needs CUDA' in str(e), e\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code, os.path.join(REPO, "bindings", "python")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
