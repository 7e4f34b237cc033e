"""pytorch/examples' programs (bindings/python/examples, changed only in their imports:
tools/port_upstream.py writes them from a pytorch/examples checkout; their text is not kept in
this repository, so the tests that run one skip when it is not ported) run briefly, through their own flags, under the package and again under PyTorch 1.13 (when it
is installed) with the same seed: the first loss each prints must be PyTorch's to 1e-5
(relative), and the loss must fall.

The PyTorch run is the same file with its imports turned back (``import tensor as torch``
-> ``import torch``, ``tensor.vision`` -> ``torchvision``). What 1.13 lacks of what the
2025 programs call is filled in that run only: ``torch.accelerator`` (is_available() is
False), ``torch.serialization.safe_globals`` (a no-op: 1.13's torch.load has no
allow-list), and torchvision (Debian ships none: tests/_torchvision_standin.py does what
tensor.vision does, with torch). matplotlib, which time_sequence_prediction only plots
with, is a stub in both runs when it is not installed; with NumPy 1 (Debian's),
``np.array(x, copy=None)`` (NumPy 2, in siamese_network) is given NumPy 1's copy=False in
both runs.

Data: a small MNIST-format set written here (class-dependent blobs, so the loss can fall)
in torchvision's layout; a small text corpus for word_language_model (wikitext-2 is not
in the checkout); a small synthetic graph in Cora's file format for gat (Cora cannot be
fetched offline).

Run:  make lib/libtensor.so && python3 tools/port_upstream.py examples <pytorch/examples checkout> &&
      python3 -m pytest -q bindings/python/tests/test_examples_pt.py
"""
import math
import os
import re
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "examples"))

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

# the child's first lines: stubs, then the program as __main__ with its own argv
PRELUDE = textwrap.dedent('''
    import os, runpy, sys, types
    backend, script = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        class _Any(types.ModuleType):
            def __getattr__(self, name):
                return lambda *a, **k: None
        sys.modules["matplotlib"] = _Any("matplotlib")
        sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"] = _Any("matplotlib.pyplot")
    import numpy
    if int(numpy.__version__.split(".")[0]) < 2:
        _array = numpy.array       # NumPy 2's copy=None (copy only if needed) is NumPy 1's copy=False
        numpy.array = lambda *a, copy=True, **k: _array(*a, copy=False if copy is None else copy, **k)
    if backend == "torch":
        import contextlib, torch, torch.serialization
        sys.path.insert(0, {here!r})
        import _torchvision_standin
        _torchvision_standin.install()
        if not hasattr(torch, "accelerator"):
            torch.accelerator = types.SimpleNamespace(is_available=lambda: False, current_accelerator=lambda: None)
        if not hasattr(torch.serialization, "safe_globals"):
            torch.serialization.safe_globals = lambda globs: contextlib.nullcontext()
    else:
        sys.path.insert(0, {pkg!r})
        import tensor as torch
    import random
    random.seed(0)              # siamese_network draws its pairs with Python's random, unseeded
    torch.manual_seed(0)        # for the programs that draw before seeding (regression seeds nothing)
    runpy.run_path(script, run_name="__main__")
''').format(here=HERE, pkg=os.path.dirname(HERE))


def to_torch_source(text):
    """The example's text with its imports turned back to PyTorch's."""
    out = []
    for line in text.splitlines(True):
        s = line.lstrip()
        if s.startswith("import ") or s.startswith("from "):
            line = line.replace("import tensor.vision as torchvision", "import torchvision")
            line = line.replace("import tensor as torch", "import torch")
            line = re.sub(r"\btensor\.vision\b", "torchvision", line)
            line = re.sub(r"\btensor\b", "torch", line)
        out.append(line)
    return "".join(out)


def test_to_torch_source_undoes_the_port():
    ported = ("import os, sys  # noqa: E401\nimport tensor as torch\nimport tensor.nn as nn\n"
              "from tensor.vision import datasets\nimport tensor.vision as torchvision\n"
              "from tensor.nn import functional as F\nx = tensor_like(torch.tensor(1))\n")
    assert to_torch_source(ported) == ("import os, sys  # noqa: E401\nimport torch\nimport torch.nn as nn\n"
                                       "from torchvision import datasets\nimport torchvision\n"
                                       "from torch.nn import functional as F\nx = tensor_like(torch.tensor(1))\n")


