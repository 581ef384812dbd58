// A Parquet file opened: the footer ("PAR1", metadata length, "PAR1"), the schema's leaves,
// the row groups checked against them, the shards of a folder, and the raw byte cells of a
// column (read_parquet_bytes).
#include <algorithm>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "parquet_detail.h"
#include "table/table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/parquet/parquet.h"

namespace vlbias::io_internal {

namespace {

constexpr int kPqMaxSchemaDepth = 64;

struct PqSchemaWalk {
  const std::vector<PqSchemaElement>& schema;
  const std::string& where;
  std::size_t next = 1;  // element 0 is the root
  std::vector<PqLeaf> leaves;

  void visit(const std::string& prefix, int def, int rep, int depth) {
    VLBIAS_CHECK(next < schema.size(), InputError,
                 "{} is not a valid Parquet file: its schema lists fewer elements than its "
                 "groups claim",
                 where);
    VLBIAS_CHECK(depth <= kPqMaxSchemaDepth, InputError,
                 "{}: the schema nests deeper than {} levels", where, kPqMaxSchemaDepth);
    const PqSchemaElement& e = schema[next++];
    VLBIAS_CHECK(!e.name.empty(), InputError, "{}: the schema holds a column without a name",
                 where);
    const std::string name = prefix.empty() ? e.name : prefix + "." + e.name;
    if (e.repetition == kPqOptional) ++def;
    if (e.repetition == kPqRepeated) ++def, ++rep;
    VLBIAS_CHECK(e.repetition >= kPqRequired && e.repetition <= kPqRepeated, InputError,
                 "{}: column '{}' has an unknown repetition {}", where, name, e.repetition);
    if (e.num_children > 0 || e.type < 0) {
      VLBIAS_CHECK(e.num_children >= 0, InputError,
                   "{}: schema element '{}' has neither a type nor children", where, name);
      for (int c = 0; c < e.num_children; ++c) visit(name, def, rep, depth + 1);
      return;
    }
    VLBIAS_CHECK(e.type <= static_cast<int>(PqType::FixedLenByteArray), InputError,
                 "{}: column '{}' has an unknown physical type {}", where, name, e.type);
    VLBIAS_CHECK(e.type != static_cast<int>(PqType::FixedLenByteArray) ||
                     (e.type_length > 0 && e.type_length <= (1 << 24)),
                 InputError, "{}: column '{}' is FIXED_LEN_BYTE_ARRAY of length {}", where, name,
                 e.type_length);
    leaves.push_back(PqLeaf{name, e, def, rep});
  }
};

const char* pq_logical_name(const PqSchemaElement& e) {
  switch (e.logical.kind) {
    case kPqLogicalString:
      return "STRING";
    case kPqLogicalEnum:
      return "ENUM";
    case kPqLogicalDecimal:
      return "DECIMAL";
    case kPqLogicalDate:
      return "DATE";
    case kPqLogicalTime:
      return "TIME";
    case kPqLogicalTimestamp:
      return "TIMESTAMP";
    case kPqLogicalInteger:
      return "INTEGER";
    case kPqLogicalJson:
      return "JSON";
    case kPqLogicalBson:
      return "BSON";
    case kPqLogicalUuid:
      return "UUID";
    case kPqLogicalFloat16:
      return "FLOAT16";
    default:
      break;
  }
  switch (e.converted) {
    case kPqUtf8:
      return "STRING";
    case kPqEnum:
      return "ENUM";
    case kPqDecimal:
      return "DECIMAL";
    case kPqDate:
      return "DATE";
    case kPqTimeMillis:
    case kPqTimeMicros:
      return "TIME";
    case kPqTimestampMillis:
    case kPqTimestampMicros:
      return "TIMESTAMP";
    case kPqJson:
      return "JSON";
    case kPqBson:
      return "BSON";
    default:
      return "";
  }
}

bool has_pq_extension(const std::filesystem::path& p) {
  return lower_extension(p.filename().string()) == ".parquet";
}

}  // namespace

PqFile::PqFile(const std::string& file) : path(file), where(fmt::format("'{}'", file)) {
  map = MappedFile(file, MapAccess::Sequential);
  open(map.bytes());
}

PqFile::PqFile(PqBytes bytes, const std::string& name)
    : path(name), where(fmt::format("'{}'", name)) {
  open(bytes);
}

void PqFile::open(PqBytes bytes) {
  const std::size_t size = bytes.size();
  VLBIAS_CHECK(size >= 12, InputError,
               "{} is not a Parquet file: it holds {} bytes, fewer than the 12 of the smallest one",
               where, size);
  const std::uint8_t* d = bytes.data();
  VLBIAS_CHECK(std::memcmp(d + size - 4, "PARE", 4) != 0, InputError,
               "{} is an encrypted Parquet file, which vlbias does not read", where);
  VLBIAS_CHECK(
      std::memcmp(d, "PAR1", 4) == 0 && std::memcmp(d + size - 4, "PAR1", 4) == 0, InputError,
      "{} is not a Parquet file: it does not start and end with the magic bytes 'PAR1'", where);
  std::uint32_t meta_length;
  std::memcpy(&meta_length, d + size - 8, 4);
  VLBIAS_CHECK(meta_length <= size - 12, InputError,
               "{} is not a valid Parquet file: its footer claims {} bytes of metadata but the "
               "file holds {} bytes",
               where, meta_length, size);
  source.file = bytes;
  source.data_end = size - 8 - meta_length;
  source.where = where;
  meta = parse_pq_file_meta(source.file.subspan(source.data_end, meta_length), where);
  PqSchemaWalk walk{meta.schema, where, 1, {}};
  const int roots = meta.schema[0].num_children;
  for (int c = 0; c < roots; ++c) walk.visit("", 0, 0, 1);
  VLBIAS_CHECK(
      walk.next == meta.schema.size(), InputError,
      "{} is not a valid Parquet file: its schema lists {} elements but its groups hold {}", where,
      meta.schema.size(), walk.next);
  leaves = std::move(walk.leaves);
  std::int64_t rows = 0;
  for (std::size_t g = 0; g < meta.row_groups.size(); ++g) {
    const PqRowGroup& rg = meta.row_groups[g];
    VLBIAS_CHECK(rg.columns.size() == leaves.size() && rg.num_rows >= 0 &&
                     rg.num_rows <= meta.num_rows - rows,
                 InputError,
                 "{} is not a valid Parquet file: row group {} has {} columns and {} rows, for a "
                 "schema of {} columns and a file of {} rows",
                 where, g, rg.columns.size(), rg.num_rows, leaves.size(), meta.num_rows);
    rows += rg.num_rows;
  }
  VLBIAS_CHECK(
      rows == meta.num_rows, InputError,
      "{} is not a valid Parquet file: its row groups hold {} rows, not the {} it declares", where,
      rows, meta.num_rows);
  check_cells(leaves.empty() ? 0 : 1);
}

void PqFile::check_cells(std::size_t columns) const {
  const std::uint64_t limit = 256 * std::uint64_t{source.file.size()} + (std::uint64_t{1} << 22);
  const auto rows = static_cast<std::uint64_t>(meta.num_rows);
  VLBIAS_CHECK(columns == 0 || rows <= limit / columns, InputError,
               "{} declares {} rows of {} columns, more cells than a file of {} bytes may hold "
               "(at most {})",
               where, rows, columns, source.file.size(), limit);
}

std::string PqFile::chunk_where(const PqLeaf& leaf, std::size_t row_group) const {
  return fmt::format("{} column '{}' (row group {})", where, leaf.name, row_group);
}

const PqLeaf& PqFile::leaf(std::string_view name) const {
  for (const PqLeaf& l : leaves) {
    if (l.name == name) return l;
  }
  std::string names;
  for (std::size_t i = 0; i < leaves.size() && i < 20; ++i) {
    names += (i ? ", " : "") + leaves[i].name;
  }
  VLBIAS_FAIL(InputError, "{} has no column '{}'; columns are: {}", where, name, names);
}

void PqFile::read_column(const PqLeaf& leaf,
                         const std::function<void(const PqPage&)>& on_page) const {
  for (std::size_t g = 0; g < meta.row_groups.size(); ++g) read_row_group(leaf, g, on_page);
}

void PqFile::read_row_group(const PqLeaf& leaf, std::size_t g,
                            const std::function<void(const PqPage&)>& on_page) const {
  VLBIAS_CHECK(leaf.max_rep == 0, InputError,
               "{}: column '{}' is repeated (a list or map), which vlbias does not read; only "
               "flat columns and struct fields are supported",
               where, leaf.name);
  const std::size_t index = static_cast<std::size_t>(&leaf - leaves.data());
  const PqColumnMeta& chunk = meta.row_groups[g].columns[index];
  const std::string at = chunk_where(leaf, g);
  VLBIAS_CHECK(chunk.has_meta && !chunk.external, InputError,
               "{}: the column chunk {}, which vlbias does not read", at,
               chunk.external ? "lives in another file" : "has no metadata (encrypted?)");
  VLBIAS_CHECK(chunk.type == leaf.element.type, InputError,
               "{}: the column chunk holds {} values but the schema says {}", at,
               pq_type_name(chunk.type), pq_type_name(leaf.element.type));
  read_pq_chunk(source, chunk, leaf, meta.row_groups[g].num_rows, at, on_page);
}

std::vector<std::string> pq_inputs(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (has_pq_extension(entry.path()) && entry.is_regular_file(ec)) {
      files.push_back(entry.path().string());
    }
  }
  VLBIAS_CHECK(!ec, InputError, "cannot list the folder '{}': {}", path, ec.message());
  VLBIAS_CHECK(!files.empty(), InputError, "the folder '{}' holds no .parquet files", path);
  std::sort(files.begin(), files.end());
  return files;
}

