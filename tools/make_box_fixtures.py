#!/usr/bin/python3
"""Writes tests/fixtures/report/box_stats.json: box statistics of the report's box plots
(src/report/svg_chart_stats.cpp) from the references they claim to match: quartiles and median
by numpy.percentile (default method, "linear"), whiskers and fliers by matplotlib's
cbook.boxplot_stats(whis=1.5), the statistics behind plt.boxplot."""
import json
from pathlib import Path

import numpy as np
from matplotlib import cbook


def cases():
    rng = np.random.default_rng(25)
    yield "normal_40", rng.normal(0.8, 0.05, 40)
    yield "with_outliers", np.concatenate([rng.normal(0.5, 0.02, 25), [0.1, 0.95, 0.97]])
    yield "one_value", np.array([0.42])
    yield "two_values", np.array([0.3, 0.7])
    yield "ties", np.array([1.0, 1.0, 1.0, 2.0, 2.0, 9.0])
    yield "negative_skewed", -np.exp(rng.normal(0, 1, 17))
    yield "five_objects", np.array([0.71, 0.85, 0.81, 0.74, 0.79])


def main():
    out = []
    for name, values in cases():
        stats = cbook.boxplot_stats(values, whis=1.5)[0]
        q25, median, q75 = np.percentile(values, [25, 50, 75])
        out.append({
            "name": name,
            "values": values.tolist(),
            "q25": float(q25),
            "median": float(median),
            "q75": float(q75),
            "mean": float(np.mean(values)),
            "whisker_low": float(stats["whislo"]),
            "whisker_high": float(stats["whishi"]),
            "fliers": sorted(float(v) for v in stats["fliers"]),
        })
    path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "report" / "box_stats.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(path, len(out), "cases")


if __name__ == "__main__":
    main()
