#!/usr/bin/python3
"""Writes tests/fixtures/encode/images/: source images and Pillow 9.4 / HF / torchvision outputs.

Run with Debian's /usr/bin/python3 (Pillow 9.4 and numpy):

    /usr/bin/python3 tools/make_image_fixtures.py

Everything is deterministic. Expected values come from Pillow itself:
  - decode: Image.open(f).convert("RGB").tobytes() for every source file and for mutated copies
    (truncated at several points, flipped bytes, broken CRCs), or "error" where Pillow raises;
  - resize: Image.resize((w, h), Image.BICUBIC) of synthetic images (the same generator is
    written in C++ in tests/encode/image_test_util.h, so sources are not stored);
  - crop: HF image_transforms.center_crop and torchvision F.center_crop, re-implemented below
    line for line in numpy/PIL (transformers and torchvision are not installed here);
  - preprocess: HF CLIPImageProcessor (PIL resize, floor crop, float64 rescale -> float32,
    float32 normalize) and open_clip/torchvision (round crop, ToTensor, Normalize).
Small outputs are stored raw (.rgb, .npy); large ones as SHA-256 of the bytes.
"""
import hashlib
import io
import json
import math
import struct
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import PIL
from PIL import Image

assert PIL.__version__.startswith("9.4"), f"expected Pillow 9.4, got {PIL.__version__}"
warnings.simplefilter("ignore")

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "encode" / "images"
OPENAI_MEAN = [0.48145466, 0.4578275, 0.40821073]
OPENAI_STD = [0.26862954, 0.26130258, 0.27577711]
RAW_LIMIT = 6000  # outputs larger than this many bytes are stored as SHA-256 only

manifest = {"decode": [], "variants": [], "resize": [], "crop": [], "preprocess": []}


def sha(b):
    return hashlib.sha256(b).hexdigest()


# ---------------------------------------------------------------------------------------------
# Synthetic images (mirrored in C++: tests/encode/image_test_util.h synthetic_image)
M32 = 0xFFFFFFFF


def synthetic(w, h, seed, channels=3):
    """uint8 (h, w, channels): hashed noise in a third of the 8x8 blocks, ramps elsewhere."""
    y, x, c = np.meshgrid(np.arange(h, dtype=np.uint64), np.arange(w, dtype=np.uint64),
                          np.arange(channels, dtype=np.uint64), indexing="ij")
    v = ((x * 0x9E3779B1) ^ (y * 0x85EBCA77) ^ (c * 0xC2B2AE3D) ^ np.uint64(seed)) & M32
    v ^= v >> 15
    v = (v * 0x2C1B3C6D) & M32
    v ^= v >> 12
    v = (v * 0x297A2D39) & M32
    v ^= v >> 15
    noise = v >> 24
    block = ((x >> 3) + (y >> 3) + c) % 3
    ramp = (x * 3 + y * 2 + c * 40) & 255
    return np.where(block == 0, noise, ramp).astype(np.uint8)


def smooth(w, h, seed, channels=3):
    """A photo-like image (compresses well as JPEG): blurred synthetic()."""
    a = synthetic(w + 4, h + 4, seed, channels).astype(np.float64)
    k = np.array([1, 4, 6, 4, 1], dtype=np.float64) / 16
    a = sum(k[i] * a[:, i:i + w] for i in range(5))
    a = sum(k[i] * a[i:i + h] for i in range(5))
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# A small PNG writer: Pillow cannot write interlaced, 16-bit RGB(A)/LA or 2/4-bit grey PNGs.
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]  # (x0, y0, dx, dy)
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & M32)


def pack_row(samples, depth):
    """samples: 1-D array of ints for one row (all channels interleaved)."""
    if depth == 16:
        return b"".join(struct.pack(">H", int(s)) for s in samples)
    if depth == 8:
        return bytes(int(s) for s in samples)
    per = 8 // depth
    out = bytearray()
    for i in range(0, len(samples), per):
        byte = 0
        for j in range(per):
            s = int(samples[i + j]) if i + j < len(samples) else 0
            byte |= s << (8 - depth * (j + 1))
        out.append(byte)
    return bytes(out)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_row(kind, row, prev, bpp):
    out = bytearray([kind])
    for i, v in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]
        out.append((v - pred) & 255)
    return bytes(out)


