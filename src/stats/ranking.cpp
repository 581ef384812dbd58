// Sort-once ranking for the rank tests and rank_average: LSD radix sort of
// order-preserving 64-bit keys (with a label or index alongside), then one walk
// over the runs of equal keys. Average ranks for ties, as scipy.stats.rankdata.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include <sys/mman.h>

#include "classical_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias::stats_internal {

namespace {

// Uninitialised array for the sort buffers. Large ones are mapped directly and
// asked for transparent huge pages: first-touch page faults, not the sort itself,
// dominate on virtual machines otherwise; and no time is spent zeroing.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : n_(n) {
    bytes_ = n * sizeof(T);
    if (bytes_ >= kMapThreshold) {
      bytes_ = (bytes_ + kHugePage - 1) / kHugePage * kHugePage;
      void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: failure is harmless
      data_ = static_cast<T*>(p);
      mapped_ = true;
    } else if (n > 0) {
      data_ = static_cast<T*>(::operator new(bytes_));
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    swap(o);
    return *this;
  }
  ~Buffer() {
    if (mapped_) {
      munmap(data_, bytes_);
    } else if (data_) {
      ::operator delete(data_);
    }
  }
  void swap(Buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(n_, o.n_);
    std::swap(bytes_, o.bytes_);
    std::swap(mapped_, o.mapped_);
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kMapThreshold = std::size_t{4} << 20;
  T* data_ = nullptr;
  std::size_t n_ = 0;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

constexpr int kDigitBits = 8;
constexpr int kDigits = (64 + kDigitBits - 1) / kDigitBits;
constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;

// Maps a finite double to an unsigned key with the same order: flip every bit of a
// negative number, set the sign bit of a non-negative one. -0.0 is first turned
// into +0.0 (x + 0.0), so the two zeros, which compare equal, share one key.
inline std::uint64_t order_key(double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x + 0.0);
  return (u & 0x8000000000000000ULL) ? ~u : (u | 0x8000000000000000ULL);
}

// Contiguous slices of the arrays, one pool task each. Their length is a power of two
// that depends only on n (never on the thread count), at most kMaxSlices of them.
struct Slices {
  std::size_t len = 0;
  std::size_t count = 0;
  int shift = 0;  // log2(len)

