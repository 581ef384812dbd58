// The geo-diversity audit (kind: geo-diversity): its sampling and resampling blocks, the whole
// audit against the independent numpy implementation of tools/make_geo_fixtures.py, planted
// and null synthetic studies (geo_study.h), determinism, bad specs and bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audits/geo_study.h"
#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/audits/audit.h"
#include "vlbias/audits/geo_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/sample.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/prdc.h"

namespace vlbias {
namespace {
namespace in_geo_audit_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using nlohmann::json;

const fs::path kGeoFixtures = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/audits/geo";

std::string quote(const fs::path& p) {
  return fmt::format("'{}'", p.string());
}

CliResult run_audit_cli(const fs::path& spec, const fs::path& out, const std::string& extra = "") {
  return run_cli(extra + " --quiet audit " + quote(spec) + " --out " + quote(out));
}

// ------------------------------------------------------------------ building blocks

TEST(GeoSampling, ObjectMixSampleMatchesTargetsWhenPoolsSuffice) {
  std::vector<std::vector<std::uint32_t>> pools = {{0, 1, 2, 3, 4, 5}, {10, 11, 12}, {20}};
  const MatchedSample m = object_mix_sample({4, 2, 0}, pools, 9);
  EXPECT_EQ(m.counts, (std::vector<std::size_t>{4, 2, 0}));
  EXPECT_EQ(m.target, 6u);
  EXPECT_EQ(m.scale, 1.0);
  ASSERT_EQ(m.rows.size(), 6u);
  // Object 0's rows come from pool 0 and are distinct (without replacement), then object 1's.
  std::set<std::uint32_t> first(m.rows.begin(), m.rows.begin() + 4);
  EXPECT_EQ(first.size(), 4u);
  for (const auto r : first) EXPECT_LT(r, 6u);
  EXPECT_GE(m.rows[4], 10u);
  // The draw is the partial Fisher-Yates shuffle of Rng(seed, object).
  Rng rng(9, 0);
  std::vector<std::uint32_t> pool = pools[0];
  for (std::size_t i = 0; i < 4; ++i) std::swap(pool[i], pool[i + rng.uniform_index(6 - i)]);
  EXPECT_EQ(std::vector<std::uint32_t>(m.rows.begin(), m.rows.begin() + 4),
            std::vector<std::uint32_t>(pool.begin(), pool.begin() + 4));
}

TEST(GeoSampling, ObjectMixSampleScalesDownKeepingTheMix) {
  // Targets 10, 5, 5 (mix 2:1:1); object 1 has only 2 generations: scale 0.4, total 8;
  // quotas 4, 2, 2.
  std::vector<std::vector<std::uint32_t>> pools(3);
  for (std::uint32_t i = 0; i < 30; ++i) pools[0].push_back(i);
  pools[1] = {100, 101};
  for (std::uint32_t i = 0; i < 9; ++i) pools[2].push_back(200 + i);
  const MatchedSample m = object_mix_sample({10, 5, 5}, pools, 1);
  EXPECT_DOUBLE_EQ(m.scale, 0.4);
  EXPECT_EQ(m.counts, (std::vector<std::size_t>{4, 2, 2}));
  // Hand-worked largest remainder: targets 7, 3, 2 with a pool of 1 for object 2 (scale 0.5):
  // quotas 3.5, 1.5, 1 -> floors 3, 1, 1, total floor(6) = 6: one more to the first remainder.
  pools[2] = {200};
  const MatchedSample r = object_mix_sample({7, 3, 2}, pools, 1);
  EXPECT_DOUBLE_EQ(r.scale, 0.5);
  EXPECT_EQ(r.counts, (std::vector<std::size_t>{4, 1, 1}));
  EXPECT_THROW(object_mix_sample({1}, pools, 1), InternalError);
}

TEST(GeoSampling, SampleRowsIsAPartialShuffle) {
  const std::vector<std::uint32_t> rows = {5, 6, 7, 8};
  EXPECT_EQ(sample_rows(rows, 10, 3).size(), 4u);
  const auto s = sample_rows(rows, 2, 3);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NE(s[0], s[1]);
}

// PRDC of a cell with its members, for the bootstrap tests.
PrdcResult small_cell() {
  Matrix real(30, 3), fake(25, 3);
  Rng rng(4);
  for (float& v : real.data) v = static_cast<float>(rng.uniform01());
  for (float& v : fake.data) v = static_cast<float>(rng.uniform01() * 1.2);
  PrdcOptions o;
  o.k = 3;
  o.per_sample = true;
  o.ball_members = true;
  return prdc(real, fake, o);
}

TEST(GeoSampling, PrdcBootstrapReplicatesAreThePrdcOfEachResample) {
  // Replicate b is PRDC of the resampled generations (duplicates kept) against the fixed real
  // balls: recompute it from the per-sample vectors and compare exactly; coverage after the
  // documented recentring.
  const PrdcResult r = small_cell();
  const std::size_t b_count = 50;
  const PrdcIntervals iv = prdc_bootstrap(r, b_count, 0.9, 77);
  std::vector<double> raw_coverage;
  for (std::size_t b = 0; b < b_count; ++b) {
    Rng rng(77, b);
    std::vector<std::uint32_t> drawn(r.n_fake, 0);
    double inside = 0, balls = 0;
    for (std::size_t i = 0; i < r.n_fake; ++i) {
      const std::size_t j = rng.uniform_index(r.n_fake);
      ++drawn[j];
      inside += r.fake_ball_count[j] > 0;
      balls += r.fake_ball_count[j];
    }
    std::size_t covered = 0;
    for (std::size_t i = 0; i < r.n_real; ++i) {
      bool any = false;
      for (auto m = r.members_offsets[i]; m < r.members_offsets[i + 1]; ++m) {
        any = any || drawn[r.members[m]] > 0;
      }
      covered += any;
    }
    EXPECT_DOUBLE_EQ(iv.precision_replicates[b], inside / r.n_fake);
    EXPECT_DOUBLE_EQ(iv.density_replicates[b], balls / (3.0 * r.n_fake));
    raw_coverage.push_back(static_cast<double>(covered) / r.n_real);
  }
  std::vector<double> sorted = raw_coverage;
  std::sort(sorted.begin(), sorted.end());
  const double shift = r.coverage - stats::percentile_sorted(sorted, 50.0);
  for (std::size_t b = 0; b < b_count; ++b) {
    EXPECT_DOUBLE_EQ(iv.coverage_replicates[b], std::clamp(raw_coverage[b] + shift, 0.0, 1.0));
  }
  EXPECT_EQ(iv.precision.resamples, b_count);
  EXPECT_LE(iv.coverage.lower, r.coverage);
  EXPECT_GE(iv.coverage.upper, r.coverage);
}

TEST(GeoSampling, CoverageOfACellCoveringEveryRealBallHasAnIntervalInsideZeroToOne) {
  // Generations on top of the real points: coverage 1, while resamples (about 63% distinct
  // generations) cover fewer balls, so the recentring shifts replicates up past 1 unclipped
  // (found by the DIG-In recipe's test: an upper bound of 1.25).
  Matrix real(30, 3);
  Rng rng(9);
  for (float& v : real.data) v = static_cast<float>(rng.uniform01());
  PrdcOptions o;
  o.k = 3;
  o.per_sample = true;
  o.ball_members = true;
  const PrdcResult r = prdc(real, real, o);
  ASSERT_DOUBLE_EQ(r.coverage, 1.0);
  const PrdcIntervals iv = prdc_bootstrap(r, 200, 0.95, 3);
  EXPECT_LE(iv.coverage.upper, 1.0);
  EXPECT_GE(iv.coverage.lower, 0.0);
  EXPECT_LT(iv.coverage.lower, 1.0);  // still an interval, not the point
  for (const double v : iv.coverage_replicates) {
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0);
  }
}

TEST(GeoSampling, BootstrapGapHandWorked) {
  // Differences 0.1, 0.3, 0.2, 0.4: mean 0.25, sd sqrt(0.05 / 3); gap 0.25.
  const Gap g = bootstrap_gap(0.5, {0.5, 0.7, 0.6, 0.8}, 0.25, {0.4, 0.4, 0.4, 0.4}, 0.5);
  EXPECT_DOUBLE_EQ(g.difference, 0.25);
  EXPECT_NEAR(g.se, std::sqrt(0.05 / 3.0), 1e-15);
  EXPECT_NEAR(g.p_value, std::erfc(0.25 / std::sqrt(0.05 / 3.0) / std::sqrt(2.0)), 1e-15);
  // 25th and 75th percentiles (type 7) of {0.1, 0.2, 0.3, 0.4}.
  EXPECT_NEAR(g.ci.lower, 0.175, 1e-12);
  EXPECT_NEAR(g.ci.upper, 0.325, 1e-12);
  const Gap flat = bootstrap_gap(0.3, {0.3, 0.3}, 0.3, {0.3, 0.3}, 0.9);
  EXPECT_EQ(flat.p_value, 1.0);
  EXPECT_TRUE(std::isnan(bootstrap_gap(0.5, {stats::kNaN}, 0.1, {0.2}, 0.9).p_value));
}

TEST(GeoSampling, PercentileMeanIsTheMeanOfNumpyPercentiles) {
  const std::vector<std::vector<double>> strata = {{0.1, 0.5, 0.3, 0.9}, {2.0, 1.0}, {4.0}};
  const PercentileMean pm = percentile_mean(strata, 10.0, 40, 0.9, 5);
  // numpy.percentile(.., 10): 0.16, 1.1, 4.0.
  EXPECT_NEAR(pm.per_stratum[0], 0.16, 1e-15);
  EXPECT_NEAR(pm.per_stratum[1], 1.1, 1e-15);
  EXPECT_EQ(pm.per_stratum[2], 4.0);
  EXPECT_NEAR(pm.value, (0.16 + 1.1 + 4.0) / 3.0, 1e-15);
  ASSERT_EQ(pm.replicates.size(), 40u);
  // Replicate 0: each stratum resampled in order from Rng(5, 0).
  Rng rng(5, 0);
  double total = 0;
  for (const auto& s : strata) {
    std::vector<double> buf(s.size());
    for (double& v : buf) v = s[rng.uniform_index(s.size())];
    std::sort(buf.begin(), buf.end());
    total += stats::percentile_sorted(buf, 10.0);
  }
  EXPECT_DOUBLE_EQ(pm.replicates[0], total / 3.0);
}

// ---------------------------------------------------------------- against numpy

const json& geo_reference() {
  return testing_util::fixture_json("audits/geo.json");
}

void expect_value(const json& got, const json& want, const char* key, double tol) {
  if (want[key].is_null()) {
    EXPECT_TRUE(!got.contains(key) || got[key].is_null()) << key;
  } else {
    ASSERT_TRUE(got.contains(key) && got[key].is_number()) << key << " in " << got.dump();
    EXPECT_NEAR(got[key].get<double>(), want[key].get<double>(), tol) << key;
  }
}

void expect_reference(const std::string& spec_name) {
  SCOPED_TRACE(spec_name);
  const json& want = geo_reference()[spec_name];
  const fs::path run = cli_util::temp_dir() / ("run_" + spec_name);
  const CliResult r = run_audit_cli(kGeoFixtures / spec_name, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(read_file(run / "results.json"));
  EXPECT_EQ(out["real"]["images"], want["real_images"]);
  EXPECT_EQ(out["real"]["regions"], want["regions"]);
  // Region indicator, every form and region.
  std::size_t seen = 0;
  for (const json& f : out["analyses"]["region"]["forms"]) {
    for (const json& c : f["regions"]) {
      for (const json& w : want["region"]) {
        if (w["form"] != f["form"] || w["region"] != c["region"]) continue;
        ++seen;
        SCOPED_TRACE(w.dump());
        EXPECT_EQ(c["n_real"], w["n_real"]);
        EXPECT_EQ(c["n_generated"], w["n_generated"]);
        for (const char* k : {"precision", "coverage", "recall", "density"}) {
          expect_value(c, w, k, 1e-15);
        }
      }
    }
  }
  EXPECT_EQ(seen, want["region"].size());
  // Object-region cells.
  seen = 0;
  for (const json& c : out["analyses"]["object_region"]["cells"]) {
    for (const json& w : want["object_region"]) {
      if (w["form"] != c["form"] || w["object"] != c["object"] || w["region"] != c["region"]) {
        continue;
      }
      ++seen;
      SCOPED_TRACE(w.dump());
      EXPECT_EQ(c["n_real"], w["n_real"]);
      EXPECT_EQ(c["n_generated"], w["n_generated"]);
      expect_value(c, w, "precision", 1e-15);
      if (!w["precision"].is_null()) {
        for (const char* k : {"coverage", "recall", "density"}) expect_value(c, w, k, 1e-15);
      }
    }
  }
  EXPECT_EQ(seen, want["object_region"].size());
  // Consistency, overall and per region.
  seen = 0;
  for (const json& f : out["analyses"]["consistency"]["forms"]) {
    for (const json& w : want["consistency"]) {
      if (w["form"] != f["form"]) continue;
      if (w["region"] == "all") {
        ++seen;
        EXPECT_NEAR(f["indicator"].get<double>(), w["indicator"].get<double>(), 1e-12);
      }
      for (const json& c : f.value("regions", json::array())) {
        if (c["region"] == w["region"]) {
          ++seen;
          EXPECT_NEAR(c["indicator"].get<double>(), w["indicator"].get<double>(), 1e-12)
              << w.dump();
        }
      }
    }
  }
  EXPECT_EQ(seen, want["consistency"].size());
  // FID and Vendi per (form, region).
  seen = 0;
  for (const json& c : out["analyses"]["distribution"]["cells"]) {
    for (const json& w : want["distribution"]) {
      if (w["form"] != c["form"] || w["region"] != c["region"]) continue;
      ++seen;
      EXPECT_NEAR(c["vendi_real"].get<double>(), w["vendi_real"].get<double>(), 1e-9);
      if (w.contains("fid")) {
        EXPECT_NEAR(c["fid"].get<double>(), w["fid"].get<double>(),
                    1e-10 * std::max(1.0, w["fid"].get<double>()));
        EXPECT_NEAR(c["vendi_generated"].get<double>(), w["vendi_generated"].get<double>(), 1e-9);
      }
    }
  }
  EXPECT_EQ(seen, want["distribution"].size());
  // "kite" has no real images: counted and named, not compared.
  EXPECT_EQ(out["generated"]["matching"]["objects_not_in_real"], json::array({"kite"}));
}

TEST(GeoAudit, MatchesNumpyReference) {
  expect_reference("spec.yaml");
}
TEST(GeoAudit, BalancedSamplingAndDroppedDuplicatesMatchNumpyReference) {
  expect_reference("spec_balanced.yaml");
}

TEST(GeoAudit, TablesCarryEveryIndicatorAndIntervalsHoldTheEstimates) {
  const fs::path run = cli_util::temp_dir() / "run";
  ASSERT_EQ(run_audit_cli(kGeoFixtures / "spec.yaml", run).exit_code, 0);
  const Table region = read_table((run / "tables/geo_region.csv").string());
  for (const char* c : {"form", "region", "n_real", "n_generated", "precision", "precision_lower",
                        "precision_upper", "coverage", "coverage_lower", "coverage_upper", "recall",
                        "density", "small"}) {
    EXPECT_TRUE(region.find(c).has_value()) << c;
  }
  for (std::size_t r = 0; r < region.rows; ++r) {
    for (const char* m : {"precision", "coverage"}) {
      const double v = region.numeric(m, true)[r];
      if (std::isnan(v)) continue;
      EXPECT_LE(region.numeric(std::string(m) + "_lower", true)[r], v + 1e-12) << r;
      EXPECT_GE(region.numeric(std::string(m) + "_upper", true)[r], v - 1e-12) << r;
    }
  }
  for (const char* t : {"geo_region_gaps", "geo_object_region", "geo_consistency",
                        "geo_consistency_objects", "geo_consistency_gaps", "geo_distribution"}) {
    EXPECT_TRUE(fs::exists(run / "tables" / (std::string(t) + ".csv"))) << t;
  }
  const Table gaps = read_table((run / "tables/geo_region_gaps.csv").string());
  for (const char* c : {"difference", "ci_lower", "ci_upper", "se", "p_value", "p_holm", "p_bh"}) {
    EXPECT_TRUE(gaps.find(c).has_value()) << c;
  }
}

// ---------------------------------------------------------------- synthetic studies

// Gap rows of a table for one form and metric, as {region_a, region_b} -> p_holm.
std::map<std::pair<std::string, std::string>, double> gaps_of(const Table& t,
                                                              const std::string& form,
                                                              const std::string& metric) {
  std::map<std::pair<std::string, std::string>, double> out;
  for (std::size_t r = 0; r < t.rows; ++r) {
    if (t.column("form").text(r) == form && t.column("metric").text(r) == metric) {
      out[{t.column("region_a").text(r), t.column("region_b").text(r)}] =
          t.numeric("p_holm", true)[r];
    }
  }
  return out;
}

TEST(GeoAudit, FindsPlantedRegionalGapsAndConsistencyDrop) {
  const fs::path dir = cli_util::temp_dir();
  synthetic::GeoStudyOptions o;
  synthetic::write_geo_study(dir / "study", o);
  const fs::path run = dir / "run";
  const CliResult r = run_audit_cli(dir / "study/spec.yaml", run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table gaps = read_table((run / "tables/geo_region_gaps.csv").string());
  for (const char* form : {"object-region", "object-country"}) {
    for (const char* metric : {"precision", "coverage"}) {
      for (const auto& [pair, p] : gaps_of(gaps, form, metric)) {
        const bool planted = pair.first == "Africa" || pair.second == "Africa";
        SCOPED_TRACE(fmt::format("{} {} {}-{}", form, metric, pair.first, pair.second));
        if (planted) {
          EXPECT_LT(p, 1e-6);
        } else {
          EXPECT_GT(p, 0.05);
        }
      }
    }
  }
  // Africa's cells are the low ones.
  const json out = json::parse(read_file(run / "results.json"));
  for (const json& f : out["analyses"]["region"]["forms"]) {
    if (f["form"] == "object") continue;
    for (const json& c : f["regions"]) {
      if (c["region"] == "Africa") {
        EXPECT_LT(c["precision"].get<double>(), 0.3);
        EXPECT_LT(c["coverage"].get<double>(), 0.3);
      } else {
        EXPECT_GT(c["precision"].get<double>(), 0.6);
      }
    }
  }
  const Table cgaps = read_table((run / "tables/geo_consistency_gaps.csv").string());
  for (const auto& [pair, p] : gaps_of(cgaps, "object-region", "consistency")) {
    const bool planted = pair.first == "Europe" || pair.second == "Europe";
    SCOPED_TRACE(pair.first + "-" + pair.second);
    if (planted) {
      EXPECT_LT(p, 1e-6);
    } else {
      EXPECT_GT(p, 0.05);
    }
  }
  for (const auto& [pair, p] : gaps_of(cgaps, "object-country", "consistency")) {
    EXPECT_GT(p, 0.05) << pair.first << "-" << pair.second;
  }
  // Region names came in as the generator spelled them and were aliased.
  EXPECT_FALSE(out["generated"]["matching"].contains("regions_not_in_real"));
}

TEST(GeoAudit, NullStudyFindsNoGap) {
  const fs::path dir = cli_util::temp_dir();
  synthetic::GeoStudyOptions o;
  o.precision_effect = 0.0;
  o.consistency_effect = 0.0;
  o.distribution = false;
  synthetic::write_geo_study(dir / "study", o);
  const fs::path run = dir / "run";
  ASSERT_EQ(run_audit_cli(dir / "study/spec.yaml", run).exit_code, 0);
  const Table gaps = read_table((run / "tables/geo_region_gaps.csv").string());
  for (const char* form : {"object-region", "object-country"}) {
    for (const char* metric : {"precision", "coverage"}) {
      for (const auto& [pair, p] : gaps_of(gaps, form, metric)) {
        EXPECT_GT(p, 0.05) << form << " " << metric << " " << pair.first << "-" << pair.second;
      }
    }
  }
  const Table cgaps = read_table((run / "tables/geo_consistency_gaps.csv").string());
  for (std::size_t i = 0; i < cgaps.rows; ++i) EXPECT_GT(cgaps.numeric("p_holm", true)[i], 0.05);
  EXPECT_FALSE(fs::exists(run / "tables/geo_distribution.csv"));
}

TEST(GeoAudit, ResultsDoNotDependOnThreadCount) {
  const fs::path dir = cli_util::temp_dir();
  synthetic::GeoStudyOptions o;
  o.bootstrap = 100;
  synthetic::write_geo_study(dir / "study", o);
  ASSERT_EQ(run_audit_cli(dir / "study/spec.yaml", dir / "one", "--threads 1").exit_code, 0);
  ASSERT_EQ(run_audit_cli(dir / "study/spec.yaml", dir / "two", "--threads 2").exit_code, 0);
  json one = json::parse(read_file(dir / "one/results.json"));
  json two = json::parse(read_file(dir / "two/results.json"));
  one["provenance"].erase("created_utc");
  two["provenance"].erase("created_utc");
  EXPECT_EQ(one, two);
  for (const auto& e : fs::directory_iterator(dir / "one/tables")) {
    EXPECT_EQ(read_file(e.path()), read_file(dir / "two/tables" / e.path().filename()))
        << e.path().filename();
  }
}

// ------------------------------------------------------------- specs and bad input

const std::string kGeoMinimal =
    "kind: geo-diversity\n"
    "real: {table: real.csv, features: real.npy}\n"
    "generated: {table: gen.csv, features: gen.npy}\n";

AuditSpec parse(const std::string& yaml) {
  return parse_audit_spec(yaml, "/data", "spec.yaml");
}

std::string usage_error(const std::string& yaml) {
  return testing_util::error_of<UsageError>([&] { parse(yaml); });
}

TEST(GeoSpec, MinimalSpecGetsDefaults) {
  const AuditSpec s = parse(kGeoMinimal);
  EXPECT_EQ(s.kind, AuditKind::GeoDiversity);
  EXPECT_STREQ(to_string(s.kind), "geo-diversity");
  EXPECT_EQ(s.geo().real_table, fs::path("/data/real.csv"));
  ASSERT_EQ(s.geo().generated.size(), 1u);
  EXPECT_EQ(s.geo().generated[0].features.path, fs::path("/data/gen.npy"));
  EXPECT_EQ(s.geo().generated[0].region_column, "region");
  EXPECT_EQ(s.geo().duplicates, "keep");
  EXPECT_EQ(s.geo().region.k, 3u);
  EXPECT_FALSE(s.geo().region.inclusive);
  EXPECT_EQ(s.geo().region.bootstrap, 1000u);
  EXPECT_EQ(s.geo().consistency.percentile, 10.0);
  EXPECT_TRUE(s.geo().distribution.fid);
  EXPECT_FALSE(s.geo().distribution.kid);
  EXPECT_TRUE(s.geo().objects_table.empty());
}

TEST(GeoSpec, TheSpecHoldsTheGeoKeysOnlyAndRefusesToActAsAnotherKind) {
  AuditSpec s = parse(kGeoMinimal);
  EXPECT_TRUE(std::holds_alternative<GeoAuditSpec>(s.kind_spec));
  const std::string e = testing_util::error_of<InternalError>([&] { (void)s.lvlm(); });
  EXPECT_NE(e.find("geo-diversity"), std::string::npos) << e;
  EXPECT_THROW((void)std::as_const(s).dual_encoder(), InternalError);
  EXPECT_THROW((void)s.representation(), InternalError);
  EXPECT_THROW((void)s.visual(), InternalError);
  s.geo().real_per_cell = 3;  // the mutable accessor edits the held spec
  EXPECT_EQ(std::as_const(s).geo().real_per_cell, 3u);
  // A default spec is a social-perception spec with its defaults.
  const AuditSpec d;
  EXPECT_EQ(d.kind, AuditKind::SocialPerception);
  EXPECT_NO_THROW((void)d.dual_encoder());
  EXPECT_THROW((void)d.geo(), InternalError);
}

TEST(GeoSpec, FullSpecFillsEveryField) {
  const AuditSpec s = parse(
      "version: 1\nkind: geo-diversity\nseed: 4\nmin_group_size: 7\n"
      "real: {table: r.csv, features: r.safetensors, tensor: f, region: reg, object: obj,\n"
      "       duplicates: keep-one}\n"
      "generated:\n"
      "  - {table: a.csv, features: a.npy, clip: ac.npy, form: \"{object} in {region}\"}\n"
      "  - {table: b.csv, features: b.npy, clip: b.st, clip_tensor: img, country: c,\n"
      "     form_column: pf, region: rr, object: oo}\n"
      "objects: {table: o.csv, embeddings: o.npy, tensor: t, object: name}\n"
      "aliases: {region: {\"the Americas\": Americas}, object: {pots: pot}}\n"
      "sampling: {real_per_cell: 180, generated_per_cell: 90}\n"
      "analyses:\n"
      "  region: {k: 5, inclusive: true, bootstrap: 0, ci: 0.9}\n"
      "  object_region: false\n"
      "  consistency: {variant: hessel, percentile: 5, bootstrap: 10, ci: 0.8}\n"
      "  distribution: {fid: false, vendi: false, kid: true, kid_subsets: 3, kid_subset_size: "
      "7}\n");
  const auto& g = s.geo();
  EXPECT_EQ(s.seed, 4u);
  EXPECT_EQ(s.min_group_size, 7u);
  EXPECT_EQ(g.real_features.tensor, "f");
  EXPECT_EQ(g.real_region_column, "reg");
  EXPECT_EQ(g.duplicates, "keep-one");
  ASSERT_EQ(g.generated.size(), 2u);
  EXPECT_EQ(g.generated[0].form, "object-region");
  EXPECT_EQ(g.generated[1].clip.tensor, "img");
  EXPECT_EQ(g.generated[1].country_column, "c");
  EXPECT_EQ(g.generated[1].form_column, "pf");
  EXPECT_EQ(g.generated[1].object_column, "oo");
  EXPECT_EQ(g.objects_column, "name");
  EXPECT_EQ(g.objects_embeddings.tensor, "t");
  ASSERT_EQ(g.region_aliases.size(), 1u);
  EXPECT_EQ(g.region_aliases[0].first, "the Americas");
  EXPECT_EQ(g.object_aliases[0].second, "pot");
  EXPECT_EQ(g.real_per_cell, 180u);
  EXPECT_EQ(g.generated_per_cell, 90u);
  EXPECT_EQ(g.region.k, 5u);
  EXPECT_TRUE(g.region.inclusive);
  EXPECT_EQ(g.region.bootstrap, 0u);
  EXPECT_FALSE(g.object_region.toggle.enabled);
  EXPECT_EQ(g.consistency.variant, "hessel");
  EXPECT_EQ(g.consistency.percentile, 5.0);
  EXPECT_TRUE(g.distribution.kid);
  EXPECT_EQ(g.distribution.kid_subset_size, 7u);
}

TEST(GeoSpec, BadSpecsNameTheKey) {
  EXPECT_NE(usage_error(kGeoMinimal + "prompts: {manifest: p.csv}\n").find("unknown key prompts"),
            std::string::npos);
  EXPECT_NE(usage_error("kind: geo-diversity\nreal: {table: r.csv, features: r.npy}\n")
                .find("missing required key generated"),
            std::string::npos);
  EXPECT_NE(usage_error(kGeoMinimal + "analyses: {region: {k: 0}}\n").find("analyses.region.k"),
            std::string::npos);
  EXPECT_NE(usage_error(kGeoMinimal + "analyses: {consistency: {percentile: 101}}\n")
                .find("must be 0 to 100"),
            std::string::npos);
  EXPECT_NE(usage_error("kind: geo-diversity\nreal: {table: r.csv, features: r.npy}\n"
                        "generated: {table: g.csv, features: g.npy, form: sometimes}\n")
                .find("generated.form must be object, object-region or object-country"),
            std::string::npos);
  EXPECT_NE(usage_error(kGeoMinimal + "real2: 1\n").find("unknown key real2"), std::string::npos);
  EXPECT_NE(usage_error("kind: geo-diversity\nreal: {table: r.csv, features: r.npy}\n"
                        "generated: []\n")
                .find("at least one source"),
            std::string::npos);
  EXPECT_NE(usage_error(kGeoMinimal + "aliases: {region: [a, b]}\n").find("aliases.region"),
            std::string::npos);
  EXPECT_NE(usage_error(kGeoMinimal + "analyses: {distribution: {fid: maybe}}\n")
                .find("must be true or false"),
            std::string::npos);
  EXPECT_NE(usage_error("kind: geo-diversity\nversion: 2\n").find("version"), std::string::npos);
  EXPECT_NE(usage_error(kGeoMinimal + "real: {table: r.csv, features: r.npy, duplicates: some}\n")
                .find("duplicate key real"),
            std::string::npos);
}

TEST(GeoAudit, ConsistencyRequestedWithoutClipIsAUsageError) {
  const fs::path dir = cli_util::temp_dir();
  std::ofstream(dir / "spec.yaml")
      << "kind: geo-diversity\n"
      << "real: {table: " << (kGeoFixtures / "real.csv").string()
      << ", features: " << (kGeoFixtures / "real.npy").string() << "}\n"
      << "generated: {table: " << (kGeoFixtures / "generated.csv").string()
      << ", features: " << (kGeoFixtures / "generated.npy").string() << "}\n"
      << "analyses: {consistency: true}\n";
  const CliResult r = run_audit_cli(dir / "spec.yaml", dir / "run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs generated.clip"), std::string::npos) << r.err;
}

TEST(GeoAudit, BadInputsAreClearErrors) {
  const fs::path dir = cli_util::temp_dir();
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  const std::string real = "real: {table: " + (kGeoFixtures / "real.csv").string() +
                           ", features: " + (kGeoFixtures / "real.npy").string() + "}\n";
  const auto audit = [&](const std::string& generated) {
    write("spec.yaml", "kind: geo-diversity\n" + real + "generated: " + generated + "\n" +
                           "analyses: {distribution: false}\n");
    return run_audit_cli(dir / "spec.yaml", dir / "run");
  };
  // Rows of the table and the features disagree.
  write("short.csv", "object,region\nbag,Africa\n");
  CliResult r =
      audit("{table: short.csv, features: " + (kGeoFixtures / "generated.npy").string() + "}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected one row per generated image"), std::string::npos) << r.err;
  // Features of another dimension.
  Matrix narrow(1, 3);
  write_npy(dir / "narrow.npy", narrow);
  r = audit("{table: short.csv, features: narrow.npy}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("same feature extractor"), std::string::npos) << r.err;
  // A form the audit does not know, named with its file and line.
  write("forms.csv", "object,region,form\nbag,Africa,object-planet\n");
  Matrix one(1, 6);
  write_npy(dir / "one.npy", one);
  r = audit("{table: forms.csv, features: one.npy}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("forms.csv line 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("object-planet"), std::string::npos) << r.err;
  // No object column.
  write("noobj.csv", "thing,region\nbag,Africa\n");
  r = audit("{table: noobj.csv, features: one.npy}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("object"), std::string::npos) << r.err;
  // Nothing usable.
  write("empty.csv", "object,region,form\n,Africa,object\n");
  r = audit("{table: empty.csv, features: one.npy}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no usable row"), std::string::npos) << r.err;
}

}  // namespace in_geo_audit_test
}  // namespace
}  // namespace vlbias
