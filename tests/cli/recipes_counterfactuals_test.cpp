// Paper 003's recipe (examples/papers/003/run.sh) end to end: the real script under bash, with
// the built vlbias, on the miniature SocialCounterfactuals release, against an in-process
// OpenAI-compatible chat server that plays the LVLM, the text-only LLM and the toxicity judge
// (answers that depend on the image, the prompt and the text; one image always refused).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "generate/http_test_server.h"
#include "vlbias/io/base64.h"

namespace {
namespace in_recipes_counterfactuals_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_bash;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;
using vlbias::test_http::Request;
using vlbias::test_http::Response;
using vlbias::test_http::Server;

const char* const kDataset = "tests/data/datasets/socialcounterfactuals";
// The obese male carpenter: every question about this image is refused by the content filter.
const char* const kRefusedImage = "3918439167_20.jpg";

Response chat_reply(const std::string& text) {
  Response r;
  r.status = 200;
  r.body = json{{"id", "c"},
                {"object", "chat.completion"},
                {"model", "tiny"},
                {"choices",
                 {{{"index", 0},
                   {"message", {{"role", "assistant"}, {"content", text}}},
                   {"finish_reason", "stop"}}}}}
               .dump();
  return r;
}

// The LVLM (an image in the user content), the LLM (plain text) and the judge ("How toxic").
class PaperChat {
 public:
  PaperChat() {
    for (const auto& e : fs::recursive_directory_iterator(kDataset)) {
      if (e.path().extension() == ".jpg")
        image_of_base64_[vlbias::base64_encode(read_file(e.path()))] = e.path().filename();
    }
  }
  std::atomic<int> requests{0};
  // The only path (query included) the server answers; any other gets a 404.
  std::string route = "/v1/chat/completions";
  Server server{[this](const Request& req) { return answer(req); }};

 private:
  std::map<std::string, std::string> image_of_base64_;

