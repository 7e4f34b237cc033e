#!/usr/bin/env python3
"""Ports pytorch/examples' and pytorch/tutorials' programs to the package by their imports alone.

    python3 tools/port_upstream.py examples [SRC]     # -> bindings/python/examples
    python3 tools/port_upstream.py tutorials [SRC]    # -> bindings/python/tutorials

SRC is a git checkout of the upstream repository (default data/pytorch-examples,
data/pytorch-tutorials; a bare clone works too): each file of the set's table is read at
the commit pinned there (``git show <commit>:<prefix><path>``: the versions
test_examples_pt.py and test_tutorials_pt.py know by their sha256). SRC may also be a plain
folder holding <prefix><path> at those versions. Each is written to the set's folder,
changed in two ways only:

- its import lines: ``import torch`` -> ``import tensor as torch``, ``from torch.X import``
  -> ``from tensor.X import``, ``import torchvision`` -> ``import tensor.vision as
  torchvision``, ``torchvision.X`` -> ``tensor.vision.X``; ``import torch.X`` (which binds
  ``torch``) -> ``import tensor.X`` only in a file that also imports ``torch`` itself (that
  line binds the name, this one loads the submodule); nothing else of the text;
- a header (a comment naming the source and its commit, notes of our own on what data the
  program reads, and two lines that put the checkout's package on the path): the
  examples' at the top (after a ``#!``/coding line and ``from __future__``), the
  tutorials' before their first import (after their docstring).

The ports are not kept in this repository: they are the upstream projects' text
(BSD-3-Clause), generated where they are used. The tests check that each port, its
imports turned back and its header removed, is the upstream file byte for byte, and run it
under the package and under PyTorch.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# pytorch/examples at 77f55b9 (August 2025): port path -> (upstream path, notes of our own for its header)
EXAMPLES_COMMIT = "77f55b912142e11fcfdf5b530231fb9c52f181e8"
_MNIST = "# Its data: ../data/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]"
EXAMPLES = {
    "dcgan.py": ("dcgan/main.py",
                 "# Its data (--dataset mnist --dataroot DIR): DIR/MNIST/raw, DIR/MNIST or DIR holding MNIST's IDX"
                 " files\n# (so --dataroot data/fashion-mnist trains on Fashion-MNIST).\n"),
    "gat.py": ("gat/main.py", "# Its data: ./cora/cora.content and ./cora/cora.cites (the Cora citation graph; "
                              "it downloads them when absent).\n"),
    "mnist_forward_forward.py": ("mnist_forward_forward/main.py", "# Its data: ./data/MNIST/raw/{train,t10k}-"
                                 "{images-idx3,labels-idx1}-ubyte[.gz], as torchvision's.\n"),
    "mnist_hogwild/main.py": ("mnist_hogwild/main.py", _MNIST + ", as torchvision's;\n# it trains in "
                              "--num-processes spawned processes (tensor.multiprocessing), train.py beside it.\n"),
    "mnist_hogwild/train.py": ("mnist_hogwild/train.py", ""),
    "mnist_main.py": ("mnist/main.py", _MNIST + ", as torchvision's.\n"),
    "mnist_rnn.py": ("mnist_rnn/main.py", _MNIST + ", as torchvision's.\n"),
    "regression.py": ("regression/main.py", ""),
    "siamese_network.py": ("siamese_network/main.py", _MNIST + ".\n"),
    "time_sequence_prediction/generate_sine_wave.py": ("time_sequence_prediction/generate_sine_wave.py", ""),
    "time_sequence_prediction/train.py": ("time_sequence_prediction/train.py", "# Its data: traindata.pt in the "
                                          "working directory, written by generate_sine_wave.py.\n"),
    "vae.py": ("vae/main.py", _MNIST + "; it writes results/*.png.\n"),
    "word_language_model/data.py": ("word_language_model/data.py", ""),
    "word_language_model/generate.py": ("word_language_model/generate.py", ""),
    "word_language_model/main.py": ("word_language_model/main.py", "# Its data: --data DIR with train.txt, "
                                    "valid.txt, test.txt (wikitext-2's layout; default ./data/wikitext-2).\n"),
    "word_language_model/model.py": ("word_language_model/model.py", ""),
}

# beginner_source/<path> -> the pytorch/tutorials commit it is taken at (the newest version of
# each file the session that chose them could read: a later version may need the package to follow it)
TUTORIALS = {
    "basics/quickstart_tutorial.py": "afcd669d56554c2ef46f2da92edbfaf8c54043ec",
    "basics/tensorqs_tutorial.py": "7a5420a2093171a4560d25d4a19d95aa0ae6d8c7",
    "basics/data_tutorial.py": "f3392fc931972547d1fb231693e5809667346a5e",
    "basics/transforms_tutorial.py": "2aabe77e0363c41b8dbac414a53877cfe24f5a40",
    "basics/buildmodel_tutorial.py": "c53e7d4efc0e39e455c531d21ec7db28ba220214",
    "basics/autogradqs_tutorial.py": "1532c0de875b79f541371438d8d1d08be18f87de",
    "basics/optimization_tutorial.py": "009a87b0ec0b432889e865e55d3ae9e3912c306e",
    "basics/saveloadrun_tutorial.py": "07a339ece661a2b304b8834780470f522eed1e02",
    "blitz/tensor_tutorial.py": "08c4ec986e5eddc66264d3f00f256aafe22d2786",
    "blitz/autograd_tutorial.py": "05f04cb4463d507cc90f891db82d8c2685e14b53",
    "blitz/neural_networks_tutorial.py": "7a017bba463ba73cfd9d48aabc7e05827a680906",
    "blitz/cifar10_tutorial.py": "c53e7d4efc0e39e455c531d21ec7db28ba220214",
    "examples_tensor/polynomial_numpy.py": "06782c92ebe7f6bf491fd4e03446a3c17200914c",
    "examples_tensor/polynomial_tensor.py": "088bc52a76551211d2499b1cca69a677eba59236",
    "examples_autograd/polynomial_autograd.py": "92f11a171bb3f3f6bbd8dfb102c59d67c2385032",
    "examples_autograd/polynomial_custom_function.py": "02ed6c5cf613bbf2b631704eee62033b8bd746ef",
    "examples_nn/polynomial_nn.py": "02d7694195db7543ff85fd72177d1f1adca7784a",
    "examples_nn/polynomial_optim.py": "02d7694195db7543ff85fd72177d1f1adca7784a",
    "examples_nn/polynomial_module.py": "1d189709801e98f5f184af0567c7f06b8b5156c2",
    "examples_nn/dynamic_net.py": "1d189709801e98f5f184af0567c7f06b8b5156c2",
}

IMPORTS_NOTE = """\
# `torch` is tensor (bindings/python), `torchvision` is tensor.vision; the two lines after
# this comment put the checkout's package on the path when it is not installed.
"""
PATH_LINES = """\
import os, sys  # noqa: E401
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), {up}))
"""


class Upstream:
    """One upstream repository's set: where its ports go, where its files are read, its header."""

    def __init__(self, name, out, default_src, prefix, files, title, licence, at_top):
        self.name, self.out, self.default_src, self.prefix = name, out, default_src, prefix
        self.files = files          # port path -> (upstream path under prefix, commit, notes)
        self.title, self.licence, self.at_top = title, licence, at_top

    def header(self, port_path, up, commit, notes=""):
        """The header of the port at port_path (in self.out) of <prefix><up> at commit."""
        depth = port_path.count("/") + 1          # the package is bindings/python: the port's folder, up
        return (self.title.format(path=self.prefix + up, commit=commit[:7]) + " changed only in its imports:\n"
                + IMPORTS_NOTE + self.licence + notes
                + PATH_LINES.format(up=", ".join(['".."'] * depth)))


