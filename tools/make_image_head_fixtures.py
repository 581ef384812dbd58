#!/usr/bin/python3
"""Fixtures for `vlbias score image-head` (src/score/image_heads*.cpp, src/io/tensor/pickled_array.cpp)
in tests/fixtures/score/image_heads/.

Each head is built here as a PyTorch module written from its source's description, with
seeded random weights of the published layout but 32 wide (the published heads are 768 wide,
CLIP ViT-L/14; our loaders accept any width the tensors agree on):
  - safety-checker: diffusers' StableDiffusionSafetyChecker parameters concept_embeds [17, D],
    special_care_embeds [3, D], concept_embeds_weights [17], special_care_embeds_weights [3],
    beside a stand-in of its CLIP tower (vision_model.*, visual_projection.weight), saved as
    model.safetensors (written byte by byte) and as torch.save(state_dict) pytorch_model.bin;
  - laion-aesthetic: improved-aesthetic-predictor's MLP (nn.Sequential of Linear, Dropout,
    Linear, Dropout, Linear, Dropout, Linear, Linear; widths 32 -> 24 -> 16 -> 8 -> 4 -> 1
    here, 768 -> 1024 -> 128 -> 64 -> 16 -> 1 published), torch.save(state_dict) .pth;
  - heim-aesthetic: nn.Linear(32, 1), torch.save(state_dict) .pth;
  - q16: a [2, 32] float16 numpy array pickled with protocol 3 (as Q16's prompts.p) and a
    float32 one with protocol 5 (numpy's _frombuffer form);
  - clip-iqa: text embeddings of data/clip_iqa/prompts.csv (random, 32 rows) with encode's rows
    file.
The image embeddings E.npy are 12 random unnormalised rows with encode's rows file; rows 0-3
are steered near special-care and concept embeddings so that every branch of the safety
checker runs (special care raising the adjustment, a concept score of 0.0003 that diffusers'
rounding to 3 decimals leaves unflagged). References are float64 ports of each source's
forward (diffusers safety_checker.py's loop with its round(., 3); simple_inference.py's
normalized() and MLP; helm aesthetics_scorer.py and q16_toxicity_detector.py; torchmetrics
clip_iqa.py's _clip_iqa_compute) -> expected.json. Bad files (another head's weights, a
pickle calling os.system, an int64 array, a shape that disagrees with its bytes) are in bad/;
every pickle is also a seed of fuzz_pickled_array (fuzz/corpus/pickled_array/).

Run: /usr/bin/python3 tools/make_image_head_fixtures.py
"""
import csv
import io
import json
import os
import pickle
import struct

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "score", "image_heads")
D = 32
N = 12


def write_safetensors_file(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_rows(path, column, values):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["row", "input_row", column])
        for i, v in enumerate(values):
            w.writerow([i, i, v])


class SafetyChecker(torch.nn.Module):
    """diffusers' StableDiffusionSafetyChecker as its checkpoint stores it. The head reads CLIP
    image embeddings (vlbias encode computes them), so the checkpoint's CLIP tower is a small
    seeded Linear here: it only puts extra tensors in the file, which the loader must skip."""

    def __init__(self, g):
        super().__init__()
        self.vision_model = torch.nn.Linear(8, 4)  # stand-in: ignored by vlbias
        self.visual_projection = torch.nn.Linear(4, D, bias=False)
        self.concept_embeds = torch.nn.Parameter(torch.randn(17, D, generator=g))
        self.special_care_embeds = torch.nn.Parameter(torch.randn(3, D, generator=g))
        self.concept_embeds_weights = torch.nn.Parameter(0.4 + 0.15 * torch.rand(17, generator=g))
        self.special_care_embeds_weights = torch.nn.Parameter(
            0.3 + 0.1 * torch.rand(3, generator=g))


