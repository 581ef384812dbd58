#!/bin/bash
# The cost of sharding: one encode job run as one process, then as N shards run one after
# another (each with the same threads) and merged. The shards and the merge should cost the
# one-process time plus N model loads and input listings; this measures how much that is, and
# checks the merge gives the one-process bytes. Prints one JSON line (docs/scaling.md).
#
#   /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32   # ViT-B/32 shape
#   bash bench/shard_overhead.sh /tmp/clip-b32 [IMAGES=512] [N=4] [THREADS=nproc] [CHUNK=32]
#
# The images cycle over the five test photographs of tests/fixtures/encode/inception (50x80
# to 403x331). Run it on an otherwise idle machine: it prints the load average.
set -euo pipefail
model=${1:?usage: bench/shard_overhead.sh MODEL_DIR [IMAGES] [N] [THREADS]}
images=${2:-512}
n=${3:-4}
threads=${4:-$(nproc)}
chunk=${5:-32}
vlbias=${VLBIAS:-build/vlbias}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=$(cd tests/fixtures/encode/inception/images && pwd)
mapfile -t photos < <(ls "$src")
{
  echo path
  for ((i = 0; i < images; i++)); do echo "$src/${photos[i % ${#photos[@]}]}"; done
} >"$work/images.csv"

# run NAME CMD...: wall seconds and peak RSS (MiB) of one command, into $work/NAME.time
run() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@"
}
encode=("$vlbias" --quiet --threads "$threads" encode --model "$model" --images "$work/images.csv" --chunk "$chunk")

mkdir -p "$work/single"
run single "${encode[@]}" --out "$work/single/emb.npy"
for ((i = 0; i < n; i++)); do
  run "shard$i" "${encode[@]}" --shard "$i/$n" --out "$work/shards/{shard}/emb.npy"
done
shard_dirs=()
for ((i = 0; i < n; i++)); do shard_dirs+=("$work/shards/$i"); done
run merge "$vlbias" --quiet merge "$work/merged/emb.npy" "${shard_dirs[@]}"
cmp -s "$work/merged/emb.npy" "$work/single/emb.npy" && cmp -s "$work/merged/emb.rows.csv" "$work/single/emb.rows.csv" &&
  identical=true || identical=false

read -r single_s single_mib <"$work/single.time"
read -r merge_s merge_mib <"$work/merge.time"
shards_s=0
max_shard_s=0
for ((i = 0; i < n; i++)); do
  read -r s _ <"$work/shard$i.time"
  shards_s=$(awk -v a="$shards_s" -v b="$s" 'BEGIN { print a + b }')
  max_shard_s=$(awk -v a="$max_shard_s" -v b="$s" 'BEGIN { print (b > a ? b : a) }')
done
awk -v images="$images" -v chunk="$chunk" -v n="$n" -v threads="$threads" -v single="$single_s" \
  -v single_mib="$single_mib" -v shards="$shards_s" -v max_shard="$max_shard_s" \
  -v merge="$merge_s" -v merge_mib="$merge_mib" -v identical="$identical" \
  -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
  printf "{\"images\": %d, \"chunk\": %d, \"shards\": %d, \"threads\": %d, \"single_s\": %.2f, ", images, chunk, n, threads, single
  printf "\"single_images_per_s\": %.2f, \"single_peak_mib\": %d, ", images / single, single_mib / 1024
  printf "\"shards_total_s\": %.2f, \"slowest_shard_s\": %.2f, \"merge_s\": %.2f, ", shards, max_shard, merge
  printf "\"merge_peak_mib\": %d, \"overhead\": %.3f, ", merge_mib / 1024, (shards + merge) / single - 1
  printf "\"merged_identical\": %s, \"load_average\": %s}\n", identical, load
}'
