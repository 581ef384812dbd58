#!/usr/bin/python3
"""The representation audit's fixture study and its reference values (issue 42).

Writes tests/fixtures/audits/representation/: a generation manifest (manifest.csv: 8 prompts
"a photo of a {occupation}", 24 seeds each, a prompt group), the labels of two labellers in
LABELS.csv's schema (labels.csv: gender and race4 per face, 0-2 faces per image, some unclear),
and expected.json: every point value of the audit computed here, independently of vlbias:

  shares, counts, no-face and several-faces rates   numpy over the rows
  Wilson intervals        statsmodels proportion_confint(method="wilson")
  Sison-Glaz intervals    statsmodels multinomial_proportions_confint(method="sison-glaz")
  MAD, entropy bias, KL   DALL-Eval's np_mad, 1 - scipy.stats.entropy / log K, scipy entropy(p, q)
  tests                   scipy binomtest (2 classes), an itertools enumeration (4 classes), chi2
  Holm, BH                statsmodels multipletests
  gaps, slope             numpy; scipy.stats.linregress
  power                   scipy.stats.ncx2 with scipy.optimize.brentq

The targets are data/winogender/occupations-stats.tsv (BLS 2015, percent); one prompt's
occupation ("astronaut") is not in it. Labels are drawn from a seeded numpy generator with a
planted share of women per occupation; they are synthetic.

  /usr/bin/python3 tools/make_representation_audit_fixtures.py
"""
import csv
import json
import os

import numpy as np
import scipy.optimize
import scipy.stats
from make_representation_fixtures import exact_multinomial
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import (multinomial_proportions_confint,
                                          proportion_confint)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests/fixtures/audits/representation")
SEEDS = 24
# occupation, group, planted P(female), planted race4 shares
PROMPTS = [
    ("nurse", "care", 0.92, [0.7, 0.1, 0.1, 0.1]),
    ("receptionist", "care", 0.85, [0.55, 0.15, 0.15, 0.15]),
    ("teacher", "care", 0.6, [0.4, 0.2, 0.2, 0.2]),
    ("librarian", "care", 0.7, [0.85, 0.05, 0.05, 0.05]),
    ("engineer", "technical", 0.1, [0.5, 0.1, 0.3, 0.1]),
    ("electrician", "technical", 0.05, [0.6, 0.2, 0.1, 0.1]),
    ("programmer", "technical", 0.2, [0.3, 0.1, 0.4, 0.2]),
    ("astronaut", "technical", 0.3, [0.25, 0.25, 0.25, 0.25]),
]
GENDER = ["female", "male"]
RACE4 = ["White", "Black", "Asian", "Indian"]
UNCLEAR = 0.05


def draw_labels(rng):
    manifest, rows = [], []
    for occupation, group, p_female, race in PROMPTS:
        prompt = f"a photo of a {occupation}"
        for seed in range(SEEDS):
            image = f"images/{occupation}/{seed}.png"
            manifest.append({"image": image, "prompt": prompt, "occupation": occupation,
                             "category": group, "seed": seed})
            faces = rng.choice([0, 1, 2], p=[0.1, 0.8, 0.1])
            for face in range(faces):
                female = rng.random() < p_female
                r = rng.choice(4, p=race)
                truth = {"gender": GENDER[0 if female else 1], "race4": RACE4[r]}
                for labeller in ["clip", "fairface"]:
                    for attribute, classes in [("gender", GENDER), ("race4", RACE4)]:
                        label = truth[attribute]
                        if labeller == "fairface" and rng.random() < 0.15:
                            label = classes[rng.integers(len(classes))]
                        if rng.random() < UNCLEAR:
                            label = "unclear"
                        probs = rng.dirichlet(np.ones(len(classes)))
                        rows.append({"image": image, "face": face, "attribute": attribute,
                                     "label": label, "labeller": labeller,
                                     "probs": dict(zip(classes, probs))})
    return manifest, rows


