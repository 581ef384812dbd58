#!/usr/bin/python3
"""Reference fixtures for vlbias' binary array readers (src/io/tensor/npy.cpp,
src/io/tensor/safetensors.cpp).

The .npy files are written by numpy itself (np.save / np.lib.format.write_array):
float32/float16/float64, big-endian, Fortran order, 1-D, 0-D, 3-D, zero rows,
format versions 2.0 and 3.0, refused dtypes, NaN/inf and float64 overflow.

The safetensors package is not installed, so .safetensors files are built here
byte by byte the way the Hugging Face writer does it (8-byte little-endian
header length, compact JSON with "__metadata__" first, space padding to a
multiple of 8, tensors packed back to back), with F32/F16/BF16/F64/I64 tensors
whose data order differs from the header order.

Expected float32 values are computed independently with numpy (astype for
f16/f64 -> f32, bit shifting for bf16) and stored as uint32 bit patterns in
tests/fixtures/io/binary_expected.json, so NaN, inf and -0.0 compare exactly.

Run: /usr/bin/python3 tools/make_npy_fixtures.py
"""
import json
import os
import struct

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "io")

expected = {"npy": {}, "safetensors": {}}


def bits_of(a):
    """float32 bit patterns of an array, row-major."""
    return [int(b) for b in np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).ravel()]


def save_npy(name, arr, version=None, record=True):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            np.lib.format.write_array(f, arr, version=version)
    if record:
        expected["npy"][name] = {
            "shape": list(arr.shape),
            "bits": bits_of(np.asarray(arr).astype(np.float32)),
        }


def npy_fixtures():
    f4 = np.array([[0.5, -1.25, 3.0], [1e-3, 2.5e10, -0.0]], dtype="<f4")
    save_npy("npy_f4_2x3.npy", f4)
    f2 = np.array(
        [
            [0.1, 1.0 / 3.0, -2.0, 65504.0],
            [2.0**-24, 3 * 2.0**-24, 2.0**-14, -(2.0**-15)],
            [-0.0, 0.0, 1e-7, -65504.0],
        ],
        dtype="<f2",
    )
    save_npy("npy_f2_3x4.npy", f2)
    f8 = np.array([[1.0 / 3.0, -2.5e-40], [1e30, 123456789.123]], dtype="<f8")
    save_npy("npy_f8_2x2.npy", f8)
    save_npy("npy_be_f4_2x3.npy", f4.astype(">f4"))
    save_npy("npy_be_f8_2x2.npy", f8.astype(">f8"))
    save_npy("npy_be_f2_2x2.npy", np.array([[1.5, -0.25], [2.0**-20, 1000.0]], dtype=">f2"))
    save_npy("npy_fortran_f4_3x2.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(3, 2)))
    save_npy(
        "npy_fortran_f2_2x3x4.npy",
        np.asfortranarray((np.arange(24, dtype="<f4").reshape(2, 3, 4) - 7.5).astype("<f2")),
    )
    save_npy("npy_vec_f4_5.npy", np.array([1.0, 2.0, -3.5, 0.0, 7.25], dtype="<f4"))
    save_npy("npy_v2_f4_2x3.npy", f4, version=(2, 0))
    save_npy("npy_v3_f4_2x3.npy", f4, version=(3, 0))
    save_npy("npy_f4_0x4.npy", np.zeros((0, 4), dtype="<f4"))
    save_npy("npy_f4_2x2x2.npy", np.arange(8, dtype="<f4").reshape(2, 2, 2) / 4)
    save_npy("npy_scalar_f4.npy", np.array(2.5, dtype="<f4"))
    specials = np.array(
        [0x7C00, 0xFC00, 0x7E00, 0x0001, 0x03FF, 0x0400, 0x8001, 0x7BFF, 0x3C00, 0x8000],
        dtype="<u2",
    ).view("<f2")
    save_npy("npy_f2_specials.npy", specials)

    # Refused or failing at read time; no expected values.
    save_npy("npy_i8_2x2.npy", np.array([[1, 2], [3, 4]], dtype="<i8"), record=False)
    save_npy("npy_bool_3.npy", np.array([True, False, True]), record=False)
    save_npy(
        "npy_struct_2.npy",
        np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]),
        record=False,
    )
    nan = f4.copy()
    nan[1, 2] = np.nan
    save_npy("npy_nan_f4_2x3.npy", nan, record=False)
    save_npy("npy_inf_f2_2x2.npy", np.array([[1.0, np.inf], [0.0, 2.0]], dtype="<f2"),
             record=False)
    save_npy("npy_overflow_f8_1x2.npy", np.array([[1.0, 1e300]], dtype="<f8"), record=False)


