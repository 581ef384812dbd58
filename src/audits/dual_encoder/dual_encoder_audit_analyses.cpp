// The analyses of the dual-encoder audits (paper 001): association, SC-WEAT, markedness and
// ranking metrics (trait-pair confidence, paper 004: dual_encoder_audit_confidence.cpp). Each
// returns a JSON section and CSV tables; see include/vlbias/audits/dual_encoder_audit.h.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dual_encoder_audit_internal.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/association.h"
#include "vlbias/metrics/ranking_metrics.h"
#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/stats/compare.h"

namespace vlbias {

namespace audits_internal {

void put_key(TableBuilder& t, const std::vector<std::string>& by,
             const std::vector<std::string>& key) {
  for (std::size_t c = 0; c < by.size(); ++c) t.put(by[c], key[c]);
}

Table with_scores(const Table& images, const std::string& prefix,
                  const std::vector<std::string>& labels, const std::vector<double>& values) {
  Table t = images;
  const std::size_t k = labels.size();
  for (std::size_t d = 0; d < k; ++d) {
    std::vector<double> column(images.rows);
    for (std::size_t i = 0; i < images.rows; ++i) column[i] = values[i * k + d];
    add_numeric_column(t, prefix + labels[d], std::move(column));
  }
  return t;
}

DescribeReport describe_column(const Table& t, const std::string& value, const GroupingOptions& g,
                               std::size_t bootstrap, std::uint64_t seed) {
  DescribeOptions o;
  o.value = value;
  o.by = g.by;
  o.percentiles = {};
  o.ci_level = g.ci;
  o.bootstrap = bootstrap;
  o.seed = seed;
  o.min_group_size = g.min_group_size;
  return describe_groups(t, o);
}

void adjust_holm_bh(const std::vector<double>& p, std::vector<double>& holm,
                    std::vector<double>& bh) {
  std::vector<double> defined;
  for (double v : p) {
    if (!std::isnan(v)) defined.push_back(v);
  }
  const std::vector<double> h = stats::holm(defined), b = stats::benjamini_hochberg(defined);
  holm.assign(p.size(), stats::kNaN);
  bh.assign(p.size(), stats::kNaN);
  for (std::size_t i = 0, j = 0; i < p.size(); ++i) {
    if (std::isnan(p[i])) continue;
    holm[i] = h[j];
    bh[i] = b[j];
    ++j;
  }
}

}  // namespace audits_internal

using namespace audits_internal;  // NOLINT(build/namespaces): dual_encoder_audit_internal.h

namespace {

Json interval_json(const stats::Interval& ci) {
  return to_json(ci);
}

// Skew values may be -inf (a class absent from the top k): JSON has no -inf, so it is
// written as the string "-inf" (as `vlbias metric skew` does).
Json skew_json(double v) {
  return std::isinf(v) && v < 0 ? Json("-inf") : json_number(v);
}

std::string join_key(const std::vector<std::string>& key) {
  return fmt::format("{}", fmt::join(key, "|"));
}

}  // namespace

// ----------------------------------------------------------------- association

namespace {

// Each group against the unweighted mean of the other groups' means, per dimension
// (stats::contrasts_vs_others); Holm and BH over every contrast of the audit.
template <typename Inputs>
void group_contrasts(const std::vector<std::string>& labels, const GroupingOptions& options,
                     const Inputs& inputs, AssociationSection& section,
                     std::vector<std::pair<std::string, Table>>& tables) {
  struct Row {
    std::size_t d, g;
    stats::ContrastResult r;
  };
  std::vector<Row> rows;
  for (std::size_t d = 0; d < inputs.size(); ++d) {
    if (inputs[d].moments.size() < 2) continue;
    // All groups at once: one contrast per group, each over the other groups, was quadratic.
    std::vector<stats::ContrastResult> contrasts =
        stats::contrasts_vs_others(inputs[d].moments, options.ci);
    for (std::size_t g = 0; g < contrasts.size(); ++g) {
      rows.push_back({d, g, std::move(contrasts[g])});
    }
  }
  std::vector<double> p(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) p[i] = rows[i].r.p_value;
  const std::vector<double> p_holm = stats::holm(p), p_bh = stats::benjamini_hochberg(p);
  TableBuilder table("association_contrasts");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const auto& key = inputs[row.d].keys[row.g];
    const stats::ContrastResult& r = row.r;
    table.row();
    put_key(table, options.by, key);
    table.put("dimension", labels[row.d]);
    table.put("n", static_cast<double>(inputs[row.d].moments[row.g].n));
    table.put("estimate", r.estimate);
    table.put("ci_lower", r.lower);
    table.put("ci_upper", r.upper);
    table.put("se", r.se);
    table.put("df", r.df);
    table.put("t", r.t);
    table.put("p_value", r.p_value);
    table.put("p_holm", p_holm[i]);
    table.put("p_bh", p_bh[i]);
    AssociationContrast c;
    c.key = key_json(options.by, key);
    c.dimension = labels[row.d];
    c.n = static_cast<double>(inputs[row.d].moments[row.g].n);
    c.estimate = r.estimate;
    c.ci_lower = r.lower;
    c.ci_upper = r.upper;
    c.ci_level = r.level;
    c.se = r.se;
    c.df = r.df;
    c.t = r.t;
    c.p_value = r.p_value;
    c.p_holm = p_holm[i];
    c.p_bh = p_bh[i];
    c.note = r.note;
    section.contrasts.push_back(std::move(c));
  }
  if (!rows.empty()) tables.emplace_back("association_contrasts", table.build());
  section.contrasts_definition =
      std::string("estimate = the group's mean ") + (section.has_delta ? "Delta cos" : "cos") +
      " minus the unweighted mean of the other groups' means (groups with n >= 2); "
      "Welch-Satterthwaite t test and interval; Holm and BH over every contrast";
}

// Per dimension: the groups' moments, for the contrasts of each group against the others.
struct ContrastInput {
  std::vector<std::vector<std::string>> keys;
  std::vector<stats::GroupMoments> moments;
};

// Dimension d of the association section: its groups' scores (a row each of the
// association_groups table) and the contrasts' inputs of the groups with n >= 2.
AssociationDimension association_dimension(const Study& study, const GroupingOptions& options,
                                           const ImageDimensionScores& scores, const Table& images,
                                           std::size_t d, TableBuilder& groups,
                                           ContrastInput& contrast_input,
                                           AssociationSection& section) {
  const std::vector<std::string>& labels = scores.dimensions;
  const std::string main = scores.has_delta ? "delta_cos_" : "cos_";
  const auto& dim = study.manifest.dimensions[d];
  const DescribeReport cos_r = describe_column(images, "cos_" + labels[d], options, 0, 0);
  const DescribeReport main_r = describe_column(images, main + labels[d], options,
                                                options.bootstrap, derive_seed(options.seed, d));
  AssociationDimension jd;
  for (std::size_t g = 0; g < main_r.groups.size(); ++g) {
    const GroupDescription& m = main_r.groups[g];
    const GroupDescription& c = cos_r.groups[g];
    groups.row();
    put_key(groups, options.by, m.key);
    groups.put("dimension", labels[d]);
    groups.put("n", static_cast<double>(m.summary.n));
    groups.put("cos_mean", c.summary.mean);
    groups.put("delta_cos_mean", scores.has_delta ? m.summary.mean : stats::kNaN);
    groups.put("delta_cos_sd", scores.has_delta ? m.summary.sd : stats::kNaN);
    groups.put("ci_lower", m.mean_ci.lower);
    groups.put("ci_upper", m.mean_ci.upper);
    groups.put("small", m.small ? "true" : "false");
    AssociationGroup e;
    e.key = key_json(options.by, m.key);
    e.n = static_cast<double>(m.summary.n);
    e.cos_mean = c.summary.mean;
    if (scores.has_delta) e.delta_cos_mean = m.summary.mean;
    e.sd = m.summary.sd;
    if (options.bootstrap > 0) e.ci = m.mean_ci;
    e.small = m.small;
    jd.groups.push_back(std::move(e));
    if (m.summary.n >= 2 && std::isfinite(m.summary.sd)) {
      contrast_input.keys.push_back(m.key);
      contrast_input.moments.push_back({m.summary.mean, m.summary.sd * m.summary.sd, m.summary.n});
    }
  }
  std::vector<double> all_cos(scores.images), all_delta;
  for (std::size_t i = 0; i < scores.images; ++i) all_cos[i] = scores.cos[i * labels.size() + d];
  jd.dimension = labels[d];
  jd.name = dim.dimension;
  jd.valence = dim.valence;
  jd.prompts = static_cast<double>(dim.rows.size());
  jd.cos_mean = stats::mean(all_cos);
  if (scores.has_delta) {
    all_delta.resize(scores.images);
    for (std::size_t i = 0; i < scores.images; ++i) {
      all_delta[i] = scores.delta_cos[i * labels.size() + d];
    }
    jd.delta_cos_mean = stats::mean(all_delta);
  }
  if (!main_r.empty_cells.empty() && d == 0) {
    for (const auto& cell : main_r.empty_cells) {
      section.empty_groups.push_back(key_json(options.by, cell));
    }
  }
  return jd;
}

}  // namespace