SETS = {
    "examples": Upstream(
        "examples", os.path.join(ROOT, "bindings", "python", "examples"), os.path.join(ROOT, "data", "pytorch-examples"),
        "", {p: (up, EXAMPLES_COMMIT, notes) for p, (up, notes) in EXAMPLES.items()},
        "# pytorch/examples {path} (commit {commit}, August 2025),",
        "# pytorch/examples is BSD-3-Clause licensed, Copyright (c) 2017 the PyTorch contributors.\n", True),
    "tutorials": Upstream(
        "tutorials", os.path.join(ROOT, "bindings", "python", "tutorials"),
        os.path.join(ROOT, "data", "pytorch-tutorials"), "beginner_source/",
        {p: (p, commit, "") for p, commit in TUTORIALS.items()},
        "# pytorch/tutorials {path} (commit {commit}),",
        "# pytorch/tutorials is BSD-3-Clause licensed, Copyright (c) 2017-2022, Pytorch contributors.\n", False),
}


def port_line(line, dotted=False):
    """One import line, importing the package instead; other lines unchanged. dotted: the file
    binds ``torch`` itself, so ``import torch.X`` may become ``import tensor.X`` (which loads
    the submodule into the package that ``torch`` names)."""
    s = line.lstrip()
    if not (s.startswith("import ") or s.startswith("from ")):
        return line
    indent = line[:len(line) - len(s)]
    m = re.match(r"import (torch|torchvision)(\s*(#.*)?)$", s.rstrip("\n"))
    if m:                                   # the bare module: bind the same name
        target = "tensor" if m.group(1) == "torch" else "tensor.vision"
        return f"{indent}import {target} as {m.group(1)}{m.group(2)}" + ("\n" if line.endswith("\n") else "")
    m = re.match(r"import (torch|torchvision)\.[\w.]+ as \w+", s)
    if m:
        return indent + re.sub(r"^import torchvision\b", "import tensor.vision",
                               re.sub(r"^import torch\b", "import tensor", s))
    m = re.match(r"from (torch|torchvision)(\.[\w.]+)? import ", s)
    if m:
        return indent + re.sub(r"^from torchvision\b", "from tensor.vision",
                               re.sub(r"^from torch\b", "from tensor", s))
    if dotted and re.match(r"import torch\.[\w.]+(\s*(#.*)?)$", s.rstrip("\n")):
        return indent + "import tensor" + s[len("import torch"):]
    if re.match(r"(import|from) (torch|torchvision)\b", s):
        raise ValueError(f"an import form this tool does not port: {line!r}")
    return line


