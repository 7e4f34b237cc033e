"""tensor.save / tensor.load safety (issue 18).

A .safetensors file is inert data to every other reader, so tensor.load must not run code
from it unless asked: weights_only=True is the default (as PyTorch >= 2.6), the structure
metadata is plain JSON of the known node kinds (anything else is refused with a
RuntimeError), and a pickled value ("P" node) is unpickled only with weights_only=False.
Saving never destroys what is at the target path when it fails.
"""
import base64
import io
import json
import os
import pickle
import shlex
import struct
import sys
from collections import OrderedDict

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402


class _Hostile:
    """Unpickling this runs a shell command that creates `marker`."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch " + shlex.quote(self.marker),))


def _file_bytes(structure, meta_raw=None):
    """A safetensors file by hand: one F32 tensor "w" = [1, 2] and the structure metadata
    (structure as JSON, or meta_raw as the string itself)."""
    meta = meta_raw if meta_raw is not None else json.dumps(structure)
    header = {"__metadata__": {"tensor.h/structure": meta},
              "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + struct.pack("<2f", 1.0, 2.0)


def _hostile_structure(marker):
    evil = base64.b64encode(pickle.dumps(_Hostile(marker))).decode()
    return {"format": 1, "root": {"O": [["w", {"T": "w"}], ["cfg", {"L": [1, {"D": [["x", {"P": evil}]]}]}]]}}


@pytest.mark.parametrize("how", ["path", "bytesio", "weights_only=True", "weights_only=None"])
def test_hostile_pickle_is_refused_and_not_run(tmp_path, how):
    marker = str(tmp_path / "pwned")
    path = tmp_path / "model.safetensors"
    path.write_bytes(_file_bytes(_hostile_structure(marker)))
    kwargs = {"weights_only": True} if how == "weights_only=True" else {"weights_only": None} if how == "weights_only=None" else {}
    src = io.BytesIO(path.read_bytes()) if how == "bytesio" else str(path)
    with pytest.raises(pickle.UnpicklingError) as info:
        tn.load(src, **kwargs)
    msg = str(info.value)
    assert "weights_only=False" in msg and "cfg.1.x" in msg and "arbitrary code" in msg
    assert isinstance(info.value, RuntimeError)
    assert not os.path.exists(marker)


def test_hostile_pickle_runs_only_when_asked(tmp_path):
    # the payload is real: with the explicit opt-in it runs (which the default prevents)
    marker = str(tmp_path / "ran")
    data = _file_bytes(_hostile_structure(marker))
    with pytest.raises(pickle.UnpicklingError):
        tn.load(io.BytesIO(data))
    assert not os.path.exists(marker)
    out = tn.load(io.BytesIO(data), weights_only=False)
    assert os.path.exists(marker)
    assert out["w"].tolist() == [1.0, 2.0] and out["cfg"][0] == 1 and out["cfg"][1]["x"] == 0


def test_other_readers_see_plain_data(tmp_path):
    # the file is an ordinary safetensors file: its tensors load without the structure
    path = tmp_path / "model.safetensors"
    path.write_bytes(_file_bytes(_hostile_structure(str(tmp_path / "x"))))
    d = tn._C.lib.tn_safetensors_load(os.fsencode(str(path)))
    assert d and tn._C.lib.tn_dict_len(d) == 1
    tn._C.lib.tn_dict_free(d)


@pytest.mark.parametrize("root, what", [
    ({"T": "missing"}, "tensor 'missing' is not in the file"),
    ({"T": 3}, "is not in the file"),
    ({"Q": 1}, "unknown entry kind 'Q'"),
    ({"T": "w", "L": []}, "one-key object"),
    ([1, 2], "one-key object"),
    ({"D": "items"}, "[key, value] pairs"),
    ({"D": [[1]]}, "[key, value] pairs"),
    ({"D": [[True, 1]]}, "str or int keys"),
    ({"D": [[[1], 1]]}, "str or int keys"),
    ({"L": {"a": 1}}, "must be a list"),
    ({"F": "1e5"}, "not a non-finite float"),
    ({"F": "__import__('os')"}, "not a non-finite float"),
])
def test_structure_must_be_known_nodes(root, what):
    with pytest.raises(RuntimeError, match="malformed") as info:
        tn.load(io.BytesIO(_file_bytes({"format": 1, "root": root})))
    assert what in str(info.value)


def test_structure_metadata_errors():
    with pytest.raises(RuntimeError, match="not valid JSON"):
        tn.load(io.BytesIO(_file_bytes(None, meta_raw="{")))
    with pytest.raises(RuntimeError, match="structure format 2 is not known"):
        tn.load(io.BytesIO(_file_bytes({"format": 2, "root": None})))
    with pytest.raises(RuntimeError, match="not known"):
        tn.load(io.BytesIO(_file_bytes(None, meta_raw="[1]")))
    deep = '{"format": 1, "root": ' + '{"L": [' * 5000 + ']}' * 5000 + "}"
    with pytest.raises(RuntimeError, match="nested too deeply|not valid JSON"):
        tn.load(io.BytesIO(_file_bytes(None, meta_raw=deep)))


def test_plain_objects_load_by_default(tmp_path):
    obj = {"model": OrderedDict([("w", tn.ones(2, 3)), ("b", tn.zeros(3))]), "epoch": 3, "lr": 0.5,
           "hist": [float("inf"), float("-inf"), None, True, "text"], "shape": (2, 3), 7: "int key"}
    path = str(tmp_path / "ck.safetensors")
    tn.save(obj, path)
    back = tn.load(path)
    assert isinstance(back["model"], OrderedDict) and back["model"]["w"].tolist() == [[1.0] * 3] * 2
    assert back["epoch"] == 3 and back["lr"] == 0.5 and back["shape"] == (2, 3) and back[7] == "int key"
    assert back["hist"][:2] == [float("inf"), float("-inf")] and back["hist"][2:] == [None, True, "text"]


def test_pickled_values_need_weights_only_false():
    # a set is a plain value PyTorch >= 2.6 loads weights-only (builtins.set is allowed);
    # a Fraction is an object of a class it refuses
    import fractions
    buf = io.BytesIO()
    tn.save({"obj": fractions.Fraction(1, 3), "s": {1, 2}, "w": tn.arange(3)}, buf)
    for kwargs in ({}, {"weights_only": True}):
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
            tn.load(buf, **kwargs)
    buf.seek(0)
    back = tn.load(buf, weights_only=False)
    assert back["obj"] == fractions.Fraction(1, 3) and back["s"] == {1, 2} and back["w"].tolist() == [0, 1, 2]
    buf = io.BytesIO()
    tn.save({"s": {1, 2}, "b": bytearray(b"ab"), "c": 1 + 2j}, buf)
    buf.seek(0)
    assert tn.load(buf) == {"s": {1, 2}, "b": bytearray(b"ab"), "c": 1 + 2j}


def test_save_never_truncates_a_users_tmp_file(tmp_path):
    path = tmp_path / "m.safetensors"
    (tmp_path / "m.safetensors.tmp").write_bytes(b"my notes")
    tn.save({"w": tn.ones(2)}, str(path))
    tn.save({"w": tn.zeros(2)}, str(path))
    assert (tmp_path / "m.safetensors.tmp").read_bytes() == b"my notes"
    assert tn.load(str(path))["w"].tolist() == [0.0, 0.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors", "m.safetensors.tmp"]


def test_failed_save_keeps_the_previous_file(tmp_path):
    path = tmp_path / "m.safetensors"
    tn.save({"w": tn.ones(2)}, str(path))
    before = path.read_bytes()
    with pytest.raises(TypeError):
        tn.save({"w": tn.zeros(2), "f": lambda: 0}, str(path))   # a lambda cannot be stored
    assert path.read_bytes() == before
    # a directory at the target: refused as PyTorch (IsADirectoryError), and left alone
    target = tmp_path / "adir"
    target.mkdir()
    with pytest.raises(IsADirectoryError):
        tn.save({"w": tn.ones(2)}, str(target))
    assert target.is_dir() and list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "m.safetensors"]
