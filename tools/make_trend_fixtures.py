#!/usr/bin/python3
"""Reference for quadratic trend fits and k-sigma covariance ellipses (paper 001,
Hausladen et al. Fig. 3, 4, S.2, S.3; docs/methods.md#trends), computed
independently of vlbias's QR path.

Polynomial fits: coefficients from numpy.polyfit(x, y, degree) (reversed to
ascending order), standard errors from statsmodels OLS on the raw Vandermonde
design (bse = sqrt(diag(sigma^2 (X'X)^-1)), sigma^2 = RSS / (n - degree - 1)),
R^2 = 1 - RSS / TSS. Every fit is also computed in exact rational arithmetic
(fractions.Fraction normal equations, rounded once to double at the end); the
stored values are the exact ones, and the script asserts that numpy.polyfit and
statsmodels agree with them (to 1e-8 relative: on the clustered near-degenerate
case numpy's raw-basis lstsq itself is only good to ~3e-10).

Ellipses: centre = means, covariance = numpy.cov (n-1), eigen-decomposition by
numpy.linalg.eigh; semi-axes k sqrt(eigenvalues), major first; angle of the
major eigenvector, atan2(v_y, v_x) folded into (-pi/2, pi/2]; 0 for a circle.

Grouped table (race x gender, age levels, dimensions agency+ / agency-): the
CSV text and the expected trend fits (to the per-age means and to every image)
and ellipses (one point per age mean, and one per image), computed with pandas
groupby. Missing race or age cells are skipped as vlbias documents.

Writes tests/fixtures/stats/trends.json.
Run: /usr/bin/python3 tools/make_trend_fixtures.py
"""
import io
import json
import math
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import statsmodels.api as sm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "stats", "trends.json")


def num(v):
    v = float(v)
    return None if not math.isfinite(v) else v


def exact_fit(x, y, degree):
    """Exact least squares via the normal equations in rationals: (b, se, r2, sd)."""
    p = degree + 1
    xs = [Fraction(float(v)) for v in x]
    ys = [Fraction(float(v)) for v in y]
    n = len(xs)
    a = [[sum(xi ** (j + k) for xi in xs) for k in range(p)] for j in range(p)]
    rhs = [sum(yi * xi ** j for xi, yi in zip(xs, ys)) for j in range(p)]
    # Gauss-Jordan inverse of a (exact).
    m = [row[:] + [Fraction(int(i == j)) for j in range(p)] for i, row in enumerate(a)]
    for col in range(p):
        piv = next(r for r in range(col, p) if m[r][col] != 0)
        m[col], m[piv] = m[piv], m[col]
        f = m[col][col]
        m[col] = [v / f for v in m[col]]
        for r in range(p):
            if r != col and m[r][col] != 0:
                g = m[r][col]
                m[r] = [vr - g * vc for vr, vc in zip(m[r], m[col])]
    inv = [row[p:] for row in m]
    b = [sum(inv[j][k] * rhs[k] for k in range(p)) for j in range(p)]
    res = [yi - sum(b[k] * xi ** k for k in range(p)) for xi, yi in zip(xs, ys)]
    rss = sum(r * r for r in res)
    ybar = sum(ys) / n
    tss = sum((yi - ybar) ** 2 for yi in ys)
    r2 = float(1 - rss / tss) if tss != 0 else math.nan
    if n > p:
        s2 = rss / (n - p)
        se = [math.sqrt(float(s2 * inv[k][k])) for k in range(p)]
        sd = math.sqrt(float(s2))
    else:
        se = [math.nan] * p
        sd = math.nan
    return [float(v) for v in b], se, r2, sd


def close(a, b, rel):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(1e-13, rel * abs(b))


