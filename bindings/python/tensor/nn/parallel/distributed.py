"""torch.nn.parallel.DistributedDataParallel over the C library's tn_ddp.

The module's parameters are broadcast from rank 0 when it is wrapped; every backward then
averages their gradients over the process group in buckets (``bucket_cap_mb``) whose
all-reduce starts from autograd hooks as soon as a bucket is complete, overlapping the
rest of backward; the averages are in ``.grad`` when ``backward()`` returns. Buffers
(BatchNorm's running statistics) are broadcast from rank 0 before each forward in training
mode (``broadcast_buffers``). ``no_sync()`` accumulates gradients locally; the next synced
backward averages the accumulated sums. Parameters that a forward does not use are
handled (``find_unused_parameters`` is accepted either way).
"""
import contextlib

from ..._C import lib
from ..._core import _ptrs, _raise
from ..module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        from ... import distributed as dist
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("Default process group has not been initialized, please make sure to call "
                               "init_process_group.")
        self.module = module
        self.device_ids = device_ids
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        params = [p for p in module.parameters() if p.requires_grad]
        group = process_group._ptr if process_group is not None else None
        opts = f"bucket_cap_mb={float(bucket_cap_mb)!r}, find_unused_parameters={bool(find_unused_parameters)}"
        ddp = lib.tn_ddp_new_str(_ptrs(params), len(params), group, opts.encode())
        if not ddp:
            _raise()
        object.__setattr__(self, "_ddp", ddp)
        object.__setattr__(self, "_ddp_params", params)
        self._sync_buffers()

    def _sync_buffers(self):
        if not self.broadcast_buffers:
            return
        from ... import distributed as dist
        from ...autograd import no_grad
        with no_grad():
            for b in self.module.buffers():
                dist.broadcast(b, 0, group=self.process_group)

    def forward(self, *inputs, **kwargs):
        if self.training:
            self._sync_buffers()
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of backward passes inside accumulate locally, without communication."""
        lib.tn_ddp_no_sync(self._ddp, True)
        try:
            yield
        finally:
            lib.tn_ddp_no_sync(self._ddp, False)

    def __del__(self):
        ddp = self.__dict__.get("_ddp")
        if ddp:
            try:
                lib.tn_ddp_free(ddp)
            except Exception:
                pass
            self.__dict__["_ddp"] = None
