"""Errors raised in Python speak Python: the C library's hints that name C functions
(tn_no_grad_begin, tn_reshape, retain_graph = true, ...) reach a Python user in PyTorch's
words, and no message of these cases names a tn_ function as the remedy."""
import pytest

import tensor as tn


def _msg(fn):
    with pytest.raises(Exception) as e:
        fn()
    return str(e.value)


def test_inplace_on_leaf_says_no_grad():
    x = tn.ones(3, requires_grad=True)
    m = _msg(lambda: x.add_(1))
    assert "with torch.no_grad()" in m and "tn_no_grad_begin" not in m


def test_view_says_reshape():
    x = tn.ones(4, 6).t()
    m = _msg(lambda: x.view(24))
    assert ".reshape(...)" in m and "tn_reshape" not in m


def test_second_backward_says_retain_graph():
    x = tn.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    m = _msg(lambda: y.backward())
    assert "retain_graph=True" in m and "retain_graph = true" not in m


def test_bool_subtraction_says_logical_not():
    b = tn.tensor([True, False])
    m = _msg(lambda: b - b)
    assert "logical_not()" in m and "tn_logical" not in m
