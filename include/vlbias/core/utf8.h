#pragma once
// UTF-8 validation (src/core/utf8.cpp), for text that comes from outside: tables, specs.
#include <cstddef>
#include <string_view>

namespace vlbias {

// Offset of the first byte that is not part of valid UTF-8 (text.size() if none): overlong
// forms, surrogates and code points above U+10FFFF are invalid, as RFC 3629 says.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace vlbias
