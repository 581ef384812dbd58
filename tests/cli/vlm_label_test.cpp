// `vlbias label --labeller vlm --spec SPEC.yaml` against the in-process chat server
// (tests/generate/http_test_server.h): the spec's question is asked about every image through
// `generate lvlm`, the answers mapped onto the choices by `score choice`'s rules (never guessed:
// refused, unclear, unparseable stay labels), and LABELS.csv written with the first-token
// probabilities renormalised over the choices; a second run resumes the run folder without
// sending anything again.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_vlm_label_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::temp_dir;
using namespace vlbias::generate_test;  // NOLINT: the shared server fixtures

const char* const kQuestion = "Does the person look like a man or a woman? Answer in one word.";

// The first token's top list of a reply (null: none).
json vlm_reply(const std::string& text, const json& top) {
  json choice = {{"index", 0},
                 {"message", {{"role", "assistant"}, {"content", text}}},
                 {"finish_reason", "stop"}};
  if (!top.is_null()) {
    choice["logprobs"] = {{"content", json::array({{{"token", top[0]["token"]},
                                                    {"logprob", top[0]["logprob"]},
                                                    {"top_logprobs", top}}})}};
  }
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "tiny-llava"},
          {"choices", json::array({choice})}};
}

struct VlmServer {
  ImageIndex images;
  std::mutex mutex;
  std::vector<json> bodies;
  Server server{[this](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    {
      std::lock_guard lock(mutex);
      bodies.push_back(c.body);
    }
    if (c.image == "jpg_1x1.jpg") {
      return reply(
          200, vlm_reply("Man.", json::array({{{"token", "Man"}, {"logprob", std::log(0.6)}},
                                              {{"token", "Woman"}, {"logprob", std::log(0.2)}}}))
                   .dump());
    }
    if (c.image == "jpg_420.jpg") return reply(200, vlm_reply("A woman", nullptr).dump());
    if (c.image == "jpg_422.jpg") {
      return reply(200, vlm_reply("I can't determine gender from an image.", nullptr).dump());
    }
    if (c.image == "jpg_444.jpg") return reply(200, vlm_reply("a man or a woman", nullptr).dump());
    if (c.image == "png_1x1.png") return reply(200, vlm_reply("Unclear", nullptr).dump());
    return reply(200, chat_answer("", "stop", "I can't help with identifying people."));
  }};
};

TEST(CliLabelVlm, TheSpecsQuestionIsAskedAndItsAnswersBecomeLabels) {
  VlmServer s;
  const fs::path dir = temp_dir();
  std::string manifest = "path\n";
  for (const std::string& f : kImageFiles) manifest += (kImages / f).string() + "\n";
  write(dir / "images.csv", manifest);
  write(dir / "spec.yaml", fmt::format(R"(version: 1
kind: label-vlm
endpoint: {{url: {}, model: tiny-llava, api_key_env: VLBIAS_TEST_API_KEY, timeout_s: 5}}
attribute: gender
question: "{}"
choices: [man, woman]
synonyms: {{man: [male], woman: [female]}}
unclear: [unclear]
sampling: {{temperature: 0, max_tokens: 8, top_logprobs: 2}}
requests: {{concurrency: 2, max_attempts: 2, base_delay_s: 0.01, max_delay_s: 0.05}}
)",
                                       s.server.url("/v1/chat/completions"), kQuestion));
  const std::string args = fmt::format("label --labeller vlm --spec '{}' --images '{}' --out '{}'",
                                       (dir / "spec.yaml").string(), (dir / "images.csv").string(),
                                       (dir / "vlm.csv").string());
  CliResult r = run_with_key(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(s.bodies.size(), kImageFiles.size());
  for (const json& body : s.bodies) {
    EXPECT_EQ(body["top_logprobs"], 2);
    EXPECT_NE(body.dump().find(kQuestion), std::string::npos);
  }
  const vlbias::Table t = vlbias::read_table((dir / "vlm.csv").string());
  ASSERT_EQ(t.rows, kImageFiles.size());
  std::map<std::string, std::size_t> row;
  for (std::size_t i = 0; i < t.rows; ++i) {
    row[fs::path(t.column("image").text(i)).filename().string()] = i;
    EXPECT_EQ(t.column("attribute").text(i), "gender");
    EXPECT_EQ(t.column("labeller").text(i), "vlm");
    EXPECT_EQ(t.column("model").text(i), "tiny-llava");
    EXPECT_TRUE(t.column("face").missing(i));
  }
  const auto label = [&](const char* f) { return t.column("label").text(row.at(f)); };
  EXPECT_EQ(label("jpg_1x1.jpg"), "man");
  EXPECT_EQ(label("jpg_420.jpg"), "woman");
  EXPECT_EQ(label("jpg_422.jpg"), "refused");
  EXPECT_EQ(label("jpg_444.jpg"), "unparseable");
  EXPECT_EQ(label("png_1x1.png"), "unclear");
  EXPECT_EQ(label("png_l8.png"), "refused");
  // man 0.6, woman 0.2, renormalised over the two: 0.75, 0.25 (hand-worked).
  const std::size_t man = row.at("jpg_1x1.jpg");
  EXPECT_NEAR(std::stod(t.column("p_man").text(man)), 0.75, 1e-12);
  EXPECT_NEAR(std::stod(t.column("p_woman").text(man)), 0.25, 1e-12);
  EXPECT_NEAR(std::stod(t.column("margin").text(man)), 0.5, 1e-12);
  EXPECT_TRUE(t.column("p_man").missing(row.at("jpg_420.jpg")));

  // Again without --resume: refused; with it: nothing is sent again, the same table.
  const std::string first = vlbias::cli_util::read_file(dir / "vlm.csv");
  r = run_with_key(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
  r = run_with_key(args + " --resume");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.bodies.size(), kImageFiles.size());
  EXPECT_EQ(vlbias::cli_util::read_file(dir / "vlm.csv"), first);
}

