// `vlbias score classifier` end to end: the tiny random classifiers of
// tests/fixtures/classifier (tools/make_classifier_fixtures.py) over a table of the fixture's
// hostile texts; scored.jsonl and manifest.json, resume after kill -9, refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/core/sha256.h"

namespace {
namespace in_score_classifier_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::run_killed_at_checkpoint;
using vlbias::cli_util::temp_dir;
using vlbias::testing_util::fixture_json;

const std::string kModels = "tests/fixtures/classifier/";

// A JSONL table of the fixture texts `copies` times, with an id column and a group column.
fs::path texts_table(std::size_t copies = 1) {
  const fs::path p = temp_dir() / ("texts_" + std::to_string(copies) + ".jsonl");
  std::ofstream out(p, std::ios::binary);
  std::size_t id = 0;
  for (std::size_t c = 0; c < copies; ++c) {
    for (const auto& t : fixture_json("classifier/expected.json")["texts"]) {
      out << json{{"id", id++}, {"group", id % 2 ? "a" : "b"}, {"text", t["text"]}}.dump() << "\n";
    }
  }
  return p;
}

std::vector<json> read_jsonl(const fs::path& p) {
  std::vector<json> rows;
  std::istringstream in(read_file(p));
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  return rows;
}

TEST(CliScoreClassifier, WritesEveryRowWithOneLowerCaseColumnPerLabelMatchingTheReference) {
  const fs::path run = temp_dir() / "run";
  const CliResult r = run_cli("score classifier --model " + kModels + "distilbert_single '" +
                              texts_table().string() + "' --out '" + run.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto& want = fixture_json("classifier/expected.json")["cases"]["distilbert_single"];
  const std::vector<json> rows = read_jsonl(run / "scored.jsonl");
  ASSERT_EQ(rows.size(), want["rows"].size());
  std::size_t truncated = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rows[i]["id"], i);
    EXPECT_TRUE(rows[i].contains("group"));
    const auto& p = want["rows"][i]["probabilities"];
    EXPECT_NEAR(rows[i]["negative"].get<double>(), p[0].get<double>(), 1e-5);  // NEGATIVE
    EXPECT_NEAR(rows[i]["positive"].get<double>(), p[1].get<double>(), 1e-5);
    truncated += rows[i]["classifier_truncated"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(truncated, want["truncated"].get<std::size_t>());
  const json m = json::parse(read_file(run / "manifest.json"));
  EXPECT_EQ(m["truncated"], want["truncated"]);
  EXPECT_EQ(m["model"]["architecture"], "DistilBertForSequenceClassification");
  EXPECT_EQ(m["model"]["weights_sha256"],
            vlbias::sha256_file(kModels + "distilbert_single/model.safetensors"));
  EXPECT_EQ(m["model"]["activation"], "softmax");
  EXPECT_EQ(m["tokenizer"]["source"], "tokenizer.json");
  EXPECT_EQ(m["output"]["columns"], json::array({"negative", "positive"}));
  EXPECT_GT(m["throughput"]["texts_per_second"].get<double>(), 0.0);
  EXPECT_GE(m["empty_texts"].get<std::size_t>(), 1u);  // the fixture's empty text is scored
  EXPECT_FALSE(fs::exists(run / "checkpoints"));
  // Every row names its scorer; the manifest has the same text and the whole digest.
  const std::string scorer =
      "classifier DistilBertForSequenceClassification distilbert_single "
      "sha256:" +
      m["model"]["weights_sha256"].get<std::string>().substr(0, 16);
  EXPECT_EQ(m["output"]["scorer"], scorer);
  for (const json& row : rows) EXPECT_EQ(row["scorer"], scorer);
}

TEST(CliScoreClassifier, APrefixKeepsAnotherScorersColumnsBesideItsOwn) {
  // A table already scored (toxic, scorer) scored again under a prefix: both sets of columns.
  const fs::path first = temp_dir() / "first", second = temp_dir() / "second";
  ASSERT_EQ(run_cli("score classifier --model " + kModels + "bert_multilabel '" +
                    texts_table().string() + "' --out '" + first.string() + "'")
                .exit_code,
            0);
  const CliResult r =
      run_cli("score classifier --model " + kModels + "bert_tanh_single '" +
              (first / "scored.jsonl").string() + "' --out '" + second.string() + "' --prefix b_");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> rows = read_jsonl(second / "scored.jsonl");
  ASSERT_FALSE(rows.empty());
  for (const char* key : {"toxic", "scorer", "classifier_truncated", "b_benign", "b_offensive",
                          "b_scorer", "b_classifier_truncated"}) {
    SCOPED_TRACE(key);
    EXPECT_TRUE(rows[0].contains(key));
  }
  EXPECT_NE(rows[0]["scorer"], rows[0]["b_scorer"]);
  // Without the prefix the second scorer's columns would overwrite the first's.
  const CliResult clash = run_cli("score classifier --model " + kModels + "bert_multilabel '" +
                                  (first / "scored.jsonl").string() + "' --out '" +
                                  (temp_dir() / "clash").string() + "'");
  EXPECT_EQ(clash.exit_code, 2);
  EXPECT_NE(clash.err.find("--prefix"), std::string::npos) << clash.err;
  const CliResult dotted =
      run_cli("score classifier --model " + kModels + "bert_multilabel '" + texts_table().string() +
              "' --out '" + (temp_dir() / "dotted").string() + "' --prefix a.b");
  EXPECT_EQ(dotted.exit_code, 2);
  EXPECT_NE(dotted.err.find("only letters"), std::string::npos) << dotted.err;
}

TEST(CliScoreClassifier, TakesTheActivationAndMaxLengthOverrides) {
  const fs::path run = temp_dir() / "run";
  const CliResult r = run_cli("score classifier --model " + kModels + "bert_multilabel '" +
                              texts_table().string() + "' --out '" + run.string() +
                              "' --activation softmax --max-length 12 --batch 5 --chunk 7");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = json::parse(read_file(run / "manifest.json"));
  EXPECT_EQ(m["model"]["activation"], "softmax");
  EXPECT_EQ(m["model"]["max_length"], 12);
  EXPECT_GT(m["truncated"].get<std::size_t>(),
            fixture_json("classifier/expected.json")["cases"]["bert_multilabel"]["truncated"]
                .get<std::size_t>());
  for (const json& row : read_jsonl(run / "scored.jsonl")) {
    double sum = 0.0;
    for (const char* label :
         {"toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"}) {
      sum += row[label].get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }
}

TEST(CliScoreClassifier, RefusesBadFoldersColumnsAndOptionsWithExitTwo) {
  const fs::path table = texts_table();
  const fs::path bad = temp_dir() / "gpt2";
  fs::copy(kModels + "bert_multilabel", bad);
  {
    json c = json::parse(read_file(bad / "config.json"));
    c["architectures"] = json::array({"GPT2ForSequenceClassification"});
    std::ofstream(bad / "config.json") << c.dump();
  }
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"--model '" + bad.string() + "' '" + table.string() + "'", "GPT2ForSequenceClassification"},
      {"--model " + kModels + "bert_multilabel '" + table.string() + "' --text-column nope",
       "nope"},
      {"--model " + kModels + "bert_multilabel '" + table.string() + "' --activation relu", "relu"},
      {"--model " + kModels + "bert_multilabel '" + table.string() + "' --max-length 41",
       "1 to 40 tokens"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r =
        run_cli("score classifier " + c.args + " --out '" + (temp_dir() / "bad").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(temp_dir() / "bad" / "scored.jsonl"));
  }
  // An input column the scores would overwrite.
  const fs::path clash = temp_dir() / "clash.csv";
  std::ofstream(clash) << "text,toxic\nhello,1\n";
  const CliResult r = run_cli("score classifier --model " + kModels + "bert_multilabel '" +
                              clash.string() + "' --out '" + (temp_dir() / "clash").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already has a column 'toxic'"), std::string::npos) << r.err;
}

TEST(CliScoreClassifier, ResumeRefusesCheckpointsOfAnotherModelOrWithoutTheFlag) {
  const fs::path run = temp_dir() / "run";
  fs::create_directories(run / "checkpoints");
  std::ofstream(run / "checkpoints" / "job.json") << R"({"weights_sha256": "0000"})";
  const std::string common = "score classifier --model " + kModels + "bert_multilabel '" +
                             texts_table().string() + "' --out '" + run.string() + "'";
  const CliResult plain = run_cli(common);
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_NE(plain.err.find("--resume"), std::string::npos) << plain.err;
  const CliResult resumed = run_cli(common + " --resume");
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.err.find("'weights_sha256' differs"), std::string::npos) << resumed.err;
  EXPECT_FALSE(fs::exists(run / "scored.jsonl"));
}

TEST(CliScoreClassifier, ResumeRefusesNonFiniteLogitsInACheckpointAsTheLiveForwardDoes) {
  // A run stopped after its checkpoints: scored.jsonl cannot be written (a folder is there), so
  // the checkpoints of every chunk stay behind.
  const fs::path run = temp_dir() / "run";
  fs::create_directories(run / "scored.jsonl");
  for (const char* model : {"bert_multilabel", "distilbert_single"}) {
    SCOPED_TRACE(model);
    const std::string common = "score classifier --model " + kModels + model + " '" +
                               texts_table().string() + "' --chunk 10 --out '" + run.string() +
                               "' --resume";
    fs::remove_all(run / "checkpoints");
    fs::create_directories(run / "scored.jsonl");
    ASSERT_NE(run_cli(common).exit_code, 0);
    const fs::path chunk = run / "checkpoints" / "chunk_000001.json";
    ASSERT_TRUE(fs::exists(chunk));
    fs::remove(run / "scored.jsonl");
    // 1e39 is past float's range: an infinite logit, whose score would be 1, 0 or null.
    for (const double bad : {1e39, -1e39}) {
      json j = json::parse(read_file(chunk));
      j["logits"][3][0] = bad;
      std::ofstream(chunk) << j.dump() << "\n";
      const CliResult r = run_cli(common);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_NE(r.err.find("the logits of row 13 in checkpoint"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("are not finite (label 0 is"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(run / "scored.jsonl"));
    }
  }
}

TEST(CliScoreClassifier, ResumeAfterAKillGivesTheUninterruptedResult) {
  // 4,440 texts in 30 chunks: the kill lands after the first chunk, long before the last one
  // (a bigger table only slows the sanitizer build, where the whole test runs three passes).
  const fs::path table = texts_table(60);
  const std::string common = "score classifier --model " + kModels + "xlmr_multilabel '" +
                             table.string() + "' --chunk 150 --out ";
  const fs::path full = temp_dir() / "full";
  ASSERT_EQ(run_cli(common + "'" + full.string() + "'").exit_code, 0);

  const fs::path run = temp_dir() / "killed";
  const bool interrupted =
      run_killed_at_checkpoint("--quiet " + common + "'" + run.string() + "'",
                               run / "checkpoints" / "chunk_000001.json", run / "scored.jsonl");
  RecordProperty("interrupted", interrupted ? "yes" : "no");
  if (interrupted) {
    EXPECT_EQ(run_cli(common + "'" + run.string() + "'").exit_code, 2);
    const CliResult resumed = run_cli(common + "'" + run.string() + "' --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const json m = json::parse(read_file(run / "manifest.json"));
    EXPECT_GT(m["resumed_rows"].get<std::size_t>(), 0u);
  }
  EXPECT_EQ(read_file(run / "scored.jsonl"), read_file(full / "scored.jsonl"));
  EXPECT_FALSE(fs::exists(run / "checkpoints"));
}

}  // namespace in_score_classifier_test
}  // namespace
