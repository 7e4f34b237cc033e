"""torch.nn.utils.rnn: PackedSequence and the pack/pad helpers, over tensor ops.

A ``PackedSequence`` is torch's: ``data`` holds the time steps of a batch of sequences
sorted by decreasing length, time-major (step 0 of every sequence, then step 1 of those
at least 2 long, ...), ``batch_sizes`` (an int64 tensor) how many sequences each step has,
and ``sorted_indices`` / ``unsorted_indices`` the permutation from the caller's batch order
(None when the batch was already sorted). Packing and padding are one ``index_select``
each over a flattened tensor (with a one-row padding tensor appended when padding), so
they are differentiable. The recurrent layers take a PackedSequence
(``rnn_modules.RNNBase``) and return one, with each sequence's own last hidden state.
"""
import collections
import numbers

from ..._core import Tensor, _tensor_arg, float16, float32, float64, full, int32, int64, tensor, uint8
from ..._ops import cat

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequence = collections.namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                                             "unsorted_indices"])


class PackedSequence(_PackedSequence):
    """torch.nn.utils.rnn.PackedSequence (a named tuple: data, batch_sizes, sorted_indices,
    unsorted_indices). Made by pack_padded_sequence / pack_sequence, taken and returned
    by RNN, LSTM and GRU."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:             # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError("PackedSequence: expected (data, batch_sizes) or data, batch_sizes")
            data, batch_sizes = data
        if isinstance(batch_sizes, Tensor) and batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence "
                             "and pack_padded_sequences in nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """dtype and/or device conversion of ``data`` (the index tensors follow its device;
        ``batch_sizes`` stays on the CPU); self when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    def half(self):
        return self.to(dtype=float16)

    def long(self):
        return self.to(dtype=int64)

    def int(self):
        return self.to(dtype=int32)

    def byte(self):
        return self.to(dtype=uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None for None)."""
    if permutation is None:
        return None
    perm = _tensor_arg(permutation, "invert_permutation", "permutation").tolist()
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tensor(inv, dtype=int64, device=permutation.device)


def _lengths_list(lengths):
    """lengths (a list or a 1-D tensor) as a list of ints, as torch.as_tensor(lengths, int64)."""
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D "
                               f"{lengths.device.type} {lengths.dtype._legacy} tensor")
        return [int(v) for v in lengths.tolist()]
    if isinstance(lengths, numbers.Number) or not hasattr(lengths, "__len__"):
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor or a list of ints, got "
                           f"{type(lengths).__name__}")
    return [int(v) for v in lengths]


def _batch_sizes(lens):
    """batch_sizes of sorted (decreasing) lengths: how many are longer than each step."""
    out, j = [], len(lens)
    for t in range(lens[0] if lens else 0):
        while j and lens[j - 1] <= t:
            j -= 1
        out.append(j)
    return out


def _index(idx, dev):
    return tensor(idx, dtype=int64, device=dev) if idx else tensor([], dtype=int64, device=dev)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch ``[T, B, *]`` (``[B, T, *]`` with batch_first) of sequences of
    the given lengths. ``enforce_sorted=True`` requires decreasing lengths; ``False``
    sorts them (stably) and records the permutation."""
    _tensor_arg(input, "pack_padded_sequence")
    lens = _lengths_list(lengths)
    sorted_indices = None
    batch_dim = 0 if batch_first else 1
    if not enforce_sorted:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = _index(order, input.device)
        lens = [lens[i] for i in order]
        if input.ndim >= 2 and len(lens) == input.shape[batch_dim]:
            input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack(input, lens, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack(input, lens, batch_first):
    if input.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    x = input.transpose(0, 1) if batch_first else input        # [T, B, *]
    steps, batch = x.shape[0], x.shape[1]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if min(lens) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lens[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a sequence length ({lens[0]}) is larger than the padded "
                           f"sequence length {steps}")
    bs = _batch_sizes(lens)
    idx = [t * batch + j for t, b in enumerate(bs) for j in range(b)]
    flat = x.reshape(steps * batch, *x.shape[2:])
    return flat.index_select(0, _index(idx, x.device)), tensor(bs, dtype=int64)


def _sorted_lengths(bs):
    """Each sorted sequence's length from batch_sizes."""
    lens, t = [], len(bs)
    for j in range(bs[0] if bs else 0):
        while t and bs[t - 1] <= j:
            t -= 1
        lens.append(t)
    return lens


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded ``[T, B, *]`` or ``[B, T, *]``, lengths),
    in the batch order the sequences had before packing."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence(): expected a PackedSequence, got {type(sequence).__name__}")
    data, batch_sizes, _, unsorted_indices = sequence
    bs = [int(b) for b in batch_sizes.tolist()]
    steps = len(bs)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = bs[0] if bs else 0
    n = data.shape[0]
    idx = [n] * (steps * batch)             # row n: the padding row
    off = 0
    for t, b in enumerate(bs):
        for j in range(b):
            idx[j * steps + t if batch_first else t * batch + j] = off + j
        off += b
    rest = tuple(data.shape[1:])
    src = cat([data, full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)], 0)
    shape = (batch, steps) + rest if batch_first else (steps, batch) + rest
    padded = src.index_select(0, _index(idx, data.device)).reshape(shape)
    lengths = tensor(_sorted_lengths(bs), dtype=int64)
    if unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted_indices)
        lengths = lengths.index_select(0, unsorted_indices.cpu())
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks sequences ``[L_i, *]`` into ``[max L, B, *]`` (``[B, max L, *]`` with
    batch_first), padding with ``padding_value``; dtype and trailing shape are the first
    sequence's."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    try:
        seqs = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}") from None
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    for i, s in enumerate(seqs):
        if not isinstance(s, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(s).__name__}")
        if s.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    first = seqs[0]
    rest, dt = tuple(first.shape[1:]), first.dtype
    for s in seqs[1:]:
        if tuple(s.shape[1:]) != rest:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape of the first, "
                               f"{list(rest)}, but one has {list(s.shape[1:])}")
    lens = [s.shape[0] for s in seqs]
    steps, batch, n = max(lens), len(seqs), sum(lens)
    src = cat([s if s.dtype is dt else s.to(dt) for s in seqs]
              + [full((1,) + rest, padding_value, dtype=dt, device=first.device)], 0)
    idx, start = [n] * (steps * batch), 0
    for j, length in enumerate(lens):
        for t in range(length):
            idx[j * steps + t if batch_first else t * batch + j] = start + t
        start += length
    shape = (batch, steps) + rest if batch_first else (steps, batch) + rest
    return src.index_select(0, _index(idx, first.device)).reshape(shape)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length (copies, as torch's)."""
    x = _tensor_arg(padded_sequences, "unpad_sequence", "padded_sequences")
    if not batch_first:
        x = x.transpose(0, 1)
    return [x[j][:length].clone() for j, length in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence(pad_sequence(sequences), their lengths)."""
    lengths = [_tensor_arg(v, "pack_sequence", "sequences").size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

