// AbsDiff pair sampling and analysis (paper 001, docs/methods.md#absdiff; Hausladen et al.
// section 2.3): pair counts and enumerated sets against a brute force over all
// row pairs, uniformity of the draws, and the full report against the
// itertools/numpy/scipy/statsmodels reference of tools/make_absdiff_fixtures.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/absdiff.h"

namespace {
namespace in_absdiff_test {

using nlohmann::json;
using namespace vlbias;
using PairSet = std::set<std::pair<std::uint32_t, std::uint32_t>>;

const json& fixture() {
  return testing_util::fixture_json("metrics/absdiff.json");
}

// Brute force: every unordered pair of rows, checked against the definition
// (equal on every other factor, different / more than threshold apart on X).
PairSet brute_force_pairs(const Table& t, const std::vector<AbsDiffFactor>& factors,
                          std::size_t fx) {
  PairSet out;
  const auto complete = [&](std::size_t r) {
    for (const auto& f : factors) {
      if (t.column(f.column).missing(r)) return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < t.rows; ++i) {
    for (std::size_t j = i + 1; j < t.rows; ++j) {
      if (!complete(i) || !complete(j)) continue;
      bool ok = true;
      for (std::size_t k = 0; k < factors.size() && ok; ++k) {
        const Column& c = t.column(factors[k].column);
        if (k != fx) {
          ok = c.text(i) == c.text(j);
        } else if (factors[k].ordinal) {
          ok = std::fabs(c.numbers[i] - c.numbers[j]) > factors[k].threshold;
        } else {
          ok = c.text(i) != c.text(j);
        }
      }
      if (ok) out.insert({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)});
    }
  }
  return out;
}

PairSet as_unordered_set(const FactorPairs& fp) {
  PairSet out;
  for (std::size_t k = 0; k < fp.first.size(); ++k) {
    out.insert(std::minmax(fp.first[k], fp.second[k]));
  }
  return out;
}

// 12 images; age ordinal (1.0 apart steps, threshold 1.0: a difference of exactly
// 1 is not valid), lighting text, seed numeric categorical, one missing cell.
const char* kSmall =
    "age,lighting,seed,v\n"
    "1,dark,1,0.1\n"
    "2,dark,1,0.2\n"
    "3,dark,1,0.3\n"
    "1,bright,1,0.4\n"
    "3,bright,1,0.5\n"
    "1,dark,2,0.6\n"
    "2.5,dark,2,0.7\n"
    "4,dark,2,0.8\n"
    "1,bright,2,0.9\n"
    ",bright,2,1.0\n"
    "4,bright,2,1.1\n"
    "1,dark,1,1.2\n";

std::vector<AbsDiffFactor> small_factors(double threshold = 1.0) {
  return {{"age", true, threshold}, {"lighting", false, 0.0}, {"seed", false, 0.0}};
}

TEST(AbsDiff, ValidPairsMatchBruteForceAndEnumerate) {
  const Table t = parse_csv(kSmall, "<small>");
  for (double threshold : {0.0, 0.5, 1.0, 1.5, 2.5}) {
    const auto factors = small_factors(threshold);
    for (std::size_t f = 0; f < factors.size(); ++f) {
      const PairSet want = brute_force_pairs(t, factors, f);
      const FactorPairs fp = sample_factor_pairs(t, factors, f, 1000, 1);
      EXPECT_EQ(fp.valid_pairs, want.size()) << "factor " << f << " threshold " << threshold;
      if (want.empty()) {
        EXPECT_TRUE(fp.first.empty());
        continue;
      }
      EXPECT_TRUE(fp.enumerated);
      ASSERT_EQ(fp.first.size(), want.size());
      EXPECT_EQ(as_unordered_set(fp), want);  // each once: sizes equal and sets equal
    }
  }
}

TEST(AbsDiff, OrdinalThresholdIsStrict) {
  const Table t = parse_csv(kSmall, "<small>");
  // Stratum (dark, 1): ages 1, 2, 3, 1 -> differences > 1: (1,3) twice = 2 pairs.
  // Stratum (dark, 2): 1, 2.5, 4 -> (1,2.5), (1,4), (2.5,4) = 3. (bright, 1): 1, 3 = 1.
  // (bright, 2): 1, 4 (the missing age is left out) = 1.
  EXPECT_EQ(sample_factor_pairs(t, small_factors(1.0), 0, 100, 0).valid_pairs, 7u);
  // Threshold 1.5: the 1.5 differences (1, 2.5) and (2.5, 4) are no longer valid.
  EXPECT_EQ(sample_factor_pairs(t, small_factors(1.5), 0, 100, 0).valid_pairs, 5u);
  // Threshold 0: any different age.
  EXPECT_EQ(sample_factor_pairs(t, small_factors(0.0), 0, 100, 0).valid_pairs, 5u + 3u + 1u + 1u);
}

TEST(AbsDiff, MissingCellsAreLeftOut) {
  const Table t = parse_csv(kSmall, "<small>");
  for (std::size_t f = 0; f < 3; ++f) {
    const FactorPairs fp = sample_factor_pairs(t, small_factors(), f, 1000, 0);
    for (std::size_t k = 0; k < fp.first.size(); ++k) {
      EXPECT_NE(fp.first[k], 9u);
      EXPECT_NE(fp.second[k], 9u);
    }
  }
  const std::vector<double> v = t.numeric("v");
  const AbsDiffReport r = absdiff_analysis(t, v, {"v"}, {small_factors(), 1000, 0});
  EXPECT_EQ(r.rows_missing, 1u);
}

TEST(AbsDiff, SingleFactorIsOneStratum) {
  const Table t = parse_csv(kSmall, "<small>");
  const std::vector<AbsDiffFactor> factors = {{"lighting", false, 0.0}};
  // 7 dark x 5 bright (row 9 lacks only age, which is not listed here).
  const FactorPairs fp = sample_factor_pairs(t, factors, 0, 1000, 0);
  EXPECT_EQ(fp.valid_pairs, 7u * 5u);
  EXPECT_EQ(as_unordered_set(fp), brute_force_pairs(t, factors, 0));
}

TEST(AbsDiff, SameSeedSamePairsDifferentSeedDifferent) {
  const Table t = parse_csv(kSmall, "<small>");
  const auto factors = std::vector<AbsDiffFactor>{{"lighting", false, 0.0}};
  const FactorPairs a = sample_factor_pairs(t, factors, 0, 20, 42);
  const FactorPairs b = sample_factor_pairs(t, factors, 0, 20, 42);
  const FactorPairs c = sample_factor_pairs(t, factors, 0, 20, 43);
  EXPECT_FALSE(a.enumerated);
  ASSERT_EQ(a.first.size(), 20u);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_TRUE(a.first != c.first || a.second != c.second);
  // Every draw is a valid pair, first = the lower sorted position (dark before bright
  // in code order: dark is level 0).
  const PairSet valid = brute_force_pairs(t, factors, 0);
  for (std::size_t k = 0; k < a.first.size(); ++k) {
    EXPECT_TRUE(valid.count(std::minmax(a.first[k], a.second[k]))) << k;
  }
}

TEST(AbsDiff, DrawsAreUniformOverValidPairs) {
  // 30 valid pairs in three strata of g: 3 a x 4 b = 12; 2 a, 2 b, 2 c = 12;
  // a, b, c, d = 6. Rows interleaved so strata and runs are not contiguous.
  const std::string csv =
      "x,g\nb,1\na,2\nd,3\na,1\nc,2\nb,1\na,3\nb,2\na,1\nc,3\nb,1\nc,2\n"
      "a,2\nb,3\nb,1\na,1\nb,2\n";
  const Table t = parse_csv(csv, "<uniform>");
  const std::vector<AbsDiffFactor> factors = {{"x", false, 0.0}, {"g", false, 0.0}};
  const PairSet valid = brute_force_pairs(t, factors, 0);
  ASSERT_EQ(valid.size(), 30u);
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> count;
  std::size_t draws = 0;
  // pairs = 29 < 30 so each call samples; 10345 calls give 300005 draws.
  for (std::uint64_t s = 0; draws < 300000; ++s) {
    const FactorPairs fp = sample_factor_pairs(t, factors, 0, 29, s);
    ASSERT_FALSE(fp.enumerated);
    for (std::size_t k = 0; k < fp.first.size(); ++k) {
      const auto key = std::make_pair(fp.first[k], fp.second[k]);
      ASSERT_TRUE(valid.count(std::minmax(key.first, key.second)));
      count[key] += 1;
    }
    draws += fp.first.size();
  }
  ASSERT_EQ(count.size(), 30u);
  const double expected = static_cast<double>(draws) / 30.0;
  double chi2 = 0.0;
  for (const auto& [key, n] : count) {
    chi2 += (n - expected) * (n - expected) / expected;
    EXPECT_LT(std::fabs(n - expected), 6.0 * std::sqrt(expected)) << key.first << "," << key.second;
  }
  // scipy.stats.chi2.ppf(1 - 1e-6, 29) = 80.44.
  EXPECT_LT(chi2, 80.44);
}

TEST(AbsDiff, AnalysisDrawsOneStreamPerFactorAndDimension) {
  const Table t = parse_csv(kSmall, "<small>");
  const auto factors = small_factors(0.0);
  const std::vector<double> v = t.numeric("v");
  std::vector<double> values;  // two dimensions: v and 2 v
  for (double x : v) {
    values.push_back(x);
    values.push_back(2.0 * x);
  }
  const AbsDiffOptions o{factors, 2, 99};
  const AbsDiffReport r = absdiff_analysis(t, values, {"d0", "d1"}, o);
  ASSERT_EQ(r.cells.size(), 9u);
  for (std::size_t f = 0; f < 3; ++f) {
    std::vector<double> pooled;
    for (std::size_t d = 0; d < 2; ++d) {
      const FactorPairs fp = sample_factor_pairs(t, factors, f, 2, derive_seed(99, f * 2 + d));
      std::vector<double> ad;
      for (std::size_t k = 0; k < fp.first.size(); ++k) {
        ad.push_back(std::fabs(values[fp.first[k] * 2 + d] - values[fp.second[k] * 2 + d]));
      }
      pooled.insert(pooled.end(), ad.begin(), ad.end());
      const AbsDiffCell& c = r.cells[f * 3 + d];
      EXPECT_EQ(c.factor, factors[f].column);
      EXPECT_EQ(c.dimension, d == 0 ? "d0" : "d1");
      EXPECT_EQ(c.n, 2u);
      EXPECT_FALSE(c.enumerated);
      EXPECT_DOUBLE_EQ(c.mean, (ad[0] + ad[1]) / 2.0);
    }
    const AbsDiffCell& p = r.cells[f * 3 + 2];
    EXPECT_EQ(p.dimension, "");
    EXPECT_EQ(p.n, 4u);
    double sum = 0.0;
    for (double x : pooled) sum += x;
    EXPECT_NEAR(p.mean, sum / 4.0, 1e-15);
  }
  // 3 comparisons per dimension and pooled.
  EXPECT_EQ(r.comparisons.size(), 9u);
}

TEST(AbsDiff, FactorWithoutPairsGivesNoteAndNaN) {
  const Table t = parse_csv("a,b,v\nx,1,0.1\nx,2,0.2\nx,1,0.3\n", "<nopairs>");
  const std::vector<AbsDiffFactor> factors = {{"a", false, 0.0}, {"b", false, 0.0}};
  const AbsDiffReport r = absdiff_analysis(t, t.numeric("v"), {"v"}, {factors, 10, 0});
  ASSERT_EQ(r.cells.size(), 4u);
  EXPECT_EQ(r.cells[0].n, 0u);
  EXPECT_TRUE(std::isnan(r.cells[0].mean));
  EXPECT_EQ(r.cells[2].n, 2u);  // b: (x,1)-(x,2) twice
  ASSERT_EQ(r.comparisons.size(), 2u);
  EXPECT_TRUE(std::isnan(r.comparisons[0].result.p_value));
  EXPECT_TRUE(std::isnan(r.comparisons[0].p_holm));
  EXPECT_FALSE(r.comparisons[0].result.note.empty());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("'a'"), std::string::npos);
}

TEST(AbsDiff, Errors) {
  const Table t = parse_csv(kSmall, "<small>");
  const std::vector<double> v = t.numeric("v");
  EXPECT_THROW(sample_factor_pairs(t, {{"lighting", true, 1.0}}, 0, 10, 0), InputError);
  EXPECT_THROW(sample_factor_pairs(t, {{"nope", false, 0.0}}, 0, 10, 0), InputError);
  EXPECT_THROW(sample_factor_pairs(t, {{"age", true, -0.5}}, 0, 10, 0), InputError);
  EXPECT_THROW(sample_factor_pairs(t, {{"age", true, std::nan("")}}, 0, 10, 0), InputError);
  EXPECT_THROW(sample_factor_pairs(t, {{"age", false, 0}, {"age", false, 0}}, 0, 10, 0),
               InputError);
  EXPECT_THROW(absdiff_analysis(t, std::vector<double>(v.begin(), v.end() - 1), {"v"},
                                {small_factors(), 10, 0}),
               InputError);
  std::vector<double> bad = v;
  bad[4] = std::numeric_limits<double>::quiet_NaN();
  try {
    absdiff_analysis(t, bad, {"v"}, {small_factors(), 10, 0});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("row 4"), std::string::npos) << m;
    EXPECT_NE(m.find("'v'"), std::string::npos) << m;
  }
  EXPECT_THROW(absdiff_analysis(t, v, {"v"}, {{}, 10, 0}), UsageError);
}

