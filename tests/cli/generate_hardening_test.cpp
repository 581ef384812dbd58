// The generate commands against hostile servers and careless specs (issue 19): a reply nested
// 150,000 levels deep, a server that echoes the API key (and a key in the URL's query) in its
// error messages, replies far larger than the request can return, and numbers out of range in
// specs and on the command line. Each case ends the one request Failed with a one-line error
// (the run going on and resuming), or the command with a usage error naming the key.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"
#include "vlbias/io/base64.h"

namespace vlbias {
namespace {
namespace in_generate_hardening_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using test_http::Request;
using test_http::Response;
using test_http::Server;
using namespace generate_test;  // NOLINT: the shared fixtures

// A chat completion whose message content is `depth` arrays deep.
std::string deep_chat_answer(std::size_t depth) {
  return R"({"choices":[{"message":{"role":"assistant","content":)" + std::string(depth, '[') +
         std::string(depth, ']') + "}}]}";
}

// The request key the chat server sees: "<image file>|<prompt name>|<seed>".
std::string chat_key(const ChatCall& c) {
  return fmt::format("{}|{}|{}", c.image, c.prompt == kPrompts[0] ? "describe" : "job",
                     c.body.value("seed", 99));
}

std::string lvlm_args(const fs::path& dir, const std::string& extra = "") {
  return fmt::format("--quiet generate lvlm '{}' --out '{}' {}", (dir / "spec.yaml").string(),
                     (dir / "run").string(), extra);
}

TEST(GenerateHostileServer, AReplyNestedTooDeeplyFailsThatRequestAndTheRunGoesOnAndResumes) {
  ImageIndex images;
  Server server([&](const Request& req) {
    const std::string key = chat_key(parse_chat(req, images));
    // 150,000 levels: a recursive copy or dump of such a tree overflows the stack.
    if (key == "jpg_420.jpg|describe|0") return reply(200, deep_chat_answer(150'000));
    if (key == "jpg_420.jpg|describe|1") {
      return reply(400, R"({"error":{"message":)" + std::string(150'000, '[') + "}}");
    }
    return reply(200, chat_answer("fine"));
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  // max_tokens 2000 lets a 300 KB reply pass the size limit (64 KiB + 256 x 2000 bytes): the
  // depth limit is what stops it here.
  std::string spec = read_file(dir / "spec.yaml");
  spec.replace(spec.find("max_tokens: 64"), 14, "max_tokens: 2000");
  write(dir / "spec.yaml", spec);
  const std::string args = lvlm_args(dir);
  const auto r = run_with_key(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["store"]["done"], 22);
  EXPECT_EQ(summary["store"]["failed"], 2);
  auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  const json& deep = rows.at("img1|describe|0");
  EXPECT_EQ(deep["status"], "failed");
  EXPECT_EQ(deep["attempts"], 1);  // not retried: the same server would send it again
  EXPECT_EQ(deep["error"], "malformed response: JSON nested deeper than 256 levels");
  EXPECT_EQ(rows.at("img1|describe|1")["error"], "HTTP 400");
  EXPECT_EQ(read_jsonl(dir / "run/generations.jsonl").size(), 22u);

  // Resuming exports again; retrying the failed rows meets the same replies and fails them
  // again, and the run still completes.
  const auto resumed = run_with_key(args + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const std::size_t before = server.requests();
  const auto retried = run_with_key(args + " --resume --retry-failed");
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(server.requests(), before + 2);
  EXPECT_EQ(json::parse(retried.out)["store"]["failed"], 2);
  rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("img1|describe|0")["attempts"], 2);
}

// ------------------------------------------------------------------ keys echoed back

constexpr const char* kQuerySecret = "qk-IN-THE-URL-77aa3b";

TEST(GenerateHostileServer, AKeyEchoedByTheServerOrGivenInTheUrlIsInNoFileAndNoOutput) {
  ImageIndex images;
  std::mutex mutex;
  std::map<std::string, int> calls;
  Server server([&](const Request& req) {
    const std::string key = chat_key(parse_chat(req, images));
    int n;
    {
      std::lock_guard lock(mutex);
      n = ++calls[key];
    }
    // What a careless server says back: the Authorization header and the URL it was sent to.
    const std::string echo = fmt::format("Incorrect API key provided: {}; request {}",
                                         req.header("authorization"), req.path);
    auto error = [](int status, const json& e) { return reply(status, json{{"error", e}}.dump()); };
    if (key == "jpg_1x1.jpg|describe|0")
      return error(401, {{"message", echo}, {"type", "invalid_request_error"}});
    // The key across the 300-byte cut of a stored message: not even a prefix may remain.
    if (key == "jpg_1x1.jpg|describe|1")
      return error(400, {{"message", std::string(250, '.') + echo}});
    // A content-filter block quoting it (stored as the refusal's response).
    if (key == "jpg_420.jpg|describe|0")
      return error(400, {{"code", "content_filter"}, {"message", echo}});
    // A retried 429 quoting it, then the answer.
    if (key == "jpg_420.jpg|describe|1" && n == 1) return error(429, {{"message", echo}});
    // An answer that repeats it (generations.jsonl).
    if (key == "jpg_422.jpg|describe|0") return reply(200, chat_answer(echo));
    return reply(200, chat_answer("fine"));
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  std::string spec = read_file(dir / "spec.yaml");
  const std::string path = "/v1/chat/completions";
  spec.replace(spec.find(path), path.size(), path + "?api-key=" + kQuerySecret);
  write(dir / "spec.yaml", spec);
  const auto r = run_with_key(lvlm_args(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("img0|describe|0")["error"],
            "HTTP 401: Incorrect API key provided: Bearer [redacted]; request "
            "/v1/chat/completions?api-key=[redacted]");
  EXPECT_EQ(rows.at("img1|describe|0")["status"], "refused");
  EXPECT_NE(
      rows.at("img1|describe|0")["response"]["error"].get<std::string>().find("Bearer [redacted]"),
      std::string::npos);
  EXPECT_EQ(rows.at("img1|describe|1")["status"], "done");
  EXPECT_EQ(rows.at("img2|describe|0")["response"]["text"],
            "Incorrect API key provided: Bearer [redacted]; request "
            "/v1/chat/completions?api-key=[redacted]");
  // run.json keeps the spec as given, the key's value excepted.
  const json run = json::parse(read_file(dir / "run/run.json"));
  EXPECT_NE(run["spec"].get<std::string>().find(path + "?api-key=[redacted]"), std::string::npos);
  EXPECT_EQ(run["endpoint"]["url"], server.url(path));
  expect_no_secret(dir / "run", r, {kSecret, kQuerySecret, std::string(kSecret).substr(0, 12)});
}

// README promises every query value redacted: a 7-byte key too (it was once kept verbatim in
// run.json's copy of the spec, below an 8-byte threshold).
TEST(GenerateHostileServer, AQueryValueShorterThanEightBytesIsInNoFileAndNoOutput) {
  ImageIndex images;
  Server server([&](const Request& req) {
    const std::string key = chat_key(parse_chat(req, images));
    if (key == "jpg_1x1.jpg|describe|0")
      return reply(401, json{{"error", {{"message", "bad key in " + req.path}}}}.dump());
    return reply(200, chat_answer("fine"));
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  std::string spec = read_file(dir / "spec.yaml");
  const std::string path = "/v1/chat/completions";
  spec.replace(spec.find(path), path.size(), path + "?api_key=QSECRET");
  write(dir / "spec.yaml", spec);
  const auto r = run_with_key(lvlm_args(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("img0|describe|0")["error"],
            "HTTP 401: bad key in /v1/chat/completions?api_key=[redacted]");
  const json run = json::parse(read_file(dir / "run/run.json"));
  EXPECT_NE(run["spec"].get<std::string>().find(path + "?api_key=[redacted]"), std::string::npos)
      << run["spec"];
  expect_no_secret(dir / "run", r, {kSecret, "QSECRET"});
}

// endpoint.url_env: the URL (its query holding a key) from the environment, never in the spec;
// the requests go to it, query included; an unset variable or both keys are usage errors that
// name the variable, never the URL.
TEST(GenerateSpecs, AnEndpointUrlFromTheEnvironmentIsUsedAndWrittenNowhere) {
  std::mutex mutex;
  std::set<std::string> paths;
  Server server([&](const Request& req) {
    {
      std::lock_guard lock(mutex);
      paths.insert(req.path);
    }
    return reply(200, chat_answer("fine"));
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  std::string spec = read_file(dir / "spec.yaml");
  const std::string url_line = "url: " + server.url("/v1/chat/completions");
  spec.replace(spec.find(url_line), url_line.size(), "url_env: VLBIAS_TEST_URL");
  write(dir / "spec.yaml", spec);
  const std::string url = server.url("/v1/chat/completions?api-version=2024-02-01&k=QSECRET");
  const std::string env = std::string("VLBIAS_TEST_API_KEY=") + kSecret +
                          " VLBIAS_TEST_URL=" + cli_util::shell_quote(url);
  const auto r = run_cli(lvlm_args(dir), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(paths, std::set<std::string>{"/v1/chat/completions?api-version=2024-02-01&k=QSECRET"});
  const json run = json::parse(read_file(dir / "run/run.json"));
  EXPECT_EQ(run["endpoint"]["url"], server.url("/v1/chat/completions"));
  expect_no_secret(dir / "run", r, {kSecret, "QSECRET", "2024-02-01"});

  fs::remove_all(dir / "run");
  const auto unset = run_with_key(lvlm_args(dir));
  EXPECT_EQ(unset.exit_code, 2);
  EXPECT_NE(unset.err.find("endpoint.url_env names the variable 'VLBIAS_TEST_URL', which is not "
                           "set (or empty)"),
            std::string::npos)
      << unset.err;
  const auto bad = run_cli(lvlm_args(dir), "VLBIAS_TEST_URL=ftp://x.test/QSECRET");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("the URL in the variable VLBIAS_TEST_URL (endpoint.url_env) must start "
                         "with http:// or https://"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.err.find("QSECRET"), std::string::npos) << bad.err;
  spec.replace(spec.find("url_env:"), 0, url_line + "\n  ");
  write(dir / "spec.yaml", spec);
  const auto both = run_cli(lvlm_args(dir), env);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("endpoint.url_env cannot be given with endpoint.url"), std::string::npos)
      << both.err;
}

TEST(ScorePerspective, AKeyInTheUrlQueryEchoedByTheServerIsInNoFile) {
  Server server([](const Request& req) {
    // Google's shape, quoting the key it was given in ?key=.
    const std::string key = req.path.substr(req.path.find("key=") + 4);
    return reply(400, json{{"error",
                            {{"code", 400},
                             {"message", "API key not valid. Please pass a valid API key: " + key},
                             {"status", "INVALID_ARGUMENT"}}}}
                          .dump());
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write(dir / "texts.jsonl", "{\"text\": \"a calm doctor\"}\n{\"text\": \"a tall nurse\"}\n");
  const auto r =
      run_cli(fmt::format("score perspective '{}' --out '{}' --key-env '' --max-qps 0 "
                          "--url '{}'",
                          (dir / "texts.jsonl").string(), (dir / "run").string(),
                          server.url("/v1alpha1/comments:analyze?key=") + kQuerySecret));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto scored = read_jsonl(dir / "run/scored.jsonl");
  ASSERT_EQ(scored.size(), 2u);
  EXPECT_EQ(scored[0]["perspective_error"],
            "HTTP 400: API key not valid. Please pass a valid API key: [redacted]");
  expect_no_secret(dir / "run", r, {kQuerySecret});
}

// ------------------------------------------------------------------ reply size

TEST(GenerateHostileServer, RepliesLargerThanTheRequestCanReturnFailAtOnceNamingTheLimit) {
  // max_tokens 64: 64 KiB + 256 x 64 = 81,920 bytes (generate.h).
  constexpr std::size_t kLimit = 81'920;
  const std::size_t around = chat_answer("").size();
  ImageIndex images;
  Server server([&](const Request& req) {
    const std::string key = chat_key(parse_chat(req, images));
    // Twelve of these (200 MB each) once became 7.1 GB of disk and 2.1 GB of memory.
    if (key == "jpg_1x1.jpg|describe|0") return reply(200, chat_answer(std::string(400'000, 'a')));
    if (key == "jpg_1x1.jpg|describe|1")
      return reply(200, chat_answer(std::string(kLimit - around, 'b')));  // exactly the limit
    return reply(200, chat_answer("fine"));
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_lvlm_spec(dir, server);
  const auto r = run_with_key(lvlm_args(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("img0|describe|0")["status"], "failed");
  EXPECT_EQ(rows.at("img0|describe|0")["attempts"], 1);
  EXPECT_EQ(rows.at("img0|describe|0")["error"],
            "reply larger than 81920 bytes; raise max_response_bytes");
  EXPECT_EQ(rows.at("img0|describe|1")["status"], "done");
  EXPECT_EQ(json::parse(r.out)["store"]["done"], 23);
  // Raised on the command line, the same reply is accepted.
  const auto raised =
      run_with_key(lvlm_args(dir, "--resume --retry-failed --max-response-bytes 500000"));
  ASSERT_EQ(raised.exit_code, 0) << raised.err;
  EXPECT_EQ(json::parse(raised.out)["store"]["done"], 24);

  // t2i: 1 MiB + 6 x 64 x 64 = 1,073,152 bytes for a 64 x 64 sd-webui image.
  const std::string png = base64_encode(read_file(kImages / "png_1x1.png"));
  Server sd([&](const Request& req) {
    const bool car = json::parse(req.body)["prompt"] == "a photo of a car in Europe";
    return reply(200, json{{"images", {car ? std::string(1'100'000, 'A') : png}}}.dump());
  });
  write_prompts(dir);
  write(dir / "t2i.yaml", fmt::format(R"(version: 1
kind: generate-t2i
endpoint: {{api: sd-webui, url: "{}"}}
prompts: prompts.csv
sd_webui: {{width: 64, height: 64}}
)",
                                      sd.url("/sdapi/v1/txt2img")));
  fs::remove_all(dir / "t2i");
  const auto t2i = run_cli(fmt::format("--quiet generate t2i '{}' --out '{}'",
                                       (dir / "t2i.yaml").string(), (dir / "t2i").string()));
  ASSERT_EQ(t2i.exit_code, 0) << t2i.err;
  rows = by_key(read_jsonl(dir / "t2i/requests.jsonl"));
  EXPECT_EQ(rows.at("1|0")["error"], "reply larger than 1073152 bytes; raise max_response_bytes");
  EXPECT_EQ(rows.at("1|0")["attempts"], 1);
  EXPECT_EQ(rows.at("0|0")["status"], "done");

  // Perspective: 1 MiB.
  Server perspective([](const Request&) { return reply(200, std::string(2 << 20, ' ')); });
  write(dir / "texts.jsonl", "{\"text\": \"a calm doctor\"}\n");
  fs::remove_all(dir / "scored");
  const auto scored = run_cli(
      fmt::format("--quiet score perspective '{}' --out '{}' --url '{}' --max-qps 0",
                  (dir / "texts.jsonl").string(), (dir / "scored").string(), perspective.url("/a")),
      "PERSPECTIVE_API_KEY=k");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_EQ(read_jsonl(dir / "scored/scored.jsonl")[0]["perspective_error"],
            "reply larger than 1048576 bytes; raise max_response_bytes");
}

// ------------------------------------------------------------------ numbers out of range

TEST(GenerateSpecs, NumbersOutOfTheirRangeAreUsageErrorsNamingTheKeyAndTheRange) {
  Server server([](const Request&) { return reply(200, chat_answer("ok")); });
  const fs::path dir = temp_dir();
  const std::string base = read_file(write_lvlm_spec(dir, server));
  auto expect_error = [&](const std::string& spec, const std::string& extra,
                          const std::vector<std::string>& needles) {
    SCOPED_TRACE(extra + "\n" + spec);
    write(dir / "bad.yaml", spec);
    fs::remove_all(dir / "run");
    const auto r =
        run_with_key(fmt::format("--quiet generate lvlm '{}' --out '{}' {}",
                                 (dir / "bad.yaml").string(), (dir / "run").string(), extra));
    EXPECT_EQ(r.exit_code, 2);
    for (const auto& needle : needles) EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_error(replaced("max_attempts: 4", "max_attempts: 100000000000"), "",
               {"requests.max_attempts", "from 1 to 1000", "100000000000"});
  expect_error(replaced("max_attempts: 4", "max_attempts: 1e11"), "",
               {"requests.max_attempts", "from 1 to 1000"});
  expect_error(replaced("concurrency: 4", "concurrency: 4, max_qps: 1e-300"), "",
               {"requests.max_qps", "0 (no limit) or between 0.001 and 1000000", "1e-300"});
  expect_error(replaced("concurrency: 4", "concurrency: 100000000"), "",
               {"requests.concurrency", "from 1 to 1024"});
  expect_error(replaced("base_delay_s: 0.01", "base_delay_s: 1e300"), "",
               {"requests.base_delay_s", "between 0 and 3600"});
  expect_error(replaced("max_delay_s: 0.05", "max_delay_s: .inf"), "", {"requests.max_delay_s"});
  expect_error(replaced("timeout_s: 1", "timeout_s: 1e-300"), "",
               {"endpoint.timeout_s", "between 0.001 and 86400"});
  expect_error(replaced("max_tokens: 64", "max_tokens: 1000000000"), "",
               {"sampling.max_tokens", "from 1 to 1048576"});
  expect_error(replaced("concurrency: 4", "concurrency: 4, max_response_bytes: 10"), "",
               {"requests.max_response_bytes", "from 1024 to 1073741824"});
  // The command-line overrides.
  expect_error(base, "--max-qps 1e-300", {"--max-qps", "0 (no limit) or between 0.001"});
  expect_error(base, "--concurrency 100000", {"--concurrency"});
  expect_error(base, "--max-response-bytes 10", {"--max-response-bytes"});
  EXPECT_EQ(server.requests(), 0u);

  // t2i's image parameters.
  write_prompts(dir);
  auto expect_t2i_error = [&](const std::string& body, const std::string& needle) {
    SCOPED_TRACE(body);
    write(dir / "t2i.yaml", "version: 1\nkind: generate-t2i\nprompts: prompts.csv\n" + body);
    fs::remove_all(dir / "run");
    const auto r = run_cli(fmt::format("--quiet generate t2i '{}' --out '{}'",
                                       (dir / "t2i.yaml").string(), (dir / "run").string()));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  };
  const std::string sd = "endpoint: {api: sd-webui, url: \"" + server.url("/") + "\"}\n";
  const std::string openai = "endpoint: {api: openai-images, url: \"" + server.url("/") + "\"}\n";
  expect_t2i_error(sd + "sd_webui: {width: 100000}\n", "sd_webui.width must be an integer from 8");
  expect_t2i_error(sd + "sd_webui: {steps: 0}\n", "sd_webui.steps");
  expect_t2i_error(sd + "sd_webui: {cfg_scale: 1e300}\n", "sd_webui.cfg_scale");
  expect_t2i_error(sd + "images_per_prompt: 1000000000\n", "images_per_prompt");
  expect_t2i_error(openai + "openai: {size: huge}\n", "openai.size must be WIDTHxHEIGHT");
  EXPECT_EQ(server.requests(), 0u);

  // Perspective's options.
  write(dir / "texts.jsonl", "{\"text\": \"x\"}\n");
  for (const char* option : {"--timeout 1e-300", "--max-qps 1e-300", "--max-attempts 0"}) {
    fs::remove_all(dir / "run");
    const auto r = run_cli(fmt::format("score perspective '{}' --out '{}' --url '{}' {}",
                                       (dir / "texts.jsonl").string(), (dir / "run").string(),
                                       server.url("/"), option),
                           "PERSPECTIVE_API_KEY=k");
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_NE(r.err.find(std::string(option).substr(0, std::string(option).find(' '))),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(server.requests(), 0u);
}

}  // namespace in_generate_hardening_test
}  // namespace
}  // namespace vlbias
