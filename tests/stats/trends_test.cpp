// Polynomial trend fits and covariance ellipses (paper 001, Hausladen et al. Fig. 3,
// 4, S.2, S.3) against tools/make_trend_fixtures.py: exact rational least squares
// (cross-checked there with numpy.polyfit and statsmodels OLS), numpy.cov +
// numpy.linalg.eigh ellipses, and pandas groupby for the grouped table.
#include "vlbias/stats/trends.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_trends_test {

using nlohmann::json;
using namespace vlbias;

const json& fixture() {
  return testing_util::fixture_json("stats/trends.json");
}

// rel 1e-10 or abs 1e-12; null in the fixture means NaN.
void expect_value(double actual, const json& want, const std::string& what) {
  if (want.is_null()) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": expected NaN, got " << actual;
    return;
  }
  const double w = want.get<double>();
  EXPECT_NEAR(actual, w, std::max(1e-12, 1e-10 * std::fabs(w))) << what;
}

void expect_values(const std::vector<double>& actual, const json& want, const std::string& what) {
  ASSERT_EQ(actual.size(), want.size()) << what;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    expect_value(actual[i], want[i], what + "[" + std::to_string(i) + "]");
  }
}

void expect_fit(const PolynomialFit& fit, const json& want, const std::string& what) {
  expect_values(fit.coefficients, want["coefficients"], what + " coefficients");
  expect_values(fit.standard_errors, want["standard_errors"], what + " standard_errors");
  expect_value(fit.r_squared, want["r_squared"], what + " r_squared");
  expect_value(fit.residual_sd, want["residual_sd"], what + " residual_sd");
  EXPECT_EQ(fit.n, want["n"].get<std::size_t>()) << what;
}

void expect_ellipse(const CovarianceEllipse& e, const json& want, const std::string& what) {
  EXPECT_EQ(e.n, want["n"].get<std::size_t>()) << what;
  expect_value(e.k_sigma, want["k_sigma"], what + " k_sigma");
  expect_value(e.center_x, want["center"][0], what + " center_x");
  expect_value(e.center_y, want["center"][1], what + " center_y");
  ASSERT_FALSE(want["covariance"].is_null()) << what;
  expect_value(e.cov_xx, want["covariance"][0][0], what + " cov_xx");
  expect_value(e.cov_xy, want["covariance"][0][1], what + " cov_xy");
  expect_value(e.cov_yy, want["covariance"][1][1], what + " cov_yy");
  expect_value(e.semi_major, want["semi_major"], what + " semi_major");
  if (e.n == 2) {
    // Two points are collinear: the minor variance is 0 up to rounding of order
    // eps * major variance in both implementations, which sqrt magnifies to ~1e-8.
    EXPECT_NEAR(e.semi_minor, 0.0, 1e-7 * e.semi_major) << what << " semi_minor";
  } else {
    expect_value(e.semi_minor, want["semi_minor"], what + " semi_minor");
  }
  expect_value(e.angle, want["angle"], what + " angle");
  EXPECT_GT(e.angle, -std::numbers::pi / 2) << what;
  EXPECT_LE(e.angle, std::numbers::pi / 2) << what;
}

TEST(Trends, PolynomialFitMatchesReference) {
  const json& cases = fixture()["polynomial"];
  ASSERT_EQ(cases.size(), 8u);
  for (const json& c : cases) {
    const auto x = c["x"].get<std::vector<double>>();
    const auto y = c["y"].get<std::vector<double>>();
    const PolynomialFit fit = polynomial_fit(x, y, c["degree"].get<int>());
    const std::string name = c["name"].get<std::string>();
    expect_fit(fit, c, name);
    // A note exactly when something is undefined (n = degree + 1 here).
    EXPECT_EQ(fit.note.empty(), !c["standard_errors"][0].is_null()) << name << ": " << fit.note;
  }
}

TEST(Trends, ExactQuadraticHasZeroResidual) {
  std::vector<double> x, y;
  for (double a = 20; a <= 80; a += 10) {
    x.push_back(a);
    y.push_back(0.5 - 0.25 * a + 0.0625 * a * a);
  }
  const PolynomialFit fit = polynomial_fit(x, y, 2);
  EXPECT_TRUE(fit.note.empty()) << fit.note;
  EXPECT_NEAR(fit.residual_sd, 0.0, 1e-10);
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-14);
  ASSERT_EQ(fit.coefficients.size(), 3u);
  EXPECT_NEAR(fit.coefficients[0], 0.5, 1e-9);
  EXPECT_NEAR(fit.coefficients[1], -0.25, 1e-11);
  EXPECT_NEAR(fit.coefficients[2], 0.0625, 1e-13);
  for (const double se : fit.standard_errors) {
    EXPECT_FALSE(std::isnan(se));
    EXPECT_NEAR(se, 0.0, 1e-9);
  }
}

