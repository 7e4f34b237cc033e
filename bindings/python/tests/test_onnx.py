"""tensor.onnx: export (torch.onnx.export's signature) and load (a tensor.h extension that runs
an ONNX model here); the C side is tests/test_onnx.c (round trips, hostile bytes, ONNX's
node tests).

1. Files written by tensor.onnx.export pass onnx.checker.check_model (full_check: ONNX's
   shape inference too) and, loaded back, give the eager outputs (the MLP, the CNN with
   batch norm, a transformer encoder, activations, a dynamic batch).
2. Models exported by PyTorch's own torch.onnx.export (an MLP, a CNN with batch norm, a
   small transformer encoder with an embedding and layer norm, opsets 13/14/17) load and
   run here, matching torch's outputs to 1e-4.
3. Errors: an unsupported operator is named with its opset; bad arguments raise."""
import io
import os
import warnings

import numpy as np
import pytest

import tensor as tn

try:
    import torch
except ImportError:  # the oracle tests skip themselves
    torch = None
try:
    import onnx
except ImportError:
    onnx = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
needs_onnx = pytest.mark.skipif(onnx is None, reason="onnx is not installed (Debian: python3-onnx)")


def check(path):
    if onnx is not None:
        onnx.checker.check_model(onnx.load(path), full_check=True)


def randomize_bn(model):
    with tn.no_grad():
        for m in model.modules():
            if isinstance(m, (tn.nn.BatchNorm1d, tn.nn.BatchNorm2d)):
                m.running_mean.copy_(tn.randn(m.running_mean.shape) * 0.3)
                m.running_var.copy_(tn.rand(m.running_var.shape) + 0.5)


def ours(nn):
    return {
        "mlp": (nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3), nn.LogSoftmax(dim=1)), (4, 8)),
        "cnn": (nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2), nn.BatchNorm2d(8), nn.ReLU(),
                              nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 4 * 4, 10)), (2, 1, 16, 16)),
        "encoder": (nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True), (2, 5, 16)),
        "encoder_gelu": (nn.TransformerEncoderLayer(16, 2, dim_feedforward=24, batch_first=True, activation="gelu", norm_first=True), (3, 4, 16)),
        "acts": (nn.Sequential(nn.Linear(6, 6), nn.GELU(), nn.SiLU(), nn.ELU(0.5), nn.LeakyReLU(0.1), nn.Hardtanh(-0.5, 0.5),
                               nn.Sigmoid(), nn.Softplus(), nn.Hardswish(), nn.LayerNorm(6), nn.Softmax(dim=-1)), (3, 6)),
    }


@pytest.mark.parametrize("name", ["mlp", "cnn", "encoder", "encoder_gelu", "acts"])
def test_export_checker_and_reload(tmp_path, name):
    tn.manual_seed(0)
    model, shape = ours(tn.nn)[name]
    randomize_bn(model)
    model.eval()
    x = tn.randn(*shape)
    path = str(tmp_path / f"{name}.onnx")
    tn.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"])
    check(path)
    if onnx is not None:
        m = onnx.load(path)
        assert [i.name for i in m.graph.input] == ["x"] and [o.name for o in m.graph.output] == ["y"]
        assert m.opset_import[0].version == 17
        assert len(m.graph.initializer) > 0
    g = tn.onnx.load(path)
    x2 = tn.randn(*shape)
    with tn.no_grad():
        want = model(x2)
    assert (g(x2) - want).abs().max().item() < 1e-4


@needs_onnx
def test_export_gelu_is_erf_and_attention_is_matmul_softmax(tmp_path):
    tn.manual_seed(1)
    model, shape = ours(tn.nn)["encoder_gelu"]
    model.eval()
    path = str(tmp_path / "e.onnx")
    tn.onnx.export(model, tn.randn(*shape), path)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"Erf", "MatMul", "Softmax", "LayerNormalization", "Transpose"} <= ops
    assert "Gelu" not in ops   # Gelu is opset 20


