// compare-runs (include/vlbias/audits/compare_runs.h) against the numpy/scipy reference of
// tools/make_compare_runs_fixtures.py (bootstrap draw for draw through the ported streams), a
// planted difference, the null rejection rate over simulated pairs, and bad inputs.
#include "vlbias/audits/compare_runs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <fmt/format.h>

#include "test_util.h"
#include "vlbias/core/error.h"

namespace vlbias {
namespace {
namespace in_compare_runs_test {

namespace fs = std::filesystem;
using testing_util::error_of;
using testing_util::fixture_json;

fs::path fixture_run(const char* name) {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/compare_runs" / name;
}

const Json* find_quantity(const Json& r, const std::string& id) {
  for (const Json& q : r["quantities"])
    if (q["id"] == id) return &q;
  return nullptr;
}

double number_or_nan(const Json& j) {
  return j.is_number() ? j.get<double>() : NAN;
}

void expect_near_or_null(const Json& got, const nlohmann::json& want, double tol,
                         const char* what) {
  SCOPED_TRACE(what);
  if (want.is_null()) {
    EXPECT_TRUE(got.is_null()) << got.dump();
  } else {
    EXPECT_NEAR(number_or_nan(got), want.get<double>(), tol);
  }
}

CompareRunsOptions fixture_options() {
  const auto& e = fixture_json("compare_runs/expected.json");
  CompareRunsOptions o;
  o.bootstrap = e["options"]["bootstrap"].get<std::size_t>();
  o.seed = e["options"]["seed"].get<std::uint64_t>();
  o.level = e["options"]["level"].get<double>();
  return o;
}

TEST(CompareRuns, EveryTestMatchesTheNumpyScipyReferenceDrawForDraw) {
  const auto& e = fixture_json("compare_runs/expected.json");
  const Json r = compare_runs({fixture_run("run_a"), fixture_run("run_b"), fixture_run("run_c")},
                              fixture_options());
  EXPECT_EQ(r["kind"], "comparison");
  EXPECT_EQ(r["compared_kind"], "social-perception");
  ASSERT_EQ(r["quantities"].size(), 4u);  // only_a is in one run
  ASSERT_EQ(r["unmatched"].size(), 1u);
  EXPECT_EQ(r["unmatched"][0]["id"], "only_a");
  std::size_t checked = 0;
  for (const auto& want : e["tests"]) {
    const std::string id = want["id"];
    SCOPED_TRACE(id + " " + want["a"].get<std::string>() + "-" + want["b"].get<std::string>());
    const Json* q = find_quantity(r, id);
    ASSERT_NE(q, nullptr);
    const Json* got = nullptr;
    for (const Json& d : (*q)["differences"])
      if (d["b"] == want["b"].get<std::string>()) got = &d;
    ASSERT_NE(got, nullptr);
    EXPECT_EQ((*got)["method"], want["method"].get<std::string>()) << (*got)["reason"];
    EXPECT_NEAR((*got)["difference"].get<double>(), want["difference"].get<double>(), 1e-14);
    expect_near_or_null((*got)["ci"].is_object() ? (*got)["ci"]["lower"] : Json(nullptr),
                        want["lower"], 1e-14, "lower");
    expect_near_or_null((*got)["ci"].is_object() ? (*got)["ci"]["upper"] : Json(nullptr),
                        want["upper"], 1e-14, "upper");
    expect_near_or_null((*got)["p"], want["p"], 1e-14, "p");
    if (want.contains("p_holm")) {
      EXPECT_NEAR((*got)["p_holm"].get<double>(), want["p_holm"].get<double>(), 1e-14);
      EXPECT_NEAR((*got)["p_bh"].get<double>(), want["p_bh"].get<double>(), 1e-14);
    }
    if (want["method"] == "paired") {
      EXPECT_EQ((*got)["units"]["shared"], want["shared"].get<std::size_t>());
      EXPECT_EQ((*got)["units"]["only_a"], want["only_a"].get<std::size_t>());
      EXPECT_EQ((*got)["units"]["only_b"], want["only_b"].get<std::size_t>());
      expect_near_or_null((*got)["paired_t"].is_object() ? (*got)["paired_t"]["p"] : Json(nullptr),
                          want["paired_t_p"], 1e-12, "paired t");
    }
    if (want["method"] == "unpaired") {
      EXPECT_NE((*got)["reason"].get<std::string>().find(id == "ranked" || id == "noci"
                                                             ? "neither run has a units table"
                                                             : "stimuli differ"),
                std::string::npos)
          << (*got)["reason"];
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8u);
  for (const auto& [id, shares] : e["share_first"].items()) {
    SCOPED_TRACE("ranking " + id);
    const Json& ranks = (*find_quantity(r, id))["ranking"];
    EXPECT_EQ(ranks["method"], "normal draws");
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(ranks["ranks"][i]["share_first"].get<double>(), shares[i].get<double>(), 1e-14);
  }
  for (const char* run : {"A", "B", "C"}) {
    for (const char* id : {"warmth", "gap"}) {
      const Json& est = (*find_quantity(r, id))["estimates"];
      for (const Json& x : est) {
        if (x["run"] != run) continue;
        EXPECT_NEAR(x["units_estimate"].get<double>(), e["units_estimates"][run][id].get<double>(),
                    1e-15);
      }
    }
  }
}

TEST(CompareRuns, TwoRunsOnTheSameStimuliRankFromTheSameResampledUnits) {
  const auto& e = fixture_json("compare_runs/expected.json");
  const Json r = compare_runs({fixture_run("run_a"), fixture_run("run_b")}, fixture_options());
  for (const auto& [id, shares] : e["share_first_ab"].items()) {
    SCOPED_TRACE(id);
    const Json& ranks = (*find_quantity(r, id))["ranking"];
    EXPECT_EQ(ranks["method"], "paired bootstrap");
    for (std::size_t i = 0; i < 2; ++i)
      EXPECT_NEAR(ranks["ranks"][i]["share_first"].get<double>(), shares[i].get<double>(), 1e-14);
  }
  const Json& noci = (*find_quantity(r, "noci"))["differences"][0];
  EXPECT_EQ(noci["method"], "none");
  EXPECT_NE(noci["reason"].get<std::string>().find("run B reports no interval"), std::string::npos);
  EXPECT_TRUE(noci["p_holm"].is_null());
  // With every pair: A-B, A-C and B-C for each of the 4 quantities.
  CompareRunsOptions all = fixture_options();
  all.pairs = RunPairs::All;
  const Json r3 =
      compare_runs({fixture_run("run_a"), fixture_run("run_b"), fixture_run("run_c")}, all);
  EXPECT_EQ(r3["tests"]["count"], 12u);
}

// A run folder written by the test: summary.json with one `mean` finding over units/v.csv.
void write_run(const fs::path& dir, const std::vector<double>& values, const std::string& kind,
               const std::string& images_hash, bool with_units = true,
               const std::string& input_name = "images.table") {
  fs::create_directories(dir / "units");
  std::ofstream csv(dir / "units/v.csv");
  csv << "unit,value\n";
  double sum = 0, sq = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    csv << "u" << i << "," << fmt::format("{}", values[i]) << "\n";
    sum += values[i];
  }
  const double n = static_cast<double>(values.size()), mean = sum / n;
  for (const double v : values) sq += (v - mean) * (v - mean);
  const double half = 1.959963984540054 * std::sqrt(sq / (n - 1) / n);
  Json units = with_units
                   ? Json{{"table", "units/v.csv"}, {"key", "unit"},       {"value", "value"},
                          {"group", nullptr},       {"aggregate", "mean"}, {"groups", nullptr}}
                   : Json(nullptr);
  const Json s{
      {"schema", "vlbias.summary/1"},
      {"kind", kind},
      {"run", {{"inputs", {{input_name, images_hash}}}, {"seed", 0}}},
      {"findings",
       Json::array({Json{{"id", "m"},
                         {"quantity", "mean score"},
                         {"estimate", mean},
                         {"ci", {{"lower", mean - half}, {"upper", mean + half}, {"level", 0.95}}},
                         {"better", "lower"},
                         {"units", units}}})}};
  std::ofstream(dir / "summary.json") << s.dump(2);
}

fs::path temp_root() {
  const fs::path d = fs::temp_directory_path() /
                     fmt::format("vlbias_compare_runs_{}_{}", ::getpid(),
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// n units: a unit effect shared by both runs plus each run's own noise; run B shifted.
std::pair<std::vector<double>, std::vector<double>> simulated_pair(std::mt19937_64& gen,
                                                                   std::size_t n, double shift) {
  std::normal_distribution<double> unit(0.0, 1.0), noise(0.0, 0.5);
  std::vector<double> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = unit(gen);
    a[i] = u + noise(gen);
    b[i] = u + noise(gen) + shift;
  }
  return {a, b};
}

TEST(CompareRuns, APlantedDifferenceBetweenTwoSyntheticRunsIsFound) {
  const fs::path root = temp_root();
  std::mt19937_64 gen(11);
  const auto [a, b] = simulated_pair(gen, 200, -0.25);
  write_run(root / "a", a, "lvlm-counterfactual", "x");
  write_run(root / "b", b, "lvlm-counterfactual", "x");
  CompareRunsOptions o;
  o.bootstrap = 2000;
  const Json r = compare_runs({root / "a", root / "b"}, o);
  const Json& d = r["quantities"][0]["differences"][0];
  EXPECT_EQ(d["method"], "paired");
  EXPECT_LT(d["p_holm"].get<double>(), 0.05);
  EXPECT_TRUE(d["significant"].get<bool>());
  EXPECT_LT(d["ci"]["lower"].get<double>(), -0.25);
  EXPECT_GT(d["ci"]["upper"].get<double>(), -0.25);
  EXPECT_LT(d["paired_t"]["p"].get<double>(), 0.05);
  // Lower is better: run B ranks first in nearly every replicate.
  EXPECT_GT(r["quantities"][0]["ranking"]["ranks"][1]["share_first"].get<double>(), 0.99);
}

// Over many simulated null pairs the paired bootstrap (A, B: the same units) and the unpaired
// normal test (A, C: independent units, other stimuli) reject at about alpha. 400 pairs: the
// binomial sd of a 5% rate is 1.1 points; the bounds allow 3.5 sd plus the percentile bootstrap's
// small-sample liberalness (n = 40 units).
TEST(CompareRuns, NullPairsRejectAtAboutTheStatedRate) {
  const fs::path root = temp_root();
  std::mt19937_64 gen(2026);
  constexpr std::size_t kPairs = 400;
  std::size_t paired = 0, unpaired = 0;
  CompareRunsOptions o;
  o.bootstrap = 499;
  o.stimuli = {"images.table"};  // kind "k" has no default stimulus input
  o.stimuli_given = true;
  for (std::size_t s = 0; s < kPairs; ++s) {
    const auto [a, b] = simulated_pair(gen, 40, 0.0);
    write_run(root / "a", a, "k", "same");
    write_run(root / "b", b, "k", "same");
    // Other stimuli (independent units): unpaired.
    write_run(root / "c", simulated_pair(gen, 40, 0.0).second, "k", "other");
    o.seed = s;
    const Json r = compare_runs({root / "a", root / "b", root / "c"}, o);
    const Json& ds = r["quantities"][0]["differences"];
    ASSERT_EQ(ds[0]["method"], "paired");
    ASSERT_EQ(ds[1]["method"], "unpaired");
    paired += ds[0]["p"].get<double>() < 0.05;
    unpaired += ds[1]["p"].get<double>() < 0.05;
  }
  const double rate_p = static_cast<double>(paired) / kPairs;
  const double rate_u = static_cast<double>(unpaired) / kPairs;
  SCOPED_TRACE(fmt::format("paired rejects {:.3f}, unpaired {:.3f}", rate_p, rate_u));
  EXPECT_GE(rate_p, 0.015);
  EXPECT_LE(rate_p, 0.095);
  EXPECT_GE(rate_u, 0.015);
  EXPECT_LE(rate_u, 0.095);
  std::cout << fmt::format(
      "[ calibration ] null rejection at 0.05 over {} pairs: paired {:.3f}, "
      "unpaired {:.3f}\n",
      kPairs, rate_p, rate_u);
}

TEST(CompareRuns, StimuliAreFoundByRoleOrFileNameAndDifferentOnesMakeTheTestUnpaired) {
  const fs::path root = temp_root();
  const std::vector<double> v{1, 2, 3, 4};
  write_run(root / "a", v, "social-perception", "h1", true, "/data/a/images.csv");
  write_run(root / "b", v, "social-perception", "h2", true, "/data/b/images.csv");
  CompareRunsOptions o;
  o.bootstrap = 50;
  // Path-keyed inputs hold no role name: matched by key, and the reason says so.
  const Json d0 = compare_runs({root / "a", root / "b"}, o)["quantities"][0]["differences"][0];
  EXPECT_EQ(d0["method"], "paired");
  EXPECT_NE(d0["reason"].get<std::string>().find("holds none of the stimulus inputs"),
            std::string::npos);
  o.stimuli = {"images.csv"};
  o.stimuli_given = true;
  const Json d1 = compare_runs({root / "a", root / "b"}, o)["quantities"][0]["differences"][0];
  EXPECT_EQ(d1["method"], "unpaired");
  EXPECT_NE(d1["reason"].get<std::string>().find("stimuli differ (images.csv sha256 h1... vs h2"),
            std::string::npos)
      << d1["reason"];
  write_run(root / "b", v, "social-perception", "h2", false, "images.table");
  write_run(root / "a", v, "social-perception", "h2", true, "images.table");
  o.stimuli_given = false;
  const Json d2 = compare_runs({root / "a", root / "b"}, o)["quantities"][0]["differences"][0];
  EXPECT_EQ(d2["method"], "unpaired");
  EXPECT_NE(d2["reason"].get<std::string>().find("run B has no units table"), std::string::npos);
}

TEST(CompareRuns, BadInputsAreClearInputErrors) {
  const fs::path root = temp_root();
  write_run(root / "a", {1, 2, 3}, "k", "h");
  write_run(root / "b", {1, 2, 4}, "k", "h");
  write_run(root / "other", {1, 2, 4}, "other-kind", "h");
  fs::create_directories(root / "empty");
  const CompareRunsOptions o;
  auto err = [&](const std::vector<fs::path>& runs) {
    return error_of<InputError>([&] { compare_runs(runs, o); });
  };
  EXPECT_NE(err({root / "a", root / "empty"}).find("summary.json: missing"), std::string::npos);
  EXPECT_NE(err({root / "a", root / "other"}).find("only runs of one audit kind compare"),
            std::string::npos);
  EXPECT_NE(err({root / "a", root / "a/."}).find("the same run is given twice"), std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { compare_runs({root / "a"}, o); }).find("at least two"),
            std::string::npos);

  auto edit = [&](const std::string& from, const std::string& to) {
    std::ifstream in(root / "b/summary.json");
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    std::ofstream(root / "b/summary.json") << s;
  };
  edit("vlbias.summary/1", "vlbias.summary/9");
  EXPECT_NE(err({root / "a", root / "b"}).find("schema 'vlbias.summary/9'"), std::string::npos);
  edit("vlbias.summary/9", "vlbias.summary/1");
  std::ofstream(root / "b/units/v.csv") << "unit,value\nu0,1\nu1,high\n";
  EXPECT_NE(err({root / "a", root / "b"}).find("value"), std::string::npos);
  fs::remove(root / "b/units/v.csv");
  EXPECT_NE(err({root / "a", root / "b"}).find("units table of finding 'm' is missing"),
            std::string::npos);
  edit("units/v.csv", "../a/units/v.csv");
  EXPECT_NE(err({root / "a", root / "b"}).find("not a path inside the run folder"),
            std::string::npos);
  // mean_difference with a group the table lacks.
  std::ofstream(root / "b/units/g.csv") << "unit,grp,value\nu0,x,1\nu0,y,2\nu1,x,3\nu1,y,1\n";
  edit(R"("table": "../a/units/v.csv")", R"("table": "units/g.csv")");
  edit(R"("aggregate": "mean")", R"("aggregate": "mean_difference")");
  edit(R"("group": null)", R"("group": "grp")");
  edit(R"("groups": null)", R"("groups": ["x", "z"])");
  EXPECT_NE(err({root / "a", root / "b"}).find("the group 'z' of finding 'm'"), std::string::npos);
  std::ofstream(root / "b/summary.json") << "{\"schema\": ";
  EXPECT_NE(err({root / "a", root / "b"}).find("summary.json"), std::string::npos);
}

}  // namespace in_compare_runs_test
}  // namespace
}  // namespace vlbias
