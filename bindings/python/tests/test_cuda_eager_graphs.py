"""torch.cuda.CUDAGraph / torch.cuda.graph on eager code (issue 22): a whole training step
(forward, loss, backward, optimizer.step) captured once after warm-up and replayed with new
data copied into the static inputs gives PyTorch's eager losses and parameters (the oracle:
torch on the CPU, same weights and data); a captured CNN forward follows new inputs; two
graphs share a pool (graph_pool_handle, CUDAGraph.pool()); every misuse fails with a clear
error and leaves the library usable; memory_allocated/memory_reserved come back once the
graphs are reset. On the checking stand-in (nothing runs at capture, calls recorded and
replayed, as stream capture), in a child process, plain and with unreadable device memory.
make_graphed_callables of a module and of a function: forward and backward (replayed graphs)
equal PyTorch's. Adam and AdamW with capturable=True (the step count a device tensor, the
bias corrections device ops): a captured step replayed gives PyTorch's losses and parameters,
with weight decay, amsgrad and maximize; capturable=False is refused inside a capture, as
PyTorch's, and capturable=True on CPU parameters is an error. Whole language-model steps
(issues 22/23): a GPT-style step (embedding, TransformerEncoderLayer with dropout, LM head,
cross-entropy, Adam capturable=True) and an LSTM LM step captured and replayed equal eager
steps drawn from the same generator states (and PyTorch's, without dropout); a bad token
id fed to a replay errors at the next synchronisation with eager's message and the graph
goes on; captured dropout draws anew at each replay, as PyTorch's graph-safe Philox.
Not implemented: debug_dump."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")


def run_child(script, env=None, timeout=300):
    """Run script in a fresh interpreter (argv[1]: the package's directory), env added to
    the environment; it must exit 0 with "ok" last."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr

CHILD = textwrap.dedent("""
    import gc, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import pytest
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    rng = np.random.default_rng(0)
    W, N = 3, 5
    xs = [rng.standard_normal((6, 8)).astype(np.float32) for _ in range(W + N)]
    ys = [rng.standard_normal((6, 3)).astype(np.float32) for _ in range(W + N)]

    def captured_training(kind, kw, tn_kw, tag):
        # PyTorch's eager steps on the CPU (the oracle), then ours on the GPU: W eager warm-up
        # steps, one step captured, N replays with new data copied into the static inputs;
        # losses and parameters compared. Returns the models, optimizers, the static loss and
        # the graph for the caller's further checks.
        m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
        g = tn.nn.Sequential(tn.nn.Linear(8, 16), tn.nn.ReLU(), tn.nn.Linear(16, 3))
        g.load_state_dict({k: tn.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
        g = g.to("cuda")
        om = getattr(torch.optim, kind)(m.parameters(), **kw)
        og = getattr(tn.optim, kind)(g.parameters(), **kw, **tn_kw)
        want = []
        for i in range(W + N):   # the oracle: PyTorch eager on the CPU
            om.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(m(torch.tensor(xs[i])), torch.tensor(ys[i]))
            loss.backward()
            om.step()
            want.append(loss.item())

        def step(x, y):
            loss = tn.nn.functional.mse_loss(g(x), y)
            loss.backward()
            og.step()
            return loss

        for i in range(W):   # warm-up
            og.zero_grad(set_to_none=True)
            l = step(tn.tensor(xs[i]).cuda(), tn.tensor(ys[i]).cuda())
            assert abs(l.item() - want[i]) < 1e-5 * (1 + abs(want[i])), (tag, i, l.item(), want[i])
        sx, sy = tn.zeros(6, 8, device="cuda"), tn.zeros(6, 3, device="cuda")
        og.zero_grad(set_to_none=True)
        cg = tn.cuda.CUDAGraph()
        r0 = tn.cuda.memory_reserved()
        with tn.cuda.graph(cg):
            assert tn.cuda.is_current_stream_capturing()
            sl = step(sx, sy)
        assert not tn.cuda.is_current_stream_capturing()
        assert tn.cuda.memory_reserved() > r0
        for i in range(N):
            sx.copy_(tn.tensor(xs[W + i]).cuda())
            sy.copy_(tn.tensor(ys[W + i]).cuda())
            cg.replay()
            assert abs(sl.item() - want[W + i]) < 1e-5 * (1 + abs(want[W + i])), (tag, i, sl.item(), want[W + i])
        for (k, a), b in zip(m.state_dict().items(), g.state_dict().values()):
            d = np.abs(b.cpu().numpy() - a.numpy()).max()
            assert d < 1e-5, (tag, k, d)
        return m, om, g, og, sl, cg

    base_alloc, base_res = tn.cuda.memory_allocated(), tn.cuda.memory_reserved()
    for momentum in (0.0, 0.9):
        m, om, g, og, sl, cg = captured_training("SGD", dict(lr=0.05, momentum=momentum), {}, momentum)
        with pytest.raises(RuntimeError, match="already owns a captured graph"):
            cg.capture_begin()
        del sl
        og.zero_grad(set_to_none=True)
        cg.reset()
        cg.reset()   # twice: a no-op
        with pytest.raises(RuntimeError, match="without a preceding successful capture"):
            cg.replay()
        del m, om, g, og, cg
        gc.collect()
        assert (tn.cuda.memory_allocated(), tn.cuda.memory_reserved()) == (base_alloc, base_res), (momentum, base_alloc, base_res, tn.cuda.memory_allocated(), tn.cuda.memory_reserved())

    # Adam: refused inside a capture (PyTorch's capturable=False); the library goes on
    lin = tn.nn.Linear(4, 2).cuda()
    adam = tn.optim.Adam(lin.parameters(), lr=0.01)
    x = tn.randn(3, 4).cuda()
    lin(x).sum().backward(); adam.step()
    adam.zero_grad(set_to_none=True)
    cg = tn.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="capturable=False"):
        with tn.cuda.graph(cg):
            lin(x).sum().backward()
            adam.step()
    assert not tn.cuda.is_current_stream_capturing()
    adam.zero_grad(set_to_none=True)
    lin(x).sum().backward(); adam.step()

    # Adam / AdamW with capturable=True: warm-up, capture, replays against PyTorch's eager steps
    for kind, kw in (("Adam", {}), ("AdamW", {}), ("Adam", dict(weight_decay=0.1, amsgrad=True)),
                     ("AdamW", dict(amsgrad=True, maximize=True))):
        m, om, g, og, sl, cg = captured_training(kind, dict(lr=0.01, **kw), dict(capturable=True), (kind, kw))
        assert og.param_groups[0]["capturable"] is True
        st = og.state[next(iter(g.parameters()))]["step"]
        assert st.device.type == "cuda" and st.item() == W + N, (st.device, st.item())
        del m, om, g, og, sl, cg, st
        gc.collect()
    # capturable=True on CPU parameters: PyTorch 2's assertion, as an error
    cpu_lin = tn.nn.Linear(4, 2)
    cadam = tn.optim.Adam(cpu_lin.parameters(), capturable=True)
    cpu_lin(tn.randn(3, 4)).sum().backward()
    with pytest.raises(RuntimeError, match="capturable=True, params and state_steps must be on supported devices"):
        cadam.step()
    # the step count follows the flag: on the device with capturable=True, back on the CPU without
    adam.param_groups[0]["capturable"] = True
    adam.zero_grad(set_to_none=True)
    lin(x).sum().backward(); adam.step()
    assert adam.state[lin.weight]["step"].device.type == "cuda" and adam.state[lin.weight]["step"].item() == 3
    adam.param_groups[0]["capturable"] = False
    adam.zero_grad(set_to_none=True)
    lin(x).sum().backward(); adam.step()
    assert adam.state[lin.weight]["step"].device.type == "cpu" and adam.state[lin.weight]["step"].item() == 4
    del cpu_lin, cadam
    gc.collect()

    # a CNN forward (the convolution entry: cuDNN on a GPU) captured after warm-up
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3, stride=2)).eval()
    gm = tn.nn.Sequential(tn.nn.Conv2d(3, 8, 3, padding=1), tn.nn.ReLU(), tn.nn.Conv2d(8, 4, 3, stride=2))
    gm.load_state_dict({k: tn.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    gm = gm.eval().to("cuda")
    sx = tn.zeros(2, 3, 10, 10, device="cuda")
    with tn.no_grad():
        gm(sx); gm(sx)
        cg = tn.cuda.CUDAGraph()
        with tn.cuda.graph(cg):
            sy = gm(sx)
    for _ in range(3):
        x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
        sx.copy_(tn.tensor(x).cuda())
        cg.replay()
        d = np.abs(sy.cpu().numpy() - tm(torch.tensor(x)).detach().numpy()).max()
        assert d < 1e-4, d
    del sy
    cg.reset()

    # two graphs sharing a pool, replayed in capture order
    a0, r0 = tn.cuda.memory_allocated(), tn.cuda.memory_reserved()
    x = tn.zeros(16, 16, device="cuda")
    pool = tn.cuda.graph_pool_handle()
    g1, g2 = tn.cuda.CUDAGraph(), tn.cuda.CUDAGraph()
    with tn.cuda.graph(g1, pool=pool):
        y1 = (x * 2).relu()
    with tn.cuda.graph(g2, pool=g1.pool()):
        y2 = y1 @ y1 + 1
    for _ in range(2):
        xv = rng.standard_normal((16, 16)).astype(np.float32)
        x.copy_(tn.tensor(xv).cuda())
        g1.replay(); g2.replay()
        e1 = np.maximum(xv * 2, 0)
        assert np.abs(y1.cpu().numpy() - e1).max() == 0
        assert np.abs(y2.cpu().numpy() - (e1 @ e1 + 1)).max() < 1e-3
    del y1, y2
    g1.reset(); g2.reset()
    assert tn.cuda.memory_reserved() > r0   # the handle still holds the pool
    del pool, x, xv, e1
    gc.collect()
    assert (tn.cuda.memory_allocated(), tn.cuda.memory_reserved()) == (a0, r0)

    # misuse: clear errors, the library usable after each
    x = tn.randn(4, 4).cuda()
    cg = tn.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="without tn_cuda_graph_begin"):
        cg.capture_end()
    with pytest.raises(RuntimeError, match="Unknown capture_error_mode"):
        tn.cuda.graph(cg, capture_error_mode="bogus")
    with pytest.raises(TypeError, match="pool must be a handle"):
        cg.capture_begin(pool=3)
    for what, body in ((r"\\.item\\(\\)", lambda: x.sum().item()),
                       ("from the host to the GPU", lambda: tn.ones(2).cuda()),
                       ("synchronisation", lambda: tn.cuda.synchronize())):
        with pytest.raises(RuntimeError, match=what):
            with tn.cuda.graph(tn.cuda.CUDAGraph()):
                body()
        assert not tn.cuda.is_current_stream_capturing()
    ok = tn.cuda.CUDAGraph()
    with tn.cuda.graph(ok):
        y = x.exp()
    cg.capture_begin()
    with pytest.raises(RuntimeError, match="capturing already"):
        tn.cuda.CUDAGraph().capture_begin()
    with pytest.raises(RuntimeError, match="inside a capture"):
        ok.replay()
    cg.capture_end()
    ok.replay()
    assert np.abs(y.cpu().numpy() - np.exp(x.cpu().numpy())).max() < 1e-6
    with pytest.raises(NotImplementedError):
        ok.debug_dump("/dev/null")
    print("ok")
""")

MGC = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
""") + textwrap.dedent('''
rng = np.random.default_rng(0)
tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
gm = tn.nn.Sequential(tn.nn.Linear(8, 16), tn.nn.ReLU(), tn.nn.Linear(16, 3))
gm.load_state_dict({k: tn.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
gm = gm.to("cuda")
x0 = tn.randn(5, 8).cuda().requires_grad_()
gm = tn.cuda.make_graphed_callables(gm, (x0,))
for i in range(3):
    xv = rng.standard_normal((5, 8)).astype(np.float32)
    x = tn.tensor(xv).cuda().requires_grad_()
    tx = torch.tensor(xv, requires_grad=True)
    y = gm(x); ty = tm(tx)
    assert np.abs(y.detach().cpu().numpy() - ty.detach().numpy()).max() < 1e-5
    (y * y).sum().backward(); (ty * ty).sum().backward()
    assert np.abs(x.grad.cpu().numpy() - tx.grad.numpy()).max() < 1e-4, i
    for (k, p), q in zip(tm.named_parameters(), gm.parameters()):
        assert np.abs(q.grad.cpu().numpy() - p.grad.numpy()).max() < 1e-4, (i, k)
# a function
def f(a, b): return (a * b).sin()
a0, b0 = tn.randn(4).cuda().requires_grad_(), tn.randn(4).cuda()
gf = tn.cuda.make_graphed_callables(f, (a0, b0))
av, bv = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
a, b = tn.tensor(av).cuda().requires_grad_(), tn.tensor(bv).cuda()
out = gf(a, b); out.sum().backward()
ta = torch.tensor(av, requires_grad=True); tf = (ta * torch.tensor(bv)).sin(); tf.sum().backward()
assert np.abs(out.detach().cpu().numpy() - tf.detach().numpy()).max() < 1e-6
assert np.abs(a.grad.cpu().numpy() - ta.grad.numpy()).max() < 1e-6
''') + "print('ok')\n"


@pytest.mark.parametrize("env", [{}, {"TN_STAND_IN_UNREADABLE": "1"}])
def test_make_graphed_callables(env):
    run_child(MGC, env, timeout=300)


@pytest.mark.parametrize("env", [{}, {"TN_STAND_IN_UNREADABLE": "1"}])
def test_eager_cuda_graph_training_step(env):
    run_child(CHILD, env, timeout=300)


LM = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import pytest
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    V, B, T, W, N = 40, 3, 8, 2, 4
    rng = np.random.default_rng(1)
    ids = [rng.integers(0, V, (B, T)) for _ in range(W + N)]
    tgs = [rng.integers(0, V, (B, T)) for _ in range(W + N)]

    def make(lib, kind, p):
        nn = lib.nn

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(V, 32)
                if kind == "gpt":
                    self.body = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=p, batch_first=True)
                else:
                    self.body = nn.LSTM(32, 32, batch_first=True)
                self.head = nn.Linear(32, V)

            def forward(self, x):
                h = self.body(self.emb(x))
                return self.head(h[0] if isinstance(h, tuple) else h)
        return LM()

    def lm_case(kind, p):
        torch.manual_seed(0)
        tm = make(torch, kind, p)
        sd = {k: tn.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
        ge, gc = make(tn, kind, p), make(tn, kind, p)
        ge.load_state_dict(sd)
        gc.load_state_dict(sd)
        ge, gc = ge.to("cuda"), gc.to("cuda")
        ot = torch.optim.Adam(tm.parameters(), lr=0.01)
        oe = tn.optim.Adam(ge.parameters(), lr=0.01, capturable=True)
        oc = tn.optim.Adam(gc.parameters(), lr=0.01, capturable=True)

        def step(m, o, x, y):
            loss = tn.nn.functional.cross_entropy(m(x).reshape(B * T, V), y.reshape(B * T))
            loss.backward()
            o.step()
            return loss
        want, oracle = [], []
        for i in range(W + N):   # ours eager, each step from generator state (1000 + i, 0); PyTorch's on the CPU
            tn.manual_seed(1000 + i)
            oe.zero_grad(set_to_none=True)
            want.append(step(ge, oe, tn.tensor(ids[i]).cuda(), tn.tensor(tgs[i]).cuda()).item())
            ot.zero_grad(set_to_none=True)
            lt = torch.nn.functional.cross_entropy(tm(torch.tensor(ids[i])).reshape(B * T, V), torch.tensor(tgs[i]).reshape(B * T))
            lt.backward()
            ot.step()
            oracle.append(lt.item())
        if p == 0:   # no draws: PyTorch's losses
            assert np.abs(np.array(want) - np.array(oracle)).max() < 1e-4, (kind, want, oracle)
        for i in range(W):   # warm-up
            tn.manual_seed(1000 + i)
            oc.zero_grad(set_to_none=True)
            step(gc, oc, tn.tensor(ids[i]).cuda(), tn.tensor(tgs[i]).cuda())
        sx, sy = tn.zeros(B, T, dtype=tn.int64).cuda(), tn.zeros(B, T, dtype=tn.int64).cuda()
        oc.zero_grad(set_to_none=True)
        a0, r0 = tn.cuda.memory_allocated(), tn.cuda.memory_reserved()
        g = tn.cuda.CUDAGraph()
        with tn.cuda.graph(g):
            sl = step(gc, oc, sx, sy)
        for i in range(N):
            sx.copy_(tn.tensor(ids[W + i]).cuda())
            sy.copy_(tn.tensor(tgs[W + i]).cuda())
            tn.cuda.manual_seed(1000 + W + i)
            g.replay()
            assert abs(sl.item() - want[W + i]) <= 1e-4 * (1 + abs(want[W + i])), (kind, p, i, sl.item(), want[W + i])
        for (k, a), b in zip(ge.named_parameters(), gc.parameters()):
            assert np.abs(a.detach().cpu().numpy() - b.detach().cpu().numpy()).max() < 1e-4, (kind, p, k)
        if p == 0:
            for (k, a), b in zip(tm.named_parameters(), gc.parameters()):
                if k != "body.self_attn.in_proj_bias":   # its key third's gradient is rounding noise (softmax ignores it), which Adam scales up to lr
                    assert np.abs(a.detach().numpy() - b.detach().cpu().numpy()).max() < 1e-3, (kind, k)
        # a bad token id fed to a replay: eager's message at the next synchronisation; then good ids work again
        bad = ids[W].copy()
        bad[0, 5] = V + 3
        ge.emb(tn.tensor(bad).cuda())
        with pytest.raises((RuntimeError, IndexError)) as eager:
            tn.cuda.synchronize()
        sx.copy_(tn.tensor(bad).cuda())
        g.replay()
        with pytest.raises((RuntimeError, IndexError)) as replayed:
            tn.cuda.synchronize()
        assert "out of bounds" in str(eager.value) and str(replayed.value) == str(eager.value), (str(eager.value), str(replayed.value))
        sx.copy_(tn.tensor(ids[W]).cuda())
        g.replay()
        tn.cuda.synchronize()
        assert np.isfinite(sl.item())
        del sl
        oc.zero_grad(set_to_none=True)
        g.reset()
        assert (tn.cuda.memory_allocated(), tn.cuda.memory_reserved()) == (a0, r0), (kind, p, tn.cuda.memory_allocated(), a0, tn.cuda.memory_reserved(), r0)

    for kind, p in (("gpt", 0.1), ("gpt", 0.0), ("lstm", 0.0)):
        lm_case(kind, p)

    # captured dropout: a replay draws what an eager call from the same generator state draws,
    # the next replay draws anew, torch.cuda.manual_seed repeats a replay
    x = tn.ones(4, 64).cuda()
    for mode in ("global", "thread_local", "relaxed"):
        g = tn.cuda.CUDAGraph()
        with tn.cuda.graph(g, capture_error_mode=mode):
            y = tn.nn.functional.dropout(x, 0.5)
        tn.cuda.manual_seed(21)
        g.replay()
        r1 = y.cpu().numpy()
        g.replay()
        r2 = y.cpu().numpy()
        tn.cuda.manual_seed(21)
        e1 = tn.nn.functional.dropout(x, 0.5).cpu().numpy()
        e2 = tn.nn.functional.dropout(x, 0.5).cpu().numpy()
        assert (r1 == e1).all() and (r2 == e2).all() and (r1 != r2).any(), mode
        tn.cuda.manual_seed(21)
        g.replay()
        assert (y.cpu().numpy() == r1).all()
        g.reset()
    print("ok")
""")


@pytest.mark.parametrize("env", [{}, {"TN_STAND_IN_UNREADABLE": "1"}])
def test_language_model_steps_captured(env):
    run_child(LM, env, timeout=600)


def test_capture_without_gpu_is_refused():
    """No GPU (no stand-in registered, no unit): capture_begin and graph_pool_handle say so."""
    child = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import tensor as tn
        if tn.cuda.is_available():
            print("ok")   # a real GPU: nothing to refuse
            sys.exit(0)
        for f in (lambda: tn.cuda.CUDAGraph().capture_begin(), tn.cuda.graph_pool_handle):
            try:
                f()
            except RuntimeError as e:
                assert "there is no GPU" in str(e), e
            else:
                raise AssertionError("no error")
        assert not tn.cuda.is_current_stream_capturing()
        print("ok")
    """)
    run_child(child, timeout=120)
