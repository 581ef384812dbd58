#!/usr/bin/python3
"""Why the geo-diversity audit recentres its coverage bootstrap (include/vlbias/audits/geo_audit.h).

Coverage is a function of the *set* of distinct generated images: the share of real balls
holding at least one of them. A bootstrap resample drawn with replacement holds only about
63% distinct images, so resampled coverage is biased low, far enough that the plain
percentile interval often misses the estimate itself. Its spread, though, matches the
sampling spread of a fresh generated set. This script measures both on Gaussian data (real
and generated sets drawn from nearly the same distribution, k = 3, 200 + 200 points, d = 16),
and the calibration of three 95% intervals over repeated generated sets:

  percentile    the plain percentile interval of the replicates;
  recentred     the replicates shifted by (estimate - median of replicates), then the
                percentile interval (what vlbias reports);
  jackknife     estimate +- 1.96 delete-one jackknife standard error.

Precision (a mean over generated images) needs no correction; its line is printed for
comparison. Run: /usr/bin/python3 tools/simulate_coverage_bootstrap.py
Measured 2026-11-24 (numpy 1.24, seed 1): see the printout; the note of issue 5 quotes it.
"""
import numpy as np


def main():
    rng = np.random.default_rng(1)
    d, nr, nf, k, boot, trials = 16, 200, 200, 3, 300, 200
    real = rng.standard_normal((nr, d))
    dist = ((real[:, None, :] - real[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(dist, np.inf)
    radius = np.partition(dist, k - 1, axis=1)[:, k - 1]

    def inside(fake):
        return ((real[:, None, :] - fake[None, :, :]) ** 2).sum(-1) < radius[:, None]

    def draw():
        return rng.standard_normal((nf, d)) + 0.1

    truth = np.array([inside(draw()).any(axis=1).mean() for _ in range(1000)])
    truth_p = np.array([inside(draw()).any(axis=0).mean() for _ in range(400)])
    target, target_p = truth.mean(), truth_p.mean()
    hits = {"percentile": 0, "recentred": 0, "jackknife": 0, "precision": 0}
    bias, spread = [], []
    for _ in range(trials):
        ins = inside(draw())
        c = ins.any(axis=1).mean()
        p = ins.any(axis=0).mean()
        reps = np.empty(boot)
        reps_p = np.empty(boot)
        for b in range(boot):
            sub = ins[:, rng.integers(0, nf, nf)]
            reps[b] = sub.any(axis=1).mean()
            reps_p[b] = sub.any(axis=0).mean()
        lo, hi = np.percentile(reps, [2.5, 97.5])
        hits["percentile"] += lo <= target <= hi
        shifted = reps + (c - np.median(reps))
        lo, hi = np.percentile(shifted, [2.5, 97.5])
        hits["recentred"] += lo <= target <= hi
        sole = ins.sum(axis=1) == 1
        loo = c - (ins & sole[:, None]).sum(axis=0) / nr
        se = np.sqrt((nf - 1) / nf * ((loo - loo.mean()) ** 2).sum())
        hits["jackknife"] += c - 1.96 * se <= target <= c + 1.96 * se
        lo, hi = np.percentile(reps_p, [2.5, 97.5])
        hits["precision"] += lo <= target_p <= hi
        bias.append(np.median(reps) - c)
        spread.append(reps.std())
    print(f"coverage: mean over fresh sets {target:.4f}, sd {truth.std():.4f}")
    print(f"bootstrap: median replicate - estimate {np.mean(bias):+.4f}, "
          f"replicate sd {np.mean(spread):.4f}")
    for name, h in hits.items():
        print(f"95% interval {name:10s} contains the target in {h / trials:.3f} of {trials} sets")


if __name__ == "__main__":
    main()
