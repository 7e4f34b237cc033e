"""The part of torchvision that the ported examples and tutorials use, for their runs under
PyTorch 1.13 (Debian ships no torchvision): what tensor.vision does, written with torch, so
that both runs see the same images. Like tensor.vision, a dataset item is the image's
pixels as a uint8 tensor (H x W, or H x W x C for CIFAR10), not a PIL image; Resize is
F.interpolate's bilinear (align_corners=False) rounded back to uint8, as tensor.vision's.
Only for test_examples_pt.py and test_tutorials_pt.py (installed as
sys.modules["torchvision"] in the child process)."""
import gzip
import os
import pickle
import sys
import types

import numpy as np
import torch
import torch.nn.functional as F


def _read_idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return torch.from_numpy(np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape).copy())


class _Images(torch.utils.data.Dataset):
    """what MNIST and CIFAR10 share: an image tensor per item (a copy), its int target,
    each through its transform"""
    def __getitem__(self, index):
        img, target = self.data[index].clone(), int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)


class MNIST(_Images):
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        split = "train" if train else "t10k"
        names = [f"{split}-images-idx3-ubyte", f"{split}-labels-idx1-ubyte"]
        name = type(self).__name__
        for d in (os.path.join(root, name, "raw"), os.path.join(root, name), root):
            found = [next((p for p in (os.path.join(d, n), os.path.join(d, n + ".gz")) if os.path.isfile(p)), None)
                     for n in names]
            if all(found):
                break
        else:
            raise RuntimeError(f"{name}: dataset not found under {root}")
        self.data = _read_idx(found[0])
        self.targets = _read_idx(found[1]).to(torch.int64)


class FashionMNIST(MNIST):
    pass


class CIFAR10(_Images):
    """root/cifar-10-batches-py (the python version: pickled dicts of a uint8 [N, 3072]
    array and a list of labels), as tensor.vision reads it."""
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.transform, self.target_transform = transform, target_transform
        datas, self.targets = [], []
        for n in (self.train_list if train else ["test_batch"]):
            with open(os.path.join(root, "cifar-10-batches-py", n), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            datas.append(entry["data"])
            self.targets.extend(int(v) for v in entry["labels"])
        self.data = torch.from_numpy(np.vstack(datas).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1)).copy())


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class ToTensor:
    def __call__(self, pic):
        img = pic.unsqueeze(0) if pic.ndim == 2 else pic.permute(2, 0, 1)
        return img.to(torch.get_default_dtype()).div(255)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = mean, std

    def __call__(self, t):
        mean = torch.as_tensor(self.mean, dtype=t.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=t.dtype).view(-1, 1, 1)
        return (t - mean) / std


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class Resize:
    def __init__(self, size):
        self.size = size

    def __call__(self, img):
        h, w = img.shape[-2:]
        s = self.size
        oh, ow = (s, s) if h == w else ((s, int(s * w / h)) if h < w else (int(s * h / w), s))
        if (oh, ow) == (h, w):
            return img
        assert oh >= h and ow >= w, "the stand-in only enlarges"
        y = F.interpolate(img.to(torch.float32).reshape(1, 1, h, w), size=(oh, ow), mode="bilinear",
                          align_corners=False)
        return y.round().clamp(0, 255).to(torch.uint8).reshape(oh, ow)


def save_image(tensor, fp, **kwargs):
    with open(fp, "wb") as f:       # only that it was called: the examples' images are not compared
        f.write(b"")


def _make_grid():
    """The package's make_grid (tensor/vision/utils.py) run with torch: the grid is plain
    tensor arithmetic (test_examples_pt checks it against torchvision's formulas)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensor", "vision", "utils.py")
    with open(path) as f:
        src = f.read()
    for old, new in (("from .._core import Tensor, uint8, full\n", "from torch import Tensor, uint8, full\n"),
                     ("from .._ops import stack\n", "from torch import stack\n")):
        assert old in src, old
        src = src.replace(old, new, 1)
    m = types.ModuleType("_standin_utils")
    exec(compile(src, path, "exec"), m.__dict__)
    return m.make_grid


def read_image(path, mode=None):
    raise NotImplementedError("the stand-in reads no image files (the tutorials only import read_image)")


def _models():
    """The package's tensor/vision/models.py run with torch.nn: the same ResNet code, so
    the two runs build the same network (this checks the rest of the program, not the
    port of torchvision's ResNet; test_resnet18_layout checks that against its layout)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensor", "vision", "models.py")
    with open(path) as f:
        src = f.read()
    assert "from .. import nn\n" in src
    m = types.ModuleType("torchvision.models")
    exec(compile(src.replace("from .. import nn\n", "import torch.nn as nn\n", 1), path, "exec"), m.__dict__)
    return m


def install():
    tv = types.ModuleType("torchvision")
    ds = types.ModuleType("torchvision.datasets")
    ds.MNIST, ds.FashionMNIST, ds.CIFAR10 = MNIST, FashionMNIST, CIFAR10
    tr = types.ModuleType("torchvision.transforms")
    tr.Compose, tr.ToTensor, tr.Normalize, tr.Lambda, tr.Resize = Compose, ToTensor, Normalize, Lambda, Resize
    ut = types.ModuleType("torchvision.utils")
    ut.save_image, ut.make_grid = save_image, _make_grid()
    io = types.ModuleType("torchvision.io")
    io.read_image = read_image
    tv.datasets, tv.transforms, tv.utils, tv.models, tv.io = ds, tr, ut, _models(), io
    for m in (tv, ds, tr, ut, tv.models, io):
        sys.modules[m.__name__] = m
