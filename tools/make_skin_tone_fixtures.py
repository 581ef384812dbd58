#!/usr/bin/python3
"""References for skin tone per face (include/vlbias/faces/skin_tone.h), from numpy ports of the
two peers' code with python3-opencv's colour conversions (cv2 4.6):

  HEIM       helm src/helm/benchmark/metrics/image_generation/skin_tone_metrics.py,
             SkinToneMetric.skin_pixel_from_image / find_scale_rgb. Two versions:
               heim       commit 346f765d9 (Dec 2023, HELM v0.5.0-v0.5.4, the HEIM paper's code):
                          the "blue" list collects R and the "red" list B, so the mean it returns
                          is [mean B, mean G, mean R], compared with RGB Monk tones;
               corrected  commit 83e45f393 (Nov 2024, "fix R/B channel switch", v0.5.5 on):
                          [mean R, mean G, mean B].
             The skin rule (arXiv 1708.02694) reads R, G, B, A from cv2.cvtColor(BGR2RGBA)
             (A is always 255) and Y, Cr, Cb from cv2.cvtColor(BGR2YCrCb), 8-bit.
  DALL-Eval  j-min/DallEval biases/detect_skintone.py (commit b2cbeb6, the same skin rule and
             the same R/B swap as HEIM's first version, which was adapted from it) and
             biases/skintone/TRUST/compute_ita.py (ITA = atan((L - 50) / b) * 180 / pi per
             pixel, averaged; the Monk tone whose ITA is nearest).

Our ITA is the CIELAB one (L* 0..100, b* signed; sRGB, D65), per skin pixel, averaged. The
reference is cv2.cvtColor of the float32 image RGB / 255 with COLOR_RGB2Lab, which returns
those units (the 8-bit conversion returns L * 255 / 100, a + 128, b + 128). compute_ita.py
applies its formula to the 8-bit encoding itself, in uint8 arithmetic (L - 50 wraps below 50),
and converts cv2.imread's BGR array with COLOR_RGB2LAB (R and B swapped): its number, recorded
here as "dalleval_literal", is not an ITA; it is written for docs/methods.md, never tested
against. A second, independent reference is a float64 sRGB -> XYZ -> Lab in numpy (OpenCV's
matrix and white point, the exact sRGB curve); for a uniform patch it is the closed form.

The real photographs are tests/data/images/real/ (cv2.imread equals Pillow's decode, which
vlbias reproduces: asserted below). Faces are cut by fixed boxes (x0, y0, x1, y1), half-open,
chosen by eye to hold the face from hairline to chin and ear to ear:
  astronaut.png     (175, 70, 285, 185)   Eileen Collins
  grace_hopper.jpg  (160, 140, 365, 345)  Grace Hopper (glasses included)
Whole images are measured too (HEIM measures the whole generated image).

Also written: the SHA-256 of HEIM's skin decision for every one of the 2^24 8-bit colours and of
OpenCV's YCrCb bytes for them, so that the C++ test checks the rule and the conversion
exhaustively without Python.

Writes tests/fixtures/faces/skin_tone.json, read by tests/faces/skin_tone_test.cpp.
"""
import hashlib
import json
import math
import os
import warnings

import cv2
import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "tests", "data", "images", "real")
OUT = os.path.join(ROOT, "tests", "fixtures", "faces", "skin_tone.json")

# The Monk Skin Tone scale as sRGB (skintone.google, "get started"; the same ten triples in
# HEIM's SKIN_TONES_RGB and DALL-Eval's skintone_scales_rgb).
MONK_HEX = ["f6ede4", "f3e7db", "f7ead0", "eadaba", "d7bd96",
            "a07e56", "825c43", "604134", "3a312a", "292420"]
