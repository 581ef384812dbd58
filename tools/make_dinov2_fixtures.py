#!/usr/bin/python3
"""Tiny random DINOv2 models (Hugging Face Dinov2Model layout) and reference CLS features.

Writes (read by tests/encode/models/dinov2/dinov2_model_test.cpp and tests/nn/vision_kernels_test.cpp):
  tests/fixtures/encode/dinov2/<case>/config.json, model.safetensors, preprocessor_config.json
  tests/fixtures/encode/dinov2/expected.json   the images, and per run (model, image-size
                                               override) the features of every image
  tests/fixtures/nn/bicubic.json               torch.nn.functional.interpolate(mode="bicubic",
                                               align_corners=False) in float32 on small grids

The models are RANDOM (tests only): gelu_p4 (exact-GELU MLP, F32, patch 4, positions for a 5x5
grid, preprocessing to a 7x7 grid plus 2 leftover pixels) and swiglu_p3 (SwiGLU MLP as the
giant model has, mlp_ratio 2.5 so the hidden size rule rounds 53 up to 56, no q/k/v bias, BF16,
patch 3, positions for 6x6, preprocessing to 5x5). The runs cover position embeddings upsampled,
downsampled and used as they are (input grid = the config's grid, no interpolation).

The reference forward is written here from the equations of transformers' modeling_dinov2.py
(Dinov2Embeddings, Dinov2Layer with layer scale, Dinov2SwiGLUFFN, final layernorm, pooler =
token 0) and facebookresearch/dinov2's interpolate_pos_encoding (bicubic, scale factor
((h0 + 0.1) / M, (w0 + 0.1) / M), no antialias; also current transformers' size= variant), in
float64 with torch.nn.functional; attention by hand (torch 1.13 has no
scaled_dot_product_attention). Images are decoded and preprocessed
as BitImageProcessor does (PIL convert("RGB"), shortest-edge BICUBIC resize, floor centre crop,
rescale 1/255, ImageNet normalisation) with tools/make_image_fixtures.py's hf_pixels.

Run with Debian's /usr/bin/python3 (torch 1.13, numpy, Pillow):
  /usr/bin/python3 tools/make_dinov2_fixtures.py                       # the test fixtures
  /usr/bin/python3 tools/make_dinov2_fixtures.py --bench-model /tmp/dinov2-l14 --shape l14
"""
import argparse
import json
import math
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_clip_fixtures import round_to_dtype, write_safetensors  # noqa: E402
from make_image_fixtures import hf_pixels  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "encode", "dinov2")
NN_OUT = os.path.join(ROOT, "tests", "fixtures", "nn")
IMAGES = ["jpg_420.jpg", "jpg_grey.jpg", "png_rgba8.png", "png_wide.png"]
IMAGE_DIR = os.path.join("tests", "fixtures", "encode", "images")

IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]

CASES = {
    "gelu_p4": dict(hidden=32, layers=2, heads=4, mlp_ratio=2, swiglu=False, act="gelu",
                    qkv_bias=True, patch=4, image_size=20, eps=1e-6, dtype="F32",
                    shortest_edge=32, crop=30, seed=5),
    "swiglu_p3": dict(hidden=32, layers=2, heads=4, mlp_ratio=2.5, swiglu=True, act="gelu",
                      qkv_bias=False, patch=3, image_size=18, eps=1e-5, dtype="BF16",
                      shortest_edge=17, crop=15, seed=9),
}
# (case, --image-size override or None, position interpolation): grids 7 (from 5), 5 (= 5: no
# interpolation), 5 (from 6), 8 (from 6, 1 leftover pixel); "scale-factor" is
# facebookresearch/dinov2's interpolate_pos_encoding, "size" current transformers'.
# A fourth entry names dgm-eval's preprocessing (FD_DINOv2: Pillow bicubic to a square, no crop;
# "-clean": on float channels), the --image-size then being the square's side.
RUNS = [("gelu_p4", None, "scale-factor"), ("gelu_p4", 20, "scale-factor"),
        ("swiglu_p3", None, "scale-factor"), ("swiglu_p3", 25, "scale-factor"),
        ("gelu_p4", None, "size"), ("swiglu_p3", 25, "size"),
        ("gelu_p4", 28, "scale-factor", "dgm-eval"),
        ("gelu_p4", 28, "scale-factor", "dgm-eval-clean")]


