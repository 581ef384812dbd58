#!/usr/bin/python3
"""Reference values for the bootstrap intervals of FID, KID and Vendi and for FID_inf
(include/vlbias/metrics/distribution_bootstrap.h, docs/methods.md#fid, #kid, #vendi), read by
tests/metrics/distribution_bootstrap_test.cpp and tests/cli/metric_distribution_bootstrap_test.cpp.

Independent of vlbias's weighted updates: each replicate MATERIALISES its resampled generated
rows (replicate b: n indices Rng(seed, b).uniform_index(n), reproduced by tools/vlbias_rng.py)
and computes, in float64 from the float32 data,
  FID    mu, np.cov and scipy.linalg.sqrtm(S_real @ S_gen) as pytorch-fid does;
  KID    the all-rows unbiased MMD^2 with k(x, y) = (x.y / d + 1)^3 (numpy);
  Vendi  exp(Shannon entropy) of the positive np.linalg.eigvalsh of K / n (cosine kernel);
the percentile interval np.percentile(replicates, [2.5, 97.5]) (type 7) and the recentred one
(replicates + estimate - np.median(replicates), clipped to the statistic's range); and FID_inf: sizes
np.linspace(min, n, points).astype(int), point p's rows the first N of vlbias_rng's partial
Fisher-Yates shuffle from Rng(seed, p), FID_N (sqrtm), np.polyfit(1 / N, FID_N, 1).

Cases: "tall" real 150 x 6, generated 40 x 6 (n > d: the triangular factor); "wide" real
12 x 30, generated 16 x 30 (n < d: the Gram routes).

Needs Debian's python3-numpy and python3-scipy.
Run: /usr/bin/python3 tools/make_distribution_bootstrap_fixtures.py
"""
import json
import pathlib
import sys

import numpy as np
import scipy.linalg

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import vlbias_rng  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "metrics" / "distribution_bootstrap"
RESAMPLES = 6
SEED = 20261126


def fid_sqrtm(real, gen):
    mu_r, mu_g = real.mean(axis=0), gen.mean(axis=0)
    s_r = np.atleast_2d(np.cov(real, rowvar=False))
    s_g = np.atleast_2d(np.cov(gen, rowvar=False))
    covmean = scipy.linalg.sqrtm(s_r @ s_g, disp=False)[0]
    return float(((mu_r - mu_g) ** 2).sum() + np.trace(s_r) + np.trace(s_g)
                 - 2 * np.trace(covmean).real)


def mmd2(a, b):
    d = a.shape[1]
    kxx = (a @ a.T / d + 1) ** 3
    kyy = (b @ b.T / d + 1) ** 3
    kxy = (a @ b.T / d + 1) ** 3
    m, n = a.shape[0], b.shape[0]
    return float((kxx.sum() - np.trace(kxx)) / (m * (m - 1))
                 + (kyy.sum() - np.trace(kyy)) / (n * (n - 1)) - 2 * kxy.sum() / (m * n))


def vendi(x):
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    w = np.linalg.eigvalsh(u @ u.T / x.shape[0])
    p = w[w > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def resample_indices(n, seed, b):
    rng = vlbias_rng.Rng(seed, b)
    return [rng.uniform_index(n) for _ in range(n)]


def bootstrap(real, gen):
    n = gen.shape[0]
    reps = {"fid": [], "kid": [], "vendi": []}
    multiplicities = []
    for b in range(RESAMPLES):
        idx = resample_indices(n, SEED, b)
        multiplicities.append(np.bincount(idx, minlength=n).tolist())
        g = gen[idx]  # the materialised resample
        reps["fid"].append(fid_sqrtm(real, g))
        reps["kid"].append(mmd2(real, g))
        reps["vendi"].append(vendi(g))
    out = {"multiplicities": multiplicities,
           "estimate": {"fid": fid_sqrtm(real, gen), "kid": mmd2(real, gen), "vendi": vendi(gen)}}
    ranges = {"fid": (0, np.inf), "kid": (-np.inf, np.inf), "vendi": (1, n)}
    for k, v in reps.items():
        lo, hi = np.percentile(v, [2.5, 97.5])
        shift = out["estimate"][k] - float(np.median(v))
        rlo, rhi = np.percentile(np.clip(np.array(v) + shift, *ranges[k]), [2.5, 97.5])
        out[k] = {"replicates": v, "lower": float(lo), "upper": float(hi), "shift": shift,
                  "recentred_lower": float(rlo), "recentred_upper": float(rhi)}
    return out


def fid_inf(real, gen, points, min_size, seed):
    n = gen.shape[0]
    sizes = np.linspace(min_size, n, points).astype(int)
    fids = []
    for p, size in enumerate(sizes):
        rows = vlbias_rng.partial_shuffle(vlbias_rng.Rng(seed, p), n, int(size))
        fids.append(fid_sqrtm(real, gen[rows]))
    slope, intercept = np.polyfit(1.0 / sizes, fids, 1)
    return {"points": points, "min_size": min_size, "seed": seed, "sizes": sizes.tolist(),
            "fids": fids, "slope": float(slope), "fid_inf": float(intercept)}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(24005)
    cases = {
        "tall": (rng.standard_normal((150, 6)),
                 1.2 * rng.standard_normal((40, 6)) + 0.3),
        "wide": (rng.standard_normal((12, 30)) + 0.5,
                 rng.standard_normal((16, 30)) + 0.8),
    }
    out = {"resamples": RESAMPLES, "seed": SEED, "level": 0.95, "cases": {}}
    for name, (real, gen) in cases.items():
        real = real.astype(np.float32)
        gen = gen.astype(np.float32)
        np.save(OUT / f"{name}_real.npy", real)
        np.save(OUT / f"{name}_generated.npy", gen)
        r64, g64 = real.astype(np.float64), gen.astype(np.float64)
        case = {"real": f"metrics/distribution_bootstrap/{name}_real.npy",
                "generated": f"metrics/distribution_bootstrap/{name}_generated.npy",
                "bootstrap": bootstrap(r64, g64),
                "fid_inf": fid_inf(r64, g64, 6, 5, 9)}
        out["cases"][name] = case
        print(name, case["bootstrap"]["estimate"], case["fid_inf"]["fid_inf"])
    (OUT / "reference.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