MONK_RGB = np.array([[int(h[i:i + 2], 16) for i in (0, 2, 4)] for h in MONK_HEX], dtype=np.int64)
# compute_ita.py's monk_tones (CIELAB of the same colours, as DALL-Eval lists them).
DALLEVAL_MONK_LAB = [(94.211, 1.503, 5.422), (92.275, 2.061, 7.28), (93.091, 0.216, 14.205),
                     (87.573, 0.459, 17.748), (77.902, 3.471, 23.136), (55.142, 7.783, 26.74),
                     (42.47, 12.325, 20.53), (30.678, 11.667, 13.335), (21.069, 2.69, 5.964),
                     (14.61, 1.482, 3.525)]

FACE_BOXES = {"astronaut.png": (175, 70, 285, 185), "grace_hopper.jpg": (160, 140, 365, 345)}
WHOLE = ["astronaut.png", "camera.png", "chelsea.png", "china.jpg", "coffee.png", "flower.jpg",
         "grace_hopper.jpg", "rocket.jpg"]
# Uniform patches (16 x 16): every Monk colour, skin colours from light to dark, a colour where
# the R/B swap moves the Monk tone by several steps, and colours the rule rejects.
PATCHES = {
    "monk%02d" % (k + 1): tuple(int(v) for v in MONK_RGB[k]) for k in range(10)}
PATCHES.update({
    "skin_light": (255, 219, 172), "skin_peach": (234, 192, 134), "skin_medium": (224, 172, 138),
    "skin_tan": (198, 134, 66), "skin_brown": (141, 85, 36), "skin_olive": (190, 140, 100),
    "skin_pink": (230, 160, 150), "skin_orange": (240, 130, 40),
    "grey": (128, 128, 128), "white": (255, 255, 255), "black": (0, 0, 0),
    "red": (255, 0, 0), "sky": (110, 160, 220)})


# ---------------------------------------------------------------------------------------------
# HEIM / detect_skintone.py, written as a loop over pixels the way the original reads them
# (cv2 conversions, Python ints, float comparisons), and vectorised with numpy; both must agree.

def skin_rule(r, g, b, a, y, cr, cb):
    """arXiv 1708.02694's RGB-A and YCrCb rule in HEIM's form (Python ints and floats)."""
    return (r > 95 and g > 40 and b > 20 and r > g and r > b and abs(r - g) > 15 and a > 15
            and cr > 135 and cb > 85 and y > 80
            and cr <= 1.5862 * cb + 20 and cr >= 0.3448 * cb + 76.2069
            and cr >= -4.5652 * cb + 234.5652 and cr <= -1.15 * cb + 301.75
            and cr <= -2.2857 * cb + 432.85)


def heim_mean_loop(bgr, swapped):
    """HEIM's returned 'mean skin colour' and the skin count, pixel by pixel."""
    rgba = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGBA)
    ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    first, second, third = [], [], []
    for i in range(rgba.shape[0]):
        for j in range(rgba.shape[1]):
            r, g, b, a = (rgba.item(i, j, c) for c in range(4))
            y, cr, cb = (ycc.item(i, j, c) for c in range(3))
            if skin_rule(r, g, b, a, y, cr, cb):
                # HEIM's lists are named red, green, blue and returned in that order; the first
                # version filled "red" from channel 2 (B) and "blue" from channel 0 (R).
                first.append(b if swapped else r)
                second.append(g)
                third.append(r if swapped else b)
    with warnings.catch_warnings():  # no skin: numpy's mean of [] is NaN, HEIM's "unknown"
        warnings.simplefilter("ignore", RuntimeWarning)
        return [np.mean(first), np.mean(second), np.mean(third)], len(first)


def skin_mask_numpy(bgr):
    rgba = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGBA).astype(np.int64)
    ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb).astype(np.int64)
    r, g, b, a = (rgba[..., c] for c in range(4))
    y, cr, cb = (ycc[..., c] for c in range(3))
    cbf = cb.astype(np.float64)
    return ((r > 95) & (g > 40) & (b > 20) & (r > g) & (r > b) & (np.abs(r - g) > 15) & (a > 15)
            & (cr > 135) & (cb > 85) & (y > 80)
            & (cr <= 1.5862 * cbf + 20) & (cr >= 0.3448 * cbf + 76.2069)
            & (cr >= -4.5652 * cbf + 234.5652) & (cr <= -1.15 * cbf + 301.75)
            & (cr <= -2.2857 * cbf + 432.85))


