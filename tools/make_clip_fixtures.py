#!/usr/bin/python3
"""Tiny random CLIP models in both checkpoint layouts, and reference embeddings for them.

Writes tests/fixtures/encode/models/ (read by tests/encode/models/clip/clip_model_*_test.cpp):
  <case>/config.json + model.safetensors                      (Hugging Face layout), or
  <case>/open_clip_config.json + open_clip_model.safetensors  (open_clip layout)
  <case>/texts.json              token id sequences, lengths 2..77
  <case>/image_embeddings.npy    float32 [n_images, embed], reference forward in float64
  <case>/text_embeddings.npy     float32 [n_texts, embed]
  pixels_<size>.npy              float32 [n_images, 3 * size * size] normalised CHW images
  cases.json                     the list of cases

The reference forwards are independent of the C++ code and of each other:
  open_clip layout: torch.nn modules named and wired as open_clip's CLIP (nn.MultiheadAttention,
    nn.LayerNorm, QuickGELU / nn.GELU), loaded with load_state_dict(strict=True);
  Hugging Face layout: the math of transformers' modeling_clip.py written out with
    torch.nn.functional on the state dict.
Both run in float64, on texts padded to the context length with id 0 (as open_clip pads), so
they also check that the native encoder's unpadded, truncated sequences give the same result.
F16 / BF16 cases use the weights rounded to that dtype, so references match what is stored.

Importable: write_safetensors, read_safetensors, write_model, load_model_dir,
reference_encode_images, reference_encode_texts, random_weights and the SPEC_* dicts are meant
for other fixture scripts (e.g. end-to-end `vlbias encode` fixtures).

Run with Debian's /usr/bin/python3 (torch 1.13, numpy):
  /usr/bin/python3 tools/make_clip_fixtures.py                      # the test fixtures
  /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32  # ViT-B/32 shape
"""
import argparse
import json
import math
import os
import struct
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "encode", "models")

# ---------------------------------------------------------------------------------------------
# Model shapes. mlp = MLP hidden width; heads divide widths.

SPEC_A = dict(image_size=32, patch_size=8, vision_width=48, vision_heads=4, vision_layers=2,
              vision_mlp=192, text_width=32, text_heads=2, text_layers=2, text_mlp=128,
              context_length=77, vocab_size=600, embed_dim=24, activation="quick_gelu")
SPEC_B = dict(image_size=24, patch_size=6, vision_width=32, vision_heads=2, vision_layers=2,
              vision_mlp=64, text_width=24, text_heads=2, text_layers=2, text_mlp=96,
              context_length=77, vocab_size=600, embed_dim=16, activation="gelu")
# ViT-B/32 (OpenAI CLIP), for benchmarks.
SPEC_VIT_B32 = dict(image_size=224, patch_size=32, vision_width=768, vision_heads=12,
                    vision_layers=12, vision_mlp=3072, text_width=512, text_heads=8, text_layers=12,
                    text_mlp=2048, context_length=77, vocab_size=49408, embed_dim=512,
                    activation="quick_gelu")

OPENAI_MEAN = [0.48145466, 0.4578275, 0.40821073]
OPENAI_STD = [0.26862954, 0.26130258, 0.27577711]

# ---------------------------------------------------------------------------------------------
# Random weights, canonical names (layout independent; qkv fused as open_clip's in_proj).


