#!/usr/bin/python3
"""Writes tests/fixtures/stats/correlation.json (issue 24): scipy 1.10 references for
Pearson, Spearman and Kendall tau-b (every alternative, random, tie-heavy, small exact and
large-n inputs), the Pearson Fisher z interval, the Wilcoxon signed-rank test (exact and
normal approximation, each zero_method, every alternative) and the one-sided t and
Mann-Whitney tests; and the `vlbias correlate` / `vlbias compare --paired` CLI references
(tests/fixtures/cli/correlate_table.csv, paired_table.csv and their expected values).

Where vlbias deliberately differs from scipy 1.10 (Wilcoxon with tied |d| and n <= 50: scipy's
"auto" reads the untied exact table with a truncated R+, vlbias uses the tie-corrected normal
approximation) the reference is scipy's method="approx".

Run: /usr/bin/python3 tools/make_correlation_fixtures.py
"""
import csv
import json
import pathlib

import numpy as np
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "stats" / "correlation.json"
CLI_DIR = ROOT / "tests" / "fixtures" / "cli"
ALTERNATIVES = ["two-sided", "greater", "less"]


def num(v):
    v = float(v)
    return None if np.isnan(v) else v


def correlation_case(name, x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    case = {"name": name, "x": x, "y": y}
    for alt in ALTERNATIVES:
        pr = stats.pearsonr(x, y, alternative=alt)
        sr = stats.spearmanr(x, y, alternative=alt)
        kt = stats.kendalltau(x, y, alternative=alt)
        case[alt] = {"pearson": [num(pr.statistic), num(pr.pvalue)],
                     "spearman": [num(sr.statistic), num(sr.pvalue)],
                     "kendall": [num(kt.statistic), num(kt.pvalue)]}
        if len(x) > 3:
            ci = pr.confidence_interval(0.95)
            case[alt]["pearson_ci95"] = [float(ci.low), float(ci.high)]
    n = len(x)
    ties = len(set(x)) < n or len(set(y)) < n
    dis = sum(1 for i in range(n) for j in range(i + 1, n)
              if (x[i] - x[j]) * (y[i] - y[j]) < 0)
    tot = n * (n - 1) // 2
    case["kendall_method"] = ("exact" if not ties and (n <= 33 or min(dis, tot - dis) <= 1)
                              else "asymptotic")
    return case


def correlation_cases(rng):
    cases = []
    x = rng.normal(size=40)
    cases.append(correlation_case("random_n40", x, 0.4 * x + rng.normal(size=40)))
    x = rng.integers(0, 5, size=60)
    cases.append(correlation_case("tie_heavy_n60", x, rng.integers(0, 4, size=60) + x // 2))
    x = rng.normal(size=7)
    cases.append(correlation_case("small_exact_n7", x, x + rng.normal(size=7)))
    x = rng.normal(size=10)
    cases.append(correlation_case("small_exact_n10_negative", x, -x + 0.8 * rng.normal(size=10)))
    x = rng.normal(size=33)
    cases.append(correlation_case("exact_boundary_n33", x, 0.2 * x + rng.normal(size=33)))
    x = rng.normal(size=34)
    cases.append(correlation_case("asymptotic_n34", x, 0.2 * x + rng.normal(size=34)))
    x = rng.normal(size=300)
    cases.append(correlation_case("random_n300", x, 0.1 * x + rng.normal(size=300)))
    x = np.arange(100.0)
    y = x.copy()
    y[[10, 11]] = y[[11, 10]]
    cases.append(correlation_case("one_discordant_pair_n100", x, y))
    cases.append(correlation_case("perfect_n5", [1, 2, 3, 4, 5], [2, 4, 6, 8, 11]))
    cases.append(correlation_case("three_pairs", [1, 2, 3], [1, 3, 2]))
    x = rng.integers(0, 3, size=12)
    cases.append(correlation_case("ties_small_n12", x, rng.integers(0, 3, size=12)))
    return cases


def wilcoxon_case(name, a, b, zero_method, method):
    a = [float(v) for v in a]
    b = [float(v) for v in b]
    case = {"name": name, "a": a, "b": b, "zero_method": zero_method, "method": method}
    for alt in ALTERNATIVES:
        res = stats.wilcoxon(a, b, zero_method=zero_method, alternative=alt,
                             method="exact" if method == "exact" else "approx")
        case[alt] = [float(res.statistic), float(res.pvalue)]
    return case


def wilcoxon_cases(rng):
    cases = []
    corn = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    cases.append(wilcoxon_case("darwin_corn_n15", corn, [0] * 15, "wilcox", "exact"))
    a = rng.normal(size=20)
    cases.append(wilcoxon_case("random_n20", a + 0.3, rng.normal(size=20), "wilcox", "exact"))
    a = rng.normal(size=50)
    cases.append(wilcoxon_case("exact_boundary_n50", a, rng.normal(size=50) - 0.2, "wilcox",
                               "exact"))
    a = rng.normal(size=51)
    cases.append(wilcoxon_case("asymptotic_n51", a, rng.normal(size=51) - 0.2, "wilcox",
                               "approx"))
    a = rng.integers(0, 6, size=30).astype(float)
    b = rng.integers(0, 5, size=30).astype(float)
    for zm in ["wilcox", "pratt", "zsplit"]:
        cases.append(wilcoxon_case("zeros_and_ties_n30_" + zm, a, b, zm, "approx"))
    a = rng.integers(1, 8, size=18).astype(float)
    cases.append(wilcoxon_case("ties_no_zeros_n18", a + 0.5, rng.integers(0, 7, size=18), "wilcox",
                               "approx"))
    a = rng.normal(size=200)
    cases.append(wilcoxon_case("random_n200", a, a + rng.normal(size=200) * 0.5 - 0.05,
                               "wilcox", "approx"))
    return cases


def two_sample_cases(rng):
    cases = []
    pairs = [("n12_n9", rng.normal(size=12) + 0.5, rng.normal(size=9) * 2),
             ("n30_n45", rng.normal(size=30), rng.normal(size=45) + 0.3),
             ("ties_n25_n20", rng.integers(0, 5, size=25), rng.integers(1, 6, size=20))]
    for name, a, b in pairs:
        a = [float(v) for v in a]
        b = [float(v) for v in b]
        case = {"name": name, "a": a, "b": b}
        for alt in ALTERNATIVES:
            st = stats.ttest_ind(a, b, equal_var=True, alternative=alt)
            we = stats.ttest_ind(a, b, equal_var=False, alternative=alt)
            mw = stats.mannwhitneyu(a, b, alternative=alt, method="auto")
            case[alt] = {"student": [float(st.statistic), float(st.pvalue)],
                         "welch": [float(we.statistic), float(we.pvalue)],
                         "mannwhitney": [float(mw.statistic), float(mw.pvalue)]}
            if len(a) == len(b):
                pt = stats.ttest_rel(a, b, alternative=alt)
                case[alt]["paired_t"] = [float(pt.statistic), float(pt.pvalue)]
        cases.append(case)
    a = rng.normal(size=16)
    case = {"name": "paired_n16", "a": [float(v) for v in a],
            "b": [float(v) for v in a + rng.normal(size=16) * 0.4 - 0.2]}
    for alt in ALTERNATIVES:
        pt = stats.ttest_rel(case["a"], case["b"], alternative=alt)
        case[alt] = {"paired_t": [float(pt.statistic), float(pt.pvalue)]}
    cases.append(case)
    return cases


def adjust(p):
    """Holm and Benjamini-Hochberg adjusted p in input order (NaN left out), with numpy."""
    p = np.asarray(p, dtype=float)
    holm = np.full(p.shape, np.nan)
    bh = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        running = 0.0
        for i, idx in enumerate(order):
            running = max(running, min(1.0, (m - i) * p[idx]))
            holm[idx] = running
        running = 1.0
        for i in range(m - 1, -1, -1):
            idx = order[i]
            running = min(running, m * p[idx] / (i + 1))
            bh[idx] = min(1.0, running)
    return holm, bh


def correlate_cli(rng):
    """A table with missing and non-numeric cells, and the expected `vlbias correlate` output
    (overall and per group; Pearson r, p, Fisher z interval; Spearman and Kendall r and p)."""
    n = 48
    group = np.array(["g1", "g2"] * (n // 2))
    a = rng.normal(size=n)
    b = rng.integers(0, 6, size=n).astype(float)
    c = 0.5 * a + rng.normal(size=n)
    d = b * 0.3 + rng.normal(size=n)
    cells = {"a": [repr(float(v)) for v in a], "b": [str(int(v)) for v in b],
             "c": [repr(float(v)) for v in c], "d": [repr(float(v)) for v in d]}
    cells["a"][3] = ""        # missing
    cells["c"][5] = "n/a"     # non-numeric
    cells["d"][7] = ""
    cells["d"][8] = "?"
    path = CLI_DIR / "correlate_table.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "group", "a", "b", "c", "d"])
        for i in range(n):
            w.writerow([i, group[i], cells["a"][i], cells["b"][i], cells["c"][i], cells["d"][i]])

    def value(col, i):
        try:
            return float(cells[col][i])
        except ValueError:
            return None

    out = {}
    for method in ["pearson", "spearman", "kendall"]:
        rows = []
        for level in [None, "g1", "g2"]:
            for xc in ["a", "b"]:
                for yc in ["c", "d"]:
                    xs, ys, dropped = [], [], 0
                    for i in range(n):
                        if level is not None and group[i] != level:
                            continue
                        xv, yv = value(xc, i), value(yc, i)
                        if xv is None or yv is None:
                            dropped += 1
                            continue
                        xs.append(xv)
                        ys.append(yv)
                    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr,
                          "kendall": stats.kendalltau}[method]
                    res = fn(xs, ys)
                    row = {"group": level, "x": xc, "y": yc, "n": len(xs), "dropped": dropped,
                           "statistic": float(res.statistic), "p_value": float(res.pvalue)}
                    if method == "pearson":
                        ci = res.confidence_interval(0.9)
                        row["ci90"] = [float(ci.low), float(ci.high)]
                    rows.append(row)
        holm, bh = adjust([r["p_value"] for r in rows])
        for r, h, q in zip(rows, holm, bh):
            r["p_holm"] = float(h)
            r["p_bh"] = float(q)
        out[method] = rows
    return out


def paired_cli(rng):
    """A long table (id, condition, score) for `vlbias compare --paired --pair-key id`: 14 ids
    in both conditions, one only in 'neutral' (unmatched), a missing score; and the expected
    paired t and Wilcoxon results (a = 'biased' minus b = 'neutral' by key order)."""
    n = 14
    base = rng.normal(size=n)
    biased = base + 0.6 + rng.normal(size=n) * 0.5
    rows = []
    for i in range(n):
        rows.append([f"p{i:02d}", "neutral", repr(float(base[i]))])
        rows.append([f"p{i:02d}", "biased", repr(float(biased[i]))])
    rows.append(["p99", "neutral", "0.5"])          # no partner: reported unmatched
    rows.append(["p50", "biased", ""])              # missing score
    rows.append(["p50", "neutral", "0.1"])          # its partner is therefore unmatched
    path = CLI_DIR / "paired_table.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "condition", "score"])
        w.writerows(rows)
    out = {}
    for alt in ALTERNATIVES:
        pt = stats.ttest_rel(biased, base, alternative=alt)
        wx = stats.wilcoxon(biased, base, alternative=alt)
        out[alt] = {"paired_t": [float(pt.statistic), float(pt.pvalue)],
                    "wilcoxon": [float(wx.statistic), float(wx.pvalue)]}
    out["pairs"] = n
    return out


def main():
    rng = np.random.default_rng(20261126)
    data = {"scipy": __import__("scipy").__version__,
            "correlation": correlation_cases(rng),
            "wilcoxon": wilcoxon_cases(rng),
            "two_sample": two_sample_cases(rng)}
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    cli = {"correlate": correlate_cli(rng), "paired": paired_cli(rng)}
    (CLI_DIR / "correlate_expected.json").write_text(json.dumps(cli, indent=1) + "\n")
    print("wrote", OUT, "and", CLI_DIR / "correlate_expected.json")


if __name__ == "__main__":
    main()
