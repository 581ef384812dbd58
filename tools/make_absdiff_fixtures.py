#!/usr/bin/python3
"""Reference for AbsDiff (paper 001, docs/methods.md#absdiff; Hausladen et al.
section 2.3), computed independently with itertools, numpy, scipy, statsmodels.

A synthetic table of 60 images with factors age (ordinal, threshold 1.1),
lighting, gender, seed (pseudo-identity, a numeric categorical column) and
camera (constant, so it has no valid pair), a few missing factor cells, and
random Delta cos values for three dimensions. `pairs` equals the largest number
of valid pairs of any factor, so every factor is enumerated (every valid pair
used once) and the result does not depend on the random stream.

  valid pairs  itertools.combinations over the rows with every factor present:
               equal on every other factor; a categorical factor differs, an
               ordinal one has |x1 - x2| > threshold (strictly)
  cells        AbsDiff = |v[i1, d] - v[i2, d]|; n, np.mean, np.std(ddof=1),
               np.percentile 25/50/75 (linear); pooled = all dimensions
  comparisons  per dimension then pooled, factor pairs a < b in factor order:
               scipy.stats.mannwhitneyu(a, b, alternative="two-sided",
               method="auto", use_continuity=True), which is what
               vlbias::stats::mann_whitney_u implements (scipy 1.10: exact when
               min(n) <= 8 without ties, else normal with tie and continuity
               correction); a comparison with an empty factor is null
  adjusted     statsmodels multipletests "holm" and "fdr_bh" over every
               non-null p-value of the report together

Writes tests/fixtures/metrics/absdiff.json, read by tests/metrics/absdiff_test.cpp
and tests/cli/metric_absdiff_test.cpp.

Run: /usr/bin/python3 tools/make_absdiff_fixtures.py
"""
import io
import itertools
import json
import math
import os

import numpy as np
from scipy.stats import mannwhitneyu
from statsmodels.stats.multitest import multipletests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "metrics", "absdiff.json")

FACTORS = [
    {"column": "age", "ordinal": True, "threshold": 1.1},
    {"column": "lighting", "ordinal": False, "threshold": 0.0},
    {"column": "gender", "ordinal": False, "threshold": 0.0},
    {"column": "seed", "ordinal": False, "threshold": 0.0},
    {"column": "camera", "ordinal": False, "threshold": 0.0},
]
DIMENSIONS = ["warmth", "competence", "agency"]
SEED = 11


def make_rows(rng):
    rows = []
    # A full cross, so every factor has pairs; 2.1 - 1.0 == 1.1 exactly in double,
    # so those age pairs are not valid (the threshold is strict).
    for seed in (1, 2):
        for gender in ("female", "male"):
            for lighting in ("dark", "bright"):
                for age in (1.0, 2.1, 3.0, 4.5):
                    rows.append({"age": age, "lighting": lighting, "gender": gender, "seed": seed})
    while len(rows) < 60:
        rows.append({
            "age": float(rng.choice([1.0, 2.1, 3.0, 3.5, 4.5])),
            "lighting": str(rng.choice(["dark", "bright", "studio"])),
            "gender": str(rng.choice(["female", "male"])),
            "seed": int(rng.choice([1, 2, 3])),
        })
    for r in rows:
        r["camera"] = "c1"
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    for i in rng.choice(len(rows), size=3, replace=False):
        rows[i]["lighting"] = None
    for i in rng.choice(len(rows), size=2, replace=False):
        rows[i]["age"] = None
    values = rng.normal(0.0, 0.05, size=(len(rows), len(DIMENSIONS)))
    return rows, values


def to_csv(rows, values):
    cols = [f["column"] for f in FACTORS] + DIMENSIONS
    out = io.StringIO()
    out.write(",".join(cols) + "\n")
    for r, v in zip(rows, values):
        cells = []
        for f in FACTORS:
            x = r[f["column"]]
            cells.append("" if x is None else repr(x) if isinstance(x, float) else str(x))
        cells += [repr(float(x)) for x in v]
        out.write(",".join(cells) + "\n")
    return out.getvalue()