def _leading(line):
    """A line that must stay above the header: #!, a coding declaration, from __future__."""
    return line.startswith("#!") or re.match(r"#.*coding[:=]", line) or line.startswith("from __future__")


def port(text, header, at_top=False):
    """The text with its imports ported and header placed: at_top, after the lines that must
    lead; otherwise before the first top-level import (after ``from __future__``)."""
    lines = text.splitlines(True)
    dotted = any(re.match(r"import torch(\s*(#.*)?)$", ln.rstrip("\n")) for ln in lines)
    out, placed = [], False
    for line in lines:
        s = line.lstrip()
        if not placed and (not _leading(line) if at_top else
                           line == s and (s.startswith("import ") or s.startswith("from "))
                           and not s.startswith("from __future__")):
            out.append(header)
            placed = True
        out.append(port_line(line, dotted))
    if not placed:
        raise ValueError("no line to put the header before" if at_top else "no import line to put the header before")
    return "".join(out)


def _is_git(src):
    return (os.path.exists(os.path.join(src, ".git"))
            or all(os.path.exists(os.path.join(src, p)) for p in ("HEAD", "objects", "refs")))   # a bare clone


def upstream(src, path, commit):
    """<path> at commit from the checkout src (or src's file when src is no git checkout),
    as text; None when neither has it."""
    if _is_git(src):
        where = ["-C", src] if os.path.exists(os.path.join(src, ".git")) else ["--git-dir", src]
        r = subprocess.run(["git"] + where + ["show", f"{commit}:{path}"], capture_output=True)
        if r.returncode == 0:
            return r.stdout.decode("utf-8")
    path = os.path.join(src, path)
    if os.path.isfile(path):
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    return None


def port_set(u, src, out=None):
    """Writes u's ports from src into out (default u.out); returns the port paths not found."""
    out = out or u.out
    missing = []
    for rel, (up, commit, notes) in u.files.items():
        text = upstream(src, u.prefix + up, commit)
        if text is None:
            missing.append(rel)
            continue
        try:
            ported = port(text, u.header(rel, up, commit, notes), u.at_top)
        except ValueError as e:
            raise ValueError(f"{u.prefix + up}: {e}") from None
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w", encoding="utf-8", newline="") as f:
            f.write(ported)
    return missing


def main(argv):
    if not argv or argv[0] not in SETS or len(argv) > 2:
        print("usage:\n" + __doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    u = SETS[argv[0]]
    src = argv[1] if len(argv) > 1 else u.default_src
    missing = port_set(u, src)
    print(f"ported {len(u.files) - len(missing)} of pytorch/{u.name}' files into {os.path.relpath(u.out, ROOT)}")
    if missing:
        print(f"not found in {src} (at their commits): " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
