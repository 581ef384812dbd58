// BPE merges by rank (include/vlbias/text/bpe_merges.h).
#include "vlbias/text/bpe_merges.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace vlbias {

std::uint64_t bpe_pair_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

void apply_bpe_merges(std::vector<std::int32_t>& symbols, const BpeMergeTable& merges) {
  const auto n = static_cast<std::int32_t>(symbols.size());
  if (n < 2) return;
  std::vector<std::int32_t> next(symbols.size());
  std::vector<std::int32_t> prev(symbols.size());
  for (std::int32_t k = 0; k < n; ++k) {
    next[k] = k + 1 < n ? k + 1 : -1;
    prev[k] = k - 1;
  }
  using Entry = std::pair<std::int32_t, std::int32_t>;  // (rank, left position)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  const auto push_pair = [&](std::int32_t left) {
    if (left < 0 || next[left] < 0) return;
    auto it = merges.find(bpe_pair_key(symbols[left], symbols[next[left]]));
    if (it != merges.end()) heap.emplace(it->second.rank, left);
  };
  for (std::int32_t k = 0; k + 1 < n; ++k) push_pair(k);
  std::vector<std::int32_t> step;
  while (!heap.empty()) {
    const std::int32_t rank = heap.top().first;
    step.clear();
    while (!heap.empty() && heap.top().first == rank) {
      if (step.empty() || step.back() != heap.top().second) step.push_back(heap.top().second);
      heap.pop();
    }
    for (const std::int32_t left : step) {
      if (symbols[left] < 0 || next[left] < 0) continue;
      const std::int32_t right = next[left];
      auto it = merges.find(bpe_pair_key(symbols[left], symbols[right]));
      if (it == merges.end() || it->second.rank != rank) continue;  // stale
      symbols[left] = it->second.result;
      symbols[right] = -1;
      next[left] = next[right];
      if (next[right] >= 0) prev[next[right]] = left;
      push_pair(prev[left]);
      push_pair(left);
    }
  }
  std::erase(symbols, -1);
}

}  // namespace vlbias
