#!/usr/bin/python3
"""Reference class activation maps for CLIP ViT: GradCAM, GradCAM++ and occlusion.

Writes tests/fixtures/encode/cam/ (read by tests/encode/models/clip/clip_cam_test.cpp):
  cam_b32/                 a random CLIP with ViT-B/32's geometry (224 px, patch 32, a 7 x 7 grid;
                           width 32 to stay small), HF layout, F16 weights, and its texts.json
  cases.json               per case: model, images, the trait pair's prompts, T per image, the
                           logit scale, which arrays follow
  <case>.grad.npy          float32 [n * tokens, width]: dT / d(last block's LN1 output)
  <case>.<method>.grid.npy float32 [n, grid^2]: the map before the ReLU (methods gradcam,
                           gradcampp, occlusion)
  <case>.<method>.maps.npy float32 [n, rows * cols]: the final maps, every `stride`-th row and
                           column of the input size (stride 1 for the tiny models, 3 for 224 px)
  (cases.json "resize")    cv2.resize INTER_LINEAR and the whole scale_cam_image pipeline on
                           random grids (every `stride`-th output row and column)
  (cases.json "overlay")   cv2.applyColorMap's COLORMAP_JET table and show_cam_on_image
                           (use_rgb=True) of a small random image and mask

Cases: the tiny random models of tools/make_clip_fixtures.py (hf_a_f32: HF layout, quick_gelu;
oc_b_f32: open_clip layout, gelu) on their random pixel tensors, and cam_b32 on real photographs
(tests/data/images/real) preprocessed as CLIPImageProcessor does (tools/make_image_fixtures.py's
hf_pixels: Pillow bicubic to 224 on the short side, floor centre crop, normalise).

The reference is independent of the C++ code: the CLIP forward of tools/make_clip_fixtures.py in
float64 with torch autograd (open_clip layout: its nn.Module, the target layer hooked as
pytorch-grad-cam's ActivationsAndGradients does, a forward hook on resblocks[-1].ln_1 and a
tensor hook on its output; HF layout: transformers' modeling_clip math with the last layer's
layer_norm1 output kept and its .grad read). The target is the example's: softmax over the two
poles' logits (logit scale x mean cosine over the pole's prompts), probability of the first;
the gradient of the sum over the batch. The CAM code below is pytorch-grad-cam's (MIT licence,
jacobgil/pytorch-grad-cam at 084273b: grad_cam.py, grad_cam_plusplus.py, base_cam.py's
get_cam_image / compute_cam_per_layer / aggregate_multi_layers, utils/image.py's
scale_cam_image with cv2.resize, the CLIP example's reshape_transform), line for line on the
float64 arrays. Occlusion is a direct loop: each patch set to 0, the whole forward again.

Run with Debian's /usr/bin/python3 (torch 1.13, numpy, Pillow 9.4, python3-opencv):
  /usr/bin/python3 tools/make_clip_cam_fixtures.py
  /usr/bin/python3 tools/make_clip_cam_fixtures.py --overlay-only   # rewrites "overlay" only
(run tools/make_clip_fixtures.py first: the tiny models are its fixtures).
"""
import json
import math
import os
import sys
from collections import OrderedDict

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_clip_fixtures as mcf  # noqa: E402
from make_image_fixtures import hf_pixels  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(REPO, "tests", "fixtures", "encode", "models")
OUT = os.path.join(REPO, "tests", "fixtures", "encode", "cam")
REAL = os.path.join(REPO, "tests", "data", "images", "real")

SPEC_CAM_B32 = dict(image_size=224, patch_size=32, vision_width=32, vision_heads=2,
                    vision_layers=2, vision_mlp=128, text_width=32, text_heads=2, text_layers=1,
                    text_mlp=128, context_length=77, vocab_size=600, embed_dim=16,
                    activation="quick_gelu")
REAL_IMAGES = ["astronaut.png", "grace_hopper.jpg", "chelsea.png", "coffee.png"]
METHODS = ["gradcam", "gradcampp", "occlusion"]

# ---------------------------------------------------------------------------------------------
# pytorch-grad-cam, line for line (numpy on float64 arrays).


def reshape_transform(tensor, height, width):
    """usage_examples/clip_example.py: drop the class token, patch tokens to the grid."""
    result = tensor[:, 1:, :].reshape(tensor.size(0), height, width, tensor.size(2))
    result = result.transpose(2, 3).transpose(1, 2)
    return result


def grad_cam_weights(grads):
    """grad_cam.py GradCAM.get_cam_weights (2D)."""
    return np.mean(grads, axis=(2, 3))


