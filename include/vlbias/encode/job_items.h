#pragma once
// The items of an image or text job (src/encode/encode_job.cpp): how `vlbias encode`,
// `features` and `faces` read their input, name their items and tell whether an image changed
// since a checkpoint, one rule for all of them.
#include <filesystem>
#include <string>
#include <vector>

namespace vlbias {

// One job's items in input order: an image path (resolved) or a text, with what outputs show.
struct JobItems {
  std::vector<std::string> values;   // resolved path / text; "" with `missing`
  std::vector<std::string> display;  // the path as given / the text
  std::vector<bool> missing;         // a missing table cell
  std::string input_sha256;          // table file, or the directory listing
  std::string row_order;
};

// Images: a table (.csv/.tsv/.jsonl) with a path column (`column`, default "path"), or a
// directory scanned recursively for .jpg/.jpeg/.png (rows in byte order of the relative path).
// Relative paths resolve against `image_root`, else against the table's folder. Texts: a table
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

// The SHA-256 of a file's bytes, "" when it cannot be read: the identity a job's checkpoint
// keeps of an image, so that a resume redoes the chunks of images changed since.
std::string image_file_sha256(const std::string& path);

}  // namespace vlbias
