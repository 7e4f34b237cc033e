"""tensor.nn's recurrent layers, cells, MultiheadAttention and Transformer layers.

PyTorch 1.13 is the oracle where it is installed (those tests skip themselves otherwise):
each layer is built on both sides, torch's weights are copied in through state_dict (the
keys must be equal), and outputs, final states, input gradients and parameter gradients
must match; so must reprs and error messages. Without torch: the binding to the C modules
(reparameterisation, conversions, copies, pickling, optimizers), training-mode dropout,
initialisation statistics and bit-for-bit equality with the C layers' initialisation.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_rnn.py
"""
import copy
import gc
import math
import os
import pickle
import sys
from collections import OrderedDict

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402
from tensor import _C  # noqa: E402
from tensor._core import _borrow  # noqa: E402

nn = tn.nn
F = tn.nn.functional

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the oracle tests skip themselves
    torch = None
try:
    import numpy as np
except ImportError:
    np = None


@pytest.fixture
def T():
    return pytest.importorskip("torch")


def _live():
    gc.collect()
    return tn.memory_stats()["live_tensors"]


# --------------------------------------------------------------------------- oracle helpers
def ours(t):
    """A tn tensor with a torch tensor's values and dtype (no grad)."""
    t = t.detach()
    if np is not None:
        return tn.tensor(t.numpy())
    return tn.tensor(t.tolist(), dtype=getattr(tn, str(t.dtype).split(".")[1])).reshape(tuple(t.shape))


def theirs(x):
    x = x.detach()
    if np is not None:
        return torch.from_numpy(np.array(x))
    return torch.tensor(x.tolist(), dtype=getattr(torch, x.dtype.name)).reshape(tuple(x.shape))


def assert_close(a, b, rtol=1e-7, atol=1e-9, what=""):
    if b is None:
        assert a is None, f"{what}: expected None, got {a!r}"
        return
    assert isinstance(a, tn.Tensor), f"{what}: got {type(a)}"
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} != {tuple(b.shape)}"
    assert a.dtype.name == str(b.dtype).split(".")[1], f"{what}: dtype {a.dtype} != {b.dtype}"
    got = theirs(a)
    assert torch.allclose(got, b.detach(), rtol=rtol, atol=atol, equal_nan=True), f"{what}:\nours  {got}\ntorch {b}"


def randn(*shape, dtype=None, seed=None):
    g = torch.Generator().manual_seed(seed if seed is not None else hash(shape) % 1000)
    return torch.randn(tuple(shape), generator=g, dtype=dtype or torch.float64)


def flat(x):
    """The tensors of a nested output ((out, (h, c)), (out, None), ...), None kept."""
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in flat(e)]
    return [x]


def copy_weights(om, tm):
    sd = tm.state_dict()
    assert list(om.state_dict().keys()) == list(sd.keys())
    om.load_state_dict(OrderedDict((k, ours(v)) for k, v in sd.items()))


def check(om, tm, call, inputs, const=None, rtol=1e-7, atol=1e-9, what="", copy_=True):
    """torch's weights into om; call(module, *inputs, **const) on both sides (floating inputs
    require grad, const ones do not); outputs, then after backward with the same random
    output gradients, input and parameter gradients must match."""
    if copy_:
        copy_weights(om, tm)
    for m in (om, tm):
        for p in m.named_parameters():
            p[1].grad = None
    const = const or {}
    th = [t.detach().clone().requires_grad_(t.is_floating_point()) if t is not None else None for t in inputs]
    mine = [ours(t).requires_grad_(t.is_floating_point()) if t is not None else None for t in inputs]
    b = call(tm, *th, **const)
    a = call(om, *mine, **{k: None if v is None else ours(v) for k, v in const.items()})
    fa, fb = flat(a), flat(b)
    assert len(fa) == len(fb), f"{what}: {len(fa)} outputs vs {len(fb)}"
    for i, (x, y) in enumerate(zip(fa, fb)):
        assert_close(x, y, rtol, atol, f"{what} (output {i})")
    outs = [(x, y) for x, y in zip(fa, fb) if y is not None and y.requires_grad]
    if not outs:
        return a, b
    gs = [randn(*y.shape, dtype=y.dtype, seed=11 + i) for i, (_, y) in enumerate(outs)]
    sum((y * g).sum() for (_, y), g in zip(outs, gs)).backward()
    sum((x * ours(g)).sum() for (x, _), g in zip(outs, gs)).backward()
    for i, (x, y) in enumerate(zip(mine, th)):
        if y is not None and y.requires_grad:
            assert_close(x.grad, y.grad, rtol, atol, f"{what} (grad of input {i})")
    tp = dict(tm.named_parameters())
    for name, p in om.named_parameters():
        assert_close(p.grad, tp[name].grad, rtol, atol, f"{what} (grad of {name})")
    return a, b


# =========================================================================== RNN, LSTM, GRU vs torch
RNN_CASES = [
    ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2)), ("RNN", dict(bidirectional=True, batch_first=True)),
    ("RNN", dict(bias=False, num_layers=2, bidirectional=True)),
    ("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(bias=False, proj_size=2)),
    ("GRU", {}), ("GRU", dict(num_layers=3, bidirectional=True, batch_first=True)), ("GRU", dict(bias=False)),
]


@pytest.mark.parametrize("kind,kw", RNN_CASES, ids=[f"{k}-{'-'.join(f'{a}={b}' for a, b in kw.items())}"
                                                    for k, kw in RNN_CASES])
