"""tensor.save / tensor.load: PyTorch's own .pt zip files, and safetensors files (C section 15).

The format follows the file: ``save(obj, "x.safetensors")`` writes safetensors (below);
any other path, and a file object, gets torch.save's zip format (``archive/data.pkl``
plus one ``archive/data/<key>`` entry per storage, data 64-byte aligned), which real
``torch.load`` reads. ``load`` tells the two apart by their bytes, never by the name, and
names what it finds otherwise (a legacy pre-1.6 PyTorch pickle, gzip, NumPy, ...).
A .pt file is unpickled by a restricted unpickler with PyTorch's ``weights_only=True``
rules (the default, as PyTorch >= 2.6): only tensors, parameters, storages, OrderedDict,
dtypes, sizes and plain values; any other global is refused before anything runs.
Every dtype loads as torch.load keeps it, float16/bfloat16 included (they loaded as
float32 before 0.2.0).

Safetensors:

``save(obj, f)`` writes every tensor in ``obj`` as a safetensors tensor named by its
path in the object ("conv.weight", "state.0.exp_avg", "param_groups" values are not
tensors), so a flat state dict is an ordinary safetensors file any reader can open,
and an optimizer's state tensors carry the names of the C library's flat layout. The
object's shape (nested dicts, lists, tuples, and the non-tensor values: numbers,
strings, None, bools) goes into the file's metadata as JSON under
``"tensor.h/structure"``, which ``load`` uses to rebuild the object; a file without it
(written by tn_safetensors_save, tn_checkpoint_save or another safetensors writer)
loads as an ``OrderedDict`` of its tensors.

Values of any other type are pickled into the metadata. Unpickling runs code chosen by
whoever wrote the file, and every other safetensors reader treats a file as inert data,
so ``load`` is ``weights_only=True`` by default (as PyTorch >= 2.6): the structure must
be plain JSON of the known node kinds, and a pickled value is refused with an error that
says how to opt in (``weights_only=False``, for files from a trusted source only).
"""
import base64
import codecs
import collections
import ctypes
import errno
import io
import json
import math
import numbers
import os
import pickle
import struct
import types
import zipfile

from . import _core
from ._C import lib
from ._core import Tensor, _borrow, _check_int, _raise, _wrap

__all__ = ["save", "load", "WeightsOnlyUnpicklingError", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

_STRUCT_KEY = b"tensor.h/structure"
_FORMAT = 1


# Sparse tensors are stored as their index and value tensors, named <path>.indices and
# <path>.values (COO), <path>.crow_indices, <path>.col_indices and <path>.values (CSR), so
# any safetensors reader sees ordinary tensors; the structure node {"S": [layout, size,
# {part: node}]} puts them back together (through the constructors, which check the indices).
_SPARSE_PARTS = {"sparse_coo": ("indices", "values"), "sparse_csr": ("crow_indices", "col_indices", "values")}


def _encode(obj, path, tensors):
    """obj -> JSON-able tree; tensors are collected into ``tensors`` (name -> Tensor)."""
    from . import sparse
    if isinstance(obj, (sparse.SparseTensor, sparse.SparseCsrTensor)):
        kind = obj.layout.name
        if kind == "sparse_coo":
            parts = {"indices": obj._indices(), "values": obj._values()}
        else:
            parts = {"crow_indices": obj.crow_indices(), "col_indices": obj.col_indices(), "values": obj.values()}
        base = path or "tensor"
        return {"S": [kind, list(obj.shape), {k: _encode(t, f"{base}.{k}", tensors) for k, t in parts.items()}]}
    if isinstance(obj, Tensor):
        name = path or "tensor"
        base, n = name, 1
        while name in tensors:
            name = f"{base}#{n}"
            n += 1
        tensors[name] = obj
        return {"T": name}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return {"F": repr(obj)}
    if isinstance(obj, dict) and all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in obj):
        items = [[k, _encode(v, f"{path}.{k}" if path else str(k), tensors)] for k, v in obj.items()]
        kind = "O" if isinstance(obj, collections.OrderedDict) else "D"
        return {kind: items}
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        items = [_encode(v, f"{path}.{i}" if path else str(i), tensors) for i, v in enumerate(obj)]
        return {"L" if isinstance(obj, list) else "U": items}
    try:
        data = pickle.dumps(obj)
    except Exception as e:
        raise TypeError(f"tensor.save: cannot store a {type(obj).__name__} at '{path}': {e}") from None
    return {"P": base64.b64encode(data).decode("ascii")}


