#pragma once
// Internal to the LVLM scan, merge and state files (lvlm_scan.cpp, lvlm_state.cpp,
// lvlm_state_file.cpp): finds a counterfactual set by (by-level, set key) in an LvlmState
// without a second copy of its key text (an open-addressing table of set ids; the keys stay
// in state.set_keys), and the state's widths.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "vlbias/io/table/string_index.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias::metrics_internal {

// Score columns (MaxGap) of a state.
inline std::size_t score_count(const LvlmState& s) {
  return s.rows_missing_score.size();
}
// Member measures per member row of a state (0 without members).
inline std::size_t member_width(const LvlmState& s) {
  return s.member_set.empty() ? 0 : s.member_values.size() / s.member_set.size();
}

class SetIndex {
 public:
  // Indexes the sets `state` already has.
  explicit SetIndex(const LvlmState& state) {
    for (std::uint32_t i = 0; i < state.set_keys.size(); ++i) insert(state, i);
  }

  // Id of the set (by, key), appending it to `state` (with `scores` empty score
  // summaries) when new.
  std::uint32_t intern(LvlmState& state, std::uint32_t by, std::string_view key,
                       std::size_t scores) {
    if (2 * (count_ + 1) > slots_.size()) grow(state);
    std::size_t at = hash(by, key) & (slots_.size() - 1);
    for (;; at = (at + 1) & (slots_.size() - 1)) {
      const std::uint32_t id = slots_[at];
      if (id == kEmpty) break;
      if (state.set_by[id] == by && state.set_keys[id] == key) return id;
    }
    const auto id = static_cast<std::uint32_t>(state.set_keys.size());
    state.set_keys.emplace_back(key);
    state.set_by.push_back(by);
    state.set_scores.resize(state.set_scores.size() + scores);
    slots_[at] = id;
    ++count_;
    return id;
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;

  static std::uint64_t hash(std::uint32_t by, std::string_view key) {
    return hash_bytes(key) ^ (std::uint64_t{by} * 0x9e3779b97f4a7c15ull);
  }

  void insert(const LvlmState& state, std::uint32_t id) {
    if (2 * (count_ + 1) > slots_.size()) grow(state);
    std::size_t at = hash(state.set_by[id], state.set_keys[id]) & (slots_.size() - 1);
    while (slots_[at] != kEmpty) at = (at + 1) & (slots_.size() - 1);
    slots_[at] = id;
    ++count_;
  }

  void grow(const LvlmState& state) {
    std::vector<std::uint32_t> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, kEmpty);
    count_ = 0;
    for (const std::uint32_t id : old) {
      if (id != kEmpty) insert(state, id);
    }
  }

  std::vector<std::uint32_t> slots_;
  std::size_t count_ = 0;
};

}  // namespace vlbias::metrics_internal
