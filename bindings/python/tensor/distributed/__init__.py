"""tensor.distributed: PyTorch's torch.distributed over the C library's MPI or NCCL collectives.

    mpirun -np 2 python3 train.py        # with TENSOR_LIB=lib/libtensor_mpi.so (make DIST=mpi)
    torchrun --nproc-per-node 1 train.py # backend="nccl": CUDA tensors, NCCL in the GPU unit

``init_process_group("mpi")`` (``"gloo"`` is served by MPI too) takes the rank and world
size from mpirun; ``init_process_group("nccl")`` communicates CUDA tensors on the device
(the ncclUniqueId travels over MPI in an MPI build, else by PyTorch's env:// rendezvous:
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT as torchrun sets them, each one needed, also
for one process, unless rank= / world_size= are given; a missing one is PyTorch's ValueError). Then ``all_reduce``, ``broadcast``, ``reduce``, ``all_gather``,
``gather``, ``scatter``, ``reduce_scatter``, ``barrier``, ``send``/``recv`` and
``isend``/``irecv`` work on tensors in place as in PyTorch (any layout; ``async_op=True``
returns a Work to ``wait()`` on), with ``ReduceOp`` SUM, AVG, PRODUCT, MIN, MAX and groups
from ``new_group``. A collective that a rank never joins fails with an error after the
timeout (``timeout=timedelta(...)``, default 30 minutes) instead of hanging.
"""
import ctypes
from datetime import timedelta

from .._C import lib
from .._core import Tensor, _i64, _ptrs, _raise, _tp

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "get_backend", "new_group", "ReduceOp", "all_reduce", "reduce", "broadcast",
           "all_gather", "gather", "scatter", "reduce_scatter", "barrier", "send", "recv", "isend", "irecv",
           "Work", "ProcessGroup", "GroupMember", "all_gather_into_tensor", "reduce_scatter_tensor"]

default_pg_timeout = timedelta(minutes=30)


class ReduceOp:
    """torch.distributed.ReduceOp (the values are the C tn_dist_op's)."""
    SUM, AVG, PRODUCT, MIN, MAX = 0, 1, 2, 3, 4


class ProcessGroup:
    """A group from new_group (the default group is None)."""

    def __init__(self, ptr, ranks):
        self._ptr, self.ranks = ptr, tuple(ranks)

    def size(self):
        return len(self.ranks)

    def rank(self):
        return lib.tn_dist_get_rank(self._ptr)

    def __del__(self):
        try:
            if self._ptr and lib.tn_dist_is_initialized():
                lib.tn_dist_group_free(self._ptr)
        except Exception:
            pass
        self._ptr = None


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


class Work:
    """An async collective: wait() completes it (its tensor is ready after), is_completed()."""

    def __init__(self, ptr, keep):
        self._ptr, self._keep, self._result = ptr, keep, None

    def wait(self, timeout=None):
        if self._ptr:
            p, self._ptr = self._ptr, None
            r = lib.tn_dist_wait(p)
            self._keep = None
            if r < 0:
                _raise()
            self._result = r
        return True

    def is_completed(self):
        if not self._ptr:
            return True
        r = lib.tn_dist_test(self._ptr)
        if r < 0:
            _raise()
        return bool(r)

    def _source(self):
        self.wait()
        return self._result


class _Done(Work):
    def __init__(self):
        super().__init__(None, None)


_backend = [None]


def is_available():
    """Whether a backend is there: MPI (make DIST=mpi), or NCCL in the CUDA backend."""
    return bool(lib.tn_dist_is_available())


def is_initialized():
    return bool(lib.tn_dist_is_initialized())


def is_mpi_available():
    return bool(lib.tn_dist_is_backend_available(b"mpi"))


def is_gloo_available():
    return is_mpi_available()


def is_nccl_available():
    """Whether the CUDA backend has NCCL (the GPU unit built with it, or the checking stand-in)."""
    return bool(lib.tn_dist_is_backend_available(b"nccl"))