class WeightsOnlyUnpicklingError(RuntimeError, pickle.UnpicklingError):
    """A pickled value refused by ``load(weights_only=True)``, the default (PyTorch raises
    ``pickle.UnpicklingError``; this is one, and a RuntimeError)."""


def _bad(path, what):
    return RuntimeError(f"tensor.load: the file's structure metadata is malformed at '{path or '<root>'}': {what}")


def _decode(node, tensors, weights_only, path=""):
    """The object a structure node describes. Only the node kinds _encode writes are
    accepted, each in its exact form; a pickle ("P") only with weights_only=False."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict) or len(node) != 1:
        raise _bad(path, f"expected a value or a one-key object, got {type(node).__name__}")
    (kind, v), = node.items()
    if kind == "T":
        if not isinstance(v, str) or v not in tensors:
            raise _bad(path, f"tensor {v!r} is not in the file")
        return tensors[v]
    if kind == "S":
        if not (isinstance(v, list) and len(v) == 3 and v[0] in _SPARSE_PARTS and isinstance(v[1], list)
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in v[1])
                and isinstance(v[2], dict) and set(v[2]) == set(_SPARSE_PARTS[v[0]])):
            raise _bad(path, "a sparse tensor must be [layout, size, {part: tensor}] with its layout's parts")
        parts = {k: _decode(x, tensors, weights_only, f"{path}.{k}") for k, x in v[2].items()}
        if not all(isinstance(t, Tensor) for t in parts.values()):
            raise _bad(path, "a sparse tensor's parts must be tensors")
        from . import sparse
        if v[0] == "sparse_coo":
            return sparse.sparse_coo_tensor(parts["indices"], parts["values"], tuple(v[1])).coalesce()
        return sparse.sparse_csr_tensor(parts["crow_indices"], parts["col_indices"], parts["values"], tuple(v[1]))
    if kind == "F":
        if v not in ("inf", "-inf", "nan"):
            raise _bad(path, f"{v!r} is not a non-finite float")
        return float(v)
    if kind in ("D", "O"):
        if not isinstance(v, list):
            raise _bad(path, "a dict's items must be a list of [key, value] pairs")
        out = collections.OrderedDict() if kind == "O" else {}
        for item in v:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], (str, int)) and not isinstance(item[0], bool)):
                raise _bad(path, "a dict's items must be [key, value] pairs with str or int keys")
            k, x = item
            out[k] = _decode(x, tensors, weights_only, f"{path}.{k}" if path else str(k))
        return out
    if kind in ("L", "U"):
        if not isinstance(v, list):
            raise _bad(path, "a list's items must be a list")
        items = [_decode(x, tensors, weights_only, f"{path}.{i}" if path else str(i)) for i, x in enumerate(v)]
        return items if kind == "L" else tuple(items)
    if kind == "P":
        if weights_only:
            raise WeightsOnlyUnpicklingError(
                f"tensor.load: weights_only=True (the default) refuses the pickled Python object at '{path or '<root>'}': "
                "unpickling can run arbitrary code. If you trust the file's source, load it with "
                "tensor.load(f, weights_only=False).")
        if not isinstance(v, str):
            raise _bad(path, "a pickle must be a base64 string")
        return pickle.loads(base64.b64decode(v))
    raise _bad(path, f"unknown entry kind {kind!r}")


def _to_dict(obj):
    tensors = {}
    tree = _encode(obj, "", tensors)
    d = lib.tn_dict_new()
    if not d:
        _raise()
    try:
        for name, t in tensors.items():
            t = t.detach()            # a local: the pointer must stay alive through the call
            _check_int(lib.tn_dict_set(d, name.encode(), t._ptr))
        structure = {"format": _FORMAT, "root": tree}
        _check_int(lib.tn_dict_set_meta(d, _STRUCT_KEY, json.dumps(structure).encode()))
    except BaseException:
        lib.tn_dict_free(d)
        raise
    return d


def _is_safetensors_path(f):
    return isinstance(f, (str, bytes, os.PathLike)) and os.fsdecode(f).lower().endswith(".safetensors")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Writes obj (a tensor, or dicts/lists/tuples of tensors and plain values: state
    dicts, optimizer state dicts, checkpoints) to a path or a binary file object: a
    ``.safetensors`` path as safetensors, anything else in PyTorch's zip format."""
    if isinstance(f, (str, bytes, os.PathLike)) and os.path.isdir(f):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fsdecode(f))   # as PyTorch's open(f, "wb")
    if not _use_new_zipfile_serialization:
        raise RuntimeError("tensor.save: the legacy (pre-1.6) PyTorch format is not written; "
                           "leave _use_new_zipfile_serialization=True")
    if not _is_safetensors_path(f):
        data = _pt_bytes(obj)
        if isinstance(f, (str, bytes, os.PathLike)):
            _atomic_write(os.fsencode(f), data)
        elif hasattr(f, "write"):
            f.write(data)
        else:
            raise TypeError(f"tensor.save: f must be a path or a binary file object, got {type(f).__name__}")
        return
    d = _to_dict(obj)
    try:
        _check_int(lib.tn_safetensors_save(os.fsencode(f), d))
    finally:
        lib.tn_dict_free(d)


