#pragma once
// Internal to vlbias_text: a byte trie over a vocabulary for the Unigram Viterbi's
// common-prefix searches. Nodes are laid out breadth-first with each node's edges
// contiguous and sorted by byte; about 9 bytes per edge, so XLM-R's 250,000 pieces
// take a few MB.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace vlbias::text_internal {

class PieceTrie {
 public:
  // keys: (bytes, value >= 0), no key twice, none empty.
  explicit PieceTrie(std::vector<std::pair<std::string_view, std::int32_t>> keys = {});

  // Calls f(end, value) for each key that equals text[begin, end), shortest first.
  template <typename F>
  void prefixes(std::string_view text, std::size_t begin, F f) const {
    if (nodes_.empty()) return;
    std::uint32_t node = 0;
    for (std::size_t i = begin; i < text.size(); ++i) {
      const Node& n = nodes_[node];
      const auto first = labels_.begin() + n.first_edge;
      const auto last = first + n.edge_count;
      const auto byte = static_cast<std::uint8_t>(text[i]);
      const auto it = std::lower_bound(first, last, byte);
      if (it == last || *it != byte) return;
      node = targets_[static_cast<std::size_t>(it - labels_.begin())];
      if (nodes_[node].value >= 0) f(i + 1, nodes_[node].value);
    }
  }

 private:
  struct Node {
    std::uint32_t first_edge = 0;
    std::uint16_t edge_count = 0;
    std::int32_t value = -1;
  };
  std::vector<Node> nodes_;
  std::vector<std::uint8_t> labels_;
  std::vector<std::uint32_t> targets_;
};

}  // namespace vlbias::text_internal