def safetensors_bytes(tensors, layout, metadata):
    """tensors: list of (name, dtype, shape, raw bytes) in header order;
    layout: names in data-buffer order."""
    raw = {name: (dtype, shape, data) for name, dtype, shape, data in tensors}
    offsets = {}
    pos = 0
    for name in layout:
        offsets[name] = (pos, pos + len(raw[name][2]))
        pos += len(raw[name][2])
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, _ in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets[name])}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    body = b"".join(raw[name][2] for name in layout)
    return struct.pack("<Q", len(text)) + text + body


def bf16_bits(values):
    """Round-to-nearest-even float32 -> bfloat16 bit patterns."""
    u = np.asarray(values, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def safetensors_fixtures():
    rng = np.random.default_rng(20240607)
    emb_f32 = rng.standard_normal((3, 4)).astype("<f4")
    emb_f16 = np.array([[0.1, -2.0, 2.0**-24], [65504.0, 1.0 / 3.0, -0.0]], dtype="<f2")
    bf = bf16_bits([[1.0, -3.140625], [1e-38, 65536.5]])
    emb_f64 = np.array([[1.0 / 3.0, -1e-45], [2.0**100, 0.1]], dtype="<f8")
    vec = np.array([1, 2, 3, 4, 5], dtype="<f4") / 8
    cube = (np.arange(8, dtype="<f4") - 4).reshape(2, 2, 2)
    ids = np.array([49406, 320, 49407], dtype="<i8")
    tensors = [
        ("emb_f32", "F32", emb_f32.shape, emb_f32.tobytes()),
        ("emb_f16", "F16", emb_f16.shape, emb_f16.tobytes()),
        ("emb_bf16", "BF16", bf.shape, bf.tobytes()),
        ("emb_f64", "F64", emb_f64.shape, emb_f64.tobytes()),
        ("vec_f32", "F32", vec.shape, vec.tobytes()),
        ("cube_f32", "F32", cube.shape, cube.tobytes()),
        ("ids_i64", "I64", ids.shape, ids.tobytes()),
        ("empty_f32", "F32", (0, 3), b""),
    ]
    layout = ["ids_i64", "emb_f64", "empty_f32", "cube_f32", "emb_f32", "emb_bf16", "vec_f32",
              "emb_f16"]
    metadata = {"format": "pt", "source": "vlbias fixtures"}
    data = safetensors_bytes(tensors, layout, metadata)
    with open(os.path.join(OUT, "st_mixed.safetensors"), "wb") as f:
        f.write(data)
    floats = {
        "emb_f32": emb_f32,
        "emb_f16": emb_f16.astype(np.float32),
        "emb_bf16": (bf.astype(np.uint32) << 16).view("<f4").reshape(bf.shape),
        "emb_f64": emb_f64.astype(np.float32),
        "vec_f32": vec,
        "cube_f32": cube,
        "empty_f32": np.zeros((0, 3), dtype="<f4"),
    }
    header_len = struct.unpack("<Q", data[:8])[0]
    entries = json.loads(data[8 : 8 + header_len])
    expected["safetensors"]["st_mixed.safetensors"] = {
        "names": [name for name, _, _, _ in tensors],
        "metadata": metadata,
        "data_offset": 8 + header_len,
        "tensors": {
            name: {
                "dtype": dtype,
                "shape": list(shape),
                "begin": entries[name]["data_offsets"][0],
                "end": entries[name]["data_offsets"][1],
                "bits": bits_of(floats[name]) if name in floats else None,
            }
            for name, dtype, shape, _ in tensors
        },
    }

    nan = np.array([[1.0, 2.0, np.nan], [4.0, 5.0, 6.0]], dtype="<f4")
    w = bf16_bits([0.5, np.inf, -1.0, 2.0])
    data = safetensors_bytes(
        [("emb", "F32", nan.shape, nan.tobytes()), ("w", "BF16", w.shape, w.tobytes())],
        ["emb", "w"],
        None,
    )
    with open(os.path.join(OUT, "st_nonfinite.safetensors"), "wb") as f:
        f.write(data)

    # What the Hugging Face writer produces for these two float32 matrices and
    # metadata; vlbias' writer must reproduce it byte for byte.
    a = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -0.0]], dtype="<f4")
    b = np.array([[7.0, 8.5]], dtype="<f4")
    data = safetensors_bytes(
        [("a", "F32", a.shape, a.tobytes()), ("b", "F32", b.shape, b.tobytes())],
        ["a", "b"],
        {"format": "pt"},
    )
    with open(os.path.join(OUT, "st_written.safetensors"), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    npy_fixtures()
    safetensors_fixtures()
    with open(os.path.join(OUT, "binary_expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
