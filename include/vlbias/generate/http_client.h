#pragma once
// HTTP for the generation and scoring drivers (src/generate): one blocking exchange at a
// time over libcurl, and the retry policy every driver shares (exponential backoff with
// jitter on 429 / 5xx / timeouts / dropped connections, honouring Retry-After).
//
// Network failures are values, not exceptions: a driver records them in the run store.
// libcurl re-sends a request once by itself when a kept-alive connection turns out closed
// before any answer; that counts as one attempt here.
// Header values are never logged (they carry API keys).
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vlbias {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // name, value
  std::string body;
  double timeout_s = 60;  // whole exchange, connect included
  // A longer body ends the exchange (too_large) and no more than this is ever held: a
  // hostile or broken server cannot grow memory or disk beyond what the request can
  // legitimately return. The drivers derive it from the request (generate.h); this default
  // is for other callers.
  std::size_t max_response_bytes = std::size_t{16} << 20;
};

struct HttpResponse {
  int status = 0;  // 0 when no response arrived
  std::string body;
  std::string retry_after;  // the Retry-After header, "" when absent
  double elapsed_s = 0;
  std::string transport_error;  // "" when a response arrived; else what went wrong
  bool timed_out = false;
  // The body was longer than max_response_bytes (status 0, body empty, transport_error
  // "reply larger than N bytes; raise max_response_bytes"); not retryable.
  bool too_large = false;
};

// One libcurl handle: connections are kept alive between sends. Not thread-safe: use one
// client per thread.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  HttpResponse send(const HttpRequest& request);

 private:
  void* curl_;  // CURL*
};

struct RetryPolicy {
  int max_attempts = 6;              // attempts per request, the first included
  double base_delay_s = 1.0;         // delay before the 2nd attempt; doubles each time
  double max_delay_s = 60.0;         // cap of the backoff (Retry-After may ask for more)
  double max_retry_after_s = 600.0;  // a longer Retry-After is treated as this
  double jitter = 0.5;               // the delay is scaled by a uniform factor in [1 - j, 1]
};

// Whether an exchange is worth retrying: no response (transport error or timeout, but not a
// reply over the size limit), 408, 429, and every 5xx.
bool retryable(const HttpResponse& response);

// Seconds to wait before attempt `attempt` + 1 (attempt >= 1 is the one that just failed):
// Retry-After when the server sent one (delta-seconds or an HTTP-date, capped at
// max_retry_after_s), else min(max_delay_s, base * 2^(attempt-1)) scaled by the jitter
// factor `u` in [0, 1) (the caller draws it from its seeded stream).
double retry_delay(const RetryPolicy& policy, int attempt, const std::string& retry_after, double u,
                   std::time_t now);

// Retry-After (RFC 9110 10.2.3): delta-seconds or an IMF-fixdate; seconds from `now`
// (>= 0), nullopt when it is neither.
std::optional<double> parse_retry_after(const std::string& value, std::time_t now);

}  // namespace vlbias
