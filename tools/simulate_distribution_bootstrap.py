#!/usr/bin/python3
"""Why the distribution bootstraps recentre their replicates (docs/methods.md#fid): coverage of
the plain and the recentred percentile intervals of FID, KID (all-rows unbiased MMD^2) and Vendi
over the generated rows, the real set fixed, on simulated data (numpy/scipy only; the formulas
of tools/make_distribution_bootstrap_fixtures.py).

The target is what the interval claims to cover: the statistic's mean over fresh generated sets
of the same size n against the same real set (estimated from `--truth` fresh draws). For each of
`--sims` generated sets, B resamples give the plain percentile interval and the recentred one
(replicates + estimate - median); the script prints how often each covers the target.
Run: /usr/bin/python3 tools/simulate_distribution_bootstrap.py [--sims 200 --resamples 200]
"""
import argparse

import numpy as np
import scipy.linalg


def fid(real_mu, real_cov, g):
    mu, cov = g.mean(axis=0), np.cov(g, rowvar=False)
    root = scipy.linalg.sqrtm(real_cov @ cov, disp=False)[0].real
    return float(((real_mu - mu) ** 2).sum() + np.trace(real_cov) + np.trace(cov) - 2 * np.trace(root))


def kid(kxx_term, real, g):
    d = g.shape[1]
    kyy = (g @ g.T / d + 1) ** 3
    kxy = (real @ g.T / d + 1) ** 3
    n = g.shape[0]
    return float(kxx_term + (kyy.sum() - np.trace(kyy)) / (n * (n - 1)) - 2 * kxy.mean())


def vendi(g):
    u = g / np.linalg.norm(g, axis=1, keepdims=True)
    w = np.linalg.eigvalsh(u @ u.T / g.shape[0])
    p = w[w > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--truth", type=int, default=2000)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--dim", type=int, default=4)
    a = ap.parse_args()
    rng = np.random.default_rng(2024)
    d, n = a.dim, a.n
    real = rng.standard_normal((500, d))
    real_mu, real_cov = real.mean(axis=0), np.cov(real, rowvar=False)
    kxx = (real @ real.T / d + 1) ** 3
    kxx_term = (kxx.sum() - np.trace(kxx)) / (500 * 499)
    scale = np.linspace(0.8, 1.6, d)

    def draw():
        return rng.standard_normal((n, d)) * scale + 0.3 + 1.0  # offset: Vendi's cosines vary

    stats = {"fid": lambda g: fid(real_mu, real_cov, g), "kid": lambda g: kid(kxx_term, real, g),
             "vendi": vendi}
    truth = {k: np.mean([f(draw()) for _ in range(a.truth)]) for k, f in stats.items()}
    hits = {k: {"plain": 0, "recentred": 0} for k in stats}
    for _ in range(a.sims):
        g = draw()
        for k, f in stats.items():
            est = f(g)
            reps = np.array([f(g[rng.integers(0, n, n)]) for _ in range(a.resamples)])
            lo, hi = np.percentile(reps, [2.5, 97.5])
            hits[k]["plain"] += lo <= truth[k] <= hi
            shift = est - np.median(reps)
            hits[k]["recentred"] += lo + shift <= truth[k] <= hi + shift
    for k in stats:
        print(f"{k}: target {truth[k]:.4g}; 95% intervals cover it: plain "
              f"{hits[k]['plain'] / a.sims:.1%}, recentred {hits[k]['recentred'] / a.sims:.1%}")


if __name__ == "__main__":
    main()
