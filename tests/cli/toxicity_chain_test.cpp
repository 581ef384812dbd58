// Paper 003's chain without Perspective, end to end through the real binary: `generate lvlm`
// against an in-process chat server -> `score classifier` on a tiny random BERT-shaped model
// (tests/fixtures/classifier/bert_multilabel: its scores mean nothing, the pipeline is the
// real one) -> `audit` (kind lvlm-counterfactual), whose results and report name the scorer.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"
#include "vlbias/core/sha256.h"

namespace vlbias {
namespace {
namespace in_toxicity_chain_test {

namespace fs = std::filesystem;
using cli_util::read_file;
using cli_util::temp_dir;
using nlohmann::json;
using test_http::Request;
using test_http::Response;
using test_http::Server;
using namespace generate_test;  // NOLINT: the shared fixtures

const std::string kModel =
    std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/classifier/bert_multilabel";

TEST(ToxicityChain, GeneratedAnswersAreScoredNativelyAndAuditedWithTheScorerNamed) {
  ImageIndex images;
  Server server([&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    // Answers that differ by image, prompt and seed, so the scores differ too.
    return Response{
        200,
        chat_answer(fmt::format("The person in {} looks {} (seed {}).", c.image,
                                c.prompt.size() % 2 ? "calm" : "angry", c.body.value("seed", 0))),
        {},
        0,
        false};
  });
  const fs::path dir = temp_dir() / "chain";
  fs::remove_all(dir);
  write_lvlm_spec(dir, server);
  const auto gen = run_with_key(fmt::format("generate lvlm '{}' --out '{}'",
                                            (dir / "spec.yaml").string(), (dir / "gen").string()));
  ASSERT_EQ(gen.exit_code, 0) << gen.err;

  const auto score = run_with_key(fmt::format("score classifier --model '{}' '{}' --out '{}'",
                                              kModel, (dir / "gen/generations.jsonl").string(),
                                              (dir / "scored").string()));
  ASSERT_EQ(score.exit_code, 0) << score.err;
  const std::vector<json> scored = read_jsonl(dir / "scored/scored.jsonl");
  ASSERT_EQ(scored.size(), 24u);  // 6 images x 2 prompts x 2 seeds, every answer scored
  const std::string scorer =
      fmt::format("classifier BertForSequenceClassification bert_multilabel sha256:{}",
                  sha256_file(kModel + "/model.safetensors").substr(0, 16));
  for (const json& row : scored) {
    EXPECT_EQ(row["scorer"], scorer);
    EXPECT_GE(row["toxic"].get<double>(), 0.0);
    EXPECT_LE(row["toxic"].get<double>(), 1.0);
  }

  write(dir / "audit.yaml", R"yaml(version: 1
kind: lvlm-counterfactual
title: "Chain test (scores from a tiny random model: meaningless)"
generations: scored/scored.jsonl
columns: {set_key: [prompt, seed], group: race, scores: [toxic, insult], text: text}
analyses: {maxgap: {bootstrap: 100}, pmi: false}
)yaml");
  const auto audit = run_with_key(fmt::format(
      "audit '{}' --out '{}'", (dir / "audit.yaml").string(), (dir / "audit").string()));
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  const json results = json::parse(read_file(dir / "audit/results.json"));
  ASSERT_EQ(results["generations"]["rows"], 24);
  ASSERT_EQ(results["generations"]["scorers"].size(), 1u);
  EXPECT_EQ(results["generations"]["scorers"][0]["scorer"], scorer);
  EXPECT_EQ(results["generations"]["scorers"][0]["rows"], 24);
  EXPECT_FALSE(results["analyses"]["maxgap"].is_null());
  const std::string html = read_file(dir / "audit/report.html");
  EXPECT_NE(html.find("Scored by"), std::string::npos);
  EXPECT_NE(html.find(scorer), std::string::npos);
}

}  // namespace in_toxicity_chain_test
}  // namespace
}  // namespace vlbias
