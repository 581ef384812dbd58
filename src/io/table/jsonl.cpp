// JSON Lines reading with simdjson: one DOM parse per line into a reused
// parser, nested objects flattened to dotted column names.
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "jsonl_parser.h"
#include "table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

using io_internal::kNaN;
using io_internal::kReleaseChunk;

struct JsonColumn {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  Column column;
  Dictionary dict;
  bool numeric = true;
  std::size_t number_row = kNone;  // first row with a JSON number
  std::size_t text_row = kNone;    // first row with another JSON type
  const char* text_type = "";

  std::size_t filled() const { return numeric ? column.numbers.size() : column.codes.size(); }

  void pad(std::size_t rows) {
    if (numeric) {
      column.numbers.resize(rows, kNaN);
    } else {
      column.codes.resize(rows, Column::kMissing);
    }
  }

  void add_missing() {
    if (numeric) {
      column.numbers.push_back(kNaN);
    } else {
      column.codes.push_back(Column::kMissing);
    }
  }

  void add_number(double value, std::size_t row) {
    if (number_row == kNone) number_row = row;
    if (numeric) {
      column.numbers.push_back(value);
    } else {
      column.codes.push_back(intern_number(value));
    }
  }

  void add_text(std::string_view text, std::size_t row, const char* type) {
    if (text_row == kNone) {
      text_row = row;
      text_type = type;
    }
    if (numeric) to_string_column();
    column.codes.push_back(dict.intern(column.levels, text));
  }

  // Numbers read so far become their shortest round-trip text, as Column::text gives.
  void to_string_column() {
    numeric = false;
    std::vector<std::uint32_t> codes;
    codes.reserve(column.numbers.capacity());
    for (const double v : column.numbers) {
      codes.push_back(std::isnan(v) ? Column::kMissing : intern_number(v));
    }
    std::vector<double>().swap(column.numbers);
    column.codes = std::move(codes);
  }

  std::uint32_t intern_number(double value) {
    char text[64];
    const auto result = fmt::format_to_n(text, sizeof text, "{}", value);
    return dict.intern(column.levels, std::string_view(text, result.size));
  }
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return hash_bytes(s); }
};

const char* type_name(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::STRING:
      return "a string";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE:
      return "a number";
    case simdjson::dom::element_type::BOOL:
      return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    case simdjson::dom::element_type::OBJECT:
      return "an object";
  }
  return "a value";
}

class JsonlBuilder {
 public:
  explicit JsonlBuilder(const std::string& source) {
    table_.source = source;
    io_internal::limit_depth(parser_);
  }