def init_process_group(backend=None, init_method=None, timeout=default_pg_timeout, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """Joins the processes mpirun (or, for "nccl" without MPI, torchrun) started. "nccl"
    without MPI: env:// rendezvous (rank / world_size, when given, stand in for RANK /
    WORLD_SIZE); under mpirun, rank and world_size when given must agree with MPI's."""
    backend = (backend or "mpi").lower()
    if backend in ("mpi", "gloo") and not is_mpi_available():
        raise RuntimeError("Distributed package doesn't have MPI built in: build the library with `make DIST=mpi` "
                           "and point TENSOR_LIB at lib/libtensor_mpi.so")
    if backend == "nccl" and init_method not in (None, "env://"):   # mpi/gloo: mpirun's, init_method unused
        raise ValueError(f"init_method {init_method!r} is not supported: this build meets by env:// rendezvous "
                         "(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or under mpirun")
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    opts = f"timeout={float(seconds)!r}, rank={int(rank)}, world_size={int(world_size)}"
    if lib.tn_dist_init_str(backend.encode(), opts.encode()) < 0:
        msg = lib.tn_last_error().decode("utf-8", "replace")
        if "Error initializing torch.distributed using env:// rendezvous" in msg:   # PyTorch's ValueError
            lib.tn_clear_error()
            raise ValueError(msg[msg.index("Error initializing"):])
        if "disagree with the launcher's" in msg:
            lib.tn_clear_error()
            raise ValueError(msg)
        _raise()
    _backend[0] = backend


def destroy_process_group(group=None):
    if group is not None:
        group.__del__()
        return
    if lib.tn_dist_destroy() < 0:
        _raise()
    _backend[0] = None


def _check_init():
    if not is_initialized():
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")


def _g(group):
    if group is None or group is GroupMember.WORLD:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group, not {type(group).__name__}")
    return group._ptr


def get_backend(group=None):
    _check_init()
    return _backend[0]


def get_rank(group=None):
    _check_init()
    return lib.tn_dist_get_rank(_g(group))


def get_world_size(group=None):
    _check_init()
    return lib.tn_dist_get_world_size(_g(group))


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A group of the given global ranks; every rank must call it (members or not)."""
    _check_init()
    ranks = list(range(get_world_size())) if ranks is None else sorted(int(r) for r in ranks)
    arr, n = _i64(ranks, "ranks")
    p = lib.tn_dist_new_group(arr, n)
    if not p:
        _raise()
    return ProcessGroup(p, ranks)


def _rc(r):
    if r < 0:
        _raise()
    return r


def _op(op):
    if isinstance(op, int) and 0 <= op <= 4:
        return op
    raise ValueError(f"unsupported ReduceOp {op!r} (SUM, AVG, PRODUCT, MIN or MAX)")


def _work(ptr, keep):
    if not ptr:
        _raise()
    return Work(ptr, keep)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_init()
    if async_op:
        return _work(lib.tn_dist_all_reduce_async(_tp(tensor, "all_reduce", "tensor"), _op(op), _g(group)), tensor)
    _rc(lib.tn_dist_all_reduce(_tp(tensor, "all_reduce", "tensor"), _op(op), _g(group)))


def broadcast(tensor, src=0, group=None, async_op=False):
    _check_init()
    if async_op:
        return _work(lib.tn_dist_broadcast_async(_tp(tensor, "broadcast", "tensor"), src, _g(group)), tensor)
    _rc(lib.tn_dist_broadcast(_tp(tensor, "broadcast", "tensor"), src, _g(group)))


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    _check_init()
    _rc(lib.tn_dist_reduce(_tp(tensor, "reduce", "tensor"), dst, _op(op), _g(group)))
    return _Done() if async_op else None


def _list(tensors, fn, arg):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): {arg} must be a list of tensors")
    return _ptrs(list(tensors), fn, arg)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_init()
    if len(tensor_list) != get_world_size(group):
        raise ValueError(f"all_gather(): tensor_list has {len(tensor_list)} tensors for a group of {get_world_size(group)}")
    _rc(lib.tn_dist_all_gather(_list(tensor_list, "all_gather", "tensor_list"), _tp(tensor, "all_gather", "tensor"), _g(group)))
    return _Done() if async_op else None


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor [world * n, ...] (or [world, n, ...]) gets every rank's input."""
    n = get_world_size(group)
    out = output_tensor.view(n, *input_tensor.shape)
    return all_gather(list(out.unbind(0)), input_tensor, group, async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    _check_init()
    mine = get_rank() == dst
    if mine and (gather_list is None or len(gather_list) != get_world_size(group)):
        raise ValueError("gather(): the destination rank needs a gather_list of one tensor per rank")
    ptrs = _list(gather_list, "gather", "gather_list") if mine else None
    _rc(lib.tn_dist_gather(_tp(tensor, "gather", "tensor"), ptrs, dst, _g(group)))
    return _Done() if async_op else None


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    _check_init()
    mine = get_rank() == src
    if mine and (scatter_list is None or len(scatter_list) != get_world_size(group)):
        raise ValueError("scatter(): the source rank needs a scatter_list of one tensor per rank")
    ptrs = _list(scatter_list, "scatter", "scatter_list") if mine else None
    _rc(lib.tn_dist_scatter(_tp(tensor, "scatter", "tensor"), ptrs, src, _g(group)))
    return _Done() if async_op else None


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_init()
    if len(input_list) != get_world_size(group):
        raise ValueError(f"reduce_scatter(): input_list has {len(input_list)} tensors for a group of {get_world_size(group)}")
    _rc(lib.tn_dist_reduce_scatter(_tp(output, "reduce_scatter", "output"), _list(input_list, "reduce_scatter", "input_list"),
                                   _op(op), _g(group)))
    return _Done() if async_op else None


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    n = get_world_size(group)
    return reduce_scatter(output, list(input.view(n, *output.shape).unbind(0)), op, group, async_op)


def barrier(group=None, async_op=False, device_ids=None):
    _check_init()
    _rc(lib.tn_dist_barrier(_g(group)))
    return _Done() if async_op else None


def send(tensor, dst, group=None, tag=0):
    _check_init()
    _rc(lib.tn_dist_send(_tp(tensor, "send", "tensor"), dst, tag, _g(group)))


def recv(tensor, src=None, group=None, tag=0):
    """Receives into tensor; returns the sender's rank (src=None: any)."""
    _check_init()
    return _rc(lib.tn_dist_recv(_tp(tensor, "recv", "tensor"), -1 if src is None else src, tag, _g(group)))


def isend(tensor, dst, group=None, tag=0):
    _check_init()
    return _work(lib.tn_dist_send_async(_tp(tensor, "isend", "tensor"), dst, tag, _g(group)), tensor)


def irecv(tensor, src=None, group=None, tag=0):
    _check_init()
    return _work(lib.tn_dist_recv_async(_tp(tensor, "irecv", "tensor"), -1 if src is None else src, tag, _g(group)), tensor)


del ctypes
