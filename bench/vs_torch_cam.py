#!/usr/bin/python3
"""vlbias's native GradCAM for CLIP ViT vs PyTorch on the same model shape and thread count.

Runs build/bench/bench_cam (clip_cams and encode_images, images/s), then GradCAM as
pytorch-grad-cam computes it on CLIP (docs/methods.md#clip-cam) in PyTorch float32: open_clip's
modules from tools/make_clip_fixtures.py, a forward hook on the last block's ln_1 and a tensor
hook on its output, the pair's softmax probability summed over the batch and backward(), then
the channel weights and the weighted sum in numpy (resizing excluded on both sides' timing of
that step is negligible). Prints both, the ratio and the load average.

  /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32
  /usr/bin/python3 bench/vs_torch_cam.py --model /tmp/clip-b32 --threads 2

Run it when the machine is otherwise idle.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
import make_clip_fixtures as mcf  # noqa: E402


def torch_gradcam(model_dir, images, threads, reps):
    torch.set_num_threads(threads)
    layout, cfg, sd = mcf.load_model_dir(model_dir)
    assert layout == "open_clip", "use an open_clip-layout model (--bench-model's default)"
    net = mcf.OpenClip(cfg["model_cfg"]).float()
    net.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)
    net.eval()
    size = cfg["model_cfg"]["vision_cfg"]["image_size"]
    embed = cfg["model_cfg"]["embed_dim"]
    rng = np.random.default_rng(12345)
    x = torch.from_numpy(rng.uniform(-1.7320508, 1.7320508, (images, 3, size, size))
                         .astype(np.float32))
    u = torch.nn.functional.normalize(torch.from_numpy(rng.uniform(-0.5, 0.5, (2, embed))
                                                       .astype(np.float32)), dim=1)
    store = {}

    def forward_hook(module, inputs, output):  # ActivationsAndGradients
        store["a"] = output.detach()
        output.register_hook(lambda g: store.__setitem__("g", g.detach()))

    net.visual.transformer.resblocks[-1].ln_1.register_forward_hook(forward_hook)

    def gradcam(batch):
        e = net.encode_image(batch)
        e = e / e.norm(dim=-1, keepdim=True)
        probs = (100.0 * e @ u.T).softmax(dim=1)
        net.zero_grad()
        probs[:, 0].sum().backward()
        a, g = store["a"][:, 1:].numpy(), store["g"][:, 1:].numpy()
        return np.maximum((g.mean(axis=1)[:, None, :] * a).sum(-1), 0)

    gradcam(x[:4])
    best = 1e300
    for _ in range(reps):
        t0 = time.perf_counter()
        gradcam(x)
        best = min(best, time.perf_counter() - t0)
    return images / best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--images", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "bench", "bench_cam"))
    args = ap.parse_args()
    ours = json.loads(subprocess.run(
        [args.bench, "--model", args.model, "--threads", str(args.threads), "--images",
         str(args.images), "--reps", str(args.reps)], check=True, capture_output=True,
        text=True).stdout)
    theirs = torch_gradcam(args.model, args.images, args.threads, args.reps)
    print(json.dumps({"load_average": os.getloadavg(), "vlbias": ours,
                      "torch_gradcam_images_per_s": theirs,
                      "ratio": ours["cam_images_per_s"] / theirs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
