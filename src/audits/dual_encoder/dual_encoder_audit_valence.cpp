// The valence-correlation analysis of the social-perception audit (paper 001 App. C.1,
// Table S.4; include/vlbias/audits/dual_encoder_audit.h): whether a non-protected factor moves a
// dimension's two valences together (legibility) or apart (a change of perception).
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dual_encoder_audit_internal.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): dual_encoder_audit_internal.h

namespace {

// The dimensions with both valences: (dimension, index of its + label, index of its - label)
// in scores.dimensions, in manifest order of the + label.
struct ValencePair {
  std::string dimension;
  std::size_t positive, negative;
};

std::vector<ValencePair> valence_pairs(const Study& study, const ImageDimensionScores& scores) {
  std::map<std::string, std::size_t> index_of;
  for (std::size_t d = 0; d < scores.dims(); ++d) index_of[scores.dimensions[d]] = d;
  std::map<std::string, std::pair<const std::string*, const std::string*>> poles;
  std::vector<std::string> order;
  for (const auto& d : study.manifest.dimensions) {
    auto& p = poles[d.dimension];
    if (p.first == nullptr && p.second == nullptr) order.push_back(d.dimension);
    if (d.valence == "+") p.first = &d.label;
    if (d.valence == "-") p.second = &d.label;
  }
  std::vector<ValencePair> out;
  for (const std::string& name : order) {
    const auto& p = poles[name];
    if (p.first && p.second) out.push_back({name, index_of.at(*p.first), index_of.at(*p.second)});
  }
  return out;
}

// Per level of `factor` (group_by's order), the mean Delta cos of every dimension over the
// images with that level, and their count.
struct LevelMeans {
  std::vector<std::string> levels;
  std::vector<std::size_t> n;
  std::vector<double> mean;  // level l, dimension d at l * dims + d
};

LevelMeans level_means(const Study& study, const ImageDimensionScores& scores,
                       const std::string& factor, const std::vector<bool>& mask) {
  const Grouping g = group_by(study.images, {factor}, mask);
  const std::size_t dims = scores.dims();
  LevelMeans m;
  for (const auto& key : g.keys) m.levels.push_back(key[0]);
  m.n.assign(g.size(), 0);
  m.mean.assign(g.size() * dims, 0.0);
  for (std::size_t i = 0; i < scores.images; ++i) {
    const std::uint32_t l = g.group_of_row[i];
    if (l == Grouping::kNoGroup) continue;
    ++m.n[l];
    for (std::size_t d = 0; d < dims; ++d) m.mean[l * dims + d] += scores.delta_cos[i * dims + d];
  }
  for (std::size_t l = 0; l < g.size(); ++l) {
    for (std::size_t d = 0; d < dims; ++d) m.mean[l * dims + d] /= static_cast<double>(m.n[l]);
  }
  return m;
}

constexpr const char* kDefinition =
    "per factor and dimension with both valences: Pearson r, over the factor's levels, between "
    "the mean Delta cos of the positive valence and that of the negative one (images of every "
    "group pooled at each level; images without the factor left out; per level of `within` "
    "when given), with scipy's exact p and a Fisher z 95% interval; the average r per factor "
    "(paper 001 App. C.1, Table S.4). r near +1: the factor moves both valences together "
    "(legibility); negative: it moves them apart (a change of perception)";

// The results of one factor (within one cell of `within`, "" when none): its level means into
// `means`, per valence pair Pearson's r into `corr` and `results`.
void add_factor(const ImageDimensionScores& scores, const std::vector<ValencePair>& pairs,
                const std::string& factor, const LevelMeans& m, const std::string& within,
                const std::string& cell, TableBuilder& corr, TableBuilder& means, Json& results) {
  const std::size_t dims = scores.dims();
  for (std::size_t l = 0; l < m.levels.size(); ++l) {
    for (std::size_t d = 0; d < dims; ++d) {
      means.row();
      if (!within.empty()) means.put("within_" + within, cell);
      means.put("factor", factor);
      means.put("level", m.levels[l]);
      means.put("dimension", scores.dimensions[d]);
      means.put("images", static_cast<double>(m.n[l]));
      means.put("mean_delta_cos", m.mean[l * dims + d]);
    }
  }
  Json rows = Json::array();
  double r_sum = 0.0;
  std::size_t r_count = 0;
  for (const ValencePair& p : pairs) {
    std::vector<double> pos, neg;
    for (std::size_t l = 0; l < m.levels.size(); ++l) {
      pos.push_back(m.mean[l * dims + p.positive]);
      neg.push_back(m.mean[l * dims + p.negative]);
    }
    const stats::TestResult r = stats::pearson(pos, neg);
    const double n = static_cast<double>(pos.size());
    const stats::Interval ci =
        stats::fisher_z_interval(r.statistic, n > 3 ? 1.0 / std::sqrt(n - 3.0) : stats::kNaN, 0.95);
    if (!std::isnan(r.statistic)) {
      r_sum += r.statistic;
      ++r_count;
    }
    Json pj = to_json(r);
    pj["ci"] = to_json(ci);
    rows.push_back(Json{{"dimension", p.dimension},
                        {"positive", scores.dimensions[p.positive]},
                        {"negative", scores.dimensions[p.negative]},
                        {"pearson", std::move(pj)}});
    corr.row();
    if (!within.empty()) corr.put("within_" + within, cell);
    corr.put("factor", factor);
    corr.put("dimension", p.dimension);
    corr.put("positive", scores.dimensions[p.positive]);
    corr.put("negative", scores.dimensions[p.negative]);
    corr.put("levels", n);
    corr.put("r", r.statistic);
    corr.put("p", r.p_value);
    corr.put("r_lower", ci.lower);
    corr.put("r_upper", ci.upper);
  }
  Json j = Json{
      {"factor", factor},
      {"levels", m.levels},
      {"images_per_level", m.n},
      {"pairs", std::move(rows)},
      {"average_r", json_number(r_count ? r_sum / static_cast<double>(r_count) : stats::kNaN)}};
  if (!within.empty()) j["within"] = Json{{within, cell}};
  results.push_back(std::move(j));
}

}  // namespace