TEST(Trends, UnderdeterminedFitIsNaNWithNote) {
  const std::vector<double> x = {1, 1, 2, 2, 2};
  const std::vector<double> y = {0.1, 0.2, 0.3, 0.4, 0.5};
  const PolynomialFit fit = polynomial_fit(x, y, 2);
  EXPECT_EQ(fit.n, 5u);
  ASSERT_EQ(fit.coefficients.size(), 3u);
  for (const double b : fit.coefficients) EXPECT_TRUE(std::isnan(b));
  for (const double se : fit.standard_errors) EXPECT_TRUE(std::isnan(se));
  EXPECT_TRUE(std::isnan(fit.r_squared));
  EXPECT_TRUE(std::isnan(fit.residual_sd));
  EXPECT_NE(fit.note.find("2 distinct x"), std::string::npos) << fit.note;
  const PolynomialFit empty = polynomial_fit({}, {}, 2);
  EXPECT_EQ(empty.n, 0u);
  EXPECT_FALSE(empty.note.empty());
  // Constant y: coefficients defined, R^2 NaN with a note.
  const std::vector<double> xc = {1, 2, 3, 4};
  const std::vector<double> yc = {2, 2, 2, 2};
  const PolynomialFit flat = polynomial_fit(xc, yc, 2);
  EXPECT_NEAR(flat.coefficients[0], 2.0, 1e-12);
  EXPECT_TRUE(std::isnan(flat.r_squared));
  EXPECT_NE(flat.note.find("R^2"), std::string::npos) << flat.note;
}

TEST(Trends, PolynomialFitRefusesBadInput) {
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> short_y = {1, 2, 3};
  EXPECT_THROW(polynomial_fit(x, short_y, 2), InputError);
  const std::vector<double> nan_y = {1, 2, std::numeric_limits<double>::quiet_NaN(), 4};
  EXPECT_THROW(polynomial_fit(x, nan_y, 2), InputError);
  const std::vector<double> inf_x = {1, std::numeric_limits<double>::infinity(), 3, 4};
  EXPECT_THROW(polynomial_fit(inf_x, x, 2), InputError);
  EXPECT_THROW(polynomial_fit(x, x, -1), InputError);
}

TEST(Trends, EllipseMatchesNumpy) {
  const json& cases = fixture()["ellipse"];
  ASSERT_EQ(cases.size(), 5u);
  for (const json& c : cases) {
    const auto x = c["x"].get<std::vector<double>>();
    const auto y = c["y"].get<std::vector<double>>();
    const CovarianceEllipse e = covariance_ellipse(x, y, c["k_sigma"].get<double>());
    expect_ellipse(e, c, c["name"].get<std::string>());
    EXPECT_TRUE(e.note.empty()) << e.note;
  }
}

