"""torchvision.datasets' MNIST, FashionMNIST and CIFAR10 over local files.

Where the files are looked for, in order (each file plain or gzipped, ``.gz``):

- ``root/<ClassName>/raw`` (torchvision's layout: ``root/FashionMNIST/raw/train-images-idx3-ubyte``),
  then ``root/<ClassName>`` and ``root`` itself (a folder that holds the four IDX files);
- FashionMNIST only: Debian's ``dataset-fashion-mnist`` package
  (``/usr/share/datasets/fashion-mnist``) and a checkout's ``data/fashion-mnist``
  (``tools/fetch_fashion_mnist.sh``).

CIFAR10 reads ``root/cifar-10-batches-py`` (torchvision's download, a pickle of NumPy
arrays, read by an unpickler that builds nothing but arrays, dicts, lists and strings;
needs NumPy) or ``root/cifar-10-batches-bin`` (the binary version: plain bytes).

There is no network: ``download=True`` is accepted when the files are present (torchvision
then skips the download too) and raises, saying where to put them, when they are not.

``dataset[i]`` is ``(image, target)`` with ``target`` an int, as torchvision's; the image
is a uint8 tensor in PIL's layout (H x W, or H x W x C for CIFAR10) where torchvision gives
a PIL image: ``transforms.ToTensor`` takes it. ``.data`` is a uint8 tensor (CIFAR10's too,
[N, 32, 32, 3], where torchvision's is a NumPy array) and ``.targets`` as torchvision's
(an int64 tensor for MNIST, a list of ints for CIFAR10).
"""
import ctypes
import os
import pickle

from .._C import lib
from .._core import _wrap, _i64, uint8, int64, _numpy, tensor as _tensor
from ..utils.data import Dataset

__all__ = ["VisionDataset", "MNIST", "FashionMNIST", "CIFAR10"]

_REPO_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))), "data")


class StandardTransform:
    def __init__(self, transform=None, target_transform=None):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    @staticmethod
    def _format(transform, head):
        lines = repr(transform).splitlines()
        return [f"{head}{lines[0]}"] + [" " * len(head) + line for line in lines[1:]]

    def __repr__(self):
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += self._format(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += self._format(self.target_transform, "Target transform: ")
        return "\n".join(body)


class VisionDataset(Dataset):
    """torchvision.datasets.VisionDataset: root, transform, target_transform and the repr."""
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        if has_transforms and (transform is not None or target_transform is not None):
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        if not has_transforms:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        return ""

    def __repr__(self):
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if self.transforms is not None:
            body += repr(self.transforms).splitlines()
        return "\n".join(["Dataset " + self.__class__.__name__] + [" " * self._repr_indent + b for b in body])


def _find(dirs, names):
    """The first folder of dirs that holds every name (plain or .gz): {name: path}, or None."""
    for d in dirs:
        found = {}
        for n in names:
            for p in (os.path.join(d, n), os.path.join(d, n + ".gz")):
                if os.path.isfile(p):
                    found[n] = p
                    break
        if len(found) == len(names):
            return d, found
    return None, None


def _read_idx(path):
    return _wrap(lib.tn_read_idx(os.fsencode(path)))


def _not_found(cls, names, dirs, download):
    where = os.path.join("<root>", cls, "raw")
    msg = (f"{cls}: dataset not found: no folder of {', '.join(dirs)} holds {', '.join(names)} "
           f"(each plain or .gz). Put the files in {where}, as torchvision lays them out")
    if download:
        msg += ("; download=True cannot fetch them: tensor.vision has no network access "
                "(fetch them elsewhere and copy them there)")
    return RuntimeError(msg + ".")


class MNIST(VisionDataset):
    """torchvision.datasets.MNIST(root, train=True, transform=None, target_transform=None,
    download=False): the IDX files of MNIST through the C reader (tn_read_idx). ``data``
    uint8 [N, 28, 28], ``targets`` int64 [N]; ``dataset[i]`` is (uint8 [28, 28], int)."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]
    _extra_dirs = ()

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        split = "train" if train else "t10k"
        names = [f"{split}-images-idx3-ubyte", f"{split}-labels-idx1-ubyte"]
        dirs = [self.raw_folder, os.path.join(self.root, self.__class__.__name__), self.root]
        dirs += [d for d in self._extra_dirs if d not in dirs]
        folder, files = _find(dirs, names)
        if folder is None:
            raise _not_found(self.__class__.__name__, names, dirs, download)
        self.folder = folder                     # where the files were found
        self.data = _read_idx(files[names[0]])
        targets = _read_idx(files[names[1]])
        if self.data.dtype != uint8 or self.data.ndim != 3 or targets.ndim != 1 or len(targets) != len(self.data):
            raise RuntimeError(f"{self.__class__.__name__}: {files[names[0]]} and {files[names[1]]} are not "
                               f"MNIST's images [N, H, W] and labels [N] (got {list(self.data.shape)} "
                               f"{self.data.dtype} and {list(targets.shape)})")
        self.targets = targets.to(int64)

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        # torchvision: a PIL image of mode "L"; here its pixels, a uint8 [H, W] tensor of its own
        img, target = self.data[index].clone(), int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """torchvision.datasets.FashionMNIST: MNIST's format, Zalando's clothes. Also found in
    Debian's dataset-fashion-mnist package and in a checkout's data/fashion-mnist."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
    _extra_dirs = ("/usr/share/datasets/fashion-mnist", os.path.join(_REPO_DATA, "fashion-mnist"))


# ---- CIFAR-10 ----
_CIFAR_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


class _ArrayUnpickler(pickle.Unpickler):
    """Builds NumPy arrays, dicts, lists, strings and numbers, and nothing else: any other
    global a pickle names (os.system, builtins.eval, ...) is refused before it is looked up."""
    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype"),
                ("_codecs", "encode")}      # how protocol 2 writes Python 3 bytes (torch's weights_only allows it too)

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"CIFAR10: refusing to load {module}.{name} from a batch file "
                                     "(only NumPy arrays, dicts, lists, strings and numbers are read)")