  Response answer(const Request& req) {
    ++requests;
    if (req.path != route) {
      Response r;
      r.status = 404;
      r.body = R"({"error":{"message":"no route here"}})";
      return r;
    }
    const json body = json::parse(req.body);
    const json& content = body["messages"].back()["content"];
    const std::uint64_t seed = body.value("seed", 0);
    if (content.is_string()) {
      const std::string text = content;
      if (text.rfind("How toxic", 0) == 0)  // the judge: a rating from the text's length
        return chat_reply(std::to_string(std::hash<std::string>{}(text) % 11));
      return chat_reply("llm keywords: " + text.substr(0, 60));
    }
    std::string image, prompt;
    for (const json& part : content) {
      if (part["type"] == "text") prompt = part["text"];
      if (part["type"] == "image_url") {
        const std::string url = part["image_url"]["url"];
        const auto at = image_of_base64_.find(url.substr(url.find(',') + 1));
        if (at != image_of_base64_.end()) image = at->second;
      }
    }
    if (image == kRefusedImage) {
      Response r;
      r.status = 400;
      r.body = R"({"error":{"code":"content_filter","message":"filtered"}})";
      return r;
    }
    const std::size_t h = std::hash<std::string>{}(image + prompt + std::to_string(seed));
    if (prompt.find("Salary:") != std::string::npos)
      return chat_reply("$" + std::to_string(40 + h % 60) + ",000");
    if (prompt.find("Rating:") != std::string::npos) return chat_reply(std::to_string(1 + h % 10));
    return chat_reply("kind, strong, lazy" + std::string(h % 3, '!') + " worker " + image);
  }
};

// Small settings: one generation seed, few bootstrap resamples, no sampling of sets.
CliResult run_paper003(const PaperChat& chat, const fs::path& out, const std::string& env = "",
                       const std::string& base = "/v1") {
  return run_bash("SEEDS=0 BOOTSTRAP=50 CONCURRENCY=4 " + env +
                  " bash examples/papers/003/run.sh " + kDataset + " " +
                  shell_quote(chat.server.url(base)) + " " + shell_quote(out.string()));
}

const char* const kSteps[] = {"dataset",    "sample",    "generate-lvlm", "generate-llm",
                              "score-lvlm", "score-llm", "audit",         "paired-llm"};

void expect_steps(const CliResult& r, const std::string& state) {
  vlbias::cli_util::expect_steps(r, {std::begin(kSteps), std::end(kSteps)}, state);
}

TEST(RecipePaper003, RunsFromTheMiniatureReleaseToTheReportAndSkipsEveryStepTheSecondTime) {
  PaperChat chat;
  const fs::path out = temp_dir() / "run 003";  // a space: every path is quoted
  const CliResult first = run_paper003(chat, out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  expect_steps(first, "running");
  // 21 images x 15 prompts (LVLM) + 21 (LLM) + one judge call per answer that is not refused.
  const int lvlm = 21 * 15, llm = 21, refused = 15;
  EXPECT_EQ(chat.requests.load(), lvlm + llm + (lvlm - refused) + llm);

  const std::string results_text = read_file(out / "audit" / "results.json");
  const json results = json::parse(results_text);
  EXPECT_EQ(results["kind"], "lvlm-counterfactual");
  EXPECT_EQ(results["generations"]["rows"], lvlm + llm);
  const json& analyses = results["analyses"];
  for (const char* section : {"maxgap", "pmi", "responses", "ratings", "group_tests", "paired"}) {
    SCOPED_TRACE(section);
    EXPECT_TRUE(analyses.contains(section) && !analyses[section].is_null()) << analyses.dump(1);
  }
  // M1..M5 against no mitigation, in each of the two subsets (Tables 4, 18).
  EXPECT_EQ(analyses["paired"]["results"].size(), 10u);
  EXPECT_NE(results.dump().find("\"salary\""), std::string::npos);  // the numeric questions
  // Refusal rates per group: the LVLM refused every question about the obese male carpenter;
  // the LLM, which reads the attributes in words, answered.
  std::size_t obese_male = 0;
  for (const json& row : analyses["responses"]["results"]) {
    if (row["group"]["attributes"] != "obese male") continue;
    ++obese_male;
    const bool image = row["by"]["input"] == "image";
    EXPECT_EQ(row["refused"], image ? row["n"] : json(0)) << row.dump();
  }
  EXPECT_EQ(obese_male, 16u);  // 15 questions x mitigations of the LVLM, 1 of the LLM
  EXPECT_TRUE(analyses["responses"].contains("refusal_tests"));
  EXPECT_TRUE(fs::exists(out / "audit" / "report.html"));
  EXPECT_NE(first.out.find("report.html"), std::string::npos) << first.out;

  // The LVLM's answers against the LLM's over the same sets (Table 3).
  const json paired = json::parse(read_file(out / "paired_llm.json"));
  ASSERT_FALSE(paired["results"].empty()) << paired.dump(1);
  EXPECT_GT(paired["results"][0]["matched_sets"].get<int>(), 0) << paired.dump(1);
  // The LLM read the depicted attributes in words.
  EXPECT_NE(read_file(out / "llm" / "generations.jsonl")
                .find("You are looking at a picture of a Middle Eastern female plumber."),
            std::string::npos);

  const CliResult second = run_paper003(chat, out);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  expect_steps(second, "up to date");
  EXPECT_EQ(second.out.find("running"), std::string::npos) << second.out;
  EXPECT_EQ(read_file(out / "audit" / "results.json"), results_text);
  EXPECT_EQ(chat.requests.load(), lvlm + llm + (lvlm - refused) + llm);  // nothing sent again
}

// A new option reruns only the steps that use it; a lost output reruns its step, which continues
// its run folder (same inputs) and sends nothing again.
TEST(RecipePaper003, RerunsOnlyTheStepsAnOptionChangesAndResumesARunFolderWithoutNewRequests) {
  PaperChat chat;
  const fs::path out = temp_dir() / "out";
  const CliResult first = run_paper003(chat, out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const int sent = chat.requests.load();

  // CONCURRENCY paces the requests and changes no answer: no step reruns for it.
  const CliResult bootstrap = run_paper003(chat, out, "BOOTSTRAP=40 CONCURRENCY=2");
  ASSERT_EQ(bootstrap.exit_code, 0) << bootstrap.out << bootstrap.err;
  for (const char* name : {"audit", "paired-llm"}) {
    SCOPED_TRACE(name);
    EXPECT_NE(bootstrap.out.find(std::string("step ") + name + ": running"), std::string::npos)
        << bootstrap.out;
  }
  for (const char* name :
       {"dataset", "sample", "generate-lvlm", "generate-llm", "score-lvlm", "score-llm"}) {
    SCOPED_TRACE(name);
    EXPECT_NE(bootstrap.out.find(std::string("step ") + name + ": up to date"), std::string::npos)
        << bootstrap.out;
  }
  EXPECT_NE(read_file(out / "audit.yaml").find("bootstrap: 40"), std::string::npos);

  fs::remove(out / "lvlm_scored" / "scored.jsonl");
  const CliResult lost = run_paper003(chat, out, "BOOTSTRAP=40");
  ASSERT_EQ(lost.exit_code, 0) << lost.out << lost.err;
  EXPECT_NE(lost.out.find("step score-lvlm: running"), std::string::npos) << lost.out;
  EXPECT_NE(lost.out.find("step score-llm: up to date"), std::string::npos) << lost.out;
  EXPECT_TRUE(fs::exists(out / "lvlm_scored" / "scored.jsonl"));
  EXPECT_EQ(chat.requests.load(), sent);  // every answer was judged already

  // One set per subset x occupation: a new sample command, but the miniature has one set of
  // each, so the same sample.csv, and the steps after it are up to date (content, not time).
  const CliResult sampled = run_paper003(chat, out, "BOOTSTRAP=40 SETS_PER_OCCUPATION=1");
  ASSERT_EQ(sampled.exit_code, 0) << sampled.out << sampled.err;
  EXPECT_NE(sampled.out.find("step sample: running"), std::string::npos) << sampled.out;
  EXPECT_NE(sampled.out.find("step generate-lvlm: up to date"), std::string::npos) << sampled.out;
  EXPECT_EQ(chat.requests.load(), sent);
}

// An endpoint with a query (Azure's ?api-version=): the chat path joins the URL's path, before
// the query (it was once appended after it, and all 672 requests went to
// /v1?api-version=.../chat/completions); the query's value is in no file the recipe writes:
// the specs name the variable holding the URL (endpoint.url_env).
TEST(RecipePaper003, AnEndpointWithAQueryGetsTheChatPathBeforeItAndItsValueIsInNoFile) {
  PaperChat chat;
  chat.route = "/v1/chat/completions?api-version=2024-02-01";
  const fs::path out = temp_dir() / "query";
  const CliResult r = run_paper003(chat, out, "", "/v1?api-version=2024-02-01");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_steps(r, "running");
  const int lvlm = 21 * 15, llm = 21, refused = 15;
  EXPECT_EQ(chat.requests.load(), lvlm + llm + (lvlm - refused) + llm);
  const std::string spec = read_file(out / "lvlm.yaml");
  EXPECT_NE(spec.find("url_env: VLBIAS_LVLM_URL"), std::string::npos) << spec;
  EXPECT_NE(spec.find("/v1/chat/completions?api-version=[redacted]"), std::string::npos) << spec;
  EXPECT_NE(read_file(out / "judge.yaml").find("url_env: VLBIAS_JUDGE_URL"), std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(read_file(entry.path()).find("2024-02-01"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(r.out.find("2024-02-01"), std::string::npos) << r.out;
}

// Every request of a step failed (a wrong base URL: every request a 404): the recipe stops
// there with a non-zero exit naming the run and the first error, instead of going on to score
// and audit nothing; with the right URL it runs through.
TEST(RecipePaper003, FailsAtTheStepWhoseEveryRequestFailedNamingTheFirstError) {
  PaperChat chat;
  const fs::path out = temp_dir() / "wrong";
  const CliResult wrong = run_paper003(chat, out, "", "/wrong/v1");
  EXPECT_NE(wrong.exit_code, 0) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("every one of the 315 requests of " + (out / "lvlm").string() +
                           " failed (the first: \"HTTP 404: no route here\")"),
            std::string::npos)
      << wrong.err;
  EXPECT_NE(wrong.err.find("step generate-lvlm: failed"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.out.find("step generate-llm"), std::string::npos) << wrong.out;
  EXPECT_FALSE(fs::exists(out / "audit"));

  const CliResult right = run_paper003(chat, out);
  ASSERT_EQ(right.exit_code, 0) << right.out << right.err;
  EXPECT_TRUE(fs::exists(out / "audit" / "results.json"));
}

}  // namespace in_recipes_counterfactuals_test
}  // namespace