# sha256 of pytorch/examples' files at commit 77f55b9 (github.com/pytorch/examples,
# blob <upstream path>): each port, its imports turned back and its header (the comment
# naming the source and the two sys.path lines) removed, must be that file byte for byte
UPSTREAM = {
    "dcgan.py": ("dcgan/main.py", "4f6aef3527822a32bcca366e336e941a67d04081f66f568cc24a0a642b5f9555"),
    "gat.py": ("gat/main.py", "9496f0ab2aa58666129b2edda64c08c6d5439c9a0e96448ee1456d121447c167"),
    "mnist_main.py": ("mnist/main.py", "30a3359d1911d2d859dd090ce20be7ed132a33f508dc389f40366010b3e9ecc8"),
    "mnist_forward_forward.py": ("mnist_forward_forward/main.py",
                                 "564b744cfaaf3b9cf5107526753cc098120aada8c187c852fa5fe0f57ef45341"),
    "mnist_hogwild/main.py": ("mnist_hogwild/main.py", "ae3d2ccedb48f803176810ff5f4badef9a4a9040d6f1f10a5f5d30312185c865"),
    "mnist_hogwild/train.py": ("mnist_hogwild/train.py",
                               "f0bf273c747e4e9e2cdb96b459880d38b15d66ea2c57bde7037a1defeb00c8d7"),
    "mnist_rnn.py": ("mnist_rnn/main.py", "ebd462cfda1fc8ace2160e8a99e6f97125802e645f924c049ed5e63a0666b019"),
    "regression.py": ("regression/main.py", "87ba43405ca6df6ef1e24e6ee85bfb0cfff95df3bbaf5794d4662308184a90a0"),
    "siamese_network.py": ("siamese_network/main.py", "3d02a5162bfade18f66fc43abcbfe7e23091d626a1e3a71bb782f65a156c0d4e"),
    "time_sequence_prediction/generate_sine_wave.py": (
        "time_sequence_prediction/generate_sine_wave.py", "629c758dd5edd5695f75809978596ce07176bc45cc28d95161c9348277cb1718"),
    "time_sequence_prediction/train.py": ("time_sequence_prediction/train.py",
                                          "3a5d6603cecf7bbf76f96a515dc6c9377849adeefe783edaf6f661bd02e80330"),
    "vae.py": ("vae/main.py", "366116e8252ac68ef1f180cce0b3c017f5a957595d863c8d4904210a80cdab6d"),
    "word_language_model/data.py": ("word_language_model/data.py",
                                    "15784815a6bd18e9b25eadf6ae049915f88d4fb8faebeba9d83ae6ec8e19883d"),
    "word_language_model/generate.py": ("word_language_model/generate.py",
                                        "32ea1e204619ae0e15d2f67365bccbf39805099c5f16a7323c9baa964e951d49"),
    "word_language_model/main.py": ("word_language_model/main.py",
                                    "391de12bb7c6e07dbb105d47d017632bf80c01d2e5b25adbf83da9cdcdd5a862"),
    "word_language_model/model.py": ("word_language_model/model.py",
                                     "e4451a33e9b16953004bc639d736d14f42a2b21f2939ccabe4cff10d3c40b74c"),
}


HOW_TO_PORT = "python3 tools/port_upstream.py examples <pytorch/examples checkout> writes bindings/python/examples"


def port_path(port):
    """examples/<port>, or a skip saying how to write it when it is not ported here."""
    path = os.path.join(EXAMPLES, port)
    if not os.path.isfile(path):
        pytest.skip(f"{port} is not ported here: {HOW_TO_PORT}")
    return path


def upstream_text(port):
    """The port's text as pytorch/examples has it: imports turned back, header removed."""
    with open(port_path(port)) as f:
        lines = to_torch_source(f.read()).splitlines(True)
    start = next(k for k, ln in enumerate(lines) if ln.startswith("# pytorch/examples "))
    end = start
    while lines[end].startswith("#"):
        end += 1
    assert lines[end].startswith("import os, sys  # noqa") and lines[end + 1].startswith("sys.path.insert(0, "), port
    return "".join(lines[:start] + lines[end + 2:])


@pytest.mark.parametrize("port", sorted(UPSTREAM))
def test_port_is_the_upstream_file_ex20(port):
    """"unchanged": only the imports (and the path header) differ from pytorch/examples"""
    import hashlib
    upstream, digest = UPSTREAM[port]
    with open(port_path(port)) as f:
        assert f"# pytorch/examples {upstream} (commit 77f55b9" in f.read()
    assert hashlib.sha256(upstream_text(port).encode()).hexdigest() == digest, \
        f"{port} differs from pytorch/examples' {upstream} beyond its imports"


def _tool():
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
    import port_upstream
    return port_upstream


def test_port_tool_pins_the_files_checked_here():
    """tools/port_upstream.py examples writes each port of this table from its upstream file at 77f55b9."""
    pu = _tool()
    assert pu.EXAMPLES_COMMIT.startswith("77f55b9")
    assert {p: up for p, (up, _) in pu.EXAMPLES.items()} == {p: up for p, (up, _) in UPSTREAM.items()}


def test_port_tool_examples_header_and_dotted_imports(tmp_path):
    """The examples' header goes at the top, below a #!, a coding line and from __future__;
    ``import torch.X`` is ported only where the file binds ``torch`` itself; the header's
    sys.path line climbs to bindings/python from the port's folder. Ported and turned back,
    the text is the source's, header removed (what test_port_is_the_upstream_file_ex20 checks)."""
    pu = _tool()
    u = pu.SETS["examples"]
    src = ("#!/usr/bin/env python\n# coding: utf-8\nfrom __future__ import print_function\n# a comment\n"
           "import argparse\nimport torch\nimport torch.nn.parallel\nimport torch.utils.data  # loaders\n"
           "from torchvision import datasets\n")
    out = pu.port(src, u.header("sub/x.py", "x/main.py", pu.EXAMPLES_COMMIT, "# Its data: none.\n"), at_top=True)
    lines = out.splitlines()
    assert lines[:3] == ["#!/usr/bin/env python", "# coding: utf-8", "from __future__ import print_function"]
    assert lines[3] == "# pytorch/examples x/main.py (commit 77f55b9, August 2025), changed only in its imports:"
    assert lines[7] == "# Its data: none."
    assert lines[9] == 'sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))'
    assert lines[10:] == ["# a comment", "import argparse", "import tensor as torch", "import tensor.nn.parallel",
                          "import tensor.utils.data  # loaders", "from tensor.vision import datasets"]
    assert to_torch_source(out).replace("".join(out.splitlines(True)[3:10]), "") == src
    assert "(__file__)), \"..\"))" in u.header("x.py", "x/main.py", pu.EXAMPLES_COMMIT)
    with pytest.raises(ValueError, match="does not port"):        # nothing would bind `torch`
        pu.port("import torch.nn.parallel\n", "# h\n", at_top=True)
    with pytest.raises(ValueError, match="no line"):
        pu.port("#!/bin/python\n", "# h\n", at_top=True)
    # a plain folder holding the upstream files stands for a checkout; absent files are reported
    (tmp_path / "regression").mkdir()
    (tmp_path / "regression" / "main.py").write_text("import torch\nprint(torch.ones(1))\n")
    missing = pu.port_set(u, str(tmp_path), str(tmp_path / "out"))
    assert sorted(missing) == sorted(set(UPSTREAM) - {"regression.py"})
    assert (tmp_path / "out" / "regression.py").read_text().endswith("import tensor as torch\nprint(torch.ones(1))\n")