TEST(Trends, EllipseEdgeCases) {
  const std::vector<double> one = {1.5};
  const CovarianceEllipse single = covariance_ellipse(one, one);
  EXPECT_EQ(single.n, 1u);
  EXPECT_DOUBLE_EQ(single.center_x, 1.5);
  EXPECT_TRUE(std::isnan(single.cov_xx));
  EXPECT_TRUE(std::isnan(single.semi_major));
  EXPECT_FALSE(single.note.empty());
  const std::vector<double> x = {1, 2};
  const std::vector<double> y = {1};
  EXPECT_THROW(covariance_ellipse(x, y), InputError);
  const std::vector<double> nan = {1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(covariance_ellipse(x, nan), InputError);
  EXPECT_THROW(covariance_ellipse(x, x, 0.0), InputError);
  // Collinear points with negative slope: angle of -pi/4, minor axis 0.
  const std::vector<double> neg = {2, 1};
  const CovarianceEllipse line = covariance_ellipse(x, neg, 2.0);
  EXPECT_NEAR(line.angle, -std::numbers::pi / 4, 1e-15);
  EXPECT_NEAR(line.semi_minor, 0.0, 1e-15);
}

// The grouped table of the fixture, with values rows x {agency+, agency-}.
struct Grouped {
  Table table;
  std::vector<double> values;
  std::vector<std::string> dimensions;
};

Grouped grouped() {
  const json& g = fixture()["grouped"];
  Grouped out;
  out.table = parse_csv(g["csv"].get<std::string>(), "<trends>");
  out.dimensions = g["dimensions"].get<std::vector<std::string>>();
  const auto& plus = out.table.numeric("agency+");
  const auto& minus = out.table.numeric("agency-");
  for (std::size_t r = 0; r < out.table.rows; ++r) {
    out.values.push_back(plus[r]);
    out.values.push_back(minus[r]);
  }
  return out;
}

TEST(Trends, GroupedFitsMatchPandas) {
  const Grouped g = grouped();
  for (const bool to_means : {true, false}) {
    TrendOptions o;
    o.x = "age";
    o.by = {"race", "gender"};
    o.fit_to_means = to_means;
    const std::vector<TrendFit> fits = trend_fits(g.table, g.values, g.dimensions, o);
    const json& want = fixture()["grouped"]["fits"][to_means ? "means" : "images"];
    ASSERT_EQ(fits.size(), want.size());
    std::size_t undetermined = 0;
    for (std::size_t i = 0; i < fits.size(); ++i) {
      const std::string what = std::string(to_means ? "means " : "images ") + std::to_string(i);
      EXPECT_EQ(json(fits[i].key), want[i]["key"]) << what;
      EXPECT_EQ(fits[i].dimension, want[i]["dimension"]) << what;
      expect_values(fits[i].levels, want[i]["levels"], what + " levels");
      expect_values(fits[i].level_means, want[i]["level_means"], what + " level_means");
      EXPECT_EQ(json(fits[i].level_n), want[i]["level_n"]) << what;
      expect_fit(fits[i].fit, want[i], what);
      if (want[i]["underdetermined"].get<bool>()) {
        ++undetermined;
        EXPECT_NE(fits[i].fit.note.find("race=White, gender=Male"), std::string::npos)
            << fits[i].fit.note;
      }
    }
    EXPECT_EQ(undetermined, 2u);
  }
}

TEST(Trends, GroupedEllipsesMatchNumpy) {
  const Grouped g = grouped();
  for (const std::string points_by : {"age", ""}) {
    EllipseOptions o;
    o.by = {"race", "gender"};
    o.points_by = points_by;
    const std::vector<GroupEllipse> got = group_ellipses(g.table, g.values, g.dimensions, o);
    const json& want = fixture()["grouped"]["ellipses"][points_by.empty() ? "images" : "age"];
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::string what = "points_by '" + points_by + "' " + std::to_string(i);
      EXPECT_EQ(json(got[i].key), want[i]["key"]) << what;
      EXPECT_EQ(got[i].x_dimension, "agency+");
      EXPECT_EQ(got[i].y_dimension, "agency-");
      expect_ellipse(got[i].ellipse, want[i], what);
    }
  }
  // Explicit plane, swapped axes: same covariance transposed.
  EllipseOptions swapped;
  swapped.by = {"race", "gender"};
  swapped.planes = {{"agency-", "agency+"}};
  const auto s = group_ellipses(g.table, g.values, g.dimensions, swapped);
  const json& want = fixture()["grouped"]["ellipses"]["images"];
  ASSERT_EQ(s.size(), want.size());
  expect_value(s[0].ellipse.cov_xx, want[0]["covariance"][1][1], "swapped cov_xx");
  expect_value(s[0].ellipse.center_x, want[0]["center"][1], "swapped center_x");
}

TEST(Trends, GroupedErrors) {
  Grouped g = grouped();
  TrendOptions o;
  o.x = "age";
  o.by = {"race", "gender"};
  // Values of the wrong length.
  std::vector<double> short_values(g.values.begin(), g.values.end() - 1);
  EXPECT_THROW(trend_fits(g.table, short_values, g.dimensions, o), InputError);
  // NaN value in a used row.
  std::vector<double> nan_values = g.values;
  nan_values[3] = std::numeric_limits<double>::quiet_NaN();
  try {
    trend_fits(g.table, nan_values, g.dimensions, o);
    ADD_FAILURE() << "NaN value accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("agency-"), std::string::npos) << e.what();
  }
  // Non-numeric and unknown x.
  o.x = "race";
  EXPECT_THROW(trend_fits(g.table, g.values, g.dimensions, o), InputError);
  o.x = "smiling";
  EXPECT_THROW(trend_fits(g.table, g.values, g.dimensions, o), InputError);
  // Unknown plane dimension: the message lists the dimensions.
  EllipseOptions e;
  e.by = {"race"};
  e.planes = {{"agency+", "communion-"}};
  try {
    group_ellipses(g.table, g.values, g.dimensions, e);
    ADD_FAILURE() << "unknown plane dimension accepted";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("communion-"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("agency+, agency-"), std::string::npos) << err.what();
  }
}

}  // namespace in_trends_test
}  // namespace