def mlp_hidden(c):
    h = int(c["hidden"] * c["mlp_ratio"])
    if c["swiglu"]:
        h = (int(h * 2 / 3) + 7) // 8 * 8  # Dinov2SwiGLUFFN
    return h


def random_state_dict(c):
    rng = np.random.default_rng(c["seed"])
    w, m, p = c["hidden"], mlp_hidden(c), c["patch"]
    grid = c["image_size"] // p

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def linear(sd, name, out, inp, bias=True):
        sd[name + ".weight"] = normal((out, inp), 1.0 / math.sqrt(inp))
        if bias:
            sd[name + ".bias"] = normal((out,), 0.1)

    sd = OrderedDict()
    sd["embeddings.cls_token"] = normal((1, 1, w), 0.5)
    sd["embeddings.mask_token"] = normal((1, w), 0.5)  # unused at inference
    sd["embeddings.position_embeddings"] = normal((1, grid * grid + 1, w), 0.5)
    sd["embeddings.patch_embeddings.projection.weight"] = normal((w, 3, p, p), 1.0 / (3 * p))
    sd["embeddings.patch_embeddings.projection.bias"] = normal((w,), 0.1)
    for i in range(c["layers"]):
        q = f"encoder.layer.{i}."
        for ln in ("norm1", "norm2"):
            sd[q + ln + ".weight"] = (1.0 + normal((w,), 0.1)).astype(np.float32)
            sd[q + ln + ".bias"] = normal((w,), 0.1)
        for part in ("query", "key", "value"):
            linear(sd, q + "attention.attention." + part, w, w, c["qkv_bias"])
        linear(sd, q + "attention.output.dense", w, w)
        sd[q + "layer_scale1.lambda1"] = rng.uniform(0.2, 1.0, w).astype(np.float32)
        if c["swiglu"]:
            linear(sd, q + "mlp.weights_in", 2 * m, w)
            linear(sd, q + "mlp.weights_out", w, m)
        else:
            linear(sd, q + "mlp.fc1", m, w)
            linear(sd, q + "mlp.fc2", w, m)
        sd[q + "layer_scale2.lambda1"] = rng.uniform(0.2, 1.0, w).astype(np.float32)
    sd["layernorm.weight"] = (1.0 + normal((w,), 0.1)).astype(np.float32)
    sd["layernorm.bias"] = normal((w,), 0.1)
    return sd


def hf_config(c):
    return {
        "architectures": ["Dinov2Model"], "model_type": "dinov2", "hidden_size": c["hidden"],
        "num_hidden_layers": c["layers"], "num_attention_heads": c["heads"],
        "mlp_ratio": c["mlp_ratio"], "hidden_act": c["act"], "use_swiglu_ffn": c["swiglu"],
        "qkv_bias": c["qkv_bias"], "patch_size": c["patch"], "image_size": c["image_size"],
        "layer_norm_eps": c["eps"], "layerscale_value": 1.0, "drop_path_rate": 0.0,
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
        "initializer_range": 0.02, "num_channels": 3, "torch_dtype": "float32",
        "transformers_version": "4.31.0.dev0",
    }


def preprocessor_config(c):
    # As facebook/dinov2-* ship it (there: shortest_edge 256, crop 224).
    return {
        "crop_size": {"height": c["crop"], "width": c["crop"]}, "do_center_crop": True,
        "do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
        "image_mean": IMAGENET_MEAN, "image_processor_type": "BitImageProcessor",
        "image_std": IMAGENET_STD, "resample": 3, "rescale_factor": 0.00392156862745098,
        "size": {"shortest_edge": c["shortest_edge"]},
    }


