"""torch.set_printoptions over the C printer's knobs (tn_set_printoptions), and
get_printoptions / printoptions (PyTorch 2's torch._tensor_str helpers)."""
import contextlib
import math

from . import _C
from ._C import lib
from ._core import _raise

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]

_NONE = -(1 << 63)      # TN_NONE


def _opt_int(v, name):
    if v is None:
        return _NONE
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"set_printoptions(): {name} must be an int or None, not {type(v).__name__}")
    return v


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """As torch.set_printoptions: each option left as None keeps its value, except
    sci_mode (None: chosen from the values); profile ('default', 'short', 'full') is
    applied first. threshold may be math.inf. Raises on a negative or unknown value,
    where PyTorch would fail later or ignore it."""
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise TypeError(f"set_printoptions(): threshold must be a number or None, not {type(threshold).__name__}")
    if profile is not None and not isinstance(profile, str):
        raise TypeError(f"set_printoptions(): profile must be a str or None, not {type(profile).__name__}")
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions(): sci_mode must be a bool or None, not {type(sci_mode).__name__}")
    o = _C.tn_print_options(_opt_int(precision, "precision"), math.nan if threshold is None else float(threshold),
                            _opt_int(edgeitems, "edgeitems"), _opt_int(linewidth, "linewidth"),
                            None if profile is None else profile.encode(), -1 if sci_mode is None else int(sci_mode))
    if lib.tn_set_printoptions_opts(o):
        _raise()


def get_printoptions():
    """The options in force, as a dict (precision, threshold, edgeitems, linewidth, sci_mode)."""
    o = _C.tn_print_options()
    lib.tn_get_printoptions(_C.ctypes.byref(o))
    threshold = o.threshold if math.isinf(o.threshold) or o.threshold != int(o.threshold) else int(o.threshold)
    return {"precision": o.precision, "threshold": threshold, "edgeitems": o.edgeitems, "linewidth": o.linewidth,
            "sci_mode": None if o.sci_mode < 0 else bool(o.sci_mode)}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Set print options for the block, restoring the previous ones after."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)
