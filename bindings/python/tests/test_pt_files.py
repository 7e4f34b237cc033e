"""PyTorch's own .pt files against real PyTorch, both ways: torch.save -> tensor.load (and
the C reader tn_load_pt through ctypes), tensor.save -> torch.load; a model trained in
PyTorch (Linear, Conv2d, BatchNorm with its buffers and int64 num_batches_tracked) gives
the same outputs here; float16/bfloat16 keep their dtype and bits both ways; views keep their strides and
share their storage; nested objects; a hostile pickle is refused before it runs; the
format follows the file name on save and the bytes on load. Skipped without torch."""
import collections
import gzip
import io
import math
import os
import pickle
import struct
import zipfile

import pytest

import tensor as tn
from tensor import _C
from tensor._core import _borrow

torch = pytest.importorskip("torch")


def _tn(x):
    """A torch tensor as a tensor.h tensor (same dtype, values)."""
    return tn.tensor(x.tolist(), dtype=getattr(tn, str(x.dtype).split(".")[1]))


def _same(a, b):
    """tensor.h tensor a holds torch tensor b's values (bitwise for floats, NaN included)."""
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    x, y = a.tolist(), (b.float() if b.dtype in (torch.float16, torch.bfloat16) else b).tolist()
    if isinstance(x, list):
        x, y = torch.tensor(x).flatten().tolist(), torch.tensor(y).flatten().tolist()
    else:
        x, y = [x], [y]
    for u, v in zip(x, y):
        assert (u == v and math.copysign(1, u) == math.copysign(1, v)) or (u != u and v != v), (u, v)


def _torch_model():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
                            torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):                       # running stats and num_batches_tracked move
        opt.zero_grad()
        m(torch.randn(4, 2, 4, 4)).square().mean().backward()
        opt.step()
    return m.eval()


def _tn_model():
    return tn.nn.Sequential(tn.nn.Conv2d(2, 3, 3, padding=1), tn.nn.BatchNorm2d(3), tn.nn.ReLU(),
                            tn.nn.Flatten(), tn.nn.Linear(3 * 4 * 4, 5)).eval()


def test_model_trained_in_torch_loads_here(tmp_path):
    m = _torch_model()
    path = str(tmp_path / "model.pt")
    torch.save(m.state_dict(), path)
    sd = tn.load(path)
    assert isinstance(sd, collections.OrderedDict) and list(sd) == list(m.state_dict())
    assert sd["1.num_batches_tracked"].dtype == tn.int64 and sd["1.num_batches_tracked"].item() == 3
    for k, v in m.state_dict().items():
        _same(sd[k], v)
    model = _tn_model()
    model.load_state_dict(sd)
    x = torch.randn(6, 2, 4, 4)
    want, got = m(x).detach(), model(_tn(x))
    assert torch.allclose(torch.tensor(got.tolist()), want, rtol=1e-5, atol=1e-6)
    # the C reader: the same names and values
    d = _C.lib.tn_load_pt(path.encode())
    assert d, _C.lib.tn_last_error()
    try:
        names = [_C.lib.tn_dict_key(d, i).decode() for i in range(_C.lib.tn_dict_len(d))]
        assert names == list(m.state_dict())
        for i, k in enumerate(names):
            _same(_borrow(_C.lib.tn_dict_value(d, i)), m.state_dict()[k])
    finally:
        _C.lib.tn_dict_free(d)


def test_model_saved_here_loads_in_torch(tmp_path):
    model = _tn_model()
    model.train()
    opt = tn.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(tn.randn(4, 2, 4, 4)).square().mean().backward()
        opt.step()
    model.eval()
    path = str(tmp_path / "model.pth")
    tn.save(model.state_dict(), path)
    with open(path, "rb") as f:
        assert f.read(4) == b"PK\x03\x04"
    sd = torch.load(path)
    assert list(sd) == list(model.state_dict()) and sd["1.num_batches_tracked"].item() == 2
    assert sd["1.num_batches_tracked"].dtype == torch.int64
    m = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
                            torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5)).eval()
    m.load_state_dict(sd)
    x = tn.randn(6, 2, 4, 4)
    got = m(torch.tensor(x.tolist())).detach()
    assert torch.allclose(got, torch.tensor(model(x).tolist()), rtol=1e-5, atol=1e-6)
    # the C writer too: torch reads tn_save_pt's file
    d = _C.lib.tn_dict_new()
    try:
        keep = [(k, v.detach()) for k, v in model.state_dict().items()]
        for k, v in keep:
            assert _C.lib.tn_dict_set(d, k.encode(), v._ptr) == 0
        assert _C.lib.tn_save_pt(str(tmp_path / "c.pt").encode(), d) == 0, _C.lib.tn_last_error()
    finally:
        _C.lib.tn_dict_free(d)
    sd2 = torch.load(str(tmp_path / "c.pt"))
    assert list(sd2) == list(sd) and all(torch.equal(sd[k], sd2[k]) for k in sd)


