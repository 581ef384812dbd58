#pragma once
// What a JSON value is, in words for messages (src/io/json.cpp): one naming for every reader
// of JSON files (safetensors headers, tokenizer files, model configs).
#include <nlohmann/json.hpp>

namespace vlbias {

// "an object", "an array", "a string", "a boolean", "null", "a non-negative integer", "a
// negative integer", "a non-integer number" ("an unsupported value" for nlohmann's binary and
// discarded values). Both nlohmann::json and nlohmann::ordered_json share this value_t.
const char* json_type_name(nlohmann::json::value_t type);

}  // namespace vlbias
