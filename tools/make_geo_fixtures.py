#!/usr/bin/python3
"""Reference values for the geo-diversity audit (paper 002, DIG-In; include/vlbias/audits/geo_audit.h),
read by tests/audits/geo_audit_test.cpp.

Writes a small study into tests/fixtures/audits/geo/ (real.csv/.npy, generated.csv/.npy,
generated_clip.npy, objects.csv/.npy, two specs) and the expected point estimates of every
indicator into tests/fixtures/audits/geo.json, computed by an independent numpy
implementation of the rules the header documents:

  * labels: generated regions aliased ("the Americas" -> Americas), objects matched to the
    real ones; a generated object with no real images ("kite") is left out of the
    real-referenced indicators but still scored for consistency;
  * real duplicates: kept (spec.yaml) or dropped with every copy (spec_balanced.yaml);
  * sampling.real_per_cell / generated_per_cell (spec_balanced.yaml): seeded draws without
    replacement, cells in label order, using vlbias's random streams (tools/vlbias_rng.py);
  * object-form sets: object-mix matched samples (with the scaling rule when an object's pool
    is too small: "dog" has fewer {object} generations than some region has real dogs);
  * PRDC per (form, region) and per (form, object, region) with exact squared distances;
  * consistency: raw cosine against the object's text embedding, the 10th percentile (numpy
    linear) per object, mean over objects, overall and per region;
  * FID (singular values of X_a X_b^T) and the Vendi score per (form, region).

Bootstrap intervals are not reproduced here; tests check them for self-consistency.
Needs Debian's python3-numpy. Run: /usr/bin/python3 tools/make_geo_fixtures.py
"""
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import vlbias_rng as vr  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "audits" / "geo"
SEED = 11
FORMS = ["object", "object-region", "object-country"]
S_REAL, S_GEN, S_MIX = 21, 22, 23


def cell_seed(seed, stream, cell):
    return vr.derive_seed(vr.derive_seed(seed, stream), cell)


def sample_rows(rows, n, seed):
    return [rows[i] for i in vr.partial_shuffle(vr.Rng(seed, 0), len(rows), min(n, len(rows)))]


def object_mix_sample(targets, pools, seed):
    total = sum(targets)
    scale = 1.0
    for t, p in zip(targets, pools):
        if t > 0:
            scale = min(scale, len(p) / t)
    if scale >= 1.0:
        counts = list(targets)
    else:
        m = int(np.floor(scale * total + 1e-9))
        counts, rem = [], []
        for t, p in zip(targets, pools):
            q = scale * t
            counts.append(min(len(p), int(np.floor(q))))
            rem.append(q - counts[-1])
        given = sum(counts)
        order = sorted(range(len(targets)), key=lambda o: -rem[o])  # stable: lower index first
        for o in order:
            if given >= m:
                break
            if targets[o] > 0 and counts[o] < len(pools[o]) and rem[o] > 0:
                counts[o] += 1
                given += 1
    rows = []
    for o, c in enumerate(counts):
        if c:
            rng = vr.Rng(seed, o)
            rows += [pools[o][i] for i in vr.partial_shuffle(rng, len(pools[o]), c)]
    return rows


