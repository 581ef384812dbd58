#!/usr/bin/env bash
# Paper 002 (Hall et al., "DIG In: Evaluating Disparities in Image Generations with Indicators
# for Geographic Diversity") from GeoDE or Dollar Street as released, a text-to-image endpoint
# and an image feature model to the paper's indicators, in one command:
#
#   bash examples/papers/002/run.sh DATASET_DIR ENDPOINT_URL MODEL_DIR [OUT_DIR]
#
# Steps (each skipped when its outputs exist and its inputs' content is unchanged; see
# ../lib.sh): dataset -> sample -> prompts-FORM -> generate-FORM -> features-real,
# features-FORM (-> clip-objects, clip-FORM with CLIP_DIR) -> audit, one prompts, generate and
# features step per prompt form. README.md beside this file lists the environment variables
# and what each step writes.
set -euo pipefail

usage() {
  echo "usage: bash examples/papers/002/run.sh DATASET_DIR ENDPOINT_URL MODEL_DIR [OUT_DIR]" >&2
  echo "  DATASET_DIR: GeoDE (index.csv, images/) or Dollar Street (images_v2.csv, assets/) as" >&2
  echo "               released; ENDPOINT_URL: an OpenAI-compatible base URL (e.g." >&2
  echo "               http://127.0.0.1:8000/v1) serving /images/generations; MODEL_DIR: the" >&2
  echo "               feature model (the FID Inception-v3's weights, or a DINOv2 or CLIP folder)" >&2
  exit 2
}
(($# >= 3 && $# <= 4)) || usage

recipe_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$recipe_dir/../../.." && pwd)
# shellcheck source=/dev/null
source "$recipe_dir/../lib.sh"

DATASET_DIR=$1
ENDPOINT_URL=${2%/}
MODEL_DIR=$3
OUT_DIR=${4:-runs/paper002}
DATASET=${DATASET:-}  # geode | dollarstreet (default: from the files in DATASET_DIR)
if [[ -z $DATASET ]]; then
  if [[ -f $DATASET_DIR/index.csv ]]; then DATASET=geode
  elif [[ -f $DATASET_DIR/images_v2.csv ]]; then DATASET=dollarstreet
  else
    echo "run.sh: DATASET_DIR '$DATASET_DIR' holds neither GeoDE's index.csv nor Dollar Street's images_v2.csv; set DATASET=geode|dollarstreet" >&2
    exit 2
  fi
fi
case $DATASET in
  geode) object_column=object; default_n=180 ;;  # the paper's 180 per object x region
  dollarstreet) object_column=topic; default_n=all ;;  # the paper: its own distribution
  *) echo "run.sh: DATASET must be geode or dollarstreet, got '$DATASET'" >&2; exit 2 ;;
esac
N_PER_CELL=${N_PER_CELL:-$default_n}  # images per object x region ("all": every image)
SEED=${SEED:-0}
ALLOW_SHORT=${ALLOW_SHORT:-0}  # 1: keep a cell with fewer than N_PER_CELL images, whole
PER_CELL_MIN=${PER_CELL_MIN:-}  # drop cells with fewer images than this
OBJECTS=${OBJECTS:-}  # only these objects (comma-separated; default: every object)
FORMS=${FORMS:-object object-region object-country}
IMAGES_PER_PROMPT=${IMAGES_PER_PROMPT:-}  # default: N_PER_CELL (country prompts: a share)
COUNTRIES_PER_REGION=${COUNTRIES_PER_REGION:-3}
CLIP_DIR=${CLIP_DIR:-}  # a CLIP folder: the consistency indicator
PREPROCESS=${PREPROCESS:-}  # the feature model's preprocessing (vlbias features --preprocess)
T2I_MODEL=${T2I_MODEL:-}
T2I_SIZE=${T2I_SIZE:-512x512}  # the paper's resolution
API_KEY_ENV=${API_KEY_ENV:-OPENAI_API_KEY}  # the variable holding the key (never written)
CONCURRENCY=${CONCURRENCY:-4}
VLBIAS=$(find_vlbias "$repo_root")

[[ -d $DATASET_DIR ]] || { echo "run.sh: DATASET_DIR '$DATASET_DIR' is not a folder" >&2; exit 2; }
check_url "$ENDPOINT_URL" || { echo "run.sh: ENDPOINT_URL must be an http:// or https:// URL without spaces, quotes or backslashes" >&2; exit 2; }
# The path joins the base URL before its query string (url_join); a URL with a query stays out
# of the specs, which name this variable instead (url_entry, ../lib.sh).
export VLBIAS_T2I_URL
VLBIAS_T2I_URL=$(url_join "$ENDPOINT_URL" /images/generations)
[[ -e $MODEL_DIR ]] || { echo "run.sh: MODEL_DIR '$MODEL_DIR' does not exist" >&2; exit 2; }
[[ -z $CLIP_DIR || -d $CLIP_DIR ]] || { echo "run.sh: CLIP_DIR '$CLIP_DIR' is not a folder" >&2; exit 2; }
[[ $N_PER_CELL == all || $N_PER_CELL =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: N_PER_CELL must be a positive integer or 'all'" >&2; exit 2; }
if [[ -z $IMAGES_PER_PROMPT ]]; then
  [[ $N_PER_CELL != all ]] || { echo "run.sh: N_PER_CELL=all needs IMAGES_PER_PROMPT" >&2; exit 2; }
  IMAGES_PER_PROMPT=$N_PER_CELL
fi
for v in IMAGES_PER_PROMPT COUNTRIES_PER_REGION CONCURRENCY; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: $v must be a positive integer" >&2; exit 2; }
done
for form in $FORMS; do
  case $form in object | object-region | object-country) ;;
    *) echo "run.sh: FORMS holds '$form'; expected object, object-region, object-country" >&2; exit 2 ;;
  esac
