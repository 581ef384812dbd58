#!/usr/bin/python3
"""Times `vlbias audit` against a numpy implementation of the same analyses on the
same paper-scale study (the one bench_audit generates: about 18,000 images x 512-d,
208 prompts): the prompt x image cosines, cos and Delta cos per image and dimension,
per race x gender means, and SC-WEAT over every pair of races for each dimension and
all dimensions together, with 10,000 permutations (numpy draws one relabelling per
replicate and sums every target set's weights over it, vectorised over the sets).

Also cross-checks the values: the numpy effect sizes and mean differences must match
vlbias's tables/scweat.csv to 1e-5 (float32 cosines), and the Monte Carlo p-values
within 4 sqrt(0.25 / B) (0.02 at B = 10,000).

Usage: /usr/bin/python3 bench/vs_numpy_audit.py [STUDY_DIR] [--permutations B]
  STUDY_DIR defaults to $TMPDIR/vlbias_bench_audit/social_s167_d512_p10000 (run
  build/bench/bench_audit --kind social once to create it). Prints one JSON line.
"""
import csv
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent


def numpy_audit(study, permutations, seed=1):
    images = np.load(study / "images.npy").astype(np.float32)
    prompts = np.load(study / "prompts.npy").astype(np.float32)
    manifest = list(csv.DictReader(open(study / "prompts.csv", newline="")))
    table = list(csv.DictReader(open(study / "images.csv", newline="")))
    pn = prompts / np.linalg.norm(prompts, axis=1, keepdims=True)
    inorm = np.linalg.norm(images, axis=1)
    cos = (pn @ images.T) / inorm[None, :]  # prompts x images, float32
    # Dimensions: (dimension, valence) of the attribute rows, labelled as vlbias does.
    keys, rows = [], {}
    for i, r in enumerate(manifest):
        if r["role"] != "attribute":
            continue
        k = (r["dimension"], r["valence"])
        if k not in rows:
            keys.append(k)
            rows[k] = []
        rows[k].append(i)
    neutral = {r["template"]: i for i, r in enumerate(manifest) if r["role"] == "neutral"}
    names = {}
    for d, v in keys:
        names[d] = names.get(d, 0) + 1
    labels = [d + v if names[d] > 1 else d for d, v in keys]
    delta = {}
    for k, label in zip(keys, labels):
        idx = rows[k]
        nidx = [neutral[manifest[i]["template"]] for i in idx]
        delta[label] = (cos[idx].astype(np.float64) - cos[nidx]).mean(axis=0)
    race = np.array([r["race"] for r in table])
    gender = np.array([r["gender"] for r in table])
    means = {}
    for rc in sorted(set(race)):
        for g in sorted(set(gender)):
            m = (race == rc) & (gender == g)
            means[(rc, g)] = {label: delta[label][m].mean() for label in labels}
    # SC-WEAT per pair of races: target sets = each dimension's prompts + all of them.
    sets = [rows[k] for k in keys] + [[i for k in keys for i in rows[k]]]
    results = []
    rng = np.random.default_rng(seed)
    levels = sorted(set(race))
    for a in range(len(levels)):
        for b in range(a + 1, len(levels)):
            ia, ib = np.where(race == levels[a])[0], np.where(race == levels[b])[0]
            block = cos[:, np.concatenate([ia, ib])].astype(np.float64)
            n_a, n = len(ia), len(ia) + len(ib)
            sd = block.std(axis=1, ddof=1)
            diff = block[:, :n_a].mean(axis=1) - block[:, n_a:].mean(axis=1)
            w = np.stack([(block[s] / sd[s, None]).mean(axis=0) for s in sets], axis=1)  # n x k
            total = w.sum(axis=0)
            observed = w[:n_a].sum(axis=0) / n_a - (total - w[:n_a].sum(axis=0)) / (n - n_a)
            exceed = np.zeros(len(sets))
            for _ in range(permutations):
                pick = rng.permutation(n)[:n_a]
                sa = w[pick].sum(axis=0)
                t = sa / n_a - (total - sa) / (n - n_a)
                exceed += np.abs(t) >= np.abs(observed) * (1 - 1e-12)
            p = (1 + exceed) / (1 + permutations)
            for k, s in enumerate(sets):
                label = labels[k] if k < len(labels) else "all"
                results.append({"group_a": levels[a], "group_b": levels[b], "dimension": label,
                                "mean_difference": float(diff[s].mean()),
                                "effect_size": float((diff[s] / sd[s]).mean()),
                                "p_value": float(p[k])})
    return results


def main():
    args = sys.argv[1:]
    permutations = 10000
    if "--permutations" in args:
        i = args.index("--permutations")
        permutations = int(args[i + 1])
        del args[i:i + 2]
    study = pathlib.Path(args[0]) if args else pathlib.Path(tempfile.gettempdir()) / \
        "vlbias_bench_audit" / "social_s167_d512_p10000"
    spec = (study / "spec.yaml").read_text()
    # The same analyses in vlbias: association and SC-WEAT over race only.
    cut = spec.index("analyses:")
    spec = spec[:cut] + (
        "analyses:\n  association: {bootstrap: 0}\n"
        f"  scweat: {{p_test: permutation, permutations: {permutations}, groupings: [race]}}\n"
        "  markedness: false\n  ranking: false\n  absdiff: false\n  trends: false\n"
        "  ellipses: false\n")
    spec_path = study / "vs_numpy_spec.yaml"
    spec_path.write_text(spec)
    run = study / "vs_numpy_run"
    start = time.perf_counter()
    subprocess.run([str(ROOT / "build" / "vlbias"), "--quiet", "audit", str(spec_path),
                    "--out", str(run)], check=True)
    ours = time.perf_counter() - start
    ours_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    start = time.perf_counter()
    ref = numpy_audit(study, permutations)
    theirs = time.perf_counter() - start
    theirs_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    got = {(r["group_a"], r["group_b"], r["dimension"]): r
           for r in csv.DictReader(open(run / "tables" / "scweat.csv", newline=""))}
    worst_es, worst_p = 0.0, 0.0
    for r in ref:
        g = got[(r["group_a"], r["group_b"], r["dimension"])]
        worst_es = max(worst_es, abs(float(g["effect_size"]) - r["effect_size"]),
                       abs(float(g["mean_difference"]) - r["mean_difference"]))
        worst_p = max(worst_p, abs(float(g["p_value"]) - r["p_value"]))
    # Two Monte Carlo estimates of one p: each has sd <= sqrt(0.25 / B).
    p_tolerance = 4 * (0.25 / permutations) ** 0.5
    ok = worst_es < 1e-5 and worst_p < p_tolerance
    print(json.dumps({"bench": "vs_numpy_audit", "cores": os.cpu_count(),
                      "permutations": permutations, "vlbias_seconds": round(ours, 3),
                      "numpy_seconds": round(theirs, 3), "speedup": round(theirs / ours, 1),
                      "vlbias_peak_rss_mb": round(ours_rss, 1),
                      "numpy_peak_rss_mb": round(theirs_rss, 1),
                      "max_abs_diff_effect": worst_es, "max_abs_diff_p": worst_p,
                      "values_agree": ok}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
