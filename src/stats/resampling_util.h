#pragma once
// Helpers shared by the descriptives, bootstrap and resampling-test sources
// (src/stats/descriptives.cpp, bootstrap.cpp, resampling.cpp). Internal.
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats_internal {

// The stage's private helpers speak the public statistics vocabulary (TestResult, ...).
using namespace vlbias::stats;  // NOLINT(build/namespaces)

// Throws InputError naming `what` and the first position holding NaN or inf.
inline void check_finite(std::span<const double> x, const char* what) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    VLBIAS_CHECK(std::isfinite(x[i]), InputError,
                 "{}: value {} at position {} is not finite (NaN or infinite values are refused)",
                 what, x[i], i);
  }
}

// Neumaier's improvement of Kahan summation (Neumaier 1974, "Rundungsfehleranalyse
// einiger Verfahren zur Summation endlicher Summen", ZAMM 54): the error of each
// addition is recovered exactly and accumulated separately.
class NeumaierSum {
 public:
  void add(double v) {
    const double t = sum_ + v;
    if (std::fabs(sum_) >= std::fabs(v)) {
      comp_ += (sum_ - t) + v;
    } else {
      comp_ += (v - t) + sum_;
    }
    sum_ = t;
  }
  double value() const { return sum_ + comp_; }

 private:
  double sum_ = 0.0;
  double comp_ = 0.0;
};

// Uninitialised storage for n trivially-constructible T. Buffers of 4 MiB or more are
// aligned to 2 MiB and offered to the kernel as transparent huge pages
// (madvise(MADV_HUGEPAGE), a hint): the permutation engine's random accesses into an
// index buffer of 4n bytes otherwise miss the TLB on almost every step (measured:
// ~1.5x faster shuffles at n = 10^7).
template <typename T>
class RawBuffer {
  static_assert(std::is_trivially_default_constructible_v<T> &&
                std::is_trivially_destructible_v<T>);

 public:
  explicit RawBuffer(std::size_t n) : size_(n) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t bytes = std::max<std::size_t>(1, n * sizeof(T));
    const bool huge = bytes >= 2 * kHuge;
    const std::size_t align = huge ? kHuge : 64;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (huge) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    data_.reset(static_cast<T*>(p));
  }
  std::span<T> span() {
    return {data_.get(), size_};
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_;
};

// Work buffers reused across the chunks that run on the pool: at most one buffer per
// concurrently running task is ever allocated, so memory is O(threads * size) however
// many chunks there are. Buffer contents are not meaningful between uses; every user
// initialises what it reads, so results never depend on which buffer a chunk gets.
template <typename T>
class BufferPool {
 public:
  explicit BufferPool(std::size_t size) : size_(size) {}

  class Lease {
   public:
    Lease(BufferPool& pool, std::unique_ptr<RawBuffer<T>> buffer)
        : pool_(pool), buffer_(std::move(buffer)) {}
    ~Lease() { pool_.release(std::move(buffer_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    std::span<T> span() { return buffer_->span(); }

   private:
    BufferPool& pool_;
    std::unique_ptr<RawBuffer<T>> buffer_;
  };

  Lease acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        auto buffer = std::move(free_.back());
        free_.pop_back();
        return Lease(*this, std::move(buffer));
      }
    }
    return Lease(*this, std::make_unique<RawBuffer<T>>(size_));
  }

 private:
  void release(std::unique_ptr<RawBuffer<T>> buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(buffer));
  }

  std::size_t size_;
  std::mutex mu_;
  std::vector<std::unique_ptr<RawBuffer<T>>> free_;
};

// Replicates per pool task: enough that a task does about 2^16 element-steps, at least
// one. Depends only on the problem size, never on the thread count (and results do not
// depend on it at all: every replicate has its own stream).
inline std::size_t replicates_per_chunk(std::size_t work_per_replicate) {
  constexpr std::size_t kTarget = std::size_t{1} << 16;
  if (work_per_replicate == 0) return kTarget;
  return std::max<std::size_t>(1, kTarget / work_per_replicate);
}

// A progress bar for runs long enough to deserve one (about 2^26 element-steps or
// more); nullptr otherwise, so short tests called in loops never flicker.
inline std::unique_ptr<Progress> maybe_progress(const char* label, std::size_t replicates,
                                                std::size_t work_per_replicate) {
  constexpr double kThreshold = static_cast<double>(std::uint64_t{1} << 26);
  if (static_cast<double>(replicates) * static_cast<double>(work_per_replicate) < kThreshold) {
    return nullptr;
  }
  return std::make_unique<Progress>(label, replicates);
}

// "At least as extreme as the observed T" with the documented relative tolerance
// |T| * 1e-12 (stats.h, permutation_test).
class Extremeness {
 public:
  static constexpr double kRelativeTolerance = 1e-12;

  Extremeness(Alternative alternative, double observed)
      : alternative_(alternative),
        observed_(observed),
        abs_observed_(std::fabs(observed)),
        tolerance_(std::fabs(observed) * kRelativeTolerance) {}

  bool operator()(double t) const {
    switch (alternative_) {
      case Alternative::TwoSided:
        return std::fabs(t) >= abs_observed_ - tolerance_;
      case Alternative::Greater:
        return t >= observed_ - tolerance_;
      case Alternative::Less:
        return t <= observed_ + tolerance_;
    }
    return false;
  }

 private:
  Alternative alternative_;
  double observed_;
  double abs_observed_;
  double tolerance_;
};

}  // namespace vlbias::stats_internal
