#!/usr/bin/python3
"""Reference values for the resampling half of src/stats.

Writes tests/fixtures/stats/resampling.json, read by tests/stats/descriptives_test.cpp,
resampling_test.cpp and multiple_testing_test.cpp:

  percentiles     numpy.percentile (default "linear" = Hyndman-Fan type 7)
  describe        numpy mean / std(ddof=1) / min / percentiles / max
  multiple        statsmodels.stats.multitest.multipletests(method="holm" | "fdr_bh");
                  NaN entries are dropped before the call and put back as NaN
  sign_flip       exact sign-flip p-values by enumerating every sign vector
                  (itertools.product)
  permutation     exact permutation p-values by enumerating every relabelling
                  (itertools.combinations for two groups, distinct permutations of
                  the label multiset for three)

Statistics that the C++ side computes are mirrored here operation for operation where
that matters (the sign-flip mean is a left-to-right sum divided by n, as in stats.h);
"at least as extreme" uses the relative tolerance of stats.h: two-sided
|T*| >= |T| (1 - 1e-12), greater T* >= T - |T| 1e-12, less T* <= T + |T| 1e-12.

Needs Debian's python3-numpy, python3-statsmodels (numpy 1.24, statsmodels 0.13).
Run from anywhere: /usr/bin/python3 tools/make_resampling_fixtures.py
"""
import itertools
import json
import math
import pathlib

import numpy as np
from statsmodels.stats.multitest import multipletests

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "stats" / "resampling.json"
REL_TOL = 1e-12
ALTERNATIVES = ("two-sided", "greater", "less")


def finite_or_none(v):
    v = float(v)
    return None if math.isnan(v) else v


def is_extreme(t, observed, alternative):
    tol = abs(observed) * REL_TOL
    if alternative == "two-sided":
        return abs(t) >= abs(observed) - tol
    if alternative == "greater":
        return t >= observed - tol
    return t <= observed + tol


# ------------------------------------------------------------------ descriptives

def sample_arrays():
    rng = np.random.default_rng(20240611)
    return {
        "single": [3.5],
        "pair": [2.0, -1.0],
        "ties": [1.0, 2.0, 2.0, 2.0, 3.0, 7.0, 7.0],
        "negative": [-5.5, -1.0, -3.25, -0.125, -2.0],
        "mixed_sign": [-4.0, 10.0, 0.5, -0.25, 3.0, 3.0],
        "constant": [4.2, 4.2, 4.2, 4.2, 4.2],
        "normal_37": rng.standard_normal(37).tolist(),
        "lognormal_100": rng.lognormal(0.0, 2.0, 100).tolist(),
        "offset_1e9": (1e9 + rng.standard_normal(20)).tolist(),
    }


QS = [0.0, 1.0, 2.5, 5.0, 10.0, 12.5, 25.0, 33.3, 50.0, 66.6, 75.0, 90.0, 95.0, 97.5,
      99.0, 99.9, 100.0]


def descriptives():
    percentiles = []
    describe = []
    for name, values in sample_arrays().items():
        x = np.asarray(values, dtype=np.float64)
        percentiles.append({
            "name": name,
            "x": values,
            "q": QS,
            "expected": [float(v) for v in np.percentile(x, QS)],
        })
        describe.append({
            "name": name,
            "x": values,
            "n": len(values),
            "mean": float(np.mean(x)),
            "sd": finite_or_none(np.std(x, ddof=1)) if len(values) > 1 else None,
            "min": float(np.min(x)),
            "p25": float(np.percentile(x, 25)),
            "median": float(np.percentile(x, 50)),
            "p75": float(np.percentile(x, 75)),
            "max": float(np.max(x)),
        })
    return percentiles, describe


# -------------------------------------------------------------- multiple testing

def adjusted(p, method):
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    if defined.any():
        out[defined] = multipletests(p[defined], method=method)[1]
    return [finite_or_none(v) for v in out]


def multiple_testing():
    rng = np.random.default_rng(7)
    cases = {
        "simple": [0.01, 0.04, 0.03, 0.005, 0.2],
        "ties": [0.02, 0.02, 0.02, 0.001, 0.5, 0.5],
        "with_one": [1.0, 0.03, 1.0, 0.0004, 0.07],
        "with_nan": [0.01, float("nan"), 0.04, 0.3, float("nan"), 0.002],
        "single": [0.03],
        "zeros": [0.0, 0.0, 0.5],
        "large_m": (rng.uniform(size=60) ** 3).tolist(),
    }
    return [{
        "name": name,
        "p": [finite_or_none(v) for v in p],
        "holm": adjusted(p, "holm"),
        "bh": adjusted(p, "fdr_bh"),
    } for name, p in cases.items()]


# --------------------------------------------------------------------- sign flip