def poly_reference(x, y, degree):
    numpy_rel = 1e-8
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    p = degree + 1
    n = len(x)
    coef = np.polyfit(x, y, degree)[::-1]
    design = np.vander(x, p, increasing=True)
    if n > p:
        ols = sm.OLS(y, design).fit()
        se = [float(v) for v in ols.bse]
        sd = float(math.sqrt(ols.ssr / (n - p)))
    else:
        se = [math.nan] * p
        sd = math.nan
    fitted = design @ coef
    rss = float(np.sum((y - fitted) ** 2))
    tss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - rss / tss if tss > 0 else math.nan
    # Cross-check numpy / statsmodels against exact rational arithmetic; store the
    # exact values.
    eb, ese, er2, esd = exact_fit(x, y, degree)
    for a, b in zip(coef, eb):
        assert close(float(a), b, numpy_rel), (a, b)
    for a, b in zip(se, ese):
        assert close(a, b, numpy_rel), (a, b)
    assert close(r2, er2, numpy_rel) or abs(r2 - er2) < 1e-12, (r2, er2)
    assert close(sd, esd, numpy_rel), (sd, esd)
    return {
        "coefficients": [num(v) for v in eb],
        "standard_errors": [num(v) for v in ese],
        "r_squared": num(er2),
        "residual_sd": num(esd),
        "n": n,
    }


def ellipse_reference(x, y, k):
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    n = len(x)
    out = {"k_sigma": k, "n": n}
    if n < 2:
        out.update(center=[num(x.mean()) if n else None, num(y.mean()) if n else None],
                   covariance=None, semi_major=None, semi_minor=None, angle=None)
        return out
    cov = np.cov(x, y)
    w, v = np.linalg.eigh(cov)  # ascending
    major = v[:, 1]
    if cov[0, 1] == 0 and cov[0, 0] == cov[1, 1]:
        angle = 0.0
    else:
        angle = math.atan2(major[1], major[0])
        while angle <= -math.pi / 2:
            angle += math.pi
        while angle > math.pi / 2:
            angle -= math.pi
    out.update(center=[float(x.mean()), float(y.mean())],
               covariance=[[float(cov[0, 0]), float(cov[0, 1])],
                           [float(cov[1, 0]), float(cov[1, 1])]],
               semi_major=k * math.sqrt(max(w[1], 0.0)),
               semi_minor=k * math.sqrt(max(w[0], 0.0)),
               angle=angle)
    return out


def poly_cases(rng):
    cases = []

    def add(name, x, y, degree=2):
        ref = poly_reference(x, y, degree)
        ref.update(name=name, x=[float(v) for v in x], y=[float(v) for v in y], degree=degree)
        cases.append(ref)

    x = np.arange(10.0)
    add("small", x, 0.3 - 0.2 * x + 0.05 * x ** 2 + rng.normal(0, 0.4, x.size))
    ages = np.arange(20.0, 81.0, 5.0)
    add("ages_20_80", ages,
        0.02 - 4e-4 * ages + 5e-6 * ages ** 2 + rng.normal(0, 2e-3, ages.size))
    ages_rep = np.repeat(np.array([20.0, 35.0, 50.0, 65.0, 80.0]), 4)
    add("ages_images", ages_rep, 0.01 + 1e-4 * ages_rep + rng.normal(0, 5e-3, ages_rep.size))
    # Near-degenerate: exactly three distinct, clustered x values with replicates.
    xn = np.array([10.0, 10.0, 10.001, 10.001, 10.001, 10.5, 10.5])
    add("near_degenerate", xn, np.array([1.0, 1.1, 1.05, 0.98, 1.02, 2.0, 2.2]))
    # Far from the origin: a centred design keeps the QR well conditioned. (At 1e5
    # numpy.polyfit is off by ~1e-7 and statsmodels' pinv drops a singular value,
    # so the cross-check could not hold there.)
    xf = 1000.0 + np.arange(10.0)
    add("offset_1000", xf, 0.5 + 0.1 * (xf - 1004.0) - 0.02 * (xf - 1004.0) ** 2
        + rng.normal(0, 0.05, xf.size))
    # n = degree + 1: exact interpolation, no residual degrees of freedom.
    add("exact_three", [1.0, 2.0, 4.0], [0.5, -1.0, 3.25])
    add("linear", np.arange(1.0, 8.0), 2.0 + 0.5 * np.arange(1.0, 8.0) + rng.normal(0, 0.1, 7),
        degree=1)
    xc = np.linspace(-3.0, 5.0, 12)
    add("cubic", xc, 1 - xc + 0.2 * xc ** 3 + rng.normal(0, 0.3, xc.size), degree=3)
    return cases


