#!/usr/bin/python3
"""Reference values for CLIPScore (docs/methods.md#clipscore, #consistency-indicator), read by
tests/metrics/clipscore_test.cpp and tests/cli/metric_clipscore_test.cpp.

Writes into tests/fixtures/metrics/:
  clipscore_images.npy   40 x 12 float32 image embeddings (not normalised; some
                         cosines negative so the clamps of hessel/torchmetrics bite)
  clipscore_texts.npy    40 x 12 float32 paired text embeddings
  clipscore_objects.npy   3 x 12 float32 object texts, picked per image by text_row
  clipscore_table.csv    image table: text_row (0..2), region (A/B/C)
  clipscore.json         per variant: per-sample cosines/scores for the paired and the
                         text-row pairings, describe-style summaries and percentiles
                         (numpy.percentile, linear), and per-region summaries.

Cosines in float64 from the float32 data: dot / (|a| |b|).
Variants: raw = cos; hessel = 2.5 * max(cos, 0) (Hessel et al. 2021);
torchmetrics = max(100 * cos, 0).
Run: /usr/bin/python3 tools/make_clipscore_fixtures.py
"""
import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics"
LEVELS = [10, 50, 90]


def cosines(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def variant(cos, name):
    if name == "raw":
        return cos
    if name == "hessel":
        return 2.5 * np.maximum(cos, 0.0)
    return np.maximum(100.0 * cos, 0.0)


def summary(x):
    x = np.asarray(x, dtype=np.float64)
    return {
        "n": int(x.size),
        "mean": float(x.mean()),
        "sd": float(x.std(ddof=1)),
        "min": float(x.min()),
        "max": float(x.max()),
        "percentiles": [float(v) for v in np.percentile(x, LEVELS)],
    }


def main():
    rng = np.random.default_rng(20261124)
    n, d = 40, 12
    texts = rng.normal(size=(n, d)).astype(np.float32)
    # Images: the paired text plus noise, so cosines spread over about [-0.4, 0.9].
    images = (0.4 * texts + rng.normal(size=(n, d))).astype(np.float32)
    objects = rng.normal(size=(3, d)).astype(np.float32)
    text_row = rng.integers(0, 3, size=n)
    region = np.array(["A", "B", "C"])[rng.integers(0, 3, size=n)]
    np.save(OUT / "clipscore_images.npy", images)
    np.save(OUT / "clipscore_texts.npy", texts)
    np.save(OUT / "clipscore_objects.npy", objects)
    with open(OUT / "clipscore_table.csv", "w") as f:
        f.write("text_row,region\n")
        for i in range(n):
            f.write(f"{text_row[i]},{region[i]}\n")
    out = {"levels": LEVELS}
    paired = cosines(images, texts)
    by_row = cosines(images, objects[text_row])
    broadcast = cosines(images, np.repeat(objects[:1], n, axis=0))
    for name in ["raw", "hessel", "torchmetrics"]:
        entry = {}
        for label, cos in [("paired", paired), ("text_row", by_row), ("broadcast", broadcast)]:
            s = variant(cos, name)
            entry[label] = {"cosine": cos.tolist(), "score": s.tolist(), "summary": summary(s)}
        s = variant(by_row, name)
        entry["text_row_by_region"] = {r: summary(s[region == r]) for r in ["A", "B", "C"]}
        out[name] = entry
    (OUT / "clipscore.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
