"""tensor.save / tensor.load: safetensors files (C section 15).

``save(obj, f)`` writes every tensor in ``obj`` as a safetensors tensor named by its
path in the object ("conv.weight", "state.0.exp_avg", "param_groups" values are not
tensors), so a flat state dict is an ordinary safetensors file any reader can open,
and an optimizer's state tensors carry the names of the C library's flat layout. The
object's shape (nested dicts, lists, tuples, and the non-tensor values: numbers,
strings, None, bools) goes into the file's metadata as JSON under
``"tensor.h/structure"``, which ``load`` uses to rebuild the object; a file without it
(written by tn_safetensors_save, tn_checkpoint_save or another safetensors writer)
loads as an ``OrderedDict`` of its tensors. Values of any other type are pickled into
the metadata, and ``load(weights_only=True)`` refuses those.
"""
import base64
import collections
import ctypes
import json
import math
import numbers
import os
import pickle

from ._C import lib
from ._core import Tensor, _borrow, _check_int, _raise

__all__ = ["save", "load"]

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


def _decode(node, tensors, weights_only):
    if not isinstance(node, dict):
        return node
    (kind, v), = node.items()
    if kind == "T":
        return tensors[v]
    if kind == "F":
        return float(v)
    if kind in ("D", "O"):
        out = collections.OrderedDict() if kind == "O" else {}
        for k, x in v:
            out[k] = _decode(x, tensors, weights_only)
        return out
    if kind == "L":
        return [_decode(x, tensors, weights_only) for x in v]
    if kind == "U":
        return tuple(_decode(x, tensors, weights_only) for x in v)
    if kind == "P":
        if weights_only:
            raise RuntimeError("tensor.load(weights_only=True): the file holds a pickled Python object; load it with "
                               "weights_only=False only if you trust its source")
        return pickle.loads(base64.b64decode(v))
    raise RuntimeError(f"tensor.load: unknown entry kind {kind!r} in the file's structure")


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


def load(f, map_location=None, pickle_module=None, *, weights_only=False, mmap=None, **pickle_load_args):
    """Reads what save wrote (or any safetensors file: an OrderedDict of its tensors).
    Tensors from a path alias the file's copy-on-write mapping; map_location is accepted
    and ignored (CPU)."""
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
    structure = json.loads(meta.decode())
    if structure.get("format") != _FORMAT:
        raise RuntimeError(f"tensor.load: structure format {structure.get('format')!r} is not known to this version")
    return _decode(structure["root"], tensors, weights_only)
