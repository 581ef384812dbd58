// The scoring heads on CLIP image embeddings (src/score/image_heads*.cpp) against float64
// PyTorch ports of their sources (tools/make_image_head_fixtures.py), their weights read in the
// published formats, and the bad inputs each refuses with an error naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/io/tensor/pickled_array.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/score/image_heads.h"

namespace vlbias {
namespace {
namespace in_image_heads_test {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing_util::error_of;

const fs::path kDir = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/score/image_heads";

const nlohmann::json& expected() {
  return testing_util::fixture_json("score/image_heads/expected.json");
}

Matrix fixture_images() {
  return read_embeddings(kDir / "E.npy");
}

// Every score and decision column of `got` against the reference `want`; returns the largest
// absolute score difference.
double compare_head(const ImageHeadColumns& got, const nlohmann::json& want) {
  double worst = 0.0;
  EXPECT_EQ(got.score_names.size(), want["scores"].size());
  for (std::size_t k = 0; k < got.score_names.size(); ++k) {
    const auto& ref = want["scores"][got.score_names[k]];
    EXPECT_EQ(ref.size(), got.scores[k].size()) << got.score_names[k];
    for (std::size_t i = 0; i < std::min(ref.size(), got.scores[k].size()); ++i) {
      const double d = std::abs(got.scores[k][i] - ref[i].get<double>());
      worst = std::max(worst, d);
      EXPECT_LT(d, 1e-5) << got.score_names[k] << " row " << i;
    }
  }
  EXPECT_EQ(got.decision_names.size(), want["decisions"].size());
  for (std::size_t k = 0; k < got.decision_names.size(); ++k) {
    const auto& ref = want["decisions"][got.decision_names[k]];
    EXPECT_EQ(ref.size(), got.decisions[k].size()) << got.decision_names[k];
    for (std::size_t i = 0; i < std::min(ref.size(), got.decisions[k].size()); ++i) {
      EXPECT_EQ(got.decisions[k][i], ref[i].get<int>()) << got.decision_names[k] << " row " << i;
    }
  }
  return worst;
}

TEST(ImageHeads, SafetyCheckerMatchesDiffusers) {
  const Matrix images = fixture_images();
  for (const char* file : {"safety_checker.safetensors", "safety_checker.bin"}) {
    const SafetyCheckerWeights w = read_safety_checker_weights(kDir / file);
    const double d0 =
        compare_head(safety_checker_scores(images, "E.npy", w, 0.0), expected()["safety_checker"]);
    const double d5 = compare_head(safety_checker_scores(images, "E.npy", w, 0.05),
                                   expected()["safety_checker_005"]);
    std::cout << "safety-checker (" << file << ") max abs difference " << std::max(d0, d5) << "\n";
  }
  // The fixture exercises every branch: special care raising the adjustment, a concept score
  // of 0.0003 that rounds to 0 (not flagged), flagged and unflagged rows.
  const auto& ref = expected()["safety_checker"];
  EXPECT_EQ(ref["decisions"]["special_care"][0], 1);
  EXPECT_NEAR(ref["scores"]["concept_score_5"][0].get<double>(), 0.0003, 1e-9);
  EXPECT_NEAR(ref["scores"]["concept_score_max"][0].get<double>(), 0.0003, 1e-9);
  EXPECT_EQ(ref["decisions"]["nsfw"][0], 0);  // 0.0003 rounds to 0.0: not > 0
  int nsfw = 0;
  for (const auto& v : ref["decisions"]["nsfw"]) nsfw += v.get<int>();
  EXPECT_GT(nsfw, 0);
  EXPECT_LT(nsfw, expected()["rows"].get<int>());
}

TEST(ImageHeads, LaionAestheticMatchesSimpleInference) {
  const LaionAestheticWeights w = read_laion_aesthetic_weights(kDir / "laion.pth");
  ASSERT_EQ(w.layers.size(), 5u);
  const double d = compare_head(laion_aesthetic_scores(fixture_images(), "E.npy", w),
                                expected()["laion_aesthetic"]);
  std::cout << "laion-aesthetic max abs difference " << d << "\n";
}

TEST(ImageHeads, HeimAestheticMatchesHelm) {
  const ImageHeadLinear w = read_heim_aesthetic_weights(kDir / "heim.pth");
  const double d = compare_head(heim_aesthetic_scores(fixture_images(), "E.npy", w),
                                expected()["heim_aesthetic"]);
  std::cout << "heim-aesthetic max abs difference " << d << "\n";
}

TEST(ImageHeads, Q16MatchesHelm) {
  const Matrix images = fixture_images();
  const double d = compare_head(
      q16_scores(images, "E.npy", read_q16_weights(kDir / "q16_prompts.p")), expected()["q16"]);
  const double d5 =
      compare_head(q16_scores(images, "E.npy", read_q16_weights(kDir / "q16_protocol5.p")),
                   expected()["q16_protocol5"]);
  std::cout << "q16 max abs difference " << std::max(d, d5) << "\n";
}

TEST(ImageHeads, ClipIqaMatchesTorchmetrics) {
  const ClipIqaWeights w = read_clip_iqa_weights(
      kDir / "iqa.npy", fs::path(VLBIAS_SOURCE_DIR) / "data/clip_iqa/prompts.csv");
  ASSERT_EQ(w.names.size(), 16u);
  EXPECT_EQ(w.names.front(), "quality");
  const double d =
      compare_head(clip_iqa_scores(fixture_images(), "E.npy", w), expected()["clip_iqa"]);
  std::cout << "clip-iqa max abs difference " << d << "\n";
}

TEST(ImageHeads, KindNames) {
  for (auto k : {ImageHeadKind::SafetyChecker, ImageHeadKind::LaionAesthetic,
                 ImageHeadKind::HeimAesthetic, ImageHeadKind::Q16, ImageHeadKind::ClipIqa}) {
    EXPECT_EQ(parse_image_head_kind(image_head_name(k)), k);
  }
  EXPECT_THAT(error_of<UsageError>([] { (void)parse_image_head_kind("nsfw"); }),
              HasSubstr("safety-checker, laion-aesthetic"));
}

// ---- bad inputs ----

TEST(ImageHeadsBad, AnotherHeadsWeights) {
  EXPECT_THAT(error_of<InputError>([] { (void)read_heim_aesthetic_weights(kDir / "laion.pth"); }),
              HasSubstr("has no tensor 'weight', which the heim-aesthetic head reads"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_laion_aesthetic_weights(kDir / "heim.pth"); }),
              HasSubstr("another head"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_safety_checker_weights(kDir / "laion.pth"); }),
              HasSubstr("has no tensor 'concept_embeds'"));
  EXPECT_THAT(
      error_of<InputError>([] { (void)read_laion_aesthetic_weights(kDir / "safety_checker.bin"); }),
      HasSubstr("safety_checker.bin has no tensor 'layers.0.weight'"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_q16_weights(kDir / "heim.pth"); }),
              HasSubstr("heim.pth"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_q16_weights(kDir / "bad/three_rows.p"); }),
              HasSubstr("holds a 3 x 32 array; Q16's prompts are 2 x D"));
}

