#pragma once
// Shards of a job (src/io/run/shard.cpp, docs/scaling.md). `--shard I/N` runs slice I of N of a
// job's manifest, so N processes (a Slurm job array, a Kubernetes indexed Job) share the
// work; `vlbias merge OUT SHARD...` puts their outputs together as one process writes them.
//
// Which items shard I of N holds:
//   encode, features: the manifest cut into the job's checkpoint chunks (--chunk rows); chunk
//     c belongs to shard c mod N (shard_of_chunk). Whole chunks, because the merged embeddings
//     must be byte-identical to one process's: a forward batch of other rows changes the last
//     bits of every row (BLAS blocking), and batches never cross a chunk.
//   request jobs (generate, score): request key k belongs to shard
//     (the first 8 bytes of SHA-256(k), big-endian) mod N (shard_of_key).
// Both are stable when rows are appended to the manifest (an item's shard depends on its own
// chunk or key only), balanced (to one chunk; to sqrt(n) keys), and spread a slow stretch of
// the manifest (large images, long prompts) over every shard instead of giving it to one.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/io/json.h"

namespace vlbias {

// The most shards of one job: a Slurm array's default MaxArraySize is 1001.
inline constexpr std::size_t kMaxShards = 100000;

struct Shard {
  std::size_t index = 0;  // 0 .. count - 1
  std::size_t count = 1;  // 1: the whole job
  std::string source;     // where it came from, for messages ("--shard 2/4", "Slurm array ...")

  bool whole() const { return count == 1; }
};

// An environment variable's value, nullopt when unset (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
// The process's environment (std::getenv).
std::optional<std::string> process_env(const char* name);

// `--shard` as given:
//   "I/N"     shard I of N (0 <= I < N <= kMaxShards);
//   "auto"    a Slurm array task: index (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / STEP,
//             count SLURM_ARRAY_TASK_COUNT (the array must be a range: --array=0-3, 1-8:1);
//             else a Kubernetes indexed Job: JOB_COMPLETION_INDEX with the count from
//             VLBIAS_SHARD_COUNT;
//   "auto/N"  shard SLURM_ARRAY_TASK_ID (or JOB_COMPLETION_INDEX) of N: the task id is the
//             shard number (submit --array=0-(N-1)), so a task submitted again alone
//             (sbatch --array=5) is still shard 5 of N.
// UsageError naming the option or the variables for anything else, an index out of range, an
// array that is not a range, "auto" in a one-task array other than task 0 (that task alone is
// no split: give auto/N), or "auto" outside a job array.
Shard parse_shard(const std::string& text, const EnvLookup& env = process_env);

// The shard of request key `key` among `count` (see above).
std::size_t shard_of_key(std::string_view key, std::size_t count);
// The shard of checkpoint chunk `chunk` among `count`: chunk mod count.
std::size_t shard_of_chunk(std::size_t chunk, std::size_t count);

// What outputs record: {"index", "count", "scheme", "source"}; `scheme` names the rule
// ("chunk mod count" / "sha256(key)[0:8] mod count").
Json shard_json(const Shard& shard, const std::string& scheme);
inline constexpr const char* kChunkScheme = "chunk mod count";
inline constexpr const char* kKeyScheme = "sha256(key)[0:8] big-endian mod count";

// Reads back shard_json (InputError naming `where` when it is not one).
Shard shard_from_json(const Json& j, const std::string& where);

// Merging: the shards given, as (shard, where: its folder or manifest) pairs. UsageError
// unless they are shards 0..N-1 of one N, each once ("Shard 2 of 4 is missing", "A and B are
// both shard 1 of 4"); returns N.
std::size_t check_shard_set(const std::vector<std::pair<Shard, std::string>>& shards);
// UsageError unless the records `a` (of `a_where`) and `b` agree at every JSON pointer of
// `keys` ("/model", "/input/sha256": absent in both is agreement), naming b's shard and the
// first key that differs with both values: shards of one job only.
void check_same_job(const Json& a, const std::string& a_where, const Json& b,
                    const std::string& b_where, const std::vector<std::string>& keys);

// The files a merge reads from its shards (manifests, outputs, rows files, all shards'
// together): InputError unless each is a regular file that is not itself a symbolic link (a
// link to another shard's output passed for this shard's: merge reads each shard's own files,
// so copy a file rather than link it; linked folders are fine), and no two are one file (the
// same device and inode: a hard link, or one shard's file given as another's). Checked before
// any of them is read.
void check_shard_files(const std::vector<std::filesystem::path>& files);

// `path` with every "{shard}" replaced by the shard's index (0 for a whole job): one
// command line for every task of an array (--out shards/{shard}/emb.npy).
std::filesystem::path expand_shard_path(const std::filesystem::path& path, const Shard& shard);

}  // namespace vlbias