// The yes/no form for visual attributes (ViSAGe, paper 000): one question per attribute, one
// LABELS.csv row per (image, attribute), the attributes sharing p_yes and p_no.
TEST(CliLabelVlm, YesNoQuestionsPerVisualAttributeGiveARowPerImageAndAttribute) {
  const std::map<std::string, std::string> answers = {
      {"jpg_1x1.jpg|turban", "Yes."},       {"jpg_1x1.jpg|beard", "No, there is no beard."},
      {"jpg_1x1.jpg|sari", "I'm not sure"}, {"jpg_420.jpg|turban", "No"},
      {"jpg_420.jpg|beard", "yes or no"},   {"jpg_420.jpg|sari", "I can't tell from this image."}};
  ImageIndex images;
  std::mutex mutex;
  std::vector<std::string> asked;
  Server server{[&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    const std::string body = c.body.dump();
    std::string attribute;
    for (const char* a : {"turban", "beard", "sari"}) {
      if (body.find(std::string("contain a ") + a + "?") != std::string::npos) attribute = a;
    }
    {
      std::lock_guard lock(mutex);
      asked.push_back(c.image + "|" + attribute);
    }
    const auto it = answers.find(c.image + "|" + attribute);
    if (it == answers.end()) return reply(400, R"({"error":{"message":"unknown"}})");
    return reply(200, vlm_reply(it->second, nullptr).dump());
  }};
  const fs::path dir = temp_dir();
  write(dir / "images.csv", "path\n" + (kImages / "jpg_1x1.jpg").string() + "\n" +
                                (kImages / "jpg_420.jpg").string() + "\n");
  std::string questions;
  for (const char* a : {"turban", "beard", "sari"}) {
    questions += fmt::format(
        "  - {{attribute: {}, question: \"Does the image contain a {}? Answer yes or no.\"}}\n", a,
        a);
  }
  write(dir / "spec.yaml",
        fmt::format("version: 1\nkind: label-vlm\nendpoint: {{url: {}, timeout_s: 5}}\n"
                    "questions:\n{}choices: [yes, no]\nunclear: [not sure]\n"
                    "requests: {{max_attempts: 1}}\n",
                    server.url("/v1/chat/completions"), questions));
  const CliResult r = run_with_key(fmt::format(
      "label --labeller vlm --spec '{}' --images '{}' --out '{}'", (dir / "spec.yaml").string(),
      (dir / "images.csv").string(), (dir / "yesno.csv").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(asked.size(), 6u);
  const std::string text = vlbias::cli_util::read_file(dir / "yesno.csv");
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "image,face,attribute,label,margin,p_yes,p_no,labeller,model,weights_sha256,"
            "prompt_set,options");
  const vlbias::Table t = vlbias::read_table((dir / "yesno.csv").string());
  ASSERT_EQ(t.rows, 6u);
  std::map<std::string, std::string> got;
  for (std::size_t i = 0; i < t.rows; ++i) {
    got[fs::path(t.column("image").text(i)).filename().string() + "|" +
        t.column("attribute").text(i)] = t.column("label").text(i);
  }
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"jpg_1x1.jpg|turban", "yes"},
                                                     {"jpg_1x1.jpg|beard", "no"},
                                                     {"jpg_1x1.jpg|sari", "unclear"},
                                                     {"jpg_420.jpg|turban", "no"},
                                                     {"jpg_420.jpg|beard", "unparseable"},
                                                     {"jpg_420.jpg|sari", "refused"}}));
}

