"""The Python API surface that ordinary PyTorch programs use (issue 20, item 1): torch.backends,
Tensor.new_*, out=, grad_fn introspection and node hooks, the typed tensor classes,
nn.DataParallel, inference_mode, set_printoptions, finfo / iinfo, testing.assert_close,
manual_seed, torch.Size, torch.device and the default dtype.

PyTorch 1.13 is the oracle where it is installed (tests that need it skip themselves
otherwise); most tests run the same code on both modules (``M`` is tn or torch).

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_api_surface.py
"""
import gc
import math
import os
import sys
import warnings

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402


@pytest.fixture
def T():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore_globals():
    """Every test leaves the process-wide settings as it found them."""
    yield
    tn.set_default_dtype(tn.float32)
    tn.set_printoptions(profile="default")
    tn.backends.cuda.matmul.allow_tf32 = False
    tn.backends.cudnn.allow_tf32 = True
    tn.set_default_device(None)
    torch = sys.modules.get("torch")
    if torch is not None and torch is not tn:
        torch.set_default_dtype(torch.float32)
        torch.set_printoptions(profile="default")


def _live():
    gc.collect()
    return tn.memory_stats()["live_tensors"]


def both(T, fn):
    """fn(M) on both modules: (tn's result, torch's result)."""
    return fn(tn), fn(T)


def same(a, b, tol=1e-6):
    """A tn tensor and a torch tensor hold the same shape, dtype and values."""
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    la, lb = a.tolist(), b.tolist()

    def eq(x, y):
        if isinstance(x, list):
            return len(x) == len(y) and all(eq(u, v) for u, v in zip(x, y))
        return (x != x and y != y) or abs(x - y) <= tol * (1 + abs(y))
    assert eq(la, lb), (la, lb)


def raises_like(T, fn, match_tn=None):
    """fn(M) raises on both sides, the same class (tn's message checked against match_tn)."""
    with pytest.raises(Exception) as et:
        fn(T)
    with pytest.raises(Exception) as en:
        fn(tn)
    assert isinstance(en.value, type(et.value)) or type(et.value).__name__ == type(en.value).__name__, (et.value, en.value)
    if match_tn:
        assert match_tn in str(en.value), str(en.value)
    return en.value


# ============================================================================ torch.backends
def test_backends_are_modules_with_torch_defaults(T):
    import importlib
    cudnn = importlib.import_module("tensor.backends.cudnn")
    assert cudnn is tn.backends.cudnn
    for name in ("enabled", "benchmark", "deterministic"):   # benchmark_limit: 10 as PyTorch 2 (1.13 without cuDNN: None)
        assert getattr(cudnn, name) == getattr(T.backends.cudnn, name), name
    assert tn.backends.mps.is_available() is False and tn.backends.mps.is_built() is False
    assert tn.backends.openmp.is_available() is bool(tn._C.lib.tn_openmp_is_available())
    assert tn.backends.mkl.is_available() is False and tn.backends.mkldnn.is_available() is False
    assert tn.backends.cudnn.is_available() is False and tn.backends.cudnn.version() is None
    assert isinstance(tn.backends.cuda.is_built(), bool)
    assert tn.backends.cuda.matmul.allow_tf32 is False is T.backends.cuda.matmul.allow_tf32


def test_backends_settings_stick_and_tf32_is_wired(T):
    cudnn = tn.backends.cudnn
    saved = (cudnn.benchmark, cudnn.deterministic, cudnn.enabled)
    try:
        cudnn.benchmark, cudnn.deterministic, cudnn.enabled = True, True, False
        assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled) == (True, True, False)
        with cudnn.flags(enabled=True, benchmark=False, deterministic=False):
            assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled) == (False, False, True)
        assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled) == (True, True, False)
    finally:
        cudnn.benchmark, cudnn.deterministic, cudnn.enabled = saved
    # two switches, as PyTorch's: cudnn.allow_tf32 (default on) and cuda.matmul.allow_tf32 (off)
    assert cudnn.allow_tf32 is True is T.backends.cudnn.allow_tf32
    cudnn.allow_tf32 = False
    assert not tn._C.lib.tn_get_cudnn_tf32() and tn.backends.cuda.matmul.allow_tf32 is False
    tn.backends.cuda.matmul.allow_tf32 = True
    assert tn._C.lib.tn_get_tf32() and cudnn.allow_tf32 is False
    tn.backends.cuda.matmul.allow_tf32 = False
    with cudnn.flags(allow_tf32=True):
        assert tn._C.lib.tn_get_cudnn_tf32() and not tn._C.lib.tn_get_tf32()
    assert not tn._C.lib.tn_get_cudnn_tf32()
    with cudnn.flags():                  # PyTorch's default: allow_tf32=True inside
        assert cudnn.allow_tf32 is True
    cudnn.allow_tf32 = True
    m = tn.backends.cuda.matmul
    m.allow_fp16_reduced_precision_reduction = False
    assert m.allow_fp16_reduced_precision_reduction is False
    m.allow_fp16_reduced_precision_reduction = True
    with pytest.raises(AttributeError):
        m.allow_tf23 = True              # a misspelt switch is an error, not a silent new attribute