def run(backend, script, args, cwd, timeout=240, env=None):
    """Runs examples/<script> with args in cwd under backend ("tensor" or "torch"); skips when
    it is not ported here."""
    path = port_path(script)
    if backend == "torch":
        src_dir = os.path.join(os.path.dirname(cwd), "torch_src", os.path.dirname(script))
        os.makedirs(src_dir, exist_ok=True)
        for name in os.listdir(os.path.dirname(path)):     # the program's sibling modules too
            if name.endswith(".py"):
                with open(os.path.join(os.path.dirname(path), name)) as f:
                    text = f.read()
                with open(os.path.join(src_dir, name), "w") as f:
                    f.write(to_torch_source(text))
        path = os.path.join(src_dir, os.path.basename(script))
        # processes the program spawns (mnist_hogwild) import it afresh, without the prelude:
        # a `torchvision` package on their path installs the stand-in there too
        shim = os.path.join(os.path.dirname(cwd), "torch_shim", "torchvision")
        os.makedirs(shim, exist_ok=True)
        with open(os.path.join(shim, "__init__.py"), "w") as f:
            f.write("import _torchvision_standin\n_torchvision_standin.install()\n")
        env = dict(env or {}, PYTHONPATH=os.pathsep.join([os.path.dirname(shim), HERE]))
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", **(env or {}))
    r = subprocess.run([sys.executable, "-c", PRELUDE, backend, path] + list(args), cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{script} under {backend} failed:\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
    return r.stdout


def losses(out, pattern):
    found = [float(m) for m in re.findall(pattern, out)]
    assert found, f"no loss matching {pattern!r} in:\n{out[-3000:]}"
    return found


def check(tmp_path, script, args, pattern, falls=True, rel=1e-5, env=None):
    """Runs both; asserts the first loss agrees and (falls) that the last is below the first."""
    work = tmp_path / "work"
    ours = losses(run("tensor", script, args, str(work), env=env), pattern)
    if falls:
        assert ours[-1] < ours[0], f"{script}: the loss did not fall: {ours}"
    if HAVE_TORCH:
        theirs = losses(run("torch", script, args, str(work), env=env), pattern)
        assert abs(ours[0] - theirs[0]) <= rel * abs(theirs[0]), \
            f"{script}: first loss {ours[0]} here, {theirs[0]} under PyTorch ({ours[:4]} vs {theirs[:4]})"
    return ours


# ------------------------------------------------------------------------------- the data
def write_idx(path, a):
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, 0x08, a.ndim))
        f.write(struct.pack(">" + "I" * a.ndim, *a.shape))
        f.write(a.astype(np.uint8).tobytes())


def mnist_data(root, n_train, n_test, seed=0, balanced=False):
    """root/MNIST/raw with MNIST's four files: noise plus a block whose place is the class;
    balanced: every class as often (siamese_network needs two images of each class)."""
    d = os.path.join(root, "MNIST", "raw")
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(seed)
    for split, n in (("train", n_train), ("t10k", n_test)):
        y = rng.permutation(np.arange(n) % 10) if balanced else rng.randint(0, 10, n)
        x = rng.randint(0, 60, (n, 28, 28))
        for i in range(n):
            x[i, 2 + 2 * y[i]:8 + 2 * y[i], 4 + y[i]:12 + y[i]] += 180
        write_idx(os.path.join(d, f"{split}-images-idx3-ubyte"), np.clip(x, 0, 255))
        write_idx(os.path.join(d, f"{split}-labels-idx1-ubyte"), y)


@pytest.fixture
def mnist_dirs(tmp_path):
    """tmp/work (the working directory) with MNIST at ../data (most examples) and ./data."""
    (tmp_path / "work").mkdir()
    mnist_data(str(tmp_path / "data"), 256, 128)
    os.symlink(tmp_path / "data", tmp_path / "work" / "data")
    return tmp_path


# ------------------------------------------------------------------------------- the programs
TRAIN_LOSS = r"Loss: ([-\d.]+)"


def test_mnist_main(mnist_dirs):
    # the CNN with Dropout (masks drawn as PyTorch draws them); tests/test_vision.py runs it alone
    check(mnist_dirs, "mnist_main.py", ["--epochs", "1", "--batch-size", "32", "--test-batch-size", "64",
                                        "--log-interval", "2"], TRAIN_LOSS)


def test_mnist_rnn(mnist_dirs):
    # Dropout2d's masks are drawn from the generator as PyTorch draws them (bernoulli_)
    check(mnist_dirs, "mnist_rnn.py", ["--epochs", "1", "--batch-size", "32", "--test-batch-size", "64",
                                       "--log-interval", "2"], TRAIN_LOSS)


def test_mnist_forward_forward(mnist_dirs):
    check(mnist_dirs, "mnist_forward_forward.py", ["--epochs", "15", "--train_size", "128", "--test_size", "64",
                                                   "--log-interval", "5"], r"Loss:\s+([-\d.]+)")


# Each process prints a line as two writes to the shared pipe, its text and then "\n", so
# two processes' lines can run together ("...Loss: 2.291045106\tTrain..."): the loss is
# matched by its fixed six decimals, not by the line's end.
HOGWILD_LOSS = r"(\d+)\tTrain Epoch: \d+ \[\d+/\d+ \(\d+%\)\]\tLoss: (\d+\.\d{6})"
HOGWILD_TEST = r"Test set: Average loss: ([\d.]+), Accuracy: (\d+)/(\d+)"


