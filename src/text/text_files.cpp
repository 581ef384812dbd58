// Reading model-folder files (see text_files.h).
#include "text_files.h"

#include <iterator>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/json_type.h"

namespace vlbias::text_internal {

namespace {

// A SAX pass that only looks for a key given twice in one object (one set of keys per open
// object). nlohmann's parser callback did this before, but its DOM builder then scans the
// enclosing array for discarded values each time an object ends: quadratic in an array of
// objects (100,000 added tokens took 20 s to load; issue 37).
struct RepeatedKeyFinder {
  using json = nlohmann::json;
  std::vector<std::unordered_set<std::string>> keys;
  std::string repeated;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) {
    keys.emplace_back();
    return true;
  }
  bool key(json::string_t& k) {
    if (!keys.back().insert(k).second) {
      repeated = k;
      return false;  // one is enough
    }
    return true;
  }
  bool end_object() {
    keys.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;  // the DOM parse below reports it
  }
};

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  using json = nlohmann::json;
  RepeatedKeyFinder finder;
  (void)json::sax_parse(text.begin(), text.end(), &finder);
  VLBIAS_CHECK(finder.repeated.empty(), InputError,
               "'{}' has the key '{}' twice in one object; expected every key once", source,
               excerpt(finder.repeated));
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    VLBIAS_FAIL(InputError, "'{}' is not valid JSON: {}", source, e.what());
  }
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

// What a member must be, in words (has_type accepts any integer for number_integer and any
// number for number_float).
const char* expected_type_name(nlohmann::json::value_t type) {
  using v = nlohmann::json::value_t;
  if (type == v::boolean) return "true or false";
  if (type == v::number_integer) return "an integer";
  if (type == v::number_float) return "a number";
  return json_type_name(type);
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
               json_type_name(it->type()), expected_type_name(type));
  return &*it;
}

const nlohmann::json& member(const nlohmann::json& object, std::string_view key,
                             nlohmann::json::value_t type, const std::string& where) {
  const nlohmann::json* value = optional_member(object, key, type, where);
  VLBIAS_CHECK(value != nullptr, InputError, "{}: '{}' is missing; expected {}", where, key,
               expected_type_name(type));
  return *value;
}

bool bool_member(const nlohmann::json& object, std::string_view key, bool fallback,
                 const std::string& where) {
  const nlohmann::json* value =
      optional_member(object, key, nlohmann::json::value_t::boolean, where);
  return value != nullptr ? value->get<bool>() : fallback;
}

}  // namespace vlbias::text_internal
