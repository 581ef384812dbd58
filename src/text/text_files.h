#pragma once
// Internal to vlbias_text: reading the files of a Hugging Face model folder (the bytes come
// from io/file_text.h).
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace vlbias::text_internal {

// Parses JSON text from `source` (a file name for messages). InputError when it is
// not JSON or when an object repeats a key (a DOM parse would keep only one of them).
nlohmann::json parse_json(std::string_view text, const std::string& source);

// Untrusted text quoted in a message: printable ASCII as is, other bytes as \xNN,
// at most `max_bytes` bytes and then "...".
std::string excerpt(std::string_view s, std::size_t max_bytes = 60);

// "KEY" of a JSON object with the expected type, for messages and checks:
// InputError "'<source>' <where>: '<key>' is <what the value is>; expected <type>".
const nlohmann::json& member(const nlohmann::json& object, std::string_view key,
                             nlohmann::json::value_t type, const std::string& where);
// Like member() but returns nullptr when the key is absent or null.
const nlohmann::json* optional_member(const nlohmann::json& object, std::string_view key,
                                      nlohmann::json::value_t type, const std::string& where);
bool bool_member(const nlohmann::json& object, std::string_view key, bool fallback,
                 const std::string& where);

}  // namespace vlbias::text_internal
