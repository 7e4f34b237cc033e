#!/usr/bin/env python3
"""Ports pytorch/tutorials' beginner programs to the package by their imports alone.

    python3 tools/port_tutorials.py [SRC]

SRC is a checkout of github.com/pytorch/tutorials (or a folder with its beginner_source/
files; default data/pytorch-tutorials). Each file in TUTORIALS below is written to
bindings/python/tutorials/<group>/<name>.py, changed in two ways only:

- its import lines: ``import torch`` -> ``import tensor as torch``, ``from torch.X import``
  -> ``from tensor.X import``, ``import torchvision`` -> ``import tensor.vision as
  torchvision``, ``torchvision.X`` -> ``tensor.vision.X``; nothing else of the text;
- a header (a comment naming the source and its commit, and two lines that put the
  checkout's package on the path) before its first import (after ``from __future__``).

bindings/python/tests/test_tutorials_pt.py checks that each port, its imports turned back
and its header removed, is the upstream file byte for byte (by sha256), and runs it under
the package and under PyTorch. The commit each file was taken at is in its header: pass
--commits FILE (lines "<upstream path> <commit>"; default SRC/COMMITS) to record them.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "bindings", "python", "tutorials")

# the files ported: beginner_source/<group>/<name>.py
TUTORIALS = [
    "basics/quickstart_tutorial.py", "basics/tensorqs_tutorial.py", "basics/data_tutorial.py",
    "basics/transforms_tutorial.py", "basics/buildmodel_tutorial.py", "basics/autogradqs_tutorial.py",
    "basics/optimization_tutorial.py", "basics/saveloadrun_tutorial.py",
    "blitz/tensor_tutorial.py", "blitz/autograd_tutorial.py", "blitz/neural_networks_tutorial.py",
    "blitz/cifar10_tutorial.py",
    "examples_tensor/polynomial_numpy.py", "examples_tensor/polynomial_tensor.py",
    "examples_autograd/polynomial_autograd.py", "examples_autograd/polynomial_custom_function.py",
    "examples_nn/polynomial_nn.py", "examples_nn/polynomial_optim.py", "examples_nn/polynomial_module.py",
    "examples_nn/dynamic_net.py",
]

HEADER = """\
# pytorch/tutorials beginner_source/{path} (commit {commit}), changed only in its imports:
# `torch` is tensor (bindings/python), `torchvision` is tensor.vision; the two lines after
# this comment put the checkout's package on the path when it is not installed.
# pytorch/tutorials is BSD-3-Clause licensed, Copyright (c) 2017-2022, Pytorch contributors.
import os, sys  # noqa: E401
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
"""


def port_line(line):
    """One import line of a tutorial, importing the package instead; other lines unchanged."""
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
    if re.match(r"(import|from) (torch|torchvision)\b", s):
        raise ValueError(f"an import form this tool does not port: {line!r}")
    return line


def port(text, path, commit):
    """The tutorial's text with its imports ported and the header before its first import."""
    lines = text.splitlines(True)
    out, placed = [], False
    for line in lines:
        s = line.lstrip()
        if not placed and line == s and (s.startswith("import ") or s.startswith("from ")) \
                and not s.startswith("from __future__"):
            out.append(HEADER.format(path=path, commit=commit))
            placed = True
        out.append(port_line(line))
    if not placed:
        raise ValueError(f"{path}: no import line to put the header before")
    return "".join(out)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    src = args[0] if args else os.path.join(ROOT, "data", "pytorch-tutorials")
    commits_file = next((a.split("=", 1)[1] for a in argv if a.startswith("--commits=")),
                        os.path.join(src, "COMMITS"))
    commits = {}
    if os.path.isfile(commits_file):
        with open(commits_file) as f:
            for ln in f:
                if ln.strip():
                    p, c = ln.split()
                    commits[p.replace("beginner_source/", "", 1)] = c
    missing = []
    for rel in TUTORIALS:
        path = os.path.join(src, "beginner_source", rel)
        if not os.path.isfile(path):
            missing.append(rel)
            continue
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        dst = os.path.join(OUT, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w", encoding="utf-8", newline="") as f:
            f.write(port(text, rel, commits.get(rel, "unknown")))
    print(f"ported {len(TUTORIALS) - len(missing)} tutorials into {os.path.relpath(OUT, ROOT)}")
    if missing:
        print("not found under " + src + ": " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