def test_recurrent_layers_match_torch(T, kind, kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(4, 5, **kw).double()
    om = getattr(nn, kind)(4, 5, **kw).double()
    L, N = 6, 3
    D = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    hout = kw.get("proj_size", 0) or 5
    bf = kw.get("batch_first", False)
    lstm = kind == "LSTM"
    x = randn(N, L, 4, seed=1) if bf else randn(L, N, 4, seed=1)
    h0, c0 = randn(D * layers, N, hout, seed=2), randn(D * layers, N, 5, seed=3)
    check(om, tm, lambda m, x: m(x), [x], what=f"{kind} no state")
    if lstm:
        check(om, tm, lambda m, x, h, c: m(x, (h, c)), [x, h0, c0], what=f"{kind} h0 c0")
        check(om, tm, lambda m, x, h, c: m(x, (h, c)), [x[0] if bf else x[:, 0], h0[:, 0], c0[:, 0]],
              what=f"{kind} unbatched h0 c0")
    else:
        check(om, tm, lambda m, x, h: m(x, h), [x, h0], what=f"{kind} h0")
        check(om, tm, lambda m, x, h: m(x, h), [x[:, 1] if not bf else x[1], h0[:, 1]], what=f"{kind} unbatched h0")
    check(om, tm, lambda m, x: m(x), [x[:, 2] if not bf else x[2]], what=f"{kind} unbatched")
    # float32 too
    om.float()
    tm.float()
    check(om, tm, lambda m, x: m(x), [x.float()], rtol=1e-5, atol=1e-6, what=f"{kind} float32")


def test_recurrent_long_sequence_and_train_mode_without_dropout(T):
    torch.manual_seed(1)
    tm = torch.nn.LSTM(3, 4, num_layers=2).double()
    om = nn.LSTM(3, 4, num_layers=2).double()
    check(om, tm, lambda m, x: m(x), [randn(40, 2, 3, seed=5)], what="LSTM L=40")
    tm.eval()
    om.eval()
    check(om, tm, lambda m, x: m(x), [randn(5, 2, 3, seed=6)], what="LSTM eval")


@pytest.mark.parametrize("kind,kw", [("RNN", {}), ("RNN", dict(nonlinearity="relu")), ("LSTM", {}), ("GRU", {})],
                         ids=["RNN-tanh", "RNN-relu", "LSTM", "GRU"])
def test_fused_recurrence_split_among_threads_bit_for_bit(T, kind, kw):
    """The fused recurrences (issue 25) give each thread its share of the batch rows for the
    whole sequence (20 and 40 rows: 3 and 5 panels of 8, split unevenly) and pack W_hh once
    ahead: at 1, 2 and 3 threads the outputs and all gradients are the same bits, and match
    torch."""
    if np is None:
        pytest.skip("numpy is needed for the bitwise comparison")
    old = tn.get_num_threads()
    try:
        for N, dt in ((20, torch.float64), (40, torch.float32)):
            torch.manual_seed(2)
            tm = getattr(torch.nn, kind)(8, 128, num_layers=2, bidirectional=True, batch_first=True, **kw).to(dt)
            om = getattr(nn, kind)(8, 128, num_layers=2, bidirectional=True, batch_first=True, **kw).to(getattr(tn, str(dt)[6:]))
            x = randn(N, 24, 8, seed=7, dtype=dt)
            got = []
            for threads in (1, 2, 3):
                tn.set_num_threads(threads)
                tol = (1e-7, 1e-9) if dt == torch.float64 else (2e-4, 2e-5)
                a, _ = check(om, tm, lambda m, x: m(x), [x], rtol=tol[0], atol=tol[1], what=f"{kind} N={N} threads={threads}")
                got.append([np.array(t.detach()) for t in flat(a)] + [np.array(p.grad) for _, p in om.named_parameters()])
            for threads, g in zip((2, 3), got[1:]):
                assert all(np.array_equal(u, v) for u, v in zip(got[0], g)), f"{kind} N={N}: {threads} threads differ from 1"
    finally:
        tn.set_num_threads(old)


# =========================================================================== PackedSequence vs torch
def _rnn_utils(m):
    return torch.nn.utils.rnn if isinstance(m, torch.nn.Module) else nn.utils.rnn


@pytest.mark.parametrize("kind,kw", RNN_CASES, ids=[f"{k}-{'-'.join(f'{a}={b}' for a, b in kw.items())}"
                                                    for k, kw in RNN_CASES])
def test_recurrent_layers_take_packed_sequences_like_torch(T, kind, kw):
    """pack (unsorted lengths with ties) -> layer -> unpack: the packed output, the padded
    output, the lengths, h_n (and c_n) at each sequence's own last step, and the gradients
    of the input, h0/c0 and every parameter."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(4, 5, **kw).double()
    om = getattr(nn, kind)(4, 5, **kw).double()
    lengths = [4, 6, 2, 4, 1]
    L, N = 6, len(lengths)
    D = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    hout = kw.get("proj_size", 0) or 5
    bf = kw.get("batch_first", False)
    x = randn(N, L, 4, seed=1) if bf else randn(L, N, 4, seed=1)
    h0, c0 = randn(D * layers, N, hout, seed=2), randn(D * layers, N, 5, seed=3)

    def run(m, x, *state, enforce_sorted=False, lens=lengths):
        U = _rnn_utils(m)
        p = U.pack_padded_sequence(x, lens, batch_first=bf, enforce_sorted=enforce_sorted)
        out, hn = m(p, (tuple(state) if len(state) == 2 else state[0]) if state else None)
        assert isinstance(out, U.PackedSequence)
        padded, got_lens = U.pad_packed_sequence(out, batch_first=bf, padding_value=-2.0, total_length=L + 1)
        return out, padded, got_lens, hn

    check(om, tm, run, [x], what=f"{kind} packed")
    state = [h0, c0] if kind == "LSTM" else [h0]
    check(om, tm, run, [x] + state, what=f"{kind} packed with state")
    srt = sorted(range(N), key=lambda i: -lengths[i])
    xs = x[srt] if bf else x[:, srt]
    check(om, tm, lambda m, x: run(m, x, enforce_sorted=True, lens=sorted(lengths, reverse=True)), [xs],
          what=f"{kind} packed, sorted")
    check(om, tm, lambda m, x: run(m, x, lens=[L] * N), [x], what=f"{kind} packed, one length")
    om.float()
    tm.float()
    check(om, tm, run, [x.float()], rtol=1e-5, atol=1e-6, what=f"{kind} packed float32")


def test_packed_h_n_is_each_sequences_last_step(T):
    """h_n of a packed batch equals running each sequence on its own."""
    m = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    seqs = [tn.randn(n, 3) for n in (2, 5, 3)]
    packed = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    out, hn = m(packed)
    outs = nn.utils.rnn.unpack_sequence(out)
    for i, s in enumerate(seqs):
        o1, h1 = m(s.unsqueeze(1))
        assert tn.allclose(outs[i], o1.squeeze(1), atol=1e-6)
        assert tn.allclose(hn[:, i], h1.squeeze(1), atol=1e-6)


def test_pad_pack_helpers_match_torch(T):
    U, TU = nn.utils.rnn, torch.nn.utils.rnn
    seqs = [randn(n, 2, seed=n) for n in (3, 5, 1, 5)]
    for bf in (False, True):
        for pv in (0.0, -1.5):
            assert_close(U.pad_sequence([ours(s) for s in seqs], batch_first=bf, padding_value=pv),
                         TU.pad_sequence(seqs, batch_first=bf, padding_value=pv), what=f"pad_sequence {bf} {pv}")
    ints = [torch.tensor([1, 2, 3]), torch.tensor([4, 5]), torch.tensor([6])]
    assert_close(U.pad_sequence([ours(s) for s in ints]), TU.pad_sequence(ints), what="int pad_sequence")
    for es in (True, False):
        a, b = U.pack_sequence([ours(s) for s in ints], enforce_sorted=es), TU.pack_sequence(ints, enforce_sorted=es)
        for x, y, f in zip(a, b, a._fields):
            assert_close(x, y, what=f"pack_sequence {f}")
        assert repr(a) == repr(b)
        assert [t.tolist() for t in U.unpack_sequence(a)] == [t.tolist() for t in TU.unpack_sequence(b)]
    a = U.pack_sequence([ours(s) for s in seqs], enforce_sorted=False)
    b = TU.pack_sequence(seqs, enforce_sorted=False)
    for x, y, f in zip(a, b, a._fields):
        assert_close(x, y, what=f"pack_sequence unsorted {f}")
    for bf in (False, True):
        pa, la = U.pad_packed_sequence(a, batch_first=bf, total_length=7)
        pb, lb = TU.pad_packed_sequence(b, batch_first=bf, total_length=7)
        assert_close(pa, pb, what="pad_packed_sequence")
        assert_close(la, lb, what="pad_packed_sequence lengths")
        ua = U.unpad_sequence(pa, la, batch_first=bf)
        ub = TU.unpad_sequence(pb.clone(), lb, batch_first=bf)
        for x, y in zip(ua, ub):
            assert_close(x, y, what="unpad_sequence")
    perm = torch.tensor([2, 0, 3, 1])
    assert_close(U.invert_permutation(ours(perm)), TU.invert_permutation(perm), what="invert_permutation")
    assert U.invert_permutation(None) is None
    p = U.pack_sequence([ours(s) for s in seqs], enforce_sorted=False)
    assert p.double().data.dtype is tn.float64 and p.float().data.dtype is tn.float32 and p.to(tn.float32) is not p
    assert p.to(tn.float64) is p and not p.is_cuda and not p.is_pinned()
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert U.PackedSequence(data, batch_sizes, sorted_indices).unsorted_indices.tolist() == unsorted_indices.tolist()
    assert U.PackedSequence((data, batch_sizes)).batch_sizes is batch_sizes


def test_pack_and_pad_gradients_match_torch(T):
    """pack_padded_sequence and pad_packed_sequence are differentiable (index_select)."""
    lengths = [3, 1, 4]

    def run(m, x):
        U = torch.nn.utils.rnn if m is None else nn.utils.rnn
        p = U.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        return U.pad_packed_sequence(U.PackedSequence(p.data * 2, p.batch_sizes, p.sorted_indices,
                                                      p.unsorted_indices), total_length=5)[0]
    x = randn(3, 4, 2, seed=4).requires_grad_()
    y = run(None, x)
    g = randn(*y.shape, seed=5)
    (y * g).sum().backward()
    ox = ours(x).requires_grad_()
    oy = run(nn, ox)
    assert_close(oy, y, what="padded")
    (oy * ours(g)).sum().backward()
    assert_close(ox.grad, x.grad, what="grad")


def test_packed_sequence_errors_match_torch(T):
    U, TU = nn.utils.rnn, torch.nn.utils.rnn
    x, tx = tn.ones(4, 3, 2), torch.ones(4, 3, 2)
    cases = [
        (lambda R, x: R.pack_padded_sequence(x, [2, 3, 1]), "must be sorted in decreasing order"),
        (lambda R, x: R.pack_padded_sequence(x, [3, 2, 0]), "has to be greater than 0"),
        (lambda R, x: R.pack_padded_sequence(x, [3, 2]), "to be equal to batch_size, but got 2"),
        (lambda R, x: R.pack_padded_sequence(x[:0], []), "Cannot pack empty tensors"),
        (lambda R, x: R.pad_sequence([]), "empty list of sequences"),
        (lambda R, x: R.pad_packed_sequence(R.pack_padded_sequence(x, [3, 2, 1]), total_length=2),
         "Expected total_length to be at least"),
    ]
    for f, msg in cases:
        with pytest.raises(Exception, match=msg) as theirs_:
            f(TU, tx)
        with pytest.raises(theirs_.type, match=msg):
            f(U, x)
    with pytest.raises(TypeError):
        U.pad_sequence([1, 2])
    with pytest.raises(RuntimeError, match="larger than the padded sequence length"):
        U.pack_padded_sequence(x, [5, 2, 1])          # torch reads past the end here
    p = U.PackedSequence(tn.ones(6, 1, 2), tn.tensor([3, 2, 1]))
    tp = TU.PackedSequence(torch.ones(6, 1, 2), torch.tensor([3, 2, 1]))
    with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 3"):
        torch.nn.LSTM(2, 3)(tp)
    with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 3"):
        nn.LSTM(2, 3)(p)
    p = U.pack_sequence([tn.ones(2, 2), tn.ones(1, 2)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]"):
        nn.GRU(2, 3)(p, tn.zeros(1, 3, 3))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        nn.GRU(3, 3)(p)


def test_packed_training_step_and_no_leaks():
    m = nn.LSTM(3, 4, bidirectional=True)
    opt = tn.optim.SGD(m.parameters(), lr=0.1)
    counts = []
    for _ in range(4):
        seqs = [tn.randn(n, 3) for n in (5, 2, 4, 2)]
        out, (h, c) = m(nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False))
        padded, lengths = nn.utils.rnn.pad_packed_sequence(out)
        assert lengths.tolist() == [5, 2, 4, 2]
        loss = padded.pow(2).sum() + h.sum() + c.sum()
        opt.zero_grad()
        loss.backward()
        assert all(p.grad is not None and p.grad.abs().sum().item() > 0 for p in m.parameters())
        opt.step()
        del seqs, out, h, c, padded, lengths, loss
        counts.append(_live())
    assert counts[1:] == counts[:-1], counts          # flat after the first step (the grads)


# =========================================================================== cells vs torch
CELL_CASES = [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")), ("RNNCell", dict(bias=False)),
              ("LSTMCell", {}), ("LSTMCell", dict(bias=False)), ("GRUCell", {}), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("kind,kw", CELL_CASES, ids=[f"{k}-{kw}" for k, kw in CELL_CASES])
def test_cells_match_torch(T, kind, kw):
    torch.manual_seed(2)
    tm = getattr(torch.nn, kind)(4, 5, **kw).double()
    om = getattr(nn, kind)(4, 5, **kw).double()
    x, h, c = randn(3, 4, seed=1), randn(3, 5, seed=2), randn(3, 5, seed=3)
    check(om, tm, lambda m, x: m(x), [x], what=f"{kind} no state")
    check(om, tm, lambda m, x: m(x), [x[0]], what=f"{kind} unbatched no state")
    if kind == "LSTMCell":
        check(om, tm, lambda m, x, h, c: m(x, (h, c)), [x, h, c], what=f"{kind} state")
        check(om, tm, lambda m, x, h, c: m(x, (h, c)), [x[1], h[1], c[1]], what=f"{kind} unbatched state")
    else:
        check(om, tm, lambda m, x, h: m(x, h), [x, h], what=f"{kind} state")
        check(om, tm, lambda m, x, h: m(x, h), [x[1], h[1]], what=f"{kind} unbatched state")


def test_cell_unrolled_equals_layer(T):
    """An LSTMCell stepped over time with the layer's weights gives the LSTM's output."""
    lstm = nn.LSTM(3, 4).double()
    cell = nn.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = ours(randn(5, 2, 3, seed=4))
    out, (hn, cn) = lstm(x)
    h = c = None
    steps = []
    for t in range(5):
        h, c = cell(x[t], None if h is None else (h, c))
        steps.append(h)
    assert tn.allclose(tn.stack(steps), out, rtol=1e-12, atol=1e-12)
    assert tn.allclose(h, hn[0]) and tn.allclose(c, cn[0])


# =========================================================================== MultiheadAttention vs torch
def _mha_inputs(E, kdim, vdim, L=3, S=4, N=2, batch_first=False, batched=True):
    q, k, v = randn(L, N, E, seed=1), randn(S, N, kdim, seed=2), randn(S, N, vdim, seed=3)
    if batch_first:
        q, k, v = (t.transpose(0, 1).contiguous() for t in (q, k, v))
    if not batched:
        q, k, v = (t[:, 0].contiguous() if not batch_first else t[0].contiguous() for t in (q, k, v))
    return q, k, v


def _masks(L=3, S=4, N=2, H=2, batched=True):
    bool2 = torch.zeros(L, S, dtype=torch.bool)
    bool2[0, 3] = bool2[2, 1] = True
    float3 = randn(N * H if batched else H, L, S, seed=9)
    kpm = torch.zeros(N, S, dtype=torch.bool) if batched else torch.zeros(S, dtype=torch.bool)
    kpm[..., 2] = True
    fkpm = randn(N, S, seed=10) if batched else randn(S, seed=10)
    return bool2, float3, kpm, fkpm


MHA_CASES = [
    dict(), dict(batch_first=True), dict(kdim=5, vdim=3), dict(bias=False), dict(add_bias_kv=True),
    dict(add_zero_attn=True), dict(add_bias_kv=True, add_zero_attn=True, batch_first=True, kdim=6, vdim=6),
]


@pytest.mark.parametrize("kw", MHA_CASES, ids=[str(kw) for kw in MHA_CASES])
@pytest.mark.parametrize("path", ["C", "python"])
def test_multihead_attention_matches_torch(T, monkeypatch, kw, path):
    if path == "python":            # the F.multi_head_attention_forward fallback
        monkeypatch.setattr(nn.MultiheadAttention, "_c_named", lambda self: None)
    E, H = 8, 2
    torch.manual_seed(3)
    tm = torch.nn.MultiheadAttention(E, H, **kw).double()
    om = nn.MultiheadAttention(E, H, **kw).double()
    copy_weights(om, tm)
    bf = kw.get("batch_first", False)
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)
    q, k, v = _mha_inputs(E, kd, vd, batch_first=bf)
    bool2, float3, kpm, fkpm = _masks()
    call = lambda m, q, k, v, **c: m(q, k, v, **c)  # noqa: E731
    check(om, tm, call, [q, k, v], what=f"{kw} plain", copy_=False)
    check(om, tm, call, [q, k, v], dict(attn_mask=bool2, key_padding_mask=kpm), what=f"{kw} bool masks",
          copy_=False)
    check(om, tm, call, [q, k, v], dict(attn_mask=float3), what=f"{kw} float 3-d mask", copy_=False)
    check(om, tm, call, [q, k, v], dict(key_padding_mask=fkpm), what=f"{kw} float kpm", copy_=False)
    check(om, tm, call, [q, k, v], dict(attn_mask=float3[:, :, :].clone(), key_padding_mask=kpm),
          what=f"{kw} float mask + bool kpm", copy_=False)
    check(om, tm, lambda m, q, k, v, **c: m(q, k, v, need_weights=False, **c), [q, k, v], dict(attn_mask=bool2),
          what=f"{kw} need_weights=False", copy_=False)
    check(om, tm, lambda m, q, k, v: m(q, k, v, average_attn_weights=False), [q, k, v],
          what=f"{kw} per-head weights", copy_=False)
    uq, uk, uv = _mha_inputs(E, kd, vd, batch_first=bf, batched=False)
    _, ufloat3, ukpm, _ = _masks(batched=False)
    check(om, tm, call, [uq, uk, uv], dict(attn_mask=ufloat3, key_padding_mask=ukpm), what=f"{kw} unbatched",
          copy_=False)
    if kd == E and vd == E:        # self-attention: one tensor for q, k and v
        check(om, tm, lambda m, x, **c: m(x, x, x, **c), [k], dict(key_padding_mask=kpm), what=f"{kw} self",
              copy_=False)


def test_multihead_attention_is_causal(T):
    """is_causal=True with the causal mask (torch 2.x's contract), and without it (built here)."""
    torch.manual_seed(4)
    tm = torch.nn.MultiheadAttention(8, 2).double()
    om = nn.MultiheadAttention(8, 2).double()
    copy_weights(om, tm)
    q, k, v = _mha_inputs(8, 8, 8, L=4, S=4)
    causal = torch.triu(torch.full((4, 4), float("-inf"), dtype=torch.float64), 1)
    ref = tm(q, k, v, attn_mask=causal)
    a = om(ours(q), ours(k), ours(v), attn_mask=ours(causal), is_causal=True)
    b = om(ours(q), ours(k), ours(v), is_causal=True)
    for x in (a, b):
        assert_close(x[0], ref[0], what="is_causal output")
        assert_close(x[1], ref[1], what="is_causal weights")
    c = F.multi_head_attention_forward(ours(q), ours(k), ours(v), 8, 2, om.in_proj_weight, om.in_proj_bias, None,
                                       None, False, 0.0, om.out_proj.weight, om.out_proj.bias, is_causal=True)
    assert_close(c[0], ref[0], what="F is_causal")


def test_functional_multi_head_attention_forward(T):
    E, H, S, N = 8, 2, 4, 2
    q, k, v = _mha_inputs(E, E, E)
    w, b = randn(3 * E, E, seed=20), randn(3 * E, seed=21)
    ow, ob = randn(E, E, seed=22), randn(E, seed=23)
    bk, bv = randn(1, 1, E, seed=24), randn(1, 1, E, seed=25)
    bool2, float3, kpm, _ = _masks()
    args = lambda M, q, k, v, w, b, ow, ob, bk, bv, **c: M.multi_head_attention_forward(  # noqa: E731
        q, k, v, E, H, w, b, bk, bv, True, 0.0, ow, ob, training=False, **c)

    class Fn:                       # check() wants modules: a parameterless one calling F
        def __init__(self, M):
            self.M = M

        def __call__(self, *a, **c):
            return args(self.M, *a, **c)

        def named_parameters(self):
            return iter(())
    check(Fn(F), Fn(TF), lambda m, *a, **c: m(*a, **c), [q, k, v, w, b, ow, ob, bk, bv],
          dict(attn_mask=bool2, key_padding_mask=kpm), what="F.mha bias_kv zero_attn", copy_=False)
    # separate projections and static keys / values
    qw, kw_, vw = randn(E, E, seed=30), randn(E, 5, seed=31), randn(E, 3, seed=32)
    sk, sv = randn(N * H, 6, E // H, seed=33), randn(N * H, 6, E // H, seed=34)
    k5, v3 = randn(S, N, 5, seed=35), randn(S, N, 3, seed=36)
    for M, conv in ((TF, lambda t: t), (F, ours)):
        out = M.multi_head_attention_forward(
            conv(q), conv(k5), conv(v3), E, H, None, conv(b), None, None, False, 0.0, conv(ow), conv(ob),
            training=False, use_separate_proj_weight=True, q_proj_weight=conv(qw), k_proj_weight=conv(kw_),
            v_proj_weight=conv(vw), static_k=conv(sk), static_v=conv(sv), average_attn_weights=False)
        if M is TF:
            ref = out
        else:
            assert_close(out[0], ref[0], what="static k/v output")
            assert_close(out[1], ref[1], what="static k/v weights")


# =========================================================================== Transformer vs torch
def _act(name, M):
    M = tn if M is nn else torch
    return {"relu": "relu", "gelu": "gelu", "gelu module": M.nn.GELU(), "tanh fn": M.tanh}[name]


LAYER_CASES = [dict(), dict(activation="gelu"), dict(norm_first=True), dict(batch_first=True),
               dict(activation="gelu module", norm_first=True, batch_first=True), dict(activation="tanh fn")]


@pytest.mark.parametrize("kw", LAYER_CASES, ids=[str(kw) for kw in LAYER_CASES])
def test_transformer_layers_match_torch(T, kw):
    d, nh, ff = 8, 2, 16
    bf = kw.get("batch_first", False)

    def make(M, decoder):
        k = dict(kw)
        if "activation" in k:
            k["activation"] = _act(k["activation"], M)
        cls = M.TransformerDecoderLayer if decoder else M.TransformerEncoderLayer
        return cls(d, nh, ff, **k).double().eval()
    L, S, N = 4, 5, 2
    src = randn(N, S, d, seed=1) if bf else randn(S, N, d, seed=1)
    tgt = randn(N, L, d, seed=2) if bf else randn(L, N, d, seed=2)
    causal = torch.triu(torch.full((L, L), float("-inf"), dtype=torch.float64), 1)
    skpm = torch.zeros(N, S, dtype=torch.bool)
    skpm[1, 4] = True
    torch.manual_seed(5)
    te, oe = make(torch.nn, False), make(nn, False)
    assert str(oe) == str(te)
    check(oe, te, lambda m, x: m(x), [src], what=f"encoder layer {kw}")
    check(oe, te, lambda m, x, **c: m(x, **c), [src], dict(src_key_padding_mask=skpm), what=f"encoder kpm {kw}",
          copy_=False)
    check(oe, te, lambda m, x, **c: m(x, **c), [tgt], dict(src_mask=causal), what=f"encoder mask {kw}",
          copy_=False)
    check(oe, te, lambda m, x: m(x[0] if bf else x[:, 0]), [src], what=f"encoder unbatched {kw}", copy_=False)
    td, od = make(torch.nn, True), make(nn, True)
    assert str(od) == str(td)
    check(od, td, lambda m, t, s, **c: m(t, s, **c), [tgt, src],
          dict(tgt_mask=causal, memory_key_padding_mask=skpm), what=f"decoder layer {kw}")


def test_transformer_stacks_match_torch(T):
    d, nh, ff = 8, 2, 16
    torch.manual_seed(6)
    src, tgt = randn(5, 2, d, seed=1), randn(4, 2, d, seed=2)
    causal = torch.triu(torch.full((4, 4), float("-inf"), dtype=torch.float64), 1)
    skpm = torch.zeros(2, 5, dtype=torch.bool)
    skpm[0, 3] = True

    def enc(M):
        return M.TransformerEncoder(M.TransformerEncoderLayer(d, nh, ff), 2, norm=M.LayerNorm(d)).double().eval()

    def dec(M):
        return M.TransformerDecoder(M.TransformerDecoderLayer(d, nh, ff, norm_first=True), 2).double().eval()

    def full(M):
        return M.Transformer(d, nh, 2, 1, ff, batch_first=True).double().eval()
    te, oe = enc(torch.nn), enc(nn)
    assert str(oe) == str(te)
    check(oe, te, lambda m, x, **c: m(x, **c), [src], dict(src_key_padding_mask=skpm), what="TransformerEncoder")
    td, od = dec(torch.nn), dec(nn)
    assert str(od) == str(td)
    check(od, td, lambda m, t, s, **c: m(t, s, **c), [tgt, src], dict(tgt_mask=causal), what="TransformerDecoder")
    tt, ot = full(torch.nn), full(nn)
    assert str(ot) == str(tt)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4).double()
    check(ot, tt, lambda m, s, t, **c: m(s, t, **c), [src.transpose(0, 1), tgt.transpose(0, 1)],
          dict(tgt_mask=mask, src_key_padding_mask=skpm), what="Transformer")
    # training mode with dropout 0 equals eval
    te0, oe0 = (M.TransformerEncoderLayer(d, nh, ff, dropout=0.0).double() for M in (torch.nn, nn))
    check(oe0, te0, lambda m, x: m(x), [src], what="encoder layer training, dropout 0")


def test_generate_square_subsequent_mask(T):
    for sz in (0, 1, 4):
        m = nn.Transformer.generate_square_subsequent_mask(sz)
        assert m.dtype is tn.float32
        assert torch.equal(theirs(m), torch.nn.Transformer.generate_square_subsequent_mask(sz))
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=tn.float64).dtype is tn.float64


# =========================================================================== reprs and keys
@pytest.mark.filterwarnings("ignore")
def test_reprs_and_state_dict_keys_match_torch(T):
    cases = [
        lambda M: M.RNN(4, 5), lambda M: M.RNN(4, 5, 2, nonlinearity="relu", bias=False, batch_first=True,
                                               dropout=0.5, bidirectional=True),
        lambda M: M.LSTM(4, 5, proj_size=3), lambda M: M.LSTM(4, 5, num_layers=3, dropout=0.25),
        lambda M: M.GRU(4, 5, bidirectional=True, bias=False), lambda M: M.GRU(4, 5, dropout=0.1),
        lambda M: M.RNNCell(4, 5), lambda M: M.RNNCell(4, 5, bias=False, nonlinearity="relu"),
        lambda M: M.LSTMCell(4, 5, bias=False), lambda M: M.GRUCell(4, 5),
        lambda M: M.MultiheadAttention(8, 2), lambda M: M.MultiheadAttention(8, 4, dropout=0.1, bias=False, kdim=3),
        lambda M: M.MultiheadAttention(8, 2, add_bias_kv=True, vdim=5),
        lambda M: M.TransformerEncoderLayer(8, 2, 16, activation="gelu"),
        lambda M: M.TransformerDecoderLayer(8, 2, 16, dropout=0.2, norm_first=True),
        lambda M: M.TransformerEncoderLayer(8, 2, 16, activation=M.GELU()),
        lambda M: M.TransformerEncoder(M.TransformerEncoderLayer(8, 2, 16), 2),
        lambda M: M.Transformer(8, 2, 1, 2, 16),
        lambda M: M.Sequential(M.LSTM(3, 4), M.Linear(4, 2)),
    ]
    for make in cases:
        t, o = make(torch.nn), make(nn)
        assert repr(o) == repr(t)
        assert list(o.state_dict().keys()) == list(t.state_dict().keys())
        assert [(n, tuple(p.shape)) for n, p in o.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    lstm = nn.LSTM(3, 4, 2, bidirectional=True)
    tl = torch.nn.LSTM(3, 4, 2, bidirectional=True)
    assert lstm._flat_weights_names == tl._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in lstm.all_weights] == \
           [[tuple(p.shape) for p in ws] for ws in tl.all_weights]
    assert [a for a in ("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                        "bidirectional", "proj_size") if getattr(lstm, a) != getattr(tl, a)] == []
    m, tmha = nn.MultiheadAttention(8, 2, kdim=3), torch.nn.MultiheadAttention(8, 2, kdim=3)
    for a in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads", "dropout", "batch_first",
              "head_dim", "add_zero_attn", "bias_k", "bias_v", "in_proj_weight"):
        assert (getattr(m, a) is None) == (getattr(tmha, a) is None) and \
               (getattr(m, a) is None or isinstance(getattr(m, a), tn.Tensor) or getattr(m, a) == getattr(tmha, a)), a


# =========================================================================== errors
@pytest.mark.filterwarnings("ignore")
def test_errors_match_torch(T):
    pairs = [
        # constructors
        (ValueError, lambda M: M.LSTM(4, 5, dropout=1.5)),
        (ValueError, lambda M: M.LSTM(4, 5, proj_size=5)),
        (ValueError, lambda M: M.LSTM(4, 5, proj_size=-1)),
        (ValueError, lambda M: M.GRU(4, 5, proj_size=2)),
        (ValueError, lambda M: M.RNN(4, 5, proj_size=2)),
        (AssertionError, lambda M: M.MultiheadAttention(8, 3)),
        (RuntimeError, lambda M: M.TransformerEncoderLayer(8, 2, activation="tanh")),
        # forwards
        (RuntimeError, lambda M: M.LSTM(4, 5)(M_randn(M, 2, 3, 6))),
        (RuntimeError, lambda M: M.LSTM(4, 5)(M_randn(M, 2, 3, 4), (M_randn(M, 1, 2, 5), M_randn(M, 1, 3, 5)))),
        (RuntimeError, lambda M: M.LSTM(4, 5)(M_randn(M, 2, 3, 4), (M_randn(M, 1, 3, 5), M_randn(M, 1, 3, 4)))),
        (RuntimeError, lambda M: M.LSTM(4, 5)(M_randn(M, 2, 3, 4), (M_randn(M, 3, 5), M_randn(M, 3, 5)))),
        (RuntimeError, lambda M: M.LSTM(4, 5)(M_randn(M, 2, 4), (M_randn(M, 1, 1, 5), M_randn(M, 1, 1, 5)))),
        (RuntimeError, lambda M: M.GRU(4, 5, 2)(M_randn(M, 2, 3, 4), M_randn(M, 1, 3, 5))),
        (RuntimeError, lambda M: M.RNN(4, 5)(M_randn(M, 2, 3, 4), M_randn(M, 3, 5))),
        (RuntimeError, lambda M: M.RNN(4, 5)(M_randn(M, 2, 4), M_randn(M, 1, 3, 5))),
        (RuntimeError, lambda M: M.RNN(4, 5, bidirectional=True)(M_randn(M, 2, 4), M_randn(M, 1, 5))),
        (AssertionError, lambda M: M.MultiheadAttention(8, 2)(*[M_randn(M, 3, 2, 6)] * 3)),
        (AssertionError, lambda M: M.MultiheadAttention(8, 2)(M_randn(M, 3, 2, 8), M_randn(M, 4, 2, 8),
                                                              M_randn(M, 5, 2, 8))),
        (AssertionError, lambda M: M.MultiheadAttention(8, 2)(M_randn(M, 3, 2, 8), M_randn(M, 4, 8),
                                                              M_randn(M, 4, 8))),
        (AssertionError, lambda M: M.MultiheadAttention(8, 2)(M_randn(M, 3, 8), M_randn(M, 4, 8), M_randn(M, 4, 8),
                                                              attn_mask=M_randn(M, 3, 3, 4))),
        (RuntimeError, lambda M: M.MultiheadAttention(8, 2)(*[M_randn(M, 3, 2, 8)] * 3,
                                                            attn_mask=M_randn(M, 3, 4))),
        (RuntimeError, lambda M: M.MultiheadAttention(8, 2, batch_first=True)(*[M_randn(M, 2, 3, 8)] * 3,
                                                                              attn_mask=M_randn(M, 5, 3, 3))),
        (AssertionError, lambda M: M.MultiheadAttention(8, 2)(*[M_randn(M, 3, 2, 8)] * 3,
                                                              key_padding_mask=M_zeros(M, 2, 3))),
        (RuntimeError, lambda M: M.Transformer(8, 2, 1, 1, 16)(M_randn(M, 3, 2, 8), M_randn(M, 3, 1, 8))),
    ]
    for exc, f in pairs:
        with pytest.raises(exc) as oe:
            f(nn)
        with pytest.raises(exc) as te:
            f(torch.nn)
        assert str(oe.value) == str(te.value)


def M_randn(M, *shape):
    return tn.randn(*shape) if M is nn else torch.randn(*shape)


def M_zeros(M, *shape):
    return tn.zeros(*shape, dtype=tn.int64) if M is nn else torch.zeros(*shape, dtype=torch.int64)


@pytest.mark.filterwarnings("ignore")
def test_errors_are_python_exceptions():
    """Checks done here (torch 2.x's wording) and checks done in C surface as exceptions."""
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2-D or 3-D but received 4-D tensor"):
        nn.LSTM(2, 3)(tn.randn(1, 2, 3, 2))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2-D or 3-D but received 1-D tensor"):
        nn.RNN(2, 3)(tn.randn(2))
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(2, 3, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.GRU(2, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.GRU(2, 3, num_layers=0)
    with pytest.raises(TypeError, match="hidden_size should be of type int"):
        nn.LSTM(2, 3.0)
    with pytest.raises(TypeError, match="hx must be a tuple"):
        nn.LSTM(2, 3)(tn.randn(4, 1, 2), tn.zeros(1, 1, 3))
    with pytest.raises(TypeError, match="PackedSequence"):
        nn.GRU(2, 3)([1, 2])
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.GRUCell(2, 3)(tn.randn(1, 1, 2))
    with pytest.raises(ValueError, match="LSTMCell: Expected hidden to be 1D or 2D, got 3D instead"):
        nn.LSTMCell(2, 3)(tn.randn(1, 2), (tn.zeros(1, 1, 3), tn.zeros(1, 3)))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 4, expected 3"):
        nn.GRUCell(2, 3)(tn.randn(5, 2), tn.zeros(5, 4))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 3 expected 2"):
        nn.RNNCell(2, 3)(tn.randn(5, 3))
    with pytest.raises(RuntimeError, match="Input batch size 5 doesn't match hidden0 batch size 4"):
        nn.RNNCell(2, 3)(tn.randn(5, 2), tn.zeros(4, 3))
    with pytest.raises(RuntimeError, match="float64"):              # dtype mismatch, checked in C
        nn.LSTM(2, 3)(tn.randn(4, 1, 2, dtype=tn.float64))
    with pytest.raises(RuntimeError, match="float64"):
        nn.MultiheadAttention(4, 2)(*[tn.randn(3, 1, 4, dtype=tn.float64)] * 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 1)
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask"):
        nn.TransformerEncoderLayer(4, 2, 8)(tn.randn(3, 1, 4), src_key_padding_mask=tn.zeros(1, 3, dtype=tn.int64))
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(2, 3, dropout=0.5)
    with pytest.warns(UserWarning, match="Byte tensor for attn_mask"):
        nn.MultiheadAttention(4, 2)(*[tn.randn(3, 1, 4)] * 3, attn_mask=tn.zeros(3, 3, dtype=tn.uint8))
    m = nn.LSTM(2, 3)
    m.weight_hh_l0 = None
    with pytest.raises(RuntimeError, match="weight_hh_l0 is None"):
        m(tn.randn(4, 1, 2))


# =========================================================================== binding to the C module
def _lstm_pair(**kw):
    torch.manual_seed(7)
    tm = torch.nn.LSTM(3, 4, **kw).double()
    om = nn.LSTM(3, 4, **kw).double()
    copy_weights(om, tm)
    return om, tm


def test_parameters_stay_bound_through_conversions_loads_and_replacement(T):
    om, tm = _lstm_pair(num_layers=2)
    x = randn(5, 2, 3, seed=1)
    om.float()                                 # converted in place after a first forward
    om(ours(x).float())
    om.double()
    check(om, tm, lambda m, x: m(x), [x], what="after float()/double()", copy_=False)
    tm2 = torch.nn.LSTM(3, 4, num_layers=2).double()
    copy_weights(om, tm2)                      # load_state_dict copies in place
    check(om, tm2, lambda m, x: m(x), [x], what="after load_state_dict", copy_=False)
    w = randn(16, 4, seed=8)
    with torch.no_grad():
        tm2.weight_hh_l1 = torch.nn.Parameter(w.clone())
    om.weight_hh_l1 = nn.Parameter(ours(w))    # a new Parameter object: registered again
    check(om, tm2, lambda m, x: m(x), [x], what="after replacing a parameter", copy_=False)
    assert om._flat_weights[om._flat_weights_names.index("weight_hh_l1")] is om.weight_hh_l1


def test_frozen_parameters_stay_frozen(T):
    om, tm = _lstm_pair()
    om.weight_ih_l0.requires_grad_(False)
    tm.weight_ih_l0.requires_grad_(False)
    out, _ = om(ours(randn(4, 1, 3)))
    out.sum().backward()
    assert not om.weight_ih_l0.requires_grad and om.weight_ih_l0.grad is None
    assert om.weight_hh_l0.grad is not None
    mha = nn.MultiheadAttention(4, 2)
    mha.in_proj_weight.requires_grad_(False)
    mha(*[tn.randn(2, 1, 4)] * 3)[0].sum().backward()
    assert not mha.in_proj_weight.requires_grad and mha.in_proj_weight.grad is None
    assert mha.out_proj.weight.grad is not None


def test_copies_and_pickles_are_independent(T):
    om, tm = _lstm_pair(bidirectional=True)
    x = randn(4, 2, 3, seed=2)
    ref = om(ours(x))[0]
    c = copy.deepcopy(om)
    p = pickle.loads(pickle.dumps(om))
    for m in (c, p):
        assert "_c" not in m.__dict__ or m._c.ptr is None or m._c.ptr != om._c.ptr   # the C module is not copied
        assert m(ours(x))[0].equal(ref)
        with tn.no_grad():
            m.weight_ih_l0.mul_(2)
        assert not m(ours(x))[0].equal(ref)
    assert om(ours(x))[0].equal(ref)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)
    y = enc(tn.randn(3, 1, 8))
    assert y.shape == (3, 1, 8)
    l0, l1 = enc.layers[0].self_attn, enc.layers[1].self_attn
    assert l0.in_proj_weight.equal(l1.in_proj_weight) and l0.in_proj_weight._ptr != l1.in_proj_weight._ptr
    assert l0._c.ptr != l1._c.ptr


def test_optimizer_training_matches_torch(T):
    om, tm = _lstm_pair(num_layers=2)
    oo = tn.optim.SGD(om.parameters(), lr=0.1, momentum=0.9)
    to = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    x, y = randn(6, 2, 3, seed=3), randn(6, 2, 4, seed=4)
    for _ in range(4):
        for m, opt, xx, yy in ((om, oo, ours(x), ours(y)), (tm, to, x, y)):
            opt.zero_grad()
            out, (h, c) = m(xx)
            ((out - yy) ** 2).mean().backward()
            opt.step()
    for (n, p), (_, q) in zip(om.named_parameters(), tm.named_parameters()):
        assert_close(p, q.detach(), rtol=1e-9, atol=1e-11, what=n)


@pytest.mark.filterwarnings("ignore")
def test_rnn_dropout_between_layers_in_training_only(T):
    torch.manual_seed(8)
    tm = torch.nn.GRU(3, 6, num_layers=3, dropout=0.5).double()
    om = nn.GRU(3, 6, num_layers=3, dropout=0.5).double()
    copy_weights(om, tm)
    x = ours(randn(5, 2, 3, seed=5))
    tm.eval()
    om.eval()
    check(om, tm, lambda m, x: m(x), [randn(5, 2, 3, seed=5)], what="GRU dropout eval", copy_=False)
    ev = om(x)[0]
    om.train()
    tn.manual_seed(3)
    a = om(x)[0]
    tn.manual_seed(3)
    b = om(x)[0]
    assert a.equal(b) and not a.equal(ev)
    one = nn.LSTM(3, 4, dropout=0.9).double()           # one layer: no dropout after the last
    assert one(x)[0].equal(one.eval()(x)[0])


def test_mha_dropout_in_training_only():
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = tn.randn(4, 2, 8)
    tn.manual_seed(1)
    a, wa = m(x, x, x)
    tn.manual_seed(1)
    b, wb = m(x, x, x)
    assert a.equal(b) and wa.equal(wb)
    m.eval()
    e, we = m(x, x, x)
    assert tn.allclose(we.sum(-1), tn.ones(2, 4), atol=1e-6)
    assert not wa.equal(we)
    m.dropout = 0.0                                       # a changed attribute rebuilds the C module
    m.train()
    assert m(x, x, x)[1].equal(we)


def test_building_the_c_module_does_not_consume_the_rng():
    tn.manual_seed(0)
    a = nn.LSTM(3, 4)
    a(tn.ones(2, 1, 3))
    m = nn.MultiheadAttention(4, 2)
    m(*[tn.ones(2, 1, 4)] * 3)
    r1 = tn.rand(5)
    tn.manual_seed(0)
    nn.LSTM(3, 4)
    nn.MultiheadAttention(4, 2)
    r2 = tn.rand(5)
    assert r1.equal(r2)


def test_no_leaks():
    """A training loop has flat memory; the modules (C modules included) free everything."""
    start = _live()
    mods = [nn.LSTM(3, 4, num_layers=2, bidirectional=True), nn.MultiheadAttention(4, 2),
            nn.TransformerEncoderLayer(4, 2, 8), nn.GRUCell(3, 4)]

    def step(m, mha, enc, cell):
        out, (h, c) = m(tn.randn(5, 2, 3, requires_grad=True))
        y = mha(*[tn.randn(3, 2, 4)] * 3)[0]
        z = enc(tn.randn(3, 2, 4))
        w = cell(tn.randn(2, 3))
        (out.sum() + h.sum() + c.sum() + y.sum() + z.sum() + w.sum()).backward()
        for mod in (m, mha, enc, cell):
            mod.zero_grad()
    step(*mods)
    before = _live()
    for _ in range(10):
        step(*mods)
    assert _live() == before
    del mods
    assert _live() == start


# =========================================================================== initialisation
def _c_param(mod, name):
    p = _C.lib.tn_module_get(mod, name.encode())
    assert p, name
    return _borrow(p)


def test_initialisation_equals_the_c_layers_bit_for_bit():
    lib = _C.lib
    cases = [
        (lambda: nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2),
         lambda: lib.tn_nn_lstm_str(3, 5, b"num_layers=2, bidirectional=True, proj_size=2")),
        (lambda: nn.GRU(3, 5, bias=False), lambda: lib.tn_nn_gru_str(3, 5, b"bias=False")),
        (lambda: nn.RNN(3, 5, 2, nonlinearity="relu"), lambda: lib.tn_nn_rnn_str(3, 5, b"num_layers=2, nonlinearity=relu")),
        (lambda: nn.RNNCell(3, 5), lambda: lib.tn_nn_rnn_cell_str(3, 5, b"")),
        (lambda: nn.LSTMCell(3, 5), lambda: lib.tn_nn_lstm_cell_str(3, 5, b"")),
        (lambda: nn.GRUCell(3, 5, bias=False), lambda: lib.tn_nn_gru_cell_str(3, 5, b"bias=False")),
        (lambda: nn.MultiheadAttention(8, 2, add_bias_kv=True),
         lambda: lib.tn_nn_multihead_attention_str(8, 2, b"add_bias_kv=True")),
        (lambda: nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False),
         lambda: lib.tn_nn_multihead_attention_str(8, 2, b"kdim=3, vdim=5, bias=False")),
        (lambda: nn.TransformerEncoderLayer(8, 2, 16),
         lambda: lib.tn_nn_transformer_encoder_layer_str(8, 2, b"dim_feedforward=16")),
        (lambda: nn.TransformerDecoderLayer(8, 2, 16, bias=False),
         lambda: lib.tn_nn_transformer_decoder_layer_str(8, 2, b"dim_feedforward=16, bias=False")),
    ]
    for make_py, make_c in cases:
        tn.manual_seed(5)
        py = make_py()
        tn.manual_seed(5)
        c = make_c()
        assert c, tn._C.lib.tn_last_error()
        try:
            names = [n for n, _ in py.named_parameters()]
            assert names
            for n, p in py.named_parameters():
                assert p.equal(_c_param(c, n)), f"{type(py).__name__} {n}"
        finally:
            lib.tn_module_free(c)


def test_python_transformer_layers_equal_the_c_layers():
    """Same seed, same weights: the Python composition (eval mode) gives the C layer's
    forward (tn_nn_transformer_*_layer_forward), bias=False included."""
    lib = _C.lib
    x, mem = tn.randn(4, 2, 8, dtype=tn.float64), tn.randn(5, 2, 8, dtype=tn.float64)
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=tn.float64)
    kpm = tn.tensor([[False, False, True, False, False], [False] * 5])
    for opts, kw in ((b"dim_feedforward=16", {}),
                     (b"dim_feedforward=16, bias=False, norm_first=True", dict(bias=False, norm_first=True)),
                     (b"dim_feedforward=16, activation=gelu, batch_first=True",
                      dict(activation="gelu", batch_first=True))):
        bf = kw.get("batch_first", False)
        x_, mem_ = (x.transpose(0, 1), mem.transpose(0, 1)) if bf else (x, mem)
        for decoder in (False, True):
            tn.manual_seed(9)
            py = (nn.TransformerDecoderLayer if decoder else nn.TransformerEncoderLayer)(8, 2, 16, **kw).eval()
            tn.manual_seed(9)
            c = (lib.tn_nn_transformer_decoder_layer_str if decoder else lib.tn_nn_transformer_encoder_layer_str)(8, 2, opts)
            assert c
            try:
                py.double()
                assert lib.tn_module_to_dtype(c, tn.float64._code) == 0
                assert lib.tn_module_train_str(c, b"mode=False") == 0
                if decoder:
                    want = tn._core._wrap(lib.tn_nn_transformer_decoder_layer_forward_opts(
                        c, x_._ptr, mem_._ptr, tn._C.tn_decoder_layer_forward_opts(tgt_mask=mask._ptr,
                                                                                   memory_key_padding_mask=kpm._ptr)))
                    got = py(x_, mem_, tgt_mask=mask, memory_key_padding_mask=kpm)
                else:
                    want = tn._core._wrap(lib.tn_nn_transformer_encoder_layer_forward_opts(
                        c, mem_._ptr, tn._C.tn_encoder_layer_forward_opts(src_key_padding_mask=kpm._ptr)))
                    got = py(mem_, src_key_padding_mask=kpm)
                assert tn.allclose(got, want, rtol=1e-12, atol=1e-12), (opts, decoder)
            finally:
                lib.tn_module_free(c)


