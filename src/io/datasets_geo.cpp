// The geographic datasets: GeoDE (index.csv) and Dollar Street (images_v2.csv).
// Formats and quirks: docs/datasets.md.
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "datasets_detail.h"
#include "table_detail.h"
#include "vlbias/core/error.h"

namespace vlbias::io_internal {

namespace {

constexpr std::string_view kGeoDeHeader = "file_path,object,region,ip_country";

// GeoDE's file_path, relative to the folder or to its images/ folder, whichever holds it.
std::string resolve_geode_path(const fs::path& dir, const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(dir / path, ec)) return path;
  if (path.rfind("images/", 0) != 0 && fs::is_regular_file(dir / "images" / path, ec)) {
    return "images/" + path;
  }
  return path;
}

}  // namespace

DatasetTable read_geode(const fs::path& dir, const DatasetOptions& options) {
  const std::string name = options.labels.empty() ? "index.csv" : options.labels;
  const Table labels = read_label_table(dir, name, "GeoDE",
                                        "the release's index.csv sits next to its images/ folder");
  DatasetTable data;
  data.label_files.push_back(name);
  data.columns = {"path", "object", "region", "country"};
  data.numeric = {false, false, false, false};
  data.cell_columns = {"object", "region"};
  const Column& file = require_column(labels, {"file_path"}, kGeoDeHeader);
  const Column& object = require_column(labels, {"object"}, kGeoDeHeader);
  const Column& region = require_column(labels, {"region"}, kGeoDeHeader);
  const Column* country = optional_column(labels, {"ip_country", "country"});
  for (std::size_t r = 0; r < labels.rows; ++r) {
    std::string path;
    if (!inside_folder(file.text(r), &path)) {
      data.malformed.push_back(
          {label_row_where(labels, r),
           fmt::format("file_path '{}' is not a path inside the folder", file.text(r))});
      continue;
    }
    if (object.missing(r) || region.missing(r)) {
      data.malformed.push_back({label_row_where(labels, r), "object or region is empty"});
      continue;
    }
    data.rows.push_back({resolve_geode_path(dir, path), object.text(r), region.text(r),
                         country ? country->text(r) : ""});
  }
  std::error_code ec;
  finish_dataset(data, dir, {fs::is_directory(dir / "images", ec) ? "images" : ""},
                 options.keep_missing);
  return data;
}

// ------------------------------------------------------------------ Dollar Street

namespace {

constexpr std::string_view kDollarHeader =
    "id,country.name,country.id,region.id,imageRelPath,topics,place,income";

// The topics cell: a JSON array as the MLCommons CSVs have it ("[\"kitchens\", \"stoves\"]"), a
// Python list literal as pandas writes a list column ("['kitchens', 'stoves']"), or one bare
// topic. Empty items are dropped; false when the list is malformed.
bool parse_topics(std::string_view text, std::vector<std::string>* topics) {
  topics->clear();
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i == text.size() || text[i] != '[') {
    if (!text.empty()) topics->emplace_back(text);
    return true;
  }
  ++i;
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size()) return false;
    if (text[i] == ']') return true;
    const char quote = text[i];
    if (quote != '\'' && quote != '"') return false;
    std::string item;
    for (++i; i < text.size() && text[i] != quote; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      item.push_back(text[i]);
    }
    if (i >= text.size()) return false;
    ++i;  // closing quote
    if (!item.empty()) topics->push_back(std::move(item));
  }
}

}  // namespace

DatasetTable read_dollarstreet(const fs::path& dir, const DatasetOptions& options) {
  const std::string name = options.labels.empty() ? "images_v2.csv" : options.labels;
  const Table labels = read_label_table(
      dir, name, "Dollar Street",
      "the MLCommons release's images_v2.csv sits next to its assets/ image folder");
  DatasetTable data;
  data.label_files.push_back(name);
  data.columns = {"path",   "id",     "country", "country_code",
                  "region", "income", "place",   options.topic_rows ? "topic" : "topics"};
  data.numeric = {false, false, false, false, false, true, false, false};
  data.cell_columns = {"region"};
  if (options.topic_rows) data.cell_columns.insert(data.cell_columns.begin(), "topic");
  const Column& file = require_column(labels, {"imageRelPath", "image_rel_path"}, kDollarHeader);
  const Column& country = require_column(labels, {"country.name", "country_name"}, kDollarHeader);
  const Column& region = require_column(labels, {"region.id", "region_id"}, kDollarHeader);
  const Column& income = require_column(labels, {"income"}, kDollarHeader);
  const Column& topics = require_column(labels, {"topics"}, kDollarHeader);
  const Column* id = optional_column(labels, {"id"});
  const Column* code = optional_column(labels, {"country.id", "country_id"});
  const Column* place = optional_column(labels, {"place"});
  std::vector<std::string> items;
  for (std::size_t r = 0; r < labels.rows; ++r) {
    std::string path;
    double money = 0;
    if (!inside_folder(file.text(r), &path)) {
      data.malformed.push_back(
          {label_row_where(labels, r),
           fmt::format("imageRelPath '{}' is not a path inside the folder", file.text(r))});
      continue;
    }
    if (!income.missing(r) && !parse_number(income.text(r), &money)) {
      data.malformed.push_back(
          {label_row_where(labels, r), fmt::format("income '{}' is not a number", income.text(r))});
      continue;
    }
    if (!parse_topics(topics.text(r), &items) || items.empty()) {
      data.malformed.push_back(
          {label_row_where(labels, r),
           fmt::format("topics '{}' is not a list of topics", topics.text(r))});
      continue;
    }
    std::vector<std::string> row = {path,
                                    id ? id->text(r) : "",
                                    country.text(r),
                                    code ? code->text(r) : "",
                                    region.text(r),
                                    income.text(r),
                                    place ? place->text(r) : "",
                                    ""};
    if (!options.topic_rows) {
      row.back() = fmt::format("{}", fmt::join(items, "|"));
      data.rows.push_back(std::move(row));
      continue;
    }
    for (const std::string& topic : items) {
      row.back() = topic;
      data.rows.push_back(row);
    }
  }
  finish_dataset(data, dir, {""}, options.keep_missing);
  return data;
}

}  // namespace vlbias::io_internal