def nearest_monk(mean):
    """find_scale_rgb: L1 distance to each Monk RGB triple, first minimum, 1-based."""
    diff = np.abs(np.array(mean, dtype=np.float64).reshape(1, 3) - MONK_RGB).sum(1)
    k = int(diff.argmin())
    return k + 1, float(diff[k])


# ---------------------------------------------------------------------------------------------
# CIELAB and ITA.

# OpenCV's sRGB -> XYZ matrix (imgproc color_lab.cpp) and its D65 white, the matrix's row sums.
XYZ_MATRIX = np.array([[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169],
                       [0.019334, 0.119193, 0.950227]])
D65_WHITE = np.array([0.950456, 1.0, 1.088754])


def srgb_to_linear64(rgb):
    """The exact sRGB curve (IEC 61966-2-1) of 0..255 values, float64."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def srgb_to_lab64(rgb):
    """float64 sRGB (0..255) -> CIELAB: exact sRGB curve, OpenCV's matrix and white, CIE f with
    (6/29)^3."""
    xyz = srgb_to_linear64(rgb) @ XYZ_MATRIX.T / D65_WHITE
    eps = (6.0 / 29.0) ** 3
    f = np.where(xyz > eps, np.cbrt(xyz), xyz / (3 * (6.0 / 29.0) ** 2) + 4.0 / 29.0)
    lab = np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]),
                    200 * (f[..., 1] - f[..., 2])], -1)
    return lab


def ita_degrees(lab):
    return np.degrees(np.arctan((lab[..., 0] - 50.0) / lab[..., 2]))


def ita_category(ita):
    """Del Bino et al. 2006 / Chardon et al. 1991: > 55 very light, (41, 55] light,
    (28, 41] intermediate, (10, 28] tan, (-30, 10] brown, <= -30 dark."""
    for bound, name in ((55, "very_light"), (41, "light"), (28, "intermediate"), (10, "tan"),
                        (-30, "brown")):
        if ita > bound:
            return name
    return "dark"


def dalleval_literal(bgr, mask):
    """compute_ita.py's arithmetic on our skin pixels: COLOR_RGB2LAB of the BGR array (8-bit
    encoding), ita(l, a, b) on numpy uint8 scalars, averaged; then match_monk_tone + 1."""
    masked = cv2.bitwise_and(bgr, bgr, mask=mask.astype(np.uint8))
    lab = cv2.cvtColor(masked, cv2.COLOR_RGB2LAB)
    values = []
    with np.errstate(over="ignore", divide="ignore"):
        for y, x in zip(*np.nonzero(mask)):
            l, a, b = lab[y, x]
            if l == 0 and a == 128 and b == 128:
                continue
            values.append((np.arctan((l - 50) / b) * 180) / np.pi)
    if not values:
        return None
    score = float(np.mean(values))
    monk_itas = [(math.atan((l - 50) / b) * 180) / math.pi for l, a, b in DALLEVAL_MONK_LAB]
    best = min(range(10), key=lambda i: (abs(monk_itas[i] - score), i))
    return {"ita": score, "monk": best + 1}


# ---------------------------------------------------------------------------------------------

def measure(bgr, mask=None, literal=True):
    """Every reference number for one image (BGR uint8, as cv2.imread gives it)."""
    skin = skin_mask_numpy(bgr)
    if mask is not None:
        skin &= mask
    rgb = bgr[..., ::-1].astype(np.int64)
    n = int(skin.sum())
    sums = [int(rgb[..., c][skin].sum()) for c in range(3)]
    out = {"skin_pixels": n, "sum_rgb": sums}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = {"corrected": [np.mean(rgb[..., c][skin]) for c in range(3)]}
    means["heim"] = means["corrected"][::-1]
    if literal and mask is None:
        for mode, swapped in (("heim", True), ("corrected", False)):
            loop, count = heim_mean_loop(bgr, swapped)
            assert count == n, (count, n)
            assert np.array_equal(np.array(loop), np.array(means[mode]), equal_nan=True)
    for mode in ("heim", "corrected"):
        if n == 0:
            assert np.isnan(np.sum(means[mode]))  # HEIM's "detection failed": None, no tone
            out[mode] = {"mean": None, "monk": None, "l1": None}
        else:
            monk, l1 = nearest_monk(means[mode])
            out[mode] = {"mean": [float(v) for v in means[mode]], "monk": monk, "l1": l1}
    if n == 0:
        out.update({"ita_cv2": None, "ita_float64": None, "ita_category": None,
                    "dalleval_literal": None})
        return out
    rgb_f32 = (bgr[..., ::-1].astype(np.float32) / np.float32(255.0))
    lab_cv2 = cv2.cvtColor(rgb_f32, cv2.COLOR_RGB2Lab).astype(np.float64)[skin]
    lab_64 = srgb_to_lab64(rgb[skin])
    # OpenCV's interpolated b* is exactly 0 at a few skin pixels (+-90 degrees, numpy's arctan).
    with np.errstate(divide="ignore"):
        ita_cv2 = float(np.mean(ita_degrees(lab_cv2)))
    ita_64 = float(np.mean(ita_degrees(lab_64)))
    out.update({"ita_cv2": ita_cv2, "ita_float64": ita_64, "ita_category": ita_category(ita_64),
                "dalleval_literal": dalleval_literal(bgr, skin)})
    # The mean colour's own ITA, for docs/methods.md (we average per pixel, as compute_ita.py).
    out["ita_of_mean_colour"] = float(ita_degrees(srgb_to_lab64(np.array(means["corrected"]))))
    return out


def read_bgr(name):
    path = os.path.join(REAL, name)
    bgr = cv2.imread(path, 3)
    pillow = np.asarray(Image.open(path).convert("RGB"))
    assert np.array_equal(bgr[..., ::-1], pillow), f"{name}: cv2.imread differs from Pillow"
    return bgr


def integer_polygon_agrees():
    """skin_tone.cpp decides the five Cr-Cb lines in integers (times 10^4, or 10^2 for the
    fourth); HEIM's float64 expressions must decide every (Cr, Cb) pair of 0..255 the same."""
    cr, cb = np.meshgrid(np.arange(256, dtype=np.int64), np.arange(256, dtype=np.int64))
    cbf = cb.astype(np.float64)
    pairs = [(cr <= 1.5862 * cbf + 20, 10000 * cr <= 15862 * cb + 200000),
             (cr >= 0.3448 * cbf + 76.2069, 10000 * cr >= 3448 * cb + 762069),
             (cr >= -4.5652 * cbf + 234.5652, 10000 * cr >= -45652 * cb + 2345652),
             (cr <= -1.15 * cbf + 301.75, 100 * cr <= -115 * cb + 30175),
             (cr <= -2.2857 * cbf + 432.85, 10000 * cr <= -22857 * cb + 4328500)]
    for as_float, as_integer in pairs:
        assert np.array_equal(as_float, as_integer)


