// Building the breadth-first byte trie (see piece_trie.h) from sorted keys.
#include "piece_trie.h"

#include <deque>

namespace vlbias::text_internal {

PieceTrie::PieceTrie(std::vector<std::pair<std::string_view, std::int32_t>> keys) {
  if (keys.empty()) return;
  // Byte-wise order (string_view compares chars as unsigned via char_traits<char>).
  std::sort(keys.begin(), keys.end());
  struct Pending {
    std::uint32_t node;
    std::size_t lo;
    std::size_t hi;
    std::size_t depth;
  };
  nodes_.emplace_back();
  std::deque<Pending> queue{{0, 0, keys.size(), 0}};
  while (!queue.empty()) {
    Pending p = queue.front();
    queue.pop_front();
    // Keys in [lo, hi) share their first `depth` bytes; one of them may end there.
    if (p.lo < p.hi && keys[p.lo].first.size() == p.depth) {
      nodes_[p.node].value = keys[p.lo].second;
      ++p.lo;
    }
    nodes_[p.node].first_edge = static_cast<std::uint32_t>(labels_.size());
    std::size_t i = p.lo;
    while (i < p.hi) {
      const char byte = keys[i].first[p.depth];
      std::size_t j = i;
      while (j < p.hi && keys[j].first[p.depth] == byte) ++j;
      const auto child = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
      labels_.push_back(static_cast<std::uint8_t>(byte));
      targets_.push_back(child);
      ++nodes_[p.node].edge_count;
      queue.push_back({child, i, j, p.depth + 1});
      i = j;
    }
  }
}

}  // namespace vlbias::text_internal
