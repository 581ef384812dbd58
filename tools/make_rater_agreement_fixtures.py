#!/usr/bin/python3
"""Reference for the agreement of several raters (docs/methods.md#rater-agreement,
include/vlbias/stats/rater_agreement.h), computed independently with numpy and sklearn.

  krippendorff  Krippendorff's alpha from the coincidence matrix as Krippendorff (2011,
                "Computing Krippendorff's Alpha-Reliability") builds it: o_ck summed over
                pairable units (one rating: dropped) from every ordered pair of values, the
                K x K difference matrix delta2 (nominal, ordinal from the marginals n_g,
                interval), alpha = 1 - (n - 1) sum o delta2 / sum n_c n_k delta2. Checked
                against the paper's hand-worked examples: 4 coders x 12 units with missing
                values (nominal 0.743, ordinal 0.815, interval 0.849) and 2 coders x 10 binary
                units (nominal 0.095).
  fleiss        Fleiss' kappa as statsmodels' fleiss_kappa (not installed) computes it from
                the units x categories count table: p_j = colsum / (N m),
                P_i = (sum_j n_ij^2 - m) / (m (m - 1)), kappa = (mean P - sum p_j^2) /
                (1 - sum p_j^2), over the units with the largest number of ratings m.
  cohen         sklearn.metrics.cohen_kappa_score(a, b, labels=every category of the table,
                weights=None / "linear" / "quadratic") over the units both raters rated.
  bootstrap     each coefficient's percentile interval exactly as vlbias draws it: its units
                in table order (first appearance of the unit key), replicate b takes
                idx[i] = Rng(seed, b).uniform_index(N) (tools/vlbias_rng.py), np.percentile
                (linear) of the defined replicates.

Cases: a 1-5 Likert study (4 raters, 40 units, missing ratings, single-rated units) in long
form with shuffled rows and in wide form; a nominal text-label study (stereotype / not /
unsure) where each unit is rated by 3 of 5 annotators; degenerate tables.

Writes tests/fixtures/stats/rater_agreement.json, read by tests/stats/rater_agreement_test.cpp
and tests/cli/metric_rater_agreement_test.cpp.

Run: /usr/bin/python3 tools/make_rater_agreement_fixtures.py
"""
import io
import json
import math
import os
import sys

import numpy as np
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vlbias_rng import Rng  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "stats", "rater_agreement.json")
LEVEL = 0.95
BOOTSTRAP = 200
SEED = 7
WEIGHTS = {"none": None, "linear": "linear", "quadratic": "quadratic"}


def num(x):
    x = float(x)
    return x if math.isfinite(x) else None


# ----------------------------------------------------------------------------- coefficients

def alpha_coincidence(units, categories, scale, values=None):
    """units: list of lists of category indices (one list per unit, any length)."""
    k = len(categories)
    o = np.zeros((k, k))
    for u in units:
        m = len(u)
        if m < 2:
            continue
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[u[i], u[j]] += 1.0 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    delta2 = np.zeros((k, k))
    for c in range(k):
        for d in range(k):
            if scale == "nominal":
                delta2[c, d] = float(c != d)
            elif scale == "interval":
                delta2[c, d] = (values[c] - values[d]) ** 2
            else:
                lo, hi = min(c, d), max(c, d)
                delta2[c, d] = (n_c[lo:hi + 1].sum() - (n_c[c] + n_c[d]) / 2) ** 2
    expected = float((np.outer(n_c, n_c) * delta2).sum())
    observed = float((o * delta2).sum())
    if n < 2 or expected == 0:
        return math.nan, None, None
    d_o = observed / n
    d_e = expected / (n * (n - 1))
    return 1 - d_o / d_e, d_o, d_e


def fleiss_table(units, k):
    m = max(len(u) for u in units)
    kept = [u for u in units if len(u) == m]
    table = np.zeros((len(kept), k))
    for i, u in enumerate(kept):
        for c in u:
            table[i, c] += 1
    return table, m


def fleiss_of_table(table):
    """statsmodels.stats.inter_rater.fleiss_kappa(table, method='fleiss'), from its formula."""
    n_sub = table.shape[0]
    n_rat = table.sum(1).max()
    p_cat = table.sum(0) / (n_sub * n_rat)
    table2 = table * table
    p_rat = (table2.sum(1) - n_rat) / (n_rat * (n_rat - 1.0))
    p_mean = p_rat.mean()
    p_mean_exp = (p_cat * p_cat).sum()
    if p_mean_exp == 1:
        return math.nan, None, None
    return (p_mean - p_mean_exp) / (1 - p_mean_exp), 1 - p_mean, 1 - p_mean_exp


