#!/usr/bin/python3
"""Reference for `vlbias compare-runs` (include/vlbias/audits/compare_runs.h).

Writes three tiny social-perception run folders under tests/fixtures/compare_runs/ (summary.json
in the schema vlbias.summary/1 and units/*.csv) and expected.json: every number compare-runs
computes for them with --bootstrap 2000 --seed 7 --level 0.95 (reference pairs A-B, A-C),
recomputed here independently with numpy/scipy and vlbias's random streams ported to Python
(tools/vlbias_rng.py), so the bootstrap replicates are the very ones vlbias draws:

  runs A and B share their stimuli (images.table, prompts.manifest hashes equal) and differ in
  their image embeddings (the model); run C's images.table differs (other stimuli).
  findings:
    warmth   mean of delta_cos over images (key image_id); A holds images 0-12, B 1-13, C 0-12
             (so A-B shares 12 images: one only in A, one only in B); better closer_to_zero
    gap      mean_difference female - male of a score over sets keyed "filename,rank" with
             2 rows per (set, group) and a third group "other" that the aggregate ignores;
             one empty value in B; better lower
    ranked   no units, a CI in every run: unpaired only; better higher
    noci     no units, no CI in run B: no test
    only_a   in run A only: not compared

  paired test of (A, X), test t = 0, 1, ... over quantities x pairs in order:
    seed_t = derive_seed(derive_seed(7, 0), t); shared units in A's table order; replicate r
    draws n indices Rng(seed_t, r).uniform_index(n); the aggregate of B minus that of A over
    the drawn units (sums left to right); interval numpy.percentile(reps, [2.5, 97.5])
    (linear); p = min(1, 2 min(#{d <= 0} + 1, #{d >= 0} + 1) / (R + 1)).
    For mean aggregates scipy.stats.ttest_rel(B's unit means, A's unit means).
  unpaired: se = (upper - lower) / (2 norm.ppf((1 + level) / 2)) per run,
    d +- norm.ppf(0.975) sqrt(se_A^2 + se_B^2), p = 2 norm.sf(|d| / se).
  Holm and Benjamini-Hochberg over every test with a p (statsmodels' definitions, in numpy).
  ranking of quantity q (0, 1, ... over compared quantities): Rng(derive_seed(derive_seed(7, 1),
    q), r); paired (every run pairs with A) over the units all runs share, else normal draws
    est_i + se_i z (Box-Muller, cosine branch, u1 = 1 - uniform01(), u2 = uniform01()).

Run: /usr/bin/python3 tools/make_compare_runs_fixtures.py
"""
import json
import math
import os

import numpy as np
from scipy import stats

from vlbias_rng import Rng, derive_seed

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "compare_runs")
B = 2000
SEED = 7
LEVEL = 0.95
IMAGES = "1" * 64
IMAGES_C = "2" * 64
PROMPTS = "3" * 64


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join("" if v is None else (repr(v) if isinstance(v, float) else str(v))
                             for v in r) + "\n")


def make_runs():
    rng = np.random.default_rng(20261126)
    base = rng.normal(0.02, 0.01, 14)  # per-image effect shared by the models
    runs = {}
    for name, shift, ids, images in (("A", 0.0, range(0, 13), IMAGES),
                                     ("B", 0.006, range(1, 14), IMAGES),
                                     ("C", -0.004, range(0, 13), IMAGES_C)):
        warmth = [(f"img{i:02d}", float(round(base[i] + shift + rng.normal(0, 0.004), 6)))
                  for i in ids]
        gap = []
        for s in range(9):
            for g, mu in (("female", 0.30 - (0.05 if name == "B" else 0.0)), ("male", 0.20),
                          ("other", 0.9)):
                for k in range(2):
                    v = float(round(mu + 0.03 * s + rng.normal(0, 0.05), 6))
                    if name == "B" and s == 3 and g == "male" and k == 1:
                        v = None  # an empty value: left out
                    gap.append((f"f{s}.jpg", s % 3, g, v))
        runs[name] = {"warmth": warmth, "gap": gap, "images": images}
    return runs


def mean_units(rows):
    """key -> [s0, n0, s1, n1] for a mean (one row per image here)."""
    out = {}
    for key, v in rows:
        u = out.setdefault(key, [0.0, 0.0, 0.0, 0.0])
        u[0] += v
        u[1] += 1
    return out


def diff_units(rows, a="female", b="male"):
    out = {}
    for fn, rank, g, v in rows:
        u = out.setdefault(f"{fn}\x1f{rank}", [0.0, 0.0, 0.0, 0.0])
        if v is None:
            continue
        if g == a:
            u[0] += v
            u[1] += 1
        elif g == b:
            u[2] += v
            u[3] += 1
    return out


