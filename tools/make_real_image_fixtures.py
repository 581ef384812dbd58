#!/usr/bin/python3
"""Real photographs and their Pillow 9.4 decodes: tests/data/images/real/ and
tests/fixtures/encode/real_images.json.

Run with Debian's /usr/bin/python3 (Pillow 9.4, numpy) after installing python3-skimage,
python3-sklearn and python3-matplotlib (the photographs come from those packages; see
tests/data/images/real/LICENSES.md):

    /usr/bin/python3 tools/make_real_image_fixtures.py

1. The originals are copied unchanged into tests/data/images/real/.
2. Small variants derived from them are written by Pillow itself into
   tests/data/images/real/derived/: progressive, 4:2:2, grey and CMYK JPEGs; palette PNGs
   (8-bit and 4-bit, with a tRNS index and with tRNS alphas), RGBA, LA, grey and RGB with a
   tRNS colour, 16-bit grey (Pillow mode "I;16"); JPEGs with EXIF orientations 1-8 in both
   byte orders; PNGs with an eXIf chunk and with XMP tiff:Orientation. Pillow cannot write
   16-bit RGB, RGBA and LA PNGs: those three are written by png_bytes() below (zlib + CRC).
   The hostile_* files carry hand-made EXIF blocks (truncated, wrong types, offsets past the
   end, two APP1 segments, ...) to pin down what Pillow does with each.
3. For every file the fixture records what Pillow gives for
     Image.open(f).convert("RGB")                        ("open")
     ImageOps.exif_transpose(Image.open(f)).convert("RGB") ("exif_transpose")
   as width, height, the SHA-256 of the RGB bytes and a few sample pixels, or the exception
   class name where Pillow raises. Tests read the JSON and never need Python.
"""
import hashlib
import json
import shutil
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import PIL
from PIL import Image, ImageOps, PngImagePlugin

assert PIL.__version__.startswith("9.4"), f"expected Pillow 9.4, got {PIL.__version__}"
warnings.simplefilter("ignore")

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "images" / "real"
DERIVED = REAL / "derived"
FIXTURE = ROOT / "tests" / "fixtures" / "encode" / "real_images.json"

SKIMAGE = Path("/usr/lib/python3/dist-packages/skimage/data")
SKLEARN = Path("/usr/lib/python3/dist-packages/sklearn/datasets/images")
MATPLOTLIB = Path("/usr/share/matplotlib/mpl-data/sample_data")
ORIGINALS = [
    SKIMAGE / "astronaut.png",
    SKIMAGE / "camera.png",
    SKIMAGE / "chelsea.png",
    SKIMAGE / "coffee.png",
    SKIMAGE / "rocket.jpg",
    SKLEARN / "china.jpg",
    SKLEARN / "flower.jpg",
    MATPLOTLIB / "grace_hopper.jpg",
]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def small(name, width):
    """An original, resized to `width` (aspect kept) with Pillow's bicubic filter."""
    im = Image.open(REAL / name)
    im.load()
    height = max(1, round(im.height * width / im.width))
    out = im.resize((width, height), Image.BICUBIC)
    out.info.pop("icc_profile", None)  # kept small; decoding ignores it
    return out


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(samples, color_type, bit_depth=16, extra_chunks=()):
    """A non-interlaced PNG of `samples` (h, w, channels) uint16/uint8 big-endian, filter 0."""
    h, w = samples.shape[:2]
    dtype = ">u2" if bit_depth == 16 else "u1"
    rows = samples.astype(dtype).reshape(h, -1).view(np.uint8).reshape(h, -1)
    raw = b"".join(b"\0" + rows[y].tobytes() for y in range(h))
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + b"".join(extra_chunks) +
            png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b""))


def tiff_ifd0(entries, little=True, next_offset=8, tail=b""):
    """A TIFF header and IFD0 of (tag, type, count, 4-byte value field) entries, then `tail`."""
    e = "<" if little else ">"
    head = (b"II*\0" if little else b"MM\0*") + struct.pack(e + "I", next_offset)
    ifd = struct.pack(e + "H", len(entries))
    for tag, typ, count, value in entries:
        ifd += struct.pack(e + "HHI", tag, typ, count) + value
    return head + ifd + struct.pack(e + "I", 0) + tail


