// `vlbias score moderation` and `vlbias score judge`, run as the real executable against
// in-process servers on 127.0.0.1 speaking OpenAI's moderations and chat completions, with the
// faults the other drivers survive: 429 and 5xx (retried), dropped connections, malformed and
// out-of-range replies (retried), replies nested too deeply or larger than the limit and 4xx
// (failed once), a server echoing the key, refusals, answers no parser can read, kill -9.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"

namespace vlbias {
namespace {
namespace in_score_endpoints_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using namespace generate_test;  // NOLINT: the shared fixtures

// A reply `depth` arrays deep, and one larger than any limit of these tests.
std::string deep_reply(std::size_t depth) {
  return R"({"results":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

// Counts the calls per text, under the server's threads.
struct Calls {
  std::mutex mutex;
  std::map<std::string, int> n;
  std::vector<std::string> problems;
  int next(const std::string& text) {
    std::lock_guard lock(mutex);
    return ++n[text];
  }
  void problem(const std::string& what) {
    std::lock_guard lock(mutex);
    problems.push_back(what);
  }
};

// ------------------------------------------------------------------ moderation

std::string moderation_answer(const std::string& text, bool extra = false, double bad = -1) {
  json scores = {{"harassment", text.size() / 100.0},
                 {"harassment/threatening", bad >= 0 ? bad : 0.01},
                 {"self-harm", 0.5}};
  if (extra) scores["illicit"] = 0.25;
  return json{{"id", "modr-1"},
              {"model", "omni-moderation-2024-09-26"},
              {"results",
               {{{"flagged", text.size() > 10},
                 {"categories", {{"harassment", false}}},
                 {"category_scores", scores}}}}}
      .dump();
}

// The moderation server of the fault test: a fault per text, on the first call (transient) or
// on every call until `healed` (permanent).
Response moderation_reply(const Request& req, Calls& calls, const bool& healed) {
  const json b = json::parse(req.body);
  const std::string text = b.value("input", "");
  const int n = calls.next(text);
  if (req.path != "/v1/moderations") calls.problem("path " + req.path);
  if (req.header("authorization") != std::string("Bearer ") + kSecret) calls.problem("key");
  if (b.value("model", "") != "omni-moderation-latest") calls.problem("body " + req.body);
  if (text == "server error" && n == 1) return reply(500, "oops");
  if (text == "busy" && n == 1) {
    Response r = reply(429, R"({"error":{"message":"Rate limit reached"}})");
    r.headers = {{"Retry-After", "0"}};
    return r;
  }
  if (text == "garbled" && n == 1) return reply(200, "{\"results\": [");
  if (text == "out of range" && n == 1) return reply(200, moderation_answer(text, false, 1.5));
  if (text == "dropped" && n == 1) {
    Response r;
    r.drop = true;
    return r;
  }
  if (!healed) {
    if (text == "deep") return reply(200, deep_reply(150'000));
    if (text == "huge") return reply(200, std::string(2 << 20, ' '));
    if (text == "too long") return reply(400, R"({"error":{"message":"input too long"}})");
    if (text == "echo") {
      return reply(
          401, json{{"error", {{"message", "Incorrect API key: " + req.header("authorization")}}}}
                   .dump());
    }
  }
  return reply(200, moderation_answer(text, text == "extra"));
}

const char* const kModerationTexts[] = {
    "a calm doctor", "",      "server error", "busy", "garbled",  "out of range",
    "dropped",       "extra", "deep",         "huge", "too long", "echo"};

fs::path write_texts(const fs::path& dir, const std::vector<std::string>& texts,
                     const std::string& name = "texts.jsonl") {
  std::string jsonl;
  for (std::size_t i = 0; i < texts.size(); ++i)
    jsonl += json{{"id", i}, {"group", i % 2 ? "B" : "A"}, {"text", texts[i]}}.dump() + "\n";
  write(dir / name, jsonl);
  return dir / name;
}

std::string moderation_args(const fs::path& dir, const Server& server,
                            const std::string& extra = "") {
  return fmt::format(
      "--quiet score moderation '{}' --out '{}' --endpoint '{}' --model omni-moderation-latest "
      "--api-key-env VLBIAS_TEST_API_KEY --timeout 2 {}",
      (dir / "texts.jsonl").string(), (dir / "run").string(), server.url("/v1/moderations"), extra);
}

TEST(ScoreModeration, EveryFaultEndsInTheStoreOnceAndEveryRowIsKeptWithItsScorer) {
  Calls calls;
  bool healed = false;
  Server server([&](const Request& req) { return moderation_reply(req, calls, healed); });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_texts(dir, {std::begin(kModerationTexts), std::end(kModerationTexts)});
  const auto r = run_with_key(moderation_args(dir, server));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(calls.problems.empty()) << calls.problems.front();
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["kind"], "score-moderation");
  EXPECT_EQ(summary["store"]["done"], 7);
  EXPECT_EQ(summary["store"]["failed"], 4);
  EXPECT_EQ(summary["exported"], 7);
  auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.size(), 11u);  // the empty text is never sent
  for (const char* k : {"2", "3", "4", "5"}) EXPECT_EQ(rows.at(k)["attempts"], 2) << k;
  // The dropped connection: libcurl re-sends once by itself when the connection it reused dies
  // without an answer, so our count is 1 or 2; the server saw the text twice either way.
  const int dropped_attempts = rows.at("6")["attempts"];
  EXPECT_TRUE(dropped_attempts == 1 || dropped_attempts == 2) << dropped_attempts;
  EXPECT_EQ(calls.n["dropped"], 2);
  EXPECT_EQ(rows.at("8")["attempts"], 1);  // too deep: not retried
  EXPECT_EQ(rows.at("8")["error"], "malformed response: JSON nested deeper than 256 levels");
  EXPECT_EQ(rows.at("9")["error"], "reply larger than 1048576 bytes; raise max_response_bytes");
  EXPECT_EQ(rows.at("10")["error"], "HTTP 400: input too long");
  EXPECT_EQ(rows.at("11")["error"], "HTTP 401: Incorrect API key: Bearer [redacted]");

  const auto scored = read_jsonl(dir / "run/scored.jsonl");
  ASSERT_EQ(scored.size(), 12u);
  // The input's columns, then the categories' union in first-seen order, then the rest.
  std::vector<std::string> keys;
  const std::string first = read_file(dir / "run/scored.jsonl");
  const auto line = nlohmann::ordered_json::parse(first.substr(0, first.find('\n')));
  for (const auto& item : line.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"group", "id", "text", "harassment",
                                            "harassment_threatening", "self_harm", "illicit",
                                            "flagged", "moderation_error", "scorer"}));
  const std::string url = server.url("/v1/moderations");
  EXPECT_DOUBLE_EQ(scored[0]["harassment"].get<double>(), 0.13);
  EXPECT_DOUBLE_EQ(scored[0]["harassment_threatening"].get<double>(), 0.01);
  EXPECT_TRUE(scored[0]["illicit"].is_null());  // a category this reply lacks
  EXPECT_EQ(scored[0]["flagged"], true);
  EXPECT_TRUE(scored[0]["moderation_error"].is_null());
  EXPECT_EQ(scored[0]["scorer"], "moderation " + url + " model=omni-moderation-2024-09-26");
  EXPECT_EQ(scored[1]["moderation_error"], "empty text");
  EXPECT_TRUE(scored[1]["harassment"].is_null());
  EXPECT_TRUE(scored[1]["flagged"].is_null());
  EXPECT_EQ(scored[1]["scorer"], "moderation " + url + " model=omni-moderation-latest");
  EXPECT_DOUBLE_EQ(scored[5]["harassment_threatening"].get<double>(), 0.01);  // the retry's
  EXPECT_DOUBLE_EQ(scored[7]["illicit"].get<double>(), 0.25);
  EXPECT_EQ(scored[7]["flagged"], false);
  EXPECT_EQ(scored[10]["moderation_error"], "HTTP 400: input too long");
  const json run = json::parse(read_file(dir / "run/run.json"));
  EXPECT_EQ(run["endpoint"]["model"], "omni-moderation-latest");
  EXPECT_EQ(run["endpoint"]["served_models"], json{"omni-moderation-2024-09-26"});
  expect_no_secret(dir / "run", r);

