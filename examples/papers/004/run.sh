#!/usr/bin/env bash
# Paper 004 (Baherwani and Vincent, "Racial and gender stereotypes in CLIP") from the FairFace
# release folder and a CLIP model folder to the paper's figure and tables, in one command:
#
#   bash examples/papers/004/run.sh DATASET_DIR MODEL_DIR [OUT_DIR]
#
# Steps (each skipped when its outputs exist and its inputs' content is unchanged; see
# ../lib.sh): dataset -> sample -> encode-images, encode-prompts -> audit. README.md beside
# this file lists the environment variables (N_PER_CELL, SEED, ALLOW_SHORT, PER_CELL_MIN,
# VLBIAS) and what each step writes.
set -euo pipefail

usage() {
  echo "usage: bash examples/papers/004/run.sh DATASET_DIR MODEL_DIR [OUT_DIR]" >&2
  echo "  DATASET_DIR: FairFace as released (fairface_label_train.csv, fairface_label_val.csv," >&2
  echo "               train/, val/); MODEL_DIR: a CLIP folder (Hugging Face or open_clip)" >&2
  exit 2
}
(($# >= 2 && $# <= 3)) || usage

recipe_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
source "$recipe_dir/../lib.sh"

DATASET_DIR=$1
MODEL_DIR=$2
OUT_DIR=${3:-runs/paper004}
N_PER_CELL=${N_PER_CELL:-2000}  # the paper's n per race x gender
SEED=${SEED:-0}
ALLOW_SHORT=${ALLOW_SHORT:-0}  # 1: keep a cell with fewer than N_PER_CELL images, whole
PER_CELL_MIN=${PER_CELL_MIN:-}  # drop cells with fewer images than this
VLBIAS=$(find_vlbias "$recipe_dir/../../..")

[[ -d $DATASET_DIR ]] || { echo "run.sh: DATASET_DIR '$DATASET_DIR' is not a folder" >&2; exit 2; }
[[ -d $MODEL_DIR ]] || { echo "run.sh: MODEL_DIR '$MODEL_DIR' is not a folder" >&2; exit 2; }
[[ $N_PER_CELL =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: N_PER_CELL must be a positive integer" >&2; exit 2; }
mkdir -p -- "$OUT_DIR"

# The audit spec and the prompts are read from OUT_DIR, beside the step outputs they name, so
# the spec's relative paths hold wherever OUT_DIR is. Copied only when changed.
copy_if_changed "$recipe_dir/spec.yaml" "$OUT_DIR/spec.yaml"
copy_if_changed "$recipe_dir/pairs.csv" "$OUT_DIR/pairs.csv"

# The image table of both label files (train and val); paths resolve from OUT_DIR.
step dataset --in "$DATASET_DIR" --out "$OUT_DIR/images.csv" -- \
  "$VLBIAS" dataset fairface "$DATASET_DIR" --split all --out "$OUT_DIR/images.csv" \
  --summary "$OUT_DIR/dataset.json"

# Adults aged 20-60: FairFace labels age in groups, and 20-29 ... 50-59 are the groups inside
# that range. N_PER_CELL images per race x gender, drawn as numpy's Generator.choice would.
sample_args=(--table "$OUT_DIR/images.csv" --by "race,gender" --n "$N_PER_CELL"
  --where "age_min >= 20 and age_max <= 59" --seed "$SEED"
  --out "$OUT_DIR/sample.csv" --report "$OUT_DIR/sample.json")
if [[ $ALLOW_SHORT == 1 ]]; then sample_args+=(--allow-short); fi
if [[ -n $PER_CELL_MIN ]]; then sample_args+=(--per-cell-min "$PER_CELL_MIN"); fi
step sample --in "$OUT_DIR/images.csv" --out "$OUT_DIR/sample.csv" -- \
  "$VLBIAS" sample "${sample_args[@]}"

# The sampled images' CLIP embeddings (the images are read from DATASET_DIR, hence an input).
step encode-images --in "$OUT_DIR/sample.csv" "$DATASET_DIR" "$MODEL_DIR" \
  --out "$OUT_DIR/images.npy" -- \
  "$VLBIAS" encode --model "$MODEL_DIR" --images "$OUT_DIR/sample.csv" --out "$OUT_DIR/images.npy"

# The twelve captions ("a smart person", "a dumb person", ...) and the neutral "a person".
step encode-prompts --in "$OUT_DIR/pairs.csv" "$MODEL_DIR" --out "$OUT_DIR/pairs.npy" -- \
  "$VLBIAS" encode --model "$MODEL_DIR" --texts "$OUT_DIR/pairs.csv" --out "$OUT_DIR/pairs.npy"

# The sample's faces (dlib's HOG detector and 68 landmarks, Debian's weights), for the share of
# each class activation map inside the faces (analyses.explain.faces); a folder left by an
# interrupted attempt for the same inputs is resumed.
find_faces() {
  local resume=()
  if resume_or_fresh "$OUT_DIR/faces"; then resume=(--resume); fi
  "$VLBIAS" faces --images "$OUT_DIR/sample.csv" --no-chips --out "$OUT_DIR/faces" \
    ${resume[@]+"${resume[@]}"}
}
step faces --in "$OUT_DIR/sample.csv" "$DATASET_DIR" --out "$OUT_DIR/faces/manifest.json" -- \
  find_faces

# The spec names the model as model/ (analyses.explain.model), a link to MODEL_DIR.
ln -sfn -- "$(cd -- "$MODEL_DIR" && pwd)" "$OUT_DIR/model"

step audit --in "$OUT_DIR/spec.yaml" "$OUT_DIR/sample.csv" "$OUT_DIR/images.npy" \
  "$OUT_DIR/pairs.csv" "$OUT_DIR/pairs.npy" "$MODEL_DIR" "$OUT_DIR/faces/faces.csv" \
  "$OUT_DIR/faces/images.csv" \
  --out "$OUT_DIR/audit/results.json" "$OUT_DIR/audit/report.html" -- \
  "$VLBIAS" audit "$OUT_DIR/spec.yaml" --out "$OUT_DIR/audit"

echo "report:  $OUT_DIR/audit/report.html"
echo "results: $OUT_DIR/audit/results.json (tables: $OUT_DIR/audit/tables/)"
echo "maps:    $OUT_DIR/audit/explain/ (maps.npy, rows.csv, overlays/, cam_mass.json)"