def test_mnist_hogwild(mnist_dirs):
    """mnist_hogwild (main.py and train.py): the model's parameters in shared memory,
    trained by --num-processes processes started with the 'spawn' method (each imports the
    program afresh), without locks. With one process the run is deterministic: every
    printed loss and the test line must be PyTorch's to 1e-5 (losses print 6 decimals).
    With two, the processes interleave their updates as the scheduler runs them: each
    process's first loss is computed before any update lands only for the first batch of
    rank 0 at best, so what is checked is that both trained (each printed its lines, from
    its own pid), the test ran on the shared, trained model, and it beats chance."""
    args = ["--epochs", "1", "--batch-size", "32", "--log-interval", "2"]
    work = str(mnist_dirs / "work")
    ours = run("tensor", "mnist_hogwild/main.py", args + ["--num-processes", "1"], work)
    mine = [float(v) for _, v in re.findall(HOGWILD_LOSS, ours)]
    assert len(mine) == 4 and mine[-1] < mine[0], ours
    if HAVE_TORCH:
        theirs_out = run("torch", "mnist_hogwild/main.py", args + ["--num-processes", "1"], work)
        theirs = [float(v) for _, v in re.findall(HOGWILD_LOSS, theirs_out)]
        assert np.allclose(mine, theirs, rtol=1e-5, atol=1e-6), (mine, theirs)
        a, b = (re.search(HOGWILD_TEST, o).groups() for o in (ours, theirs_out))
        assert abs(float(a[0]) - float(b[0])) <= 1e-4 and a[1:] == b[1:], (a, b)
    two = run("tensor", "mnist_hogwild/main.py", args + ["--num-processes", "2", "--lr", "0.05"], work)
    pids = [p for p, _ in re.findall(HOGWILD_LOSS, two)]
    assert len(set(pids)) == 2 and all(pids.count(p) == 4 for p in set(pids)), two
    assert os.getpid() not in {int(p) for p in pids}
    loss, correct, total = re.search(HOGWILD_TEST, two).groups()
    assert int(total) == 128 and int(correct) > 128 // 10 + 13, two   # chance is 1/10


def test_regression(tmp_path):
    """regression prints one loss, its last: the first batch's loss below 1e-3, after ~830
    SGD steps on fresh torch.randn(32) batches. With the same seed it runs PyTorch's
    trajectory step for step, so that loss must be PyTorch's to 1e-5 (check()'s rule; in
    fact the same bits, after the same number of batches): the batches are PyTorch's
    (normal_fill_16_AVX2, src/core/rng.c), the fit's [32, 4] @ [4, 1] is (one FMA chain, as
    OpenBLAS), x ** 4 is (SLEEF's powf_u10 on each 16, src/ops/kernels.c) and the float32
    sums are (the loss's mean and the bias gradient: cascade_sum's order, src/ops/reduce.c).
    Also: the target polynomial (randn of 4 and 1 elements) exactly, and each learned
    coefficient within 0.3 of the target."""
    (tmp_path / "work").mkdir()
    ours = run("tensor", "regression.py", [], str(tmp_path / "work"))
    outs = [ours]
    loss = losses(ours, r"Loss: ([-\d.]+) after")
    assert loss[0] < 1e-3, loss
    if HAVE_TORCH:
        theirs = run("torch", "regression.py", [], str(tmp_path / "work"))
        outs.append(theirs)
        ref = losses(theirs, r"Loss: ([-\d.]+) after")
        assert abs(loss[0] - ref[0]) <= 1e-5 * abs(ref[0]), \
            f"regression: last loss {loss[0]} here, {ref[0]} under PyTorch ({ours[:200]!r} vs {theirs[:200]!r})"
        assert re.search(r"after (\d+) batches", ours).group(1) == re.search(r"after (\d+) batches", theirs).group(1)
    for out in outs:
        learned, actual = ([float(v) for v in re.findall(r"[-+][\d.]+", re.search(what + r" function:.*", out).group(0))]
                           for what in ("Learned", "Actual"))
        assert np.allclose(learned, actual, atol=0.3), (learned, actual)
    if HAVE_TORCH:
        for what in ("Actual", "Learned"):
            assert re.search(what + r" function:.*", outs[0]).group(0) == re.search(what + r" function:.*", outs[1]).group(0)


def test_vae(mnist_dirs):
    (mnist_dirs / "work" / "results").mkdir()
    check(mnist_dirs, "vae.py", ["--epochs", "1", "--batch-size", "32", "--log-interval", "2"], TRAIN_LOSS)


