"""torch.linalg: the parts this package has (the rest of linear algebra is tensor.<name>)."""
from ._ops import linalg_cross as cross, matmul

__all__ = ["cross", "matmul"]
