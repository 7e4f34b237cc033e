"""Before/after timings of issue 25 item 4's pieces, at 1 thread, medians of alternating rounds:

* embedding forward + backward: the node with the segmented sum (now) against the
  composite it replaced, index_select under autograd whose backward is an accumulating
  index_put (before), and PyTorch's embedding;
* clip_grad_norm_: the one-pass 2-norm (now) against the per-gradient norms + stack + norm
  + mul_ composite (before, written out with the same ops), and PyTorch's.

    /usr/bin/python3 bench/bench_step_parts.py [ROUNDS]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import tensor as tn  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None
tn.set_num_threads(1)
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7


def timeit(fn, reps):
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e3


def median_rounds(fns, reps):
    res = {k: [] for k in fns}
    for _ in range(ROUNDS):
        for k, f in fns.items():
            res[k].append(timeit(f, reps))
    return {k: float(np.median(v)) for k, v in res.items()}


def embedding_case(V, D, B, T):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, V, size=(B, T))
    g = rng.standard_normal((B, T, D)).astype("float32")
    w = tn.tensor(rng.standard_normal((V, D)).astype("float32"), requires_grad=True)
    ti, tg, tiflat, tg2 = tn.tensor(idx), tn.tensor(g), tn.tensor(idx.reshape(-1)), tn.tensor(g.reshape(-1, D))

    def ours():
        w.grad = None
        tn.nn.functional.embedding(ti, w).backward(tg)

    def before():   # the composite: index_select under autograd (its backward: an accumulating index_put)
        w.grad = None
        tn.index_select(w, 0, tiflat).backward(tg2)
    fns = {"now": ours, "before": before}
    if torch is not None:
        tw = torch.tensor(w.detach().numpy(), requires_grad=True)
        pi, pg = torch.tensor(idx), torch.tensor(g)

        def theirs():
            tw.grad = None
            torch.nn.functional.embedding(pi, tw).backward(pg)
        fns["torch"] = theirs
    return median_rounds(fns, 20)


def clip_case(shapes):
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(s).astype("float32") for s in shapes]
    ps = [tn.zeros(*s, requires_grad=True) for s in shapes]

    def reset(lib, params):
        for p, g in zip(params, grads):
            p.grad = lib.tensor(g)

    def ours():
        reset(tn, ps)
        tn.nn.utils.clip_grad_norm_(ps, 0.5)

    def before():   # the composite: a norm per gradient, stacked, its norm, a mul_ each
        reset(tn, ps)
        with tn.no_grad():
            total = tn.stack([p.grad.norm(2) for p in ps]).norm(2)
            coef = (0.5 / (total + 1e-6)).clamp(max=1.0)
            for p in ps:
                p.grad.mul_(coef)

    def reset_only():
        reset(tn, ps)
    fns = {"now": ours, "before": before, "reset": reset_only}
    if torch is not None:
        tps = [torch.zeros(*s, requires_grad=True) for s in shapes]

        def theirs():
            reset(torch, tps)
            torch.nn.utils.clip_grad_norm_(tps, 0.5)

        def treset():
            reset(torch, tps)
        fns["torch"] = theirs
        fns["treset"] = treset
    r = median_rounds(fns, 20)
    out = {"now": r["now"] - r["reset"], "before": r["before"] - r["reset"]}
    if torch is not None:
        out["torch"] = r["torch"] - r["treset"]
    return out


def row(name, r):
    t = f"{r['torch']:.3f}" if "torch" in r else "-"
    print(f"| {name} | {r['before']:.3f} | {r['now']:.3f} | {r['before'] / r['now']:.2f}x | {t} |")


print("| case (1 thread, ms per call, medians) | before | now | speed-up | PyTorch |")
print("|---|---|---|---|---|")
row("embedding backward, V 256, D 128, 16 x 64 tokens (the GPT step's)", embedding_case(256, 128, 16, 64))
row("embedding backward, V 50000, D 128, 16 x 64 tokens", embedding_case(50000, 128, 16, 64))
row("embedding backward, V 96, D 64, 32 x 64 (the char LSTM's)", embedding_case(96, 64, 32, 64))
gpt = [(256, 128)] + [(384, 128), (384,), (128, 128), (128,), (512, 128), (512,), (128, 512), (128,), (128,), (128,), (128,), (128,)] * 2 + [(256, 128), (256,)]
row("clip_grad_norm_, the GPT step's 31 parameters (0.5 M)", clip_case(gpt))
row("clip_grad_norm_, 4 x [1024, 1024]", clip_case([(1024, 1024)] * 4))
