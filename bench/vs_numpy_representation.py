#!/usr/bin/python3
"""Speed and memory of the representation audit at scale (issue 42's goal: 1 million labelled
faces x 3 attributes in <= 10 s and <= 1 GiB), against a numpy implementation of the same
per-prompt computations (shares, MAD, entropy bias, chi-square p-values and a percentile
bootstrap over each prompt's images) on the same data.

  /usr/bin/python3 bench/vs_numpy_representation.py [--prompts 2000] [--images 500]
      [--bootstrap 1000] [--threads 2] [--vlbias build/vlbias] [--keep DIR]

Writes the study (manifest.csv, labels.csv: one face per image, gender 2 / race4 4 / age9 9
classes) into a scratch folder, times `vlbias audit` (wall seconds and the child's peak RSS
from getrusage) and the numpy reference, and prints one JSON line.
"""
import argparse
import json
import os
import resource
import subprocess
import tempfile
import time

import numpy as np
import scipy.stats

ATTRIBUTES = [("gender", 2), ("race4", 4), ("age9", 9)]


def write_study(folder, prompts, images, rng):
    n = prompts * images
    prompt = np.repeat(np.arange(prompts), images)
    image = [f"p{p}/{i}.png" for p in range(prompts) for i in range(images)]
    with open(os.path.join(folder, "manifest.csv"), "w") as f:
        f.write("image,prompt\n")
        f.writelines(f"{im},prompt {p}\n" for im, p in zip(image, prompt))
    labels = {}
    with open(os.path.join(folder, "labels.csv"), "w") as f:
        f.write("image,face,attribute,label\n")
        for name, k in ATTRIBUTES:
            skew = rng.dirichlet(np.ones(k), size=prompts)
            u = rng.random(n)
            cls = (u[:, None] > np.cumsum(skew[prompt], axis=1)).sum(axis=1)
            labels[name] = cls
            f.writelines(f"{im},0,{name},c{c}\n" for im, c in zip(image, cls))
    spec = os.path.join(folder, "spec.yaml")
    with open(spec, "w") as f:
        classes = ", ".join(f"{name}: [{', '.join(f'c{c}' for c in range(k))}]"
                            for name, k in ATTRIBUTES)
        f.write("kind: representation\nlabels: {table: labels.csv, classes: {" + classes +
                "}}\nmanifest: {table: manifest.csv}\n")
    return spec, prompt, labels


def numpy_reference(prompt, labels, prompts, images, bootstrap, rng):
    start = time.perf_counter()
    for name, k in ATTRIBUTES:
        counts = np.zeros((prompts, k))
        np.add.at(counts, (prompt, labels[name]), 1)
        p = counts / counts.sum(axis=1, keepdims=True)
        np.mean(np.abs(p - p.mean(axis=1, keepdims=True)), axis=1)
        1 - scipy.stats.entropy(p, axis=1) / np.log(k)
        scipy.stats.chisquare(counts, axis=1)
    by_prompt = [{name: labels[name][i * images:(i + 1) * images] for name, _ in ATTRIBUTES}
                 for i in range(prompts)]
    for rows in by_prompt:
        idx = rng.integers(images, size=(bootstrap, images))
        for name, k in ATTRIBUTES:
            drawn = rows[name][idx]
            c = np.stack([(drawn == j).sum(axis=1) for j in range(k)], axis=1) / images
            mad = np.mean(np.abs(c - 1 / k), axis=1)
            np.percentile(mad, [2.5, 97.5])
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=2000)
    ap.add_argument("--images", type=int, default=500)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vlbias", default="build/vlbias")
    ap.add_argument("--keep", default="")
    ap.add_argument("--skip-numpy", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    folder = a.keep or tempfile.mkdtemp(prefix="vlbias_rep_bench_")
    os.makedirs(folder, exist_ok=True)
    spec, prompt, labels = write_study(folder, a.prompts, a.images, rng)
    with open(spec, "a") as f:
        f.write(f"analyses: {{measures: {{bootstrap: {a.bootstrap}}}}}\n")
    start = time.perf_counter()
    subprocess.run([a.vlbias, "--quiet", "--threads", str(a.threads), "audit", spec, "--out",
                    os.path.join(folder, "run")], check=True)
    ours = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    theirs = None if a.skip_numpy else numpy_reference(prompt, labels, a.prompts, a.images,
                                                       a.bootstrap, rng)
    print(json.dumps({"faces": a.prompts * a.images, "attributes": len(ATTRIBUTES),
                      "prompts": a.prompts, "bootstrap": a.bootstrap, "threads": a.threads,
                      "vlbias_s": round(ours, 2), "vlbias_peak_rss_mib": round(rss, 1),
                      "numpy_s": None if theirs is None else round(theirs, 2),
                      "speedup": None if theirs is None else round(theirs / ours, 2)}))


if __name__ == "__main__":
    main()
