#!/usr/bin/python3
"""Writes the bundled trait-pairs example in examples/trait_pairs/ (paper 004, Baherwani and
Vincent): a small synthetic FairFace-like study, FairFace's seven races x two genders with
40 adults (age 20-60) per cell, 560 images with 64-d embeddings, and prompt embeddings
row-aligned with the manifest that `vlbias prompts trait-pairs` writes
(examples/trait_pairs/pairs.csv, which this script creates by running that command: the
paper's six pairs smart/dumb, happy/sad, hardworking/lazy, nice/mean, dominant/agentic,
honest/dishonest, as "a {} person", plus the neutral "a person").

The embeddings are synthetic, not from any model or from FairFace: every trait word gets a
random direction, every prompt = its word's direction + a shared "person" direction + a
small template direction; every image = a shared face direction + a race and a gender
"appearance" direction (kept orthogonal to every prompt, so appearance alone favours no
trait) + noise. Planted effects, modelled on the paper's findings, so the audit has
something to find:
  * nice/mean: Black men's images are shifted toward "a mean person", Black women's half as
    far (the paper: "Black men are classified as meaner than all other races and this trend
    follows for women");
  * smart/dumb: men of every race are shifted toward "a smart person" (the paper's
    gender-brilliance finding: men more likely classified smart than women in every race);
  * hardworking/lazy: East Asian, Southeast Asian and Indian images are shifted toward "a
    hardworking person" (the paper's model-minority finding).
Each shift (0.18, 0.09, 0.11 and 0.08 of a unit vector, against noise of sd 0.075 along
any direction) moves along the part of its pair's "first minus second" direction that no
other prompt shares, so happy/sad, dominant/agentic and honest/dishonest carry no effect
(null controls), nor do the other pairs' words in SC-WEAT. Expected: for nice/mean, the
ANOVA across races within each gender and the gender test among Black images are
significant; for smart/dumb, the gender test within every race but not the race ANOVA; for
hardworking/lazy, the race ANOVA within each gender (all p_holm < 0.01); every other test
p > 0.05. Confidences are on the paper's raw-cosine scale, so they stay near 0.5.

Run: /usr/bin/python3 tools/make_trait_pairs_example.py build/vlbias
"""
import csv
import itertools
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "trait_pairs"
DIM = 64
PER_CELL = 40
RACES = ["East Asian", "Latino_Hispanic", "Southeast Asian", "Indian", "Black", "White",
         "Middle Eastern"]  # FairFace's labels
GENDERS = ["male", "female"]


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def orthogonal_to(v, basis):
    """v without its component in the span of the rows of basis."""
    q, _ = np.linalg.qr(np.asarray(basis).T)
    return v - q @ (q.T @ v)


def main():
    vlbias = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "vlbias")
    OUT.mkdir(parents=True, exist_ok=True)
    subprocess.run([vlbias, "--quiet", "prompts", "trait-pairs", "--out",
                    str(OUT / "pairs.csv")], check=True)
    rows = list(csv.DictReader(open(OUT / "pairs.csv", newline="")))
    rng = np.random.default_rng(2004)
    person = unit(rng.normal(size=DIM))
    words = sorted({r["word"] for r in rows if r["word"]})
    word_dir = {w: unit(rng.normal(size=DIM)) for w in words}
    templates = sorted({r["template"] for r in rows})
    template_dir = {t: unit(rng.normal(size=DIM)) for t in templates}
    prompts = np.array([unit(1.0 * person + (0.8 * word_dir[r["word"]] if r["word"] else 0)
                             + 0.3 * template_dir[r["template"]]) for r in rows])
    np.save(OUT / "pairs.npy", prompts.astype(np.float32))

    # "first trait minus second trait" of every pair (mean over templates).
    pairs = list(dict.fromkeys(r["dimension"] for r in rows if r["dimension"]))

    def side(pair, valence):
        return prompts[[i for i, r in enumerate(rows)
                        if r["dimension"] == pair and r["valence"] == valence]].mean(axis=0)

    contrast = {p: side(p, "+") - side(p, "-") for p in pairs}

    def direction(pair):
        # The part of the pair's contrast that no other prompt (and no shared "person" or
        # template part) has, so a shift along it moves the cosines to this pair's two
        # prompts (one up, one down) and to no other prompt.
        others = [prompts[i] for i, r in enumerate(rows) if r["dimension"] != pair]
        others += [person] + list(template_dir.values())
        return unit(orthogonal_to(contrast[pair], others))

    smart, hardworking, nice = (direction(p) for p in
                                ("smart/dumb", "hardworking/lazy", "nice/mean"))
    # Appearance: races and genders differ, but in directions that no prompt has and
    # that are orthogonal to the face and to each other, so no group's embeddings are
    # longer than another's (which would scale all its cosines) and appearance alone
    # favours no trait.
    basis = [*prompts, person]

    def appearance():
        d = unit(orthogonal_to(rng.normal(size=DIM), basis))
        basis.append(d)
        return d

    face = unit(person + 0.5 * appearance())
    race_dir = {r: appearance() for r in RACES}
    gender_dir = {g: appearance() for g in GENDERS}

    design = [(race, gender, int(rng.integers(20, 61)))
              for race, gender in itertools.product(RACES, GENDERS) for _ in range(PER_CELL)]
    images = []
    for race, gender, age in design:
        v = face + 0.3 * race_dir[race] + 0.2 * gender_dir[gender]
        v = v + 0.6 * rng.normal(size=DIM) / np.sqrt(DIM)
        if race == "Black":
            v = v - (0.18 if gender == "male" else 0.09) * nice   # toward "mean"
        if gender == "male":
            v = v + 0.11 * smart                                   # toward "smart"
        if race in ("East Asian", "Southeast Asian", "Indian"):
            v = v + 0.08 * hardworking                             # toward "hardworking"
        images.append(unit(v))
    np.save(OUT / "images.npy", np.array(images, dtype=np.float32))
    with open(OUT / "images.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "race", "gender", "age"])
        for i, d in enumerate(design):
            w.writerow([i, *d])
    print(f"wrote {len(images)} images and {len(rows)} prompts to {OUT}")


if __name__ == "__main__":
    main()
