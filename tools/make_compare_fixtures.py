#!/usr/bin/python3
"""Reference for `vlbias compare` end to end (paper 004's design: confidence by
race within gender, by gender within race), computed with scipy.

Writes tests/fixtures/cli/confidence.csv (a synthetic table with planted
effects, a missing value, a missing key and a race absent among men) and
tests/fixtures/cli/compare_expected.json with scipy's statistics and Holm / BH
adjusted p-values computed here independently.

Run: /usr/bin/python3 tools/make_compare_fixtures.py
"""
import csv
import json
import os

import numpy as np
from scipy import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "cli")


def holm(p):
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.empty(m)
    running = 0.0
    for r, i in enumerate(order):
        running = max(running, min(1.0, (m - r) * p[i]))
        adj[i] = running
    return adj


def bh(p):
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.empty(m)
    running = 1.0
    for r in range(m - 1, -1, -1):
        i = order[r]
        running = min(running, p[i] * m / (r + 1))
        adj[i] = min(1.0, running)
    return adj


def main():
    rng = np.random.default_rng(2024)
    races = ["Asian", "Black", "Indian", "Latino", "White"]
    genders = ["Female", "Male"]
    rows = []
    for race_i, race in enumerate(races):
        for gender in genders:
            if race == "Indian" and gender == "Male":
                continue  # an empty intersectional cell
            n = int(rng.integers(6, 15))
            shift = 0.03 * race_i + (0.05 if gender == "Female" else 0.0)
            for _ in range(n):
                value = 0.5 + shift + rng.normal(0, 0.04)
                rows.append({"race": race, "gender": gender, "confidence": f"{value:.6f}"})
    rows.append({"race": "White", "gender": "Male", "confidence": ""})  # missing value
    rows.append({"race": "", "gender": "Female", "confidence": "0.61"})  # missing key
    with open(os.path.join(OUT, "confidence.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["race", "gender", "confidence"])
        w.writeheader()
        w.writerows(rows)

    def values(race=None, gender=None):
        return np.array([float(r["confidence"]) for r in rows
                         if r["confidence"] and r["race"] and r["gender"]
                         and (race is None or r["race"] == race)
                         and (gender is None or r["gender"] == gender)])

    expected = {}
    # ANOVA across races within each gender.
    anova = []
    for gender in genders:
        present = [r for r in races if len(values(r, gender))]
        groups = [values(r, gender) for r in present]
        res = stats.f_oneway(*groups)
        n = sum(len(g) for g in groups)
        grand = np.concatenate(groups).mean()
        ss_b = sum(len(g) * (g.mean() - grand) ** 2 for g in groups)
        ss_t = ((np.concatenate(groups) - grand) ** 2).sum()
        anova.append({"within": gender, "groups": present, "n": [len(g) for g in groups],
                      "means": [g.mean() for g in groups], "sds": [g.std(ddof=1) for g in groups],
                      "statistic": res.statistic, "p_value": res.pvalue,
                      "df": [len(groups) - 1, n - len(groups)], "eta_squared": ss_b / ss_t})
    p = [a["p_value"] for a in anova]
    for a, h, b in zip(anova, holm(p), bh(p)):
        a["p_holm"], a["p_bh"] = h, b
    expected["anova_race_within_gender"] = anova

    # Welch t across genders within each race (Indian has one gender only).
    welch = []
    for race in races:
        f, m = values(race, "Female"), values(race, "Male")
        if len(m) == 0:
            welch.append({"within": race, "statistic": None, "p_value": None})
            continue
        res = stats.ttest_ind(f, m, equal_var=False)
        welch.append({"within": race, "statistic": res.statistic, "p_value": res.pvalue})
    p = [w["p_value"] for w in welch if w["p_value"] is not None]
    h, b = holm(p), bh(p)
    j = 0
    for w in welch:
        if w["p_value"] is not None:
            w["p_holm"], w["p_bh"] = h[j], b[j]
            j += 1
    expected["welch_gender_within_race"] = welch

    # Pairwise Mann-Whitney over all races (both genders), adjusted together.
    pairs = []
    for a in range(len(races)):
        for b_ in range(a + 1, len(races)):
            x, y = values(races[a]), values(races[b_])
            res = stats.mannwhitneyu(x, y, alternative="two-sided")
            pairs.append({"groups": [races[a], races[b_]], "statistic": res.statistic,
                          "p_value": res.pvalue})
    p = [q["p_value"] for q in pairs]
    for q, h_, b__ in zip(pairs, holm(p), bh(p)):
        q["p_holm"], q["p_bh"] = h_, b__
    expected["mannwhitney_pairwise_race"] = pairs

    # describe --by race: n, mean, sd (ddof=1), numpy type-7 percentiles.
    desc = []
    for race in races:
        x = values(race)
        desc.append({"race": race, "n": len(x), "mean": x.mean(), "sd": x.std(ddof=1),
                     "min": x.min(), "max": x.max(),
                     "percentiles": list(np.percentile(x, [5, 25, 50, 75, 95]))})
    expected["describe_race"] = desc

    with open(os.path.join(OUT, "compare_expected.json"), "w") as f:
        json.dump(expected, f, indent=1, default=float)
        f.write("\n")


if __name__ == "__main__":
    main()
