"""torch.autograd.anomaly_mode over tn_set_detect_anomaly.

In anomaly mode a backward checks every gradient a node produces and fails on the
first NaN, naming the node: ``... function 'DivBackward0' returned nan values in its
0th output``. PyTorch also prints the forward traceback of that node; tensor.h has no
tracebacks. The switch is process-wide, as PyTorch's.
"""
from .._C import lib

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


def is_anomaly_enabled():
    return bool(lib.tn_is_anomaly_enabled())


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on for its body."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)
        self.prev = is_anomaly_enabled()

    def __enter__(self):
        self.prev = is_anomaly_enabled()
        lib.tn_set_detect_anomaly(self.check_nan)
        return self

    def __exit__(self, *exc):
        lib.tn_set_detect_anomaly(self.prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` switches anomaly detection on at once; used in a
    ``with`` statement it restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        lib.tn_set_detect_anomaly(bool(mode) and bool(check_nan))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.tn_set_detect_anomaly(self.prev)
        return False