def safety_reference(m, images, adjustment_start):
    """diffusers safety_checker.py forward (numpy path), in float64."""
    def cosine_distance(a, b):
        return torch.nn.functional.normalize(a) @ torch.nn.functional.normalize(b).t()
    x = torch.tensor(images, dtype=torch.float64)
    special_cos = cosine_distance(x, m.special_care_embeds.double()).numpy()
    cos = cosine_distance(x, m.concept_embeds.double()).numpy()
    out = {"concept": [], "special": [], "nsfw": [], "special_care": []}
    for i in range(len(images)):
        adjustment = adjustment_start
        special, concept, care, bad = [], [], 0, 0
        for c in range(special_cos.shape[1]):
            s = special_cos[i][c] - m.special_care_embeds_weights[c].item() + adjustment
            special.append(float(s))
            if round(s, 3) > 0:
                care = 1
                adjustment = 0.01
        for c in range(cos.shape[1]):
            s = cos[i][c] - m.concept_embeds_weights[c].item() + adjustment
            concept.append(float(s))
            if round(s, 3) > 0:
                bad = 1
        out["concept"].append(concept)
        out["special"].append(special)
        out["nsfw"].append(bad)
        out["special_care"].append(care)
    cols = {"concept_score_max": [max(r) for r in out["concept"]],
            "special_care_score_max": [max(r) for r in out["special"]]}
    for c in range(17):
        cols[f"concept_score_{c}"] = [r[c] for r in out["concept"]]
    for c in range(3):
        cols[f"special_care_score_{c}"] = [r[c] for r in out["special"]]
    return {"scores": cols, "decisions": {"nsfw": out["nsfw"], "special_care": out["special_care"]}}


class LaionMLP(torch.nn.Module):
    """improved-aesthetic-predictor simple_inference.py's MLP, widths shrunk."""

    def __init__(self, widths):
        super().__init__()
        a, b, c, d, e = widths
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(a, b), torch.nn.Dropout(0.2), torch.nn.Linear(b, c),
            torch.nn.Dropout(0.2), torch.nn.Linear(c, d), torch.nn.Dropout(0.1),
            torch.nn.Linear(d, e), torch.nn.Linear(e, 1))

    def forward(self, x):
        return self.layers(x)


def normalized(a, axis=-1, order=2):
    """simple_inference.py's normalized()."""
    l2 = np.atleast_1d(np.linalg.norm(a, order, axis))
    l2[l2 == 0] = 1
    return a / np.expand_dims(l2, axis)


def q16_reference(prompts, images):
    """helm q16_toxicity_detector.py SimClassifier + argmax; softmax for the probability."""
    p = torch.tensor(prompts, dtype=torch.float64)
    x = torch.tensor(images, dtype=torch.float64)
    sim = 100.0 * (x / x.norm(dim=-1, keepdim=True)) @ (p / p.norm(dim=-1, keepdim=True)).T
    prob = sim.softmax(dim=-1)[:, 1]
    return {"scores": {"p_inappropriate": prob.tolist()},
            "decisions": {"inappropriate": [int(torch.argmax(s).item() == 1) for s in sim]}}


def clip_iqa_reference(anchors, names, images):
    """torchmetrics clip_iqa.py _clip_iqa_compute."""
    x = torch.tensor(images, dtype=torch.float64)
    a = torch.tensor(anchors, dtype=torch.float64)
    img = x / x.norm(dim=-1, keepdim=True)
    anc = a / a.norm(dim=-1, keepdim=True)
    logits = 100 * img @ anc.t()
    probs = logits.reshape(logits.shape[0], -1, 2).softmax(-1)[:, :, 0]
    return {"scores": {f"clip_iqa__{n}": probs[:, i].tolist() for i, n in enumerate(names)},
            "decisions": {}}


def steer(images, m):
    """Rows 0-3 near the checker's embeddings; concept 5's threshold leaves row 0 at 0.0003."""
    images[0] = 0.2 * images[0] + m.special_care_embeds[0].detach().numpy()
    images[1] = 0.3 * images[1] + m.concept_embeds[2].detach().numpy()
    images[2] = 0.5 * images[2] + m.concept_embeds[7].detach().numpy()
    images[3] = 0.4 * images[3] + m.special_care_embeds[2].detach().numpy()


