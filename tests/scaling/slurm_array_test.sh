#!/usr/bin/env bash
# vlbias on a real Slurm (issue 26): a job array encodes an image folder in 4 shards, a job
# that depends on it (afterok) merges them, and the merge must equal one process's output byte
# for byte. Usage: slurm_array_test.sh CASE VLBIAS SOURCE_DIR
#   CASE: array        4 array tasks, then the afterok merge;
#         killed-task  task 2 is cancelled (scancel JOB_2) after its first checkpoint, the
#                      others finish; task 2 alone is submitted again with --resume, then the
#                      merge.
#   VLBIAS: the vlbias binary the jobs run.
# Starts the one-node Slurm of scripts/slurm_local.sh (state in $VLBIAS_SLURM_DIR, default
# /tmp/vlbias-slurm) unless it runs already, and stops it at the end if it started it; one test
# at a time holds $VLBIAS_SLURM_DIR.lock. Each case fails after $VLBIAS_SLURM_TEST_TIMEOUT s
# (default 120) and then prints the jobs' logs and the Slurm daemons' logs; its work folder is
# kept.
set -euo pipefail
export LC_ALL=C

[ $# -eq 3 ] || {
  echo "usage: slurm_array_test.sh array|killed-task VLBIAS SOURCE_DIR" >&2
  exit 2
}
test_case=$1
vlbias=$(realpath "$2")
src=$(realpath "$3")
timeout_s=${VLBIAS_SLURM_TEST_TIMEOUT:-120}
slurm_dir=${VLBIAS_SLURM_DIR:-/tmp/vlbias-slurm}
export VLBIAS_SLURM_DIR=$slurm_dir
export SLURM_CONF=$slurm_dir/slurm.conf
# The work folder in memory where there is one: on this project's ext4 disk, deleting the
# 8192 image links of the killed-task case alone takes 15 s; on tmpfs 0.2 s.
tmp_base=${VLBIAS_SLURM_TEST_TMP:-/dev/shm}
[ -d "$tmp_base" ] && [ -w "$tmp_base" ] || tmp_base=${TMPDIR:-/tmp}
work=$(mktemp -d "$tmp_base/vlbias-slurm-test.XXXXXX")
model=$src/tests/fixtures/encode/e2e/hf
images=$work/images
shards=$work/shards
out=$work/out
mkdir -p "$work/logs" "$work/jobs" "$shards"/{0,1,2,3} "$out" "$work/reference"
: >"$work/job_ids"

# ============================ The job commands ============================
# The only lines that name vlbias's commands and flags. Each prints one shell command line;
# the harness runs it in a job script (array tasks see SLURM_ARRAY_TASK_ID etc.) or here.
quote() {
  local line
  printf -v line '%q ' "$@"
  echo "${line% }"
}
encode_args=(--model "$model" --images "$images" --chunk 2 --batch 2)
# Shard $SLURM_ARRAY_TASK_ID of the array (the task's own shard from --shard auto):
shard_command() {
  echo "$(quote "$vlbias" encode "${encode_args[@]}" --shard auto) --out $(quote "$shards")/\$SLURM_ARRAY_TASK_ID/emb.npy"
}
# Shard $1 of 4 again, continuing its checkpoints (a lone job: --shard auto would count 1 task):
resume_command() { quote "$vlbias" encode "${encode_args[@]}" --shard "$1/4" --resume --out "$shards/$1/emb.npy"; }
merge_command() { quote "$vlbias" merge "$out/emb.npy" "$shards"/{0,1,2,3}; }
# One process, the whole folder: the reference.
reference_command() { quote "$vlbias" encode "${encode_args[@]}" --out "$work/reference/emb.npy"; }
# The files that must be byte-identical (merged against reference), by name in out/ and
# reference/; the checkpoint files of shard $1; the manifest line a resumed shard writes.
compared_files=(emb.npy emb.rows.csv)
checkpoint_glob() { echo "$shards/$1/emb.npy.partial/chunk_*.json"; }
resumed_pattern='"resumed_items": [1-9]'
# ==========================================================================

say() { echo "slurm_array_test[$test_case]: $*" >&2; }
started_slurm=false