def random_weights(spec, seed):
    """float32 weights scaled so activations stay O(1) through every layer."""
    rng = np.random.default_rng(seed)

    def normal(shape, std):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    def ln(prefix, width, w):
        w[prefix + ".g"] = 1.0 + normal((width,), 0.1)
        w[prefix + ".b"] = normal((width,), 0.1)

    def tower(prefix, width, mlp, layers, w):
        for i in range(layers):
            p = f"{prefix}.{i}"
            ln(p + ".ln1", width, w)
            w[p + ".qkv.w"] = normal((3 * width, width), 1.5 / math.sqrt(width))
            w[p + ".qkv.b"] = normal((3 * width,), 0.1)
            w[p + ".out.w"] = normal((width, width), 1.0 / math.sqrt(width))
            w[p + ".out.b"] = normal((width,), 0.1)
            ln(p + ".ln2", width, w)
            w[p + ".fc1.w"] = normal((mlp, width), 1.0 / math.sqrt(width))
            w[p + ".fc1.b"] = normal((mlp,), 0.5)
            w[p + ".fc2.w"] = normal((width, mlp), 1.0 / math.sqrt(mlp))
            w[p + ".fc2.b"] = normal((width,), 0.1)

    s = spec
    vw, tw, p = s["vision_width"], s["text_width"], s["patch_size"]
    grid = s["image_size"] // p
    w = OrderedDict()
    w["v.patch"] = normal((vw, 3, p, p), 1.0 / math.sqrt(3 * p * p))
    w["v.class"] = normal((vw,), 1.0)
    w["v.pos"] = normal((grid * grid + 1, vw), 0.5)
    ln("v.ln_pre", vw, w)
    tower("v.layer", vw, s["vision_mlp"], s["vision_layers"], w)
    ln("v.ln_post", vw, w)
    w["v.proj"] = normal((s["embed_dim"], vw), 1.0 / math.sqrt(vw))  # [embed, width]
    w["t.tok"] = normal((s["vocab_size"], tw), 1.0)
    w["t.pos"] = normal((s["context_length"], tw), 0.5)
    tower("t.layer", tw, s["text_mlp"], s["text_layers"], w)
    ln("t.ln_final", tw, w)
    w["t.proj"] = normal((s["embed_dim"], tw), 1.0 / math.sqrt(tw))
    w["logit_scale"] = np.array(math.log(1 / 0.07), dtype=np.float32)
    return w


def hf_state_dict(w, spec):
    """transformers CLIPModel names (modeling_clip.py)."""
    sd = OrderedDict()

    def tower(src, dst, width, layers):
        for i in range(layers):
            s, d = f"{src}.{i}", f"{dst}.encoder.layers.{i}"
            sd[d + ".layer_norm1.weight"] = w[s + ".ln1.g"]
            sd[d + ".layer_norm1.bias"] = w[s + ".ln1.b"]
            for j, name in enumerate(["q_proj", "k_proj", "v_proj"]):
                sd[f"{d}.self_attn.{name}.weight"] = w[s + ".qkv.w"][j * width:(j + 1) * width]
                sd[f"{d}.self_attn.{name}.bias"] = w[s + ".qkv.b"][j * width:(j + 1) * width]
            sd[d + ".self_attn.out_proj.weight"] = w[s + ".out.w"]
            sd[d + ".self_attn.out_proj.bias"] = w[s + ".out.b"]
            sd[d + ".layer_norm2.weight"] = w[s + ".ln2.g"]
            sd[d + ".layer_norm2.bias"] = w[s + ".ln2.b"]
            sd[d + ".mlp.fc1.weight"] = w[s + ".fc1.w"]
            sd[d + ".mlp.fc1.bias"] = w[s + ".fc1.b"]
            sd[d + ".mlp.fc2.weight"] = w[s + ".fc2.w"]
            sd[d + ".mlp.fc2.bias"] = w[s + ".fc2.b"]

    sd["text_model.embeddings.token_embedding.weight"] = w["t.tok"]
    sd["text_model.embeddings.position_embedding.weight"] = w["t.pos"]
    tower("t.layer", "text_model", spec["text_width"], spec["text_layers"])
    sd["text_model.final_layer_norm.weight"] = w["t.ln_final.g"]
    sd["text_model.final_layer_norm.bias"] = w["t.ln_final.b"]
    sd["vision_model.embeddings.class_embedding"] = w["v.class"]
    sd["vision_model.embeddings.patch_embedding.weight"] = w["v.patch"]
    sd["vision_model.embeddings.position_embedding.weight"] = w["v.pos"]
    sd["vision_model.pre_layrnorm.weight"] = w["v.ln_pre.g"]
    sd["vision_model.pre_layrnorm.bias"] = w["v.ln_pre.b"]
    tower("v.layer", "vision_model", spec["vision_width"], spec["vision_layers"])
    sd["vision_model.post_layernorm.weight"] = w["v.ln_post.g"]
    sd["vision_model.post_layernorm.bias"] = w["v.ln_post.b"]
    sd["visual_projection.weight"] = w["v.proj"]
    sd["text_projection.weight"] = w["t.proj"]
    sd["logit_scale"] = w["logit_scale"]
    return sd


