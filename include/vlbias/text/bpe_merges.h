#pragma once
// BPE merges by rank, as GPT-2's and CLIP's bpe() apply them (src/text/bpe_merges.cpp): the
// merge loop shared by the byte-level BPE tokenizer (src/text/byte_bpe.cpp) and CLIP's
// tokenizer (src/encode/models/clip/clip_tokenizer.cpp), which differ only in how a piece becomes
// symbols.
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace vlbias {

struct BpeMerge {
  std::int32_t rank;    // lower merges first
  std::int32_t result;  // the id of the merged symbol
};
// Key: bpe_pair_key(left id, right id).
using BpeMergeTable = std::unordered_map<std::uint64_t, BpeMerge>;

// left << 32 | right, as unsigned 32-bit ids.
std::uint64_t bpe_pair_key(std::int32_t left, std::int32_t right);

// Merges `symbols` (token ids) in place: repeatedly the lowest rank present, every occurrence
// of that pair left to right (GPT-2's and CLIP's bpe()). Done on ids in a linked list with a
// min-heap of (rank, left position), O(n log n) instead of the reference's O(n^2) rescans; the
// merge order is the same: a step pops all entries of one rank in position order and skips
// those a merge of the same step made stale (a merge never recreates the pair it consumed: its
// result is a longer string than either part).
void apply_bpe_merges(std::vector<std::int32_t>& symbols, const BpeMergeTable& merges);

}  // namespace vlbias
