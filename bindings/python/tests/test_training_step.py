"""The rest of a training step (issue 25 item 4), against PyTorch 1.13:

* embedding's backward as a segmented sum (indices sorted, each weight row written once):
  the same gradient bits as torch's, with repeats, padding_idx, int32 indices, float64,
  and double backward (create_graph) through the composite;
* cross-entropy over a large vocabulary (the fused log-softmax + NLL kernel): loss and
  input gradient against torch, with ignore_index, weights and label smoothing.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_training_step.py
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

torch = pytest.importorskip("torch")


def to_torch(a, requires_grad=False):
    t = torch.from_numpy(np.ascontiguousarray(a.detach().numpy()).copy())
    return t.requires_grad_(requires_grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_idx", [None, 3, -2])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_grad_matches_torch(dtype, padding_idx, index_dtype):
    rng = np.random.default_rng(0)
    V, D = 50, 24
    idx = rng.integers(0, V, size=(16, 33))                  # many repeats
    idx[0, :5] = 3                                           # the padding row, hit
    idx[1, :7] = 48                                          # -2 wraps to 48
    w = rng.standard_normal((V, D)).astype(dtype)
    r = rng.standard_normal((16, 33, D)).astype(dtype)
    ours_w = tn.tensor(w, requires_grad=True)
    ours_i = tn.tensor(idx.astype(index_dtype))
    tw = torch.tensor(w, requires_grad=True)
    ti = torch.tensor(idx.astype(index_dtype)) if index_dtype == "int64" else torch.tensor(idx)  # torch 1.13: int64 (int32 too in 2.x)
    y = tn.nn.functional.embedding(ours_i, ours_w, padding_idx=padding_idx)
    (y * tn.tensor(r)).sum().backward()
    ty = torch.nn.functional.embedding(ti, tw, padding_idx=padding_idx)
    (ty * torch.tensor(r)).sum().backward()
    assert y.grad_fn.name() == "EmbeddingBackward0"
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    g, tg = ours_w.grad.numpy(), tw.grad.numpy()
    np.testing.assert_array_equal(g, tg)                     # the same bits: rows summed in position order
    if padding_idx is not None:
        assert not g[padding_idx % V].any()
    untouched = np.setdiff1d(np.arange(V), idx)
    assert not g[untouched].any()


def test_embedding_noncontiguous_grad_and_empty():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((10, 6)).astype("float32")
    idx = np.array([[1, 2, 1], [9, 1, 0]])
    ours_w, tw = tn.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    y = tn.nn.functional.embedding(tn.tensor(idx), ours_w)
    ty = torch.nn.functional.embedding(torch.tensor(idx), tw)
    gy = rng.standard_normal((6, 3, 2)).astype("float32")    # a transposed gradient: non-contiguous
    y.backward(tn.tensor(gy).permute(2, 1, 0))
    ty.backward(torch.tensor(gy).permute(2, 1, 0))
    np.testing.assert_array_equal(ours_w.grad.numpy(), tw.grad.numpy())
    # no indices at all: a zero gradient of the weight's shape
    e = tn.nn.functional.embedding(tn.tensor(np.zeros((0,), dtype=np.int64)), ours_w)
    assert tuple(e.shape) == (0, 6)
    ours_w.grad = None
    e.sum().backward()
    assert tuple(ours_w.grad.shape) == (10, 6) and not ours_w.grad.numpy().any()


def test_embedding_double_backward():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((7, 5))
    idx = np.array([[0, 3, 3, 6], [3, 1, 0, 0]])
    r = rng.standard_normal((2, 4, 5))
    res = []
    for lib in (tn, torch):
        lw = lib.tensor(w, requires_grad=True)
        gy = lib.tensor(r, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(idx), lw, padding_idx=3)
        (gw,) = lib.autograd.grad(y, lw, gy, create_graph=True)
        (gw * gw).sum().backward()                           # d/dgy of |gw|^2
        res.append((gw.detach().numpy(), gy.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12, atol=1e-12)


def test_embedding_module_in_a_step():
    """nn.Embedding + Linear + cross_entropy + Adam: a few steps give torch's weights."""
    rng = np.random.default_rng(3)
    V, D, B, T = 64, 16, 8, 12
    idx = rng.integers(0, V, size=(B, T))
    tgt = rng.integers(0, V, size=(B * T,))
    results, ref_emb, ref_head = [], None, None
    for lib in (torch, tn):   # torch first: its initial weights are copied into ours
        lib.manual_seed(0)
        emb, head = lib.nn.Embedding(V, D), lib.nn.Linear(D, V)
        if lib is tn:
            emb.load_state_dict({k: tn.tensor(v.numpy()) for k, v in ref_emb.items()})
            head.load_state_dict({k: tn.tensor(v.numpy()) for k, v in ref_head.items()})
        else:
            ref_emb = {k: v.detach().clone() for k, v in emb.state_dict().items()}
            ref_head = {k: v.detach().clone() for k, v in head.state_dict().items()}
        opt = lib.optim.Adam(list(emb.parameters()) + list(head.parameters()), lr=1e-2)
        for _ in range(3):
            loss = lib.nn.functional.cross_entropy(head(emb(lib.tensor(idx))).reshape(B * T, V), lib.tensor(tgt))
            opt.zero_grad()
            loss.backward()
            opt.step()
        results.append(emb.weight.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"ignore_index": 5}, {"label_smoothing": 0.1}, {"weight": True}, {"reduction": "sum"}])