def grad_cam_plusplus_weights(activations, grads):
    """grad_cam_plusplus.py GradCAMPlusPlus.get_cam_weights."""
    grads_power_2 = grads**2
    grads_power_3 = grads_power_2 * grads
    sum_activations = np.sum(activations, axis=(2, 3))
    eps = 0.000001
    aij = grads_power_2 / (2 * grads_power_2 + sum_activations[:, :, None, None] * grads_power_3 +
                           eps)
    aij = np.where(grads != 0, aij, 0)
    weights = np.maximum(grads, 0) * aij
    weights = np.sum(weights, axis=(2, 3))
    return weights


def get_cam_image(weights, activations):
    """base_cam.py BaseCAM.get_cam_image (eigen_smooth off)."""
    weighted_activations = weights[:, :, None, None] * activations
    return weighted_activations.sum(axis=1)


def scale_cam_image(cam, target_size=None):
    """utils/image.py scale_cam_image (2D maps)."""
    result = []
    for img in cam:
        img = img - np.min(img)
        img = img / (1e-7 + np.max(img))
        if target_size is not None:
            img = cv2.resize(np.float32(img), target_size)
        result.append(img)
    result = np.float32(result)
    return result


def final_maps(cam, target_size):
    """base_cam.py compute_cam_per_layer (one layer) and aggregate_multi_layers."""
    cam = np.maximum(cam, 0)
    scaled = scale_cam_image(cam, target_size)
    cam_per_target_layer = [scaled[:, None, :]]
    cam_per_target_layer = np.concatenate(cam_per_target_layer, axis=1)
    cam_per_target_layer = np.maximum(cam_per_target_layer, 0)
    result = np.mean(cam_per_target_layer, axis=1)
    return scale_cam_image(result)


# ---------------------------------------------------------------------------------------------
# The CLIP vision forward with the target layer kept (float64).


def hf_vision_forward(sd, cfg, pixels, keep):
    """transformers' CLIPVisionTransformer + visual_projection; keep(x) gets the last layer's
    layer_norm1 output (the tensor pytorch-grad-cam's hook sees)."""
    v = cfg["vision_config"]
    eps = v.get("layer_norm_eps", 1e-5)
    p = v["patch_size"]
    x = F.conv2d(pixels, sd["vision_model.embeddings.patch_embedding.weight"], stride=p)
    x = x.flatten(2).transpose(1, 2)
    cls = sd["vision_model.embeddings.class_embedding"].expand(x.shape[0], 1, -1)
    h = torch.cat([cls, x], dim=1) + sd["vision_model.embeddings.position_embedding.weight"]
    h = F.layer_norm(h, (h.shape[-1],), sd["vision_model.pre_layrnorm.weight"],
                     sd["vision_model.pre_layrnorm.bias"], eps)
    width, heads = v["hidden_size"], v["num_attention_heads"]
    d = width // heads
    act = mcf._hf_act(v.get("hidden_act", "quick_gelu"))
    b, n, _ = h.shape
    layers = v["num_hidden_layers"]
    for i in range(layers):
        pre = f"vision_model.encoder.layers.{i}."

        def lin(t, name):
            return F.linear(t, sd[pre + name + ".weight"], sd[pre + name + ".bias"])

        residual = h
        x = F.layer_norm(h, (width,), sd[pre + "layer_norm1.weight"],
                         sd[pre + "layer_norm1.bias"], eps)
        if i == layers - 1:
            keep(x)
        q = lin(x, "self_attn.q_proj").view(b, n, heads, d).transpose(1, 2)
        k = lin(x, "self_attn.k_proj").view(b, n, heads, d).transpose(1, 2)
        vv = lin(x, "self_attn.v_proj").view(b, n, heads, d).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2)) * d ** -0.5
        a = torch.matmul(torch.softmax(w, dim=-1), vv).transpose(1, 2).reshape(b, n, width)
        h = residual + lin(a, "self_attn.out_proj")
        residual = h
        x = F.layer_norm(h, (width,), sd[pre + "layer_norm2.weight"],
                         sd[pre + "layer_norm2.bias"], eps)
        h = residual + lin(act(lin(x, "mlp.fc1")), "mlp.fc2")
    pooled = F.layer_norm(h[:, 0], (width,), sd["vision_model.post_layernorm.weight"],
                          sd["vision_model.post_layernorm.bias"], eps)
    return F.linear(pooled, sd["visual_projection.weight"])


class Capture:
    """pytorch-grad-cam's ActivationsAndGradients for one target layer: a forward hook keeps
    the output, a tensor hook on it keeps its gradient."""

    def __init__(self):
        self.activation = None
        self.gradient = None

    def keep(self, output):
        self.activation = output.detach()

        def store(grad):
            self.gradient = grad.detach()

        output.register_hook(store)

    def forward_hook(self, module, inputs, output):
        self.keep(output)


