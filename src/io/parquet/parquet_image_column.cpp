// Image cells of a Parquet column read by row, a row group at a time
// (include/vlbias/io/parquet/parquet_images.h).
#include <algorithm>
#include <mutex>

#include "parquet_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/parquet/parquet_images.h"

namespace vlbias {

using namespace io_internal;

struct ParquetImageColumn::State {
  // One row group of one shard: where its rows start among all the shards' rows.
  struct PqImageGroup {
    std::size_t shard = 0;
    std::size_t group = 0;
    std::size_t first_row = 0;
    std::size_t rows = 0;
  };

  // The decoded cells of one row group, and when they were last used.
  struct PqImageCache {
    std::size_t group = SIZE_MAX;
    std::uint64_t used = 0;
    ParquetBytes cells;
  };

  std::vector<std::unique_ptr<PqFile>> shards;
  std::vector<const PqLeaf*> leaves;  // the bytes leaf of each shard
  std::vector<PqImageGroup> groups;
  std::string column;
  std::size_t rows = 0;
  std::mutex mutex;
  PqImageCache cache[2];
  std::uint64_t clock = 0;

  // Drops the mapped pages of a decoded chunk from memory (its cells are copied), so that the
  // process holds the row groups in use, not every page of the file it has read.
  static void release_chunk(const PqFile& file, const PqLeaf& leaf, std::size_t group) {
    const std::size_t index = static_cast<std::size_t>(&leaf - file.leaves.data());
    const PqColumnMeta& chunk = file.meta.row_groups[group].columns[index];
    std::int64_t start = chunk.data_page_offset;
    if (chunk.dictionary_page_offset > 0 && chunk.dictionary_page_offset < start) {
      start = chunk.dictionary_page_offset;
    }
    const auto size = static_cast<std::int64_t>(file.map.size());
    if (size == 0 || start < 0 || start >= size || chunk.total_compressed_size <= 0) return;
    const std::int64_t length = std::min(chunk.total_compressed_size, size - start);
    file.map.release_pages(file.map.bytes().subspan(static_cast<std::size_t>(start),
                                                    static_cast<std::size_t>(length)));
  }

  ParquetBytes decode(const PqImageGroup& g) const {
    const PqFile& file = *shards[g.shard];
    const PqLeaf& leaf = *leaves[g.shard];
    const std::uint64_t limit =
        16 * std::uint64_t{file.source.file.size()} + (std::uint64_t{64} << 20);
    ParquetBytes out;
    // The cells take about the chunk's stored size (images hardly compress): reserved once
    // rather than grown by doubling, which would hold up to twice the cells.
    out.data.reserve(pq_chunk_stored_bytes(file, leaf, g.group));
    file.read_row_group(leaf, g.group, [&](const PqPage& page) {
      VLBIAS_CHECK(append_pq_page_bytes(page, limit, out), InputError,
                   "{}: the cells of column '{}' in row group {} exceed {} bytes, more than the "
                   "reader allows for a file of {} bytes",
                   file.where, leaf.name, g.group, limit, file.source.file.size());
    });
    release_chunk(file, leaf, g.group);
    VLBIAS_CHECK(out.size() == g.rows, InputError,
                 "{}: row group {} of column '{}' holds {} rows, not {}", file.where, g.group,
                 leaf.name, out.size(), g.rows);
    return out;
  }
};

bool parquet_column_holds_images(const std::string& parquet, std::string_view column) {
  const std::vector<std::string> shards = pq_inputs(parquet);
  const ParquetInfo info = read_parquet_info(shards[0]);
  const std::string name(column);
  for (const ParquetColumnInfo& c : info.columns) {
    if (c.repeated) continue;
    if ((c.name == name || c.name == name + ".bytes") && c.binary) return true;
  }
  return false;
}

ParquetImageColumn::ParquetImageColumn(const std::string& parquet, std::string_view column)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  for (const std::string& shard : pq_inputs(parquet)) {
    s.shards.push_back(std::make_unique<PqFile>(shard));
    const PqFile& file = *s.shards.back();
    const std::string bytes = resolve_image_leaves(read_parquet_info(shard), column).bytes;
    VLBIAS_CHECK(s.column.empty() || bytes == s.column, InputError,
                 "{}: its image column reads '{}', but the first shard's reads '{}'", file.where,
                 bytes, s.column);
    s.column = bytes;
    s.leaves.push_back(&file.leaf(bytes));
    for (std::size_t g = 0; g < file.meta.row_groups.size(); ++g) {
      const auto n = static_cast<std::size_t>(file.meta.row_groups[g].num_rows);
      s.groups.push_back({s.shards.size() - 1, g, s.rows, n});
      s.rows += n;
    }
  }
}

ParquetImageColumn::~ParquetImageColumn() = default;

std::size_t ParquetImageColumn::rows() const {
  return state_->rows;
}

const std::string& ParquetImageColumn::bytes_column() const {
  return state_->column;
}

std::optional<std::string> ParquetImageColumn::cell(std::size_t row) const {
  State& s = *state_;
  VLBIAS_CHECK(row < s.rows, InternalError, "row {} of a Parquet image column of {} rows", row,
               s.rows);
  // The last group whose first row is at most `row` (empty groups are skipped past).
  const auto it =
      std::upper_bound(s.groups.begin(), s.groups.end(), row,
                       [](std::size_t r, const State::PqImageGroup& g) { return r < g.first_row; });
  const std::size_t gi = static_cast<std::size_t>(it - s.groups.begin()) - 1;
  const State::PqImageGroup& g = s.groups[gi];
  std::lock_guard<std::mutex> lock(s.mutex);
  State::PqImageCache* hit = nullptr;
  for (State::PqImageCache& c : s.cache) {
    if (c.group == gi) hit = &c;
  }
  if (hit == nullptr) {
    hit = s.cache[0].used <= s.cache[1].used ? &s.cache[0] : &s.cache[1];
    hit->group = SIZE_MAX;
    hit->cells = ParquetBytes();  // freed before the next group is decoded
    hit->cells = s.decode(g);
    hit->group = gi;
  }
  hit->used = ++s.clock;
  const std::size_t r = row - g.first_row;
  if (!hit->cells.present[r]) return std::nullopt;
  return std::string(hit->cells.cell(r));
}

}  // namespace vlbias
