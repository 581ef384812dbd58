#pragma once
// The items of an image or text job (src/encode/jobs/encode_job.cpp): how `vlbias encode`,
// `features` and `faces` read their input, name their items and tell whether an image changed
// since a checkpoint, one rule for all of them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vlbias/io/mapped_file.h"

namespace vlbias {

class ParquetImageColumn;

// One job's items in input order: an image path (resolved) or a text, with what outputs show.
struct JobItems {
  std::vector<std::string> values;   // resolved path / text; "" with `missing`
  std::vector<std::string> display;  // the path as given / the text
  std::vector<bool> missing;         // a missing table cell
  std::string input_sha256;          // table file, the directory listing, or a Parquet table's rows
  std::string row_order;
  // Set when the images are the cells of a Parquet column: item i is row i of the table
  // (values and display "T.parquet#i"), its bytes read from the table, not from a file.
  std::shared_ptr<const ParquetImageColumn> table_images;
};

// Images: a table (.csv/.tsv/.jsonl) with a path column (`column`, default "path"), or a
// directory scanned recursively for .jpg/.jpeg/.png (rows in byte order of the relative path).
// Relative paths resolve against `image_root`, else against the table's folder. A Parquet
// table (a .parquet file or a folder of shards) whose `column` holds image bytes
// (parquet_column_holds_images: Hugging Face's Image struct or a binary column) gives one item
// per row, named `<file name>#<row>` (0-based, shards counted in name order), whose bytes are
// read from the table (JobItems::table_images). Texts: a table
// with a text column (default "text"). InputError naming the input when it does not exist, has
// no rows, or (a directory) holds no image.
JobItems load_job_items(const std::filesystem::path& input, const std::string& column,
                        const std::filesystem::path& image_root, bool images);

// SHA-256 of a job's items in input order as outputs show them (paths as given, texts):
// blocks of 4,096 items, each item as its byte length, ':', its bytes and '\n', hashed per block;
// then the blocks' hex digests, one per line, hashed. A shard records it; a merge recomputes it
// from the rows it puts back at the input rows they claim, so a row placed at another item's
// input row (or an item edited) is refused.
std::string job_items_sha256(const std::vector<std::string>& shown);

// The bytes of one image: its file mapped, or a copy of its Parquet cell.
struct ImageBytes {
  MappedFile file;
  std::string cell;
  bool from_cell = false;
  std::span<const std::uint8_t> bytes() const {
    return from_cell ? std::span<const std::uint8_t>(
                           reinterpret_cast<const std::uint8_t*>(cell.data()), cell.size())
                     : file.bytes();
  }
};

// The bytes of item i of an image job. InputError naming the item when there are none: an
// empty path cell, a file that cannot be read, a null Parquet cell.
ImageBytes read_job_image(const JobItems& items, std::size_t i);

// The SHA-256 of the bytes of each item `rows` names ("" for one that cannot be read): the
// identity a checkpoint or a cache keeps of an image. Files are hashed in parallel, Parquet
// cells in row order (each row group decoded once).
std::vector<std::string> job_images_sha256(const JobItems& items,
                                           const std::vector<std::size_t>& rows);

}  // namespace vlbias