AnalysisOutput association_analysis(const Study& study, const GroupingOptions& options,
                                    ImageDimensionScores& scores) {
  AnalysisOutput out;
  scores = associate(study.cos, study.manifest, /*require_delta=*/false);
  const std::vector<std::string>& labels = scores.dimensions;
  Table images = with_scores(study.images, "cos_", labels, scores.cos);
  if (scores.has_delta) {
    images = with_scores(images, "delta_cos_", labels, scores.delta_cos);
  } else {
    out.notes.push_back(
        "association: some template has no neutral prompt, so Delta cos is not computed and "
        "groups are compared on cos");
  }
  const std::string main = scores.has_delta ? "delta_cos_" : "cos_";
  TableBuilder groups("association_groups");
  AssociationSection section;
  section.has_delta = scores.has_delta;
  std::vector<ContrastInput> contrast_inputs(labels.size());
  for (std::size_t d = 0; d < labels.size(); ++d) {
    section.dimensions.push_back(association_dimension(study, options, scores, images, d, groups,
                                                       contrast_inputs[d], section));
  }
  section.images = static_cast<double>(scores.images);
  section.templates = study.manifest.templates;
  std::vector<std::pair<std::string, Table>> contrast_table;
  group_contrasts(labels, options, contrast_inputs, section, contrast_table);
  section.by = options.by;
  out.json = to_json(section);
  out.pilot.association = std::move(section);
  std::vector<std::string> unit_columns;
  for (const std::string& l : labels) unit_columns.push_back(main + l);
  group_units(images, options.by, unit_columns, kAssociationSection, out.units);
  out.tables.emplace_back("association_images", std::move(images));
  out.tables.emplace_back("association_groups", groups.build());
  for (auto& t : contrast_table) out.tables.push_back(std::move(t));
  return out;
}

