"""nn ops on integer inputs against PyTorch (issue 20): conv, conv_transpose and bilinear
compute in the integer dtype (wrapping as PyTorch's integer kernels), the transposed
convolutions and local_response_norm take int64 only (PyTorch's CPU has no other integer
kernel: we raise), and the losses built on a Python float (margin, eps) give the default
float dtype. Random values, non-contiguous views, 0-size batches. Skipped without torch."""
import pytest

import tensor as tn

torch = pytest.importorskip("torch")
F, TF = tn.nn.functional, torch.nn.functional

INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def _pair(shape, dtype, lo=-9, hi=10, nc=False, seed=0):
    """(ours, torch's) of random integers; nc: a non-contiguous view (every other column)"""
    g = torch.Generator().manual_seed(seed)
    lo = max(lo, 0) if dtype == torch.uint8 else lo
    full = list(shape[:-1]) + [shape[-1] * 2] if nc else list(shape)
    t = torch.randint(lo, hi, full, generator=g).to(dtype)
    if nc:
        t = t[..., ::2]
    ours = tn.tensor(t.contiguous().tolist(), dtype=getattr(tn, str(dtype).split(".")[1])).reshape(tuple(t.shape))
    if nc:   # the same values as a strided view on our side too
        ours = tn.stack([ours, ours], -1).flatten(-2)[..., ::2]
        assert not ours.is_contiguous()
    return ours, t


def _same(a, b):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    if a.dtype.is_floating_point:
        torch.testing.assert_close(torch.tensor(a.tolist(), dtype=b.dtype), b)
    else:
        assert a.tolist() == b.tolist()


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_integer_dtypes(dtype, nd):
    conv, tconv = getattr(F, f"conv{nd}d"), getattr(TF, f"conv{nd}d")
    sp = (5,) * nd
    for k, (kw, nc) in enumerate([(dict(), False), (dict(stride=2, padding=1), True), (dict(groups=2), True),
                                  (dict(groups=2, dilation=2), True), (dict(padding="same"), False)]):
        x, tx = _pair((2, 4) + sp, dtype, nc=nc, seed=k)
        w, tw = _pair((4, 4 // kw.get("groups", 1)) + (3,) * nd, dtype, seed=k + 10)
        b, tb = _pair((4,), dtype, seed=k + 20)
        if "dilation" in kw and dtype != torch.int64:   # PyTorch's slow_conv_dilated: int64 only
            with pytest.raises(RuntimeError):
                tconv(tx, tw, tb, **kw)
            with pytest.raises(RuntimeError, match="dilated convolution"):
                conv(x, w, b, **kw)
            continue
        _same(conv(x, w, b, **kw), tconv(tx, tw, tb, **kw))
        _same(conv(x, w, **kw), tconv(tx, tw, **kw))
    # unbatched and 0-size batch
    x, tx = _pair((4,) + sp, dtype)
    w, tw = _pair((3, 4) + (2,) * nd, dtype, seed=3)
    _same(conv(x, w), tconv(tx, tw))
    z, tz = tn.zeros((0, 4) + sp, dtype=x.dtype), torch.zeros((0, 4) + sp, dtype=dtype)
    _same(conv(z, w), tconv(tz, tw))


def test_conv_int8_wraps_as_pytorch():
    # 100 * 3 = 300 wraps to 44 in int8; sums of many products wrap modulo 256
    x, tx = _pair((1, 3, 20), torch.int8, lo=-120, hi=120)
    w, tw = _pair((2, 3, 5), torch.int8, lo=-120, hi=120, seed=1)
    _same(F.conv1d(x, w), TF.conv1d(tx, tw))
    x, tx = _pair((1, 2, 9, 9), torch.int16, lo=-3000, hi=3000)
    w, tw = _pair((2, 2, 3, 3), torch.int16, lo=-3000, hi=3000, seed=1)
    _same(F.conv2d(x, w), TF.conv2d(tx, tw))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_int64(nd):
    convt, tconvt = getattr(F, f"conv_transpose{nd}d"), getattr(TF, f"conv_transpose{nd}d")
    sp = (4,) * nd
    for k, (kw, nc) in enumerate([(dict(), False), (dict(stride=2, padding=1, output_padding=1), True),
                                  (dict(groups=2, dilation=2), True)]):
        x, tx = _pair((2, 4) + sp, torch.int64, nc=nc, seed=k)
        w, tw = _pair((4, 6 // kw.get("groups", 1)) + (3,) * nd, torch.int64, seed=k + 10)
        b, tb = _pair((6,), torch.int64, seed=k + 20)
        _same(convt(x, w, b, **kw), tconvt(tx, tw, tb, **kw))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.int8, torch.uint8])
def test_conv_transpose_other_integers_raise(dtype):
    x, tx = _pair((1, 2, 4), dtype)
    w, tw = _pair((2, 2, 3), dtype, seed=1)
    with pytest.raises(RuntimeError):
        TF.conv_transpose1d(tx, tw)
    with pytest.raises(RuntimeError, match="transposed convolution"):
        F.conv_transpose1d(x, w)


def test_conv_integer_errors():
    x, tx = _pair((1, 2, 5), torch.int64)
    w32, tw32 = _pair((2, 2, 3), torch.int32)
    with pytest.raises(RuntimeError):
        TF.conv1d(tx, tw32)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.conv1d(x, w32)
    wf = tn.ones(2, 2, 3)
    with pytest.raises(RuntimeError):
        TF.conv1d(tx, torch.ones(2, 2, 3))
    with pytest.raises(RuntimeError):
        F.conv1d(x, wf)
    bx, tbx = tn.ones(1, 2, 5, dtype=tn.bool), torch.ones(1, 2, 5, dtype=torch.bool)
    with pytest.raises(RuntimeError):
        TF.conv1d(tbx, tbx[:, :, :3].expand(2, 2, 3))
    with pytest.raises(RuntimeError, match="bool"):
        F.conv1d(bx, tn.ones(2, 2, 3, dtype=tn.bool))
    # sums that float64 cannot hold exactly: refused, not silently rounded
    big = tn.full((1, 2, 5), 2 ** 40, dtype=tn.int64)
    with pytest.raises(RuntimeError, match="2\\^53"):
        F.conv1d(big, tn.full((2, 2, 3), 2 ** 20, dtype=tn.int64))


@pytest.mark.parametrize("dtype", INTS)
def test_bilinear_integer(dtype):
    for k, lead in enumerate([(8,), (2, 3), (0,), ()]):
        x1, t1 = _pair(lead + (3,), dtype, nc=k == 1, seed=k)
        x2, t2 = _pair(lead + (4,), dtype, seed=k + 5)
        w, tw = _pair((5, 3, 4), dtype, seed=k + 9)
        b, tb = _pair((5,), dtype, seed=k + 13)
        _same(F.bilinear(x1, x2, w, b), TF.bilinear(t1, t2, tw, tb))
        _same(F.bilinear(x1, x2, w), TF.bilinear(t1, t2, tw))


def test_local_response_norm_int64():
    for k, (shape, size, kw) in enumerate([((2, 6, 5), 3, {}), ((1, 5, 3, 4), 2, dict(alpha=1.0, beta=1.0, k=0.5)),
                                           ((2, 4, 2, 2, 3), 4, dict(beta=0.5))]):
        x, tx = _pair(shape, torch.int64, nc=k == 1, seed=k)
        _same(F.local_response_norm(x, size, **kw), TF.local_response_norm(tx, size, **kw))
    # the average of x^2 truncates (PyTorch's int64 avg_pool): 13 / 3 -> 4
    x = tn.tensor([[[3], [2], [5], [1]]])
    tx = torch.tensor([[[3], [2], [5], [1]]])
    kw = dict(alpha=1.0, beta=1.0, k=0.0)
    _same(F.local_response_norm(x, 3, **kw), TF.local_response_norm(tx, 3, **kw))
    assert F.local_response_norm(x, 3, **kw)[0, 0, 0].item() == 0.75


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool])
def test_local_response_norm_other_integers_raise(dtype):
    tx = torch.ones(1, 3, 4, dtype=dtype)
    with pytest.raises(RuntimeError):
        TF.local_response_norm(tx, 2)
    with pytest.raises(RuntimeError):
        F.local_response_norm(tn.ones(1, 3, 4, dtype=getattr(tn, str(dtype).split(".")[1])), 2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.int16, torch.int32])
