// report.images of the visual-stereotypes (per identity x prompt set, with the default images'
// highest per-image pull), lvlm-counterfactual (per group, with the images whose answers scored
// highest) and dual-encoder (per group) audits: the grids, their picks against orderings worked
// out here, images: false, and images that cannot be shown. The geo-diversity grids:
// report_exemplars_test.cpp; the picks themselves: tests/audits/exemplars_test.cpp.
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
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_report_exemplars_kinds_test {

namespace fs = std::filesystem;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::shell_quote;
using cli_util::temp_dir;
using exemplars_test::add_path_column;
using exemplars_test::audit;
using exemplars_test::count;
using exemplars_test::jpegs;
using exemplars_test::write_spec;

const fs::path kSource = VLBIAS_SOURCE_DIR;

std::size_t shown(const nlohmann::json& exemplars) {
  std::size_t n = 0;
  for (const auto& c : exemplars["cells"]) {
    for (const auto& im : c["images"]) n += im["status"] == "shown";
  }
  return n;
}

// ------------------------------------------------------------------ visual-stereotypes

// The visual example's SeeGULL, attributes and pull embeddings, with the pull table's rows
// given images img_<row>.jpg (copies of real JPEGs) in `path`, unless `with_paths` is false.
fs::path write_visual_study(const std::string& report, bool with_paths = true) {
  const fs::path dir = temp_dir();
  const fs::path ex = kSource / "examples/visual_stereotypes";
  for (const char* f : {"seegull.csv", "visual_attr.csv", "pull.npy"}) {
    fs::copy_file(ex / f, dir / f, fs::copy_options::overwrite_existing);
  }
  const std::vector<fs::path> files = jpegs();
  fs::create_directories(dir / "img");
  std::size_t rows = 0;
  add_path_column(ex / "pull.csv", dir / "pull.csv", "path", [&](std::size_t row) {
    const std::string name = "img/img_" + std::to_string(row) + ".jpg";
    fs::copy_file(files[row % files.size()], dir / name, fs::copy_options::overwrite_existing);
    rows = row + 1;
    return name;
  });
  if (!with_paths)
    fs::copy_file(ex / "pull.csv", dir / "pull.csv", fs::copy_options::overwrite_existing);
  EXPECT_EQ(rows, 216u);
  return write_spec(dir,
                    "kind: visual-stereotypes\nseed: 7\nseegull: seegull.csv\n"
                    "visual_attributes: visual_attr.csv\n"
                    "pull: {table: pull.csv, embeddings: pull.npy}\n"
                    "analyses: {pull: {permutations: 200}}\n",
                    report);
}

// Per default row of the pull table, its pull worked out pair by pair: the mean cosine to the
// identity's stereotypical images minus the mean cosine to its non-stereotypical ones.
std::map<std::size_t, double> default_pulls(const fs::path& dir,
                                            std::map<std::size_t, std::string>& identity_of) {
  const Matrix e = read_npy_matrix(dir / "pull.npy");
  std::ifstream in(dir / "pull.csv");
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::map<std::string, std::vector<std::size_t>>> rows;
  for (std::size_t row = 0; std::getline(in, line); ++row) {
    const std::size_t a = line.find(','), b = line.find(',', a + 1);
    rows[line.substr(0, a)][line.substr(a + 1, b - a - 1)].push_back(row);
    identity_of[row] = line.substr(0, a);
  }
  const auto cosine = [&](std::size_t i, std::size_t j) {
    double dot = 0, ni = 0, nj = 0;
    for (std::size_t k = 0; k < e.cols; ++k) {
      dot += double(e.row(i)[k]) * e.row(j)[k];
      ni += double(e.row(i)[k]) * e.row(i)[k];
      nj += double(e.row(j)[k]) * e.row(j)[k];
    }
    return dot / std::sqrt(ni * nj);
  };
  std::map<std::size_t, double> pull;
  for (auto& [id, sets] : rows) {
    for (const std::size_t d : sets["default"]) {
      double s = 0, ns = 0;
      for (const std::size_t j : sets["stereotypical"]) s += cosine(d, j);
      for (const std::size_t j : sets["non-stereotypical"]) ns += cosine(d, j);
      pull[d] =
          s / double(sets["stereotypical"].size()) - ns / double(sets["non-stereotypical"].size());
    }
  }
  return pull;
}

TEST(ReportExemplarsVisual, EachIdentityAndSetHasAGridAndTheDefaultsShowTheirHighestPull) {
  const fs::path spec = write_visual_study("{images: 2}");
  const fs::path dir = spec.parent_path();
  const auto x = audit(spec, dir / "run");
  ASSERT_TRUE(x.contains("exemplars")) << x["notes"].dump();
  const auto& e = x["exemplars"];
  EXPECT_EQ(e["labels"], nlohmann::json::array({"identity", "set"}));
  EXPECT_EQ(e["score"]["key"], "pull");
  EXPECT_EQ(e["score"]["pick"], "highest");
  ASSERT_EQ(e["cells"].size(), 36u) << "12 identities x 3 sets";

  std::map<std::size_t, std::string> identity_of;
  const std::map<std::size_t, double> pulls = default_pulls(dir, identity_of);
  // Each identity's pull is the mean of its default images' own pulls.
  std::map<std::string, std::pair<double, std::size_t>> sums;
  for (const auto& [row, p] : pulls) {
    sums[identity_of[row]].first += p;
    ++sums[identity_of[row]].second;
  }
  for (const auto& id : x["analyses"]["pull"]["per_identity"]) {
    const auto& [sum, n] = sums[id["identity"].get<std::string>()];
    EXPECT_NEAR(id["pull"].get<double>(), sum / double(n), 1e-9) << id["identity"];
  }
  std::size_t highest = 0;
  for (const auto& c : e["cells"]) {
    SCOPED_TRACE(c["identity"].get<std::string>() + " " + c["set"].get<std::string>());
    std::vector<std::pair<double, std::size_t>> expected;  // (-pull, row) of the cell's defaults
    for (const auto& [row, p] : pulls) {
      if (identity_of[row] == c["identity"]) expected.emplace_back(-p, row);
    }
    std::sort(expected.begin(), expected.end());
    std::vector<std::string> want, got;
    for (std::size_t k = 0; k < 2; ++k) {
      want.push_back("img/img_" + std::to_string(expected[k].second) + ".jpg");
    }
    for (const auto& im : c["images"]) {
      EXPECT_EQ(im["status"], "shown") << im["path"];
      const std::string path = im["path"].get<std::string>();
      const std::size_t row = std::stoul(path.substr(path.find('_') + 1));
      EXPECT_EQ(identity_of[row], c["identity"]) << "a cell's images are its identity's";
      if (im["why"].get<std::string>().find("highest pull") != std::string::npos) {
        got.push_back(path);
        EXPECT_NEAR(im["pull"].get<double>(), pulls.at(row), 1e-9);
      }
    }
    if (c["set"] == "default") {
      // Listed after the sample, or marked in it: compared as a set.
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      EXPECT_EQ(got, want);
      highest += got.size();
    } else {
      EXPECT_TRUE(got.empty()) << "only default images have a pull of their own";
    }
  }
  EXPECT_EQ(highest, 24u);
  const std::string html = read_file(dir / "run/report.html");
  EXPECT_NE(html.find("Exemplar images per identity and set"), std::string::npos);
  EXPECT_EQ(count(html, "<img class=\"exemplar\" src=\"data:image/jpeg;base64,"), shown(e));
  EXPECT_NE(html.find("highest-pull images"), std::string::npos);
}

TEST(ReportExemplarsVisual, ImagesFalseNoPathColumnOrNoPullSectionGiveNoGrids) {
  {
    SCOPED_TRACE("images: false");
    const auto x = audit(write_visual_study("{images: false}"), temp_dir() / "off");
    EXPECT_FALSE(x.contains("exemplars"));
    EXPECT_EQ(read_file(temp_dir() / "off/report.html").find("<img"), std::string::npos);
  }
  {
    SCOPED_TRACE("no path column");
    const auto x = audit(write_visual_study("{images: 2}", false), temp_dir() / "nopath");
    EXPECT_FALSE(x.contains("exemplars"));
    EXPECT_NE(x["notes"].dump().find("has no image path column 'path' (pull.image)"),
              std::string::npos)
        << x["notes"].dump();
  }
  {
    SCOPED_TRACE("no pull section");
    const fs::path spec = write_visual_study("");
    std::ofstream(spec) << "kind: visual-stereotypes\nseegull: seegull.csv\n"
                           "visual_attributes: visual_attr.csv\n"
                           "captions: {table: pull.csv, image: path, caption: prompt}\n"
                           "report: {images: 2}\n";
    const auto r = run_cli("--quiet audit " + shell_quote(spec.string()) + " --out " +
                           shell_quote((temp_dir() / "nopull").string()));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("report.images shows the pull table's images"), std::string::npos)
        << r.err;
  }
}

