"""Graph replays on 'cuda' seen from Python (issue 22 item 2): tensor.jit.trace of a module
moved to the device replays through the device's static memory plan and, once steady, a
captured CUDA graph (tn_graph_run). On the checking stand-in, in a child process (so the
stand-in stays out of the other tests), plain and with its device memory unreadable from the
host: a traced MLP and CNN on 'cuda' equal PyTorch's CPU forward of the same weights, a steady
replay makes no transfer and no host synchronisation, torch.cuda.memory_stats() counts the
capture and its launches, and TN_CUDA_GRAPHS=0 replays uncaptured with the same bits.
torch.cuda.CUDAGraph / torch.cuda.graph (capturing eager code): test_cuda_eager_graphs.py."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    capture = os.environ.get("TN_CUDA_GRAPHS") != "0"

    def mirror(m, g):
        g.load_state_dict({k: tn.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
        return g.eval().to("cuda")

    models = [
        (torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval(),
         tn.nn.Sequential(tn.nn.Linear(16, 32), tn.nn.ReLU(), tn.nn.Linear(32, 4)), (8, 16)),
        (torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                             torch.nn.AvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 5)).eval(),
         tn.nn.Sequential(tn.nn.Conv2d(3, 8, 3, padding=1), tn.nn.BatchNorm2d(8), tn.nn.ReLU(),
                          tn.nn.AvgPool2d(2), tn.nn.Flatten(), tn.nn.Linear(8 * 4 * 4, 5)), (2, 3, 8, 8)),
    ]
    for m, g, shape in models:
        with torch.no_grad():
            m[1].running_mean.uniform_(-0.5, 0.5) if isinstance(m[1], torch.nn.BatchNorm2d) else None
        g = mirror(m, g)
        xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(6)]
        traced = tn.jit.trace(g, tn.tensor(xs[0]).cuda())
        s0 = tn.cuda.memory_stats()
        with tn.no_grad():
            for i, x in enumerate(xs):
                xg = tn.tensor(x).cuda()
                a = tn.cuda.memory_stats()
                y = traced(xg)
                b = tn.cuda.memory_stats()
                assert y.is_cuda
                if i >= 3:   # steady: no transfer, no host synchronisation
                    assert b["num_h2d"] == a["num_h2d"] and b["num_d2h"] == a["num_d2h"] and b["num_syncs"] == a["num_syncs"], (a, b)
                want = m(torch.tensor(x)).detach().numpy()
                d = np.abs(y.cpu().numpy() - want).max()
                assert d < 1e-4, (shape, i, d)
                del y
            s1 = tn.cuda.memory_stats()
            assert s1["num_graph_captures"] - s0["num_graph_captures"] == (1 if capture else 0), (s0, s1)
            # the trace's check ran once: the plan records at replay 0, serves at 1, captures at 2
            assert s1["num_graph_launches"] - s0["num_graph_launches"] == (len(xs) - 2 if capture else 0), (s0, s1)
            y1 = traced(tn.tensor(xs[1]).cuda()).cpu().numpy()
            os.environ["TN_CUDA_GRAPHS"] = "0"
            y2 = traced(tn.tensor(xs[1]).cuda()).cpu().numpy()
            if capture:
                del os.environ["TN_CUDA_GRAPHS"]
            assert (y1 == y2).all(), "captured and uncaptured replays differ"
    print("ok")
""")


@pytest.mark.parametrize("env", [{}, {"TN_STAND_IN_UNREADABLE": "1"}, {"TN_CUDA_GRAPHS": "0"}])
def test_traced_cuda_module_replays_captured(env):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", CHILD, here], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **env))
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
