#pragma once
// Internal to vlbias_io: what the two JSONL readers (jsonl.cpp's tables, record_stream.cpp's
// streamed rows) share about simdjson: the nesting limit every JSON reader of vlbias applies
// (kMaxJsonDepth, json.h) and the words for a parse error.
#include <string>

#include <fmt/format.h>
#include <simdjson.h>

#include "vlbias/core/error.h"
#include "vlbias/io/json.h"

namespace vlbias::io_internal {

// Sets the parser's nesting limit to kMaxJsonDepth (simdjson's default is 1024); a parser
// keeps it when it grows for longer lines.
inline void limit_depth(simdjson::dom::parser& parser) {
  VLBIAS_CHECK(parser.allocate(0, kMaxJsonDepth) == simdjson::SUCCESS, InternalError,
               "simdjson could not allocate a parser");
}

// Why a line did not parse, for "line N is not valid JSON (...)".
inline std::string error_text(simdjson::error_code error) {
  if (error == simdjson::DEPTH_ERROR)
    return fmt::format("nested deeper than {} levels of arrays and objects", kMaxJsonDepth);
  return simdjson::error_message(error);
}

}  // namespace vlbias::io_internal
