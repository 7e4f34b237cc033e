"""Layers as Python Modules over the C functional ops (torch.nn's classes).

Constructor signatures, attribute names, ``extra_repr`` and ``forward`` are torch
1.13's. Initialisation calls the C tn_init_* functions with the C layers' formulas
(tensor.h section 12, which follow torch's reset_parameters), so a layer built here
and the same tn_nn_* layer built in C draw identical values from the same seed.
"""
import math
import numbers
import warnings

from .._core import empty, int64, ones, tensor, zeros
from ..autograd import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = [
    "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "Unfold", "Fold",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d",
    "LayerNorm", "GroupNorm", "Dropout", "Dropout1d", "Dropout2d", "AlphaDropout", "FeatureAlphaDropout", "Embedding", "Flatten", "Unflatten",
    "PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh",
    "Hardswish", "Hardsigmoid", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "LogSigmoid", "Softsign",
    "Tanhshrink", "Threshold", "GLU", "CosineSimilarity", "PairwiseDistance",
]


def _ntuple(n):
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return tuple([x] * n)
    return parse


_single, _pair = _ntuple(1), _ntuple(2)


def _empty(shape, device, dtype):
    return empty(*shape, dtype=dtype, device=device)


def _uniform_fan_in(weight, bias, fan_in, kaiming=True):
    """torch's reset_parameters of Linear and Conv (and the C layers'): the weight by
    kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with torch's
    bound, then the bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)). Bilinear draws both with the
    plain bound (kaiming=False)."""
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    if not kaiming:
        init.uniform_(weight, -bound, bound)
    else:   # torch warns and leaves an empty weight
        init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        init.uniform_(bias, -bound, bound)


# --------------------------------------------------------------------------- linear
class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_(a=sqrt(5)) and the bias rule are both U(+-1/sqrt(in_features))
        _uniform_fan_in(self.weight, self.bias, self.in_features)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_fan_in(self.weight, self.bias, self.weight.size(1), kaiming=False)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# --------------------------------------------------------------------------- convolution
class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's padding (last dimension first) for the non-zero padding modes, as torch
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_empty(shape, device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        w = self.weight
        fan_in = w.numel() // w.size(0) if w.size(0) else 0     # size(1) * receptive field
        _uniform_fan_in(w, self.bias, fan_in)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _padded(self, input):
        """input padded by padding_mode, for a convolution with padding 0 (padding_mode='zeros': input)."""
        if self.padding_mode == "zeros":
            return input
        return F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride),
                         padding if isinstance(padding, str) else _single(padding), _single(dilation), False,
                         _single(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        padding = self.padding if self.padding_mode == "zeros" else _single(0)
        return F.conv1d(self._padded(input), weight, bias, self.stride, padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride),
                         padding if isinstance(padding, str) else _pair(padding), _pair(dilation), False,
                         _pair(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        padding = self.padding if self.padding_mode == "zeros" else _pair(0)
        return F.conv2d(self._padded(input), weight, bias, self.stride, padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                             f"(got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i, size in enumerate(output_size):
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]


class ConvTranspose1d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride), _single(padding),
                         _single(dilation), True, _single(output_padding), groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, 1,
                                              self.dilation)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride), _pair(padding),
                         _pair(dilation), True, _pair(output_padding), groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, 2,
                                              self.dilation)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class Unfold(Module):
    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}".format(
            **self.__dict__)


class Fold(Module):
    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}").format(**self.__dict__)


# --------------------------------------------------------------------------- pooling
class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


# --------------------------------------------------------------------------- normalisation
class _NormBase(Module):
    """Common base of _InstanceNorm and _BatchNorm."""
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(_empty((num_features,), device, dtype))
            self.bias = Parameter(_empty((num_features,), device, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = tensor(0, dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                with no_grad():
                    self.num_batches_tracked.add_(1)
                if self.momentum is None:      # cumulative moving average
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:
                    exponential_average_factor = self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               0.1 if self.momentum is None else self.momentum, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = self.__class__.__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    "them. See the documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in keys), klass=klass))
                for k in keys:
                    state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 2

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    def _get_no_batch_dim(self):
        return 3

    def _check_input_dim(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class LayerNorm(Module):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, device, dtype))
            self.bias = Parameter(_empty(self.normalized_shape, device, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class GroupNorm(Module):
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = Parameter(_empty((num_channels,), device, dtype))
            self.bias = Parameter(_empty((num_channels,), device, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)


# --------------------------------------------------------------------------- dropout
class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


# --------------------------------------------------------------------------- embedding
class Embedding(Module):
    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < self.num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -self.num_embeddings, "Padding_idx must be within num_embeddings"
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(_empty((num_embeddings, embedding_dim), device, dtype))
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight)
        self.sparse = sparse

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        embedding = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, padding_idx=padding_idx,
                        max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                        sparse=sparse)
        embedding.weight.requires_grad = not freeze
        return embedding


# --------------------------------------------------------------------------- shape
class Flatten(Module):
    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)):
                raise TypeError("unflattened_size must be tuple of ints, "
                                + f"but found type {type(unflattened_size).__name__}")
            for idx, elem in enumerate(unflattened_size):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, "
                                    + f"but found element of type {type(elem).__name__} at pos {idx}")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PixelShuffle(Module):
    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + str(self.scale_factor)
        else:
            info = "size=" + str(self.size)
        return info + ", mode=" + self.mode


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


# --------------------------------------------------------------------------- activations
def _inplace_str(inplace, lead=""):
    return lead + "inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose only argument is inplace (extra_repr 'inplace=True' or '')."""
    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_str(self.inplace)


class ReLU(_InplaceActivation):
    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class SELU(_InplaceActivation):
    def forward(self, input):
        return F.selu(input, self.inplace)


class SiLU(_InplaceActivation):
    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceActivation):
    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(_InplaceActivation):
    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardsigmoid(_InplaceActivation):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardtanh(Module):
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument min_value is deprecated and rename to min_val")
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument max_value is deprecated and rename to max_val")
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace, ', ')}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace, ', ')}"


class _AlphaActivation(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace, ', ')}"


class ELU(_AlphaActivation):
    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaActivation):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Threshold(Module):
    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace, ', ')}"


class GLU(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


# --------------------------------------------------------------------------- distances
class CosineSimilarity(Module):
    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

