#!/usr/bin/env bash
# The README's main job: runs vlbias on bundled data and prints where the outputs
# are. Data: SeeGULL global stereotypes v2 (CC-BY-4.0, data/seegull/), and a
# synthetic dual-encoder study (examples/social_perception/, tools/make_example_study.py).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/example}
mkdir -p "$out"
data=data/seegull/stereotypes_global_v2.csv

# Are stereotypes that more in-region annotators endorse rated more offensive?
build/vlbias compare --table "$data" --value "mean offensiveness_score" --by region_stereo \
  --test kruskal --out "$out/offensiveness_by_endorsement.json"
build/vlbias compare --table "$data" --value "mean offensiveness_score" --by region_stereo \
  --test mannwhitney --pairwise --out "$out/offensiveness_pairwise.json"
build/vlbias describe --table "$data" --value "mean offensiveness_score" --by region_stereo \
  --bootstrap 2000 --seed 1 --out "$out/offensiveness_describe.json"

# A dual-encoder audit (paper 001: cos / Delta cos per social dimension, SC-WEAT,
# markedness, Skew@k/NDKL, AbsDiff, trends) on a bundled synthetic study with a
# planted effect: Black women's images are shifted toward "competent" prompts.
build/vlbias audit examples/social_perception/spec.yaml --out "$out/social_perception"
echo "example outputs:"
ls -1 "$out"/*.json "$out"/social_perception/results.json "$out"/social_perception/tables/*.csv
