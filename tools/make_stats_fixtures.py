#!/usr/bin/python3
"""Reference values for the classical tests of src/stats (stats.h, "classical tests").

Writes tests/fixtures/stats/classical.json, read by tests/stats/classical_test.cpp:

  anova      scipy.stats.f_oneway
  student    scipy.stats.ttest_ind(equal_var=True)
  welch      scipy.stats.ttest_ind(equal_var=False)
  paired_t   scipy.stats.ttest_rel
  mannwhitney scipy.stats.mannwhitneyu(alternative="two-sided", method="auto",
             use_continuity=True); the method scipy chose is recorded beside it
  kruskal    scipy.stats.kruskal, plus H in exact rational arithmetic
  pearson    scipy.stats.pearsonr
  spearman   scipy.stats.spearmanr
  rank       scipy.stats.rankdata(method="average")

with scipy 1.10.1 / numpy 1.24 (Debian 12). Degrees of freedom and effect sizes
(eta squared, Cohen's d pooled / d_av / d_z, rank-biserial 2U/(n_a n_b) - 1,
epsilon squared H/(N-1)) are computed here with numpy from their textbook
definitions, independently of the C++ code; eta squared in exact rational
arithmetic (the naive numpy form loses digits on data with a large offset).

Small inputs are stored as numbers. Large ones (thousands of values) are stored as
a formula that both this script and the C++ test evaluate, so the file stays small
and no test needs Python:

  gen {n, mult, add, mod, scale, offset}:
      h_i = (i * mult + add) mod 2^32          (unsigned integer arithmetic)
      v_i = offset + scale * ((h_i mod mod) / mod)   (IEEE double, in this order)
  a sample may be a list of such terms, added elementwise left to right.

mult is odd, so with mod = 2^32 the n values are distinct; a small mod gives ties.
Each generated sample also stores its sum, which the test checks first.

Run: /usr/bin/python3 tools/make_stats_fixtures.py
"""
import json
import os
import warnings
from fractions import Fraction

import numpy as np
import scipy
from scipy import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "stats", "classical.json")
M32 = 2**32

rng = np.random.default_rng(20240611)
# Degenerate-looking cases (constant group, n = 1) make scipy warn; the values are fine.
warnings.simplefilter("ignore")


def gen_term(n, mult, add=0, mod=M32, scale=1.0, offset=0.0):
    return {"n": n, "mult": mult, "add": add, "mod": mod, "scale": scale, "offset": offset}


def eval_term(t):
    i = np.arange(t["n"], dtype=np.uint64)
    h = (i * np.uint64(t["mult"]) + np.uint64(t["add"])) & np.uint64(M32 - 1)
    u = (h % np.uint64(t["mod"])).astype(np.float64) / float(t["mod"])
    return t["offset"] + t["scale"] * u


def gen(*terms):
    """A generated sample: spec for the JSON, values for scipy."""
    values = eval_term(terms[0])
    for t in terms[1:]:
        values = values + eval_term(t)
    spec = {"gen": list(terms), "sum": float(np.sum(values)), "n": int(values.size)}
    return spec, values


def lit(values, digits=6):
    """Literal sample, rounded so that the JSON stays short."""
    v = np.asarray(values, dtype=np.float64)
    if digits is not None:
        v = np.round(v, digits)
    return [float(x) for x in v], v


def normal(n, loc=0.0, scale=1.0, digits=6):
    return lit(rng.normal(loc, scale, size=n), digits)


def ints(n, low, high):
    return lit(rng.integers(low, high, size=n).astype(float))


CASES = []


def add(name, test, samples, result):
    case = {"name": name, "test": test}
    case.update(samples)
    case.update(result)
    CASES.append(case)


# ------------------------------------------------------------------------ anova

def eta_squared(groups):
    """SS_between / SS_total in exact rational arithmetic (the data are doubles)."""
    fr = [[Fraction(float(v)) for v in g] for g in groups]
    n = sum(len(g) for g in fr)
    grand = sum(sum(g) for g in fr) / n
    means = [sum(g) / len(g) for g in fr]
    ss_between = sum(len(g) * (m - grand) ** 2 for g, m in zip(fr, means))
    ss_within = sum(sum((v - m) ** 2 for v in g) for g, m in zip(fr, means))
    return float(ss_between / (ss_between + ss_within))


def anova_case(name, samples):
    specs = [s for s, _ in samples]
    groups = [v for _, v in samples]
    res = stats.f_oneway(*groups)
    n = sum(g.size for g in groups)
    add(name, "anova", {"groups": specs},
        {"statistic": float(res.statistic), "p_value": float(res.pvalue),
         "df": [len(groups) - 1, n - len(groups)], "effect_size": float(eta_squared(groups))})


