"""tensor.utils.c_extension / cpp_extension: C (and C++, CUDA) compiled against tensor.h and
called from Python with the binding derived from the declarations; autograd across the
boundary; the build cache and its lock; the LLTM example of PyTorch's extension tutorial."""
import math
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import tensor
from tensor.utils import c_extension, cpp_extension

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HAVE_CC = shutil.which(os.environ.get("CC", "cc")) is not None
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")

OPS = r"""
#include "tensor.h"
#include <string.h>
tn_tensor *add(tn_tensor *a, tn_tensor *b) { return tn_add(a, b); }
tn_tensor *same(tn_tensor *x) { return x; }                       /* no copy: the caller's own tensor */
tn_tensor *scaled_sum(tn_tensor *const *xs, int n, double scale) {
    tn_tensor *s = tn_zeros_like(xs[0]);
    for (int i = 0; i < n; i++) s = tn_add(s, xs[i]);
    return tn_mul_scalar(s, scale);
}
int64_t twice(int64_t x) { return 2 * x; }
double half(double x) { return x / 2; }
bool is_even(int x) { return x % 2 == 0; }
int64_t length(const char *s) { return (int64_t)strlen(s); }
void nothing(void) {}
int64_t live_tensors(void) { return tn_memory_stats_get().live_tensors; }
int64_t refuse(int64_t x) { if (x < 0) tn_error("refuse: x must be >= 0, got %lld", (long long)x); return x; }
int neg_exp(tn_tensor *x, tn_tensor *out[2]) { out[0] = tn_neg(x); out[1] = tn_exp(x); return out[1] ? 0 : -1; }
int half_done(tn_tensor *x, tn_tensor *out[2]) { out[0] = tn_neg(x); out[1] = NULL; return 0; }
tn_tensor *maybe(tn_tensor *x) { return x ? tn_neg(x) : tn_zeros(TN_SHAPE(1), TN_F32); }
static int helper(void) { return 1; }
int uses_helper(void) { return helper(); }
void *not_bindable(void *p) { return p; }

/* softclip: y = x / (1 + |x|) with a hand-written backward, a differentiable op in C */
static tn_tensor *softclip_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_ctx_save(ctx, in[0]);
    return tn_div(in[0], tn_add_scalar(tn_abs(in[0]), 1));
}
static int softclip_bwd(tn_ctx *ctx, tn_tensor *g, tn_tensor **gi, int n, void *user) {
    (void)n; (void)user;
    gi[0] = tn_div(g, tn_square(tn_add_scalar(tn_abs(tn_ctx_saved(ctx, 0)), 1)));
    return 0;
}
tn_tensor *softclip(tn_tensor *x) { return tn_custom_op("SoftclipBackward", softclip_fwd, softclip_bwd, &x, 1, NULL); }
/* made of library ops: differentiable as it stands */
tn_tensor *gelu_tanh(tn_tensor *x) {
    tn_tensor *inner = tn_mul_scalar(tn_add(x, tn_mul_scalar(tn_pow_scalar(x, 3), 0.044715)), sqrt(2.0 / 3.141592653589793));
    return tn_mul(tn_mul_scalar(x, 0.5), tn_add_scalar(tn_tanh(inner), 1));
}
"""


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    d = tmp_path_factory.mktemp("ops")
    return c_extension.load_inline("ops", c_sources=OPS, build_directory=str(d), extra_ldflags=["-lm"])


def test_values_and_types(ops):
    a, b = tensor.randn(3, 4), tensor.randn(4)
    assert tensor.equal(ops.add(a, b), a + b)
    assert ops.twice(21) == 42 and ops.half(3.0) == 1.5 and ops.is_even(4) is True and ops.is_even(3) is False
    assert ops.length("héllo") == 6 and ops.nothing() is None
    xs = [tensor.randn(2, 2) for _ in range(3)]
    assert tensor.allclose(ops.scaled_sum(xs, 0.5), (xs[0] + xs[1] + xs[2]) * 0.5)
    n, e = ops.neg_exp(b)
    assert tensor.equal(n, -b) and tensor.allclose(e, b.exp())
    assert tensor.equal(ops.maybe(None), tensor.zeros(1))
    assert ops.uses_helper() == 1
    assert not hasattr(ops, "helper") and not hasattr(ops, "not_bindable")   # static; no mapping
    assert ops.add.__doc__ == "add(a, b) -> Tensor" and "tuple of 2 Tensors" in ops.neg_exp.__doc__
    assert ops.add(a=a, b=b).shape == (3, 4)                                   # keyword arguments by C name