def png_bytes(samples, depth, color, interlace=False, plte=None, trns=None, before_idat=(),
              idat_split=1, after_idat=()):
    """samples: (h, w, channels) integer array. Rows cycle through filters 0..4."""
    h, w, ch = samples.shape
    bpp = max(1, ch * depth // 8)
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    raw = bytearray()
    n = 0
    for x0, y0, dx, dy in passes:
        sub = samples[y0::dy, x0::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue
        prev = None
        for r in sub:
            row = pack_row(r.reshape(-1), depth)
            prev = prev or bytes(len(row))
            raw += filter_row(n % 5, row, prev, bpp)
            prev = row
            n += 1
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 1 if interlace else 0)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    for c in before_idat:
        out += c
    if plte is not None:
        out += chunk(b"PLTE", bytes(plte))
    if trns is not None:
        out += chunk(b"tRNS", bytes(trns))
    z = zlib.compress(bytes(raw), 9)
    cuts = [len(z) * i // idat_split for i in range(idat_split + 1)]
    for i in range(idat_split):
        out += chunk(b"IDAT", z[cuts[i]:cuts[i + 1]])
    for c in after_idat:
        out += c
    return out + chunk(b"IEND", b"")


# ---------------------------------------------------------------------------------------------
def pillow_rgb(data):
    """Image.open(...).convert("RGB") bytes, or None where Pillow raises."""
    try:
        im = Image.open(io.BytesIO(data))
        rgb = im.convert("RGB")
        return rgb.size, rgb.tobytes()
    except Exception:  # noqa: BLE001 - any Pillow failure is an expected decode error
        return None


def add_decode(name, data, note):
    path = OUT / name
    path.write_bytes(data)
    result = pillow_rgb(data)
    assert result is not None, f"Pillow cannot read {name}"
    (w, h), rgb = result
    stem = name.rsplit(".", 1)[0]
    (OUT / f"{stem}.rgb").write_bytes(rgb)
    manifest["decode"].append({"file": name, "width": w, "height": h, "expected": f"{stem}.rgb",
                               "note": note})
    return data


def add_variant(base, data, mutated, note, **how):
    result = pillow_rgb(mutated)
    entry = {"file": base, "note": note, **how}
    if result is None:
        entry["expect"] = "error"
    else:
        (w, h), rgb = result
        entry.update(expect="ok", width=w, height=h, sha256=sha(rgb))
    manifest["variants"].append(entry)


def jpeg(im, **kw):
    b = io.BytesIO()
    im.save(b, "JPEG", **kw)
    return b.getvalue()


def jpeg_segments(data):
    """(marker, start, end) of each marker segment before SOS."""
    pos, out = 2, []
    while pos < len(data):
        marker = data[pos + 1]
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        out.append((marker, pos, pos + 2 + length))
        if marker == 0xDA:
            break
        pos += 2 + length
    return out


def make_decode_fixtures():
    rgb37 = Image.fromarray(smooth(37, 29, 1))
    rgb23 = Image.fromarray(smooth(23, 17, 2))
    grey37 = Image.fromarray(smooth(37, 29, 3, 1)[:, :, 0], "L")

    j420 = add_decode("jpg_420.jpg", jpeg(rgb37, quality=90), "YCbCr 4:2:0, odd size")
    add_decode("jpg_444.jpg", jpeg(rgb23, quality=95, subsampling=0), "YCbCr 4:4:4")
    add_decode("jpg_422.jpg", jpeg(rgb23, quality=75, subsampling=1), "YCbCr 4:2:2")
    add_decode("jpg_grey.jpg", jpeg(grey37, quality=90), "greyscale, L -> RGB")
    prog = add_decode("jpg_progressive.jpg", jpeg(rgb37, quality=85, progressive=True),
                      "progressive 4:2:0")
    add_decode("jpg_optimized.jpg", jpeg(rgb23, quality=80, optimize=True), "optimized Huffman")
    add_decode("jpg_1x1.jpg", jpeg(Image.new("RGB", (1, 1), (200, 30, 90))), "1 x 1")
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90; must not be applied
    add_decode("jpg_exif_orientation.jpg", jpeg(rgb23, quality=90, exif=exif.tobytes()),
               "EXIF orientation 6, not applied")

    cmyk_src = Image.frombytes("CMYK", (23, 17), smooth(23, 17, 4, 4).tobytes())
    cmyk = add_decode("jpg_cmyk_adobe.jpg", jpeg(cmyk_src, quality=90),
                      "CMYK with Adobe APP14 (transform 0), CMYK;I + cmyk2rgb")
    segments = jpeg_segments(cmyk)
    adobe = [s for s in segments if s[0] == 0xEE]
    assert adobe, "Pillow's CMYK JPEG has no Adobe marker"
    _, start, end = adobe[0]
    add_decode("jpg_cmyk_noadobe.jpg", cmyk[:start] + cmyk[end:],
               "CMYK without Adobe marker: still CMYK;I in Pillow 9.4")
    ycck = bytearray(cmyk)
    assert ycck[start + 4:start + 9] == b"Adobe"
    ycck[start + 15] = 2  # Adobe transform byte: 2 = YCCK
    add_decode("jpg_ycck.jpg", bytes(ycck), "Adobe transform 2 (YCCK -> CMYK by libjpeg)")

    # Mutations of JPEGs: truncations, corrupt entropy data, absurd dimensions.
    for base, data in (("jpg_420.jpg", j420), ("jpg_progressive.jpg", prog)):
        n = len(data)
        for cut in sorted({2, 3, 4, 20, 150, n // 3, n // 2, n - 100, n - 10, n - 3, n - 2,
                           n - 1}):
            add_variant(base, data, data[:cut], f"truncated to {cut} of {n} bytes", cut=cut)
    sos_end = jpeg_segments(j420)[-1][2]
    flips = [[sos_end + 40, 0x5A], [sos_end + 200, 0xFF], [sos_end + 201, 0x00]]
    mutated = bytearray(j420)
    for off, val in flips:
        mutated[off] ^= val
    add_variant("jpg_420.jpg", j420, bytes(mutated), "corrupt entropy data (warnings only)",
                xor=flips)
    sof = [s for s in jpeg_segments(j420) if s[0] == 0xC0][0]
    bomb = bytearray(j420)
    bomb[sof[1] + 5:sof[1] + 9] = struct.pack(">HH", 65000, 65000)
    flips = [[sof[1] + 5 + i, bomb[sof[1] + 5 + i] ^ j420[sof[1] + 5 + i]] for i in range(4)]
    add_variant("jpg_420.jpg", j420, bytes(bomb), "SOF claims 65000 x 65000 (bomb)", xor=flips)
    garbage = j420 + b"trailing garbage after EOI"
    add_variant("jpg_420.jpg", j420, garbage, "trailing bytes after EOI",
                append=list(b"trailing garbage after EOI"))

    # PNGs.
    w, h = 23, 17
    rgb = smooth(w, h, 5)
    noise = synthetic(w, h, 6, 4)
    rgb8 = add_decode("png_rgb8.png", png_bytes(rgb, 8, 2), "RGB 8-bit, filters 0-4")
    add_decode("png_rgba8.png", png_bytes(noise, 8, 6), "RGBA 8-bit: alpha dropped")
    add_decode("png_la8.png", png_bytes(noise[:, :, :2], 8, 4), "LA 8-bit: grey replicated")
    add_decode("png_l8.png", png_bytes(noise[:, :, :1], 8, 0), "L 8-bit")
    add_decode("png_l1.png", png_bytes(noise[:, :, :1] >> 7, 1, 0), "1-bit grey: 0/255")
    add_decode("png_l2.png", png_bytes(noise[:, :, :1] >> 6, 2, 0), "2-bit grey: x 0x55")
    add_decode("png_l4.png", png_bytes(noise[:, :, :1] >> 4, 4, 0), "4-bit grey: x 0x11")
    g16 = (synthetic(w, h, 7, 1).astype(np.int64) * 257) >> np.arange(w)[None, :, None] % 9
    add_decode("png_l16.png", png_bytes(g16, 16, 0), "16-bit grey: mode I clipped to 255")
    n16 = synthetic(w, h, 8, 4).astype(np.int64) * 256 + synthetic(w, h, 9, 4)
    add_decode("png_rgb16.png", png_bytes(n16[:, :, :3], 16, 2), "16-bit RGB: high bytes")
    add_decode("png_rgba16.png", png_bytes(n16, 16, 6), "16-bit RGBA: high bytes")
    add_decode("png_la16.png", png_bytes(n16[:, :, :2], 16, 4), "16-bit LA: high byte")
    pal = synthetic(256, 1, 10)[0].reshape(-1)
    idx = synthetic(w, h, 11, 1)
    add_decode("png_p8.png", png_bytes(idx, 8, 3, plte=pal), "palette 8-bit")
    add_decode("png_p8_trns.png", png_bytes(idx, 8, 3, plte=pal, trns=bytes(range(0, 256, 3))),
               "palette with tRNS (ignored)")
    add_decode("png_p4_short_plte.png", png_bytes(idx >> 4, 4, 3, plte=pal[:15]),
               "4-bit palette with 5 PLTE entries: later indices read (i, i, i)")
    add_decode("png_p2.png", png_bytes(idx >> 6, 2, 3, plte=pal[:12]), "2-bit palette")
    add_decode("png_p1.png", png_bytes(idx >> 7, 1, 3, plte=pal[:6]), "1-bit palette")
    add_decode("png_l8_trns.png", png_bytes(noise[:, :, :1], 8, 0, trns=b"\x00\x10"),
               "grey with tRNS (ignored)")
    add_decode("png_rgb8_trns.png", png_bytes(rgb, 8, 2, trns=b"\x00\x10\x00\x20\x00\x30"),
               "RGB with tRNS (ignored)")
    rgbi = add_decode("png_rgb8_interlaced.png", png_bytes(rgb, 8, 2, interlace=True),
                      "Adam7 RGB, odd size")
    add_decode("png_l1_interlaced.png", png_bytes(noise[:13, :11, :1] >> 7, 1, 0, True),
               "Adam7 1-bit grey")
    add_decode("png_rgba16_interlaced.png", png_bytes(n16, 16, 6, interlace=True),
               "Adam7 16-bit RGBA")
    add_decode("png_p4_interlaced.png", png_bytes(idx >> 4, 4, 3, True, plte=pal[:48]),
               "Adam7 4-bit palette")
    add_decode("png_tiny_interlaced.png", png_bytes(noise[:2, :3], 8, 6, interlace=True),
               "Adam7 3 x 2 (empty passes)")
    add_decode("png_1x1.png", png_bytes(noise[:1, :1, :3], 8, 2), "1 x 1")
    add_decode("png_wide.png", png_bytes(synthetic(100, 1, 12), 8, 2), "100 x 1")
    text = chunk(b"tEXt", b"Comment\x00hello") + chunk(b"gAMA", struct.pack(">I", 45455))
    add_decode("png_chunks_split_idat.png",
               png_bytes(rgb, 8, 2, before_idat=[text], idat_split=4,
                         after_idat=[chunk(b"tEXt", b"After\x00idat")]),
               "ancillary chunks, IDAT split in 4")

    for base, data in (("png_rgb8.png", rgb8), ("png_rgb8_interlaced.png", rgbi)):
        n = len(data)
        for cut in sorted({7, 8, 20, 33, 41, 60, n // 2, n - 30, n - 20, n - 16, n - 12, n - 1}):
            add_variant(base, data, data[:cut], f"truncated to {cut} of {n} bytes", cut=cut)
    idat = rgb8.index(b"IDAT")
    length = struct.unpack(">I", rgb8[idat - 4:idat])[0]
    crc_at = idat + 4 + length
    add_variant("png_rgb8.png", rgb8, rgb8[:crc_at] + bytes(b ^ 0xFF for b in rgb8[crc_at:crc_at + 4])
                + rgb8[crc_at + 4:], "bad IDAT CRC (Pillow does not check it)",
                xor=[[crc_at + i, 0xFF] for i in range(4)])
    add_variant("png_rgb8.png", rgb8, rgb8[:29] + bytes([rgb8[29] ^ 1]) + rgb8[30:],
                "bad IHDR CRC", xor=[[29, 1]])
    zbad = bytearray(rgb8)
    zbad[idat + 4 + 2] ^= 0xFF  # first deflate block header
    add_variant("png_rgb8.png", rgb8, bytes(zbad), "corrupt zlib data",
                xor=[[idat + 4 + 2, 0xFF]])
    add_variant("png_rgb8.png", rgb8, rgb8 + b"garbage after IEND", "trailing garbage",
                append=list(b"garbage after IEND"))

    bomb = png_bytes(noise[:1, :1, :3], 8, 2)
    ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
    bomb = bomb[:8] + chunk(b"IHDR", ihdr) + bomb[33:]
    (OUT / "png_bomb_100000.png").write_bytes(bomb)
    assert pillow_rgb(bomb) is None
    manifest["bad_files"] = [{"file": "png_bomb_100000.png",
                              "note": "IHDR claims 100000 x 100000 (valid CRC)"}]
    badfilter = png_bytes(rgb[:2, :2], 8, 2)
    zpos = badfilter.index(b"IDAT") + 4
    zlen = struct.unpack(">I", badfilter[zpos - 8:zpos - 4])[0]
    rows = bytearray(zlib.decompress(badfilter[zpos:zpos + zlen]))
    rows[0] = 9  # filter type 9 does not exist
    z = zlib.compress(bytes(rows))
    badfilter = badfilter[:zpos - 8] + chunk(b"IDAT", z) + chunk(b"IEND", b"")
    (OUT / "png_bad_filter.png").write_bytes(badfilter)
    assert pillow_rgb(badfilter) is None
    manifest["bad_files"].append({"file": "png_bad_filter.png", "note": "row filter type 9"})


# ---------------------------------------------------------------------------------------------
def store_u8(name, data):
    if len(data) <= RAW_LIMIT:
        (OUT / name).write_bytes(data)
        return {"expected": name}
    return {"sha256": sha(data)}


def make_resize_fixtures():
    cases = [
        ((61, 47), [(97, 83), (13, 11), (53, 41), (61, 20), (30, 47), (120, 9), (1, 1), (1, 50),
                    (60, 46), (62, 48), (224, 224)]),
        ((1, 1), [(5, 3)]),
        ((1, 40), [(1, 7), (3, 40)]),
        ((7, 1), [(30, 1), (2, 1)]),
        ((3, 1), [(1, 3)]),
        ((2, 2), [(224, 224)]),
        ((255, 3), [(7, 200)]),
        ((640, 480), [(298, 224)]),
        ((1000, 700), [(13, 9), (997, 701)]),
        ((300, 200), [(224, 149), (336, 224)]),
    ]
    for (w, h), targets in cases:
        seed = w * 1000 + h
        src = Image.fromarray(synthetic(w, h, seed))
        for tw, th in targets:
            out = src.resize((tw, th), Image.BICUBIC).tobytes()
            entry = {"src_width": w, "src_height": h, "seed": seed, "width": tw, "height": th}
            entry.update(store_u8(f"resize_{w}x{h}_to_{tw}x{th}.rgb", out))
            manifest["resize"].append(entry)


def hf_center_crop(image, size):
    """transformers image_transforms.center_crop for a channels-last numpy image."""
    orig_height, orig_width = image.shape[:2]
    crop_height, crop_width = size
    top = (orig_height - crop_height) // 2
    bottom = top + crop_height
    left = (orig_width - crop_width) // 2
    right = left + crop_width
    if top >= 0 and bottom <= orig_height and left >= 0 and right <= orig_width:
        return image[top:bottom, left:right]
    new_height = max(crop_height, orig_height)
    new_width = max(crop_width, orig_width)
    new_image = np.zeros_like(image, shape=(new_height, new_width) + image.shape[2:])
    top_pad = math.ceil((new_height - orig_height) / 2)
    bottom_pad = top_pad + orig_height
    left_pad = math.ceil((new_width - orig_width) / 2)
    right_pad = left_pad + orig_width
    new_image[top_pad:bottom_pad, left_pad:right_pad] = image
    top += top_pad
    bottom += top_pad
    left += left_pad
    right += left_pad
    return new_image[max(0, top):min(new_height, bottom), max(0, left):min(new_width, right)]


def tv_center_crop(img, size):
    """torchvision.transforms.functional.center_crop for a PIL image."""
    crop_height, crop_width = size
    image_width, image_height = img.size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        padded = Image.new(img.mode, (image_width + padding_ltrb[0] + padding_ltrb[2],
                                      image_height + padding_ltrb[1] + padding_ltrb[3]), 0)
        padded.paste(img, (padding_ltrb[0], padding_ltrb[1]))
        img = padded
        image_width, image_height = img.size
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return img.crop((crop_left, crop_top, crop_left + crop_width, crop_top + crop_height))


def make_crop_fixtures():
    cases = [((10, 7), (4, 4)), ((11, 8), (4, 4)), ((9, 9), (4, 6)), ((13, 12), (6, 5)),
             ((5, 3), (8, 8)), ((5, 12), (8, 8)), ((13, 6), (8, 8)), ((6, 6), (6, 6)),
             ((4, 4), (7, 9)), ((16, 3), (9, 8))]
    for (w, h), (cw, ch) in cases:
        seed = 7 * w + h
        arr = synthetic(w, h, seed)
        hf = hf_center_crop(arr, (ch, cw))
        tv = np.asarray(tv_center_crop(Image.fromarray(arr), (ch, cw)))
        assert hf.shape == (ch, cw, 3) and tv.shape == (ch, cw, 3)
        for rounding, out in (("floor", hf), ("round", tv)):
            entry = {"src_width": w, "src_height": h, "seed": seed, "width": cw, "height": ch,
                     "rounding": rounding}
            entry.update(store_u8(f"crop_{w}x{h}_to_{cw}x{ch}_{rounding}.rgb",
                                  np.ascontiguousarray(out).tobytes()))
            manifest["crop"].append(entry)


def shortest_edge(w, h, size):
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size, int(size * long / short)
    return (new_short, new_long) if w <= h else (new_long, new_short)


def hf_pixels(arr, p):
    """CLIPImageProcessor.preprocess for one channels-last uint8 image -> CHW."""
    if p["do_resize"]:
        w, h = shortest_edge(arr.shape[1], arr.shape[0], p["shortest_edge"])
        arr = np.array(Image.fromarray(arr).resize((w, h), resample=Image.BICUBIC,
                                                   reducing_gap=None))
    if p["do_center_crop"]:
        arr = hf_center_crop(arr, (p["crop_height"], p["crop_width"]))
    if p["do_rescale"]:
        arr = (arr.astype(np.float64) * p["rescale_factor"]).astype(np.float32)
    if p["do_normalize"]:
        if not np.issubdtype(arr.dtype, np.floating):
            arr = arr.astype(np.float32)
        arr = (arr - np.array(p["mean"], dtype=arr.dtype)) / np.array(p["std"], dtype=arr.dtype)
    return np.ascontiguousarray(arr.astype(np.float32).transpose(2, 0, 1)), None


def tv_pixels(arr, p):
    """open_clip: Resize(n, BICUBIC), CenterCrop(n), ToTensor, Normalize -> CHW."""
    img = Image.fromarray(arr)
    w, h = shortest_edge(img.size[0], img.size[1], p["shortest_edge"])
    img = img.resize((w, h), Image.BICUBIC)
    img = tv_center_crop(img, (p["crop_height"], p["crop_width"]))
    t = np.asarray(img).astype(np.float32) / np.float32(255)
    t = (t - np.array(p["mean"], dtype=np.float32)) / np.array(p["std"], dtype=np.float32)
    return np.ascontiguousarray(t.transpose(2, 0, 1)), np.asarray(img)


def make_preprocess_fixtures():
    base = {"do_resize": True, "do_center_crop": True, "do_rescale": True,
            "rescale_factor": 1 / 255, "do_normalize": True, "mean": OPENAI_MEAN,
            "std": OPENAI_STD}
    cases = [
        ("landscape", (61, 47), dict(shortest_edge=32, crop_width=28, crop_height=28)),
        ("portrait", (47, 61), dict(shortest_edge=32, crop_width=30, crop_height=26)),
        ("pad", (20, 15), dict(shortest_edge=24, crop_width=28, crop_height=28)),
        ("odd", (33, 50), dict(shortest_edge=21, crop_width=20, crop_height=20)),
        ("no_rescale", (40, 30), dict(shortest_edge=16, crop_width=16, crop_height=16,
                                      do_rescale=False, mean=[120.0, 110.5, 100.25],
                                      std=[60.0, 61.0, 62.5])),
        ("no_normalize", (30, 40), dict(shortest_edge=16, crop_width=16, crop_height=16,
                                        do_normalize=False, rescale_factor=0.5)),
        ("no_resize", (30, 20), dict(do_resize=False, shortest_edge=16, crop_width=16,
                                     crop_height=16, mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])),
        ("openai_224", (300, 200), dict(shortest_edge=224, crop_width=224, crop_height=224)),
    ]
    for name, (w, h), over in cases:
        p = dict(base, **over)
        seed = 31 * w + h
        arr = synthetic(w, h, seed)
        for flavour, fn in (("hf", hf_pixels), ("torchvision", tv_pixels)):
            if flavour == "torchvision" and (not p["do_resize"] or not p["do_rescale"]
                                             or not p["do_normalize"]
                                             or p["rescale_factor"] != 1 / 255):
                continue
            out, _ = fn(arr, p)
            entry = {"name": f"{name}_{flavour}", "src_width": w, "src_height": h, "seed": seed,
                     "rounding": "floor" if flavour == "hf" else "round", **p}
            if out.nbytes <= 4 * RAW_LIMIT:
                np.save(OUT / f"pre_{name}_{flavour}.npy", out)
                entry["expected"] = f"pre_{name}_{flavour}.npy"
            else:
                entry["sha256"] = sha(out.tobytes())
            manifest["preprocess"].append(entry)
    # The two flavours agree exactly for rescale 1/255 (checked here, relied on in the docs).
    for v in range(256):
        assert np.float32(np.float64(v) * (1 / 255)) == np.float32(v) / np.float32(255)

    # A decoded fixture file through the full HF pipeline.
    data = (OUT / "jpg_420.jpg").read_bytes()
    arr = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    p = dict(base, shortest_edge=20, crop_width=20, crop_height=20)
    out, _ = hf_pixels(arr, p)
    np.save(OUT / "pre_jpg_420_hf.npy", out)
    manifest["preprocess"].append({"name": "jpg_420_hf", "file": "jpg_420.jpg",
                                   "rounding": "floor", "expected": "pre_jpg_420_hf.npy", **p})


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for f in OUT.iterdir():
        f.unlink()
    make_decode_fixtures()
    make_resize_fixtures()
    make_crop_fixtures()
    make_preprocess_fixtures()
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(f.stat().st_size for f in OUT.iterdir())
    print(f"wrote {len(list(OUT.iterdir()))} files, {total} bytes, to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