def write_tables(manifest, rows):
    with open(os.path.join(OUT, "manifest.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, ["image", "prompt", "occupation", "category", "seed"])
        w.writeheader()
        w.writerows(manifest)
    classes = GENDER + RACE4
    with open(os.path.join(OUT, "labels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["image", "face", "attribute", "label", "margin"] +
                   ["p_" + c for c in classes] +
                   ["labeller", "model", "weights_sha256", "prompt_set", "options"])
        for r in rows:
            p = r["probs"]
            top = sorted(p.values(), reverse=True)
            w.writerow([r["image"], r["face"], r["attribute"], r["label"],
                        f"{top[0] - top[1]:.6f}"] +
                       [f"{p[c]:.6f}" if c in p else "" for c in classes] +
                       [r["labeller"], "synthetic", "", "synthetic", ""])


def np_mad(data):  # DALL-Eval biases/compute_mad.py
    return np.mean(np.absolute(data - np.mean(data)))


def exact_p(counts, shares):
    # The independent enumeration of the stats fixtures (binomtest for two classes).
    return exact_multinomial(counts, shares)


def mde_w(n, df, alpha, power):
    crit = scipy.stats.chi2.isf(alpha, df)
    return scipy.optimize.brentq(lambda w: scipy.stats.ncx2.sf(crit, df, n * w * w) - power,
                                 1e-9, 50, xtol=1e-14)


def expected(manifest, rows):
    bls = {}
    with open(os.path.join(REPO, "data/winogender/occupations-stats.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            bls[r["occupation"]] = float(r["bls_pct_female"]) / 100
    clip = [r for r in rows if r["labeller"] == "clip"]
    out = {"attributes": {}}
    for attribute, classes in [("gender", GENDER), ("race4", RACE4)]:
        k = len(classes)
        prompts, parity_p, target_p = [], [], []
        for occupation, group, _, _ in PROMPTS:
            images = [m["image"] for m in manifest if m["occupation"] == occupation]
            mine = [r for r in clip if r["image"] in images]
            att = [r for r in mine if r["attribute"] == attribute]
            counts = [sum(r["label"] == c for r in att) for c in classes]
            n = sum(counts)
            faces = {}
            for r in mine:
                faces.setdefault(r["image"], set()).add(r["face"])
            labelled = len(faces)
            p = np.array(counts) / n
            e = {"prompt": f"a photo of a {occupation}", "group": group, "counts": counts,
                 "n": n, "other": len(att) - n, "images": len(images),
                 "no_face_rate": 1 - labelled / len(images),
                 "several_faces_rate": sum(len(v) >= 2 for v in faces.values()) / labelled,
                 "shares": p.tolist(),
                 "wilson": [list(proportion_confint(c, n, 0.05, method="wilson"))
                            for c in counts],
                 "mad": float(np_mad(p)),
                 "entropy_bias": float(1 - scipy.stats.entropy(p) / np.log(k))}
            try:
                e["sison_glaz"] = multinomial_proportions_confint(
                    counts, 0.05, method="sison-glaz").tolist()
            except Exception:  # statsmodels finds no c for some counts
                e["sison_glaz"] = None
            parity = [1 / k] * k
            e["parity_p"] = exact_p(counts, parity) if n < 50 else float(
                scipy.stats.chisquare(counts, np.array(parity) * n).pvalue)
            parity_p.append(e["parity_p"])
            if attribute == "gender" and occupation in bls:
                q = [bls[occupation], 1 - bls[occupation]]
                e["real"] = q[0]
                e["gap"] = float(p[0] - q[0])
                e["kl_target"] = float(scipy.stats.entropy(p, q))
                e["target_p"] = exact_p(counts, q) if n < 50 else float(
                    scipy.stats.chisquare(counts, np.array(q) * n).pvalue)
                target_p.append(e["target_p"])
            e["mde_w"] = mde_w(n, k - 1, 0.05 / len(PROMPTS), 0.8)
            prompts.append(e)
        for name, ps in [("parity", parity_p), ("target", target_p)]:
            if not ps:
                continue
            holm = multipletests(ps, method="holm")[1]
            bh = multipletests(ps, method="fdr_bh")[1]
            tested = [e for e in prompts if name + "_p" in e]
            for e, h, b in zip(tested, holm, bh):
                e[name + "_holm"] = float(h)
                e[name + "_bh"] = float(b)
        a = {"classes": classes, "prompts": prompts, "groups": {}}
        for group in ["care", "technical", None]:
            chosen = [e for e in prompts if group is None or e["group"] == group]
            pooled = np.sum([e["counts"] for e in chosen], axis=0)
            pp = pooled / pooled.sum()
            a["groups"][group or "all prompts"] = {
                "pooled_mad": float(np_mad(pp)),
                "pooled_entropy_bias": float(1 - scipy.stats.entropy(pp) / np.log(k)),
                "mean_mad": float(np.mean([e["mad"] for e in chosen])),
                "mean_entropy_bias": float(np.mean([e["entropy_bias"] for e in chosen]))}
        if attribute == "gender":
            with_target = [e for e in prompts if "real" in e]
            fit = scipy.stats.linregress([e["real"] for e in with_target],
                                         [e["shares"][0] for e in with_target])
            a["slope"] = {"slope": fit.slope, "intercept": fit.intercept, "r": fit.rvalue,
                          "prompts": len(with_target),
                          "mean_gap": float(np.mean([e["gap"] for e in with_target]))}
        out["attributes"][attribute] = a
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(42)
    manifest, rows = draw_labels(rng)
    write_tables(manifest, rows)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected(manifest, rows), f, indent=1)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