def test_time_sequence_prediction(tmp_path):
    """generate_sine_wave.py writes traindata.pt (a NumPy array, pickled by torch.save:
    PyTorch reads ours); train.py loads it with torch.load, which PyTorch >= 2.6 (and so
    the package) refuses by default for NumPy's globals: both runs set PyTorch's
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 (1.13 ignores it). The training run uses the same
    sine waves 100 steps long instead of 1000 (the generator's formula, written here; the
    LSTM over 1000 steps takes minutes here), one LBFGS step of 20 evaluations, each loss
    printed in full: the first must be PyTorch's to 1e-5, and they must fall."""
    work = tmp_path / "work"
    work.mkdir()
    env = {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
    run("tensor", "time_sequence_prediction/generate_sine_wave.py", [], str(work))
    if HAVE_TORCH:
        import torch as pt
        full = pt.load(str(work / "traindata.pt"))
        assert isinstance(full, np.ndarray) and full.shape == (100, 1000) and full.dtype == np.float64
    rng = np.random.RandomState(2)
    x = np.empty((100, 100), "int64")
    x[:] = np.array(range(100)) + rng.randint(-80, 80, 100).reshape(100, 1)
    np.save(str(work / "short.npy"), np.sin(x / 1.0 / 20).astype("float64"))
    import tensor as tn
    tn.save(np.load(str(work / "short.npy")), str(work / "traindata.pt"))
    out = check(tmp_path, "time_sequence_prediction/train.py", ["--steps", "1"], r"(?m)^loss: ([-\d.e]+)$", env=env)
    assert len(out) >= 10 and min(out) < 0.1 * out[0]


DCGAN_LINE = r"(?m)^\[\d+/\d+\]\[\d+/\d+\] Loss_D: .*$"


def dcgan(tmp_path, dataroot, extra):
    """dcgan prints each batch's losses and D outputs with 4 decimals: the first line must
    be PyTorch's, character for character (so Loss_D to 5e-5, and the rest); Loss_D must
    fall. Small networks (--ngf/--ndf/--nz), the 64x64 images its layers need (Resize)."""
    args = ["--dataset", "mnist", "--dataroot", dataroot, "--workers", "0", "--batchSize", "16", "--manualSeed", "1",
            "--ngf", "8", "--ndf", "8", "--nz", "16", "--outf", "out"] + extra
    ours = run("tensor", "dcgan.py", args, str(tmp_path / "work"))
    lines = re.findall(DCGAN_LINE, ours)
    loss_d = [float(v) for v in re.findall(r"Loss_D: ([\d.]+)", ours)]
    px = read_png(tmp_path / "work" / "out" / "real_samples.png")
    assert px.shape == (2 + 2 * (64 + 2), 2 + 8 * (64 + 2), 3)      # 16 images, 8 a row, padding 2
    assert (tmp_path / "work" / "out" / "netG_epoch_0.pth").is_file()
    if HAVE_TORCH:
        theirs = re.findall(DCGAN_LINE, run("torch", "dcgan.py", args, str(tmp_path / "work")))
        assert lines[0] == theirs[0]
    return loss_d


def test_dcgan(mnist_dirs):
    loss_d = dcgan(mnist_dirs, "../data", ["--niter", "1"])
    assert len(loss_d) == 16 and loss_d[-1] < 0.7 * loss_d[0], loss_d


FASHION = os.path.join(HERE, "..", "..", "..", "data", "fashion-mnist")


@pytest.mark.skipif(not os.path.isfile(os.path.join(FASHION, "train-images-idx3-ubyte")),
                    reason="data/fashion-mnist is absent (tools/fetch_fashion_mnist.sh fetches it)")
def test_dcgan_fashion_mnist(tmp_path):
    """--dataset mnist reads MNIST's files from --dataroot itself too (as tensor.vision's
    MNIST looks there), so data/fashion-mnist trains it on Fashion-MNIST: one batch."""
    (tmp_path / "work").mkdir()
    dcgan(tmp_path, os.path.abspath(FASHION), ["--dry-run"])


def cora_like(d, nodes=1700, features=48, classes=7, seed=0):
    """d/cora.content ("<id> <0/1 features...> <class name>" a line) and d/cora.cites
    ("<cited id> <citing id>"): Cora's format, with a made-up graph (Cora itself cannot be
    fetched here): the features and 80 % of the edges follow the class, so it can be learnt.
    gat.py takes the first 1600 shuffled nodes for test and validation, the rest to train."""
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, classes, nodes)
    ids = rng.choice(np.arange(1000, 10 ** 6), nodes, replace=False)
    names = ["Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
             "Reinforcement_Learning", "Rule_Learning", "Theory"]
    width = features // classes
    with open(os.path.join(d, "cora.content"), "w") as f:
        for i in range(nodes):
            p = np.full(features, 0.03)
            p[labels[i] * width:(labels[i] + 1) * width] = 0.4
            feat = (rng.rand(features) < p).astype(int)
            f.write("\t".join([str(ids[i])] + [str(v) for v in feat] + [names[labels[i]]]) + "\n")
    with open(os.path.join(d, "cora.cites"), "w") as f:
        for _ in range(4 * nodes):
            a = rng.randint(nodes)
            b = rng.choice(np.flatnonzero(labels == labels[a])) if rng.rand() < 0.8 else rng.randint(nodes)
            if a != b:
                f.write(f"{ids[a]}\t{ids[b]}\n")


GAT_LINE = r"(?m)^Epoch: \d+ \([\d.]+s\) (loss_train: .*)$"


def test_gat(tmp_path):
    """gat prints, each --val-every epochs, the losses and accuracies after the step with 4
    decimals: each line must be PyTorch's character for character (dropout 0.6, the
    default, is on: its masks are PyTorch's draws); the training loss must fall. Its
    sparse adjacency (torch.sparse_coo_tensor, to_sparse, sparse @ dense, eye + sparse)
    goes through tensor.sparse."""
    (tmp_path / "work").mkdir()
    cora_like(str(tmp_path / "work" / "cora"))
    args = ["--epochs", "4", "--val-every", "1", "--hidden-dim", "16", "--num-heads", "2"]
    ours = run("tensor", "gat.py", args, str(tmp_path / "work"))
    lines = re.findall(GAT_LINE, ours)
    train = [float(v) for v in re.findall(r"loss_train: ([\d.]+)", ours)]
    assert len(lines) == 4 and train[-1] < train[0], ours
    assert "Test set results: loss" in ours
    if HAVE_TORCH:
        assert lines == re.findall(GAT_LINE, run("torch", "gat.py", args, str(tmp_path / "work")))


def text_corpus(d, source=os.path.join(HERE, "..", "..", "..", "README.md")):
    """d/{train,valid,test}.txt (wikitext-2's layout) from source (this checkout's README.md):
    every tenth line valid, the next test, the rest train (wikitext-2 itself is not here)."""
    os.makedirs(d, exist_ok=True)
    with open(source, encoding="utf8", errors="replace") as f:
        lines = [ln for ln in f if ln.strip()]
    parts = {"train": [], "valid": [], "test": []}
    for i, ln in enumerate(lines):
        parts["valid" if i % 10 == 8 else "test" if i % 10 == 9 else "train"].append(" ".join(ln.split()) + "\n")
    for k, v in parts.items():
        with open(os.path.join(d, k + ".txt"), "w", encoding="utf8") as f:
            f.writelines(v)


