"""tensor.jit: trace / script / save / load (the C side is tests/test_jit.c).

A traced module replays its forward exactly (the same C ops run); the oracle for the
models is also PyTorch 1.13 (torch.jit.trace of the same architecture with the same
weights), where it is installed."""
import os
import warnings

import pytest

import tensor as tn

try:
    import torch
except ImportError:  # the oracle tests skip themselves
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def mlp(nn):
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3), nn.LogSoftmax(dim=1))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 4 * 4, 10))


def randomize_bn(model):
    with tn.no_grad():
        for m in model.modules():
            if isinstance(m, tn.nn.BatchNorm2d):
                m.running_mean.copy_(tn.randn(m.running_mean.shape) * 0.3)
                m.running_var.copy_(tn.rand(m.running_var.shape) + 0.5)


def to_torch(model, tmodel):
    sd = {k: torch.tensor(v.tolist(), dtype=torch.float32 if v.dtype == tn.float32 else torch.int64)
          for k, v in model.state_dict().items()}
    tmodel.load_state_dict(sd)
    return tmodel.eval()


def as_torch(x):
    return torch.tensor(x.tolist())


def maxdiff(a, b):
    return (a - b).abs().max().item()


@pytest.mark.parametrize("make,shape", [(mlp, (4, 8)), (cnn, (2, 1, 16, 16))])
def test_trace_replays_eager(make, shape):
    tn.manual_seed(0)
    model = make(tn.nn)
    randomize_bn(model)
    model.eval()
    x = tn.randn(*shape)
    traced = tn.jit.trace(model, x)
    for inp in (x, tn.randn(*shape)):
        with tn.no_grad():
            want = model(inp)
        assert maxdiff(traced(inp), want) == 0
    text = str(traced.graph)
    assert text.startswith("graph(%input0 : Float(" + ", ".join(map(str, shape)) + ")):")
    assert "prim::Constant()" in text and "return (%" in text
    assert "%0.weight" in text                # parameters by their state-dict names
    if make is cnn:
        assert {"aten::conv2d", "aten::batch_norm", "aten::max_pool2d"} <= set(traced.graph.nodes())
        assert "groups=2" in text and "%1.running_mean" in text


def eval_pair(make, seed):
    """Our model from make(tn.nn) (seeded, batch norm statistics randomised, eval mode) and
    PyTorch's copy of it."""
    tn.manual_seed(seed)
    model = make(tn.nn)
    randomize_bn(model)
    model.eval()
    return model, to_torch(model, make(torch.nn))


@needs_torch
@pytest.mark.parametrize("make,shape", [(mlp, (4, 8)), (cnn, (2, 1, 16, 16))])
def test_trace_matches_torch_jit(make, shape):
    model, tmodel = eval_pair(make, 1)
    x = tn.randn(*shape)
    ours = tn.jit.trace(model, x)
    theirs = torch.jit.trace(tmodel, as_torch(x))
    x2 = tn.randn(*shape)
    assert maxdiff(as_torch(ours(x2)), theirs(as_torch(x2))) < 1e-5


def test_trace_function_two_inputs():
    def f(a, b):
        h = a * 2.5 + b
        h = tn.cat([h, a.exp()], 0)
        return tn.softmax(h[1:4].t() @ a, dim=-1) + h.sum(1, keepdim=True)[:4].t()[:, :4].sum()
    a, b = tn.randn(3, 4), tn.randn(4)
    g = tn.jit.trace(f, (a, b))
    a2, b2 = tn.randn(3, 4), tn.randn(4)
    assert maxdiff(g(a2, b2), f(a2, b2)) < 1e-6
    with pytest.raises(RuntimeError, match=r"input 0 is float32 \[2, 4\], but the graph was traced with float32 \[3, 4\]"):
        g(tn.randn(2, 4), b2)
    with pytest.raises(RuntimeError, match="takes 2 inputs, got 1"):
        g(a2)


