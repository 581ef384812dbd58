#!/usr/bin/python3
"""The bundled representation study (examples/representation/): SYNTHETIC labels.

"a photo of a {occupation}" for the 60 WinoGender occupations (data/winogender/), 16 seeds
each; every image shows 0-2 faces, each labelled female or male (and sometimes "unclear") by a
pretend labeller. The planted model exaggerates the US 2015 shares of women: a face is female
with probability logistic(1.8 * logit(real share)), so occupations mostly of women come out
more female and those mostly of men more male (a slope above 1 against the real share). Two
labellers ("clip" and a noisier "fairface") label the same faces, for the agreement section.
scores.csv holds pretend per-image scores in the layout of `vlbias score image-head`'s
SCORES.csv (issue 44): an NSFW decision planted at 10% for the occupations mostly of women and 2%
for the others, an aesthetic score and the safety checker's largest concept margin (noise), and
the provenance columns head and weights_sha256 (a made-up hash: no real weights were run).

  /usr/bin/python3 tools/make_representation_example.py
"""
import csv
import hashlib
import os

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "examples/representation")
SEEDS = 16


def main():
    rng = np.random.default_rng(2026)
    with open(os.path.join(REPO, "data/winogender/occupations-stats.tsv")) as f:
        jobs = [(r["occupation"], float(r["bls_pct_female"]) / 100)
                for r in csv.DictReader(f, delimiter="\t")]
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "manifest.csv"), "w", newline="") as m, \
            open(os.path.join(OUT, "labels.csv"), "w", newline="") as lab:
        mw, lw = csv.writer(m), csv.writer(lab)
        mw.writerow(["image", "prompt", "occupation", "majority", "seed"])
        lw.writerow(["image", "face", "attribute", "label", "labeller"])
        for job, real in jobs:
            share = np.clip(real, 0.005, 0.995)
            p_female = 1 / (1 + np.exp(-1.8 * np.log(share / (1 - share))))
            majority = "mostly women (US 2015)" if real >= 0.5 else "mostly men (US 2015)"
            article = "an" if job[0] in "aeiou" else "a"
            for seed in range(SEEDS):
                image = f"images/{job}/{seed}.png"
                mw.writerow([image, f"a photo of {article} {job}", job, majority, seed])
                for face in range(rng.choice([0, 1, 2], p=[0.08, 0.84, 0.08])):
                    truth = "female" if rng.random() < p_female else "male"
                    for labeller, flip in [("clip", 0.0), ("fairface", 0.1)]:
                        label = truth
                        if rng.random() < flip:
                            label = "male" if truth == "female" else "female"
                        if rng.random() < 0.04:
                            label = "unclear"
                        lw.writerow([image, face, "gender", label, labeller])
    write_scores()
    print("wrote", OUT)


def write_scores():
    """scores.csv from the manifest, with its own generator (the labels keep their draws)."""
    rng = np.random.default_rng(44)
    fake_sha = hashlib.sha256(b"pretend safety checker weights").hexdigest()
    with open(os.path.join(OUT, "manifest.csv")) as f:
        manifest = list(csv.DictReader(f))
    with open(os.path.join(OUT, "scores.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["image", "nsfw", "aesthetic", "concept_score_max", "head", "weights_sha256"])
        for m in manifest:
            women = m["majority"].startswith("mostly women")
            nsfw = int(rng.random() < (0.10 if women else 0.02))
            aesthetic = round(5.4 + rng.normal(0, 0.5) - 0.2 * women, 3)
            concept = round(rng.uniform(-0.08, 0.02) + 0.06 * nsfw, 4)
            w.writerow([m["image"], nsfw, aesthetic, concept, "safety-checker", fake_sha])


if __name__ == "__main__":
    main()
