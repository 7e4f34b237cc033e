"""torch.onnx's export, and a runner for ONNX models (a tensor.h extension).

``export(model, args, f, input_names=, output_names=, dynamic_axes=, opset_version=)``
has torch.onnx.export's signature: the model (a Module in eval mode, a function, or a
ScriptModule from tensor.jit.trace) is traced on args (tensor.jit.trace) and written by
C's ``tn_onnx_export`` as an ONNX model, opset 17, that ``onnx.checker`` accepts.

``load(path)`` is not a PyTorch API (PyTorch runs ONNX files through onnxruntime): it reads
an ONNX model (from torch.onnx.export or any exporter; static input shapes) into a graph
and returns a callable ``tensor.jit.ScriptModule`` that runs it with this library's ops
(C's ``tn_onnx_load`` + ``tn_graph_run``). ``load_tensor(path)`` reads a serialized
TensorProto (ONNX's test data). docs/deploy.md lists the operators on both sides.
"""
import ctypes
import io
import os
import tempfile

from .._C import lib
from .._core import Tensor, _raise, _wrap

__all__ = ["export", "load", "load_tensor", "TrainingMode", "OperatorExportTypes", "is_in_onnx_export"]

_OPSET = 17


class TrainingMode:
    """torch.onnx.TrainingMode: only EVAL is exported (a graph is traced in eval mode)."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes:
    """torch.onnx.OperatorExportTypes: only ONNX is supported."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


_exporting = [False]


def is_in_onnx_export():
    """torch.onnx.is_in_onnx_export: True while export traces the model."""
    return _exporting[0]


def _names(what, names):
    if names is None:
        return None
    names = list(names)
    for n in names:
        if not isinstance(n, str) or not n or any(ch in n for ch in ",'\"") or n != n.strip():
            raise ValueError(f"tensor.onnx.export: {what} must be non-empty strings without commas or quotes, got {n!r}")
    return ",".join(names)


def export(model, args, f, export_params=True, verbose=False, training=TrainingMode.EVAL, input_names=None,
           output_names=None, operator_export_type=OperatorExportTypes.ONNX, opset_version=None,
           do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None, custom_opsets=None,
           export_modules_as_functions=False):
    """torch.onnx.export: trace model on args and write an ONNX model (opset 17) to f (a path or a
    binary file object). dynamic_axes may mark dim 0 of one input (the batch)."""
    from ..jit import ScriptModule, _trace_handle
    from ..nn import Module
    if training not in (TrainingMode.EVAL, None):
        raise NotImplementedError("tensor.onnx.export: only training=TrainingMode.EVAL is supported (the graph is traced in eval mode)")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise NotImplementedError("tensor.onnx.export: only operator_export_type=OperatorExportTypes.ONNX is supported")
    if not export_params:
        raise NotImplementedError("tensor.onnx.export: export_params=False is not supported (the parameters are written as initializers)")
    if keep_initializers_as_inputs:
        raise NotImplementedError("tensor.onnx.export: keep_initializers_as_inputs=True is not supported")
    if custom_opsets or export_modules_as_functions:
        raise NotImplementedError("tensor.onnx.export: custom_opsets and export_modules_as_functions are not supported")
    opset = _OPSET if opset_version is None else opset_version
    if isinstance(args, Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    if isinstance(args, tuple) and args and isinstance(args[-1], dict):   # torch: trailing kwargs dict
        if args[-1]:
            raise NotImplementedError("tensor.onnx.export: keyword arguments to the model are not supported")
        args = args[:-1]
    if not isinstance(args, tuple) or not all(isinstance(a, Tensor) for a in args):
        raise TypeError("tensor.onnx.export: args must be a Tensor or a tuple of Tensors")
    in_names = _names("input_names", input_names)
    out_names = _names("output_names", output_names)
    owned = None
    if isinstance(model, ScriptModule):
        g = model._handle()
    else:
        was_training = isinstance(model, Module) and model.training
        if was_training:
            model.eval()
        _exporting[0] = True
        try:
            g = owned = _trace_handle(model, args, strict=False, what="tensor.onnx.export")
        finally:
            _exporting[0] = False
            if was_training:
                model.train()
    try:
        if dynamic_axes:
            names = input_names if input_names is not None else [f"input{i}" for i in range(len(args))]
            outs = list(output_names or [])
            for name, axes in dynamic_axes.items():
                ax = list(axes.keys()) if isinstance(axes, dict) else list(axes)
                if name in outs:
                    if ax != [0]:
                        raise NotImplementedError(f"tensor.onnx.export: dynamic_axes for output {name!r}: only dim 0 (the batch) can be dynamic")
                    continue
                if name not in names:
                    raise ValueError(f"tensor.onnx.export: dynamic_axes names {name!r}, which is not an input or output name")
                if ax != [0]:
                    raise NotImplementedError(f"tensor.onnx.export: dynamic_axes for {name!r} = {ax}: only dim 0 (the batch) of one input can be dynamic")
                if lib.tn_graph_set_dynamic(g, names.index(name), 0) != 0:
                    _raise()
        opts = f"opset_version={int(opset)}"
        if in_names:
            opts += f", input_names='{in_names}'"
        if out_names:
            opts += f", output_names='{out_names}'"
        if isinstance(f, (str, bytes, os.PathLike)):
            path = os.fsdecode(f)
            if lib.tn_onnx_export_str(g, path.encode(), opts.encode()) != 0:
                _raise()
        else:   # a file object: written to a temporary file, then copied
            fd, tmp = tempfile.mkstemp(suffix=".onnx")
            os.close(fd)
            try:
                if lib.tn_onnx_export_str(g, tmp.encode(), opts.encode()) != 0:
                    _raise()
                with open(tmp, "rb") as src:
                    f.write(src.read())
            finally:
                os.unlink(tmp)
        if verbose:
            print(_graph_text(g))
    finally:
        if owned:
            lib.tn_graph_free(owned)


def _graph_text(g):
    p = lib.tn_graph_str(g)
    if not p:
        _raise()
    try:
        return ctypes.string_at(p).decode()
    finally:
        lib.tn_string_free(p)


def load(f):
    """Not in torch.onnx (a tensor.h extension): an ONNX model file (a path, bytes, or a binary
    file object) as a callable tensor.jit.ScriptModule running it with this library's ops."""
    from ..jit import ScriptModule
    if isinstance(f, (bytes, bytearray)):
        data = bytes(f)
        g = lib.tn_onnx_load_buffer(data, len(data))
    elif isinstance(f, (str, os.PathLike)):
        g = lib.tn_onnx_load(os.fsencode(f))
    elif isinstance(f, io.IOBase) or hasattr(f, "read"):
        data = f.read()
        g = lib.tn_onnx_load_buffer(data, len(data))
    else:
        raise TypeError(f"tensor.onnx.load: expected a path, bytes or a file object, got {type(f).__name__}")
    if not g:
        _raise()
    return ScriptModule(g, name="OnnxModule")


def load_tensor(f):
    """Not in torch.onnx: a serialized ONNX TensorProto (a path or bytes) as a Tensor."""
    if isinstance(f, (bytes, bytearray)):
        data = bytes(f)
        t = lib.tn_onnx_load_tensor_buffer(data, len(data))
    else:
        t = lib.tn_onnx_load_tensor(os.fsencode(f))
    if not t:
        _raise()
    return _wrap(t)
