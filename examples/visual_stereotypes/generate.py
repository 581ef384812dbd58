#!/usr/bin/env python3
"""Rebuilds examples/visual_stereotypes/ from the SeeGULL and ViSAGe releases.

Usage: generate.py [DATA_DIR]   (default /work/shared/data; it must hold seegull/ and visage/)

1. Extracts (raw text lines, copied byte for byte, original order and line ends):
   - annotations.csv: the header of ViSAGe's full_set_annotations.csv, every row whose
     img_path file name belongs to IDENTITIES, and the first 3 fully empty rows (img_path and
     attribute empty; a reader skips them). Tasks A0..A99 appear twice in the release; both
     copies are kept.
   - seegull.csv: SeeGULL stereotypes_global_v2.csv rows of IDENTITIES.
   - visual_attr.csv: ViSAGe all_visual_attr.csv rows whose attribute occurs in the two
     extracts above.
   - LICENSE-SEEGULL, LICENSE-VISAGE: the releases' licence texts.
2. Synthesises (seeded, numpy), with a planted effect:
   - captions.csv (image,caption): 3 captions per distinct image of annotations.csv; the
     object of each caption is one of the identity's visual stereotypes with probability
     0.35, else a visual attribute that is no selected identity's stereotype (0.35) or a
     neutral word (0.30).
   - pull.csv (identity,set,prompt) + pull.npy (float32, rows x 64): per identity 6 default,
     6 stereotypical, 6 non-stereotypical image embeddings; default images lean toward the
     stereotype direction (positive pull) except for NEGATIVE_PULL, which lean toward the
     non-stereotype direction.
"""
import csv
import io
import os
import re
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data"
SEED = 7

# Chosen so that the example shows each case of the likelihood ratio on real annotations:
# Togolese (L(random) = 0 < L(stereo): infinite), Welsh and Swiss (L(stereo) = 0),
# Croatian (both 0: undefined), Swiss, Mongolian and Croatian (a single visual stereotype),
# and Mexican (whose tasks A0..A99 are the ones the release repeats). The folder must stay
# under 2 MB, which rules out the largest annotation sets (Indian, Japanese, Australian).
IDENTITIES = ["Mexican", "Bangladeshi", "Togolese", "Welsh", "Swiss", "Sudanese",
              "Nigerian", "Spanish", "Ghanaian", "Nepali", "Mongolian", "Croatian"]
NEGATIVE_PULL = {"Swiss", "Spanish"}
EMPTY_ROWS_KEPT = 3
CAPTIONS_PER_IMAGE = 3
P_STEREOTYPE = 0.35
P_OTHER_ATTRIBUTE = 0.35  # of all captions; the rest (0.30) use a neutral word
NEUTRAL = ["shirt", "wall", "street", "smile"]
TEMPLATES = ["a photo of a person wearing a {x}", "a man standing in front of a {x}",
             "portrait of a woman with {x}"]
PER_SET = 6
DIM = 64


def raw_lines(path):
    """The file's lines with their original line ends; checks no record spans lines."""
    data = open(path, "rb").read()
    lines = data.splitlines(keepends=True)
    records = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert len(records) == len(lines), f"{path}: a quoted field spans lines"
    return lines, records


def identity_from_image(path):
    name = re.split(r"[/\\]", path)[-1]
    if "." in name:
        name = name[: name.rindex(".")]
    return re.sub(r"[0-9]+$", "", name).rstrip(" _-")


def write_lines(name, lines):
    with open(os.path.join(HERE, name), "wb") as f:
        f.writelines(lines)


def extract():
    wanted = set(IDENTITIES)

    lines, recs = raw_lines(os.path.join(DATA, "visage", "full_set_annotations.csv"))
    header = recs[0]
    ic, ac = header.index("img_path"), header.index("attribute")
    keep, empty, ann_attrs, images = [lines[0]], 0, set(), []
    for line, rec in zip(lines[1:], recs[1:]):
        img, attr = rec[ic].strip(), rec[ac].strip()
        if not img and not attr:
            if empty < EMPTY_ROWS_KEPT:
                keep.append(line)
                empty += 1
            continue
        if identity_from_image(img) in wanted:
            keep.append(line)
            ann_attrs.add(attr)
            if img not in images:
                images.append(img)
    found = {identity_from_image(i) for i in images}
    assert found == wanted, f"identities without annotations: {sorted(wanted - found)}"
    write_lines("annotations.csv", keep)

    lines, recs = raw_lines(os.path.join(DATA, "seegull", "stereotypes_global_v2.csv"))
    sc = recs[0].index("identity")
    sel = [i for i in range(1, len(recs)) if recs[i][sc].strip() in wanted]
    write_lines("seegull.csv", [lines[0]] + [lines[i] for i in sel])
    sg_attrs = {recs[i][recs[0].index("attribute")].strip() for i in sel}

    lines, recs = raw_lines(os.path.join(DATA, "visage", "all_visual_attr.csv"))
    vc = recs[0].index("attribute")
    attrs = sg_attrs | ann_attrs
    write_lines("visual_attr.csv",
                [lines[0]] + [l for l, r in zip(lines[1:], recs[1:]) if r[vc].strip() in attrs])

    shutil.copyfile(os.path.join(DATA, "seegull", "LICENSE"), os.path.join(HERE, "LICENSE-SEEGULL"))
    shutil.copyfile(os.path.join(DATA, "visage", "LICENSE"), os.path.join(HERE, "LICENSE-VISAGE"))
    print(f"annotations.csv: {len(keep) - 1} rows ({empty} empty), {len(images)} images; "
          f"seegull.csv: {len(sel)} rows; attributes looked up: {len(attrs)}")
    return images


