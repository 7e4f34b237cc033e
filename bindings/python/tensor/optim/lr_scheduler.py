"""torch.optim.lr_scheduler over tn_lr_scheduler (C section 13).

Each scheduler owns one C scheduler, which borrows the C optimizer: the Python
scheduler keeps its optimizer alive. Creating one performs PyTorch's initial step
(``initial_lr`` in every group, the epoch-0 learning rate). ``LambdaLR`` calls the
Python lambdas from C through one trampoline; an exception raised by a lambda comes out
of the constructor or of ``step()`` with the groups' learning rates left as they were.
``SequentialLR`` takes over its schedulers' C objects (they keep working as views).
``ChainedScheduler`` is pure Python (it only steps the others).
"""
import math
import warnings

from .. import _C
from .._C import lib
from .._core import Tensor, _alive, _check_int, _i64, _raise
from .._core import _callback as _core_callback
from ..autograd import _call, _fail, _pending, _tls
from .optimizer import Optimizer, _fmt

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR",
           "ReduceLROnPlateau", "LambdaLR", "SequentialLR", "ChainedScheduler"]


class LRScheduler:
    """Base class: a C scheduler of kind ``_KIND`` made from keyword arguments."""
    _KIND = None
    _s = None
    _owned = True

    def __init__(self, optimizer, options=None, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.verbose = verbose
        self._ngroups = len(optimizer.param_groups)
        opts = dict(options or {})
        if last_epoch != -1:
            opts["last_epoch"] = last_epoch
        text = ", ".join(f"{k}={_fmt(v)}" for k, v in opts.items())
        self._adopt(lib.tn_lr_scheduler_create_str(optimizer._o, self._KIND.encode(), text.encode()))

    def _adopt(self, s):
        if not s:
            _raise()
        self._s = s
        self.base_lrs = [g["initial_lr"] for g in self.optimizer.param_groups][:self._ngroups]
        self._print()

    def __del__(self, _free=lib.tn_lr_scheduler_free, _alive=_alive):
        s = self._s
        if s and self._owned and _alive[0]:
            self._s = None
            _free(s)

    @property
    def _h(self):
        """The C scheduler, checked: it and its optimizer must still be alive (a freed
        handle would be a use-after-free in C)."""
        if not self._s or not getattr(self.optimizer, "_o", None):
            raise RuntimeError(f"{type(self).__name__}: the scheduler or its optimizer was freed")
        return self._s

    @property
    def last_epoch(self):
        return int(lib.tn_lr_scheduler_last_epoch(self._h))

    def get_last_lr(self):
        """The learning rates the last step set, one per group."""
        out = []
        for g in range(self._ngroups):
            lib.tn_clear_error()
            v = lib.tn_lr_scheduler_get_last_lr(self._h, g)
            if v != v and lib.tn_last_error():
                _raise()
            out.append(v)
        return out

    def get_lr(self):
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      stacklevel=2)
        return self.get_last_lr()

    def step(self, epoch=None):
        if epoch is not None:
            raise NotImplementedError("scheduler.step(epoch) (deprecated in PyTorch) is not supported: "
                                      "call step() once per epoch")
        _check_int(lib.tn_lr_scheduler_step(self._h))
        self._print()

    def _print(self):
        if self.verbose:
            for g, lr in enumerate(self.get_last_lr()):
                print(f"Adjusting learning rate of group {g} to {lr:.4e}.")

    def state_dict(self):
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs), "_last_lr": self.get_last_lr()}

    def load_state_dict(self, state_dict):
        """Replays the schedule up to the saved epoch (the C scheduler has no state to set):
        the learning rates are the saved ones when the groups' ``initial_lr`` are."""
        target = int(state_dict["last_epoch"])
        if target < self.last_epoch:
            raise RuntimeError(f"load_state_dict: the scheduler is at epoch {self.last_epoch}, past the saved "
                               f"epoch {target}; load into a newly made scheduler")
        if target - self.last_epoch > 10 ** 6:
            raise ValueError(f"load_state_dict: last_epoch {target} is more than 10**6 epochs ahead; the schedule is "
                             "replayed epoch by epoch here, so load into a scheduler built with last_epoch= instead")
        while self.last_epoch < target:
            _check_int(lib.tn_lr_scheduler_step(self._h))


_LRScheduler = LRScheduler


class StepLR(LRScheduler):
    _KIND = "StepLR"

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        super().__init__(optimizer, dict(step_size=step_size, gamma=gamma), last_epoch, verbose)


