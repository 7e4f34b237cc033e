"""torch.cuda.CUDAGraph, torch.cuda.graph, torch.cuda.graph_pool_handle,
torch.cuda.make_graphed_callables: CUDA graphs of eager
code over tn_cuda_graph_* (src/backend/cuda_graph.c). Warm up first (a few eager steps: the
optimizer's state made, cuDNN's algorithms cached), then capture once and replay with new
values copied into the static inputs. Allocations inside a capture come from a pool of its
own (or the one passed), reserved until the graph is reset. Not captured (the capture fails,
naming it): copies between host and device (.item(), .cpu(), printing), synchronisations,
draws from a non-default generator, optimizers other than SGD and Adam/AdamW(capturable=True)
(PyTorch refuses capturable=False alike). Captured: index checks (a bad index fed to a
replay errors at the next synchronisation, as eager), random draws (each replay draws fresh
numbers from the default generator, PyTorch's graph-safe Philox), max pooling. Captures are
always CUDA's thread-local mode: the three capture_error_mode values are accepted (another is
an error) and behave the same, because the library refuses its own unsafe calls on the
capturing thread in every mode (docs/cuda.md says why); the stream argument is accepted and
ignored (the capture uses a stream of its own)."""
import builtins as _builtins

from . import _C
from ._core import _raise

_MODES = ("global", "thread_local", "relaxed")


class _GraphPool:
    """An opaque pool handle (torch.cuda.graph_pool_handle(), CUDAGraph.pool())."""
    __slots__ = ("_ptr",)

    def __init__(self, ptr):
        self._ptr = ptr

    def __del__(self):
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and _C is not None and _C.lib is not None:
            _C.lib.tn_cuda_graph_pool_release(ptr)

    def __repr__(self):
        return f"<graph pool handle {self._ptr:#x}>"


def graph_pool_handle():
    """A memory pool that graphs captured with pool=it share (replay them in capture order)."""
    ptr = _C.lib.tn_cuda_graph_pool_handle()
    if not ptr:
        _raise()
    return _GraphPool(ptr)


def is_current_stream_capturing():
    return _builtins.bool(_C.lib.tn_cuda_graph_capturing())


def _check_mode(mode):
    # all three are the one thread-local capture here (docs/cuda.md: why they are equivalent)
    if mode not in _MODES:
        raise RuntimeError(f"Unknown capture_error_mode {mode!r}: expected one of {', '.join(map(repr, _MODES))}")


class CUDAGraph:
    """torch.cuda.CUDAGraph: capture_begin/capture_end (or `with torch.cuda.graph(g)`), replay, reset."""

    def __init__(self):
        self._g = None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        _check_mode(capture_error_mode)
        if self._g:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To capture a new graph, create a new instance.")
        if pool is not None and not isinstance(pool, _GraphPool):
            raise TypeError(f"capture_begin(): pool must be a handle from torch.cuda.graph_pool_handle() or CUDAGraph.pool(), not {type(pool).__name__}")
        if _C.lib.tn_cuda_graph_begin(pool._ptr if pool is not None else None):
            _raise()

    def capture_end(self):
        g = _C.lib.tn_cuda_graph_end()
        if not g:
            _raise()
        self._g = g

    def replay(self):
        if not self._g:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful capture.")
        if _C.lib.tn_cuda_graph_replay(self._g):
            _raise()

    def reset(self):
        """The graph destroyed and its pool's reference dropped (tensors made inside the capture stay valid)."""
        g, self._g = self._g, None
        if g:
            _C.lib.tn_cuda_graph_free(g)

    def pool(self):
        if not self._g:
            raise RuntimeError("Called CUDAGraph::pool without a preceding successful capture.")
        ptr = _C.lib.tn_cuda_graph_pool_of(self._g)
        if not ptr:
            _raise()
        return _GraphPool(ptr)

    def enable_debug_mode(self):
        raise NotImplementedError("CUDAGraph.enable_debug_mode is not implemented in tensor.h")

    def debug_dump(self, debug_path):
        raise NotImplementedError("CUDAGraph.debug_dump is not implemented in tensor.h")

    def __del__(self):
        if _C is not None and getattr(_C, "lib", None) is not None:
            self.reset()


