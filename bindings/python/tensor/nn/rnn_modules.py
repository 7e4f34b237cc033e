"""Recurrent layers, MultiheadAttention and the Transformer layers (torch.nn's classes).

Constructor signatures, attribute and parameter names (``weight_ih_l0``, ``in_proj_weight``,
``out_proj``, ``self_attn``, ``layers.0``), ``extra_repr``, reprs and initialisation are
torch's (1.13, with torch 2.x's additions: ``is_causal``, ``bias=`` for the Transformer
layers, ValueErrors instead of asserts where torch 2 changed them).

How they compute (tensor.h section 12, "recurrent and attention modules"):

- The Python Module owns its Parameters (so ``state_dict``, ``.to()``, ``load_state_dict``,
  optimizers, ``deepcopy`` and pickling work as for every other Python layer).
- ``RNN``/``LSTM``/``GRU`` and ``MultiheadAttention`` forward through the C module's forward
  (``tn_nn_rnn_forward``, ``tn_nn_lstm_forward``, ``tn_nn_mha_forward``): one C call for the
  whole sequence (the input projection of every time step is one GEMM, the steps run in
  C). The C module is built once, lazily, and the Python Parameters' own C tensors are
  registered into it under the same names (``tn_module_register_parameter`` replaces the
  C module's tensors), so the C forward reads, and autograd writes ``.grad`` into, exactly
  the Python Parameters. The binding is checked on every call (a Parameter replaced by
  assignment is re-registered; a changed hyper-parameter such as ``dropout`` rebuilds the
  C module); building it does not consume the default RNG (its state is restored).
- The cells call the functional C cells (``tn_lstm_cell``, ...) directly.
- ``MultiheadAttention`` falls back to ``F.multi_head_attention_forward`` (written here in
  Python over tensor ops, torch's algorithm) when its parameters do not fit the C module
  (e.g. ``out_proj.bias`` removed while ``in_proj_bias`` is kept).
- The Transformer layers are Python compositions of the Python submodules, as torch's
  (so ``activation`` may be any callable, and hooks on submodules fire).

Initialisation uses torch's distributions, drawn in the order of the C constructors, so with
the same seed a Python layer holds the C layer's values bit for bit.
"""
import contextlib
import ctypes
import copy
import math
import numbers
import os
import warnings
from ctypes import byref, c_void_p

from .._C import lib, tn_mha_forward_opts
from .._core import Size, Tensor, _alive, _raise, _wrap, bool_, empty, float32, get_default_dtype, int64, tensor, uint8, zeros
from .._ops import cat
from . import functional as F
from . import init
from .container import ModuleList
from .layers import Dropout, GELU, LayerNorm, Linear, ReLU
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = [
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder", "Transformer",
]