  // serial: one slice covering everything.
  Slices(std::size_t n, bool serial) {
    constexpr std::size_t kMinSlice = std::size_t{1} << 17;
    constexpr std::size_t kMaxSlices = 16;
    len = kMinSlice;
    while (len * (serial ? 1 : kMaxSlices) < n) len *= 2;
    count = std::max<std::size_t>(1, (n + len - 1) / len);
    shift = std::countr_zero(len);
  }
  std::size_t begin(std::size_t s) const { return s * len; }
  std::size_t end(std::size_t s, std::size_t n) const { return std::min(n, (s + 1) * len); }
};

using Hist = std::array<std::uint32_t, kBuckets>;

inline std::size_t digit(std::uint64_t key, int d) {
  return static_cast<std::size_t>(key >> (d * kDigitBits)) & (kBuckets - 1);
}

// Stable LSD radix sort of keys with a payload moved alongside. Digits in which
// every key agrees are skipped (e.g. the low mantissa bytes of integer data).
// Each pass scatters the slices in parallel: slice s writes bucket b from
// offset(b) + counts of b in the slices before s, so the output is the one a serial
// stable sort gives. The per-slice counts of the next digit are gathered during the
// scatter (by destination slice), so each pass reads the data once.
template <class Payload>
void radix_sort(Buffer<std::uint64_t>& keys, Buffer<Payload>& payload) {
  const std::size_t n = keys.size();
  if (n < 2) return;
  // The sorted output is unique (stable sort), so the slicing may depend on the
  // thread count: one slice when the pool cannot run several.
  const Slices sl(n, thread_count() == 1 || in_parallel_region());
  const std::size_t ns = sl.count;
  // Counts of every digit per slice (32-bit counts: n < 2^32).
  std::vector<std::array<Hist, kDigits>> first(ns);
  parallel_for(ns, [&](std::size_t s) {
    auto& h = first[s];
    for (auto& row : h) row.fill(0);
    const std::uint64_t* ks = keys.data();
    for (std::size_t i = sl.begin(s), e = sl.end(s, n); i < e; ++i) {
      const std::uint64_t k = ks[i];
      for (int d = 0; d < kDigits; ++d) ++h[d][digit(k, d)];
    }
  });
  std::vector<int> active;
  for (int d = 0; d < kDigits; ++d) {
    std::size_t same = 0;
    const std::size_t b0 = digit(keys[0], d);
    for (std::size_t s = 0; s < ns; ++s) same += first[s][d][b0];
    if (same != n) active.push_back(d);  // a digit shared by all keys needs no pass
  }
  if (active.empty()) return;
  std::vector<Hist> counts(ns);
  for (std::size_t s = 0; s < ns; ++s) counts[s] = first[s][active[0]];
  std::vector<Hist> next(ns * ns);  // next[src * ns + dst]: digit counts by destination slice
  std::vector<std::array<std::size_t, kBuckets>> offset(ns);
  Buffer<std::uint64_t> key_buf(n);
  Buffer<Payload> pay_buf(n);
  for (std::size_t a = 0; a < active.size(); ++a) {
    const int d = active[a];
    const bool has_next = a + 1 < active.size();
    const int d2 = has_next ? active[a + 1] : 0;
    // With several slices, the next pass needs each slice's counts of the next digit
    // in the new order; a single slice reuses the global histogram.
    const bool count_next = has_next && ns > 1;
    std::size_t sum = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      for (std::size_t s = 0; s < ns; ++s) {
        offset[s][b] = sum;
        sum += counts[s][b];
      }
    }
    const std::uint64_t* ks = keys.data();
    const Payload* ps = payload.data();
    std::uint64_t* kd = key_buf.data();
    Payload* pd = pay_buf.data();
    parallel_for(ns, [&](std::size_t s) {
      auto off = offset[s];
      const std::size_t b = sl.begin(s), e = sl.end(s, n);
      if (count_next) {
        Hist* nx = &next[s * ns];
        for (std::size_t j = 0; j < ns; ++j) nx[j].fill(0);
        for (std::size_t i = b; i < e; ++i) {
          const std::uint64_t k = ks[i];
          const std::size_t pos = off[digit(k, d)]++;
          kd[pos] = k;
          pd[pos] = ps[i];
          ++nx[pos >> sl.shift][digit(k, d2)];
        }
      } else {
        for (std::size_t i = b; i < e; ++i) {
          const std::uint64_t k = ks[i];
          const std::size_t pos = off[digit(k, d)]++;
          kd[pos] = k;
          pd[pos] = ps[i];
        }
      }
    });
    if (has_next && !count_next) {
      counts[0] = first[0][d2];
    } else if (count_next) {
      for (std::size_t dst = 0; dst < ns; ++dst) {
        counts[dst].fill(0);
        for (std::size_t src = 0; src < ns; ++src) {
          for (std::size_t bb = 0; bb < kBuckets; ++bb) counts[dst][bb] += next[src * ns + dst][bb];
        }
      }
    }
    keys.swap(key_buf);
    payload.swap(pay_buf);
  }
}

// Walks the runs of equal keys of sorted (keys, labels): each run of length t
// starting at 0-based position i holds the ranks i+1 .. i+t, whose average is
// (2i + t + 1) / 2; 2 * average is added to the run's labels' sums (exact in
// 64-bit integers), and t^3 - t to the tie term (scipy.stats.tiecorrect). Slices
// start at run boundaries and are merged in order, so the sums do not depend on
// the thread count.
template <class Label>
void walk_runs(const Buffer<std::uint64_t>& keys, const Buffer<Label>& labels, PooledRanks& out) {
  const std::size_t n = keys.size();
  const std::size_t k = out.twice_sum.size();
  if (n == 0) return;
  const Slices sl(n, false);
  std::vector<std::size_t> start(sl.count + 1, n);
  for (std::size_t s = 0; s < sl.count; ++s) {
    std::size_t b = sl.begin(s);
    while (b > 0 && b < n && keys[b] == keys[b - 1]) ++b;  // move to the next run start
    start[s] = std::max(b, s > 0 ? start[s - 1] : 0);
  }
  struct Part {
    std::vector<std::uint64_t> sums;
    double tie_term = 0.0;
    bool any_ties = false;
  };
  std::vector<Part> parts(sl.count);
  parallel_for(sl.count, [&](std::size_t s) {
    Part& p = parts[s];
    p.sums.assign(k, 0);
    std::uint64_t* sums = p.sums.data();
    const std::uint64_t* ks = keys.data();
    const Label* ls = labels.data();
    std::size_t i = start[s];
    const std::size_t e = start[s + 1];
    while (i < e) {
      std::size_t j = i + 1;
      const std::uint64_t key = ks[i];
      while (j < n && ks[j] == key) ++j;
      const auto twice_avg = static_cast<std::uint64_t>(i + j + 1);
      for (std::size_t l = i; l < j; ++l) sums[ls[l]] += twice_avg;
      if (j - i > 1) {
        const double t = static_cast<double>(j - i);
        p.tie_term += t * t * t - t;
        p.any_ties = true;
      }
      i = j;
    }
  });
  for (const Part& p : parts) {
    for (std::size_t g = 0; g < k; ++g) out.twice_sum[g] += p.sums[g];
    out.tie_term += p.tie_term;
    out.any_ties = out.any_ties || p.any_ties;
  }
  out.all_tied = keys[0] == keys[n - 1];
}

