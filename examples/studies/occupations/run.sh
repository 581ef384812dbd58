#!/usr/bin/env bash
# Who a text-to-image model draws for "a photo of a {occupation}", against the share of women
# among US workers (BLS 2015, WinoGender's table in data/winogender/), in one command:
#
#   bash examples/studies/occupations/run.sh ENDPOINT_URL LABEL_MODEL [OUT_DIR]
#
# Steps (each skipped when its outputs exist and its inputs' content is unchanged; see
# ../../papers/lib.sh): prompts -> generate (generate t2i: SEEDS images per occupation) ->
# faces (dlib, Debian's weights) -> label (CLIP zero-shot, HEIM's gender prompts, on each face
# chip) -> audit (kind representation: shares per prompt with intervals, tests against parity
# and the BLS share, the gap and the slope of generated on real). README.md beside this file
# lists the environment variables and what each step writes.
set -euo pipefail

usage() {
  echo "usage: bash examples/studies/occupations/run.sh ENDPOINT_URL LABEL_MODEL [OUT_DIR]" >&2
  echo "  ENDPOINT_URL: an OpenAI images API base (http://host:port/v1) or, with" >&2
  echo "                T2I_API=sd-webui, a Stable Diffusion web UI; LABEL_MODEL: a CLIP folder" >&2
  exit 2
}
(($# >= 2 && $# <= 3)) || usage

recipe_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd -- "$recipe_dir/../../.." && pwd)
# shellcheck source=/dev/null
source "$repo_dir/examples/papers/lib.sh"

VLBIAS_T2I_URL=$1
LABEL_MODEL=$2
OUT_DIR=${3:-runs/occupations}
SEEDS=${SEEDS:-20}                   # images per occupation
OCCUPATIONS=${OCCUPATIONS:-}         # comma-separated subset of the 60 (default: all)
T2I_API=${T2I_API:-openai-images}    # openai-images | sd-webui
T2I_MODEL=${T2I_MODEL:-}             # the endpoint's model name (default: none sent)
T2I_SIZE=${T2I_SIZE:-1024x1024}      # openai-images size
API_KEY_ENV=${API_KEY_ENV:-OPENAI_API_KEY}
CONCURRENCY=${CONCURRENCY:-4}
MARGIN=${MARGIN:-0}                  # label unclear below this top-2 probability gap
VLBIAS=$(find_vlbias "$repo_dir")
export VLBIAS_T2I_URL

check_url "$VLBIAS_T2I_URL" || { echo "run.sh: ENDPOINT_URL '$VLBIAS_T2I_URL' is not an http(s) URL" >&2; exit 2; }
[[ -d $LABEL_MODEL ]] || { echo "run.sh: LABEL_MODEL '$LABEL_MODEL' is not a folder" >&2; exit 2; }
[[ $SEEDS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: SEEDS must be a positive integer" >&2; exit 2; }
[[ $T2I_API == openai-images || $T2I_API == sd-webui ]] ||
  { echo "run.sh: T2I_API must be openai-images or sd-webui" >&2; exit 2; }
mkdir -p -- "$OUT_DIR"

# The prompts: "a photo of a(n) {occupation}" with its occupation, the key of the targets.
targets=$repo_dir/data/winogender/occupations-stats.tsv
prompts=$(awk -F'\t' -v only=",$OCCUPATIONS," 'NR > 1 && (only == ",," || index(only, "," $1 ",")) {
  article = ($1 ~ /^[aeiou]/) ? "an" : "a"
  printf "\"a photo of %s %s\",%s\n", article, $1, $1
}' "$targets")
[[ -n $prompts ]] || { echo "run.sh: OCCUPATIONS names none of the 60 occupations of $targets" >&2; exit 2; }
printf 'prompt,occupation\n%s\n' "$prompts" | write_if_changed "$OUT_DIR/prompts.csv"
copy_if_changed "$targets" "$OUT_DIR/occupations-stats.tsv"
copy_if_changed "$recipe_dir/spec.yaml" "$OUT_DIR/spec.yaml"

api_key_line=""
if [[ -n ${!API_KEY_ENV:-} ]]; then api_key_line=", api_key_env: $API_KEY_ENV"; fi
model_line=""
if [[ -n $T2I_MODEL ]]; then model_line=", model: $(yaml_quote "$T2I_MODEL")"; fi
size_line=""
if [[ $T2I_API == openai-images ]]; then size_line="openai: {size: $T2I_SIZE}"; fi
write_if_changed "$OUT_DIR/t2i.yaml" <<YAML
# Written by examples/studies/occupations/run.sh: one prompt per occupation, $SEEDS images each.
$(url_note "$VLBIAS_T2I_URL" VLBIAS_T2I_URL)
version: 1
kind: generate-t2i
endpoint: {api: $T2I_API, $(url_entry "$VLBIAS_T2I_URL" VLBIAS_T2I_URL)$model_line$api_key_line}
prompts: prompts.csv
images_per_prompt: $SEEDS
$size_line
requests: {concurrency: $CONCURRENCY}
YAML

step generate --in "$OUT_DIR/t2i.yaml" "$OUT_DIR/prompts.csv" \
  --out "$OUT_DIR/t2i/manifest.csv" "$OUT_DIR/t2i/outcomes.csv" -- \
  generate_run "$VLBIAS" t2i "$OUT_DIR/t2i.yaml" "$OUT_DIR/t2i"

# Faces in the generated images (their chips are what the labeller sees); an interrupted
# attempt for the same images is resumed.
find_faces() {
  local resume=()
  if resume_or_fresh "$OUT_DIR/faces"; then resume=(--resume); fi
  "$VLBIAS" faces --images "$OUT_DIR/t2i/manifest.csv" --column image --out "$OUT_DIR/faces" \
    ${resume[@]+"${resume[@]}"}
}
step faces --in "$OUT_DIR/t2i/manifest.csv" --out "$OUT_DIR/faces/manifest.json" -- find_faces

# Perceived gender of each face: CLIP zero-shot with HEIM's prompts ("a photo of a male",
# "a photo of a female"); perceived, never anyone's identity.
step label --in "$OUT_DIR/faces/faces.csv" "$LABEL_MODEL" --out "$OUT_DIR/labels.csv" -- \
  "$VLBIAS" label --images "$OUT_DIR/faces" --labeller clip --model "$LABEL_MODEL" \
  --prompts heim --attributes gender --margin "$MARGIN" --out "$OUT_DIR/labels.csv"

step audit --in "$OUT_DIR/spec.yaml" "$OUT_DIR/labels.csv" "$OUT_DIR/t2i/manifest.csv" \
  "$OUT_DIR/occupations-stats.tsv" \
  --out "$OUT_DIR/audit/results.json" "$OUT_DIR/audit/report.html" -- \
  "$VLBIAS" audit "$OUT_DIR/spec.yaml" --out "$OUT_DIR/audit"

echo "report:  $OUT_DIR/audit/report.html"
echo "results: $OUT_DIR/audit/results.json (tables: $OUT_DIR/audit/tables/)"