def test_initialisation_statistics():
    tn.manual_seed(0)
    m = nn.LSTM(16, 64, num_layers=2, bidirectional=True)
    b = 1 / 8
    for n, p in m.named_parameters():
        assert p.abs().max().item() <= b, n
    w = m.weight_hh_l1_reverse
    assert abs(w.mean().item()) < 0.01 and abs(w.std().item() - b / math.sqrt(3)) < 0.005
    mha = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    bound = math.sqrt(6 / (64 + 3 * 64))
    w = mha.in_proj_weight
    assert w.abs().max().item() <= bound and abs(w.std().item() - bound / math.sqrt(3)) < 0.004
    assert mha.in_proj_bias.abs().sum().item() == 0 and mha.out_proj.bias.abs().sum().item() == 0
    assert mha.out_proj.weight.abs().max().item() <= 1 / 8
    assert 0.07 < tn.cat([mha.bias_k.flatten(), mha.bias_v.flatten()]).std().item() < 0.18   # xavier_normal: 1/8
    t = nn.Transformer(16, 2, 1, 1, 32)
    for n, p in t.named_parameters():                   # xavier_uniform for every matrix
        if p.dim() > 1:
            fan_in, fan_out = p.shape[1], p.shape[0]
            assert p.abs().max().item() <= math.sqrt(6 / (fan_in + fan_out)), n


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("params_grad", [False, True])
def test_double_backward_like_torch(name, params_grad):
    # the fused recurrence's create_graph backward runs a backward inside the backward, over
    # the input's projection: gradients of gradients must still reach the input
    if torch is None:
        pytest.skip("needs torch")
    torch.manual_seed(0)
    m = getattr(torch.nn, name)(3, 4, dtype=torch.float64)
    mt = getattr(tn.nn, name)(3, 4, dtype=tn.float64)
    mt.load_state_dict({k: tn.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    for p in list(m.parameters()) + list(mt.parameters()):
        p.requires_grad_(params_grad)
    x = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)
    xt = tn.tensor(x.detach().numpy(), requires_grad=True)

    def grads(mod, inp, lib):
        y, _ = mod(inp)
        g, = lib.autograd.grad((y ** 2).sum(), inp, create_graph=True)
        g2, = lib.autograd.grad((g ** 2).sum(), inp)
        return g, g2

    for a, b in zip(grads(m, x, torch), grads(mt, xt, tn)):
        assert abs(a.detach().numpy() - b.detach().numpy()).max() < 1e-12