  void add_line(std::string_view line, std::size_t line_no) {
    if (line_no == 1 && line.size() >= 3 && std::memcmp(line.data(), "\xEF\xBB\xBF", 3) == 0) {
      line.remove_prefix(3);
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    // simdjson reads up to SIMDJSON_PADDING bytes past the end of its input.
    if (scratch_.size() < line.size() + simdjson::SIMDJSON_PADDING) {
      scratch_.resize(line.size() + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(scratch_.data(), line.data(), line.size());
    std::memset(scratch_.data() + line.size(), ' ', simdjson::SIMDJSON_PADDING);
    simdjson::dom::element root;
    const auto error = parser_.parse(scratch_.data(), line.size(), false).get(root);
    if (error == simdjson::UTF8_ERROR) {
      VLBIAS_FAIL(InputError, "'{}' line {} is not valid UTF-8; expected UTF-8 text", table_.source,
                  line_no);
    }
    VLBIAS_CHECK(!error, InputError,
                 "'{}' line {} is not valid JSON ({}); expected one JSON object per line",
                 table_.source, line_no, io_internal::error_text(error));
    VLBIAS_CHECK(root.type() == simdjson::dom::element_type::OBJECT, InputError,
                 "'{}' line {} holds {}, not an object; expected one JSON object per line",
                 table_.source, line_no, type_name(root.type()));
    line_no_ = line_no;
    hint_ = 0;
    path_.clear();
    flatten(root.get_object().value_unsafe());
    table_.line_of_row.push_back(line_no);
    ++table_.rows;
  }

  Table finish() {
    VLBIAS_CHECK(table_.rows > 0, InputError,
                 "'{}' contains no JSON objects; expected one JSON object per line", table_.source);
    table_.columns.reserve(columns_.size());
    for (auto& c : columns_) {
      c.pad(table_.rows);
      c.column.type = c.numeric ? ColumnType::Numeric : ColumnType::String;
      if (!c.numeric && c.number_row != JsonColumn::kNone) {
        c.column.mixed = Column::MixedTypes{c.number_row, c.text_row, c.text_type};
      }
      table_.columns.push_back(std::move(c.column));
    }
    return std::move(table_);
  }

 private:
  void flatten(simdjson::dom::object object) {
    for (const auto field : object) {
      VLBIAS_CHECK(!field.key.empty(), InputError,
                   "'{}' line {} has an empty key{}; expected every key to be named", table_.source,
                   line_no_, path_.empty() ? std::string() : fmt::format(" inside '{}'", path_));
      const std::size_t mark = path_.size();
      if (mark > 0) path_ += '.';
      path_.append(field.key.data(), field.key.size());
      const simdjson::dom::element value = field.value;
      switch (value.type()) {
        case simdjson::dom::element_type::OBJECT:
          // An empty object adds no column: it has no leaves.
          flatten(value.get_object().value_unsafe());
          break;
        case simdjson::dom::element_type::ARRAY:
          cell().add_text(simdjson::minify(value), table_.rows, "an array");
          break;
        case simdjson::dom::element_type::STRING: {
          const std::string_view text = value.get_string().value_unsafe();
          JsonColumn& c = cell();
          if (text.empty()) {
            c.add_missing();  // "" is missing, as an empty CSV cell is
          } else {
            c.add_text(text, table_.rows, "a string");
          }
          break;
        }
        case simdjson::dom::element_type::INT64:
          cell().add_number(static_cast<double>(value.get_int64().value_unsafe()), table_.rows);
          break;
        case simdjson::dom::element_type::UINT64:
          cell().add_number(static_cast<double>(value.get_uint64().value_unsafe()), table_.rows);
          break;
        case simdjson::dom::element_type::DOUBLE:
          cell().add_number(value.get_double().value_unsafe(), table_.rows);
          break;
        case simdjson::dom::element_type::BOOL:
          cell().add_text(value.get_bool().value_unsafe() ? "true" : "false", table_.rows,
                          "a boolean");
          break;
        case simdjson::dom::element_type::NULL_VALUE:
          cell().add_missing();
          break;
      }
      path_.resize(mark);
    }
  }

  // The column for path_ in the current row, padded with missing cells for the
  // rows that lacked it.
  JsonColumn& cell() {
    std::size_t index;
    // Rows usually repeat the key order of the rows before: try the next column first.
    if (hint_ < columns_.size() && columns_[hint_].column.name == path_) {
      index = hint_;
    } else if (const auto it = index_.find(std::string_view(path_)); it != index_.end()) {
      index = it->second;
    } else {
      index = columns_.size();
      columns_.emplace_back();
      columns_.back().column.name = path_;
      index_.emplace(path_, index);
    }
    hint_ = index + 1;
    JsonColumn& c = columns_[index];
    VLBIAS_CHECK(c.filled() <= table_.rows, InputError,
                 "'{}' line {} has the key '{}' twice; expected each key once per object",
                 table_.source, line_no_, path_);
    c.pad(table_.rows);
    return c;
  }

  simdjson::dom::parser parser_;
  std::vector<char> scratch_;
  std::string path_;
  std::vector<JsonColumn> columns_;
  std::unordered_map<std::string, std::size_t, StringHash, std::equal_to<>> index_;
  std::size_t hint_ = 0;
  std::size_t line_no_ = 0;
  Table table_;
};

void parse_lines(std::string_view text, JsonlBuilder& builder, io_internal::FileBytes* file) {
  std::size_t line_no = 1;
  std::size_t start = 0;
  std::size_t released = 0;
  while (start < text.size()) {
    const void* nl = std::memchr(text.data() + start, '\n', text.size() - start);
    const std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
    builder.add_line(text.substr(start, end - start), line_no);
    ++line_no;
    start = end + 1;
    if (file != nullptr && start - released >= kReleaseChunk && start < text.size()) {
      file->release_before(text.data() + start);
      released = start;
    }
  }
}

}  // namespace

Table parse_jsonl(std::string_view text, const std::string& source) {
  JsonlBuilder builder(source);
  parse_lines(text, builder, nullptr);
  return builder.finish();
}

Table read_jsonl(const std::string& path) {
  io_internal::FileBytes file(path);
  JsonlBuilder builder(path);
  parse_lines(file.view(), builder, &file);
  return builder.finish();
}

}  // namespace vlbias
