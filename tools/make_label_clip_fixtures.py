#!/usr/bin/python3
"""Reference CLIP zero-shot labels for `vlbias label --labeller clip` (tests/cli/label_test.cpp).

The tiny random CLIP models of the end-to-end encode fixtures (tests/fixtures/encode/e2e: hf/,
F16 weights, and open_clip/, F32; written by tools/make_encode_fixtures.py) label the good images
of e2e/images.csv with the prompt set tests/fixtures/labels/prompts.json (written here: two
attributes, template ensembles of three, one class with literal prompts). Everything is computed
independently of the C++ code, in float64:
  images   Pillow decode, then tools/make_image_fixtures.py's hf_pixels (HF) / tv_pixels
           (open_clip), as make_encode_fixtures.py;
  texts    the reference tokenizers of tools/make_tokenizer_fixtures.py;
  forward  the PyTorch float64 references of tools/make_clip_fixtures.py (imported);
  labels   CLIP's zero-shot ImageNet ensembling (mean of L2-normalised prompt embeddings,
           renormalised), softmax over each attribute's classes of exp(logit_scale) * cosine, the
           label the top class, or "unclear" when top-1 minus top-2 < MARGIN.

Writes tests/fixtures/labels/:
  prompts.json               the prompt set
  expected_<model>.csv       image, attribute, label, margin, p_<class>... per good image and
                             attribute, in images.csv order
  expected.json              the margin and each model's logit scale

Run: /usr/bin/python3 tools/make_label_clip_fixtures.py
"""
import csv
import json
import math
import os
import pathlib
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_clip_fixtures as clipfx  # noqa: E402
import make_image_fixtures as imgfx  # noqa: E402
import make_tokenizer_fixtures as tokfx  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
E2E = ROOT / "tests" / "fixtures" / "encode" / "e2e"
TOKENIZER = ROOT / "tests" / "fixtures" / "encode" / "tokenizer"
OUT = ROOT / "tests" / "fixtures" / "labels"

PROMPTS = {
    "name": "fixture",
    "source": "tools/make_label_clip_fixtures.py",
    "attributes": [
        {"name": "tone",
         "templates": ["a photo of a {} scene", "a {} picture", "an image that looks {}"],
         "classes": [{"name": "warm"}, {"name": "cold", "text": "cold and blue"},
                     {"name": "grey", "prompts": ["a grey photo", "a colourless photo"]}]},
        {"name": "mood",
         "templates": ["a photo of a {} person", "a {} face"],
         "classes": [{"name": "happy"}, {"name": "sad"}]},
    ],
}
# Abstain below this gap: chosen (below) between the rows' gaps so that some rows abstain.
MARGIN = None


def prompts_of(attr):
    out = []
    for c in attr["classes"]:
        if "prompts" in c:
            out.append(list(c["prompts"]))
        else:
            text = c.get("text", c["name"])
            out.append([t.replace("{}", text) for t in attr["templates"]])
    return out


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def load_tokenizer(mode):
    with open(TOKENIZER / "vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    merges = []
    with open(TOKENIZER / "merges.txt", encoding="utf-8") as f:
        for line in f.read().split("\n")[1:]:
            if line:
                a, b = line.split(" ")
                merges.append((a, b))
    return tokfx.Reference(vocab, merges, mode)


def good_images():
    with open(E2E / "images.csv", newline="") as f:
        paths = [row["path"] for row in csv.DictReader(f)]
    return [p for p in paths if (E2E / p).exists() and p != "broken.jpg"]


def probabilities(name, layout, paths):
    """Per image, per attribute: the class probabilities (float64), and the logit scale."""
    model = clipfx.load_model_dir(str(E2E / name))
    sd = model[2]
    scale = math.exp(float(np.asarray(sd["logit_scale"], dtype=np.float64).reshape(())))
    size = model[1]["vision_config"]["image_size"] if layout == "hf" else \
        model[1]["model_cfg"]["vision_cfg"]["image_size"]
    p = {"do_resize": True, "do_center_crop": True, "do_rescale": True, "rescale_factor": 1 / 255,
         "do_normalize": True, "mean": clipfx.OPENAI_MEAN, "std": clipfx.OPENAI_STD,
         "shortest_edge": size, "crop_width": size, "crop_height": size}
    fn = imgfx.hf_pixels if layout == "hf" else imgfx.tv_pixels
    pixels = np.stack([fn(np.asarray(Image.open(E2E / q).convert("RGB")), p)[0] for q in paths])
    images = unit(clipfx.reference_encode_images(model, pixels))
    tok = load_tokenizer("hf" if layout == "hf" else "openclip")
    out = [[] for _ in paths]
    for attr in PROMPTS["attributes"]:
        classes = []
        for texts in prompts_of(attr):
            e = unit(clipfx.reference_encode_texts(model, [tok.tokenize(t, 77) for t in texts]))
            classes.append(unit(e.mean(axis=0)))
        logits = scale * images @ np.stack(classes).T
        logits -= logits.max(axis=1, keepdims=True)
        prob = np.exp(logits)
        prob /= prob.sum(axis=1, keepdims=True)
        for i in range(len(paths)):
            out[i].append(prob[i])
    return out, scale


def gap_of(prob):
    s = np.sort(prob)[::-1]
    return s[0] - s[1]


def main():
    global MARGIN
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "prompts.json").write_text(json.dumps(PROMPTS, indent=1) + "\n")
    paths = good_images()
    results = {name: probabilities(name, layout, paths)
               for name, layout in (("hf", "hf"), ("open_clip", "open_clip"))}
    gaps = sorted(gap_of(p) for probs, _ in results.values() for row in probs for p in row)
    # A round margin between the middle gaps, at least 1e-3 from every gap.
    MARGIN = round((gaps[len(gaps) // 2 - 1] + gaps[len(gaps) // 2]) / 2, 4)
    assert min(abs(g - MARGIN) for g in gaps) > 1e-3, (MARGIN, gaps)
    classes = [c["name"] for a in PROMPTS["attributes"] for c in a["classes"]]
    for name, (probs, _) in results.items():
        with open(OUT / f"expected_{name}.csv", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["image", "attribute", "label", "margin"] + ["p_" + c for c in classes])
            for i, path in enumerate(paths):
                for a, attr in enumerate(PROMPTS["attributes"]):
                    p = probs[i][a]
                    names = [c["name"] for c in attr["classes"]]
                    label = names[int(np.argmax(p))] if gap_of(p) >= MARGIN else "unclear"
                    cells = [""] * len(classes)
                    for k, c in enumerate(names):
                        cells[classes.index(c)] = repr(float(p[k]))
                    w.writerow([path, attr["name"], label, repr(float(gap_of(p)))] + cells)
    expected = {"margin": MARGIN, "logit_scale": {n: s for n, (_, s) in results.items()},
                "images": paths}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print(f"wrote {OUT}; margin {MARGIN}, gaps {[round(g, 4) for g in gaps]}")


if __name__ == "__main__":
    main()
