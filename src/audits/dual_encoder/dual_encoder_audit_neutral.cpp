// The neutral-prompt analysis of the social-perception audit (paper 001 App. G, Fig.
// S.14-S.16; include/vlbias/audits/dual_encoder_audit.h): how much each group's images resemble
// the neutral prompt ("a photo of a person") before any social word is added.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dual_encoder_audit_internal.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/summary.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): dual_encoder_audit_internal.h

namespace {

// neutral(i) = the mean over templates with a neutral prompt of cos(i, neutral prompt): the
// reference Delta cos subtracts (Hausladen et al. Eq. 2).
std::vector<double> neutral_cosines(const Study& study) {
  std::vector<std::size_t> rows;
  for (const std::size_t r : study.manifest.neutral_of_template) {
    if (r != PromptManifest::kNone) rows.push_back(r);
  }
  VLBIAS_CHECK(!rows.empty(), UsageError,
               "analysis 'neutral' needs a neutral prompt (a manifest row with role neutral or "
               "an empty word) for at least one template");
  std::vector<double> out(study.images.rows, 0.0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (const std::size_t r : rows) out[i] += study.cos.at(r, i);
    out[i] /= static_cast<double>(rows.size());
  }
  return out;
}

// Per group, the mean neutral cosine of each pair-key value's images (an identity with several
// images in a group, e.g. CausalFace's ages and poses of one seed, counts once, averaged).
std::vector<std::map<std::string, double>> identity_means(const Table& images,
                                                          const Grouping& groups,
                                                          const std::string& pair_key,
                                                          const std::vector<double>& neutral) {
  const Column& key = images.column(pair_key);
  std::vector<std::map<std::string, std::pair<double, std::size_t>>> sums(groups.size());
  for (std::size_t i = 0; i < images.rows; ++i) {
    const std::uint32_t g = groups.group_of_row[i];
    if (g == Grouping::kNoGroup || key.missing(i)) continue;
    auto& s = sums[g][key.text(i)];
    s.first += neutral[i];
    ++s.second;
  }
  std::vector<std::map<std::string, double>> out(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [k, s] : sums[g]) out[g][k] = s.first / static_cast<double>(s.second);
  }
  return out;
}

struct PairRow {
  std::size_t a = 0, b = 0, n = 0;
  double mean_a = stats::kNaN, mean_b = stats::kNaN;
  stats::TestResult test, pearson;
};

// Group a against group b: paired by identity (paired t and Pearson r over the identities both
// groups have, Fig. S.15 and S.16) or, without a pair key, Welch's t over the images.
PairRow compare_pair(std::size_t a, std::size_t b, const Grouping& groups,
                     const std::vector<double>& neutral,
                     const std::vector<std::map<std::string, double>>& by_identity) {
  PairRow row;
  row.a = a;
  row.b = b;
  std::vector<double> xa, xb;
  if (!by_identity.empty()) {
    for (const auto& [k, v] : by_identity[a]) {
      const auto it = by_identity[b].find(k);
      if (it == by_identity[b].end()) continue;
      xa.push_back(v);
      xb.push_back(it->second);
    }
  } else {
    for (std::size_t i = 0; i < neutral.size(); ++i) {
      if (groups.group_of_row[i] == a) xa.push_back(neutral[i]);
      if (groups.group_of_row[i] == b) xb.push_back(neutral[i]);
    }
  }
  row.n = by_identity.empty() ? xa.size() + xb.size() : xa.size();
  if (!xa.empty()) row.mean_a = stats::mean(xa);
  if (!xb.empty()) row.mean_b = stats::mean(xb);
  if (by_identity.empty()) {
    row.test = stats::welch_t(xa, xb);
  } else if (xa.size() >= 2) {
    row.test = stats::paired_t(xa, xb);
    row.pearson = stats::pearson(xa, xb);
  } else {
    row.test.test = "paired_t";
    row.test.note = row.pearson.note =
        fmt::format("{} identities in both groups; a paired test needs 2", xa.size());
    row.pearson.test = "pearson";
  }
  return row;
}

}  // namespace

