#!/usr/bin/python3
"""vlbias's native DINOv2 forward vs PyTorch on the same model, pixels and thread count.

Runs build/bench/bench_dinov2 (images/s, peak RSS; it dumps its pixels and features), then the
same forward in PyTorch float32 under torch.inference_mode: the eager transformers-style forward of
tools/make_dinov2_fixtures.py (F.linear, F.layer_norm, matmul + softmax attention, F.gelu /
SwiGLU, bicubic positions). Prints both, the ratio and the max difference of the features.

  /usr/bin/python3 tools/make_dinov2_fixtures.py --bench-model /tmp/dinov2-l14 --shape l14
  /usr/bin/python3 bench/vs_torch_dinov2.py --model /tmp/dinov2-l14 --threads 2

Run it when the machine is otherwise idle (it prints the load average).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import make_clip_fixtures as mcf  # noqa: E402
import make_dinov2_fixtures as mdf  # noqa: E402
from vs_torch_encode import best_time, set_openblas_threads  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--images", type=int, default=16)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    bench = os.path.join(REPO, "build", "bench", "bench_dinov2")
    if not os.path.exists(bench):
        sys.exit("bench_dinov2 not found: cmake --build build --target bench_dinov2")
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as dump:
        out = subprocess.run([bench, "--model", args.model, "--images", str(args.images),
                              "--image-size", str(args.image_size), "--threads",
                              str(args.threads), "--reps", str(args.reps), "--dump", dump],
                             check=True, capture_output=True, text=True).stdout
        ours = json.loads(out)
        pixels = np.load(os.path.join(dump, "pixels.npy"))
        features = np.load(os.path.join(dump, "features.npy"))
    s = args.image_size
    pixels = pixels.reshape(args.images, 3, s, s)
    with open(os.path.join(args.model, "config.json")) as f:
        cfg = json.load(f)
    c = dict(hidden=cfg["hidden_size"], layers=cfg["num_hidden_layers"],
             heads=cfg["num_attention_heads"], eps=cfg["layer_norm_eps"],
             patch=cfg["patch_size"], swiglu=cfg.get("use_swiglu_ffn", False))
    torch.set_num_threads(args.threads)
    set_openblas_threads(args.threads)
    sd = {k: torch.from_numpy(v) for k, v in mcf.read_safetensors(
        os.path.join(args.model, "model.safetensors")).items()}
    result = {}

    def forward():
        with torch.inference_mode():
            result["f"] = mdf.reference_features(sd, c, pixels, "scale-factor", np.float32)

    forward()  # warm-up
    t = best_time(args.reps, forward)
    theirs = {"seconds": t, "images_per_s": args.images / t}
    diff = float(np.abs(result["f"] - features).max())
    print(json.dumps({"vlbias": ours, "pytorch": theirs,
                      "speedup": ours["images_per_s"] / theirs["images_per_s"],
                      "max_abs_feature_diff": diff, "feature_scale":
                      float(np.abs(features).max())}, indent=1))


if __name__ == "__main__":
    main()