def image_embeddings(model, pixels, capture=None):
    layout, cfg, sd = model
    if layout == "open_clip":
        net = mcf._open_clip_module(cfg, sd)
        handle = None
        if capture is not None:
            handle = net.visual.transformer.resblocks[-1].ln_1.register_forward_hook(
                capture.forward_hook)
        out = net.encode_image(pixels)
        if handle is not None:
            handle.remove()
        return out
    return hf_vision_forward(sd, cfg, pixels, capture.keep if capture else (lambda x: None))


def pair_probability(emb, u0, u1, scale):
    """The CLIP example's probs[:, 0] for the labels (pole 0, pole 1): softmax over
    logit_scale x (mean over each pole's prompts of the cosine)."""
    e = emb / emb.norm(dim=-1, keepdim=True)
    logits = torch.stack([scale * (e @ u0), scale * (e @ u1)], dim=1)
    return logits.softmax(dim=1)[:, 0]


# ---------------------------------------------------------------------------------------------
# Cases.


def pole_mean(text_emb):
    t = torch.from_numpy(text_emb)
    return (t / t.norm(dim=-1, keepdim=True)).mean(dim=0)


def run_case(name, model, pixels, first, second, stride):
    layout, cfg, sd = model
    vision = cfg["model_cfg"]["vision_cfg"] if layout == "open_clip" else cfg["vision_config"]
    size, patch = vision["image_size"], vision["patch_size"]
    g = size // patch
    texts = json.load(open(os.path.join(model_dir(name), "texts.json")))["texts"]
    u0 = pole_mean(mcf.reference_encode_texts(model, [texts[i] for i in first]))
    u1 = pole_mean(mcf.reference_encode_texts(model, [texts[i] for i in second]))
    scale = math.exp(float(sd["logit_scale"]))
    x = torch.from_numpy(np.asarray(pixels, dtype=np.float64))
    capture = Capture()
    # The HF reference's weights are plain tensors: the pixels carry requires_grad instead
    # (BaseCAM's compute_input_gradient), so that the graph reaches the target layer.
    target = pair_probability(image_embeddings(model, x.clone().requires_grad_(True), capture),
                              u0, u1, scale)
    target.sum().backward()  # base_cam.py: loss = sum of each image's target
    acts = reshape_transform(capture.activation, g, g).numpy()
    grads = reshape_transform(capture.gradient, g, g).numpy()
    grids = {
        "gradcam": get_cam_image(grad_cam_weights(grads), acts),
        "gradcampp": get_cam_image(grad_cam_plusplus_weights(acts, grads), acts),
    }
    # Occlusion: a direct loop over images and cells.
    occ = np.zeros((x.shape[0], g, g))
    with torch.no_grad():
        for i in range(x.shape[0]):
            t0 = float(pair_probability(image_embeddings(model, x[i:i + 1]), u0, u1, scale))
            for cy in range(g):
                for cx in range(g):
                    xo = x[i:i + 1].clone()
                    xo[:, :, cy * patch:(cy + 1) * patch, cx * patch:(cx + 1) * patch] = 0.0
                    t = float(pair_probability(image_embeddings(model, xo), u0, u1, scale))
                    occ[i, cy, cx] = t0 - t
    grids["occlusion"] = occ
    n = x.shape[0]
    mcf.write_npy(os.path.join(OUT, f"{name}.grad.npy"),
                  capture.gradient.numpy().reshape(n * (g * g + 1), -1))
    for method, grid in grids.items():
        maps = final_maps(grid, (size, size))[:, ::stride, ::stride]
        mcf.write_npy(os.path.join(OUT, f"{name}.{method}.grid.npy"), grid.reshape(n, g * g))
        mcf.write_npy(os.path.join(OUT, f"{name}.{method}.maps.npy"), maps.reshape(n, -1))
    print(f"{name}: T {np.round(target.detach().numpy(), 4)}, |grad| max "
          f"{np.abs(capture.gradient.numpy()).max():.3g}")
    return dict(name=name, first=first, second=second, logit_scale=scale, grid=g, stride=stride,
                map_rows=len(range(0, size, stride)), target=target.detach().numpy().tolist())


def model_dir(name):
    return os.path.join(OUT, name) if name == "cam_b32" else os.path.join(MODELS, name)


def real_pixels():
    p = {"do_resize": True, "shortest_edge": 224, "do_center_crop": True, "crop_width": 224,
         "crop_height": 224, "do_rescale": True, "rescale_factor": 1 / 255,
         "do_normalize": True, "mean": mcf.OPENAI_MEAN, "std": mcf.OPENAI_STD}
    out = []
    for f in REAL_IMAGES:
        arr = np.asarray(Image.open(os.path.join(REAL, f)).convert("RGB"))
        out.append(hf_pixels(arr, p)[0])
    return np.stack(out)


