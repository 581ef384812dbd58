// `vlbias merge LABELS.csv SHARD...` for label shards (include/vlbias/labels/label_job.h): the
// shards' records checked to be one job's, put back in chunk order, LABELS.csv written as one
// process writes it.
#include <map>

#include <fmt/format.h>

#include "label_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/labels/label_job.h"

namespace vlbias {

namespace fs = std::filesystem;
using namespace labels_internal;

namespace {

struct LabelShardRecords {
  fs::path csv, records;
  Json job;
  Shard shard;
  std::vector<LabelChunk> chunks;
};

LabelShardRecords read_label_shard(const fs::path& csv) {
  LabelShardRecords s;
  s.csv = csv;
  s.records = fs::path(csv.string() + kLabelsShardSuffix);
  const Json j =
      parse_json(read_file_text(s.records, "a label shard's records"), s.records.string());
  VLBIAS_CHECK(j.is_object() && j.value("kind", "") == "vlbias label shard" && j.contains("job") &&
                   j["job"].is_object() && j.contains("chunks") && j["chunks"].is_array() &&
                   j["job"].contains("shard"),
               InputError,
               "{}: not the records of a `vlbias label --shard` run (expected \"kind\": \"vlbias "
               "label shard\", its \"job\" and \"chunks\").",
               s.records.string());
  s.job = j["job"];
  s.shard = shard_from_json(s.job["shard"], s.records.string());
  const LabelsSchema schema = label_job_schema(s.job, s.records.string());
  const std::string fix = "merge the shards as their runs wrote them";
  for (const Json& c : j["chunks"]) {
    s.chunks.push_back(label_chunk_from_json(c, schema, s.records.string(), fix));
  }
  return s;
}

std::size_t label_job_number(const Json& job, const char* key, const std::string& where) {
  VLBIAS_CHECK(job.contains(key) && job[key].is_number_unsigned(), InputError,
               "{}: the job has no whole number '{}'.", where, key);
  return job[key].get<std::size_t>();
}

}  // namespace

LabelsMergeResult merge_label_shards(const fs::path& out, const std::vector<fs::path>& shards) {
  VLBIAS_CHECK(!shards.empty(), UsageError, "vlbias merge {}: no shard given.", out.string());
  std::vector<fs::path> files;
  for (const fs::path& s : shards) {
    VLBIAS_CHECK(fs::is_regular_file(s), UsageError,
                 "vlbias merge {}: {} is not a label shard's LABELS.csv (no such file).",
                 out.string(), s.string());
    VLBIAS_CHECK(fs::is_regular_file(s.string() + kLabelsShardSuffix), UsageError,
                 "vlbias merge {}: {} has no {} beside it; give the LABELS.csv of each `vlbias "
                 "label --shard I/N` run.",
                 out.string(), s.string(), s.string() + kLabelsShardSuffix);
    std::error_code ec;
    VLBIAS_CHECK(!fs::equivalent(out, s, ec), UsageError,
                 "vlbias merge {}: OUT is the shard {}; write the merge apart from the shards.",
                 out.string(), s.string());
    files.push_back(s);
    files.push_back(s.string() + kLabelsShardSuffix);
  }
  check_shard_files(files);
  std::vector<LabelShardRecords> records;
  std::vector<std::pair<Shard, std::string>> set;
  for (const fs::path& s : shards) {
    records.push_back(read_label_shard(s));
    set.emplace_back(records.back().shard, s.string());
  }
  check_shard_set(set);
  const Json& job = records[0].job;
  const std::string where = records[0].records.string();
  for (std::size_t i = 1; i < records.size(); ++i) {
    check_same_job(
        job, where, records[i].job, records[i].records.string(),
        {"/labeller", "/model", "/weights_sha256", "/prompt_set", "/options", "/attributes",
         "/classes", "/input", "/items", "/items_sha256", "/chunk", "/batch"});
  }
  const LabelsSchema schema = label_job_schema(job, where);
  const LabelsProvenance provenance = label_job_provenance(job, where);
  const std::size_t items = label_job_number(job, "items", where);
  const std::size_t chunk = label_job_number(job, "chunk", where);
  VLBIAS_CHECK(chunk >= 1, InputError, "{}: the job's chunk is 0.", where);
  const std::size_t chunks = (items + chunk - 1) / chunk;

  std::map<std::size_t, const LabelChunk*> by_chunk;
  for (const LabelShardRecords& s : records) {
    // The shard's LABELS.csv is what its records give (neither edited since).
    std::vector<LabelRow> own;
    for (const LabelChunk& k : s.chunks) own.insert(own.end(), k.rows.begin(), k.rows.end());
    VLBIAS_CHECK(read_file_text(s.csv, "a label shard's LABELS.csv") ==
                     labels_table_text(schema, provenance, own),
                 UsageError,
                 "{}: is not the table its records {} give (edited since its run?); merge the "
                 "shards as their runs wrote them.",
                 s.csv.string(), s.records.string());
    for (const LabelChunk& k : s.chunks) {
      VLBIAS_CHECK(k.chunk < chunks && shard_of_chunk(k.chunk, s.shard.count) == s.shard.index,
                   UsageError, "{}: holds chunk {}, which is not one of shard {} of {}'s.",
                   s.records.string(), k.chunk, s.shard.index, s.shard.count);
      VLBIAS_CHECK(by_chunk.emplace(k.chunk, &k).second, UsageError, "{}: holds chunk {} twice.",
                   s.records.string(), k.chunk);
    }
  }
  LabelsMergeResult result;
  result.shards = records.size();
  result.items = items;
  std::vector<std::string> names;
  std::vector<LabelRow> rows;
  for (std::size_t c = 0; c < chunks; ++c) {
    const auto it = by_chunk.find(c);
    VLBIAS_CHECK(it != by_chunk.end(), UsageError,
                 "Chunk {} of the job is in none of the shards (a shard's run did not finish?).",
                 c);
    const LabelChunk& k = *it->second;
    VLBIAS_CHECK(k.names.size() == std::min(items, (c + 1) * chunk) - c * chunk, InputError,
                 "Chunk {} holds {} items; the job's chunk {} has {}.", c, k.names.size(), c,
                 std::min(items, (c + 1) * chunk) - c * chunk);
    names.insert(names.end(), k.names.begin(), k.names.end());
    rows.insert(rows.end(), k.rows.begin(), k.rows.end());
    result.labelled += k.labelled;
    result.failed += k.failed;
  }
  VLBIAS_CHECK(job_items_sha256(names) == job.value("items_sha256", ""), InputError,
               "The shards' items, put back in chunk order, are not the job's items (its "
               "items_sha256 in {}): a chunk holds items of another job.",
               where);
  result.rows = rows.size();
  write_labels_table(out, schema, provenance, rows);
  return result;
}

}  // namespace vlbias
