"""tensor.vision.io (torchvision.io's read_image; the basics tutorial's data_tutorial.py
imports it): PNG decoding against PIL's (when installed) for every colour type and all
five row filters, the read modes, and clear errors for what is not decoded here."""
import io as pyio
import os
import struct
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as tn  # noqa: E402
from tensor.vision import io as tio  # noqa: E402
from tensor.vision.io import ImageReadMode  # noqa: E402

try:
    from PIL import Image
except ImportError:
    Image = None


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_bytes(px, color, filters, palette=None, trns=None):
    """An 8-bit PNG of px (H x W x C) written here with the given row filter per row."""
    h, w, c = px.shape
    raw = px.reshape(h, w * c).astype(np.int32)
    out = bytearray()
    prev = np.zeros(w * c, np.int32)
    for y in range(h):
        f, cur = filters[y % len(filters)], raw[y]
        left = np.concatenate([np.zeros(c, np.int32), cur[:-c]])
        upleft = np.concatenate([np.zeros(c, np.int32), prev[:-c]])
        if f == 0:
            enc = cur
        elif f == 1:
            enc = cur - left
        elif f == 2:
            enc = cur - prev
        elif f == 3:
            enc = cur - ((left + prev) >> 1)
        else:
            pa, pb, pc = np.abs(prev - upleft), np.abs(left - upleft), np.abs(left + prev - 2 * upleft)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
            enc = cur - pred
        out += bytes([f]) + (enc & 255).astype(np.uint8).tobytes()
        prev = cur
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
    if palette is not None:
        data += chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    if trns is not None:
        data += chunk(b"tRNS", trns.astype(np.uint8).tobytes())
    return data + chunk(b"IDAT", zlib.compress(bytes(out))) + chunk(b"IEND", b"")


@pytest.mark.parametrize("color,c", [(0, 1), (4, 2), (2, 3), (6, 4)])
def test_decode_every_filter_and_color_type(tmp_path, color, c):
    rng = np.random.RandomState(color)
    px = rng.randint(0, 256, (7, 9, c)).astype(np.uint8)
    p = tmp_path / "a.png"
    p.write_bytes(png_bytes(px, color, [0, 1, 2, 3, 4]))
    got = tio.read_image(str(p))
    assert got.dtype == tn.uint8 and got.shape == (c, 7, 9)
    np.testing.assert_array_equal(got.numpy(), px.transpose(2, 0, 1))
    if Image is not None:   # PIL reads the same file to the same pixels
        ref = np.asarray(Image.open(str(p)))
        np.testing.assert_array_equal(got.numpy(), (ref[..., None] if ref.ndim == 2 else ref).transpose(2, 0, 1))


def test_palette_with_transparency(tmp_path):
    palette = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [9, 8, 7]])
    idx = np.array([[0, 1, 2, 3], [3, 2, 1, 0]], np.uint8)[..., None]
    p = tmp_path / "p.png"
    p.write_bytes(png_bytes(idx, 3, [4, 1], palette=palette))
    np.testing.assert_array_equal(tio.read_image(str(p)).numpy(), palette[idx[..., 0]].transpose(2, 0, 1))
    p.write_bytes(png_bytes(idx, 3, [0], palette=palette, trns=np.array([0, 128])))
    got = tio.read_image(str(p)).numpy()
    assert got.shape == (4, 2, 4)
    np.testing.assert_array_equal(got[3], np.array([0, 128, 255, 255])[idx[..., 0]])
    if Image is not None:
        np.testing.assert_array_equal(got.transpose(1, 2, 0), np.asarray(Image.open(str(p)).convert("RGBA")))


