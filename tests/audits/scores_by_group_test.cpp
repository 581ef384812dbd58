// Per-image scores by group in the representation and geo-diversity audits (issue 44;
// src/audits/scores_by_group.h) on the fixture studies of tools/make_scores_fixtures.py
// (tests/fixtures/audits/scores): rates, means, Wilson and t intervals, chi-square and
// Kruskal-Wallis statistics and Holm-adjusted p-values against scipy/statsmodels; provenance,
// units tables, summary findings, power of the null tests; bad input named by the run and by
// audit --check alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/core/sha256.h"

namespace vlbias {
namespace {
namespace in_scores_by_group_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using nlohmann::json;

const fs::path kFixtures = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/audits";
const fs::path kScores = kFixtures / "scores";
const fs::path kStudy = kFixtures / "representation";

const json& expected() {
  return testing_util::fixture_json("audits/scores/expected.json");
}

std::string representation_spec(const std::string& scores, const std::string& rest = "") {
  return fmt::format(
      "version: 1\nkind: representation\nseed: 7\n"
      "labels: {{table: '{0}/labels.csv', use: clip}}\n"
      "manifest: {{table: '{0}/manifest.csv', group: category, key: occupation}}\n"
      "analyses: {{measures: false, power: {{replicates: 50}}}}\n"
      "scores: {1}\n{2}",
      kStudy.string(), scores, rest);
}

std::string default_scores() {
  return "[{table: '" + (kScores / "representation_scores.csv").string() +
         "', columns: [nsfw, aesthetic, concept_score_max], kind: {nsfw: rate}}]";
}

json audit(const fs::path& spec, const fs::path& out) {
  const CliResult r = run_cli("--quiet audit '" + spec.string() + "' --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(read_file(out / "results.json"));
}

struct Runs {
  fs::path dir;
  json representation, geo;
};
const Runs& runs() {
  static const Runs* r = [] {
    auto* x = new Runs{cli_util::temp_dir(), {}, {}};
    std::ofstream(x->dir / "spec.yaml") << representation_spec(default_scores());
    x->representation = audit(x->dir / "spec.yaml", x->dir / "rep");
    x->geo = audit(kScores / "geo_spec.yaml", x->dir / "geo");
    return x;
  }();
  return *r;
}

void expect_rel(const json& got, double want, double rel, const std::string& what) {
  ASSERT_TRUE(got.is_number()) << what;
  EXPECT_NEAR(got.get<double>(), want, rel * std::max(std::fabs(want), 1e-300)) << what;
}

// analyses.scores against the reference's columns, group by group.
void expect_scores(const json& scores, const json& want) {
  ASSERT_EQ(scores.at("columns").size(), want.size());
  for (std::size_t c = 0; c < want.size(); ++c) {
    const json &gc = scores["columns"][c], &wc = want[c];
    EXPECT_EQ(gc.at("column"), wc.at("column"));
    EXPECT_EQ(gc.at("kind"), wc.at("kind"));
    ASSERT_EQ(gc.at("by").size(), wc.at("by").size());
    for (std::size_t b = 0; b < wc["by"].size(); ++b) {
      const json &gb = gc["by"][b], &wb = wc["by"][b];
      EXPECT_EQ(gb.at("by"), wb.at("by"));
      ASSERT_EQ(gb.at("groups").size(), wb.at("groups").size());
      for (std::size_t g = 0; g < wb["groups"].size(); ++g) {
        const json &gg = gb["groups"][g], &wg = wb["groups"][g];
        const std::string what =
            fmt::format("{} {} {}", wc["column"].get<std::string>(), wb["by"].get<std::string>(),
                        wg["group"].get<std::string>());
        EXPECT_EQ(gg.at("group"), wg.at("group")) << what;
        EXPECT_EQ(gg.at("n"), wg.at("n")) << what;
        if (wg.contains("successes")) {
          EXPECT_EQ(gg.at("successes"), wg.at("successes")) << what;
        }
        expect_rel(gg["estimate"], wg["estimate"], 1e-12, what);
        if (wg.contains("sd")) expect_rel(gg["sd"], wg["sd"], 1e-10, what);
        expect_rel(gg["ci"]["lower"], wg["lower"], 1e-9, what + " lower");
        expect_rel(gg["ci"]["upper"], wg["upper"], 1e-9, what + " upper");
      }
      const json &gt = gb["test"], &wt = wb["test"];
      EXPECT_EQ(gt.at("test"), wt.at("test"));
      expect_rel(gt["statistic"], wt["statistic"], 1e-9, "statistic");
      expect_rel(gt["df"][0], wt["df"], 0, "df");
      expect_rel(gt["p_value"], wt["p_value"], 1e-6, "p");
      expect_rel(gt["p_holm"], wt["p_holm"], 1e-6, "p_holm");
      expect_rel(gb["mean_over_groups"], wb["mean_over_groups"], 1e-12, "mean over groups");
    }
  }
}

TEST(ScoresByGroup, RepresentationEqualsTheReference) {
  const json& s = runs().representation.at("analyses").at("scores");
  expect_scores(s, expected()["representation"]["columns"]);
  EXPECT_EQ(s["columns"][0]["kind_from"], "spec");
  EXPECT_EQ(s["columns"][1]["kind_from"], "values");
}

TEST(ScoresByGroup, GeoEqualsTheReference) {
  expect_scores(runs().geo.at("analyses").at("scores"), expected()["geo"]["columns"]);
}

TEST(ScoresByGroup, ProvenanceMatchesAndUnitsAreWritten) {
  const json& t = runs().representation["analyses"]["scores"]["tables"][0];
  const json& want = expected()["representation"];
  EXPECT_EQ(t.at("matched_images"), want["matched"]);
  EXPECT_EQ(t.at("unmatched_images"), want["unmatched"]);
  EXPECT_EQ(t.at("unused_rows"), want["unused_rows"]);
  EXPECT_EQ(t.at("rows"), want["rows"]);
  EXPECT_EQ(t["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(t["provenance"]["head"], "safety-checker");
  EXPECT_EQ(t["provenance"]["weights_sha256"], want["weights_sha256"]);
  EXPECT_EQ(t["provenance"]["options"], "adjustment=0.0");
  bool noted = false;
  for (const json& n : runs().representation["notes"])
    noted = noted || n.get<std::string>().find("scores 189 of the 192 images") != std::string::npos;
  EXPECT_TRUE(noted);
  const fs::path run = runs().dir / "rep";
  EXPECT_TRUE(fs::exists(run / "units/score__nsfw.csv"));
  EXPECT_TRUE(fs::exists(run / "tables/scores_groups.csv"));
  EXPECT_TRUE(fs::exists(run / "tables/scores_tests.csv"));
  // Power: the null tests (concept_score_max) carry a minimum detectable effect.
  const json& cs = runs().representation["analyses"]["scores"]["columns"][2];
  EXPECT_TRUE(cs["by"][0]["test"].contains("power"));
  EXPECT_FALSE(
      runs().representation["analyses"]["scores"]["columns"][0]["by"][0]["test"].contains("power"));
}

TEST(ScoresByGroup, ReportAndSummaryNameTheGroups) {
  const fs::path run = runs().dir / "rep";
  const std::string html = read_file(run / "report.html");
  EXPECT_NE(html.find("Scores of the images per group"), std::string::npos);
  EXPECT_NE(html.find("nsfw: 'a photo of a"), std::string::npos);
  const json summary = json::parse(read_file(run / "summary.json"));
  bool found = false;
  for (const json& f : summary.at("findings"))
    found = found || f.at("id") == "score/nsfw/prompt/a photo of a nurse";
  EXPECT_TRUE(found);
  const std::string geo_html = read_file(runs().dir / "geo/report.html");
  EXPECT_NE(geo_html.find("aesthetic per region"), std::string::npos);
}

// A spec with `scores`, run and checked: both fail with the same message, returned.
std::string scores_error(const fs::path& dir, const std::string& scores) {
  fs::create_directories(dir);
  std::ofstream(dir / "spec.yaml") << representation_spec(scores);
  const CliResult r = run_cli("--quiet audit '" + (dir / "spec.yaml").string() + "' --out '" +
                              (dir / "run").string() + "'");
  EXPECT_NE(r.exit_code, 0);
  const CliResult check = run_cli("--quiet audit --check '" + (dir / "spec.yaml").string() + "'");
  EXPECT_EQ(check.exit_code, r.exit_code) << check.err;
  EXPECT_EQ(check.err, r.err) << "audit --check gives the run's own error";
  return r.err;
}

TEST(ScoresByGroup, BadInputIsNamed) {
  const fs::path dir = cli_util::temp_dir();
  const auto entry = [](const fs::path& table, const std::string& columns,
                        const std::string& extra = "") {
    return "[{table: '" + table.string() + "', columns: " + columns + extra + "}]";
  };
  const fs::path good = kScores / "representation_scores.csv";
  // A missing table, a missing column.
  EXPECT_NE(scores_error(dir / "a", entry(dir / "none.csv", "[nsfw]")).find("none.csv"),
            std::string::npos);
  EXPECT_NE(scores_error(dir / "b", entry(good, "[toxicity]")).find("toxicity"), std::string::npos);
  // A key that matches no image.
  std::ofstream(dir / "other.csv") << "image,nsfw\nx.png,1\ny.png,0\n";
  const std::string none = scores_error(dir / "c", entry(dir / "other.csv", "[nsfw]"));
  EXPECT_NE(none.find("none of its 2 rows"), std::string::npos) << none;
  EXPECT_NE(none.find("192 images of manifest.image"), std::string::npos) << none;
  // Non-numeric and NaN cells, a rate column with other values.
  std::ofstream(dir / "text.csv") << "image,nsfw\nimages/nurse/0.png,high\n";
  EXPECT_NE(scores_error(dir / "d", entry(dir / "text.csv", "[nsfw]")).find("'high'"),
            std::string::npos);
  std::ofstream(dir / "nan.csv") << "image,nsfw\nimages/nurse/0.png,nan\nimages/nurse/1.png,1\n";
  EXPECT_NE(scores_error(dir / "e", entry(dir / "nan.csv", "[nsfw]")).find("line 2"),
            std::string::npos);
  std::ofstream(dir / "missing.csv") << "image,nsfw\nimages/nurse/0.png,\nimages/nurse/1.png,1\n";
  EXPECT_NE(scores_error(dir / "f", entry(dir / "missing.csv", "[nsfw]")).find("missing"),
            std::string::npos);
  EXPECT_NE(scores_error(dir / "g", entry(good, "[aesthetic]", ", kind: {aesthetic: rate}"))
                .find("a rate column"),
            std::string::npos);
  // An empty group: every image of one prompt unscored.
  std::ofstream(dir / "one.csv") << "image,nsfw\nimages/nurse/0.png,1\n";
  const std::string empty = scores_error(dir / "h", entry(dir / "one.csv", "[nsfw]"));
  EXPECT_NE(empty.find("prompt 'a photo of a receptionist' has 24 images and none has a row"),
            std::string::npos)
      << empty;
  // An image scored twice; a kind for a column not listed.
  std::ofstream(dir / "twice.csv") << "image,nsfw\nimages/nurse/0.png,1\nimages/nurse/0.png,0\n";
  EXPECT_NE(scores_error(dir / "i", entry(dir / "twice.csv", "[nsfw]")).find("two rows"),
            std::string::npos);
  EXPECT_NE(scores_error(dir / "j", entry(good, "[nsfw]", ", kind: {aesthetic: mean}"))
                .find("must name one of the entry's columns"),
            std::string::npos);
}

TEST(ScoresByGroup, AJsonlTableGivesTheCsvTablesNumbers) {
  // The CSV's rows as JSONL (numbers as JSON numbers), read by read_table like any table.
  const fs::path dir = cli_util::temp_dir();
  std::ofstream out(dir / "scores.jsonl");
  const std::string csv = read_file(kScores / "representation_scores.csv");
  std::size_t at = csv.find('\n') + 1;
  while (at < csv.size()) {
    const std::size_t end = csv.find('\n', at);
    std::vector<std::string> cells;
    for (std::size_t p = at, q; p <= end; p = q + 1) {
      q = std::min(csv.find(',', p), end);
      cells.push_back(csv.substr(p, q - p));
    }
    out << fmt::format(R"({{"image": "{}", "aesthetic": {}, "nsfw": {}}})", cells[0], cells[1],
                       cells[3])
        << "\n";
    at = end + 1;
  }
  out.close();
  std::ofstream(dir / "spec.yaml") << representation_spec(
      "{table: '" + (dir / "scores.jsonl").string() + "', columns: [nsfw, aesthetic]}");
  const json r = audit(dir / "spec.yaml", dir / "run");
  const json& s = r.at("analyses").at("scores");
  const json& want = expected()["representation"]["columns"];
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(s["columns"][c]["kind_from"], "values");
    for (std::size_t b = 0; b < 2; ++b) {
      expect_rel(s["columns"][c]["by"][b]["test"]["statistic"],
                 want[c]["by"][b]["test"]["statistic"].get<double>(), 1e-9, "statistic");
    }
  }
  EXPECT_TRUE(s["tables"][0]["provenance"].empty());
}

// A folder of Parquet shards (DuckDB wrote the CSV's rows as two shards,
// tools/make_scores_shards.mjs) is one table: the CSV's numbers, and one input in provenance,
// hashed as `LC_ALL=C sha256sum *.parquet | sha256sum` in the folder hashes it.
TEST(ScoresByGroup, AFolderOfParquetShardsIsOneInputWithTheCsvsNumbers) {
  const fs::path shards = kScores / "representation_scores_shards";
  const fs::path dir = cli_util::temp_dir();
  std::ofstream(dir / "spec.yaml") << representation_spec(
      "[{table: '" + shards.string() +
      "', columns: [nsfw, aesthetic, concept_score_max], kind: {nsfw: rate}}]");
  const CliResult check = run_cli("--quiet audit --check '" + (dir / "spec.yaml").string() + "'");
  EXPECT_EQ(check.exit_code, 0) << check.err;
  const json r = audit(dir / "spec.yaml", dir / "run");
  const json& s = r.at("analyses").at("scores");
  const json& csv = runs().representation.at("analyses").at("scores");
  ASSERT_EQ(s["columns"].size(), csv["columns"].size());
  for (std::size_t c = 0; c < csv["columns"].size(); ++c) {
    json a = s["columns"][c], b = csv["columns"][c];
    EXPECT_EQ(a["table"], shards.string());
    a.erase("table");
    b.erase("table");
    EXPECT_EQ(a, b) << c;  // the same numbers, bit for bit
  }
  std::string lines;
  for (const char* shard : {"train-00000-of-00002.parquet", "train-00001-of-00002.parquet"}) {
    lines += sha256_file((shards / shard).string()) + "  " + shard + "\n";
  }
  EXPECT_EQ(s["tables"][0]["sha256"], sha256_hex(lines));
  EXPECT_EQ(s["tables"][0]["rows"], csv["tables"][0]["rows"]);
  bool listed = false;
  for (const json& input : r.at("provenance").at("inputs")) {
    if (input.at("path") != shards.string()) continue;
    listed = true;
    EXPECT_EQ(input["sha256"], sha256_hex(lines));
    EXPECT_EQ(input["bytes"], fs::file_size(shards / "train-00000-of-00002.parquet") +
                                  fs::file_size(shards / "train-00001-of-00002.parquet"));
  }
  EXPECT_TRUE(listed) << r["provenance"]["inputs"];
}

TEST(ScoresByGroup, PowerPilotAnswersTheGeoScoresTests) {
  const fs::path run = runs().dir / "geo";
  const CliResult r = run_cli("power --pilot '" + run.string() +
                              "' --analysis scores --tests all --replicates 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out.at("tests").size(), 2u);
  EXPECT_EQ(out["tests"][0]["test"], "chi_square");
  EXPECT_EQ(out["tests"][1]["test"], "anova");
  EXPECT_EQ(out["tests"][0]["groups"].size(), 3u);
  EXPECT_EQ(out["tests"][0]["family"], 2);
  EXPECT_TRUE(out["tests"][1]["mde"]["effect"].is_number());
}

TEST(ScoresByGroup, GeoChecksItsScoresAsItsRunDoes) {
  const fs::path dir = cli_util::temp_dir();
  const std::string geo = (kFixtures / "geo").string();
  const auto spec = [&](const std::string& generated, const std::string& scores) {
    return fmt::format(
        "version: 1\nkind: geo-diversity\nreal: {{table: '{0}/real.csv', features: "
        "'{0}/real.npy'}}\ngenerated: {{table: '{1}', features: '{0}/generated.npy'}}\n"
        "scores: {2}\nanalyses: {{region: {{k: 2, bootstrap: 0}}, object_region: false, "
        "distribution: false}}\n",
        geo, generated, scores);
  };
  const auto error = [&](const std::string& name, const std::string& text) {
    fs::create_directories(dir / name);
    std::ofstream(dir / name / "spec.yaml") << text;
    const CliResult r = run_cli("--quiet audit '" + (dir / name / "spec.yaml").string() +
                                "' --out '" + (dir / name / "run").string() + "'");
    EXPECT_NE(r.exit_code, 0);
    const CliResult check =
        run_cli("--quiet audit --check '" + (dir / name / "spec.yaml").string() + "'");
    EXPECT_EQ(check.err, r.err);
    return r.err;
  };
  const std::string scores =
      "{table: '" + (kScores / "geo_scores.csv").string() + "', key: path, columns: [nsfw]}";
  // The geo fixture's own generated table has no image path column.
  EXPECT_NE(error("nopath", spec(geo + "/generated.csv", scores))
                .find("no generated table has the image column 'path'"),
            std::string::npos);
  // A score column that is not there.
  EXPECT_NE(error("column", spec((kScores / "geo_generated.csv").string(),
                                 "{table: '" + (kScores / "geo_scores.csv").string() +
                                     "', key: path, columns: [q16]}"))
                .find("q16"),
            std::string::npos);
  const CliResult ok =
      run_cli("--quiet audit --check '" + (kScores / "geo_spec.yaml").string() + "'");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace in_scores_by_group_test
}  // namespace
}  // namespace vlbias