def test_no_copies_one_library(ops):
    x = tensor.randn(5)
    y = ops.same(x)
    assert y.data_ptr() == x.data_ptr()
    y[0] = 7.0
    assert x[0].item() == 7.0
    # one allocator: the extension counts the tensors the package made, and its temporaries die with the call
    before = tensor._C.lib.tn_memory_stats_get().live_tensors
    assert ops.live_tensors() == before
    r = ops.scaled_sum([x, x, x], 1.0)
    assert tensor._C.lib.tn_memory_stats_get().live_tensors == before + 1
    del r
    assert tensor._C.lib.tn_memory_stats_get().live_tensors == before


def test_errors(ops):
    with pytest.raises(RuntimeError, match=r"must match the size of tensor b"):
        ops.add(tensor.ones(2), tensor.ones(3))
    with pytest.raises(RuntimeError, match="x must be >= 0, got -4"):
        ops.refuse(-4)
    assert ops.refuse(4) == 4                           # the error state is not sticky across calls
    with pytest.raises(TypeError, match="argument 'a' must be Tensor"):
        ops.add(1, tensor.ones(1))
    with pytest.raises(TypeError, match="argument 'x' must be int"):
        ops.twice(2.5)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        ops.add(tensor.ones(1), tensor.ones(1), tensor.ones(1))
    with pytest.raises(TypeError, match="missing required argument 'b'"):
        ops.add(tensor.ones(1))
    with pytest.raises(RuntimeError, match="left 1 of its 2 outputs NULL"):
        ops.half_done(tensor.ones(1))


def test_autograd_across_the_boundary(ops):
    x = tensor.randn(4, 3, dtype=tensor.float64, requires_grad=True)
    y = ops.softclip(x)
    assert type(y.grad_fn).__name__ == "SoftclipBackward" or "Softclip" in repr(y.grad_fn)
    assert tensor.autograd.gradcheck(ops.softclip, (x,))
    assert tensor.autograd.gradgradcheck(ops.softclip, (x,))
    assert tensor.autograd.gradcheck(ops.gelu_tanh, (x,))
    g = tensor.autograd.grad(ops.gelu_tanh(x).sum(), x)[0]
    ref = tensor.nn.functional.gelu(x, approximate="tanh")
    assert tensor.allclose(ops.gelu_tanh(x), ref) and tensor.allclose(g, tensor.autograd.grad(ref.sum(), x)[0])


def test_compile_error_is_the_compilers_message(tmp_path):
    with pytest.raises(RuntimeError) as e:
        c_extension.load_inline("broken", c_sources="tn_tensor *f(tn_tensor *x) { return tn_no_such_op(x) }",
                                build_directory=str(tmp_path))
    msg = str(e.value)
    assert "Error building extension 'broken'" in msg and "error" in msg and "tn_no_such_op" in msg


def test_named_functions_and_their_errors(tmp_path):
    m = c_extension.load_inline("some", c_sources=OPS, functions={"twice": "Doubles x."}, build_directory=str(tmp_path))
    assert m.twice(2) == 4 and m.twice.__doc__.startswith("Doubles x.") and not hasattr(m, "add")
    with pytest.raises(AttributeError, match="no public C function named 'nope'"):
        c_extension.load_inline("some", c_sources=OPS, functions=["nope"], build_directory=str(tmp_path))
    with pytest.raises(TypeError, match="cannot bind not_bindable"):
        c_extension.load_inline("some", c_sources=OPS, functions=["not_bindable"], build_directory=str(tmp_path))
    with pytest.raises(ValueError, match="valid identifier"):
        c_extension.load("bad name", [os.path.join(REPO, "examples", "extension", "lltm.c")])
    with pytest.raises(FileNotFoundError):
        c_extension.load("missing", ["/nonexistent/x.c"], build_directory=str(tmp_path))


@pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None, reason="no C++ compiler")
def test_cpp_sources(tmp_path):
    src = textwrap.dedent("""
        #include <vector>
        extern "C" tn_tensor *sum_all(tn_tensor *const *xs, int n) {
            std::vector<tn_tensor *> v(xs, xs + n);
            return tn_sum(tn_stack(v.data(), (int)v.size()));
        }
        double mangled_half(double x) { return x / 2; }         // no extern "C": found by its mangled name
    """)
    m = cpp_extension.load_inline("cppext", cpp_sources=src, build_directory=str(tmp_path))
    xs = [tensor.ones(2), tensor.full((2,), 2.0)]
    assert m.sum_all(xs).item() == 6.0 and m.mangled_half(5) == 2.5


