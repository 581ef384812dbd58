#pragma once
// Warnings and progress on stderr. Quiet mode (`--quiet`) silences both; tests can
// capture warnings through a sink.
#include <cstddef>
#include <functional>
#include <string>

#include <fmt/format.h>

namespace vlbias {

void set_quiet(bool quiet);
bool quiet();

// Receives every warning message (without the "vlbias: warning: " prefix).
// Default sink prints to stderr unless quiet. Passing nullptr restores the default.
void set_warning_sink(std::function<void(const std::string&)> sink);
void warn_message(const std::string& message);

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  warn_message(fmt::format(format, std::forward<Args>(args)...));
}

// A progress bar on stderr (elapsed, rate, ETA), shown only when stderr is a
// terminal and not quiet. Thread-safe `advance`; redraws at most ~10 times/s.
class Progress {
 public:
  Progress(std::string label, std::size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::size_t n = 1);
  // A short text shown after the ETA, e.g. the request drivers' error counts
  // ("refused 3 failed 1 retries 12"). Thread-safe.
  void set_note(std::string note);
  void finish();

 private:
  struct State;
  State* state_;
};

}  // namespace vlbias
