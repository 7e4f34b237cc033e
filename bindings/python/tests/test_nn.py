"""tensor.nn: functional ops, Module, layers, losses, containers, nn.init and nn.utils.

PyTorch 1.13 is the oracle where it is installed (those tests skip themselves
otherwise): every functional op and layer runs on both sides with the same inputs and
weights (copied through state_dict), and outputs, input gradients and parameter
gradients must match; reprs, state_dict keys, load_state_dict results and messages, and
the behaviour of a Python subclass must be torch's. Layers and models are written once
as factories taking the module namespace (``tn.nn`` or ``torch.nn``).

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_nn.py
"""
import copy
import gc
import math
import os
import pickle
import re
import sys
import warnings
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


def assert_close(a, b, rtol=1e-6, atol=1e-7, what=""):
    """a: ours (Tensor, tuple or None), b: torch's."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b), f"{what}: {type(a)} vs {type(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, rtol, atol, f"{what}[{i}]")
        return
    if b is None:
        assert a is None, f"{what}: expected None, got {a!r}"
        return
    assert isinstance(a, tn.Tensor), f"{what}: got {type(a)}"
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} != {tuple(b.shape)}"
    assert a.dtype.name == str(b.dtype).split(".")[1], f"{what}: dtype {a.dtype} != {b.dtype}"
    got = theirs(a)
    ok = torch.allclose(got, b.detach(), rtol=rtol, atol=atol, equal_nan=True) if b.is_floating_point() \
        else torch.equal(got, b)
    assert ok, f"{what}:\nours  {got}\ntorch {b}"


def randn(*shape, dtype=None, seed=None):
    g = torch.Generator().manual_seed(seed if seed is not None else hash(shape) % 1000)
    return torch.randn(tuple(shape), generator=g, dtype=dtype or torch.float64)


def run_both(fn_ours, fn_torch, inputs, grad=True, rtol=1e-6, atol=1e-7, what=""):
    """Call fn on both sides with the same inputs (torch tensors or plain values; floating
    tensors require grad when grad); compare the outputs and, after backward with the same
    random output gradients, the input gradients."""
    th = [t.detach().clone().requires_grad_(grad and t.is_floating_point()) if isinstance(t, torch.Tensor) else t
          for t in inputs]
    tn_in = [ours(t).requires_grad_(grad and t.is_floating_point()) if isinstance(t, torch.Tensor) else t
             for t in inputs]
    with warnings.catch_warnings():          # torch's own notes (deprecations, padding='same' copies)
        warnings.simplefilter("ignore")
        b = fn_torch(*th)
    a = fn_ours(*tn_in)
    assert_close(a, b, rtol, atol, what + " (output)")
    if not grad:
        return a, b
    outs_b = [b] if isinstance(b, torch.Tensor) else [o for o in b if o.is_floating_point()]
    outs_a = [a] if isinstance(a, tn.Tensor) else [o for o in a if o.is_floating_point()]
    gs = [randn(*o.shape, dtype=o.dtype, seed=7 + i) for i, o in enumerate(outs_b)]
    sum((o * g).sum() for o, g in zip(outs_b, gs)).backward()
    sum((o * ours(g)).sum() for o, g in zip(outs_a, gs)).backward()
    for i, (x, y) in enumerate(zip(tn_in, th)):
        if isinstance(y, torch.Tensor) and y.requires_grad:
            assert_close(x.grad, y.grad, rtol, atol, f"{what} (grad of input {i})")
    return a, b


# =========================================================================== functional vs torch
def test_activations_match_torch(T):
    x = randn(3, 5) * 3
    cases = [
        ("relu", lambda M, x: M.relu(x)), ("relu6", lambda M, x: M.relu6(x * 3)),
        ("leaky_relu", lambda M, x: M.leaky_relu(x, 0.2)), ("leaky_relu default", lambda M, x: M.leaky_relu(x)),
        ("elu", lambda M, x: M.elu(x, alpha=0.7)), ("selu", lambda M, x: M.selu(x)),
        ("celu", lambda M, x: M.celu(x, alpha=1.3)), ("hardtanh", lambda M, x: M.hardtanh(x, -2.0, 1.5)),
        ("mish", lambda M, x: M.mish(x)), ("hardswish", lambda M, x: M.hardswish(x)),
        ("hardsigmoid", lambda M, x: M.hardsigmoid(x)), ("gelu", lambda M, x: M.gelu(x)),
        ("gelu tanh", lambda M, x: M.gelu(x, approximate="tanh")), ("silu", lambda M, x: M.silu(x)),
        ("softplus", lambda M, x: M.softplus(x, beta=2, threshold=3)), ("sigmoid", lambda M, x: M.sigmoid(x)),
        ("tanh", lambda M, x: M.tanh(x)), ("softmax", lambda M, x: M.softmax(x, dim=0)),
        ("log_softmax", lambda M, x: M.log_softmax(x, 1)), ("softmin", lambda M, x: M.softmin(x, dim=1)),
        ("logsigmoid", lambda M, x: M.logsigmoid(x)), ("softsign", lambda M, x: M.softsign(x)),
        ("tanhshrink", lambda M, x: M.tanhshrink(x)), ("threshold", lambda M, x: M.threshold(x, 0.5, -2.0)),
        ("glu", lambda M, x: M.glu(x[:, :4], dim=1)), ("normalize", lambda M, x: M.normalize(x, p=3.0, dim=0)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # F.sigmoid / F.tanh are deprecated, as in torch
        for name, f in cases:
            run_both(lambda x: f(F, x), lambda x: f(TF, x), [x], what=name)
            run_both(lambda x: f(F, x), lambda x: f(TF, x), [x.float()], rtol=1e-5, atol=1e-6, what=name + " f32")
    with pytest.warns(UserWarning, match="nn.functional.sigmoid is deprecated"):
        F.sigmoid(tn.ones(1))


def test_inplace_activations_keep_autograd(T):
    """inplace=True on a graph tensor: the input is overwritten and gradients still flow."""
    for name, f in [("relu", lambda M, y: M.relu(y, inplace=True)),
                    ("leaky_relu", lambda M, y: M.leaky_relu(y, 0.1, inplace=True)),
                    ("elu", lambda M, y: M.elu(y, inplace=True)), ("hardtanh", lambda M, y: M.hardtanh(y, inplace=True)),
                    ("silu", lambda M, y: M.silu(y, inplace=True)), ("relu6", lambda M, y: M.relu6(y, True)),
                    ("dropout p=0", lambda M, y: M.dropout(y, 0.0, inplace=True))]:
        def ours_fn(x):
            y = x * 2
            r = f(F, y)
            assert r is y
            return y

        def torch_fn(x):
            y = x * 2
            return f(TF, y)
        run_both(ours_fn, torch_fn, [randn(4, 3)], what=name + " inplace")
    with pytest.raises(RuntimeError):            # a leaf that requires grad, as torch
        F.relu(tn.ones(2, requires_grad=True), inplace=True)


def test_linear_bilinear(T):
    run_both(F.linear, TF.linear, [randn(4, 5), randn(3, 5), randn(3)], what="linear")
    run_both(F.linear, TF.linear, [randn(2, 4, 5), randn(3, 5)], what="linear 3-d no bias")
    run_both(lambda x, w: F.linear(x, w, bias=None), lambda x, w: TF.linear(x, w, bias=None),
             [randn(5), randn(3, 5)], what="linear 1-d")
    run_both(F.bilinear, TF.bilinear, [randn(4, 3), randn(4, 2), randn(5, 3, 2), randn(5)], what="bilinear")


def test_convolutions(T):
    x1, x2 = randn(2, 4, 9), randn(2, 4, 7, 8)
    cases = [
        ("conv1d", lambda M, x, w, b: M.conv1d(x, w, b, stride=2, padding=1), [x1, randn(6, 4, 3), randn(6)]),
        ("conv1d same", lambda M, x, w: M.conv1d(x, w, padding="same", dilation=2, groups=2), [x1, randn(4, 2, 4)]),
        ("conv1d valid tuple", lambda M, x, w: M.conv1d(x, w, None, (1,), "valid"), [x1, randn(3, 4, 2)]),
        ("conv1d unbatched", lambda M, x, w: M.conv1d(x, w), [x1[0], randn(3, 4, 2)]),
        ("conv2d", lambda M, x, w, b: M.conv2d(x, w, b, padding=1), [x2, randn(3, 4, 3, 3), randn(3)]),
        ("conv2d tuples", lambda M, x, w: M.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
         [x2, randn(6, 2, 3, 2)]),
        ("conv2d same even", lambda M, x, w: M.conv2d(x, w, padding="same"), [x2, randn(2, 4, 4, 3)]),
        ("conv2d unbatched", lambda M, x, w: M.conv2d(x, w, stride=2), [x2[1], randn(2, 4, 3, 3)]),
        ("conv_transpose1d", lambda M, x, w, b: M.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
         [x1, randn(4, 3, 3), randn(3)]),
        ("conv_transpose1d groups", lambda M, x, w: M.conv_transpose1d(x, w, groups=2, dilation=2), [x1, randn(4, 2, 3)]),
        ("conv_transpose2d", lambda M, x, w, b: M.conv_transpose2d(x, w, b, 2, 1, 1), [x2, randn(4, 3, 3, 3), randn(3)]),
        ("conv_transpose2d tuples", lambda M, x, w: M.conv_transpose2d(x, w, stride=(1, 2), padding=(0, 1),
                                                                       output_padding=(0, 1), groups=2, dilation=(2, 1)),
         [x2, randn(4, 1, 2, 3)]),
    ]
    for name, f, inputs in cases:
        run_both(lambda *a: f(F, *a), lambda *a: f(TF, *a), inputs, what=name)
    run_both(lambda x, w: F.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
             [x2.float(), randn(3, 4, 3, 3).float()], rtol=1e-4, atol=1e-5, what="conv2d f32")


def test_unfold_fold(T):
    x = randn(2, 3, 6, 5)
    run_both(lambda x: F.unfold(x, 3, padding=1, stride=2), lambda x: TF.unfold(x, 3, padding=1, stride=2), [x],
             what="unfold")
    run_both(lambda x: F.unfold(x, (2, 3), dilation=(2, 1)), lambda x: TF.unfold(x, (2, 3), dilation=(2, 1)), [x],
             what="unfold tuples")
    c = randn(2, 3 * 4, 12)
    run_both(lambda c: F.fold(c, (5, 6), 2, stride=(2, 2), padding=1),
             lambda c: TF.fold(c, (5, 6), 2, stride=(2, 2), padding=1), [c], what="fold")
    y = F.fold(F.unfold(ours(x), 2, stride=2), (6, 5), 2, stride=2)          # non-overlapping: round trip
    assert_close(y[..., :4], x[..., :4], what="fold(unfold)")


def test_pooling(T):
    x1, x2 = randn(2, 3, 11), randn(2, 3, 7, 9)
    cases = [
        ("max_pool1d", lambda M, x: M.max_pool1d(x, 3, stride=2, padding=1), [x1]),
        ("max_pool1d ceil dil", lambda M, x: M.max_pool1d(x, 2, 3, 0, 2, ceil_mode=True), [x1]),
        ("max_pool2d", lambda M, x: M.max_pool2d(x, 2), [x2]),
        ("max_pool2d tuples", lambda M, x: M.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True), [x2]),
        ("max_pool2d indices", lambda M, x: M.max_pool2d(x, 3, 2, 1, return_indices=True), [x2]),
        ("max_pool1d indices", lambda M, x: M.max_pool1d(x, 3, return_indices=True), [x1]),
        ("max_pool2d unbatched", lambda M, x: M.max_pool2d(x, 2, stride=[]), [x2[0]]),
        ("avg_pool1d", lambda M, x: M.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [x1]),
        ("avg_pool1d ceil", lambda M, x: M.avg_pool1d(x, 4, ceil_mode=True), [x1]),
        ("avg_pool2d", lambda M, x: M.avg_pool2d(x, 3, 2, 1), [x2]),
        ("avg_pool2d tuples", lambda M, x: M.avg_pool2d(x, (2, 3), padding=(1, 1), ceil_mode=True,
                                                        count_include_pad=False), [x2]),
        ("avg_pool2d divisor", lambda M, x: M.avg_pool2d(x, 2, divisor_override=3), [x2]),
        ("adaptive_avg_pool2d", lambda M, x: M.adaptive_avg_pool2d(x, (3, 4)), [x2]),
        ("adaptive_avg_pool2d None", lambda M, x: M.adaptive_avg_pool2d(x, (None, 2)), [x2]),
        ("adaptive_avg_pool2d 1", lambda M, x: M.adaptive_avg_pool2d(x, 1), [x2]),
        ("adaptive_avg_pool1d", lambda M, x: M.adaptive_avg_pool1d(x, 4), [x1]),
        ("adaptive_max_pool2d", lambda M, x: M.adaptive_max_pool2d(x, (4, 5), return_indices=True), [x2]),
        ("adaptive_max_pool2d int", lambda M, x: M.adaptive_max_pool2d(x, 3), [x2]),
        ("adaptive_max_pool1d", lambda M, x: M.adaptive_max_pool1d(x, 5, True), [x1]),
    ]
    for name, f, inputs in cases:
        run_both(lambda *a: f(F, *a), lambda *a: f(TF, *a), inputs, what=name)


def test_normalization(T):
    x = randn(4, 3, 5)
    run_both(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
             lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), [x, randn(3), randn(3)], what="bn")
    rm, rv = randn(3), randn(3).abs() + 0.5
    trm, trv, orm, orv = rm.clone(), rv.clone(), ours(rm), ours(rv)
    run_both(lambda x: F.batch_norm(x, orm, orv, training=True, momentum=0.3),
             lambda x: TF.batch_norm(x, trm, trv, training=True, momentum=0.3), [x], what="bn running")
    assert_close(orm, trm, what="running_mean")
    assert_close(orv, trv, what="running_var")
    run_both(lambda x: F.batch_norm(x, orm, orv, eps=1e-3), lambda x: TF.batch_norm(x, trm, trv, eps=1e-3), [x],
             what="bn eval")
    run_both(lambda x, w, b: F.layer_norm(x, (3, 5), w, b), lambda x, w, b: TF.layer_norm(x, (3, 5), w, b),
             [x, randn(3, 5), randn(3, 5)], what="layer_norm")
    run_both(lambda x: F.layer_norm(x, [5], eps=1e-2), lambda x: TF.layer_norm(x, [5], eps=1e-2), [x], what="ln")
    x4 = randn(2, 4, 3, 3)
    run_both(lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: TF.group_norm(x, 2, w, b),
             [x4, randn(4), randn(4)], what="group_norm")
    run_both(lambda x: F.group_norm(x, 4, eps=1e-3), lambda x: TF.group_norm(x, 4, eps=1e-3), [x4], what="gn")
    run_both(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), lambda x, w, b: TF.instance_norm(x, weight=w, bias=b),
             [x4, randn(4), randn(4)], what="instance_norm")
    rm, rv = randn(4), randn(4).abs() + 0.5
    trm, trv, orm, orv = rm.clone(), rv.clone(), ours(rm), ours(rv)
    run_both(lambda x: F.instance_norm(x, orm, orv, momentum=0.2), lambda x: TF.instance_norm(x, trm, trv, momentum=0.2),
             [x4], what="instance_norm running")
    assert_close(orm, trm, what="in running_mean")
    assert_close(orv, trv, what="in running_var")


def test_embedding_one_hot(T):
    w = randn(10, 4)
    idx = torch.tensor([[1, 3, 3], [0, 9, 1]])
    run_both(lambda w: F.embedding(ours(idx), w), lambda w: TF.embedding(idx, w), [w], what="embedding")
    run_both(lambda w: F.embedding(ours(idx), w, padding_idx=3), lambda w: TF.embedding(idx, w, padding_idx=3), [w],
             what="embedding padding_idx")
    run_both(lambda w: F.embedding(ours(idx), w, padding_idx=-1), lambda w: TF.embedding(idx, w, padding_idx=-1),
             [w], what="embedding padding_idx -1")
    tw, ow = w.clone() * 3, ours(w) * 3            # max_norm renormalises the looked-up rows in place
    assert_close(F.embedding(ours(idx), ow, max_norm=1.5), TF.embedding(idx, tw, max_norm=1.5), what="max_norm out")
    assert_close(ow, tw, what="max_norm weight")
    assert_close(F.one_hot(ours(idx)), TF.one_hot(idx), what="one_hot")
    assert_close(F.one_hot(ours(idx), num_classes=12), TF.one_hot(idx, num_classes=12), what="one_hot 12")
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(tn.tensor([1.0]))


def test_scaled_dot_product_attention(T):
    q, k, v = randn(2, 3, 4, 5), randn(2, 3, 6, 5), randn(2, 3, 6, 2)

    def ref(q, k, v, mask=None, causal=False, scale=None):
        s = (q @ k.transpose(-2, -1)) * (scale if scale else 1 / math.sqrt(q.size(-1)))
        if causal:
            mask = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril()
        if mask is not None and mask.dtype == torch.bool:
            s = s.masked_fill(~mask, float("-inf"))
        elif mask is not None:
            s = s + mask
        return s.softmax(-1) @ v

    run_both(F.scaled_dot_product_attention, ref, [q, k, v], what="sdpa")
    bmask = randn(4, 6) > -0.5
    bmask[:, 0] = True
    run_both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=ours(bmask)),
             lambda q, k, v: ref(q, k, v, bmask), [q, k, v], what="sdpa bool mask")
    fmask = randn(4, 6)
    run_both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, ours(fmask), scale=0.3),
             lambda q, k, v: ref(q, k, v, fmask, scale=0.3), [q, k, v], what="sdpa float mask, scale")
    run_both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
             lambda q, k, v: ref(q, k, v, causal=True), [q, k[:, :, :4], v[:, :, :4]], what="sdpa causal")


def test_interpolate_pixel_shuffle(T):
    x1, x2 = randn(2, 3, 5), randn(2, 3, 4, 5)
    cases = [
        ("nearest 1d", lambda M, x: M.interpolate(x, scale_factor=2), [x1]),
        ("nearest 1d size", lambda M, x: M.interpolate(x, size=8), [x1]),
        ("linear", lambda M, x: M.interpolate(x, size=9, mode="linear"), [x1]),
        ("linear ac", lambda M, x: M.interpolate(x, scale_factor=1.7, mode="linear", align_corners=True), [x1]),
        ("nearest 2d", lambda M, x: M.interpolate(x, scale_factor=(2, 1.5)), [x2]),
        ("nearest 2d size", lambda M, x: M.interpolate(x, size=(3, 7)), [x2]),
        ("bilinear", lambda M, x: M.interpolate(x, size=(7, 3), mode="bilinear"), [x2]),
        ("bilinear sf", lambda M, x: M.interpolate(x, scale_factor=1.5, mode="bilinear"), [x2]),
        ("bilinear ac", lambda M, x: M.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), [x2]),
        ("bilinear recompute", lambda M, x: M.interpolate(x, scale_factor=1.3, mode="bilinear",
                                                          recompute_scale_factor=True), [x2]),
        ("area", lambda M, x: M.interpolate(x, size=(2, 3), mode="area"), [x2]),
        ("pixel_shuffle", lambda M, x: M.pixel_shuffle(x, 2), [randn(2, 8, 3, 2)]),
        ("pixel_unshuffle", lambda M, x: M.pixel_unshuffle(x, 2), [randn(2, 2, 4, 6)]),
    ]
    for name, f, inputs in cases:
        run_both(lambda *a: f(F, *a), lambda *a: f(TF, *a), inputs, what=name)
    for bad in [lambda M: M.interpolate(ours(x2) if M is F else x2, scale_factor=2, align_corners=True),
                lambda M: M.interpolate(ours(x2) if M is F else x2, size=3, scale_factor=2),
                lambda M: M.interpolate(ours(x2) if M is F else x2, size=(3, 4, 5))]:
        with pytest.raises(ValueError) as ta:
            bad(TF)
        with pytest.raises(ValueError) as oa:
            bad(F)
        assert str(oa.value) == str(ta.value)
    with pytest.raises(NotImplementedError, match="linear mode needs 3D input"):
        F.interpolate(ours(x2), scale_factor=2, mode="linear")


def test_dropout(T):
    tn.manual_seed(1)
    x = tn.ones(200, 100, dtype=tn.float64, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = (y != 0).double().mean().item()
    assert abs(kept - 0.7) < 0.02
    assert ((y == 0) | ((y - 1 / 0.7).abs() < 1e-12)).all().item()
    y.sum().backward()
    assert ((x.grad == 0) == (y == 0)).all().item()          # the mask is the gradient's
    assert F.dropout(x, 0.3, training=False).equal(x)
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            F.dropout(x, bad)
    z = F.dropout2d(tn.ones(4, 50, 3, 3), 0.5)                 # whole channels
    per = z.sum(dim=(2, 3))
    assert ((per == 0) | (per == 18)).all().item() and 0.3 < (per == 0).float().mean().item() < 0.7
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        z3 = F.dropout2d(tn.ones(4, 50, 6), 0.5)              # torch 1.13: 3-d is (N, C, L)
    assert w and "channel-wise 1D dropout" in str(w[0].message)
    per = z3.sum(dim=2)
    assert ((per == 0) | (per == 12)).all().item()
    z1 = F.dropout1d(tn.ones(50, 6), 0.5)
    assert ((z1.sum(dim=1) == 0) | (z1.sum(dim=1) == 12)).all().item()


LOSS_CASES = [
    ("mse", lambda M, a, b: M.mse_loss(a, b), "pair"),
    ("mse sum", lambda M, a, b: M.mse_loss(a, b, reduction="sum"), "pair"),
    ("mse none", lambda M, a, b: M.mse_loss(a, b, reduction="none"), "pair"),
    ("l1", lambda M, a, b: M.l1_loss(a, b), "pair"),
    ("l1 none", lambda M, a, b: M.l1_loss(a, b, reduction="none"), "pair"),
    ("smooth_l1", lambda M, a, b: M.smooth_l1_loss(a, b, beta=0.5), "pair"),
    ("smooth_l1 sum", lambda M, a, b: M.smooth_l1_loss(a, b, reduction="sum"), "pair"),
    ("huber", lambda M, a, b: M.huber_loss(a, b, delta=0.7), "pair"),
    ("huber none", lambda M, a, b: M.huber_loss(a, b, reduction="none"), "pair"),
    ("nll", lambda M, a, t: M.nll_loss(M.log_softmax(a, 1), t), "class"),
    ("nll weight ignore", lambda M, a, t, w: M.nll_loss(M.log_softmax(a, 1), t, weight=w, ignore_index=1), "classw"),
    ("nll none", lambda M, a, t: M.nll_loss(a, t, reduction="none"), "class"),
    ("cross_entropy", lambda M, a, t: M.cross_entropy(a, t), "class"),
    ("cross_entropy sum", lambda M, a, t, w: M.cross_entropy(a, t, w, reduction="sum"), "classw"),
    ("cross_entropy smooth", lambda M, a, t, w: M.cross_entropy(a, t, weight=w, label_smoothing=0.2), "classw"),
    ("cross_entropy probs", lambda M, a, b: M.cross_entropy(a, b.softmax(1)), "pair"),
    ("bce", lambda M, a, b: M.binary_cross_entropy(a.sigmoid(), b.sigmoid()), "pair"),
    ("bce weight none", lambda M, a, b, w: M.binary_cross_entropy(a.sigmoid(), b.sigmoid(), w, reduction="none"),
     "pairw"),
    ("bce logits", lambda M, a, b: M.binary_cross_entropy_with_logits(a, b.sigmoid()), "pair"),
    ("bce logits pos_weight", lambda M, a, b, w: M.binary_cross_entropy_with_logits(a, b.sigmoid(), pos_weight=w),
     "pairw"),
    ("kl_div batchmean", lambda M, a, b: M.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"), "pair"),
    ("kl_div log_target sum", lambda M, a, b: M.kl_div(a, b, reduction="sum", log_target=True), "pair"),
    ("cosine_similarity", lambda M, a, b: M.cosine_similarity(a, b), "pair"),
    ("cosine_similarity dim0", lambda M, a, b: M.cosine_similarity(a, b, dim=0, eps=1e-6), "pair"),
    ("cosine_embedding", lambda M, a, b, t: M.cosine_embedding_loss(a, b, t, margin=0.1), "pairsign"),
    ("cosine_embedding none", lambda M, a, b, t: M.cosine_embedding_loss(a, b, t, reduction="none"), "pairsign"),
    ("margin_ranking", lambda M, a, b, t: M.margin_ranking_loss(a[:, 0], b[:, 0], t, margin=0.3), "pairsign"),
    ("pairwise_distance", lambda M, a, b: M.pairwise_distance(a, b), "pair"),
]


def test_losses(T):
    a, b = randn(6, 4, seed=1), randn(6, 4, seed=2)
    t = torch.tensor([0, 3, 1, 1, 2, 0])
    sign = torch.tensor([1.0, -1, 1, -1, -1, 1], dtype=torch.float64)
    w = randn(4, seed=3).abs() + 0.1
    for name, f, kind in LOSS_CASES:
        if kind == "pair":
            run_both(lambda a, b: f(F, a, b), lambda a, b: f(TF, a, b), [a, b], what=name)
        elif kind == "pairw":           # weights are constants (not differentiable in torch's nll)
            run_both(lambda a, b: f(F, a, b, ours(w)), lambda a, b: f(TF, a, b, w), [a, b], what=name)
        elif kind == "class":
            run_both(lambda a: f(F, a, ours(t)), lambda a: f(TF, a, t), [a], what=name)
        elif kind == "classw":
            run_both(lambda a: f(F, a, ours(t), ours(w)), lambda a: f(TF, a, t, w), [a], what=name)
        else:
            run_both(lambda a, b: f(F, a, b, ours(sign)), lambda a, b: f(TF, a, b, sign), [a, b], what=name)


def test_loss_argument_errors_and_legacy(T):
    a, b = randn(3, 2), randn(3, 2)
    for bad in [lambda M, a, b: M.mse_loss(a, b, reduction="avg"),
                lambda M, a, b: M.l1_loss(a, b, reduction="batchmean"),
                lambda M, a, b: M.binary_cross_entropy(a.sigmoid(), b[:2].sigmoid()),
                lambda M, a, b: M.binary_cross_entropy_with_logits(a, b[:, :1])]:
        with pytest.raises(ValueError) as te:
            bad(TF, a, b)
        with pytest.raises(ValueError) as oe:
            bad(F, ours(a), ours(b))
        assert str(oe.value) == str(te.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_both(lambda a, b: F.mse_loss(a, b, size_average=False), lambda a, b: TF.mse_loss(a, b, size_average=False),
                 [a, b], what="size_average=False")
        run_both(lambda a, b: F.l1_loss(a, b, reduce=False), lambda a, b: TF.l1_loss(a, b, reduce=False),
                 [a, b], what="reduce=False")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.mse_loss(ours(a), ours(b[0]))
    assert any("different to the input size" in str(x.message) for x in w)


# =========================================================================== errors from C
def test_c_errors_surface_with_their_message():
    x = tn.randn(1, 2, 5, 5)
    with pytest.raises(RuntimeError, match=r"tn_conv2d: given groups=1, weight of size \[3, 3, 3, 3\].*3 channels"):
        F.conv2d(x, tn.randn(3, 3, 3, 3))
    with pytest.raises(RuntimeError, match="tn_linear: input .* in_features"):
        F.linear(tn.randn(2, 3), tn.randn(4, 5))
    with pytest.raises(RuntimeError, match="tn_conv2d: padding='same' is not supported for strided"):
        F.conv2d(x, tn.randn(3, 2, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string: 'foo'"):
        F.conv2d(x, tn.randn(3, 2, 3, 3), padding="foo")
    with pytest.raises(RuntimeError, match="tn_max_pool2d: pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(IndexError, match="tn_cross_entropy: target 5 is out of bounds"):
        F.cross_entropy(tn.randn(3, 4), tn.tensor([0, 5, 1]))
    with pytest.raises(RuntimeError, match="tn_layer_norm: given normalized_shape"):
        F.layer_norm(x, (4,))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(tn.randn(1, 3), None, None, training=True)     # checked in Python, as torch
    with pytest.raises(RuntimeError, match="tn_group_norm: expected number of channels"):
        F.group_norm(x, 3)
    with pytest.raises(RuntimeError, match="tn_scaled_dot_product_attention"):
        F.scaled_dot_product_attention(tn.randn(2, 3), tn.randn(4, 5), tn.randn(4, 5))
    with pytest.raises(RuntimeError, match="tn_embedding: expected indices"):
        F.embedding(tn.tensor([1.0]), tn.randn(3, 2))
    with pytest.raises(RuntimeError, match="tn_pixel_shuffle"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(RuntimeError, match="tn_conv2d: expected 3D .* or 4D"):
        nn.Conv2d(2, 3, 3)(tn.randn(2, 5, 5, 5, 5))
    with pytest.raises(RuntimeError, match="tn_binary_cross_entropy: all elements of input"):
        F.binary_cross_entropy(tn.tensor([1.5]), tn.tensor([1.0]))


# =========================================================================== layers vs torch
def _f64(t):
    return t.double() if isinstance(t, torch.Tensor) else t


# (name, factory(M, conv) -> module, input shapes or tensors, kwargs)
LAYERS = [
    ("Linear", lambda M, c: M.Linear(5, 3), [(4, 5)]),
    ("Linear nobias 3d", lambda M, c: M.Linear(5, 3, bias=False), [(2, 4, 5)]),
    ("Bilinear", lambda M, c: M.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    ("Identity", lambda M, c: M.Identity(3, foo=1), [(2, 3)]),
    ("Conv1d", lambda M, c: M.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 3, 9)]),
    ("Conv1d same", lambda M, c: M.Conv1d(4, 4, 3, padding="same", dilation=2, groups=2, bias=False), [(2, 4, 7)]),
    ("Conv2d", lambda M, c: M.Conv2d(3, 6, 3, padding=1), [(2, 3, 6, 5)]),
    ("Conv2d tuples", lambda M, c: M.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
     [(2, 2, 7, 6)]),
    ("Conv2d same", lambda M, c: M.Conv2d(3, 2, 4, padding="same"), [(1, 3, 5, 6)]),
    ("Conv2d valid", lambda M, c: M.Conv2d(3, 2, 2, padding="valid"), [(3, 5, 6)]),
    ("ConvTranspose1d", lambda M, c: M.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1), [(2, 4, 5)]),
    ("ConvTranspose2d", lambda M, c: M.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
     [(2, 4, 3, 4)]),
    ("ConvTranspose2d dil", lambda M, c: M.ConvTranspose2d(2, 3, (3, 2), dilation=2, bias=False), [(1, 2, 3, 3)]),
    ("MaxPool1d", lambda M, c: M.MaxPool1d(3, stride=2, padding=1), [(2, 3, 9)]),
    ("MaxPool2d", lambda M, c: M.MaxPool2d(3, 2, 1, ceil_mode=True), [(2, 3, 7, 8)]),
    ("MaxPool2d tuples", lambda M, c: M.MaxPool2d((2, 3), dilation=(1, 2)), [(2, 3, 7, 8)]),
    ("MaxPool2d indices", lambda M, c: M.MaxPool2d(2, return_indices=True), [(2, 3, 6, 6)]),
    ("AvgPool1d", lambda M, c: M.AvgPool1d(3, 2, 1), [(2, 3, 9)]),
    ("AvgPool2d", lambda M, c: M.AvgPool2d(3, 2, 1, count_include_pad=False), [(2, 3, 7, 8)]),
    ("AvgPool2d divisor", lambda M, c: M.AvgPool2d((2, 3), ceil_mode=True, divisor_override=4), [(2, 3, 7, 8)]),
    ("AdaptiveAvgPool2d", lambda M, c: M.AdaptiveAvgPool2d((3, None)), [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d 1", lambda M, c: M.AdaptiveAvgPool2d(1), [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool1d", lambda M, c: M.AdaptiveAvgPool1d(3), [(2, 3, 7)]),
    ("AdaptiveMaxPool2d", lambda M, c: M.AdaptiveMaxPool2d((2, 3)), [(2, 3, 7, 5)]),
    ("AdaptiveMaxPool1d idx", lambda M, c: M.AdaptiveMaxPool1d(2, return_indices=True), [(2, 3, 7)]),
    ("BatchNorm1d", lambda M, c: M.BatchNorm1d(4), [(6, 4)]),
    ("BatchNorm1d 3d", lambda M, c: M.BatchNorm1d(4, momentum=0.3), [(6, 4, 5)]),
    ("BatchNorm2d cumulative", lambda M, c: M.BatchNorm2d(3, momentum=None), [(2, 3, 4, 4)]),
    ("BatchNorm2d no stats", lambda M, c: M.BatchNorm2d(3, affine=False, track_running_stats=False), [(2, 3, 4, 4)]),
    ("LayerNorm", lambda M, c: M.LayerNorm((4, 5)), [(3, 4, 5)]),
    ("LayerNorm noaffine", lambda M, c: M.LayerNorm(5, eps=1e-3, elementwise_affine=False), [(3, 4, 5)]),
    ("GroupNorm", lambda M, c: M.GroupNorm(2, 4), [(2, 4, 3, 3)]),
    ("GroupNorm noaffine", lambda M, c: M.GroupNorm(4, 4, affine=False), [(2, 4, 5)]),
    ("InstanceNorm1d", lambda M, c: M.InstanceNorm1d(3), [(2, 3, 6)]),
    ("InstanceNorm1d unbatched", lambda M, c: M.InstanceNorm1d(3, affine=True), [(3, 6)]),
    ("InstanceNorm2d", lambda M, c: M.InstanceNorm2d(3, affine=True, track_running_stats=True), [(2, 3, 4, 4)]),
    ("Dropout p=0", lambda M, c: M.Dropout(0.0), [(3, 4)]),
    ("Dropout2d p=0", lambda M, c: M.Dropout2d(p=0), [(2, 3, 4, 4)]),
    ("Flatten", lambda M, c: M.Flatten(), [(2, 3, 4)]),
    ("Flatten dims", lambda M, c: M.Flatten(0, 1), [(2, 3, 4)]),
    ("Unflatten", lambda M, c: M.Unflatten(1, (2, 3)), [(4, 6)]),
    ("PixelShuffle", lambda M, c: M.PixelShuffle(2), [(1, 8, 2, 3)]),
    ("PixelUnshuffle", lambda M, c: M.PixelUnshuffle(2), [(1, 2, 4, 6)]),
    ("Upsample", lambda M, c: M.Upsample(scale_factor=2), [(1, 2, 3, 4)]),
    ("Upsample bilinear", lambda M, c: M.Upsample(size=(5, 7), mode="bilinear", align_corners=True), [(1, 2, 3, 4)]),
    ("Upsample linear", lambda M, c: M.Upsample(scale_factor=1.5, mode="linear"), [(1, 2, 4)]),
    ("UpsamplingNearest2d", lambda M, c: M.UpsamplingNearest2d(size=5), [(1, 2, 3, 4)]),
    ("UpsamplingBilinear2d", lambda M, c: M.UpsamplingBilinear2d(scale_factor=2), [(1, 2, 3, 4)]),
    ("ReLU", lambda M, c: M.ReLU(), [(3, 4)]),
    ("ReLU6", lambda M, c: M.ReLU6(), [(3, 4)]),
    ("LeakyReLU", lambda M, c: M.LeakyReLU(0.2), [(3, 4)]),
    ("ELU", lambda M, c: M.ELU(alpha=0.5), [(3, 4)]),
    ("SELU", lambda M, c: M.SELU(), [(3, 4)]),
    ("CELU", lambda M, c: M.CELU(1.5), [(3, 4)]),
    ("GELU", lambda M, c: M.GELU(), [(3, 4)]),
    ("GELU tanh", lambda M, c: M.GELU(approximate="tanh"), [(3, 4)]),
    ("SiLU", lambda M, c: M.SiLU(), [(3, 4)]),
    ("Mish", lambda M, c: M.Mish(), [(3, 4)]),
    ("Softplus", lambda M, c: M.Softplus(beta=2, threshold=5), [(3, 4)]),
    ("Hardtanh", lambda M, c: M.Hardtanh(-0.5, 2.0), [(3, 4)]),
    ("Hardswish", lambda M, c: M.Hardswish(), [(3, 4)]),
    ("Hardsigmoid", lambda M, c: M.Hardsigmoid(), [(3, 4)]),
    ("Tanh", lambda M, c: M.Tanh(), [(3, 4)]),
    ("Sigmoid", lambda M, c: M.Sigmoid(), [(3, 4)]),
    ("Softmax", lambda M, c: M.Softmax(dim=1), [(3, 4)]),
    ("LogSoftmax", lambda M, c: M.LogSoftmax(0), [(3, 4)]),
    ("Softmin", lambda M, c: M.Softmin(-1), [(3, 4)]),
    ("LogSigmoid", lambda M, c: M.LogSigmoid(), [(3, 4)]),
    ("Threshold", lambda M, c: M.Threshold(0.1, 20), [(3, 4)]),
    ("GLU", lambda M, c: M.GLU(), [(3, 4)]),
    ("CosineSimilarity", lambda M, c: M.CosineSimilarity(dim=0), [(3, 4), (3, 4)]),
    ("PairwiseDistance", lambda M, c: M.PairwiseDistance(p=1.0), [(3, 4), (3, 4)]),
    ("MSELoss", lambda M, c: M.MSELoss(), [(3, 4), (3, 4)]),
    ("L1Loss sum", lambda M, c: M.L1Loss(reduction="sum"), [(3, 4), (3, 4)]),
    ("SmoothL1Loss", lambda M, c: M.SmoothL1Loss(beta=0.5), [(3, 4), (3, 4)]),
    ("HuberLoss", lambda M, c: M.HuberLoss(reduction="none", delta=0.7), [(3, 4), (3, 4)]),
    ("KLDivLoss", lambda M, c: M.KLDivLoss(reduction="batchmean", log_target=True), [(3, 4), (3, 4)]),
    ("BCEWithLogitsLoss", lambda M, c: M.BCEWithLogitsLoss(pos_weight=c(torch.tensor([1.0, 2, 0.5, 1],
                                                                                     dtype=torch.float64))),
     [(3, 4), lambda: torch.rand(3, 4, dtype=torch.float64)]),
    ("BCELoss", lambda M, c: M.BCELoss(weight=c(torch.tensor([1.0, 2, 0.5, 1], dtype=torch.float64))),
     [lambda: torch.rand(3, 4, dtype=torch.float64) * 0.9 + 0.05, lambda: torch.rand(3, 4, dtype=torch.float64)]),
    ("CrossEntropyLoss", lambda M, c: M.CrossEntropyLoss(weight=c(torch.tensor([1.0, 2, 0.5, 1], dtype=torch.float64)),
                                                         ignore_index=2, label_smoothing=0.1),
     [(5, 4), lambda: torch.tensor([0, 2, 3, 1, 1])]),
    ("NLLLoss", lambda M, c: M.NLLLoss(reduction="sum"), [(5, 4), lambda: torch.tensor([0, 2, 3, 1, 1])]),
    ("CosineEmbeddingLoss", lambda M, c: M.CosineEmbeddingLoss(margin=0.2), [(3, 4), (3, 4),
                                                                              lambda: torch.tensor([1.0, -1, 1]).double()]),
    ("MarginRankingLoss", lambda M, c: M.MarginRankingLoss(0.1), [(3,), (3,), lambda: torch.tensor([1.0, -1, 1]).double()]),
]


def _layer_inputs(specs, seed):
    """Shapes become random float64 inputs; callables (specific values) are called."""
    return [s() if callable(s) else randn(*s, seed=seed + i) for i, s in enumerate(specs)]


def check_layer(name, make, specs, steps=2, train=True):
    tl, ol = make(torch.nn, lambda t: t), make(nn, ours)
    assert repr(ol) == repr(tl), f"{name}: repr\nours  {ol!r}\ntorch {tl!r}"
    assert list(ol.state_dict().keys()) == list(tl.state_dict().keys()), f"{name}: state_dict keys"
    assert [n for n, _ in ol.named_parameters()] == [n for n, _ in tl.named_parameters()], name
    assert [n for n, _ in ol.named_buffers()] == [n for n, _ in tl.named_buffers()], name
    tl.double()
    ol.double()
    res = ol.load_state_dict(OrderedDict((k, ours(v)) for k, v in tl.state_dict().items()))
    assert res.missing_keys == [] and res.unexpected_keys == [] and repr(res) == "<All keys matched successfully>"
    tl.train(train)
    ol.train(train)
    for step in range(steps):           # twice: running statistics carry over
        for p in ol.parameters():
            p.grad = None
        tl.zero_grad(set_to_none=True)
        run_both(lambda *a: ol(*a), lambda *a: tl(*a), _layer_inputs(specs, 10 * step), what=f"{name} step {step}")
        tp = dict(tl.named_parameters())
        for n, p in ol.named_parameters():
            assert_close(p.grad, tp[n].grad, what=f"{name}: grad of {n}")
        tb = dict(tl.named_buffers())
        for n, b in ol.named_buffers():
            assert_close(b, tb[n], what=f"{name}: buffer {n}")


@pytest.mark.parametrize("name,make,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(T, name, make, specs):
    check_layer(name, make, specs)


def test_layers_eval_mode_match_torch(T):
    for name, make, specs in LAYERS:
        if "Norm" in name or "Dropout" in name:
            check_layer(name + " eval", make, specs, steps=1, train=False)
    check_layer("Dropout eval", lambda M, c: M.Dropout(0.7), [(3, 4)], steps=1, train=False)


def test_embedding_layer(T):
    idx = torch.tensor([[1, 3, 3], [0, 9, 1]])
    for make in [lambda M: M.Embedding(10, 4), lambda M: M.Embedding(10, 4, padding_idx=3),
                 lambda M: M.Embedding(10, 4, padding_idx=-2, max_norm=1.0)]:
        tl, ol = make(torch.nn), make(nn)
        assert repr(ol) == repr(tl)
        tl.double()
        ol.double()
        ol.load_state_dict({k: ours(v) for k, v in tl.state_dict().items()})
        a, b = ol(ours(idx)), tl(idx)
        assert_close(a, b, what="embedding")
        g = randn(*b.shape)
        (b * g).sum().backward()
        (a * ours(g)).sum().backward()
        assert_close(ol.weight.grad, tl.weight.grad, what="embedding weight grad")
        assert_close(ol.weight, tl.weight, what="embedding weight (max_norm renorm)")
    e = nn.Embedding(6, 3, padding_idx=2)
    assert e.weight[2].abs().sum().item() == 0
    pre = tn.arange(12.0).reshape(4, 3)
    f = nn.Embedding.from_pretrained(pre)
    assert f.weight.requires_grad is False and f(tn.tensor([1])).tolist() == [[3.0, 4.0, 5.0]]
    assert nn.Embedding.from_pretrained(pre, freeze=False, padding_idx=0).weight.requires_grad
    assert repr(nn.Embedding.from_pretrained(pre, padding_idx=1)) == repr(
        torch.nn.Embedding.from_pretrained(torch.arange(12.0).reshape(4, 3), padding_idx=1))


def test_conv_transpose_output_size(T):
    tl = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    ol = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).double()
    ol.load_state_dict({k: ours(v) for k, v in tl.state_dict().items()})
    x = randn(1, 2, 4, 5)
    assert_close(ol(ours(x), output_size=[8, 10]), tl(x, output_size=[8, 10]), what="output_size")
    assert_close(ol(ours(x), output_size=(1, 3, 7, 9)), tl(x, output_size=(1, 3, 7, 9)), what="output_size 4")
    with pytest.raises(ValueError) as te:
        tl(x, output_size=[12, 10])
    with pytest.raises(ValueError) as oe:
        ol(ours(x), output_size=[12, 10])
    assert str(oe.value) == str(te.value)


def test_batchnorm_running_stats_over_steps(T):
    for kw in ({}, {"momentum": None}, {"momentum": 0.5, "eps": 1e-3}):
        tl, ol = torch.nn.BatchNorm1d(3, **kw).double(), nn.BatchNorm1d(3, **kw).double()
        for step in range(4):
            x = randn(5, 3, seed=step)
            assert_close(ol(ours(x)), tl(x), what=f"bn {kw} step {step}")
        for n, b in tl.named_buffers():
            assert_close(getattr(ol, n), b, what=f"bn buffer {n}")
        tl.eval()
        ol.eval()
        assert_close(ol(ours(randn(2, 3))), tl(randn(2, 3)), what="bn eval")
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(tn.randn(2, 3, 4))


def test_layer_constructor_errors_match_torch(T):
    for bad in [lambda M: M.Conv2d(3, 4, 3, groups=2), lambda M: M.Conv2d(4, 4, 3, padding="full"),
                lambda M: M.Conv2d(4, 4, 3, stride=2, padding="same"), lambda M: M.Conv2d(4, 4, 3, padding_mode="wrap"),
                lambda M: M.ConvTranspose2d(4, 4, 3, padding_mode="reflect"), lambda M: M.GroupNorm(3, 4),
                lambda M: M.Dropout(1.5), lambda M: M.Conv1d(4, 4, 3, groups=0)]:
        with pytest.raises(Exception) as te:
            bad(torch.nn)
        with pytest.raises(Exception) as oe:
            bad(nn)
        unset = re.compile(r"\{.*\}")              # set reprs: order varies between runs, in torch too
        assert type(oe.value) is type(te.value) and unset.sub("{}", str(oe.value)) == unset.sub("{}", str(te.value))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


# =========================================================================== Module behaviour vs torch
def make_net(M):
    """A Python subclass with nested submodules, containers, a shared parameter, persistent
    and non-persistent buffers, a None parameter and a plain attribute."""
    class Block(M.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = M.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn = M.BatchNorm2d(c)
            self.register_buffer("scale", M.Parameter(torch.ones(1) if M is torch.nn else tn.ones(1)).detach() * 2)
            self.register_buffer("cache", None)
            self.register_buffer("tmp", (torch.zeros if M is torch.nn else tn.zeros)(c), persistent=False)

        def forward(self, x):
            return (self.bn(self.conv(x)) * self.scale).relu()

    class Net(M.Module):
        def __init__(self):
            super().__init__()
            self.stem = M.Sequential(M.Conv2d(3, 4, 3, stride=2), M.ReLU())
            self.blocks = M.ModuleList([Block(4), Block(4)])
            self.heads = M.ModuleDict({"cls": M.Linear(4, 5), "reg": M.Linear(4, 2)})
            self.heads["tied"] = M.Linear(4, 5)
            self.heads["tied"].weight = self.heads["cls"].weight          # shared parameter
            self.gain = M.Parameter((torch.ones if M is torch.nn else tn.ones)(1))
            self.register_parameter("unused", None)
            self.pool = M.AdaptiveAvgPool2d(1)
            self.name = "net"

        def forward(self, x):
            x = self.stem(x)
            for b in self.blocks:
                x = b(x)
            x = self.pool(x).flatten(1) * self.gain
            return self.heads["cls"](x) + self.heads["tied"](x), self.heads["reg"](x)

        def extra_repr(self):
            return "custom=1\nsecond line"

    return Net()


def test_subclass_behaves_like_torch(T):
    tnet, onet = make_net(torch.nn), make_net(nn)
    assert repr(onet) == repr(tnet)
    assert [n for n, _ in onet.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert [n for n, _ in onet.named_buffers()] == [n for n, _ in tnet.named_buffers()]
    assert list(onet.state_dict().keys()) == list(tnet.state_dict().keys())
    assert list(onet.state_dict(keep_vars=True).keys()) == list(tnet.state_dict(keep_vars=True).keys())
    assert [n for n, _ in onet.named_modules()] == [n for n, _ in tnet.named_modules()]
    assert [n for n, _ in onet.named_children()] == [n for n, _ in tnet.named_children()]
    assert [type(m).__name__ for m in onet.modules()] == [type(m).__name__ for m in tnet.modules()]
    assert [n for n, _ in onet.named_parameters(prefix="model", recurse=False)] == \
        [n for n, _ in tnet.named_parameters(prefix="model", recurse=False)]
    assert len(list(onet.parameters())) == len(list(tnet.parameters()))          # the tied weight once
    assert onet.state_dict()._metadata == tnet.state_dict()._metadata
    assert isinstance(onet.state_dict(), OrderedDict)
    assert not onet.state_dict()["gain"].requires_grad and onet.state_dict(keep_vars=True)["gain"] is onet.gain
    # training flags propagate
    onet.eval()
    tnet.eval()
    assert [m.training for m in onet.modules()] == [m.training for m in tnet.modules()] and not onet.blocks[1].bn.training
    onet.train()
    assert all(m.training for m in onet.modules())
    onet.blocks.train(False)
    assert onet.training and not onet.blocks[0].conv.training and onet.stem[0].training
    # same weights -> same outputs and gradients
    tnet.double()
    onet.double()
    onet.load_state_dict({k: ours(v) for k, v in tnet.state_dict().items()})
    tnet.train()
    onet.train()
    x = randn(2, 3, 9, 9)
    run_both(lambda x: onet(x), lambda x: tnet(x), [x], what="net")
    tp = dict(tnet.named_parameters())
    for n, p in onet.named_parameters():
        assert_close(p.grad, tp[n].grad, what=f"net grad {n}")
    for n, b in tnet.state_dict().items():
        assert_close(onet.state_dict()[n], b, what=f"net state {n}")
    # attribute protocol
    assert onet.heads.cls.weight is onet.heads.tied.weight
    assert onet.name == "net" and onet.unused is None and onet.blocks[0].cache is None
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        onet.nope


def test_setattr_getattr_delattr_errors_match_torch(T):
    def scenario(M, ctor):
        m = M.Linear(2, 3)
        errs = []
        for act in [lambda: setattr(m, "weight", ctor([1.0])),
                    lambda: setattr(m, "weight", None),
                    lambda: m.register_parameter("a.b", None),
                    lambda: m.register_buffer("weight", ctor([1.0])),
                    lambda: m.register_buffer("buf", 3),
                    lambda: m.add_module("weight", M.ReLU()),
                    lambda: m.add_module("x", 3),
                    lambda: m.register_parameter("p", ctor([1.0])),
                    lambda: setattr(m, "sub", M.ReLU()),
                    lambda: setattr(m, "sub", 3),
                    lambda: delattr(m, "sub"),
                    lambda: delattr(m, "bias"),
                    lambda: m.get_submodule("foo"),
                    lambda: m.get_parameter("bias"),
                    lambda: m.train("yes")]:
            try:
                act()
                errs.append(None)
            except Exception as e:
                errs.append((type(e).__name__, str(e)))
        return errs, [n for n, _ in m.named_parameters()], list(m._modules)

    assert scenario(nn, tn.tensor) == scenario(torch.nn, torch.tensor)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tn.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__\\(\\) call"):
        Early()


def test_load_state_dict_strict_and_messages(T):
    def scenario(M, conv):
        net = M.Sequential(M.Linear(3, 4), M.BatchNorm1d(4), M.Linear(4, 2, bias=False))
        sd = OrderedDict((k, conv(torch.zeros(tuple(v.shape), dtype=v.dtype))) for k, v in
                         make_sd_shapes().items())
        out = []
        for strict in (True, False):
            for mut in [lambda d: d, lambda d: (d.pop("0.bias"), d)[1],
                        lambda d: d.__setitem__("extra.w", conv(torch.zeros(1))) or d,
                        lambda d: d.__setitem__("2.weight", conv(torch.zeros(3, 4))) or d,
                        lambda d: (d.pop("1.running_var"), d.__setitem__("3.x", conv(torch.zeros(1))), d)[2],
                        lambda d: d.__setitem__("0.bias", 3.0) or d]:
                d = OrderedDict(sd)
                d = mut(d)
                try:
                    r = net.load_state_dict(d, strict=strict)
                    out.append(("ok", list(r.missing_keys), list(r.unexpected_keys), repr(r)))
                except Exception as e:
                    out.append((type(e).__name__, str(e)))
        return out

    def make_sd_shapes():
        return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                   torch.nn.Linear(4, 2, bias=False)).state_dict()

    ours_out, torch_out = scenario(nn, ours), scenario(torch.nn, lambda t: t)
    for a, b in zip(ours_out, torch_out):
        assert a == b
    # a successful strict load copies values (no autograd) and keeps parameter identity
    m = nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": tn.ones(2, 2), "bias": tn.zeros(2)})
    assert m.weight is w and w.tolist() == [[1.0, 1.0], [1.0, 1.0]] and w.grad_fn is None and w.requires_grad
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_sequential_and_containers_like_torch(T):
    def scenario(M):
        s = M.Sequential(M.Linear(2, 3), M.ReLU(), M.Linear(3, 1))
        out = [len(s), type(s[0]).__name__, type(s[-1]).__name__, repr(s[1:]), repr(s[::2])]
        s.append(M.Sigmoid())
        s.insert(1, M.Tanh())
        out.append(repr(s))
        del s[2]
        out.append(list(s._modules))
        s[0] = M.Linear(2, 3, bias=False)
        out.append(repr(s + M.Sequential(M.ReLU())))
        out.append(repr(s.pop(1)))
        s2 = M.Sequential(OrderedDict([("fc", M.Linear(1, 1)), ("act", M.ReLU())]))
        out.append(repr(s2))
        out.append(repr(s2.fc))
        try:
            s[10]
        except IndexError as e:
            out.append(str(e))
        ml = M.ModuleList([M.ReLU(), M.Tanh()])
        ml.append(M.Sigmoid())
        ml.extend([M.ELU()])
        ml.insert(0, M.GELU())
        out += [len(ml), repr(ml), repr(ml[1:3]), type(ml[-1]).__name__]
        del ml[0]
        out.append(repr(ml))
        md = M.ModuleDict({"b": M.ReLU(), "a": M.Tanh()})
        md["c"] = M.Sigmoid()
        out += [list(md.keys()), "a" in md, len(md), repr(md), type(md.pop("b")).__name__, list(md)]
        md.update([("z", M.ELU())])
        out.append(repr(md))
        pl = M.ParameterList([M.Parameter(zeros(M, 2)), M.Parameter(zeros(M, 3, 2))])
        pl.append(zeros(M, 1))
        out += [len(pl), [tuple(p.shape) for p in pl], repr(pl),
                [n for n, _ in M.Sequential(M.Linear(1, 1)).named_parameters()]]
        pd = M.ParameterDict({"x": M.Parameter(zeros(M, 2))})
        pd["y"] = zeros(M, 1)
        out += [list(pd.keys()), repr(pd), [n for n, _ in pd.named_parameters()]]
        return out

    def zeros(M, *s):
        return (torch.zeros if M is torch.nn else tn.zeros)(*s)

    a, b = scenario(nn), scenario(torch.nn)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"item {i}:\nours  {x}\ntorch {y}"


def test_representative_model_repr_and_keys(T):
    def model(M):
        return M.Sequential(
            M.Conv2d(1, 8, 3, padding=1), M.BatchNorm2d(8), M.ReLU(inplace=True), M.MaxPool2d(2),
            M.Conv2d(8, 16, (3, 3), stride=(2, 2), dilation=2, groups=2, bias=False, padding="same" if False else 2),
            M.GroupNorm(4, 16), M.GELU(approximate="tanh"), M.AdaptiveAvgPool2d((1, 1)), M.Flatten(),
            M.Dropout(0.25), M.Linear(16, 32), M.LayerNorm(32), M.LeakyReLU(0.2, inplace=True),
            M.Linear(32, 10), M.LogSoftmax(dim=1), M.Upsample(scale_factor=2.0, mode="bilinear"),
            M.ConvTranspose2d(3, 3, 2, stride=2, output_padding=1), M.AvgPool2d(3, stride=1, padding=1),
            M.InstanceNorm2d(3), M.Embedding(100, 16, padding_idx=0), M.Softplus(), M.ELU(inplace=True),
            M.Hardtanh(-2, 2), M.Unflatten(1, (2, 5)), M.PixelShuffle(3), M.Dropout2d(), M.CrossEntropyLoss(),
            M.BatchNorm1d(4, momentum=None, affine=False), M.Identity(), M.Softmax(dim=-1), M.Bilinear(2, 3, 4),
            M.AdaptiveMaxPool2d(4), M.MaxPool1d(3), M.AvgPool1d(2), M.Conv1d(2, 2, 1, padding="same"))
    tm, om = model(torch.nn), model(nn)
    assert repr(om) == repr(tm)
    assert list(om.state_dict().keys()) == list(tm.state_dict().keys())
    assert {k: tuple(v.shape) for k, v in om.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in tm.state_dict().items()}
    assert str(om.state_dict()["1.num_batches_tracked"].dtype) == str(tm.state_dict()["1.num_batches_tracked"].dtype)


def test_training_loop_matches_torch(T):
    """A small MLP trained by hand-written SGD: identical loss trajectories."""
    def model(M):
        return M.Sequential(M.Linear(4, 8), M.Tanh(), M.Linear(8, 8), M.ReLU(), M.Linear(8, 3))
    tm, om = model(torch.nn).double(), model(nn).double()
    om.load_state_dict({k: ours(v) for k, v in tm.state_dict().items()})
    x, y = randn(16, 4), torch.tensor([0, 1, 2, 1] * 4)
    ox, oy = ours(x), ours(y)
    tl, ol = [], []
    for _ in range(15):
        tm.zero_grad()
        om.zero_grad()
        lt = TF.cross_entropy(tm(x), y)
        lo = F.cross_entropy(om(ox), oy)
        lt.backward()
        lo.backward()
        nn.utils.clip_grad_norm_(om.parameters(), 0.5)
        torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.5)
        with torch.no_grad():
            for p in tm.parameters():
                p -= 0.5 * p.grad
        with tn.no_grad():
            for p in om.parameters():
                p.sub_(0.5 * p.grad)
        tl.append(lt.item())
        ol.append(lo.item())
    assert all(abs(a - b) < 1e-10 for a, b in zip(ol, tl)), (ol, tl)
    assert ol[-1] < ol[0]


# =========================================================================== Module mechanics (no torch needed)
def test_to_double_float_in_place_keeps_parameter_identity():
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    w, rm, nbt = m[0].weight, m[1].running_mean, m[1].num_batches_tracked
    ptr = w._ptr
    m(tn.randn(4, 3)).sum().backward()
    assert m.double() is m
    assert m[0].weight is w and w._ptr == ptr and w.dtype is tn.float64 and w.requires_grad and w.is_leaf
    assert w.grad.dtype is tn.float64                       # gradients follow, as torch
    assert m[1].running_mean.dtype is tn.float64 and rm.dtype is tn.float32   # buffers are replaced, as torch
    assert m[1].num_batches_tracked.dtype is tn.int64     # integer buffers keep their dtype
    assert nbt.dtype is tn.int64
    m.float()
    assert w.dtype is tn.float32 and m[1].weight.dtype is tn.float32
    m.to(tn.float64)
    assert w.dtype is tn.float64
    m.to(dtype=tn.float32).to("cpu").cpu()
    assert w.dtype is tn.float32
    m.to(tn.zeros(1, dtype=tn.float64))
    assert w.dtype is tn.float64
    frozen = nn.Linear(2, 2)
    frozen.weight.requires_grad_(False)
    frozen.double()
    assert not frozen.weight.requires_grad and frozen.bias.requires_grad
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(tn.int64)
    if not _C.lib.tn_cuda_is_available():     # (tn.cuda.is_available() trips on the bool = tn.bool alias)
        with pytest.raises(RuntimeError):
            m.cuda()
        assert w.device.type == "cpu"


def test_optimizer_style_references_survive_to():
    """What an optimizer holds (the parameter objects and their C tensors) sees the change."""
    m = nn.Linear(3, 1)
    params = list(m.parameters())
    ptrs = [p._ptr for p in params]
    m.double()
    x = tn.randn(5, 3, dtype=tn.float64)
    m(x).sum().backward()
    assert [p._ptr for p in m.parameters()] == ptrs and all(p.grad is not None for p in params)
    with tn.no_grad():
        for p in params:
            p.sub_(0.1 * p.grad)
    assert m.weight.dtype is tn.float64


def test_zero_grad_apply_requires_grad_hooks():
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    m(tn.randn(3, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]

    def init_weights(mod):
        if type(mod) is nn.Linear:
            nn.init.constant_(mod.weight, 0.5)
    m.apply(init_weights)
    assert m[0].weight.tolist() == [[0.5, 0.5], [0.5, 0.5]] and m[0].weight.requires_grad
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    calls = []
    h1 = m[0].register_forward_pre_hook(lambda mod, inp: (inp[0] * 0,))
    h2 = m[0].register_forward_hook(lambda mod, inp, out: calls.append(inp[0].abs().sum().item()) or out + 1)
    y = m[0](tn.ones(1, 2))
    assert calls == [0.0] and y.allclose((m[0].bias + 1).unsqueeze(0))
    h1.remove()
    with h2:
        pass
    assert not m[0]._forward_hooks and not m[0]._forward_pre_hooks
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(tn.ones(1))


def test_parameter():
    p = nn.Parameter(tn.ones(2, 3))
    assert isinstance(p, tn.Tensor) and isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor([[1., 1., 1.],") and repr(p).endswith("requires_grad=True)")
    assert not nn.Parameter(tn.ones(1), requires_grad=False).requires_grad
    assert type(p * 2) is tn.Tensor and type(p.detach()) is tn.Tensor
    src = tn.zeros(2)
    q = nn.Parameter(src)
    with tn.no_grad():
        q.fill_(3)
    assert src.tolist() == [3.0, 3.0]                       # shares the data, as torch
    d = copy.deepcopy(p)
    assert type(d) is nn.Parameter and d.requires_grad and d.tolist() == p.tolist() and d._ptr != p._ptr
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.requires_grad and r.tolist() == p.tolist()
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError):
        nn.Parameter(tn.tensor([1, 2]))                      # integer tensors cannot require grad


def test_deepcopy_and_pickle_module():
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    m[0].weight.data  # noqa: B018
    c = copy.deepcopy(m)
    assert repr(c) == repr(m) and c[0].weight is not m[0].weight and type(c[0].weight) is nn.Parameter
    assert c[0].weight.tolist() == m[0].weight.tolist() and c[1].running_var.tolist() == [1.0, 1.0, 1.0]
    with tn.no_grad():
        c[0].weight.fill_(0)
    assert m[0].weight.abs().sum().item() > 0
    r = pickle.loads(pickle.dumps(m))
    assert r[0].bias.tolist() == m[0].bias.tolist() and list(r.state_dict()) == list(m.state_dict())
    x = tn.randn(4, 2)
    assert r(x).tolist() == m(x).tolist()


def test_module_loop_does_not_leak():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    x = tn.randn(2, 1, 4, 4)

    def step():
        m.zero_grad()
        F.cross_entropy(m(x), tn.tensor([0, 1])).backward()
        m.double()
        m.float()
        m.state_dict()
    step()
    before = _live()
    for _ in range(5):
        step()
    assert _live() == before


# =========================================================================== nn.init
def _stats(t):
    v = t.reshape(-1).tolist()
    n = len(v)
    mean = sum(v) / n
    return mean, math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)), min(v), max(v)


def test_init_statistics():
    tn.manual_seed(0)
    t = tn.empty(200, 300)
    mean, std, lo, hi = _stats(nn.init.uniform_(t, -2, 3))
    assert abs(mean - 0.5) < 0.03 and -2 <= lo and hi <= 3 and abs(std - 5 / math.sqrt(12)) < 0.02
    mean, std, _, _ = _stats(nn.init.normal_(t, 1.0, 0.5))
    assert abs(mean - 1) < 0.01 and abs(std - 0.5) < 0.01
    assert nn.init.constant_(t, 0.25).eq(0.25).all().item()
    assert nn.init.zeros_(t).eq(0).all().item() and nn.init.ones_(t).eq(1).all().item()
    b = math.sqrt(6 / 500) * 2
    _, std, lo, hi = _stats(nn.init.xavier_uniform_(t, gain=2))
    assert -b <= lo and hi <= b and abs(std - b / math.sqrt(3)) < 0.01 * b
    _, std, _, _ = _stats(nn.init.xavier_normal_(t))
    assert abs(std - math.sqrt(2 / 500)) < 0.02 * math.sqrt(2 / 500)
    _, std, _, _ = _stats(nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"))
    assert abs(std - math.sqrt(2 / 200)) < 0.02 * math.sqrt(2 / 200)
    _, std, lo, hi = _stats(nn.init.kaiming_uniform_(t, a=math.sqrt(5)))
    assert hi <= 1 / math.sqrt(300) and lo >= -1 / math.sqrt(300)
    mean, std, lo, hi = _stats(nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=0.0, b=2.0))
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    expect = 0.5 + (pdf(-0.5) - pdf(1.5)) / (cdf(1.5) - cdf(-0.5))    # E[X | 0 < X < 2], X ~ N(0.5, 1)
    assert 0 <= lo and hi <= 2 and abs(mean - expect) < 0.01
    q = nn.init.orthogonal_(tn.empty(4, 6, dtype=tn.float64), gain=2)
    g = q @ q.t()
    assert (g - tn.eye(4, dtype=tn.float64) * 4).abs().max().item() < 1e-9
    q = nn.init.orthogonal_(tn.empty(6, 2, 2, dtype=tn.float64)).reshape(6, 4)
    assert (q.t() @ q - tn.eye(4, dtype=tn.float64)).abs().max().item() < 1e-9
    e = nn.init.eye_(tn.empty(2, 3))
    assert e.tolist() == [[1, 0, 0], [0, 1, 0]]
    d = nn.init.dirac_(tn.empty(2, 2, 3))
    assert d[:, :, 1].tolist() == [[1, 0], [0, 1]] and d.sum().item() == 2


def test_init_matches_torch_gain_and_errors(T):
    for nl, p in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None), ("conv_transpose2d", None)]:
        assert abs(nn.init.calculate_gain(nl, p) - torch.nn.init.calculate_gain(nl, p)) < 1e-12
    for bad in [lambda I, t: I.calculate_gain("foo"), lambda I, t: I.calculate_gain("leaky_relu", "x"),
                lambda I, t: I.xavier_uniform_(t(3)), lambda I, t: I.kaiming_normal_(t(3, 3), mode="fan"),
                lambda I, t: I.orthogonal_(t(3)), lambda I, t: I.eye_(t(2, 2, 2))]:
        with pytest.raises(ValueError) as te:
            bad(torch.nn.init, torch.empty)
        with pytest.raises(ValueError) as oe:
            bad(nn.init, tn.empty)
        assert str(oe.value) == str(te.value)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nn.init.kaiming_uniform_(tn.empty(0, 3))
    assert "zero-element" in str(w[0].message)
    x = tn.ones(3, 3, requires_grad=True)
    nn.init.normal_(x)
    assert x.grad_fn is None and x.is_leaf            # no autograd history


def _c_param(mod, name):
    p = _C.lib.tn_module_get(mod, name.encode())
    assert p
    return _borrow(p)


def test_layers_draw_the_same_values_as_the_c_layers():
    """Same seed -> the Python layer's parameters equal the C tn_nn_* layer's bit for bit."""
    lib = _C.lib
    for seed in (0, 7):
        cases = [(lambda: nn.Linear(7, 5), lambda: lib.tn_nn_linear_str(7, 5, b"bias=True"), ["weight", "bias"]),
                 (lambda: nn.Conv2d(3, 4, 3, stride=2), lambda: lib.tn_nn_conv2d_str(3, 4, 3, b"stride=2"),
                  ["weight", "bias"]),
                 (lambda: nn.Embedding(10, 4, padding_idx=2), lambda: lib.tn_nn_embedding_str(10, 4, b"padding_idx=2"),
                  ["weight"]),
                 (lambda: nn.Bilinear(3, 2, 4), lambda: lib.tn_nn_bilinear_str(3, 2, 4, None), ["weight", "bias"])]
        for make_py, make_c, names in cases:
            tn.manual_seed(seed)
            py = make_py()
            tn.manual_seed(seed)
            c = make_c()
            assert c
            try:
                for n in names:
                    assert getattr(py, n).equal(_c_param(c, n)), n
            finally:
                lib.tn_module_free(c)


# =========================================================================== nn.utils
@pytest.mark.parametrize("use_c", [True, False], ids=["C", "python"])
def test_clip_grad(T, use_c):
    # error_if_nonfinite=True takes the Python path (it checks the norm before clipping)
    shapes = [(3, 4), (5,), (2, 2)]
    for norm_type in (2.0, 1.0, math.inf, 3.0):
        tps = [randn(*s, seed=i).requires_grad_() for i, s in enumerate(shapes)]
        ops = [ours(p).requires_grad_() for p in tps]
        for a, b in zip(ops, tps):
            b.grad = randn(*b.shape, seed=9) * 3
            a.grad = ours(b.grad)
        tt = torch.nn.utils.clip_grad_norm_(tps, 1.5, norm_type=norm_type, error_if_nonfinite=not use_c)
        # foreach= (PyTorch 2.0+; 1.13 has none) only picks kernels: accepted, the same numbers
        ot = nn.utils.clip_grad_norm_(ops, 1.5, norm_type=norm_type, error_if_nonfinite=not use_c,
                                      foreach=True if use_c else None)
        assert_close(ot, tt, what=f"total norm {norm_type}")
        for a, b in zip(ops, tps):
            assert_close(a.grad, b.grad, what=f"clipped {norm_type}")
    p = tn.ones(3, requires_grad=True)
    p.grad = tn.tensor([-3.0, 0.5, 2.0])
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]
    assert nn.utils.clip_grad_norm_([tn.ones(2, requires_grad=True)], 1.0).item() == 0.0
    q = tn.ones(2, requires_grad=True)
    q.grad = tn.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(q, 1.0, error_if_nonfinite=True)
    m = nn.Linear(2, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (6,)
    nn.utils.vector_to_parameters(tn.arange(6.0), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0], [2.0, 3.0]] and m.bias.tolist() == [4.0, 5.0]
