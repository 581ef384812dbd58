// `vlbias score image-head` end to end on the fixture heads (tests/fixtures/score/image_heads/,
// tools/make_image_head_fixtures.py): SCORES.csv's columns, values against the PyTorch
// references, the provenance columns, and bad inputs refused with exit code 2 naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "cli_util.h"
#include "test_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_score_image_head_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::run_cli;
using cli_util::shell_quote;
using cli_util::temp_dir;
using testing::HasSubstr;

const std::string kDir = "tests/fixtures/score/image_heads/";

CliResult score(const std::string& head, const std::string& weights, const fs::path& out,
                const std::string& extra = "", const std::string& embeddings = kDir + "E.npy",
                const std::string& rows = kDir + "E.rows.csv") {
  return run_cli("score image-head --embeddings " + shell_quote(embeddings) + " --rows " +
                 shell_quote(rows) + " --head " + head + " --weights " + shell_quote(weights) +
                 " --out " + shell_quote(out.string()) + " " + extra);
}

std::vector<std::string> column_names(const Table& t) {
  std::vector<std::string> out;
  for (const Column& c : t.columns) out.push_back(c.name);
  return out;
}

TEST(CliScoreImageHead, SafetyCheckerWritesScoresDecisionsAndProvenance) {
  const fs::path out = temp_dir() / "nsfw.csv";
  const CliResult r =
      score("safety-checker", kDir + "safety_checker.safetensors", out, "--adjustment 0.05");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("safety-checker scored 12 images"));
  const Table t = read_table(out.string());
  const auto names = column_names(t);
  ASSERT_GE(names.size(), 8u);
  EXPECT_EQ(names[0], "image");
  EXPECT_EQ(names[1], "concept_score_max");
  EXPECT_EQ(names[2], "special_care_score_max");
  const std::vector<std::string> tail(names.end() - 6, names.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"nsfw", "special_care", "head", "weights",
                                            "weights_sha256", "options"}));
  const auto& ref = testing_util::fixture_json("score/image_heads/expected.json");
  const auto& want = ref["safety_checker_005"];
  ASSERT_EQ(t.rows, 12u);
  for (std::size_t i = 0; i < t.rows; ++i) {
    EXPECT_EQ(t.column("image").text(i), fmt::format("img/{:02d}.png", i));
    EXPECT_NEAR(t.numeric("concept_score_max")[i],
                want["scores"]["concept_score_max"][i].get<double>(), 1e-5);
    EXPECT_EQ(t.numeric("nsfw")[i], want["decisions"]["nsfw"][i].get<double>());
    EXPECT_EQ(t.numeric("special_care")[i], want["decisions"]["special_care"][i].get<double>());
    EXPECT_EQ(t.column("head").text(i), "safety-checker");
    EXPECT_EQ(t.column("weights").text(i), kDir + "safety_checker.safetensors");
    EXPECT_EQ(t.column("weights_sha256").text(i), sha256_file(kDir + "safety_checker.safetensors"));
    EXPECT_EQ(t.column("options").text(i), "adjustment=0.05");
  }
}

