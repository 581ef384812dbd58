#!/usr/bin/python3
"""Times vlbias's PRDC against the approach of the widely used Python implementation (the
prdc package, clovaai/generative-evaluation-prdc, which DIG-In copies): dense pairwise
distances with scikit-learn's pairwise_distances(n_jobs=8), numpy argpartition for the k-th
neighbour, and boolean matrices for the four metrics. Same machine, same run, same data.

The data are bench_prdc's Inception-like features (non-negative, clustered), written to .npy
by build/bench/bench_prdc, which also times the library call. Then:
  * vlbias CLI: `vlbias metric prdc --real R.npy --fake F.npy --k K` (includes reading the
    files), wall time and peak RSS of the child;
  * the dense approach in a child process (so its peak RSS is its own), wall time and RSS;
  * both results must agree (random continuous data: no ties).

Needs Debian's python3-numpy and python3-sklearn with OpenBLAS installed (numpy falls back
to the reference BLAS without it and is 15x slower). Prints one JSON line.

Usage: /usr/bin/python3 bench/vs_prdc.py [--n 5000] [--dim 2048] [--k 3] [--threads T]
"""
import argparse
import json
import os
import pathlib
import resource
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def dense_prdc(real_path, fake_path, k, conn):
    import numpy as np
    import sklearn.metrics

    def pairwise(x, y):
        return sklearn.metrics.pairwise_distances(x, y, metric="euclidean", n_jobs=8)

    def radii(x):
        d = pairwise(x, x)
        idx = np.argpartition(d, k + 1, axis=-1)[..., : k + 1]
        return np.take_along_axis(d, idx, axis=-1).max(axis=-1)

    real = np.load(real_path)
    fake = np.load(fake_path)
    t0 = time.perf_counter()
    rr = radii(real)
    rf = radii(fake)
    d = pairwise(real, fake)
    out = {
        "precision": float((d < rr[:, None]).any(axis=0).mean()),
        "recall": float((d < rf[None, :]).any(axis=1).mean()),
        "density": float((1.0 / k) * (d < rr[:, None]).sum(axis=0).mean()),
        "coverage": float((d.min(axis=1) < rr).mean()),
    }
    out["seconds"] = time.perf_counter() - t0
    conn.send(out)


def run_child(fn, *args):
    import multiprocessing

    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.get_context("fork").Process(target=fn, args=(*args, child))
    proc.start()
    result = parent.recv()
    _, _, usage = os.wait4(proc.pid, 0)
    result["peak_rss_mb"] = usage.ru_maxrss / 1024.0
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=2048)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="vlbias_vs_prdc_"))
    real, fake = tmp / "real.npy", tmp / "fake.npy"
    threads = ["--threads", str(args.threads)] if args.threads else []
    bench = subprocess.run(
        [str(ROOT / "build/bench/bench_prdc"), "--n", str(args.n), "--dim", str(args.dim), "--k",
         str(args.k), "--write-real", str(real), "--write-fake", str(fake), *threads],
        check=True, capture_output=True, text=True)
    library = json.loads(bench.stdout)

    t0 = time.perf_counter()
    cli = subprocess.run(
        [str(ROOT / "build/vlbias"), *(["--threads", str(args.threads)] if args.threads else []),
         "metric", "prdc", "--real", str(real), "--fake", str(fake), "--k", str(args.k)],
        check=True, capture_output=True, text=True)
    cli_seconds = time.perf_counter() - t0
    cli_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    ours = json.loads(cli.stdout)

    dense = run_child(dense_prdc, str(real), str(fake), args.k)
    agree = all(abs(ours[m] - dense[m]) < 1e-12 for m in ("precision", "recall", "density",
                                                           "coverage"))
    out = {
        "bench": "vs_prdc", "n": args.n, "dim": args.dim, "k": args.k,
        "cores": os.cpu_count(),
        "vlbias_library_seconds": library["seconds"],
        "vlbias_cli_seconds": cli_seconds, "vlbias_cli_peak_rss_mb": cli_rss,
        "dense_seconds": dense["seconds"], "dense_peak_rss_mb": dense["peak_rss_mb"],
        "speedup_library": dense["seconds"] / library["seconds"],
        "speedup_cli": dense["seconds"] / cli_seconds,
        "sgemm_ceiling_gflops": library.get("ceiling_gflops"),
        "fraction_of_ceiling": library.get("fraction_of_ceiling"),
        "values_agree": agree,
        "vlbias": {m: ours[m] for m in ("precision", "recall", "density", "coverage")},
        "dense": {m: dense[m] for m in ("precision", "recall", "density", "coverage")},
    }
    print(json.dumps(out))
    for p in (real, fake):
        p.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