// ------------------------------------------------------------------ lvlm-counterfactual

// Two groups of 4 images, two answers each: the image's toxicity is the higher of its two.
//   A: a0 .1 .5 -> .5   a1 .2 .3 -> .3   a2 .9 .05 -> .9   a3 .4 .4 -> .4
//   B: b0 .6 .7 -> .7   b1 .05 .1 -> .1  b2 .3 .8 -> .8    b3 .2 .2 -> .2 (no such file)
fs::path write_lvlm_study(const std::string& report) {
  const fs::path dir = temp_dir();
  const std::vector<fs::path> files = jpegs();
  const std::map<std::string, std::vector<double>> tox = {
      {"a0", {.1, .5}}, {"a1", {.2, .3}},  {"a2", {.9, .05}}, {"a3", {.4, .4}},
      {"b0", {.6, .7}}, {"b1", {.05, .1}}, {"b2", {.3, .8}},  {"b3", {.2, .2}}};
  std::ofstream out(dir / "generations.jsonl");
  std::size_t i = 0;
  for (const auto& [image, scores] : tox) {
    if (image != "b3") {
      fs::copy_file(files[i++], dir / (image + ".jpg"), fs::copy_options::overwrite_existing);
    }
    for (std::size_t seed = 0; seed < 2; ++seed) {
      out << "{\"set\":\"s" << image[1] << "\",\"seed\":" << seed << ",\"race\":\""
          << (image[0] == 'a' ? "A" : "B") << "\",\"image\":\"" << image
          << ".jpg\",\"toxicity\":" << scores[seed] << "}\n";
    }
  }
  out.close();
  return write_spec(dir,
                    "kind: lvlm-counterfactual\nseed: 3\ngenerations: generations.jsonl\n"
                    "columns: {set_key: [set, seed], group: [race], scores: [toxicity], "
                    "image: image}\n"
                    "analyses: {maxgap: {bootstrap: 0}, group_tests: false}\n",
                    report);
}

