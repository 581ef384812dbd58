#!/usr/bin/python3
"""vlbias's native CLIP encoder vs PyTorch on the same model, inputs and thread count.

Runs build/bench/bench_encode (images/s, texts/s, peak RSS; it also dumps its inputs and
embeddings), then the same forward in PyTorch: open_clip-style nn.Modules
(nn.MultiheadAttention, batch_first) from tools/make_clip_fixtures.py in float32 under
torch.inference_mode, texts padded to the context length as open_clip's tokenizer does. Prints
both, the ratios, and the max difference between the two sets of embeddings.

  /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32
  /usr/bin/python3 bench/vs_torch_encode.py --model /tmp/clip-b32 --threads 2

Run it when the machine is otherwise idle (it prints the load average).
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
import make_clip_fixtures as mcf  # noqa: E402


def find_bench():
    for d in ("build", "build-model"):
        p = os.path.join(REPO, d, "bench", "bench_encode")
        if os.path.exists(p):
            return p
    sys.exit("bench_encode not found: build it (cmake --build build --target bench_encode)")


def set_openblas_threads(n):
    """torch.set_num_threads does not reach OpenBLAS (Debian's torch calls it for GEMMs)."""
    for name in ("libopenblas.so.0", ctypes.util.find_library("openblas")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_set_num_threads(ctypes.c_int(n))
            return True
        except (OSError, AttributeError):
            continue
    return False


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def best_time(reps, fn):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def torch_model(model_dir):
    """The open_clip-layout model as float32 open_clip-style modules."""
    cfg_path = os.path.join(model_dir, "open_clip_config.json")
    if not os.path.exists(cfg_path):
        sys.exit(f"{model_dir}: vs_torch_encode needs the open_clip layout "
                 "(make_clip_fixtures.py --bench-model DIR --layout open_clip)")
    with open(cfg_path) as f:
        cfg = json.load(f)
    sd = mcf.read_safetensors(os.path.join(model_dir, "open_clip_model.safetensors"))
    model = mcf.OpenClip(cfg["model_cfg"])
    model.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()}, strict=True)
    del sd
    return model.eval(), cfg["model_cfg"]["text_cfg"].get("context_length", 77)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="/tmp/clip-b32")
    ap.add_argument("--bench", default=None, help="bench_encode binary")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--texts", type=int, default=512)
    ap.add_argument("--len-min", type=int, default=8)
    ap.add_argument("--len-max", type=int, default=15)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--torch-batch", type=int, default=256, help="texts per PyTorch batch")
    args = ap.parse_args()

    load = os.getloadavg()
    dump = tempfile.mkdtemp(prefix="vs_torch_encode_")
    cmd = [args.bench or find_bench(), "--model", args.model, "--threads", str(args.threads),
           "--images", str(args.images), "--texts", str(args.texts), "--len-min",
           str(args.len_min), "--len-max", str(args.len_max), "--reps", str(args.reps),
           "--dump", dump]
    ours = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

    torch.set_num_threads(args.threads)
    blas = set_openblas_threads(args.threads)
    t0 = time.perf_counter()
    model, ctx = torch_model(args.model)
    load_s = time.perf_counter() - t0
    rss_loaded = rss_mib()
    n = args.images
    pixels = np.load(os.path.join(dump, "pixels.npy"))
    side = int(round((pixels.shape[1] / 3) ** 0.5))
    x = torch.from_numpy(pixels).reshape(n, 3, side, side)
    with open(os.path.join(dump, "texts.json")) as f:
        texts = json.load(f)["texts"]
    ids = torch.zeros((len(texts), ctx), dtype=torch.long)  # padded to 77 with 0, as open_clip
    for i, t in enumerate(texts):
        ids[i, :len(t)] = torch.tensor(t)

    out = {}
    with torch.inference_mode():
        model.encode_image(x[:2])
        model.encode_text(ids[:2])

        def images():
            out["img"] = model.encode_image(x)

        def text():
            out["txt"] = torch.cat([model.encode_text(ids[i:i + args.torch_batch])
                                    for i in range(0, len(texts), args.torch_batch)])

        t_img = best_time(args.reps, images)
        t_txt = best_time(args.reps, text)
    ref_img = np.load(os.path.join(dump, "image_embeddings.npy"))
    ref_txt = np.load(os.path.join(dump, "text_embeddings.npy"))
    d_img = float(np.abs(out["img"].numpy() - ref_img).max())
    d_txt = float(np.abs(out["txt"].numpy() - ref_txt).max())
    theirs = dict(images_per_s=n / t_img, texts_per_s=len(texts) / t_txt, load_s=load_s,
                  rss_after_load_mib=rss_loaded, peak_rss_mib=peak_rss_mib())

    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; threads {args.threads} "
          f"(OpenBLAS threads set: {blas}); torch {torch.__version__}")
    print(f"model {args.model}: {n} images, {len(texts)} texts of {ours['mean_tokens']:.1f} "
          f"tokens on average (PyTorch pads to {ctx})")
    print(f"{'':18}{'vlbias':>12}{'PyTorch':>12}{'ratio':>8}")
    rows = [("images/s", ours["images_per_s"], theirs["images_per_s"]),
            ("texts/s", ours["texts_per_s"], theirs["texts_per_s"]),
            ("load s", ours["load_s"], theirs["load_s"]),
            ("RSS after load MiB", ours["rss_after_load_mib"], theirs["rss_after_load_mib"]),
            ("peak RSS MiB", ours["peak_rss_mib"], theirs["peak_rss_mib"])]
    for name, a, b in rows:
        ratio = a / b if name.endswith("/s") else b / a
        print(f"{name:18}{a:12.2f}{b:12.2f}{ratio:7.2f}x")
    print(f"vlbias GFLOP/s: images {ours['image_gflops']:.1f}, texts {ours['text_gflops']:.1f}")
    print(f"max |vlbias - PyTorch|: images {d_img:.2e}, texts {d_txt:.2e}")
    print(json.dumps(dict(load_average=load, threads=args.threads, vlbias=ours, pytorch=theirs,
                          max_abs_diff=dict(images=d_img, texts=d_txt))))
    for f in os.listdir(dump):
        os.remove(os.path.join(dump, f))
    os.rmdir(dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
