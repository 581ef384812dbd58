// Merging the run folders of a sharded request job (generate.h, merge_run_shards): the
// shards' run.json checked against each other, the job rebuilt from run.json's `job`, then
// the kind's own job run with control.merge, whose RunFolder::merge fills the store from the
// shards' stores instead of sending.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/run/shard.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace generate_internal;

namespace generate_internal {

JobSummary RunFolder::merge(const RequestJob& job) {
  flush();
  JobSummary summary;
  summary.kind = kind_;
  summary.added = added_;
  const std::vector<fs::path>& shards = control_.merge->shards;
  const std::size_t count = shards.size();
  std::vector<RequestRecord> batch;
  for (std::size_t s = 0; s < count; ++s) {
    const fs::path& dir = shards[s];
    const RunLock lock(dir);  // a shard still running is refused here
    const RunStore shard_store(dir / "store.sqlite", fingerprint_of(s, count));
    const std::string where = dir.string();
    shard_store.for_each([&](const RequestRecord& rec) {
      VLBIAS_CHECK(rec.status != RequestStatus::Pending, InputError,
                   "{}: request '{}' is still pending; finish this shard (--resume) before "
                   "merging",
                   where, rec.key);
      const std::size_t owner = shard_of_key(group_(rec.key), count);
      VLBIAS_CHECK(owner == s, InputError,
                   "{}: holds request '{}', which belongs to shard {} of {}, not to this "
                   "shard {}",
                   where, rec.key, owner, count, s);
      job.merge_files(dir, rec);
      batch.push_back(rec);
      if (batch.size() >= kBatch) {
        store_->restore(batch, where);
        batch.clear();
      }
    });
    store_->restore(batch, where);
    batch.clear();
  }
  const std::vector<std::string> missing = store_->pending(1);
  if (!missing.empty()) {
    const std::size_t owner = shard_of_key(group_(missing[0]), count);
    VLBIAS_FAIL(InputError,
                "{}: lacks request '{}' of its shard {} of {} (a store of an earlier manifest?); "
                "run it with --resume before merging",
                shards[owner].string(), missing[0], owner, count);
  }
  finish_summary(summary);
  return summary;
}

}  // namespace generate_internal

namespace {

// One shard folder as its run.json describes it.
struct ShardRun {
  fs::path dir;
  Json run;
  Shard shard;
};

ShardRun read_shard_run(const fs::path& dir) {
  const std::string where = dir.string();
  VLBIAS_CHECK(fs::is_directory(dir), InputError, "{}: is not a folder", where);
  const fs::path run_json = dir / "run.json";
  VLBIAS_CHECK(fs::is_regular_file(run_json) && fs::is_regular_file(dir / "store.sqlite"),
               InputError,
               "{}: no run.json and store.sqlite (not a finished run of generate or score: "
               "finish it with --resume)",
               where);
  ShardRun out{dir, parse_json(read_file_text(run_json, "a run.json"), where + "/run.json"), {}};
  const Json& j = out.run;
  const auto is = [&](const char* key, bool (Json::*type)() const noexcept) {
    return j.is_object() && j.contains(key) && (j[key].*type)();
  };
  VLBIAS_CHECK(is("kind", &Json::is_string) && is("job", &Json::is_object) &&
                   is("parameters", &Json::is_object) && is("inputs", &Json::is_array) &&
                   j.contains("shard"),
               InputError,
               "{}/run.json: not a run.json of a vlbias request job (no kind, job, parameters, "
               "inputs or shard)",
               where);
  for (const Json& input : j["inputs"]) {
    VLBIAS_CHECK(input.is_object() && input.contains("sha256") && input["sha256"].is_string(),
                 InputError, "{}/run.json: an input without its sha256", where);
  }
  out.shard = shard_from_json(j["shard"], where + "/run.json");
  return out;
}

// The first member of `keys` where the two run.json differ, "" when none.
std::string first_difference(const ShardRun& a, const ShardRun& b) {
  for (const char* key : {"kind", "job", "parameters"}) {
    if (a.run[key] != b.run[key]) return fmt::format("its {}", key);
  }
  const Json& x = a.run["inputs"];
  const Json& y = b.run["inputs"];
  if (x.size() != y.size()) return "its inputs";
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i]["sha256"] != y[i]["sha256"])
      return fmt::format("the sha256 of its input {}", x[i].value("path", std::to_string(i)));
  }
  if (a.shard.count != b.shard.count) return "the shard count";
  if (a.run["shard"].value("input_rows", Json()) != b.run["shard"].value("input_rows", Json()))
    return "the input's rows";
  return "";
}

