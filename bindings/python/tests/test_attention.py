"""The fused scaled dot-product attention (src/nn/attention.c) and the layers that use it.

PyTorch 1.13 has no F.scaled_dot_product_attention: the oracle is its definition written in
torch ops (softmax(q k^T * scale + mask) v), on the same random, non-contiguous and
broadcast inputs; gradients in float64 against torch's autograd through that definition.
MultiheadAttention and TransformerEncoderLayer (which take the fused path when no weights
are asked for) are compared with torch's modules, weights copied through state_dict.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_attention.py
"""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402

F = tn.nn.functional

try:
    import torch
except ImportError:  # the oracle tests skip themselves
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch as the oracle")


def ref_sdpa(q, k, v, mask=None, causal=False, scale=None):
    """F.scaled_dot_product_attention's math path (torch 2.x), in torch 1.13 ops."""
    L, S = q.shape[-2], k.shape[-2]
    s = (q @ k.transpose(-2, -1)) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if causal:
        mask = torch.ones(L, S, dtype=torch.bool).tril()
    if mask is not None and mask.dtype == torch.bool:
        s = s.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        s = s + mask
    return torch.softmax(s, -1) @ v


def ours(t):
    return tn.from_numpy(t.detach().numpy().copy()) if t is not None else None


def rand(*shape, dtype=torch.float64 if torch else None, noncontig=False):
    if noncontig:  # the same values through a transposed storage
        t = torch.randn(*shape[:-2], shape[-1], shape[-2], dtype=dtype).transpose(-2, -1)
        return t
    return torch.randn(*shape, dtype=dtype)


def as_ours(t, noncontig):
    x = ours(t.transpose(-2, -1).contiguous()).transpose(-2, -1) if noncontig else ours(t)
    return x


CASES = [  # (batch q, batch k/v, L, S, E, Ev) — odd sizes, T not a multiple of the 64 tile, broadcast batches
    ((2, 3), (2, 3), 5, 7, 8, 4),
    ((2,), (2,), 70, 130, 16, 16),
    ((3, 1), (1, 2), 65, 65, 12, 5),
    ((), (), 1, 1, 3, 3),
    ((1,), (4,), 129, 64, 32, 32),
]


@needs_torch
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("maskkind", ["none", "causal", "bool", "float", "bool_bcast"])
@pytest.mark.parametrize("noncontig", [False, True])
def test_sdpa_values_and_grads_float64(case, maskkind, noncontig):
    torch.manual_seed(0)
    bq, bk, L, S, E, Ev = case
    q = rand(*bq, L, E).requires_grad_()
    k = rand(*bk, S, E).requires_grad_()
    v = rand(*bk, S, Ev).requires_grad_()
    mask = None
    if maskkind == "bool":
        mask = torch.rand(L, S) > 0.3
        mask[:, 0] = True  # no row wholly masked (that row is NaN on both sides)
    elif maskkind == "bool_bcast":
        mask = torch.rand(1, S) > 0.5
        mask[0, -1] = True
    elif maskkind == "float":
        mask = torch.randn(*bq, L, S, dtype=torch.float64)
    causal = maskkind == "causal"
    want = ref_sdpa(q, k, v, mask, causal)
    g = torch.randn_like(want)
    want.backward(g)
    Q, K, V = (as_ours(t, noncontig).requires_grad_() for t in (q, k, v))
    got = F.scaled_dot_product_attention(Q, K, V, attn_mask=ours(mask), is_causal=causal)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), want.detach(), rtol=1e-10, atol=1e-10)
    got.backward(ours(g))
    for a, b in ((Q, q), (K, k), (V, v)):
        torch.testing.assert_close(torch.from_numpy(a.grad.numpy()), b.grad, rtol=1e-9, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_float32_and_scale(causal):
    torch.manual_seed(1)
    q, k, v = (torch.randn(3, 2, 100, 24).requires_grad_() for _ in range(3))
    want = ref_sdpa(q, k, v, causal=causal, scale=0.3)
    want.sum().backward()
    Q, K, V = (ours(t).requires_grad_() for t in (q, k, v))
    got = F.scaled_dot_product_attention(Q, K, V, is_causal=causal, scale=0.3)
    assert got.dtype == tn.float32
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), want.detach(), rtol=1e-5, atol=1e-5)
    got.sum().backward()
    for a, b in ((Q, q), (K, k), (V, v)):
        torch.testing.assert_close(torch.from_numpy(a.grad.numpy()), b.grad, rtol=1e-4, atol=1e-5)


@needs_torch
def test_sdpa_double_backward_falls_back_to_the_composite():
    torch.manual_seed(2)
    q, k, v = (torch.randn(2, 9, 5, dtype=torch.float64).requires_grad_() for _ in range(3))
    Q, K, V = (ours(t).requires_grad_() for t in (q, k, v))
    out_t = ref_sdpa(q, k, v, causal=True)
    out = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
    gq_t, = torch.autograd.grad((out_t ** 2).sum(), q, create_graph=True)
    gq, = tn.autograd.grad((out ** 2).sum(), Q, create_graph=True)
    torch.testing.assert_close(torch.from_numpy(gq.detach().numpy()), gq_t.detach())
    gq_t.sum().backward()
    gq.sum().backward()
    for a, b in ((Q, q), (K, k), (V, v)):
        torch.testing.assert_close(torch.from_numpy(a.grad.numpy()), b.grad)


