#!/usr/bin/python3
"""Reference for the cluster permutation tests of `vlbias compare --cluster` (compare.h,
ClusterTest; src/stats/compare_cluster.cpp).

Writes tests/fixtures/stats/cluster_permutation.json: small clustered tables (rows: group,
cluster, pair, value) and, for each test, the exact permutation p-value computed here by
enumerating every arrangement with itertools and scipy's own test (scipy 1.10):

  unpaired: every assignment of whole clusters to the groups that keeps each group's number of
            clusters (two groups of 4 clusters: C(8, 4) = 70; three groups of 3, 3, 2:
            8! / (3! 3! 2!) = 560); paired: every choice of clusters whose pairs swap their two
            values (6 clusters: 2^6 = 64);
  statistic: the test's p-value; p = #{arrangements with p* <= p_observed (1 + 1e-12)} / count.

Also each test's classical p on the rows as if independent (p_unclustered).

Run: /usr/bin/python3 tools/make_cluster_permutation_fixtures.py
"""
import itertools
import json
import os

import numpy as np
from scipy import stats

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "stats",
                   "cluster_permutation.json")


def clustered_rows(rng, groups, clusters_per_group, shift):
    """Rows (group, cluster, value): cluster sizes 1..4, a cluster effect and a group shift."""
    rows = []
    for g, (name, count) in enumerate(zip(groups, clusters_per_group)):
        for c in range(count):
            effect = rng.normal(0.0, 1.0)
            for _ in range(int(rng.integers(1, 5))):
                value = round(float(g * shift + effect + rng.normal(0.0, 0.4)), 6)
                rows.append({"group": name, "cluster": f"{name}{c}", "value": value})
    return rows


def unpaired_p(test, samples, alternative):
    if test == "welch":
        return stats.ttest_ind(*samples, equal_var=False, alternative=alternative).pvalue
    if test == "student":
        return stats.ttest_ind(*samples, equal_var=True, alternative=alternative).pvalue
    if test == "mannwhitney":
        return stats.mannwhitneyu(*samples, alternative=alternative, method="auto").pvalue
    if test == "anova":
        return stats.f_oneway(*samples).pvalue
    if test == "kruskal":
        return stats.kruskal(*samples).pvalue
    raise ValueError(test)


def assignments(counts):
    """Every assignment of len-sum(counts) clusters to groups with these counts."""
    n = sum(counts)

    def rec(free, g):
        if g == len(counts) - 1:
            yield [free]
            return
        for chosen in itertools.combinations(free, counts[g]):
            rest = [c for c in free if c not in chosen]
            for tail in rec(rest, g + 1):
                yield [list(chosen)] + tail

    yield from rec(list(range(n)), 0)


def unpaired_case(rows, groups, test, alternative="two-sided"):
    clusters = sorted({r["cluster"] for r in rows}, key=lambda c: [r["cluster"] for r in rows].index(c))
    values = {c: [r["value"] for r in rows if r["cluster"] == c] for c in clusters}
    group_of = {r["cluster"]: r["group"] for r in rows}
    counts = [sum(1 for c in clusters if group_of[c] == g) for g in groups]
    observed = unpaired_p(test, [[r["value"] for r in rows if r["group"] == g] for g in groups],
                          alternative)
    ps = []
    for assignment in assignments(counts):
        samples = [sum((values[clusters[c]] for c in members), []) for members in assignment]
        ps.append(unpaired_p(test, samples, alternative))
    ps = np.array(ps)
    exceed = int(np.sum(ps <= observed * (1 + 1e-12)))
    return {"test": test, "alternative": alternative, "p_unclustered": float(observed),
            "p_value": exceed / len(ps), "arrangements": len(ps), "exceed": exceed,
            "clusters_per_group": counts}


def paired_p(test, a, b, alternative):
    if test == "paired-t":
        return stats.ttest_rel(a, b, alternative=alternative).pvalue
    return stats.wilcoxon(a, b, zero_method="wilcox", alternative=alternative).pvalue


def paired_case(rows, test, alternative="two-sided"):
    pairs = sorted({r["pair"] for r in rows}, key=lambda p: int(p[1:]))
    a = np.array([next(r["value"] for r in rows if r["pair"] == p and r["group"] == "A")
                  for p in pairs])
    b = np.array([next(r["value"] for r in rows if r["pair"] == p and r["group"] == "B")
                  for p in pairs])
    cluster_of = [next(r["cluster"] for r in rows if r["pair"] == p) for p in pairs]
    clusters = sorted(set(cluster_of))
    observed = paired_p(test, a, b, alternative)
    ps = []
    for flips in itertools.product([False, True], repeat=len(clusters)):
        swap = np.array([flips[clusters.index(c)] for c in cluster_of])
        x, y = np.where(swap, b, a), np.where(swap, a, b)
        ps.append(paired_p(test, x, y, alternative))
    ps = np.array(ps)
    exceed = int(np.sum(ps <= observed * (1 + 1e-12)))
    return {"test": test, "alternative": alternative, "p_unclustered": float(observed),
            "p_value": exceed / len(ps), "arrangements": len(ps), "exceed": exceed,
            "clusters": len(clusters)}


def paired_rows(rng):
    rows = []
    pair = 0
    for c in range(6):
        effect = rng.normal(0.0, 1.0)
        shift = rng.normal(0.5, 0.4)  # the cluster's own B - A difference
        for _ in range(int(rng.integers(1, 4))):
            base = effect + rng.normal(0.0, 0.4)
            for group, value in (("A", base), ("B", base + shift + rng.normal(0.0, 0.2))):
                rows.append({"group": group, "cluster": f"s{c}", "pair": f"p{pair}",
                             "value": round(float(value), 6)})
            pair += 1
    return rows


def main():
    rng = np.random.default_rng(24)
    two = clustered_rows(rng, ["A", "B"], [4, 4], 1.6)
    three = clustered_rows(rng, ["A", "B", "C"], [3, 3, 2], 1.5)
    paired = paired_rows(rng)
    out = {
        "two_groups": {"rows": two, "cases": [
            unpaired_case(two, ["A", "B"], "welch"),
            unpaired_case(two, ["A", "B"], "student"),
            unpaired_case(two, ["A", "B"], "mannwhitney"),
            unpaired_case(two, ["A", "B"], "welch", "less"),
            unpaired_case(two, ["A", "B"], "mannwhitney", "greater")]},
        "three_groups": {"rows": three, "cases": [
            unpaired_case(three, ["A", "B", "C"], "anova"),
            unpaired_case(three, ["A", "B", "C"], "kruskal")]},
        "paired": {"rows": paired, "cases": [
            paired_case(paired, "paired-t"),
            paired_case(paired, "wilcoxon"),
            paired_case(paired, "paired-t", "less")]},
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for name, block in out.items():
        for case in block["cases"]:
            print(name, case["test"], case["alternative"], "p_flat=%.4g p_cluster=%.4g (%d/%d)" % (
                case["p_unclustered"], case["p_value"], case["exceed"], case["arrangements"]))


if __name__ == "__main__":
    main()
