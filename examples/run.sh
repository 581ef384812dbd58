#!/usr/bin/env bash
# The README's main job: runs vlbias on bundled real data and prints where the
# outputs are. Data: SeeGULL global stereotypes v2 (CC-BY-4.0, data/seegull/).
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
echo "example outputs:"
ls -1 "$out"/*.json
