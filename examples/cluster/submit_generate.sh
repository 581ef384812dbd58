#!/bin/bash
# Submits the LVLM generation array and its merge: the merge starts only when every task
# succeeded. Then audit the merged answers (vlbias audit, kind lvlm-counterfactual).
#   SPEC=... LVLM=... OUT=... bash examples/cluster/submit_generate.sh [--array=0-15]
# A failed task: re-submit just it (SHARDS=N sbatch --array=<i> generate_lvlm_array.sbatch: it
# resumes its run store as shard <i> of N), then the merge (sbatch merge_runs.sbatch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --export=ALL "$@" "$here/generate_lvlm_array.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency="afterok:${array%%;*}" "$here/merge_runs.sbatch")
echo "generation array ${array%%;*}, merge $merge (after every task succeeds)"
