#pragma once
// Reading YAML specs (audit specs in src/audits, generate specs in src/cli): one document,
// every key checked against the keys allowed where it stands, every value against its type.
//
// Every value is checked by hand against the documented schema rather than with
// yaml-cpp's as<T>() so that each message names the full key path, the line and what was
// expected, and so that "10.5", "-3", "1e400" or a quoted "10" are rejected instead of
// silently converted. Every converted value is counted against kMaxValues (aliases can make
// a small text name one long list many times). Failures are UsageErrors.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace vlbias::yaml {

constexpr std::size_t kMaxValues = 1'000'000;                // scalars converted per spec
constexpr std::size_t kMaxSpecBytes = std::size_t{1} << 20;  // 1 MiB: a spec is a few hundred

// Parses a spec text that must be exactly one YAML document (`expected` says what it should
// hold, for the message). UsageError for texts over kMaxSpecBytes, malformed or too deeply
// nested YAML, and zero or several documents.
YAML::Node load_document(const std::string& yaml_text, const std::string& source,
                         const char* expected);
// A spec file's text; InputError naming the file and `what` ("audit spec") when it is not
// a readable regular file, is over kMaxSpecBytes or holds only whitespace.
std::string read_spec_file(const std::filesystem::path& path, const char* what);

struct Context {
  std::string source;
  std::filesystem::path base_dir;
  std::size_t values = 0;
};

using Entries = std::vector<std::pair<std::string, YAML::Node>>;

// "spec.yaml line 12" (yaml-cpp's marks are 0-based), or just the source.
std::string where(const Context& ctx, const YAML::Node& node);
// "analyses.scweat" + "p_test" -> "analyses.scweat.p_test".
std::string join_path(const std::string& path, const std::string& key);
// A short, printable rendering of a scalar for messages.
std::string shown(const std::string& text);
// "nothing", "'text'", "a list", "a map".
std::string describe(const YAML::Node& node);
// Throws "<where>: <path> <what>."
[[noreturn]] void fail(const Context& ctx, const YAML::Node& node, const std::string& path,
                       const std::string& what);
void count_value(Context& ctx, const YAML::Node& node, const std::string& path);
// The entries of a map after checking that every key is a unique string allowed here.
Entries check_map(Context& ctx, const YAML::Node& node, const std::string& path,
                  std::initializer_list<const char*> allowed);
const YAML::Node* find(const Entries& entries, const std::string& key);
const YAML::Node& require(const Context& ctx, const YAML::Node& map, const Entries& entries,
                          const std::string& path, const std::string& key);
std::string as_string(Context& ctx, const YAML::Node& node, const std::string& path);
std::uint64_t as_uint64(Context& ctx, const YAML::Node& node, const std::string& path);
std::size_t as_size(Context& ctx, const YAML::Node& node, const std::string& path);
std::size_t as_positive_size(Context& ctx, const YAML::Node& node, const std::string& path);
// An integer in [min, max]; the message gives the range, followed by `meaning` (" (0: off)").
std::size_t as_size_in_range(Context& ctx, const YAML::Node& node, const std::string& path,
                             std::size_t min, std::size_t max, std::string_view meaning = "");
// A YAML 1.2 core-schema float: decimal or exponent notation, or .inf / .nan.
double as_double(Context& ctx, const YAML::Node& node, const std::string& path);
double as_finite_at_least_zero(Context& ctx, const YAML::Node& node, const std::string& path);
double as_finite_positive(Context& ctx, const YAML::Node& node, const std::string& path);
// A level in (0, 1).
double as_ci(Context& ctx, const YAML::Node& node, const std::string& path);
bool as_bool(Context& ctx, const YAML::Node& node, const std::string& path);
// One of `allowed`, exactly.
std::string as_choice(Context& ctx, const YAML::Node& node, const std::string& path,
                      std::initializer_list<const char*> allowed);
// A list of distinct non-empty strings; `allow_empty` false rejects [].
std::vector<std::string> as_string_list(Context& ctx, const YAML::Node& node,
                                        const std::string& path, bool allow_empty = false);
// A path, resolved against the spec's folder when relative.
std::filesystem::path as_path(Context& ctx, const YAML::Node& node, const std::string& path);
// An input file's path (as_path): UsageError naming the key when it exists but is a device,
// folder or socket (input_file.h); a missing file is reported by its reader.
std::filesystem::path as_input_file(Context& ctx, const YAML::Node& node, const std::string& path);
}  // namespace vlbias::yaml
