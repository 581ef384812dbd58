#!/usr/bin/python3
"""Reference for the social-perception audit's neutral-prompt analysis (paper 001 App. G;
src/audits/dual_encoder/dual_encoder_audit_neutral.cpp), on the bundled example study
(examples/social_perception): numpy and scipy, independent of vlbias.

neutral_cos(i) = mean over the manifest's neutral prompts (one per template) of the cosine of
image i with the prompt. Per race x gender group: n, mean, sd (ddof 1); scipy.stats.f_oneway
across groups; per pair of groups (key order): with pair key `seed`, the seed's images in a
group averaged, then scipy.stats.ttest_rel and pearsonr over the seeds both groups have; without
it, scipy.stats.ttest_ind(equal_var=False) over the images.

Writes tests/fixtures/audits/neutral/expected.json.
Run: /usr/bin/python3 tools/make_neutral_fixtures.py
"""
import csv
import json
import os
from itertools import combinations

import numpy as np
from scipy import stats

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "social_perception")
OUT = os.path.join(ROOT, "tests", "fixtures", "audits", "neutral")


def main():
    images = list(csv.DictReader(open(os.path.join(EXAMPLE, "images.csv"))))
    prompts = list(csv.DictReader(open(os.path.join(EXAMPLE, "prompts.csv"))))
    x = np.load(os.path.join(EXAMPLE, "images.npy")).astype(np.float64)
    t = np.load(os.path.join(EXAMPLE, "prompts.npy")).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    neutral_rows = [i for i, p in enumerate(prompts) if p["role"] == "neutral"]
    neutral = (x @ t[neutral_rows].T).mean(axis=1)
    keys = sorted({(r["race"], r["gender"]) for r in images})
    of_group = {k: [i for i, r in enumerate(images) if (r["race"], r["gender"]) == k]
                for k in keys}
    groups = []
    for k in keys:
        v = neutral[of_group[k]]
        groups.append({"race": k[0], "gender": k[1], "n": len(v), "mean": float(v.mean()),
                       "sd": float(v.std(ddof=1))})
    anova = stats.f_oneway(*[neutral[of_group[k]] for k in keys])
    paired, unpaired = [], []
    for a, b in combinations(keys, 2):
        def seed_means(k):
            out = {}
            for i in of_group[k]:
                out.setdefault(images[i]["seed"], []).append(neutral[i])
            return {s: float(np.mean(v)) for s, v in out.items()}
        ma, mb = seed_means(a), seed_means(b)
        common = sorted(set(ma) & set(mb))
        xa = np.array([ma[s] for s in common])
        xb = np.array([mb[s] for s in common])
        t_rel = stats.ttest_rel(xa, xb)
        r = stats.pearsonr(xa, xb)
        paired.append({"a": list(a), "b": list(b), "n": len(common),
                       "difference": float(xa.mean() - xb.mean()),
                       "t": float(t_rel.statistic), "p": float(t_rel.pvalue),
                       "r": float(r[0]), "r_p": float(r[1])})
        va, vb = neutral[of_group[a]], neutral[of_group[b]]
        w = stats.ttest_ind(va, vb, equal_var=False)
        unpaired.append({"a": list(a), "b": list(b), "n": len(va) + len(vb),
                         "difference": float(va.mean() - vb.mean()),
                         "t": float(w.statistic), "p": float(w.pvalue)})
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"groups": groups,
                   "anova": {"F": float(anova.statistic), "p": float(anova.pvalue)},
                   "paired": paired, "unpaired": unpaired}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
