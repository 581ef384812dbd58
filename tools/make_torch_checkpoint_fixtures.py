#!/usr/bin/python3
"""Fixtures for vlbias' PyTorch checkpoint reader (src/io/tensor/torch_checkpoint.cpp, pickle.cpp,
zip_archive.cpp, torch_storage.cpp) in tests/fixtures/io/torch/.

Valid files are written by torch itself (Debian's python3-torch):
  - mixed_zip.pth / mixed_legacy.pth: one checkpoint {"model": OrderedDict(...), "epoch": 3,
    "note": "x"} with f32, f16, bf16, f64, int64 and bool tensors, a 0-D scalar, an empty
    tensor, a non-contiguous view (a strided slice of a transpose) and three tensors sharing
    one storage (two views and a tied alias), saved in the zip format and in the legacy
    (_use_new_zipfile_serialization=False) format;
  - net_state_zip.pth / net_state_legacy.pth / net_script.pt: the SAME random weights of a
    small nn.Module with submodules (Linear, Sequential of Conv2d and BatchNorm2d) as a state
    dict (zip and legacy) and as a torch.jit.script archive (torch.jit.save);
  - net_traced.pt: torch.jit.trace of the same module (a traced graph stores a constant tensor
    in constants.pkl).
Expected tensors (name, dtype, shape, little-endian contiguous bytes in hex from
tensor.contiguous().numpy()) are written to expected.json, together with the bytes of each
float tensor after .float() and .half(), so the tests never need Python.

The hostile corpus (hostile/) is built here byte by byte: pickles calling os.system,
builtins.eval, subprocess.Popen (STACK_GLOBAL) and posix.system, a storage declared larger
than its entry, a view past its storage, a broadcast view (stride 0) that would inflate a
tiny storage, a truncated archive, an entry offset past the end, a central directory that
points into itself, a deflated data.pkl, deep nesting, an unset memo index, a legacy
file whose storage is shorter than declared, and one storage read as two dtypes or two sizes
(ZIP data/ and TorchScript constants/ entries, legacy storages). The tests assert on each
refusal's message.

Run: /usr/bin/python3 tools/make_torch_checkpoint_fixtures.py
"""
import collections
import warnings
import io
import json
import os
import shutil
import struct
import zipfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "io", "torch")
HOSTILE = os.path.join(OUT, "hostile")
CORPUS = os.path.join(ROOT, "fuzz", "corpus", "torch_checkpoint")

DTYPE_NAMES = {
    torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
    torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL", torch.uint8: "U8",
}


def hex_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes().hex()
    return t.numpy().tobytes().hex()


def describe(tensors, ignored):
    out = []
    for name, t in tensors:
        entry = {"name": name, "dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape),
                 "hex": hex_bytes(t)}
        if t.is_floating_point():
            entry["f32_hex"] = hex_bytes(t.float())
            entry["f16_hex"] = hex_bytes(t.half())
        out.append(entry)
    return {"tensors": out, "ignored": ignored}


def mixed_checkpoint():
    g = torch.Generator().manual_seed(22)
    base = torch.randn(4, 6, generator=g)
    shared = torch.arange(20, dtype=torch.float32) * 0.5 - 3.0
    model = collections.OrderedDict()
    model["w32"] = torch.randn(3, 4, generator=g)
    model["h16"] = torch.tensor([0.1, -2.5, 65504.0, 6e-8, 1e-5], dtype=torch.float16)
    model["b16"] = torch.randn(2, 3, generator=g).to(torch.bfloat16)
    model["d64"] = torch.tensor([[1.0 / 3.0, -1e300], [1e-310, 2.0**-24 * 1.5]],
                                dtype=torch.float64)
    model["i64"] = torch.tensor([0, -1, 2**40, -(2**62)], dtype=torch.int64)
    model["flags"] = torch.tensor([True, False, True])
    model["scalar"] = torch.tensor(2.75)
    model["empty"] = torch.zeros(0, 3)
    model["view"] = base.t()[1:, ::2]  # shape [5, 2], strides (1, 12), offset 1
    model["shared.a"] = shared[2:8].view(2, 3)
    model["shared.b"] = shared[10:14]
    model["shared.tied"] = model["shared.a"]
    assert not model["view"].is_contiguous()
    ckpt = {"model": model, "epoch": 3, "note": "x"}
    tensors = [("model." + k, v) for k, v in model.items()]
    return ckpt, describe(tensors, 2)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.features = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2))

    def forward(self, x, y):
        return self.fc(y), self.features(x)


def net():
    torch.manual_seed(22)
    m = Net()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p))
        m.features[1].running_mean.copy_(torch.randn(2))
        m.features[1].running_var.copy_(torch.rand(2) + 0.5)
        m.features[1].num_batches_tracked.fill_(7)
    return m.eval()


