#pragma once
// Reading model config.json files (CLIP's, DINOv2's): typed fields with defaults and messages that
// name the file and the dotted key.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/io/json_type.h"

namespace vlbias::encode_internal {

// What a JSON value is, for messages ("an object", "a string", ...).
inline const char* kind(const Json& j) {
  return json_type_name(j.type());
}

// A JSON object being read, with its dotted path for messages.
struct Node {
  const Json& j;
  std::string path;  // "" for the root, else "text_config." etc.
  std::string_view source;

  bool has(const char* key) const { return j.contains(key) && !j.at(key).is_null(); }
  std::string name(const char* key) const { return path + key; }

  std::size_t size(const char* key, std::size_t dflt, std::size_t max,
                   bool required = false) const {
    if (!has(key)) {
      VLBIAS_CHECK(!required, InputError, "'{}' has no \"{}\"; expected a positive integer", source,
                   name(key));
      return dflt;
    }
    const Json& v = j.at(key);
    VLBIAS_CHECK(v.is_number_integer(), InputError,
                 "'{}': \"{}\" is {}; expected a positive integer", source, name(key), kind(v));
    const std::int64_t x = v.get<std::int64_t>();
    VLBIAS_CHECK(x > 0 && static_cast<std::uint64_t>(x) <= max, InputError,
                 "'{}': \"{}\" is {}; expected an integer from 1 to {}", source, name(key), x, max);
    return static_cast<std::size_t>(x);
  }

  double number(const char* key, double dflt) const {
    if (!has(key)) return dflt;
    const Json& v = j.at(key);
    VLBIAS_CHECK(v.is_number(), InputError, "'{}': \"{}\" is {}; expected a number", source,
                 name(key), kind(v));
    const double x = v.get<double>();
    VLBIAS_CHECK(std::isfinite(x), InputError, "'{}': \"{}\" is not finite", source, name(key));
    return x;
  }

  bool boolean(const char* key, bool dflt) const {
    if (!has(key)) return dflt;
    const Json& v = j.at(key);
    VLBIAS_CHECK(v.is_boolean(), InputError, "'{}': \"{}\" is {}; expected true or false", source,
                 name(key), kind(v));
    return v.get<bool>();
  }

  std::string string(const char* key, const std::string& dflt) const {
    if (!has(key)) return dflt;
    const Json& v = j.at(key);
    VLBIAS_CHECK(v.is_string(), InputError, "'{}': \"{}\" is {}; expected a string", source,
                 name(key), kind(v));
    return v.get<std::string>();
  }

  Node child(const char* key, bool required) const {
    static const Json kEmpty = Json::object();
    if (!has(key)) {
      VLBIAS_CHECK(!required, InputError, "'{}' has no \"{}\" object", source, name(key));
      return Node{kEmpty, name(key) + ".", source};
    }
    const Json& v = j.at(key);
    VLBIAS_CHECK(v.is_object(), InputError, "'{}': \"{}\" is {}; expected an object", source,
                 name(key), kind(v));
    return Node{v, name(key) + ".", source};
  }
};

}  // namespace vlbias::encode_internal
