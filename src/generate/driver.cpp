// The shared request loop (include/vlbias/generate/driver.h).
#include "vlbias/generate/driver.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"

namespace vlbias {

namespace {

using Clock = std::chrono::steady_clock;

// Spaces request starts at least 1 / qps apart over all threads.
class RateLimit {
 public:
  explicit RateLimit(double qps) : interval_(qps > 0 ? 1.0 / qps : 0.0), next_(Clock::now()) {}
  void wait() {
    if (interval_ <= 0) return;
    Clock::time_point at;
    {
      std::lock_guard lock(mutex_);
      at = std::max(next_, Clock::now());
      next_ = at +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_));
    }
    std::this_thread::sleep_until(at);
  }

 private:
  double interval_;
  std::mutex mutex_;
  Clock::time_point next_;
};

// Hands out the store's Pending rows to the workers, a page at a time.
class Feeder {
 public:
  explicit Feeder(const RunStore& store) : store_(store) {}
  std::optional<PendingRequest> next() {
    std::lock_guard lock(mutex_);
    if (page_.empty() && !exhausted_) {
      std::vector<PendingRequest> page = store_.pending_after(cursor_, kPage);
      exhausted_ = page.empty();
      if (!exhausted_) cursor_ = page.back().seq;
      for (auto& p : page) page_.push_back(std::move(p));
    }
    if (page_.empty()) return std::nullopt;
    PendingRequest p = std::move(page_.front());
    page_.pop_front();
    return p;
  }

 private:
  static constexpr std::size_t kPage = 4096;
  const RunStore& store_;
  std::mutex mutex_;
  std::deque<PendingRequest> page_;
  std::int64_t cursor_ = 0;
  bool exhausted_ = false;
};

std::string describe(const HttpResponse& r) {
  if (r.status == 0) return r.timed_out ? "timeout: " + r.transport_error : r.transport_error;
  return fmt::format("HTTP {}", r.status);
}

}  // namespace

DriveSummary drive(RunStore& store, const BuildRequest& build, const ReadResponse& read,
                   const DriveOptions& options) {
  VLBIAS_CHECK(options.concurrency >= 1, UsageError, "concurrency must be at least 1");
  VLBIAS_CHECK(options.retry.max_attempts >= 1, UsageError, "max_attempts must be at least 1");
  const auto start = Clock::now();
  const std::size_t total = store.counts().pending;
  Feeder feeder(store);
  std::atomic<std::size_t> done{0}, refused{0}, failed{0}, attempts{0}, retries{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  RateLimit rate(options.max_qps);
  Progress progress(options.label, total);
  auto update_note = [&] {
    progress.set_note(fmt::format("refused {} failed {} retries {}", refused.load(), failed.load(),
                                  retries.load()));
  };

  auto worker = [&](std::size_t w) {
    try {
      HttpClient client;
      Rng rng(options.seed, w);
      while (!stop) {
        const std::optional<PendingRequest> item = feeder.next();
        if (!item) break;
        const std::string& key = item->key;
        const std::string& request = item->request;
        for (int attempt = 1;; ++attempt) {
          rate.wait();
          HttpResponse response = client.send(build(key, request));
          ++attempts;
          options.redact.apply(response.body);
          options.redact.apply(response.transport_error);
          Verdict v;
          if (response.too_large) {
            // What the request can return is known: a larger reply is no passing fault.
            v.status = RequestStatus::Failed;
            v.reason = response.transport_error;
          } else if (retryable(response)) {
            v.status = RequestStatus::Pending;
            v.reason = describe(response);
          } else {
            v = read(key, request, response);
          }
          options.redact.apply(v.response);
          options.redact.apply(v.reason);
          if (v.status == RequestStatus::Pending && attempt >= options.retry.max_attempts) {
            v.status = RequestStatus::Failed;
            v.reason = fmt::format("{} (gave up after {} attempts)", v.reason, attempt);
          }
          switch (v.status) {
            case RequestStatus::Done:
              store.record_done(key, v.response, response.status, response.elapsed_s);
              ++done;
              break;
            case RequestStatus::Refused:
              store.record_refused(key, v.response, v.reason, response.status, response.elapsed_s);
              ++refused;
              update_note();
              break;
            case RequestStatus::Failed:
              store.record_failed(key, v.reason, response.status, response.elapsed_s);
              ++failed;
              update_note();
              break;
            case RequestStatus::Pending: {
              store.record_attempt(key, v.reason, response.status, response.elapsed_s);
              ++retries;
              update_note();
              const double delay = retry_delay(options.retry, attempt, response.retry_after,
                                               rng.uniform01(), std::time(nullptr));
              std::this_thread::sleep_for(std::chrono::duration<double>(delay));
              continue;
            }
          }
          break;
        }
        progress.advance();
      }
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> threads;
  const std::size_t n = std::min<std::size_t>(options.concurrency, std::max<std::size_t>(1, total));
  // Fewer workers when the system refuses a thread (start_threads); none refused is an error.
  if (start_threads(threads, n, worker) == 0) {
    VLBIAS_FAIL(InternalError,
                "could not start a request thread (the system refused it: process or memory "
                "limits); lower requests.concurrency (--concurrency)");
  }
  for (auto& t : threads) t.join();
  progress.finish();
  if (error) std::rethrow_exception(error);
  DriveSummary s;
  s.done = done;
  s.refused = refused;
  s.failed = failed;
  s.attempts = attempts;
  s.retries = retries;
  s.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  return s;
}

}  // namespace vlbias
