// `vlbias merge` for score classifier shards: N run folders -> the scored.jsonl one process
// writes. Shard I holds the checkpoint chunks c with c mod N = I (io/shard.h), each scored in
// the batches of a one-process run, and writes its rows in input order; so chunk c's lines are
// the next chunk_rows(c) lines of shard c mod N, copied as they are.
#include <algorithm>
#include <fstream>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/score/classifier_job.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

struct ShardRun {
  fs::path dir;
  Json manifest;
  Shard shard;
};

std::size_t whole_at(const Json& j, const char* pointer, const fs::path& file) {
  const Json::json_pointer ptr(pointer);
  VLBIAS_CHECK(j.contains(ptr) && j[ptr].is_number_unsigned(), InputError,
               "{}: {} is not a whole number.", file.string(), pointer + 1);
  return j[ptr].get<std::size_t>();
}

double number_at(const Json& j, const char* pointer) {
  const Json::json_pointer ptr(pointer);
  return j.contains(ptr) && j[ptr].is_number() ? j[ptr].get<double>() : 0.0;
}

ShardRun read_shard_run(const fs::path& dir) {
  const fs::path file = dir / "manifest.json";
  VLBIAS_CHECK(fs::is_regular_file(file), InputError,
               "{}: holds no manifest.json; is the shard finished?", dir.string());
  check_shard_files({file, dir / "scored.jsonl"});
  ShardRun s{
      dir, parse_json(read_file_text(file, "a score classifier manifest"), file.string()), {}};
  const Json& m = s.manifest;
  VLBIAS_CHECK(m.is_object() && m.value("command", "") == "score classifier" &&
                   m.value("complete", false) == true,
               InputError, "{}: not the manifest of a finished score classifier run.",
               file.string());
  VLBIAS_CHECK(m.contains("shard"), InputError,
               "{}: not a shard (its manifest has no 'shard': it was written without --shard).",
               file.string());
  s.shard = shard_from_json(m["shard"], file.string());
  whole_at(m, "/input/rows", file);
  whole_at(m, "/chunk", file);
  whole_at(m, "/shard/items", file);
  VLBIAS_CHECK(m["shard"].contains("scored_sha256") && m["shard"]["scored_sha256"].is_string(),
               InputError,
               "{}: written by an older vlbias (its 'shard' has no 'scored_sha256', which merge "
               "checks the shard's rows by); re-run the shard with this version.",
               file.string());
  return s;
}

// Before the manifests' input.rows sizes anything (a loop over 2^62 rows' chunks would never
// end): each shard's own count ("shard": "items", checked against its chunks by the merge) is
// at most the bytes of its scored.jsonl (a row is a line), and the counts add up to the rows.
void check_row_counts(const std::vector<ShardRun>& shards, std::size_t rows) {
  std::size_t total = 0;
  for (const ShardRun& s : shards) {
    const std::size_t items = s.manifest["shard"]["items"].get<std::size_t>();
    const std::uintmax_t bytes = fs::file_size(s.dir / "scored.jsonl");
    VLBIAS_CHECK(items <= bytes, InputError,
                 "{}: its manifest says the shard holds {} rows, more than the {} bytes of its "
                 "scored.jsonl; a manifest was edited.",
                 s.dir.string(), items, bytes);
    total += items;
  }
  VLBIAS_CHECK(total == rows, InputError,
               "{}: input.rows is {}, but the {} shards hold {} rows; a manifest was edited or a "
               "shard is not whole.",
               shards[0].dir.string(), rows, shards.size(), total);
}

// Each shard's scored.jsonl is the one it wrote (its SHA-256 as the shard's manifest records
// it): no row edited, moved, repeated or taken from another shard's file.
void check_scored_files(const std::vector<ShardRun>& shards) {
  for (const ShardRun& s : shards) {
    const fs::path scored = s.dir / "scored.jsonl";
    const std::string want = s.manifest["shard"]["scored_sha256"].get<std::string>();
    const std::string got = sha256_file(scored.string());
    VLBIAS_CHECK(got == want, InputError,
                 "{}: is not the file shard {} of {} wrote (its SHA-256 is {}..., the shard's "
                 "manifest records {}...): it was edited, replaced or swapped; re-run the shard.",
                 scored.string(), s.shard.index, s.shard.count, got.substr(0, 16),
                 want.substr(0, 16));
  }
}

const std::vector<std::string> kSameJob = {
    "/vlbias_version", "/command",           "/model",  "/tokenizer",        "/input/sha256",
    "/input/rows",     "/input/text_column", "/output", "/throughput/batch", "/chunk"};

// `path` after the input policy (core/input_file.h): a pipe or device is refused before the
// stream opens it (open() on a named pipe would wait for a writer).
const fs::path& scored_jsonl_checked(const fs::path& path) {
  (void)check_input_file(path.string(), "a shard's scored.jsonl", PipeRule::Refuse);
  return path;
}

