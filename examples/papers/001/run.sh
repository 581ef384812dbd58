#!/usr/bin/env bash
# Paper 001 (Hausladen et al., "Social perception of faces in a vision-language model") from the
# CausalFace release folder and a CLIP model folder to the paper's figures and tables, in one
# command:
#
#   bash examples/papers/001/run.sh DATASET_DIR MODEL_DIR [OUT_DIR]
#
# Steps (each skipped when its outputs exist and its inputs' content is unchanged; see
# ../lib.sh): dataset -> select -> encode-images, encode-prompts -> audit; table-age,
# table-smiling -> audit-age, audit-smiling. README.md beside this file lists the environment
# variables (SELECT, VLBIAS) and what each step writes.
set -euo pipefail

usage() {
  echo "usage: bash examples/papers/001/run.sh DATASET_DIR MODEL_DIR [OUT_DIR]" >&2
  echo "  DATASET_DIR: CausalFace as released (final_picked_{age,lighting,pose,smiling}/seed_N/)" >&2
  echo "  MODEL_DIR:   a CLIP folder (Hugging Face or open_clip)" >&2
  exit 2
}
(($# >= 2 && $# <= 3)) || usage

recipe_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
source "$recipe_dir/../lib.sh"

DATASET_DIR=$1
MODEL_DIR=$2
OUT_DIR=${3:-runs/paper001}
# The images audited: original backgrounds, and the smiling images without brightness correction.
SELECT=${SELECT:-"background == 'original' and not (variant == 'o2_corrected')"}
VLBIAS=$(find_vlbias "$recipe_dir/../../..")

[[ -d $DATASET_DIR ]] || { echo "run.sh: DATASET_DIR '$DATASET_DIR' is not a folder" >&2; exit 2; }
[[ -d $MODEL_DIR ]] || { echo "run.sh: MODEL_DIR '$MODEL_DIR' is not a folder" >&2; exit 2; }
mkdir -p -- "$OUT_DIR"

# The audit specs and the prompts are read from OUT_DIR, beside the step outputs they name, so
# the specs' relative paths hold wherever OUT_DIR is. Copied only when changed.
for file in spec.yaml age.yaml smiling.yaml prompts.csv; do
  copy_if_changed "$recipe_dir/$file" "$OUT_DIR/$file"
done

# Every image of the release: seed, race, gender, the factor its folder varies and its level.
step dataset --in "$DATASET_DIR" --out "$OUT_DIR/all.csv" -- \
  "$VLBIAS" dataset causalface "$DATASET_DIR" --out "$OUT_DIR/all.csv" \
  --summary "$OUT_DIR/dataset.json"

# The images audited (every row SELECT keeps: a sample of the whole of every cell).
step select --in "$OUT_DIR/all.csv" --out "$OUT_DIR/images.csv" -- \
  "$VLBIAS" sample --table "$OUT_DIR/all.csv" --by race,gender --frac 1 --where "$SELECT" \
  --seed 0 --out "$OUT_DIR/images.csv" --report "$OUT_DIR/select.json"

# Their CLIP embeddings (the images are read from DATASET_DIR, hence an input).
step encode-images --in "$OUT_DIR/images.csv" "$DATASET_DIR" "$MODEL_DIR" \
  --out "$OUT_DIR/images.npy" -- \
  "$VLBIAS" encode --model "$MODEL_DIR" --images "$OUT_DIR/images.csv" --out "$OUT_DIR/images.npy"

# The paper's 208 prompts: 4 templates x (neutral, the SCM and ABC words, the group names).
step encode-prompts --in "$OUT_DIR/prompts.csv" "$MODEL_DIR" --out "$OUT_DIR/prompts.npy" -- \
  "$VLBIAS" encode --model "$MODEL_DIR" --texts "$OUT_DIR/prompts.csv" --out "$OUT_DIR/prompts.npy"

step audit --in "$OUT_DIR/spec.yaml" "$OUT_DIR/images.csv" "$OUT_DIR/images.npy" \
  "$OUT_DIR/prompts.csv" "$OUT_DIR/prompts.npy" \
  --out "$OUT_DIR/audit/results.json" "$OUT_DIR/audit/report.html" -- \
  "$VLBIAS" audit "$OUT_DIR/spec.yaml" --out "$OUT_DIR/audit"

# The images that vary age, and those that vary smiling: their trends along the level (joined
# to images.npy by path, so nothing is encoded twice).
for factor in age smiling; do
  step "table-$factor" --in "$OUT_DIR/images.csv" --out "$OUT_DIR/$factor.csv" -- \
    "$VLBIAS" sample --table "$OUT_DIR/images.csv" --by race,gender --frac 1 \
    --where "factor == '$factor'" --seed 0 --out "$OUT_DIR/$factor.csv" \
    --report "$OUT_DIR/$factor.json"
  step "audit-$factor" --in "$OUT_DIR/$factor.yaml" "$OUT_DIR/$factor.csv" "$OUT_DIR/images.csv" \
    "$OUT_DIR/images.npy" "$OUT_DIR/prompts.csv" "$OUT_DIR/prompts.npy" \
    --out "$OUT_DIR/audit-$factor/results.json" "$OUT_DIR/audit-$factor/report.html" -- \
    "$VLBIAS" audit "$OUT_DIR/$factor.yaml" --out "$OUT_DIR/audit-$factor"
done

echo "reports: $OUT_DIR/audit/report.html, $OUT_DIR/audit-age/report.html," \
  "$OUT_DIR/audit-smiling/report.html"
echo "results: $OUT_DIR/audit*/results.json (tables: $OUT_DIR/audit*/tables/)"
