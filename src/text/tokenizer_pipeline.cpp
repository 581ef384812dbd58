// The steps every tokenizer family shares (see tokenizer_pipeline.h).
#include "tokenizer_pipeline.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {

MatchAutomaton<char32_t> reversed_token_matcher(const std::vector<std::u32string>& tokens) {
  std::vector<std::u32string> reversed;
  reversed.reserve(tokens.size());
  for (const std::u32string& t : tokens) reversed.emplace_back(t.rbegin(), t.rend());
  std::vector<std::pair<std::u32string_view, std::int32_t>> keys;
  keys.reserve(tokens.size());
  for (std::size_t i = 0; i < reversed.size(); ++i) {
    keys.emplace_back(reversed[i], static_cast<std::int32_t>(i));
  }
  return MatchAutomaton<char32_t>(std::move(keys));
}

AddedTokenSplitter::AddedTokenSplitter(std::vector<AddedToken> tokens, SpaceRule spaces)
    : tokens_(std::move(tokens)), spaces_(spaces) {
  std::erase_if(tokens_, [](const AddedToken& t) { return t.content.empty(); });
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });
  std::vector<std::u32string> contents;
  contents.reserve(tokens_.size());
  for (const AddedToken& t : tokens_) contents.push_back(t.content);
  // Of two tokens with the same content the first (in tokens_) is matched, as in the
  // search by length it replaces.
  starts_ = reversed_token_matcher(contents);
}

std::vector<Span> AddedTokenSplitter::split(std::u32string_view text) const {
  const auto is_space = [this](char32_t c) {
    return spaces_ == SpaceRule::PythonIsspace ? unicode::is_python_space(c)
                                               : unicode::is_white_space(c);
  };
  std::vector<Span> spans;
  if (tokens_.empty()) {
    if (!text.empty()) spans.push_back({0, text.size(), -1});
    return spans;
  }
  std::vector<std::pair<std::size_t, std::int32_t>> longest;  // the longest token at each start
  starts_.starting_at(text, MatchAutomaton<char32_t>::Pick::Longest, longest);
  std::size_t done = 0;  // end of the last span emitted
  std::size_t i = 0;
  while (i < text.size()) {
    if (longest[i].first == 0) {
      ++i;
      continue;
    }
    const AddedToken& match = tokens_[static_cast<std::size_t>(longest[i].second)];
    std::size_t begin = i;
    std::size_t end = i + match.content.size();
    if (match.lstrip) {
      while (begin > done && is_space(text[begin - 1])) --begin;
    }
    if (match.rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > done) spans.push_back({done, begin, -1});
    spans.push_back({begin, end, match.id});
    done = end;
    i = end;
  }
  if (done < text.size()) spans.push_back({done, text.size(), -1});
  return spans;
}

namespace {

// re.sub("(s1|s2|...)|(.+?)", lambda m: m[1] or m[2].lower(), text): at each
// position the first listed special token that matches is kept, else one character
// is lower-cased on its own, which is lower_per_char ('.' skips '\n', which has no
// lower case anyway). `keep`: reversed_token_matcher of the list.
std::u32string lowercase_outside(std::u32string_view text, const MatchAutomaton<char32_t>& keep) {
  std::u32string out;
  out.reserve(text.size());
  std::vector<std::pair<std::size_t, std::int32_t>> first;  // the first listed at each start
  keep.starting_at(text, MatchAutomaton<char32_t>::Pick::LeastValue, first);
  std::size_t run = 0;  // start of the characters not yet lower-cased
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = first[i].first;
    if (length == 0) {
      ++i;
      continue;
    }
    out += unicode::lower_per_char(text.substr(run, i - run));
    out += text.substr(i, length);
    i += length;
    run = i;
  }
  out += unicode::lower_per_char(text.substr(run));
  return out;
}

}  // namespace

void Pipeline::encode_content(std::string_view utf8_text, std::vector<std::int32_t>& out) const {
  std::u32string text = unicode::decode_utf8(utf8_text, "the text to tokenize");
  // PreTrainedTokenizer.tokenize: prepare_for_tokenization, then the lower-casing.
  if (python_prefix_space && !text.empty() && !unicode::is_python_space(text[0])) {
    text.insert(text.begin(), U' ');
  }
  if (lowercase_text) text = lowercase_outside(text, lowercase_except);
  const std::u32string_view view(text);
  for (const Span& span : raw_tokens.split(view)) {
    if (span.token >= 0) {
      out.push_back(span.token);
      continue;
    }
    const std::u32string normalized =
        model->normalize(view.substr(span.begin, span.end - span.begin));
    const std::u32string_view nview(normalized);
    for (const Span& part : normalized_tokens.split(nview)) {
      if (part.token >= 0) {
        out.push_back(part.token);
      } else {
        model->encode(nview.substr(part.begin, part.end - part.begin),
                      span.begin == 0 && part.begin == 0, out);
      }
    }
  }
}

}  // namespace vlbias::text_internal
