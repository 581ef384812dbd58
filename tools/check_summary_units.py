#!/usr/bin/env python3
"""Independent check of RUN_DIR/summary.json (docs/reports.md#summary-json), plain Python.

For each run folder given: every finding's estimate equals results.json's value at its "ptr",
and every finding with units is recomputed from its CSV (mean, or the difference of two group
means); prints the largest |recomputed - estimate| per run and the ids per prefix.

    python3 tools/check_summary_units.py runs/example/social_perception runs/example/...
"""
import json, sys, csv, math, collections
for run in sys.argv[1:]:
    s = json.load(open(f"{run}/summary.json")); r = json.load(open(f"{run}/results.json"))
    def at(ptr):
        x = r
        for p in ptr.split('/')[1:]:
            p = p.replace('~1','/').replace('~0','~')
            x = x[int(p)] if isinstance(x, list) else x[p]
        return x
    nu = 0; worst = 0; bad = 0; secs = collections.Counter(); usecs = collections.Counter()
    for f in s['findings']:
        v = at(f['ptr'])
        if v != f['estimate']: bad += 1; print("MISMATCH", f['id'], v, f['estimate'])
        secs[f['id'].split('/')[0]] += 1
        u = f['units']
        if not u: continue
        nu += 1; usecs[f['id'].split('/')[0]] += 1
        rows = list(csv.DictReader(open(f"{run}/{u['table']}")))
        vals = lambda rs: [float(x[u['value']]) for x in rs]
        if u['aggregate'] == 'mean':
            x = sum(vals(rows))/len(rows)
        else:
            a = vals([q for q in rows if q[u['group']] == u['groups'][0]]); b = vals([q for q in rows if q[u['group']] == u['groups'][1]])
            x = sum(a)/len(a) - sum(b)/len(b)
        worst = max(worst, abs(x - f['estimate']))
    print(run, s['kind'], "findings", len(s['findings']), "with units", nu, "max |units agg - estimate|", worst, "ptr mismatches", bad)
    print("  ids per prefix:", dict(secs), " with units:", dict(usecs))