# ============================================================================ new_*
NEW_SIZES = [(2, 4, 5), ((2, 4, 5),), ([2, 4, 5],), ((),), ((0, 3),), (3,)]


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty"])
@pytest.mark.parametrize("size", NEW_SIZES)
def test_new_factories_keep_every_size(T, method, size):
    def run(M):
        x = M.tensor([[1.5, 2.0]], dtype=M.float64)
        return getattr(x, method)(*size)
    a, b = both(T, run)
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype) == "torch.float64"
    if method != "new_empty":
        same(a, b)
    s = tn.Size(size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size)
    assert tuple(getattr(tn.zeros(1), method)(s).shape) == tuple(b.shape)          # a torch.Size
    assert tuple(getattr(tn.zeros(1), method)(size=tuple(s)).shape) == tuple(b.shape)


def test_new_factories_keywords(T):
    def run(M):
        x = M.arange(6).reshape(2, 3)[:, ::2]            # int64, non-contiguous
        return [x.new_zeros(2, 3), x.new_ones((2,), dtype=M.float32), x.new_full((2, 2), 7),
                x.new_full([3], 2.5, dtype=M.float64), x.new_tensor([1.9, -2.2]), x.new_tensor([1, 2], dtype=M.float64),
                x.new_empty(0, 2, dtype=M.bool), x.new_ones(2, device="cpu"), x.new_ones(2, requires_grad=False)]
    for a, b in zip(*both(T, run)):
        if b.numel():
            same(a, b)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    y = tn.zeros(2).new_zeros(2, 3, requires_grad=True)
    assert y.requires_grad and y.is_leaf and y.new_zeros(1).requires_grad is False
    assert tn.zeros(2).new_tensor([1, 2], requires_grad=True).requires_grad


def test_new_factories_errors(T):
    raises_like(T, lambda M: M.zeros(2).new_zeros())
    raises_like(T, lambda M: M.zeros(2).new_zeros(-1, 2))
    raises_like(T, lambda M: M.zeros(2).new_zeros(2.5))
    raises_like(T, lambda M: M.zeros(2).new_ones((2,), foo=1))


def test_legacy_new_and_resize(T):
    def run(M):
        x = M.tensor([1, 2, 3])
        return [x.new(2, 3).shape, x.new([1.5, 2]).tolist(), x.new().shape, str(x.new(1).dtype)]
    a, b = both(T, run)
    assert a == b
    x = tn.arange(6.)
    view = x[1:3]
    assert x.resize_(2, 2) is x and x.tolist() == [[0., 1.], [2., 3.]] and x.is_contiguous()
    x.resize_(3, 3)
    assert x.shape == (3, 3) and x.view(-1)[:6].tolist() == [0., 1., 2., 3., 4., 5.]
    assert view.tolist() == [1., 2.]                   # the old storage lives on in the view
    x.resize_as_(tn.zeros(4))
    assert x.tolist() == [0., 1., 2., 3.]
    raises_like(T, lambda M: M.zeros(2, requires_grad=True).resize_(3))


# ============================================================================ out=
def _inputs(M):
    g = [[0.5, -1.25, 2.0], [3.0, 0.75, -0.5], [1.5, 2.5, -2.0], [0.25, 1.0, 4.0]]
    x = M.tensor(g).t()                                  # [3, 4], non-contiguous
    y = M.tensor([1.5, -2.0, 0.5, 3.0])                  # broadcasts
    return x, y


OUT_CASES = [
    ("add", lambda M, x, y: (x, y), {}),
    ("add", lambda M, x, y: (x, 2), {"alpha": 3}),
    ("sub", lambda M, x, y: (x, y), {"alpha": 2}),
    ("mul", lambda M, x, y: (x, y), {}),
    ("div", lambda M, x, y: (x, y), {"rounding_mode": "floor"}),
    ("pow", lambda M, x, y: (x, 2), {}),
    ("exp", lambda M, x, y: (x,), {}),
    ("sigmoid", lambda M, x, y: (x,), {}),
    ("clamp", lambda M, x, y: (x, -1, 1), {}),
    ("eq", lambda M, x, y: (x, y), {}),
    ("maximum", lambda M, x, y: (x, y), {}),
    ("where", lambda M, x, y: (x > 0, x, y), {}),
    ("sum", lambda M, x, y: (x, 1), {}),
    ("mean", lambda M, x, y: (x, 0), {"keepdim": True}),
    ("prod", lambda M, x, y: (x, 1), {}),
    ("std", lambda M, x, y: (x, 1), {}),
    ("amax", lambda M, x, y: (x,), {}),
    ("cumsum", lambda M, x, y: (x, 1), {}),
    ("logsumexp", lambda M, x, y: (x, 1), {}),
    ("softmax", lambda M, x, y: (x, 1), {}),
    ("matmul", lambda M, x, y: (x, y), {}),
    ("mm", lambda M, x, y: (x, x.t()), {}),
    ("cat", lambda M, x, y: ([x, x],), {"dim": 1}),
    ("stack", lambda M, x, y: ([x, x],), {}),
    ("tril", lambda M, x, y: (x,), {}),
    ("index_select", lambda M, x, y: (x, 1, M.tensor([2, 0])), {}),
    ("gather", lambda M, x, y: (x, 1, M.tensor([[0, 1], [2, 3], [1, 1]])), {}),
    ("masked_select", lambda M, x, y: (x, x > 0), {}),
    ("lerp", lambda M, x, y: (x, y.expand(3, 4), 0.25), {}),
    ("addcmul", lambda M, x, y: (x, x, y), {"value": 2}),
    ("norm", lambda M, x, y: (x,), {}),
    ("nan_to_num", lambda M, x, y: (x,), {}),
    ("round", lambda M, x, y: (x,), {}),
    ("argmax", lambda M, x, y: (x, 1), {}),
]


