"""torch.onnx: importable, so that programs that import it for an optional export step
run; exporting a model to ONNX is not implemented (``export`` raises, naming the way out)."""

__all__ = ["export", "is_in_onnx_export"]


def is_in_onnx_export():
    """False: no ONNX export is ever under way here."""
    return False


def export(model, args=(), f=None, *a, **k):
    """Raises: ONNX export is not implemented in tensor.h's package (save the state dict
    with tensor.save and export from PyTorch, which reads the same .pt file)."""
    raise RuntimeError("tensor.onnx.export: exporting to ONNX is not implemented; save the model's state_dict "
                       "with tensor.save (PyTorch's .pt format) and export it from PyTorch")
