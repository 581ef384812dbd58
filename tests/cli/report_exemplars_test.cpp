// report.images of the geo-diversity audit: exemplar thumbnails per (region, object) cell, a
// seeded sample embedded as JPEG data URIs in results.json and report.html within a size
// budget; images that cannot be read are named, never an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "report_exemplars_util.h"
#include "vlbias/core/matrix.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_report_exemplars_test {

namespace fs = std::filesystem;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::shell_quote;
using cli_util::temp_dir;
using exemplars_test::audit;
using exemplars_test::count;

const fs::path& kExample = exemplars_test::kGeoImages;

void write_random_features(const fs::path& file, std::size_t rows, std::uint64_t seed) {
  Matrix m(rows, 8);
  Rng rng(seed);
  for (float& v : m.data) v = static_cast<float>(rng.uniform01());
  write_npy(file, m);
}

// The example's tables with random 8-d features files (no feature model), the generated
// table's paths made absolute into the example; `missing_first` points its first row at a file
// that does not exist. Returns the spec's path; `report` is the spec's report: value.
fs::path write_study(const std::string& report, std::uint64_t seed, bool missing_first = false,
                     bool with_clip = false) {
  const fs::path dir = temp_dir();
  fs::copy_file(kExample / "real.csv", dir / "real.csv", fs::copy_options::overwrite_existing);
  std::ifstream in(kExample / "generated.csv");
  std::ofstream out(dir / "generated.csv");
  std::string line;
  std::getline(in, line);
  out << line << "\n";
  for (std::size_t row = 0; std::getline(in, line); ++row) {
    const std::string rest = line.substr(line.find(','));
    const std::string path = missing_first && row == 0
                                 ? (dir / "gone/Africa_ball_00.jpg").string()
                                 : (kExample / line.substr(0, line.find(','))).string();
    out << path << rest << "\n";
  }
  out.close();
  write_random_features(dir / "real.npy", 72, 1);
  write_random_features(dir / "gen.npy", 72, 2);
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << "kind: geo-diversity\nseed: " << seed
                      << "\nreal: {table: real.csv, features: real.npy}\n"
                      << (with_clip ? "generated: {table: generated.csv, features: gen.npy, clip: "
                                      "clip.npy}\nobjects: {table: objects.csv, embeddings: "
                                      "texts.npy}\n"
                                    : "generated: {table: generated.csv, features: gen.npy}\n")
                      << "analyses: {region: {k: 3, bootstrap: 0}, object_region: false,\n"
                         "           consistency: "
                      << (with_clip ? "{bootstrap: 0}" : "false") << ", distribution: false}\n"
                      << (report.empty() ? "" : "report: " + report + "\n");
  return spec;
}

std::vector<std::string> sampled_paths(const nlohmann::json& results) {
  std::vector<std::string> paths;
  for (const auto& c : results["exemplars"]["cells"]) {
    for (const auto& im : c["images"]) paths.push_back(im["path"].get<std::string>());
  }
  return paths;
}

TEST(ReportExemplars, TheSampleIsTheSameForASeedAndEveryThumbnailIsEmbedded) {
  const fs::path spec = write_study("{images: 3}", 7);
  const auto a = audit(spec, temp_dir() / "a");
  const auto b = audit(spec, temp_dir() / "b");
  ASSERT_TRUE(a.contains("exemplars"));
  ASSERT_EQ(a["exemplars"]["cells"].size(), 6u) << "3 regions x 2 objects";
  EXPECT_EQ(sampled_paths(a).size(), 18u);
  EXPECT_EQ(sampled_paths(a), sampled_paths(b));
  EXPECT_EQ(a["exemplars"], b["exemplars"]) << "thumbnails are deterministic too";
  for (const auto& c : a["exemplars"]["cells"]) {
    for (const auto& im : c["images"]) {
      EXPECT_EQ(im["status"], "shown") << im["path"];
      EXPECT_EQ(im["thumbnail"].get<std::string>().rfind("data:image/jpeg;base64,", 0), 0u);
      std::string own = "/";  // built in steps: GCC 12 -Wrestrict misfires on "/" + s
      own += c["region"].get<std::string>();
      own += "_";
      own += c["object"].get<std::string>();
      own += "_";
      EXPECT_NE(im["path"].get<std::string>().find(own), std::string::npos)
          << "a cell's images are its own";
    }
  }
  const std::string html = read_file(temp_dir() / "a/report.html");
  EXPECT_EQ(count(html, "<img class=\"exemplar\" src=\"data:image/jpeg;base64,"), 18u);
  EXPECT_NE(html.find("Exemplar images per region and object"), std::string::npos);

  const auto other = audit(write_study("{images: 3}", 8), temp_dir() / "c");
  EXPECT_NE(sampled_paths(a), sampled_paths(other)) << "another seed draws another sample";

  // A re-render reads the thumbnails from results.json alone.
  const std::string before = read_file(temp_dir() / "a/report.html");
  fs::remove(temp_dir() / "a/report.html");
  const auto r = run_cli("--quiet report " + shell_quote((temp_dir() / "a").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "a/report.html"), before);
}