def test_long_parameter_names_round_trip(tmp_path):
    """a constant's name has no length limit in the saved graph (it was a 256-byte buffer)"""
    tn.manual_seed(3)
    model = tn.nn.Sequential()
    model.add_module("layer_" + "x" * 300, tn.nn.Linear(4, 3))
    x = tn.randn(2, 4)
    traced = tn.jit.trace(model, x)
    traced.save(tmp_path / "long.pt")
    loaded = tn.jit.load(tmp_path / "long.pt")
    assert "x" * 300 in str(loaded.graph)
    assert maxdiff(loaded(x), model(x)) == 0


def test_save_load(tmp_path):
    tn.manual_seed(2)
    model = cnn(tn.nn)
    randomize_bn(model)
    model.eval()
    x = tn.randn(2, 1, 16, 16)
    traced = tn.jit.trace(model, x)
    path = tmp_path / "cnn.pt"
    traced.save(path)
    loaded = tn.jit.load(str(path))
    assert str(loaded.graph) == str(traced.graph)
    x2 = tn.randn(2, 1, 16, 16)
    assert maxdiff(loaded(x2), traced(x2)) == 0
    tn.jit.save(traced, tmp_path / "again.pt")
    assert maxdiff(tn.jit.load(tmp_path / "again.pt")(x2), traced(x2)) == 0
    # a failed save keeps the old file
    with pytest.raises(RuntimeError):
        traced.save(tmp_path / "missing" / "x.pt")
    # hostile files: a message, never a crash
    bad = tmp_path / "bad.pt"
    data = path.read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match="tn_graph_load"):
        tn.jit.load(bad)
    bad.write_bytes(b"not a graph at all")
    with pytest.raises(RuntimeError, match="tn_graph_load"):
        tn.jit.load(bad)


def test_script_and_data_dependent_control_flow():
    class Gate(tn.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tn.nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            if y.sum() > 0:          # data-dependent: the trace follows one branch
                return y.relu()
            return -y

    m = tn.nn.Sequential(tn.nn.Linear(4, 5), tn.nn.GELU()).eval()
    s = tn.jit.script(m)
    x = tn.randn(3, 4)
    with tn.no_grad():
        assert maxdiff(s(x), m(x)) == 0
        x6 = tn.randn(6, 4)
        assert maxdiff(s(x6), m(x6)) == 0      # another signature: traced again
        assert maxdiff(s(x), m(x)) == 0
    assert "aten::gelu" in str(s.graph)
    with pytest.raises(tn.jit.Error, match="data-dependent control flow cannot be captured by tracing"):
        tn.jit.script(Gate())(x)
    with pytest.warns(tn.jit.TracerWarning, match="reads a tensor's value"):
        try:                         # the check on other inputs refuses it when they take the other branch
            tn.jit.trace(Gate(), x)
        except RuntimeError as e:
            assert "the graph replays differently from the forward on other inputs" in str(e)


def test_refused_with_message():
    emb = tn.nn.Embedding(10, 3)
    with pytest.raises(RuntimeError, match="only floating point inputs can be traced yet"):
        tn.jit.trace(emb, tn.arange(4))
    bn = tn.nn.BatchNorm1d(3)          # training mode
    with pytest.raises(RuntimeError, match="batch_norm in training mode"):
        tn.jit.trace(bn, tn.randn(4, 3))
    with pytest.raises(TypeError, match="must return one Tensor"):
        tn.jit.trace(lambda x: (x * 2, x * 3), tn.randn(2))


def test_transformer_encoder_layer():
    tn.manual_seed(3)
    layer = tn.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True).eval()
    x = tn.randn(2, 5, 8)
    traced = tn.jit.trace(layer, x)
    x2 = tn.randn(2, 5, 8)
    with tn.no_grad():
        assert maxdiff(traced(x2), layer(x2)) < 1e-6


def test_ignore_unused_are_no_ops():
    @tn.jit.ignore
    def f(x):
        return x + 1

    @tn.jit.ignore(drop=True)
    def g(x):
        return x + 2

    @tn.jit.unused
    def h(x):
        return x + 3
    x = tn.zeros(1)
    assert f(x).item() == 1 and g(x).item() == 2 and h(x).item() == 3
    assert not tn.jit.is_scripting()


