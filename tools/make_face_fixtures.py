#!/usr/bin/python3
"""Face fixtures for tests/faces and tests/cli/faces_test.cpp: tests/fixtures/faces/.

Run with Debian's /usr/bin/python3 (Pillow 9.4):

    /usr/bin/python3 tools/make_face_fixtures.py

Writes astronaut_exif6.jpg: tests/data/images/real/astronaut.png (public domain, see
tests/data/images/real/LICENSES.md) cropped to CROP (256 x 200, the face inside), stored
turned a quarter to the left (Image.ROTATE_90) with EXIF orientation 6, so that
ImageOps.exif_transpose turns it upright again (256 x 200) and a viewer shows it upright. The
stored pixels hold the face on its side, which a frontal face detector does not find.

The boxes of labelled_faces.csv are hand-labelled (see tests/fixtures/faces/README.md), not
written here; the row of astronaut_exif6.jpg is the astronaut's label moved by CROP, which this
script checks against labelled_faces.csv.
"""
import csv
from pathlib import Path

import PIL
from PIL import Image, ImageOps

assert PIL.__version__.startswith("9.4"), f"expected Pillow 9.4, got {PIL.__version__}"

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "images" / "real"
OUT = ROOT / "tests" / "fixtures" / "faces"
CROP = (120, 20, 376, 220)  # left, top, right, bottom in astronaut.png


def orientation_exif(v):
    exif = Image.Exif()
    exif[0x0112] = v
    return exif


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    upright = Image.open(REAL / "astronaut.png").convert("RGB").crop(CROP)
    stored = upright.transpose(Image.ROTATE_90)
    path = OUT / "astronaut_exif6.jpg"
    stored.save(path, quality=95, exif=orientation_exif(6))
    back = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    assert back.size == upright.size, (back.size, upright.size)
    assert Image.open(path).size == (upright.size[1], upright.size[0])

    with open(OUT / "labelled_faces.csv", newline="") as f:
        rows = {r["image"]: r for r in csv.DictReader(f)}
    a, e = rows["astronaut.png"], rows["astronaut_exif6.jpg"]
    for key, shift in (("x", CROP[0]), ("y", CROP[1]), ("w", 0), ("h", 0)):
        assert int(e[key]) == int(a[key]) - shift, (key, e[key], a[key], shift)
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