@pytest.mark.parametrize("name,args,kw", OUT_CASES, ids=[c[0] for c in OUT_CASES])
@pytest.mark.parametrize("kind", ["right", "empty", "wrong"])
def test_out_values_and_resizing(T, name, args, kw, kind):
    def run(M):
        x, y = _inputs(M)
        a = args(M, x, y)
        expect = getattr(M, name)(*a, **kw)
        shape = {"right": tuple(expect.shape), "empty": (0,), "wrong": (2, 2)}[kind]
        out = M.empty(shape, dtype=expect.dtype)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = getattr(M, name)(*a, out=out, **kw)
        resized = [str(m.message) for m in w if "resized" in str(m.message)]
        return r is out, out, expect, resized
    (ta, oa, ea, wa), (tb, ob, eb, wb) = both(T, run)
    assert ta and tb
    same(oa, ob, 1e-5)
    same(oa, ea, 0)
    assert bool(wa) == bool(wb) == (kind == "wrong" and tuple(eb.shape) != (2, 2))   # resizing a non-empty out warns
    if wa:
        assert wa[0].split("(Triggered")[0].strip() == wb[0].split("(Triggered")[0].strip()


def test_out_writes_through_views_and_aliases(T):
    def run(M):
        x, y = _inputs(M)
        base = M.zeros(4, 3)
        out = base.t()                                  # [3, 4], non-contiguous: written in place
        M.mul(x, y, out=out)
        z = x.clone()
        M.add(z, 1, out=z)                              # out is an input
        return base, z
    for a, b in zip(*both(T, run)):
        same(a, b)


def test_out_dtype_rules(T):
    # the result's dtype must be castable to out's; a wider out takes it
    raises_like(T, lambda M: M.add(M.ones(2), 1, out=M.empty(2, dtype=M.int64)), "can't be cast")
    a, b = both(T, lambda M: M.add(M.tensor([1, 2]), 3, out=M.empty(2, dtype=M.float64)))
    same(a, b)
    a, b = both(T, lambda M: M.eq(M.tensor([1., 2.]), 2, out=M.empty(2)))
    same(a, b)
    # ops that want one dtype exactly
    raises_like(T, lambda M: M.argmax(M.ones(2, 3), 1, out=M.empty(0)))
    raises_like(T, lambda M: M.max(M.ones(2, 3), 1, out=(M.empty(0), M.empty(0))))


def test_out_factories_take_outs_dtype(T):
    def run(M):
        outs = [M.empty(0, dtype=M.int64), M.empty(0, dtype=M.float64), M.empty(5), M.empty(0, dtype=M.int32),
                M.empty(0, dtype=M.float64), M.empty(0)]
        M.zeros(3, out=outs[0])
        M.ones(2, 2, out=outs[1])
        M.arange(4, out=outs[2])
        M.full((2,), 7, out=outs[3])
        M.linspace(0, 1, 5, out=outs[4])
        M.eye(2, out=outs[5])
        return outs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in zip(*both(T, run)):
            same(a, b)
    r = tn.empty(0, dtype=tn.float64)
    assert tn.rand(3, out=r) is r and r.dtype is tn.float64 and r.shape == (3,)
    r = tn.empty(0, dtype=tn.int32)
    assert tn.randint(0, 5, (4,), out=r) is r and r.dtype is tn.int32 and 0 <= r.min().item() <= r.max().item() < 5


def test_out_tuple_outputs(T):
    def run(M):
        x, _ = _inputs(M)
        res = []
        for name, a in (("max", (x, 1)), ("min", (x, 0)), ("sort", (x, 1)), ("topk", (x, 2)), ("kthvalue", (x, 2))):
            v, i = M.empty(0), M.empty(0, dtype=M.int64)
            r = getattr(M, name)(*a, out=(v, i))
            assert r[0] is v and r[1] is i and type(r).__name__ == name + "_out"
            res += [v, i]
        lo, hi = M.empty(0), M.empty(0)
        r = M.aminmax(x, dim=1, out=(lo, hi))
        assert r.min is lo and r.max is hi
        m = M.empty(0)
        assert M.max(x, M.zeros(4), out=m) is m          # the binary form: one out
        return res + [lo, hi, m]
    for a, b in zip(*both(T, run)):
        same(a, b)


