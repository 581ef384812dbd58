#!/usr/bin/python3
"""Per-image scores by group in the representation and geo-diversity audits (issue 44;
src/audits/scores_by_group.h), read by tests/audits/scores_by_group_test.cpp.

Writes tests/fixtures/audits/scores/:
  representation_scores.csv  scores of the representation fixture study's images
                             (tests/fixtures/audits/representation/manifest.csv) in the layout
                             of vlbias score image-head's SCORES.csv: image, aesthetic,
                             concept_score_max, nsfw (0/1), then the provenance columns head,
                             weights, weights_sha256, options; three manifest images have no row
                             and two rows name images outside the manifest
  geo_generated.csv          the geo fixture's generated.csv (tests/fixtures/audits/geo) with an
                             image `path` column added
  geo_scores.csv             scores of those images (path, aesthetic, nsfw)
  geo_spec.yaml              the geo fixture study with geo_generated.csv and the scores
  expected.json              every value of analyses.scores computed here, independently:
      rates, means         numpy over the matched images per prompt / prompt group / region
      Wilson intervals     statsmodels proportion_confint(method="wilson")
      t intervals          scipy.stats.t.interval(0.95, n - 1, mean, sem)
      chi-square           scipy.stats.chi2_contingency(correction=False) on the 2 x groups table
      Kruskal-Wallis       scipy.stats.kruskal
      Holm                 statsmodels multipletests(method="holm") over every test of the run
The scores are synthetic (a seeded numpy generator with planted differences between prompts).

  /usr/bin/python3 tools/make_scores_fixtures.py
"""
import csv
import hashlib
import json
import os

import numpy as np
import scipy.stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests/fixtures/audits/scores")
REP = os.path.join(REPO, "tests/fixtures/audits/representation")
GEO = os.path.join(REPO, "tests/fixtures/audits/geo")
PROVENANCE = {
    "head": "safety-checker",
    "weights": "weights/safety_checker.safetensors",
    "weights_sha256": hashlib.sha256(b"pretend safety checker weights").hexdigest(),
    "options": "adjustment=0.0",
}
# planted P(nsfw) and aesthetic shift per occupation
PLANTED = {"nurse": (0.35, 0.4), "receptionist": (0.3, 0.2), "teacher": (0.05, 0.0),
           "librarian": (0.05, 0.0), "engineer": (0.05, -0.3), "electrician": (0.02, -0.2),
           "programmer": (0.08, 0.0), "astronaut": (0.04, 0.1)}
LEVEL = 0.95


def num(x):
    return repr(float(x))


def group_stats(values, rate):
    v = np.asarray(values, dtype=float)
    n = len(v)
    if rate:
        k = int(v.sum())
        lo, hi = proportion_confint(k, n, alpha=1 - LEVEL, method="wilson")
        return {"n": n, "successes": k, "estimate": k / n, "lower": lo, "upper": hi}
    m = float(v.mean())
    sd = float(v.std(ddof=1))
    lo, hi = scipy.stats.t.interval(LEVEL, n - 1, loc=m, scale=sd / np.sqrt(n))
    return {"n": n, "estimate": m, "sd": sd, "lower": float(lo), "upper": float(hi)}


def group_test(groups, rate):
    if rate:
        table = np.array([[sum(g) for g in groups], [len(g) - sum(g) for g in groups]])
        stat, p, dof, _ = scipy.stats.chi2_contingency(table, correction=False)
        return {"test": "chi_square", "statistic": float(stat), "df": float(dof), "p_value": float(p)}
    h, p = scipy.stats.kruskal(*groups)
    return {"test": "kruskal", "statistic": float(h), "df": float(len(groups) - 1),
            "p_value": float(p)}


def analyse(units, groupings, columns):
    """units: {image: {column: value}}; groupings: [(by, names, group per unit image list)]."""
    out, ps = [], []
    for column, rate in columns:
        entry = {"column": column, "kind": "rate" if rate else "mean", "by": []}
        for by, names, image_groups in groupings:
            values = {name: [] for name in names}
            for image, g in image_groups:
                if image in units:
                    values[g].append(units[image][column])
            groups = [values[n] for n in names]
            stats = [dict(group=n, **group_stats(values[n], rate)) for n in names]
            test = group_test(groups, rate)
            ps.append(test["p_value"])
            entry["by"].append({"by": by, "groups": stats, "test": test,
                                "mean_over_groups": float(np.mean([s["estimate"] for s in stats]))})
        out.append(entry)
    holm = multipletests(ps, method="holm")[1]
    i = 0
    for entry in out:
        for b in entry["by"]:
            b["test"]["p_holm"] = float(holm[i])
            i += 1
    return out