def sq(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    out = np.zeros((a.shape[0], b.shape[0]))
    for k in range(a.shape[1]):
        d = a[:, None, k] - b[None, :, k]
        out += d * d
    return out


def prdc(real, fake, k):
    if real.shape[0] <= k:
        return None
    if fake.shape[0] == 0:
        return {"precision": None, "coverage": None, "recall": None, "density": None}
    rr = sq(real, real)
    np.fill_diagonal(rr, np.inf)
    r_real = np.partition(rr, k - 1, axis=1)[:, k - 1]
    d = sq(real, fake)
    inside = d < r_real[:, None]
    out = {"precision": float(inside.any(axis=0).mean()),
           "coverage": float(inside.any(axis=1).mean()),
           "density": float(inside.sum(axis=0).mean() / k), "recall": None}
    if fake.shape[0] > k:
        ff = sq(fake, fake)
        np.fill_diagonal(ff, np.inf)
        r_fake = np.partition(ff, k - 1, axis=1)[:, k - 1]
        out["recall"] = float((d < r_fake[None, :]).any(axis=1).mean())
    return out


def fid(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    xa = (a - a.mean(0)) / np.sqrt(a.shape[0] - 1)
    xb = (b - b.mean(0)) / np.sqrt(b.shape[0] - 1)
    return float(((a.mean(0) - b.mean(0)) ** 2).sum() + (xa ** 2).sum() + (xb ** 2).sum()
                 - 2 * np.linalg.svd(xa @ xb.T, compute_uv=False).sum())


def vendi(x):
    x = x.astype(np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    w = np.linalg.eigvalsh(x @ x.T / x.shape[0])
    w = w[w > 0]
    return float(np.exp(-(w * np.log(w)).sum()))


def make_data():
    rng = np.random.default_rng(424242)
    regions = ["Africa", "Americas", "Europe"]
    prompt_regions = {"Africa": "Africa", "Americas": "the Americas", "Europe": "Europe"}
    objects = ["bag", "dog", "stove"]
    d, cd = 6, 4
    odir = {o: rng.standard_normal(d) * 1.5 for o in objects}
    rdir = {r: rng.standard_normal(d) * 0.8 for r in regions}
    tdir = {o: rng.standard_normal(cd) for o in objects + ["kite"]}
    real_rows, real_x = [], []
    sizes = {("bag", "Africa"): 9, ("bag", "Americas"): 7, ("bag", "Europe"): 12,
             ("dog", "Africa"): 10, ("dog", "Americas"): 8, ("dog", "Europe"): 5,
             ("stove", "Africa"): 6, ("stove", "Americas"): 11, ("stove", "Europe"): 3}
    for (o, r), n in sizes.items():
        for _ in range(n):
            real_rows.append((r, o))
            real_x.append(odir[o] + rdir[r] + rng.standard_normal(d))
    # Exact duplicates: three rows copied (one twice).
    for src in (0, 4, 4, 20):
        real_rows.append(real_rows[src])
        real_x.append(real_x[src].copy())
    real_x = np.array(real_x, np.float32)
    gen = []  # (prompt, form, region, country, object, features, clip)
    for form in ("object-region", "object-country"):
        for o in objects:
            for r in regions:
                n = 8 if form == "object-region" else 7
                shift = 1.2 if (r == "Africa" and form == "object-region") else 0.0
                for i in range(n):
                    country = f"{r}-land-{i % 2}" if form == "object-country" else ""
                    x = odir[o] + rdir[r] + shift + rng.standard_normal(d) * (0.5 if shift else 1)
                    c = tdir[o] * (0.2 if (r == "Europe" and i < 3) else 1.0) + 0.4 * rng.standard_normal(cd)
                    gen.append((f"{o} in {prompt_regions[r]}", form, prompt_regions[r], country, o, x, c))
    pool = {"bag": 30, "dog": 6, "stove": 25}
    for o, n in pool.items():
        for _ in range(n):
            r = regions[rng.integers(3)]
            gen.append((o, "object", "", "", o, odir[o] + rdir[r] + rng.standard_normal(d),
                        tdir[o] + 0.4 * rng.standard_normal(cd)))
    for _ in range(5):  # an object the real data does not have
        gen.append(("kite in Africa", "object-region", "Africa", "", "kite",
                    rng.standard_normal(d), tdir["kite"] + 0.4 * rng.standard_normal(cd)))
    return regions, objects, real_rows, real_x, gen, tdir


def quote(s):
    return f'"{s}"' if ("," in s or " " in s) else s


def write_inputs(regions, objects, real_rows, real_x, gen, tdir):
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "real.csv", "w") as f:
        f.write("region,object\n")
        for r, o in real_rows:
            f.write(f"{r},{o}\n")
    np.save(OUT / "real.npy", real_x)
    with open(OUT / "generated.csv", "w") as f:
        f.write("prompt,form,region,country,object\n")
        for p, form, r, c, o, _, _ in gen:
            f.write(f"{quote(p)},{form},{quote(r)},{c},{o}\n")
    np.save(OUT / "generated.npy", np.array([g[5] for g in gen], np.float32))
    np.save(OUT / "generated_clip.npy", np.array([g[6] for g in gen], np.float32))
    with open(OUT / "objects.csv", "w") as f:
        f.write("object,text\n")
        for o in objects + ["kite"]:
            f.write(f"{o},{o}\n")
    np.save(OUT / "objects.npy", np.array([tdir[o] for o in objects + ["kite"]], np.float32))
    common = ("version: 1\nkind: geo-diversity\nseed: 11\nmin_group_size: 5\n"
              "real:\n  table: real.csv\n  features: real.npy\n{dup}"
              "generated:\n  table: generated.csv\n  features: generated.npy\n"
              "  clip: generated_clip.npy\n"
              "objects:\n  table: objects.csv\n  embeddings: objects.npy\n"
              "aliases:\n  region: {{\"the Americas\": Americas}}\n{sampling}"
              "analyses:\n  region: {{k: 2, bootstrap: 200}}\n"
              "  object_region: {{k: 2, bootstrap: 200}}\n"
              "  consistency: {{bootstrap: 200}}\n"
              "  distribution: {{fid: true, vendi: true}}\n")
    (OUT / "spec.yaml").write_text(common.format(dup="", sampling=""))
    (OUT / "spec_balanced.yaml").write_text(common.format(
        dup="  duplicates: drop\n",
        sampling="sampling:\n  real_per_cell: 6\n  generated_per_cell: 5\n"))


def reference(real_rows, real_x, gen, tdir, balanced):
    k = 2
    # Real: duplicates, balancing.
    keys = [x.tobytes() for x in real_x]
    rows = list(range(len(real_rows)))
    if balanced:  # duplicates: drop (every copy)
        count = {}
        for kk in keys:
            count[kk] = count.get(kk, 0) + 1
        rows = [i for i in rows if count[keys[i]] == 1]
        cells = {}
        for i in rows:
            cells.setdefault(real_rows[i], []).append(i)
        kept = []
        for c, key in enumerate(sorted(cells)):
            kept += sample_rows(cells[key], 6, cell_seed(SEED, S_REAL, c))
        rows = sorted(kept)
    regions = sorted({real_rows[i][0] for i in rows})
    objects = sorted({real_rows[i][1] for i in rows})
    nr, no = len(regions), len(objects)
    rx = real_x[rows]
    rreg = [regions.index(real_rows[i][0]) for i in rows]
    robj = [objects.index(real_rows[i][1]) for i in rows]
    real_count = [[sum(1 for a, b in zip(robj, rreg) if a == o and b == r) for r in range(nr)]
                  for o in range(no)]
    gx = np.array([g[5] for g in gen], np.float32)
    alias = {"the Americas": "Americas"}
    greg = [alias.get(g[2], g[2]) for g in gen]
    groups = {f: [[[] for _ in range(nr)] for _ in range(no)] for f in FORMS}
    for i, g in enumerate(gen):
        if g[4] not in objects:
            continue
        if g[1] != "object" and greg[i] not in regions:
            continue
        groups[g[1]][objects.index(g[4])][0 if g[1] == "object" else regions.index(greg[i])].append(i)
    if balanced:
        cell = 0
        for f in FORMS:
            for o in range(no):
                for r in range(1 if f == "object" else nr):
                    s = cell_seed(SEED, S_GEN, cell)
                    cell += 1
                    if groups[f][o][r]:
                        groups[f][o][r] = sample_rows(groups[f][o][r], 5, s)
    region_sets = {f: [[] for _ in range(nr)] for f in FORMS}
    cell_sets = {f: [[[] for _ in range(nr)] for _ in range(no)] for f in FORMS}
    for f in ("object-region", "object-country"):
        for o in range(no):
            for r in range(nr):
                cell_sets[f][o][r] = groups[f][o][r]
                region_sets[f][r] += groups[f][o][r]
    pools = [groups["object"][o][0] for o in range(no)]
    for r in range(nr):
        region_sets["object"][r] = object_mix_sample([real_count[o][r] for o in range(no)], pools,
                                                     cell_seed(SEED, S_MIX, r))
        for o in range(no):
            if real_count[o][r] and pools[o]:
                cell_sets["object"][o][r] = sample_rows(pools[o], real_count[o][r],
                                                        cell_seed(SEED, S_MIX, nr + r * no + o))
    out = {"real_images": len(rows), "regions": regions,
           "object_form_sets": {regions[r]: sorted(region_sets["object"][r]) for r in range(nr)},
           "region": [], "object_region": [], "consistency": [], "distribution": []}
    for f in FORMS:
        for r in range(nr):
            real_r = rx[[i for i in range(len(rows)) if rreg[i] == r]]
            fake = gx[region_sets[f][r]]
            v = prdc(real_r, fake, k)
            out["region"].append({"form": f, "region": regions[r], "n_real": len(real_r),
                                  "n_generated": len(fake), **(v or {})})
            dist = {"form": f, "region": regions[r]}
            if len(fake) >= 2:
                dist["fid"] = fid(real_r, fake)
                dist["vendi_generated"] = vendi(fake)
            dist["vendi_real"] = vendi(real_r)
            out["distribution"].append(dist)
    for o in range(no):
        for r in range(nr):
            idx = [i for i in range(len(rows)) if rreg[i] == r and robj[i] == o]
            if not idx:
                continue
            for f in FORMS:
                v = prdc(rx[idx], gx[cell_sets[f][o][r]], k)
                out["object_region"].append({"form": f, "object": objects[o], "region": regions[r],
                                             "n_real": len(idx),
                                             "n_generated": len(cell_sets[f][o][r]),
                                             **(v if v else {"precision": None})})
    # Consistency: raw cosine to the object's text embedding, p10 per object, mean.
    selected = set()
    if balanced:
        for f in FORMS:
            for o in range(no):
                for r in range(nr):
                    selected.update(cell_sets[f][o][r])
    for f in FORMS:
        by_obj, by_reg = {}, {}
        for i, g in enumerate(gen):
            if g[1] != f or (balanced and i not in selected):
                continue
            t = tdir[g[4]].astype(np.float32).astype(np.float64)
            c = g[6].astype(np.float32).astype(np.float64)
            score = float(c @ t / np.linalg.norm(c) / np.linalg.norm(t))
            by_obj.setdefault(g[4], []).append(score)
            if f != "object":
                by_reg.setdefault(greg[i], {}).setdefault(g[4], []).append(score)

        def indicator(strata):
            return float(np.mean([np.percentile(strata[o], 10) for o in sorted(strata)]))

        out["consistency"].append({"form": f, "region": "all", "indicator": indicator(by_obj)})
        for reg in sorted(by_reg):
            out["consistency"].append({"form": f, "region": reg, "indicator": indicator(by_reg[reg])})
    return out


def main():
    regions, objects, real_rows, real_x, gen, tdir = make_data()
    write_inputs(regions, objects, real_rows, real_x, gen, tdir)
    expected = {"spec.yaml": reference(real_rows, real_x, gen, tdir, False),
                "spec_balanced.yaml": reference(real_rows, real_x, gen, tdir, True)}
    (ROOT / "tests" / "fixtures" / "audits" / "geo.json").write_text(
        json.dumps(expected, indent=1) + "\n")
    for name, e in expected.items():
        print(name, e["real_images"], [(c["form"], c["region"], c.get("precision"))
                                       for c in e["region"]][:4])


if __name__ == "__main__":
    main()