std::size_t pq_chunk_stored_bytes(const PqFile& file, const PqLeaf& leaf, std::size_t g) {
  const std::size_t index = static_cast<std::size_t>(&leaf - file.leaves.data());
  const std::int64_t stored = file.meta.row_groups[g].columns[index].total_compressed_size;
  if (stored <= 0 || static_cast<std::uint64_t>(stored) > file.source.file.size()) return 0;
  return static_cast<std::size_t>(stored);
}

bool append_pq_page_bytes(const PqPage& page, std::uint64_t limit, ParquetBytes& out) {
  std::size_t v = 0;
  for (std::size_t r = 0; r < page.count; ++r) {
    const bool present = page.present->empty() || (*page.present)[r] != 0;
    if (present) {
      const std::string_view cell = page.values->byte_value(v++);
      if (out.data.size() + cell.size() > limit) return false;
      out.data.append(cell);
    }
    out.present.push_back(present);
    out.offsets.push_back(out.data.size());
  }
  return true;
}

}  // namespace vlbias::io_internal

namespace vlbias {

using namespace io_internal;

bool is_parquet_folder(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return false;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (has_pq_extension(entry.path())) return true;
  }
  return false;
}

ParquetInfo read_parquet_info(const std::string& path) {
  const PqFile file(path);
  ParquetInfo info;
  info.path = path;
  info.rows = static_cast<std::size_t>(file.meta.num_rows);
  info.row_groups = file.meta.row_groups.size();
  info.metadata = file.meta.key_value;
  for (const PqLeaf& leaf : file.leaves) {
    ParquetColumnInfo c;
    c.name = leaf.name;
    c.physical = pq_type_name(leaf.element.type);
    c.logical = pq_logical_name(leaf.element);
    c.optional = leaf.max_def > 0;
    c.repeated = leaf.max_rep > 0;
    c.binary = pq_cell_kind(leaf) == PqCell::Binary;
    info.columns.push_back(std::move(c));
  }
  return info;
}

