// The geographic datasets: GeoDE (index.csv) and Dollar Street (images_v2.csv).
// Formats and quirks: docs/datasets.md.
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "datasets_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/io/json.h"

namespace vlbias::datasets_internal {

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

// Appends code point `cp` as UTF-8; false for a surrogate or a value above U+10FFFF, which
// no UTF-8 text holds.
bool append_topic_code_point(std::string& out, unsigned long cp) {
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return true;
}

// The escape that starts at text[i] (a backslash) inside a quoted item of a Python list
// literal, decoded as Python's string literals do (Python reference, "String and bytes
// literals"): \\ \' \" \n \r \t \xhh \uXXXX \UXXXXXXXX; any other backslash is kept with the
// character after it, as Python keeps "\d". Advances i past the escape; false when \x, \u
// or \U lacks its hex digits or names no character.
bool decode_topic_escape(std::string_view text, std::size_t& i, std::string& item) {
  const char c = text[i + 1];
  const std::size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  if (digits == 0) {
    constexpr std::string_view kNamed = "\\'\"nrt", kMeant = "\\'\"\n\r\t";
    const std::size_t k = kNamed.find(c);
    if (k == std::string_view::npos) item += '\\';
    item += k == std::string_view::npos ? c : kMeant[k];
    i += 2;
    return true;
  }
  if (i + 2 + digits > text.size()) return false;
  unsigned long cp = 0;
  for (std::size_t k = i + 2; k < i + 2 + digits; ++k) {
    const char h = text[k];
    const int v = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
    if (v < 0) return false;
    cp = cp * 16 + static_cast<unsigned long>(v);
  }
  i += 2 + digits;
  return append_topic_code_point(item, cp);
}

// A Python list literal of quoted strings, as pandas writes a list column ("['kitchens',
// \"children's rooms\"]"), from the '[' at text[i].
bool parse_python_topics(std::string_view text, std::size_t i, std::vector<std::string>* topics) {
  ++i;
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size()) return false;
    if (text[i] == ']') return true;
    const char quote = text[i];
    if (quote != '\'' && quote != '"') return false;
    std::string item;
    ++i;
    while (i < text.size() && text[i] != quote) {
      if (text[i] != '\\') {
        item.push_back(text[i++]);
      } else if (i + 1 >= text.size() || !decode_topic_escape(text, i, item)) {
        return false;
      }
    }
    if (i >= text.size()) return false;
    ++i;  // closing quote
    if (!item.empty()) topics->push_back(std::move(item));
  }
}

// The topics cell: a JSON array of strings as the MLCommons CSVs have it ("[\"kitchens\",
// \"stoves\"]"; escapes such as \u00e9 decoded as JSON decodes them), a Python list literal as
// pandas writes a list column ("['kitchens', 'stoves']"; escapes decoded as Python does), or
// one bare topic. A backslash is never dropped: an escape is decoded or kept whole. Empty items
// are dropped; false when the list is malformed.
bool parse_topics(std::string_view text, std::vector<std::string>* topics) {
  topics->clear();
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i == text.size() || text[i] != '[') {
    if (!text.empty()) topics->emplace_back(text);
    return true;
  }
  const ParsedJson parsed = try_parse_json(text);
  if (parsed.ok() && parsed.value.is_array()) {
    for (const Json& item : parsed.value) {
      if (!item.is_string()) return false;
      if (!item.get_ref<const std::string&>().empty()) topics->push_back(item.get<std::string>());
    }
    return true;
  }
  return parse_python_topics(text, i, topics);
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
    if (!income.missing(r) && !parse_cell_number(income.text(r), &money)) {
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

}  // namespace vlbias::datasets_internal