def test_out_errors(T):
    raises_like(T, lambda M: M.add(M.ones(2, requires_grad=True), 1, out=M.empty(2)),
                "add(): functions with out=... arguments don't support automatic differentiation")
    raises_like(T, lambda M: M.add(M.ones(2), 1, out=M.empty(2, requires_grad=True)), "don't support automatic")
    raises_like(T, lambda M: M.sum(M.ones(2), out=M.empty(0)))                 # out= needs the dim form
    raises_like(T, lambda M: M.max(M.ones(2), out=M.empty(0)))
    raises_like(T, lambda M: M.sort(M.ones(2), out=M.empty(0)))                # a tuple is needed
    raises_like(T, lambda M: M.add(M.ones(2), 1, out=(M.empty(0),)))
    raises_like(T, lambda M: M.add(M.ones(2), 1, out=[1, 2]))
    raises_like(T, lambda M: M.clone(M.ones(2), out=M.empty(0)))               # no out= in torch
    # an expanded out writes one location twice; gather/cat/take refuse an out that reaches an input
    raises_like(T, lambda M: M.add(M.ones(3), 1, out=M.zeros(1).expand(3)), "more than one element of the written-to")
    raises_like(T, lambda M: M.sort(M.ones(3), out=(M.zeros(1).expand(3), M.zeros(3, dtype=M.long))), "unsupported")
    def gather_into_input(M):
        src = M.arange(6.)
        return M.gather(src, 0, M.tensor([2, 1, 0]), out=src)
    raises_like(T, gather_into_input, "some elements of the input tensor and the written-to tensor")
    def grown_out_reaches_index(M):   # out is resized to 2 elements first, then overlaps the index
        ind = M.tensor([2, 1, 0])
        return M.gather(ind.clone(), 0, ind[1:], out=ind[:1])
    raises_like(T, grown_out_reaches_index, "unsupported operation")
    def cat_into_its_input(M):
        x = M.zeros(0)
        return M.cat((x, M.ones(4, 6)), out=x)
    raises_like(T, cat_into_its_input, "unsupported operation")
    # under no_grad the arguments may require grad
    def run(M):
        w = M.ones(2, requires_grad=True)
        o = M.empty(2)
        with M.no_grad():
            M.mul(w, 3, out=o)
        return o
    same(*both(T, run))


# ============================================================================ grad_fn and the graph
def _graph(M):
    a = M.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=M.float64, requires_grad=True)
    b = M.tensor([[0.5, -1., 2.], [1., 0.25, -0.5]], dtype=M.float64, requires_grad=True)
    c = M.tensor([[1., 1., 1.], [2., 2., 2.]], dtype=M.float64)
    y = (a * b + c).exp().sum(1)
    return a, b, c, y


def _describe(node, depth=0):
    """A node's name and its next_functions, recursively (leaves: 'leaf:<shape>')."""
    if node is None:
        return None
    if type(node).__name__ == "AccumulateGrad":
        return ("AccumulateGrad", tuple(node.variable.shape), node.next_functions)
    return (node.name(), tuple((_describe(n, depth + 1), i) for n, i in node.next_functions))


def test_next_functions_match_torch(T):
    (_, _, _, ya), (_, _, _, yb) = both(T, _graph)
    assert _describe(ya.grad_fn) == _describe(yb.grad_fn)
    assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__ == "SumBackward1"
    for expr in (lambda M: (M.ones(2, requires_grad=True) + 1).grad_fn,
                 lambda M: M.ones(2, 3, requires_grad=True).t().relu().mean().grad_fn,
                 lambda M: M.cat([M.ones(2, requires_grad=True), M.zeros(2)]).grad_fn):
        a, b = both(T, expr)
        assert _describe(a) == _describe(b)


def test_grad_fn_identity_variable_and_metadata():
    a, b, _, y = _graph(tn)
    g = y.grad_fn
    assert y.grad_fn is g and repr(g).startswith("<SumBackward1 object at 0x")
    exp = g.next_functions[0][0]
    mul = exp.next_functions[0][0].next_functions[0][0]
    acc_a, acc_b = mul.next_functions[0][0], mul.next_functions[1][0]
    assert acc_a.variable is a and acc_b.variable is b
    assert acc_a.name() == "torch::autograd::AccumulateGrad" and acc_a.next_functions == ()
    assert mul.next_functions[0][0] is acc_a                # the same object while it lives
    assert isinstance(g, tn.autograd.graph.Node) and isinstance(acc_a, tn.autograd.graph.Node)
    g.metadata["step"] = 3
    exp.metadata["k"] = "v"
    assert y.grad_fn.metadata == {"step": 3} and y.grad_fn.next_functions[0][0].metadata == {"k": "v"}
    assert a.grad_fn is None and tn.ones(2).sum().grad_fn is None
    with pytest.raises(TypeError):
        tn.autograd.graph.Node()


def test_nodes_keep_the_graph_and_free_it(T):
    before = _live()
    a, b, c, y = _graph(tn)
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    del y, c
    assert mul.name() == "MulBackward0" and mul.next_functions[1][0].variable is b     # the graph is still there
    del a, b, mul
    assert _live() == before