// ---------------------------------------------------------------------- SC-WEAT

namespace {

// Target sets: each dimension's prompts, then every attribute prompt ("all"), as
// positions in `all` (the rows of the cosine block gathered per pair of groups).
struct ScweatTargets {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> targets;
  std::vector<std::size_t> all;
  std::vector<std::vector<std::size_t>> sets;  // the targets' positions
};

ScweatTargets scweat_targets(const PromptManifest& m) {
  ScweatTargets t;
  for (const auto& d : m.dimensions) {
    std::vector<std::size_t> positions;
    for (std::size_t r : d.rows) {
      positions.push_back(t.all.size());
      t.all.push_back(r);
    }
    t.targets.emplace_back(d.label, std::move(positions));
  }
  std::vector<std::size_t> every(t.all.size());
  for (std::size_t i = 0; i < t.all.size(); ++i) every[i] = i;
  t.targets.emplace_back("all", std::move(every));
  for (const auto& target : t.targets) t.sets.push_back(target.second);
  return t;
}

// Two groups of one grouping, compared on every target set.
struct GroupPair {
  std::string grouping, a, b;
  std::vector<std::uint32_t> images;  // A's images then B's
  std::size_t n_a = 0;
  bool small = false;
};

// Every pair of groups of every grouping, in grouping order.
std::vector<GroupPair> group_pairs(const Study& study, const ScweatAnalysisOptions& options,
                                   std::vector<std::string>& notes) {
  std::vector<GroupPair> pairs;
  for (const auto& cols : options.groupings) {
    const Grouping g = group_by(study.images, cols);
    std::vector<std::vector<std::uint32_t>> members(g.size());
    for (std::size_t i = 0; i < study.images.rows; ++i) {
      if (g.group_of_row[i] != Grouping::kNoGroup) {
        members[g.group_of_row[i]].push_back(static_cast<std::uint32_t>(i));
      }
    }
    if (g.size() < 2) {
      notes.push_back(
          fmt::format("scweat: grouping {} has fewer than two groups", fmt::join(cols, "+")));
    }
    for (std::size_t a = 0; a < g.size(); ++a) {
      for (std::size_t b = a + 1; b < g.size(); ++b) {
        GroupPair pair{fmt::format("{}", fmt::join(cols, "+")),
                       join_key(g.keys[a]),
                       join_key(g.keys[b]),
                       members[a],
                       members[a].size(),
                       std::min(g.sizes[a], g.sizes[b]) < options.min_group_size};
        pair.images.insert(pair.images.end(), members[b].begin(), members[b].end());
        pairs.push_back(std::move(pair));
      }
    }
  }
  return pairs;
}

// SC-WEAT of every pair on every target set: [pair][target].
std::vector<std::vector<ScweatResult>> scweat_pairs(const Study& study,
                                                    const ScweatAnalysisOptions& options,
                                                    const ScweatTargets& targets,
                                                    const std::vector<GroupPair>& pairs,
                                                    const ScweatOptions& so) {
  const std::vector<std::size_t>& all = targets.all;
  // One task per pair of groups: every target set shares its relabellings
  // (sc_weat_target_sets), seeded per pair so results do not depend on threads.
  std::vector<std::vector<ScweatResult>> by_pair(pairs.size());
  Progress progress("SC-WEAT group pairs", pairs.size());
  const auto one_pair = [&](std::size_t k) {
    const GroupPair& pair = pairs[k];
    Matrix block(all.size(), pair.images.size());
    for (std::size_t r = 0; r < all.size(); ++r) {
      const float* src = study.cos.row(all[r]);
      float* dst = block.row(r);
      for (std::size_t j = 0; j < pair.images.size(); ++j) dst[j] = src[pair.images[j]];
    }
    ScweatOptions o = so;
    o.seed = derive_seed(options.seed, k);
    by_pair[k] = sc_weat_target_sets(block, pair.n_a, targets.sets, o);
    progress.advance();
  };
  // Pairs in parallel when there are enough of them; otherwise one at a time, each
  // spreading its replicates over the pool. Same results either way.
  if (pairs.size() >= thread_count()) {
    parallel_for(pairs.size(), one_pair);
  } else {
    for (std::size_t k = 0; k < pairs.size(); ++k) one_pair(k);
  }
  progress.finish();
  return by_pair;
}

// The tests (pair x target set), with Holm and BH over all of them, as JSON rows and the
// scweat table.
Json scweat_tests(const ScweatTargets& targets, const std::vector<GroupPair>& pairs,
                  const std::vector<std::vector<ScweatResult>>& by_pair, Table& out_table) {
  const auto& target_sets = targets.targets;
  struct Test {
    const GroupPair* pair;
    std::size_t target;
    const ScweatResult* result;
  };
  std::vector<Test> tests;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    for (std::size_t t = 0; t < target_sets.size(); ++t)
      tests.push_back({&pairs[k], t, &by_pair[k][t]});
  }
  std::vector<double> p(tests.size()), holm, bh;
  for (std::size_t k = 0; k < tests.size(); ++k) p[k] = tests[k].result->test.p_value;
  adjust_holm_bh(p, holm, bh);
  TableBuilder table("scweat");
  Json rows = Json::array();
  for (std::size_t k = 0; k < tests.size(); ++k) {
    const Test& t = tests[k];
    const ScweatResult& r = *t.result;
    table.row();
    table.put("grouping", t.pair->grouping);
    table.put("group_a", t.pair->a);
    table.put("group_b", t.pair->b);
    table.put("dimension", target_sets[t.target].first);
    table.put("targets", static_cast<double>(target_sets[t.target].second.size()));
    table.put("n_a", static_cast<double>(r.n_a));
    table.put("n_b", static_cast<double>(r.n_b));
    table.put("effect_size", r.effect_size);
    table.put("mean_difference", r.mean_difference);
    table.put("p_value", r.test.p_value);
    table.put("p_holm", holm[k]);
    table.put("p_bh", bh[k]);
    table.put("method", r.test.method);
    table.put("permutations", static_cast<double>(r.test.resamples));
    table.put("small", t.pair->small ? "true" : "false");
    Json e{{"grouping", t.pair->grouping},
           {"group_a", t.pair->a},
           {"group_b", t.pair->b},
           {"dimension", target_sets[t.target].first},
           {"n_a", r.n_a},
           {"n_b", r.n_b},
           {"effect_size", json_number(r.effect_size)},
           {"mean_difference", json_number(r.mean_difference)},
           {"p_value", json_number(r.test.p_value)},
           {"p_holm", json_number(holm[k])},
           {"p_bh", json_number(bh[k])},
           {"method", r.test.method},
           {"permutations", r.test.resamples},
           {"seed", r.test.seed}};
    if (t.pair->small) e["small"] = true;
    if (!r.note.empty()) e["note"] = r.note;
    rows.push_back(e);
  }
  out_table = table.build();
  return rows;
}

}  // namespace