def bad_pickles(out):
    """Pickles the q16 reader must refuse, written byte by byte or by pickle itself."""
    os.makedirs(out, exist_ok=True)
    # GLOBAL posix system, REDUCE: what a malicious prompts.p does.
    evil = b"\x80\x03cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03."
    with open(os.path.join(out, "system.p"), "wb") as f:
        f.write(evil)
    with open(os.path.join(out, "int64.p"), "wb") as f:
        pickle.dump(np.arange(6, dtype=np.int64).reshape(2, 3), f, protocol=3)
    with open(os.path.join(out, "object.p"), "wb") as f:
        pickle.dump(np.array([[1, "a"], [2, "b"]], dtype=object), f, protocol=3)
    with open(os.path.join(out, "three_rows.p"), "wb") as f:
        pickle.dump(np.ones((3, D), dtype=np.float32), f, protocol=3)
    # A float32 2 x 32 array whose shape claims 2 x 64: the bytes are half of what it says.
    good = pickle.dumps(np.ones((2, D), dtype=np.float32), protocol=3)
    bad = good.replace(b"K\x02K\x20\x86", b"K\x02K\x40\x86", 1)
    assert bad != good
    with open(os.path.join(out, "short_data.p"), "wb") as f:
        f.write(bad)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(44)  # the stand-in CLIP tower's default initialisation
    g = torch.Generator().manual_seed(44)
    rng = np.random.default_rng(44)
    images = rng.normal(size=(N, D)).astype(np.float32) * 3.0
    checker = SafetyChecker(g)
    steer(images, checker)
    # Row 0: concept 5's score exactly 0.0003 before rounding (diffusers leaves it unflagged).
    with torch.no_grad():
        x = torch.tensor(images[0], dtype=torch.float64)
        c5 = checker.concept_embeds[5].double()
        cos = float((x / x.norm()) @ (c5 / c5.norm()))
        checker.concept_embeds_weights[5] = cos - 0.0003 + 0.01  # row 0 has special care
    images = images.astype(np.float32)
    np.save(os.path.join(OUT, "E.npy"), images)
    write_rows(os.path.join(OUT, "E.rows.csv"), "path", [f"img/{i:02d}.png" for i in range(N)])

    sd = {k: v.detach().float().contiguous() for k, v in checker.state_dict().items()}
    write_safetensors_file(os.path.join(OUT, "safety_checker.safetensors"),
                           {k: v.numpy() for k, v in sd.items()})
    torch.save(sd, os.path.join(OUT, "safety_checker.bin"))

    laion = LaionMLP((D, 24, 16, 8, 4)).eval()
    with torch.no_grad():
        for p in laion.parameters():
            p.normal_(0.0, 0.3, generator=g)
    torch.save(laion.state_dict(), os.path.join(OUT, "laion.pth"))

    heim = torch.nn.Linear(D, 1).eval()
    with torch.no_grad():
        heim.weight.normal_(0.0, 0.5, generator=g)
        heim.bias.normal_(0.0, 0.5, generator=g)
    torch.save(heim.state_dict(), os.path.join(OUT, "heim.pth"))

    q16 = rng.normal(size=(2, D)).astype(np.float16)
    with open(os.path.join(OUT, "q16_prompts.p"), "wb") as f:
        pickle.dump(q16, f, protocol=3)
    q16_f32 = rng.normal(size=(2, D)).astype(np.float32)
    with open(os.path.join(OUT, "q16_protocol5.p"), "wb") as f:
        pickle.dump(q16_f32, f, protocol=5)

    with open(os.path.join(ROOT, "data", "clip_iqa", "prompts.csv")) as f:
        prompts = list(csv.DictReader(f))
    anchors = rng.normal(size=(len(prompts), D)).astype(np.float32)
    np.save(os.path.join(OUT, "iqa.npy"), anchors)
    write_rows(os.path.join(OUT, "iqa.rows.csv"), "text", [p["text"] for p in prompts])
    names = [p["name"] for p in prompts[::2]]

    with torch.no_grad():
        x64 = torch.tensor(normalized(images.astype(np.float64)))
        expected = {
            "width": D, "rows": N,
            "safety_checker": safety_reference(checker, images.astype(np.float64), 0.0),
            "safety_checker_005": safety_reference(checker, images.astype(np.float64), 0.05),
            "laion_aesthetic": {"scores": {"aesthetic": laion.double()(x64)[:, 0].tolist()},
                                "decisions": {}},
            "heim_aesthetic": {"scores": {"aesthetic": heim.double()(x64)[:, 0].tolist()},
                               "decisions": {}},
            "q16": q16_reference(q16.astype(np.float64), images.astype(np.float64)),
            "q16_protocol5": q16_reference(q16_f32.astype(np.float64),
                                           images.astype(np.float64)),
            "clip_iqa": clip_iqa_reference(anchors.astype(np.float64), names,
                                           images.astype(np.float64)),
        }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    bad_pickles(os.path.join(OUT, "bad"))
    # Seeds of fuzz_pickled_array: the valid and the refused pickles.
    corpus = os.path.join(ROOT, "fuzz", "corpus", "pickled_array")
    os.makedirs(corpus, exist_ok=True)
    for folder in (OUT, os.path.join(OUT, "bad")):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".p"):
                with open(os.path.join(folder, name), "rb") as f, \
                        open(os.path.join(corpus, name), "wb") as g:
                    g.write(f.read())


if __name__ == "__main__":
    main()
