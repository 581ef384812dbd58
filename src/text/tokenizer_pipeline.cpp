// The steps every tokenizer family shares (see tokenizer_pipeline.h).
#include "tokenizer_pipeline.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {

AddedTokenSplitter::AddedTokenSplitter(std::vector<AddedToken> tokens, SpaceRule spaces)
    : tokens_(std::move(tokens)), spaces_(spaces) {
  std::erase_if(tokens_, [](const AddedToken& t) { return t.content.empty(); });
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });
}

std::vector<Span> AddedTokenSplitter::split(std::u32string_view text) const {
  const auto is_space = [this](char32_t c) {
    return spaces_ == SpaceRule::PythonIsspace ? unicode::is_python_space(c)
                                               : unicode::is_white_space(c);
  };
  std::vector<Span> spans;
  std::size_t done = 0;  // end of the last span emitted
  std::size_t i = 0;
  while (i < text.size()) {
    const AddedToken* match = nullptr;
    for (const AddedToken& t : tokens_) {  // longest first: the leftmost-longest match
      if (text.substr(i).starts_with(t.content)) {
        match = &t;
        break;
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    std::size_t begin = i;
    std::size_t end = i + match->content.size();
    if (match->lstrip) {
      while (begin > done && is_space(text[begin - 1])) --begin;
    }
    if (match->rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > done) spans.push_back({done, begin, -1});
    spans.push_back({begin, end, match->id});
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
// lower case anyway).
std::u32string lowercase_outside(std::u32string_view text,
                                 const std::vector<std::u32string>& keep) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t run = 0;  // start of the characters not yet lower-cased
  std::size_t i = 0;
  while (i < text.size()) {
    const std::u32string* kept = nullptr;
    for (const std::u32string& s : keep) {
      if (!s.empty() && text.substr(i).starts_with(s)) {
        kept = &s;
        break;
      }
    }
    if (kept == nullptr) {
      ++i;
      continue;
    }
    out += unicode::lower_per_char(text.substr(run, i - run));
    out += *kept;
    i += kept->size();
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
