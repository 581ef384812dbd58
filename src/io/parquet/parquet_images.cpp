// Images inside Parquet tables written out as files (include/vlbias/io/parquet/parquet_images.h).
#include "vlbias/io/parquet/parquet_images.h"

#include <algorithm>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "parquet_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/core/utf8.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace io_internal {

namespace {

const ParquetColumnInfo* find_pq_info_column(const ParquetInfo& info, std::string_view name) {
  for (const ParquetColumnInfo& c : info.columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Names the extracted files: each name once, no file where a folder is needed and the reverse.
class ImageNamer {
 public:
  ImageNamer() { files_.insert("images.csv"); }

  // The file name for `row`: `safe` (a safe_image_name, or "") when free, else beside it with
  // the row, else `<row>.<ext>`. Sets *renamed when `safe` was not used.
  std::string claim(const std::string& safe, std::size_t row, std::string_view ext, bool* renamed) {
    *renamed = false;
    if (!safe.empty() && !taken(safe)) return take(safe);
    *renamed = !safe.empty();
    if (!safe.empty() && !folder_blocked(safe)) {
      const fs::path p(safe);
      const std::string beside =
          (p.parent_path() / fmt::format("{}-{}{}", p.stem().string(), row, p.extension().string()))
              .generic_string();
      if (!taken(beside)) return take(beside);
    }
    const std::string by_row = fmt::format("{}.{}", row, ext);
    if (!taken(by_row)) return take(by_row);
    for (std::size_t k = 2;; ++k) {
      const std::string next = fmt::format("{}-{}.{}", row, k, ext);
      if (!taken(next)) return take(next);
    }
  }

 private:
  // Whether a folder on the way to `name` is already a file.
  bool folder_blocked(const std::string& name) const {
    for (std::size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at + 1)) {
      if (files_.count(name.substr(0, at))) return true;
    }
    return false;
  }
  bool taken(const std::string& name) const {
    return files_.count(name) || folders_.count(name) || folder_blocked(name);
  }
  std::string take(const std::string& name) {
    files_.insert(name);
    for (std::size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at + 1)) {
      folders_.insert(name.substr(0, at));
    }
    return name;
  }

  std::set<std::string> files_, folders_;
};

// Column c of `from` at the rows `keep`, named `name`.
Column select_image_rows(const Column& c, const std::vector<std::size_t>& keep,
                         const std::string& name) {
  Column out;
  out.name = name;
  out.type = c.type;
  if (c.type == ColumnType::Numeric) {
    for (std::size_t r : keep) out.numbers.push_back(c.numbers[r]);
    return out;
  }
  out.levels = c.levels;  // levels no kept row uses stay: harmless for writing
  for (std::size_t r : keep) out.codes.push_back(c.codes[r]);
  return out;
}

// The output folder, made when absent (its parent must exist), never through a link.
fs::path make_image_folder(const fs::path& out_dir) {
  const fs::path abs = fs::absolute(out_dir).lexically_normal();
  const fs::path folder = abs.has_filename() ? abs : abs.parent_path();
  std::error_code ec;
  VLBIAS_CHECK(fs::is_directory(folder.parent_path(), ec), InputError,
               "the folder '{}' for the images does not exist (the folder above --out must)",
               folder.parent_path().string());
  make_output_folders(folder.parent_path(), folder.filename());
  return folder;
}

}  // namespace

PqImageLeaves resolve_image_leaves(const ParquetInfo& info, std::string_view column) {
  const std::string name(column);
  const auto stored_path = [&](const std::string& prefix) {
    const ParquetColumnInfo* p = find_pq_info_column(info, prefix + ".path");
    return p != nullptr && p->physical == "BYTE_ARRAY" && !p->repeated ? prefix + ".path"
                                                                       : std::string();
  };
  const ParquetColumnInfo* bytes = find_pq_info_column(info, name + ".bytes");
  if (bytes != nullptr && bytes->binary && !bytes->repeated)
    return {name + ".bytes", stored_path(name)};
  const ParquetColumnInfo* c = find_pq_info_column(info, name);
  if (c != nullptr && c->binary && !c->repeated) {
    const bool field = name.size() > 6 && name.substr(name.size() - 6) == ".bytes";
    return {name, field ? stored_path(name.substr(0, name.size() - 6)) : std::string()};
  }
  if (c == nullptr) c = bytes;
  if (c != nullptr) {
    VLBIAS_FAIL(InputError,
                "'{}': column '{}' holds {}{}{}, not image bytes: give a binary column or a "
                "struct with a binary 'bytes' field (Hugging Face's Image feature)",
                info.path, c->name, c->repeated ? "a list of " : "", c->physical,
                c->logical.empty() ? "" : " (" + c->logical + ")");
  }
  std::vector<std::string> names;
  for (const ParquetColumnInfo& i : info.columns) names.push_back(i.name);
  VLBIAS_FAIL(InputError, "'{}' has no column '{}' (its columns: {})", info.path,
              escape_for_message(column, 80), fmt::join(names, ", "));
  return {};
}

}  // namespace io_internal

