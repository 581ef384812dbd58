// `vlbias features` and `vlbias metric fid|fd --real-images --fake-images --model` run as the
// real executable on the width-scaled random FID Inception of tests/fixtures/encode/inception
// (its features from an independent PyTorch forward, tools/make_inception_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "test_util.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_features_test {

namespace fs = std::filesystem;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using json = nlohmann::json;

const fs::path kFixture = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/inception";

// The error of `got` at the scale of `want`, shapes checked (testing_util::scaled_error).
double scaled_error(const Matrix& got, const Matrix& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  return testing_util::scaled_error(got.data, want.data);
}

TEST(CliFeatures, WritesRawInceptionFeaturesInEitherFidPreprocessingWithAManifest) {
  const fs::path dir = temp_dir();
  for (const char* mode : {"pytorch-fid", "clean-fid"}) {
    SCOPED_TRACE(mode);
    const fs::path out = dir / fmt::format("{}.npy", mode);
    const auto r = run_cli(fmt::format(
        "--quiet features --model '{}' --images '{}' --preprocess {} --out '{}' --batch 2",
        kFixture.string(), (kFixture / "images.csv").string(), mode, out.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Matrix want = read_npy_matrix(kFixture / fmt::format("features_{}.npy", mode));
    EXPECT_LT(scaled_error(read_npy_matrix(out), want), 1e-4);
    const json manifest = json::parse(read_file(dir / fmt::format("{}.manifest.json", mode)));
    EXPECT_EQ(manifest["model"]["architecture"], "inception-v3-fid");
    EXPECT_EQ(manifest["preprocessing"]["mode"], mode);
    EXPECT_EQ(manifest["output"]["normalized"], false);
  }
}

TEST(CliFeatures, BadModelsAndPreprocessingsAreUsageOrInputErrors) {
  const fs::path dir = temp_dir();
  auto r = run_cli(fmt::format("--quiet features --model '{}' --images '{}' --out '{}'",
                               (fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/nn").string(),
                               (kFixture / "images.csv").string(), (dir / "x.npy").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a model this tool reads"), std::string::npos) << r.err;
  r = run_cli(fmt::format("--quiet features --model '{}' --images '{}' --preprocess tf --out '{}'",
                          kFixture.string(), (kFixture / "images.csv").string(),
                          (dir / "x.npy").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected pytorch-fid"), std::string::npos) << r.err;
}

// Copies the fixture's images into `to` (a folder of its own per set).
void copy_images(const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(kFixture / "images")) {
    fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
  }
}

TEST(CliFeatures, MetricFidFromImagesEqualsFidOfTheirFeaturesAndReadsTheCacheTheSecondTime) {
  const fs::path dir = temp_dir();
  copy_images(dir / "real");
  copy_images(dir / "fake");
  fs::remove(dir / "fake" / "exact_299x299.jpg");
  const std::string model = kFixture.string();
  // The reference path: features written by `vlbias features`, then `metric fid` on the files.
  for (const char* set : {"real", "fake"}) {
    const auto r =
        run_cli(fmt::format("--quiet features --model '{}' --images '{}' --out '{}'", model,
                            (dir / set).string(), (dir / fmt::format("{}.npy", set)).string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const auto files = run_cli(fmt::format("--quiet metric fid --real '{}' --fake '{}'",
                                         (dir / "real.npy").string(), (dir / "fake.npy").string()));
  ASSERT_EQ(files.exit_code, 0) << files.err;
  const std::string from_images =
      fmt::format("--quiet metric fid --real-images '{}' --fake-images '{}' --model '{}'",
                  (dir / "real").string(), (dir / "fake").string(), model);
  const auto first = run_cli(from_images);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const json a = json::parse(files.out), b = json::parse(first.out);
  EXPECT_DOUBLE_EQ(b["fid"].get<double>(), a["fid"].get<double>());
  EXPECT_EQ(b["features"]["sets"][0]["from_cache"], false);
  EXPECT_EQ(b["features"]["sets"][1]["encoded"], 4);
  const auto second = run_cli(from_images);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const json c = json::parse(second.out);
  EXPECT_EQ(c["features"]["sets"][0]["from_cache"], true);
  EXPECT_EQ(c["features"]["sets"][1]["from_cache"], true);
  EXPECT_DOUBLE_EQ(c["fid"].get<double>(), a["fid"].get<double>());
  // One image's bytes change: that set's features are computed anew, the other's are reused.
  fs::copy_file(kFixture / "images/odd_97x61.jpg", dir / "fake" / "grey_50x80.png",
                fs::copy_options::overwrite_existing);
  const json d = json::parse(run_cli(from_images).out);
  EXPECT_EQ(d["features"]["sets"][0]["from_cache"], true);
  EXPECT_EQ(d["features"]["sets"][1]["from_cache"], false);
  EXPECT_NE(d["fid"].get<double>(), a["fid"].get<double>());
  // fd names the feature space, and refuses a model of another one.
  const auto fd = run_cli(fmt::format(
      "--quiet metric fd --features inception --real-images '{}' --fake-images '{}' --model '{}'",
      (dir / "real").string(), (dir / "fake").string(), model));
  ASSERT_EQ(fd.exit_code, 0) << fd.err;
  EXPECT_DOUBLE_EQ(json::parse(fd.out)["fd"].get<double>(), d["fid"].get<double>());
  const auto wrong = run_cli(fmt::format(
      "--quiet metric fd --features dinov2 --real-images '{}' --fake-images '{}' --model '{}'",
      (dir / "real").string(), (dir / "fake").string(), model));
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("is a inception-v3-fid model"), std::string::npos) << wrong.err;
}

// The EXIF-oriented copies of one photo (tests/data/images/real/derived): the same pixels under
// orientation tags 1 .. 8.
fs::path oriented_folder(const fs::path& dir) {
  const fs::path derived = fs::path(VLBIAS_SOURCE_DIR) / "tests/data/images/real/derived";
  fs::create_directories(dir);
  for (int v = 1; v <= 8; ++v) {
    fs::copy_file(derived / fmt::format("exif_orientation_{}.jpg", v),
                  dir / fmt::format("o{}.jpg", v));
  }
  return dir;
}

TEST(CliFeatures, MetricsFromImagesApplyExifOrientationOnlyWithTheFlag) {
  const fs::path dir = temp_dir();
  copy_images(dir / "real");
  const fs::path fake = oriented_folder(dir / "fake");
  const std::string model = kFixture.string();
  // The reference: FID of feature files that `vlbias features` wrote with and without the flag.
  double want[2];
  for (const bool flag : {false, true}) {
    const std::string exif = flag ? " --exif-transpose" : "";
    for (const char* set : {"real", "fake"}) {
      const auto r = run_cli(fmt::format(
          "--quiet features --model '{}' --images '{}' --out '{}'{}", model, (dir / set).string(),
          (dir / fmt::format("{}{}.npy", set, flag)).string(), exif));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const auto f = run_cli(fmt::format("--quiet metric fid --real '{}' --fake '{}'",
                                       (dir / fmt::format("real{}.npy", flag)).string(),
                                       (dir / fmt::format("fake{}.npy", flag)).string()));
    ASSERT_EQ(f.exit_code, 0) << f.err;
    want[flag] = json::parse(f.out)["fid"].get<double>();
  }
  ASSERT_NE(want[0], want[1]);
  for (const bool flag : {false, true}) {
    SCOPED_TRACE(flag ? "--exif-transpose" : "as stored");
    const auto r = run_cli(fmt::format(
        "--quiet metric fid --real-images '{}' --fake-images '{}' --model '{}'{}",
        (dir / "real").string(), fake.string(), model, flag ? " --exif-transpose" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Each setting has its own cache entry: never the other setting's features.
    EXPECT_DOUBLE_EQ(json::parse(r.out)["fid"].get<double>(), want[flag]);
  }
  const auto is =
      run_cli(fmt::format("--quiet metric is --images '{}' --model '{}' --splits 1 "
                          "--exif-transpose",
                          fake.string(), model));
  EXPECT_EQ(is.exit_code, 0) << is.err;
}

// The cache entries (the .npy of each) of the image set `stem` in `cache`, by the preprocessing
// mode their manifests name.
std::map<std::string, fs::path> cache_entries(const fs::path& cache, const std::string& stem) {
  std::map<std::string, fs::path> out;
  const std::string suffix = ".manifest.json";
  for (const auto& e : fs::directory_iterator(cache)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(stem + ".") || !name.ends_with(suffix)) continue;
    const json m = json::parse(read_file(e.path()));
    out[m["preprocessing"]["mode"].get<std::string>()] =
        cache / (name.substr(0, name.size() - suffix.size()) + ".npy");
  }
  return out;
}

TEST(CliFeatures, ACacheEntryOfAnotherComputationIsComputedAgainNotRead) {
  const fs::path dir = temp_dir();
  copy_images(dir / "real");
  copy_images(dir / "fake");
  fs::remove(dir / "fake" / "exact_299x299.jpg");
  const auto fid = [&](const char* mode) {
    return run_cli(
        fmt::format("metric fid --real-images '{}' --fake-images '{}' --model '{}' --preprocess {}",
                    (dir / "real").string(), (dir / "fake").string(), kFixture.string(), mode));
  };
  ASSERT_EQ(fid("clean-fid").exit_code, 0);
  const auto first = fid("pytorch-fid");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const double want = json::parse(first.out)["fid"].get<double>();
  const std::map<std::string, fs::path> entries = cache_entries(dir / ".vlbias-features", "real");
  ASSERT_EQ(entries.size(), 2u);
  // The clean-fid entry under the pytorch-fid entry's name: its file name says nothing.
  const fs::path from = entries.at("clean-fid"), to = entries.at("pytorch-fid");
  for (const char* ext : {".npy", ".rows.csv", ".manifest.json"}) {
    fs::copy_file(from.parent_path() / (from.stem().string() + ext),
                  to.parent_path() / (to.stem().string() + ext),
                  fs::copy_options::overwrite_existing);
  }
  const auto again = fid("pytorch-fid");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json a = json::parse(again.out);
  EXPECT_EQ(a["features"]["sets"][0]["from_cache"], false);
  EXPECT_EQ(a["features"]["sets"][1]["from_cache"], true);
  EXPECT_DOUBLE_EQ(a["fid"].get<double>(), want);
  EXPECT_NE(again.err.find("are not those of this model and these images (its manifest's "
                           "preprocessing is"),
            std::string::npos)
      << again.err;
  // Computed again and kept: read back the next time.
  const json b = json::parse(fid("pytorch-fid").out);
  EXPECT_EQ(b["features"]["sets"][0]["from_cache"], true);
  EXPECT_DOUBLE_EQ(b["fid"].get<double>(), want);
  // A rows file whose input_row is not a number: exit 2 naming the file, line and column.
  const fs::path rows = to.parent_path() / (to.stem().string() + ".rows.csv");
  std::string text = read_file(rows);
  const std::size_t line2 = text.find('\n') + 1;
  const std::size_t cell = text.find(',', line2) + 1;
  text.replace(cell, text.find(',', cell) - cell, "abc");
  std::ofstream(rows, std::ios::binary) << text;
  const auto bad = fid("pytorch-fid");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find(".rows.csv: line 2, column 'input_row': 'abc' is not a row number"),
            std::string::npos)
      << bad.err;
}

TEST(CliFeatures, FeatureFilesAndImagesCannotBeMixed) {
  const fs::path dir = temp_dir();
  const auto r =
      run_cli(fmt::format("--quiet metric kid --real '{}' --fake-images '{}' --model '{}'",
                          (kFixture / "features_clean-fid.npy").string(),
                          (kFixture / "images").string(), kFixture.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a mix"), std::string::npos) << r.err;
}

}  // namespace in_features_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_features_test {

// The geo-diversity example started from images (examples/geo_diversity_images) gives the same
// results as the audit over feature files that `vlbias features` wrote from the same images.
TEST(CliFeatures, GeoAuditFromImagesEqualsTheAuditOfTheirFeatureFiles) {
  const fs::path dir = temp_dir();
  const fs::path example = fs::path(VLBIAS_SOURCE_DIR) / "examples/geo_diversity_images";
  for (const char* part : {"real", "generated", "real.csv", "generated.csv"}) {
    fs::copy(example / part, dir / part, fs::copy_options::recursive);
  }
  std::string spec = read_file(example / "spec.yaml");
  const std::string rel = "../../tests/fixtures/encode/inception";
  spec.replace(spec.find(rel), rel.size(), kFixture.string());
  std::ofstream(dir / "spec.yaml") << spec;
  auto r = run_cli(fmt::format("--quiet audit '{}' --out '{}'", (dir / "spec.yaml").string(),
                               (dir / "from_images").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* set : {"real", "generated"}) {
    r = run_cli(fmt::format("--quiet features --model '{}' --images '{}' --out '{}'",
                            kFixture.string(), (dir / fmt::format("{}.csv", set)).string(),
                            (dir / fmt::format("{}.npy", set)).string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The files spec: features given, no features_model.
  std::string files =
      spec.substr(0, spec.find("features_model:")) + spec.substr(spec.find("real:"));
  files.replace(files.find("table: real.csv"), 15, "table: real.csv\n  features: real.npy");
  files.replace(files.find("table: generated.csv"), 20,
                "table: generated.csv\n  features: generated.npy");
  std::ofstream(dir / "files.yaml") << files;
  r = run_cli(fmt::format("--quiet audit '{}' --out '{}'", (dir / "files.yaml").string(),
                          (dir / "from_files").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << files;
  const json a = json::parse(read_file(dir / "from_images/results.json"));
  const json b = json::parse(read_file(dir / "from_files/results.json"));
  for (const char* analysis : {"region", "object_region", "distribution"}) {
    SCOPED_TRACE(analysis);
    EXPECT_EQ(a["analyses"][analysis], b["analyses"][analysis]);
  }
  EXPECT_EQ(a["analyses"]["distribution"]["cells"].size(), 3u);
  // The second run reads the kept features.
  EXPECT_TRUE(fs::exists(dir / ".vlbias-features"));
}

}  // namespace in_features_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_features_test {

TEST(CliFeatures, InceptionLogitsMatchTorchAndTheInceptionScoreReadsTheUnbiasedOnes) {
  const fs::path dir = temp_dir();
  const std::string images = (kFixture / "images.csv").string();
  auto r =
      run_cli(fmt::format("--quiet features --model '{}' --images '{}' --output logits --out '{}'",
                          kFixture.string(), images, (dir / "logits.npy").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(scaled_error(read_npy_matrix(dir / "logits.npy"),
                         read_npy_matrix(kFixture / "logits_pytorch-fid.npy")),
            1e-4);
  r = run_cli(
      fmt::format("--quiet features --model '{}' --images '{}' --output logits-unbiased --out '{}'",
                  kFixture.string(), images, (dir / "unbiased.npy").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto from_logits = run_cli(
      fmt::format("--quiet metric is --logits '{}' --splits 2", (dir / "unbiased.npy").string()));
  ASSERT_EQ(from_logits.exit_code, 0) << from_logits.err;
  // A copy of the images: the feature cache is written beside them, not into the source tree.
  copy_images(dir / "images");
  fs::copy_file(kFixture / "images.csv", dir / "images.csv");
  const auto from_images =
      run_cli(fmt::format("--quiet metric is --images '{}' --model '{}' --splits 2",
                          (dir / "images.csv").string(), kFixture.string()));
  ASSERT_EQ(from_images.exit_code, 0) << from_images.err;
  const json a = json::parse(from_logits.out), b = json::parse(from_images.out);
  EXPECT_DOUBLE_EQ(a["inception_score"].get<double>(), b["inception_score"].get<double>());
  EXPECT_GT(a["inception_score"].get<double>(), 1.0);
  // With the bias the score differs: the unbiased logits are what is read.
  const auto biased = run_cli(
      fmt::format("--quiet metric is --logits '{}' --splits 2", (dir / "logits.npy").string()));
  EXPECT_NE(json::parse(biased.out)["inception_score"].get<double>(),
            a["inception_score"].get<double>());
  const auto neither = run_cli("--quiet metric is --splits 2");
  EXPECT_EQ(neither.exit_code, 2);
}

}  // namespace in_features_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_features_test {

// `vlbias features` on the tiny random DINOv2 folders (tests/fixtures/encode/dinov2, written by
// tools/make_dinov2_fixtures.py with an independent float64 PyTorch forward), with the
// --image-size and --positions options the fixture's runs use.
TEST(CliFeatures, Dinov2FeaturesMatchTorchInEveryFixtureRun) {
  const fs::path dir = temp_dir();
  const auto& expected = testing_util::fixture_json("encode/dinov2/expected.json");
  std::string table = "path\n";
  for (const auto& p : expected["images"]) {
    table += (fs::path(VLBIAS_SOURCE_DIR) / p.get<std::string>()).string() + "\n";
  }
  std::ofstream(dir / "images.csv") << table;
  int k = 0;
  for (const auto& run : expected["runs"]) {
    SCOPED_TRACE(run.dump().substr(0, 80));
    const fs::path out = dir / fmt::format("run{}.npy", k++);
    const std::string size = run["image_size"].is_null()
                                 ? ""
                                 : fmt::format("--image-size {}", run["image_size"].get<int>());
    const auto r = run_cli(fmt::format(
        "--quiet features --model '{}' --images '{}' --positions {} {} --preprocess {} --out '{}'",
        (fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/dinov2" /
         run["model"].get<std::string>())
            .string(),
        (dir / "images.csv").string(), run["positions"].get<std::string>(), size,
        run["preprocess"].get<std::string>(), out.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Matrix want(run["features"].size(), run["features"][0].size());
    for (std::size_t i = 0; i < want.rows; ++i) {
      for (std::size_t j = 0; j < want.cols; ++j) want.at(i, j) = run["features"][i][j];
    }
    EXPECT_LT(scaled_error(read_npy_matrix(out), want), 1e-5);
    const json manifest = json::parse(read_file(dir / fmt::format("run{}.manifest.json", k - 1)));
    EXPECT_EQ(manifest["model"]["architecture"], "dinov2");
  }
  const auto bad = run_cli(
      fmt::format("--quiet features --model '{}' --images '{}' --positions nearest --out '{}'",
                  (fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/dinov2/gelu_p4").string(),
                  (dir / "images.csv").string(), (dir / "bad.npy").string()));
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace in_features_test
}  // namespace
}  // namespace vlbias