def test_cross_entropy_large_vocab(kw):
    rng = np.random.default_rng(4)
    N, C = 64, 5000
    x = rng.standard_normal((N, C)).astype("float32") * 3
    t = rng.integers(0, C, size=(N,))
    t[:4] = 5
    kw = dict(kw)
    wt = rng.random(C).astype("float32") + 0.5 if kw.pop("weight", False) else None
    ox, tx = tn.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ol = tn.nn.functional.cross_entropy(ox, tn.tensor(t), weight=None if wt is None else tn.tensor(wt), **kw)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(t), weight=None if wt is None else torch.tensor(wt), **kw)
    ol.backward()
    tl.backward()
    np.testing.assert_allclose(ol.item(), tl.item(), rtol=2e-6)
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=2e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_one_pass(dtype, max_norm):
    """clip_grad_norm_ over many gradients (one pass): torch's total and clipped grads."""
    rng = np.random.default_rng(5)
    shapes = [(300, 257), (257,), (64, 3, 3, 3), (1,), (70000,), (0, 4)]
    grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
    res = []
    for lib in (tn, torch):
        ps = [lib.zeros(*s, dtype=getattr(lib, dtype), requires_grad=True) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm)
        res.append((float(total), [p.grad.numpy().copy() for p in ps]))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6 if dtype == "float32" else 1e-12)
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(a, b, rtol=2e-6 if dtype == "float32" else 1e-12, atol=0)
    if max_norm > 1e5:   # no clipping: the gradients untouched, bit for bit
        for a, g in zip(res[0][1], grads):
            np.testing.assert_array_equal(a, g)


def test_clip_grad_norm_other_cases_keep_the_composite():
    """inf norm, mixed dtypes, a non-contiguous gradient: torch's numbers still."""
    rng = np.random.default_rng(6)
    g1, g2 = rng.standard_normal((5, 7)), rng.standard_normal((7, 5)).astype("float32")
    for norm_type in (float("inf"), 1.0, 2.0):
        res = []
        for lib in (tn, torch):
            a = lib.zeros(5, 7, dtype=lib.float64, requires_grad=True)
            b = lib.zeros(5, 7, dtype=lib.float64, requires_grad=True)
            a.grad = lib.tensor(g1)
            b.grad = lib.tensor(g2.astype("float64")).t()       # non-contiguous
            total = lib.nn.utils.clip_grad_norm_([a, b], 1.0, norm_type=norm_type)
            res.append((float(total), a.grad.numpy().copy(), b.grad.numpy().copy()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)
        np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-12)
