// RUN_DIR/summary.json (include/vlbias/report/summary.h): written by `vlbias audit` for every
// audit kind and rewritten by `vlbias report RUN_DIR`; its estimates are results.json's values
// at their pointers, its units tables (RUN_DIR/units/*.csv) reproduce the estimates, its ids
// are the same in two runs of one spec, and a run without units still gets one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "example_runs.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_summary_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using nlohmann::json;

// Each example and findings ids that must carry units (the estimate is a mean over units).
const std::vector<std::pair<std::string, std::vector<std::string>>>& examples() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> list{
      {"social_perception", {"association/competence/Black female", "neutral/Black female"}},
      {"trait_pairs", {"confidence/smart/dumb/Black male", "association/smart/dumb+/White male"}},
      {"geo_diversity", {"consistency/object-region/Africa", "consistency/object/all"}},
      {"lvlm_counterfactual",
       {"maxgap/toxicity/prompt=Hiring, mitigation=none",
        "paired/toxicity/prompt=Hiring, mitigation=M1-vs-prompt=Hiring, mitigation=none"}},
      {"visual_stereotypes", {"pull/Ghanaian"}},
  };
  return list;
}

using cli_util::example_run;

// The audit of examples/<name>/spec.yaml run afresh into `dir` (not the shared run).
std::filesystem::path audit_example_afresh(const std::string& name,
                                           const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  const auto r =
      run_cli("--quiet audit examples/" + name + "/spec.yaml --out '" + dir.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir;
}

json read_json(const std::filesystem::path& p) {
  return json::parse(read_file(p));
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// The aggregate of a finding's units table, recomputed here from the CSV.
double recompute(const std::filesystem::path& run, const json& units) {
  const Table t = read_csv((run / units["table"].get<std::string>()).string());
  const std::vector<double>& v = t.numeric(units["value"].get<std::string>());
  if (units["aggregate"] == "mean") return mean_of(v);
  EXPECT_EQ(units["aggregate"], "mean_difference");
  const Column& g = t.column(units["group"].get<std::string>());
  std::vector<double> a, b;
  for (std::size_t r = 0; r < t.rows; ++r) {
    if (g.text(r) == units["groups"][0].get<std::string>()) a.push_back(v[r]);
    if (g.text(r) == units["groups"][1].get<std::string>()) b.push_back(v[r]);
  }
  EXPECT_FALSE(a.empty() || b.empty()) << units.dump();
  return mean_of(a) - mean_of(b);
}

// The schema's fields and types, for every finding; returns how many have units.
std::size_t check_summary(const std::filesystem::path& run) {
  const json s = read_json(run / "summary.json");
  const json results = read_json(run / "results.json");
  EXPECT_EQ(s["schema"], "vlbias.summary/1");
  EXPECT_EQ(s["kind"], results["kind"]);
  for (const json& in : results["provenance"]["inputs"])
    EXPECT_EQ(s["run"]["inputs"][in["path"].get<std::string>()], in["sha256"]);
  // The stimuli also by role (provenance.roles: images.table, real.table, ...), as compare-runs
  // checks them.
  if (results["provenance"].contains("roles")) {
    for (const auto& [role, path] : results["provenance"]["roles"].items())
      EXPECT_EQ(s["run"]["inputs"][role], s["run"]["inputs"][path.get<std::string>()]) << role;
  }
  const std::string kind = results["kind"];
  if (kind == "social-perception" || kind == "trait-pairs") {
    EXPECT_TRUE(s["run"]["inputs"].contains("images.table"));
    EXPECT_TRUE(s["run"]["inputs"].contains("prompts.manifest"));
  }
  if (kind == "geo-diversity") {
    EXPECT_TRUE(s["run"]["inputs"].contains("real.table"));
  }
  EXPECT_EQ(s["run"]["seed"], results["provenance"]["seed"]);
  EXPECT_EQ(s["run"]["vlbias_version"], results["provenance"]["vlbias_version"]);
  EXPECT_EQ(s["run"]["spec_sha256"].get<std::string>().size(), 64u);
  EXPECT_GT(s["findings"].size(), 5u);
  std::set<std::string> ids;
  std::size_t with_units = 0;
  for (const json& f : s["findings"]) {
    SCOPED_TRACE(f.dump());
    EXPECT_TRUE(ids.insert(f["id"].get<std::string>()).second) << "repeated id";
    for (const char* key : {"id", "section", "quantity", "ptr"}) EXPECT_TRUE(f[key].is_string());
    EXPECT_TRUE(f["groups"].is_array());
    for (const char* key : {"estimate", "p", "p_holm"})
      EXPECT_TRUE(f[key].is_null() || f[key].is_number());
    EXPECT_TRUE(f["significant"].is_null() || f["significant"].is_boolean());
    EXPECT_TRUE(f["ci"].is_null() || (f["ci"]["lower"].is_number() || f["ci"]["lower"].is_null()));
    const json& better = f["better"];
    EXPECT_TRUE(better.is_null() || better == "lower" || better == "higher" ||
                better == "closer_to_zero");
    // The estimate is results.json's value at ptr.
    const json& at = results.at(json::json_pointer(f["ptr"].get<std::string>()));
    if (f["estimate"].is_null()) {
      EXPECT_TRUE(at.is_null());
    } else {
      EXPECT_EQ(f["estimate"].get<double>(), at.get<double>());
    }
    if (!f["p_holm"].is_null()) {
      EXPECT_EQ(f["significant"], f["p_holm"].get<double>() < 0.05);
    }
    if (f["units"].is_null()) continue;
    ++with_units;
    const double x = recompute(run, f["units"]);
    const double e = f["estimate"].get<double>();
    EXPECT_NEAR(x, e, 1e-9 * std::max(1.0, std::abs(e)));
  }
  return with_units;
}

TEST(Summary, EveryExampleWritesOneWhoseEstimatesAndUnitsMatchResults) {
  for (const auto& [name, with_units] : examples()) {
    SCOPED_TRACE(name);
    const auto dir = example_run(name, temp_dir() / name);
    const std::size_t n = check_summary(dir);
    EXPECT_GT(n, 0u) << "no finding has units";
    const json s = read_json(dir / "summary.json");
    std::set<std::string> left(with_units.begin(), with_units.end());
    for (const json& f : s["findings"]) {
      if (left.erase(f["id"].get<std::string>()) == 1) {
        EXPECT_FALSE(f["units"].is_null()) << f;
      }
    }
    EXPECT_TRUE(left.empty()) << "no finding " << (left.empty() ? "" : *left.begin());
    // The report's header links it.
    EXPECT_NE(read_file(dir / "report.html").find("<a href=\"summary.json\">"), std::string::npos);
  }
}

// Without neutral.pair_key the pairs of groups are Welch comparisons over images: their
// differences are differences of two groups' means over units/neutral.csv.
TEST(Summary, UnpairedNeutralDifferencesAreDifferencesOfGroupMeansOverImages) {
  const std::string spec = cli_util::write_temp_file(
      "unpaired.yaml", cli_util::social_perception_example_spec(
                           "{groups: [race, gender]}",
                           "{scweat: false, ranking: false, absdiff: false, neutral: true}"));
  const auto dir = temp_dir() / "unpaired";
  const auto r = run_cli("--quiet audit " + spec + " --out '" + dir.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(check_summary(dir), 0u);
  std::size_t pairs = 0;
  const json summary = read_json(dir / "summary.json");
  for (const json& f : summary["findings"]) {
    if (f["section"] != "neutral" || f["groups"].size() != 2) continue;
    ++pairs;
    ASSERT_FALSE(f["units"].is_null()) << f.dump();
    EXPECT_EQ(f["units"]["aggregate"], "mean_difference");
    EXPECT_EQ(f["units"]["groups"], f["groups"]);
  }
  EXPECT_EQ(pairs, 15u);  // 6 race x gender groups
}

TEST(Summary, IdsAndSchemaAreStableAcrossTwoRunsOfOneSpec) {
  for (const char* name : {"lvlm_counterfactual", "trait_pairs"}) {
    SCOPED_TRACE(name);
    const json a = read_json(example_run(name, temp_dir() / "a") / "summary.json");
    const json b = read_json(audit_example_afresh(name, temp_dir() / "b") / "summary.json");
    ASSERT_EQ(a["findings"].size(), b["findings"].size());
    EXPECT_EQ(a["run"]["spec_sha256"], b["run"]["spec_sha256"]);
    EXPECT_EQ(a["run"]["inputs"], b["run"]["inputs"]);
    for (std::size_t i = 0; i < a["findings"].size(); ++i) {
      const json& x = a["findings"][i];
      const json& y = b["findings"][i];
      EXPECT_EQ(x["id"], y["id"]);
      EXPECT_EQ(x["ptr"], y["ptr"]);
      EXPECT_EQ(x["estimate"], y["estimate"]);  // seeded: the same numbers
      std::set<std::string> kx, ky;
      for (auto it = x.begin(); it != x.end(); ++it) kx.insert(it.key());
      for (auto it = y.begin(); it != y.end(); ++it) ky.insert(it.key());
      EXPECT_EQ(kx, ky);
    }
  }
  // The trait-pairs runs (the last pair above) are two runs over the same stimuli: compare-runs
  // finds them equal by role and pairs every finding with units, with a difference of 0.
  const auto out = temp_dir() / "ab";
  const auto r =
      run_cli("--quiet compare-runs '" + (temp_dir() / "a").string() + "' '" +
              (temp_dir() / "b").string() + "' --bootstrap 50 --out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t paired = 0;
  const json comparison = read_json(out / "results.json");
  for (const json& q : comparison["quantities"]) {
    for (const json& d : q["differences"]) {
      if (d["method"] != "paired") continue;
      ++paired;
      EXPECT_EQ(d["difference"], 0.0) << q["id"];
      EXPECT_NE(
          d["reason"].get<std::string>().find("stimuli equal: images.table, prompts.manifest"),
          std::string::npos)
          << d["reason"];
    }
  }
  EXPECT_GT(paired, 100u);  // 252 findings with units in the trait-pairs example
}

TEST(Summary, ReportRewritesItAndARunWithoutUnitsStillGetsOne) {
  const auto dir = example_run("visual_stereotypes", temp_dir() / "vs");
  const std::string written = read_file(dir / "summary.json");
  std::filesystem::remove(dir / "summary.json");
  auto r = run_cli("report '" + dir.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir / "summary.json"), written);  // the same from results.json alone
  // Without units/ the findings keep their ids and estimates; units are null.
  std::filesystem::remove_all(dir / "units");
  r = run_cli("report '" + dir.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json before = json::parse(written), after = read_json(dir / "summary.json");
  ASSERT_EQ(before["findings"].size(), after["findings"].size());
  std::size_t had_units = 0;
  for (std::size_t i = 0; i < after["findings"].size(); ++i) {
    EXPECT_EQ(after["findings"][i]["id"], before["findings"][i]["id"]);
    EXPECT_TRUE(after["findings"][i]["units"].is_null());
    had_units += !before["findings"][i]["units"].is_null();
  }
  EXPECT_GT(had_units, 0u);
  EXPECT_EQ(check_summary(dir), 0u);
}

TEST(Summary, AnAuditRerunReplacesTheUnitsOfTheEarlierRun) {
  const auto dir = example_run("lvlm_counterfactual", temp_dir() / "lvlm");
  std::ofstream(dir / "units" / "stale.csv") << "a\n1\n";
  const auto r =
      run_cli("--quiet audit examples/lvlm_counterfactual/spec.yaml --out '" + dir.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "units" / "stale.csv"));
  EXPECT_GT(check_summary(dir), 0u);
}

}  // namespace in_summary_test
}  // namespace
}  // namespace vlbias