template <class Label>
PooledRanks rank_labelled(const std::vector<std::span<const double>>* samples,
                          const GroupedValues* grouped, std::vector<std::size_t> sizes) {
  const std::size_t k = sizes.size();
  PooledRanks out;
  out.n = std::move(sizes);
  out.twice_sum.assign(k, 0);
  std::size_t total = 0;
  if (samples) {
    for (const auto& s : *samples) total += s.size();
  } else {
    total = grouped->values.size();
  }
  VLBIAS_CHECK(total < std::numeric_limits<std::uint32_t>::max(), InputError,
               "{} values to rank; at most 2^32 - 2 are supported", total);
  Buffer<std::uint64_t> keys(total);
  Buffer<Label> labels(total);
  // Keys and labels, built in parallel over fixed chunks; a non-finite value
  // clears `finite` (the caller then names it).
  constexpr std::size_t kChunk = std::size_t{1} << 18;
  std::vector<char> chunk_finite;
  const auto fill = [&](const double* v, const std::uint32_t* g, Label label, std::size_t offset,
                        std::size_t len) {
    const std::size_t first_chunk = chunk_finite.size();
    chunk_finite.resize(first_chunk + (len + kChunk - 1) / kChunk, 1);
    parallel_chunks(len, kChunk, [&](std::size_t c, std::size_t b, std::size_t e) {
      bool ok = true;
      std::uint64_t* kd = keys.data() + offset;
      Label* ld = labels.data() + offset;
      for (std::size_t i = b; i < e; ++i) {
        ok &= std::isfinite(v[i]);
        kd[i] = order_key(v[i]);
        ld[i] = g ? static_cast<Label>(g[i]) : label;
      }
      chunk_finite[first_chunk + c] = ok;
    });
  };
  if (samples) {
    std::size_t pos = 0;
    for (std::size_t g = 0; g < k; ++g) {
      const auto s = (*samples)[g];
      fill(s.data(), nullptr, static_cast<Label>(g), pos, s.size());
      pos += s.size();
    }
  } else {
    fill(grouped->values.data(), grouped->group.data(), Label{}, 0, total);
  }
  out.finite = std::all_of(chunk_finite.begin(), chunk_finite.end(), [](char c) { return c != 0; });
  if (!out.finite) return out;
  radix_sort(keys, labels);
  walk_runs(keys, labels, out);
  return out;
}

template <class F>
PooledRanks dispatch_label_width(std::size_t k, const F& f) {
  if (k <= 0x100) return f(std::uint8_t{});
  if (k <= 0x10000) return f(std::uint16_t{});
  return f(std::uint32_t{});
}

}  // namespace

PooledRanks pooled_ranks(const std::vector<std::span<const double>>& samples) {
  std::vector<std::size_t> sizes;
  for (const auto& s : samples) sizes.push_back(s.size());
  return dispatch_label_width(samples.size(), [&](auto tag) {
    return rank_labelled<decltype(tag)>(&samples, nullptr, sizes);
  });
}

PooledRanks pooled_ranks(const GroupedValues& data, const std::vector<std::size_t>& sizes) {
  return dispatch_label_width(
      data.k, [&](auto tag) { return rank_labelled<decltype(tag)>(nullptr, &data, sizes); });
}

}  // namespace vlbias::stats_internal

namespace vlbias::stats {

std::vector<double> rank_average(std::span<const double> x) {
  const std::size_t n = x.size();
  stats_internal::require_finite(x, "rank_average: x");
  VLBIAS_CHECK(n < std::numeric_limits<std::uint32_t>::max(), InputError,
               "rank_average: {} values; at most 2^32 - 2 are supported", n);
  stats_internal::Buffer<std::uint64_t> keys(n);
  stats_internal::Buffer<std::uint32_t> index(n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = stats_internal::order_key(x[i]);
    index[i] = static_cast<std::uint32_t>(i);
  }
  stats_internal::radix_sort(keys, index);
  std::vector<double> ranks(n);
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && keys[j] == keys[i]) ++j;
    // Ranks i+1 .. j share their average (scipy.stats.rankdata, method="average":
    // 0.5 * (count[dense] + count[dense - 1] + 1)).
    const double avg = 0.5 * static_cast<double>(i + j + 1);
    for (std::size_t l = i; l < j; ++l) ranks[index[l]] = avg;
    i = j;
  }
  return ranks;
}

}  // namespace vlbias::stats