// A safetensors file of F32 zeros with these tensor shapes (1-D ones included).
void write_zero_tensors(const fs::path& path,
                        const std::vector<std::pair<std::string, std::vector<std::size_t>>>& t) {
  std::vector<SafetensorsEntry> entries;
  std::size_t floats = 0;
  for (const auto& [name, shape] : t) {
    entries.push_back({name, SafetensorsDtype::F32, shape});
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    floats += n;
  }
  std::string bytes = safetensors_header(path.string(), entries);
  bytes.append(floats * 4, '\0');
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(ImageHeadsBad, ShapesAndExtraTensors) {
  const fs::path dir = testing_util::fresh_test_dir("image_heads_");
  // A heim head whose weight is [2, 768]: two outputs, not one.
  write_zero_tensors(dir / "two.safetensors", {{"weight", {2, 768}}, {"bias", {2}}});
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_heim_aesthetic_weights(dir / "two.safetensors"); }),
      HasSubstr("two.safetensors: tensor 'weight' is F32 [2, 768]; the heim-aesthetic "
                "head expects [1, D] floats"));
  // A bias of another length than the weight's rows.
  write_zero_tensors(dir / "bias.safetensors", {{"weight", {1, 768}}, {"bias", {1, 1}}});
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_heim_aesthetic_weights(dir / "bias.safetensors"); }),
      HasSubstr("tensor 'bias' is F32 [1, 1]; the heim-aesthetic head expects [1]"));
  // An extra tensor beside a valid 768-wide heim head.
  write_zero_tensors(dir / "extra.safetensors",
                     {{"weight", {1, 768}}, {"bias", {1}}, {"layers.0.weight", {4, 768}}});
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_heim_aesthetic_weights(dir / "extra.safetensors"); }),
      HasSubstr("holds tensor 'layers.0.weight', which the heim-aesthetic head does not "
                "have"));
  // LAION's MLP whose second layer does not take the first one's 1024 outputs.
  write_zero_tensors(dir / "mlp.safetensors", {{"layers.0.weight", {1024, 768}},
                                               {"layers.0.bias", {1024}},
                                               {"layers.2.weight", {128, 1000}}});
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_laion_aesthetic_weights(dir / "mlp.safetensors"); }),
      HasSubstr("tensor 'layers.2.weight' is F32 [128, 1000]; the laion-aesthetic head "
                "expects [D, 1024]"));
  // Special-care embeddings of another width than the concepts', and 16 concepts.
  write_zero_tensors(dir / "sc.safetensors",
                     {{"concept_embeds", {17, 768}}, {"special_care_embeds", {3, 512}}});
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_safety_checker_weights(dir / "sc.safetensors"); }),
      HasSubstr("'special_care_embeds' is F32 [3, 512]; the safety-checker head expects "
                "[3, 768]"));
  write_zero_tensors(dir / "sc16.safetensors", {{"concept_embeds", {16, 768}}});
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_safety_checker_weights(dir / "sc16.safetensors"); }),
      HasSubstr("expects [17, D]"));
}