def exhaustive():
    """HEIM's decision and OpenCV's YCrCb for all 2^24 colours, index (R << 16) | (G << 8) | B."""
    idx = np.arange(1 << 24, dtype=np.uint32)
    bgr = np.stack([idx & 255, (idx >> 8) & 255, idx >> 16], -1).astype(np.uint8)
    bgr = bgr.reshape(4096, 4096, 3)
    ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb).reshape(-1, 3)
    skin = skin_mask_numpy(bgr).reshape(-1)
    # Spot-check the vectorised rule against the scalar one on a sample of colours.
    rgba = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGBA).reshape(-1, 4)
    rng = np.random.default_rng(39)
    sample = np.concatenate([rng.integers(0, 1 << 24, 200000), np.nonzero(skin)[0][::97]])
    for i in sample:
        r, g, b, a = (int(v) for v in rgba[i])
        assert skin_rule(r, g, b, a, *(int(v) for v in ycc[i])) == bool(skin[i]), i
    integer_polygon_agrees()
    rgb_skin = np.stack([idx >> 16, (idx >> 8) & 255, idx & 255], -1)[skin]
    lab = srgb_to_lab64(rgb_skin)
    # Every skin colour's X / Xn, Y, Z / Zn lies above (6/29)^3: the cube-root branch of f.
    lin = srgb_to_linear64(rgb_skin)
    assert (lin @ XYZ_MATRIX.T / D65_WHITE).min() > (6.0 / 29.0) ** 3
    # The Monk tone of each skin colour as a uniform patch, corrected (rows) against HEIM's
    # published R/B swap (columns), for docs/methods.md.
    tones = {}
    for mode, v in (("corrected", rgb_skin), ("heim", rgb_skin[:, ::-1])):
        tones[mode] = np.abs(v[:, None, :] - MONK_RGB[None, :, :]).sum(2).argmin(1)
    confusion = np.zeros((10, 10), dtype=np.int64)
    np.add.at(confusion, (tones["corrected"], tones["heim"]), 1)
    return {
        "skin_colours": int(skin.sum()),
        "skin_bits_sha256": hashlib.sha256(np.packbits(skin, bitorder="little").tobytes())
        .hexdigest(),
        "ycrcb_sha256": hashlib.sha256(np.ascontiguousarray(ycc).tobytes()).hexdigest(),
        "skin_min_abs_b": float(np.abs(lab[:, 2]).min()),
        "skin_min_lab_l": float(lab[:, 0].min()),
        "skin_ita_range": [float(ita_degrees(lab).min()), float(ita_degrees(lab).max())],
        "monk_corrected_vs_heim_all_skin_colours": confusion.tolist(),
    }


