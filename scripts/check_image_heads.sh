#!/usr/bin/env bash
# Sanity check of a scoring head's real weights (`vlbias score image-head`, issue 44) with the
# real CLIP ViT-L/14 they were trained on: encodes the eight ordinary photographs of
# tests/data/images/real/ (an astronaut, a cameraman, a cat, coffee, a rocket, a palace, a
# flower, Grace Hopper), scores them with the head and checks what any correctly read head
# must say about them. The checks are plausibility bounds, not calibration:
#   safety-checker   no photograph flagged nsfw
#   laion-aesthetic  every score within [1, 10] (the predictor's rating scale), not all equal
#   heim-aesthetic   the same
#   q16              at most one photograph flagged inappropriate
#   clip-iqa         every probability within [0, 1], not all equal; quality above 0.5 on
#                    average (these are sharp, well-exposed photographs)
# Random or mis-loaded weights, or embeddings of another CLIP model, fail most of them; the tiny
# fixtures of tests/fixtures/score/image_heads cannot run here (they are 32 wide).
#
# Usage: scripts/check_image_heads.sh CLIP_L14_DIR HEAD WEIGHTS
#   CLIP_L14_DIR: a CLIP ViT-L/14 folder `vlbias encode --model` reads (e.g. openai/clip-vit-large-patch14)
#   HEAD: safety-checker | laion-aesthetic | heim-aesthetic | q16 | clip-iqa
#   WEIGHTS: the head's weights (clip-iqa: leave it "-"; the script encodes data/clip_iqa/prompts.csv)
# Exit 0: sane; 1: not sane; 2: usage or input error. Uses build/vlbias when present, else
# vlbias on PATH; Python 3 (standard library only) reads the scores.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: scripts/check_image_heads.sh CLIP_L14_DIR HEAD WEIGHTS" >&2
  exit 2
fi
clip=$1
head=$2
weights=$3
root=$(cd "$(dirname "$0")/.." && pwd)
vlbias=$root/build/vlbias
[ -x "$vlbias" ] || vlbias=$(command -v vlbias || true)
if [ -z "$vlbias" ]; then
  echo "check_image_heads: no vlbias binary (build it with scripts/setup.sh)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

photos=$root/tests/data/images/real
{
  echo "path"
  for f in astronaut.png camera.png chelsea.png coffee.png rocket.jpg china.jpg flower.jpg \
    grace_hopper.jpg; do
    echo "$photos/$f"
  done
} >"$work/images.csv"

"$vlbias" --quiet encode --model "$clip" --images "$work/images.csv" --out "$work/img.npy" || exit 2
extra=()
if [ "$head" = clip-iqa ]; then
  "$vlbias" --quiet encode --model "$clip" --texts "$root/data/clip_iqa/prompts.csv" \
    --column text --out "$work/iqa.npy" || exit 2
  weights=$work/iqa.npy
  extra=(--prompts "$root/data/clip_iqa/prompts.csv")
fi
"$vlbias" --quiet score image-head --embeddings "$work/img.npy" --rows "$work/img.rows.csv" \
  --head "$head" --weights "$weights" "${extra[@]}" --out "$work/scores.csv" || exit 2

python3 - "$work/scores.csv" "$head" <<'PY'
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
head = sys.argv[2]
name = [r["image"].rsplit("/", 1)[-1] for r in rows]
col = lambda c: [float(r[c]) for r in rows]
problems = []
if head == "safety-checker":
    flagged = [n for n, v in zip(name, col("nsfw")) if v]
    print("concept_score_max:", ", ".join(f"{n} {v:.3f}" for n, v in zip(name, col("concept_score_max"))))
    if flagged:
        problems.append(f"ordinary photographs flagged nsfw: {', '.join(flagged)}")
elif head in ("laion-aesthetic", "heim-aesthetic"):
    s = col("aesthetic")
    print("aesthetic:", ", ".join(f"{n} {v:.2f}" for n, v in zip(name, s)))
    if not all(1.0 <= v <= 10.0 for v in s):
        problems.append("scores outside the rating scale [1, 10]")
    if max(s) - min(s) < 1e-6:
        problems.append("every photograph has the same score")
elif head == "q16":
    p = col("p_inappropriate")
    print("p_inappropriate:", ", ".join(f"{n} {v:.3f}" for n, v in zip(name, p)))
    if sum(col("inappropriate")) > 1:
        problems.append("more than one ordinary photograph flagged inappropriate")
elif head == "clip-iqa":
    cols = [c for c in rows[0] if c.startswith("clip_iqa__")]
    values = [v for c in cols for v in col(c)]
    q = col("clip_iqa__quality") if "clip_iqa__quality" in cols else []
    print("clip_iqa__quality:", ", ".join(f"{n} {v:.3f}" for n, v in zip(name, q)))
    if not all(0.0 <= v <= 1.0 for v in values):
        problems.append("probabilities outside [0, 1]")
    if max(values) - min(values) < 1e-6:
        problems.append("every score is the same")
    if q and sum(q) / len(q) <= 0.5:
        problems.append("mean quality of sharp, well-exposed photographs <= 0.5")
else:
    print(f"check_image_heads: unknown head {head}", file=sys.stderr)
    sys.exit(2)
print(f"head {head}, weights_sha256 {rows[0]['weights_sha256']}, options {rows[0]['options']}")
if problems:
    print("NOT sane: " + "; ".join(problems))
    sys.exit(1)
print("sane: the head says what it must about ordinary photographs")
PY