def left_to_right_mean(values):
    s = 0.0
    for v in values:
        s += v
    return s / len(values)


def weighted_sum(values):
    # The custom statistic of the C++ test: sum_i (i + 1) * v_i, left to right.
    s = 0.0
    for i, v in enumerate(values):
        s += (i + 1) * v
    return s


STATISTICS = {"mean": left_to_right_mean, "weighted_sum": weighted_sum}


def sign_flip():
    rng = np.random.default_rng(99)
    cases = {
        "eighths_6": [0.875, -0.25, 1.5, 0.125, 2.0, -0.5],
        "ties_8": [1.0, 1.0, -1.0, 2.0, 2.0, 0.0, 3.0, -2.0],
        "single": [0.7],
        "normal_10": (0.4 + rng.standard_normal(10)).tolist(),
        "normal_13": (0.2 + rng.standard_normal(13)).tolist(),
        "zeros_4": [0.0, 0.0, 0.0, 0.0],
    }
    out = []
    for name, values in cases.items():
        n = len(values)
        for stat_name, stat in STATISTICS.items():
            observed = stat(values)
            exceed = {a: 0 for a in ALTERNATIVES}
            for signs in itertools.product((1.0, -1.0), repeat=n):
                t = stat([s * v for s, v in zip(signs, values)])
                for a in ALTERNATIVES:
                    exceed[a] += is_extreme(t, observed, a)
            out.append({
                "name": name,
                "statistic": stat_name,
                "x": values,
                "observed": observed,
                "count": 2 ** n,
                "exceed": exceed,
                "p": {a: exceed[a] / 2 ** n for a in ALTERNATIVES},
            })
    return out


# ------------------------------------------------------------------- permutation

def mean_difference(values, labels):
    g0 = [v for v, l in zip(values, labels) if l == 0]
    g1 = [v for v, l in zip(values, labels) if l == 1]
    return sum(g0) / len(g0) - sum(g1) / len(g1)


def between_groups(values, labels):
    # The 3-group statistic of the C++ test: sum_g n_g * mean_g^2, groups in label order.
    total = 0.0
    for g in sorted(set(labels)):
        members = [v for v, l in zip(values, labels) if l == g]
        m = sum(members) / len(members)
        total += len(members) * m * m
    return total


def exact_two_group(values, labels):
    n = len(values)
    n0 = labels.count(0)
    observed = mean_difference(values, labels)
    exceed = {a: 0 for a in ALTERNATIVES}
    count = 0
    for zeros in itertools.combinations(range(n), n0):
        chosen = set(zeros)
        t = mean_difference(values, [0 if i in chosen else 1 for i in range(n)])
        count += 1
        for a in ALTERNATIVES:
            exceed[a] += is_extreme(t, observed, a)
    assert count == math.comb(n, n0)
    return observed, count, exceed


def exact_multiset(values, labels):
    observed = between_groups(values, labels)
    exceed = {a: 0 for a in ALTERNATIVES}
    relabellings = set(itertools.permutations(labels))
    for perm in relabellings:
        t = between_groups(values, list(perm))
        for a in ALTERNATIVES:
            exceed[a] += is_extreme(t, observed, a)
    return observed, len(relabellings), exceed


def permutation():
    rng = np.random.default_rng(5)
    cases = [
        ("normal_5_6", "mean_difference",
         (rng.standard_normal(11) + np.r_[np.full(5, 0.8), np.zeros(6)]).tolist(),
         [0] * 5 + [1] * 6),
        ("normal_7_4", "mean_difference",
         (rng.standard_normal(11) + np.r_[np.full(7, 0.5), np.zeros(4)]).tolist(),
         [0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1]),
        ("integers_6_6", "mean_difference",
         [3.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 3.0],
         [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]),
        ("three_groups", "between_groups",
         [1.5, 2.25, 0.5, 3.0, 4.5, 2.0, 5.25],
         [2, 0, 2, 1, 0, 1, 1]),
    ]
    out = []
    for name, statistic, values, labels in cases:
        if statistic == "mean_difference":
            observed, count, exceed = exact_two_group(values, labels)
        else:
            observed, count, exceed = exact_multiset(values, labels)
        out.append({
            "name": name,
            "statistic": statistic,
            "x": values,
            "labels": labels,
            "observed": observed,
            "count": count,
            "exceed": exceed,
            "p": {a: exceed[a] / count for a in ALTERNATIVES},
        })
    return out


def main():
    percentiles, describe = descriptives()
    data = {
        "generator": "tools/make_resampling_fixtures.py",
        "numpy": np.__version__,
        "relative_tolerance": REL_TOL,
        "percentiles": percentiles,
        "describe": describe,
        "multiple_testing": multiple_testing(),
        "sign_flip": sign_flip(),
        "permutation": permutation(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, allow_nan=False)
    OUT.write_text(text + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