def short_value(v, little=True):
    return struct.pack(("<" if little else ">") + "HH", v, 0)


def orientation_exif(v, little=True):
    exif = Image.Exif()
    exif.endian = "<" if little else ">"
    exif[0x0112] = v
    exif[0x0131] = "vlbias fixture"  # Software, so the IFD has more than one entry
    return exif


def save(im, name, **kw):
    path = DERIVED / name
    im.save(path, **kw)
    return path


def write_bytes(name, data):
    path = DERIVED / name
    path.write_bytes(data)
    return path


def jpeg_with_app1(base, app1_payloads):
    """`base` JPEG bytes with APP1 segments inserted right after SOI (before its JFIF APP0)."""
    segments = b"".join(b"\xff\xe1" + struct.pack(">H", len(p) + 2) + p for p in app1_payloads)
    return base[:2] + segments + base[2:]


def derive():
    DERIVED.mkdir(parents=True, exist_ok=True)
    for old in DERIVED.iterdir():
        old.unlink()
    rocket = small("rocket.jpg", 160)
    coffee = small("coffee.png", 150)
    camera = small("camera.png", 128)
    chelsea = small("chelsea.png", 120)
    astronaut = small("astronaut.png", 64)

    save(rocket, "progressive.jpg", quality=85, progressive=True)
    save(rocket, "subsampling_422.jpg", quality=90, subsampling=1)
    save(rocket, "subsampling_444.jpg", quality=90, subsampling=0)
    save(camera, "grey.jpg", quality=90)
    save(coffee.convert("CMYK"), "cmyk.jpg", quality=90)  # Pillow writes Adobe, inverted
    save(coffee.convert("CMYK"), "cmyk_progressive.jpg", quality=90, progressive=True)

    save(chelsea.quantize(64), "palette.png")
    save(chelsea.quantize(16), "palette_4bit.png", bits=4)
    save(chelsea.quantize(64), "palette_trns_index.png", transparency=3)
    save(chelsea.quantize(64), "palette_trns_alphas.png", transparency=bytes(range(0, 256, 8)))
    rgba = astronaut.copy()
    rgba.putalpha(Image.linear_gradient("L").resize(astronaut.size))
    save(rgba, "rgba.png")
    la = camera.convert("LA")
    la.putalpha(Image.linear_gradient("L").rotate(90).resize(camera.size))
    save(la, "grey_alpha.png")
    save(camera, "grey_trns.png", transparency=128)
    save(chelsea, "rgb_trns.png", transparency=(10, 20, 30))
    save(camera.convert("1"), "bilevel.png")

    # 16-bit grey: Pillow opens it as mode "I" and convert("RGB") clips at 255, so spread the
    # values over both sides of 255.
    grey16 = (np.asarray(camera, dtype=np.uint16) * 3).astype(np.uint16)
    save(Image.fromarray(grey16, "I;16"), "grey16.png")
    rgb16 = np.asarray(astronaut, dtype=np.uint16) * 257 + 0x35
    write_bytes("rgb16.png", png_bytes(rgb16, color_type=2))
    alpha16 = np.linspace(0, 65535, rgb16.shape[1], dtype=np.uint16)[None, :, None]
    alpha16 = np.broadcast_to(alpha16, rgb16.shape[:2] + (1,))
    write_bytes("rgba16.png", png_bytes(np.concatenate([rgb16, alpha16], axis=2), color_type=6))
    grey_la16 = np.asarray(camera, dtype=np.uint16)[:, :, None] * 250
    la16 = np.concatenate([grey_la16, np.full_like(grey_la16, 40000)], axis=2)
    write_bytes("grey_alpha16.png", png_bytes(la16, color_type=4))

    # EXIF orientation: a landscape crop, so every rotation changes the shape.
    cat = chelsea.crop((10, 5, 106, 69))  # 96 x 64
    for v in range(1, 9):
        save(cat, f"exif_orientation_{v}.jpg", quality=90, exif=orientation_exif(v))
    for v in (3, 6, 7):
        save(cat, f"exif_orientation_{v}_big_endian.jpg", quality=90,
             exif=orientation_exif(v, little=False))
    save(cat, "exif_orientation_5_progressive.jpg", quality=90, progressive=True,
         exif=orientation_exif(5))
    save(cat, "exif_orientation_6_dpi.jpg", quality=90, dpi=(72, 72), exif=orientation_exif(6))
    save(cat, "exif_orientation_8_grey.jpg", quality=90, exif=orientation_exif(8))
    Image.open(DERIVED / "exif_orientation_8_grey.jpg").convert("L").save(
        DERIVED / "exif_orientation_8_grey.jpg", quality=90, exif=orientation_exif(8))
    # What exif_transpose makes of orientation 7, as a plain PNG (the CLI test's reference).
    ImageOps.exif_transpose(Image.open(DERIVED / "exif_orientation_7.jpg")).save(
        DERIVED / "transposed_7.png")
    save(cat, "exif_orientation_6.png", exif=orientation_exif(6))
    save(cat.quantize(32), "exif_orientation_7_palette.png", exif=orientation_exif(7))
    xmp = PngImagePlugin.PngInfo()
    xmp.add_itxt("XML:com.adobe.xmp",
                 '<x:xmpmeta><rdf:Description tiff:Orientation="8"/></x:xmpmeta>')
    save(cat, "xmp_orientation_8.png", pnginfo=xmp)
    xmp = PngImagePlugin.PngInfo()
    xmp.add_text("XML:com.adobe.xmp", "<tiff:Orientation>3</tiff:Orientation>")
    save(cat, "xmp_text_orientation_3.png", pnginfo=xmp)
    # An eXIf chunk after the image data: Pillow reads it when it loads the pixels.
    png = (DERIVED / "exif_orientation_6.png").read_bytes()
    exif_at = png.index(b"eXIf") - 4
    exif_len = struct.unpack(">I", png[exif_at:exif_at + 4])[0]
    chunk = png[exif_at:exif_at + 12 + exif_len]
    rest = png[:exif_at] + png[exif_at + len(chunk):]
    iend = rest.index(b"IEND") - 4
    write_bytes("exif_orientation_6_after_idat.png", rest[:iend] + chunk + rest[iend:])

    hostile_jpegs(cat.resize((48, 32), Image.BICUBIC))


