// The shared request loop (driver.h) and the HTTP client (http_client.h) against an
// in-process server on 127.0.0.1 that injects faults: 500s, 429 with Retry-After, answers
// slower than the timeout, dropped connections, malformed JSON, refusals and content-filter
// blocks. Every request must end in the store exactly once with the right status and
// attempt count.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "http_test_server.h"
#include "vlbias/core/error.h"
#include "vlbias/generate/driver.h"

namespace vlbias {
namespace {
namespace in_driver_test {

namespace fs = std::filesystem;
using test_http::Request;
using test_http::Response;
using test_http::Server;

fs::path fresh_store() {
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_driver_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "run.sqlite";
}

std::string chat_answer(const std::string& text) {
  return nlohmann::json{{"choices", {{{"message", {{"role", "assistant"}, {"content", text}}}}}}}
      .dump();
}

// An OpenAI-chat-like reader: malformed JSON is retried, refusals and content-filter blocks
// are recorded as refusals, other client errors fail.
Verdict read_chat(const std::string&, const std::string&, const HttpResponse& r) {
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (r.status == 400 && r.body.find("content_filter") != std::string::npos) {
    return {RequestStatus::Refused, r.body, "content_filter"};
  }
  if (r.status < 200 || r.status > 299)
    return {RequestStatus::Failed, "", std::string("HTTP ").append(std::to_string(r.status))};
  if (j.is_discarded() || !j.contains("choices"))
    return {RequestStatus::Pending, "", "malformed JSON"};
  const std::string text = j["choices"][0]["message"]["content"].get<std::string>();
  if (text.rfind("I'm sorry", 0) == 0) return {RequestStatus::Refused, r.body, "refusal"};
  return {RequestStatus::Done, r.body, ""};
}

BuildRequest post_to(const Server& server, double timeout_s) {
  const std::string url = server.url("/v1/chat/completions");
  return [url, timeout_s](const std::string& key, const std::string& request) {
    HttpRequest h;
    h.url = url;
    h.headers = {{"Content-Type", "application/json"}, {"X-Key", key}};
    h.body = request;
    h.timeout_s = timeout_s;
    return h;
  };
}

TEST(Driver, EveryFaultEndsInTheStoreOnceWithTheRightStatus) {
  std::mutex m;
  std::map<std::string, int> seen;  // attempts per key as the server saw them
  Server server([&](const Request& req) {
    const std::string key = req.header("x-key");
    int n;
    {
      std::lock_guard lock(m);
      n = ++seen[key];
    }
    Response r;
    r.body = chat_answer("A person in a kitchen.");
    if (key == "e500x2" && n <= 2) r = {500, "{\"error\": \"boom\"}", {}, 0, false};
    if (key == "e429" && n == 1) r = {429, "{}", {{"Retry-After", "0"}}, 0, false};
    if (key == "slow" && n == 1) r.delay_ms = 2500;
    if (key == "drop" && n == 1) r.drop = true;
    if (key == "badjson") r.body = "{\"choices\": [";
    if (key == "refuse") r.body = chat_answer("I'm sorry, I can't help with that.");
    if (key == "filter") r = {400, "{\"error\": {\"code\": \"content_filter\"}}", {}, 0, false};
    if (key == "e404") r = {404, "{}", {}, 0, false};
    if (key == "always500") r = {503, "{}", {}, 0, false};
    return r;
  });
  RunStore store(fresh_store(), "faults");
  std::vector<std::pair<std::string, std::string>> reqs;
  for (const char* k : {"ok1", "ok2", "e500x2", "e429", "slow", "drop", "badjson", "refuse",
                        "filter", "e404", "always500"}) {
    reqs.emplace_back(k, "{\"model\": \"m\", \"messages\": []}");
  }
  store.add(reqs);
  DriveOptions o;
  o.concurrency = 4;
  o.retry.max_attempts = 4;
  o.retry.base_delay_s = 0.01;
  const DriveSummary s = drive(store, post_to(server, 1.0), read_chat, o);

  const std::map<std::string, std::pair<RequestStatus, int>> want{
      {"ok1", {RequestStatus::Done, 1}},       {"ok2", {RequestStatus::Done, 1}},
      {"e500x2", {RequestStatus::Done, 3}},    {"e429", {RequestStatus::Done, 2}},
      {"slow", {RequestStatus::Done, 2}},      {"badjson", {RequestStatus::Failed, 4}},
      {"refuse", {RequestStatus::Refused, 1}}, {"filter", {RequestStatus::Refused, 1}},
      {"e404", {RequestStatus::Failed, 1}},    {"always500", {RequestStatus::Failed, 4}}};
  std::size_t total_attempts = 0;
  for (const auto& [key, w] : want) {
    const RequestRecord r = store.get(key);
    EXPECT_EQ(r.status, w.first) << key << ": " << r.error;
    EXPECT_EQ(r.attempts, w.second) << key;
    total_attempts += static_cast<std::size_t>(w.second);
  }
  // A connection dropped without an answer: libcurl itself re-sends once when the dropped
  // connection was a reused one (the server then sees 2 requests for 1 attempt); on a fresh
  // connection it is a transport error and our retry makes attempt 2.
  const RequestRecord drop = store.get("drop");
  EXPECT_EQ(drop.status, RequestStatus::Done);
  EXPECT_GE(drop.attempts, 1);
  EXPECT_LE(drop.attempts, 2);
  EXPECT_EQ(seen["drop"], 2);
  total_attempts += static_cast<std::size_t>(drop.attempts);
  EXPECT_EQ(store.get("refuse").error, "refusal");
  EXPECT_EQ(store.get("filter").error, "content_filter");
  EXPECT_NE(store.get("always500").error.find("gave up after 4 attempts"), std::string::npos);
  EXPECT_NE(store.get("slow").response.find("kitchen"), std::string::npos);
  EXPECT_EQ(s.attempts, total_attempts);
  EXPECT_EQ(s.done, 6u);
  EXPECT_EQ(s.refused, 2u);
  EXPECT_EQ(s.failed, 3u);
  EXPECT_EQ(store.counts().pending, 0u);
  // The server saw each attempt (the slow one too: it answered after the client gave up).
  std::size_t server_attempts = 0;
  for (const auto& [k, n] : seen) server_attempts += static_cast<std::size_t>(n);
  EXPECT_EQ(server_attempts - 2, total_attempts - static_cast<std::size_t>(drop.attempts));
  // A second drive has nothing to do.
  EXPECT_EQ(drive(store, post_to(server, 1.0), read_chat, o).attempts, 0u);
}

TEST(Driver, HonoursRetryAfterAndTheQpsLimit) {
  using Clock = std::chrono::steady_clock;
  std::mutex m;
  std::vector<Clock::time_point> times;
  Server server([&](const Request&) {
    std::lock_guard lock(m);
    times.push_back(Clock::now());
    Response r;
    if (times.size() == 1)
      r = {429, "{}", {{"Retry-After", "1"}}, 0, false};
    else
      r.body = chat_answer("ok");
    return r;
  });
  RunStore store(fresh_store(), "ra");
  store.add({{"only", "{}"}});
  DriveOptions o;
  o.retry.base_delay_s = 0.001;
  drive(store, post_to(server, 5), read_chat, o);
  ASSERT_EQ(times.size(), 2u);
  EXPECT_GE(std::chrono::duration<double>(times[1] - times[0]).count(), 0.95);

  RunStore paced(fresh_store().replace_filename("paced.sqlite"), "qps");
  std::vector<std::pair<std::string, std::string>> reqs;
  for (int i = 0; i < 10; ++i) reqs.emplace_back(std::string("k").append(std::to_string(i)), "{}");
  paced.add(reqs);
  times.clear();
  times.push_back(Clock::now());  // not a 429 for the first: the counter is past 1
  o.concurrency = 8;
  o.max_qps = 20;
  const DriveSummary s = drive(paced, post_to(server, 5), read_chat, o);
  EXPECT_EQ(s.done, 10u);
  EXPECT_GE(s.elapsed_s, 9 / 20.0 - 0.02);  // 10 starts at least 50 ms apart
}

TEST(RetryPolicy, BackoffJitterAndRetryAfter) {
  RetryPolicy p;
  p.base_delay_s = 1;
  p.max_delay_s = 10;
  p.jitter = 0.5;
  EXPECT_DOUBLE_EQ(retry_delay(p, 1, "", 0.0, 0), 1.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 3, "", 0.0, 0), 4.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 3, "", 0.5, 0), 3.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 10, "", 0.0, 0), 10.0);  // capped
  EXPECT_DOUBLE_EQ(retry_delay(p, 1, "7", 0.9, 0), 7.0);   // Retry-After wins, no jitter
  EXPECT_DOUBLE_EQ(retry_delay(p, 1, "99999", 0.0, 0), 600.0);
  // IMF-fixdate, 784111777 = Sun, 06 Nov 1994 08:49:37 GMT.
  EXPECT_DOUBLE_EQ(*parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 30), 30.0);
  EXPECT_DOUBLE_EQ(*parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 30), 0.0);
  EXPECT_FALSE(parse_retry_after("soon", 0));
  EXPECT_FALSE(parse_retry_after("Sun, 06 Nov 1994 08:49:37 PST", 0));
  EXPECT_FALSE(parse_retry_after("-5", 0));
  EXPECT_TRUE(retryable(HttpResponse{0, "", "", 0, "Connection refused", false}));
  EXPECT_TRUE(retryable(HttpResponse{503, "", "", 0, "", false}));
  EXPECT_TRUE(retryable(HttpResponse{429, "", "", 0, "", false}));
  EXPECT_FALSE(retryable(HttpResponse{400, "", "", 0, "", false}));
  EXPECT_FALSE(retryable(HttpResponse{200, "", "", 0, "", false}));
}

