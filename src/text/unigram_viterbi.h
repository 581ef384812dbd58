#pragma once
// Internal to vlbias_text: the Unigram Viterbi both flavors of unigram.h share.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "match_automaton.h"

namespace vlbias::text_internal {

// Bytes of the UTF-8 character that starts with `lead`.
inline std::size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// SentencePiece's byte piece of b: "<0x41>".
inline std::string byte_piece(unsigned char b) {
  return fmt::format("<0x{:02X}>", b);
}

// A piece of the best path: text[begin, end) and its id (the unknown id for a
// character no piece covers).
struct PathPiece {
  std::size_t begin;
  std::size_t end;
  std::int32_t id;
};

// The pieces of a Unigram vocabulary, for the Viterbi: an Aho-Corasick automaton over their
// bytes (match_automaton.h), so the lattice costs O(text + pieces that occur in it) whatever
// the pieces' lengths (issue 37: a 100,000-character piece made the per-position prefix
// search quadratic).
using PieceMatcher = MatchAutomaton<char>;

// The Viterbi of EncodeOptimized / encode_optimized: ends_at[e] keeps the best path
// ending at byte e; pieces starting at s are tried in order of length and replace a
// path only when strictly better; a character no single piece covers gets an unknown
// node. Path scores are stored as Stored; a piece's candidate is summed and compared
// as Sum, an unknown's as Stored. sentencepiece stores float but sums pieces in
// double (its score expression has type double) and unknowns in float; the
// tokenizers use double throughout. Ties, and so the ids, depend on these types.
//
// The references loop over starts s (character by character) and, within one, over the
// pieces text[s, e) by length. Here the lattice is filled by end instead: ends_at[e]
// receives its candidates in the same order (by start ascending, i.e. the pieces ending
// at e longest first, then the unknown character that ends at e), and every ends_at[s] it
// reads is final by then (s < e), so each comparison, and so every tie, is the
// references'.
template <typename Stored, typename Sum, typename ScoreOf>
std::vector<PathPiece> best_path(std::string_view text, const PieceMatcher& pieces,
                                 ScoreOf score_of, Stored unk_score, std::int32_t unk_id) {
  struct Node {
    std::int32_t id = -1;
    Stored score = 0;
    std::size_t starts_at = std::numeric_limits<std::size_t>::max();
  };
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  // The starts the references visit (start += the UTF-8 length of text[start]), and for
  // each end of a character the start of that character.
  std::vector<std::size_t> char_start(text.size() + 1, kNone);
  std::vector<bool> is_start(text.size() + 1, false);
  for (std::size_t start = 0; start < text.size();) {
    is_start[start] = true;
    const std::size_t mblen =
        std::min(utf8_length(static_cast<unsigned char>(text[start])), text.size() - start);
    char_start[start + mblen] = start;
    start += mblen;
  }
  std::vector<Node> ends_at(text.size() + 1);
  std::uint32_t state = PieceMatcher::kRoot;
  for (std::size_t end = 1; end <= text.size(); ++end) {
    state = pieces.step(state, text[end - 1]);
    if (char_start[end] == kNone) continue;  // inside a character: no path continues here
    Node& target = ends_at[end];
    const std::size_t last = char_start[end];
    bool single = false;
    pieces.matches_ending(state, [&](std::size_t length, std::int32_t id) {
      const std::size_t start = end - length;
      if (!is_start[start]) return;  // the references never start a piece inside a character
      const Sum candidate = static_cast<Sum>(score_of(id)) + static_cast<Sum>(ends_at[start].score);
      if (target.starts_at == kNone || candidate > static_cast<Sum>(target.score)) {
        target = {id, static_cast<Stored>(candidate), start};
      }
      if (start == last) single = true;
    });
    if (!single) {
      const Stored candidate = unk_score + ends_at[last].score;
      if (target.starts_at == kNone || candidate > target.score) {
        target = {unk_id, candidate, last};
      }
    }
  }
  std::vector<PathPiece> path;
  for (std::size_t end = text.size(); end > 0;) {
    const Node& node = ends_at[end];
    path.push_back({node.starts_at, end, node.id});
    end = node.starts_at;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace vlbias::text_internal
