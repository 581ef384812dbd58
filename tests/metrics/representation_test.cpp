// Representation measures (include/vlbias/metrics/representation.h) against DALL-Eval's np_mad,
// HEIM's imbalance formulas and scipy.stats.entropy, ported in
// tools/make_representation_fixtures.py (tests/fixtures/metrics/representation.json); then the
// hand-worked extremes and the input errors.
#include "vlbias/metrics/representation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"

namespace vlbias {
namespace {
namespace in_representation_test {

using json = nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("metrics/representation.json");
}

TEST(RepresentationMeasures, EqualTheirPeersDefinitions) {
  for (const json& c : fixture().at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::vector<double> p = c.at("shares").get<std::vector<double>>();
    const std::vector<double> q = c.at("target").get<std::vector<double>>();
    EXPECT_NEAR(parity_mad(p), c.at("parity_mad").get<double>(), 1e-15);
    EXPECT_NEAR(entropy_bias(p), c.at("entropy_bias").get<double>(), 1e-12);
    EXPECT_NEAR(kl_to_target(p, q), c.at("kl_to_target").get<double>(), 1e-12);
    // HEIM's two imbalances are the parity MAD for 2 and 10 classes.
    if (c.contains("heim_gender_imbalance")) {
      EXPECT_NEAR(parity_mad(p), c.at("heim_gender_imbalance").get<double>(), 1e-15);
    }
    if (c.contains("heim_skin_tone_imbalance")) {
      EXPECT_NEAR(parity_mad(p), c.at("heim_skin_tone_imbalance").get<double>(), 1e-15);
    }
  }
  for (const json& c : fixture().at("counts")) {
    const std::vector<std::uint64_t> counts = c.at("counts").get<std::vector<std::uint64_t>>();
    const std::vector<double> want = c.at("shares").get<std::vector<double>>();
    const std::vector<double> got = shares_from_counts(counts);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-15);
  }
}

TEST(RepresentationMeasures, ExtremesAreTheHandWorkedValues) {
  // One class of K has everything: MAD = ((1 - 1/K) + (K - 1)/K) / K = 2 (K - 1) / K^2.
  EXPECT_DOUBLE_EQ(parity_mad(std::vector<double>{0, 0, 1, 0}), 2.0 * 3 / 16);
  EXPECT_DOUBLE_EQ(parity_mad(std::vector<double>{0.5, 0.5}), 0.0);
  EXPECT_DOUBLE_EQ(entropy_bias(std::vector<double>{0, 1, 0}), 1.0);
  EXPECT_NEAR(entropy_bias(std::vector<double>{0.25, 0.25, 0.25, 0.25}), 0.0, 1e-15);
  // A share where the target has none: the target says it never happens.
  EXPECT_EQ(kl_to_target(std::vector<double>{0.5, 0.5}, std::vector<double>{1, 0}),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(kl_to_target(std::vector<double>{1, 0}, std::vector<double>{1, 0}), 0.0);
}

TEST(RepresentationMeasures, BadSharesAreInputErrorsNamingTheFunction) {
  const auto msg = [](const std::function<void()>& f) {
    return testing_util::error_of<InputError>(f);
  };
  EXPECT_NE(msg([] { parity_mad(std::vector<double>{1.0}); }).find("parity_mad"),
            std::string::npos);
  EXPECT_NE(msg([] {
              entropy_bias(std::vector<double>{0.5, 0.6});
            }).find("sum to"),
            std::string::npos);
  EXPECT_NE(msg([] {
              parity_mad(std::vector<double>{std::nan(""), 1.0});
            }).find("finite"),
            std::string::npos);
  EXPECT_NE(msg([] {
              kl_to_target(std::vector<double>{0.5, 0.5}, std::vector<double>{0.2, 0.3, 0.5});
            }).find("target of 3"),
            std::string::npos);
  EXPECT_NE(msg([] {
              shares_from_counts(std::vector<std::uint64_t>{0, 0});
            }).find("every count"),
            std::string::npos);
}

}  // namespace in_representation_test
}  // namespace
}  // namespace vlbias
