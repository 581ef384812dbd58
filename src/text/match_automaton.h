#pragma once
// Internal to vlbias_text: an Aho-Corasick automaton over a set of keys (bytes or code
// points), so that every tokenizer search is linear in the text whatever the keys are
// (issue 37: a 100,000-character Unigram piece, 100,000 added tokens or a WordPiece word of
// 50,000 characters made the per-position searches quadratic or cubic).
//
// Aho & Corasick (1975), "Efficient string matching: an aid to bibliographic search",
// CACM 18(6): the goto function is a trie laid out breadth-first (each node's edges
// contiguous and sorted by label), the failure function is computed breadth-first
// (Algorithm 3), and each node keeps the nearest key-ending node among its suffixes (the
// output function, as a link). A scan makes at most 2 n transitions for n symbols, and
// lists the k keys ending at a position in O(k).
//
// Two uses:
//   - keys ending at each position (Unigram's Viterbi): scan the text forwards;
//   - the longest key STARTING at each position (WordPiece's greedy longest match, the
//     leftmost-longest added tokens), or the first listed one (transformers' lower-casing
//     around special tokens): build the automaton over the reversed keys and scan the
//     reversed text (starting_at); a key that ends a suffix of the reversed text is a key
//     that starts at that position of the text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace vlbias::text_internal {

template <typename Char>
class MatchAutomaton {
 public:
  using Key = std::basic_string_view<Char>;
  static constexpr std::uint32_t kRoot = 0;
  static constexpr std::uint32_t kNoNode = std::numeric_limits<std::uint32_t>::max();

  MatchAutomaton() = default;  // no keys: nothing matches
  // keys: (symbols, value >= 0). Empty keys are skipped; of a key given twice, the first
  // value is kept.
  explicit MatchAutomaton(std::vector<std::pair<Key, std::int32_t>> keys) {
    build_trie(std::move(keys));
    build_links();
  }

  bool empty() const { return nodes_.size() <= 1; }

  // The state after reading symbol c in state s.
  std::uint32_t step(std::uint32_t s, Char c) const {
    if (nodes_.empty()) return kRoot;
    for (;;) {
      const std::uint32_t next = child(s, c);
      if (next != kNoNode) return next;
      if (s == kRoot) return kRoot;
      s = nodes_[s].fail;
    }
  }

  // Calls f(length, value) for every key that ends where state s was reached, longest
  // first.
  template <typename F>
  void matches_ending(std::uint32_t s, F f) const {
    if (nodes_.empty()) return;
    for (std::uint32_t n = nodes_[s].output; n != kNoNode; n = nodes_[n].output_next) {
      f(static_cast<std::size_t>(nodes_[n].depth), nodes_[n].value);
    }
  }

  // Which of the keys ending at a position to take.
  enum class Pick {
    Longest,     // the longest
    LeastValue,  // the one with the least value (e.g. the first of a list, values = positions)
  };

  // The picked key ending where state s was reached: (length, value), or (0, -1).
  std::pair<std::size_t, std::int32_t> ending(std::uint32_t s, Pick pick) const {
    if (nodes_.empty()) return {0, -1};
    const std::uint32_t n = pick == Pick::Longest ? nodes_[s].output : nodes_[s].least;
    if (n == kNoNode) return {0, -1};
    return {static_cast<std::size_t>(nodes_[n].depth), nodes_[n].value};
  }

  // For an automaton over REVERSED keys: at[p] = the picked key among those that start at
  // text[p] (length, value), or (0, -1). One scan of the text from its end.
  void starting_at(std::basic_string_view<Char> text, Pick pick,
                   std::vector<std::pair<std::size_t, std::int32_t>>& at) const {
    at.assign(text.size(), {0, -1});
    std::uint32_t s = kRoot;
    for (std::size_t p = text.size(); p-- > 0;) {
      s = step(s, text[p]);
      at[p] = ending(s, pick);
    }
  }