def valid_pairs(rows, fi):
    f = FACTORS[fi]
    x = f["column"]
    complete = [i for i, r in enumerate(rows) if all(r[g["column"]] is not None for g in FACTORS)]
    out = []
    for i, j in itertools.combinations(complete, 2):
        if any(rows[i][g["column"]] != rows[j][g["column"]]
               for k, g in enumerate(FACTORS) if k != fi):
            continue
        if f["ordinal"]:
            ok = abs(rows[i][x] - rows[j][x]) > f["threshold"]
        else:
            ok = rows[i][x] != rows[j][x]
        if ok:
            out.append((i, j))
    return out


def num(x):
    return None if x is None or math.isnan(x) else float(x)


def cell(factor, dim, v, n_valid):
    v = np.asarray(v, dtype=float)
    c = {"factor": factor, "dimension": dim, "n": int(v.size), "valid_pairs": n_valid,
         "enumerated": n_valid > 0}
    if v.size == 0:
        c.update(mean=None, sd=None, median=None, q25=None, q75=None, whisker_low=None,
                 whisker_high=None)
    else:
        q25, q50, q75 = np.percentile(v, [25, 50, 75])
        c.update(mean=float(np.mean(v)), sd=num(np.std(v, ddof=1)) if v.size > 1 else None,
                 median=float(q50), q25=float(q25), q75=float(q75),
                 # Tukey's whiskers, as matplotlib's boxplot (whis=1.5) draws them.
                 whisker_low=float(v[v >= q25 - 1.5 * (q75 - q25)].min()),
                 whisker_high=float(v[v <= q75 + 1.5 * (q75 - q25)].max()))
    return c


def main():
    rng = np.random.default_rng(SEED)
    rows, values = make_rows(rng)
    pairs_of = [valid_pairs(rows, fi) for fi in range(len(FACTORS))]
    pairs = max(len(p) for p in pairs_of)
    rows_missing = sum(1 for r in rows if any(r[f["column"]] is None for f in FACTORS))

    cells = []
    absdiff = {}  # (factor index, dimension index or "pooled") -> values
    for fi, f in enumerate(FACTORS):
        pooled = []
        for d, dim in enumerate(DIMENSIONS):
            v = [abs(values[i, d] - values[j, d]) for i, j in pairs_of[fi]]
            absdiff[(fi, d)] = v
            pooled += v
            cells.append(cell(f["column"], dim, v, len(pairs_of[fi])))
        absdiff[(fi, "pooled")] = pooled
        cells.append(cell(f["column"], "", pooled, len(pairs_of[fi])))

    comparisons = []
    for d in list(range(len(DIMENSIONS))) + ["pooled"]:
        for a, b in itertools.combinations(range(len(FACTORS)), 2):
            va, vb = absdiff[(a, d)], absdiff[(b, d)]
            c = {"dimension": "" if d == "pooled" else DIMENSIONS[d],
                 "factor_a": FACTORS[a]["column"], "factor_b": FACTORS[b]["column"]}
            if va and vb:
                res = mannwhitneyu(va, vb, alternative="two-sided", method="auto",
                                   use_continuity=True)
                c.update(statistic=float(res.statistic), p_value=float(res.pvalue))
            else:
                c.update(statistic=None, p_value=None)
            comparisons.append(c)
    defined = [i for i, c in enumerate(comparisons) if c["p_value"] is not None]
    p = np.array([comparisons[i]["p_value"] for i in defined])
    holm = multipletests(p, method="holm")[1]
    bh = multipletests(p, method="fdr_bh")[1]
    for c in comparisons:
        c["p_holm"] = None
        c["p_bh"] = None
    for k, i in enumerate(defined):
        comparisons[i]["p_holm"] = float(holm[k])
        comparisons[i]["p_bh"] = float(bh[k])

    fixture = {
        "generator": "tools/make_absdiff_fixtures.py",
        "csv": to_csv(rows, values),
        "factors": FACTORS,
        "factor_specs": [f["column"] + (":" + repr(f["threshold"]) if f["ordinal"] else "")
                         for f in FACTORS],
        "dimensions": DIMENSIONS,
        "pairs": pairs,
        "seed": 5,
        "rows_missing": rows_missing,
        "valid_pairs": {f["column"]: len(pairs_of[fi]) for fi, f in enumerate(FACTORS)},
        "cells": cells,
        "comparisons": comparisons,
    }
    with open(OUT, "w") as fh:
        json.dump(fixture, fh, indent=1)
        fh.write("\n")
    print("wrote", OUT, "pairs", pairs, {f["column"]: len(p) for f, p in zip(FACTORS, pairs_of)})


if __name__ == "__main__":
    main()
