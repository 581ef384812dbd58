#!/usr/bin/python3
"""Times vlbias's statistics engine against numpy/scipy on identical data.

Both sides build the same synthetic data (bench/bench_data.h's formula) in
their own process, then time only the operation (best of REPS). Peak RSS of
each process is read from getrusage. Prints a table and writes JSON.

  /usr/bin/python3 bench/vs_scipy.py [--n 10000000] [--reps 3] [--build build]
"""
import argparse
import json
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PY_WORKER = r'''
import json, sys, time
import numpy as np
from scipy import stats
op, n, k, reps, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
i = np.arange(n, dtype=np.float64)
x = i * 0.6180339887498949
g = (np.arange(n, dtype=np.uint64) * 7) % k
values = (x - np.floor(x)) * 10.0 + 0.01 * g.astype(np.float64)
del x, i
# Two-group tests start, on both sides, from the two samples already split out;
# k-group tests start from values + labels (vlbias's GroupedValues).
a, b = values[g == 0], values[g == 1]
best = 1e300
for _ in range(reps):
    t0 = time.perf_counter()
    if op == "anova":
        # the usual scipy workflow: split by group, then f_oneway
        res = stats.f_oneway(*[values[g == j] for j in range(k)])
        stat, p = res.statistic, res.pvalue
    elif op == "kruskal":
        res = stats.kruskal(*[values[g == j] for j in range(k)])
        stat, p = res.statistic, res.pvalue
    elif op == "welch":
        res = stats.ttest_ind(a, b, equal_var=False)
        stat, p = res.statistic, res.pvalue
    elif op == "mannwhitney":
        res = stats.mannwhitneyu(a, b, alternative="two-sided")
        stat, p = res.statistic, res.pvalue
    elif op == "permutation":
        v = values[g <= 1]
        lab = g[g <= 1]
        n0 = int((lab == 0).sum())
        rng = np.random.default_rng(1)
        t_obs = v[lab == 0].mean() - v[lab == 1].mean()
        exceed = 0
        for _b in range(B):
            perm = rng.permutation(v.size)
            t = v[perm[:n0]].mean() - v[perm[n0:]].mean()
            exceed += abs(t) >= abs(t_obs) * (1 - 1e-12)
        stat, p = t_obs, (1 + exceed) / (1 + B)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"op": op, "n": n, "seconds": best, "statistic": float(stat), "p_value": float(p)}))
'''


def run_isolated(cmd):
    """Peak RSS of one child measured in a fresh wrapper process."""
    wrapper = ("import json,resource,subprocess,sys;"
               "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
               "sys.stderr.write(p.stderr);"
               "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024.0;"
               "print(json.dumps({'out':p.stdout,'rc':p.returncode,'rss_mib':r}))")
    proc = subprocess.run([sys.executable, "-c", wrapper] + cmd, capture_output=True, text=True)
    meta = json.loads(proc.stdout)
    if meta["rc"] != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return json.loads(meta["out"]), meta["rss_mib"]


PY_END_TO_END = r'''
import json, sys, time
import pandas as pd
from scipy import stats
t0 = time.perf_counter()
df = pd.read_csv(sys.argv[1])
groups = [grp["value"].to_numpy() for _, grp in df.groupby("group", sort=True)]
res = stats.f_oneway(*groups)
print(json.dumps({"seconds": time.perf_counter() - t0, "statistic": float(res.statistic)}))
'''


def end_to_end(args):
    """`vlbias compare` on an n-row CSV vs pandas.read_csv + groupby + scipy."""
    import numpy as np
    path = os.path.join(args.tmp, f"compare_{args.n}.csv")
    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        g = rng.integers(0, args.k, args.n)
        v = rng.normal(0, 1, args.n) + 0.001 * g
        with open(path, "w") as f:
            f.write("group,value\n")
            for lo in range(0, args.n, 1_000_000):
                hi = min(args.n, lo + 1_000_000)
                f.write("".join(f"g{gi},{vi:.6f}\n" for gi, vi in zip(g[lo:hi], v[lo:hi])))
    vlbias = os.path.join(args.build, "vlbias")
    timer = ("import json,subprocess,sys,time;t=time.perf_counter();"
             "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
             "sys.stderr.write(p.stderr);"
             "print(json.dumps({'seconds':time.perf_counter()-t,"
             "'statistic':json.loads(p.stdout)['comparisons'][0]['statistic']}))")
    ours, our_rss = run_isolated([sys.executable, "-c", timer, vlbias, "--quiet", "compare",
                                  "--table", path, "--value", "value", "--by", "group",
                                  "--test", "anova"])
    ref, ref_rss = run_isolated([sys.executable, "-c", PY_END_TO_END, path])
    rel = abs(ours["statistic"] - ref["statistic"]) / abs(ref["statistic"])
    speed = ref["seconds"] / ours["seconds"]
    print(f"{'compare e2e':<12} {ours['seconds']:>10.3f} {ref['seconds']:>10.3f} {speed:>7.1f}x "
          f"{our_rss:>11.0f} {ref_rss:>10.0f}  {'yes' if rel < 1e-9 else 'NO'} (rel {rel:.1e})"
          "   [CSV -> ANOVA JSON vs pandas.read_csv + groupby + f_oneway]")
    return {"op": "compare_end_to_end", "vlbias_seconds": ours["seconds"],
            "scipy_seconds": ref["seconds"], "speedup": speed, "vlbias_rss_mib": our_rss,
            "scipy_rss_mib": ref_rss, "statistic_rel_diff": rel}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--permutations", type=int, default=100)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ops", default="anova,welch,mannwhitney,kruskal,permutation")
    ap.add_argument("--tmp", default="/tmp", help="where the end-to-end CSV is written")
    ap.add_argument("--no-end-to-end", action="store_true")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results_vs_scipy.json"))
    args = ap.parse_args()
    runner = os.path.join(args.build, "bench", "bench_runner")
    rows = []
    print(f"n = {args.n:,}, k = {args.k}, best of {args.reps}; permutation B = {args.permutations}")
    print(f"{'op':<12} {'vlbias s':>10} {'scipy s':>10} {'speedup':>8} {'vlbias MiB':>11} {'scipy MiB':>10}  agree")
    for op in args.ops.split(","):
        reps = 1 if op == "permutation" else args.reps
        common = [op, str(args.n), str(args.k), str(reps), str(args.permutations)]
        ours, our_rss = run_isolated([runner] + common)
        ref, ref_rss = run_isolated([sys.executable, "-c", PY_WORKER] + common)
        rel = abs(ours["statistic"] - ref["statistic"]) / max(abs(ref["statistic"]), 1e-300)
        agree = rel < 1e-9 if op != "permutation" else rel < 1e-9
        speed = ref["seconds"] / ours["seconds"]
        rows.append({"op": op, "vlbias_seconds": ours["seconds"], "scipy_seconds": ref["seconds"],
                     "speedup": speed, "vlbias_rss_mib": our_rss, "scipy_rss_mib": ref_rss,
                     "statistic_rel_diff": rel, "vlbias_p": ours["p_value"], "scipy_p": ref["p_value"]})
        print(f"{op:<12} {ours['seconds']:>10.3f} {ref['seconds']:>10.3f} {speed:>7.1f}x "
              f"{our_rss:>11.0f} {ref_rss:>10.0f}  {'yes' if agree else 'NO'} (rel {rel:.1e})")
    if not args.no_end_to_end:
        rows.append(end_to_end(args))
    with open(args.json, "w") as f:
        json.dump({"n": args.n, "k": args.k, "cores": os.cpu_count(), "results": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
