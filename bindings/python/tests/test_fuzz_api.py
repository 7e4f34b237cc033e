"""A directed fuzzer of the public Python API: working calls, mutated, must never crash.

``BASES`` is a table of a few hundred working calls across the package: tensor creation,
views, indexing and assignment, elementwise ops, reductions, linear algebra,
nn.functional, nn modules (constructed, then called), nn.init, optimizers and LR
schedulers (a few steps), the DataLoader (one epoch) and save/load. Every argument is
data (``T`` a tensor spec, ``D`` a dtype, ``S`` a slice, plain ints, floats, strings and
tuples), so a mutant is the same call with one to three arguments replaced:

  ints     -> 2**62, -1, 0, 2**31, 2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**64, 1 << 40, 7, -9
  floats   -> nan, inf, -inf, 0, -1, 1e308, 5e-324, 2**62
  tensors  -> empty (a dim of 0), 0-d, 8-dim, 9-dim, int64, int32, uint8, bool, float64,
              float16, NaN-filled, inf-filled, non-contiguous (a transposed copy), expanded
              (stride 0), a view with a huge stride (2**40, on a dim of size 1), requires_grad,
              a Python float, None
  dtypes   -> swapped for any other; shapes/dim tuples -> (), (-1,), (2**62,), (0,),
              (2**31, 2**31), nine dims, a repeated dim; strings -> "", "bogus", 1000 chars

Mutant ``SEED:I`` is base ``I % len(BASES)`` with mutations drawn from
``random.Random(f"{SEED}:{I}")``: reproducible anywhere from its id. A mutant passes when
it returns or raises any Python exception; it fails when the interpreter dies (a signal:
SIGSEGV, SIGABRT, ...) or it runs past ``TN_FUZZ_TIMEOUT`` seconds (default 10). The
mutants run in child interpreters (this file as a script), in batches of
``TN_FUZZ_BATCH`` (250): each child prints ``START i`` before mutant i, so when it dies
the parent names the mutant, keeps its stderr (faulthandler's traceback) and starts a
fresh child after it. The children cap their address space at 2 GiB (under ASan: single
allocations at 1 GiB), so a huge allocation fails at once instead of swapping or filling
gigabytes for longer than the timeout.

In the suite: ``TN_FUZZ_MUTANTS`` mutants (default 300, a few seconds: ``make test`` stays
fast) of seed ``TN_FUZZ_SEED`` (default 1); a campaign is ``TN_FUZZ_MUTANTS=50000`` or
``--mutants 50000`` (docs/reliability.md records them). Known crashes being fixed
elsewhere are listed in ``KNOWN`` with the reason; each is its own strict xfail (run alone
in a child), left out of the sweep, so the sweep passes today and the xfail turns into a
failure (XPASS) when its fix lands. ``KNOWN_UB`` lists the mutants whose undefined
behaviour (signed overflow) only the sanitizers report: strict xfails under ``make test
SANITIZE=1``, skipped elsewhere. Fixed findings move to ``FIXED``: they must pass, every
run.

Run:   make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_fuzz_api.py
Also:  python3 bindings/python/tests/test_fuzz_api.py --mutants 50000 [--seed 1]   (a campaign, a report)
       python3 bindings/python/tests/test_fuzz_api.py --show 1:1234      (what mutant 1:1234 calls)
       python3 bindings/python/tests/test_fuzz_api.py --repro 1:1234     (run it in this process)
       python3 bindings/python/tests/test_fuzz_api.py --bases            (every base call, unmutated)
"""
import io
import json
import math
import os
import random
import selectors
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = float(os.environ.get("TN_FUZZ_TIMEOUT", "10"))
BATCH = int(os.environ.get("TN_FUZZ_BATCH", "250"))
N_MUTANTS = int(os.environ.get("TN_FUZZ_MUTANTS", "300"))
SEED = int(os.environ.get("TN_FUZZ_SEED", "1"))

torch = nn = F = None           # bound in the child (_bind)


# =========================================================================== the description language
class T:
    """A tensor spec: shape, dtype name, fill ('randn', 'pos' > 0, 'unit' in [0, 1),
    'idx:n' int64 indices in [0, n), 'nan', 'inf', 'zeros'), layout ('contig', 'noncontig',
    'expanded', 'bigstride'), requires_grad."""
    __slots__ = ("shape", "dtype", "fill", "layout", "rg")

    def __init__(self, *shape, dtype="float32", fill=None, layout="contig", rg=False):
        self.shape, self.dtype, self.layout, self.rg = tuple(shape), dtype, layout, rg
        self.fill = fill or ("randn" if dtype.startswith(("float", "bfloat")) else
                             "bool" if dtype == "bool" else "ints")

    def copy(self, **kw):
        t = T(*self.shape, dtype=self.dtype, fill=self.fill, layout=self.layout, rg=self.rg)
        for k, v in kw.items():
            setattr(t, k, v)
        return t

    def __repr__(self):
        extra = [self.dtype] + ([self.fill] if self.fill not in ("randn", "ints", "bool") else []) + \
                ([self.layout] if self.layout != "contig" else []) + (["requires_grad"] if self.rg else [])
        return f"T{list(self.shape)}({', '.join(extra)})"


