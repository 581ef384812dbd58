#!/usr/bin/python3
"""Reference for Skew@k, MaxSkew@k and NDKL (paper 001, docs/methods.md#skew;
Geyik, Ambler and Kenthapadi 2019), computed independently with numpy.

Ranking: np.argsort(-score, kind="stable") (score descending, ties by input
order). Skew@k(c) = ln(p_topk(c) / p_desired(c)); a class absent from the top
k gives -inf ("-inf" in JSON) or 0 (absent = zero). NDKL = (1/Z) sum_i
KL(D_top_i || D_desired) / log2(i+1), natural-log KL, 0 ln 0 = 0.

Writes tests/fixtures/metrics/ranking.json (cases for the library test) and
tests/fixtures/metrics/ranking_table.csv with ranking_cli expectations in the
JSON (for the CLI test).

Run: /usr/bin/python3 tools/make_ranking_fixtures.py
"""
import csv
import json
import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "metrics")


def desired(labels, n_classes, kind):
    if kind == "uniform":
        return np.full(n_classes, 1.0 / n_classes)
    counts = np.bincount(labels, minlength=n_classes).astype(float)
    return counts / len(labels)


def skew(scores, labels, n_classes, k, kind, absent):
    order = np.argsort(-np.asarray(scores, float), kind="stable")
    top = np.asarray(labels)[order[:k]]
    counts = np.bincount(top, minlength=n_classes)
    q = desired(np.asarray(labels), n_classes, kind)
    out = []
    for c in range(n_classes):
        if counts[c] == 0:
            out.append(-math.inf if absent == "-inf" else 0.0)
        else:
            out.append(float(np.log((counts[c] / k) / q[c])))
    return out, max(out), [int(x) for x in counts], [float(x) for x in q]


def ndkl(scores, labels, n_classes, kind):
    labels = np.asarray(labels)
    order = np.argsort(-np.asarray(scores, float), kind="stable")
    q = desired(labels, n_classes, kind)
    n = len(labels)
    counts = np.zeros(n_classes, dtype=np.int64)
    total = 0.0
    z = 0.0
    for i in range(1, n + 1):
        counts[labels[order[i - 1]]] += 1
        kl = 0.0
        for c in range(n_classes):
            if counts[c] == 0:
                continue
            p = counts[c] / i
            kl += p * math.log(p / q[c])
        d = 1.0 / math.log2(i + 1)
        total += kl * d
        z += d
    return total / z


def enc(x):
    return "-inf" if x == -math.inf else x


def case(name, scores, labels, classes, skews, desireds=("uniform", "base-rate")):
    """skews: list of (k, absent)."""
    c = len(classes)
    out = {"name": name, "scores": [float(s) for s in scores],
           "labels": [int(l) for l in labels], "classes": classes,
           "ndkl": {}, "skew": []}
    for kind in desireds:
        out["ndkl"][kind] = ndkl(scores, labels, c, kind)
        for k, absent in skews:
            s, m, counts, q = skew(scores, labels, c, k, kind, absent)
            out["skew"].append({"k": k, "desired": kind, "absent": absent,
                                "skew": [enc(v) for v in s], "max_skew": enc(m),
                                "counts": counts, "desired_p": q})
    return out


def main():
    rng = np.random.default_rng(20261122)
    cases = []

    # Random scores, 3 classes, unequal class sizes.
    n = 30
    labels = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    labels[:3] = [0, 1, 2]
    scores = rng.normal(size=n)
    cases.append(case("random3", scores, labels, ["a", "b", "c"],
                      [(1, "-inf"), (5, "-inf"), (10, "zero"), (17, "-inf"), (n, "-inf")]))

    # Random scores, 4 classes, with a planted preference for class 3.
    n = 40
    labels = rng.integers(0, 4, size=n)
    labels[:4] = [0, 1, 2, 3]
    scores = rng.normal(size=n) + 0.8 * (labels == 3)
    cases.append(case("random4", scores, labels, ["w", "x", "y", "z"],
                      [(1, "zero"), (4, "-inf"), (8, "-inf"), (8, "zero"), (25, "-inf"),
                       (n, "zero")]))

    # Ties: all top scores equal; input order decides which class fills the top
    # k. Reversing the input order (same scores) changes the answer, so a
    # non-stable or ascending tie rule fails.
    scores = [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.2, 0.2]
    labels = [0, 0, 1, 2, 1, 2, 0, 1]
    cases.append(case("ties", scores, labels, ["p", "q", "r"],
                      [(1, "-inf"), (2, "-inf"), (2, "zero"), (3, "-inf"), (5, "zero"),
                       (8, "-inf")]))
    cases.append(case("ties_reversed", scores, labels[:4][::-1] + labels[4:], ["p", "q", "r"],
                      [(1, "-inf"), (2, "-inf"), (2, "zero"), (3, "-inf")]))

    # A class absent from the top k (class 2 only at the bottom).
    scores = [9, 8, 7, 6, 5, 4, 3, 2, 1]
    labels = [0, 1, 0, 1, 0, 1, 2, 2, 2]
    cases.append(case("absent", scores, labels, ["m", "n", "o"],
                      [(3, "-inf"), (3, "zero"), (6, "-inf"), (6, "zero"), (7, "-inf")]))

    # Perfectly proportional (interleaved) ranking, uniform classes: Skew@k = 0
    # whenever k is a multiple of 3; NDKL is at its minimum but positive (the
    # top-1 prefix holds one class only).
    scores = list(range(12, 0, -1))
    labels = [0, 1, 2] * 4
    cases.append(case("proportional", scores, labels, ["u", "v", "w"],
                      [(3, "-inf"), (6, "-inf"), (12, "-inf"), (1, "zero")]))

    # CLI table: 10 rows, ties across classes (k = 2 depends on row order), class 'nonbinary' absent from top 3.
    rows = [("i1", 0.91, "woman"), ("i2", 0.88, "man"), ("i3", 0.88, "woman"),
            ("i4", 0.75, "man"), ("i5", 0.60, "nonbinary"), ("i6", 0.55, "man"),
            ("i7", 0.40, "woman"), ("i8", 0.40, "nonbinary"), ("i9", 0.20, "man"),
            ("i10", 0.10, "woman")]
    with open(os.path.join(OUT, "ranking_table.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "score", "gender"])
        for r in rows:
            w.writerow([r[0], repr(r[1]), r[2]])
    names = sorted({r[2] for r in rows})
    code = {c: i for i, c in enumerate(names)}
    cs = [r[1] for r in rows]
    cl = [code[r[2]] for r in rows]
    cli = {"classes": names, "skew": [], "ndkl": {}}
    for kind in ("uniform", "base-rate"):
        cli["ndkl"][kind] = ndkl(cs, cl, len(names), kind)
        for k, absent in [(3, "-inf"), (3, "zero"), (1, "-inf"), (2, "-inf"), (10, "-inf")]:
            s, m, counts, q = skew(cs, cl, len(names), k, kind, absent)
            cli["skew"].append({"k": k, "desired": kind, "absent": absent,
                                "skew": {names[c]: enc(s[c]) for c in range(len(names))},
                                "max_skew": enc(m),
                                "counts": {names[c]: counts[c] for c in range(len(names))},
                                "desired_p": {names[c]: q[c] for c in range(len(names))}})

    with open(os.path.join(OUT, "ranking.json"), "w") as f:
        json.dump({"cases": cases, "cli": cli}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
