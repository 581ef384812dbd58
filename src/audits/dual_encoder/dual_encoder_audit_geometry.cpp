// The prompt-geometry analysis of the social-perception audit (paper 001 App. D, Fig. S.6,
// Table S.5; include/vlbias/audits/dual_encoder_audit.h): how close a dimension's two valences
// lie in the text embedding space, and a PCA of the attribute prompts.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dual_encoder_audit_internal.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/pca.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): dual_encoder_audit_internal.h

namespace {

// cos of two prompt embeddings (rows of `p`), in double.
double prompt_cos(const Matrix& p, std::size_t a, std::size_t b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t k = 0; k < p.cols; ++k) {
    const double x = p.at(a, k), y = p.at(b, k);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / std::sqrt(aa * bb);
}

// Word-pair similarities of one kind: per (word a, word b) the mean over templates of the cosine
// of their prompts in the same template (a bare-word manifest, template "{}", gives the paper's
// adjective-to-adjective cosines).
using PairMeans = std::map<std::pair<std::string, std::string>, std::pair<double, std::size_t>>;

void add_pairs(const Study& s, const std::vector<std::size_t>& rows_a,
               const std::vector<std::size_t>& rows_b, bool within, PairMeans& out) {
  const PromptManifest& m = s.manifest;
  for (const std::size_t a : rows_a) {
    for (const std::size_t b : rows_b) {
      if (m.template_of_row[a] != m.template_of_row[b]) continue;
      if (within && m.words[a] >= m.words[b]) continue;  // each unordered pair once
      auto& e = out[{m.words[a], m.words[b]}];
      e.first += prompt_cos(s.prompts, a, b);
      ++e.second;
    }
  }
}

std::vector<double> means_of(const PairMeans& pairs) {
  std::vector<double> v;
  for (const auto& [k, e] : pairs) v.push_back(e.first / static_cast<double>(e.second));
  return v;
}

// Welch's t that `within` exceeds `cross` (one-sided, as Table S.5): p from the two-sided p.
Json one_sided_welch(const std::vector<double>& within, const std::vector<double>& cross) {
  stats::TestResult t = stats::welch_t(within, cross);
  if (!std::isnan(t.p_value)) t.p_value = t.statistic > 0 ? t.p_value / 2 : 1 - t.p_value / 2;
  Json j = to_json(t);
  j["alternative"] = "greater";
  return j;
}

}  // namespace

AnalysisOutput prompt_geometry_analysis(const Study& study, std::size_t components) {
  const PromptManifest& m = study.manifest;
  VLBIAS_CHECK(study.prompts.rows == m.rows, InternalError,
               "prompt_geometry: {} prompt embeddings for {} manifest rows", study.prompts.rows,
               m.rows);
  AnalysisOutput out;
  TableBuilder sims("prompt_similarities");
  Json dims = Json::array();
  std::map<std::string,
           std::pair<const PromptManifest::Dimension*, const PromptManifest::Dimension*>>
      by_name;  // dimension -> (+, -)
  for (const auto& d : m.dimensions) {
    if (d.valence == "+") by_name[d.dimension].first = &d;
    if (d.valence == "-") by_name[d.dimension].second = &d;
  }
  for (const auto& [name, pm] : by_name) {
    if (pm.first == nullptr || pm.second == nullptr) continue;
    PairMeans pos, neg, cross;
    add_pairs(study, pm.first->rows, pm.first->rows, true, pos);
    add_pairs(study, pm.second->rows, pm.second->rows, true, neg);
    add_pairs(study, pm.first->rows, pm.second->rows, false, cross);
    const std::vector<double> vp = means_of(pos), vn = means_of(neg), vc = means_of(cross);
    for (const auto& [kind, pairs] : {std::pair<const char*, const PairMeans*>{"within+", &pos},
                                      {"within-", &neg},
                                      {"cross", &cross}}) {
      for (const auto& [k, e] : *pairs) {
        sims.row();
        sims.put("dimension", name);
        sims.put("kind", kind);
        sims.put("word_a", k.first);
        sims.put("word_b", k.second);
        sims.put("cos", e.first / static_cast<double>(e.second));
      }
    }
    const auto summary = [](const std::vector<double>& v) {
      return Json{{"pairs", v.size()},
                  {"mean", json_number(v.empty() ? stats::kNaN : stats::mean(v))}};
    };
    dims.push_back(Json{{"dimension", name},
                        {"within_positive", summary(vp)},
                        {"within_negative", summary(vn)},
                        {"cross", summary(vc)},
                        {"positive_vs_cross", one_sided_welch(vp, vc)},
                        {"negative_vs_cross", one_sided_welch(vn, vc)}});
  }
  out.tables.emplace_back("prompt_similarities", sims.build());

  // PCA of the attribute prompts (Fig. S.6A).
  std::vector<std::size_t> rows;
  std::map<std::size_t, std::string> label_of_row;
  for (const auto& d : m.dimensions) {
    rows.insert(rows.end(), d.rows.begin(), d.rows.end());
    for (const std::size_t r : d.rows) label_of_row[r] = d.label;
  }
  std::sort(rows.begin(), rows.end());
  Json pca_json = nullptr;
  const std::size_t k = std::min({components, rows.size(), study.prompts.cols});
  if (rows.size() >= 2 && k >= 1) {
    std::vector<double> x;
    x.reserve(rows.size() * study.prompts.cols);
    for (const std::size_t r : rows) {
      for (std::size_t c = 0; c < study.prompts.cols; ++c) x.push_back(study.prompts.at(r, c));
    }
    const stats::PcaResult p = stats::pca(x, rows.size(), study.prompts.cols, k);
    TableBuilder t("prompt_pca");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      t.row();
      t.put("text", m.texts[rows[i]]);
      t.put("dimension", label_of_row[rows[i]]);
      t.put("word", m.words[rows[i]]);
      t.put("template", m.templates[m.template_of_row[rows[i]]]);
      for (std::size_t c = 0; c < k; ++c) t.put(fmt::format("pc{}", c + 1), p.scores[i * k + c]);
    }
    out.tables.emplace_back("prompt_pca", t.build());
    pca_json = Json{{"prompts", rows.size()},
                    {"components", k},
                    {"explained_variance_ratio", p.explained_variance_ratio}};
  }
  out.json = Json{{"definition",
                   "per dimension with both valences: cosines between its words' prompt "
                   "embeddings (per word pair, the mean over templates of the cosine within one "
                   "template) within the positive valence, within the negative and across; "
                   "one-sided Welch t that within-valence pairs are closer than cross-valence "
                   "ones (paper 001 Table S.5); and a PCA of the attribute prompts (Fig. S.6A)"},
                  {"dimensions", dims},
                  {"pca", pca_json}};
  return out;
}

}  // namespace vlbias