def cohen_pairs(data, a, b):
    """(a's category, b's category) per unit both rated, in unit order."""
    pairs = []
    for u in data["units"]:
        if a in u and b in u:
            pairs.append((u[a], u[b]))
    return pairs


def cohen_of_pairs(pairs, k, weights):
    if not pairs:
        return math.nan
    x = [p[0] for p in pairs]
    y = [p[1] for p in pairs]
    if len(set(x) | set(y)) == 1:  # sklearn gives nan with a warning (0 / 0)
        return math.nan
    return float(cohen_kappa_score(x, y, labels=list(range(k)), weights=WEIGHTS[weights]))


def bootstrap(n, statistic):
    """None bounds where vlbias draws nothing: an undefined estimate or fewer than 2 units."""
    all_units = list(range(n))
    if n < 2 or math.isnan(statistic(all_units)):
        return {"ci": [None, None], "undefined": 0}
    reps = []
    for b in range(BOOTSTRAP):
        rng = Rng(SEED, b)
        idx = [rng.uniform_index(n) for _ in range(n)]
        reps.append(statistic(idx))
    reps = np.array(reps, float)
    defined = reps[~np.isnan(reps)]
    lo, hi = np.percentile(defined, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2])
    return {"ci": [float(lo), float(hi)], "undefined": int(np.isnan(reps).sum())}


# ----------------------------------------------------------------------------- a study

def reference(data, scale, weights):
    """Every coefficient of `data` ({"units": [dict rater -> category]}, "categories", "values",
    "raters"), with bootstrap intervals."""
    k = len(data["categories"])
    lists = [[u[r] for r in sorted(u)] for u in data["units"]]
    out = {"units": len(lists), "ratings": sum(len(u) for u in lists),
           "single": sum(len(u) == 1 for u in lists), "unrated": sum(len(u) == 0 for u in lists)}
    pairable = [u for u in lists if len(u) >= 2]
    alphas = {}
    for s in ("nominal", "ordinal", "interval"):
        if s != "nominal" and data["values"] is None:
            continue
        a, d_o, d_e = alpha_coincidence(pairable, data["categories"], s, data["values"])
        entry = {"estimate": num(a), "observed": d_o, "expected": d_e, "units": len(pairable),
                 "ratings": sum(len(u) for u in pairable)}
        if s == scale:
            entry["bootstrap"] = bootstrap(len(pairable), lambda idx, s=s: alpha_coincidence(
                [pairable[i] for i in idx], data["categories"], s, data["values"])[0])
        alphas[s] = entry
    out["alpha"] = alphas
    table, m = fleiss_table(lists, k)
    f, d_o, d_e = fleiss_of_table(table)
    out["fleiss"] = {"estimate": num(f), "observed": d_o, "expected": d_e, "m": int(m),
                     "units": int(table.shape[0]),
                     "bootstrap": bootstrap(table.shape[0],
                                            lambda idx: fleiss_of_table(table[idx])[0])}
    pairs = []
    for a in range(len(data["raters"])):
        for b in range(a + 1, len(data["raters"])):
            p = cohen_pairs(data, a, b)
            entry = {"raters": [data["raters"][a], data["raters"][b]], "units": len(p)}
            for w in WEIGHTS:
                if w != "none" and data["values"] is None:
                    continue
                entry[w] = num(cohen_of_pairs(p, k, w))
            entry["bootstrap"] = bootstrap(
                len(p), lambda idx, p=p: cohen_of_pairs([p[i] for i in idx], k, weights))
            pairs.append(entry)
    out["cohen"] = pairs
    return out