// The shard folders in shard order: every index of the first shard's count exactly once.
std::vector<fs::path> in_shard_order(const std::vector<ShardRun>& runs) {
  const std::size_t count = runs[0].shard.count;
  std::vector<std::optional<std::size_t>> at(count);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::size_t index = runs[i].shard.index;
    VLBIAS_CHECK(!at[index], InputError, "{}: is shard {} of {} as {} is; give each shard once",
                 runs[i].dir.string(), index, count, runs[*at[index]].dir.string());
    at[index] = i;
  }
  std::vector<fs::path> dirs;
  for (std::size_t index = 0; index < count; ++index) {
    VLBIAS_CHECK(at[index].has_value(), InputError,
                 "shard {} of {} is missing: none of the {} folders given (the first: {}) is it",
                 index, count, runs.size(), runs[0].dir.string());
    dirs.push_back(runs[*at[index]].dir);
  }
  return dirs;
}

// The job `read` rebuilds from run.json's `job`, as a merge; InputError naming the shard when
// the record has another shape.
template <typename Job, typename Read>
Job rebuilt(const ShardRun& first, const MergeSources& sources, Read read, bool with_spec) {
  Job job;
  try {
    job = read(first.run["job"]);
  } catch (const Json::exception& e) {
    VLBIAS_FAIL(InputError, "{}/run.json: its job is not what vlbias writes ({})",
                first.dir.string(), e.what());
  }
  job.control.merge = sources;
  if constexpr (requires { job.spec_text; }) {
    if (with_spec) job.spec_text = first.run.value("spec", std::string());
  }
  return job;
}

// The kind's job rebuilt from run.json, run as a merge.
JobSummary merge_kind(const ShardRun& first, const MergeSources& sources, const fs::path& out) {
  const std::string kind = first.run["kind"].get<std::string>();
  const bool spec = first.run.contains("spec") && first.run["spec"].is_string();
  if (kind == "generate-lvlm" || kind == "generate-llm")
    return generate_lvlm(rebuilt<LvlmJob>(first, sources, lvlm_job_from_json, spec), out);
  if (kind == "generate-t2i")
    return generate_t2i(rebuilt<T2iJob>(first, sources, t2i_job_from_json, spec), out);
  if (kind == "score-perspective") {
    return score_perspective(
        rebuilt<PerspectiveJob>(first, sources, perspective_job_from_json, false), out);
  }
  if (kind == "score-moderation") {
    return score_moderation(rebuilt<ModerationJob>(first, sources, moderation_job_from_json, false),
                            out);
  }
  if (kind == "score-judge")
    return score_judge(rebuilt<JudgeJob>(first, sources, judge_job_from_json, spec), out);
  VLBIAS_FAIL(InputError, "{}/run.json: kind '{}' is no request job that merges",
              first.dir.string(), kind);
}

}  // namespace

bool is_request_run(const fs::path& dir) {
  return fs::is_regular_file(dir / "store.sqlite");
}

JobSummary merge_run_shards(const fs::path& out_dir, const std::vector<fs::path>& shard_dirs) {
  VLBIAS_CHECK(!shard_dirs.empty(), UsageError, "merge needs at least one shard folder");
  std::vector<ShardRun> runs;
  for (const fs::path& dir : shard_dirs) {
    std::error_code ec;
    VLBIAS_CHECK(!fs::equivalent(dir, out_dir, ec), UsageError,
                 "{}: is the merge's output folder too; merge into a new folder", dir.string());
    runs.push_back(read_shard_run(dir));
  }
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const std::string difference = first_difference(runs[0], runs[i]);
    VLBIAS_CHECK(difference.empty(), InputError,
                 "{}: is a shard of another job than {} ({} differs); merge the shards of one job",
                 runs[i].dir.string(), runs[0].dir.string(), difference);
  }
  MergeSources sources;
  sources.shards = in_shard_order(runs);
  for (const Json& input : runs[0].run["inputs"])
    sources.input_sha256.push_back(input["sha256"].get<std::string>());
  const fs::path store = out_dir / "store.sqlite";
  VLBIAS_CHECK(!fs::exists(store), UsageError,
               "{} already holds a run ({}); merge into a new folder", out_dir.string(),
               store.string());
  try {
    return merge_kind(runs[0], sources, out_dir);
  } catch (...) {
    // A refused merge leaves no partial store behind, so the same command runs again once
    // the shard is mended.
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(store.string() + suffix, ec);
    throw;
  }
}

}  // namespace vlbias