anova_case("k2 normal", [normal(12), normal(15, 0.5)])
anova_case("k3 unequal n", [normal(3), normal(10, 0.7), normal(25, -0.3, 2.0)])
anova_case("k4 n=2 per group", [normal(2), normal(2, 1.0), normal(2, 2.0), normal(2, -1.0)])
anova_case("k5 integer ties", [ints(20, 0, 5), ints(18, 0, 5), ints(22, 1, 6), ints(15, 0, 5),
                                ints(19, 0, 4)])
anova_case("k6 negative", [normal(8, -50, 3) for _ in range(5)] + [normal(9, -48, 3)])
anova_case("k3 one group of size 1", [lit([2.5]), normal(6, 1.0), normal(7, 2.0)])
anova_case("k3 one constant group", [lit([4.0] * 6), normal(6, 4.5), normal(7, 5.0)])
anova_case("k3 large offset", [normal(30, 1e6, 1e-3, 9), normal(30, 1e6 + 5e-4, 1e-3, 9),
                                normal(30, 1e6, 1e-3, 9)])
anova_case("k3 outlier first value", [lit([1e5] + list(rng.normal(0, 1, 40))),
                                      normal(40, 0.2), normal(40, -0.1)])
anova_case("k2 extreme separation", [normal(40, 0.0, 1.0), normal(40, 3.0, 1.0)])
anova_case("k3 large n=5000", [gen(gen_term(5000, 2654435761, 1, scale=10.0)),
                                gen(gen_term(5000, 2246822519, 7, scale=10.0, offset=0.05)),
                                gen(gen_term(4000, 3266489917, 3, scale=10.0, offset=0.1))])
anova_case("k4 large integer ties", [gen(gen_term(3000, 2654435761, 11, mod=13)),
                                     gen(gen_term(3500, 2246822519, 5, mod=13)),
                                     gen(gen_term(2500, 3266489917, 9, mod=13, offset=0.2)),
                                     gen(gen_term(3000, 668265263, 1, mod=13))])

# ----------------------------------------------------------------------- t tests

def ttest_case(name, a, b, which):
    (sa, va), (sb, vb) = a, b
    n1, n2 = va.size, vb.size
    m1, m2 = va.mean(), vb.mean()
    v1, v2 = va.var(ddof=1), vb.var(ddof=1)
    if which == "student":
        res = stats.ttest_ind(va, vb, equal_var=True)
        df = n1 + n2 - 2
        effect = (m1 - m2) / np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / df)
    else:
        res = stats.ttest_ind(va, vb, equal_var=False)
        vn1, vn2 = v1 / n1, v2 / n2
        df = (vn1 + vn2) ** 2 / (vn1 ** 2 / (n1 - 1) + vn2 ** 2 / (n2 - 1))
        effect = (m1 - m2) / np.sqrt((v1 + v2) / 2)
    add(name, which, {"a": sa, "b": sb},
        {"statistic": float(res.statistic), "p_value": float(res.pvalue), "df": [float(df)],
         "effect_size": float(effect)})


def both_t(name, a, b):
    ttest_case(name, a, b, "student")
    ttest_case(name, a, b, "welch")


both_t("normal", normal(15), normal(12, 0.6, 1.5))
both_t("unequal n and variance", normal(5, 0, 0.2), normal(40, 0.3, 3.0))
both_t("n=2 each", lit([1.0, 2.5]), lit([3.0, 3.25]))
both_t("integer ties", ints(30, 0, 4), ints(25, 1, 5))
both_t("negative values", normal(20, -10, 2), normal(22, -11, 2))
both_t("large offset", normal(25, 1e7, 1e-2, 8), normal(25, 1e7 + 5e-3, 1e-2, 8))
both_t("one constant sample", lit([2.0] * 5), normal(9, 2.5))
both_t("extreme separation", normal(50, 0.0, 1.0), normal(50, 4.0, 1.0))
both_t("large n", gen(gen_term(5000, 2654435761, 17, scale=4.0)),
       gen(gen_term(4500, 2246822519, 3, scale=4.0, offset=0.03)))


def paired_case(name, a, b):
    (sa, va), (sb, vb) = a, b
    res = stats.ttest_rel(va, vb)
    d = va - vb
    add(name, "paired_t", {"a": sa, "b": sb},
        {"statistic": float(res.statistic), "p_value": float(res.pvalue),
         "df": [float(va.size - 1)], "effect_size": float(d.mean() / d.std(ddof=1))})


