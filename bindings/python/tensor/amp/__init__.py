"""torch.amp: autocast (the C library's per-thread autocast regions: tn_autocast_begin/end)
and GradScaler (loss scaling for half-precision training; works on CPU tensors, as
PyTorch 2's torch.amp.GradScaler("cpu"))."""
import functools
import warnings
from collections import defaultdict
from enum import Enum

from .. import _C
from .._core import _raise, bfloat16, float16, float32, int32, full, Tensor, _DTYPES

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEVICES = {"cpu": _C.CPU, "cuda": _C.CUDA}


_AC_DTYPES = ("float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16")


def _dtype_of(code):
    return next(d for d in _DTYPES if d._code == code)


def is_autocast_available(device_type):
    return device_type in _DEVICES


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context
    manager (and decorator) inside which the ops of PyTorch's autocast lists run in dtype."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICES:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self._dev = _DEVICES[device_type]
        self.fast_dtype = dtype if dtype is not None else _dtype_of(_C.lib.tn_autocast_get_dtype(self._dev))
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        enabled = bool(enabled)
        if device_type == "cpu" and enabled and self.fast_dtype not in (bfloat16, float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.")
            enabled = False
        if device_type == "cuda" and enabled:
            if not _C.lib.tn_cuda_is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
                enabled = False
            elif self.fast_dtype not in (bfloat16, float16):
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to float16."
                                   if self.fast_dtype is bfloat16 else
                                   "In CUDA autocast, but the target dtype is not supported. Disabling autocast.")
        self._enabled = enabled

    def __enter__(self):
        # a disabled region still opens one (autocast off inside), as PyTorch's enabled=False
        dtype = self.fast_dtype if self.fast_dtype in (bfloat16, float16) else _dtype_of(_C.lib.tn_autocast_get_dtype(self._dev))
        text = f"dtype={_AC_DTYPES[dtype._code]}, enabled={bool(self._enabled)}"   # tn_autocast_fn_opts' words
        if _C.lib.tn_autocast_begin_str(self._dev, text.encode()):
            _raise()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if _C.lib.tn_autocast_end():
            _raise()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def is_autocast_enabled(device_type=None):
    """torch.is_autocast_enabled: CUDA's switch without an argument (as PyTorch)."""
    return bool(_C.lib.tn_autocast_is_enabled(_DEVICES[device_type or "cuda"]))


def get_autocast_dtype(device_type):
    return _dtype_of(_C.lib.tn_autocast_get_dtype(_DEVICES[device_type]))


def custom_fwd(fwd=None, *, device_type="cuda", cast_inputs=None):
    """torch.amp.custom_fwd: the forward runs as given (cast_inputs: under autocast, floating
    tensor arguments cast to it and autocast off inside)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        cast = [a.to(cast_inputs) if isinstance(a, Tensor) and a.is_floating_point() else a for a in args]
        with autocast(device_type, enabled=False):
            return fwd(*cast, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type="cuda"):
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True): PyTorch's algorithm (scale the
    loss; unscale the gradients, noting any inf/NaN; skip the step when there was one; back
    off or grow the scale)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _C.lib.tn_cuda_is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                it = map(apply_scale, val)
                return type(val)(it) if isinstance(val, tuple) else list(it)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                g = param.grad
                if g is None:
                    continue
                if (not allow_fp16) and g.dtype is float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                dev = str(g.device)
                if dev not in per_device:
                    per_device[dev] = found_inf.to(g.device).clone()
                # non-finite check and unscale (torch._amp_foreach_non_finite_check_and_unscale_)
                if not bool(g.isfinite().all()):
                    per_device[dev].fill_(1.0)
                g.mul_(inv_scale.to(g.device))
        return per_device

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = "new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with requires_grad=False."
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [f for s in self._per_optimizer_states.values() for f in s["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = sum(f.item() for f in found_infs)
            # torch._amp_update_scale_
            if found:
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker.fill_(0)
            else:
                successful = self._growth_tracker.item() + 1
                if successful == self._growth_interval:
                    grown = self._scale * self._growth_factor
                    if bool(grown.isfinite()):
                        self._scale.copy_(grown)
                    self._growth_tracker.fill_(0)
                else:
                    self._growth_tracker.fill_(successful)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval, "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


class _CpuAmp:
    """torch.cpu.amp: autocast with bfloat16 by default; GradScaler on the CPU."""

    class autocast(autocast):
        def __init__(self, enabled=True, dtype=bfloat16, cache_enabled=True):
            super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
            super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class _CudaAmp:
    """torch.cuda.amp: autocast with float16 by default; GradScaler for "cuda"."""

    class autocast(autocast):
        def __init__(self, enabled=True, dtype=float16, cache_enabled=True):
            super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
            super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


cpu_amp = _CpuAmp()
cuda_amp = _CudaAmp()
