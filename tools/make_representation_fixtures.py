#!/usr/bin/python3
"""References for issue 42's building blocks: simultaneous multinomial intervals
(include/vlbias/stats/multinomial_intervals.h) and the representation measures
(include/vlbias/metrics/representation.h), computed independently.

  sison-glaz, goodman   statsmodels 0.13 multinomial_proportions_confint (Debian's
                        python3-statsmodels), and the numbers published with the method: Sison
                        and Glaz's three examples as R's MultinomialCI computes them (4 decimals),
                        and Goodman's intervals as the paper prints them (3 decimals), copied
                        from statsmodels' own test data. statsmodels raises where no c solves
                        nu(c) <= level < nu(c + 1): recorded as "unsolved".
  parity_mad            DALL-Eval's np_mad (biases/compute_mad.py: np.mean(np.absolute(data -
                        np.mean(data)))) of the shares; HEIM's gender imbalance abs(p_female -
                        0.5) and skin-tone imbalance sum(abs(p - 0.1)) / 10 as HEIM writes them
  entropy_bias          1 - scipy.stats.entropy(p) / log(K) (OpenBias)
  kl_to_target          scipy.stats.entropy(p, q)

Writes tests/fixtures/stats/multinomial_intervals.json and
tests/fixtures/metrics/representation.json, read by tests/stats/multinomial_intervals_test.cpp
and tests/metrics/representation_test.cpp.

  apt-get install python3-statsmodels python3-scipy
  /usr/bin/python3 tools/make_representation_fixtures.py
"""
import json
import os

import numpy as np
import scipy.stats
from statsmodels.stats.proportion import multinomial_proportions_confint

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, counts, level)
INTERVAL_CASES = [
    ("sison-glaz example 1", [56, 72, 73, 59, 62, 87, 58], 0.95),
    ("sison-glaz example 1 at 90%", [56, 72, 73, 59, 62, 87, 58], 0.90),
    ("sison-glaz example 2", [5] * 50, 0.95),
    ("sison-glaz example 3", [1] * 10 + [12] * 10 + [5] * 10 + [3] * 10 + [4] * 10, 0.95),
    ("a zero count", [56, 0, 73, 59, 62, 87, 58], 0.95),
    ("ten Monk tones, small counts", [0, 3, 12, 25, 30, 18, 7, 3, 2, 0], 0.95),
    ("four races", [5, 10, 20, 65], 0.95),
    ("seven classes, tiny counts", [1, 0, 2, 5, 3, 1, 0], 0.95),
    ("large n", [5000, 3000, 2000, 1000, 500, 300, 200], 0.99),
    ("two genders", [30, 70], 0.95),
    ("two genders, one empty", [0, 9], 0.95),
]

# Published: Sison and Glaz's examples through R's MultinomialCI (statsmodels' test data, 4
# decimals) and Goodman's intervals as the paper prints them (3 decimals).
PUBLISHED = {
    "sison-glaz example 1": {
        "sison-glaz": [[.07922912, .1643361], [.11349036, .1985973], [.11563169, .2007386],
                       [.08565310, .1707601], [.09207709, .1771840], [.14561028, .2307172],
                       [.08351178, .1686187]],
        "goodman": [[.085, .166], [.115, .204], [.116, .207], [.091, .173], [.096, .181],
                    [.143, .239], [.089, .171]],
    },
    "sison-glaz example 2": {
        "sison-glaz": [[0, .05304026]] * 50,
        "goodman": [[.005, .075]] * 50,
    },
    "sison-glaz example 3": {
        "sison-glaz": [[0, .04120118]] * 10 + [[.012, .08520118]] * 10 + [[0, .05720118]] * 10
        + [[0, .04920118]] * 10 + [[0, .05320118]] * 10,
        "goodman": [[0, .049]] * 10 + [[.019, .114]] * 10 + [[.005, .075]] * 10
        + [[.002, .062]] * 10 + [[.004, .069]] * 10,
    },
}


def intervals(counts, level, method):
    try:
        ci = multinomial_proportions_confint(counts, alpha=1 - level, method=method)
    except Exception:  # statsmodels' "Couldn't find a value for `c`"
        return "unsolved"
    return [[float(lo), float(hi)] for lo, hi in ci]


def interval_fixture():
    cases = []
    for name, counts, level in INTERVAL_CASES:
        case = {"name": name, "counts": counts, "level": level,
                "sison_glaz": intervals(counts, level, "sison-glaz"),
                "goodman": intervals(counts, level, "goodman")}
        if name in PUBLISHED:
            case["published"] = PUBLISHED[name]
        cases.append(case)
    return {"generator": "tools/make_representation_fixtures.py",
            "reference": "statsmodels " + __import__("statsmodels").__version__,
            "cases": cases}


def np_mad(data):  # DALL-Eval biases/compute_mad.py
    return float(np.mean(np.absolute(data - np.mean(data))))


def measures_fixture():
    rng = np.random.default_rng(42)
    cases = []
    share_sets = [
        ("parity of 2", np.array([0.5, 0.5])),
        ("all of one of 2", np.array([0.0, 1.0])),
        ("parity of 10", np.full(10, 0.1)),
        ("all of one of 10", np.eye(10)[3]),
    ]
    for k in (2, 3, 4, 7, 10):
        for i in range(3):
            p = rng.dirichlet(np.full(k, 0.7))
            if i == 2:
                p[rng.integers(k)] = 0.0
                p /= p.sum()
            share_sets.append((f"dirichlet k={k} #{i}", p))
    for name, p in share_sets:
        k = len(p)
        q = rng.dirichlet(np.full(k, 2.0))
        case = {"name": name, "shares": p.tolist(), "target": q.tolist(),
                "parity_mad": np_mad(p),
                "entropy_bias": float(1 - scipy.stats.entropy(p) / np.log(k)),
                "kl_to_target": float(scipy.stats.entropy(p, q))}
        if k == 2:
            case["heim_gender_imbalance"] = float(abs(p[1] - 0.5))
        if k == 10:
            case["heim_skin_tone_imbalance"] = float(np.sum(np.abs(p - 0.1)) / 10)
        cases.append(case)
    counts = [[3, 7], [0, 4, 4, 2], [10, 0, 0, 0, 5, 5, 80]]
    return {"generator": "tools/make_representation_fixtures.py",
            "reference": "numpy " + np.__version__ + ", scipy " + scipy.__version__,
            "cases": cases,
            "counts": [{"counts": c, "shares": (np.array(c) / np.sum(c)).tolist()}
                       for c in counts]}


def write(path, data):
    full = os.path.join(REPO, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    write("tests/fixtures/stats/multinomial_intervals.json", interval_fixture())
    write("tests/fixtures/metrics/representation.json", measures_fixture())