def test_node_hooks_match_torch(T):
    def run(M):
        a, b, c, y = _graph(M)
        calls = []
        mul = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        acc = mul.next_functions[0][0]

        def post(gi, go):
            calls.append(("post", [None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go]))
            return (gi[0] * 10, gi[1])

        mul.register_hook(post)
        mul.register_prehook(lambda go: calls.append(("pre", [tuple(g.shape) for g in go])) or (go[0] * 2,))
        acc.register_prehook(lambda go: calls.append(("accpre", [tuple(g.shape) for g in go])))
        acc.register_hook(lambda gi, go: calls.append(("accpost", gi, [tuple(g.shape) for g in go])))
        y.sum().backward()
        return calls, a.grad, b.grad
    (ca, ga, ha), (cb, gb, hb) = both(T, run)
    assert ca == cb
    same(ga, gb, 1e-12)
    same(ha, hb, 1e-12)


def test_node_hook_remove_and_errors(T):
    def run(M):
        x = M.ones(2, requires_grad=True)
        z = x * 3
        h = z.grad_fn.register_hook(lambda gi, go: (gi[0] * 100, gi[1]))
        p = z.grad_fn.register_prehook(lambda go: (go[0] * 100,))
        h.remove()
        p.remove()
        z.sum().backward()
        return x.grad
    same(*both(T, run))
    raises_like(T, lambda M: _hooked(M, lambda gi, go: (gi[0],)), "has returned an incorrect number of values (got 1, but expected 2)")
    raises_like(T, lambda M: _hooked(M, lambda gi, go: 5), "expected tuple, but hook returned 'int'")
    raises_like(T, lambda M: _hooked(M, lambda gi, go: 1 / 0))
    e = raises_like(T, lambda M: _hooked(M, lambda gi, go: (M.zeros(5, dtype=M.float64), gi[1])))
    assert "MulBackward0" in str(e)


def _hooked(M, hook):
    x = M.ones(2, dtype=M.float64, requires_grad=True)
    z = x * 2
    z.grad_fn.register_hook(hook)
    z.sum().backward()


# ============================================================================ typed tensor classes
TYPED = ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor", "HalfTensor"]


@pytest.mark.parametrize("name", TYPED)
def test_typed_constructors(T, name):
    def run(M):
        cls = getattr(M, name)
        shaped = [cls(2, 3), cls(), cls(M.Size([1, 2])), cls(0)]            # uninitialised
        data = [] if name == "HalfTensor" else [
            cls([1, 0, 2]), cls((2, 3)), cls([[1.7, -2.5]]) if name not in ("ByteTensor", "BoolTensor") else cls([[1, 0]])]
        return shaped, data
    (sa, da), (sb, db) = both(T, run)
    for a, b in zip(sa, sb):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    for a, b in zip(da, db):
        same(a, b)
    cls = getattr(tn, name)
    assert repr(cls) == repr(getattr(T, name)) == f"<class 'torch.{name}'>"
    assert not issubclass(cls, tn.Tensor) and not issubclass(getattr(T, name), T.Tensor)


def test_typed_isinstance_and_type(T):
    def run(M):
        xs = [M.zeros(2), M.zeros(2, dtype=M.float64), M.zeros(2, dtype=M.int64), M.zeros(2, dtype=M.int32),
              M.zeros(2, dtype=M.uint8), M.zeros(2, dtype=M.bool), M.nn.Parameter(M.zeros(1))]
        table = [[isinstance(x, getattr(M, n)) for n in TYPED] for x in xs]
        names = [x.type() for x in xs]
        conv = [xs[2].type(M.FloatTensor), xs[0].type("torch.DoubleTensor"), xs[0].type(M.int64), xs[0].type(M.FloatTensor)]
        return table, names, conv, isinstance(1, M.FloatTensor), isinstance(M.zeros(1), M.Tensor)
    (ta, na, ca, ia, ja), (tb, nb, cb, ib, jb) = both(T, run)
    assert ta == tb and na == nb and ia == ib and ja == jb
    for a, b in zip(ca, cb):
        same(a, b)


def test_typed_errors(T):
    raises_like(T, lambda M: M.FloatTensor(2.5), "data must be a sequence")
    raises_like(T, lambda M: M.FloatTensor(M.tensor([1, 2])))
    raises_like(T, lambda M: M.LongTensor(-1), "negative dimension")
    raises_like(T, lambda M: M.FloatTensor([1], [2]))
    raises_like(T, lambda M: M.FloatTensor(2, dtype=M.float64))
    raises_like(T, lambda M: M.zeros(2).type("torch.FooTensor"), "invalid type")
    for name, dt in (("ShortTensor", "int16"), ("CharTensor", "int8")):
        assert getattr(tn, name)([1, -2]).dtype is getattr(tn, dt) and getattr(T, name)([1]).dtype is getattr(T, dt)
        assert not isinstance(tn.zeros(1, dtype=tn.int32), getattr(tn, name))
        assert isinstance(tn.zeros(1, dtype=getattr(tn, dt)), getattr(tn, name))
    t = tn.FloatTensor([1., 2.])
    assert tn.FloatTensor(t)._same_storage(t)            # an alias, as torch's


def test_set_default_tensor_type(T):
    for M in (tn, T):
        M.set_default_tensor_type(M.DoubleTensor)
        assert M.get_default_dtype() == M.float64 and M.tensor([1.5]).dtype == M.float64
        M.set_default_tensor_type("torch.FloatTensor")
        assert M.get_default_dtype() == M.float32
    raises_like(T, lambda M: M.set_default_tensor_type(M.LongTensor))


