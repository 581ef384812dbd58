#!/usr/bin/python3
"""Reference for the agreement of two scorers (docs/methods.md#agreement,
include/vlbias/metrics/agreement.h), computed independently with numpy, scipy and sklearn.

A synthetic study of 300 texts in 4 dialect groups: a latent toxicity t ~ Beta(1.2, 3),
scorer `clf` = t + noise and scorer `persp` = t + noise, with the group `aae` shifted up by
0.15 in `persp` only (a scorer biased against a dialect), both clipped to [0, 1] and rounded
to 2 decimals (ties); a third scorer `judge` rates 1-10 (round(1 + 9 t + noise)), for a
threshold on another scale. A few scores and group cells are missing.

  pearson      scipy.stats.pearsonr; CI tanh(atanh r -+ z / sqrt(n - 3)), z = norm.ppf,
               checked against pearsonr(...).confidence_interval()
  spearman     scipy.stats.spearmanr; CI tanh(atanh rho -+ z sqrt((1 + rho^2 / 2) / (n - 3)))
               (Bonett and Wright 2000)
  kappa        sklearn.metrics.cohen_kappa_score of the labels score >= threshold; its
               standard errors from Fleiss, Cohen and Everitt (1969) written here for a
               general k x k table (statsmodels, which implements the same, is not installed);
               CI kappa -+ z se; z test kappa / se0 with 2 * norm.sf
  bootstrap    kappa's percentile bootstrap exactly as vlbias draws it: rows ordered by cell
               (00, 01, 10, 11), replicate b takes idx[i] = Rng(seed, b).uniform_index(n)
               (tools/vlbias_rng.py), np.percentile (linear) of the defined replicates
  difference   d = b - a: mean, sd (ddof 1), mean -+ q sem with the t quantile q solved to 40
               digits with mpmath (scipy 1.10's t.ppf, cephes stdtrit, is off by 1e-11 to 1e-9
               relative; Boost's, which vlbias uses, is exact to ~1 ulp; scipy's
               t.interval is checked to 1e-8), scipy.stats.ttest_rel(b, a)
  groups       per group the same, the disagreement rate with Wilson's interval (its formula
               in numpy), and scipy.stats.kruskal over the groups' d

Writes tests/fixtures/metrics/agreement.json, read by tests/metrics/agreement_test.cpp and
tests/cli/metric_agreement_test.cpp.

Run: /usr/bin/python3 tools/make_agreement_fixtures.py
"""
import io
import json
import math
import os
import sys
import warnings

import mpmath
import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vlbias_rng import Rng  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "metrics", "agreement.json")
LEVEL = 0.95
BOOTSTRAP = 2000
SEED = 11


def make_rows():
    rng = np.random.default_rng(20261125)
    groups = ["sae", "aae", "identity", "other"]
    rows = []
    for i in range(300):
        g = groups[i % 4]
        t = rng.beta(1.2, 3.0)
        clf = np.clip(t + rng.normal(0, 0.12), 0, 1)
        persp = np.clip(t + rng.normal(0, 0.12) + (0.15 if g == "aae" else 0.0), 0, 1)
        judge = int(np.clip(round(1 + 9 * t + rng.normal(0, 1.0)), 1, 10))
        rows.append({"id": i, "dialect": g, "clf": round(float(clf), 2),
                     "persp": round(float(persp), 2), "judge": judge})
    for i in (5, 77, 150):
        rows[i]["clf"] = None
    for i in (9, 151, 299):
        rows[i]["persp"] = None
    for i in (12, 200):
        rows[i]["dialect"] = None
    return rows


def to_csv(rows):
    out = io.StringIO()
    out.write("id,dialect,clf,persp,judge\n")
    for r in rows:
        cells = [str(r["id"]), r["dialect"] or "", "" if r["clf"] is None else repr(r["clf"]),
                 "" if r["persp"] is None else repr(r["persp"]), str(r["judge"])]
        out.write(",".join(cells) + "\n")
    return out.getvalue()


def num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def fisher_ci(r, se):
    z = stats.norm.ppf(0.5 + LEVEL / 2)
    return [num(np.tanh(np.arctanh(r) - z * se)), num(np.tanh(np.arctanh(r) + z * se))]


