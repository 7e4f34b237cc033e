"""tensor.utils.cpp_extension: PyTorch's module name for tensor.utils.c_extension.

``load(name, sources, ...)`` and ``load_inline(name, cpp_sources=..., functions=...)`` as
in PyTorch; the sources are C, C++ (functions bound by their C names: declare them
``extern "C"``, or leave them unoverloaded) or CUDA, compiled against tensor.h."""
from .c_extension import get_default_build_root, include_paths, load, load_inline  # noqa: F401

__all__ = ["load", "load_inline", "include_paths", "get_default_build_root"]