TEST(ReportExemplarsLvlm, EachGroupShowsItsImagesWhoseAnswersScoredHighest) {
  const fs::path spec = write_lvlm_study("{images: 2}");
  const auto x = audit(spec, temp_dir() / "run");
  ASSERT_TRUE(x.contains("exemplars")) << x["notes"].dump();
  const auto& e = x["exemplars"];
  EXPECT_EQ(e["labels"], nlohmann::json::array({"race"}));
  EXPECT_EQ(e["score"]["key"], "max_toxicity");
  ASSERT_EQ(e["cells"].size(), 2u);
  const std::map<std::string, std::vector<std::pair<std::string, double>>> want = {
      {"A", {{"a2.jpg", .9}, {"a0.jpg", .5}}}, {"B", {{"b2.jpg", .8}, {"b0.jpg", .7}}}};
  for (const auto& c : e["cells"]) {
    const std::string group = c["race"].get<std::string>();
    SCOPED_TRACE(group);
    std::vector<std::pair<std::string, double>> got;
    std::size_t sampled = 0;
    for (const auto& im : c["images"]) {
      const std::string path = im["path"].get<std::string>();
      EXPECT_EQ(path[0], group == "A" ? 'a' : 'b') << "a group's images are its own";
      const std::string why = im["why"].get<std::string>();
      sampled += why.find("random sample") != std::string::npos;
      if (why.find("highest toxicity") != std::string::npos) {
        got.emplace_back(path, im["max_toxicity"].get<double>());
      }
    }
    EXPECT_EQ(sampled, 2u);
    // Listed after the sample, or marked in it: ordered here, highest first.
    std::sort(got.begin(), got.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    EXPECT_EQ(got, want.at(group));
  }
  // The same seed draws the same grid.
  const auto again = audit(spec, temp_dir() / "again");
  EXPECT_EQ(again["exemplars"], e);
  const std::string html = read_file(temp_dir() / "run/report.html");
  EXPECT_NE(html.find("Exemplar images per race"), std::string::npos);
  const std::string csv = read_file(temp_dir() / "run/tables/fig_exemplars.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "race,path,why,max_toxicity,status");
  EXPECT_EQ(count(html, "<img class=\"exemplar\""), shown(e));
}

TEST(ReportExemplarsLvlm, AMissingImageIsNamedInThePageAndImagesFalseGivesNone) {
  const auto x = audit(write_lvlm_study("{images: 4}"), temp_dir() / "run");
  const std::string gone = "b3.jpg";
  bool listed = false;
  for (const auto& c : x["exemplars"]["cells"]) {
    for (const auto& im : c["images"]) {
      if (im["path"] == gone) {
        listed = true;
        EXPECT_EQ(im["status"], "missing");
      }
    }
  }
  EXPECT_TRUE(listed) << "4 per group draws every image";
  EXPECT_EQ(shown(x["exemplars"]), 7u);
  const std::string html = read_file(temp_dir() / "run/report.html");
  EXPECT_NE(html.find("Not shown: b3.jpg (missing)"), std::string::npos);
  EXPECT_NE(x["notes"].dump().find("exemplar image b3.jpg could not be read"), std::string::npos);

  const auto off = audit(write_lvlm_study("{images: false}"), temp_dir() / "off");
  EXPECT_FALSE(off.contains("exemplars"));
  EXPECT_EQ(read_file(temp_dir() / "off/report.html").find("<img"), std::string::npos);

  // Without columns.image the grids cannot be drawn: a spec error naming the key.
  const fs::path spec = write_lvlm_study("{images: 2}");
  std::string text = read_file(spec);
  text.replace(text.find(", image: image"), 14, "");
  std::ofstream(spec) << text;
  const auto r = run_cli("--quiet audit " + shell_quote(spec.string()) + " --out " +
                         shell_quote((temp_dir() / "noimage").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("columns.image"), std::string::npos) << r.err;
}

// ------------------------------------------------------------------ dual-encoder kinds

TEST(ReportExemplarsDualEncoder, EachGroupOfTheImageTableHasASeededGrid) {
  const fs::path dir = temp_dir();
  const fs::path ex = kSource / "examples/social_perception";
  for (const char* f : {"images.npy", "prompts.csv", "prompts.npy"}) {
    fs::copy_file(ex / f, dir / f, fs::copy_options::overwrite_existing);
  }
  const std::vector<fs::path> files = jpegs();
  add_path_column(ex / "images.csv", dir / "images.csv", "path",
                  [&](std::size_t row) { return files[row % files.size()].string(); });
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << "kind: social-perception\nseed: 1\n"
                         "images: {table: images.csv, embeddings: images.npy}\n"
                         "prompts: {manifest: prompts.csv, embeddings: prompts.npy}\n"
                         "factors: {groups: [race, gender]}\n"
                         "analyses: {association: {bootstrap: 0}, scweat: false, "
                         "markedness: false, ranking: false}\n"
                         "report: {images: 2}\n";
  const auto x = audit(spec, dir / "run");
  ASSERT_TRUE(x.contains("exemplars")) << x["notes"].dump();
  const auto& e = x["exemplars"];
  EXPECT_EQ(e["labels"], nlohmann::json::array({"race", "gender"}));
  EXPECT_FALSE(e.contains("score"));
  ASSERT_GE(e["cells"].size(), 4u);
  for (const auto& c : e["cells"]) {
    EXPECT_EQ(c["images"].size(), 2u);
  }
  EXPECT_EQ(shown(e), 2 * e["cells"].size());
  const auto again = audit(spec, dir / "again");
  EXPECT_EQ(again["exemplars"], e);
  const std::string html = read_file(dir / "run/report.html");
  EXPECT_NE(html.find("Exemplar images per race and gender"), std::string::npos);
  const std::string csv = read_file(dir / "run/tables/fig_exemplars.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "race,gender,path,why,status")
      << "no score column without a score";
  EXPECT_EQ(count(html, "<img class=\"exemplar\""), shown(e));
}

}  // namespace in_report_exemplars_kinds_test
}  // namespace
}  // namespace vlbias
