#!/usr/bin/env bash
# Paper 000 (Jha et al., "ViSAGe: A Global-Scale Analysis of Visual Stereotypes in
# Text-to-Image Generation") from a text-to-image and captioning endpoint and a CLIP model
# folder to the paper's salience and stereotypical-pull results, in one command:
#
#   bash examples/papers/000/run.sh ENDPOINT_URL MODEL_DIR [OUT_DIR]
#
# Steps (each skipped when its outputs exist and its inputs' content is unchanged; see
# ../lib.sh): prompts-detection, prompts-pull -> generate-detection, generate-pull ->
# captions, encode-pull -> audit. The identities and their visual stereotypes come from the
# SeeGULL and ViSAGe files shipped in data/ (no dataset folder). README.md beside this file
# lists the environment variables and what each step writes.
set -euo pipefail

usage() {
  echo "usage: bash examples/papers/000/run.sh ENDPOINT_URL MODEL_DIR [OUT_DIR]" >&2
  echo "  ENDPOINT_URL: an OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1) serving" >&2
  echo "                /images/generations and /chat/completions (CAPTION_URL: another one" >&2
  echo "                for the captions); MODEL_DIR: a CLIP folder (Hugging Face or open_clip)" >&2
  exit 2
}
(($# >= 2 && $# <= 3)) || usage

recipe_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$recipe_dir/../../.." && pwd)
# shellcheck source=/dev/null
source "$recipe_dir/../lib.sh"

ENDPOINT_URL=${1%/}
MODEL_DIR=$2
OUT_DIR=${3:-runs/paper000}
SEEGULL=${SEEGULL:-$repo_root/data/seegull/stereotypes_global_v2.csv}
VISUAL_ATTRIBUTES=${VISUAL_ATTRIBUTES:-$repo_root/data/visage/all_visual_attr.csv}
DETECTION_IMAGES=${DETECTION_IMAGES:-5}  # per detection template: 3 x 5 = 15 per identity
PULL_IMAGES=${PULL_IMAGES:-15}           # per pull prompt (the paper's 15)
CAPTIONS_PER_IMAGE=${CAPTIONS_PER_IMAGE:-5}
CAPTION_URL=${CAPTION_URL:-$ENDPOINT_URL}
CAPTION_URL=${CAPTION_URL%/}
CAPTION_MODEL=${CAPTION_MODEL:-}
CAPTION_PROMPT=${CAPTION_PROMPT:-Write a one-sentence caption of this image.}
T2I_MODEL=${T2I_MODEL:-}
T2I_SIZE=${T2I_SIZE:-1024x1024}
API_KEY_ENV=${API_KEY_ENV:-OPENAI_API_KEY}  # the variable holding the key (never written)
CONCURRENCY=${CONCURRENCY:-4}
SEED=${SEED:-0}
VLBIAS=$(find_vlbias "$repo_root")

for v in ENDPOINT_URL CAPTION_URL; do
  check_url "${!v}" || { echo "run.sh: $v must be an http:// or https:// URL without spaces, quotes or backslashes" >&2; exit 2; }
done
# The paths join the base URLs before their query strings (url_join); a URL with a query stays
# out of the specs, which name these variables instead (url_entry, ../lib.sh).
export VLBIAS_T2I_URL VLBIAS_CAPTION_URL
VLBIAS_T2I_URL=$(url_join "$ENDPOINT_URL" /images/generations)
VLBIAS_CAPTION_URL=$(url_join "$CAPTION_URL" /chat/completions)
[[ -d $MODEL_DIR ]] || { echo "run.sh: MODEL_DIR '$MODEL_DIR' is not a folder" >&2; exit 2; }
for v in DETECTION_IMAGES PULL_IMAGES CAPTIONS_PER_IMAGE CONCURRENCY; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: $v must be a positive integer" >&2; exit 2; }
done
for f in "$SEEGULL" "$VISUAL_ATTRIBUTES"; do
  [[ -f $f ]] || { echo "run.sh: '$f' does not exist" >&2; exit 2; }
done
mkdir -p -- "$OUT_DIR"

# The audit spec and the stereotype files are read from OUT_DIR, beside the step outputs they
# name. Copied only when changed.
copy_if_changed "$recipe_dir/spec.yaml" "$OUT_DIR/spec.yaml"
copy_if_changed "$SEEGULL" "$OUT_DIR/seegull.csv"
copy_if_changed "$VISUAL_ATTRIBUTES" "$OUT_DIR/visual_attr.csv"

# The endpoint lines every request spec shares: the key's variable only when it is set.
endpoint_keys() {
  local model=$1
  if [[ -n $model ]]; then printf ', model: %s' "$(yaml_quote "$model")"; fi
  if [[ -n ${!API_KEY_ENV:-} ]]; then printf ', api_key_env: %s' "$API_KEY_ENV"; fi
}
write_t2i_spec() {  # PROMPTS IMAGES_PER_PROMPT SPEC
  write_if_changed "$3" <<YAML
# Written by examples/papers/000/run.sh: ViSAGe's prompts to the OpenAI images API.
$(url_note "$VLBIAS_T2I_URL" VLBIAS_T2I_URL)
version: 1
kind: generate-t2i
endpoint: {api: openai-images, $(url_entry "$VLBIAS_T2I_URL" VLBIAS_T2I_URL)$(endpoint_keys "$T2I_MODEL")}
prompts: $1
columns: {prompt: text}
images_per_prompt: $2
openai: {size: $T2I_SIZE}
requests: {concurrency: $CONCURRENCY}
YAML
}
write_t2i_spec prompts_detection.csv "$DETECTION_IMAGES" "$OUT_DIR/t2i_detection.yaml"
write_t2i_spec prompts_pull.csv "$PULL_IMAGES" "$OUT_DIR/t2i_pull.yaml"
seeds=$(seq -s, 0 $((CAPTIONS_PER_IMAGE - 1)))
write_if_changed "$OUT_DIR/captions.yaml" <<YAML
# Written by examples/papers/000/run.sh: CAPTIONS_PER_IMAGE captions of every detection image
# (one seed each, temperature 0.7 so they differ), the salience's captions table.
$(url_note "$VLBIAS_CAPTION_URL" VLBIAS_CAPTION_URL)
version: 1
kind: generate-lvlm
endpoint: {$(url_entry "$VLBIAS_CAPTION_URL" VLBIAS_CAPTION_URL)$(endpoint_keys "$CAPTION_MODEL")}
manifest: detection/manifest.csv
columns: {image: image, keep: [image, identity]}
prompts:
  - {name: caption, text: $(yaml_quote "$CAPTION_PROMPT")}
seeds: [$seeds]
sampling: {temperature: 0.7, max_tokens: 77}
requests: {concurrency: $CONCURRENCY}
YAML

# ViSAGe 3.2: the three detection templates per identity with a visual stereotype.
step prompts-detection --in "$OUT_DIR/seegull.csv" "$OUT_DIR/visual_attr.csv" \
  --out "$OUT_DIR/prompts_detection.csv" -- \
  "$VLBIAS" prompts visual-stereotypes --seegull "$OUT_DIR/seegull.csv" \
  --visual-attributes "$OUT_DIR/visual_attr.csv" --no-pull --images-per-prompt "$DETECTION_IMAGES" \
  --out "$OUT_DIR/prompts_detection.csv"

# ViSAGe 5: the default, stereotypical and non-stereotypical prompts of the pull.
step prompts-pull --in "$OUT_DIR/seegull.csv" "$OUT_DIR/visual_attr.csv" \
  --out "$OUT_DIR/prompts_pull.csv" -- \
  "$VLBIAS" prompts visual-stereotypes --seegull "$OUT_DIR/seegull.csv" \
  --visual-attributes "$OUT_DIR/visual_attr.csv" --no-detection --seed "$SEED" \
  --images-per-prompt "$PULL_IMAGES" --out "$OUT_DIR/prompts_pull.csv"

step generate-detection --in "$OUT_DIR/t2i_detection.yaml" "$OUT_DIR/prompts_detection.csv" \
  --out "$OUT_DIR/detection/manifest.csv" "$OUT_DIR/detection/outcomes.csv" -- \
  generate_run "$VLBIAS" t2i "$OUT_DIR/t2i_detection.yaml" "$OUT_DIR/detection"

step generate-pull --in "$OUT_DIR/t2i_pull.yaml" "$OUT_DIR/prompts_pull.csv" \
  --out "$OUT_DIR/pull/manifest.csv" "$OUT_DIR/pull/outcomes.csv" -- \
  generate_run "$VLBIAS" t2i "$OUT_DIR/t2i_pull.yaml" "$OUT_DIR/pull"

step captions --in "$OUT_DIR/captions.yaml" "$OUT_DIR/detection/manifest.csv" \
  --out "$OUT_DIR/captions/generations.jsonl" -- \
  generate_run "$VLBIAS" lvlm "$OUT_DIR/captions.yaml" "$OUT_DIR/captions"

# The pull's CLIP image embeddings (row i = row i of pull/manifest.csv). The manifest names
# each image by its content hash, so its bytes stand for the images.
step encode-pull --in "$OUT_DIR/pull/manifest.csv" "$MODEL_DIR" --out "$OUT_DIR/pull.npy" -- \
  "$VLBIAS" encode --model "$MODEL_DIR" --images "$OUT_DIR/pull/manifest.csv" --column image \
  --out "$OUT_DIR/pull.npy"

step audit --in "$OUT_DIR/spec.yaml" "$OUT_DIR/seegull.csv" "$OUT_DIR/visual_attr.csv" \
  "$OUT_DIR/captions/generations.jsonl" "$OUT_DIR/pull/manifest.csv" "$OUT_DIR/pull.npy" \
  --out "$OUT_DIR/audit/results.json" "$OUT_DIR/audit/report.html" -- \
  "$VLBIAS" audit "$OUT_DIR/spec.yaml" --out "$OUT_DIR/audit"

echo "refused: $OUT_DIR/detection/outcomes.csv, $OUT_DIR/pull/outcomes.csv"
echo "report:  $OUT_DIR/audit/report.html"
echo "results: $OUT_DIR/audit/results.json (tables: $OUT_DIR/audit/tables/)"