def test_half_precision_keeps_its_dtype(tmp_path):
    # torch.load keeps float16/bfloat16 (they loaded as float32 here before 0.2.0)
    special = [0.0, -0.0, 1.0, -2.5, 65504.0, 2.0 ** -24, 2.0 ** -14, float("inf"), float("-inf"), float("nan"), 0.1]
    h = torch.tensor(special, dtype=torch.float16)
    b = torch.tensor(special[:10] + [3.0e38, -1.0e-40], dtype=torch.bfloat16)
    path = str(tmp_path / "half.pt")
    torch.save({"h": h, "b": b, "ht": h[1::2], "h2": torch.randn(3, 5).half().t(),
                "p": torch.nn.Parameter(torch.randn(2, 3).bfloat16())}, path)
    back = tn.load(path)
    for k, v in torch.load(path).items():
        assert back[k].dtype == (tn.float16 if v.dtype == torch.float16 else tn.bfloat16), k
        _same(back[k], v)
        assert back[k].stride() == v.stride() and back[k].storage_offset() == v.storage_offset(), k
    assert back["p"].requires_grad
    d = _C.lib.tn_load_pt(path.encode())
    try:
        assert d and _C.lib.tn_dict_len(d) == 5
        for i, (v, code) in enumerate(((h, tn.float16), (b, tn.bfloat16))):
            got = _borrow(_C.lib.tn_dict_value(d, i))
            assert got.dtype == code
            _same(got, v)
    finally:
        _C.lib.tn_dict_free(d)
    # and back: tensor.save (and tn_save_pt) write Half/BFloat16 storages torch.load reads bit for bit
    tn.save(back, str(tmp_path / "again.pt"))
    again = torch.load(str(tmp_path / "again.pt"))
    for k, v in torch.load(path).items():
        assert again[k].dtype == v.dtype and again[k].stride() == v.stride(), k
        assert torch.equal(again[k].detach().view(torch.int16), v.detach().view(torch.int16)), k


def test_views_keep_strides_and_share_storage(tmp_path):
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "slice": base[1:, ::2], "row": base[2], "elem": base[3, 4],
           "expand": torch.arange(3.0).view(3, 1).expand(3, 4), "empty": base[:, 6:]}
    path = str(tmp_path / "views.pt")
    torch.save(obj, path)
    back = tn.load(path)
    for k, v in obj.items():
        _same(back[k], v)
        assert back[k].stride() == v.stride() and back[k].storage_offset() == v.storage_offset(), k
    es = 8
    for k in ("t", "slice", "row", "elem"):
        assert back[k].data_ptr() - back["base"].data_ptr() == (obj[k].data_ptr() - base.data_ptr()), k
    back["base"][0, 0] = -1.0                 # one storage: the write shows in the views
    assert back["t"][0, 0].item() == -1.0
    # and saved from here: torch sees the same layout and one storage
    t = tn.arange(24, dtype=tn.float64).reshape(4, 6)
    ours = {"base": t, "t": t.t(), "slice": t[1:, ::2], "elem": t[3, 4], "empty": t[:, 6:]}
    tn.save(ours, str(tmp_path / "ours.pt"))
    got = torch.load(str(tmp_path / "ours.pt"))
    for k, v in ours.items():
        assert got[k].tolist() == v.tolist() and got[k].stride() == v.stride(), k
    assert got["t"].storage().data_ptr() == got["base"].storage().data_ptr() == got["slice"].storage().data_ptr()
    assert got["slice"].data_ptr() - got["base"].data_ptr() == 6 * es and got["elem"].storage_offset() == 22
    # a small view of a large storage saves the span it uses, as its offset shows
    small = tn.arange(1000.0)[500:503]
    tn.save({"s": small}, str(tmp_path / "small.pt"))
    s = torch.load(str(tmp_path / "small.pt"))["s"]
    assert s.tolist() == [500.0, 501.0, 502.0] and len(s.storage()) == 3
    assert os.path.getsize(str(tmp_path / "small.pt")) < 2000


