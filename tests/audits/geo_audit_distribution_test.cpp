// The geo audit's distribution analysis with bootstrap intervals and FID_inf
// (analyses.distribution.bootstrap / ci / fid_inf): per-cell intervals in results.json, the
// table and the report, the same cells as the library computes, none at bootstrap: 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_geo_audit_distribution_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using nlohmann::json;

const fs::path kGeo = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/audits/geo";

// The fixture study (tests/fixtures/audits/geo) with only the distribution analysis, `options`
// its map.
fs::path write_spec(const fs::path& dir, const std::string& options) {
  fs::create_directories(dir);
  const fs::path spec = dir / "spec.yaml";
  std::ofstream(spec) << fmt::format(
      "version: 1\nkind: geo-diversity\nseed: 11\nmin_group_size: 5\n"
      "real: {{table: '{0}/real.csv', features: '{0}/real.npy'}}\n"
      "generated: {{table: '{0}/generated.csv', features: '{0}/generated.npy'}}\n"
      "aliases: {{region: {{\"the Americas\": Americas}}}}\n"
      "analyses: {{region: false, object_region: false, consistency: false,\n"
      "            distribution: {1}}}\n",
      kGeo.string(), options);
  return spec;
}

json run_audit(const fs::path& spec, const fs::path& out, const std::string& extra = "") {
  const CliResult r =
      run_cli(extra + " --quiet audit '" + spec.string() + "' --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(read_file(out / "results.json"));
}

TEST(GeoDistributionIntervals, EveryCellHasIntervalsAroundItsEstimatesAndFidInf) {
  const fs::path dir = cli_util::temp_dir();
  const json out = run_audit(
      write_spec(dir,
                 "{fid: true, vendi: true, kid: true, kid_subsets: 5, kid_subset_size: 10, "
                 "bootstrap: 60, ci: 0.9, fid_inf: true, fid_inf_points: 5}"),
      dir / "run");
  const json& d = out["analyses"]["distribution"];
  EXPECT_EQ(d["bootstrap"], 60);
  EXPECT_EQ(d["ci"], 0.9);
  std::size_t with_values = 0;
  for (const json& c : d["cells"]) {
    SCOPED_TRACE(c.dump());
    if (!c["fid"].is_number()) continue;
    ++with_values;
    // Recentred on the estimate: it lies inside its interval.
    const auto inside = [&](const char* estimate, const char* ci) {
      EXPECT_LE(c[ci]["lower"].get<double>(), c[estimate].get<double>() + 1e-12) << ci;
      EXPECT_GE(c[ci]["upper"].get<double>(), c[estimate].get<double>() - 1e-12) << ci;
      EXPECT_LT(c[ci]["lower"].get<double>(), c[ci]["upper"].get<double>()) << ci;
    };
    inside("fid", "fid_ci");
    inside("vendi_generated", "vendi_generated_ci");
    inside("kid_all_rows", "kid_ci");
    ASSERT_TRUE(c["fid_inf"].is_object());
    EXPECT_EQ(c["fid_inf"]["points"].size(), 5u);
    // The last point is the whole cell.
    EXPECT_NEAR(c["fid_inf"]["points"][4]["fid"].get<double>(), c["fid"].get<double>(),
                1e-9 * std::max(1.0, c["fid"].get<double>()));
  }
  EXPECT_GT(with_values, 0u);
  const Table t = read_table((dir / "run/tables/geo_distribution.csv").string());
  for (const char* col :
       {"fid_lower", "fid_upper", "kid_lower", "kid_upper", "kid_all_rows", "vendi_generated_lower",
        "vendi_generated_upper", "fid_inf", "fid_inf_slope"}) {
    EXPECT_TRUE(t.find(col).has_value()) << col;
  }
  const std::string html = read_file(dir / "run/report.html");
  EXPECT_NE(html.find("fid_lower"), std::string::npos);
  EXPECT_NE(html.find("FID_inf"), std::string::npos);
}

TEST(GeoDistributionIntervals, BootstrapZeroWritesNoIntervalKeysOrColumns) {
  const fs::path dir = cli_util::temp_dir();
  const json out = run_audit(write_spec(dir, "{fid: true, vendi: true}"), dir / "run");
  const json& d = out["analyses"]["distribution"];
  EXPECT_FALSE(d.contains("bootstrap"));
  for (const json& c : d["cells"]) {
    for (const char* k : {"fid_ci", "kid_ci", "vendi_generated_ci", "fid_inf"}) {
      EXPECT_FALSE(c.contains(k)) << k;
    }
  }
  const Table t = read_table((dir / "run/tables/geo_distribution.csv").string());
  EXPECT_FALSE(t.find("fid_lower").has_value());
  EXPECT_FALSE(t.find("fid_inf").has_value());
}

TEST(GeoDistributionIntervals, IntervalsDoNotDependOnThreadCount) {
  const fs::path dir = cli_util::temp_dir();
  const fs::path spec = write_spec(dir,
                                   "{fid: true, vendi: true, kid: true, kid_subsets: 3, "
                                   "kid_subset_size: 8, bootstrap: 40, fid_inf: true}");
  json one = run_audit(spec, dir / "one", "--threads 1");
  json two = run_audit(spec, dir / "two", "--threads 2");
  EXPECT_EQ(one["analyses"]["distribution"], two["analyses"]["distribution"]);
}

TEST(GeoDistributionIntervals, BadKeysNameTheKey) {
  const fs::path dir = cli_util::temp_dir();
  struct Case {
    std::string options, message;
  };
  for (const Case& k : {Case{"{ci: 1.5, bootstrap: 10}", "analyses.distribution.ci"},
                        Case{"{fid_inf_min: 1}", "analyses.distribution.fid_inf_min"},
                        Case{"{fid_inf_points: 1}", "analyses.distribution.fid_inf_points"},
                        Case{"{bootstrap: -3}", "analyses.distribution.bootstrap"}}) {
    SCOPED_TRACE(k.options);
    const CliResult r =
        run_cli("--quiet audit --check '" + write_spec(dir / "bad", k.options).string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(k.message), std::string::npos) << r.err;
  }
}

}  // namespace in_geo_audit_distribution_test
}  // namespace
}  // namespace vlbias