TEST(CliScoreImageHead, EveryHead) {
  struct Case {
    std::string head, weights, extra, key, column, options;
  };
  const std::string prompts = "--prompts data/clip_iqa/prompts.csv";
  const std::vector<Case> cases = {
      {"laion-aesthetic", "laion.pth", "", "laion_aesthetic", "aesthetic", "normalized=1"},
      {"heim-aesthetic", "heim.pth", "", "heim_aesthetic", "aesthetic", "normalized=1"},
      {"q16", "q16_prompts.p", "", "q16", "p_inappropriate", "logit_scale=100"},
      {"clip-iqa", "iqa.npy", prompts, "clip_iqa", "clip_iqa__sharpness", "logit_scale=100;"},
      {"safety-checker", "safety_checker.bin", "", "safety_checker", "concept_score_3",
       "adjustment=0"}};
  const auto& ref = testing_util::fixture_json("score/image_heads/expected.json");
  for (const Case& c : cases) {
    const fs::path out = temp_dir() / (c.head + ".csv");
    const CliResult r = score(c.head, kDir + c.weights, out, c.extra);
    ASSERT_EQ(r.exit_code, 0) << c.head << ": " << r.err;
    const Table t = read_table(out.string());
    EXPECT_EQ(t.columns.front().name, "image");
    for (std::size_t i = 0; i < t.rows; ++i) {
      EXPECT_NEAR(t.numeric(c.column)[i], ref[c.key]["scores"][c.column][i].get<double>(), 1e-5)
          << c.head << " row " << i;
      EXPECT_THAT(t.column("options").text(i), HasSubstr(c.options));
    }
    if (c.head == "q16") {
      for (std::size_t i = 0; i < t.rows; ++i) {
        EXPECT_EQ(t.numeric("inappropriate")[i],
                  ref["q16"]["decisions"]["inappropriate"][i].get<double>());
      }
    }
  }
}

TEST(CliScoreImageHead, BadInputsNameTheFile) {
  const fs::path dir = temp_dir();
  const fs::path out = dir / "s.csv";
  // Another head's weights.
  CliResult r = score("heim-aesthetic", kDir + "laion.pth", out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("laion.pth has no tensor 'weight', which the heim-aesthetic"));
  // A rows file of another length.
  { std::ofstream(dir / "short.rows.csv") << "row,input_row,path\n0,0,a.png\n"; }
  r = score("q16", kDir + "q16_prompts.p", out, "", kDir + "E.npy",
            (dir / "short.rows.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("short.rows.csv lists 1 rows but"));
  // Text embeddings' rows file (no path column).
  r = score("q16", kDir + "q16_prompts.p", out, "", kDir + "E.npy", kDir + "iqa.rows.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("iqa.rows.csv has no 'path' column"));
  // Embeddings of another width than the weights'.
  r = score("clip-iqa", kDir + "iqa.npy", out, "--prompts data/clip_iqa/prompts.csv",
            kDir + "iqa.npy", kDir + "iqa.rows.csv");
  EXPECT_EQ(r.exit_code, 2);
  // Options that belong to another head, an unknown head, a hostile pickle.
  r = score("q16", kDir + "q16_prompts.p", out, "--adjustment 0.05");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--adjustment is for the safety-checker head only"));
  r = score("clip-iqa", kDir + "iqa.npy", out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs --prompts"));
  r = score("nsfw", kDir + "q16_prompts.p", out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--head 'nsfw' is not a head"));
  r = score("q16", kDir + "bad/system.p", out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("system.p' refers to the Python global 'posix.system'"));
  EXPECT_FALSE(fs::exists(out));
  // A NaN and an all-zero embedding.
  Matrix bad(12, 32);
  for (std::size_t i = 0; i < bad.data.size(); ++i) bad.data[i] = 0.5f;
  for (std::size_t k = 0; k < 32; ++k) bad.at(4, k) = 0.0f;
  write_npy(dir / "zero.npy", MatrixView(bad));
  r = score("q16", kDir + "q16_prompts.p", out, "", (dir / "zero.npy").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("zero.npy: the embedding in row 4 has norm 0"));
  bad.at(7, 3) = std::nanf("");
  write_npy(dir / "nan.npy", MatrixView(bad));
  r = score("q16", kDir + "q16_prompts.p", out, "", (dir / "nan.npy").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nan.npy"));
  // --out over one of the inputs.
  fs::copy_file(kDir + "E.rows.csv", dir / "E.rows.csv");
  r = score("q16", kDir + "q16_prompts.p", dir / "E.rows.csv", "", kDir + "E.npy",
            (dir / "E.rows.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("score image-head --out"));
}

}  // namespace in_score_image_head_test
}  // namespace
}  // namespace vlbias
