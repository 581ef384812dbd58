#!/usr/bin/env python3
"""Times `vlbias audit` (kind: visual-stereotypes, likelihood with a 1000-resample bootstrap over
images) against a vectorised pandas/numpy implementation of the same computation on the full
ViSAGe release (122,675 annotation rows) and writes bench/results_vs_pandas_visual.json.

Usage: /usr/bin/python3 bench/vs_pandas_visual.py [DATA_DIR]   (default ../shared/data)
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, '..', 'shared', 'data')
B = 1000


def pandas_likelihood():
    v = pd.read_csv(f'{DATA}/visage/all_visual_attr.csv')
    ok = {'agree', 'strongly agree'}
    rating = [c for c in v.columns if c.startswith('rating_')]
    vis_mask = np.all([v[c].astype(str).str.strip().str.lower().isin(ok) for c in rating], axis=0)
    vis = set(v[vis_mask].attribute) - set(v[~vis_mask].attribute)
    s = pd.read_csv(f'{DATA}/seegull/stereotypes_global_v2.csv')
    s = s[(s.NA_stereo >= 2) & s.attribute.isin(vis)]
    stereo = set(zip(s.identity, s.attribute))
    n_stereo = s.groupby('identity').size()
    d = pd.read_csv(f'{DATA}/visage/full_set_annotations.csv', usecols=range(5))
    d = d[d.img_path.notna() | d.attribute.notna()].reset_index(drop=True)
    run = (d.worker_id.ne(d.worker_id.shift()) | d.img_path.ne(d.img_path.shift())).cumsum()
    d['run'] = run
    content = d.groupby('run').apply(
        lambda g: (g.worker_id.iat[0], g.img_path.iat[0],
                   tuple(zip(g.attribute, g.present, g.coords))))
    keep = ~content.duplicated()
    d = d[d.run.isin(content[keep].index)]
    d = d[d.attribute != 'none of the above']
    d['id'] = d.img_path.str.rsplit('/', n=1).str[-1].str.replace(r'\d*\.\w+$', '', regex=True)
    d['yes'] = (d.present == 'yes').astype(np.int64)
    rng = np.random.default_rng(7)
    out = {}
    for ident, g in d.groupby('id'):
        if n_stereo.get(ident, 0) < 2:
            continue
        k = g.pivot_table(index='img_path', columns='attribute', values='yes', aggfunc='sum',
                          fill_value=0)
        n = g.pivot_table(index='img_path', columns='attribute', values='yes', aggfunc='count',
                          fill_value=0)
        is_s = np.array([(ident, a) in stereo for a in k.columns])
        K, N = k.to_numpy(float), n.to_numpy(float)
        idx = rng.integers(0, K.shape[0], size=(B, K.shape[0]))
        kb, nb = K[idx].sum(axis=1), N[idx].sum(axis=1)
        with np.errstate(invalid='ignore', divide='ignore'):
            lb = kb / nb
        ls = np.nanmean(lb[:, is_s], axis=1)
        lr = np.nanmean(lb[:, ~is_s], axis=1)
        L = K.sum(0) / N.sum(0)
        out[ident] = (L[is_s].mean(), L[~is_s].mean(), np.percentile(ls, [2.5, 97.5]),
                      np.percentile(lr, [2.5, 97.5]))
    ratio = sum(x[0] for x in out.values()) / sum(x[1] for x in out.values())
    return ratio, len(out)


def main():
    t0 = time.perf_counter()
    ratio_py, ids = pandas_likelihood()
    t_py = time.perf_counter() - t0
    rss_py = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, 'spec.yaml')
        with open(spec, 'w') as f:
            f.write(f'version: 1\nkind: visual-stereotypes\nseed: 7\n'
                    f'seegull: {DATA}/seegull/stereotypes_global_v2.csv\n'
                    f'visual_attributes: {DATA}/visage/all_visual_attr.csv\n'
                    f'annotations:\n  table: {DATA}/visage/full_set_annotations.csv\n'
                    f'analyses:\n  likelihood: {{bootstrap: {B}}}\n')
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            r = subprocess.run(['/usr/bin/time', '-v', os.path.join(ROOT, 'build', 'vlbias'),
                                '--quiet', 'audit', spec, '--out', os.path.join(tmp, 'run')],
                               capture_output=True, text=True, check=True)
            times.append(time.perf_counter() - t0)
        rss_ours = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', r.stderr)[1]) / 1024
        res = json.load(open(os.path.join(tmp, 'run', 'results.json')))
    ratio_ours = res['analyses']['likelihood']['pooled']['ratio']
    result = {'rows': 122675, 'identities': ids, 'bootstrap': B,
              'pandas_seconds': round(t_py, 3), 'pandas_peak_rss_mib': round(rss_py, 1),
              'vlbias_seconds_best_of_3': round(min(times), 3),
              'vlbias_peak_rss_mib': round(rss_ours, 1),
              'speedup': round(t_py / min(times), 1),
              'pooled_ratio_pandas': ratio_py, 'pooled_ratio_vlbias': ratio_ours}
    print(json.dumps(result, indent=2))
    with open(os.path.join(ROOT, 'bench', 'results_vs_pandas_visual.json'), 'w') as f:
        json.dump(result, f, indent=2)
        f.write('\n')


if __name__ == '__main__':
    main()