def open_clip_state_dict(w, spec):
    """open_clip CLIP names (model.py / transformer.py); projections stored as x @ P."""
    sd = OrderedDict()

    def tower(src, dst, layers):
        for i in range(layers):
            s, d = f"{src}.{i}", f"{dst}.resblocks.{i}"
            sd[d + ".ln_1.weight"] = w[s + ".ln1.g"]
            sd[d + ".ln_1.bias"] = w[s + ".ln1.b"]
            sd[d + ".attn.in_proj_weight"] = w[s + ".qkv.w"]
            sd[d + ".attn.in_proj_bias"] = w[s + ".qkv.b"]
            sd[d + ".attn.out_proj.weight"] = w[s + ".out.w"]
            sd[d + ".attn.out_proj.bias"] = w[s + ".out.b"]
            sd[d + ".ln_2.weight"] = w[s + ".ln2.g"]
            sd[d + ".ln_2.bias"] = w[s + ".ln2.b"]
            sd[d + ".mlp.c_fc.weight"] = w[s + ".fc1.w"]
            sd[d + ".mlp.c_fc.bias"] = w[s + ".fc1.b"]
            sd[d + ".mlp.c_proj.weight"] = w[s + ".fc2.w"]
            sd[d + ".mlp.c_proj.bias"] = w[s + ".fc2.b"]

    sd["positional_embedding"] = w["t.pos"]
    sd["text_projection"] = np.ascontiguousarray(w["t.proj"].T)
    sd["logit_scale"] = w["logit_scale"]
    sd["visual.class_embedding"] = w["v.class"]
    sd["visual.positional_embedding"] = w["v.pos"]
    sd["visual.proj"] = np.ascontiguousarray(w["v.proj"].T)
    sd["visual.conv1.weight"] = w["v.patch"]
    sd["visual.ln_pre.weight"] = w["v.ln_pre.g"]
    sd["visual.ln_pre.bias"] = w["v.ln_pre.b"]
    tower("v.layer", "visual.transformer", spec["vision_layers"])
    sd["visual.ln_post.weight"] = w["v.ln_post.g"]
    sd["visual.ln_post.bias"] = w["v.ln_post.b"]
    sd["token_embedding.weight"] = w["t.tok"]
    tower("t.layer", "transformer", spec["text_layers"])
    sd["ln_final.weight"] = w["t.ln_final.g"]
    sd["ln_final.bias"] = w["t.ln_final.b"]
    return sd


# ---------------------------------------------------------------------------------------------
# Configs.


