"""Writes the .pt fixtures of tests/test_pt.c with real PyTorch (run from the repository
root: /usr/bin/python3 tests/data/make_pt_fixtures.py). Values are simple formulas the C
test recomputes; every file is a few hundred bytes to a few KiB."""
import collections
import io
import zipfile

import torch

OUT = "tests/data/"


def state():
    w = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4
    return collections.OrderedDict([
        ("w", w), ("wt", w.t()), ("row", w[1]),                       # three views of one storage
        ("d", torch.arange(5, dtype=torch.float64) * 0.5),
        ("i", torch.tensor([-3, 7, 2 ** 40])), ("n", torch.tensor(5)),
        ("b", torch.tensor([True, False])), ("u", torch.tensor([0, 255], dtype=torch.uint8)),
        ("i32", torch.tensor([-1, 2], dtype=torch.int32)),
        ("h", (torch.arange(4) / 2).half()), ("bf", (torch.arange(3) - 1.0).bfloat16()),
        ("e", torch.zeros(0, 3)), ("p", torch.nn.Parameter(torch.ones(2))),
    ])


def zip_with(path, records, compress=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compress) as z:
        for name, data in records:
            z.writestr(name, data)


torch.save(state(), OUT + "pt_state.pt")
torch.save({"model": {"a": torch.ones(2)}, "epoch": 3, "lr": 0.5, "name": "x", "none": None,
            "list": [torch.ones(1), 2]}, OUT + "pt_nested.pt")
# the same archive with deflated entries (zlib's path in the reader)
with zipfile.ZipFile(OUT + "pt_state.pt") as z:
    zip_with(OUT + "pt_deflate.pt", [(i.filename, z.read(i.filename)) for i in z.infolist()], zipfile.ZIP_DEFLATED)
# hostile pickles: a weights file that would run os.system / builtins.eval when unpickled
zip_with(OUT + "pt_hostile_system.pt", [("archive/data.pkl", b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00trueR."),
                                        ("archive/version", b"3\n")])
zip_with(OUT + "pt_hostile_eval.pt", [("archive/data.pkl", b"\x80\x02cbuiltins\neval\nX\x04\x00\x00\x00quitR."),
                                      ("archive/version", b"3\n")])
# a legacy (pre-1.6) file
buf = io.BytesIO()
torch.save({"a": torch.ones(2)}, buf, _use_new_zipfile_serialization=False)
open(OUT + "pt_legacy.pt", "wb").write(buf.getvalue())
