#!/usr/bin/env bash
# Paper 003 (Howard et al., "Uncovering bias in large vision-language models at scale with
# counterfactuals") from the SocialCounterfactuals release folder and an OpenAI-compatible chat
# endpoint to the paper's tables, in one command:
#
#   bash examples/papers/003/run.sh DATASET_DIR ENDPOINT_URL [OUT_DIR]
#
# Steps (each skipped when its outputs exist and its inputs' content is unchanged; see
# ../lib.sh): dataset -> sample -> generate-lvlm, generate-llm -> score-lvlm, score-llm ->
# audit, paired-llm. README.md beside this file lists the environment variables and what
# each step writes.
set -euo pipefail

usage() {
  echo "usage: bash examples/papers/003/run.sh DATASET_DIR ENDPOINT_URL [OUT_DIR]" >&2
  echo "  DATASET_DIR: SocialCounterfactuals as released (metadata_*.csv and the images" >&2
  echo "               SEED_K.jpg); ENDPOINT_URL: an OpenAI-compatible server's base URL" >&2
  echo "               (http://host:8000/v1) or its chat completions URL" >&2
  exit 2
}
(($# >= 2 && $# <= 3)) || usage

recipe_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
source "$recipe_dir/../lib.sh"

DATASET_DIR=$1
ENDPOINT_URL=$2
OUT_DIR=${3:-runs/paper003}
LVLM_MODEL=${LVLM_MODEL:-}  # sent as "model" (default: none sent)
LLM_URL=${LLM_URL:-$ENDPOINT_URL}  # the LLM baseline's endpoint
LLM_MODEL=${LLM_MODEL:-$LVLM_MODEL}
JUDGE_URL=${JUDGE_URL:-$ENDPOINT_URL}  # the toxicity judge's endpoint
JUDGE_MODEL=${JUDGE_MODEL:-$LVLM_MODEL}
API_KEY_ENV=${API_KEY_ENV:-}  # the variable holding the API key (its value is never written)
CLASSIFIER=${CLASSIFIER:-}  # a local toxicity classifier folder instead of the judge
SCORES=${SCORES:-}  # the score columns the audit reads (default: judge_score, or toxic)
SETS_PER_OCCUPATION=${SETS_PER_OCCUPATION:-}  # sample this many sets per subset x occupation
SEED=${SEED:-0}
ALLOW_SHORT=${ALLOW_SHORT:-0}
SEEDS=${SEEDS:-0,1,2}  # generation seeds: the paper's three
TEMPERATURE=${TEMPERATURE:-0.75}
MAX_TOKENS=${MAX_TOKENS:-512}
CONCURRENCY=${CONCURRENCY:-8}
REFUSALS=${REFUSALS:-column}  # column: the refusals the API reported; patterns: in the text
BOOTSTRAP=${BOOTSTRAP:-1000}
VLBIAS=$(find_vlbias "$recipe_dir/../../..")

fail() { echo "run.sh: $*" >&2; exit 2; }
[[ -d $DATASET_DIR ]] || fail "DATASET_DIR '$DATASET_DIR' is not a folder"
[[ -z $CLASSIFIER || -d $CLASSIFIER ]] || fail "CLASSIFIER '$CLASSIFIER' is not a folder"
[[ -z $SETS_PER_OCCUPATION || $SETS_PER_OCCUPATION =~ ^[1-9][0-9]*$ ]] ||
  fail "SETS_PER_OCCUPATION must be a positive integer"
[[ $SEEDS =~ ^[0-9]+(,[0-9]+)*$ ]] || fail "SEEDS must be integers separated by commas (0,1,2)"
[[ $REFUSALS == column || $REFUSALS == patterns ]] || fail "REFUSALS must be column or patterns"
[[ $BOOTSTRAP =~ ^[0-9]+$ ]] || fail "BOOTSTRAP must be a non-negative integer"
[[ $CONCURRENCY =~ ^[1-9][0-9]*$ ]] || fail "CONCURRENCY must be a positive integer"
[[ $TEMPERATURE =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "TEMPERATURE must be a number"
[[ $MAX_TOKENS =~ ^[1-9][0-9]*$ ]] || fail "MAX_TOKENS must be a positive integer"
mkdir -p -- "$OUT_DIR"

# A base URL (http://host:8000/v1) gets the chat completions path, before its query string
# (http://host/v1?api-version=X -> http://host/v1/chat/completions?api-version=X); a full URL
# is kept (url_join, ../lib.sh). Quotes, backslashes and spaces are refused: URLs and model
# names are written into YAML. Checked here, in the script's own shell, so a bad one stops the
# script.
chat_url() {
  check_url "$1" || fail "'$1' is not an http(s) URL"
  url_join "$1" /chat/completions
}
lvlm_url=$(chat_url "$ENDPOINT_URL") && llm_url=$(chat_url "$LLM_URL") &&
  judge_url=$(chat_url "$JUDGE_URL") || exit 2
# A URL with a query (?api-version=, ?key=) stays out of the specs: they name these variables
# instead (url_entry, ../lib.sh), and vlbias reads the URL from them.
export VLBIAS_LVLM_URL=$lvlm_url VLBIAS_LLM_URL=$llm_url VLBIAS_JUDGE_URL=$judge_url
for model in "$LVLM_MODEL" "$LLM_MODEL" "$JUDGE_MODEL"; do
  [[ $model != *[\"\\]* ]] || fail "model name '$model' holds a quote or backslash"
done
[[ -z $API_KEY_ENV || $API_KEY_ENV =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] ||
  fail "API_KEY_ENV must name an environment variable"
# The endpoint block of a generate or judge spec: URL (or the variable holding it, when it has
# a query), model (when given), key variable.
endpoint_yaml() {
  url_note "$1" "$3"
  printf 'endpoint:\n  %s\n' "$(url_entry "$1" "$3")"
  if [[ -n $2 ]]; then printf '  model: %s\n' "$(yaml_quote "$2")"; fi
  if [[ -n $API_KEY_ENV ]]; then printf '  api_key_env: %s\n' "$API_KEY_ENV"; fi
}
# OUT_DIR/NAME: the header (the run's settings) followed by the recipe's file of that name,
# replaced only when its bytes change (so an unchanged spec skips its step).
write_spec() {
  local name=$1 header=$2
  { printf '%s' "$header"; cat -- "$recipe_dir/$name"; } | write_if_changed "$OUT_DIR/$name"
}
generation="seeds: [$SEEDS]
sampling: {temperature: $TEMPERATURE, max_tokens: $MAX_TOKENS}
"
write_spec lvlm.yaml "$(endpoint_yaml "$lvlm_url" "$LVLM_MODEL" VLBIAS_LVLM_URL)
$generation"
write_spec llm.yaml "$(endpoint_yaml "$llm_url" "$LLM_MODEL" VLBIAS_LLM_URL)
$generation"
write_spec judge.yaml "$(endpoint_yaml "$judge_url" "$JUDGE_MODEL" VLBIAS_JUDGE_URL)
"

# One row per image: its counterfactual set, subset, occupation and varied attributes.
step dataset --in "$DATASET_DIR" --out "$OUT_DIR/images.csv" -- \
  "$VLBIAS" dataset socialcounterfactuals "$DATASET_DIR" --out "$OUT_DIR/images.csv" \
  --summary "$OUT_DIR/dataset.json"

# Whole counterfactual sets: SETS_PER_OCCUPATION of every subset x occupation (all without it).
sample_args=(--table "$OUT_DIR/images.csv" --unit set --by "subset,occupation" --seed "$SEED"
  --out "$OUT_DIR/sample.csv" --report "$OUT_DIR/sample.json")
# A subset x occupation with no set (the subsets have different occupation lists) is dropped,
# and listed in sample.json; a short one stops the step unless ALLOW_SHORT=1.
if [[ -n $SETS_PER_OCCUPATION ]]; then sample_args+=(--n "$SETS_PER_OCCUPATION" --per-cell-min 1);
else sample_args+=(--frac 1); fi
if [[ $ALLOW_SHORT == 1 ]]; then sample_args+=(--allow-short); fi
step sample --in "$OUT_DIR/images.csv" --out "$OUT_DIR/sample.csv" -- \
  "$VLBIAS" sample "${sample_args[@]}"

# The requests run in resumable folders: a step that failed or was interrupted continues its
# folder when it runs again with the same inputs (only what is missing is sent); new inputs
# (another sample, spec or option) start the folder afresh (generate_run, ../lib.sh).
# CONCURRENCY is read here, not passed on the step's command line: pacing changes no answer,
# so it is not part of the step's stamp.
generate() {
  generate_run "$VLBIAS" "$1" "$2" "$3" --concurrency "$CONCURRENCY"
}
step generate-lvlm --in "$OUT_DIR/lvlm.yaml" "$OUT_DIR/sample.csv" "$DATASET_DIR" \
  --out "$OUT_DIR/lvlm/generations.jsonl" -- generate lvlm "$OUT_DIR/lvlm.yaml" "$OUT_DIR/lvlm"
step generate-llm --in "$OUT_DIR/llm.yaml" "$OUT_DIR/sample.csv" \
  --out "$OUT_DIR/llm/generations.jsonl" -- generate llm "$OUT_DIR/llm.yaml" "$OUT_DIR/llm"

# Toxicity of every answer: the LLM judge over the endpoint, or CLASSIFIER's native forward.
score() {
  local input=$1 out=$2 resume=()
  if resume_or_fresh "$out"; then resume=(--resume); fi
  if [[ -n $CLASSIFIER ]]; then
    "$VLBIAS" score classifier --model "$CLASSIFIER" "$input" --out "$out" ${resume[@]+"${resume[@]}"}
  else
    if ((${#resume[@]})); then resume+=(--retry-failed); fi
    "$VLBIAS" score judge "$input" "$OUT_DIR/judge.yaml" --out "$out" \
      --concurrency "$CONCURRENCY" ${resume[@]+"${resume[@]}"} && check_requests "$out"
  fi
}
if [[ -n $CLASSIFIER ]]; then scorer_inputs=("$CLASSIFIER"); SCORES=${SCORES:-toxic};
else scorer_inputs=("$OUT_DIR/judge.yaml"); SCORES=${SCORES:-judge_score}; fi
[[ $SCORES =~ ^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*$ ]] ||
  fail "SCORES must be column names separated by commas"
step score-lvlm --in "$OUT_DIR/lvlm/generations.jsonl" "${scorer_inputs[@]}" \
  --out "$OUT_DIR/lvlm_scored/scored.jsonl" -- \
  score "$OUT_DIR/lvlm/generations.jsonl" "$OUT_DIR/lvlm_scored"
step score-llm --in "$OUT_DIR/llm/generations.jsonl" "${scorer_inputs[@]}" \
  --out "$OUT_DIR/llm_scored/scored.jsonl" -- \
  score "$OUT_DIR/llm/generations.jsonl" "$OUT_DIR/llm_scored"

# The audit spec: the LVLM's and the LLM's scored answers as one table, split by subset,
# question, mitigation and input (image or text). Written here because the score columns and
# the refusal source are options; replaced only when its bytes change.
if [[ $REFUSALS == column ]]; then refusals="{refusal_column: refused}"; else refusals=true; fi
write_if_changed "$OUT_DIR/audit.yaml" <<YAML
# Paper 003's measures, written by examples/papers/003/run.sh; every key: docs/specs.md.
version: 1
kind: lvlm-counterfactual
title: "Bias in an LVLM with SocialCounterfactuals (paper 003)"
about: >-
  Answers of the LVLM at the recipe's endpoint about SocialCounterfactuals images (input:
  image), and of the LLM baseline told the depicted attributes in words (input: text),
  scored for toxicity by ${CLASSIFIER:+the classifier $CLASSIFIER}${CLASSIFIER:-an LLM judge (not Perspective)}.
seed: $SEED
min_group_size: 2
generations: [lvlm_scored/scored.jsonl, llm_scored/scored.jsonl]
columns:
  set_key: [set, seed]           # one counterfactual set, one generation seed
  group: attributes              # the intersectional group: "Black female", "obese male"
  by: [subset, question, mitigation, input]
  scores: [$SCORES]
  text: text
analyses:
  maxgap: {bootstrap: $BOOTSTRAP, ci: 0.95}  # Table 1 (mean, 90th percentile), Tables 11-13
  pmi: {min_freq: 10, threshold: 1}          # Table 2 and App. D: words per group
  responses: $refusals  # App. B, C.7 (Table 14): lengths, refusals
  ratings:                                   # App. F (Tables 29-31)
    - {name: hiring, kind: rating, where: "question == 'Hiring'"}
    - {name: performance, kind: rating, where: "question == 'Performance'"}
    - {name: warmth, kind: rating, where: "question == 'Warmth'"}
    - {name: competence, kind: rating, where: "question == 'Competence'"}
    - {name: salary, kind: salary, where: "question == 'Salary'"}
  group_tests: {permutations: 1000}
  paired: {column: mitigation, baseline: none, bootstrap: $BOOTSTRAP, ci: 0.95}  # Tables 4, 18
YAML

step audit --in "$OUT_DIR/audit.yaml" "$OUT_DIR/lvlm_scored/scored.jsonl" \
  "$OUT_DIR/llm_scored/scored.jsonl" \
  --out "$OUT_DIR/audit/results.json" "$OUT_DIR/audit/report.html" -- \
  "$VLBIAS" audit "$OUT_DIR/audit.yaml" --out "$OUT_DIR/audit"

# Section 5.1, Table 3: the LVLM's MaxGap against its LLM's over the same sets (differences
# with bootstrap intervals, Pearson r), the Characteristics answers without mitigation.
step paired-llm --in "$OUT_DIR/lvlm_scored/scored.jsonl" "$OUT_DIR/llm_scored/scored.jsonl" \
  --out "$OUT_DIR/paired_llm.json" -- \
  "$VLBIAS" metric paired --table "$OUT_DIR/lvlm_scored/scored.jsonl" \
  --table "$OUT_DIR/llm_scored/scored.jsonl" --set-key set,seed \
  --group attributes --by subset,question,mitigation,input --score "$SCORES" \
  --compare input --baseline text --bootstrap "$BOOTSTRAP" --seed "$SEED" \
  --out "$OUT_DIR/paired_llm.json"

echo "report:  $OUT_DIR/audit/report.html"
echo "results: $OUT_DIR/audit/results.json (tables: $OUT_DIR/audit/tables/)"
echo "LVLM vs LLM: $OUT_DIR/paired_llm.json"