def hf_config(spec, eos_token_id):
    act = spec["activation"]
    text = dict(model_type="clip_text_model", hidden_size=spec["text_width"],
                intermediate_size=spec["text_mlp"], num_hidden_layers=spec["text_layers"],
                num_attention_heads=spec["text_heads"],
                max_position_embeddings=spec["context_length"], vocab_size=spec["vocab_size"],
                hidden_act=act, layer_norm_eps=1e-5, attention_dropout=0.0, dropout=0.0,
                initializer_range=0.02, initializer_factor=1.0, pad_token_id=1,
                bos_token_id=spec["vocab_size"] - 2, eos_token_id=eos_token_id,
                projection_dim=spec["embed_dim"])
    vision = dict(model_type="clip_vision_model", hidden_size=spec["vision_width"],
                  intermediate_size=spec["vision_mlp"], num_hidden_layers=spec["vision_layers"],
                  num_attention_heads=spec["vision_heads"], num_channels=3,
                  image_size=spec["image_size"], patch_size=spec["patch_size"], hidden_act=act,
                  layer_norm_eps=1e-5, attention_dropout=0.0, dropout=0.0,
                  initializer_range=0.02, initializer_factor=1.0,
                  projection_dim=spec["embed_dim"])
    return OrderedDict(architectures=["CLIPModel"], model_type="clip",
                       projection_dim=spec["embed_dim"], logit_scale_init_value=2.6592,
                       initializer_factor=1.0, torch_dtype="float32", text_config=text,
                       vision_config=vision)


def open_clip_config(spec):
    vision = OrderedDict(image_size=spec["image_size"], layers=spec["vision_layers"],
                         width=spec["vision_width"], patch_size=spec["patch_size"],
                         head_width=spec["vision_width"] // spec["vision_heads"],
                         mlp_ratio=spec["vision_mlp"] / spec["vision_width"])
    text = OrderedDict(context_length=spec["context_length"], vocab_size=spec["vocab_size"],
                       width=spec["text_width"], heads=spec["text_heads"],
                       layers=spec["text_layers"], mlp_ratio=spec["text_mlp"] / spec["text_width"])
    model = OrderedDict(embed_dim=spec["embed_dim"],
                        quick_gelu=spec["activation"] == "quick_gelu", vision_cfg=vision,
                        text_cfg=text)
    preprocess = OrderedDict(mean=OPENAI_MEAN, std=OPENAI_STD, interpolation="bicubic",
                             resize_mode="shortest")
    return OrderedDict(model_cfg=model, preprocess_cfg=preprocess)


# ---------------------------------------------------------------------------------------------
# safetensors, written and read by hand: 8-byte little-endian header length, JSON header
# padded with spaces to a multiple of 8, then the tensors back to back (little-endian).


def to_bf16_bits(a):
    """float32 -> bfloat16 bits, round to nearest even (finite inputs)."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return b.astype(np.uint16)


def from_bf16_bits(u):
    return (u.astype(np.uint32) << 16).view(np.float32)


def round_to_dtype(a, dtype):
    """The float32 values a tensor holds after storing it as `dtype`."""
    a = np.asarray(a, dtype=np.float32)
    if dtype == "F32":
        return a
    if dtype == "F16":
        return a.astype("<f2").astype(np.float32)
    if dtype == "BF16":
        return from_bf16_bits(to_bf16_bits(a)).reshape(a.shape)
    raise ValueError(dtype)


def tensor_bytes(a, dtype):
    a = np.asarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    if dtype == "BF16":
        return to_bf16_bits(a).astype("<u2").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype="F32", metadata=None):
    """tensors: ordered name -> float array; all stored as `dtype` (F32, F16 or BF16)."""
    header = OrderedDict()
    if metadata:
        header["__metadata__"] = dict(metadata)
    blobs, offset = [], 0
    for name, a in tensors.items():
        data = tensor_bytes(a, dtype)
        header[name] = dict(dtype=dtype, shape=list(np.shape(a)),
                            data_offsets=[offset, offset + len(data)])
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)
    os.replace(tmp, path)


def read_safetensors(path):
    """name -> float32 numpy array (F32, F16, BF16)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        buf = raw[base + b:base + e]
        dt = info["dtype"]
        if dt == "F32":
            a = np.frombuffer(buf, dtype="<f4").astype(np.float32)
        elif dt == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif dt == "BF16":
            a = from_bf16_bits(np.frombuffer(buf, dtype="<u2"))
        else:
            raise ValueError(f"{path}: tensor {name} has dtype {dt}")
        out[name] = a.reshape(info["shape"])
    return out