AnalysisOutput valence_correlation_analysis(const Study& study, const ImageDimensionScores& scores,
                                            const std::vector<std::string>& factors,
                                            const std::string& within) {
  VLBIAS_CHECK(scores.has_delta, InternalError, "valence_correlation needs Delta cos");
  const std::vector<ValencePair> pairs = valence_pairs(study, scores);
  VLBIAS_CHECK(!pairs.empty(), UsageError,
               "analysis 'valence_correlation' needs a dimension with both a '+' and a '-' "
               "valence in the prompt manifest; it has none");
  VLBIAS_CHECK(!factors.empty(), UsageError,
               "analysis 'valence_correlation' has no factor: name them in "
               "analyses.valence_correlation.factors or factors.ordinal / factors.categorical");
  require_columns(study.images, factors, "valence_correlation.factors");
  // One block of results per level of `within` (all images when none).
  std::vector<std::string> cells = {""};
  std::vector<std::vector<bool>> masks = {{}};
  if (!within.empty()) {
    require_columns(study.images, {within}, "valence_correlation.within");
    const Grouping w = group_by(study.images, {within});
    cells.clear();
    masks.clear();
    for (std::size_t c = 0; c < w.size(); ++c) {
      cells.push_back(w.keys[c][0]);
      std::vector<bool> mask(study.images.rows);
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = w.group_of_row[i] == c;
      masks.push_back(std::move(mask));
    }
  }
  AnalysisOutput out;
  TableBuilder corr("valence_correlations"), means("valence_level_means");
  Json results = Json::array();
  for (std::size_t c = 0; c < cells.size(); ++c) {
    for (const std::string& factor : factors) {
      if (factor == within) continue;  // constant within a cell
      add_factor(scores, pairs, factor, level_means(study, scores, factor, masks[c]), within,
                 cells[c], corr, means, results);
    }
  }
  out.json = Json{{"definition", kDefinition}, {"factors", std::move(results)}};
  if (!within.empty()) out.json["within"] = within;
  out.tables.emplace_back("valence_correlations", corr.build());
  out.tables.emplace_back("valence_level_means", means.build());
  return out;
}

}  // namespace vlbias
