// Shards of a job: parsing --shard (with Slurm's and Kubernetes' array variables), the two
// membership rules and their record in outputs (include/vlbias/io/run/shard.h).
#include "vlbias/io/run/shard.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"

namespace vlbias {

namespace {

// A whole decimal number, nullopt for anything else (signs, spaces, trailing text).
std::optional<std::size_t> whole_number(std::string_view text) {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::size_t env_number(const EnvLookup& env, const char* name) {
  const std::optional<std::string> text = env(name);
  VLBIAS_CHECK(text.has_value(), UsageError, "--shard auto: {} is not set.", name);
  const std::optional<std::size_t> value = whole_number(*text);
  VLBIAS_CHECK(value.has_value(), UsageError, "--shard auto: {}='{}' is not a whole number.", name,
               *text);
  return *value;
}

void check_count(std::size_t index, std::size_t count, const std::string& source) {
  VLBIAS_CHECK(count >= 1 && count <= kMaxShards, UsageError,
               "{}: the shard count {} is out of range (1 to {}).", source, count, kMaxShards);
  VLBIAS_CHECK(index < count, UsageError,
               "{}: shard {} of {} is out of range (shards are numbered 0 to {}).", source, index,
               count, count - 1);
}

// A Slurm array task (--array=MIN-MAX[:STEP]): its place in the array and the array's size.
Shard slurm_shard(const EnvLookup& env) {
  const std::size_t id = env_number(env, "SLURM_ARRAY_TASK_ID");
  const std::size_t count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
  const std::size_t min = env_number(env, "SLURM_ARRAY_TASK_MIN");
  const std::size_t max = env_number(env, "SLURM_ARRAY_TASK_MAX");
  const std::size_t step =
      env("SLURM_ARRAY_TASK_STEP") ? env_number(env, "SLURM_ARRAY_TASK_STEP") : 1;
  // An array such as --array=0,2,7 has no step that numbers its tasks 0..count-1.
  VLBIAS_CHECK(step >= 1 && max >= min && (max - min) % step == 0 &&
                   (max - min) / step + 1 == count && id >= min && (id - min) % step == 0,
               UsageError,
               "--shard auto: the Slurm array (tasks {} to {}, step {}, {} tasks) is not a range; "
               "submit it as --array=0-{} (each task is one shard).",
               min, max, step, count, count == 0 ? 0 : count - 1);
  Shard shard{(id - min) / step, count,
              fmt::format("Slurm array task {} (SLURM_ARRAY_TASK_ID={}, {} tasks)",
                          (id - min) / step, id, count)};
  return shard;
}

Shard auto_shard(const EnvLookup& env, std::optional<std::size_t> given_count) {
  Shard shard;
  if (env("SLURM_ARRAY_TASK_ID") && given_count) {
    // auto/N: the task id is the shard number, so one task submitted again alone
    // (sbatch --array=5) is still shard 5 of N.
    shard.index = env_number(env, "SLURM_ARRAY_TASK_ID");
    shard.count = *given_count;
    shard.source = fmt::format("Slurm array task {} of --shard auto/{}", shard.index, shard.count);
  } else if (env("SLURM_ARRAY_TASK_ID")) {
    shard = slurm_shard(env);
    // One task alone (a failed task submitted again) is no split of the job: its shard would
    // be "0 of 1", the whole job, written over shard 0's output.
    const std::size_t id = env_number(env, "SLURM_ARRAY_TASK_ID");
    VLBIAS_CHECK(shard.count > 1 || id == 0, UsageError,
                 "--shard auto: this array has one task ({}), so it is no split of the job; "
                 "give --shard auto/N (task ids are shard numbers) or --shard {}/N.",
                 id, id);
  } else if (env("JOB_COMPLETION_INDEX")) {
    shard.index = env_number(env, "JOB_COMPLETION_INDEX");
    VLBIAS_CHECK(given_count || env("VLBIAS_SHARD_COUNT"), UsageError,
                 "--shard auto: JOB_COMPLETION_INDEX={} gives the index but not the count; give "
                 "--shard auto/N or set VLBIAS_SHARD_COUNT to the Job's completions.",
                 shard.index);
    shard.count = given_count ? *given_count : env_number(env, "VLBIAS_SHARD_COUNT");
    shard.source = fmt::format("Kubernetes indexed Job (JOB_COMPLETION_INDEX={}, {} completions)",
                               shard.index, shard.count);
  } else {
    VLBIAS_FAIL(UsageError,
                "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
                "JOB_COMPLETION_INDEX (a Kubernetes indexed Job) is set; give --shard I/N.");
  }
  check_count(shard.index, shard.count, "--shard auto (" + shard.source + ")");
  return shard;
}

}  // namespace

std::optional<std::string> process_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Shard parse_shard(const std::string& text, const EnvLookup& env) {
  const std::size_t slash = text.find('/');
  const std::string head = text.substr(0, slash);
  const std::optional<std::size_t> count =
      slash == std::string::npos ? std::nullopt
                                 : whole_number(std::string_view(text).substr(slash + 1));
  VLBIAS_CHECK(slash == std::string::npos || count.has_value(), UsageError,
               "--shard {}: expected I/N (shard I of N, from 0), auto or auto/N.", text);
  if (head == "auto") return auto_shard(env, count);
  const std::optional<std::size_t> index = whole_number(head);
  VLBIAS_CHECK(index.has_value() && count.has_value(), UsageError,
               "--shard {}: expected I/N (shard I of N, from 0), auto or auto/N.", text);
  const std::string source = "--shard " + text;
  check_count(*index, *count, source);
  return Shard{*index, *count, source};
}

std::size_t shard_of_key(std::string_view key, std::size_t count) {
  const std::string digest = sha256_hex(key);
  std::uint64_t head = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    const char c = digest[i];
    head = head * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return static_cast<std::size_t>(head % count);
}

std::size_t shard_of_chunk(std::size_t chunk, std::size_t count) {
  return chunk % count;
}

Json shard_json(const Shard& shard, const std::string& scheme) {
  return Json{
      {"index", shard.index}, {"count", shard.count}, {"scheme", scheme}, {"source", shard.source}};
}

Shard shard_from_json(const Json& j, const std::string& where) {
  const bool ok = j.is_object() && j.contains("index") && j["index"].is_number_unsigned() &&
                  j.contains("count") && j["count"].is_number_unsigned();
  VLBIAS_CHECK(ok, InputError, "{}: 'shard' is not an object with whole numbers index and count.",
               where);
  Shard shard{j["index"].get<std::size_t>(), j["count"].get<std::size_t>(),
              j.value("source", std::string())};
  VLBIAS_CHECK(shard.count >= 1 && shard.count <= kMaxShards && shard.index < shard.count,
               InputError, "{}: shard {} of {} is out of range.", where, shard.index, shard.count);
  return shard;
}

std::size_t check_shard_set(const std::vector<std::pair<Shard, std::string>>& shards) {
  VLBIAS_CHECK(!shards.empty(), UsageError, "vlbias merge: give the shards after OUT.");
  const std::size_t count = shards[0].first.count;
  std::vector<const std::string*> by_index(count, nullptr);
  for (const auto& [shard, where] : shards) {
    VLBIAS_CHECK(shard.count == count, UsageError,
                 "{} is shard {} of {} but {} is shard {} of {}: merge the shards of one split.",
                 where, shard.index, shard.count, shards[0].second, shards[0].first.index, count);
    const std::string*& slot = by_index[shard.index];
    VLBIAS_CHECK(slot == nullptr, UsageError, "{} and {} are both shard {} of {}; give each once.",
                 slot ? *slot : "", where, shard.index, count);
    slot = &where;
  }
  for (std::size_t i = 0; i < count; ++i) {
    VLBIAS_CHECK(by_index[i] != nullptr, UsageError,
                 "Shard {} of {} is missing: {} shard{} given; merge needs all {}.", i, count,
                 shards.size(), shards.size() == 1 ? "" : "s", count);
  }
  return count;
}

namespace {
std::string brief(const Json& j) {
  std::string text = j.dump();
  return text.size() > 100 ? text.substr(0, 97) + "..." : text;
}
}  // namespace

void check_same_job(const Json& a, const std::string& a_where, const Json& b,
                    const std::string& b_where, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    const Json::json_pointer ptr(key);
    const bool in_a = a.contains(ptr), in_b = b.contains(ptr);
    // Objects compared without their key order: a record rewritten by another tool still agrees.
    const bool same = in_a == in_b && (!in_a || nlohmann::json::parse(a[ptr].dump()) ==
                                                    nlohmann::json::parse(b[ptr].dump()));
    VLBIAS_CHECK(same, UsageError,
                 "{} is not a shard of the job of {}: its {} is {}, not {}; merge the shards of "
                 "one job (the same model, input and options).",
                 b_where, a_where, key.substr(1), in_b ? brief(b[ptr]) : "absent",
                 in_a ? brief(a[ptr]) : "absent");
  }
}

void check_shard_files(const std::vector<std::filesystem::path>& files) {
  namespace fs = std::filesystem;
  std::map<std::pair<dev_t, ino_t>, const fs::path*> seen;
  for (const fs::path& f : files) {
    struct stat st {};
    VLBIAS_CHECK(::lstat(f.c_str(), &st) == 0, InputError, "{}: cannot be examined ({}).",
                 f.string(), std::strerror(errno));
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(f, ec);
      VLBIAS_FAIL(InputError,
                  "{}: is a symbolic link (to {}); merge reads each shard's own files, so copy "
                  "the file into the shard instead of linking it, or re-run the shard.",
                  f.string(), ec ? std::string("?") : target.string());
    }
    VLBIAS_CHECK(S_ISREG(st.st_mode), InputError,
                 "{}: is not a regular file; expected a file the shard wrote.", f.string());
    const auto [it, fresh] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), &f);
    VLBIAS_CHECK(fresh, InputError,
                 "{} and {} are one file (the same inode); each shard's files are its own, so "
                 "re-run the shard that lacks its own.",
                 it->second->string(), f.string());
  }
}

std::filesystem::path expand_shard_path(const std::filesystem::path& path, const Shard& shard) {
  std::string text = path.string();
  const std::string index = std::to_string(shard.index);
  for (std::size_t at = text.find("{shard}"); at != std::string::npos;
       at = text.find("{shard}", at + index.size())) {
    text.replace(at, 7, index);
  }
  return text;
}

}  // namespace vlbias