def fce_variances(table):
    """Fleiss, Cohen and Everitt (1969) large-sample variances of kappa (k x k, rows = A)."""
    n = table.sum()
    p = table / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    pe = float(np.dot(row, col))
    po = float(np.trace(p))
    kappa = (po - pe) / (1 - pe)
    total = 0.0
    for i in range(p.shape[0]):
        for j in range(p.shape[1]):
            if i == j:
                total += p[i, i] * (1 - (row[i] + col[i]) * (1 - kappa)) ** 2
            else:
                total += (1 - kappa) ** 2 * p[i, j] * (col[i] + row[j]) ** 2
    var = (total - (kappa - pe * (1 - kappa)) ** 2) / ((1 - pe) ** 2 * n)
    var0 = (pe + pe ** 2 - float(np.sum(row * col * (row + col)))) / ((1 - pe) ** 2 * n)
    return kappa, var, var0, po, pe


def kappa_of_cells(c):
    t = np.array([[c[0], c[1]], [c[2], c[3]]], float)
    n = t.sum()
    row, col = t.sum(1) / n, t.sum(0) / n
    pe = float(np.dot(row, col))
    if pe >= 1:
        return math.nan
    return (np.trace(t) / n - pe) / (1 - pe)


def bootstrap_kappa(cells, seed, resamples):
    n = sum(cells)
    bounds = np.cumsum(cells)[:3]
    reps = []
    for b in range(resamples):
        rng = Rng(seed, b)
        idx = np.array([rng.uniform_index(n) for _ in range(n)])
        cell = (idx >= bounds[0]).astype(int) + (idx >= bounds[1]) + (idx >= bounds[2])
        reps.append(kappa_of_cells(np.bincount(cell, minlength=4)))
    reps = np.array(reps)
    defined = reps[~np.isnan(reps)]
    lo, hi = np.percentile(defined, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2])
    return [float(lo), float(hi)], int(np.isnan(reps).sum())


