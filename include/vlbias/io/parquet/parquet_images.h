#pragma once
// Images stored inside Parquet tables (src/io/parquet/parquet_images.cpp), as Hugging Face stores
// its Image feature: a struct column "image" of <bytes: binary, path: string>, or a plain binary
// column. `vlbias dataset extract-images` and the Hugging Face dataset readers write them out as
// files and return an image table over the files.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/io/table/table.h"

namespace vlbias {

// The format of image bytes by their magic number: "jpg", "png", "webp", "gif", or "bin" when
// none of these.
std::string_view sniff_image_extension(std::string_view bytes);

// A name for an extracted image: `stored` (the struct's path) when it is a safe relative path
// (UTF-8, no empty, "." or ".." parts, no leading '/', no backslash or control character, at
// most 255 bytes per part and 1024 in all), else "" (the caller names the file by its row).
std::string safe_image_name(std::string_view stored);

struct ExtractedImages {
  // One row per row of the Parquet table that holds image bytes, in row order: `path` (the
  // file, relative to the output folder), `row` (0-based row of the table, shards counted in
  // name order), then the table's other columns that are not binary (the image struct's `path`
  // field left out; a column named `path` or `row` is renamed `parquet_path` / `parquet_row`).
  Table table;
  std::size_t rows = 0;            // rows of the Parquet table
  std::size_t without_bytes = 0;   // rows whose image cell (or its bytes) is null: no file
  std::size_t renamed = 0;         // stored paths unsafe or taken, named by row instead
  std::size_t unknown_format = 0;  // bytes of none of the sniffed formats (written as .bin)
};

// Writes the images of `column` of the Parquet file or folder of shards `parquet` into
// `out_dir` (made when absent, its parent must exist; never through a link), each through an
// AtomicWriter, shard by shard (memory holds one shard's image bytes). A file is named by the
// struct's path when safe_image_name accepts it, else `<row>.<ext>` with the sniffed extension;
// a name already taken (by an earlier row, a folder, or "images.csv" at the top) becomes
// `<stem>-<row><.ext>` beside it, or `<row>.<ext>` when its folder is blocked. Existing files
// of the same names are replaced; others in out_dir are left as they are.
// `column` names a struct column with a binary `bytes` field ("image", reading "image.bytes"
// and "image.path"), a binary column, or a struct's bytes field itself ("image.bytes").
// InputError naming the file and the column when it is absent or neither.
ExtractedImages extract_parquet_images(const std::string& parquet, std::string_view column,
                                       const std::filesystem::path& out_dir);

// Whether `column` of the Parquet file or folder of shards `parquet` holds image bytes as
// extract_parquet_images reads them (a binary column, a struct with a binary `bytes` field, or
// that field): the jobs that decode images (`encode`, `faces`, `label`, ...) then read the
// images from the table, and a column of paths otherwise. False when the column is absent.
bool parquet_column_holds_images(const std::string& parquet, std::string_view column);

// The image cells of one column of a Parquet file or folder of shards (rows counted across the
// shards in name order), read by row without writing files. A row group's cells are decoded
// when one of its rows is first asked for, and the cells of at most two row groups are held at
// once, so memory is bounded by the row groups, not the file; reading rows in order decodes
// each row group once. Safe to call from several threads (one decodes at a time).
class ParquetImageColumn {
 public:
  // InputError as extract_parquet_images for a column that is absent or holds no bytes, and
  // for a shard whose column differs from the first's.
  ParquetImageColumn(const std::string& parquet, std::string_view column);
  ~ParquetImageColumn();
  ParquetImageColumn(const ParquetImageColumn&) = delete;
  ParquetImageColumn& operator=(const ParquetImageColumn&) = delete;

  std::size_t rows() const;
  // The bytes of `row` (< rows()), nullopt when the cell is null. InputError when the row's
  // row group cannot be decoded (naming the file, column and row group).
  std::optional<std::string> cell(std::size_t row) const;
  // The leaf read, e.g. "image.bytes".
  const std::string& bytes_column() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace vlbias
