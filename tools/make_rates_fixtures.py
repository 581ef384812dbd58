#!/usr/bin/python3
"""Reference for refusal / safety-filter rates by group (stats.h chi_square_rates,
intervals.h wilson_interval; the lvlm-counterfactual audit's refusal_rates and the
geo-diversity audit's filtered_rates), computed with scipy:

  chi-square   scipy.stats.chi2_contingency on the 2 x k table [[refused], [not refused]],
               correction=False (vlbias applies no Yates correction, also at k = 2);
               Cramer's V = sqrt(chi2 / N)
  wilson       scipy.stats.binomtest(x, n).proportion_ci(0.95, method="wilson")

Cases: a paper-002-like table of filtered generations per region, a two-group table (where
scipy's default would apply Yates), small counts (expected < 5), and a group with no requests
(left out of the test).

Writes tests/fixtures/stats/rates.json, read by tests/stats/rates_test.cpp.
"""
import json
import os

import numpy as np
from scipy import stats

CASES = {
    "regions": ([12, 3, 7, 25, 4, 9], [180, 180, 180, 180, 180, 180]),
    "two_groups": ([30, 45], [400, 380]),
    "small": ([0, 2, 5], [10, 12, 9]),
    "empty_group": ([4, 0, 11], [50, 0, 60]),
}


def case(successes, totals):
    used = [g for g, n in enumerate(totals) if n > 0]
    table = np.array([[successes[g] for g in used], [totals[g] - successes[g] for g in used]])
    chi2, p, dof, expected = stats.chi2_contingency(table, correction=False)
    wilson = []
    for x, n in zip(successes, totals):
        if n == 0:
            wilson.append(None)
            continue
        ci = stats.binomtest(x, n).proportion_ci(confidence_level=0.95, method="wilson")
        wilson.append([ci.low, ci.high])
    return {
        "successes": successes,
        "totals": totals,
        "statistic": chi2,
        "df": dof,
        "p_value": p,
        "cramers_v": float(np.sqrt(chi2 / table.sum())),
        "min_expected": float(expected.min()),
        "wilson95": wilson,
    }


def main():
    out = {name: case(*args) for name, args in CASES.items()}
    root = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "stats")
    with open(os.path.join(root, "rates.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
