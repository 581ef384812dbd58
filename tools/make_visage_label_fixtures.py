#!/usr/bin/python3
"""Slices of ViSAGe's released image annotations for `vlbias dataset visage-labels`.

Writes tests/fixtures/labels/visage/:
  sheet1_slice.csv    Sheet1.csv's header and lines 14-25 (task A1), 38-49 (A3) and 170-184
                      (A14 with its "none of the above" row, then two empty rows), byte for byte
  full_set_slice.csv  full_set_annotations.csv's header and lines 2-16 (task A0 on
                      visual_annotation_full_set/Mexican5.png), 2837-2851 (A100 on
                      visual_annotation/Mexican5.png: the same file name in another folder),
                      32502-32503 (two rows without image and attribute) and 39787-39801 (the
                      release's repeat of lines 2-16), byte for byte (CRLF line ends kept)

The release (Apache-2.0, https://github.com/google-research-datasets/visage; the licence text is
data/visage/LICENSE) is read from --release (default /work/shared/data/visage). The tests'
expected rows are counted by hand from these lines (tests/cli/visage_labels_test.cpp), and
checked here against an independent pandas reading of the rules in
docs/methods.md#visage-annotations (runs, duplicates, majority), printed for the record.
"""
import argparse
import io
import os

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "labels", "visage")

SLICES = {
    "sheet1_slice.csv": ("Sheet1.csv", [(14, 25), (38, 49), (170, 184)]),
    "full_set_slice.csv": (
        "full_set_annotations.csv",
        [(2, 16), (2837, 2851), (32502, 32503), (39787, 39801)],
    ),
}


def cut(path, ranges):
    with open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    out = [lines[0]]
    for a, b in ranges:  # 1-based line numbers, inclusive
        out.extend(lines[a - 1 : b])
    return b"".join(out)


def reference(data, task, present, root):
    """Majority per (run, attribute), runs deduplicated, none option left out: pandas."""
    t = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    t = t[(t.img_path != "") | (t.attribute != "")].reset_index(drop=True)
    run = ((t[task] != t[task].shift()) | (t.img_path != t.img_path.shift())).cumsum()
    seen, keep = {}, []
    for r, g in t.groupby(run, sort=False):
        key = (g[task].iloc[0], g.img_path.iloc[0])
        content = tuple(map(tuple, g.drop(columns=[task, "img_path"]).values))
        dup = content in seen.setdefault(key, set())
        seen[key].add(content)
        keep.extend([not dup] * len(g))
    t = t[keep].assign(run=run[keep])
    t = t[t.attribute != "none of the above"]
    yes = t[present].str.lower() == "yes"
    votes = t.assign(yes=yes).groupby(["run", "img_path", "attribute"], sort=False).yes
    maj = (votes.sum() * 2 > votes.count()).reset_index()
    maj["image"] = maj.img_path.str[len(root) :] if root else maj.img_path.str.split("/").str[-1]
    return maj, len(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default="/work/shared/data/visage")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    for name, (source, ranges) in SLICES.items():
        data = cut(os.path.join(args.release, source), ranges)
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        sheet = name.startswith("sheet1")
        maj, rows = reference(
            data,
            "Annotator_id" if sheet else "worker_id",
            "present_in_the_image" if sheet else "present",
            "" if sheet else "/cns/px-d/home/image-generation/akshitat_test/",
        )
        print(f"{name}: {rows} annotation rows; majority rows {len(maj)}:")
        print(maj[["image", "attribute", "yes"]].to_string(index=False))


if __name__ == "__main__":
    main()