def interpolate_positions(pos, grid_h, grid_w, mode):
    """interpolate_pos_encoding: facebookresearch/dinov2's (interpolate_offset 0.1, no antialias:
    mode "scale-factor") or current transformers' (mode "size")."""
    n = pos.shape[1] - 1
    if grid_h * grid_w == n and grid_h == grid_w:
        return pos
    m = int(math.sqrt(n))
    assert m * m == n
    patch = pos[:, 1:].reshape(1, m, m, -1).permute(0, 3, 1, 2)
    if mode == "scale-factor":
        how = dict(scale_factor=((grid_h + 0.1) / m, (grid_w + 0.1) / m))
    else:
        how = dict(size=(grid_h, grid_w))
    patch = F.interpolate(patch, mode="bicubic", align_corners=False, **how)
    assert patch.shape[-2:] == (grid_h, grid_w)
    patch = patch.permute(0, 2, 3, 1).reshape(1, grid_h * grid_w, -1)
    return torch.cat((pos[:, :1], patch), dim=1)


def reference_features(sd, c, pixels, mode, dtype=np.float64):
    """Dinov2Model(...).pooler_output (float64 unless `dtype`): pixels [n, 3, H, W] -> [n, hidden].
    sd: name -> numpy array, or name -> torch tensor already of `dtype` (benchmarks)."""
    t = {k: v if torch.is_tensor(v) else torch.from_numpy(v.astype(dtype)) for k, v in sd.items()}
    w, heads, eps = c["hidden"], c["heads"], c["eps"]
    d = w // heads
    x = torch.from_numpy(pixels.astype(dtype))
    n = x.shape[0]
    patches = F.conv2d(x, t["embeddings.patch_embeddings.projection.weight"],
                       t["embeddings.patch_embeddings.projection.bias"], stride=c["patch"])
    gh, gw = patches.shape[-2:]
    h = torch.cat((t["embeddings.cls_token"].expand(n, 1, w), patches.flatten(2).transpose(1, 2)),
                  dim=1)
    h = h + interpolate_positions(t["embeddings.position_embeddings"], gh, gw, mode)
    tokens = h.shape[1]

    def lin(v, name):
        return F.linear(v, t[name + ".weight"], t.get(name + ".bias"))

    for i in range(c["layers"]):
        q = f"encoder.layer.{i}."
        y = F.layer_norm(h, (w,), t[q + "norm1.weight"], t[q + "norm1.bias"], eps)
        qs, ks, vs = (lin(y, q + "attention.attention." + s).reshape(n, tokens, heads, d)
                      .transpose(1, 2) for s in ("query", "key", "value"))
        scores = torch.softmax(qs @ ks.transpose(-1, -2) / math.sqrt(d), dim=-1)
        a = (scores @ vs).transpose(1, 2).reshape(n, tokens, w)
        h = h + lin(a, q + "attention.output.dense") * t[q + "layer_scale1.lambda1"]
        y = F.layer_norm(h, (w,), t[q + "norm2.weight"], t[q + "norm2.bias"], eps)
        if c["swiglu"]:
            x1, x2 = lin(y, q + "mlp.weights_in").chunk(2, dim=-1)
            y = lin(F.silu(x1) * x2, q + "mlp.weights_out")
        else:
            y = lin(F.gelu(lin(y, q + "mlp.fc1")), q + "mlp.fc2")
        h = h + y * t[q + "layer_scale2.lambda1"]
    h = F.layer_norm(h, (w,), t["layernorm.weight"], t["layernorm.bias"], eps)
    return h[:, 0].numpy()


