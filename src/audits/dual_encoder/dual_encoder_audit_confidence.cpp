// The trait-pair confidence analysis of the dual-encoder audits (paper 004): confidence in the
// first trait of each pair per image, its group means, and the tests across and within the
// grouping factors; see include/vlbias/audits/dual_encoder_audit.h.
#include <string>
#include <vector>

#include "dual_encoder_audit_internal.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/dual_encoder_results.h"
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
// the section's groups and as rows of `groups`.
std::vector<ConfidenceGroup> confidence_groups(const Table& images, const std::string& column,
                                               const std::string& pair, std::size_t p,
                                               const ConfidenceAnalysisOptions& options,
                                               TableBuilder& groups) {
  const DescribeReport d =
      describe_column(images, column, options.grouping, options.grouping.bootstrap,
                      derive_seed(options.grouping.seed, p));
  std::vector<ConfidenceGroup> jg;
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
    ConfidenceGroup& e = jg.emplace_back();
    e.key = key_json(options.grouping.by, g.key);
    e.n = static_cast<double>(g.summary.n);
    e.mean = g.summary.mean;
    e.sd = g.summary.sd;
    if (options.grouping.bootstrap > 0) e.ci = g.mean_ci;
    e.small = g.small;
  }
  return jg;
}

// The tests, with Holm and BH over all of them, as the section's tests and as the
// confidence_tests table.
std::vector<ConfidenceTest> confidence_tests(const std::vector<TestRow>& test_rows, Table& table) {
  TableBuilder tests("confidence_tests");
  std::vector<double> p(test_rows.size()), holm, bh;
  for (std::size_t k = 0; k < test_rows.size(); ++k) p[k] = test_rows[k].c->result.p_value;
  adjust_holm_bh(p, holm, bh);
  std::vector<ConfidenceTest> jt;
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
    ConfidenceTest& e = jt.emplace_back();
    e.pair = r.pair;
    e.factor = r.factor;
    e.within = r.within_column;
    e.within_level = r.within_level;
    e.result = t;
    e.p_holm = holm[k];
    e.p_bh = bh[k];
    for (const GroupStats& s : r.c->groups) {
      // sd: the pilot variance a power analysis of this test reads (power_pilot.h).
      e.groups.push_back({s.key.empty() ? "" : s.key[0], static_cast<double>(s.n), s.mean, s.sd});
    }
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
  ConfidenceSection section;
  std::vector<CompareReport> reports;
  reports.reserve(tc.pairs.size() * 2);
  std::vector<TestRow> test_rows;
  for (std::size_t p = 0; p < tc.pairs.size(); ++p) {
    const std::string column = "confidence_" + tc.pairs[p];
    std::vector<ConfidenceGroup> jg =
        confidence_groups(images, column, tc.pairs[p], p, options, groups);
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
    section.pairs.push_back({tc.pairs[p], tc.first[p], tc.second[p],
                             stats::mean(images.numeric(column, true)), std::move(jg)});
  }
  Table tests;
  section.tests = confidence_tests(test_rows, tests);
  section.definition =
      "confidence in the first trait: exp(s0) / (exp(s0) + exp(s1)), s = mean cosine with the "
      "trait's prompts (raw) or logit_scale times it (logit)";
  section.scale = to_string(options.scale);
  if (options.scale == ConfidenceScale::Logit) section.logit_scale = options.logit_scale;
  section.adjustment = "Holm and Benjamini-Hochberg over every test of this table";
  out.json = to_json(section);
  out.pilot.confidence = std::move(section);
  std::vector<std::string> unit_columns;
  for (const std::string& pair : tc.pairs) unit_columns.push_back("confidence_" + pair);
  group_units(images, options.grouping.by, unit_columns, kConfidenceSection, out.units);
  out.tables.emplace_back("confidence_images", std::move(images));
  out.tables.emplace_back("confidence_groups", groups.build());
  out.tables.emplace_back("confidence_tests", std::move(tests));
  return out;
}

}  // namespace vlbias
