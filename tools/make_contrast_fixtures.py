#!/usr/bin/python3
"""Writes tests/fixtures/stats/contrasts.json: one group against the unweighted mean of
the other groups' means (stats.h contrast_vs_others), computed independently with numpy
and scipy. With two groups the contrast is Welch's t test, checked here against
scipy.stats.ttest_ind(equal_var=False) before the fixture is written.

Run: /usr/bin/python3 tools/make_contrast_fixtures.py
"""
import json
import pathlib

import numpy as np
from scipy import stats

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "stats" / "contrasts.json"


def contrast(groups, g, level):
    G = len(groups)
    means = np.array([np.mean(x) for x in groups])
    var = np.array([np.var(x, ddof=1) for x in groups])
    n = np.array([len(x) for x in groups], dtype=float)
    w = np.full(G, 1.0 / (G - 1) ** 2)
    w[g] = 1.0
    c = np.full(G, -1.0 / (G - 1))
    c[g] = 1.0
    estimate = float(c @ means)
    terms = w * var / n
    se2 = terms.sum()
    se = float(np.sqrt(se2))
    df = float(se2 ** 2 / np.sum(terms ** 2 / (n - 1)))
    t = estimate / se
    p = float(2 * stats.t.sf(abs(t), df))
    q = stats.t.ppf(0.5 + level / 2, df)
    return {"estimate": estimate, "se": se, "df": df, "t": t, "p_value": p,
            "lower": estimate - q * se, "upper": estimate + q * se}


def main():
    rng = np.random.default_rng(20261124)
    cases = []
    # Two groups: must equal Welch's t test.
    a, b = rng.normal(0.3, 1.0, 12), rng.normal(0.0, 2.0, 30)
    r = contrast([a, b], 0, 0.95)
    w = stats.ttest_ind(a, b, equal_var=False)
    assert abs(r["t"] - w.statistic) < 1e-12 and abs(r["p_value"] - w.pvalue) < 1e-12
    cases.append({"name": "two groups (Welch)", "level": 0.95, "groups": [a.tolist(), b.tolist()]})
    # Unequal sizes and spreads, one shifted group (the planted effect).
    groups = [rng.normal(0.0, s, n) for s, n in [(0.02, 90), (0.03, 45), (0.01, 12), (0.05, 7)]]
    groups[2] = groups[2] + 0.02
    cases.append({"name": "four unequal groups", "level": 0.95, "groups": [x.tolist() for x in groups]})
    # Six balanced groups at another level, tiny effects (p near 1).
    groups = [rng.normal(0.1, 0.01, 20) for _ in range(6)]
    cases.append({"name": "six balanced groups, 99%", "level": 0.99, "groups": [x.tolist() for x in groups]})
    # A strong effect: p far below 1e-10.
    groups = [rng.normal(0.0, 0.01, 200), rng.normal(0.05, 0.01, 200), rng.normal(0.0, 0.01, 200)]
    cases.append({"name": "strong effect", "level": 0.95, "groups": [x.tolist() for x in groups]})
    for case in cases:
        case["expected"] = [contrast([np.array(x) for x in case["groups"]], g, case["level"])
                            for g in range(len(case["groups"]))]
    OUT.write_text(json.dumps({"generator": "tools/make_contrast_fixtures.py (numpy, scipy)",
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