class MultiStepLR(LRScheduler):
    _KIND = "MultiStepLR"

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        super().__init__(optimizer, dict(milestones=tuple(milestones), gamma=gamma), last_epoch, verbose)


class ExponentialLR(LRScheduler):
    _KIND = "ExponentialLR"

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        super().__init__(optimizer, dict(gamma=gamma), last_epoch, verbose)


class CosineAnnealingLR(LRScheduler):
    _KIND = "CosineAnnealingLR"

    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        super().__init__(optimizer, dict(T_max=T_max, eta_min=eta_min), last_epoch, verbose)


class CosineAnnealingWarmRestarts(LRScheduler):
    _KIND = "CosineAnnealingWarmRestarts"

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        super().__init__(optimizer, dict(T_0=T_0, T_mult=T_mult, eta_min=eta_min), last_epoch, verbose)


class LinearLR(LRScheduler):
    _KIND = "LinearLR"

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1, verbose=False):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        super().__init__(optimizer, dict(start_factor=start_factor, end_factor=end_factor, total_iters=total_iters),
                         last_epoch, verbose)


class ConstantLR(LRScheduler):
    _KIND = "ConstantLR"

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        super().__init__(optimizer, dict(factor=factor, total_iters=total_iters), last_epoch, verbose)


class PolynomialLR(LRScheduler):
    _KIND = "PolynomialLR"

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose=False):
        super().__init__(optimizer, dict(total_iters=total_iters, power=power), last_epoch, verbose)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    if optimizer._o is None:
        raise NotImplementedError(f"the schedulers drive the C optimizers (SGD, Adam, ...); {type(optimizer).__name__} "
                                  "is a Python optimizer: set its param_groups[g]['lr'] directly")


def _per_group(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v


class OneCycleLR(LRScheduler):
    _KIND = "OneCycleLR"

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1, verbose=False):
        if total_steps is None and (epochs is None or steps_per_epoch is None):
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if total_steps is not None and (total_steps <= 0 or not isinstance(total_steps, int)):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        opts = dict(max_lr=_per_group(max_lr), pct_start=pct_start, anneal_strategy=anneal_strategy,
                    cycle_momentum=cycle_momentum, base_momentum=_per_group(base_momentum),
                    max_momentum=_per_group(max_momentum), div_factor=div_factor, final_div_factor=final_div_factor,
                    three_phase=three_phase)
        if total_steps is not None:
            opts["total_steps"] = total_steps
        else:
            opts["epochs"], opts["steps_per_epoch"] = epochs, steps_per_epoch
        self.total_steps = total_steps if total_steps is not None else epochs * steps_per_epoch
        super().__init__(optimizer, opts, last_epoch, verbose)


class ReduceLROnPlateau(LRScheduler):
    """``step(metrics)``: reduces the learning rates by ``factor`` after ``patience``
    epochs without improvement."""
    _KIND = "ReduceLROnPlateau"

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if isinstance(min_lr, (list, tuple)) and len(min_lr) != len(optimizer.param_groups):
            raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
        if mode not in ("min", "max"):
            raise ValueError("mode " + str(mode) + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + str(threshold_mode) + " is unknown!")
        self.mode, self.factor, self.patience, self.threshold = mode, factor, patience, threshold
        self.threshold_mode, self.cooldown, self.eps = threshold_mode, cooldown, eps
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * len(optimizer.param_groups)
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.verbose = verbose
        self._ngroups = len(optimizer.param_groups)
        opts = dict(mode=mode, factor=factor, patience=patience, threshold=threshold, threshold_mode=threshold_mode,
                    cooldown=cooldown, min_lr=_per_group(min_lr), eps=eps)
        s = lib.tn_lr_scheduler_create_str(optimizer._o, self._KIND.encode(),
                                       ", ".join(f"{k}={_fmt(v)}" for k, v in opts.items()).encode())
        if not s:
            _raise()
        self._s = s

    def step(self, metrics, epoch=None):
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
                          "where possible.", UserWarning, stacklevel=2)
        before = [g["lr"] for g in self.optimizer.param_groups]
        _check_int(lib.tn_lr_scheduler_step_metric(self._h, float(metrics)))
        if self.verbose:
            for g, (old, group) in enumerate(zip(before, self.optimizer.param_groups)):
                if group["lr"] != old:
                    print(f"Epoch {self.last_epoch}: reducing learning rate of group {g} to {group['lr']:.4e}.")

    def state_dict(self):
        raise NotImplementedError("ReduceLROnPlateau.state_dict: the C scheduler's best/num_bad_epochs are not exposed")

    load_state_dict = state_dict


