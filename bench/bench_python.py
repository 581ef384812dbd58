#!/usr/bin/env python3
"""The Python bindings' overhead (issue 10's goal: within 5% of the C++ call on inputs of
realistic size). Each call is timed from Python (vlbias.<metric>) and in C++ (bench_calls,
the same engine function on the same arrays read from .npy), median of the repeats after a
warm-up, same thread count. Also the cost of a float64 or non-contiguous argument (one
conversion copy).

    PYTHONPATH=build/python python3 bench/bench_python.py [--build build] [--repeats 5]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--build", default="build")
parser.add_argument("--repeats", type=int, default=5)
args = parser.parse_args()
build = pathlib.Path(args.build)
sys.path.insert(0, str(build / "python"))
import vlbias  # noqa: E402

rng = np.random.default_rng(0)
real = rng.normal(size=(10000, 512)).astype(np.float32)
fake = (rng.normal(size=(10000, 512)) + 0.1).astype(np.float32)
targets = rng.normal(size=(20, 512)).astype(np.float32)
cases = {
    # DIG-In scale realism/diversity on CLIP features (papers 002)
    "prdc": ((real, fake), lambda a, b: vlbias.prdc(a, b, k=3)),
    "fid": ((real, fake), lambda a, b: vlbias.fid(a, b)),
    "kid": ((real, fake), lambda a, b: vlbias.kid(a, b)),
    "vendi": ((real[:3000],), lambda a: vlbias.vendi(a)),
    # paper 001: 20 trait prompts against two groups of 500 images, 10,000 permutations
    "scweat": ((targets, real[:500], fake[:500]), lambda t, a, b: vlbias.scweat(t, a, b)),
}


def repeats_for(name):
    # Calls of milliseconds need more repeats for a stable median.
    return args.repeats * 6 if name in ("vendi", "scweat") else args.repeats


def median_time(fn, *a, repeats):
    fn(*a)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*a)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


rows = []
# The encoder: the fixture's tiny random CLIP (no real weights can be downloaded here), so
# the fixed costs weigh the most they can: 256 texts, 64 decoded JPEGs per call.
e2e = pathlib.Path(__file__).resolve().parents[1] / "tests/fixtures/encode/e2e"
model = vlbias.Clip(e2e / "hf")
image = str(e2e / "images" / "a_photo.jpg")
texts = [f"a photo of a person number {i}" for i in range(256)]
for name, fn, extra in (
    ("clip_texts", lambda: model.encode_texts(texts), ["256"]),
    # batch_size=64: one encoder call, as bench_calls makes (the default batches by 32).
    ("clip_images", lambda: model.encode_images([image] * 64, batch_size=64), ["64", image]),
):
    reps = args.repeats * 12
    cpp = float(
        subprocess.run(
            [str(build / "bench" / "bench_calls"), name, str(reps), str(e2e / "hf"), *extra],
            check=True, capture_output=True, text=True,
        ).stdout
    )
    py = median_time(fn, repeats=reps)
    row = {"call": name, "cpp_s": round(cpp, 5), "python_s": round(py, 5), "overhead": round(py / cpp - 1, 4)}
    rows.append(row)
    print(json.dumps(row), flush=True)

with tempfile.TemporaryDirectory() as tmp:
    for name, (arrays, fn) in cases.items():
        paths = []
        for i, a in enumerate(arrays):
            p = os.path.join(tmp, f"{name}_{i}.npy")
            np.save(p, a)
            paths.append(p)
        cpp = float(
            subprocess.run(
                [str(build / "bench" / "bench_calls"), name, str(repeats_for(name)), *paths],
                check=True, capture_output=True, text=True,
            ).stdout
        )
        py = median_time(fn, *arrays, repeats=repeats_for(name))
        py64 = median_time(fn, *[a.astype(np.float64) for a in arrays], repeats=repeats_for(name))
        row = {
            "call": name,
            "shapes": [list(a.shape) for a in arrays],
            "cpp_s": round(cpp, 4),
            "python_s": round(py, 4),
            "overhead": round(py / cpp - 1, 4),
            "python_float64_s": round(py64, 4),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
