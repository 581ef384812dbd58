#!/usr/bin/python3
"""End-to-end fixtures for `vlbias encode` (tests/cli/encode_test.cpp): image files and texts
through tiny random CLIP models, with reference embeddings from an independent pipeline:

  images   PIL.Image.open(...).convert("RGB") (Pillow 9.4), then the Hugging Face
           CLIPImageProcessor steps (tools/make_image_fixtures.hf_pixels: bicubic shortest-edge
           resize, floor center crop, float64 rescale, float32 normalise) for the HF model, and
           torchvision's (tv_pixels: round crop, ToTensor, Normalize) for the open_clip model;
  texts    the Python reference tokenizers of tools/make_tokenizer_fixtures.py (HF fast
           tokenizer pipeline for the HF model, open_clip's SimpleTokenizer for open_clip);
  forward  the float64 PyTorch references of tools/make_clip_fixtures.py (transformers'
           modeling_clip math for HF, open_clip's nn.MultiheadAttention modules for open_clip)
           on the weights as stored (F16 for the HF model, F32 for open_clip);
  then L2-normalised rows, saved as float32.

Writes tests/fixtures/encode/e2e/:
  hf/, open_clip/          model folders (weights, config, vocab.json, merges.txt,
                           preprocessor_config.json for HF)
  images/                  four images (JPEG 4:2:0, RGBA PNG, grey PNG, palette PNG)
  broken.jpg               a truncated JPEG
  images.csv               path column: the images in non-sorted order, broken.jpg and a
                           missing file (two failures to record)
  texts.csv, one_text.csv  prompts (contractions, accents, emoji, an over-long one, an empty one)
  hf_images.npy            the good rows of images.csv, HF model
  hf_images_folder.npy     images/ in sorted order, HF model
  open_clip_images_folder.npy
  hf_texts.npy, open_clip_texts.npy
  expected.json            folder order and the torchmetrics CLIPScore mean of the folder
                           against one_text.csv (HF model)

Run: /usr/bin/python3 tools/make_encode_fixtures.py
"""
import csv
import io
import json
import os
import pathlib
import shutil
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_clip_fixtures as clipfx  # noqa: E402
import make_image_fixtures as imgfx  # noqa: E402
import make_tokenizer_fixtures as tokfx  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "encode" / "e2e"
TOKENIZER = ROOT / "tests" / "fixtures" / "encode" / "tokenizer"

TEXTS = [
    "a photo of a friendly person",
    "a photo of a competent doctor",
    "don't they're it's I'd we'll",
    "Café in Zürich, naïve Ångström",
    "a smiling person 😀👍🏽 at 3.14 pm!!!",
    "",
    " ".join(["a photo of a warm, trustworthy and competent person"] * 10),
    "A PHOTO OF A   SAD\tperson\n",
]
ONE_TEXT = "a photo of a person"