def hostile_jpegs(cat):
    """EXIF blocks Pillow reads in odd ways (each a comment on what Pillow does)."""
    plain = DERIVED / "hostile_base.jpg"
    cat.save(plain, quality=90)  # JFIF density unit 0: Pillow looks for dpi in EXIF on open
    base = plain.read_bytes()
    plain.unlink()
    cat.save(plain, quality=90, dpi=(300, 300))
    base_dpi = plain.read_bytes()
    plain.unlink()
    ex = b"Exif\0\0"
    o = 0x0112
    cases = {
        # TIFF header shorter than 8 bytes: struct.error when Pillow reads the IFD offset.
        "hostile_truncated_header": [ex + b"II*\0\x08\0"],
        # BigTIFF magic: Pillow unpacks a 64-bit offset from the 8-byte head and fails.
        "hostile_bigtiff": [ex + b"II+\0\x08\0\0\0\0\0\0\0"],
        # Not a TIFF header: SyntaxError, caught: no orientation.
        "hostile_bad_magic": [ex + b"XX*\0" + tiff_ifd0([(o, 3, 1, short_value(6))])[4:]],
        # "Exif\0" then no second NUL: the TIFF header is read from "Exif\0II*".
        "hostile_one_nul": [b"Exif\0" + tiff_ifd0([(o, 3, 1, short_value(6))])],
        "hostile_empty": [ex],
        # IFD offset past the end: OSError caught in the IFD reader: no tags.
        "hostile_ifd_offset_past_end": [ex + tiff_ifd0([(o, 3, 1, short_value(6))],
                                                       next_offset=0xFFFFFF00)],
        # Five entries announced, one present: the first entry's tag is kept.
        "hostile_entries_truncated": [ex + (b"II*\0\x08\0\0\0" + struct.pack("<H", 5) +
                                            struct.pack("<HHI", o, 3, 1) + short_value(6))],
        "hostile_orientation_long": [ex + tiff_ifd0([(o, 4, 1, struct.pack("<I", 6))])],
        "hostile_orientation_byte": [ex + tiff_ifd0([(o, 1, 1, b"\x03\0\0\0")])],
        "hostile_orientation_sshort": [ex + tiff_ifd0([(o, 8, 1, short_value(8))])],
        "hostile_orientation_float": [ex + tiff_ifd0([(o, 11, 1, struct.pack("<f", 6.0))])],
        # RATIONAL 12/2 at offset 26: Pillow's IFDRational equals 6.
        "hostile_orientation_rational": [ex + tiff_ifd0([(o, 5, 1, struct.pack("<I", 26))],
                                                        tail=struct.pack("<II", 12, 2))],
        "hostile_orientation_rational_half": [ex + tiff_ifd0(
            [(o, 5, 1, struct.pack("<I", 26))], tail=struct.pack("<II", 13, 2))],
        "hostile_orientation_rational_zero": [ex + tiff_ifd0(
            [(o, 5, 1, struct.pack("<I", 26))], tail=struct.pack("<II", 6, 0))],
        "hostile_orientation_double": [ex + tiff_ifd0([(o, 12, 1, struct.pack("<I", 26))],
                                                      tail=struct.pack("<d", 3.0))],
        "hostile_orientation_ascii": [ex + tiff_ifd0([(o, 2, 2, b"6\0\0\0")])],
        "hostile_orientation_undefined": [ex + tiff_ifd0([(o, 7, 1, b"\x06\0\0\0")])],
        "hostile_orientation_unknown_type": [ex + tiff_ifd0([(o, 99, 1, short_value(6))])],
        "hostile_orientation_count_0": [ex + tiff_ifd0([(o, 3, 0, short_value(6))])],
        # SHORT x 2 fits in the entry: the first value counts.
        "hostile_orientation_count_2": [ex + tiff_ifd0([(o, 3, 2, struct.pack("<HH", 3, 6))])],
        # SHORT x 3 lives at an offset: here 26, inside the block.
        "hostile_orientation_count_3": [ex + tiff_ifd0([(o, 3, 3, struct.pack("<I", 26))],
                                                       tail=struct.pack("<HHH", 7, 1, 1))],
        # ... and here past its end: OSError, the IFD reading stops, earlier tags kept.
        "hostile_orientation_offset_past_end": [ex + tiff_ifd0(
            [(0x0131, 2, 2, b"x\0\0\0"), (o, 3, 3, struct.pack("<I", 4000))])],
        "hostile_tag_after_bad_offset": [ex + tiff_ifd0(
            [(0x0131, 2, 40, struct.pack("<I", 4000)), (o, 3, 1, short_value(6))])],
        "hostile_huge_count": [ex + tiff_ifd0(
            [(o, 3, 1, short_value(2)), (0x0131, 2, 0xFFFFFFFF, struct.pack("<I", 8))])],
        "hostile_orientation_0": [ex + tiff_ifd0([(o, 3, 1, short_value(0))])],
        "hostile_orientation_9": [ex + tiff_ifd0([(o, 3, 1, short_value(9))])],
        "hostile_orientation_65535": [ex + tiff_ifd0([(o, 3, 1, short_value(65535))])],
        # The same tag twice: the last entry wins.
        "hostile_orientation_twice": [ex + tiff_ifd0([(o, 3, 1, short_value(3)),
                                                      (o, 3, 1, short_value(6))])],
        "hostile_big_endian_manual": [ex + tiff_ifd0([(o, 3, 1, short_value(6, little=False))],
                                                     little=False)],
        # Unusual prefixes Pillow's TIFF reader accepts ("MM\x2a\0" reads as big-endian).
        "hostile_odd_prefix": [ex + b"MM*\0" + tiff_ifd0(
            [(o, 3, 1, short_value(6, little=False))], little=False)[4:]],
        # Two Exif APP1 segments: the first wins.
        "hostile_two_exif_segments": [ex + tiff_ifd0([(o, 3, 1, short_value(3))]),
                                      ex + tiff_ifd0([(o, 3, 1, short_value(6))])],
        # An XMP APP1 first, then Exif: only "Exif\0" segments count.
        "hostile_xmp_then_exif": [b"http://ns.adobe.com/xap/1.0/\0<tiff:Orientation>2<",
                                  ex + tiff_ifd0([(o, 3, 1, short_value(4))])],
        # JpegImagePlugin computes a dpi from ResolutionUnit + XResolution on open: an XResolution
        # of one byte or character raises IndexError there, and Image.open fails.
        "hostile_xresolution_ascii_1": [ex + tiff_ifd0([(0x0128, 3, 1, short_value(2)),
                                                        (0x011A, 2, 2, b"7\0\0\0"),
                                                        (o, 3, 1, short_value(6))])],
        "hostile_xresolution_byte_1": [ex + tiff_ifd0([(0x0128, 3, 1, short_value(2)),
                                                       (0x011A, 1, 1, b"\x07\0\0\0")])],
        "hostile_xresolution_ascii_2": [ex + tiff_ifd0([(0x0128, 3, 1, short_value(2)),
                                                        (0x011A, 2, 2, b"72\0\0"),
                                                        (o, 3, 1, short_value(6))])],
        "hostile_xresolution_without_unit": [ex + tiff_ifd0([(0x011A, 1, 1, b"\x07\0\0\0"),
                                                             (o, 3, 1, short_value(6))])],
        "hostile_xresolution_zero_rational": [ex + tiff_ifd0(
            [(0x0128, 3, 1, short_value(2)), (0x011A, 5, 1, struct.pack("<I", 50)),
             (o, 3, 1, short_value(6))], tail=struct.pack("<II", 0, 0))],
        # Orientation in IFD1 (the thumbnail's) only: not read.
        "hostile_orientation_in_ifd1": [ex + (b"II*\0\x08\0\0\0" + struct.pack("<H", 0) +
                                              struct.pack("<I", 14) + struct.pack("<H", 1) +
                                              struct.pack("<HHI", o, 3, 1) + short_value(6) +
                                              struct.pack("<I", 0))],
    }
    for name, payloads in cases.items():
        write_bytes(name + ".jpg", jpeg_with_app1(base, payloads))
    # With a JFIF dpi (unit 1) Pillow opens the file without reading EXIF; exif_transpose
    # then raises on the broken header.
    write_bytes("hostile_truncated_header_dpi.jpg",
                base_dpi[:20] + b"\xff\xe1\0\x0e" + ex + b"II*\0\x08\0" + base_dpi[20:])
    assert base_dpi[2:4] == b"\xff\xe0" and base_dpi[4:6] == b"\0\x10"  # APP0 is 18 bytes
    # With a JFIF dpi, a block that is no TIFF at all is only parsed by exif_transpose: it raises.
    write_bytes("hostile_bad_magic_dpi.jpg",
                base_dpi[:20] + jpeg_with_app1(b"\xff\xd8", [ex + b"XX*\0\x08\0\0\0"])[2:] +
                base_dpi[20:])
    hostile_pngs(cat)  # already 48 x 32
    # PNG eXIf chunks that Pillow cannot read.
    png = (DERIVED / "exif_orientation_6.png").read_bytes()
    ihdr_end = 8 + 25
    for name, data in {"hostile_png_exif_truncated": b"II*\0\x08",
                       "hostile_png_exif_bigtiff": b"MM\0+\0\0\0\x08",
                       "hostile_png_exif_garbage": b"\x01\x02\x03\x04\x05\x06\x07\x08\x09"}.items():
        no_exif = png.replace(png[png.index(b"eXIf") - 4:png.index(b"eXIf") + 8 +
                                  struct.unpack(">I", png[png.index(b"eXIf") - 4:
                                                          png.index(b"eXIf")])[0]], b"")
        write_bytes(name + ".png", no_exif[:ihdr_end] + png_chunk(b"eXIf", data) +
                    no_exif[ihdr_end:])