# --------------------------------------------------------------------------- C module binding
def _opt(t):
    """An optional tensor argument as a C pointer (a released or non-Tensor one raises)."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor or None, got {type(t).__name__}")
    return t._ptr


@contextlib.contextmanager
def _rng_kept():
    """The C constructors initialise their own parameters from the default generator;
    those values are replaced at once, so the draws must not advance the generator."""
    g = lib.tn_default_generator().contents
    saved = type(g).from_buffer_copy(g)        # the whole state: mt19937's words and the Philox offset
    try:
        yield
    finally:
        ctypes.memmove(ctypes.addressof(g), ctypes.addressof(saved), ctypes.sizeof(saved))


def _pybool(b):
    return "True" if b else "False"


class _CModule:
    """A tensor.h module (tn_module *) whose parameters are a Python Module's Parameters.

    ``get(key, make, named, training)`` returns the module pointer: built by ``make()`` when
    absent or when ``key`` (the hyper-parameters) changed, with ``named`` ((C name, Tensor)
    pairs, dotted names for children) registered when any tensor differs from the last
    call's. Not shared by copies: ``deepcopy``/``copy``/pickling give an empty one."""
    __slots__ = ("ptr", "key", "bound")

    def __init__(self):
        self.ptr = None
        self.key = None
        self.bound = None

    def get(self, key, make, named, training):
        if self.ptr is None or self.key != key:
            self.free()
            with _rng_kept():
                ptr = make()
            if not ptr:
                _raise()
            self.ptr, self.key = ptr, key
        ptrs = tuple(t._ptr for _, t in named)
        if ptrs != self.bound:
            self.bound = None
            for name, t in named:
                m = self.ptr
                *path, leaf = name.split(".")
                for p in path:
                    m = lib.tn_module_child(m, p.encode())
                    if not m:
                        _raise()
                rg = bool(lib.tn_requires_grad(t._ptr))
                if not lib.tn_module_register_parameter(m, leaf.encode(), t._ptr):
                    _raise()
                if not rg:                       # registering switches requires_grad on
                    lib.tn_requires_grad_(t._ptr, False)
            self.bound = ptrs
        if lib.tn_module_train_str(self.ptr, b"mode=True" if training else b"mode=False"):
            _raise()
        return self.ptr

    def free(self):
        if self.ptr is not None:
            lib.tn_module_free(self.ptr)
        self.ptr = self.key = self.bound = None

    def __del__(self):
        if _alive[0]:
            self.free()

    def __copy__(self):
        return _CModule()

    def __deepcopy__(self, memo):
        return _CModule()

    def __reduce__(self):
        return (_CModule, ())


def _c_module(module):
    c = module.__dict__.get("_c")
    if c is None:
        c = _CModule()
        object.__setattr__(module, "_c", c)
    return c


def _dims(shape):
    return list(shape)


def _empty(shape, device, dtype):
    return empty(*shape, dtype=dtype, device=device)


# --------------------------------------------------------------------------- RNN, LSTM, GRU
def _check_rnn_fits(name, input_size, hidden_size, num_layers, gate_size, num_directions, bias, proj_size, dtype):
    """torch 1.13 allocates layer after layer (num_layers=2**31 runs until memory is gone); a
    count whose parameters cannot fit in this machine's memory fails here, before the first,
    as the C constructor does (src/modules/rnn.c, tn__rnn_new)."""
    if not all(isinstance(v, int) for v in (input_size, num_layers, proj_size)):
        return                                  # the loop below raises torch's TypeError
    real = proj_size if proj_size > 0 else hidden_size

    def layer(lin):
        return gate_size * (lin + real) + (2 * gate_size if bias else 0) + proj_size * hidden_size
    numel = num_directions * (layer(input_size) + (num_layers - 1) * layer(real * num_directions))
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        memory = None
    itemsize = getattr(dtype or get_default_dtype(), "itemsize", 4)
    if numel * itemsize >= (memory or 2**63):
        raise RuntimeError(f"{name}: the parameters of input_size={input_size}, hidden_size={hidden_size}, "
                           f"num_layers={num_layers} ({numel} elements) cannot fit in memory")


