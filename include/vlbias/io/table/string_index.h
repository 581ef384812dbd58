#pragma once
// Interned strings and hashed keys (src/io/table/table_detail.cpp): the dictionary encoding of
// table String columns, also used by the LVLM scan (src/metrics) for its vocabulary and
// counterfactual sets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

// Fast 64-bit hash of a byte string (not cryptographic).
std::uint64_t hash_bytes(std::string_view bytes);

// Interns strings into a level list, giving codes in order of first appearance.
// The table stores only codes and compares against the levels themselves, so no
// view into the input outlives the call.
class Dictionary {
 public:
  // Code of `text` in `levels`, appending it when new.
  std::uint32_t intern(std::vector<std::string>& levels, std::string_view text);
  // Forget everything (levels must be cleared or rebuilt by the caller).
  void clear();
  // Rebuild the index after the caller reordered `levels`.
  void rebuild(const std::vector<std::string>& levels);

 private:
  struct Slot {
    std::uint32_t code;
    std::uint32_t hash;
  };
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  void grow(const std::vector<std::string>& levels);

  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

// Open-addressing map from 64-bit keys to dense ids in order of first insertion.
class U64Index {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  // Id of `key`, inserting it when new.
  std::uint32_t insert(std::uint64_t key);
  // Id of `key`, or kNone.
  std::uint32_t find(std::uint64_t key) const;
  // Keys by id.
  const std::vector<std::uint64_t>& keys() const { return keys_; }

 private:
  void grow();
  std::vector<std::uint32_t> slots_;  // ids, kNone where empty
  std::vector<std::uint64_t> keys_;
};

// Bits of a double as a map key, with -0.0 folded into 0.0 (they compare equal).
std::uint64_t double_key(double value);

}  // namespace vlbias
