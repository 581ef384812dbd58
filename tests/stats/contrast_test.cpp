// One group against the others (stats.h contrast_vs_others) against numpy/scipy:
// fixtures from tools/make_contrast_fixtures.py (whose two-group case is checked there
// against scipy's Welch t test), then the degenerate cases and input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_contrast_test {

GroupMoments moments(const std::vector<double>& x) {
  return {mean(x), variance(x), x.size()};
}

void expect_rel(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::max(1.0, std::abs(want))) << what;
}

TEST(ContrastFixture, MatchesNumpyAndScipy) {
  const auto fixture = testing_util::fixture_json("stats/contrasts.json");
  ASSERT_EQ(fixture["cases"].size(), 4u);
  for (const auto& c : fixture["cases"]) {
    std::vector<GroupMoments> groups;
    for (const auto& g : c["groups"]) groups.push_back(moments(g.get<std::vector<double>>()));
    const double level = c["level"].get<double>();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& want = c["expected"][g];
      const ContrastResult r = contrast_vs_others(groups, g, level);
      const std::string what = c["name"].get<std::string>() + ", group " + std::to_string(g);
      expect_rel(r.estimate, want["estimate"].get<double>(), 1e-12, what + " estimate");
      expect_rel(r.se, want["se"].get<double>(), 1e-12, what + " se");
      expect_rel(r.df, want["df"].get<double>(), 1e-9, what + " df");
      expect_rel(r.t, want["t"].get<double>(), 1e-9, what + " t");
      const double p = want["p_value"].get<double>();
      EXPECT_NEAR(r.p_value, p, 1e-6 * p + 1e-300) << what << " p";
      expect_rel(r.lower, want["lower"].get<double>(), 1e-9, what + " lower");
      expect_rel(r.upper, want["upper"].get<double>(), 1e-9, what + " upper");
      EXPECT_TRUE(r.note.empty());
    }
  }
}

TEST(ContrastFixture, AllGroupsAtOnceEqualOneAtATime) {
  const auto fixture = testing_util::fixture_json("stats/contrasts.json");
  for (const auto& c : fixture["cases"]) {
    std::vector<GroupMoments> groups;
    for (const auto& g : c["groups"]) groups.push_back(moments(g.get<std::vector<double>>()));
    const double level = c["level"].get<double>();
    const std::vector<ContrastResult> all = contrasts_vs_others(groups, level);
    ASSERT_EQ(all.size(), groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const ContrastResult one = contrast_vs_others(groups, g, level);
      const std::string what = c["name"].get<std::string>() + ", group " + std::to_string(g);
      expect_rel(all[g].estimate, one.estimate, 1e-13, what + " estimate");
      expect_rel(all[g].se, one.se, 1e-13, what + " se");
      expect_rel(all[g].df, one.df, 1e-12, what + " df");
      expect_rel(all[g].lower, one.lower, 1e-12, what + " lower");
      expect_rel(all[g].upper, one.upper, 1e-12, what + " upper");
    }
  }
}

// 300,000 groups: one contrast at a time over the others is 9 * 10^10 terms (the audit's
// association contrasts did that per dimension); all at once is a few passes.
TEST(Contrast, AllGroupsAtOnceScalesToManyGroups) {
  constexpr std::size_t kGroups = 300'000;
  std::vector<GroupMoments> groups(kGroups);
  for (std::size_t g = 0; g < kGroups; ++g) groups[g] = {static_cast<double>(g % 7), 1.0, 4};
  const std::vector<ContrastResult> all = contrasts_vs_others(groups, 0.95);
  ASSERT_EQ(all.size(), kGroups);
  for (const std::size_t g : {std::size_t{0}, std::size_t{12345}, kGroups - 1}) {
    SCOPED_TRACE(g);
    const ContrastResult one = contrast_vs_others(groups, g, 0.95);
    expect_rel(all[g].estimate, one.estimate, 1e-12, "estimate");
    expect_rel(all[g].se, one.se, 1e-12, "se");
  }
}

TEST(Contrast, ConstantGroupsGiveUndefinedTestWithNote) {
  const std::vector<GroupMoments> groups{{1.0, 0.0, 5}, {2.0, 0.0, 5}, {3.0, 0.0, 4}};
  const ContrastResult r = contrast_vs_others(groups, 0, 0.95);
  EXPECT_DOUBLE_EQ(r.estimate, -1.5);
  EXPECT_TRUE(std::isnan(r.p_value));
  EXPECT_TRUE(std::isnan(r.t));
  EXPECT_FALSE(r.note.empty());
}

TEST(Contrast, BadInputIsAnError) {
  const std::vector<GroupMoments> one{{1.0, 1.0, 5}};
  EXPECT_THROW(contrast_vs_others(one, 0), InputError);
  const std::vector<GroupMoments> small{{1.0, 1.0, 5}, {2.0, kNaN, 1}};
  EXPECT_THROW(contrast_vs_others(small, 0), InputError);
  const std::vector<GroupMoments> ok{{1.0, 1.0, 5}, {2.0, 1.0, 5}};
  EXPECT_THROW(contrast_vs_others(ok, 0, 1.0), InputError);
  EXPECT_THROW(contrasts_vs_others(one), InputError);
  EXPECT_THROW(contrasts_vs_others(small), InputError);
  EXPECT_THROW(contrasts_vs_others(ok, 1.0), InputError);
}

}  // namespace in_contrast_test
}  // namespace
}  // namespace vlbias::stats