def test_export_dynamic_batch_and_file_object(tmp_path):
    tn.manual_seed(2)
    model, shape = ours(tn.nn)["cnn"]
    model.eval()
    buf = io.BytesIO()
    tn.onnx.export(model, (tn.randn(*shape),), buf, input_names=["img"], output_names=["logits"],
                   dynamic_axes={"img": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)
    data = buf.getvalue()
    if onnx is not None:
        m = onnx.load_from_string(data)
        onnx.checker.check_model(m, full_check=True)
        assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    g = tn.onnx.load(data)
    for b in (1, 2, 5):
        x = tn.randn(b, *shape[1:])
        with tn.no_grad():
            assert (g(x) - model(x)).abs().max().item() < 1e-4


def test_export_errors(tmp_path):
    model = tn.nn.Linear(3, 2)
    x = tn.randn(2, 3)
    with pytest.raises(RuntimeError, match="opset_version=13 is not supported"):
        tn.onnx.export(model, x, str(tmp_path / "a.onnx"), opset_version=13)
    with pytest.raises(ValueError, match="input_names"):
        tn.onnx.export(model, x, str(tmp_path / "a.onnx"), input_names=["a,b"])
    with pytest.raises(NotImplementedError, match="only dim 0"):
        tn.onnx.export(model, x, str(tmp_path / "a.onnx"), input_names=["x"], dynamic_axes={"x": [1]})
    with pytest.raises(TypeError):
        tn.onnx.export(model, 3, str(tmp_path / "a.onnx"))
    assert not os.path.exists(tmp_path / "a.onnx")
    # an op without an export is named
    f = lambda t: tn.special.i0(t)   # noqa: E731
    with pytest.raises(RuntimeError, match="i0 has no ONNX export"):
        tn.onnx.export(f, x, str(tmp_path / "b.onnx"))


def test_load_errors(tmp_path):
    with pytest.raises(RuntimeError, match="not a valid ONNX model"):
        tn.onnx.load(b"\x0a\xff\xff\xff\xff\x0f")
    with pytest.raises(RuntimeError, match="cannot open"):
        tn.onnx.load(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError):
        tn.onnx.load(3)
    rng = np.random.default_rng(0)
    for _ in range(200):   # random bytes: an error, never a crash
        try:
            tn.onnx.load(rng.integers(0, 256, int(rng.integers(0, 64)), dtype=np.uint8).tobytes())
        except RuntimeError:
            pass


# ---- models exported by PyTorch ----
def torch_models():
    tnn = torch.nn

    class Enc(tnn.Module):
        def __init__(self):
            super().__init__()
            self.emb = tnn.Embedding(20, 16)
            self.pos = tnn.Parameter(torch.randn(1, 7, 16) * 0.1)
            self.enc = tnn.TransformerEncoder(tnn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True), 2)
            self.ln = tnn.LayerNorm(16)
            self.head = tnn.Linear(16, 5)

        def forward(self, idx):
            return self.head(self.ln(self.enc(self.emb(idx) + self.pos)).mean(dim=1))

    class Blocks(tnn.Module):   # a ResNet-style block net: residual adds, global average pool
        def __init__(self):
            super().__init__()
            self.stem = tnn.Sequential(tnn.Conv2d(3, 8, 3, padding=1, bias=False), tnn.BatchNorm2d(8), tnn.ReLU())
            self.b1 = tnn.Sequential(tnn.Conv2d(8, 8, 3, padding=1, bias=False), tnn.BatchNorm2d(8), tnn.ReLU(),
                                     tnn.Conv2d(8, 8, 3, padding=1, bias=False), tnn.BatchNorm2d(8))
            self.pool = tnn.AdaptiveAvgPool2d(1)
            self.fc = tnn.Linear(8, 4)

        def forward(self, x):
            h = self.stem(x)
            h = torch.relu(h + self.b1(h))
            return self.fc(torch.flatten(self.pool(h), 1))

    return {
        "mlp": (tnn.Sequential(tnn.Linear(8, 16), tnn.ReLU(), tnn.Linear(16, 16), tnn.Tanh(), tnn.Linear(16, 3), tnn.LogSoftmax(dim=1)),
                torch.randn(4, 8)),
        "cnn": (tnn.Sequential(tnn.Conv2d(1, 8, 3, padding=1), tnn.BatchNorm2d(8), tnn.ReLU(), tnn.MaxPool2d(2),
                               tnn.Conv2d(8, 16, 3, padding=1), tnn.BatchNorm2d(16), tnn.ReLU(), tnn.AvgPool2d(2),
                               tnn.Flatten(), tnn.Dropout(0.25), tnn.Linear(16 * 7 * 7, 32), tnn.GELU(), tnn.Linear(32, 10)),
                torch.randn(2, 1, 28, 28)),
        "blocks": (Blocks(), torch.randn(2, 3, 12, 12)),
        "transformer": (Enc(), torch.randint(0, 20, (3, 7))),
    }


@needs_torch
@pytest.mark.parametrize("opset", [13, 14, 17])
@pytest.mark.parametrize("name", ["mlp", "cnn", "blocks", "transformer"])
def test_torch_exported_models_run_here(tmp_path, name, opset):
    torch.manual_seed(0)
    model, x = torch_models()[name]
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape) * 0.3)
                m.running_var.copy_(torch.rand(m.running_var.shape) + 0.5)
    model.eval()
    path = str(tmp_path / f"{name}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, opset_version=opset)
    g = tn.onnx.load(path)
    with torch.no_grad():
        want = model(x).numpy()
    got = g(tn.tensor(x.numpy())).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@needs_torch
def test_torch_exported_dynamic_batch(tmp_path):
    torch.manual_seed(0)
    model, x = torch_models()["transformer"]
    model.eval()
    path = str(tmp_path / "t.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, input_names=["idx"], dynamic_axes={"idx": {0: "batch"}})
    g = tn.onnx.load(path)
    for b in (1, 3, 5):
        idx = torch.randint(0, 20, (b, 7))
        with torch.no_grad():
            want = model(idx).numpy()
        np.testing.assert_allclose(g(tn.tensor(idx.numpy())).numpy(), want, rtol=1e-4, atol=1e-4)


@needs_torch
def test_torch_export_unsupported_operator_named(tmp_path):
    path = str(tmp_path / "c.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(lambda_module(), (torch.randn(2, 3),), path, opset_version=14)
    with pytest.raises(RuntimeError, match=r"operator CumSum \(opset 14\) is not supported"):
        tn.onnx.load(path)


def lambda_module():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 1)
    return M()


@needs_onnx
def test_load_tensor_reads_test_data(tmp_path):
    from onnx import numpy_helper
    for arr in (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[1, -2]], dtype=np.int64), np.array(True), np.zeros((0, 3), np.float64)):
        p = tmp_path / "t.pb"
        p.write_bytes(numpy_helper.from_array(arr).SerializeToString())
        t = tn.onnx.load_tensor(str(p))
        np.testing.assert_array_equal(t.numpy(), arr)
        assert t.shape == arr.shape
