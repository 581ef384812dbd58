#!/usr/bin/python3
"""Reference for the social-perception audit's prompt-geometry analysis (paper 001 App. D,
Fig. S.6, Table S.5; src/audits/dual_encoder/dual_encoder_audit_geometry.cpp) on the bundled example study
(examples/social_perception): numpy, scipy and scikit-learn, independent of vlbias.

Per dimension with both valences (attribute rows of the manifest): per word pair, the mean
over templates of the cosine between the two words' prompts in the same template; within the
positive valence (unordered pairs), within the negative, and across. Tests:
scipy.stats.ttest_ind(within, cross, equal_var=False, alternative="greater"). PCA:
sklearn.decomposition.PCA(n_components=3, svd_solver="full") of the attribute prompts' embeddings
in manifest order.

Writes tests/fixtures/audits/prompt_geometry/expected.json.
Run: /usr/bin/python3 tools/make_prompt_geometry_fixtures.py
"""
import csv
import json
import os
from itertools import combinations

import numpy as np
from scipy import stats
from sklearn.decomposition import PCA

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "social_perception")
OUT = os.path.join(ROOT, "tests", "fixtures", "audits", "prompt_geometry")


def main():
    prompts = list(csv.DictReader(open(os.path.join(EXAMPLE, "prompts.csv"))))
    emb = np.load(os.path.join(EXAMPLE, "prompts.npy")).astype(np.float64)
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    attribute = [i for i, p in enumerate(prompts) if p["role"] == "attribute"]
    by = {}
    for i in attribute:
        p = prompts[i]
        by.setdefault(p["dimension"], {}).setdefault(p["valence"], {}).setdefault(
            p["word"], {})[p["template"]] = i

    def pair_mean(wa, wb):
        shared = sorted(set(wa) & set(wb))
        return float(np.mean([unit[wa[t]] @ unit[wb[t]] for t in shared]))

    dims = []
    for name in sorted(by):
        v = by[name]
        if "+" not in v or "-" not in v:
            continue
        pos = [pair_mean(v["+"][a], v["+"][b]) for a, b in combinations(sorted(v["+"]), 2)]
        neg = [pair_mean(v["-"][a], v["-"][b]) for a, b in combinations(sorted(v["-"]), 2)]
        cross = [pair_mean(v["+"][a], v["-"][b]) for a in sorted(v["+"]) for b in sorted(v["-"])]
        tp = stats.ttest_ind(pos, cross, equal_var=False, alternative="greater")
        tn = stats.ttest_ind(neg, cross, equal_var=False, alternative="greater")
        dims.append({"dimension": name, "pairs": [len(pos), len(neg), len(cross)],
                     "means": [float(np.mean(pos)), float(np.mean(neg)), float(np.mean(cross))],
                     "t_pos": float(tp.statistic), "p_pos": float(tp.pvalue),
                     "t_neg": float(tn.statistic), "p_neg": float(tn.pvalue)})
    pca = PCA(n_components=3, svd_solver="full")
    scores = pca.fit_transform(emb[attribute])
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"dimensions": dims,
                   "pca": {"explained_variance_ratio": pca.explained_variance_ratio_.tolist(),
                           "scores_first_rows": scores[:5].tolist(),
                           "prompts": len(attribute)}}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
