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
  goodness of fit       scipy.stats.chisquare, power_divergence(lambda_="log-likelihood"),
                        binomtest (k = 2) and, for k > 2, every outcome enumerated with
                        itertools and scipy.stats.multinomial.pmf; power by scipy.stats.ncx2
                        and the minimum detectable w by scipy.optimize.brentq on it

Writes tests/fixtures/stats/multinomial_intervals.json, tests/fixtures/stats/goodness_of_fit.json
(tests/stats/goodness_of_fit_test.cpp) and
tests/fixtures/metrics/representation.json, read by tests/stats/multinomial_intervals_test.cpp
and tests/metrics/representation_test.cpp.

  apt-get install python3-statsmodels python3-scipy
  /usr/bin/python3 tools/make_representation_fixtures.py
"""
import itertools
import json
import os

import numpy as np
import scipy.optimize
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


GOF_CASES = [
    ("parity, two classes", [14, 6], [0.5, 0.5]),
    ("parity, a perfect fit", [10, 10], [0.5, 0.5]),
    ("census share of women", [3, 37], [0.9, 0.1]),
    ("all one class", [0, 25], [0.5, 0.5]),
    ("seven classes", [5, 2, 9, 0, 3, 1, 4], [1 / 7] * 7),
    ("four races, uneven target", [12, 3, 2, 3], [0.6, 0.13, 0.19, 0.08]),
    ("a zero share never observed", [8, 4, 0], [0.5, 0.5, 0.0]),
    ("large n", [612, 388], [0.5, 0.5]),
]


def exact_multinomial(counts, shares):
    """Sum of the probabilities of outcomes no more probable than the observed one."""
    keep = [i for i, q in enumerate(shares) if q > 0]
    x = [counts[i] for i in keep]
    q = [shares[i] for i in keep]
    n = sum(x)
    if len(x) == 2:
        return scipy.stats.binomtest(x[0], n, q[0]).pvalue
    observed = scipy.stats.multinomial.pmf(x, n, q)
    total = 0.0
    for cut in itertools.combinations(range(n + len(x) - 1), len(x) - 1):
        parts = np.diff([-1] + list(cut) + [n + len(x) - 1]) - 1
        pr = scipy.stats.multinomial.pmf(parts, n, q)
        if pr <= observed * (1 + 1e-7):
            total += pr
    return min(1.0, total)


def gof_fixture():
    cases = []
    for name, counts, shares in GOF_CASES:
        keep = [i for i, q in enumerate(shares) if q > 0]
        x = np.array([counts[i] for i in keep], dtype=float)
        q = np.array([shares[i] for i in keep])
        e = x.sum() * q
        chi = scipy.stats.chisquare(x, e)
        g = scipy.stats.power_divergence(x, e, lambda_="log-likelihood")
        cases.append({"name": name, "counts": counts, "shares": shares,
                      "chi_square": [float(chi.statistic), float(chi.pvalue)],
                      "g_test": [max(0.0, float(g.statistic)), float(g.pvalue)],
                      "df": len(x) - 1, "cohens_w": float(np.sqrt(chi.statistic / x.sum())),
                      "exact_p": float(exact_multinomial(counts, shares))})
    power = []
    for n, df, w, alpha in [(50, 1, 0.3, 0.05), (200, 6, 0.2, 0.05), (20, 1, 0.0, 0.05),
                            (1000, 3, 0.1, 0.01)]:
        crit = scipy.stats.chi2.isf(alpha, df)
        pw = alpha if w == 0 else float(scipy.stats.ncx2.sf(crit, df, n * w * w))
        power.append({"n": n, "df": df, "w": w, "alpha": alpha, "power": pw})
    mde = []
    for n, df, alpha, target in [(50, 1, 0.05, 0.8), (200, 6, 0.05, 0.9), (12, 1, 0.05, 0.8)]:
        crit = scipy.stats.chi2.isf(alpha, df)
        w = scipy.optimize.brentq(lambda w: scipy.stats.ncx2.sf(crit, df, n * w * w) - target,
                                  1e-9, 50, xtol=1e-14)
        mde.append({"n": n, "df": df, "alpha": alpha, "power": target, "w": w})
    return {"cases": cases, "power": power, "mde": mde}


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
    write("tests/fixtures/stats/goodness_of_fit.json", gof_fixture())
