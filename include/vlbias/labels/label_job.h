#pragma once
// Resume, shards and merge of `vlbias label` (issue 41; src/labels/label_job.cpp,
// src/labels/labels_merge.cpp), as `vlbias encode` and `faces` have them
// (docs/scaling.md#label-shards):
//   - The items (images, Parquet rows `T.parquet#ROW`, or a FACES_DIR's chips) are cut into
//     checkpoint chunks of `chunk` items (default 64); forward batches never cross a chunk, so a
//     chunk's rows are the same bytes whichever process labels it.
//   - `<out>.partial/` holds job.json (the job's identity: labeller, model, weights SHA-256,
//     prompt set, classes, options, the input and the SHA-256 of its item list, chunk, shard)
//     and one chunk_<c>.json per finished chunk (its rows, and each item's name and the SHA-256
//     of its bytes). `resume` continues it; a resume of another job is refused naming the first
//     key that differs; an item whose bytes changed since has its chunk labelled again. The
//     folder is removed once LABELS.csv is written.
//   - Shard I of N labels the chunks c with c mod N = I (io/shard.h), writes its rows to `out`
//     and its records to `<out>.shard.json`; `vlbias merge LABELS.csv SHARD...` checks they are
//     shards 0..N-1 of one job and writes LABELS.csv byte-identical to one process's.
#include <cstddef>
#include <filesystem>
#include <vector>

#include "vlbias/io/run/shard.h"

namespace vlbias {

struct LabelJobOptions {
  bool resume = false;    // continue `<out>.partial/`
  std::size_t chunk = 0;  // items per checkpoint (0: 64); the unit of shards
  Shard shard;
};

inline constexpr std::size_t kDefaultLabelChunk = 64;
// What a shard writes next to its LABELS.csv ("<out>" + this).
inline constexpr const char* kLabelsShardSuffix = ".shard.json";
// The checkpoint folder next to LABELS.csv ("<out>" + this).
inline constexpr const char* kLabelsPartialSuffix = ".partial";

struct LabelsMergeResult {
  std::size_t shards = 0, items = 0, labelled = 0, failed = 0, rows = 0;
};

// `vlbias merge LABELS.csv SHARD...`: each SHARD is a label shard's LABELS.csv (its records
// beside it, `<SHARD>.shard.json`). UsageError unless they are shards 0..N-1 of one job (naming
// the shard and the key that differs), each once, each holding exactly its own chunks, and each
// shard's LABELS.csv is the one its records give; InputError for records that are not a label
// shard's or whose items are not the job's in order. `out` must not be a shard.
LabelsMergeResult merge_label_shards(const std::filesystem::path& out,
                                     const std::vector<std::filesystem::path>& shards);

}  // namespace vlbias