# "| epoch   1 |    10/  123 batches | lr 20.00 | ms/batch 41.90 | loss  7.45 | ppl  1721.77"
WLM_LOSS = r"\| loss +([\d.]+) \|"
WLM_PPL = r"\| loss +[\d.]+ \| ppl +([\d.]+)"


@pytest.mark.parametrize("model,extra", [("LSTM", []), ("Transformer", ["--nlayers", "1", "--lr", "1"])])
def test_word_language_model(tmp_path, model, extra):
    """It prints its training loss with 2 decimals only, and its perplexity exp(loss) with
    2 decimals (6 to 7 digits): each printed loss must be PyTorch's, and the first
    interval's mean loss, read from its perplexity as ln(ppl), PyTorch's to 1e-5 relative
    (the issue's "first loss printed to 1e-5"; the corpus is this checkout's README, so the
    exact drift between two float32 trainings moves with every README edit). Dropout
    (0.2, the default) is on: its masks are PyTorch's draws. Then the model is saved whole
    (torch.save(model)) and loaded back with torch.load under
    torch.serialization.safe_globals, as the program does."""
    (tmp_path / "work").mkdir()
    text_corpus(str(tmp_path / "work" / "data" / "wikitext-2"))
    args = ["--model", model, "--emsize", "32", "--nhid", "32", "--epochs", "2", "--bptt", "12", "--batch_size", "10",
            "--log-interval", "10"] + extra
    work = tmp_path / "work"
    gen = ["--words", "30", "--log-interval", "10"] + (["--temperature", "0.5"] if model == "LSTM" else [])
    ours = run("tensor", "word_language_model/main.py", args, str(work))
    mine = losses(ours, WLM_LOSS)
    assert mine[-1] < mine[0], mine
    assert "End of training | test loss" in ours
    run("tensor", "word_language_model/generate.py", gen, str(work))    # loads model.pt: the whole model
    text = (work / "generated.txt").read_text()
    assert len(text.split()) == 30
    if HAVE_TORCH:
        out = run("torch", "word_language_model/main.py", args, str(work))
        assert mine == losses(out, WLM_LOSS)
        ppl = [losses(o, WLM_PPL)[0] for o in (ours, out)]
        assert abs(math.log(ppl[0]) - math.log(ppl[1])) <= 1e-5 * math.log(ppl[1]), ppl
        # generate.py samples each word with torch.multinomial(weights, 1) after
        # torch.manual_seed: the race argmax(weights / q), q ~ Exp(1) drawn as PyTorch draws
        # it, so the same trained model writes PyTorch's words
        run("torch", "word_language_model/generate.py", gen, str(work))
        assert (work / "generated.txt").read_text().split() == text.split()


def read_png(path):
    """An 8-bit, filter-0 PNG (as save_image writes) -> uint8 array [H, W, C]."""
    import zlib
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, color = head[0], head[1], head[2], head[3]
    c = {0: 1, 2: 3}[color]
    assert depth == 8
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * c)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(h, w, c)


def test_save_image_and_make_grid(tmp_path):
    """tensor.vision.utils (vae and dcgan write their samples with it): torchvision's grid
    (nrow a row, padding 2 of pad_value, gray repeated to RGB), normalize, and PNG bytes."""
    import tensor as tn
    from tensor.vision.utils import make_grid, save_image
    rng = np.random.RandomState(0)
    x = rng.rand(5, 1, 3, 4).astype(np.float32)
    g = make_grid(tn.from_numpy(x), nrow=2, padding=1, pad_value=0.5)
    want = np.full((3, 3 * 4 + 1, 2 * 5 + 1), 0.5, np.float32)
    for k in range(5):
        r, c = divmod(k, 2)
        want[:, 1 + r * 4:1 + r * 4 + 3, 1 + c * 5:1 + c * 5 + 4] = x[k, 0]
    np.testing.assert_array_equal(g.numpy(), want)
    y = tn.from_numpy(rng.randn(2, 3, 4, 4).astype(np.float32) * 3)
    gn = make_grid(y, normalize=True, padding=0).numpy()
    yn = y.numpy()
    np.testing.assert_allclose(gn[:, :, :4], (yn[0] - yn.min()) / (yn.max() - yn.min()), rtol=1e-5, atol=1e-6)
    ge = make_grid(y, normalize=True, scale_each=True, padding=0).numpy()
    np.testing.assert_allclose(ge[:, :, 4:], (yn[1] - yn[1].min()) / (yn[1].max() - yn[1].min()), rtol=1e-5, atol=1e-6)
    assert make_grid(tn.from_numpy(x[0])).shape == (3, 3, 4)      # one image: no padding
    save_image(tn.from_numpy(x), str(tmp_path / "a.png"), nrow=3)
    px = read_png(tmp_path / "a.png")
    grid = make_grid(tn.from_numpy(x), nrow=3).numpy()
    np.testing.assert_array_equal(px, np.clip(np.floor(grid * 255 + 0.5), 0, 255).astype(np.uint8).transpose(1, 2, 0))
    with pytest.raises(ValueError, match="only PNG"):
        save_image(tn.from_numpy(x), str(tmp_path / "a.jpg"))
    with pytest.raises(ValueError, match="dimensions"):
        make_grid(tn.zeros(1, 1, 1, 1, 1))


