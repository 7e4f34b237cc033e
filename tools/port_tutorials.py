#!/usr/bin/env python3
"""Ports pytorch/tutorials' beginner programs to the package by their imports alone.

    python3 tools/port_tutorials.py [SRC]

SRC is a git checkout of github.com/pytorch/tutorials (default data/pytorch-tutorials):
each file of TUTORIALS is read at the commit pinned there (``git show
<commit>:beginner_source/<path>``: the versions test_tutorials_pt.py knows by their
sha256). SRC may also be a plain folder holding beginner_source/<path> at those versions.
Each is written to bindings/python/tutorials/<path>, changed in two ways only:

- its import lines: ``import torch`` -> ``import tensor as torch``, ``from torch.X import``
  -> ``from tensor.X import``, ``import torchvision`` -> ``import tensor.vision as
  torchvision``, ``torchvision.X`` -> ``tensor.vision.X``; nothing else of the text;
- a header (a comment naming the source and its commit, and two lines that put the
  checkout's package on the path) before its first import (after ``from __future__``).

bindings/python/tests/test_tutorials_pt.py checks that each port, its imports turned back
and its header removed, is the upstream file byte for byte, and runs it under the package
and under PyTorch. The commits are the newest versions of each file the session that
chose them could read (pytorch/tutorials' history moves; a later version may need the
package to follow it).
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "bindings", "python", "tutorials")

# beginner_source/<path> -> the pytorch/tutorials commit it is taken at
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


def upstream(src, rel, commit):
    """beginner_source/<rel> at commit from the checkout src (or src's file when src is no
    git checkout), as text; None when neither has it."""
    if os.path.isdir(os.path.join(src, ".git")) or os.path.isfile(os.path.join(src, ".git")):
        r = subprocess.run(["git", "-C", src, "show", f"{commit}:beginner_source/{rel}"], capture_output=True)
        if r.returncode == 0:
            return r.stdout.decode("utf-8")
    path = os.path.join(src, "beginner_source", rel)
    if os.path.isfile(path):
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    return None


def main(argv):
    src = argv[0] if argv else os.path.join(ROOT, "data", "pytorch-tutorials")
    missing = []
    for rel, commit in TUTORIALS.items():
        text = upstream(src, rel, commit)
        if text is None:
            missing.append(rel)
            continue
        dst = os.path.join(OUT, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w", encoding="utf-8", newline="") as f:
            f.write(port(text, rel, commit[:7]))
    print(f"ported {len(TUTORIALS) - len(missing)} tutorials into {os.path.relpath(OUT, ROOT)}")
    if missing:
        print(f"not found in {src} (at their commits): " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