base = rng.normal(0, 1, 20)
paired_case("normal", lit(base), lit(base + rng.normal(0.3, 0.5, 20)))
paired_case("n=2", lit([1.0, 2.0]), lit([1.5, 3.0]))
paired_case("integer ties", ints(30, 0, 5), ints(30, 0, 5))
base = rng.normal(0, 1, 40)
paired_case("extreme", lit(base), lit(base + 2.0 + rng.normal(0, 0.1, 40)))
paired_case("large n", gen(gen_term(6000, 2654435761, 5, scale=3.0)),
            gen(gen_term(6000, 2654435761, 5, scale=3.0), gen_term(6000, 2246822519, 1, scale=0.5,
                                                                   offset=-0.24)))

# ------------------------------------------------------------------ Mann-Whitney

def mwu_case(name, a, b):
    (sa, va), (sb, vb) = a, b
    res = stats.mannwhitneyu(va, vb, alternative="two-sided")
    n1, n2 = va.size, vb.size
    xy = np.concatenate([va, vb])
    ties = np.unique(xy).size != xy.size
    method = "asymptotic" if (n1 > 8 and n2 > 8) or ties else "exact"
    add(name, "mannwhitney", {"a": sa, "b": sb},
        {"statistic": float(res.statistic), "p_value": float(res.pvalue), "df": [],
         "effect_size": float(2 * res.statistic / (n1 * n2) - 1), "method": method})


mwu_case("exact 3 vs 4", normal(3), normal(4, 1.0))
mwu_case("exact 5 vs 8", normal(5), normal(8, 0.5))
mwu_case("exact 8 vs 8", normal(8), normal(8, 0.4))
mwu_case("exact 1 vs 1", lit([1.0]), lit([2.0]))
mwu_case("exact 1 vs 7", lit([0.5]), normal(7))
mwu_case("exact 2 vs 30", normal(2, 0.8), normal(30))
mwu_case("exact 6 vs 40", normal(6, 0.6), normal(40))
mwu_case("exact 8 vs 120", normal(8, 0.3), normal(120))
mwu_case("exact 4 vs 600", normal(4, 1.2), gen(gen_term(600, 2654435761, 99, scale=6.0,
                                                         offset=-3.0)))
mwu_case("exact 8 vs 8 separated", lit(np.arange(8) + 0.5), lit(np.arange(8) + 10.25))
mwu_case("exact p=1 middle", lit([1.0, 4.0]), lit([2.0, 3.0]))
mwu_case("ties small -> asymptotic", ints(6, 0, 4), ints(7, 0, 4))
mwu_case("no ties 10 vs 12 asymptotic", normal(10), normal(12, 0.5))
mwu_case("integer ties", ints(40, 0, 6), ints(35, 1, 7))
mwu_case("negative values", normal(30, -5), normal(28, -4.5))
mwu_case("extreme separation", gen(gen_term(300, 2654435761, 1)),
         gen(gen_term(300, 2246822519, 2, offset=1.5)))
mwu_case("large no ties", gen(gen_term(5000, 2654435761, 21, scale=2.0)),
         gen(gen_term(4000, 2246822519, 8, scale=2.0, offset=0.02)))
mwu_case("large heavy ties", gen(gen_term(5000, 2654435761, 3, mod=7)),
         gen(gen_term(5000, 3266489917, 4, mod=7)))

# ---------------------------------------------------------------------- Kruskal

def exact_kruskal_h(groups):
    """H in exact rational arithmetic from scipy's ranks (scipy's own float formula
    loses up to ~1e-9 relative when H is small and N is large)."""
    allv = np.concatenate(groups)
    ranks = stats.rankdata(allv)
    n_total = allv.size
    bounds = np.cumsum([0] + [g.size for g in groups])
    ss = sum(Fraction(float(ranks[bounds[i]:bounds[i + 1]].sum())) ** 2 / g.size
             for i, g in enumerate(groups))
    _, t = np.unique(allv, return_counts=True)
    ties = 1 - Fraction(int(sum(int(c) ** 3 - int(c) for c in t)), n_total ** 3 - n_total)
    h = (Fraction(12, n_total * (n_total + 1)) * ss - 3 * (n_total + 1)) / ties
    return float(h)


