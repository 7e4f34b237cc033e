"""DLPack: zero-copy both ways with NumPy and PyTorch (the same data pointer, writes seen on
the other side), the capsule protocol (consumed once; an unconsumed capsule frees its
tensor), strides and dtypes kept."""
import gc

import pytest

import tensor as tn

np = pytest.importorskip("numpy")


def test_numpy_both_ways():
    t = tn.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr() and a.shape == (2, 3) and a.dtype == np.float32
    assert a.tolist() == t.tolist()
    t[0, 0] = 42                          # one memory: the write shows through
    assert a[0, 0] == 42
    b = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]
    u = tn.from_dlpack(b)
    assert u.data_ptr() == b.ctypes.data and u.stride() == (4, 2) and u.dtype == tn.int64
    assert u.tolist() == b.tolist()
    u[2, 1] = -1
    assert b[2, 1] == -1
    for dt, want in [(np.float64, tn.float64), (np.int32, tn.int32), (np.uint8, tn.uint8), (np.float32, tn.float32),
                     (np.int8, tn.int8), (np.int16, tn.int16)]:
        x = np.ones((2, 2), dtype=dt)
        y = tn.from_dlpack(x)
        assert y.dtype == want and y.data_ptr() == x.ctypes.data
    with pytest.raises(RuntimeError, match="a dtype this library does not have"):
        tn.from_dlpack(np.ones(3, dtype=np.uint16))


def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    t = tn.randn(3, 4)
    tt = torch.utils.dlpack.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr() and tt.tolist() == t.tolist()
    tt.mul_(2)
    assert t.tolist() == tt.tolist()
    src = torch.arange(10.0)[::3]
    u = tn.from_dlpack(src)
    assert u.data_ptr() == src.data_ptr() and u.stride() == (3,) and u.tolist() == src.tolist()
    # the legacy capsule interface, both directions
    v = tn.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(src))
    assert v.data_ptr() == src.data_ptr()
    w = torch.utils.dlpack.from_dlpack(tn.utils.dlpack.to_dlpack(t))
    assert w.data_ptr() == t.data_ptr()


def test_capsule_protocol():
    t = tn.ones(4)
    assert t.__dlpack_device__() == (1, 0)
    cap = tn.utils.dlpack.to_dlpack(t)
    u = tn.from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="consumed only once"):
        tn.from_dlpack(cap)
    del u, cap
    gc.collect()
    live = tn.memory_stats()["live_tensors"]
    cap = tn.utils.dlpack.to_dlpack(tn.zeros(1000))   # never consumed: its destructor frees it
    assert tn.memory_stats()["live_tensors"] == live + 1
    del cap
    gc.collect()
    assert tn.memory_stats()["live_tensors"] == live
    g = tn.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        g.__dlpack__()
    np.from_dlpack(g.detach())
