#pragma once
// Helpers shared by the dataset readers (private to src/datasets; datasets.cpp).
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/datasets/datasets.h"
#include "vlbias/io/table/table.h"

namespace vlbias::datasets_internal {

namespace fs = std::filesystem;

// The image files (.jpg, .jpeg, .png, any case) under dir/sub, recursively, as paths
// relative to `dir` with '/' separators, sorted by bytes. Hidden entries (".name", e.g. the
// "._x.jpg" resource forks of archives made on macOS) and "__MACOSX" folders are skipped;
// folder links are not followed. A name that is not UTF-8 is added to `malformed` (a table
// cannot hold it) instead of the list. An absent dir/sub gives no files.
std::vector<std::string> list_images(const fs::path& dir, const std::string& sub,
                                     std::vector<DatasetIssue>& malformed);

// Reads a label table the reader expects at dir/name, with an InputError naming the file and
// the dataset when it is absent ("... is not a FairFace folder: ... expected ...").
Table read_label_table(const fs::path& dir, const std::string& name, std::string_view dataset,
                       std::string_view expected);

// The first of `names` that `table` has; InputError naming the file, the column and the
// header the release has when none is present.
const Column& require_column(const Table& table, std::initializer_list<std::string_view> names,
                             std::string_view expected_header);
// The first of `names` that `table` has, or nullptr.
const Column* optional_column(const Table& table, std::initializer_list<std::string_view> names);

// "FILE line N" for a label row (table.line_of_row).
std::string label_row_where(const Table& table, std::size_t row);

// True when `rel` is a relative path that stays inside the dataset folder (no root, no ".."
// that climbs out); sets *normal to its normal form with '/' separators.
bool inside_folder(std::string_view rel, std::string* normal);

// Drops rows whose image is absent (listing them in data.missing; kept when keep_missing),
// lists the images under each of `scan` (folders relative to dir; "" = all of it) that no row
// names in data.unlabelled, and sets data.labelled.
void finish_dataset(DatasetTable& data, const fs::path& dir, const std::vector<std::string>& scan,
                    bool keep_missing);

// The readers (datasets_faces.cpp, datasets_geo.cpp, datasets_counterfactuals.cpp).
DatasetTable read_fairface(const fs::path& dir, const DatasetOptions& options);
DatasetTable read_utkface(const fs::path& dir, const DatasetOptions& options);
DatasetTable read_causalface(const fs::path& dir, const DatasetOptions& options);
DatasetTable read_geode(const fs::path& dir, const DatasetOptions& options);
DatasetTable read_dollarstreet(const fs::path& dir, const DatasetOptions& options);
DatasetTable read_socialcounterfactuals(const fs::path& dir, const DatasetOptions& options);

// The Hugging Face Parquet layouts (datasets_hf.cpp): whether `dir` holds .parquet files
// (recursively), and the readers, which extract the images into options.images_out.
bool is_hf_parquet_folder(const fs::path& dir);
DatasetTable read_hf_fairface(const fs::path& dir, const DatasetOptions& options);
DatasetTable read_hf_socialcounterfactuals(const fs::path& dir, const DatasetOptions& options);

// Splits on one character; "" gives one empty field.
std::vector<std::string_view> split_on(std::string_view text, char sep);
// Whole text is ASCII digits (at least one).
bool all_digits(std::string_view text);

}  // namespace vlbias::datasets_internal