// ------------------------------------------------------------ reference fixture

void expect_close(double actual, const json& want, double rel, const std::string& what) {
  if (want.is_null()) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": got " << actual;
    return;
  }
  const double w = want.get<double>();
  EXPECT_NEAR(actual, w, std::max(1e-300, rel * std::fabs(w))) << what;
}

struct FixtureRun {
  Table table;
  std::vector<AbsDiffFactor> factors;
  std::vector<std::string> dims;
  std::vector<double> values;
};

FixtureRun fixture_run() {
  const json& fx = fixture();
  FixtureRun run{parse_csv(fx["csv"].get<std::string>(), "<absdiff fixture>"), {}, {}, {}};
  for (const json& f : fx["factors"]) {
    run.factors.push_back(
        {f["column"].get<std::string>(), f["ordinal"].get<bool>(), f["threshold"].get<double>()});
  }
  run.dims = fx["dimensions"].get<std::vector<std::string>>();
  run.values.assign(run.table.rows * run.dims.size(), 0.0);
  for (std::size_t d = 0; d < run.dims.size(); ++d) {
    const auto& col = run.table.numeric(run.dims[d]);
    for (std::size_t i = 0; i < run.table.rows; ++i) run.values[i * run.dims.size() + d] = col[i];
  }
  return run;
}