using namespace io_internal;

std::string_view sniff_image_extension(std::string_view b) {
  if (b.size() >= 3 && b.substr(0, 3) == "\xFF\xD8\xFF") return "jpg";
  if (b.size() >= 8 && b.substr(0, 8) == "\x89PNG\r\n\x1A\n") return "png";
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") return "webp";
  if (b.size() >= 6 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a")) return "gif";
  return "bin";
}

std::string safe_image_name(std::string_view stored) {
  if (stored.empty() || stored.size() > 1024 || stored.front() == '/') return "";
  if (first_invalid_utf8(stored) != stored.size()) return "";
  for (const char ch : stored) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7F || ch == '\\') return "";
  }
  std::size_t start = 0;
  while (start <= stored.size()) {
    const std::size_t end = std::min(stored.find('/', start), stored.size());
    const std::string_view part = stored.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.size() > 255) return "";
    start = end + 1;
  }
  return std::string(stored);
}

ExtractedImages extract_parquet_images(const std::string& parquet, std::string_view column,
                                       const fs::path& out_dir) {
  const std::vector<std::string> shards = pq_inputs(parquet);
  const ParquetInfo info = read_parquet_info(shards[0]);
  const PqImageLeaves leaves = resolve_image_leaves(info, column);
  const fs::path folder = make_image_folder(out_dir);
  ExtractedImages result;
  ImageNamer namer;
  std::vector<std::size_t> kept;
  std::vector<std::string> names;
  for (const std::string& shard : shards) {
    const ParquetBytes bytes = read_parquet_bytes(shard, leaves.bytes);
    ParquetBytes stored;
    if (!leaves.path.empty()) stored = read_parquet_bytes(shard, leaves.path);
    for (std::size_t r = 0; r < bytes.size(); ++r) {
      const std::size_t row = result.rows + r;
      if (!bytes.present[r]) {
        ++result.without_bytes;
        continue;
      }
      const std::string_view image = bytes.cell(r);
      const std::string_view ext = sniff_image_extension(image);
      result.unknown_format += ext == "bin";
      const bool has_stored = r < stored.size() && stored.present[r];
      const std::string safe = safe_image_name(has_stored ? stored.cell(r) : "");
      bool renamed = false;
      const std::string name = namer.claim(safe, row, ext, &renamed);
      result.renamed += renamed || (has_stored && !stored.cell(r).empty() && safe.empty());
      const fs::path sub = fs::path(name).parent_path();
      if (!sub.empty()) make_output_folders(folder, sub);
      write_file_atomically(folder / name, image);
      kept.push_back(row);
      names.push_back(name);
    }
    result.rows += bytes.size();
  }
  // The other columns: every one a table holds (not binary, not a list), read at once.
  std::vector<std::string> others;
  for (const ParquetColumnInfo& c : info.columns) {
    if (!c.binary && !c.repeated && c.name != leaves.path) others.push_back(c.name);
  }
  Table& table = result.table;
  table.source = parquet;
  table.rows = kept.size();
  add_string_column(table, "path", names);
  std::vector<double> rows(kept.begin(), kept.end());
  add_numeric_column(table, "row", std::move(rows));
  if (others.empty()) return result;
  const Table labels = read_parquet(parquet, others);
  VLBIAS_CHECK(labels.rows == result.rows, InternalError,
               "'{}': {} rows of labels but {} image cells", parquet, labels.rows, result.rows);
  for (const Column& c : labels.columns) {
    const std::string name = c.name == "path" || c.name == "row" ? "parquet_" + c.name : c.name;
    VLBIAS_CHECK(!table.find(name), InputError, "'{}' has columns named both '{}' and '{}'",
                 parquet, c.name, name);
    table.columns.push_back(select_image_rows(c, kept, name));
  }
  return result;
}

}  // namespace vlbias