def write_model(directory, spec, weights, layout, dtype="F32", eos_token_id=None):
    """Writes one model directory; returns the float32 weights as stored (rounded to dtype)."""
    os.makedirs(directory, exist_ok=True)
    stored = OrderedDict((k, round_to_dtype(v, dtype)) for k, v in weights.items())
    if layout == "hf":
        eos = spec["vocab_size"] - 1 if eos_token_id is None else eos_token_id
        with open(os.path.join(directory, "config.json"), "w") as f:
            json.dump(hf_config(spec, eos), f, indent=2)
            f.write("\n")
        write_safetensors(os.path.join(directory, "model.safetensors"),
                          hf_state_dict(stored, spec), dtype, {"format": "pt"})
    elif layout == "open_clip":
        with open(os.path.join(directory, "open_clip_config.json"), "w") as f:
            json.dump(open_clip_config(spec), f, indent=2)
            f.write("\n")
        write_safetensors(os.path.join(directory, "open_clip_model.safetensors"),
                          open_clip_state_dict(stored, spec), dtype, {"format": "pt"})
    else:
        raise ValueError(layout)
    return stored


def load_model_dir(directory):
    """(layout, config dict, state dict of float64 torch tensors) of a model directory."""
    oc_cfg = os.path.join(directory, "open_clip_config.json")
    if os.path.exists(oc_cfg):
        with open(oc_cfg) as f:
            cfg = json.load(f)
        sd = read_safetensors(os.path.join(directory, "open_clip_model.safetensors"))
        layout = "open_clip"
    else:
        with open(os.path.join(directory, "config.json")) as f:
            cfg = json.load(f)
        sd = read_safetensors(os.path.join(directory, "model.safetensors"))
        layout = "hf"
    return layout, cfg, OrderedDict((k, torch.from_numpy(v).double()) for k, v in sd.items())


# ---------------------------------------------------------------------------------------------
# Reference 1: open_clip's modules (model.py / transformer.py), float64.


class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, width, heads, mlp_width, act):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(OrderedDict([("c_fc", nn.Linear(width, mlp_width)),
                                              ("gelu", act()),
                                              ("c_proj", nn.Linear(mlp_width, width))]))

    def forward(self, x, attn_mask=None):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False, attn_mask=attn_mask)[0]
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, width, layers, heads, mlp_width, act):
        super().__init__()
        self.resblocks = nn.ModuleList(
            [ResidualAttentionBlock(width, heads, mlp_width, act) for _ in range(layers)])

    def forward(self, x, attn_mask=None):
        for r in self.resblocks:
            x = r(x, attn_mask=attn_mask)
        return x


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, width, layers, heads, mlp_width, embed_dim, act):
        super().__init__()
        grid = image_size // patch_size
        self.conv1 = nn.Conv2d(3, width, kernel_size=patch_size, stride=patch_size, bias=False)
        self.class_embedding = nn.Parameter(torch.zeros(width))
        self.positional_embedding = nn.Parameter(torch.zeros(grid * grid + 1, width))
        self.ln_pre = nn.LayerNorm(width)
        self.transformer = Transformer(width, layers, heads, mlp_width, act)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Parameter(torch.zeros(width, embed_dim))

    def forward(self, x):
        x = self.conv1(x)
        x = x.reshape(x.shape[0], x.shape[1], -1).permute(0, 2, 1)
        cls = self.class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1],
                                                             dtype=x.dtype)
        x = torch.cat([cls, x], dim=1) + self.positional_embedding
        x = self.ln_pre(x)
        x = self.transformer(x)
        x = self.ln_post(x)
        return x[:, 0] @ self.proj  # pool_type 'tok'