def likert_study():
    rng = np.random.default_rng(20261126)
    raters = ["r1", "r2", "r3", "r4"]
    units = []
    for u in range(40):
        latent = rng.uniform(1, 5)
        ratings = {}
        for r in range(4):
            if rng.uniform() < 0.15:
                continue
            bias = [0.0, 0.4, -0.3, 0.0][r]
            ratings[r] = int(np.clip(round(latent + bias + rng.normal(0, 0.8)), 1, 5))
        units.append(ratings)
    units[3] = {1: 4}  # single ratings: alpha drops them
    units[17] = {0: 2}
    values = sorted({v for u in units for v in u.values()})
    cat = {v: i for i, v in enumerate(values)}
    data = {"raters": raters, "categories": [str(v) for v in values],
            "values": [float(v) for v in values],
            "units": [{r: cat[v] for r, v in u.items()} for u in units]}
    long_rows = [(f"item{u:02d}", raters[r], v) for u, rr in enumerate(units) for r, v in rr.items()]
    # Shuffled, so the units' order is their first appearance, not their names'.
    order = rng.permutation(len(long_rows))
    long_rows = [long_rows[i] for i in order]
    first = {}
    for unit, _, _ in long_rows:
        first.setdefault(unit, len(first))
    by_name = {f"item{u:02d}": data["units"][u] for u in range(len(units))}
    long_data = dict(data, units=[by_name[name] for name in first])
    out_long = io.StringIO()
    out_long.write("item_id,annotator,score,comment\n")
    for unit, rater, v in long_rows:
        out_long.write(f"{unit},{rater},{v},x\n")
    out_long.write("item05,r9,,no rating\n")  # a row without a rating: counted, skipped
    out_wide = io.StringIO()
    out_wide.write("item_id," + ",".join(raters) + "\n")
    for u, rr in enumerate(units):
        out_wide.write(f"item{u:02d}," + ",".join(str(rr.get(r, "")) for r in range(4)) + "\n")
    return long_data, data, out_long.getvalue(), out_wide.getvalue()


def label_study():
    rng = np.random.default_rng(7)
    labels = ["not", "stereotype", "unsure"]
    annotators = ["ann_a", "ann_b", "ann_c", "ann_d", "ann_e"]
    rows, units = [], []
    for u in range(30):
        truth = rng.choice(3, p=[0.5, 0.4, 0.1])
        chosen = sorted(rng.choice(5, size=3, replace=False))
        ratings = {}
        for a in chosen:
            lab = truth if rng.uniform() < 0.75 else rng.integers(3)
            ratings[int(a)] = int(lab)
            rows.append((f"w{u}", "en" if u % 2 else "fr", annotators[a], labels[lab]))
        units.append(ratings)
    data = {"raters": [], "categories": labels, "values": None, "units": []}
    rater_index = {}
    for _, _, ann, _ in rows:
        rater_index.setdefault(ann, len(rater_index))
    data["raters"] = list(rater_index)
    for u in units:
        data["units"].append({rater_index[annotators[a]]: v for a, v in u.items()})
    csv = "word,language,annotator,label\n" + "".join(
        f"{w},{lang},{a},{lab}\n" for w, lang, a, lab in rows)
    return data, csv


def published_examples():
    nan = None
    reliability = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                   [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                   [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                   [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    units = [[reliability[c][u] - 1 for c in range(4) if reliability[c][u] is not None]
             for u in range(12)]
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    got = {s: alpha_coincidence(units, values, s, values)[0]
           for s in ("nominal", "ordinal", "interval")}
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
    for s, v in published.items():
        assert round(got[s], 3) == v, (s, got[s])
    csv = "unit," + ",".join("ABCD") + "\n" + "".join(
        f"{u + 1}," + ",".join("" if reliability[c][u] is None else str(reliability[c][u])
                               for c in range(4)) + "\n" for u in range(12))
    binary_a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    binary_b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    binary = alpha_coincidence([[a, b] for a, b in zip(binary_a, binary_b)], [0, 1], "nominal")[0]
    assert round(binary, 3) == 0.095, binary
    binary_csv = "unit,A,B\n" + "".join(
        f"{u + 1},{a},{b}\n" for u, (a, b) in enumerate(zip(binary_a, binary_b)))
    return {"csv": csv, "published": published, "reference": got,
            "binary": {"csv": binary_csv, "published": 0.095, "reference": binary}}


def main():
    long_data, wide_data, long_csv, wide_csv = likert_study()
    labels, labels_csv = label_study()
    fixture = {
        "bootstrap": {"resamples": BOOTSTRAP, "seed": SEED, "level": LEVEL},
        "krippendorff_2011": published_examples(),
        "likert": {"long_csv": long_csv, "wide_csv": wide_csv,
                   "long": reference(long_data, "ordinal", "quadratic"),
                   "wide": reference(wide_data, "interval", "linear"),
                   "categories": long_data["categories"], "raters": long_data["raters"]},
        "labels": {"csv": labels_csv, "raters": labels["raters"],
                   "categories": labels["categories"],
                   "reference": reference(labels, "nominal", "none")},
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print("wrote", OUT)
    ref = fixture["krippendorff_2011"]["reference"]
    print("Krippendorff 2011:", {k: round(v, 6) for k, v in ref.items()},
          "binary", round(fixture["krippendorff_2011"]["binary"]["reference"], 6))


if __name__ == "__main__":
    main()
