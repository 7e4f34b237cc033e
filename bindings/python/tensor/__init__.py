"""tensor: PyTorch's tensor API over tensor.h (libtensor.so, through ctypes).

    import tensor as tn
    x = tn.tensor([[1., 2.], [3., 4.]])
    y = (x @ x.T).softmax(dim=1)
    print(y[:, ::2], y.sum(dim=0), y.dtype)      # tensor(...)  torch.float32

Names, signatures, defaults, dtype promotion and printing follow PyTorch 1.13; dtypes
print as ``torch.float32`` so output matches PyTorch's. Errors from C become Python
exceptions (RuntimeError, IndexError, ...) carrying the C message. Needs only the
standard library; NumPy is used when present (Tensor.numpy, tn.from_numpy).
"""
import builtins as _builtins
import operator

from . import _C
from ._core import (Size, Tensor, device, dtype, float32, float64, int32, int64, uint8, int8, int16, bool_ as bool,
                    complex64, complex128,
                    float16, bfloat16, get_default_dtype, set_default_dtype, get_default_device, set_default_device,
                    promote_types, can_cast,
                    return_types, tensor, empty, zeros, ones, full, where, from_numpy, _operand,
                    _scalar_kind)
from ._core import _DTYPES, _raise
from . import _ops
from ._ops import FUNCTIONS as _FUNCTIONS, METHOD_FUNCTIONS as _METHOD_FUNCTIONS, _SCALAR_FIRST
from ._factories import (arange, linspace, logspace, eye, tril_indices, triu_indices, scalar_tensor, empty_like, zeros_like, ones_like,
                         full_like, rand_like, randn_like, randint_like, as_tensor, asarray, Generator,
                         default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                         rand, randn, randint, randperm, normal, bernoulli, memory_stats,
                         _standard_gamma, _standard_gamma_grad, poisson, binomial, _sample_dirichlet,
                         reset_peak_memory_stats, set_num_threads, get_num_threads)
from .autograd import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode,
                       is_inference_mode_enabled)
from . import nn, autograd, optim, utils, backends, testing, accelerator, special, linalg, distributions, fft
from . import jit, onnx, sparse
from .sparse import sparse_coo_tensor, sparse_csr_tensor, layout, strided, sparse_coo, sparse_csr
from . import multiprocessing  # registers how tensors cross processes (shared memory)
from . import distributed
from .serialization import save, load
from .utils.dlpack import from_dlpack
from ._tensor_types import TENSOR_TYPES as _TENSOR_TYPES, CUDA_TENSOR_TYPES as _CUDA_TENSOR_TYPES, set_default_tensor_type
from ._type_info import finfo, iinfo
from ._lowrank import svd_lowrank, pca_lowrank
from ._tensor_str import set_printoptions
from . import _out

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128
char = int8
__version__ = _C.lib.tn_library_version().decode()   # TENSOR_VERSION_STRING of the library loaded
globals().update(_TENSOR_TYPES)      # FloatTensor, LongTensor, ...: see _tensor_types


# binary functions PyTorch also takes two Python numbers for (the others want a Tensor)
_NUMBER_PAIRS = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide"}


def _as_function(name, method, scalar_first):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            if (scalar_first and _scalar_kind(input) is not None and
                    (name in _NUMBER_PAIRS or _builtins.any(isinstance(a, Tensor) for a in args + tuple(kwargs.values())))):
                if name in _NUMBER_PAIRS and args and _scalar_kind(input) == 2 and _scalar_kind(args[0]) == 2:
                    input = tensor(input, dtype=float64)   # two floats: PyTorch's double tensors (add(2.5, 1.0) is float64)
                else:
                    input = _operand(input)
            else:
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return method(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = method.__doc__
    return fn


for _name, _m in _METHOD_FUNCTIONS.items():
    globals()[_name] = _as_function(_name, _m, _name in _SCALAR_FIRST)
globals().update(_FUNCTIONS)
_out.install(globals())              # out= for the functions that take it in PyTorch
sparse._install(globals())           # mm, matmul, spmm with a sparse first operand


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


def cuda_is_available():
    # this module's bool/int/float are torch.bool etc. (dtypes), as in torch: use the builtins
    return _builtins.bool(_C.lib.tn_cuda_is_available())


class cuda:
    """torch.cuda: the GPU unit (lib/libtensor_cuda.so from `make cuda`) registers itself in C;
    without it, or without a GPU, is_available() is False and unavailable_reason() says why."""
    is_available = staticmethod(cuda_is_available)

    @staticmethod
    def unavailable_reason():
        return _C.lib.tn_cuda_unavailable_reason().decode()

    @staticmethod
    def device_count():
        return _C.lib.tn_cuda_device_count()

    @staticmethod
    def current_device():
        return _C.lib.tn_cuda_current_device()

    @staticmethod
    def set_device(device):
        if _C.lib.tn_cuda_set_device(operator.index(device)):
            _raise()

    @staticmethod
    def synchronize(device=None):
        if _C.lib.tn_cuda_synchronize():
            _raise()

    @staticmethod
    def empty_cache():
        _C.lib.tn_cuda_empty_cache()

    @staticmethod
    def memory_allocated(device=None):
        return _C.lib.tn_cuda_memory_stats().allocated

    @staticmethod
    def memory_reserved(device=None):
        return _C.lib.tn_cuda_memory_stats().reserved

    @staticmethod
    def max_memory_allocated(device=None):
        return _C.lib.tn_cuda_memory_stats().peak_allocated

    @staticmethod
    def max_memory_reserved(device=None):
        return _C.lib.tn_cuda_memory_stats().peak_reserved

    @staticmethod
    def reset_peak_memory_stats(device=None):
        _C.lib.tn_cuda_reset_peak_memory_stats()

    @staticmethod
    def memory_stats(device=None):
        s = _C.lib.tn_cuda_memory_stats()
        return {f: getattr(s, f) for f, _ in s._fields_}

    @staticmethod
    def is_initialized():
        return cuda_is_available()

    @staticmethod
    def manual_seed(seed):
        """torch.cuda.manual_seed: seeds the default generator, as torch.manual_seed does."""
        manual_seed(seed)

    manual_seed_all = manual_seed


for _name, _cls in _CUDA_TENSOR_TYPES.items():
    setattr(cuda, _name, _cls)       # torch.cuda.FloatTensor, ...

from . import _cuda_graphs  # noqa: E402
for _name in ("CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables"):
    setattr(cuda, _name, staticmethod(getattr(_cuda_graphs, _name)))   # torch.cuda.CUDAGraph, torch.cuda.graph, ...


del _name, _m, _cls

# half precision training: torch.autocast, torch.amp, torch.cpu.amp, torch.cuda.amp
from . import amp  # noqa: E402
from .amp import autocast  # noqa: E402

cuda.amp = amp.cuda_amp


class cpu:
    """torch.cpu: the CPU device's namespace (amp: autocast in bfloat16, GradScaler)."""
    amp = amp.cpu_amp

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def synchronize(device=None):
        pass


def is_autocast_enabled(device_type=None):
    return amp.is_autocast_enabled(device_type)


def is_autocast_cpu_enabled():
    return amp.is_autocast_enabled("cpu")


def get_autocast_dtype(device_type):
    return amp.get_autocast_dtype(device_type)


def get_autocast_cpu_dtype():
    return amp.get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    return amp.get_autocast_dtype("cuda")