AnalysisOutput scweat_analysis(const Study& study, const ScweatAnalysisOptions& options) {
  AnalysisOutput out;
  const PromptManifest& m = study.manifest;
  VLBIAS_CHECK(!m.dimensions.empty(), InputError,
               "SC-WEAT: the prompt manifest has no attribute prompts to use as targets");
  const ScweatTargets targets = scweat_targets(m);
  const std::vector<GroupPair> pairs = group_pairs(study, options, out.notes);
  ScweatOptions so;
  so.p_test = parse_scweat_p_test(options.p_test);
  so.permutations = options.permutations;
  const std::vector<std::vector<ScweatResult>> by_pair =
      scweat_pairs(study, options, targets, pairs, so);
  Table table;
  const Json rows = scweat_tests(targets, pairs, by_pair, table);
  out.json["p_test"] = to_string(so.p_test);
  out.json["alternative"] = "two-sided";
  out.json["targets"] = "each dimension's prompts (words x templates), and 'all' of them";
  out.json["tests"] = rows;
  out.tables.emplace_back("scweat", std::move(table));
  return out;
}

// ------------------------------------------------------------------- markedness

AnalysisOutput markedness_analysis(const Study& study, const MarkednessOptions& options) {
  AnalysisOutput out;
  const MarkednessReport r = markedness(study.cos, study.manifest, study.images, options);
  TableBuilder table("markedness");
  Json groups = Json::array();
  for (const MarkednessGroup& g : r.groups) {
    table.row();
    table.put("attribute", g.attribute);
    table.put("level", g.level);
    table.put("word", g.word);
    table.put("n", static_cast<double>(g.n));
    table.put("marked", static_cast<double>(g.marked));
    table.put("percent", g.percent);
    table.put("ci_lower", g.ci.lower);
    table.put("ci_upper", g.ci.upper);
    for (std::size_t t = 0; t < r.templates.size(); ++t) {
      table.put(fmt::format("percent_template_{}", t + 1), g.percent_by_template[t]);
    }
    table.put("small", g.small ? "true" : "false");
    Json by_template = Json::array();
    for (double v : g.percent_by_template) by_template.push_back(json_number(v));
    Json e{{"attribute", g.attribute},
           {"level", g.level},
           {"word", g.word},
           {"n", g.n},
           {"marked", g.marked},
           {"percent", json_number(g.percent)},
           {"percent_by_template", by_template}};
    if (options.bootstrap > 0 && !std::isnan(g.percent)) e["ci"] = interval_json(g.ci);
    if (g.small) e["small"] = true;
    if (!g.note.empty()) {
      e["note"] = g.note;
      out.notes.push_back(fmt::format("markedness {}={}: {}", g.attribute, g.level, g.note));
    }
    groups.push_back(e);
  }
  out.json["definition"] =
      "percent of a level's images whose neutral-prompt score is strictly greater than the "
      "score of the prompt naming the level (scores: mean cosine over templates having both)";
  out.json["templates"] = r.templates;
  out.json["groups"] = groups;
  if (r.rows_missing_key > 0) out.json["rows_missing_key"] = r.rows_missing_key;
  out.tables.emplace_back("markedness", table.build());
  return out;
}