class graph:
    """torch.cuda.graph(cuda_graph, pool=None, stream=None, capture_error_mode="global"):
    the block's GPU work is captured into cuda_graph. On an exception inside, the capture is
    ended (and dropped) and the exception goes on."""
    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        _check_mode(capture_error_mode)
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.stream = stream   # accepted; the capture runs on a stream of its own
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        from . import cuda
        cuda.synchronize()   # as PyTorch: the work queued before is done
        self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            g = _C.lib.tn_cuda_graph_end()   # the failed capture's state restored, its pool released
            if g:
                _C.lib.tn_cuda_graph_free(g)
            _C.lib.tn_clear_error()
            return False
        self.cuda_graph.capture_end()
        return False


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False):
    """torch.cuda.make_graphed_callables: each callable (a Module or a function of tensors)
    becomes an autograd-aware callable whose forward and backward replay CUDA graphs
    captured here from sample_args (PyTorch's scheme: warm-up iterations, the forward
    captured, then the backward (autograd.grad) into the same pool). Calls must use inputs
    of sample_args' shapes, dtypes and requires_grad; a Module's parameters are the static
    ones (their grads accumulate into .grad as usual). Modules with hooks are refused."""
    from . import autograd, nn, Tensor, empty_like, ones_like
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError("make_graphed_callables: one tuple of sample args per callable")
    mempool = graph_pool_handle()
    results = []
    for func, args in zip(callables, sample_args):
        args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
        if not all(isinstance(a, Tensor) for a in args):
            raise TypeError("make_graphed_callables: sample_args must be tensors (nested structures are not supported)")
        if isinstance(func, nn.Module):
            if getattr(func, "_forward_hooks", None) or getattr(func, "_forward_pre_hooks", None):
                raise RuntimeError("Modules must not have hooks registered at the time they are passed. However, registering hooks "
                                   "on modules after passing them through make_graphed_callables is allowed.")
            params = tuple(func.parameters())
        else:
            params = ()
        static_inputs = args + params
        needs = [t for t in static_inputs if t.requires_grad]
        for _ in range(num_warmup_iters):   # as PyTorch: autograd.grad, .grad untouched
            outs = func(*args)
            outs = outs if isinstance(outs, tuple) else (outs,)
            go = [o for o in outs if o.requires_grad]
            if go and needs:
                autograd.grad(go, needs, grad_outputs=[ones_like(o) for o in go], allow_unused=allow_unused_input)
            del outs, go
        fwd, bwd = CUDAGraph(), CUDAGraph()
        with graph(fwd, pool=mempool):
            static_outputs = func(*args)
        single = not isinstance(static_outputs, tuple)
        static_outputs = (static_outputs,) if single else static_outputs
        grad_outs = [o for o in static_outputs if o.requires_grad]
        static_grad_outputs = [empty_like(o) for o in grad_outs]
        with graph(bwd, pool=mempool):
            grads = autograd.grad(grad_outs, needs, grad_outputs=static_grad_outputs, allow_unused=allow_unused_input) if grad_outs and needs else ()
        static_grad_inputs, k = [], 0
        for t in static_inputs:   # one per static input: None where it needs no grad (or got none)
            if t.requires_grad:
                static_grad_inputs.append(grads[k])
                k += 1
            else:
                static_grad_inputs.append(None)
        results.append(_graphed(fwd, bwd, static_inputs, static_outputs, grad_outs, static_grad_outputs, static_grad_inputs,
                                len(args), single, autograd))
    for i, func in enumerate(callables):
        if isinstance(func, nn.Module):   # as PyTorch: the module, its forward the graphed one
            func.forward = results[i]
            results[i] = func
    return results[0] if just_one else tuple(results)


def _graphed(fwd, bwd, static_inputs, static_outputs, grad_outs, static_grad_outputs, static_grad_inputs, nargs, single, autograd):
    class Graphed(autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for s, x in zip(static_inputs[:nargs], inputs[:nargs]):
                if s.data_ptr() != x.data_ptr():
                    s.copy_(x)
            fwd.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        def backward(ctx, *grads):
            k = 0
            for o, g in zip(static_outputs, grads):
                if o.requires_grad:
                    if g is None:
                        static_grad_outputs[k].zero_()
                    elif static_grad_outputs[k].data_ptr() != g.data_ptr():
                        static_grad_outputs[k].copy_(g)
                    k += 1
            bwd.replay()
            return tuple(b.detach() if b is not None else None for b in static_grad_inputs)

    def functionalized(*user_args):
        out = Graphed.apply(*(tuple(user_args) + static_inputs[nargs:]))
        return out[0] if single else out
    functionalized._graphs = (fwd, bwd)   # kept alive with the callable
    return functionalized
