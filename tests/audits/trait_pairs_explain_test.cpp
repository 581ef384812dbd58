// A trait-pairs audit's analyses.explain (issue 40, item 5) end to end with the real binary: eight
// real photographs in two groups, the tests' tiny random CLIP, and a `vlbias faces` run of real
// dlib detection. The run's explain/ is what `vlbias explain` writes for the same inputs (maps,
// rows and overlays byte for byte); results.json's counts and group means are rows.csv's; the
// overlays of each group are its most probable images, embedded; with faces, cam_mass.json is
// in results.json and summary.json; the report has both sections; an earlier run's explain/
// never outlives a new run; bad specs exit 2 and leave the run folder as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "vlbias/core/matrix.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_trait_pairs_explain_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::shell_quote;
using nlohmann::json;

const fs::path kSource = fs::path(VLBIAS_SOURCE_DIR);
const fs::path kModel = kSource / "tests/fixtures/encode/e2e/hf";
const fs::path kReal = kSource / "tests/data/images/real";

const char* const kManifest =
    "text,word,dimension,valence,template,role,model\n"
    "a person,,,,a {} person,neutral,trait-pairs\n"
    "a smart person,smart,smart/dumb,+,a {} person,attribute,trait-pairs\n"
    "a dumb person,dumb,smart/dumb,-,a {} person,attribute,trait-pairs\n"
    "a happy person,happy,happy/sad,+,a {} person,attribute,trait-pairs\n"
    "a sad person,sad,happy/sad,-,a {} person,attribute,trait-pairs\n";

// Two groups of four photographs; "people" holds the faces dlib finds.
const std::pair<const char*, const char*> kPhotos[] = {
    {"astronaut.png", "people"}, {"coffee.png", "things"}, {"grace_hopper.jpg", "people"},
    {"chelsea.png", "things"},   {"camera.png", "people"}, {"rocket.jpg", "things"},
    {"china.jpg", "people"},     {"flower.jpg", "things"}};

// The study's files, written once per process (the faces run is the slow part).
struct Study {
  fs::path dir, photos, pairs, faces;
};

const Study& study() {
  static const Study s = [] {
    Study w;
    w.dir = fs::temp_directory_path() / ("vlbias_explain_audit_" + std::to_string(::getpid()));
    fs::remove_all(w.dir);
    fs::create_directories(w.dir);
    w.photos = w.dir / "photos.csv";
    std::ofstream table(w.photos);
    table << "path,g\n";
    for (const auto& [file, group] : kPhotos)
      table << (kReal / file).string() << "," << group << "\n";
    table.close();
    w.pairs = w.dir / "pairs.csv";
    std::ofstream(w.pairs) << kManifest;
    // Embeddings from no model: the confidence analysis needs some; explain uses the model.
    Rng rng(7, 0);
    Matrix images(8, 6), prompts(5, 6);
    for (float& v : images.data) v = static_cast<float>(2 * rng.uniform01() - 1);
    for (float& v : prompts.data) v = static_cast<float>(2 * rng.uniform01() - 1);
    write_npy(w.dir / "images.npy", images);
    write_npy(w.dir / "pairs.npy", prompts);
    w.faces = w.dir / "faces";
    const CliResult f =
        run_cli("--quiet faces --no-chips --images " + shell_quote(w.photos.string()) + " --out " +
                shell_quote(w.faces.string()));
    EXPECT_EQ(f.exit_code, 0) << f.err;
    return w;
  }();
  return s;
}

std::string spec_text(const std::string& explain, const std::string& kind = "trait-pairs",
                      const std::string& image_key = "image: path, ") {
  const Study& s = study();
  return "kind: " + kind + "\nseed: 3\nmin_group_size: 2\n" + "images: {" + image_key +
         "table: " + s.photos.string() + ", embeddings: " + (s.dir / "images.npy").string() +
         "}\n" + "prompts: {manifest: " + s.pairs.string() +
         ", embeddings: " + (s.dir / "pairs.npy").string() + "}\n" + "factors: {groups: [g]}\n" +
         "analyses: {association: false, scweat: false" +
         (explain.empty() ? "" : ", explain: " + explain) + "}\n";
}

