#!/usr/bin/python3
"""The FairFace classifier, vlbias vs PyTorch, on the same face chips, decoding included.

Writes (once, reused when present) the full-size random resnet34 with 18 outputs
(tools/make_fairface_fixtures.py --full) and a folder of 300 x 300 PNG chips (crops of the real
photographs in tests/data/images/real/, as `vlbias faces` writes chips), then times:
  vlbias   build/bench/bench_resnet: decode, PIL-bilinear resize to 224, normalise, the ResNet
           forward and the heads' softmax (FairFaceClassifier::classify), batches of 16
  PyTorch  predict.py's pipeline in float32 under torch.inference_mode: PIL decode +
           convert("RGB"), transforms.Resize((224, 224)), ToTensor, Normalize, torchvision's
           resnet34, softmax per head; batches of 16 (predict.py itself runs one chip at a time)
each with the same thread count, best of --reps. Also measures the sgemm ceiling through numpy's
OpenBLAS (2048^3) and prints each engine's fraction of it (2 x 3.67e9 flops per image).

  /usr/bin/python3 bench/vs_torch_resnet.py --threads 2 [--chips 64] [--reps 3]

Run it when the machine is otherwise idle (it prints the load average).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import transforms

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "build", "bench", "bench_resnet")


def write_chips(folder, count):
    os.makedirs(folder, exist_ok=True)
    if len(os.listdir(folder)) == count:
        return
    real = os.path.join(REPO, "tests", "data", "images", "real")
    photos = [Image.open(os.path.join(real, n)).convert("RGB") for n in sorted(os.listdir(real))
              if n.endswith((".png", ".jpg"))]
    rng = np.random.default_rng(41)
    for i in range(count):
        p = photos[i % len(photos)]
        side = int(min(p.size) * rng.uniform(0.4, 0.9))
        x = int(rng.integers(0, p.size[0] - side + 1))
        y = int(rng.integers(0, p.size[1] - side + 1))
        p.crop((x, y, x + side, y + side)).resize((300, 300), Image.BICUBIC).save(
            os.path.join(folder, f"chip{i:04d}.png"))


def torch_rate(model_path, folder, threads, reps, batch=16):
    torch.set_num_threads(threads)
    model = torchvision.models.resnet34(num_classes=18)
    model.load_state_dict(torch.load(model_path))
    model.eval()
    trans = transforms.Compose([
        transforms.Resize((224, 224)), transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    files = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    best = float("inf")
    first = None
    for _ in range(reps):
        t0 = time.perf_counter()
        with torch.inference_mode():
            for b in range(0, len(files), batch):
                x = torch.stack([trans(Image.open(f).convert("RGB")) for f in files[b:b + batch]])
                out = model(x)
                race = torch.softmax(out[:, 0:7], 1)
                torch.softmax(out[:, 7:9], 1), torch.softmax(out[:, 9:18], 1)
                if first is None:
                    first = float(race[0, 0])
        best = min(best, time.perf_counter() - t0)
    return len(files) / best, first


def numpy_ceiling():
    a = np.full((2048, 2048), 0.5, np.float32)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t0)
    return 2 * 2048 ** 3 / best / 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--chips", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--work", default="/tmp/vlbias_resnet_bench")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    model_dir = os.path.join(args.work, "model")
    model_path = os.path.join(model_dir, "resnet34.pt")
    if not os.path.exists(model_path):
        subprocess.run([sys.executable, os.path.join(REPO, "tools", "make_fairface_fixtures.py"),
                        "--full", model_dir], check=True)
    chips = os.path.join(args.work, "chips")
    write_chips(chips, args.chips)
    ours = json.loads(subprocess.run(
        [BENCH, "--model", model_path, "--chips", chips, "--threads", str(args.threads),
         "--reps", str(args.reps)], check=True, capture_output=True, text=True).stdout)
    theirs, first = torch_rate(model_path, chips, args.threads, args.reps)
    ceiling = numpy_ceiling()
    flops = 2 * 3.67e9
    print(json.dumps({"load_average": os.getloadavg()[0], "threads": args.threads,
                      "chips": args.chips, "vlbias": ours, "torch_images_per_s": theirs,
                      "torch_fraction_of_numpy_ceiling": theirs * flops / 1e9 / ceiling,
                      "numpy_ceiling_gflops": ceiling,
                      "ratio": ours["images_per_s"] / theirs,
                      "first_probability_delta": abs(first - ours["first_probability"])}))


if __name__ == "__main__":
    main()