TEST(ImageHeadsBad, EmbeddingsOfAnotherWidth) {
  // 768-wide weights (the published width) against the 32-wide fixture embeddings.
  ImageHeadLinear w;
  w.weight = Matrix(1, 768);
  w.bias = {0.0f};
  EXPECT_THAT(
      error_of<UsageError>([&] { (void)heim_aesthetic_scores(fixture_images(), "E.npy", w); }),
      HasSubstr("E.npy holds 32-wide embeddings but the heim-aesthetic weights take "
                "768-wide ones"));
  EXPECT_THAT(error_of<UsageError>([] {
                (void)q16_scores(Matrix(2, 768), "big.npy",
                                 read_q16_weights(kDir / "q16_prompts.p"));
              }),
              HasSubstr("big.npy holds 768-wide embeddings but the q16 weights take 32-wide"));
}

TEST(ImageHeadsBad, ZeroEmbedding) {
  Matrix images = fixture_images();
  for (std::size_t k = 0; k < images.cols; ++k) images.at(3, k) = 0.0f;
  EXPECT_THAT(error_of<InputError>([&] {
                (void)laion_aesthetic_scores(images, "E.npy",
                                             read_laion_aesthetic_weights(kDir / "laion.pth"));
              }),
              HasSubstr("E.npy: the embedding in row 3 has norm 0"));
}

TEST(ImageHeadsBad, HostilePickles) {
  EXPECT_THAT(error_of<InputError>([] { (void)read_q16_weights(kDir / "bad/system.p"); }),
              HasSubstr("refers to the Python global 'posix.system'"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_q16_weights(kDir / "bad/int64.p"); }),
              HasSubstr("dtype 'i8'"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_q16_weights(kDir / "bad/object.p"); }),
              HasSubstr("bad/object.p"));
  EXPECT_THAT(error_of<InputError>([] { (void)read_q16_weights(kDir / "bad/short_data.p"); }),
              HasSubstr("pickles a 2 x 64 array of 4-byte floats with 256 bytes of data"));
  // A torch checkpoint's own hostile pickles are refused by the shared reader.
  const fs::path torch_hostile = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/io/torch/hostile";
  EXPECT_THAT(error_of<InputError>([&] {
                (void)read_safety_checker_weights(torch_hostile / "builtins_eval_legacy.pth");
              }),
              HasSubstr("builtins"));
}

TEST(ImageHeadsBad, TruncatedAndMutatedPickles) {
  // Every prefix and 2,000 seeded byte mutations of both Q16 pickle forms: a matrix or an
  // InputError, never a crash or another exception.
  for (const char* name : {"q16_prompts.p", "q16_protocol5.p"}) {
    std::ifstream in(kDir / name, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto parse = [](const std::string& bytes) {
      try {
        (void)parse_pickled_numpy_matrix(
            {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "m.p");
      } catch (const InputError&) {
      }
    };
    for (std::size_t n = 0; n < whole.size(); ++n) parse(whole.substr(0, n));
    std::uint64_t state = 44;
    for (int k = 0; k < 2000; ++k) {
      std::string m = whole;
      for (int flips = 0; flips < 1 + k % 3; ++flips) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        m[(state >> 33) % m.size()] = static_cast<char>(state >> 56);
      }
      parse(m);
    }
  }
}

TEST(ImageHeadsBad, ClipIqaPromptsThatDoNotMatch) {
  const fs::path dir = testing_util::fresh_test_dir("image_heads_");
  const fs::path prompts = fs::path(VLBIAS_SOURCE_DIR) / "data/clip_iqa/prompts.csv";
  // Embeddings of fewer prompts than the table lists.
  write_npy(dir / "few.npy", MatrixView(Matrix(4, 32)));
  EXPECT_THAT(error_of<UsageError>([&] { (void)read_clip_iqa_weights(dir / "few.npy", prompts); }),
              HasSubstr("few.npy holds 4 embeddings but the prompts table"));
  // A pair without its negative prompt.
  {
    std::ofstream(dir / "p.csv") << "name,polarity,text\nq,positive,Good photo.\nr,negative,x\n"
                                    "r,positive,y\n";
  }
  Matrix three(3, 32);
  for (std::size_t i = 0; i < three.data.size(); ++i) three.data[i] = 1.0f + static_cast<float>(i);
  write_npy(dir / "three.npy", MatrixView(three));
  EXPECT_THAT(
      error_of<InputError>([&] { (void)read_clip_iqa_weights(dir / "three.npy", dir / "p.csv"); }),
      HasSubstr("pair 'q' has no negative prompt"));
}

}  // namespace in_image_heads_test
}  // namespace
}  // namespace vlbias
