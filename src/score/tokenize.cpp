// Word tokenisation of generated answers (text_measures.h documents the rules).
#include <array>
#include <cstring>

#include "vlbias/score/text_measures.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias {

namespace {

// Byte classes of the ASCII path: 1 = letter or digit, 2 = joiner (' or -).
constexpr std::array<std::uint8_t, 128> make_ascii_classes() {
  std::array<std::uint8_t, 128> c{};
  for (int b = '0'; b <= '9'; ++b) c[b] = 1;
  for (int b = 'a'; b <= 'z'; ++b) c[b] = 1;
  for (int b = 'A'; b <= 'Z'; ++b) c[b] = 1;
  c['\''] = 2;
  c['-'] = 2;
  return c;
}
constexpr std::array<std::uint8_t, 128> kAsciiClass = make_ascii_classes();

bool is_ascii(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  for (; i + 8 <= n; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (word & 0x8080808080808080ull) return false;
  }
  for (; i < n; ++i) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) return false;
  }
  return true;
}

// Scans `units` (bytes or code points) for words: runs of word units joined by
// single joiners. cls(u) gives 1 for a word unit, 2 for a joiner, 0 otherwise;
// emit(begin, end) receives each word's index range.
template <typename Units, typename Class, typename Emit>
void scan_words(const Units& units, std::size_t n, Class cls, Emit emit) {
  std::size_t i = 0;
  while (i < n) {
    if (cls(units[i]) != 1) {
      ++i;
      continue;
    }
    const std::size_t begin = i;
    for (;;) {
      while (i < n && cls(units[i]) == 1) ++i;
      // A joiner continues the word only when a word unit follows it.
      if (i + 1 < n && cls(units[i]) == 2 && cls(units[i + 1]) == 1) {
        ++i;
        continue;
      }
      break;
    }
    emit(begin, i);
  }
}

}  // namespace

void tokenize(std::string_view text, std::string& scratch,
              const std::function<void(std::string_view)>& on_word, std::string_view what) {
  if (is_ascii(text)) {
    scratch.resize(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      char ch = text[i];
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
      scratch[i] = ch;
    }
    const auto cls = [](char ch) { return kAsciiClass[static_cast<unsigned char>(ch)]; };
    scan_words(scratch, scratch.size(), cls, [&](std::size_t b, std::size_t e) {
      on_word(std::string_view(scratch).substr(b, e - b));
    });
    return;
  }
  std::u32string s = unicode::lower_python(unicode::nfc(unicode::decode_utf8(text, what)));
  for (char32_t& c : s) {
    if (c == U'\u2019') c = U'\'';
    if (c == U'\u2010' || c == U'\u2011') c = U'-';
  }
  const auto cls = [](char32_t c) -> std::uint8_t {
    if (c < 128) return kAsciiClass[c];
    const unicode::PretokenClass k = unicode::pretoken_class(c);
    return k == unicode::PretokenClass::Letter || k == unicode::PretokenClass::Number ? 1 : 0;
  };
  scan_words(s, s.size(), cls, [&](std::size_t b, std::size_t e) {
    scratch.clear();
    for (std::size_t i = b; i < e; ++i) unicode::append_utf8(scratch, s[i]);
    on_word(scratch);
  });
}

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> words;
  std::string scratch;
  tokenize(text, scratch, [&](std::string_view w) { words.emplace_back(w); });
  return words;
}

}  // namespace vlbias
