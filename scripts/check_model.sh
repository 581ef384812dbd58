#!/usr/bin/env bash
# Sanity check of a real toxicity classifier folder (e.g. Detoxify's "original" exported to the
# Hugging Face layout, or unitary/toxic-bert): scores 12 obviously toxic and 12 obviously
# benign sentences with `vlbias score classifier` and says whether the model orders them as a
# toxicity model must. Random or mis-loaded weights fail it; the tiny test models of
# tests/fixtures/classifier fail it too (their scores are meaningless by design).
#
# Usage: scripts/check_model.sh MODEL_DIR [LABEL]
#   LABEL: the score column to read (default: the first of toxicity, toxic, offensive, hate,
#   label_1 the model has). Exit 0: sane (AUC >= 0.9); 1: not sane; 2: usage or input error.
# Uses build/vlbias when present, else vlbias on PATH; Python 3 (standard library only) reads
# the scores.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: scripts/check_model.sh MODEL_DIR [LABEL]" >&2
  exit 2
fi
model=$1
label=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
vlbias=$root/build/vlbias
[ -x "$vlbias" ] || vlbias=$(command -v vlbias || true)
if [ -z "$vlbias" ]; then
  echo "check_model: no vlbias binary (build it with scripts/setup.sh)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/texts.csv" <<'EOF'
kind,text
toxic,You are a worthless idiot and everyone hates you.
toxic,"Shut up, you stupid moron."
toxic,I will find you and beat you until you bleed.
toxic,What a pathetic loser you are.
toxic,"Go to hell, you disgusting pig."
toxic,You are the dumbest person I have ever met.
toxic,Nobody wants you here you ugly freak.
toxic,I hope you die in a fire.
toxic,"You idiot, you ruin everything you touch."
toxic,Get lost you brainless trash.
toxic,"You are a filthy, lying scumbag."
toxic,Everyone thinks you are a stupid joke.
benign,The weather is lovely today.
benign,Thank you for your help with the project.
benign,The train leaves at nine in the morning.
benign,She planted tomatoes in the garden last spring.
benign,Could you pass me the salt please?
benign,The museum opens a new exhibition next week.
benign,He is reading a book about the history of Rome.
benign,We had a pleasant dinner with our neighbours.
benign,The children played football in the park.
benign,Please remember to water the plants.
benign,The library is quiet in the afternoon.
benign,This recipe needs two eggs and a cup of flour.
EOF

"$vlbias" --quiet score classifier --model "$model" "$work/texts.csv" --out "$work/run" || exit 2

python3 - "$work/run/scored.jsonl" "$label" <<'PY'
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
label = sys.argv[2].lower()  # score columns are lower-case
columns = [k for k in rows[0] if k not in ("kind", "text", "classifier_truncated")]
if not label:
    label = next((c for c in ("toxicity", "toxic", "offensive", "hate", "label_1")
                  if c in columns), "")
if label not in columns:
    print(f"check_model: no score column '{label}'; the model's labels are {', '.join(columns)}"
          " (name one: scripts/check_model.sh MODEL_DIR LABEL)", file=sys.stderr)
    sys.exit(2)
toxic = [r[label] for r in rows if r["kind"] == "toxic"]
benign = [r[label] for r in rows if r["kind"] == "benign"]
# AUC: the share of (toxic, benign) pairs the model orders correctly, ties counting half.
pairs = [(t > b) + 0.5 * (t == b) for t in toxic for b in benign]
auc = sum(pairs) / len(pairs)
print(f"label {label}: mean score toxic {sum(toxic) / len(toxic):.4f}, "
      f"benign {sum(benign) / len(benign):.4f}; AUC {auc:.3f} over {len(pairs)} pairs")
if auc >= 0.9:
    print("sane: the model ranks obviously toxic sentences above benign ones")
    sys.exit(0)
print("NOT sane: a real toxicity model ranks these apart (AUC >= 0.9); check that the folder "
      "holds the trained weights and the label")
sys.exit(1)
PY