// --shard I/N: each shard asks about the items of its chunks only, and `vlbias merge` gives the
// one-process LABELS.csv byte for byte (a shard owning no chunk included); prompt_set is the spec
// file as given and its SHA-256.
TEST(CliLabelVlm, ShardsAskAboutTheirChunksAndMergeIntoTheOneProcessTable) {
  VlmServer s;
  const fs::path dir = temp_dir();
  std::string manifest = "path\n";
  for (const std::string& f : kImageFiles) manifest += (kImages / f).string() + "\n";
  write(dir / "images.csv", manifest);
  write(dir / "spec.yaml",
        fmt::format("version: 1\nkind: label-vlm\nendpoint: {{url: {}, timeout_s: 5}}\n"
                    "attribute: gender\nquestion: \"{}\"\nchoices: [man, woman]\n"
                    "unclear: [unclear]\nsampling: {{top_logprobs: 2}}\n"
                    "requests: {{max_attempts: 1}}\n",
                    s.server.url("/v1/chat/completions"), kQuestion));
  const auto label = [&](const std::string& out, const std::string& extra) {
    return run_with_key(
        fmt::format("--quiet label --labeller vlm --spec '{}' --images '{}' "
                    "--out '{}' {}",
                    (dir / "spec.yaml").string(), (dir / "images.csv").string(), out, extra));
  };
  CliResult r = label((dir / "whole.csv").string(), "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(s.bodies.size(), kImageFiles.size());
  // 6 items in chunks of 2: shard 0 of 4 labels chunk 0, 1 chunk 1, 2 chunk 2, 3 none.
  std::string shards;
  for (int i = 0; i < 4; ++i) {
    r = label((dir / "shard{shard}.csv").string(), fmt::format("--chunk 2 --shard {}/4", i));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    shards += fmt::format(" '{}'", (dir / fmt::format("shard{}.csv", i)).string());
  }
  EXPECT_EQ(s.bodies.size(), 2 * kImageFiles.size());  // each item asked once more, in all
  EXPECT_EQ(vlbias::read_table((dir / "shard0.csv").string()).rows, 2u);
  EXPECT_EQ(vlbias::read_table((dir / "shard3.csv").string()).rows, 0u);
  r = vlbias::cli_util::run_cli(
      fmt::format("--quiet merge '{}'{}", (dir / "merged.csv").string(), shards));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(vlbias::cli_util::read_file(dir / "merged.csv"),
            vlbias::cli_util::read_file(dir / "whole.csv"));
  const vlbias::Table t = vlbias::read_table((dir / "whole.csv").string());
  EXPECT_EQ(t.column("prompt_set").text(0), (dir / "spec.yaml").string() + " sha256:" +
                                                vlbias::sha256_file((dir / "spec.yaml").string()));
  EXPECT_EQ(t.column("options").text(0), "choices=man,woman");
  // --chunk without --shard: refused (a whole run resumes by request).
  r = label((dir / "x.csv").string(), "--chunk 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--chunk with --shard only"), std::string::npos) << r.err;
}

TEST(CliLabelVlm, BadSpecsAreUsageErrorsNamingTheKey) {
  const fs::path dir = temp_dir();
  write(dir / "images.csv", "path\n" + (kImages / "jpg_1x1.jpg").string() + "\n");
  const auto run = [&](const std::string& body) {
    write(dir / "bad.yaml",
          "version: 1\nkind: label-vlm\n"
          "endpoint: {url: 'http://127.0.0.1:9/v1/chat/completions'}\n" +
              body);
    return run_with_key(fmt::format("label --labeller vlm --spec '{}' --images '{}' --out '{}'",
                                    (dir / "bad.yaml").string(), (dir / "images.csv").string(),
                                    (dir / "bad.csv").string()));
  };
  CliResult r = run("attribute: gender\nchoices: [man, woman]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("question"), std::string::npos) << r.err;
  r = run("attribute: gender\nquestion: q\nchoices: [man]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("choices"), std::string::npos) << r.err;
  r =
      run("attribute: gender\nquestion: q\nquestions: [{attribute: a, question: q}]\n"
          "choices: [yes, no]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("excludes attribute and question"), std::string::npos) << r.err;
  r =
      run("questions: [{attribute: a, question: q}, {attribute: a, question: r}]\n"
          "choices: [yes, no]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("asked about twice"), std::string::npos) << r.err;
  r = run("attribute: gender\nquestion: q\nchoices: [man, woman]\nseeds: [1]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("seeds"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "bad.csv"));
}

}  // namespace in_vlm_label_test
}  // namespace