def test_losses_integer_inputs_give_the_default_dtype(dtype):
    a, ta = _pair((6, 5), dtype, seed=1)
    p, tp = _pair((6, 5), dtype, seed=2, nc=True)
    n, tn_ = _pair((6, 5), dtype, seed=3)
    y, ty = _pair((6,), dtype, lo=0, hi=2, seed=4)
    y = y * 2 - 1
    ty = ty * 2 - 1
    for red in ("none", "mean", "sum"):
        for margin in (0.0, 1.0, 0.5):
            _same(F.margin_ranking_loss(a[:, 0], p[:, 0], y, margin=margin, reduction=red),
                  TF.margin_ranking_loss(ta[:, 0], tp[:, 0], ty, margin=margin, reduction=red))
            _same(F.cosine_embedding_loss(a, p, y, margin=margin, reduction=red),
                  TF.cosine_embedding_loss(ta, tp, ty, margin=margin, reduction=red))
            _same(F.triplet_margin_loss(a, p, n, margin=margin, reduction=red, swap=margin == 0.5),
                  TF.triplet_margin_loss(ta, tp, tn_, margin=margin, reduction=red, swap=margin == 0.5))
        _same(F.triplet_margin_with_distance_loss(a, p, n, reduction=red, distance_function=tn.nn.PairwiseDistance()),
              TF.triplet_margin_with_distance_loss(ta, tp, tn_, reduction=red, distance_function=torch.nn.PairwiseDistance()))
        for log_input in (True, False):
            for full in (True, False):
                _same(F.poisson_nll_loss(a.abs(), p.abs(), log_input=log_input, full=full, reduction=red),
                      TF.poisson_nll_loss(ta.abs(), tp.abs(), log_input=log_input, full=full, reduction=red))
    for eps in (1e-6, 0.0, 1.0):
        for keepdim in (False, True):
            _same(F.pairwise_distance(a, p, eps=eps, keepdim=keepdim), TF.pairwise_distance(ta, tp, eps=eps, keepdim=keepdim))
    _same(F.pairwise_distance(a[0], p[0]), TF.pairwise_distance(ta[0], tp[0]))
    _same(F.pairwise_distance(a[:0], p[:0]), TF.pairwise_distance(ta[:0], tp[:0]))


def test_losses_bool_inputs_raise_as_pytorch():
    b, tb = tn.ones(3, 4, dtype=tn.bool), torch.ones(3, 4, dtype=torch.bool)
    with pytest.raises(RuntimeError):
        TF.pairwise_distance(tb, tb)
    with pytest.raises(RuntimeError):
        F.pairwise_distance(b, b)
