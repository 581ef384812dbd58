// The trait-pair confidence analysis of the dual-encoder audits (paper 004): confidence in the
// first trait of each pair per image, its group means, and the tests across and within the
// grouping factors; see include/vlbias/audits/dual_encoder_audit.h.
#include <string>
#include <vector>

#include "dual_encoder_audit_internal.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/compare.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): dual_encoder_audit_internal.h

namespace {

// One comparison of one trait pair: a row of the tests table.
struct TestRow {
  std::string pair, factor, within_column, within_level;
  const Comparison* c;
};

// The groups' mean confidence in the first trait of pair p (the images' column `column`), as
// JSON and as rows of `groups`.
Json confidence_groups(const Table& images, const std::string& column, const std::string& pair,
                       std::size_t p, const ConfidenceAnalysisOptions& options,
                       TableBuilder& groups) {
  const DescribeReport d =
      describe_column(images, column, options.grouping, options.grouping.bootstrap,
                      derive_seed(options.grouping.seed, p));
  Json jg = Json::array();
  for (const GroupDescription& g : d.groups) {
    groups.row();
    put_key(groups, options.grouping.by, g.key);
    groups.put("pair", pair);
    groups.put("n", static_cast<double>(g.summary.n));
    groups.put("mean", g.summary.mean);
    groups.put("sd", g.summary.sd);
    groups.put("ci_lower", g.mean_ci.lower);
    groups.put("ci_upper", g.mean_ci.upper);
    groups.put("small", g.small ? "true" : "false");
    Json e{{"key", key_json(options.grouping.by, g.key)},
           {"n", g.summary.n},
           {"mean", json_number(g.summary.mean)},
           {"sd", json_number(g.summary.sd)}};
    if (options.grouping.bootstrap > 0) e["ci"] = to_json(g.mean_ci);
    if (g.small) e["small"] = true;
    jg.push_back(e);
  }
  return jg;
}

// The tests, with Holm and BH over all of them, as JSON and as the confidence_tests table.
Json confidence_tests(const std::vector<TestRow>& test_rows, Table& table) {
  TableBuilder tests("confidence_tests");
  std::vector<double> p(test_rows.size()), holm, bh;
  for (std::size_t k = 0; k < test_rows.size(); ++k) p[k] = test_rows[k].c->result.p_value;
  adjust_holm_bh(p, holm, bh);
  Json jt = Json::array();
  for (std::size_t k = 0; k < test_rows.size(); ++k) {
    const TestRow& r = test_rows[k];
    const stats::TestResult& t = r.c->result;
    tests.row();
    tests.put("pair", r.pair);
    tests.put("factor", r.factor);
    tests.put("within", r.within_column);
    tests.put("within_level", r.within_level);
    tests.put("test", t.test);
    tests.put("groups", static_cast<double>(r.c->groups.size()));
    tests.put("statistic", t.statistic);
    tests.put("df1", t.df.size() > 0 ? t.df[0] : stats::kNaN);
    tests.put("df2", t.df.size() > 1 ? t.df[1] : stats::kNaN);
    tests.put("p_value", t.p_value);
    tests.put("p_holm", holm[k]);
    tests.put("p_bh", bh[k]);
    tests.put("effect_size", t.effect_size);
    tests.put("effect_name", t.effect_name);
    Json e{{"pair", r.pair},
           {"factor", r.factor},
           {"within", r.within_column},
           {"within_level", r.within_level}};
    e["result"] = to_json(t);
    e["p_holm"] = json_number(holm[k]);
    e["p_bh"] = json_number(bh[k]);
    Json g = Json::array();
    for (const GroupStats& s : r.c->groups) {
      // sd: the pilot variance a power analysis of this test reads (power_pilot.h).
      g.push_back(Json{{"level", s.key.empty() ? "" : s.key[0]},
                       {"n", s.n},
                       {"mean", json_number(s.mean)},
                       {"sd", json_number(s.sd)}});
    }
    e["groups"] = g;
    jt.push_back(e);
  }
  table = tests.build();
  return jt;
}

}  // namespace

AnalysisOutput confidence_analysis(const Study& study, const ConfidenceAnalysisOptions& options) {
  AnalysisOutput out;
  const TraitConfidence tc =
      trait_confidence(study.cos, study.manifest, options.scale, options.logit_scale);
  Table images = with_scores(study.images, "confidence_", tc.pairs, tc.confidence);
  TableBuilder groups("confidence_groups");
  Json pairs = Json::array();
  std::vector<CompareReport> reports;
  reports.reserve(tc.pairs.size() * 2);
  std::vector<TestRow> test_rows;
  for (std::size_t p = 0; p < tc.pairs.size(); ++p) {
    const std::string column = "confidence_" + tc.pairs[p];
    const Json jg = confidence_groups(images, column, tc.pairs[p], p, options, groups);
    // Paper 004: ANOVA across `across` within each level of `within`, and a two-group
    // test across `within` within each level of `across`.
    auto run = [&](const std::string& by, const std::string& within, const std::string& test) {
      if (by.empty()) return;
      CompareOptions co;
      co.value = column;
      co.by = {by};
      if (!within.empty()) co.within = {within};
      co.test = parse_group_test(test);
      co.min_group_size = options.grouping.min_group_size;
      reports.push_back(compare_groups(images, co));
      for (const Comparison& c : reports.back().comparisons) {
        test_rows.push_back({tc.pairs[p], by, within, c.within.empty() ? "" : c.within[0], &c});
      }
    };
    run(options.across, options.within, options.test_across);
    run(options.within, options.across, options.test_within);
    pairs.push_back(Json{{"pair", tc.pairs[p]},
                         {"first", tc.first[p]},
                         {"second", tc.second[p]},
                         {"mean", json_number(stats::mean(images.numeric(column, true)))},
                         {"groups", jg}});
  }
  Table tests;
  const Json jt = confidence_tests(test_rows, tests);
  out.json["definition"] =
      "confidence in the first trait: exp(s0) / (exp(s0) + exp(s1)), s = mean cosine with the "
      "trait's prompts (raw) or logit_scale times it (logit)";
  out.json["scale"] = to_string(options.scale);
  if (options.scale == ConfidenceScale::Logit) out.json["logit_scale"] = options.logit_scale;
  out.json["pairs"] = pairs;
  out.json["tests"] = jt;
  out.json["adjustment"] = "Holm and Benjamini-Hochberg over every test of this table";
  std::vector<std::string> unit_columns;
  for (const std::string& pair : tc.pairs) unit_columns.push_back("confidence_" + pair);
  group_units(images, options.grouping.by, unit_columns, "confidence", out.units);
  out.tables.emplace_back("confidence_images", std::move(images));
  out.tables.emplace_back("confidence_groups", groups.build());
  out.tables.emplace_back("confidence_tests", std::move(tests));
  return out;
}

}  // namespace vlbias