TEST(HttpClient, NoServerIsATransportErrorNotAnException) {
  HttpClient client;
  HttpRequest r;
  r.url = "http://127.0.0.1:1/nothing";
  r.timeout_s = 2;
  const HttpResponse res = client.send(r);
  EXPECT_EQ(res.status, 0);
  EXPECT_FALSE(res.transport_error.empty());
}

TEST(HttpClient, AnOverlongBodyIsTooLargeNotRetryableAndTheConnectionStillWorks) {
  Server server([](const Request& req) {
    Response r;
    r.body = std::string(req.path == "/big" ? 100'000 : 10, 'x');
    return r;
  });
  HttpClient client;
  HttpRequest r;
  r.url = server.url("/big");
  r.max_response_bytes = 4096;
  const HttpResponse big = client.send(r);
  EXPECT_EQ(big.status, 0);
  EXPECT_TRUE(big.too_large);
  EXPECT_EQ(big.transport_error, "reply larger than 4096 bytes; raise max_response_bytes");
  EXPECT_TRUE(big.body.empty());
  // The same request would get the same reply: it fails at once.
  EXPECT_FALSE(retryable(big));
  r.url = server.url("/small");
  const HttpResponse small = client.send(r);
  EXPECT_EQ(small.status, 200);
  EXPECT_EQ(small.body, std::string(10, 'x'));
}

TEST(HttpClient, ABodyOfUnannouncedLengthIsCutAtTheLimitWhileItArrives) {
  // No Content-Length to refuse up front: the write callback stops the transfer once the
  // limit would be passed (64 MB sent, 1 MB allowed).
  Server server([](const Request& req) {
    Response r;
    r.close_delimited = true;
    r.body = std::string(req.path == "/big" ? 64 << 20 : (1 << 20), 'x');
    return r;
  });
  HttpClient client;
  HttpRequest r;
  r.url = server.url("/big");
  r.max_response_bytes = 1 << 20;
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse big = client.send(r);
  EXPECT_TRUE(big.too_large);
  EXPECT_EQ(big.transport_error, "reply larger than 1048576 bytes; raise max_response_bytes");
  EXPECT_TRUE(big.body.empty());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  // Exactly the limit is accepted.
  r.url = server.url("/limit");
  const HttpResponse limit = client.send(r);
  EXPECT_EQ(limit.status, 200);
  EXPECT_FALSE(limit.too_large);
  EXPECT_EQ(limit.body.size(), std::size_t{1} << 20);
}

TEST(Drive, RepliesAreRedactedBeforeTheyAreReadAndRecorded) {
  // A server that echoes the key in a 401 and in an answer: the store keeps none of it, and
  // the reader already saw "[redacted]".
  const std::string key = "sk-drive-test-0123456789";
  Server server([&](const Request& req) {
    Response r;
    const std::string auth = req.header("authorization");
    r.status = req.body == "a" ? 401 : 200;
    r.body = req.body == "a" ? R"({"error":{"message":")" + auth + R"("}})"
                             : chat_answer("you sent " + auth);
    return r;
  });
  RunStore store(fresh_store(), "fp");
  store.add({{"a", "a"}, {"b", "b"}});
  std::vector<std::string> seen;
  std::mutex mutex;
  DriveOptions options;
  options.concurrency = 1;
  options.redact.add(key);
  const BuildRequest build = [&](const std::string&, const std::string& body) {
    HttpRequest h;
    h.url = server.url("/");
    h.body = body;
    h.headers = {{"Authorization", "Bearer " + key}};
    return h;
  };
  const ReadResponse read = [&](const std::string& k, const std::string& request,
                                const HttpResponse& r) {
    std::lock_guard lock(mutex);
    seen.push_back(r.body);
    if (r.status == 401) return Verdict{RequestStatus::Failed, "", "HTTP 401: " + r.body};
    return read_chat(k, request, r);
  };
  const DriveSummary s = drive(store, build, read, options);
  EXPECT_EQ(s.done, 1u);
  EXPECT_EQ(s.failed, 1u);
  for (const auto& body : seen) EXPECT_EQ(body.find(key), std::string::npos) << body;
  std::size_t marks = 0;
  store.for_each([&](const RequestRecord& rec) {
    EXPECT_EQ(rec.error.find(key), std::string::npos) << rec.error;
    EXPECT_EQ(rec.response.find(key), std::string::npos) << rec.response;
    marks += (rec.error + rec.response).find("Bearer [redacted]") != std::string::npos;
  });
  EXPECT_EQ(marks, 2u);
}

}  // namespace in_driver_test
}  // namespace
}  // namespace vlbias