def kruskal_case(name, samples):
    specs = [s for s, _ in samples]
    groups = [v for _, v in samples]
    res = stats.kruskal(*groups)
    n = sum(g.size for g in groups)
    add(name, "kruskal", {"groups": specs},
        {"statistic": float(res.statistic), "p_value": float(res.pvalue),
         "df": [len(groups) - 1], "effect_size": float(res.statistic / (n - 1)),
         "statistic_exact": exact_kruskal_h(groups)})


kruskal_case("k2 normal", [normal(10), normal(12, 0.8)])
kruskal_case("k3 unequal n", [normal(3), normal(11, 0.5), normal(20, -0.2)])
kruskal_case("k4 integer ties", [ints(15, 0, 5), ints(12, 0, 5), ints(18, 1, 6), ints(10, 0, 4)])
kruskal_case("k5 n=2 per group", [normal(2, i * 0.5) for i in range(5)])
kruskal_case("k6 negative", [normal(7, -100 + i * 0.3) for i in range(6)])
kruskal_case("k2 n=1 each", [lit([1.0]), lit([2.0])])
kruskal_case("k3 extreme separation", [gen(gen_term(200, 2654435761, 1)),
                                       gen(gen_term(200, 2246822519, 1, offset=1.0)),
                                       gen(gen_term(200, 3266489917, 1, offset=2.0))])
kruskal_case("k3 large", [gen(gen_term(5000, 2654435761, 31, scale=5.0)),
                          gen(gen_term(4000, 2246822519, 2, scale=5.0, offset=0.04)),
                          gen(gen_term(4500, 3266489917, 6, scale=5.0))])
kruskal_case("k4 large heavy ties", [gen(gen_term(2500, 2654435761, 3, mod=9)),
                                     gen(gen_term(2500, 2246822519, 4, mod=9)),
                                     gen(gen_term(2000, 3266489917, 5, mod=9)),
                                     gen(gen_term(3000, 668265263, 6, mod=9))])

# ----------------------------------------------------------------- correlations

def corr_case(name, x, y, which):
    (sx, vx), (sy, vy) = x, y
    res = stats.pearsonr(vx, vy) if which == "pearson" else stats.spearmanr(vx, vy)
    add(name, which, {"x": sx, "y": sy},
        {"statistic": float(res.statistic), "p_value": float(res.pvalue),
         "df": [float(vx.size - 2)], "effect_size": float(res.statistic)})


def both_corr(name, x, y):
    corr_case(name, x, y, "pearson")
    corr_case(name, x, y, "spearman")


xs = rng.normal(0, 1, 25)
both_corr("normal", lit(xs), lit(0.5 * xs + rng.normal(0, 1, 25)))
both_corr("negative", lit(xs), lit(-0.8 * xs + rng.normal(0, 0.5, 25)))
both_corr("n=3", lit([1.0, 2.0, 4.0]), lit([2.0, 1.0, 5.0]))
both_corr("integer ties", ints(40, 0, 5), ints(40, 0, 5))
xs = rng.normal(0, 1, 60)
both_corr("strong", lit(xs), lit(xs + rng.normal(0, 0.05, 60)))
both_corr("large offset", normal(30, 1e6, 1.0, 5), normal(30, -1e6, 1.0, 5))
both_corr("large n", gen(gen_term(5000, 2654435761, 13, scale=2.0)),
          gen(gen_term(5000, 2654435761, 13, scale=0.2),
              gen_term(5000, 2246822519, 77, scale=2.0, offset=-1.0)))
both_corr("large n heavy ties", gen(gen_term(4000, 2654435761, 13, mod=11)),
          gen(gen_term(4000, 2654435761, 13, mod=11, scale=0.5),
              gen_term(4000, 3266489917, 2, mod=5)))
corr_case("n=2 pearson", lit([1.0, 2.0]), lit([3.0, 1.0]), "pearson")

# ------------------------------------------------------------------------- ranks

def rank_case(name, x):
    sx, vx = x
    add(name, "rank", {"x": sx}, {"ranks": [float(r) for r in stats.rankdata(vx)]})


rank_case("ties and negatives", lit([3.0, -1.0, 3.0, 0.0, -0.0, 2.5, 3.0, -7.0, 2.5, 1e-300],
                                   None))
rank_case("no ties", normal(15))
rank_case("all tied", lit([4.0] * 6))
rank_case("single", lit([1.0]))
rank_case("integer ties", ints(50, 0, 6))


def main():
    doc = {
        "generator": "tools/make_stats_fixtures.py",
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "gen_formula": "h = (i*mult + add) mod 2^32; v = offset + scale * ((h mod mod) / mod)",
        "cases": CASES,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(CASES)} cases to {os.path.relpath(OUT, ROOT)} "
          f"({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
