#!/usr/bin/python3
"""Writes examples/geo_diversity_images/: the geo-diversity audit started from IMAGES and a
feature model instead of feature files (issue 22): small synthetic pictures, and a spec whose
`features_model` is the width-scaled RANDOM FID Inception-v3 of the tests
(tests/fixtures/encode/inception, tools/make_inception_fixtures.py). Neither the pictures nor
the weights come from a dataset or a trained model; the run shows the pipeline (decode,
pytorch-fid preprocessing, Inception forward, cached features, realism/diversity/FID/Vendi per
region), not a finding. Swap in pt_inception-2015-12-05's weights converted with
`vlbias convert-weights` and real image folders for a real audit.

Pictures: 3 regions x 2 objects; each object a shape, each region a palette; a real picture
varies its colours, position and size at random. Generated pictures follow the same law, except
that those of "Africa" are pulled toward one look (a third of the spread): the planted effect.

Run: /usr/bin/python3 tools/make_geo_images_example.py
"""
import pathlib

import numpy as np
from PIL import Image, ImageDraw

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "geo_diversity_images"
REGIONS = {"Africa": (200, 120, 40), "Europe": (60, 110, 200), "EastAsia": (180, 40, 60)}
OBJECTS = ["ball", "box"]
PER_CELL = 12
SIDE = 40


def picture(rng, region, obj, spread):
    base = np.array(REGIONS[region], float)
    colour = tuple(int(v) for v in np.clip(base + rng.normal(0, 50 * spread, 3), 0, 255))
    back = tuple(int(v) for v in np.clip(255 - base + rng.normal(0, 40 * spread, 3), 0, 255))
    img = Image.new("RGB", (SIDE, SIDE), back)
    d = ImageDraw.Draw(img)
    c = SIDE / 2 + rng.normal(0, 6 * spread, 2)
    r = 10 + rng.normal(0, 4 * spread)
    box = [c[0] - r, c[1] - r, c[0] + r, c[1] + r]
    (d.ellipse if obj == "ball" else d.rectangle)(box, fill=colour)
    noise = rng.normal(0, 12, (SIDE, SIDE, 3))
    return Image.fromarray(np.clip(np.asarray(img, float) + noise, 0, 255).astype(np.uint8))


def write_set(rng, name, pulled):
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    rows = ["path,region,object"]
    for region in REGIONS:
        for obj in OBJECTS:
            for i in range(PER_CELL):
                spread = 1 / 3 if region in pulled else 1.0
                path = f"{name}/{region}_{obj.replace(' ', '_')}_{i:02d}.jpg"
                picture(rng, region, obj, spread).save(OUT / path, quality=90)
                rows.append(f"{path},{region},{obj}")
    (OUT / f"{name}.csv").write_text("\n".join(rows) + "\n")


SPEC = """\
# Geo-diversity audit (paper 002, DIG-In) started from images and a feature model
# (tools/make_geo_images_example.py). SYNTHETIC pictures and a RANDOM, width-scaled
# Inception-v3 (the tests' tiny model): this shows the pipeline, not a finding. For a real
# audit point features_model.model at the FID Inception's weights (pytorch-fid's .pth through
# `vlbias convert-weights`) and the tables at real and generated images.
kind: geo-diversity
title: "Geo-diversity from images (example: synthetic pictures, random Inception)"
about: >-
  SYNTHETIC pictures (3 regions x 2 objects, 12 per cell) and the tests' RANDOM width-scaled
  FID Inception-v3 (128-d pool3). Generated pictures for Africa are pulled toward one look.
seed: 1
min_group_size: 5
features_model:
  model: ../../tests/fixtures/encode/inception
  column: path
  preprocess: pytorch-fid
real:
  table: real.csv
generated:
  table: generated.csv
report: {images: 4}
analyses:
  region: {k: 3, bootstrap: 200}
  object_region: {k: 3, bootstrap: 200}
  consistency: false
  distribution: {fid: true, vendi: true}
"""


def main():
    rng = np.random.default_rng(22)
    write_set(rng, "real", set())
    write_set(rng, "generated", {"Africa"})
    (OUT / "spec.yaml").write_text(SPEC)


if __name__ == "__main__":
    main()