diagnose() {
  say "FAILED; work folder kept: $work"
  squeue --all 2>&1 | head -n 20 || true
  local id log
  while read -r id; do
    scontrol -o show job "$id" 2>/dev/null | grep -oE '^JobId=[^ ]*|(JobState|Reason|ExitCode|Dependency|StdOut)=[^ ]*' |
      tr '\n' ' ' || true
    echo
  done <"$work/job_ids"
  for log in "$work"/logs/*; do
    [ -f "$log" ] || continue
    echo "--- job log $log"
    tail -n 20 "$log"
  done
  for log in "$slurm_dir"/log/slurmctld.log "$slurm_dir"/log/slurmd.log; do
    [ -f "$log" ] || continue
    echo "--- last lines of $log"
    tail -n 30 "$log"
  done
}

# Ends the test (inside $(...) too: the caller's set -e then ends it); diagnose runs on exit.
fail() {
  say "$*"
  exit 1
}

finish() {
  local rc=$?
  # The clean-up below runs even if the reader of our output has gone (ctest, or | head).
  trap '' PIPE
  set +e
  [ "$rc" -eq 0 ] || diagnose
  local id
  while read -r id; do scancel "$id" 2>/dev/null; done <"$work/job_ids"
  if $started_slurm; then "$src/scripts/slurm_local.sh" stop >/dev/null || true; fi
  [ "$rc" -ne 0 ] || rm -rf "$work"
  exit "$rc"
}
trap finish EXIT

# One test at a time on this machine's Slurm (ctest's RESOURCE_LOCK covers one ctest only).
exec 9>"$slurm_dir.lock"
flock -w "$timeout_s" 9 || fail "another test holds $slurm_dir.lock for over $timeout_s s"
started_at=$SECONDS
deadline=$((SECONDS + timeout_s))

start_slurm() {
  if ! "$src/scripts/slurm_local.sh" status >/dev/null 2>&1; then started_slurm=true; fi
  local t0=$SECONDS
  "$src/scripts/slurm_local.sh" start >"$work/slurm_start.log" 2>&1 ||
    {
      cat "$work/slurm_start.log" >&2
      fail "scripts/slurm_local.sh start failed"
    }
  say "Slurm ready in $((SECONDS - t0)) s ($($started_slurm && echo started here || echo already running))"
}

# The image folder: the 4 fixture images, doubled $1 times in nested copies (hard links; the
# encoder walks folders recursively): 4 * 2^$1 images.
make_images() {
  mkdir -p "$images"
  cp "$src"/tests/fixtures/encode/e2e/images/* "$images/"
  local k
  for ((k = 1; k <= $1; k++)); do
    mv "$images" "$images.half"
    mkdir "$images"
    mv "$images.half" "$images/a"
    cp -al "$images/a" "$images/b"
  done
}

# Writes job script $1 (bash, stops at the first error) that runs command line $2.
job_script() {
  # shellcheck disable=SC2016 # the job expands these, not the harness
  printf '#!/bin/bash\nset -euo pipefail\necho "job $SLURM_JOB_ID (array task ${SLURM_ARRAY_TASK_ID:-none}) on $(hostname -s)"\n%s\n' "$2" >"$work/jobs/$1.sh"
  echo "$work/jobs/$1.sh"
}

# sbatch with the test's folder and logs; prints the job id and adds it to $work/job_ids (the
# jobs cancelled at the end, so that a failed test leaves none queued).
submit() {
  local name=$1
  shift
  local id log="$work/logs/%x_%j.out"
  [[ "$*" != *--array=* ]] || log="$work/logs/%x_%A_%a.out"
  id=$(sbatch --parsable --job-name="vlbias-$name" --chdir="$work" --output="$log" \
    --kill-on-invalid-dep=yes "$@") || fail "sbatch $name failed"
  id=${id%%;*}
  echo "$id" >>"$work/job_ids"
  echo "$id"
}

# Waits until job $1 (all its array tasks) has left squeue (squeue answers nothing, or that
# it no longer knows the job).
wait_gone() {
  local listed
  while true; do
    if listed=$(squeue --noheader --jobs="$1" 2>&1); then
      [ -n "$listed" ] || return 0
    elif grep -q "Invalid job id" <<<"$listed"; then
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "job $1 ($2) still queued or running after $timeout_s s"
    sleep 0.2
  done
}

run_reference() {
  bash -c "$(reference_command)" >"$work/logs/reference.out" 2>&1 ||
    fail "the one-process reference run failed (log: $work/logs/reference.out)"
}

check_merged() {
  local f
  for f in "${compared_files[@]}"; do
    [ -f "$out/$f" ] || fail "the merge wrote no $out/$f"
    cmp "$work/reference/$f" "$out/$f" || fail "merged $f differs from the one-process run's"
  done
  say "merged ${compared_files[*]} equal the one-process run's byte for byte"
}

case_array() {
  make_images 2
  local array merge t0=$SECONDS
  array=$(submit shard --array=0-3 "$(job_script shard "$(shard_command)")")
  merge=$(submit merge --dependency="afterok:$array" "$(job_script merge "$(merge_command)")")
  say "submitted array $array (4 tasks) and merge $merge (afterok:$array)"
  run_reference
  wait_gone "$merge" merge
  wait_gone "$array" shards
  say "array and merge done in $((SECONDS - t0)) s"
  local i
  for i in 0 1 2 3; do [ -f "$shards/$i/emb.npy" ] || fail "array task $i wrote no $shards/$i/emb.npy"; done
  check_merged
}

case_killed_task() {
  # 8192 images in chunks of 2: each shard has 1024 checkpoints, so task 2 is still at work
  # when its first checkpoint appears and scancel reaches it.
  make_images 11
  local array t0=$SECONDS
  array=$(submit shard --array=0-3 "$(job_script shard "$(shard_command)")")
  say "submitted array $array (4 tasks)"
  # Polled with builtins only (a glob, and read's timeout as a 10 ms sleep): a fork costs
  # milliseconds here, and the shard goes on writing checkpoints until scancel reaches it.
  local glob seen=()
  glob=$(checkpoint_glob 2)
  mkfifo "$work/tick"
  exec 8<>"$work/tick"
  shopt -s nullglob
  until [ ${#seen[@]} -gt 0 ]; do
    [ "$SECONDS" -lt "$deadline" ] || fail "task 2 wrote no checkpoint in $timeout_s s"
    [ ! -f "$shards/2/emb.npy" ] || fail "task 2 finished before its checkpoints were seen"
    read -r -t 0.01 -u 8 || true
    # shellcheck disable=SC2206 # the glob is meant to expand
    seen=($glob)
  done
  shopt -u nullglob
  exec 8>&-
  scancel "${array}_2"
  say "cancelled task ${array}_2 after its first checkpoint"
  wait_gone "$array" shards
  [ ! -f "$shards/2/emb.npy" ] || fail "task 2 finished before scancel reached it: give it more images"
  local kept i
  kept=$(compgen -G "$glob" | wc -l)
  for i in 0 1 3; do [ -f "$shards/$i/emb.npy" ] || fail "array task $i wrote no $shards/$i/emb.npy"; done
  say "task 2 left $kept checkpoints; tasks 0, 1, 3 finished"
  local again merge
  again=$(submit resume "$(job_script resume "$(resume_command 2)")")
  merge=$(submit merge --dependency="afterok:$again" "$(job_script merge "$(merge_command)")")
  say "submitted task 2 again as $again (--resume) and merge $merge (afterok:$again)"
  run_reference
  wait_gone "$merge" merge
  say "kill, resubmission and merge done in $((SECONDS - t0)) s"
  grep -Eq "$resumed_pattern" "$shards/2/emb.manifest.json" ||
    fail "shard 2's manifest does not say it resumed ($resumed_pattern)"
  check_merged
}

[ -x "$vlbias" ] || fail "$vlbias is not an executable"
command -v sbatch >/dev/null || fail "sbatch not found: install Slurm with scripts/setup.sh --deps-only --test-deps"
start_slurm
case "$test_case" in
  array) case_array ;;
  killed-task) case_killed_task ;;
  *) fail "unknown case $test_case (expected array, killed-task)" ;;
esac
say "passed in $((SECONDS - started_at)) s"