def test_nested_objects_both_ways(tmp_path):
    obj = {"model": collections.OrderedDict([("w", torch.ones(2, 3)), ("b", torch.zeros(3, dtype=torch.int32))]),
           "epoch": 7, "lr": 0.25, "name": "run", "flags": [True, False, None], "shape": (2, 3), 5: "int key",
           "hist": [torch.tensor(1.5), 2, float("inf")], "big": 2 ** 62, "neg": -(2 ** 40)}
    path = str(tmp_path / "ckpt.pt")
    torch.save(obj, path)
    back = tn.load(path)
    assert isinstance(back["model"], collections.OrderedDict) and back["model"]["b"].dtype == tn.int32
    for k in ("epoch", "lr", "name", "flags", "shape", 5, "big", "neg"):
        assert back[k] == obj[k] and type(back[k]) is type(obj[k]), k
    assert back["hist"][0].item() == 1.5 and back["hist"][1:] == [2, float("inf")]
    ours = {"model": collections.OrderedDict([("w", tn.ones(2, 3)), ("b", tn.zeros(3, dtype=tn.int32))]),
            "epoch": 7, "lr": 0.25, "name": "run", "flags": [True, False, None], "shape": (2, 3), 5: "int key",
            "hist": [tn.tensor(1.5), 2, float("inf")], "big": 2 ** 62, "neg": -(2 ** 40),
            "dtype": tn.float64, "size": tn.ones(2, 3).shape}
    tn.save(ours, str(tmp_path / "ours.pt"))
    got = torch.load(str(tmp_path / "ours.pt"))
    assert isinstance(got["model"], collections.OrderedDict) and got["model"]["b"].dtype == torch.int32
    for k in ("epoch", "lr", "name", "flags", "shape", 5, "big", "neg"):
        assert got[k] == ours[k], k
    assert got["dtype"] is torch.float64 and got["size"] == torch.Size([2, 3])
    again = tn.load(str(tmp_path / "ours.pt"))
    assert again["dtype"] is tn.float64 and tuple(again["size"]) == (2, 3) and again["model"]["w"].tolist() == [[1.0] * 3] * 2
    # a bare tensor, a parameter, file objects
    buf = io.BytesIO()
    torch.save(torch.arange(5), buf)
    buf.seek(0)
    assert tn.load(buf).tolist() == [0, 1, 2, 3, 4]
    buf = io.BytesIO()
    tn.save([tn.nn.Parameter(tn.ones(2)), tn.arange(3)], buf)
    buf.seek(0)
    p, a = torch.load(buf)
    assert isinstance(p, torch.nn.Parameter) and p.requires_grad and a.tolist() == [0, 1, 2]
    torch.save(torch.nn.Parameter(torch.ones(2)), str(tmp_path / "p.pt"))
    q = tn.load(str(tmp_path / "p.pt"))
    assert isinstance(q, tn.nn.Parameter) and q.requires_grad


def test_optimizer_state_dict_from_torch(tmp_path):
    m = _torch_model()
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    m(torch.randn(2, 2, 4, 4)).sum().backward()
    opt.step()
    torch.save(opt.state_dict(), str(tmp_path / "opt.pt"))
    sd = tn.load(str(tmp_path / "opt.pt"))
    want = opt.state_dict()
    assert sd["param_groups"] == want["param_groups"]
    assert sorted(sd["state"]) == sorted(want["state"])
    for i, st in want["state"].items():
        for k, v in st.items():
            _same(sd["state"][i][k], v)


def _zip(records):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in records:
            z.writestr(name, data)
    return buf.getvalue()


