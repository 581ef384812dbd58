#!/usr/bin/python3
"""Reference values for FID, KID and the Vendi score (docs/methods.md#fid, #kid, #vendi, "Beyond the paper"),
read by tests/metrics/distribution_metrics_test.cpp and tests/cli/metric_distribution_test.cpp.

Writes float32 feature matrices (.npy) and tests/fixtures/metrics/distribution.json. Cases
(a = first set, b = second set):

  random      a 400 x 24 Gaussian, b 350 x 24 shifted and stretched (n > d: full-rank
              covariances).
  wide        a 30 x 64, b 40 x 64 (n < d: singular covariances; the Gram route).
  duplicates  a 60 x 10 with 20 exact duplicate rows, b 50 x 10 with copies of a's rows.
  grid        integer grid points {0..4}^3 as a, grid points plus half steps as b.

References, in float64 from the float32 data:
  FID    mu and np.cov(rowvar=False); tr sqrt(S_a S_b) as the sum of the singular values of
         X_a X_b^T (X = centred rows / sqrt(n - 1); np.linalg.svd of the n_a x n_b matrix:
         accurate also for singular covariances). For comparison the two usual routes: the
         eigenvalues of sqrt(S_a) S_b sqrt(S_a) (np.linalg.eigh, negatives clipped) and
         scipy.linalg.sqrtm(S_a @ S_b) (pytorch-fid); both lose about sqrt(rounding) per
         near-zero eigenvalue when a covariance is singular.
  KID    the unbiased MMD^2 with k(x, y) = (x.y / d + 1)^3 over all rows, and over the
         subsets vlbias draws (tools/vlbias_rng.py reproduces its streams: subset s draws
         the first m of a Fisher-Yates shuffle of a's rows from Rng(seed, s), then of b's):
         per-subset values, their mean and sd (n - 1).
  Vendi  the vendi_score package's definition written out: eigenvalues of K / n with
         K = X^ X^T (n x n, rows normalised), positive ones only, exp(Shannon entropy);
         also q = 2 and q = inf.

Needs Debian's python3-numpy and python3-scipy.
Run: /usr/bin/python3 tools/make_distribution_fixtures.py
"""
import json
import pathlib
import sys

import numpy as np
import scipy.linalg

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import vlbias_rng  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics"


def fid_reference(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    s_a = np.atleast_2d(np.cov(a, rowvar=False))
    s_b = np.atleast_2d(np.cov(b, rowvar=False))
    x_a = (a - mu_a) / np.sqrt(a.shape[0] - 1)
    x_b = (b - mu_b) / np.sqrt(b.shape[0] - 1)
    tr_sqrt = float(np.linalg.svd(x_a @ x_b.T, compute_uv=False).sum())
    mean_term = float(((mu_a - mu_b) ** 2).sum())
    traces = float(np.trace(s_a) + np.trace(s_b))
    w, v = np.linalg.eigh(s_a)
    root_a = (v * np.sqrt(np.clip(w, 0, None))) @ v.T
    lam = np.linalg.eigvalsh(root_a @ s_b @ root_a)
    eigh_fid = mean_term + traces - 2 * float(np.sqrt(np.clip(lam, 0, None)).sum())
    covmean = scipy.linalg.sqrtm(s_a @ s_b, disp=False)[0]
    sqrtm_fid = mean_term + traces - 2 * float(np.trace(covmean).real)
    return {"fid": mean_term + traces - 2 * tr_sqrt, "mean_term": mean_term,
            "trace_a": float(np.trace(s_a)), "trace_b": float(np.trace(s_b)),
            "trace_sqrt": tr_sqrt, "eigh_fid": eigh_fid, "sqrtm_fid": sqrtm_fid}


def mmd2(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    d = a.shape[1]
    kxx = (a @ a.T / d + 1) ** 3
    kyy = (b @ b.T / d + 1) ** 3
    kxy = (a @ b.T / d + 1) ** 3
    m, n = a.shape[0], b.shape[0]
    return float((kxx.sum() - np.trace(kxx)) / (m * (m - 1))
                 + (kyy.sum() - np.trace(kyy)) / (n * (n - 1)) - 2 * kxy.sum() / (m * n))


def kid_reference(a, b, subsets, size, seed):
    per = []
    for s in range(subsets):
        rng = vlbias_rng.Rng(seed, s)
        ia = vlbias_rng.partial_shuffle(rng, a.shape[0], size)
        ib = vlbias_rng.partial_shuffle(rng, b.shape[0], size)
        per.append(mmd2(a[ia], b[ib]))
    per = np.array(per)
    return {"subsets": subsets, "subset_size": size, "seed": seed, "per_subset": per.tolist(),
            "kid": float(per.mean()), "sd": float(per.std(ddof=1))}


def vendi_reference(x):
    x = x.astype(np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    w = np.linalg.eigvalsh(x @ x.T / x.shape[0])
    p = w[w > 0]
    return {"q1": float(np.exp(-(p * np.log(p)).sum())),
            "q2": float(np.exp(np.log((p ** 2).sum()) / (1 - 2))),
            "qinf": float(1.0 / p.max())}


def main():
    rng = np.random.default_rng(11242026)
    cases = {}
    a = rng.standard_normal((400, 24))
    b = 1.3 * rng.standard_normal((350, 24)) + 0.4
    cases["random"] = (a, b)
    a = rng.standard_normal((30, 64))
    b = rng.standard_normal((40, 64)) + 0.2
    cases["wide"] = (a, b)
    base = rng.standard_normal((40, 10))
    a = np.concatenate([base, base[rng.choice(40, 20)]])
    b = np.concatenate([rng.standard_normal((40, 10)), a[rng.choice(60, 10, replace=False)]])
    cases["duplicates"] = (a, b)
    g = np.stack(np.meshgrid(*[np.arange(5)] * 3, indexing="ij"), -1).reshape(-1, 3)
    a = g.astype(np.float64) + 1.0
    b = np.concatenate([g[::2], g[1::3] + 0.5]).astype(np.float64) + 1.0
    cases["grid"] = (a, b)

    out = {"cases": {}}
    for name, (a, b) in cases.items():
        a = a.astype(np.float32)
        b = b.astype(np.float32)
        np.save(OUT / f"dist_{name}_a.npy", a)
        np.save(OUT / f"dist_{name}_b.npy", b)
        m = min(a.shape[0], b.shape[0], 25)
        out["cases"][name] = {
            "a": f"metrics/dist_{name}_a.npy", "b": f"metrics/dist_{name}_b.npy",
            "fid": fid_reference(a, b),
            "kid_full": mmd2(a, b),
            "kid": kid_reference(a, b, 7, m, 3),
            "vendi_a": vendi_reference(a), "vendi_b": vendi_reference(b),
        }
        print(name, out["cases"][name]["fid"]["fid"], out["cases"][name]["fid"]["eigh_fid"],
              out["cases"][name]["fid"]["sqrtm_fid"],
              out["cases"][name]["kid"]["kid"], out["cases"][name]["vendi_a"]["q1"])
    (OUT / "distribution.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