// One line of a shard's scored.jsonl at a time (each JSON line holds no raw newline).
class LineReader {
 public:
  explicit LineReader(const fs::path& path)
      : path_(path), in_(scored_jsonl_checked(path), std::ios::binary) {
    VLBIAS_CHECK(in_.good(), InputError, "{}: cannot be read.", path.string());
  }
  void copy_lines(std::size_t count, AtomicWriter& out) {
    for (std::size_t i = 0; i < count; ++i) {
      VLBIAS_CHECK(std::getline(in_, line_) && !line_.empty(), InputError,
                   "{}: holds fewer rows than its chunks ({} read); it is not the shard its "
                   "manifest describes.",
                   path_.string(), read_);
      line_ += '\n';
      out.write(line_.data(), line_.size());
      ++read_;
    }
  }
  void expect_end() {
    VLBIAS_CHECK(!std::getline(in_, line_), InputError, "{}: holds more rows than its chunks ({}).",
                 path_.string(), read_);
  }

 private:
  fs::path path_;
  std::ifstream in_;
  std::string line_;
  std::size_t read_ = 0;
};

Json merged_manifest(const std::vector<ShardRun>& shards) {
  Json m = shards[0].manifest;
  m["created_utc"] = utc_now();
  std::size_t truncated = 0, empty = 0, resumed = 0;
  double seconds = 0.0, tokens = 0.0, fresh = 0.0;
  Json from = Json::array();
  for (const ShardRun& s : shards) {
    truncated += s.manifest.value("truncated", std::size_t{0});
    empty += s.manifest.value("empty_texts", std::size_t{0});
    resumed += s.manifest.value("resumed_rows", std::size_t{0});
    const double sec = number_at(s.manifest, "/throughput/seconds");
    seconds += sec;
    tokens += number_at(s.manifest, "/throughput/tokens_per_second") * sec;
    fresh += number_at(s.manifest, "/throughput/texts_per_second") * sec;
    from.push_back(Json{{"folder", fs::absolute(s.dir).lexically_normal().string()},
                        {"index", s.shard.index},
                        {"rows", s.manifest["shard"]["items"]},
                        {"seconds", sec}});
  }
  m["truncated"] = truncated;
  m["empty_texts"] = empty;
  m["resumed_rows"] = resumed;
  // The shards' own scoring time summed (CPU-seconds of the split, not its wall time).
  m["throughput"]["seconds"] = seconds;
  m["throughput"]["texts_per_second"] = fresh / std::max(seconds, 1e-9);
  m["throughput"]["tokens_per_second"] = tokens / std::max(seconds, 1e-9);
  m.erase("shard");
  m["merged_from"] = from;
  return m;
}

}  // namespace

ClassifierMergeResult merge_classifier_shards(const fs::path& out_dir,
                                              const std::vector<fs::path>& dirs) {
  VLBIAS_CHECK(!dirs.empty(), UsageError, "vlbias merge: give the shards' folders after OUT.");
  std::vector<ShardRun> shards;
  for (const fs::path& d : dirs) shards.push_back(read_shard_run(d));
  std::sort(shards.begin(), shards.end(),
            [](const ShardRun& a, const ShardRun& b) { return a.shard.index < b.shard.index; });
  std::vector<std::pair<Shard, std::string>> numbers;
  for (const ShardRun& s : shards) {
    check_same_job(shards[0].manifest, shards[0].dir.string(), s.manifest, s.dir.string(),
                   kSameJob);
    numbers.emplace_back(s.shard, s.dir.string());
    std::error_code ec;
    VLBIAS_CHECK(!fs::equivalent(s.dir, out_dir, ec), UsageError,
                 "vlbias merge: OUT {} is shard {}; write the merge elsewhere.", out_dir.string(),
                 s.dir.string());
  }
  const std::size_t count = check_shard_set(numbers);
  std::vector<fs::path> files;
  for (const ShardRun& s : shards)
    files.insert(files.end(), {s.dir / "manifest.json", s.dir / "scored.jsonl"});
  check_shard_files(files);
  const Json& first = shards[0].manifest;
  const std::size_t rows = first["input"]["rows"].get<std::size_t>();
  const std::size_t chunk = first["chunk"].get<std::size_t>();
  VLBIAS_CHECK(chunk > 0, InputError, "{}: chunk is 0.", shards[0].dir.string());
  check_row_counts(shards, rows);
  const std::size_t chunks = (rows + chunk - 1) / chunk;
  for (const ShardRun& s : shards) {
    std::size_t mine = 0;
    for (std::size_t c = s.shard.index; c < chunks; c += count) {
      mine += std::min(rows, (c + 1) * chunk) - c * chunk;
    }
    VLBIAS_CHECK(s.manifest["shard"]["items"].get<std::size_t>() == mine, InputError,
                 "{}: its manifest says it scored {} rows; shard {} of {} holds {}.",
                 s.dir.string(), s.manifest["shard"]["items"].get<std::size_t>(), s.shard.index,
                 count, mine);
  }

  RunLock lock(out_dir);
  ClassifierMergeResult result{shards.size(), rows, out_dir / "scored.jsonl",
                               out_dir / "manifest.json"};
  std::vector<LineReader> readers;
  readers.reserve(shards.size());
  for (const ShardRun& s : shards) readers.emplace_back(s.dir / "scored.jsonl");
  {
    AtomicWriter out(result.scored);
    for (std::size_t c = 0; c < chunks; ++c) {
      readers[c % count].copy_lines(std::min(rows, (c + 1) * chunk) - c * chunk, out);
    }
    for (LineReader& r : readers) r.expect_end();
    check_scored_files(shards);
    out.commit();
  }
  write_file_atomically(result.manifest, merged_manifest(shards).dump(2) + "\n");
  return result;
}

}  // namespace vlbias
