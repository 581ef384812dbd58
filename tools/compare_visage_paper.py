#!/usr/bin/env python3
"""Compares a visual-stereotypes audit on the full ViSAGe release with the paper's Tables 1-2.

Usage: /usr/bin/python3 tools/compare_visage_paper.py RUN_DIR PAPER_TXT
  RUN_DIR    a run of `vlbias audit` with kind: visual-stereotypes on the full
             full_set_annotations.csv (annotations.none_as_random: true reproduces the
             authors' L(random); false is the paper's stated definition)
  PAPER_TXT  the paper's text (../shared/papers/000_*.txt); Tables 1-2 are read from it.
Prints how many identities agree with the tables at their two decimals.
"""
import json
import math
import sys

# The tables name some identities by country; the data by demonym.
ALIAS = {'Zimbabwe': 'Zimbabwean', 'Iraq': 'Iraqi', 'Sweden': 'Swedes', 'Denmark': 'Danish',
         'Greece': 'Greeks', 'Bhutan': 'Bhutanese', 'Thailand': 'Thai', 'Egypt': 'Egyptian',
         'Kenya': 'Kenyan', 'Ireland': 'Irish', 'Britain': 'British', 'Ethiopia': 'Ethiopian',
         'United Kingdom': 'United KingdomUK', 'Philippines': 'Philippine', 'Italy': 'Italian',
         'Bangladesh': 'Bangladeshi', 'Sri Lanka': 'Sri Lankan', 'North Korea': 'North Korean',
         'England': 'English', 'China': 'Chinese', 'Brazil': 'Brazilian', 'Russia': 'Russian',
         'Mexico': 'Mexican', 'Vietnam': 'Vietnamese', 'Japan': 'Japanese',
         'Afghanistan': 'Afghans', 'Peru': 'Peruvian', 'Belgium': 'Belgian', 'Germany': 'German',
         'Iran': 'Iranian', 'Israel': 'Israeli', 'France': 'French', 'Yemen': 'Yemeni',
         'Turkey': 'Turks', 'Nepal': 'Nepalese', 'Colombia': 'Colombian',
         'Venezuela': 'Venezuelan', 'Spain': 'Spanish', 'Wales': 'Welsh'}


def paper_rows(path):
    rows, on = [], False
    for line in open(path, encoding='utf-8'):
        if line.startswith('Identity ') and 'θ' in line:
            on = True
            continue
        if line.startswith('Table 1:') or line.startswith('Table 2:'):
            on = False
        if on and line.strip():
            t = line.split()
            name = ' '.join(t[:-3])
            theta = math.inf if t[-1] == 'N/A' else float(t[-1])
            rows.append((ALIAS.get(name, name), name, float(t[-3]), float(t[-2]), theta))
    return rows


def main():
    run, paper = sys.argv[1], sys.argv[2]
    res = json.load(open(run + '/results.json'))
    ours = {x['identity']: x for x in res['analyses']['likelihood']['identities']}
    rows = paper_rows(paper)
    ls_ok = lr_ok = th_ok = th_n = inf_ok = inf_n = 0
    diffs = []
    for ident, name, pls, plr, pth in rows:
        x = ours[ident]
        ls_ok += abs(round(x['l_stereo'], 2) - pls) < 1e-9
        lr_ok += abs(round(x['l_random'], 2) - plr) < 1e-9
        if math.isinf(pth):
            inf_n += 1
            inf_ok += x['theta_status'] == 'infinite'
        else:
            th_n += 1
            ok = x['theta'] is not None and abs(x['theta'] - pth) <= 0.005 + 1e-9
            th_ok += ok
            if not ok:
                diffs.append((name, pth, x['theta']))
    print(f'identities in the tables: {len(rows)}; pooled ratio {res["analyses"]["likelihood"]["pooled"]["ratio"]:.4f}')
    print(f'L(stereo) equal at 2 decimals: {ls_ok}/{len(rows)}; L(random): {lr_ok}/{len(rows)}')
    print(f'theta within 0.005: {th_ok}/{th_n}; infinite (N/A) agree: {inf_ok}/{inf_n}')
    for name, pth, th in diffs:
        print(f'  differs: {name}: paper {pth}, ours {th}')


if __name__ == '__main__':
    main()
