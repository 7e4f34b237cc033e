"""torch.testing: assert_close (and the deprecated assert_allclose).

assert_close(actual, expected) compares tensors, Python numbers and (nested) sequences and
mappings of them as PyTorch's does: same type, then for tensors the same shape, device and
dtype (check_device / check_dtype), the strides with check_stride=True, then values close
within atol + rtol * |expected| (PyTorch's default tolerances per dtype when neither is
given; both or none). A failure raises AssertionError with PyTorch's message (mismatched
elements, the greatest absolute and relative differences and where), or ``msg`` (a string,
or a callable given the message). Scalars' messages name both values ("Expected 1.5 but got
1.0."), as PyTorch 2's do (1.13's leave that line out).
"""
import collections.abc
import numbers

from .._core import Tensor, _numpy, bfloat16, bool_, float16, float32, float64, tensor as _tensor

__all__ = ["assert_close", "assert_allclose"]

_DEFAULT_TOLERANCES = {float16: (1e-3, 1e-5), bfloat16: (1.6e-2, 1e-5), float32: (1.3e-6, 1e-5), float64: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed comparison: the exception type and the message, before ``msg`` applies."""

    def __init__(self, cls, message, pairing=False):
        super().__init__(message)
        self.cls, self.message, self.path, self.pairing = cls, message, None, pairing


def _type_name(x):
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else repr(type(x))


def _tolerances(*dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _make_msg(default_identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{default_identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _unravel(flat, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat % s)
        flat //= s
    return tuple(reversed(idx))


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    kinds = [float64 if isinstance(v, float) else None for v in (actual, expected)]
    rtol, atol = _tolerances(*kinds, rtol=rtol, atol=atol)
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    abs_diff = abs(actual - expected)
    if abs_diff <= atol + rtol * abs(expected):
        return
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    raise _Mismatch(AssertionError, _make_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                                              rel_diff, None, rtol))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    for name, a, b, check in (("shape", actual.shape, expected.shape, True),
                              ("device", actual.device, expected.device, check_device),
                              ("dtype", actual.dtype, expected.dtype, check_dtype)):
        if check and a != b:
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.")
    if check_stride and actual.numel() and actual.stride() != expected.stride():
        raise _Mismatch(AssertionError, f"The values for attribute 'stride()' do not match: "
                                        f"{actual.stride()} != {expected.stride()}.")
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol)
    actual, expected = actual.detach().cpu(), expected.detach().cpu()
    cmp = float64 if actual.dtype.is_floating_point or expected.dtype.is_floating_point else None
    a, b = (actual.to(cmp), expected.to(cmp)) if cmp else (actual.long(), expected.long())
    matches = a.isclose(b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _make_scalar_tensor_msg(a.item(), b.item(), rtol, atol))
    mismatches = ~matches
    total, n = int(mismatches.sum().item()), mismatches.numel()
    extra = f"Mismatched elements: {total} / {n} ({total / n:.1%})"
    af, bf, ok = a.flatten(), b.flatten(), matches.flatten()
    abs_diff = (af - bf).abs()
    abs_diff[ok] = 0
    max_abs, abs_i = abs_diff.max(0)
    rel_diff = abs_diff / bf.abs()
    rel_diff[ok] = 0
    max_rel, rel_i = rel_diff.max(0)
    shape = tuple(a.shape)
    raise _Mismatch(AssertionError, _make_msg("Tensor-likes", extra, max_abs.item(), _unravel(abs_i.item(), shape), atol,
                                              max_rel.item(), _unravel(rel_i.item(), shape), rtol))


def _make_scalar_tensor_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None, rtol)


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, bool) or isinstance(x, bool)


def _compare(actual, expected, path, **kw):
    np = _numpy()
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        return _compare_tensors(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"], kw["check_device"],
                                kw["check_dtype"], kw["check_stride"])
    if np is not None and isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        return _compare_tensors(_tensor(actual), _tensor(expected), kw["rtol"], kw["atol"], kw["equal_nan"], False,
                                kw["check_dtype"], False)
    if (isinstance(actual, (str, bytes)) or isinstance(expected, (str, bytes))
            or isinstance(actual, Tensor) or isinstance(expected, Tensor)):
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_name(actual)} "
                                   f"and {_type_name(expected)}.", True)
    if isinstance(actual, collections.abc.Sequence) and isinstance(expected, collections.abc.Sequence):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", True)
        for i, (a, b) in enumerate(zip(actual, expected)):
            _compare_item(a, b, path + [i], kw)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        ka, kb = set(actual.keys()), set(expected.keys())
        if ka != kb:
            missing, extra = sorted(kb - ka, key=repr), sorted(ka - kb, key=repr)
            raise _Mismatch(AssertionError, ("The keys of the mappings do not match:\n"
                            + (f"Missing keys in the actual mapping: {missing}\n" if missing else "")
                            + (f"Additional keys in the actual mapping: {extra}" if extra else "")).rstrip(), True)
        for k in sorted(ka, key=repr) if not isinstance(actual, dict) else actual.keys():
            _compare_item(actual[k], expected[k], path + [k], kw)
        return
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"], kw["check_dtype"])
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {_type_name(actual)} "
                               f"and {_type_name(expected)}.", True)


def _compare_item(a, b, path, kw):
    try:
        _compare(a, b, path, **kw)
    except _Mismatch as m:
        if m.path is None and not m.pairing:
            m.path = path
        raise


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless actual and expected are close (see the module's doc)."""
    __tracebackhide__ = True
    try:
        _compare(actual, expected, [], rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                 check_dtype=check_dtype, check_stride=check_stride)
    except _Mismatch as m:
        # as PyTorch's ErrorMeta.to_error: a failure found while pairing the inputs up (types,
        # lengths, keys) keeps its message; a str msg replaces the others whole, a callable
        # gets them with the item they are about
        text = m.message
        if m.path:
            text += f"\n\nThe failure occurred for item {''.join(str([k]) for k in m.path)}"
        if msg is not None and not m.pairing:
            text = msg if isinstance(msg, str) else msg(text)
        raise m.cls(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated in PyTorch in favour of assert_close: no dtype checks, NaNs equal."""
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=None, atol=None)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 msg=msg or None)

