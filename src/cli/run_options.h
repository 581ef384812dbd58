#pragma once
// The options every driver command shares (generate_command.cpp): the run folder, resume,
// and the overrides of a spec's `requests` block; the summary each prints.
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

#include "vlbias/generate/generate.h"

namespace vlbias::cli_internal {

// Command-line settings that override the spec's `requests` block.
struct Overrides {
  std::string out;
  bool resume = false;
  bool retry_failed = false;
  std::size_t concurrency = 0;         // 0 = the spec's
  double max_qps = -1;                 // < 0 = the spec's
  std::size_t max_response_bytes = 0;  // 0 = the spec's (or derived)
  std::string shard;                   // --shard I/N|auto|auto/N; "" = the whole job
};

// A number option in [lo, hi] (or 0 when `zero_means` says what 0 is), with the range in
// the message as the spec's keys give it (CLI::Range prints 0.001000).
CLI::Validator number_range(double lo, double hi, const char* zero_means = nullptr);

// --out, --resume, --retry-failed, --concurrency, --max-qps, --max-response-bytes, --shard.
void add_run_options(CLI::App* cmd, Overrides& o);

// The overrides onto the job's control (UsageError for --retry-failed without --resume), and
// --shard (io/shard.h): the shard into control.shard, its index into every {shard} of --out.
void apply(Overrides& o, JobControl& control);

// The summary on stdout: one JSON object, like every command.
void print_summary(const JobSummary& s, const std::string& out);

}  // namespace vlbias::cli_internal