CliResult audit(const std::string& spec, const fs::path& out) {
  const fs::path file = cli_util::temp_dir() / "spec.yaml";
  std::ofstream(file) << spec;
  return run_cli("--quiet audit " + shell_quote(file.string()) + " --out " +
                 shell_quote(out.string()));
}

std::string explain_key() {
  return "{model: " + kModel.string() +
         ", pair: smart/dumb, top: 2, faces: " + study().faces.string() + ", bootstrap: 200}";
}

json read_json(const fs::path& p) {
  return json::parse(read_file(p));
}

TEST(TraitPairsExplain, TheRunsExplainFolderIsWhatVlbiasExplainWritesForTheSameInputs) {
  const Study& s = study();
  const fs::path run = cli_util::temp_dir() / "run";
  const CliResult a = audit(spec_text(explain_key()), run);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const fs::path maps = cli_util::temp_dir() / "maps";
  const CliResult e =
      run_cli("--quiet explain --model " + shell_quote(kModel.string()) + " --images " +
              shell_quote(s.photos.string()) + " --manifest " + shell_quote(s.pairs.string()) +
              " --pair smart/dumb --by g --top 2" + " --faces " + shell_quote(s.faces.string()) +
              " --out " + shell_quote(maps.string()));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  for (const char* file : {"maps.npy", "rows.csv"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(read_file(run / "explain" / file), read_file(maps / file));
  }
  std::size_t overlays = 0;
  for (const auto& entry : fs::directory_iterator(maps / "overlays")) {
    SCOPED_TRACE(entry.path().filename().string());
    EXPECT_EQ(read_file(run / "explain/overlays" / entry.path().filename()),
              read_file(entry.path()));
    ++overlays;
  }
  EXPECT_EQ(overlays, 4u);  // two per group
  // The bootstrap's seed is the audit's own stream; the groups' n and means do not depend on it.
  const json mine = read_json(run / "explain/cam_mass.json");
  const json theirs = read_json(maps / "cam_mass.json");
  for (const char* m : {"cam_in_face", "cam_in_skin"}) {
    SCOPED_TRACE(m);
    ASSERT_EQ(mine[m]["groups"].size(), theirs[m]["groups"].size());
    for (std::size_t g = 0; g < mine[m]["groups"].size(); ++g) {
      EXPECT_EQ(mine[m]["groups"][g]["n"], theirs[m]["groups"][g]["n"]);
      EXPECT_EQ(mine[m]["groups"][g]["mean"], theirs[m]["groups"][g]["mean"]);
    }
  }
  EXPECT_FALSE(fs::exists(run / "explain/.lock"));
  for (const auto& entry : fs::directory_iterator(run)) {
    EXPECT_NE(entry.path().filename().string().rfind(".staging", 0), 0u) << entry.path();
  }
}

TEST(TraitPairsExplain, ResultsHoldTheCountsGroupMeansOverlaysAndCamMassOfTheFolder) {
  const fs::path run = cli_util::temp_dir() / "run";
  const CliResult a = audit(spec_text(explain_key()), run);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json x = read_json(run / "results.json")["analyses"]["explain"];
  EXPECT_EQ(x["images"], 8);
  EXPECT_EQ(x["explained"], 8);
  EXPECT_EQ(x["failed"], 0);
  EXPECT_EQ(x["overlays"], 4);
  EXPECT_EQ(x["folder"], "explain");
  // Group means recomputed from rows.csv.
  const Table rows = read_table((run / "explain/rows.csv").string());
  const std::vector<double>& p = rows.numeric("probability");
  std::map<std::string, std::vector<double>> by_group;
  for (std::size_t r = 0; r < rows.rows; ++r) by_group[rows.column("g").text(r)].push_back(p[r]);
  ASSERT_EQ(x["groups"].size(), 2u);
  for (const json& g : x["groups"]) {
    const std::vector<double>& v = by_group.at(g["group"]["g"].get<std::string>());
    double sum = 0;
    for (double y : v) sum += y;
    EXPECT_EQ(g["explained"], v.size());
    EXPECT_NEAR(g["mean_probability"].get<double>(), sum / static_cast<double>(v.size()), 1e-12);
  }
  // Each group's overlays: its two most probable images, most probable first, all shown.
  const json& cells = x["exemplars"]["cells"];
  ASSERT_EQ(cells.size(), 2u);
  for (const json& c : cells) {
    SCOPED_TRACE(c["g"].get<std::string>());
    std::vector<double> v = by_group.at(c["g"].get<std::string>());
    std::sort(v.rbegin(), v.rend());
    ASSERT_EQ(c["images"].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(c["images"][i]["probability"].get<double>(), v[i]);
      EXPECT_EQ(c["images"][i]["status"], "shown");
      EXPECT_EQ(c["images"][i]["why"], "highest probability");
      EXPECT_EQ(c["images"][i]["thumbnail"].get<std::string>().rfind("data:image/jpeg;base64,", 0),
                0u);
    }
  }
  EXPECT_EQ(x["cam_mass"], read_json(run / "explain/cam_mass.json"));
  // dlib finds faces among the people only, so cam_in_face has one group with values: no test.
  const json summary = read_json(run / "summary.json");
  std::size_t explain_findings = 0;
  for (const json& f : summary["findings"]) explain_findings += f["section"] == "explain";
  EXPECT_GE(explain_findings, 1u);
  const std::string html = read_file(run / "report.html");
  EXPECT_NE(html.find("id=\"explain\""), std::string::npos);
  EXPECT_NE(html.find("id=\"explain_overlays\""), std::string::npos);
  EXPECT_TRUE(fs::exists(run / "tables/fig_explain_groups.csv"));  // the report's table
}

TEST(TraitPairsExplain, ARunWithoutExplainRemovesAnEarlierRunsFolder) {
  const fs::path run = cli_util::temp_dir() / "run";
  ASSERT_EQ(audit(spec_text(explain_key()), run).exit_code, 0);
  ASSERT_TRUE(fs::exists(run / "explain/maps.npy"));
  const CliResult again = audit(spec_text(""), run);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_FALSE(fs::exists(run / "explain"));
  EXPECT_FALSE(read_json(run / "results.json")["analyses"].contains("explain"));
}

TEST(TraitPairsExplain, BadSpecsExitWithTheUsageCodeAndLeaveTheRunAsItWas) {
  const fs::path run = cli_util::temp_dir() / "run";
  ASSERT_EQ(audit(spec_text(""), run).exit_code, 0);
  const std::string before = read_file(run / "results.json");
  const std::string model = kModel.string();
  struct Case {
    std::string spec, message;
  };
  const Case cases[] = {
      {spec_text("{pair: smart/dumb}"), "needs model"},
      {spec_text("{model: " + model + "}"), "needs pair"},
      {spec_text("{model: " + model + ", pair: smart/dumb, method: lime}"), "method"},
      {spec_text("{model: " + model + ", pair: smart/dumb, top: 0}"), "top"},
      {spec_text("{model: " + model + ", pair: clever/dumb}"),
       "analyses.explain.pair clever/dumb: prompts.manifest has no trait pair"},
      {spec_text("{model: " + model + "/nowhere, pair: smart/dumb}"), "analyses.explain.model"},
      {spec_text("{model: " + model + ", pair: smart/dumb, faces: " + model + "}"),
       "analyses.explain.faces"},
      {spec_text("{model: " + model + ", pair: smart/dumb}", "trait-pairs", "image: picture, "),
       "picture"},
      {spec_text("{model: " + model + ", pair: smart/dumb}", "social-perception"),
       "not part of a social-perception audit"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    // `audit --check` says the same before anything runs (the spec's own keys aside, which the
    // parser refuses for both).
    const fs::path file = cli_util::temp_dir() / "check.yaml";
    std::ofstream(file) << c.spec;
    const CliResult check = run_cli("--quiet audit " + shell_quote(file.string()) + " --check");
    EXPECT_EQ(check.exit_code, 2) << check.err;
    EXPECT_NE(check.err.find(c.message), std::string::npos) << check.err;
    const CliResult r = audit(c.spec, run);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(read_file(run / "results.json"), before);
    EXPECT_FALSE(fs::exists(run / "explain"));
    for (const auto& entry : fs::directory_iterator(run)) {
      EXPECT_NE(entry.path().filename().string().rfind(".staging", 0), 0u) << entry.path();
    }
  }
}

}  // namespace in_trait_pairs_explain_test
}  // namespace
}  // namespace vlbias
