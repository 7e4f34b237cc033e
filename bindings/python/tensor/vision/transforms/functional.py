"""torchvision.transforms.functional on tensors (torchvision's tensor path, same formulas).

Images are tensors in one of two layouts, told apart by dtype:

- a uint8 tensor of 2 or 3 dims is an image in PIL's layout, H x W or H x W x C: what
  tensor.vision's datasets return where torchvision returns a PIL image (and what
  ``to_tensor`` takes);
- any other tensor is a tensor image [..., C, H, W] (or [..., H, W]), as in torchvision.

Geometric functions (crop, pad, flips, resize) keep the layout they are given.
"""
import functools
import numbers

from ..._core import Tensor, uint8, float32, get_default_dtype, _numpy, tensor as _tensor, from_numpy, full
from ...nn import functional as _F

__all__ = ["to_tensor", "normalize", "get_dimensions", "hflip", "vflip", "crop", "center_crop", "pad", "resize"]


def _is_pil_like(img):
    return img.dtype == uint8 and img.ndim in (2, 3)


def _hw_dims(img):
    """The (H, W) dims of img: (0, 1) in PIL's layout, (-2, -1) for a tensor image."""
    if img.ndim < 2:
        raise TypeError(f"Tensor is not a torch image: an image has at least 2 dims (H, W), got {img.ndim}")
    return (0, 1) if _is_pil_like(img) else (img.ndim - 2, img.ndim - 1)


def _check(img, fn):
    if not isinstance(img, Tensor):
        raise TypeError(f"{fn}: img should be a Tensor (tensor.vision's image). Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width] of an image in either layout."""
    _check(img, "get_dimensions")
    h, w = _hw_dims(img)
    if _is_pil_like(img):
        c = 1 if img.ndim == 2 else img.shape[2]
    else:
        c = 1 if img.ndim == 2 else img.shape[-3]
    return [c, img.shape[h], img.shape[w]]


def to_tensor(pic):
    """An image in PIL's layout (uint8 H x W / H x W x C tensor, or a NumPy array H x W /
    H x W x C) as a float C x H x W tensor; uint8 values are divided by 255 (to [0, 1])."""
    np = _numpy()
    if np is not None and isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = from_numpy(np.ascontiguousarray(pic.transpose((2, 0, 1)))).contiguous()
        return img.to(get_default_dtype()).div(255) if img.dtype == uint8 else img
    if not isinstance(pic, Tensor):
        raise TypeError(f"pic should be a uint8 image tensor (H x W or H x W x C) or ndarray. Got {type(pic)}")
    if pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.dtype != uint8:
        raise TypeError(f"pic should be a uint8 tensor, an image's pixels in PIL's layout (H x W or H x W x C); "
                        f"got {pic.dtype}: a float tensor is already a tensor image")
    img = pic.unsqueeze(0) if pic.ndim == 2 else pic.permute(2, 0, 1)
    return img.to(get_default_dtype()).div(255)


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean[c]) / std[c] for each channel c of a float tensor image [..., C, H, W]."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    try:        # per-sample calls with the same statistics: made once (a tensor() costs ~25 us)
        mean, std = _stats(tuple(mean), tuple(std), tensor.dtype)
    except TypeError:                           # numbers, tensors: not hashable as tuples
        mean, std = _stats.__wrapped__(mean, std, tensor.dtype)
    return tensor.sub_(mean).div_(std)


@functools.lru_cache(maxsize=64)
def _stats(mean, std, dtype):
    """normalize's mean and std as [C, 1, 1] tensors of dtype (torchvision's checks)."""
    mean = _tensor(list(mean) if not isinstance(mean, (numbers.Number, Tensor)) else mean, dtype=dtype)
    std = _tensor(list(std) if not isinstance(std, (numbers.Number, Tensor)) else std, dtype=dtype)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return mean, std


def hflip(img):
    _check(img, "hflip")
    return img.flip(_hw_dims(img)[1])


def vflip(img):
    _check(img, "vflip")
    return img.flip(_hw_dims(img)[0])


def _pad_index(n, before, after, mode):
    """Source indices of the padded axis (edge, reflect, symmetric), as torchvision's modes."""
    out = []
    for i in range(-before, n + after):
        if mode == "edge":
            j = min(max(i, 0), n - 1)
        else:
            period = 2 * n if mode == "symmetric" else 2 * (n - 1)
            j = i % period if period else 0
            if j >= n:
                j = period - j - (1 if mode == "symmetric" else 0)
        out.append(j)
    return out


