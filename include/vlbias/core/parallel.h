#pragma once
// The project's one thread pool. Sized by `--threads` (default: all cores).
// Work is split into tasks whose boundaries do not depend on the thread count, so
// any reduction done per task and combined in task order is deterministic.
// A parallel_for called from inside a pool task runs serially on that thread
// (no nested oversubscription).
//
// Threads are bounded (issue 37: --threads 20000 aborted, Python's set_threads(10**6) made
// ~32,000 threads and exhausted the process table): a count is at most kMaxThreads, refused
// as a usage error above it, and the pool starts a worker only when a parallel_for has a
// task for it (never more threads than tasks: 3 tasks on --threads 256 use 3 threads).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <thread>
#include <vector>

namespace vlbias {

// The most threads a count may ask for. A fixed number, so that a command line that runs on
// one machine runs on another (results never depend on the count): 256 is the hardware
// threads of the largest common two-socket servers (2 x 64 cores x 2), and more threads than
// cores only add stacks, scratch buffers and wake-ups to work that is bound by the cores.
inline constexpr unsigned kMaxThreads = 256;

// UsageError unless 0 <= n <= kMaxThreads, naming `what` ("--threads") and the range.
void check_thread_count(std::int64_t n, std::string_view what);

// Sets the number of worker threads (0 = hardware concurrency, at most kMaxThreads);
// UsageError above kMaxThreads. Takes effect for later parallel_for calls.
void set_thread_count(unsigned n);
// Current number of threads parallel_for uses (>= 1).
unsigned thread_count();
// True while the calling thread runs a parallel_for task.
bool in_parallel_region();

// Runs fn(i) for every i in [0, n), spread over the pool; returns when all are
// done. If any call throws, the first exception (lowest task index) is rethrown
// after every started task has finished.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

// Starts threads running body(0), ..., body(n - 1) into `threads` until one cannot be
// started (std::system_error: the process or memory limits); returns how many started. The
// caller continues with those (and itself), so a loaded machine slows a job down instead of
// aborting it (a vector of started std::threads destroyed unjoined calls std::terminate).
std::size_t start_threads(std::vector<std::thread>& threads, std::size_t n,
                          const std::function<void(std::size_t)>& body);

// Splits [0, n) into ceil(n / chunk) contiguous chunks and runs fn(chunk_index,
// begin, end) for each. Chunk boundaries depend only on n and chunk.
void parallel_chunks(std::size_t n, std::size_t chunk,
                     const std::function<void(std::size_t, std::size_t, std::size_t)>& fn);

}  // namespace vlbias
