"""torchvision.transforms: Compose, ToTensor, Normalize, RandomCrop, RandomHorizontalFlip,
Lambda, Resize and CenterCrop, with torchvision's signatures, defaults, reprs and
formulas (its tensor path). Random transforms draw from tensor's default generator
(``tensor.rand`` / ``tensor.randint``, as torchvision draws from torch's), so
``tensor.manual_seed`` makes them reproducible. Images: see ``functional``'s docstring (a
uint8 H x W / H x W x C tensor is an image in PIL's layout, anything else a tensor image
[..., C, H, W])."""
import numbers

from ..._factories import rand, randint
from . import functional as F
from .functional import _setup_size

__all__ = ["Compose", "ToTensor", "Normalize", "Lambda", "RandomCrop", "RandomHorizontalFlip", "Resize",
           "CenterCrop", "InterpolationMode"]


class InterpolationMode:
    """torchvision.transforms.InterpolationMode (the two modes Resize supports)."""
    NEAREST = "nearest"
    BILINEAR = "bilinear"


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        s = self.__class__.__name__ + "("
        for t in self.transforms:
            s += f"\n    {t}"
        return s + "\n)"


class ToTensor:
    """An image in PIL's layout (uint8 tensor H x W / H x W x C, or NumPy array) -> float
    C x H x W; uint8 scaled to [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if rand(1) < self.p:
            return F.hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomCrop:
    """Pads (padding, then up to size with pad_if_needed), then crops a random box of size."""

    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = randint(0, h - th + 1, size=(1,)).item()
        j = randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = tuple(_setup_size(size))
        if padding is not None and not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def __call__(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class CenterCrop:
    def __init__(self, size):
        self.size = tuple(_setup_size(size))

    def __call__(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Resize:
    """size (h, w), or an int for the smaller edge; bilinear (default) or nearest; antialias
    when shrinking with bilinear is not supported yet (pass antialias=False)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if not isinstance(size, (numbers.Integral, list, tuple)) or isinstance(size, bool):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def __call__(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation}, "
                f"max_size={self.max_size}, antialias={self.antialias})")