class OpenClip(nn.Module):
    """open_clip.CLIP with a ViT vision tower (names as in its state dict)."""

    def __init__(self, model_cfg):
        super().__init__()
        v, t = model_cfg["vision_cfg"], model_cfg["text_cfg"]
        act = QuickGELU if model_cfg.get("quick_gelu", False) else nn.GELU
        vw, tw = v["width"], t["width"]
        self.visual = VisionTransformer(v["image_size"], v["patch_size"], vw, v["layers"],
                                        vw // v.get("head_width", 64),
                                        int(vw * v.get("mlp_ratio", 4.0)),
                                        model_cfg["embed_dim"], act)
        self.context_length = t["context_length"]
        self.transformer = Transformer(tw, t["layers"], t["heads"],
                                       int(tw * t.get("mlp_ratio", 4.0)), act)
        self.token_embedding = nn.Embedding(t["vocab_size"], tw)
        self.positional_embedding = nn.Parameter(torch.zeros(self.context_length, tw))
        self.ln_final = nn.LayerNorm(tw)
        self.text_projection = nn.Parameter(torch.zeros(tw, model_cfg["embed_dim"]))
        self.logit_scale = nn.Parameter(torch.zeros([]))
        mask = torch.full((self.context_length, self.context_length), float("-inf"))
        self.register_buffer("attn_mask", mask.triu_(1), persistent=False)

    def encode_image(self, pixels):
        return self.visual(pixels)

    def encode_text(self, text):
        """text: [batch, context_length] ids padded with 0 (open_clip's tokenizer)."""
        x = self.token_embedding(text) + self.positional_embedding
        x = self.transformer(x, attn_mask=self.attn_mask.to(x.dtype))
        x = self.ln_final(x)
        x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)]  # pool_type 'argmax'
        return x @ self.text_projection


# ---------------------------------------------------------------------------------------------
# Reference 2: transformers' modeling_clip.py math on the state dict, float64.


def _hf_act(name):
    if name == "quick_gelu":
        return lambda x: x * torch.sigmoid(1.702 * x)
    if name == "gelu":
        return lambda x: F.gelu(x)  # exact erf form
    raise ValueError(name)


def _hf_encoder(sd, prefix, cfg, h, causal):
    """CLIPEncoder: layers of CLIPEncoderLayer with eager attention."""
    width, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    d = width // heads
    eps = cfg.get("layer_norm_eps", 1e-5)
    act = _hf_act(cfg.get("hidden_act", "quick_gelu"))
    b, n, _ = h.shape
    mask = None
    if causal:  # _create_4d_causal_attention_mask: dtype min above the diagonal
        mask = torch.full((n, n), torch.finfo(h.dtype).min, dtype=h.dtype).triu(1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"{prefix}.encoder.layers.{i}."

        def lin(x, name):
            return F.linear(x, sd[p + name + ".weight"], sd[p + name + ".bias"])

        residual = h
        x = F.layer_norm(h, (width,), sd[p + "layer_norm1.weight"], sd[p + "layer_norm1.bias"],
                         eps)
        q = lin(x, "self_attn.q_proj").view(b, n, heads, d).transpose(1, 2)
        k = lin(x, "self_attn.k_proj").view(b, n, heads, d).transpose(1, 2)
        v = lin(x, "self_attn.v_proj").view(b, n, heads, d).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2)) * d ** -0.5
        if mask is not None:
            w = w + mask
        a = torch.matmul(torch.softmax(w, dim=-1), v).transpose(1, 2).reshape(b, n, width)
        h = residual + lin(a, "self_attn.out_proj")
        residual = h
        x = F.layer_norm(h, (width,), sd[p + "layer_norm2.weight"], sd[p + "layer_norm2.bias"],
                         eps)
        h = residual + lin(act(lin(x, "mlp.fc1")), "mlp.fc2")
    return h