# --------------------------------------------------------------------------- LambdaLR
_lambdas = {}
_lambda_ids = iter(range(1, 1 << 62))


@_C.LR_LAMBDA
@_core_callback
def _lambda_trampoline(epoch, group, user):
    if _pending():
        return math.nan
    try:
        fns = _lambdas[user]
        r = fns[group](int(epoch))
        return float(r.item() if isinstance(r, Tensor) else r)
    except BaseException as e:       # re-raised by _call once the C call returns
        _fail(e)
        return math.nan


_C.ctypes.pythonapi.Py_IncRef(_C.ctypes.py_object(_lambda_trampoline))   # immortal


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch): one function, or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.verbose = verbose
        n = self._ngroups = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * n
        else:
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        if last_epoch != -1:
            raise NotImplementedError("LambdaLR(last_epoch=...) is not supported (the C LambdaLR starts at epoch 0)")
        self._key = next(_lambda_ids)
        _lambdas[self._key] = self.lr_lambdas
        saved = [g["lr"] for g in optimizer.param_groups]
        outer, _tls.error = getattr(_tls, "error", None), None
        try:
            s = lib.tn_lr_scheduler_lambda(optimizer._o, _lambda_trampoline, self._key)
        finally:
            err, _tls.error = _tls.error, outer
        if err is not None:       # a lambda raised during the initial step: C made the scheduler anyway
            lib.tn_lr_scheduler_free(s)
            self._restore(saved)
            raise err
        self._adopt(s)

    def _restore(self, lrs):
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr

    def step(self, epoch=None):
        if epoch is not None:
            raise NotImplementedError("scheduler.step(epoch) (deprecated in PyTorch) is not supported")
        saved = [g["lr"] for g in self.optimizer.param_groups]
        try:
            _check_int(_call(lib.tn_lr_scheduler_step, self._h))
        except BaseException:
            self._restore(saved)
            raise
        self._print()

    def __del__(self):
        LRScheduler.__del__(self)
        if _alive[0]:
            _lambdas.pop(getattr(self, "_key", None), None)


# --------------------------------------------------------------------------- composites
class SequentialLR(LRScheduler):
    """schedulers[i] runs from milestones[i-1]. The C SequentialLR takes over the
    schedulers' C objects; the Python schedulers stay usable (get_last_lr) as views."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        schedulers, milestones = list(schedulers), [int(m) for m in milestones]
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but got no scheduler.")
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler) or isinstance(s, (SequentialLR, ChainedScheduler)):
                raise TypeError(f"SequentialLR: scheduler at index {i} must be one of the C-backed schedulers")
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError("Sequential Schedulers does not support `ReduceLROnPlateau` scheduler as it requires "
                                 "additional kwargs to be specified when calling `step`, but got one at index "
                                 f"{i} in the given schedulers sequence.")
            if s.optimizer is not optimizer:
                raise ValueError("Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
                                 f"got schedulers at index {i} to be different than the optimizer passed in.")
            if not s._owned:
                raise ValueError(f"SequentialLR: scheduler at index {i} already belongs to a SequentialLR")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        if last_epoch != -1:
            raise NotImplementedError("SequentialLR(last_epoch=...) is not supported")
        self.optimizer, self.verbose, self._ngroups = optimizer, verbose, len(optimizer.param_groups)
        self._schedulers, self._milestones = schedulers, milestones
        arr = (_C.ctypes.c_void_p * len(schedulers))(*[s._s for s in schedulers])
        mil, _ = _i64(milestones or [0])
        for s in schedulers:              # C owns them from here on, also when it fails
            s._owned = False
            s._parent = self
        self._adopt(lib.tn_lr_scheduler_sequential(optimizer._o, arr, len(schedulers), mil))


class ChainedScheduler:
    """Steps every scheduler in the list at each step() (pure Python, as PyTorch's)."""

    def __init__(self, schedulers):
        self._schedulers = list(schedulers)
        self.optimizer = self._schedulers[0].optimizer
        for i, s in enumerate(self._schedulers):
            if s.optimizer is not self.optimizer:
                raise ValueError("ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
                                 f"schedulers at index 0 and {i} to be different")

    def step(self):
        for s in self._schedulers:
            s.step()

    def get_last_lr(self):
        return [g["lr"] for g in self.optimizer.param_groups]

    @property
    def last_epoch(self):
        return self._schedulers[-1].last_epoch
