#!/usr/bin/python3
"""Reference for the social-perception audit's valence-correlation analysis (paper 001 App. C.1,
Table S.4; src/audits/dual_encoder/dual_encoder_audit_valence.cpp), on the bundled example study
(examples/social_perception): numpy and scipy, independent of vlbias.

Delta cos(i, D) = mean over D's attribute prompts p (word, template t) of cos(i, p) - cos(i,
neutral prompt of t). Per factor and level: the mean Delta cos of each dimension over the
images with that level (all groups pooled). Per factor and dimension with both valences:
scipy.stats.pearsonr over the levels of (mean of D+, mean of D-), its 95% confidence interval
(Fisher z: tanh(atanh r -+ 1.959964 / sqrt(n - 3))), and the mean r per factor. Also age within
each lighting level (`within: lighting`: the same over that level's images).

Writes tests/fixtures/audits/valence_correlation/expected.json.
Run: /usr/bin/python3 tools/make_valence_correlation_fixtures.py
"""
import csv
import json
import math
import os

import numpy as np
from scipy import stats

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "social_perception")
OUT = os.path.join(ROOT, "tests", "fixtures", "audits", "valence_correlation")
FACTORS = ["age", "smiling"]


def main():
    images = list(csv.DictReader(open(os.path.join(EXAMPLE, "images.csv"))))
    prompts = list(csv.DictReader(open(os.path.join(EXAMPLE, "prompts.csv"))))
    x = np.load(os.path.join(EXAMPLE, "images.npy")).astype(np.float64)
    t = np.load(os.path.join(EXAMPLE, "prompts.npy")).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    cos = x @ t.T
    neutral = {p["template"]: i for i, p in enumerate(prompts) if p["role"] == "neutral"}
    poles = {}
    for i, p in enumerate(prompts):
        if p["role"] == "attribute" and p["valence"] in ("+", "-"):
            delta = cos[:, i] - cos[:, neutral[p["template"]]]
            poles.setdefault((p["dimension"], p["valence"]), []).append(delta)
    delta = {k: np.mean(v, axis=0) for k, v in poles.items()}
    dimensions = sorted({d for d, v in delta if (d, "+") in delta and (d, "-") in delta})
    def factor_block(factor, subset):
        levels = sorted({images[i][factor] for i in subset}, key=float)
        rows = {lv: [i for i in subset if images[i][factor] == lv] for lv in levels}
        pairs = {}
        for d in dimensions:
            pos = [float(delta[(d, "+")][rows[lv]].mean()) for lv in levels]
            neg = [float(delta[(d, "-")][rows[lv]].mean()) for lv in levels]
            r, p = stats.pearsonr(pos, neg)
            n = len(levels)
            # No interval with n <= 3 (vlbias writes null and a note).
            half = 1.959963984540054 / math.sqrt(n - 3) if n > 3 else None
            pairs[d] = {"r": float(r), "p": float(p), "levels": n,
                        "lower": math.tanh(math.atanh(r) - half) if half else None,
                        "upper": math.tanh(math.atanh(r) + half) if half else None,
                        "positive_means": pos, "negative_means": neg}
        return {"factor": factor, "levels": levels, "pairs": pairs,
                "average_r": float(np.mean([v["r"] for v in pairs.values()]))}

    everything = list(range(len(images)))
    out = [factor_block(factor, everything) for factor in FACTORS]
    within = {}
    for light in sorted({r["lighting"] for r in images}):
        subset = [i for i, r in enumerate(images) if r["lighting"] == light]
        within[light] = factor_block("age", subset)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"factors": out, "age_within_lighting": within}, f, indent=1)
        f.write("\n")
    for f_ in out:
        print(f_["factor"], {d: round(v["r"], 4) for d, v in f_["pairs"].items()},
              "average", round(f_["average_r"], 4))


if __name__ == "__main__":
    main()