def kappa_block(la, lb, bootstrap_seed=None):
    cells = [int(np.sum(~la & ~lb)), int(np.sum(~la & lb)), int(np.sum(la & ~lb)),
             int(np.sum(la & lb))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = float(cohen_kappa_score(la.astype(int), lb.astype(int), labels=[0, 1]))
    out = {"cells": cells, "kappa": num(sk)}
    table = np.array([[cells[0], cells[1]], [cells[2], cells[3]]], float)
    if math.isfinite(sk) and len(la) >= 2:
        kappa, var, var0, po, pe = fce_variances(table)
        assert abs(kappa - sk) < 1e-12
        z = stats.norm.ppf(0.5 + LEVEL / 2)
        se = math.sqrt(max(var, 0.0))
        out.update({"se": se, "se_null": math.sqrt(var0), "ci": [sk - z * se, sk + z * se],
                    "z": sk / math.sqrt(var0),
                    "p_value": float(2 * stats.norm.sf(abs(sk / math.sqrt(var0)))),
                    "observed": po, "expected": pe})
    if bootstrap_seed is not None:
        out["bootstrap_ci"], out["bootstrap_undefined"] = bootstrap_kappa(
            cells, bootstrap_seed, BOOTSTRAP)
    return out


def t_quantile(p, df):
    """Student t quantile from the regularised incomplete beta, 40 digits (mpmath):
    P(T > t) = I_{df / (df + t^2)}(df / 2, 1 / 2) / 2."""
    mpmath.mp.dps = 40
    nu = mpmath.mpf(df)
    tail = 1 - mpmath.mpf(p)
    f = lambda t: mpmath.betainc(nu / 2, mpmath.mpf(1) / 2, 0, nu / (nu + t * t),  # noqa: E731
                                 regularized=True) / 2 - tail
    return float(mpmath.findroot(f, float(stats.t.ppf(p, df))))


def difference_block(a, b):
    d = b - a
    out = {"mean_a": float(np.mean(a)), "mean_b": float(np.mean(b)), "estimate": float(np.mean(d))}
    if len(d) >= 2:
        sem = stats.sem(d)
        out["sd"] = float(np.std(d, ddof=1))
        q = t_quantile(0.5 + LEVEL / 2, len(d) - 1)
        out["ci"] = [float(np.mean(d) - q * sem), float(np.mean(d) + q * sem)]
        scipy_ci = stats.t.interval(LEVEL, len(d) - 1, np.mean(d), sem)
        assert np.allclose(out["ci"], scipy_ci, rtol=1e-8, atol=0)
        t = stats.ttest_rel(b, a)
        out["t"], out["p_value"] = float(t.statistic), float(t.pvalue)
    return out


def summary(a, b, ta, tb, bootstrap_seed):
    n = len(a)
    pr = stats.pearsonr(a, b)
    sr = stats.spearmanr(a, b)
    rho = float(sr.correlation)
    pearson_ci = fisher_ci(pr.statistic, 1 / math.sqrt(n - 3))
    scipy_ci = pr.confidence_interval(confidence_level=LEVEL)
    assert abs(pearson_ci[0] - scipy_ci.low) < 1e-12 and abs(pearson_ci[1] - scipy_ci.high) < 1e-12
    la, lb = a >= ta, b >= tb
    return {
        "n": n,
        "pearson": {"r": float(pr.statistic), "p_value": float(pr.pvalue), "ci": pearson_ci},
        "spearman": {"rho": rho, "p_value": float(sr.pvalue),
                     "ci": fisher_ci(rho, math.sqrt((1 + rho ** 2 / 2) / (n - 3)))},
        "kappa": kappa_block(la, lb, bootstrap_seed),
        "percent_agreement": float(np.mean(la == lb)),
        "positive_rate_a": float(np.mean(la)),
        "positive_rate_b": float(np.mean(lb)),
        "difference": difference_block(a, b),
    }


def wilson(x, n):
    z = stats.norm.ppf(0.5 + LEVEL / 2)
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [max(0.0, centre - half), min(1.0, centre + half)]


def groups_block(rows, sa, sb, ta, tb):
    complete = [r for r in rows if r[sa] is not None and r[sb] is not None]
    keyed = [r for r in complete if r["dialect"] is not None]
    out = []
    ds = []
    for g in sorted({r["dialect"] for r in keyed}):
        a = np.array([r[sa] for r in keyed if r["dialect"] == g], float)
        b = np.array([r[sb] for r in keyed if r["dialect"] == g], float)
        la, lb = a >= ta, b >= tb
        x = int(np.sum(la != lb))
        out.append({"key": g, "n": len(a), "difference": difference_block(a, b),
                    "positive_rate_a": float(np.mean(la)), "positive_rate_b": float(np.mean(lb)),
                    "disagreements": x, "disagreement_rate": x / len(a),
                    "disagreement_ci": wilson(x, len(a)), "kappa": kappa_block(la, lb)})
        ds.append(b - a)
    h = stats.kruskal(*ds)
    test = {"statistic": float(h.statistic), "p_value": float(h.pvalue),
            "epsilon_squared": float(h.statistic) / (sum(len(d) for d in ds) - 1)}
    return out, test, len(complete) - len(keyed)


def case(rows, sa, sb, ta, tb, with_groups):
    complete = [r for r in rows if r[sa] is not None and r[sb] is not None]
    a = np.array([r[sa] for r in complete], float)
    b = np.array([r[sb] for r in complete], float)
    out = {"scores": [sa, sb], "threshold_a": ta, "threshold_b": tb, "seed": SEED,
           "bootstrap": BOOTSTRAP, "level": LEVEL, "rows": len(rows),
           "excluded": len(rows) - len(complete), "a": a.tolist(), "b": b.tolist(),
           "summary": summary(a, b, ta, tb, SEED)}
    if with_groups:
        out["groups"], out["group_test"], out["rows_without_group"] = groups_block(
            rows, sa, sb, ta, tb)
    return out


def main():
    rows = make_rows()
    fixture = {
        "about": "tools/make_agreement_fixtures.py: numpy/scipy/sklearn reference of "
                 "vlbias metric agreement",
        "csv": to_csv(rows),
        "cases": [case(rows, "clf", "persp", 0.5, 0.5, True),
                  case(rows, "clf", "judge", 0.4, 5.5, False)],
    }
    with open(OUT, "w") as fh:
        json.dump(fixture, fh, indent=1)
        fh.write("\n")
    s = fixture["cases"][0]
    print("wrote", OUT, "n =", s["summary"]["n"], "kappa =", s["summary"]["kappa"]["kappa"],
          "H =", s["group_test"]["statistic"], "p =", s["group_test"]["p_value"])


if __name__ == "__main__":
    main()
