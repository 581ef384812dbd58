#!/usr/bin/python3
"""Writes the bundled geo-diversity example in examples/geo_diversity/ (paper 002, DIG-In):
a small synthetic study with GeoDE's six regions and five everyday objects, and the three
prompt forms of the paper.

Nothing here comes from a model or a dataset: features are synthetic (24-d "Inception-like"
features, 12-d "CLIP" embeddings). Every object has a random direction, every region a
smaller one; a real image is object + region + noise. Generated images follow the same law
except for the planted effects the audit should find:
  * realism/diversity: generations prompted with a region or a country of Africa or West
    Asia are pulled toward one stereotyped look (shifted, with a third of the spread), so
    their precision and coverage fall;
  * consistency: 30% of the "{object} in Africa" generations do not show the object (their
    CLIP embedding lacks the object's direction), so Africa's 10th-percentile CLIPScore falls
    for that prompt form;
  * {object} prompts (no region) draw from all regions alike.
objects.csv is written by `vlbias prompts geo-objects --table generated.csv`, the step a user
runs before embedding the object texts.

Run: /usr/bin/python3 tools/make_geo_example.py build/vlbias
"""
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "geo_diversity"
REGIONS = ["Africa", "Americas", "EastAsia", "Europe", "SouthEastAsia", "WestAsia"]
# How a text-to-image prompt list (DIG-In's, for one) spells them; the spec aliases them back.
PROMPT_REGIONS = {"Africa": "Africa", "Americas": "the Americas", "EastAsia": "East Asia",
                  "Europe": "Europe", "SouthEastAsia": "Southeast Asia", "WestAsia": "West Asia"}
COUNTRIES = {"Africa": ["Nigeria", "Egypt"], "Americas": ["Colombia", "Mexico"],
             "EastAsia": ["Japan", "China"], "Europe": ["Italy", "Spain"],
             "SouthEastAsia": ["Indonesia", "Thailand"], "WestAsia": ["Turkey", "Jordan"]}
OBJECTS = ["bag", "car", "dog", "hand soap", "stove"]
STEREOTYPED = {"Africa", "WestAsia"}
DIM, CLIP_DIM = 24, 12
REAL_PER_CELL, GEN_PER_CELL, POOL_PER_OBJECT = 25, 25, 150


def main():
    vlbias = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "vlbias")
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026)
    obj_dir = {o: 1.5 * rng.standard_normal(DIM) for o in OBJECTS}
    reg_dir = {r: 0.8 * rng.standard_normal(DIM) for r in REGIONS}
    look = {r: 1.2 * rng.standard_normal(DIM) for r in REGIONS}  # the stereotyped look
    text_dir = {o: rng.standard_normal(CLIP_DIM) / np.sqrt(CLIP_DIM) for o in OBJECTS}

    def clip(o, missing):
        base = np.zeros(CLIP_DIM) if missing else text_dir[o]
        return base + 0.6 / np.sqrt(CLIP_DIM) * rng.standard_normal(CLIP_DIM)

    real_rows, real_x = [], []
    for o in OBJECTS:
        for r in REGIONS:
            for _ in range(REAL_PER_CELL):
                real_rows.append(f"{r},{o}")
                real_x.append(obj_dir[o] + reg_dir[r] + rng.standard_normal(DIM))
    gen_rows, gen_x, gen_clip = [], [], []
    for form in ("object-region", "object-country"):
        for o in OBJECTS:
            for r in REGIONS:
                for i in range(GEN_PER_CELL):
                    country = COUNTRIES[r][i % 2] if form == "object-country" else ""
                    place = country or PROMPT_REGIONS[r]
                    gen_rows.append(f"{o} in {place},{PROMPT_REGIONS[r]},{country},{o}")
                    if r in STEREOTYPED:
                        x = obj_dir[o] + reg_dir[r] + look[r] + 0.35 * rng.standard_normal(DIM)
                    else:
                        x = obj_dir[o] + reg_dir[r] + rng.standard_normal(DIM)
                    gen_x.append(x)
                    missing = form == "object-region" and r == "Africa" and i < 0.3 * GEN_PER_CELL
                    gen_clip.append(clip(o, missing))
    for o in OBJECTS:
        for _ in range(POOL_PER_OBJECT):
            r = REGIONS[rng.integers(len(REGIONS))]
            gen_rows.append(f"{o},,,{o}")
            gen_x.append(obj_dir[o] + reg_dir[r] + rng.standard_normal(DIM))
            gen_clip.append(clip(o, False))

    (OUT / "real.csv").write_text("region,object\n" + "\n".join(real_rows) + "\n")
    np.save(OUT / "real.npy", np.array(real_x, np.float32))
    (OUT / "generated.csv").write_text("prompt,region,country,object\n" + "\n".join(gen_rows) + "\n")
    np.save(OUT / "generated.npy", np.array(gen_x, np.float32))
    np.save(OUT / "generated_clip.npy", np.array(gen_clip, np.float32))
    subprocess.run([vlbias, "--quiet", "prompts", "geo-objects", "--table",
                    str(OUT / "generated.csv"), "--out", str(OUT / "objects.csv")], check=True)
    names = [line.split(",")[0] for line in (OUT / "objects.csv").read_text().splitlines()[1:]]
    np.save(OUT / "objects.npy", np.array([text_dir[n] for n in names], np.float32))


if __name__ == "__main__":
    main()
