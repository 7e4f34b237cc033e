"""tensor.save / tensor.load: safetensors files (C section 15).

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
import collections
import ctypes
import errno
import json
import math
import numbers
import os
import pickle

from ._C import lib
from ._core import Tensor, _borrow, _check_int, _raise

__all__ = ["save", "load", "WeightsOnlyUnpicklingError"]

_STRUCT_KEY = b"tensor.h/structure"
_FORMAT = 1


def _encode(obj, path, tensors):
    """obj -> JSON-able tree; tensors are collected into ``tensors`` (name -> Tensor)."""
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


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Writes obj (a tensor, or dicts/lists/tuples of tensors and plain values: state
    dicts, optimizer state dicts, checkpoints) to a path or a binary file object."""
    if isinstance(f, (str, bytes, os.PathLike)) and os.path.isdir(f):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fsdecode(f))   # as PyTorch's open(f, "wb")
    d = _to_dict(obj)
    try:
        if isinstance(f, (str, bytes, os.PathLike)):
            _check_int(lib.tn_safetensors_save(os.fsencode(f), d))
            return
        size = ctypes.c_size_t(0)
        buf = lib.tn_safetensors_serialize(d, ctypes.byref(size))
        if not buf:
            _raise()
        try:
            data = ctypes.string_at(buf, size.value)
        finally:
            lib.tn_string_free(buf)
        f.write(data)
    finally:
        lib.tn_dict_free(d)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Reads what save wrote (or any safetensors file: an OrderedDict of its tensors).
    Tensors from a path alias the file's copy-on-write mapping; map_location is accepted
    and ignored (CPU). weights_only=None or True (the default) refuses pickled values;
    weights_only=False unpickles them (only for files from a trusted source)."""
    weights_only = weights_only is None or bool(weights_only)
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb"):      # PyTorch's OSError (FileNotFoundError, IsADirectoryError, ...) first
            pass
        d = lib.tn_safetensors_load(os.fsencode(f))
    else:
        data = f.read() if hasattr(f, "read") else bytes(f)
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
