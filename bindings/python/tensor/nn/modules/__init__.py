"""torch.nn.modules: the submodules PyTorch defines its layers in (``torch.nn.modules.linear``,
``torch.nn.modules.rnn``, ...), each naming the package's classes, so code that reaches a
class by that path (``torch.serialization.safe_globals([torch.nn.modules.linear.Linear])``,
``isinstance(m, torch.nn.modules.conv.Conv2d)``) runs. The classes are tensor.nn's; only
the paths are PyTorch's."""
import sys as _sys
import types as _types

_nn = _sys.modules[__name__.rsplit(".", 1)[0]].__dict__   # tensor.nn, imported before this

_SUBMODULES = {
    "activation": ('CELU', 'ELU', 'GELU', 'GLU', 'Hardshrink', 'Hardsigmoid', 'Hardswish', 'Hardtanh', 'LeakyReLU',
            'LogSigmoid', 'LogSoftmax', 'Mish', 'MultiheadAttention', 'PReLU', 'RReLU', 'ReLU', 'ReLU6', 'SELU',
            'SiLU', 'Sigmoid', 'Softmax', 'Softmax2d', 'Softmin', 'Softplus', 'Softshrink', 'Softsign', 'Tanh',
            'Tanhshrink', 'Threshold'),
    "batchnorm": ('BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d'),
    "channelshuffle": ('ChannelShuffle',),
    "container": ('ModuleDict', 'ModuleList', 'ParameterDict', 'ParameterList', 'Sequential'),
    "conv": ('Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d', 'LazyConv1d',
            'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d'),
    "distance": ('CosineSimilarity', 'PairwiseDistance'),
    "dropout": ('Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d'),
    "flatten": ('Flatten', 'Unflatten'),
    "fold": ('Fold', 'Unfold'),
    "instancenorm": ('InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d', 'LazyInstanceNorm1d', 'LazyInstanceNorm2d',
            'LazyInstanceNorm3d'),
    "linear": ('Bilinear', 'Identity', 'LazyLinear', 'Linear'),
    "loss": ('BCELoss', 'BCEWithLogitsLoss', 'CTCLoss', 'CosineEmbeddingLoss', 'CrossEntropyLoss',
            'GaussianNLLLoss', 'HingeEmbeddingLoss', 'HuberLoss', 'KLDivLoss', 'L1Loss', 'MSELoss',
            'MarginRankingLoss', 'MultiLabelMarginLoss', 'MultiLabelSoftMarginLoss', 'MultiMarginLoss',
            'NLLLoss', 'PoissonNLLLoss', 'SmoothL1Loss', 'SoftMarginLoss', 'TripletMarginLoss',
            'TripletMarginWithDistanceLoss'),
    "module": ('Module',),
    "normalization": ('CrossMapLRN2d', 'GroupNorm', 'LayerNorm', 'LocalResponseNorm'),
    "padding": ('ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ReflectionPad1d', 'ReflectionPad2d',
            'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d', 'ZeroPad2d'),
    "pixelshuffle": ('PixelShuffle', 'PixelUnshuffle'),
    "pooling": ('AdaptiveAvgPool1d', 'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d', 'AdaptiveMaxPool1d',
            'AdaptiveMaxPool2d', 'AdaptiveMaxPool3d', 'AvgPool1d', 'AvgPool2d', 'AvgPool3d',
            'FractionalMaxPool2d', 'FractionalMaxPool3d', 'LPPool1d', 'LPPool2d', 'MaxPool1d', 'MaxPool2d',
            'MaxPool3d', 'MaxUnpool1d', 'MaxUnpool2d', 'MaxUnpool3d'),
    "rnn": ('GRU', 'GRUCell', 'LSTM', 'LSTMCell', 'RNN', 'RNNBase', 'RNNCell', 'RNNCellBase'),
    "sparse": ('Embedding', 'EmbeddingBag'),
    "transformer": ('Transformer', 'TransformerDecoder', 'TransformerDecoderLayer', 'TransformerEncoder',
            'TransformerEncoderLayer'),
    "upsampling": ('Upsample', 'UpsamplingBilinear2d', 'UpsamplingNearest2d'),
}

for _sub, _names in _SUBMODULES.items():
    _m = _types.ModuleType(__name__ + "." + _sub)
    for _n in _names:
        setattr(_m, _n, _nn[_n])
    _m.__all__ = list(_names)
    _sys.modules[_m.__name__] = _m
    globals()[_sub] = _m
    globals().update({_n: _nn[_n] for _n in _names})
# MultiheadAttention's out_proj class (a Linear), which PyTorch defines in linear
from ..rnn_modules import NonDynamicallyQuantizableLinear  # noqa: E402
_sys.modules[__name__ + ".linear"].NonDynamicallyQuantizableLinear = NonDynamicallyQuantizableLinear
del _sub, _names, _m, _n