# ------------------------------------------------------------------ what the programs needed
def test_save_a_whole_model_and_load_it_with_safe_globals(tmp_path, monkeypatch):
    """torch.save(model) pickles the module (its class, attributes, tensors as storages);
    torch.load refuses its classes unless allowed: safe_globals / add_safe_globals (by
    object), as PyTorch >= 2.6, or TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1."""
    import tensor as tn
    import tensor.serialization as ser
    tn.manual_seed(3)
    m = tn.nn.Sequential(tn.nn.Linear(3, 4), tn.nn.ReLU())
    lstm = tn.nn.LSTM(4, 5)
    x = tn.randn(6, 2, 4)
    y0, _ = lstm(x)                       # the LSTM now caches its C module: not pickled
    p = str(tmp_path / "m.pt")
    tn.save({"seq": m, "lstm": lstm}, p)
    with pytest.raises(ser.WeightsOnlyUnpicklingError, match="refuses the global 'tensor.nn.container.Sequential'.*"
                                                             "add_safe_globals"):
        tn.load(p)
    allowed = [tn.nn.Sequential, tn.nn.modules.linear.Linear, tn.nn.modules.activation.ReLU, tn.nn.modules.rnn.LSTM]
    assert ser.get_safe_globals() == []
    with ser.safe_globals(allowed + [tn.nn.Linear]):          # a duplicate is fine
        got = tn.load(p)
        assert set(ser.get_safe_globals()) == set(allowed)
    assert ser.get_safe_globals() == []
    assert type(got["seq"]) is tn.nn.Sequential and type(got["seq"][0]) is tn.nn.Linear
    assert tn.equal(got["seq"][0].weight, m[0].weight) and got["seq"][0].weight is not m[0].weight
    assert isinstance(got["seq"][0].weight, tn.nn.Parameter) and got["seq"][0].weight.requires_grad
    y1, _ = got["lstm"](x)
    assert tn.equal(y0, y1)
    with pytest.raises(ser.WeightsOnlyUnpicklingError):
        tn.load(p)
    ser.add_safe_globals(allowed[:-1])
    ser.add_safe_globals([(tn.nn.LSTM, "tensor.nn.rnn_modules.LSTM")])   # (object, name) form
    try:
        assert type(tn.load(p)["lstm"]) is tn.nn.LSTM
    finally:
        ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    with pytest.raises(ValueError, match="tuple of length 2"):
        ser.add_safe_globals([(tn.nn.LSTM,)])
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert type(tn.load(p)["seq"]) is tn.nn.Sequential
    with pytest.raises(ser.WeightsOnlyUnpicklingError):
        tn.load(p, weights_only=True)                        # only a load that does not say
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(ser.WeightsOnlyUnpicklingError):
        tn.load(p, weights_only=False)


@pytest.mark.skipif(not HAVE_TORCH, reason="needs PyTorch")
def test_load_numpy_array_file_of_torch(tmp_path, monkeypatch):
    """time_sequence_prediction's traindata.pt: a NumPy array that torch.save pickled.
    PyTorch >= 2.6's default refuses it (numpy's globals); the environment switch loads it."""
    import torch as pt
    import tensor as tn
    import tensor.serialization as ser
    a = np.arange(6.0).reshape(2, 3)
    pt.save(a, str(tmp_path / "a.pt"))
    with pytest.raises(ser.WeightsOnlyUnpicklingError, match="numpy"):
        tn.load(str(tmp_path / "a.pt"))
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "true")
    np.testing.assert_array_equal(tn.load(str(tmp_path / "a.pt")), a)


def test_nn_modules_paths_and_onnx():
    import tensor as tn
    import tensor.nn.modules.transformer as tr
    assert tr.TransformerEncoderLayer is tn.nn.TransformerEncoderLayer
    assert tn.nn.modules.sparse.Embedding is tn.nn.Embedding and tn.nn.modules.dropout.Dropout is tn.nn.Dropout
    assert issubclass(tn.nn.modules.linear.NonDynamicallyQuantizableLinear, tn.nn.Linear)
    assert type(tn.nn.MultiheadAttention(4, 2).out_proj) is tn.nn.modules.linear.NonDynamicallyQuantizableLinear
    if HAVE_TORCH:
        import torch.nn as pnn
        for sub in ("activation", "conv", "linear", "rnn", "sparse", "transformer", "container", "normalization"):
            mod = getattr(pnn.modules, sub)
            theirs = {n for n in dir(mod) if getattr(getattr(mod, n), "__module__", "") == mod.__name__
                      and hasattr(tn.nn, n)}
            assert theirs <= set(dir(getattr(tn.nn.modules, sub))), (sub, theirs - set(dir(getattr(tn.nn.modules, sub))))
    import tensor.onnx
    assert tensor.onnx.is_in_onnx_export() is False   # export itself: test_onnx.py


