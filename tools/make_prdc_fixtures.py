#!/usr/bin/python3
"""Reference values for PRDC (docs/methods.md#prdc; Kynkaanniemi et al. 2019, Naeem et al. 2020),
read by tests/metrics/prdc_test.cpp and tests/cli/metric_distribution_test.cpp.

Writes float32 feature matrices as .npy files into tests/fixtures/metrics/ and the expected
values into tests/fixtures/metrics/prdc.json. Cases:

  random      300 real x 250 generated, d = 16, Gaussian (generated shifted by 0.3); k = 3, 5.
  duplicates  120 real rows of which 30 repeat another row exactly (some three times), 100
              generated rows of which 20 are copies of real rows: radius 0 balls, and
              generated points at distance exactly 0 (inside a radius-0 ball only under
              the inclusive rule).
  grid        every point of the integer grid {0..5} x {0..5} x {0..2} as real data and a mix
              of grid and half-integer points as generated data: k-th neighbour distances and
              ball boundaries tie exactly.
  offset      1100 real x 1050 generated, d = 12, values 1000 + N(0, 1): float32 GEMM
              distances lose almost every digit here, so nearly every comparison must be
              settled by the exact recomputation; the sizes also cross the tile edges.

The reference is plain numpy in float64: squared distances summed left to right over the
features from exact float32 differences (the same order as vlbias's exact recomputation, so
ties compare equal bit for bit), radii the k-th smallest over the other rows (by index),
and every comparison made on squared distances. For the random case the fixture also holds
the values of prdc's own approach (scikit-learn pairwise_distances, numpy partition of
k + 1 values including the self-distance), which must agree there.

Needs Debian's python3-numpy and python3-sklearn.
Run: /usr/bin/python3 tools/make_prdc_fixtures.py
"""
import json
import pathlib

import numpy as np
import sklearn.metrics

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics"


def sq_dists(a, b):
    """Exact-order squared distances: sum over k of (a_k - b_k)^2, left to right."""
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    out = np.zeros((a.shape[0], b.shape[0]))
    for k in range(a.shape[1]):
        diff = a64[:, None, k] - b64[None, :, k]
        out += diff * diff
    return out


def knn_radii_sq(x, k):
    d = sq_dists(x, x)
    np.fill_diagonal(d, np.inf)  # others by index: a duplicate still counts at 0
    return np.partition(d, k - 1, axis=1)[:, k - 1]


def prdc_reference(real, fake, k, inclusive):
    r_real = knn_radii_sq(real, k)
    r_fake = knn_radii_sq(fake, k) if fake.shape[0] > k else None
    d = sq_dists(real, fake)
    inside_real = (d <= r_real[:, None]) if inclusive else (d < r_real[:, None])
    out = {
        "precision": float(inside_real.any(axis=0).mean()),
        "density": float(inside_real.sum(axis=0).mean() / k),
        "coverage": float(inside_real.any(axis=1).mean()),
    }
    if r_fake is not None:
        inside_fake = (d <= r_fake[None, :]) if inclusive else (d < r_fake[None, :])
        out["recall"] = float(inside_fake.any(axis=1).mean())
    per_sample = {
        "real_radius_sq": r_real.tolist(),
        "fake_radius_sq": None if r_fake is None else r_fake.tolist(),
        "fake_ball_count": inside_real.sum(axis=0).astype(int).tolist(),
        "real_covered": inside_real.any(axis=1).astype(int).tolist(),
        "real_in_fake_balls": None if r_fake is None else inside_fake.any(axis=1).astype(int).tolist(),
    }
    return out, per_sample


def prdc_library_style(real, fake, k):
    """The prdc package's computation (clovaai/generative-evaluation-prdc), re-written."""
    def radii(x):
        dist = sklearn.metrics.pairwise_distances(x, x, metric="euclidean", n_jobs=1)
        idx = np.argpartition(dist, k + 1, axis=-1)[..., : k + 1]
        return np.take_along_axis(dist, idx, axis=-1).max(axis=-1)

    rr, rf = radii(real), radii(fake)
    d = sklearn.metrics.pairwise_distances(real, fake, metric="euclidean", n_jobs=1)
    return {
        "precision": float((d < rr[:, None]).any(axis=0).mean()),
        "recall": float((d < rf[None, :]).any(axis=1).mean()),
        "density": float((1.0 / k) * (d < rr[:, None]).sum(axis=0).mean()),
        "coverage": float((d.min(axis=1) < rr).mean()),
    }


def save(name, m):
    np.save(OUT / f"prdc_{name}.npy", np.ascontiguousarray(m, dtype=np.float32))


def main():
    rng = np.random.default_rng(20261124)
    cases = {}

    real = rng.standard_normal((300, 16)).astype(np.float32)
    fake = (rng.standard_normal((250, 16)) + 0.3).astype(np.float32)
    cases["random"] = (real, fake, [3, 5])

    base = rng.standard_normal((90, 6)).astype(np.float32)
    dup_rows = rng.choice(90, 30, replace=True)  # some rows repeat several times
    real = np.concatenate([base, base[dup_rows]])[rng.permutation(120)]
    fake = np.concatenate([rng.standard_normal((80, 6)).astype(np.float32),
                           real[rng.choice(120, 20, replace=False)]])[rng.permutation(100)]
    cases["duplicates"] = (real, fake, [1, 3])

    g = np.stack(np.meshgrid(np.arange(6), np.arange(6), np.arange(3), indexing="ij"), -1)
    real = g.reshape(-1, 3).astype(np.float32)
    half = real[rng.choice(real.shape[0], 40, replace=False)] + np.array([0.5, 0, 0.5], np.float32)
    on_grid = real[rng.choice(real.shape[0], 30, replace=False)]
    far = rng.integers(-3, 9, size=(20, 3)).astype(np.float32)
    fake = np.concatenate([half, on_grid, far])[rng.permutation(90)]
    cases["grid"] = (real, fake, [1, 2, 4, 6])

    real = (1000.0 + rng.standard_normal((1100, 12))).astype(np.float32)
    fake = (1000.0 + 1.1 * rng.standard_normal((1050, 12)) + 0.2).astype(np.float32)
    cases["offset"] = (real, fake, [3])

    out = {"cases": {}}
    for name, (real, fake, ks) in cases.items():
        save(f"{name}_real", real)
        save(f"{name}_fake", fake)
        entry = {"real": f"metrics/prdc_{name}_real.npy", "fake": f"metrics/prdc_{name}_fake.npy",
                 "results": []}
        for k in ks:
            for inclusive in (False, True):
                values, per_sample = prdc_reference(real, fake, k, inclusive)
                row = {"k": k, "inclusive": inclusive, **values}
                if name in ("duplicates", "grid") or (name == "random" and k == 3):
                    row["per_sample"] = per_sample
                entry["results"].append(row)
            if name == "random":
                entry.setdefault("library_style", {})[str(k)] = prdc_library_style(real, fake, k)
        out["cases"][name] = entry
        print(name, [(r["k"], r["inclusive"], round(r["precision"], 4), round(r["coverage"], 4))
                     for r in entry["results"]])
    # prdc's approach and the exact reference agree on the random case.
    for k, lib in out["cases"]["random"]["library_style"].items():
        exact = next(r for r in out["cases"]["random"]["results"]
                     if r["k"] == int(k) and not r["inclusive"])
        for key in ("precision", "recall", "density", "coverage"):
            assert abs(lib[key] - exact[key]) < 1e-12, (k, key, lib[key], exact[key])
    (OUT / "prdc.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
