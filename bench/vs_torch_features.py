#!/usr/bin/python3
"""Image features end to end, vlbias vs PyTorch, whole runs on the same JPEG files: the FID
Inception-v3 (`vlbias features`) and, with --clip DIR, CLIP's image tower (`vlbias encode`).

Writes the real-size FID Inception with random weights (tools/make_inception_fixtures.py
--divisor 1: 2048-d pool3, 1008 logits, 95 MB; reused when present) and a folder of JPEG photos'
stand-ins (textured 512 x 384 images), then times per round:
  vlbias   `vlbias features --model M --images DIR --out F.npy` as a process: decoding,
           pytorch-fid preprocessing and the forward, batches of 16
  PyTorch  the same pipeline in one Python process as pytorch-fid runs it: PIL decode +
           convert("RGB"), ToTensor, F.interpolate bilinear to 299, 2x - 1, the network of
           tools/make_inception_fixtures.py in float32 under torch.inference_mode, batches of 16
(model loading excluded from both: vlbias's is timed separately on one image and subtracted).
Also measures this machine's sgemm ceiling (a 2048^3 product through numpy's OpenBLAS on the
same threads) and prints each engine's fraction of it: 2 x 5.71e9 flops per image.

  /usr/bin/python3 bench/vs_torch_features.py --threads 2 [--images 64] [--rounds 2]
      [--clip /tmp/clip-b32]   # also CLIP (tools/make_clip_fixtures.py --bench-model DIR)

For CLIP the PyTorch side is open_clip's modules (tools/make_clip_fixtures.py) after PIL's
bicubic resize of the short side to 224, torchvision's centre crop and normalisation, in
batches of 32. Each engine's rate excludes its start (vlbias: a one-image run's time, i.e.
process start, weight loading and hashing; PyTorch: import and loading, outside the timing);
the whole-run times, start included, are printed too.

Run it when the machine is otherwise idle (it prints the load average per round).
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
import make_clip_fixtures as mcf  # noqa: E402
import make_inception_fixtures as mif  # noqa: E402
from make_clip_fixtures import read_safetensors  # noqa: E402

VLBIAS = os.path.join(REPO, "build", "vlbias")


def set_openblas_threads(n):
    for name in ("libopenblas.so.0", ctypes.util.find_library("openblas")):
        if not name:
            continue
        try:
            ctypes.CDLL(name).openblas_set_num_threads(ctypes.c_int(n))
            return
        except (OSError, AttributeError):
            continue


def sgemm_gflops():
    a = np.random.default_rng(0).standard_normal((2048, 2048), dtype=np.float32)
    a @ a
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2 * 2048 ** 3 / best / 1e9


def make_images(folder, n):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:384, 0:512]
    for i in range(n):
        path = os.path.join(folder, f"img_{i:04d}.jpg")
        if os.path.exists(path):
            continue
        a = np.stack([128 + 100 * np.sin(x / (4 + i % 7 + c) + y / (9 + c)) for c in range(3)], -1)
        a = np.clip(a + rng.normal(0, 25, a.shape), 0, 255).astype(np.uint8)
        Image.fromarray(a).save(path, quality=90)


def torch_model(weights):
    model = mif.FidInception(1, 1008)
    sd = {k: torch.from_numpy(v) for k, v in read_safetensors(weights).items()}
    model.load_state_dict(sd, strict=False)
    return model.eval()


def torch_run(model, paths, batch=16):
    feats = []
    with torch.inference_mode():
        for b in range(0, len(paths), batch):
            xs = []
            for p in paths[b:b + batch]:
                arr = np.asarray(Image.open(p).convert("RGB"))
                xs.append(torch.from_numpy(arr.copy()).permute(2, 0, 1).float().div(255))
            x = torch.stack(xs)  # pytorch-fid's loader yields same-size images per batch
            x = F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False)
            feats.append(model(2 * x - 1)[0])
    return torch.cat(feats).numpy()


def vlbias_run(model_dir, images, out, threads, command="features"):
    if os.path.exists(out):
        os.remove(out)
    t = time.perf_counter()
    extra = ["--raw"] if command == "encode" else []
    subprocess.run([VLBIAS, "--quiet", "--threads", str(threads), command, "--model", model_dir,
                    "--images", images, "--out", out] + extra, check=True)
    return time.perf_counter() - t


def clip_model(model_dir):
    with open(os.path.join(model_dir, "open_clip_config.json")) as f:
        cfg = json.load(f)
    sd = read_safetensors(os.path.join(model_dir, "open_clip_model.safetensors"))
    model = mcf.OpenClip(cfg["model_cfg"])
    model.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()}, strict=True)
    return model.eval(), cfg


def clip_run(model, cfg, paths, batch=32):
    side = cfg["model_cfg"]["vision_cfg"]["image_size"]
    mean = torch.tensor(cfg["preprocess_cfg"]["mean"]).view(3, 1, 1)
    std = torch.tensor(cfg["preprocess_cfg"]["std"]).view(3, 1, 1)
    out = []
    with torch.inference_mode():
        for b in range(0, len(paths), batch):
            xs = []
            for p in paths[b:b + batch]:
                img = Image.open(p).convert("RGB")
                w, h = img.size
                s = side / min(w, h)
                img = img.resize((max(side, int(w * s)), max(side, int(h * s))), Image.BICUBIC)
                w, h = img.size
                left, top = round((w - side) / 2.0), round((h - side) / 2.0)
                img = img.crop((left, top, left + side, top + side))
                x = torch.from_numpy(np.asarray(img).copy()).permute(2, 0, 1).float().div(255)
                xs.append((x - mean) / std)
            out.append(model.encode_image(torch.stack(xs)))
    return torch.cat(out).numpy()


def compare(name, ours_whole, startup, theirs_s, n, flops, ceiling, diff, load):
    ours_rate = n / max(ours_whole - startup, 1e-9)
    torch_rate = n / theirs_s
    print(f"{name} (load {load:.2f}): vlbias {ours_rate:.2f} images/s "
          f"({ours_rate * flops / 1e9 / ceiling:.0%} of the sgemm ceiling; whole run "
          f"{ours_whole:.2f} s with {startup:.2f} s of start), PyTorch {torch_rate:.2f} images/s "
          f"({torch_rate * flops / 1e9 / ceiling:.0%}); ratio {ours_rate / torch_rate:.2f}x; "
          f"max difference {diff:.2e} of the largest value")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model", default="/tmp/inception_full")
    ap.add_argument("--clip", default=None, help="an open_clip-layout CLIP folder")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "vlbias_inception_bench"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    set_openblas_threads(args.threads)
    weights = os.path.join(args.model, "model.safetensors")
    if not os.path.exists(weights):
        subprocess.run([sys.executable, os.path.join(REPO, "tools", "make_inception_fixtures.py"),
                        "--divisor", "1", "--out", args.model], check=True)
    folder = os.path.join(args.work, "images")
    make_images(folder, args.images)
    one = os.path.join(args.work, "one")
    make_images(one, 1)
    paths = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    model = torch_model(weights)
    ceiling = sgemm_gflops()
    print(f"sgemm ceiling on {args.threads} threads: {ceiling:.1f} GFLOP/s")
    clip = clip_model(args.clip) if args.clip else None
    for r in range(args.rounds):
        load = os.getloadavg()[0]
        startup = vlbias_run(args.model, one, os.path.join(args.work, "one.npy"), args.threads)
        ours = vlbias_run(args.model, folder, os.path.join(args.work, "f.npy"), args.threads)
        t = time.perf_counter()
        theirs = torch_run(model, paths)
        theirs_s = time.perf_counter() - t
        got = np.load(os.path.join(args.work, "f.npy"))
        compare(f"round {r + 1} Inception", ours, startup, theirs_s, len(paths), 2 * 5.713e9,
                ceiling, np.abs(got - theirs).max() / np.abs(theirs).max(), load)
        if clip is None:
            continue
        load = os.getloadavg()[0]
        startup = vlbias_run(args.clip, one, os.path.join(args.work, "c1.npy"), args.threads,
                             "encode")
        ours = vlbias_run(args.clip, folder, os.path.join(args.work, "c.npy"), args.threads,
                          "encode")
        t = time.perf_counter()
        theirs = clip_run(*clip, paths)
        theirs_s = time.perf_counter() - t
        got = np.load(os.path.join(args.work, "c.npy"))
        compare(f"round {r + 1} CLIP", ours, startup, theirs_s, len(paths), 2 * 4.41e9, ceiling,
                np.abs(got - theirs).max() / np.abs(theirs).max(), load)


if __name__ == "__main__":
    main()