def unit(m):
    m = np.asarray(m, dtype=np.float64)
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def write_images():
    images = OUT / "images"
    images.mkdir(parents=True)
    files = {}
    im = Image.fromarray(imgfx.smooth(45, 33, 1))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=90, subsampling=2)
    files["a_photo.jpg"] = buf.getvalue()
    rgba = Image.fromarray(imgfx.smooth(20, 28, 2, channels=4), "RGBA")
    buf = io.BytesIO()
    rgba.save(buf, "PNG")
    files["b_rgba.png"] = buf.getvalue()
    grey = Image.fromarray(imgfx.smooth(40, 40, 3)[:, :, 0], "L")
    buf = io.BytesIO()
    grey.save(buf, "PNG")
    files["c_grey.png"] = buf.getvalue()
    pal = Image.fromarray(imgfx.smooth(50, 31, 4)).convert("P", palette=Image.ADAPTIVE, colors=16)
    buf = io.BytesIO()
    pal.save(buf, "PNG")
    files["d_palette.png"] = buf.getvalue()
    for name, data in files.items():
        (images / name).write_bytes(data)
    (OUT / "broken.jpg").write_bytes(files["a_photo.jpg"][: len(files["a_photo.jpg"]) // 2])
    return sorted(files)


def model_dir(name, layout, spec, seed, dtype):
    d = OUT / name
    clipfx.write_model(str(d), spec, clipfx.random_weights(spec, seed), layout, dtype=dtype)
    shutil.copy(TOKENIZER / "vocab.json", d / "vocab.json")
    shutil.copy(TOKENIZER / "merges.txt", d / "merges.txt")
    return d


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    with open(TOKENIZER / "vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    merges = []
    with open(TOKENIZER / "merges.txt", encoding="utf-8") as f:
        for line in f.read().split("\n")[1:]:
            if line:
                a, b = line.split(" ")
                merges.append((a, b))
    spec = dict(clipfx.SPEC_A, vocab_size=max(vocab.values()) + 1)
    hf = model_dir("hf", "hf", spec, 101, "F16")
    spec_oc = dict(clipfx.SPEC_B, vocab_size=max(vocab.values()) + 1)
    oc = model_dir("open_clip", "open_clip", spec_oc, 202, "F32")
    size = spec["image_size"]
    preprocessor = {
        "crop_size": {"height": size, "width": size},
        "do_center_crop": True,
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": clipfx.OPENAI_MEAN,
        "image_processor_type": "CLIPImageProcessor",
        "image_std": clipfx.OPENAI_STD,
        "resample": 3,
        "rescale_factor": 1 / 255,
        "size": {"shortest_edge": size},
    }
    (hf / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2) + "\n")

    names = write_images()
    table_order = ["images/d_palette.png", "images/a_photo.jpg", "broken.jpg",
                   "images/c_grey.png", "images/missing.png", "images/b_rgba.png"]
    with open(OUT / "images.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["path"])
        for p in table_order:
            w.writerow([p])
    with open(OUT / "texts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["text"])
        for t in TEXTS:
            w.writerow([t])
    (OUT / "one_text.csv").write_text("text\n" + ONE_TEXT + "\n")

    def rgb(path):
        return np.asarray(Image.open(path).convert("RGB"))

    def pixels(paths, flavour, s):
        p = {"do_resize": True, "do_center_crop": True, "do_rescale": True,
             "rescale_factor": 1 / 255, "do_normalize": True, "mean": clipfx.OPENAI_MEAN,
             "std": clipfx.OPENAI_STD, "shortest_edge": s, "crop_width": s, "crop_height": s}
        fn = imgfx.hf_pixels if flavour == "hf" else imgfx.tv_pixels
        return np.stack([fn(rgb(OUT / q), p)[0] for q in paths])

    hf_model = clipfx.load_model_dir(str(hf))
    oc_model = clipfx.load_model_dir(str(oc))
    good = [p for p in table_order if (OUT / p).exists() and p != "broken.jpg"]
    folder = ["images/" + n for n in names]
    np.save(OUT / "hf_images.npy",
            unit(clipfx.reference_encode_images(hf_model, pixels(good, "hf", size))))
    hf_folder = unit(clipfx.reference_encode_images(hf_model, pixels(folder, "hf", size)))
    np.save(OUT / "hf_images_folder.npy", hf_folder)
    np.save(OUT / "open_clip_images_folder.npy",
            unit(clipfx.reference_encode_images(
                oc_model, pixels(folder, "tv", spec_oc["image_size"]))))

    hf_tok = tokfx.Reference(vocab, merges, "hf")
    oc_tok = tokfx.Reference(vocab, merges, "openclip")
    ctx = spec["context_length"]
    np.save(OUT / "hf_texts.npy", unit(clipfx.reference_encode_texts(
        hf_model, [hf_tok.tokenize(t, ctx) for t in TEXTS])))
    np.save(OUT / "open_clip_texts.npy", unit(clipfx.reference_encode_texts(
        oc_model, [oc_tok.tokenize(t, ctx) for t in TEXTS])))
    one = unit(clipfx.reference_encode_texts(hf_model, [hf_tok.tokenize(ONE_TEXT, ctx)]))
    cos = hf_folder.astype(np.float64) @ one[0].astype(np.float64)
    expected = {"folder_order": names,
                "torchmetrics_clipscore_mean": float(np.maximum(100 * cos, 0).mean()),
                "token_counts": [len(hf_tok.tokenize(t, 10**6)) for t in TEXTS]}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"wrote {OUT} ({total} bytes)")


if __name__ == "__main__":
    main()