TEST(AbsDiffReference, ValidPairsMatchItertools) {
  const FixtureRun run = fixture_run();
  for (std::size_t f = 0; f < run.factors.size(); ++f) {
    const FactorPairs fp = sample_factor_pairs(run.table, run.factors, f, 1000000, 0);
    EXPECT_EQ(fp.valid_pairs, fixture()["valid_pairs"][run.factors[f].column].get<std::uint64_t>())
        << run.factors[f].column;
    EXPECT_EQ(as_unordered_set(fp), brute_force_pairs(run.table, run.factors, f));
  }
}

TEST(AbsDiffReference, ReportMatchesScipy) {
  const json& fx = fixture();
  const FixtureRun run = fixture_run();
  AbsDiffOptions o{run.factors, fx["pairs"].get<std::size_t>(), fx["seed"].get<std::uint64_t>()};
  const AbsDiffReport r = absdiff_analysis(run.table, run.values, run.dims, o);
  EXPECT_EQ(r.rows_missing, fx["rows_missing"].get<std::size_t>());
  ASSERT_EQ(r.cells.size(), fx["cells"].size());
  std::size_t enumerated = 0, empty = 0;
  for (std::size_t i = 0; i < r.cells.size(); ++i) {
    const AbsDiffCell& c = r.cells[i];
    const json& w = fx["cells"][i];
    const std::string what = c.factor + "/" + c.dimension;
    EXPECT_EQ(c.factor, w["factor"]) << i;
    EXPECT_EQ(c.dimension, w["dimension"]) << i;
    EXPECT_EQ(c.n, w["n"].get<std::size_t>()) << what;
    EXPECT_EQ(c.valid_pairs, w["valid_pairs"].get<std::uint64_t>()) << what;
    EXPECT_EQ(c.enumerated, w["enumerated"].get<bool>()) << what;
    enumerated += c.enumerated;
    empty += c.n == 0;
    expect_close(c.mean, w["mean"], 1e-12, what + " mean");
    expect_close(c.sd, w["sd"], 1e-12, what + " sd");
    expect_close(c.median, w["median"], 1e-12, what + " median");
    expect_close(c.q25, w["q25"], 1e-12, what + " q25");
    expect_close(c.q75, w["q75"], 1e-12, what + " q75");
    expect_close(c.whisker_low, w["whisker_low"], 1e-12, what + " whisker_low");
    expect_close(c.whisker_high, w["whisker_high"], 1e-12, what + " whisker_high");
  }
  EXPECT_GT(enumerated, 0u);
  EXPECT_GT(empty, 0u);
  ASSERT_EQ(r.comparisons.size(), fx["comparisons"].size());
  std::size_t defined = 0;
  for (std::size_t i = 0; i < r.comparisons.size(); ++i) {
    const AbsDiffComparison& c = r.comparisons[i];
    const json& w = fx["comparisons"][i];
    const std::string what = c.dimension + ":" + c.factor_a + "-" + c.factor_b;
    EXPECT_EQ(c.dimension, w["dimension"]) << i;
    EXPECT_EQ(c.factor_a, w["factor_a"]) << i;
    EXPECT_EQ(c.factor_b, w["factor_b"]) << i;
    defined += !w["p_value"].is_null();
    expect_close(c.result.statistic, w["statistic"], 1e-12, what + " U");
    expect_close(c.result.p_value, w["p_value"], 1e-10, what + " p");
    expect_close(c.p_holm, w["p_holm"], 1e-10, what + " holm");
    expect_close(c.p_bh, w["p_bh"], 1e-10, what + " bh");
  }
  EXPECT_GT(defined, 0u);
  EXPECT_LT(defined, r.comparisons.size());
}

}  // namespace in_absdiff_test
}  // namespace
