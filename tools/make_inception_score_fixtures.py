#!/usr/bin/python3
"""Writes tests/fixtures/metrics/inception_score/: logits (.npy, float32) and the Inception Score
scipy computes from them (expected.json), the references of tests/metrics/inception_score_test.cpp.

Reference, as OpenAI's inception_score.py and torch-fidelity compute it, written with scipy:
p(y|x) = scipy.special.softmax(logits, axis=1) in float64; parts = np.array_split(p, splits);
per part exp(mean over rows of scipy.stats.entropy(p(y|x), p(y))) with p(y) the part's mean
(entropy(pk, qk) = sum pk log(pk / qk), 0 log 0 = 0); mean and np.std over the parts.

Run: /usr/bin/python3 tools/make_inception_score_fixtures.py
"""
import json
import pathlib

import numpy as np
from scipy.special import softmax
from scipy.stats import entropy

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests/fixtures/metrics/inception_score"


def reference(logits, splits):
    p = softmax(logits.astype(np.float64), axis=1)
    scores = []
    for part in np.array_split(p, splits):
        py = part.mean(axis=0)
        scores.append(np.exp(np.mean([entropy(row, py) for row in part])))
    return float(np.mean(scores)), float(np.std(scores)), [float(s) for s in scores]


def main():
    rng = np.random.default_rng(2016)
    OUT.mkdir(parents=True, exist_ok=True)
    cases = {
        # the FID graph's 1008 classes, uneven splits (np.array_split: 4, 4, 3, 3 rows)
        "graph_1008": (rng.normal(0, 3, (14, 1008)), 4),
        # confident and diverse: each image peaks on its own class
        "peaked": (np.eye(30, 30)[rng.permutation(30)] * 40 + rng.normal(0, 1, (30, 30)), 3),
        # underflowing probabilities (logit gaps beyond 745: exp is 0 in double)
        "underflow": (np.where(rng.random((12, 8)) < 0.5, 900.0, 0.0) + rng.normal(0, 1, (12, 8)),
                      2),
        # every image the same: IS = 1
        "identical": (np.tile(rng.normal(0, 2, (1, 16)), (9, 1)), 3),
    }
    expected = {}
    for name, (logits, splits) in cases.items():
        logits = logits.astype(np.float32)
        np.save(OUT / f"{name}.npy", logits)
        mean, sd, scores = reference(logits, splits)
        expected[name] = {"splits": splits, "mean": mean, "sd": sd, "scores": scores}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