def png_with_chunks(png, before=(), after=()):
    """`png` with chunks added before its first IDAT and before its IEND."""
    idat = png.index(b"IDAT") - 4
    iend = png.index(b"IEND") - 4
    return (png[:idat] + b"".join(before) + png[idat:iend] + b"".join(after) + png[iend:])


def hostile_pngs(cat):
    """Where Pillow looks for a PNG's orientation: eXIf, tEXt "exif", XMP; before or after IDAT."""
    plain = DERIVED / "hostile_png_base.png"
    cat.save(plain)
    png = plain.read_bytes()
    plain.unlink()

    def exif(v=None, ascii_orientation=False):
        entries = [(0x0131, 2, 2, b"x\0\0\0")]
        if v is not None:
            entries.append((0x0112, 3, 1, short_value(v)))
        if ascii_orientation:
            entries.append((0x0112, 2, 2, b"6\0\0\0"))
        return png_chunk(b"eXIf", tiff_ifd0(entries))

    def xmp(v, bad_utf8=False):
        text = f'<rdf:Description tiff:Orientation="{v}"/>'.encode() + (b"\xff" if bad_utf8
                                                                        else b"")
        return png_chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + text)

    cases = {
        "png_text_exif": ([png_chunk(b"tEXt", b"exif\0Exif\0\0" +
                                     tiff_ifd0([(0x0112, 3, 1, short_value(3))]))], []),
        "png_exif_without_orientation_then_xmp": ([exif(), xmp(8)], []),
        "png_exif_ascii_orientation_hides_xmp": ([exif(ascii_orientation=True), xmp(8)], []),
        "png_two_exif_chunks": ([exif(3), exif(6)], []),
        "png_exif_before_and_after_idat": ([exif(3)], [exif(6)]),
        "png_xmp_before_and_after_idat": ([xmp(3)], [xmp(8)]),
        "png_exif_after_idat_xmp_before": ([xmp(5)], [exif()]),
        "png_exif_before_idat_xmp_after": ([exif()], [xmp(5)]),
        "png_xmp_bad_utf8": ([xmp(6, bad_utf8=True)], []),
        "png_xmp_orientation_9": ([xmp(9)], []),
    }
    for name, (before, after) in cases.items():
        write_bytes(name + ".png", png_with_chunks(png, before, after))


