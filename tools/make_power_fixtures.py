#!/usr/bin/python3
"""Reference power values for include/vlbias/stats/power.h -> tests/fixtures/stats/power.json.

For each design: the analytic power (scipy.stats.nct for Student, Welch and the
group-vs-others contrast, ncf for one-way ANOVA, ncx2 for the chi-square test of equal rates,
all at alpha / m) and an independent Monte Carlo power with a large R (numpy draws, scipy's
ttest_ind / f_oneway and a closed-form 2 x k Pearson chi-square, Holm over the family with
the other m - 1 tests drawn as uniform nulls). Also the smallest n per group and the minimum
detectable effect of a Student design from the noncentral t (exact for equal variances).

Friedman (the LVLM audit's set-blocked group tests): B blocks x k groups, x = a_s + mu_g +
u_cg + e with clusters of m sets averaged per group (power.h's set-blocked design); the Monte
Carlo ranks within blocks and applies scipy.stats.friedmanchisquare's statistic (checked on
the first replicates against scipy itself); the analytic value is the noncentral chi-square
with Friedman's efficiency 3k / (pi (k + 1)) against the F test.

Run: /usr/bin/python3 tools/make_power_fixtures.py
"""
import json
import os
import warnings

import numpy as np
from scipy import optimize, stats

R = 200_000
# scipy 1.10's nct warns (and clips) at df = 2 while the n search starts there.
warnings.filterwarnings("ignore", category=RuntimeWarning)
rng = np.random.default_rng(20261126)


def analytic(d, effect):
    k = len(d["n"])
    n = np.array(d["n"], float)
    sd = np.array(d.get("sd", [0.0] * k), float)
    a = d["alpha"] / (1 if d["correction"] == "none" else d["family"])
    t = d["target"]
    mu = np.zeros(k)
    mu[t] = effect
    if d["test"] == "friedman":
        m = max(d.get("sets_per_cluster", 0), 1)
        sb2 = d.get("cluster_sd", 0.0) ** 2 + sd[0] ** 2 / m
        are = 3 * k / (np.pi * (k + 1))
        lam = are * n[0] * effect**2 * (1 - 1 / k) / sb2
        crit = stats.chi2.isf(a, k - 1)
        return float(stats.ncx2.sf(crit, k - 1, lam)) if lam > 0 else a
    if d["test"] in ("anova", "chi_square"):
        mbar = (n * mu).sum() / n.sum()
        lam = (n * (mu - mbar) ** 2).sum()
        if d["test"] == "chi_square":
            rbar = d["base_rate"] + mbar
            lam /= rbar * (1 - rbar)
            crit = stats.chi2.isf(a, k - 1)
            return float(stats.ncx2.sf(crit, k - 1, lam)) if lam > 0 else a
        df2 = n.sum() - k
        s2 = ((n - 1) * sd**2).sum() / df2
        crit = stats.f.isf(a, k - 1, df2)
        return float(stats.ncf.sf(crit, k - 1, df2, lam / s2)) if lam > 0 else a
    if d["test"] == "student":
        sp2 = ((n - 1) * sd**2).sum() / (n.sum() - 2)
        se2 = sp2 * (1 / n[0] + 1 / n[1])
        df = n.sum() - 2
    else:
        w = np.full(k, 1.0 / (k - 1))
        w[t] = 1.0
        v = w**2 * sd**2 / n
        se2 = v.sum()
        df = se2**2 / (v**2 / (n - 1)).sum()
    crit = stats.t.isf(a / 2, df)
    ncp = effect / np.sqrt(se2)
    return float(stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp))


def holm_rejects_first(p):
    """Rows of p (R x m); whether Holm at alpha rejects column 0."""
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    sp = np.take_along_axis(p, order, axis=1)
    ok = sp <= ALPHA / (m - np.arange(m))
    # rejected ranks: those before the first failure
    first_fail = np.where(ok.all(axis=1), m, np.argmin(ok, axis=1))
    rank0 = np.argmax(order == 0, axis=1)
    return rank0 < first_fail


ALPHA = 0.05


def contrast_p(samples, t):
    k = len(samples)
    means = np.stack([s.mean(axis=1) for s in samples], axis=1)
    var = np.stack([s.var(axis=1, ddof=1) for s in samples], axis=1)
    n = np.array([s.shape[1] for s in samples], float)
    w = np.full(k, -1.0 / (k - 1))
    w[t] = 1.0
    est = (means * w).sum(axis=1)
    v = w**2 * var / n
    se2 = v.sum(axis=1)
    df = se2**2 / (v**2 / (n - 1)).sum(axis=1)
    return 2 * stats.t.sf(np.abs(est / np.sqrt(se2)), df)


