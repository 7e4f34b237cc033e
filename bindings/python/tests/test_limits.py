"""Sizes, dims, conversions and processes at their limits (issue 18), from Python.

Output sizes whose byte counts overflow int64 raise RuntimeError instead of writing past a
buffer whose size wrapped (interpolate, Upsample, adaptive max pooling); a scale factor
whose output size does not fit int64 raises instead of converting undefinedly; shapes with
a 0 in them are legal whatever the other sizes; repeat/tile of 8-d tensors work; randperm
and softmax refuse the dtypes PyTorch refuses; a fork Pool after a big (OpenMP) op finishes.

Cases that crashed or hung before their fix run in a child interpreter with a timeout, so a
crash or a hang is one failed test. PyTorch (1.13) is the oracle where it is installed.
"""
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BINDINGS = os.path.join(HERE, "..")
sys.path.insert(0, BINDINGS)
import tensor as tn  # noqa: E402
import tensor.nn as nn  # noqa: E402
import tensor.nn.functional as F  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

P62, P40 = 2 ** 62, 2 ** 40


def run_child(code, timeout=120):
    """Runs code in a child interpreter (the package importable as `tn`); returns
    (exit status, stdout + stderr). A hang past timeout is an exit status of None."""
    prog = "import sys\nsys.path.insert(0, %r)\nimport tensor as tn\n" % BINDINGS + textwrap.dedent(code)
    try:
        p = subprocess.run([sys.executable, "-c", prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, env=os.environ.copy())
    except subprocess.TimeoutExpired as e:
        return None, (e.output or b"").decode(errors="replace")
    return p.returncode, p.stdout.decode(errors="replace")


def raises_in_child(expr, exc="RuntimeError", match=""):
    """expr must raise exc (with match in its message) in a child interpreter: a crash
    before the fix is a failed test, not a dead test run."""
    code = f"""
    import tensor.nn as nn
    import tensor.nn.functional as F
    x = tn.ones(1, 1, 2, 2)
    x1 = tn.ones(1, 1, 4)
    try:
        r = {expr}
    except {exc} as e:
        assert {match!r} in str(e), str(e)
        print("RAISED")
    else:
        print("NO ERROR", getattr(r, "shape", r))
    """
    rc, out = run_child(code)
    assert rc == 0 and "RAISED" in out, f"{expr}: exit {rc}\n{out}"


# ------------------------------------------------------------------------ sizes
@pytest.mark.parametrize("expr", [
    "F.interpolate(x, size=(2**62, 2**62))",
    "F.interpolate(x, size=(2**62, 2**62), mode='bilinear')",
    "F.interpolate(x, size=(2**62, 2))",
    "F.interpolate(x1, size=2**62)",
    "nn.Upsample(size=(2**62, 2**62))(x)",
    "F.upsample_nearest(x, size=(2**62, 2**62))",
    "F.adaptive_max_pool2d(x, (2**62, 2))",
    "F.adaptive_max_pool2d(x, (2**62, 2), return_indices=True)",
    "F.adaptive_max_pool1d(x1, 2**62)",
    "F.adaptive_avg_pool2d(x, (2**62, 2))",
    "nn.AdaptiveMaxPool2d((2, 2**62))(x)",
])
def test_output_size_overflow_raises(expr):
    raises_in_child(expr, match="too many elements")


@pytest.mark.parametrize("expr", [
    "F.interpolate(x, scale_factor=1e300)",
    "F.interpolate(x, scale_factor=1e300, mode='bilinear')",
    "F.interpolate(x, scale_factor=float('inf'))",
    "nn.Upsample(scale_factor=1e300)(x)",
])
def test_scale_factor_out_of_int64_raises(expr):
    raises_in_child(expr, match="out of the range of int64")


def test_ordinary_sizes_match_torch():
    x = tn.arange(16.).reshape(1, 1, 4, 4)
    y = F.interpolate(x, scale_factor=2)
    assert y.shape == (1, 1, 8, 8)
    assert y[0, 0, 7, 7].item() == 15 and y[0, 0, 0, 1].item() == 0
    v, i = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
    assert v.flatten().tolist() == [5, 7, 9, 11, 13, 15] and i.flatten().tolist() == [5, 7, 9, 11, 13, 15]
    if torch is not None:
        tx = torch.arange(16.).reshape(1, 1, 4, 4)
        assert F.interpolate(x, size=(5, 3), mode="bilinear").flatten().tolist() == pytest.approx(
            torch.nn.functional.interpolate(tx, size=(5, 3), mode="bilinear").flatten().tolist(), abs=1e-5)


@pytest.mark.parametrize("shape", [(P40, P40, 0), (0, P62, P62), (P62, 0, P62)])
def test_empty_tensors_with_huge_sizes(shape):
    z = tn.zeros(*shape)
    assert tuple(z.shape) == shape and z.numel() == 0 and z.is_contiguous()
    assert z.sum().item() == 0
    assert tuple((z + z).shape) == shape
    assert z.reshape(-1).shape == (0,)
    assert z.clone().numel() == 0


def test_empty_tensor_save_load(tmp_path):
    z = tn.zeros(0, P62, P62)
    path = str(tmp_path / "z.pt")
    tn.save({"z": z}, path)
    back = tn.load(path)["z"]
    assert tuple(back.shape) == (0, P62, P62) and back.numel() == 0 and back.is_contiguous()


def test_non_empty_overflowing_shapes_raise():
    for shape in [(P40, P40, 1), (3, P62, P62)]:
        with pytest.raises(RuntimeError, match="too many elements"):
            tn.zeros(*shape)


# ------------------------------------------------------------------------ 8-d tensors
def test_repeat_tile_8d():
    rc, out = run_child("""
    x = tn.ones([1] * 8)
    r = x.repeat(1, 1, 1, 1, 1, 1, 2, 2)
    t = x.tile((1, 1, 1, 1, 1, 1, 2, 2))
    print(tuple(r.shape), r.sum().item(), tuple(t.shape), t.sum().item())
    """)
    assert rc == 0, out
    assert "(1, 1, 1, 1, 1, 1, 2, 2) 4.0 (1, 1, 1, 1, 1, 1, 2, 2) 4.0" in out


def test_repeat_8d_values_and_grad():
    rc, out = run_child("""
    x = tn.arange(6.).reshape(2, 1, 1, 1, 1, 1, 1, 3).requires_grad_()
    r = x.repeat(2, 1, 1, 1, 1, 1, 2, 1)
    r.sum().backward()
    print("RESULT", tuple(r.shape), r.reshape(8, 3).tolist(), x.grad.flatten().tolist())
    """)
    assert rc == 0, out
    expect = [[float((a % 2) * 3 + c) for c in range(3)] for a in range(4) for b in range(2)]
    assert f"RESULT (4, 1, 1, 1, 1, 1, 2, 3) {expect!r} {[4.0] * 6!r}" in out, out
    if torch is not None:
        tx = torch.arange(6.).reshape(2, 1, 1, 1, 1, 1, 1, 3)
        assert tx.repeat(2, 1, 1, 1, 1, 1, 2, 1).reshape(8, 3).tolist() == expect


# ------------------------------------------------------------------------ dtypes
def test_randperm_dtype_range():
    with pytest.raises(RuntimeError, match="uint8_t without overflow"):
        tn.randperm(300, dtype=tn.uint8)
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        tn.randperm(3, dtype=tn.bool)
    p = tn.randperm(256, dtype=tn.uint8)
    assert sorted(p.tolist()) == list(range(256))
    if torch is not None:
        with pytest.raises(RuntimeError, match="uint8_t without overflow"):
            torch.randperm(300, dtype=torch.uint8)


@pytest.mark.parametrize("fn,dim,shape,kernel", [
    ("softmax", 0, (3,), "softmax_lastdim_kernel_impl"),
    ("log_softmax", 0, (3,), "log_softmax_lastdim_kernel_impl"),
    ("softmax", 0, (3, 2), "softmax_kernel_impl"),
    ("softmax", 1, (3, 2), "softmax_lastdim_kernel_impl"),
    ("softmin", 0, (3,), "softmax_lastdim_kernel_impl"),
])
def test_softmax_of_integers_raises(fn, dim, shape, kernel):
    x = tn.ones(*shape, dtype=tn.long)
    with pytest.raises(RuntimeError, match=f'"{kernel}" not implemented for \'Long\''):
        getattr(F, fn)(x, dim)
    if torch is not None:
        with pytest.raises(RuntimeError, match=f'"{kernel}" not implemented for \'Long\''):
            getattr(torch.nn.functional, fn)(torch.ones(*shape, dtype=torch.long), dim)
    y = getattr(F, fn)(x, dim, dtype=tn.float32)   # converted first: works
    assert y.dtype == tn.float32 and tuple(y.shape) == shape


def test_softmax_of_empty_integers():
    y = F.softmax(tn.ones(0, dtype=tn.long), 0)
    assert y.dtype == tn.long and y.numel() == 0


# ------------------------------------------------------------------------ processes
def test_fork_pool_after_big_op():
    """A fork Pool whose workers run OpenMP-sized ops after the parent ran them (the
    workers' first parallel region used to wait forever for the parent's threads)."""
    rc, out = run_child("""
    import multiprocessing as mp
    tn.set_num_threads(2)
    x = tn.ones(1 << 20)
    assert (x + x).sum().item() == 2 * (1 << 20)
    m = tn.ones(256, 256)
    assert (m @ m).sum().item() == 256 ** 3

    def work(i):
        y = tn.ones(1 << 20) * i
        return y.sum().item() + (tn.ones(256, 256) @ tn.ones(256, 256)).sum().item(), tn.get_num_threads()

    with mp.get_context("fork").Pool(2) as pool:
        res = pool.map_async(work, range(4)).get(timeout=60)
    print("RESULT", res, tn.get_num_threads())
    """, timeout=150)
    assert rc == 0, out
    expect = [(float(i * (1 << 20) + 256 ** 3), 1) for i in range(4)]
    assert f"RESULT {expect!r} 2" in out, out
