// Streaming table rows (record_stream.h): CSV through the table reader's
// record parser, JSONL with one simdjson DOM parse per line.
#include "vlbias/io/table/record_stream.h"

#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/table/table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <simdjson.h>

#include "jsonl_parser.h"
#include "parquet/parquet_detail.h"
#include "table_detail.h"
#include "vlbias/core/error.h"

namespace vlbias {

namespace {

using io_internal::kNaN;
using io_internal::kProgressChunk;
using io_internal::kReleaseChunk;

// Looks up a dotted name: the whole name as a key first, then nested objects.
simdjson::dom::element find_path(simdjson::dom::object object, std::string_view name, bool* found) {
  simdjson::dom::element e;
  if (!object.at_key(name).get(e)) {
    *found = true;
    return e;
  }
  for (std::size_t dot = name.find('.'); dot != std::string_view::npos;
       dot = name.find('.', dot + 1)) {
    simdjson::dom::element head;
    if (object.at_key(name.substr(0, dot)).get(head)) continue;
    simdjson::dom::object inner;
    if (head.get_object().get(inner)) continue;
    const simdjson::dom::element r = find_path(inner, name.substr(dot + 1), found);
    if (*found) return r;
  }
  *found = false;
  return e;
}

// One non-blank line's object, parsed from `scratch` (the line padded as simdjson needs).
simdjson::dom::object parse_line_object(simdjson::dom::parser& parser, std::vector<char>& scratch,
                                        std::string_view line, const std::string& path,
                                        std::size_t line_no) {
  if (scratch.size() < line.size() + simdjson::SIMDJSON_PADDING) {
    scratch.resize(line.size() + simdjson::SIMDJSON_PADDING);
  }
  std::memcpy(scratch.data(), line.data(), line.size());
  std::memset(scratch.data() + line.size(), ' ', simdjson::SIMDJSON_PADDING);
  simdjson::dom::element root;
  const auto error = parser.parse(scratch.data(), line.size(), false).get(root);
  if (error == simdjson::UTF8_ERROR) {
    VLBIAS_FAIL(InputError, "'{}' line {} is not valid UTF-8; expected UTF-8 text", path, line_no);
  }
  VLBIAS_CHECK(!error, InputError,
               "'{}' line {} is not valid JSON ({}); expected one JSON object per line", path,
               line_no, io_internal::error_text(error));
  simdjson::dom::object object;
  VLBIAS_CHECK(!root.get_object().get(object), InputError,
               "'{}' line {} does not hold an object; expected one JSON object per line", path,
               line_no);
  return object;
}

// Field k of the record from its JSON value: a string as it is, a number formatted (and kept
// as the number), a boolean as true/false, an array or object minified; null is missing.
// `owned` holds the text the record points to when it is not in the line itself.
void set_field(Record& record, std::size_t k, const simdjson::dom::element& v, std::string& owned) {
  switch (v.type()) {
    case simdjson::dom::element_type::STRING:
      record.text_[k] = v.get_string().value_unsafe();
      record.present_[k] = !record.text_[k].empty();
      break;
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: {
      const double x = v.type() == simdjson::dom::element_type::DOUBLE
                           ? v.get_double().value_unsafe()
                       : v.type() == simdjson::dom::element_type::INT64
                           ? static_cast<double>(v.get_int64().value_unsafe())
                           : static_cast<double>(v.get_uint64().value_unsafe());
      owned = fmt::format("{}", x);
      record.text_[k] = owned;
      record.json_number_[k] = x;
      record.present_[k] = true;
      break;
    }
    case simdjson::dom::element_type::BOOL:
      record.text_[k] = v.get_bool().value_unsafe() ? "true" : "false";
      record.present_[k] = true;
      break;
    case simdjson::dom::element_type::ARRAY:
    case simdjson::dom::element_type::OBJECT:
      owned = simdjson::minify(v);
      record.text_[k] = owned;
      record.present_[k] = true;
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      break;
  }
}

std::size_t stream_jsonl(const std::string& path, const std::vector<std::string>& columns,
                         Record& record, const std::function<void(const Record&)>& on_row,
                         const std::function<void(std::size_t, std::size_t)>& on_progress,
                         std::size_t required) {
  io_internal::FileBytes file(path);
  const std::string_view text = file.view();
  simdjson::dom::parser parser;
  io_internal::limit_depth(parser);
  std::vector<char> scratch;
  std::vector<std::string> owned(columns.size());
  std::vector<bool> seen(columns.size(), false);
  record.text_.assign(columns.size(), std::string_view());
  record.present_.assign(columns.size(), false);
  record.json_number_.assign(columns.size(), kNaN);
  std::size_t rows = 0, line_no = 1, start = 0, released = 0, reported = 0;
  while (start < text.size()) {
    const void* nl = std::memchr(text.data() + start, '\n', text.size() - start);
    const std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
    std::string_view line = text.substr(start, end - start);
    const std::size_t this_line = line_no++;
    start = end + 1;
    if (this_line == 1 && line.size() >= 3 && std::memcmp(line.data(), "\xEF\xBB\xBF", 3) == 0) {
      line.remove_prefix(3);
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const simdjson::dom::object object = parse_line_object(parser, scratch, line, path, this_line);
    for (std::size_t k = 0; k < columns.size(); ++k) {
      bool found = false;
      const simdjson::dom::element v = find_path(object, columns[k], &found);
      record.present_[k] = false;
      record.text_[k] = std::string_view();
      record.json_number_[k] = kNaN;
      if (!found) continue;
      seen[k] = true;
      set_field(record, k, v, owned[k]);
    }
    record.line_ = this_line;
    on_row(record);
    ++rows;
    if (start - released >= kReleaseChunk && start < text.size()) {
      file.release_before(text.data() + start);
      released = start;
    }
    if (on_progress && start - reported >= kProgressChunk) {
      on_progress(std::min(start, text.size()), text.size());
      reported = start;
    }
  }
  for (std::size_t k = 0; k < columns.size(); ++k) {
    VLBIAS_CHECK(seen[k] || rows == 0 || k >= required, InputError,
                 "'{}' has no column '{}': no row holds that key", path, columns[k]);
  }
  if (on_progress) on_progress(text.size(), text.size());
  return rows;
}

}  // namespace

double Record::number(std::size_t i) const {
  if (!present_[i]) return kNaN;
  if (!json_number_.empty() && !std::isnan(json_number_[i])) return json_number_[i];
  double v = kNaN;
  VLBIAS_CHECK(io_internal::parse_number(text_[i], &v), InputError,
               "'{}' line {}, column '{}' holds {}; expected a finite number or an empty cell",
               *source_, line_, (*names_)[i], io_internal::quoted(text_[i]));
  return v;
}

std::size_t for_each_record(const std::string& path, const std::vector<std::string>& columns,
                            const std::function<void(const Record&)>& on_row,
                            const std::function<void(std::size_t, std::size_t)>& on_progress,
                            std::size_t required) {
  Record record;
  record.source_ = &path;
  record.names_ = &columns;
  const std::string ext = io_internal::lower_extension(path);
  std::size_t rows = 0;
  if (ext == ".csv" || ext == ".tsv") {
    rows = io_internal::stream_csv(path, ext == ".tsv" ? '\t' : ',', columns, record, on_row,
                                   on_progress, required);
  } else if (ext == ".jsonl" || ext == ".ndjson") {
    rows = stream_jsonl(path, columns, record, on_row, on_progress, required);
  } else if (ext == ".parquet" || is_parquet_folder(path)) {
    // Parquet: the columns asked for (optional ones when the first shard has them) are read
    // as a table and handed out row by row.
    const ParquetInfo info = read_parquet_info(io_internal::pq_inputs(path).front());
    std::vector<std::string> wanted;
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const bool present =
          std::any_of(info.columns.begin(), info.columns.end(),
                      [&](const ParquetColumnInfo& c) { return c.name == columns[k]; });
      const bool repeated = std::find(wanted.begin(), wanted.end(), columns[k]) != wanted.end();
      if ((k < required || present) && !repeated) wanted.push_back(columns[k]);
    }
    rows = for_each_record(read_parquet(path, wanted), columns, on_row, required);
    if (on_progress) on_progress(1, 1);
  } else {
    VLBIAS_FAIL(InputError,
                "cannot read '{}' as a table: unsupported extension '{}'; expected .csv, .tsv, "
                ".jsonl, .ndjson or .parquet",
                path, ext);
  }
  VLBIAS_CHECK(rows > 0, InputError, "'{}' has no rows; expected at least one", path);
  return rows;
}

std::size_t for_each_record(const Table& table, const std::vector<std::string>& columns,
                            const std::function<void(const Record&)>& on_row,
                            std::size_t required) {
  std::vector<const Column*> cols;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const auto at = table.find(columns[k]);
    cols.push_back(k >= required && !at ? nullptr : &table.column(columns[k]));
  }
  Record record;
  record.source_ = &table.source;
  record.names_ = &columns;
  record.text_.resize(columns.size());
  record.present_.resize(columns.size());
  std::vector<std::string> cells(columns.size());
  for (std::size_t row = 0; row < table.rows; ++row) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      record.present_[i] = cols[i] != nullptr && !cols[i]->missing(row);
      cells[i] = record.present_[i] ? cols[i]->text(row) : std::string();
      record.text_[i] = cells[i];
    }
    record.line_ = row < table.line_of_row.size() ? table.line_of_row[row] : row + 1;
    on_row(record);
  }
  return table.rows;
}

}  // namespace vlbias
