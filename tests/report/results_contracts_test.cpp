// The typed results contracts (include/vlbias/report/<kind>_results.h, pilot_sections.h): a section
// read back with from_json writes the same JSON text with to_json, and any well-formed JSON of
// another shape reads without throwing (what is missing or of the wrong type is absent, empty or
// NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/pilot_sections.h"
#include "vlbias/report/power_results.h"
#include "vlbias/report/representation_results.h"
#include "vlbias/report/scores_results.h"
#include "vlbias/report/visual_results.h"

namespace vlbias {
namespace {
namespace in_results_contracts_test {

stats::TestResult chi_square(double p) {
  stats::TestResult t;
  t.test = "chi_square";
  t.statistic = 7.25;
  t.df = {2};
  t.p_value = p;
  t.effect_size = 0.125;
  t.effect_name = "cramers_v";
  return t;
}

TEST(ResultsContracts, GeoFilteredReadsBackToTheSameText) {
  GeoFiltered s;
  s.definition = "rates";
  s.sources = {"a.csv"};
  s.regions.push_back({"Africa", 40, 3, 2, 5.0 / 40, 0.05, 0.27, 0.95});
  s.regions.push_back({"Europe", 38, 0, 1, 1.0 / 38, 0.004, 0.13, 0.95});
  s.test = chi_square(0.03);
  s.rows = 80;
  s.failed = 2;
  const Json j = to_json(s);
  const auto back = geo_filtered_from_json(Json{{kGeoFilteredSection, j}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), j.dump());
  EXPECT_EQ(j["regions"][0]["requested"].dump(), "40");  // counts stay integers
  EXPECT_EQ(geo_filtered_region_pointer(1, "requested"), "/analyses/filtered/regions/1/requested");
}

TEST(ResultsContracts, ScoresReadBackToTheSameText) {
  ScoresSection s;
  s.ci = 0.95;
  s.tables.push_back({"scores.csv", "ab12", "image", 10, 9, 1, 1, Json{{"head", "nsfw"}}});
  ScoresColumnResult& c = s.columns.emplace_back();
  c.table = "scores.csv";
  c.column = "unsafe";
  c.kind = "rate";
  c.kind_from = "values";
  c.all = {"all", 9, 3, 1.0 / 3, stats::kNaN, 0.12, 0.65, ""};
  ScoresByResult& b = c.by.emplace_back();
  b.by = "region";
  b.groups.push_back({"Africa", 5, 2, 0.4, stats::kNaN, 0.12, 0.77, ""});
  b.groups.push_back({"Europe", 4, 1, 0.25, stats::kNaN, 0.05, 0.7, "small"});
  b.mean_over_groups = 0.325;
  b.test = ScoresByResult::Test{chi_square(0.6), 0.6, std::nullopt};
  const Json j = to_json(s);
  const auto back = scores_from_json(Json{{kScoresSection, j}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), j.dump());
  EXPECT_EQ(scores_test_pointer(0, 0), "/analyses/scores/columns/0/by/0/test");
}

TEST(ResultsContracts, ConfidenceReadsBackToTheSameText) {
  ConfidenceSection s;
  s.definition = "confidence";
  s.scale = "logit";
  s.logit_scale = 100;
  ConfidencePair& p = s.pairs.emplace_back();
  p.pair = "smart/dumb";
  p.first = "smart";
  p.second = "dumb";
  p.mean = 0.5;
  stats::Interval ci;
  ci.lower = 0.4;
  ci.upper = 0.6;
  ci.resamples = 200;
  ci.seed = 7;
  p.groups.push_back({Json{{"race", "Black"}}, 12, 0.5, 0.1, ci, true});
  ConfidenceTest& t = s.tests.emplace_back();
  t.pair = "smart/dumb";
  t.factor = "race";
  t.result = chi_square(0.01);
  t.result.test = "anova";
  t.p_holm = 0.02;
  t.p_bh = 0.02;
  t.groups.push_back({"Black", 12, 0.5, 0.1});
  s.adjustment = "Holm";
  const Json j = to_json(s);
  const auto back = confidence_from_json(Json{{kConfidenceSection, j}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), j.dump());
  EXPECT_EQ(confidence_test_pointer(3), "/analyses/confidence/tests/3");
}

// A null test's power entry as power_pilot.cpp writes it (a Friedman test with an MDE note).
TestPower friedman_power() {
  TestPower w;
  w.analysis = "group_tests";
  w.label = "rating by race";
  w.test = "friedman";
  w.correction = "holm";
  w.family = 3;
  w.alpha = 0.05;
  w.target = 0;
  w.p_holm = 0.4;
  w.friedman = TestPower::Blocks{"clusters", 4, 0.25, 0.125};
  w.mde.at = {0.75, 0.8125, 0.0276, 200, 0.79};
  w.mde.target_power = 0.8;
  w.mde.note = "bracketed";
  return w;
}

TEST(ResultsContracts, TestPowerReadsBackToTheSameText) {
  TestPower w = friedman_power();
  const Json entry = to_json(w);
  // The order power_pilot.cpp has always written, counts as integers, no pointer or groups.
  EXPECT_EQ(entry.dump(),
            R"({"analysis":"group_tests","label":"rating by race","test":"friedman",)"
            R"("correction":"holm","family":3,"alpha":0.05,"target":0,"p_holm":0.4,)"
            R"("significant":false,"blocks":"clusters","sets_per_cluster":4,"set_sd":0.25,)"
            R"("cluster_sd":0.125,"mde":{"effect":0.75,"power":0.8125,"se":0.0276,)"
            R"("replicates":200,"analytic_power":0.79,"target_power":0.8,"note":"bracketed"}})");
  auto back = test_power_from_json(Json{{kTestPowerKey, entry}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), entry.dump());
  // `vlbias power`'s answer: the pointer and the design's groups, a chi-square's base rate, the
  // power and n per group at an asked effect; an undefined MDE.
  w.pointer = "/analyses/filtered/test";
  w.groups = std::vector<TestPower::Group>{{40, 0.5}, {38, stats::kNaN}};
  w.friedman.reset();
  w.base_rate = 0.0625;
  w.mde.at.effect = stats::kNaN;
  w.at_effect = PowerEstimateResult{0.1, 0.5, 0.05, 100, 0.52};
  w.sample_size = TestPower::SampleSize{120, 0.81, 0.04, ""};
  const Json answer = to_json(w);
  EXPECT_EQ(answer["pointer"], "/analyses/filtered/test");
  EXPECT_EQ(answer["groups"].dump(), R"([{"n":40,"sd":0.5},{"n":38,"sd":null}])");
  EXPECT_TRUE(answer["mde"]["effect"].is_null());
  back = test_power_from_json(Json{{kTestPowerKey, answer}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), answer.dump());
  EXPECT_FALSE(test_power_from_json(Json{{"p", 1}}).has_value());
}

TEST(ResultsContracts, SectionsWithPowerEntriesReadBackToTheSameText) {
  const TestPower w = friedman_power();
  // Each section's test entry, with the power entry power_pilot.cpp adds last.
  ConfidenceSection conf;
  ConfidenceTest& ct = conf.tests.emplace_back();
  ct.pair = "smart/dumb";
  ct.result = chi_square(0.5);
  ct.power = w;
  Json j = to_json(conf);
  EXPECT_EQ(j["tests"][0].items().begin().key(), "pair");
  EXPECT_EQ(std::prev(j["tests"][0].end()).key(), kTestPowerKey);
  auto c = confidence_from_json(Json{{kConfidenceSection, j}});
  ASSERT_TRUE(c && c->tests[0].power);
  EXPECT_EQ(to_json(*c).dump(), j.dump());

  AssociationSection assoc;
  AssociationContrast& ac = assoc.contrasts.emplace_back();
  ac.key = Json{{"race", "Black"}};
  ac.note = "few images";
  ac.power = w;
  j = to_json(assoc);
  EXPECT_EQ(std::prev(j["contrasts"]["results"][0].end()).key(), kTestPowerKey);
  auto a = association_from_json(Json{{kAssociationSection, j}});
  ASSERT_TRUE(a && a->contrasts[0].power);
  EXPECT_EQ(to_json(*a).dump(), j.dump());

  LvlmGroupTests lvlm;
  LvlmGroupTest& lt = lvlm.results.emplace_back();
  lt.measure = "rating";
  lt.power = w;
  j = to_json(lvlm);
  EXPECT_EQ(std::prev(j["results"][0].end()).key(), kTestPowerKey);
  auto l = lvlm_group_tests_from_json(Json{{kLvlmGroupTestsSection, j}});
  ASSERT_TRUE(l && l->results[0].power);
  EXPECT_EQ(to_json(*l).dump(), j.dump());

  GeoFiltered geo;
  geo.test = chi_square(0.3);
  geo.test_power = w;
  j = to_json(geo);
  EXPECT_EQ(std::prev(j["test"].end()).key(), kTestPowerKey);
  auto g = geo_filtered_from_json(Json{{kGeoFilteredSection, j}});
  ASSERT_TRUE(g && g->test_power);
  EXPECT_EQ(to_json(*g).dump(), j.dump());
  EXPECT_EQ(to_json(*g->test_power).dump(), to_json(w).dump());

  ScoresSection scores;
  scores.ci = 0.95;
  ScoresColumnResult& col = scores.columns.emplace_back();
  col.column = "nsfw";
  col.kind = "rate";
  ScoresByResult& by = col.by.emplace_back();
  by.by = "prompt";
  by.test = ScoresByResult::Test{chi_square(0.4), 0.8, w};
  j = to_json(scores);
  EXPECT_EQ(std::prev(j["columns"][0]["by"][0]["test"].end()).key(), kTestPowerKey);
  auto s = scores_from_json(Json{{kScoresSection, j}});
  ASSERT_TRUE(s && s->columns[0].by[0].test && s->columns[0].by[0].test->power);
  EXPECT_EQ(to_json(*s).dump(), j.dump());
}

TEST(ResultsContracts, AssociationReadsBackToTheSameText) {
  for (const bool has_delta : {true, false}) {
    AssociationSection s;
    if (!has_delta) s.empty_groups.push_back(Json{{"race", "Asian"}});
    s.images = 24;
    s.templates = {"a photo of a {} person"};
    s.contrasts_definition = "contrasts";
    AssociationContrast& c = s.contrasts.emplace_back();
    c.key = Json{{"race", "Black"}};
    c.dimension = "warm+";
    c.n = 12;
    c.estimate = 0.25;
    c.ci_lower = 0.125;
    c.ci_upper = 0.375;
    c.ci_level = 0.95;
    c.se = 0.0625;
    c.df = 21.5;
    c.t = 4;
    c.p_value = 0.001;
    c.p_holm = 0.002;
    c.p_bh = 0.0015;
    if (!has_delta) c.note = "equal variances";
    s.has_delta = has_delta;
    s.by = {"race"};
    AssociationDimension& d = s.dimensions.emplace_back();
    d.dimension = "warm+";
    d.name = "warmth";
    d.valence = "+";
    d.prompts = 6;
    d.cos_mean = 0.21;
    if (has_delta) d.delta_cos_mean = 0.01;
    stats::Interval ci;
    ci.lower = 0.4;
    ci.upper = 0.6;
    ci.resamples = 200;
    ci.seed = 7;
    d.groups.push_back({Json{{"race", "Black"}}, 12, 0.2, has_delta ? 0.02 : stats::kNaN, 0.1,
                        has_delta ? std::optional(ci) : std::nullopt, !has_delta});
    const Json j = to_json(s);
    const auto back = association_from_json(Json{{kAssociationSection, j}});
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(to_json(*back).dump(), j.dump());
    EXPECT_EQ(j["dimensions"][0]["groups"][0].contains("cos_sd"), !has_delta);
    EXPECT_EQ(back->dimensions[0].groups[0].sd, 0.1);  // delta_cos_sd or cos_sd
  }
  EXPECT_EQ(association_contrast_pointer(2), "/analyses/association/contrasts/results/2");
  EXPECT_EQ(association_group_pointer(1, 3), "/analyses/association/dimensions/1/groups/3");
}

// A section with keys missing (an older or hand-edited results.json) reads what it has.
TEST(ResultsContracts, AssociationWithKeysMissingReadsLeniently) {
  const Json analyses{
      {kAssociationSection,
       Json{{"contrasts", Json{{"results", Json::array({Json{{"dimension", "warm+"}}})}}},
            {"dimensions", Json::array({Json{{"groups", Json::array({Json{{"n", 3}}})}}})}}}};
  const auto s = association_from_json(analyses);
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->has_delta);
  EXPECT_TRUE(std::isnan(s->images));
  ASSERT_EQ(s->contrasts.size(), 1u);
  EXPECT_EQ(s->contrasts[0].dimension, "warm+");
  EXPECT_TRUE(std::isnan(s->contrasts[0].p_holm));
  ASSERT_EQ(s->dimensions.size(), 1u);
  ASSERT_EQ(s->dimensions[0].groups.size(), 1u);
  EXPECT_EQ(s->dimensions[0].groups[0].n, 3);
  EXPECT_TRUE(std::isnan(s->dimensions[0].groups[0].sd));
  EXPECT_FALSE(s->dimensions[0].groups[0].ci.has_value());
  EXPECT_FALSE(association_from_json(Json::object()).has_value());
}

// What power reads of a results.json (pilot_sections.h): the typed sections, the flags of the
// tests it does not support, the kind; analyses.distribution of a representation audit only.
TEST(ResultsContracts, PilotSectionsReadWhatPowerNeeds) {
  const Json analyses{{kAssociationSection, Json{{"has_delta", true}}},
                      {kDistributionSection, Json{{"attributes", Json::array()}}},
                      {"region_gaps", Json::array({1})},
                      {"consistency_gaps", Json::array()},
                      {"paired", Json::object()},
                      {"pull", Json{{"per_identity", Json::array()}}}};
  const PilotSections s = pilot_sections_from_json(Json{{"kind", "geo"}, {"analyses", analyses}});
  EXPECT_TRUE(s.results_object);
  EXPECT_EQ(s.kind, "geo");
  ASSERT_TRUE(s.association.has_value());
  EXPECT_TRUE(s.association->has_delta);
  EXPECT_FALSE(s.distribution.has_value());  // the geo-diversity audit's is FID/KID/Vendi
  EXPECT_FALSE(s.confidence.has_value());
  EXPECT_TRUE(s.region_gaps);
  EXPECT_FALSE(s.consistency_gaps);
  EXPECT_TRUE(s.paired);
  EXPECT_TRUE(s.pull_per_identity);
  const PilotSections r =
      pilot_sections_from_json(Json{{"kind", "representation"}, {"analyses", analyses}});
  EXPECT_TRUE(r.distribution.has_value());
  EXPECT_FALSE(pilot_sections_from_json(Json::array()).results_object);
  EXPECT_TRUE(pilot_sections_from_json(Json{{"kind", 3}}).kind.empty());
  PilotSections merged;
  PilotSections part = s;
  merge_pilot_sections(merged, std::move(part));
  EXPECT_TRUE(merged.association.has_value());
  EXPECT_TRUE(merged.region_gaps);
  EXPECT_FALSE(merged.consistency_gaps);
}

const double kVisualInf = std::numeric_limits<double>::infinity();

stats::Interval visual_bootstrap(double lower, double upper) {
  stats::Interval ci;
  ci.lower = lower;
  ci.upper = upper;
  ci.resamples = 200;
  ci.seed = 16694619771579979414ULL;
  return ci;
}

TEST(ResultsContracts, VisualLikelihoodReadsBackToTheSameText) {
  VisualLikelihoodResult s;
  s.definition = "L(a,id) = k/n";
  s.aggregation = "annotation";
  s.min_stereotypes = 2;
  s.annotations = {14858, 3, 738, 100, 1500, 13355, 234, 12, 169};
  VisualLikelihoodPooled& p = s.pooled.emplace();
  p = {9, 8, 1, 0, 4.01, 8.99, kVisualInf, true, visual_interval(visual_bootstrap(2.9, 6.1))};
  VisualLikelihoodIdentity& id = s.identities.emplace_back();
  id = {"Bangladeshi", "South Asia", true,       8,          7,    13,   20,          6,
        0.25,          0.0,          kVisualInf, "infinite", 0.08, 0.33, std::nullopt};
  id.ci = VisualLikelihoodIntervals{visual_interval(visual_bootstrap(0.2, 0.3)),
                                    visual_interval(visual_bootstrap(0, 0.06)),
                                    visual_interval(visual_bootstrap(4.0, kVisualInf)),
                                    visual_interval(visual_bootstrap(5e-18, 0.15))};
  s.identities.push_back(
      {"Swiss", "Europe", false, 1, 1, 4, 5, 0, 0.1, 0.2, 0.5, "finite", 0.01, 0.1, std::nullopt});
  s.regions.push_back({"Europe", 2, 0.008, 0.108, 0.076, 0.055, 0, 0, 0.0128});
  const Json j = to_json(s);
  const auto back = visual_likelihood_from_json(Json{{kVisualLikelihoodSection, j}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), j.dump());
  EXPECT_EQ(j["annotations"]["rows"].dump(), "14858");  // counts stay integers
  EXPECT_TRUE(j["identities"][0]["theta"].is_null());   // infinite: null with its flag
  EXPECT_EQ(j["identities"][0]["ci"]["theta"]["upper_infinite"], true);
  EXPECT_FALSE(j["identities"][1].contains("ci"));
  EXPECT_EQ(j["pooled"]["median_theta_infinite"], true);
  EXPECT_EQ(visual_identity_pointer(kVisualLikelihoodSection, 1),
            "/analyses/likelihood/identities/1");
}

TEST(ResultsContracts, VisualPullReadsBackToTheSameText) {
  VisualPullResult s;
  s.definition = "pull = S(d,s) - S(d,ns)";
  s.identities = 2;
  s.tested = 1;
  s.positive_pull = 1;
  s.permutations = 10000;
  s.alternative = "greater";
  VisualPullIdentity& x = s.per_identity.emplace_back();
  x = {"Bangladeshi", "South Asia", 6, 6, 6, 0.86, 0.54, 0.46, 0.62, 0.32, 0.86, 0.9, 0.91, {}};
  x.test = {0.001, 0.013, 0.0013, "greater", "exact", 924, 15570739799541098521ULL};
  s.per_identity.push_back({"Swiss",
                            "Europe",
                            6,
                            0,
                            6,
                            stats::kNaN,
                            0.5,
                            stats::kNaN,
                            stats::kNaN,
                            stats::kNaN,
                            0.9,
                            stats::kNaN,
                            0.8,
                            {}});
  s.regions.push_back({"South Asia", 1, 1, 1, 0.86, 0.54, 0.46, 0.62, 0.32});
  const Json j = to_json(s);
  const auto back = visual_pull_from_json(Json{{kVisualPullSection, j}});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(to_json(*back).dump(), j.dump());
  EXPECT_EQ(j["per_identity"][0]["test"]["seed"].dump(), "15570739799541098521");
  EXPECT_EQ(j["per_identity"][0]["n"]["default"].dump(), "6");
  EXPECT_EQ(visual_identity_pointer(kVisualPullSection, 1), "/analyses/pull/per_identity/1");
  EXPECT_EQ(visual_region_pointer(kVisualPullSection, 0), "/analyses/pull/regions/0");
}

TEST(ResultsContracts, VisualStereotypesAndSalienceReadBackToTheSameText) {
  VisualStereotypesResult st;
  st = {543, 542, 1, 213, {"rating_asia", "rating_na"}, 679, 375, 97, 76, 12, 3, 9, 9, 26};
  const Json js = to_json(st);
  const auto st_back = visual_stereotypes_from_json(Json{{kVisualStereotypesSection, js}});
  ASSERT_TRUE(st_back.has_value());
  EXPECT_EQ(to_json(*st_back).dump(), js.dump());
  VisualSalienceResult sal;
  sal.definition = "S(a,id) = tf x idf";
  sal.smoothing = 1.0;
  sal.top = 5;
  sal.captions = 702;
  sal.identities = 2;
  sal.vocabulary = 213;
  sal.matches = 327;
  sal.top_stereotypes = 2;
  sal.identities_detail.push_back(
      {"Bangladeshi", "South Asia", 60, {{"good", 2, 0.053, 4, 0.1}, {"brown", 4, 0.045, 4, {}}}});
  sal.identities_detail.push_back({"Swiss", "Europe", 0, {}});
  for (const bool annotated : {false, true}) {
    if (annotated) sal.annotated = VisualSalienceAnnotated{1, 1, 1.0};
    const Json j = to_json(sal);
    const auto back = visual_salience_from_json(Json{{kVisualSalienceSection, j}});
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(to_json(*back).dump(), j.dump());
    EXPECT_EQ(j.contains("share_marked_present"), annotated);
  }
  EXPECT_EQ(visual_salience_top_pointer(0, 1),
            "/analyses/salience/identities_detail/0/top_stereotypes/1");
}

TEST(ResultsContracts, OtherShapesReadWithoutThrowing) {
  for (const Json& x : {Json(), Json(3), Json("x"), Json::array({1, "a"}),
                        Json{{"regions", 1},
                             {"columns", Json::array({1, Json::object()})},
                             {"tests", Json::array({Json{{"groups", "no"}}})}}}) {
    const Json analyses{{kGeoFilteredSection, x},       {kScoresSection, x},
                        {kConfidenceSection, x},        {kLvlmGroupTestsSection, x},
                        {kAssociationSection, x},       {kDistributionSection, x},
                        {kVisualStereotypesSection, x}, {kVisualLikelihoodSection, x},
                        {kVisualSalienceSection, x},    {kVisualPullSection, x}};
    EXPECT_NO_THROW(geo_filtered_from_json(analyses));
    EXPECT_NO_THROW(scores_from_json(analyses));
    EXPECT_NO_THROW(confidence_from_json(analyses));
    EXPECT_NO_THROW(lvlm_group_tests_from_json(analyses));
    EXPECT_NO_THROW(association_from_json(analyses));
    EXPECT_NO_THROW(distribution_from_json(analyses));
    EXPECT_NO_THROW(visual_stereotypes_from_json(analyses));
    EXPECT_NO_THROW(visual_likelihood_from_json(analyses));
    EXPECT_NO_THROW(visual_salience_from_json(analyses));
    EXPECT_NO_THROW(visual_pull_from_json(analyses));
    EXPECT_NO_THROW(pilot_sections_from_json(Json{{"kind", "representation"}, {"analyses", x}}));
  }
  EXPECT_FALSE(geo_filtered_from_json(Json::object()).has_value());
  const auto s = scores_from_json(Json{{kScoresSection, Json{{"columns", Json::array({1})}}}});
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->columns.size(), 1u);
  EXPECT_TRUE(std::isnan(s->columns[0].all.n));
}

}  // namespace in_results_contracts_test
}  // namespace
}  // namespace vlbias
