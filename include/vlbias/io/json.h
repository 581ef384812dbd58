#pragma once
// JSON read from outside: server replies and error bodies (src/generate), results.json given
// to `vlbias report`, safetensors headers, model configs and preprocessing files, lexicons,
// checkpoints. Every such text is parsed here, with a limit on how deeply arrays and objects
// nest: nlohmann parses iteratively but copies, compares and dumps values recursively, so a
// reply nested 150,000 levels deep would overflow the stack in whatever touched it next. The
// JSONL readers (simdjson, src/io/table/jsonl.cpp, record_stream.cpp) use the same limit.
//
// The depth is found by a linear pre-scan before nlohmann parses (json_depth): brackets
// outside strings. It costs one pass at memchr speed through strings (a base64 image is one
// string), works the same for DOM, callback and SAX parses, and leaves nlohmann's own
// callback free for what a caller needs it for (safetensors' duplicate keys); nlohmann's
// parser callback would instead switch every DOM parse to its slower callback builder and
// could not guard a SAX parse.
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace vlbias {

// Keys keep insertion order so that output is stable.
using Json = nlohmann::ordered_json;

// Levels of arrays and objects allowed in JSON from outside (`[]` is one level, a scalar
// none). The deepest JSON vlbias writes (results.json) nests under 10 levels, a chat
// completion 5; serde_json stops at 128 and simdjson at 1024 by default. 256 levels keep a
// recursive copy of the deepest accepted tree to a few tens of KiB of stack.
inline constexpr int kMaxJsonDepth = 256;

// The deepest nesting of arrays and objects in `text`, counting brackets outside strings (a
// string runs from a quote to the next quote not escaped by a backslash). Stops scanning once
// the depth exceeds `stop_above` and returns that depth. For any text, valid JSON or not, this
// is at least the depth a JSON parser reaches before it stops at its first error.
int json_depth(std::string_view text, int stop_above = std::numeric_limits<int>::max());

// InputError "<what> is JSON nested deeper than <max_depth> levels ..." when it is.
void check_json_depth(std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth);

// One JSON value. InputError naming `what` (e.g. "'run/results.json'") when the text is nested
// deeper than max_depth or is not valid JSON (the parser's message, bounded and printable).
Json parse_json(std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth);

// The same without exceptions, for replies that a driver records instead of stopping on.
struct ParsedJson {
  Json value;         // null unless ok()
  std::string error;  // "" when parsed; else "JSON nested deeper than N levels" or "not JSON"
  bool too_deep = false;
  bool ok() const { return error.empty(); }
};
ParsedJson try_parse_json(std::string_view text, int max_depth = kMaxJsonDepth);

struct Table;
// Cell (column, row) of a table as JSON, as the row-preserving outputs (scored.jsonl,
// generations.jsonl) copy input rows: null when missing, whole numbers below 2^53 as integers
// ("rank": 26, not 26.0, as they were written), other numbers as doubles, text as strings.
Json cell_json(const Table& table, std::size_t column, std::size_t row);

}  // namespace vlbias