def _describe(head):
    """What a file that is neither a PyTorch zip nor safetensors is, from its first bytes."""
    if head[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05") or head[:1] == b"\x80":
        return ("a bare pickle: PyTorch's legacy format from before 1.6 (or torch.save(..., "
                "_use_new_zipfile_serialization=False)), which is not supported: re-save it with torch.save in PyTorch >= 1.6")
    if head[:2] == b"\x1f\x8b":
        return "a gzip file (not a PyTorch zip file)"
    if head[:6] == b"\x93NUMPY":
        return "a NumPy .npy file (not a PyTorch zip file)"
    if head[:4] == b"PK\x03\x04":
        return "a damaged zip archive (not a readable PyTorch zip file)"
    if not head:
        return "empty (0 bytes): not a PyTorch zip file nor a safetensors file"
    return f"not a PyTorch zip file nor a safetensors file (it starts with {head[:8]!r})"


def _kind(head, size):
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06") and size >= 22:
        return "pt"
    if len(head) >= 9 and struct.unpack("<Q", head[:8])[0] <= size - 8 and head[8:9] == b"{":
        return "safetensors"
    return None


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Reads a PyTorch .pt/.pth file (torch.save's zip format) or a safetensors file, told
    apart by their bytes. Tensors of a safetensors path alias the file's copy-on-write
    mapping; map_location is accepted and ignored (CPU). weights_only=None or True (the
    default) refuses pickled objects other than tensors, containers and plain values;
    weights_only=False unpickles them (only for files from a trusted source)."""
    weights_only = _weights_only_default(weights_only)
    path = isinstance(f, (str, bytes, os.PathLike))
    if path:
        with open(f, "rb") as fh:    # PyTorch's OSError (FileNotFoundError, IsADirectoryError, ...) first
            head = fh.read(16)
            size = os.fstat(fh.fileno()).st_size
        where = os.fsdecode(f)
    else:
        data = f.read() if hasattr(f, "read") else bytes(f)
        head, size, where = data[:16], len(data), "<file object>"
    kind = _kind(head, size)
    if kind == "pt":
        return _load_pt(os.fsdecode(f) if path else io.BytesIO(data), where, weights_only)
    if kind is None:
        raise RuntimeError(f"tensor.load: '{where}' is {_describe(head)}")
    if path:
        d = lib.tn_safetensors_load(os.fsencode(f))
    else:
        buf = ctypes.create_string_buffer(data, len(data))
        d = lib.tn_safetensors_load_buffer(buf, len(data))
    if not d:
        _raise()
    try:
        tensors = collections.OrderedDict()
        for i in range(lib.tn_dict_len(d)):
            tensors[lib.tn_dict_key(d, i).decode()] = _borrow(lib.tn_dict_value(d, i))
        meta = lib.tn_dict_get_meta(d, _STRUCT_KEY)
    finally:
        lib.tn_dict_free(d)
    if meta is None:
        return tensors
    try:
        structure = json.loads(meta.decode())
    except (ValueError, RecursionError) as e:
        raise RuntimeError(f"tensor.load: the file's structure metadata is not valid JSON: {e}") from None
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT or "root" not in structure:
        fmt = structure.get("format") if isinstance(structure, dict) else None
        raise RuntimeError(f"tensor.load: structure format {fmt!r} is not known to this version")
    try:
        return _decode(structure["root"], tensors, weights_only)
    except RecursionError:
        raise RuntimeError("tensor.load: the file's structure metadata is nested too deeply") from None


# --------------------------------------------------------------------------- PyTorch .pt files
# torch's storage classes: the dtype of their elements
_STORAGE_DTYPES = {d._legacy + "Storage": d for d in _core._DTYPES}
_STORAGE_DTYPES["UntypedStorage"] = _core.uint8
_UNSUPPORTED_STORAGES = ("QInt8Storage", "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")


class _StorageType:
    """torch.<X>Storage as a .pt pickle names it (in persistent ids)."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __call__(self, *args):
        raise pickle.UnpicklingError(f"torch.{self.name} is not callable in a weights file")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    if not isinstance(storage, Tensor) or not all(isinstance(v, int) for v in (storage_offset, *size, *stride)) \
            or len(size) != len(stride):
        raise pickle.UnpicklingError("_rebuild_tensor_v2 needs (storage, offset, size, stride, ...) of ints")
    if storage_offset < 0 or min(stride, default=0) < 0 or min(size, default=0) < 0:
        raise pickle.UnpicklingError(f"a tensor of size {tuple(size)}, stride {tuple(stride)}, offset {storage_offset} "
                                     "has a negative value")
    t = storage.as_strided(tuple(size), tuple(stride), storage_offset)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("_rebuild_parameter needs a tensor")
    return Parameter(data, bool(requires_grad))


def _allowed_globals():
    g = {("collections", "OrderedDict"): collections.OrderedDict,
         ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
         ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
         ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
         ("torch", "Size"): _core.Size,
         ("collections", "Counter"): collections.Counter,
         ("_codecs", "encode"): codecs.encode}             # bytes, as protocol 2 pickles them
    for b in (set, frozenset, bytearray, complex):          # as PyTorch's: plain values
        g[("builtins", b.__name__)] = g[("__builtin__", b.__name__)] = b
    for name, dt in _STORAGE_DTYPES.items():
        g[("torch", name)] = _StorageType(name, dt)
    for dt in _core._DTYPES:
        g[("torch", dt.name)] = dt
    return g


_ALLOWED = _allowed_globals()

# torch.serialization.add_safe_globals: what the user allows beyond _ALLOWED (objects, or
# (object, "module.name") pairs), for .pt files only, as PyTorch's weights-only unpickler
_USER_SAFE = []


def add_safe_globals(safe_globals):
    """Allows these globals (classes or functions, or (object, "module.name") pairs) in
    weights_only loads: a class named by the file is built with __new__ and its state set
    (BUILD), as PyTorch's unpickler does for allow-listed classes."""
    for g in safe_globals:
        if isinstance(g, tuple) and (len(g) != 2 or not isinstance(g[1], str)):
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got {g!r}")
        if g not in _USER_SAFE:
            _USER_SAFE.append(g)


def get_safe_globals():
    """The globals add_safe_globals allowed (a list)."""
    return list(_USER_SAFE)


def clear_safe_globals():
    """Forgets every global add_safe_globals allowed."""
    del _USER_SAFE[:]


class safe_globals:
    """``with torch.serialization.safe_globals([...]):`` add_safe_globals for the block."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._added = []
        for g in self.safe_globals:
            if g not in _USER_SAFE and g not in self._added:
                self._added.append(g)
        add_safe_globals(self._added)

    def __exit__(self, *exc):
        for g in self._added:
            _USER_SAFE.remove(g)


def _user_allowed():
    """{(module, name): object} of the user's allow-list."""
    out = {}
    for g in _USER_SAFE:
        if isinstance(g, tuple):
            module, _, name = g[1].rpartition(".")
            out[(module, name)] = g[0]
        else:
            out[(g.__module__, g.__qualname__)] = g
    return out


def _weights_only_default(weights_only):
    """PyTorch's environment overrides: TORCH_FORCE_WEIGHTS_ONLY_LOAD makes every load
    weights-only; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD makes a load that does not say
    weights_only a full unpickling (for trusted files written before the 2.6 default)."""
    yes = ("1", "y", "yes", "true")
    if os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in yes:
        return True
    if weights_only is None and os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in yes:
        return False
    return weights_only is None or bool(weights_only)


class _PtUnpickler(pickle._Unpickler):
    """data.pkl of a .pt file. With weights_only, find_class answers only _ALLOWED and
    BUILD only sets the attributes of a dict (a state dict's _metadata): nothing the file
    names is imported or called but the rebuilders above. The Python implementation of
    the unpickler, so that BUILD can be checked too."""
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, fh, zf, prefix, weights_only):
        super().__init__(fh)
        self._zf, self._prefix, self._weights_only, self._storages = zf, prefix, weights_only, {}

    def find_class(self, module, name):
        hit = _ALLOWED.get((module, name))
        if hit is not None:
            return hit
        if module == "torch" and name in _UNSUPPORTED_STORAGES:
            raise RuntimeError(f"tensor.load: torch.{name}: tensors of this dtype are not supported by tensor.h")
        if self._weights_only:
            hit = _user_allowed().get((module, name))
            if hit is not None:
                return hit
            raise WeightsOnlyUnpicklingError(
                f"tensor.load: weights_only=True (the default) refuses the global '{module}.{name}': a weights file "
                "may name only tensors, state-dict containers and plain values, and loading it never runs code. "
                "If you trust the file's source, load it with tensor.load(f, weights_only=False), or allow the "
                f"global with tensor.serialization.add_safe_globals([{module}.{name}]) (or the safe_globals "
                "context manager).")
        if module.split(".")[0] == "torch":
            raise RuntimeError(f"tensor.load: '{module}.{name}' is a PyTorch object tensor.h does not rebuild")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _StorageType)
                and isinstance(pid[2], str) and isinstance(pid[4], int)):
            raise pickle.UnpicklingError(f"a persistent id is not ('storage', type, key, location, numel): {pid!r}"[:200])
        _, stype, key, _location, numel = pid
        hit = self._storages.get(key)
        if hit is not None:
            if hit[0] is not stype.dtype:
                raise pickle.UnpicklingError(f"storage '{key}' is named with two dtypes")
            return hit[1]
        try:
            data = self._zf.read(f"{self._prefix}data/{key}")
        except KeyError:
            raise pickle.UnpicklingError(f"storage '{key}' has no entry {self._prefix}data/{key} in the archive") from None
        dt = stype.dtype
        if numel < 0 or len(data) != numel * dt.itemsize:
            raise pickle.UnpicklingError(f"storage '{key}' of {numel} {dt} elements does not match its entry's {len(data)} bytes")
        arr, n = _core._i64((numel,))
        t = _wrap(lib.tn_empty(arr, n, dt._code) if not data else lib.tn_from_data(data, arr, n, dt._code))
        self._storages[key] = (stype.dtype, t)
        return t

    def _load_build(self):
        if self._weights_only:
            state, obj = self.stack[-1], self.stack[-2]
            if type(obj) in [v for v in _user_allowed().values() if isinstance(v, type)]:
                pickle._Unpickler.load_build(self)      # an allow-listed class: its own state setting
                return
            if not (isinstance(obj, dict) and isinstance(state, dict)) and state is not None:
                raise WeightsOnlyUnpicklingError(
                    f"tensor.load: weights_only=True refuses setting the state of a {type(obj).__name__} (BUILD); "
                    "if you trust the file's source, load it with tensor.load(f, weights_only=False).")
            self.stack.pop()
            if isinstance(state, dict):
                for k, v in state.items():
                    if not isinstance(k, str):
                        raise pickle.UnpicklingError("BUILD with a non-string attribute name")
                    setattr(obj, k, v)
            return
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = _load_build