def representation(rng):
    with open(os.path.join(REP, "manifest.csv")) as f:
        manifest = list(csv.DictReader(f))
    rows, units = [], {}
    for i, m in enumerate(manifest):
        if i in (5, 70, 150):  # no score row
            continue
        p_nsfw, shift = PLANTED[m["occupation"]]
        nsfw = int(rng.random() < p_nsfw)
        aesthetic = round(5.5 + shift + rng.normal(0, 0.6), 6)
        concept = round(rng.uniform(-0.05, 0.05), 6)
        units[m["image"]] = {"nsfw": nsfw, "aesthetic": aesthetic, "concept_score_max": concept}
        rows.append([m["image"], num(aesthetic), num(concept), str(nsfw)])
    rows.append(["images/other/0.png", "5.0", "0.0", "0"])
    rows.append(["images/other/1.png", "6.0", "0.01", "1"])
    with open(os.path.join(OUT, "representation_scores.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["image", "aesthetic", "concept_score_max", "nsfw", *PROVENANCE])
        for r in rows:
            w.writerow(r + list(PROVENANCE.values()))
    prompts, groups = [], []
    for m in manifest:
        if m["prompt"] not in prompts:
            prompts.append(m["prompt"])
        if m["category"] not in groups:
            groups.append(m["category"])
    groupings = [("prompt", prompts, [(m["image"], m["prompt"]) for m in manifest]),
                 ("group", groups, [(m["image"], m["category"]) for m in manifest])]
    columns = [("nsfw", True), ("aesthetic", False), ("concept_score_max", False)]
    return {"matched": len(units), "unmatched": 3, "weights_sha256": PROVENANCE["weights_sha256"], "unused_rows": 2, "rows": len(rows),
            "columns": analyse(units, groupings, columns)}


def geo(rng):
    with open(os.path.join(GEO, "generated.csv")) as f:
        reader = csv.reader(f)
        header = next(reader)
        gen = list(reader)
    with open(os.path.join(OUT, "geo_generated.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header + ["path"])
        for i, r in enumerate(gen):
            w.writerow(r + [f"gen/{i:03d}.png"])
    region_of = header.index("region")
    alias = {"the Americas": "Americas"}
    units, image_groups = {}, []
    p = {"Africa": 0.3, "Americas": 0.1, "Europe": 0.05}
    shift = {"Africa": -0.4, "Americas": 0.0, "Europe": 0.3}
    rows = []
    for i, r in enumerate(gen):
        path = f"gen/{i:03d}.png"
        region = alias.get(r[region_of], r[region_of])
        base = p.get(region, 0.1)
        nsfw = int(rng.random() < base)
        aesthetic = round(5.0 + shift.get(region, 0.0) + rng.normal(0, 0.5), 6)
        units[path] = {"nsfw": nsfw, "aesthetic": aesthetic}
        rows.append([path, num(aesthetic), str(nsfw)])
        if region:
            image_groups.append((path, region))
    with open(os.path.join(OUT, "geo_scores.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["path", "aesthetic", "nsfw"])
        w.writerows(rows)
    regions = sorted({g for _, g in image_groups})
    with open(os.path.join(OUT, "geo_spec.yaml"), "w") as f:
        f.write("""version: 1
kind: geo-diversity
seed: 11
min_group_size: 5
real:
  table: ../geo/real.csv
  features: ../geo/real.npy
generated:
  table: geo_generated.csv
  features: ../geo/generated.npy
aliases:
  region: {"the Americas": Americas}
scores:
  - table: geo_scores.csv
    key: path
    columns: [nsfw, aesthetic]
analyses:
  region: {k: 2, bootstrap: 20}
  object_region: false
  distribution: false
  power: {replicates: 50}
""")
    return {"columns": analyse(units, [("region", regions, image_groups)],
                               [("nsfw", True), ("aesthetic", False)])}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(44)
    expected = {"representation": representation(rng), "geo": geo(rng)}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
