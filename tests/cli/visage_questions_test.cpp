// ViSAGe's yes/no questions (data/visage/questions.yaml, tools/make_visage_questions.py) and the
// chain they serve: a VLM's answers (`vlbias label --labeller vlm --spec`, against the in-process
// chat server) and ViSAGe's annotators (`vlbias dataset visage-labels`) stacked into one table,
// their agreement one `metric agreement` call (hand-worked kappa and alpha).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"
#include "vlbias/generate/generate_yaml.h"
#include "vlbias/metrics/visual_stereotypes.h"

namespace {
namespace in_visage_questions_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::temp_dir;
using namespace vlbias::generate_test;  // NOLINT: the shared server fixtures

const fs::path kSource = fs::path(VLBIAS_SOURCE_DIR);

TEST(VisageQuestions, TheShippedSetIsALabelVlmSpecWithOneQuestionPerVisualAttribute) {
  const vlbias::LabelVlmSpec spec =
      vlbias::parse_label_vlm_spec((kSource / "data/visage/questions.yaml").string());
  const vlbias::VisualAttributes visual =
      vlbias::read_visual_attributes((kSource / "data/visage/all_visual_attr.csv").string());
  EXPECT_EQ(visual.attributes.size(), 518u);  // docs/methods.md#visual-attributes
  ASSERT_EQ(spec.questions.size(), visual.attributes.size());
  for (std::size_t i = 0; i < spec.questions.size(); ++i) {
    EXPECT_EQ(spec.questions[i].first, visual.attributes[i]);
    EXPECT_EQ(spec.questions[i].second,
              "Does the image contain " + visual.attributes[i] + "? Answer yes or no.");
  }
  EXPECT_EQ(spec.choices, (std::vector<std::string>{"yes", "no"}));
}

// Two images named as ViSAGe's release names them under --image-root (the same file name in two
// folders), three of the spec's four attributes asked about both (--attributes); the annotators
// judged poor on the first and brunette and festive on the second (full_set_slice.csv, majority of
// three raters: no, yes, yes). The VLM answers no, yes, no there: two of three pairable units
// agree.
TEST(VisageQuestions, VlmAnswersAndViSAGesAnnotatorsAgreeByOneMetricCall) {
  const std::map<std::string, std::string> answers = {
      {"png_1x1.png|poor", "No."}, {"png_1x1.png|brunette", "No"},  {"png_1x1.png|festive", "no"},
      {"png_l8.png|poor", "No"},   {"png_l8.png|brunette", "Yes."}, {"png_l8.png|festive", "No."}};
  ImageIndex images;
  std::mutex mutex;
  std::size_t asked = 0;
  Server server{[&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    const std::string body = c.body.dump();
    std::string attribute;
    for (const char* a : {"poor", "brunette", "festive"}) {
      if (body.find(fmt::format("contain {}?", a)) != std::string::npos) attribute = a;
    }
    {
      std::lock_guard lock(mutex);
      ++asked;
    }
    const auto it = answers.find(c.image + "|" + attribute);
    if (it == answers.end()) return reply(400, R"({"error":{"message":"unknown"}})");
    return reply(200, chat_answer(it->second));
  }};
  const fs::path dir = temp_dir();
  const fs::path root = dir / "akshitat_test";
  fs::create_directories(root / "visual_annotation_full_set");
  fs::create_directories(root / "visual_annotation");
  fs::copy_file(kImages / "png_1x1.png", root / "visual_annotation_full_set/Mexican5.png");
  fs::copy_file(kImages / "png_l8.png", root / "visual_annotation/Mexican5.png");
  std::string questions;
  for (const char* a : {"sombrero", "poor", "brunette", "festive"}) {  // sombrero: not asked
    questions += fmt::format(
        "  - {{attribute: {}, question: \"Does the image contain {}? Answer yes or no.\"}}\n", a,
        a);
  }
  write(dir / "spec.yaml",
        fmt::format("version: 1\nkind: label-vlm\nendpoint: {{url: {}, timeout_s: 5}}\n"
                    "questions:\n{}choices: [\"yes\", \"no\"]\nrequests: {{max_attempts: 1}}\n",
                    server.url("/v1/chat/completions"), questions));
  const auto label = [&](const std::string& attributes) {
    return run_with_key(fmt::format(
        "--quiet label --labeller vlm --spec '{}' --images '{}' --out '{}' --attributes {}",
        (dir / "spec.yaml").string(), root.string(), (dir / "vlm.csv").string(), attributes));
  };
  CliResult r = label("festive,turban");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'turban', which"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has no question about (it asks about sombrero, poor"), std::string::npos)
      << r.err;
  EXPECT_EQ(asked, 0u);
  r = label("festive,poor,brunette");  // asked in the spec's order
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(asked, 6u);
  r = vlbias::cli_util::run_cli(
      fmt::format("--quiet dataset visage-labels --annotations '{}' --image-root "
                  "/cns/px-d/home/image-generation/akshitat_test --out '{}'",
                  (kSource / "tests/fixtures/labels/visage/full_set_slice.csv").string(),
                  (dir / "human.csv").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const std::string human = read_file(dir / "human.csv"), vlm = read_file(dir / "vlm.csv");
  ASSERT_EQ(human.substr(0, human.find('\n')), vlm.substr(0, vlm.find('\n')));  // one header
  std::ofstream(dir / "all.csv") << human << vlm.substr(vlm.find('\n') + 1);
  r = vlbias::cli_util::run_cli(fmt::format(
      "--quiet metric agreement --table '{}' --rating label --unit image,attribute --rater "
      "labeller --bootstrap 0 --out '{}'",
      (dir / "all.csv").string(), (dir / "agreement.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(read_file(dir / "agreement.json"));
  // Pairable units (human, vlm): (A, poor) no/no, (B, brunette) yes/yes, (B, festive) yes/no.
  // Cohen: p_o = 2/3; human yes 2/3, vlm yes 1/3: p_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9;
  // kappa = (2/3 - 4/9) / (5/9) = 0.4. Krippendorff (nominal): n = 6 values, 3 yes, 3 no;
  // D_o = 2/6, D_e = 2 * 3 * 3 / (6 * 5) = 0.6; alpha = 1 - (1/3) / 0.6 = 4/9.
  EXPECT_EQ(j["raters"], json({"human", "vlm"}));
  ASSERT_EQ(j["cohen_kappa"]["pairs"].size(), 1u);
  EXPECT_NEAR(j["cohen_kappa"]["pairs"][0]["estimate"].get<double>(), 0.4, 1e-12);
  EXPECT_EQ(j["cohen_kappa"]["pairs"][0]["units"], 3);
  EXPECT_NEAR(j["krippendorff_alpha"]["estimate"].get<double>(), 4.0 / 9.0, 1e-12);
  EXPECT_EQ(j["krippendorff_alpha"]["units"], 3);
  // Units one side alone rated: the VLM's 3 other (image, attribute) pairs, the annotators' 5.
  EXPECT_EQ(j["units_single_rating"], 8);
}

}  // namespace in_visage_questions_test
}  // namespace
