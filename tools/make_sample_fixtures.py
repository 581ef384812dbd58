#!/usr/bin/env python3
"""Fixtures of tests/cli/sample_test.cpp and tests/core/numpy_random_test.cpp: `vlbias sample`
against numpy/pandas.

Writes tests/fixtures/sample/:
- people.csv: a synthetic image table (FairFace-like race x gender x age, GeoDE-like object x
  region, a numeric decade, a text column with commas, quotes, formula-like and non-ASCII text,
  missing cells here and there).
- cases.json: for each `vlbias sample` command line, the ids numpy/pandas draw and the per-cell
  counts. The reference is the documented algorithm written with pandas:
      rng = np.random.default_rng(seed)
      for key, cell in df[mask].groupby(by, sort=True):    # missing keys dropped
          idx = rng.choice(len(cell), size=target, replace=replace)
  and, where every cell is full, pandas' own
      df[mask].groupby(by).sample(n=n, random_state=np.random.default_rng(seed))
  is checked to pick the same rows. Row masks are written by hand in pandas for each --where.
- numpy_random.json: raw outputs of default_rng(seed) (SeedSequence state words, 64-bit draws)
  and choice() results on both of numpy's paths (Floyd's algorithm with a shuffle; the tail
  shuffle for populations over 10,000), for tests/core/numpy_random_test.cpp.

Run: /usr/bin/python3 tools/make_sample_fixtures.py
"""
import csv
import json
import os

import numpy as np
import pandas as pd

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "sample")
RACES = ["Black", "East Asian", "Indian", "Latino_Hispanic", "Middle Eastern",
         "Southeast Asian", "White"]
OBJECTS = ["bag", "car", "dustbin", "house", "stove"]
REGIONS = ["Africa", "EastAsia", "Europe", "SouthEastAsia"]
NOTES = ["", "plain", "with, comma", 'say "hi"', "=SUM(A1)", "café ü", "-3", "line\nbreak"]