def ellipse_cases(rng):
    cases = []

    def add(name, x, y, k=2.0):
        ref = ellipse_reference(x, y, k)
        ref.update(name=name, x=[float(v) for v in x], y=[float(v) for v in y])
        cases.append(ref)

    z = rng.normal(size=(2, 15))
    add("positive", z[0], 0.8 * z[0] + 0.3 * z[1])
    add("negative_k3", 0.01 * z[0], -0.02 * z[0] + 0.004 * z[1], k=3.0)
    add("circle", [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, -1.0])
    add("tall_axis_aligned", [1.0, -1.0, 1.0, -1.0], [3.0, 3.0, -3.0, -3.0])
    add("wide_axis_aligned", [3.0, 3.0, -3.0, -3.0], [1.0, -1.0, 1.0, -1.0])
    return cases


def grouped(rng):
    lines = ["race,gender,age,agency+,agency-"]
    levels = {
        ("Black", "Female"): [20, 30, 40, 50, 60],
        ("Black", "Male"): [20, 30, 40, 50],
        ("White", "Female"): [20, 40, 60],
        ("White", "Male"): [30, 50],  # two levels: the quadratic is undetermined
    }
    for (race, gender), ages in levels.items():
        for age in ages:
            for _ in range(int(rng.integers(2, 5))):
                plus = round(0.01 + 2e-4 * age - 3e-6 * age ** 2 + rng.normal(0, 0.01), 6)
                minus = round(-0.3 * plus + rng.normal(0, 0.01), 6)
                lines.append(f"{race},{gender},{age},{plus!r},{minus!r}")
    # Skipped by the fits: a missing race, a missing age (kept by image ellipses).
    lines.append(",Female,30,0.5,0.5")
    lines.append("Black,Female,,0.011,-0.004")
    text = "\n".join(lines) + "\n"
    df = pd.read_csv(io.StringIO(text))
    dims = ["agency+", "agency-"]
    keyed = df.dropna(subset=["race", "gender"])
    fits = {"means": [], "images": []}
    ellipses = {"age": [], "images": []}
    for (race, gender), g in keyed.groupby(["race", "gender"], sort=True):
        with_age = g.dropna(subset=["age"])
        for dim in dims:
            per = with_age.groupby("age")[dim].agg(["mean", "size"]).sort_index()
            base = {
                "key": [race, gender],
                "dimension": dim,
                "levels": [float(v) for v in per.index],
                "level_means": [float(v) for v in per["mean"]],
                "level_n": [int(v) for v in per["size"]],
            }
            for mode in ("means", "images"):
                if mode == "means":
                    x, y = per.index.to_numpy(float), per["mean"].to_numpy()
                else:
                    x, y = with_age["age"].to_numpy(float), with_age[dim].to_numpy()
                entry = dict(base)
                if len(np.unique(x)) < 3:
                    entry.update(coefficients=[None] * 3, standard_errors=[None] * 3,
                                 r_squared=None, residual_sd=None, n=len(x), underdetermined=True)
                else:
                    entry.update(poly_reference(x, y, 2), underdetermined=False)
                fits[mode].append(entry)
        per_age = with_age.groupby("age")[dims].mean()
        e = ellipse_reference(per_age["agency+"], per_age["agency-"], 2.0)
        e.update(key=[race, gender], x_dimension="agency+", y_dimension="agency-")
        ellipses["age"].append(e)
        e = ellipse_reference(g["agency+"], g["agency-"], 2.0)
        e.update(key=[race, gender], x_dimension="agency+", y_dimension="agency-")
        ellipses["images"].append(e)
    return {"csv": text, "dimensions": dims, "fits": fits, "ellipses": ellipses}


def main():
    rng = np.random.default_rng(20260001)
    out = {
        "polynomial": poly_cases(rng),
        "ellipse": ellipse_cases(rng),
        "grouped": grouped(rng),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, allow_nan=False)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
