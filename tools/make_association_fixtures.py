#!/usr/bin/python3
"""Reference values for the image-text association metrics over a prompt manifest
(docs/methods.md#cos-delta-cos, #markedness, #trait-confidence), read by tests/metrics/social_perception_test.cpp.

Writes tests/fixtures/metrics/association_{images,prompts}.npy (random float32
embeddings), association_manifest.csv, association_images.csv and association.json:

  cos[i][d]      cos(i, D) = mean over D's prompts (words x templates) of cos(i, prompt)
  delta[i][d]    mean over D's prompts of cos(i, prompt) - cos(i, neutral prompt of
                 the prompt's template)                       (Hausladen et al. Eq. 1-2)
  markedness     per attribute level: n, marked = #{neutral score > group score},
                 percent, percent per template; scores = mean cosine over the templates
                 that have both a neutral and a group prompt for the level
  confidence     1 / (1 + exp(s1 - s0)) for the pair "agency" (s = mean cosine over the
                 pole's prompts), raw and x100                (Baherwani and Vincent)

Cosines are computed in float64 from the float32 data with rows normalised in float64.
The script checks that no markedness comparison is within 1e-4 of a tie, so float32
rounding in vlbias cannot flip one.

Needs Debian's python3-numpy. Run: /usr/bin/python3 tools/make_association_fixtures.py
"""
import csv
import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics"
T1, T2 = "A photo of a {} person.", "A {} person."


def fill(template, word):
    return " ".join(template.replace("{}", word).split())


def manifest_rows():
    rows = []  # text, word, dimension, valence, template, role
    for t in (T1, T2):
        rows.append((fill(t, ""), "", "", "", t, "neutral"))
    for dim, val, words in (("warmth", "+", ["warm", "friendly"]), ("agency", "+", ["powerful"]),
                            ("agency", "-", ["powerless", "meek"])):
        for w in words:
            for t in (T1, T2):
                rows.append((fill(t, w), w, dim, val, t, "attribute"))
    for attr, word, templates in (("race", "white", (T1, T2)), ("race", "black", (T1, T2)),
                                  ("race", "asian", (T2,)), ("gender", "male", (T1,)),
                                  ("gender", "female", (T1,))):
        for t in templates:
            rows.append((fill(t, word), word, attr, "", t, "group"))
    return rows


def main():
    for seed in range(100):
        rng = np.random.default_rng(20261123 + seed)
        rows = manifest_rows()
        n_img, dim = 30, 16
        prompts = rng.normal(size=(len(rows), dim)).astype(np.float32)
        images = rng.normal(size=(n_img, dim)).astype(np.float32)
        races = ["White", "Black", "Asian", "Other", ""]
        race = [races[i % 5] for i in range(n_img)]
        gender = ["male" if i % 3 else "female" for i in range(n_img)]
        pu = prompts.astype(np.float64)
        pu /= np.linalg.norm(pu, axis=1, keepdims=True)
        iu = images.astype(np.float64)
        iu /= np.linalg.norm(iu, axis=1, keepdims=True)
        cos = pu @ iu.T  # prompts x images
        templates = [T1, T2]
        neutral = {r[4]: k for k, r in enumerate(rows) if r[5] == "neutral"}
        dims = [("warmth", "+", "warmth"), ("agency", "+", "agency+"), ("agency", "-", "agency-")]
        cos_id, delta_id = [], []
        for name, val, _ in dims:
            idx = [k for k, r in enumerate(rows) if r[5] == "attribute" and r[2] == name and r[3] == val]
            nidx = [neutral[rows[k][4]] for k in idx]
            cos_id.append(cos[idx].mean(axis=0))
            delta_id.append((cos[idx] - cos[nidx]).mean(axis=0))
        cos_id = np.array(cos_id).T
        delta_id = np.array(delta_id).T
        marked_out = []
        min_gap = np.inf
        for attr, values in (("race", race), ("gender", gender)):
            levels = sorted({v for v in values if v})
            for level in levels:
                members = [i for i, v in enumerate(values) if v == level]
                group = {r[4]: k for k, r in enumerate(rows)
                         if r[5] == "group" and r[1] == level.lower() and r[2] == attr}
                both = [t for t in templates if t in group]
                entry = {"attribute": attr, "level": level, "n": len(members)}
                if not both:
                    entry.update({"word": "", "marked": 0, "percent": None,
                                  "percent_by_template": [None, None]})
                    marked_out.append(entry)
                    continue
                ns = np.mean([cos[neutral[t], members] for t in both], axis=0)
                gs = np.mean([cos[group[t], members] for t in both], axis=0)
                min_gap = min(min_gap, np.abs(ns - gs).min())
                marked = int((ns > gs).sum())
                by_t = []
                for t in templates:
                    if t in group:
                        d = cos[neutral[t], members] - cos[group[t], members]
                        min_gap = min(min_gap, np.abs(d).min())
                        by_t.append(100.0 * (d > 0).sum() / len(members))
                    else:
                        by_t.append(None)
                entry.update({"word": level.lower(), "marked": marked,
                              "percent": 100.0 * marked / len(members), "percent_by_template": by_t})
                marked_out.append(entry)
        if min_gap < 1e-4:
            continue
        pos = [k for k, r in enumerate(rows) if r[2] == "agency" and r[3] == "+"]
        neg = [k for k, r in enumerate(rows) if r[2] == "agency" and r[3] == "-"]
        s0, s1 = cos[pos].mean(axis=0), cos[neg].mean(axis=0)
        conf_raw = 1.0 / (1.0 + np.exp(s1 - s0))
        conf_logit = 1.0 / (1.0 + np.exp(100.0 * (s1 - s0)))
        break
    else:
        raise SystemExit("no seed without near-ties")

    np.save(OUT / "association_prompts.npy", prompts)
    np.save(OUT / "association_images.npy", images)
    with open(OUT / "association_manifest.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["text", "word", "dimension", "valence", "template", "role"])
        w.writerows(rows)
    with open(OUT / "association_images.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "race", "gender"])
        for i in range(n_img):
            w.writerow([i, race[i], gender[i]])
    out = {
        "dimensions": [d[2] for d in dims],
        "cos": cos_id.tolist(),
        "delta_cos": delta_id.tolist(),
        "markedness": marked_out,
        "confidence_pair": "agency",
        "confidence_raw": conf_raw.tolist(),
        "confidence_logit": conf_logit.tolist(),
    }
    (OUT / "association.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"seed offset {seed}, smallest markedness gap {min_gap:.2e}")


if __name__ == "__main__":
    main()
