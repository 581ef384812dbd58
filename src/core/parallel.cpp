#include "vlbias/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace vlbias {

namespace {

thread_local bool tl_in_task = false;

// A fixed set of workers that each pull task indices from a shared atomic
// counter for the current job. One job at a time (jobs are serialised).
class Pool {
 public:
  explicit Pool(unsigned n) {
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  void run(std::size_t n, const std::function<void(std::size_t)>& fn) {
    std::lock_guard<std::mutex> job_lock(job_mu_);
    std::vector<std::exception_ptr> errors;
    {
      std::unique_lock<std::mutex> lock(mu_);
      fn_ = &fn;
      n_ = n;
      next_.store(0);
      first_error_index_ = n;
      first_error_ = nullptr;
      active_ = static_cast<unsigned>(workers_.size());
      ++generation_;
    }
    cv_.notify_all();
    work();  // the calling thread takes part
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return active_ == 0; });
    fn_ = nullptr;
    if (first_error_) std::rethrow_exception(first_error_);
  }

 private:
  void work() {
    const bool was = tl_in_task;
    tl_in_task = true;
    for (;;) {
      const std::size_t i = next_.fetch_add(1);
      if (i >= n_) break;
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(err_mu_);
        if (i < first_error_index_) {
          first_error_index_ = i;
          first_error_ = std::current_exception();
        }
      }
    }
    tl_in_task = was;
  }

  void worker_loop() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (--active_ == 0) done_cv_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex job_mu_;
  std::mutex mu_;
  std::mutex err_mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t first_error_index_ = 0;
  std::exception_ptr first_error_;
  unsigned active_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

std::mutex g_pool_mu;
unsigned g_requested = 0;
std::unique_ptr<Pool> g_pool;

unsigned resolve(unsigned n) {
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

Pool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  const unsigned want = resolve(g_requested);
  if (!g_pool || g_pool->size() != want) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(want);
  }
  return *g_pool;
}

}  // namespace

void set_thread_count(unsigned n) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_requested = n;
}

unsigned thread_count() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  return resolve(g_requested);
}

bool in_parallel_region() {
  return tl_in_task;
}

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  if (tl_in_task || n == 1 || thread_count() == 1) {
    // Serial path: same task order and same error rule as the pool.
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  pool().run(n, fn);
}

void parallel_chunks(std::size_t n, std::size_t chunk,
                     const std::function<void(std::size_t, std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  const std::size_t n_chunks = (n + chunk - 1) / chunk;
  parallel_for(n_chunks, [&](std::size_t c) {
    const std::size_t begin = c * chunk;
    fn(c, begin, std::min(n, begin + chunk));
  });
}

}  // namespace vlbias