def hf_encode_images(sd, cfg, pixels):
    v = cfg["vision_config"]
    eps = v.get("layer_norm_eps", 1e-5)
    p = v["patch_size"]
    x = F.conv2d(pixels, sd["vision_model.embeddings.patch_embedding.weight"], stride=p)
    x = x.flatten(2).transpose(1, 2)
    cls = sd["vision_model.embeddings.class_embedding"].expand(x.shape[0], 1, -1)
    h = torch.cat([cls, x], dim=1) + sd["vision_model.embeddings.position_embedding.weight"]
    h = F.layer_norm(h, (h.shape[-1],), sd["vision_model.pre_layrnorm.weight"],
                     sd["vision_model.pre_layrnorm.bias"], eps)
    h = _hf_encoder(sd, "vision_model", v, h, causal=False)
    pooled = F.layer_norm(h[:, 0], (h.shape[-1],), sd["vision_model.post_layernorm.weight"],
                          sd["vision_model.post_layernorm.bias"], eps)
    return F.linear(pooled, sd["visual_projection.weight"])


def hf_encode_texts(sd, cfg, ids):
    """ids: [batch, length] (padded with 0)."""
    t = cfg["text_config"]
    eps = t.get("layer_norm_eps", 1e-5)
    n = ids.shape[1]
    h = sd["text_model.embeddings.token_embedding.weight"][ids]
    h = h + sd["text_model.embeddings.position_embedding.weight"][:n]
    h = _hf_encoder(sd, "text_model", t, h, causal=True)
    h = F.layer_norm(h, (h.shape[-1],), sd["text_model.final_layer_norm.weight"],
                     sd["text_model.final_layer_norm.bias"], eps)
    eos = t.get("eos_token_id", 49407)
    if eos == 2:  # legacy configs: the EOT is the largest id
        index = ids.argmax(dim=-1)
    else:  # first position of eos_token_id (0 when absent)
        index = (ids == eos).int().argmax(dim=-1)
    pooled = h[torch.arange(h.shape[0]), index]
    return F.linear(pooled, sd["text_projection.weight"])


# ---------------------------------------------------------------------------------------------
# Reference entry points (float64 numpy out).


def _open_clip_module(cfg, sd):
    model = OpenClip(cfg["model_cfg"]).double()
    model.load_state_dict(sd, strict=True)
    return model.eval()


def reference_encode_images(model, pixels):
    """model: load_model_dir(...) tuple; pixels: [n, 3, S, S] float array. -> [n, embed]."""
    layout, cfg, sd = model
    x = torch.from_numpy(np.asarray(pixels, dtype=np.float64))
    with torch.no_grad():
        if layout == "open_clip":
            return _open_clip_module(cfg, sd).encode_image(x).numpy()
        return hf_encode_images(sd, cfg, x).numpy()


def reference_encode_texts(model, texts):
    """texts: list of id lists (unpadded); each is padded with 0 to the context length."""
    layout, cfg, sd = model
    ctx = (cfg["model_cfg"]["text_cfg"] if layout == "open_clip" else cfg["text_config"]).get(
        "context_length" if layout == "open_clip" else "max_position_embeddings", 77)
    ids = torch.zeros((len(texts), ctx), dtype=torch.long)
    for i, t in enumerate(texts):
        ids[i, :len(t)] = torch.tensor(t, dtype=torch.long)
    with torch.no_grad():
        if layout == "open_clip":
            return _open_clip_module(cfg, sd).encode_text(ids).numpy()
        return hf_encode_texts(sd, cfg, ids).numpy()


# ---------------------------------------------------------------------------------------------
# Fixtures.

LENGTHS = [2, 3, 5, 8, 12, 16, 31, 50, 77]


def make_texts(spec, seed, eos=None):
    """Token sequences [SOT, ..., EOT] of LENGTHS, plus edge cases for the pooling rule.

    eos None: argmax pooling (EOT = vocab - 1, the largest id; SOT = vocab - 2).
    eos given: first-EOS pooling with EOT = eos, an id below SOT so argmax would pick SOT.
    """
    rng = np.random.default_rng(seed)
    v = spec["vocab_size"]
    sot, eot = v - 2, (v - 1 if eos is None else eos)

    def body(n):
        out = []
        while len(out) < n:
            x = int(rng.integers(1, v - 2))
            if x != eot:
                out.append(x)
        return out

    texts = [[sot] + body(n - 2) + [eot] for n in LENGTHS]
    if eos is None:
        texts.append([sot] + body(4) + [eot] + body(3) + [eot])  # two EOTs: the first is pooled
        texts.append(body(6))  # no SOT/EOT: argmax somewhere inside
    else:
        texts.append([sot] + body(4) + [eot] + body(6))  # EOS mid-sequence, tokens after it
        texts.append([sot] + body(7))  # no EOS: transformers pools position 0
    texts.append([sot])  # one token
    return texts