# ============================================================================ nn.DataParallel
def test_data_parallel_is_the_module(T):
    def run(M):
        M.manual_seed(0)
        m = M.nn.Linear(3, 2)
        dp = M.nn.DataParallel(m)
        x = M.ones(4, 3)
        return dp, m, dp(x), m(x)
    (da, ma, ya, za), (db, mb, yb, zb) = both(T, run)
    assert da.module is ma and repr(da) == repr(db) and da.device_ids == db.device_ids == []
    assert list(da.state_dict()) == list(db.state_dict()) == ["module.weight", "module.bias"]
    same(ya, za, 0)
    assert tn.nn.parallel.DataParallel is tn.nn.DataParallel
    assert tuple(tn.nn.parallel.data_parallel(ma, tn.ones(1, 3)).shape) == (1, 2)
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):   # torch's words
        tn.nn.parallel.DistributedDataParallel(ma)
    assert tn.nn.DistributedDataParallel is tn.nn.parallel.DistributedDataParallel


# ============================================================================ grad modes
def test_inference_mode(T):
    for M in (tn, T):
        x = M.ones(2, requires_grad=True)
        with M.inference_mode():
            assert M.is_inference_mode_enabled() and not M.is_grad_enabled()
            assert not (x * 2).requires_grad
            with M.inference_mode(False):                  # grad mode back on, as PyTorch's
                assert not M.is_inference_mode_enabled() and M.is_grad_enabled()
        assert not M.is_inference_mode_enabled() and M.is_grad_enabled()

        @M.inference_mode()
        def f(t):
            return t * 2, M.is_inference_mode_enabled()
        y, on = f(x)
        assert on and not y.requires_grad and not M.is_inference_mode_enabled()
    # the bare decorator forms of PyTorch 2 (1.13 needs the parentheses)

    @tn.inference_mode
    def g(t):
        return t * 2, tn.is_inference_mode_enabled()

    @tn.no_grad
    def h(t):
        return t * 2

    y, on = g(tn.ones(1, requires_grad=True))
    assert on and not y.requires_grad and not h(tn.ones(1, requires_grad=True)).requires_grad
    assert tn.is_grad_enabled() and tn.autograd.is_inference_mode_enabled() is False


# ============================================================================ set_printoptions
PRINT_CASES = [
    dict(precision=2),
    dict(precision=6, sci_mode=True),
    dict(sci_mode=False),
    dict(threshold=5, edgeitems=2),
    dict(threshold=5, edgeitems=1, linewidth=40),
    dict(linewidth=30),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=5),
]


def _print_tensors(M):
    return [M.tensor([1 / 3, 2.5, -10.125]), M.tensor([1e-5, 1.0, 123.0], dtype=M.float64),
            M.arange(12).reshape(3, 4), M.arange(30.).reshape(2, 15) / 7, M.tensor(3.14159265),
            M.tensor([True, False]), M.arange(2000), M.ones(5, 1, 3) / 3, M.tensor([100000., 1., float("nan")])]


@pytest.mark.parametrize("opts", PRINT_CASES, ids=[str(c) for c in PRINT_CASES])
def test_set_printoptions_matches_torch(T, opts):
    def run(M):
        M.set_printoptions(**opts)
        try:
            return [repr(t) for t in _print_tensors(M)]
        finally:
            M.set_printoptions(profile="default")
    a, b = both(T, run)
    for x, y in zip(a, b):
        assert x == y, f"\n{x}\n!=\n{y}"


def test_printoptions_state_and_errors():
    from tensor import _tensor_str
    tn.set_printoptions(precision=3, threshold=math.inf)
    assert _tensor_str.get_printoptions() == {"precision": 3, "threshold": math.inf, "edgeitems": 3, "linewidth": 80,
                                              "sci_mode": None}
    with _tensor_str.printoptions(precision=1, sci_mode=True):
        assert repr(tn.tensor([2.25])) == "tensor([2.2e+00])"
    assert _tensor_str.get_printoptions()["precision"] == 3
    with pytest.raises(RuntimeError, match="unknown profile 'long'"):
        tn.set_printoptions(profile="long")
    with pytest.raises(RuntimeError, match="precision must be in"):
        tn.set_printoptions(precision=-1)
    with pytest.raises(TypeError):
        tn.set_printoptions(precision=2.5)
    assert _tensor_str.get_printoptions()["precision"] == 3      # a refused call changes nothing


# ============================================================================ finfo / iinfo
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16", None])
def test_finfo(T, dt):
    a, b = both(T, lambda M: M.finfo() if dt is None else M.finfo(getattr(M, dt)))
    for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(a, f) == getattr(b, f), f
    assert repr(a) == repr(b)


@pytest.mark.parametrize("dt", ["int32", "int64", "uint8"])
def test_iinfo(T, dt):
    a, b = both(T, lambda M: M.iinfo(getattr(M, dt)))
    assert (a.bits, a.min, a.max, a.dtype) == (b.bits, b.min, b.max, b.dtype) and repr(a) == repr(b)