def friedman_p(d, effect):
    """Friedman p of R simulated set-blocked studies (power.h's design)."""
    k, blocks, t = len(d["n"]), d["n"][0], d["target"]
    m = max(d.get("sets_per_cluster", 0), 1)
    mu = np.zeros(k)
    mu[t] = effect
    x = np.empty((R, blocks, k))
    for lo in range(0, R, 20000):  # in chunks: R x blocks x m x k draws
        r = min(R, lo + 20000) - lo
        a = rng.normal(0, d.get("set_sd", 0.0), (r, blocks, m, 1))
        u = rng.normal(0, d.get("cluster_sd", 0.0), (r, blocks, 1, k)) if m > 1 else 0.0
        e = rng.normal(0, d["sd"][0], (r, blocks, m, k))
        x[lo : lo + r] = (mu + u + a + e).mean(axis=2)
    ranks = stats.rankdata(x, axis=2)
    rs = ranks.sum(axis=1)
    chi = 12.0 / (blocks * k * (k + 1)) * (rs**2).sum(axis=1) - 3 * blocks * (k + 1)
    for i in range(3):  # the same statistic as scipy's
        ref = stats.friedmanchisquare(*x[i].T).statistic
        assert abs(ref - chi[i]) < 1e-9, (ref, chi[i])
    return stats.chi2.sf(chi, k - 1)


def monte_carlo(d, effect):
    k = len(d["n"])
    t = d["target"]
    if d["test"] == "friedman":
        p = friedman_p(d, effect)
    elif d["test"] == "chi_square":
        x = np.stack(
            [rng.binomial(d["n"][g], d["base_rate"] + (effect if g == t else 0), R) for g in range(k)],
            axis=1,
        ).astype(float)
        n = np.array(d["n"], float)
        tot = x.sum(axis=1, keepdims=True)
        e1 = tot * n / n.sum()
        e0 = (n.sum() - tot) * n / n.sum()
        chi = ((x - e1) ** 2 / e1 + ((n - x) - e0) ** 2 / e0).sum(axis=1)
        p = stats.chi2.sf(chi, k - 1)
    else:
        samples = [
            rng.normal(effect if g == t else 0.0, d["sd"][g], (R, d["n"][g])) for g in range(k)
        ]
        if d["test"] == "welch":
            p = stats.ttest_ind(samples[0], samples[1], axis=1, equal_var=False).pvalue
        elif d["test"] == "student":
            p = stats.ttest_ind(samples[0], samples[1], axis=1, equal_var=True).pvalue
        elif d["test"] == "anova":
            p = stats.f_oneway(*samples, axis=1).pvalue
        else:
            p = contrast_p(samples, t)
    m = d["family"]
    if m == 1 or d["correction"] == "none":
        rej = p <= d["alpha"]
    else:
        fam = np.concatenate([p[:, None], rng.uniform(size=(R, m - 1))], axis=1)
        rej = holm_rejects_first(fam)
    pw = float(rej.mean())
    return pw, float(np.sqrt(pw * (1 - pw) / R))


def design(test, n, sd=None, target=0, family=1, base_rate=0.0):
    d = {"test": test, "n": n, "target": target, "family": family, "correction": "holm",
         "alpha": ALPHA, "base_rate": base_rate}
    if sd is not None:
        d["sd"] = sd
    return d


def main():
    cases = [
        (design("welch", [20, 30], [1.0, 2.0]), 0.8),
        (design("welch", [20, 30], [1.0, 2.0], target=1, family=5), 1.5),
        (design("student", [15, 15], [1.0, 1.0]), 1.0),
        (design("anova", [10, 10, 10, 10], [1.0, 1.0, 1.0, 1.0], target=2), 1.0),
        (design("contrast", [12, 15, 20], [1.0, 1.5, 2.0], target=1, family=6), 1.6),
        (design("chi_square", [200, 200], base_rate=0.2, target=1), 0.1),
        (design("chi_square", [100, 150, 120], base_rate=0.3, family=3), 0.15),
        (dict(design("friedman", [20] * 4, [1.0] * 4), set_sd=2.0), 0.8),
        (dict(design("friedman", [12] * 6, [0.5] * 6, target=2, family=4), set_sd=0.0), 0.6),
        (dict(design("friedman", [10] * 4, [1.0] * 4, family=2), sets_per_cluster=3,
              set_sd=1.0, cluster_sd=0.4), 1.0),
    ]
    out = {"replicates": R, "cases": []}
    for d, effect in cases:
        pw, se = monte_carlo(d, effect)
        out["cases"].append(dict(d, effect=effect, analytic=analytic(d, effect),
                                 monte_carlo=pw, monte_carlo_se=se))
    # Smallest n per group and the MDE of a Student design, from the exact noncentral t.
    st = design("student", [15, 15], [1.0, 1.0])
    n = 2
    while analytic(dict(st, n=[n, n]), 1.0) < 0.8:
        n += 1
    out["student_sample_size"] = {"design": st, "effect": 1.0, "power": 0.8, "n_per_group": n}
    mde = optimize.brentq(lambda e: analytic(st, e) - 0.8, 0.1, 10, xtol=1e-12)
    out["student_mde"] = {"design": st, "power": 0.8, "effect": mde}
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "stats", "power.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
