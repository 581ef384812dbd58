// HTTP over libcurl and the shared retry policy (include/vlbias/generate/http_client.h).
#include "vlbias/generate/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

// curl_global_init is not thread-safe; run it once, before the first handle.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    VLBIAS_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK, InternalError,
                 "libcurl could not be initialised");
  });
}

// Collects the body up to the request's max_response_bytes (http_client.h).
struct BodySink {
  std::string* body;
  std::size_t limit;
  bool too_big = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  std::string& body = *sink->body;
  const std::size_t len = size * n;
  if (len > sink->limit - body.size()) {
    sink->too_big = true;
    return 0;  // libcurl stops with CURLE_WRITE_ERROR
  }
  // Grown by doubling, but never past the limit: the limit bounds the memory, not just the
  // length.
  if (body.size() + len > body.capacity())
    body.reserve(std::min(sink->limit, std::max(body.size() + len, 2 * body.capacity())));
  body.append(data, len);
  return len;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  const std::size_t len = size * n;
  std::string line(data, len);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == "retry-after") {
      std::string value = line.substr(colon + 1);
      const auto b = value.find_first_not_of(" \t");
      const auto e = value.find_last_not_of(" \t\r\n");
      *static_cast<std::string*>(user) = b == std::string::npos ? "" : value.substr(b, e - b + 1);
    }
  }
  return len;
}

struct SlistFree {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

HttpClient::HttpClient() {
  global_init();
  curl_ = curl_easy_init();
  VLBIAS_CHECK(curl_ != nullptr, InternalError, "libcurl could not create a handle");
}

HttpClient::~HttpClient() {
  curl_easy_cleanup(static_cast<CURL*>(curl_));
}

HttpResponse HttpClient::send(const HttpRequest& request) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);  // keeps the connection cache
  HttpResponse out;
  std::unique_ptr<curl_slist, SlistFree> headers;
  // "Expect:" (empty) stops libcurl asking for 100-continue before a large body (an image
  // data URI): servers that never answer it would cost a one-second wait per request.
  std::vector<std::string> lines{"Expect:"};
  for (const auto& [name, value] : request.headers) lines.push_back(name + ": " + value);
  for (const auto& line : lines) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    VLBIAS_CHECK(next != nullptr, InternalError, "libcurl could not add a header");
    (void)headers.release();
    headers.reset(next);
  }
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::lround(request.timeout_s * 1000)));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM (threads)
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  BodySink sink{&out.body, request.max_response_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  // A Content-Length over the limit ends the exchange before any of the body is read.
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(
                       std::min<std::size_t>(request.max_response_bytes, std::size_t{1} << 62)));
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out.retry_after);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  const auto start = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(c);
  out.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rc != CURLE_OK) {
    out.status = 0;
    out.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    out.too_large = sink.too_big || rc == CURLE_FILESIZE_EXCEEDED;
    out.transport_error = out.too_large
                              ? fmt::format("reply larger than {} bytes; raise max_response_bytes",
                                            request.max_response_bytes)
                              : std::string(curl_easy_strerror(rc));
    out.body.clear();
    out.body.shrink_to_fit();
    return out;
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  out.status = static_cast<int>(status);
  return out;
}

bool retryable(const HttpResponse& r) {
  return (r.status == 0 && !r.too_large) || r.status == 408 || r.status == 429 ||
         (r.status >= 500 && r.status <= 599);
}

std::optional<double> parse_retry_after(const std::string& value, std::time_t now) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (value.size() > 9) return 1e9;  // absurd, capped by the caller
    return std::stod(value);
  }
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
  std::tm tm{};
  char weekday[4] = {0}, month[4] = {0}, zone[4] = {0};
  int day = 0, year = 0, h = 0, m = 0, s = 0;
  if (std::sscanf(value.c_str(), "%3s, %2d %3s %4d %2d:%2d:%2d %3s", weekday, &day, month, &year,
                  &h, &m, &s, zone) != 8 ||
      std::strcmp(zone, "GMT") != 0) {
    return std::nullopt;
  }
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  int mon = -1;
  for (int i = 0; i < 12; ++i) {
    if (std::strcmp(month, kMonths[i]) == 0) mon = i;
  }
  if (mon < 0 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = mon;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  const std::time_t at = timegm(&tm);
  return std::max(0.0, std::difftime(at, now));
}

double retry_delay(const RetryPolicy& p, int attempt, const std::string& retry_after, double u,
                   std::time_t now) {
  if (const auto ra = parse_retry_after(retry_after, now))
    return std::min(*ra, p.max_retry_after_s);
  const double backoff =
      std::min(p.max_delay_s, p.base_delay_s * std::pow(2.0, std::max(0, attempt - 1)));
  return backoff * (1.0 - p.jitter * u);
}

}  // namespace vlbias