def write_people(path, rows=3000):
    rng = np.random.default_rng(20261126)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "race", "gender", "age", "decade", "object", "region", "note"])
        for i in range(rows):
            race = RACES[rng.integers(len(RACES))] if rng.random() > 0.01 else ""
            gender = ["female", "male"][rng.integers(2)]
            age = "" if rng.random() < 0.02 else str(int(rng.integers(1, 90)))
            decade = "" if age == "" else str((int(age) // 10) * 10)
            obj = OBJECTS[rng.integers(len(OBJECTS))]
            region = REGIONS[rng.integers(len(REGIONS))] if rng.random() > 0.01 else ""
            note = NOTES[rng.integers(len(NOTES))]
            w.writerow([1000 + i, race, gender, age, decade, obj, region, note])


# (name, vlbias options, pandas mask of the --where)
CASES = [
    ("paper004 race x gender among ages 20-60",
     {"by": "race,gender", "n": 60, "where": "age >= 20 and age <= 60", "seed": 4},
     lambda d: (d.age >= 20) & (d.age <= 60)),
    ("paper002 object x region",
     {"by": "object,region", "n": 18, "seed": 2}, None),
    ("short cells taken whole with --allow-short",
     {"by": "race,gender", "n": 110, "where": "age >= 20 and age <= 60", "seed": 7,
      "allow_short": True},
     lambda d: (d.age >= 20) & (d.age <= 60)),
    ("per-cell-min drops small cells",
     {"by": "race,object", "n": 12, "per_cell_min": 40,
      "where": 'gender == "female" and race in ("Black", "White", "Indian")', "seed": 11},
     lambda d: (d.gender == "female") & d.race.isin(["Black", "White", "Indian"])),
    ("a fraction per cell, a seed of two 32-bit words",
     {"by": "race", "frac": 0.1, "seed": 12345678901234}, None),
    ("with replacement",
     {"by": "gender,region", "n": 25, "replace": True, "seed": 0}, None),
    ("cells of a numeric column in numeric order",
     {"by": "decade", "n": 5, "where": "decade is not empty and decade != 0", "seed": 99},
     lambda d: d.decade.notna() & (d.decade != 0)),
    ("the largest seed",
     {"by": "region", "n": 300, "seed": 18446744073709551615}, None),
    ("not, or, parentheses, text comparison and empty cells",
     {"by": "gender", "n": 40,
      "where": "not (race in ('White', 'Black')) and (age < 30 or note is empty) and "
               "object >= 'd'", "seed": 5},
     # A missing race is not in the list, so `not (race in ...)` keeps it (~isin does too).
     lambda d: ~d.race.isin(["White", "Black"])
     & (((d.age < 30) & d.age.notna()) | d.note.isna()) & (d.object >= "d")),
]


def reference(df, opts, mask):
    by = opts["by"].split(",")
    sub = df if mask is None else df[mask(df).fillna(False).astype(bool)]
    rng = np.random.default_rng(opts["seed"])
    chosen, cells = [], []
    replace = opts.get("replace", False)
    for key, cell in sub.groupby(by if len(by) > 1 else by[0], sort=True, dropna=True):
        key = key if isinstance(key, tuple) else (key,)
        m = len(cell)
        target = opts["n"] if "n" in opts else int(round(opts["frac"] * m))
        rec = {"key": {b: fmt_key(k) for b, k in zip(by, key)}, "available": m, "target": target}
        if m < opts.get("per_cell_min", 0):
            cells.append({**rec, "drawn": 0, "status": "dropped"})
            continue
        k = target if replace else min(target, m)
        idx = rng.choice(m, size=k, replace=replace)
        chosen.extend(cell.index[idx])
        cells.append({**rec, "drawn": int(k), "status": "full" if k == target else "short"})
    chosen.sort()
    ids = [int(df.loc[i, "id"]) for i in chosen]
    if all(c["status"] == "full" for c in cells):
        size = {"n": opts["n"]} if "n" in opts else {"frac": opts["frac"]}
        ref = sub.dropna(subset=by).groupby(by).sample(
            **size, replace=replace, random_state=np.random.default_rng(opts["seed"]))
        assert sorted(ref.index) == chosen, "pandas groupby.sample disagrees"
    return ids, cells


def fmt_key(k):
    if isinstance(k, float) and k.is_integer():
        return str(int(k))
    return str(k)


def numpy_random_cases():
    out = {"seeds": [], "choices": []}
    for seed in [0, 1, 42, 2**32 - 1, 2**32, 12345678901234, 2**64 - 1]:
        ss = np.random.SeedSequence(seed)
        g = np.random.default_rng(seed)
        out["seeds"].append({"seed": str(seed),
                             "state": [int(x) for x in ss.generate_state(8, np.uint32)],
                             "raw": [str(int(x)) for x in g.bit_generator.random_raw(4)]})
    for seed, n, k, replace in [(1, 10, 10, False), (2, 100, 7, False), (3, 1, 1, False),
                                (4, 5, 0, False), (5, 20000, 500, False), (6, 20000, 300, False),
                                (7, 10001, 250, False), (8, 2**33, 3, False),
                                (9, 1000, 50, True), (10, 7, 12, True)]:
        g = np.random.default_rng(seed)
        v = g.choice(n, size=k, replace=replace)
        out["choices"].append({"seed": seed, "n": n, "k": k, "replace": replace,
                               "values": [int(x) for x in v],
                               "next_raw": str(int(g.bit_generator.random_raw()))})
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    people = os.path.join(OUT, "people.csv")
    write_people(people)
    df = pd.read_csv(people, keep_default_na=False, na_values=[""])
    cases = []
    for name, opts, mask in CASES:
        ids, cells = reference(df, opts, mask)
        cases.append({"name": name, "options": {k: (str(v) if k == "seed" else v)
                                                for k, v in opts.items()},
                      "ids": ids, "cells": cells})
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"table": "tests/fixtures/sample/people.csv", "cases": cases}, f, indent=1)
    with open(os.path.join(OUT, "numpy_random.json"), "w") as f:
        json.dump(numpy_random_cases(), f, indent=1)
    for c in cases:
        print(f"{c['name']}: {len(c['ids'])} rows, "
              f"{sum(x['status'] != 'full' for x in c['cells'])} cells not full")


if __name__ == "__main__":
    main()
