"""tensor.vision.io: torchvision.io's image reading for PNG files (``read_image``,
``decode_image``, ``decode_png``, ``read_file``, ``ImageReadMode``): a uint8 tensor C x H x W,
as torchvision gives. PNG is decoded here (zlib and the five row filters; 8-bit grayscale,
RGB, palette, with or without alpha; not interlaced); other formats (JPEG, ...) and 16-bit
PNGs raise a RuntimeError naming what is not supported, where torchvision would decode them.
"""
import enum
import struct
import zlib

import numpy as np

from .. import from_numpy

__all__ = ["ImageReadMode", "read_file", "read_image", "decode_image", "decode_png"]

_PNG = b"\x89PNG\r\n\x1a\n"


class ImageReadMode(enum.Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4


def read_file(path):
    """The file's bytes as a 1-d uint8 tensor."""
    with open(path, "rb") as f:
        return from_numpy(np.frombuffer(f.read(), np.uint8).copy())


def _unfilter(raw, h, stride, bpp):
    """The image rows from the decompressed stream (each row: its filter type, then bytes)."""
    rows = np.frombuffer(raw, np.uint8)
    if rows.size != h * (stride + 1):
        raise RuntimeError(f"decode_png: the image data holds {rows.size} bytes, expected {h * (stride + 1)}")
    rows = rows.reshape(h, stride + 1)
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 2:                          # Up
            cur = (line + prev) & 255
        elif kind in (1, 3, 4):                  # Sub, Average, Paeth: each byte needs the decoded one bpp before
            cur = line.copy()
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                if kind == 1:
                    p = a
                elif kind == 3:
                    p = (a + prev[x]) >> 1
                else:
                    b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else b if pb <= pc else c
                cur[x] = (cur[x] + p) & 255
        else:
            raise RuntimeError(f"decode_png: unknown row filter {kind}")
        out[y] = cur
        prev = cur
    return out


def decode_png(input, mode=ImageReadMode.UNCHANGED):
    """A PNG file's bytes (a uint8 tensor) -> uint8 tensor C x H x W."""
    data = bytes(input.numpy().tobytes()) if hasattr(input, "numpy") else bytes(input)
    if data[:8] != _PNG:
        raise RuntimeError("decode_png: not a PNG file (its signature is missing)")
    pos, idat, head, palette, trns = 8, [], None, None, None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            trns = np.frombuffer(body, np.uint8)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    if head is None:
        raise RuntimeError("decode_png: the file has no IHDR chunk")
    w, h, depth, color, _, _, interlace = head
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color)
    if channels is None:
        raise RuntimeError(f"decode_png: unknown color type {color}")
    if depth != 8:
        raise RuntimeError(f"decode_png: {depth}-bit PNGs are not supported here (8-bit only)")
    if interlace:
        raise RuntimeError("decode_png: interlaced PNGs are not supported here")
    px = _unfilter(zlib.decompress(b"".join(idat)), h, w * channels, channels).reshape(h, w, channels)
    if color == 3:                               # palette: indices -> RGB (and alpha from tRNS)
        if palette is None:
            raise RuntimeError("decode_png: a palette image without a PLTE chunk")
        idx = px[..., 0]
        rgb = palette[idx]
        if trns is not None:
            alpha = np.full(len(palette), 255, np.uint8)
            alpha[:len(trns)] = trns[:len(palette)]
            px = np.concatenate([rgb, alpha[idx][..., None]], axis=2)
        else:
            px = rgb
    return from_numpy(np.ascontiguousarray(_convert(px, mode).transpose(2, 0, 1)))


def _convert(px, mode):
    """H x W x C pixels in the channels mode asks for (torchvision's conversions)."""
    mode = ImageReadMode(mode) if not isinstance(mode, ImageReadMode) else mode
    c = px.shape[2]
    if mode == ImageReadMode.UNCHANGED:
        return px
    want = {ImageReadMode.GRAY: 1, ImageReadMode.GRAY_ALPHA: 2, ImageReadMode.RGB: 3, ImageReadMode.RGB_ALPHA: 4}[mode]
    color, alpha = (px[..., :3], px[..., 3:]) if c >= 3 else (px[..., :1], px[..., 1:])
    if want in (1, 2) and color.shape[2] == 3:   # libpng's rgb_to_gray (torchvision's): its default coefficients
        c32 = color.astype(np.int64)
        color = ((6968 * c32[..., :1] + 23434 * c32[..., 1:2] + 2366 * c32[..., 2:3] + 16384) >> 15).astype(np.uint8)
    if want in (3, 4) and color.shape[2] == 1:
        color = np.repeat(color, 3, axis=2)
    if want in (2, 4):
        alpha = alpha if alpha.shape[2] else np.full(color.shape[:2] + (1,), 255, np.uint8)
        return np.concatenate([color, alpha], axis=2)
    return color


def decode_image(input, mode=ImageReadMode.UNCHANGED):
    """An image file's bytes -> uint8 tensor C x H x W (PNG; other formats raise)."""
    if isinstance(input, str):
        input = read_file(input)
    head = bytes(input[:8].numpy().tobytes()) if input.numel() else b""
    if head == _PNG:
        return decode_png(input, mode)
    what = "JPEG" if head[:3] == b"\xff\xd8\xff" else "this format"
    raise RuntimeError(f"decode_image: decoding {what} is not supported here (tensor.vision.io decodes PNG only)")


def read_image(path, mode=ImageReadMode.UNCHANGED):
    """torchvision.io.read_image: the image at path as a uint8 tensor C x H x W."""
    return decode_image(read_file(path), mode)