def main():
    cases = []
    for name, (x0, y0, x1, y1) in FACE_BOXES.items():
        bgr = read_bgr(name)
        crop = np.ascontiguousarray(bgr[y0:y1, x0:x1])
        cases.append({"name": name.split(".")[0] + "_face", "file": name, "box": [x0, y0, x1, y1],
                      "mask": None, **measure(crop)})
        yy, xx = np.mgrid[0:crop.shape[0], 0:crop.shape[1]]
        checker = (xx + yy) % 2 == 0
        cases.append({"name": name.split(".")[0] + "_face_checkerboard", "file": name,
                      "box": [x0, y0, x1, y1], "mask": "checkerboard",
                      **measure(crop, mask=checker)})
    for name in WHOLE:
        cases.append({"name": name.split(".")[0] + "_whole", "file": name, "box": None,
                      "mask": None, **measure(read_bgr(name))})
    for name, rgb in PATCHES.items():
        bgr = np.empty((16, 16, 3), np.uint8)
        bgr[...] = rgb[::-1]
        case = {"name": "patch_" + name, "patch_rgb": list(rgb), "patch_size": [16, 16],
                "mask": None, **measure(bgr)}
        if case["skin_pixels"]:
            # The closed form: every pixel has the same L*, b*, so the mean ITA is the colour's.
            case["ita_closed_form"] = float(ita_degrees(srgb_to_lab64(np.array(rgb))))
        cases.append(case)
    monk_lab = srgb_to_lab64(MONK_RGB)
    fixture = {
        "about": "tools/make_skin_tone_fixtures.py; cv2 " + cv2.__version__ + ", numpy "
                 + np.__version__,
        "monk_rgb": MONK_RGB.tolist(),
        "monk_lab_float64": monk_lab.tolist(),
        "dalleval_monk_lab": [list(t) for t in DALLEVAL_MONK_LAB],
        "exhaustive": exhaustive(),
        "cases": cases,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    for c in cases:
        print("%-30s n=%6d heim=%s corrected=%s ita=%s cv2=%s literal=%s" % (
            c["name"], c["skin_pixels"], c["heim"]["monk"], c["corrected"]["monk"],
            c["ita_float64"], c["ita_cv2"], c["dalleval_literal"]))
    print(json.dumps(fixture["exhaustive"]))


if __name__ == "__main__":
    main()
