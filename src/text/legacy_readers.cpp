// vocab.txt and merges.txt (legacy_readers.h), read as transformers reads them (load_vocab of
// tokenization_bert.py; RobertaTokenizer.__init__), with malformed files refused
// instead of silently read differently.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "legacy_readers.h"

#include "byte_bpe.h"
#include "text_files.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/text/unicode_text.h"
#include "wordpiece.h"

namespace vlbias::text_internal {

// One token per line, id = line number - 1 (readlines + rstrip("\n")). Refused:
// non-UTF-8, an empty line, a '\r' (a CRLF file would give every token a '\r'), a
// token given twice.
TokenIds read_vocab_txt(const std::filesystem::path& file) {
  const std::string source = file.string();
  const std::string text = read_file_text(file, "a WordPiece vocabulary (one token per line)");
  TokenIds ids;
  std::size_t line = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view token(text.data() + pos, end - pos);
    pos = end + 1;
    ++line;
    const std::string at = fmt::format("'{}' line {}", source, line);
    (void)unicode::decode_utf8(token, at);
    VLBIAS_CHECK(!token.empty(), InputError, "{} is empty; expected one token per line", at);
    VLBIAS_CHECK(token.find('\r') == std::string_view::npos, InputError,
                 "{} has a carriage return; expected LF line ends (a CRLF vocab.txt gives every "
                 "token a '\\r')",
                 at);
    VLBIAS_CHECK(line <= 0x7FFFFFFF, InputError, "'{}' has too many lines", source);
    const auto [it, fresh] = ids.emplace(std::string(token), static_cast<std::int32_t>(line - 1));
    VLBIAS_CHECK(fresh, InputError,
                 "{} repeats the token '{}' of line {}; expected each token once", at,
                 excerpt(token), it->second + 1);
  }
  return ids;
}

// RobertaTokenizer: merges_handle.read().split("\n")[1:-1], each line split on
// whitespace into a pair. The first line is skipped unread and so must be the
// "#version" header; the file must end with a newline (else its last line would be
// skipped); every other line must be two symbols.
void read_merges_txt(const std::filesystem::path& file, BpeVocab& vocab) {
  const std::string source = file.string();
  const std::string text =
      read_file_text(file, "BPE merges (a #version line, then \"left right\" lines)");
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0;;) {
    const std::size_t end = text.find('\n', pos);
    lines.emplace_back(text.data() + pos, (end == std::string::npos ? text.size() : end) - pos);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  VLBIAS_CHECK(lines.front().starts_with("#version"), InputError,
               "'{}' line 1 is '{}'; expected the '#version' header, which RobertaTokenizer skips "
               "unread",
               source, excerpt(lines.front()));
  VLBIAS_CHECK(lines.back().empty(), InputError,
               "'{}' does not end with a newline; RobertaTokenizer would skip its last line '{}'",
               source, excerpt(lines.back()));
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    const std::string at = fmt::format("'{}' line {}", source, i + 1);
    const std::u32string line = unicode::decode_utf8(lines[i], at);
    std::vector<std::string> parts;  // str.split(): runs of whitespace separate
    std::size_t k = 0;
    while (k < line.size()) {
      while (k < line.size() && unicode::is_python_space(line[k])) ++k;
      const std::size_t begin = k;
      while (k < line.size() && !unicode::is_python_space(line[k])) ++k;
      if (k > begin)
        parts.push_back(unicode::to_utf8(std::u32string_view(line).substr(begin, k - begin)));
    }
    VLBIAS_CHECK(parts.size() == 2, InputError, "{} is '{}'; expected two symbols", at,
                 excerpt(lines[i]));
    add_merge(vocab, parts[0], parts[1], at);
  }
}

}  // namespace vlbias::text_internal
