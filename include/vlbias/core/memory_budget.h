#pragma once
// A byte budget shared by threads (src/core/memory_budget.cpp): each thread acquires the bytes
// it is about to allocate and releases them when it has freed them, so the memory in flight
// stays bounded whatever the thread count. `vlbias encode` bounds its image decoding with one
// (issue 19: a PNG just under the pixel limit costs ~545 MB, and N decoding threads held N).
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

namespace vlbias {

class MemoryBudget {
 public:
  // Bytes held until destroyed or released (RAII). Movable; a default-constructed or
  // moved-from lease holds nothing.
  class Lease {
   public:
    Lease() = default;
    ~Lease() { release(); }
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    void release() noexcept;
    std::size_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Lease(MemoryBudget* budget, std::size_t bytes) : budget_(budget), bytes_(bytes) {}
    MemoryBudget* budget_ = nullptr;
    std::size_t bytes_ = 0;
  };

  // capacity > 0 (InternalError otherwise).
  explicit MemoryBudget(std::size_t capacity);
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Blocks until `bytes` fit beside the bytes in flight, first come first served (a large
  // request is not overtaken by later small ones). A request larger than the capacity waits
  // until nothing else is in flight and then runs alone, so the bytes in flight never exceed
  // max(capacity, the largest single request). Every lease must be released (or destroyed)
  // before the budget is destroyed.
  Lease acquire(std::size_t bytes);
  // The same without waiting: nothing when the bytes do not fit now or someone is waiting.
  std::optional<Lease> try_acquire(std::size_t bytes);

  std::size_t capacity() const { return capacity_; }
  std::size_t in_use() const;
  std::size_t peak() const;     // largest in_use() so far
  std::size_t waiting() const;  // threads blocked in acquire()

 private:
  bool fits(std::size_t bytes) const;  // with mutex_ held
  void give_back(std::size_t bytes) noexcept;

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t in_use_ = 0, peak_ = 0, waiting_ = 0;
  std::uint64_t next_ticket_ = 0, serving_ = 0;  // FIFO order of acquire()
};

}  // namespace vlbias
