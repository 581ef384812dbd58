#!/usr/bin/env bash
# A stand-in for the vlbias binary in tests/scaling/slurm_array_test.sh: the two commands a
# Slurm job array runs, with vlbias's command lines and file layout but no model, so the
# harness's Slurm side (array, afterok, scancel, resubmission) is tested on its own:
#   stand_in_vlbias.sh encode --model M --images DIR --out OUT.npy [--shard I/N|auto]
#                             [--chunk C] [--batch B] [--resume]
#   stand_in_vlbias.sh merge OUT.npy SHARD_DIR...
# encode lists DIR's images (recursively, sorted by relative path), cuts them into chunks of C
# and keeps chunk c when c mod N == I, as vlbias does (include/vlbias/io/shard.h). Each chunk
# is written to OUT.partial/chunk_NNNNNN.npy then chunk_NNNNNN.json (the checkpoint); a
# partial folder is continued only with --resume. The "embedding" of an item is the line
# "INPUT_ROW PATH". When done: OUT, OUT's stem.rows.csv and .manifest.json; the partial folder
# goes. merge puts the shards' rows back in input order. Each chunk takes
# $VLBIAS_STAND_IN_CHUNK_SECONDS (default 0.001) more.
set -euo pipefail
export LC_ALL=C

fail() {
  echo "stand_in_vlbias: $*" >&2
  exit 2
}

encode() {
  local images="" out="" shard="0/1" chunk=256 resume=false
  while [ $# -gt 0 ]; do
    case "$1" in
      --model | --batch) shift 2 ;;
      --images) images=$2 && shift 2 ;;
      --out) out=$2 && shift 2 ;;
      --shard) shard=$2 && shift 2 ;;
      --chunk) chunk=$2 && shift 2 ;;
      --resume) resume=true && shift ;;
      *) fail "encode: unknown option $1" ;;
    esac
  done
  if [ ! -d "$images" ] || [ -z "$out" ]; then fail "encode needs --images DIR and --out FILE"; fi
  if [ "$shard" = auto ]; then
    [ -n "${SLURM_ARRAY_TASK_ID:-}" ] || fail "--shard auto outside a Slurm job array"
    shard="$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))/$SLURM_ARRAY_TASK_COUNT"
  fi
  local index=${shard%/*} count=${shard#*/}
  local partial=$out.partial stem=${out%.npy}
  [ -d "$(dirname "$out")" ] || fail "--out $out: the folder $(dirname "$out") does not exist"
  if [ -d "$partial" ] && ! $resume; then fail "$partial exists: continue it with --resume"; fi
  mkdir -p "$partial"
  local -a items
  mapfile -t items < <(cd "$images" && find . -type f \( -name '*.jpg' -o -name '*.png' \) | sed 's|^\./||' | sort)
  local n=${#items[@]} c name resumed=0 rows=0
  # Each chunk takes $pause s more (about vlbias's own time for a chunk of 2 images here):
  # read's timeout on a FIFO nothing writes to, a pause without a process per chunk.
  local pause=${VLBIAS_STAND_IN_CHUNK_SECONDS:-0.001} fifo
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  exec 7<>"$fifo"
  rm -f "$fifo"
  local chunks=$(((n + chunk - 1) / chunk))
  for ((c = index; c < chunks; c += count)); do
    printf -v name 'chunk_%06d' "$c"
    local first=$((c * chunk)) last=$(((c + 1) * chunk))
    [ "$last" -le "$n" ] || last=$n
    if [ -f "$partial/$name.json" ]; then
      resumed=$((resumed + last - first))
      continue
    fi
    read -r -t "$pause" -u 7 || true
    local i
    for ((i = first; i < last; i++)); do echo "$i ${items[i]}"; done >"$partial/$name.npy"
    echo '{"failed": []}' >"$partial/$name.json"
  done
  local -a parts=()
  for ((c = index; c < chunks; c += count)); do
    printf -v name 'chunk_%06d' "$c"
    parts+=("$partial/$name.npy")
  done
  cat /dev/null "${parts[@]}" >"$out.new"
  mv "$out.new" "$out"
  rows=$(wc -l <"$out")
  awk 'BEGIN { print "row,input_row,path" } { print NR - 1 "," $1 "," $2 }' "$out" >"$stem.rows.csv"
  printf '{"complete": true, "rows": %d, "resumed_items": %d, "shard": {"index": %d, "count": %d}}\n' \
    "$rows" "$resumed" "$index" "$count" >"$stem.manifest.json"
  rm -rf "$partial"
}

merge() {
  [ $# -ge 2 ] || fail "merge needs OUT.npy and shard folders"
  local out=$1 dir
  shift
  local stem=${out%.npy}
  [ -d "$(dirname "$out")" ] || fail "merge: the folder $(dirname "$out") does not exist"
  for dir in "$@"; do
    grep -q '"complete": true' "$dir/emb.manifest.json" 2>/dev/null || fail "merge: $dir holds no complete shard"
    grep -q "\"count\": $#}" "$dir/emb.manifest.json" || fail "merge: $dir is a shard of another count than $#"
  done
  local seen
  seen=$(for dir in "$@"; do grep -o '"index": [0-9]*' "$dir/emb.manifest.json"; done | sort -u | wc -l)
  [ "$seen" -eq $# ] || fail "merge: the shards' indices overlap"
  for dir in "$@"; do cat "$dir/emb.npy"; done | sort -n -k1,1 >"$out"
  awk 'BEGIN { print "row,input_row,path" } { print NR - 1 "," $1 "," $2 }' "$out" >"$stem.rows.csv"
  printf '{"complete": true, "rows": %d, "shards": %d}\n' "$(wc -l <"$out")" $# >"$stem.manifest.json"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
  encode) encode "$@" ;;
  merge) merge "$@" ;;
  *) fail "usage: stand_in_vlbias.sh encode|merge ..." ;;
esac
