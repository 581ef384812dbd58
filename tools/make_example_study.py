#!/usr/bin/python3
"""Writes the bundled example study in examples/social_perception/: a small synthetic
CausalFace-like design (race x gender x age x smiling x lighting x pseudo-identity,
540 images) with 64-d embeddings, and prompt embeddings row-aligned with the manifest
that `vlbias prompts social-perception` writes (examples/social_perception/prompts.csv,
which this script creates by running that command).

The embeddings are synthetic, not from any model: every word gets a random direction,
every prompt = its word's direction + a shared "photo of a person" direction + a small
template direction; every image = a shared face direction + noise, plus a planted
effect so the audit has something to find: Black women's images are shifted toward
the competence prompts (away from the neutral ones), and smiling moves every image toward the warmth prompts.

Run: /usr/bin/python3 tools/make_example_study.py build/vlbias
"""
import csv
import itertools
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "social_perception"
DIM = 64


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def main():
    vlbias = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "vlbias")
    OUT.mkdir(parents=True, exist_ok=True)
    subprocess.run([vlbias, "--quiet", "prompts", "social-perception", "--out",
                    str(OUT / "prompts.csv")], check=True)
    rows = list(csv.DictReader(open(OUT / "prompts.csv", newline="")))
    rng = np.random.default_rng(2026)
    person = unit(rng.normal(size=DIM))
    words = sorted({r["word"] for r in rows})
    word_dir = {w: unit(rng.normal(size=DIM)) for w in words}
    templates = sorted({r["template"] for r in rows})
    template_dir = {t: unit(rng.normal(size=DIM)) for t in templates}
    prompts = np.array([unit(1.0 * person + (0.8 * word_dir[r["word"]] if r["word"] else 0)
                             + 0.3 * template_dir[r["template"]]) for r in rows])
    np.save(OUT / "prompts.npy", prompts.astype(np.float32))

    def direction(dimension):
        # The part of a dimension's prompts that the neutral prompts lack, so the
        # planted effect shows in Delta cos (cosine minus the neutral prompt's).
        mean = prompts[[i for i, r in enumerate(rows) if r["dimension"] == dimension]].mean(axis=0)
        neutral = prompts[[i for i, r in enumerate(rows) if r["role"] == "neutral"]].mean(axis=0)
        d = mean - neutral
        return unit(d - (d @ person) * person)  # no "person" part: cos(neutral) stays put

    competence, warmth = direction("competence"), direction("warmth")
    face = unit(person + 0.5 * unit(rng.normal(size=DIM)))
    design = list(itertools.product(["Asian", "Black", "White"], ["female", "male"],
                                    [1, 2, 3, 4, 5], [1, 2, 3], ["soft", "hard"], [0, 1, 2]))
    images = []
    for race, gender, age, smiling, lighting, seed in design:
        v = face + 0.6 * rng.normal(size=DIM) / np.sqrt(DIM)
        v = v + 0.04 * (smiling - 2) * warmth
        if race == "Black" and gender == "female":
            v = v + 0.15 * competence
        images.append(v)
    np.save(OUT / "images.npy", np.array(images, dtype=np.float32))
    with open(OUT / "images.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "race", "gender", "age", "smiling", "lighting", "seed"])
        for i, d in enumerate(design):
            w.writerow([i, *d])
    print(f"wrote {len(images)} images and {len(rows)} prompts to {OUT}")


if __name__ == "__main__":
    main()
