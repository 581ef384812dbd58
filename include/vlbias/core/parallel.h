#pragma once
// The project's one thread pool. Sized once by `--threads` (default: all cores).
// Work is split into tasks whose boundaries do not depend on the thread count, so
// any reduction done per task and combined in task order is deterministic.
// A parallel_for called from inside a pool task runs serially on that thread
// (no nested oversubscription).
#include <cstddef>
#include <functional>

namespace vlbias {

// Sets the number of worker threads (0 = hardware concurrency). Takes effect for
// later parallel_for calls.
void set_thread_count(unsigned n);
// Current number of threads parallel_for uses (>= 1).
unsigned thread_count();
// True while the calling thread runs a parallel_for task.
bool in_parallel_region();

// Runs fn(i) for every i in [0, n), spread over the pool; returns when all are
// done. If any call throws, the first exception (lowest task index) is rethrown
// after every started task has finished.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

// Splits [0, n) into ceil(n / chunk) contiguous chunks and runs fn(chunk_index,
// begin, end) for each. Chunk boundaries depend only on n and chunk.
void parallel_chunks(std::size_t n, std::size_t chunk,
                     const std::function<void(std::size_t, std::size_t, std::size_t)>& fn);

}  // namespace vlbias