def resize_cases():
    """cv2.resize and the whole map pipeline on random grids (tests of nn/cam.h)."""
    rng = np.random.default_rng(40)
    cases = []
    for (gw, gh), (ow, oh), stride in [((4, 4), (32, 32), 1), ((7, 5), (50, 33), 1),
                                       ((5, 6), (3, 4), 1), ((1, 3), (4, 9), 1),
                                       ((3, 3), (3, 3), 1), ((7, 7), (224, 224), 7)]:
        grid = rng.standard_normal((gh, gw)).astype(np.float32)
        resized = cv2.resize(grid, (ow, oh))[::stride, ::stride]
        pipeline = final_maps(grid[None].astype(np.float64), (ow, oh))[0][::stride, ::stride]
        cases.append(dict(grid_width=gw, grid_height=gh, out_width=ow, out_height=oh,
                          stride=stride, grid=grid.ravel().tolist(),
                          resized=resized.ravel().tolist(), scaled=pipeline.ravel().tolist()))
    # A grid the ReLU zeroes everywhere: an all-zero map.
    grid = -np.abs(rng.standard_normal((2, 2))).astype(np.float32)
    cases.append(dict(grid_width=2, grid_height=2, out_width=5, out_height=5, stride=1,
                      grid=grid.ravel().tolist(), resized=cv2.resize(grid, (5, 5)).ravel().tolist(),
                      scaled=final_maps(grid[None].astype(np.float64), (5, 5))[0].ravel().tolist()))
    return cases


def show_cam_on_image(img, mask, use_rgb=False, colormap=cv2.COLORMAP_JET, image_weight=0.5):
    """utils/image.py show_cam_on_image."""
    heatmap = cv2.applyColorMap(np.uint8(255 * mask), colormap)
    if use_rgb:
        heatmap = cv2.cvtColor(heatmap, cv2.COLOR_BGR2RGB)
    heatmap = np.float32(heatmap) / 255
    if np.max(img) > 1:
        raise Exception("The input image should np.float32 in the range [0, 1]")
    cam = (1 - image_weight) * heatmap + image_weight * img
    cam = cam / np.max(cam)
    return np.uint8(255 * cam)


def overlay_case():
    """The jet table (RGB) and an overlay as the CLIP example makes it (float32 RGB / 255)."""
    lut = cv2.applyColorMap(np.arange(256, dtype=np.uint8).reshape(1, 256), cv2.COLORMAP_JET)
    lut = cv2.cvtColor(lut, cv2.COLOR_BGR2RGB)[0]
    rng = np.random.default_rng(41)
    h, w = 7, 9
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    mask = rng.random((h, w), dtype=np.float32)
    mask[0, 0], mask[0, 1], mask[1, 0] = 0.0, 1.0, np.float32(0.999)
    out = show_cam_on_image(np.float32(rgb) / 255, mask, use_rgb=True)
    return dict(jet_rgb=lut.ravel().tolist(), width=w, height=h, image=rgb.ravel().tolist(),
                mask=mask.ravel().tolist(), overlay=out.ravel().tolist())


def main():
    if "--overlay-only" in sys.argv:
        path = os.path.join(OUT, "cases.json")
        with open(path) as f:
            data = json.load(f, object_pairs_hook=OrderedDict)
        data["overlay"] = overlay_case()
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        return 0
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    d = model_dir("cam_b32")
    mcf.write_model(d, SPEC_CAM_B32, mcf.random_weights(SPEC_CAM_B32, 40), "hf", "F16", 407)
    with open(os.path.join(d, "texts.json"), "w") as f:
        json.dump({"texts": mcf.make_texts(SPEC_CAM_B32, 47, eos=407)}, f, separators=(",", ":"))
        f.write("\n")
    cases = []
    for name, pixels_file in [("hf_a_f32", "pixels_32.npy"), ("oc_b_f32", "pixels_24.npy")]:
        model = mcf.load_model_dir(model_dir(name))
        px = np.load(os.path.join(MODELS, pixels_file))
        side = int(round(math.sqrt(px.shape[1] / 3)))
        entry = run_case(name, model, px.reshape(-1, 3, side, side), [1], [2, 4], 1)
        entry.update(model=f"models/{name}", pixels=f"models/{pixels_file}")
        cases.append(entry)
    entry = run_case("cam_b32", mcf.load_model_dir(d), real_pixels(), [3], [5, 6], 3)
    entry.update(model="cam/cam_b32", images=REAL_IMAGES)
    cases.append(entry)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(OrderedDict(cases=cases, resize=resize_cases(), overlay=overlay_case()), f,
                  indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(OUT) for x in fs)
    print(f"wrote {OUT}: {total / 1e6:.3f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
