"""tensor.vision: torchvision's datasets and transforms that training scripts use, so a
script ports by changing its imports::

    from tensor.vision import datasets, transforms      # from torchvision import ...

Datasets (``datasets.MNIST``, ``FashionMNIST``, ``CIFAR10``) read local files through the C
readers (no network: ``download=True`` only checks the files are there). One difference
from torchvision: there is no PIL here, so where torchvision's ``dataset[i]`` gives a PIL
image, this gives the image's pixels as a uint8 tensor in PIL's layout (H x W for
grayscale, H x W x C for colour), which ``transforms.ToTensor`` turns into a float
C x H x W tensor in [0, 1] as it does a PIL image.
"""
from . import datasets, io, models, transforms, utils  # noqa: F401

__all__ = ["datasets", "io", "models", "transforms", "utils"]