done
mkdir -p -- "$OUT_DIR"

# The image table (paths resolve from OUT_DIR); Dollar Street one row per image and topic.
dataset_args=()
if [[ $DATASET == dollarstreet ]]; then dataset_args+=(--topic-rows); fi
step dataset --in "$DATASET_DIR" --out "$OUT_DIR/images.csv" -- \
  "$VLBIAS" dataset "$DATASET" "$DATASET_DIR" ${dataset_args[@]+"${dataset_args[@]}"} \
  --out "$OUT_DIR/images.csv" --summary "$OUT_DIR/dataset.json"

# N_PER_CELL real images per object x region, drawn as numpy's Generator.choice would.
sample_args=(--table "$OUT_DIR/images.csv" --by "$object_column,region" --seed "$SEED"
  --out "$OUT_DIR/sample.csv" --report "$OUT_DIR/sample.json")
if [[ $N_PER_CELL == all ]]; then sample_args+=(--frac 1); else sample_args+=(--n "$N_PER_CELL"); fi
if [[ -n $OBJECTS ]]; then
  # A row filter's double-quoted literals: " and \ escaped ("children's rooms" as it is).
  IFS=, read -r -a object_list <<<"$OBJECTS"
  literals=""
  for object in "${object_list[@]}"; do
    object=${object//\\/\\\\}
    literals+="\"${object//\"/\\\"}\", "
  done
  sample_args+=(--where "$object_column in (${literals%, })")
fi
if [[ $ALLOW_SHORT == 1 ]]; then sample_args+=(--allow-short); fi
if [[ -n $PER_CELL_MIN ]]; then sample_args+=(--per-cell-min "$PER_CELL_MIN"); fi
step sample --in "$OUT_DIR/images.csv" --out "$OUT_DIR/sample.csv" -- \
  "$VLBIAS" sample "${sample_args[@]}"

# The real images' features (read from DATASET_DIR, hence an input).
features_args=()
if [[ -n $PREPROCESS ]]; then features_args+=(--preprocess "$PREPROCESS"); fi
step features-real --in "$OUT_DIR/sample.csv" "$DATASET_DIR" "$MODEL_DIR" \
  --out "$OUT_DIR/real.npy" -- \
  "$VLBIAS" features --model "$MODEL_DIR" --images "$OUT_DIR/sample.csv" \
  ${features_args[@]+"${features_args[@]}"} --out "$OUT_DIR/real.npy"

api_key_line=""
if [[ -n ${!API_KEY_ENV:-} ]]; then api_key_line=", api_key_env: $API_KEY_ENV"; fi
model_line=""
if [[ -n $T2I_MODEL ]]; then model_line=", model: $(yaml_quote "$T2I_MODEL")"; fi
sources=""
for form in $FORMS; do
  images=$IMAGES_PER_PROMPT
  # DIG-In balances an object-region's images over the region's countries.
  if [[ $form == object-country ]]; then
    images=$(((IMAGES_PER_PROMPT + COUNTRIES_PER_REGION - 1) / COUNTRIES_PER_REGION))
  fi
  write_if_changed "$OUT_DIR/t2i_$form.yaml" <<YAML
# Written by examples/papers/002/run.sh: DIG-In's $form prompts to the OpenAI images API.
$(url_note "$VLBIAS_T2I_URL" VLBIAS_T2I_URL)
version: 1
kind: generate-t2i
endpoint: {api: openai-images, $(url_entry "$VLBIAS_T2I_URL" VLBIAS_T2I_URL)$model_line$api_key_line}
prompts: prompts_$form.csv
images_per_prompt: $images
openai: {size: $T2I_SIZE}
requests: {concurrency: $CONCURRENCY}
YAML

  step "prompts-$form" --in "$OUT_DIR/sample.csv" --out "$OUT_DIR/prompts_$form.csv" -- \
    "$VLBIAS" prompts geo-t2i --table "$OUT_DIR/sample.csv" --form "$form" \
    --object-column "$object_column" --countries-per-region "$COUNTRIES_PER_REGION" \
    --out "$OUT_DIR/prompts_$form.csv"

  step "generate-$form" --in "$OUT_DIR/t2i_$form.yaml" "$OUT_DIR/prompts_$form.csv" \
    --out "$OUT_DIR/$form/manifest.csv" "$OUT_DIR/$form/outcomes.csv" -- \
    generate_run "$VLBIAS" t2i "$OUT_DIR/t2i_$form.yaml" "$OUT_DIR/$form"

  # The manifest names each image with its sha256, so its bytes stand for the images.
  step "features-$form" --in "$OUT_DIR/$form/manifest.csv" "$MODEL_DIR" \
    --out "$OUT_DIR/$form.npy" -- \
    "$VLBIAS" features --model "$MODEL_DIR" --images "$OUT_DIR/$form/manifest.csv" \
    --column image ${features_args[@]+"${features_args[@]}"} --out "$OUT_DIR/$form.npy"

  sources+="  - {table: $form/manifest.csv, features: $form.npy, form: $form"
  if [[ -n $CLIP_DIR ]]; then
    step "clip-$form" --in "$OUT_DIR/$form/manifest.csv" "$CLIP_DIR" \
      --out "$OUT_DIR/${form}_clip.npy" -- \
      "$VLBIAS" encode --model "$CLIP_DIR" --images "$OUT_DIR/$form/manifest.csv" \
      --column image --out "$OUT_DIR/${form}_clip.npy"
    sources+=", clip: ${form}_clip.npy"
  fi
  # The object form's prompts name no region: its refusals have no region to be counted in.
  if [[ $form != object ]]; then sources+=", outcomes: $form/outcomes.csv"; fi
  sources+="}"$'\n'
done

objects=""
consistency=false
if [[ -n $CLIP_DIR ]]; then
  # The consistency indicator scores each generation against its bare "{object}" (4.4).
  # shellcheck disable=SC2016 # the inner script's own arguments
  step clip-objects --in "$OUT_DIR/sample.csv" "$CLIP_DIR" \
    --out "$OUT_DIR/objects.csv" "$OUT_DIR/objects.npy" -- \
    bash -c '"$1" prompts geo-objects --table "$2" --column "$3" --out "$4" &&
      "$1" encode --model "$5" --texts "$4" --out "$6"' _ \
    "$VLBIAS" "$OUT_DIR/sample.csv" "$object_column" "$OUT_DIR/objects.csv" "$CLIP_DIR" \
    "$OUT_DIR/objects.npy"
  objects="objects: {table: objects.csv, embeddings: objects.npy}"
  consistency="{variant: raw, percentile: 10, bootstrap: 1000, ci: 0.95}"
fi

# A country prompt draws a share of N_PER_CELL per country, rounded up: balanced back to
# N_PER_CELL generations per object x region, as DIG-In's --balance.
sampling="{}"
if [[ $N_PER_CELL != all ]]; then sampling="{generated_per_cell: $N_PER_CELL}"; fi

# The audit spec names the files above by relative path; rewritten when an option changes.
write_if_changed "$OUT_DIR/spec.yaml" <<YAML
# Written by examples/papers/002/run.sh (paper 002, DIG-In): the Region and Object-Region
# indicators (precision and coverage, k = 3) of every prompt form against the sampled real
# images, the consistency indicator with CLIP_DIR, and the refused generations per region.
# Every key: docs/specs.md.
version: 1
kind: geo-diversity
title: "Geographic disparities in text-to-image generation (paper 002, DIG-In)"
about: >-
  $DATASET images ($N_PER_CELL per object x region, seed $SEED) against the images the
  endpoint given to examples/papers/002/run.sh generated for DIG-In's prompts, in the feature
  space of $(basename -- "$MODEL_DIR").
seed: $SEED
real: {table: sample.csv, features: real.npy, object: $object_column, region: region}
generated:
$sources$objects
sampling: $sampling
analyses:
  region: {k: 3, bootstrap: 1000, ci: 0.95}
  object_region: {k: 3, bootstrap: 1000, ci: 0.95}
  consistency: $consistency
  distribution: {fid: true, vendi: true}
YAML

audit_inputs=("$OUT_DIR/spec.yaml" "$OUT_DIR/sample.csv" "$OUT_DIR/real.npy")
for form in $FORMS; do
  audit_inputs+=("$OUT_DIR/$form/manifest.csv" "$OUT_DIR/$form/outcomes.csv" "$OUT_DIR/$form.npy")
  if [[ -n $CLIP_DIR ]]; then audit_inputs+=("$OUT_DIR/${form}_clip.npy"); fi
done
if [[ -n $CLIP_DIR ]]; then audit_inputs+=("$OUT_DIR/objects.csv" "$OUT_DIR/objects.npy"); fi
step audit --in "${audit_inputs[@]}" \
  --out "$OUT_DIR/audit/results.json" "$OUT_DIR/audit/report.html" -- \
  "$VLBIAS" audit "$OUT_DIR/spec.yaml" --out "$OUT_DIR/audit"

echo "report:  $OUT_DIR/audit/report.html"
echo "results: $OUT_DIR/audit/results.json (tables: $OUT_DIR/audit/tables/)"