  // Healed, the failed rows are sent again and only they.
  healed = true;
  const std::size_t before = server.requests();
  const auto again = run_with_key(moderation_args(dir, server, "--resume --retry-failed"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.requests(), before + 4);
  EXPECT_EQ(json::parse(again.out)["store"]["done"], 11);
  EXPECT_EQ(read_jsonl(dir / "run/scored.jsonl")[8]["moderation_error"], nullptr);
}

TEST(ScoreModeration, ColumnsTheOutputAddsAreRefusedBeforeOrWhenARepliesNamesThem) {
  Server server([](const Request&) {
    return reply(
        200,
        json{{"results",
              {{{"flagged", false}, {"category_scores", {{"Custom Label", 0.5}, {"hate", 0.1}}}}}}}
            .dump());
  });
  const fs::path dir = temp_dir();
  auto run = [&](const std::string& jsonl, const std::string& extra = "") {
    write(dir / "texts.jsonl", jsonl);
    return run_with_key(moderation_args(dir, server, extra));
  };
  for (const char* column : {"flagged", "moderation_error", "scorer", "self_harm", "hate"}) {
    SCOPED_TRACE(column);
    fs::remove_all(dir / "run");
    const auto r = run(json{{"text", "x"}, {column, 1}}.dump() + "\n");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(fmt::format("column '{}'", column)), std::string::npos) << r.err;
  }
  EXPECT_EQ(server.requests(), 0u);
  // A category only a reply names: refused at export, the replies kept for a resume.
  fs::remove_all(dir / "run");
  auto r = run(R"({"text": "x", "custom_label": 1})"
               "\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("category 'custom_label'"), std::string::npos) << r.err;
  EXPECT_EQ(server.requests(), 1u);
  r = run(R"({"text": "x", "my_label": 1})"
          "\n",
          "--resume");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.requests(), 1u);
  EXPECT_EQ(read_jsonl(dir / "run/scored.jsonl")[0]["custom_label"], 0.5);
  // A URL that is none, and no --endpoint at all.
  fs::remove_all(dir / "run");
  r = run_cli(fmt::format("score moderation '{}' --out '{}' --endpoint ftp://x",
                          (dir / "texts.jsonl").string(), (dir / "run").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--endpoint must be an http:// or https:// URL"), std::string::npos);
  r = run_cli(fmt::format("score moderation '{}' --out '{}'", (dir / "texts.jsonl").string(),
                          (dir / "run").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--endpoint"), std::string::npos) << r.err;
}

// A run resumed on a table shorter than the one it scored names the rows it lacks (it once
// wrote past the end of the rows' vector).
TEST(ScorePerspective, AResumeOnAShorterTableIsAnInputErrorNamingTheRow) {
  Server server([](const Request&) {
    return reply(200, R"({"attributeScores":{"TOXICITY":{"summaryScore":{"value":0.5}}}})");
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  auto run = [&](const std::vector<std::string>& texts, const std::string& extra) {
    write_texts(dir, texts);
    return run_cli(
        fmt::format("--quiet score perspective '{}' --out '{}' --url '{}' --max-qps 0 {}",
                    (dir / "texts.jsonl").string(), (dir / "run").string(), server.url("/analyze"),
                    extra),
        "PERSPECTIVE_API_KEY=k");
  };
  auto r = run({"a", "b", "c", "d"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_jsonl(dir / "run/scored.jsonl")[0]["scorer"],
            "perspective " + server.url("/analyze") + " attributes=TOXICITY");
  r = run({"a", "b"}, "--resume");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the run store holds request '2', which is no row of"), std::string::npos)
      << r.err;
}

// ------------------------------------------------------------------ judge

// The text a judge request carries: the user message after "GROUP: ".
std::string judged_text(const json& body) {
  const std::string content = body["messages"].back()["content"];
  const auto colon = content.find(": ");
  return colon == std::string::npos ? content : content.substr(colon + 2);
}

fs::path write_judge_spec(const fs::path& dir, const Server& server, const std::string& parser,
                          const std::string& extra = "") {
  write(dir / "judge.yaml", fmt::format(R"(version: 1
kind: score-judge
endpoint: {{url: "{}", model: llama-guard3:8b, api_key_env: VLBIAS_TEST_API_KEY, timeout_s: 2}}
prompt: "Classify.\n{{group}}: {{text}}"
{}
sampling: {{temperature: 0, max_tokens: 16, seed: 7}}
requests: {{concurrency: 4, max_attempts: 4, base_delay_s: 0.01, max_delay_s: 0.05}}
{})",
                                        server.url("/v1/chat/completions"), parser, extra));
  return dir / "judge.yaml";
}

std::string judge_args(const fs::path& dir, const std::string& extra = "") {
  return fmt::format("--quiet score judge '{}' '{}' --out '{}' {}", (dir / "texts.jsonl").string(),
                     (dir / "judge.yaml").string(), (dir / "run").string(), extra);
}

Response guard_reply(const Request& req, Calls& calls) {
  const json b = json::parse(req.body);
  const std::string text = judged_text(b);
  const int n = calls.next(text);
  if (req.header("authorization") != std::string("Bearer ") + kSecret) calls.problem("key");
  if (b["model"] != "llama-guard3:8b" || b["temperature"] != 0 || b["max_tokens"] != 16 ||
      b["seed"] != 7 || b["messages"].size() != 1 || b["messages"][0]["role"] != "user")
    calls.problem("body " + req.body);
  if (text == "flaky" && n == 1) return reply(503, "down");
  if (text == "busy" && n == 1) return reply(429, R"({"error":{"message":"slow down"}})");
  if (text == "garbled" && n == 1) return reply(200, "{\"choices\": [");
  if (text == "deep") return reply(200, deep_reply(1000));  // 2 KB: under the size limit
  if (text == "huge") return reply(200, chat_answer(std::string(100'000, 'x')));
  if (text == "blocked")
    return reply(400, R"({"error":{"code":"content_filter","message":"blocked"}})");
  if (text == "echo")
    return reply(401, json{{"error", {{"message", req.header("authorization")}}}}.dump());
  if (text == "threat") return reply(200, chat_answer("unsafe\nS1,S10"));
  if (text == "vague") return reply(200, chat_answer("unsafe"));
  if (text == "chatty") return reply(200, chat_answer("The answer is safe"));
  return reply(200, chat_answer(" safe\n"));
}

TEST(ScoreJudge, LlamaGuardAnswersFaultsAndUnparseableAnswersAreEachRecorded) {
  Calls calls;
  Server server([&](const Request& req) { return guard_reply(req, calls); });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_texts(dir, {"kind words", "threat", "vague", "chatty", "blocked", "flaky", "busy",
                    "garbled", "deep", "huge", "", "echo"});
  write_judge_spec(dir, server, "parser: llama-guard");
  const auto r = run_with_key(judge_args(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(calls.problems.empty()) << calls.problems.front();
  EXPECT_EQ(calls.n["kind words"], 1);
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["store"]["done"], 7);
  EXPECT_EQ(summary["store"]["refused"], 1);
  EXPECT_EQ(summary["store"]["failed"], 3);
  EXPECT_EQ(summary["exported"], 6);  // done and read: the chatty answer is not
  const auto rows = by_key(read_jsonl(dir / "run/requests.jsonl"));
  EXPECT_EQ(rows.at("0")["request"]["prompt"], "Classify.\nA: kind words");
  EXPECT_EQ(rows.at("8")["attempts"], 1);
  EXPECT_EQ(rows.at("9")["error"], "reply larger than 69632 bytes; raise max_response_bytes");

  const auto s = read_jsonl(dir / "run/scored.jsonl");
  ASSERT_EQ(s.size(), 12u);
  const std::string scorer = "judge " + server.url("/v1/chat/completions");
  EXPECT_EQ(s[0]["unsafe"], 0.0);
  EXPECT_EQ(s[0]["judge_categories"], "");
  EXPECT_EQ(s[0]["judge_raw"], " safe\n");
  EXPECT_TRUE(s[0]["judge_error"].is_null());
  EXPECT_EQ(s[0]["scorer"], scorer + " model=tiny-llava parser=llama-guard");  // the served one
  EXPECT_EQ(s[1]["unsafe"], 1.0);
  EXPECT_EQ(s[1]["judge_categories"], "violent_crimes,hate");
  EXPECT_EQ(s[2]["unsafe"], 1.0);
  EXPECT_EQ(s[2]["judge_categories"], "");
  // Never guessed: unparseable, with what the judge said.
  EXPECT_TRUE(s[3]["unsafe"].is_null());
  EXPECT_TRUE(s[3]["judge_categories"].is_null());
  EXPECT_EQ(s[3]["judge_raw"], "The answer is safe");
  EXPECT_EQ(s[3]["judge_error"], "unparseable answer");
  EXPECT_TRUE(s[4]["unsafe"].is_null());
  EXPECT_EQ(s[4]["judge_error"], "refused: content_filter");
  for (std::size_t i : {5, 6, 7}) EXPECT_EQ(s[i]["unsafe"], 0.0) << i;  // retried, then read
  EXPECT_EQ(s[8]["judge_error"], "malformed response: JSON nested deeper than 256 levels");
  EXPECT_TRUE(s[8]["judge_raw"].is_null());
  EXPECT_EQ(s[8]["scorer"], scorer + " model=llama-guard3:8b parser=llama-guard");
  EXPECT_EQ(s[10]["judge_error"], "empty text");
  EXPECT_EQ(s[11]["judge_error"], "HTTP 401: Bearer [redacted]");
  const json run = json::parse(read_file(dir / "run/run.json"));
  EXPECT_EQ(run["endpoint"]["served_models"], json{"tiny-llava"});
  EXPECT_EQ(run["parameters"]["parser"], "llama-guard");
  expect_no_secret(dir / "run", r);
}

TEST(ScoreJudge, ScaleAnswersAreMappedToZeroOneWithTheRawNumberOrLeftUnparsed) {
  Server server([](const Request& req) {
    const json b = json::parse(req.body);
    if (b["messages"].size() != 2 || b["messages"][0]["content"] != "Be strict.")
      return reply(400, R"({"error":{"message":"no system message"}})");
    const std::string text = judged_text(b);
    const std::map<std::string, std::string> answers = {
        {"a", "7"}, {"b", "Score: 2/10"}, {"c", "between 3 and 4"}, {"d", "11"}, {"e", "0"}};
    return reply(200, chat_answer(answers.at(text)));
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  write_texts(dir, {"a", "b", "c", "d", "e"});
  write_judge_spec(dir, server, "parser: scale\nscale: {min: 0, max: 10}",
                   "system: \"Be strict.\"");
  const auto r = run_with_key(judge_args(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_jsonl(dir / "run/scored.jsonl");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_DOUBLE_EQ(s[0]["judge_score"].get<double>(), 0.7);
  EXPECT_EQ(s[0]["judge_number"], 7.0);
  EXPECT_DOUBLE_EQ(s[1]["judge_score"].get<double>(), 0.2);
  for (std::size_t i : {2, 3}) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(s[i]["judge_score"].is_null());
    EXPECT_TRUE(s[i]["judge_number"].is_null());
    EXPECT_EQ(s[i]["judge_error"], "unparseable answer");
  }
  EXPECT_EQ(s[3]["judge_raw"], "11");
  EXPECT_EQ(s[4]["judge_score"], 0.0);
  EXPECT_EQ(s[4]["scorer"],
            "judge " + server.url("/v1/chat/completions") + " model=tiny-llava parser=scale:0..10");
  EXPECT_FALSE(s[4].contains("unsafe"));
}

TEST(ScoreJudge, BadSpecsUnknownColumnsAndAddedColumnsAreUsageErrorsBeforeAnyRequest) {
  Server server([](const Request&) { return reply(200, chat_answer("safe")); });
  const fs::path dir = temp_dir();
  write_texts(dir, {"x"});
  auto expect_error = [&](const std::string& parser, const std::string& extra,
                          const std::string& needle) {
    SCOPED_TRACE(parser + " / " + extra);
    write_judge_spec(dir, server, parser, extra);
    fs::remove_all(dir / "run");
    const auto r = run_with_key(judge_args(dir));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  };
  expect_error("parser: llama-guard", "parserr: scale", "parserr");
  expect_error("parser: llama-guard", "tempreature: 0", "tempreature");
  expect_error("parser: judge", "", "parser");
  expect_error("parser: llama-guard", "scale: {min: 0, max: 10}", "applies to parser: scale");
  expect_error("parser: scale", "", "scale is required with parser: scale");
  expect_error("parser: scale\nscale: {min: 5, max: 5}", "", "min below max");
  expect_error("parser: scale\nscale: {min: 0, max: 10, step: 1}", "", "step");
  expect_error("parser: llama-guard\ntext_column: answer", "", "answer");
  std::string spec = read_file(write_judge_spec(dir, server, "parser: llama-guard"));
  spec.replace(spec.find("{group}"), 7, "{race}");
  write(dir / "judge.yaml", spec);
  fs::remove_all(dir / "run");
  auto r = run_with_key(judge_args(dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("{race} is neither {text} nor a column of"), std::string::npos) << r.err;
  write_judge_spec(dir, server, "parser: llama-guard");
  write(dir / "texts.jsonl", R"({"group": "A", "text": "x", "unsafe": 0})"
                             "\n");
  fs::remove_all(dir / "run");
  r = run_with_key(judge_args(dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("column 'unsafe'"), std::string::npos) << r.err;
  EXPECT_EQ(server.requests(), 0u);
}

TEST(ScoreJudge, KilledWithSigkillAndResumedMatchesACleanRun) {
  Calls calls;
  Server server([&](const Request& req) {
    const std::string text = judged_text(json::parse(req.body));
    calls.next(text);
    Response r = reply(200, chat_answer(text.back() == '3' ? "unsafe\nS10" : "safe"));
    r.delay_ms = 25;
    return r;
  });
  const fs::path dir = temp_dir();
  fs::remove_all(dir / "run");
  fs::remove_all(dir / "clean");
  std::vector<std::string> texts;
  for (int i = 0; i < 160; ++i) texts.push_back(fmt::format("text {}", i));
  write_texts(dir, texts);
  write_judge_spec(dir, server, "parser: llama-guard");
  const pid_t pid = spawn({"score", "judge", (dir / "texts.jsonl").string(),
                           (dir / "judge.yaml").string(), "--out", (dir / "run").string()},
                          dir / "killed.log");
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.requests() < 50 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the judge finished before it was killed";
  EXPECT_FALSE(fs::exists(dir / "run/scored.jsonl"));
  const auto resumed = run_with_key(judge_args(dir, "--resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::size_t repeated = 0;
  for (const auto& [text, n] : calls.n) {
    EXPECT_LE(n, 2) << text;
    repeated += static_cast<std::size_t>(n - 1);
  }
  EXPECT_EQ(calls.n.size(), 160u);
  EXPECT_LE(repeated, 4u);  // at most the requests in flight
  const auto clean = run_with_key(
      fmt::format("--quiet score judge '{}' '{}' --out '{}'", (dir / "texts.jsonl").string(),
                  (dir / "judge.yaml").string(), (dir / "clean").string()));
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(read_file(dir / "run/scored.jsonl"), read_file(dir / "clean/scored.jsonl"));
  EXPECT_EQ(read_jsonl(dir / "clean/scored.jsonl")[13]["judge_categories"], "hate");
}

TEST(ScoreHelp, TheNewScorersDescribeThemselves) {
  auto r = run_cli("help score judge");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("docs/specs.md"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  r = run_cli("help score moderation");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"--endpoint", "--model", "--api-key-env", "--text-column"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << r.out;
  r = run_cli("help score");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* command : {"moderation", "judge", "perspective", "classifier"})
    EXPECT_NE(r.out.find(command), std::string::npos) << command << r.out;
}

}  // namespace in_score_endpoints_test
}  // namespace
}  // namespace vlbias
