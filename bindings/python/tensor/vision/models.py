"""torchvision.models' ResNets (resnet18/34/50/101/152, resnext50_32x4d/101_32x8d,
wide_resnet50_2/101_2) and VGGs (vgg11/13/16/19 and their _bn variants): torchvision's
architecture, module names (so state dicts match), forward and initialisation (the layers
built in the same order, then kaiming_normal_ (fan_out, relu) on every Conv2d, 1/0 on
every norm layer, and for VGG N(0, 0.01) and 0 on every Linear), so that after
``manual_seed`` a model starts from torchvision's weights. ``weights`` must be None (and
the legacy ``pretrained`` False): pretrained weights cannot be downloaded here (load a
state dict with tensor.load). Written after torchvision's resnet.py and vgg.py
(BSD-3-Clause, Copyright (c) Soumith Chintala 2016).

Only ``nn`` is imported below, and only by the line ``from .. import nn`` (the tests run
this file under PyTorch too, with that line pointing at torch.nn)."""
from .. import nn

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
           "resnext50_32x4d", "resnext101_32x8d", "wide_resnet50_2", "wide_resnet101_2",
           "VGG", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """A 3x3 convolution, padded to keep the size (at stride 1), without bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """A 1x1 convolution without bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a shortcut (ResNet-18/34)."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1, 3x3 (the stride), 1x1 convolutions with a shortcut (ResNet-50 and deeper)."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class ResNet(nn.Module):
    """conv1 (7x7, stride 2), bn1, relu, maxpool, layer1..layer4, avgpool, fc."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        self._norm_layer = norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None "
                             f"or a 3-element tuple, got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:         # each residual branch starts as zero: the block as the identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))

    def forward(self, x):
        return self._forward_impl(x)


def _no_weights(weights, kwargs):
    """weights=None only; torchvision's legacy pretrained=True asks for the same weights."""
    if kwargs.pop("pretrained", False) and weights is None:
        weights = "pretrained=True"
    if weights is not None:
        raise RuntimeError(f"tensor.vision.models: pretrained weights ({weights!r}) cannot be downloaded here; "
                           "build the model with weights=None and load a state dict (tensor.load reads PyTorch's "
                           ".pth files)")


def _resnet(block, layers, weights, progress, **kwargs):
    _no_weights(weights, kwargs)
    return ResNet(block, layers, **kwargs)


def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18 (BasicBlock, [2, 2, 2, 2])."""
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)


def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34 (BasicBlock, [3, 4, 6, 3])."""
    return _resnet(BasicBlock, [3, 4, 6, 3], weights, progress, **kwargs)


def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50 (Bottleneck, [3, 4, 6, 3])."""
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


def resnet101(*, weights=None, progress=True, **kwargs):
    """ResNet-101 (Bottleneck, [3, 4, 23, 3])."""
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)


def resnet152(*, weights=None, progress=True, **kwargs):
    """ResNet-152 (Bottleneck, [3, 8, 36, 3])."""
    return _resnet(Bottleneck, [3, 8, 36, 3], weights, progress, **kwargs)


def resnext50_32x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-50 32x4d: ResNet-50 with 32 groups of width 4."""
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **dict(kwargs, groups=32, width_per_group=4))


def resnext101_32x8d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 32x8d: ResNet-101 with 32 groups of width 8."""
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **dict(kwargs, groups=32, width_per_group=8))


def wide_resnet50_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-50-2: ResNet-50 with bottlenecks twice as wide."""
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **dict(kwargs, width_per_group=128))


def wide_resnet101_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-101-2: ResNet-101 with bottlenecks twice as wide."""
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **dict(kwargs, width_per_group=128))


# ---- VGG ----
class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def make_layers(cfg, batch_norm=False):
    """The feature extractor: 3x3 convolutions (padding 1) of the widths in cfg, each with
    ReLU (and BatchNorm2d before it: batch_norm), "M" a 2x2 max pool."""
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else \
                [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


_VGG_CFGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def _vgg(cfg, batch_norm, weights, progress, **kwargs):
    _no_weights(weights, kwargs)
    return VGG(make_layers(_VGG_CFGS[cfg], batch_norm=batch_norm), **kwargs)


def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration "A")."""
    return _vgg("A", False, weights, progress, **kwargs)


def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch normalization."""
    return _vgg("A", True, weights, progress, **kwargs)


def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration "B")."""
    return _vgg("B", False, weights, progress, **kwargs)


def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch normalization."""
    return _vgg("B", True, weights, progress, **kwargs)


def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration "D")."""
    return _vgg("D", False, weights, progress, **kwargs)


def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch normalization."""
    return _vgg("D", True, weights, progress, **kwargs)


def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration "E")."""
    return _vgg("E", False, weights, progress, **kwargs)


def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch normalization."""
    return _vgg("E", True, weights, progress, **kwargs)