def test_freeze_folds_batch_norm():
    tn.manual_seed(4)
    model = cnn(tn.nn)
    randomize_bn(model)
    model.eval()
    x = tn.randn(2, 1, 16, 16)
    traced = tn.jit.trace(model, x)
    frozen = tn.jit.freeze(tn.jit.trace(model, x))
    assert "aten::batch_norm" in traced.graph.nodes() and "aten::batch_norm" not in frozen.graph.nodes()
    assert len(frozen.graph.nodes()) < len(traced.graph.nodes())
    x2 = tn.randn(2, 1, 16, 16)
    assert maxdiff(frozen(x2), traced(x2)) < 1e-4
    with tn.no_grad():                      # in-place activations, same values
        assert maxdiff(tn.jit.optimize_for_inference(frozen)(x2), traced(x2)) < 1e-4
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        tn.jit.freeze(model)


@needs_torch
def test_frozen_transformer_replays_under_no_grad():
    """The optimised replay of a transformer encoder under no_grad (the residual add and
    layer norm in one pass, the weights' GEMM panels packed once, the memory plan): equal
    to our eager forward bit for bit over the warm-up, planning and served runs, also after
    the weights change in place, and to PyTorch's to float tolerance."""
    tn.manual_seed(5)
    enc = tn.nn.Sequential(tn.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True),
                           tn.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True)).eval()
    tenc = to_torch(enc, torch.nn.Sequential(torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True),
                                             torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True)))
    x = tn.randn(3, 10, 32)
    frozen = tn.jit.freeze(tn.jit.trace(enc, x))
    with tn.no_grad():
        for scale in (1.0, 1.25):
            if scale != 1.0:
                for p in enc.parameters():
                    p.mul_(scale)
                tenc = to_torch(enc, tenc)
            for _ in range(4):
                x2 = tn.randn(3, 10, 32)
                y = frozen(x2)
                assert y.tolist() == enc(x2).tolist()
                with torch.no_grad():
                    assert maxdiff(as_torch(y), tenc(as_torch(x2))) < 1e-4


def pool_cnn(nn):
    """conv + bn + relu + 2x2 max pool twice: the small-K (3 channels) and Winograd (8 -> 16)
    convolutions, each of which the optimised replay runs with its pool in one pass."""
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 8, 3), nn.MaxPool2d(2, stride=1), nn.Flatten())


@needs_torch
@pytest.mark.parametrize("shape", [(2, 3, 21, 19), (1, 3, 16, 17), (0, 3, 16, 16)])
def test_frozen_conv_relu_pool_replays_under_no_grad(shape):
    """The frozen CNN's convs with their 2x2 pools in one pass (odd sizes, batch 1 and 0):
    bit for bit the same graph replayed with grad enabled (node by node, unfused) over the
    warm-up, planning and served runs, a strided input too; our eager forward (batch norm not
    folded) and PyTorch's to float tolerance. The last pool (stride 1) is not fused."""
    model, tmodel = eval_pair(pool_cnn, 6)
    x = tn.randn(*shape)
    frozen = tn.jit.freeze(tn.jit.trace(model, x))
    assert "aten::batch_norm" not in frozen.graph.nodes()
    for k in range(5):
        x2 = tn.randn(*shape) if k < 4 else tn.randn(shape[0], shape[1], shape[2], 2 * shape[3])[..., ::2]
        unfused = frozen(x2).detach()
        with tn.no_grad():
            y = frozen(x2)
            assert y.shape == unfused.shape and y.tolist() == unfused.tolist()
            if shape[0]:
                assert maxdiff(y, model(x2)) < 1e-5
            with torch.no_grad():
                want = tmodel(as_torch(x2).reshape(shape))
            assert tuple(y.shape) == tuple(want.shape)
            if shape[0]:
                assert maxdiff(as_torch(y), want) < 1e-4
