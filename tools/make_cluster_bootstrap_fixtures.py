#!/usr/bin/python3
"""Reference for the clustered (two-stage) bootstrap of MaxGap and of paired MaxGap differences
(`--cluster` / `analyses.maxgap.cluster`, src/audits/lvlm/lvlm_audit_sections.cpp).

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

Also the set-blocked group tests (`analyses.group_tests`, flat and with `cluster`), per
mitigation: over the complete sets (x_j of races Asian, Black, White), d_j = x_j - mean of the
others, the gap T_j = mean over sets of d_j, and a within-set permutation null drawn from
Rng(derive_seed(seed, b), rep): flat, one uniform_index(3) per set in set order; clustered, one
per cluster (ids in first-appearance order) shared by the cluster's sets;
p_j = (1 + #{|T*| >= |T_j| (1 - 1e-12)}) / (1 + B); Friedman (scipy.stats.friedmanchisquare)
over the sets (flat) or over the clusters' per-race means (clustered).

And the paired tests of M1 - none over matched sets: scipy.stats.ttest_rel and wilcoxon
(two-sided and `less`), flat, and clustered by enumerating every one of the 2^8 ways the 8 image
sets can swap their sets' two arms together (p = #{p* <= p (1 + 1e-12)} / 256).

Run: /usr/bin/python3 tools/make_cluster_bootstrap_fixtures.py
"""
import json
import os

import numpy as np
from scipy import stats

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


def blocks_of(rows, mitigation):
    """[(set key, [Asian, Black, White])] of one mitigation, keys sorted as vlbias does."""
    sets = {}
    for r in rows:
        if r["mitigation"] == mitigation:
            key = "\x1f".join(str(r[c]) for c in ("filename", "rank", "seed"))
            sets.setdefault(key, {})[r["race"]] = r["toxicity"]
    return [(k, [v["Asian"], v["Black"], v["White"]]) for k, v in sorted(sets.items())]


def group_tests(blocks, cluster, seed):
    n, k = len(blocks), 3
    d = []
    for x in blocks:
        total = 0.0
        for v in x:
            total += v
        d.append([v - (total - v) / (k - 1) for v in x])
    gaps = []
    for j in range(k):
        total = 0.0
        for i in range(n):
            total += d[i][j]
        gaps.append(total / n)
    null = []
    for rep in range(RESAMPLES):
        rng = Rng(seed, rep)
        total = 0.0
        if cluster is None:
            for i in range(n):
                total += d[i][rng.uniform_index(k)]
        else:
            u = [rng.uniform_index(k) for _ in range(max(cluster) + 1)]
            for i in range(n):
                total += d[i][u[cluster[i]]]
        null.append(total / n)
    null = np.abs(np.array(null))
    ps = [float((1 + np.sum(null >= abs(g) * (1 - 1e-12))) / (1 + RESAMPLES)) for g in gaps]
    if cluster is None:
        columns = [[x[j] for x in blocks] for j in range(k)]
    else:
        count = max(cluster) + 1
        sums = [[0.0] * k for _ in range(count)]
        sizes = [0] * count
        for x, c in zip(blocks, cluster):
            for j in range(k):
                sums[c][j] += x[j]
            sizes[c] += 1
        columns = [[sums[c][j] / sizes[c] for c in range(count)] for j in range(k)]
    fr = stats.friedmanchisquare(*columns)
    return {"friedman_chi2": float(fr.statistic), "friedman_p": float(fr.pvalue),
            "gap_to_others": gaps, "p": ps}


def paired_tests(x1, x0, cluster):
    import itertools
    x1, x0 = np.array(x1), np.array(x0)
    out = {}
    for alternative in ("two-sided", "less"):
        def tests(a, b):
            return {"paired_t": stats.ttest_rel(a, b, alternative=alternative).pvalue,
                    "wilcoxon": stats.wilcoxon(a, b, alternative=alternative).pvalue}
        flat = tests(x1, x0)
        count = max(cluster) + 1
        arrangements = []
        for flips in itertools.product([False, True], repeat=count):
            swap = np.array([flips[c] for c in cluster])
            arrangements.append(tests(np.where(swap, x0, x1), np.where(swap, x1, x0)))
        t = stats.ttest_rel(x1, x0, alternative=alternative)
        out[alternative] = {
            "t": float(t.statistic),
            "flat": {k: float(v) for k, v in flat.items()},
            "clustered": {k: sum(a[k] <= flat[k] * (1 + 1e-12) for a in arrangements)
                          / len(arrangements) for k in flat}}
    return out


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
    expected["paired"]["tests"] = paired_tests(x1, x0, clusters_of(keys))
    expected["group_tests"] = {}
    for b, mitigation in enumerate(("M1", "none")):
        blocks = blocks_of(rows, mitigation)
        values = [x for _, x in blocks]
        expected["group_tests"][mitigation] = {
            "flat": group_tests(values, None, derive_seed(SEED, b)),
            "clustered": group_tests(values, clusters_of([k for k, _ in blocks]),
                                     derive_seed(SEED, b))}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