class D:
    """A dtype, by its name in the package (torch.<name>)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class S:
    """A slice with int bounds (mutable like other ints)."""
    __slots__ = ("start", "stop", "step")

    def __init__(self, start=None, stop=None, step=None):
        self.start, self.stop, self.step = start, stop, step

    def __repr__(self):
        f = lambda v: "" if v is None else repr(v)  # noqa: E731
        return f"{f(self.start)}:{f(self.stop)}" + (f":{f(self.step)}" if self.step is not None else "")


class C:
    """A call: target, positional args, keyword args. Targets:
      torch.X / F.X / init.X   the function, called on the args
      .X                       the method X of args[0]
      nn.X                     module X(*args, **kw), then called on fwd
      optim.X                  X([params from the args' specs], **kw), grads set, two steps, state dict round trip
      sched.X                  X(SGD(...), **kw), three epochs
      data.DataLoader          DataLoader(TensorDataset(*args), **kw), one epoch
      io.save                  save(args[0]) to a buffer, load it back
      index.get / index.set    args[0][args[1]] / args[0][args[1]] = args[2]
    fixed: keyword names never mutated (num_workers: more worker processes is not a crash)."""
    __slots__ = ("target", "args", "kw", "fwd", "fixed")

    def __init__(self, target, *args, fwd=(), fixed=(), **kw):
        self.target, self.args, self.kw, self.fwd, self.fixed = target, list(args), dict(kw), list(fwd), tuple(fixed)

    def __repr__(self):
        a = ", ".join([_show(x) for x in self.args] + [f"{k}={_show(v)}" for k, v in self.kw.items()])
        s = f"{self.target}({a})"
        if self.fwd:
            s += "(" + ", ".join(_show(x) for x in self.fwd) + ")"
        return s


def _show(x):
    if isinstance(x, tuple):
        return "(" + ", ".join(_show(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(_show(v) for v in x) + "]"
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 2 ** 30:
        e = round(math.log2(abs(x)))
        if abs(x) == 2 ** e:
            return ("-" if x < 0 else "") + f"2**{e}"
        if abs(x) == 2 ** e - 1:
            return ("-(" if x < 0 else "(") + f"2**{e} - 1)"
    if isinstance(x, float) and not math.isfinite(x):
        return f"float('{x}')"
    return repr(x)


# =========================================================================== the base calls
def _bases():
    B = []
    add = B.append
    x23, x34, x4 = T(2, 3), T(3, 4), T(4)
    # -- creation
    for fn in ("zeros", "ones", "empty", "rand", "randn"):
        add(C(f"torch.{fn}", 2, 3))
        add(C(f"torch.{fn}", (2, 3), dtype=D("float64")))
    add(C("torch.full", (2, 3), 1.5))
    add(C("torch.full", (3,), 7, dtype=D("int64")))
    add(C("torch.arange", 10))
    add(C("torch.arange", 1.0, 4.0, 0.5))
    add(C("torch.arange", 0, 10, 3, dtype=D("int32")))
    add(C("torch.linspace", 0.0, 1.0, 5))
    add(C("torch.logspace", 0.0, 2.0, 3))
    add(C("torch.eye", 3))
    add(C("torch.eye", 2, 4, dtype=D("int64")))
    add(C("torch.randint", 0, 10, (3, 2)))
    add(C("torch.randperm", 6))
    add(C("torch.tensor", [[1.0, 2.0], [3.0, 4.0]]))
    add(C("torch.tensor", [1, 2, 3], dtype=D("uint8")))
    add(C("torch.scalar_tensor", 3.5))
    add(C("torch.zeros_like", x23))
    add(C("torch.full_like", x23, 2.0))
    add(C("torch.randint_like", x23, 5))
    add(C("torch.normal", 0.0, 1.0, (2, 2)))
    add(C("torch.bernoulli", T(3, fill="unit")))
    add(C(".new_zeros", x23, (4,)))
    add(C(".new_full", x23, (2,), 3.0))
    # -- views, shapes, joins
    add(C(".view", T(2, 6), 3, 4))
    add(C(".view", T(2, 6), -1))
    add(C(".reshape", T(2, 6), (4, 3)))
    add(C("torch.reshape", T(24), (2, 3, 4)))
    add(C(".permute", T(2, 3, 4), 2, 0, 1))
    add(C(".transpose", x23, 0, 1))
    add(C("torch.transpose", T(2, 3, 4), -1, 0))
    add(C(".t", x23))
    add(C(".unsqueeze", x23, 1))
    add(C(".squeeze", T(2, 1, 3), 1))
    add(C(".squeeze", T(1, 3, 1)))
    add(C(".flatten", T(2, 3, 4), 1))
    add(C(".unflatten", T(2, 12), 1, (3, 4)))
    add(C(".expand", T(3, 1), 3, 4))
    add(C(".expand", T(1, 4), (2, -1, -1)))
    add(C(".broadcast_to", x4, (2, 4)))
    add(C(".narrow", T(5, 3), 0, 1, 3))
    add(C(".select", T(5, 3), 1, 2))
    add(C(".unfold", T(8), 0, 3, 2))
    add(C(".movedim", T(2, 3, 4), 0, 2))
    add(C(".as_strided", T(9), (2, 2), (3, 1), 1))
    add(C("torch.as_strided", T(6), (3,), (2,)))
    add(C(".chunk", T(7, 2), 3))
    add(C(".split", T(7, 2), 2))
    add(C(".split", T(7, 2), [3, 4]))
    add(C(".unbind", x23, 1))
    add(C("torch.cat", [x23, x23], 0))
    add(C("torch.cat", [x23, T(2, 1)], dim=1))
    add(C("torch.stack", [x4, x4], 1))
    add(C("torch.hstack", [x23, x23]))
    add(C("torch.vstack", [x23, x23]))
    add(C(".flip", T(3, 4), (0, 1)))
    add(C(".roll", T(3, 4), 1, 0))
    add(C(".roll", T(3, 4), (1, -2), (0, 1)))
    add(C(".repeat", x23, 2, 1))
    add(C(".tile", x23, (2,)))
    add(C(".tril", T(4, 4), -1))
    add(C(".triu", T(3, 5), 1))
    add(C("torch.atleast_2d", x4))
    add(C("torch.broadcast_tensors", T(3, 1), T(1, 4)))
    add(C(".contiguous", T(3, 4, layout="noncontig")))
    add(C(".clone", x23))
    add(C(".to", x23, D("float64")))
    add(C(".to", T(5), dtype=D("int32")))
    add(C(".type", x23, D("int64")))
    add(C(".float", T(3, dtype="int64")))
    add(C(".bool", T(3)))
    add(C(".tolist", T(2, 2)))
    add(C(".item", T(1)))
    add(C(".size", T(2, 3), 1))
    add(C(".stride", T(2, 3), 0))
    add(C(".numpy", x23))
    # -- indexing and assignment
    add(C("index.get", T(4, 5), 2))
    add(C("index.get", T(4, 5), -1))
    add(C("index.get", T(4, 5), (1, 3)))
    add(C("index.get", T(4, 5), S(1, 3)))
    add(C("index.get", T(4, 5), (S(None, None, 2), S(1, None))))
    add(C("index.get", T(4, 5), (Ellipsis, 1)))
    add(C("index.get", T(4, 5), (None, 1)))
    add(C("index.get", T(4, 5), T(3, fill="idx:4", dtype="int64")))
    add(C("index.get", T(4, 5), (T(2, fill="idx:4", dtype="int64"), T(2, fill="idx:5", dtype="int64"))))
    add(C("index.get", T(4, 5), T(4, 5, dtype="bool")))
    add(C("index.get", T(4, 5), [0, 2, 3]))
    add(C("index.set", T(4, 5), 1, 0.0))
    add(C("index.set", T(4, 5), S(0, 2), T(5)))
    add(C("index.set", T(4, 5), T(4, 5, dtype="bool"), 1.0))
    add(C("index.set", T(4, 5), T(2, fill="idx:4", dtype="int64"), T(2, 5)))
    add(C("index.set", T(6), S(None, None, 2), T(3)))
    add(C(".gather", T(3, 4), 1, T(3, 2, fill="idx:4", dtype="int64")))
    add(C(".scatter", T(3, 4), 1, T(3, 2, fill="idx:4", dtype="int64"), T(3, 2)))
    add(C(".scatter", T(3, 4), 0, T(2, 4, fill="idx:3", dtype="int64"), 5.0))
    add(C(".scatter_add", T(3, 4), 1, T(3, 2, fill="idx:4", dtype="int64"), T(3, 2)))
    add(C(".index_select", T(5, 3), 0, T(4, fill="idx:5", dtype="int64")))
    add(C(".masked_fill", T(3, 4), T(3, 4, dtype="bool"), -1.0))
    add(C(".masked_select", T(3, 4), T(4, dtype="bool")))
    add(C(".index_put", T(5), (T(2, fill="idx:5", dtype="int64"),), T(2)))
    add(C(".index_put_", T(5), (T(3, fill="idx:5", dtype="int64"),), T(3), accumulate=True))
    add(C("torch.where", T(3, 4, dtype="bool"), T(3, 4), T(4)))
    add(C("torch.where", T(3, dtype="bool")))
    add(C(".nonzero", T(3, 4, dtype="int64")))
    add(C(".argwhere", T(3, 4, dtype="bool")))
    add(C(".fill_", x23, 2.5))
    add(C(".zero_", x23))
    add(C(".copy_", x23, T(3)))
    # -- elementwise
    for fn in ("abs", "neg", "exp", "expm1", "exp2", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sign",
               "floor", "ceil", "round", "trunc", "frac", "square", "erf", "erfc", "sinh", "cosh", "atan", "silu",
               "reciprocal"):
        add(C(f".{fn}", T(3, 4)))
    for fn in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt"):
        add(C(f"torch.{fn}", T(3, 4, fill="pos")))
    for fn in ("asin", "acos"):
        add(C(f".{fn}", T(5, fill="unit")))
    for fn in ("exp_", "abs_", "sin_", "clamp_min_", "mul_", "add_", "sub_", "div_"):
        args = (0.5,) if fn in ("clamp_min_", "mul_", "add_", "sub_", "div_") else ()
        add(C(f".{fn}", T(3, 4), *args))
    for fn in ("add", "sub", "mul", "div", "maximum", "minimum", "atan2", "fmod", "remainder", "pow",
               "eq", "ne", "lt", "le", "gt", "ge", "floor_divide", "true_divide"):
        add(C(f"torch.{fn}", T(3, 4), T(4)))
    for fn in ("add", "mul", "pow", "fmod", "remainder", "div"):
        add(C(f"torch.{fn}", T(3, dtype="int64", fill="idx:9"), 3))
    add(C("torch.add", x23, x23, alpha=2))
    add(C("torch.sub", x23, 1.5, alpha=-1))
    add(C("torch.div", T(4), T(4), rounding_mode="floor"))
    add(C("torch.div", T(4, dtype="int64"), 3, rounding_mode="trunc"))
    add(C("torch.rsub", x23, 1.0))
    for fn in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        add(C(f"torch.{fn}", T(4, dtype="int64"), T(4, dtype="int64")))
    add(C("torch.bitwise_not", T(4, dtype="int32")))
    for fn in ("logical_and", "logical_or", "logical_xor"):
        add(C(f"torch.{fn}", T(4, dtype="bool"), T(4)))
    add(C("torch.logical_not", T(4)))
    add(C(".clamp", T(3, 4), -0.5, 0.5))
    add(C(".clamp", T(3, 4), min=T(4)))
    add(C(".clip", T(3, 4), max=0.1))
    add(C("torch.lerp", T(3), T(3), 0.3))
    add(C("torch.addcmul", T(3), T(3), T(3), value=0.5))
    add(C("torch.addcdiv", T(3), T(3), T(3, fill="pos"), value=2))
    add(C("torch.nan_to_num", T(4, fill="nan"), nan=0.0, posinf=1.0))
    add(C("torch.isnan", T(4, fill="nan")))
    add(C("torch.isinf", T(4, fill="inf")))
    add(C("torch.isfinite", T(4)))
    add(C("torch.isclose", T(4), T(4), rtol=1e-3, atol=1e-5))
    add(C("torch.allclose", T(4), T(4)))
    add(C("torch.equal", T(4), T(4)))
    add(C(".pow", T(3), 2.5))
    add(C("torch.pow", 2.0, T(3)))
    add(C(".__add__", T(3), 1))
    add(C(".__mul__", T(3), T(3)))
    add(C(".__truediv__", T(3), 2))
    add(C(".__floordiv__", T(3, dtype="int64", fill="idx:9"), 2))
    add(C(".__mod__", T(3), 2.0))
    add(C(".__pow__", T(3), 2))
    add(C(".__rpow__", T(3), 2))
    add(C(".__neg__", T(3)))
    add(C(".__invert__", T(3, dtype="bool")))
    add(C(".__and__", T(3, dtype="int64"), 6))
    add(C(".__matmul__", x23, x34))
    add(C(".__iadd__", x23, x23))
    add(C(".__imul__", x23, 3))
    # -- reductions, scans, sorting
    for fn in ("sum", "mean", "prod", "amax", "amin", "logsumexp", "std", "var", "norm", "all", "any",
               "count_nonzero", "argmax", "argmin"):
        add(C(f".{fn}", T(3, 4)) if fn != "logsumexp" else C(".logsumexp", T(3, 4), 0))
        add(C(f".{fn}", T(3, 4, 2), 1))
    add(C(".sum", T(3, 4), (0, 1), keepdim=True))
    add(C(".sum", T(3, 4, dtype="int32"), dtype=D("int64")))
    add(C(".mean", T(3, 4), -1, True))
    add(C(".std", T(3, 4), 0, correction=0))
    add(C(".var", T(3, 4), unbiased=False))
    add(C(".norm", T(3, 4), 1, 1))
    add(C(".norm", T(3, 4), float("inf")))
    add(C("torch.norm", T(3, 4), p="fro", dim=(0, 1)))
    add(C(".max", T(3, 4)))
    add(C(".max", T(3, 4), 1))
    add(C(".max", T(3, 4), dim=0, keepdim=True))
    add(C(".min", T(3, 4), 1))
    add(C("torch.max", T(3, 4), T(4)))
    add(C(".aminmax", T(3, 4), dim=1))
    add(C("torch.std_mean", T(3, 4), 1))
    add(C("torch.var_mean", T(3, 4)))
    add(C(".cumsum", T(3, 4), 1))
    add(C(".cumprod", T(3, 4), 0))
    add(C(".cumsum", T(5, dtype="int64"), 0, dtype=D("float64")))
    add(C(".sort", T(3, 4), 1, True))
    add(C(".sort", T(5), stable=True))
    add(C(".argsort", T(3, 4), 0))
    add(C(".topk", T(3, 6), 2))
    add(C(".topk", T(3, 6), 3, 0, False, False))
    add(C(".kthvalue", T(3, 6), 2, 1))
    add(C(".msort", T(4, 3)))
    add(C("torch.softmax", T(3, 4), 1))
    add(C("torch.log_softmax", T(3, 4), -1))
    add(C(".softmax", T(3, 4), 0, dtype=D("float64")))
    # -- linear algebra
    add(C("torch.matmul", x23, x34))
    add(C("torch.matmul", T(2, 2, 3), T(3)))
    add(C("torch.matmul", T(3), T(3)))
    add(C("torch.matmul", T(5, 1, 2, 3), T(4, 3, 2)))
    add(C("torch.mm", x23, x34))
    add(C("torch.bmm", T(2, 2, 3), T(2, 3, 4)))
    add(C("torch.mv", x23, T(3)))
    add(C("torch.dot", T(4), T(4)))
    add(C("torch.inner", T(3), T(3)))
    add(C("torch.outer", T(3), T(4)))
    add(C("torch.addmm", T(4), x23, x34, beta=0.5, alpha=2))
    add(C("torch.baddbmm", T(2, 2, 4), T(2, 2, 3), T(2, 3, 4)))
    add(C("torch.matmul", T(3, 3, dtype="int64"), T(3, 3, dtype="int64")))
    add(C("torch.matmul", T(2, 3, dtype="float64"), T(3, 2, dtype="float64")))
    # -- nn.functional
    img, w = T(1, 2, 6, 6), T(4, 2, 3, 3)
    add(C("F.conv2d", img, w, T(4), 1, 1))
    add(C("F.conv2d", img, w, stride=2, padding=(1, 0), dilation=1, groups=1))
    add(C("F.conv2d", T(1, 4, 5, 5), T(4, 2, 3, 3), groups=2, padding="same"))
    add(C("F.conv1d", T(2, 3, 8), T(4, 3, 3), T(4), stride=2, padding=1))
    add(C("F.conv_transpose2d", T(1, 2, 4, 4), T(2, 3, 3, 3), stride=2, padding=1, output_padding=1))
    add(C("F.conv_transpose1d", T(1, 2, 5), T(2, 3, 3), stride=2))
    add(C("F.max_pool2d", img, 2))
    add(C("F.max_pool2d", img, (3, 2), stride=1, padding=1, dilation=1, ceil_mode=True))
    add(C("F.max_pool2d_with_indices", img, 2))
    add(C("F.avg_pool2d", img, 3, stride=2, padding=1, count_include_pad=False))
    add(C("F.max_pool1d", T(1, 2, 9), 3, 2))
    add(C("F.avg_pool1d", T(1, 2, 9), 2))
    add(C("F.adaptive_avg_pool2d", img, (2, 3)))
    add(C("F.adaptive_max_pool2d", img, 2))
    add(C("F.adaptive_avg_pool1d", T(1, 2, 9), 4))
    add(C("F.linear", x23, T(5, 3), T(5)))
    add(C("F.bilinear", T(2, 3), T(2, 4), T(5, 3, 4), T(5)))
    for fn in ("relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "sigmoid", "tanh", "softsign",
               "tanhshrink", "logsigmoid", "hardswish", "hardsigmoid", "softplus"):
        add(C(f"F.{fn}", T(3, 4)))
    add(C("F.leaky_relu", T(3, 4), 0.2))
    add(C("F.hardtanh", T(3, 4), -0.5, 0.5))
    add(C("F.threshold", T(3, 4), 0.1, 20.0))
    add(C("F.gelu", T(3, 4), approximate="tanh"))
    add(C("F.softplus", T(3, 4), beta=2, threshold=10))
    add(C("F.glu", T(3, 4), -1))
    add(C("F.softmax", T(3, 4), dim=1))
    add(C("F.log_softmax", T(3, 4), dim=0))
    add(C("F.softmin", T(3, 4), 1))
    add(C("F.normalize", T(3, 4), p=2.0, dim=1))
    add(C("F.dropout", T(3, 4), 0.5, True))
    add(C("F.dropout2d", T(2, 3, 4, 4), 0.3))
    add(C("F.batch_norm", T(4, 3), T(3), T(3, fill="pos"), T(3), T(3), True, 0.1, 1e-5))
    add(C("F.layer_norm", T(2, 3, 4), (4,), T(4), T(4)))
    add(C("F.group_norm", T(2, 4, 3), 2, T(4), T(4)))
    add(C("F.instance_norm", T(2, 3, 5)))
    add(C("F.embedding", T(2, 3, fill="idx:10", dtype="int64"), T(10, 4)))
    add(C("F.embedding", T(4, fill="idx:10", dtype="int64"), T(10, 4), padding_idx=0))
    add(C("F.one_hot", T(5, fill="idx:4", dtype="int64"), 4))
    add(C("F.pad", x23, (1, 2)))
    add(C("F.pad", T(1, 2, 3, 3), (1, 1, 2, 0), value=1.0))
    add(C("F.pad", T(1, 2, 4), (2, 1), mode="constant", value=-1.0))
    add(C("F.interpolate", img, scale_factor=2, mode="nearest"))
    add(C("F.interpolate", img, size=(4, 9), mode="bilinear", align_corners=False))
    add(C("F.pixel_shuffle", T(1, 8, 2, 3), 2))
    add(C("F.pixel_unshuffle", T(1, 2, 4, 6), 2))
    add(C("F.unfold", img, 3, padding=1))
    add(C("F.fold", T(1, 8, 4), (3, 3), 2))
    add(C("F.cosine_similarity", T(3, 4), T(3, 4), 1))
    add(C("F.pairwise_distance", T(3, 4), T(3, 4)))
    add(C("F.scaled_dot_product_attention", T(2, 3, 4), T(2, 5, 4), T(2, 5, 4)))
    add(C("F.scaled_dot_product_attention", T(1, 2, 3, 4), T(1, 2, 3, 4), T(1, 2, 3, 4), is_causal=True))
    # -- losses
    add(C("F.mse_loss", T(3, 4), T(3, 4)))
    add(C("F.l1_loss", T(3, 4), T(3, 4), reduction="sum"))
    add(C("F.smooth_l1_loss", T(3, 4), T(3, 4), beta=0.5))
    add(C("F.huber_loss", T(3, 4), T(3, 4), delta=2.0))
    add(C("F.cross_entropy", T(3, 5), T(3, fill="idx:5", dtype="int64")))
    add(C("F.cross_entropy", T(3, 5, 2), T(3, 2, fill="idx:5", dtype="int64"), ignore_index=1, label_smoothing=0.1))
    add(C("F.cross_entropy", T(3, 5), T(3, 5, fill="unit")))
    add(C("F.nll_loss", T(3, 5), T(3, fill="idx:5", dtype="int64"), weight=T(5, fill="pos")))
    add(C("F.binary_cross_entropy", T(4, fill="unit"), T(4, fill="unit")))
    add(C("F.binary_cross_entropy_with_logits", T(4), T(4, fill="unit"), pos_weight=T(4, fill="pos")))
    add(C("F.kl_div", T(3, 4), T(3, 4, fill="unit"), reduction="batchmean"))
    add(C("F.margin_ranking_loss", T(4), T(4), T(4), margin=0.5))
    add(C("F.cosine_embedding_loss", T(3, 4), T(3, 4), T(3)))
    # -- modules (constructed, then called on fwd)
    add(C("nn.Linear", 3, 5, fwd=[x23]))
    add(C("nn.Linear", 3, 2, bias=False, fwd=[T(4, 2, 3)]))
    add(C("nn.Bilinear", 3, 4, 2, fwd=[T(2, 3), T(2, 4)]))
    add(C("nn.Conv2d", 2, 4, 3, padding=1, fwd=[img]))
    add(C("nn.Conv2d", 2, 4, (3, 2), stride=(2, 1), dilation=2, bias=False, fwd=[T(1, 2, 9, 9)]))
    add(C("nn.Conv2d", 4, 4, 3, groups=4, padding="same", fwd=[T(2, 4, 5, 5)]))
    add(C("nn.Conv1d", 3, 6, 3, stride=2, fwd=[T(2, 3, 10)]))
    add(C("nn.ConvTranspose2d", 2, 3, 3, stride=2, output_padding=1, fwd=[T(1, 2, 4, 4)]))
    add(C("nn.ConvTranspose1d", 2, 3, 4, fwd=[T(1, 2, 5)]))
    add(C("nn.MaxPool2d", 2, fwd=[img]))
    add(C("nn.MaxPool2d", 3, stride=2, padding=1, ceil_mode=True, fwd=[img]))
    add(C("nn.AvgPool2d", (2, 3), fwd=[img]))
    add(C("nn.MaxPool1d", 2, fwd=[T(1, 2, 8)]))
    add(C("nn.AvgPool1d", 3, stride=1, padding=1, fwd=[T(1, 2, 8)]))
    add(C("nn.AdaptiveAvgPool2d", (1, 1), fwd=[img]))
    add(C("nn.AdaptiveMaxPool2d", 3, fwd=[img]))
    add(C("nn.BatchNorm1d", 3, fwd=[T(4, 3)]))
    add(C("nn.BatchNorm1d", 3, momentum=None, affine=False, fwd=[T(4, 3, 5)]))
    add(C("nn.BatchNorm2d", 2, eps=1e-3, track_running_stats=False, fwd=[img]))
    add(C("nn.LayerNorm", 4, fwd=[T(2, 3, 4)]))
    add(C("nn.LayerNorm", (3, 4), elementwise_affine=False, fwd=[T(2, 3, 4)]))
    add(C("nn.GroupNorm", 2, 4, fwd=[T(2, 4, 3)]))
    add(C("nn.InstanceNorm2d", 2, affine=True, fwd=[img]))
    add(C("nn.Dropout", 0.3, fwd=[x23]))
    add(C("nn.Dropout2d", 0.5, fwd=[T(2, 3, 4, 4)]))
    add(C("nn.Embedding", 10, 4, fwd=[T(2, 3, fill="idx:10", dtype="int64")]))
    add(C("nn.Embedding", 10, 4, padding_idx=2, fwd=[T(5, fill="idx:10", dtype="int64")]))
    add(C("nn.Flatten", fwd=[T(2, 3, 4)]))
    add(C("nn.Flatten", 0, 1, fwd=[T(2, 3, 4)]))
    add(C("nn.Unflatten", 1, (2, 2), fwd=[T(3, 4)]))
    add(C("nn.Identity", fwd=[x23]))
    for m in ("ReLU", "ReLU6", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softsign",
              "Hardswish", "Hardsigmoid", "Softplus", "LogSigmoid", "Tanhshrink"):
        add(C(f"nn.{m}", fwd=[x23]))
    add(C("nn.LeakyReLU", 0.1, fwd=[x23]))
    add(C("nn.Hardtanh", -2.0, 2.0, fwd=[x23]))
    add(C("nn.Threshold", 0.1, 0.0, fwd=[x23]))
    add(C("nn.Softmax", dim=1, fwd=[x23]))
    add(C("nn.LogSoftmax", 0, fwd=[x23]))
    add(C("nn.GLU", fwd=[T(2, 4)]))
    add(C("nn.PixelShuffle", 2, fwd=[T(1, 4, 2, 2)]))
    add(C("nn.Upsample", scale_factor=2, mode="nearest", fwd=[img]))
    add(C("nn.Unfold", 2, stride=2, fwd=[T(1, 2, 4, 4)]))
    add(C("nn.Fold", (4, 4), 2, stride=2, fwd=[T(1, 8, 4)]))
    add(C("nn.CosineSimilarity", dim=0, fwd=[x23, x23]))
    add(C("nn.PairwiseDistance", p=1.0, fwd=[x23, x23]))
    add(C("nn.RNN", 3, 4, fwd=[T(5, 2, 3)]))
    add(C("nn.RNN", 3, 4, 2, nonlinearity="relu", bidirectional=True, fwd=[T(5, 3)]))
    add(C("nn.LSTM", 3, 4, num_layers=2, batch_first=True, fwd=[T(2, 5, 3)]))
    add(C("nn.LSTM", 3, 4, proj_size=2, fwd=[T(5, 2, 3)]))
    add(C("nn.GRU", 3, 4, bias=False, fwd=[T(5, 2, 3)]))
    add(C("nn.RNNCell", 3, 4, fwd=[x23]))
    add(C("nn.LSTMCell", 3, 4, fwd=[x23]))
    add(C("nn.GRUCell", 3, 4, fwd=[T(3)]))
    add(C("nn.MultiheadAttention", 4, 2, fwd=[T(3, 2, 4), T(5, 2, 4), T(5, 2, 4)]))
    add(C("nn.MultiheadAttention", 4, 1, batch_first=True, kdim=3, vdim=5, fwd=[T(2, 3, 4), T(2, 6, 3), T(2, 6, 5)]))
    add(C("nn.TransformerEncoderLayer", 4, 2, dim_feedforward=8, dropout=0.0, fwd=[T(3, 2, 4)]))
    add(C("nn.TransformerDecoderLayer", 4, 2, dim_feedforward=8, batch_first=True, fwd=[T(2, 3, 4), T(2, 5, 4)]))
    add(C("nn.MSELoss", fwd=[x23, x23]))
    add(C("nn.L1Loss", reduction="none", fwd=[x23, x23]))
    add(C("nn.CrossEntropyLoss", label_smoothing=0.2, fwd=[T(4, 3), T(4, fill="idx:3", dtype="int64")]))
    add(C("nn.NLLLoss", ignore_index=0, fwd=[T(4, 3), T(4, fill="idx:3", dtype="int64")]))
    add(C("nn.BCELoss", fwd=[T(4, fill="unit"), T(4, fill="unit")]))
    add(C("nn.BCEWithLogitsLoss", fwd=[T(4), T(4, fill="unit")]))
    add(C("nn.HuberLoss", delta=0.5, fwd=[x23, x23]))
    add(C("nn.SmoothL1Loss", beta=2.0, fwd=[x23, x23]))
    add(C("nn.KLDivLoss", reduction="sum", log_target=True, fwd=[x23, x23]))
    add(C("nn.MarginRankingLoss", margin=1.0, fwd=[T(3), T(3), T(3)]))
    # -- nn.init
    for fn, args, kw in (("uniform_", (-1.0, 1.0), {}), ("normal_", (0.0, 2.0), {}), ("constant_", (0.3,), {}),
                         ("zeros_", (), {}), ("ones_", (), {}), ("eye_", (), {}), ("xavier_uniform_", (), {"gain": 2.0}),
                         ("xavier_normal_", (), {}), ("kaiming_uniform_", (), {"a": 0.1, "mode": "fan_out"}),
                         ("kaiming_normal_", (), {"nonlinearity": "relu"}), ("orthogonal_", (), {}),
                         ("trunc_normal_", (), {"std": 0.5, "a": -1.0, "b": 1.0})):
        add(C(f"init.{fn}", T(3, 4), *args, **kw))
    add(C("init.kaiming_uniform_", T(4, 2, 3, 3)))
    add(C("init.calculate_gain", "leaky_relu", 0.2))
    # -- optimizers: params from the spec args (two leaves), grads set, two steps
    for kind, kw in (("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}),
                     ("SGD", {"lr": 0.1, "dampening": 0.1, "maximize": True}),
                     ("Adam", {"lr": 1e-3, "betas": (0.9, 0.99), "eps": 1e-8, "amsgrad": True}),
                     ("AdamW", {"lr": 1e-3, "weight_decay": 0.1}),
                     ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True}),
                     ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
                     ("Adadelta", {"lr": 1.0, "rho": 0.9}),
                     ("Adamax", {"lr": 2e-3}),
                     ("NAdam", {"lr": 2e-3, "momentum_decay": 4e-3}),
                     ("RAdam", {"lr": 1e-3}),
                     ("LBFGS", {"lr": 1, "max_iter": 4, "history_size": 3}),
                     ("LBFGS", {"lr": 1, "max_iter": 3, "line_search_fn": "strong_wolfe"})):
        add(C(f"optim.{kind}", T(3, 2, rg=True), T(2, rg=True), **kw))
    # -- schedulers: on SGD(lr=0.1, momentum=0.9), three epochs
    for kind, kw in (("StepLR", {"step_size": 2, "gamma": 0.5}), ("MultiStepLR", {"milestones": [1, 2], "gamma": 0.1}),
                     ("ExponentialLR", {"gamma": 0.9}), ("CosineAnnealingLR", {"T_max": 3, "eta_min": 0.001}),
                     ("CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 2}),
                     ("LinearLR", {"start_factor": 0.5, "total_iters": 3}), ("ConstantLR", {"factor": 0.5, "total_iters": 2}),
                     ("PolynomialLR", {"total_iters": 4, "power": 2.0}),
                     ("OneCycleLR", {"max_lr": 0.5, "total_steps": 10}),
                     ("ReduceLROnPlateau", {"mode": "min", "patience": 1, "factor": 0.5})):
        add(C(f"sched.{kind}", **kw))
    # -- data
    add(C("data.DataLoader", T(10, 3), T(10, fill="idx:3", dtype="int64"), batch_size=4, shuffle=True,
          drop_last=False, fixed=("num_workers",)))
    add(C("data.DataLoader", T(7, 2), batch_size=3, drop_last=True, fixed=("num_workers",)))
    add(C("data.DataLoader", T(5, 2, 2), batch_size=None, fixed=("num_workers",)))
    add(C("data.random_split", T(10, 2), [0.3, 0.7]))
    add(C("data.random_split", T(10, 2), [4, 6]))
    add(C("data.Subset", T(6, 2), [0, 2, 5]))
    # -- save / load
    add(C("io.save", x23))
    add(C("io.save", {"w": T(3, 4), "b": T(4, dtype="int64"), "n": 3, "s": "text"}))
    add(C("io.save", [T(2), T(0, 3), T(dtype="float64")]))
    add(C("io.save", {"nested": {"x": T(2, 2, dtype="bool")}, "t": (1.5, None)}))
    hdr = b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    add(C("io.bytes", len(hdr).to_bytes(8, "little") + hdr + b"\x00\x00\x80?"))
    return B


BASES = _bases()


# =========================================================================== mutation
INTS = [2 ** 62, -1, 0, 2 ** 31, 2 ** 31 - 1, -2 ** 31, 2 ** 63 - 1, -2 ** 63, 2 ** 64, 1 << 40, 7, -9]
FLOATS = [float("nan"), float("inf"), float("-inf"), 0.0, -1.0, 1e308, 5e-324, float(2 ** 62)]
DTYPES = ["float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16"]
TENSOR_MUTATIONS = ["empty", "0d", "8d", "9d", "int64", "int32", "uint8", "bool", "float64", "float16", "nan", "inf",
                    "noncontig", "expanded", "bigstride", "requires_grad", "python_float", "none"]
SHAPES = [(), (-1,), (2 ** 62,), (0,), (2 ** 31, 2 ** 31), (1,) * 9, (0, 0)]
STRINGS = ["", "bogus", "x" * 1000]


def _mutate_tensor(t, how):
    s = t.shape
    if how == "empty":
        return t.copy(shape=(s[:-1] + (0,)) if s else (0,))
    if how == "0d":
        return t.copy(shape=())
    if how == "8d":
        return t.copy(shape=((1,) * (8 - len(s)) + s) if len(s) <= 8 else s[:8])
    if how == "9d":
        return t.copy(shape=(1,) * max(0, 9 - len(s)) + s)
    if how in ("int64", "int32", "uint8", "bool", "float64", "float16"):
        fill = "bool" if how == "bool" else ("ints" if how.startswith(("int", "uint")) else "randn")
        return t.copy(dtype=how, fill=fill if t.fill in ("randn", "ints", "bool", "pos", "unit") else t.fill)
    if how in ("nan", "inf"):
        return t.copy(fill=how, dtype=t.dtype if t.dtype.startswith("float") else "float32")
    if how in ("noncontig", "expanded", "bigstride"):
        return t.copy(layout=how)
    if how == "requires_grad":
        return t.copy(rg=not t.rg)
    if how == "python_float":
        return 1.5
    return None


def _slots(obj, path, out, fixed=(), top=False):
    """Every mutable leaf under obj: (path, kind). top: obj is the call's own list of
    arguments (not a shape)."""
    if isinstance(obj, bool) or obj is None or obj is Ellipsis or isinstance(obj, bytes):
        return
    if isinstance(obj, int):
        out.append((path, "int"))
    elif isinstance(obj, float):
        out.append((path, "float"))
    elif isinstance(obj, str):
        out.append((path, "str"))
    elif isinstance(obj, T):
        out.append((path, "tensor"))
    elif isinstance(obj, D):
        out.append((path, "dtype"))
    elif isinstance(obj, S):
        for k in ("start", "stop", "step"):
            if getattr(obj, k) is not None:
                out.append((path + (("attr", k),), "int"))
    elif isinstance(obj, (tuple, list)):
        if obj and not top and all(isinstance(v, int) and not isinstance(v, bool) for v in obj):
            out.append((path, "shape"))
        for i, v in enumerate(obj):
            _slots(v, path + (("item", i),), out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k not in fixed:
                _slots(v, path + (("key", k),), out)


def _get(obj, path):
    for kind, k in path:
        obj = getattr(obj, k) if kind == "attr" else obj[k]
    return obj


def _set(root, path, value):
    """Replace the leaf at path in root (tuples are rebuilt)."""
    if not path:
        return value
    (kind, k), rest = path[0], path[1:]
    if kind == "attr":
        setattr(root, k, _set(getattr(root, k), rest, value))
        return root
    if isinstance(root, tuple):
        items = list(root)
        items[k] = _set(items[k], rest, value)
        return tuple(items)
    root[k] = _set(root[k], rest, value)
    return root


def _clone(x):
    if isinstance(x, T):
        return x.copy()
    if isinstance(x, S):
        return S(x.start, x.stop, x.step)
    if isinstance(x, D):
        return D(x.name)
    if isinstance(x, list):
        return [_clone(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_clone(v) for v in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x


def mutant(seed, i):
    """(base index, the mutated call, [what was changed])."""
    b = i % len(BASES)
    base = BASES[b]
    rng = random.Random(f"{seed}:{i}")
    call = C(base.target, *_clone(base.args), fwd=_clone(base.fwd), fixed=base.fixed, **_clone(base.kw))
    root = {"args": call.args, "kw": call.kw, "fwd": call.fwd}
    changes = []
    n = rng.choices([1, 2, 3], [6, 3, 1])[0]
    for _ in range(n):
        slots = []
        _slots(call.args, (("key", "args"),), slots, top=True)
        _slots(call.kw, (("key", "kw"),), slots, call.fixed)
        _slots(call.fwd, (("key", "fwd"),), slots, top=True)
        if not slots:
            break
        path, kind = rng.choice(slots)
        old = _get(root, path)
        if kind == "int":
            new = rng.choice(INTS)
        elif kind == "float":
            new = rng.choice(FLOATS)
        elif kind == "str":
            new = rng.choice(STRINGS)
        elif kind == "dtype":
            new = D(rng.choice([d for d in DTYPES if d != old.name]))
        elif kind == "shape":
            new = rng.choice(SHAPES + [tuple(old) + tuple(old[-1:])])
            new = list(new) if isinstance(old, list) else new
        else:
            how = rng.choice(TENSOR_MUTATIONS)
            new = _mutate_tensor(old, how)
            changes.append(f"{_where(path)}: {old!r} -> {how}")
            _set(root, path, new)
            continue
        changes.append(f"{_where(path)}: {_show(old)} -> {_show(new)}")
        _set(root, path, new)
    call.args, call.kw, call.fwd = root["args"], root["kw"], root["fwd"]
    return b, call, changes


def _where(path):
    out = ""
    for kind, k in path:
        out += f".{k}" if kind == "attr" else (f"[{k!r}]" if kind == "key" and out else (k if kind == "key" else f"[{k}]"))
    return out


# =========================================================================== execution (child side)
def _bind():
    global torch, nn, F
    sys.path.insert(0, os.path.join(HERE, ".."))
    import tensor as t
    torch, nn, F = t, t.nn, t.nn.functional


_FLOAT = ("float32", "float64", "float16", "bfloat16")


def make(spec):
    """The tensor a spec describes (the default generator decides the values)."""
    if not isinstance(spec, T):
        return spec
    dt = getattr(torch, spec.dtype)
    shape = spec.shape
    if spec.layout == "noncontig":          # a transposed copy: same shape, reversed strides
        base = make(spec.copy(shape=tuple(reversed(shape)), layout="contig", rg=False))
        x = base.permute(*reversed(range(len(shape)))) if len(shape) >= 2 else \
            make(spec.copy(shape=(shape[0] * 2,) if shape else (2,), layout="contig", rg=False))[::2]
        if not shape:
            x = x[0]
    elif spec.layout == "expanded":         # stride 0 along the first dim
        one = make(spec.copy(shape=((1,) + shape[1:]) if shape else (), layout="contig", rg=False))
        x = one.expand(*shape) if shape else one
    elif spec.layout == "bigstride":        # a leading dim of size 1 with stride 2**40
        c = make(spec.copy(layout="contig", rg=False))
        x = c.as_strided((1,) + tuple(c.shape), (2 ** 40,) + tuple(c.stride()))
    elif spec.fill in ("nan", "inf"):
        x = torch.full(shape, float(spec.fill), dtype=dt)
    elif spec.fill == "zeros":
        x = torch.zeros(shape, dtype=dt)
    elif spec.fill.startswith("idx:"):
        x = torch.randint(0, int(spec.fill[4:]), shape, dtype=dt)
    elif spec.dtype == "bool" or spec.fill == "bool":
        x = torch.randint(0, 2, shape).to(dt)
    elif spec.dtype in _FLOAT:
        x = torch.randn(shape, dtype=torch.float64)
        x = x.abs() + 0.1 if spec.fill == "pos" else (x.sigmoid() * 0.98 + 0.01 if spec.fill == "unit" else x)
        x = x.to(dt)
    else:
        x = torch.randint(-5, 10, shape, dtype=dt)
    if spec.rg:
        x = x.detach().requires_grad_(True) if spec.layout == "contig" else x.requires_grad_(True)
    return x


def build(x):
    """Specs -> values, recursively (slices and dtypes too)."""
    if isinstance(x, T):
        return make(x)
    if isinstance(x, D):
        return getattr(torch, x.name)
    if isinstance(x, S):
        return slice(x.start, x.stop, x.step)
    if isinstance(x, list):
        return [build(v) for v in x]
    if isinstance(x, tuple):
        return tuple(build(v) for v in x)
    if isinstance(x, dict):
        return {k: build(v) for k, v in x.items()}
    return x


# A result of more elements than this is not summed for the backward: a view may be huge
# and legal (broadcast_to(x, (2**40, 4)) is a stride-0 view), and summing it takes as long
# as in PyTorch (hours), which is slow, not wrong.
_BACKWARD_MAX_NUMEL = 1 << 26


def _backward(r):
    """Exercise autograd on what came back (errors are fine)."""
    if isinstance(r, (tuple, list)):
        r = r[0] if r else None
    if isinstance(r, torch.Tensor) and r.requires_grad and r.is_floating_point() and r.numel() <= _BACKWARD_MAX_NUMEL:
        r.sum().backward()


def execute(call):
    t = call.target
    head, _, name = t.partition(".")
    if head == "" and name:                                  # a method
        args = build(call.args)
        r = getattr(args[0], name)(*args[1:], **build(call.kw))
        _backward(r)
        return r
    if head in ("torch", "F", "init"):
        mod = {"torch": torch, "F": F, "init": torch.nn.init}[head]
        r = getattr(mod, name)(*build(call.args), **build(call.kw))
        _backward(r)
        return r
    if head == "nn":
        m = getattr(nn, name)(*build(call.args), **build(call.kw))
        r = m(*build(call.fwd))
        _backward(r)
        repr(m)
        m.load_state_dict(m.state_dict())
        return r
    if head == "index":
        args = build(call.args)
        if name == "get":
            r = args[0][args[1]]
            _backward(r)
            return r
        args[0][args[1]] = args[2]
        return args[0]
    if head == "optim":
        params = [p for p in build(call.args) if isinstance(p, torch.Tensor)]
        opt = getattr(torch.optim, name)(params, **build(call.kw))

        def closure():
            opt.zero_grad()
            loss = sum((p * p).sum() for p in params)
            loss.backward()
            return loss
        for _ in range(2):
            opt.step(closure)
        opt.load_state_dict(opt.state_dict())
        return opt
    if head == "sched":
        p = torch.ones(2, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
        s = getattr(torch.optim.lr_scheduler, name)(opt, *build(call.args), **build(call.kw))
        for _ in range(3):
            p.grad = torch.ones(2)
            opt.step()
            s.step(1.0) if name == "ReduceLROnPlateau" else s.step()
        if name != "ReduceLROnPlateau":     # its state_dict is not exposed (NotImplementedError)
            s.state_dict()
        return s
    if head == "data":
        D_ = torch.utils.data
        if name == "DataLoader":
            ds = D_.TensorDataset(*[a for a in build(call.args) if isinstance(a, torch.Tensor)])
            return list(D_.DataLoader(ds, **build(call.kw)))
        args = build(call.args)
        ds = D_.TensorDataset(args[0])
        if name == "random_split":
            return [list(s) for s in D_.random_split(ds, *args[1:], **build(call.kw))]
        return list(D_.Subset(ds, *args[1:]))
    if head == "io":
        buf = io.BytesIO()
        if name == "bytes":
            return torch.load(io.BytesIO(call.args[0]), weights_only=True)
        torch.save(build(call.args[0]), buf)
        buf.seek(0)
        return torch.load(buf, weights_only=True)
    raise ValueError(f"unknown target {t}")


def _limit_memory():
    if "asan" in os.environ.get("LD_PRELOAD", "") or os.environ.get("TN_FUZZ_NO_RLIMIT"):
        return
    try:
        import resource
        lim = 2 << 30
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            lim = min(lim, hard)
        resource.setrlimit(resource.RLIMIT_AS, (lim, hard))
    except (ImportError, ValueError, OSError):
        pass


def run_one(seed, i):
    """Mutant seed:i in this process: 'ok' or 'exception: ...' (a crash never returns)."""
    if i < 0:
        call = BASES[-i - 1]
    else:
        _, call, _ = mutant(seed, i)
    torch.manual_seed(1234)
    try:
        execute(call)
        return "ok"
    except Exception as e:      # any Python exception is the right outcome for a bad call
        return f"exception: {type(e).__name__}: {str(e)[:200]}"


def child_main(seed, ids):
    """Run the mutants ids (negative: base -id-1, unmutated), one protocol line per event."""
    import faulthandler
    import gc
    import warnings
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    faulthandler.enable()
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(3000)
    _limit_memory()
    _bind()
    for k, i in enumerate(ids):
        proto.write(f"START {i}\n")
        verdict = run_one(seed, i)
        proto.write("DONE " + json.dumps([i, verdict]) + "\n")
        if k % 50 == 49:
            gc.collect()
    proto.write("END\n")


# =========================================================================== the parent
def run_mutants(seed, ids, timeout=TIMEOUT, batch=BATCH, python=None, progress=None):
    """{id: (status, detail)}: status 'ok' (returned or raised), 'crash' (the interpreter
    died: detail has the signal and stderr) or 'hang' (ran past timeout, killed)."""
    import signal
    results = {}
    env = dict(os.environ, PYTHONFAULTHANDLER="1", OMP_NUM_THREADS="1")
    if "asan" in env.get("LD_PRELOAD", ""):     # no address-space cap there: ASan's own allocation cap
        env["ASAN_OPTIONS"] = "max_allocation_size_mb=1024:allocator_may_return_null=1:detect_leaks=0" + \
            (":" + env["ASAN_OPTIONS"] if env.get("ASAN_OPTIONS") else "")
    pending = list(ids)
    while pending:
        chunk, pending = pending[:batch], pending[batch:]
        while chunk:
            cmd = [python or sys.executable, os.path.abspath(__file__), "--child", str(seed), ",".join(map(str, chunk))]
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            sel = selectors.DefaultSelector()
            sel.register(p.stdout, selectors.EVENT_READ, "out")
            sel.register(p.stderr, selectors.EVENT_READ, "err")
            err, buf, current, ended = io.BytesIO(), b"", None, False
            deadline = time.monotonic() + timeout + 60          # the import
            streams = 2
            while streams:
                left = deadline - time.monotonic()
                if left <= 0:
                    p.kill()
                    break
                for key, _ in sel.select(min(left, 1.0)):
                    data = os.read(key.fileobj.fileno(), 65536)
                    if not data:
                        sel.unregister(key.fileobj)
                        streams -= 1
                        continue
                    if key.data == "err":
                        err.write(data)
                        if err.tell() > 1 << 20:
                            err.seek(0)
                            err.truncate()
                        continue
                    buf += data
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        line = line.decode()
                        if line.startswith("START "):
                            current = int(line[6:])
                            err.seek(0)
                            err.truncate()
                            deadline = time.monotonic() + timeout
                        elif line.startswith("DONE "):
                            i, verdict = json.loads(line[5:])
                            results[i] = ("ok", verdict)
                            current = None
                            if progress:
                                progress(len(results))
                        elif line == "END":
                            ended = True
            try:
                rc = p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            for f in (p.stdout, p.stderr):
                f.close()
            sel.close()
            tail = err.getvalue().decode("utf-8", "replace")[-2500:]
            if ended:
                break
            if current is None:
                raise RuntimeError(f"the fuzz child failed outside any mutant (rc {rc}):\n{tail}")
            hung = time.monotonic() >= deadline
            try:
                sig = f", {signal.Signals(-rc).name}" if rc < 0 else ""
            except ValueError:
                sig = ""
            results[current] = ("hang", f"ran past {timeout:g} s (killed); stderr:\n{tail}") if hung else \
                ("crash", f"the interpreter died (exit status {rc}{sig}); stderr:\n{tail}")
            chunk = chunk[chunk.index(current) + 1:]
    return results


def describe(seed, i):
    if i < 0:
        return f"base {-i - 1}: {BASES[-i - 1]!r}"
    b, call, changes = mutant(seed, i)
    return f"mutant {seed}:{i} (base {b}: {BASES[b]!r})\n    call:    {call!r}\n    changed: " + "; ".join(changes)


def _ref(i):
    return f"{SEED}:{i}" if i >= 0 else f"base {-i - 1}"


# =========================================================================== known crashes
# Mutants that crash or hang today, with the reason and the file at fault. Each is a strict
# xfail below (run alone in a child) and is left out of the sweep. When one is fixed, its
# xfail XPASSes: move it to FIXED. Ids are SEED:I (of any seed). None is open.
KNOWN = {}

# Mutants whose failure is undefined behaviour (signed overflow) that only the sanitizers
# see: a plain build computes a wrapped number and usually raises an error after it.
# Left out of the sweep everywhere; strict xfails under the sanitizers (make test
# SANITIZE=1 preloads them: LD_PRELOAD has libasan), skipped elsewhere. None is open.
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")
KNOWN_UB = {}

# Findings that are fixed: each must pass (run alone in a child, in every build; the
# undefined behaviour ones fail only under the sanitizers without their fix).
_PIXEL_SHUFFLE = ("SIGFPE: upscale_factor squared overflowed int64 (to 0 for 2**32 and up) and C % (r * r) divided "
                  "by zero (src/nn/resize.c, tn__pixel_shuffle; pixel_unshuffle's C * r * r overflowed too)")
FIXED = {
    "1:1843": "F.pixel_shuffle(x, 2**40): " + _PIXEL_SHUFFLE,
    "1:3411": "nn.PixelShuffle(2**40) on a tensor that requires grad: " + _PIXEL_SHUFFLE,
    "1:3909": "nn.PixelShuffle(2**40): " + _PIXEL_SHUFFLE,
    "1:26779": "nn.AdaptiveMaxPool2d(2**62): SIGSEGV: the window table's size 2 * (OH + OW) overflowed int64 "
               "(src/nn/pooling.c, tn__adaptive_max_pool)",
    "1:38910": "Tensor.tile of an 8-dim tensor, a repeat other than 1 (here 0): SIGSEGV: tn_repeat unsqueezed to 9 "
               "dims, got NULL and read u->shape (src/ops/join.c, tn_repeat)",
    "1:4414": "a hang: nn.RNN(3, 4, num_layers=2**31) built layer after layer until memory ran out (PyTorch 1.13's "
              "RNNBase loops the same way); now a count whose parameters cannot fit in memory raises at once "
              "(rnn_modules.py, _check_rnn_fits; src/modules/rnn.c, tn__rnn_new)",
    "1:1845": "UB: F.unfold(x, 3, padding=2**31 - 1): signed overflow (H + 2p) * (W + 2p) in the im2col geometry "
              "(src/nn/functional.c)",
    "1:2244": "UB: Tensor.std(0, correction=-2**63): signed overflow n - correction (src/ops/reduce.c, tn_var_dims; "
              "now in double, as PyTorch)",
    "1:4336": "UB: F.fold(x, (2**40, 2**40), 2): signed overflow of the output size product (src/nn/functional.c)",
    "2:19360": "UB: nn.GRUCell(2**62, 0): a zero-element weight [0, 2**62] whose byte strides overflowed in the "
               "iterator (src/core/iterator.c, tn__iter_add)",
    "3:3967": "UB: lr_scheduler.CosineAnnealingWarmRestarts(T_0=2, T_mult=2**62), stepped: the restart period "
              "T_i * T_mult overflowed int64 (src/optim/lr_scheduler.c, tn__sched_step; now saturating)",
    "3:12496": "a hang of the fuzzer, not the library: broadcast_to(x, (2**40, 4)) of a tensor that requires grad is a "
               "legal stride-0 view, and the fuzzer summed its 2**42 elements for a backward (now: not past 2**26)",
}


# =========================================================================== pytest
try:
    import pytest
except ImportError:
    pytest = None

if pytest is not None:
    def _lib_or_skip():
        try:
            _bind()
        except OSError as e:            # libtensor.so not built
            pytest.skip(f"the library is not built: {e}")

    def test_table_size():
        """A few hundred base calls, every family."""
        assert len(BASES) >= 300
        fams = {c.target.split(".")[0] or "method" for c in BASES}
        assert {"method", "torch", "F", "nn", "init", "optim", "sched", "data", "io", "index"} <= fams

    def test_bases_work():
        """Every base call works unmutated (else its mutants test nothing but one error path)."""
        _lib_or_skip()
        res = run_mutants(SEED, [-k - 1 for k in range(len(BASES))])
        bad = [f"{describe(SEED, i)}\n    -> {st}: {d[:300]}" for i, (st, d) in sorted(res.items(), reverse=True)
               if st != "ok" or d != "ok"]
        assert not bad, f"{len(bad)} base calls fail unmutated:\n" + "\n".join(bad)

    def test_mutation_is_reproducible():
        a, b = mutant(7, 12345), mutant(7, 12345)
        assert repr(a[1]) == repr(b[1]) and a[2] == b[2] and a[2]
        assert repr(mutant(7, 12346)[1]) != repr(a[1]) or mutant(7, 12346)[2] != a[2]

    def test_mutants():
        """N mutants of seed S (TN_FUZZ_MUTANTS, TN_FUZZ_SEED): no signal, no hang."""
        _lib_or_skip()
        known = {int(k.split(":")[1]) for k in list(KNOWN) + list(KNOWN_UB) if k.split(":")[0] == str(SEED)}
        ids = [i for i in range(N_MUTANTS) if i not in known]
        t0 = time.monotonic()
        res = run_mutants(SEED, ids)
        bad = [(i, st, d) for i, (st, d) in sorted(res.items()) if st != "ok"]
        msg = "\n".join(f"{st.upper()} {describe(SEED, i)}\n    reproduce: python3 {os.path.relpath(__file__)} --repro {SEED}:{i}\n"
                        f"    {d[:1500]}" for i, st, d in bad)
        assert len(res) == len(ids), f"{len(ids) - len(res)} mutants have no result"
        assert not bad, f"{len(bad)} of {len(ids)} mutants crashed or hung ({time.monotonic() - t0:.0f} s):\n{msg}"

    def _known_param(k):
        return pytest.param(k, id=k, marks=pytest.mark.xfail(strict=True, reason=KNOWN[k]))

    @pytest.mark.parametrize("ref", [_known_param(k) for k in sorted(KNOWN)])
    def test_known_crash(ref):
        _lib_or_skip()
        seed, i = (int(v) for v in ref.split(":"))
        res = run_mutants(seed, [i])
        st, d = res[i]
        assert st == "ok", f"{st}: {describe(seed, i)}\n{d[:1500]}"

    def test_fixed_findings():
        """Every fixed finding stays fixed (its mutant returns or raises; one child per seed)."""
        _lib_or_skip()
        bad = []
        for seed in sorted({int(k.split(":")[0]) for k in FIXED}):
            ids = [int(k.split(":")[1]) for k in FIXED if int(k.split(":")[0]) == seed]
            for i, (st, d) in sorted(run_mutants(seed, ids).items()):
                if st != "ok":
                    bad.append(f"{st.upper()} {seed}:{i}: {FIXED[f'{seed}:{i}']}\n    {describe(seed, i)}\n    {d[:1500]}")
        assert not bad, f"{len(bad)} fixed findings fail again:\n" + "\n".join(bad)

    def _ub_param(k):
        mark = pytest.mark.xfail(strict=True, reason=KNOWN_UB[k]) if SANITIZED else \
            pytest.mark.skip(reason="undefined behaviour seen only under the sanitizers (make test SANITIZE=1): " + KNOWN_UB[k])
        return pytest.param(k, id=k, marks=mark)

    @pytest.mark.parametrize("ref", [_ub_param(k) for k in sorted(KNOWN_UB)])
    def test_known_undefined_behaviour(ref):
        _lib_or_skip()
        seed, i = (int(v) for v in ref.split(":"))
        st, d = run_mutants(seed, [i])[i]
        assert st == "ok", f"{st}: {describe(seed, i)}\n{d[:1500]}"

    def test_loading_a_safetensors_file_runs_no_code(tmp_path):
        """'safetensors never run code': a file whose structure metadata holds a pickle must
        not execute it when loaded with the defaults (fixed: weights_only=True by default)."""
        _lib_or_skip()
        import base64
        import pickle
        marker = tmp_path / "ran"
        payload = pickle.dumps(_Touch(str(marker)))
        structure = json.dumps({"format": 1, "root": {"P": base64.b64encode(payload).decode()}})
        header = json.dumps({"__metadata__": {"tensor.h/structure": structure}}).encode()
        header += b" " * (-len(header) % 8)
        blob = len(header).to_bytes(8, "little") + header
        try:
            torch.load(io.BytesIO(blob))
        except Exception:
            pass
        assert not marker.exists(), "loading the file ran code from it"


class _Touch:
    """Unpickling it creates a file (what a hostile file would do: run anything)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


# =========================================================================== command line
def _main(argv):
    if argv[:1] == ["--child"]:
        child_main(int(argv[1]), [int(v) for v in argv[2].split(",")])
        return 0
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mutants", type=int, help="run a campaign of N mutants and report")
    ap.add_argument("--start", type=int, default=0, help="first mutant index of the campaign")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--show", metavar="SEED:I", help="describe a mutant")
    ap.add_argument("--repro", metavar="SEED:I", help="run a mutant in this process")
    ap.add_argument("--bases", action="store_true", help="run every base call unmutated and report")
    a = ap.parse_args(argv)
    if a.show or a.repro:
        seed, i = (int(v) for v in (a.show or a.repro).split(":"))
        print(describe(seed, i))
        if a.repro:
            _bind()
            print(run_one(seed, i))
        return 0
    ids = [-k - 1 for k in range(len(BASES))] if a.bases else list(range(a.start, a.start + (a.mutants or N_MUTANTS)))
    t0 = time.monotonic()

    def progress(n):
        if n % 5000 == 0:
            print(f"  {n} done, {time.monotonic() - t0:.0f} s", file=sys.stderr)
    res = run_mutants(a.seed, ids, progress=progress)
    counts, exc = {}, 0
    for i, (st, d) in sorted(res.items()):
        counts[st] = counts.get(st, 0) + 1
        exc += st == "ok" and d != "ok"
        if st != "ok" or (a.bases and d != "ok"):
            print(f"{st.upper()} {describe(a.seed, i)}\n    {d[:800]}")
    print(f"{len(ids)} {'base calls' if a.bases else f'mutants of seed {a.seed}'} in {time.monotonic() - t0:.0f} s: "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" ({exc} of the ok raised an exception)")
    return 1 if any(st != "ok" for st, _ in res.values()) else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
