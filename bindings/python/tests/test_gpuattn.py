"""The fused attention behind tn_backend.attention (issue 23 item 4) seen from Python, on the
checking stand-in (in a child process, so the stand-in stays out of the other tests; with a
GPU the same path runs tensor_cuda.cu's kernels): F.scaled_dot_product_attention and
nn.MultiheadAttention on 'cuda' tensors against PyTorch's composite on the CPU (Debian's
PyTorch 1.13 has no F.scaled_dot_product_attention: softmax(q k^T / sqrt(E) + mask) v
written out), values and the gradients of q, k, v; torch.cuda.memory_stats() counts the
fused calls."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

CHILD = textwrap.dedent("""
    import sys, math
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import torch
    import tensor as tn
    tn._C.lib.tn_debug_cuda_stand_in()
    rng = np.random.default_rng(0)

    def ref(q, k, v, mask, causal):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        if mask is not None and mask.dtype == torch.bool:
            s = s.masked_fill(~mask, float("-inf"))
        elif mask is not None:
            s = s + mask
        return s.softmax(-1) @ v

    def case(shape_q, shape_k, ev, mask=None, causal=False):
        a = [rng.standard_normal(shape_q), rng.standard_normal(shape_k), rng.standard_normal(shape_k[:-1] + (ev,))]
        ts = [torch.tensor(x, dtype=torch.float32, requires_grad=True) for x in a]
        gs = [tn.tensor(x, dtype=tn.float32).cuda().requires_grad_() for x in a]
        tm = None if mask is None else torch.tensor(mask)
        gm = None if mask is None else tn.tensor(mask).cuda()
        s0 = tn.cuda.memory_stats()["num_fused_attention"]
        out = tn.nn.functional.scaled_dot_product_attention(*gs, attn_mask=gm, is_causal=causal)
        exp = ref(*ts, tm, causal)
        w = rng.standard_normal(tuple(exp.shape))
        (exp * torch.tensor(w, dtype=torch.float32)).sum().backward()
        (out * tn.tensor(w, dtype=tn.float32).cuda()).sum().backward()
        assert out.is_cuda and tn.cuda.memory_stats()["num_fused_attention"] == s0 + 2, "the fused entry did not run"
        for name, o, e in [("out", out, exp)] + [("grad " + n, g.grad, t.grad) for n, g, t in zip("qkv", gs, ts)]:
            d = np.abs(o.cpu().detach().numpy() - e.detach().numpy()).max()
            assert d < 1e-4, (name, shape_q, shape_k, d)

    case((2, 3, 70, 64), (2, 3, 70, 64), 64, causal=True)
    case((2, 33, 40), (2, 100, 40), 24)
    case((2, 3, 20, 16), (2, 3, 50, 16), 16, mask=rng.standard_normal((20, 50)).astype(np.float32))
    case((2, 3, 20, 16), (2, 3, 50, 16), 8, mask=rng.standard_normal((2, 1, 1, 50)) > -1)
    # MultiheadAttention without weights: the fused path on the device, as PyTorch's module
    m = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    g = tn.nn.MultiheadAttention(32, 4, batch_first=True)
    g.load_state_dict({k: tn.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    g.to("cuda")
    x = rng.standard_normal((3, 40, 32))
    xt = torch.tensor(x, dtype=torch.float32)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(40)
    e, _ = m(xt, xt, xt, attn_mask=causal, need_weights=False)
    xg = tn.tensor(x, dtype=tn.float32).cuda()
    o, _ = g(xg, xg, xg, attn_mask=tn.tensor(causal.numpy()).cuda(), need_weights=False, is_causal=True)
    assert np.abs(o.cpu().detach().numpy() - e.detach().numpy()).max() < 1e-4
    print("ok")
""")


def test_fused_attention_on_stand_in():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    r = subprocess.run([sys.executable, "-c", CHILD, here], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