def test_second_process_reuses_the_build_and_the_lock(tmp_path):
    src = "int64_t seven(void) { return 7; }\n"
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {os.path.join(REPO, 'bindings', 'python')!r})
        from tensor.utils.c_extension import load_inline
        m = load_inline("cached", c_sources={src!r}, build_directory={str(tmp_path)!r})
        print(m.seven(), m._rebuilt)
    """)
    env = dict(os.environ)
    # two at once: the lock lets one build, the other waits and loads that build
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = sorted(p.communicate(timeout=120)[0].split() for p in procs)
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [["7", "False"], ["7", "True"]]
    third = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env, timeout=120)
    assert third.stdout.split() == ["7", "False"]
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".so")]) == 1
    # a change of the source is a new build
    m = c_extension.load_inline("cached", c_sources=src.replace("7", "8").replace("seven", "eight"),
                                build_directory=str(tmp_path))
    assert m.eight() == 8 and m._rebuilt


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_cuda_source_builds_and_loads(tmp_path):
    src = textwrap.dedent("""
        __global__ static void scale_kernel(float *x, long long n, float a) {
            long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
            if (i < n) x[i] *= a;
        }
        extern "C" tn_tensor *scale_(tn_tensor *x, double a) {       // in place, on the GPU unit's default stream
            if (tn_get_device(x) != TN_CUDA || tn_get_dtype(x) != TN_F32 || !tn_is_contiguous(x)) {
                tn_error("scale_: expected a contiguous float32 CUDA tensor");
                return NULL;
            }
            long long n = tn_numel(x);
            scale_kernel<<<(unsigned)((n + 255) / 256), 256>>>((float *)tn_data_ptr(x), n, (float)a);
            return x;
        }
    """)
    m = cpp_extension.load_inline("cuext", cuda_sources=src, build_directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="expected a contiguous float32 CUDA tensor"):
        m.scale_(tensor.ones(3), 2.0)
    if tensor.cuda.is_available():
        x = tensor.ones(1000, device="cuda")
        assert m.scale_(x, 3.0).sum().item() == 3000.0


# --------------------------------------------------------------------------- the LLTM example
@pytest.fixture(scope="module")
def lltm(tmp_path_factory):
    os.environ.setdefault("TENSOR_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("ext")))
    sys.path.insert(0, os.path.join(REPO, "examples", "extension"))
    try:
        import lltm as mod
    finally:
        sys.path.pop(0)
    return mod


def test_lltm_gradcheck(lltm):
    tensor.manual_seed(0)
    b, f, s = 3, 4, 5
    args = (tensor.randn(b, f, dtype=tensor.float64, requires_grad=True),
            tensor.randn(3 * s, f + s, dtype=tensor.float64, requires_grad=True),
            tensor.randn(3 * s, dtype=tensor.float64, requires_grad=True),
            tensor.randn(b, s, dtype=tensor.float64, requires_grad=True),
            tensor.randn(b, s, dtype=tensor.float64, requires_grad=True))
    assert tensor.autograd.gradcheck(lltm.LLTMFunction.apply, args)
    assert tensor.autograd.gradcheck(lltm.lltm_c.lltm_cell, args)           # the fused op: C loops both ways
    out = lltm.lltm_c.lltm_cell(*args)
    assert out.shape == (2, b, s) and "LLTMBackward" in repr(out.grad_fn)
    h, c = lltm.LLTMFunction.apply(*args)
    assert tensor.allclose(out[0], h, rtol=1e-12, atol=1e-14) and tensor.allclose(out[1], c, rtol=1e-12, atol=1e-14)


def test_lltm_matches_python_and_trains(lltm):
    c_losses, c_cell = lltm.train(lltm.LLTM, steps=10, dtype=tensor.float64)
    fused_losses, fused_cell = lltm.train(lltm.LLTMFused, steps=10, dtype=tensor.float64)
    py_losses, py_cell = lltm.train(lltm.LLTMPython, steps=10, dtype=tensor.float64)
    assert max(abs(a - b) for a, b in zip(c_losses, py_losses)) < 1e-10
    assert max(abs(a - b) for a, b in zip(fused_losses, py_losses)) < 1e-10
    for p, q in zip(fused_cell.parameters(), py_cell.parameters()):
        assert tensor.allclose(p, q, rtol=1e-9, atol=1e-12)
    assert c_losses[-1] < c_losses[0]
    for p, q in zip(c_cell.parameters(), py_cell.parameters()):
        assert tensor.allclose(p, q, rtol=1e-9, atol=1e-12)


def test_lltm_against_pytorch(lltm):
    torch = pytest.importorskip("torch")
    tensor.manual_seed(1)
    b, f, s = 4, 6, 8
    mine = [tensor.randn(*shape, dtype=tensor.float64, requires_grad=True)
            for shape in [(b, f), (3 * s, f + s), (3 * s,), (b, s), (b, s)]]
    ref = [torch.tensor(t.detach().tolist(), dtype=torch.float64, requires_grad=True) for t in mine]
    h, c = lltm.LLTMFunction.apply(*mine)
    (h.sum() + (c * c).sum()).backward()
    X = torch.cat([ref[3], ref[0]], 1)
    gates = torch.nn.functional.linear(X, ref[1], ref[2]).chunk(3, 1)
    new_c = ref[4] + torch.nn.functional.elu(gates[2]) * torch.sigmoid(gates[0])
    new_h = torch.tanh(new_c) * torch.sigmoid(gates[1])
    (new_h.sum() + (new_c * new_c).sum()).backward()
    assert math.isclose(h.sum().item(), new_h.sum().item(), rel_tol=1e-12)
    for t, r in zip(mine, ref):
        assert tensor.allclose(t.grad, tensor.tensor(r.grad.tolist(), dtype=tensor.float64), rtol=1e-10, atol=1e-12)


def test_example_script_runs(lltm):
    r = subprocess.run([sys.executable, os.path.join(REPO, "examples", "extension", "lltm.py")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "bindings", "python")))
    assert r.returncode == 0, r.stdout
    assert "largest difference of the losses" in r.stdout


# --------------------------------------------------------------------------- several outputs of a Function
class _MinMax(tensor.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        lo, hi = x.min(1).values, x.max(1).values
        ctx.save_for_backward(x)
        idx = x.argmax(1)
        ctx.mark_non_differentiable(idx)
        return lo * scale, hi.double(), idx, "a label"

    @staticmethod
    def backward(ctx, g_lo, g_hi, g_idx, g_label):
        (x,) = ctx.saved_tensors
        assert g_label is None and g_idx.dtype == tensor.int64 and not g_idx.any()
        assert g_hi.dtype == tensor.float64 and g_lo.dtype == tensor.float32
        grad = tensor.zeros_like(x)
        grad.scatter_(1, x.argmin(1, keepdim=True), (g_lo * 2.0).unsqueeze(1))
        grad.scatter_add_(1, x.argmax(1, keepdim=True), g_hi.float().unsqueeze(1))
        return grad, None


def test_function_with_several_outputs():
    x = tensor.randn(3, 5, requires_grad=True)
    lo, hi, idx, label = _MinMax.apply(x, 2.0)
    assert label == "a label" and idx.dtype == tensor.int64 and not idx.requires_grad
    assert hi.dtype == tensor.float64 and lo.requires_grad and hi.requires_grad
    assert tensor.equal(lo, x.min(1).values * 2) and tensor.equal(idx, x.argmax(1))
    (lo.sum() * 3 + hi.sum()).backward()
    ref = tensor.zeros(3, 5)
    ref.scatter_(1, x.argmin(1, keepdim=True), tensor.full((3, 1), 6.0))
    ref.scatter_add_(1, x.argmax(1, keepdim=True), tensor.ones(3, 1))
    assert tensor.equal(x.grad, ref)
    x.grad = None
    lo, *_ = _MinMax.apply(x, 2.0)          # an output left unused gets a zero gradient
    lo.sum().backward()
    assert tensor.equal(x.grad.sum(1), tensor.full((3,), 2.0))


def test_several_outputs_leave_nothing_behind():
    from tensor.autograd import function
    x = tensor.randn(3, 5, requires_grad=True)
    before = tensor._C.lib.tn_memory_stats_get().live_tensors
    for _ in range(3):
        lo, hi, idx, _label = _MinMax.apply(x, 2.0)
        (lo.sum() + hi.sum()).backward()
        del lo, hi, idx
    x.grad = None
    function._purge()
    assert not function._contexts
    assert tensor._C.lib.tn_memory_stats_get().live_tensors == before
