"""Reference picks of the report's exemplar grids (src/audits/exemplars.h), independent of the
C++: each cell's seeded sample drawn with the Python port of vlbias's random streams
(tools/vlbias_rng.py: Rng(derive_seed(seed, cell), 0), the first n of a forward Fisher-Yates
shuffle of the cell's rows) and its lowest / highest finite scores (ties: the earlier row first),
on cells with ties, missing scores and a cell smaller than n.

Writes tests/fixtures/audits/exemplars.json. Run: /usr/bin/python3 tools/make_exemplar_fixtures.py
"""
import json
import math
import os

from vlbias_rng import Rng, derive_seed, partial_shuffle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "audits", "exemplars.json")


def sample(rows, n, seed):
    rng = Rng(seed, 0)
    m = min(n, len(rows))
    return [rows[i] for i in partial_shuffle(rng, len(rows), m)]


def extreme(rows, scores, n, highest):
    scored = [r for r in rows if scores[r] is not None and math.isfinite(scores[r])]
    # Python's sort is stable: ties keep the cells' row order.
    scored.sort(key=lambda r: -scores[r] if highest else scores[r])
    return scored[:n]


def main():
    # 3 cells over 20 images: 10, 8 and 2 rows (the last smaller than n), rows not contiguous.
    cells = [[0, 3, 4, 7, 8, 11, 12, 15, 16, 19], [1, 2, 5, 6, 9, 10, 13, 14], [17, 18]]
    scores = [0.52, 0.10, 0.33, 0.91, None, 0.45, 0.33, 0.07, 0.91, 0.60,
              0.28, 0.15, 0.77, None, 0.33, 0.02, 0.64, 0.50, None, 0.12]
    cases = []
    for seed in (7, 8, 2**63 + 5):
        for n in (1, 3, 12):
            cases.append({
                "seed": seed, "n": n,
                "sample": [sample(c, n, derive_seed(seed, i)) for i, c in enumerate(cells)],
                "lowest": [extreme(c, scores, n, False) for c in cells],
                "highest": [extreme(c, scores, n, True) for c in cells],
            })
    with open(OUT, "w") as f:
        json.dump({"cells": cells, "scores": scores, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