ParquetBytes read_parquet_bytes(const std::string& path, std::string_view column) {
  ParquetBytes out;
  std::uint64_t input_bytes = 0;
  for (const std::string& shard : pq_inputs(path)) {
    const PqFile file(shard);
    input_bytes += file.source.file.size();
    const std::uint64_t limit = 16 * input_bytes + (std::uint64_t{64} << 20);
    const PqLeaf& leaf = file.leaf(column);
    VLBIAS_CHECK(leaf.element.type == static_cast<int>(PqType::ByteArray) ||
                     leaf.element.type == static_cast<int>(PqType::FixedLenByteArray),
                 InputError, "{}: column '{}' holds {} values, not bytes", file.where, leaf.name,
                 pq_type_name(leaf.element.type));
    // Reserved once rather than grown by doubling (which copies and may hold twice the cells).
    std::size_t stored = 0;
    for (std::size_t g = 0; g < file.meta.row_groups.size(); ++g) {
      stored += pq_chunk_stored_bytes(file, leaf, g);
    }
    out.data.reserve(out.data.size() + std::min<std::size_t>(stored, file.source.file.size()));
    file.read_column(leaf, [&](const PqPage& page) {
      VLBIAS_CHECK(append_pq_page_bytes(page, limit, out), InputError,
                   "{}: the cells of column '{}' exceed {} bytes, more than the reader allows "
                   "for {} bytes of input",
                   file.where, leaf.name, limit, input_bytes);
    });
  }
  return out;
}

}  // namespace vlbias