@pytest.mark.skipif(not HAVE_TORCH, reason="needs PyTorch")
def test_sparse_coo_matches_torch():
    """tensor.sparse (gat's adjacency): construction (NumPy int32 indices, duplicates,
    inferred size), coalesce, to_dense, to_sparse, sparse @ dense, dense + sparse, errors."""
    import torch as pt
    import tensor as tn
    rng = np.random.RandomState(5)
    idx = np.array([[0, 2, 1, 2, 0], [1, 3, 0, 3, 1]], np.int32)
    val = rng.randn(5).astype(np.float32)
    for size in ((3, 4), None):
        a = tn.sparse_coo_tensor(idx, tn.from_numpy(val), *([size] if size else []))
        b = pt.sparse_coo_tensor(idx, pt.from_numpy(val), *([size] if size else []))
        assert a.shape == tuple(b.shape) and a.dtype == tn.float32 and a._nnz() == b._nnz() == 5
        assert a.is_sparse and a.layout is tn.sparse_coo and tn.ones(1).layout is tn.strided
        np.testing.assert_allclose(a.to_dense().numpy(), b.to_dense().numpy(), rtol=1e-6)
        ac, bc = a.coalesce(), b.coalesce()
        assert ac.is_coalesced() and not a.is_coalesced()
        np.testing.assert_array_equal(ac.indices().numpy(), bc.indices().numpy())
        np.testing.assert_allclose(ac.values().numpy(), bc.values().numpy(), rtol=1e-6)
        with pytest.raises(RuntimeError, match="uncoalesced"):
            a.indices()
    # sparse @ dense (a non-contiguous dense operand), 1-D too; dense + sparse is dense
    d = rng.randn(6, 4).astype(np.float32)
    a = tn.sparse_coo_tensor(idx, tn.from_numpy(val), (3, 4))
    b = pt.sparse_coo_tensor(idx, pt.from_numpy(val), (3, 4))
    np.testing.assert_allclose((a @ tn.from_numpy(d).t()[:4]).numpy(), (b @ pt.from_numpy(d).t()[:4]).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tn.sparse.mm(a, tn.from_numpy(d[0])).numpy(), (b @ pt.from_numpy(d[0])).numpy(),
                               rtol=1e-5, atol=1e-6)
    ai = tn.sparse_coo_tensor(idx, tn.ones(5), (3, 4), dtype=tn.int64)
    bi = pt.sparse_coo_tensor(idx, pt.ones(5), (3, 4), dtype=pt.int64)
    s1, s2 = tn.ones(3, 4) + ai, pt.ones(3, 4) + bi
    assert s1.dtype == tn.float32 and str(s2.dtype) == "torch.float32" and not s2.is_sparse
    np.testing.assert_array_equal(s1.numpy(), s2.numpy())
    np.testing.assert_array_equal((ai + ai).to_dense().numpy(), (bi + bi).to_dense().numpy())
    # to_sparse of a dense tensor with zeros
    x = rng.randn(3, 5).astype(np.float32) * (rng.rand(3, 5) < 0.4)
    xs, ps = tn.from_numpy(x).to_sparse(), pt.from_numpy(x).to_sparse()
    np.testing.assert_array_equal(xs.indices().numpy(), ps.indices().numpy())
    np.testing.assert_array_equal(xs.values().numpy(), ps.values().numpy())
    # errors, as PyTorch's
    for bad, msg in (((np.array([[0, 3]]), tn.ones(2), (3,)), "size is inconsistent with indices"),
                     ((np.array([[0, -1]]), tn.ones(2), (3,)), "negative index"),
                     ((np.array([[0, 1]]), tn.ones(3), (3,)), "same nnz"),
                     ((np.array([0, 1]), tn.ones(2), (3,)), "sparse_dim x nnz")):
        with pytest.raises(RuntimeError, match=msg):
            tn.sparse_coo_tensor(*bad)
        with pytest.raises(RuntimeError):
            pt.sparse_coo_tensor(bad[0], pt.ones(bad[1].shape[0]), bad[2])
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ tn.ones(3, 2)
    with pytest.raises(RuntimeError, match="int64"):
        tn.sparse_coo_tensor(tn.zeros(2, 1), tn.ones(1), (2, 2))


def test_siamese_network(tmp_path):
    """siamese_network: torchvision's resnet18 (tensor.vision.models; the PyTorch run uses
    the same file with torch.nn), BCELoss on image pairs drawn with Python's random
    (random.seed(0) in both runs: the program seeds only torch). The first printed loss (6
    decimals) must be PyTorch's to 1e-5. The later ones part from PyTorch's (5.5565 and
    5.5600 at the second batch): layer4's BatchNorm normalises over 8 samples of 1x1, and
    Adadelta's first step (lr 1) divides each gradient by its own magnitude, which turns
    last-bit differences of tiny gradients into visible ones. So "the loss falls" is
    checked over epochs: the second epoch's mean training loss is below the first's."""
    (tmp_path / "work").mkdir()
    mnist_data(str(tmp_path / "data"), 40, 20, balanced=True)
    out = check(tmp_path, "siamese_network.py", ["--epochs", "2", "--batch-size", "8", "--test-batch-size", "20",
                                                 "--log-interval", "1"], TRAIN_LOSS, falls=False)
    assert len(out) == 10 and np.mean(out[5:]) < np.mean(out[:5]), out


def test_resnet_layouts():
    """tensor.vision.models against torchvision's published facts (its parameter counts and
    state-dict names) and, under the same seed, the same file run with torch.nn."""
    import tensor as tn
    import tensor.vision.models as M
    m = M.resnet18()
    assert sum(p.numel() for p in m.parameters()) == 11689512
    keys = list(m.state_dict())
    assert keys[:6] == ["conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var",
                        "bn1.num_batches_tracked"]
    assert "layer2.0.downsample.0.weight" in keys and "layer1.0.downsample.0.weight" not in keys
    assert keys[-2:] == ["fc.weight", "fc.bias"] and len(keys) == 122
    assert sum(p.numel() for p in M.resnet50().parameters()) == 25557032
    assert sum(p.numel() for p in M.resnext50_32x4d().parameters()) == 25028904
    with pytest.raises(RuntimeError, match="cannot be downloaded"):
        M.resnet18(weights="IMAGENET1K_V1")
    x = tn.randn(2, 3, 40, 40)
    assert m(x).shape == (2, 1000)
    b = M.resnet18(zero_init_residual=True)
    assert float(b.layer1[0].bn2.weight.abs().sum()) == 0
    if HAVE_TORCH:
        import torch as pt
        sys.path.insert(0, HERE)
        import _torchvision_standin
        tm = _torchvision_standin._models()
        pt.manual_seed(7)
        theirs = tm.resnet18(num_classes=10)
        tn.manual_seed(7)
        ours = M.resnet18(num_classes=10)
        ours.eval()          # BatchNorm from running statistics (over a batch of 2 at 1x1: ill-conditioned)
        theirs.eval()
        for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
        xi = np.random.RandomState(0).randn(2, 3, 32, 32).astype(np.float32)
        np.testing.assert_allclose(ours(tn.from_numpy(xi)).detach().numpy(),
                                   theirs(pt.from_numpy(xi)).detach().numpy(), rtol=1e-4, atol=1e-5)
