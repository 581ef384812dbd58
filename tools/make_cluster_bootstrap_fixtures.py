#!/usr/bin/python3
"""Reference for the clustered (two-stage) bootstrap of MaxGap and of paired MaxGap differences
(`--cluster` / `analyses.maxgap.cluster`, src/audits/lvlm_audit_sections.cpp).

Writes tests/fixtures/lvlm/cluster/generations.jsonl (8 image sets (filename, rank) x 3 seeds x
3 races under two mitigations, a toxicity score with an image-set effect) and expected.json:
each set's MaxGap, the clusters, and the 95% percentile intervals of the MaxGap mean and p90
(per mitigation) and of the paired M1 - none differences, flat and clustered, computed here
from the formula with vlbias's random streams ported to Python (tools/vlbias_rng.py):

  replicate b draws from Rng(seed, b); flat: n units uniform_index(n); clustered: C clusters
  uniform_index(C), and for each drawn cluster of m sets, m sets uniform_index(m); the
  replicate's mean and numpy-linear p90 are over every set drawn; intervals are numpy's
  linear percentiles 2.5 and 97.5 of the replicates.

Seeds follow the audit: maxgap by-level b (sorted: "M1" < "none") and score k of S = 1 uses
derive_seed(seed, b * S + k); paired comparisons number their tasks 0, 1, ...

Run: /usr/bin/python3 tools/make_cluster_bootstrap_fixtures.py
"""
import json
import os

import numpy as np

from vlbias_rng import Rng, derive_seed

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "lvlm", "cluster")
SEED = 3
RESAMPLES = 200


def make_rows():
    rng = np.random.default_rng(11)
    rows = []
    for image in range(8):
        effect = rng.normal(0, 0.15)
        for mitigation in ("none", "M1"):
            shift = 0.0 if mitigation == "none" else -0.05
            for seed in range(3):
                for race in ("Asian", "Black", "White"):
                    spread = 0.2 + effect + (0.1 if race == "Black" else 0.0)
                    score = float(np.clip(0.3 + shift + spread * rng.random(), 0, 1))
                    rows.append({"filename": f"img{image}.jpg", "rank": image % 2, "seed": seed,
                                 "race": race, "mitigation": mitigation,
                                 "toxicity": round(score, 4)})
    return rows


def sets_of(rows, mitigation):
    """{set key: MaxGap} of one mitigation, keys sorted as vlbias canonicalises them."""
    scores = {}
    for r in rows:
        if r["mitigation"] != mitigation:
            continue
        key = "\x1f".join(str(r[c]) for c in ("filename", "rank", "seed"))
        scores.setdefault(key, []).append(r["toxicity"])
    return {k: max(v) - min(v) for k, v in sorted(scores.items())}


def clusters_of(keys):
    ids, out = {}, []
    for k in keys:
        c = "\x1f".join(k.split("\x1f")[:2])
        out.append(ids.setdefault(c, len(ids)))
    return out


def replicates(x, base, cluster, seed):
    n = len(x)
    members = {}
    for i, c in enumerate(cluster or []):
        members.setdefault(c, []).append(i)
    means, p90s = [], []
    for b in range(RESAMPLES):
        rng = Rng(seed, b)
        drawn = []
        if not cluster:
            drawn = [rng.uniform_index(n) for _ in range(n)]
        else:
            count = len(members)
            for _ in range(count):
                m = members[rng.uniform_index(count)]
                drawn.extend(m[rng.uniform_index(len(m))] for _ in range(len(m)))
        a = np.array([x[u] for u in drawn])
        c = np.array([base[u] for u in drawn]) if base else np.zeros(0)
        total_a, total_c = 0.0, 0.0
        for v in a:  # summed in draw order, as the C++ does
            total_a += v
        for v in c:
            total_c += v
        means.append((total_a - total_c) / len(a))
        p90s.append(np.percentile(a, 90) - (np.percentile(c, 90) if base else 0.0))
    return means, p90s


def interval(reps):
    lo, hi = np.percentile(np.array(reps), [2.5, 97.5])
    return {"lower": float(lo), "upper": float(hi)}


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = make_rows()
    with open(os.path.join(OUT, "generations.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    expected = {"seed": SEED, "resamples": RESAMPLES, "maxgap": {}, "paired": {}}
    for b, mitigation in enumerate(("M1", "none")):
        gaps = sets_of(rows, mitigation)
        keys, x = list(gaps), list(gaps.values())
        out = {"sets": len(x), "mean": float(np.mean(x))}
        for name, cluster in (("flat", None), ("clustered", clusters_of(keys))):
            means, p90s = replicates(x, None, cluster, derive_seed(SEED, b))
            out[name] = {"maxgap_mean": interval(means), "maxgap_p90": interval(p90s)}
        expected["maxgap"][mitigation] = out
    treatment, baseline = sets_of(rows, "M1"), sets_of(rows, "none")
    keys = [k for k in treatment if k in baseline]
    x1, x0 = [treatment[k] for k in keys], [baseline[k] for k in keys]
    for name, cluster in (("flat", None), ("clustered", clusters_of(keys))):
        means, p90s = replicates(x1, x0, cluster, derive_seed(SEED, 0))
        expected["paired"][name] = {"diff_mean": interval(means), "diff_p90": interval(p90s)}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