def test_type_info_errors(T):
    raises_like(T, lambda M: M.finfo(M.int32), "requires a floating point input type")
    raises_like(T, lambda M: M.iinfo(M.float32), "requires an integer input type")
    raises_like(T, lambda M: M.iinfo(M.bool), "torch.bool is not supported by torch.iinfo")
    assert tn.finfo(tn.float64).eps == sys.float_info.epsilon and tn.finfo(float).dtype == "float64"


# ============================================================================ testing.assert_close
CLOSE_CASES = [
    lambda M: (M.tensor([1., 2., 3.]), M.tensor([1., 2.5, 3.])),
    lambda M: (M.tensor([[1., 2.], [3., 4.]]), M.tensor([[1., 2.], [3., 5.]])),
    lambda M: (M.tensor([1, 2]), M.tensor([1, 3])),
    lambda M: (M.tensor([1., 2.]), M.tensor([1., 2.], dtype=M.float64)),
    lambda M: (M.tensor([1., 2.]), M.tensor([1., 2., 3.])),
    lambda M: (1, 1.0),
    lambda M: ([1., 2.], [1., 2., 3.]),
    lambda M: ({"a": 1.}, {"b": 1.}),
    lambda M: (M.tensor([float("nan")]), M.tensor([float("nan")])),
    lambda M: (M.tensor([True, False]), M.tensor([True, True])),
    lambda M: (M.tensor([0., 2.]), M.tensor([1e-3, 2.])),
    lambda M: (M.zeros(2, 3)[:, ::2], M.zeros(2, 2)),
    lambda M: ([M.tensor([1., 2.]), M.tensor([1., 2.])], [M.tensor([1., 2.]), M.tensor([1., 4.])]),
    lambda M: ({"w": M.tensor([1., 2.])}, {"w": M.tensor([1.5, 2.])}),
    lambda M: (M.tensor(1.), 1.),
    lambda M: ("a", "a"),
]


@pytest.mark.parametrize("case", range(len(CLOSE_CASES)))
def test_assert_close_messages_match_torch(T, case):
    def run(M, **kw):
        try:
            M.testing.assert_close(*CLOSE_CASES[case](M), **kw)
            return None
        except Exception as e:
            return type(e).__name__, str(e)
    assert run(tn) == run(T)
    kw = {"check_stride": True} if case == 11 else {"rtol": 0, "atol": 1, "msg": "custom"}
    assert run(tn, **kw) == run(T, **kw)


def test_assert_close_passes_and_tolerances(T):
    ok = [(tn.tensor([1., 2.]), tn.tensor([1., 2. + 1e-6])), (1.0, 1.0 + 1e-8), ((1, 2), [1, 2]),
          (tn.tensor([float("nan")]), tn.tensor([float("nan")]), {"equal_nan": True}),
          (tn.tensor([1., 2.]), tn.tensor([1., 2.], dtype=tn.float64), {"check_dtype": False}),
          (tn.tensor([1, 2]), tn.tensor([1, 3]), {"rtol": 0, "atol": 1}),
          (tn.nn.Parameter(tn.ones(2)), tn.ones(2))]
    for c in ok:
        tn.testing.assert_close(c[0], c[1], **(c[2] if len(c) > 2 else {}))
    with pytest.raises(ValueError, match="but got no atol"):
        tn.testing.assert_close(tn.ones(1), tn.ones(1), rtol=1e-3)
    # scalars name both values, as PyTorch 2's messages
    with pytest.raises(AssertionError, match=r"Scalars are not close!\n\nExpected 1.5 but got 1.0.\n"
                                             r"Absolute difference: 0.5 \(up to 1e-07 allowed\)"):
        tn.testing.assert_close(1.0, 1.5)
    with pytest.raises(AssertionError, match="it differs"):
        tn.testing.assert_close(tn.ones(2), tn.zeros(2), msg=lambda m: "it differs: " + m.splitlines()[0])
    tn.testing.assert_allclose(tn.tensor([1., float("nan")]), [1., float("nan")])


# ============================================================================ seeds, Size, device, default dtype
def test_manual_seed_returns_the_generator():
    g = tn.manual_seed(3)
    assert g is tn.default_generator and isinstance(g, tn.Generator) and g.initial_seed() == 3
    a = tn.rand(3)
    tn.manual_seed(3)
    assert tn.rand(3).tolist() == a.tolist()


def test_size_methods(T):
    def run(M):
        s = M.Size([2, 3, 4])
        return [s.numel(), s + (5,), (1,) + s, s[1:], s[0], s * 2, 2 * s, s.count(3), s.index(4), M.Size(),
                M.Size([M.tensor(3)]), s == (2, 3, 4), s == [2, 3, 4], M.zeros(2, 3).shape[-1:], len(s)]
    a, b = both(T, run)
    assert [repr(x) for x in a] == [repr(x) for x in b]
    assert [type(x).__name__ for x in a] == [type(x).__name__ for x in b]
    raises_like(T, lambda M: M.Size([2.5]), "takes an iterable of 'int' (item 0 is 'float')")
    raises_like(T, lambda M: M.Size([2]) + [3])


