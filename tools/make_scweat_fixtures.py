#!/usr/bin/python3
"""Reference values for SC-WEAT (docs/methods.md#sc-weat; Caliskan et al. 2017 WEAT, Hausladen et al.
single-category WEAT on images), read by tests/metrics/association_test.cpp and
tests/cli/metric_scweat_test.cpp.

Writes random float32 embeddings as .npy files and tests/fixtures/metrics/scweat.json:

  small   3 targets, |A| = 5, |B| = 4, d = 8. Per-target s_t and es_t, their means, the
          exact permutation p-value (every one of C(9, 5) = 126 relabellings of A u B,
          itertools.combinations) and the exact sign-flip p-value (all 2^3 sign vectors
          of {s_t}, itertools.product).
  large   20 targets, |A| = 30, |B| = 25, d = 16, for the Monte Carlo paths: the
          permutation p estimated with 200,000 numpy relabellings, and the exact
          sign-flip p over all 2^20 sign vectors.
  empty   scweat_empty.npy, shape (0, 8): an empty image set (an input error).

Everything is computed in float64 from the same float32 data, with true cosines (rows
normalised in float64). "At least as extreme" uses the relative tolerance of stats.h:
|T*| >= |T| (1 - 1e-12); exact p = exceed / count (the observed relabelling included).

Needs Debian's python3-numpy (numpy 1.24). Run: /usr/bin/python3 tools/make_scweat_fixtures.py
"""
import itertools
import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics"


def unit(m):
    m = m.astype(np.float64)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def scweat(t, a, b):
    ca = unit(t) @ unit(a).T
    cb = unit(t) @ unit(b).T
    s = ca.mean(axis=1) - cb.mean(axis=1)
    sd = np.concatenate([ca, cb], axis=1).std(axis=1, ddof=1)
    return s, s / sd, sd, np.concatenate([ca, cb], axis=1)


def extreme(stats, observed):
    return np.abs(stats) >= abs(observed) - abs(observed) * 1e-12


def exact_permutation_p(c_all, sd, n_a):
    w = (c_all / sd[:, None]).mean(axis=0)
    n = w.size
    observed = w[:n_a].mean() - w[n_a:].mean()
    stats = []
    for idx in itertools.combinations(range(n), n_a):
        mask = np.zeros(n, dtype=bool)
        mask[list(idx)] = True
        stats.append(w[mask].mean() - w[~mask].mean())
    stats = np.array(stats)
    return int(extreme(stats, observed).sum()), len(stats)


def sign_flip_stats(s):
    n = s.size
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=n)))
    return (signs * s[None, :]).mean(axis=1)


def mc_permutation_p(c_all, sd, n_a, draws, rng):
    w = (c_all / sd[:, None]).mean(axis=0)
    n = w.size
    observed = w[:n_a].mean() - w[n_a:].mean()
    total = w.sum()
    exceed = 0
    for chunk in range(draws // 10000):
        perm = np.argsort(rng.random((10000, n)), axis=1)[:, :n_a]
        sa = w[perm].sum(axis=1)
        stats = sa / n_a - (total - sa) / (n - n_a)
        exceed += int(extreme(stats, observed).sum())
    return (1 + exceed) / (1 + draws)


def case(name, rng, n_t, n_a, n_b, d, shift):
    t = rng.standard_normal((n_t, d)).astype(np.float32)
    a = (rng.standard_normal((n_a, d)) + shift).astype(np.float32)
    b = rng.standard_normal((n_b, d)).astype(np.float32)
    for suffix, m in (("targets", t), ("a", a), ("b", b)):
        np.save(OUT / f"scweat_{name}_{suffix}.npy", m)
    s, es, sd, c_all = scweat(t, a, b)
    return t, a, b, s, es, sd, c_all


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261122)
    result = {}
    np.save(OUT / "scweat_empty.npy", np.zeros((0, 8), dtype=np.float32))

    _, _, _, s, es, sd, c_all = case("small", rng, 3, 5, 4, 8, 0.3)
    exceed, count = exact_permutation_p(c_all, sd, 5)
    flips = sign_flip_stats(s)
    flip_exceed = int(extreme(flips, s.mean()).sum())
    result["small"] = {
        "difference": s.tolist(),
        "effect_size": es.tolist(),
        "mean_difference": float(s.mean()),
        "mean_effect_size": float(es.mean()),
        "permutation_exceed": exceed,
        "permutation_count": count,
        "permutation_p": exceed / count,
        "sign_flip_exceed": flip_exceed,
        "sign_flip_count": int(flips.size),
        "sign_flip_p": flip_exceed / flips.size,
    }

    _, _, _, s, es, sd, c_all = case("large", rng, 20, 30, 25, 16, 0.08)
    draws = 200000
    flips = sign_flip_stats(s)
    result["large"] = {
        "difference": s.tolist(),
        "effect_size": es.tolist(),
        "mean_difference": float(s.mean()),
        "mean_effect_size": float(es.mean()),
        "permutation_p_mc": mc_permutation_p(c_all, sd, 30, draws, rng),
        "permutation_p_mc_draws": draws,
        "sign_flip_p": float(extreme(flips, s.mean()).sum() / flips.size),
        "sign_flip_count": int(flips.size),
    }
    with open(OUT / "scweat.json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