def test_sdpa_gradcheck_float64():
    q, k, v = (tn.randn(2, 3, 67, 4, dtype=tn.float64).requires_grad_() for _ in range(3))
    mask = tn.randn(67, 67, dtype=tn.float64)
    assert tn.autograd.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask), (q, k, v))
    assert tn.autograd.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), (q, k, v))


def test_sdpa_fully_masked_row_is_nan_and_errors_raise():
    q = tn.randn(2, 3, 4)
    mask = tn.ones(3, 3, dtype=tn.bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert math.isnan(out[0, 1, 0].item()) and not math.isnan(out[0, 0, 0].item())
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, tn.randn(2, 3, 5), q)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tn.ones(3, 3, dtype=tn.bool), is_causal=True)
    with pytest.raises(RuntimeError):  # masks that do not broadcast
        F.scaled_dot_product_attention(q, q, q, attn_mask=tn.ones(4, 3, dtype=tn.bool))


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("maskkind", ["causal_float", "causal_bool", "random_float", "kpm", "none"])
def test_mha_fused_matches_torch(batch_first, maskkind):
    torch.manual_seed(3)
    E, H, L, N = 16, 4, 70, 3
    tm = torch.nn.MultiheadAttention(E, H, batch_first=batch_first, dtype=torch.float64)
    m = tn.nn.MultiheadAttention(E, H, batch_first=batch_first, dtype=tn.float64)
    m.load_state_dict({k_: ours(v_) for k_, v_ in tm.state_dict().items()})
    x = torch.randn(N, L, E, dtype=torch.float64) if batch_first else torch.randn(L, N, E, dtype=torch.float64)
    x.requires_grad_()
    mask, kpm = None, None
    if maskkind == "causal_float":
        mask = torch.triu(torch.full((L, L), float("-inf"), dtype=torch.float64), 1)
    elif maskkind == "causal_bool":
        mask = torch.ones(L, L, dtype=torch.bool).triu(1)
    elif maskkind == "random_float":
        mask = torch.randn(L, L, dtype=torch.float64)
    elif maskkind == "kpm":
        kpm = torch.zeros(N, L, dtype=torch.bool)
        kpm[:, -5:] = True
    want, _ = tm(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False)
    want.sum().backward()
    X = ours(x).requires_grad_()
    got, w = m(X, X, X, attn_mask=ours(mask), key_padding_mask=ours(kpm), need_weights=False)
    assert w is None
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), want.detach())
    got.sum().backward()
    torch.testing.assert_close(torch.from_numpy(X.grad.numpy()), x.grad)
    tgrads = {k_: p.grad for k_, p in tm.named_parameters()}
    for k_, p in m.named_parameters():
        torch.testing.assert_close(torch.from_numpy(p.grad.numpy()), tgrads[k_], msg=k_)


@needs_torch
def test_transformer_encoder_layer_causal_matches_torch():
    torch.manual_seed(4)
    d, L, N = 32, 66, 2
    tl = torch.nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True, dtype=torch.float64)
    ml = tn.nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True, dtype=tn.float64)
    ml.load_state_dict({k_: ours(v_) for k_, v_ in tl.state_dict().items()})
    x = torch.randn(N, L, d, dtype=torch.float64, requires_grad=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(L).to(torch.float64)
    want = tl(x, src_mask=mask)
    want.sum().backward()
    X = ours(x).requires_grad_()
    got = ml(X, src_mask=ours(mask))
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), want.detach())
    got.sum().backward()
    torch.testing.assert_close(torch.from_numpy(X.grad.numpy()), x.grad)
    tgrads = {k_: p.grad for k_, p in tl.named_parameters()}
    for k_, p in ml.named_parameters():
        torch.testing.assert_close(torch.from_numpy(p.grad.numpy()), tgrads[k_], msg=k_)


@needs_torch
@pytest.mark.parametrize("batched", [False, True])
def test_mha_cross_attention_fused_matches_torch(batched):
    torch.manual_seed(5)
    E, H, L, S, N = 12, 3, 9, 70, 2
    tm = torch.nn.MultiheadAttention(E, H, kdim=5, vdim=7, dtype=torch.float64)
    m = tn.nn.MultiheadAttention(E, H, kdim=5, vdim=7, dtype=tn.float64)
    m.load_state_dict({k_: ours(v_) for k_, v_ in tm.state_dict().items()})
    lead = (N,) if batched else ()
    q = torch.randn(L, *lead, E, dtype=torch.float64, requires_grad=True)
    k = torch.randn(S, *lead, 5, dtype=torch.float64, requires_grad=True)
    v = torch.randn(S, *lead, 7, dtype=torch.float64, requires_grad=True)
    mask = torch.rand(L, S) > 0.8  # True: masked out
    mask[:, 0] = False
    want, _ = tm(q, k, v, attn_mask=mask, need_weights=False)
    want.sum().backward()
    Q, K, V = (ours(t).requires_grad_() for t in (q, k, v))
    got, _ = m(Q, K, V, attn_mask=ours(mask), need_weights=False)
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy()), want.detach())
    got.sum().backward()
    for a, b in ((Q, q), (K, k), (V, v)):
        torch.testing.assert_close(torch.from_numpy(a.grad.numpy()), b.grad)