AnalysisOutput neutral_analysis(const Study& study, const NeutralOptions& options) {
  const GroupingOptions& g = options.grouping;
  const std::vector<double> neutral = neutral_cosines(study);
  AnalysisOutput out;
  Table images = study.images;
  add_numeric_column(images, "neutral_cos", neutral);
  out.tables.emplace_back("neutral_images", images);

  const DescribeReport described =
      describe_column(images, "neutral_cos", g, g.bootstrap, options.seed);
  Json groups_json = to_json(described)["groups"];
  TableBuilder gt("neutral_groups");
  for (const GroupDescription& d : described.groups) {
    gt.row();
    put_key(gt, g.by, d.key);
    gt.put("n", static_cast<double>(d.summary.n));
    gt.put("mean", d.summary.mean);
    gt.put("sd", d.summary.sd);
    gt.put("ci_lower", d.mean_ci.lower);
    gt.put("ci_upper", d.mean_ci.upper);
  }
  out.tables.emplace_back("neutral_groups", gt.build());

  const Grouping groups = group_by(images, g.by);
  std::vector<std::vector<double>> values(groups.size());
  for (std::size_t i = 0; i < images.rows; ++i) {
    if (groups.group_of_row[i] != Grouping::kNoGroup)
      values[groups.group_of_row[i]].push_back(neutral[i]);
  }
  std::vector<std::span<const double>> spans(values.begin(), values.end());
  const stats::TestResult anova = stats::one_way_anova(spans);

  if (!options.pair_key.empty()) require_columns(images, {options.pair_key}, "neutral.pair_key");
  const std::vector<std::map<std::string, double>> by_identity =
      options.pair_key.empty() ? std::vector<std::map<std::string, double>>{}
                               : identity_means(images, groups, options.pair_key, neutral);
  std::vector<PairRow> pairs;
  for (std::size_t a = 0; a < groups.size(); ++a) {
    for (std::size_t b = a + 1; b < groups.size(); ++b)
      pairs.push_back(compare_pair(a, b, groups, neutral, by_identity));
  }
  std::vector<double> p, holm, bh;
  for (const PairRow& r : pairs) p.push_back(r.test.p_value);
  adjust_holm_bh(p, holm, bh);
  TableBuilder pt("neutral_pairs");
  Json pairs_json = Json::array();
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const PairRow& r = pairs[i];
    pt.row();
    pt.put("group_a", groups.label(r.a));
    pt.put("group_b", groups.label(r.b));
    pt.put("n", static_cast<double>(r.n));
    pt.put("mean_a", r.mean_a);
    pt.put("mean_b", r.mean_b);
    pt.put("difference", r.mean_a - r.mean_b);
    pt.put("t", r.test.statistic);
    pt.put("p_value", r.test.p_value);
    pt.put("p_holm", holm[i]);
    pt.put("p_bh", bh[i]);
    if (!options.pair_key.empty()) pt.put("pearson_r", r.pearson.statistic);
    Json e{{"a", key_json(g.by, groups.keys[r.a])},
           {"b", key_json(g.by, groups.keys[r.b])},
           {"n", r.n},
           {"mean_a", json_number(r.mean_a)},
           {"mean_b", json_number(r.mean_b)},
           {"difference", json_number(r.mean_a - r.mean_b)},
           {"test", to_json(r.test)},
           {"p_holm", json_number(holm[i])},
           {"p_bh", json_number(bh[i])}};
    if (!options.pair_key.empty()) e["pearson"] = to_json(r.pearson);
    pairs_json.push_back(std::move(e));
  }
  out.tables.emplace_back("neutral_pairs", pt.build());
  // summary.json's units: each group's images (its mean) and, without a pair key, every
  // grouped image with its group (the pairs' differences of means).
  group_units(images, g.by, {"neutral_cos"}, "neutral", out.units);
  if (options.pair_key.empty()) {
    TableBuilder u("units");
    for (std::size_t i = 0; i < images.rows; ++i) {
      if (groups.group_of_row[i] == Grouping::kNoGroup) continue;
      std::string label;
      for (const std::string& v : groups.keys[groups.group_of_row[i]])
        label += (label.empty() ? "" : " ") + v;
      u.row();
      u.put("image", static_cast<double>(i));
      u.put("group", label);
      u.put("neutral_cos", neutral[i]);
    }
    out.units.emplace_back(units_table_name("neutral", {}), u.build());
  }
  const std::string pairing =
      options.pair_key.empty()
          ? "Welch's t over the images of the two groups"
          : fmt::format(
                "paired t over the '{}' values both groups have (an identity's images in "
                "a group averaged first), and Pearson's r between the two groups' "
                "values (Fig. S.15, S.16)",
                options.pair_key);
  out.json = Json{{"definition",
                   "neutral_cos(i) = mean over templates of cos(image i, the template's neutral "
                   "prompt), the reference Delta cos subtracts (paper 001 App. G, Fig. S.14); "
                   "per group its mean with a bootstrap interval, one-way ANOVA across groups, "
                   "and each pair of groups: " +
                       pairing + "; Holm and BH over the pairs"},
                  {"by", g.by},
                  {"groups", groups_json},
                  {"anova", to_json(anova)},
                  {"pairs", pairs_json}};
  if (!options.pair_key.empty()) out.json["pair_key"] = options.pair_key;
  return out;
}

}  // namespace vlbias
