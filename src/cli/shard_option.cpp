// --shard on the job commands (encode, features, generate, score): one option text and one
// reading of it, so every command shards and names its output the same way (io/shard.h).
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/run/shard.h"

namespace vlbias::cli_internal {

void add_shard_option(CLI::App* cmd, std::string& shard, const std::string& unit) {
  cmd->add_option("--shard", shard,
                  "Run shard I of N only (I/N, from 0): the " + unit +
                      ";\n"
                      "auto: the Slurm array task's place in the array (or a Kubernetes indexed\n"
                      "Job's JOB_COMPLETION_INDEX of VLBIAS_SHARD_COUNT); auto/N: shard\n"
                      "SLURM_ARRAY_TASK_ID (or JOB_COMPLETION_INDEX) of N, also for a task\n"
                      "submitted again alone. {shard} in --out becomes I; `vlbias merge` puts the\n"
                      "shards together");
}

Shard shard_and_out(const std::string& shard, std::string& out, bool out_is_folder) {
  if (shard.empty()) {
    VLBIAS_CHECK(out.find("{shard}") == std::string::npos, UsageError,
                 "--out {}: {{shard}} needs --shard.", out);
    return Shard{};
  }
  const Shard s = parse_shard(shard);
  out = expand_shard_path(out, s).string();
  // Each task of an array writes its own folder: make it (a run folder makes itself).
  const std::filesystem::path folder =
      out_is_folder ? std::filesystem::path() : std::filesystem::path(out).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder);
  return s;
}

}  // namespace vlbias::cli_internal