def _parse_padding(padding):
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return [int(padding)] * 4
    if isinstance(padding, (list, tuple)) and all(isinstance(p, numbers.Integral) for p in padding):
        if len(padding) == 1:
            return [int(padding[0])] * 4
        if len(padding) == 2:
            return [int(padding[0]), int(padding[1])] * 2
        if len(padding) == 4:
            return [int(p) for p in padding]
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    raise TypeError("Got inappropriate padding arg")


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pads the H and W dims: padding an int (all sides), (left/right, top/bottom) or (left,
    top, right, bottom); padding_mode constant (with fill), edge, reflect or symmetric."""
    _check(img, "pad")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if not isinstance(fill, numbers.Number) or isinstance(fill, bool):
        raise TypeError(f"fill should be int or float, got {type(fill).__name__} (per-channel fills are not supported)")
    left, top, right, bottom = _parse_padding(padding)
    hd, wd = _hw_dims(img)
    h, w = img.shape[hd], img.shape[wd]
    if padding_mode == "constant":
        shape = list(img.shape)
        shape[hd], shape[wd] = h + top + bottom, w + left + right
        if shape[hd] < 0 or shape[wd] < 0:
            raise ValueError(f"pad: padding {padding} leaves a negative size {shape[hd]} x {shape[wd]}")
        out = full(shape, fill, dtype=img.dtype)
        # the part of img that survives (negative padding crops)
        src = img.narrow(hd, max(-top, 0), max(min(h, h + bottom) - max(-top, 0), 0))
        src = src.narrow(wd, max(-left, 0), max(min(w, w + right) - max(-left, 0), 0))
        dst = out.narrow(hd, max(top, 0), src.shape[hd]).narrow(wd, max(left, 0), src.shape[wd])
        dst.copy_(src)
        return out
    if padding_mode == "reflect" and (max(top, bottom) >= h or max(left, right) >= w):
        raise ValueError(f"pad: reflect padding ({left}, {top}, {right}, {bottom}) must be smaller than the "
                         f"image's size {h} x {w} in each dim")
    if h == 0 or w == 0:
        raise ValueError(f"pad: cannot pad an empty image ({h} x {w}) with mode {padding_mode}")
    rows = _tensor(_pad_index(h, top, bottom, padding_mode))
    cols = _tensor(_pad_index(w, left, right, padding_mode))
    return img.index_select(hd, rows).index_select(wd, cols)


def crop(img, top, left, height, width):
    """img[..., top:top + height, left:left + width], zero-padded where the box leaves the image."""
    _check(img, "crop")
    hd, wd = _hw_dims(img)
    h, w = img.shape[hd], img.shape[wd]
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        pads = [max(-left, 0), max(-top, 0), max(right - w, 0), max(bottom - h, 0)]
        img = pad(img, pads, fill=0)
        top, left = top + pads[1], left + pads[0]
    return img.narrow(hd, top, height).narrow(wd, left, width)


def _setup_size(size, what="size"):
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"Please provide only two dimensions (h, w) for {what}.")


def center_crop(img, output_size):
    """The centre box of output_size (an int or (h, w)); zero-padded when larger than img."""
    _check(img, "center_crop")
    crop_h, crop_w = _setup_size(output_size)
    _, h, w = get_dimensions(img)
    if crop_w > w or crop_h > h:
        padding = [(crop_w - w) // 2 if crop_w > w else 0, (crop_h - h) // 2 if crop_h > h else 0,
                   (crop_w - w + 1) // 2 if crop_w > w else 0, (crop_h - h + 1) // 2 if crop_h > h else 0]
        img = pad(img, padding, fill=0)
        _, h, w = get_dimensions(img)
        if crop_w == w and crop_h == h:
            return img
    top = int(round((h - crop_h) / 2.0))
    left = int(round((w - crop_w) / 2.0))
    return crop(img, top, left, crop_h, crop_w)


def _resize_size(h, w, size, max_size):
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    if isinstance(size, (list, tuple)):
        if len(size) != 1:
            raise ValueError(f"size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list")
        size = size[0]
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = int(size), int(int(size) * long / short)
    if max_size is not None:
        if max_size <= size:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                             f"smaller edge size = {size}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return new_h, new_w


def resize(img, size, interpolation="bilinear", max_size=None, antialias=True):
    """Resizes H and W to size ((h, w), or an int for the smaller edge, keeping the aspect
    ratio) with F.interpolate (bilinear, align_corners=False; or nearest). uint8 images are
    rounded back to uint8. antialias (torchvision's default, True) matters only when
    shrinking with bilinear, and is not supported there yet: pass antialias=False."""
    _check(img, "resize")
    mode = getattr(interpolation, "value", interpolation)
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"resize: interpolation {interpolation!r} is not supported (bilinear or nearest)")
    hd, wd = _hw_dims(img)
    h, w = img.shape[hd], img.shape[wd]
    oh, ow = _resize_size(h, w, size, max_size)
    if (oh, ow) == (h, w):
        return img
    if antialias and mode == "bilinear" and (oh < h or ow < w):
        raise NotImplementedError("resize: antialias=True (torchvision's default) when shrinking is not supported "
                                  "yet; pass antialias=False for plain bilinear interpolation")
    pil = _is_pil_like(img)
    x = img.permute(2, 0, 1) if pil and img.ndim == 3 else img          # to [..., H, W]
    lead = list(x.shape[:-2])
    x = x.reshape(1, -1, h, w)
    dtype = x.dtype
    if not x.is_floating_point():
        x = x.to(float32)
    y = _F.interpolate(x, size=(oh, ow), mode=mode, align_corners=None if mode == "nearest" else False)
    if dtype == uint8:
        y = y.round().clamp(0, 255).to(uint8)
    elif y.dtype != dtype:
        y = y.to(dtype)
    y = y.reshape(lead + [oh, ow])
    return y.permute(1, 2, 0) if pil and img.ndim == 3 else y
