// Reading model-folder files (see text_files.h).
#include "text_files.h"

#include <iterator>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/error.h"

namespace vlbias::text_internal {

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  using json = nlohmann::json;
  // One set of keys per open object; a key seen twice is refused.
  std::vector<std::unordered_set<std::string>> keys;
  std::string repeated;
  const json::parser_callback_t callback = [&](int /*depth*/, json::parse_event_t event,
                                               json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty() && repeated.empty()) {
      if (!keys.back().insert(parsed.get<std::string>()).second) {
        repeated = parsed.get<std::string>();
      }
    }
    return true;
  };
  json parsed;
  try {
    parsed = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {
    VLBIAS_FAIL(InputError, "'{}' is not valid JSON: {}", source, e.what());
  }
  VLBIAS_CHECK(repeated.empty(), InputError,
               "'{}' has the key '{}' twice in one object; expected every key once", source,
               excerpt(repeated));
  return parsed;
}

std::string excerpt(std::string_view s, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (s.size() > max_bytes) out += "...";
  return out;
}

namespace {

const char* type_name(nlohmann::json::value_t type) {
  using v = nlohmann::json::value_t;
  switch (type) {
    case v::object:
      return "an object";
    case v::array:
      return "an array";
    case v::string:
      return "a string";
    case v::boolean:
      return "true or false";
    case v::number_integer:
    case v::number_unsigned:
      return "an integer";
    case v::number_float:
      return "a number";
    default:
      return "null";
  }
}

bool has_type(const nlohmann::json& value, nlohmann::json::value_t type) {
  using v = nlohmann::json::value_t;
  if (type == v::number_integer) return value.is_number_integer();
  if (type == v::number_float) return value.is_number();
  return value.type() == type;
}

}  // namespace

const nlohmann::json* optional_member(const nlohmann::json& object, std::string_view key,
                                      nlohmann::json::value_t type, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  VLBIAS_CHECK(has_type(*it, type), InputError, "{}: '{}' is {}; expected {}", where, key,
               type_name(it->type()), type_name(type));
  return &*it;
}

const nlohmann::json& member(const nlohmann::json& object, std::string_view key,
                             nlohmann::json::value_t type, const std::string& where) {
  const nlohmann::json* value = optional_member(object, key, type, where);
  VLBIAS_CHECK(value != nullptr, InputError, "{}: '{}' is missing; expected {}", where, key,
               type_name(type));
  return *value;
}

bool bool_member(const nlohmann::json& object, std::string_view key, bool fallback,
                 const std::string& where) {
  const nlohmann::json* value =
      optional_member(object, key, nlohmann::json::value_t::boolean, where);
  return value != nullptr ? value->get<bool>() : fallback;
}

}  // namespace vlbias::text_internal
