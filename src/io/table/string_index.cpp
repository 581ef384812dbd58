// Interned strings and hashed keys (string_index.h).
#include "vlbias/io/table/string_index.h"

#include <cstring>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

std::uint64_t load_partial(const char* p, std::size_t n) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, n);
  return w;
}

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::uint64_t hash_bytes(std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0xff51afd7ed558ccdULL);
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ mix(w)) * 0x9e3779b97f4a7c15ULL;
    p += 8;
    n -= 8;
  }
  if (n > 0)
    h = (h ^ mix(load_partial(p, n) ^ (static_cast<std::uint64_t>(n) << 59))) *
        0x9e3779b97f4a7c15ULL;
  return mix(h);
}

std::uint32_t Dictionary::intern(std::vector<std::string>& levels, std::string_view text) {
  if ((used_ + 1) * 2 > slots_.size()) grow(levels);
  const std::uint64_t h64 = hash_bytes(text);
  const auto h = static_cast<std::uint32_t>(h64);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = (h64 >> 32) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.code == kEmpty) {
      VLBIAS_CHECK(levels.size() < kEmpty - 1, InputError,
                   "a column has more than {} distinct values; expected fewer", kEmpty - 1);
      s.code = static_cast<std::uint32_t>(levels.size());
      s.hash = h;
      levels.emplace_back(text);
      ++used_;
      return s.code;
    }
    if (s.hash == h && levels[s.code] == text) return s.code;
  }
}

void Dictionary::clear() {
  slots_.clear();
  used_ = 0;
}

void Dictionary::grow(const std::vector<std::string>& levels) {
  std::size_t size = slots_.empty() ? 16 : slots_.size() * 2;
  while (size < (used_ + 1) * 2) size *= 2;
  slots_.assign(size, Slot{kEmpty, 0});
  const std::size_t mask = size - 1;
  for (std::size_t code = 0; code < used_; ++code) {
    const std::uint64_t h64 = hash_bytes(levels[code]);
    std::size_t i = (h64 >> 32) & mask;
    while (slots_[i].code != kEmpty) i = (i + 1) & mask;
    slots_[i] = Slot{static_cast<std::uint32_t>(code), static_cast<std::uint32_t>(h64)};
  }
}

void Dictionary::rebuild(const std::vector<std::string>& levels) {
  used_ = levels.size();
  slots_.clear();
  grow(levels);
}

std::uint32_t U64Index::insert(std::uint64_t key) {
  if ((keys_.size() + 1) * 2 > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    const std::uint32_t id = slots_[i];
    if (id == kNone) {
      VLBIAS_CHECK(keys_.size() < kNone - 1, InputError,
                   "more than {} distinct values; expected fewer", kNone - 1);
      slots_[i] = static_cast<std::uint32_t>(keys_.size());
      keys_.push_back(key);
      return slots_[i];
    }
    if (keys_[id] == key) return id;
  }
}

std::uint32_t U64Index::find(std::uint64_t key) const {
  if (slots_.empty()) return kNone;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    const std::uint32_t id = slots_[i];
    if (id == kNone || keys_[id] == key) return id;
  }
}

void U64Index::grow() {
  const std::size_t size = slots_.empty() ? 16 : slots_.size() * 2;
  slots_.assign(size, kNone);
  const std::size_t mask = size - 1;
  for (std::size_t id = 0; id < keys_.size(); ++id) {
    std::size_t i = mix(keys_[id]) & mask;
    while (slots_[i] != kNone) i = (i + 1) & mask;
    slots_[i] = static_cast<std::uint32_t>(id);
  }
}

std::uint64_t double_key(double value) {
  if (value == 0.0) value = 0.0;
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace vlbias
