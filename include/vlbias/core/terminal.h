#pragma once
// Text shown on a terminal (src/core/utf8.cpp, src/core/log.cpp): messages quote labels,
// paths and server replies, and an ESC or BEL in a label must not retitle or clear the
// user's terminal (ECMA-48 control functions). Everything vlbias prints to stderr goes
// through printable_text: eprint for messages, warn (log.h) and the CLI's error line.
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace vlbias {

// `text` safe to print on a terminal: every control character but line feed and tab (C0, DEL)
// and every byte that is not part of valid UTF-8 becomes \xNN, each C1 control (U+0080 to
// U+009F) \u00NN; valid UTF-8 and everything else is kept.
std::string printable_text(std::string_view text);

// Prints `text` to stderr through printable_text (whatever --quiet says: callers that should
// be silent check quiet()).
void print_message(const std::string& text);

// fmt::print(stderr, ...) with the message escaped for a terminal (print_message): every
// message that may quote input (a label, a path, a server's words) is printed with this.
template <typename... Args>
void eprint(fmt::format_string<Args...> format, Args&&... args) {
  print_message(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace vlbias