class RNNBase(Module):
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size
        _check_rnn_fits(self._name(), input_size, hidden_size, num_layers, gate_size, num_directions, bias, proj_size, dtype)

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes += [(proj_size, hidden_size)]
                    names += ["weight_hr_l{}{}"]
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_empty(shape, device, dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]
        self.reset_parameters()

    def __setattr__(self, attr, value):
        if "_flat_weights_names" in self.__dict__ and attr in self._flat_weights_names:
            self._flat_weights[self._flat_weights_names.index(attr)] = value     # as torch: kept up to date
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """A no-op (cuDNN's weight flattening), as torch's on the CPU."""

    def _apply(self, fn):
        ret = super()._apply(fn)
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]
        return ret

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- torch's argument checks (their messages), then one C call
    def _name(self):
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _bound_c_module(self):
        lstm = self.mode == "LSTM"
        opts = (f"num_layers={int(self.num_layers)}, bias={_pybool(self.bias)}, "
                f"batch_first={_pybool(self.batch_first)}, dropout={float(self.dropout)!r}, "
                f"bidirectional={_pybool(self.bidirectional)}")
        if lstm:
            opts += f", proj_size={int(self.proj_size)}"
            make = lambda: lib.tn_nn_lstm_str(self.input_size, self.hidden_size, opts.encode())  # noqa: E731
        elif self.mode == "GRU":
            make = lambda: lib.tn_nn_gru_str(self.input_size, self.hidden_size, opts.encode())  # noqa: E731
        else:
            opts += ", nonlinearity=" + ("relu" if self.mode == "RNN_RELU" else "tanh")
            make = lambda: lib.tn_nn_rnn_str(self.input_size, self.hidden_size, opts.encode())  # noqa: E731
        named = []
        for n in self._flat_weights_names:
            t = getattr(self, n, None)
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{type(self).__name__}: parameter {n} is {t!r}; the layer needs every weight "
                                   f"of {self._flat_weights_names}")
            named.append((n, t))
        key = (self.mode, self.input_size, self.hidden_size, opts)
        return _c_module(self).get(key, make, named, self.training)

    def _run(self, input, hx):
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx)
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: expected a Tensor or PackedSequence input, "
                            f"got {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{self._name()}: Expected input to be 2-D or 3-D but received {input.dim()}-D tensor")
        is_batched = input.dim() == 3
        h0 = c0 = None
        if hx is not None:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise TypeError(f"LSTM: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
                h0, c0 = hx
                F._check("LSTM", h_0=h0, c_0=c0)
                want = 3 if is_batched else 2
                if h0.dim() != want or c0.dim() != want:
                    raise RuntimeError(f"For {'batched 3-D' if is_batched else 'unbatched 2-D'} input, hx and cx "
                                       f"should also be {want}-D but got ({h0.dim()}-D, {c0.dim()}-D) tensors")
            else:
                h0 = hx
                F._check(self._name(), hx=h0)
                if is_batched and h0.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h0.dim()}-D tensor")
                if not is_batched and h0.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h0.dim()}-D tensor")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")
        batch = input.size(0 if self.batch_first else 1) if is_batched else 1
        d = 2 if self.bidirectional else 1
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        for k, (s, width) in enumerate(((h0, real), (c0, self.hidden_size))):
            if s is None:
                continue
            got = _dims(s.shape) if is_batched else [s.size(0), 1, s.size(1)]
            expected = (self.num_layers * d, batch, width)
            if got != list(expected):
                msg = f"Expected hidden[{k}] size {{}}, got {{}}" if lstm else "Expected hidden size {}, got {}"
                raise RuntimeError(msg.format(expected, got))
        return self._c_forward(self._bound_c_module(), input, h0, c0)

    def _c_forward(self, m, input, h0, c0):
        """One C forward over a whole batch: (output, h_n) or (output, (h_n, c_n))."""
        hn = c_void_p()
        if self.mode == "LSTM":
            cn = c_void_p()
            out = _wrap(lib.tn_nn_lstm_forward(m, input._ptr, _opt(h0), _opt(c0), byref(hn), byref(cn)))
            return out, (_wrap(hn.value), _wrap(cn.value))
        out = _wrap(lib.tn_nn_rnn_forward(m, input._ptr, _opt(h0), byref(hn)))
        return out, _wrap(hn.value)

    def _run_packed(self, packed, hx):
        """A PackedSequence through the layer, as torch: the sequences of each length run as
        one batch through the C forward (so each runs exactly its own steps, in both
        directions, and its h_n is taken at its own last step); the outputs are gathered
        back into the packed layout and h_n into the caller's batch order."""
        lstm = self.mode == "LSTM"
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        if not isinstance(data, Tensor) or not isinstance(batch_sizes, Tensor):
            raise TypeError(f"{type(self).__name__}: a PackedSequence of tensors is expected")
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        if self.input_size != data.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.size(-1)}")
        bs = [int(b) for b in batch_sizes.tolist()]
        if not bs:
            raise RuntimeError(f"{type(self).__name__}: the PackedSequence is empty")
        batch = bs[0]
        if sum(bs) != data.size(0) or any(a < b for a, b in zip(bs, bs[1:])) or (bs and bs[-1] <= 0):
            raise RuntimeError(f"{type(self).__name__}: batch_sizes {bs} do not describe a packed batch of "
                               f"{data.size(0)} steps")
        d = 2 if self.bidirectional else 1
        real = self.proj_size if self.proj_size > 0 else self.hidden_size
        h0 = c0 = None
        if hx is not None:                  # given in the caller's order: sort it as the data
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise TypeError(f"LSTM: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
                h0, c0 = hx
                F._check("LSTM", h_0=h0, c_0=c0)
            else:
                h0 = hx
                F._check(self._name(), hx=h0)
            for k, (s, width) in enumerate(((h0, real), (c0, self.hidden_size))):
                if s is None:
                    continue
                expected = [self.num_layers * d, batch, width]
                if list(s.shape) != expected:
                    msg = f"Expected hidden[{k}] size {{}}, got {{}}" if lstm else "Expected hidden size {}, got {}"
                    raise RuntimeError(msg.format(tuple(expected), list(s.shape)))
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if c0 is not None else None
        # each sorted sequence's length; sequences of equal length are neighbours
        lens, t = [], len(bs)
        for j in range(batch):
            while t and bs[t - 1] <= j:
                t -= 1
            lens.append(t)
        offsets = [0]
        for b in bs:
            offsets.append(offsets[-1] + b)
        m = self._bound_c_module()
        outs, hns, cns, perm, base, j0 = [], [], [], [0] * data.size(0), 0, 0
        while j0 < batch:
            length = lens[j0]
            j1 = j0
            while j1 < batch and lens[j1] == length:
                j1 += 1
            n = j1 - j0
            rows = [offsets[t] + j for t in range(length) for j in range(j0, j1)]     # time-major [length, n]
            x = data.index_select(0, tensor(rows, dtype=int64)).view(length, n, data.size(1))
            if self.batch_first:
                x = x.transpose(0, 1)
            g0 = None if h0 is None else h0.narrow(1, j0, n).contiguous()
            gc = None if c0 is None else c0.narrow(1, j0, n).contiguous()
            out, h = self._c_forward(m, x, g0, gc)
            if self.batch_first:
                out = out.transpose(0, 1)
            outs.append(out.reshape(length * n, out.size(-1)))
            if lstm:
                hns.append(h[0])
                cns.append(h[1])
            else:
                hns.append(h)
            for t in range(length):         # packed row of (t, j) <- row t * n + (j - j0) of this group
                for j in range(j0, j1):
                    perm[offsets[t] + j] = base + t * n + (j - j0)
            base += length * n
            j0 = j1
        out_data = (cat(outs, 0) if len(outs) > 1 else outs[0]).index_select(0, tensor(perm, dtype=int64))
        out = PackedSequence(out_data, batch_sizes, sorted_indices, unsorted_indices)

        def unsort(hs):
            h = cat(hs, 1) if len(hs) > 1 else hs[0]
            return h if unsorted_indices is None else h.index_select(1, unsorted_indices)
        return out, ((unsort(hns), unsort(cns)) if lstm else unsort(hns))


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:                     # torch 2.x: nonlinearity is also the 4th positional argument
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx)


