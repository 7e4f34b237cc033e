"""torch.backends.openmp: whether the loaded library was built with OpenMP (its CPU
kernels then split work among torch.get_num_threads() threads)."""
import builtins

from .._C import lib

__all__ = ["is_available"]


def is_available():
    return builtins.bool(lib.tn_openmp_is_available())
