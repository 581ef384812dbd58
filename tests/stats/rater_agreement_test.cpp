// Agreement of several raters (include/vlbias/stats/rater_agreement.h): Krippendorff's alpha
// against the hand-worked examples of Krippendorff (2011) and an independent coincidence-matrix
// implementation, Fleiss' kappa against statsmodels' formula, Cohen's kappa against sklearn,
// and every bootstrap interval draw for draw (tools/make_rater_agreement_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/rater_agreement.h"

namespace vlbias::stats {
namespace {
namespace in_rater_agreement_test {

using json = nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("stats/rater_agreement.json");
}

BootstrapRequest fixture_bootstrap() {
  const json& b = fixture()["bootstrap"];
  return {b["resamples"].get<std::size_t>(), b["level"].get<double>(),
          b["seed"].get<std::uint64_t>()};
}

void expect_value(double got, const json& want, double tolerance, const std::string& what) {
  if (want.is_null()) {
    EXPECT_TRUE(std::isnan(got)) << what << ": " << got;
  } else {
    EXPECT_NEAR(got, want.get<double>(), tolerance) << what;
  }
}

void expect_ci(const Interval& ci, const json& want, const std::string& what) {
  expect_value(ci.lower, want["ci"][0], 1e-12, what + " lower");
  expect_value(ci.upper, want["ci"][1], 1e-12, what + " upper");
  EXPECT_EQ(ci.undefined, want["undefined"].get<std::size_t>()) << what;
}

void expect_coefficient(const AgreementCoefficient& got, const json& want,
                        const std::string& what) {
  expect_value(got.estimate, want["estimate"], 1e-12, what);
  if (!want["estimate"].is_null()) {
    expect_value(got.observed_disagreement, want["observed"], 1e-9, what + " D_o");
    expect_value(got.expected_disagreement, want["expected"], 1e-9, what + " D_e");
  }
  EXPECT_EQ(got.units, want["units"].get<std::size_t>()) << what;
  if (want.contains("bootstrap")) expect_ci(got.ci, want["bootstrap"], what + " bootstrap");
}

// Every coefficient of `got` against the reference `want`, at the options' scale and weights.
void expect_agreement(const RaterAgreement& got, const RatingData& data, const json& want,
                      const RaterAgreementOptions& o) {
  EXPECT_EQ(got.units, want["units"].get<std::size_t>());
  EXPECT_EQ(got.ratings, want["ratings"].get<std::size_t>());
  EXPECT_EQ(got.units_single_rating, want["single"].get<std::size_t>());
  expect_coefficient(got.alpha, want["alpha"][rating_scale_name(o.scale)], "alpha");
  EXPECT_EQ(got.alpha.ratings,
            want["alpha"][rating_scale_name(o.scale)]["ratings"].get<std::size_t>());
  expect_coefficient(got.fleiss, want["fleiss"], "fleiss");
  ASSERT_EQ(got.cohen.size(), want["cohen"].size());
  for (const json& w : want["cohen"]) {
    const std::string a = w["raters"][0], b = w["raters"][1];
    SCOPED_TRACE(a + " x " + b);
    const PairKappa* found = nullptr;
    for (const PairKappa& p : got.cohen) {
      const std::string& x = data.raters[p.rater_a];
      const std::string& y = data.raters[p.rater_b];
      if ((x == a && y == b) || (x == b && y == a)) found = &p;
    }
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->kappa.units, w["units"].get<std::size_t>());
    expect_value(found->kappa.estimate, w[kappa_weights_name(o.weights)], 1e-12, "kappa");
    expect_ci(found->kappa.ci, w["bootstrap"], "kappa bootstrap");
  }
}

TEST(KrippendorffAlpha, ReproducesKrippendorffsHandWorkedExampleWithMissingValues) {
  // Krippendorff (2011), 4 observers x 12 units, unit 12 rated once: nominal .743,
  // ordinal .815, interval .849.
  const json& k = fixture()["krippendorff_2011"];
  const Table table = parse_csv(k["csv"].get<std::string>(), "k2011.csv");
  const RatingData data = ratings_from_wide_table(table, {"unit"}, {"A", "B", "C", "D"}, true);
  for (RatingScale scale : {RatingScale::Nominal, RatingScale::Ordinal, RatingScale::Interval}) {
    const std::string name = rating_scale_name(scale);
    SCOPED_TRACE(name);
    const AgreementCoefficient a = krippendorff_alpha(data, scale, {});
    EXPECT_NEAR(a.estimate, k["reference"][name].get<double>(), 1e-14);
    EXPECT_EQ(std::round(a.estimate * 1000) / 1000, k["published"][name].get<double>());
    EXPECT_EQ(a.units, 11u);  // the unit with one rating is not pairable
    EXPECT_EQ(a.ratings, 40u);
    EXPECT_EQ(a.ci.note, "no bootstrap requested");
  }
}

TEST(KrippendorffAlpha, ReproducesKrippendorffsBinaryExample) {
  const json& k = fixture()["krippendorff_2011"]["binary"];
  const Table table = parse_csv(k["csv"].get<std::string>(), "binary.csv");
  const RatingData data = ratings_from_wide_table(table, {}, {"A", "B"}, false);
  const AgreementCoefficient a = krippendorff_alpha(data, RatingScale::Nominal, {});
  EXPECT_NEAR(a.estimate, k["reference"].get<double>(), 1e-14);
  EXPECT_EQ(std::round(a.estimate * 1000) / 1000, k["published"].get<double>());
}

TEST(RaterAgreement, LongLikertRatingsMatchTheReferencesWithBootstrapIntervals) {
  const json& f = fixture()["likert"];
  const Table table = parse_csv(f["long_csv"].get<std::string>(), "long.csv");
  const RatingData data = ratings_from_long_table(table, {"item_id"}, "annotator", "score", true);
  EXPECT_EQ(data.missing, 1u);  // the row without a score
  EXPECT_EQ(data.raters.size(), 4u);
  EXPECT_EQ(json(data.categories), f["categories"]);
  RaterAgreementOptions o;
  o.scale = RatingScale::Ordinal;
  o.weights = KappaWeights::Quadratic;
  o.bootstrap = fixture_bootstrap();
  const RaterAgreement r = rater_agreement(data, o);
  expect_agreement(r, data, f["long"], o);
  // The other scales and weights without intervals.
  for (RatingScale scale : {RatingScale::Nominal, RatingScale::Interval}) {
    expect_coefficient(krippendorff_alpha(data, scale, {}),
                       f["long"]["alpha"][rating_scale_name(scale)], rating_scale_name(scale));
  }
  for (KappaWeights w : {KappaWeights::None, KappaWeights::Linear}) {
    for (const PairKappa& p : r.cohen) {
      const AgreementCoefficient k = cohen_kappa_pair(data, p.rater_a, p.rater_b, w, {});
      const AgreementCoefficient swapped = cohen_kappa_pair(data, p.rater_b, p.rater_a, w, {});
      for (const json& want : f["long"]["cohen"]) {
        if (want["raters"][0] == data.raters[p.rater_a] &&
            want["raters"][1] == data.raters[p.rater_b]) {
          expect_value(k.estimate, want[kappa_weights_name(w)], 1e-12, kappa_weights_name(w));
        }
      }
      EXPECT_NEAR(k.estimate, swapped.estimate, 1e-14);
    }
  }
}

TEST(RaterAgreement, WideLikertRatingsMatchTheReferences) {
  const json& f = fixture()["likert"];
  const Table table = parse_csv(f["wide_csv"].get<std::string>(), "wide.csv");
  const RatingData data =
      ratings_from_wide_table(table, {"item_id"}, {"r1", "r2", "r3", "r4"}, true);
  RaterAgreementOptions o;
  o.scale = RatingScale::Interval;
  o.weights = KappaWeights::Linear;
  o.bootstrap = fixture_bootstrap();
  expect_agreement(rater_agreement(data, o), data, f["wide"], o);
}

TEST(RaterAgreement, TextLabelsFromOverlappingAnnotatorsMatchTheReferences) {
  const json& f = fixture()["labels"];
  const Table table = parse_csv(f["csv"].get<std::string>(), "labels.csv");
  const RatingData data =
      ratings_from_long_table(table, {"word", "language"}, "annotator", "label", false);
  EXPECT_EQ(json(data.raters), f["raters"]);
  EXPECT_EQ(json(data.categories), f["categories"]);
  EXPECT_FALSE(data.numeric());
  RaterAgreementOptions o;
  o.bootstrap = fixture_bootstrap();
  expect_agreement(rater_agreement(data, o), data, f["reference"], o);
  EXPECT_THROW(krippendorff_alpha(data, RatingScale::Ordinal, {}), InputError);
  EXPECT_THROW(cohen_kappa_pair(data, 0, 1, KappaWeights::Linear, {}), InputError);
}

TEST(RaterAgreement, BootstrapIntervalsDoNotDependOnTheThreadCount) {
  const Table table = parse_csv(fixture()["likert"]["long_csv"].get<std::string>(), "long.csv");
  const RatingData data = ratings_from_long_table(table, {"item_id"}, "annotator", "score", true);
  RaterAgreementOptions o;
  o.scale = RatingScale::Ordinal;
  o.bootstrap = {300, 0.9, 99};
  const unsigned before = thread_count();
  set_thread_count(1);
  const RaterAgreement one = rater_agreement(data, o);
  set_thread_count(3);
  const RaterAgreement three = rater_agreement(data, o);
  set_thread_count(before);
  EXPECT_EQ(one.alpha.ci.lower, three.alpha.ci.lower);
  EXPECT_EQ(one.alpha.ci.upper, three.alpha.ci.upper);
  EXPECT_EQ(one.fleiss.ci.lower, three.fleiss.ci.lower);
  EXPECT_EQ(one.cohen[2].kappa.ci.upper, three.cohen[2].kappa.ci.upper);
}

TEST(RaterAgreement, OneCategoryLeavesEveryCoefficientUndefinedWithAReason) {
  const Table table = parse_csv("u,a,b\n1,yes,yes\n2,yes,yes\n3,yes,\n", "same.csv");
  const RatingData data = ratings_from_wide_table(table, {"u"}, {"a", "b"}, false);
  RaterAgreementOptions o;
  o.bootstrap = {100, 0.95, 1};
  const RaterAgreement r = rater_agreement(data, o);
  for (const AgreementCoefficient* c : {&r.alpha, &r.fleiss, &r.cohen.at(0).kappa}) {
    EXPECT_TRUE(std::isnan(c->estimate));
    EXPECT_NE(c->note.find("every rating"), std::string::npos) << c->note;
    EXPECT_EQ(c->ci.note, "the estimate is undefined");
    EXPECT_EQ(c->ci.resamples, 0u);
  }
  EXPECT_EQ(r.units_single_rating, 1u);
  EXPECT_EQ(r.cohen_note, "no pair of raters has a defined kappa");
}

TEST(RaterAgreement, CompleteAgreementOnSeveralCategoriesIsOne) {
  const Table table = parse_csv("u,a,b,c\n1,1,1,1\n2,3,3,3\n3,2,2,\n", "agree.csv");
  const RatingData data = ratings_from_wide_table(table, {"u"}, {"a", "b", "c"}, true);
  RaterAgreementOptions o;
  o.scale = RatingScale::Interval;
  o.weights = KappaWeights::Quadratic;
  const RaterAgreement r = rater_agreement(data, o);
  EXPECT_EQ(r.alpha.estimate, 1.0);
  EXPECT_EQ(r.fleiss.estimate, 1.0);
  EXPECT_EQ(r.fleiss.units, 2u);  // the unit with 2 of 3 ratings is left out, and said so
  EXPECT_NE(r.fleiss.note.find("1 of 3 rated units"), std::string::npos) << r.fleiss.note;
  EXPECT_EQ(r.cohen_mean, 1.0);
}

TEST(RaterAgreement, OneRaterIsStatedNotComputed) {
  const Table table = parse_csv("u,r,x\n1,ann,1\n2,ann,2\n", "one.csv");
  const RatingData data = ratings_from_long_table(table, {"u"}, "r", "x", false);
  const RaterAgreement r = rater_agreement(data, {});
  EXPECT_TRUE(std::isnan(r.alpha.estimate));
  EXPECT_TRUE(std::isnan(r.fleiss.estimate));
  EXPECT_TRUE(r.cohen.empty());
  EXPECT_EQ(r.alpha.note,
            "1 rater(s): agreement needs at least 2 raters, so every coefficient is undefined");
}

TEST(RaterAgreement, NoPairableUnitIsStated) {
  const Table table = parse_csv("u,r,x\n1,a,1\n2,b,2\n", "apart.csv");
  const RatingData data = ratings_from_long_table(table, {"u"}, "r", "x", false);
  const RaterAgreement r = rater_agreement(data, {});
  EXPECT_EQ(r.alpha.note, "no unit has 2 or more ratings: alpha needs pairable values");
  EXPECT_TRUE(std::isnan(r.fleiss.estimate));
  EXPECT_EQ(r.cohen.at(0).kappa.note, "no unit was rated by both 'a' and 'b'");
}

TEST(RaterTables, BadInputIsAnInputErrorNamingTheProblem) {
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  const Table twice = parse_csv("u,r,x\n1,a,1\n1,b,2\n1,a,3\n", "twice.csv");
  EXPECT_EQ(message([&] { ratings_from_long_table(twice, {"u"}, "r", "x", false); }),
            "twice.csv: rater 'a' rates unit '1' twice, differently (rows 2 and 4); expected one "
            "rating per rater and unit (--conflicting drop leaves such ratings out)");
  const Table text = parse_csv("u,r,x\n1,a,1\n1,b,high\n", "text.csv");
  EXPECT_NE(message([&] { ratings_from_long_table(text, {"u"}, "r", "x", true); }).find("line 3"),
            std::string::npos);
  EXPECT_NE(message([&] { ratings_from_long_table(text, {"u"}, "who", "x", false); }).find("who"),
            std::string::npos);
  const Table empty = parse_csv("u,r,x\n", "empty.csv");
  EXPECT_EQ(message([&] { ratings_from_long_table(empty, {"u"}, "r", "x", false); }),
            "empty.csv has no ratings (0 rows: 0 without a rating, 0 without a unit or rater): "
            "nothing to agree on");
  const Table nobody = parse_csv("u,r,x\n1,,1\n", "nobody.csv");
  EXPECT_EQ(message([&] { ratings_from_long_table(nobody, {"u"}, "r", "x", false); }),
            "nobody.csv has no ratings (1 rows: 0 without a rating, 1 without a unit or rater): "
            "nothing to agree on");
  EXPECT_THROW(parse_rating_scale("ratio", "--scale"), UsageError);
  EXPECT_THROW(parse_kappa_weights("square", "--weights"), UsageError);
}

TEST(RaterTables, RepeatsCountOnceConflictsCanBeDroppedAndUnattributedRatingsAreCounted) {
  // Released exports repeat rows (ViSAGe's annotation files): a rater's identical repeats are
  // one rating; differing ones are an error unless dropped.
  const Table table =
      parse_csv("u,r,x\n1,a,1\n1,b,1\n1,a,1\n2,a,1\n2,b,2\n2,b,1\n3,a,2\n3,b,2\n", "repeats.csv");
  const RatingData data = ratings_from_long_table(table, {"u"}, "r", "x", false, true);
  EXPECT_EQ(data.repeated, 1u);
  EXPECT_EQ(data.conflicting, 1u);
  EXPECT_EQ(data.offsets, (std::vector<std::size_t>{0, 2, 3, 5}));  // unit 2 keeps a only
  const Table unattributed = parse_csv("u,r,x\n1,a,1\n,a,2\n1,,1\n1,b,1\n", "some.csv");
  const RatingData some = ratings_from_long_table(unattributed, {"u"}, "r", "x", false);
  EXPECT_EQ(some.unattributed, 2u);
  EXPECT_EQ(some.size(), 2u);
  EXPECT_THROW(ratings_from_long_table(table, {"u"}, "r", "x", false), InputError);
}

}  // namespace in_rater_agreement_test
}  // namespace
}  // namespace vlbias::stats