CASES = [
    # name, spec, spec name, layout, dtype, HF eos_token_id
    ("hf_a_f32", "A", "hf", "F32", 407),
    ("hf_a_f16", "A", "hf", "F16", 407),
    ("oc_a_f16", "A", "open_clip", "F16", None),
    ("oc_b_f32", "B", "open_clip", "F32", None),
    ("hf_b_bf16_eos2", "B", "hf", "BF16", 2),
]
SPECS = {"A": (SPEC_A, 11), "B": (SPEC_B, 22)}
N_IMAGES = 3


def write_npy(path, a):
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))


def make_fixtures(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    weights = {k: random_weights(spec, seed) for k, (spec, seed) in SPECS.items()}
    pixels = {}
    for k, (spec, seed) in SPECS.items():
        rng = np.random.default_rng(seed + 1000)
        s = spec["image_size"]
        px = rng.standard_normal((N_IMAGES, 3, s, s), dtype=np.float32)
        pixels[k] = px
        write_npy(os.path.join(out_dir, f"pixels_{s}.npy"), px.reshape(N_IMAGES, -1))
    manifest = []
    for name, key, layout, dtype, eos in CASES:
        spec, seed = SPECS[key]
        d = os.path.join(out_dir, name)
        write_model(d, spec, weights[key], layout, dtype, eos)
        model = load_model_dir(d)
        texts = make_texts(spec, seed + 7, eos=None if layout == "open_clip" or eos == 2 else eos)
        with open(os.path.join(d, "texts.json"), "w") as f:
            json.dump({"texts": texts}, f, separators=(",", ":"))
            f.write("\n")
        img = reference_encode_images(model, pixels[key])
        txt = reference_encode_texts(model, texts)
        write_npy(os.path.join(d, "image_embeddings.npy"), img)
        write_npy(os.path.join(d, "text_embeddings.npy"), txt)
        manifest.append(dict(name=name, layout=layout, dtype=dtype,
                             pixels=f"pixels_{spec['image_size']}.npy",
                             activation=spec["activation"],
                             pool_argmax=layout == "open_clip" or eos == 2,
                             image_size=spec["image_size"], embed_dim=spec["embed_dim"]))
        print(f"{name}: images {img.shape} |max| {np.abs(img).max():.3f}, texts {txt.shape} "
              f"|max| {np.abs(txt).max():.3f}")
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump({"cases": manifest}, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(out_dir) for x in fs)
    print(f"wrote {out_dir}: {total / 1e6:.3f} MB")


def make_bench_model(out_dir, layout):
    """A ViT-B/32-shaped random model (F32), for bench_encode and bench/vs_torch_encode.py."""
    w = random_weights(SPEC_VIT_B32, 2024)
    write_model(out_dir, SPEC_VIT_B32, w, layout, "F32")
    print(f"wrote {out_dir} ({layout}, ViT-B/32 shape)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=FIXTURES, help="fixture directory (default: %(default)s)")
    ap.add_argument("--bench-model", metavar="DIR",
                    help="write a ViT-B/32-shaped random model to DIR instead of the fixtures")
    ap.add_argument("--layout", choices=["open_clip", "hf"], default="open_clip",
                    help="layout of --bench-model (default: %(default)s)")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    if args.bench_model:
        make_bench_model(args.bench_model, args.layout)
    else:
        make_fixtures(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