def aggregate(units, idx, difference):
    s0 = n0 = s1 = n1 = 0.0
    for i in idx:
        s0 += units[i][0]
        n0 += units[i][1]
        s1 += units[i][2]
        n1 += units[i][3]
    if n0 == 0 or (difference and n1 == 0):
        return math.nan
    return s0 / n0 - s1 / n1 if difference else s0 / n0


def ci_of(values):
    v = np.asarray(values, float)
    h = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v))
    return {"lower": float(v.mean() - h), "upper": float(v.mean() + h), "level": 0.95}


def summary(name, run):
    w = [v for _, v in run["warmth"]]
    du = diff_units(run["gap"])
    gap_est = aggregate(list(du.values()), range(len(du)), True)
    findings = [
        {"id": "warmth", "section": "association", "quantity": "mean Delta cos of warmth",
         "groups": ["all"], "estimate": float(np.mean(w)), "ci": ci_of(w), "p": None,
         "p_holm": None, "significant": None, "better": "closer_to_zero",
         "ptr": "/analyses/association/0",
         "units": {"table": "units/warmth.csv", "key": "image_id", "value": "delta_cos",
                   "group": None, "aggregate": "mean", "groups": None}},
        {"id": "gap", "section": "maxgap", "quantity": "gap of toxicity",
         "groups": ["female", "male"], "estimate": gap_est,
         "ci": {"lower": gap_est - 0.04, "upper": gap_est + 0.04, "level": 0.95},
         "p": 0.01, "p_holm": 0.02, "significant": True, "better": "lower",
         "ptr": "/analyses/maxgap/0",
         "units": {"table": "units/gap.csv", "key": "filename, rank", "value": "toxicity",
                   "group": "race", "aggregate": "mean_difference",
                   "groups": ["female", "male"]}},
        {"id": "ranked", "section": "ranking", "quantity": "MaxSkew@k", "groups": [],
         "estimate": {"A": 0.40, "B": 0.52, "C": 0.47}[name],
         "ci": {"lower": {"A": 0.30, "B": 0.45, "C": 0.30}[name],
                "upper": {"A": 0.50, "B": 0.59, "C": 0.64}[name], "level": 0.9},
         "p": None, "p_holm": None, "significant": None, "better": "higher",
         "ptr": "/analyses/ranking/0", "units": None},
        {"id": "noci", "section": "markedness", "quantity": "markedness", "groups": ["x"],
         "estimate": {"A": 0.1, "B": 0.2, "C": 0.15}[name],
         "ci": None if name == "B" else {"lower": 0.0, "upper": 0.3, "level": 0.95},
         "p": None, "p_holm": None, "significant": None, "better": None, "ptr": "/x",
         "units": None},
    ]
    if name == "A":
        findings.append({"id": "only_a", "section": "s", "quantity": "only in A", "groups": [],
                         "estimate": 1.0, "ci": None, "p": None, "p_holm": None,
                         "significant": None, "better": None, "ptr": "/y", "units": None})
    return {"schema": "vlbias.summary/1", "kind": "social-perception",
            "run": {"inputs": {"images.table": run["images"], "prompts.manifest": PROMPTS,
                               "images.embeddings": name * 64},
                    "spec_sha256": "9" * 64, "seed": 1, "vlbias_version": "test"},
            "findings": findings}


def paired(ua, ub, difference, seed):
    keys = [k for k in ua if k in ub]
    a = [ua[k] for k in keys]
    b = [ub[k] for k in keys]
    n = len(keys)
    diff = aggregate(b, range(n), difference) - aggregate(a, range(n), difference)
    reps = []
    for r in range(B):
        g = Rng(seed, r)
        idx = [g.uniform_index(n) for _ in range(n)]
        reps.append(aggregate(b, idx, difference) - aggregate(a, idx, difference))
    reps = np.array(reps)
    reps = reps[~np.isnan(reps)]
    lo, hi = np.percentile(reps, [2.5, 97.5])
    p = min(1.0, 2 * (min((reps <= 0).sum(), (reps >= 0).sum()) + 1) / (len(reps) + 1))
    out = {"method": "paired", "difference": diff, "lower": float(lo), "upper": float(hi),
           "p": float(p), "shared": n, "only_a": len(ua) - n, "only_b": len(ub) - n,
           "paired_t_p": None}
    if not difference:
        ma = [u[0] / u[1] for u in a]
        mb = [u[0] / u[1] for u in b]
        out["paired_t_p"] = float(stats.ttest_rel(mb, ma).pvalue)
    return out