def _key(entry, name):
    """A batch dict's key: str when the pickle came from Python 2 (latin1), bytes from Python 3."""
    return entry[name] if name in entry else entry.get(name.encode(), None)


def _bytes_tensor(raw, shape):
    arr, n = _i64(shape)
    buf = (ctypes.c_char * len(raw)).from_buffer_copy(raw) if raw else None
    return _wrap(lib.tn_from_data(buf, arr, n, uint8._code)) if raw else _wrap(lib.tn_empty(arr, n, uint8._code))


class CIFAR10(VisionDataset):
    """torchvision.datasets.CIFAR10(root, train=True, transform=None, target_transform=None,
    download=False): 50000 training / 10000 test colour images of 32 x 32. ``data`` uint8
    [N, 32, 32, 3] (a tensor; torchvision's is a NumPy array of that shape), ``targets`` a
    list of ints; ``dataset[i]`` is (uint8 [32, 32, 3], int)."""

    base_folder = "cifar-10-batches-py"
    bin_folder = "cifar-10-batches-bin"
    train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
    test_list = ["test_batch"]
    classes = list(_CIFAR_CLASSES)

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        names = self.train_list if train else self.test_list
        py = os.path.join(self.root, self.base_folder)
        binary = os.path.join(self.root, self.bin_folder)
        if all(os.path.isfile(os.path.join(py, n)) for n in names):
            self.data, self.targets = self._load_py(py, names)
        elif all(os.path.isfile(os.path.join(binary, n + ".bin")) for n in names):
            self.data, self.targets = self._load_bin(binary, names)
        else:
            msg = (f"CIFAR10: dataset not found: {py} (the python version: {', '.join(names)}) or {binary} "
                   f"(the binary version: {', '.join(n + '.bin' for n in names)}); extract "
                   "cifar-10-python.tar.gz or cifar-10-binary.tar.gz into root")
            if download:
                msg += "; download=True cannot fetch it: tensor.vision has no network access"
            raise RuntimeError(msg + ".")

    def _load_bin(self, folder, names):
        """The binary version: per image 1 label byte, then 3072 bytes (R, G, B planes of 32 x 32)."""
        chunks = []
        for n in names:
            path = os.path.join(folder, n + ".bin")
            with open(path, "rb") as f:
                raw = f.read()
            if len(raw) % 3073:
                raise RuntimeError(f"CIFAR10: {path}: {len(raw)} bytes is not a whole number of 3073-byte "
                                   "records (1 label byte, 3072 pixel bytes): not a CIFAR-10 binary batch")
            chunks.append(raw)
        raw = b"".join(chunks)
        rec = _bytes_tensor(raw, (len(raw) // 3073, 3073))
        targets = [int(v) for v in rec[:, 0].tolist()]
        if any(t > 9 for t in targets):
            raise RuntimeError(f"CIFAR10: {folder}: a label byte is above 9: not a CIFAR-10 binary batch")
        data = rec[:, 1:].reshape(-1, 3, 32, 32).permute(0, 2, 3, 1).contiguous()
        meta = os.path.join(folder, "batches.meta.txt")
        if os.path.isfile(meta):
            with open(meta) as f:
                names = [ln.strip() for ln in f if ln.strip()]
            if len(names) == 10:
                self.classes = names
        return data, targets

    def _load_py(self, folder, names):
        np = _numpy()
        if np is None:
            raise RuntimeError(f"CIFAR10: {folder} is the python version, a pickle of NumPy arrays, and NumPy "
                               "is not installed (apt-get install python3-numpy); or use the binary version, "
                               f"{self.bin_folder}, which needs nothing")
        datas, targets = [], []
        for n in names:
            path = os.path.join(folder, n)
            with open(path, "rb") as f:
                entry = _ArrayUnpickler(f, encoding="latin1").load()
            data = _key(entry, "data") if isinstance(entry, dict) else None
            labels = _key(entry, "labels") if isinstance(entry, dict) else None
            if labels is None and isinstance(entry, dict):
                labels = _key(entry, "fine_labels")
            if (not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072
                    or labels is None or len(labels) != data.shape[0]):
                raise RuntimeError(f"CIFAR10: {path} is not a CIFAR-10 batch (a dict of 'data', uint8 [N, 3072], "
                                   "and 'labels')")
            datas.append(data)
            targets.extend(int(v) for v in labels)
        data = np.vstack(datas).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))      # to HWC, as torchvision
        meta = os.path.join(folder, "batches.meta")
        if os.path.isfile(meta):
            with open(meta, "rb") as f:
                m = _ArrayUnpickler(f, encoding="latin1").load()
            label_names = _key(m, "label_names") if isinstance(m, dict) else None
            if isinstance(label_names, list) and all(isinstance(c, (str, bytes)) for c in label_names):
                self.classes = [c.decode() if isinstance(c, bytes) else c for c in label_names]
        return _tensor(np.ascontiguousarray(data)), targets

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        # torchvision: a PIL RGB image; here its pixels, a uint8 [32, 32, 3] tensor of its own
        img, target = self.data[index].clone(), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"