def test_pil_written_pngs(tmp_path):
    """files another encoder wrote (PIL picks its own filters and zlib blocks)"""
    if Image is None:
        pytest.skip("PIL is not installed")
    rng = np.random.RandomState(3)
    for mode, shape in (("L", (13, 17)), ("RGB", (13, 17, 3)), ("RGBA", (5, 40, 4)), ("LA", (6, 6, 2))):
        a = (rng.rand(*shape) * 40 + np.arange(shape[1])[:, None][:shape[1]].reshape(
            (1, shape[1]) + (1,) * (len(shape) - 2)) * 5).astype(np.uint8)
        b = pyio.BytesIO()
        Image.fromarray(a, mode).save(b, format="PNG", optimize=True)
        p = tmp_path / f"{mode}.png"
        p.write_bytes(b.getvalue())
        want = a[..., None] if a.ndim == 2 else a
        np.testing.assert_array_equal(tio.read_image(str(p)).numpy(), want.transpose(2, 0, 1))
        np.testing.assert_array_equal(tio.decode_image(tio.read_file(str(p))).numpy(), want.transpose(2, 0, 1))


def test_read_modes(tmp_path):
    rgba = np.array([[[10, 200, 30, 40], [255, 255, 255, 0]]], np.uint8)
    p = tmp_path / "m.png"
    p.write_bytes(png_bytes(rgba, 6, [0]))
    assert tio.read_image(str(p), ImageReadMode.RGB).shape == (3, 1, 2)
    np.testing.assert_array_equal(tio.read_image(str(p), ImageReadMode.RGB).numpy(), rgba[..., :3].transpose(2, 0, 1))
    gray = tio.read_image(str(p), ImageReadMode.GRAY).numpy()
    # libpng's rgb_to_gray: (6968 R + 23434 G + 2366 B + 16384) >> 15
    assert gray.shape == (1, 1, 2) and gray[0, 0, 0] == (6968 * 10 + 23434 * 200 + 2366 * 30 + 16384) >> 15
    assert gray[0, 0, 1] == 255
    ga = tio.read_image(str(p), ImageReadMode.GRAY_ALPHA).numpy()
    np.testing.assert_array_equal(ga[1], rgba[..., 3])
    g = np.array([[[7], [9]]], np.uint8)
    p.write_bytes(png_bytes(g, 0, [0]))
    np.testing.assert_array_equal(tio.read_image(str(p), ImageReadMode.RGB_ALPHA).numpy()[:, 0, 1], [9, 9, 9, 255])
    assert ImageReadMode.RGBA is ImageReadMode.RGB_ALPHA


def test_errors(tmp_path):
    p = tmp_path / "x.jpg"
    p.write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 20)
    with pytest.raises(RuntimeError, match="JPEG is not supported here"):
        tio.read_image(str(p))
    p.write_bytes(b"GIF89a" + b"\0" * 10)
    with pytest.raises(RuntimeError, match="not supported"):
        tio.read_image(str(p))
    with pytest.raises(RuntimeError, match="not a PNG"):
        tio.decode_png(tn.zeros(10, dtype=tn.uint8))
    px = np.zeros((2, 2, 1), np.uint8)
    data = bytearray(png_bytes(px, 0, [0]))
    data[24] = 16                                # the bit depth in IHDR
    p.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="16-bit"):
        tio.read_image(str(p))
    with pytest.raises(FileNotFoundError):
        tio.read_image(str(tmp_path / "missing.png"))


def test_save_image_reads_back(tmp_path):
    """tensor.vision.utils.save_image's PNG, read back: the same bytes torchvision would give"""
    from tensor.vision.utils import save_image
    x = tn.from_numpy(np.random.RandomState(0).rand(3, 4, 5).astype(np.float32))
    save_image(x, str(tmp_path / "s.png"))
    got = tio.read_image(str(tmp_path / "s.png")).numpy()
    np.testing.assert_array_equal(got, np.clip(np.floor(x.numpy() * 255 + 0.5), 0, 255).astype(np.uint8))


def test_torchvision_import_path():
    import tensor.vision as tv
    assert tv.io.read_image is tio.read_image