def dgm_eval_pixels(side, clean):
    """dgm-eval's DINOv2Encoder.transform: TF.Resize((side, side), BICUBIC) of the PIL image
    (Pillow's 8-bit resize) and ToTensor, or with clean_resize its pil_resize (each float channel
    as a mode "F" image, bicubic, clip to [0, 255], / 255); then Normalize(ImageNet)."""
    out = []
    for name in IMAGES:
        img = Image.open(os.path.join(ROOT, IMAGE_DIR, name)).convert("RGB")
        if clean:
            x = np.asarray(img).astype(np.float32)
            chans = [np.asarray(Image.fromarray(x[:, :, i], mode="F").resize(
                (side, side), resample=Image.BICUBIC)).clip(0, 255) for i in range(3)]
            t = torch.from_numpy(np.stack(chans).astype(np.float32)) / 255
        else:
            t = torch.from_numpy(np.asarray(img.resize((side, side), Image.BICUBIC))
                                 .astype(np.float32)).permute(2, 0, 1) / 255
        mean = torch.tensor(IMAGENET_MEAN, dtype=torch.float32)[:, None, None]
        std = torch.tensor(IMAGENET_STD, dtype=torch.float32)[:, None, None]
        out.append(((t - mean) / std).numpy())
    return np.stack(out)


def image_pixels(c, image_size):
    edge, crop = (c["shortest_edge"], c["crop"]) if image_size is None else (image_size,
                                                                             image_size)
    p = dict(do_resize=True, shortest_edge=edge, do_center_crop=True, crop_height=crop,
             crop_width=crop, do_rescale=True, rescale_factor=0.00392156862745098,
             do_normalize=True, mean=IMAGENET_MEAN, std=IMAGENET_STD)
    out = []
    for name in IMAGES:
        arr = np.asarray(Image.open(os.path.join(ROOT, IMAGE_DIR, name)).convert("RGB"))
        out.append(hf_pixels(arr, p)[0])
    return np.stack(out)


def make_models():
    os.makedirs(OUT, exist_ok=True)
    stored = {}
    for name, c in CASES.items():
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        sd = OrderedDict((k, round_to_dtype(v, c["dtype"])) for k, v in
                         random_state_dict(c).items())
        write_safetensors(os.path.join(d, "model.safetensors"), sd, c["dtype"], {"format": "pt"})
        if name == "gelu_p4":
            # The same weights as transformers' save_pretrained(safe_serialization=False) writes
            # them (a zip state dict): the loaders read a folder that has only this file.
            os.makedirs(os.path.join(OUT, "gelu_p4_torch"), exist_ok=True)
            torch.save(OrderedDict((k, torch.from_numpy(np.asarray(v, np.float32).copy()))
                                   for k, v in sd.items()),
                       os.path.join(OUT, "gelu_p4_torch", "pytorch_model.bin"))
        for fname, obj in (("config.json", hf_config(c)),
                           ("preprocessor_config.json", preprocessor_config(c))):
            with open(os.path.join(d, fname), "w") as f:
                json.dump(obj, f, indent=2)
                f.write("\n")
        stored[name] = sd
    runs = []
    for name, image_size, mode, *resize in RUNS:
        c = CASES[name]
        preprocess = resize[0] if resize else "processor"
        px = (image_pixels(c, image_size) if preprocess == "processor" else
              dgm_eval_pixels(image_size, preprocess == "dgm-eval-clean"))
        feats = reference_features(stored[name], c, px, mode)
        grid = px.shape[-1] // c["patch"]
        runs.append({"model": name, "image_size": image_size, "positions": mode,
                     "preprocess": preprocess, "grid": grid,
                     "features": [[float(v) for v in row] for row in feats]})
    expected = {"about": "RANDOM tiny DINOv2 models (tests only); float64 reference features "
                         "written by tools/make_dinov2_fixtures.py",
                "images": [os.path.join(IMAGE_DIR, n) for n in IMAGES], "runs": runs}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


