// `vlbias metric fid|kid|vendi --bootstrap` and `metric fid --fid-inf` end to end against
// tools/make_distribution_bootstrap_fixtures.py (every resample materialised, numpy.polyfit).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_distribution_bootstrap_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::run_cli;

const std::string kDir = "tests/fixtures/";

const json& reference() {
  return vlbias::testing_util::fixture_json("metrics/distribution_bootstrap/reference.json");
}

double rel(double got, double want) {
  return std::abs(got - want) / std::max(1.0, std::abs(want));
}

std::string pair_args(const json& c) {
  return "--real " + kDir + c["real"].get<std::string>() + " --fake " + kDir +
         c["generated"].get<std::string>();
}

std::string bootstrap_args() {
  return " --bootstrap " + std::to_string(reference()["resamples"].get<int>()) + " --seed " +
         std::to_string(reference()["seed"].get<std::uint64_t>());
}

json run_json(const std::string& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

void expect_interval(const json& got, const json& want) {
  EXPECT_LT(rel(got["lower"].get<double>(), want["recentred_lower"].get<double>()), 1e-6);
  EXPECT_LT(rel(got["upper"].get<double>(), want["recentred_upper"].get<double>()), 1e-6);
  EXPECT_LT(rel(got["raw"]["lower"].get<double>(), want["lower"].get<double>()), 1e-6);
  EXPECT_LT(rel(got["raw"]["upper"].get<double>(), want["upper"].get<double>()), 1e-6);
  EXPECT_LT(rel(got["shift"].get<double>(), want["shift"].get<double>()), 1e-6);
  EXPECT_EQ(got["resamples"], reference()["resamples"]);
  EXPECT_EQ(got["level"].get<double>(), 0.95);
}

TEST(CliDistributionBootstrap, FidKidAndVendiIntervalsMatchTheMaterialisedReference) {
  for (const char* name : {"tall", "wide"}) {
    SCOPED_TRACE(name);
    const json& c = reference()["cases"][name];
    const json& want = c["bootstrap"];
    const json f = run_json("metric fid " + pair_args(c) + bootstrap_args());
    expect_interval(f["ci"], want["fid"]);
    const json k = run_json("metric kid " + pair_args(c) + bootstrap_args());
    expect_interval(k["ci"], want["kid"]);
    EXPECT_LT(rel(k["kid_all_rows"].get<double>(), want["estimate"]["kid"].get<double>()), 1e-6);
    const json v = run_json("metric vendi --features " + kDir + c["generated"].get<std::string>() +
                            bootstrap_args());
    expect_interval(v["ci"], want["vendi"]);
    EXPECT_EQ(v["provenance"]["parameters"]["bootstrap"], reference()["resamples"]);
  }
}

TEST(CliDistributionBootstrap, WithoutBootstrapThereIsNoCiKey) {
  const json& c = reference()["cases"]["tall"];
  EXPECT_FALSE(run_json("metric fid " + pair_args(c)).contains("ci"));
  EXPECT_FALSE(run_json("metric kid " + pair_args(c)).contains("ci"));
  EXPECT_FALSE(run_json("metric fid " + pair_args(c)).contains("fid_inf"));
}

TEST(CliFidInf, PointsSlopeAndInterceptMatchNumpyPolyfit) {
  for (const char* name : {"tall", "wide"}) {
    SCOPED_TRACE(name);
    const json& c = reference()["cases"][name];
    const json& want = c["fid_inf"];
    const json f = run_json("metric fid " + pair_args(c) + " --fid-inf --fid-inf-points " +
                            std::to_string(want["points"].get<int>()) + " --fid-inf-min " +
                            std::to_string(want["min_size"].get<int>()) + " --seed " +
                            std::to_string(want["seed"].get<int>()));
    const json& got = f["fid_inf"];
    ASSERT_EQ(got["points"].size(), want["sizes"].size());
    for (std::size_t p = 0; p < want["sizes"].size(); ++p) {
      EXPECT_EQ(got["points"][p]["n"], want["sizes"][p]);
      EXPECT_LT(rel(got["points"][p]["fid"].get<double>(), want["fids"][p].get<double>()), 1e-6);
    }
    EXPECT_LT(rel(got["fid_inf"].get<double>(), want["fid_inf"].get<double>()), 1e-6);
    EXPECT_LT(rel(got["slope"].get<double>(), want["slope"].get<double>()), 1e-6);
  }
}

TEST(CliDistributionBootstrap, BadLevelsMinimumsAndTooFewRowsAreExitCode2WithAMessage) {
  const json& c = reference()["cases"]["tall"];
  const std::string fid = "metric fid " + pair_args(c);
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {fid + " --bootstrap 10 --ci 1.5", "--ci must be in (0, 1)"},
      {fid + " --bootstrap 10 --ci 0", "--ci must be in (0, 1)"},
      {"metric kid " + pair_args(c) + " --bootstrap 10 --ci -1", "--ci must be in (0, 1)"},
      {fid + " --fid-inf --fid-inf-min 1", "--fid-inf-min must be at least 2"},
      {fid + " --fid-inf --fid-inf-min 41", "below the 40 generated rows"},
      {fid + " --fid-inf-min 5", "--fid-inf-min goes with --fid-inf"},
      {fid + " --fid-inf --fid-inf-points 1", "at least 2 sizes"},
      {"metric vendi --features " + kDir + c["real"].get<std::string>() + " --bootstrap 10 --ci 2",
       "--ci must be in (0, 1)"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.args);
    const CliResult r = run_cli(k.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(k.message), std::string::npos) << r.err;
  }
}

}  // namespace in_metric_distribution_bootstrap_test
}  // namespace