// ---------------------------------------------------------------------- ranking

AnalysisOutput ranking_analysis(const Study& study, const ImageDimensionScores& scores,
                                const RankingAnalysisOptions& options) {
  AnalysisOutput out;
  SkewOptions so;
  so.desired = parse_desired_distribution(options.desired);
  so.absent = parse_absent_class(options.absent);
  TableBuilder skew_table("ranking_skew");
  TableBuilder ndkl_table("ranking_ndkl");
  Json results = Json::array();
  const std::size_t dims = scores.dims();
  for (const std::string& attribute : options.attributes) {
    const Grouping g = group_by(study.images, {attribute});
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < study.images.rows; ++i) {
      if (g.group_of_row[i] != Grouping::kNoGroup) rows.push_back(i);
    }
    VLBIAS_CHECK(!rows.empty(), InputError, "ranking: no image has a value in column '{}'",
                 attribute);
    RankedItems items;
    for (const auto& key : g.keys) items.class_names.push_back(key[0]);
    for (std::size_t i : rows) items.labels.push_back(g.group_of_row[i]);
    so.k = std::min(options.k, rows.size());
    if (so.k < options.k) {
      out.notes.push_back(
          fmt::format("ranking: k = {} exceeds the {} images with a '{}' value; "
                      "k = {} used",
                      options.k, rows.size(), attribute, so.k));
    }
    for (std::size_t d = 0; d < dims; ++d) {
      items.scores.resize(rows.size());
      for (std::size_t j = 0; j < rows.size(); ++j) {
        items.scores[j] = scores.cos[rows[j] * dims + d];
      }
      const SkewResult s = skew_at_k(items, so);
      const NdklResult n = ndkl(items, so.desired);
      Json skew = Json::object(), counts = Json::object();
      for (std::size_t c = 0; c < items.class_names.size(); ++c) {
        skew[items.class_names[c]] = skew_json(s.skew[c]);
        counts[items.class_names[c]] = s.topk_counts[c];
        skew_table.row();
        skew_table.put("dimension", scores.dimensions[d]);
        skew_table.put("attribute", attribute);
        skew_table.put("class", items.class_names[c]);
        skew_table.put("k", static_cast<double>(s.k));
        skew_table.put("topk_count", static_cast<double>(s.topk_counts[c]));
        skew_table.put("desired", s.desired[c]);
        skew_table.put("skew", s.skew[c]);
      }
      ndkl_table.row();
      ndkl_table.put("dimension", scores.dimensions[d]);
      ndkl_table.put("attribute", attribute);
      ndkl_table.put("n", static_cast<double>(n.n));
      ndkl_table.put("max_skew", s.max_skew);
      ndkl_table.put("ndkl", n.ndkl);
      results.push_back(Json{{"dimension", scores.dimensions[d]},
                             {"attribute", attribute},
                             {"k", s.k},
                             {"skew", skew},
                             {"max_skew", skew_json(s.max_skew)},
                             {"topk_counts", counts},
                             {"ndkl", json_number(n.ndkl)}});
    }
  }
  out.json["score"] = "cos(i, D): images ranked by their mean cosine with the dimension's prompts";
  out.json["desired"] = to_string(so.desired);
  out.json["absent"] = to_string(so.absent);
  out.json["tie_rule"] = kTieRule;
  out.json["results"] = results;
  out.tables.emplace_back("ranking_skew", skew_table.build());
  out.tables.emplace_back("ranking_ndkl", ndkl_table.build());
  return out;
}

}  // namespace vlbias