TEST(ReportExemplars, WithCLIPScoresEachCellAlsoShowsItsLowestScoredImages) {
  const fs::path spec = write_study("{images: 2}", 7, false, true);
  const fs::path dir = spec.parent_path();
  // CLIP embeddings (4-d) and the texts "ball" = e0, "box" = e1: CLIPScore (raw) is the cosine.
  Matrix clip(72, 4);
  Rng rng(3);
  for (float& v : clip.data) v = static_cast<float>(rng.uniform01());
  write_npy(dir / "clip.npy", clip);
  Matrix texts(2, 4);
  texts.data[0] = 1.0f;
  texts.data[5] = 1.0f;
  write_npy(dir / "texts.npy", texts);
  std::ofstream(dir / "objects.csv") << "object\nball\nbox\n";
  const auto x = audit(spec, temp_dir() / "run");
  ASSERT_TRUE(x["analyses"].contains("consistency"));
  // The expected two lowest per cell, from the cosines computed here.
  std::ifstream in(kExample / "generated.csv");
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::vector<std::pair<double, std::string>>> by_cell;
  for (std::size_t row = 0; std::getline(in, line); ++row) {
    const std::string path = (kExample / line.substr(0, line.find(','))).string();
    const bool ball = line.find(",ball") != std::string::npos;
    const float* v = clip.row(row);
    const double norm = std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2] +
                                  double(v[3]) * v[3]);
    const std::string region =
        line.substr(line.find(',') + 1, line.rfind(',') - line.find(',') - 1);
    by_cell[region + (ball ? "/ball" : "/box")].emplace_back(v[ball ? 0 : 1] / norm, path);
  }
  ASSERT_EQ(x["exemplars"]["cells"].size(), 6u);
  for (const auto& c : x["exemplars"]["cells"]) {
    auto expected = by_cell[c["region"].get<std::string>() + "/" + c["object"].get<std::string>()];
    std::sort(expected.begin(), expected.end());
    std::vector<std::string> lowest;
    for (const auto& im : c["images"]) {
      if (im["why"].get<std::string>().find("lowest CLIPScore") != std::string::npos) {
        lowest.push_back(im["path"].get<std::string>());
        EXPECT_TRUE(im.contains("clipscore"));
      }
    }
    ASSERT_EQ(lowest.size(), 2u) << c.dump().substr(0, 300);
    std::sort(lowest.begin(), lowest.end());
    std::vector<std::string> want{expected[0].second, expected[1].second};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(lowest, want);
  }
}

TEST(ReportExemplars, ASmallBudgetLeavesThumbnailsOutAndThePageSaysSo) {
  const auto x = audit(write_study("{images: 3, image_budget: 6000}", 7), temp_dir() / "run");
  const auto& e = x["exemplars"];
  EXPECT_LE(e["bytes"].get<std::size_t>(), 6000u);
  EXPECT_GT(e["bytes"].get<std::size_t>(), 0u);
  const std::size_t dropped = e["left_out_for_budget"].get<std::size_t>();
  EXPECT_GT(dropped, 0u);
  std::size_t over = 0, shown = 0;
  for (const auto& c : e["cells"]) {
    for (const auto& im : c["images"]) {
      over += im["status"] == "over budget";
      shown += im["status"] == "shown";
    }
  }
  EXPECT_EQ(over, dropped);
  EXPECT_EQ(over + shown, 18u);
  const std::string html = read_file(temp_dir() / "run/report.html");
  EXPECT_EQ(count(html, "<img class=\"exemplar\""), shown);
  EXPECT_NE(html.find(std::to_string(dropped) + " thumbnails were left out to stay within"),
            std::string::npos);
}

TEST(ReportExemplars, ImagesFalseOrNoReportKeyWritesNone) {
  for (const std::string report : {"{images: false}", ""}) {
    SCOPED_TRACE(report);
    const fs::path out = temp_dir() / ("run" + std::to_string(report.size()));
    const auto x = audit(write_study(report, 7), out);
    EXPECT_FALSE(x.contains("exemplars"));
    EXPECT_EQ(read_file(out / "report.html").find("<img"), std::string::npos);
  }
}

TEST(ReportExemplars, AnImageMissingAtAuditTimeIsNamedInThePage) {
  // 12 per cell: every image of the cell, so the missing one is drawn.
  const auto x = audit(write_study("{images: 12}", 7, true), temp_dir() / "run");
  const std::string gone = (temp_dir() / "gone/Africa_ball_00.jpg").string();
  bool listed = false;
  for (const auto& c : x["exemplars"]["cells"]) {
    for (const auto& im : c["images"]) {
      if (im["path"] == gone) {
        listed = true;
        EXPECT_EQ(im["status"], "missing");
        EXPECT_FALSE(im.contains("thumbnail"));
      }
    }
  }
  EXPECT_TRUE(listed);
  const std::string html = read_file(temp_dir() / "run/report.html");
  EXPECT_NE(html.find("Not shown: " + gone + " (missing)"), std::string::npos);
  EXPECT_EQ(count(html, "<img class=\"exemplar\""), 71u);
}

TEST(ReportExemplars, ABadImagesValueIsASpecErrorNamingTheKey) {
  for (const std::string bad : {"0", "-2", "2.5", "true", "\"3\"", "1001"}) {
    SCOPED_TRACE(bad);
    const fs::path spec = write_study("{images: " + bad + "}", 7);
    const auto r = run_cli("--quiet audit " + shell_quote(spec.string()) + " --out " +
                           shell_quote((temp_dir() / "run").string()));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("report.images"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("or false"), std::string::npos) << r.err;
  }
  const fs::path spec = write_study("{pictures: 3}", 7);
  const auto r = run_cli("--quiet audit " + shell_quote(spec.string()) + " --out " +
                         shell_quote((temp_dir() / "run").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pictures"), std::string::npos) << r.err;
}

}  // namespace in_report_exemplars_test
}  // namespace
}  // namespace vlbias