SAMPLES = 7


def describe(im):
    rgb = im.convert("RGB")
    data = rgb.tobytes()
    w, h = rgb.size
    points = sorted({(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, h // 2),
                     (w // 3, (2 * h) // 3), ((3 * w) // 4, h // 5)})
    return {"width": w, "height": h, "sha256": sha(data),
            "samples": [[x, y, *rgb.getpixel((x, y))] for x, y in points]}


TRANSPOSE = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180,
             4: Image.Transpose.FLIP_TOP_BOTTOM, 5: Image.Transpose.TRANSPOSE,
             6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
             8: Image.Transpose.ROTATE_90}


def outcome(path, transpose):
    try:
        im = Image.open(path)
        if transpose:
            im = ImageOps.exif_transpose(im)
        return describe(im)
    except Exception as e:  # the class name is the fixture: the test expects a refusal
        result = {"error": type(e).__name__}
    if transpose:
        # exif_transpose also raises when, after transposing, it cannot write the remaining EXIF
        # tags back (Exif.tobytes: e.g. XResolution stored as text). vlbias writes no EXIF, so it
        # returns the transposed pixels there: record them, and that Pillow raised after them.
        try:
            im = Image.open(path)
            method = TRANSPOSE.get(im.getexif().get(0x0112))
            if method is not None:
                result["raised_after_transpose"] = describe(im.transpose(method))
        except Exception:
            pass
    return result


def main():
    REAL.mkdir(parents=True, exist_ok=True)
    for src in ORIGINALS:
        shutil.copyfile(src, REAL / src.name)
    derive()
    files = sorted(p for p in REAL.iterdir() if p.suffix in (".png", ".jpg"))
    files += sorted(DERIVED.iterdir())
    cases = []
    for path in files:
        mode = None
        try:
            mode = Image.open(path).mode
        except Exception:
            pass
        cases.append({"file": str(path.relative_to(REAL)), "pillow_mode": mode,
                      "open": outcome(path, False), "exif_transpose": outcome(path, True)})
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps({"pillow": PIL.__version__, "cases": cases}, indent=1) + "\n")
    total = sum(p.stat().st_size for p in files)
    print(f"{len(cases)} files, {total / 1e6:.2f} MB -> {FIXTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