def write_valid(expected):
    ckpt, mixed = mixed_checkpoint()
    torch.save(ckpt, os.path.join(OUT, "mixed_zip.pth"))
    torch.save(ckpt, os.path.join(OUT, "mixed_legacy.pth"), _use_new_zipfile_serialization=False)
    expected["mixed_zip.pth"] = dict(mixed, format="zip")
    expected["mixed_legacy.pth"] = dict(mixed, format="legacy")

    m = net()
    sd = m.state_dict()
    state = describe(list(sd.items()), 1)  # the state dict's _metadata
    torch.save(sd, os.path.join(OUT, "net_state_zip.pth"))
    torch.save(sd, os.path.join(OUT, "net_state_legacy.pth"), _use_new_zipfile_serialization=False)
    expected["net_state_zip.pth"] = dict(state, format="zip")
    expected["net_state_legacy.pth"] = dict(state, format="legacy")
    scripted = torch.jit.script(m)
    torch.jit.save(scripted, os.path.join(OUT, "net_script.pt"))
    expected["net_script.pt"] = {"format": "torchscript", "state_names": list(sd.keys())}
    x, y = torch.randn(1, 1, 5, 5), torch.randn(1, 3)
    traced = torch.jit.trace(lambda_module(m), (x, y))
    torch.jit.save(traced, os.path.join(OUT, "net_traced.pt"))
    expected["net_traced.pt"] = {"format": "torchscript",
                                 "state_names": ["inner." + k for k in sd.keys()]}


def lambda_module(m):
    class Scaled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x, y):
            a, b = self.inner(x, y)
            return a * torch.tensor(2.5, dtype=torch.float64), b
    return Scaled(m)


# ---- hostile files --------------------------------------------------------------------------