def test_device_patterns(T):
    def run(M):
        dev = M.device("cuda" if M.cuda.is_available() else "cpu")
        x = M.ones(2).to(dev)
        d0 = M.device("cuda:0")
        return [str(dev), repr(dev), x.device == M.device("cpu"), x.device == dev, str(d0), repr(d0), d0.type, d0.index,
                M.device("cuda", 1) == M.device("cuda:1"), M.device("cpu") == "cpu", M.device("cpu") != "cpu",
                M.device("cpu") == M.device("cuda"), len({M.device("cpu"), M.device("cpu")}), str(M.device("mps")),
                M.device(M.device("cpu")) == M.device("cpu"), str(x.to("cpu", M.float64).dtype)]
    a, b = both(T, run)
    assert a == b
    raises_like(T, lambda M: M.device("foo"), "Expected one of cpu, cuda")
    raises_like(T, lambda M: M.device("cuda:x"))
    with pytest.raises(RuntimeError, match="device type 'mps' is not supported"):
        tn.ones(1).to(tn.device("mps"))


def test_default_dtype_float64(T):
    def run(M):
        M.set_default_dtype(M.float64)
        try:
            i = M.arange(3)
            return [M.tensor(1.5), M.tensor([1, 2.5]), i * 2.5, i / 2, i.exp(), M.zeros(2), M.ones(1) + 1.5, M.rand(2) * 0,
                    M.arange(0., 1., 0.5), M.full((2,), 1.5), M.linspace(0, 1, 3), M.tensor(2) * 1.5,
                    M.zeros(2, dtype=M.float32) * 2.5, repr(M.ones(2)), repr(M.ones(2, dtype=M.float32)),
                    str(M.get_default_dtype())]
        finally:
            M.set_default_dtype(M.float32)
    a, b = both(T, run)
    for x, y in zip(a, b):
        if isinstance(x, str):
            assert x == y
        else:
            same(x, y)
    assert tn.get_default_dtype() is tn.float32 and tn.tensor(1.5).dtype is tn.float32
    raises_like(T, lambda M: M.set_default_dtype(M.int64), "only floating-point types")
    with pytest.raises(RuntimeError, match="not supported as the default type"):
        tn.set_default_dtype(tn.float16)
    assert tn.get_default_dtype() is tn.float32


# ============================================================================ default device, Variable, accelerator
def test_set_default_device():
    """torch.set_default_device (PyTorch 2): factories without device= go to it, *_like keep
    their input's device, from_numpy stays on the CPU; None / 'cpu' restore the CPU. No GPU
    here, so the factories reaching for CUDA is seen as the GPU unit's 'not available' error."""
    import numpy as np
    assert tn.get_default_device() == tn.device("cpu")
    cpu = tn.ones(2)
    factories = [lambda: tn.zeros(2), lambda: tn.ones(2), lambda: tn.empty(2), lambda: tn.full((2,), 1.),
                 lambda: tn.tensor([1.]), lambda: tn.arange(3), lambda: tn.linspace(0, 1, 3), lambda: tn.eye(2),
                 lambda: tn.rand(2), lambda: tn.randn(2), lambda: tn.randint(0, 3, (2,)), lambda: tn.randperm(3),
                 lambda: tn.as_tensor([1.])]
    with pytest.raises(RuntimeError, match="not supported"):
        tn.set_default_device("mps")
    assert tn.get_default_device() == tn.device("cpu")
    tn.set_default_device("cuda")
    try:
        assert tn.get_default_device() == tn.device("cuda")
        if not tn.cuda.is_available():
            for f in factories:
                with pytest.raises(RuntimeError, match="'cuda' is not available"):
                    f()
        for t in [tn.zeros(2, device="cpu"), tn.zeros_like(cpu), tn.ones_like(cpu), tn.empty_like(cpu),
                  tn.full_like(cpu, 2.), tn.rand_like(cpu), tn.randn_like(cpu), tn.randint_like(cpu, 3),
                  tn.from_numpy(np.ones(2))]:
            assert t.device == tn.device("cpu")
    finally:
        tn.set_default_device(None)
    assert tn.get_default_device() == tn.device("cpu") and tn.zeros(2).device == tn.device("cpu")
    tn.set_default_device("cpu")
    assert tn.ones(1).device == tn.device("cpu")


def test_variable(T):
    from tensor.autograd import Variable
    for M, V in ((tn, Variable), (T, T.autograd.Variable)):
        t = M.ones(2)
        v = V(t, requires_grad=True)
        assert v.requires_grad and v.is_leaf and not t.requires_grad
        assert v.data_ptr() == t.data_ptr() and isinstance(t, V) and type(v) is M.Tensor
        (v * 3).sum().backward()
        assert v.grad.tolist() == [3.0, 3.0]
        assert tuple(V().shape) == (0,) and not V(t).requires_grad
    raises_like(T, lambda M: M.autograd.Variable([1, 2]), "Variable data has to be a tensor")
    assert not isinstance([1], Variable)


def test_accelerator():
    """torch.accelerator (PyTorch 2.6) as the tutorials use it to pick a device."""
    acc = tn.accelerator
    if tn.cuda.is_available():
        assert acc.is_available() and acc.current_accelerator() == tn.device("cuda") and acc.device_count() >= 1
    else:
        assert not acc.is_available() and acc.current_accelerator() is None
        assert acc.device_count() == 0 and acc.current_device_index() == -1
        acc.synchronize()
    dev = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert tn.ones(2, device=dev).device.type == dev