def _load_pt(src, where, weights_only):
    try:
        with zipfile.ZipFile(src) as zf:
            names = zf.namelist()
            if not names or "/" not in names[0]:
                raise RuntimeError(f"tensor.load: '{where}' is a zip archive but not a PyTorch file (no archive folder)")
            prefix = names[0].split("/")[0] + "/"
            if prefix + "data.pkl" not in names:
                raise RuntimeError(f"tensor.load: '{where}' is a zip archive but not a PyTorch file (no {prefix}data.pkl)")
            if prefix + "byteorder" in names and zf.read(prefix + "byteorder") != b"little":
                raise RuntimeError(f"tensor.load: '{where}': only little-endian PyTorch files are supported")
            with zf.open(prefix + "data.pkl") as fh:
                return _PtUnpickler(io.BytesIO(fh.read()), zf, prefix, weights_only).load()
    except RuntimeError:      # ours and WeightsOnlyUnpicklingError (both RuntimeErrors), RecursionError
        raise
    except Exception as e:
        raise RuntimeError(f"tensor.load: '{where}' is a damaged PyTorch file: {type(e).__name__}: {e}"[:1000]) from None


# ---- writing
class _Global:
    """A module.name the pickle names (written as GLOBAL; nothing is imported)."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):     # pickle's save_reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} is a name in a .pt file, not a function here")


_G_REBUILD = _Global("torch._utils", "_rebuild_tensor_v2")
_G_PARAM = _Global("torch._utils", "_rebuild_parameter")
_G_ODICT = _Global("collections", "OrderedDict")


class _Storage:
    """One storage entry of the archive: the span [lo, hi) of elements that the saved
    tensors sharing one C storage use (as torch saves views: once, with offsets)."""
    __slots__ = ("key", "dtype", "lo", "hi", "base")


class _PtPickler(pickle._Pickler):
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, fh, storages, views):
        super().__init__(fh, protocol=2)
        self._storages = storages        # (address, dtype) -> _Storage
        self._views = views              # id(tensor) -> its detached CPU view
        self._empty = []                 # the empty storages of empty tensors

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
        self.memoize(obj)

    dispatch[_Global] = _save_global_name
    dispatch[_core.dtype] = lambda self, obj: self._save_global_name(_Global("torch", obj.name))

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            return ("storage", _Global("torch", obj.dtype._legacy + "Storage"), obj.key, "cpu", obj.hi - obj.lo)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, _core.Size):
            return (_Global("torch", "Size"), (tuple(int(v) for v in obj),))
        if not isinstance(obj, Tensor):
            return NotImplemented
        from .nn.parameter import Parameter
        t = self._views[id(obj)]
        if isinstance(obj, Parameter):
            return (_G_PARAM, (t, bool(obj.requires_grad), _ODict0()))
        st = self._storages[(t.data_ptr() - t.storage_offset() * t.element_size(), t.dtype)] if t.numel() else None
        if st is None:      # an empty tensor: an empty storage of its own
            st = _Storage()
            st.key, st.dtype, st.lo, st.hi = str(len(self._storages) + len(self._empty)), t.dtype, 0, 0
            self._empty.append(st)
            off = 0
        else:
            off = t.storage_offset() - st.lo
        rg = bool(obj.requires_grad) and obj.is_leaf
        return (_G_REBUILD, (st, off, tuple(int(v) for v in t.shape), tuple(int(v) for v in t.stride()), rg, _ODict0()))


class _ODict0:
    """An empty OrderedDict() as torch pickles backward hooks: GLOBAL + () + REDUCE."""


def _save_odict0(self, obj):
    self.save_reduce(_G_ODICT, (), obj=obj)


_PtPickler.dispatch[_ODict0] = _save_odict0


def _storage_view(t):
    """t detached, on the CPU (a tensor elsewhere is copied: a storage of its own)."""
    t = t.detach()
    return t if t.device.type == "cpu" else t.cpu()


def _collect(obj, seen, out, depth=0):
    """Every tensor in obj (dicts, lists, tuples), once each."""
    if depth > 1000 or id(obj) in seen:
        return
    if isinstance(obj, Tensor):
        seen.add(id(obj))
        out.append(obj)
    elif isinstance(obj, dict):
        seen.add(id(obj))
        for v in obj.values():
            _collect(v, seen, out, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        seen.add(id(obj))
        for v in obj:
            _collect(v, seen, out, depth + 1)
    elif not isinstance(obj, (type, types.ModuleType)) and isinstance(getattr(obj, "__dict__", None), dict):
        seen.add(id(obj))      # an object pickled with its attributes (torch.save(model)): its tensors too
        _collect(obj.__dict__, seen, out, depth + 1)


def _pt_bytes(obj):
    """obj as torch.save writes it: the zip archive's bytes."""
    found = []
    _collect(obj, set(), found)
    storages, keep, views = {}, [], {}
    for x in found:
        t = _storage_view(x)
        keep.append(t)                    # alive until written (a CPU copy's address must stay valid)
        views[id(x)] = views[id(t)] = t
        if not t.numel():
            continue
        es, off = t.element_size(), t.storage_offset()
        last = off + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
        key = (t.data_ptr() - off * es, t.dtype)
        st = storages.get(key)
        if st is None:
            st = storages[key] = _Storage()
            st.key, st.dtype, st.lo, st.hi, st.base = str(len(storages) - 1), t.dtype, off, last + 1, key[0]
        st.lo, st.hi = min(st.lo, off), max(st.hi, last + 1)
    pkl = io.BytesIO()
    p = _PtPickler(pkl, storages, views)
    try:
        p.dump(obj)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise TypeError(f"tensor.save: cannot store {type(obj).__name__}: {e}") from None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        def entry(name, data):
            info = zipfile.ZipInfo("archive/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            at = out.tell() + 30 + len(info.filename.encode()) + 4
            info.extra = b"FB" + struct.pack("<H", -at % 64) + b"Z" * (-at % 64)   # data 64-byte aligned, as torch
            zf.writestr(info, data)
        entry("data.pkl", pkl.getvalue())
        entry("byteorder", b"little")
        for st in sorted(storages.values(), key=lambda s: int(s.key)):
            es = st.dtype.itemsize
            entry("data/" + st.key, ctypes.string_at(st.base + st.lo * es, (st.hi - st.lo) * es) if st.hi > st.lo else b"")
        for st in p._empty:
            entry("data/" + st.key, b"")
        entry("version", b"3\n")
    del keep
    return out.getvalue()


def _atomic_write(path, data):
    """data to path as the C library's saves do: an exclusive temporary beside it
    ("<path>.tmp", "<path>.tmp1", ...), fsync'd, renamed over path; on failure the old
    file stays and the temporary is removed."""
    for k in range(100):
        tmp = path + (b".tmp" if not k else b".tmp%d" % k)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "tensor.save: no free temporary name beside the file", os.fsdecode(path))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)
        raise