def make_bicubic():
    """F.interpolate(bicubic, align_corners=False) in float32, by scale factor and by size."""
    rng = np.random.default_rng(77)
    cases = []
    # (in_h, in_w, channels, out_h, out_w, scale_h, scale_w); scale None: by size.
    for in_h, in_w, ch, scale, size in [(5, 5, 3, ((7 + 0.1) / 5, (7 + 0.1) / 5), None),
                                        (6, 6, 2, ((4 + 0.1) / 6, (3 + 0.1) / 6), None),
                                        (37, 37, 1, ((16 + 0.1) / 37, (16 + 0.1) / 37), None),
                                        (4, 3, 2, None, (9, 2)), (1, 2, 1, None, (3, 5))]:
        x = rng.standard_normal((1, ch, in_h, in_w)).astype(np.float32)
        how = dict(scale_factor=scale) if scale is not None else dict(size=size)
        y = F.interpolate(torch.from_numpy(x), mode="bicubic", align_corners=False, **how).numpy()
        # The same in float64: float32's own rounding of the source positions moves its result
        # by up to a few 1e-6 on these grids.
        y64 = F.interpolate(torch.from_numpy(x.astype(np.float64)), mode="bicubic",
                            align_corners=False, **how).numpy()
        cases.append({
            "in_h": in_h, "in_w": in_w, "channels": ch, "out_h": int(y.shape[2]),
            "out_w": int(y.shape[3]), "scale_h": None if scale is None else scale[0],
            "scale_w": None if scale is None else scale[1],
            # channels last, as the C++ kernel takes them
            "input": [float(v) for v in x[0].transpose(1, 2, 0).ravel()],
            "output": [float(v) for v in y[0].transpose(1, 2, 0).ravel()],
            "output_f64": [float(v) for v in y64[0].transpose(1, 2, 0).ravel()]})
    os.makedirs(NN_OUT, exist_ok=True)
    with open(os.path.join(NN_OUT, "bicubic.json"), "w") as f:
        json.dump({"about": f"torch {torch.__version__} F.interpolate(mode='bicubic', "
                            "align_corners=False): output in float32, output_f64 in float64",
                   "cases": cases}, f)
        f.write("\n")


# Shapes for benchmarks (RANDOM weights): ViT-S/14 and ViT-L/14 as facebook/dinov2-small / -large,
# and ViT-g/14 (SwiGLU) as facebook/dinov2-giant.
BENCH_SHAPES = {
    "s14": dict(hidden=384, layers=12, heads=6, mlp_ratio=4, swiglu=False),
    "l14": dict(hidden=1024, layers=24, heads=16, mlp_ratio=4, swiglu=False),
    "g14": dict(hidden=1536, layers=40, heads=24, mlp_ratio=4, swiglu=True),
}


def make_bench_model(out_dir, shape):
    c = dict(BENCH_SHAPES[shape], act="gelu", qkv_bias=True, patch=14, image_size=518, eps=1e-6,
             dtype="F32", shortest_edge=256, crop=224, seed=1)
    os.makedirs(out_dir, exist_ok=True)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), random_state_dict(c), "F32",
                      {"format": "pt"})
    for fname, obj in (("config.json", hf_config(c)),
                       ("preprocessor_config.json", preprocessor_config(c))):
        with open(os.path.join(out_dir, fname), "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    print(f"wrote a RANDOM {shape} DINOv2 model to {out_dir}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench-model", help="write a benchmark-sized random model folder here")
    ap.add_argument("--shape", choices=sorted(BENCH_SHAPES), default="l14")
    args = ap.parse_args()
    if args.bench_model:
        make_bench_model(args.bench_model, args.shape)
        return
    make_bicubic()
    make_models()
    total = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(OUT) for x in fs)
    total += os.path.getsize(os.path.join(NN_OUT, "bicubic.json"))
    print(f"wrote {OUT} and {NN_OUT}/bicubic.json: {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