def test_hostile_pickles_are_refused(tmp_path):
    marker = tmp_path / "pwned"
    cmd = f"touch {marker}".encode()
    evil = b"\x80\x02cposix\nsystem\nX" + struct.pack("<I", len(cmd)) + cmd + b"\x85R."
    path = tmp_path / "evil.pt"
    path.write_bytes(_zip([("archive/data.pkl", evil), ("archive/version", b"3\n")]))
    with pytest.raises(pickle.UnpicklingError, match="refuses the global 'posix.system'"):
        tn.load(str(path))
    with pytest.raises(RuntimeError, match="weights_only=False"):
        tn.load(str(path), weights_only=True)
    assert _C.lib.tn_load_pt(str(path).encode()) is None
    assert "refusing the global 'posix.system'" in _C.lib.tn_last_error().decode()
    assert not marker.exists()
    # builtins.eval through STACK_GLOBAL; a tensor's state set by BUILD
    ev = b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93\x8c\x04quit\x85R."
    with pytest.raises(pickle.UnpicklingError, match="builtins.eval"):
        tn.load(io.BytesIO(_zip([("archive/data.pkl", ev), ("archive/version", b"3\n")])))
    buf = io.BytesIO()
    torch.save(torch.ones(2), buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        recs = [(n, z.read(n)) for n in z.namelist()]
    pkl_name = [n for n, _ in recs if n.endswith("data.pkl")][0]
    pkl = dict(recs)[pkl_name]
    assert pkl.endswith(b".")
    build = pkl[:-1] + b"}X\x04\x00\x00\x00_ptrK\x07sb."         # tensor._ptr = 7: a crash if it were allowed
    recs = [(n, build if n == pkl_name else d) for n, d in recs]
    with pytest.raises(pickle.UnpicklingError, match="BUILD"):
        tn.load(io.BytesIO(_zip(recs)))


def test_damaged_files_raise(tmp_path):
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "n": torch.tensor(3)}, buf)
    data = buf.getvalue()
    for n in list(range(0, 200)) + list(range(200, len(data), 13)):
        with pytest.raises(RuntimeError):
            tn.load(io.BytesIO(data[:n]))
        cut = tmp_path / "cut.pt"
        cut.write_bytes(data[:n])
        assert _C.lib.tn_load_pt(str(cut).encode()) is None
    flipped = bytearray(data)
    h = data.index(b"PK\x03\x04")                 # the first entry is data.pkl: its data starts after the local header
    start = h + 30 + struct.unpack("<H", data[h + 26:h + 28])[0] + struct.unpack("<H", data[h + 28:h + 30])[0]
    assert data[start:start + 2] == b"\x80\x02"
    for k in range(start, start + 60):       # inside the stored pickle: the CRC-32 refuses it
        flipped[k] ^= 0x20
        with pytest.raises(RuntimeError):
            tn.load(io.BytesIO(bytes(flipped)))
        flipped[k] ^= 0x20


def test_format_follows_the_name_and_the_bytes(tmp_path):
    obj = {"w": tn.ones(2, 3)}
    tn.save(obj, str(tmp_path / "a.safetensors"))
    tn.save(obj, str(tmp_path / "a.pt"))
    tn.save(obj, str(tmp_path / "a.bin"))
    st = (tmp_path / "a.safetensors").read_bytes()
    assert st[8:9] == b"{" and struct.unpack("<Q", st[:8])[0] < len(st)
    assert (tmp_path / "a.pt").read_bytes()[:4] == b"PK\x03\x04" == (tmp_path / "a.bin").read_bytes()[:4]
    assert torch.load(str(tmp_path / "a.bin"))["w"].tolist() == [[1.0] * 3] * 2
    # load goes by the bytes: a safetensors file under a .pt name still loads as what it is
    os.rename(tmp_path / "a.safetensors", tmp_path / "renamed.pt")
    assert tn.load(str(tmp_path / "renamed.pt"))["w"].tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="this is a safetensors file"):
        if not _C.lib.tn_load_pt(str(tmp_path / "renamed.pt").encode()):
            raise RuntimeError(_C.lib.tn_last_error().decode())
    # other kinds say what they are
    legacy = tmp_path / "legacy.pt"
    torch.save({"a": torch.ones(2)}, str(legacy), _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy format from before 1.6"):
        tn.load(str(legacy))
    (tmp_path / "x.gz").write_bytes(gzip.compress(b"abc"))
    with pytest.raises(RuntimeError, match="a gzip file"):
        tn.load(str(tmp_path / "x.gz"))
    (tmp_path / "x.txt").write_bytes(b"hello, not a checkpoint")
    with pytest.raises(RuntimeError, match="not a PyTorch zip file nor a safetensors file"):
        tn.load(str(tmp_path / "x.txt"))
    (tmp_path / "x.zip").write_bytes(_zip([("readme.txt", b"hi")]))
    with pytest.raises(RuntimeError, match="not a PyTorch file"):
        tn.load(str(tmp_path / "x.zip"))
    with pytest.raises(RuntimeError, match="legacy"):
        tn.save(obj, str(tmp_path / "l.pt"), _use_new_zipfile_serialization=False)
    # a failed save leaves the old file and no temporary
    with pytest.raises(TypeError):
        tn.save({"f": lambda: 0}, str(tmp_path / "a.pt"))
    assert tn.load(str(tmp_path / "a.pt"))["w"].shape == (2, 3)
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == []
