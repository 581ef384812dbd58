#include "vlbias/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

thread_local bool tl_in_task = false;

// Up to `capacity` threads (the caller included) that each pull task indices from a shared
// atomic counter for the current job. One job at a time (jobs are serialised). Workers are
// started when a job first has tasks for them, and a job of n tasks wakes at most n - 1 of
// them (tickets_): a pool sized far above the cores costs nothing for small jobs.
class Pool {
 public:
  explicit Pool(unsigned capacity) : capacity_(capacity) {}
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  unsigned capacity() const { return capacity_; }

  void run(std::size_t n, const std::function<void(std::size_t)>& fn) {
    std::lock_guard<std::mutex> job_lock(job_mu_);
    const std::size_t helpers = std::min<std::size_t>(n, capacity_) - 1;
    if (workers_.size() < helpers && !start_failed_) {
      const std::size_t wanted = helpers - workers_.size();
      start_failed_ =
          start_threads(workers_, wanted, [this](std::size_t) { worker_loop(); }) < wanted;
    }
    const auto tickets = static_cast<unsigned>(std::min(helpers, workers_.size()));
    {
      std::unique_lock<std::mutex> lock(mu_);
      fn_ = &fn;
      n_ = n;
      next_.store(0);
      first_error_index_ = n;
      first_error_ = nullptr;
      tickets_ = tickets;
      active_ = tickets;
    }
    if (tickets == workers_.size()) {
      cv_.notify_all();
    } else {
      for (unsigned i = 0; i < tickets; ++i) cv_.notify_one();
    }
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

  // A worker takes one ticket of the current job, works until its tasks are taken, and
  // waits for the next ticket. run() returns only when every ticket has been taken and
  // worked, so no worker touches a job after it.
  void worker_loop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || tickets_ > 0; });
        if (stop_) return;
        --tickets_;
      }
      work();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (--active_ == 0) done_cv_.notify_all();
      }
    }
  }

  const unsigned capacity_;
  std::vector<std::thread> workers_;  // only run() changes it, under job_mu_
  bool start_failed_ = false;         // the system refused a thread: run with those started
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
  unsigned tickets_ = 0;  // workers still to join the current job
  unsigned active_ = 0;   // tickets not yet worked
  bool stop_ = false;
};

std::mutex g_pool_mu;
unsigned g_requested = 0;
std::unique_ptr<Pool> g_pool;

unsigned resolve(unsigned n) {
  if (n == 0) n = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  return n;
}

Pool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  const unsigned want = resolve(g_requested);
  if (!g_pool || g_pool->capacity() != want) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(want);
  }
  return *g_pool;
}

}  // namespace

void check_thread_count(std::int64_t n, std::string_view what) {
  VLBIAS_CHECK(n >= 0 && n <= static_cast<std::int64_t>(kMaxThreads), UsageError,
               "{} must be an integer from 0 (all cores) to {}, got {}; more threads than "
               "cores do not make vlbias faster",
               what, kMaxThreads, n);
}

void set_thread_count(unsigned n) {
  check_thread_count(n, "the thread count");
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

std::size_t start_threads(std::vector<std::thread>& threads, std::size_t n,
                          const std::function<void(std::size_t)>& body) {
  for (std::size_t i = 0; i < n; ++i) {
    try {
      threads.emplace_back(body, i);
    } catch (const std::system_error&) {
      return i;
    }
  }
  return n;
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
