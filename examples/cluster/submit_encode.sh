#!/bin/bash
# Submits the encode array and its merge: the merge starts only when every task succeeded.
#   IMAGES=... MODEL=... OUT=... bash examples/cluster/submit_encode.sh [--array=0-63]
# A failed task: re-submit just it (SHARDS=N sbatch --array=<i> encode_array.sbatch: it resumes
# as shard <i> of N), then
# the merge (sbatch merge.sbatch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --export=ALL "$@" "$here/encode_array.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency="afterok:${array%%;*}" "$here/merge.sbatch")
echo "encode array ${array%%;*}, merge $merge (after every task succeeds)"
