#pragma once
// Dataset readers (src/datasets/*.cpp): a released dataset folder as one vlbias image table.
//
// Each reader reads its release's label files or file names (docs/datasets.md gives every
// format, the columns written and the quirks), and returns one row per labelled image with a
// `path` relative to the dataset folder plus the labels under standard column names. Rows
// whose image file is absent are dropped (unless keep_missing) and listed; images on disk that
// no label names are listed as unlabelled; names or label rows that cannot be read are listed
// as malformed with the reason. Nothing is decoded here (the CLI's --check-images does that).
//
// Errors (InputError, one sentence): a folder that is not the dataset's (naming the file the
// reader expected), a label file without a required column (naming the file, the column and
// the header expected), unreadable label files (read_table's messages).
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/io/table/table.h"

namespace vlbias {

enum class DatasetKind {
  FairFace,
  UtkFace,
  CausalFace,
  GeoDe,
  DollarStreet,
  SocialCounterfactuals
};

// "fairface", "utkface", "causalface", "geode", "dollarstreet", "socialcounterfactuals".
const std::vector<std::string>& dataset_names();
// UsageError naming the accepted names when `name` is none of them.
DatasetKind parse_dataset_kind(std::string_view name);
std::string dataset_name(DatasetKind kind);

struct DatasetOptions {
  std::string split = "all";  // FairFace: "train", "val" or "all" (UsageError otherwise)
  bool topic_rows = false;    // Dollar Street: one row per (image, topic) instead of per image
  bool keep_missing = false;  // keep rows whose image file is absent (still counted)
  // GeoDE, Dollar Street, SocialCounterfactuals: the label file to read instead of the
  // release's (index.csv, images_v2.csv, every metadata_*.csv), relative to the folder or
  // absolute. UsageError for the readers that have no such choice.
  std::string labels;
  // FairFace, SocialCounterfactuals in the Hugging Face Parquet layout: the folder the images
  // are extracted to (made when absent; its parent must exist), one subfolder per shard.
  std::string images_out;
};

// A problem with one file or label row: where (a path relative to the dataset folder, or
// "FILE line N") and why.
struct DatasetIssue {
  std::string where;
  std::string reason;
};

struct DatasetTable {
  DatasetKind kind = DatasetKind::FairFace;
  // Column names: "path" first, then the labels; numeric[c] says whether column c is written
  // as numbers (every present cell a decimal number).
  std::vector<std::string> columns;
  std::vector<bool> numeric;
  // rows[r][c]: the text of each cell, "" = missing. Column 0 is the image path relative to
  // the dataset folder, with '/' separators (absolute for images extracted from the Hugging
  // Face Parquet layout into DatasetOptions::images_out).
  std::vector<std::vector<std::string>> rows;
  // The columns whose combinations are the dataset's main cells (e.g. race, gender).
  std::vector<std::string> cell_columns;
  std::vector<std::string> label_files;  // files read, relative to the dataset folder
  std::size_t labelled = 0;              // label rows or parsed names before dropping missing
  std::vector<DatasetIssue> missing;     // listed by the labels, absent on disk
  std::vector<DatasetIssue> unlabelled;  // image files on disk that no label names
  std::vector<DatasetIssue> malformed;   // names or label rows that could not be read
  // SocialCounterfactuals: counterfactual sets read, and those with an image absent.
  std::size_t sets = 0;
  std::size_t incomplete_sets = 0;
};

// Reads the dataset in `dir` (a folder; UsageError otherwise). Rows are in label-file order,
// or sorted by path for readers that label images by their file names.
DatasetTable read_dataset(DatasetKind kind, const std::filesystem::path& dir,
                          const DatasetOptions& options = {});

// The table with `path` rewritten relative to `base` (the folder the table will be written
// to), so that it resolves from there; numeric columns become Numeric columns.
Table dataset_to_table(const DatasetTable& data, const std::filesystem::path& dir,
                       const std::filesystem::path& base);

// Rows per combination of cell_columns, in first-appearance order of the combinations:
// keys[i] holds the texts of the cell columns, counts[i] the rows.
struct DatasetCells {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::size_t> counts;
};
DatasetCells dataset_cells(const DatasetTable& data);

}  // namespace vlbias
