#include "vlbias/core/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "vlbias/core/terminal.h"

namespace vlbias {

namespace {
std::atomic<bool> g_quiet{false};
std::mutex g_sink_mu;
std::function<void(const std::string&)> g_sink;
}  // namespace

void set_quiet(bool q) {
  g_quiet = q;
}
bool quiet() {
  return g_quiet;
}

void set_warning_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> lock(g_sink_mu);
  g_sink = std::move(sink);
}

void warn_message(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_sink_mu);
  if (g_sink) {
    g_sink(message);
    return;
  }
  if (!g_quiet) std::fprintf(stderr, "vlbias: warning: %s\n", printable_text(message).c_str());
}

void print_message(const std::string& text) {
  const std::string shown = printable_text(text);
  std::fwrite(shown.data(), 1, shown.size(), stderr);
}

struct Progress::State {
  std::string label;
  std::size_t total;
  std::atomic<std::size_t> done{0};
  bool enabled;
  bool finished = false;
  std::mutex mu;
  std::string note;  // guarded by mu
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw{};

  void draw(bool final_draw) {
    const auto now = std::chrono::steady_clock::now();
    if (!final_draw && now - last_draw < std::chrono::milliseconds(100)) return;
    last_draw = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const std::size_t d = done.load();
    const double rate = elapsed > 0 ? d / elapsed : 0.0;
    const double frac = total ? static_cast<double>(d) / total : 1.0;
    const int width = 30;
    const int filled = static_cast<int>(frac * width);
    std::string bar(filled, '#');
    bar.resize(width, '.');
    std::string eta = "?";
    if (rate > 0 && d <= total) eta = fmt::format("{:.0f}s", (total - d) / rate);
    std::fprintf(stderr, "\r%s [%s] %zu/%zu %.0f/s elapsed %.0fs ETA %s%s%s   %s", label.c_str(),
                 bar.c_str(), d, total, rate, elapsed, eta.c_str(), note.empty() ? "" : "  ",
                 note.c_str(), final_draw ? "\n" : "");
    std::fflush(stderr);
  }
};

Progress::Progress(std::string label, std::size_t total) : state_(new State) {
  state_->label = std::move(label);
  state_->total = total;
  state_->enabled = !quiet() && isatty(STDERR_FILENO);
}

Progress::~Progress() {
  finish();
  delete state_;
}

void Progress::advance(std::size_t n) {
  state_->done += n;
  if (!state_->enabled) return;
  std::unique_lock<std::mutex> lock(state_->mu, std::try_to_lock);
  if (lock.owns_lock() && !state_->finished) state_->draw(false);
}

void Progress::set_note(std::string note) {
  if (!state_->enabled) return;
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->note = std::move(note);
}

void Progress::finish() {
  if (!state_->enabled) return;
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->finished) return;
  state_->finished = true;
  state_->draw(true);
}

}  // namespace vlbias