 private:
  struct Node {
    std::uint32_t first_edge = 0;
    std::uint32_t edge_count = 0;
    std::uint32_t depth = 0;
    std::uint32_t fail = kRoot;
    std::uint32_t output = kNoNode;       // this node if a key ends here, else output of fail
    std::uint32_t output_next = kNoNode;  // for a key-ending node: the next one among suffixes
    std::uint32_t least = kNoNode;        // the key-ending node of least value among suffixes
    std::int32_t value = -1;              // >= 0 when a key ends here
  };

  // Labels in the order of their unsigned values (char is signed on x86).
  static bool label_less(Char a, Char b) {
    using Unsigned = std::make_unsigned_t<Char>;
    return static_cast<Unsigned>(a) < static_cast<Unsigned>(b);
  }

  std::uint32_t child(std::uint32_t s, Char c) const {
    const Node& n = nodes_[s];
    const auto first = labels_.begin() + n.first_edge;
    const auto last = first + n.edge_count;
    const auto it = std::lower_bound(first, last, c, label_less);
    if (it == last || *it != c) return kNoNode;
    return targets_[static_cast<std::size_t>(it - labels_.begin())];
  }

  // The trie, breadth-first from keys sorted by symbols (a node's children are created
  // together, so its edges are contiguous and sorted).
  void build_trie(std::vector<std::pair<Key, std::int32_t>> keys) {
    std::erase_if(keys, [](const auto& k) { return k.first.empty(); });
    if (keys.empty()) return;
    std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
      return std::lexicographical_compare(a.first.begin(), a.first.end(), b.first.begin(),
                                          b.first.end(), label_less);
    });
    struct Pending {
      std::uint32_t node;
      std::size_t lo, hi, depth;
    };
    nodes_.emplace_back();
    std::deque<Pending> queue{{kRoot, 0, keys.size(), 0}};
    while (!queue.empty()) {
      Pending p = queue.front();
      queue.pop_front();
      // Keys in [lo, hi) share their first `depth` symbols; those that end here are equal,
      // and the first of them (in the order given) keeps its value.
      if (p.lo < p.hi && keys[p.lo].first.size() == p.depth) {
        nodes_[p.node].value = keys[p.lo].second;
        while (p.lo < p.hi && keys[p.lo].first.size() == p.depth) ++p.lo;
      }
      nodes_[p.node].first_edge = static_cast<std::uint32_t>(labels_.size());
      for (std::size_t i = p.lo; i < p.hi;) {
        const Char c = keys[i].first[p.depth];
        std::size_t j = i;
        while (j < p.hi && keys[j].first[p.depth] == c) ++j;
        const auto next = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back();
        nodes_.back().depth = static_cast<std::uint32_t>(p.depth + 1);
        labels_.push_back(c);
        targets_.push_back(next);
        ++nodes_[p.node].edge_count;
        queue.push_back({next, i, j, p.depth + 1});
        i = j;
      }
    }
  }

  // Failure and output links in breadth-first order, which is the node order.
  void build_links() {
    for (std::uint32_t s = 0; s < nodes_.size(); ++s) {
      Node& n = nodes_[s];
      if (s != kRoot) {
        const std::uint32_t suffix = nodes_[n.fail].output;
        const std::uint32_t least = nodes_[n.fail].least;
        if (n.value >= 0) {
          n.output = s;
          n.output_next = suffix;
          n.least = least != kNoNode && nodes_[least].value < n.value ? least : s;
        } else {
          n.output = suffix;
          n.least = least;
        }
      }
      for (std::uint32_t e = n.first_edge; e < n.first_edge + n.edge_count; ++e) {
        const std::uint32_t t = targets_[e];
        nodes_[t].fail = s == kRoot ? kRoot : step(nodes_[s].fail, labels_[e]);
      }
    }
  }

  std::vector<Node> nodes_;
  std::vector<Char> labels_;
  std::vector<std::uint32_t> targets_;
};

}  // namespace vlbias::text_internal
