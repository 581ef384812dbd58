#pragma once
// Internal to the encode job (encode_job.cpp, encode_job_checkpoint.cpp): what the job's phases
// share, and the checkpoint folder OUT.partial/ that lets an interrupted run resume.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "image_prefetch.h"
#include "vlbias/core/matrix.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/encode/models/image_model.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table/table.h"

namespace vlbias::encode_internal {

// One input item: an image path (resolved) or a text, with what the rows file shows.
using Items = JobItems;

// The items of a job: a folder's images (recursive, sorted by relative path) or a table's column
// (load_job_items with the job's options).
Items load_items(const EncodeJobOptions& o);

// The rows file (OUT.rows.csv): output row j, its input row and the item as shown.
Table rows_file_table(const std::filesystem::path& path, bool images,
                      const std::vector<std::size_t>& input_rows,
                      const std::vector<std::string>& shown);

// A rows file's cell that must be a row number (a whole decimal number); InputError naming the
// file, its line and the column otherwise.
std::size_t row_number_cell(const Column& col, std::size_t row, const std::filesystem::path& file);

// The input_row column of a rows file: row numbers below `items`, increasing (InputError naming
// the file, line and column of the first that is not), one per output row.
std::vector<std::size_t> read_input_rows(const std::filesystem::path& rows_csv, std::size_t items);

// OUT's sibling: its stem + suffix (".manifest.json", ".rows.csv").
std::filesystem::path sibling(const std::filesystem::path& out, const std::string& suffix);

// --out and the files beside it must be names the job can write, checked before any work.
void check_output_paths(const std::filesystem::path& out, const std::filesystem::path& partial);

// What every phase of one encode job shares: the options, the model, the items and the chunking.
struct EncodeContext {
  const EncodeJobOptions& o;
  const ClipEncoder* text_encoder;       // texts
  const ImageFeatureModel* image_model;  // images
  const Items& items;
  const std::vector<ImageItem>& image_items;  // empty for texts
  bool images;
  std::size_t n, dim, batch, chunk, chunks;
  std::filesystem::path partial;  // the checkpoint folder

  std::size_t chunk_end(std::size_t c) const { return std::min(n, (c + 1) * chunk); }
  // Whether this process encodes chunk c (all of them unless it runs one shard).
  bool owns(std::size_t c) const { return shard_of_chunk(c, o.shard.count) == o.shard.index; }
  // Items in the chunks this process encodes.
  std::size_t owned_items() const {
    std::size_t k = 0;
    for (std::size_t c = 0; c < chunks; ++c) k += owns(c) ? chunk_rows(c) : 0;
    return k;
  }
  std::size_t chunk_rows(std::size_t c) const { return chunk_end(c) - c * chunk; }
};

// Failed items of one chunk: input row -> error.
using Failures = std::vector<std::pair<std::size_t, std::string>>;

// Starts the checkpoint folder with `job` (everything that shapes the output), or checks that
// the interrupted run in it is this job (--resume).
void open_checkpoints(const EncodeContext& ctx, const Json& job);

struct ResumeState {
  std::vector<bool> done;            // per chunk
  std::size_t resumed = 0;           // items in done chunks
  std::vector<std::size_t> changed;  // input rows of images changed since their chunk
};

// Finds the chunks an earlier run finished; those holding images changed since are to be
// encoded again (with a warning naming them).
ResumeState find_finished_chunks(const EncodeContext& ctx);

// Finishes chunk c: rows of failed items are zero in the .npy and listed in the .json, with
// the SHA-256 of each image as decoded (images only).
void write_chunk_checkpoint(const EncodeContext& ctx, std::size_t c, const Matrix& m,
                            const Failures& failed, const std::vector<std::string>& sha256);

// The chunks put together: failed rows dropped.
struct Assembled {
  Matrix all;
  Failures failed;               // sorted by input row
  std::vector<bool> failed_row;  // per input row
};

// Reads every chunk back, dropping failed rows.
Assembled assemble_chunks(const EncodeContext& ctx);

}  // namespace vlbias::encode_internal