def visual_stereotypes():
    """identity -> sorted visual stereotypes (NA_stereo >= 2, every rater agrees it is
    visual), and the sorted list of visual attributes, read back from the extracts."""
    va = list(csv.DictReader(open(os.path.join(HERE, "visual_attr.csv"), newline="")))
    rating = [c for c in va[0] if c and c.startswith("rating_")]
    ok = {}
    for r in va:
        a = r["attribute"].strip()
        agree = all(r[c].strip().lower() in ("agree", "strongly agree") for c in rating)
        ok[a] = ok.get(a, True) and agree
    visual = sorted(a for a, v in ok.items() if v)
    vs = {i: set() for i in IDENTITIES}
    for r in csv.DictReader(open(os.path.join(HERE, "seegull.csv"), newline="")):
        a = r["attribute"].strip()
        if float(r["NA_stereo"]) >= 2 and ok.get(a, False):
            vs[r["identity"].strip()].add(a)
    return {i: sorted(s) for i, s in vs.items()}, visual


def article(word):
    w = word.lower()
    if w[:1] in "aeiou" and not w.startswith(("uni", "uk", "us", "eu", "one")):
        return "an"
    return "a"


def unit(v):
    return v / np.linalg.norm(v)


def synthesise(images, vs, visual):
    rng = np.random.default_rng(SEED)
    # "Other" attributes: visual ones that are no selected identity's visual stereotype.
    any_stereo = {a for v in vs.values() for a in v}
    others = [a for a in visual if a not in any_stereo]
    rows = []
    for img in images:
        ident = identity_from_image(img)
        stereo = vs[ident]
        for _ in range(CAPTIONS_PER_IMAGE):
            u = rng.random()
            if u < P_STEREOTYPE and stereo:
                x = stereo[rng.integers(len(stereo))]
            elif u < P_STEREOTYPE + P_OTHER_ATTRIBUTE:
                x = others[rng.integers(len(others))]
            else:
                x = NEUTRAL[rng.integers(len(NEUTRAL))]
            rows.append((img, TEMPLATES[rng.integers(len(TEMPLATES))].format(x=x)))
    with open(os.path.join(HERE, "captions.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["image", "caption"])
        w.writerows(rows)

    meta, emb = [], []
    for ident in sorted(IDENTITIES):
        stereo = vs[ident]
        ns_words = [others[k] for k in rng.choice(len(others), PER_SET, replace=False)]
        u, s, n = (unit(rng.standard_normal(DIM)) for _ in range(3))
        lean = n if ident in NEGATIVE_PULL else s

        def image(direction, weight):
            noise = rng.standard_normal(DIM) / np.sqrt(DIM)  # N(0, I/64)
            return unit(u + weight * direction + 0.5 * noise)

        for j in range(PER_SET):
            meta.append((ident, "default", f"{article(ident)} {ident} person"))
            emb.append(image(lean, 0.6))
        for j in range(PER_SET):
            a = stereo[j % len(stereo)]
            meta.append((ident, "stereotypical", f"{article(a)} {a} {ident} person"))
            emb.append(image(s, 1.0))
        for j in range(PER_SET):
            a = ns_words[j]
            meta.append((ident, "non-stereotypical", f"{article(a)} {a} {ident} person"))
            emb.append(image(n, 1.0))
    with open(os.path.join(HERE, "pull.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["identity", "set", "prompt"])
        w.writerows(meta)
    np.save(os.path.join(HERE, "pull.npy"), np.asarray(emb, dtype=np.float32))
    print(f"captions.csv: {len(rows)} captions; pull.csv/pull.npy: {len(meta)} rows x {DIM}")


if __name__ == "__main__":
    imgs = extract()
    stereotypes, visual_attrs = visual_stereotypes()
    for k in IDENTITIES:
        print(f"  {k}: {len(stereotypes[k])} visual stereotypes")
    synthesise(imgs, stereotypes, visual_attrs)
