// The first token's top log-probabilities renormalised over the choices (include/vlbias/score/
// choice.h; docs/methods.md#closed-set-answers).
#include <cmath>
#include <map>

#include "vlbias/core/error.h"
#include "vlbias/score/choice.h"
#include "vlbias/score/text_measures.h"

namespace vlbias {

namespace {

// The token without leading spaces and space marks (U+0120 'Ġ' of byte-level BPE, U+2581 '▁'
// of SentencePiece), as words; one word, or nullopt.
std::optional<std::string> token_word(std::string_view token, std::string_view what) {
  for (;;) {
    if (!token.empty() && (token.front() == ' ' || token.front() == '\t' || token.front() == '\n'))
      token.remove_prefix(1);
    else if (token.substr(0, 2) == "\xC4\xA0")
      token.remove_prefix(2);
    else if (token.substr(0, 3) == "\xE2\x96\x81")
      token.remove_prefix(3);
    else
      break;
  }
  std::vector<std::string> words;
  std::string scratch;
  tokenize(
      token, scratch, [&](std::string_view w) { words.emplace_back(w); }, what);
  if (words.size() != 1) return std::nullopt;
  return words[0];
}

}  // namespace

std::optional<ChoiceProbabilities> choice_probabilities(const ChoiceSet& set,
                                                        const std::vector<TokenLogprob>& top,
                                                        std::string_view what) {
  // First word of every form -> its choice; a word that starts forms of two choices is
  // ambiguous and counts for neither.
  constexpr std::size_t kAmbiguous = static_cast<std::size_t>(-1);
  std::map<std::string, std::size_t> first_word;
  for (const ChoiceSet::Form& f : set.forms()) {
    const auto [it, fresh] = first_word.emplace(f.words.front(), f.choice);
    if (!fresh && it->second != f.choice) it->second = kAmbiguous;
  }
  const std::size_t n = set.choices().size();
  std::vector<double> mass(n, 0.0);
  std::vector<bool> listed(n, false);
  for (const TokenLogprob& t : top) {
    VLBIAS_CHECK(std::isfinite(t.logprob) && t.logprob <= 0, InputError,
                 "{}: the token '{}' has the log-probability {}, expected a finite number <= 0",
                 what, t.token, t.logprob);
    const std::optional<std::string> word = token_word(t.token, what);
    if (!word) continue;
    const auto it = first_word.find(*word);
    if (it == first_word.end() || it->second == kAmbiguous) continue;
    mass[it->second] += std::exp(t.logprob);  // case and leading-space variants merged
    listed[it->second] = true;
  }
  double total = 0;
  for (const double m : mass) total += m;
  if (total <= 0) return std::nullopt;
  ChoiceProbabilities out;
  for (std::size_t i = 0; i < n; ++i) {
    out.p.push_back(mass[i] / total);
    if (!listed[i]) out.missing.push_back(i);
  }
  return out;
}

}  // namespace vlbias
