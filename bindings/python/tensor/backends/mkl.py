"""torch.backends.mkl: the library does not use MKL (its GEMM is its own, or cblas)."""

__all__ = ["is_available"]


def is_available():
    return False