# --------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty((num_chunks * hidden_size, input_size), device, dtype))
        self.weight_hh = Parameter(_empty((num_chunks * hidden_size, hidden_size), device, dtype))
        if bias:
            self.bias_ih = Parameter(_empty((num_chunks * hidden_size,), device, dtype))
            self.bias_hh = Parameter(_empty((num_chunks * hidden_size,), device, dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, hx):
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected a Tensor input, got {type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for h in (hx if isinstance(hx, (tuple, list)) else (hx,)):
            if h is not None and not isinstance(h, Tensor):
                raise TypeError(f"{name}: expected a Tensor hx, got {type(h).__name__}")
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D instead")

    def _zeros(self, input):
        shape = (input.size(0), self.hidden_size) if input.dim() == 2 else (self.hidden_size,)
        return zeros(*shape, dtype=input.dtype, device=input.device)

    def _weights(self):
        return self.weight_ih._ptr, self.weight_hh._ptr, _opt(self.bias_ih), _opt(self.bias_hh)


class RNNCell(RNNCellBase):
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        self._check(input, hx)
        if hx is None:
            hx = self._zeros(input)
        if self.nonlinearity == "tanh":
            fn = lib.tn_rnn_tanh_cell
        elif self.nonlinearity == "relu":
            fn = lib.tn_rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return _wrap(fn(input._ptr, hx._ptr, *self._weights()))


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
        self._check(input, hx)
        if hx is None:
            z = self._zeros(input)
            hx = (z, z)
        c = c_void_p()
        h = _wrap(lib.tn_lstm_cell(input._ptr, hx[0]._ptr, hx[1]._ptr, *self._weights(), byref(c)))
        return h, _wrap(c.value)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        self._check(input, hx)
        if hx is None:
            hx = self._zeros(input)
        return _wrap(lib.tn_gru_cell(input._ptr, hx._ptr, *self._weights()))


# --------------------------------------------------------------------------- multi-head attention
class NonDynamicallyQuantizableLinear(Linear):
    """torch.nn.modules.linear.NonDynamicallyQuantizableLinear: MultiheadAttention's out_proj
    (a Linear under that class name, as its repr shows)."""


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """torch's _mha_shape_check: True for batched (3-D) input; AssertionErrors as torch's."""
    if query.dim() == 3:
        if not (key.dim() == 3 and value.dim() == 3):
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if not (key.dim() == 2 and value.dim() == 2):
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _check_kpm(key_padding_mask):
    if key_padding_mask is not None and key_padding_mask.dtype is not bool_ \
            and not key_padding_mask.is_floating_point():
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


def _canonical_attn_mask(attn_mask):
    """uint8 masks become bool (with torch's deprecation warning); other non-float dtypes
    are refused as torch refuses them."""
    if attn_mask is None:
        return None
    if attn_mask.dtype is uint8:
        warnings.warn("Byte tensor for attn_mask in nn.MultiheadAttention is deprecated. Use bool tensor instead.")
        return attn_mask.to(bool_)
    if not (attn_mask.is_floating_point() or attn_mask.dtype is bool_):
        raise AssertionError(f"Only float, byte, and bool types are supported for attn_mask, not {attn_mask.dtype}")
    return attn_mask


def _mha_arg_check(tgt_len, bsz, embed_dim, src_len, key_shape, value_shape, embed_dim_to_check, num_heads,
                   attn_mask, separate):
    """The checks of torch's multi_head_attention_forward on (seq, batch, feature) shapes."""
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if separate:
        if tuple(key_shape[:2]) != tuple(value_shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {_size(key_shape[:2])} do not match value's "
                                 f"{_size(value_shape[:2])}")
    elif tuple(key_shape) != tuple(value_shape):
        raise AssertionError(f"key shape {_size(key_shape)} does not match value shape {_size(value_shape)}")
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            correct = (tgt_len, src_len)
            if tuple(attn_mask.shape) != correct:
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {correct}.")
        elif attn_mask.dim() == 3:
            correct = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != correct:
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {correct}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _size(shape):
    return Size(shape)


def _float_mask(mask, dtype):
    """A bool mask (True = masked out) as an additive one: -inf where True, else 0."""
    if mask is None or mask.dtype is not bool_:
        return mask
    return zeros(*mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward over tensor ops (torch's algorithm).

    query [L, N, E], key [S, N, kdim], value [S, N, vdim] (no batch_first here), or
    unbatched [L, E], ... Masks: bool True = not allowed, floating ones are added (a
    floating key_padding_mask too, as in torch 2.x). ``is_causal=True`` without an
    ``attn_mask`` applies the causal mask (torch 2.x requires the mask as well)."""
    F._check("multi_head_attention_forward", query=query, key=key, value=value)
    for name, t in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"multi_head_attention_forward(): argument '{name}' must be Tensor or None, "
                            f"not {type(t).__name__}")
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    _check_kpm(key_padding_mask)
    attn_mask = _canonical_attn_mask(attn_mask)
    _mha_arg_check(tgt_len, bsz, embed_dim, src_len, key.shape, value.shape, embed_dim_to_check, num_heads,
                   attn_mask, use_separate_proj_weight)
    head_dim = embed_dim // num_heads

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        for n, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {n}_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

    # masks, additive: attn_mask [1 or N*H, L, S], key padding [N, S]
    if attn_mask is not None:
        attn_mask = _float_mask(attn_mask, q.dtype)
        if attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)
    elif is_causal:
        attn_mask = _wrap(lib.tn_nn_generate_square_subsequent_mask(max(tgt_len, src_len), q.dtype._code))
        attn_mask = attn_mask[:tgt_len, :src_len].unsqueeze(0)
    key_padding_mask = _float_mask(key_padding_mask, q.dtype)

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key." if static_k is not None
                                 else "bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    q = q.contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.contiguous().view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.contiguous().view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}")
        v = static_v

    if add_zero_attn:
        z = zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k = cat([k, z], 1)
        v = cat([v, z], 1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
                                           .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0
    q_scaled = q / math.sqrt(head_dim)
    if attn_mask is not None:
        w = q_scaled.bmm(k.transpose(-2, -1)) + attn_mask
    else:
        w = q_scaled.bmm(k.transpose(-2, -1))
    w = F.softmax(w, dim=-1)
    if dropout_p > 0.0:
        w = F.dropout(w, p=dropout_p)
    out = w.bmm(v).transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    w = w.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        w = w.sum(dim=1) / num_heads
    if not is_batched:
        w = w.squeeze(0)
    return out, w


class MultiheadAttention(Module):
    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty((embed_dim, embed_dim), device, dtype))
            self.k_proj_weight = Parameter(_empty((embed_dim, self.kdim), device, dtype))
            self.v_proj_weight = Parameter(_empty((embed_dim, self.vdim), device, dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty((3 * embed_dim, embed_dim), device, dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty((3 * embed_dim,), device, dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        if add_bias_kv:
            self.bias_k = Parameter(_empty((1, 1, embed_dim), device, dtype))
            self.bias_v = Parameter(_empty((1, 1, embed_dim), device, dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        # torch's order: out_proj (a Linear: its own draws), then _reset_parameters draws the
        # projections and zeroes out_proj's bias
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._reset_in_proj()
        if self.out_proj.bias is not None:
            init.constant_(self.out_proj.bias, 0.0)

    def _reset_in_proj(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _reset_parameters(self):
        self._reset_in_proj()
        if self.in_proj_bias is not None and self.out_proj.bias is not None:
            init.constant_(self.out_proj.bias, 0.0)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def _c_named(self):
        """(C name, Parameter) pairs for tn_nn_mha_forward, or None when the parameters do
        not have the C module's layout (then the Python functional path runs)."""
        out = self.out_proj
        has_bias = self.in_proj_bias is not None
        if not isinstance(out, Linear) or (out.bias is not None) != has_bias or \
                (self.bias_k is None) != (self.bias_v is None):
            return None
        names = ["in_proj_weight"] if self._qkv_same_embed_dim else ["q_proj_weight", "k_proj_weight", "v_proj_weight"]
        if has_bias:
            names.append("in_proj_bias")
        if self.bias_k is not None:
            names += ["bias_k", "bias_v"]
        named = [(n, getattr(self, n)) for n in names] + [("out_proj.weight", out.weight)]
        if has_bias:
            named.append(("out_proj.bias", out.bias))
        if not all(isinstance(t, Parameter) for _, t in named):
            return None
        return named

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        F._check("MultiheadAttention.forward", query=query, key=key, value=value)
        is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        _check_kpm(key_padding_mask)
        attn_mask = _canonical_attn_mask(attn_mask)
        named = self._c_named()
        if named is None:
            return self._forward_python(query, key, value, key_padding_mask, need_weights, attn_mask,
                                        average_attn_weights, is_causal, is_batched)
        # torch's checks on (seq, batch, feature) shapes, then one C call
        def sbf(t):
            s = tuple(t.shape)
            if not is_batched:
                return (s[0], 1, s[1])
            return (s[1], s[0], s[2]) if self.batch_first else s
        (tgt_len, bsz, e), ks, vs = sbf(query), sbf(key), sbf(value)
        _mha_arg_check(tgt_len, bsz, e, ks[0], ks, vs, self.embed_dim, self.num_heads, attn_mask,
                       not self._qkv_same_embed_dim)
        key_opts = (f"dropout={float(self.dropout)!r}, bias={_pybool(self.in_proj_bias is not None)}, "
                    f"add_bias_kv={_pybool(self.bias_k is not None)}, add_zero_attn={_pybool(self.add_zero_attn)}, "
                    f"kdim={int(self.kdim)}, vdim={int(self.vdim)}, batch_first={_pybool(self.batch_first)}")
        make = lambda: lib.tn_nn_multihead_attention_str(self.embed_dim, self.num_heads, key_opts.encode())  # noqa: E731
        m = _c_module(self).get((self.embed_dim, self.num_heads, key_opts), make, named, self.training)
        w = c_void_p()
        out = _wrap(lib.tn_nn_mha_forward_opts(m, query._ptr, key._ptr, value._ptr, byref(w) if need_weights else None,
                                               tn_mha_forward_opts(_opt(key_padding_mask), bool(need_weights), _opt(attn_mask),
                                                                   bool(average_attn_weights), bool(is_causal))))
        return out, (_wrap(w.value) if need_weights else None)

    def _forward_python(self, query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                        is_causal, is_batched):
        if self.batch_first and is_batched:
            query, key, value = [x.transpose(1, 0) for x in (query, key, value)]
        kw = {}
        if not self._qkv_same_embed_dim:
            kw = dict(use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                      k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        out, w = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **kw)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, w


# --------------------------------------------------------------------------- Transformer
def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _check_skpm(mask):
    if mask is not None and mask.dtype is not bool_ and not mask.is_floating_point():
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class TransformerEncoderLayer(Module):
    __constants__ = ["batch_first", "norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if not bias:                          # torch 2.1's LayerNorm(bias=False)
            self.norm1.register_parameter("bias", None)
            self.norm2.register_parameter("bias", None)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_skpm(src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    __constants__ = ["batch_first", "norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if not bias:
            for n in (self.norm1, self.norm2, self.norm3):
                n.register_parameter("bias", None)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor      # accepted; there are no nested tensors here
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        _check_skpm(src_key_padding_mask)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal), src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **kw)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, **kw)
            if not bias:
                encoder_norm.register_parameter("bias", None)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **kw)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, **kw)
            if not bias:
                decoder_norm.register_parameter("bias", None)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        elif self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """[sz, sz]: -inf above the diagonal, 0 elsewhere (tn_nn_generate_square_subsequent_mask)."""
        m = _wrap(lib.tn_nn_generate_square_subsequent_mask(int(sz), (dtype or float32)._code))
        return m if device is None else m.to(device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
