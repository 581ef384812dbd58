// MemoryBudget: a counting semaphore over bytes with first-come-first-served tickets.
#include "vlbias/core/memory_budget.h"

#include <algorithm>
#include <utility>

#include "vlbias/core/error.h"

namespace vlbias {

MemoryBudget::Lease::Lease(Lease&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryBudget::Lease& MemoryBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryBudget::Lease::release() noexcept {
  if (budget_ != nullptr) budget_->give_back(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

MemoryBudget::MemoryBudget(std::size_t capacity) : capacity_(capacity) {
  VLBIAS_CHECK(capacity > 0, InternalError, "a memory budget of 0 bytes admits nothing");
}

bool MemoryBudget::fits(std::size_t bytes) const {
  // An oversized request runs alone: it fits only in an empty budget.
  return bytes > capacity_ ? in_use_ == 0 : in_use_ <= capacity_ - bytes;
}

MemoryBudget::Lease MemoryBudget::acquire(std::size_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t ticket = next_ticket_++;
  ++waiting_;
  cv_.wait(lock, [&] { return serving_ == ticket && fits(bytes); });
  --waiting_;
  ++serving_;
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
  lock.unlock();
  cv_.notify_all();  // the next ticket may fit too
  return Lease(this, bytes);
}

std::optional<MemoryBudget::Lease> MemoryBudget::try_acquire(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (serving_ != next_ticket_ || !fits(bytes)) return std::nullopt;
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
  return Lease(this, bytes);
}

void MemoryBudget::give_back(std::size_t bytes) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= bytes;
  }
  cv_.notify_all();
}

std::size_t MemoryBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

std::size_t MemoryBudget::peak() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

std::size_t MemoryBudget::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_;
}

}  // namespace vlbias
