#!/usr/bin/python3
"""Reference pilots for `vlbias power --pilot` on the LVLM and geo-diversity audits
-> tests/fixtures/power/pilots.json (docs/methods.md#power).

LVLM: tests/fixtures/lvlm/cluster/generations.jsonl (8 image sets x 3 seeds x 3 races x 2
mitigations) as the pilot. Per mitigation, the set-blocked variance components the audit
records in analyses.group_tests.results[].pilot_variance, computed here independently with
numpy: the residual sd of the two-way (set x race) table, flat or within each image set, the
set sd sqrt(max(0, var(set means) - sigma_e^2 / k)), and clustered the group x cluster sd
sqrt(max(0, v_C - sigma_e^2 mean(1 / m_c))) with v_C the two-way residual variance of the image
sets' mean table. Then the power of the resulting Friedman design at a stated effect: an
independent numpy Monte Carlo (make_power_fixtures.friedman_p, scipy's statistic) with Holm
over the family of 2 Friedman tests.

Geo-diversity: the filtered-rate chi-square design of a stated outcomes table (requested and
refused per region), its analytic power from scipy's noncentral chi-square and a numpy Monte
Carlo (make_power_fixtures.monte_carlo).

Run: /usr/bin/python3 tools/make_power_pilot_fixtures.py
"""
import json
import os

import numpy as np

import make_power_fixtures as mpf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
mpf.R = 100_000


def two_way_ss(x):
    r = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return float((r**2).sum())


def components(rows, clustered):
    """rows: [(image set, seed, race, value)] of one mitigation."""
    races = sorted({r[2] for r in rows})
    sets = sorted({(r[0], r[1]) for r in rows})
    k = len(races)
    x = np.array([[next(r[3] for r in rows if (r[0], r[1]) == s and r[2] == g) for g in races]
                  for s in sets])
    images = sorted({s[0] for s in sets})
    members = [[i for i, s in enumerate(sets) if s[0] == c] for c in images] if clustered else [
        list(range(len(sets)))]
    ss = sum(two_way_ss(x[m]) for m in members)
    df = sum((len(m) - 1) * (k - 1) for m in members)
    resid = ss / df
    out = {"complete_sets": len(sets), "groups": k, "residual_sd": float(np.sqrt(resid)),
           "set_sd": float(np.sqrt(max(0.0, x.mean(axis=1).var(ddof=1) - resid / k)))}
    if clustered:
        y = np.array([x[m].mean(axis=0) for m in members])
        v = two_way_ss(y) / ((len(members) - 1) * (k - 1))
        inv_m = float(np.mean([1.0 / len(m) for m in members]))
        out["clusters"] = len(members)
        out["cluster_sd"] = float(np.sqrt(max(0.0, v - resid * inv_m)))
    return out


def lvlm():
    path = os.path.join(ROOT, "tests", "fixtures", "lvlm", "cluster", "generations.jsonl")
    data = [json.loads(line) for line in open(path)]
    out = {}
    for level in ("M1", "none"):
        rows = [((d["filename"], d["rank"]), d["seed"], d["race"], d["toxicity"]) for d in data
                if d["mitigation"] == level]
        rows = [(s[0], (s[1], seed), g, v) for s, seed, g, v in rows]
        out[level] = {}
        for clustered in (False, True):
            c = components(rows, clustered)
            d = mpf.design("friedman", [c.get("clusters", c["complete_sets"])] * c["groups"],
                           [c["residual_sd"]] * c["groups"], family=2)
            d["set_sd"] = c["set_sd"]
            if clustered:
                d["sets_per_cluster"] = round(c["complete_sets"] / c["clusters"])
                d["cluster_sd"] = c["cluster_sd"]
            effect = 0.15
            pw, se = mpf.monte_carlo(d, effect)
            c.update(effect=effect, monte_carlo=pw, monte_carlo_se=se,
                     analytic=mpf.analytic(d, effect))
            out[level]["clustered" if clustered else "flat"] = c
    return out


def geo():
    # Outcomes written by tests/cli/power_pilots_test.cpp: Africa 200 requested, 20 refused;
    # WestAsia 150 requested, 18 refused.
    d = mpf.design("chi_square", [200, 150], target=1, base_rate=38 / 350)
    effect = 0.1
    pw, se = mpf.monte_carlo(d, effect)
    return {"design": d, "effect": effect, "analytic": mpf.analytic(d, effect),
            "monte_carlo": pw, "monte_carlo_se": se}


def main():
    out = {"replicates": mpf.R, "lvlm": lvlm(), "geo": geo()}
    folder = os.path.join(ROOT, "tests", "fixtures", "power")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "pilots.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