def zip_bytes(entries, compress=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible bytes
            z.writestr(info, data, zipfile.ZIP_DEFLATED if name in compress else zipfile.ZIP_STORED)
    return buf.getvalue()


def binunicode(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def storage_pid(dtype, key, numel, legacy=False):
    # ('storage', torch.<dtype>, key, 'cpu', numel[, None]) BINPERSID
    return (b"(" + binunicode("storage") + b"ctorch\n" + dtype.encode() + b"\n" +
            binunicode(key) + binunicode("cpu") + b"J" + struct.pack("<i", numel) +
            (b"N" if legacy else b"") + b"tQ")


def tensor_pickle(numel, offset, size, stride, dtype="FloatStorage", legacy=False):
    # {'w': _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())}
    ints = lambda xs: b"(" + b"".join(b"J" + struct.pack("<i", v) for v in xs) + b"t"
    return (b"\x80\x02}(" + binunicode("w") + b"ctorch._utils\n_rebuild_tensor_v2\n(" +
            storage_pid(dtype, "0", numel, legacy) + b"J" + struct.pack("<i", offset) +
            ints(size) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtRu.")


def tensors_pickle(tensors, legacy=False):
    # {name: _rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict()), ...} for
    # (name, storage type, storage key, numel, size, stride) in tensors
    ints = lambda xs: b"(" + b"".join(b"J" + struct.pack("<i", v) for v in xs) + b"t"
    items = b"".join(
        binunicode(name) + b"ctorch._utils\n_rebuild_tensor_v2\n(" +
        storage_pid(dtype, key, numel, legacy) + b"J" + struct.pack("<i", 0) + ints(size) +
        ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR"
        for name, dtype, key, numel, size, stride in tensors)
    return b"\x80\x02}(" + items + b"u."


# One 16-byte storage read as 4 floats and as 8 halves: torch.save refuses to write it and
# torch.load to read it ("views the same data as different types").
TWO_DTYPES = [("a", "FloatStorage", "0", 4, [4], [1]), ("b", "HalfStorage", "0", 8, [8], [1])]


def zip_checkpoint(pkl, storage=b"", extra=()):
    return zip_bytes([("archive/data.pkl", pkl), ("archive/data/0", storage),
                      ("archive/version", b"3\n")] + list(extra))


def legacy_checkpoint(obj_pickle, keys, storages):
    out = io.BytesIO()
    out.write(b"\x80\x02\x8a\x0a" + (0x1950a86a20f9469cfc6c).to_bytes(10, "little") + b".")
    out.write(b"\x80\x02M\xe9\x03.")
    out.write(b"\x80\x02}q\x00.")
    out.write(obj_pickle)
    out.write(b"\x80\x02]" + (b"(" + b"".join(binunicode(k) for k in keys) + b"e" if keys else b"") + b".")
    for count, data in storages:
        out.write(struct.pack("<q", count) + data)
    return out.getvalue()


def hostile():
    files = {}
    os_system = b"\x80\x02cos\nsystem\n" + binunicode("echo pwned") + b"\x85R."
    files["os_system.pth"] = zip_checkpoint(os_system)
    files["builtins_eval_legacy.pth"] = legacy_checkpoint(
        b"\x80\x02cbuiltins\neval\n" + binunicode("__import__('os')") + b"\x85R.", [], [])
    files["subprocess_stack_global.pth"] = zip_checkpoint(
        b"\x80\x04\x8c\x0asubprocess\x8c\x05Popen\x93" + binunicode("id") + b"\x85R.")
    files["posix_system.pt"] = zip_bytes([
        ("m/data.pkl", b"\x80\x02cposix\nsystem\n" + binunicode("id") + b"\x85R."),
        ("m/constants.pkl", b"\x80\x02)."), ("m/code/__torch__.py", b"import os\nos.system('id')\n")])
    # A storage of 2^31 - 1 floats declared, 8 bytes present.
    files["huge_storage.pth"] = zip_checkpoint(
        tensor_pickle(2**31 - 1, 0, [2**31 - 1], [1]), b"\0" * 8)
    # A view reaching element 100 of a 4-element storage.
    files["view_past_storage.pth"] = zip_checkpoint(tensor_pickle(4, 2, [2, 2], [50, 1]), b"\0" * 16)
    # Stride 0 repeats one element 2^30 x 2^30 times.
    files["broadcast_bomb.pth"] = zip_checkpoint(
        tensor_pickle(1, 0, [2**30, 2**30], [0, 0]), b"\0" * 4)
    valid = zip_checkpoint(tensor_pickle(4, 0, [4], [1]), b"\0" * 16)
    files["truncated.pth"] = valid[: len(valid) // 2]
    # The first central header's local offset moved past the end of the file.
    cd = valid.rfind(b"PK\x01\x02", 0, valid.rfind(b"PK\x05\x06"))
    first_cd = valid.find(b"PK\x01\x02")
    files["entry_past_eof.pth"] = (valid[: first_cd + 42] + struct.pack("<I", len(valid) + 1000) +
                                   valid[first_cd + 46:])
    # The end record's directory offset points at the end record itself (a loop).
    eocd = valid.rfind(b"PK\x05\x06")
    files["directory_loop.pth"] = valid[: eocd + 16] + struct.pack("<I", eocd) + valid[eocd + 20:]
    assert cd >= 0
    files["deflated.pth"] = zip_bytes([("archive/data.pkl", tensor_pickle(4, 0, [4], [1])),
                                       ("archive/data/0", b"\0" * 16)], compress=("archive/data.pkl",))
    # A second data.pkl entry that would hide the first.
    files["duplicate_entry.pth"] = zip_bytes([("archive/data.pkl", b"\x80\x02N."),
                                              ("archive/data.pkl", tensor_pickle(4, 0, [4], [1]))])
    files["deep_nesting.pth"] = zip_checkpoint(b"\x80\x02" + b"]" * 2 + b"(" * 5000 + b".")
    files["deep_lists.pth"] = zip_checkpoint(b"\x80\x02" + b")" + b"\x85" * 5000 + b".")
    # A list that holds itself (the walk that names tensors would never end), and a name
    # longer than the limit.
    files["self_reference.pth"] = zip_checkpoint(b"\x80\x02]q\x00h\x00a.")
    files["long_name.pth"] = zip_checkpoint(
        b"\x80\x02}" + binunicode("a" * 5000) + b"}" + binunicode("b") + b"Nss.")
    files["memo_unset.pth"] = zip_checkpoint(b"\x80\x02}q\x00h\x07.")
    files["legacy_short_storage.pth"] = legacy_checkpoint(
        tensor_pickle(6, 0, [6], [1], legacy=True), ["0"], [(6, b"\0" * 12)])
    files["not_a_checkpoint.pth"] = b"just some text, not a checkpoint\n"
    files["zip_two_dtypes.pth"] = zip_checkpoint(tensors_pickle(TWO_DTYPES), b"\0" * 16)
    files["zip_two_sizes.pth"] = zip_checkpoint(tensors_pickle(
        [("a", "FloatStorage", "0", 4, [4], [1]), ("b", "FloatStorage", "0", 2, [2], [1])]),
        b"\0" * 16)
    files["constants_two_dtypes.pt"] = zip_bytes([
        ("m/data.pkl", b"\x80\x02}."), ("m/constants.pkl", tensors_pickle(TWO_DTYPES)),
        ("m/constants/0", b"\0" * 16)])
    files["legacy_two_dtypes.pth"] = legacy_checkpoint(
        tensors_pickle(TWO_DTYPES, legacy=True), ["0"], [(4, b"\0" * 16)])
    for name, data in files.items():
        with open(os.path.join(HOSTILE, name), "wb") as f:
            f.write(data)
    return files


def main():
    warnings.simplefilter("ignore")  # zipfile's duplicate-name warning, torch's tracer
    for d in (OUT, HOSTILE, CORPUS):
        os.makedirs(d, exist_ok=True)
    expected = {}
    write_valid(expected)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    files = hostile()
    # Fuzz seeds: the small valid files and a few hostile ones.
    for name in ("mixed_zip.pth", "mixed_legacy.pth", "net_state_legacy.pth"):
        shutil.copy(os.path.join(OUT, name), os.path.join(CORPUS, name))
    for name in ("os_system.pth", "view_past_storage.pth", "legacy_short_storage.pth",
                 "memo_unset.pth", "zip_two_dtypes.pth", "constants_two_dtypes.pt",
                 "legacy_two_dtypes.pth"):
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(files[name])


if __name__ == "__main__":
    main()