def se_of(ci):
    return (ci["upper"] - ci["lower"]) / (2 * stats.norm.ppf((1 + ci["level"]) / 2))


def unpaired(fa, fb):
    d = fb["estimate"] - fa["estimate"]
    if fa["ci"] is None or fb["ci"] is None:
        return {"method": "none", "difference": d, "lower": None, "upper": None, "p": None}
    se = math.hypot(se_of(fa["ci"]), se_of(fb["ci"]))
    z = stats.norm.ppf(0.975)
    return {"method": "unpaired", "difference": d, "lower": d - z * se, "upper": d + z * se,
            "p": float(2 * stats.norm.sf(abs(d) / se))}


def holm(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1)
    return out


def bh(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p, kind="stable")[::-1]
    adj = np.minimum.accumulate(p[order] * m / (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(adj, 1)
    return out


def best(v, better):
    s = [(-x if better == "higher" else abs(x) if better == "closer_to_zero" else x) for x in v]
    m = min(s)
    return [i for i, x in enumerate(s) if x == m]


def ranking(q, sums, ests, cis, paired_all, difference, better):
    seed = derive_seed(derive_seed(SEED, 1), q)
    k = len(sums)
    first = [0.0] * k
    if paired_all:
        keys = [key for key in sums[0] if all(key in s for s in sums)]
        units = [[s[key] for key in keys] for s in sums]
        n = len(keys)
    for r in range(B):
        g = Rng(seed, r)
        if paired_all:
            idx = [g.uniform_index(n) for _ in range(n)]
            v = [aggregate(u, idx, difference) for u in units]
        else:
            v = []
            for i in range(k):
                u1 = 1.0 - g.uniform01()
                u2 = g.uniform01()
                z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
                v.append(ests[i] + se_of(cis[i]) * z)
        b = best(v, better)
        for i in b:
            first[i] += 1.0 / len(b)
    return [f / B for f in first]


def main():
    runs = make_runs()
    sums = {}
    summaries = {}
    for name, run in runs.items():
        d = os.path.join(OUT, f"run_{name.lower()}")
        write_csv(os.path.join(d, "units", "warmth.csv"), ["image_id", "delta_cos"],
                  run["warmth"])
        write_csv(os.path.join(d, "units", "gap.csv"), ["filename", "rank", "race", "toxicity"],
                  run["gap"])
        s = summary(name, run)
        summaries[name] = s
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(s, f, indent=2)
            f.write("\n")
        sums[name] = {"warmth": mean_units(run["warmth"]), "gap": diff_units(run["gap"])}
    test_seed = derive_seed(SEED, 0)
    tests, t = [], 0
    ranks = {}
    find = {n: {f["id"]: f for f in s["findings"]} for n, s in summaries.items()}
    for q, qid in enumerate(["warmth", "gap", "ranked", "noci"]):
        for other in ("B", "C"):
            fa, fb = find["A"][qid], find[other][qid]
            if qid in ("warmth", "gap") and other == "B":
                e = paired(sums["A"][qid], sums["B"][qid], qid == "gap",
                           derive_seed(test_seed, t))
            else:
                e = unpaired(fa, fb)
            e.update({"id": qid, "a": "A", "b": other})
            tests.append(e)
            t += 1
        better = find["A"][qid]["better"]
        if better is not None:
            ranks[qid] = ranking(q, [sums[n].get(qid) for n in "ABC"],
                                 [find[n][qid]["estimate"] for n in "ABC"],
                                 [find[n][qid]["ci"] for n in "ABC"], False, qid == "gap",
                                 better)
    with_p = [i for i, e in enumerate(tests) if e["p"] is not None]
    ph = holm([tests[i]["p"] for i in with_p])
    pb = bh([tests[i]["p"] for i in with_p])
    for j, i in enumerate(with_p):
        tests[i]["p_holm"] = float(ph[j])
        tests[i]["p_bh"] = float(pb[j])
    expected = {"options": {"bootstrap": B, "seed": SEED, "level": LEVEL},
                "units_estimates": {n: {q: aggregate(list(sums[n][q].values()),
                                                     range(len(sums[n][q])), q == "gap")
                                        for q in ("warmth", "gap")} for n in "ABC"},
                "tests": tests, "share_first": ranks}
    # A and B alone pair on every quantity with units: the ranking draws their shared units.
    pair_ab = {}
    for q, qid in enumerate(["warmth", "gap"]):
        pair_ab[qid] = ranking(q, [sums["A"][qid], sums["B"][qid]], None, None, True,
                               qid == "gap", find["A"][qid]["better"])
    expected["share_first_ab"] = pair_ab
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
