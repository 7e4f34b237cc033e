"""torchvision.utils.make_grid and save_image, with torchvision's arguments, defaults and
formulas. save_image writes PNG itself (8-bit grayscale or RGB, zlib-compressed): there is
no PIL here, so only the PNG format (a name ending .png) is written."""
import math
import struct
import zlib

from .._core import Tensor, uint8, full
from .._ops import stack

__all__ = ["make_grid", "save_image"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """A batch [B, C, H, W] (or a list of [C, H, W] images) as one image [3 or C, rows, cols]:
    nrow images a row, padding pixels of pad_value between them; normalize scales each
    image (scale_each) or the batch to [0, 1] from value_range or its own min and max."""
    if isinstance(tensor, (list, tuple)):
        tensor = stack(list(tensor), dim=0)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:                                   # a single image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:                                   # a single image C x H x W
        if tensor.size(0) == 1:
            tensor = tensor.repeat(3, 1, 1)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:          # grayscale batch: 3 channels, as torchvision
        tensor = tensor.repeat(1, 3, 1, 1)
    if tensor.dim() != 4:
        raise ValueError(f"make_grid: expected a 2-, 3- or 4-d tensor, got {tensor.dim()} dimensions")
    if normalize:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t):
            if value_range is not None:
                norm_ip(t, value_range[0], value_range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each:
            for t in tensor:
                norm_range(t)
        else:
            norm_range(tensor)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value, dtype=tensor.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def _png(pixels):
    """pixels: uint8 [H, W, C] with C 1 or 3 -> the bytes of an 8-bit PNG file."""
    h, w, c = pixels.shape
    raw = pixels.contiguous().numpy().tobytes()
    rows = b"".join(b"\x00" + raw[r * w * c:(r + 1) * w * c] for r in range(h))   # filter 0 each row

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", w, h, 8, 0 if c == 1 else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows, 6))
            + chunk(b"IEND", b""))


def save_image(tensor, fp, format=None, **kwargs):
    """make_grid(tensor, **kwargs) written to fp (a path or a binary file) as PNG, each value
    v as the byte round(255 * v) clamped to 0..255, as torchvision's."""
    fmt = (format or (str(fp) if isinstance(fp, str) or hasattr(fp, "__fspath__") else "png").rsplit(".", 1)[-1]).lower()
    if fmt != "png":
        raise ValueError(f"save_image: only PNG is written here (no PIL), not {fmt!r}")
    grid = make_grid(tensor, **kwargs)
    pixels = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(uint8)
    data = _png(pixels)
    if isinstance(fp, (str, bytes)) or hasattr(fp, "__fspath__"):
        with open(fp, "wb") as f:
            f.write(data)
    else:
        fp.write(data)
