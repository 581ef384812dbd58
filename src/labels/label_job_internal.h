#pragma once
// Internal to the labels stage: the chunked, resumable, shardable driver every image labeller
// runs (label_job.cpp; include/vlbias/labels/label_job.h), and the records a checkpoint chunk
// and a shard keep (read back by labels_merge.cpp).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "label_items.h"
#include "vlbias/io/json.h"
#include "vlbias/labels/label_job.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias::labels_internal {

struct LabelJobSpec {
  const LabelItems& items;
  const LabelsSchema& schema;
  const LabelsProvenance& provenance;
  std::filesystem::path input;  // as given, for the job's identity
  std::filesystem::path out;    // LABELS.csv
  LabelJobOptions job;
  std::size_t batch = 0;  // items per forward: the last bits of a chunk's results depend on it
};

// Labels items [begin, end) (batches within them), appending their rows in input order and
// counting labelled and failed items.
using LabelChunkFn = std::function<void(std::size_t begin, std::size_t end,
                                        std::vector<LabelRow>& rows, LabelRunCounts& counts)>;

// The shard's chunks (resuming finished ones when asked), then LABELS.csv (and for a shard its
// records). Returns the counts of this process's items.
LabelRunCounts run_label_job(const LabelJobSpec& spec, const LabelChunkFn& label);

// One chunk's records: its items' names (label_item_names) and byte hashes, its rows.
struct LabelChunk {
  std::size_t chunk = 0;
  std::size_t labelled = 0, failed = 0;
  std::vector<std::string> names, sha256;
  std::vector<LabelRow> rows;
};

Json label_chunk_json(const LabelChunk& chunk);
// Back from label_chunk_json, checked against the job (`schema`: attribute and probability
// counts); UsageError naming `where` and `fix` (what to do) when it is not one.
LabelChunk label_chunk_from_json(const Json& j, const LabelsSchema& schema,
                                 const std::string& where, const std::string& fix);

// The job's identity (job.json; a shard's "job"), and back: its schema and provenance.
Json label_job_json(const LabelJobSpec& spec, std::size_t chunk);
LabelsSchema label_job_schema(const Json& job, const std::string& where);
LabelsProvenance label_job_provenance(const Json& job, const std::string& where);

// An item's name in a job's item list: its image as shown, with "#face<k>" for a face.
std::vector<std::string> label_item_names(const LabelItems& items);

}  // namespace vlbias::labels_internal
