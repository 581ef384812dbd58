// JSON from outside with a nesting limit (include/vlbias/io/json.h).
#include "vlbias/io/json.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/io/json_type.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

int json_depth(std::string_view text, int stop_above) {
  const char* data = text.data();
  const std::size_t n = text.size();
  int depth = 0, deepest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    switch (data[i]) {
      case '"': {
        // To the closing quote: the next quote preceded by an even run of backslashes (each
        // escape is a backslash and one character, so an odd run escapes the quote).
        std::size_t from = i + 1;
        for (;;) {
          const void* q = from < n ? std::memchr(data + from, '"', n - from) : nullptr;
          if (q == nullptr) return deepest;  // unterminated: nothing after it is structure
          const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - data);
          std::size_t run = 0;
          while (at - run > i + 1 && data[at - run - 1] == '\\') ++run;
          from = at + 1;
          if (run % 2 == 0) break;
        }
        i = from - 1;
        break;
      }
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > stop_above) return deepest;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

void check_json_depth(std::string_view text, std::string_view what, int max_depth) {
  VLBIAS_CHECK(json_depth(text, max_depth) <= max_depth, InputError,
               "{} is JSON nested deeper than {} levels of arrays and objects, which vlbias "
               "refuses to read",
               what, max_depth);
}

Json parse_json(std::string_view text, std::string_view what, int max_depth) {
  check_json_depth(text, what, max_depth);
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // parse_error for syntax, out_of_range for numbers beyond double (1e999). The message
    // quotes the last token read, which may be long or binary.
    std::string_view message = e.what();
    if (const auto cut = message.find("] "); cut != std::string_view::npos)
      message.remove_prefix(cut + 2);
    VLBIAS_FAIL(InputError, "{} is not valid JSON: {}", what, escape_for_message(message, 240));
  }
}

ParsedJson try_parse_json(std::string_view text, int max_depth) {
  ParsedJson out;
  if (json_depth(text, max_depth) > max_depth) {
    out.too_deep = true;
    out.error = fmt::format("JSON nested deeper than {} levels", max_depth);
    return out;
  }
  out.value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (out.value.is_discarded()) {
    out.value = nullptr;
    out.error = "not JSON";
  }
  return out;
}

Json cell_json(const Table& table, std::size_t column, std::size_t row) {
  const Column& c = table.columns[column];
  if (c.missing(row)) return nullptr;
  if (c.type == ColumnType::Numeric) {
    const double v = c.numbers[row];
    if (std::floor(v) == v && std::fabs(v) < 9007199254740992.0) {
      return static_cast<std::int64_t>(v);
    }
    return v;
  }
  return c.levels[c.codes[row]];
}

const char* json_type_name(nlohmann::json::value_t type) {
  using v = nlohmann::json::value_t;
  switch (type) {
    case v::object:
      return "an object";
    case v::array:
      return "an array";
    case v::string:
      return "a string";
    case v::boolean:
      return "a boolean";
    case v::null:
      return "null";
    case v::number_unsigned:
      return "a non-negative integer";
    case v::number_integer:
      return "a negative integer";
    case v::number_float:
      return "a non-integer number";
    default:
      return "an unsupported value";
  }
}

}  // namespace vlbias
